/* Tests of the collision layer: AABBs (col_geom_update), the sphere and
 * capsule narrow phase (narrow_sphere.c) on cases worked out by hand, normal
 * flips through the dispatcher, and the broad phase (col_collide) against a
 * brute-force all-pairs reference on random scenes: the contact lists must be
 * identical, deterministic, and free of same-owner and static–static pairs;
 * and the parallel path returns the serial path's points byte for byte, so
 * that a world's steps do not depend on the thread count. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "collision.h"
#include "hash_rng.h"
#include "math3.h"
#include "narrow.h"
#include "dvi/world.h"
#include "test_util.h"

#define TOL 1e-12
#define MAXP 16
#define PI 3.14159265358979323846

/* ---- scene helpers ------------------------------------------------------------ */

static void rot_identity(double R[9])
{
    static const double I[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    memcpy(R, I, sizeof I);
}

static void random_rotation(double R[9], uint64_t* s)
{
    test_rot_axis(R, base_uniform01(s) - 0.5, base_uniform01(s) - 0.5, base_uniform01(s) - 0.5 + 1e-3, 2 * PI * base_uniform01(s));
}

static col_geom geom(dvi_shape_type type, double x, double y, double z)
{
    col_geom g;
    memset(&g, 0, sizeof g);
    g.type = type;
    g.pos[0] = x;
    g.pos[1] = y;
    g.pos[2] = z;
    rot_identity(g.rot);
    return g;
}

static col_geom sphere(double x, double y, double z, double r)
{
    col_geom g = geom(DVI_SHAPE_SPHERE, x, y, z);
    g.radius = r;
    col_geom_update(&g);
    return g;
}

static col_geom box(double x, double y, double z, double hx, double hy, double hz)
{
    col_geom g = geom(DVI_SHAPE_BOX, x, y, z);
    g.half[0] = hx;
    g.half[1] = hy;
    g.half[2] = hz;
    col_geom_update(&g);
    return g;
}

static col_geom capsule(double x, double y, double z, double r, double hl)
{
    col_geom g = geom(DVI_SHAPE_CAPSULE, x, y, z);
    g.radius = r;
    g.half_length = hl;
    col_geom_update(&g);
    return g;
}

/* A capsule along world x (local z rotated onto x). */
static col_geom capsule_x(double x, double y, double z, double r, double hl)
{
    col_geom g = capsule(x, y, z, r, hl);
    test_rot_axis(g.rot, 0, 1, 0, PI / 2);
    col_geom_update(&g);
    return g;
}

static col_geom plane(double x, double y, double z)
{
    col_geom g = geom(DVI_SHAPE_PLANE, x, y, z);
    col_geom_update(&g);
    return g;
}

static void assert_vec(const double v[3], double x, double y, double z, double tol)
{
    assert_near(v[0], x, tol);
    assert_near(v[1], y, tol);
    assert_near(v[2], z, tol);
}

static void assert_aabb(const col_geom* g, double x0, double y0, double z0, double x1, double y1, double z1)
{
    assert_vec(g->aabb_min, x0, y0, z0, TOL);
    assert_vec(g->aabb_max, x1, y1, z1, TOL);
}

/* ---- AABBs -------------------------------------------------------------------- */

static void test_aabb_convex(void** state)
{
    (void)state;
    col_geom s = sphere(1, 2, 3, 0.5);
    assert_aabb(&s, 0.5, 1.5, 2.5, 1.5, 2.5, 3.5);
    assert_false(s.unbounded);

    col_geom b = box(0, 0, 0, 1, 2, 3);
    test_rot_axis(b.rot, 0, 0, 1, PI / 2); /* local x → world y */
    col_geom_update(&b);
    assert_aabb(&b, -2, -1, -3, 2, 1, 3);
    test_rot_axis(b.rot, 0, 0, 1, PI / 4);
    col_geom_update(&b);
    const double e = 3 / sqrt(2.0); /* (1 + 2)/√2 */
    assert_aabb(&b, -e, -e, -3, e, e, 3);

    col_geom c = capsule_x(1, 0, 0, 0.5, 2); /* along x */
    assert_aabb(&c, -1.5, -0.5, -0.5, 3.5, 0.5, 0.5);

    col_geom y = geom(DVI_SHAPE_CYLINDER, 0, 0, 0);
    y.radius = 0.5;
    y.half_length = 2;
    test_rot_axis(y.rot, 0, 1, 0, PI / 2); /* axis along x: flat ends span r in y, z */
    col_geom_update(&y);
    assert_aabb(&y, -2, -0.5, -0.5, 2, 0.5, 0.5);
    test_rot_axis(y.rot, 0, 1, 0, PI / 4); /* axis (1, 0, 1)/√2 */
    col_geom_update(&y);
    const double f = 2.5 / sqrt(2.0); /* hl/√2 + r·√(1 − 1/2) */
    assert_aabb(&y, -f, -0.5, -f, f, 0.5, f);
}

static void test_aabb_unbounded_and_terrain(void** state)
{
    (void)state;
    col_geom p = plane(0, 0, 1);
    assert_true(p.unbounded);
    assert_true(p.aabb_max[2] == 1.0 && isinf(p.aabb_min[2]) && p.aabb_min[2] < 0);
    assert_true(isinf(p.aabb_min[0]) && isinf(p.aabb_max[0]) && isinf(p.aabb_max[1]));
    test_rot_axis(p.rot, 1, 0, 0, 0.3);
    col_geom_update(&p);
    assert_true(p.unbounded && isinf(p.aabb_max[2]) && isinf(p.aabb_min[1]));

    double heights[6] = {0, 1, 2, -1, 0, 0};
    col_heightfield hf = {3, 2, 0.5, 1.0, heights, -1.0, 2.0};
    col_geom h = geom(DVI_SHAPE_HEIGHTFIELD, 1, 1, 1);
    h.hfield = &hf;
    h.is_static = true;
    col_geom_update(&h);
    assert_false(h.unbounded);
    assert_aabb(&h, 1, 1, 0, 2, 2, 3);
    test_rot_axis(h.rot, 0, 0, 1, PI / 2); /* local x → world y, local y → world −x */
    col_geom_update(&h);
    assert_aabb(&h, 0, 1, 0, 1, 2, 3);

    double verts[9] = {0, 0, 0, 1, 0, 0, 0, 2, 0};
    int32_t tris[3] = {0, 1, 2};
    col_trimesh m = {3, 1, verts, tris};
    col_geom g = geom(DVI_SHAPE_MESH, 0, 0, 1);
    g.mesh = &m;
    test_rot_axis(g.rot, 0, 0, 1, PI / 2);
    col_geom_update(&g);
    assert_aabb(&g, -2, 0, 1, 0, 1, 1);
}

/* ---- sphere ----------------------------------------------------------------- */

static void test_sphere_sphere(void** state)
{
    (void)state;
    col_contact_point p[MAXP];
    col_geom a = sphere(0, 0, 0, 1), b = sphere(2.5, 0, 0, 1);
    assert_int_equal(col_collide_sphere_sphere(&a, &b, 0.1, p, MAXP), 0); /* Φ = 0.5 > envelope */
    assert_int_equal(col_collide_sphere_sphere(&a, &b, 1.0, p, MAXP), 1);
    assert_near(p[0].distance, 0.5, TOL);
    assert_vec(p[0].normal, 1, 0, 0, TOL);
    assert_vec(p[0].point, 1.25, 0, 0, TOL); /* surfaces at x = 1 and 1.5 */
    assert_int_equal(p[0].feature, 0);

    b = sphere(0, 1.5, 0, 1); /* penetration 0.5 */
    assert_int_equal(col_collide_sphere_sphere(&a, &b, 0.0, p, MAXP), 1);
    assert_near(p[0].distance, -0.5, TOL);
    assert_vec(p[0].normal, 0, 1, 0, TOL);
    assert_vec(p[0].point, 0, 0.75, 0, TOL); /* surfaces at y = 1 and 0.5 */

    b = sphere(0, 0, 0, 0.5); /* concentric: Φ = −1.5, some unit normal */
    assert_int_equal(col_collide_sphere_sphere(&a, &b, 0.0, p, MAXP), 1);
    assert_near(p[0].distance, -1.5, TOL);
    assert_near(sqrt(p[0].normal[0] * p[0].normal[0] + p[0].normal[1] * p[0].normal[1] +
                     p[0].normal[2] * p[0].normal[2]),
                1.0, TOL);
}

static void test_sphere_box(void** state)
{
    (void)state;
    col_contact_point p[MAXP];
    col_geom b = box(0, 0, 0, 1, 2, 3);

    col_geom s = sphere(0, 0, 3.2, 0.5); /* above the top face, penetrating 0.3 */
    assert_int_equal(col_collide_sphere_box(&s, &b, 0.0, p, MAXP), 1);
    assert_near(p[0].distance, -0.3, TOL);
    assert_vec(p[0].normal, 0, 0, -1, TOL);
    assert_vec(p[0].point, 0, 0, 2.85, TOL); /* surfaces at z = 2.7 and 3 */

    s = sphere(2, 3, 0, 0.5); /* edge region: closest box point (1, 2, 0) */
    const double r2 = sqrt(2.0);
    assert_int_equal(col_collide_sphere_box(&s, &b, 0.5, p, MAXP), 0); /* Φ = √2 − 0.5 ≈ 0.914 */
    assert_int_equal(col_collide_sphere_box(&s, &b, 1.0, p, MAXP), 1);
    assert_near(p[0].distance, r2 - 0.5, TOL);
    assert_vec(p[0].normal, -1 / r2, -1 / r2, 0, TOL);
    double mid = 0.5 * (0.5 + r2); /* distance of the midpoint from the centre along −n */
    assert_vec(p[0].point, 2 - mid / r2, 3 - mid / r2, 0, TOL);

    s = sphere(2, 3, 4, 0.5); /* corner region: closest (1, 2, 3), Φ = √3 − 0.5 */
    assert_int_equal(col_collide_sphere_box(&s, &b, 1.0, p, MAXP), 0);
    assert_int_equal(col_collide_sphere_box(&s, &b, 2.0, p, MAXP), 1);
    assert_near(p[0].distance, sqrt(3.0) - 0.5, TOL);
    assert_vec(p[0].normal, -1 / sqrt(3.0), -1 / sqrt(3.0), -1 / sqrt(3.0), TOL);

    s = sphere(0.8, 0, 0, 0.5); /* centre inside: nearest face is +x at depth 0.2 */
    assert_int_equal(col_collide_sphere_box(&s, &b, 0.0, p, MAXP), 1);
    assert_near(p[0].distance, -0.7, TOL);
    assert_vec(p[0].normal, -1, 0, 0, TOL);
    assert_vec(p[0].point, 0.65, 0, 0, TOL); /* sphere surface x = 0.3, box face x = 1 */

    s = sphere(0, -1.9, 0.5, 0.1); /* inside, nearest face −y at depth 0.1 */
    assert_int_equal(col_collide_sphere_box(&s, &b, 0.0, p, MAXP), 1);
    assert_near(p[0].distance, -0.2, TOL);
    assert_vec(p[0].normal, 0, 1, 0, TOL);

    /* box turned 45° about z: its vertical edge at x = 1 + √2 faces the sphere */
    b = box(1, 0, 0, 1, 1, 1);
    test_rot_axis(b.rot, 0, 0, 1, PI / 4);
    col_geom_update(&b);
    s = sphere(3, 0, 0, 0.5);
    assert_int_equal(col_collide_sphere_box(&s, &b, 0.1, p, MAXP), 1);
    const double phi = 2 - r2 - 0.5;
    assert_near(p[0].distance, phi, TOL);
    assert_vec(p[0].normal, -1, 0, 0, TOL);
    assert_vec(p[0].point, 1 + r2 + phi / 2, 0, 0, TOL);
}

static void test_sphere_capsule_plane(void** state)
{
    (void)state;
    col_contact_point p[MAXP];
    col_geom c = capsule(0, 0, 0, 0.5, 1); /* along z, segment z in [−1, 1] */
    col_geom s = sphere(1, 0, 0.5, 0.3);   /* beside the cylinder part */
    assert_int_equal(col_collide_sphere_capsule(&s, &c, 0.1, p, MAXP), 0);
    assert_int_equal(col_collide_sphere_capsule(&s, &c, 0.2, p, MAXP), 1);
    assert_near(p[0].distance, 0.2, TOL);
    assert_vec(p[0].normal, -1, 0, 0, TOL);
    assert_vec(p[0].point, 0.6, 0, 0.5, TOL);
    s = sphere(0, 0, 2, 0.3); /* above the cap */
    assert_int_equal(col_collide_sphere_capsule(&s, &c, 0.2, p, MAXP), 1);
    assert_near(p[0].distance, 0.2, TOL);
    assert_vec(p[0].normal, 0, 0, -1, TOL);
    assert_vec(p[0].point, 0, 0, 1.6, TOL);
    s = sphere(0.3, 0, -0.5, 0.4); /* penetrating the side by 0.6 */
    assert_int_equal(col_collide_sphere_capsule(&s, &c, 0.0, p, MAXP), 1);
    assert_near(p[0].distance, 0.3 - 0.9, TOL);
    assert_vec(p[0].normal, -1, 0, 0, TOL);

    /* plane through (0, 0, 1) turned 30° about x: normal (0, −1/2, √3/2) */
    col_geom pl = plane(0, 0, 1);
    test_rot_axis(pl.rot, 1, 0, 0, PI / 6);
    col_geom_update(&pl);
    const double n[3] = {0, -0.5, sqrt(3.0) / 2};
    s = sphere(1 + 2 * n[0], 2 * n[1], 1 + 2 * n[2], 0.5); /* centre 2 above the plane */
    assert_int_equal(col_collide_sphere_plane(&s, &pl, 1.0, p, MAXP), 0);
    assert_int_equal(col_collide_sphere_plane(&s, &pl, 2.0, p, MAXP), 1);
    assert_near(p[0].distance, 1.5, TOL);
    assert_vec(p[0].normal, -n[0], -n[1], -n[2], TOL);
    assert_vec(p[0].point, s.pos[0] - 1.25 * n[0], s.pos[1] - 1.25 * n[1], s.pos[2] - 1.25 * n[2], TOL);
    s = sphere(5, 0, 0.9, 0.5); /* below the plane's origin height: deep */
    double h = (s.pos[1] - 0) * n[1] + (s.pos[2] - 1) * n[2];
    assert_int_equal(col_collide_sphere_plane(&s, &pl, 0.0, p, MAXP), 1);
    assert_near(p[0].distance, h - 0.5, TOL);
}

/* ---- capsule ---------------------------------------------------------------- */

static void test_capsule_capsule(void** state)
{
    (void)state;
    col_contact_point p[MAXP];
    col_geom a = capsule_x(0, 0, 0, 0.2, 1);

    /* crossing at right angles, 0.5 apart: one point */
    col_geom b = capsule(0, 0, 0.5, 0.2, 1);
    test_rot_axis(b.rot, 1, 0, 0, PI / 2); /* along y */
    col_geom_update(&b);
    assert_int_equal(col_collide_capsule_capsule(&a, &b, 0.05, p, MAXP), 0);
    assert_int_equal(col_collide_capsule_capsule(&a, &b, 0.1, p, MAXP), 1);
    assert_near(p[0].distance, 0.1, TOL);
    assert_vec(p[0].normal, 0, 0, 1, TOL);
    assert_vec(p[0].point, 0, 0, 0.25, TOL);
    assert_int_equal(p[0].feature, 0);

    /* axes intersecting: Φ = −0.4, normal perpendicular to both */
    b.pos[2] = 0;
    col_geom_update(&b);
    assert_int_equal(col_collide_capsule_capsule(&a, &b, 0.0, p, MAXP), 1);
    assert_near(p[0].distance, -0.4, TOL);
    assert_near(fabs(p[0].normal[2]), 1.0, TOL);

    /* parallel, stacked with an offset: two points at the overlap ends x = −0.5, 1 */
    b = capsule_x(0.5, 0, 0.35, 0.2, 1);
    int n = col_collide_capsule_capsule(&a, &b, 0.0, p, MAXP);
    assert_int_equal(n, 2);
    for (int i = 0; i < 2; i++) {
        assert_near(p[i].distance, -0.05, TOL);
        assert_vec(p[i].normal, 0, 0, 1, TOL);
        assert_int_equal(p[i].feature, (uint32_t)(1 + i));
    }
    assert_vec(p[0].point, -0.5, 0, 0.175, TOL);
    assert_vec(p[1].point, 1, 0, 0.175, TOL);

    /* collinear, end to end: one point between the caps */
    b = capsule_x(2.3, 0, 0, 0.2, 1);
    assert_int_equal(col_collide_capsule_capsule(&a, &b, 0.0, p, MAXP), 1);
    assert_near(p[0].distance, -0.1, TOL);
    assert_vec(p[0].normal, 1, 0, 0, TOL);
    assert_vec(p[0].point, 1.15, 0, 0, TOL);

    /* nearly parallel and crossing (0.015 rad about z, 0.3 above): both ends
     * plus the strictly closer crossing point */
    b = capsule(0, 0, 0.3, 0.2, 1);
    double Ry[9], Rz[9];
    test_rot_axis(Ry, 0, 1, 0, PI / 2);
    test_rot_axis(Rz, 0, 0, 1, 0.015);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            b.rot[3 * i + j] = Rz[3 * i] * Ry[j] + Rz[3 * i + 1] * Ry[3 + j] + Rz[3 * i + 2] * Ry[6 + j];
    col_geom_update(&b);
    n = col_collide_capsule_capsule(&a, &b, 0.0, p, MAXP);
    assert_int_equal(n, 3);
    assert_int_equal(p[2].feature, 0);
    assert_near(p[2].distance, -0.1, TOL);
    assert_vec(p[2].normal, 0, 0, 1, TOL);
    assert_true(p[0].distance > p[2].distance && p[1].distance > p[2].distance);

    /* zero-length capsules behave as spheres */
    col_geom s0 = capsule(0, 0, 0, 0.5, 0), s1 = capsule(0, 0, 0.8, 0.5, 0);
    assert_int_equal(col_collide_capsule_capsule(&s0, &s1, 0.0, p, MAXP), 1);
    assert_near(p[0].distance, -0.2, TOL);
    assert_vec(p[0].normal, 0, 0, 1, TOL);
}

static void test_capsule_plane(void** state)
{
    (void)state;
    col_contact_point p[MAXP];
    col_geom pl = plane(0, 0, 0);
    col_geom c = capsule_x(0, 0, 0.25, 0.2, 1); /* lying: both ends 0.05 above */
    assert_int_equal(col_collide_capsule_plane(&c, &pl, 0.01, p, MAXP), 0);
    assert_int_equal(col_collide_capsule_plane(&c, &pl, 0.1, p, MAXP), 2);
    for (int i = 0; i < 2; i++) {
        assert_near(p[i].distance, 0.05, TOL);
        assert_vec(p[i].normal, 0, 0, -1, TOL);
        assert_int_equal(p[i].feature, (uint32_t)i);
    }
    assert_vec(p[0].point, -1, 0, 0.025, TOL);
    assert_vec(p[1].point, 1, 0, 0.025, TOL);

    c = capsule(0, 0, 0.25, 0.2, 1); /* 60° from vertical: ends at z = −0.25, 0.75 */
    test_rot_axis(c.rot, 0, 1, 0, PI / 3);
    col_geom_update(&c);
    assert_int_equal(col_collide_capsule_plane(&c, &pl, 0.1, p, MAXP), 1);
    assert_int_equal(p[0].feature, 0);
    assert_near(p[0].distance, -0.45, TOL);
    assert_vec(p[0].point, -sqrt(3.0) / 2, 0, -0.225, TOL);

    c = capsule(0, 0, 0.1, 0.2, 0); /* zero length: one point */
    assert_int_equal(col_collide_capsule_plane(&c, &pl, 0.0, p, MAXP), 1);
    assert_near(p[0].distance, -0.1, TOL);
}

static void test_capsule_box_separated(void** state)
{
    (void)state;
    col_contact_point p[MAXP];
    col_geom b = box(0, 0, 0, 1, 1, 1);

    /* lying on the top face, 0.1 above it: two points at the ends */
    col_geom c = capsule_x(0, 0, 1.3, 0.2, 0.5);
    assert_int_equal(col_collide_capsule_box(&c, &b, 0.05, p, MAXP), 0);
    assert_int_equal(col_collide_capsule_box(&c, &b, 0.11, p, MAXP), 2);
    for (int i = 0; i < 2; i++) {
        assert_near(p[i].distance, 0.1, TOL);
        assert_vec(p[i].normal, 0, 0, -1, TOL);
        assert_int_equal(p[i].feature, 16u + 2u * 5u + (uint32_t)i); /* face +z */
    }
    assert_vec(p[0].point, -0.5, 0, 1.05, TOL);
    assert_vec(p[1].point, 0.5, 0, 1.05, TOL);

    /* overhanging the edge x = 1: the points are clipped to the face */
    c = capsule_x(1, 0, 1.25, 0.2, 0.5);
    assert_int_equal(col_collide_capsule_box(&c, &b, 0.1, p, MAXP), 2);
    assert_vec(p[0].point, 0.5, 0, 1.025, TOL);
    assert_vec(p[1].point, 1.0, 0, 1.025, TOL);
    assert_near(p[1].distance, 0.05, TOL);

    /* standing on its end 0.3 above the face: one point (the other end is far) */
    c = capsule(0, 0, 2, 0.2, 0.5);
    assert_int_equal(col_collide_capsule_box(&c, &b, 0.5, p, MAXP), 1);
    assert_near(p[0].distance, 0.3, TOL);
    assert_vec(p[0].normal, 0, 0, -1, TOL);
    assert_vec(p[0].point, 0, 0, 1.15, TOL);

    /* standing above the corner (1, 1, 1): one point, normal along the offset */
    c = capsule(1.3, 1.4, 2, 0.2, 0.5);
    const double d = sqrt(0.5);
    assert_int_equal(col_collide_capsule_box(&c, &b, 0.6, p, MAXP), 1);
    assert_near(p[0].distance, d - 0.2, TOL);
    assert_vec(p[0].normal, -0.3 / d, -0.4 / d, -0.5 / d, TOL);
    const double m = 0.5 * (d - 0.2); /* midpoint, from the corner towards the capsule */
    assert_vec(p[0].point, 1 + 0.3 / d * m, 1 + 0.4 / d * m, 1 + 0.5 / d * m, TOL);

    /* parallel to the edge x = z = 1, beside it: one point on the edge's span */
    c = capsule(1.5, 0, 1.5, 0.2, 2);
    test_rot_axis(c.rot, 1, 0, 0, PI / 2);
    col_geom_update(&c);
    assert_int_equal(col_collide_capsule_box(&c, &b, 1.0, p, MAXP), 1);
    assert_near(p[0].distance, d - 0.2, TOL);
    assert_vec(p[0].normal, -sqrt(0.5), 0, -sqrt(0.5), TOL);
    assert_true(fabs(p[0].point[1]) <= 1 + TOL);

    /* box turned 45° about z: the capsule on top still gets two points */
    test_rot_axis(b.rot, 0, 0, 1, PI / 4);
    col_geom_update(&b);
    c = capsule_x(0, 0, 1.3, 0.2, 0.5);
    assert_int_equal(col_collide_capsule_box(&c, &b, 0.11, p, MAXP), 2);
    assert_near(p[0].distance, 0.1, TOL);
    assert_near(p[1].distance, 0.1, TOL);
    assert_vec(p[0].normal, 0, 0, -1, TOL);
    assert_near(fabs(p[0].point[0] - p[1].point[0]), 1.0, TOL);

    /* box turned 90° about x (local y → world z), capsule beside its −y face */
    b = box(0, 0, 0, 1, 2, 3); /* in world: x half 1, y half 3, z half 2 */
    test_rot_axis(b.rot, 1, 0, 0, PI / 2);
    col_geom_update(&b);
    c = capsule_x(0, -3.25, 0, 0.2, 0.5);
    assert_int_equal(col_collide_capsule_box(&c, &b, 0.1, p, MAXP), 2);
    assert_near(p[0].distance, 0.05, TOL);
    assert_vec(p[0].normal, 0, 1, 0, TOL);
}

static void test_capsule_box_penetrating(void** state)
{
    (void)state;
    col_contact_point p[MAXP];
    col_geom b = box(0, 0, 0, 1, 1, 1);

    /* segment 0.1 below the top face: exit up, two points Φ = −0.3 */
    col_geom c = capsule_x(0, 0, 0.9, 0.2, 0.5);
    assert_int_equal(col_collide_capsule_box(&c, &b, 0.0, p, MAXP), 2);
    for (int i = 0; i < 2; i++) {
        assert_near(p[i].distance, -0.3, TOL);
        assert_vec(p[i].normal, 0, 0, -1, TOL);
    }
    assert_vec(p[0].point, -0.5, 0, 0.85, TOL);
    assert_vec(p[1].point, 0.5, 0, 0.85, TOL);

    /* poking in tip first through the −x face: one point at the deep end */
    c = capsule_x(-1.3, 0.2, 0.1, 0.1, 0.5); /* segment x in [−1.8, −0.8] */
    assert_int_equal(col_collide_capsule_box(&c, &b, 0.0, p, MAXP), 1);
    assert_near(p[0].distance, -0.3, TOL);
    assert_vec(p[0].normal, 1, 0, 0, TOL);
    assert_vec(p[0].point, -0.85, 0.2, 0.1, TOL);

    /* cutting the edge x = z = 1 diagonally (x + z = 1.9 in the plane y = 0):
     * the edge direction (1, 0, 1)/√2 is the axis of least depth (0.1/√2) */
    c = capsule(0.95, 0, 0.95, 0.1, sqrt(2.0) * 0.45);
    test_rot_axis(c.rot, 0, 1, 0, 3 * PI / 4); /* local z → (1, 0, −1)/√2 */
    col_geom_update(&c);
    assert_int_equal(col_collide_capsule_box(&c, &b, 0.0, p, MAXP), 1);
    const double depth = 0.1 / sqrt(2.0), phi = -depth - 0.1, u = 1 / sqrt(2.0);
    assert_near(p[0].distance, phi, 1e-12);
    assert_vec(p[0].normal, -u, 0, -u, 1e-12);
    assert_vec(p[0].point, 1 + 0.5 * phi * u, 0, 1 + 0.5 * phi * u, 1e-12);

    /* axis through the centre along z (z in [−0.5, 0.5]): leaving through
     * ±z needs 1.5, sideways through +x only 1: two points on face +x */
    c = capsule(0, 0, 0, 0.1, 0.5);
    assert_int_equal(col_collide_capsule_box(&c, &b, 0.0, p, MAXP), 2);
    for (int i = 0; i < 2; i++) {
        assert_near(p[i].distance, -1.1, TOL);
        assert_vec(p[i].normal, -1, 0, 0, TOL);
    }
    assert_vec(p[0].point, 0.45, 0, -0.5, TOL);
    assert_vec(p[1].point, 0.45, 0, 0.5, TOL);
}

/* ---- random configurations against a numerical minimisation ---------------- */

/* Distance from world point x to box g. */
static double point_box_distance(const col_geom* g, const double x[3])
{
    double d[3], s = 0.0;
    for (int k = 0; k < 3; k++) d[k] = x[k] - g->pos[k];
    for (int j = 0; j < 3; j++) {
        double l = g->rot[j] * d[0] + g->rot[3 + j] * d[1] + g->rot[6 + j] * d[2];
        double e = fabs(l) - g->half[j];
        if (e > 0) s += e * e;
    }
    return sqrt(s);
}

static void capsule_point(const col_geom* c, double t, double x[3]) /* t in [0, 1] */
{
    for (int k = 0; k < 3; k++) x[k] = c->pos[k] + (2 * t - 1) * c->half_length * c->rot[3 * k + 2];
}

/* Distance from x to the capsule's axis segment (projection, clamped). */
static double point_capsule_axis_distance(const col_geom* c, const double x[3])
{
    double p0[3], p1[3], d[3], r[3], dd = 0, rd = 0;
    capsule_point(c, 0, p0);
    capsule_point(c, 1, p1);
    for (int k = 0; k < 3; k++) {
        d[k] = p1[k] - p0[k];
        r[k] = x[k] - p0[k];
        dd += d[k] * d[k];
        rd += r[k] * d[k];
    }
    double t = dd > 0 ? fmin(1.0, fmax(0.0, rd / dd)) : 0.0, e = 0;
    for (int k = 0; k < 3; k++) e += (r[k] - t * d[k]) * (r[k] - t * d[k]);
    return sqrt(e);
}

/* min over t of dist(capsule axis point t, other): convex in t. */
static double min_over_axis(const col_geom* c, const col_geom* other, int other_is_box)
{
    double lo = 0, hi = 1, x[3];
    for (int it = 0; it < 120; it++) {
        double t1 = lo + (hi - lo) / 3, t2 = hi - (hi - lo) / 3, p1[3], p2[3];
        capsule_point(c, t1, p1);
        capsule_point(c, t2, p2);
        double d1 = other_is_box ? point_box_distance(other, p1) : point_capsule_axis_distance(other, p1);
        double d2 = other_is_box ? point_box_distance(other, p2) : point_capsule_axis_distance(other, p2);
        if (d1 < d2) hi = t2; else lo = t1;
    }
    capsule_point(c, 0.5 * (lo + hi), x);
    return other_is_box ? point_box_distance(other, x) : point_capsule_axis_distance(other, x);
}

static void check_points(const col_contact_point* p, int n, double env)
{
    for (int i = 0; i < n; i++) {
        const double* v = p[i].normal;
        assert_near(v[0] * v[0] + v[1] * v[1] + v[2] * v[2], 1.0, 1e-12);
        assert_true(p[i].distance <= env);
    }
}

static double min_distance(const col_contact_point* p, int n)
{
    double m = HUGE_VAL;
    for (int i = 0; i < n; i++) m = fmin(m, p[i].distance);
    return m;
}

/* Separated random pairs: the smallest Φ reported equals the true gap, and
 * the reported points lie midway (the surface points it implies are on the
 * two surfaces). Overlapping pairs: some Φ ≤ 0. */
static void test_random_against_numeric(void** state)
{
    (void)state;
    uint64_t s = 12345;
    col_contact_point p[MAXP];
    int separated = 0, overlapping = 0;
    for (int trial = 0; trial < 3000; trial++) {
        col_geom b = box(0, 0, 0, 0.2 + base_uniform01(&s), 0.2 + base_uniform01(&s), 0.2 + base_uniform01(&s));
        random_rotation(b.rot, &s);
        col_geom_update(&b);
        col_geom c = capsule(3 * base_uniform01(&s) - 1.5, 3 * base_uniform01(&s) - 1.5, 3 * base_uniform01(&s) - 1.5, 0.05 + 0.3 * base_uniform01(&s),
                             base_uniform01(&s) < 0.1 ? 0.0 : base_uniform01(&s));
        random_rotation(c.rot, &s);
        col_geom_update(&c);
        const double env = 10.0;
        double gap = min_over_axis(&c, &b, 1) - c.radius;
        int n = col_collide_capsule_box(&c, &b, env, p, MAXP);
        assert_true(n >= 1 && n <= 2);
        check_points(p, n, env);
        if (gap > c.radius * 1e-3 - c.radius) { /* segment outside the box */
            assert_near(min_distance(p, n), gap, 1e-7);
            separated++;
            for (int i = 0; i < n; i++) { /* b's surface point = point + Φ/2·n is on the box */
                double xb[3];
                for (int k = 0; k < 3; k++) xb[k] = p[i].point[k] + 0.5 * p[i].distance * p[i].normal[k];
                assert_true(point_box_distance(&b, xb) < 1e-9);
            }
        } else {
            assert_true(min_distance(p, n) <= 0.0);
            overlapping++;
        }

        col_geom d = capsule(2 * base_uniform01(&s) - 1, 2 * base_uniform01(&s) - 1, 2 * base_uniform01(&s) - 1, 0.05 + 0.3 * base_uniform01(&s),
                             base_uniform01(&s) < 0.1 ? 0.0 : base_uniform01(&s));
        random_rotation(d.rot, &s);
        if (trial % 10 == 0) memcpy(d.rot, c.rot, sizeof d.rot); /* exactly parallel */
        col_geom_update(&d);
        gap = min_over_axis(&c, &d, 0) - c.radius - d.radius;
        n = col_collide_capsule_capsule(&c, &d, env, p, MAXP);
        assert_true(n >= 1 && n <= 3);
        check_points(p, n, env);
        assert_near(min_distance(p, n), gap, 1e-7);
        if (trial % 10 == 0 && c.half_length > 0 && d.half_length > 0 && n == 2) {
            assert_near(p[0].distance, p[1].distance, 1e-9); /* parallel: equal gaps */
        }

        col_geom sp = sphere(2 * base_uniform01(&s) - 1, 2 * base_uniform01(&s) - 1, 2 * base_uniform01(&s) - 1, 0.05 + 0.3 * base_uniform01(&s));
        n = col_collide_sphere_box(&sp, &b, env, p, MAXP);
        assert_int_equal(n, 1);
        check_points(p, n, env);
        double db = point_box_distance(&b, sp.pos);
        if (db > 0) assert_near(p[0].distance, db - sp.radius, 1e-12);
        n = col_collide_sphere_capsule(&sp, &c, env, p, MAXP);
        assert_int_equal(n, 1);
        assert_near(p[0].distance, point_capsule_axis_distance(&c, sp.pos) - sp.radius - c.radius, 1e-9);
    }
    assert_true(separated > 1000 && overlapping > 100);
}

/* ---- dispatcher: order of the pair flips the normal ------------------------ */

static void check_flip(const col_geom* a, const col_geom* b, double env)
{
    col_contact_point p[MAXP], q[MAXP];
    int n = col_narrow_phase(a, b, env, p, MAXP);
    int m = col_narrow_phase(b, a, env, q, MAXP);
    assert_true(n >= 1);
    assert_int_equal(n, m);
    for (int i = 0; i < n; i++) {
        assert_near(p[i].distance, q[i].distance, 1e-12);
        assert_vec(q[i].normal, -p[i].normal[0], -p[i].normal[1], -p[i].normal[2], 1e-12);
        assert_vec(q[i].point, p[i].point[0], p[i].point[1], p[i].point[2], 1e-12);
    }
}

static void test_dispatch_flip(void** state)
{
    (void)state;
    col_geom s = sphere(0.3, 0.1, 1.2, 0.4), b = box(0, 0, 0, 1, 1, 1), pl = plane(0, 0, 0);
    test_rot_axis(b.rot, 1, 1, 0, 0.2);
    col_geom_update(&b);
    col_geom c = capsule_x(0.2, 0, 1.25, 0.3, 0.5), c2 = capsule(0.1, 0.2, 1.9, 0.3, 0.4);
    check_flip(&s, &b, 0.01);
    check_flip(&s, &pl, 2.0);
    check_flip(&s, &c, 0.01);
    check_flip(&c, &b, 0.01);
    check_flip(&c, &pl, 2.0);
    col_contact_point p[MAXP];
    /* box–sphere through the dispatcher: normal from the box to the sphere */
    assert_int_equal(col_narrow_phase(&b, &s, 0.01, p, MAXP), 1);
    assert_true(p[0].normal[2] > 0.5);
    /* capsule–capsule is symmetric by construction of the routine */
    int n = col_narrow_phase(&c, &c2, 0.5, p, MAXP);
    col_contact_point q[MAXP];
    int m = col_narrow_phase(&c2, &c, 0.5, q, MAXP);
    assert_true(n >= 1 && m >= 1);
    assert_near(p[0].distance, q[0].distance, 1e-12);
    assert_vec(q[0].normal, -p[0].normal[0], -p[0].normal[1], -p[0].normal[2], 1e-12);
}

/* ---- broad phase -------------------------------------------------------------- */

typedef struct contact_list {
    col_contact_point* p;
    int32_t n, cap;
} contact_list;

static void list_push(contact_list* l, const col_contact_point* p)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 256;
        l->p = realloc(l->p, (size_t)l->cap * sizeof *l->p);
        assert_non_null(l->p);
    }
    l->p[l->n++] = *p;
}

