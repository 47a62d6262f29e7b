/* Framework dtypes, their element sizes and the profiler spellings the
 * database rows use. */
#include <string.h>

#include "query/query_internal.h"

static const struct {
    const char *name;
    size_t size;
    const char *prof;
} k_dt[QDT_COUNT] = {
    [QDT_BF16] = {"bfloat16", 2, "DT_BF16"},  [QDT_F16] = {"float16", 2, "DT_BF16"},
    [QDT_F32] = {"float32", 4, "FLOAT"},      [QDT_F64] = {"float64", 8, NULL},
    [QDT_I8] = {"int8", 1, "INT8"},           [QDT_U8] = {"uint8", 1, NULL},
    [QDT_I16] = {"int16", 2, NULL},           [QDT_I32] = {"int32", 4, "INT32"},
    [QDT_I64] = {"int64", 8, "INT64"},        [QDT_BOOL] = {"bool", 1, "BOOL"},
    [QDT_F8E4M3] = {"float8_e4m3fn", 1, NULL}, [QDT_F8E5M2] = {"float8_e5m2", 1, NULL},
};

static bool eq(const char *s, size_t n, const char *w) { return strlen(w) == n && memcmp(s, w, n) == 0; }

int q_dtype_parse(const char *s, size_t n) {
    if (n > 6 && memcmp(s, "torch.", 6) == 0) s += 6, n -= 6;
    for (int k = 0; k < QDT_COUNT; k++)
        if (eq(s, n, k_dt[k].name)) return k;
    if (eq(s, n, "half")) return QDT_F16;
    if (eq(s, n, "float")) return QDT_F32;
    if (eq(s, n, "double")) return QDT_F64;
    if (eq(s, n, "long")) return QDT_I64;
    if (eq(s, n, "int")) return QDT_I32;
    return -1;
}

const char *q_dtype_name(int dt) { return dt >= 0 && dt < QDT_COUNT ? k_dt[dt].name : "?"; }
size_t q_dtype_size(int dt) { return dt >= 0 && dt < QDT_COUNT ? k_dt[dt].size : 0; }
const char *q_dtype_prof(int dt) { return dt >= 0 && dt < QDT_COUNT ? k_dt[dt].prof : NULL; }

int q_dtype_from_prof(const char *s, size_t n) {
    if (eq(s, n, "DT_BF16")) return QDT_BF16;
    if (eq(s, n, "INT8")) return QDT_I8;
    if (eq(s, n, "INT32")) return QDT_I32;
    if (eq(s, n, "INT64")) return QDT_I64;
    if (eq(s, n, "FLOAT")) return QDT_F32;
    if (eq(s, n, "BOOL")) return QDT_BOOL;
    return -1;
}

size_t q_prof_bytes(const char *s, size_t n) {
    static const struct {
        const char *s;
        size_t b;
    } t[] = {{"DT_BF16", 2}, {"DT_FLOAT16", 2}, {"FLOAT", 4}, {"DT_FLOAT", 4}, {"INT8", 1},  {"DT_INT8", 1},
             {"INT16", 2},   {"INT32", 4},      {"DT_INT32", 4}, {"INT64", 8},  {"DT_INT64", 8}};
    if (!s) return 0;
    for (size_t k = 0; k < sizeof t / sizeof t[0]; k++)
        if (eq(s, n, t[k].s)) return t[k].b;
    return 0;
}

bool q_relaxed_kernel(const char *kt) {
    static const char *const r[] = {"ApplyRotaryPosEmb", "_triton_rope", "split_qkv_rmsnorm_rope_kernel", "MatMulV2",
                                    "PadV3", "PadV3AiCore", "MoeGatingTopK"};
    for (size_t k = 0; k < sizeof r / sizeof r[0]; k++)
        if (strcmp(kt, r[k]) == 0) return true;
    return false;
}

static bool float_group(const char *s, size_t n) { return eq(s, n, "DT_BF16") || eq(s, n, "FLOAT"); }

bool q_prof_match(const char *kt, const char *p, const char *d, size_t dn) {
    size_t pn = strlen(p);
    if (pn == dn && memcmp(p, d, dn) == 0) return true;
    return q_relaxed_kernel(kt) && float_group(p, pn) && float_group(d, dn);
}
