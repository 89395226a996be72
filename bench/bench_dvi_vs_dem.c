/* dvicontact — DVI versus DEM: the largest acceptable step of each contact
 * formulation, and what it costs, as the material stiffness grows.
 *
 * Formulations: DVI (rigid complementarity contact) with APGD and with PGS,
 * and DEM (penalty contact, explicit step) with the Hooke and the Hertz
 * normal law. Scenes (public API only; docs/dvi-vs-dem.md has the results):
 *
 *   granular  N spheres (default 5000; r = 0.02 m, glass, μ = 0.4: the scene
 *             of granular_bed.h, in a box of side d·round(√(N/4)), a bed
 *             about four layers deep) are settled ONCE with DVI (APGD). Every
 *             run starts from that packed state: it rebuilds the world with
 *             its formulation and the spheres at the packed positions, at
 *             rest, relaxes the bed for 0.1 s under its own contact law, then
 *             releases a steel sphere (R = 0.04 m, 7800 kg/m³, 2.09 kg), 1 cm
 *             above the highest bed sphere under it, at 0.5 m/s downwards, and
 *             runs 0.15 s more. The packed state: DVI settling for 1 s (at
 *             most 100 iterations per step), then 100 steps with the
 *             velocities zeroed after each (a quench), so that it is static.
 *             Observables: the bed height 2·mean(z) before the drop, and the
 *             crater depth (that bed height minus the height of the steel
 *             sphere's lowest point at the end).
 *   rover     the rocker-bogie rover of studies/rover/rover_model.c (FullRover,
 *             830.9 kg, spherical joints at the differential links) rolls on
 *             flat rigid ground at 0.1 m/s (every body starts at that speed,
 *             the wheels at 0.4 rad/s, free to spin) for 1.5 s. Observable:
 *             the six wheel normal loads, averaged over the second half,
 *             against the reference static loads of the JSON; the value is the
 *             largest relative difference (%).
 *
 * Why the rover rolls instead of being driven by its speed motors, and why
 * the differential links are spherical: with six speed-locked wheels the
 * fore–aft contact forces are statically indeterminate (rigid contact) or
 * wind up in the tangential springs (DEM), and shift the loads by 3–21%
 * depending on the solver; with the source model's redundant revolutes the
 * DEM joint solve falls back to the iterative solver on many steps. Both are
 * measured in docs/dvi-vs-dem.md.
 *
 * Stiffness: E = 1e7, 1e8, 1e9 Pa (ν = 0.3). DVI contact is rigid: E enters
 * nowhere, so the DVI rows are computed once per scene and repeated for each
 * E. DEM: granular, every shape carries E; rover, the wheel–ground pair gets
 * the constants that docs/dem.md's formulas give for wheel and ground both of
 * modulus E (set on the ground's material, which then decides the pair).
 * Restitution 0 everywhere (DEM takes it as 0.01), as in the DVI pile.
 * DVI settings: granular, APGD or PGS to 1e-6 with at most 200 iterations per
 * step, the default 5 mm envelope, spinning friction 2e-5 m; rover, to 1e-8
 * with at most 100,000 (studies/rover/rover_statics.c explains why).
 *
 * Criterion ("acceptable"), checked on every step:
 *   1. the step succeeds (no error, no DEM guard trip, nothing non-finite),
 *      and no sphere leaves the box;
 *   2. energy not growing: the mechanical energy KE + Σ m g z of the dynamic
 *      bodies never exceeds its value at the start of the phase (the start of
 *      the run, and the moment of the drop) by more than 1% of the drop's
 *      kinetic energy (rover: of the initial kinetic energy); and, granular,
 *      the bed's kinetic energy does not grow while it relaxes: its peak in
 *      the last quarter of the relaxation is not above its peak in the first
 *      half (or below 1e-7 J per sphere); rover, the chassis speed at the end
 *      is within 5% of the start;
 *   3. overlap: the largest penetration (DVI) or overlap (DEM) of any contact,
 *      over the whole run, is below 1% of the particle radius (granular: the
 *      bed spheres' 0.02 m; rover: the wheel radius 0.25 m).
 * Ladder: h = 32 ms, 16 ms, ... halving; the first (largest) step that meets
 * 1–3 is reported. A DVI run stops at the first violation. A DEM step meeting
 * 1–2 but not 3 is kept as a fallback; when halving the step no longer
 * changes the largest overlap (by less than 10%), the overlap is the
 * material's own, not a discretisation error, and the search stops: the row
 * gives that largest stable step, marked not acceptable. The observable is
 * also computed at half the reported step (not with --quick), to show how
 * far it has converged.
 *
 * Timing: wall seconds of the whole run (world building excluded) divided by
 * its simulated seconds; one thread. */
#include "bench_cli.h"
#include "data_path.h"
#include "granular_bed.h"
#include "rover_model.h"
#include "study.h"

#include <dvi/output.h>
#include <dvi/world.h>

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- study settings ------------------------------------------------------- */

#define H0 0.032                /* top of the step ladder (s) */
#define MAX_RUNGS 13            /* down to H0 / 2^12 = 7.8e-6 s */
#define OVERLAP_LIMIT 0.01      /* of the particle radius */
#define ENERGY_TOL 0.01         /* of the reference kinetic energy */
#define OVERLAP_CONVERGED 0.10  /* relative change of the overlap under halving */
#define NU 0.3
#define BENCH_PI 3.14159265358979323846
#define RESTITUTION 0.0

/* granular */
#define SETTLE_DT 2e-3          /* DVI settling: the sphere_pile.h settings */
#define SETTLE_RATIO 1e-5       /* KE/peak */
#define SETTLE_HOLD 0.1         /* s */
#define HEAVY_RADIUS 0.04       /* m */
#define HEAVY_DENSITY 7800.0    /* kg/m³ (steel) */
#define HEAVY_GAP 0.01          /* m between the bed's top and the steel sphere */
#define V_DROP 0.5              /* m/s */
#define DVI_MAX_ITERATIONS 200  /* per step (the bed never reaches 1e-6: the cap sets the cost) */
#define REST_KE_PER_SPHERE 1e-7 /* J: 1.5 mm/s for a 0.084 kg sphere */
#define RATTLER_FRACTION 0.01   /* spheres left out of the relaxation check */
#define QUENCH_STEPS 100        /* after settling: steps with the velocities zeroed */

/* rover */
#define ROVER_VARIANT "FullRover"
#define ROVER_SPEED 0.1         /* m/s */
#define ROVER_FRICTION 0.4      /* the JSON's wheel friction */
#define ROVER_DVI_MAX_ITERATIONS 100000 /* studies/rover/rover_statics.c explains why */
#define ROVER_DVI_TOLERANCE 1e-8
#define ROVER_RAMP 0.5          /* s, --rover-motors */

enum { F_DVI_APGD, F_DVI_PGS, F_DEM_HOOKE, F_DEM_HERTZ, F_COUNT };
static const char* const FORM_NAMES[F_COUNT] = {"dvi-apgd", "dvi-pgs", "dem-hooke", "dem-hertz"};
enum { S_GRANULAR, S_ROVER, S_COUNT };
static const char* const SCENE_NAMES[S_COUNT] = {"granular", "rover"};
#define MAX_MODULI 8

static bool is_dem(int f) { return f == F_DEM_HOOKE || f == F_DEM_HERTZ; }

