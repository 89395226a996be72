/* dvicontact — internal: Lemke's complementary pivoting on a dense LCP.
 *
 * The pure LCP kernel behind the "lemke" solver (src/ccp/lemke.c), exposed
 * so that tests and tools can run textbook LCPs directly:
 *
 *     find z ≥ 0 with  w = M z + q ≥ 0  and  wᵀz = 0,   M dense n × n.
 *
 * Nothing here allocates: the caller passes a workspace of
 * ccp_lemke_lcp_work_size(n) bytes (8-byte aligned at least; 64 is better).
 */
#ifndef DVI_LEMKE_H
#define DVI_LEMKE_H

#include "dvi/ccp.h"

struct ccp_work;

/* Bytes of workspace ccp_lemke_lcp() needs for an LCP of size n, or 0 when
 * n < 0 or the size does not fit in size_t. */
size_t ccp_lemke_lcp_work_size(int32_t n);

/* Solves LCP(M, q) by Lemke's method (covering vector e = 1, lexicographic
 * ratio test). M is row-major n × n, q and z have n entries; work holds
 * ccp_lemke_lcp_work_size(n) bytes. max_pivots ≤ 0 means 50·n, for all
 * attempts together. When the first attempt's answer has an LCP residual
 * (ccp_lemke_lcp_residual) above `tolerance`, a second attempt on another
 * path (covering vector, see lemke.c) is made and the better answer kept;
 * tolerance = +∞ never retries.
 *
 * On return *pivots (may be NULL) is the number of pivots performed and
 * *status (may be NULL) one of
 *   DVI_SOLVE_CONVERGED    a complementary basis was reached (z0 left); z is
 *                          its solution (not yet checked against a tolerance:
 *                          use ccp_lemke_lcp_residual);
 *   DVI_SOLVE_RAY          secondary ray: no blocking row for the entering
 *                          variable; z is the last almost-complementary point
 *                          (not a solution);
 *   DVI_SOLVE_PIVOT_LIMIT  max_pivots spent; z as for RAY;
 *   DVI_SOLVE_DIVERGED     the basis became numerically singular or non-finite
 *                          values appeared (return value < 0);
 *   DVI_SOLVE_BAD_INPUT    bad arguments (return value DVI_ERR_INVALID_ARG).
 * Returns DVI_OK (converged), DVI_NOT_CONVERGED (ray, pivot limit),
 * DVI_ERR_INVALID_ARG, DVI_ERR_NUMERIC (non-finite data) or DVI_ERR_SINGULAR. */
dvi_status ccp_lemke_lcp(int32_t n, const double* M, const double* q, double* z, int32_t max_pivots,
                         double tolerance, void* work, int32_t* pivots, dvi_solve_status* status);

/* LCP residual of z:  w = M z + q is computed afresh into w[n] (may be NULL
 * when n == 0), and  ‖min(z, w)‖₂ / max(1, ‖q‖₂, ‖|M||z|‖₂)  is returned
 * (componentwise min, so a negative z_i or w_i counts as well as a violated
 * wᵀz = 0). The scale is that of the terms w sums (|M||z| and q), so that
 * the residual is relative to the problem's own size: rounding in w is
 * ε·|M||z|, whatever the units of q. */
double ccp_lemke_lcp_residual(int32_t n, const double* M, const double* q, const double* z, double* w);

/* The "lemke" solver's body on a prepared work (see lemke.c): dense N, Schur
 * complement of the bilateral rows, pyramid LCP, Lemke, back to γ[m].
 * relaxed = false: the Anitescu–Potra LCP (w_n = u_n; settings.lemke.coulomb
 * = true). relaxed = true (the default of the registered solver): w_n = u_n − μλ (− μ_spin λ_s − μ_roll λ_r), the
 * optimality conditions of  min ½γᵀNγ + rᵀγ  over the pyramids, i.e. the
 * CCP of ccp.h with K replaced by the pyramid (converges to the CCP answer
 * as k grows; its LCP matrix is positive semidefinite). */
dvi_status ccp_lemke_ccp(struct ccp_work* w, const dvi_solver_settings* s, bool relaxed, double* gamma,
                         dvi_solve_result* res);

#endif /* DVI_LEMKE_H */
