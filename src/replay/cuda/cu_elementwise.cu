// Elementwise kernels: Add (broadcasting), SwiGlu, MaskedFill,
// AscendQuantV2, InterleaveRope. Arithmetic goes through fp32 (cu_ld/cu_st).
#include <string.h>

#include "cu_common.cuh"
#include "cu_kernels.cuh"

namespace {

const int BLOCK = 256;

// ---- Add: out = in0 + in1 (broadcast), or in0 + 1 with one input.
struct AddArgs {
    CuMap ma, mb;
    bool plain_a, plain_b, has_b;   // plain: same shape as out, offset = index
};

__global__ void k_add(const void *a, opdb_dtype ta, const void *b, opdb_dtype tb, void *o, opdb_dtype to,
                      int64_t n, AddArgs g) {
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        float x = cu_ld(a, ta, g.plain_a ? i : cu_map(g.ma, i));
        float y = g.has_b ? cu_ld(b, tb, g.plain_b ? i : cu_map(g.mb, i)) : 1.0f;
        cu_st(o, to, i, x + y);
    }
}

int add_args(const opdb_op_problem *p, AddArgs *g, opdb_err *err) {
    memset(g, 0, sizeof *g);
    if (opdb_cu_need(p, 1, 1, "Add", err)) return -1;
    g->has_b = p->nin >= 2 && p->in[1].ndim > 0;
    g->plain_a = opdb_cu_same_dims(&p->in[0], &p->out[0]);
    g->plain_b = !g->has_b || opdb_cu_same_dims(&p->in[1], &p->out[0]);
    if (opdb_cu_broadcast_map(&p->in[0], &p->out[0], &g->ma, err)) return -1;
    if (g->has_b && opdb_cu_broadcast_map(&p->in[1], &p->out[0], &g->mb, err)) return -1;
    return 0;
}

int add_launch(opdb_cu *cu, const opdb_op_problem *p, void *state, opdb_err *err) {
    (void)state;
    AddArgs g;
    if (add_args(p, &g, err)) return -1;
    int64_t n = opdb_cu_numel(&p->out[0]);
    const opdb_tensor *b = g.has_b ? &p->in[1] : &p->in[0];
    k_add<<<opdb_cu_grid(cu, n, BLOCK), BLOCK, 0, cu->stream>>>(p->in[0].data, p->in[0].dtype, b->data, b->dtype,
                                                                 p->out[0].data, p->out[0].dtype, n, g);
    return opdb_cu_check_launch("Add kernel", err);
}

// ---- SwiGlu: x (.., 2H) -> silu(x[.., :H]) * x[.., H:]
__global__ void k_swiglu(const void *x, opdb_dtype tx, void *o, opdb_dtype to, int64_t rows, int64_t h) {
    int64_t n = rows * h;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        int64_t r = i / h, c = i - r * h;
        float a = cu_ld(x, tx, r * 2 * h + c), b = cu_ld(x, tx, r * 2 * h + h + c);
        cu_st(o, to, i, a / (1.0f + expf(-a)) * b);
    }
}

int swiglu_check(const opdb_op_problem *p, opdb_err *err) {
    if (opdb_cu_need(p, 1, 1, "SwiGlu", err)) return -1;
    CuRows r = opdb_cu_rows(&p->in[0]);
    if (r.cols % 2 || opdb_cu_numel(&p->out[0]) * 2 != opdb_cu_numel(&p->in[0]))
        return opdb_cu_fail(err, "SwiGlu: last dim %lld must be even and the output half the input",
                            (long long)r.cols);
    return 0;
}

int swiglu_launch(opdb_cu *cu, const opdb_op_problem *p, void *state, opdb_err *err) {
    (void)state;
    CuRows r = opdb_cu_rows(&p->in[0]);
    int64_t h = r.cols / 2;
    k_swiglu<<<opdb_cu_grid(cu, r.rows * h, BLOCK), BLOCK, 0, cu->stream>>>(p->in[0].data, p->in[0].dtype,
                                                                            p->out[0].data, p->out[0].dtype,
                                                                            r.rows, h);
    return opdb_cu_check_launch("SwiGlu kernel", err);
}