typedef struct options {
    int spheres;
    bool quick, json, verbose;
    bool scene_on[S_COUNT];
    bool form_on[F_COUNT];
    double moduli[MAX_MODULI];
    int modulus_count;
    double relax, drop, rover_t;    /* s */
    const char* csv;
    const char* svg;
    const char* json_out;
    const char* study_csv;          /* every run of every ladder as a dvi study table (tool/study.h) */
    const char* study_json;
    const char* rover_json;
    char rover_json_found[4096];
    int pile;                       /* > 0: the bed-height comparison mode */
    double h0;                      /* top of the ladder (s) */
    bool modulus_given;
    double restitution;             /* --pile: DEM restitution (< 0: the default) */
    double dem_dt;                  /* --pile: DEM step (0: the default) */
    bool rover_motors;              /* drive with the speed motors instead of rolling */
    bool rover_revolute;            /* the source model's redundant revolute differential links */
} options;

/* One run at one step. */
typedef struct run_result {
    double dt;
    bool numeric_ok;      /* criteria 1–3 */
    bool overlap_ok;      /* criterion 4 */
    double overlap;       /* m, largest over the run */
    double overlap_rel;   /* of the particle radius */
    double energy_growth; /* J, largest excess over the phase's start */
    double rest_ke;       /* J: granular, KE at the end of the relaxation; rover: final chassis speed (m/s) */
    int steps, not_converged;
    double sim_seconds, wall_seconds;
    double value;         /* the observable */
    double bed_height;    /* granular: before the drop (m) */
    double loads[ROVER_WHEELS];
    char reason[200];
} run_result;

typedef struct rung {
    double dt;
    bool numeric_ok, overlap_ok;
    double overlap_rel, wall_seconds, value;
    double overlap, sim_seconds;  /* m; s simulated */
    char reason[200];
} rung;

typedef struct row {
    int scene, form;
    double modulus;        /* Pa (DVI: the E the row is repeated for) */
    bool found;            /* some step met criteria 1–3 */
    bool ok;               /* ... and 4 */
    run_result r;
    double value_half;     /* the observable at dt/2 (NaN if that run failed) */
    rung rungs[MAX_RUNGS];
    int rung_count;
    char note[240];
} row;

/* ---- shared state ----------------------------------------------------------- */

typedef struct granular_base {
    gbed_config cfg;       /* the bed (DVI settling settings) */
    double* packed;        /* settled centres */
    double settle_wall, settle_time, settle_bed, settle_ratio;
    int settle_steps, settled;
    double heavy_pos[3];
} granular_base;

static double ke_ref_drop(void)
{
    const double m = HEAVY_DENSITY * 4.0 / 3.0 * BENCH_PI * HEAVY_RADIUS * HEAVY_RADIUS * HEAVY_RADIUS;
    return 0.5 * m * V_DROP * V_DROP;
}

/* ---- granular --------------------------------------------------------------- */

static gbed_config granular_config(int spheres)
{
    gbed_config c = gbed_default_config(spheres);
    c.box_side = 2.0 * c.radius * round(sqrt(spheres / 4.0));
    c.max_iterations = DVI_MAX_ITERATIONS;
    c.restitution = RESTITUTION;
    return c;
}

/* The settling run is only the source of the packed state (every run
 * relaxes it again under its own contact law): a smaller iteration budget. */
#define SETTLE_MAX_ITERATIONS 100

static int granular_settle(const options* o, granular_base* gb)
{
    gb->cfg = granular_config(o->spheres);
    gbed_config cs = gb->cfg;
    cs.max_iterations = SETTLE_MAX_ITERATIONS;
    gbed b;
    char err[256];
    if (gbed_create(&b, &cs, NULL, err, sizeof err) != 0) {
        fprintf(stderr, "bench_dvi_vs_dem: granular bed: %s\n", err);
        gbed_destroy(&b);
        return -1;
    }
    gbed_settle_result s;
    const double t_settle = gbed_now();
    gbed_settle(&b, SETTLE_DT, 1.0, SETTLE_RATIO, SETTLE_HOLD, &s);
    if (s.step_error || s.escaped) {
        fprintf(stderr, "bench_dvi_vs_dem: settling failed: %s (%d escaped)\n", dvi_world_last_error(b.world),
                s.escaped);
        gbed_destroy(&b);
        return -1;
    }
    /* what motion is left (a few rattlers) is removed by a quench: the packed state is static */
    if (gbed_quench(&b, SETTLE_DT, QUENCH_STEPS) != 0) {
        fprintf(stderr, "bench_dvi_vs_dem: quench failed: %s\n", dvi_world_last_error(b.world));
        gbed_destroy(&b);
        return -1;
    }
    gbed_bed(&b, &s.bed_height, &s.top);
    gb->packed = gbed_positions(&b);
    gb->settle_wall = gbed_now() - t_settle;
    gb->settle_ratio = s.final_ratio;
    gb->settle_time = s.time;
    gb->settle_steps = s.steps;
    gb->settled = s.settled;
    gb->settle_bed = s.bed_height;
    /* the steel sphere: centred, its lowest point HEAVY_GAP above the highest bed sphere below it */
    double top = s.bed_height;
    const double reach = HEAVY_RADIUS + gb->cfg.radius;
    for (int i = 0; gb->packed && i < gb->cfg.spheres; i++) {
        const double* x = gb->packed + 3 * i;
        if (x[0] * x[0] + x[1] * x[1] < reach * reach) top = fmax(top, x[2] + gb->cfg.radius);
    }
    gb->heavy_pos[0] = gb->heavy_pos[1] = 0.0;
    gb->heavy_pos[2] = top + HEAVY_GAP + HEAVY_RADIUS;
    gbed_destroy(&b);
    return gb->packed ? 0 : -1;
}

static double gbed_energy(const gbed* b) { return gbed_kinetic_energy(b) + gbed_potential_energy(b); }

/* Steps n times; updates r's overlap, energy excess over e_ref, steps and
 * not-converged count. false (with r->reason) on a failure of criteria 1–2. */
static bool granular_phase(gbed* b, double h, int n, double e_ref, run_result* r)
{
    const double tol = ENERGY_TOL * ke_ref_drop();
    for (int k = 0; k < n; k++) {
        dvi_status st = dvi_world_step(b->world, h);
        if (st != DVI_OK && st != DVI_NOT_CONVERGED) {
            snprintf(r->reason, sizeof r->reason, "step failed at t = %.4g s: %.140s", dvi_world_time(b->world),
                     dvi_world_last_error(b->world));
            return false;
        }
        r->steps++;
        if (st == DVI_NOT_CONVERGED) r->not_converged++;
        dvi_step_stats ss = dvi_world_get_stats(b->world);
        double ov = b->cfg.method == DVI_METHOD_DEM ? ss.max_overlap : ss.max_penetration;
        if (ov > r->overlap) r->overlap = ov;
        if (b->cfg.method == DVI_METHOD_DVI && ov >= OVERLAP_LIMIT * b->cfg.radius) {
            /* rigid contact: any penetration is a discretisation error, stop here */
            snprintf(r->reason, sizeof r->reason, "penetration %.2f%% of r at t = %.4g s", 100 * ov / b->cfg.radius,
                     dvi_world_time(b->world));
            return false;
        }
        double e = gbed_energy(b);
        if (!isfinite(e)) {
            snprintf(r->reason, sizeof r->reason, "non-finite energy at t = %.4g s", dvi_world_time(b->world));
            return false;
        }
        if (e - e_ref > r->energy_growth) r->energy_growth = e - e_ref;
        if (e - e_ref > tol) {
            snprintf(r->reason, sizeof r->reason, "energy grew by %.3g J (limit %.3g J) at t = %.4g s", e - e_ref, tol,
                     dvi_world_time(b->world));
            return false;
        }
    }
    return true;
}

