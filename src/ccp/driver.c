/* dvicontact — the solver driver: settings, instances, and the common
 * bookkeeping around every solve (validation, timing, fresh residuals).
 *
 * The driver, not the individual solver, has the last word on the status:
 * after a solver returns, the metrics are recomputed from a fresh product
 * N γ + r on the returned γ, and a CCP-targeting solver that claims
 * convergence with a fresh residual above the tolerance is reported as
 * max_iterations. */
#include "ccp_work.h"
#include "registry.h"
#include "driver.h"
#include "error.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#define DVI_SETTINGS_COOKIE 0x44564953u /* "DVIS" */

struct dvi_solver {
    const ccp_solver_impl* impl;
    dvi_solver_settings settings;
    ccp_work work;
    void* state; /* the solver's own (impl->create), or NULL */
    int thread_limit; /* at most this many threads (ccp_solver_limit_threads); 0: none */
};

dvi_status dvi_solver_lend(dvi_solver* solver, const dvi_memory_block* blocks, int32_t count)
{
    if (!solver) return base_error_set(DVI_ERR_INVALID_ARG, "solver: NULL");
    if (count < 0 || count > DVI_SOLVER_LEND_MAX)
        return base_error_setf(DVI_ERR_INVALID_ARG, "count: must be in [0, %d] (got %d)", DVI_SOLVER_LEND_MAX, (int)count);
    if (count > 0 && !blocks) return base_error_set(DVI_ERR_INVALID_ARG, "blocks: NULL with count > 0");
    for (int32_t k = 0; k < count; k++)
        if (!blocks[k].data && blocks[k].bytes > 0)
            return base_error_setf(DVI_ERR_INVALID_ARG, "blocks[%d].data: NULL with bytes > 0", (int)k);
    ccp_work* w = &solver->work;
    for (int32_t k = 0; k < count; k++) w->lent[k] = blocks[k];
    w->lent_count = count;
    w->p = NULL; /* the last solve's arrays may lie in the blocks given back */
    return DVI_OK;
}

dvi_status dvi_solver_velocity(const dvi_solver* solver, const double* gamma, double* dv)
{
    if (!solver || !gamma || !dv) return base_error_set(DVI_ERR_INVALID_ARG, "dvi_solver_velocity: solver, gamma or dv is NULL");
    const ccp_work* w = &solver->work;
    if (!w->p || !w->factor_form)
        return base_error_set(DVI_ERR_INVALID_ARG,
                             "dvi_solver_velocity: no factor-form problem solved since the solver was created or lent memory");
    ccp_work_minv_d(w, gamma, dv);
    return DVI_OK;
}

dvi_status dvi_solver_pyramid(const dvi_solver* solver, int32_t block, double turn[2])
{
    if (!solver || !turn) return base_error_set(DVI_ERR_INVALID_ARG, "dvi_solver_pyramid: solver or turn is NULL");
    const ccp_work* w = &solver->work;
    if (!w->p || w->pyramid_edges <= 0)
        return base_error_set(DVI_ERR_INVALID_ARG,
                              "dvi_solver_pyramid: no solve on friction pyramids (lemke) since the solver was created "
                              "or lent memory");
    if (block < 0 || block >= w->nblocks)
        return base_error_setf(DVI_ERR_INVALID_ARG, "block: must be in [0, %d) (got %d)", (int)w->nblocks, (int)block);
    const dvi_block_kind kind = w->p->blocks[block].kind;
    if (kind != DVI_BLOCK_FRICTION && kind != DVI_BLOCK_FRICTION_ROLLING)
        return base_error_setf(DVI_ERR_INVALID_ARG, "blocks[%d]: %s has no friction pyramid", (int)block,
                               ccp_block_kind_name(kind));
    turn[0] = w->pyramid_turn[2 * (size_t)block];
    turn[1] = w->pyramid_turn[2 * (size_t)block + 1];
    return DVI_OK;
}

