/* dvicontact — projected Jacobi: the simultaneous sibling of PGS.
 *
 * Problem: the CCP of ccp.h. Algorithm: all blocks updated from the same
 * velocities u = N γ_k + r (one matrix-free product per iteration):
 *     γ_{k+1,A} = Π_{K_a}( γ_{k,A} − ω η_a u_A ),   η_a = |A| / trace(N_AA)
 * Every block update is independent, so the method parallelises without
 * colouring. It is a projected gradient method in the metric E⁻¹,
 * E = diag(η_a I) (the per-block scalar step makes the blockwise Euclidean
 * projection the projection in that metric), so it converges when
 * ω ρ(E N) < 2. The diagonal step η_a = |a|/trace(N_aa) of PGS does not
 * guarantee this: a sphere touching twelve neighbours gives ρ(E N) ≈ 13. So
 * η_a is the Gershgorin bound η_a = 1 / max_{i∈a} Σ_j |N_ij|, which gives
 * ρ(E N) ≤ 1 and convergence for every ω in (0, 2) (default 1.5; the bound
 * is loose by a factor of about 2 on stacks and packings). The row sums
 * are bounded matrix-free by (|D|ᵀ |M⁻¹| |D| 1)_i + c_i, one pass over D.
 * It converges only linearly.
 * Stopping: the common CCP residual of γ_k, computed from the same product,
 * ≤ tolerance. Divergence is not expected with this step; the guard against
 * it (‖γ‖ growing 1e10-fold over its natural scale, or a non-finite value,
 * ccp_diverging) catches overflow from extreme data.
 */
#include "ccp_work.h"

#include <math.h>
#include <stdio.h>

/* η_a = 1 / max_{i∈a} s_i with s ≥ the absolute row sums of N (see above). */
static void gershgorin_steps(const ccp_work* w, double* eta, double* s)
{
    const dvi_ccp_problem* p = w->p;
    if (w->factor_form) {
        double* t = w->bodyvec; /* t_b = Σ_{runs of b} |d|, 6 per body */
        for (int32_t b = 0; b < w->nbody; b++) {
            double* tb = t + 6 * (size_t)b;
            for (int c = 0; c < 6; c++) tb[c] = 0.0;
            for (int32_t k = w->body_ptr[b]; k < w->body_ptr[b + 1]; k++) {
                const double* d = w->brun_d + 6 * (size_t)k;
                for (int c = 0; c < 6; c++) tb[c] += fabs(d[c]);
            }
            for (int32_t k = w->inc_ptr[b]; k < w->inc_ptr[b + 1]; k++) { /* contacts given by frames */
                int32_t c = w->inc[k] >> 2;
                if ((w->inc[k] & 1) && w->fc_body[2 * (size_t)c] == b) continue; /* both sides on b: counted once */
                for (int q = 0; q < w->fc_rows[c]; q++) {
                    int32_t body[2];
                    double j[2][6];
                    int n = ccp_work_frame_columns(w, c, q, body, j);
                    for (int e = 0; e < n; e++)
                        if (body[e] == b)
                            for (int r = 0; r < 6; r++) tb[r] += fabs(j[e][r]);
                }
            }
        }
        /* a shared problem: the bodies of other processes have contacts this one
         * does not hold, so their sums are their owners' */
        if (w->sh && w->sh->exchange) w->sh->exchange(w->sh->ctx, t);
        for (int32_t i = 0; i < w->m; i++) {
            double sum = 0.0;
            for (int32_t q = w->run_ptr[i]; q < w->run_ptr[i + 1]; q++) {
                const double* d = w->run_d + 6 * (size_t)q;
                double tmp[36];
                const double* A = ccp_minv_block(p, w->run_body[q], tmp);
                const double* tb = t + 6 * (size_t)w->run_body[q];
                for (int r = 0; r < 6; r++) {
                    double row = 0.0;
                    for (int c = 0; c < 6; c++) row += fabs(A[6 * r + c]) * tb[c];
                    sum += fabs(d[r]) * row;
                }
            }
            s[i] = sum;
        }
        for (int32_t c = 0; c < w->nfc; c++)
            for (int q = 0; q < w->fc_rows[c]; q++) {
                double sum = 0.0;
                int32_t body[2];
                double j[2][6];
                int n = ccp_work_frame_columns(w, c, q, body, j);
                for (int sd = 0; sd < n; sd++) {
                    double tmp[36];
                    const double* A = ccp_minv_block(p, body[sd], tmp);
                    const double* tb = t + 6 * (size_t)body[sd];
                    for (int r = 0; r < 6; r++) {
                        double row = 0.0;
                        for (int e = 0; e < 6; e++) row += fabs(A[6 * r + e]) * tb[e];
                        sum += fabs(j[sd][r]) * row;
                    }
                }
                s[w->fc_row[c] + q] = sum;
            }
    } else {
        for (int32_t i = 0; i < w->m; i++) {
            double sum = 0.0;
            for (int32_t k = w->wt_p[i]; k < w->wt_p[i + 1]; k++) sum += fabs(w->wt_x[k]);
            s[i] = sum;
        }
    }
    if (p->compliance)
        for (int32_t i = 0; i < w->m; i++) s[i] += p->compliance[i];
    for (int32_t b = 0; b < w->nblocks; b++) {
        double mx = 0.0;
        for (int32_t i = w->block_row[b]; i < w->block_row[b + 1]; i++) mx = s[i] > mx ? s[i] : mx;
        eta[b] = mx > 0.0 ? 1.0 / mx : 0.0;
    }
}

