/* dvicontact — the material pair rule: what a contact between two shapes
 * takes from their two materials (docs/scene-format.md#materials). One
 * definition for the DVI and the DEM step. */
#ifndef DVI_MATERIAL_PAIR_H
#define DVI_MATERIAL_PAIR_H

#include "dvi/world.h"

#include <math.h>

typedef struct wld_material_pair {
    double mu, mu_roll, mu_spin; /* the smaller of the two friction coefficients */
    double restitution;          /* the larger */
    double compliance;           /* the sum */
} wld_material_pair;

static inline wld_material_pair wld_pair_of(const dvi_material* a, const dvi_material* b)
{
    wld_material_pair p;
    p.mu = fmin(a->friction, b->friction);
    p.mu_roll = fmin(a->rolling_friction, b->rolling_friction);
    p.mu_spin = fmin(a->spinning_friction, b->spinning_friction);
    p.restitution = fmax(a->restitution, b->restitution);
    p.compliance = a->compliance + b->compliance;
    return p;
}

#endif /* DVI_MATERIAL_PAIR_H */