static void granular_run(const options* o, const granular_base* gb, int form, double E, double h, run_result* r)
{
    memset(r, 0, sizeof *r);
    r->dt = h;
    r->value = NAN;
    r->bed_height = NAN;
    gbed_config c = gb->cfg;
    if (is_dem(form)) {
        c.method = DVI_METHOD_DEM;
        c.dem_model = form == F_DEM_HOOKE ? DVI_DEM_HOOKE : DVI_DEM_HERTZ;
        c.young_modulus = E;
        c.poisson_ratio = NU;
    } else {
        c.method = DVI_METHOD_DVI;
        c.solver = form == F_DVI_APGD ? "apgd" : "pgs";
    }
    gbed b;
    char err[256];
    if (gbed_create(&b, &c, gb->packed, err, sizeof err) != 0 ||
        gbed_add_heavy(&b, HEAVY_RADIUS, HEAVY_DENSITY, gb->heavy_pos, err, sizeof err) != 0) {
        snprintf(r->reason, sizeof r->reason, "build: %.180s", err);
        gbed_destroy(&b);
        return;
    }
    const int n_relax = (int)lround(o->relax / h) > 0 ? (int)lround(o->relax / h) : 1;
    const int n_drop = (int)lround(o->drop / h) > 0 ? (int)lround(o->drop / h) : 1;
    const double t0 = gbed_now();
    const double e_start = gbed_energy(&b);
    /* the relaxation in quarters: the bed's typical kinetic energy (without the 1% of spheres that hold the
     * most: a single rattler is not a shaking bed) must not peak higher in the last quarter than in the
     * first half (a bed shaken by the integrator keeps or gains energy; a relaxing one loses it) */
    double ke_first = 0.0, ke_last = 0.0;
    double* buf = malloc(sizeof(double) * (size_t)c.spheres);
    const int every = n_relax / 200 > 1 ? n_relax / 200 : 1;
    bool ok = buf != NULL;
    if (!ok) snprintf(r->reason, sizeof r->reason, "out of memory");
    for (int q = 0; q < 4 && ok; q++) {
        const int k0 = (n_relax * q) / 4, k1 = (n_relax * (q + 1)) / 4;
        for (int k = k0; k < k1 && ok; k++) {
            ok = granular_phase(&b, h, 1, e_start, r);
            if (q == 2 || (k % every != 0 && k != k1 - 1)) continue;
            const double ke = gbed_kinetic_energy_trimmed(&b, RATTLER_FRACTION, buf);
            if (q < 2 && ke > ke_first) ke_first = ke;
            if (q == 3 && ke > ke_last) ke_last = ke;
        }
    }
    free(buf);
    if (ok) {
        double top;
        gbed_bed(&b, &r->bed_height, &top);
        r->rest_ke = gbed_kinetic_energy(&b);
        gbed_drop_heavy(&b, V_DROP);
        ok = granular_phase(&b, h, n_drop, gbed_energy(&b), r);
    }
    r->wall_seconds = gbed_now() - t0;
    r->sim_seconds = r->steps * h;
    r->overlap_rel = r->overlap / c.radius;
    if (ok) {
        int esc = gbed_escaped(&b);
        double x[3];
        dvi_body_get_position(b.world, b.heavy, x);
        r->value = r->bed_height - (x[2] - HEAVY_RADIUS);
        const double rest_floor = REST_KE_PER_SPHERE * c.spheres;
        if (esc > 0) {
            snprintf(r->reason, sizeof r->reason, "%d spheres left the box", esc);
        } else if (!(ke_last <= fmax(ke_first, rest_floor))) {
            snprintf(r->reason, sizeof r->reason,
                     "bed kinetic energy grew while relaxing: peak %.3g J in the first half, %.3g J in the last "
                     "quarter (99%% of the spheres)",
                     ke_first, ke_last);
        } else {
            r->numeric_ok = true;
        }
    }
    r->overlap_ok = r->numeric_ok && r->overlap_rel < OVERLAP_LIMIT;
    if (r->numeric_ok && !r->overlap_ok)
        snprintf(r->reason, sizeof r->reason, "overlap %.2f%% of r", 100.0 * r->overlap_rel);
    gbed_destroy(&b);
}

/* ---- rover ------------------------------------------------------------------ */

/* Pair constants of a wheel (cylinder of radius rw, mass mw) on flat ground,
 * both of modulus E (docs/dem.md, "Contact constants"; cylinder–plane: R = d = rw). */
static void rover_constants(int form, double E, double rw, double mw, double* k_n, double* k_t)
{
    const double Es = E / (2.0 * (1.0 - NU * NU));            /* 1/E* = 2(1 − ν²)/E */
    const double Gs = E / (4.0 * (2.0 - NU) * (1.0 + NU));    /* 1/G* = 4(2 − ν)(1 + ν)/E */
    const double vc = dvi_default_dem_settings().characteristic_speed;
    if (form == F_DEM_HERTZ) {
        *k_n = 4.0 / 3.0 * Es * sqrt(rw * rw);
        *k_t = 8.0 * Gs * sqrt(rw * rw);
    } else {
        *k_n = pow(16.0 / 15.0 * Es * sqrt(rw), 0.8) * pow(mw * vc * vc, 0.2);
        *k_t = 4.0 * Gs / Es * *k_n;
    }
}

static double rover_energy(const dvi_world* w, const rover* rv)
{
    const double g = -dvi_default_world_def().gravity[2];
    double e = 0.0;
    for (int i = 0; i < rv->body_count; i++) {
        double v[3], x[3];
        dvi_body_get_velocity(w, rv->bodies[i].id, v);
        dvi_body_get_position(w, rv->bodies[i].id, x);
        e += rv->bodies[i].mass * (0.5 * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]) + g * x[2]);
    }
    return e;
}

