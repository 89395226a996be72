/* dvicontact — narrow-phase dispatch (see narrow.h). */
#include "narrow.h"

#include <stddef.h>

/* Routine for types (ta, tb) with ta ≤ tb, or NULL when the pair never
 * collides (two unbounded static shapes). Shape types are numbered
 * sphere 1, box 2, capsule 3, cylinder 4, plane 5, heightfield 6, mesh 7. */
static dvi_narrow_fn* routine(dvi_shape_type ta, dvi_shape_type tb)
{
    switch (ta) {
    case DVI_SHAPE_SPHERE:
        switch (tb) {
        case DVI_SHAPE_SPHERE: return dvi_collide_sphere_sphere;
        case DVI_SHAPE_BOX: return dvi_collide_sphere_box;
        case DVI_SHAPE_CAPSULE: return dvi_collide_sphere_capsule;
        case DVI_SHAPE_CYLINDER: return dvi_collide_sphere_cylinder;
        case DVI_SHAPE_PLANE: return dvi_collide_sphere_plane;
        case DVI_SHAPE_HEIGHTFIELD: return dvi_collide_sphere_heightfield;
        case DVI_SHAPE_MESH: return dvi_collide_sphere_mesh;
        }
        return NULL;
    case DVI_SHAPE_BOX:
        switch (tb) {
        case DVI_SHAPE_BOX: return dvi_collide_box_box;
        case DVI_SHAPE_CAPSULE: return NULL; /* handled as capsule–box below */
        case DVI_SHAPE_CYLINDER: return dvi_collide_box_cylinder;
        case DVI_SHAPE_PLANE: return dvi_collide_box_plane;
        case DVI_SHAPE_HEIGHTFIELD: return dvi_collide_box_heightfield;
        case DVI_SHAPE_MESH: return dvi_collide_box_mesh;
        default: return NULL;
        }
    case DVI_SHAPE_CAPSULE:
        switch (tb) {
        case DVI_SHAPE_CAPSULE: return dvi_collide_capsule_capsule;
        case DVI_SHAPE_CYLINDER: return dvi_collide_capsule_cylinder;
        case DVI_SHAPE_PLANE: return dvi_collide_capsule_plane;
        case DVI_SHAPE_HEIGHTFIELD: return dvi_collide_capsule_heightfield;
        case DVI_SHAPE_MESH: return dvi_collide_capsule_mesh;
        default: return NULL;
        }
    case DVI_SHAPE_CYLINDER:
        switch (tb) {
        case DVI_SHAPE_CYLINDER: return dvi_collide_cylinder_cylinder;
        case DVI_SHAPE_PLANE: return dvi_collide_cylinder_plane;
        case DVI_SHAPE_HEIGHTFIELD: return dvi_collide_cylinder_heightfield;
        case DVI_SHAPE_MESH: return dvi_collide_cylinder_mesh;
        default: return NULL;
        }
    default:
        return NULL; /* plane, height field and mesh are static: they never meet each other */
    }
}

static void flip(dvi_contact_point* p, int n)
{
    for (int i = 0; i < n; i++)
        for (int k = 0; k < 3; k++) p[i].normal[k] = -p[i].normal[k];
}

int dvi_narrow_phase(const dvi_geom* a, const dvi_geom* b, double envelope, dvi_contact_point* out, int max)
{
    /* capsule–box has its routine in the (capsule, box) order */
    if (a->type == DVI_SHAPE_CAPSULE && b->type == DVI_SHAPE_BOX)
        return dvi_collide_capsule_box(a, b, envelope, out, max);
    if (a->type == DVI_SHAPE_BOX && b->type == DVI_SHAPE_CAPSULE) {
        int n = dvi_collide_capsule_box(b, a, envelope, out, max);
        flip(out, n);
        return n;
    }
    if (a->type <= b->type) {
        dvi_narrow_fn* f = routine(a->type, b->type);
        return f ? f(a, b, envelope, out, max) : 0;
    }
    dvi_narrow_fn* f = routine(b->type, a->type);
    if (!f) return 0;
    int n = f(b, a, envelope, out, max);
    flip(out, n);
    return n;
}
