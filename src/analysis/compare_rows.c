/* Rows of `compare` (docs/ANALYSIS.md §2.6) and their two text forms (§2.7):
 * the console table and the JSON document. Values that the reference keeps
 * as the integer 0 stay integers (JSON `0`, not `0.0`). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "opdb/compare.h"
#include "opdb/json_writer.h"
#include "opdb/pyround.h"
#include "opdb/pystr.h"

#define TC_UNMODELED "TC\xe6\x9c\xaa\xe5\xbb\xba\xe6\xa8\xa1" /* TC未建模 */

static opdb_cmp_num num_int0(void) {
    opdb_cmp_num n = {0.0, true};
    return n;
}

static opdb_cmp_num num_float(double v) {
    opdb_cmp_num n = {v, false};
    return n;
}

/* round(x, 1): an int stays an int */
static opdb_cmp_num round1(opdb_cmp_num x) { return x.is_int ? x : num_float(opdb_py_roundn(x.v, 1)); }

static int kt_cmp(const void *a, const void *b) {
    const opdb_cmp_stat *x = *(opdb_cmp_stat *const *)a, *y = *(opdb_cmp_stat *const *)b;
    size_t n = x->ktlen < y->ktlen ? x->ktlen : y->ktlen;
    int c = memcmp(x->kt, y->kt, n); /* UTF-8 byte order is code-point order */
    return c ? c : (x->ktlen > y->ktlen) - (x->ktlen < y->ktlen);
}

/* Python max(a, b): a unless b > a */
static double sort_key(const opdb_cmp_row *r) {
    return r->prof_per_fwd.v > r->tc_total.v ? r->prof_per_fwd.v : r->tc_total.v;
}

/* Stable merge sort, descending by key (sorted(..., reverse=True) keeps the
 * order of equal keys, which here is the kernel-type order). */
static void sort_rows(opdb_cmp_row *v, size_t n) {
    if (n < 2) return;
    opdb_cmp_row *tmp = opdb_xmalloc(n * sizeof *tmp);
    for (size_t w = 1; w < n; w *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * w) {
            size_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            size_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi) tmp[k++] = sort_key(&v[j]) > sort_key(&v[i]) ? v[j++] : v[i++];
            while (i < mid) tmp[k++] = v[i++];
            while (j < hi) tmp[k++] = v[j++];
        }
        memcpy(v, tmp, n * sizeof *v);
    }
    free(tmp);
}

static char *join_funcs(const opdb_cmp_stat *st) {
    opdb_strbuf sb;
    opdb_sb_init(&sb);
    opdb_sb_addc(&sb, '\0');
    sb.n = 0;
    for (int k = 0; st && k < st->nfuncs; k++) {
        if (k) opdb_sb_adds(&sb, ", ");
        opdb_sb_adds(&sb, st->funcs[k]);
    }
    return sb.p;
}

static const char *tc_status(const opdb_cmp_stat *st) {
    if (!st) return TC_UNMODELED;
    if (st->miss > 0 && st->hit > 0) return "PARTIAL";
    return st->hit > 0 ? "HIT" : "MISS";
}

