/* dvicontact — APGD: accelerated projected gradient descent.
 *
 * Problem: min f(γ) = ½ γᵀNγ + rᵀγ over γ ∈ K (the CCP's convex QP).
 * Algorithm: Nesterov's accelerated projected gradient with a backtracked
 * Lipschitz estimate L, adaptive (gradient) restart and return of the best
 * iterate — Mazhar, Heyn, Negrut, Tasora, "Using Nesterov's method to
 * accelerate multibody dynamics with friction and contact", ACM TOG 34(3),
 * 2015, Algorithm 2. The numbered comments follow that algorithm.
 *
 * Two details make it exact and cheap:
 *  - the sufficient-decrease test f(γ⁺) ≤ f(y) + ∇f(y)ᵀd + L/2 ‖d‖², with
 *    d = γ⁺ − y and the FULL gradient ∇f(y) = N y + r, is algebraically
 *    ½ dᵀN d ≤ L/2 ‖d‖²: it is evaluated in that form (no cancellation);
 *  - N is linear, so N γ⁺ = N y + N d and N y⁺ = (1+β) N γ⁺ − β N γ: one
 *    product N d per trial step, none for the gradient. The recurrences are
 *    refreshed with true products every REFRESH iterations and before the
 *    stopping test is accepted.
 * Preconditioning (settings.apgd.precondition): a positive scale per block
 * (see block_scaling) — an exact change of variables, because each cone is
 * invariant under positive scaling.
 * Stopping: the common CCP residual (ccp.h) of γ⁺ ≤ tolerance, confirmed on a
 * fresh product. Cost: one matrix-free product per iteration (plus one per
 * backtrack) and four fused passes over the vectors: the loop is bound by
 * memory traffic at large sizes, so the passes that can share a sweep do.
 * Every pass runs on the work's threads; its sums are chunked (ccp_work.h),
 * so the iterates have the same bits for any thread count.
 */
#include "ccp_work.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define REFRESH 50
#define MAX_BACKTRACK 60

/* (9) γ⁺ = Π(y − t (N y + r)) and d = γ⁺ − y, block by block in one pass;
 * returns ‖d‖² (chunked, so the bits do not depend on the threads). */
static double gradient_step(const dvi_ccp_work* w, const double* y, const double* Ny, const double* P, double t,
                            double* gp, double* d)
{
    const dvi_ccp_block* B = w->p->blocks;
    const int32_t* br = w->block_row;
    const double* r = w->p->r;
    const int32_t nb = w->nblocks, nc = dvi_block_chunks(w);
    double* part = w->part;
    const int nt = dvi_work_nt(w, w->m);
#ifdef _OPENMP
#pragma omp parallel for schedule(static) num_threads(nt) if (nt > 1)
#endif
    for (int32_t c = 0; c < nc; c++) {
        int32_t b1 = dvi_chunk_end(c, DVI_CHUNK_BLOCKS, nb);
        double dd = 0.0;
        for (int32_t b = c * DVI_CHUNK_BLOCKS; b < b1; b++) {
            int32_t r0 = br[b], k = br[b + 1] - r0;
            double pb = P ? P[r0] : 1.0, tb = t * pb, ib = 1.0 / pb;
            double x[6];
            for (int32_t a = 0; a < k; a++) x[a] = y[r0 + a] - tb * (Ny[r0 + a] + r[r0 + a]);
            if (B[b].kind != DVI_BLOCK_BILATERAL) dvi_cone_project(&B[b], x);
            for (int32_t a = 0; a < k; a++) {
                double da = x[a] - y[r0 + a];
                gp[r0 + a] = x[a];
                d[r0 + a] = da;
                dd += da * da * ib;
            }
        }
        part[DVI_PART_SLOTS * (size_t)c] = dd;
    }
    return dvi_part_sum(part, nc, 0);
}

/* Block-diagonal (Jacobi) preconditioner: P_b = k_b / Σ_{i∈b} N_ii, one
 * positive number per block. Scaling a block by a positive number maps its
 * cone onto itself, so running APGD on x = P^{-1/2} γ (operator P^{1/2} N
 * P^{1/2}) is an exact change of variables; written back in γ it is the
 * gradient step γ⁺ = Π(y − t P ∇f(y)) with the metric ‖d‖²_{P⁻¹}. */
