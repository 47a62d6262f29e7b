#!/usr/bin/env python3
"""Oracle for `opdb comm import` (written from the issue's rules, independent of
opdb's C code): nccl-tests logs of any column layout and OSU collective logs ->
hcom_*.csv rows formatted as the reference writes them (docs/COMM.md §3.5-3.6).

  import_logs.py --output-dir D [--op OP] [--num-devices N] [--dtype DT]
                 [--topology-tier T] [--reference-overhead] LOG...
Used only to produce tests/cli/comm_import_*/expected; never run by ctest."""
import argparse
import os
import re
import sys

KERNEL = {"all_reduce": "hcom_allReduce_", "all_gather": "hcom_allGather_", "reduce_scatter": "hcom_reduceScatter_",
          "all_to_all": "hcom_alltoallv_", "broadcast": "hcom_broadcast_"}
DTYPES = {"bfloat16": ("torch.bfloat16", "DT_BF16"), "half": ("torch.float16", "DT_FP16"),
          "float16": ("torch.float16", "DT_FP16"), "float": ("torch.float32", "DT_FLOAT"),
          "float32": ("torch.float32", "DT_FLOAT"), "int8": ("torch.int8", "DT_INT8")}
OVERHEAD = {("all_reduce", 16): 7.7, ("all_gather", 16): 14.6, ("all_gather", 8): 1.2,
            ("reduce_scatter", 16): 14.6, ("reduce_scatter", 8): 2.0}
LOOSE = [("allreduce", "all_reduce"), ("allgather", "all_gather"), ("reducescatter", "reduce_scatter"),
         ("alltoall", "all_to_all"), ("broadcast", "broadcast"), ("bcast", "broadcast")]
TAG = re.compile(r"\[[0-9,]+\]<std(?:out|err)>:")
NUM = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")


def loose_op(text):
    t = text.replace("_", "").replace("-", "").lower()
    for w, op in LOOSE:
        if w in t:
            return op
    return None


def isnum(s):
    return bool(NUM.match(s))


def parse(text):
    log = dict(fmt="nccl-tests", op=None, ranks=set(), hosts=set(), rows=[], type=None, failure=None,
               osu=False, title=None, osu_hdr=False, bw=False)
    for raw in text.split("\n"):
        line = TAG.sub("", raw)
        m = re.match(r"^ *\d+: ", line)
        if m:
            line = line[m.end():]
        line = line.rstrip("\r")
        t = line.split()
        if len(t) >= 2 and t[0] == "#":
            if len(t) >= 4 and t[1] == "OSU":
                log["osu"] = True
                log["fmt"] = "osu"
                log["title"] = line[line.index("OSU"):].rstrip()
                log["op"] = loose_op(log["title"])
            elif log["osu"] and t[1] == "Size":
                log["osu_hdr"] = True
                log["bw"] = "MB/s" in line
            elif len(t) >= 4 and t[1] == "Rank" and t[2].isdigit():
                log["ranks"].add(int(t[2]))
                if "on" in t[3:]:
                    i = t.index("on", 3)
                    if i + 1 < len(t):
                        log["hosts"].add(t[i + 1])
            continue
        if log["osu"]:
            if log["osu_hdr"] and len(t) >= 2 and t[0].isdigit() and isnum(t[1]):
                log["rows"].append((int(t[0]), float(t[1]), -1.0, -1, -1))
            continue
        row = nccl_row(t)
        if row:
            log["rows"].append(row[0])
            log["type"] = row[1]
        elif log["failure"] is None and ("Test NCCL failure" in line or "Test failure" in line):
            log["failure"] = line
    return log


def wrong(s):
    if s.isdigit():
        return int(s)
    if s == "N/A" or isnum(s):
        return -1
    return None


