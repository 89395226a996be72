/* Tests of the terrain narrow phase (src/collision/narrow_terrain.c: spheres, boxes,
 * capsules and cylinders against height fields and one-sided triangle meshes)
 * and of the Wavefront OBJ reader (src/io/io_obj.c).
 *
 * Geometry cases are worked out by hand: flat and planar terrain, ridges,
 * peaks and valleys give exact answers (tolerance 1e-12 m on Φ and points,
 * 1e-12 on normal components); where a flat part of an edge is involved, Φ is
 * within the flatness tolerance 1e-5·(shape size) and its ends within the
 * penetration of the shape's boundary. The tessellated hemisphere is checked
 * against the true sphere within the tessellation error (sagitta) computed
 * from the mesh itself. On a bumpy grid: spheres against brute-force
 * point–triangle distances (1e-12), the height field against the same
 * surface as a mesh, and a cylinder rim across a crease against a sampled
 * rim (1e-5). OBJ files are written by the tests into a private temporary
 * directory (mkdtemp); tests/data holds samples, read in place
 * ($DVI_SOURCE_DIR, set by meson test). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collision.h"
#include "dvi/io.h"
#include "narrow.h"
#include "terrain.h"
#include "test_util.h"

#define PI 3.14159265358979323846
#define ENV 0.005   /* collision envelope used throughout (m) */
#define EXACT 1e-12 /* tolerance of closed-form answers (m, or unit-vector components) */
#define MAXP 16

/* ---- geometry helpers ---------------------------------------------------- */

