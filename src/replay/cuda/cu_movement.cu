// Data-movement kernels: TensorMove, Transpose (two axes), Slice (offsets
// 0), PadV3, GatherV2 / Index (row gather), ScatterNdUpdate (row scatter).
// They copy elements by size, so they work for every dtype.
#include <string.h>

#include "cu_common.cuh"
#include "cu_kernels.cuh"

// Runs the statement(s) with T = the unsigned integer type of element size es.
#define CU_BY_ELEM_SIZE(es, what, ...)                                                       \
    switch (es) {                                                                            \
    case 1: { typedef uint8_t T; __VA_ARGS__; } break;                                       \
    case 2: { typedef uint16_t T; __VA_ARGS__; } break;                                      \
    case 4: { typedef uint32_t T; __VA_ARGS__; } break;                                      \
    case 8: { typedef uint64_t T; __VA_ARGS__; } break;                                      \
    default: return opdb_cu_fail(err, "%s: unsupported element size %zu", what, (size_t)(es)); \
    }

namespace {

const int BLOCK = 256;

// ---- TensorMove: device-to-device copy into the preallocated clone.
int move_check(const opdb_op_problem *p, opdb_err *err) {
    if (opdb_cu_need(p, 1, 1, "TensorMove", err)) return -1;
    if (opdb_cu_numel(&p->in[0]) != opdb_cu_numel(&p->out[0]) || p->in[0].dtype != p->out[0].dtype)
        return opdb_cu_fail(err, "TensorMove: output differs from input in size or dtype");
    return 0;
}

int move_launch(opdb_cu *cu, const opdb_op_problem *p, void *state, opdb_err *err) {
    (void)state;
    size_t bytes = (size_t)opdb_cu_numel(&p->in[0]) * opdb_cu_elem_size(p->in[0].dtype);
    return opdb_cu_check(cudaMemcpyAsync(p->out[0].data, p->in[0].data, bytes, cudaMemcpyDeviceToDevice, cu->stream),
                         "TensorMove copy", err);
}

// ---- strided gather by element size (Transpose, Slice)
template <typename T>
__global__ void k_strided_copy(const T *in, T *out, int64_t n, CuMap m) {
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
        out[i] = in[cu_map(m, i)];
}

int strided_copy(opdb_cu *cu, const void *in, void *out, size_t es, int64_t n, const CuMap &m, const char *what,
                 opdb_err *err) {
    unsigned grid = opdb_cu_grid(cu, n, BLOCK);
    CU_BY_ELEM_SIZE(es, what, k_strided_copy<<<grid, BLOCK, 0, cu->stream>>>((const T *)in, (T *)out, n, m));
    return opdb_cu_check_launch(what, err);
}

void contiguous_strides(const opdb_tensor *t, int64_t *s) {
    int64_t st = 1;
    for (int d = t->ndim - 1; d >= 0; d--) {
        s[d] = st;
        st *= t->dims[d];
    }
}

// Transpose (docs/REPLAY-OPS.md §2.2): the plan's axes in iparam[0..1]
// (src/replay/ops/op_transpose.c); without them, the first two axes at which
// the input and output shapes differ (over the shorter rank), none -> (0, 1).
int transpose_map(const opdb_op_problem *p, CuMap *m, opdb_err *err) {
    if (opdb_cu_need(p, 1, 1, "Transpose", err)) return -1;
    const opdb_tensor *in = &p->in[0], *out = &p->out[0];
    int axes[2] = {0, 1}, found = 0;
    if (p->iparam[0] != p->iparam[1] && p->iparam[0] >= 0 && p->iparam[1] >= 0 && p->iparam[0] < in->ndim &&
        p->iparam[1] < in->ndim) {
        axes[0] = (int)p->iparam[0];
        axes[1] = (int)p->iparam[1];
        found = 2;
    }
    int shorter = in->ndim < out->ndim ? in->ndim : out->ndim;
    for (int d = 0; d < shorter && found < 2; d++)
        if (in->dims[d] != out->dims[d]) axes[found++] = d;
    if (found < 2) {
        axes[0] = 0;
        axes[1] = in->ndim >= 2 ? 1 : 0;
    }
    int64_t s[OPDB_MAX_DIMS];
    contiguous_strides(in, s);
    memset(m, 0, sizeof *m);
    m->ndim = in->ndim;
    for (int d = 0; d < in->ndim; d++) {
        int src = d == axes[0] ? axes[1] : d == axes[1] ? axes[0] : d;
        m->dims[d] = in->dims[src];
        m->stride[d] = s[src];
    }
    if (opdb_cu_numel(out) != opdb_cu_numel(in) || in->dtype != out->dtype)
        return opdb_cu_fail(err, "Transpose: output differs from input in size or dtype");
    return 0;
}

int transpose_launch(opdb_cu *cu, const opdb_op_problem *p, void *state, opdb_err *err) {
    (void)state;
    CuMap m;
    if (transpose_map(p, &m, err)) return -1;
    return strided_copy(cu, p->in[0].data, p->out[0].data, opdb_cu_elem_size(p->in[0].dtype),
                        opdb_cu_numel(&p->out[0]), m, "Transpose kernel", err);
}

// Slice: offsets 0, sizes = the output's dims.
int slice_map(const opdb_op_problem *p, CuMap *m, opdb_err *err) {
    if (opdb_cu_need(p, 1, 1, "Slice", err)) return -1;
    const opdb_tensor *in = &p->in[0], *out = &p->out[0];
    if (in->ndim != out->ndim || in->dtype != out->dtype)
        return opdb_cu_fail(err, "Slice: output rank/dtype differs from the input's");
    memset(m, 0, sizeof *m);
    contiguous_strides(in, m->stride);
    m->ndim = out->ndim;
    for (int d = 0; d < out->ndim; d++) {
        if (out->dims[d] > in->dims[d]) return opdb_cu_fail(err, "Slice: output dim %d exceeds the input", d);
        m->dims[d] = out->dims[d];
    }
    return 0;
}

int slice_launch(opdb_cu *cu, const opdb_op_problem *p, void *state, opdb_err *err) {
    (void)state;
    CuMap m;
    if (slice_map(p, &m, err)) return -1;
    return strided_copy(cu, p->in[0].data, p->out[0].data, opdb_cu_elem_size(p->in[0].dtype),
                        opdb_cu_numel(&p->out[0]), m, "Slice kernel", err);
}

// ---- GatherV2 and Index: out[i, :] = weight[idx[i] mod V, :] (row lookup).
template <typename T>
__global__ void k_gather(const T *w, int64_t vocab, int64_t row, const void *idx, opdb_dtype ti, T *out, int64_t n) {
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        int64_t r = i / row, c = i - r * row;
        int64_t v = cu_ld_index(idx, ti, r) % vocab;
        if (v < 0) v += vocab;
        out[i] = w[v * row + c];
    }
}

