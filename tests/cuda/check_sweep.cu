// GEMM sweep through the backend's own MatMulV2 kernel (cuBLASLt): square
// M=N=K 256..8192 and LLM projection shapes in bf16/fp16/fp32, reporting the
// median of timed runs (L2 flushed before each) as TFLOP/s and as a fraction
// of the GPU's peak.
//
// Peak = FLOP per clock per SM (table below, dense, no sparsity) x SM count
// x the SM clock the runtime reports (cudaDevAttrClockRate, the maximum
// boost clock). Under sustained tensor-core load GPUs often run below that
// clock, so the fraction is a conservative lower bound on efficiency.
// fp16/bf16: tensor cores with fp32 accumulation; fp32: CUDA cores (no TF32).
#include <algorithm>
#include <stdio.h>
#include <string.h>
#include <vector>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "check.cuh"

namespace {

struct ArchPeak {
    int major, minor;
    const char *name;
    double tensor16;   // fp16/bf16 dense FLOP/clk/SM, fp32 accumulate (0: no bf16 tensor path)
    double bf16;       // same for bf16 (0: none)
    double fp32;       // FP32 FLOP/clk/SM (2 x FP32 lanes)
};

// Datacenter parts; consumer GPUs of the same arch run fp32-accumulate MMA at half rate.
const ArchPeak kPeaks[] = {
    {7, 5, "Turing (T4)", 1024, 0, 128},
    {8, 0, "Ampere (A100)", 2048, 2048, 128},
    {8, 6, "Ampere (A10/A40)", 1024, 1024, 256},
    {8, 9, "Ada (L4/L40)", 1024, 1024, 256},
    {9, 0, "Hopper (H100/H200)", 4096, 4096, 256},
    {10, 0, "Blackwell (B200)", 8192, 8192, 256},
};

const ArchPeak *find_peak(int major, int minor) {
    for (const ArchPeak &a : kPeaks)
        if (a.major == major && a.minor == minor) return &a;
    return NULL;
}

double peak_tflops(const ArchPeak *a, const opdb_cu_props &pr, opdb_dtype dt) {
    if (!a || pr.clock_khz <= 0) return 0;
    double per = dt == OPDB_DT_F32 ? a->fp32 : dt == OPDB_DT_BF16 ? a->bf16 : a->tensor16;
    return per * pr.sm_count * (double)pr.clock_khz * 1e3 / 1e12;
}

__global__ void k_fill(void *p, opdb_dtype dt, int64_t n, uint64_t seed) {
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        uint64_t z = (uint64_t)i * 0x9e3779b97f4a7c15ull + seed;
        z = (z ^ (z >> 31)) * 0xbf58476d1ce4e5b9ull;
        float v = (float)(z >> 40) * 0x1p-24f * 2.0f - 1.0f;   // [-1, 1): realistic switching power
        if (dt == OPDB_DT_F32) ((float *)p)[i] = v;
        else if (dt == OPDB_DT_F16) ((__half *)p)[i] = __float2half_rn(v);
        else ((__nv_bfloat16 *)p)[i] = __float2bfloat16_rn(v);
    }
}

struct Shape {
    const char *label;
    int64_t m, n, k;
};

