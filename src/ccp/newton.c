/* dvicontact — semismooth Newton on the Alart–Curnier function (Coulomb's law).
 *
 * PROBLEM. Coulomb's law in De Saxcé's form (ccp.h, DVI_LAW_COULOMB): per
 * friction block γ ∈ K, ũ = u + μ‖u_t‖e_n ∈ K*, ⟨γ, ũ⟩ = 0, u = Nγ + r;
 * a sliding contact keeps u_n = 0. Not the CCP: no objective, no
 * projection method with a convergence proof.
 *
 * FORMULATION (Alart & Curnier 1991; the semismooth Newton method of
 * Christensen, Klarbring, Pang & Strömberg 1998; Qi & Sun 1993 for the
 * generalized Jacobian; as compared in Acary, Brémond & Huber 2018).
 * γ solves the law iff Φ(γ) = 0, block by block, with ρ_a = settings.newton.rho
 * / η_a (η_a the mean of the block's diagonal of N, so that ρ_a u_a has the
 * units and the size of an impulse):
 *   FRICTION      Φ_n = γ_n − max(0, γ_n − ρ u_n)
 *                 Φ_t = γ_t − Π_{B(μ s)}(γ_t − ρ u_t),   s = max(0, γ_n − ρ u_n)
 *                 (B(R) the disc of radius R: the tangential impulse is
 *                 bounded by μ times the normal one, and opposes the slip)
 *   FRICTIONLESS  Φ = γ − max(0, γ − ρ u)
 *   BILATERAL     Φ = ρ u   (u = 0; scaled by ρ like the others)
 * FRICTION_ROLLING blocks are refused (refused_kinds: the driver returns
 * DVI_ERR_INVALID_ARG naming the block and the solvers that take them):
 * Coulomb's law with spin and rolling friction has no Alart–Curnier
 * function here.
 *
 * GENERALIZED JACOBIAN. Φ_a depends on γ_a and u_a only, so an element of
 * Clarke's generalized Jacobian is J = A + B N with A, B block diagonal
 * (3×3 per friction block, written by ac_block): a normal row with
 * γ_n − ρu_n > 0 is ρ u_n (A = 0, B = ρ), else γ_n (A = 1, B = 0); a
 * sticking tangent pair (‖z‖ ≤ μs, s > 0, z = γ_t − ρu_t) is ρ u_t; a
 * sliding one has, with ẑ = z/‖z‖ and P = (μs/‖z‖)(I − ẑẑᵀ),
 *   A_tt = I − P,  B_tt = ρ P,  A_tn = −μ ẑ,  B_tn = ρ μ ẑ  (A_tn, B_tn when s > 0).
 * Redundant contacts (four corners of a box face) make N singular and with
 * it J on sticking contacts; the Newton system is therefore solved with
 * J_ε = A + B (N + ε η∘I), a proximal (Levenberg–Marquardt-like) shift with
 * ε = min(NEWTON_REG_MAX, NEWTON_REG · Coulomb residual): it vanishes at
 * the solution, so the convergence stays superlinear.
 *
 * LINEAR ALGEBRA. Up to settings.newton.max_dense_rows rows: N is formed
 * densely once per solve (from W's CSC, or column by column through the
 * work's products in the factor form, compliance included), J_ε assembled
 * from it each iteration and factored by LU (the library's own, src/ccp/dense.c:
 * the same bits on every CPU and for any BLAS thread count).
 * Larger problems: restarted GMRES(NEWTON_GMRES_RESTART), matrix-free
 * (J_ε v = A v + B (N v + ε η∘v) with ccp_work_apply), right-preconditioned
 * by the inverses of J_ε's diagonal blocks (block Jacobi); relative
 * tolerance min(0.1, Coulomb residual) (inexact Newton, Eisenstat–Walker
 * style forcing), at most NEWTON_GMRES_MAX inner iterations per step.
 *
 * GLOBALISATION (settings.newton.line_search). Merit f = ½‖Φ‖². The Newton
 * step d satisfies ∇fᵀd = −‖Φ‖² (exactly for ε = 0), and the step length t
 * is the first of 1, ½, ¼, … (down to 2^−NEWTON_BACKTRACKS) with
 *   f(γ + t d) ≤ max(last NEWTON_NONMONOTONE merits) − 2σ t f(γ),  σ = 1e-4
 * (Armijo against the non-monotone reference of Grippo, Lampariello &
 * Lucidi 1986). If none passes, the steepest-descent direction of the merit,
 * −JᵀΦ, is tried from the Cauchy step ‖JᵀΦ‖²/‖J JᵀΦ‖² with the monotone
 * Armijo test; if that fails too, the method has stalled: MAX_ITERATIONS
 * with a message. Without line search, the full step is taken (and a
 * Newton system that cannot be solved ends the solve: DIVERGED).
 *
 * STOPPING RULE. The Coulomb residual (metrics.residual_coulomb, computed by
 * ccp_work_metrics on u = Nγ + r formed as the driver forms it) ≤ tolerance,
 * checked before every iteration; at most max_iterations Newton steps. The
 * best iterate (lowest Coulomb residual) is returned. DIVERGED when Φ or γ
 * becomes non-finite or ‖γ‖ grows 1e10-fold over its natural scale.
 *
 * MEMORY. Everything comes from the work's persistent scratch buffer and
 * its vectors: no allocation in a solve once the buffer has grown. The
 * dense path holds 2 m² doubles (16 MB at m = 1,000, 144 MB at m = 3,000).
 */