static void rover_run(const options* o, int form, double E, double h, run_result* r)
{
    memset(r, 0, sizeof *r);
    r->dt = h;
    r->value = NAN;
    r->bed_height = NAN;
    char msg[256];
    double ref[ROVER_WHEELS];
    if (rover_reference_loads(o->rover_json, ROVER_VARIANT, ref, msg, sizeof msg) != DVI_OK) {
        snprintf(r->reason, sizeof r->reason, "%.180s", msg);
        return;
    }
    dvi_world_def wd = dvi_default_world_def();
    if (is_dem(form)) {
        wd.method = DVI_METHOD_DEM;
        wd.dem.normal_model = form == F_DEM_HOOKE ? DVI_DEM_HOOKE : DVI_DEM_HERTZ;
    } else {
        wd.solver = form == F_DVI_APGD ? "apgd" : "pgs";
        wd.solver_settings.max_iterations = ROVER_DVI_MAX_ITERATIONS;
        wd.solver_settings.tolerance = ROVER_DVI_TOLERANCE;
    }
    dvi_world* w = NULL;
    if (dvi_world_create(&wd, &w) != DVI_OK) {
        snprintf(r->reason, sizeof r->reason, "world_create failed");
        return;
    }
    /* the rover first (its wheels' radius and mass give the Hooke constants), then the ground */
    rover_options ro = rover_default_options();
    ro.on_ground = true; /* lowest wheel points on z = 0 */
    ro.wheel_friction = ROVER_FRICTION;
    ro.spherical_diff_links = !o->rover_revolute; /* no redundant joint rows (see the header) */
    if (o->rover_motors) {
        ro.wheel_speed = ROVER_SPEED / 0.25; /* the JSON's wheel radius */
        ro.wheel_ramp = ROVER_RAMP;
    }
    rover rv;
    if (rover_build(w, o->rover_json, ROVER_VARIANT, &ro, &rv, msg, sizeof msg) != DVI_OK) {
        snprintf(r->reason, sizeof r->reason, "build: %.180s", msg);
        dvi_world_destroy(w);
        return;
    }
    dvi_body_def gd = dvi_default_body_def();
    gd.type = DVI_BODY_FIXED;
    dvi_body_id ground;
    dvi_shape_def plane = dvi_default_shape_def();
    plane.type = DVI_SHAPE_PLANE;
    plane.material.friction = ROVER_FRICTION;
    plane.material.restitution = RESTITUTION;
    if (is_dem(form)) {
        double mw = 0.0;
        for (int i = 0; i < rv.body_count; i++)
            if (rv.bodies[i].id.index1 == rv.wheel[0].body.index1) mw = rv.bodies[i].mass;
        plane.material.young_modulus = E;
        plane.material.poisson_ratio = NU;
        rover_constants(form, E, rv.wheel_radius, mw, &plane.material.k_n, &plane.material.k_t);
    }
    dvi_shape_id sid;
    if (dvi_body_create(w, &gd, &ground) != DVI_OK || dvi_shape_create(w, ground, &plane, &sid) != DVI_OK) {
        snprintf(r->reason, sizeof r->reason, "build: %.180s", dvi_world_last_error(w));
        dvi_world_destroy(w);
        return;
    }
    /* rolling start: every body at ROVER_SPEED forward, the wheels spinning to roll without slip (with
     * --rover-motors: from rest, the speed motors ramp up) */
    const double v0[3] = {ROVER_SPEED, 0.0, 0.0}, zero[3] = {0.0, 0.0, 0.0};
    const double om[3] = {0.0, ROVER_SPEED / rv.wheel_radius, 0.0};
    for (int i = 0; i < rv.body_count && !o->rover_motors; i++) {
        bool wheel = false;
        for (int k = 0; k < ROVER_WHEELS; k++) wheel = wheel || rv.bodies[i].id.index1 == rv.wheel[k].body.index1;
        dvi_body_set_velocity(w, rv.bodies[i].id, v0, wheel ? om : zero);
    }
    const double ke0 = 0.5 * rv.total_mass * ROVER_SPEED * ROVER_SPEED, tol = ENERGY_TOL * ke0;
    /* the motors bring the (translational) kinetic energy ke0 */
    const double e0 = rover_energy(w, &rv) + (o->rover_motors ? ke0 : 0.0);
    const int n = (int)lround(o->rover_t / h) > 1 ? (int)lround(o->rover_t / h) : 2;
    double sum[ROVER_WHEELS] = {0};
    int nsum = 0;
    bool ok = true;
    const double t0 = gbed_now();
    for (int k = 1; k <= n && ok; k++) {
        dvi_status st = dvi_world_step(w, h);
        if (st != DVI_OK && st != DVI_NOT_CONVERGED) {
            snprintf(r->reason, sizeof r->reason, "step failed at t = %.4g s: %.140s", dvi_world_time(w),
                     dvi_world_last_error(w));
            ok = false;
            break;
        }
        r->steps++;
        if (st == DVI_NOT_CONVERGED) r->not_converged++;
        dvi_step_stats ss = dvi_world_get_stats(w);
        double ov = is_dem(form) ? ss.max_overlap : ss.max_penetration;
        if (ov > r->overlap) r->overlap = ov;
        if (!is_dem(form) && ov >= OVERLAP_LIMIT * rv.wheel_radius) {
            snprintf(r->reason, sizeof r->reason, "penetration %.2f%% of the wheel radius at t = %.4g s",
                     100 * ov / rv.wheel_radius, dvi_world_time(w));
            ok = false;
            break;
        }
        double e = rover_energy(w, &rv);
        if (!isfinite(e)) {
            snprintf(r->reason, sizeof r->reason, "non-finite energy at t = %.4g s", dvi_world_time(w));
            ok = false;
        } else {
            if (e - e0 > r->energy_growth) r->energy_growth = e - e0;
            if (e - e0 > tol) {
                snprintf(r->reason, sizeof r->reason, "energy grew by %.3g J (limit %.3g J) at t = %.4g s", e - e0,
                         tol, dvi_world_time(w));
                ok = false;
            }
        }
        if (2 * k > n) {
            double F[ROVER_WHEELS][3];
            rover_wheel_forces(w, &rv, F);
            for (int i = 0; i < ROVER_WHEELS; i++) sum[i] += F[i][2];
            nsum++;
        }
    }
    r->wall_seconds = gbed_now() - t0;
    r->sim_seconds = r->steps * h;
    r->overlap_rel = r->overlap / rv.wheel_radius;
    if (ok) {
        double v[3];
        dvi_body_get_velocity(w, rv.chassis, v);
        r->rest_ke = v[0];
        double worst = 0.0;
        for (int i = 0; i < ROVER_WHEELS; i++) {
            r->loads[i] = sum[i] / nsum;
            worst = fmax(worst, fabs(r->loads[i] - ref[i]) / ref[i]);
        }
        r->value = 100.0 * worst;
        if (!(fabs(v[0] - ROVER_SPEED) <= 0.05 * ROVER_SPEED))
            snprintf(r->reason, sizeof r->reason, "chassis speed %.4g m/s at the end (start %.4g m/s)", v[0],
                     ROVER_SPEED);
        else
            r->numeric_ok = true;
    }
    r->overlap_ok = r->numeric_ok && r->overlap_rel < OVERLAP_LIMIT;
    if (r->numeric_ok && !r->overlap_ok)
        snprintf(r->reason, sizeof r->reason, "overlap %.2f%% of the wheel radius", 100.0 * r->overlap_rel);
    dvi_world_destroy(w);
}

/* ---- the ladder --------------------------------------------------------------- */

static void run_one(const options* o, const granular_base* gb, int scene, int form, double E, double h,
                    run_result* r)
{
    if (scene == S_GRANULAR) granular_run(o, gb, form, E, h, r);
    else rover_run(o, form, E, h, r);
    if (o->verbose)
        fprintf(stderr,
                "  %-8s %-9s E %.0e h %.3e: %s%s, overlap %.3f%%, energy +%.3g J, rest %.3g, %d steps (%d not "
                "converged), wall %.2f s, value %.5g%s%s\n",
                SCENE_NAMES[scene], FORM_NAMES[form], E, h, r->numeric_ok ? "stable" : "UNSTABLE",
                r->numeric_ok && !r->overlap_ok ? " (overlap)" : "", 100 * r->overlap_rel, r->energy_growth,
                r->rest_ke, r->steps, r->not_converged, r->wall_seconds, r->value, r->reason[0] ? ": " : "",
                r->reason);
}

/* The ladder's runs as a study's (tool/study.h, the judging `dvi study` does):
 * stable = criteria 1-2, the overlap against OVERLAP_LIMIT of the radius, no
 * observable. Returns the rung of the largest acceptable step so far (-1: none). */
static int judge_rungs(const row* w)
{
    study_run runs[MAX_RUNGS];
    double dt[MAX_RUNGS];
    bool ok[MAX_RUNGS];
    memset(runs, 0, sizeof runs);
    for (int k = 0; k < w->rung_count; k++) {
        const rung* g = &w->rungs[k];
        snprintf(runs[k].method, sizeof runs[k].method, "%s", FORM_NAMES[w->form]);
        runs[k].dt = g->dt;
        runs[k].young_modulus = w->modulus;
        runs[k].status = g->numeric_ok ? STUDY_STABLE : STUDY_UNSTABLE;
        runs[k].penetration_fraction = g->overlap_rel;
        runs[k].observable = g->value;
    }
    const study_criteria c = {OVERLAP_LIMIT, false, 0.0, true};
    study_judge(&c, runs, w->rung_count);
    for (int k = 0; k < w->rung_count; k++) {
        dt[k] = runs[k].dt;
        ok[k] = runs[k].acceptable;
    }
    return study_largest_acceptable(dt, ok, w->rung_count);
}

