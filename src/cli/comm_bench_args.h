/* `opdb comm bench` flags, shared by `opdb` and the `opdb-comm` helper. */
#ifndef OPDB_CLI_COMM_BENCH_ARGS_H
#define OPDB_CLI_COMM_BENCH_ARGS_H

#include "opdb/comm.h"

/* Fills o (opdb_comm_bench_opts_init first) from `opdb comm bench` flags
 * (argv[0] is the command name). Returns 0, 1 for -h/--help (the caller
 * prints the help) or 2 for a usage error (printed on stderr). */
int cli_comm_bench_parse(int argc, char **argv, opdb_comm_bench_opts *o);

#endif
