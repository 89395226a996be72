/* dvicontact — Lemke's complementary pivoting on the pyramid LCP.
 *
 * PROBLEM. The CCP of ccp.h (γ ∈ K, u = Nγ + r ∈ K*, ⟨γ, u⟩ = 0) with every
 * friction cone replaced by an inscribed k-sided pyramid (Anitescu & Potra,
 * "Formulating dynamic multi-rigid-body contact problems with friction as
 * solvable linear complementarity problems", Nonlinear Dynamics 14, 1997).
 * The pyramid has its k vertices on the cone's circle, at the unit
 * directions d_j = (cos 2πj/k, sin 2πj/k), j = 0..k-1 (k = friction_directions;
 * multiples of a quarter turn are exact), so it lies inside the cone (γ is
 * always cone-feasible) and its friction bound along a direction is at most
 * a factor cos(π/k) below the cone's (1.2e-3 relative for k = 64).
 *
 * LCP per block (z ⊥ w, both ≥ 0):
 *   FRICTIONLESS      γ_n         ⊥ u_n
 *   FRICTION          γ_n         ⊥ u_n
 *                     β_j (k)     ⊥ d_jᵀu_t + λ            γ_t = Σ β_j d_j
 *                     λ           ⊥ μ γ_n − Σ β_j          (λ ≈ sliding speed)
 *   FRICTION_ROLLING  as FRICTION, then spin with 2 directions ±1:
 *                     σ±          ⊥ ±u_s + λ_s             γ_s = σ+ − σ−
 *                     λ_s         ⊥ μ_spin γ_n − σ+ − σ−
 *                     and rolling with its own k-pyramid:
 *                     ρ_j (k)     ⊥ d_jᵀu_r + λ_r          γ_r = Σ ρ_j d_j
 *                     λ_r         ⊥ μ_roll γ_n − Σ ρ_j
 * Writing γ_C = T z (T has at most two entries per LCP column), the LCP is
 * M = Tᵀ N_red T + E, q = Tᵀ r_red, E holding the ±1 and μ couplings above.
 * This is the Coulomb model: a sliding contact has u_n = 0. The CCP of
 * ccp.h is the Anitescu–Tasora relaxation, where sliding lifts the contact
 * (u_n = μ‖u_t‖), so on sliding contacts the two answers differ by design
 * (stick and separation agree). By default (settings.lemke.coulomb = false)
 * the solver therefore solves the pyramid version of the CCP: w_n = u_n − μλ
 * (− μ_spin λ_s − μ_roll λ_r), the optimality conditions of
 * min ½γᵀNγ + rᵀγ over the pyramids; E is then skew, M positive
 * semidefinite, and the answer tends to the CCP's as k grows.
 *
 * BILATERAL ROWS are eliminated first by a Schur complement. With B the
 * bilateral rows and C the others:
 *   N_red = N_CC − N_CB N_BB⁺ N_BC,   r_red = r_C − N_CB N_BB⁺ r_B,
 *   λ_B   = −N_BB⁺ (r_B + N_BC γ_C).
 * N_BB may be singular (redundant joint rows, e.g. a rover's differential
 * linkage): N_BB⁺ is the eigen-decomposition pseudo-inverse (src/ccp/symeig.c),
 * N_BB⁺ = U Uᵀ with U = V_k Λ_k^(-1/2) over the eigenvalues above
 * 1e-9 · λ_max. Dropped directions carry no impulse, so redundant rows share
 * their impulse equally (minimum-norm λ_B). Bilateral equations that are
 * inconsistent (r_B outside the range of N_BB) are met in least squares.
 * Why 1e-9 and not a cut near rounding level: a loop that is redundant only
 * to second order (the rover's differential with revolute link ends) has an
 * eigenvalue that grows from rounding level (1e-17 · λ_max) as θ² when the
 * mechanism moves by θ: 1e-12 · λ_max after a 0.1 m wheel lift, 8e-12 at
 * 0.2 m. Kept, that direction is inverted with a gain of 1/λ, and on the
 * step where it crosses the cut the rounding error of the Schur complement
 * (N_CC − GᵀG with entries ~1/λ) returns impulses of ~50 kN·ms for a
 * 300 kg rover. The rover's independent rows have eigenvalues ≥ 7e-8 ·
 * λ_max (both variants), so 1e-9 separates the two with a margin of ~70 on
 * either side. A mechanism whose independent rows span more than 1e9 in
 * N_BB's eigenvalues (mass or lever ratios beyond ~3e4) would lose rows here.
 *
 * ALGORITHM (Lemke 1965, "Bimatrix equilibrium points and mathematical
 * programming", Management Science 11; lexicographic degeneracy resolution
 * as in Cottle, Pang & Stone, "The Linear Complementarity Problem", 1992,
 * chapter 4):
 *   (0) q ≥ 0: z = 0, no pivot.
 *   (1) equilibrate: LCP(R M C, R q) has the solutions z = C z'; R and C are
 *       powers of two (exact) from Ruiz's row/column max-norm iteration, so
 *       that contact problems with N ~ 1e5 next to the O(1) friction
 *       couplings pivot on comparable numbers. R M C is never formed.
 *       Basis B = I (all w basic), covering vector e = 1, artificial z0
 *       enters at the row of min q' (the last such row on ties, which makes
 *       every row of [x_B, B⁻¹] lexico-positive).
 *   (2) the complement of the variable that just left enters; its column
 *       d = B⁻¹a; blocking rows are those with d_i > tol, tol = 1e-8·max|d|
 *       (relative to the column scale, floor 1e-15·max|a|); none: RAY.
 *       When the choice is delicate (a tie, a pivot below 1e-3·max|d|, or
 *       no blocking row) d is refined once against the basis itself,
 *       d += B⁻¹(a − B d), the size of that correction joins tol, and the
 *       test is made again. Why: the updated B⁻¹ carries the rounding of
 *       every rank-1 update since the last reinversion, and an entry of d
 *       that is zero in exact arithmetic (a redundant contact's row: four
 *       corners of a box face give rank 3) comes out as that noise. A pivot
 *       on it makes the basis singular: on 5- and 6-row box pyramids the
 *       old tol = 1e-10·max|d| pivoted on entries of 1.2e-10–3.2e-10·max|d|
 *       and the LCP check then failed with residuals of 0.2–1,700.
 *   (3) leaving row: minimum ratio x_i/d_i; among ties (x_i − θd_i within
 *       1e-12·max|x|) z0 leaves if it can, otherwise the lexicographic
 *       minimum of the rows (x_i, B⁻¹_i·)/d_i (rows of B⁻¹ are independent,
 *       so ties are broken and no basis repeats: anti-cycling on degenerate
 *       problems). Entries of B⁻¹ below 1e-11·max|B⁻¹| over the tied rows
 *       count as zeros and closer values as equal: letting rounding noise
 *       decide the order does cycle (seen on a 300-contact granular bed).
 *   (4) pivot: rank-1 update of B⁻¹ and x_B. B⁻¹ is held as I + E with E
 *       stored only on the columns that pivots changed (lemke_binv_times):
 *       p pivots from the start cost n·p per product and update, not n².
 *       Every max(64, n/2) pivots B⁻¹ is recomputed from the basis (LU,
 *       src/ccp/dense.c).
 *   (5) z0 left: stop; x_B is solved afresh for the final basis by two
 *       steps of refinement against B⁻¹; unless that answer's LCP residual
 *       is below 1e-2 times the tolerance, by an LU solve of the basis
 *       refined twice with the same factors. The answer of smallest LCP
 *       residual is kept. (On nearly singular bases, such as the box
 *       pyramid's, the refinement against B⁻¹ ends near the tolerance and
 *       the LU's answer is the better one.)
 * RETRY. An answer whose fresh LCP residual exceeds the tolerance (or a
 * singular basis, a ray, spent pivots) starts a second attempt from
 * scratch on another path: covering vector c_i ∈ [1, 1.5) (a fixed
 * scrambled ramp, so the run stays deterministic) instead of e, and x_B
 * refined against the basis before every ratio test. Lemke's path depends
 * on c, and on degenerate stacks the second path avoids the near-singular
 * bases the first met: 6-row pyramid (21 boxes, n = 864): 9 of its first
 * 30 steps needed it, each then passed. The better of the two answers is
 * returned; the pivots of both are counted.
 * WARM START (settings.warm_start): before (1), the basis the guess names
 * is tried by block principal pivoting (lemke_warm); its answer is kept
 * when it passes the LCP check at 1e-3 of the tolerance, with 0 pivots.
 * STOPPING RULE. z0 leaves (complementary basis), a ray (2), or the pivot
 * budget max_pivots (0 ⇒ 50·n) is spent; never more. A ray met with z0 at
 * rounding level (4e-13 on a chain's links on the ground, every step) is
 * taken as an answer when its z, refined as in (5), passes the check. Then w = Mz + q is
 * computed afresh and the LCP residual ‖min(z, w)‖₂ / max(1, ‖q‖₂, ‖|M||z|‖₂) is the
 * target residual: CONVERGED only if it is ≤ settings.tolerance.
 *
 * COST. Dense: N (m²), the LCP matrix and B⁻¹ (n² each, n = LCP size),
 * O(n·p) for pivot p (O(n²) after a reinversion), O(m³ + n³) setup at worst.
 * The rover on rigid ground (12 contacts, n = 72): 37 pivots from the
 * start; with the warm start 0.18 pivots a step over its 160 s crossing. The number of pivots is
 * typically 1-2 n but has no good bound: on a 300-contact granular bed at
 * rest (n = 1830, k = 4) the Coulomb LCP takes 13,178 pivots (20 s), the
 * relaxed one 955 (1.8 s). For small problems and as a
 * reference answer for the iterative solvers; sizes above
 * settings.lemke.max_lcp_size are refused (DVI_ERR_UNSUPPORTED). The memory
 * comes from the work's persistent scratch buffer: no allocation per solve
 * once it has grown. The dense algebra is the library's own (src/ccp/dense.c):
 * a fixed order of operations, so that the pivots and the answer are the
 * same bits on every CPU and for any BLAS thread count.
 */
#include "lemke.h"

