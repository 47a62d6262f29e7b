// Shared by the opdb_cuda_check sources: host-side problems with their own
// buffers, running one through a CUDA kernel, and comparisons.
#ifndef OPDB_CUDA_CHECK_CUH
#define OPDB_CUDA_CHECK_CUH

#include <initializer_list>
#include <vector>

#include "replay/cuda/cu_api.h"

// A problem whose tensors live in host buffers owned here.
struct HostCase {
    opdb_op_problem p;
    std::vector<std::vector<unsigned char>> in, out;   // buffers, by slot
    HostCase();
    opdb_tensor &add_in(opdb_dtype dt, std::initializer_list<int64_t> dims);
    opdb_tensor &add_out(opdb_dtype dt, std::initializer_list<int64_t> dims);
    void add_absent_in();   // an empty slot (ndim 0), as plans leave optional inputs
    // Floats uniform in [-1, 1), integers in [0, 8), bools 0/1 (replay.md 1.4).
    void fill(uint64_t seed);
    // The GEMM record of src/replay/cpu/gemm.c: batch, m, n, k, trans_b, c_ld, c_stride.
    void gemm_record(int64_t batch, int64_t m, int64_t n, int64_t k, bool trans_b, int64_t c_ld = 0,
                     int64_t c_stride = 0);
};

double hget(const opdb_tensor &t, int64_t i);
void hset(opdb_tensor &t, int64_t i, double v);
double hround(opdb_dtype dt, double v);   // v stored as dt and read back
int64_t numel(const opdb_tensor &t);
uint64_t splitmix(uint64_t *s);

// Upload, prepare, run once (synchronised), download every tensor back into
// c (inputs too: MaskedFill works in place). 0 on success, else err set.
int run_case(opdb_cu *cu, const char *op, HostCase &c, opdb_err *err);

// Largest |got - ref| relative to the largest |ref|; prints one line.
// Returns true when it is within tol.
bool expect_close(const char *name, const opdb_tensor &got, const std::vector<double> &ref, double tol);
// Per-dtype bound for fp32-accumulated results rounded to dt.
double tol_for(opdb_dtype dt);

// Failures so far; check_run and check_expect count theirs here.
extern int g_check_failures;
// run_case, printing a FAIL line (and counting it) when it fails.
bool check_run(opdb_cu *cu, const char *op, HostCase &c, const char *name);
// expect_close, counting a failure.
void check_expect(const char *name, const opdb_tensor &got, const std::vector<double> &ref, double tol);

int check_kernels(opdb_cu *cu);   // number of failures
void check_more_kernels(opdb_cu *cu);   // check_more.cu: the kernels beyond the GEMMs and basics
int gemm_sweep(opdb_cu *cu, bool quick);

#endif
