/* dvicontact — internal: collision detection (geometry only).
 *
 * Design note. The collision layer knows shapes in world poses and nothing
 * else: no bodies, masses, solvers or impulses. The system fills an array of
 * col_geom each step (pose, AABB already computed by col_geom_update), calls
 * col_collide(), and gets back contact points, each naming the two geoms by
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
 * Threads: col_set_threads() lets a call use several OpenMP
 * threads (from DVI_COLLIDE_PAR_MIN geoms up); the output is byte-identical
 * for every thread count (see collide.c).
 */
#ifndef DVI_COLLISION_H
#define DVI_COLLISION_H

#include "dvi/base.h"
#include "dvi/shape.h"
#include "alloc.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A height field: a regular grid of nx × ny heights over the geom's local
 * x, y (spacing dx, dy, origin at local (0, 0)), each cell split into two
 * triangles along the diagonal from (i, j) to (i+1, j+1). Solid below. */
typedef struct col_heightfield {
    int32_t nx, ny;
    double dx, dy;
    double* heights;   /* [nx * ny], row-major: heights[j * nx + i] at (i dx, j dy) */
    double hmin, hmax;
} col_heightfield;

/* A triangle mesh (static obstacles), local coordinates. */
typedef struct col_trimesh {
    int32_t vertex_count, triangle_count;
    double* vertices;  /* [3 * vertex_count] */
    int32_t* triangles; /* [3 * triangle_count], counter-clockwise seen from outside */
} col_trimesh;

typedef struct col_geom {
    dvi_shape_type type;
    int32_t owner;      /* opaque to the collision layer (the body index) */
    bool is_static;     /* two static geoms never collide */
    double pos[3];      /* world position of the geom frame */
    double rot[9];      /* world rotation of the geom frame, row-major (columns = local axes) */
    /* parameters by type */
    double radius;      /* sphere, capsule, cylinder */
    double half_length; /* capsule, cylinder: along local z */
    double half[3];     /* box half extents */
    const col_heightfield* hfield;
    const col_trimesh* mesh;
    /* filters, applied before the narrow phase (zero-initialised: none) */
    bool filtered;      /* category and mask below apply */
    bool linked;        /* the owner is in an excluded owner pair (col_set_excluded) */
    uint32_t category;  /* two filtered geoms touch when (a.category & b.mask) and (b.category & a.mask) */
    uint32_t mask;      /* an unfiltered geom counts as category 1, mask all */
    /* filled by col_geom_update */
    double aabb_min[3], aabb_max[3];
    bool unbounded;     /* plane */
} col_geom;

typedef struct col_contact_point {
    int32_t geom_a, geom_b; /* geom_a < geom_b; normal points from A to B */
    double point[3];        /* world point, midway between the two surfaces */
    double normal[3];       /* unit */
    double distance;        /* signed gap Φ, negative when penetrating */
    uint32_t feature;       /* identifies the point within the pair, stable from step to step */
} col_contact_point;

/* ---- shape classes ---------------------------------------------------------
 *
 * Everything the library knows about a kind of shape, in one row of one
 * table (col_shape_class_of, shape_table.c): the layers above ask the class
 * instead of switching on the kind. A convex kind is defined by up to two
 * positive lengths (`params`), stored in the geom's radius, half_length or
 * half[3]; the static kinds (plane, height field, mesh) carry their own data.
 * Functions a kind does not have are NULL. Every function reads the geom's
 * parameters; those that work in the world frame also read pos and rot. */

/* Where a parameter of a convex kind is stored in a col_geom (and in the
 * world's shape record): radius, half_length, or the three half[] values. */
typedef enum col_shape_slot { DVI_SLOT_RADIUS = 1, DVI_SLOT_HALF_LENGTH = 2, DVI_SLOT_HALF = 3 } col_shape_slot;

typedef struct col_shape_param {
    const char* key;     /* scene key and error name, e.g. "half_extents" */
    col_shape_slot slot; /* DVI_SLOT_HALF: three values, the others one */
} col_shape_param;

/* Receives a shape's surface as triangles, in the shape frame. */
typedef struct col_mesh_sink col_mesh_sink;
struct col_mesh_sink {
    void (*point)(col_mesh_sink* s, double x, double y, double z);
    /* vertices a, b, c counted from the first point this shape gave,
     * counter-clockwise seen from outside */
    void (*triangle)(col_mesh_sink* s, size_t a, size_t b, size_t c);
    double centre[3]; /* unbounded kinds (plane): draw a square about this point of the */
    double half;      /* shape frame, of this half side */
};