#include "ccp_work.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define LEMKE_PIVOT_REL 1e-8    /* pivot tolerance, relative to max|d| */
#define LEMKE_PIVOT_FLOOR 1e-15 /* ... and to max|a| of the entering column */
#define LEMKE_TIE_REL 1e-12     /* ratio ties, relative to max|x_B| */
#define LEMKE_LEX_NOISE 1e-11   /* lexicographic noise level, relative to max|B⁻¹| of the tied rows */
#define LEMKE_RUIZ_ITERATIONS 20 /* equilibration sweeps at most */
#define LEMKE_PINV_CUT 1e-9     /* pseudo-inverse cut-off, relative to λ_max (see BILATERAL ROWS) */
#define LEMKE_REFINE_BELOW 1e-3 /* refine d when the pivot is below this times max|d| */
#define LEMKE_COVER_SPREAD 0.5  /* the retry's covering vector: c_i in [1, 1.5) */
#define LEMKE_REFINE_MARGIN 1e-2 /* step (5) factors the basis unless B⁻¹'s answer is this far within the tolerance */
#define LEMKE_WARM_ROUNDS 4      /* block principal pivots of the warm start at most */
#define LEMKE_WARM_PIVOT 1e-10   /* the warm start gives up on M_ZZ with an LU pivot below this times the largest */
#define LEMKE_WARM_ACCEPT 1e-3    /* the warm start's answer is kept when its residual is this far within the tolerance */
#define LEMKE_ALIGN 64u
#define LEMKE_TWO_PI 6.283185307179586476925286766559

/* max(a, b) for the pivoting loops, inline (libm's fmax is a call: 10 % of
 * the rover's step went into it). A NaN b leaves a, as fmax does; a is
 * never NaN where it is used (a running maximum started at 0). */
static inline double lemke_max(double a, double b)
{
    return b > a ? b : a;
}

/* max(x, 0), inline: +0 for −0 and for NaN, as fmax(x, 0.0) gives. */
static inline double lemke_pos(double x)
{
    return x > 0.0 ? x : 0.0;
}

/* ---------------------------------------------------------------------------
 * Workspace carving: one buffer, 64-byte aligned offsets. */

typedef base_carver lemke_carver;

static void* lemke_carve(lemke_carver* c, size_t count, size_t elem)
{
    return base_carve(c, count, elem, LEMKE_ALIGN);
}

/* n·n without overflow (SIZE_MAX when it would overflow). */
static size_t lemke_square(size_t n)
{
    return (n != 0 && n > SIZE_MAX / n) ? SIZE_MAX : n * n;
}

/* The pure-LCP workspace. */
typedef struct lemke_lcp_ws {
    double* binv;     /* [n·n] B⁻¹ − I on its changed columns (lemke_binv_times); the basis LU at the end */
    double* xb;       /* [n] basic values B⁻¹q' */
    double* d;        /* [n] entering column B⁻¹a */
    double* row;      /* [n] copy of the pivot row; later scratch */
    double* xref;     /* [n] refined basic values */
    double* col;      /* [n] a scaled column of M */
    double* srow;     /* [n] row scaling R (powers of two) */
    double* scol;     /* [n] column scaling C (powers of two) */
    double* qs;       /* [n] q' = R q */
    double* res;      /* [n] residual of a refinement */
    double* tmp;      /* [n] scratch of the basis product */
    double* zbest;    /* [n] the best answer over the attempts */
    double* cover;    /* [n] covering vector c: z0's column is −c */
    double* lwork;    /* [lwork_n] workspace of the inverse */
    int32_t* basis;   /* [n] variable basic in each row: w_i = i, z_i = n+i, z0 = 2n */
    int32_t* cand;    /* [n] ratio-test candidates */
    int32_t* kcol;    /* [n] the column of B⁻¹ held by each stored column of B⁻¹ − I */
    int32_t* kpos;    /* [n] the stored column of each column of B⁻¹ − I, −1: none (that column is e_j) */
    int32_t* ipiv; /* [n] LU pivots */
    int32_t lwork_n;
    int32_t nk;       /* stored columns of B⁻¹ − I */
} lemke_lcp_ws;

static size_t lemke_lcp_layout(int32_t n, void* base, lemke_lcp_ws* ws)
{
    lemke_carver c = { (unsigned char*)base, 0, false };
    size_t nn = (size_t)n;
    size_t lw = nn > 0 ? nn : 1u;
    lemke_lcp_ws tmp;
    if (!ws)
        ws = &tmp;
    ws->binv = lemke_carve(&c, lemke_square(nn), sizeof(double));
    ws->xb = lemke_carve(&c, nn, sizeof(double));
    ws->d = lemke_carve(&c, nn, sizeof(double));
    ws->row = lemke_carve(&c, nn, sizeof(double));
    ws->xref = lemke_carve(&c, nn, sizeof(double));
    ws->col = lemke_carve(&c, nn, sizeof(double));
    ws->srow = lemke_carve(&c, nn, sizeof(double));
    ws->scol = lemke_carve(&c, nn, sizeof(double));
    ws->qs = lemke_carve(&c, nn, sizeof(double));
    ws->res = lemke_carve(&c, nn, sizeof(double));
    ws->tmp = lemke_carve(&c, nn, sizeof(double));
    ws->zbest = lemke_carve(&c, nn, sizeof(double));
    ws->cover = lemke_carve(&c, nn, sizeof(double));
    ws->lwork = lemke_carve(&c, lw, sizeof(double));
    ws->basis = lemke_carve(&c, nn, sizeof(int32_t));
    ws->cand = lemke_carve(&c, nn, sizeof(int32_t));
    ws->kcol = lemke_carve(&c, nn, sizeof(int32_t));
    ws->kpos = lemke_carve(&c, nn, sizeof(int32_t));
    ws->nk = 0;
    ws->ipiv = lemke_carve(&c, nn, sizeof(int32_t));
    ws->lwork_n = (int32_t)lw;
    if (c.overflow || nn > (size_t)INT32_MAX / 64u)
        return 0;
    return c.off + LEMKE_ALIGN;
}

size_t ccp_lemke_lcp_work_size(int32_t n)
{
    if (n < 0)
        return 0;
    return lemke_lcp_layout(n, NULL, NULL);
}

/* ---------------------------------------------------------------------------
 * The pure LCP. It is solved in the equilibrated form LCP(R M C, R q) with
 * z = C z' (R, C positive diagonal: same solutions), never formed: columns
 * of R M C are made on the fly. Variables: w_i = i, z_i = n + i, z0 = 2n.
 * Columns of  I w − M' z − e z0 = q'  are a(w_i) = e_i, a(z_i) = −M' e_i,
 * a(z0) = −e.
 */

double ccp_lemke_lcp_residual(int32_t n, const double* M, const double* q, const double* z, double* w)
{
    double s = 0.0, a2 = 0.0;
    if (n <= 0)
        return 0.0;
    for (int32_t i = 0; i < n; ++i) { /* w = Mz + q, and a = |M||z|: the size of the terms w sums */
        double abs_sum;
        w[i] = q[i] + ccp_dense_dot_abs(M + (size_t)i * (size_t)n, z, n, &abs_sum);
        a2 += abs_sum * abs_sum;
    }
    for (int32_t i = 0; i < n; ++i) {
        double v = fmin(z[i], w[i]);
        s += v * v;
    }
    return sqrt(s) / fmax(fmax(1.0, ccp_norm2(q, n)), sqrt(a2));
}

/* 2^round(log2(1/sqrt(x))) for x > 0: an exact scaling factor. */
static double lemke_pow2_rsqrt(double x)
{
    int e;
    (void)frexp(x, &e); /* x = f·2^e, f in [0.5, 1) */
    return ldexp(1.0, -e / 2);
}

/* Ruiz equilibration with powers of two: R, C such that every nonzero row
 * and column of R M C has its largest entry in [2^-2, 2^2] or so. */
static void lemke_equilibrate(int32_t n, const double* M, lemke_lcp_ws* ws)
{
    size_t nn = (size_t)n;
    for (int32_t i = 0; i < n; ++i)
        ws->srow[i] = ws->scol[i] = 1.0;
    for (int it = 0; it < LEMKE_RUIZ_ITERATIONS; ++it) {
        bool changed = false;
        for (int32_t i = 0; i < n; ++i)
            ws->col[i] = 0.0; /* column maxima */
        for (int32_t i = 0; i < n; ++i) {
            const double* mi = M + (size_t)i * nn;
            double rmax = 0.0;
            for (int32_t j = 0; j < n; ++j) {
                double v = fabs(mi[j]) * ws->srow[i] * ws->scol[j];
                rmax = lemke_max(rmax, v);
                ws->col[j] = lemke_max(ws->col[j], v);
            }
            ws->row[i] = rmax;
        }
        for (int32_t i = 0; i < n; ++i) {
            if (ws->row[i] > 0.0 && isfinite(ws->row[i])) {
                double f = lemke_pow2_rsqrt(ws->row[i]);
                changed = changed || f != 1.0;
                ws->srow[i] *= f;
            }
            if (ws->col[i] > 0.0 && isfinite(ws->col[i])) {
                double f = lemke_pow2_rsqrt(ws->col[i]);
                changed = changed || f != 1.0;
                ws->scol[i] *= f;
            }
        }
        if (!changed)
            break;
    }
}

/* col = M' e_j = R M e_j C_j; returns max|col|. */
static double lemke_scaled_column(int32_t n, const double* M, const lemke_lcp_ws* ws, int32_t j)
{
    size_t nn = (size_t)n;
    double cj = ws->scol[j], amax = 0.0;
    for (int32_t i = 0; i < n; ++i) {
        ws->col[i] = ws->srow[i] * M[(size_t)i * nn + (size_t)j] * cj;
        amax = lemke_max(amax, fabs(ws->col[i]));
    }
    return amax;
}

/* Row-major basis matrix B (column k = a(basis[k])) into b; read as
 * column-major it is Bᵀ, so its LU inverse (Bᵀ)⁻¹ is row-major B⁻¹. */
static void lemke_basis_matrix(int32_t n, const double* M, const lemke_lcp_ws* ws, double* b)
{
    size_t nn = (size_t)n;
    memset(b, 0, nn * nn * sizeof(double));
    for (int32_t k = 0; k < n; ++k) {
        int32_t v = ws->basis[k];
        if (v < n) {
            b[(size_t)v * nn + (size_t)k] = 1.0;
        } else if (v < 2 * n) {
            double cj = ws->scol[v - n];
            for (int32_t i = 0; i < n; ++i)
                b[(size_t)i * nn + (size_t)k] = -(ws->srow[i] * M[(size_t)i * nn + (size_t)(v - n)] * cj);
        } else {
            for (int32_t i = 0; i < n; ++i)
                b[(size_t)i * nn + (size_t)k] = -ws->cover[i];
        }
    }
}

