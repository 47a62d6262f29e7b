/* Record-aligned batch streaming with a worker pool.
 *
 * The caller's thread reads the file in large blocks, cuts each at the last
 * line end outside quotes (quote parity), and hands batches to workers that
 * tokenize and extract them in parallel.  Results are consumed on the caller's
 * thread strictly in file order, so anything order-sensitive (first-seen
 * order, floating-point sums) is identical to a sequential run. */
#ifndef OPDB_CSV_BATCH_H
#define OPDB_CSV_BATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "opdb/core.h"

/* Readable bytes after data[len] in every batch (not part of the batch):
 * a cell's number can be loaded 16 bytes at a time. */
#define OPDB_BATCH_PAD 16

typedef struct opdb_batch {
    char *data;          /* record-aligned bytes, OPDB_BATCH_PAD more readable; workers may rewrite them in place */
    size_t len, cap;     /* cap 0: a piece of the mapped file, else a buffer of cap + OPDB_BATCH_PAD bytes */
    uint64_t file_off;   /* file offset of data[0] */
    bool anomaly;        /* set by `work` when the fast path cannot decide */
    void *out;           /* per-slot output owned by the ops, reused across batches */
} opdb_batch;

typedef struct opdb_batch_ops {
    void *(*new_out)(void *ctx);
    void (*free_out)(void *out, void *ctx);
    /* Worker thread: decode b->data into b->out (or set b->anomaly). */
    void (*work)(opdb_batch *b, void *ctx);
    /* Caller thread, file order. Non-zero stops the run (err set). */
    int (*consume)(opdb_batch *b, void *ctx, opdb_err *err);
    void *ctx;
} opdb_batch_ops;

/* Streams fd from offset `start` to EOF: a regular file is mapped and cut
 * into batches in place (opdb_file_view_map; path names it in errors),
 * anything else is read() into batch buffers.  Returns 0 when every batch
 * was consumed, 1 when a batch was anomalous (nothing of it consumed;
 * *resume_off is its offset, a record start), -1 on error. */
int opdb_batch_run(int fd, const char *path, uint64_t start, int nthreads, size_t batch_size,
                   const opdb_batch_ops *ops, uint64_t *resume_off, opdb_err *err);

/* Offset just past the last line end outside quotes in buf[0..n), given that
 * buf starts outside quotes; 0 if there is none. Exposed for tests. */
size_t opdb_batch_cut(const char *buf, size_t n);

#endif
