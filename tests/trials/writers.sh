# writers.sh (sourced, POSIX sh): the one list of opdb's database writers and how to run each.
# tests/writers_locked.sh (lock and journal checks) and tests/trials/every_writer.sh (kill and
# concurrency trials) both read it, so a writer added here is tried by both, and a command missing
# here fails writers_locked.sh's enumeration.
#
# Needs: $opdb (the binary), $src (the source tree), $w (a scratch folder).
# writers_fixture: builds $w/base (a small database every writer changes) and the inputs.
# run_writer NAME DB [V]: one write of that writer into DB; V (1..8, default 1) picks an input of
# its own, so that concurrent writers of one kind each have an effect that can be checked (the
# same input for writers whose repeated run is meant to give the same result). With writer_exec=exec
# (in a subshell) the opdb process replaces the shell, so that a signal sent to it reaches opdb.

# commands opdb lists that write a database (comm: import; validate: --repair; check: --write-calibration)
writers="parse update grid bench fia-fill comm validate check"
# commands that read databases and write only the output file they are given
readonly_cmds="aie m6 shape-compare compare trace2csv query diff"
# other modes that write a database, tried as writers too
writer_modes="parse-merge grid-misses query-collect"

# the commands `opdb --help` lists that are in neither list (printed, space-separated)
writer_exec=
writers_unclassified() {
  for c in $("$opdb" --help | awk '/^commands:/ { on = 1; next } on && /^$/ { exit } on && /^  [a-z]/ { print $1 }'); do
    case " $writers $readonly_cmds " in *" $c "*) ;; *) printf '%s ' "$c" ;; esac
  done
}
# whether run_writer knows NAME (run with a stand-in for opdb that does nothing)
writer_known() { (opdb=true; run_writer "$1" "$w/nowhere" >/dev/null 2>&1); [ $? != 2 ]; }

# kernel_details with NOPS operator types named PREFIX0.., 3 shapes each, durations scaled by SCALE
writers_kd() { # writers_kd FILE PREFIX NOPS SCALE
  awk -v p="$2" -v n="$3" -v s="$4" 'BEGIN { print "Type,Accelerator Core,Input Shapes,Output Shapes,Duration(us)"
    for (t = 0; t < n; t++) for (r = 0; r < 3; r++)
      printf "%s%d,AI_VECTOR_CORE,\"\"\"%d,%d\"\"\",\"\"\"%d\"\"\",%d.5\n", p, t, t + 1, r + 1, t + 1, (t + r + 1) * s }' >"$1"
}
# op_summary for 3 new Add shapes of variant V (and one Sort row, a new table for --add-new-ops)
writers_prof() { # writers_prof DIR V
  mkdir -p "$1/PROF_000001_x/mindstudio_profiler_output"
  awk -v v="$2" 'BEGIN {
    print "Device_id,Model ID,Task ID,Stream ID,Op Name,OP Type,OP State,Task Type,Task Start Time(us),Task Duration(us),Task Wait Time(us),Block Dim,Mix Block Dim,HF32 Eligible,Input Shapes,Input Data Types,Input Formats,Output Shapes,Output Data Types,Output Formats,Context ID,aicore_time(us)"
    for (i = 0; i < 3; i++)
      printf "0,1,%d,1,k,Add,dynamic,AI_VECTOR_CORE,1.0,%d.5,0,8,0,NO,\"\"\"%d,%d;%d,%d\"\"\",DT_BF16;DT_BF16,ND;ND,\"\"\"%d,%d\"\"\",DT_BF16,ND,0,1.0\n", i, v + i, v * 10 + i, 16, v * 10 + i, 16, v * 10 + i, 16
    printf "0,1,9,1,k,Sort,dynamic,AI_VECTOR_CORE,1.0,%d.5,0,8,0,NO,\"\"\"%d\"\"\",FLOAT,ND,\"\"\"%d;%d\"\"\",FLOAT;INT32,ND;ND,0,1.0\n", v, 64 * v, 64 * v, 64 * v }' \
    >"$1/PROF_000001_x/mindstudio_profiler_output/op_summary_1.csv"
}
# a kernel-level Add query of variant V that the base database misses
writers_kq() { # writers_kq V
  echo "{\"id\": $1, \"kernel\": \"Add\", \"inputs\": [{\"shape\": [$((70 + $1)), 3], \"dtype\": \"DT_BF16\"}, {\"shape\": [$((70 + $1)), 3], \"dtype\": \"DT_BF16\"}], \"interpolate\": false}"
}

