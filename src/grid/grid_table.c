/* A database CSV held in memory for the grid (docs/GRID.md §2): read as text
 * from byte 0 (the reference keeps a BOM in the first header name), cells
 * mapped by header name (the last of equal names wins, as a DictReader row
 * would), short records padded with "". */
#include <stdlib.h>
#include <string.h>
#include "grid/grid_table.h"

int grid_table_load(const char *path, bool fixed, size_t max_rows, grid_table *t, opdb_err *err) {
    memset(t, 0, sizeof *t);
    db_text_opts o = {.open = {.keep_bom = !fixed}, .last_name_wins = true, .refuse_open_quote = fixed,
                      .max_rows = max_rows};
    int rc = db_text_load(&t->src, path, &o, NULL, err);
    db_text_table *s = &t->src;
    if (s->names) {
        t->ncols = s->ncols;
        t->header = opdb_arena_alloc(&s->arena, (t->ncols + GRID_TABLE_EXTRA_COLS) * sizeof *t->header);
        for (size_t i = 0; i < t->ncols; i++) t->header[i] = (char *)s->names[i].p;
    }
    t->rows = s->rows;
    t->nrows = s->nrows;
    return rc;
}

int grid_table_col(const grid_table *t, const char *name) {
    for (size_t i = 0; i < t->ncols; i++)
        if (!strcmp(t->header[i], name)) return (int)i;
    return -1;
}

void grid_table_add_col(grid_table *t, const char *name) {
    if (grid_table_col(t, name) >= 0) return;
    opdb_arena *a = &t->src.arena;
    t->header[t->ncols] = opdb_arena_strndup(a, name, strlen(name));
    /* existing rows read "" there: their arrays are re-made one wider */
    for (size_t r = 0; r < t->nrows; r++) {
        opdb_span *row = opdb_arena_alloc(a, (t->ncols + 1) * sizeof *row);
        memcpy(row, t->rows[r], t->ncols * sizeof *row);
        row[t->ncols] = opdb_span_make("", 0);
        t->rows[r] = row;
    }
    t->ncols++;
}

void grid_table_free(grid_table *t) {
    db_text_free(&t->src);
    memset(t, 0, sizeof *t);
}