dvi_solver_settings dvi_default_solver_settings(void)
{
    dvi_solver_settings s;
    memset(&s, 0, sizeof s);
    s.max_iterations = 1000;
    s.tolerance = 1e-8; /* the one default, a world's step's too (docs/solvers.md) */
    s.block_tolerance = 0.0; /* automatic (ccp_block_tolerance): docs/solvers.md, "Every block in its own units" */
    s.warm_start = false;
    s.warm_start_scale = 1.0;
    s.threads = 1;
    s.apgd.restart = true;
    s.apgd.grow = 2.0;
    s.apgd.shrink = 0.9;
    s.apgd.precondition = true;
    s.pgs.omega = 1.0;
    s.pgs.symmetric = false;
    s.pgs.block_iterations = 8;
    s.jacobi.omega = 1.5;
    s.lemke.friction_directions = 4;
    s.lemke.max_pivots = 0;
    s.lemke.max_lcp_size = 4000;
    s.lemke.coulomb = false;
    s.lemke.orient = true;
    s.lemke.orient_grid = 0.5 * 3.14159265358979323846 / 180.0;
    s.nsgs.local_iterations = 20;
    s.nsgs.local_tolerance = 1e-14;
    s.nsgs.omega = 1.0;
    s.newton.max_dense_rows = 1000;
    s.newton.line_search = true;
    s.newton.rho = 1.0;
    memcpy(s.desaxce.inner, "apgd", 5);
    s.desaxce.inner_iterations = 1000;
    s.desaxce.damping = 1.0;
    s.internal_cookie = DVI_SETTINGS_COOKIE;
    return s;
}

static dvi_status bad(char* msg, size_t n, const char* text, double value)
{
    if (msg && n) snprintf(msg, n, "%s (got %g)", text, value);
    return DVI_ERR_INVALID_ARG;
}

double dvi_block_tolerance(const dvi_solver_settings* settings, int32_t block_count)
{
    return settings ? ccp_block_tolerance(settings, block_count) : NAN;
}

static dvi_status check_settings(const dvi_solver_settings* s, char* msg, size_t n)
{
    if (s->internal_cookie != DVI_SETTINGS_COOKIE)
        return bad(msg, n, "settings: not initialised with dvi_default_solver_settings()", (double)s->internal_cookie);
    if (s->max_iterations < 1) return bad(msg, n, "settings.max_iterations: must be >= 1", s->max_iterations);
    if (!(s->tolerance > 0.0) || !isfinite(s->tolerance))
        return bad(msg, n, "settings.tolerance: must be finite and > 0", s->tolerance);
    if (!(s->block_tolerance >= 0.0) || !isfinite(s->block_tolerance))
        return bad(msg, n, "settings.block_tolerance: must be finite and >= 0 (0: automatic)", s->block_tolerance);
    if (s->threads < 0) return bad(msg, n, "settings.threads: must be >= 0", s->threads);
    if (!(s->warm_start_scale > 0.0 && s->warm_start_scale <= 1.0))
        return bad(msg, n, "settings.warm_start_scale: must be in (0, 1]", s->warm_start_scale);
    if (!(s->apgd.grow > 1.0) || !isfinite(s->apgd.grow))
        return bad(msg, n, "settings.apgd.grow: must be > 1", s->apgd.grow);
    if (!(s->apgd.shrink > 0.0 && s->apgd.shrink <= 1.0))
        return bad(msg, n, "settings.apgd.shrink: must be in (0, 1]", s->apgd.shrink);
    if (!(s->pgs.omega > 0.0 && s->pgs.omega < 2.0))
        return bad(msg, n, "settings.pgs.omega: must be in (0, 2)", s->pgs.omega);
    if (s->pgs.block_iterations < 1)
        return bad(msg, n, "settings.pgs.block_iterations: must be >= 1", s->pgs.block_iterations);
    if (!(s->jacobi.omega > 0.0 && s->jacobi.omega < 2.0))
        return bad(msg, n, "settings.jacobi.omega: must be in (0, 2)", s->jacobi.omega);
    if (s->lemke.friction_directions < 3)
        return bad(msg, n, "settings.lemke.friction_directions: must be >= 3", s->lemke.friction_directions);
    if (!(s->lemke.orient_grid >= 0.0 && s->lemke.orient_grid <= 1.0))
        return bad(msg, n, "settings.lemke.orient_grid: must be in [0, 1] rad", s->lemke.orient_grid);
    if (s->lemke.max_pivots < 0) return bad(msg, n, "settings.lemke.max_pivots: must be >= 0", s->lemke.max_pivots);
    if (s->lemke.max_lcp_size < 1)
        return bad(msg, n, "settings.lemke.max_lcp_size: must be >= 1", s->lemke.max_lcp_size);
    if (s->nsgs.local_iterations < 1)
        return bad(msg, n, "settings.nsgs.local_iterations: must be >= 1", s->nsgs.local_iterations);
    if (!(s->nsgs.local_tolerance > 0.0) || !isfinite(s->nsgs.local_tolerance))
        return bad(msg, n, "settings.nsgs.local_tolerance: must be finite and > 0", s->nsgs.local_tolerance);
    if (!(s->nsgs.omega > 0.0 && s->nsgs.omega <= 2.0))
        return bad(msg, n, "settings.nsgs.omega: must be in (0, 2]", s->nsgs.omega);
    if (s->newton.max_dense_rows < 0)
        return bad(msg, n, "settings.newton.max_dense_rows: must be >= 0", s->newton.max_dense_rows);
    if (!(s->newton.rho > 0.0) || !isfinite(s->newton.rho))
        return bad(msg, n, "settings.newton.rho: must be finite and > 0", s->newton.rho);
    const ccp_solver_impl* inner =
        memchr(s->desaxce.inner, 0, sizeof s->desaxce.inner) ? ccp_solver_find(s->desaxce.inner) : NULL;
    if (!inner || !inner->nests) {
        /* the solvers that nest, from the registry: "\"apgd\" or \"pgs\"" */
        char names[96] = "";
        int32_t k = 0, count = 0;
        for (int32_t i = 0; i < dvi_solver_count(); i++) count += ccp_solver_row(i)->nests;
        for (int32_t i = 0; i < dvi_solver_count(); i++) {
            if (!ccp_solver_row(i)->nests) continue;
            const size_t len = strlen(names);
            snprintf(names + len, sizeof names - len, "%s\"%s\"", k == 0 ? "" : k + 1 < count ? ", " : " or ",
                     dvi_solver_name(i));
            k++;
        }
        if (msg && n) snprintf(msg, n, "settings.desaxce.inner: must be %s", names);
        return DVI_ERR_INVALID_ARG;
    }
    if (s->desaxce.inner_iterations < 1)
        return bad(msg, n, "settings.desaxce.inner_iterations: must be >= 1", s->desaxce.inner_iterations);
    if (!(s->desaxce.damping > 0.0 && s->desaxce.damping <= 1.0))
        return bad(msg, n, "settings.desaxce.damping: must be in (0, 1]", s->desaxce.damping);
    if (!base_allocator_valid(&s->allocator)) {
        if (msg && n) snprintf(msg, n, "settings.allocator: set all three functions (alloc, realloc, free) or none");
        return DVI_ERR_INVALID_ARG;
    }
    return DVI_OK;
}

