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
 * ccp_work.h (dvi_project_friction, dvi_cone_project); the rolling block's
 * is here.
 */
#include "ccp_work.h"

#include <math.h>

/* The walk over the breakpoints, given the coefficients c (each clamped
 * to ≥ 0) and the squared norms t2, r2 of x's parts t and ρ. */
static void rolling_walk(const double c[3], double t2, double r2, double* x)
{
    double a[3];
    const double n0 = x[0];
    a[0] = sqrt(t2);
    a[1] = fabs(x[3]);
    a[2] = sqrt(r2);

    /* breakpoints b_i = a_i / c_i, for parts that can be non-zero */
    double b[3];
    for (int i = 0; i < 3; i++) b[i] = (c[i] > 0.0 && a[i] > 0.0) ? a[i] / c[i] : 0.0;

    /* φ'(n')/2 = n' − n0 − Σ_{i: b_i > n'} c_i (a_i − c_i n'). Walk intervals
     * [lo, hi) between sorted breakpoints; in each the active set is fixed. */
    double order[4] = {0.0, b[0], b[1], b[2]};
    for (int i = 1; i < 4; i++)               /* insertion sort, 4 entries */
        for (int j = i; j > 0 && order[j] < order[j - 1]; j--) {
            double t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    double np = 0.0;
    bool found = false;
    for (int k = 0; k < 4 && !found; k++) {
        double lo = order[k];
        double hi = k < 3 ? order[k + 1] : INFINITY;
        if (hi <= lo && k < 3) continue;
        double num = n0, den = 1.0;
        for (int i = 0; i < 3; i++)
            if (b[i] > lo) {                  /* active on (lo, hi) */
                num += c[i] * a[i];
                den += c[i] * c[i];
            }
        double cand = num / den;
        if (cand <= lo) {                     /* derivative ≥ 0 already at lo */
            np = lo;
            found = true;
        } else if (cand < hi) {
            np = cand;
            found = true;
        }
    }
    if (!found) np = order[3];
    if (np < 0.0) np = 0.0;

    x[0] = np;
    double lim[3] = {c[0] * np, c[1] * np, c[2] * np};
    double sc0 = a[0] > lim[0] ? (a[0] > 0.0 ? lim[0] / a[0] : 0.0) : 1.0;
    double sc2 = a[2] > lim[2] ? (a[2] > 0.0 ? lim[2] / a[2] : 0.0) : 1.0;
    x[1] *= sc0;
    x[2] *= sc0;
    if (a[1] > lim[1]) x[3] = x[3] > 0.0 ? lim[1] : -lim[1];
    x[4] *= sc2;
    x[5] *= sc2;
}

/* Projection onto {‖t‖ ≤ μ n, |s| ≤ μs n, ‖ρ‖ ≤ μr n}; x = (n, t1, t2, s, ρ1, ρ2). */
void dvi_project_rolling(double mu, double mu_s, double mu_r, double* x)
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
void dvi_project_rolling_walk(double mu, double mu_s, double mu_r, double* x)
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
