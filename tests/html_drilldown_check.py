"""html_drilldown_check.py DOM_HTML SHAPES_CSV CMP_JSON

Structural check of the per-shape drill-down of `opdb compare --html
--shapes` in the DOM Chromium dumped: one <details class="kt-shapes"> per
kernel type of the per-shape CSV, in the order of the bar chart (kernel types
of the comparison by measured time, largest first, then those only in the
CSV, in its order); in each, the CSV's rows of that kernel type in the CSV's
order, showing its cells as written (time error: the delta with '%', or "not
measured" where nothing was measured), and a summary with the shape count and
the sums of the predicted and measured times. Expected values come from the
CSV and the comparison JSON, never from opdb's page. Prints what differs;
exit 1 when anything does.
"""
import csv
import json
import sys
from html.parser import HTMLParser


class Drill(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.blocks = []   # {kt, shapes, summary, rows: [[cells]]}
        self.cur = None
        self.row = None
        self.cell = None
        self.in_summary = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "details" and "kt-shapes" in (a.get("class") or "").split():
            self.cur = {"kt": a.get("data-kt"), "shapes": a.get("data-shapes"), "summary": "", "rows": []}
            self.blocks.append(self.cur)
        elif self.cur is None:
            return
        elif tag == "summary":
            self.in_summary = True
        elif tag == "tr" and a.get("class") == "shape":
            self.row = []
            self.cur["rows"].append(self.row)
        elif tag == "td" and self.row is not None:
            self.cell = ""

    def handle_endtag(self, tag):
        if tag == "details":
            self.cur = None
        elif tag == "summary":
            self.in_summary = False
        elif tag == "td" and self.cell is not None:
            self.row.append(self.cell)
            self.cell = None
        elif tag == "tr":
            self.row = None

    def handle_data(self, data):
        if self.cell is not None:
            self.cell += data
        elif self.in_summary and self.cur is not None:
            self.cur["summary"] += data


def expected_blocks(shapes, cmp_rows):
    by_kt = {}
    for r in shapes:
        by_kt.setdefault(r["kernel_type"], []).append(r)
    # the bar chart's order: measured, then predicted, descending; then table order
    ordered = sorted(enumerate(cmp_rows), key=lambda ir: (-ir[1]["prof_per_fwd_us"], -ir[1]["tc_total_us"], ir[0]))
    kts = [r["kernel_type"] for _, r in ordered if r["kernel_type"] in by_kt]
    compared = set(r["kernel_type"] for r in cmp_rows)
    for r in shapes:
        if r["kernel_type"] not in compared and r["kernel_type"] not in kts:
            kts.append(r["kernel_type"])
    out = []
    for kt in kts:
        rows = []
        tc = prof = 0.0
        for r in by_kt[kt]:
            tc += float(r["tc_dur_us"])
            prof += float(r["prof_dur_us"])
            if float(r["prof_dur_us"]) <= 0 and r["delta_pct"] in ("", "inf"):
                err = "not measured"
            else:
                err = r["delta_pct"] + "%" if r["delta_pct"] else ""
            rows.append([r["shape_key"] or "(no shape)", r["tc_dur_us"], r["prof_dur_us"], err,
                         r["tc_count"], r["prof_count"], r["source"]])
        n = len(rows)
        summary = (f"{kt}: {n} shape{'' if n == 1 else 's'}, predicted {tc:.2f} \u00b5s, "
                   f"measured {prof:.2f} \u00b5s" + ("" if kt in compared else " (not in the kernel-type comparison)"))
        out.append({"kt": kt, "shapes": str(n), "summary": summary, "rows": rows})
    return out


def main():
    dom, shapes_csv, cmp_json = sys.argv[1:4]
    with open(shapes_csv, newline="", encoding="utf-8") as f:
        shapes = list(csv.DictReader(f))
    with open(cmp_json, encoding="utf-8") as f:
        scenarios = json.load(f)
    (cmp_rows,) = scenarios.values()
    p = Drill()
    with open(dom, encoding="utf-8") as f:
        p.feed(f.read())
    want = expected_blocks(shapes, cmp_rows)
    bad = 0
    if [b["kt"] for b in p.blocks] != [w["kt"] for w in want]:
        print("drill-down kernel types differ:\n  page:     %r\n  expected: %r" %
              ([b["kt"] for b in p.blocks], [w["kt"] for w in want]))
        bad = 1
    for got, w in zip(p.blocks, want):
        for key in ("shapes", "summary", "rows"):
            if got[key] != w[key]:
                print("%s: %s differs:\n  page:     %r\n  expected: %r" % (w["kt"], key, got[key], w[key]))
                bad = 1
    if not bad:
        print("drill-down: ok (%d kernel types, %d shape rows)" % (len(want), sum(len(w["rows"]) for w in want)))
    return bad


if __name__ == "__main__":
    sys.exit(main())