/* B⁻¹ is kept as I + E, E zero outside the columns kcol[0 … nk−1], stored
 * column by column at binv + c·n. B⁻¹ starts as I, and a pivot on row r
 * changes column r and the columns already changed (the pivot row of B⁻¹
 * is zero elsewhere), so p pivots from the start leave at most p stored
 * columns: the products with B⁻¹ and the pivot's update cost n·p, not n².
 * out = B⁻¹ x (out ≠ x). */
static void lemke_binv_times(int32_t n, const lemke_lcp_ws* ws, const double* x, double* out)
{
    const size_t nn = (size_t)n;
    memcpy(out, x, nn * sizeof(double));
    for (int32_t c = 0; c < ws->nk; ++c) {
        const double xc = x[ws->kcol[c]];
        const double* e = ws->binv + (size_t)c * nn;
        if (xc == 0.0)
            continue;
        for (int32_t i = 0; i < n; ++i)
            out[i] += e[i] * xc;
    }
}

/* Entry (i, j) of B⁻¹. */
static double lemke_binv_at(int32_t n, const lemke_lcp_ws* ws, int32_t i, int32_t j)
{
    const int32_t c = ws->kpos[j];
    const double e = c >= 0 ? ws->binv[(size_t)c * (size_t)n + (size_t)i] : 0.0;
    return i == j ? 1.0 + e : e;
}

/* Recomputes B⁻¹ (as I + E) and x_B = B⁻¹q' from the basis. Returns
 * 0, or 1 + the column of a zero pivot (a singular basis). */
static int32_t lemke_reinvert(int32_t n, const double* M, lemke_lcp_ws* ws)
{
    int32_t info;
    const size_t nn = (size_t)n;
    double* a = ws->binv;
    lemke_basis_matrix(n, M, ws, a);
    info = ccp_dense_lu(n, a, ws->ipiv); /* Bᵀ = P L U */
    if (info != 0)
        return info;
    info = ccp_dense_lu_inverse(n, a, ws->ipiv, ws->lwork);
    if (info != 0)
        return info;
    /* a is B⁻¹ row-major: transpose in place (column j at a + j·n), then
     * keep the columns that differ from e_j, minus e_j, in column order */
    for (size_t i = 0; i < nn; ++i)
        for (size_t j = i + 1; j < nn; ++j) {
            const double t = a[i * nn + j];
            a[i * nn + j] = a[j * nn + i];
            a[j * nn + i] = t;
        }
    ws->nk = 0;
    for (int32_t j = 0; j < n; ++j) {
        double* src = a + (size_t)j * nn;
        bool changed = false;
        src[j] -= 1.0;
        for (int32_t i = 0; i < n && !changed; ++i)
            changed = src[i] != 0.0;
        if (!changed) {
            ws->kpos[j] = -1;
            continue;
        }
        if (ws->nk != j)
            memmove(a + (size_t)ws->nk * nn, src, nn * sizeof(double));
        ws->kcol[ws->nk] = j;
        ws->kpos[j] = ws->nk++;
    }
    lemke_binv_times(n, ws, ws->qs, ws->xb);
    return 0;
}

/* out = B x, B the basis matrix of the equilibrated problem (column k =
 * a(basis[k])): e_v for a basic w_v, −M' e_j for a basic z_j, −e for z0.
 * One product with M, through ws->row (the gathered x) and ws->tmp. */
static void lemke_basis_times(int32_t n, const double* M, lemke_lcp_ws* ws, const double* x, double* out)
{
    double s0 = 0.0;
    bool any_z = false;
    memset(out, 0, (size_t)n * sizeof(double));
    memset(ws->row, 0, (size_t)n * sizeof(double));
    for (int32_t k = 0; k < n; ++k) {
        int32_t v = ws->basis[k];
        if (v < n) {
            out[v] += x[k];
        } else if (v < 2 * n) {
            ws->row[v - n] = ws->scol[v - n] * x[k];
            any_z = true;
        } else {
            s0 += x[k];
        }
    }
    if (any_z) {
        ccp_dense_gemv(n, n, M, (size_t)n, ws->row, 0.0, ws->tmp);
        for (int32_t i = 0; i < n; ++i)
            out[i] -= ws->srow[i] * ws->tmp[i];
    }
    if (s0 != 0.0)
        for (int32_t i = 0; i < n; ++i)
            out[i] -= s0 * ws->cover[i];
}

/* One step of iterative refinement of B y = b (ws->res, ws->tmp used):
 * y += B⁻¹(b − B y). Returns the size of the correction, max|δ|, which
 * measures the error of y before the step. */
static double lemke_refine_solve(int32_t n, const double* M, lemke_lcp_ws* ws, const double* b, double* y)
{
    double e = 0.0;
    lemke_basis_times(n, M, ws, y, ws->res);
    for (int32_t i = 0; i < n; ++i)
        ws->res[i] = b[i] - ws->res[i];
    lemke_binv_times(n, ws, ws->res, ws->tmp);
    for (int32_t i = 0; i < n; ++i) {
        y[i] += ws->tmp[i];
        e = lemke_max(e, fabs(ws->tmp[i]));
    }
    return e;
}

/* d = B⁻¹ a(var) for an entering w_j or z_j (z0 enters only in step (1));
 * a(var) is left in ws->col for a refinement. Returns max|a(var)|, the
 * column's own scale. */
static double lemke_entering_column(int32_t n, const double* M, lemke_lcp_ws* ws, int32_t var)
{
    double amax;
    if (var < n) { /* a = e_var: d = column var of B⁻¹ */
        const int32_t c = ws->kpos[var];
        for (int32_t i = 0; i < n; ++i) {
            ws->d[i] = c >= 0 ? ws->binv[(size_t)c * (size_t)n + (size_t)i] : 0.0;
            ws->col[i] = 0.0;
        }
        ws->d[var] += 1.0;
        ws->col[var] = 1.0;
        amax = 1.0;
    } else {            /* a = −M' e_j */
        amax = lemke_scaled_column(n, M, ws, var - n);
        for (int32_t i = 0; i < n; ++i)
            ws->col[i] = -ws->col[i];
        lemke_binv_times(n, ws, ws->col, ws->d);
    }
    return amax;
}

/* Lexicographic minimum-ratio test (steps (2)-(3)). Returns the leaving row,
 * -1 for a ray, -2 for non-finite data. */
static int32_t lemke_ratio_test(int32_t n, const lemke_lcp_ws* ws, double amax, double derr, bool* delicate)
{
    const double* d = ws->d;
    const double* xb = ws->xb;
    int32_t* cand = ws->cand;
    double dmax = 0.0, xmax = 0.0, theta = INFINITY, tol, xtol, bmax = 0.0, zeta;
    int32_t nc = 0, nt = 0, best = -1;

    *delicate = true;

    for (int32_t i = 0; i < n; ++i) {
        dmax = lemke_max(dmax, fabs(d[i]));
        xmax = lemke_max(xmax, fabs(xb[i]));
    }
    if (!isfinite(dmax) || !isfinite(xmax))
        return -2;
    tol = lemke_max(lemke_max(LEMKE_PIVOT_REL * dmax, LEMKE_PIVOT_FLOOR * amax), derr);
    for (int32_t i = 0; i < n; ++i) {
        if (d[i] > tol) {
            double ratio = lemke_pos(xb[i]) / d[i];
            if (ratio < theta) {
                theta = ratio;
                best = i;
            }
            cand[nc++] = i;
        }
    }
    if (nc == 0)
        return -1; /* secondary ray */

    /* rows that reach zero at θ as well (degenerate ties) */
    xtol = LEMKE_TIE_REL * xmax;
    for (int32_t t = 0; t < nc; ++t) {
        int32_t i = cand[t];
        if (lemke_pos(xb[i]) - theta * d[i] <= xtol)
            cand[nt++] = i;
    }
    if (nt <= 1) {
        int32_t r = nt == 0 ? best : cand[0];
        *delicate = d[r] < LEMKE_REFINE_BELOW * dmax;
        return r;
    }
    for (int32_t t = 0; t < nt; ++t)
        if (ws->basis[cand[t]] == 2 * n)
            return cand[t]; /* z0 leaves: done */

    /* Lexicographic: compare (B⁻¹)_ij / d_i column by column. Entries below
     * the noise level ζ of the tied rows count as exact zeros, and values
     * within ζ/d_i as equal, so that rounding never decides the order.
     * Row i of B⁻¹ is zero outside the stored columns and column i. */
    for (int32_t t = 0; t < nt; ++t) {
        const int32_t i = cand[t];
        if (ws->kpos[i] < 0)
            bmax = lemke_max(bmax, 1.0);
        for (int32_t c = 0; c < ws->nk; ++c)
            bmax = lemke_max(bmax, fabs(lemke_binv_at(n, ws, i, ws->kcol[c])));
    }
    zeta = LEMKE_LEX_NOISE * bmax;
    for (int32_t j = 0; j < n && nt > 1; ++j) {
        double vmin = INFINITY;
        int32_t kept = 0;
        if (ws->kpos[j] < 0) { /* column j is e_j: all zero (all kept) unless row j is tied */
            bool tied = false;
            for (int32_t t = 0; t < nt && !tied; ++t)
                tied = cand[t] == j;
            if (!tied)
                continue;
        }
        for (int32_t t = 0; t < nt; ++t) {
            int32_t i = cand[t];
            double b = lemke_binv_at(n, ws, i, j);
            vmin = fmin(vmin, fabs(b) <= zeta ? 0.0 : b / d[i]);
        }
        for (int32_t t = 0; t < nt; ++t) {
            int32_t i = cand[t];
            double b = lemke_binv_at(n, ws, i, j);
            double v = fabs(b) <= zeta ? 0.0 : b / d[i];
            if (v <= vmin + zeta / d[i])
                cand[kept++] = i;
        }
        nt = kept;
    }
    return cand[0];
}

/* Pivot on row r with entering column d (step (4)); d is clobbered.
 * B⁻¹ ← B⁻¹ − u ρᵀ with u = (d − e_r)/d_r and ρ row r of B⁻¹, which is zero
 * outside the stored columns and column r. */
