/* The built-in `--grid default`: LLM-typical shapes (Llama-3.2-1B / Llama-3-8B
 * hidden sizes 2048 and 4096, Llama-3-8B MLP width 14336, a 32k vocabulary),
 * decode (1 and 16 tokens) and prefill (256 tokens) token counts, bf16 and
 * fp32, for operators every backend runs. Small enough that the whole grid
 * is measured in well under two minutes on a 2-core machine. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opdb/bench.h"

typedef struct gbuild {
    opdb_grid_row *v;
    size_t n, cap;
    long limit;         /* rows per operator, 0 = all */
    const char *op;
    long op_rows;
} gbuild;

static void begin_op(gbuild *g, const char *op) {
    if (g->op && strcmp(g->op, op) == 0) return;
    g->op = op;
    g->op_rows = 0;
}

/* One row: input/output shapes, dtypes and formats as the profiler spells them. */
static void row(gbuild *g, const char *ish, const char *idt, const char *ifm, const char *osh, const char *odt,
                const char *ofm) {
    if (g->limit > 0 && g->op_rows >= g->limit) return;
    g->op_rows++;
    OPDB_ALLOC_GROW(g->v, g->n + 1, g->cap);
    opdb_grid_row *r = &g->v[g->n++];
    r->op = g->op;
    const char *c[8] = {"dynamic", "", ish, idt, ifm, osh, odt, ofm};
    for (int i = 0; i < 8; i++) r->cell[i] = opdb_xstrdup(c[i]);
}

static const char *const k_dtypes[2] = {"DT_BF16", "DT_FLOAT"};
static const long k_tokens[3] = {1, 16, 256};

static void matmuls(gbuild *g) {
    static const long kn[2] = {2048, 4096};
    begin_op(g, "MatMulV2");
    for (int d = 0; d < 2; d++)
        for (int h = 0; h < 2; h++)
            for (int t = 0; t < 3; t++) {
                char ish[64], idt[64], osh[64];
                snprintf(ish, sizeof ish, "\"%ld,%ld;%ld,%ld\"", k_tokens[t], kn[h], kn[h], kn[h]);
                snprintf(idt, sizeof idt, "%s;%s", k_dtypes[d], k_dtypes[d]);
                snprintf(osh, sizeof osh, "\"%ld,%ld\"", k_tokens[t], kn[h]);
                row(g, ish, idt, "ND;ND", osh, k_dtypes[d], "ND");
            }
}

/* Operators with one size parameter, as cell patterns: '#' is the size
 * (tokens, or keys for SoftmaxV2), '@' the dtype. */
typedef struct pattern {
    const char *op;
    const char *cell[6];        /* Input Shapes .. Output Formats */
    long size[2];
    int ndtypes;                /* 2: bf16 and fp32; 1: bf16 only */
} pattern;

static const pattern k_patterns[] = {
    {"Add", {"\"#,4096;#,4096\"", "@;@", "ND;ND", "\"#,4096\"", "@", "ND"}, {16, 256}, 2},
    {"RmsNorm", {"\"#,4096;4096\"", "@;@", "ND;ND", "\"#,4096;#,1\"", "@;DT_FLOAT", "ND;ND"}, {16, 256}, 2},
    {"SwiGlu", {"\"#,28672\"", "@", "ND", "\"#,14336\"", "@", "ND"}, {16, 256}, 2},
    {"SoftmaxV2", {"\"32,1,#\"", "@", "ND", "\"32,1,#\"", "@", "ND"}, {1024, 4096}, 2},
    {"DynamicQuant", {"\"#,4096\"", "@", "ND", "\"#,4096;#\"", "DT_INT8;DT_FLOAT", "ND;ND"}, {16, 256}, 1},
    {"GatherV2", {"\"32000,2048;#\"", "@;DT_INT64", "ND;ND", "\"#,2048\"", "@", "ND"}, {16, 256}, 1},
};

static void expand(char *out, size_t cap, const char *pat, long size, const char *dt) {
    size_t n = 0;
    for (const char *p = pat; *p && n + 1 < cap; p++) {
        char num[32];
        const char *ins = *p == '#' ? (snprintf(num, sizeof num, "%ld", size), num) : *p == '@' ? dt : NULL;
        if (!ins) {
            out[n++] = *p;
            continue;
        }
        for (; *ins && n + 1 < cap; ins++) out[n++] = *ins;
    }
    out[n] = '\0';
}

static void patterns(gbuild *g) {
    for (size_t k = 0; k < sizeof k_patterns / sizeof k_patterns[0]; k++) {
        const pattern *pt = &k_patterns[k];
        begin_op(g, pt->op);
        for (int d = 0; d < pt->ndtypes; d++)
            for (int s = 0; s < 2; s++) {
                char c[6][96];
                for (int i = 0; i < 6; i++) expand(c[i], sizeof c[i], pt->cell[i], pt->size[s], k_dtypes[d]);
                row(g, c[0], c[1], c[2], c[3], c[4], c[5]);
            }
    }
}

int opdb_grid_rows(const char *name, long limit, opdb_grid_row **rows, size_t *n, opdb_err *err) {
    *rows = NULL;
    *n = 0;
    if (!name || strcmp(name, "default") != 0)
        return opdb_fail(err, OPDB_ERR_USAGE, "argument --grid: invalid choice: '%s' (choose from 'default')",
                         name ? name : "");
    gbuild g = {0};
    g.limit = limit;
    matmuls(&g);
    patterns(&g);
    *rows = g.v;
    *n = g.n;
    return 0;
}

void opdb_grid_free(opdb_grid_row *rows, size_t n) {
    for (size_t i = 0; i < n; i++)
        for (int k = 0; k < 8; k++) free((char *)rows[i].cell[k]);
    free(rows);
}
