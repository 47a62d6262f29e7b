#!/bin/sh
# Writes tests/cli/comm_validate_*/expected{,_quirks}/{stdout,rc} from the Python oracle
# (never from opdb). The oracle runs in the case folder, so the relative
# paths of each cmd (in/...) mean the same thing. opdb flags map to oracle
# flags: default mode -> --opdb-default, --reference-quirks -> (none).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../../cli"
for c in comm_validate_*; do
  # a dual-mode case also holds cmd_quirks -> expected_quirks/
  for mode in "cmd expected" "cmd_quirks expected_quirks"; do
    set -- $mode
    [ -f "$c/$1" ] || continue
    args=$(sed 's/^opdb comm validate //' "$c/$1")
    case "$args" in
      *--reference-quirks*) args=$(echo "$args" | sed 's/ *--reference-quirks//') ;;
      *) args="$args --opdb-default" ;;
    esac
    mkdir -p "$c/$2"
    rc=0
    (cd "$c" && python3 "$here/validate_comm_alignment.py" $args >"$2/stdout" 2>/dev/null) || rc=$?
    echo $rc >"$c/$2/rc"
  done
done
