"""M6 oracle (docs/ANALYSIS.md §4): the reference `compute_m6.py` as docs/ANALYSIS.md
describes it (run with --reference-quirks), and opdb's default mode with the
differences listed in docs/COMPATIBILITY.md (`opdb m6`), selected by `quirks`.
Never imports or runs opdb.
Run: python3 compute_m6.py --tc-trace T --prof-trace P [--source-filter S] [--json-output J]"""
import argparse
import json
import os
import sys

from analysis_inputs import (Fail, check_inputs, load_events, csv_rows, cell, require_columns,
                             default_number, strict_json)

DEFAULT_FILTER = "MEASURED,INTERPOLATED"


def source_filter(arg) -> set:
    # each item stripped, empty items kept; an empty argument means the default
    return {s.strip() for s in (arg or DEFAULT_FILTER).split(",")}


def tc_sum(events, filt: set) -> float:
    total = 0.0  # a floating zero: the sum is always a float (docs/ANALYSIS.md §4.4)
    for ev in events:
        if ev.get("ph") != "X":
            continue
        dur = ev.get("dur", 0)
        if not dur > 0:  # checked for every complete event: a non-number dur is an error
            continue
        args = ev.get("args", {})
        src = args.get("source")
        if not (isinstance(src, str) and src in filt):  # a non-string source never matches
            continue
        if not args.get("kernel_type"):
            continue
        total += dur
    return total


def prof_sums(path: str, quirks: bool):
    reader = csv_rows(path)
    if not quirks:
        require_columns(reader, path, ["Type", "Start Time(us)", "Duration(us)"])
    compute = hcom = 0.0
    seen = {}
    for row in reader:
        typ = cell(row, "Type")
        if not typ:
            continue
        if quirks:
            try:
                start = float(cell(row, "Start Time(us)") or "0")
                d = float(cell(row, "Duration(us)") or "0")
            except ValueError:
                continue  # invalid -> row skipped silently
        else:
            if typ.endswith("AicpuKernel"):
                continue
            start = default_number(cell(row, "Start Time(us)"))
            d = default_number(cell(row, "Duration(us)"))
            if start is None or d is None:
                continue  # empty / non-numeric / non-finite: skipped with a warning
        end = start + d
        dur = end - start  # quantised to the spacing of the timestamp, as the reference
        if typ.endswith("AicpuKernel"):
            continue
        if typ.startswith("hcom_"):
            key = (int(start) if quirks else start, typ)  # int(inf) raises, as the reference
            if key not in seen:
                seen[key] = dur
                hcom += dur
            elif dur > seen[key]:
                hcom += dur - seen[key]
                seen[key] = dur
        else:
            compute += dur
    return compute, hcom


def report(a, filt, tc, real, compute, hcom) -> str:
    rule = "=" * 60
    lines = [rule, "M6: Empirical E2E Prediction Ratio", rule, "",
             f"TC trace:        {a.tc_trace}", f"Prof trace:      {a.prof_trace}",
             f"Source filter:   {sorted(filt)}", ""]
    tc_r, real_r = round(tc, 2), round(real, 2)
    lines.append(f"Empirical HIT total: {tc_r:>12,.1f} us ({tc_r / 1000:,.1f} ms)")
    lines.append(f"Real per-fwd:        {real_r:>12,.1f} us ({real_r / 1000:,.1f} ms)")
    lines.append(f"  Compute:           {round(compute, 2):>12,.1f} us")
    lines.append(f"  hcom:              {round(hcom, 2):>12,.1f} us")
    lines.append("")
    return "\n".join(lines) + "\n"


def run(argv, quirks: bool) -> int:
    p = argparse.ArgumentParser(prog="opdb m6", allow_abbrev=False)
    p.add_argument("--tc-trace", required=True)
    p.add_argument("--prof-trace", required=True)
    p.add_argument("--source-filter")
    p.add_argument("--json-output")
    p.add_argument("--strict", action="store_true")
    a = p.parse_args(argv)
    filt = source_filter(a.source_filter)
    try:
        check_inputs(a.tc_trace, a.prof_trace)
        tc = tc_sum(load_events(a.tc_trace), filt)
        compute, hcom = prof_sums(a.prof_trace, quirks)
    except Fail as e:
        print(f"opdb m6: {e}", file=sys.stderr)
        return 1
    real = compute + hcom
    ratio = tc / real if real > 0 else 0.0
    out = report(a, filt, tc, real, compute, hcom) + f"M6 = {ratio:.3f}  (Empirical / Real)\n"
    if a.json_output:
        doc = {"m6_ratio": ratio, "empirical_hit_us": round(tc, 2), "real_per_fwd_us": round(real, 2),
               "selected_fwd_compute_us": round(compute, 2), "selected_fwd_hcom_us": round(hcom, 2),
               "tc_trace": a.tc_trace, "prof_trace": a.prof_trace, "source_filter": sorted(filt)}
        text = json.dumps(doc if quirks else strict_json(doc), indent=2, ensure_ascii=False)
        if a.json_output == "-":  # opdb: the JSON on stdout, the report on stderr
            sys.stdout.buffer.write(text.encode())
            sys.stderr.write(out)
            out = ""
        else:
            parent = os.path.dirname(a.json_output)
            if parent:
                os.makedirs(parent, exist_ok=True)
            with open(a.json_output, "w", encoding="utf-8") as f:
                f.write(text)
            out += f"\nJSON output written to: {a.json_output}\n"
    sys.stdout.buffer.write(out.encode())
    sys.stdout.flush()
    if not quirks and a.strict and (real <= 0 or tc <= 0):
        return 1  # opdb's --strict: the run produced nothing meaningful
    return 0


def main(argv=None) -> int:
    return run(sys.argv[1:] if argv is None else argv, quirks=True)


if __name__ == "__main__":
    sys.exit(main())
