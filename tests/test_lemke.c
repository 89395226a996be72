/* Tests of the Lemke solver (src/ccp/lemke.c).
 *
 * Part 1 runs the pure LCP kernel ccp_lemke_lcp() on textbook LCPs whose
 * solutions are worked out by hand below, on degenerate LCPs (ties in the
 * ratio test, degenerate solutions) checked against brute-force enumeration
 * of all complementary bases, and on a ray / pivot-budget case.
 * Part 2 goes through the public API (dvi_ccp_solve(..., "lemke", ...)) on
 * contact problems whose impulses are derived by hand in the comments, on
 * generated problems (sphere stack, granular bed, random with joints), and
 * runs the relaxed (pyramid-CCP) form through ccp_lemke_ccp() as well.
 * The registered solver has two forms: the default (settings.lemke.coulomb
 * = false) is the pyramid CCP (sliding contacts lift off, u_n = μ‖u_t‖, as
 * in the CCP of ccp.h); coulomb = true is the Anitescu–Potra Coulomb LCP
 * (sliding contacts keep u_n = 0). Each test names the form whose answer it
 * expects; where the two agree (stick, separation) both are run.
 *
 * Conventions: LCP  w = M z + q ≥ 0, z ≥ 0, wᵀz = 0;  CCP  u = N γ + r. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ccp_work.h"
#include "lemke.h"
#include "problems.h"
#include "hash_rng.h"
#include "test_util.h"

#define PI 3.14159265358979323846

/* ---------------------------------------------------------------- helpers */

/* Runs the LCP kernel with a freshly allocated workspace. */
static dvi_status run_lcp(int32_t n, const double* M, const double* q, double* z, int32_t max_pivots,
                          int32_t* pivots, dvi_solve_status* status)
{
    size_t bytes = ccp_lemke_lcp_work_size(n);
    assert_true(bytes > 0);
    void* work = aligned_alloc(64, (bytes + 63) / 64 * 64);
    assert_non_null(work);
    dvi_status st = ccp_lemke_lcp(n, M, q, z, max_pivots, 1e-12, work, pivots, status);
    free(work);
    return st;
}

/* z ≥ 0, w = Mz + q ≥ 0 and |z_i w_i| ≤ tol componentwise; returns max |min(z, w)|. */
static double check_lcp(int32_t n, const double* M, const double* q, const double* z, double tol)
{
    double worst = 0.0;
    for (int32_t i = 0; i < n; i++) {
        double w = q[i];
        for (int32_t j = 0; j < n; j++) w += M[i * n + j] * z[j];
        assert_true(z[i] >= -tol);
        assert_true(w >= -tol);
        assert_true(fabs(z[i] * w) <= tol * (1.0 + fabs(z[i]) + fabs(w)));
        worst = fmax(worst, fabs(fmin(z[i], w)));
    }
    return worst;
}

/* Solves A x = b (n ≤ 8) by Gaussian elimination with partial pivoting;
 * returns false when A is singular. A and b are overwritten. */
static bool small_solve(int32_t n, double* A, double* b)
{
    for (int32_t c = 0; c < n; c++) {
        int32_t p = c;
        for (int32_t i = c + 1; i < n; i++)
            if (fabs(A[i * n + c]) > fabs(A[p * n + c])) p = i;
        if (fabs(A[p * n + c]) < 1e-13) return false;
        for (int32_t j = 0; j < n; j++) {
            double t = A[c * n + j];
            A[c * n + j] = A[p * n + j];
            A[p * n + j] = t;
        }
        double t = b[c];
        b[c] = b[p];
        b[p] = t;
        for (int32_t i = c + 1; i < n; i++) {
            double f = A[i * n + c] / A[c * n + c];
            for (int32_t j = c; j < n; j++) A[i * n + j] -= f * A[c * n + j];
            b[i] -= f * b[c];
        }
    }
    for (int32_t i = n - 1; i >= 0; i--) {
        double s = b[i];
        for (int32_t j = i + 1; j < n; j++) s -= A[i * n + j] * b[j];
        b[i] = s / A[i * n + i];
    }
    return true;
}

/* Brute force: tries all 2^n complementary bases (z_i basic for i in the
 * subset) and returns how many of them give a solution; the first in z. */
static int brute_force_lcp(int32_t n, const double* M, const double* q, double* z)
{
    int found = 0;
    for (uint32_t set = 0; set < (1u << n); set++) {
        int32_t idx[8], k = 0;
        double A[64], b[8], x[8] = {0};
        for (int32_t i = 0; i < n; i++)
            if (set & (1u << i)) idx[k++] = i;
        for (int32_t a = 0; a < k; a++) {
            for (int32_t c = 0; c < k; c++) A[a * k + c] = M[idx[a] * n + idx[c]];
            b[a] = -q[idx[a]];
        }
        if (k > 0 && !small_solve(k, A, b)) continue;
        for (int32_t a = 0; a < k; a++) x[idx[a]] = b[a];
        bool ok = true;
        for (int32_t i = 0; i < n && ok; i++) {
            double w = q[i];
            for (int32_t j = 0; j < n; j++) w += M[i * n + j] * x[j];
            if (x[i] < -1e-9 || w < -1e-9) ok = false;
        }
        if (ok) {
            if (found == 0) memcpy(z, x, (size_t)n * sizeof(double));
            found++;
        }
    }
    return found;
}

/* ------------------------------------------------------- part 1: pure LCP */

/* q ≥ 0: z = 0 with no pivot. */
static void test_lcp_q_nonnegative(void** state)
{
    (void)state;
    const double M[4] = {1, 2, 3, 4}, q[2] = {0.0, 1.0};
    double z[2] = {7, 7};
    int32_t piv = -1;
    dvi_solve_status st;
    assert_int_equal(run_lcp(2, M, q, z, 0, &piv, &st), DVI_OK);
    assert_int_equal(st, DVI_SOLVE_CONVERGED);
    assert_int_equal(piv, 0);
    assert_true(z[0] == 0.0 && z[1] == 0.0);
    /* n = 0 is a valid, empty LCP */
    assert_int_equal(run_lcp(0, NULL, NULL, NULL, 0, &piv, &st), DVI_OK);
    assert_int_equal(st, DVI_SOLVE_CONVERGED);
}

/* M = [[2,1],[1,2]], q = (−5,−6). Both z positive: 2z1 + z2 = 5, z1 + 2z2 = 6
 * → z1 = (10 − 6)/3 = 4/3, z2 = (12 − 5)/3 = 7/3, w = 0. */
static void test_lcp_2x2(void** state)
{
    (void)state;
    const double M[4] = {2, 1, 1, 2}, q[2] = {-5, -6};
    double z[2];
    int32_t piv;
    dvi_solve_status st;
    assert_int_equal(run_lcp(2, M, q, z, 0, &piv, &st), DVI_OK);
    assert_int_equal(st, DVI_SOLVE_CONVERGED);
    assert_near(z[0], 4.0 / 3.0, 1e-12);
    assert_near(z[1], 7.0 / 3.0, 1e-12);
    assert_true(check_lcp(2, M, q, z, 1e-12) <= 1e-12);
    assert_true(piv >= 2 && piv <= 4);
}

/* M = tridiag(1, 2, 1) (3×3), q = (−1, 2, −3). Guess z2 = 0: then
 * 2z1 = 1 → z1 = 0.5, 2z3 = 3 → z3 = 1.5, and w2 = z1 + z3 + 2 = 4 > 0.
 * So z = (0.5, 0, 1.5), w = (0, 4, 0) (unique: M is positive definite). */
static void test_lcp_3x3(void** state)
{
    (void)state;
    const double M[9] = {2, 1, 0, 1, 2, 1, 0, 1, 2}, q[3] = {-1, 2, -3};
    double z[3], w[3];
    dvi_solve_status st;
    assert_int_equal(run_lcp(3, M, q, z, 0, NULL, &st), DVI_OK);
    assert_int_equal(st, DVI_SOLVE_CONVERGED);
    assert_near(z[0], 0.5, 1e-12);
    assert_near(z[1], 0.0, 1e-12);
    assert_near(z[2], 1.5, 1e-12);
    assert_true(ccp_lemke_lcp_residual(3, M, q, z, w) <= 1e-12);
    assert_near(w[1], 4.0, 1e-12);
}

