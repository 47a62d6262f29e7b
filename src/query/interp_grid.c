/* 2-D/3-D linear interpolation on a Delaunay triangulation, as the
 * performance model's griddata does it: Qhull with the options its
 * triangulation uses ("d Qbb Qc Qz Q12 Qt", points in the given order), the
 * simplex holding the target found with the same barycentric tolerance, and
 * the barycentric weights applied to the vertex latencies. On a regular grid
 * the triangulation depends on Qhull's tie-breaking, so only the same
 * options and point order give the same answer there. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libqhull_r/qhull_ra.h>

#include "query/interp_internal.h"

/* numerical rank of the n x d matrix M (row-major) by one-sided Jacobi SVD */
static int num_rank(double *M, size_t n, int d) {
    for (int sweep = 0; sweep < 60; sweep++) {
        double off = 0;
        for (int p = 0; p < d; p++)
            for (int q = p + 1; q < d; q++) {
                double a = 0, b = 0, g = 0;
                for (size_t i = 0; i < n; i++) {
                    double x = M[i * (size_t)d + (size_t)p], y = M[i * (size_t)d + (size_t)q];
                    a += x * x, b += y * y, g += x * y;
                }
                if (g == 0 || fabs(g) <= DBL_EPSILON * sqrt(a * b)) continue;
                off = fmax(off, fabs(g) / sqrt(a * b));
                double z = (b - a) / (2 * g);
                double t = (z >= 0 ? 1.0 : -1.0) / (fabs(z) + sqrt(1 + z * z));
                double cs = 1 / sqrt(1 + t * t), sn = cs * t;
                for (size_t i = 0; i < n; i++) {
                    double x = M[i * (size_t)d + (size_t)p], y = M[i * (size_t)d + (size_t)q];
                    M[i * (size_t)d + (size_t)p] = cs * x - sn * y;
                    M[i * (size_t)d + (size_t)q] = sn * x + cs * y;
                }
            }
        if (off <= DBL_EPSILON) break;
    }
    double s[3] = {0, 0, 0}, smax = 0;
    for (int p = 0; p < d; p++) {
        for (size_t i = 0; i < n; i++) s[p] += M[i * (size_t)d + (size_t)p] * M[i * (size_t)d + (size_t)p];
        s[p] = sqrt(s[p]);
        smax = fmax(smax, s[p]);
    }
    double tol = smax * (double)(n > (size_t)d ? n : (size_t)d) * DBL_EPSILON;
    int r = 0;
    for (int p = 0; p < d; p++) r += s[p] > tol;
    return r;
}

/* inverse of the d x d matrix A (d <= 3); false when singular */
static bool inv(const double *A, int d, double *R) {
    if (d == 2) {
        double det = A[0] * A[3] - A[1] * A[2];
        if (det == 0) return false;
        R[0] = A[3] / det, R[1] = -A[1] / det, R[2] = -A[2] / det, R[3] = A[0] / det;
        return true;
    }
    double c00 = A[4] * A[8] - A[5] * A[7], c01 = A[5] * A[6] - A[3] * A[8], c02 = A[3] * A[7] - A[4] * A[6];
    double det = A[0] * c00 + A[1] * c01 + A[2] * c02;
    if (det == 0) return false;
    R[0] = c00 / det, R[1] = (A[2] * A[7] - A[1] * A[8]) / det, R[2] = (A[1] * A[5] - A[2] * A[4]) / det;
    R[3] = c01 / det, R[4] = (A[0] * A[8] - A[2] * A[6]) / det, R[5] = (A[2] * A[3] - A[0] * A[5]) / det;
    R[6] = c02 / det, R[7] = (A[1] * A[6] - A[0] * A[7]) / det, R[8] = (A[0] * A[4] - A[1] * A[3]) / det;
    return true;
}

static double norm1(const double *A, int d) {
    double m = 0;
    for (int j = 0; j < d; j++) {
        double s = 0;
        for (int i = 0; i < d; i++) s += fabs(A[i * d + j]);
        m = fmax(m, s);
    }
    return m;
}

/* barycentric coordinates of t in the simplex v (d+1 vertices of P); false
 * when its transform is singular (the simplex is skipped, as scipy does) */
static bool bary(const double *P, int d, const int *v, const double *t, double *b) {
    double T[9], Ti[9];
    const double *r = P + (size_t)v[d] * (size_t)d;
    for (int i = 0; i < d; i++)
        for (int j = 0; j < d; j++) T[i * d + j] = P[(size_t)v[j] * (size_t)d + (size_t)i] - r[i];
    if (!inv(T, d, Ti)) return false;
    double rc = 1 / (norm1(T, d) * norm1(Ti, d));
    if (!(rc >= 1000 * DBL_EPSILON)) return false;
    double s = 0;
    for (int i = 0; i < d; i++) {
        double x = 0;
        for (int j = 0; j < d; j++) x += Ti[i * d + j] * (t[j] - r[j]);
        b[i] = x;
        s += x;
    }
    b[d] = 1 - s;
    return true;
}

const char *ip_griddata(const double *P, const double *V, size_t n, int d, const double *t, double *y, double w[4],
                        int vid[4]) {
    double *M = malloc(n * (size_t)d * sizeof *M);
    if (!M) return "scipy_exception";
    for (size_t i = 0; i < n; i++)
        for (int k = 0; k < d; k++) M[i * (size_t)d + (size_t)k] = P[i * (size_t)d + (size_t)k] - P[k];
    int rank = num_rank(M, n, d);
    free(M);
    if (rank < d) return "degenerate_point_cloud";

    coordT *pts = malloc(n * (size_t)d * sizeof *pts);
    if (!pts) return "scipy_exception";
    memcpy(pts, P, n * (size_t)d * sizeof *pts);
    char *ebuf = NULL;
    size_t elen = 0;
    FILE *ef = open_memstream(&ebuf, &elen); /* Qhull's messages are not ours to print */
    qhT qh_qh, *qh = &qh_qh;
    QHULL_LIB_CHECK
    qh_zero(qh, ef);
    char opts[] = "qhull d Qbb Qc Qz Q12 Qt";
    int rc = qh_new_qhull(qh, d, (int)n, pts, False, opts, NULL, ef);
    const char *res = "outside_convex_hull";
    if (rc != 0) {
        res = "scipy_exception";
    } else {
        double eps = 100 * DBL_EPSILON;
        facetT *facet;
        FORALLfacets {
            if (facet->upperdelaunay) continue;
            int v[4], k = 0;
            bool ok = true;
            vertexT *vertex, **vertexp;
            FOREACHvertex_(facet->vertices) {
                int id = qh_pointid(qh, vertex->point);
                if (k > d || id < 0 || (size_t)id >= n) ok = false;
                else v[k++] = id;
            }
            if (!ok || k != d + 1) continue;
            double b[4];
            if (!bary(P, d, v, t, b)) continue;
            bool in = true;
            for (int j = 0; j <= d; j++) in &= b[j] >= -eps && b[j] <= 1 + eps;
            if (!in) continue;
            double s = 0;
            for (int j = 0; j <= d; j++) {
                s += b[j] * V[v[j]];
                w[j] = b[j];
                vid[j] = v[j];
            }
            *y = s;
            res = NULL;
            break;
        }
    }
    int curlong, totlong;
    qh_freeqhull(qh, !qh_ALL);
    qh_memfreeshort(qh, &curlong, &totlong);
    if (ef) fclose(ef);
    free(ebuf);
    free(pts);
    return res;
}
