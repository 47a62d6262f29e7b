/* See bench_rows.h. Per-row lines go to the options' err_out (progress,
 * timings); the status summary and the report go to the output stream. */
#include "replay/bench_rows.h"

#include <math.h>
#include <stdint.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opdb/schema.h"

op_status *bench_status(bench_ctx *c, const char *op) {
    for (size_t i = 0; i < c->nst; i++)
        if (strcmp(c->st[i].op, op) == 0) return &c->st[i];
    c->st = opdb_xrealloc(c->st, (c->nst + 1) * sizeof *c->st);
    op_status *s = &c->st[c->nst++];
    memset(s, 0, sizeof *s);
    s->op = opdb_xstrdup(op);
    return s;
}

void bench_skip_op(bench_ctx *c, op_status *s, const char *reason) {
    (void)c;
    s->kind = ST_SKIPPED;
    free(s->reason);
    s->reason = opdb_xstrdup(reason);
}

static void first_failure(op_status *s, const bench_row *r, const char *msg) {
    if (s->reason) return;
    size_t n = strlen(r->csv) + strlen(msg) + 32;
    s->reason = opdb_xmalloc(n);
    snprintf(s->reason, n, "%s:%ld %s", r->csv, r->line, msg);
}

void bench_say(const bench_ctx *c, const char *fmt, ...) {
    if (!c->o->err_out) return;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(c->o->err_out, fmt, ap);
    va_end(ap);
}

static void fmt_num(char *buf, size_t n, double v, int digits) { snprintf(buf, n, "%.*f", digits, v); }

/* The samples kept for key (c->sig) from earlier passes; created on demand. */
static row_samples *samples_of(bench_ctx *c, bool create) {
    const char *key = c->sig.p ? c->sig.p : "";
    uint64_t h = opdb_hash_bytes(key, strlen(key), 5);
    uint32_t i;
    for (opdb_hprobe pr = opdb_hindex_probe(&c->acc_ix, h); opdb_hprobe_next(&pr, &i);)
        if (strcmp(c->acc[i].key, key) == 0) return &c->acc[i];
    if (!create) return NULL;
    OPDB_ALLOC_GROW(c->acc, c->nacc + 1, c->capacc);
    row_samples *rs = &c->acc[c->nacc];
    memset(rs, 0, sizeof *rs);
    rs->key = opdb_xstrdup(key);
    opdb_hindex_add(&c->acc_ix, h, (uint32_t)c->nacc++);
    return rs;
}

static void samples_add(row_samples *rs, const double *v, size_t n) {
    OPDB_ALLOC_GROW(rs->v, rs->n + n, rs->cap);
    memcpy(rs->v + rs->n, v, n * sizeof *v);
    rs->n += n;
}

void bench_samples_free(bench_ctx *c) {
    for (size_t i = 0; i < c->nacc; i++) {
        free(c->acc[i].key);
        free(c->acc[i].v);
    }
    free(c->acc);
    opdb_hindex_free(&c->acc_ix);
}

/* plan -> prepare -> measure -> release; fills the journal record's measured cells. */
static int measure_row(bench_ctx *c, const opdb_op_def *def, const char *stem, const bench_row *r, char num[10 + 2][64],
                       opdb_measure_result *res, opdb_err *err) {
    opdb_replay_row row = {stem, bench_row_cell_cb, (void *)r, c->o->quirks};
    opdb_op_problem *p = opdb_xcalloc(1, sizeof *p);
    int rc = def->plan(&row, p, err);
    if (rc == 0) rc = bench_check_budget(c, p, err);
    void *inst = NULL;
    if (rc == 0) rc = c->b->prepare(c->b, def, p, opdb_hash_bytes(c->sig.p, c->sig.n, 11), &inst, err);
    if (rc == 0) {
        rc = opdb_measure(c->b, inst, &c->m, res, err);
        c->b->release(c->b, inst);
    }
    if (rc == 0 && c->nrounds > 1) {
        /* every pass's samples: the statistics are over all of them */
        row_samples *rs = samples_of(c, true);
        samples_add(rs, res->samples, res->st.n);
        free(res->samples);
        res->samples = NULL;
        if (c->round == c->nrounds) {
            double *all = opdb_xmalloc(rs->n * sizeof *all);
            memcpy(all, rs->v, rs->n * sizeof *all);
            opdb_sample_stats_of(all, rs->n, &res->st);
            free(all);
        }
    }
    if (rc == 0) {
        const opdb_sample_stats *s = &res->st;
        fmt_num(num[0], 64, s->min, 6);
        fmt_num(num[1], 64, s->median, 6);
        fmt_num(num[2], 64, s->p20, 6);
        fmt_num(num[3], 64, s->p80, 6);
        fmt_num(num[4], 64, s->rsd_pct, 4);
        snprintf(num[5], 64, "%zu", s->n);
        fmt_num(num[6], 64, s->min > 0 ? p->flops / s->min * 1e-3 : 0.0, 3);
        fmt_num(num[7], 64, s->min > 0 ? p->bytes / s->min * 1e-3 : 0.0, 3);
        /* too few samples for an interval: empty cells */
        if (!isnan(s->ci_lo)) fmt_num(num[8], 64, s->ci_lo, 6);
        if (!isnan(s->ci_hi)) fmt_num(num[9], 64, s->ci_hi, 6);
    }
    free(p);
    return rc;
}

