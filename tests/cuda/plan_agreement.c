/* cuda.plan_agreement: every operator with a CUDA kernel accepts the problem
 * its plan() builds from a row with the real CSV spellings, after the same
 * host fill the backend does (the group list is read from it). Needs no GPU:
 * a kernel's check() never touches a device. Catches a drift between the
 * plans' iparam/fparam/slot conventions (src/replay/ops/) and the kernels.
 * Also: every CUDA kernel is reachable from the registry and has a case. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../unit/replay_test_row.h"
#include "replay/cuda/cu_api.h"

typedef struct row_case {
    const char *kernel, *shapes, *dtypes, *formats, *out_shapes, *out_dtypes;
} row_case;

static const row_case cases[] = {
    {"MatMulV2", "64,128;256,128", "DT_BF16;DT_BF16", "ND;ND", "64,256", "DT_BF16"},
    {"MatMulV2", "7,3,40;40,40", "FLOAT;FLOAT", "ND;ND", "", ""},
    {"MatMulV3", "\"16,4096;1024,4096\"", "DT_FLOAT16;DT_FLOAT16", "ND;ND", "", ""},
    {"MatMulCommon", "8,64;32,64", "FLOAT;FLOAT", "ND;ND", "8,32", "FLOAT"},
    {"BatchMatMulV2", "\"3,5,24;3,7,24\"", "DT_BF16;DT_BF16", "ND;ND", "\"3,5,7\"", "DT_BF16"},
    {"BatchMatMulV2", "\"3,5,24;3,24,7\"", "DT_BF16;DT_BF16", "ND;ND", "\"3,5,7\"", "DT_BF16"},
    {"BatchMatMulV2", "5,24;7,24", "FLOAT;FLOAT", "ND;ND", "5,7", "FLOAT"},
    {"TransposeBatchMatMul", "\"2,3,128;2,128,256\"", "DT_BF16;DT_BF16", "ND;ND", "\"3,2,256\"", "DT_BF16"},
    {"GroupedMatmul", "\"10,32;3,32,24;;;;;;3\"", ";DT_BF16;;;;;;INT64", "ND;ND;;;;;;ND", "\"10,24\"", "DT_BF16"},
    {"GroupedMatmul", "\"10,32;32,24;;;;;;4\"", "DT_FLOAT16;DT_FLOAT16;;;;;;INT32", "ND;ND;;;;;;ND", "", ""},
    {"Add", "4,1,5;3,1", "DT_BF16;FLOAT", "ND;ND", "4,3,5", "FLOAT"},
    {"Add", "6,50", "INT32", "ND", "", ""},
    {"RmsNorm", "\"6,128;128\"", "DT_BF16;DT_BF16", "ND;ND", "6,128;6,1", "DT_BF16;FLOAT"},
    {"RmsNorm", "2,3,1500;3,1500", "FLOAT;FLOAT", "ND;ND", "", ""},
    {"AddRmsNormBias", "8,64;8,64;64;64", "DT_BF16;DT_BF16;DT_BF16;DT_BF16", "ND;ND;ND;ND", "8,64;8,1;8,64", ""},
    {"AddRmsNormBias", "8,64;8,64;64;", "DT_FLOAT16;DT_FLOAT16;DT_FLOAT16;", "ND;ND;ND;", "", ""},
    {"SwiGlu", "5,2100", "DT_FLOAT16", "ND", "5,1050", "DT_FLOAT16"},
    {"SoftmaxV2", "4,4,16", "DT_FLOAT16", "ND", "", ""},
    {"Sort", "3,50", "DT_BF16", "ND", "3,50;3,50", "DT_BF16;INT64"},
    {"ArgMaxV2", "3,50", "FLOAT", "ND", "", ""},
    {"DynamicQuant", "4,1500", "DT_BF16", "ND", "4,1500;4", "INT8;FLOAT"},
    {"AscendQuantV2", "4,32;32;32", "DT_FLOAT16;FLOAT;FLOAT", "ND;ND;ND", "4,32", "DT_INT8"},
    {"AscendQuantV2", "2,16;1;1", "FLOAT;FLOAT;FLOAT", "ND;ND;ND", "2,16", "INT32"},
    {"InterleaveRope", "2,4,3,64;2,1,3,64;2,1,3,64", "DT_BF16;DT_BF16;DT_BF16", "ND;ND;ND", "2,4,3,64", "DT_BF16"},
    {"GatherV2", "20,16;7", "DT_BF16;INT64", "ND;ND", "7,16", "DT_BF16"},
    {"GatherV2", "3,4,5;2,6", "FLOAT;INT32", "ND;ND", "", ""},
    {"Index", "\"64,32;1;2;16\"", "DT_BF16;INT64;INT64;INT64", "ND;ND;ND;ND", "\"16,32\"", "DT_BF16"},
    {"Slice", "6,10;2;2", "FLOAT;INT64;INT64", "ND;ND;ND", "3,4", "FLOAT"},
    {"PadV3", "2,3,5", "DT_BF16", "", "4,2,7", ""},
    {"PadV3", "2,3,5", "INT32", "ND", "3,8", ""},
    {"Transpose", "2,3,4;3", "DT_BF16;INT64", "ND;ND", "2,4,3", "DT_BF16"},
    {"Transpose", "4,4", "INT8", "ND", "4,4", "INT8"},
    {"TensorMove", "3,1000", "INT8", "ND", "3,1000", "INT8"},
    {"MaskedFill", "4,6,8;6,8", "DT_BF16;INT8", "ND;ND", "4,6,8", "DT_BF16"},
    {"ScatterNdUpdate", "10,6;4,1;4,6", "FLOAT;INT64;FLOAT", "ND;ND;ND", "10,6", "FLOAT"},
};

static void free_host(opdb_op_problem *p) {
    for (int i = 0; i < p->nin; i++) free(p->in[i].data);
    for (int i = 0; i < p->nout; i++) free(p->out[i].data);
}

/* Rows the plans accept but no CUDA kernel handles: refused with the reason. */
static const row_case refused[] = {
    /* a bias input: the CPU GEMM adds it, the CUDA one does not yet */
    {"MatMulCommon", "8,64;32,64;32", "FLOAT;FLOAT;FLOAT", "ND;ND;ND", "8,32", "FLOAT"},
    {"Sort", "4,16", "INT32", "ND", "", ""},
    {"GroupedMatmul", "\"10,32;3,32,24;;3,24;;;;3;10\"", "DT_INT8;DT_INT8;;FLOAT;;;;INT64;FLOAT", "ND;ND;;ND;;;;ND;ND",
     "\"10,24\"", "DT_BF16"},
};

