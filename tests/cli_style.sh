#!/bin/sh
# cli_style.sh OPDB SAMPLE_NCCL_LOG
# One CLI style: every --help (opdb, each command, each comm subcommand) has
# an example and its exit statuses and no line over 80 columns when stdout is
# not a terminal; -V is --version with the revision and the build's features;
# mistyped subcommands and values get a suggestion and exit 2; --logs - reads
# stdin; older flag spellings still work; warnings read
# "opdb <command>: warning: ...".
set -u
opdb=$1 log=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }
has() { grep -qF -- "$2" "$1" || bad "$3: '$2' not in: $(head -c 600 "$1")"; }

check_help() { # words...
  "$@" --help >"$work/h" 2>"$work/he" </dev/null || bad "$* --help exits $?"
  awk 'p=="example:" && /^  .*opdb/ {ex=1} p=="exit status:" && /^  [0-9]/ {st=1} {p=$0}
       END {exit !(ex && st)}' "$work/h" || bad "$* --help: no example or no exit status section"
  LC_ALL=C awk -v w="$*" 'length($0) > 80 {print w ": line " NR " has " length($0) " columns: " $0; bad=1} END {exit bad}' \
    "$work/h" || fail=1
}
check_help "$opdb"
cmds=$(OPDB_HELP_FORMAT=table "$opdb" --help | awk -F '\t' '$1=="K"{print $2}')
[ "$(echo $cmds | wc -w)" -ge 14 ] || bad "only these commands listed: $cmds"
for c in $cmds; do check_help "$opdb" "$c"; done
subs=$(OPDB_HELP_FORMAT=table "$opdb" comm --help | awk -F '\t' '$1=="K"{print $2}')
[ "$(echo $subs)" = "bench validate import" ] || bad "comm subcommands: $subs"
for s in $subs; do check_help "$opdb" comm "$s"; done

# on a terminal, the terminal's width (util-linux script gives the pty)
if command -v script >/dev/null 2>&1; then
  script -qc "stty cols 60; '$opdb' parse --help" /dev/null </dev/null | tr -d '\r' >"$work/tty"
  grep -q '^example:' "$work/tty" || bad "parse --help on a 60-column terminal: $(head -3 "$work/tty")"
  LC_ALL=C awk 'length($0) > 60 {print "60-column terminal: " $0; bad=1} END {exit bad}' "$work/tty" || fail=1
fi

# -V / --version
"$opdb" --version >"$work/v1"; "$opdb" -V >"$work/v2" || bad "-V exits $?"
cmp -s "$work/v1" "$work/v2" || bad "-V differs from --version"
grep -Eq '^opdb [0-9]+\.[0-9]+\.[0-9]+$' "$work/v1" || bad "version line: $(cat "$work/v1")"
grep -Eq '^revision: (git [0-9a-f]+(-dirty)?|unknown)$' "$work/v1" || bad "revision line: $(cat "$work/v1")"
grep -Eq '^features: CUDA=(yes|no) MPI=(yes|no) NCCL=(yes|no) SQLite=yes OpenMP=(yes|no) qhull=yes$' "$work/v1" \
  || bad "features line: $(cat "$work/v1")"

# typo hints: subcommands and values, exit 2
"$opdb" comm validat >/dev/null 2>"$work/e"; rc=$?
[ $rc = 2 ] || bad "comm validat exits $rc"
has "$work/e" "did you mean 'validate'?" "comm validat"
mkdir "$work/db"
"$opdb" bench --database-path "$work/db" --ops Matmulv2 >/dev/null 2>"$work/e"; rc=$?
[ $rc = 2 ] || bad "bench --ops Matmulv2 exits $rc"
has "$work/e" "did you mean 'MatMulV2'?" "bench --ops Matmulv2"
"$opdb" bench --database-path "$work/db" --ops SoftmaxV3 Matmulv2 >/dev/null 2>"$work/e"; rc=$?
[ $rc = 2 ] || bad "bench --ops SoftmaxV3 Matmulv2 exits $rc"
has "$work/e" "unknown operator 'Matmulv2' (did you mean 'MatMulV2'?); unknown operator 'SoftmaxV3' (did you mean 'SoftmaxV2'?)" "two near names"
"$opdb" update --prof-path "$work/db" --database-path "$work/db" --ops SoftmaxV3 >/dev/null 2>"$work/e"; rc=$?
[ $rc = 2 ] || bad "update --ops SoftmaxV3 exits $rc"
has "$work/e" "did you mean 'SoftmaxV2'?" "update --ops SoftmaxV3"
"$opdb" bench --database-path "$work/db" --ops Matmulv2 --reference-quirks >/dev/null 2>"$work/e"; rc=$?
[ $rc = 1 ] || bad "bench --ops Matmulv2 --reference-quirks exits $rc (the reference's 1)"
has "$work/e" "Unsupported --ops: " "bench --ops under --reference-quirks"
"$opdb" parse --profiling-path "$work/db" --device ATLAS_800_A2_376T_46G >/dev/null 2>"$work/e"; rc=$?
[ $rc = 2 ] || bad "parse --device typo exits $rc"
has "$work/e" "did you mean 'ATLAS_800_A2_376T_64G'?" "parse --device typo"
"$opdb" grid --database-path "$work/db" --target-models Qwen3-23B --plan >/dev/null 2>"$work/e"; rc=$?
[ $rc = 2 ] || bad "grid --target-models typo exits $rc"
has "$work/e" "did you mean 'Qwen/Qwen3-32B'?" "grid --target-models typo"

"$opdb" comm import --database-path "$work/db" --ops all_reduc --logs "$log" >/dev/null 2>"$work/e"; rc=$?
[ $rc = 2 ] || bad "comm import --ops all_reduc exits $rc"
has "$work/e" "did you mean 'all_reduce'?" "comm import --ops all_reduc"

# --logs - reads stdin; the older spellings --output-dir and --op still work
"$opdb" comm import --database-path "$work/c1" --ops all_reduce --logs - <"$log" >"$work/o" 2>"$work/e" || bad "comm import --logs - exits $?"
ls "$work"/c1/hcom_*.csv >/dev/null 2>&1 || bad "comm import --logs -: no table written"
has "$work/o" "<stdin>" "comm import --logs - names stdin"
has "$work/e" "opdb comm import: warning: <stdin>: " "comm import warning format"
"$opdb" comm import --output-dir "$work/c2" --op all_reduce --logs "$log" >/dev/null 2>&1 || bad "comm import --output-dir --op exits $?"
cmp -s "$work"/c1/hcom_*.csv "$work"/c2/hcom_*.csv || bad "--logs - and a file give different tables"
"$opdb" comm import --help >"$work/h"
has "$work/h" "(older spelling: --output-dir)" "comm import --help names the alias"
"$opdb" update --help >"$work/h"
has "$work/h" "(older spelling: --prof-path)" "update --help names the alias of --profiling-path"

# one warning format
"$opdb" validate --database-path "$work/db" >/dev/null 2>"$work/e"
has "$work/e" "opdb validate: warning: " "validate warning"
[ $fail = 0 ] && echo "cli_style: ok"
exit $fail
