/* See sig_cells.h. */
#include "db/sig_cells.h"

#include <pthread.h>
#include <stddef.h>
#include <string.h>

_Static_assert(sizeof(opdb_sig_cells) == OPDB_NSIG_CELLS * sizeof(opdb_span),
               "opdb_sig_cells: one span per signature cell, in opdb_sig_cell_cols order");

int db_sig_cols_from_header(db_sig_cols *m, const opdb_span *names, size_t n, db_dup_name dup) {
    int rc = 0;
    for (int k = 0; k < OPDB_NSIG_CELLS; k++) {
        m->col[k] = -1;
        for (size_t i = 0; i < n && (dup == DB_NAME_LAST || m->col[k] < 0); i++)
            if (opdb_span_eq_cstr(names[i], opdb_sig_cell_cols[k])) m->col[k] = (int)i;
        if (m->col[k] < 0) rc = -1;
    }
    return rc;
}

int db_sig_cols_from_names(db_sig_cols *m, const char *const *names, size_t n) {
    int rc = 0;
    for (int k = 0; k < OPDB_NSIG_CELLS; k++) {
        m->col[k] = -1;
        for (size_t i = 0; i < n && m->col[k] < 0; i++)
            if (strcmp(names[i], opdb_sig_cell_cols[k]) == 0) m->col[k] = (int)i;
        if (m->col[k] < 0) rc = -1;
    }
    return rc;
}

static db_sig_cols g_key_cols;
static pthread_once_t g_key_cols_once = PTHREAD_ONCE_INIT;

static void resolve_key_cols(void) { db_sig_cols_from_names(&g_key_cols, opdb_key_cols, OPDB_NKEY_COLS); }

const db_sig_cols *db_sig_cols_of_key_cols(void) {
    pthread_once(&g_key_cols_once, resolve_key_cols);
    return &g_key_cols;
}

opdb_sig_cells db_sig_cells_from_row(const db_sig_cols *m, const opdb_span *cells, size_t n) {
    opdb_span v[OPDB_NSIG_CELLS];
    for (int k = 0; k < OPDB_NSIG_CELLS; k++) {
        int c = m->col[k];
        v[k] = c >= 0 && (size_t)c < n && cells[c].p ? cells[c] : opdb_span_make("", 0);
    }
    return (opdb_sig_cells){v[0], v[1], v[2], v[3], v[4], v[5]};
}

opdb_sig_cells db_sig_cells_from_fields(const db_sig_cols *m, const opdb_field *cells, int n) {
    opdb_span v[OPDB_NSIG_CELLS];
    for (int k = 0; k < OPDB_NSIG_CELLS; k++) {
        int c = m->col[k];
        v[k] = c >= 0 && c < n ? opdb_span_make(cells[c].p, cells[c].n) : opdb_span_make("", 0);
    }
    return (opdb_sig_cells){v[0], v[1], v[2], v[3], v[4], v[5]};
}

/* Where each signature cell sits in opdb_sig_cells (opdb_sig_cell_cols order). */
static const size_t k_cell_at[OPDB_NSIG_CELLS] = {
    offsetof(opdb_sig_cells, in_shapes),  offsetof(opdb_sig_cells, in_dtypes),  offsetof(opdb_sig_cells, in_formats),
    offsetof(opdb_sig_cells, out_shapes), offsetof(opdb_sig_cells, out_dtypes), offsetof(opdb_sig_cells, ep_size)};

void db_sig_cells_put(const db_sig_cols *m, opdb_sig_cells *c, int col, opdb_span v) {
    for (int k = 0; k < OPDB_NSIG_CELLS; k++)
        if (m->col[k] == col && col >= 0) *(opdb_span *)((char *)c + k_cell_at[k]) = v;
}
