"""opdb's default mode of `opdb aie`: the re-indented reference
(postprocess_aie_trace.py) with the differences of docs/COMPATIBILITY.md
"opdb aie" and the path policy ("File names from input"):

* the older event spellings `Event0` / `Event1` / `LockStall` are read too;
* pairing re-synchronises in time order (an end before a start at equal times),
  for the preliminary median and for the pairs: a start still pending when the
  next start comes, or an end with no start pending, is counted and skipped;
  per core `unmatched_starts` / `unmatched_ends` (of the final pairing) after
  `lock_stall_boundary_count` (after `tile_name` in the no-pairs form);
* `median_kernel_duration_cycles` is always a float;
* file names: every character outside [A-Za-z0-9._-] becomes `_` (one per code
  point), a leading `.` becomes `_`, an empty name is `UNKNOWN_TYPE`, a name
  over 200 bytes is cut (191 bytes + `~` + FNV-1a-32); names are unique in the
  run (`-2`, `-3`, ...), never `index.json` or `aggregate_perf.json`;
* the aggregate is computed over the cores whose performance window holds an
  iteration (from each core's own result: a shared tile name no longer makes one
  core count twice); the others are named in `cores_left_out`; a full aggregate
  gets `efficiency_vs_peak` (peak = peak MACs/cycle x rows x cols x clock;
  best and average GMAC/s over it, null for a zero peak);
* NaN / Infinity are written as null (strict JSON);
* `--strict`: exit 1 after a run with a core whose iteration count is not the
  expected one, or an aggregate without system figures.
Never imports or runs opdb."""
import json
import math
import os
import sys
from statistics import median

import postprocess_aie_trace as ref

ref.START_NAMES = ("INSTR_EVENT_0", "Event0")
ref.END_NAMES = ("INSTR_EVENT_1", "Event1")
ref.STALL_NAMES = ("LOCK_STALL", "LockStall")

_unmatched = {}  # "last": (unmatched starts, unmatched ends) of the last core paired, for process_core


def resync_pairs(starts, ends):
    events = sorted([(t, 0) for t in ends] + [(t, 1) for t in starts])  # an end first at equal times
    pairs, pending, us, ue = [], None, 0, 0
    for t, is_start in events:
        if is_start:
            if pending is not None:
                us += 1
            pending = t
        elif pending is None:
            ue += 1
        else:
            pairs.append(ref.KernelPair(pending, t, t - pending))
            pending = None
    if pending is not None:
        us += 1
    return pairs, us, ue


def robust_pair_kernels(starts, ends):
    prelim, _, _ = resync_pairs(sorted(starts), sorted(ends))
    med_dur = max(1, int(median([p.duration for p in prelim]))) if prelim else 1
    min_gap = max(1, int(ref.DUP_GAP_FRACTION * med_dur))
    pairs, us, ue = resync_pairs(ref._dedup_by_gap(sorted(starts), min_gap), ref._dedup_by_gap(sorted(ends), min_gap))
    out = ref.outlier_filter(pairs)
    _unmatched["last"] = (us, ue)
    return out


ref.robust_pair_kernels = robust_pair_kernels
_process_core = ref.process_core


def process_core(**kw):
    core = _process_core(**kw)
    if not core:
        return core
    us, ue = _unmatched.pop("last", (0, 0))
    out = {}
    for key, v in core.items():
        if key == "median_kernel_duration_cycles":
            v = float(v)
        out[key] = v
        if key == ("lock_stall_boundary_count" if "lock_stall_boundary_count" in core else "tile_name"):
            out["unmatched_starts"] = us
            out["unmatched_ends"] = ue
    return out


ref.process_core = process_core


def fnv1a32(b: bytes) -> int:
    h = 0x811C9DC5
    for c in b:
        h = ((h ^ c) * 0x01000193) & 0xFFFFFFFF
    return h


def safe_stem(tile: str) -> str:
    base = "".join(c if (c.isascii() and (c.isalnum() or c in "._-")) else "_" for c in tile)
    if not base:
        return "UNKNOWN_TYPE"
    if base[0] == ".":
        base = "_" + base[1:]
    raw = base.encode()
    if len(raw) > 200:
        base = raw[:191].decode("ascii") + "~" + f"{fnv1a32(raw):08x}"
    return base


def core_file_names(cores):
    names = []
    for core in cores:
        base = safe_stem(core["tile_name"])
        name, k = f"{base}.json", 2
        while name in ("index.json", "aggregate_perf.json") or name in names:
            name, k = f"{base}-{k}.json", k + 1
        names.append(name)
    return names


ref.core_file_names = core_file_names


def strict_json(v):
    if isinstance(v, float) and not math.isfinite(v):
        return None
    if isinstance(v, dict):
        return {k: strict_json(x) for k, x in v.items()}
    if isinstance(v, list):
        return [strict_json(x) for x in v]
    return v


# every JSON file of this (default-mode) process goes through json.dump: strict JSON
_dump = json.dump
ref.json.dump = lambda obj, f, **kw: _dump(strict_json(obj), f, **kw)

_nothing = []  # opdb's "the run produced nothing meaningful" warnings (--strict)
_args = {}


def perf_set(c) -> set:
    return {i for i in c.get("performance_window", []) if 0 <= i < len(c.get("iterations", []))}


