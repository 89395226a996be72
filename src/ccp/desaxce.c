/* dvicontact — Coulomb's law as a fixed point of shifted CCPs (De Saxcé's
 * change of variable).
 *
 * Problem: Coulomb's law in De Saxcé's form (ccp.h, DVI_LAW_COULOMB).
 * Algorithm (De Saxcé & Feng 1998; Acary, Cadoux, Lemaréchal & Malick 2011,
 * who write Coulomb's law as the fixed point of this map): for shifts
 * s_a ≥ 0 on the friction blocks, the CCP with r_a,n replaced by r_a,n + s_a
 * is convex, and a solution γ(s) of it with s_a = μ‖u_t‖ on every block is
 * a solution of Coulomb's law, since its velocity u + s e_n is then the De
 * Saxcé velocity ũ. So, from s = 0 and the caller's γ (projected),
 *     repeat  s_a ← θ μ‖u_t(γ)‖ + (1 − θ) s_a          θ = settings.desaxce.damping
 *                 (not at the first step without a warm start: see below)
 *             γ ← the CCP of the shifted r, solved by settings.desaxce.inner
 *                 ("apgd" or "pgs"), warm started from γ, with at most
 *                 settings.desaxce.inner_iterations iterations
 *     until the Coulomb residual (metrics.residual_coulomb, on a fresh
 *     product) ≤ tolerance.
 * FRICTION_ROLLING blocks take s_a = μ‖u_t‖ + μ_spin|u_s| + μ_roll‖u_r‖,
 * the shift their Coulomb residual uses (ccp_desaxce_shift).
 * Without a warm start the first step is the CCP itself (s = 0: the
 * velocities of γ = 0 are r, whose tangential parts say nothing of the
 * sliding). The first inner solve stops at tolerance/2 of its CCP
 * residual, so the first entry of the history is the Coulomb residual of
 * the CCP's answer — how far the CCP relaxation lies from Coulomb's law on
 * this problem — and a problem whose CCP answer already obeys Coulomb's
 * law (nothing slides) takes one step. The later inner solves stop at
 * max(tolerance/2, min(10⁻², residual/10)): loose while the shifts are far
 * from their fixed point, tight at the end. (Measured: starting from the
 * shifts of γ = 0, or with a loose first solve, a 300-contact granular bed
 * whose CCP answer is Coulomb's stalled near 1e-6: the spurious tangential
 * velocities of an inexact CCP answer give shifts that make the next CCPs
 * hard for apgd.) With a warm start the first shifts come from the guess's
 * velocities.
 * settings.max_iterations bounds the total of the inner iterations
 * (result.iterations counts them); the history holds the Coulomb residual
 * of each outer iteration. The fixed point has no convergence guarantee
 * (Coulomb's law may have no solution, or several); a damping θ < 1 helps
 * where the shifts oscillate.
 * The inner solver is the registry's row that settings.desaxce.inner names
 * (a row with nests), handed over by the driver (call->inner): this file
 * does not look solvers up.
 * Memory: the shifted r and the shifts live in the solver's own state
 * (desaxce_state: made with the solver, grown from the solver's allocator
 * and kept between solves, freed with it); the outer velocity in
 * w->vec[8], which no nesting solver uses. No allocation per outer
 * iteration. Deterministic; threads as the inner solver's products.
 */
#include "ccp_work.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define OUTER_U 8 /* w->vec[OUTER_U]: N γ + r between the inner solves */

/* The solver's own arrays: the shifted r and the shifts. */
typedef struct desaxce_state {
    double* mem; /* [m + nblocks] */
    size_t cap;
} desaxce_state;

static dvi_status desaxce_create(const dvi_allocator* a, void** state)
{
    *state = base_mem_calloc(a, 1, sizeof(desaxce_state));
    return *state ? DVI_OK : DVI_ERR_NOMEM;
}

static void desaxce_destroy(const dvi_allocator* a, void* state)
{
    desaxce_state* d = state;
    if (!d) return;
    base_mem_free(a, d->mem);
    base_mem_free(a, d);
}

static const char* desaxce_inner(const dvi_solver_settings* s)
{
    return s->desaxce.inner;
}

/* u = N γ + r (the driver's order of operations). */
static void velocity(const ccp_work* w, const double* g, double* u)
{
    ccp_work_apply(w, g, u);
    for (int32_t i = 0; i < w->m; i++) u[i] += w->p->r[i];
}

