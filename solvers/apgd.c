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
 * Stopping: the common CCP residual (ccp.h) of γ⁺ ≤ tolerance, confirmed on a
 * fresh product. Cost: one matrix-free product per iteration (plus one per
 * backtrack), O(rows) vector work.
 */
#include "ccp_work.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define REFRESH 50
#define MAX_BACKTRACK 60

static void step(const dvi_ccp_work* w, const double* y, const double* grad, double t, double* out)
{
    for (int32_t i = 0; i < w->m; i++) out[i] = y[i] - t * grad[i];
    dvi_work_project(w, out);
}

static double residual_of(const dvi_ccp_work* w, const double* g, const double* Ng, double* u)
{
    const double* r = w->p->r;
    for (int32_t i = 0; i < w->m; i++) u[i] = Ng[i] + r[i];
    return dvi_work_residual(w, g, u);
}

static dvi_status apgd_solve(dvi_ccp_work* w, const dvi_solver_settings* s, double* gamma, dvi_solve_result* res)
{
    const int32_t m = w->m;
    const double* r = w->p->r;
    double* g = w->vec[0];     /* γ_k */
    double* gp = w->vec[1];    /* γ_{k+1} */
    double* y = w->vec[2];
    double* Ny = w->vec[3];
    double* Ng = w->vec[4];
    double* Ngp = w->vec[5];
    double* d = w->vec[6];
    double* Nd = w->vec[7];
    double* best = w->vec[8];  /* also used as u scratch before the loop */
    double* grad = w->vec[9];

    /* (1)–(4) γ_0 (projected guess), y_0 = γ_0, θ_0 = 1 */
    memcpy(g, gamma, (size_t)m * sizeof(double));
    dvi_work_project(w, g);
    dvi_work_apply(w, g, Ng);
    double best_res = residual_of(w, g, Ng, grad);
    memcpy(best, g, (size_t)m * sizeof(double));
    res->iterations = 0;
    if (best_res <= s->tolerance) {
        memcpy(gamma, g, (size_t)m * sizeof(double));
        res->status = DVI_SOLVE_CONVERGED;
        res->target_residual = best_res;
        return DVI_OK;
    }

    /* (5)–(6) L_0 = ‖N(γ_0 − γ̃)‖ / ‖γ_0 − γ̃‖ with γ̃ = γ_0 − 1: a lower
     * estimate of the largest eigenvalue; backtracking corrects it. */
    for (int32_t i = 0; i < m; i++) d[i] = 1.0;
    dvi_work_apply(w, d, Nd);
    double L = dvi_norm2(Nd, m) / sqrt((double)m);
    if (!(L > 0.0) || !isfinite(L)) L = 1.0;
    double t = 1.0 / L;
    double theta = 1.0;
    memcpy(y, g, (size_t)m * sizeof(double));
    memcpy(Ny, Ng, (size_t)m * sizeof(double));

    res->status = DVI_SOLVE_MAX_ITERATIONS;
    int32_t k;
    for (k = 0; k < s->max_iterations; k++) {
        if (k > 0 && k % REFRESH == 0) { /* refresh the linear recurrences */
            dvi_work_apply(w, g, Ng);
            dvi_work_apply(w, y, Ny);
        }
        /* (8) gradient at y: N y + r */
        for (int32_t i = 0; i < m; i++) grad[i] = Ny[i] + r[i];
        /* (9) γ_{k+1} = Π(y − t ∇f(y)) */
        step(w, y, grad, t, gp);
        for (int32_t i = 0; i < m; i++) d[i] = gp[i] - y[i];
        dvi_work_apply(w, d, Nd);
        /* (10)–(13) backtrack until ½dᵀNd ≤ L/2 ‖d‖² */
        for (int bt = 0; bt < MAX_BACKTRACK; bt++) {
            double dNd = dvi_dot(d, Nd, m), dd = dvi_dot(d, d, m);
            if (dNd <= L * dd * (1.0 + 1e-12)) break;
            L *= s->apgd.grow;
            t = 1.0 / L;
            step(w, y, grad, t, gp);
            for (int32_t i = 0; i < m; i++) d[i] = gp[i] - y[i];
            dvi_work_apply(w, d, Nd);
        }
        for (int32_t i = 0; i < m; i++) Ngp[i] = Ny[i] + Nd[i];
        /* (14)–(15) θ_{k+1}, β_{k+1} */
        double theta_n = 0.5 * (-theta * theta + theta * sqrt(theta * theta + 4.0));
        double beta = theta * (1.0 - theta) / (theta * theta + theta_n);

        /* (17)–(22) residual of γ_{k+1}; keep the best iterate */
        double rk = residual_of(w, gp, Ngp, Nd /* reused as u */);
        if (!isfinite(rk)) {
            res->status = DVI_SOLVE_DIVERGED;
            snprintf(res->message, sizeof res->message, "APGD: non-finite residual at iteration %d", k + 1);
            k++;
            break;
        }
        if (rk <= s->tolerance) { /* confirm on a fresh product */
            dvi_work_apply(w, gp, Ngp);
            rk = residual_of(w, gp, Ngp, Nd);
        }
        dvi_history_push(res, rk);
        if (rk < best_res) {
            best_res = rk;
            memcpy(best, gp, (size_t)m * sizeof(double));
        }
        if (rk <= s->tolerance) {
            res->status = DVI_SOLVE_CONVERGED;
            k++;
            break;
        }
        /* (23)–(26) adaptive restart when ∇f(y)ᵀ(γ_{k+1} − γ_k) > 0 */
        double gdot = 0.0;
        for (int32_t i = 0; i < m; i++) gdot += grad[i] * (gp[i] - g[i]);
        if (s->apgd.restart && gdot > 0.0) {
            memcpy(y, gp, (size_t)m * sizeof(double));
            memcpy(Ny, Ngp, (size_t)m * sizeof(double));
            theta_n = 1.0;
        } else { /* (16) y_{k+1} = γ_{k+1} + β (γ_{k+1} − γ_k) */
            for (int32_t i = 0; i < m; i++) {
                y[i] = gp[i] + beta * (gp[i] - g[i]);
                Ny[i] = Ngp[i] + beta * (Ngp[i] - Ng[i]);
            }
        }
        /* (27)–(28) */
        L *= s->apgd.shrink;
        t = 1.0 / L;
        theta = theta_n;
        double* tmp = g; g = gp; gp = tmp;
        tmp = Ng; Ng = Ngp; Ngp = tmp;
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