typedef struct col_shape_class {
    const char* name;    /* the scene file's "type" */
    const char* article; /* for messages: "a sphere" */
    bool fixed_only;     /* plane, height field, mesh: fixed bodies only; two never meet */
    bool half_space;     /* the plane: tested against every AABB, not put in the grid */
    col_shape_param params[2]; /* convex kinds: the defining lengths (key NULL: none) */
    /* AABB of g in the world into g->aabb_min/max (and g->unbounded);
     * false when g has nothing to bound (empty terrain) */
    bool (*bounds)(col_geom* g);
    /* convex kinds (NULL otherwise): support point in world direction d of
     * the core, i.e. the shape shrunk by margin(g) (a sphere's core is its
     * centre, a capsule's its segment) */
    void (*core_support)(const col_geom* g, const double d[3], double out[3]);
    double (*margin)(const col_geom* g);
    /* a length scale of the shape for the convex routines' tolerances */
    double (*scale)(const col_geom* g);
    /* normals of the planes across which the support function has a kink
     * (box faces, a cylinder's side and caps); count, at most 3 */
    int (*kinks)(const col_geom* g, double k[3][3]);
    /* radius of a sphere enclosing the shape about a point at distance
     * `offset` from the shape frame's origin (offset + the radius about it) */
    double (*bound)(const col_geom* g, double offset);
    /* DEM: the radius of curvature that sets the Hertz contact stiffness */
    double (*contact_radius)(const col_geom* g);
    /* the smallest half size (health checks, a scene's default envelope) */
    double (*thickness)(const col_geom* g);
    /* volume and the principal inertia per unit mass about the shape
     * frame's axes (the shape frame is the principal frame) */
    void (*mass)(const col_geom* g, double* volume, double d[3]);
    /* the surface for drawing (VTK) */
    void (*mesh)(const col_geom* g, col_mesh_sink* sink);
    /* first hit of the ray o + t·u (o, u in the shape frame, u unit),
     * 0 ≤ t ≤ tmax: t and the outward unit normal there; false when it
     * misses or o is inside. NULL for kinds without one yet (height
     * field, mesh) */
    bool (*ray)(const col_geom* g, const double o[3], const double u[3], double tmax, double* t, double n[3]);
} col_shape_class;

/* The table (shape_table.c): col_shape_classes[kind] for 1 ≤ kind < col_shape_kinds. */
extern const col_shape_class* const col_shape_classes[];
extern const int col_shape_kinds;

/* The class of a kind; NULL for a number that is not a kind. */
static inline const col_shape_class* col_shape_class_of(dvi_shape_type type)
{
    return (int)type > 0 && (int)type < col_shape_kinds ? col_shape_classes[type] : NULL;
}

/* Copies the value(s) of parameter p between a geometry (radius,
 * half_length, half) and v[0..col_shape_param_length(p)). */
static inline int col_shape_param_length(const col_shape_param* p)
{
    return p->slot == DVI_SLOT_HALF ? 3 : 1;
}
static inline double* col_shape_param_ptr(const col_shape_param* p, double* radius, double* half_length, double* half)
{
    return p->slot == DVI_SLOT_RADIUS ? radius : p->slot == DVI_SLOT_HALF_LENGTH ? half_length : half;
}

/* Recomputes g's AABB from its pose and parameters. */
void col_geom_update(col_geom* g);

/* Narrow phase for one pair: writes up to `max` points (max ≥ 8) with normals
 * from a to b and Φ ≤ envelope, returns how many. */
int col_narrow_phase(const col_geom* a, const col_geom* b, double envelope, col_contact_point* out, int max);

/* Broad + narrow phase state, reused from step to step. */
typedef struct col_collision col_collision;

/* `alloc` (NULL: libc) is copied: every buffer of the collision object
 * comes from it and goes back to it by col_destroy. */
dvi_status col_create(const dvi_allocator* alloc, col_collision** out);
void col_destroy(col_collision* c);

/* Calls with fewer geoms than this run on one thread (the default of
 * col_set_parallel_min); the geom update of the step uses it too. */
#define DVI_COLLIDE_PAR_MIN 2048

/* OpenMP threads for the following col_collide calls (values < 1 mean 1;
 * 1 by default). The points returned do not depend on it. */
void col_set_threads(col_collision* c, int threads);
/* Calls with fewer than `geoms` geoms run serially whatever the thread
 * count (default DVI_COLLIDE_PAR_MIN; 0 takes the parallel path for any
 * call with more than one thread, as the tests do). */
void col_set_parallel_min(col_collision* c, int32_t geoms);

/* Owner pairs that never touch (the bodies of a joint): keys
 * (uint64_t)min(o1, o2) << 32 | max(o1, o2), sorted ascending, n of them;
 * the array is the caller's and must stay valid through the following
 * col_collide calls. Only geoms with `linked` set are looked up. */
void col_set_excluded(col_collision* c, const uint64_t* keys, int32_t n);

/* All contact points among geoms[0..n) with Φ ≤ envelope. The returned array
 * belongs to c and stays valid until the next call. geom_a/geom_b are
 * indices into geoms. */
dvi_status col_collide(col_collision* c, const col_geom* geoms, int32_t n, double envelope,
                       const col_contact_point** points, int32_t* count);

/* The buffers of c that hold nothing a later col_collide reads: the output
 * points, the candidate pairs and the threads' pairs and points. Writes up
 * to `max` of them (start, bytes of capacity) and returns how many. Once
 * the caller is done with a call's points it may use these as scratch
 * until the next call, which overwrites them and may move them. */
int col_idle_buffers(const col_collision* c, void** data, size_t* bytes, int max);

#endif /* DVI_COLLISION_H */
