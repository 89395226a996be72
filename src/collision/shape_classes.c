/* dvicontact — the classes of the built-in shape kinds (collision.h):
 * sphere, box, capsule, cylinder, plane, height field, mesh. Each is one
 * col_shape_class; narrow.c puts them in the table of kinds. */
#include "collision.h"
#include "math3.h"
#include "shape_util.h"

#include <math.h>

static void column(const double* rot, int i, double c[3])
{
    c[0] = rot[i];
    c[1] = rot[3 + i];
    c[2] = rot[6 + i];
}

/* AABB of the box c ± h of the shape frame. */
void col_rotated_box_aabb(const col_geom* g, const double c[3], const double h[3], double lo[3], double hi[3])
{
    const double* R = g->rot;
    for (int k = 0; k < 3; k++) {
        double ck = g->pos[k] + R[3 * k] * c[0] + R[3 * k + 1] * c[1] + R[3 * k + 2] * c[2];
        double ek = fabs(R[3 * k]) * h[0] + fabs(R[3 * k + 1]) * h[1] + fabs(R[3 * k + 2]) * h[2];
        lo[k] = ck - ek;
        hi[k] = ck + ek;
    }
}

static const double pi = 3.14159265358979323846;

/* A surface of revolution about the local z axis: a pole at z_top, rings
 * (r[k], z[k]) from top to bottom with DVI_DRAW_SEGMENTS points each, a pole
 * at z_bot; fans at the poles, two triangles per segment between rings. */
void col_mesh_revolve(col_mesh_sink* m, double z_top, const double* r, const double* z, int rings, double z_bot)
{
    const size_t S = DVI_DRAW_SEGMENTS;
    m->point(m, 0, 0, z_top);
    for (int k = 0; k < rings; k++)
        for (size_t j = 0; j < S; j++) {
            const double phi = 2.0 * pi * (double)j / (double)S;
            m->point(m, r[k] * cos(phi), r[k] * sin(phi), z[k]);
        }
    m->point(m, 0, 0, z_bot);
    const size_t bot = 1 + (size_t)rings * S;
    for (size_t j = 0; j < S; j++) {
        const size_t j1 = (j + 1) % S;
        m->triangle(m, 0, 1 + j, 1 + j1);
        for (int k = 0; k + 1 < rings; k++) {
            const size_t a = 1 + (size_t)k * S + j, b = 1 + (size_t)k * S + j1;
            const size_t c = b + S, d = a + S;
            m->triangle(m, a, d, b);
            m->triangle(m, b, d, c);
        }
        m->triangle(m, 1 + (size_t)(rings - 1) * S + j, bot, 1 + (size_t)(rings - 1) * S + j1);
    }
}

/* Entry t ≥ 0 of the ray o + t u (u unit) into the ball |x| ≤ r from
 * outside, or false (a miss, or o inside). */
static bool ray_ball(const double o[3], const double u[3], double r, double* t)
{
    double b = v3_dot(o, u), c = v3_dot(o, o) - r * r;
    if (!(c > 0.0) || b > 0.0) return false; /* inside, or moving away */
    double disc = b * b - c;
    if (disc < 0.0) return false;
    *t = -b - sqrt(disc);
    return true;
}

/* ---- sphere ------------------------------------------------------------------ */

static bool sphere_bounds(col_geom* g)
{
    for (int k = 0; k < 3; k++) col_aabb_axis(g, k, g->radius);
    return true;
}

static void centre_support(const col_geom* g, const double d[3], double out[3])
{
    (void)d;
    v3_copy(out, g->pos);
}

static double radius_of(const col_geom* g)
{
    return g->radius;
}

static double zero(const col_geom* g)
{
    (void)g;
    return 0.0;
}

static double sphere_bound(const col_geom* g, double off)
{
    return off + g->radius;
}

static void sphere_mass(const col_geom* g, double* volume, double d[3])
{
    const double r = g->radius;
    *volume = 4.0 / 3.0 * pi * r * r * r;
    d[0] = d[1] = d[2] = 0.4 * r * r;
}

