/* dvicontact — internal: helpers for height fields and triangle meshes
 * (defined in narrow_terrain.c, where the terrain narrow phase lives).
 *
 * Design note. Terrain geoms are static and usually large; the narrow phase
 * (narrow_terrain.c) only ever visits the triangles under a shape's bounding
 * box: the grid cells for a height field (O(cells touched)), a linear pass with
 * a bounding-box reject for a mesh (O(triangles)). Nothing here allocates.
 */
#ifndef DVI_TERRAIN_H
#define DVI_TERRAIN_H

#include "collision.h"

/* Sets hf->hmin and hf->hmax to the smallest and largest of the nx·ny heights
 * (both 0 when the grid is empty). Call once after filling the heights; the
 * AABB of a height-field geom uses them. Cost O(nx·ny). */
void col_heightfield_init_range(col_heightfield* hf);

/* Local-frame bounds of a mesh's vertices (lo = hi = 0 when it has none).
 * Cost O(vertex_count). */
void col_trimesh_bounds(const col_trimesh* m, double lo[3], double hi[3]);

#endif /* DVI_TERRAIN_H */
