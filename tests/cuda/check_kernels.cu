// Correctness of every CUDA replay kernel against a naive host computation
// in double precision on small random inputs (per-dtype error bounds).
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check.cuh"

namespace {

// Naive row-major C[b] = A[b] . op(B[b]); B (N, K) when trans_b, else (K, N); bs 0 = shared B.
std::vector<double> ref_gemm(const opdb_tensor &a, const opdb_tensor &b, int64_t batch, int64_t m, int64_t n,
                             int64_t k, bool trans_b, bool shared_b) {
    std::vector<double> c((size_t)(batch * m * n));
    for (int64_t z = 0; z < batch; z++)
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) {
                double s = 0;
                int64_t bo = shared_b ? 0 : z * k * n;
                for (int64_t q = 0; q < k; q++)
                    s += hget(a, z * m * k + i * k + q) * hget(b, bo + (trans_b ? j * k + q : q * n + j));
                c[(size_t)(z * m * n + i * n + j)] = s;
            }
    return c;
}

const char *dt_name(opdb_dtype dt) {
    return dt == OPDB_DT_F32 ? "f32" : dt == OPDB_DT_F16 ? "f16" : dt == OPDB_DT_BF16 ? "bf16" : "int";
}

void check_matmul(opdb_cu *cu, opdb_dtype dt, bool trans_b, bool record) {
    const int64_t m = 37, n = 40, k = 72;
    HostCase c;
    c.add_in(dt, {m, k});
    if (trans_b) c.add_in(dt, {n, k});
    else c.add_in(dt, {k, n});
    c.add_out(dt, {m, n});
    if (record) c.gemm_record(1, m, n, k, trans_b);
    c.fill(11);
    char name[96];
    snprintf(name, sizeof name, "MatMulV2 %s %s B, %s", dt_name(dt), trans_b ? "(N,K)" : "(K,N)",
             record ? "GEMM record" : "shapes only");
    if (check_run(cu, "MatMulV2", c, name))
        check_expect(name, c.p.out[0], ref_gemm(c.p.in[0], c.p.in[1], 1, m, n, k, trans_b, false), tol_for(dt));
}

void check_batched(opdb_cu *cu, opdb_dtype dt, bool shared) {
    const int64_t bt = 3, m = 16, n = 24, k = 32;
    HostCase c;
    c.add_in(dt, {bt, m, k});
    if (shared) c.add_in(dt, {n, k});
    else c.add_in(dt, {bt, n, k});
    c.add_out(dt, {bt, m, n});
    c.gemm_record(bt, m, n, k, true);
    c.fill(12);
    const char *name = shared ? "BatchMatMulV2 shared weight (folded)" : "BatchMatMulV2 strided batched";
    if (check_run(cu, "BatchMatMulV2", c, name))
        check_expect(name, c.p.out[0], ref_gemm(c.p.in[0], c.p.in[1], bt, m, n, k, true, shared), tol_for(dt));
}

void check_tbmm(opdb_cu *cu, opdb_dtype dt) {
    const int64_t bt = 4, m = 8, k = 128, n = 256;
    HostCase c;
    c.add_in(dt, {bt, m, k});
    c.add_in(dt, {bt, k, n});
    c.add_out(dt, {m, bt, n});
    c.fill(13);
    if (!check_run(cu, "TransposeBatchMatMul", c, "TransposeBatchMatMul (B,M,K)x(B,K,N)->(M,B,N)")) return;
    std::vector<double> bmm = ref_gemm(c.p.in[0], c.p.in[1], bt, m, n, k, false, false), ref(bmm.size());
    for (int64_t z = 0; z < bt; z++)
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) ref[(size_t)((i * bt + z) * n + j)] = bmm[(size_t)((z * m + i) * n + j)];
    check_expect("TransposeBatchMatMul (B,M,K)x(B,K,N)->(M,B,N)", c.p.out[0], ref, tol_for(dt));
}

