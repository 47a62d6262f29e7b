/* A database CSV held in memory for the grid (docs/GRID.md §2): read with the
 * exact tokenizer from byte 0 (the reference keeps a BOM in the first header
 * name), cells mapped by header name (the last of equal names wins, as a
 * DictReader row would), short records padded with "". */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "grid/grid_table.h"

#define TABLE_MAX_FIELDS 4096

int grid_table_load(const char *path, bool fixed, size_t max_rows, grid_table *t, opdb_err *err) {
    memset(t, 0, sizeof *t);
    opdb_arena_init(&t->arena, 1 << 20);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return opdb_fail(err, OPDB_ERR_RUNTIME, "%s: cannot open", path);
    uint64_t start = 0;
    if (fixed) {
        unsigned char bom[3];
        if (pread(fd, bom, 3, 0) == 3 && bom[0] == 0xEF && bom[1] == 0xBB && bom[2] == 0xBF) start = 3;
    }
    opdb_byte_reader br;
    opdb_byte_reader_init(&br, fd, start, 1 << 16);
    opdb_csv_exact x;
    opdb_csv_exact_init(&x, &br, 1);
    opdb_field *f = opdb_xmalloc(TABLE_MAX_FIELDS * sizeof *f);
    int nf, rc;
    int *src = NULL;
    size_t cap = 0;
    while ((rc = opdb_csv_exact_next(&x, f, TABLE_MAX_FIELDS, &nf, false)) == 1) {
        /* a quote that never closes swallows the rest of the file into one
         * cell (a broken template row); the reference reads it so */
        if (fixed && x.unterminated) {
            rc = -2;
            break;
        }
        if (!t->header) {
            t->ncols = (size_t)nf;
            t->header = opdb_arena_alloc(&t->arena, (t->ncols + GRID_TABLE_EXTRA_COLS) * sizeof *t->header);
            for (int i = 0; i < nf; i++) t->header[i] = opdb_arena_strndup(&t->arena, f[i].p, f[i].n);
            src = opdb_xmalloc((t->ncols + 1) * sizeof *src);
            for (size_t i = 0; i < t->ncols; i++) {
                src[i] = (int)i;
                for (size_t j = i + 1; j < t->ncols; j++)
                    if (!strcmp(t->header[i], t->header[j])) src[i] = (int)j;
            }
            continue;
        }
        OPDB_ALLOC_GROW(t->rows, t->nrows + 1, cap);
        opdb_span *row = opdb_arena_alloc(&t->arena, (t->ncols ? t->ncols : 1) * sizeof *row);
        for (size_t i = 0; i < t->ncols; i++) {
            int s = src[i];
            row[i] = s < nf ? opdb_span_make(opdb_arena_strndup(&t->arena, f[s].p, f[s].n), f[s].n) : opdb_span_make("", 0);
        }
        t->rows[t->nrows++] = row;
        if (max_rows && t->nrows >= max_rows) break;
    }
    free(f);
    free(src);
    int rerr = br.err;
    unsigned long long qline = (unsigned long long)x.open_quote_line;
    opdb_csv_exact_free(&x);
    opdb_byte_reader_free(&br);
    close(fd);
    if (rc == -2)
        return opdb_fail(err, OPDB_ERR_RUNTIME,
                         "%s:%llu: unterminated quoted field (the quote never closes before the end of the file)", path,
                         qline);
    if (rc < 0) return opdb_fail(err, OPDB_ERR_RUNTIME, "%s: read failed: %s", path, strerror(rerr));
    return 0;
}

int grid_table_col(const grid_table *t, const char *name) {
    for (size_t i = 0; i < t->ncols; i++)
        if (!strcmp(t->header[i], name)) return (int)i;
    return -1;
}

void grid_table_add_col(grid_table *t, const char *name) {
    if (grid_table_col(t, name) >= 0) return;
    t->header[t->ncols] = opdb_arena_strndup(&t->arena, name, strlen(name));
    /* existing rows read "" there: their arrays are re-made one wider */
    for (size_t r = 0; r < t->nrows; r++) {
        opdb_span *row = opdb_arena_alloc(&t->arena, (t->ncols + 1) * sizeof *row);
        memcpy(row, t->rows[r], t->ncols * sizeof *row);
        row[t->ncols] = opdb_span_make("", 0);
        t->rows[r] = row;
    }
    t->ncols++;
}

void grid_table_free(grid_table *t) {
    free(t->rows);
    opdb_arena_free(&t->arena);
    memset(t, 0, sizeof *t);
}