/* a sphere (hl = 0) or a capsule: polar angles 15°, 30°, …, 165° (a
 * capsule: 90° twice, at ±hl) */
static void rounded_mesh(col_mesh_sink* m, double R, double hl, bool cap)
{
    double r[2 * DVI_DRAW_HALF], z[2 * DVI_DRAW_HALF];
    int n = 0;
    for (int k = 1; k < 2 * DVI_DRAW_HALF; k++) {
        const double th = pi / 2.0 * (double)k / DVI_DRAW_HALF;
        if (cap && k == DVI_DRAW_HALF) {
            r[n] = R, z[n++] = hl;
            r[n] = R, z[n++] = -hl;
            continue;
        }
        r[n] = R * sin(th);
        z[n++] = R * cos(th) + (k < DVI_DRAW_HALF ? hl : -hl);
    }
    col_mesh_revolve(m, hl + R, r, z, n, -hl - R);
}

static void sphere_mesh(const col_geom* g, col_mesh_sink* m)
{
    rounded_mesh(m, g->radius, 0.0, false);
}

static bool sphere_ray(const col_geom* g, const double o[3], const double u[3], double tmax, double* t, double n[3])
{
    double s;
    if (!ray_ball(o, u, g->radius, &s) || s > tmax) return false;
    for (int k = 0; k < 3; k++) n[k] = (o[k] + s * u[k]) / g->radius;
    *t = s;
    return true;
}

const col_shape_class col_shape_class_sphere = {
    .name = "sphere", .article = "a sphere", .params = {{"radius", DVI_SLOT_RADIUS}},
    .bounds = sphere_bounds, .bound = sphere_bound, .mass = sphere_mass, .mesh = sphere_mesh, .ray = sphere_ray,
    .core_support = centre_support, .margin = radius_of, .scale = radius_of,
    .contact_radius = radius_of, .thickness = radius_of,
};

/* ---- box --------------------------------------------------------------------- */

static bool box_bounds(col_geom* g)
{
    const double c[3] = {0.0, 0.0, 0.0};
    col_rotated_box_aabb(g, c, g->half, g->aabb_min, g->aabb_max);
    return true;
}

static void box_support(const col_geom* g, const double d[3], double out[3])
{
    double c[3];
    v3_copy(out, g->pos);
    for (int i = 0; i < 3; i++) {
        column(g->rot, i, c);
        v3_axpy(out, v3_dot(c, d) >= 0.0 ? g->half[i] : -g->half[i], c);
    }
}

static double box_diagonal(const col_geom* g)
{
    return sqrt(v3_dot(g->half, g->half));
}

static double box_bound(const col_geom* g, double off)
{
    return off + v3_norm(g->half);
}

static int box_kinks(const col_geom* g, double k[3][3])
{
    for (int i = 0; i < 3; i++) column(g->rot, i, k[i]);
    return 3;
}

static double smallest_half(const col_geom* g)
{
    return fmin(g->half[0], fmin(g->half[1], g->half[2]));
}

static void box_mass(const col_geom* g, double* volume, double d[3])
{
    const double* a = g->half;
    *volume = 8.0 * a[0] * a[1] * a[2];
    d[0] = (a[1] * a[1] + a[2] * a[2]) / 3.0;
    d[1] = (a[0] * a[0] + a[2] * a[2]) / 3.0;
    d[2] = (a[0] * a[0] + a[1] * a[1]) / 3.0;
}

static void box_mesh(const col_geom* g, col_mesh_sink* m)
{
    static const int faces[6][4] = {{0, 4, 6, 2}, {1, 3, 7, 5}, {0, 1, 5, 4},
                                    {2, 6, 7, 3}, {0, 2, 3, 1}, {4, 5, 7, 6}};
    const double* h = g->half;
    for (int i = 0; i < 8; i++) m->point(m, i & 1 ? h[0] : -h[0], i & 2 ? h[1] : -h[1], i & 4 ? h[2] : -h[2]);
    for (int f = 0; f < 6; f++) {
        m->triangle(m, (size_t)faces[f][0], (size_t)faces[f][1], (size_t)faces[f][2]);
        m->triangle(m, (size_t)faces[f][0], (size_t)faces[f][2], (size_t)faces[f][3]);
    }
}

