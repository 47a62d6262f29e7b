/* Row signatures: the identity used to match, de-duplicate and merge rows
 * (docs/FORMAT.md §3.5). */
#ifndef OPDB_SIGNATURE_H
#define OPDB_SIGNATURE_H

#include "opdb/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The cells a signature reads. */
typedef struct opdb_sig_cells {
    opdb_span in_shapes, in_dtypes, in_formats, out_shapes, out_dtypes, ep_size;
} opdb_sig_cells;

/* Strip whitespace, then one of the suffixes `_run.py`, `_run`, `.csv`.
 * Writes into out (NUL-terminated, at most cap-1 bytes); returns its length. */
OPDB_API size_t opdb_normalize_op_name(const char *name, size_t n, char *out, size_t cap);

/* The MatMul family: one operator profiled under three names, whose rows
 * share signature rules and which update treats as aliases of each other.
 * OPDB_MATMUL_FAMILY_LIST(X) expands X(name) once per name, in this order. */
#define OPDB_MATMUL_FAMILY_LIST(X) X("MatMulV2") X("MatMulV3") X("MatMulCommon")
#define OPDB_NMATMUL_FAMILY 3

/* A name of the MatMul family. */
OPDB_API int opdb_is_matmul_family(const char *op);

/* sig(row, op_name) as one comparable string (tuple elements joined by
 * 0x1f). op is resolved like the reference: stripped of whitespace and `"`,
 * normalised. Appends to *out (cleared first). */
OPDB_API void opdb_signature(const opdb_sig_cells *c, const char *op, opdb_strbuf *out);
/* The rules are a mode of the call in force on the thread: the reference's
 * signature exactly where the call asks for it (opdb_update_opts
 * .reference_signatures, bench's --reference-quirks); else (the default) a
 * MatMul-family row's inputs past the first two (a bias) are one more element
 * of its signature (docs/ROW-IDENTITY.md). */
/* Which rules opdb_signature applies for op: operators of one class (the
 * MatMul family; Index; Slice and Transpose; DispatchFFNCombine; any other)
 * give equal cells equal signatures (the name itself is not part of one). */
OPDB_API int opdb_signature_class(const char *op);
/* The same through the general rules only (opdb_signature takes a fast path
 * for cells already in normal form); for tests. */
OPDB_API void opdb_signature_general(const opdb_sig_cells *c, const char *op, opdb_strbuf *out);
/* For tests: the slot count of a cell in the fast path's normal form, -1 when
 * it is not; by the vector (where built) or the byte-at-a-time scanner. */
OPDB_API int opdb_sig_cell_slots(opdb_span cell, bool shape, bool simd);

/* Display form: `<raw Input Shapes or N/A> -> <raw Output Shapes or N/A>`. */
OPDB_API void opdb_signature_display(const opdb_sig_cells *c, opdb_strbuf *out);

/* Attention kernels (FusedInferAttentionScore): the consumer tells their rows
 * apart by the runtime columns (docs/ROW-IDENTITY.md). */
OPDB_API int opdb_is_attention_kernel(const char *op);
/* A `Runtime ...` column or the legacy `avg_seq_len`. */
OPDB_API bool opdb_is_runtime_column(opdb_span name);
/* What the consumer can tell apart: the signature (opdb's rules: with a
 * MatMul bias) plus an attention row's runtime cells (already normalised by
 * the caller). Two rows with equal identities are one row to the consumer
 * (docs/ROW-IDENTITY.md). */
OPDB_API void opdb_row_identity(const opdb_sig_cells *c, const char *op, const opdb_span *runtime, size_t nruntime,
                       opdb_strbuf *out);

#ifdef __cplusplus
}
#endif
#endif
