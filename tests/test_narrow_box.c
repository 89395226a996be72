/* Tests of the box, cylinder and general convex narrow phase (narrow_box.c,
 * narrow_cylinder.c, gjk.c) on cases worked out by hand: box–plane resting,
 * tilted and separated; box–box face, rotated, edge–edge and deep contacts
 * and a 10-box stack; cylinder–plane upright, lying and tilted; sphere–
 * cylinder in every region; cylinder manifolds on boxes and cylinders; GJK
 * distances and EPA depths against analytic values and against the box–box
 * separating-axis routine on random boxes; stability of the feature ids and
 * the normal flip through the dispatcher. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <float.h>
#include <math.h>
#include <string.h>

#include "collision.h"
#include "narrow.h"
#include "hash_rng.h"
#include "test_util.h"

#define PI 3.14159265358979323846
#define MAXP 16
#define ENV 0.005

/* ---- helpers ------------------------------------------------------------------- */

static col_geom base(dvi_shape_type t, double x, double y, double z)
{
    col_geom g;
    memset(&g, 0, sizeof g);
    g.type = t;
    g.pos[0] = x;
    g.pos[1] = y;
    g.pos[2] = z;
    g.rot[0] = g.rot[4] = g.rot[8] = 1.0;
    return g;
}

static col_geom box(double x, double y, double z, double hx, double hy, double hz)
{
    col_geom g = base(DVI_SHAPE_BOX, x, y, z);
    g.half[0] = hx;
    g.half[1] = hy;
    g.half[2] = hz;
    return g;
}

static col_geom sphere(double x, double y, double z, double r)
{
    col_geom g = base(DVI_SHAPE_SPHERE, x, y, z);
    g.radius = r;
    return g;
}

static col_geom cylinder(double x, double y, double z, double r, double hl)
{
    col_geom g = base(DVI_SHAPE_CYLINDER, x, y, z);
    g.radius = r;
    g.half_length = hl;
    return g;
}

static col_geom capsule(double x, double y, double z, double r, double hl)
{
    col_geom g = base(DVI_SHAPE_CAPSULE, x, y, z);
    g.radius = r;
    g.half_length = hl;
    return g;
}

static col_geom ground(void) /* z ≤ 0 */
{
    col_geom g = base(DVI_SHAPE_PLANE, 0, 0, 0);
    g.is_static = true;
    return g;
}

static void set_rot(col_geom* g, const double R[9]) { memcpy(g->rot, R, sizeof g->rot); }

static void assert_unit_normal(const col_contact_point* p, double nx, double ny, double nz, double tol)
{
    assert_near(p->normal[0], nx, tol);
    assert_near(p->normal[1], ny, tol);
    assert_near(p->normal[2], nz, tol);
}

/* index of the point at (x, y) (within tol), or −1 */
static int find_xy(const col_contact_point* p, int n, double x, double y, double tol)
{
    for (int i = 0; i < n; i++)
        if (fabs(p[i].point[0] - x) <= tol && fabs(p[i].point[1] - y) <= tol) return i;
    return -1;
}

static double min_distance(const col_contact_point* p, int n)
{
    double m = DBL_MAX;
    for (int i = 0; i < n; i++) m = fmin(m, p[i].distance);
    return m;
}

/* Every point: unit normal, Φ ≤ envelope, finite. */
static void assert_sane(const col_contact_point* p, int n, double envelope)
{
    for (int i = 0; i < n; i++) {
        double l = sqrt(p[i].normal[0] * p[i].normal[0] + p[i].normal[1] * p[i].normal[1] +
                        p[i].normal[2] * p[i].normal[2]);
        assert_near(l, 1.0, 1e-12);
        assert_true(p[i].distance <= envelope);
        for (int k = 0; k < 3; k++) assert_true(isfinite(p[i].point[k]));
    }
}

/* ---- box–plane ------------------------------------------------------------------- */

static void test_box_plane_resting(void** state)
{
    (void)state;
    col_geom bx = box(1.0, 2.0, 0.2 + 0.001, 0.5, 0.3, 0.2), pl = ground();
    col_contact_point p[MAXP];
    int n = col_collide_box_plane(&bx, &pl, ENV, p, MAXP);
    assert_int_equal(n, 4);
    assert_sane(p, n, ENV);
    for (int i = 0; i < n; i++) {
        assert_near(p[i].distance, 0.001, 1e-14);
        assert_unit_normal(&p[i], 0, 0, -1, 0.0);
        assert_near(p[i].point[2], 0.0005, 1e-14);
        assert_true(p[i].feature < 4); /* bottom corners: bit 2 clear */
        double x = (p[i].feature & 1) ? 1.5 : 0.5, y = (p[i].feature & 2) ? 2.3 : 1.7;
        assert_near(p[i].point[0], x, 1e-14);
        assert_near(p[i].point[1], y, 1e-14);
    }
    /* separated beyond the envelope: nothing; just within: 4 points */
    bx.pos[2] = 0.2 + 0.0051;
    assert_int_equal(col_collide_box_plane(&bx, &pl, ENV, p, MAXP), 0);
    bx.pos[2] = 0.2 + 0.0049;
    assert_int_equal(col_collide_box_plane(&bx, &pl, ENV, p, MAXP), 4);
    /* penetrating */
    bx.pos[2] = 0.2 - 0.003;
    n = col_collide_box_plane(&bx, &pl, ENV, p, MAXP);
    assert_int_equal(n, 4);
    for (int i = 0; i < n; i++) assert_near(p[i].distance, -0.003, 1e-14);
    /* a thin plate entirely inside the envelope still gives its 4 deepest corners */
    col_geom plate = box(0, 0, 0.001, 0.5, 0.5, 0.001);
    n = col_collide_box_plane(&plate, &pl, ENV, p, MAXP);
    assert_int_equal(n, 4);
    for (int i = 0; i < n; i++) assert_near(p[i].distance, 0.0, 1e-15);
}

static void test_box_plane_tilted(void** state)
{
    (void)state;
    const double hx = 0.5, hy = 0.3, hz = 0.2, t = 30.0 * PI / 180.0;
    col_contact_point p[MAXP];
    /* 30° about y: the lowest edge (2 corners, parallel to y) */
    double R[9];
    test_rot_axis(R, 0, 1, 0, t);
    double low = hx * sin(t) + hz * cos(t);
    col_geom bx = box(0, 0, low - 0.002, hx, hy, hz), pl = ground();
    set_rot(&bx, R);
    int n = col_collide_box_plane(&bx, &pl, ENV, p, MAXP);
    assert_int_equal(n, 2);
    for (int i = 0; i < n; i++) {
        assert_near(p[i].distance, -0.002, 1e-14);
        assert_near(p[i].point[0], hx * cos(t) - hz * sin(t), 1e-14); /* the +x, −z edge */
        assert_near(fabs(p[i].point[1]), hy, 1e-14);
        assert_near(p[i].point[2], -0.001, 1e-14);
    }
    /* 30° about y then 30° about x: one corner */
    double R2[9], Rx[9];
    test_rot_axis(Rx, 1, 0, 0, t);
    test_mat_mul(R2, Rx, R);
    set_rot(&bx, R2);
    double lowest = 0.0; /* depth of the lowest corner below the centre: Σ h_i |R[2][i]| */
    for (int i = 0; i < 3; i++) lowest += bx.half[i] * fabs(R2[6 + i]);
    bx.pos[2] = lowest + 0.001;
    n = col_collide_box_plane(&bx, &pl, ENV, p, MAXP);
    assert_int_equal(n, 1);
    assert_near(p[0].distance, 0.001, 1e-14);
    bx.pos[2] = lowest + 0.0051;
    assert_int_equal(col_collide_box_plane(&bx, &pl, ENV, p, MAXP), 0);
}