static void ladder_search(const options* o, const granular_base* gb, int scene, int form, double E, row* out)
{
    memset(out, 0, sizeof *out);
    out->scene = scene;
    out->form = form;
    out->modulus = E;
    double prev_overlap = -1.0;
    for (int k = 0; k < MAX_RUNGS; k++) {
        const double h = o->h0 / (double)(1 << k);
        run_result r;
        run_one(o, gb, scene, form, E, h, &r);
        rung* g = &out->rungs[out->rung_count++];
        g->dt = h;
        g->numeric_ok = r.numeric_ok;
        g->overlap_ok = r.overlap_ok;
        g->overlap_rel = r.overlap_rel;
        g->wall_seconds = r.wall_seconds;
        g->value = r.value;
        g->overlap = r.overlap;
        g->sim_seconds = r.sim_seconds;
        snprintf(g->reason, sizeof g->reason, "%s", r.reason);
        if (judge_rungs(out) == k) { /* the ladder descends: the first acceptable step is the largest */
            out->r = r;
            out->found = out->ok = true;
            if (k == 0) snprintf(out->note, sizeof out->note, "the top of the ladder: the limit is larger");
            return;
        }
        if (r.numeric_ok) {
            if (!out->found) {
                out->r = r;
                out->found = true;
            }
            if (prev_overlap > 0 && fabs(r.overlap - prev_overlap) <= OVERLAP_CONVERGED * r.overlap) {
                snprintf(out->note, sizeof out->note,
                         "overlap %.2f%% of r at h = %.3g s and %.2f%% at h/2: converged in h, the material's own",
                         100 * out->r.overlap_rel, out->r.dt, 100 * r.overlap_rel);
                return;
            }
            prev_overlap = r.overlap;
        } else {
            prev_overlap = -1.0;
        }
    }
    const double h_min = o->h0 / (1 << (MAX_RUNGS - 1));
    if (!out->found) snprintf(out->note, sizeof out->note, "no step down to %.3g s met the criterion", h_min);
    else snprintf(out->note, sizeof out->note, "overlap above 1%% of r down to %.3g s", h_min);
}

/* The search, then the observable at half the chosen step (from the ladder if it went there). */
static void ladder(const options* o, const granular_base* gb, int scene, int form, double E, row* out)
{
    ladder_search(o, gb, scene, form, E, out);
    out->value_half = NAN;
    if (!out->found || o->quick) return; /* --quick: no check run */
    for (int k = 0; k < out->rung_count; k++)
        if (fabs(out->rungs[k].dt - 0.5 * out->r.dt) <= 1e-12 * out->r.dt) {
            out->value_half = out->rungs[k].value;
            return;
        }
    run_result r;
    run_one(o, gb, scene, form, E, 0.5 * out->r.dt, &r);
    if (r.numeric_ok) out->value_half = r.value;
}

/* ---- output --------------------------------------------------------------------- */

static const char* observable_name(int scene)
{
    return scene == S_GRANULAR ? "crater_depth_m" : "wheel_load_max_diff_percent";
}

static void print_json_row(FILE* f, const row* w)
{
    const run_result* r = &w->r;
    fprintf(f, "{\"scene\":\"%s\",\"formulation\":\"%s\",\"young_modulus\":", SCENE_NAMES[w->scene], FORM_NAMES[w->form]);
    cli_json_number(f, w->modulus);
    fprintf(f, ",\"dt\":");
    cli_json_number(f, w->found ? r->dt : NAN);
    fprintf(f, ",\"stable\":%s,\"wall_s_per_sim_s\":", w->ok ? "true" : "false");
    cli_json_number(f, w->found && r->sim_seconds > 0 ? r->wall_seconds / r->sim_seconds : NAN);
    fprintf(f, ",\"observable\":\"%s\",\"value\":", observable_name(w->scene));
    cli_json_number(f, w->found ? r->value : NAN);
    fprintf(f, ",\"value_at_half_dt\":");
    cli_json_number(f, w->found ? w->value_half : NAN);
    fprintf(f, ",\"numerically_stable\":%s,\"steps_per_sim_s\":", w->found ? "true" : "false");
    cli_json_number(f, w->found ? 1.0 / r->dt : NAN);
    fprintf(f, ",\"max_overlap_over_radius\":");
    cli_json_number(f, w->found ? r->overlap_rel : NAN);
    fprintf(f, ",\"energy_growth_j\":");
    cli_json_number(f, w->found ? r->energy_growth : NAN);
    fprintf(f, ",\"not_converged_steps\":%d", w->found ? r->not_converged : 0);
    if (w->scene == S_GRANULAR) {
        fprintf(f, ",\"bed_height_m\":");
        cli_json_number(f, w->found ? r->bed_height : NAN);
    } else {
        fprintf(f, ",\"wheel_loads_n\":[");
        for (int i = 0; i < ROVER_WHEELS; i++) {
            if (i) fprintf(f, ",");
            cli_json_number(f, w->found ? r->loads[i] : NAN);
        }
        fprintf(f, "]");
    }
    fprintf(f, ",\"note\":\"%s\",\"ladder\":[", w->note);
    for (int k = 0; k < w->rung_count; k++) {
        const rung* g = &w->rungs[k];
        fprintf(f, "%s{\"dt\":%.6e,\"stable\":%s,\"numerically_stable\":%s,\"max_overlap_over_radius\":", k ? "," : "",
               g->dt, g->numeric_ok && g->overlap_ok ? "true" : "false", g->numeric_ok ? "true" : "false");
        cli_json_number(f, g->overlap_rel);
        fprintf(f, ",\"wall_s\":%.3e,\"reason\":\"", g->wall_seconds);
        for (const char* p = g->reason; *p; p++) {
            if (*p == '"' || *p == '\\') fputc('\\', f);
            fputc(*p >= 32 ? *p : ' ', f);
        }
        fprintf(f, "\"}");
    }
    fprintf(f, "]}\n");
    fflush(f);
}

static void print_table(const row* rows, int n)
{
    printf("\n%-8s  %-9s  %7s  %9s  %3s  %8s  %12s  %9s  %-11s  %9s  %9s  %9s\n", "scene", "formul.", "E (Pa)",
           "dt (s)", "ok", "steps/s", "wall s/sim s", "overlap/r", "observable", "value", "at dt/2", "bed H (m)");
    printf("--------  ---------  -------  ---------  ---  --------  ------------  ---------  -----------  ---------  "
           "---------  ---------\n");
    for (int i = 0; i < n; i++) {
        const row* w = &rows[i];
        const run_result* r = &w->r;
        const char* obs = w->scene == S_GRANULAR ? "crater (m)" : "loads max %";
        if (!w->found) {
            printf("%-8s  %-9s  %7.0e  %9s  %3s  %8s  %12s  %9s  %-11s  %9s  %9s  %9s\n", SCENE_NAMES[w->scene],
                   FORM_NAMES[w->form], w->modulus, "-", "no", "-", "-", "-", obs, "-", "-", "-");
            continue;
        }
        char bed[32] = "-";
        if (w->scene == S_GRANULAR) snprintf(bed, sizeof bed, "%.4f", r->bed_height);
        printf("%-8s  %-9s  %7.0e  %9.3e  %3s  %8.0f  %12.3f  %8.3f%%  %-11s  %9.4f  %9.4f  %9s\n",
               SCENE_NAMES[w->scene], FORM_NAMES[w->form], w->modulus, r->dt, w->ok ? "yes" : "no", 1.0 / r->dt,
               r->wall_seconds / r->sim_seconds, 100 * r->overlap_rel, obs, r->value, w->value_half, bed);
    }
    printf("\nladders (step: s = acceptable, o = stable but overlap >= 1%% of r, x = unstable):\n");
    for (int i = 0; i < n; i++) {
        const row* w = &rows[i];
        if (i > 0 && rows[i - 1].scene == w->scene && rows[i - 1].form == w->form && !is_dem(w->form)) continue;
        printf("  %-8s %-9s", SCENE_NAMES[w->scene], FORM_NAMES[w->form]);
        if (is_dem(w->form)) printf(" E %.0e", w->modulus);
        else printf("        ");
        printf(":");
        for (int k = 0; k < w->rung_count; k++) {
            const rung* g = &w->rungs[k];
            printf(" %.2g%s", g->dt, g->numeric_ok ? (g->overlap_ok ? "s" : "o") : "x");
        }
        if (w->note[0]) printf("  (%s)", w->note);
        printf("\n");
        for (int k = 0; k < w->rung_count; k++)
            if (!w->rungs[k].numeric_ok) {
                printf("      largest unstable step %.3g s: %s\n", w->rungs[k].dt, w->rungs[k].reason);
                break;
            }
    }
}