/* Every pair i < j through the narrow phase, with the same pair filters. */
static contact_list brute_force(const col_geom* g, int32_t n, double env)
{
    contact_list l = {NULL, 0, 0};
    col_contact_point buf[MAXP];
    for (int32_t i = 0; i < n; i++)
        for (int32_t j = i + 1; j < n; j++) {
            if (g[i].owner == g[j].owner || (g[i].is_static && g[j].is_static)) continue;
            int m = col_narrow_phase(&g[i], &g[j], env, buf, MAXP);
            for (int k = 0; k < m; k++) {
                buf[k].geom_a = i;
                buf[k].geom_b = j;
                list_push(&l, &buf[k]);
            }
        }
    return l;
}

static void assert_same_contacts(const col_contact_point* p, int32_t n, const col_contact_point* q, int32_t m)
{
    assert_int_equal(n, m);
    for (int32_t i = 0; i < n; i++) {
        assert_int_equal(p[i].geom_a, q[i].geom_a);
        assert_int_equal(p[i].geom_b, q[i].geom_b);
        assert_int_equal(p[i].feature, q[i].feature);
        assert_true(p[i].distance == q[i].distance);
        for (int k = 0; k < 3; k++) {
            assert_true(p[i].point[k] == q[i].point[k]);
            assert_true(p[i].normal[k] == q[i].normal[k]);
        }
    }
}


