/* opdb diff's tables, shared by its loader, its pairing and its reports. */
#ifndef OPDB_DIFF_INTERNAL_H
#define OPDB_DIFF_INTERNAL_H

#include <stdint.h>

#include "opdb/core.h"
#include "opdb/diff.h"

/* What the consumer sees of a row identity on one side (docs/DIFF.md). */
typedef enum dstatus { DS_VISIBLE, DS_ZERO, DS_INVISIBLE, DS_CONFLICT } dstatus;

typedef struct dgroup {
    char *sig;
    uint64_t hash;
    unsigned long long line; /* the representative row: first visible, else first */
    char *display;
    dstatus status;
    double lat;
    bool has_stats;
    double n, mean, var; /* Profiling Count, Average, sample variance */
    bool paired;
    double explain_us; /* latency of the weights' results that name this identity's rows */
} dgroup;

typedef struct dtable {
    char *kernel_type;
    dgroup *g;
    size_t n, cap;
    opdb_hindex ix;
    uint32_t *by_line; /* physical line -> group index + 1 (0: no row starts there) */
    size_t nby_line;
} dtable;

typedef struct dside {
    dtable *t;
    size_t n;
} dside;

/* Reads every database table (*.csv) directly in dir. */
int diff_load_side(const char *dir, dside *s, const opdb_diff_options *o, opdb_err *err);
void diff_free_side(dside *s);
dgroup *diff_find(const dtable *t, const char *sig, uint64_t hash);
void diff_warn(const opdb_diff_options *o, const char *fmt, ...) OPDB_PRINTF(2, 3);

typedef struct dchange {
    size_t kt; /* index into dreport.kts */
    opdb_diff_verdict v;
    const dgroup *old, *new_;
    double ratio, p; /* NAN when not computed */
} dchange;

typedef struct dkt {
    const char *name;
    size_t rows, compared;
    size_t count[OPDB_DIFF_NVERDICTS];
    double median; /* NAN without compared rows */
    bool offset;
    double weight, predicted; /* NAN without weights */
} dkt;

typedef struct dreport {
    const char *old_dir, *new_dir;
    const opdb_diff_options *o;
    dkt *kts;
    size_t nkts;
    dchange *ch;
    size_t nch;
    opdb_diff_result *res;
    double weights_total;
    size_t weights_lines;
} dreport;

void diff_write_markdown(const dreport *r, FILE *out);
void diff_write_json(const dreport *r, FILE *out);
int diff_write_html(const dreport *r, const char *path, opdb_err *err);
/* Formatting shared by the reports. */
void diff_fmt_side(const dgroup *g, char *buf, size_t cap);
const char *diff_status_name(dstatus s);

#endif