// ---- MaskedFill: x[mask] = 0 (mask broadcast to x); in place on x, or
// into out[0] when the problem has a separate output.
__global__ void k_masked_fill(const void *x, opdb_dtype tx, const void *mask, opdb_dtype tm, CuMap mm, bool plain,
                              void *o, int64_t n) {
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        bool m = cu_ld_index(mask, tm, plain ? i : cu_map(mm, i)) != 0;
        if (o != x) cu_st(o, tx, i, m ? 0.0f : cu_ld(x, tx, i));
        else if (m) cu_st(o, tx, i, 0.0f);
    }
}

int masked_fill_map(const opdb_op_problem *p, CuMap *m, opdb_err *err) {
    if (opdb_cu_need(p, 2, 0, "MaskedFill", err)) return -1;
    if (p->nout >= 1 && p->out[0].ndim > 0 && !opdb_cu_same_dims(&p->out[0], &p->in[0]))
        return opdb_cu_fail(err, "MaskedFill: output shape differs from input 0");
    return opdb_cu_broadcast_map(&p->in[1], &p->in[0], m, err);
}

int masked_fill_launch(opdb_cu *cu, const opdb_op_problem *p, void *state, opdb_err *err) {
    (void)state;
    CuMap m;
    if (masked_fill_map(p, &m, err)) return -1;
    void *o = p->nout >= 1 && p->out[0].ndim > 0 ? p->out[0].data : p->in[0].data;
    int64_t n = opdb_cu_numel(&p->in[0]);
    k_masked_fill<<<opdb_cu_grid(cu, n, BLOCK), BLOCK, 0, cu->stream>>>(
        p->in[0].data, p->in[0].dtype, p->in[1].data, p->in[1].dtype, m, opdb_cu_same_dims(&p->in[0], &p->in[1]), o, n);
    return opdb_cu_check_launch("MaskedFill kernel", err);
}

// ---- AscendQuantV2 (src/replay/ops/op_ascend_quant_v2.c): y = rint(x * scale
// + offset) saturated to y's type; scale/offset hold 1 or D (last dim) values.
struct QuantArgs {
    int64_t d, ns, no;      // last dim, scale and offset counts (no = 0: no offset)
    float lo, hi;           // the output type's range
};

__global__ void k_quant(const void *x, opdb_dtype tx, const void *sc, opdb_dtype ts, const void *of, opdb_dtype to,
                        void *y, opdb_dtype ty, int64_t n, QuantArgs a) {
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        int64_t c = i % a.d;
        float v = cu_ld(x, tx, i) * cu_ld(sc, ts, a.ns == 1 ? 0 : c);
        if (a.no) v += cu_ld(of, to, a.no == 1 ? 0 : c);
        cu_st(y, ty, i, fminf(a.hi, fmaxf(a.lo, rintf(v))));
    }
}

int quant_args(const opdb_op_problem *p, QuantArgs *a, opdb_err *err) {
    if (opdb_cu_need(p, 2, 1, "AscendQuantV2", err)) return -1;
    memset(a, 0, sizeof *a);
    a->d = opdb_cu_rows(&p->in[0]).cols;
    a->ns = opdb_cu_numel(&p->in[1]);
    a->no = p->nin >= 3 ? opdb_cu_numel(&p->in[2]) : 0;
    opdb_dtype ty = p->out[0].dtype;
    // int32: the largest float below 2^31, so the conversion cannot overflow.
    a->lo = ty == OPDB_DT_I8 ? -128.0f : ty == OPDB_DT_U8 ? 0.0f : -2147483648.0f;
    a->hi = ty == OPDB_DT_I8 ? 127.0f : ty == OPDB_DT_U8 ? 255.0f : 2147483520.0f;
    if ((ty != OPDB_DT_I8 && ty != OPDB_DT_U8 && ty != OPDB_DT_I32) || a->d < 1 ||
        (a->ns != 1 && a->ns != a->d) || (a->no > 1 && a->no != a->d) ||
        opdb_cu_numel(&p->out[0]) != opdb_cu_numel(&p->in[0]))
        return opdb_cu_fail(err, "AscendQuantV2: needs an int8/uint8/int32 output of x's shape and 1 or D scales");
    return 0;
}