#include "ccp_work.h"


#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define NEWTON_ALIGN 64u
#define NEWTON_ARMIJO 1e-4        /* σ of the Armijo test */
#define NEWTON_BACKTRACKS 30      /* halvings of the step at most */
#define NEWTON_NONMONOTONE 5      /* merits of the non-monotone reference */
#define NEWTON_REG 1.0            /* ε = NEWTON_REG · residual ... */
#define NEWTON_REG_MAX 1e-2       /* ... at most this */
#define NEWTON_GMRES_RESTART 60   /* Krylov vectors before a restart */
#define NEWTON_GMRES_MAX 600      /* GMRES iterations per Newton step at most */
#define NEWTON_FORCING_MAX 0.1    /* GMRES relative tolerance at most */

/* The solver's scratch: one buffer of the work, carved at 64-byte offsets. */
typedef struct newton_ws {
    double* rho;   /* [nb] ρ_a */
    double* eta;   /* [nb] η_a (the regularisation's scale) */
    double* ablk;  /* [9 nb] A_a, 3×3 slots row-major */
    double* bblk;  /* [9 nb] B_a */
    double* nbb;   /* [9 nb] N_aa, compliance included (GMRES) */
    double* pinv;  /* [9 nb] inverses of J_ε's diagonal blocks (GMRES) */
    double* nd;    /* [m²] dense N, column-major (dense path) */
    double* jac;   /* [m²] J_ε, then its LU factors (dense path) */
    int32_t* ipiv; /* [m] (dense path) */
    double* kv;    /* [(R + 1) m] Krylov basis (GMRES) */
    double* hh;    /* [(R + 1) R] Hessenberg matrix, column-major (GMRES) */
    double *cs, *sn, *gs, *ys; /* [R + 1] Givens rotations, right side, solution */
    double *t1, *t2, *t3; /* [m] scratch vectors */
} newton_ws;

typedef base_carver newton_carver;

static void* carve(newton_carver* c, size_t count, size_t elem)
{
    return base_carve(c, count, elem, NEWTON_ALIGN);
}

/* Bytes of the layout (0 on overflow); with base, the pointers. */
static size_t newton_layout(int32_t m, int32_t nb, bool dense, void* base, newton_ws* ws)
{
    newton_carver c = { (unsigned char*)base, 0, false };
    const size_t um = (size_t)m, ub = (size_t)nb, R = NEWTON_GMRES_RESTART;
    memset(ws, 0, sizeof *ws);
    ws->rho = carve(&c, ub, sizeof(double));
    ws->eta = carve(&c, ub, sizeof(double));
    ws->ablk = carve(&c, 9 * ub, sizeof(double));
    ws->bblk = carve(&c, 9 * ub, sizeof(double));
    ws->t1 = carve(&c, um, sizeof(double));
    ws->t2 = carve(&c, um, sizeof(double));
    ws->t3 = carve(&c, um, sizeof(double));
    if (dense) {
        const size_t mm = um != 0 && um > SIZE_MAX / um ? SIZE_MAX : um * um;
        ws->nd = carve(&c, mm, sizeof(double));
        ws->jac = carve(&c, mm, sizeof(double));
        ws->ipiv = carve(&c, um, sizeof(int32_t));
    } else {
        ws->nbb = carve(&c, 9 * ub, sizeof(double));
        ws->pinv = carve(&c, 9 * ub, sizeof(double));
        ws->kv = carve(&c, (R + 1) * um, sizeof(double));
        ws->hh = carve(&c, (R + 1) * R, sizeof(double));
        ws->cs = carve(&c, R + 1, sizeof(double));
        ws->sn = carve(&c, R + 1, sizeof(double));
        ws->gs = carve(&c, R + 1, sizeof(double));
        ws->ys = carve(&c, R + 1, sizeof(double));
    }
    return c.overflow ? 0 : c.off + NEWTON_ALIGN;
}