static void lemke_pivot(int32_t n, lemke_lcp_ws* ws, int32_t r)
{
    size_t nn = (size_t)n;
    double dr = ws->d[r];
    double xr = ws->xb[r] / dr;
    ws->d[r] = dr - 1.0; /* so that row r becomes row_r / d_r */
    for (int32_t c = 0; c < ws->nk; ++c) {
        double* e = ws->binv + (size_t)c * nn;
        const double rho = ws->kcol[c] == r ? 1.0 + e[r] : e[r];
        if (rho == 0.0)
            continue;
        const double f = rho / dr;
        for (int32_t i = 0; i < n; ++i)
            e[i] -= f * ws->d[i];
    }
    if (ws->kpos[r] < 0) { /* column r of B⁻¹ was e_r: ρ_r = 1 */
        double* e = ws->binv + (size_t)ws->nk * nn;
        const double f = 1.0 / dr;
        for (int32_t i = 0; i < n; ++i)
            e[i] = -(f * ws->d[i]);
        ws->kcol[ws->nk] = r;
        ws->kpos[r] = ws->nk++;
    }
    for (int32_t i = 0; i < n; ++i)
        ws->xb[i] -= ws->d[i] * xr;
    ws->xb[r] = xr;
}

/* z = C x_z from the basic values x (clipped at 0). */
static void lemke_extract(int32_t n, const lemke_lcp_ws* ws, const double* x, double* z)
{
    memset(z, 0, (size_t)n * sizeof(double));
    for (int32_t i = 0; i < n; ++i) {
        int32_t v = ws->basis[i];
        if (v >= n && v < 2 * n)
            z[v - n] = ws->scol[v - n] * lemke_pos(x[i]);
    }
}

/* Step (5): x_B solved afresh for the final basis, keeping the z of the
 * smallest LCP residual. First two steps of refinement against the B⁻¹ at
 * hand, x += B⁻¹(q' − B x) (n·p each); only when that answer is not
 * within LEMKE_REFINE_MARGIN of the tolerance, an LU factorisation of the basis, its solve and two
 * refinement steps with its factors (n³: it was a third of the rover's
 * Lemke time when done on every step). Returns the LCP residual of the z
 * it leaves. */
static double lemke_refine(int32_t n, const double* M, const double* q, double* z, lemke_lcp_ws* ws,
                           double tolerance)
{
    int32_t info;
    double r_old, r_new;
    bool finite = true;
    r_old = ccp_lemke_lcp_residual(n, M, q, z, ws->d);
    memcpy(ws->xref, ws->xb, (size_t)n * sizeof(double));
    for (int it = 0; it < 2; ++it)
        (void)lemke_refine_solve(n, M, ws, ws->qs, ws->xref);
    for (int32_t i = 0; i < n; ++i)
        finite = finite && isfinite(ws->xref[i]);
    if (finite) {
        lemke_extract(n, ws, ws->xref, ws->row);
        r_new = ccp_lemke_lcp_residual(n, M, q, ws->row, ws->d);
        if (r_new <= r_old) {
            memcpy(z, ws->row, (size_t)n * sizeof(double));
            r_old = r_new;
        }
    }
    if (r_old <= LEMKE_REFINE_MARGIN * tolerance)
        return r_old;
    lemke_basis_matrix(n, M, ws, ws->binv);
    info = ccp_dense_lu(n, ws->binv, ws->ipiv); /* Bᵀ = P L U */
    if (info != 0)
        return r_old;
    memcpy(ws->xref, ws->qs, (size_t)n * sizeof(double));
    ccp_dense_lu_solve(n, ws->binv, ws->ipiv, true, ws->xref); /* B x = q' */
    for (int32_t i = 0; i < n; ++i)
        if (!isfinite(ws->xref[i]))
            return r_old;
    /* two steps of iterative refinement with the same factors, x += B⁻¹(q' − B x):
     * on a nearly singular basis (a box pyramid's redundant corners) the
     * solve alone leaves errors that show in the LCP residual */
    for (int it = 0; it < 2; ++it) {
        lemke_basis_times(n, M, ws, ws->xref, ws->res);
        for (int32_t i = 0; i < n; ++i)
            ws->res[i] = ws->qs[i] - ws->res[i];
        ccp_dense_lu_solve(n, ws->binv, ws->ipiv, true, ws->res);
        for (int32_t i = 0; i < n; ++i)
            ws->xref[i] += ws->res[i];
    }
    lemke_extract(n, ws, ws->xref, ws->row);
    r_new = ccp_lemke_lcp_residual(n, M, q, ws->row, ws->d);
    if (r_new <= r_old) {
        memcpy(z, ws->row, (size_t)n * sizeof(double));
        r_old = r_new;
    }
    return r_old;
}

/* How one attempt pivots. */
typedef struct lemke_mode {
    int32_t period;  /* reinversion every `period` pivots */
    bool refine_x;   /* x_B refined against the basis before every ratio test */
    double cover_spread; /* covering vector c_i in [1, 1 + spread) (0: c = e) */
    double tolerance;    /* the LCP residual step (5) aims at */
} lemke_mode;

/* One run of steps (1)-(5) from the start; z receives its answer (not yet
 * checked). Returns as ccp_lemke_lcp; *npiv counts this attempt's pivots;
 * *resid_out is z's LCP residual when step (5) ran, else NaN. */
static dvi_status lemke_attempt(int32_t n, const double* M, const double* q, double* z, int32_t max_pivots,
                                lemke_lcp_ws* ws, lemke_mode mode, int32_t* npiv_out, dvi_solve_status* st_out,
                                double* resid_out)
{
    dvi_solve_status st = DVI_SOLVE_DIVERGED;
    dvi_status ret = DVI_ERR_NUMERIC;
    int32_t npiv, t = -1, entering, since_inv = 0;
    size_t nn = (size_t)n;

    /* (1) B = I, x_B = q'; z0 enters (column −e) at the row t of min q'
     * (the last one on ties) */
    ws->nk = 0;
    for (int32_t i = 0; i < n; ++i) {
        ws->cover[i] = mode.cover_spread > 0.0 ? 1.0 + mode.cover_spread * (double)(((int64_t)i * 7919) % n) / (double)n : 1.0;
        ws->kpos[i] = -1;
        ws->xb[i] = ws->qs[i];
        ws->basis[i] = i;
        ws->d[i] = -ws->cover[i];
        if (ws->qs[i] < 0.0 && (t < 0 || ws->qs[i] / ws->cover[i] <= ws->qs[t] / ws->cover[t]))
            t = i;
    }
    lemke_pivot(n, ws, t);
    ws->basis[t] = 2 * n;
    npiv = 1;
    entering = n + t; /* w_t left: z_t enters */

    for (;;) {
        int32_t r, leaving;
        double amax, derr;
        bool delicate;
        if (npiv >= max_pivots) {
            st = DVI_SOLVE_PIVOT_LIMIT;
            ret = DVI_NOT_CONVERGED;
            break;
        }
        if (since_inv >= mode.period) { /* (4) fresh B⁻¹ against drift */
            if (lemke_reinvert(n, M, ws) != 0) {
                st = DVI_SOLVE_DIVERGED;
                ret = DVI_ERR_SINGULAR;
                break;
            }
            since_inv = 0;
        } else if (mode.refine_x && since_inv > 0) {
            (void)lemke_refine_solve(n, M, ws, ws->qs, ws->xb);
        }
        amax = lemke_entering_column(n, M, ws, entering); /* (2) */
        r = lemke_ratio_test(n, ws, amax, 0.0, &delicate); /* (3) */
        if (r != -2 && delicate) { /* a tie, a small pivot or a ray: decide on a refined d */
            derr = lemke_refine_solve(n, M, ws, ws->col, ws->d);
            r = lemke_ratio_test(n, ws, amax, derr, &delicate);
        }
        if (r == -2) {
            st = DVI_SOLVE_DIVERGED;
            ret = DVI_ERR_NUMERIC;
            break;
        }
        if (r < 0) {
            st = DVI_SOLVE_RAY;
            ret = DVI_NOT_CONVERGED;
            break;
        }
        leaving = ws->basis[r];
        lemke_pivot(n, ws, r); /* (4) */
        ws->basis[r] = entering;
        ++npiv;
        ++since_inv;
        if (leaving == 2 * n) { /* (5) z0 left: complementary basis */
            st = DVI_SOLVE_CONVERGED;
            ret = DVI_OK;
            break;
        }
        entering = leaving < n ? leaving + n : leaving - n;
    }

    if (ret == DVI_ERR_SINGULAR)
        memset(z, 0, nn * sizeof(double));
    else
        lemke_extract(n, ws, ws->xb, z);
    *resid_out = NAN; /* not computed */
    if (st == DVI_SOLVE_CONVERGED || st == DVI_SOLVE_RAY)
        *resid_out = lemke_refine(n, M, q, z, ws, mode.tolerance);
    for (int32_t i = 0; i < n && ret >= 0; ++i) {
        if (!isfinite(z[i])) {
            st = DVI_SOLVE_DIVERGED;
            ret = DVI_ERR_NUMERIC;
        }
    }
    *npiv_out = npiv;
    *st_out = st;
    return ret;
}

/* As ccp_lemke_lcp; *resid_out (may be NULL) receives the LCP residual of
 * the z returned (INFINITY after an error), so that the caller need not
 * compute it again. */
