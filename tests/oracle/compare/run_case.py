"""Oracle driver for the `opdb compare` golden cases (tests/cli/compare_*).

  run_case.py quirks  --tc T --prof P [--m6 M] [--name N] [--data-dir D] --output O
      the reference (generate_op_comparison.py) on one scenario, its console table
  run_case.py default --tc T --prof P [...] [--output O] [--top N]
      the same rows, printed as opdb's default console table
  run_case.py default --rows-from JSON [--output O] [--top N]
      opdb's default console table of rows an earlier oracle run wrote

The default table (docs/ANALYSIS.md): a blank line, "<name>:
predicted vs measured, per forward pass", a header, a rule of '-', every row
(or the first --top N), a rule, a TOTAL row and, when rows were left out,
"<k> more kernel type(s) not shown (--top 0 shows all)". Columns are as wide
as their widest cell in terminal cells (East Asian wide = 2), separated by
two spaces, no trailing blanks.
"""
import argparse
import json
import os
import sys
import tempfile
import unicodedata

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import generate_op_comparison as ref  # noqa: E402

HEAD = ["kernel type", "predicted us", "calls", "measured us", "calls",
        "time error", "count error", "share", "status"]
LEFT = [True, False, False, False, False, False, False, False, True]


def cells(s):
    n = 0
    for ch in s:
        if unicodedata.combining(ch):
            continue
        n += 2 if unicodedata.east_asian_width(ch) in "WF" else 1
    return n


def signed(v):
    return f"{v:+.1f}%"


def status_en(s):
    return s if s in ("HIT", "MISS", "PARTIAL") else "not modelled"


def default_table(name, rows, top):
    total_tc = sum(r["tc_total_us"] for r in rows)
    total_prof = sum(r["prof_per_fwd_us"] for r in rows)
    shown = rows[:top] if top else rows
    table = [HEAD]
    for r in shown:
        # the reference's integer 0 marks "nothing measured"
        err = "not measured" if isinstance(r["error_pct"], int) else signed(r["error_pct"])
        cerr = "-" if isinstance(r["count_error_pct"], int) else signed(r["count_error_pct"])
        share = r["prof_per_fwd_us"] / total_prof * 100 if total_prof > 0 else 0.0
        table.append([r["kernel_type"], f"{r['tc_total_us']:.1f}", str(r["tc_count"]),
                      f"{r['prof_per_fwd_us']:.1f}", str(r["prof_count"]), err, cerr,
                      f"{share:.1f}%", status_en(r["status"])])
    terr = signed((total_tc - total_prof) / total_prof * 100) if total_prof > 0 else "not measured"
    total = ["TOTAL", f"{total_tc:.1f}", "", f"{total_prof:.1f}", "", terr, "", "", ""]
    widths = [max(cells(row[k]) for row in table + [total]) for k in range(len(HEAD))]
    width = sum(widths) + 2 * (len(HEAD) - 1)

    def line(row):
        parts = []
        for k, text in enumerate(row):
            fill = " " * (widths[k] - cells(text))
            parts.append(text + fill if LEFT[k] else fill + text)
        return "  ".join(parts).rstrip(" ")

    out = [f"\n{name}: predicted vs measured, per forward pass", line(HEAD), "-" * width]
    out += [line(row) for row in table[1:]]
    out += ["-" * width, line(total)]
    if len(shown) < len(rows):
        k = len(rows) - len(shown)
        out.append(f"{k} more kernel type{'' if k == 1 else 's'} not shown (--top 0 shows all)")
    print("\n".join(out))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("mode", choices=["quirks", "default"])
    p.add_argument("--tc")
    p.add_argument("--prof")
    p.add_argument("--m6")
    p.add_argument("--name")
    p.add_argument("--data-dir")
    p.add_argument("--output")
    p.add_argument("--top", type=int, default=0)
    p.add_argument("--rows-from")
    a = p.parse_args()
    if a.rows_from:
        with open(a.rows_from) as f:
            results = json.load(f)
    else:
        name = a.name or os.path.basename(a.tc)
        with tempfile.TemporaryDirectory() as tmp:
            m6 = a.m6
            if not m6:  # no --m6: n_forward_passes = 1, as with an M6 JSON without the key
                m6 = os.path.join(tmp, "m6.json")
                with open(m6, "w") as f:
                    f.write("{}")
            mapping = ref.load_op_mapping(a.data_dir) if a.data_dir else {}
            rows = ref.build_comparison({"name": name, "m6": m6, "trace_csv": a.prof, "tc_trace": a.tc}, mapping)
        results = {name: rows}
    for name, rows in results.items():
        if a.mode == "quirks":
            ref.print_scenario(name, rows)
        else:
            default_table(name, rows, a.top)
    if a.output and not a.rows_from:
        os.makedirs(os.path.dirname(a.output) or ".", exist_ok=True)
        with open(a.output, "w") as f:
            json.dump(results, f, indent=2, ensure_ascii=False)
    if a.output:
        print(f"\nSaved to {a.output}")


if __name__ == "__main__":
    main()