/* ---- box–box ---------------------------------------------------------------------- */

static void test_box_box_face(void** state)
{
    (void)state;
    col_geom a = box(0, 0, 0, 1.0, 1.0, 0.5), b = box(0.2, -0.1, 0.5 + 0.5 - 0.01, 0.5, 0.4, 0.5);
    col_contact_point p[MAXP];
    int n = col_collide_box_box(&a, &b, ENV, p, MAXP);
    assert_int_equal(n, 4);
    assert_sane(p, n, ENV);
    for (int i = 0; i < n; i++) {
        assert_near(p[i].distance, -0.01, 1e-14);
        assert_unit_normal(&p[i], 0, 0, 1, 1e-15);
        assert_near(p[i].point[2], 0.5 - 0.005, 1e-14);
    }
    for (int sx = -1; sx <= 1; sx += 2)
        for (int sy = -1; sy <= 1; sy += 2) assert_true(find_xy(p, n, 0.2 + sx * 0.5, -0.1 + sy * 0.4, 1e-14) >= 0);
    /* separated by 3 mm (within the envelope): Φ = +0.003 */
    b.pos[2] = 1.003;
    n = col_collide_box_box(&a, &b, ENV, p, MAXP);
    assert_int_equal(n, 4);
    for (int i = 0; i < n; i++) assert_near(p[i].distance, 0.003, 1e-14);
    b.pos[2] = 1.0051;
    assert_int_equal(col_collide_box_box(&a, &b, ENV, p, MAXP), 0);
    /* b below a: normal −z */
    b.pos[2] = -1.0 + 0.002;
    n = col_collide_box_box(&a, &b, ENV, p, MAXP);
    assert_int_equal(n, 4);
    for (int i = 0; i < n; i++) {
        assert_near(p[i].distance, -0.002, 1e-14);
        assert_unit_normal(&p[i], 0, 0, -1, 1e-15);
    }
}

/* 10 boxes of alternating sizes stacked with given gaps: 4 points per
 * interface at the corners of the smaller face, Φ = the gap, whichever box is
 * passed first. */
static void test_box_stack(void** state)
{
    (void)state;
    col_geom g[10];
    double gaps[9] = {0.0, 1e-4, -1e-4, 0.002, -0.003, 0.0, 1e-9, -2e-6, 0.0049};
    double z = 0.0;
    for (int i = 0; i < 10; i++) {
        double h = (i % 2) ? 0.3 : 0.5, hz = 0.1 + 0.01 * i;
        if (i > 0) z += gaps[i - 1] + hz;
        g[i] = box(0.01 * i, -0.005 * i, z, h, 0.8 * h, hz);
        z += hz;
    }
    for (int i = 0; i < 9; i++) {
        const col_geom* small = g[i].half[0] < g[i + 1].half[0] ? &g[i] : &g[i + 1];
        for (int order = 0; order < 2; order++) {
            const col_geom *a = order ? &g[i + 1] : &g[i], *b = order ? &g[i] : &g[i + 1];
            col_contact_point p[MAXP];
            int n = col_collide_box_box(a, b, ENV, p, MAXP);
            assert_int_equal(n, 4);
            for (int k = 0; k < n; k++) {
                assert_near(p[k].distance, gaps[i], 1e-13);
                assert_unit_normal(&p[k], 0, 0, order ? -1.0 : 1.0, 1e-15);
            }
            for (int sx = -1; sx <= 1; sx += 2)
                for (int sy = -1; sy <= 1; sy += 2) {
                    double x = small->pos[0] + sx * small->half[0], y = small->pos[1] + sy * small->half[1];
                    assert_true(find_xy(p, n, x, y, 1e-13) >= 0);
                }
        }
    }
}

/* A small box tilted on a slab passed second: the slab's face is the
 * reference (b's face), the normal still points from a to b. */
static void test_box_box_reference_b(void** state)
{
    (void)state;
    const double t = 20.0 * PI / 180.0;
    double R[9];
    test_rot_axis(R, 0, 1, 0, t);
    col_geom small = box(0.3, 0.2, 0, 0.2, 0.15, 0.1), slab = box(0, 0, -1.0, 2.0, 2.0, 1.0);
    set_rot(&small, R);
    small.pos[2] = 0.2 * sin(t) + 0.1 * cos(t) - 0.003;
    col_contact_point p[MAXP];
    int n = col_collide_box_box(&small, &slab, ENV, p, MAXP);
    assert_int_equal(n, 2);
    for (int i = 0; i < n; i++) {
        assert_near(p[i].distance, -0.003, 1e-14);
        assert_unit_normal(&p[i], 0, 0, -1, 1e-15);
        assert_near(p[i].point[0], 0.3 + 0.2 * cos(t) - 0.1 * sin(t), 1e-14);
        assert_near(fabs(p[i].point[1] - 0.2), 0.15, 1e-14);
        assert_near(p[i].point[2], -0.0015, 1e-14);
        assert_true(p[i].feature >> 30 & 1u); /* reference face on b */
    }
}

static void test_box_box_rotated45(void** state)
{
    (void)state;
    double R[9];
    test_rot_axis(R, 0, 0, 1, PI / 4);
    col_contact_point p[MAXP];
    /* a small cube turned 45° on a large slab: its 4 bottom corners */
    col_geom a = box(0, 0, 0, 1.0, 1.0, 0.5), b = box(0.1, 0.0, 0.5 + 0.3 - 0.002, 0.3, 0.3, 0.3);
    set_rot(&b, R);
    int n = col_collide_box_box(&a, &b, ENV, p, MAXP);
    assert_int_equal(n, 4);
    double r = 0.3 * sqrt(2.0);
    for (int i = 0; i < n; i++) assert_near(p[i].distance, -0.002, 1e-14);
    assert_true(find_xy(p, n, 0.1 + r, 0.0, 1e-14) >= 0);
    assert_true(find_xy(p, n, 0.1 - r, 0.0, 1e-14) >= 0);
    assert_true(find_xy(p, n, 0.1, r, 1e-14) >= 0);
    assert_true(find_xy(p, n, 0.1, -r, 1e-14) >= 0);
    /* two equal squares at 45°: the overlap is an octagon (8 clip vertices),
     * reduced to 4 points spread over it */
    col_geom c = box(0, 0, 0, 0.5, 0.5, 0.5), d = box(0, 0, 1.0 - 0.001, 0.5, 0.5, 0.5);
    set_rot(&d, R);
    n = col_collide_box_box(&c, &d, ENV, p, MAXP);
    assert_int_equal(n, 4);
    for (int i = 0; i < n; i++) {
        assert_near(p[i].distance, -0.001, 1e-14);
        double rr = hypot(p[i].point[0], p[i].point[1]);
        assert_true(rr > 0.5 - 1e-12 && rr < 0.5 * sqrt(2.0) + 1e-12); /* on the octagon boundary */
    }
    /* spread: the 4 points span more than 70 % of the octagon's area
     * (2√2 R², R = 0.5 / cos 22.5°: 0.828; the best 4 vertices give 0.586) */
    double area = 0.0;
    for (int i = 0; i < 4; i++) { /* order by angle, then shoelace */
        for (int j = i + 1; j < 4; j++)
            if (atan2(p[j].point[1], p[j].point[0]) < atan2(p[i].point[1], p[i].point[0])) {
                col_contact_point t = p[i];
                p[i] = p[j];
                p[j] = t;
            }
    }
    for (int i = 0; i < 4; i++) {
        int j = (i + 1) % 4;
        area += 0.5 * (p[i].point[0] * p[j].point[1] - p[j].point[0] * p[i].point[1]);
    }
    assert_true(area > 0.58);
}

