/* dvicontact — internal: narrow-phase routines, one per pair of shape types.
 *
 * Every routine has the signature of col_narrow_fn: geoms a and b (of the
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

typedef int col_narrow_fn(const col_geom* a, const col_geom* b, double envelope, col_contact_point* out, int max);

/* narrow_sphere.c: spheres and capsules */
col_narrow_fn col_collide_sphere_sphere, col_collide_sphere_box, col_collide_sphere_capsule,
    col_collide_sphere_plane, col_collide_capsule_capsule, col_collide_capsule_box, col_collide_capsule_plane;
/* narrow_box.c: boxes (multi-point manifolds) */
col_narrow_fn col_collide_box_box, col_collide_box_plane;
/* narrow_cylinder.c: cylinders */
col_narrow_fn col_collide_sphere_cylinder, col_collide_box_cylinder, col_collide_capsule_cylinder,
    col_collide_cylinder_cylinder, col_collide_cylinder_plane;
/* narrow_terrain.c: a height field or a triangle mesh (b) against a sphere,
 * box, capsule or cylinder (a); no points for other kinds */
col_narrow_fn col_collide_terrain;
/* gjk.c: any two convex shapes (kinds with a support function), one point;
 * a convex shape (a) and a plane (b), one point */
col_narrow_fn col_collide_convex, col_collide_convex_plane;

/* Column i (a local axis in world coordinates) of a row-major rotation. */
static inline void col_rot_column(const double* rot, int i, double c[3])
{
    c[0] = rot[i];
    c[1] = rot[3 + i];
    c[2] = rot[6 + i];
}

/* manifold.c: copies what a routine owns of a point (not geom_a/geom_b). */
void col_put_point(col_contact_point* dst, const col_contact_point* src);
/* manifold.c: keeps at most 4 of the n points (the deepest, the farthest from
 * it, then the two adding most area in the plane ⊥ normal), in their
 * original order; returns the count. */
int col_reduce_to_4(col_contact_point* p, int n, const double normal[3]);

/* Support point of a convex geom in world direction d (gjk.c). */
void col_geom_support(const col_geom* g, const double d[3], double out[3]);

#endif /* DVI_NARROW_H */