static dvi_status lemke_lcp_body(int32_t n, const double* M, const double* q, double* z, int32_t max_pivots,
                                 double tolerance, void* work, int32_t* pivots, dvi_solve_status* status,
                                 double* resid_out)
{
    lemke_lcp_ws ws;
    dvi_solve_status st = DVI_SOLVE_BAD_INPUT, best_st = DVI_SOLVE_BAD_INPUT;
    dvi_status ret = DVI_ERR_INVALID_ARG, best_ret = DVI_ERR_INVALID_ARG;
    int32_t total = 0, t = -1;
    size_t nn = (size_t)n;
    double best = INFINITY;
    lemke_mode modes[2];

    if (pivots)
        *pivots = 0;
    if (status)
        *status = DVI_SOLVE_BAD_INPUT;
    if (resid_out)
        *resid_out = INFINITY;
    if (n < 0 || (n > 0 && (!M || !q || !z || !work)) || ccp_lemke_lcp_work_size(n) == 0 || isnan(tolerance))
        return DVI_ERR_INVALID_ARG;
    if (max_pivots <= 0) {
        int64_t mp = 50 * (int64_t)n;
        max_pivots = mp > INT32_MAX ? INT32_MAX : (int32_t)(mp > 0 ? mp : 1);
    }
    modes[0] = (lemke_mode){ n / 2 > 64 ? n / 2 : 64, false, 0.0, tolerance };
    modes[1] = (lemke_mode){ modes[0].period, true, LEMKE_COVER_SPREAD, tolerance };

    /* (0) z = 0 solves it when q ≥ 0 */
    for (int32_t i = 0; i < n; ++i) {
        if (!isfinite(q[i])) {
            if (status)
                *status = DVI_SOLVE_DIVERGED;
            return DVI_ERR_NUMERIC;
        }
        z[i] = 0.0;
        if (q[i] < 0.0)
            t = i;
    }
    if (t < 0) {
        if (status)
            *status = DVI_SOLVE_CONVERGED;
        if (resid_out) /* z = 0, w = q ≥ 0 */
            *resid_out = 0.0;
        return DVI_OK;
    }
    for (size_t i = 0; i < nn * nn; ++i) {
        if (!isfinite(M[i])) {
            if (status)
                *status = DVI_SOLVE_DIVERGED;
            return DVI_ERR_NUMERIC;
        }
    }

    lemke_lcp_layout(n, work, &ws);
    lemke_equilibrate(n, M, &ws);
    for (int32_t i = 0; i < n; ++i)
        ws.qs[i] = ws.srow[i] * q[i];

    /* the fast attempt; the careful one when its answer fails the check */
    for (int a = 0; a < 2; ++a) {
        int32_t npiv = 0;
        double resid;
        double ar;
        ret = lemke_attempt(n, M, q, z, max_pivots - total, &ws, modes[a], &npiv, &st, &ar);
        total += npiv;
        resid = ret < 0 ? INFINITY : !isnan(ar) ? ar : ccp_lemke_lcp_residual(n, M, q, z, ws.tmp);
        /* A ray met with z0 at rounding level: its basis, without z0,
         * already solves the LCP (degenerate problems, e.g. a chain's links
         * on the ground under the joint rows' Schur complement, end so on
         * every step). Its z is an answer when it passes the check. */
        if (st == DVI_SOLVE_RAY && resid <= tolerance) {
            st = DVI_SOLVE_CONVERGED;
            ret = DVI_OK;
        }
        if (a == 0 || resid < best || (st == DVI_SOLVE_CONVERGED && best_st != DVI_SOLVE_CONVERGED &&
                                       resid <= best)) {
            best = resid;
            best_st = st;
            best_ret = ret;
            memcpy(ws.zbest, z, nn * sizeof(double));
        }
        if ((st == DVI_SOLVE_CONVERGED && !(resid > tolerance)) || total >= max_pivots ||
            (ret < 0 && ret != DVI_ERR_SINGULAR))
            break;
    }
    memcpy(z, ws.zbest, nn * sizeof(double));
    if (resid_out)
        *resid_out = best;
    if (pivots)
        *pivots = total;
    if (status)
        *status = best_st;
    return best_ret;
}

/* ---------------------------------------------------------------------------
 * The CCP solver: N, Schur complement of the bilateral rows, pyramid LCP. */

/* Unit direction j of a k-pyramid; exact on the axes. */
static void lemke_direction(int32_t j, int32_t k, double* c, double* s)
{
    static const double axis_c[4] = { 1.0, 0.0, -1.0, 0.0 };
    static const double axis_s[4] = { 0.0, 1.0, 0.0, -1.0 };
    if (((int64_t)4 * j) % k == 0) {
        int32_t quarter = (int32_t)(((int64_t)4 * j) / k) & 3;
        *c = axis_c[quarter];
        *s = axis_s[quarter];
    } else {
        double a = LEMKE_TWO_PI * (double)j / (double)k;
        *c = cos(a);
        *s = sin(a);
    }
}

/* The turn (cos φ, sin φ) of a pyramid whose first edge points against the
 * tangential velocity r_t = (rt[0], rt[1]); against the guess's tangential
 * impulse when r_t is negligible (the same direction at a sticking contact),
 * else φ = 0. Negligible: below 1e-6 of the block's (r_n, r_t), or of the
 * guess's (γ_n, γ_t). A contact at rest has r_t of rounding size in a
 * direction that changes from step to step; turning its pyramid by it gave
 * Lemke degenerate LCPs it did not solve (the full rover at rest: 13 of 100
 * steps failed). Such a contact keeps the frame's pyramid, whose edges lie
 * exactly on the tangent axes. */
static void lemke_turn(const double* rt, double rn, const double* guess_t, double gn, int32_t k, double grid, double* co,
                       double* si)
{
    /* the previous step's tangential impulse first: it changes smoothly
     * from step to step where r_t can turn over (a rolling wheel) */
    double a = guess_t ? guess_t[0] : 0.0, b = guess_t ? guess_t[1] : 0.0;
    double len = sqrt(a * a + b * b);
    if (!(len > 1e-6 * sqrt(gn * gn + len * len)) || !isfinite(len)) {
        a = -rt[0];
        b = -rt[1];
        len = sqrt(a * a + b * b);
        if (!(len > 1e-6 * sqrt(rn * rn + len * len))) len = 0.0;
    }
    if (!(len > 0.0) || !isfinite(len)) {
        *co = 1.0;
        *si = 0.0;
        return;
    }
    if (!(grid > 0.0)) {
        *co = a / len;
        *si = b / len;
        return;
    }
    /* the angle modulo the pyramid's symmetry 2π/k (an impulse that turns
     * over, as a wheel rolling with nearly none has, keeps the same edges
     * in the same order), rounded to the grid (lemke.orient_grid): contacts
     * whose impulse turns slowly keep the same pyramid from step to step,
     * so that the previous step's basis stays a warm start. On the rigid
     * rover crossing, 1.08 pivots a step at 0.5° against 12.8 turned
     * exactly and 0.18 unturned. */
    const double period = 2.0 * 3.14159265358979323846 / (double)k;
    double phi = atan2(b, a);
    phi -= period * nearbyint(phi / period);
    phi = grid * nearbyint(phi / grid);
    *co = cos(phi);
    *si = sin(phi);
}

/* LCP variables of one block (0 for bilateral or unknown kinds). */
static int64_t lemke_block_vars(dvi_block_kind kind, int32_t k)
{
    switch (kind) {
    case DVI_BLOCK_FRICTIONLESS:
        return 1;
    case DVI_BLOCK_FRICTION:
        return 2 + (int64_t)k;
    case DVI_BLOCK_FRICTION_ROLLING:
        return 6 + 2 * (int64_t)k;
    default:
        return 0;
    }
}

/* One LCP column of T: up to two (reduced row, coefficient) pairs. */
static void lemke_set_t(int32_t* tr, double* tc, int32_t v, int32_t r0, double c0, int32_t r1, double c1)
{
    tr[2 * v] = r0;
    tc[2 * v] = c0;
    tr[2 * v + 1] = r1;
    tc[2 * v + 1] = c1;
}

/* E couplings of one pyramid: directions v0..v0+kk-1, multiplier vl;
 * relaxed: also w_n −= μλ (skew-symmetric E). */
static void lemke_couple(double* M, int32_t n, int32_t vn, int32_t v0, int32_t kk, int32_t vl, double mu,
                         bool relaxed)
{
    size_t nn = (size_t)n;
    for (int32_t j = 0; j < kk; ++j) {
        M[(size_t)(v0 + j) * nn + (size_t)vl] += 1.0;  /* w_β = d_jᵀu + λ */
        M[(size_t)vl * nn + (size_t)(v0 + j)] -= 1.0;  /* w_λ = μγ_n − Σβ */
    }
    M[(size_t)vl * nn + (size_t)vn] += mu;
    if (relaxed)
        M[(size_t)vn * nn + (size_t)vl] -= mu;
}

/* The solver's scratch layout. Region A lives through the solve; region B
 * holds first N and the Schur data (phase 1), then the LCP workspace. */
typedef struct lemke_layout {
    int32_t *brow, *crow;  /* [nb], [nc] bilateral / other rows */
    double* dirs;          /* [2k] pyramid directions */
    double *evals, *vt;    /* [nb], [nb·nb] eigenvalues, eigenvectors (then Uᵀ) */
    double *g, *h, *lam;   /* [nb] each */
    double* gmat;          /* [nb·nc] G = Uᵀ N_BC */
    int32_t* tr;           /* [2n] T rows */
    double* tc;            /* [2n] T coefficients */
    double *mlcp, *qlcp;   /* [n·n], [n] */
    double *z, *wl, *gc;   /* [n], [n], [nc] */
    /* region B, phase 1 */
    double *nfull, *nred, *rred, *nbc, *syev_work; /* [m·m], [nc·nc], [nc], [nb·nc], [lwork] */
    int32_t syev_lwork;
    /* region B, phase 2 */
    void* lcp_work;
} lemke_layout;

static size_t lemke_solver_layout(int32_t m, int32_t nb, int32_t n, int32_t k, void* base, lemke_layout* L)
{
    lemke_carver c = { (unsigned char*)base, 0, false };
    size_t um = (size_t)m, ub = (size_t)nb, uc = (size_t)(m - nb), un = (size_t)n;
    size_t region_b, phase1, phase2;
    lemke_carver c1;
    L->brow = lemke_carve(&c, ub, sizeof(int32_t));
    L->crow = lemke_carve(&c, uc, sizeof(int32_t));
    L->dirs = lemke_carve(&c, 2u * (size_t)k, sizeof(double));
    L->evals = lemke_carve(&c, ub, sizeof(double));
    L->vt = lemke_carve(&c, lemke_square(ub), sizeof(double));
    L->g = lemke_carve(&c, ub, sizeof(double));
    L->h = lemke_carve(&c, ub, sizeof(double));
    L->lam = lemke_carve(&c, ub, sizeof(double));
    L->gmat = lemke_carve(&c, ub * uc, sizeof(double));
    L->tr = lemke_carve(&c, 2u * un, sizeof(int32_t));
    L->tc = lemke_carve(&c, 2u * un, sizeof(double));
    L->mlcp = lemke_carve(&c, lemke_square(un), sizeof(double));
    L->qlcp = lemke_carve(&c, un, sizeof(double));
    L->z = lemke_carve(&c, un, sizeof(double));
    L->wl = lemke_carve(&c, un, sizeof(double));
    L->gc = lemke_carve(&c, uc, sizeof(double));
    region_b = (c.off + (LEMKE_ALIGN - 1u)) & ~(size_t)(LEMKE_ALIGN - 1u);

    c1 = c;
    c1.off = region_b;
    L->syev_lwork = (int32_t)(nb > 0 ? (int64_t)nb * nb + 3 * (int64_t)nb : 1); /* V, the eigenvalues, 2nb of work */
    L->nfull = lemke_carve(&c1, lemke_square(um), sizeof(double));
    L->nred = lemke_carve(&c1, lemke_square(uc), sizeof(double));
    L->rred = lemke_carve(&c1, uc, sizeof(double));
    L->nbc = lemke_carve(&c1, ub * uc, sizeof(double));
    L->syev_work = lemke_carve(&c1, (size_t)L->syev_lwork, sizeof(double));
    phase1 = c1.off;

    phase2 = ccp_lemke_lcp_work_size(n);
    L->lcp_work = base ? (void*)((unsigned char*)base + region_b) : NULL;
    if (phase2 == 0 || phase2 > SIZE_MAX - region_b)
        return 0;
    phase2 += region_b;
    if (c.overflow || c1.overflow || (ub != 0 && ub * uc / ub != uc))
        return 0;
    return (phase1 > phase2 ? phase1 : phase2) + LEMKE_ALIGN;
}