/* slabs (Kay & Kajiya): the entry of the ray into all three */
static bool box_ray(const col_geom* g, const double o[3], const double u[3], double tmax, double* t, double n[3])
{
    double t0 = 0.0, t1 = tmax;
    int axis = -1;
    double sign = 0.0;
    for (int k = 0; k < 3; k++) {
        const double h = g->half[k];
        if (u[k] == 0.0) {
            if (o[k] < -h || o[k] > h) return false;
            continue;
        }
        double a = (-h - o[k]) / u[k], b = (h - o[k]) / u[k];
        double s = -1.0;
        if (a > b) {
            double x = a;
            a = b, b = x, s = 1.0;
        }
        if (a > t0) t0 = a, axis = k, sign = s;
        if (b < t1) t1 = b;
        if (t0 > t1) return false;
    }
    if (axis < 0) return false; /* the ray starts inside */
    n[0] = n[1] = n[2] = 0.0;
    n[axis] = sign;
    *t = t0;
    return true;
}

const col_shape_class col_shape_class_box = {
    .name = "box", .article = "a box", .params = {{"half_extents", DVI_SLOT_HALF}},
    .bounds = box_bounds, .bound = box_bound, .mass = box_mass, .mesh = box_mesh, .ray = box_ray,
    .core_support = box_support, .margin = zero, .scale = box_diagonal, .kinks = box_kinks,
    .contact_radius = smallest_half, .thickness = smallest_half,
};

/* ---- capsule ----------------------------------------------------------------- */

static bool capsule_bounds(col_geom* g)
{
    /* segment pos ± half_length·z, grown by the radius */
    const double* R = g->rot;
    for (int k = 0; k < 3; k++) col_aabb_axis(g, k, fabs(R[3 * k + 2]) * g->half_length + g->radius);
    return true;
}

static void capsule_support(const col_geom* g, const double d[3], double out[3])
{
    double c[3];
    v3_copy(out, g->pos);
    column(g->rot, 2, c);
    v3_axpy(out, v3_dot(c, d) >= 0.0 ? g->half_length : -g->half_length, c);
}

static double radius_plus_length(const col_geom* g)
{
    return g->radius + g->half_length;
}

static int capsule_kinks(const col_geom* g, double k[3][3])
{
    column(g->rot, 2, k[0]);
    return 1;
}

static double capsule_bound(const col_geom* g, double off)
{
    return off + g->half_length + g->radius;
}

static void capsule_mass(const col_geom* g, double* volume, double d[3])
{
    /* a cylinder of length 2·hl and two hemispheres (their centres of
     * mass 3r/8 beyond the cylinder's ends), mass shared by volume */
    const double r = g->radius, hl = g->half_length;
    double vc = 2.0 * pi * r * r * hl, vs = 4.0 / 3.0 * pi * r * r * r, v = vc + vs;
    double fc = vc / v, fs = vs / v;
    *volume = v;
    d[0] = d[1] = fc * (r * r / 4.0 + hl * hl / 3.0) + fs * (0.4 * r * r + hl * hl + 0.75 * hl * r);
    d[2] = fc * r * r / 2.0 + fs * 0.4 * r * r;
}

static void capsule_mesh(const col_geom* g, col_mesh_sink* m)
{
    rounded_mesh(m, g->radius, g->half_length, true);
}

/* the side (an infinite cylinder about z, hit within |z| ≤ hl) or one of
 * the two end balls, whichever comes first */
