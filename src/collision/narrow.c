/* dvicontact — the narrow-phase dispatch (see narrow.h): `pairs[ta][tb]`,
 * the routine for a pair of kinds, registered once (PAIR) for both orders:
 * in the other order it is called with a and b swapped and its normals
 * flipped. A pair without a routine of its own: two convex kinds meet
 * through the general convex routine (GJK/EPA, gjk.c), a convex kind and
 * the plane through the general convex–plane routine (gjk.c); any other
 * pair never collides (two static kinds). The kinds themselves are the
 * table of shape classes (shape_table.c). */
#include "narrow.h"

#include <stdbool.h>
#include <stddef.h>

/* Kinds with pair routines of their own (a later kind meets the others
 * through the general routines). */
#define KINDS (DVI_SHAPE_MESH + 1)

/* Each routine registered once: PAIR(ta, tb, f) fills [ta][tb] with f and
 * [tb][ta] with f called the other way round. */
typedef struct pair_entry {
    col_narrow_fn* fn;
    bool swapped; /* call fn(b, a) and flip the normals */
} pair_entry;

#define SAME(t, f) [DVI_SHAPE_##t][DVI_SHAPE_##t] = {f, false}
#define PAIR(ta, tb, f) [DVI_SHAPE_##ta][DVI_SHAPE_##tb] = {f, false}, [DVI_SHAPE_##tb][DVI_SHAPE_##ta] = {f, true}

/* a line per kind: its routines with itself and the kinds after it */
static const pair_entry pairs[KINDS][KINDS] = {
    SAME(SPHERE, col_collide_sphere_sphere), PAIR(SPHERE, BOX, col_collide_sphere_box),
        PAIR(SPHERE, CAPSULE, col_collide_sphere_capsule), PAIR(SPHERE, CYLINDER, col_collide_sphere_cylinder),
        PAIR(SPHERE, PLANE, col_collide_sphere_plane), PAIR(SPHERE, HEIGHTFIELD, col_collide_terrain),
        PAIR(SPHERE, MESH, col_collide_terrain),
    SAME(BOX, col_collide_box_box), PAIR(BOX, CYLINDER, col_collide_box_cylinder),
        PAIR(BOX, PLANE, col_collide_box_plane), PAIR(BOX, HEIGHTFIELD, col_collide_terrain),
        PAIR(BOX, MESH, col_collide_terrain),
    PAIR(CAPSULE, BOX, col_collide_capsule_box), SAME(CAPSULE, col_collide_capsule_capsule),
        PAIR(CAPSULE, CYLINDER, col_collide_capsule_cylinder), PAIR(CAPSULE, PLANE, col_collide_capsule_plane),
        PAIR(CAPSULE, HEIGHTFIELD, col_collide_terrain), PAIR(CAPSULE, MESH, col_collide_terrain),
    SAME(CYLINDER, col_collide_cylinder_cylinder), PAIR(CYLINDER, PLANE, col_collide_cylinder_plane),
        PAIR(CYLINDER, HEIGHTFIELD, col_collide_terrain), PAIR(CYLINDER, MESH, col_collide_terrain),
};

static void flip(col_contact_point* p, int n)
{
    for (int i = 0; i < n; i++)
        for (int k = 0; k < 3; k++) p[i].normal[k] = -p[i].normal[k];
}

int col_narrow_phase(const col_geom* a, const col_geom* b, double envelope, col_contact_point* out, int max)
{
    const unsigned ta = (unsigned)a->type, tb = (unsigned)b->type;
    int n = 0;
    if (ta < KINDS && tb < KINDS && pairs[ta][tb].fn) {
        const pair_entry* e = &pairs[ta][tb];
        if (!e->swapped) return e->fn(a, b, envelope, out, max);
        n = e->fn(b, a, envelope, out, max);
        flip(out, n);
        return n;
    }
    const col_shape_class* ca = col_shape_class_of(a->type);
    const col_shape_class* cb = col_shape_class_of(b->type);
    if (!ca || !cb) return 0;
    if (ca->core_support && cb->core_support) return col_collide_convex(a, b, envelope, out, max);
    if (ca->core_support && cb->half_space) return col_collide_convex_plane(a, b, envelope, out, max);
    if (ca->half_space && cb->core_support) n = col_collide_convex_plane(b, a, envelope, out, max);
    flip(out, n);
    return n;
}
