/* granular_bed — see granular_bed.h. */
#include "granular_bed.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define GBED_PI 3.14159265358979323846

gbed_config gbed_default_config(int spheres)
{
    gbed_config c;
    memset(&c, 0, sizeof c);
    c.spheres = spheres;
    c.radius = 0.02;
    c.density = 2500.0;
    c.friction = 0.4;
    c.spinning_friction = 2e-5;
    c.wall_height = 1.0;
    c.seed = 20240611u;
    c.method = DVI_METHOD_DVI;
    c.solver = "apgd";
    c.tolerance = 1e-6;
    c.dem_model = DVI_DEM_HERTZ;
    c.young_modulus = 1e8;
    c.poisson_ratio = 0.3;
    c.restitution = 0.2;
    return c;
}

gbed_config gbed_pile_dvi_config(int spheres)
{
    gbed_config c = gbed_default_config(spheres);
    c.max_iterations = 500;
    return c;
}

gbed_config gbed_pile_dem_config(int spheres)
{
    gbed_config c = gbed_default_config(spheres);
    c.method = DVI_METHOD_DEM;
    c.dem_model = DVI_DEM_HERTZ;
    c.young_modulus = 1e8;
    c.poisson_ratio = 0.3;
    c.restitution = 0.0;
    return c;
}

double gbed_side(const gbed_config* c)
{
    return c->box_side > 0 ? c->box_side : 2.0 * c->radius * round(cbrt((double)c->spheres));
}

double gbed_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static uint64_t gbed_splitmix64(uint64_t* s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15u);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    return z ^ (z >> 31);
}

/* Uniform in [−1, 1). */
static double gbed_uniform(uint64_t* s)
{
    return (double)(gbed_splitmix64(s) >> 11) * (2.0 / 9007199254740992.0) - 1.0;
}

static dvi_material gbed_material(const gbed_config* c)
{
    dvi_material m = dvi_default_shape_def().material;
    m.friction = c->friction;
    m.spinning_friction = c->spinning_friction;
    m.rolling_friction = c->rolling_friction;
    if (c->method == DVI_METHOD_DEM) {
        m.restitution = c->restitution;
        m.young_modulus = c->young_modulus;
        m.poisson_ratio = c->poisson_ratio;
    } else {
        m.restitution = 0.0;
    }
    return m;
}

void gbed_destroy(gbed* b)
{
    if (b->world) dvi_world_destroy(b->world);
    free(b->balls);
    memset(b, 0, sizeof *b);
}

int gbed_create(gbed* b, const gbed_config* c, const double* positions, char* err, size_t errlen)
{
    memset(b, 0, sizeof *b);
    b->cfg = *c;
    const double r = c->radius, tw = 0.05, Hw = c->wall_height, L = gbed_side(c);
    b->side = L;
    dvi_world_def wd = dvi_default_world_def();
    wd.solver = c->solver;
    if (c->tolerance > 0) wd.solver_settings.tolerance = c->tolerance;
    if (c->max_iterations > 0) wd.solver_settings.max_iterations = c->max_iterations;
    if (c->envelope > 0) wd.collision_envelope = c->envelope;
    wd.method = c->method;
    wd.dem.normal_model = c->dem_model;
    if (dvi_world_create(&wd, &b->world) != DVI_OK) {
        snprintf(err, errlen, "world_create failed (solver \"%s\"?)", c->solver);
        return -1;
    }
    dvi_world* w = b->world;
    b->balls = calloc((size_t)(c->spheres > 0 ? c->spheres : 1), sizeof *b->balls);
    if (!b->balls) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    const dvi_material mat = gbed_material(c);

    /* the box: ground plane and four walls on one fixed body */
    dvi_body_def gd = dvi_default_body_def();
    gd.type = DVI_BODY_FIXED;
    dvi_shape_id sid;
    if (dvi_body_create(w, &gd, &b->ground) != DVI_OK) goto fail;
    dvi_shape_def plane = dvi_default_shape_def();
    plane.type = DVI_SHAPE_PLANE;
    plane.material = mat;
    if (dvi_shape_create(w, b->ground, &plane, &sid) != DVI_OK) goto fail;
    for (int k = 0; k < 4; k++) {
        dvi_shape_def wall = dvi_default_shape_def();
        wall.type = DVI_SHAPE_BOX;
        wall.material = mat;
        int ax = k / 2;
        double sgn = k % 2 ? 1.0 : -1.0;
        wall.half_extents[ax] = tw;
        wall.half_extents[1 - ax] = L / 2 + 2 * tw;
        wall.half_extents[2] = Hw / 2 + tw;
        wall.offset_position[ax] = sgn * (L / 2 + tw);
        wall.offset_position[2] = Hw / 2 - tw;
        if (dvi_shape_create(w, b->ground, &wall, &sid) != DVI_OK) goto fail;
    }

    /* the spheres: given positions, or the loose lattice */
    const double s = 2.5 * r, jitter = 0.25 * r;
    int per_row = (int)floor((L - 2 * r - 2 * jitter) / s) + 1;
    if (per_row < 1) {
        snprintf(err, errlen, "box side %g m is too small for spheres of radius %g m", L, r);
        return -1;
    }
    const double x0 = -0.5 * (per_row - 1) * s;
    b->mass = c->density * 4.0 / 3.0 * GBED_PI * r * r * r;
    b->inertia = 0.4 * b->mass * r * r;
    uint64_t rng = c->seed;
    for (int i = 0; i < c->spheres; i++) {
        dvi_body_def bd = dvi_default_body_def();
        bd.mass = b->mass;
        bd.inertia[0] = bd.inertia[4] = bd.inertia[8] = b->inertia;
        if (positions) {
            memcpy(bd.position, positions + 3 * i, sizeof bd.position);
        } else {
            int layer = i / (per_row * per_row), j = i % (per_row * per_row);
            bd.position[0] = x0 + (j % per_row) * s + jitter * gbed_uniform(&rng);
            bd.position[1] = x0 + (j / per_row) * s + jitter * gbed_uniform(&rng);
            bd.position[2] = 1.5 * r + layer * s + jitter * gbed_uniform(&rng);
        }
        if (bd.position[2] + r > Hw) {
            snprintf(err, errlen, "%d spheres do not fit below the walls (%g m)", c->spheres, Hw);
            return -1;
        }
        dvi_shape_def sd = dvi_default_shape_def();
        sd.type = DVI_SHAPE_SPHERE;
        sd.radius = r;
        sd.material = mat;
        if (dvi_body_create(w, &bd, &b->balls[i]) != DVI_OK) goto fail;
        if (dvi_shape_create(w, b->balls[i], &sd, &sid) != DVI_OK) goto fail;
    }
    return 0;
fail:
    snprintf(err, errlen, "%s", dvi_world_last_error(w));
    return -1;
}

