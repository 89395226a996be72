/* dvicontact — NSGS: nonsmooth Gauss–Seidel on Coulomb's law.
 *
 * Problem: Coulomb's law in De Saxcé's form (ccp.h, DVI_LAW_COULOMB): on each
 * friction block γ ∈ K_μ, ũ = u + μ‖u_t‖ e_n ∈ K*_μ, ⟨γ, ũ⟩ = 0, with
 * u = N γ + r; bilateral and frictionless rows as in the CCP. Not the CCP:
 * a sliding contact keeps u_n = 0 instead of separating at μ‖u_t‖.
 *
 * Algorithm (Jourdan, Alart & Jean 1998; the fc3d_nsgs of Siconos, Acary &
 * Brogliato 2008): sweep the blocks in order; each block is solved exactly
 * with the other blocks frozen at their latest values, then relaxed by
 * ω = settings.nsgs.omega:
 *   bilateral     γ_i ← γ_i − ω u_i / N_ii                      (Gauss–Seidel / SOR)
 *   frictionless  γ_i ← max(0, γ_i − ω u_i / N_ii)               (projected SOR)
 *   friction      γ_a ← the exact solve of the block's 3×3 Coulomb problem
 *                 with W = N_aa and q = u_a − N_aa γ_a (src/ccp/coulomb_local.c:
 *                 take-off, stick, slide on the cone's surface); with ω ≠ 1,
 *                 γ_a + ω(γ_a* − γ_a), projected back onto the cone.
 * FRICTION_ROLLING blocks are refused (DVI_ERR_INVALID_ARG, naming the first):
 * their local problem has six rows and three coupled cones, for which no
 * exact local solve is implemented; the "desaxce" solver takes them.
 * In the factor form the body velocities v = M⁻¹Dγ are kept up to date, so a
 * block costs O(entries of its columns) (contacts given by frames through
 * dvi_work_frame_velocity / dvi_work_frame_update), and v is recomputed from
 * γ every REFRESH sweeps; in the Delassus form u_a is read from the rows of
 * W. Each N_aa (compliance included) and its pseudo-inverse are formed once
 * per solve in the work's scratch; a sweep allocates nothing.
 * Stopping: the Coulomb residual (metrics.residual_coulomb) after each sweep,
 * one gather; a value within the tolerance is confirmed on velocities
 * recomputed from γ. Divergence: ‖γ‖ growing 1e10-fold over its natural
 * scale (dvi_diverging), or a non-finite value. Serial and deterministic:
 * the sweep order is the block order; settings.threads only parallelises
 * the full products between sweeps.
 * A block whose local solve finds no answer keeps its impulse for that
 * visit; the count and the last such block go into the message when the
 * solve does not converge.
 */
#include "ccp_work.h"
#include "coulomb_local.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define REFRESH 25

typedef struct nsgs_state {
    const double* eta;           /* [nblocks] Gershgorin steps (0: a block coupled to nothing) */
    const dvi_coulomb_local* loc; /* [nblocks] N_aa of the friction blocks */
    int local_iterations;
    double local_tolerance, omega;
    int32_t failures, last_failure;
} nsgs_state;

