#!/bin/sh
# real_files.sh OPDB DIR: every kernel_details / op_summary CSV in DIR (the
# shared real-file collection) must parse, or be refused with a clear message
# when it lacks the shape columns. Skips (exit 77) when DIR is absent.
set -u
opdb=$1
dir=$2
if [ ! -d "$dir" ]; then
  echo "SKIPPED: $dir is absent (the shared real-file collection is not checked out beside this repo)"
  exit 77
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail=0
n=0
for f in "$dir"/*kernel_details*.csv "$dir"/*op_summary*.csv; do
  [ -f "$f" ] || continue
  n=$((n + 1))
  rm -rf "$out/db"
  if "$opdb" parse --profiling-path "$f" --database-path "$out/db" >"$out/stdout" 2>"$out/stderr"; then
    ls "$out/db"/*.csv >/dev/null 2>&1 || grep -q "Generated 0" "$out/stdout" || { echo "FAIL (no output): $f"; fail=1; }
    echo "ok: $(basename "$f"): $(cat "$out/stdout")"
  else
    rc=$?
    # Only a missing-shape-columns refusal is acceptable.
    if [ $rc -eq 1 ] && grep -q "missing required columns: Input Shapes, Output Shapes" "$out/stderr"; then
      echo "ok (refused, no shapes): $(basename "$f")"
    else
      echo "FAIL rc=$rc: $f"; cat "$out/stderr"; fail=1
    fi
  fi
  # The reference-compatible mode must never crash either.
  rm -rf "$out/db"
  "$opdb" parse --reference-quirks --profiling-path "$f" --database-path "$out/db" >/dev/null 2>"$out/stderr"
  rc=$?
  if [ $rc -ne 0 ] && [ $rc -ne 1 ]; then echo "FAIL quirks rc=$rc: $f"; fail=1; fi
done
[ $n -gt 0 ] || { echo "FAIL: no kernel_details/op_summary files in $dir"; fail=1; }

# op_summary files through `opdb update` (a new database seeded from the profile).
for f in "$dir"/*op_summary*.csv; do
  [ -f "$f" ] || continue
  for mode in "" --reference-quirks; do
    rm -rf "$out/prof" "$out/db"
    mkdir -p "$out/prof/PROF_000001_real/mindstudio_profiler_output" "$out/db"
    cp "$f" "$out/prof/PROF_000001_real/mindstudio_profiler_output/op_summary_1.csv"
    if OPDB_REPORT_TIMESTAMP=20260101_000000 "$opdb" update $mode --prof-path "$out/prof" --database-path "$out/db" >"$out/stdout" 2>"$out/stderr"; then
      echo "ok: update $mode $(basename "$f"): $(grep -c . "$out/stdout") report lines, $(ls "$out/db" | grep -c csv) CSV(s)"
    else
      echo "FAIL update $mode: $f"; cat "$out/stderr"; fail=1
    fi
  done
done

# Real Chrome/Kineto traces (plain and gzip) through `opdb trace2csv`.
for f in "$dir"/../kineto/* "$dir"/*trace_view*.json; do
  [ -f "$f" ] || continue
  if "$opdb" trace2csv --trace "$f" >"$out/stdout" 2>"$out/stderr" && head -1 "$out/stdout" | grep -q '^op_name,'; then
    echo "ok: trace2csv $(basename "$f"): $(($(wc -l <"$out/stdout") - 1)) complete event(s)"
  else
    echo "FAIL trace2csv: $f"; cat "$out/stderr"; fail=1
  fi
done

# A real aggregated database CSV through `opdb validate` and `opdb update`.
agg="$dir/msmodeling_perfdb_FusedInferAttentionScore_aggregated.csv"
if [ -f "$agg" ]; then
  rm -rf "$out/db"; mkdir -p "$out/db"; cp "$agg" "$out/db/FusedInferAttentionScore.csv"
  "$opdb" validate --database-path "$out/db" >"$out/stdout" 2>"$out/stderr"
  rc=$?
  if [ $rc -le 1 ] && ! grep -qv '^opdb validate: checked ' "$out/stderr"; then # nothing but the summary line
    echo "ok: validate $(basename "$agg"): $(tail -1 "$out/stdout")"
  else
    echo "FAIL validate rc=$rc: $agg"; cat "$out/stderr"; fail=1
  fi
fi
exit $fail