static void test_box_box_edge_edge(void** state)
{
    (void)state;
    /* a: edge up along x; b: edge down along y; crossing above the origin */
    double Ra[9], Rb[9];
    test_rot_axis(Ra, 1, 0, 0, PI / 4);
    test_rot_axis(Rb, 0, 1, 0, PI / 4);
    const double h = 0.5, top = h * sqrt(2.0);
    col_contact_point p[MAXP];
    const double gaps[3] = {0.003, 0.0, -0.01};
    for (int k = 0; k < 3; k++) {
        col_geom a = box(0, 0, 0, h, h, h), b = box(0.05, -0.02, 2 * top + gaps[k], h, h, h);
        set_rot(&a, Ra);
        set_rot(&b, Rb);
        int n = col_collide_box_box(&a, &b, ENV, p, MAXP);
        assert_int_equal(n, 1);
        assert_near(p[0].distance, gaps[k], 1e-13);
        assert_unit_normal(&p[0], 0, 0, 1, 1e-13);
        assert_near(p[0].point[0], 0.05, 1e-13);
        assert_near(p[0].point[1], 0.0, 1e-13);
        assert_near(p[0].point[2], top + 0.5 * gaps[k], 1e-13);
        assert_true(p[0].feature & 0x80000000u);
        /* the general convex routine agrees */
        col_contact_point q[1];
        assert_int_equal(col_collide_convex(&a, &b, ENV, q, 1), 1);
        assert_near(q[0].distance, gaps[k], 1e-9);
        assert_unit_normal(&q[0], 0, 0, 1, 1e-6);
    }
}

static void test_box_box_deep(void** state)
{
    (void)state;
    col_geom a = box(0, 0, 0, 1, 1, 1), b = box(0.1, 0.0, 0.05, 0.5, 0.5, 0.5);
    col_contact_point p[MAXP], q[1];
    int n = col_collide_box_box(&a, &b, ENV, p, MAXP);
    assert_true(n >= 1 && n <= 4);
    assert_sane(p, n, ENV);
    /* least penetration: along +z?  no: x gives 1.5 − 0.1 = 1.4, z 1.5 − 0.05 = 1.45 */
    assert_near(min_distance(p, n), -1.4, 1e-13);
    for (int i = 0; i < n; i++) assert_unit_normal(&p[i], 1, 0, 0, 1e-15);
    assert_int_equal(col_collide_convex(&a, &b, ENV, q, 1), 1);
    assert_near(q[0].distance, -1.4, 1e-9);
    assert_unit_normal(&q[0], 1, 0, 0, 1e-9);
    /* concentric: still a finite answer, depth 1.5 */
    col_geom c = box(0, 0, 0, 0.5, 0.5, 0.5);
    n = col_collide_box_box(&a, &c, ENV, p, MAXP);
    assert_true(n >= 1);
    assert_near(min_distance(p, n), -1.5, 1e-13);
    assert_int_equal(col_collide_convex(&a, &c, ENV, q, 1), 1);
    assert_near(q[0].distance, -1.5, 1e-9);
}

/* SAT reference: largest separation over the 15 axes (the signed distance
 * for separated boxes is at least this; minus the depth when overlapping). */
static double sat_reference(const col_geom* a, const col_geom* b)
{
    double A[3][3], B[3][3], d[3], best = -DBL_MAX;
    for (int i = 0; i < 3; i++)
        for (int k = 0; k < 3; k++) {
            A[i][k] = a->rot[3 * k + i];
            B[i][k] = b->rot[3 * k + i];
        }
    for (int k = 0; k < 3; k++) d[k] = b->pos[k] - a->pos[k];
    double axes[15][3];
    int na = 0;
    for (int i = 0; i < 3; i++) {
        memcpy(axes[na++], A[i], sizeof A[i]);
        memcpy(axes[na++], B[i], sizeof B[i]);
    }
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            double* L = axes[na];
            L[0] = A[i][1] * B[j][2] - A[i][2] * B[j][1];
            L[1] = A[i][2] * B[j][0] - A[i][0] * B[j][2];
            L[2] = A[i][0] * B[j][1] - A[i][1] * B[j][0];
            double l = sqrt(L[0] * L[0] + L[1] * L[1] + L[2] * L[2]);
            if (l < 1e-6) continue;
            for (int k = 0; k < 3; k++) L[k] /= l;
            na++;
        }
    for (int x = 0; x < na; x++) {
        const double* L = axes[x];
        double r = 0.0, dl = 0.0;
        for (int k = 0; k < 3; k++) {
            dl += d[k] * L[k];
            r += a->half[k] * fabs(A[k][0] * L[0] + A[k][1] * L[1] + A[k][2] * L[2]);
            r += b->half[k] * fabs(B[k][0] * L[0] + B[k][1] * L[1] + B[k][2] * L[2]);
        }
        best = fmax(best, fabs(dl) - r);
    }
    return best;
}

static void random_rotation(double R[9], uint64_t* s)
{
    double q[4], l = 0.0;
    for (int k = 0; k < 4; k++) {
        q[k] = 2.0 * base_uniform01(s) - 1.0;
        l += q[k] * q[k];
    }
    l = sqrt(l);
    double w = q[0] / l, x = q[1] / l, y = q[2] / l, z = q[3] / l;
    double M[9] = {1 - 2 * (y * y + z * z), 2 * (x * y - w * z),     2 * (x * z + w * y),
                   2 * (x * y + w * z),     1 - 2 * (x * x + z * z), 2 * (y * z - w * x),
                   2 * (x * z - w * y),     2 * (y * z + w * x),     1 - 2 * (x * x + y * y)};
    memcpy(R, M, sizeof M);
}

/* Random overlapping boxes: EPA depth (col_collide_convex) = SAT depth
 * (exact for boxes), and the deepest box–box point agrees. */