/* The normal row of ac_block: Φ_n = ρ u_n where γ_n − ρ u_n > 0 (in
 * contact), else γ_n; returns γ_n − ρ u_n. */
static double ac_normal(double rho, const double* g, const double* u, double* phi, double* A, double* B)
{
    const double x = g[0] - rho * u[0];
    if (x > 0.0) {
        phi[0] = rho * u[0];
        if (B) B[0] = rho;
    } else {
        phi[0] = g[0];
        if (A) A[0] = 1.0;
    }
    return x;
}

/* Φ_a of one block (k rows) at (γ_a, u_a), and with A, B (9 each, may be
 * NULL) the block's A_a, B_a of the generalized Jacobian J = A + B N. */
static void ac_block(const dvi_ccp_block* blk, double rho, const double* g, const double* u, double* phi, double* A,
                     double* B)
{
    if (A) {
        for (int i = 0; i < 9; i++) A[i] = B[i] = 0.0;
    }
    switch (blk->kind) {
    case DVI_BLOCK_BILATERAL:
        phi[0] = rho * u[0];
        if (B) B[0] = rho;
        return;
    case DVI_BLOCK_FRICTIONLESS: ac_normal(rho, g, u, phi, A, B); return;
    case DVI_BLOCK_FRICTION: {
        const double mu = blk->mu;
        const double xn = ac_normal(rho, g, u, phi, A, B);
        const double s = xn > 0.0 ? xn : 0.0;
        const double z1 = g[1] - rho * u[1], z2 = g[2] - rho * u[2];
        const double zn = sqrt(z1 * z1 + z2 * z2), R = mu * s;
        if (R > 0.0 && zn <= R) { /* stick: Φ_t = ρ u_t */
            phi[1] = rho * u[1];
            phi[2] = rho * u[2];
            if (B) B[4] = B[8] = rho;
            return;
        }
        /* slide (or no friction bound): Φ_t = γ_t − R ẑ */
        const double c = zn > 0.0 ? R / zn : 0.0;
        const double h1 = zn > 0.0 ? z1 / zn : 0.0, h2 = zn > 0.0 ? z2 / zn : 0.0;
        phi[1] = g[1] - c * z1;
        phi[2] = g[2] - c * z2;
        if (!A) return;
        const double p11 = c * (1.0 - h1 * h1), p12 = -c * h1 * h2, p22 = c * (1.0 - h2 * h2);
        A[4] = 1.0 - p11;
        A[5] = -p12;
        A[7] = -p12;
        A[8] = 1.0 - p22;
        B[4] = rho * p11;
        B[5] = rho * p12;
        B[7] = rho * p12;
        B[8] = rho * p22;
        if (s > 0.0) {
            A[3] = -mu * h1;
            A[6] = -mu * h2;
            B[3] = rho * mu * h1;
            B[6] = rho * mu * h2;
        }
        return;
    }
    case DVI_BLOCK_FRICTION_ROLLING: /* refused before the solve */
        return;
    }
}

/* Φ of all blocks at (γ, u); returns ½‖Φ‖² (serial, index order). With
 * jacobian, also A and B. */
static double eval_phi(const ccp_work* w, const newton_ws* ws, const double* g, const double* u, double* phi,
                       bool jacobian)
{
    const dvi_ccp_block* blocks = w->p->blocks;
    for (int32_t b = 0; b < w->nblocks; b++) {
        const int32_t r0 = w->block_row[b];
        ac_block(&blocks[b], ws->rho[b], g + r0, u + r0, phi + r0, jacobian ? ws->ablk + 9 * (size_t)b : NULL,
                 jacobian ? ws->bblk + 9 * (size_t)b : NULL);
    }
    return 0.5 * ccp_dot(phi, phi, w->m);
}

/* u = N γ + r, the driver's order (so its bits are the driver's). */
static void fresh_velocity(const ccp_work* w, const double* g, double* u)
{
    ccp_work_apply(w, g, u);
    const double* r = w->p->r;
    for (int32_t i = 0; i < w->m; i++) u[i] += r[i];
}

static double coulomb_residual(const ccp_work* w, const double* g, const double* u, double tol)
{
    dvi_ccp_metrics mt;
    ccp_work_metrics(w, g, u, &mt, NULL);
    /* the feasibility residual and every block's own too, as ccp_work_residual_coulomb_checked */
    if (mt.residual_coulomb <= tol)
        return ccp_max_nan(ccp_max_nan(mt.residual_coulomb, mt.residual_feasibility),
                           ccp_block_in_tol(w, mt.residual_block_coulomb, tol));
    return mt.residual_coulomb;
}