// As src/replay/ops/op_grouped_matmul.c plans it: x, weight, [scale], group
// list (cumulative row ends, clamped to M), [per-token scale]; iparam =
// M, N, K, groups. Uneven groups, and a list ending past M.
void check_grouped(opdb_cu *cu, bool shared) {
    const int64_t t = 20, k = 32, n = 48, g = 3;
    const int64_t ends[3] = {5, 9, shared ? 25 : 20};
    HostCase c;
    c.add_in(OPDB_DT_BF16, {t, k});
    if (shared) c.add_in(OPDB_DT_BF16, {k, n});
    else c.add_in(OPDB_DT_BF16, {g + 1, k, n});   // more experts than groups
    c.add_absent_in();
    c.add_in(shared ? OPDB_DT_I32 : OPDB_DT_I64, {g});
    c.add_absent_in();
    c.add_out(OPDB_DT_BF16, {t, n});
    int64_t *q = c.p.iparam;
    q[0] = t, q[1] = n, q[2] = k, q[3] = g;
    c.fill(14);
    for (int64_t i = 0; i < g; i++) hset(c.p.in[3], i, (double)ends[i]);
    const char *name =
        shared ? "GroupedMatmul bf16 shared (K,N), int32 list" : "GroupedMatmul bf16 (G,K,N), int64 list";
    if (!check_run(cu, "GroupedMatmul", c, name)) return;
    std::vector<double> ref((size_t)(t * n));
    for (int64_t grp = 0, lo = 0; grp < g; lo = ends[grp], grp++)
        for (int64_t i = lo; i < (ends[grp] < t ? ends[grp] : t); i++)
            for (int64_t j = 0; j < n; j++) {
                double s = 0;
                for (int64_t z = 0; z < k; z++)
                    s += hget(c.p.in[0], i * k + z) * hget(c.p.in[1], ((shared ? 0 : grp) * k + z) * n + j);
                ref[(size_t)(i * n + j)] = s;
            }
    check_expect(name, c.p.out[0], ref, tol_for(OPDB_DT_BF16));
}

void check_add(opdb_cu *cu) {
    {
        HostCase c;
        c.add_in(OPDB_DT_F16, {6, 50});
        c.add_in(OPDB_DT_F16, {6, 50});
        c.add_out(OPDB_DT_F16, {6, 50});
        c.fill(21);
        std::vector<double> ref(300);
        if (check_run(cu, "Add", c, "Add f16 same shape")) {
            for (int i = 0; i < 300; i++) ref[(size_t)i] = hget(c.p.in[0], i) + hget(c.p.in[1], i);
            check_expect("Add f16 same shape", c.p.out[0], ref, tol_for(OPDB_DT_F16));
        }
    }
    {
        HostCase c;
        c.add_in(OPDB_DT_F32, {4, 1, 5});
        c.add_in(OPDB_DT_BF16, {3, 1});
        c.add_out(OPDB_DT_F32, {4, 3, 5});
        c.fill(22);
        if (check_run(cu, "Add", c, "Add broadcast (4,1,5)+(3,1)")) {
            std::vector<double> ref(60);
            for (int i = 0; i < 4; i++)
                for (int j = 0; j < 3; j++)
                    for (int q = 0; q < 5; q++)
                        ref[(size_t)((i * 3 + j) * 5 + q)] = hget(c.p.in[0], i * 5 + q) + hget(c.p.in[1], j);
            check_expect("Add broadcast (4,1,5)+(3,1)", c.p.out[0], ref, tol_for(OPDB_DT_F32));
        }
    }
    {
        HostCase c;
        c.add_in(OPDB_DT_BF16, {7, 9});
        c.add_out(OPDB_DT_BF16, {7, 9});
        c.fill(23);
        if (check_run(cu, "Add", c, "Add one input (+1)")) {
            std::vector<double> ref(63);
            for (int i = 0; i < 63; i++) ref[(size_t)i] = hget(c.p.in[0], i) + 1.0;
            check_expect("Add one input (+1)", c.p.out[0], ref, tol_for(OPDB_DT_BF16));
        }
    }
}