dvi_status dvi_solver_create(const char* name, const dvi_solver_settings* settings, dvi_solver** out)
{
    if (!out) return base_error_set(DVI_ERR_INVALID_ARG, "dvi_solver_create: out is NULL");
    *out = NULL;
    const ccp_solver_impl* impl = ccp_solver_find(name);
    if (!impl) return base_error_setf(DVI_ERR_INVALID_ARG, "solver: unknown name \"%s\"", name ? name : "(null)");
    dvi_solver_settings s = settings ? *settings : dvi_default_solver_settings();
    char text[256];
    if (check_settings(&s, text, sizeof text) != DVI_OK) return base_error_set(DVI_ERR_INVALID_ARG, text);
    dvi_solver* sv = base_mem_calloc(&s.allocator, 1, sizeof *sv);
    if (!sv) return base_error_set(DVI_ERR_NOMEM, "out of memory");
    sv->impl = impl;
    sv->settings = s;
    sv->work.alloc = s.allocator;
    if (impl->create && impl->create(&s.allocator, &sv->state) != DVI_OK) {
        base_mem_free(&s.allocator, sv);
        return base_error_set(DVI_ERR_NOMEM, "out of memory");
    }
    *out = sv;
    return DVI_OK;
}

void dvi_solver_destroy(dvi_solver* solver)
{
    if (!solver) return;
    const dvi_allocator a = solver->work.alloc;
    if (solver->impl->destroy) solver->impl->destroy(&a, solver->state);
    ccp_work_free(&solver->work);
    base_mem_free(&a, solver);
}

const char* dvi_solver_get_name(const dvi_solver* solver)
{
    return solver ? solver->impl->name : NULL;
}

