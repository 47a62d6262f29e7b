/* A 30-character `[###---]` bar redrawn with \r, like the reference tools,
 * but on stderr and only on a TTY so that logs and pipes stay clean. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "opdb/progress.h"

void opdb_progress_init(opdb_progress *p, bool force_off) {
    memset(p, 0, sizeof *p);
    p->enabled = !force_off && isatty(STDERR_FILENO);
    p->last_permille = -1;
}

void opdb_progress_stage(opdb_progress *p, const char *stage, uint64_t total) {
    p->stage = stage;
    p->total = total;
    p->last_permille = -1;
}

void opdb_progress_update(opdb_progress *p, uint64_t current, const char *detail) {
    if (!p->enabled) return;
    int permille = p->total ? (int)(current * 1000 / p->total) : 1000;
    if (permille > 1000) permille = 1000;
    if (permille == p->last_permille) return;
    p->last_permille = permille;
    char bar[31];
    int filled = permille * 30 / 1000;
    for (int i = 0; i < 30; i++) bar[i] = i < filled ? '#' : '-';
    bar[30] = '\0';
    fprintf(stderr, "\r%s [%s] %llu/%llu%s%.60s\033[K", p->stage, bar, (unsigned long long)current,
            (unsigned long long)p->total, detail ? " | " : "", detail ? detail : "");
    fflush(stderr);
}

void opdb_progress_clear(opdb_progress *p) {
    if (!p->enabled) return;
    fputs("\r\033[K", stderr);
    fflush(stderr);
}