void check_rmsnorm(opdb_cu *cu) {
    const int64_t rows = 6, d = 100;
    HostCase c;
    c.add_in(OPDB_DT_BF16, {rows, d});
    c.add_in(OPDB_DT_F32, {d});
    c.add_out(OPDB_DT_BF16, {rows, d});
    c.add_out(OPDB_DT_F32, {rows, 1});
    c.p.fparam[0] = 1e-5;   // src/replay/ops/op_rms_norm.c: eps, and gamma's size in iparam[0]
    c.p.iparam[0] = d;
    c.fill(31);
    if (!check_run(cu, "RmsNorm", c, "RmsNorm bf16 x, f32 gamma")) return;
    std::vector<double> y((size_t)(rows * d)), rstd((size_t)rows);
    for (int64_t r = 0; r < rows; r++) {
        double ss = 0;
        for (int64_t j = 0; j < d; j++) ss += hget(c.p.in[0], r * d + j) * hget(c.p.in[0], r * d + j);
        rstd[(size_t)r] = 1.0 / sqrt(ss / (double)d + 1e-5);
        for (int64_t j = 0; j < d; j++)
            y[(size_t)(r * d + j)] = hget(c.p.in[0], r * d + j) * rstd[(size_t)r] * hget(c.p.in[1], j);
    }
    check_expect("RmsNorm bf16 x, f32 gamma: y", c.p.out[0], y, tol_for(OPDB_DT_BF16));
    check_expect("RmsNorm bf16 x, f32 gamma: rstd", c.p.out[1], rstd, tol_for(OPDB_DT_F32));
}

void check_swiglu(opdb_cu *cu) {
    const int64_t rows = 5, h = 33;
    HostCase c;
    c.add_in(OPDB_DT_F32, {rows, 2 * h});
    c.add_out(OPDB_DT_F32, {rows, h});
    c.fill(41);
    if (!check_run(cu, "SwiGlu", c, "SwiGlu f32")) return;
    std::vector<double> ref((size_t)(rows * h));
    for (int64_t r = 0; r < rows; r++)
        for (int64_t j = 0; j < h; j++) {
            double a = hget(c.p.in[0], r * 2 * h + j), b = hget(c.p.in[0], r * 2 * h + h + j);
            ref[(size_t)(r * h + j)] = a / (1.0 + exp(-a)) * b;
        }
    check_expect("SwiGlu f32", c.p.out[0], ref, tol_for(OPDB_DT_F32));
}

void check_softmax(opdb_cu *cu) {
    const int64_t rows = 7, d = 300;
    HostCase c;
    c.add_in(OPDB_DT_F16, {rows, d});
    c.add_out(OPDB_DT_F16, {rows, d});
    c.fill(51);
    if (!check_run(cu, "SoftmaxV2", c, "SoftmaxV2 f16")) return;
    std::vector<double> ref((size_t)(rows * d));
    for (int64_t r = 0; r < rows; r++) {
        double mx = -INFINITY, s = 0;
        for (int64_t j = 0; j < d; j++) mx = fmax(mx, hget(c.p.in[0], r * d + j));
        for (int64_t j = 0; j < d; j++) s += exp(hget(c.p.in[0], r * d + j) - mx);
        for (int64_t j = 0; j < d; j++) ref[(size_t)(r * d + j)] = exp(hget(c.p.in[0], r * d + j) - mx) / s;
    }
    check_expect("SoftmaxV2 f16", c.p.out[0], ref, tol_for(OPDB_DT_F16));
}

void check_gather(opdb_cu *cu) {
    const int64_t vocab = 10, d = 16;
    HostCase c;
    c.add_in(OPDB_DT_BF16, {vocab, d});
    c.add_in(OPDB_DT_I64, {3, 4});
    c.add_out(OPDB_DT_BF16, {3, 4, d});
    c.fill(61);
    hset(c.p.in[1], 5, 9);   // the last row, beyond the default fill's [0, 8)
    if (!check_run(cu, "GatherV2", c, "GatherV2 bf16, int64 indices")) return;
    std::vector<double> ref((size_t)(12 * d));
    for (int64_t i = 0; i < 12; i++)
        for (int64_t j = 0; j < d; j++) ref[(size_t)(i * d + j)] = hget(c.p.in[0], (int64_t)hget(c.p.in[1], i) * d + j);
    check_expect("GatherV2 bf16, int64 indices", c.p.out[0], ref, 0);
}

void check_move(opdb_cu *cu) {
    HostCase c;
    c.add_in(OPDB_DT_I32, {1000});
    c.add_out(OPDB_DT_I32, {1000});
    c.fill(71);
    if (!check_run(cu, "TensorMove", c, "TensorMove int32")) return;
    std::vector<double> ref(1000);
    for (int i = 0; i < 1000; i++) ref[(size_t)i] = hget(c.p.in[0], i);
    check_expect("TensorMove int32", c.p.out[0], ref, 0);
}

