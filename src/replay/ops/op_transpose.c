/* Transpose (docs/REPLAY-OPS.md §2.2): swap the first two axes at which the input
 * and recorded output shapes differ (compared over the shorter rank; fewer
 * than two -> (0,1), or (0,0) for rank 1), materialised contiguous. The
 * input is viewed as (P, A, M, B, Q) with A, B the swapped axes; Q-element
 * runs (qb bytes) move together, through tiles of the (A, B) plane. */
#include <string.h>

#include "replay/cpu/vec.h"
#include "replay/ops/ops.h"
#include "replay/ops/plan_util.h"

/* Tiles of TILE x TILE elements: a tile is read row by row into a local
 * buffer and written out row by row, so neither side walks a large stride
 * across many lines at once (stride-2^k writes thrash the cache sets). */
#define TILE 16
/* Element (in units of qb) of in[p][i][m][j] and of out[p][j][m][i]. */
#define IN_AT(i, j) (((pp * A + (i)) * M + mm) * B + (j))
#define OUT_AT(i, j) (((pp * B + (j)) * M + mm) * A + (i))
#define TILE_COPY(T)                                                                                                  \
    do {                                                                                                              \
        T buf[TILE][TILE];                                                                                            \
        const T *s_ = (const T *)src;                                                                                 \
        T *d_ = (T *)dst;                                                                                             \
        for (int64_t i = i0; i < i1; i++)                                                                             \
            for (int64_t j = j0; j < j1; j++) buf[i - i0][j - j0] = s_[IN_AT(i, j)];                                  \
        for (int64_t j = j0; j < j1; j++)                                                                             \
            for (int64_t i = i0; i < i1; i++) d_[OUT_AT(i, j)] = buf[i - i0][j - j0];                                 \
    } while (0)

static int transpose_plan(const opdb_replay_row *row, opdb_op_problem *p, opdb_err *err) {
    memset(p, 0, sizeof *p);
    if (opdb_replay_default_io(row, p, -1, err) || opdb_plan_min_inputs(row, p, 1, err)) return -1;
    if (p->nout < 1 || p->out[0].ndim == 0)
        return opdb_fail(err, OPDB_ERR_RUNTIME, "Transpose needs a recorded output shape");
    p->nin = 1;
    const opdb_tensor *x = &p->in[0], *rec = &p->out[0];
    int rank = x->ndim < rec->ndim ? x->ndim : rec->ndim, axes[2], n = 0;
    for (int i = 0; i < rank && n < 2; i++)
        if (x->dims[i] != rec->dims[i]) axes[n++] = i;
    if (n < 2) axes[0] = 0, axes[1] = x->ndim >= 2 ? 1 : 0;
    p->iparam[0] = axes[0];
    p->iparam[1] = axes[1];
    p->nout = 1;
    p->out[0] = opdb_plan_tensor(x->dtype, x->ndim, x->dims);
    p->out[0].dims[axes[0]] = x->dims[axes[1]];
    p->out[0].dims[axes[1]] = x->dims[axes[0]];
    p->bytes = opdb_problem_io_bytes(p);
    return 0;
}

static int64_t prod(const int64_t *d, int from, int to) {
    int64_t n = 1;
    for (int i = from; i < to; i++) n *= d[i];
    return n;
}

static int transpose_run(const opdb_op_problem *p, void *ws, opdb_err *err) {
    (void)ws;
    (void)err;
    const opdb_tensor *x = &p->in[0];
    int a = (int)p->iparam[0], b = (int)p->iparam[1];
    size_t es = opdb_dtype_size(x->dtype);
    if (a == b) {
        memcpy(p->out[0].data, x->data, opdb_tensor_bytes(x));
        return 0;
    }
    int64_t P = prod(x->dims, 0, a), A = x->dims[a], M = prod(x->dims, a + 1, b), B = x->dims[b];
    size_t qb = (size_t)prod(x->dims, b + 1, x->ndim) * es; /* contiguous bytes moved together */
    const char *src = x->data;
    char *dst = p->out[0].data;
    int64_t ta = (A + TILE - 1) / TILE, tb = (B + TILE - 1) / TILE;
    OPDB_OMP_FOR(opdb_tensor_numel(x))
    for (int64_t u = 0; u < P * M * ta * tb; u++) {
        OPDB_PIN();
        int64_t jt = u % tb, it = (u / tb) % ta, pm = u / (tb * ta), mm = pm % M, pp = pm / M;
        int64_t i1 = (it + 1) * TILE < A ? (it + 1) * TILE : A, j1 = (jt + 1) * TILE < B ? (jt + 1) * TILE : B;
        int64_t i0 = it * TILE, j0 = jt * TILE;
        switch (qb) { /* one element per move: typed copies instead of memcpy calls */
        case 1: TILE_COPY(uint8_t); break;
        case 2: TILE_COPY(uint16_t); break;
        case 4: TILE_COPY(uint32_t); break;
        case 8: TILE_COPY(uint64_t); break;
        default: /* runs of several elements: each run is a contiguous copy already */
            for (int64_t i = i0; i < i1; i++)
                for (int64_t j = j0; j < j1; j++)
                    memcpy(dst + (size_t)OUT_AT(i, j) * qb, src + (size_t)IN_AT(i, j) * qb, qb);
        }
    }
    return 0;
}

const opdb_op_def opdb_op_Transpose = {
    .name = "Transpose",
    .plan = transpose_plan,
    .cpu_run = transpose_run,
};