/* Non-symmetric P-matrix M = [[1,2],[0,1]] (minors 1, 1, det 1), q = (−1,−1).
 * z1, z2 > 0 would need z2 = 1, z1 = 1 − 2 = −1 < 0; z1 = 0, z2 > 0 gives
 * z2 = 1 and w1 = 2 − 1 = 1 ≥ 0: z = (0, 1), w = (1, 0), unique (P-matrix).
 * Murty's lower-triangular P-matrix (1 on the diagonal, 2 below), q = −e:
 * z1 = 1 (w1 = 0), then w2 = 2 + z2 − 1 > 0 and w3 = 2 + 2z2 + z3 − 1 > 0
 * force z2 = z3 = 0: z = (1, 0, 0). All three q_i tie in the first ratio test. */
static void test_lcp_p_matrix(void** state)
{
    (void)state;
    const double M[4] = {1, 2, 0, 1}, q[2] = {-1, -1};
    double z[3];
    dvi_solve_status st;
    assert_int_equal(run_lcp(2, M, q, z, 0, NULL, &st), DVI_OK);
    assert_int_equal(st, DVI_SOLVE_CONVERGED);
    assert_near(z[0], 0.0, 1e-12);
    assert_near(z[1], 1.0, 1e-12);
    assert_true(check_lcp(2, M, q, z, 1e-12) <= 1e-12);

    const double Mm[9] = {1, 0, 0, 2, 1, 0, 2, 2, 1}, qm[3] = {-1, -1, -1};
    assert_int_equal(run_lcp(3, Mm, qm, z, 0, NULL, &st), DVI_OK);
    assert_int_equal(st, DVI_SOLVE_CONVERGED);
    assert_near(z[0], 1.0, 1e-12);
    assert_near(z[1], 0.0, 1e-12);
    assert_near(z[2], 0.0, 1e-12);
    assert_true(check_lcp(3, Mm, qm, z, 1e-12) <= 1e-12);
}

/* Degenerate LCPs.
 * (a) M = I, q = (−1, 0): degenerate solution z = (1, 0), w = (0, 0).
 * (b) the 3×3 tridiagonal M with q = (−1, −1, −1) (a three-way tie in the
 *     first ratio test): z2 = 0 would need w2 = z1 + z3 − 1 ≥ 0 with
 *     z1 = z3 = 0.5 → w2 = 0: z = (0.5, 0, 0.5) with w2 = z2 = 0, degenerate.
 * (c) 400 random LCPs of size 2..7 with positive-definite (hence P) M having
 *     small integer entries and q ∈ {−2, −1, 0, 1}^n: many exact ties in the
 *     ratio tests and degenerate bases. Each has exactly one solution, found
 *     by enumerating all 2^n complementary bases; Lemke must find it. */
static void test_lcp_degenerate(void** state)
{
    (void)state;
    double z[8], zb[8];
    dvi_solve_status st;
    const double I2[4] = {1, 0, 0, 1}, qa[2] = {-1, 0};
    assert_int_equal(run_lcp(2, I2, qa, z, 0, NULL, &st), DVI_OK);
    assert_int_equal(st, DVI_SOLVE_CONVERGED);
    assert_near(z[0], 1.0, 1e-12);
    assert_near(z[1], 0.0, 1e-12);

    const double T3[9] = {2, 1, 0, 1, 2, 1, 0, 1, 2}, qb[3] = {-1, -1, -1};
    assert_int_equal(run_lcp(3, T3, qb, z, 0, NULL, &st), DVI_OK);
    assert_int_equal(st, DVI_SOLVE_CONVERGED);
    assert_near(z[0], 0.5, 1e-12);
    assert_near(z[1], 0.0, 1e-12);
    assert_near(z[2], 0.5, 1e-12);
    assert_true(check_lcp(3, T3, qb, z, 1e-12) <= 1e-12);

    uint64_t seed = 12345;
    int nontrivial = 0;
    for (int trial = 0; trial < 400; trial++) {
        int32_t n = 2 + trial % 6;
        double A[64], M[64], q[8];
        /* M = AᵀA + I + K (K skew): xᵀMx ≥ ‖x‖² > 0 → P-matrix */
        for (int32_t i = 0; i < n * n; i++) A[i] = floor(3.0 * base_uniform_sym(&seed));
        for (int32_t i = 0; i < n; i++)
            for (int32_t j = 0; j < n; j++) {
                double s = (i == j) ? 1.0 : 0.0;
                for (int32_t k = 0; k < n; k++) s += A[k * n + i] * A[k * n + j];
                M[i * n + j] = s;
            }
        if (trial % 2)
            for (int32_t i = 0; i < n; i++)
                for (int32_t j = i + 1; j < n; j++) {
                    double k = floor(2.0 * base_uniform_sym(&seed));
                    M[i * n + j] += k;
                    M[j * n + i] -= k;
                }
        for (int32_t i = 0; i < n; i++) q[i] = floor(2.0 * base_uniform_sym(&seed)); /* in {−2, −1, 0, 1} */
        /* several bases may give the same degenerate z; the z is unique */
        assert_true(brute_force_lcp(n, M, q, zb) >= 1);
        int32_t piv;
        assert_int_equal(run_lcp(n, M, q, z, 0, &piv, &st), DVI_OK);
        assert_int_equal(st, DVI_SOLVE_CONVERGED);
        for (int32_t i = 0; i < n; i++) assert_near(z[i], zb[i], 1e-10);
        assert_true(check_lcp(n, M, q, z, 1e-10) <= 1e-10);
        if (piv > 0) nontrivial++;
    }
    assert_true(nontrivial > 200);
}

/* M = −I, q = (−1, −1): w = −z − 1 < 0 for every z ≥ 0, so the LCP has no
 * solution at all and Lemke must stop on a secondary ray, promptly (a ray
 * is tried once more on the second path, so both attempts' pivots count). */
static void test_lcp_ray(void** state)
{
    (void)state;
    const double M[4] = {-1, 0, 0, -1}, q[2] = {-1, -1};
    double z[2];
    int32_t piv;
    dvi_solve_status st;
    assert_int_equal(run_lcp(2, M, q, z, 0, &piv, &st), DVI_NOT_CONVERGED);
    assert_int_equal(st, DVI_SOLVE_RAY);
    assert_true(piv >= 2 && piv <= 6);
    /* an entirely zero column also has no blocking row: M = 0, q = (−1) */
    const double M0[1] = {0}, q0[1] = {-1};
    assert_int_equal(run_lcp(1, M0, q0, z, 0, &piv, &st), DVI_NOT_CONVERGED);
    assert_int_equal(st, DVI_SOLVE_RAY);
    assert_int_equal(piv, 2);
}

/* A 40×40 M-matrix (4 on the diagonal, small negative off-diagonals) with
 * q < 0 has z = −M⁻¹q > 0 (M⁻¹ ≥ 0), reached after 41 pivots; a budget of 3
 * must stop with PIVOT_LIMIT after exactly 3. */
static void test_lcp_pivot_limit(void** state)
{
    (void)state;
    enum { N = 40 };
    double* M = malloc(sizeof(double) * N * N);
    double q[N], z[N];
    uint64_t seed = 7;
    for (int32_t i = 0; i < N; i++) {
        for (int32_t j = 0; j <= i; j++) {
            double v = (i == j) ? 4.0 : -0.05 * (1.0 + base_uniform_sym(&seed));
            M[i * N + j] = v;
            M[j * N + i] = v;
        }
        q[i] = -1.5 - base_uniform_sym(&seed);
    }
    int32_t piv;
    dvi_solve_status st;
    assert_int_equal(run_lcp(N, M, q, z, 3, &piv, &st), DVI_NOT_CONVERGED);
    assert_int_equal(st, DVI_SOLVE_PIVOT_LIMIT);
    assert_int_equal(piv, 3);
    assert_int_equal(run_lcp(N, M, q, z, 0, &piv, &st), DVI_OK);
    assert_int_equal(st, DVI_SOLVE_CONVERGED);
    assert_int_equal(piv, N + 1);
    for (int32_t i = 0; i < N; i++) assert_true(z[i] > 0.0);
    assert_true(check_lcp(N, M, q, z, 1e-12) <= 1e-12);
    free(M);
}

/* A 200×200 M-matrix as above: z = −M⁻¹q > 0 after 201 pivots, so B⁻¹ is
 * recomputed from the basis once on the way (every max(64, n/2) = 100
 * pivots); w = Mz + q must vanish to rounding. */