/* y = A x + B (Nx + ε η∘x) blockwise, given Nx. */
static void jac_apply_given(const ccp_work* w, const newton_ws* ws, double eps, const double* x, const double* nx,
                            double* y)
{
    for (int32_t b = 0; b < w->nblocks; b++) {
        const int32_t r0 = w->block_row[b], k = w->block_row[b + 1] - r0;
        const double* A = ws->ablk + 9 * (size_t)b;
        const double* B = ws->bblk + 9 * (size_t)b;
        const double sh = eps * ws->eta[b];
        for (int32_t i = 0; i < k; i++) {
            double s = 0.0;
            for (int32_t l = 0; l < k; l++)
                s += A[3 * i + l] * x[r0 + l] + B[3 * i + l] * (nx[r0 + l] + sh * x[r0 + l]);
            y[r0 + i] = s;
        }
    }
}

/* y = J_ε x (matrix-free); tmp: m doubles. */
static void jac_apply(const ccp_work* w, const newton_ws* ws, double eps, const double* x, double* tmp, double* y)
{
    ccp_work_apply(w, x, tmp);
    jac_apply_given(w, ws, eps, x, tmp, y);
}

/* y = M x block by block (transposed: y = Mᵀ x), M_b the leading k × k of
 * the 3 × 3 row-major mats[9 b], k the block's rows. */
static void blocks_apply(const ccp_work* w, const double* mats, bool transposed, const double* x, double* y)
{
    for (int32_t b = 0; b < w->nblocks; b++) {
        const int32_t r0 = w->block_row[b], k = w->block_row[b + 1] - r0;
        const double* M = mats + 9 * (size_t)b;
        for (int32_t i = 0; i < k; i++) {
            double s = 0.0;
            for (int32_t j = 0; j < k; j++) s += (transposed ? M[3 * j + i] : M[3 * i + j]) * x[r0 + j];
            y[r0 + i] = s;
        }
    }
}

/* y = J_εᵀ x = Aᵀx + (N + εη) Bᵀx; tmp, tmp2: m doubles. */
static void jac_apply_t(const ccp_work* w, const newton_ws* ws, double eps, const double* x, double* tmp,
                        double* tmp2, double* y)
{
    blocks_apply(w, ws->bblk, true, x, tmp);
    ccp_work_apply(w, tmp, tmp2);
    for (int32_t b = 0; b < w->nblocks; b++) {
        const int32_t r0 = w->block_row[b], k = w->block_row[b + 1] - r0;
        const double* A = ws->ablk + 9 * (size_t)b;
        const double sh = eps * ws->eta[b];
        for (int32_t l = 0; l < k; l++) {
            double s = tmp2[r0 + l] + sh * tmp[r0 + l];
            for (int32_t i = 0; i < k; i++) s += A[3 * i + l] * x[r0 + i];
            y[r0 + l] = s;
        }
    }
}

/* ---- dense path ---------------------------------------------------------------- */

/* nd = N (column-major m × m, compliance included), once per solve. */
static void dense_operator(ccp_work* w, newton_ws* ws)
{
    const int32_t m = w->m;
    const size_t um = (size_t)m;
    const dvi_ccp_problem* p = w->p;
    if (!w->factor_form) {
        memset(ws->nd, 0, um * um * sizeof(double));
        const dvi_csc* W = p->W;
        for (int32_t j = 0; j < m; j++)
            for (int32_t e = W->colptr[j]; e < W->colptr[j + 1]; e++)
                ws->nd[(size_t)j * um + (size_t)W->rowind[e]] += W->values[e];
        if (p->compliance)
            for (int32_t i = 0; i < m; i++) ws->nd[(size_t)i * um + (size_t)i] += p->compliance[i];
        return;
    }
    double* e = ws->t1;
    memset(e, 0, um * sizeof(double));
    for (int32_t j = 0; j < m; j++) { /* N e_j: its column j */
        e[j] = 1.0;
        ccp_work_apply(w, e, ws->nd + (size_t)j * um);
        e[j] = 0.0;
    }
}

