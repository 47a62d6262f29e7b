#!/bin/sh
# shell_docs.sh OPDB SRC
# The bash completion and man pages that `cmake --install` installs: generated
# from the --help option tables, the completion sourced in bash completes
# commands and options, every option of every command's --help is in its man
# page, and groff renders the pages without warnings.
set -u
opdb=$1
src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail=0
sh "$src/scripts/gen_shell_docs.sh" "$opdb" "$work/out" || { echo "generation failed"; exit 1; }
complete_line() { # words... -> COMPREPLY, one per line
  bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($#-1)); _opdb; printf "%s\n" "${COMPREPLY[@]}"' _ "$work/out/opdb.bash" "$@"
}
[ "$(complete_line opdb comp)" = compare ] || { echo "opdb comp<TAB> did not give compare"; fail=1; }
[ "$(complete_line opdb compare --to)" = --top ] || { echo "opdb compare --to<TAB> did not give --top"; fail=1; }
complete_line opdb parse --pro | grep -qx -- --profiling-path || { echo "opdb parse --pro<TAB>"; fail=1; }
for c in $("$opdb" --help | awk '/^commands:/{on=1;next} on&&/^$/{exit} on&&/^  [a-z]/{print $1}'); do
  page="$work/out/man1/opdb-$c.1"
  [ -f "$page" ] || { echo "no man page for $c"; fail=1; continue; }
  completed=$(complete_line opdb "$c" --)
  for o in $("$opdb" "$c" --help | grep -o '^  --[A-Za-z0-9-]*'); do
    grep -q -- "^\.BI\{0,1\} \"\{0,1\}$(printf '%s' "$o" | sed 's/-/\\\\-/g')" "$page" || { echo "$c: $o missing from the man page"; fail=1; }
    printf '%s\n' "$completed" | grep -qx -- "$o" || { echo "$c: $o not completed"; fail=1; }
  done
  if command -v groff >/dev/null; then
    warn=$(groff -man -Tutf8 -ww -Wbreak -z "$page" 2>&1)
    [ -z "$warn" ] || { echo "$c: man warns: $warn"; fail=1; }
  fi
done
# comm's subcommands: their own pages and completion
[ "$(complete_line opdb comm val)" = validate ] || { echo "opdb comm val<TAB> did not give validate"; fail=1; }
for s in bench validate import; do
  page="$work/out/man1/opdb-comm-$s.1"
  [ -f "$page" ] || { echo "no man page for comm $s"; fail=1; continue; }
  completed=$(complete_line opdb comm "$s" --)
  for o in $("$opdb" comm "$s" --help | grep -o '^  --[A-Za-z0-9-]*'); do
    grep -q -- "^\.BI\{0,1\} \"\{0,1\}$(printf '%s' "$o" | sed 's/-/\\\\-/g')" "$page" || { echo "comm $s: $o missing from the man page"; fail=1; }
    printf '%s\n' "$completed" | grep -qx -- "$o" || { echo "comm $s: $o not completed"; fail=1; }
  done
  if command -v groff >/dev/null; then
    warn=$(groff -man -Tutf8 -ww -Wbreak -z "$page" 2>&1)
    [ -z "$warn" ] || { echo "comm $s: man warns: $warn"; fail=1; }
  fi
done
for page in "$work/out/man1/opdb.1" "$work/out/man1/opdb-comm.1"; do
  grep -q '^\.SH EXIT STATUS' "$page" || { echo "$page: no EXIT STATUS"; fail=1; }
  if command -v groff >/dev/null; then
    warn=$(groff -man -Tutf8 -ww -Wbreak -z "$page" 2>&1)
    [ -z "$warn" ] || { echo "$page: man warns: $warn"; fail=1; }
  fi
done
[ $fail = 0 ] && echo "shell_docs: ok"
exit $fail
