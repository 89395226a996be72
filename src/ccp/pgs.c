/* dvicontact — PGS / PSOR: block projected Gauss–Seidel with over-relaxation.
 *
 * Problem: the CCP of ccp.h. Algorithm: sweep the blocks in order; for block
 * a with rows A, compute its current velocity u_A = (N γ + r)_A with the
 * latest values of all other blocks, then
 *     γ_A ← Π_{K_a}( γ_A − ω η_a u_A ),   η_a = 1 / λ̄(N_AA),
 * with λ̄ the Gershgorin bound of the block's largest eigenvalue. This is the
 * per-block step of Tasora and Anitescu ("A matrix-free cone complementarity
 * approach for solving large-scale, nonsmooth, rigid body dynamics", CMAME
 * 200, 2011), |A|/trace(N_AA), wherever the block is isotropic; where it is
 * not (a box corner: its normal row is stiffer than its tangent rows), their
 * step exceeds 2/λmax, the block update overshoots and PGS stalls — seen on a
 * 10-box stack as a residual stuck at 4e-4. With the bound every block
 * update decreases the objective for ω in (0, 2). For one-row blocks this is
 * exact Gauss–Seidel (SOR for ω ≠ 1). A visit makes `pgs.block_iterations`
 * such steps on the block's own k×k problem (the other blocks frozen), which
 * approaches the exact block solve of nonsmooth Gauss–Seidel; with 1 it is
 * the classic single step. In the factor form the body velocities v = M⁻¹Dγ are kept up to
 * date, so a block costs O(entries of its columns): u_A = D_Aᵀ v + c∘γ_A + r_A,
 * v += M⁻¹D_A Δγ_A. In the Delassus form u_A is read from the rows of W.
 * Option `symmetric` runs a backward sweep after each forward sweep.
 * Stopping: the common CCP residual after each sweep (one gather), ≤ tolerance,
 * confirmed on freshly recomputed velocities. v is recomputed from γ every
 * 25 sweeps to remove round-off drift (ccp_gs_iterate, shared with nsgs). Divergence: ‖γ‖ growing 1e10-fold
 * over its natural scale (ccp_diverging), or a non-finite value.
 */
#include "ccp_work.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* One visit of block b: a few projected-gradient steps on the block's own
 * problem  min ½ xᵀ N_bb x + cᵀx over K_b,  c = u_b − N_bb γ_b  (the other
 * blocks frozen), step η_b, then relaxation by ω and the update of v. */
static void update_block(const ccp_work* w, const double* eta, const double* Nbb, int inner, double omega,
                         double* g, double* v, int32_t b)
{
    int32_t r0 = w->block_row[b], k = w->block_row[b + 1] - r0;
    if (eta[b] <= 0.0) return; /* block not coupled to any body: nothing to do */
    const dvi_ccp_block* B = &w->p->blocks[b];
    const double* A = Nbb + 36 * (size_t)b;
    double ua[6], c[6], x[6], y[6];
    ccp_work_block_velocity(w, g, v, b, ua);
    for (int32_t a = 0; a < k; a++) {
        double s = 0.0;
        for (int32_t q = 0; q < k; q++) s += A[6 * a + q] * g[r0 + q];
        c[a] = ua[a] - s;
        x[a] = g[r0 + a];
    }
    for (int it = 0; it < inner; it++) {
        double change = 0.0, size = 0.0;
        for (int32_t a = 0; a < k; a++) {
            double s = c[a];
            for (int32_t q = 0; q < k; q++) s += A[6 * a + q] * x[q];
            y[a] = x[a] - eta[b] * s;
        }
        ccp_cone_project(B, y);
        for (int32_t a = 0; a < k; a++) {
            change = fmax(change, fabs(y[a] - x[a]));
            size = fmax(size, fabs(y[a]));
            x[a] = y[a];
        }
        if (change <= 1e-14 * size) break;
    }
    if (omega != 1.0) {
        for (int32_t a = 0; a < k; a++) x[a] = g[r0 + a] + omega * (x[a] - g[r0 + a]);
        ccp_cone_project(B, x);
    }
    ccp_work_set_block(w, b, x, g, v);
}

/* Memory traffic of one sweep (ccp_work.h): each block visit reads its
 * layout, step and k×k diagonal block, γ, r (and c), gathers u_A from its
 * columns and, in the factor form, updates v through M⁻¹D of its runs; then
 * the full velocity, the residual and ‖γ‖. */
typedef struct pgs_state {
    const double* eta; /* [nblocks] steps */
    const double* Nbb; /* [36 nblocks] the diagonal blocks */
    int inner;
    double omega;
    bool symmetric;
} pgs_state;

/* One sweep (ccp_gs_sweep_fn): the blocks in order, then back with `symmetric`. */
static void sweep(const ccp_work* w, void* ctx, double* g, double* v)
{
    const pgs_state* st = ctx;
    for (int32_t b = 0; b < w->nblocks; b++) update_block(w, st->eta, st->Nbb, st->inner, st->omega, g, v, b);
    if (st->symmetric)
        for (int32_t b = w->nblocks - 1; b >= 0; b--) update_block(w, st->eta, st->Nbb, st->inner, st->omega, g, v, b);
}

static double sweep_bytes(const ccp_work* w, const dvi_solver_settings* s)
{
    double visits = s->pgs.symmetric ? 2.0 : 1.0, blocks = 0.0;
    for (int32_t b = 0; b < w->nblocks; b++) {
        double k = w->block_row[b + 1] - w->block_row[b];
        blocks += 4.0 + (double)sizeof(dvi_ccp_block) + 8.0 + 8.0 * k * k;
    }
    return visits * (blocks + ccp_gs_visit_bytes(w)) + ccp_gs_check_bytes(w);
}

static dvi_status pgs_solve(ccp_work* w, const ccp_solver_call* call, const dvi_solver_settings* s,
                            double* gamma, dvi_solve_result* res)
{
    (void)call; /* no state, no inner solver */
    double* eta = ccp_work_scratch(w, 37 * ((size_t)w->nblocks + 1) * sizeof(double));
    if (!eta) {
        snprintf(res->message, sizeof res->message, "PGS: out of memory (%d blocks)", w->nblocks);
        return DVI_ERR_NOMEM;
    }
    double* Nbb = eta + w->nblocks + 1; /* the diagonal blocks, 6×6 slots, compliance included */
    ccp_block_steps(w, eta);
    for (int32_t b = 0; b < w->nblocks; b++) {
        int32_t r0 = w->block_row[b], k = w->block_row[b + 1] - r0;
        double* A = Nbb + 36 * (size_t)b;
        for (int32_t a = 0; a < k; a++)
            for (int32_t q = 0; q < k; q++)
                A[6 * a + q] = a == q ? w->diag[r0 + a] : ccp_work_block_entry(w, r0 + a, r0 + q);
    }
    pgs_state st = {eta, Nbb, s->pgs.block_iterations, s->pgs.omega, s->pgs.symmetric};
    ccp_gs_iterate(w, s, eta, sweep, &st, false, "PGS", "pgs.omega", gamma, res);
    res->bytes_per_iteration = res->iterations > 0 ? sweep_bytes(w, s) : 0.0;
    return DVI_OK;
}

const ccp_solver_impl ccp_solver_pgs = {
    .name = "pgs", .solve = pgs_solve, .law = DVI_LAW_CCP, .targets_ccp = true,
    .summary = "block projected Gauss-Seidel / SOR with the Tasora-Anitescu per-block step",
    .sweeps_in_order = true, /* block after block */
    .nests = true, /* desaxce's inner solver */
};
