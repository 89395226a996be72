/* dvicontact — the CCP of a nonsymmetric operator W, by splitting around
 * its symmetric part (src/ccp/ccp_split.h). Each step solves a CCP of the
 * symmetric part with the library's solvers, so this file holds only the
 * outer iteration: the right-hand side r + (W − W_s) γ_k, the budget of
 * each inner solve and the stopping tests. */
#include "ccp_split.h"
#include "ccp_work.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SPLIT_MAX_SOLVES 100 /* Lemke: solves of the splitting at most */

dvi_status ccp_solve_split(const char* solver_name, const dvi_solver_settings* settings,
                               const dvi_ccp_problem* p, const dvi_csc* W, double* gamma,
                               dvi_solve_result* result)
{
    dvi_solve_result local;
    dvi_solve_result* res = result ? result : &local;
    const double t0 = ccp_seconds_now();
    memset(res, 0, sizeof *res);
    const ccp_solver_impl* impl = ccp_solver_find(solver_name);
    if (!impl || !p || !W || !gamma || !p->W || W->rows != p->rows || W->cols != p->rows) {
        res->status = DVI_SOLVE_BAD_INPUT;
        snprintf(res->message, sizeof res->message, "%s",
                 !impl                ? "unknown solver"
                 : !p || !W || !gamma ? "NULL argument"
                 : !p->W              ? "the splitting needs a problem in the W form (its symmetric part)"
                                      : "W: not rows x rows of the problem");
        return DVI_ERR_INVALID_ARG;
    }
    const int32_t m = p->rows;
    /* an iterative solver of Coulomb's law (nsgs, desaxce) is run as the
     * CCP solvers are, with the Coulomb residual against W as the test */
    const bool coulomb = impl->law == DVI_LAW_COULOMB;
    const bool iterative = impl->targets_ccp || coulomb;
    dvi_solver_settings s = settings ? *settings : dvi_default_solver_settings();
    dvi_solver* solver = NULL;
    dvi_status st = dvi_solver_create(solver_name, &s, &solver);
    double* rk = st != DVI_OK ? NULL : base_mem_alloc(&s.allocator, ((size_t)m + 1) * sizeof(double));
    double* prev = st != DVI_OK ? NULL : base_mem_alloc(&s.allocator, ((size_t)m + 1) * sizeof(double));
    double* ws = st != DVI_OK ? NULL : base_mem_alloc(&s.allocator, ((size_t)m + 1) * sizeof(double));
    if (st != DVI_OK || !rk || !prev || !ws) {
        dvi_solver_destroy(solver);
        base_mem_free(&s.allocator, rk);
        base_mem_free(&s.allocator, prev);
        base_mem_free(&s.allocator, ws);
        res->status = DVI_SOLVE_BAD_INPUT;
        snprintf(res->message, sizeof res->message, "%s",
                 st != DVI_OK ? "invalid solver settings" : "out of memory");
        return st != DVI_OK ? st : DVI_ERR_NOMEM;
    }
    if (!s.warm_start)
        for (int32_t i = 0; i < m; i++) gamma[i] = 0.0;
    const dvi_csc* Ws = p->W;
    dvi_ccp_problem pk = *p;
    pk.r = rk;
    int64_t total = 0;
    dvi_solve_result rs;
    dvi_ccp_metrics met;
    memset(&met, 0, sizeof met);
    for (int32_t solve = 0;; solve++) {
        /* r_k = r + (W − W_s) γ_k */
        ccp_csc_mul(W, gamma, rk);
        ccp_csc_mul(Ws, gamma, ws);
        for (int32_t i = 0; i < m; i++) rk[i] = p->r[i] + (rk[i] - ws[i]);
        dvi_solver_settings sk = s;
        sk.warm_start = solve > 0 || s.warm_start;
        /* CCP solvers get a slice of what is left (a quarter, at least 100), so that an inner solve
           that cannot reach the tolerance does not stop the splitting after its first step */
        int64_t left = (int64_t)s.max_iterations - total;
        int64_t slice = iterative ? left / 4 : left;
        if (slice < 100) slice = left < 100 ? left : 100;
        sk.max_iterations = (int32_t)(slice > 1 ? slice : 1);
        memcpy(prev, gamma, (size_t)m * sizeof(double));
        memset(&rs, 0, sizeof rs);
        st = dvi_solver_set_settings(solver, &sk);
        if (st == DVI_OK) st = dvi_solver_solve(solver, &pk, gamma, &rs);
        total += rs.iterations;
        if (st < 0) {
            *res = rs;
            break;
        }
        st = ccp_evaluate_with(p, W, gamma, &met);
        if (st != DVI_OK) {
            *res = rs;
            snprintf(res->message, sizeof res->message, "evaluating the residual against W failed");
            break;
        }
        double d = 0.0, g = 0.0;
        for (int32_t i = 0; i < m; i++) {
            d += (gamma[i] - prev[i]) * (gamma[i] - prev[i]);
            g += gamma[i] * gamma[i];
        }
        d = sqrt(d);
        g = sqrt(g);
        *res = rs;
        bool inner_ok = rs.status == DVI_SOLVE_CONVERGED;
        /* the feasibility residual too, as the driver asks of every solve (docs/solvers.md) */
        const bool feasible = met.residual_feasibility <= s.tolerance;
        if (feasible &&
            ((impl->targets_ccp && met.residual <= s.tolerance && met.residual_block <= ccp_block_tolerance(&s, p->block_count)) ||
             (coulomb && met.residual_coulomb <= s.tolerance && met.residual_block_coulomb <= ccp_block_tolerance(&s, p->block_count)))) {
            res->status = DVI_SOLVE_CONVERGED;
            break;
        }
        if (!iterative && inner_ok && feasible && d <= s.tolerance * (g > 1e-300 ? g : 1.0)) {
            res->status = DVI_SOLVE_CONVERGED;
            break;
        }
        bool stalled = d <= 1e-15 * (g > 1e-300 ? g : 1.0);
        bool go_on = inner_ok || (iterative && rs.status == DVI_SOLVE_MAX_ITERATIONS); /* inexact step */
        if (!go_on || total >= s.max_iterations || stalled || (!iterative && solve + 1 >= SPLIT_MAX_SOLVES)) {
            if (go_on) res->status = DVI_SOLVE_MAX_ITERATIONS;
            break;
        }
    }
    if (st >= 0) {
        res->iterations = (int32_t)(total > INT32_MAX ? INT32_MAX : total);
        res->metrics = met;
        if (impl->targets_ccp) res->target_residual = met.residual;
        if (coulomb) res->target_residual = met.residual_coulomb;
        st = res->status == DVI_SOLVE_CONVERGED ? DVI_OK : DVI_NOT_CONVERGED;
    }
    res->seconds = ccp_seconds_now() - t0;
    dvi_solver_destroy(solver);
    base_mem_free(&s.allocator, rk);
    base_mem_free(&s.allocator, prev);
    base_mem_free(&s.allocator, ws);
    return st;
}