/* "[OK] <csv>:<line> <shapes> median=<us> ±<ci%> n=<n>", the shapes cut
 * with "..." so that the line fits the terminal width (80 when not a TTY). */
static void ok_line(bench_ctx *c, const bench_row *r, const char *shapes, const opdb_measure_result *res, bool fixed) {
    const opdb_sample_stats *s = &res->st;
    char head[256], tail[128], ci[32] = "";
    snprintf(head, sizeof head, "[OK] %s:%ld ", r->csv, r->line);
    if (!isnan(s->ci_lo) && s->median > 0)
        snprintf(ci, sizeof ci, " +-%.2f%%", (s->ci_hi - s->ci_lo) / 2 / s->median * 100);
    snprintf(tail, sizeof tail, " median=%.4gus%s n=%zu%s", s->median, ci, s->n,
             fixed || res->stop_rule_met ? "" : " TIMEOUT");
    size_t width = c->width > 0 ? (size_t)c->width : 80, hl = strlen(head), tl = strlen(tail), sl = strlen(shapes);
    size_t room = width > hl + tl ? width - hl - tl : 0;
    if (sl <= room) bench_say(c, "%s%s%s\n", head, shapes, tail);
    else if (room > 3) bench_say(c, "%s%.*s...%s\n", head, (int)(room - 3), shapes, tail);
    else bench_say(c, "%.*s%s\n", (int)(hl - 1), head, tail); /* no room for the shapes */
}

/* The progress line (a terminal only) while row r is measured: rows done of
 * all passes, this row, rate and ETA; cleared before the row's own line. */
static void progress_row(bench_ctx *c, const bench_row *r) {
    char detail[300];
    snprintf(detail, sizeof detail, "%s:%ld", r->csv, r->line);
    c->prog.last_permille = -1; /* redraw for every row, not only at each 0.1% */
    opdb_progress_update(&c->prog, c->started - 1, detail);
}

static bool sharded(const bench_ctx *c) { return c->o->shard_count > 1; }

/* A journaled row's outcome: counts, the circuit breaker, --fail-fast. */
static void outcome(bench_ctx *c, op_status *s, const char *stem, const bench_row *r, bool ok, const char *msg) {
    if (ok) {
        s->measured++;
        s->consecutive = 0;
        return;
    }
    s->failed++;
    s->consecutive++;
    first_failure(s, r, msg);
    if (s->consecutive == OPDB_BENCH_BREAKER && !(sharded(c) && c->o->shard_rank >= 0))
        bench_say(c, "[BREAKER] %s: %d consecutive failures; skipping its remaining rows\n", stem, OPDB_BENCH_BREAKER);
    if (c->o->fail_fast) c->stop = true;
}

/* Merge of MPI ranks: row r (ordinal ord) as rank ord % count journaled it,
 * appended to this run's journal in row order, as one run would have. */
static int merge_row(bench_ctx *c, op_status *s, const char *stem, const bench_row *r, long ord, opdb_err *err) {
    const jrec *m = journal_find(&c->shards[ord % c->o->shard_count], stem, c->sig.p ? c->sig.p : "");
    if (!m) {
        s->unmeasured++;
        return 0;
    }
    const char *f[J_N];
    for (int i = 0; i < J_N; i++) f[i] = m->f[i];
    char line[32];
    snprintf(line, sizeof line, "%ld", r->line);
    f[J_ROW] = line;
    bool ok = strcmp(m->f[J_STATUS], "ok") == 0;
    c->unconverged += ok && strcmp(m->f[J_CONVERGED], "no") == 0;
    outcome(c, s, stem, r, ok, m->f[J_ERROR]);
    return journal_append(&c->j, f, err);
}

