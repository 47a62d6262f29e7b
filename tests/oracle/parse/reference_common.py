"""The reference's helper modules that the seeds import but do not contain
(`op_replay/common.py`, `fia_common.py`), written from docs/FORMAT.md
"Resolving the target directory", "Devices", docs/INGEST.md §1.1 / §3.

Differences from the real modules, both documented in docs/COMPATIBILITY.md:
the data root is $OPDB_DATA_ROOT (the reference uses its repository folder),
and version components are never auto-detected (a missing one is an error)."""
import argparse
import os
import re
from pathlib import Path

SUPPORTED_DEVICES = [
    "TEST_DEVICE",
    "ATLAS_800_A2_376T_64G",
    "ATLAS_800_A2_313T_64G",
    "ATLAS_800_A2_280T_64G",
    "ATLAS_800_A2_280T_64G_PCIE",
    "ATLAS_800_A2_280T_32G_PCIE",
    "ATLAS_800_A3_752T_128G_DIE",
    "ATLAS_800_A3_560T_128G_DIE",
]
DEFAULT_DEVICE = "ATLAS_800_A3_752T_128G_DIE"
_VERSION_RE = re.compile(r"[0-9A-Za-z]+([._+-][0-9A-Za-z]+)*")
_FULL_VDIR_RE = re.compile(r"^vllm.+_torch.+_cann.+$")


def check_version(value: str) -> str:
    value = value.strip()
    if not _VERSION_RE.fullmatch(value):
        raise argparse.ArgumentTypeError(
            "invalid version value, expected something like 0.9.2, 2.9.0, 8.5, "
            "or vllm0.13.0_torch2.8.0_cann8.3"
        )
    return value


def normalize_device_name(device: str) -> str:
    return device.strip()


def _strip_prefix_ci(value: str, prefix: str) -> str:
    return value[len(prefix):] if value.lower().startswith(prefix) else value


def _norm_vllm(v: str) -> str:
    v = v.strip()
    if v.lower().startswith("vllm"):
        v = v[4:]
    elif v[:1] in ("v", "V"):
        v = v[1:]
    return v.strip()


def _norm_torch(v: str) -> str:
    v = _strip_prefix_ci(v.strip(), "torch")
    return v.split("+", 1)[0].strip()


def _norm_cann(v: str) -> str:
    return _strip_prefix_ci(v.strip(), "cann").strip()


def version_dir_name(vllm, torch, cann) -> str:
    if vllm and torch is None and cann is None and _FULL_VDIR_RE.fullmatch(vllm.strip()):
        return vllm.strip()
    missing = [name for name, v in (("vLLM-Ascend", vllm), ("PyTorch", torch), ("CANN", cann)) if not v]
    if missing:
        raise RuntimeError(
            "Could not determine version(s): " + ", ".join(missing)
            + ". Pass --database-path or the explicit version flags."
        )
    return f"vllm{_norm_vllm(vllm)}_torch{_norm_torch(torch)}_cann{_norm_cann(cann)}"


def get_target_data_dir(*, device, vllm_ascend_version=None, database_path=None,
                        torch_version=None, cann_version=None) -> Path:
    if database_path is not None:
        return Path(database_path)
    root = Path(os.environ.get("OPDB_DATA_ROOT", "data"))
    return (root / normalize_device_name(device) / "vllm_ascend"
            / version_dir_name(vllm_ascend_version, torch_version, cann_version))


# ---- fia_common -----------------------------------------------------------
def split_metadata_field(text: str):
    cleaned = (text or "").strip().strip('"')
    if not cleaned:
        return []
    return [part.strip() for part in cleaned.split(";")]


def parse_shape_or_none(slot: str):
    slot = (slot or "").strip().strip('"')
    if not slot:
        return None
    return tuple(int(tok) for tok in slot.split(","))


def shape_to_text(shape) -> str:
    if shape is None:
        return ""
    return ",".join(str(d) for d in shape)