static dvi_status desaxce_solve(ccp_work* w, const ccp_solver_call* call, const dvi_solver_settings* s,
                                double* gamma, dvi_solve_result* res)
{
    const int32_t m = w->m, nb = w->nblocks;
    const ccp_solver_impl* inner = call->inner;
    desaxce_state* own = call->state;
    if (!inner || !inner->nests || !own) { /* the driver has checked the name and made the state */
        snprintf(res->message, sizeof res->message, "settings.desaxce.inner: not a solver that nests (\"%.20s\")",
                 s->desaxce.inner);
        return DVI_ERR_INVALID_ARG;
    }
    const size_t need = (size_t)m + (size_t)nb;
    if (need > own->cap || !own->mem) {
        double* q = base_mem_realloc(&w->alloc, own->mem, need * sizeof(double));
        if (!q) {
            snprintf(res->message, sizeof res->message, "desaxce: out of memory (%d rows)", (int)m);
            return DVI_ERR_NOMEM;
        }
        own->mem = q;
        own->cap = need;
    }
    double* rs = own->mem; /* [m] the shifted r */
    double* sh = rs + m;         /* [nblocks] the shifts */
    double* u = w->vec[OUTER_U];
    const dvi_ccp_problem* p = w->p;
    dvi_ccp_problem shifted = *p;
    shifted.r = rs;
    const double rnorm = w->rnorm;
    double* const history = w->history;
    const double theta = s->desaxce.damping;

    double* g = gamma;
    ccp_work_project(w, g);
    velocity(w, g, u);
    double rk = ccp_work_residual_coulomb_checked(w, g, u, s->tolerance);
    res->iterations = 0;
    res->target_residual = rk;
    if (rk <= s->tolerance) {
        res->status = DVI_SOLVE_CONVERGED;
        return DVI_OK;
    }
    for (int32_t b = 0; b < nb; b++) sh[b] = 0.0;
    memcpy(rs, p->r, (size_t)m * sizeof(double));
    dvi_solver_settings si = *s;
    const ccp_solver_call inner_call = {NULL, NULL}; /* a nesting solver has no state */
    double traffic = 0.0, change = 0.0;
    int32_t total = 0, outer = 0;
    res->status = DVI_SOLVE_MAX_ITERATIONS;
    while (total < s->max_iterations && outer < s->max_iterations) {
        /* the shifts from the current velocities; without a guess the
         * first step keeps s = 0 (the CCP itself): the velocities of γ = 0
         * are r, whose tangential parts are no estimate of the sliding */
        change = 0.0;
        for (int32_t b = 0; b < nb && (outer > 0 || s->warm_start); b++) {
            const dvi_ccp_block* B = &p->blocks[b];
            if (B->kind != DVI_BLOCK_FRICTION && B->kind != DVI_BLOCK_FRICTION_ROLLING) continue;
            const int32_t r0 = w->block_row[b];
            const double next = theta * ccp_desaxce_shift(B, u + r0) + (1.0 - theta) * sh[b];
            change = fmax(change, fabs(next - sh[b]));
            sh[b] = next;
            rs[r0] = p->r[r0] + next;
        }
        /* the shifted CCP, warm started from γ */
        si.max_iterations = s->desaxce.inner_iterations < s->max_iterations - total ? s->desaxce.inner_iterations
                                                                                    : s->max_iterations - total;
        si.tolerance = outer == 0 ? 0.5 * s->tolerance : fmax(0.5 * s->tolerance, fmin(1e-2, 0.1 * rk));
        dvi_solve_result ir;
        memset(&ir, 0, sizeof ir);
        ir.status = DVI_SOLVE_MAX_ITERATIONS;
        w->p = &shifted;
        w->rnorm = ccp_norm2(rs, m);
        w->history = NULL; /* the history is the outer iteration's */
        w->guess_Ng = NULL;
        w->u_final = NULL;
        const dvi_status st = inner->solve(w, &inner_call, &si, g, &ir);
        w->p = p;
        w->rnorm = rnorm;
        w->history = history;
        w->u_final = NULL; /* a product of the shifted problem */
        total += ir.iterations;
        traffic += ir.bytes_per_iteration * ir.iterations;
        outer++;
        if (st < 0) {
            snprintf(res->message, sizeof res->message,
                     "desaxce: the inner %s solve failed at outer iteration %d: %.160s", inner->name, (int)outer,
                     ir.message);
            res->iterations = total;
            return st;
        }
        velocity(w, g, u);
        rk = ccp_work_residual_coulomb_checked(w, g, u, s->tolerance);
        ccp_history_push(w, res, rk);
        if (ir.status == DVI_SOLVE_DIVERGED || !isfinite(rk)) {
            res->status = DVI_SOLVE_DIVERGED;
            snprintf(res->message, sizeof res->message,
                     "desaxce: the inner %s solve diverged at outer iteration %d%s%.160s", inner->name, (int)outer,
                     ir.message[0] ? ": " : "", ir.message);
            break;
        }
        if (rk <= s->tolerance) {
            res->status = DVI_SOLVE_CONVERGED;
            break;
        }
        if (ir.iterations == 0 && change == 0.0) { /* a fixed point of the shifts that is not Coulomb's */
            snprintf(res->message, sizeof res->message,
                     "desaxce: the shifts and the inner %s solve stopped changing at outer iteration %d with the "
                     "Coulomb residual %.3e",
                     inner->name, (int)outer, rk);
            break;
        }
    }
    res->iterations = total;
    res->target_residual = rk;
    res->bytes_per_iteration = total > 0 ? traffic / total : 0.0;
    if (res->status == DVI_SOLVE_MAX_ITERATIONS && !res->message[0])
        snprintf(res->message, sizeof res->message,
                 "desaxce: %d inner %s iterations in %d outer iterations left the Coulomb residual at %.3e (the last "
                 "change of a shift %.3g)",
                 (int)total, inner->name, (int)outer, rk, change);
    return DVI_OK;
}

const ccp_solver_impl ccp_solver_desaxce = {
    .name = "desaxce", .solve = desaxce_solve, .law = DVI_LAW_COULOMB, .targets_ccp = false,
    .summary = "Coulomb's law as the fixed point of CCPs with De Saxce's shift s = mu |u_t| (De Saxce & Feng 1998), "
               "each solved by apgd or pgs",
    .inner_name = desaxce_inner, .create = desaxce_create, .destroy = desaxce_destroy, /* the inner solver */
};
