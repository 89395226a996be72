/* dvicontact — mass properties of a scene's shapes (scene_internal.h):
 * volume and inertia per unit mass of the bounded solids, for a body's
 * "density" and "inertia": "auto".
 */
#include "scene_internal.h"

#include "math3.h"

bool sc_shape_mass_properties(const sc_shape* sh, double* volume, double J[9])
{
    const col_shape_class* c = col_shape_class_of(sh->type);
    if (!c || !c->mass) return false;
    col_geom g = sc_shape_geom(sh);
    double d[3];
    c->mass(&g, volume, d);
    /* rotate into the body frame: R diag(d) Rᵀ */
    double R[9];
    q_to_m3(R, sh->q);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            J[3 * i + j] = R[3 * i + 0] * d[0] * R[3 * j + 0] + R[3 * i + 1] * d[1] * R[3 * j + 1] +
                           R[3 * i + 2] * d[2] * R[3 * j + 2];
    for (int i = 0; i < 3; i++) /* exact symmetry */
        for (int j = i + 1; j < 3; j++) J[3 * j + i] = J[3 * i + j];
    return true;
}
