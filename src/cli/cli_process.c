/* See cli_process.h.  Only async-signal-safe calls in the signal handlers:
 * write, unlink (in the library's cleanup), _exit, raise. */
#include "cli/cli_process.h"

#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "opdb/core.h"
#include "opdb/fs.h"

static void say(const char *s) {
    size_t n = strlen(s);
    while (n > 0) {
        ssize_t w = write(STDERR_FILENO, s, n);
        if (w <= 0) return;
        s += w;
        n -= (size_t)w;
    }
}

static void on_fatal_signal(int sig) {
    int state = opdb_txn_state_now();
    opdb_atomic_remove_inflight();
    /* (the commit itself runs with these signals held off) */
    if (state == OPDB_TXN_DONE) say("opdb: interrupted after the database was updated\n");
    else if (state == OPDB_TXN_STAGING) say("opdb: interrupted: nothing was changed\n");
    else say("opdb: interrupted: unfinished files removed\n");
    signal(sig, SIG_DFL);
    raise(sig);
}

/* A mapped database file another program shrank: the database keeps each
 * file old or new, as after any failed run. */
static void on_sigbus(int sig) {
    (void)sig;
    const char *path = opdb_file_view_mapped_path();
    say("opdb: ");
    say(path ? path : "a mapped file");
    say(": the file shrank while it was read (changed by another program?)\n");
    opdb_atomic_remove_inflight();
    _exit(1);
}

static void install(int sig, void (*fn)(int)) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = fn;
    sigemptyset(&sa.sa_mask);
    sigaction(sig, &sa, NULL);
}

void cli_install_signal_handlers(void) {
    install(SIGINT, on_fatal_signal);
    install(SIGTERM, on_fatal_signal);
    install(SIGHUP, on_fatal_signal);
    install(SIGBUS, on_sigbus);
}

static void on_oom(size_t n) {
    fprintf(stderr, "opdb: out of memory (allocating %zu bytes)\n", n);
    exit(1);
}

void cli_install_oom_handler(void) { opdb_set_oom_handler(on_oom); }

void cli_tune_heap_for_tables(void) {
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    mallopt(M_TRIM_THRESHOLD, 512 << 20);
}

/* Every environment variable opdb's library honours (it reads none itself). */
static const char *const k_settings[] = {
    "OPDB_DATA_ROOT",          /* the data root when --data-root is not given */
    "TMPDIR",                  /* where sorts that spill write their runs */
    "COLUMNS",                 /* the progress line's width off a terminal */
    "OPDB_JSON_MAX_BYTES", "OPDB_JSON_MAX_STRING", "OPDB_JSON_MAX_EVENTS", /* JSON input limits */
    "OPDB_REPLAY_REPEAT_COUNT", "MSMODELING_OP_REPLAY_REPEAT_COUNT",      /* samples per replayed row */
    "OPDB_CUDA_PLUGIN",        /* the CUDA backend module to load */
    /* set by MPI launchers: whether bench was started by one */
    "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "PMI_RANK", "PMI_SIZE",
    "MV2_COMM_WORLD_RANK", "MV2_COMM_WORLD_SIZE",
};

static const char *from_env(const char *name) {
    for (size_t i = 0; i < sizeof k_settings / sizeof k_settings[0]; i++)
        if (strcmp(name, k_settings[i]) == 0) return getenv(name);
    return NULL;
}

void cli_install_settings(void) { opdb_set_settings(from_env); }

static void print_note(void *ctx, const char *line) {
    (void)ctx;
    fprintf(stderr, "opdb: %s\n", line);
}

void cli_install_note_printer(void) { opdb_set_note_handler(print_note, NULL); }

opdb_modes cli_modes(void) {
    opdb_modes m = {0};
    const char *pipe = getenv("OPDB_TRACE_PIPELINE");
    if (pipe && strcmp(pipe, "1") == 0) m.trace_pipeline = 1;
    else if (pipe && strcmp(pipe, "0") == 0) m.trace_pipeline = -1;
    const char *fail = getenv("OPDB_TEST_FAIL_WRITE_AFTER");
    long after = fail && *fail ? strtol(fail, NULL, 10) : -1;
    if (after >= 0) m.fail_commit = after + 1;
    const char *pause = getenv("OPDB_TEST_COMMIT_PAUSE_US");
    if (pause) m.commit_pause_us = strtoul(pause, NULL, 10);
    return m;
}