static void mat_identity(double R[9])
{
    static const double I[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    memcpy(R, I, sizeof I);
}

/* Rotation by `angle` about the unit `axis`, row-major. */
static void mat_axis_angle(double R[9], const double axis[3], double angle)
{
    double c = cos(angle), s = sin(angle), t = 1.0 - c, x = axis[0], y = axis[1], z = axis[2];
    double M[9] = {t * x * x + c,     t * x * y - s * z, t * x * z + s * y, t * x * y + s * z, t * y * y + c,
                   t * y * z - s * x, t * x * z - s * y, t * y * z + s * x, t * z * z + c};
    memcpy(R, M, sizeof M);
}

static void mat_vec(double r[3], const double R[9], const double v[3])
{
    double t[3];
    for (int i = 0; i < 3; i++) t[i] = R[3 * i] * v[0] + R[3 * i + 1] * v[1] + R[3 * i + 2] * v[2];
    memcpy(r, t, sizeof t);
}

static void normalize(double v[3])
{
    double l = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    for (int k = 0; k < 3; k++) v[k] /= l;
}

static double dot(const double a[3], const double b[3])
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

/* Rotation taking local z to the unit direction d (about z by yaw afterwards
 * is up to the caller): the smallest rotation from z to d. */
static void mat_z_to(double R[9], const double d[3])
{
    double z[3] = {0, 0, 1}, ax[3] = {z[1] * d[2] - z[2] * d[1], z[2] * d[0] - z[0] * d[2], z[0] * d[1] - z[1] * d[0]};
    double s = sqrt(dot(ax, ax)), c = dot(z, d);
    if (s < 1e-15) {
        mat_identity(R);
        if (c < 0) {
            double xa[3] = {1, 0, 0};
            mat_axis_angle(R, xa, PI);
        }
        return;
    }
    for (int k = 0; k < 3; k++) ax[k] /= s;
    mat_axis_angle(R, ax, atan2(s, c));
}

static col_geom shape_geom(dvi_shape_type type, const double pos[3], const double R[9], double radius,
                           double half_length, const double half[3])
{
    col_geom g;
    memset(&g, 0, sizeof g);
    g.type = type;
    g.owner = 1;
    memcpy(g.pos, pos, sizeof g.pos);
    memcpy(g.rot, R, sizeof g.rot);
    g.radius = radius;
    g.half_length = half_length;
    if (half) memcpy(g.half, half, sizeof g.half);
    return g;
}

static col_geom hf_geom(const col_heightfield* hf, const double pos[3], const double R[9])
{
    col_geom g;
    memset(&g, 0, sizeof g);
    g.type = DVI_SHAPE_HEIGHTFIELD;
    g.owner = 0;
    g.is_static = true;
    memcpy(g.pos, pos, sizeof g.pos);
    memcpy(g.rot, R, sizeof g.rot);
    g.hfield = hf;
    return g;
}

static col_geom mesh_geom(const col_trimesh* m, const double pos[3], const double R[9])
{
    col_geom g = hf_geom(NULL, pos, R);
    g.type = DVI_SHAPE_MESH;
    g.hfield = NULL;
    g.mesh = m;
    return g;
}

static int collide(const col_geom* a, const col_geom* b, col_contact_point* out)
{
    memset(out, 0, MAXP * sizeof *out);
    int n = col_narrow_phase(a, b, ENV, out, MAXP);
    assert_true(n >= 0 && n <= 8);
    for (int i = 0; i < n; i++) {
        assert_near(dot(out[i].normal, out[i].normal), 1.0, 1e-12);
        assert_true(out[i].distance <= ENV);
    }
    return n;
}

static double min_distance(const col_contact_point* p, int n)
{
    double m = INFINITY;
    for (int i = 0; i < n; i++) m = fmin(m, p[i].distance);
    return m;
}

static void assert_vec_near(const double a[3], const double b[3], double tol)
{
    assert_near(a[0], b[0], tol);
    assert_near(a[1], b[1], tol);
    assert_near(a[2], b[2], tol);
}

/* Index of the point nearest to q. */
static int nearest(const col_contact_point* p, int n, const double q[3])
{
    int best = -1;
    double bd = INFINITY;
    for (int i = 0; i < n; i++) {
        double d[3] = {p[i].point[0] - q[0], p[i].point[1] - q[1], p[i].point[2] - q[2]};
        if (dot(d, d) < bd) {
            bd = dot(d, d);
            best = i;
        }
    }
    return best;
}

/* A height field of nx × ny heights h(i, j) from a callback over (x, y). */
typedef double height_fn(double x, double y);

static void fill_heights(double* h, int nx, int ny, double dx, double dy, height_fn* f)
{
    for (int j = 0; j < ny; j++)
        for (int i = 0; i < nx; i++) h[j * nx + i] = f(i * dx, j * dy);
}

static double h_flat(double x, double y)
{
    (void)x;
    (void)y;
    return 0.2;
}
static double h_zero(double x, double y)
{
    (void)x;
    (void)y;
    return 0.0;
}
static double h_slope(double x, double y)
{
    return 0.3 * x + 0.1 * y;
}
static double h_ramp(double x, double y)
{
    (void)y;
    return 0.3 * x;
}
static double h_ridge(double x, double y)
{
    (void)y;
    return 1.0 - 0.25 * fabs(x - 3.0);
}
static double h_valley(double x, double y)
{
    (void)y;
    return 0.05 * fabs(x - 3.0);
}
static double h_peak(double x, double y)
{
    return 1.0 - 0.3 * fmax(fabs(x - 3.0), fabs(y - 3.0));
}

/* ---- spheres on height fields --------------------------------------------- */

static void test_sphere_flat_heightfield(void** state)
{
    (void)state;
    double h[36];
    fill_heights(h, 6, 6, 0.5, 0.5, h_flat);
    col_heightfield hf = {6, 6, 0.5, 0.5, h, 0, 0};
    col_heightfield_init_range(&hf);
    assert_near(hf.hmin, 0.2, 0.0);
    assert_near(hf.hmax, 0.2, 0.0);
    /* a general terrain pose: everything below is given in its local frame */
    double R[9], Ra[9], Rb[9], ax1[3] = {0, 0, 1}, ax2[3] = {1, 0, 0}, tp[3] = {10.0, -3.0, 1.0};
    mat_axis_angle(Ra, ax1, 0.4);
    mat_axis_angle(Rb, ax2, 0.3);
    test_mat_mul(R, Ra, Rb);
    col_geom terrain = hf_geom(&hf, tp, R);
    const double r = 0.3, gaps[3] = {-0.002, 0.004, 0.006};
    for (int k = 0; k < 3; k++) {
        double lc[3] = {1.3, 1.1, 0.2 + r + gaps[k]}, c[3];
        mat_vec(c, R, lc);
        for (int i = 0; i < 3; i++) c[i] += tp[i];
        col_geom s = shape_geom(DVI_SHAPE_SPHERE, c, R, r, 0, NULL);
        col_contact_point p[MAXP];
        int n = collide(&s, &terrain, p);
        if (gaps[k] > ENV) {
            assert_int_equal(n, 0); /* beyond the envelope */
            continue;
        }
        assert_int_equal(n, 1);
        assert_near(p[0].distance, gaps[k], EXACT);
        double ln[3] = {0, 0, -1}, wn[3], lq[3] = {1.3, 1.1, 0.2 + 0.5 * gaps[k]}, wq[3];
        mat_vec(wn, R, ln);
        mat_vec(wq, R, lq);
        for (int i = 0; i < 3; i++) wq[i] += tp[i];
        assert_vec_near(p[0].normal, wn, EXACT);
        assert_vec_near(p[0].point, wq, EXACT);
    }
    /* outside the grid: nothing */
    double far[3] = {-1.0, 1.0, 0.2 + r - 0.001}, I[9];
    mat_identity(I);
    double o[3] = {0, 0, 0};
    col_geom t0 = hf_geom(&hf, o, I), s0 = shape_geom(DVI_SHAPE_SPHERE, far, I, r, 0, NULL);
    col_contact_point p[MAXP];
    assert_int_equal(collide(&s0, &t0, p), 0);
}

static void test_sphere_sloped_heightfield(void** state)
{
    (void)state;
    double h[64], I[9], o[3] = {0, 0, 0};
    fill_heights(h, 8, 8, 0.5, 0.5, h_slope);
    col_heightfield hf = {8, 8, 0.5, 0.5, h, 0, 0};
    mat_identity(I);
    col_geom terrain = hf_geom(&hf, o, I);
    double nrm[3] = {-0.3, -0.1, 1.0};
    normalize(nrm);
    const double r = 0.4, gap = -0.003;
    double foot[3] = {1.6, 1.3, h_slope(1.6, 1.3)}, c[3];
    for (int k = 0; k < 3; k++) c[k] = foot[k] + (r + gap) * nrm[k];
    col_geom s = shape_geom(DVI_SHAPE_SPHERE, c, I, r, 0, NULL);
    col_contact_point p[MAXP];
    assert_int_equal(collide(&s, &terrain, p), 1);
    assert_near(p[0].distance, gap, EXACT);
    double want_n[3] = {-nrm[0], -nrm[1], -nrm[2]}, want_p[3];
    for (int k = 0; k < 3; k++) want_p[k] = foot[k] + 0.5 * gap * nrm[k];
    assert_vec_near(p[0].normal, want_n, EXACT);
    assert_vec_near(p[0].point, want_p, EXACT);
}

/* Shared edges and vertices of a flat grid give one point, never one per
 * triangle; a convex ridge gives one edge point, a peak one vertex point, a
 * concave valley one point per slope and none on the valley line. */
static void test_sphere_shared_features(void** state)
{
    (void)state;
    double h[49], I[9], o[3] = {0, 0, 0};
    mat_identity(I);
    fill_heights(h, 7, 7, 1.0, 1.0, h_zero);
    col_heightfield hf = {7, 7, 1.0, 1.0, h, 0, 0};
    col_geom terrain = hf_geom(&hf, o, I);
    const double r = 0.5, gap = -0.001;
    const double xy[6][2] = {{2.5, 2.5}, {2.3, 2.3}, {2.0, 2.0}, {2.5, 2.0}, {2.0, 2.7}, {2.3 + 1e-11, 2.3}};
    for (int k = 0; k < 6; k++) {
        double c[3] = {xy[k][0], xy[k][1], r + gap};
        col_geom s = shape_geom(DVI_SHAPE_SPHERE, c, I, r, 0, NULL);
        col_contact_point p[MAXP];
        assert_int_equal(collide(&s, &terrain, p), 1);
        assert_near(p[0].distance, gap, EXACT);
        assert_near(p[0].normal[2], -1.0, EXACT);
    }

    /* ridge along y at x = 3 (height 1, slopes ±0.25): the edge point */
    fill_heights(h, 7, 7, 1.0, 1.0, h_ridge);
    {
        double c[3] = {3.05, 2.4, 1.0 + 0.49};
        col_geom s = shape_geom(DVI_SHAPE_SPHERE, c, I, r, 0, NULL);
        col_contact_point p[MAXP];
        assert_int_equal(collide(&s, &terrain, p), 1);
        double q[3] = {3.0, 2.4, 1.0}, d[3] = {q[0] - c[0], q[1] - c[1], q[2] - c[2]};
        double len = sqrt(dot(d, d));
        assert_near(p[0].distance, len - r, EXACT);
        for (int k = 0; k < 3; k++) d[k] /= len;
        assert_vec_near(p[0].normal, d, EXACT);
    }
    /* peak at (3, 3), height 1, neighbours 0.7: the vertex */
    fill_heights(h, 7, 7, 1.0, 1.0, h_peak);
    {
        double c[3] = {3.02, 2.99, 1.0 + 0.499};
        col_geom s = shape_geom(DVI_SHAPE_SPHERE, c, I, r, 0, NULL);
        col_contact_point p[MAXP];
        assert_int_equal(collide(&s, &terrain, p), 1);
        double q[3] = {3.0, 3.0, 1.0}, d[3] = {q[0] - c[0], q[1] - c[1], q[2] - c[2]};
        double len = sqrt(dot(d, d));
        assert_near(p[0].distance, len - r, EXACT);
        for (int k = 0; k < 3; k++) d[k] /= len;
        assert_vec_near(p[0].normal, d, EXACT);
    }
    /* valley along y at x = 3 (slopes ±0.05): both slopes, not the valley line
     * (which is within the envelope: at gap −0.001 its distance is ≈ −0.0014) */
    fill_heights(h, 7, 7, 1.0, 1.0, h_valley);
    {
        double s5 = sqrt(1.0 + 0.05 * 0.05);
        double c[3] = {3.0, 2.4, s5 * (r + gap)};
        col_geom s = shape_geom(DVI_SHAPE_SPHERE, c, I, r, 0, NULL);
        col_contact_point p[MAXP];
        assert_int_equal(collide(&s, &terrain, p), 2);
        for (int i = 0; i < 2; i++) {
            assert_near(p[i].distance, gap, EXACT);
            assert_near(fabs(p[i].normal[0]), 0.05 / s5, EXACT);
            assert_near(p[i].normal[2], -1.0 / s5, EXACT);
        }
        assert_true(p[0].normal[0] * p[1].normal[0] < 0.0);
    }
}

/* ---- boxes, cylinders, capsules on height fields ------------------------- */

static void test_box_heightfield(void** state)
{
    (void)state;
    double h[64], I[9], o[3] = {0, 0, 0}, zax[3] = {0, 0, 1};
    mat_identity(I);
    fill_heights(h, 8, 8, 0.25, 0.25, h_flat);
    col_heightfield hf = {8, 8, 0.25, 0.25, h, 0, 0};
    col_geom terrain = hf_geom(&hf, o, I);
    const double half[3] = {0.3, 0.2, 0.1}, gap = -0.001;
    double R[9], c[3] = {1.0, 0.9, 0.2 + 0.1 + gap};
    mat_axis_angle(R, zax, 0.3);
    col_geom b = shape_geom(DVI_SHAPE_BOX, c, R, 0, 0, half);
    col_contact_point p[MAXP];
    assert_int_equal(collide(&b, &terrain, p), 4); /* the four bottom corners */
    for (int k = 0; k < 4; k++) {
        double lc[3] = {(k & 1) ? 0.3 : -0.3, (k & 2) ? 0.2 : -0.2, -0.1}, wc[3];
        mat_vec(wc, R, lc);
        for (int i = 0; i < 3; i++) wc[i] += c[i];
        int j = nearest(p, 4, wc);
        double want[3] = {wc[0], wc[1], 0.2 + 0.5 * gap}, nz[3] = {0, 0, -1};
        assert_vec_near(p[j].point, want, EXACT);
        assert_vec_near(p[j].normal, nz, EXACT);
        assert_near(p[j].distance, gap, EXACT);
    }

    /* the same box on the plane z = 0.2 x, bottom face parallel to it */
    fill_heights(h, 8, 8, 0.25, 0.25, h_ramp);
    for (int k = 0; k < 64; k++) h[k] *= 2.0 / 3.0; /* slope 0.2 */
    double nrm[3] = {-0.2, 0, 1};
    normalize(nrm);
    double Rs[9], Ry[9];
    mat_z_to(Rs, nrm);
    mat_axis_angle(Ry, zax, 0.5);
    test_mat_mul(R, Rs, Ry);
    double foot[3] = {0.9, 0.8, 0.2 * 0.9};
    for (int k = 0; k < 3; k++) c[k] = foot[k] + (0.1 + gap) * nrm[k];
    b = shape_geom(DVI_SHAPE_BOX, c, R, 0, 0, half);
    assert_int_equal(collide(&b, &terrain, p), 4);
    for (int k = 0; k < 4; k++) {
        double want_n[3] = {-nrm[0], -nrm[1], -nrm[2]};
        assert_vec_near(p[k].normal, want_n, EXACT);
        assert_near(p[k].distance, gap, EXACT);
    }

    /* on a peak (vertex under the bottom face): one point at the vertex */
    double hp[49];
    fill_heights(hp, 7, 7, 1.0, 1.0, h_peak);
    col_heightfield hfp = {7, 7, 1.0, 1.0, hp, 0, 0};
    col_geom tp = hf_geom(&hfp, o, I);
    double cp[3] = {3.05, 2.97, 1.0 + 0.1 + gap};
    b = shape_geom(DVI_SHAPE_BOX, cp, I, 0, 0, half);
    assert_int_equal(collide(&b, &tp, p), 1);
    assert_near(p[0].distance, gap, EXACT);
    assert_near(p[0].normal[2], -1.0, EXACT);
    assert_near(p[0].point[0], 3.0, EXACT);
    assert_near(p[0].point[1], 3.0, EXACT);

    /* across a ridge (bottom face resting on the ridge line, box yawed): the
     * ridge under the face with normal −z, its ends at the face boundary
     * (inset by at most the penetration, Φ within the flatness tolerance
     * 1e-5·|half|); and where the two bottom edges cross the ridge, one face
     * point per slope (normal −n of the slope, Φ = gap·cos or /cos of 14°) */
    double hr[49];
    fill_heights(hr, 7, 7, 1.0, 1.0, h_ridge);
    col_heightfield hfr = {7, 7, 1.0, 1.0, hr, 0, 0};
    col_geom tr = hf_geom(&hfr, o, I);
    const double yaw = 0.4, sl = 0.25 / sqrt(1.0625);
    double cr[3] = {3.0, 2.3, 1.0 + 0.1 + gap};
    mat_axis_angle(R, zax, yaw);
    b = shape_geom(DVI_SHAPE_BOX, cr, R, 0, 0, half);
    int n = collide(&b, &tr, p);
    double ymin = INFINITY, ymax = -INFINITY;
    int on_ridge = 0, on_slope = 0;
    for (int k = 0; k < n; k++) {
        if (fabs(p[k].normal[2] + 1.0) < 1e-9) { /* the ridge line */
            on_ridge++;
            assert_near(p[k].point[0], 3.0, 1e-9);
            assert_near(p[k].distance, gap, 1e-5 * 0.38);
            ymin = fmin(ymin, p[k].point[1]);
            ymax = fmax(ymax, p[k].point[1]);
        } else { /* a bottom edge crossing the ridge, against one slope */
            on_slope++;
            assert_near(fabs(p[k].normal[0]), sl, 1e-9);
            assert_near(p[k].point[0], 3.0, 1e-3);
            assert_near(p[k].distance, gap, 0.05 * fabs(gap));
        }
    }
    assert_int_equal(on_ridge, 2);
    assert_int_equal(on_slope, 4);
    double reach = fmin(half[0] / sin(yaw), half[1] / cos(yaw)); /* half-length of the ridge under the face */
    assert_near(ymax - cr[1], reach, 0.003);
    assert_near(cr[1] - ymin, reach, 0.003);
}

static void test_cylinder_heightfield(void** state)
{
    (void)state;
    double h[100], I[9], o[3] = {0, 0, 0}, xax[3] = {1, 0, 0}, zax[3] = {0, 0, 1};
    mat_identity(I);
    fill_heights(h, 10, 10, 0.2, 0.2, h_zero);
    col_heightfield hf = {10, 10, 0.2, 0.2, h, 0, 0};
    col_geom terrain = hf_geom(&hf, o, I);
    const double r = 0.25, hl = 0.1, gap = -0.002;
    /* a wheel: axle along y (local z → world y), yawed: two points at the
     * ends of the lowest line, exact Φ */
    double Rw[9], Rz[9], R[9];
    mat_axis_angle(Rw, xax, -PI / 2);
    for (int yawk = 0; yawk < 2; yawk++) {
        mat_axis_angle(Rz, zax, yawk ? 0.7 : 0.0);
        test_mat_mul(R, Rz, Rw);
        double c[3] = {0.93, 1.01, r + gap};
        col_geom w = shape_geom(DVI_SHAPE_CYLINDER, c, R, r, hl, NULL);
        col_contact_point p[MAXP];
        assert_int_equal(collide(&w, &terrain, p), 2);
        double axis[3] = {R[2], R[5], R[8]};
        for (int e = 0; e < 2; e++) {
            double want[3] = {c[0] + (e ? -hl : hl) * axis[0], c[1] + (e ? -hl : hl) * axis[1], 0.5 * gap};
            int j = nearest(p, 2, want);
            assert_vec_near(p[j].point, want, EXACT);
            assert_near(p[j].distance, gap, EXACT);
            assert_near(p[j].normal[2], -1.0, EXACT);
        }
    }
    /* on the slope z = 0.3 x, axle along y: line contact, Φ = distance from
     * the axle to the plane minus r */
    fill_heights(h, 10, 10, 0.2, 0.2, h_ramp);
    double nrm[3] = {-0.3, 0, 1};
    normalize(nrm);
    double c[3] = {0.9, 0.95, 0.3 * 0.9}, d0 = r + gap;
    for (int k = 0; k < 3; k++) c[k] += d0 * nrm[k];
    col_geom w = shape_geom(DVI_SHAPE_CYLINDER, c, Rw, r, hl, NULL);
    col_contact_point p[MAXP];
    assert_int_equal(collide(&w, &terrain, p), 2);
    for (int k = 0; k < 2; k++) {
        double want_n[3] = {-nrm[0], -nrm[1], -nrm[2]};
        assert_near(p[k].distance, gap, EXACT);
        assert_vec_near(p[k].normal, want_n, EXACT);
        assert_near(fabs(p[k].point[1] - c[1]), hl, EXACT);
    }
    /* standing on a cap on flat ground: points spread on the rim (8 kept) */
    fill_heights(h, 10, 10, 0.2, 0.2, h_zero);
    double cs[3] = {1.0, 0.9, hl + gap};
    col_geom st = shape_geom(DVI_SHAPE_CYLINDER, cs, I, r, hl, NULL);
    assert_int_equal(collide(&st, &terrain, p), 8);
    int on_rim = 0;
    for (int k = 0; k < 8; k++) {
        assert_near(p[k].distance, gap, EXACT);
        assert_near(p[k].normal[2], -1.0, EXACT);
        double rr = hypot(p[k].point[0] - cs[0], p[k].point[1] - cs[1]);
        assert_true(fabs(rr - r) < EXACT || rr < EXACT);
        on_rim += fabs(rr - r) < EXACT;
    }
    assert_true(on_rim >= 7);
    /* a wheel against a step edge parallel to its axle (a convex grid edge):
     * the edge under the tread, normal along the line from the edge to the
     * axle, Φ = distance from the edge to the tread (both ends of the flat
     * part, inset from the rims by at most the penetration, Φ within the
     * flatness tolerance 1e-5·bound); and where the penetrating rims cross
     * the step, one face point per face (plateau: Φ = gap exactly) */
    double hs[100];
    for (int j = 0; j < 10; j++)
        for (int i = 0; i < 10; i++) hs[j * 10 + i] = i <= 4 ? 0.1 : 0.0; /* plateau, ramp down from x = 0.8 to 1.0 */
    col_heightfield hfs = {10, 10, 0.2, 0.2, hs, 0, 0};
    col_geom ts = hf_geom(&hfs, o, I);
    double cw[3] = {0.8 + 0.1, 1.0, 0.1 + sqrt(r * r - 0.1 * 0.1) + gap}; /* rims reach z = 0.1 + gap at x = 0.8 */
    w = shape_geom(DVI_SHAPE_CYLINDER, cw, Rw, r, hl, NULL);
    int n = collide(&w, &ts, p);
    double want_d = hypot(cw[0] - 0.8, cw[2] - 0.1) - r, flat = 1e-5 * hypot(r, hl);
    double en[3] = {-(cw[0] - 0.8), 0.0, -(cw[2] - 0.1)}; /* from the axle to the edge */
    normalize(en);
    double ymin = INFINITY, ymax = -INFINITY;
    int on_edge = 0, on_plateau = 0;
    for (int k = 0; k < n; k++) {
        assert_true(p[k].distance >= gap - EXACT && p[k].distance <= 0.0);
        if (fabs(dot(p[k].normal, en) - 1.0) < 1e-9) {
            on_edge++;
            assert_near(p[k].distance, want_d, flat + EXACT);
            ymin = fmin(ymin, p[k].point[1]);
            ymax = fmax(ymax, p[k].point[1]);
        } else if (fabs(p[k].normal[2] + 1.0) < EXACT) {
            on_plateau++;
            assert_near(p[k].distance, gap, EXACT);
            assert_near(p[k].point[0], 0.8, EXACT);
            assert_near(fabs(p[k].point[1] - 1.0), hl, EXACT);
        }
    }
    assert_true(on_edge >= 2);
    assert_int_equal(on_plateau, 2);
    assert_near(ymin, 1.0 - hl, fabs(want_d) + 1e-4);
    assert_near(ymax, 1.0 + hl, fabs(want_d) + 1e-4);
}

static void test_capsule_heightfield(void** state)
{
    (void)state;
    double h[64], I[9], o[3] = {0, 0, 0}, xax[3] = {1, 0, 0}, zax[3] = {0, 0, 1};
    mat_identity(I);
    fill_heights(h, 8, 8, 0.5, 0.5, h_zero);
    col_heightfield hf = {8, 8, 0.5, 0.5, h, 0, 0};
    col_geom terrain = hf_geom(&hf, o, I);
    const double r = 0.1, hl = 0.4, gap = -0.001, psi = 20.0 * PI / 180.0;
    double Rx[9], Rz[9], R[9];
    mat_axis_angle(Rx, xax, -PI / 2);
    mat_axis_angle(Rz, zax, psi - PI / 2);
    test_mat_mul(R, Rz, Rx); /* local z → (cos ψ, sin ψ, 0) */
    double c[3] = {2.1, 1.7, r + gap}, dir[3] = {cos(psi), sin(psi), 0};
    col_geom cap = shape_geom(DVI_SHAPE_CAPSULE, c, R, r, hl, NULL);
    col_contact_point p[MAXP];
    assert_int_equal(collide(&cap, &terrain, p), 2); /* the two ends; the grid lines crossed give nothing */
    for (int e = 0; e < 2; e++) {
        double want[3] = {c[0] + (e ? -hl : hl) * dir[0], c[1] + (e ? -hl : hl) * dir[1], 0.5 * gap};
        int j = nearest(p, 2, want);
        assert_vec_near(p[j].point, want, EXACT);
        assert_near(p[j].distance, gap, EXACT);
        assert_near(p[j].normal[2], -1.0, EXACT);
    }
    /* lying across a ridge (perpendicular): one point on the ridge line */
    double hr[49];
    fill_heights(hr, 7, 7, 1.0, 1.0, h_ridge);
    col_heightfield hfr = {7, 7, 1.0, 1.0, hr, 0, 0};
    col_geom tr = hf_geom(&hfr, o, I);
    mat_axis_angle(R, zax, 0.0);
    double Ry[9], yax[3] = {0, 1, 0};
    mat_axis_angle(Ry, yax, PI / 2); /* local z → x */
    double cr[3] = {3.0, 2.5, 1.0 + r + gap};
    cap = shape_geom(DVI_SHAPE_CAPSULE, cr, Ry, r, hl, NULL);
    assert_int_equal(collide(&cap, &tr, p), 1);
    assert_near(p[0].distance, gap, EXACT);
    assert_near(p[0].point[0], 3.0, EXACT);
    assert_near(p[0].normal[2], -1.0, EXACT);
    /* lying along the ridge: the two ends of the flat part */
    double Rq[9];
    mat_axis_angle(Rq, xax, -PI / 2); /* local z → y */
    cap = shape_geom(DVI_SHAPE_CAPSULE, cr, Rq, r, hl, NULL);
    int n = collide(&cap, &tr, p);
    assert_true(n >= 2);
    double ys[2] = {INFINITY, -INFINITY};
    for (int k = 0; k < n; k++) {
        assert_near(p[k].distance, gap, 1e-5 * (hl + r) + EXACT);
        assert_near(p[k].point[0], 3.0, EXACT);
        ys[0] = fmin(ys[0], p[k].point[1]);
        ys[1] = fmax(ys[1], p[k].point[1]);
    }
    /* the ends of the segment, overshooting by ≤ sqrt(2 r δ) ≈ 1 mm (δ = 1e-5·bound) */
    assert_near(ys[0], cr[1] - hl, 0.002);
    assert_near(ys[1], cr[1] + hl, 0.002);
}

/* ---- meshes --------------------------------------------------------------- */

static void test_flat_square_mesh(void** state)
{
    (void)state;
    const double v[12] = {0, 0, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0};
    const int32_t t[6] = {0, 1, 2, 0, 2, 3};
    col_trimesh m = {4, 2, (double*)v, (int32_t*)t};
    double I[9], o[3] = {0, 0, 0}, zax[3] = {0, 0, 1}, xax[3] = {1, 0, 0};
    mat_identity(I);
    col_geom sq = mesh_geom(&m, o, I);
    col_contact_point p[MAXP];
    const double gap = -0.001;
    /* sphere: inside a triangle, on the diagonal, at a shared vertex */
    const double xy[3][2] = {{0.7, 0.2}, {0.5, 0.5}, {0.0, 0.0}};
    for (int k = 0; k < 3; k++) {
        double c[3] = {xy[k][0], xy[k][1], 0.2 + gap};
        col_geom s = shape_geom(DVI_SHAPE_SPHERE, c, I, 0.2, 0, NULL);
        assert_int_equal(collide(&s, &sq, p), 1);
        assert_near(p[0].distance, gap, EXACT);
        assert_near(p[0].normal[2], -1.0, EXACT);
    }
    /* one-sided: from below, nothing */
    double cb[3] = {0.5, 0.4, -0.2 - gap};
    col_geom sb = shape_geom(DVI_SHAPE_SPHERE, cb, I, 0.2, 0, NULL);
    assert_int_equal(collide(&sb, &sq, p), 0);
    /* beside the boundary edge x = 1: the edge, slanted normal */
    double ce[3] = {1.2, 0.5, 0.05}, d = hypot(0.2, 0.05), re = d - 0.002;
    col_geom se = shape_geom(DVI_SHAPE_SPHERE, ce, I, re, 0, NULL);
    assert_int_equal(collide(&se, &sq, p), 1);
    assert_near(p[0].distance, 0.002, EXACT);
    double wn[3] = {-0.2 / d, 0, -0.05 / d};
    assert_vec_near(p[0].normal, wn, EXACT);
    /* box: four corners */
    double half[3] = {0.3, 0.2, 0.1}, R[9], c[3] = {0.5, 0.5, 0.1 + gap};
    mat_axis_angle(R, zax, 0.25);
    col_geom b = shape_geom(DVI_SHAPE_BOX, c, R, 0, 0, half);
    assert_int_equal(collide(&b, &sq, p), 4);
    for (int k = 0; k < 4; k++) assert_near(p[k].distance, gap, EXACT);
    /* capsule lying across the diagonal: two ends */
    double Rx[9], Rz[9];
    mat_axis_angle(Rx, xax, -PI / 2);
    mat_axis_angle(Rz, zax, 0.3);
    test_mat_mul(R, Rz, Rx);
    double cc[3] = {0.5, 0.5, 0.05 + gap};
    col_geom cap = shape_geom(DVI_SHAPE_CAPSULE, cc, R, 0.05, 0.3, NULL);
    assert_int_equal(collide(&cap, &sq, p), 2);
    for (int k = 0; k < 2; k++) assert_near(p[k].distance, gap, EXACT);
    /* wheel across the diagonal: two points */
    double cw[3] = {0.5, 0.5, 0.25 + gap};
    col_geom w = shape_geom(DVI_SHAPE_CYLINDER, cw, R, 0.25, 0.1, NULL);
    assert_int_equal(collide(&w, &sq, p), 2);
    for (int k = 0; k < 2; k++) assert_near(p[k].distance, gap, EXACT);
}

/* ---- against brute force on a bumpy terrain ------------------------------- */

static double h_bumpy(double x, double y)
{
    return 0.08 * sin(3.1 * x) * cos(2.3 * y) + 0.03 * sin(7 * x + 1) + 0.02 * cos(5 * y * x);
}

static double urand(uint64_t* s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(*s >> 11) / 9007199254740992.0;
}

/* Closest point to p on triangle abc (Ericson, Real-Time Collision Detection 5.1.5). */
static void closest_on_triangle(const double p[3], const double a[3], const double b[3], const double c[3],
                                double q[3])
{
    double ab[3], ac[3], ap[3], bp[3], cp[3];
    for (int k = 0; k < 3; k++) {
        ab[k] = b[k] - a[k];
        ac[k] = c[k] - a[k];
        ap[k] = p[k] - a[k];
        bp[k] = p[k] - b[k];
        cp[k] = p[k] - c[k];
    }
    double d1 = dot(ab, ap), d2 = dot(ac, ap), d3 = dot(ab, bp), d4 = dot(ac, bp), d5 = dot(ab, cp), d6 = dot(ac, cp);
    double va = d3 * d6 - d5 * d4, vb = d5 * d2 - d1 * d6, vc = d1 * d4 - d3 * d2, v, w;
    if (d1 <= 0 && d2 <= 0) v = 0, w = 0;
    else if (d3 >= 0 && d4 <= d3) v = 1, w = 0;
    else if (vc <= 0 && d1 >= 0 && d3 <= 0) v = d1 / (d1 - d3), w = 0;
    else if (d6 >= 0 && d5 <= d6) v = 0, w = 1;
    else if (vb <= 0 && d2 >= 0 && d6 <= 0) v = 0, w = d2 / (d2 - d6);
    else if (va <= 0 && (d4 - d3) >= 0 && (d5 - d6) >= 0) w = (d4 - d3) / ((d4 - d3) + (d5 - d6)), v = 1 - w;
    else {
        double den = 1.0 / (va + vb + vc);
        v = vb * den;
        w = vc * den;
    }
    for (int k = 0; k < 3; k++) q[k] = a[k] + v * ab[k] + w * ac[k];
}

/* The grid of a height field as a mesh (vertices and triangles in the caller's arrays). */
static col_trimesh grid_mesh(const col_heightfield* hf, double* v, int32_t* t)
{
    for (int j = 0; j < hf->ny; j++)
        for (int i = 0; i < hf->nx; i++) {
            double* p = v + 3 * (j * hf->nx + i);
            p[0] = i * hf->dx;
            p[1] = j * hf->dy;
            p[2] = hf->heights[j * hf->nx + i];
        }
    int n = 0;
    for (int j = 0; j + 1 < hf->ny; j++)
        for (int i = 0; i + 1 < hf->nx; i++) {
            int32_t k00 = j * hf->nx + i, k10 = k00 + 1, k01 = k00 + hf->nx, k11 = k01 + 1;
            const int32_t tri[6] = {k00, k10, k11, k00, k11, k01};
            memcpy(t + 6 * n++, tri, sizeof tri);
        }
    col_trimesh m = {hf->nx * hf->ny, 2 * n, v, t};
    return m;
}

/* Spheres over a bumpy grid: the smallest Φ is the exact distance from the
 * centre to the surface (brute force over all triangles) minus r, to 1e-12,
 * and no contact is reported when that exceeds the envelope. */
static void test_sphere_brute_force(void** state)
{
    (void)state;
    enum { NX = 16 };
    double h[NX * NX], v[3 * NX * NX], I[9], o[3] = {0, 0, 0};
    int32_t t[6 * (NX - 1) * (NX - 1)];
    fill_heights(h, NX, NX, 0.1, 0.1, h_bumpy);
    col_heightfield hf = {NX, NX, 0.1, 0.1, h, 0, 0};
    col_trimesh m = grid_mesh(&hf, v, t);
    mat_identity(I);
    col_geom th = hf_geom(&hf, o, I), tm = mesh_geom(&m, o, I);
    uint64_t seed = 5;
    int touching = 0;
    for (int trial = 0; trial < 300; trial++) {
        double r = 0.05 + 0.2 * urand(&seed), c[3] = {0.3 + 0.9 * urand(&seed), 0.3 + 0.9 * urand(&seed), 0.0};
        c[2] = h_bumpy(c[0], c[1]) + r + 0.02 * urand(&seed) - 0.006;
        double best = INFINITY;
        for (int k = 0; k < m.triangle_count; k++) {
            double q[3];
            closest_on_triangle(c, v + 3 * t[3 * k], v + 3 * t[3 * k + 1], v + 3 * t[3 * k + 2], q);
            double d[3] = {c[0] - q[0], c[1] - q[1], c[2] - q[2]};
            best = fmin(best, sqrt(dot(d, d)) - r);
        }
        col_geom s = shape_geom(DVI_SHAPE_SPHERE, c, I, r, 0, NULL);
        for (int which = 0; which < 2; which++) {
            col_contact_point p[MAXP];
            int n = collide(&s, which ? &tm : &th, p);
            if (best > ENV) {
                assert_int_equal(n, 0);
                continue;
            }
            assert_true(n >= 1);
            assert_near(min_distance(p, n), best, EXACT);
            touching += which;
        }
    }
    assert_true(touching > 100); /* most trials do touch */
}

/* The same surface as a height field and as a mesh gives the same contacts
 * (compared as sets when fewer than 8, else the smallest Φ). */
static void test_heightfield_mesh_agree(void** state)
{
    (void)state;
    enum { NX = 16 };
    double h[NX * NX], v[3 * NX * NX], R[9], ax[3] = {0.3, -0.5, 0.8}, o[3] = {2.0, -1.0, 0.5};
    int32_t t[6 * (NX - 1) * (NX - 1)];
    fill_heights(h, NX, NX, 0.1, 0.1, h_bumpy);
    col_heightfield hf = {NX, NX, 0.1, 0.1, h, 0, 0};
    col_trimesh m = grid_mesh(&hf, v, t);
    normalize(ax);
    mat_axis_angle(R, ax, 0.7); /* a general terrain pose */
    col_geom th = hf_geom(&hf, o, R), tm = mesh_geom(&m, o, R);
    const dvi_shape_type types[4] = {DVI_SHAPE_SPHERE, DVI_SHAPE_BOX, DVI_SHAPE_CAPSULE, DVI_SHAPE_CYLINDER};
    uint64_t seed = 11;
    int compared = 0;
    for (int trial = 0; trial < 400; trial++) {
        double half[3] = {0.05 + 0.15 * urand(&seed), 0.05 + 0.15 * urand(&seed), 0.05 + 0.15 * urand(&seed)};
        double r = 0.05 + 0.15 * urand(&seed), hl = 0.03 + 0.15 * urand(&seed), Rl[9], a2[3], lp[3], c[3], Rw[9];
        for (int k = 0; k < 3; k++) a2[k] = urand(&seed) - 0.5;
        normalize(a2);
        mat_axis_angle(Rl, a2, 6.3 * urand(&seed));
        lp[0] = 0.4 + 0.7 * urand(&seed);
        lp[1] = 0.4 + 0.7 * urand(&seed);
        lp[2] = h_bumpy(lp[0], lp[1]) + 0.1 + 0.2 * urand(&seed) - 0.1;
        mat_vec(c, R, lp);
        for (int k = 0; k < 3; k++) c[k] += o[k];
        test_mat_mul(Rw, R, Rl);
        col_geom s = shape_geom(types[trial % 4], c, Rw, r, hl, half);
        col_contact_point ph[MAXP], pm[MAXP];
        int n1 = collide(&s, &th, ph), n2 = collide(&s, &tm, pm);
        assert_int_equal(n1, n2);
        if (n1 == 0) continue;
        compared++;
        assert_near(min_distance(ph, n1), min_distance(pm, n2), 1e-12);
        if (n1 == 8) continue; /* the reduction may pick differently (candidate order differs) */
        for (int a = 0; a < n1; a++) {
            int found = 0;
            for (int b = 0; b < n2 && !found; b++) {
                double dp = 0, dn = 0;
                for (int k = 0; k < 3; k++) {
                    dp = fmax(dp, fabs(ph[a].point[k] - pm[b].point[k]));
                    dn = fmax(dn, fabs(ph[a].normal[k] - pm[b].normal[k]));
                }
                found = dp < 1e-9 && dn < 1e-9 && fabs(ph[a].distance - pm[b].distance) < 1e-12;
            }
            assert_true(found);
        }
    }
    assert_true(compared > 100);
}

/* Regression: a tilted cylinder whose rim dips 3 cm across a crease of a
 * bumpy grid. Each triangle's deepest rim point lies over the other one, and
 * inside the cylinder sd has a kink along the rim: once, no contact at all.
 * Reference: the rim sampled at 36 000 points per cap, each against the plane
 * of the triangle under it (agreement within 1e-5 m: sampling and the vertical
 * instead of normal projection). */
static void test_cylinder_rim_crease(void** state)
{
    (void)state;
    enum { NX = 40 };
    double h[NX * NX];
    const double dx = 0.075;
    fill_heights(h, NX, NX, dx, dx, h_bumpy);
    col_heightfield hf = {NX, NX, dx, dx, h, 0, 0};
    double I[9], o[3] = {0, 0, 0};
    mat_identity(I);
    col_geom th = hf_geom(&hf, o, I);
    const double R[9] = {0.394899, 0.918063, 0.034853, -0.655435, 0.254942, 0.710922, 0.643786, -0.303586, 0.702407};
    double c[3] = {0.77922, 2.14878, 0.19338}, Rn[9];
    memcpy(Rn, R, sizeof Rn); /* re-orthonormalize the printed rotation's columns */
    double ax0[3] = {Rn[0], Rn[3], Rn[6]}, ax1[3] = {Rn[1], Rn[4], Rn[7]}, ax2[3];
    normalize(ax0);
    double d01 = dot(ax0, ax1);
    for (int k = 0; k < 3; k++) ax1[k] -= d01 * ax0[k];
    normalize(ax1);
    ax2[0] = ax0[1] * ax1[2] - ax0[2] * ax1[1];
    ax2[1] = ax0[2] * ax1[0] - ax0[0] * ax1[2];
    ax2[2] = ax0[0] * ax1[1] - ax0[1] * ax1[0];
    for (int k = 0; k < 3; k++) {
        Rn[3 * k] = ax0[k];
        Rn[3 * k + 1] = ax1[k];
        Rn[3 * k + 2] = ax2[k];
    }
    const double r = 0.193, hl = 0.1074;
    col_geom g = shape_geom(DVI_SHAPE_CYLINDER, c, Rn, r, hl, NULL);
    double ref = INFINITY;
    for (int cap = 0; cap < 2; cap++)
        for (int k = 0; k < 36000; k++) {
            double th2 = 2 * PI * k / 36000, p[3];
            for (int q = 0; q < 3; q++)
                p[q] = c[q] + (cap ? -hl : hl) * ax2[q] + r * (cos(th2) * ax0[q] + sin(th2) * ax1[q]);
            int i = (int)floor(p[0] / dx), j = (int)floor(p[1] / dx);
            double fx = p[0] / dx - i, fy = p[1] / dx - j;
            double v0[3] = {i * dx, j * dx, h[j * NX + i]}, v1[3], v2[3];
            if (fy <= fx) {
                double a[3] = {(i + 1) * dx, j * dx, h[j * NX + i + 1]}, b[3] = {(i + 1) * dx, (j + 1) * dx, h[(j + 1) * NX + i + 1]};
                memcpy(v1, a, sizeof a);
                memcpy(v2, b, sizeof b);
            } else {
                double a[3] = {(i + 1) * dx, (j + 1) * dx, h[(j + 1) * NX + i + 1]}, b[3] = {i * dx, (j + 1) * dx, h[(j + 1) * NX + i]};
                memcpy(v1, a, sizeof a);
                memcpy(v2, b, sizeof b);
            }
            double e1[3] = {v1[0] - v0[0], v1[1] - v0[1], v1[2] - v0[2]}, e2[3] = {v2[0] - v0[0], v2[1] - v0[1], v2[2] - v0[2]};
            double nn[3] = {e1[1] * e2[2] - e1[2] * e2[1], e1[2] * e2[0] - e1[0] * e2[2], e1[0] * e2[1] - e1[1] * e2[0]};
            normalize(nn);
            double d[3] = {p[0] - v0[0], p[1] - v0[1], p[2] - v0[2]};
            ref = fmin(ref, dot(nn, d));
        }
    assert_true(ref < -0.03);
    col_contact_point p[MAXP];
    int n = collide(&g, &th, p);
    assert_true(n >= 1);
    assert_near(min_distance(p, n), ref, 1e-5);
}

/* ---- temporary directory for OBJ files ----------------------------------- */

typedef struct tmpdir {
    char path[64];
} tmpdir;

static int tmp_setup(void** state)
{
    tmpdir* d = calloc(1, sizeof *d);
    if (!d) return -1;
    const char* base = getenv("TMPDIR");
    snprintf(d->path, sizeof d->path, "%s/dvi_terrain_XXXXXX", base && strlen(base) < 40 ? base : "/tmp");
    if (!mkdtemp(d->path)) {
        free(d);
        return -1;
    }
    *state = d;
    return 0;
}

static int tmp_teardown(void** state)
{
    tmpdir* d = *state;
    DIR* dir = opendir(d->path);
    if (dir) {
        struct dirent* e;
        char f[600];
        while ((e = readdir(dir)) != NULL) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
            snprintf(f, sizeof f, "%s/%s", d->path, e->d_name);
            remove(f);
        }
        closedir(dir);
    }
    rmdir(d->path);
    free(d);
    return 0;
}