// Transpose of in (a0..a3) swapping axes x and y, checked element by element.
void check_transpose4(opdb_cu *cu) {
    const int64_t d[4] = {2, 3, 4, 5};
    HostCase c;
    c.add_in(OPDB_DT_F32, {2, 3, 4, 5});
    c.add_out(OPDB_DT_F32, {2, 5, 4, 3});   // first differing axes: 1 and 3
    c.fill(81);
    if (!check_run(cu, "Transpose", c, "Transpose (2,3,4,5)->(2,5,4,3)")) return;
    std::vector<double> ref(120);
    for (int64_t a = 0; a < d[0]; a++)
        for (int64_t b = 0; b < d[1]; b++)
            for (int64_t e = 0; e < d[2]; e++)
                for (int64_t f = 0; f < d[3]; f++)
                    ref[(size_t)(((a * d[3] + f) * d[2] + e) * d[1] + b)] =
                        hget(c.p.in[0], ((a * d[1] + b) * d[2] + e) * d[3] + f);
    check_expect("Transpose (2,3,4,5)->(2,5,4,3)", c.p.out[0], ref, 0);
}

void check_transpose2(opdb_cu *cu) {
    HostCase c;
    c.add_in(OPDB_DT_BF16, {6, 7});
    c.add_out(OPDB_DT_BF16, {7, 6});
    c.fill(82);
    if (!check_run(cu, "Transpose", c, "Transpose bf16 (6,7)->(7,6)")) return;
    std::vector<double> ref(42);
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 7; j++) ref[(size_t)(j * 6 + i)] = hget(c.p.in[0], i * 7 + j);
    check_expect("Transpose bf16 (6,7)->(7,6)", c.p.out[0], ref, 0);
}

// The plan's axes (iparam) decide even when the swapped dims are equal.
void check_transpose_axes(opdb_cu *cu) {
    HostCase c;
    c.add_in(OPDB_DT_F16, {4, 3, 4});
    c.add_out(OPDB_DT_F16, {4, 3, 4});
    c.p.iparam[0] = 0, c.p.iparam[1] = 2;
    c.fill(83);
    if (!check_run(cu, "Transpose", c, "Transpose (4,3,4) axes (0,2) from iparam")) return;
    std::vector<double> ref(48);
    for (int a = 0; a < 4; a++)
        for (int b = 0; b < 3; b++)
            for (int e = 0; e < 4; e++) ref[(size_t)((e * 3 + b) * 4 + a)] = hget(c.p.in[0], (a * 3 + b) * 4 + e);
    check_expect("Transpose (4,3,4) axes (0,2) from iparam", c.p.out[0], ref, 0);
}

void check_slice(opdb_cu *cu) {
    HostCase c;
    c.add_in(OPDB_DT_F16, {5, 8, 3});
    c.add_out(OPDB_DT_F16, {2, 8, 1});
    c.fill(91);
    if (!check_run(cu, "Slice", c, "Slice (5,8,3)->(2,8,1)")) return;
    std::vector<double> ref(16);
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 8; j++) ref[(size_t)(i * 8 + j)] = hget(c.p.in[0], (i * 8 + j) * 3);
    check_expect("Slice (5,8,3)->(2,8,1)", c.p.out[0], ref, 0);
}

void check_masked_fill(opdb_cu *cu, bool in_place) {
    HostCase c;
    c.add_in(in_place ? OPDB_DT_F32 : OPDB_DT_BF16, {4, 6, 8});
    c.add_in(OPDB_DT_BOOL, {6, 8});
    if (!in_place) c.add_out(OPDB_DT_BF16, {4, 6, 8});
    c.fill(101);
    std::vector<double> ref(192);
    for (int i = 0; i < 192; i++) ref[(size_t)i] = hget(c.p.in[1], i % 48) != 0 ? 0.0 : hget(c.p.in[0], i);
    const char *name = in_place ? "MaskedFill in place, broadcast mask" : "MaskedFill into an output";
    if (check_run(cu, "MaskedFill", c, name)) check_expect(name, in_place ? c.p.in[0] : c.p.out[0], ref, 0);
}