int gather_check(const opdb_op_problem *p, int64_t *row, opdb_err *err) {
    if (opdb_cu_need(p, 2, 1, "row gather", err)) return -1;
    const opdb_tensor *w = &p->in[0];
    *row = w->dims[0] > 0 ? opdb_cu_numel(w) / w->dims[0] : 0;
    if (w->dims[0] < 1 || opdb_cu_numel(&p->out[0]) != opdb_cu_numel(&p->in[1]) * *row ||
        w->dtype != p->out[0].dtype || opdb_cu_is_float(p->in[1].dtype))
        return opdb_cu_fail(err, "row gather: output must be indices x source rows, with integer indices");
    return 0;
}

int gather_launch(opdb_cu *cu, const opdb_op_problem *p, void *state, opdb_err *err) {
    (void)state;
    int64_t row;
    if (gather_check(p, &row, err)) return -1;
    const void *w = p->in[0].data, *idx = p->in[1].data;
    void *o = p->out[0].data;
    int64_t v = p->in[0].dims[0], n = opdb_cu_numel(&p->out[0]);
    opdb_dtype ti = p->in[1].dtype;
    unsigned grid = opdb_cu_grid(cu, n, BLOCK);
    CU_BY_ELEM_SIZE(opdb_cu_elem_size(p->in[0].dtype), "row gather",
                    k_gather<<<grid, BLOCK, 0, cu->stream>>>((const T *)w, v, row, idx, ti, (T *)o, n));
    return opdb_cu_check_launch("row gather kernel", err);
}

// ---- PadV3 (src/replay/ops/op_pad_v3.c): out has x's rank; each out
// element is x's at the same coordinates, or 0 beyond x's dims (a smaller
// out dim crops).
struct PadArgs {
    CuMap m;                        // out dims, x's strides
    int64_t in_dims[OPDB_MAX_DIMS];
};

template <typename T>
__global__ void k_pad(const T *in, T *out, int64_t n, PadArgs a) {
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        int64_t rest = i, off = 0;
        bool inside = true;
        for (int d = a.m.ndim - 1; d >= 0; d--) {
            int64_t q = rest / a.m.dims[d], c = rest - q * a.m.dims[d];
            inside = inside && c < a.in_dims[d];
            off += c * a.m.stride[d];
            rest = q;
        }
        out[i] = inside ? in[off] : (T)0;
    }
}