static void test_box_box_random_vs_convex(void** state)
{
    (void)state;
    uint64_t seed = 12345;
    int overlaps = 0;
    double worst_epa = 0.0, worst_box = 0.0;
    for (int t = 0; t < 2000; t++) {
        col_geom a = box(0, 0, 0, 0.2 + base_uniform01(&seed), 0.2 + base_uniform01(&seed), 0.2 + base_uniform01(&seed));
        col_geom b = box(2.4 * base_uniform01(&seed) - 1.2, 2.4 * base_uniform01(&seed) - 1.2, 2.4 * base_uniform01(&seed) - 1.2, 0.1 + 0.5 * base_uniform01(&seed),
                         0.1 + 0.5 * base_uniform01(&seed), 0.1 + 0.5 * base_uniform01(&seed));
        double R[9];
        random_rotation(R, &seed);
        set_rot(&a, R);
        random_rotation(R, &seed);
        set_rot(&b, R);
        double sat = sat_reference(&a, &b);
        col_contact_point p[MAXP], q[1];
        int n = col_collide_box_box(&a, &b, 1.0, p, MAXP);
        int nq = col_collide_convex(&a, &b, 1.0, q, 1);
        assert_sane(p, n, 1.0);
        assert_true(n <= 4);
        if (sat < 0.0) {
            overlaps++;
            assert_int_equal(nq, 1);
            assert_true(n >= 1);
            worst_epa = fmax(worst_epa, fabs(q[0].distance - sat));
            worst_box = fmax(worst_box, fabs(min_distance(p, n) - sat));
        } else if (nq == 1) {
            /* separated: GJK distance ≥ SAT bound, and box–box points no closer */
            assert_true(q[0].distance >= sat - 1e-12);
            if (n > 0) assert_true(min_distance(p, n) >= sat - 1e-12);
        }
    }
    assert_true(overlaps > 300);
    assert_true(worst_epa < 1e-9);
    /* the deepest manifold point can lie outside the reference face (then it
     * is clipped away), so box–box depth is checked loosely here and exactly
     * in the hand-made cases */
    assert_true(worst_box < 0.5);
}

/* Tilted shallow face contacts: box–box deepest point = EPA depth. */
static void test_box_box_consistency(void** state)
{
    (void)state;
    for (int k = 0; k < 8; k++) {
        double t = (1.0 + 3.0 * k) * PI / 180.0, R[9];
        test_rot_axis(R, 1.0, 0.3 * k, 0.0, t);
        col_geom a = box(0, 0, 0, 1.0, 1.0, 0.5), b = box(0.05 * k, -0.02 * k, 0, 0.3, 0.2, 0.25);
        set_rot(&b, R);
        double r = 0.0;
        for (int i = 0; i < 3; i++) r += b.half[i] * fabs(R[6 + i]);
        b.pos[2] = 0.5 + r - 0.004;
        col_contact_point p[MAXP], q[1];
        int n = col_collide_box_box(&a, &b, ENV, p, MAXP);
        assert_true(n >= 1);
        assert_near(min_distance(p, n), -0.004, 1e-13);
        assert_int_equal(col_collide_convex(&a, &b, ENV, q, 1), 1);
        assert_near(q[0].distance, -0.004, 1e-10);
        assert_unit_normal(&q[0], 0, 0, 1, 1e-9);
        assert_unit_normal(&p[0], 0, 0, 1, 1e-15);
    }
}

/* ---- feature ids, normal flips ------------------------------------------------------ */

static int same_features(const col_contact_point* p, int n, const col_contact_point* q, int m)
{
    if (n != m) return 0;
    for (int i = 0; i < n; i++) {
        int found = 0;
        for (int j = 0; j < m; j++) found |= p[i].feature == q[j].feature;
        if (!found) return 0;
    }
    for (int i = 0; i < n; i++) /* distinct within the pair */
        for (int j = i + 1; j < n; j++)
            if (p[i].feature == p[j].feature) return 0;
    return 1;
}

static void test_feature_stability(void** state)
{
    (void)state;
    col_contact_point p[MAXP], q[MAXP];
    double R[9];
    test_rot_axis(R, 0.3, 1.0, 0.2, 2e-4);
    /* box on box, partly overhanging (clip vertices on both boxes' edges) */
    col_geom a = box(0, 0, 0, 1.0, 1.0, 0.5), b = box(0.9, 0.3, 1.0 - 0.001, 0.5, 0.5, 0.5);
    int n = col_collide_box_box(&a, &b, ENV, p, MAXP);
    assert_int_equal(n, 4);
    b.pos[0] += 1e-4;
    b.pos[2] += 2e-5;
    set_rot(&b, R);
    int m = col_collide_box_box(&a, &b, ENV, q, MAXP);
    assert_true(same_features(p, n, q, m));
    /* box on plane */
    col_geom bx = box(0, 0, 0.2 - 0.001, 0.5, 0.3, 0.2), pl = ground();
    n = col_collide_box_plane(&bx, &pl, ENV, p, MAXP);
    set_rot(&bx, R);
    bx.pos[0] += 1e-4;
    m = col_collide_box_plane(&bx, &pl, ENV, q, MAXP);
    assert_true(same_features(p, n, q, m));
    /* wheel on plane, rolling a little */
    double W[9], W2[9], S[9];
    test_rot_axis(W, 1, 0, 0, PI / 2); /* axis along y */
    col_geom wh = cylinder(0, 0, 0.3 - 0.001, 0.3, 0.1), wh2;
    set_rot(&wh, W);
    n = col_collide_cylinder_plane(&wh, &pl, ENV, p, MAXP);
    assert_int_equal(n, 2);
    wh2 = wh;
    test_rot_axis(S, 0, 1, 0, 0.01); /* rolled by 0.01 rad */
    test_mat_mul(W2, S, W);
    set_rot(&wh2, W2);
    wh2.pos[0] += 0.003;
    m = col_collide_cylinder_plane(&wh2, &pl, ENV, q, MAXP);
    assert_true(same_features(p, n, q, m));
    /* cylinder lying on a box */
    col_geom base_box = box(0, 0, 0, 1, 1, 0.5);
    wh.pos[2] = 0.5 + 0.3 - 0.001;
    n = col_collide_box_cylinder(&base_box, &wh, ENV, p, MAXP);
    wh2.pos[2] = wh.pos[2] + 1e-5;
    m = col_collide_box_cylinder(&base_box, &wh2, ENV, q, MAXP);
    assert_int_equal(n, 2);
    assert_true(same_features(p, n, q, m));
    /* cylinder standing on a box, jittered by 1e-9 rad and moved 1 µm */
    col_geom st = cylinder(0.1, 0.2, 0.5 + 0.5 - 0.001, 0.3, 0.5), st2;
    n = col_collide_box_cylinder(&base_box, &st, ENV, p, MAXP);
    assert_int_equal(n, 4);
    for (int k = 0; k < 5; k++) {
        st2 = st;
        test_rot_axis(S, 1.0, 0.7 * k - 1.0, 0.1, 1e-9);
        set_rot(&st2, S);
        st2.pos[0] += 1e-6 * k;
        m = col_collide_box_cylinder(&base_box, &st2, ENV, q, MAXP);
        assert_true(same_features(p, n, q, m));
    }
}