static void test_lcp_large_reinversion(void** state)
{
    (void)state;
    enum { N = 200 };
    double* M = malloc(sizeof(double) * N * N);
    double q[N], z[N], w[N];
    uint64_t seed = 99;
    for (int32_t i = 0; i < N; i++) {
        for (int32_t j = 0; j <= i; j++) {
            double v = (i == j) ? 3.0 + base_uniform_sym(&seed) : -0.01 * (1.0 + base_uniform_sym(&seed));
            M[i * N + j] = v;
            M[j * N + i] = v;
        }
        q[i] = -1.0 - base_uniform_sym(&seed);
    }
    int32_t piv;
    dvi_solve_status st;
    assert_int_equal(run_lcp(N, M, q, z, 0, &piv, &st), DVI_OK);
    assert_int_equal(st, DVI_SOLVE_CONVERGED);
    assert_int_equal(piv, N + 1);
    assert_true(ccp_lemke_lcp_residual(N, M, q, z, w) <= 1e-14);
    for (int32_t i = 0; i < N; i++) {
        assert_true(z[i] > 0.0);
        assert_true(fabs(w[i]) <= 1e-13);
    }
    free(M);
}

/* The 2×2 LCP of test_lcp_2x2 with variables rescaled by S = diag(1e4, 1e-4):
 * M = S A S = [[2e8, 1], [1, 2e-8]], q = S (−5, −6) = (−5e4, −6e-4) has the
 * solution z = S⁻¹ (4/3, 7/3) = (4/3·1e-4, 7/3·1e4) (w = S(Az_A + q_A) = 0).
 * Entries spanning 16 orders of magnitude: the equilibration makes it the
 * well-scaled problem again. */
static void test_lcp_badly_scaled(void** state)
{
    (void)state;
    const double M[4] = {2e8, 1.0, 1.0, 2e-8}, q[2] = {-5e4, -6e-4};
    double z[2], w[2];
    dvi_solve_status st;
    assert_int_equal(run_lcp(2, M, q, z, 0, NULL, &st), DVI_OK);
    assert_int_equal(st, DVI_SOLVE_CONVERGED);
    assert_near(z[0], 4.0 / 3.0 * 1e-4, 1e-12 * 1e-4);
    assert_near(z[1], 7.0 / 3.0 * 1e4, 1e-12 * 1e4);
    ccp_lemke_lcp_residual(2, M, q, z, w);
    assert_true(fabs(w[0]) <= 1e-12 * 5e4 && fabs(w[1]) <= 1e-12 * 6e-4);
}

static void test_lcp_bad_args(void** state)
{
    (void)state;
    dvi_solve_status st;
    int32_t piv = 5;
    double z[1];
    assert_int_equal(ccp_lemke_lcp_work_size(-1), 0);
    assert_int_equal(ccp_lemke_lcp(-1, NULL, NULL, NULL, 0, 1e-12, NULL, &piv, &st), DVI_ERR_INVALID_ARG);
    assert_int_equal(st, DVI_SOLVE_BAD_INPUT);
    assert_int_equal(piv, 0);
    const double M[1] = {1}, q[1] = {-1};
    assert_int_equal(ccp_lemke_lcp(1, M, q, z, 0, 1e-12, NULL, &piv, &st), DVI_ERR_INVALID_ARG);
    /* non-finite data */
    const double qn[1] = {NAN}, Mn[1] = {INFINITY};
    assert_int_equal(run_lcp(1, M, qn, z, 0, &piv, &st), DVI_ERR_NUMERIC);
    assert_int_equal(st, DVI_SOLVE_DIVERGED);
    assert_int_equal(run_lcp(1, Mn, q, z, 0, &piv, &st), DVI_ERR_NUMERIC);
    assert_int_equal(st, DVI_SOLVE_DIVERGED);
}

/* ------------------------------------------------- part 2: the CCP solver */

/* A small problem in factor form built from a dense D (6·bodies × rows). */
typedef struct test_problem {
    dvi_ccp_problem p;
    dvi_csc D;
    int32_t colptr[33];
    int32_t rowind[32 * 12];
    double values[32 * 12];
    double inv_mass[36 * 2];
    double r[32];
    dvi_ccp_block blocks[32];
} test_problem;

/* dense: column-major, dof × m. */
static void make_factor_problem(test_problem* t, int32_t bodies, int32_t m, const double* dense,
                                const double* inv_diag, const double* r, const dvi_ccp_block* blocks, int32_t nblocks)
{
    memset(t, 0, sizeof *t);
    int32_t dof = 6 * bodies, nz = 0;
    for (int32_t j = 0; j < m; j++) {
        t->colptr[j] = nz;
        for (int32_t i = 0; i < dof; i++)
            if (dense[j * dof + i] != 0.0) {
                t->rowind[nz] = i;
                t->values[nz++] = dense[j * dof + i];
            }
    }
    t->colptr[m] = nz;
    t->D.rows = dof;
    t->D.cols = m;
    t->D.colptr = t->colptr;
    t->D.rowind = t->rowind;
    t->D.values = t->values;
    for (int32_t b = 0; b < bodies; b++)
        for (int32_t i = 0; i < 6; i++) t->inv_mass[36 * b + 7 * i] = inv_diag[6 * b + i];
    memcpy(t->r, r, (size_t)m * sizeof(double));
    memcpy(t->blocks, blocks, (size_t)nblocks * sizeof(dvi_ccp_block));
    t->p = dvi_ccp_problem_empty();
    t->p.rows = m;
    t->p.block_count = nblocks;
    t->p.blocks = t->blocks;
    t->p.body_count = bodies;
    t->p.D = &t->D;
    t->p.inv_mass = t->inv_mass;
    t->p.r = t->r;
}

/* One unit-mass sphere (radius 1: M⁻¹ = diag(1,1,1, 2.5,2.5,2.5)) touching
 * the ground at its centre's level of Jacobian: D columns n = e_z, t1 = e_x,
 * t2 = e_y on the linear part only, so N = I₃ and u = γ + r. */
static void single_contact(test_problem* t, double mu, const double r[3])
{
    double dense[18] = {0};
    dense[0 * 6 + 2] = 1.0; /* n  = z */
    dense[1 * 6 + 0] = 1.0; /* t1 = x */
    dense[2 * 6 + 1] = 1.0; /* t2 = y */
    const double inv[6] = {1, 1, 1, 2.5, 2.5, 2.5};
    dvi_ccp_block b = {DVI_BLOCK_FRICTION, mu, 0, 0};
    make_factor_problem(t, 1, 3, dense, inv, r, &b, 1);
}

/* coulomb: settings.lemke.coulomb (false = the default pyramid CCP). */
static dvi_solve_result solve_lemke(const dvi_ccp_problem* p, int32_t k, bool coulomb, double* gamma, dvi_status expect)
{
    dvi_solver_settings s = dvi_default_solver_settings();
    assert_false(s.lemke.coulomb); /* the documented default */
    assert_true(s.lemke.orient);   /* likewise; these tests check the geometry of the pyramid fixed to the
                                    * contact's tangents (test_world checks the default turned one) */
    s.lemke.orient = false;
    s.lemke.friction_directions = k;
    s.lemke.coulomb = coulomb;
    s.tolerance = 1e-12;
    dvi_solve_result res;
    double hist[4];
    dvi_solver* solver = NULL;
    assert_int_equal(dvi_solver_create("lemke", &s, &solver), DVI_OK);
    assert_int_equal(dvi_solver_record_history(solver, hist, 4), DVI_OK);
    dvi_status st = dvi_solver_solve(solver, p, gamma, &res);
    dvi_solver_destroy(solver);
    if (st != expect) print_error("dvi_solver_solve: %d (%s), message \"%s\"\n", (int)st, dvi_status_string(st), res.message);
    assert_int_equal(st, expect);
    if (st == DVI_OK) {
        assert_int_equal(res.status, DVI_SOLVE_CONVERGED);
        assert_true(res.target_residual <= 1e-12);
        assert_int_equal(res.history_length, 1);
        assert_true(hist[0] == res.target_residual);
        assert_string_equal(res.message, "");
    }
    return res;
}

