/* Plan-side helpers shared by the operator files: slot-list parsing of a
 * row's Shapes / Formats / Data Types triple (docs/REPLAY-OPS.md §1.3 slot-list:
 * counts checked per list, blank formats read as NULL, per-slot presence),
 * input-count checks, shape text for error messages. */
#ifndef OPDB_REPLAY_PLAN_UTIL_H
#define OPDB_REPLAY_PLAN_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include "opdb/replay.h"

typedef struct opdb_row_slots {
    size_t n_shape, n_fmt, n_dt;
    char shape[OPDB_MAX_TENSORS][128];
    char fmt[OPDB_MAX_TENSORS][128];
    char dt[OPDB_MAX_TENSORS][128];
} opdb_row_slots;

/* Split the Input (output=false) or Output triple as slot-lists; a blank
 * format slot becomes "NULL". */
void opdb_row_slots_read(const opdb_replay_row *row, bool output, opdb_row_slots *s);
/* Each of the three lists must hold exactly n slots, else
 * "<Kernel> expects exactly <n> <input|output> slots in <column>, got <m>". */
int opdb_row_slots_expect(const opdb_replay_row *row, const opdb_row_slots *s, size_t n, bool output,
                          opdb_err *err);
/* Slot i has a shape (non-blank after stripping). */
bool opdb_row_slot_present(const opdb_row_slots *s, size_t i);
/* make() of slot i (shape, format, dtype), with the kernel name prefixed to errors. */
int opdb_row_slot_make(const opdb_replay_row *row, const opdb_row_slots *s, size_t i, opdb_tensor *t,
                       opdb_err *err);

/* "<Kernel> expects at least <n> inputs, got <m>" when p->nin < n. */
int opdb_plan_min_inputs(const opdb_replay_row *row, const opdb_op_problem *p, int n, opdb_err *err);
/* "a,b,c" of a tensor's dims into buf (for error messages); returns buf. */
const char *opdb_plan_shape_str(const opdb_tensor *t, char *buf, size_t size);
/* A tensor of the given dtype whose dims are `ndim` values of dims. */
opdb_tensor opdb_plan_tensor(opdb_dtype dt, int ndim, const int64_t *dims);
/* x's shape without its last dim (a 1-D x gives (1,)): per-row outputs. */
opdb_tensor opdb_plan_rows_of(const opdb_tensor *x, opdb_dtype dt);
/* Both float dtypes or an error "<Kernel> needs a floating-point <what>, got <dtype>". */
int opdb_plan_need_float(const opdb_replay_row *row, const opdb_tensor *t, const char *what, opdb_err *err);

#endif
