#!/bin/sh
# real_ingest.sh OPDB ORACLE_DIR DATA_DIR [SHARED_REAL_DIR]: every file given
# to `opdb parse` either parses (exit 0) or is refused (exit 1) with one line
# naming it and saying what it is and what to do . The copies in
# DATA_DIR/kineto and DATA_DIR/ascend_other (tests/data/real) are also
# checked against the Python oracle; the whole shared collection, when
# present beside the repository, is checked for parse-or-refuse only.
set -u
opdb=$1 oracle=$2/oracle.py data=$3 shared=${4:-}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail=0
check() { # file -> parse, or a one-line refusal that names the file
  f=$1
  rm -rf "$out/db"
  "$opdb" parse --profiling-path "$f" --database-path "$out/db" >"$out/stdout" 2>"$out/stderr"
  rc=$?
  if [ $rc -eq 0 ]; then
    echo "ok: $(basename "$f"): $(cat "$out/stdout")"
  elif [ $rc -eq 1 ] && [ "$(grep -c . "$out/stderr")" -eq 1 ] && grep -qF "$f" "$out/stderr" &&
       grep -Eq "not a per-kernel profile|rather than a per-kernel profile|without shapes|without device kernels|without PyTorch-profiler|without the COMPUTE_TASK_INFO|missing required columns" "$out/stderr"; then
    echo "ok (refused): $(cat "$out/stderr")"
  else
    echo "FAIL rc=$rc: $f"; cat "$out/stderr"; fail=1
  fi
}
for f in "$data"/kineto/* "$data"/ascend_other/*; do
  check "$f"
  case $f in
    *.json|*.gz) mode=kineto ;;
    *.db) mode=sqlite ;;
    *) continue ;;
  esac
  [ $rc -eq 0 ] || continue
  rm -rf "$out/ora"
  python3 "$oracle" $mode "$f" "$out/ora" >/dev/null 2>&1 || { echo "FAIL oracle: $f"; fail=1; continue; }
  mkdir -p "$out/ora"
  if diff -r "$out/db" "$out/ora" >"$out/diff"; then echo "   same as the oracle"; else echo "FAIL oracle differs: $f"; head "$out/diff"; fail=1; fi
done
if [ -n "$shared" ] && [ -d "$shared" ]; then
  for f in "$shared"/*/*; do check "$f"; done
else
  echo "note: shared collection absent; only the copies were checked"
fi
exit $fail
