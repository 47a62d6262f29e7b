#!/bin/sh
# Runs every libFuzzer target for SECONDS (default 30) over a scratch copy of
# its seed corpus; exits non-zero if any target finds a crash, leak or
# mismatch (the reproducer is left in the artifact folder it prints).
#   tests/fuzz/run.sh [BUILD_DIR] [SECONDS]
# Build first:
#   CC=clang cmake -S . -B build-fuzz -G Ninja -DOPDB_BUILD_FUZZ=ON -DOPDB_BUILD_PERF=OFF
#   ninja -C build-fuzz fuzz_csv fuzz_parse
set -u
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-build-fuzz}
secs=${2:-30}
# CI uses a fixed seed so a run is reproducible; by hand every run explores anew.
if [ -n "${OPDB_FUZZ_SEED:-}" ]; then seed_opt="-seed=$OPDB_FUZZ_SEED"
elif [ -n "${CI:-}" ]; then seed_opt="-seed=1"
else seed_opt=""; fi
work=$(mktemp -d "${TMPDIR:-/tmp}/opdb_fuzz_run.XXXXXX")
artifacts="$work/artifacts"
mkdir -p "$artifacts"
status=0

run_target() {
    name=$1
    corpus=$2
    extra=$3
    bin="$build/tests/fuzz/$name"
    if [ ! -x "$bin" ]; then
        echo "run.sh: $bin not built" >&2
        status=1
        return
    fi
    mkdir -p "$work/corpus_$name"
    cp "$here/corpus/$corpus"/* "$work/corpus_$name/" 2>/dev/null
    echo "== $name: ${secs}s"
    # shellcheck disable=SC2086
    if ! "$bin" "$work/corpus_$name" -max_total_time="$secs" -rss_limit_mb=2048 \
        -artifact_prefix="$artifacts/$name-" -print_final_stats=1 $seed_opt $extra >"$work/$name.log" 2>&1; then
        echo "== $name: FAILED (log: $work/$name.log, artifacts: $artifacts)"
        tail -n 60 "$work/$name.log"
        status=1
    else
        grep -E "^(stat::number_of_executed_units|stat::new_units_added|#[0-9]+ +DONE)" "$work/$name.log"
        echo "== $name: ok"
    fi
}

run_target fuzz_csv csv ""
# the parser warns on stderr for many inputs: silence the target's stderr
run_target fuzz_parse csv "-close_fd_mask=2"
run_target fuzz_op_summary op_summary "-close_fd_mask=2"
run_target fuzz_aie aie "-close_fd_mask=3"
run_target fuzz_trace trace ""
run_target fuzz_pyliteral pyliteral ""
run_target fuzz_grid_expr grid_expr ""
run_target fuzz_grid_config grid_config ""
run_target fuzz_comm_log comm_log ""
run_target fuzz_kineto kineto "-close_fd_mask=2"
run_target fuzz_sqlite sqlite "-close_fd_mask=2"
run_target fuzz_fia_jsonl fia_jsonl "-close_fd_mask=2"
run_target fuzz_op_mapping op_mapping ""
run_target fuzz_fwd_csv fwd_csv "-close_fd_mask=2"
run_target fuzz_validate validate "-close_fd_mask=2"
run_target fuzz_add_new_ops add_new_ops "-close_fd_mask=2"
run_target fuzz_cmp_shapes cmp_shapes "-close_fd_mask=2"
run_target fuzz_query_line query_line "-close_fd_mask=2"
run_target fuzz_query_table query_table ""
run_target fuzz_journal journal "-close_fd_mask=2"
run_target fuzz_bench_rows bench_rows "-close_fd_mask=2"
run_target fuzz_bench_journal bench_journal "-close_fd_mask=2"
run_target fuzz_merge_table merge_table "-close_fd_mask=2"
run_target fuzz_grid_table grid_table "-close_fd_mask=2"
run_target fuzz_comm_validate comm_validate ""
run_target fuzz_overhead overhead ""
run_target fuzz_cmp_nfwd cmp_nfwd ""

if [ "$status" -eq 0 ]; then
    rm -rf "$work"
else
    echo "run.sh: failures kept under $work" >&2
fi
exit "$status"
