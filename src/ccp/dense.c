/* dvicontact — small dense kernels: matrix-vector products, LU with
 * partial pivoting, its solves and the inverse (Lemke, src/ccp/lemke.c;
 * Newton's dense path, src/ccp/newton.c).
 *
 * Why not BLAS/LAPACK. The problems are small (Lemke's LCPs of tens to a
 * few hundred rows, Newton's dense systems up to max_dense_rows), and an
 * optimised BLAS sums in an order that depends on its CPU kernel and its
 * thread count: Lemke's pivots are decided on signs and ratios, so that
 * rounding changed its path (and its answer) between OpenBLAS's Haswell
 * and SkylakeX kernels and between one and two threads. OpenBLAS also
 * allocates a 32–128 MB buffer on its first level-3 or LAPACK call and
 * spins forever when that allocation fails (an address-space limit). These
 * kernels use a fixed order of operations (no threads, no reassociation:
 * the project builds with -ffp-contract=off), so they give the same bits on
 * every x86-64 CPU, and they allocate nothing. Timings against OpenBLAS:
 * docs/performance.md#dense-algebra-own-kernels-or-blas.
 *
 * Storage: the LU routines work on a column-major n×n array (LAPACK's
 * layout, a[i + j·n] = A(i, j)); ipiv[k] is the row swapped with row k at
 * step k (0-based). */
#include "ccp_work.h"

#include <math.h>
#include <string.h>

#define DENSE_NB 32 /* LU panel width */

/* The kernels are compiled for AVX-512, AVX2 and the x86-64 baseline, one
 * chosen at load time by the CPU: the same operations on every entry and
 * the same partial sums in the same order in each (no reassociation, no
 * fused multiply-add: -ffp-contract=off), only in wider registers, so the
 * three give the same bits (checked on random data). */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__ELF__)
#define DENSE_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define DENSE_CLONES
#endif

/* Σ a_j x_j in a fixed order: eight partial sums over j mod 8, added
 * pairwise at the end (independent sums: the loop is not bound by the
 * latency of one addition, and the compiler may vectorise it without
 * changing the order). */
DENSE_CLONES double ccp_dense_dot(const double* a, const double* x, int32_t n)
{
    double p[8] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
    int32_t j = 0;
    for (; j + 8 <= n; j += 8)
        for (int k = 0; k < 8; k++) p[k] += a[j + k] * x[j + k];
    for (int k = 0; j < n; j++, k++) p[k] += a[j] * x[j];
    return ((p[0] + p[4]) + (p[2] + p[6])) + ((p[1] + p[5]) + (p[3] + p[7]));
}

/* ccp_dense_dot(a, x, n), and Σ |a_j x_j| (the same partial sums) into *abs_sum. */
DENSE_CLONES double ccp_dense_dot_abs(const double* a, const double* x, int32_t n, double* abs_sum)
{
    double p[8] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0}, pa[8] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
    int32_t j = 0;
    for (; j + 8 <= n; j += 8)
        for (int k = 0; k < 8; k++) {
            const double t = a[j + k] * x[j + k];
            p[k] += t;
            pa[k] += fabs(t);
        }
    for (int k = 0; j < n; j++, k++) {
        const double t = a[j] * x[j];
        p[k] += t;
        pa[k] += fabs(t);
    }
    *abs_sum = ((pa[0] + pa[4]) + (pa[2] + pa[6])) + ((pa[1] + pa[5]) + (pa[3] + pa[7]));
    return ((p[0] + p[4]) + (p[2] + p[6])) + ((p[1] + p[5]) + (p[3] + p[7]));
}

/* y = A x + beta·y, A m×n row-major (row stride lda); beta 0 or 1. Each
 * y_i is ccp_dense_dot of its row. */
void ccp_dense_gemv(int32_t m, int32_t n, const double* A, size_t lda, const double* x, double beta, double* y)
{
    for (int32_t i = 0; i < m; i++) {
        const double s = ccp_dense_dot(A + (size_t)i * lda, x, n);
        y[i] = beta != 0.0 ? y[i] + s : s;
    }
}

/* y += alpha·Aᵀ x, A m×n row-major (row stride lda), y of length n: a sum of
 * rows of A in row order. */
DENSE_CLONES void ccp_dense_gemv_t(int32_t m, int32_t n, double alpha, const double* A, size_t lda, const double* x, double* y)
{
    for (int32_t i = 0; i < m; i++) {
        const double* a = A + (size_t)i * lda;
        const double f = alpha * x[i];
        if (f == 0.0) continue;
        for (int32_t j = 0; j < n; j++) y[j] += f * a[j];
    }
}

/* Unblocked LU of the panel: columns c0 … c1−1 of the rows c0 … n−1 (row
 * swaps applied within the panel only). Returns 0, or 1 + the first column
 * whose pivot is zero. */
