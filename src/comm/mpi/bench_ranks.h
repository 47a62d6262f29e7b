/* `mpirun -np N opdb bench ...`: the part of the opdb-comm helper that
 * shards a database's rows over the ranks (see bench_ranks.c). */
#ifndef OPDB_COMM_MPI_BENCH_RANKS_H
#define OPDB_COMM_MPI_BENCH_RANKS_H

/* argv: opdb-comm --bench-ranks OPDB bench ARGS... ; returns the exit code. */
int opdb_comm_bench_ranks(int argc, char **argv);

#endif
