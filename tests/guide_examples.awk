# guide_examples.awk: turns the runnable examples of docs/GUIDE.md into a POSIX sh script.
#
# A runnable example is a ```console block whose previous line is a marker:
#     <!-- example -->          every command must exit 0
#     <!-- example exit=N -->   every command must exit N
#     <!-- example needs=mpi --> runs only where the build has MPI (guide_has mpi)
# Every other ```console block needs <!-- not run: why --> before it, so that no block is left
# unchecked by accident. Inside a block a line "$ CMD" is a command (a line ending in "\" continues
# it on the next line); the lines after it, up to the next command or the end of the block, are
# its output: each must be a whole line of what the command wrote to stdout ("..." stands for
# lines left out and is not checked). stderr is never compared: warnings and summaries are free to
# change wording.
#
# The generated script expects check_exit and check_line (defined by the caller) and runs the
# commands in guide order, in the current folder.
function q(s) { gsub(/'/, "'\\''", s); return "'" s "'" }
function flush_cmd() {
    if (cmd == "") return
    n++
    printf "printf '%%s\\n' %s >cmd.%d\n", q(cmd), n
    # OpenMPI's plugins leak at exit: no leak check for the MPI command under ASan;
    # the CPU replay's OpenMP runtime is not built for ThreadSanitizer (the bench
    # tests stay outside the TSan run): no race reports for bench's replays
    env = ""
    if (cmd ~ /^opdb comm bench/) env = "export ASAN_OPTIONS=\"${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0\"\n"
    else if (cmd ~ /^opdb bench/) env = "export TSAN_OPTIONS=\"${TSAN_OPTIONS:+$TSAN_OPTIONS:}report_bugs=0\"\n"
    printf "set +e\n(\n%s%s\n) >out.%d 2>err.%d\nrc=$?\nset -e\n", env, cmd, n, n
    printf "check_exit %d %d %d\n", n, want_exit, cmd_line
    cmd = ""
}
BEGIN { n = 0; in_block = 0; cont = 0; cmd = ""; marker = ""; prev = "" }
{
    sub(/\r$/, "")
    if (!in_block) {
        if ($0 ~ /^```console[ \t]*$/) {
            if (prev ~ /^<!-- example( exit=[0-9]+)?( needs=[a-z]+)? -->$/) {
                in_block = 1; run = 1; want_exit = 0; have = 0; gate = 0
                if (match(prev, /exit=[0-9]+/)) want_exit = substr(prev, RSTART + 5, RLENGTH - 5) + 0
                if (match(prev, /needs=[a-z]+/)) { gate = 1; printf "if guide_has %s; then\n", substr(prev, RSTART + 6, RLENGTH - 6) }
            } else if (prev ~ /^<!-- not run: .+ -->$/) {
                in_block = 1; run = 0
            } else {
                printf "GUIDE.md:%d: a console block without <!-- example --> or <!-- not run: why -->\n", NR > "/dev/stderr"
                bad = 1
            }
        }
        prev = $0
        next
    }
    if ($0 ~ /^```[ \t]*$/) {
        if (run) flush_cmd()
        if (run && gate) print "fi"
        in_block = 0; cont = 0; gate = 0; prev = $0; next
    }
    if (!run) next
    if (cont) {
        cmd = cmd "\n" $0
        cont = ($0 ~ /\\$/)
        next
    }
    if ($0 ~ /^\$ /) {
        flush_cmd()
        cmd = substr($0, 3); cmd_line = NR; have = 1
        cont = ($0 ~ /\\$/)
        next
    }
    if (!have) {
        printf "GUIDE.md:%d: output before the block's first command\n", NR > "/dev/stderr"; bad = 1; next
    }
    # an output line of the last command: checked once the command has run
    if (cmd != "") flush_cmd()
    if ($0 == "...") next
    printf "check_line %d %s %d\n", n, q($0), NR
}
END {
    if (in_block) { print "GUIDE.md: a console block is not closed" > "/dev/stderr"; bad = 1 }
    if (n == 0) { print "GUIDE.md: no runnable example" > "/dev/stderr"; bad = 1 }
    if (bad) exit 1
}
