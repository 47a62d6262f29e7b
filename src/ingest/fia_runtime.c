/* See fia_runtime.h. */
#include "ingest/fia_runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "opdb/csv.h"
#include "opdb/pystr.h"
#include "opdb/schema.h"

const char *const fia_runtime_columns[FIA_NRUNTIME] = {
    OPDB_COL_RT_SOURCE,       OPDB_COL_RT_ASL_SHAPE,    OPDB_COL_RT_ASL_VALUES, OPDB_COL_RT_ASLKV_SHAPE,
    OPDB_COL_RT_ASLKV_VALUES, OPDB_COL_RT_AVG_SEQ_LEN,  OPDB_COL_RT_BT_SHAPE,   OPDB_COL_RT_BT_VALID,
    OPDB_COL_RT_NUM_HEADS,    OPDB_COL_RT_NUM_KV_HEADS, OPDB_COL_RT_SPARSE_MODE, OPDB_COL_RT_INPUT_LAYOUT,
    OPDB_COL_RT_BLOCK_SIZE,   OPDB_COL_RT_ATTN_STATE,   OPDB_COL_RT_KV_CACHE_MODE, OPDB_COL_RT_COMPLETENESS,
};
enum { COL_SOURCE = 0, COL_ASL_SHAPE = 1, COL_ASLKV_SHAPE = 3, COL_BT_SHAPE = 6, COL_COMPLETENESS = 15 };
#define NSLOTS 31

void fia_index_init(fia_index *ix) {
    memset(ix, 0, sizeof *ix);
    opdb_arena_init(&ix->arena, 64 * 1024);
}

void fia_index_free(fia_index *ix) {
    free(ix->v);
    opdb_hindex_free(&ix->ix);
    opdb_arena_free(&ix->arena);
    memset(ix, 0, sizeof *ix);
}

static uint64_t key_hash(opdb_span in, opdb_span out) {
    return opdb_hash_bytes(out.p, out.n, opdb_hash_bytes(in.p, in.n, 77));
}

const fia_meta *fia_index_get(const fia_index *ix, opdb_span in, opdb_span out) {
    uint64_t h = key_hash(in, out);
    uint32_t i;
    for (opdb_hprobe p = opdb_hindex_probe(&ix->ix, h); opdb_hprobe_next(&p, &i);)
        if (opdb_span_eq(ix->v[i].in, in) && opdb_span_eq(ix->v[i].out, out)) return &ix->v[i];
    return NULL;
}

bool fia_index_has(const fia_index *ix, opdb_span in, opdb_span out) { return fia_index_get(ix, in, out) != NULL; }


/* One slot as a shape: "" if absent, else the integers joined by ",". */
static int slot_text(opdb_arena *a, opdb_span slot, bool lenient, bool *bad, int idx,
                     const char **out, opdb_err *err) {
    slot = opdb_py_strip(slot);
    *out = "";
    if (slot.n == 0) return 0;
    opdb_strbuf sb;
    opdb_sb_init(&sb);
    size_t start = 0;
    for (size_t i = 0; i <= slot.n; i++) {
        if (i < slot.n && slot.p[i] != ',') continue;
        long long v;
        if (!opdb_py_int(slot.p + start, i - start, &v)) {
            opdb_sb_free(&sb);
            if (lenient) {
                *bad = true;
                return 0;
            }
            return opdb_fail(err, OPDB_ERR_RUNTIME,
                             "FusedInferAttentionScore input slot %d has a non-integer dimension '%.*s'",
                             idx, (int)(i - start), slot.p + start);
        }
        if (sb.n) opdb_sb_addc(&sb, ',');
        opdb_sb_addf(&sb, "%lld", v);
        start = i + 1;
    }
    *out = opdb_arena_strndup(a, sb.p, sb.n);
    opdb_sb_free(&sb);
    return 0;
}

