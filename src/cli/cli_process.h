/* The process policy of opdb, which the library leaves to its program:
 * signal handlers (an interrupt or a mapped file shrunk by another program
 * ends the run with one line on stderr, after the library removed its
 * unfinished files), what out of memory does, and the heap's tuning. */
#ifndef OPDB_CLI_PROCESS_H
#define OPDB_CLI_PROCESS_H

#include "opdb/error.h"

/* SIGINT, SIGTERM, SIGHUP: remove the unfinished files, say so, die of the
 * signal.  SIGBUS (a mapped file shrunk while read): the same, naming the
 * file, and exit status 1. */
void cli_install_signal_handlers(void);
/* Out of memory anywhere in the library: "opdb: out of memory (allocating
 * N bytes)" on stderr and exit status 1 (a runtime failure). */
void cli_install_oom_handler(void);
/* For the commands that read whole database tables (update, bench): each
 * table allocates and frees tens of MB, kept in the heap instead of being
 * returned to the kernel, which zeroes it again next time. */
void cli_tune_heap_for_tables(void);
/* The library's named settings (opdb_setting) from this process's
 * environment, for the variables listed in cli_process.c only. */
void cli_install_settings(void);
/* The library's notes on stderr, each line after "opdb: ". */
void cli_install_note_printer(void);
/* The modes every command puts in its call's options, from the environment:
 * OPDB_TRACE_PIPELINE (1: a tokenizing thread, 0: none), and the test seams
 * OPDB_TEST_FAIL_WRITE_AFTER=N (the commit after N fails as if the disk
 * were full) and OPDB_TEST_COMMIT_PAUSE_US (a pause between a commit's
 * renames). */
opdb_modes cli_modes(void);

#endif
