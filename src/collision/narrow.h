/* dvicontact — internal: narrow-phase routines, one per pair of shape types.
 *
 * Every routine has the signature of dvi_narrow_fn: geoms a and b (of the
 * types in its name, in that order), the envelope, an output array with room
 * for `max` points (max ≥ 8). It writes points with Φ ≤ envelope, normals
 * pointing from a to b, `point` midway between the two surfaces, and a
 * `feature` id stable from step to step for the same geometric feature pair
 * (e.g. the index of a box corner); geom_a/geom_b are filled by the caller.
 * It returns the number of points written. The dispatcher (narrow.c) orders
 * each pair by type and flips normals when it swaps a and b.
 */
#ifndef DVI_NARROW_H
#define DVI_NARROW_H

#include "collision.h"

typedef int dvi_narrow_fn(const dvi_geom* a, const dvi_geom* b, double envelope, dvi_contact_point* out, int max);

/* narrow_sphere.c: spheres and capsules */
dvi_narrow_fn dvi_collide_sphere_sphere, dvi_collide_sphere_box, dvi_collide_sphere_capsule,
    dvi_collide_sphere_plane, dvi_collide_capsule_capsule, dvi_collide_capsule_box, dvi_collide_capsule_plane;
/* narrow_box.c: boxes (multi-point manifolds) */
dvi_narrow_fn dvi_collide_box_box, dvi_collide_box_plane;
/* narrow_cylinder.c: cylinders */
dvi_narrow_fn dvi_collide_sphere_cylinder, dvi_collide_box_cylinder, dvi_collide_capsule_cylinder,
    dvi_collide_cylinder_cylinder, dvi_collide_cylinder_plane;
/* narrow_terrain.c: height fields and triangle meshes against the convex shapes */
dvi_narrow_fn dvi_collide_sphere_heightfield, dvi_collide_box_heightfield, dvi_collide_capsule_heightfield,
    dvi_collide_cylinder_heightfield, dvi_collide_sphere_mesh, dvi_collide_box_mesh, dvi_collide_capsule_mesh,
    dvi_collide_cylinder_mesh;
/* gjk.c: any two convex shapes (kinds with a support function), one point;
 * a convex shape (a) and a plane (b), one point */
dvi_narrow_fn dvi_collide_convex, dvi_collide_convex_plane;

/* Column i (a local axis in world coordinates) of a row-major rotation. */
static inline void dvi_rot_column(const double* rot, int i, double c[3])
{
    c[0] = rot[i];
    c[1] = rot[3 + i];
    c[2] = rot[6 + i];
}

/* manifold.c: copies what a routine owns of a point (not geom_a/geom_b). */
void dvi_put_point(dvi_contact_point* dst, const dvi_contact_point* src);
/* manifold.c: keeps at most 4 of the n points (the deepest, the farthest from
 * it, then the two adding most area in the plane ⊥ normal), in their
 * original order; returns the count. */
int dvi_reduce_to_4(dvi_contact_point* p, int n, const double normal[3]);

/* Support point of a convex geom in world direction d (gjk.c). */
void dvi_geom_support(const dvi_geom* g, const double d[3], double out[3]);

#endif /* DVI_NARROW_H */
