/* Row-building helpers of `opdb grid` (docs/GRID.md §7, §9). */
#ifndef OPDB_GRID_ROWS_H
#define OPDB_GRID_ROWS_H

#include "opdb/pystr.h"
#include "grid/grid_internal.h"

/* Slots of a template shape cell by the tolerant parser (§7.1); text after
 * the last top-level `;` is a slot only when there is some. */
int grid_slot_count(opdb_span cell);
/* Slots whose entry in the `;`-split attribute cell is absent become empty. */
void grid_clear_absent(grid_shape *slots, int n, opdb_span attr);
int grid_dtype_size(opdb_span dtype);
int grid_dtype_sizes(opdb_span cell, int *out, int cap);
/* Estimated bytes of a row (saturating). */
uint64_t grid_row_bytes(const grid_shape *in, int nin, const grid_shape *out, int nout, const int *isz, int nisz,
                        const int *osz, int nosz);
void grid_fmt_budget(uint64_t bytes, char *out, size_t cap);
/* `"d,d;d"` (literal quotes) appended to sb; nothing for no slots. */
void grid_shape_cell(opdb_strbuf *sb, const grid_shape *s, int n);
/* Input shapes as sequences of integer tuples (§7.5). */
int grid_cmp_inputs(const grid_shape *a, int na, const grid_shape *b, int nb);
/* grid_cmp_inputs over the cells grid_shape_cell wrote for two inputs, read
 * as they are compared (no integer key stored per row). */
int grid_cmp_shape_cells(const char *a, size_t na, const char *b, size_t nb);
/* The first two dims of such a cell's first slot, and where the cell goes
 * on after them; NULL when that slot has fewer. */
const char *grid_shape_cell_lead2(const char *cell, size_t n, int64_t lead[2]);
/* grid_cmp_shape_cells of two cells whose first two dims are equal, from
 * where grid_shape_cell_lead2 left each. */
int grid_cmp_shape_cells_rest(const char *a_rest, const char *b_rest);
/* Measurement columns a theory row sets to 0 (§7.2). */
bool grid_zero_column(const char *name);

#endif