int time_gemm(opdb_cu *cu, opdb_dtype dt, const Shape &s, int reps, double *median_us, opdb_err *err) {
    const opdb_cu_kernel *kern = opdb_cu_kernel_find("MatMulV2");
    size_t es = dt == OPDB_DT_F32 ? 4 : 2;
    opdb_op_problem p;
    memset(&p, 0, sizeof p);
    p.nin = 2;
    p.nout = 1;
    opdb_tensor *a = &p.in[0], *b = &p.in[1], *c = &p.out[0];
    a->ndim = b->ndim = c->ndim = 2;
    a->dims[0] = s.m, a->dims[1] = s.k;
    b->dims[0] = s.n, b->dims[1] = s.k;   // the CSV's (N, K) weight
    c->dims[0] = s.m, c->dims[1] = s.n;
    a->dtype = b->dtype = c->dtype = dt;
    int64_t *q = p.iparam;
    q[0] = 1, q[1] = s.m, q[2] = s.n, q[3] = s.k, q[4] = 1;
    int rc = 0;
    opdb_tensor *ts[3] = {a, b, c};
    for (opdb_tensor *t : ts) {
        int64_t n = t->dims[0] * t->dims[1];
        if (!rc) rc = opdb_cu_alloc(cu, (size_t)n * es, &t->data, err);
        if (!rc) {
            k_fill<<<1024, 256>>>(t->data, dt, n, 77);
            rc = cudaDeviceSynchronize() == cudaSuccess ? 0 : -1;
        }
    }
    void *state = NULL;
    if (!rc) rc = kern->check(&p, &p, err);
    if (!rc) rc = kern->prepare(cu, &p, &p, &state, err);
    std::vector<double> us;
    for (int i = 0; i < 3 && !rc; i++) rc = opdb_cu_run_sync(cu, kern, &p, state, err);   // warm-up
    for (int i = 0; i < reps && !rc; i++) {
        double t;
        opdb_cu_flush_l2(cu);
        rc = opdb_cu_timed(cu, kern, &p, state, &t, err);
        us.push_back(t);
    }
    if (state) kern->release(state);
    for (opdb_tensor *t : ts) opdb_cu_free(cu, t->data);
    if (rc) return -1;
    std::sort(us.begin(), us.end());
    *median_us = us[us.size() / 2];
    return 0;
}

}  // namespace

int gemm_sweep(opdb_cu *cu, bool quick) {
    opdb_cu_props pr;
    opdb_cu_get_props(cu, &pr);
    const ArchPeak *arch = find_peak(pr.major, pr.minor);
    printf("\nGEMM sweep (cuBLASLt via the MatMulV2 kernel; C(M,N) = A(M,K) . B(N,K)^T; median of timed runs,\n"
           "L2 flushed before each; peak = FLOP/clk/SM x %d SMs x %.0f MHz reported max clock, arch %s)\n",
           pr.sm_count, pr.clock_khz / 1e3, arch ? arch->name : "unknown: no peak");
    std::vector<Shape> shapes;
    for (int64_t n = 256; n <= (quick ? 2048 : 8192); n *= 2) shapes.push_back({"square", n, n, n});
    const Shape llm[] = {
        {"decode: 16 tok, Llama-3-8B qkv", 16, 6144, 4096},
        {"prefill 4096 tok, Llama-3-8B qkv", 4096, 6144, 4096},
        {"prefill 4096 tok, Llama-3-8B gate_up", 4096, 28672, 4096},
        {"prefill 4096 tok, Llama-3-8B down", 4096, 4096, 14336},
        {"prefill 4096 tok, Llama-3-70B down", 4096, 8192, 28672},
    };
    if (!quick)
        for (const Shape &s : llm) shapes.push_back(s);
    const opdb_dtype dts[3] = {OPDB_DT_BF16, OPDB_DT_F16, OPDB_DT_F32};
    const char *names[3] = {"bf16", "fp16", "fp32"};
    printf("%-5s %-38s %6s %6s %6s %11s %9s %9s %7s\n", "dtype", "shape", "M", "N", "K", "median_us", "TFLOP/s",
           "peak", "of_peak");
    int failures = 0;
    for (int d = 0; d < 3; d++) {
        double peak = peak_tflops(arch, pr, dts[d]);
        for (const Shape &s : shapes) {
            opdb_err err;
            memset(&err, 0, sizeof err);
            double us = 0;
            int reps = s.m * s.n * s.k > ((int64_t)1 << 36) ? 10 : 30;
            if (time_gemm(cu, dts[d], s, reps, &us, &err)) {
                printf("%-5s %-38s %6lld %6lld %6lld  error: %s\n", names[d], s.label, (long long)s.m,
                       (long long)s.n, (long long)s.k, err.msg);
                failures++;
                continue;
            }
            double tflops = 2.0 * (double)s.m * (double)s.n * (double)s.k / (us * 1e-6) / 1e12;
            printf("%-5s %-38s %6lld %6lld %6lld %11.1f %9.1f ", names[d], s.label, (long long)s.m, (long long)s.n,
                   (long long)s.k, us, tflops);
            if (peak > 0) printf("%9.1f %6.1f%%\n", peak, 100.0 * tflops / peak);
            else printf("%9s %7s\n", "n/a", "n/a");
        }
    }
    return failures;
}
