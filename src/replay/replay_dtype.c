/* Element types of replayed tensors (docs/REPLAY-OPS.md §1.3): profiler dtype
 * spellings, sizes, bf16/fp16 storage conversions and generic element access. */
#include <stdio.h>
#include <string.h>
#include "opdb/replay.h"
#include "replay/half.h"

typedef struct dt_info {
    opdb_dtype dt;
    const char *name;
    size_t size;
} dt_info;

static const dt_info dt_table[] = {
    {OPDB_DT_F32, "DT_FLOAT", 4},   {OPDB_DT_F16, "DT_FLOAT16", 2}, {OPDB_DT_BF16, "DT_BF16", 2},
    {OPDB_DT_F64, "DT_DOUBLE", 8},  {OPDB_DT_I8, "DT_INT8", 1},     {OPDB_DT_U8, "DT_UINT8", 1},
    {OPDB_DT_I16, "DT_INT16", 2},   {OPDB_DT_I32, "DT_INT32", 4},   {OPDB_DT_I64, "DT_INT64", 8},
    {OPDB_DT_BOOL, "DT_BOOL", 1},
};
#define DT_COUNT (sizeof dt_table / sizeof dt_table[0])

static bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v'; }

int opdb_dtype_parse(const char *name, size_t len, opdb_dtype *out, opdb_err *err) {
    *out = OPDB_DT_UNDEFINED;
    while (len && (is_space(*name) || *name == '"')) name++, len--;
    while (len && (is_space(name[len - 1]) || name[len - 1] == '"')) len--;
    /* Normalise: blank -> DT_UNDEFINED, else prefix DT_ unless present. */
    char norm[64];
    if (len == 0) {
        strcpy(norm, "DT_UNDEFINED");
    } else {
        bool has = len >= 3 && memcmp(name, "DT_", 3) == 0;
        size_t n = len < sizeof norm - 4 ? len : sizeof norm - 4;
        snprintf(norm, sizeof norm, "%s%.*s", has ? "" : "DT_", (int)n, name);
    }
    for (size_t i = 0; i < DT_COUNT; i++)
        if (strcmp(norm, dt_table[i].name) == 0) {
            *out = dt_table[i].dt;
            return 0;
        }
    return opdb_fail(err, OPDB_ERR_RUNTIME, "Unsupported dtype: %s", norm);
}

const char *opdb_dtype_name(opdb_dtype dt) {
    for (size_t i = 0; i < DT_COUNT; i++)
        if (dt_table[i].dt == dt) return dt_table[i].name;
    return "DT_UNDEFINED";
}

size_t opdb_dtype_size(opdb_dtype dt) {
    for (size_t i = 0; i < DT_COUNT; i++)
        if (dt_table[i].dt == dt) return dt_table[i].size;
    return 0;
}

bool opdb_dtype_is_float(opdb_dtype dt) {
    return dt == OPDB_DT_F32 || dt == OPDB_DT_F16 || dt == OPDB_DT_BF16 || dt == OPDB_DT_F64;
}

float opdb_bf16_to_f32(uint16_t h) { return opdb_h_bf16_to_f32(h); }
uint16_t opdb_f32_to_bf16(float f) { return opdb_h_f32_to_bf16(f); }
float opdb_f16_to_f32(uint16_t h) { return opdb_h_f16_to_f32(h); }
uint16_t opdb_f32_to_f16(float f) { return opdb_h_f32_to_f16(f); }

/* double -> integer without undefined behaviour: NaN -> 0, saturate at the range. */
static int64_t clamp_int(double v, double lo, double hi) {
    if (v != v) return 0;
    if (v <= lo) return (int64_t)lo;
    if (v >= hi) return (int64_t)hi;
    return (int64_t)v;
}

double opdb_elem_get(const void *data, opdb_dtype dt, size_t i) {
    switch (dt) {
    case OPDB_DT_F32: return ((const float *)data)[i];
    case OPDB_DT_F16: return opdb_f16_to_f32(((const uint16_t *)data)[i]);
    case OPDB_DT_BF16: return opdb_bf16_to_f32(((const uint16_t *)data)[i]);
    case OPDB_DT_F64: return ((const double *)data)[i];
    case OPDB_DT_I8: return ((const int8_t *)data)[i];
    case OPDB_DT_U8: return ((const uint8_t *)data)[i];
    case OPDB_DT_I16: return ((const int16_t *)data)[i];
    case OPDB_DT_I32: return ((const int32_t *)data)[i];
    case OPDB_DT_I64: return (double)((const int64_t *)data)[i];
    case OPDB_DT_BOOL: return ((const uint8_t *)data)[i] ? 1.0 : 0.0;
    default: return 0.0;
    }
}

void opdb_elem_set(void *data, opdb_dtype dt, size_t i, double v) {
    switch (dt) {
    case OPDB_DT_F32: ((float *)data)[i] = (float)v; break;
    case OPDB_DT_F16: ((uint16_t *)data)[i] = opdb_f32_to_f16((float)v); break;
    case OPDB_DT_BF16: ((uint16_t *)data)[i] = opdb_f32_to_bf16((float)v); break;
    case OPDB_DT_F64: ((double *)data)[i] = v; break;
    case OPDB_DT_I8: ((int8_t *)data)[i] = (int8_t)clamp_int(v, INT8_MIN, INT8_MAX); break;
    case OPDB_DT_U8: ((uint8_t *)data)[i] = (uint8_t)clamp_int(v, 0, UINT8_MAX); break;
    case OPDB_DT_I16: ((int16_t *)data)[i] = (int16_t)clamp_int(v, INT16_MIN, INT16_MAX); break;
    case OPDB_DT_I32: ((int32_t *)data)[i] = (int32_t)clamp_int(v, INT32_MIN, INT32_MAX); break;
    case OPDB_DT_I64: ((int64_t *)data)[i] = clamp_int(v, -0x1p63, 0x1p63 - 1024.0); break;
    case OPDB_DT_BOOL: ((uint8_t *)data)[i] = v != 0.0; break;
    default: break;
    }
}