dvi_friction_law dvi_solver_get_law(const dvi_solver* solver)
{
    if (!solver) return DVI_LAW_CCP;
    return solver->impl->law_under ? solver->impl->law_under(&solver->settings) : solver->impl->law;
}

dvi_status dvi_solver_set_settings(dvi_solver* solver, const dvi_solver_settings* settings)
{
    if (!solver || !settings) return base_error_set(DVI_ERR_INVALID_ARG, "dvi_solver_set_settings: solver or settings is NULL");
    char text[256];
    if (check_settings(settings, text, sizeof text) != DVI_OK) return base_error_set(DVI_ERR_INVALID_ARG, text);
    solver->settings = *settings;
    solver->settings.allocator = solver->work.alloc; /* the memory it holds came from this one */
    return DVI_OK;
}

double ccp_seconds_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int resolve_threads(int requested, int limit)
{
#ifdef _OPENMP
    const int t = requested > 0 ? requested : omp_get_max_threads();
    return limit > 0 && limit < t ? limit : t;
#else
    (void)requested, (void)limit;
    return 1;
#endif
}

void ccp_solver_limit_threads(dvi_solver* solver, int limit)
{
    if (solver) solver->thread_limit = limit > 0 ? limit : 0;
}

/* A certificate that the CCP has no solution, written into msg:
 * (i) a block whose diagonal of N is zero cannot be moved by any impulse
 *     (N is positive semidefinite, so its rows are zero): u_a = r_a
 *     whatever γ, and r_a must lie in the dual cone K*_a (Π_K(−r_a) = 0);
 * (ii) impulses run away along a direction of the cones that moves nothing
 *     while the constraint velocities still ask for more along it (the
 *     objective ½γᵀNγ + rᵀγ unbounded below along γ). Measured with each
 *     block scaled by its mean diagonal η_b, so that masses do not matter:
 *     γ̃ = η^½ γ, Ñγ̃ = η^-½ N γ = η^-½ (u − r), ũ = η^-½ u, and
 *         ‖Ñγ̃‖ ≤ 1e-3 ‖γ̃‖,   uᵀγ < −½ ‖ũ‖ ‖γ̃‖,   ‖ũ‖ ≥ 1e-3 ‖r̃‖,
 *         uᵀγ + 100 γᵀNγ < 0.
 *     At a solution uᵀγ = 0 (complementarity), so no solvable problem meets
 *     the second condition near its solution, however ill-conditioned; the
 *     third asks u ≠ 0 to a margin; the last, that the objective still
 *     falls 100 ‖γ‖ further along γ: an iterate still on its way to the
 *     solution of a nearly singular N (N = [[1, 1 − 1e-4], [1 − 1e-4, 1]],
 *     γ* of 1e4) is not taken for a runaway. A
 *     huge γ can round the natural map to exactly 0 (γ − (γ + 1) = 0 at
 *     γ = 9e15), so this runs on converged solves too.
 * The sums of (ii), and whether a block of (i) exists, come from the
 * metrics' pass (ccp_ray_sums). */
