// Correctness of the CUDA kernels beyond the brief's list (Sort, Index, PadV3,
// ScatterNdUpdate, AscendQuantV2, InterleaveRope, AddRmsNormBias), laid
// out as their plans in src/replay/ops/ lay them out.
#include <algorithm>
#include <math.h>
#include <stdio.h>

#include "check.cuh"

namespace {

void check_index(opdb_cu *cu) {
    HostCase c;
    c.add_in(OPDB_DT_F16, {9, 5, 2});
    c.add_in(OPDB_DT_I32, {6});
    c.add_out(OPDB_DT_F16, {6, 5, 2});
    c.fill(201);
    for (int i = 0; i < 6; i++) hset(c.p.in[1], i, i);   // op_index.c's fill: 0..L-1
    if (!check_run(cu, "Index", c, "Index f16 rows 0..5 of 9")) return;
    std::vector<double> ref(60);
    for (int i = 0; i < 60; i++) ref[(size_t)i] = hget(c.p.in[0], i);
    check_expect("Index f16 rows 0..5 of 9", c.p.out[0], ref, 0);
}

void check_pad(opdb_cu *cu) {
    HostCase c;
    c.add_in(OPDB_DT_BF16, {2, 3, 5});
    c.add_out(OPDB_DT_BF16, {2, 4, 3});   // pad dim 1, crop dim 2
    c.fill(202);
    if (!check_run(cu, "PadV3", c, "PadV3 (2,3,5)->(2,4,3)")) return;
    std::vector<double> ref(24);
    for (int a = 0; a < 2; a++)
        for (int b = 0; b < 4; b++)
            for (int e = 0; e < 3; e++)
                ref[(size_t)((a * 4 + b) * 3 + e)] = b < 3 ? hget(c.p.in[0], (a * 3 + b) * 5 + e) : 0.0;
    check_expect("PadV3 (2,3,5)->(2,4,3)", c.p.out[0], ref, 0);
}

void check_scatter(opdb_cu *cu) {
    const int rows = 10, d = 6, n = 4;
    const int idx[n] = {7, 2, 9, 0};
    HostCase c;
    c.add_in(OPDB_DT_F32, {rows, d});
    c.add_in(OPDB_DT_I32, {n, 1});
    c.add_in(OPDB_DT_F32, {n, d});
    c.fill(203);
    for (int i = 0; i < n; i++) hset(c.p.in[1], i, idx[i]);
    std::vector<double> ref((size_t)(rows * d));
    for (int i = 0; i < rows * d; i++) ref[(size_t)i] = hget(c.p.in[0], i);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < d; j++) ref[(size_t)(idx[i] * d + j)] = hget(c.p.in[2], i * d + j);
    if (check_run(cu, "ScatterNdUpdate", c, "ScatterNdUpdate in place"))
        check_expect("ScatterNdUpdate in place", c.p.in[0], ref, 0);
}

void check_ascend_quant(opdb_cu *cu, bool offset) {
    const int rows = 5, d = 24;
    HostCase c;
    c.add_in(OPDB_DT_BF16, {rows, d});
    c.add_in(OPDB_DT_F32, {d});
    if (offset) c.add_in(OPDB_DT_F32, {1});
    c.add_out(offset ? OPDB_DT_U8 : OPDB_DT_I8, {rows, d});
    c.fill(204);
    for (int j = 0; j < d; j++) hset(c.p.in[1], j, 40.0 + 9.0 * j);   // saturates for large channels
    if (offset) hset(c.p.in[2], 0, 100.5);
    const char *name = offset ? "AscendQuantV2 -> uint8, scalar offset" : "AscendQuantV2 -> int8, per-channel";
    if (!check_run(cu, "AscendQuantV2", c, name)) return;
    std::vector<double> ref((size_t)(rows * d));
    for (int r = 0; r < rows; r++)
        for (int j = 0; j < d; j++) {
            // fp32 like the kernel, so the .5 ties round the same way.
            float v = (float)hget(c.p.in[0], r * d + j) * (float)hget(c.p.in[1], j);
            if (offset) v += (float)hget(c.p.in[2], 0);
            double q = nearbyint((double)v);
            ref[(size_t)(r * d + j)] = offset ? fmin(255, fmax(0, q)) : fmin(127, fmax(-128, q));
        }
    check_expect(name, c.p.out[0], ref, 0);
}

