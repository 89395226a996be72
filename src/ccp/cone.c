/* dvicontact — projections onto the sets K of the constraint blocks.
 *
 *   bilateral     K = R                      Π(x) = x
 *   frictionless  K = R+                     Π(x) = max(x, 0)
 *   friction      K = {‖t‖ ≤ μ n}            closed form (ARCHITECTURE.md):
 *       ‖t‖ ≤ μ n: x;   μ‖t‖ ≤ −n: 0;   else n' = (μ‖t‖ + n)/(μ²+1), t' = μ n' t/‖t‖
 *   friction + rolling  K = {‖t‖ ≤ μ n, |s| ≤ μ_s n, ‖ρ‖ ≤ μ_r n}
 *       For a fixed n' the nearest point clips t, s and ρ to their balls, so
 *       the projection minimises over n' ≥ 0 the convex piecewise quadratic
 *         φ(n') = (n'−n)² + Σ_i (a_i − μ_i n')₊²,   a_i = ‖part i‖,
 *       whose derivative is piecewise linear and increasing: the root is found
 *       exactly by walking the (at most three) breakpoints a_i/μ_i.
 * The dual-cone projection follows from Moreau's decomposition:
 *   Π_K*(u) = u + Π_K(−u).
 * The friction cone's projection and the dispatch by kind are inline in
 * ccp_work.h (ccp_project_friction, ccp_cone_project); the rolling block's
 * is here.
 */
#include "ccp_work.h"

#include <math.h>

/* The walk over the breakpoints, given the coefficients c (each clamped
 * to ≥ 0) and the squared norms t2, r2 of x's parts t and ρ. The
 * breakpoints are sorted by a min/max network and the parts' terms formed
 * once: the same decisions and sums as a walk that sorts by insertion and
 * forms them per interval (tests/test_cone.c keeps that one and compares
 * the bits), at about half its cost, which on a settled pile with spinning
 * and rolling friction was half of APGD's time. */
static void rolling_walk(const double c[3], double t2, double r2, double* x)
{
    const double n0 = x[0];
    const double a0 = sqrt(t2), a1 = fabs(x[3]), a2 = sqrt(r2);

    /* breakpoints b_i = a_i / c_i (≥ 0), for parts that can be non-zero */
    const double b0 = (c[0] > 0.0 && a0 > 0.0) ? a0 / c[0] : 0.0;
    const double b1 = (c[1] > 0.0 && a1 > 0.0) ? a1 / c[1] : 0.0;
    const double b2 = (c[2] > 0.0 && a2 > 0.0) ? a2 / c[2] : 0.0;
    const double lo01 = b0 < b1 ? b0 : b1, hi01 = b0 < b1 ? b1 : b0;
    const double mid = hi01 < b2 ? hi01 : b2;
    const double order[5] = {0.0, lo01 < b2 ? lo01 : b2, lo01 < mid ? mid : lo01, hi01 < b2 ? b2 : hi01, INFINITY};
    const double ca[3] = {c[0] * a0, c[1] * a1, c[2] * a2}, cc[3] = {c[0] * c[0], c[1] * c[1], c[2] * c[2]};

    /* φ'(n')/2 = n' − n0 − Σ_{i: b_i > n'} c_i (a_i − c_i n'). Walk intervals
     * [lo, hi) between sorted breakpoints; in each the active set is fixed. */
    double np = order[3];
    for (int k = 0; k < 4; k++) {
        const double lo = order[k], hi = order[k + 1];
        if (hi <= lo && k < 3) continue;
        double num = n0, den = 1.0;
        if (b0 > lo) num += ca[0], den += cc[0]; /* active on (lo, hi) */
        if (b1 > lo) num += ca[1], den += cc[1];
        if (b2 > lo) num += ca[2], den += cc[2];
        const double cand = num / den;
        if (cand <= lo) { /* derivative ≥ 0 already at lo */
            np = lo;
            break;
        }
        if (cand < hi) {
            np = cand;
            break;
        }
    }
    if (np < 0.0) np = 0.0;

    x[0] = np;
    const double lim0 = c[0] * np, lim1 = c[1] * np, lim2 = c[2] * np;
    const double sc0 = a0 > lim0 ? (a0 > 0.0 ? lim0 / a0 : 0.0) : 1.0;
    const double sc2 = a2 > lim2 ? (a2 > 0.0 ? lim2 / a2 : 0.0) : 1.0;
    x[1] *= sc0;
    x[2] *= sc0;
    if (a1 > lim1) x[3] = x[3] > 0.0 ? lim1 : -lim1;
    x[4] *= sc2;
    x[5] *= sc2;
}

/* Projection onto {‖t‖ ≤ μ n, |s| ≤ μs n, ‖ρ‖ ≤ μr n}; x = (n, t1, t2, s, ρ1, ρ2). */
void ccp_project_rolling(double mu, double mu_s, double mu_r, double* x)
{
    const double c[3] = {mu > 0.0 ? mu : 0.0, mu_s > 0.0 ? mu_s : 0.0, mu_r > 0.0 ? mu_r : 0.0};
    const double n0 = x[0];
    /* Well inside K: nothing to do, and no root or division taken. Most
     * blocks of a resting pile are inside at every iteration, and this is
     * the solvers' hottest function on piles with spinning and rolling
     * friction. The margin (1e-9 relative) keeps the points on or near the
     * surface for the walk, so the answer has the same bits as
     * without this test (the walk returns such points unchanged too, but
     * only when its rounding agrees; tests/test_cone.c compares both on
     * millions of points). */
    const double t2 = x[1] * x[1] + x[2] * x[2], r2 = x[4] * x[4] + x[5] * x[5];
    if (n0 > 0.0) {
        const double in = 1.0 - 1e-9, cn0 = c[0] * n0, cn1 = c[1] * n0, cn2 = c[2] * n0;
        if ((c[0] == 0.0 || t2 <= in * (cn0 * cn0)) && (c[1] == 0.0 || fabs(x[3]) <= in * cn1) &&
            (c[2] == 0.0 || r2 <= in * (cn2 * cn2))) {
            /* a part whose coefficient is 0 is cleared, as the walk does (by the same
             * multiplications, so a signed zero stays as it was) */
            if (c[0] == 0.0 && t2 > 0.0) {
                x[1] *= 0.0;
                x[2] *= 0.0;
            }
            if (c[1] == 0.0 && fabs(x[3]) > 0.0) x[3] = x[3] > 0.0 ? 0.0 : -0.0;
            if (c[2] == 0.0 && r2 > 0.0) {
                x[4] *= 0.0;
                x[5] *= 0.0;
            }
            return;
        }
    }
    rolling_walk(c, t2, r2, x);
}

/* The walk alone, for any x (tests/test_cone.c compares it with the above). */
void ccp_project_rolling_walk(double mu, double mu_s, double mu_r, double* x)
{
    const double c[3] = {mu > 0.0 ? mu : 0.0, mu_s > 0.0 ? mu_s : 0.0, mu_r > 0.0 ? mu_r : 0.0};
    rolling_walk(c, x[1] * x[1] + x[2] * x[2], x[4] * x[4] + x[5] * x[5], x);
}

int32_t dvi_block_rows(dvi_block_kind kind)
{
    switch (kind) {
    case DVI_BLOCK_BILATERAL: return 1;
    case DVI_BLOCK_FRICTIONLESS: return 1;
    case DVI_BLOCK_FRICTION: return 3;
    case DVI_BLOCK_FRICTION_ROLLING: return 6;
    }
    return 0;
}