/* A random scene of n geoms in [0, side]³ (+ offset): spheres, boxes and
 * capsules of sizes spread by `spread`, a plane at z = offset (index n/3),
 * some static geoms and some geoms sharing an owner. */
static void random_scene(col_geom* g, int32_t n, double side, double spread, double offset, uint64_t seed)
{
    uint64_t s = seed;
    for (int32_t i = 0; i < n; i++) {
        double size = 0.05 * (1.0 + spread * base_uniform01(&s) * base_uniform01(&s) * base_uniform01(&s));
        double x = offset + side * base_uniform01(&s), y = offset + side * base_uniform01(&s), z = offset + side * base_uniform01(&s);
        int kind = (int)(3 * base_uniform01(&s));
        col_geom* q = &g[i];
        if (kind == 0) {
            *q = sphere(x, y, z, size * (0.5 + base_uniform01(&s)));
        } else if (kind == 1) {
            *q = box(x, y, z, size * (0.3 + base_uniform01(&s)), size * (0.3 + base_uniform01(&s)), size * (0.3 + base_uniform01(&s)));
            random_rotation(q->rot, &s);
        } else {
            *q = capsule(x, y, z, size * (0.3 + 0.5 * base_uniform01(&s)), size * 1.5 * base_uniform01(&s));
            random_rotation(q->rot, &s);
        }
        q->owner = i;
        if (base_uniform01(&s) < 0.1 && i > 0) q->owner = g[i - 1].owner; /* compound with the previous */
        q->is_static = base_uniform01(&s) < 0.15;
        col_geom_update(q);
    }
    if (n >= 3) {
        g[n / 3] = plane(offset, offset, offset + 0.2 * side);
        g[n / 3].owner = -1;
        g[n / 3].is_static = true;
    }
}