/* plan -> host buffers -> default fill + op fill (as backend_cuda.c) -> kernel check. */
static int agree(const row_case *c, bool want_refusal) {
    kv cells[] = {{"Input Shapes", c->shapes}, {"Input Data Types", c->dtypes}, {"Input Formats", c->formats},
                  {"Output Shapes", c->out_shapes}, {"Output Data Types", c->out_dtypes}, {NULL, NULL}};
    opdb_replay_row row = {c->kernel, cell, cells, false};
    opdb_err err = {0, ""};
    const opdb_op_def *op = opdb_op_find(c->kernel);
    const opdb_cu_kernel *k = opdb_cu_kernel_find(c->kernel);
    opdb_op_problem p;
    memset(&p, 0, sizeof p);
    int rc = !op || !k ? -1 : op->plan(&row, &p, &err);
    for (int i = 0; i < p.nin && rc == 0; i++)
        if (p.in[i].ndim > 0 && !(p.in[i].data = calloc(1, opdb_tensor_bytes(&p.in[i]) + 1))) rc = -1;
    for (int i = 0; i < p.nout && rc == 0; i++)
        if (p.out[i].ndim > 0 && !(p.out[i].data = calloc(1, opdb_tensor_bytes(&p.out[i]) + 1))) rc = -1;
    uint64_t rng = 42;
    for (int i = 0; i < p.nin && rc == 0; i++) opdb_replay_fill_default(&p.in[i], &rng);
    if (rc == 0 && op->fill) rc = op->fill(&p, 42, &err);
    bool planned = rc == 0;
    if (rc == 0) rc = k->check(&p, &p, &err);
    bool ok = want_refusal ? planned && rc != 0 && err.msg[0] : rc == 0;
    printf("%-4s %-20s %-34s %s%s\n", ok ? "ok" : "FAIL", c->kernel, c->shapes, want_refusal ? "refused: " : "",
           !op ? "no such operator" : !k ? "no CUDA kernel" : err.msg);
    free_host(&p);
    return ok ? 0 : 1;
}

int main(void) {
    int failures = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) failures += agree(&cases[i], false);
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) failures += agree(&refused[i], true);
    /* Every CUDA kernel is named after a registry operator (else nothing would
     * ever select it) and has a case above. */
    const opdb_cu_kernel *k;
    for (size_t i = 0; (k = opdb_cu_kernel_at(i)) != NULL; i++) {
        bool covered = false;
        for (size_t j = 0; j < sizeof cases / sizeof cases[0]; j++)
            covered = covered || strcmp(cases[j].kernel, k->name) == 0;
        const char *why = !opdb_op_find(k->name) ? "names no registry operator" : !covered ? "has no case here" : NULL;
        if (!why) continue;
        printf("FAIL %-20s CUDA kernel %s\n", k->name, why);
        failures++;
    }
    printf("%d failure(s)\n", failures);
    return failures ? 1 : 0;
}