static bool capsule_ray(const col_geom* g, const double o[3], const double u[3], double tmax, double* t, double n[3])
{
    const double r = g->radius, hl = g->half_length;
    const double zc = fmax(-hl, fmin(hl, o[2])), oz = o[2] - zc;
    if (o[0] * o[0] + o[1] * o[1] + oz * oz <= r * r) return false; /* inside */
    double best = HUGE_VAL;
    const double a = u[0] * u[0] + u[1] * u[1], b = o[0] * u[0] + o[1] * u[1], c = o[0] * o[0] + o[1] * o[1] - r * r;
    if (a > 0.0 && c > 0.0 && b < 0.0 && b * b - a * c >= 0.0) {
        const double s = (-b - sqrt(b * b - a * c)) / a, z = o[2] + s * u[2];
        if (fabs(z) <= hl) {
            best = s;
            v3_set(n, (o[0] + s * u[0]) / r, (o[1] + s * u[1]) / r, 0.0);
        }
    }
    for (int e = 0; e < 2; e++) {
        const double oc[3] = {o[0], o[1], o[2] - (e ? -hl : hl)};
        double s;
        if (ray_ball(oc, u, r, &s) && s < best) {
            best = s;
            for (int k = 0; k < 3; k++) n[k] = (oc[k] + s * u[k]) / r;
        }
    }
    if (!(best <= tmax)) return false;
    *t = best;
    return true;
}

const col_shape_class col_shape_class_capsule = {
    .name = "capsule", .article = "a capsule",
    .params = {{"radius", DVI_SLOT_RADIUS}, {"half_length", DVI_SLOT_HALF_LENGTH}},
    .bounds = capsule_bounds, .bound = capsule_bound, .mass = capsule_mass, .mesh = capsule_mesh, .ray = capsule_ray,
    .core_support = capsule_support, .margin = radius_of, .scale = radius_plus_length, .kinks = capsule_kinks,
    .contact_radius = radius_of, .thickness = radius_of,
};

/* ---- cylinder ---------------------------------------------------------------- */

static bool cylinder_bounds(col_geom* g)
{
    /* two disks of radius r at pos ± half_length·z: a disk with unit
     * normal z spans r·sqrt(1 − z_k²) along world axis k */
    const double* R = g->rot;
    for (int k = 0; k < 3; k++) {
        double zk = R[3 * k + 2];
        double s = 1.0 - zk * zk;
        double e = fabs(zk) * g->half_length + g->radius * sqrt(s > 0.0 ? s : 0.0);
        col_aabb_axis(g, k, e);
    }
    return true;
}

static void cylinder_support(const col_geom* g, const double d[3], double out[3])
{
    double ex[3], ey[3], ez[3];
    v3_copy(out, g->pos);
    column(g->rot, 0, ex);
    column(g->rot, 1, ey);
    column(g->rot, 2, ez);
    double dx = v3_dot(ex, d), dy = v3_dot(ey, d), dz = v3_dot(ez, d);
    v3_axpy(out, dz >= 0.0 ? g->half_length : -g->half_length, ez);
    double rho = sqrt(dx * dx + dy * dy);
    if (rho > 1e-14 * v3_norm(d)) {
        v3_axpy(out, g->radius * dx / rho, ex);
        v3_axpy(out, g->radius * dy / rho, ey);
    }
}

static int cylinder_kinks(const col_geom* g, double k[3][3])
{
    for (int i = 0; i < 3; i++) column(g->rot, (i + 2) % 3, k[i]);
    return 3;
}

static double cylinder_bound(const col_geom* g, double off)
{
    return off + sqrt(g->radius * g->radius + g->half_length * g->half_length);
}

static double cylinder_thickness(const col_geom* g)
{
    return fmin(g->radius, g->half_length);
}

static void cylinder_mass(const col_geom* g, double* volume, double d[3])
{
    const double r = g->radius, hl = g->half_length;
    *volume = 2.0 * pi * r * r * hl;
    d[0] = d[1] = r * r / 4.0 + hl * hl / 3.0;
    d[2] = r * r / 2.0;
}