static void check_scene(col_collision* c, const col_geom* g, int32_t n, double env)
{
    const col_contact_point* pts = NULL;
    int32_t count = -1;
    assert_int_equal(col_collide(c, g, n, env, &pts, &count), DVI_OK);
    contact_list ref = brute_force(g, n, env);
    assert_same_contacts(pts, count, ref.p, ref.n);
    for (int32_t i = 0; i < count; i++) {
        assert_true(pts[i].geom_a < pts[i].geom_b);
        assert_true(pts[i].distance <= env);
        if (i > 0)
            assert_true(pts[i - 1].geom_a < pts[i].geom_a ||
                        (pts[i - 1].geom_a == pts[i].geom_a && pts[i - 1].geom_b <= pts[i].geom_b));
    }
    free(ref.p);
}

static void test_broad_vs_brute_force(void** state)
{
    (void)state;
    col_collision* c = NULL;
    assert_int_equal(col_create(NULL, &c), DVI_OK);
    enum { N = 400 };
    col_geom* g = calloc(N, sizeof *g);
    assert_non_null(g);
    int32_t total = 0;
    for (uint64_t seed = 1; seed <= 6; seed++) {
        /* similar sizes, then sizes spread over ×40 (several grid levels) */
        double spread = seed % 2 ? 1.0 : 40.0;
        random_scene(g, N, 1.2, spread, 0.0, seed);
        check_scene(c, g, N, 0.01);
        const col_contact_point* pts;
        int32_t count;
        assert_int_equal(col_collide(c, g, N, 0.01, &pts, &count), DVI_OK);
        total += count;
        /* smaller subsets reuse the same state */
        check_scene(c, g, N / 4, 0.02);
    }
    assert_true(total > 1000); /* the scenes are dense enough to matter */
    /* clusters 60 apart: the cells spanned are too many for a dense table,
     * so this exercises the hashed cell table */
    for (uint64_t seed = 11; seed <= 13; seed++) {
        random_scene(g, N, 1.0, seed == 12 ? 30.0 : 2.0, 0.0, seed);
        for (int32_t i = 0; i < N; i++) {
            g[i].pos[0] += 60.0 * (i % 3);
            g[i].pos[1] -= 60.0 * (i % 5);
            col_geom_update(&g[i]);
        }
        check_scene(c, g, N, 0.01);
    }
    /* far from the origin, and with no envelope */
    random_scene(g, N, 1.0, 5.0, 1e5, 99);
    check_scene(c, g, N, 0.005);
    random_scene(g, N, 1.0, 5.0, -3.7e3, 98);
    check_scene(c, g, N, 0.0);
    free(g);
    col_destroy(c);
}