void check_argmax(opdb_cu *cu, opdb_dtype in, opdb_dtype out) {
    const int64_t rows = 9, d = 500;
    HostCase c;
    c.add_in(in, {rows, d});
    c.add_out(out, {rows});
    c.fill(111);
    for (int64_t r = 0; r < rows; r++) {   // ties: the first index wins
        hset(c.p.in[0], r * d + 37 + r * 40, 2.0);
        hset(c.p.in[0], r * d + 450, 2.0);
    }
    const char *name = out == OPDB_DT_I64 ? "ArgMaxV2 f32 -> int64 (ties)" : "ArgMaxV2 bf16 -> int32 (ties)";
    if (!check_run(cu, "ArgMaxV2", c, name)) return;
    std::vector<double> ref((size_t)rows);
    for (int64_t r = 0; r < rows; r++) {
        int64_t best = 0;
        for (int64_t j = 1; j < d; j++)
            if (hget(c.p.in[0], r * d + j) > hget(c.p.in[0], r * d + best)) best = j;
        ref[(size_t)r] = (double)best;
    }
    check_expect(name, c.p.out[0], ref, 0);
}

void check_dynquant(opdb_cu *cu) {
    const int64_t rows = 8, d = 64;
    HostCase c;
    c.add_in(OPDB_DT_F16, {rows, d});
    c.add_out(OPDB_DT_I8, {rows, d});
    c.add_out(OPDB_DT_F32, {rows});
    c.fill(121);
    if (!check_run(cu, "DynamicQuant", c, "DynamicQuant f16 -> int8")) return;
    std::vector<double> y((size_t)(rows * d)), scale((size_t)rows);
    for (int64_t r = 0; r < rows; r++) {
        double mx = 0;
        for (int64_t j = 0; j < d; j++) mx = fmax(mx, fabs(hget(c.p.in[0], r * d + j)));
        scale[(size_t)r] = mx / 127.0;
        for (int64_t j = 0; j < d; j++)
            y[(size_t)(r * d + j)] = nearbyint(hget(c.p.in[0], r * d + j) / scale[(size_t)r]);
    }
    // One int8 step where fp32 and double round a .5 boundary differently.
    check_expect("DynamicQuant f16 -> int8: y", c.p.out[0], y, 1.0 / 127.0);
    check_expect("DynamicQuant f16 -> int8: scale", c.p.out[1], scale, tol_for(OPDB_DT_F32));
}

// A problem the kernel must refuse (shapes that do not chain).
void check_refusal(opdb_cu *cu) {
    HostCase c;
    c.add_in(OPDB_DT_F32, {4, 8});
    c.add_in(OPDB_DT_F32, {5, 7});
    c.add_out(OPDB_DT_F32, {4, 5});
    c.fill(131);
    opdb_err err;
    memset(&err, 0, sizeof err);
    bool refused = run_case(cu, "MatMulV2", c, &err) != 0 && err.msg[0];
    printf("  %-4s %-44s %s\n", refused ? "ok" : "FAIL", "MatMulV2 refuses (4,8)x(5,7)", err.msg);
    if (!refused) g_check_failures++;
}

}  // namespace

int check_kernels(opdb_cu *cu) {
    printf("kernel correctness (vs naive host computation in double):\n");
    const opdb_dtype fdt[3] = {OPDB_DT_F32, OPDB_DT_F16, OPDB_DT_BF16};
    for (opdb_dtype dt : fdt) {
        check_matmul(cu, dt, true, true);
        check_matmul(cu, dt, false, false);
    }
    check_matmul(cu, OPDB_DT_BF16, true, false);
    check_batched(cu, OPDB_DT_F16, false);
    check_batched(cu, OPDB_DT_BF16, true);
    check_tbmm(cu, OPDB_DT_BF16);
    check_grouped(cu, false);
    check_grouped(cu, true);
    check_add(cu);
    check_rmsnorm(cu);
    check_swiglu(cu);
    check_softmax(cu);
    check_gather(cu);
    check_move(cu);
    check_transpose4(cu);
    check_transpose2(cu);
    check_transpose_axes(cu);
    check_slice(cu);
    check_masked_fill(cu, true);
    check_masked_fill(cu, false);
    check_argmax(cu, OPDB_DT_F32, OPDB_DT_I64);
    check_argmax(cu, OPDB_DT_BF16, OPDB_DT_I32);
    check_dynquant(cu);
    check_refusal(cu);
    check_more_kernels(cu);
    return g_check_failures;
}