static int write_csv(const char* path, const row* rows, int n)
{
    FILE* f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "bench_dvi_vs_dem: %s: %s\n", path, strerror(errno));
        return -1;
    }
    fprintf(f, "scene,formulation,young_modulus [Pa],dt [s],acceptable,steps_per_sim_s,wall_s_per_sim_s,"
               "max_overlap_over_radius,observable,value,value_at_half_dt,bed_height [m]\n");
    for (int i = 0; i < n; i++) {
        const row* w = &rows[i];
        const run_result* r = &w->r;
        if (!w->found) {
            fprintf(f, "%s,%s,%.3g,nan,0,nan,nan,nan,%s,nan,nan,nan\n", SCENE_NAMES[w->scene], FORM_NAMES[w->form],
                    w->modulus, observable_name(w->scene));
            continue;
        }
        fprintf(f, "%s,%s,%.3g,%.6g,%d,%.6g,%.6g,%.6g,%s,%.6g,%.6g,%.6g\n", SCENE_NAMES[w->scene],
                FORM_NAMES[w->form], w->modulus, r->dt, w->ok ? 1 : 0, 1.0 / r->dt, r->wall_seconds / r->sim_seconds,
                r->overlap_rel, observable_name(w->scene), r->value, w->value_half, r->bed_height);
    }
    int rc = fclose(f);
    return rc == 0 ? 0 : -1;
}

/* Every run of every ladder as the rows of a `dvi study` table (study.h):
 * method = scene/formulation, the bench's own verdicts (criteria 1-3; no
 * observable tolerance), the observable and the cost. DVI ladders repeated
 * for each E are written once. */
static int write_study_tables(const options* o, const row* rows, int n)
{
    int cap = n * MAX_RUNGS + 1, m = 0;
    study_run* runs = calloc((size_t)cap, sizeof *runs);
    if (!runs) return -1;
    for (int i = 0; i < n; i++) {
        const row* w = &rows[i];
        if (!is_dem(w->form) && i > 0 && rows[i - 1].scene == w->scene && rows[i - 1].form == w->form) continue;
        for (int k = 0; k < w->rung_count; k++) {
            const rung* g = &w->rungs[k];
            study_run* r = &runs[m++];
            snprintf(r->method, sizeof r->method, "%s/%s", SCENE_NAMES[w->scene], FORM_NAMES[w->form]);
            r->dt = g->dt;
            r->young_modulus = is_dem(w->form) ? w->modulus : NAN;
            r->status = g->numeric_ok ? STUDY_STABLE : STUDY_UNSTABLE;
            snprintf(r->reason, sizeof r->reason, "%s", g->reason);
            r->max_penetration = g->overlap;
            r->penetration_fraction = g->overlap_rel;
            r->observable = g->numeric_ok ? g->value : NAN;
            r->wall_seconds = g->wall_seconds;
            r->cpu_seconds = NAN;
            r->simulated_seconds = g->sim_seconds;
        }
    }
    const study_criteria c = {OVERLAP_LIMIT, false, 0.0, true};
    study_judge(&c, runs, m);
    study_table_info info = {"(built in: bench_dvi_vs_dem)", "bench_dvi_vs_dem", NULL, &c, NAN, NULL, 0};
    char msg[512];
    int rc = 0;
    if (o->study_csv && study_write_csv(o->study_csv, runs, m, msg, sizeof msg) != 0) rc = -1;
    if (rc == 0 && o->study_json && study_write_json(o->study_json, &info, runs, m, msg, sizeof msg) != 0) rc = -1;
    if (rc != 0) fprintf(stderr, "bench_dvi_vs_dem: %s\n", msg);
    free(runs);
    return rc;
}

/* A log–log picture (dvi_svg_xy_plot, as `dvi study` draws): one column per
 * scene, rows dt and wall s/sim s, against E, one series per formulation.
 * Filled markers: acceptable; hollow: stable but overlap >= 1% of r. */
static int write_svg(const char* path, const row* rows, int n, const options* o)
{
    (void)o;
    double x[S_COUNT][2][F_COUNT][MAX_MODULI], y[S_COUNT][2][F_COUNT][MAX_MODULI];
    bool filled[S_COUNT][F_COUNT][MAX_MODULI];
    int count[S_COUNT][F_COUNT] = {{0}};
    for (int i = 0; i < n; i++) {
        const row* w = &rows[i];
        if (!w->found) continue;
        int k = count[w->scene][w->form]++;
        if (k >= MAX_MODULI) continue;
        for (int q = 0; q < 2; q++) {
            x[w->scene][q][w->form][k] = w->modulus;
            y[w->scene][q][w->form][k] = q == 0 ? w->r.dt : w->r.wall_seconds / w->r.sim_seconds;
        }
        filled[w->scene][w->form][k] = w->ok;
    }
    dvi_svg_xy_series ser[S_COUNT][2][F_COUNT];
    dvi_svg_xy_panel panels[2 * S_COUNT];
    char titles[2 * S_COUNT][96];
    int np = 0;
    for (int q = 0; q < 2; q++)
        for (int sc = 0; sc < S_COUNT; sc++) {
            if (!o->scene_on[sc]) continue;
            int ns = 0;
            for (int f = 0; f < F_COUNT; f++) {
                if (!o->form_on[f]) continue;
                ser[sc][q][ns++] = (dvi_svg_xy_series){FORM_NAMES[f], count[sc][f] < MAX_MODULI ? count[sc][f] : MAX_MODULI,
                                                       x[sc][q][f], y[sc][q][f], filled[sc][f], true};
            }
            dvi_svg_xy_panel* p = &panels[np];
            *p = dvi_svg_xy_default_panel();
            snprintf(titles[np], sizeof titles[np], "%s: %s", SCENE_NAMES[sc],
                     q == 0 ? "largest acceptable step dt (s)" : "wall seconds per simulated second");
            p->title = titles[np];
            p->x_label = "E (Pa)";
            p->y_label = q == 0 ? "dt (s)" : "wall s / simulated s";
            p->series_count = ns;
            p->series = ser[sc][q];
            p->legend_note = "filled: acceptable";
            np++;
        }
    char msg[512];
    int cols = np / 2 > 0 ? np / 2 : 1;
    if (dvi_svg_xy_plot(path, "DVI vs DEM: largest acceptable step and cost against Young's modulus",
                        "Hollow: stable, but the overlap is above 1% of r at every step. DVI is rigid: its rows do "
                        "not depend on E.",
                        np, panels, cols, msg, sizeof msg) != 0) {
        fprintf(stderr, "bench_dvi_vs_dem: %s\n", msg);
        return -1;
    }
    return 0;
}

/* ---- the bed-height comparison (--pile N) ----------------------------------------- */