int gbed_add_heavy(gbed* b, double radius, double density, const double pos[3], char* err, size_t errlen)
{
    dvi_world* w = b->world;
    const double m = density * 4.0 / 3.0 * GBED_PI * radius * radius * radius;
    dvi_body_def bd = dvi_default_body_def();
    bd.mass = m;
    bd.inertia[0] = bd.inertia[4] = bd.inertia[8] = 0.4 * m * radius * radius;
    memcpy(bd.position, pos, sizeof bd.position);
    dvi_shape_def sd = dvi_default_shape_def();
    sd.type = DVI_SHAPE_SPHERE;
    sd.radius = radius;
    sd.material = gbed_material(&b->cfg);
    dvi_shape_id sid;
    if (dvi_body_create(w, &bd, &b->heavy) != DVI_OK || dvi_shape_create(w, b->heavy, &sd, &sid) != DVI_OK) {
        snprintf(err, errlen, "heavy sphere: %s", dvi_world_last_error(w));
        return -1;
    }
    double g = dvi_default_world_def().gravity[2];
    const double f[3] = {0.0, 0.0, -m * g}, zero[3] = {0.0, 0.0, 0.0};
    dvi_body_set_applied_force(w, b->heavy, f, zero);
    b->has_heavy = 1;
    b->heavy_radius = radius;
    b->heavy_mass = m;
    return 0;
}

void gbed_drop_heavy(gbed* b, double v)
{
    const double zero[3] = {0.0, 0.0, 0.0}, vel[3] = {0.0, 0.0, -v};
    dvi_body_set_applied_force(b->world, b->heavy, zero, zero);
    dvi_body_set_velocity(b->world, b->heavy, vel, zero);
}

static double body_ke(const dvi_world* w, dvi_body_id id, double m, double inertia)
{
    double v[3], om[3];
    dvi_body_get_velocity(w, id, v);
    dvi_body_get_angular_velocity(w, id, om);
    return 0.5 * m * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]) +
           0.5 * inertia * (om[0] * om[0] + om[1] * om[1] + om[2] * om[2]);
}

double gbed_kinetic_energy(const gbed* b)
{
    double ke = 0.0;
    for (int i = 0; i < b->cfg.spheres; i++) ke += body_ke(b->world, b->balls[i], b->mass, b->inertia);
    if (b->has_heavy)
        ke += body_ke(b->world, b->heavy, b->heavy_mass, 0.4 * b->heavy_mass * b->heavy_radius * b->heavy_radius);
    return ke;
}

static int cmp_double(const void* a, const void* b)
{
    double x = *(const double*)a, y = *(const double*)b;
    return x < y ? -1 : x > y ? 1 : 0;
}

