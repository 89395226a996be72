/* dvicontact — internal: collision detection (geometry only).
 *
 * Design note. The collision layer knows shapes in world poses and nothing
 * else: no bodies, masses, solvers or impulses. The system fills an array of
 * dvi_geom each step (pose, AABB already computed by dvi_geom_update), calls
 * dvi_collide(), and gets back contact points, each naming the two geoms by
 * index, with the normal pointing from geom A to geom B, the signed distance
 * Φ (negative = penetration) and a feature id that identifies the point from
 * step to step (for warm starting).
 *
 *   broad phase   a hierarchical uniform grid (levels of cell size s·2^l, each
 *                 geom stored once at the level that fits it); planes and
 *                 other unbounded geoms are tested linearly against every
 *                 bounded geom. O(n + pairs) per call; see collide.c.
 *   narrow phase  analytic routines for the common pairs, a general convex
 *                 routine for the rest (see collision_*.c).
 *
 * Output order is deterministic: pairs sorted by (geom_a, geom_b) with
 * geom_a < geom_b, points of one pair in the order the routine produced them.
 * Pairs of geoms with the same `owner` and pairs of two static geoms are
 * never reported.
 *
 * Threads: dvi_collision_set_threads() lets a call use several OpenMP
 * threads (from DVI_COLLIDE_PAR_MIN geoms up); the output is byte-identical
 * for every thread count (see collide.c).
 */
#ifndef DVI_COLLISION_H
#define DVI_COLLISION_H

#include "dvi/base.h"
#include "dvi/shape.h"
#include "alloc.h"

#include <stdbool.h>
#include <stdint.h>

/* A height field: a regular grid of nx × ny heights over the geom's local
 * x, y (spacing dx, dy, origin at local (0, 0)), each cell split into two
 * triangles along the diagonal from (i, j) to (i+1, j+1). Solid below. */
typedef struct dvi_heightfield {
    int32_t nx, ny;
    double dx, dy;
    double* heights;   /* [nx * ny], row-major: heights[j * nx + i] at (i dx, j dy) */
    double hmin, hmax;
} dvi_heightfield;

/* A triangle mesh (static obstacles), local coordinates. */
typedef struct dvi_trimesh {
    int32_t vertex_count, triangle_count;
    double* vertices;  /* [3 * vertex_count] */
    int32_t* triangles; /* [3 * triangle_count], counter-clockwise seen from outside */
} dvi_trimesh;

typedef struct dvi_geom {
    dvi_shape_type type;
    int32_t owner;      /* opaque to the collision layer (the body index) */
    bool is_static;     /* two static geoms never collide */
    double pos[3];      /* world position of the geom frame */
    double rot[9];      /* world rotation of the geom frame, row-major (columns = local axes) */
    /* parameters by type */
    double radius;      /* sphere, capsule, cylinder */
    double half_length; /* capsule, cylinder: along local z */
    double half[3];     /* box half extents */
    const dvi_heightfield* hfield;
    const dvi_trimesh* mesh;
    /* filters, applied before the narrow phase (zero-initialised: none) */
    bool filtered;      /* category and mask below apply */
    bool linked;        /* the owner is in an excluded owner pair (dvi_collision_set_excluded) */
    uint32_t category;  /* two filtered geoms touch when (a.category & b.mask) and (b.category & a.mask) */
    uint32_t mask;      /* an unfiltered geom counts as category 1, mask all */
    /* filled by dvi_geom_update */
    double aabb_min[3], aabb_max[3];
    bool unbounded;     /* plane */
} dvi_geom;

typedef struct dvi_contact_point {
    int32_t geom_a, geom_b; /* geom_a < geom_b; normal points from A to B */
    double point[3];        /* world point, midway between the two surfaces */
    double normal[3];       /* unit */
    double distance;        /* signed gap Φ, negative when penetrating */
    uint32_t feature;       /* identifies the point within the pair, stable from step to step */
} dvi_contact_point;

/* Recomputes g's AABB from its pose and parameters. */
void dvi_geom_update(dvi_geom* g);

/* Narrow phase for one pair: writes up to `max` points (max ≥ 8) with normals
 * from a to b and Φ ≤ envelope, returns how many. */
int dvi_narrow_phase(const dvi_geom* a, const dvi_geom* b, double envelope, dvi_contact_point* out, int max);

/* Broad + narrow phase state, reused from step to step. */
typedef struct dvi_collision dvi_collision;

/* `alloc` (NULL: libc) is copied: every buffer of the collision object
 * comes from it and goes back to it by dvi_collision_destroy. */
dvi_status dvi_collision_create(const dvi_allocator* alloc, dvi_collision** out);
void dvi_collision_destroy(dvi_collision* c);

/* Calls with fewer geoms than this run on one thread (the default of
 * dvi_collision_set_parallel_min); the geom update of the step uses it too. */
#define DVI_COLLIDE_PAR_MIN 2048

/* OpenMP threads for the following dvi_collide calls (values < 1 mean 1;
 * 1 by default). The points returned do not depend on it. */
void dvi_collision_set_threads(dvi_collision* c, int threads);
/* Calls with fewer than `geoms` geoms run serially whatever the thread
 * count (default DVI_COLLIDE_PAR_MIN; 0 takes the parallel path for any
 * call with more than one thread, as the tests do). */
void dvi_collision_set_parallel_min(dvi_collision* c, int32_t geoms);

/* Owner pairs that never touch (the bodies of a joint): keys
 * (uint64_t)min(o1, o2) << 32 | max(o1, o2), sorted ascending, n of them;
 * the array is the caller's and must stay valid through the following
 * dvi_collide calls. Only geoms with `linked` set are looked up. */
void dvi_collision_set_excluded(dvi_collision* c, const uint64_t* keys, int32_t n);

/* All contact points among geoms[0..n) with Φ ≤ envelope. The returned array
 * belongs to c and stays valid until the next call. geom_a/geom_b are
 * indices into geoms. */
dvi_status dvi_collide(dvi_collision* c, const dvi_geom* geoms, int32_t n, double envelope,
                       const dvi_contact_point** points, int32_t* count);

/* The buffers of c that hold nothing a later dvi_collide reads: the output
 * points, the candidate pairs and the threads' pairs and points. Writes up
 * to `max` of them (start, bytes of capacity) and returns how many. Once
 * the caller is done with a call's points it may use these as scratch
 * until the next call, which overwrites them and may move them. */
int dvi_collision_idle_buffers(const dvi_collision* c, void** data, size_t* bytes, int max);

#endif /* DVI_COLLISION_H */