/* Stick: r = (−1, 0.1, 0), μ = 0.5. With γ_n > 0 the normal row needs
 * u_n = γ_n − 1 = 0 → γ_n = 1; sticking needs u_t = γ_t + r_t = 0 →
 * γ_t = (−0.1, 0), inside the pyramid since Σβ = 0.1 ≤ μγ_n = 0.5 (β along
 * the vertex d_2 = (−1, 0)). Exact: γ = (1, −0.1, 0), u = 0, and since it is
 * inside the cone as well, the CCP residual is ~0 too. */
static void test_ccp_single_contact_stick(void** state)
{
    (void)state;
    test_problem t;
    const double r[3] = {-1.0, 0.1, 0.0};
    single_contact(&t, 0.5, r);
    double g[3];
    for (int coulomb = 0; coulomb <= 1; coulomb++) { /* sticking: both forms agree */
        dvi_solve_result res = solve_lemke(&t.p, 4, coulomb, g, DVI_OK);
        assert_near(g[0], 1.0, 1e-12);
        assert_near(g[1], -0.1, 1e-12);
        assert_near(g[2], 0.0, 1e-12);
        assert_true(res.iterations >= 2);
        assert_true(res.metrics.residual <= 1e-12);
        double dv[6];
        assert_int_equal(dvi_ccp_velocity(&t.p, g, dv), DVI_OK);
        assert_near(dv[2] + r[0], 0.0, 1e-12); /* u_n */
        assert_near(dv[0] + r[1], 0.0, 1e-12); /* u_t1 */
    }
}

/* Slip, coulomb = true: r = (−1, 2, 0), μ = 0.5, N = I. Coulomb answer:
 * γ_n = 1 (u_n = 0);
 * sticking would need ‖γ_t‖ = 2 > μγ_n = 0.5, so the contact slides with
 * γ_t = −μγ_n u_t/‖u_t‖ = (−0.5, 0) and u_t = γ_t + r_t = (1.5, 0).
 * With k = 4 the push is along the pyramid vertex d_2 = (−1, 0): the pyramid
 * LCP gives β_2 = 0.5, λ = 1.5 (w_β2 = −1.5 + λ = 0), i.e. the cone answer
 * exactly. Same with k = 64 (d_32 = (−1, 0) is a vertex too). */
static void test_ccp_single_contact_slip_vertex(void** state)
{
    (void)state;
    test_problem t;
    const double r[3] = {-1.0, 2.0, 0.0};
    single_contact(&t, 0.5, r);
    double g[3];
    for (int32_t k = 4; k <= 64; k *= 16) {
        dvi_solve_result res = solve_lemke(&t.p, k, true, g, DVI_OK);
        assert_near(g[0], 1.0, 1e-12);
        assert_near(g[1], -0.5, 1e-12);
        assert_near(g[2], 0.0, 1e-12);
        assert_true(res.iterations >= 2);
        assert_near(g[1] + r[1], 1.5, 1e-12); /* u_t1: slip speed */
    }
}

/* Slip between two pyramid vertices, coulomb = true. r = (−1, 2cos α,
 * 2sin α), α = π/64, μ = 0.5, k = 64. With N = I the β-part of the LCP is the optimality
 * condition of min ½‖γ_t + r_t‖² over the pyramid section, a regular 64-gon
 * of circumradius μγ_n = 0.5 (γ_n = 1 as before): γ_t is the projection of
 * −r_t = 2(cos(α+π), sin(α+π)) onto it. α + π = π + π/64 is the mid-angle of
 * the edge between vertices 32 and 33, whose midpoint (at distance
 * 0.5 cos(π/64) from 0) is the projection:
 *   γ_t = −0.5 cos(π/64) (cos α, sin α) = −0.499398 (cos α, sin α).
 * The cone answer is −0.5 (cos α, sin α): within 0.5(1 − cos(π/64)) = 6.0e-4. */
static void test_ccp_single_contact_slip_k64(void** state)
{
    (void)state;
    test_problem t;
    const double a = PI / 64.0;
    const double r[3] = {-1.0, 2.0 * cos(a), 2.0 * sin(a)};
    single_contact(&t, 0.5, r);
    double g[3];
    solve_lemke(&t.p, 64, true, g, DVI_OK);
    const double mag = 0.5 * cos(PI / 64.0);
    assert_near(g[0], 1.0, 1e-12);
    assert_near(g[1], -mag * cos(a), 1e-12);
    assert_near(g[2], -mag * sin(a), 1e-12);
    assert_near(g[1], -0.5 * cos(a), 1e-3); /* the cone answer */
    assert_near(g[2], -0.5 * sin(a), 1e-3);
    assert_true(hypot(g[1], g[2]) <= 0.5 * g[0]); /* inscribed: inside the cone */
}

/* Slip, default form (pyramid CCP), through the public API. r = (−1, 2, 0),
 * μ = 0.5, N = I: the CCP answer is the projection of −r = (1, −2, 0) onto
 * the cone, γ_n = (μ‖−r_t‖ + 1)/(1 + μ²) = 2/1.25 = 1.6, γ_t = (−0.8, 0),
 * u = γ + r = (0.6, 1.2, 0), sliding with lift-off u_n = μ‖u_t‖. −r_t points
 * along a pyramid vertex for k = 4 (d_2) and k = 64 (d_32), where the
 * pyramid touches the cone and its normal cone contains the cone's, so the
 * pyramid projection is the cone projection exactly: CCP residual 0.
 * Same along +t2: r = (−1, 0, 2) → γ = (1.6, 0, −0.8).
 * Mid-edge, k = 64: r = (−1, 2cos α, 2sin α), α = π/64, −r_t = 2e with e
 * at angle π + α, the mid-angle of the edge d_32 d_33. The face through that
 * edge is {t·e = μ c n}, c = cos(π/64); −r_t ∥ e keeps the projection in the
 * (n, e) plane, on the ray t·e = μ c n: γ_n = (1 + 2μc)/(1 + μ²c²) =
 * 1.5998067, γ_t = μ c γ_n e (|γ_t| = 0.7989398), against the cone's
 * (1.6, 0.8e): 1.9e-4 and 1.06e-3 apart. */
static void test_ccp_single_contact_slip_default(void** state)
{
    (void)state;
    test_problem t;
    double g[3], dv[6];
    const double r[3] = {-1.0, 2.0, 0.0};
    single_contact(&t, 0.5, r);
    for (int32_t k = 4; k <= 64; k *= 16) {
        dvi_solve_result res = solve_lemke(&t.p, k, false, g, DVI_OK);
        assert_near(g[0], 1.6, 1e-12);
        assert_near(g[1], -0.8, 1e-12);
        assert_near(g[2], 0.0, 1e-12);
        assert_int_equal(dvi_ccp_velocity(&t.p, g, dv), DVI_OK);
        assert_near(dv[2] + r[0], 0.6, 1e-12); /* u_n = μ‖u_t‖: lift-off */
        assert_near(dv[0] + r[1], 1.2, 1e-12); /* u_t1 */
        assert_near(dv[1] + r[2], 0.0, 1e-12); /* u_t2 */
        assert_true(res.metrics.residual <= 1e-12);
        assert_true(res.metrics.cone_violation <= 1e-12);
    }
    const double r2[3] = {-1.0, 0.0, 2.0};
    single_contact(&t, 0.5, r2);
    solve_lemke(&t.p, 4, false, g, DVI_OK);
    assert_near(g[0], 1.6, 1e-12);
    assert_near(g[1], 0.0, 1e-12);
    assert_near(g[2], -0.8, 1e-12);

    const double a = PI / 64.0, mu = 0.5, c = cos(PI / 64.0);
    const double ra[3] = {-1.0, 2.0 * cos(a), 2.0 * sin(a)};
    single_contact(&t, mu, ra);
    solve_lemke(&t.p, 64, false, g, DVI_OK);
    const double gn = (1.0 + 2.0 * mu * c) / (1.0 + mu * mu * c * c);
    assert_near(gn, 1.5998067156, 1e-10); /* the number quoted above */
    assert_near(g[0], gn, 1e-12);
    assert_near(g[1], -mu * c * gn * cos(a), 1e-12);
    assert_near(g[2], -mu * c * gn * sin(a), 1e-12);
    assert_near(g[0], 1.6, 2e-4); /* the cone answer */
    assert_near(g[1], -0.8 * cos(a), 1.1e-3);
    assert_near(g[2], -0.8 * sin(a), 1.1e-3);
    assert_true(hypot(g[1], g[2]) <= mu * g[0]);
}