/* One visit of block b. */
static void visit(const dvi_ccp_work* w, nsgs_state* st, double* g, double* v, int32_t b)
{
    if (st->eta[b] <= 0.0) return; /* nothing moves it: nothing to do */
    const int32_t r0 = w->block_row[b];
    const dvi_ccp_block* B = &w->p->blocks[b];
    const double omega = st->omega;
    double ua[6], x[6];
    dvi_work_block_velocity(w, g, v, b, ua);
    switch (B->kind) {
    case DVI_BLOCK_BILATERAL:
        x[0] = g[r0] - omega * ua[0] / w->diag[r0];
        break;
    case DVI_BLOCK_FRICTIONLESS:
        x[0] = g[r0] - omega * ua[0] / w->diag[r0];
        if (!(x[0] > 0.0)) x[0] = 0.0;
        break;
    case DVI_BLOCK_FRICTION: {
        const dvi_coulomb_local* L = &st->loc[b];
        const double* ga = g + r0;
        double q[3];
        for (int i = 0; i < 3; i++) {
            q[i] = ua[i] - (L->W[3 * i] * ga[0] + L->W[3 * i + 1] * ga[1] + L->W[3 * i + 2] * ga[2]);
            x[i] = ga[i];
        }
        if (dvi_coulomb_local_solve(L, q, B->mu, st->local_iterations, st->local_tolerance, x) == DVI_LOCAL_FAILED) {
            st->failures++;
            st->last_failure = b;
            return;
        }
        if (omega != 1.0) {
            for (int i = 0; i < 3; i++) x[i] = ga[i] + omega * (x[i] - ga[i]);
            dvi_project_friction(B->mu, x);
        }
        break;
    }
    case DVI_BLOCK_FRICTION_ROLLING: /* refused before the sweeps */
        return;
    }
    dvi_work_set_block(w, b, x, g, v);
}

/* Memory traffic of one sweep (ccp_work.h), counted as pgs.c counts it,
 * with a friction block's W and pseudo-inverse (18 numbers) read per visit. */
static double sweep_bytes(const dvi_ccp_work* w)
{
    double blocks = 0.0;
    for (int32_t b = 0; b < w->nblocks; b++) {
        const int32_t k = w->block_row[b + 1] - w->block_row[b];
        blocks += 4.0 + (double)sizeof(dvi_ccp_block) + 8.0 + (k == 3 ? 8.0 * 19 : 8.0);
    }
    double rows = (double)w->m * (8.0 * 3 + (w->p->compliance ? 8.0 : 0.0));
    double cols = w->factor_form ? (double)w->nruns * ((4.0 + 4.0 + 48.0 + 48.0) + (48.0 + 96.0)) + 4.0 * w->m
                                 : (double)w->wt_p[w->m] * (4.0 + 8.0 + 8.0) + 4.0 * w->m;
    const double real = w->fc_df ? 4.0 : 8.0;
    for (int32_t c = 0; c < w->nfc; c++) {
        double nb = (w->fc_body[2 * (size_t)c] >= 0) + (w->fc_body[2 * (size_t)c + 1] >= 0);
        cols += 2.0 * (15.0 * real + 8.0 + 4.0 + 1.0) + nb * (48.0 + 96.0 + (w->rigid_minv ? 80.0 : 288.0));
    }
    double velocity = w->factor_form ? dvi_work_dt_bytes(w) + 32.0 * w->m : dvi_work_product_bytes(w) + 24.0 * w->m;
    return blocks + rows + cols + velocity + dvi_work_pass_bytes(w, 2, 0) + 8.0 * w->m;
}