void opdb_cmp_build_rows(const opdb_cmp_stats *tc, const opdb_cmp_stats *prof, double n_fwd, opdb_cmp_scenario *sc) {
    size_t nall = 0;
    const opdb_cmp_stat **all = opdb_xmalloc((tc->n + prof->n + 1) * sizeof *all);
    for (size_t i = 0; i < tc->n; i++) all[nall++] = &tc->v[i];
    for (size_t i = 0; i < prof->n; i++)
        if (!opdb_cmp_stats_find(tc, prof->v[i].kt, prof->v[i].ktlen)) all[nall++] = &prof->v[i];
    qsort(all, nall, sizeof *all, kt_cmp);
    sc->rows = opdb_xcalloc(nall ? nall : 1, sizeof *sc->rows);
    sc->nrows = nall;
    for (size_t i = 0; i < nall; i++) {
        const opdb_cmp_stat *t = opdb_cmp_stats_find(tc, all[i]->kt, all[i]->ktlen);
        const opdb_cmp_stat *p = opdb_cmp_stats_find(prof, all[i]->kt, all[i]->ktlen);
        opdb_cmp_row *r = &sc->rows[i];
        r->kt = opdb_xstrdup(all[i]->kt);
        r->funcs = join_funcs(t);
        opdb_cmp_num tc_total = t ? num_float(t->total) : num_int0();
        r->tc_count = t ? t->count : 0;
        opdb_cmp_num ppf = num_int0(), pcount = num_int0();
        if (n_fwd > 0) { /* the prof default total is int 0, but 0 / n_fwd is a float */
            ppf = num_float((p ? p->total : 0.0) / n_fwd);
            pcount = num_float((double)(p ? p->count : 0) / n_fwd);
        }
        opdb_cmp_num err = ppf.v > 0 ? num_float((tc_total.v - ppf.v) / ppf.v * 100) : num_int0();
        opdb_cmp_num cerr = pcount.v > 0 ? num_float(((double)r->tc_count - pcount.v) / pcount.v * 100) : num_int0();
        r->tc_total = round1(tc_total);
        r->prof_per_fwd = round1(ppf);
        double pc = 0;
        r->prof_count = opdb_py_round_int(pcount.v, &pc) ? (long long)pc : 0;
        r->error_pct = round1(err);
        r->count_error_pct = round1(cerr);
        r->status = tc_status(t);
    }
    free(all);
    sort_rows(sc->rows, sc->nrows);
}

void opdb_cmp_scenario_free(opdb_cmp_scenario *sc) {
    for (size_t i = 0; i < sc->nrows; i++) {
        free(sc->rows[i].kt);
        free(sc->rows[i].funcs);
    }
    free(sc->rows);
    free(sc->name);
    memset(sc, 0, sizeof *sc);
}

/* ---- console ------------------------------------------------------------- */

static size_t code_points(const char *s) {
    size_t n = 0;
    for (; *s; s++) n += ((unsigned char)*s & 0xC0) != 0x80;
    return n;
}

/* format(s, "<w") / format(s, ">w"), widths in code points */
static void pad(opdb_strbuf *o, const char *s, int width, bool left) {
    size_t cp = code_points(s);
    size_t fill = cp < (size_t)width ? (size_t)width - cp : 0;
    if (left) opdb_sb_adds(o, s);
    for (size_t k = 0; k < fill; k++) opdb_sb_addc(o, ' ');
    if (!left) opdb_sb_adds(o, s);
}

static void fixed(opdb_strbuf *o, double v, int decimals, int width) {
    char buf[512];
    opdb_py_fmt_fixed(buf, sizeof buf, v, decimals);
    pad(o, buf, width, false);
}

static void rule(opdb_strbuf *o, char c) {
    for (int k = 0; k < 115; k++) opdb_sb_addc(o, c);
    opdb_sb_addc(o, '\n');
}