def nccl_row(t):
    if len(t) < 7 or not t[0].isdigit() or not t[1].isdigit() or not t[2][0].isalpha():
        return None
    k = 3
    if not isnum(t[k]):
        k += 1
    rest = len(t) - k
    if rest in (9, 5):
        k += 1
        rest -= 1
    if rest not in (8, 4):
        return None
    halves = []
    for h in range(rest // 4):
        a = t[k + 4 * h:k + 4 * h + 4]
        if not all(isnum(x) for x in a[:3]) or wrong(a[3]) is None:
            return None
        halves.append((float(a[0]), wrong(a[3])))
    ip = halves[1] if len(halves) == 2 else (-1.0, -1)
    return (int(t[0]), halves[0][0], ip[0], halves[0][1], ip[1]), t[2]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--database-path", "--output-dir", dest="output_dir", required=True)
    ap.add_argument("--ops", "--op", dest="op")
    ap.add_argument("--num-devices", type=int)
    ap.add_argument("--dtype")
    ap.add_argument("--topology-tier", type=int)
    ap.add_argument("--reference-overhead", action="store_true")
    ap.add_argument("logs", nargs="+")
    a = ap.parse_args()
    status, total = 0, 0
    for path in a.logs:
        with open(path, encoding="utf-8", errors="replace", newline="") as f:
            log = parse(f.read())
        op = a.op or log["op"] or loose_op(os.path.basename(path))
        nd = a.num_devices or (max(log["ranks"]) + 1 if log["ranks"] else 0)
        dt = DTYPES[a.dtype.replace("torch.", "")] if a.dtype else (
            DTYPES.get(log["type"]) if not log["osu"] else DTYPES["bfloat16"])
        tier = a.topology_tier if a.topology_tier is not None else (0 if len(log["hosts"]) > 1 else 1)
        err = None
        if not log["osu"] and not log["rows"] and not log["failure"]:
            err = "neither an nccl-tests table nor an OSU '# Size' table found"
        elif log["osu"] and not log["osu_hdr"]:
            err = "OSU log without a '# Size' header line"
        elif log["failure"] and not log["rows"]:
            err = "the run failed before any result (%s)" % log["failure"]
        elif log["osu"] and log["op"] is None and not a.op:
            err = "'%s' is a point-to-point test, not a collective; pass --op to import it as one" % log["title"]
        elif op is None:
            err = "cannot tell the collective from the log or its file name; pass --op"
        elif nd < 1:
            err = "the log does not give the device count (no '#  Rank' lines); pass --num-devices"
        elif dt is None:
            err = "nccl-tests type '%s' has no hcom dtype; pass --dtype" % log["type"]
        elif not log["rows"]:
            err = "the %s table has no rows" % log["fmt"]
        if err:
            print("opdb comm import: %s: %s" % (path, err), file=sys.stderr)
            status = 1
            continue
        out, skipped = [], 0
        nwrong = sum(1 for r in log["rows"] if r[3] > 0 or r[4] > 0)
        ip = op == "all_reduce"
        for size, oop_us, ip_us, _, _ in log["rows"]:
            b = size
            us = ip_us if ip and ip_us >= 0 else oop_us
            if log["osu"] and log["bw"]:
                us = size / oop_us if oop_us > 0 else -1
            if not log["osu"] and op in ("all_gather", "reduce_scatter"):
                b //= nd
            if log["osu"] and op == "all_to_all":
                b *= nd
            if b <= 0 or not us > 0:
                skipped += 1
                continue
            ov = OVERHEAD.get((op, nd), 0.0) if a.reference_overhead else 0.0
            dur = round(round(us, 2) + ov, 2)
            bw = round(b / (dur * 1e-6) / 1e9, 2) if dur > 0 else 0.0
            out.append("%d,%d,%s,%d,%r,%r\r\n" % (b, nd, dt[1], tier, dur, bw))
        csv_path = os.path.join(a.output_dir, KERNEL[op] + ".csv")
        if not out:
            print("opdb comm import: %s: no row with a positive size and time" % path, file=sys.stderr)
            status = 1
            continue
        os.makedirs(a.output_dir, exist_ok=True)
        new = not os.path.exists(csv_path)
        with open(csv_path, "a", newline="", encoding="utf-8") as f:
            if new:
                f.write("message_bytes,num_devices,dtype,topology_tier,Duration(us),bandwidth_gbps\r\n")
            f.writelines(out)
        total += len(out)
        print("%s: %s %s, %d devices, %s, tier %d: %d rows -> %s" % (path, log["fmt"], op, nd, dt[0], tier, len(out),
                                                                   csv_path))
        if skipped:
            print("  %d rows without a positive size and time skipped" % skipped)
        if nwrong:
            print("opdb comm import: warning: %s: %d rows report #wrong != 0 (imported; check the run)" % (path, nwrong),
                  file=sys.stderr)
    if total == 0 and status == 0:
        print("opdb comm import: no row was imported", file=sys.stderr)
    return status


if __name__ == "__main__":
    sys.exit(main())