writers_fixture() {
  mkdir -p "$w/in"
  # examples/bench/db: 7 small rows (Add, MatMulV2, RmsNorm) that bench replays in well under a second
  rm -rf "$w/base"; cp -R "$src/examples/bench/db" "$w/base"
  cp "$src/tests/cli/fiafill_basic/in/FusedInferAttentionScore.csv" "$w/base/FusedInferAttentionScore.csv"
  for v in 1 2 3 4 5 6 7 8; do
    writers_kd "$w/in/kd$v.csv" "P${v}_" 4 "$v"     # plain parse: 4 tables of its own
    writers_kd "$w/in/kdm$v.csv" "M" 4 "$v"         # parse --merge: the same 4 tables, merged
    writers_prof "$w/in/prof$v" "$v"
    writers_kq "$v" >"$w/in/kq$v.jsonl"
    writers_kq $((v + 10)) >"$w/in/mq$v.jsonl"
    "$opdb" query --db "$w/base" <"$w/in/mq$v.jsonl" >"$w/in/misses$v.jsonl" 2>/dev/null || return 1
    grep -q '"request"' "$w/in/misses$v.jsonl" || { echo "FAIL: the probe query $v did not miss with a request"; return 1; }
  done
  # the tables parse --merge merges into
  "$opdb" parse --profiling-path "$w/in/kdm8.csv" --database-path "$w/base" >/dev/null 2>&1
}

run_writer() { # run_writer NAME DB [V]
  v=${3:-1}
  case $1 in
    parse) $writer_exec "$opdb" parse --profiling-path "$w/in/kd$v.csv" --database-path "$2" ;;
    parse-merge) $writer_exec "$opdb" parse --merge --profiling-path "$w/in/kdm$v.csv" --database-path "$2" ;;
    # (a report of its own per variant: concurrent updates do not overwrite one another's)
    update) OPDB_REPORT_TIMESTAMP=2026010${v}_000000 $writer_exec "$opdb" update --add-new-ops --prof-path "$w/in/prof$v" --database-path "$2" ;;
    # the same rows each time (seed 1): rows small enough for bench (--max-hbm-gb)
    grid) $writer_exec "$opdb" grid --database-path "$2" --target-models Qwen3-32B --rows 2 --seed 1 --max-hbm-gb 0.002 ;;
    bench) case $((v % 3)) in 1) op=Add ;; 2) op=RmsNorm ;; *) op=MatMulV2 ;; esac
      OPDB_REPORT_TIMESTAMP=2026010${v}_000000 $writer_exec "$opdb" bench --database-path "$2" --ops $op --repeat-count 2 --hot-cache --threads 1 --timeout 2 --no-progress ;;
    fia-fill) $writer_exec "$opdb" fia-fill --csv-path "$2/FusedInferAttentionScore.csv" --jsonl-path "$src/tests/cli/fiafill_basic/in/fia_runtime.jsonl" ;;
    comm) $writer_exec "$opdb" comm import --logs "$src/examples/comm/nccl_tests_allreduce_8gpu.txt" --num-devices $((v + 1)) --output-dir "$2" ;;
    validate) $writer_exec "$opdb" validate --repair --database-path "$2" ;;
    check) $writer_exec "$opdb" check --db "$2" --write-calibration ;;
    grid-misses) $writer_exec "$opdb" grid --database-path "$2" --from-misses "$w/in/misses$v.jsonl" ;;
    query-collect) $writer_exec "$opdb" query --db "$2" --collect "$2" <"$w/in/kq$v.jsonl" ;;
    *) echo "run_writer: unknown writer $1" >&2; return 2 ;;
  esac
}