static void flip_check(const col_geom* a, const col_geom* b, int expect)
{
    col_contact_point p[MAXP], q[MAXP];
    int n = col_narrow_phase(a, b, ENV, p, MAXP);
    int m = col_narrow_phase(b, a, ENV, q, MAXP);
    assert_int_equal(n, expect);
    assert_int_equal(m, expect);
    for (int i = 0; i < n; i++) {
        int j = -1;
        for (int k = 0; k < m; k++) /* same point, opposite normal */
            if (fabs(p[i].point[0] - q[k].point[0]) < 1e-9 && fabs(p[i].point[1] - q[k].point[1]) < 1e-9 &&
                fabs(p[i].point[2] - q[k].point[2]) < 1e-9)
                j = k;
        assert_true(j >= 0);
        assert_near(p[i].distance, q[j].distance, 1e-9);
        for (int k = 0; k < 3; k++) assert_near(p[i].normal[k], -q[j].normal[k], 1e-9);
    }
}

static void test_normal_flip(void** state)
{
    (void)state;
    col_geom pl = ground(), bx = box(0, 0, 0.2 - 0.001, 0.5, 0.3, 0.2);
    flip_check(&bx, &pl, 4);
    col_contact_point p[MAXP];
    assert_int_equal(col_narrow_phase(&pl, &bx, ENV, p, MAXP), 4);
    assert_unit_normal(&p[0], 0, 0, 1, 0.0); /* from the plane to the box */
    col_geom a = box(0, 0, 0, 1, 1, 0.5), b = box(0.2, 0, 0.999, 0.5, 0.5, 0.5);
    flip_check(&a, &b, 4);
    col_geom cy = cylinder(0, 0, 0.5 - 0.002, 0.3, 0.5);
    flip_check(&cy, &pl, 4);
    col_geom sp = sphere(0.0, 0.0, 1.1, 0.2);
    flip_check(&sp, &cy, 1);
    col_geom cb = cylinder(0, 0, 0.5 + 0.5 - 0.002, 0.3, 0.5);
    flip_check(&a, &cb, 4);
    col_geom cy2 = cylinder(0.1, 0.05, 2 * 0.5 - 0.001 + cy.pos[2], 0.25, 0.5);
    flip_check(&cy, &cy2, 4);
    col_geom cp = capsule(0.0, 0.0, cy.pos[2] + 0.5 + 0.1 + 0.4 - 0.001, 0.1, 0.4);
    flip_check(&cp, &cy, 1);
}

/* ---- cylinder–plane --------------------------------------------------------------------- */

static void test_cylinder_plane(void** state)
{
    (void)state;
    const double r = 0.3, h = 0.5;
    col_geom pl = ground();
    col_contact_point p[MAXP];
    /* upright on its flat face: 4 points on the bottom circle */
    col_geom cy = cylinder(1.0, 2.0, h + 0.001, r, h);
    int n = col_collide_cylinder_plane(&cy, &pl, ENV, p, MAXP);
    assert_int_equal(n, 4);
    assert_sane(p, n, ENV);
    for (int i = 0; i < n; i++) {
        assert_near(p[i].distance, 0.001, 1e-14);
        assert_unit_normal(&p[i], 0, 0, -1, 0.0);
        assert_near(hypot(p[i].point[0] - 1.0, p[i].point[1] - 2.0), r, 1e-14);
        assert_near(p[i].point[2], 0.0005, 1e-14);
        assert_true(p[i].feature >= 4 && p[i].feature < 8); /* the −z cap */
    }
    /* lying (a wheel): the two rim ends of the contact line */
    double R[9];
    test_rot_axis(R, 1, 0, 0, PI / 2); /* axis along −y */
    col_geom wh = cylinder(0.5, 0, r - 0.002, r, h);
    set_rot(&wh, R);
    n = col_collide_cylinder_plane(&wh, &pl, ENV, p, MAXP);
    assert_int_equal(n, 2);
    for (int i = 0; i < n; i++) {
        assert_near(p[i].distance, -0.002, 1e-14);
        assert_near(p[i].point[0], 0.5, 1e-14);
        assert_near(fabs(p[i].point[1]), h, 1e-14);
        assert_near(p[i].point[2], -0.001, 1e-14);
    }
    assert_true(p[0].point[1] * p[1].point[1] < 0.0);
    /* tilted by α about x: the lowest rim point, analytically */
    for (int k = 1; k < 6; k++) {
        double al = k * 15.0 * PI / 180.0;
        test_rot_axis(R, 1, 0, 0, al);
        double cz = 2.0;
        col_geom ct = cylinder(0, 0, cz, r, h);
        set_rot(&ct, R);
        double low = cz - h * cos(al) - r * sin(al);
        ct.pos[2] = cz - low - 0.003;
        n = col_collide_cylinder_plane(&ct, &pl, ENV, p, MAXP);
        assert_int_equal(n, 1);
        assert_near(p[0].distance, -0.003, 1e-14);
        /* lowest point: centre − h u + r w, u = (0, −sin α, cos α), w = (0, −cos α, −sin α) */
        double y = -h * (-sin(al)) + r * (-cos(al));
        assert_near(p[0].point[0], 0.0, 1e-14);
        assert_near(p[0].point[1], y, 1e-14);
        assert_near(p[0].point[2], -0.0015, 1e-14);
    }
    /* tilted slightly: the lowest point and its neighbours within the envelope */
    test_rot_axis(R, 1, 0, 0, 0.002);
    set_rot(&cy, R);
    cy.pos[2] = h * cos(0.002) + r * sin(0.002);
    n = col_collide_cylinder_plane(&cy, &pl, ENV, p, MAXP);
    assert_int_equal(n, 4);
    assert_near(min_distance(p, n), 0.0, 1e-14);
    /* separated beyond the envelope */
    cy.pos[2] += 0.0051;
    assert_int_equal(col_collide_cylinder_plane(&cy, &pl, ENV, p, MAXP), 0);
}

/* ---- sphere–cylinder ------------------------------------------------------------------- */

