/* dvicontact — projected Jacobi: the simultaneous sibling of PGS.
 *
 * Problem: the CCP of ccp.h. Algorithm: all blocks updated from the same
 * velocities u = N γ_k + r (one matrix-free product per iteration):
 *     γ_{k+1,A} = Π_{K_a}( γ_{k,A} − ω η_a u_A ),   η_a = |A| / trace(N_AA)
 * (Tasora–Anitescu per-block step). Every block update is independent, so the
 * method parallelises without colouring; the price is a relaxation ω small
 * enough that ω η N has spectral radius below 2 (default 0.3; a body in
 * contact with many others needs smaller ω). It is a scaled projected
 * gradient method, so it converges only linearly.
 * Stopping: the common CCP residual of γ_k, computed from the same product,
 * ≤ tolerance. A residual growing 1e12-fold is reported as divergence.
 */
#include "ccp_work.h"

#include <math.h>
#include <stdio.h>

static dvi_status jacobi_solve(dvi_ccp_work* w, const dvi_solver_settings* s, double* gamma, dvi_solve_result* res)
{
    const int32_t m = w->m;
    const double* r = w->p->r;
    double* eta = dvi_work_scratch(w, ((size_t)w->nblocks + 1) * sizeof(double));
    if (!eta) {
        snprintf(res->message, sizeof res->message, "Jacobi: out of memory (%d blocks)", w->nblocks);
        return DVI_ERR_NOMEM;
    }
    dvi_block_steps(w, eta);
    double* u = w->vec[0];
    double* g = gamma;
    const double omega = s->jacobi.omega;
    dvi_work_project(w, g);
    double r0 = -1.0, rk = INFINITY;
    int32_t it;
    res->status = DVI_SOLVE_MAX_ITERATIONS;
    for (it = 0;; it++) {
        dvi_work_apply(w, g, u);
        for (int32_t i = 0; i < m; i++) u[i] += r[i];
        rk = dvi_work_residual(w, g, u);
        if (r0 < 0.0) r0 = rk;
        if (it > 0) dvi_history_push(res, rk);
        if (rk <= s->tolerance) {
            res->status = DVI_SOLVE_CONVERGED;
            break;
        }
        if (!isfinite(rk) || rk > 1e12 * (r0 > 1.0 ? r0 : 1.0)) {
            res->status = DVI_SOLVE_DIVERGED;
            snprintf(res->message, sizeof res->message,
                     "Jacobi: residual %.3g at iteration %d (diverging; lower jacobi.omega)", rk, it);
            break;
        }
        if (it == s->max_iterations) break;
        const dvi_ccp_block* B = w->p->blocks;
#ifdef _OPENMP
#pragma omp parallel for schedule(static) num_threads(w->threads) if (w->threads > 1 && m > 4096)
#endif
        for (int32_t b = 0; b < w->nblocks; b++) {
            int32_t q0 = w->block_row[b], k = w->block_row[b + 1] - q0;
            double step = omega * eta[b];
            for (int32_t a = 0; a < k; a++) g[q0 + a] -= step * u[q0 + a];
            if (B[b].kind != DVI_BLOCK_BILATERAL) dvi_cone_project(&B[b], g + q0);
        }
    }
    res->iterations = it;
    res->target_residual = rk;
    return DVI_OK;
}

const dvi_solver_impl dvi_solver_jacobi = {
    "jacobi",
    "projected Jacobi: simultaneous block updates with relaxation (parallel sibling of PGS)",
    true,
    jacobi_solve,
};
