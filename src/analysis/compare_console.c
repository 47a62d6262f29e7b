/* opdb's default console table for `compare`: English headers, columns
 * as wide as their widest cell (terminal cells, CJK counted as two), every
 * row or the first `top` with a line saying how many were left out, and a
 * kernel without measurements shown as such instead of "0.0%". The
 * reference's own table (--reference-quirks) is opdb_cmp_console. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opdb/compare.h"
#include "opdb/pystr.h"

#define NCOL 9

/* Terminal cells of one code point: East Asian Wide/Fullwidth take two,
 * combining marks none (the ranges of Unicode's EastAsianWidth W/F that
 * hold assigned characters, coarsely). */
static int cp_cells(unsigned cp) {
    if (cp == 0 || (cp >= 0x300 && cp <= 0x36F) || cp == 0x200B) return 0;
    static const unsigned wide[][2] = {
        {0x1100, 0x115F}, {0x2E80, 0x303E}, {0x3041, 0x33FF}, {0x3400, 0x4DBF}, {0x4E00, 0x9FFF},
        {0xA000, 0xA4CF}, {0xAC00, 0xD7A3}, {0xF900, 0xFAFF}, {0xFE30, 0xFE4F}, {0xFF00, 0xFF60},
        {0xFFE0, 0xFFE6}, {0x1F300, 0x1F64F}, {0x1F900, 0x1F9FF}, {0x20000, 0x3FFFD},
    };
    for (size_t i = 0; i < sizeof wide / sizeof wide[0]; i++)
        if (cp >= wide[i][0] && cp <= wide[i][1]) return 2;
    return 1;
}

size_t opdb_cmp_cells(const char *s) {
    size_t n = 0;
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        unsigned cp = *p;
        int extra = cp >= 0xF0 ? 3 : cp >= 0xE0 ? 2 : cp >= 0xC0 ? 1 : 0;
        if (extra) cp &= 0x3Fu >> extra;
        p++;
        for (int k = 0; k < extra && (*p & 0xC0) == 0x80; k++, p++) cp = (cp << 6) | (*p & 0x3Fu);
        n += (size_t)cp_cells(cp);
    }
    return n;
}

typedef struct cells {
    const char *first; /* kernel type (any length) */
    char c[NCOL][600]; /* c[0] unused; a fixed-point double fits */
} cells;

static const char *cell(const cells *c, int k) { return k ? c->c[k] : c->first; }

static const char *const k_head[NCOL] = {"kernel type", "predicted us", "calls", "measured us", "calls",
                                         "time error", "count error", "share", "status"};
static const bool k_left[NCOL] = {true, false, false, false, false, false, false, false, true};

static void fmt1(char *b, size_t cap, double v, const char *suffix, bool sign) {
    char num[512];
    opdb_py_fmt_fixed(num, sizeof num, v, 1);
    snprintf(b, cap, "%s%s%s", sign && v >= 0 && num[0] != '-' ? "+" : "", num, suffix);
}

static void row_cells(const opdb_cmp_row *r, double total_prof, cells *c) {
    c->first = r->kt;
    fmt1(c->c[1], sizeof c->c[1], r->tc_total.v, "", false);
    snprintf(c->c[2], sizeof c->c[2], "%lld", r->tc_count);
    fmt1(c->c[3], sizeof c->c[3], r->prof_per_fwd.v, "", false);
    snprintf(c->c[4], sizeof c->c[4], "%lld", r->prof_count);
    /* the integer 0 marks "no measured time / count" (docs/ANALYSIS.md §2.6) */
    if (r->error_pct.is_int) snprintf(c->c[5], sizeof c->c[5], "not measured");
    else fmt1(c->c[5], sizeof c->c[5], r->error_pct.v, "%", true);
    if (r->count_error_pct.is_int) snprintf(c->c[6], sizeof c->c[6], "-");
    else fmt1(c->c[6], sizeof c->c[6], r->count_error_pct.v, "%", true);
    fmt1(c->c[7], sizeof c->c[7], total_prof > 0 ? r->prof_per_fwd.v / total_prof * 100 : 0.0, "%", false);
    snprintf(c->c[8], sizeof c->c[8], "%s", opdb_cmp_status_en(r->status));
}

static void put_line(opdb_strbuf *o, const cells *c, const size_t *w) {
    size_t end = o->n;
    for (int k = 0; k < NCOL; k++) {
        if (k) opdb_sb_adds(o, "  ");
        size_t cw = opdb_cmp_cells(cell(c, k));
        size_t fill = cw < w[k] ? w[k] - cw : 0;
        if (!k_left[k])
            for (size_t f = 0; f < fill; f++) opdb_sb_addc(o, ' ');
        opdb_sb_adds(o, cell(c, k));
        if (cell(c, k)[0]) end = o->n;
        if (k_left[k])
            for (size_t f = 0; f < fill; f++) opdb_sb_addc(o, ' ');
    }
    o->n = end; /* no trailing blanks */
    opdb_sb_addc(o, '\n');
}

const char *opdb_cmp_status_en(const char *status) {
    return strcmp(status, "HIT") && strcmp(status, "MISS") && strcmp(status, "PARTIAL") ? "not modelled" : status;
}

void opdb_cmp_console_table(opdb_strbuf *o, const opdb_cmp_scenario *sc, size_t top) {
    double total_tc = 0.0, total_prof = 0.0;
    for (size_t i = 0; i < sc->nrows; i++) {
        total_tc += sc->rows[i].tc_total.v;
        total_prof += sc->rows[i].prof_per_fwd.v;
    }
    size_t shown = top && top < sc->nrows ? top : sc->nrows;
    cells *rows = opdb_xcalloc(shown + 2, sizeof *rows);
    rows[0].first = k_head[0];
    for (int k = 1; k < NCOL; k++) snprintf(rows[0].c[k], sizeof rows[0].c[k], "%s", k_head[k]);
    for (size_t i = 0; i < shown; i++) row_cells(&sc->rows[i], total_prof, &rows[i + 1]);
    cells *tot = &rows[shown + 1];
    tot->first = "TOTAL";
    fmt1(tot->c[1], sizeof tot->c[1], total_tc, "", false);
    fmt1(tot->c[3], sizeof tot->c[3], total_prof, "", false);
    if (total_prof > 0) fmt1(tot->c[5], sizeof tot->c[5], (total_tc - total_prof) / total_prof * 100, "%", true);
    else snprintf(tot->c[5], sizeof tot->c[5], "not measured");
    size_t w[NCOL] = {0}, width = 2 * (NCOL - 1);
    for (size_t i = 0; i < shown + 2; i++)
        for (int k = 0; k < NCOL; k++) {
            size_t cw = opdb_cmp_cells(cell(&rows[i], k));
            if (cw > w[k]) w[k] = cw;
        }
    for (int k = 0; k < NCOL; k++) width += w[k];
    opdb_sb_addf(o, "\n%s: predicted vs measured, per forward pass\n", sc->name);
    put_line(o, &rows[0], w);
    for (size_t k = 0; k < width; k++) opdb_sb_addc(o, '-');
    opdb_sb_addc(o, '\n');
    for (size_t i = 1; i <= shown; i++) put_line(o, &rows[i], w);
    for (size_t k = 0; k < width; k++) opdb_sb_addc(o, '-');
    opdb_sb_addc(o, '\n');
    put_line(o, tot, w);
    if (shown < sc->nrows)
        opdb_sb_addf(o, "%zu more kernel type%s not shown (--top 0 shows all)\n", sc->nrows - shown,
                     sc->nrows - shown == 1 ? "" : "s");
    free(rows);
}