def compute_and_write_aggregate(out_dir, core_json_paths, M, K, N):
    cores = _args["cores"]  # each core's own result, not the files read back
    data = [c for c in cores if perf_set(c)]
    left_out = [c["tile_name"] for c in cores if not perf_set(c)]
    if not cores:
        summary = {"note": "No cores to aggregate."}
        _nothing.append("no core with kernel events to aggregate")
    else:
        summary = ref.aggregate(data, M, K, N) if data else {"note": "No common perf iterations across all cores."}
        if "per_iteration" in summary:
            a = _args["args"]
            peak = a.peak_macs_per_cycle * a.row * a.col * a.clock_ghz
            best = summary["best"]["gmacs_per_second"]
            avg = summary["average"]["gmacs_per_second"]
            summary["efficiency_vs_peak"] = {"peak_gmacs_per_second": peak,
                                             "best": best / peak if peak else None,
                                             "average": avg / peak if peak else None}
        else:
            summary = {"note": "No common perf iterations across all cores."}
            _nothing.append("no perf iteration common to all cores: no system figures")
        if left_out:
            summary["cores_left_out"] = left_out
    agg_path = os.path.join(out_dir, "aggregate_perf.json")
    with open(agg_path, "w") as f:
        json.dump(summary, f, indent=2)
    print(f"[write] {agg_path}")
    return agg_path


ref.compute_and_write_aggregate = compute_and_write_aggregate
_collect = ref.collect_cores


def collect_cores(traces, warmup, perf_iters, args):
    cores = _collect(traces, warmup, perf_iters, args)
    _args["cores"], _args["args"] = cores, args
    for c in cores:
        if c["detected_total_iterations"] != c["expected_total_iterations"]:
            _nothing.append(f"core {c['tile_name']}: {c['mismatch_note']}")
    return cores


ref.collect_cores = collect_cores


def why_no_figures(cores, aggregate, a) -> str:
    """The reason opdb gives for an aggregate without system figures."""
    if not cores:
        raise NotImplementedError("no-core traces: the reason counts the trace's processes")
    why = "the cores' perf windows do not overlap"
    if not [c for c in cores if perf_set(c)]:
        c = cores[0]
        det, warm = c["detected_total_iterations"], max(0, int(a.warmup))
        if not c.get("iterations"):
            why = f"core {c['tile_name']} has no valid kernel start/end pairs"
        elif det <= warm:
            why = f"core {c['tile_name']}: all {det} iteration(s) found fall in the --warmup {warm}"
        else:
            why = f"core {c['tile_name']}: --iterations {max(0, int(a.iterations))} leaves no perf iteration"
    return f"no perf iteration common to all cores: no system figures ({why})"


def main_json(argv) -> int:
    """`opdb aie --json`: the run as usual with its [write] lines on stderr,
    then on stdout one JSON object of the files written, each core's figures
    (its fastest iteration of any phase against the tile's peak) and the
    system figures of aggregate_perf.json, or why there are none."""
    import contextlib
    import io
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        rc = main(argv)
    written = [line[len("[write] "):] for line in buf.getvalue().splitlines() if line.startswith("[write] ")]
    sys.stderr.write(buf.getvalue())
    if rc != 0:
        return rc
    cores, a = _args["cores"], _args["args"]
    index_path, aggregate_path = written[-2], written[-1]
    with open(index_path) as f:
        index = json.load(f)
    with open(aggregate_path) as f:
        aggregate = json.load(f)
    tile_peak = a.peak_macs_per_cycle * a.clock_ghz
    out = {"command": "aie", "input": index["input_path"], "output_dir": index["output_dir"], "index": index_path,
           "details": index["details_md"], "aggregate": aggregate_path, "tile_peak_gmacs_per_second": tile_peak,
           "cores": []}
    for c, path in zip(cores, written):
        gm = [it["gmacs_per_second"] for it in c.get("iterations", [])]
        best = max(gm) if gm else None
        out["cores"].append({
            "tile": c["tile_name"], "file": path, "iterations_detected": c["detected_total_iterations"],
            "iterations_expected": c["expected_total_iterations"],
            "performance_window": c.get("performance_window", []), "best_gmacs_per_second": best,
            "above_tile_peak": tile_peak > 0 and best is not None and best > tile_peak,
            "note": c["mismatch_note"]})
    if "per_iteration" in aggregate:
        peak = aggregate["efficiency_vs_peak"]["peak_gmacs_per_second"]
        best = aggregate["best"]["gmacs_per_second"]
        out["system"] = {"iterations": aggregate["count"],
                         "average_gmacs_per_second": aggregate["average"]["gmacs_per_second"],
                         "best_gmacs_per_second": best, "worst_gmacs_per_second": aggregate["worst"]["gmacs_per_second"],
                         "peak_gmacs_per_second": peak, "above_peak": peak > 0 and best > peak}
        out["no_system_figures"] = None
    else:
        out["system"] = None
        out["no_system_figures"] = why_no_figures(cores, aggregate, a)
    sys.stdout.write(json.dumps(strict_json(out), indent=2) + "\n")
    return 0


def main(argv) -> int:
    if "--json" in argv:
        return main_json([x for x in argv if x != "--json"])
    rc = ref.main(argv)
    if rc == 0 and "--strict" in argv and _nothing:
        sys.stdout.flush()
        for line in _nothing:
            print(f"opdb: warning: {line}", file=sys.stderr)
        return 1
    return rc