int quant_launch(opdb_cu *cu, const opdb_op_problem *p, void *state, opdb_err *err) {
    (void)state;
    QuantArgs a;
    if (quant_args(p, &a, err)) return -1;
    int64_t n = opdb_cu_numel(&p->in[0]);
    const opdb_tensor *of = a.no ? &p->in[2] : &p->in[1];
    k_quant<<<opdb_cu_grid(cu, n, BLOCK), BLOCK, 0, cu->stream>>>(p->in[0].data, p->in[0].dtype, p->in[1].data,
                                                                   p->in[1].dtype, of->data, of->dtype, p->out[0].data,
                                                                   p->out[0].dtype, n, a);
    return opdb_cu_check_launch("AscendQuantV2 kernel", err);
}

// ---- InterleaveRope (src/replay/ops/op_interleave_rope.c): per row of D,
// q = (x[0], x[2], .., x[1], x[3], ..) and y = q * cos + rotate_half(q) * sin:
// y[i] = x[2i] cos[i] - x[2i+1] sin[i], y[i+h] = x[2i+1] cos[i+h] + x[2i] sin[i+h];
// cos and sin broadcast to x.
struct RopeArgs {
    CuMap mc, ms;
    int64_t d;
};

__global__ void k_rope(const void *x, opdb_dtype tx, const void *cs, opdb_dtype tc, const void *sn, opdb_dtype tsn,
                       void *y, opdb_dtype ty, int64_t n, RopeArgs a) {
    int64_t h = a.d / 2;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        int64_t j = i % a.d, base = i - j, q = j < h ? j : j - h;
        float ev = cu_ld(x, tx, base + 2 * q), od = cu_ld(x, tx, base + 2 * q + 1);
        float c = cu_ld(cs, tc, cu_map(a.mc, i)), s = cu_ld(sn, tsn, cu_map(a.ms, i));
        cu_st(y, ty, i, j < h ? ev * c - od * s : od * c + ev * s);
    }
}

int rope_args(const opdb_op_problem *p, RopeArgs *a, opdb_err *err) {
    if (opdb_cu_need(p, 3, 1, "InterleaveRope", err)) return -1;
    memset(a, 0, sizeof *a);
    a->d = opdb_cu_rows(&p->in[0]).cols;
    if (a->d < 2 || a->d % 2 || opdb_cu_numel(&p->out[0]) != opdb_cu_numel(&p->in[0]))
        return opdb_cu_fail(err, "InterleaveRope: the last dim must be even and y the shape of x");
    if (opdb_cu_broadcast_map(&p->in[1], &p->in[0], &a->mc, err) ||
        opdb_cu_broadcast_map(&p->in[2], &p->in[0], &a->ms, err))
        return -1;
    return 0;
}

int rope_launch(opdb_cu *cu, const opdb_op_problem *p, void *state, opdb_err *err) {
    (void)state;
    RopeArgs a;
    if (rope_args(p, &a, err)) return -1;
    int64_t n = opdb_cu_numel(&p->in[0]);
    k_rope<<<opdb_cu_grid(cu, n, BLOCK), BLOCK, 0, cu->stream>>>(p->in[0].data, p->in[0].dtype, p->in[1].data,
                                                                  p->in[1].dtype, p->in[2].data, p->in[2].dtype,
                                                                  p->out[0].data, p->out[0].dtype, n, a);
    return opdb_cu_check_launch("InterleaveRope kernel", err);
}

}  // namespace

OPDB_CU_STATELESS(Add, add_launch, opdb_cu_check_made<AddArgs, add_args>)
OPDB_CU_STATELESS(SwiGlu, swiglu_launch, opdb_cu_check_only<swiglu_check>)
OPDB_CU_STATELESS(MaskedFill, masked_fill_launch, opdb_cu_check_made<CuMap, masked_fill_map>)
OPDB_CU_STATELESS(AscendQuantV2, quant_launch, opdb_cu_check_made<QuantArgs, quant_args>)
OPDB_CU_STATELESS(InterleaveRope, rope_launch, opdb_cu_check_made<RopeArgs, rope_args>)
