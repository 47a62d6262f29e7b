/* The order of `opdb grid`'s new rows (docs/GRID.md §7.5): a stable sort
 * on the input shapes, over the rendered input cells (a merge sort of
 * entries holding a cell's first two dims inline) or, on the simple path,
 * qsort over integer keys. */
#include <stdlib.h>
#include <string.h>
#include "grid/file_ctx.h"
#include "grid/grid_rows.h"

/* grid_cmp_inputs over two sort keys (§7.5). */
static int cmp_keys(const int64_t *a, const int64_t *b) {
    int64_t na = *a++, nb = *b++;
    for (int64_t i = 0; i < na && i < nb; i++) {
        int64_t da = *a++, db = *b++;
        for (int64_t d = 0; d < da && d < db; d++)
            if (a[d] != b[d]) return a[d] < b[d] ? -1 : 1;
        if (da != db) return da < db ? -1 : 1;
        a += da, b += db;
    }
    return na < nb ? -1 : na > nb;
}

static int cmp_krow(const void *x, const void *y) {
    const krow *a = *(krow *const *)x, *b = *(krow *const *)y;
    int c = cmp_keys(a->sk.p, b->sk.p);
    return c ? c : (a->order < b->order ? -1 : a->order > b->order); /* stable */
}

static inline bool ent_less(const sortent *x, const sortent *y) {
    int c;
    if (x->pos2 & y->pos2 & 1) {
        if (x->a != y->a || x->b != y->b) return x->a != y->a ? x->a < y->a : x->b < y->b;
        c = grid_cmp_shape_cells_rest(x->in, y->in);
    } else {
        const char *xi = x->pos2 & 1 ? x->in - x->nin : x->in, *yi = y->pos2 & 1 ? y->in - y->nin : y->in;
        c = grid_cmp_shape_cells(xi, x->nin, yi, y->nin);
    }
    return c ? c < 0 : x->pos2 < y->pos2;
}

/* The fast path's qsort, for more rows than a sortent can number. */
static _Thread_local const char *g_cells;
static int cmp_krow_cells(const void *x, const void *y) {
    const krow *a = *(krow *const *)x, *b = *(krow *const *)y;
    int c = grid_cmp_shape_cells(g_cells + a->in_off, a->nin_b, g_cells + b->in_off, b->nin_b);
    return c ? c : (a->order < b->order ? -1 : a->order > b->order);
}

/* Merge sort of e[0..n) (tmp: room for n); the order tie-break makes every
 * key distinct, so any sort gives the stable order. */
static void sort_ents(sortent *e, sortent *tmp, size_t n) {
    sortent *src = e, *dst = tmp;
    for (size_t w = 1; w < n; w *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * w) {
            size_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n, i = lo, j = mid, o = lo;
            while (i < mid && j < hi) dst[o++] = ent_less(&src[j], &src[i]) ? src[j++] : src[i++];
            while (i < mid) dst[o++] = src[i++];
            while (j < hi) dst[o++] = src[j++];
        }
        sortent *t = src;
        src = dst, dst = t;
    }
    if (src != e) memcpy(e, src, n * sizeof *e);
}

/* The stable sort of §7.5 (the simple path: qsort over the rows and
 * their integer keys).  rows[] come in increasing order, so a row's place
 * among them is its tie-break; they often come sorted already.  The
 * entries and merge buffer take the scratch's ents[0 .. 2n), below rows[]. */
void grid_sort_rows(grid_scratch *S, bool simple, krow **rows, size_t n) {
    if (simple) {
        if (n) qsort(rows, n, sizeof *rows, cmp_krow);
        return;
    }
    const char *cells = S->cells.p;
    size_t i = 1;
    while (i < n && grid_cmp_shape_cells(cells + rows[i - 1]->in_off, rows[i - 1]->nin_b, cells + rows[i]->in_off,
                                         rows[i]->nin_b) <= 0)
        i++;
    if (i >= n) return;
    if (n >= ((size_t)1 << 31)) { /* places do not fit a sortent */
        g_cells = cells;
        qsort(rows, n, sizeof *rows, cmp_krow_cells);
        return;
    }
    sortent *e = S->ents, *tmp = e + n;
    for (size_t j = 0; j < n; j++) {
        const krow *k = rows[j];
        const char *in = cells + k->in_off;
        int64_t lead[2];
        const char *rest = grid_shape_cell_lead2(in, k->nin_b, lead);
        bool pre = rest != NULL;
        e[j].a = pre ? lead[0] : 0, e[j].b = pre ? lead[1] : 0;
        e[j].in = pre ? rest : in;
        e[j].nin = pre ? (uint32_t)(rest - in) : k->nin_b; /* pre: how far in the rest starts */
        e[j].pos2 = (uint32_t)(j * 2 + pre);
    }
    sort_ents(e, tmp, n);
    krow **sorted = (krow **)(void *)tmp; /* the merge buffer is free again */
    for (size_t j = 0; j < n; j++) sorted[j] = rows[e[j].pos2 >> 1];
    memcpy(rows, sorted, n * sizeof *rows);
}
