/* dvicontact — internal: the CCP of a nonsymmetric operator, by splitting.
 *
 * The solvers need a symmetric operator (they minimise a quadratic, and
 * dvi_ccp_validate tests W to 1e-9). A problem whose operator W is not
 * symmetric is solved around its symmetric part W_s = (W + Wᵀ)/2 by the
 * splitting
 *
 *     γ_{k+1} = the solution of the CCP (W_s, r + (W − W_s) γ_k),
 *
 * each solve warm-started from γ_k, which converges in a few outer steps
 * when W is nearly symmetric (FCLIB's Siconos problems, asymmetric by about
 * 1e-4 in norm: docs/fclib.md). dvi_fclib_solve (src/io/fclib_read.c) calls it
 * for the local FCLIB problems whose W is not symmetric.
 */
#ifndef DVI_CCP_SPLIT_H
#define DVI_CCP_SPLIT_H

#include "dvi/ccp.h"

/* Solves the CCP with the blocks and r of p and the operator W (rows × rows,
 * not necessarily symmetric), p being in the W form with its symmetric part
 * p->W = W_s, by the splitting above, with the built-in solver
 * `solver_name` and `settings` (NULL: the defaults); gamma as in
 * dvi_ccp_solve. The splitting stops when the CCP residual against W
 * (ccp_evaluate_with) is at most settings.tolerance (CCP solvers), when
 * the Coulomb residual against W is (nsgs, desaxce), or, for Lemke (whose
 * target is its pyramid LCP), when the step ‖γ_{k+1} − γ_k‖ is at most
 * tolerance·‖γ_{k+1}‖. settings.max_iterations bounds the iterations of all
 * the solves together; a CCP or Coulomb solver gets a quarter of what is
 * left (at least 100) per solve and the splitting goes on
 * after a solve that ran out of it (Lemke: its own pivot budget per solve,
 * at most 100 solves, and it stops when a solve does not converge).
 * result (may be NULL): status, iterations (the total), target_residual,
 * metrics (against W, of the returned γ), seconds (the whole call); no
 * history. Returns as dvi_ccp_solve; an unknown solver, a problem not in
 * the W form or a W of another size is DVI_ERR_INVALID_ARG
 * (DVI_SOLVE_BAD_INPUT, with a message). */
dvi_status ccp_solve_split(const char* solver_name, const dvi_solver_settings* settings,
                               const dvi_ccp_problem* p, const dvi_csc* W, double* gamma,
                               dvi_solve_result* result);

#endif /* DVI_CCP_SPLIT_H */