/* Solves J_ε d = −Φ densely. Returns 0, or > 0 for a singular J_ε. */
static int32_t dense_step(const ccp_work* w, newton_ws* ws, double eps, const double* phi, double* d)
{
    const int32_t m = w->m;
    const size_t um = (size_t)m;
    for (int32_t j = 0; j < m; j++) {
        const double* nc = ws->nd + (size_t)j * um;
        double* jc = ws->jac + (size_t)j * um;
        for (int32_t b = 0; b < w->nblocks; b++) {
            const int32_t r0 = w->block_row[b], k = w->block_row[b + 1] - r0;
            const double* A = ws->ablk + 9 * (size_t)b;
            const double* B = ws->bblk + 9 * (size_t)b;
            const bool own = j >= r0 && j < r0 + k;
            const double sh = eps * ws->eta[b];
            for (int32_t i = 0; i < k; i++) {
                double s = 0.0;
                for (int32_t l = 0; l < k; l++) s += B[3 * i + l] * nc[r0 + l];
                if (own) s += A[3 * i + (j - r0)] + B[3 * i + (j - r0)] * sh;
                jc[r0 + i] = s;
            }
        }
    }
    for (int32_t i = 0; i < m; i++) d[i] = -phi[i];
    int32_t info = ccp_dense_lu(m, ws->jac, ws->ipiv);
    if (info != 0) return info;
    ccp_dense_lu_solve(m, ws->jac, ws->ipiv, false, d);
    return 0;
}

/* ---- matrix-free path: preconditioned GMRES ---------------------------------------- */

/* Inverse of the k×k matrix a (3×3 slots) into inv, by Gauss–Jordan with
 * partial pivoting; the identity when it is singular. */
static void small_inverse(const double* a, int32_t k, double* inv)
{
    double m[3][6];
    for (int32_t i = 0; i < k; i++)
        for (int32_t j = 0; j < 2 * k; j++) m[i][j] = j < k ? a[3 * i + j] : (j - k == i ? 1.0 : 0.0);
    double scale = 0.0;
    for (int32_t i = 0; i < k; i++)
        for (int32_t j = 0; j < k; j++) scale = fmax(scale, fabs(a[3 * i + j]));
    for (int32_t c = 0; c < k; c++) {
        int32_t piv = c;
        for (int32_t i = c + 1; i < k; i++)
            if (fabs(m[i][c]) > fabs(m[piv][c])) piv = i;
        if (!(fabs(m[piv][c]) > 1e-14 * scale)) {
            for (int i = 0; i < 9; i++) inv[i] = 0.0;
            for (int32_t i = 0; i < k; i++) inv[4 * i] = 1.0;
            return;
        }
        if (piv != c)
            for (int32_t j = 0; j < 2 * k; j++) {
                double t = m[c][j];
                m[c][j] = m[piv][j];
                m[piv][j] = t;
            }
        const double f = 1.0 / m[c][c];
        for (int32_t j = 0; j < 2 * k; j++) m[c][j] *= f;
        for (int32_t i = 0; i < k; i++) {
            if (i == c || m[i][c] == 0.0) continue;
            const double g = m[i][c];
            for (int32_t j = 0; j < 2 * k; j++) m[i][j] -= g * m[c][j];
        }
    }
    for (int i = 0; i < 9; i++) inv[i] = 0.0;
    for (int32_t i = 0; i < k; i++)
        for (int32_t j = 0; j < k; j++) inv[3 * i + j] = m[i][k + j];
}

/* The block-Jacobi preconditioner: inverses of J_ε's diagonal blocks
 * A_a + B_a (N_aa + ε η_a I). */
static void precondition(const ccp_work* w, newton_ws* ws, double eps)
{
    for (int32_t b = 0; b < w->nblocks; b++) {
        const int32_t r0 = w->block_row[b], k = w->block_row[b + 1] - r0;
        const double* A = ws->ablk + 9 * (size_t)b;
        const double* B = ws->bblk + 9 * (size_t)b;
        const double* Nb = ws->nbb + 9 * (size_t)b;
        double jb[9] = {0};
        for (int32_t i = 0; i < k; i++)
            for (int32_t j = 0; j < k; j++) {
                double s = A[3 * i + j] + B[3 * i + j] * eps * ws->eta[b];
                for (int32_t l = 0; l < k; l++) s += B[3 * i + l] * Nb[3 * l + j];
                jb[3 * i + j] = s;
            }
        small_inverse(jb, k, ws->pinv + 9 * (size_t)b);
    }
}

static void precond_apply(const ccp_work* w, const newton_ws* ws, const double* x, double* y)
{
    blocks_apply(w, ws->pinv, false, x, y);
}

/* Solves J_ε d = −Φ by restarted GMRES, right-preconditioned, to the
 * relative tolerance `forcing`. Returns the inner iterations; *relres the
 * final relative residual. */
