/* `opdb comm bench --backend nccl`: the table of functions the NCCL plugin
 * (libopdb_comm_nccl.so, nccl_plugin.c) gives the opdb-comm helper, which
 * dlopens it only for --backend nccl (nccl_loader.c), so no other run maps
 * libcudart or libnccl. The helper keeps MPI (bootstrap of each group's
 * NCCL communicator, barriers, reductions of timings) and the host buffers
 * it fills and checks; the plugin owns device memory and the collectives. */
#ifndef OPDB_COMM_MPI_NCCL_API_H
#define OPDB_COMM_MPI_NCCL_API_H

#include <stdbool.h>
#include <stddef.h>

#define OPDB_COMM_NCCL_ABI 1
#define OPDB_COMM_NCCL_ID_BYTES 128 /* NCCL_UNIQUE_ID_BYTES */
#define OPDB_COMM_NCCL_PLUGIN "libopdb_comm_nccl.so"

/* dtype codes */
enum { OPDB_NCCL_INT8, OPDB_NCCL_FP16, OPDB_NCCL_BF16, OPDB_NCCL_FP32 };

/* Every int function returns 0, or -1 with one line in msg. */
typedef struct opdb_comm_nccl_api {
    int abi;
    int (*devices)(int *n, char *msg, size_t cap);
    int (*unique_id)(void *id, char *msg, size_t cap);
    int (*comm_init)(void **comm, const void *id, int nranks, int rank, int device, char *msg, size_t cap);
    void (*comm_free)(void *comm);
    void *(*alloc)(size_t bytes); /* device memory, zeroed; NULL when it fails */
    void (*release)(void *p);
    int (*upload)(void *dev, const void *host, size_t bytes, char *msg, size_t cap);
    int (*download)(void *host, const void *dev, size_t bytes, char *msg, size_t cap);
    /* One collective (opdb_comm_op) on the communicator's stream, waited for.
     * count: elements per rank as NCCL counts them (all_to_all: per peer). */
    int (*run)(void *comm, int op, int dtype, const void *send, void *recv, size_t count, char *msg, size_t cap);
} opdb_comm_nccl_api;

/* The plugin's table, or NULL with the reason (no plugin in this build, or it cannot be loaded). */
const opdb_comm_nccl_api *opdb_comm_nccl_load(char *msg, size_t cap);

#endif