/* Phase 1: dense N, Schur complement, pyramid LCP (mlcp, qlcp, T). Returns
 * DVI_OK, or DVI_ERR_NUMERIC with msg set. */
/* The k columns of a pyramid over the reduced rows (rt, rt + 1) of the
 * block whose normal is row cn, from LCP variable v on: direction j is
 * d_j, turned by lemke_turn when orient is set; the turn's angle (rad) into
 * *turn (dvi_solver_pyramid). Returns the next variable. */
static int32_t lemke_pyramid(lemke_layout* L, int32_t k, int32_t v, int32_t cn, int32_t rt, bool orient,
                             double grid, const double* guess, double* turn)
{
    double co = 1.0, si = 0.0;
    if (orient)
        lemke_turn(L->rred + rt, L->rred[cn], guess ? guess + L->crow[rt] : NULL, guess ? guess[L->crow[cn]] : 0.0, k,
                   grid, &co, &si);
    *turn = atan2(si, co);
    for (int32_t j = 0; j < k; ++j)
        lemke_set_t(L->tr, L->tc, v++, rt, co * L->dirs[2 * j] - si * L->dirs[2 * j + 1], rt + 1,
                    si * L->dirs[2 * j] + co * L->dirs[2 * j + 1]);
    return v;
}

static dvi_status lemke_build(ccp_work* w, const dvi_solver_settings* s, bool relaxed, const double* guess,
                              lemke_layout* L, int32_t nb, int32_t n, int32_t* rank_out, char* msg, size_t msg_size)
{
    const dvi_ccp_problem* p = w->p;
    const double* r = p->r;
    int32_t m = w->m, nc = m - nb, k = s->lemke.friction_directions, rank = 0;
    size_t um = (size_t)m, uc = (size_t)nc, ub = (size_t)nb, un = (size_t)n;
    double* e = w->vec[0];
    double* col = w->vec[1];

    /* N column by column: N e_j (stored as rows, then symmetrised). In the
     * W form the entries are read off W (its rows, as the product would
     * sum them) and the compliance; in the factor form, N e_j is applied. */
    if (!w->factor_form) {
        memset(L->nfull, 0, um * um * sizeof(double));
        for (int32_t i = 0; i < m; ++i)
            for (int32_t q = w->wt_p[i]; q < w->wt_p[i + 1]; ++q)
                L->nfull[(size_t)w->wt_i[q] * um + (size_t)i] += w->wt_x[q];
        if (p->compliance)
            for (int32_t i = 0; i < m; ++i)
                L->nfull[(size_t)i * um + (size_t)i] += p->compliance[i];
    } else {
        if (m > 0)
            memset(e, 0, um * sizeof(double));
        for (int32_t j = 0; j < m; ++j) {
            e[j] = 1.0;
            ccp_work_apply(w, e, col);
            e[j] = 0.0;
            memcpy(L->nfull + (size_t)j * um, col, um * sizeof(double));
        }
    }
    for (size_t i = 0; i < um; ++i) {
        for (size_t j = i + 1; j < um; ++j) {
            double a = 0.5 * (L->nfull[i * um + j] + L->nfull[j * um + i]);
            L->nfull[i * um + j] = a;
            L->nfull[j * um + i] = a;
        }
    }

    /* gather N_BB (into vt), N_BC, N_CC (into nred), r_C (into rred) */
    for (size_t a = 0; a < ub; ++a) {
        const double* na = L->nfull + (size_t)L->brow[a] * um;
        for (size_t b = 0; b < ub; ++b)
            L->vt[a * ub + b] = na[L->brow[b]];
        for (size_t c = 0; c < uc; ++c)
            L->nbc[a * uc + c] = na[L->crow[c]];
    }
    for (size_t a = 0; a < uc; ++a) {
        const double* na = L->nfull + (size_t)L->crow[a] * um;
        for (size_t c = 0; c < uc; ++c)
            L->nred[a * uc + c] = na[L->crow[c]];
        L->rred[a] = r[L->crow[a]];
    }

    if (nb > 0) {
        /* N_BB = V Λ Vᵀ (ascending λ; eigenvectors are the rows of vt):
         * Householder and QL (src/ccp/symeig.c), eigenvectors into the
         * columns of V (syev_work), then sorted into the rows of vt */
        double* V = L->syev_work;
        double* ev = V + ub * ub;
        double* ework = ev + ub;
        double lmax, cut;
        int32_t first;
        if (ccp_sym_eigen(L->vt, V, ev, ework, nb) != 0) {
            snprintf(msg, msg_size, "lemke: eigen-decomposition of the bilateral block N_BB failed (no convergence)");
            return DVI_ERR_NUMERIC;
        }
        for (int32_t a = 0; a < nb; ++a) { /* rank of each eigenvalue (ties by index): the sorted order */
            int32_t pos = 0;
            for (int32_t b = 0; b < nb; ++b)
                pos += ev[b] < ev[a] || (ev[b] == ev[a] && b < a);
            L->evals[pos] = ev[a];
            for (size_t b = 0; b < ub; ++b)
                L->vt[(size_t)pos * ub + b] = V[b * ub + (size_t)a];
        }
        lmax = L->evals[nb - 1];
        cut = LEMKE_PINV_CUT * lmax;
        first = nb;
        while (first > 0 && L->evals[first - 1] > cut && L->evals[first - 1] > 0.0)
            --first;
        rank = nb - first;
        /* Uᵀ: kept eigenvectors scaled by λ^(-1/2), moved to the front */
        for (int32_t a = 0; a < rank; ++a) {
            double sc = 1.0 / sqrt(L->evals[first + a]);
            const double* src = L->vt + (size_t)(first + a) * ub;
            double* dst = L->vt + (size_t)a * ub;
            for (size_t b = 0; b < ub; ++b)
                dst[b] = src[b] * sc;
        }
        if (rank > 0) {
            /* g = Uᵀ r_B */
            for (size_t a = 0; a < ub; ++a)
                L->h[a] = r[L->brow[a]];
            ccp_dense_gemv(rank, nb, L->vt, ub, L->h, 0.0, L->g);
            if (nc > 0) {
                /* G = Uᵀ N_BC;  N_red = N_CC − GᵀG;  r_red = r_C − Gᵀg */
                for (int32_t a = 0; a < rank; ++a) {
                    double* ga = L->gmat + (size_t)a * uc;
                    memset(ga, 0, uc * sizeof(double));
                    ccp_dense_gemv_t(nb, nc, 1.0, L->nbc, uc, L->vt + (size_t)a * ub, ga);
                }
                for (int32_t a = 0; a < rank; ++a) {
                    const double* ga = L->gmat + (size_t)a * uc;
                    for (size_t i = 0; i < uc; ++i) {
                        const double f = ga[i];
                        double* ni = L->nred + i * uc;
                        if (f == 0.0)
                            continue;
                        for (size_t j = 0; j < uc; ++j)
                            ni[j] -= f * ga[j];
                    }
                }
                ccp_dense_gemv_t(rank, nc, -1.0, L->gmat, uc, L->g, L->rred);
                for (size_t i = 0; i < uc; ++i) {
                    for (size_t j = i + 1; j < uc; ++j) {
                        double a = 0.5 * (L->nred[i * uc + j] + L->nred[j * uc + i]);
                        L->nred[i * uc + j] = a;
                        L->nred[j * uc + i] = a;
                    }
                }
            }
        }
    }
    *rank_out = rank;

    /* T (LCP variable -> reduced rows) and the E couplings. With
     * lemke.orient each contact's pyramid is turned (lemke_turn) so that an
     * edge points along the previous tangential impulse, else against the
     * tangential velocity without friction (the reduced r's tangential
     * part). A pyramid fixed to the frame holds only μ/(|cos θ| + |sin θ|)
     * (k = 4) θ off its edges: it let a box that must stick on a 16° slope
     * (μ 0.3) slide 1.2 m when the slope fell 30° off x, and turned every
     * sliding box 45° off its push. Turned, the edge carries the full μ where
     * the contact wants to slide. Not the default yet: on the rigid rover
     * crossing it raised single-step load peaks (the middle wheel to 2.6 and
     * 5.6 times its static load, against 1.7 and 2.3 with the frame's
     * pyramid, whose edges already lie along the rover's travel there). */
    for (int32_t j = 0; j < k; ++j)
        lemke_direction(j, k, &L->dirs[2 * j], &L->dirs[2 * j + 1]);
    {
        int32_t v = 0, cr = 0;
        for (int32_t b = 0; b < w->nblocks; ++b) {
            dvi_block_kind kind = p->blocks[b].kind;
            double* turn = w->pyramid_turn + 2 * (size_t)b; /* the friction and the rolling pyramid's */
            turn[0] = turn[1] = 0.0;
            if (kind == DVI_BLOCK_BILATERAL)
                continue;
            lemke_set_t(L->tr, L->tc, v++, cr, 1.0, -1, 0.0); /* γ_n */
            if (kind == DVI_BLOCK_FRICTION || kind == DVI_BLOCK_FRICTION_ROLLING) {
                v = lemke_pyramid(L, k, v, cr, cr + 1, s->lemke.orient, s->lemke.orient_grid, guess, turn); /* β_j */
                lemke_set_t(L->tr, L->tc, v++, -1, 0.0, -1, 0.0);               /* λ */
            }
            if (kind == DVI_BLOCK_FRICTION_ROLLING) {
                lemke_set_t(L->tr, L->tc, v++, cr + 3, 1.0, -1, 0.0);  /* σ+ */
                lemke_set_t(L->tr, L->tc, v++, cr + 3, -1.0, -1, 0.0); /* σ− */
                lemke_set_t(L->tr, L->tc, v++, -1, 0.0, -1, 0.0);      /* λ_s */
                v = lemke_pyramid(L, k, v, cr, cr + 4, s->lemke.orient, s->lemke.orient_grid, guess, turn + 1); /* ρ_j */
                lemke_set_t(L->tr, L->tc, v++, -1, 0.0, -1, 0.0);               /* λ_r */
            }
            cr += w->block_row[b + 1] - w->block_row[b];
        }
    }

    /* M = Tᵀ N_red T,  q = Tᵀ r_red */
    for (size_t i = 0; i < un; ++i) {
        double* mi = L->mlcp + i * un;
        double qi = 0.0;
        for (int a = 0; a < 2; ++a)
            if (L->tr[2 * i + (size_t)a] >= 0)
                qi += L->tc[2 * i + (size_t)a] * L->rred[L->tr[2 * i + (size_t)a]];
        L->qlcp[i] = qi;
        for (size_t j = 0; j < un; ++j) {
            double sum = 0.0;
            for (int a = 0; a < 2; ++a) {
                int32_t ra = L->tr[2 * i + (size_t)a];
                const double* nrow;
                if (ra < 0)
                    continue;
                nrow = L->nred + (size_t)ra * uc;
                for (int bb = 0; bb < 2; ++bb) {
                    int32_t rb = L->tr[2 * j + (size_t)bb];
                    if (rb >= 0)
                        sum += L->tc[2 * i + (size_t)a] * L->tc[2 * j + (size_t)bb] * nrow[rb];
                }
            }
            mi[j] = sum;
        }
    }
    {
        int32_t v = 0;
        for (int32_t b = 0; b < w->nblocks; ++b) {
            const dvi_ccp_block* blk = &p->blocks[b];
            int32_t vn = v;
            if (blk->kind == DVI_BLOCK_BILATERAL)
                continue;
            v += (int32_t)lemke_block_vars(blk->kind, k);
            if (blk->kind == DVI_BLOCK_FRICTIONLESS)
                continue;
            lemke_couple(L->mlcp, n, vn, vn + 1, k, vn + 1 + k, blk->mu, relaxed);
            if (blk->kind == DVI_BLOCK_FRICTION_ROLLING) {
                int32_t vs = vn + 2 + k; /* σ+, σ−, λ_s */
                lemke_couple(L->mlcp, n, vn, vs, 2, vs + 2, blk->mu_spin, relaxed);
                lemke_couple(L->mlcp, n, vn, vs + 3, k, vs + 3 + k, blk->mu_roll, relaxed);
            }
        }
    }
    return DVI_OK;
}