static int32_t lu_panel(int32_t n, double* a, int32_t* ipiv, int32_t c0, int32_t c1)
{
    const size_t un = (size_t)n;
    int32_t info = 0;
    for (int32_t k = c0; k < c1; k++) {
        double* ak = a + (size_t)k * un;
        int32_t p = k;
        double big = fabs(ak[k]);
        for (int32_t i = k + 1; i < n; i++)
            if (fabs(ak[i]) > big) {
                big = fabs(ak[i]);
                p = i;
            }
        ipiv[k] = p;
        if (p != k)
            for (int32_t j = c0; j < c1; j++) {
                double* aj = a + (size_t)j * un;
                const double t = aj[k];
                aj[k] = aj[p];
                aj[p] = t;
            }
        if (ak[k] == 0.0) {
            if (info == 0) info = k + 1;
            continue;
        }
        const double rp = 1.0 / ak[k];
        for (int32_t i = k + 1; i < n; i++) ak[i] *= rp;
        for (int32_t j = k + 1; j < c1; j++) {
            double* aj = a + (size_t)j * un;
            const double u = aj[k];
            if (u == 0.0) continue;
            for (int32_t i = k + 1; i < n; i++) aj[i] -= ak[i] * u;
        }
    }
    return info;
}

/* The row swaps of steps c0 … c1−1 on the columns [j0, j1). */
static void lu_swap(int32_t n, double* a, const int32_t* ipiv, int32_t c0, int32_t c1, int32_t j0, int32_t j1)
{
    for (int32_t k = c0; k < c1; k++) {
        const int32_t p = ipiv[k];
        if (p == k) continue;
        for (int32_t j = j0; j < j1; j++) {
            double* aj = a + (size_t)j * (size_t)n;
            const double t = aj[k];
            aj[k] = aj[p];
            aj[p] = t;
        }
    }
}

/* A = P L U in place (column-major n×n, unit lower L below the diagonal),
 * right-looking in panels of DENSE_NB columns. Returns 0, or 1 + the first
 * column with a zero pivot (the factorisation is then completed as LAPACK's
 * dgetrf does, but is not usable for solves). */
DENSE_CLONES int32_t ccp_dense_lu(int32_t n, double* a, int32_t* ipiv)
{
    const size_t un = (size_t)n;
    int32_t info = 0;
    for (int32_t c0 = 0; c0 < n; c0 += DENSE_NB) {
        const int32_t c1 = c0 + DENSE_NB < n ? c0 + DENSE_NB : n;
        const int32_t pi = lu_panel(n, a, ipiv, c0, c1);
        if (pi != 0 && info == 0) info = pi;
        lu_swap(n, a, ipiv, c0, c1, 0, c0);
        if (c1 == n) break;
        lu_swap(n, a, ipiv, c0, c1, c1, n);
        /* U12 = L11⁻¹ A12, then A22 −= L21 U12, two columns of the trailing
         * block at a time (each L value loaded once for both): each column
         * is updated by the panel's columns in order, four at a time (one
         * pass over the column per four) */
        for (int32_t j = c1; j < n; j++) {
            double* aj = a + (size_t)j * un;
            for (int32_t k = c0; k < c1; k++) {
                const double u = aj[k];
                if (u == 0.0) continue;
                const double* lk = a + (size_t)k * un;
                for (int32_t i = k + 1; i < c1; i++) aj[i] -= lk[i] * u;
            }
        }
        int32_t j = c1;
        for (; j + 2 <= n; j += 2) {
            double* aj = a + (size_t)j * un;
            double* aj1 = aj + un;
            int32_t k = c0;
            for (; k + 4 <= c1; k += 4) {
                const double* l0 = a + (size_t)k * un;
                const double* l1 = l0 + un;
                const double* l2 = l1 + un;
                const double* l3 = l2 + un;
                const double u0 = aj[k], u1 = aj[k + 1], u2 = aj[k + 2], u3 = aj[k + 3];
                const double v0 = aj1[k], v1 = aj1[k + 1], v2 = aj1[k + 2], v3 = aj1[k + 3];
                for (int32_t i = c1; i < n; i++) {
                    const double x0 = l0[i], x1 = l1[i], x2 = l2[i], x3 = l3[i];
                    aj[i] = (((aj[i] - x0 * u0) - x1 * u1) - x2 * u2) - x3 * u3;
                    aj1[i] = (((aj1[i] - x0 * v0) - x1 * v1) - x2 * v2) - x3 * v3;
                }
            }
            for (; k < c1; k++) {
                const double* lk = a + (size_t)k * un;
                const double u = aj[k], v = aj1[k];
                for (int32_t i = c1; i < n; i++) {
                    aj[i] -= lk[i] * u;
                    aj1[i] -= lk[i] * v;
                }
            }
        }
        for (; j < n; j++) {
            double* aj = a + (size_t)j * un;
            int32_t k = c0;
            for (; k + 4 <= c1; k += 4) {
                const double* l0 = a + (size_t)k * un;
                const double* l1 = l0 + un;
                const double* l2 = l1 + un;
                const double* l3 = l2 + un;
                const double u0 = aj[k], u1 = aj[k + 1], u2 = aj[k + 2], u3 = aj[k + 3];
                for (int32_t i = c1; i < n; i++) aj[i] = (((aj[i] - l0[i] * u0) - l1[i] * u1) - l2[i] * u2) - l3[i] * u3;
            }
            for (; k < c1; k++) {
                const double* lk = a + (size_t)k * un;
                const double u = aj[k];
                for (int32_t i = c1; i < n; i++) aj[i] -= lk[i] * u;
            }
        }
    }
    return info;
}

