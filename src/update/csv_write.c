/* See csv_write.h. */
#include "update/csv_write.h"

#include <stdlib.h>
#include <string.h>

#include "update/op_summary.h"
#include "update/prefetch.h"

/* A lazy row with a patch, as rendering it would write it: its bytes with
 * the measured cells replaced (every other cell is written as read, which
 * raw_ok says is how the writer renders it). */
static void write_spliced(opdb_strbuf *out, db_lazy_table *f, size_t ri) {
    const db_drow *row = &f->rows[ri];
    const row_patch *p = &f->patch[ri];
    const kset_ids *lk = p->lk;
    const char *rec = f->buf + row->raw_off, *run = rec;
    opdb_csv_fast t;
    opdb_csv_fast_init(&t, (char *)rec, row->raw_len);
    int nc = 0, want = lk->nsplice ? lk->splice_col[lk->nsplice - 1] + 1 : 1; /* cells up to the last measured one */
    size_t off;
    bool quote_after;
    if (opdb_csv_fast_skim(&t, f->scratch, want, &nc, &off, &quote_after) <= 0) nc = 0;
    /* room for the row and its longest values: the pieces are copied unchecked */
    opdb_sb_reserve(out, row->raw_len + (size_t)lk->nsplice * 400);
    char *o = out->p + out->n;
    char buf[400];
    for (int k = 0; k < lk->nsplice; k++) {
        int i = lk->splice_col[k];
        if (i >= nc) break; /* a short row */
        opdb_span v = agg_span(p->nr, lk->splice_li[k], buf);
        size_t gap = (size_t)(f->scratch[i].p - run);
        memcpy(o, run, gap);
        memcpy(o + gap, v.p, v.n); /* a number ("%.6f", nan, inf) or "": never quoted */
        o += gap + v.n;
        run = f->scratch[i].p + f->scratch[i].n;
    }
    size_t rest = (size_t)(rec + row->raw_len - run);
    memcpy(o, run, rest);
    out->n = (size_t)(o + rest - out->p);
}

/* A run of bytes copied as read: long ones go to the file directly, short
 * ones through the buffer. */
static void put_run(opdb_atomic_file *af, const char *p, size_t n) {
    if (n >= ((size_t)64 << 10)) {
        opdb_atomic_append_direct(af, p, n);
        return;
    }
    opdb_sb_add(&af->buf, p, n);
    if (af->buf.n > (1u << 20)) opdb_atomic_flush(af);
}

/* Renders the kept rows into the file through its buffer, flushing every
 * MiB so no whole-file copy is held in memory. */
void write_rows(opdb_atomic_file *af, const opdb_strvec *cols, db_lazy_table *f, const bool *keep) {
    opdb_strbuf *out = &af->buf;
    opdb_sb_reserve(out, (1u << 20) + (64u << 10)); /* flushed past 1 MiB: never grown by copying */
    size_t nc = cols->n;
    opdb_span *cells = opdb_xmalloc((nc + 1) * sizeof *cells);
    int *id = opdb_xmalloc((nc + 1) * sizeof *id);
    for (size_t i = 0; i < nc; i++) {
        cells[i] = opdb_span_cstr(cols->v[i]);
        id[i] = db_ks_find(&f->ks, cols->v[i]);
    }
    opdb_csv_write_record(out, cells, nc);
    /* rows copied as read only when the columns are the file's own */
    bool same_columns = f->buf && nc == f->fields.n;
    for (size_t i = 0; i < nc && same_columns; i++) same_columns = strcmp(cols->v[i], f->fields.v[i]) == 0;
    /* a patched row's values are far away: its aggregated row is asked for
     * 64 rows ahead, the metric sums that row points at 32 rows ahead (most
     * rows are copied as read, in a fraction of a memory access's time) */
    enum { AHEAD = WRITE_PF_AHEAD };
    size_t run_off = 0, run_len = 0; /* rows to copy as read, not yet written */
    const row_patch *patch = f->patch;
    size_t npatch = f->npatch; /* rows added later have none */
    for (size_t r = 0; r < f->n; r++) {
        if (r + 2 * AHEAD < npatch && patch[r + 2 * AHEAD].nr) __builtin_prefetch(patch[r + 2 * AHEAD].nr);
        if (r + AHEAD < npatch && patch[r + AHEAD].nr) {
            for (int h = 0; h < 2; h++) {
                const double *ms = patch[r + AHEAD].nr->half[h];
                if (ms) __builtin_prefetch(ms), __builtin_prefetch((const char *)ms + 64);
            }
        }
        if (!keep[r]) continue;
        const db_drow *row = &f->rows[r];
        bool patched = row->lazy && f->patch[r].nr;
        if (same_columns && row->raw_ok && !row->dirty && !patched) {
            /* rows copied as read, back to back in the file: one run */
            if (run_len && row->raw_off != run_off + run_len) {
                put_run(af, f->buf + run_off, run_len);
                run_len = 0;
            }
            if (!run_len) run_off = row->raw_off;
            run_len += row->raw_len;
            continue;
        }
        if (run_len) {
            put_run(af, f->buf + run_off, run_len);
            run_len = 0;
        }
        if (same_columns && row->raw_ok && !row->dirty) {
            write_spliced(out, f, r);
            if (out->n > (1u << 20)) opdb_atomic_flush(af);
            continue;
        }
        row = row_mut(f, r);
        for (size_t i = 0; i < nc; i++) cells[i] = db_drow_at(row, id[i]);
        opdb_csv_write_record(out, cells, nc);
        if (out->n > (1u << 20)) opdb_atomic_flush(af);
    }
    if (run_len) put_run(af, f->buf + run_off, run_len);
    free(id);
    free(cells);
}
