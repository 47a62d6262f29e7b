/* Progress bars on stderr, drawn only when stderr is a terminal. */
#ifndef OPDB_PROGRESS_H
#define OPDB_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct opdb_progress {
    bool enabled;
    const char *stage;
    uint64_t total;
    int last_permille;
} opdb_progress;

/* enabled = isatty(stderr) unless force_off. */
void opdb_progress_init(opdb_progress *p, bool force_off);
void opdb_progress_stage(opdb_progress *p, const char *stage, uint64_t total);
void opdb_progress_update(opdb_progress *p, uint64_t current, const char *detail);
void opdb_progress_clear(opdb_progress *p);

#ifdef __cplusplus
}
#endif
#endif
