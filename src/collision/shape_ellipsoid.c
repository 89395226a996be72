/* dvicontact — the ellipsoid: {x²/a² + y²/b² + z²/c² ≤ 1} of its local frame,
 * semi-axes (a, b, c) in the geom's half[] (collision.h, col_shape_class).
 *
 * It has no pair routine of its own: it meets the other convex kinds through
 * the general convex routine (GJK/EPA on its support function, one point)
 * and a plane through the general convex–plane routine (its support point
 * along the plane's inward normal: exact). Height fields and meshes have
 * no routine for it yet: an ellipsoid passes through them.
 *
 * Support in local direction d: p = D²d / |Dd| with D = diag(a, b, c). */
#include "collision.h"
#include "math3.h"
#include "shape_util.h"

#include <math.h>

static const double pi = 3.14159265358979323846;

static bool ellipsoid_bounds(col_geom* g)
{
    /* extent along world axis k: |row k of R·D| */
    const double* R = g->rot;
    for (int k = 0; k < 3; k++) {
        double x = R[3 * k] * g->half[0], y = R[3 * k + 1] * g->half[1], z = R[3 * k + 2] * g->half[2];
        double e = sqrt(x * x + y * y + z * z);
        col_aabb_axis(g, k, e);
    }
    return true;
}

static void ellipsoid_support(const col_geom* g, const double d[3], double out[3])
{
    const double* R = g->rot;
    double l[3], p[3];
    m3_tmulv(l, R, d); /* local direction */
    for (int k = 0; k < 3; k++) l[k] *= g->half[k];
    double n = v3_norm(l);
    v3_copy(out, g->pos);
    if (!(n > 0.0)) return;
    for (int k = 0; k < 3; k++) p[k] = g->half[k] * l[k] / n;
    for (int k = 0; k < 3; k++) out[k] += R[3 * k] * p[0] + R[3 * k + 1] * p[1] + R[3 * k + 2] * p[2];
}

static double zero(const col_geom* g)
{
    (void)g;
    return 0.0;
}

static double largest(const col_geom* g)
{
    return fmax(g->half[0], fmax(g->half[1], g->half[2]));
}

static double smallest(const col_geom* g)
{
    return fmin(g->half[0], fmin(g->half[1], g->half[2]));
}

static double ellipsoid_bound(const col_geom* g, double off)
{
    return off + largest(g);
}

static void ellipsoid_mass(const col_geom* g, double* volume, double d[3])
{
    const double a = g->half[0], b = g->half[1], c = g->half[2];
    *volume = 4.0 / 3.0 * pi * a * b * c;
    d[0] = (b * b + c * c) / 5.0;
    d[1] = (a * a + c * c) / 5.0;
    d[2] = (a * a + b * b) / 5.0;
}

/* The unit sphere's rings, stretched by the semi-axes. */
typedef struct stretch {
    col_mesh_sink sink;
    col_mesh_sink* to;
    const double* s;
} stretch;

static void stretch_point(col_mesh_sink* m, double x, double y, double z)
{
    stretch* t = (stretch*)m;
    t->to->point(t->to, t->s[0] * x, t->s[1] * y, t->s[2] * z);
}

static void stretch_triangle(col_mesh_sink* m, size_t a, size_t b, size_t c)
{
    stretch* t = (stretch*)m;
    t->to->triangle(t->to, a, b, c);
}

static void ellipsoid_mesh(const col_geom* g, col_mesh_sink* m)
{
    stretch t = {.sink = {.point = stretch_point, .triangle = stretch_triangle}, .to = m, .s = g->half};
    double r[2 * DVI_DRAW_HALF], z[2 * DVI_DRAW_HALF];
    int n = 0;
    for (int k = 1; k < 2 * DVI_DRAW_HALF; k++) {
        const double th = pi / 2.0 * (double)k / DVI_DRAW_HALF;
        r[n] = sin(th);
        z[n++] = cos(th);
    }
    col_mesh_revolve(&t.sink, 1.0, r, z, n, -1.0);
}

/* In the coordinates x/a, y/b, z/c the ellipsoid is the unit ball. */
static bool ellipsoid_ray(const col_geom* g, const double o[3], const double u[3], double tmax, double* t,
                          double n[3])
{
    double os[3], us[3];
    for (int k = 0; k < 3; k++) os[k] = o[k] / g->half[k], us[k] = u[k] / g->half[k];
    double A = v3_dot(us, us), B = v3_dot(os, us), C = v3_dot(os, os) - 1.0;
    if (!(C > 0.0) || B >= 0.0) return false; /* inside, or moving away */
    double disc = B * B - A * C;
    if (disc < 0.0) return false;
    double s = (-B - sqrt(disc)) / A;
    if (s > tmax) return false;
    for (int k = 0; k < 3; k++) n[k] = (o[k] + s * u[k]) / (g->half[k] * g->half[k]);
    double len = v3_norm(n);
    for (int k = 0; k < 3; k++) n[k] /= len;
    *t = s;
    return true;
}

const col_shape_class col_shape_class_ellipsoid = {
    .name = "ellipsoid", .article = "an ellipsoid", .params = {{"semi_axes", DVI_SLOT_HALF}},
    .bounds = ellipsoid_bounds, .bound = ellipsoid_bound, .mass = ellipsoid_mass, .mesh = ellipsoid_mesh,
    .ray = ellipsoid_ray,
    .core_support = ellipsoid_support, .margin = zero, .scale = largest,
    .contact_radius = smallest, .thickness = smallest,
};