static int pile_mode(const options* o)
{
    const int n = o->pile;
    gbed_config cd = gbed_pile_dvi_config(n), ce = gbed_pile_dem_config(n);
    /* DEM variants (the doc's step-sensitivity table): --formulations dem-hooke, --moduli, --restitution,
     * --dem-dt; without dvi-apgd in --formulations, only the DEM run */
    if (o->form_on[F_DEM_HOOKE] && !o->form_on[F_DEM_HERTZ]) ce.dem_model = DVI_DEM_HOOKE;
    if (o->modulus_given) ce.young_modulus = o->moduli[0];
    if (o->restitution >= 0) ce.restitution = o->restitution;
    const gbed_config* cfg[2] = {&cd, &ce};
    const double dt[2] = {GBED_PILE_DVI_DT, o->dem_dt > 0 ? o->dem_dt : GBED_PILE_DEM_DT};
    const char* names[2] = {"dvi-apgd", ce.dem_model == DVI_DEM_HOOKE ? "dem-hooke" : "dem-hertz"};
    const bool run[2] = {o->form_on[F_DVI_APGD], true};
    double height[2] = {NAN, NAN};
    int bad = 0;
    if (!o->json)
        printf("Bed height of %d spheres settled with DVI and with DEM (box %.3f m; settled: KE/peak < %g for %g s, "
               "or %g s)\nDEM: E = %.3g Pa, restitution %g%s\n\n%-9s  %9s  %6s  %8s  %8s  %7s  %9s  %10s  %8s\n",
               n, 2 * cd.radius * round(cbrt((double)n)), GBED_PILE_RATIO, GBED_PILE_HOLD, GBED_PILE_SECONDS,
               ce.young_modulus, ce.restitution, ce.restitution < 0.01 ? " (taken as 0.01)" : "", "formul.",
               "dt (s)", "steps", "t (s)", "settled", "KE/peak", "bed H (m)", "overlap/r", "wall (s)");
    for (int k = 0; k < 2; k++) {
        if (!run[k]) continue;
        gbed b;
        char err[256];
        if (gbed_create(&b, cfg[k], NULL, err, sizeof err) != 0) {
            fprintf(stderr, "bench_dvi_vs_dem: %s\n", err);
            gbed_destroy(&b);
            return 1;
        }
        gbed_settle_result s;
        gbed_settle(&b, dt[k], GBED_PILE_SECONDS, GBED_PILE_RATIO, GBED_PILE_HOLD, &s);
        height[k] = s.bed_height;
        if (s.step_error) fprintf(stderr, "bench_dvi_vs_dem: %s: %s\n", names[k], dvi_world_last_error(b.world));
        bad += s.step_error || s.escaped;
        if (o->json) {
            printf("{\"scene\":\"pile\",\"spheres\":%d,\"formulation\":\"%s\",\"young_modulus\":", n, names[k]);
            cli_json_number(stdout, k ? cfg[k]->young_modulus : NAN);
            printf(",\"dt\":%.6e,\"stable\":%s,\"wall_s_per_sim_s\":%.6e,\"observable\":\"bed_height_m\","
                   "\"value\":%.6e,\"restitution\":%g,\"settled\":%s,\"time_s\":%.6e,\"ke_over_peak\":%.3e,"
                   "\"max_overlap_over_radius\":%.6e,\"escaped\":%d}\n",
                   dt[k], s.step_error || s.escaped ? "false" : "true", s.wall_seconds / s.time, s.bed_height,
                   k ? cfg[k]->restitution : 0.0, s.settled ? "true" : "false", s.time, s.final_ratio,
                   s.penetration_max / cfg[k]->radius, s.escaped);
        } else {
            printf("%-9s  %9.2e  %6d  %8.3f  %8s  %7.1e  %9.4f  %9.3f%%  %8.1f\n", names[k], dt[k], s.steps, s.time,
                   s.settled ? "yes" : "no", s.final_ratio, s.bed_height, 100 * s.penetration_max / cfg[k]->radius,
                   s.wall_seconds);
        }
        fflush(stdout);
        gbed_destroy(&b);
    }
    if (!run[0]) return bad ? 1 : 0;
    const double diff = (height[1] - height[0]) / height[0];
    if (!o->json) printf("\nDEM − DVI: %+.2f%% of the DVI bed height (limit ±3%%)\n", 100 * diff);
    return bad || !(fabs(diff) < 0.03) ? 1 : 0;
}

/* ---- options ---------------------------------------------------------------------- */

static void usage(FILE* f, const char* prog)
{
    fprintf(f,
            "usage: %s [options]\n"
            "DVI (APGD, PGS) against DEM (Hooke, Hertz): for each scene and Young's modulus, the largest step\n"
            "of a halving ladder (%g s down) that is acceptable, its cost and its physical observable.\n"
            "\n"
            "  --spheres N        spheres in the granular bed (default 5000)\n"
            "  --quick            small and short (the test suite): 200 spheres and E = 1e8 Pa only (unless\n"
            "                     --spheres or --moduli is given), rover runs of 0.3 s, no half-step runs\n"
            "  --json             one JSON object per table row on stdout\n"
            "  --scenes LIST      granular,rover (default both)\n"
            "  --formulations L   dvi-apgd,dvi-pgs,dem-hooke,dem-hertz (default all)\n"
            "  --moduli LIST      Young's moduli in Pa (default 1e7,1e8,1e9)\n"
            "  --json-out FILE    also write the JSON rows to FILE\n"
            "  --csv FILE         also write the table as CSV\n"
            "  --svg FILE         also write the log-log plot (step and cost against E)\n"
            "  --study-csv FILE   every run of every ladder as a `dvi study` table (docs/study.md), CSV\n"
            "  --study-json FILE  ... and JSON, with the largest acceptable step of each ladder\n"
            "  --rover-json PATH  the rover reference (default: rover/rocker_bogie_rover.json of the data\n"
            "                     directory: the build tree's data/, an installed share/dvicontact/, or\n"
            "                     $DVICONTACT_DATA)\n"
            "  --h0 H             top of the step ladder (default %g s)\n"
            "  --rover-motors     rover variant: from rest, driven by its six wheel speed motors (0.5 s ramp)\n"
            "  --rover-revolute   rover variant: the source model's redundant revolute differential links\n"
            "  --verbose          every ladder run on stderr\n"
            "  --pile N           instead: settle N spheres with DVI and with DEM and compare the bed heights\n"
            "                     (exit 1 unless within 3%%); --pile-1000 is --pile 1000. With --pile:\n"
            "                     --formulations dem-hooke (else Hertz; without dvi-apgd, DEM only),\n"
            "                     --moduli E (default 1e8), --restitution e (default 0), --dem-dt H (default %g)\n"
            "\n"
            "Acceptable: every step succeeds and no sphere leaves the box; the mechanical energy never exceeds\n"
            "its start by more than %g%% of the drop's (rover: the initial) kinetic energy, the bed's kinetic\n"
            "energy does not grow while it relaxes (rover: the speed is kept); the largest overlap or\n"
            "penetration stays below %g%% of the particle radius. DVI is rigid: its rows are the same for\n"
            "every E.\n",
            prog, H0, H0, GBED_PILE_DEM_DT, 100 * ENERGY_TOL, 100 * OVERLAP_LIMIT);
}

static bool parse_list(const char* s, const char* const* names, int count, bool* on)
{
    for (int i = 0; i < count; i++) on[i] = false;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", s);
    for (char* tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        int k = -1;
        for (int i = 0; i < count; i++)
            if (strcmp(tok, names[i]) == 0) k = i;
        if (k < 0) return false;
        on[k] = true;
    }
    return true;
}

