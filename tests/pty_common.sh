# pty_common.sh: sourced by the pseudo-terminal tests (sh tests/<x>_pty.sh OPDB SRC).
# Sets opdb and src from the arguments, skips (exit 77) without script(1),
# moves into a temporary folder removed at exit, and defines bad (a failed
# check: printed, counted in fail) and plain (a terminal capture with each
# redraw on its own line and the erase-to-end codes dropped).
set -u
opdb=$1
src=$2
command -v script >/dev/null || { echo "script(1) not installed: skipped"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
fail=0
bad() { echo "FAIL: $*"; fail=1; }
plain() { tr '\r' '\n' <"$1" | sed 's/\x1b\[K//g'; }
