/* dvicontact — mass properties of a scene's shapes (scene_internal.h):
 * volume and inertia per unit mass of the bounded solids, for a body's
 * "density" and "inertia": "auto".
 */
#include "scene_internal.h"

#include "math3.h"

bool sc_shape_mass_properties(const sc_shape* sh, double* volume, double J[9])
{
    const double pi = 3.14159265358979323846;
    double r = sh->radius, hl = sh->half_length, d[3];
    switch (sh->type) {
    case DVI_SHAPE_SPHERE:
        *volume = 4.0 / 3.0 * pi * r * r * r;
        d[0] = d[1] = d[2] = 0.4 * r * r;
        break;
    case DVI_SHAPE_BOX: {
        const double* a = sh->half;
        *volume = 8.0 * a[0] * a[1] * a[2];
        d[0] = (a[1] * a[1] + a[2] * a[2]) / 3.0;
        d[1] = (a[0] * a[0] + a[2] * a[2]) / 3.0;
        d[2] = (a[0] * a[0] + a[1] * a[1]) / 3.0;
        break;
    }
    case DVI_SHAPE_CYLINDER:
        *volume = 2.0 * pi * r * r * hl;
        d[0] = d[1] = r * r / 4.0 + hl * hl / 3.0;
        d[2] = r * r / 2.0;
        break;
    case DVI_SHAPE_CAPSULE: {
        /* a cylinder of length 2·hl and two hemispheres (their centres of
         * mass 3r/8 beyond the cylinder's ends), mass shared by volume */
        double vc = 2.0 * pi * r * r * hl, vs = 4.0 / 3.0 * pi * r * r * r, v = vc + vs;
        double fc = vc / v, fs = vs / v;
        *volume = v;
        d[0] = d[1] = fc * (r * r / 4.0 + hl * hl / 3.0) + fs * (0.4 * r * r + hl * hl + 0.75 * hl * r);
        d[2] = fc * r * r / 2.0 + fs * 0.4 * r * r;
        break;
    }
    default:
        return false;
    }
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