/* Spheres exactly touching on a lattice (centres on cell boundaries), with
 * and without envelope: every contact must be found. */
static void test_broad_lattice(void** state)
{
    (void)state;
    enum { K = 7, N = K * K * K + 1 };
    col_geom g[N];
    int32_t n = 0;
    for (int i = 0; i < K; i++)
        for (int j = 0; j < K; j++)
            for (int k = 0; k < K; k++) {
                g[n] = sphere(0.25 * i, 0.25 * j, 0.125 + 0.25 * k, 0.125);
                g[n].owner = n;
                n++;
            }
    g[n] = plane(0, 0, 0);
    g[n].owner = -1;
    g[n].is_static = true;
    n++;
    col_collision* c = NULL;
    assert_int_equal(col_create(NULL, &c), DVI_OK);
    check_scene(c, g, n, 0.0);
    const col_contact_point* pts;
    int32_t count;
    assert_int_equal(col_collide(c, g, n, 0.0, &pts, &count), DVI_OK);
    assert_int_equal(count, 3 * K * K * (K - 1) + K * K); /* lattice bonds + bottom layer on the plane */
    check_scene(c, g, n, 0.01);
    /* the same lattice split in two blocks 1000 apart (hashed cell table) */
    for (int32_t i = 0; i < n - 1; i += 2) {
        g[i].pos[0] += 1000.0;
        col_geom_update(&g[i]);
    }
    check_scene(c, g, n, 0.0);
    check_scene(c, g, n, 0.01);
    col_destroy(c);
}

static void test_broad_determinism(void** state)
{
    (void)state;
    enum { N = 300 };
    col_geom* g = calloc(N, sizeof *g);
    col_geom* other = calloc(2 * N, sizeof *other);
    assert_non_null(g);
    assert_non_null(other);
    random_scene(g, N, 1.0, 10.0, 0.0, 7);
    random_scene(other, 2 * N, 2.0, 3.0, 0.0, 8);
    col_collision *c1 = NULL, *c2 = NULL;
    assert_int_equal(col_create(NULL, &c1), DVI_OK);
    assert_int_equal(col_create(NULL, &c2), DVI_OK);
    const col_contact_point *p1, *p2;
    int32_t n1, n2;
    assert_int_equal(col_collide(c1, g, N, 0.01, &p1, &n1), DVI_OK);
    col_contact_point* copy = malloc((size_t)n1 * sizeof *copy + 1);
    assert_non_null(copy);
    memcpy(copy, p1, (size_t)n1 * sizeof *copy);
    /* same state after an unrelated, larger call */
    assert_int_equal(col_collide(c1, other, 2 * N, 0.01, &p2, &n2), DVI_OK);
    assert_int_equal(col_collide(c1, g, N, 0.01, &p1, &n1), DVI_OK);
    assert_same_contacts(p1, n1, copy, n1);
    const col_contact_point* again = p1;
    assert_int_equal(col_collide(c1, g, N, 0.01, &p1, &n1), DVI_OK);
    assert_ptr_equal(p1, again); /* steady state: the output buffer is reused */
    /* a fresh state */
    assert_int_equal(col_collide(c2, g, N, 0.01, &p2, &n2), DVI_OK);
    assert_same_contacts(p2, n2, copy, n1);
    free(copy);
    free(g);
    free(other);
    col_destroy(c1);
    col_destroy(c2);
}

static void test_broad_filters(void** state)
{
    (void)state;
    /* a chain of overlapping unit spheres along x; owners and static flags
     * decide which neighbours pair */
    col_geom g[7];
    for (int i = 0; i < 6; i++) g[i] = sphere(1.5 * i, 0, 1, 1);
    g[0].owner = g[1].owner = 10;           /* same owner: skipped */
    g[2].owner = 11;
    g[3].owner = 12;
    g[2].is_static = g[3].is_static = true; /* static–static: skipped */
    g[4].owner = 13;
    g[4].is_static = true;                  /* static–dynamic: kept */
    g[5].owner = 14;
    g[6] = box(0, 0, -1, 20, 20, 1);         /* static floor touching spheres 0..5 */
    g[6].owner = 15;
    g[6].is_static = true;
    col_collision* c = NULL;
    assert_int_equal(col_create(NULL, &c), DVI_OK);
    const col_contact_point* p;
    int32_t n;
    assert_int_equal(col_collide(c, g, 7, 0.01, &p, &n), DVI_OK);
    /* expected pairs: (0,6) (1,2) (1,6) (3,4)? no: 3 and 4 both static; (4,5) (5,6) */
    const int32_t want[][2] = {{0, 6}, {1, 2}, {1, 6}, {4, 5}, {5, 6}};
    assert_int_equal(n, 5);
    for (int i = 0; i < 5; i++) {
        assert_int_equal(p[i].geom_a, want[i][0]);
        assert_int_equal(p[i].geom_b, want[i][1]);
    }
    /* sphere 0 above the floor box (higher index): normal from the sphere down */
    assert_vec(p[0].normal, 0, 0, -1, TOL);
    assert_near(p[0].distance, 0.0, TOL);
    /* box first (lower index): normal from the box up to the sphere */
    col_geom h[2] = {g[6], g[5]};
    h[0].owner = 1;
    h[1].owner = 2;
    assert_int_equal(col_collide(c, h, 2, 0.01, &p, &n), DVI_OK);
    assert_int_equal(n, 1);
    assert_int_equal(p[0].geom_a, 0);
    assert_vec(p[0].normal, 0, 0, 1, TOL);
    /* a plane with a higher index than the sphere */
    col_geom q[2] = {sphere(0, 0, 0.5, 1), plane(0, 0, 0)};
    q[0].owner = 1;
    q[1].owner = 2;
    q[1].is_static = true;
    assert_int_equal(col_collide(c, q, 2, 0.0, &p, &n), DVI_OK);
    assert_int_equal(n, 1);
    assert_vec(p[0].normal, 0, 0, -1, TOL);
    assert_near(p[0].distance, -0.5, TOL);
    col_destroy(c);
}