static void test_sphere_cylinder(void** state)
{
    (void)state;
    const double env = 1.0;
    /* cylinder r 0.5, half length 1, turned so that its axis is world x */
    double R[9];
    test_rot_axis(R, 0, 1, 0, PI / 2); /* local z → world x */
    col_geom cy = cylinder(1.0, 2.0, 3.0, 0.5, 1.0);
    set_rot(&cy, R);
    col_contact_point p[MAXP];
    /* side: sphere on the world y side */
    col_geom s = sphere(1.3, 2.0 + 1.0, 3.0, 0.2);
    int n = col_collide_sphere_cylinder(&s, &cy, env, p, MAXP);
    assert_int_equal(n, 1);
    assert_near(p[0].distance, 0.3, 1e-14);
    assert_unit_normal(&p[0], 0, -1, 0, 1e-14);
    assert_near(p[0].point[1], 2.0 + 0.5 + 0.15, 1e-14);
    assert_int_equal(p[0].feature, 0);
    /* cap (+x end, local +z) */
    s = sphere(1.0 + 1.15, 2.1, 3.0, 0.2);
    n = col_collide_sphere_cylinder(&s, &cy, env, p, MAXP);
    assert_int_equal(n, 1);
    assert_near(p[0].distance, -0.05, 1e-14);
    assert_unit_normal(&p[0], -1, 0, 0, 1e-14);
    assert_int_equal(p[0].feature, 1);
    /* rim edge */
    s = sphere(1.0 + 1.1, 2.0 + 0.6, 3.0, 0.2);
    n = col_collide_sphere_cylinder(&s, &cy, env, p, MAXP);
    assert_int_equal(n, 1);
    assert_near(p[0].distance, sqrt(0.02) - 0.2, 1e-14);
    assert_unit_normal(&p[0], -sqrt(0.5), -sqrt(0.5), 0, 1e-14);
    assert_int_equal(p[0].feature, 3);
    /* centre inside, nearest the side */
    s = sphere(1.0, 2.0 - 0.4, 3.0, 0.05);
    n = col_collide_sphere_cylinder(&s, &cy, env, p, MAXP);
    assert_int_equal(n, 1);
    assert_near(p[0].distance, -0.15, 1e-14);
    assert_unit_normal(&p[0], 0, 1, 0, 1e-14);
    /* centre inside, nearest the −z cap */
    s = sphere(1.0 - 0.95, 2.0, 3.0, 0.05);
    n = col_collide_sphere_cylinder(&s, &cy, env, p, MAXP);
    assert_int_equal(n, 1);
    assert_near(p[0].distance, -0.1, 1e-14);
    assert_unit_normal(&p[0], 1, 0, 0, 1e-14);
    /* centre on the axis: deterministic, finite */
    s = sphere(1.0, 2.0, 3.0, 0.1);
    n = col_collide_sphere_cylinder(&s, &cy, env, p, MAXP);
    assert_int_equal(n, 1);
    assert_near(p[0].distance, -0.6, 1e-14);
    /* beyond the envelope */
    s = sphere(1.0, 2.0 + 0.5 + 0.2 + 0.0051, 3.0, 0.2);
    assert_int_equal(col_collide_sphere_cylinder(&s, &cy, ENV, p, MAXP), 0);
    /* the general convex routine agrees on the rim case */
    s = sphere(1.0 + 1.1, 2.0 + 0.6, 3.0, 0.2);
    n = col_collide_convex(&s, &cy, env, p, MAXP);
    assert_int_equal(n, 1);
    assert_near(p[0].distance, sqrt(0.02) - 0.2, 1e-10);
}

/* ---- cylinders against boxes, capsules, cylinders ------------------------------------- */

static void test_cylinder_manifolds(void** state)
{
    (void)state;
    const double r = 0.3, h = 0.5;
    col_contact_point p[MAXP];
    col_geom slab = box(0, 0, 0, 2, 2, 0.5);
    double R[9];
    /* lying on a box face: the two rim extremes */
    test_rot_axis(R, 0, 1, 0, PI / 2); /* axis along x */
    col_geom wh = cylinder(0.2, 0.1, 0.5 + r - 0.002, r, h);
    set_rot(&wh, R);
    int n = col_collide_box_cylinder(&slab, &wh, ENV, p, MAXP);
    assert_int_equal(n, 2);
    for (int i = 0; i < n; i++) {
        assert_near(p[i].distance, -0.002, 1e-10);
        assert_unit_normal(&p[i], 0, 0, 1, 1e-9);
        assert_near(fabs(p[i].point[0] - 0.2), h, 1e-9);
        assert_near(p[i].point[1], 0.1, 1e-9);
        assert_near(p[i].point[2], 0.5 - 0.001, 1e-9);
    }
    /* separated by 2 mm */
    wh.pos[2] = 0.5 + r + 0.002;
    n = col_collide_box_cylinder(&slab, &wh, ENV, p, MAXP);
    assert_int_equal(n, 2);
    for (int i = 0; i < n; i++) assert_near(p[i].distance, 0.002, 1e-10);
    /* overhanging the edge at x = 2: the clip stops at the box edge */
    wh.pos[0] = 2.0;
    wh.pos[2] = 0.5 + r - 0.001;
    n = col_collide_box_cylinder(&slab, &wh, ENV, p, MAXP);
    assert_int_equal(n, 2);
    assert_true(find_xy(p, n, 1.5, 0.1, 1e-9) >= 0);
    assert_true(find_xy(p, n, 2.0, 0.1, 1e-9) >= 0);
    /* standing on its face: points on the circle, Φ exact */
    col_geom st = cylinder(0.3, -0.2, 0.5 + h - 0.001, r, h);
    n = col_collide_box_cylinder(&slab, &st, ENV, p, MAXP);
    assert_int_equal(n, 4);
    for (int i = 0; i < n; i++) {
        assert_near(p[i].distance, -0.001, 1e-10);
        assert_near(hypot(p[i].point[0] - 0.3, p[i].point[1] + 0.2), r, 1e-9);
    }
    /* tilted 20° on its rim: one point, the lowest rim point */
    test_rot_axis(R, 1, 0, 0, 20.0 * PI / 180.0);
    set_rot(&st, R);
    double low = h * cos(20.0 * PI / 180.0) + r * sin(20.0 * PI / 180.0);
    st.pos[2] = 0.5 + low - 0.002;
    n = col_collide_box_cylinder(&slab, &st, ENV, p, MAXP);
    assert_int_equal(n, 1);
    assert_near(p[0].distance, -0.002, 1e-9);
    assert_unit_normal(&p[0], 0, 0, 1, 1e-6);
    /* a box resting on a standing cylinder (table on a post) */
    col_geom post = cylinder(0, 0, 0, 0.4, 1.0), top = box(0.05, 0, 1.0 + 0.1 - 0.001, 0.3, 0.2, 0.1);
    n = col_collide_box_cylinder(&top, &post, ENV, p, MAXP);
    assert_int_equal(n, 4);
    for (int i = 0; i < n; i++) {
        assert_near(p[i].distance, -0.001, 1e-10);
        assert_unit_normal(&p[i], 0, 0, -1, 1e-9);
    }
    /* two standing cylinders stacked */
    col_geom c1 = cylinder(0, 0, 0, 0.3, 0.5), c2 = cylinder(0.1, 0.05, 1.0 - 0.0015, 0.25, 0.5);
    n = col_collide_cylinder_cylinder(&c1, &c2, ENV, p, MAXP);
    assert_int_equal(n, 4);
    for (int i = 0; i < n; i++) {
        assert_near(p[i].distance, -0.0015, 1e-10);
        double rr = hypot(p[i].point[0], p[i].point[1]);
        assert_true(rr <= 0.3 + 1e-9);
    }
    /* two lying cylinders side by side (parallel, along x): 2 points */
    col_geom l1 = cylinder(0, 0, 0, 0.3, 0.5), l2 = cylinder(0.2, 0.3 + 0.25 - 0.001, 0, 0.25, 0.5);
    set_rot(&l1, R);
    test_rot_axis(R, 0, 1, 0, PI / 2);
    set_rot(&l1, R);
    set_rot(&l2, R);
    n = col_collide_cylinder_cylinder(&l1, &l2, ENV, p, MAXP);
    assert_int_equal(n, 2);
    for (int i = 0; i < n; i++) {
        assert_near(p[i].distance, -0.001, 1e-9);
        assert_unit_normal(&p[i], 0, 1, 0, 1e-4); /* EPA on two curved sides: ~1e-5 rad */
    }
    assert_true(find_xy(p, n, -0.3, 0.3 - 0.0005, 1e-8) >= 0);
    assert_true(find_xy(p, n, 0.5, 0.3 - 0.0005, 1e-8) >= 0);
    /* crossed lying cylinders: one point, Φ = axis distance − r1 − r2 */
    double Ry[9];
    test_rot_axis(Ry, 1, 0, 0, PI / 2); /* along y */
    col_geom x1 = cylinder(0, 0, 0, 0.3, 0.5), x2 = cylinder(0.1, 0.05, 0.3 + 0.25 + 0.002, 0.25, 0.5);
    set_rot(&x1, R);
    set_rot(&x2, Ry);
    n = col_collide_cylinder_cylinder(&x1, &x2, ENV, p, MAXP);
    assert_int_equal(n, 1);
    assert_near(p[0].distance, 0.002, 1e-10);
    assert_unit_normal(&p[0], 0, 0, 1, 1e-8);
    assert_near(p[0].point[0], 0.1, 1e-6); /* witness along a curved side */
    assert_near(p[0].point[1], 0.0, 1e-6);
    x2.pos[2] = 0.3 + 0.25 - 0.004;
    n = col_collide_cylinder_cylinder(&x1, &x2, ENV, p, MAXP);
    assert_int_equal(n, 1);
    assert_near(p[0].distance, -0.004, 1e-9);
    /* a capsule lying on a standing cylinder's cap */
    col_geom cap = capsule(0.05, 0, 0.5 + 0.1 - 0.001, 0.1, 0.2);
    set_rot(&cap, R);
    n = col_collide_capsule_cylinder(&cap, &c1, ENV, p, MAXP);
    assert_int_equal(n, 2);
    for (int i = 0; i < n; i++) {
        assert_near(p[i].distance, -0.001, 1e-9);
        assert_unit_normal(&p[i], 0, 0, -1, 1e-8);
    }
}

