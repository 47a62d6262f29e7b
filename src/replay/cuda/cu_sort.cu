// Sort (src/replay/ops/op_sort.c): every row of the last dim sorted
// descending -> (values, int64 indices), ties in ascending index order, NaN
// first. One CUB segmented stable sort of (key, index) pairs over all rows;
// the index input (0..D-1 per row), the row offsets and CUB's scratch are
// made once in prepare(), so a launch is the sort alone.
#include <cub/device/device_segmented_sort.cuh>
#include <stdlib.h>
#include <string.h>

#include "cu_common.cuh"
#include "cu_kernels.cuh"

namespace {

struct SortState {
    int rows, n;
    int *offsets;           // rows + 1 row starts (device)
    int64_t *iota;          // 0..D-1 per row (device)
    void *temp;             // CUB scratch
    size_t temp_bytes;
};

void sort_release(void *state) {
    SortState *st = (SortState *)state;
    if (!st) return;
    cudaFree(st->offsets);
    cudaFree(st->iota);
    cudaFree(st->temp);
    free(st);
}

int sort_check(const opdb_op_problem *p, opdb_err *err) {
    if (opdb_cu_need(p, 1, 2, "Sort", err)) return -1;
    const opdb_tensor *x = &p->in[0];
    int64_t n = opdb_cu_numel(x);
    opdb_dtype dt = x->dtype;
    if (dt != OPDB_DT_F32 && dt != OPDB_DT_F16 && dt != OPDB_DT_BF16 && dt != OPDB_DT_F64)
        return opdb_cu_fail(err, "Sort: CUDA kernel sorts floating-point keys only");
    if (p->out[0].dtype != dt || opdb_cu_numel(&p->out[0]) != n || p->out[1].dtype != OPDB_DT_I64 ||
        opdb_cu_numel(&p->out[1]) != n)
        return opdb_cu_fail(err, "Sort: needs values of x's dtype and int64 indices, both of x's size");
    if (n >= INT32_MAX || opdb_cu_rows(x).cols < 1)
        return opdb_cu_fail(err, "Sort: %lld elements is beyond the CUDA kernel's 32-bit indexing", (long long)n);
    return 0;
}

__global__ void k_sort_setup(int64_t *iota, int *offsets, int rows, int cols) {
    int64_t n = (int64_t)rows * cols;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        iota[i] = i % cols;
        if (i % cols == 0) offsets[i / cols] = (int)i;
    }
    if (blockIdx.x == 0 && threadIdx.x == 0) offsets[rows] = (int)n;
}

// One call for both CUB phases: scratch size (temp NULL) and the sort.
template <typename K>
cudaError_t sort_call(void *temp, size_t &bytes, const opdb_op_problem *p, const SortState *st, cudaStream_t s) {
    return cub::DeviceSegmentedSort::StableSortPairsDescending(
        temp, bytes, (const K *)p->in[0].data, (K *)p->out[0].data, (const int64_t *)st->iota,
        (int64_t *)p->out[1].data, st->n, st->rows, st->offsets, st->offsets + 1, s);
}

cudaError_t sort_dispatch(void *temp, size_t &bytes, const opdb_op_problem *p, const SortState *st, cudaStream_t s) {
    switch (p->in[0].dtype) {
    case OPDB_DT_F32: return sort_call<float>(temp, bytes, p, st, s);
    case OPDB_DT_F16: return sort_call<__half>(temp, bytes, p, st, s);
    case OPDB_DT_BF16: return sort_call<__nv_bfloat16>(temp, bytes, p, st, s);
    default: return sort_call<double>(temp, bytes, p, st, s);
    }
}

int sort_prepare(opdb_cu *cu, const opdb_op_problem *p, const opdb_op_problem *host, void **state, opdb_err *err) {
    (void)host;
    SortState *st = (SortState *)calloc(1, sizeof *st);
    if (!st) return opdb_cu_fail(err, "out of host memory");
    CuRows r = opdb_cu_rows(&p->in[0]);
    st->rows = (int)r.rows, st->n = (int)(r.rows * r.cols);
    int rc = opdb_cu_alloc(cu, (size_t)(st->rows + 1) * sizeof(int), (void **)&st->offsets, err) ||
             opdb_cu_alloc(cu, (size_t)st->n * sizeof(int64_t), (void **)&st->iota, err);
    if (!rc && st->n > 0) {
        k_sort_setup<<<opdb_cu_grid(cu, st->n, 256), 256, 0, cu->stream>>>(st->iota, st->offsets, st->rows,
                                                                          (int)r.cols);
        rc = opdb_cu_check_launch("Sort setup kernel", err);
    }
    if (!rc) rc = opdb_cu_check(sort_dispatch(NULL, st->temp_bytes, p, st, cu->stream), "Sort scratch size", err);
    if (!rc) rc = opdb_cu_alloc(cu, st->temp_bytes, &st->temp, err);
    if (!rc) rc = opdb_cu_check(cudaStreamSynchronize(cu->stream), "Sort setup", err);
    if (rc) {
        sort_release(st);
        return -1;
    }
    *state = st;
    return 0;
}

int sort_launch(opdb_cu *cu, const opdb_op_problem *p, void *state, opdb_err *err) {
    SortState *st = (SortState *)state;
    if (st->n == 0) return 0;
    size_t bytes = st->temp_bytes;
    return opdb_cu_check(sort_dispatch(st->temp, bytes, p, st, cu->stream), "Sort (CUB segmented sort)", err);
}

}  // namespace

const opdb_cu_kernel opdb_cu_k_Sort = {"Sort", opdb_cu_check_only<sort_check>, sort_prepare, sort_launch,
                                       sort_release};