/* A granular bed: n spheres (radius 0.01–0.02) on a jittered 0.03 lattice,
 * every 50th a small rotated box or capsule, in a container of a floor plane
 * and four static wall boxes, with a large static slab above one corner;
 * every 37th geom shares its owner with the previous one. Returns the geom
 * count (n + 6). */
static int32_t granular_bed(col_geom* g, int32_t n, uint64_t seed)
{
    uint64_t s = seed;
    const int32_t nz = (int32_t)ceil(cbrt(n / 4.0)), nx = (int32_t)ceil(sqrt((double)n / nz)); /* nx ≈ 2 nz */
    for (int32_t i = 0; i < n; i++) {
        const int32_t ix = i % nx, iy = (i / nx) % nx, iz = i / (nx * nx);
        const double x = 0.03 * (ix + 0.5) + 0.002 * (2 * base_uniform01(&s) - 1);
        const double y = 0.03 * (iy + 0.5) + 0.002 * (2 * base_uniform01(&s) - 1);
        const double z = 0.03 * (iz + 0.5) + 0.002 * (2 * base_uniform01(&s) - 1) - 0.005;
        const double r = 0.01 + 0.01 * base_uniform01(&s);
        if (i % 50 == 7) {
            g[i] = box(x, y, z, r, 0.7 * r, 0.5 * r);
            random_rotation(g[i].rot, &s);
        } else if (i % 50 == 31) {
            g[i] = capsule(x, y, z, 0.6 * r, 0.8 * r);
            random_rotation(g[i].rot, &s);
        } else {
            g[i] = sphere(x, y, z, r);
        }
        g[i].owner = (i % 37 == 36) ? g[i - 1].owner : i;
    }
    const double L = 0.03 * nx, H = 0.03 * (nz + 1);
    g[n] = plane(0, 0, 0);
    g[n + 1] = box(-0.02, 0.5 * L, 0.5 * H, 0.02, 0.5 * L + 0.04, 0.5 * H);
    g[n + 2] = box(L + 0.02, 0.5 * L, 0.5 * H, 0.02, 0.5 * L + 0.04, 0.5 * H);
    g[n + 3] = box(0.5 * L, -0.02, 0.5 * H, 0.5 * L, 0.02, 0.5 * H);
    g[n + 4] = box(0.5 * L, L + 0.02, 0.5 * H, 0.5 * L, 0.02, 0.5 * H);
    g[n + 5] = box(0.1 * L, 0.1 * L, 0.03 * nz - 0.01, 0.15 * L, 0.15 * L, 0.02);
    for (int32_t k = 0; k < 6; k++) {
        g[n + k].owner = n + k;
        g[n + k].is_static = true;
    }
    for (int32_t i = 0; i < n + 6; i++) col_geom_update(&g[i]);
    return n + 6;
}

/* col_collide(g) on `threads` threads, from `par_min` geoms up, on a fresh
 * state: a copy of the points. */
static col_contact_point* collide_copy(const col_geom* g, int32_t n, double env, int threads, int32_t par_min,
                                       int32_t* count)
{
    col_collision* c = NULL;
    assert_int_equal(col_create(NULL, &c), DVI_OK);
    col_set_threads(c, threads);
    col_set_parallel_min(c, par_min);
    const col_contact_point* p = NULL;
    assert_int_equal(col_collide(c, g, n, env, &p, count), DVI_OK);
    col_contact_point* copy = malloc((size_t)*count * sizeof *copy + 1);
    assert_non_null(copy);
    memcpy(copy, p, (size_t)*count * sizeof *copy);
    col_destroy(c);
    return copy;
}

/* The parallel path returns the serial path's points byte for byte, for 1,
 * 2 and 3 threads: a bed of a few thousand geoms (dense cell table, one
 * plane, walls on a higher level), the same bed in two blocks far apart
 * (hashed table), the random scenes of several levels, and a repeated call
 * on one state (buffers reused). */
static void test_collide_threads(void** state)
{
    (void)state;
    enum { SPHERES = 6000 };
    col_geom* g = calloc(SPHERES + 6, sizeof *g);
    assert_non_null(g);
    for (int scene = 0; scene < 4; scene++) {
        int32_t n;
        double env = 0.005;
        if (scene < 2) {
            n = granular_bed(g, SPHERES, 17 + (uint64_t)scene);
            if (scene == 1) /* every third geom moved 500 away: the hashed cell table */
                for (int32_t i = 0; i < n; i += 3) {
                    g[i].pos[0] += 500.0;
                    col_geom_update(&g[i]);
                }
        } else { /* random scenes: several levels, planes, statics, compounds */
            n = 3000;
            random_scene(g, n, 2.0, scene == 2 ? 40.0 : 1.0, 0.0, 40 + (uint64_t)scene);
            env = 0.01;
        }
        int32_t ns = 0;
        col_contact_point* serial = collide_copy(g, n, env, 3, INT32_MAX, &ns); /* the serial path */
        assert_true(ns > (scene < 2 ? n : 500));
        for (int t = 1; t <= 3; t++) {
            int32_t m = -1;
            col_contact_point* par = collide_copy(g, n, env, t, 0, &m);
            assert_int_equal(m, ns);
            assert_memory_equal(par, serial, (size_t)ns * sizeof *serial);
            free(par);
            par = collide_copy(g, n, env, t, DVI_COLLIDE_PAR_MIN, &m); /* the default threshold */
            assert_int_equal(m, ns);
            assert_memory_equal(par, serial, (size_t)ns * sizeof *serial);
            free(par);
        }
        if (scene == 0) { /* against every pair, and on one state called again */
            contact_list ref = brute_force(g, n, env);
            assert_same_contacts(serial, ns, ref.p, ref.n);
            free(ref.p);
            col_collision* c = NULL;
            assert_int_equal(col_create(NULL, &c), DVI_OK);
            col_set_threads(c, 2);
            const col_contact_point *p1 = NULL, *p2 = NULL;
            int32_t m1 = 0, m2 = 0;
            assert_int_equal(col_collide(c, g, n, env, &p1, &m1), DVI_OK);
            assert_int_equal(col_collide(c, g, 200, env, &p2, &m2), DVI_OK); /* small: serial */
            assert_int_equal(col_collide(c, g, n, env, &p2, &m2), DVI_OK);
            assert_ptr_equal(p1, p2);
            assert_int_equal(m2, ns);
            assert_memory_equal(p2, serial, (size_t)ns * sizeof *serial);
            col_destroy(c);
        }
        free(serial);
    }
    /* small scenes on the parallel path: against every pair */
    col_collision* c = NULL;
    assert_int_equal(col_create(NULL, &c), DVI_OK);
    col_set_threads(c, 3);
    col_set_parallel_min(c, 0);
    for (uint64_t seed = 1; seed <= 4; seed++) {
        random_scene(g, 300, 1.2, seed % 2 ? 1.0 : 40.0, 0.0, seed);
        check_scene(c, g, 300, 0.01);
        check_scene(c, g, 2, 0.01);
    }
    const col_contact_point* p = NULL;
    int32_t m = -1;
    assert_int_equal(col_collide(c, g, 0, 0.01, &p, &m), DVI_OK);
    assert_int_equal(m, 0);
    col_destroy(c);
    free(g);
}

/* The world state after a few steps of a bed above DVI_COLLIDE_PAR_MIN
 * shapes (the parallel path), DVI and DEM, with `threads` threads. */
static void world_run(dvi_method method, int threads, void** blob, size_t* size)
{
    enum { K = 15, LAYERS = 10 }; /* 2,250 spheres */
    dvi_world_def wd = dvi_default_world_def();
    wd.method = method;
    wd.solver_settings.max_iterations = 20;
    wd.solver_settings.threads = threads;
    dvi_world* w = NULL;
    assert_int_equal(dvi_world_create(&wd, &w), DVI_OK);
    test_fixed_plane(w, NULL);
    uint64_t s = 5;
    for (int i = 0; i < K * K * LAYERS; i++) {
        const double r = 0.01 + 0.002 * base_uniform01(&s);
        dvi_body_def bd = dvi_default_body_def();
        bd.mass = 0.01;
        bd.inertia[0] = bd.inertia[4] = bd.inertia[8] = 0.4 * bd.mass * r * r;
        bd.position[0] = 0.025 * (i % K) + 0.001 * base_uniform01(&s);
        bd.position[1] = 0.025 * ((i / K) % K) + 0.001 * base_uniform01(&s);
        bd.position[2] = 0.0115 + 0.022 * (i / (K * K)) + 0.001 * base_uniform01(&s);
        dvi_body_id b;
        assert_int_equal(dvi_body_create(w, &bd, &b), DVI_OK);
        dvi_shape_def sd = dvi_default_shape_def();
        sd.type = DVI_SHAPE_SPHERE;
        sd.radius = r;
        dvi_shape_id shape;
        assert_int_equal(dvi_shape_create(w, b, &sd, &shape), DVI_OK);
    }
    const double h = method == DVI_METHOD_DEM ? 1e-5 : 2e-3;
    for (int k = 0; k < 3; k++) {
        dvi_status st = dvi_world_step(w, h);
        assert_true(st == DVI_OK || st == DVI_NOT_CONVERGED);
    }
    assert_true(dvi_world_contact_count(w) > K * K); /* the grains touch */
    assert_int_equal(dvi_world_save_state(w, blob, size), DVI_OK);
    dvi_world_destroy(w);
}

