#!/bin/sh
# Every file in ../shared/data/real/collective imports or is refused with
# exactly one line on stderr (exit 0 or 1, never a crash or silence); given to
# `opdb parse`, each is named as a collective log pointing to `opdb comm import`.
#   comm_real_logs.sh OPDB DIR
set -u
opdb=$1
dir=$2
[ -d "$dir" ] || { echo "comm_real_logs.sh: no $dir" >&2; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0
n=0
for f in "$dir"/*; do
  case "$f" in *.md) continue ;; esac
  n=$((n + 1))
  "$opdb" comm import --output-dir "$work/out" --logs "$f" >"$work/o" 2>"$work/e"
  rc=$?
  lines=$(wc -l <"$work/e")
  if [ $rc = 0 ]; then
    # on success stderr holds only the one-line summary
    grep -q ' rows -> ' "$work/o" && [ "$lines" = 1 ] && grep -q '^opdb comm import: imported ' "$work/e" || { echo "$f: imported without a summary or with stderr"; status=1; }
  elif [ $rc = 1 ]; then
    [ "$lines" = 1 ] || { echo "$f: refused with $lines stderr lines"; cat "$work/e"; status=1; }
  else
    echo "$f: exit $rc"; status=1
  fi
  "$opdb" parse --profiling-path "$f" --database-path "$work/db" >"$work/o" 2>"$work/e"
  rc=$?
  [ $rc = 1 ] && [ "$(wc -l <"$work/e")" = 1 ] && grep -q -e ' log.*collective timings rather than a per-kernel profile; import it .* with opdb comm import --logs ' \
    -e ' OSU benchmark log: .*, point-to-point timings rather than a per-kernel profile (opdb comm import reads' "$work/e" &&
    [ ! -e "$work/db" ] || { echo "$f: parse (exit $rc) did not name it as a collective log:"; cat "$work/e"; status=1; }
done
[ $n -gt 0 ] || { echo "no files in $dir"; exit 77; }
exit $status