static int32_t gmres_step(const ccp_work* w, newton_ws* ws, double eps, const double* phi, double forcing,
                          double* d, double* relres)
{
    const int32_t m = w->m, R = NEWTON_GMRES_RESTART;
    const size_t um = (size_t)m;
    double* res = ws->t3;
    memset(d, 0, um * sizeof(double));
    const double bnorm = ccp_norm2(phi, m);
    *relres = 0.0;
    if (!(bnorm > 0.0)) return 0;
    for (int32_t i = 0; i < m; i++) res[i] = -phi[i];
    double beta = bnorm;
    int32_t total = 0;
    while (total < NEWTON_GMRES_MAX) {
        double* V = ws->kv;
        for (int32_t i = 0; i < m; i++) V[i] = res[i] / beta;
        memset(ws->gs, 0, (size_t)(R + 1) * sizeof(double));
        ws->gs[0] = beta;
        int32_t j = 0;
        double rr = beta;
        for (; j < R && total < NEWTON_GMRES_MAX; j++, total++) {
            double* vj = V + (size_t)j * um;
            double* vn = V + (size_t)(j + 1) * um;
            double* h = ws->hh + (size_t)j * (size_t)(R + 1);
            precond_apply(w, ws, vj, ws->t1);
            jac_apply(w, ws, eps, ws->t1, ws->t2, vn);
            for (int32_t i = 0; i <= j; i++) { /* modified Gram–Schmidt */
                const double* vi = V + (size_t)i * um;
                h[i] = ccp_dot(vn, vi, m);
                for (int32_t q = 0; q < m; q++) vn[q] -= h[i] * vi[q];
            }
            h[j + 1] = ccp_norm2(vn, m);
            if (h[j + 1] > 0.0)
                for (int32_t q = 0; q < m; q++) vn[q] /= h[j + 1];
            for (int32_t i = 0; i < j; i++) { /* earlier rotations */
                const double a = h[i], bb = h[i + 1];
                h[i] = ws->cs[i] * a + ws->sn[i] * bb;
                h[i + 1] = -ws->sn[i] * a + ws->cs[i] * bb;
            }
            const double den = hypot(h[j], h[j + 1]);
            ws->cs[j] = den > 0.0 ? h[j] / den : 1.0;
            ws->sn[j] = den > 0.0 ? h[j + 1] / den : 0.0;
            h[j] = den;
            h[j + 1] = 0.0;
            ws->gs[j + 1] = -ws->sn[j] * ws->gs[j];
            ws->gs[j] = ws->cs[j] * ws->gs[j];
            rr = fabs(ws->gs[j + 1]);
            if (!(rr > forcing * bnorm) || den == 0.0) {
                j++;
                total++;
                break;
            }
        }
        /* y = H⁻¹ g (upper triangular j × j), d += P⁻¹ V y */
        for (int32_t i = j - 1; i >= 0; i--) {
            double s = ws->gs[i];
            for (int32_t l = i + 1; l < j; l++) s -= ws->hh[(size_t)l * (size_t)(R + 1) + (size_t)i] * ws->ys[l];
            const double hd = ws->hh[(size_t)i * (size_t)(R + 1) + (size_t)i];
            ws->ys[i] = hd != 0.0 ? s / hd : 0.0;
        }
        memset(ws->t1, 0, um * sizeof(double));
        for (int32_t i = 0; i < j; i++) {
            const double* vi = V + (size_t)i * um;
            for (int32_t q = 0; q < m; q++) ws->t1[q] += ws->ys[i] * vi[q];
        }
        precond_apply(w, ws, ws->t1, ws->t2);
        for (int32_t q = 0; q < m; q++) d[q] += ws->t2[q];
        /* the true residual −Φ − J d */
        jac_apply(w, ws, eps, d, ws->t1, res);
        for (int32_t q = 0; q < m; q++) res[q] = -phi[q] - res[q];
        beta = ccp_norm2(res, m);
        *relres = beta / bnorm;
        if (!(beta > forcing * bnorm) || !isfinite(beta) || rr == 0.0) break;
    }
    return total;
}

/* ---- the solver ------------------------------------------------------------------ */

