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
 * FRICTION_ROLLING blocks are refused (refused_kinds: the driver returns
 * DVI_ERR_INVALID_ARG naming the first and the solvers that take them):
 * their local problem has six rows and three coupled cones, for which no
 * exact local solve is implemented.
 * In the factor form the body velocities v = M⁻¹Dγ are kept up to date, so a
 * block costs O(entries of its columns) (contacts given by frames through
 * ccp_work_frame_velocity / ccp_work_frame_update), and v is recomputed from
 * γ every 25 sweeps (ccp_gs_iterate, shared with pgs); in the Delassus form u_a is read from the rows of
 * W. Each N_aa (compliance included) and its pseudo-inverse are formed once
 * per solve in the work's scratch; a sweep allocates nothing.
 * Stopping: the Coulomb residual (metrics.residual_coulomb) after each sweep,
 * one gather; a value within the tolerance is confirmed on velocities
 * recomputed from γ. Divergence: ‖γ‖ growing 1e10-fold over its natural
 * scale (ccp_diverging), or a non-finite value. Serial and deterministic:
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

typedef struct nsgs_state {
    const double* eta;           /* [nblocks] Gershgorin steps (0: a block coupled to nothing) */
    const ccp_coulomb_local* loc; /* [nblocks] N_aa of the friction blocks */
    int local_iterations;
    double local_tolerance, omega;
    int32_t failures, last_failure;
} nsgs_state;

/* One visit of block b. */
static void visit(const ccp_work* w, nsgs_state* st, double* g, double* v, int32_t b)
{
    if (st->eta[b] <= 0.0) return; /* nothing moves it: nothing to do */
    const int32_t r0 = w->block_row[b];
    const dvi_ccp_block* B = &w->p->blocks[b];
    const double omega = st->omega;
    double ua[6], x[6];
    ccp_work_block_velocity(w, g, v, b, ua);
    switch (B->kind) {
    case DVI_BLOCK_BILATERAL:
        x[0] = g[r0] - omega * ua[0] / w->diag[r0];
        break;
    case DVI_BLOCK_FRICTIONLESS:
        x[0] = g[r0] - omega * ua[0] / w->diag[r0];
        if (!(x[0] > 0.0)) x[0] = 0.0;
        break;
    case DVI_BLOCK_FRICTION: {
        const ccp_coulomb_local* L = &st->loc[b];
        const double* ga = g + r0;
        double q[3];
        for (int i = 0; i < 3; i++) {
            q[i] = ua[i] - (L->W[3 * i] * ga[0] + L->W[3 * i + 1] * ga[1] + L->W[3 * i + 2] * ga[2]);
            x[i] = ga[i];
        }
        if (ccp_coulomb_local_solve(L, q, B->mu, st->local_iterations, st->local_tolerance, x) == DVI_LOCAL_FAILED) {
            st->failures++;
            st->last_failure = b;
            return;
        }
        if (omega != 1.0) {
            for (int i = 0; i < 3; i++) x[i] = ga[i] + omega * (x[i] - ga[i]);
            ccp_project_friction(B->mu, x);
        }
        break;
    }
    case DVI_BLOCK_FRICTION_ROLLING: /* refused before the sweeps */
        return;
    }
    ccp_work_set_block(w, b, x, g, v);
}

/* Memory traffic of one sweep (ccp_work.h), counted as pgs.c counts it,
 * with a friction block's W and pseudo-inverse (18 numbers) read per visit. */
static double sweep_bytes(const ccp_work* w)
{
    double blocks = 0.0;
    for (int32_t b = 0; b < w->nblocks; b++) {
        const int32_t k = w->block_row[b + 1] - w->block_row[b];
        blocks += 4.0 + (double)sizeof(dvi_ccp_block) + 8.0 + (k == 3 ? 8.0 * 19 : 8.0);
    }
    return blocks + ccp_gs_visit_bytes(w) + ccp_gs_check_bytes(w);
}

/* One sweep (ccp_gs_sweep_fn): the blocks in order. */
static void sweep(const ccp_work* w, void* ctx, double* g, double* v)
{
    for (int32_t b = 0; b < w->nblocks; b++) visit(w, ctx, g, v, b);
}

static dvi_status nsgs_solve(ccp_work* w, const ccp_solver_call* call, const dvi_solver_settings* s,
                             double* gamma, dvi_solve_result* res)
{
    (void)call; /* no state, no inner solver */
    const int32_t nb = w->nblocks; /* no FRICTION_ROLLING block: the driver refuses them (refused_kinds) */
    const size_t eta_bytes = ((size_t)nb * sizeof(double) + 63) / 64 * 64;
    char* mem = ccp_work_scratch(w, eta_bytes + (size_t)nb * sizeof(ccp_coulomb_local));
    if (!mem) {
        snprintf(res->message, sizeof res->message, "NSGS: out of memory (%d blocks)", (int)nb);
        return DVI_ERR_NOMEM;
    }
    double* eta = (double*)mem;
    ccp_coulomb_local* loc = (ccp_coulomb_local*)(mem + eta_bytes);
    ccp_block_steps(w, eta);
    for (int32_t b = 0; b < nb; b++) {
        if (w->p->blocks[b].kind != DVI_BLOCK_FRICTION) continue;
        const int32_t r0 = w->block_row[b];
        double A[9];
        for (int a = 0; a < 3; a++)
            for (int q = 0; q < 3; q++)
                A[3 * a + q] = a == q ? w->diag[r0 + a] : ccp_work_block_entry(w, r0 + a, r0 + q);
        if (ccp_coulomb_local_prepare(A, &loc[b]) != 0) {
            snprintf(res->message, sizeof res->message,
                     "blocks[%d]: its 3x3 block of N is not positive semidefinite (N_nn = %.3g)", (int)b, A[0]);
            return DVI_ERR_INVALID_ARG;
        }
    }
    nsgs_state st = {eta, loc, s->nsgs.local_iterations, s->nsgs.local_tolerance, s->nsgs.omega, 0, -1};
    ccp_gs_iterate(w, s, eta, sweep, &st, true, "NSGS", "nsgs.omega", gamma, res);
    res->bytes_per_iteration = res->iterations > 0 ? sweep_bytes(w) : 0.0;
    if (res->status != DVI_SOLVE_CONVERGED && st.failures > 0 && !res->message[0])
        snprintf(res->message, sizeof res->message,
                 "NSGS: the local Coulomb solve found no answer at %d block visits (the last at blocks[%d]), "
                 "which kept their impulse",
                 (int)st.failures, (int)st.last_failure);
    return DVI_OK;
}

const ccp_solver_impl ccp_solver_nsgs = {
    .name = "nsgs", .solve = nsgs_solve, .law = DVI_LAW_COULOMB, .targets_ccp = false,
    .summary = "nonsmooth Gauss-Seidel on Coulomb's law, with the exact local solve of each contact "
               "(Jourdan, Alart & Jean 1998)",
    .refused_kinds = 1u << DVI_BLOCK_FRICTION_ROLLING, /* no exact local solve with spin and rolling rows */
    .sweeps_in_order = true, /* contact after contact */
};