static void block_scaling(const dvi_ccp_work* w, double* P)
{
    double sum = 0.0;
    int32_t pos = 0;
    for (int32_t i = 0; i < w->m; i++)
        if (w->diag[i] > 0.0 && isfinite(w->diag[i])) {
            sum += w->diag[i];
            pos++;
        }
    double fallback = pos > 0 ? pos / sum : 1.0; /* rows with no diagonal: the mean */
    for (int32_t b = 0; b < w->nblocks; b++) {
        int32_t r0 = w->block_row[b], k = w->block_row[b + 1] - r0;
        if (w->p->blocks[b].kind == DVI_BLOCK_BILATERAL) { /* rows are independent: one scale each */
            for (int32_t a = 0; a < k; a++) {
                double di = w->diag[r0 + a];
                P[r0 + a] = di > 0.0 && isfinite(di) ? 1.0 / di : fallback;
            }
            continue;
        }
        double s = 0.0;
        for (int32_t a = 0; a < k; a++) s += w->diag[r0 + a];
        double pb = s > 0.0 && isfinite(s) ? k / s : fallback;
        for (int32_t a = 0; a < k; a++) P[r0 + a] = pb;
    }
}

/* (17) N γ⁺ = N y + N d, and in the same pass the residual of γ⁺ (the sums
 * and chunks of dvi_work_residual_n, so the same bits) and the restart
 * product ∇f(y)ᵀ(γ⁺ − γ). */
static double advance(const dvi_ccp_work* w, const double* g, const double* gp, const double* Ny, const double* Nd,
                      double* Ngp, double rnorm, double* gdot)
{
    const dvi_ccp_block* B = w->p->blocks;
    const int32_t* br = w->block_row;
    const double* r = w->p->r;
    const int32_t nb = w->nblocks, nc = dvi_block_chunks(w);
    double* part = w->part;
    const int nt = dvi_work_nt(w, w->m);
#ifdef _OPENMP
#pragma omp parallel for schedule(static) num_threads(nt) if (nt > 1)
#endif
    for (int32_t c = 0; c < nc; c++) {
        int32_t b1 = dvi_chunk_end(c, DVI_CHUNK_BLOCKS, nb);
        double e2 = 0.0, g2 = 0.0, u2 = 0.0, gd = 0.0;
        for (int32_t b = c * DVI_CHUNK_BLOCKS; b < b1; b++) {
            int32_t r0 = br[b], k = br[b + 1] - r0;
            double u[6];
            for (int32_t a = 0; a < k; a++) {
                int32_t i = r0 + a;
                double ngp = Ny[i] + Nd[i];
                Ngp[i] = ngp;
                u[a] = ngp + r[i];
                g2 += gp[i] * gp[i];
                u2 += u[a] * u[a];
                gd += (Ny[i] + r[i]) * (gp[i] - g[i]);
            }
            e2 += dvi_natural_map2(&B[b], gp + r0, u, k);
        }
        double* q = part + DVI_PART_SLOTS * (size_t)c;
        q[0] = e2;
        q[1] = g2;
        q[2] = u2;
        q[3] = gd;
    }
    *gdot = dvi_part_sum(part, nc, 3);
    double e2 = dvi_part_sum(part, nc, 0), g2 = dvi_part_sum(part, nc, 1), u2 = dvi_part_sum(part, nc, 2);
    return sqrt(e2) / dvi_residual_scale(rnorm, sqrt(g2), sqrt(u2));
}

/* y = a + β (a − b) and Ny likewise, in one parallel pass. */
static void extrapolate(const dvi_ccp_work* w, const double* gp, const double* g, const double* Ngp, const double* Ng,
                        double beta, double* y, double* Ny)
{
    const int32_t m = w->m;
    const int nt = dvi_work_nt(w, m);
#ifdef _OPENMP
#pragma omp parallel for schedule(static) num_threads(nt) if (nt > 1)
#endif
    for (int32_t i = 0; i < m; i++) {
        y[i] = gp[i] + beta * (gp[i] - g[i]);
        Ny[i] = Ngp[i] + beta * (Ngp[i] - Ng[i]);
    }
}