/* FRICTIONLESS blocks, Delassus form W = [[2,1],[1,2]], r = (−5, −6): the
 * LCP of test_lcp_2x2, γ = (4/3, 7/3). */
static void test_ccp_frictionless_delassus(void** state)
{
    (void)state;
    const int32_t cp[3] = {0, 2, 4}, ri[4] = {0, 1, 0, 1};
    const double wv[4] = {2, 1, 1, 2}, r[2] = {-5, -6};
    dvi_csc W = {2, 2, cp, ri, wv};
    dvi_ccp_block b[2] = {{DVI_BLOCK_FRICTIONLESS, 0, 0, 0}, {DVI_BLOCK_FRICTIONLESS, 0, 0, 0}};
    dvi_ccp_problem p = dvi_ccp_problem_empty();
    p.rows = 2;
    p.block_count = 2;
    p.blocks = b;
    p.W = &W;
    p.r = r;
    double g[2];
    solve_lemke(&p, 4, false, g, DVI_OK);
    assert_near(g[0], 4.0 / 3.0, 1e-12);
    assert_near(g[1], 7.0 / 3.0, 1e-12);
}

/* FRICTION_ROLLING with W = I₆ (Delassus form), so u = γ + r block-wise:
 * r = (−1, 2, 0, 0.3, 0, 0.05), μ = 0.5, μ_spin = 0.1, μ_roll = 0.2, k = 4.
 * Coulomb form (coulomb = true):
 *   normal   γ_n = 1 (u_n = 0);
 *   sliding  as in the slip test: γ_t = (−0.5, 0), u_t = (1.5, 0);
 *   spin     sticking needs |γ_s| = 0.3 > μ_spin γ_n = 0.1: γ_s = −0.1
 *            (σ− = 0.1, λ_s = 0.2 = u_s = 0.2);
 *   rolling  ‖r_r‖ = 0.05 ≤ μ_roll γ_n = 0.2 and along the vertex (0, −1):
 *            sticks, γ_r = (0, −0.05), u_r = 0.
 * γ = (1, −0.5, 0, −0.1, 0, −0.05).
 * Default form (pyramid CCP): γ = Π(−r) onto the product of the pyramids
 * sharing γ_n, −r = (1, −2, 0, −0.3, 0, −0.05). Guess: sliding clipped
 * (along the vertex (−1, 0), so exactly as on the cone), spin clipped,
 * rolling inside. Then γ_n minimises (n − 1)² + (2 − μn)² + (0.3 − μ_s n)²:
 * n = (1 + 2μ + 0.3μ_s)/(1 + μ² + μ_s²) = 2.03/1.26 = 29/18; checks:
 * 2 > μn = 0.806, 0.3 > μ_s n = 0.161, 0.05 ≤ μ_r n = 0.322 (rolling sticks,
 * along the vertex (0, −1)). γ = (29/18, −29/36, 0, −29/180, 0, −0.05),
 * u = (11/18, 43/36, 0, 5/36, 0, 0) with u_n = μ‖u_t‖ + μ_s|u_s|; this is
 * also the cone answer, so the CCP residual is 0. */
static void test_ccp_rolling(void** state)
{
    (void)state;
    const int32_t cp[7] = {0, 1, 2, 3, 4, 5, 6}, ri[6] = {0, 1, 2, 3, 4, 5};
    const double wv[6] = {1, 1, 1, 1, 1, 1}, r[6] = {-1, 2, 0, 0.3, 0, 0.05};
    dvi_csc W = {6, 6, cp, ri, wv};
    dvi_ccp_block b = {DVI_BLOCK_FRICTION_ROLLING, 0.5, 0.1, 0.2};
    dvi_ccp_problem p = dvi_ccp_problem_empty();
    p.rows = 6;
    p.block_count = 1;
    p.blocks = &b;
    p.W = &W;
    p.r = r;
    double g[6];
    const double expect[6] = {1, -0.5, 0, -0.1, 0, -0.05};
    dvi_solve_result res = solve_lemke(&p, 4, true, g, DVI_OK);
    for (int i = 0; i < 6; i++) assert_near(g[i], expect[i], 1e-12);
    assert_true(res.metrics.cone_violation <= 1e-12);

    const double expect_relaxed[6] = {29.0 / 18.0, -29.0 / 36.0, 0, -29.0 / 180.0, 0, -0.05};
    res = solve_lemke(&p, 4, false, g, DVI_OK);
    for (int i = 0; i < 6; i++) assert_near(g[i], expect_relaxed[i], 1e-12);
    assert_true(res.metrics.cone_violation <= 1e-12);
    assert_true(res.metrics.residual <= 1e-12);
}

/* A bilateral joint with a DUPLICATED row plus one contact, blocks
 * interleaved [BILATERAL, FRICTION, BILATERAL] (rows 0 | 1,2,3 | 4).
 * Sphere, mass 1, radius 1 (M⁻¹ = diag(1,1,1, 2.5,2.5,2.5)), touching the
 * ground at p = (0,0,−1) from its centre; Jacobian rows [d, p×d]:
 *   n  = (0,0,1, 0,0,0),  t1 = (1,0,0, 0,−1,0),  t2 = (0,1,0, 1,0,0),
 *   joint rows 0 and 4: ω_y = 0, i.e. (0,0,0, 0,1,0), twice.
 * N_BB = 2.5 [[1,1],[1,1]] (singular), N_{B,t1} = −2.5, N_nn = 1,
 * N_t1t1 = N_t2t2 = 3.5, other entries 0. Free velocity v = (2,0,−1),
 * ω = (0,0.4,0): r = Dᵀ(v, ω) = (0.4 | −1, 2 − 0.4 = 1.6, 0 | 0.4).
 * Schur: N_BB⁺ = 0.1 [[1,1],[1,1]]; N_red(t1,t1) = 3.5 − 2.5 = 1 (locked
 * rotation), r_red(t1) = 1.6 + 2.5·0.1·2·0.4 = 2.0; so the reduced problem is
 * the slip test. Coulomb form (coulomb = true): γ_n = 1, γ_t = (−0.5, 0). Then
 * λ_B = −N_BB⁺ (r_B + N_BC γ_C) = −0.1·2·(0.4 + 1.25) = −0.33 per row (the
 * minimum-norm split of the joint impulse −0.66). Check: u_B = 2.5(−0.66)
 * − 2.5(−0.5) + 0.4 = 0, u_t1 = −2.5(−0.66) + 3.5(−0.5) + 1.6 = 1.5.
 * Default form (pyramid CCP): the reduced problem N_red = diag(1, 1, 3.5),
 * r_red = (−1, 2, 0) is symmetric in t2, so γ_t2 = 0 and (γ_n, γ_t1) is the
 * default slip answer (1.6, −0.8). λ_B = −0.1·2·(0.4 + (−2.5)(−0.8)) = −0.48
 * per row. Check: u_B = 2.5(−0.96) − 2.5(−0.8) + 0.4 = 0, u_t1 = −2.5(−0.96)
 * + 3.5(−0.8) + 1.6 = 1.2, u_n = 0.6 = μ u_t1. */