int fia_index_add(fia_index *ix, opdb_span in, opdb_span out, opdb_span source,
                  const char *source_profile, bool lenient, bool *bad_token, opdb_err *err) {
    /* split_metadata_field: strip whitespace and quotes, split on ';', strip each part */
    opdb_span text = opdb_py_strip_chars(opdb_py_strip(source), "\"");
    const char *shape[NSLOTS];
    int slot = 0;
    size_t start = 0;
    for (size_t i = 0; i <= text.n; i++) {
        if (i < text.n && text.p[i] != ';') continue;
        opdb_span part = opdb_py_strip_chars(opdb_py_strip(opdb_span_make(text.p + start, i - start)), "\"");
        const char *t;
        if (slot_text(&ix->arena, part, lenient, bad_token, slot, &t, err)) return -1;
        if (slot < NSLOTS) shape[slot] = t;
        slot++;
        start = i + 1;
    }
    for (; slot < NSLOTS; slot++) shape[slot] = "";

    OPDB_ALLOC_GROW(ix->v, ix->n + 1, ix->cap);
    fia_meta *m = &ix->v[ix->n];
    m->in = opdb_span_make(opdb_arena_strndup(&ix->arena, in.p, in.n), in.n);
    m->out = opdb_span_make(opdb_arena_strndup(&ix->arena, out.p, out.n), out.n);
    m->hash = key_hash(in, out);
    for (int c = 0; c < FIA_NRUNTIME; c++) m->cells[c] = "";
    m->cells[COL_SOURCE] = opdb_arena_strndup(&ix->arena, source_profile, strlen(source_profile));
    m->cells[COL_ASL_SHAPE] = shape[5];
    m->cells[COL_ASLKV_SHAPE] = shape[6];
    m->cells[COL_BT_SHAPE] = shape[14];
    /* No runtime values come from a profile, so avg_seq_len stays empty. */
    m->cells[COL_COMPLETENESS] = "profile_shapes_only";
    opdb_hindex_add(&ix->ix, m->hash, (uint32_t)ix->n++);
    return 0;
}

/* Python: " ".join(lower + strip non-[a-z0-9] of each non-empty name cell) contains it. */
static bool names_fia(const opdb_field *f, int nf, const int *cols, int ncols) {
    for (int k = 0; k < ncols; k++) {
        int c = cols[k];
        if (c < 0 || c >= nf || f[c].n == 0) continue;
        char buf[256];
        size_t o = 0;
        for (uint32_t i = 0; i < f[c].n && o < sizeof buf - 1; i++) {
            char ch = f[c].p[i];
            if (ch >= 'A' && ch <= 'Z') ch = (char)(ch - 'A' + 'a');
            if ((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9')) buf[o++] = ch;
        }
        buf[o] = '\0';
        if (strstr(buf, "fusedinferattentionscore")) return true;
    }
    return false;
}

int fia_load_operator_rows(const char *path, fia_op_rows *rows, opdb_err *err) {
    rows->in = NULL;
    rows->n = 0;
    opdb_csv_file c;
    if (opdb_csv_file_open(&c, path, 4096, err)) return -1;
    static const char *const name_cols[] = {"Type", "Name", "Op Type", "Op Name", "Operator Type", "Operator Name"};
    int cols[6], c_in = -1, c_out = -1;
    size_t cap = 0;
    int r = opdb_csv_file_next(&c, true);
    if (r > 0) {
        for (int k = 0; k < 6; k++) cols[k] = opdb_csv_col(c.f, c.nf, name_cols[k]);
        c_in = opdb_csv_col(c.f, c.nf, OPDB_COL_INPUT_SHAPES);
        c_out = opdb_csv_col(c.f, c.nf, OPDB_COL_OUTPUT_SHAPES);
        while ((r = opdb_csv_file_next(&c, false)) > 0) {
            if (!names_fia(c.f, c.nf, cols, 6)) continue;
            opdb_span in = opdb_py_strip(opdb_csv_cell(c.f, c.nf, c_in));
            opdb_span out = opdb_py_strip(opdb_csv_cell(c.f, c.nf, c_out));
            if (!in.n || !out.n) continue;
            OPDB_ALLOC_GROW(rows->in, rows->n + 1, cap);
            char *s = opdb_xmalloc(in.n + 1);
            memcpy(s, in.p, in.n);
            s[in.n] = '\0';
            rows->in[rows->n++] = s;
        }
    }
    int rc = r < 0 ? opdb_fail(err, OPDB_ERR_RUNTIME, "%s: read failed", path) : 0;
    opdb_csv_file_close(&c);
    return rc;
}

void fia_op_rows_free(fia_op_rows *rows) {
    for (size_t i = 0; i < rows->n; i++) free(rows->in[i]);
    free(rows->in);
    rows->in = NULL;
    rows->n = 0;
}