int bench_one_row(bench_ctx *c, const char *stem, const opdb_op_def *def, const bench_row *r, opdb_err *err) {
    op_status *s = bench_status(c, stem);
    long ord = c->ordinal++;
    if (sharded(c) && c->o->shard_rank >= 0 && ord % c->o->shard_count != c->o->shard_rank) return 0;
    const char *cells[OPDB_NKEY_COLS];
    for (int i = 0; i < OPDB_NKEY_COLS; i++) cells[i] = bench_row_cell(r, opdb_key_cols[i]);
    journal_sig(stem, cells, &c->sig);
    if (c->o->plan_only) {
        bench_plan_row(c, def, stem, r, cells, samples_of(c, false) != NULL);
        samples_of(c, true);
        return 0;
    }
    if (c->counting) {
        c->total++;
        return 0;
    }
    c->started++;
    const jrec *done = journal_find(&c->j, stem, c->sig.p ? c->sig.p : "");
    if (done) {
        bool ok = strcmp(done->f[J_STATUS], "ok") == 0;
        bool earlier = (size_t)(done - c->j.r) < c->nloaded;
        bench_say(c, "[%s] %s:%ld %s (%s)\n", earlier ? "RESUME" : "SAME", r->csv, r->line,
                earlier ? "already in the journal" : "same signature as an earlier row", ok ? "ok" : "failed");
        s->reused++;
        if (ok) {
            s->measured++;
        } else {
            s->failed++;
            first_failure(s, r, done->f[J_ERROR]);
        }
        return 0;
    }
    if (c->round < c->nrounds) { /* an earlier pass: measure and keep the samples, nothing else */
        if (done || s->consecutive >= OPDB_BENCH_BREAKER) return 0;
        char num[10 + 2][64] = {{0}};
        opdb_measure_result res;
        opdb_err rerr;
        opdb_err_clear(&rerr);
        progress_row(c, r);
        int mrc = measure_row(c, def, stem, r, num, &res, &rerr);
        opdb_progress_clear(&c->prog);
        if (mrc == 0)
            bench_say(c, "[PASS %d/%d] %s:%ld shapes=%s min=%sus n=%s\n", c->round, c->nrounds, r->csv, r->line,
                    cells[2], num[0], num[5]);
        return 0; /* a failure is measured again, and reported, in the last pass */
    }
    /* an MPI rank cannot see the other ranks' failures: the merge applies the breaker, in row order */
    if (s->consecutive >= OPDB_BENCH_BREAKER && !(sharded(c) && c->o->shard_rank >= 0)) {
        bench_say(c, "[SKIP] %s:%ld circuit breaker open for %s\n", r->csv, r->line, stem);
        s->skipped++;
        return 0;
    }
    if (sharded(c) && c->o->shard_rank == OPDB_BENCH_SHARD_MERGE) return merge_row(c, s, stem, r, ord, err);
    char num[10 + 2][64] = {{0}};
    opdb_measure_result res;
    opdb_err rerr;
    opdb_err_clear(&rerr);
    progress_row(c, r);
    int rc = measure_row(c, def, stem, r, num, &res, &rerr);
    opdb_progress_clear(&c->prog);
    const char *f[J_N] = {0};
    char line[32];
    snprintf(line, sizeof line, "%ld", r->line);
    f[J_CSV] = stem;
    f[J_ROW] = line;
    for (int i = 0; i < 9; i++) f[J_CELL0 + i] = cells[i];
    f[J_BACKEND] = c->backend_cell;
    if (rc == 0) {
        f[J_STATUS] = "ok";
        const int at[10] = {J_MIN, J_MEDIAN, J_P20, J_P80, J_RSD, J_SAMPLES, J_GFLOPS, J_GBS, J_CI_LO, J_CI_HI};
        for (int i = 0; i < 10; i++) f[at[i]] = num[i];
        f[J_CACHE] = c->o->measure.hot_cache ? "hot" : "cold";
        const bool fixed = c->o->measure.repeat_count > 0;
        f[J_CONVERGED] = fixed ? "fixed" : res.stop_rule_met ? "yes" : "no";
        c->unconverged += !fixed && !res.stop_rule_met;
        outcome(c, s, stem, r, true, NULL);
        ok_line(c, r, cells[2], &res, fixed);
    } else {
        f[J_STATUS] = "failed";
        f[J_ERROR] = rerr.msg;
        bench_say(c, "[FAIL] %s:%ld %s %s -> %s error=%s\n", r->csv, r->line, cells[3], cells[2], cells[5], rerr.msg);
        outcome(c, s, stem, r, false, rerr.msg);
    }
    return journal_append(&c->j, f, err);
}