void opdb_cmp_console(opdb_strbuf *o, const opdb_cmp_scenario *sc) {
    double total_tc = 0.0, total_prof = 0.0; /* sum() of the rounded row values, in row order */
    for (size_t i = 0; i < sc->nrows; i++) {
        total_tc += sc->rows[i].tc_total.v;
        total_prof += sc->rows[i].prof_per_fwd.v;
    }
    opdb_sb_addc(o, '\n');
    rule(o, '=');
    opdb_sb_addf(o, "%s \xe2\x80\x94 TC vs Profiling per-forward\n", sc->name);
    rule(o, '=');
    static const struct {
        const char *text;
        int width;
        bool left;
    } head[] = {
        {"kernel_type", 35, true},
        {"TC(\xce\xbcs)", 12, false},                                   /* TC(μs) */
        {"TC\xe6\xac\xa1\xe6\x95\xb0", 7, false},                       /* TC次数 */
        {"Prof(\xce\xbcs)", 12, false},                                 /* Prof(μs) */
        {"Prof\xe6\xac\xa1\xe6\x95\xb0", 8, false},                     /* Prof次数 */
        {"\xe5\xbb\xb6\xe8\xbf\x9f\xe8\xaf\xaf\xe5\xb7\xae", 9, false}, /* 延迟误差 */
        {"\xe6\xac\xa1\xe6\x95\xb0\xe8\xaf\xaf\xe5\xb7\xae", 9, false}, /* 次数误差 */
        {"Prof\xe5\x8d\xa0\xe6\xaf\x94", 8, false},                     /* Prof占比 */
        {"\xe7\x8a\xb6\xe6\x80\x81", 6, true},                          /* 状态 */
    };
    for (size_t k = 0; k < sizeof head / sizeof head[0]; k++) {
        if (k) opdb_sb_addc(o, ' ');
        pad(o, head[k].text, head[k].width, head[k].left);
    }
    opdb_sb_addc(o, '\n');
    rule(o, '-');
    for (size_t i = 0; i < sc->nrows && i < 15; i++) {
        const opdb_cmp_row *r = &sc->rows[i];
        double share = total_prof > 0 ? r->prof_per_fwd.v / total_prof * 100 : 0.0;
        char buf[64];
        pad(o, r->kt, 35, true);
        opdb_sb_addc(o, ' ');
        fixed(o, r->tc_total.v, 1, 12);
        opdb_sb_addc(o, ' ');
        snprintf(buf, sizeof buf, "%lld", r->tc_count);
        pad(o, buf, 7, false);
        opdb_sb_addc(o, ' ');
        fixed(o, r->prof_per_fwd.v, 1, 12);
        opdb_sb_addc(o, ' ');
        fixed(o, (double)r->prof_count, 0, 8);
        opdb_sb_addc(o, ' ');
        fixed(o, r->error_pct.v, 1, 8);
        opdb_sb_adds(o, "% ");
        fixed(o, r->count_error_pct.v, 1, 8);
        opdb_sb_adds(o, "% ");
        fixed(o, share, 1, 7);
        opdb_sb_adds(o, "% ");
        pad(o, r->status, 6, true);
        opdb_sb_addc(o, '\n');
    }
    pad(o, "TOTAL", 35, true);
    opdb_sb_addc(o, ' ');
    fixed(o, total_tc, 1, 12);
    opdb_sb_adds(o, "         "); /* ' ' + format('', '>7') + ' ' */
    fixed(o, total_prof, 1, 12);
    opdb_sb_addc(o, '\n');
}

/* ---- JSON ------------------------------------------------------------------ */

static void json_num(opdb_json *j, const char *key, opdb_cmp_num v) {
    opdb_json_key(j, key);
    if (v.is_int) opdb_json_int(j, 0);
    else opdb_json_float(j, v.v);
}

void opdb_cmp_json(opdb_strbuf *out, const opdb_cmp_scenario *sc, size_t n, bool python_nan) {
    opdb_json j;
    opdb_json_init(&j, out);
    j.python_nan = python_nan;
    j.raw_utf8 = true; /* ensure_ascii=False */
    opdb_json_begin_object(&j);
    for (size_t s = 0; s < n; s++) {
        opdb_json_key(&j, sc[s].name);
        opdb_json_begin_array(&j);
        for (size_t i = 0; i < sc[s].nrows; i++) {
            const opdb_cmp_row *r = &sc[s].rows[i];
            opdb_json_begin_object(&j);
            opdb_json_key(&j, "kernel_type");
            opdb_json_string(&j, r->kt);
            opdb_json_key(&j, "tc_funcs");
            opdb_json_string(&j, r->funcs);
            json_num(&j, "tc_total_us", r->tc_total);
            opdb_json_key(&j, "tc_count");
            opdb_json_int(&j, r->tc_count);
            json_num(&j, "prof_per_fwd_us", r->prof_per_fwd);
            opdb_json_key(&j, "prof_count");
            opdb_json_int(&j, r->prof_count);
            json_num(&j, "error_pct", r->error_pct);
            json_num(&j, "count_error_pct", r->count_error_pct);
            opdb_json_key(&j, "status");
            opdb_json_string(&j, r->status);
            opdb_json_end_object(&j);
        }
        opdb_json_end_array(&j);
    }
    opdb_json_end_object(&j);
}
