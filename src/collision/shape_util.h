/* dvicontact — internal: helpers the shape classes share (shape_classes.c). */
#ifndef DVI_SHAPE_UTIL_H
#define DVI_SHAPE_UTIL_H

#include "collision.h"

/* Drawn surfaces of revolution: points per ring, and rings per quarter
 * meridian of a rounded end. */
#define DVI_DRAW_SEGMENTS 24
#define DVI_DRAW_HALF 6

/* Axis k of g's AABB: pos[k] ± e. */
static inline void col_aabb_axis(col_geom* g, int k, double e)
{
    g->aabb_min[k] = g->pos[k] - e;
    g->aabb_max[k] = g->pos[k] + e;
}

/* AABB into lo, hi of the box c ± h of g's frame. */
void col_rotated_box_aabb(const col_geom* g, const double c[3], const double h[3], double lo[3], double hi[3]);

/* A surface of revolution about the local z axis into m: a pole at z_top,
 * rings (r[k], z[k]) from top to bottom, a pole at z_bot. */
void col_mesh_revolve(col_mesh_sink* m, double z_top, const double* r, const double* z, int rings, double z_bot);

#endif /* DVI_SHAPE_UTIL_H */