/* WARM START (settings.warm_start, with the guess in gamma). The guess
 * names a complementary basis: z_i basic where it puts LCP variable i above
 * zero (γ_n; the one or two pyramid edges whose cone holds γ_t, with their
 * β; λ where Σβ = μγ_n, the pyramid's boundary: sliding), with the
 * additions below. For that set Z, z_Z = −M_ZZ⁻¹ q_Z (one LU of |Z| rows,
 * one refinement step) and z = 0 elsewhere, corrected by block principal
 * pivoting. When that z passes the LCP check at LEMKE_WARM_ACCEPT of the
 * tolerance, it is the answer, with no pivot; otherwise Lemke runs from
 * its start. A contact
 * set that persists from step to step, as a rover's wheels rolling on
 * rigid ground, costs |Z|³/3 instead of p pivots of n·p. Blocks with
 * rolling resistance are not guessed (no warm start). The guess is part of
 * the world's state, so the answer stays the same on a resumed run.
 * Returns whether z (in L->z) was accepted; *resid: its LCP residual
 * (w = Mz + q in L->wl). */
static bool lemke_warm(const ccp_work* w, const lemke_layout* L, int32_t n, int32_t k, const double* guess,
                       double tolerance, double* resid)
{
    const dvi_ccp_problem* p = w->p;
    lemke_lcp_ws ws;
    int32_t nz = 0, v = 0, cr = 0;
    if (n <= 0 || !guess)
        return false;
    lemke_lcp_layout(n, L->lcp_work, &ws);
    int32_t* set = ws.cand;
    int32_t* opt = ws.kcol; /* 1: a sticking contact's edge at β = 0, added to pin u_t */
    memset(opt, 0, (size_t)n * sizeof(int32_t));
    for (int32_t b = 0; b < w->nblocks; ++b) {
        const dvi_block_kind kind = p->blocks[b].kind;
        if (kind == DVI_BLOCK_BILATERAL)
            continue;
        if (kind == DVI_BLOCK_FRICTION_ROLLING)
            return false;
        const double gn = guess[L->crow[cr]];
        if (!isfinite(gn))
            return false;
        if (kind == DVI_BLOCK_FRICTIONLESS) {
            if (gn > 0.0)
                set[nz++] = v;
            v += 1;
            cr += 1;
            continue;
        }
        const double gt0 = guess[L->crow[cr + 1]], gt1 = guess[L->crow[cr + 2]];
        if (!isfinite(gt0) || !isfinite(gt1))
            return false;
        const double eps = 1e-9 * lemke_max(fabs(gn), lemke_max(fabs(gt0), fabs(gt1)));
        if (gn > eps)
            set[nz++] = v;
        /* the two adjacent edges e_a, e_b with γ_t = β_a e_a + β_b e_b, both ≥ 0 */
        int32_t va = -1, vb = -1;
        double ba = 0.0, bb = 0.0;
        for (int32_t j = 0; j < k && gn > eps; ++j) {
            const int32_t ja = v + 1 + j, jb = v + 1 + (j + 1) % k;
            const double ax = L->tc[2 * ja], ay = L->tc[2 * ja + 1];
            const double bx = L->tc[2 * jb], by = L->tc[2 * jb + 1];
            const double det = ax * by - ay * bx;
            if (!(det > 0.0))
                continue;
            const double xa = (gt0 * by - gt1 * bx) / det, xb = (ax * gt1 - ay * gt0) / det;
            if (xa < -eps || xb < -eps)
                continue;
            va = ja;
            vb = jb;
            ba = lemke_pos(xa);
            bb = lemke_pos(xb);
            break;
        }
        if (gn <= eps) {
            /* apart (γ_n = 0): the tangential rows still need λ basic, at
             * the free sliding speed, with the edge of the most negative
             * d_jᵀu_t (judged by q) basic at β = 0 */
            int32_t jmin = -1;
            for (int32_t j = 0; j < k; ++j)
                if (L->qlcp[v + 1 + j] < 0.0 && (jmin < 0 || L->qlcp[v + 1 + j] < L->qlcp[v + 1 + jmin]))
                    jmin = j;
            if (jmin >= 0) {
                set[nz++] = v + 1 + jmin;
                set[nz++] = v + 1 + k;
            }
        } else if (va >= 0) {
            const bool sliding = ba + bb > eps && ba + bb >= (1.0 - 1e-6) * p->blocks[b].mu * gn;
            /* sticking: both edges basic (β_b may be 0), so that u_t = 0 in
             * both directions; sliding: the edges that carry γ_t, and λ */
            if (!sliding || ba > eps) {
                opt[va] = ba <= eps;
                set[nz++] = va;
            }
            if (!sliding || bb > eps) {
                opt[vb] = bb <= eps;
                set[nz++] = vb;
            }
            if (sliding)
                set[nz++] = v + 1 + k;
        }
        v += 2 + k;
        cr += 3;
    }
    if (nz == 0)
        return false;
    /* Block principal pivoting from that set (Júdice & Pires 1994): solve
     * z_Z = −M_ZZ⁻¹ q_Z, then move every basic z below zero out of Z and
     * every w below zero (z_i = 0) into it, at most LEMKE_WARM_ROUNDS
     * times. A contact that sticks with γ_t on one edge of its pyramid
     * takes the round that finds which neighbour edge completes it. */
    int32_t* in = ws.kpos; /* 1: in Z */
    memset(in, 0, (size_t)n * sizeof(int32_t));
    for (int32_t r = 0; r < nz; ++r)
        in[set[r]] = 1;
    double* a = ws.binv;
    const double accept = LEMKE_WARM_ACCEPT * tolerance * lemke_max(1.0, ccp_norm2(L->qlcp, n));
    for (int round = 0; round < LEMKE_WARM_ROUNDS; ++round) {
        nz = 0;
        for (int32_t i = 0; i < n; ++i)
            if (in[i])
                set[nz++] = i;
        memset(L->z, 0, (size_t)n * sizeof(double));
        if (nz > 0) {
            for (int32_t c = 0; c < nz; ++c)
                for (int32_t r = 0; r < nz; ++r)
                    a[(size_t)c * (size_t)nz + (size_t)r] = L->mlcp[(size_t)set[r] * (size_t)n + (size_t)set[c]];
            if (ccp_dense_lu(nz, a, ws.ipiv) != 0)
                return false;
            double umin = INFINITY, umax = 0.0; /* a nearly singular M_ZZ (redundant contacts): no guess */
            for (int32_t r = 0; r < nz; ++r) {
                const double u = fabs(a[(size_t)r * (size_t)nz + (size_t)r]);
                umin = u < umin ? u : umin;
                umax = lemke_max(umax, u);
            }
            if (!(umin > LEMKE_WARM_PIVOT * umax)) {
                /* redundant contacts (a wheel's two rim points share the
                 * rolling direction): once, without the edges at β = 0 */
                bool dropped = false;
                for (int32_t i = 0; i < n; ++i)
                    if (in[i] && opt[i]) {
                        in[i] = 0;
                        dropped = true;
                    }
                memset(opt, 0, (size_t)n * sizeof(int32_t));
                if (!dropped)
                    return false;
                continue;
            }
            for (int32_t r = 0; r < nz; ++r)
                ws.xref[r] = -L->qlcp[set[r]];
            ccp_dense_lu_solve(nz, a, ws.ipiv, false, ws.xref);
            for (int32_t r = 0; r < nz; ++r) { /* one refinement step: δ = M_ZZ⁻¹(−q_Z − M_ZZ x) */
                const double* mr = L->mlcp + (size_t)set[r] * (size_t)n;
                double t = -L->qlcp[set[r]];
                for (int32_t c = 0; c < nz; ++c)
                    t -= mr[set[c]] * ws.xref[c];
                ws.res[r] = t;
            }
            ccp_dense_lu_solve(nz, a, ws.ipiv, false, ws.res);
            for (int32_t r = 0; r < nz; ++r) {
                const double x = ws.xref[r] + ws.res[r];
                if (!isfinite(x))
                    return false;
                L->z[set[r]] = x;
            }
        }
        /* w = Mz + q with the unclipped z; done when the clipped z passes,
         * else the signs wrong by more than that residual's scale flip */
        memcpy(L->wl, L->qlcp, (size_t)n * sizeof(double));
        ccp_dense_gemv(n, n, L->mlcp, (size_t)n, L->z, 1.0, L->wl);
        double ss = 0.0;
        for (int32_t i = 0; i < n; ++i) {
            const double m = fmin(lemke_pos(L->z[i]), L->wl[i]);
            ss += m * m;
        }
        if (sqrt(ss) <= accept)
            break;
        int32_t flips = 0;
        for (int32_t i = 0; i < n; ++i) {
            if (in[i] && L->z[i] < -accept) {
                in[i] = 0;
                ++flips;
            } else if (!in[i] && L->wl[i] < -accept) {
                in[i] = 1;
                ++flips;
            }
        }
        if (flips == 0)
            break;
    }
    for (int32_t i = 0; i < n; ++i)
        L->z[i] = lemke_pos(L->z[i]);
    *resid = ccp_lemke_lcp_residual(n, L->mlcp, L->qlcp, L->z, L->wl);
    return *resid <= LEMKE_WARM_ACCEPT * tolerance;
}