static dvi_status jacobi_solve(ccp_work* w, const ccp_solver_call* call, const dvi_solver_settings* s,
                               double* gamma, dvi_solve_result* res)
{
    (void)call; /* no state, no inner solver */
    const int32_t m = w->m;
    const double* r = w->p->r;
    double* eta = ccp_work_scratch(w, ((size_t)w->nblocks + 1) * sizeof(double));
    if (!eta) {
        snprintf(res->message, sizeof res->message, "Jacobi: out of memory (%d blocks)", w->nblocks);
        return DVI_ERR_NOMEM;
    }
    double* u = w->vec[0];
    gershgorin_steps(w, eta, u);
    double* g = gamma;
    const double omega = s->jacobi.omega;
    ccp_work_project(w, g);
    const double scale = ccp_impulse_scale(w, eta);
    double gnorm_first = 0.0, rk = INFINITY;
    int32_t it;
    res->status = DVI_SOLVE_MAX_ITERATIONS;
    for (it = 0;; it++) {
        ccp_work_apply(w, g, u);
        for (int32_t i = 0; i < m; i++) u[i] += r[i];
        rk = ccp_work_residual_checked(w, g, u, s->tolerance);
        if (it > 0) ccp_history_push(w, res, rk);
        if (rk <= s->tolerance) {
            res->status = DVI_SOLVE_CONVERGED;
            break;
        }
        double gnorm = ccp_work_norm2(w, g);
        if (it == 1) gnorm_first = gnorm;
        if (!isfinite(rk) || ccp_diverging(gnorm, gnorm_first, scale)) {
            res->status = DVI_SOLVE_DIVERGED;
            snprintf(res->message, sizeof res->message,
                     "Jacobi: |gamma| = %.3g at iteration %d (diverging; lower jacobi.omega)", gnorm, it);
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
            if (B[b].kind != DVI_BLOCK_BILATERAL) ccp_cone_project(&B[b], g + q0);
        }
    }
    res->iterations = it;
    res->target_residual = rk;
    /* per iteration (ccp_work.h): a product, u += r, the residual pass, ‖γ‖, the update */
    res->bytes_per_iteration = it > 0 ? ccp_work_product_bytes(w) + 24.0 * m + ccp_work_pass_bytes(w, 2, 0) + 8.0 * m +
                                            ccp_work_pass_bytes(w, 2, 1) + 8.0 * w->nblocks
                                      : 0.0;
    return DVI_OK;
}

const ccp_solver_impl ccp_solver_jacobi = {
    .name = "jacobi", .solve = jacobi_solve, .law = DVI_LAW_CCP, .targets_ccp = true,
    .summary = "projected Jacobi: simultaneous block updates with relaxation (parallel sibling of PGS)",
    .shared = true,
};
