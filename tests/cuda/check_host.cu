// Host side of opdb_cuda_check: buffers, element access, one kernel run,
// comparisons. Uses no libopdb function (the check needs only the toolkit).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check.cuh"
#include "replay/cuda/cu_common.cuh"

static size_t esize(opdb_dtype dt) { return opdb_cu_elem_size(dt); }

int64_t numel(const opdb_tensor &t) { return opdb_cu_numel(&t); }

uint64_t splitmix(uint64_t *s) {
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

double hget(const opdb_tensor &t, int64_t i) {
    const void *p = t.data;
    switch (t.dtype) {
    case OPDB_DT_F32: return ((const float *)p)[i];
    case OPDB_DT_F16: return __half2float(((const __half *)p)[i]);
    case OPDB_DT_BF16: return __bfloat162float(((const __nv_bfloat16 *)p)[i]);
    case OPDB_DT_F64: return ((const double *)p)[i];
    case OPDB_DT_I8: return ((const int8_t *)p)[i];
    case OPDB_DT_U8:
    case OPDB_DT_BOOL: return ((const uint8_t *)p)[i];
    case OPDB_DT_I16: return ((const int16_t *)p)[i];
    case OPDB_DT_I32: return ((const int32_t *)p)[i];
    case OPDB_DT_I64: return (double)((const int64_t *)p)[i];
    default: return 0;
    }
}

void hset(opdb_tensor &t, int64_t i, double v) {
    void *p = t.data;
    switch (t.dtype) {
    case OPDB_DT_F32: ((float *)p)[i] = (float)v; break;
    case OPDB_DT_F16: ((__half *)p)[i] = __float2half_rn((float)v); break;
    case OPDB_DT_BF16: ((__nv_bfloat16 *)p)[i] = __float2bfloat16_rn((float)v); break;
    case OPDB_DT_F64: ((double *)p)[i] = v; break;
    case OPDB_DT_I8: ((int8_t *)p)[i] = (int8_t)v; break;
    case OPDB_DT_U8:
    case OPDB_DT_BOOL: ((uint8_t *)p)[i] = (uint8_t)v; break;
    case OPDB_DT_I16: ((int16_t *)p)[i] = (int16_t)v; break;
    case OPDB_DT_I32: ((int32_t *)p)[i] = (int32_t)v; break;
    case OPDB_DT_I64: ((int64_t *)p)[i] = (int64_t)v; break;
    default: break;
    }
}

double hround(opdb_dtype dt, double v) {
    uint64_t cell = 0;
    opdb_tensor t;
    memset(&t, 0, sizeof t);
    t.ndim = 1, t.dims[0] = 1, t.dtype = dt, t.data = &cell;
    hset(t, 0, v);
    return hget(t, 0);
}

HostCase::HostCase() { memset(&p, 0, sizeof p); }

static opdb_tensor &add_tensor(opdb_tensor *slots, int *count, std::vector<std::vector<unsigned char>> &bufs,
                               opdb_dtype dt, std::initializer_list<int64_t> dims) {
    opdb_tensor &t = slots[*count];
    memset(&t, 0, sizeof t);
    t.dtype = dt;
    for (int64_t d : dims) t.dims[t.ndim++] = d;
    bufs.emplace_back((size_t)numel(t) * esize(dt) + 1, 0);
    (*count)++;
    for (int i = 0; i < *count; i++)   // emplace may move buffers
        slots[i].data = slots[i].ndim > 0 ? bufs[(size_t)i].data() : NULL;
    return t;
}

opdb_tensor &HostCase::add_in(opdb_dtype dt, std::initializer_list<int64_t> dims) {
    return add_tensor(p.in, &p.nin, in, dt, dims);
}

opdb_tensor &HostCase::add_out(opdb_dtype dt, std::initializer_list<int64_t> dims) {
    return add_tensor(p.out, &p.nout, out, dt, dims);
}

void HostCase::add_absent_in() {
    memset(&p.in[p.nin], 0, sizeof p.in[p.nin]);
    in.emplace_back(1, 0);
    p.nin++;
    for (int i = 0; i < p.nin; i++) p.in[i].data = p.in[i].ndim > 0 ? in[(size_t)i].data() : NULL;
}

void HostCase::fill(uint64_t seed) {
    for (int s = 0; s < p.nin; s++) {
        opdb_tensor &t = p.in[s];
        for (int64_t i = 0; i < numel(t); i++) {
            uint64_t r = splitmix(&seed);
            if (opdb_cu_is_float(t.dtype)) hset(t, i, (double)(r >> 11) * 0x1p-52 - 1.0);
            else if (t.dtype == OPDB_DT_BOOL) hset(t, i, (double)(r & 1));
            else hset(t, i, (double)(r % 8));
        }
    }
}

void HostCase::gemm_record(int64_t batch, int64_t m, int64_t n, int64_t k, bool trans_b, int64_t c_ld,
                           int64_t c_stride) {
    int64_t *q = p.iparam;
    q[0] = batch, q[1] = m, q[2] = n, q[3] = k, q[4] = trans_b, q[5] = c_ld, q[6] = c_stride;
}

static size_t bytes_of(const opdb_tensor &t) { return (size_t)numel(t) * esize(t.dtype); }

static void free_dev(opdb_cu *cu, opdb_op_problem &d) {
    for (int i = 0; i < d.nin; i++) opdb_cu_free(cu, d.in[i].data);
    for (int i = 0; i < d.nout; i++) opdb_cu_free(cu, d.out[i].data);
}

int run_case(opdb_cu *cu, const char *op, HostCase &c, opdb_err *err) {
    const opdb_cu_kernel *k = opdb_cu_kernel_find(op);
    if (!k) {
        snprintf(err->msg, sizeof err->msg, "no CUDA kernel named %s", op);
        err->code = OPDB_ERR_RUNTIME;
        return -1;
    }
    opdb_op_problem d = c.p;
    for (int i = 0; i < OPDB_MAX_TENSORS; i++) d.in[i].data = d.out[i].data = NULL;
    int rc = 0;
    for (int i = 0; i < d.nin && !rc; i++)
        if (c.p.in[i].ndim > 0)
            rc = opdb_cu_alloc(cu, bytes_of(c.p.in[i]), &d.in[i].data, err) ||
                 opdb_cu_upload(cu, d.in[i].data, c.p.in[i].data, bytes_of(c.p.in[i]), err);
    for (int i = 0; i < d.nout && !rc; i++)
        rc = opdb_cu_alloc(cu, bytes_of(c.p.out[i]), &d.out[i].data, err) ||
             opdb_cu_memset(cu, d.out[i].data, 0xff, bytes_of(c.p.out[i]), err);   // poison: unwritten shows
    void *state = NULL;
    if (!rc) rc = k->check(&d, &c.p, err);
    if (!rc) rc = k->prepare(cu, &d, &c.p, &state, err);
    if (!rc) rc = opdb_cu_run_sync(cu, k, &d, state, err);
    if (!rc) {
        // Once more the way the backend times it (L2 flush, held stream, events); every
        // kernel here is idempotent, so the result is unchanged. No timing is judged,
        // only that the path works and yields a duration.
        double us = -1;
        opdb_cu_flush_l2(cu);
        rc = opdb_cu_timed(cu, k, &d, state, &us, err);
        if (!rc && !(us >= 0 && us < 1e7)) {
            snprintf(err->msg, sizeof err->msg, "timed run returned %g us", us);
            err->code = OPDB_ERR_RUNTIME;
            rc = -1;
        }
        // And as a batch of back-to-back launches (the backend's default for
        // short kernels), rotating over two sets; the result is still checked.
        const opdb_op_problem *sets[2] = {&d, &d};
        if (!rc) rc = opdb_cu_timed_batch(cu, k, sets, 2, 8, state, &us, err);
        if (!rc && !(us >= 0 && us < 1e7)) {
            snprintf(err->msg, sizeof err->msg, "batched timed run returned %g us per launch", us);
            err->code = OPDB_ERR_RUNTIME;
            rc = -1;
        }
    }
    if (state) k->release(state);
    for (int i = 0; i < d.nin && !rc; i++)
        if (c.p.in[i].ndim > 0) rc = opdb_cu_download(cu, c.p.in[i].data, d.in[i].data, bytes_of(c.p.in[i]), err);
    for (int i = 0; i < d.nout && !rc; i++)
        rc = opdb_cu_download(cu, c.p.out[i].data, d.out[i].data, bytes_of(c.p.out[i]), err);
    free_dev(cu, d);
    return rc ? -1 : 0;
}

double tol_for(opdb_dtype dt) {
    switch (dt) {
    case OPDB_DT_F32: return 1e-5;
    case OPDB_DT_F16: return 2e-3;
    case OPDB_DT_BF16: return 1.6e-2;
    default: return 0;   // integers: exact
    }
}

bool expect_close(const char *name, const opdb_tensor &got, const std::vector<double> &ref, double tol) {
    double max_ref = 0, max_err = 0;
    int64_t worst = 0;
    for (size_t i = 0; i < ref.size(); i++) {
        double g = hget(got, (int64_t)i), e = fabs(g - ref[i]);
        if (!(e <= max_err)) {   // also catches NaN
            max_err = isnan(e) ? INFINITY : e;
            worst = (int64_t)i;
        }
        if (fabs(ref[i]) > max_ref) max_ref = fabs(ref[i]);
    }
    double rel = max_ref > 0 ? max_err / max_ref : max_err;
    bool ok = (int64_t)ref.size() == numel(got) && rel <= tol;
    printf("  %-4s %-44s max rel err %.3g (bound %.3g)", ok ? "ok" : "FAIL", name, rel, tol);
    if (!ok && !ref.empty())
        printf(" worst [%lld]: got %.6g want %.6g", (long long)worst, hget(got, worst), ref[(size_t)worst]);
    printf("\n");
    return ok;
}

int g_check_failures;

bool check_run(opdb_cu *cu, const char *op, HostCase &c, const char *name) {
    opdb_err err;
    memset(&err, 0, sizeof err);
    if (run_case(cu, op, c, &err) == 0) return true;
    printf("  FAIL %-44s %s\n", name, err.msg);
    g_check_failures++;
    return false;
}

void check_expect(const char *name, const opdb_tensor &got, const std::vector<double> &ref, double tol) {
    if (!expect_close(name, got, ref, tol)) g_check_failures++;
}