static dvi_status lemke_ccp_body(ccp_work* w, const dvi_solver_settings* s, bool relaxed, double* gamma,
                                 dvi_solve_result* res)
{
    const dvi_ccp_problem* p = w->p;
    int32_t m = w->m, k = s->lemke.friction_directions, nb = 0, n, rank = 0, pivots = 0, nc;
    int64_t n64 = 0;
    size_t bytes;
    void* base;
    lemke_layout L;
    dvi_status st;
    dvi_solve_status lst = DVI_SOLVE_BAD_INPUT;
    double resid;

    res->iterations = 0;
    if (k < 3) {
        snprintf(res->message, sizeof res->message,
                 "lemke: settings.lemke.friction_directions must be >= 3 (got %d)", (int)k);
        res->status = DVI_SOLVE_BAD_INPUT;
        return DVI_ERR_INVALID_ARG;
    }
    for (int32_t b = 0; b < w->nblocks; ++b) {
        dvi_block_kind kind = p->blocks[b].kind;
        if (kind == DVI_BLOCK_BILATERAL)
            nb += w->block_row[b + 1] - w->block_row[b];
        else if (lemke_block_vars(kind, k) > 0)
            n64 += lemke_block_vars(kind, k);
        else {
            snprintf(res->message, sizeof res->message, "lemke: blocks[%d]: unsupported block kind %d", (int)b,
                     (int)kind);
            res->status = DVI_SOLVE_BAD_INPUT;
            return DVI_ERR_UNSUPPORTED;
        }
    }
    if (n64 > (int64_t)s->lemke.max_lcp_size) {
        snprintf(res->message, sizeof res->message,
                 "lemke: pyramid LCP size %lld (k = %d) exceeds settings.lemke.max_lcp_size = %d (dense method)",
                 (long long)n64, (int)k, (int)s->lemke.max_lcp_size);
        res->status = DVI_SOLVE_BAD_INPUT;
        return DVI_ERR_UNSUPPORTED;
    }
    if (m > s->lemke.max_lcp_size) {
        snprintf(res->message, sizeof res->message,
                 "lemke: %d rows exceed settings.lemke.max_lcp_size = %d (dense N for the Schur complement)", (int)m,
                 (int)s->lemke.max_lcp_size);
        res->status = DVI_SOLVE_BAD_INPUT;
        return DVI_ERR_UNSUPPORTED;
    }
    n = (int32_t)n64;
    nc = m - nb;

    bytes = lemke_solver_layout(m, nb, n, k, NULL, &L);
    base = bytes ? ccp_work_scratch(w, bytes) : NULL;
    if (!base) {
        snprintf(res->message, sizeof res->message, "lemke: out of memory for the dense workspace (%zu bytes)",
                 bytes);
        return DVI_ERR_NOMEM;
    }
    lemke_solver_layout(m, nb, n, k, base, &L);
    {
        int32_t ib = 0, ic = 0;
        for (int32_t i = 0; i < m; ++i) {
            if (p->blocks[ccp_work_row_block(w, i)].kind == DVI_BLOCK_BILATERAL)
                L.brow[ib++] = i;
            else
                L.crow[ic++] = i;
        }
    }

    /* phase 1: N, Schur complement, pyramid LCP (each pyramid's turn kept
     * for dvi_solver_pyramid) */
    if (!ccp_work_reserve_turns(w)) {
        snprintf(res->message, sizeof res->message, "lemke: out of memory (the pyramids' turns)");
        return DVI_ERR_NOMEM;
    }
    w->pyramid_edges = k;
    st = lemke_build(w, s, relaxed, s->warm_start ? gamma : NULL, &L, nb, n, &rank, res->message,
                     sizeof res->message);
    if (st != DVI_OK) {
        res->status = DVI_SOLVE_DIVERGED;
        return st;
    }

    /* phase 2: the guess's basis, else Lemke */
    double warm_resid = INFINITY, lcp_resid = INFINITY;
    const bool warm = s->warm_start && lemke_warm(w, &L, n, k, gamma, s->tolerance, &warm_resid);
    if (warm) {
        st = DVI_OK;
        lst = DVI_SOLVE_CONVERGED;
        pivots = 0;
    } else {
        st = lemke_lcp_body(n, L.mlcp, L.qlcp, L.z, s->lemke.max_pivots, s->tolerance, L.lcp_work, &pivots, &lst,
                            &lcp_resid);
    }
    res->iterations = pivots;
    if (st < 0) {
        snprintf(res->message, sizeof res->message,
                 "lemke: pivoting broke down after %d pivots (%s basis or non-finite values)", (int)pivots,
                 st == DVI_ERR_SINGULAR ? "numerically singular" : "non-finite");
        res->status = DVI_SOLVE_DIVERGED;
        return st;
    }

    /* LCP check on a fresh w = Mz + q, made by lemke_lcp_body (the warm start's own check is one) */
    resid = warm ? warm_resid : lcp_resid; /* the residual of that z, as lemke_lcp_body computed it */
    res->target_residual = resid;
    if (lst == DVI_SOLVE_CONVERGED) {
        if (resid <= s->tolerance) {
            res->status = DVI_SOLVE_CONVERGED;
        } else {
            res->status = DVI_SOLVE_MAX_ITERATIONS;
            snprintf(res->message, sizeof res->message,
                     "lemke: LCP check failed: residual %.3e > tolerance %.3e after %d pivots", resid,
                     s->tolerance, (int)pivots);
        }
    } else if (lst == DVI_SOLVE_RAY) {
        res->status = DVI_SOLVE_RAY;
        snprintf(res->message, sizeof res->message,
                 "lemke: ray termination after %d pivots (no solution reached; LCP residual %.3e)", (int)pivots,
                 resid);
    } else {
        res->status = DVI_SOLVE_PIVOT_LIMIT;
        snprintf(res->message, sizeof res->message,
                 "lemke: pivot budget spent (%d pivots; settings.lemke.max_pivots = %d); LCP residual %.3e",
                 (int)pivots, (int)s->lemke.max_pivots, resid);
    }

    /* back to γ: γ_C = T z, λ_B = −U (g + G γ_C) */
    memset(L.gc, 0, (size_t)nc * sizeof(double));
    for (int32_t v = 0; v < n; ++v) {
        for (int a = 0; a < 2; ++a) {
            int32_t rr = L.tr[2 * v + a];
            if (rr >= 0)
                L.gc[rr] += L.tc[2 * v + a] * L.z[v];
        }
    }
    for (int32_t c = 0; c < nc; ++c)
        gamma[L.crow[c]] = L.gc[c];
    if (nb > 0) {
        memset(L.lam, 0, (size_t)nb * sizeof(double));
        if (rank > 0) {
            memcpy(L.h, L.g, (size_t)rank * sizeof(double));
            if (nc > 0)
                ccp_dense_gemv(rank, nc, L.gmat, (size_t)nc, L.gc, 1.0, L.h);
            ccp_dense_gemv_t(rank, nb, -1.0, L.vt, (size_t)nb, L.h, L.lam); /* λ_B = −U h (lam is zero) */
        }
        for (int32_t a = 0; a < nb; ++a)
            gamma[L.brow[a]] = L.lam[a];
    }
    ccp_history_push(w, res, resid);
    return res->status == DVI_SOLVE_CONVERGED ? DVI_OK : DVI_NOT_CONVERGED;
}

dvi_status ccp_lemke_lcp(int32_t n, const double* M, const double* q, double* z, int32_t max_pivots,
                         double tolerance, void* work, int32_t* pivots, dvi_solve_status* status)
{
    return lemke_lcp_body(n, M, q, z, max_pivots, tolerance, work, pivots, status, NULL);
}

dvi_status ccp_lemke_ccp(ccp_work* w, const dvi_solver_settings* s, bool relaxed, double* gamma,
                         dvi_solve_result* res)
{
    return lemke_ccp_body(w, s, relaxed, gamma, res);
}

static dvi_status lemke_solve(ccp_work* w, const ccp_solver_call* call, const dvi_solver_settings* s,
                              double* gamma, dvi_solve_result* res)
{
    (void)call; /* no state, no inner solver */
    return ccp_lemke_ccp(w, s, !s->lemke.coulomb, gamma, res);
}

static dvi_friction_law lemke_law(const dvi_solver_settings* s)
{
    return s->lemke.coulomb ? DVI_LAW_COULOMB : DVI_LAW_CCP;
}

const ccp_solver_impl ccp_solver_lemke = {
    .name = "lemke", .solve = lemke_solve, .law = DVI_LAW_CCP, .targets_ccp = false, /* the pyramid LCP */
    .summary = "Lemke complementary pivoting on the Anitescu-Potra pyramid LCP (dense, exact; small problems, "
               "references)",
    .law_setting = "lemke.coulomb", /* true: the Coulomb LCP of Anitescu-Potra */
    .law_under = lemke_law,
};