/* ---- GJK / EPA -------------------------------------------------------------------------- */

static void test_gjk_distance(void** state)
{
    (void)state;
    const double env = 1.0;
    col_contact_point p[MAXP];
    /* sphere–box, face region */
    col_geom bx = box(0, 0, 0, 1, 1, 1), s = sphere(1.5, 0.2, 0.1, 0.3);
    assert_int_equal(col_collide_convex(&s, &bx, env, p, 1), 1);
    assert_near(p[0].distance, 0.2, 1e-12);
    assert_unit_normal(&p[0], -1, 0, 0, 1e-12);
    assert_near(p[0].point[0], 1.1, 1e-12);
    /* sphere–box, corner region */
    s = sphere(1.3, 1.4, 1.2, 0.2);
    assert_int_equal(col_collide_convex(&s, &bx, env, p, 1), 1);
    assert_near(p[0].distance, sqrt(0.29) - 0.2, 1e-12);
    assert_unit_normal(&p[0], -0.3 / sqrt(0.29), -0.4 / sqrt(0.29), -0.2 / sqrt(0.29), 1e-12);
    /* box–box separated, b turned arbitrarily: gap = x_b − support − 0.5 */
    double R[9];
    test_rot_axis(R, 0.2, 0.5, 1.0, 0.7);
    for (int k = 0; k < 4; k++) {
        col_geom a = box(0, 0, 0, 0.5, 0.5, 0.5), b = box(0, 0.05, -0.03, 0.3, 0.2, 0.25);
        set_rot(&b, R);
        double sup = 0.0;
        for (int i = 0; i < 3; i++) sup += b.half[i] * fabs(R[i]);
        double gap = 0.001 * k;
        b.pos[0] = 0.5 + sup + gap;
        assert_int_equal(col_collide_convex(&a, &b, ENV, p, 1), 1);
        assert_near(p[0].distance, gap, 1e-12);
        assert_unit_normal(&p[0], 1, 0, 0, k == 0 ? 1e-6 : 1e-9);
        int n = col_collide_box_box(&a, &b, ENV, p, MAXP);
        assert_int_equal(n, 1);
        assert_near(p[0].distance, gap, 1e-13);
        b.pos[0] += ENV + 1e-4 - gap;
        assert_int_equal(col_collide_convex(&a, &b, ENV, p, 1), 0);
    }
    /* cylinder–box separated (curved support): gap of a tilted wheel */
    test_rot_axis(R, 1, 0, 0, 0.4);
    col_geom cy = cylinder(0.1, 0.2, 0, 0.3, 0.5);
    set_rot(&cy, R);
    double low = 0.5 * cos(0.4) + 0.3 * sin(0.4);
    cy.pos[2] = 0.5 + low + 0.004;
    col_geom slab = box(0, 0, 0, 2, 2, 0.5);
    assert_int_equal(col_collide_convex(&slab, &cy, ENV, p, 1), 1);
    assert_near(p[0].distance, 0.004, 1e-10);
}

static void test_epa_depth(void** state)
{
    (void)state;
    col_contact_point p[MAXP];
    /* overlapping spheres as convex shapes (core distance, exact) */
    col_geom s1 = sphere(0, 0, 0, 0.5), s2 = sphere(0.3, 0.4, 0.0, 0.3);
    assert_int_equal(col_collide_convex(&s1, &s2, ENV, p, 1), 1);
    assert_near(p[0].distance, 0.5 - 0.8, 1e-14);
    assert_unit_normal(&p[0], 0.6, 0.8, 0.0, 1e-14);
    /* concentric spheres: the cores coincide, EPA on the two balls */
    s2.pos[0] = s2.pos[1] = 0.0;
    assert_int_equal(col_collide_convex(&s1, &s2, ENV, p, 1), 1);
    assert_near(p[0].distance, -0.8, 1e-8);
    /* sphere centre inside a box: EPA on box ⊕ ball */
    col_geom bx = box(0, 0, 0, 1, 1, 1), s = sphere(0.1, -0.2, 0.8, 0.5);
    assert_int_equal(col_collide_convex(&s, &bx, ENV, p, 1), 1);
    assert_near(p[0].distance, -0.7, 1e-10);
    assert_unit_normal(&p[0], 0, 0, -1, 1e-10);
    /* capsule through a box */
    col_geom c = capsule(0.2, 0.0, 1.0, 0.1, 0.5); /* vertical, lowest point 0.6 inside */
    assert_int_equal(col_collide_convex(&c, &bx, ENV, p, 1), 1);
    assert_near(p[0].distance, -0.6, 1e-10);
    assert_unit_normal(&p[0], 0, 0, -1, 1e-9);
    /* box–box touching exactly and touching corner to corner */
    col_geom a = box(0, 0, 0, 0.5, 0.5, 0.5), b = box(0.2, 0.1, 1.0, 0.5, 0.5, 0.5);
    assert_int_equal(col_collide_convex(&a, &b, ENV, p, 1), 1);
    assert_near(p[0].distance, 0.0, 1e-12);
    assert_unit_normal(&p[0], 0, 0, 1, 1e-9);
    b.pos[0] = b.pos[1] = 1.0;
    assert_int_equal(col_collide_convex(&a, &b, ENV, p, 1), 1);
    assert_near(p[0].distance, 0.0, 1e-12);
    /* flat boxes (zero thickness) overlapping in their common plane: a finite answer */
    col_geom f1 = box(0, 0, 0, 1, 1, 0), f2 = box(0.5, 0, 0, 1, 1, 0);
    int n = col_collide_convex(&f1, &f2, ENV, p, 1);
    assert_true(n <= 1);
    if (n == 1) assert_true(isfinite(p[0].distance) && p[0].distance <= 0.0);
    /* random cylinders against boxes: EPA depth below the SAT-like bound
     * along the normal found, and the normal is a unit vector */
    uint64_t seed = 7;
    for (int t = 0; t < 300; t++) {
        double Rr[9];
        col_geom cy = cylinder(base_uniform01(&seed) - 0.5, base_uniform01(&seed) - 0.5, base_uniform01(&seed) - 0.5, 0.1 + 0.4 * base_uniform01(&seed),
                               0.1 + 0.5 * base_uniform01(&seed));
        random_rotation(Rr, &seed);
        set_rot(&cy, Rr);
        col_geom bb = box(0, 0, 0, 0.2 + base_uniform01(&seed), 0.2 + base_uniform01(&seed), 0.2 + base_uniform01(&seed));
        random_rotation(Rr, &seed);
        set_rot(&bb, Rr);
        n = col_collide_convex(&bb, &cy, 10.0, p, 1);
        assert_int_equal(n, 1);
        assert_sane(p, n, 10.0);
        /* depth along the normal: support overlap of the two shapes */
        double sa[3], sb[3], mn[3] = {-p[0].normal[0], -p[0].normal[1], -p[0].normal[2]};
        col_geom_support(&bb, p[0].normal, sa);
        col_geom_support(&cy, mn, sb);
        double overlap = 0.0;
        for (int k = 0; k < 3; k++) overlap += (sb[k] - sa[k]) * p[0].normal[k];
        assert_near(p[0].distance, overlap, 1e-8);
    }
}

