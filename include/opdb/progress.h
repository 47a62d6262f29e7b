/* Progress bars on stderr, drawn only when stderr is a terminal. */
#ifndef OPDB_PROGRESS_H
#define OPDB_PROGRESS_H

#include "opdb/api.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct opdb_progress {
    bool enabled;
    const char *stage;
    uint64_t total;
    int last_permille;
    bool bytes;     /* the stage counts bytes: shown as MB and MB/s */
    double start;   /* monotonic seconds at the stage's start */
    void (*sink)(void *ctx, const char *line); /* the call's progress callback (opdb_log), or NULL: stderr */
    void *sink_ctx;
} opdb_progress;

/* The width of stderr's terminal; 80 when stderr is not one. */
OPDB_API int opdb_progress_width(void);
/* enabled = isatty(stderr), or the calling call's opdb_log has a progress
 * callback (lines then go there), unless force_off. */
OPDB_API void opdb_progress_init(opdb_progress *p, bool force_off);
OPDB_API void opdb_progress_stage(opdb_progress *p, const char *stage, uint64_t total);
/* A stage counting bytes (shown in MB with a MB/s rate). */
OPDB_API void opdb_progress_stage_bytes(opdb_progress *p, const char *stage, uint64_t total);
/* The line drawn for `current` after `elapsed` seconds on a `width`-column
 * terminal: at most width - 1 bytes (so it never wraps). */
OPDB_API void opdb_progress_format(const opdb_progress *p, uint64_t current, const char *detail, double elapsed, int width,
                          char *line, size_t cap);
OPDB_API void opdb_progress_update(opdb_progress *p, uint64_t current, const char *detail);
OPDB_API void opdb_progress_clear(opdb_progress *p);

#ifdef __cplusplus
}
#endif
#endif
