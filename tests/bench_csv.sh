# tests/bench_csv.sh - CSV helpers for shell scripts reading opdb databases
# (sourced by tests/bench_cli.sh and perf/replay.sh; POSIX sh + awk).
#
# csv_col FILE NAME: 1-based index of column NAME (headers hold no quoted commas)
csv_col() { head -1 "$1" | tr -d '\r' | tr ',' '\n' | grep -nxF -- "$2" | cut -d: -f1; }
# csv_cell FILE LINE NAME: the decoded cell of file line LINE (2 = first data
# row); shape cells hold quoted commas, so each line is split by a small CSV
# scanner (records must not span lines).
csv_cell() {
  awk -v l="$2" -v c="$(csv_col "$1" "$3")" 'NR == l { sub(/\r$/, ""); n = 0; f = ""; q = 0
    for (i = 1; i <= length($0); i++) { ch = substr($0, i, 1)
      if (q) { if (ch == "\"") { if (substr($0, i + 1, 1) == "\"") { f = f ch; i++ } else q = 0 } else f = f ch }
      else if (ch == "\"") q = 1
      else if (ch == ",") { n++; if (n == c) { print f; exit } f = "" }
      else f = f ch }
    n++; if (n == c) print f }' "$1"
}