static void cylinder_mesh(const col_geom* g, col_mesh_sink* m)
{
    const double r[2] = {g->radius, g->radius}, z[2] = {g->half_length, -g->half_length};
    col_mesh_revolve(m, g->half_length, r, z, 2, -g->half_length);
}

/* the entry into both the slab |z| ≤ hl and the infinite cylinder ρ ≤ r */
static bool cylinder_ray(const col_geom* g, const double o[3], const double u[3], double tmax, double* t, double n[3])
{
    const double r = g->radius, hl = g->half_length;
    double t0 = 0.0, t1 = tmax;
    int side = -1; /* 0: a cap, 1: the side, at t0 */
    if (u[2] != 0.0) {
        double a = (-hl - o[2]) / u[2], b = (hl - o[2]) / u[2];
        if (a > b) {
            const double x = a;
            a = b, b = x;
        }
        if (a > t0) t0 = a, side = 0;
        if (b < t1) t1 = b;
    } else if (fabs(o[2]) > hl) {
        return false;
    }
    const double A = u[0] * u[0] + u[1] * u[1], B = o[0] * u[0] + o[1] * u[1], C = o[0] * o[0] + o[1] * o[1] - r * r;
    if (A > 0.0) {
        const double disc = B * B - A * C;
        if (disc < 0.0) return false;
        const double a = (-B - sqrt(disc)) / A, b = (-B + sqrt(disc)) / A;
        if (a > t0) t0 = a, side = 1;
        if (b < t1) t1 = b;
    } else if (C > 0.0) {
        return false;
    }
    if (t0 > t1 || side < 0) return false; /* a miss, or the ray starts inside */
    if (side == 0)
        v3_set(n, 0.0, 0.0, u[2] < 0.0 ? 1.0 : -1.0);
    else
        v3_set(n, (o[0] + t0 * u[0]) / r, (o[1] + t0 * u[1]) / r, 0.0);
    *t = t0;
    return true;
}

const col_shape_class col_shape_class_cylinder = {
    .name = "cylinder", .article = "a cylinder",
    .params = {{"radius", DVI_SLOT_RADIUS}, {"half_length", DVI_SLOT_HALF_LENGTH}},
    .bounds = cylinder_bounds, .bound = cylinder_bound, .mass = cylinder_mass, .mesh = cylinder_mesh,
    .ray = cylinder_ray,
    .core_support = cylinder_support, .margin = zero, .scale = radius_plus_length, .kinks = cylinder_kinks,
    .contact_radius = radius_of, .thickness = cylinder_thickness,
};

/* ---- plane ------------------------------------------------------------------- */

static bool plane_bounds(col_geom* g)
{
    /* the half-space n·(x − pos) ≤ 0: unbounded, except along an axis
     * that the normal is exactly aligned with */
    const double* R = g->rot;
    g->unbounded = true;
    for (int k = 0; k < 3; k++) {
        g->aabb_min[k] = -HUGE_VAL;
        g->aabb_max[k] = HUGE_VAL;
    }
    for (int k = 0; k < 3; k++) {
        double nk = R[3 * k + 2];
        bool aligned = fabs(nk) == 1.0;
        for (int j = 0; j < 3; j++)
            if (j != k && R[3 * j + 2] != 0.0) aligned = false;
        if (!aligned) continue;
        if (nk > 0.0)
            g->aabb_max[k] = g->pos[k];
        else
            g->aabb_min[k] = g->pos[k];
    }
    return true;
}

static void plane_mesh(const col_geom* g, col_mesh_sink* m)
{
    /* a square about the foot of sink->centre on the plane */
    (void)g;
    const double* l = m->centre;
    const double H = m->half;
    m->point(m, l[0] - H, l[1] - H, 0);
    m->point(m, l[0] + H, l[1] - H, 0);
    m->point(m, l[0] + H, l[1] + H, 0);
    m->point(m, l[0] - H, l[1] + H, 0);
    m->triangle(m, 0, 1, 2);
    m->triangle(m, 0, 2, 3);
}