static dvi_status newton_body(ccp_work* w, const dvi_solver_settings* s, double* gamma, dvi_solve_result* res)
{
    const dvi_ccp_problem* p = w->p;
    const int32_t m = w->m, nb = w->nblocks;
    const size_t um = (size_t)m;
    res->iterations = 0; /* no FRICTION_ROLLING block: the driver refuses them (refused_kinds) */
    const bool dense = m <= s->newton.max_dense_rows;
    newton_ws ws;
    const size_t bytes = newton_layout(m, nb, dense, NULL, &ws);
    void* base = bytes ? ccp_work_scratch(w, bytes) : NULL;
    if (!base) {
        snprintf(res->message, sizeof res->message, "newton: out of memory for the %s workspace (%zu bytes, %d rows)",
                 dense ? "dense" : "GMRES", bytes, (int)m);
        return DVI_ERR_NOMEM;
    }
    newton_layout(m, nb, dense, base, &ws);

    /* ρ_a = rho / η_a (blocks that nothing moves: the mean η of the others) */
    double eta_sum = 0.0;
    int32_t eta_count = 0;
    for (int32_t b = 0; b < nb; b++) {
        const double e = ccp_block_eta(w, b);
        ws.eta[b] = e > 0.0 && isfinite(e) ? e : 0.0;
        if (ws.eta[b] > 0.0) {
            eta_sum += ws.eta[b];
            eta_count++;
        }
    }
    const double eta_mean = eta_count > 0 ? eta_sum / eta_count : 1.0;
    for (int32_t b = 0; b < nb; b++) ws.rho[b] = s->newton.rho / (ws.eta[b] > 0.0 ? ws.eta[b] : eta_mean);
    if (dense) {
        dense_operator(w, &ws);
    } else {
        for (int32_t b = 0; b < nb; b++) {
            const int32_t r0 = w->block_row[b], k = w->block_row[b + 1] - r0;
            double* Nb = ws.nbb + 9 * (size_t)b;
            for (int32_t i = 0; i < k; i++)
                for (int32_t j = 0; j < k; j++)
                    Nb[3 * i + j] = i == j ? w->diag[r0 + i] : ccp_work_block_entry(w, r0 + i, r0 + j);
        }
    }

    double* g = gamma;
    double* u = w->vec[0];
    double* phi = w->vec[1];
    double* d = w->vec[2];
    double* nd = w->vec[3];
    double* gt = w->vec[4];
    double* ut = w->vec[5];
    double* pt = w->vec[6];
    double* gbest = w->vec[7];
    double* ubest = w->vec[8];

    fresh_velocity(w, g, u);
    double f = eval_phi(w, &ws, g, u, phi, true);
    double resid = coulomb_residual(w, g, u, s->tolerance);
    double best = resid;
    memcpy(gbest, g, um * sizeof(double));
    memcpy(ubest, u, um * sizeof(double));
    double merits[NEWTON_NONMONOTONE];
    for (int i = 0; i < NEWTON_NONMONOTONE; i++) merits[i] = f;
    double scale = 0.0; /* the impulses' natural scale: max_a ‖r_a‖ / η_a */
    for (int32_t b = 0; b < nb; b++) {
        const double rn = ccp_norm2(p->r + w->block_row[b], w->block_row[b + 1] - w->block_row[b]);
        scale = fmax(scale, ws.rho[b] / s->newton.rho * rn);
    }
    double gnorm_first = 0.0;
    res->status = DVI_SOLVE_MAX_ITERATIONS;
    int32_t it = 0;
    while (true) {
        if (!isfinite(f) || !isfinite(resid)) {
            res->status = DVI_SOLVE_DIVERGED;
            snprintf(res->message, sizeof res->message, "newton: non-finite values at iteration %d", (int)it);
            break;
        }
        if (resid <= s->tolerance) {
            res->status = DVI_SOLVE_CONVERGED;
            break;
        }
        if (it >= s->max_iterations) break;
        it++;
        /* (1) the Newton direction: J_ε d = −Φ */
        double eps = NEWTON_REG * resid;
        if (eps > NEWTON_REG_MAX) eps = NEWTON_REG_MAX;
        bool ok = true;
        if (dense) {
            int32_t info = dense_step(w, &ws, eps, phi, d);
            for (int tries = 0; info > 0 && tries < 4; tries++) { /* exactly singular: a larger shift */
                eps = eps > 0.0 ? eps * 100.0 : 1e-10;
                info = dense_step(w, &ws, eps, phi, d);
            }
            ok = info == 0;
        } else {
            const double forcing = resid < NEWTON_FORCING_MAX ? resid : NEWTON_FORCING_MAX;
            double relres;
            precondition(w, &ws, eps);
            gmres_step(w, &ws, eps, phi, forcing, d, &relres);
            ok = relres < 1.0;
        }
        for (int32_t i = 0; ok && i < m; i++)
            if (!isfinite(d[i])) ok = false;
        /* (2) line search on the merit ½‖Φ‖² */
        double ref = merits[0];
        for (int i = 1; i < NEWTON_NONMONOTONE; i++) ref = fmax(ref, merits[i]);
        bool accepted = false;
        double ft = f;
        if (ok) {
            ccp_work_apply(w, d, nd);
            double t = 1.0;
            for (int k = 0; k <= NEWTON_BACKTRACKS; k++, t *= 0.5) {
                for (int32_t i = 0; i < m; i++) {
                    gt[i] = g[i] + t * d[i];
                    ut[i] = u[i] + t * nd[i];
                }
                ft = eval_phi(w, &ws, gt, ut, pt, false);
                if (!s->newton.line_search || ft <= ref - 2.0 * NEWTON_ARMIJO * t * f) {
                    accepted = isfinite(ft) || !s->newton.line_search;
                    break;
                }
            }
        }
        if (!accepted && s->newton.line_search) {
            /* steepest descent of the merit: −JᵀΦ from the Cauchy step */
            jac_apply_t(w, &ws, eps, phi, ws.t1, ws.t2, d);
            for (int32_t i = 0; i < m; i++) d[i] = -d[i];
            const double gg = ccp_dot(d, d, m);
            jac_apply(w, &ws, eps, d, ws.t1, ws.t2);
            const double jj = ccp_dot(ws.t2, ws.t2, m);
            if (gg > 0.0 && jj > 0.0 && isfinite(gg) && isfinite(jj)) {
                ccp_work_apply(w, d, nd);
                double t = gg / jj;
                for (int k = 0; k <= NEWTON_BACKTRACKS; k++, t *= 0.5) {
                    for (int32_t i = 0; i < m; i++) {
                        gt[i] = g[i] + t * d[i];
                        ut[i] = u[i] + t * nd[i];
                    }
                    ft = eval_phi(w, &ws, gt, ut, pt, false);
                    if (ft <= f - NEWTON_ARMIJO * t * gg) {
                        accepted = true;
                        break;
                    }
                }
            }
            if (!accepted) {
                snprintf(res->message, sizeof res->message,
                         "newton: line search failed at iteration %d (Newton and steepest-descent directions; merit "
                         "%.3e, Coulomb residual %.3e)",
                         (int)it, f, resid);
                it--;
                break;
            }
        }
        if (!accepted) { /* no line search and a failed linear solve */
            res->status = DVI_SOLVE_DIVERGED;
            snprintf(res->message, sizeof res->message,
                     "newton: the Newton system could not be solved at iteration %d (singular or non-finite; "
                     "settings.newton.line_search falls back to steepest descent)",
                     (int)it);
            it--;
            break;
        }
        /* (3) accept: γ ← γ + t d, u afresh */
        memcpy(g, gt, um * sizeof(double));
        fresh_velocity(w, g, u);
        f = eval_phi(w, &ws, g, u, phi, true);
        for (int i = NEWTON_NONMONOTONE - 1; i > 0; i--) merits[i] = merits[i - 1];
        merits[0] = f;
        resid = coulomb_residual(w, g, u, s->tolerance);
        ccp_history_push(w, res, resid);
        if (resid < best || !(best == best)) {
            best = resid;
            memcpy(gbest, g, um * sizeof(double));
            memcpy(ubest, u, um * sizeof(double));
        }
        const double gnorm = ccp_norm2(g, m);
        if (it == 1) gnorm_first = gnorm;
        if (ccp_diverging(gnorm, gnorm_first, scale)) {
            res->status = DVI_SOLVE_DIVERGED;
            snprintf(res->message, sizeof res->message, "newton: |gamma| = %.3g at iteration %d (diverging)", gnorm,
                     (int)it);
            break;
        }
    }
    res->iterations = it;
    if (res->status != DVI_SOLVE_CONVERGED && best < resid && isfinite(best)) {
        memcpy(g, gbest, um * sizeof(double)); /* the best iterate */
        memcpy(u, ubest, um * sizeof(double));
        resid = best;
    }
    if (res->status == DVI_SOLVE_MAX_ITERATIONS && !res->message[0])
        snprintf(res->message, sizeof res->message,
                 "newton: %d iterations spent (settings.max_iterations); Coulomb residual %.3e", (int)it, resid);
    res->target_residual = resid;
    w->u_final = u;
    return DVI_OK;
}

static dvi_status newton_solve(ccp_work* w, const ccp_solver_call* call, const dvi_solver_settings* s,
                               double* gamma, dvi_solve_result* res)
{
    (void)call; /* no state, no inner solver */
    return newton_body(w, s, gamma, res);
}

const ccp_solver_impl ccp_solver_newton = {
    .name = "newton", .solve = newton_solve, .law = DVI_LAW_COULOMB, .targets_ccp = false, /* Coulomb's law */
    .summary = "semismooth Newton on the Alart-Curnier function (Coulomb's law; dense LU or GMRES, line search)",
    .refused_kinds = 1u << DVI_BLOCK_FRICTION_ROLLING, /* no Alart-Curnier function with spin and rolling rows */
};
