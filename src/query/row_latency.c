/* A row's latency for readers that try the duration columns in an order of
 * their own (the interpolation and communication builders), answered from
 * the prepared row where it can be: the table's text is given back after
 * the preparation, and reading a cell then types its column again. */
#include "query/query_internal.h"

int q_row_lat_known(const q_ktable *t, size_t r, const int *cols, int n, double *lat, int *col) {
    if (!atomic_load_explicit(&((q_ktable *)t)->prepared, memory_order_acquire)) return -1;
    const q_row *rw = &t->rows[r];
    /* the preparation tried c_lat in order and took the first with a latency
     * (QLAT_NONE: none had one); the core envelope replaced that value */
    unsigned lc = rw->latcol;
    if (lc == QLAT_ENVELOPE) return -1;
    int chosen = lc < QLAT_ENVELOPE ? t->c_lat[lc] : -1;
    for (int k = 0; k < n; k++) {
        int c = cols[k];
        if (c < 0) continue;
        if (c == chosen) {
            *lat = rw->lat;
            *col = c;
            return 1;
        }
        bool none = false; /* a column the preparation tried before its choice */
        for (unsigned j = 0; j < 3; j++) none |= t->c_lat[j] == c && (lc == QLAT_NONE || j < lc);
        if (!none) return -1;
    }
    return 0;
}