int pad_args(const opdb_op_problem *p, PadArgs *a, opdb_err *err) {
    if (opdb_cu_need(p, 1, 1, "PadV3", err)) return -1;
    const opdb_tensor *in = &p->in[0], *out = &p->out[0];
    if (in->ndim != out->ndim || in->dtype != out->dtype)
        return opdb_cu_fail(err, "PadV3: output rank/dtype differs from the input's");
    memset(a, 0, sizeof *a);
    contiguous_strides(in, a->m.stride);
    a->m.ndim = out->ndim;
    for (int d = 0; d < out->ndim; d++) {
        a->m.dims[d] = out->dims[d];
        a->in_dims[d] = in->dims[d];
    }
    return 0;
}

int pad_launch(opdb_cu *cu, const opdb_op_problem *p, void *state, opdb_err *err) {
    (void)state;
    PadArgs a;
    if (pad_args(p, &a, err)) return -1;
    int64_t n = opdb_cu_numel(&p->out[0]);
    unsigned grid = opdb_cu_grid(cu, n, BLOCK);
    const void *in = p->in[0].data;
    void *out = p->out[0].data;
    CU_BY_ELEM_SIZE(opdb_cu_elem_size(p->in[0].dtype), "PadV3",
                    k_pad<<<grid, BLOCK, 0, cu->stream>>>((const T *)in, (T *)out, n, a));
    return opdb_cu_check_launch("PadV3 kernel", err);
}

// ---- ScatterNdUpdate (src/replay/ops/op_scatter_nd_update.c): in place,
// data[idx[i] mod rows, :] = updates[i, :]; indices (N, 1).
template <typename T>
__global__ void k_scatter(T *data, int64_t rows, int64_t row, const void *idx, opdb_dtype ti, const T *upd,
                          int64_t n) {
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        int64_t r = i / row, c = i - r * row;
        int64_t v = cu_ld_index(idx, ti, r) % rows;
        if (v < 0) v += rows;
        data[v * row + c] = upd[i];
    }
}

int scatter_check(const opdb_op_problem *p, int64_t *row, opdb_err *err) {
    if (opdb_cu_need(p, 3, 0, "ScatterNdUpdate", err)) return -1;
    const opdb_tensor *data = &p->in[0], *idx = &p->in[1], *upd = &p->in[2];
    *row = data->dims[0] > 0 ? opdb_cu_numel(data) / data->dims[0] : 0;
    if (data->dims[0] < 1 || opdb_cu_numel(upd) != idx->dims[0] * *row || upd->dtype != data->dtype ||
        opdb_cu_is_float(idx->dtype))
        return opdb_cu_fail(err, "ScatterNdUpdate: updates must be indices x data rows of data's dtype");
    return 0;
}

int scatter_launch(opdb_cu *cu, const opdb_op_problem *p, void *state, opdb_err *err) {
    (void)state;
    int64_t row;
    if (scatter_check(p, &row, err)) return -1;
    void *data = p->in[0].data;
    const void *idx = p->in[1].data, *upd = p->in[2].data;
    int64_t rows = p->in[0].dims[0], n = opdb_cu_numel(&p->in[2]);
    opdb_dtype ti = p->in[1].dtype;
    unsigned grid = opdb_cu_grid(cu, n, BLOCK);
    CU_BY_ELEM_SIZE(opdb_cu_elem_size(p->in[0].dtype), "ScatterNdUpdate",
                    k_scatter<<<grid, BLOCK, 0, cu->stream>>>((T *)data, rows, row, idx, ti, (const T *)upd, n));
    return opdb_cu_check_launch("ScatterNdUpdate kernel", err);
}

}  // namespace

OPDB_CU_STATELESS(TensorMove, move_launch, opdb_cu_check_only<move_check>)
OPDB_CU_STATELESS(Transpose, transpose_launch, opdb_cu_check_made<CuMap, transpose_map>)
OPDB_CU_STATELESS(Slice, slice_launch, opdb_cu_check_made<CuMap, slice_map>)
OPDB_CU_STATELESS(GatherV2, gather_launch, opdb_cu_check_made<int64_t, gather_check>)
OPDB_CU_STATELESS(Index, gather_launch, opdb_cu_check_made<int64_t, gather_check>)
OPDB_CU_STATELESS(PadV3, pad_launch, opdb_cu_check_made<PadArgs, pad_args>)
OPDB_CU_STATELESS(ScatterNdUpdate, scatter_launch, opdb_cu_check_made<int64_t, scatter_check>)