/* Solves A x = b (trans false) or Aᵀ x = b (trans true) with the factors
 * of ccp_dense_lu; b is overwritten by x. */
DENSE_CLONES void ccp_dense_lu_solve(int32_t n, const double* lu, const int32_t* ipiv, bool trans, double* b)
{
    const size_t un = (size_t)n;
    if (!trans) {
        for (int32_t k = 0; k < n; k++) { /* b = P⁻¹ b, in the order of the steps */
            const int32_t p = ipiv[k];
            if (p != k) {
                const double t = b[k];
                b[k] = b[p];
                b[p] = t;
            }
        }
        for (int32_t k = 0; k < n; k++) { /* L y = b, by columns */
            const double* lk = lu + (size_t)k * un;
            const double bk = b[k];
            if (bk == 0.0) continue;
            for (int32_t i = k + 1; i < n; i++) b[i] -= lk[i] * bk;
        }
        for (int32_t k = n - 1; k >= 0; k--) { /* U x = y, by columns */
            const double* uk = lu + (size_t)k * un;
            const double xk = b[k] / uk[k];
            b[k] = xk;
            if (xk == 0.0) continue;
            for (int32_t i = 0; i < k; i++) b[i] -= uk[i] * xk;
        }
    } else {
        for (int32_t k = 0; k < n; k++) { /* Uᵀ y = b: row k of Uᵀ is column k of U */
            const double* uk = lu + (size_t)k * un;
            b[k] = (b[k] - ccp_dense_dot(uk, b, k)) / uk[k];
        }
        for (int32_t k = n - 1; k >= 0; k--) { /* Lᵀ z = y */
            const double* lk = lu + (size_t)k * un;
            b[k] -= ccp_dense_dot(lk + k + 1, b + k + 1, n - k - 1);
        }
        for (int32_t k = n - 1; k >= 0; k--) { /* x = P z, the steps undone in reverse */
            const int32_t p = ipiv[k];
            if (p != k) {
                const double t = b[k];
                b[k] = b[p];
                b[p] = t;
            }
        }
    }
}

/* A⁻¹ in place from the factors of ccp_dense_lu (LAPACK's dgetri, unblocked):
 * U⁻¹, then A⁻¹ L = U⁻¹ column by column from the last, then the column
 * swaps. work: n doubles. Returns 0, or 1 + the first zero diagonal entry
 * of U (a singular A). */
DENSE_CLONES int32_t ccp_dense_lu_inverse(int32_t n, double* a, const int32_t* ipiv, double* work)
{
    const size_t un = (size_t)n;
    for (int32_t k = 0; k < n; k++)
        if (a[(size_t)k * un + (size_t)k] == 0.0) return k + 1;
    /* U⁻¹ in place, column by column: column j of U⁻¹ above the diagonal is
     * −U⁻¹(0:j, 0:j) U(0:j, j) / U(j, j) */
    for (int32_t j = 0; j < n; j++) {
        double* aj = a + (size_t)j * un;
        aj[j] = 1.0 / aj[j];
        const double ajj = -aj[j];
        for (int32_t k = 0; k < j; k++) { /* x = U⁻¹(0:j,0:j) x, upper triangular, by columns */
            const double xk = aj[k];
            if (xk == 0.0) continue;
            const double* ak = a + (size_t)k * un;
            for (int32_t i = 0; i < k; i++) aj[i] += xk * ak[i];
            aj[k] = xk * ak[k];
        }
        for (int32_t i = 0; i < j; i++) aj[i] *= ajj;
    }
    /* A⁻¹ L = U⁻¹: column j of A⁻¹ = column j of U⁻¹ − Σ_{i>j} A⁻¹(:, i) L(i, j) */
    for (int32_t j = n - 1; j >= 0; j--) {
        double* aj = a + (size_t)j * un;
        for (int32_t i = j + 1; i < n; i++) {
            work[i] = aj[i];
            aj[i] = 0.0;
        }
        for (int32_t i = j + 1; i < n; i++) {
            const double l = work[i];
            if (l == 0.0) continue;
            const double* ai = a + (size_t)i * un;
            for (int32_t r = 0; r < n; r++) aj[r] -= ai[r] * l;
        }
    }
    for (int32_t j = n - 2; j >= 0; j--) { /* column swaps, last step first */
        const int32_t p = ipiv[j];
        if (p == j) continue;
        double* aj = a + (size_t)j * un;
        double* ap = a + (size_t)p * un;
        for (int32_t r = 0; r < n; r++) {
            const double t = aj[r];
            aj[r] = ap[r];
            ap[r] = t;
        }
    }
    return 0;
}