static bool plane_ray(const col_geom* g, const double o[3], const double u[3], double tmax, double* t, double n[3])
{
    (void)g;
    if (!(o[2] > 0.0) || !(u[2] < 0.0)) return false;
    double s = -o[2] / u[2];
    if (s > tmax) return false;
    n[0] = n[1] = 0.0;
    n[2] = 1.0;
    *t = s;
    return true;
}

const col_shape_class col_shape_class_plane = {
    .name = "plane", .article = "a plane", .fixed_only = true, .half_space = true,
    .bounds = plane_bounds, .mesh = plane_mesh, .ray = plane_ray,
};

/* ---- height field ------------------------------------------------------------ */

static bool heightfield_bounds(col_geom* g)
{
    const col_heightfield* hf = g->hfield;
    if (!hf || hf->nx < 1 || hf->ny < 1) return false;
    double ex = 0.5 * (hf->nx - 1) * hf->dx, ey = 0.5 * (hf->ny - 1) * hf->dy;
    double c[3] = {ex, ey, 0.5 * (hf->hmin + hf->hmax)};
    double h[3] = {fabs(ex), fabs(ey), 0.5 * fabs(hf->hmax - hf->hmin)};
    col_rotated_box_aabb(g, c, h, g->aabb_min, g->aabb_max);
    return true;
}

static void heightfield_mesh(const col_geom* g, col_mesh_sink* m)
{
    const col_heightfield* hf = g->hfield;
    const size_t nx = (size_t)hf->nx, ny = (size_t)hf->ny;
    for (size_t j = 0; j < ny; j++)
        for (size_t i = 0; i < nx; i++) m->point(m, (double)i * hf->dx, (double)j * hf->dy, hf->heights[j * nx + i]);
    for (size_t j = 0; j + 1 < ny; j++)
        for (size_t i = 0; i + 1 < nx; i++) {
            const size_t a = j * nx + i, b = a + 1, c = a + nx + 1, dd = a + nx;
            m->triangle(m, a, b, c);
            m->triangle(m, a, c, dd);
        }
}

const col_shape_class col_shape_class_heightfield = {
    .name = "heightfield", .article = "a height field", .fixed_only = true,
    .bounds = heightfield_bounds, .mesh = heightfield_mesh,
};

/* ---- mesh -------------------------------------------------------------------- */

static bool trimesh_bounds(col_geom* g)
{
    const col_trimesh* m = g->mesh;
    if (!m || m->vertex_count < 1 || !m->vertices) return false;
    const double* R = g->rot;
    double* lo = g->aabb_min;
    double* hi = g->aabb_max;
    for (int k = 0; k < 3; k++) {
        lo[k] = HUGE_VAL;
        hi[k] = -HUGE_VAL;
    }
    for (int32_t v = 0; v < m->vertex_count; v++) {
        const double* p = m->vertices + 3 * (size_t)v;
        for (int k = 0; k < 3; k++) {
            double w = g->pos[k] + R[3 * k] * p[0] + R[3 * k + 1] * p[1] + R[3 * k + 2] * p[2];
            if (w < lo[k]) lo[k] = w;
            if (w > hi[k]) hi[k] = w;
        }
    }
    return true;
}

static void trimesh_mesh(const col_geom* g, col_mesh_sink* m)
{
    const col_trimesh* t = g->mesh;
    for (int32_t i = 0; i < t->vertex_count; i++)
        m->point(m, t->vertices[3 * i], t->vertices[3 * i + 1], t->vertices[3 * i + 2]);
    for (int32_t i = 0; i < t->triangle_count; i++)
        m->triangle(m, (size_t)t->triangles[3 * i], (size_t)t->triangles[3 * i + 1], (size_t)t->triangles[3 * i + 2]);
}

const col_shape_class col_shape_class_mesh = {
    .name = "mesh", .article = "a mesh", .fixed_only = true,
    .bounds = trimesh_bounds, .mesh = trimesh_mesh,
};