static bool infeasible(const ccp_work* w, const double* g, const double* ray_u, const ccp_ray_sums* ray, char* msg,
                       size_t n)
{
    const dvi_ccp_problem* p = w->p;
    const double rnorm = w->rnorm;
    for (int32_t b = 0; ray->zero_block && b < w->nblocks; b++) {
        const int32_t r0 = w->block_row[b], k = w->block_row[b + 1] - r0;
        if (ccp_block_eta(w, b) != 0.0) continue; /* the diagonal of N is ≥ 0: a zero mean is a zero block */
        double y[6];
        for (int32_t a = 0; a < k; a++) y[a] = -p->r[r0 + a];
        ccp_cone_project(&p->blocks[b], y);
        double v = 0.0;
        for (int32_t a = 0; a < k; a++) v += y[a] * y[a];
        if (sqrt(v) > 1e-12 * (rnorm > 0.0 ? rnorm : 1.0)) {
            snprintf(msg, n,
                     "infeasible: no impulse can move blocks[%d] (its rows of N are zero), and r = %.3g there lies "
                     "outside its dual cone (bodies that cannot move, pushed into each other?)",
                     (int)b, p->r[r0]);
            return true;
        }
    }
    const double gn = sqrt(ray->gg), nnorm = sqrt(ray->nn), un = sqrt(ray->uu);
    if (!(gn > 0.0 && isfinite(gn) && nnorm <= 1e-3 * gn && ray->ug < -0.5 * un * gn)) return false;
    /* the margins: ũ ≠ 0 (‖ũ‖ ≥ 1e-3 ‖r̃‖), and the objective still falling
     * along d = γ/‖γ‖ a hundred times γ's length further on: its slope there,
     * (uᵀγ + 100 γᵀNγ)/‖γ‖, negative (a solution along d would lie beyond
     * 101 ‖γ‖). At a solution uᵀγ = 0 and γᵀNγ ≥ 0, so neither holds. */
    double rr = 0.0, gng = 0.0;
    for (int32_t b = 0; b < w->nblocks; b++) {
        const double eta = ccp_block_eta(w, b);
        if (!(eta > 0.0) || !isfinite(eta)) continue;
        for (int32_t i = w->block_row[b]; i < w->block_row[b + 1]; i++) {
            const double u = ray_u[i];
            rr += p->r[i] * p->r[i] / eta;
            gng += g[i] * (u - p->r[i]);
        }
    }
    if (un >= 1e-3 * sqrt(rr) && ray->ug + 100.0 * gng < 0.0) {
        snprintf(msg, n,
                 "infeasible: the impulses grew to |gamma| = %.3g along a direction that moves nothing (|N gamma| "
                 "is %.2g of it, scaled) and lowers the objective without bound (redundant constraints that "
                 "disagree, or bodies that cannot move?)",
                 ccp_norm2(g, w->m), nnorm / gn);
        return true;
    }
    return false;
}

dvi_status dvi_solver_record_history(dvi_solver* solver, double* buffer, int32_t capacity)
{
    if (!solver) return base_error_set(DVI_ERR_INVALID_ARG, "solver: NULL");
    if (capacity < 0) return base_error_setf(DVI_ERR_INVALID_ARG, "capacity: must be >= 0 (got %d)", (int)capacity);
    if (!buffer && capacity > 0) return base_error_set(DVI_ERR_INVALID_ARG, "buffer: NULL with capacity > 0");
    solver->work.history = capacity > 0 ? buffer : NULL;
    solver->work.history_capacity = capacity > 0 ? capacity : 0;
    return DVI_OK;
}

/* A result is output only: whatever it held is overwritten. */
static void reset_result(dvi_solve_result* res)
{
    memset(res, 0, sizeof *res);
    res->status = DVI_SOLVE_BAD_INPUT;
    res->target_residual = NAN;
    res->metrics.residual = NAN;
    res->metrics.residual_coulomb = NAN;
    res->metrics.residual_feasibility = NAN;
    res->metrics.residual_block = NAN;
    res->metrics.residual_block_coulomb = NAN;
}