double gbed_kinetic_energy_trimmed(const gbed* b, double trim, double* buf)
{
    const int n = b->cfg.spheres;
    for (int i = 0; i < n; i++) buf[i] = body_ke(b->world, b->balls[i], b->mass, b->inertia);
    qsort(buf, (size_t)n, sizeof *buf, cmp_double);
    const int keep = n - (int)ceil(trim * n);
    double ke = 0.0;
    for (int i = 0; i < keep; i++) ke += buf[i];
    return ke;
}

double gbed_potential_energy(const gbed* b)
{
    const double g = -dvi_default_world_def().gravity[2];
    double pe = 0.0, x[3];
    for (int i = 0; i < b->cfg.spheres; i++) {
        dvi_body_get_position(b->world, b->balls[i], x);
        pe += b->mass * g * x[2];
    }
    if (b->has_heavy) {
        dvi_body_get_position(b->world, b->heavy, x);
        pe += b->heavy_mass * g * x[2];
    }
    return pe;
}

void gbed_bed(const gbed* b, double* height, double* top)
{
    double sum = 0.0, zmax = -INFINITY;
    for (int i = 0; i < b->cfg.spheres; i++) {
        double x[3];
        dvi_body_get_position(b->world, b->balls[i], x);
        sum += x[2];
        if (x[2] > zmax) zmax = x[2];
    }
    *height = b->cfg.spheres > 0 ? 2.0 * sum / b->cfg.spheres : 0.0;
    *top = zmax + b->cfg.radius;
}

int gbed_escaped(const gbed* b)
{
    int n = 0;
    const double half = b->side / 2, r = b->cfg.radius;
    for (int i = 0; i < b->cfg.spheres; i++) {
        double x[3];
        dvi_body_get_position(b->world, b->balls[i], x);
        if (!(fabs(x[0]) <= half && fabs(x[1]) <= half && x[2] >= -r && x[2] <= b->cfg.wall_height)) n++;
    }
    return n;
}

double* gbed_positions(const gbed* b)
{
    double* p = malloc(sizeof(double) * 3 * (size_t)(b->cfg.spheres > 0 ? b->cfg.spheres : 1));
    if (!p) return NULL;
    for (int i = 0; i < b->cfg.spheres; i++) dvi_body_get_position(b->world, b->balls[i], p + 3 * i);
    return p;
}

void gbed_settle(gbed* b, double h, double seconds, double ratio, double hold, gbed_settle_result* res)
{
    memset(res, 0, sizeof *res);
    res->settle_time = -1.0;
    const int max_steps = (int)ceil(seconds / h - 1e-9);
    const int hold_steps = (int)ceil(hold / h - 1e-9);
    int below = 0;
    const double t0 = gbed_now();
    for (int k = 1; k <= max_steps; k++) {
        dvi_status st = dvi_world_step(b->world, h);
        if (st != DVI_OK && st != DVI_NOT_CONVERGED) {
            res->step_error = 1;
            break;
        }
        res->steps = k;
        dvi_step_stats ss = dvi_world_get_stats(b->world);
        double ke = gbed_kinetic_energy(b);
        if (ke > res->peak_ke) res->peak_ke = ke;
        double q = res->peak_ke > 0 ? ke / res->peak_ke : 0.0;
        if (st == DVI_NOT_CONVERGED) res->not_converged++;
        double pen = b->cfg.method == DVI_METHOD_DEM ? ss.max_overlap : ss.max_penetration;
        if (pen > res->penetration_max) res->penetration_max = pen;
        res->final_ke = ke;
        res->final_ratio = q;
        res->time = dvi_world_time(b->world);
        if (gbed_hold(&below, &res->settle_time, res->peak_ke > 0 && q < ratio && st == DVI_OK, res->time, hold_steps)) {
            res->settled = 1;
            break;
        }
    }
    res->wall_seconds = gbed_now() - t0;
    res->escaped = gbed_escaped(b);
    gbed_bed(b, &res->bed_height, &res->top);
}

bool gbed_hold(int* below, double* settle_time, bool quiet, double t, int hold_steps)
{
    if (quiet) {
        if (*below == 0) *settle_time = t;
        (*below)++;
    } else {
        *below = 0;
        *settle_time = -1.0;
    }
    return *below >= hold_steps;
}

int gbed_quench(gbed* b, double h, int n)
{
    const double zero[3] = {0.0, 0.0, 0.0};
    int failed = 0;
    for (int k = 0; k < n; k++) {
        dvi_status st = dvi_world_step(b->world, h);
        if (st != DVI_OK && st != DVI_NOT_CONVERGED) failed++;
        for (int i = 0; i < b->cfg.spheres; i++) dvi_body_set_velocity(b->world, b->balls[i], zero, zero);
    }
    return failed;
}