/* A world's state after its steps is the same, bit for bit, whatever the
 * thread count of the step (collision included). */
static void test_world_threads(void** state)
{
    (void)state;
    for (int m = 0; m < 2; m++) {
        const dvi_method method = m ? DVI_METHOD_DEM : DVI_METHOD_DVI;
        void* ref = NULL;
        size_t ref_size = 0;
        world_run(method, 1, &ref, &ref_size);
        for (int t = 2; t <= 3; t++) {
            void* blob = NULL;
            size_t size = 0;
            world_run(method, t, &blob, &size);
            assert_int_equal(size, ref_size);
            assert_memory_equal(blob, ref, size);
            free(blob);
        }
        free(ref);
    }
}

static void test_broad_edge_cases(void** state)
{
    (void)state;
    col_collision* c = NULL;
    assert_int_equal(col_create(NULL, &c), DVI_OK);
    const col_contact_point* p = NULL;
    int32_t n = -1;
    assert_int_equal(col_collide(c, NULL, 0, 0.01, &p, &n), DVI_OK);
    assert_int_equal(n, 0);
    assert_int_equal(col_collide(NULL, NULL, 0, 0.01, &p, &n), DVI_ERR_INVALID_ARG);
    assert_int_equal(col_collide(c, NULL, 3, 0.01, &p, &n), DVI_ERR_INVALID_ARG);
    assert_int_equal(col_collide(c, NULL, -1, 0.01, &p, &n), DVI_ERR_INVALID_ARG);
    assert_int_equal(col_create(NULL, NULL), DVI_ERR_INVALID_ARG);
    col_destroy(NULL);

    /* a huge box among small spheres, a NaN sphere, an infinite box and two planes */
    col_geom g[8];
    g[0] = sphere(0, 0, 1.05, 0.1);
    g[1] = box(0, 0, 0, 1e9, 1e9, 1); /* top face at z = 1 */
    g[2] = sphere(NAN, 0, 0, 0.1);
    g[3] = sphere(5, 5, 1.09, 0.1);
    g[4] = plane(0, 0, -5);
    g[5] = box(0, 0, 0, INFINITY, 1, 1);
    g[6] = plane(0, 0, 0);
    g[7] = sphere(1e30, 0, 0, 1e28); /* far away, enormous */
    for (int i = 0; i < 8; i++) g[i].owner = i;
    g[1].is_static = g[4].is_static = g[5].is_static = g[6].is_static = true;
    assert_int_equal(col_collide(c, g, 8, 0.0, &p, &n), DVI_OK);
    /* sphere 0 and 3 on the huge box (Φ −0.05 and −0.01), sphere 0 against box 5 */
    int found03 = 0;
    for (int32_t i = 0; i < n; i++) {
        assert_true(p[i].geom_a < p[i].geom_b);
        if (p[i].geom_a == 0 && p[i].geom_b == 1) found03 |= 1;
        if (p[i].geom_a == 1 && p[i].geom_b == 3) found03 |= 2;
    }
    assert_int_equal(found03, 3);
    col_destroy(c);
}

/* ---- ellipsoid ------------------------------------------------------------------ */

/* Point of the ellipsoid g (semi-axes half[], pose pos, rot) at polar angle
 * th and azimuth ph of its frame, and the outward unit normal there, in the
 * world. */
static void ellipsoid_surface(const col_geom* g, double th, double ph, double q[3], double n[3])
{
    const double* h = g->half;
    const double ql[3] = {h[0] * sin(th) * cos(ph), h[1] * sin(th) * sin(ph), h[2] * cos(th)};
    double nl[3] = {ql[0] / (h[0] * h[0]), ql[1] / (h[1] * h[1]), ql[2] / (h[2] * h[2])};
    const double len = sqrt(nl[0] * nl[0] + nl[1] * nl[1] + nl[2] * nl[2]);
    for (int k = 0; k < 3; k++) nl[k] /= len;
    for (int k = 0; k < 3; k++) {
        q[k] = g->pos[k] + g->rot[3 * k] * ql[0] + g->rot[3 * k + 1] * ql[1] + g->rot[3 * k + 2] * ql[2];
        n[k] = g->rot[3 * k] * nl[0] + g->rot[3 * k + 1] * nl[1] + g->rot[3 * k + 2] * nl[2];
    }
}

/* A sphere whose centre is at q + t·n, q a point of a turned ellipsoid with
 * outward normal n: the centre's closest point of the (convex) ellipsoid is
 * q, so the gap is t − r exactly, and the normal is n. Checked apart, in
 * contact and overlapping, in both orders, at 24 points. Against a plane:
 * the gap is the centre's height less the ellipsoid's extent along the
 * plane's normal, |row z of R·diag(a, b, c)|. */
static void test_ellipsoid_contacts(void** state)
{
    (void)state;
    uint64_t seed = 20261206u;
    const double r = 0.05, env = 0.05, ts[3] = {0.08, 0.0505, 0.03};
    double worst_gap = 0.0, worst_normal = 0.0;
    for (int trial = 0; trial < 8; trial++) {
        col_geom e = geom(DVI_SHAPE_ELLIPSOID, 0.1, -0.2, 0.3);
        e.half[0] = 0.3, e.half[1] = 0.2, e.half[2] = 0.1;
        random_rotation(e.rot, &seed);
        col_geom_update(&e);
        for (int i = 0; i < 3; i++) {
            double q[3], n[3];
            ellipsoid_surface(&e, PI * (0.1 + 0.8 * base_uniform01(&seed)), 2 * PI * base_uniform01(&seed), q, n);
            const double t = ts[i];
            col_geom s = sphere(q[0] + t * n[0], q[1] + t * n[1], q[2] + t * n[2], r);
            col_contact_point p[MAXP];
            assert_int_equal(col_narrow_phase(&e, &s, env, p, MAXP), 1);
            worst_gap = fmax(worst_gap, fabs(p[0].distance - (t - r)));
            for (int k = 0; k < 3; k++) worst_normal = fmax(worst_normal, fabs(p[0].normal[k] - n[k]));
            assert_int_equal(col_narrow_phase(&s, &e, env, p, MAXP), 1);
            worst_gap = fmax(worst_gap, fabs(p[0].distance - (t - r)));
            for (int k = 0; k < 3; k++) worst_normal = fmax(worst_normal, fabs(p[0].normal[k] + n[k]));
        }
        /* out of reach: a gap of 0.06 > envelope */
        double q[3], n[3];
        ellipsoid_surface(&e, 1.0, 2.0, q, n);
        col_geom far = sphere(q[0] + 0.11 * n[0], q[1] + 0.11 * n[1], q[2] + 0.11 * n[2], r);
        col_contact_point p[MAXP];
        assert_int_equal(col_narrow_phase(&e, &far, env, p, MAXP), 0);
        /* on a plane at z = 0, 0.01 m above it, then 0.01 m into it */
        col_geom pl = plane(0, 0, 0);
        double ext = 0.0;
        for (int j = 0; j < 3; j++) ext += pow(e.rot[6 + j] * e.half[j], 2);
        for (int side = 0; side < 2; side++) {
            const double phi = side == 0 ? 0.01 : -0.01;
            e.pos[2] = sqrt(ext) + phi;
            col_geom_update(&e);
            assert_int_equal(col_narrow_phase(&pl, &e, env, p, MAXP), 1);
            assert_near(p[0].distance, phi, 1e-14);
            assert_vec(p[0].normal, 0, 0, 1, 0);
        }
    }
    print_message("ellipsoid-sphere: worst |gap - (t - r)| = %.2e m, worst normal error %.2e (48 contacts)\n",
                  worst_gap, worst_normal);
    assert_true(worst_gap < 1e-9);
    assert_true(worst_normal < 1e-6);
}

/* The ellipsoid's class: mass properties against the closed form, its AABB
 * against its extent along each axis, its ray cast against a hit placed on
 * its surface. */