static dvi_status solver_solve(dvi_solver* solver, const dvi_ccp_problem* p, double* gamma, dvi_solve_result* res)
{
    reset_result(res);
    double t0 = ccp_seconds_now();
    if (!solver) {
        snprintf(res->message, sizeof res->message, "solver: NULL");
        return DVI_ERR_INVALID_ARG;
    }
    solver->work.p = NULL; /* no stale problem for dvi_solver_velocity if this one is refused */
    const dvi_solver_settings* s = &solver->settings;
    dvi_status st = check_settings(s, res->message, sizeof res->message);
    if (st != DVI_OK) return st;
    if (!gamma) {
        snprintf(res->message, sizeof res->message, "gamma: NULL");
        return DVI_ERR_INVALID_ARG;
    }
    ccp_work* w = &solver->work;
    if (p && p->shared && !solver->impl->shared) {
        char names[160];
        ccp_solver_shared_names(names, sizeof names);
        snprintf(res->message, sizeof res->message,
                 "shared: %s does not take a problem split over processes (solvers that do: %s)", solver->impl->name,
                 names);
        return DVI_ERR_UNSUPPORTED;
    }
    w->exact_req = s->exact_sums;
    st = ccp_work_prepare(w, p, resolve_threads(s->threads, solver->thread_limit), res->message, sizeof res->message);
    if (st != DVI_OK) {
        w->p = NULL;
        if (st == DVI_ERR_NOMEM && !res->message[0]) snprintf(res->message, sizeof res->message, "out of memory");
        return st;
    }
    w->block_tol = ccp_block_tolerance(s, (int32_t)(w->nblocks_all < INT32_MAX ? w->nblocks_all : INT32_MAX));
    res->block_tolerance = w->block_tol;
    if (solver->impl->refused_kinds) {
        /* a kind the solver does not take (the registry's refused_kinds), with the solvers that take the problem */
        int32_t first = -1;
        uint32_t kinds = 0;
        for (int32_t b = 0; b < w->nblocks; b++) {
            const uint32_t bit = 1u << p->blocks[b].kind;
            if (first < 0 && (solver->impl->refused_kinds & bit)) first = b;
            kinds |= bit;
        }
        if (first >= 0) {
            const dvi_friction_law law = dvi_solver_get_law(solver);
            char names[160];
            ccp_solver_names_for(law, kinds, false, names, sizeof names);
            snprintf(res->message, sizeof res->message,
                     "blocks[%d]: %s is not supported by %s (solvers of %s that take this problem: %s)", (int)first,
                     ccp_block_kind_name(p->blocks[first].kind), solver->impl->name,
                     law == DVI_LAW_COULOMB ? "Coulomb's law" : "the CCP", names);
            res->status = DVI_SOLVE_BAD_INPUT;
            w->p = NULL;
            res->seconds = ccp_seconds_now() - t0;
            return DVI_ERR_INVALID_ARG;
        }
    }
    if (s->warm_start) {
        const int32_t m = w->m;
        const double scale = s->warm_start_scale;
        int32_t first_bad = m; /* the first row not finite, in parallel */
        const int nt = ccp_work_nt(w, m);
        (void)nt; /* used by the OpenMP pragmas only */
#ifdef _OPENMP
#pragma omp parallel for schedule(static) num_threads(nt) if (nt > 1) reduction(min : first_bad)
#endif
        for (int32_t i = 0; i < m; i++)
            if (!isfinite(gamma[i]) && i < first_bad) first_bad = i;
        if (first_bad < m) {
            snprintf(res->message, sizeof res->message, "gamma[%d] (blocks[%d]): initial guess not finite", first_bad,
                     ccp_work_row_block(w, first_bad));
            return DVI_ERR_INVALID_ARG;
        }
        if (scale != 1.0) {
#ifdef _OPENMP
#pragma omp parallel for schedule(static) num_threads(nt) if (nt > 1)
#endif
            for (int32_t i = 0; i < m; i++) gamma[i] *= scale;
        }
        if (solver->impl->targets_ccp) {
            /* keep the guess only if it is no worse than γ = 0 (f(0) = 0) */
            ccp_work_project(w, gamma);
            double* u = w->vec[DVI_WORK_VECTORS - 1];
            ccp_work_apply(w, gamma, u);
            double f = 0.5 * ccp_work_dot(w, gamma, u) + ccp_work_dot(w, p->r, gamma);
            if (!(f <= 0.0)) {
                memset(gamma, 0, (size_t)w->m * sizeof(double));
                res->warm_start_rejected = true;
            } else {
                w->guess_Ng = u; /* the solver may start from γ and this product */
            }
        }
    } else {
        memset(gamma, 0, (size_t)w->m * sizeof(double));
    }

    res->status = DVI_SOLVE_MAX_ITERATIONS;
    const ccp_solver_call call = {solver->state,
                                  solver->impl->inner_name ? ccp_solver_find(solver->impl->inner_name(s)) : NULL};
    st = solver->impl->solve(w, &call, s, gamma, res);
    if (st < 0) {
        if (res->status == DVI_SOLVE_MAX_ITERATIONS) res->status = DVI_SOLVE_BAD_INPUT;
        if (st == DVI_ERR_NOMEM && !res->message[0]) snprintf(res->message, sizeof res->message, "out of memory");
        res->seconds = ccp_seconds_now() - t0;
        return st;
    }

    res->pyramid_edges = w->pyramid_edges;
    /* fresh metrics on the returned γ (its product from the solver when it
     * has one: the same operations, so the same bits) */
    const double* u = w->u_final;
    if (!u) {
        double* v = w->vec[DVI_WORK_VECTORS - 1];
        ccp_work_apply(w, gamma, v);
        for (int32_t i = 0; i < w->m; i++) v[i] += p->r[i];
        u = v;
    }
    w->u_final = NULL;
    ccp_ray_sums ray;
    ccp_work_metrics(w, gamma, u, &res->metrics, &ray);
    if (!isfinite(res->metrics.residual)) {
        res->status = DVI_SOLVE_DIVERGED;
        if (!res->message[0]) snprintf(res->message, sizeof res->message, "the iterates became non-finite");
    }
    if (solver->impl->targets_ccp) {
        /* the stopping test: the CCP and velocity residuals within the
         * tolerance and every block's own within block_tolerance (the
         * block's is computed once the first is, ccp_work_residual_checked);
         * the solve's residual is the larger of the first two, or the
         * block's in units of the tolerance when that one fails */
        const double rv = res->metrics.residual_velocity, rb = res->metrics.residual_block;
        res->target_residual = rv > res->metrics.residual ? rv : res->metrics.residual;
        if (res->metrics.residual <= s->tolerance)
            res->target_residual = ccp_max_nan(res->target_residual, ccp_block_in_tol(w, rb, s->tolerance));
        if (res->status == DVI_SOLVE_CONVERGED && !(res->metrics.residual <= s->tolerance)) {
            res->status = DVI_SOLVE_MAX_ITERATIONS;
            snprintf(res->message, sizeof res->message,
                     "stopping test met internally but the fresh residual %.3e exceeds the tolerance %.3e",
                     res->metrics.residual, s->tolerance);
        } else if (res->status == DVI_SOLVE_CONVERGED && !(rv <= s->tolerance)) {
            res->status = DVI_SOLVE_MAX_ITERATIONS;
            snprintf(res->message, sizeof res->message,
                     "the CCP residual %.3e is within the tolerance but the velocity residual %.3e is not (impulses "
                     "tiny beside the velocities?)",
                     res->metrics.residual, rv);
        } else if (res->status == DVI_SOLVE_CONVERGED && !(rb <= w->block_tol)) {
            res->status = DVI_SOLVE_MAX_ITERATIONS;
            snprintf(res->message, sizeof res->message,
                     "the CCP residual %.3e is within the tolerance but a block's own residual is %.3e, above the "
                     "block tolerance %.3e (a block of small impulses and velocities beside large ones, short of "
                     "its answer)",
                     res->metrics.residual, rb, w->block_tol);
        }
    }
    if (solver->impl->law == DVI_LAW_COULOMB) {
        /* Coulomb's law has no objective and no velocity form: its residual
         * alone decides */
        res->target_residual = res->metrics.residual_coulomb;
        if (res->metrics.residual_coulomb <= s->tolerance) /* ccp_work_residual_coulomb_checked */
            res->target_residual = ccp_max_nan(ccp_max_nan(res->target_residual, res->metrics.residual_feasibility),
                                               ccp_block_in_tol(w, res->metrics.residual_block_coulomb, s->tolerance));
        if (res->status == DVI_SOLVE_CONVERGED && !(res->metrics.residual_coulomb <= s->tolerance)) {
            res->status = DVI_SOLVE_MAX_ITERATIONS;
            snprintf(res->message, sizeof res->message,
                     "stopping test met internally but the fresh Coulomb residual %.3e exceeds the tolerance %.3e",
                     res->metrics.residual_coulomb, s->tolerance);
        } else if (res->status == DVI_SOLVE_CONVERGED && !(res->metrics.residual_block_coulomb <= w->block_tol)) {
            res->status = DVI_SOLVE_MAX_ITERATIONS;
            snprintf(res->message, sizeof res->message,
                     "the Coulomb residual %.3e is within the tolerance but a block's own residual is %.3e, above "
                     "the block tolerance %.3e (a block of small impulses and velocities beside large ones, short "
                     "of its answer)",
                     res->metrics.residual_coulomb, res->metrics.residual_block_coulomb, w->block_tol);
        }
    }
    /* every solver: the rows on which all laws agree, in velocities (the
     * natural-map residuals above divide by max(‖r‖, ‖γ‖, ‖u‖), which a
     * large impulse elsewhere or a huge μ can make blind to them) */
    const double rf = res->metrics.residual_feasibility;
    if (res->status == DVI_SOLVE_CONVERGED && !(rf <= s->tolerance)) {
        res->status = DVI_SOLVE_MAX_ITERATIONS;
        snprintf(res->message, sizeof res->message,
                 "the %s residual %.3e is within the tolerance but the feasibility residual %.3e is not (a "
                 "bilateral row moving, or a contact approaching, at that fraction of the velocities)",
                 solver->impl->law == DVI_LAW_COULOMB ? "Coulomb" : solver->impl->targets_ccp ? "CCP" : "LCP",
                 solver->impl->law == DVI_LAW_COULOMB ? res->metrics.residual_coulomb
                 : solver->impl->targets_ccp        ? res->metrics.residual
                                                    : res->target_residual,
                 rf);
    }
    if (w->pyramid_edges > 0 && solver->impl->law != DVI_LAW_COULOMB && !s->lemke.coulomb) {
        /* Lemke: its one LCP residual divides by the whole problem's scale;
         * every block on its pyramid in its own units too */
        const double rp = ccp_work_block_pyramid(w, gamma, u);
        /* a pivoting method's answer is exact up to the rounding its pivots
         * amplify, which iterating cannot lower: the automatic block
         * tolerance is at least DVI_BLOCK_TOL_PIVOTING for it */
        if (!(s->block_tolerance > 0.0) && w->block_tol < DVI_BLOCK_TOL_PIVOTING) w->block_tol = DVI_BLOCK_TOL_PIVOTING;
        res->block_tolerance = w->block_tol;
        res->target_residual = ccp_max_nan(res->target_residual, ccp_block_in_tol(w, rp, s->tolerance));
        if (res->status == DVI_SOLVE_CONVERGED && !(rp <= w->block_tol)) {
            res->status = DVI_SOLVE_MAX_ITERATIONS;
            snprintf(res->message, sizeof res->message,
                     "the LCP residual is within the tolerance but a block's own residual on its pyramid is %.3e, "
                     "above the block tolerance %.3e (a block of small impulses and velocities beside large ones)",
                     rp, w->block_tol);
        }
    }
    if (res->status != DVI_SOLVE_BAD_INPUT && infeasible(w, gamma, u, &ray, res->message, sizeof res->message))
        res->status = DVI_SOLVE_INFEASIBLE;
    if (res->status == DVI_SOLVE_RAY) {
        /* Lemke's ray on a positive semidefinite LCP (no friction pyramids:
         * frictionless and bilateral rows only) proves it has no solution */
        bool psd = true;
        for (int32_t b = 0; b < w->nblocks; b++)
            if (p->blocks[b].kind != DVI_BLOCK_FRICTIONLESS && p->blocks[b].kind != DVI_BLOCK_BILATERAL) psd = false;
        if (psd) {
            res->status = DVI_SOLVE_INFEASIBLE;
            snprintf(res->message, sizeof res->message,
                     "infeasible: Lemke's ray termination on a positive semidefinite LCP (frictionless and bilateral "
                     "rows only) proves that no solution exists");
        }
    }
    res->seconds = ccp_seconds_now() - t0;
    return res->status == DVI_SOLVE_CONVERGED ? DVI_OK : DVI_NOT_CONVERGED;
}

dvi_status dvi_solver_solve(dvi_solver* solver, const dvi_ccp_problem* p, double* gamma, dvi_solve_result* result)
{
    dvi_solve_result local;
    dvi_solve_result* res = result ? result : &local;
    const dvi_status st = solver_solve(solver, p, gamma, res);
    if (st == DVI_OK) return st;
    /* one text: the result's message is the thread's */
    if (!res->message[0])
        snprintf(res->message, sizeof res->message, "solve ended %s after %d iterations (target residual %.3e)",
                 dvi_solve_status_string(res->status), (int)res->iterations, res->target_residual);
    return base_error_set(st, res->message);
}

dvi_status dvi_ccp_solve(const dvi_ccp_problem* p, const char* solver_name, const dvi_solver_settings* settings,
                         double* gamma, dvi_solve_result* result)
{
    dvi_solver* sv = NULL;
    dvi_status st = dvi_solver_create(solver_name, settings, &sv);
    if (st != DVI_OK) {
        if (result) {
            reset_result(result);
            snprintf(result->message, sizeof result->message, "%s", dvi_error_message());
        }
        return st;
    }
    st = dvi_solver_solve(sv, p, gamma, result);
    dvi_solver_destroy(sv);
    return st;
}