static int parse_options(int argc, char** argv, options* o)
{
    memset(o, 0, sizeof *o);
    o->spheres = 5000;
    for (int i = 0; i < S_COUNT; i++) o->scene_on[i] = true;
    for (int i = 0; i < F_COUNT; i++) o->form_on[i] = true;
    o->moduli[0] = 1e7, o->moduli[1] = 1e8, o->moduli[2] = 1e9;
    o->modulus_count = 3;
    o->rover_json = NULL;
    o->h0 = H0;
    o->restitution = -1.0;
    bool spheres_given = false, moduli_given = false;
    for (int i = 1; i < argc; i++) {
        const char* a = argv[i];
        const char* v = i + 1 < argc ? argv[i + 1] : NULL;
        int64_t n = 0;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout, argv[0]);
            return 1;
        } else if (!strcmp(a, "--quick")) {
            o->quick = true;
        } else if (!strcmp(a, "--json")) {
            o->json = true;
        } else if (!strcmp(a, "--verbose")) {
            o->verbose = true;
        } else if (!strcmp(a, "--rover-motors")) {
            o->rover_motors = true;
        } else if (!strcmp(a, "--rover-revolute")) {
            o->rover_revolute = true;
        } else if (!strcmp(a, "--pile-1000")) {
            o->pile = 1000;
        } else if (v && !strcmp(a, "--pile")) {
            if (!cli_int(argv[0], a, v, 8, INT_MAX, "an integer >= 8", &n)) return 2;
            o->pile = (int)n, i++;
        } else if (v && !strcmp(a, "--spheres")) {
            if (!cli_int(argv[0], a, v, 8, INT_MAX, "an integer >= 8", &n)) return 2;
            o->spheres = (int)n, i++;
            spheres_given = true;
        } else if (v && !strcmp(a, "--scenes")) {
            if (!parse_list(v, SCENE_NAMES, S_COUNT, o->scene_on)) goto bad;
            i++;
        } else if (v && !strcmp(a, "--formulations")) {
            if (!parse_list(v, FORM_NAMES, F_COUNT, o->form_on)) goto bad;
            i++;
        } else if (v && !strcmp(a, "--moduli")) {
            char buf[256];
            snprintf(buf, sizeof buf, "%s", v);
            o->modulus_count = 0;
            for (char* tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
                char* end;
                double E = strtod(tok, &end);
                if (*end || !(E > 0) || o->modulus_count == MAX_MODULI) goto bad;
                o->moduli[o->modulus_count++] = E;
            }
            if (o->modulus_count == 0) goto bad;
            moduli_given = true;
            o->modulus_given = true;
            i++;
        } else if (v && !strcmp(a, "--h0")) {
            if (!cli_double(argv[0], a, v, 0.0, true, INFINITY, "a number > 0", &o->h0)) return 2;
            i++;
        } else if (v && !strcmp(a, "--restitution")) {
            if (!cli_double(argv[0], a, v, 0.0, false, 1.0, "a number from 0 to 1", &o->restitution)) return 2;
            i++;
        } else if (v && !strcmp(a, "--dem-dt")) {
            if (!cli_double(argv[0], a, v, 0.0, true, INFINITY, "a number > 0", &o->dem_dt)) return 2;
            i++;
        } else if (v && !strcmp(a, "--json-out")) {
            o->json_out = v, i++;
        } else if (v && !strcmp(a, "--study-csv")) {
            o->study_csv = v, i++;
        } else if (v && !strcmp(a, "--study-json")) {
            o->study_json = v, i++;
        } else if (v && !strcmp(a, "--csv")) {
            o->csv = v, i++;
        } else if (v && !strcmp(a, "--svg")) {
            o->svg = v, i++;
        } else if (v && !strcmp(a, "--rover-json")) {
            o->rover_json = v, i++;
        } else {
            goto bad;
        }
        continue;
    bad:
        fprintf(stderr, "%s: bad or incomplete option '%s' (see --help)\n", argv[0], a);
        return 2;
    }
    if (o->quick && !spheres_given) o->spheres = 200;
    if (o->quick && !moduli_given) {
        o->moduli[0] = 1e8;
        o->modulus_count = 1;
    }
    o->relax = 0.1;
    o->drop = 0.15;
    o->rover_t = o->quick ? 0.3 : 1.5;
    if (o->scene_on[S_ROVER] && o->pile == 0) {
        o->rover_json = data_path_or(o->rover_json, "rover/rocker_bogie_rover.json", o->rover_json_found,
                                     sizeof o->rover_json_found, "bench_dvi_vs_dem");
        if (!o->rover_json) return 2;
    }
    return 0;
}

int main(int argc, char** argv)
{
    options o;
    int rc = parse_options(argc, argv, &o);
    if (rc) return rc == 1 ? 0 : rc;
    if (o.pile > 0) return pile_mode(&o);

    const double t_start = gbed_now();
    granular_base gb;
    memset(&gb, 0, sizeof gb);
    if (o.scene_on[S_GRANULAR]) {
        if (granular_settle(&o, &gb) != 0) return 1;
        if (!o.json)
            printf("granular: %d spheres, box %.3f m, settled once with DVI (APGD, h = %g s, at most %d iterations): "
                   "%s at t = %.3f s (KE/peak %.1e), then %d quench steps; %.1f s wall; bed height %.4f m\n",
                   o.spheres, gb.cfg.box_side, SETTLE_DT, SETTLE_MAX_ITERATIONS,
                   gb.settled ? "at rest" : "time limit", gb.settle_time, gb.settle_ratio, QUENCH_STEPS,
                   gb.settle_wall, gb.settle_bed);
    }
    if (!o.json) {
        if (o.scene_on[S_GRANULAR])
            printf("granular runs: rebuild at the packed state, relax %.3g s, then a %.2f kg steel sphere (R = %g m) "
                   "released at %g m/s, %.3g s more\n",
                   o.relax, HEAVY_DENSITY * 4.0 / 3.0 * BENCH_PI * pow(HEAVY_RADIUS, 3), HEAVY_RADIUS, V_DROP, o.drop);
        if (o.scene_on[S_ROVER])
            printf("rover: %s %s at %g m/s on flat ground for %.3g s, %s differential links; loads averaged over "
                   "the second half\n",
                   ROVER_VARIANT, o.rover_motors ? "driven by its speed motors (0.5 s ramp)" : "rolling", ROVER_SPEED,
                   o.rover_t, o.rover_revolute ? "revolute (redundant)" : "spherical");
        printf("criterion: steps succeed, energy not growing (+%g%% of the reference kinetic energy; the relaxing "
               "bed's kinetic energy not growing; the rover's speed kept), overlap < %g%% of the particle radius\n",
               100 * ENERGY_TOL, 100 * OVERLAP_LIMIT);
        printf("DVI is rigid: its rows do not depend on E (computed once, repeated)\n");
        fflush(stdout);
    }
    FILE* json_file = NULL;
    if (o.json_out && !(json_file = fopen(o.json_out, "w"))) {
        fprintf(stderr, "bench_dvi_vs_dem: %s: %s\n", o.json_out, strerror(errno));
        return 1;
    }
    row rows[S_COUNT * F_COUNT * MAX_MODULI];
    int n = 0;
    int failures = 0;
    for (int s = 0; s < S_COUNT; s++) {
        if (!o.scene_on[s]) continue;
        for (int f = 0; f < F_COUNT; f++) {
            if (!o.form_on[f]) continue;
            for (int m = 0; m < o.modulus_count; m++) {
                row* w = &rows[n];
                if (!is_dem(f) && m > 0) {
                    *w = rows[n - 1];
                    w->modulus = o.moduli[m];
                } else {
                    ladder(&o, &gb, s, f, o.moduli[m], w);
                }
                if (o.json) print_json_row(stdout, w);
                if (json_file) print_json_row(json_file, w);
                if (w->r.reason[0] && strncmp(w->r.reason, "build", 5) == 0) failures++;
                n++;
            }
        }
    }
    if (!o.json) {
        print_table(rows, n);
        printf("\ntotal wall time %.0f s\n", gbed_now() - t_start);
    }
    if (json_file && fclose(json_file) != 0) failures++;
    if (o.csv && write_csv(o.csv, rows, n) != 0) failures++;
    if (o.svg && write_svg(o.svg, rows, n, &o) != 0) failures++;
    if ((o.study_csv || o.study_json) && write_study_tables(&o, rows, n) != 0) failures++;
    free(gb.packed);
    return failures ? 1 : 0;
}
