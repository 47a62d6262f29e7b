#!/bin/sh
# real_consistency.sh OPDB DIR...: for every real kernel_details / op_summary
# CSV in each DIR that parses, the database `opdb parse` writes must pass
# `opdb validate` (one notion of "the same row", docs/ROW-IDENTITY.md), and a
# real aggregated FusedInferAttentionScore table must pass too. Absent DIRs
# are skipped; exit 77 when none exists.
set -u
opdb=$1
shift
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail=0
seen=0
for dir in "$@"; do
  [ -d "$dir" ] || continue
  seen=1
  for f in "$dir"/*kernel_details*.csv "$dir"/*op_summary*.csv; do
    [ -f "$f" ] || continue
    rm -rf "$out/db"
    "$opdb" parse --no-progress --profiling-path "$f" --database-path "$out/db" >/dev/null 2>&1 || continue
    [ -d "$out/db" ] || continue
    if "$opdb" validate --database-path "$out/db" >"$out/v" 2>&1; then
      echo "ok: parse+validate $(basename "$f"): $(tail -1 "$out/v" | sed 's/.*: //')"
    else
      echo "FAIL: the database parsed from $f does not pass validate:"; cat "$out/v"; fail=1
    fi
    # Every MatMulV2/MatMulV3 row replays on the CPU (one sample each), except
    # rows whose shapes contradict each other (no GEMM reading gives the
    # output, e.g. mstt's synthetic 81920,4096;8192,512 -> 4096,512): those
    # must be refused with that reason, never measured.
    for op in MatMulV2 MatMulV3; do
      [ -f "$out/db/$op.csv" ] || continue
      "$opdb" bench --cache-mib 4 --database-path "$out/db" --ops $op --repeat-count 1 --threads 1 >/dev/null 2>"$out/b"
      grep '^\[FAIL\]' "$out/b" | grep -v 'no reading of A .* gives the output' >"$out/bf"
      if [ -s "$out/bf" ]; then
        echo "FAIL: $op rows of $f do not replay:"; grep -E '^\[(FAIL|OK)\]' "$out/b"; fail=1
      else
        echo "ok: bench $op $(basename "$f"): $(grep -c '^\[OK\]' "$out/b") row(s) replayed, $(grep -c '^\[FAIL\]' "$out/b") refused (contradictory shapes)"
      fi
    done
  done
  agg="$dir/msmodeling_perfdb_FusedInferAttentionScore_aggregated.csv"
  if [ -f "$agg" ]; then
    rm -rf "$out/db"; mkdir -p "$out/db"; cp "$agg" "$out/db/FusedInferAttentionScore.csv"
    if "$opdb" validate --database-path "$out/db" >"$out/v" 2>&1; then
      echo "ok: validate $(basename "$agg")"
    else
      echo "FAIL: validate $agg:"; cat "$out/v"; fail=1
    fi
  fi
done
[ $seen = 1 ] || { echo "SKIPPED: none of $* exists"; exit 77; }
exit $fail