static void test_ccp_redundant_bilateral(void** state)
{
    (void)state;
    double dense[5 * 6] = {0};
    dense[0 * 6 + 4] = 1.0;                         /* joint: ω_y */
    dense[1 * 6 + 2] = 1.0;                         /* n */
    dense[2 * 6 + 0] = 1.0, dense[2 * 6 + 4] = -1.0; /* t1 */
    dense[3 * 6 + 1] = 1.0, dense[3 * 6 + 3] = 1.0;  /* t2 */
    dense[4 * 6 + 4] = 1.0;                         /* joint again */
    const double inv[6] = {1, 1, 1, 2.5, 2.5, 2.5}, r[5] = {0.4, -1.0, 1.6, 0.0, 0.4};
    const dvi_ccp_block b[3] = {
        {DVI_BLOCK_BILATERAL, 0, 0, 0}, {DVI_BLOCK_FRICTION, 0.5, 0, 0}, {DVI_BLOCK_BILATERAL, 0, 0, 0}};
    test_problem t;
    make_factor_problem(&t, 1, 5, dense, inv, r, b, 3);
    double g[5];
    const double expect[5] = {-0.33, 1.0, -0.5, 0.0, -0.33};
    solve_lemke(&t.p, 4, true, g, DVI_OK);
    for (int i = 0; i < 5; i++) assert_near(g[i], expect[i], 1e-12);
    double dv[6];
    assert_int_equal(dvi_ccp_velocity(&t.p, g, dv), DVI_OK);
    assert_near(dv[4] + r[0], 0.0, 1e-12);             /* ω_y after the step: joint holds */
    assert_near(dv[0] - dv[4] + r[2], 1.5, 1e-12);     /* slip speed u_t1 */

    const double expect_relaxed[5] = {-0.48, 1.6, -0.8, 0.0, -0.48};
    solve_lemke(&t.p, 4, false, g, DVI_OK);
    for (int i = 0; i < 5; i++) assert_near(g[i], expect_relaxed[i], 1e-12);
    assert_int_equal(dvi_ccp_velocity(&t.p, g, dv), DVI_OK);
    assert_near(dv[4] + r[0], 0.0, 1e-12);         /* joint holds */
    assert_near(dv[0] - dv[4] + r[2], 1.2, 1e-12); /* u_t1 */
    assert_near(dv[2] + r[1], 0.6, 1e-12);         /* u_n = μ u_t1: lift-off */

    /* only bilateral rows (LCP of size 0): a point mass held by x-rows given
     * twice, r = (−1, −1): N = [[1,1],[1,1]], λ1 + λ2 = 1, split 0.5/0.5. */
    double dense2[2 * 6] = {0};
    dense2[0] = dense2[6] = 1.0;
    const double r2[2] = {-1.0, -1.0};
    const dvi_ccp_block b2[2] = {{DVI_BLOCK_BILATERAL, 0, 0, 0}, {DVI_BLOCK_BILATERAL, 0, 0, 0}};
    make_factor_problem(&t, 1, 2, dense2, inv, r2, b2, 2);
    dvi_solve_result res = solve_lemke(&t.p, 4, false, g, DVI_OK);
    assert_int_equal(res.iterations, 0);
    assert_near(g[0], 0.5, 1e-12);
    assert_near(g[1], 0.5, 1e-12);
}

/* A vertical stack of 5 spheres (bench generator): exact answer normal
 * impulse at contact k = (5 − k)·m·g·h, tangential 0, all sticking, so the
 * pyramid answer equals the cone answer, in both forms. */
static void test_ccp_sphere_stack(void** state)
{
    (void)state;
    dvi_gen_problem gp;
    const double mass = 2.0, g = 9.81, h = 0.01;
    assert_int_equal(dvi_gen_sphere_stack(5, 0.1, mass, 0.5, g, h, &gp), DVI_OK);
    double gamma[15];
    for (int coulomb = 0; coulomb <= 1; coulomb++) {
        dvi_solve_result res = solve_lemke(&gp.p, 4, coulomb, gamma, DVI_OK);
        for (int k = 0; k < 5; k++) {
            assert_near(gamma[3 * k], (5 - k) * mass * g * h, 1e-12);
            assert_near(gamma[3 * k + 1], 0.0, 1e-12);
            assert_near(gamma[3 * k + 2], 0.0, 1e-12);
        }
        assert_true(res.metrics.residual <= 1e-12);
    }
    dvi_gen_free(&gp);
}

/* Random bodies/contacts with independent bilateral rows (bench generator),
 * then the same problem with every bilateral row given twice: the contact
 * impulses must not change, each duplicated pair must split its original
 * impulse equally, and the joints must hold (u_B = 0). In both forms. */
static void test_ccp_random_duplicated_joints(void** state)
{
    (void)state;
    dvi_gen_problem gp;
    assert_int_equal(dvi_gen_random(4, 6, 5, 2024, &gp), DVI_OK);
    const dvi_ccp_problem* p = &gp.p;
    const int32_t m = p->rows, nb = gp.bilateral, m2 = m + nb;
    double* g1 = calloc((size_t)m, sizeof(double));
    double* g2 = calloc((size_t)m2, sizeof(double));

    /* duplicate: rows [B, B, C] */
    const dvi_csc* D = p->D;
    int32_t nnz = D->colptr[m], nnz2 = nnz + D->colptr[nb];
    int32_t* cp = malloc(sizeof(int32_t) * (size_t)(m2 + 1));
    int32_t* ri = malloc(sizeof(int32_t) * (size_t)nnz2);
    double* vx = malloc(sizeof(double) * (size_t)nnz2);
    double* r2 = malloc(sizeof(double) * (size_t)m2);
    dvi_ccp_block* b2 = malloc(sizeof(dvi_ccp_block) * (size_t)(p->block_count + nb));
    int32_t nz = 0;
    for (int32_t j2 = 0; j2 < m2; j2++) {
        int32_t j = j2 < nb ? j2 : j2 - nb; /* source column */
        cp[j2] = nz;
        for (int32_t e = D->colptr[j]; e < D->colptr[j + 1]; e++) {
            ri[nz] = D->rowind[e];
            vx[nz++] = D->values[e];
        }
        r2[j2] = p->r[j];
    }
    cp[m2] = nz;
    for (int32_t b = 0; b < nb; b++) b2[b] = p->blocks[b];
    for (int32_t b = 0; b < p->block_count; b++) b2[nb + b] = p->blocks[b];
    dvi_csc D2 = {D->rows, m2, cp, ri, vx};
    dvi_ccp_problem p2 = *p;
    p2.rows = m2;
    p2.block_count = p->block_count + nb;
    p2.blocks = b2;
    p2.D = &D2;
    p2.r = r2;
    double* dv = calloc((size_t)D->rows, sizeof(double));
    for (int coulomb = 0; coulomb <= 1; coulomb++) {
        solve_lemke(p, 8, coulomb, g1, DVI_OK);
        solve_lemke(&p2, 8, coulomb, g2, DVI_OK);
        for (int32_t i = 0; i < nb; i++) {
            assert_near(g2[i], 0.5 * g1[i], 1e-9 * (1.0 + fabs(g1[i])));
            assert_near(g2[nb + i], 0.5 * g1[i], 1e-9 * (1.0 + fabs(g1[i])));
        }
        for (int32_t i = nb; i < m; i++) assert_near(g2[nb + i], g1[i], 1e-9 * (1.0 + fabs(g1[i])));

        /* joints hold: u_B = D_Bᵀ M⁻¹ D γ + r_B = 0 */
        assert_int_equal(dvi_ccp_velocity(p, g1, dv), DVI_OK);
        for (int32_t j = 0; j < nb; j++) {
            double u = p->r[j];
            for (int32_t e = D->colptr[j]; e < D->colptr[j + 1]; e++) u += D->values[e] * dv[D->rowind[e]];
            assert_near(u, 0.0, 1e-10);
        }
    }
    free(dv);
    free(cp);
    free(ri);
    free(vx);
    free(r2);
    free(b2);
    free(g1);
    free(g2);
    dvi_gen_free(&gp);
}

/* A granular bed at rest (bench generator, ~100 contacts, FCC packing with
 * 12 contacts per sphere: N is very singular, the LCP highly degenerate, and
 * N ~ 1e5 next to O(1) couplings). Lemke must finish with an exact LCP
 * answer in both forms: LCP residual ≤ 1e-12, γ in the cone (inscribed
 * pyramid). At rest everything sticks (inside the 4-pyramid), so both forms
 * solve the CCP itself (CCP residual ≤ 1e-10) with the same objective (the
 * Coulomb LCP is not a minimisation, but its answer here is a CCP solution;
 * measured: equal to 1e-15 relative; held to 1e-12). */
static void test_ccp_granular_bed(void** state)
{
    (void)state;
    dvi_gen_problem gp;
    assert_int_equal(dvi_gen_granular(100, 0.5, 0.01, 3, &gp), DVI_OK);
    double* g = calloc((size_t)gp.p.rows, sizeof(double));
    double obj[2];
    for (int coulomb = 0; coulomb <= 1; coulomb++) {
        dvi_solve_result res = solve_lemke(&gp.p, 4, coulomb, g, DVI_OK);
        double gmax = 0.0;
        for (int32_t i = 0; i < gp.p.rows; i++) gmax = fmax(gmax, fabs(g[i]));
        assert_true(gmax > 0.0);
        assert_true(res.metrics.cone_violation <= 1e-12 * gmax);
        assert_true(res.metrics.residual <= 1e-10);
        obj[coulomb] = res.metrics.objective;
        print_message("  granular bed, %s form: %d pivots, objective %.17g, CCP residual %.3e\n",
                      coulomb ? "coulomb" : "default", res.iterations, obj[coulomb], res.metrics.residual);
    }
    assert_near(obj[0], obj[1], 1e-12 * fabs(obj[1]));
    free(g);
    dvi_gen_free(&gp);
}

