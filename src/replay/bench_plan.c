/* opdb bench --plan: each selected row is planned, prepared and piloted
 * (one warm execution, then a few samples taken as the stop rule takes
 * them, evictions included), and its time is estimated from the pilot with
 * opdb_measure_estimate_s. Nothing is journaled or written. A model without
 * a pilot missed the evictions (about 10 ms per sample on a loaded 2-core
 * host) and how many samples a noisy row needs, and was 5x under.
 * A row whose buffers exceed the pilot budget is not piloted (the pilot
 * would allocate and fill them all): it gets the model estimate, and its
 * line says so. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replay/bench_rows.h"

/* A pilot's samples: at least PILOT_MIN, then until PILOT_S have passed, at most PILOT_MAX. */
#define PILOT_MIN 5
#define PILOT_MAX 24
#define PILOT_S 0.15

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median_of(double *v, size_t n) {
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* 1.4826 * median |x - median| / median: the standard deviation's robust
 * stand-in, not thrown by the odd preempted sample. */
static double robust_spread(const double *us, size_t n, double *median) {
    double v[PILOT_MAX];
    memcpy(v, us, n * sizeof *v);
    double med = *median = median_of(v, n);
    if (med <= 0) return 0;
    for (size_t i = 0; i < n; i++) v[i] = fabs(us[i] - med);
    return 1.4826 * median_of(v, n) / med;
}

static int pilot(bench_ctx *c, const opdb_op_def *def, const opdb_op_problem *p, opdb_pilot *pl, double *median_us,
                 opdb_err *err) {
    opdb_backend *b = c->b;
    memset(pl, 0, sizeof *pl);
    double t0 = opdb_now_s();
    void *inst = NULL;
    if (b->prepare(b, def, p, opdb_hash_bytes(c->sig.p, c->sig.n, 11), &inst, err)) return -1;
    double t1 = opdb_now_s(), us;
    int rc = b->run(b, inst, &us, err);
    pl->run_s = opdb_now_s() - t1;
    double v[PILOT_MAX], flush_s = 0, ts = opdb_now_s();
    size_t n = 0;
    while (rc == 0 && n < PILOT_MAX && (n < PILOT_MIN || opdb_now_s() - ts < PILOT_S)) {
        double f0 = opdb_now_s();
        if (!c->o->measure.hot_cache && b->flush_cache) b->flush_cache(b);
        flush_s += opdb_now_s() - f0;
        rc = b->run(b, inst, &v[n++], err);
    }
    double sampling = opdb_now_s() - ts, t2 = opdb_now_s();
    b->release(b, inst);
    pl->setup_s = (t1 - t0) + (opdb_now_s() - t2);
    if (rc) return -1;
    /* an estimate-only CPU backend sweeps a smaller buffer: price the real one */
    double scale = b->flush_scale > 0 ? b->flush_scale : 1.0;
    pl->sample_s = (sampling + flush_s * (scale - 1)) / (double)n;
    pl->spread = robust_spread(v, n, median_us);
    return 0;
}

/* The model for a row too large to pilot: one execution streams its bytes
 * at MODEL_BYTES_PER_S or does its FLOPs at MODEL_FLOPS_PER_S, whichever is
 * slower; preparing fills the buffers at MODEL_FILL_BYTES_PER_S; an eviction
 * costs MODEL_FLUSH_S; the spread is taken as MODEL_SPREAD. Rough figures,
 * from pilots of gigabyte rows on a loaded 2-core host (1.2-5 GB/s streamed,
 * 0.1-0.8 GB/s filled, 7-22 % spread, so such rows mostly run to the
 * timeout): meant to size the row, not to time it. */
#define MODEL_BYTES_PER_S 1.5e9
#define MODEL_FLOPS_PER_S 2e10
#define MODEL_FILL_BYTES_PER_S 2.5e8
#define MODEL_FLUSH_S 0.01
#define MODEL_SPREAD 0.1

static const char *size_text(char *buf, size_t cap, size_t bytes) {
    if (bytes < ((size_t)1 << 20)) snprintf(buf, cap, "%zu bytes", bytes);
    else snprintf(buf, cap, "%.0f MiB", (double)bytes / (1 << 20));
    return buf;
}

static void model(const bench_ctx *c, const opdb_op_problem *p, size_t bytes, opdb_pilot *pl) {
    memset(pl, 0, sizeof *pl);
    pl->run_s = fmax((double)bytes / MODEL_BYTES_PER_S, p->flops / MODEL_FLOPS_PER_S);
    pl->setup_s = (double)bytes / MODEL_FILL_BYTES_PER_S;
    pl->sample_s = pl->run_s + (c->o->measure.hot_cache ? 0 : MODEL_FLUSH_S);
    pl->spread = MODEL_SPREAD;
}

void bench_plan_row(bench_ctx *c, const opdb_op_def *def, const char *stem, const bench_row *r, const char *const *cells,
                    bool repeat) {
    const opdb_measure_opts *m = &c->o->measure;
    int passes = m->repeat_count > 0 ? 1 : (c->o->rounds > 1 ? c->o->rounds : 1);
    if (repeat) { /* the real run reuses the measurement of an earlier row with this signature */
        fprintf(c->o->out, "[PLAN] %s:%ld %s %s -> %s: same signature as an earlier row, not measured again\n", r->csv,
                r->line, cells[3], cells[2], cells[5]);
        return;
    }
    opdb_replay_row row = {stem, bench_row_cell_cb, (void *)r, c->o->quirks};
    opdb_op_problem *p = opdb_xcalloc(1, sizeof *p);
    opdb_err e;
    opdb_err_clear(&e);
    opdb_pilot pl;
    double med = 0;
    int rc = def->plan(&row, p, &e);
    if (rc == 0) rc = bench_check_budget(c, p, &e);
    size_t bytes = rc == 0 ? opdb_problem_buffer_bytes(p) : 0;
    size_t pilot_max = c->o->plan_pilot_memory ? c->o->plan_pilot_memory : OPDB_BENCH_PILOT_MEMORY;
    bool modelled = rc == 0 && bytes > pilot_max;
    if (modelled) model(c, p, bytes, &pl);
    else if (rc == 0) rc = pilot(c, def, p, &pl, &med, &e);
    if (rc) {
        fprintf(c->o->out, "[PLAN] %s:%ld %s %s -> %s: cannot replay: %s\n", r->csv, r->line, cells[3], cells[2], cells[5],
                e.msg);
    } else {
        double about = opdb_measure_estimate_s(m, &pl, passes);
        double hi = m->repeat_count > 0 ? about : passes * (pl.setup_s + m->timeout_s / passes + pl.sample_s);
        c->plan_lo_s += about;
        c->plan_hi_s += hi;
        c->planned++;
        if (modelled) {
            c->modelled++;
            char need[48], max[48];
            fprintf(c->o->out, "[PLAN] %s:%ld %s %s -> %s: %.3g GFLOP, %.3g MB; model estimate (buffers of %s, over "
                               "the pilot budget of %s): about %.2f s (at most %.2f s)\n",
                    r->csv, r->line, cells[3], cells[2], cells[5], p->flops * 1e-9, p->bytes * 1e-6,
                    size_text(need, sizeof need, bytes), size_text(max, sizeof max, pilot_max), about, hi);
        } else {
            fprintf(c->o->out, "[PLAN] %s:%ld %s %s -> %s: %.3g GFLOP, %.3g MB; pilot median %.4g us +-%.1f%%; about %.2f s (at most %.2f s)\n",
                    r->csv, r->line, cells[3], cells[2], cells[5], p->flops * 1e-9, p->bytes * 1e-6, med,
                    pl.spread * 100, about, hi);
        }
    }
    free(p);
}