static dvi_status apgd_solve(dvi_ccp_work* w, const dvi_solver_settings* s, double* gamma, dvi_solve_result* res)
{
    const int32_t m = w->m;
    const double rnorm = dvi_norm2(w->p->r, m);
    /* Three buffers rotate between γ_k, γ_{k+1} and the best iterate, so the
     * best is kept without copying. */
    double* buf[3] = {w->vec[0], w->vec[1], w->vec[2]};
    double* y = w->vec[3];
    double* Ny = w->vec[4];
    double* Ng = w->vec[5];
    double* Ngp = w->vec[6];
    double* d = w->vec[7];
    double* Nd = w->vec[8];
    double* P = s->apgd.precondition ? w->vec[9] : NULL;
    if (P) block_scaling(w, P);

    /* (1)–(4) γ_0 (projected guess), y_0 = γ_0, θ_0 = 1 */
    double* g = buf[0];
    memcpy(g, gamma, (size_t)m * sizeof(double));
    dvi_work_project(w, g);
    dvi_work_apply(w, g, Ng);
    double* best = g;
    double best_res = dvi_work_residual_n(w, g, Ng, rnorm);
    res->iterations = 0;
    res->status = DVI_SOLVE_MAX_ITERATIONS;

    /* (5)–(6) L_0 = ‖N(γ_0 − γ̃)‖ / ‖γ_0 − γ̃‖ with γ̃ = γ_0 − 1: a lower
     * estimate of the largest eigenvalue; backtracking corrects it. */
    for (int32_t i = 0; i < m; i++) d[i] = P ? sqrt(P[i]) : 1.0; /* P^{1/2} 1 */
    dvi_work_apply(w, d, Nd);
    if (P)
        for (int32_t i = 0; i < m; i++) Nd[i] *= sqrt(P[i]);
    double L = dvi_norm2(Nd, m) / sqrt((double)m);
    if (!(L > 0.0) || !isfinite(L)) L = 1.0;
    double theta = 1.0;
    memcpy(y, g, (size_t)m * sizeof(double));
    memcpy(Ny, Ng, (size_t)m * sizeof(double));

    int32_t k = 0;
    if (best_res <= s->tolerance) res->status = DVI_SOLVE_CONVERGED;
    for (; k < s->max_iterations && res->status != DVI_SOLVE_CONVERGED; k++) {
        if (k > 0 && k % REFRESH == 0) { /* refresh the linear recurrences */
            dvi_work_apply(w, g, Ng);
            dvi_work_apply(w, y, Ny);
        }
        double* gp = buf[0] != g && buf[0] != best ? buf[0] : buf[1] != g && buf[1] != best ? buf[1] : buf[2];
        /* (8)–(9) γ_{k+1} = Π(y − t ∇f(y)), ∇f(y) = N y + r */
        double t = 1.0 / L;
        double dd = gradient_step(w, y, Ny, P, t, gp, d);
        dvi_work_apply(w, d, Nd);
        /* (10)–(13) backtrack until ½dᵀNd ≤ L/2 ‖d‖² */
        for (int bt = 0; bt < MAX_BACKTRACK && dvi_work_dot(w, d, Nd) > L * dd * (1.0 + 1e-12); bt++) {
            L *= s->apgd.grow;
            t = 1.0 / L;
            dd = gradient_step(w, y, Ny, P, t, gp, d);
            dvi_work_apply(w, d, Nd);
        }
        /* (14)–(15) θ_{k+1}, β_{k+1} */
        double theta_n = 0.5 * (-theta * theta + theta * sqrt(theta * theta + 4.0));
        double beta = theta * (1.0 - theta) / (theta * theta + theta_n);

        /* (17)–(22) N γ_{k+1}, its residual, the best iterate */
        double gdot;
        double rk = advance(w, g, gp, Ny, Nd, Ngp, rnorm, &gdot);
        if (!isfinite(rk)) {
            res->status = DVI_SOLVE_DIVERGED;
            snprintf(res->message, sizeof res->message, "APGD: non-finite residual at iteration %d", k + 1);
            k++;
            break;
        }
        if (rk <= s->tolerance) { /* confirm on a fresh product */
            dvi_work_apply(w, gp, Ngp);
            rk = dvi_work_residual_n(w, gp, Ngp, rnorm);
        }
        dvi_history_push(res, rk);
        if (rk < best_res) {
            best_res = rk;
            best = gp;
        }
        if (rk <= s->tolerance) res->status = DVI_SOLVE_CONVERGED;
        /* (23)–(26) adaptive restart when ∇f(y)ᵀ(γ_{k+1} − γ_k) > 0 */
        if (s->apgd.restart && gdot > 0.0) {
            memcpy(y, gp, (size_t)m * sizeof(double));
            memcpy(Ny, Ngp, (size_t)m * sizeof(double));
            theta_n = 1.0;
        } else { /* (16) y_{k+1} = γ_{k+1} + β (γ_{k+1} − γ_k) */
            extrapolate(w, gp, g, Ngp, Ng, beta, y, Ny);
        }
        /* (27)–(28) */
        L *= s->apgd.shrink;
        theta = theta_n;
        g = gp;
        double* tmp = Ng;
        Ng = Ngp;
        Ngp = tmp;
    }
    res->iterations = k;
    res->target_residual = best_res;
    memcpy(gamma, best, (size_t)m * sizeof(double)); /* (29)–(33) return the best iterate */
    return DVI_OK;
}

const dvi_solver_impl dvi_solver_apgd = {
    "apgd",
    "Nesterov-accelerated projected gradient with adaptive step and restart (Mazhar et al. 2015)",
    true,
    apgd_solve,
};