void check_rope(opdb_cu *cu) {
    const int b = 2, s = 3, nh = 2, d = 8, h = d / 2;
    HostCase c;
    c.add_in(OPDB_DT_F32, {b, nh, s, d});
    c.add_in(OPDB_DT_F32, {b, 1, s, d});   // cos, broadcast over heads
    c.add_in(OPDB_DT_F32, {b, 1, s, d});   // sin
    c.add_out(OPDB_DT_F32, {b, nh, s, d});
    c.fill(205);
    if (!check_run(cu, "InterleaveRope", c, "InterleaveRope (2,2,3,8), cos/sin (2,1,3,8)")) return;
    std::vector<double> ref((size_t)(b * nh * s * d));
    for (int bi = 0; bi < b; bi++)
        for (int hi = 0; hi < nh; hi++)
            for (int si = 0; si < s; si++) {
                int xo = ((bi * nh + hi) * s + si) * d, co = (bi * s + si) * d;
                for (int i = 0; i < h; i++) {
                    double ev = hget(c.p.in[0], xo + 2 * i), od = hget(c.p.in[0], xo + 2 * i + 1);
                    ref[(size_t)(xo + i)] = ev * hget(c.p.in[1], co + i) - od * hget(c.p.in[2], co + i);
                    ref[(size_t)(xo + i + h)] = od * hget(c.p.in[1], co + i + h) + ev * hget(c.p.in[2], co + i + h);
                }
            }
    check_expect("InterleaveRope (2,2,3,8), cos/sin (2,1,3,8)", c.p.out[0], ref, tol_for(OPDB_DT_F32));
}

void check_add_rms_norm_bias(opdb_cu *cu) {
    const int rows = 4, d = 300;
    HostCase c;
    c.add_in(OPDB_DT_BF16, {rows, d});
    c.add_in(OPDB_DT_BF16, {rows, d});
    c.add_in(OPDB_DT_BF16, {d});   // gamma
    c.add_in(OPDB_DT_BF16, {d});   // beta
    c.add_out(OPDB_DT_BF16, {rows, d});
    c.add_out(OPDB_DT_F32, {rows, 1});
    c.add_out(OPDB_DT_BF16, {rows, d});
    c.p.fparam[0] = 1e-6;
    c.fill(206);
    if (!check_run(cu, "AddRmsNormBias", c, "AddRmsNormBias bf16 with beta")) return;
    std::vector<double> y((size_t)(rows * d)), rstd((size_t)rows), xs((size_t)(rows * d));
    for (int r = 0; r < rows; r++) {
        double ss = 0;
        for (int j = 0; j < d; j++) {
            // x is stored in bf16 and the norm reads it back, as the CPU kernel does.
            double v = hround(OPDB_DT_BF16, hget(c.p.in[0], r * d + j) + hget(c.p.in[1], r * d + j));
            xs[(size_t)(r * d + j)] = v;
            ss += v * v;
        }
        rstd[(size_t)r] = 1.0 / sqrt(ss / d + 1e-6);
        for (int j = 0; j < d; j++)
            y[(size_t)(r * d + j)] =
                xs[(size_t)(r * d + j)] * rstd[(size_t)r] * hget(c.p.in[2], j) + hget(c.p.in[3], j);
    }
    check_expect("AddRmsNormBias bf16: y", c.p.out[0], y, tol_for(OPDB_DT_BF16));
    check_expect("AddRmsNormBias bf16: rstd", c.p.out[1], rstd, tol_for(OPDB_DT_F32));
    check_expect("AddRmsNormBias bf16: x = x1 + x2", c.p.out[2], xs, tol_for(OPDB_DT_BF16));
}

// Descending, ties in ascending index order (bf16 rows have many ties).
void check_sort(opdb_cu *cu, opdb_dtype dt, int rows, int d) {
    HostCase c;
    c.add_in(dt, {rows, d});
    c.add_out(dt, {rows, d});
    c.add_out(OPDB_DT_I64, {rows, d});
    c.fill(207);
    hset(c.p.in[0], 3, hget(c.p.in[0], 1));   // a tie in fp32 too
    char name[64];
    snprintf(name, sizeof name, "Sort %s (%d,%d) descending, stable", dt == OPDB_DT_F32 ? "f32" : "bf16", rows, d);
    if (!check_run(cu, "Sort", c, name)) return;
    std::vector<double> vals((size_t)(rows * d)), idx((size_t)(rows * d));
    for (int r = 0; r < rows; r++) {
        std::vector<int> order((size_t)d);
        for (int j = 0; j < d; j++) order[(size_t)j] = j;
        std::stable_sort(order.begin(), order.end(),
                         [&](int a, int b) { return hget(c.p.in[0], r * d + a) > hget(c.p.in[0], r * d + b); });
        for (int j = 0; j < d; j++) {
            idx[(size_t)(r * d + j)] = order[(size_t)j];
            vals[(size_t)(r * d + j)] = hget(c.p.in[0], r * d + order[(size_t)j]);
        }
    }
    check_expect(name, c.p.out[0], vals, 0);
    check_expect(name, c.p.out[1], idx, 0);
}

}  // namespace

void check_more_kernels(opdb_cu *cu) {
    check_sort(cu, OPDB_DT_F32, 5, 300);
    check_sort(cu, OPDB_DT_BF16, 7, 40);
    check_index(cu);
    check_pad(cu);
    check_scatter(cu);
    check_ascend_quant(cu, false);
    check_ascend_quant(cu, true);
    check_rope(cu);
    check_add_rms_norm_bias(cu);
}