/* Writes `len` bytes (strlen if len == 0) to dir/name; returns the path in out. */
static void write_file(const tmpdir* d, const char* name, const char* data, size_t len, char out[256])
{
    snprintf(out, 256, "%s/%s", d->path, name);
    FILE* f = fopen(out, "wb");
    assert_non_null(f);
    if (len == 0) len = strlen(data);
    assert_int_equal(fwrite(data, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
}

/* ---- the hemisphere obstacle ---------------------------------------------- */

/* Writes the OBJ of a closed hemisphere of radius R on z = 0: a pole fan of
 * triangles, quads between latitude rings, and the base as one polygon. */
static void write_hemisphere(const tmpdir* d, double R, int nlat, int nlon, char path[256])
{
    size_t cap = 200000, n = 0;
    char* s = malloc(cap);
    assert_non_null(s);
    n += (size_t)snprintf(s + n, cap - n, "# hemisphere R=%g\no obstacle\nv 0 0 %.17g\n", R, R);
    for (int i = 1; i <= nlat; i++) { /* ring i at polar angle i·(π/2)/nlat */
        double th = i * (PI / 2) / nlat;
        for (int j = 0; j < nlon; j++) {
            double ph = 2 * PI * j / nlon;
            n += (size_t)snprintf(s + n, cap - n, "v %.17g %.17g %.17g\n", R * sin(th) * cos(ph),
                                  R * sin(th) * sin(ph), i == nlat ? 0.0 : R * cos(th));
        }
    }
    /* vertex numbers (1-based): pole 1, ring i vertex j: 2 + (i−1)·nlon + j */
    for (int j = 0; j < nlon; j++)
        n += (size_t)snprintf(s + n, cap - n, "f 1 %d %d\n", 2 + j, 2 + (j + 1) % nlon);
    for (int i = 1; i < nlat; i++)
        for (int j = 0; j < nlon; j++) {
            int a = 2 + (i - 1) * nlon + j, b = 2 + (i - 1) * nlon + (j + 1) % nlon;
            n += (size_t)snprintf(s + n, cap - n, "f %d/%d %d/%d %d/%d %d/%d\n", a, a, a + nlon, a, b + nlon, a,
                                  b, a);
        }
    n += (size_t)snprintf(s + n, cap - n, "f");
    for (int j = nlon - 1; j >= 0; j--) n += (size_t)snprintf(s + n, cap - n, " %d", 2 + (nlat - 1) * nlon + j);
    n += (size_t)snprintf(s + n, cap - n, "\n");
    assert_true(n < cap);
    write_file(d, "hemisphere.obj", s, n, path);
    free(s);
}

static void test_hemisphere_mesh(void** state)
{
    const tmpdir* d = *state;
    const double R = 0.15;
    const int nlat = 8, nlon = 24;
    char path[256], msg[256];
    write_hemisphere(d, R, nlat, nlon, path);
    dvi_mesh_data md;
    assert_int_equal(dvi_obj_read(path, &md, msg, sizeof msg), DVI_OK);
    assert_string_equal(msg, "");
    assert_int_equal(md.vertex_count, 1 + nlat * nlon);
    assert_int_equal(md.triangle_count, nlon + 2 * nlon * (nlat - 1) + (nlon - 2));
    col_trimesh m = {md.vertex_count, md.triangle_count, md.vertices, md.triangles};
    double lo[3], hi[3];
    col_trimesh_bounds(&m, lo, hi);
    assert_near(hi[2], R, EXACT);
    assert_near(lo[2], 0.0, EXACT);
    /* every face points outwards, and the tessellation error (sagitta): the
     * largest gap between the true sphere and a face, R − (centre–plane distance) */
    double sag = 0.0;
    for (int k = 0; k < m.triangle_count; k++) {
        const double* a = m.vertices + 3 * m.triangles[3 * k];
        const double* b = m.vertices + 3 * m.triangles[3 * k + 1];
        const double* c = m.vertices + 3 * m.triangles[3 * k + 2];
        double e1[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]}, e2[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
        double nn[3] = {e1[1] * e2[2] - e1[2] * e2[1], e1[2] * e2[0] - e1[0] * e2[2], e1[0] * e2[1] - e1[1] * e2[0]};
        normalize(nn);
        double cen[3] = {(a[0] + b[0] + c[0]) / 3, (a[1] + b[1] + c[1]) / 3, (a[2] + b[2] + c[2]) / 3};
        if (cen[2] < 1e-12) {
            assert_true(nn[2] < -0.999); /* the base faces down */
            continue;
        }
        assert_true(dot(nn, cen) > 0.0);
        sag = fmax(sag, R - dot(nn, a));
    }
    assert_true(sag > 0.0 && sag < 0.01);
    double I[9], o[3] = {0.4, -0.2, 0.0};
    mat_identity(I);
    col_geom obst = mesh_geom(&m, o, I);
    col_contact_point p[MAXP];
    const double r = 0.1, gap = -0.001;
    /* from above: the pole vertex lies on the true sphere, Φ exact */
    double ca[3] = {o[0], o[1], R + r + gap};
    col_geom s = shape_geom(DVI_SHAPE_SPHERE, ca, I, r, 0, NULL);
    assert_int_equal(collide(&s, &obst, p), 1);
    assert_near(p[0].distance, gap, EXACT);
    assert_near(p[0].normal[2], -1.0, EXACT);
    /* from the side (elevation 25°, azimuth 7°, between vertices): the faces
     * lie inside the true sphere by at most `sag`, so Φ ∈ [gap, gap + sag];
     * the normal is within one tessellation step (15°) of the radial direction */
    double el = 25 * PI / 180, az = 7 * PI / 180, dir[3] = {cos(el) * cos(az), cos(el) * sin(az), sin(el)};
    double cs[3];
    for (int k = 0; k < 3; k++) cs[k] = o[k] + (R + r + gap) * dir[k];
    s = shape_geom(DVI_SHAPE_SPHERE, cs, I, r, 0, NULL);
    int n = collide(&s, &obst, p);
    assert_true(n >= 1 && n <= 2);
    double phi = min_distance(p, n);
    assert_true(phi >= gap - EXACT && phi <= gap + sag + EXACT);
    for (int k = 0; k < n; k++) assert_true(-dot(p[k].normal, dir) >= cos(15 * PI / 180));
    /* inside the closed mesh, away from its faces: nothing (one-sided) */
    double ci[3] = {o[0], o[1], 0.04};
    s = shape_geom(DVI_SHAPE_SPHERE, ci, I, 0.03, 0, NULL);
    assert_int_equal(collide(&s, &obst, p), 0);
    /* a wheel rolling over the top: the pole, Φ exact */
    double xax[3] = {1, 0, 0}, Rw[9];
    mat_axis_angle(Rw, xax, -PI / 2);
    double cw[3] = {o[0], o[1], R + 0.25 + gap};
    col_geom w = shape_geom(DVI_SHAPE_CYLINDER, cw, Rw, 0.25, 0.08, NULL);
    n = collide(&w, &obst, p);
    assert_true(n >= 1);
    assert_near(min_distance(p, n), gap, EXACT);
    /* a box resting on the top: the pole only */
    double half[3] = {0.3, 0.2, 0.05}, cb[3] = {o[0] + 0.02, o[1] - 0.01, R + 0.05 + gap};
    col_geom b = shape_geom(DVI_SHAPE_BOX, cb, I, 0, 0, half);
    assert_int_equal(collide(&b, &obst, p), 1);
    assert_near(p[0].distance, gap, EXACT);
    assert_near(p[0].point[0], o[0], EXACT);
    /* a capsule lying on the ground against the side: Φ within the sagitta */
    double yax[3] = {0, 1, 0}, Ry[9];
    mat_axis_angle(Ry, xax, -PI / 2); /* axis along y, tangent to the obstacle at +x */
    (void)yax;
    /* the axis is horizontal at height 0.04, at distance ρ = R + 0.04 + true_gap
     * from the sphere's centre: true gap ρ − R − 0.04 */
    const double true_gap = -0.002;
    double cc[3] = {o[0] + sqrt(pow(R + 0.04 + true_gap, 2) - 0.04 * 0.04), o[1], 0.04};
    col_geom cap = shape_geom(DVI_SHAPE_CAPSULE, cc, Ry, 0.04, 0.2, NULL);
    n = collide(&cap, &obst, p);
    assert_true(n >= 1);
    phi = min_distance(p, n);
    assert_true(phi >= true_gap - EXACT && phi <= true_gap + sag + EXACT);
    dvi_mesh_data_free(&md);
    assert_null(md.vertices);
}

/* ---- robustness, dispatch, features ---------------------------------------- */

static void test_terrain_misc(void** state)
{
    (void)state;
    double h[16], I[9], o[3] = {0, 0, 0};
    mat_identity(I);
    fill_heights(h, 4, 4, 1.0, 1.0, h_zero);
    col_heightfield hf = {4, 4, 1.0, 1.0, h, 0, 0};
    col_geom terrain = hf_geom(&hf, o, I);
    col_contact_point p[MAXP];
    /* terrain first: the dispatcher flips the normal (from terrain to sphere) */
    double c[3] = {1.4, 1.2, 0.3 - 0.001};
    col_geom s = shape_geom(DVI_SHAPE_SPHERE, c, I, 0.3, 0, NULL);
    assert_int_equal(col_narrow_phase(&terrain, &s, ENV, p, MAXP), 1);
    assert_near(p[0].normal[2], 1.0, EXACT);
    assert_near(p[0].distance, -0.001, EXACT);
    /* features are stable under small motions within the same triangle */
    uint32_t f0 = p[0].feature;
    s.pos[0] += 0.01;
    s.pos[2] += 0.0005;
    assert_int_equal(col_narrow_phase(&s, &terrain, ENV, p, MAXP), 1);
    assert_int_equal(p[0].feature, f0);
    double half[3] = {0.3, 0.2, 0.1}, cb[3] = {1.5, 1.5, 0.1 - 0.001};
    col_geom b = shape_geom(DVI_SHAPE_BOX, cb, I, 0, 0, half);
    uint32_t fb[4];
    assert_int_equal(collide(&b, &terrain, p), 4);
    for (int k = 0; k < 4; k++) fb[k] = p[k].feature;
    b.pos[1] += 0.02;
    assert_int_equal(collide(&b, &terrain, p), 4);
    for (int k = 0; k < 4; k++) assert_int_equal(p[k].feature, fb[k]);
    for (int k = 0; k < 4; k++)
        for (int j = 0; j < k; j++) assert_true(fb[k] != fb[j]);
    /* max < 8 is honoured */
    assert_int_equal(col_collide_terrain(&b, &terrain, ENV, p, 3), 3);
    /* non-finite pose, degenerate grid, bad mesh indices: no contact, no crash */
    double nanpos[3] = {NAN, 1.0, 0.2};
    col_geom sn = shape_geom(DVI_SHAPE_SPHERE, nanpos, I, 0.3, 0, NULL);
    assert_int_equal(collide(&sn, &terrain, p), 0);
    col_heightfield one = {1, 4, 1.0, 1.0, h, 0, 0};
    col_geom t1 = hf_geom(&one, o, I);
    assert_int_equal(collide(&s, &t1, p), 0);
    const double v[9] = {0, 0, 0, 1, 0, 0, 0, 1, 0};
    const int32_t tris[6] = {0, 1, 7, 0, 1, 2};
    col_trimesh m = {3, 2, (double*)v, (int32_t*)tris};
    col_geom tm = mesh_geom(&m, o, I);
    double cm[3] = {0.2, 0.2, 0.1 - 0.001};
    col_geom sm = shape_geom(DVI_SHAPE_SPHERE, cm, I, 0.1, 0, NULL);
    assert_int_equal(collide(&sm, &tm, p), 1); /* the valid triangle only */
    assert_int_equal(p[0].feature >> 2, 1u * 64u + 0u);
}

/* ---- OBJ reader ------------------------------------------------------------- */

static void test_obj_valid(void** state)
{
    const tmpdir* d = *state;
    char path[256], msg[256];
    const char* cube = "# a unit cube\n"
                       "mtllib cube.mtl\n"
                       "o cube\n"
                       "\n"
                       "v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\n"
                       "v 0 0 1\nv 1 0 1\nv 1 1 1\nv 0 1 1.5e0   # trailing comment\n"
                       "vt 0 0\nvt 1 0\nvt 1 1\nvn 0 0 -1\nvn 0 0 1\n"
                       "g sides\ns off\nusemtl grey\n"
                       "f 1/1/1 4/3/1 3/2/1 2/1/1\n" /* bottom quad, v/vt/vn */
                       "f 5//2 6//2 7//2 8//2\n"     /* top quad, v//vn */
                       "f 1/1 2/2 6/3 5/1\n"         /* v/vt */
                       "\tf 2 3 7 6\n"
                       "f 3 4 8\nf 3 8 7\n"
                       "f 4 1 5 8\n";
    write_file(d, "cube.obj", cube, 0, path);
    dvi_mesh_data m;
    assert_int_equal(dvi_obj_read(path, &m, msg, sizeof msg), DVI_OK);
    assert_string_equal(msg, "");
    assert_int_equal(m.vertex_count, 8);
    assert_int_equal(m.triangle_count, 12);
    assert_near(m.vertices[3 * 6 + 0], 1.0, 0.0);
    assert_near(m.vertices[3 * 7 + 2], 1.5, 0.0);
    /* quad 1 4 3 2 → (0 3 2) (0 2 1) */
    const int32_t want[6] = {0, 3, 2, 0, 2, 1};
    for (int k = 0; k < 6; k++) assert_int_equal(m.triangles[k], want[k]);
    dvi_mesh_data_free(&m);
    assert_null(m.vertices);
    assert_null(m.triangles);
    assert_int_equal(m.vertex_count, 0);
    dvi_mesh_data_free(&m); /* twice is fine */
    dvi_mesh_data_free(NULL);

    /* negative indices, a pentagon (3 triangles), CRLF, w and colour values,
     * exponents and signs, no final newline */
    const char* neg = "v 0 0 0 1\r\nv 1 0 0 1 0.5 0.5 0.5\r\nv 1 1 0\r\nv 0.5 1.5 0\r\nv -.5 1E0 +0.\r\n"
                      "f -5 -4 -3 -2 -1\r\nv 2 2 2\r\nf 1 2 -1";
    write_file(d, "neg.obj", neg, 0, path);
    assert_int_equal(dvi_obj_read(path, &m, msg, sizeof msg), DVI_OK);
    assert_int_equal(m.vertex_count, 6);
    assert_int_equal(m.triangle_count, 4);
    const int32_t want2[12] = {0, 1, 2, 0, 2, 3, 0, 3, 4, 0, 1, 5};
    for (int k = 0; k < 12; k++) assert_int_equal(m.triangles[k], want2[k]);
    assert_near(m.vertices[3 * 4 + 0], -0.5, 0.0);
    assert_near(m.vertices[3 * 4 + 1], 1.0, 0.0);
    assert_near(m.vertices[3 * 4 + 2], 0.0, 0.0);
    dvi_mesh_data_free(&m);

    /* a comma-decimal locale, if installed, must not change the parse */
    const char* old = setlocale(LC_NUMERIC, NULL);
    char saved[64];
    snprintf(saved, sizeof saved, "%s", old ? old : "C");
    const char* names[] = {"de_DE.UTF-8", "de_DE.utf8", "fr_FR.UTF-8", "fr_FR.utf8"};
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
        if (!setlocale(LC_NUMERIC, names[k])) continue;
        assert_int_equal(dvi_obj_read(path, &m, msg, sizeof msg), DVI_OK);
        assert_near(m.vertices[3 * 4 + 0], -0.5, 0.0);
        dvi_mesh_data_free(&m);
        break;
    }
    setlocale(LC_NUMERIC, saved);
}

typedef struct bad_case {
    const char* name;
    const char* text;
    const char* expect; /* substring after "name:" */
} bad_case;

static void test_obj_malformed(void** state)
{
    const tmpdir* d = *state;
    char path[256], msg[256], want[300];
    const char* v8 = "v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nv 0 0 1\nv 1 0 1\nv 1 1 1\nv 0 1 1\n";
    char range[400];
    snprintf(range, sizeof range, "# cube\n%s\nf 1 2 3\nf 1 2 9\n", v8); /* the bad face is line 12 */
    const bad_case cases[] = {
        {"range.obj", range, ":12: face index 9 out of range (8 vertices)"},
        {"zero.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 0 1 2\n", ":4: face index 0 is invalid (indices start at 1)"},
        {"negrange.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf -1 -2 -5\n", ":4: face index -5 out of range (3 vertices)"},
        {"forward.obj", "f 1 2 3\nv 0 0 0\nv 1 0 0\nv 0 1 0\n", ":1: face index 1 out of range (0 vertices)"},
        {"twovert.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\n\nf 1 2\n", ":5: face with 2 vertices (at least 3 needed)"},
        {"twocoord.obj", "v 0 0 0\nv 1 0\n", ":2: vertex with 2 coordinates (3 needed)"},
        {"nan.obj", "v 0 0 0\nv nan 0 0\n", ":2: non-finite value 'nan'"},
        {"inf.obj", "v 0 0 0\nv 1 -Inf 0\n", ":2: non-finite value '-Inf'"},
        {"huge.obj", "v 0 0 0\nv 1 1e999 0\n", ":2: number out of range '1e999'"},
        {"alpha.obj", "v 1 abc 3\n", ":1: invalid number 'abc'"},
        {"comma.obj", "# x\nv 1,5 2 3\n", ":2: invalid number '1,5'"},
        {"hex.obj", "v 0x10 2 3\n", ":1: invalid number '0x10'"},
        {"exp.obj", "v 1e 2 3\n", ":1: invalid number '1e'"},
        {"many.obj", "v 1 2 3 4 5 6 7 8\n", ":1: vertex with more than 7 values"},
        {"keyword.obj", "v 0 0 0\nvx 1 2 3\n", ":2: unknown keyword 'vx'"},
        {"slashes.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1/2/3/4 2 3\n", ":4: invalid face vertex '1/2/3/4'"},
        {"trail.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1// 2 3\n", ":4: invalid face vertex '1//'"},
        {"letter.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 x\n", ":4: invalid face vertex 'x'"},
        {"bigindex.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 99999999999999999999\n",
         ":4: face index 99999999999999999999 out of range (3 vertices)"},
        {"empty.obj", "# nothing\n\n", ": no faces"},
        {"nofaces.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\n", ": no faces"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        write_file(d, cases[k].name, cases[k].text, 0, path);
        dvi_mesh_data m;
        memset(&m, 0xab, sizeof m);
        dvi_status st = dvi_obj_read(path, &m, msg, sizeof msg);
        if (st != DVI_ERR_PARSE) print_error("%s: status %d, message '%s'\n", cases[k].name, (int)st, msg);
        assert_int_equal(st, DVI_ERR_PARSE);
        snprintf(want, sizeof want, "%s%s", path, cases[k].expect);
        if (strcmp(msg, want) != 0) print_error("%s: got '%s'\n   expected '%s'\n", cases[k].name, msg, want);
        assert_string_equal(msg, want);
        assert_null(m.vertices); /* zeroed on failure */
        assert_null(m.triangles);
        assert_int_equal(m.vertex_count, 0);
        assert_int_equal(m.triangle_count, 0);
    }
}

static void test_obj_hostile(void** state)
{
    const tmpdir* d = *state;
    char path[256], msg[256];
    dvi_mesh_data m;
    /* binary junk: NUL bytes and control characters */
    const char junk[] = "v 0 0 0\nv 1\0 0 0\n\x7f\x45LF\x02\x01";
    write_file(d, "junk.obj", junk, sizeof junk - 1, path);
    assert_int_equal(dvi_obj_read(path, &m, msg, sizeof msg), DVI_ERR_PARSE);
    assert_non_null(strstr(msg, ":2: invalid byte 0x00"));
    /* pseudo-random bytes: an error, no crash */
    char* rnd = malloc(65536);
    assert_non_null(rnd);
    uint64_t s = 12345;
    for (int k = 0; k < 65536; k++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        rnd[k] = (char)(s >> 56);
    }
    write_file(d, "random.obj", rnd, 65536, path);
    assert_true(dvi_obj_read(path, &m, msg, sizeof msg) < 0);
    assert_null(m.vertices);
    /* printable junk without control characters */
    for (int k = 0; k < 65536; k++) rnd[k] = (char)(0x20 + (unsigned char)rnd[k] % 95);
    rnd[100] = '\n';
    write_file(d, "printable.obj", rnd, 65536, path);
    assert_int_equal(dvi_obj_read(path, &m, msg, sizeof msg), DVI_ERR_PARSE);
    free(rnd);
    /* a line longer than 1 MiB */
    size_t big = ((size_t)1 << 20) + 100;
    char* longline = malloc(big);
    assert_non_null(longline);
    memcpy(longline, "v 0 0 0\n# ", 10);
    memset(longline + 10, 'x', big - 10);
    write_file(d, "long.obj", longline, big, path);
    assert_int_equal(dvi_obj_read(path, &m, msg, sizeof msg), DVI_ERR_PARSE);
    assert_non_null(strstr(msg, ":2: line longer than 1048576 bytes"));
    /* a long but legal face (100000 corners, fan-split) */
    size_t cap = 1000000, n = 0;
    char* face = malloc(cap);
    assert_non_null(face);
    n += (size_t)snprintf(face, cap, "v 0 0 0\nv 1 0 0\nv 0 1 0\nf");
    for (int k = 0; k < 100000; k++) n += (size_t)snprintf(face + n, cap - n, " %d", 1 + k % 3);
    n += (size_t)snprintf(face + n, cap - n, "\n");
    assert_true(n < cap);
    write_file(d, "bigface.obj", face, n, path);
    free(face);
    free(longline);
    assert_int_equal(dvi_obj_read(path, &m, msg, sizeof msg), DVI_OK);
    assert_int_equal(m.triangle_count, 100000 - 2);
    dvi_mesh_data_free(&m);
    /* a very long number token */
    char num[1000];
    memset(num, '1', sizeof num);
    memcpy(num, "v ", 2);
    num[sizeof num - 1] = '\0';
    write_file(d, "longnum.obj", num, 0, path);
    assert_int_equal(dvi_obj_read(path, &m, msg, sizeof msg), DVI_ERR_PARSE);
    assert_non_null(strstr(msg, ":1: number too long"));
    /* a truncated message buffer stays NUL-terminated */
    char small[12];
    memset(small, 'z', sizeof small);
    assert_int_equal(dvi_obj_read(path, &m, small, sizeof small), DVI_ERR_PARSE);
    assert_true(memchr(small, '\0', sizeof small) != NULL);
    assert_int_equal(dvi_obj_read(path, &m, NULL, 0), DVI_ERR_PARSE);
    /* a vertex beyond the 1e15 bound of scene numbers (a ±1e300 triangle
     * was accepted, and a ball fell through it) */
    const char* far = "v -1e300 -1e300 0\nv 1e300 -1e300 0\nv 0 1e300 0\nf 1 2 3\n";
    write_file(d, "far.obj", far, strlen(far), path);
    assert_int_equal(dvi_obj_read(path, &m, msg, sizeof msg), DVI_ERR_PARSE);
    assert_non_null(strstr(msg, ":1: number out of range '-1e300' (magnitude at most 1e15)"));
    /* only degenerate triangles: collinear, repeated vertices */
    const char* flat = "v 0 0 0\nv 1 0 0\nv 2 0 0\nv 0 1 0\nf 1 2 3\nf 1 1 4\nf 4 4 4\n";
    write_file(d, "flat.obj", flat, strlen(flat), path);
    assert_int_equal(dvi_obj_read(path, &m, msg, sizeof msg), DVI_ERR_PARSE);
    assert_non_null(strstr(msg, "all 3 triangles are degenerate"));
    /* one proper triangle among them is a mesh */
    const char* one = "v 0 0 0\nv 1 0 0\nv 2 0 0\nv 0 1 0\nf 1 2 3\nf 1 2 4\n";
    write_file(d, "one.obj", one, strlen(one), path);
    assert_int_equal(dvi_obj_read(path, &m, msg, sizeof msg), DVI_OK);
    assert_int_equal(m.triangle_count, 2);
    dvi_mesh_data_free(&m);
    /* missing file, a directory, NULL arguments */
    snprintf(path, sizeof path, "%s/does-not-exist.obj", d->path);
    assert_int_equal(dvi_obj_read(path, &m, msg, sizeof msg), DVI_ERR_IO);
    assert_non_null(strstr(msg, "does-not-exist.obj"));
    assert_int_equal(dvi_obj_read(d->path, &m, msg, sizeof msg), DVI_ERR_IO);
    assert_int_equal(dvi_obj_read(NULL, &m, msg, sizeof msg), DVI_ERR_INVALID_ARG);
    assert_int_equal(dvi_obj_read(path, NULL, msg, sizeof msg), DVI_ERR_INVALID_ARG);
}

/* The sample files in tests/data (read in place). */
static void test_obj_samples(void** state)
{
    (void)state;
    char msg[512];
    dvi_mesh_data m;
    assert_int_equal(dvi_obj_read(SRC_PATH("tests/data/cube.obj"), &m, msg, sizeof msg), DVI_OK);
    assert_int_equal(m.vertex_count, 8);
    assert_int_equal(m.triangle_count, 12);
    dvi_mesh_data_free(&m);
    assert_int_equal(dvi_obj_read(SRC_PATH("tests/data/hemisphere.obj"), &m, msg, sizeof msg), DVI_OK);
    assert_int_equal(m.vertex_count, 1 + 8 * 24);
    assert_int_equal(m.triangle_count, 24 + 2 * 24 * 7 + 22);
    dvi_mesh_data_free(&m);
    assert_int_equal(dvi_obj_read(SRC_PATH("tests/data/bad_face_index.obj"), &m, msg, sizeof msg),
                     DVI_ERR_PARSE);
    assert_non_null(strstr(msg, "bad_face_index.obj:12: face index 9 out of range (8 vertices)"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sphere_flat_heightfield),
        cmocka_unit_test(test_sphere_sloped_heightfield),
        cmocka_unit_test(test_sphere_shared_features),
        cmocka_unit_test(test_box_heightfield),
        cmocka_unit_test(test_cylinder_heightfield),
        cmocka_unit_test(test_capsule_heightfield),
        cmocka_unit_test(test_flat_square_mesh),
        cmocka_unit_test(test_terrain_misc),
        cmocka_unit_test(test_hemisphere_mesh),
        cmocka_unit_test(test_sphere_brute_force),
        cmocka_unit_test(test_heightfield_mesh_agree),
        cmocka_unit_test(test_cylinder_rim_crease),
        cmocka_unit_test(test_obj_valid),
        cmocka_unit_test(test_obj_malformed),
        cmocka_unit_test(test_obj_hostile),
        cmocka_unit_test(test_obj_samples),
    };
    return cmocka_run_group_tests(tests, tmp_setup, tmp_teardown);
}