/* Separation of a and b along unit n: −h_A(n) − h_B(−n) ≤ Φ for every n,
 * with equality at the contact normal (for overlapping shapes too). */
static double separation_along(const col_geom* a, const col_geom* b, const double n[3])
{
    double sa[3], sb[3], mn[3] = {-n[0], -n[1], -n[2]};
    col_geom_support(a, n, sa);
    col_geom_support(b, mn, sb);
    return (sb[0] - sa[0]) * n[0] + (sb[1] - sa[1]) * n[1] + (sb[2] - sa[2]) * n[2];
}

static col_geom random_shape(dvi_shape_type t, uint64_t* s)
{
    col_geom g = base(t, 1.6 * base_uniform01(s) - 0.8, 1.6 * base_uniform01(s) - 0.8, 1.6 * base_uniform01(s) - 0.8);
    random_rotation(g.rot, s);
    g.radius = 0.1 + 0.4 * base_uniform01(s);
    g.half_length = 0.1 + 0.5 * base_uniform01(s);
    for (int k = 0; k < 3; k++) g.half[k] = 0.1 + 0.5 * base_uniform01(s);
    return g;
}

/* GJK/EPA on random pairs of every convex type: Φ equals the separation
 * along the normal returned, and no other direction (random ones, and
 * perturbations of the normal) separates more: the answer is the signed
 * distance. */
static void test_convex_optimality(void** state)
{
    (void)state;
    uint64_t seed = 2024;
    const dvi_shape_type types[4] = {DVI_SHAPE_SPHERE, DVI_SHAPE_BOX, DVI_SHAPE_CAPSULE, DVI_SHAPE_CYLINDER};
    for (int ia = 0; ia < 4; ia++)
        for (int ib = ia; ib < 4; ib++) {
            int contacts = 0, overlaps = 0;
            double worst = 0.0;
            for (int t = 0; t < 400; t++) {
                col_geom a = random_shape(types[ia], &seed), b = random_shape(types[ib], &seed);
                col_contact_point p[1];
                if (col_collide_convex(&a, &b, 0.3, p, 1) == 0) continue;
                contacts++;
                overlaps += p[0].distance < 0.0;
                assert_sane(p, 1, 0.3);
                assert_near(separation_along(&a, &b, p[0].normal), p[0].distance, 1e-12);
                for (int k = 0; k < 40; k++) {
                    double d[3], l;
                    if (k < 20) { /* random direction */
                        for (int c = 0; c < 3; c++) d[c] = 2.0 * base_uniform01(&seed) - 1.0;
                    } else { /* the normal perturbed by 1e-3 or 1e-5 */
                        double eps = k < 30 ? 1e-3 : 1e-5;
                        for (int c = 0; c < 3; c++) d[c] = p[0].normal[c] + eps * (2.0 * base_uniform01(&seed) - 1.0);
                    }
                    l = sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
                    for (int c = 0; c < 3; c++) d[c] /= l;
                    worst = fmax(worst, separation_along(&a, &b, d) - p[0].distance);
                }
            }
            assert_true(contacts > 100 && overlaps > 30);
            if (!(worst < 1e-8)) print_error("pair %d-%d: a direction separates %.3g more than Phi\n", ia, ib, worst);
            assert_true(worst < 1e-8);
        }
}

static void test_support(void** state)
{
    (void)state;
    double R[9], o[3];
    test_rot_axis(R, 0, 0, 1, PI / 2); /* local x → world y */
    col_geom bx = box(1, 2, 3, 0.1, 0.2, 0.3);
    set_rot(&bx, R);
    const double d[3] = {1.0, 1.0, -1.0};
    col_geom_support(&bx, d, o);
    assert_near(o[0], 1.2, 1e-15);
    assert_near(o[1], 2.1, 1e-15);
    assert_near(o[2], 2.7, 1e-15);
    col_geom cy = cylinder(0, 0, 0, 0.5, 1.0);
    col_geom_support(&cy, d, o);
    assert_near(o[0], 0.5 / sqrt(2.0), 1e-15);
    assert_near(o[1], 0.5 / sqrt(2.0), 1e-15);
    assert_near(o[2], -1.0, 1e-15);
    col_geom cp = capsule(0, 0, 0, 0.5, 1.0);
    col_geom_support(&cp, d, o);
    assert_near(o[2], -1.0 - 0.5 / sqrt(3.0), 1e-15);
    col_geom sp = sphere(1, 1, 1, 2.0);
    const double e[3] = {0.0, 3.0, 0.0};
    col_geom_support(&sp, e, o);
    assert_near(o[1], 3.0, 1e-15);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_box_plane_resting),
        cmocka_unit_test(test_box_plane_tilted),
        cmocka_unit_test(test_box_box_face),
        cmocka_unit_test(test_box_stack),
        cmocka_unit_test(test_box_box_reference_b),
        cmocka_unit_test(test_box_box_rotated45),
        cmocka_unit_test(test_box_box_edge_edge),
        cmocka_unit_test(test_box_box_deep),
        cmocka_unit_test(test_box_box_random_vs_convex),
        cmocka_unit_test(test_box_box_consistency),
        cmocka_unit_test(test_feature_stability),
        cmocka_unit_test(test_normal_flip),
        cmocka_unit_test(test_cylinder_plane),
        cmocka_unit_test(test_sphere_cylinder),
        cmocka_unit_test(test_cylinder_manifolds),
        cmocka_unit_test(test_gjk_distance),
        cmocka_unit_test(test_epa_depth),
        cmocka_unit_test(test_convex_optimality),
        cmocka_unit_test(test_support),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
