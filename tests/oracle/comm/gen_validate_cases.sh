#!/bin/sh
# Writes tests/cli/comm_validate_*/expected/{stdout,rc} from the Python oracle
# (never from opdb). The oracle runs in the case folder, so the relative
# paths of each cmd (in/...) mean the same thing. opdb flags map to oracle
# flags: default mode -> --opdb-default, --reference-quirks -> (none).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../../cli"
for c in comm_validate_*; do
  args=$(sed 's/^opdb comm validate //' "$c/cmd")
  case "$args" in
    *--reference-quirks*) args=$(echo "$args" | sed 's/ *--reference-quirks//') ;;
    *) args="$args --opdb-default" ;;
  esac
  mkdir -p "$c/expected"
  rc=0
  (cd "$c" && python3 "$here/validate_comm_alignment.py" $args >expected/stdout 2>/dev/null) || rc=$?
  echo $rc >"$c/expected/rc"
done