/* The warm start (lemke.c, WARM START): from the answer of a cold solve
 * the guess names the basis, which is checked and taken with no pivot; the
 * answer is the cold one. From a wrong guess (a sliding one for a contact
 * that sticks, then a sticking one for a contact that slides) the basis
 * fails its check and Lemke pivots from the start to the same answer; on a
 * granular bed (redundant contacts: M_ZZ singular) the guess is given up
 * and the answer is again the cold one. */
static dvi_solve_result solve_warm(const dvi_ccp_problem* p, double* gamma, bool warm, bool coulomb)
{
    dvi_solver_settings s = dvi_default_solver_settings();
    s.lemke.friction_directions = 4;
    s.lemke.coulomb = coulomb;
    s.tolerance = 1e-12;
    s.warm_start = warm;
    dvi_solve_result res;
    dvi_solver* solver = NULL;
    assert_int_equal(dvi_solver_create("lemke", &s, &solver), DVI_OK);
    assert_int_equal(dvi_solver_solve(solver, p, gamma, &res), DVI_OK);
    dvi_solver_destroy(solver);
    assert_int_equal(res.status, DVI_SOLVE_CONVERGED);
    assert_true(res.target_residual <= 1e-12);
    return res;
}

static void test_ccp_warm_start(void** state)
{
    (void)state;
    /* a stack of 5 spheres: 0 pivots from the cold answer */
    dvi_gen_problem gp;
    assert_int_equal(dvi_gen_sphere_stack(5, 0.1, 2.0, 0.5, 9.81, 0.01, &gp), DVI_OK);
    double gs[15], gs2[15];
    dvi_solve_result cold = solve_warm(&gp.p, gs, false, false);
    assert_true(cold.iterations >= 5);
    memcpy(gs2, gs, sizeof gs);
    dvi_solve_result warm = solve_warm(&gp.p, gs2, true, false);
    assert_int_equal(warm.iterations, 0);
    for (int i = 0; i < 15; i++) assert_near(gs2[i], gs[i], 1e-12);
    dvi_gen_free(&gp);

    /* 100 spheres in a bed: the guess is given up, the same objective */
    assert_int_equal(dvi_gen_granular(100, 0.5, 0.01, 3, &gp), DVI_OK);
    const int32_t m = gp.p.rows;
    double* g = calloc((size_t)m, sizeof(double));
    double* g2 = calloc((size_t)m, sizeof(double));
    cold = solve_warm(&gp.p, g, false, false);
    memcpy(g2, g, (size_t)m * sizeof(double));
    warm = solve_warm(&gp.p, g2, true, false);
    print_message("  granular bed: cold %d pivots, warm %d; objectives %.17g, %.17g\n", cold.iterations,
                  warm.iterations, cold.metrics.objective, warm.metrics.objective);
    assert_near(warm.metrics.objective, cold.metrics.objective, 1e-12 * fabs(cold.metrics.objective));
    free(g);
    free(g2);
    dvi_gen_free(&gp);

    /* one contact: sticks (r = (−1, 0.1, 0): γ = (1, −0.1, 0) in both forms),
     * slides (r = (−1, 2, 0): Coulomb's γ = (1, −0.5, 0); the relaxed form
     * lifts it, u_n = μλ: γ = (1.6, −0.8, 0), u_t = (1.2, 0)) */
    const double r_stick[3] = {-1.0, 0.1, 0.0}, r_slide[3] = {-1.0, 2.0, 0.0};
    const double g_stick[3] = {1.0, -0.1, 0.0};
    const double g_slide[2][3] = {{1.6, -0.8, 0.0}, {1.0, -0.5, 0.0}};
    for (int coulomb = 0; coulomb <= 1; coulomb++)
        for (int c = 0; c < 2; c++) {
            test_problem t;
            single_contact(&t, 0.5, c == 0 ? r_stick : r_slide);
            const double* want = c == 0 ? g_stick : g_slide[coulomb];
            const double* other = c == 0 ? g_slide[coulomb] : g_stick;
            double gg[3];
            memcpy(gg, want, sizeof gg); /* the right guess */
            dvi_solve_result res = solve_warm(&t.p, gg, true, coulomb);
            assert_int_equal(res.iterations, 0);
            for (int i = 0; i < 3; i++) assert_near(gg[i], want[i], 1e-12);
            memcpy(gg, other, sizeof gg); /* the other contact's answer: a wrong guess */
            res = solve_warm(&t.p, gg, true, coulomb);
            assert_true(res.iterations >= 2);
            for (int i = 0; i < 3; i++) assert_near(gg[i], want[i], 1e-12);
        }
}

/* The LCP check is honest: with tolerance 1e-30 (below rounding) a finished
 * pivoting run is reported as MAX_ITERATIONS with the residual in the message. */
static void test_ccp_lcp_check_reported(void** state)
{
    (void)state;
    dvi_gen_problem gp;
    assert_int_equal(dvi_gen_random(4, 6, 5, 2025, &gp), DVI_OK); /* 2024 ends exactly (residual 1e-33) */
    double* g = calloc((size_t)gp.p.rows, sizeof(double));
    dvi_solver_settings s = dvi_default_solver_settings();
    s.tolerance = 1e-30;
    dvi_solve_result res;
    memset(&res, 0, sizeof res);
    assert_int_equal(dvi_ccp_solve(&gp.p, "lemke", &s, g, &res), DVI_NOT_CONVERGED);
    assert_int_equal(res.status, DVI_SOLVE_MAX_ITERATIONS);
    assert_true(res.target_residual > 1e-30 && res.target_residual <= 1e-12);
    assert_non_null(strstr(res.message, "LCP check failed"));
    free(g);
    dvi_gen_free(&gp);
}

/* Runs the relaxed form through the internal entry point. */
static void solve_relaxed(const dvi_ccp_problem* p, int32_t k, double* gamma, dvi_solve_result* res)
{
    dvi_solver_settings s = dvi_default_solver_settings();
    s.lemke.orient = false; /* the pyramid fixed to the tangents, as solve_lemke */
    s.lemke.friction_directions = k;
    s.tolerance = 1e-12;
    ccp_work w;
    char msg[256];
    memset(&w, 0, sizeof w);
    memset(res, 0, sizeof *res);
    assert_int_equal(ccp_work_prepare(&w, p, 1, msg, sizeof msg), DVI_OK);
    dvi_status st = ccp_lemke_ccp(&w, &s, true, gamma, res);
    if (st != DVI_OK) print_error("ccp_lemke_ccp: %d, \"%s\"\n", (int)st, res->message);
    assert_int_equal(st, DVI_OK);
    assert_int_equal(res->status, DVI_SOLVE_CONVERGED);
    assert_true(res->target_residual <= 1e-12);
    ccp_work_free(&w);
}

/* Relaxed form (pyramid CCP): r = (−1, 2, 0), μ = 0.5, N = I. The CCP answer
 * is the projection of −r = (1, −2, 0) onto the cone: μ‖t‖ = 1 > −n = −1 and
 * ‖t‖ = 2 > μn, so γ_n = (μ‖t‖ + n)/(μ² + 1) = 2/1.25 = 1.6 and
 * γ_t = μγ_n (−1, 0) = (−0.8, 0); u = γ + r = (0.6, 1.2, 0), u_n = μ‖u_t‖.
 * For k = 4 the answer lies on the pyramid edge along (−1, 0), where the
 * pyramid touches the cone, so it is exact (the pyramid's normal cone there
 * contains the cone's). For α = π/64 (mid-edge, k = 64) the pyramid answer is
 * within 2e-3 of the cone answer (1.6, −0.8 cos α, −0.8 sin α). */
