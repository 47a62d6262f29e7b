/* One entry point per `opdb <command>`; each returns the process exit code. */
#ifndef OPDB_CLI_COMMANDS_H
#define OPDB_CLI_COMMANDS_H

#include <stddef.h>

int cmd_parse(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_update(int argc, char **argv);
int cmd_fia_fill(int argc, char **argv);
int cmd_validate(int argc, char **argv);
int cmd_aie(int argc, char **argv);
int cmd_trace2csv(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_m6(int argc, char **argv);
int cmd_shape_compare(int argc, char **argv);
int cmd_grid(int argc, char **argv);
int cmd_comm(int argc, char **argv);
int cmd_query(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_check(int argc, char **argv);
/* Path of the opdb-comm MPI helper (also run by `opdb bench` under mpirun); 0 when found. */
int cmd_comm_helper(char *out, size_t cap);

#endif
