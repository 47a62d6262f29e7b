/* The one home of the collective operations' names, file names, bus-bandwidth
 * factors and the dtypes (docs/COMM.md §1; factors as nccl-tests defines them). */
#include <string.h>

#include "opdb/comm.h"

static const struct {
    const char *name, *kernel, *redop;
} k_ops[OPDB_COMM_NOPS] = {
    [OPDB_COMM_ALL_REDUCE] = {"all_reduce", "hcom_allReduce_", "sum"},
    [OPDB_COMM_ALL_GATHER] = {"all_gather", "hcom_allGather_", "none"},
    [OPDB_COMM_REDUCE_SCATTER] = {"reduce_scatter", "hcom_reduceScatter_", "sum"},
    [OPDB_COMM_ALL_TO_ALL] = {"all_to_all", "hcom_alltoallv_", "none"},
    [OPDB_COMM_BROADCAST] = {"broadcast", "hcom_broadcast_", "none"},
};

const char *opdb_comm_op_name(opdb_comm_op op) { return k_ops[op].name; }
const char *opdb_comm_op_kernel(opdb_comm_op op) { return k_ops[op].kernel; }
const char *opdb_comm_op_redop(opdb_comm_op op) { return k_ops[op].redop; }

int opdb_comm_op_parse(const char *name) {
    for (int i = 0; i < OPDB_COMM_NOPS; i++)
        if (strcmp(name, k_ops[i].name) == 0) return i;
    return -1;
}

int opdb_comm_op_parse_loose(const char *text) {
    static const struct {
        const char *w;
        opdb_comm_op op;
    } k[] = {{"allreduce", OPDB_COMM_ALL_REDUCE},         {"allgather", OPDB_COMM_ALL_GATHER},
             {"reducescatter", OPDB_COMM_REDUCE_SCATTER}, {"alltoall", OPDB_COMM_ALL_TO_ALL},
             {"broadcast", OPDB_COMM_BROADCAST},          {"bcast", OPDB_COMM_BROADCAST}};
    /* lower case without '_' and '-': all_reduce, AllReduce, all-to-all */
    char buf[256];
    size_t n = 0;
    for (const char *p = text; *p && n + 1 < sizeof buf; p++)
        if (*p != '_' && *p != '-') buf[n++] = (char)(*p >= 'A' && *p <= 'Z' ? *p + 32 : *p);
    buf[n] = '\0';
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++)
        if (strstr(buf, k[i].w)) return (int)k[i].op;
    return -1;
}

double opdb_comm_busbw_factor(opdb_comm_op op, int n) {
    switch (op) {
    case OPDB_COMM_ALL_REDUCE: return 2.0 * (n - 1) / n;
    case OPDB_COMM_ALL_GATHER:
    case OPDB_COMM_REDUCE_SCATTER:
    case OPDB_COMM_ALL_TO_ALL: return (double)(n - 1) / n;
    default: return 1.0;
    }
}

static const opdb_comm_dtype k_dtypes[] = {
    {"torch.bfloat16", "DT_BF16", "bfloat16", 2},
    {"torch.float16", "DT_FP16", "half", 2},
    {"torch.float32", "DT_FLOAT", "float", 4},
    {"torch.int8", "DT_INT8", "int8", 1},
};

const opdb_comm_dtype *opdb_comm_dtype_find(const char *name) {
    for (size_t i = 0; i < sizeof k_dtypes / sizeof k_dtypes[0]; i++)
        if (strcmp(name, k_dtypes[i].torch_name) == 0 || strcmp(name, k_dtypes[i].torch_name + 6) == 0 ||
            strcmp(name, k_dtypes[i].nccl_name) == 0)
            return &k_dtypes[i];
    return NULL;
}

const opdb_comm_dtype *opdb_comm_dtype_default(void) { return &k_dtypes[0]; }

float opdb_bf16_to_float(unsigned short h) {
    unsigned int u = (unsigned int)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

unsigned short opdb_float_to_bf16(float f) {
    unsigned int u;
    memcpy(&u, &f, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (unsigned short)((u >> 16) | 0x40); /* quiet nan */
    u += 0x7fffu + ((u >> 16) & 1u);
    return (unsigned short)(u >> 16);
}

float opdb_fp16_to_float(unsigned short h) {
    unsigned int sign = (unsigned int)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, man = h & 0x3ffu, u;
    if (exp == 0x1f) {
        u = sign | 0x7f800000u | (man << 13);
    } else if (exp == 0) {
        if (man == 0) {
            u = sign;
        } else { /* subnormal: normalise */
            int e = -1;
            do {
                man <<= 1;
                e++;
            } while (!(man & 0x400u));
            u = sign | ((unsigned int)(112 - e) << 23) | ((man & 0x3ffu) << 13);
        }
    } else {
        u = sign | ((exp + 112u) << 23) | (man << 13);
    }
    float f;
    memcpy(&f, &u, 4);
    return f;
}

unsigned short opdb_float_to_fp16(float f) {
    unsigned int u;
    memcpy(&u, &f, 4);
    unsigned int sign = (u >> 16) & 0x8000u, a = u & 0x7fffffffu;
    if (a > 0x7f800000u) return (unsigned short)(sign | 0x7e00u);
    if (a >= 0x477ff000u) return (unsigned short)(sign | 0x7c00u); /* rounds to inf */
    if (a < 0x38800000u) {                                        /* subnormal or zero in fp16 */
        if (a < 0x33000000u) return (unsigned short)sign;
        unsigned int e = a >> 23, man = (a & 0x7fffffu) | 0x800000u, shift = 126 - e;
        unsigned int r = man >> shift, rem = man & ((1u << shift) - 1), half = 1u << (shift - 1);
        if (rem > half || (rem == half && (r & 1u))) r++;
        return (unsigned short)(sign | r);
    }
    unsigned int r = ((a >> 13) - (112u << 10)), rem = a & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (r & 1u))) r++;
    return (unsigned short)(sign | r);
}