static void test_ccp_relaxed(void** state)
{
    (void)state;
    test_problem t;
    double g[3];
    dvi_solve_result res;
    const double r[3] = {-1.0, 2.0, 0.0};
    single_contact(&t, 0.5, r);
    solve_relaxed(&t.p, 4, g, &res);
    assert_near(g[0], 1.6, 1e-12);
    assert_near(g[1], -0.8, 1e-12);
    assert_near(g[2], 0.0, 1e-12);
    const double a = PI / 64.0;
    const double ra[3] = {-1.0, 2.0 * cos(a), 2.0 * sin(a)};
    single_contact(&t, 0.5, ra);
    solve_relaxed(&t.p, 64, g, &res);
    assert_near(g[0], 1.6, 2e-3);
    assert_near(g[1], -0.8 * cos(a), 2e-3);
    assert_near(g[2], -0.8 * sin(a), 2e-3);
    assert_true(hypot(g[1], g[2]) <= 0.5 * g[0] * (1.0 + 1e-12));

    /* on a random problem with sliding contacts the CCP residual of the
     * relaxed answer falls as the pyramid refines (k = 4, 16, 64), while the
     * Coulomb LCP's does not (sliding contacts have u_n = 0 there) */
    dvi_gen_problem gp;
    assert_int_equal(dvi_gen_random(10, 20, 8, 5, &gp), DVI_OK);
    double* gg = calloc((size_t)gp.p.rows, sizeof(double));
    double prev = INFINITY;
    for (int32_t k = 4; k <= 64; k *= 4) {
        dvi_ccp_metrics mt;
        solve_relaxed(&gp.p, k, gg, &res);
        assert_int_equal(dvi_ccp_evaluate(&gp.p, gg, &mt), DVI_OK);
        assert_true(mt.residual < prev);
        assert_true(mt.cone_violation <= 1e-12);
        prev = mt.residual;
    }
    assert_true(prev <= 5e-3);
    /* the registered solver's default is this relaxed form, bit for bit */
    double* gd = calloc((size_t)gp.p.rows, sizeof(double));
    dvi_solve_result rd = solve_lemke(&gp.p, 64, false, gd, DVI_OK);
    assert_memory_equal(gd, gg, (size_t)gp.p.rows * sizeof(double));
    assert_true(rd.metrics.residual == prev);
    free(gd);
    dvi_solve_result r64 = solve_lemke(&gp.p, 64, true, gg, DVI_OK);
    assert_true(r64.metrics.residual > 10.0 * prev);
    free(gg);
    dvi_gen_free(&gp);
}

/* 10 frictional contacts with k = 4: LCP size 10·(2 + 4) = 60. With
 * max_lcp_size = 59 the solver refuses (DVI_ERR_UNSUPPORTED, message naming
 * the setting); with 60 it solves (W = I: each contact is the stick test). */
static void test_ccp_size_limit(void** state)
{
    (void)state;
    enum { C = 10, M = 3 * C };
    int32_t cp[M + 1], ri[M];
    double wv[M], r[M], g[M];
    dvi_ccp_block b[C];
    for (int32_t i = 0; i < M; i++) {
        cp[i] = i;
        ri[i] = i;
        wv[i] = 1.0;
        r[i] = (i % 3 == 0) ? -1.0 : (i % 3 == 1 ? 0.1 : 0.0);
    }
    cp[M] = M;
    for (int32_t c = 0; c < C; c++) b[c] = (dvi_ccp_block){DVI_BLOCK_FRICTION, 0.5, 0, 0};
    dvi_csc W = {M, M, cp, ri, wv};
    dvi_ccp_problem p = dvi_ccp_problem_empty();
    p.rows = M;
    p.block_count = C;
    p.blocks = b;
    p.W = &W;
    p.r = r;
    dvi_solver_settings s = dvi_default_solver_settings();
    s.lemke.max_lcp_size = 59;
    dvi_solve_result res;
    memset(&res, 0, sizeof res);
    assert_int_equal(dvi_ccp_solve(&p, "lemke", &s, g, &res), DVI_ERR_UNSUPPORTED);
    assert_non_null(strstr(res.message, "max_lcp_size"));
    assert_non_null(strstr(res.message, "60"));
    s.lemke.max_lcp_size = 60;
    s.tolerance = 1e-12;
    assert_int_equal(dvi_ccp_solve(&p, "lemke", &s, g, &res), DVI_OK);
    for (int32_t i = 0; i < M; i++) assert_near(g[i], -r[i], 1e-12);

    /* the dense N is limited too: 30 bilateral rows (LCP size 0) with
     * max_lcp_size = 29 are refused, naming the rows */
    dvi_ccp_block bil[M];
    for (int32_t i = 0; i < M; i++) bil[i] = (dvi_ccp_block){DVI_BLOCK_BILATERAL, 0, 0, 0};
    p.block_count = M;
    p.blocks = bil;
    s.lemke.max_lcp_size = 29;
    assert_int_equal(dvi_ccp_solve(&p, "lemke", &s, g, &res), DVI_ERR_UNSUPPORTED);
    assert_non_null(strstr(res.message, "30 rows"));
    s.lemke.max_lcp_size = 30;
    assert_int_equal(dvi_ccp_solve(&p, "lemke", &s, g, &res), DVI_OK);
    for (int32_t i = 0; i < M; i++) assert_near(g[i], -r[i], 1e-12); /* W = I: λ = −r */
}

/* One solver instance, two solves: the scratch memory is reused and the
 * answers are bitwise identical (deterministic); a pivot budget of 1 ends in
 * PIVOT_LIMIT with a message, and the summary/registry entry exists. */
static void test_ccp_reuse_and_budget(void** state)
{
    (void)state;
    test_problem t;
    const double r[3] = {-1.0, 2.0, 0.0};
    single_contact(&t, 0.5, r);
    dvi_solver* sv = NULL;
    dvi_solver_settings s = dvi_default_solver_settings();
    s.tolerance = 1e-12;
    assert_int_equal(dvi_solver_create("lemke", &s, &sv), DVI_OK);
    double g1[3], g2[3];
    dvi_solve_result res;
    memset(&res, 0, sizeof res);
    assert_int_equal(dvi_solver_solve(sv, &t.p, g1, &res), DVI_OK);
    assert_int_equal(dvi_solver_solve(sv, &t.p, g2, &res), DVI_OK);
    assert_memory_equal(g1, g2, sizeof g1);
    s.lemke.max_pivots = 1;
    assert_int_equal(dvi_solver_set_settings(sv, &s), DVI_OK);
    assert_int_equal(dvi_solver_solve(sv, &t.p, g2, &res), DVI_NOT_CONVERGED);
    assert_int_equal(res.status, DVI_SOLVE_PIVOT_LIMIT);
    assert_int_equal(res.iterations, 1);
    assert_non_null(strstr(res.message, "pivot"));
    dvi_solver_destroy(sv);
    assert_true(ccp_solver_find("lemke")->summary[0] != '\0');
    assert_false(ccp_solver_find("lemke")->targets_ccp);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lcp_q_nonnegative),
        cmocka_unit_test(test_lcp_2x2),
        cmocka_unit_test(test_lcp_3x3),
        cmocka_unit_test(test_lcp_p_matrix),
        cmocka_unit_test(test_lcp_degenerate),
        cmocka_unit_test(test_lcp_ray),
        cmocka_unit_test(test_lcp_pivot_limit),
        cmocka_unit_test(test_lcp_large_reinversion),
        cmocka_unit_test(test_lcp_badly_scaled),
        cmocka_unit_test(test_lcp_bad_args),
        cmocka_unit_test(test_ccp_single_contact_stick),
        cmocka_unit_test(test_ccp_single_contact_slip_vertex),
        cmocka_unit_test(test_ccp_single_contact_slip_k64),
        cmocka_unit_test(test_ccp_single_contact_slip_default),
        cmocka_unit_test(test_ccp_frictionless_delassus),
        cmocka_unit_test(test_ccp_rolling),
        cmocka_unit_test(test_ccp_redundant_bilateral),
        cmocka_unit_test(test_ccp_sphere_stack),
        cmocka_unit_test(test_ccp_random_duplicated_joints),
        cmocka_unit_test(test_ccp_granular_bed),
        cmocka_unit_test(test_ccp_warm_start),
        cmocka_unit_test(test_ccp_lcp_check_reported),
        cmocka_unit_test(test_ccp_relaxed),
        cmocka_unit_test(test_ccp_size_limit),
        cmocka_unit_test(test_ccp_reuse_and_budget),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