static void test_ellipsoid_class(void** state)
{
    (void)state;
    const col_shape_class* c = col_shape_class_of(DVI_SHAPE_ELLIPSOID);
    assert_non_null(c);
    assert_string_equal(c->name, "ellipsoid");
    col_geom e = geom(DVI_SHAPE_ELLIPSOID, 0, 0, 0);
    const double a = 0.3, b = 0.2, cc = 0.1, rho = 2700.0;
    e.half[0] = a, e.half[1] = b, e.half[2] = cc;
    double v, d[3];
    c->mass(&e, &v, d);
    const double m = rho * v, m_expect = rho * 4.0 / 3.0 * PI * a * b * cc;
    assert_near(m, m_expect, 1e-12 * m_expect);                         /* 678.58 kg */
    assert_near(m * d[0], m_expect * (b * b + cc * cc) / 5.0, 1e-12 * m_expect); /* I_xx */
    assert_near(m * d[1], m_expect * (a * a + cc * cc) / 5.0, 1e-12 * m_expect);
    assert_near(m * d[2], m_expect * (a * a + b * b) / 5.0, 1e-12 * m_expect);
    /* turned 90° about z: the x extent is b, the y extent a */
    test_rot_axis(e.rot, 0, 0, 1, PI / 2);
    col_geom_update(&e);
    assert_near(e.aabb_max[0], b, 1e-15);
    assert_near(e.aabb_max[1], a, 1e-15);
    assert_near(e.aabb_min[2], -cc, 1e-15);
    /* a ray from 1 m out along the normal at a surface point hits it at t = 1 */
    rot_identity(e.rot);
    double q[3], n[3], t, hn[3];
    ellipsoid_surface(&e, 0.7, 2.5, q, n);
    const double o[3] = {q[0] + n[0], q[1] + n[1], q[2] + n[2]}, u[3] = {-n[0], -n[1], -n[2]};
    assert_true(c->ray(&e, o, u, 10.0, &t, hn));
    assert_near(t, 1.0, 1e-12);
    assert_vec(hn, n[0], n[1], n[2], 1e-12);
    assert_false(c->ray(&e, o, u, 0.5, &t, hn)); /* beyond tmax */
    const double away[3] = {n[0], n[1], n[2]};
    assert_false(c->ray(&e, o, away, 10.0, &t, hn));
}

/* Counts what a class draws and checks each point against the ellipsoid. */
typedef struct count_sink {
    col_mesh_sink sink;
    int points, triangles;
    size_t max_index;
    double worst; /* |x²/a² + y²/b² + z²/c² − 1| */
    const double* semi;
} count_sink;

static void count_point(col_mesh_sink* m, double x, double y, double z)
{
    count_sink* c = (count_sink*)m;
    c->points++;
    const double* h = c->semi;
    c->worst = fmax(c->worst, fabs(x * x / (h[0] * h[0]) + y * y / (h[1] * h[1]) + z * z / (h[2] * h[2]) - 1.0));
}

static void count_triangle(col_mesh_sink* m, size_t a, size_t b, size_t c)
{
    count_sink* k = (count_sink*)m;
    k->triangles++;
    k->max_index = a > k->max_index ? a : k->max_index;
    k->max_index = b > k->max_index ? b : k->max_index;
    k->max_index = c > k->max_index ? c : k->max_index;
}

/* The drawn ellipsoid (the VTK writer's surface): the sphere's tessellation,
 * 266 points and 528 triangles (docs/outputs.md), every point on the
 * surface. */
static void test_ellipsoid_mesh(void** state)
{
    (void)state;
    col_geom e = geom(DVI_SHAPE_ELLIPSOID, 0, 0, 0);
    e.half[0] = 0.3, e.half[1] = 0.2, e.half[2] = 0.1;
    count_sink c = {.sink = {.point = count_point, .triangle = count_triangle}, .semi = e.half};
    col_shape_class_of(DVI_SHAPE_ELLIPSOID)->mesh(&e, &c.sink);
    print_message("ellipsoid drawn: %d points, %d triangles, worst |x^2/a^2 + ... - 1| = %.1e\n", c.points,
                  c.triangles, c.worst);
    assert_int_equal(c.points, 266);
    assert_int_equal(c.triangles, 528);
    assert_int_equal((int)c.max_index, 265);
    assert_true(c.worst < 1e-14);
}

/* Ray casts of every kind that has one: a ray aimed at a surface point q
 * (outward normal n) from o = q + L·w, w·n ≥ 0.3, meets nothing before q
 * (the segment lies beyond the tangent plane at q), so the hit is t = L
 * with normal n; the reversed ray and a ray from the centre miss. 50
 * points per kind, on faces, sides, caps and rounded ends. */
static void surface_point(dvi_shape_type t, const col_geom* g, uint64_t* seed, double q[3], double n[3])
{
    const double u1 = base_uniform01(seed), u2 = base_uniform01(seed), u3 = base_uniform01(seed);
    const double ph = 2 * PI * u1, side = u3 < 0.5 ? 1.0 : -1.0;
    switch (t) {
    case DVI_SHAPE_SPHERE: {
        const double z = 2 * u2 - 1, rho = sqrt(1 - z * z);
        v3_set(n, rho * cos(ph), rho * sin(ph), z);
        for (int k = 0; k < 3; k++) q[k] = g->radius * n[k];
        break;
    }
    case DVI_SHAPE_BOX: {
        const int k = (int)(u3 * 6) % 3, i = (k + 1) % 3, j = (k + 2) % 3;
        q[k] = side * g->half[k], q[i] = (1.8 * u1 - 0.9) * g->half[i], q[j] = (1.8 * u2 - 0.9) * g->half[j];
        n[0] = n[1] = n[2] = 0.0, n[k] = side;
        break;
    }
    case DVI_SHAPE_CAPSULE:
    case DVI_SHAPE_CYLINDER: {
        const double r = g->radius, hl = g->half_length;
        if (base_uniform01(seed) < 0.5) { /* the side */
            v3_set(n, cos(ph), sin(ph), 0.0);
            v3_set(q, r * n[0], r * n[1], (1.8 * u2 - 0.9) * hl);
        } else if (t == DVI_SHAPE_CYLINDER) { /* a cap */
            const double rho = 0.9 * r * sqrt(u2);
            v3_set(q, rho * cos(ph), rho * sin(ph), side * hl);
            v3_set(n, 0.0, 0.0, side);
        } else { /* a rounded end */
            const double z = 0.05 + 0.95 * u2, rho = sqrt(1 - z * z);
            v3_set(n, rho * cos(ph), rho * sin(ph), side * z);
            v3_set(q, r * n[0], r * n[1], side * (hl + r * z));
        }
        break;
    }
    case DVI_SHAPE_ELLIPSOID:
        ellipsoid_surface(g, PI * u2, ph, q, n);
        break;
    default: /* plane */
        v3_set(q, 4 * u1 - 2, 4 * u2 - 2, 0.0);
        v3_set(n, 0.0, 0.0, 1.0);
        break;
    }
}

static void test_ray_casts(void** state)
{
    (void)state;
    static const dvi_shape_type kinds[] = {DVI_SHAPE_SPHERE,   DVI_SHAPE_BOX,       DVI_SHAPE_CAPSULE,
                                           DVI_SHAPE_CYLINDER, DVI_SHAPE_ELLIPSOID, DVI_SHAPE_PLANE};
    uint64_t seed = 77u;
    double worst_t = 0.0, worst_n = 0.0;
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        col_geom g = geom(kinds[i], 0, 0, 0);
        g.radius = 0.2, g.half_length = 0.15;
        g.half[0] = 0.3, g.half[1] = 0.2, g.half[2] = 0.1;
        const col_shape_class* c = col_shape_class_of(kinds[i]);
        assert_non_null(c->ray);
        for (int trial = 0; trial < 50; trial++) {
            double q[3], n[3], w[3], hn[3], t;
            surface_point(kinds[i], &g, &seed, q, n);
            do {
                const double z = 2 * base_uniform01(&seed) - 1, rho = sqrt(1 - z * z), ph = 2 * PI * base_uniform01(&seed);
                v3_set(w, rho * cos(ph), rho * sin(ph), z);
            } while (v3_dot(w, n) < 0.3);
            const double L = 0.5 + base_uniform01(&seed);
            const double o[3] = {q[0] + L * w[0], q[1] + L * w[1], q[2] + L * w[2]}, u[3] = {-w[0], -w[1], -w[2]};
            assert_true(c->ray(&g, o, u, 10.0, &t, hn));
            worst_t = fmax(worst_t, fabs(t - L));
            for (int k = 0; k < 3; k++) worst_n = fmax(worst_n, fabs(hn[k] - n[k]));
            assert_false(c->ray(&g, o, w, 10.0, &t, hn));     /* away */
            assert_false(c->ray(&g, o, u, 0.9 * L, &t, hn));  /* short of q */
            const double inside[3] = {0.0, 0.0, kinds[i] == DVI_SHAPE_PLANE ? -0.1 : 0.0};
            assert_false(c->ray(&g, inside, u, 10.0, &t, hn)); /* from inside */
        }
    }
    print_message("ray casts of 6 kinds, 300 rays: worst |t - L| = %.1e m, worst normal error %.1e\n", worst_t,
                  worst_n);
    assert_true(worst_t < 1e-12);
    assert_true(worst_n < 1e-12);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_aabb_convex),
        cmocka_unit_test(test_ellipsoid_contacts),
        cmocka_unit_test(test_ellipsoid_class),
        cmocka_unit_test(test_ellipsoid_mesh),
        cmocka_unit_test(test_ray_casts),
        cmocka_unit_test(test_aabb_unbounded_and_terrain),
        cmocka_unit_test(test_sphere_sphere),
        cmocka_unit_test(test_sphere_box),
        cmocka_unit_test(test_sphere_capsule_plane),
        cmocka_unit_test(test_capsule_capsule),
        cmocka_unit_test(test_capsule_plane),
        cmocka_unit_test(test_capsule_box_separated),
        cmocka_unit_test(test_capsule_box_penetrating),
        cmocka_unit_test(test_random_against_numeric),
        cmocka_unit_test(test_dispatch_flip),
        cmocka_unit_test(test_broad_vs_brute_force),
        cmocka_unit_test(test_broad_lattice),
        cmocka_unit_test(test_broad_determinism),
        cmocka_unit_test(test_broad_filters),
        cmocka_unit_test(test_broad_edge_cases),
        cmocka_unit_test(test_collide_threads),
        cmocka_unit_test(test_world_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
