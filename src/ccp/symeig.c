/* dvicontact — eigen-decomposition of a small dense symmetric matrix
 * (APGD's joint block, src/ccp/apgd.c).
 *
 * Two classical stages (Golub & Van Loan, Matrix Computations, 4th ed.,
 * §8.3): Householder reflections bring A to a tridiagonal T = Qᵀ A Q in
 * about 4n³/3 flops, then the implicit symmetric QL iteration with
 * Wilkinson's shift diagonalises T by plane rotations, applied to Q as they
 * are made. Each eigenvalue takes one to three sweeps, so the whole costs
 * about 9n³ flops against the 30–40n³ of cyclic Jacobi. Deterministic: a
 * fixed order of operations, no threads. */
#include "ccp_work.h"

#include <math.h>
#include <string.h>

/* Householder: A (n×n, row-major, symmetric) → T = Qᵀ A Q with diagonal d
 * and subdiagonal e (e[i] = T[i+1][i], e[n−1] = 0), Q into V (row-major).
 * A is overwritten; u is n doubles of scratch. */
static void tridiagonalise(double* A, double* V, double* d, double* e, double* u, int32_t n)
{
    /* Reflection k: H_k = I − β_k v vᵀ acting on rows and columns k+1 … n−1,
     * chosen so that column k of H_k A H_k is zero below its subdiagonal.
     * v is kept in A's column k below the diagonal, β_k in d[k] until the
     * end (d is filled last). */
    for (int32_t k = 0; k + 2 < n; k++) {
        const int32_t s = k + 1, len = n - s;
        double norm2 = 0.0;
        for (int32_t i = s; i < n; i++) norm2 += A[(size_t)i * n + k] * A[(size_t)i * n + k];
        const double x0 = A[(size_t)s * n + k];
        if (norm2 == 0.0) { /* nothing to annihilate: H_k = I */
            e[k] = 0.0;
            d[k] = 0.0;
            continue;
        }
        const double alpha = x0 >= 0.0 ? -sqrt(norm2) : sqrt(norm2); /* v₀ = x₀ − α: no cancellation */
        A[(size_t)s * n + k] = x0 - alpha;                           /* v: column k from row s */
        const double vv = norm2 - 2.0 * alpha * x0 + alpha * alpha;
        const double beta = 2.0 / vv;
        e[k] = alpha;
        d[k] = beta;
        /* A_ss ← H A_ss H = A_ss − v qᵀ − q vᵀ, p = β A_ss v, q = p − (β vᵀp / 2) v */
        double* p = u;
        for (int32_t i = 0; i < len; i++) {
            const double* Ai = A + (size_t)(s + i) * n + s;
            double sum = 0.0;
            for (int32_t j = 0; j < len; j++) sum += Ai[j] * A[(size_t)(s + j) * n + k];
            p[i] = beta * sum;
        }
        double vp = 0.0;
        for (int32_t i = 0; i < len; i++) vp += A[(size_t)(s + i) * n + k] * p[i];
        const double K = 0.5 * beta * vp;
        for (int32_t i = 0; i < len; i++) p[i] -= K * A[(size_t)(s + i) * n + k];
        for (int32_t i = 0; i < len; i++) {
            const double vi = A[(size_t)(s + i) * n + k], qi = p[i];
            double* Ai = A + (size_t)(s + i) * n + s;
            for (int32_t j = 0; j < len; j++) Ai[j] -= vi * p[j] + qi * A[(size_t)(s + j) * n + k];
        }
    }
    if (n >= 2) e[n - 2] = A[(size_t)(n - 1) * n + (n - 2)];
    e[n - 1] = 0.0;
    /* Q = H_0 H_1 … H_{n−3}, formed from the last reflection back: H_k
     * touches rows k+1 … of the product of those after it, whose columns
     * before k+1 are still those of I. */
    memset(V, 0, (size_t)n * n * sizeof(double));
    for (int32_t i = 0; i < n; i++) V[(size_t)i * n + i] = 1.0;
    for (int32_t k = n - 3; k >= 0; k--) {
        const double beta = d[k];
        if (beta == 0.0) continue;
        const int32_t s = k + 1;
        for (int32_t j = s; j < n; j++) { /* column j: V ← V − β v (vᵀ V) */
            double w = 0.0;
            for (int32_t i = s; i < n; i++) w += A[(size_t)i * n + k] * V[(size_t)i * n + j];
            w *= beta;
            for (int32_t i = s; i < n; i++) V[(size_t)i * n + j] -= w * A[(size_t)i * n + k];
        }
    }
    for (int32_t i = 0; i < n; i++) d[i] = A[(size_t)i * n + i];
}

int ccp_sym_eigen(double* A, double* V, double* d, double* work, int32_t n)
{
    if (n <= 0) return 0;
    double* e = work;
    tridiagonalise(A, V, d, e, work + n, n);
    /* Implicit QL on (d, e): for each l, rotations from the bottom of the
     * unreduced block l … m up to l chase the bulge of one shifted QL step
     * until e[l] is negligible; d then holds the eigenvalues, V ← V G the
     * eigenvectors (columns). An e[m] is negligible below the unit roundoff
     * of |d[m]| + |d[m+1]|, or of ‖T‖ (a perturbation of that size is the
     * backward error the reduction already has; eigenvalues near zero, as a
     * redundant joint's, cannot reach relative accuracy and would not
     * converge on the first test alone). */
    double tnorm = 0.0;
    for (int32_t i = 0; i < n; i++)
        if (fabs(d[i]) + fabs(e[i]) > tnorm) tnorm = fabs(d[i]) + fabs(e[i]);
    const double floor = 1e-16 * tnorm;
    for (int32_t l = 0; l < n; l++) {
        for (int iter = 0;; iter++) {
            int32_t m = l;
            for (; m + 1 < n; m++) {
                const double dd = fabs(d[m]) + fabs(d[m + 1]);
                if (fabs(e[m]) <= 1e-16 * dd || fabs(e[m]) <= floor) break; /* e[m] negligible: a split */
            }
            if (m == l) break;
            if (iter == 60) return -1;
            /* Wilkinson's shift: the eigenvalue of T's leading 2×2 (rows l,
             * l+1) nearer d[l] */
            double g = (d[l + 1] - d[l]) / (2.0 * e[l]);
            double r = hypot(g, 1.0);
            g = d[m] - d[l] + e[l] / (g + (g >= 0.0 ? r : -r));
            double s = 1.0, c = 1.0, p = 0.0;
            int32_t i = m - 1;
            bool split = false;
            for (; i >= l; i--) {
                const double f = s * e[i], b = c * e[i];
                r = hypot(f, g);
                e[i + 1] = r;
                if (r == 0.0) { /* an exact zero: the block splits at i */
                    d[i + 1] -= p;
                    e[m] = 0.0;
                    split = true;
                    break;
                }
                s = f / r;
                c = g / r;
                g = d[i + 1] - p;
                r = (d[i] - g) * s + 2.0 * c * b;
                p = s * r;
                d[i + 1] = g + p;
                g = c * r - b;
                for (int32_t k = 0; k < n; k++) { /* columns i, i+1 of V */
                    double* Vk = V + (size_t)k * n;
                    const double vi = Vk[i], vi1 = Vk[i + 1];
                    Vk[i + 1] = s * vi + c * vi1;
                    Vk[i] = c * vi - s * vi1;
                }
            }
            if (split) continue;
            d[l] -= p;
            e[l] = g;
            e[m] = 0.0;
        }
    }
    return 0;
}
