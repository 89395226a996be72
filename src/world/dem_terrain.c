/* dvicontact — the hysteretic height-field contact of DEM mode: a vehicle's
 * surface sampled by points with elementary areas against a terrain given as
 * a height grid split into two triangles per cell (after S.V. Grigoriev,
 * "Modelling the dynamics of vehicles on complex relief", 2009).
 *
 *   terrain  the height field's grid: heights z(i, j) at (i dx, j dy) in the
 *            field's frame; cell (i, j) is split along the diagonal from
 *            (i, j) to (i+1, j+1) (the convention of collision.h) into
 *            A = (i,j), (i,j+1), (i+1,j+1)  [above the diagonal, fy > fx] and
 *            B = (i,j), (i+1,j), (i+1,j+1)  [below or on it].
 *   sample   a point p of a body's surface with elementary area S; z is the
 *            signed distance of p from the plane of the triangle under it,
 *            along that triangle's upward normal n (z < 0: inside).
 *   normal   F_n = −c S [1 − γ sgn(v_n)] z  for z < 0 (0 otherwise), along n:
 *            c is the stiffness of a unit area of ground (N/m³), γ ∈ [0, 1)
 *            the hysteresis (loading, v_n < 0: c(1 + γ); unloading: c(1 − γ)),
 *            v_n = v·n the sample's velocity along n.
 *   friction F_t = −μ F_n v_t/|v_t| (dry friction in the triangle's plane).
 * Both sign functions are regularised below a speed ε (settings
 * terrain_slip_speed): sgn_ε(v) = v / max(|v|, ε), which keeps the explicit
 * step stable at rest (the exact law is recovered as ε → 0; see docs/dem.md
 * for the step limit this sets).
 */
#include "dem.h"

#include "math3.h"

#include <math.h>

bool wld_dem_terrain_query(const col_heightfield* hf, const double p[3], double normal[3], double* z)
{
    if (!hf || hf->nx < 2 || hf->ny < 2 || !(hf->dx > 0.0) || !(hf->dy > 0.0)) return false;
    double gx = p[0] / hf->dx, gy = p[1] / hf->dy;
    if (!(gx >= 0.0) || !(gy >= 0.0) || !(gx <= (double)(hf->nx - 1)) || !(gy <= (double)(hf->ny - 1))) return false;
    int32_t i = (int32_t)gx, j = (int32_t)gy;
    if (i > hf->nx - 2) i = hf->nx - 2;
    if (j > hf->ny - 2) j = hf->ny - 2;
    double fx = gx - (double)i, fy = gy - (double)j;
    const double* H = hf->heights;
    double z00 = H[(size_t)j * (size_t)hf->nx + (size_t)i];
    double z10 = H[(size_t)j * (size_t)hf->nx + (size_t)i + 1];
    double z01 = H[((size_t)j + 1) * (size_t)hf->nx + (size_t)i];
    double z11 = H[((size_t)j + 1) * (size_t)hf->nx + (size_t)i + 1];
    double dx = hf->dx, dy = hf->dy, n[3];
    if (fy > fx) { /* A: (i,j), (i,j+1), (i+1,j+1) */
        n[0] = dy * (z01 - z11);
        n[1] = -dx * (z01 - z00);
    } else { /* B: (i,j), (i+1,j), (i+1,j+1) */
        n[0] = -dy * (z10 - z00);
        n[1] = dx * (z10 - z11);
    }
    n[2] = dx * dy;
    double len = v3_norm(n);
    v3_scale(normal, 1.0 / len, n);
    double q[3] = {p[0] - (double)i * dx, p[1] - (double)j * dy, p[2] - z00};
    *z = v3_dot(normal, q);
    return true;
}

double wld_dem_terrain_force(double c, double S, double gamma, double mu, double eps, double z, double vn,
                             const double vt[3], double ft[3])
{
    ft[0] = ft[1] = ft[2] = 0.0;
    if (!(z < 0.0)) return 0.0;
    double sgn = vn / fmax(fabs(vn), eps);
    double fn = -c * S * (1.0 - gamma * sgn) * z;
    if (fn < 0.0) fn = 0.0;
    double s = v3_norm(vt);
    v3_scale(ft, -mu * fn / fmax(s, eps), vt);
    return fn;
}