static dvi_status nsgs_solve(dvi_ccp_work* w, const dvi_solver_settings* s, double* gamma, dvi_solve_result* res)
{
    const int32_t m = w->m, nb = w->nblocks;
    for (int32_t b = 0; b < nb; b++)
        if (w->p->blocks[b].kind == DVI_BLOCK_FRICTION_ROLLING) {
            snprintf(res->message, sizeof res->message,
                     "blocks[%d]: friction_rolling is not supported by nsgs; use desaxce", (int)b);
            return DVI_ERR_INVALID_ARG;
        }
    const size_t eta_bytes = ((size_t)nb * sizeof(double) + 63) / 64 * 64;
    char* mem = dvi_work_scratch(w, eta_bytes + (size_t)nb * sizeof(dvi_coulomb_local));
    if (!mem) {
        snprintf(res->message, sizeof res->message, "NSGS: out of memory (%d blocks)", (int)nb);
        return DVI_ERR_NOMEM;
    }
    double* eta = (double*)mem;
    dvi_coulomb_local* loc = (dvi_coulomb_local*)(mem + eta_bytes);
    dvi_block_steps(w, eta);
    for (int32_t b = 0; b < nb; b++) {
        if (w->p->blocks[b].kind != DVI_BLOCK_FRICTION) continue;
        const int32_t r0 = w->block_row[b];
        double A[9];
        for (int a = 0; a < 3; a++)
            for (int q = 0; q < 3; q++)
                A[3 * a + q] = a == q ? w->diag[r0 + a] : dvi_work_block_entry(w, r0 + a, r0 + q);
        if (dvi_coulomb_local_prepare(A, &loc[b]) != 0) {
            snprintf(res->message, sizeof res->message,
                     "blocks[%d]: its 3x3 block of N is not positive semidefinite (N_nn = %.3g)", (int)b, A[0]);
            return DVI_ERR_INVALID_ARG;
        }
    }
    nsgs_state st = {eta, loc, s->nsgs.local_iterations, s->nsgs.local_tolerance, s->nsgs.omega, 0, -1};
    double* u = w->vec[0];
    double* v = w->bodyvec; /* factor form: v = M⁻¹ D γ */
    double* g = gamma;
    dvi_work_project(w, g);
    if (w->factor_form) dvi_work_minv_d(w, g, v);
    dvi_work_sweep_velocity(w, g, v, u);
    double rk = dvi_work_residual_coulomb(w, g, u);
    res->iterations = 0;
    res->target_residual = rk;
    if (rk <= s->tolerance) {
        res->status = DVI_SOLVE_CONVERGED;
        return DVI_OK;
    }
    const double scale = dvi_impulse_scale(w, eta);
    double gnorm_first = 0.0;
    res->status = DVI_SOLVE_MAX_ITERATIONS;
    int32_t it;
    for (it = 1; it <= s->max_iterations; it++) {
        for (int32_t b = 0; b < nb; b++) visit(w, &st, g, v, b);
        if (w->factor_form && it % REFRESH == 0) dvi_work_minv_d(w, g, v);
        dvi_work_sweep_velocity(w, g, v, u);
        rk = dvi_work_residual_coulomb(w, g, u);
        if (rk <= s->tolerance && w->factor_form && it % REFRESH != 0) { /* confirm without drift */
            dvi_work_minv_d(w, g, v);
            dvi_work_sweep_velocity(w, g, v, u);
            rk = dvi_work_residual_coulomb(w, g, u);
        }
        dvi_history_push(w, res, rk);
        const double gnorm = dvi_norm2(g, m);
        if (it == 1) gnorm_first = gnorm;
        if (!isfinite(rk) || dvi_diverging(gnorm, gnorm_first, scale)) {
            res->status = DVI_SOLVE_DIVERGED;
            snprintf(res->message, sizeof res->message,
                     "NSGS: |gamma| = %.3g at sweep %d (diverging; lower nsgs.omega)", gnorm, (int)it);
            break;
        }
        if (rk <= s->tolerance) {
            res->status = DVI_SOLVE_CONVERGED;
            break;
        }
    }
    res->iterations = it > s->max_iterations ? s->max_iterations : it;
    res->target_residual = rk;
    res->bytes_per_iteration = res->iterations > 0 ? sweep_bytes(w) : 0.0;
    if (res->status != DVI_SOLVE_CONVERGED && st.failures > 0 && !res->message[0])
        snprintf(res->message, sizeof res->message,
                 "NSGS: the local Coulomb solve found no answer at %d block visits (the last at blocks[%d]), "
                 "which kept their impulse",
                 (int)st.failures, (int)st.last_failure);
    return DVI_OK;
}

const dvi_solver_impl dvi_solver_nsgs = {
    "nsgs",
    "nonsmooth Gauss-Seidel on Coulomb's law, with the exact local solve of each contact (Jourdan, Alart & Jean 1998)",
    false,
    nsgs_solve,
    DVI_LAW_COULOMB,
};
