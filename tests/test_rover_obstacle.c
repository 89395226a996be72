/* The rocker-bogie rover of data/rover driving over a 0.15 m
 * hemisphere under its right-hand wheels (the obstacle crossing of
 * Horvat 2024, §6), built by studies/rover/rover_model.c (public API) on rigid
 * ground: a plane and a fixed sphere centred on it at (1.6, −1.0, 0), μ = 0.4
 * everywhere, the wheels' contact compliance 1e-8 m/N, Lemke's method
 * (as examples/scenes/rover_obstacle_rigid.json).
 *
 * Speed. The scene drives at the thesis's 0.08889 rad/s (0.0222 m/s), which
 * needs 160 s of simulated time for the rear wheel to cross: ~6 minutes. The
 * test drives 9× faster, 0.8 rad/s (0.2 m/s) after the same 1 s ramp, with
 * h = 2 ms: 18.5 s, 9,250 steps. The events happen where the wheels meet the
 * obstacle, so their times scale with the distance travelled: a run at
 * another speed has its events at the times it has travelled the same
 * distances (0.193, 1.377 and 2.451 m for the front, middle and rear wheels).
 *
 * (a) Flat ground, driving at constant speed before the obstacle: the six
 *     normal loads (the sum of each wheel's contact normal forces) within
 *     2 % of the reference's static loads, for both variants (measured:
 *     0.00–0.01 %). At rest on frictionless ground: tests/test_rover_statics.c.
 * (b) The crossing (Scarecrow): rover_events.c must find the three events
 *     of the thesis's §6.4 —
 *       front climbs: front load up, middle down;
 *       middle climbs: middle up, front ≈ rear; then middle down, front and
 *       rear up;
 *       rear climbs: middle down; then rear down, middle up —
 *     each starting within 5 % of the crossing time (front reaches .. rear
 *     leaves) of the time at which the travelled distance brings its wheel to
 *     the obstacle, and the loads must settle back to the static ones within
 *     1 % (the "state tolerance": measured 0.004 %). Measured at 0.2 m/s:
 *     errors +0.02, +0.17, +0.30 s = 0.1, 1.1, 2.0 % of the 15.2 s crossing
 *     (the middle and rear wheels arrive late because the rover yaws a little
 *     while the front wheel climbs). Also: each load change starts within
 *     1 % of the crossing time of the wheel's first push on the obstacle
 *     (from the contact list), and the crossing takes the redundant
 *     differential links (revolutes at both ends: the source model's)
 *     through a differential angle of 0.09 rad without a jump.
 * (c) Redundant rows and every solver: with the source model's revolute
 *     differential links (6 redundant rows at rest, a near-redundant loop
 *     when the rockers turn) each solver drives the front wheel 0.2 s into
 *     its climb (from a standing start against the obstacle, the motors at
 *     speed at once, at most 2,000 iterations) without an error and without
 *     a non-finite state; apgd, pgs and lemke also without throwing the
 *     rover (all speeds < 1 m/s, the loads sum to within 30 % of M g).
 *     Jacobi is not held to that: at 2,000 iterations it is far from
 *     converged on this rover (residual ~1e-2; the Delassus matrix's
 *     condition number is ~6e7) and throws it at 1–4 m/s with the spherical,
 *     non-redundant links as well as with the revolutes, even on flat
 *     ground: the conditioning, not the redundancy, defeats it.
 * (d) Grousered wheels (cylinder + 12 boxes) build and drive forward.
 * (e) The crossing with the DEM back end (test_crossing_dem).
 * (f) The DEM granular strip settles the rover onto its grains (test_strip_dem).
 * Also: the phase means of rover_events.c on a synthetic course (test_phase_means), and the climbs
 * measured from wheel-centre heights (test_measured_cuts).
 *
 * Under AddressSanitizer (about 10× slower) (b) stops after the front wheel
 * has crossed and checks the first event only, and (c) runs 0.05 s.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rover_events.h"
#include "rover_model.h"
#include "rover_probes.h"
#include "dvi/scene.h"
#include "dvi/world.h"
#include "test_util.h"

#define G 9.81
#define H 2e-3
#define SPEED 0.8 /* rad/s */
#define RAMP 1.0  /* s */
#define MU 0.4
#define DEM_E 2e7  /* Pa, the reference's SMC material */
#define DEM_H 1e-4 /* s */


static const double OBSTACLE[3] = {1.6, -1.0, 0.0};
static const double OBSTACLE_R = 0.15;

typedef struct course {
    dvi_world* w;
    double h; /* s, the step */
    rover r;
    dvi_body_id ground, obstacle;
    double ref[ROVER_WHEELS];
} course;

/* World (from wd), ground, obstacle (unless !with_obstacle) and rover. */
static void course_build_def(course* c, const dvi_world_def* wd, const char* variant, bool with_obstacle,
                             const rover_options* opt)
{
    memset(c, 0, sizeof *c);
    char msg[256];
    assert_int_equal(rover_reference_loads(ROVER_JSON, variant, c->ref, msg, sizeof msg), DVI_OK);
    assert_int_equal(dvi_world_create(wd, &c->w), DVI_OK);
    assert_int_equal(rover_add_ground(c->w, MU, &c->ground), DVI_OK);
    if (with_obstacle) assert_int_equal(rover_add_obstacle(c->w, OBSTACLE, OBSTACLE_R, MU, &c->obstacle), DVI_OK);
    rover_options o = opt ? *opt : rover_default_options();
    if (!opt) {
        o.on_ground = true;
        o.wheel_speed = SPEED;
        o.wheel_ramp = RAMP;
        o.wheel_compliance = 1e-8;
    }
    assert_int_equal(rover_build(c->w, ROVER_JSON, variant, &o, &c->r, msg, sizeof msg), DVI_OK);
    c->h = H;
}

/* The same with the given solver, the reference's 1 cm envelope and the
 * world's other defaults. */
static void course_build(course* c, const char* variant, const char* solver, int max_iterations, bool with_obstacle,
                         const rover_options* opt)
{
    dvi_world_def wd = dvi_default_world_def();
    wd.solver = solver;
    wd.collision_envelope = 0.01; /* the reference's */
    if (max_iterations > 0) wd.solver_settings.max_iterations = max_iterations;
    course_build_def(c, &wd, variant, with_obstacle, opt);
}

/* A fixed body with one shape of the DEM material of rover_obstacle_rigid_dem.json. */
static dvi_body_id dem_fixed(dvi_world* w, dvi_shape_type type, const double at[3], double radius)
{
    dvi_body_def bd = dvi_default_body_def();
    bd.type = DVI_BODY_FIXED;
    for (int k = 0; k < 3; k++) bd.position[k] = at[k];
    dvi_body_id id;
    assert_int_equal(dvi_body_create(w, &bd, &id), DVI_OK);
    dvi_shape_def sd = dvi_default_shape_def();
    sd.type = type;
    sd.radius = radius;
    sd.material.friction = MU;
    sd.material.young_modulus = DEM_E;
    sd.material.poisson_ratio = 0.3;
    dvi_shape_id sid;
    assert_int_equal(dvi_shape_create(w, id, &sd, &sid), DVI_OK);
    return id;
}

/* The crossing of rover_obstacle_rigid_dem.json at the test's speed: DEM
 * (Hertz, E = 2e7 Pa, ν = 0.3 on ground, obstacle and wheels), h = 1e-4 s,
 * spherical joints at the differential links' ends. */
static void course_build_dem(course* c, double wheel_damping)
{
    memset(c, 0, sizeof *c);
    char msg[256];
    assert_int_equal(rover_reference_loads(ROVER_JSON, "Scarecrow", c->ref, msg, sizeof msg), DVI_OK);
    dvi_world_def wd = dvi_default_world_def();
    wd.method = DVI_METHOD_DEM;
    wd.dem.normal_model = DVI_DEM_HERTZ;
    wd.solver = "lemke";
    wd.collision_envelope = 0.01;
    assert_int_equal(dvi_world_create(&wd, &c->w), DVI_OK);
    const double origin[3] = {0.0, 0.0, 0.0};
    c->ground = dem_fixed(c->w, DVI_SHAPE_PLANE, origin, 0.0);
    c->obstacle = dem_fixed(c->w, DVI_SHAPE_SPHERE, OBSTACLE, OBSTACLE_R);
    rover_options o = rover_default_options();
    o.on_ground = true;
    o.wheel_speed = SPEED;
    o.wheel_ramp = RAMP;
    o.wheel_compliance = 1e-8;
    o.wheel_young_modulus = DEM_E;
    o.spherical_diff_links = true;
    o.wheel_damping = wheel_damping;
    assert_int_equal(rover_build(c->w, ROVER_JSON, "Scarecrow", &o, &c->r, msg, sizeof msg), DVI_OK);
    c->h = DEM_H;
}

/* Time series of a run, one sample every `every` steps. */
typedef struct record {
    int n, cap;
    double *t, *travel, *load[ROVER_WHEELS];
    double touch[3]; /* s: first step in which each right wheel pushes on the obstacle (> 1 N; NaN: never) */
    double max_speed, max_dtheta;
} record;

static void record_free(record* rec)
{
    free(rec->t);
    free(rec->travel);
    for (int i = 0; i < ROVER_WHEELS; i++) free(rec->load[i]);
}

static void run(course* c, double t_end, int every, record* rec)
{
    memset(rec, 0, sizeof *rec);
    int steps = (int)lround(t_end / c->h);
    rec->cap = steps / every + 2;
    rec->t = malloc((size_t)rec->cap * sizeof(double));
    rec->travel = malloc((size_t)rec->cap * sizeof(double));
    assert_non_null(rec->t);
    assert_non_null(rec->travel);
    for (int i = 0; i < ROVER_WHEELS; i++) {
        rec->load[i] = malloc((size_t)rec->cap * sizeof(double));
        assert_non_null(rec->load[i]);
    }
    for (int k = 0; k < 3; k++) rec->touch[k] = NAN;
    double x0[3];
    assert_int_equal(dvi_body_get_position(c->w, c->r.chassis, x0), DVI_OK);
    for (int s = 1; s <= steps; s++) {
        dvi_status st = dvi_world_step(c->w, c->h);
        if (st < 0) fail_msg("step %d: %s", s, dvi_world_last_error(c->w));
        /* first contacts with the obstacle */
        int32_t nc = dvi_world_contact_count(c->w);
        for (int32_t k = 0; k < nc && !DVI_IS_NULL(c->obstacle); k++) {
            dvi_contact_info ci;
            assert_int_equal(dvi_world_get_contact(c->w, k, &ci), DVI_OK);
            bool obst = ci.body_a.index1 == c->obstacle.index1 || ci.body_b.index1 == c->obstacle.index1;
            double fn = ci.force[0] * ci.normal[0] + ci.force[1] * ci.normal[1] + ci.force[2] * ci.normal[2];
            for (int w = 0; w < 3 && obst && fn > 1.0; w++) {
                int32_t id = c->r.wheel[ROVER_RF + w].body.index1;
                if ((ci.body_a.index1 == id || ci.body_b.index1 == id) && isnan(rec->touch[w]))
                    rec->touch[w] = dvi_world_time(c->w);
            }
        }
        for (int b = 0; b < c->r.body_count; b++) {
            double v[3];
            dvi_body_get_velocity(c->w, c->r.bodies[b].id, v);
            double sp = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
            if (!isfinite(sp)) fail_msg("step %d: body %s: non-finite velocity", s, c->r.bodies[b].name);
            rec->max_speed = fmax(rec->max_speed, sp);
        }
        double dth = fabs(rover_pitch(c->w, c->r.rocker[1]) - rover_pitch(c->w, c->r.rocker[0]));
        rec->max_dtheta = fmax(rec->max_dtheta, dth);
        if (s % every) continue;
        double x[3], l[ROVER_WHEELS];
        assert_int_equal(dvi_body_get_position(c->w, c->r.chassis, x), DVI_OK);
        assert_int_equal(rover_wheel_loads(c->w, &c->r, l), DVI_OK);
        assert_true(rec->n < rec->cap);
        rec->t[rec->n] = dvi_world_time(c->w);
        rec->travel[rec->n] = x[0] - x0[0];
        for (int i = 0; i < ROVER_WHEELS; i++) rec->load[i][rec->n] = l[i];
        rec->n++;
    }
}

/* Largest relative difference of the mean loads over [t0, t1] from static. */
static double flat_error(const course* c, const record* rec, double t0, double t1, double mean[ROVER_WHEELS])
{
    int cnt = 0;
    for (int i = 0; i < ROVER_WHEELS; i++) mean[i] = 0.0;
    for (int k = 0; k < rec->n; k++) {
        if (rec->t[k] < t0 || rec->t[k] > t1) continue;
        for (int i = 0; i < ROVER_WHEELS; i++) mean[i] += rec->load[i][k];
        cnt++;
    }
    assert_true(cnt > 0);
    double worst = 0.0;
    for (int i = 0; i < ROVER_WHEELS; i++) {
        mean[i] /= cnt;
        worst = fmax(worst, fabs(mean[i] / c->ref[i] - 1.0));
    }
    return worst;
}

static void print_loads(const char* label, const course* c, const double mean[ROVER_WHEELS], double worst, double tol)
{
    printf("[ rover    ] %s: loads L %.1f %.1f %.1f | R %.1f %.1f %.1f N, reference L %.1f %.1f %.1f | R %.1f %.1f "
                   "%.1f N; worst %.3f %% (limit %g %%)\n",
           label, mean[0], mean[1], mean[2], mean[3], mean[4], mean[5], c->ref[0], c->ref[1], c->ref[2], c->ref[3],
           c->ref[4], c->ref[5], 100.0 * worst, 100.0 * tol);
}

/* ---- helpers ----------------------------------------------------------------------- */

static void test_geometry(void** state)
{
    (void)state;
    course c;
    course_build(&c, "Scarecrow", "lemke", 0, true, NULL);
    /* reach = 1.6 − √((r + R)² − r²) − x_wheel, r = 0.25 (centre 0.25 above the sphere's centre) */
    const double dx = sqrt(0.4 * 0.4 - 0.25 * 0.25);
    static const double X[3] = {1.095, -0.089, -1.163};
    for (int w = 0; w < 3; w++) {
        double reach, leave;
        assert_true(rover_obstacle_travel(&c.r, ROVER_RF + w, OBSTACLE, OBSTACLE_R, &reach, &leave));
        assert_near(reach, 1.6 - dx - X[w], 1e-12);
        assert_near(leave, 1.6 + dx - X[w], 1e-12);
    }
    /* the left wheels pass 2 m away; a sphere beyond a wheel's face meets its rim */
    double reach, leave;
    assert_false(rover_obstacle_travel(&c.r, ROVER_LF, OBSTACLE, OBSTACLE_R, &reach, &leave));
    const double beside[3] = {1.6, -1.063 - 0.2 - 0.09, 0.0}; /* 0.09 m beyond the outer face */
    assert_true(rover_obstacle_travel(&c.r, ROVER_RF, beside, OBSTACLE_R, &reach, &leave));
    const double rs = sqrt(0.15 * 0.15 - 0.09 * 0.09);
    assert_near(reach, 1.6 - sqrt((0.25 + rs) * (0.25 + rs) - 0.0625) - 1.095, 1e-12);
    /* slip of a wheel at rest: NaN; of the rover in the first step of the ramp: rolling */
    double v, wr, s;
    assert_int_equal(rover_wheel_slip(c.w, &c.r, ROVER_RF, &v, &wr, &s), DVI_OK);
    assert_true(isnan(s));
    assert_int_equal(dvi_world_step(c.w, H), DVI_OK);
    assert_int_equal(rover_wheel_slip(c.w, &c.r, ROVER_RF, &v, &wr, &s), DVI_OK);
    /* ω: the motor's ramp value at the step's end relative to the carrier, plus
     * the carrier's small pitch rate as the rover starts (3 % here) */
    assert_near(wr, SPEED * H / RAMP * 0.25, 0.05 * SPEED * H / RAMP * 0.25);
    assert_true(fabs(s) < 0.05);
    dvi_world_destroy(c.w);
}

/* ---- (a) and (b) ------------------------------------------------------------------------ */

static void test_flat_fullrover(void** state)
{
    (void)state;
    course c;
    course_build(&c, "FullRover", "lemke", 0, false, NULL);
    record rec;
    run(&c, 1.4, 5, &rec);
    double mean[ROVER_WHEELS];
    double worst = flat_error(&c, &rec, 1.1, 1.4, mean);
    print_loads("FullRover driving at 0.2 m/s on flat ground (1.1-1.4 s)", &c, mean, worst, 0.02);
    assert_true(worst <= 0.02);
    record_free(&rec);
    dvi_world_destroy(c.w);
}

/* Drives c over the obstacle and checks (a) and (b); every: steps per sample. */
/* front_only: run until the front wheel has crossed and check its event
 * only; baseline: rover_event_thresholds.baseline_travel (0: loads against
 * static, and settling checked) */
static void crossing(course* cp, int every, const char* label, double flat_tol, bool front_only, double baseline)
{
    course c = *cp;
#ifdef SANITIZED
    front_only = true;
#endif
    rover_course rc;
    memset(&rc, 0, sizeof rc);
    for (int w = 0; w < 3; w++) {
        assert_true(rover_obstacle_travel(&c.r, ROVER_RF + w, OBSTACLE, OBSTACLE_R, &rc.reach[w], &rc.leave[w]));
        rc.static_load[w] = c.ref[ROVER_RF + w];
    }
    const double t_end = (front_only ? rc.leave[0] + 0.3 : rc.leave[2] + 0.45) / (SPEED * 0.25) + 0.5 * RAMP;
    record rec;
    run(&c, t_end, every, &rec);

    /* (a) flat ground, constant speed, before the front wheel reaches the obstacle */
    const double t_reach_nominal = rc.reach[0] / (SPEED * 0.25) + 0.5 * RAMP;
    double mean[ROVER_WHEELS];
    double worst = flat_error(&c, &rec, RAMP + 0.1, t_reach_nominal - 0.1, mean);
    char what[160];
    snprintf(what, sizeof what, "%s: Scarecrow driving at 0.2 m/s on flat ground (before the obstacle)", label);
    print_loads(what, &c, mean, worst, flat_tol);
    assert_true(worst <= flat_tol);

    /* (b) the events */
    rc.n = rec.n;
    rc.t = rec.t;
    rc.travel = rec.travel;
    for (int w = 0; w < 3; w++) rc.load[w] = rec.load[ROVER_RF + w];
    rover_events ev;
    rover_event_thresholds th = rover_default_event_thresholds();
    th.baseline_travel = baseline;
    int ne = rover_find_events(&rc, &th, &ev);
    static const char* const NAME[3] = {"front climbs", "middle climbs", "rear climbs"};
    printf("[ rover    ] %s: crossing at 0.2 m/s (Scarecrow, h = %g s): travel %.3f m in %.2f s, crossing time %.2f s, "
           "%d excursions; max differential angle %.3f rad, max body speed %.3f m/s\n",
           label, c.h, rec.travel[rec.n - 1], rec.t[rec.n - 1], ev.crossing_time, ne, rec.max_dtheta, rec.max_speed);
    for (int w = 0; w < 3; w++) {
        const rover_event* e = &ev.event[w];
        printf("[ rover    ]   %-13s reach %.3f m: predicted %6.2f s, first obstacle contact %6.2f s, load change "
               "%6.2f s (error %+.2f s = %+.2f %% of the crossing); pattern %s: %s\n",
               NAME[w], rc.reach[w], e->t_reach, rec.touch[w], e->t_start, e->error,
               100.0 * e->error / ev.crossing_time, e->pattern ? "yes" : "NO", e->why);
    }
    if (isfinite(ev.settle_error))
        printf("[ rover    ]   settled: loads within %.4f %% of static after the crossing\n", 100.0 * ev.settle_error);
    else /* the run ends before a window of settled loads after the rear wheel leaves */
        printf("[ rover    ]   settled: not measured (no settled window after the crossing)\n");
    if (front_only) {
        /* the run ends before the rear wheel leaves: the crossing time at the motors' speed */
        const double Tc = (rc.leave[2] - rc.reach[0]) / (SPEED * 0.25);
        assert_true(ne >= 1);
        assert_true(ev.event[0].pattern);
        assert_true(fabs(ev.event[0].t_start - rec.touch[0]) <= 0.01 * Tc);
        assert_true(fabs(ev.event[0].error) <= 0.05 * Tc);
        assert_true(rec.max_speed < 1.0); /* no jump */
        record_free(&rec);
        return;
    }
    assert_int_equal(ne, 3);
    for (int w = 0; w < 3; w++) {
        assert_true(ev.event[w].pattern);
        assert_true(ev.event[w].on_time);
        assert_true(fabs(ev.event[w].t_start - rec.touch[w]) <= 0.01 * ev.crossing_time);
    }
    if (baseline == 0.0) {
        assert_true(ev.settle_error <= 0.01);
        assert_true(ev.ok);
        /* measuring against baselines finds the same events when the loads return to static */
        rover_events eb;
        th.baseline_travel = 0.1;
        assert_int_equal(rover_find_events(&rc, &th, &eb), 3);
        for (int w = 0; w < 3; w++) {
            assert_true(eb.event[w].pattern && eb.event[w].on_time);
            assert_true(fabs(eb.event[w].t_start - ev.event[w].t_start) <= 0.001 * ev.crossing_time);
        }
    }
    /* the phase means (against the 0.1 m before the front wheel reaches the
     * obstacle) show the same three patterns; with DEM (baseline > 0) the
     * front and middle ones: before the rear wheel arrives the stored
     * tangential springs hold the middle wheel at ~0.6 x its load, and its
     * drop while the rear wheel climbs is lost in the means (studies/rover/RECORD.md) */
    rover_phases ph;
    int np = rover_phase_means(&rc, NULL, 0.1, &ph);
    for (int w = 0; w < 3; w++)
        printf("[ rover    ]   phase means, %-13s pattern %s: %s\n", NAME[w], ph.pattern[w] ? "yes" : "NO", ph.why[w]);
    if (baseline == 0.0) assert_int_equal(np, 3);
    assert_true(ph.pattern[ROVER_FRONT] && ph.pattern[ROVER_MIDDLE]);
    assert_true(rec.max_dtheta > 0.05); /* the differential really turned */
    assert_true(rec.max_speed < 1.0); /* no jump */
    record_free(&rec);
}

/* rover_phase_means on a synthetic course whose loads are constant over each
 * phase: travel 0 .. 4 m in 4,001 samples, the wheels reaching and leaving
 * at the rigid course's distances, the loads static × the factors below
 * (those measured on rigid ground, rounded). Every phase mean must equal its
 * factor (to rounding), the three patterns must be found, and each must be
 * lost when the factor it rests on is moved across its threshold. */
static void test_phase_means(void** state)
{
    (void)state;
    static const double F[ROVER_PHASES][3] = {
        {1.0, 1.0, 1.0},   {1.87, 0.54, 1.46}, {1.69, 0.60, 1.41}, {1.11, 1.34, 1.07}, {1.22, 1.59, 0.94},
        {1.01, 1.03, 1.0}, {1.07, 1.53, 0.99}, {1.08, 1.57, 0.89}, {1.48, 0.51, 1.68}, {1.47, 0.59, 1.63},
        {1.04, 1.01, 1.05}, {1.02, 1.05, 1.26}, {1.14, 0.94, 1.34}, {1.21, 1.24, 0.98}, {1.10, 1.78, 0.47},
        {1.0, 1.0, 1.0}};
    enum { N = 4001 };
    static double t[N], travel[N], load[3][N];
    rover_course c;
    memset(&c, 0, sizeof c);
    const double reach[3] = {0.19275, 1.37675, 2.45075}, leave[3] = {0.81725, 2.00125, 3.07525};
    const double stat[3] = {480.0, 481.0, 416.7};
    for (int w = 0; w < 3; w++) {
        c.reach[w] = reach[w];
        c.leave[w] = leave[w];
        c.static_load[w] = stat[w];
        c.load[w] = load[w];
    }
    c.n = N;
    c.t = t;
    c.travel = travel;
    rover_phases ph;
    /* the phase cuts, from a first call on any loads */
    for (int i = 0; i < N; i++) {
        t[i] = 0.005 * i;
        travel[i] = 0.001 * i + 0.0005; /* never on a cut */
        for (int w = 0; w < 3; w++) load[w][i] = stat[w];
    }
    assert_int_equal(rover_phase_means(&c, NULL, 0.1, &ph), 0);
    double d0[ROVER_PHASES], d1[ROVER_PHASES];
    memcpy(d0, ph.d0, sizeof d0);
    memcpy(d1, ph.d1, sizeof d1);
    assert_true(fabs(d0[0] - 0.07275) < 1e-12 && fabs(d1[0] - 0.17275) < 1e-12);
    assert_true(fabs(d0[3] - 0.505) < 1e-12 && fabs(d0[15] - 3.37525) < 1e-12);

    double f[ROVER_PHASES][3];
    memcpy(f, F, sizeof f);
    for (int trial = 0; trial < 4; trial++) {
        if (trial == 1) f[1][1] = f[2][1] = 0.95;       /* the middle wheel no longer drops while the front climbs */
        if (trial == 2) f[6][2] = f[7][2] = 1.6;        /* front and rear far apart while the middle climbs */
        if (trial == 3) f[12][1] = 1.06;                /* the middle wheel does not fall while the rear climbs */
        for (int i = 0; i < N; i++)
            for (int w = 0; w < 3; w++) {
                load[w][i] = 0.0; /* outside every phase */
                for (int k = 0; k < ROVER_PHASES; k++)
                    if (travel[i] >= d0[k] && travel[i] < d1[k]) load[w][i] = stat[w] * f[k][w];
            }
        int found = rover_phase_means(&c, NULL, 0.1, &ph);
        for (int k = 0; k < ROVER_PHASES; k++) {
            assert_true(ph.samples[k] > 0);
            for (int w = 0; w < 3; w++) assert_true(fabs(ph.mean[k][w] - f[k][w]) < 1e-12);
        }
        printf("[ rover    ] phase means, synthetic case %d: %d patterns (%s / %s / %s)\n", trial, found,
               ph.pattern[0] ? "yes" : "no", ph.pattern[1] ? "yes" : "no", ph.pattern[2] ? "yes" : "no");
        assert_int_equal(found, trial == 0 ? 3 : 2);
        if (trial > 0) assert_false(ph.pattern[trial - 1]);
        if (trial == 0) { /* the static loads as the baseline (0): the same here */
            assert_int_equal(rover_phase_means(&c, NULL, 0.0, &ph), 3);
            assert_true(fabs(ph.baseline[1] - stat[1]) < 1e-12);
        }
        memcpy(f, F, sizeof f);
    }
    /* bad input */
    assert_int_equal(rover_phase_means(&c, NULL, -0.1, &ph), -1);
    assert_int_equal(rover_phase_means(&c, NULL, NAN, &ph), -1);
    c.reach[1] = 0.5; /* the middle wheel reaches the obstacle before the front one leaves it */
    assert_int_equal(rover_phase_means(&c, NULL, 0.1, &ph), -1);
    c.reach[1] = reach[1];
    for (int i = 0; i < N; i++) travel[i] += 0.2; /* no sample in the baseline window */
    assert_int_equal(rover_phase_means(&c, NULL, 0.1, &ph), -1);
}

/* rover_measured_cuts on a synthetic course: each wheel centre (radius
 * R = 0.25 m) rolls over a hemisphere of radius r = 0.15 m, so it rises by
 * √((R + r)² − dx²) − R while |dx| < √((R + r)² − R²) = 0.3122 m of its
 * centre from the obstacle's. The heights carry ±1 mm of deterministic noise
 * and the predicted reach and leave are early by 0, 0.08 and 0.11 m (the yaw
 * on the one-sided strip). The climb is found where the rise passes 0.01 m:
 * |dx| = √(0.4² − 0.26²) = 0.30397 m. */
static void test_measured_cuts(void** state)
{
    (void)state;
    enum { N = 4001 };
    static double t[N], travel[N], z[3][N];
    const double R = 0.25, r = 0.15, reach_dx = sqrt(0.16 - 0.0625), found_dx = sqrt(0.16 - 0.26 * 0.26);
    const double centre[3] = {0.5, 1.7, 2.8}, early[3] = {0.0, 0.08, 0.11};
    rover_course c;
    memset(&c, 0, sizeof c);
    uint32_t seed = 12345u;
    for (int i = 0; i < N; i++) {
        t[i] = 0.005 * i;
        travel[i] = 0.001 * i;
        for (int w = 0; w < 3; w++) {
            double dx = travel[i] - centre[w];
            seed = seed * 1664525u + 1013904223u;
            double noise = 1e-3 * ((double)(seed >> 8) / 8388608.0 - 1.0);
            z[w][i] = R + noise + (fabs(dx) < reach_dx ? sqrt((R + r) * (R + r) - dx * dx) - R : 0.0);
        }
    }
    for (int w = 0; w < 3; w++) {
        c.reach[w] = centre[w] - reach_dx - early[w];
        c.leave[w] = centre[w] + reach_dx - early[w];
    }
    c.n = N;
    c.t = t;
    c.travel = travel;
    const double* h[3] = {z[0], z[1], z[2]};
    double reach[3], leave[3];
    assert_int_equal(rover_measured_cuts(&c, h, reach, leave), 3);
    double worst = 0.0;
    for (int w = 0; w < 3; w++) {
        worst = fmax(worst, fabs(reach[w] - (centre[w] - found_dx)));
        worst = fmax(worst, fabs(leave[w] - (centre[w] + found_dx)));
    }
    printf("[ rover    ] measured cuts, synthetic course: reach and leave within %.4f m of where the rise passes "
           "0.01 m (predictions up to 0.11 m early)\n",
           worst);
    assert_true(worst < 0.002); /* 1 mm sampling, ±1 mm of noise on a slope of 1.17 */
    /* a rear wheel that lands 12 mm higher than it ran before the obstacle
     * (on grains, out of its rut): it leaves where its rise falls to 12 +
     * 10 mm, |dx| = √(0.4² − 0.272²) = 0.29330 m (to the noise: ±1 mm of the
     * lowest height after the top) */
    static double raised[N];
    for (int i = 0; i < N; i++) {
        double dx = travel[i] - centre[2], bump = fabs(dx) < reach_dx ? sqrt((R + r) * (R + r) - dx * dx) - R : 0.0;
        raised[i] = z[2][i] + (dx > 0.0 ? fmax(bump, 0.012) - bump : 0.0);
    }
    const double* h_raised[3] = {z[0], z[1], raised};
    assert_int_equal(rover_measured_cuts(&c, h_raised, reach, leave), 3);
    const double want_leave = centre[2] + sqrt(0.16 - 0.272 * 0.272);
    printf("[ rover    ] measured cuts, rear wheel landing 12 mm higher: leaves at %.4f m (want %.4f m)\n", leave[2],
           want_leave);
    assert_true(fabs(leave[2] - want_leave) < 0.003);
    assert_true(fabs(reach[2] - (centre[2] - found_dx)) < 0.002);
    /* a run that ends while the rear wheel is over the obstacle */
    c.n = (int)(centre[2] / 0.001);
    assert_int_equal(rover_measured_cuts(&c, h, reach, leave), 2);
    /* a middle wheel that never climbs */
    c.n = N;
    static double flat[N];
    for (int i = 0; i < N; i++) flat[i] = R;
    const double* h_flat[3] = {z[0], flat, z[2]};
    assert_int_equal(rover_measured_cuts(&c, h_flat, reach, leave), 1);
    /* bad input */
    assert_int_equal(rover_measured_cuts(NULL, h, reach, leave), -1);
    const double* h_null[3] = {z[0], NULL, z[2]};
    assert_int_equal(rover_measured_cuts(&c, h_null, reach, leave), -1);
    c.reach[0] = NAN;
    assert_int_equal(rover_measured_cuts(&c, h, reach, leave), -1);
}

static void test_crossing(void** state)
{
    (void)state;
    course c;
    course_build(&c, "Scarecrow", "lemke", 0, true, NULL);
    crossing(&c, 10, "DVI (Lemke)", 0.02, false, 0.0);
    dvi_world_destroy(c.w);
}

/* (e) The same crossing with the DEM back end (rover_obstacle_rigid_dem.json
 * at 0.8 rad/s): loads on flat ground within 5 % (measured 2.4 %: the
 * Mindlin springs of six speed-locked wheels hold an internal fore-aft force
 * that shifts load from the middle wheels, studies/rover/RECORD.md), and the three
 * events, each on time with its pattern. After each climb the stored
 * tangential displacement leaves the loads up to 20 % off static until the
 * next one, so each event is measured against the loads over the 0.1 m
 * before its wheel reaches the obstacle, and settling is not checked
 * (measured: errors 0.10, 0.76 and 1.69 % of the crossing). Under the
 * sanitizers, up to the front wheel's crossing. */
static void test_crossing_dem(void** state)
{
    (void)state;
    course c;
    course_build_dem(&c, 0.0);
    crossing(&c, 200, "DEM (Hertz, E = 2e7 Pa)", 0.05, false, 0.1);
    dvi_world_destroy(c.w);
}

/* The same DEM crossing with DC-motor wheels (rover_options.wheel_damping
 * 300 N·m·s/rad): a wheel may give way, so the tangential springs the front
 * wheel's climb leaves do not hold. Between the front wheel's landing and
 * the middle wheel's reach (0.817–1.377 m of travel) the right-hand loads
 * are within 3 % of static (measured 0.3–0.6 %); with exact motors they sit
 * at 0.81 / 1.08 / 1.15 × there (studies/rover/RECORD.md; in this test, 0.83 / 1.05 / 1.17 ×).
 * Not under the sanitizers (test_util.h), where it takes 40 s: the optimised build
 * checks it, and test_crossing_dem runs the same code there. */
static void test_dem_dc_motors(void** state)
{
    (void)state;
#ifdef SANITIZED
    skip();
#endif
    course c;
    course_build_dem(&c, 300.0);
    rover_course rc;
    for (int w = 0; w < 3; w++)
        assert_true(rover_obstacle_travel(&c.r, ROVER_RF + w, OBSTACLE, OBSTACLE_R, &rc.reach[w], &rc.leave[w]));
    record rec;
    run(&c, (rc.reach[1] - 0.02) / (SPEED * 0.25) + 0.5 * RAMP + 0.3, 200, &rec);
    double mean[3] = {0.0, 0.0, 0.0};
    int cnt = 0;
    for (int k = 0; k < rec.n; k++) {
        if (rec.travel[k] < rc.leave[0] || rec.travel[k] > rc.reach[1]) continue;
        for (int w = 0; w < 3; w++) mean[w] += rec.load[ROVER_RF + w][k];
        cnt++;
    }
    assert_true(cnt >= 50);
    double worst = 0.0;
    for (int w = 0; w < 3; w++) {
        mean[w] /= cnt;
        worst = fmax(worst, fabs(mean[w] / c.ref[ROVER_RF + w] - 1.0));
    }
    printf("[ rover    ] DEM, DC-motor wheels (d = 300 N m s/rad): between the front and middle climbs (%d samples) "
           "right-hand loads %.3f / %.3f / %.3f x static; worst %.2f %% (limit 3 %%)\n",
           cnt, mean[0] / c.ref[ROVER_RF], mean[1] / c.ref[ROVER_RM], mean[2] / c.ref[ROVER_RB], 100.0 * worst);
    assert_true(worst <= 0.03);
    record_free(&rec);
    dvi_world_destroy(c.w);
}

/* ---- (c) every solver with the redundant differential -------------------------------- */

/* (f) Granular ground, a small version of the strip runs: the DEM strip
 * (examples/scenes/rover_obstacle_granular_strip_hex_dem.json: 4,821
 * spheres under the right-hand wheels, 24 grousers on every wheel, Hertz
 * contacts, 0.1 ms steps) for 0.25 s (0.5 s in the benchmark
 * 'rover_obstacle_long', DVI_TEST_LONG: `meson test --benchmark`), while
 * the motors ramp up. The rover settles onto the grains and the track. Over
 * the last 0.05 s (0.2 s) of every step's vertical wheel loads (the probes
 * crossing_side_up and other_side_up):
 *   - the six loads sum on average to the rover's weight, the reference's
 *     static loads summed (2755.4 N), within 2 % (measured +0.16 % over
 *     0.20–0.25 s; over 0.10–0.15 s −4.6 %: with the normal dashpot limited
 *     to what the step can integrate, docs/dem.md, the rover settles about
 *     0.05 s later than with the former dashpot, which gave −0.04 % there);
 *   - every wheel carries at least 25 % of its static load (measured: the
 *     least 0.88 x at 0.25 s);
 *   - the right-hand wheels' centres stand 0.1–3 cm below their grouser
 *     tips' radius (0.27 m) above the bed's top (measured 1.3–1.6 cm): they
 *     sink, but only a little (a bed that gives way, as the cubic lattice
 *     does, lets them down 6–7 cm);
 *   - the grains' own vertical force on the right-hand wheels (the probe
 *     crossing_side_grains_up, "with" the strip's generator) is their
 *     whole vertical load, since they touch nothing else yet (to 1e-9 of
 *     the load), and the same probe on the left-hand wheels, on the rigid
 *     track, reads exactly 0. */
static void test_strip_dem(void** state)
{
    (void)state;
    const double T = test_long() ? 0.5 : 0.25, WINDOW = test_long() ? 0.2 : 0.05;
    dvi_scene* s = NULL;
    dvi_scene_errors e;
    assert_int_equal(dvi_scene_load(SRC_PATH("examples/scenes/rover_obstacle_granular_strip_hex_dem.json"), &s, &e),
                     DVI_OK);
    dvi_model* m = NULL;
    char msg[256];
    assert_int_equal(dvi_model_create(s, &m, msg, sizeof msg), DVI_OK);
    const dvi_scene_settings set = dvi_scene_get_settings(s);
    assert_string_equal(set.method, "dem");
    const int right = probe_index(m, "crossing_side_up"), left = probe_index(m, "other_side_up");
    const int right_grains = probe_index(m, "crossing_side_grains_up"),
              left_grains = probe_index(m, "other_side_grains_up");
    dvi_probe_info ri, li;
    assert_int_equal(dvi_model_probe_info(m, right, &ri), DVI_OK);
    assert_int_equal(dvi_model_probe_info(m, left, &li), DVI_OK);
    assert_int_equal(ri.columns, 4);
    assert_int_equal(li.columns, 4);
    static const char* const RIGHT[3] = {"wheel_RF", "wheel_RM", "wheel_RB"};
    dvi_body_id rw[3];
    for (int w = 0; w < 3; w++) assert_int_equal(dvi_model_find_body(m, RIGHT[w], &rw[w]), DVI_OK);
    double ref[ROVER_WHEELS], weight = 0.0;
    assert_int_equal(rover_reference_loads(ROVER_JSON, "Scarecrow", ref, msg, sizeof msg), DVI_OK);
    for (int i = 0; i < ROVER_WHEELS; i++) weight += ref[i];

    const long steps = lround(T / set.dt), from = lround((T - WINDOW) / set.dt);
    double sum[ROVER_WHEELS] = {0}, z[3] = {0}; /* wheel order of the probes: RF RM RB, LF LM LB */
    long n = 0;
    double grains_off = 0.0, left_grains_max = 0.0;
    for (long k = 0; k < steps; k++) {
        assert_true(dvi_model_step(m) >= 0);
        if (k < from) continue;
        double a[4], b[4], ga[4], gb[4], v[6]; /* each probe: time, then its three wheels */
        assert_int_equal(dvi_model_probe_sample(m, right, a), DVI_OK);
        assert_int_equal(dvi_model_probe_sample(m, left, b), DVI_OK);
        assert_int_equal(dvi_model_probe_sample(m, right_grains, ga), DVI_OK);
        assert_int_equal(dvi_model_probe_sample(m, left_grains, gb), DVI_OK);
        for (int i = 1; i < 4; i++) {
            grains_off = fmax(grains_off, fabs(ga[i] - a[i]) / fmax(fabs(a[i]), 1.0));
            left_grains_max = fmax(left_grains_max, fabs(gb[i]));
        }
        for (int i = 0; i < 3; i++) {
            v[i] = a[1 + i];
            v[3 + i] = b[1 + i];
        }
        for (int i = 0; i < 6; i++) {
            assert_true(isfinite(v[i]));
            sum[i] += v[i];
        }
        for (int w = 0; w < 3; w++) {
            double p[3];
            dvi_body_get_position(dvi_model_world_const(m), rw[w], p);
            z[w] += p[2];
        }
        n++;
    }
    /* the reference's order: LF LM LB RF RM RB */
    static const int REF_OF[6] = {ROVER_RF, ROVER_RF + 1, ROVER_RF + 2, 0, 1, 2};
    double total = 0.0, least = INFINITY;
    for (int i = 0; i < 6; i++) {
        total += sum[i] / n;
        least = fmin(least, sum[i] / n / ref[REF_OF[i]]);
    }
    double sink[3], sink_lo = INFINITY, sink_hi = -INFINITY;
    for (int w = 0; w < 3; w++) {
        sink[w] = 0.27 - z[w] / n;
        sink_lo = fmin(sink_lo, sink[w]);
        sink_hi = fmax(sink_hi, sink[w]);
    }
    printf("[ rover    ] DEM strip, %.2f s (%ld steps): vertical wheel loads over the last %.2f s: RF %.0f RM %.0f RB %.0f "
           "LF %.0f LM %.0f LB %.0f N, sum %.1f N against the weight %.1f N (%+.2f %%), least %.2f x static; right "
           "wheels sink %.4f / %.4f / %.4f m\n",
           T, steps, WINDOW, sum[0] / n, sum[1] / n, sum[2] / n, sum[3] / n, sum[4] / n, sum[5] / n, total, weight,
           100.0 * (total / weight - 1.0), least, sink[0], sink[1], sink[2]);
    assert_true(fabs(total / weight - 1.0) <= 0.02);
    assert_true(least >= 0.25);
    assert_true(sink_lo >= 0.001 && sink_hi <= 0.03);
    printf("[ rover    ] DEM strip: the grains' vertical force on the right wheels departs from their load by %.2e "
           "(relative), on the left wheels it is %g N\n",
           grains_off, left_grains_max);
    assert_true(grains_off <= 1e-9);
    assert_true(left_grains_max == 0.0);
    dvi_model_destroy(m);
    dvi_scene_destroy(s);
}

static void test_redundant_rows(void** state)
{
    (void)state;
    static const char* const SOLVERS[4] = {"apgd", "pgs", "jacobi", "lemke"};
#ifdef SANITIZED
    const double T = 0.05;
#else
    const double T = 0.2;
#endif
    for (int k = 0; k < 4; k++) {
        course c;
        rover_options o = rover_default_options();
        o.on_ground = true;
        o.wheel_speed = SPEED;
        o.wheel_ramp = 0.0; /* at speed from the start */
        o.wheel_compliance = 1e-8;
        /* the front right wheel starts touching the obstacle: 0.193 m further on */
        double reach = 1.6 - sqrt(0.4 * 0.4 - 0.25 * 0.25) - 1.095;
        o.position[0] = reach;
        course_build(&c, "Scarecrow", SOLVERS[k], 2000, true, &o);
        int joint_rows = 0;
        assert_int_equal(dvi_world_step(c.w, H) >= 0, 1);
        joint_rows = dvi_world_get_stats(c.w).joint_rows;
        record rec;
        run(&c, T, 5, &rec);
        double sum = 0.0, lift[3];
        for (int i = 0; i < ROVER_WHEELS; i++) sum += rec.load[i][rec.n - 1];
        assert_int_equal(dvi_body_get_position(c.w, c.r.wheel[ROVER_RF].body, lift), DVI_OK);
        dvi_step_stats st = dvi_world_get_stats(c.w);
        printf("[ rover    ] %-6s %d joint rows: after %.2f s of the climb the front wheel is %.4f m up, loads sum to "
               "%.1f N (M g %.1f N), max speed %.3f m/s, last step %d iterations, residual %.1e\n",
               SOLVERS[k], joint_rows, T, lift[2] - 0.25, sum, c.r.total_mass * G, rec.max_speed, st.iterations,
               st.residual);
        assert_int_equal(joint_rows, 9 * 5 + 4 * 6 + 6 * 5 + 6);
        assert_true(isfinite(sum) && isfinite(lift[2])); /* (run() fails on a non-finite velocity or an error) */
        if (strcmp(SOLVERS[k], "jacobi") != 0) {
            assert_true(rec.max_speed < 1.0);
            assert_true(fabs(sum / (c.r.total_mass * G) - 1.0) < 0.3);
        }
        record_free(&rec);
        dvi_world_destroy(c.w);
    }
}

/* ---- (d) grousers ----------------------------------------------------------------------- */

static void test_grousers(void** state)
{
    (void)state;
    rover_options o = rover_default_options();
    o.on_ground = true;
    o.wheel_speed = SPEED;
    o.wheel_ramp = 0.1;
    o.wheel_compliance = 1e-8;
    o.grousers = 12;
    course c;
    course_build(&c, "Scarecrow", "lemke", 0, false, &o);
    assert_near(c.r.wheel_bottom_z, -0.001 - 0.02, 1e-12);
    for (int i = 0; i < ROVER_WHEELS; i++) {
        dvi_body_info info;
        assert_int_equal(dvi_body_get_info(c.w, c.r.wheel[i].body, &info), DVI_OK);
        assert_int_equal(info.shape_count, 1 + 12);
        assert_int_equal(info.shape_type, DVI_SHAPE_CYLINDER);
    }
    double q[4], p[3];
    const double axis[3] = {0, 1, 0};
    rover_grouser_pose(axis, 3, 12, 0.25, p, q); /* a quarter turn from straight down */
    assert_near(fabs(p[0]), 0.25, 1e-12);
    assert_near(p[2], 0.0, 1e-12);
    assert_near(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3], 1.0, 1e-12);
    record rec;
    run(&c, 0.5, 5, &rec);
    double v[3];
    assert_int_equal(dvi_body_get_velocity(c.w, c.r.chassis, v), DVI_OK);
    printf("[ rover    ] 12 grousers per wheel, 0.8 rad/s: chassis vx %.3f m/s after 0.5 s (rim 0.200, tips 0.216), "
           "%d contacts\n",
           v[0], dvi_world_get_stats(c.w).contacts);
    assert_true(v[0] > 0.15 && v[0] < 0.25);
    record_free(&rec);
    dvi_world_destroy(c.w);
}

/* The committed grousered scenes start with the lowest grouser tips on the
 * top of the bed or of the flats (studies/rover/rover_scene.c), not inside it:
 * the first steps see no penetration (before, the tips started 2 cm deep
 * and the health monitor warned at step 1: 0.02 m, 4 times the threshold,
 * and the grains under the wheels were kicked out). Three steps of the DVI
 * strip, the DEM strip and the rigid flats: no health warning, and the
 * worst penetration below 2 % of the smaller shape (the threshold is 20 %). */
static void test_grousers_start_clear(void** state)
{
    (void)state;
    static const char* const SCENES[3] = {"examples/scenes/rover_obstacle_granular_strip_hex.json",
                                          "examples/scenes/rover_obstacle_granular_strip_hex_dem.json",
                                          "examples/scenes/rover_obstacle_tracks_rigid.json"};
    for (int k = 0; k < 3; k++) {
        dvi_scene* s = NULL;
        dvi_scene_errors e;
        assert_int_equal(dvi_scene_load(SRC_PATH(SCENES[k]), &s, &e), DVI_OK);
        dvi_model* m = NULL;
        char msg[256];
        assert_int_equal(dvi_model_create(s, &m, msg, sizeof msg), DVI_OK);
        for (int n = 0; n < 3; n++) assert_true(dvi_model_step(m) >= 0);
        dvi_health_report h;
        assert_int_equal(dvi_model_health(m, &h), DVI_OK);
        printf("[ rover    ] %s: 3 steps, worst penetration %.3g of the smaller shape, health flags %#x\n",
               SCENES[k] + 16, h.worst_penetration, (unsigned)h.raised);
        assert_true(h.raised == 0);
        assert_true(h.worst_penetration < 0.02);
        dvi_model_destroy(m);
        dvi_scene_destroy(s);
    }
}

/* ---- (e) a capped APGD does not feed energy in ---------------------------------------- */

/* The rover on rigid ground with the granular scenes' solver settings (APGD
 * capped at 100 iterations, 1 ms). The previous step's impulses, used as
 * the start, can have a higher objective than γ = 0 once the contacts
 * change; 100 iterations do not bring such a start back below 0, the
 * impulses add kinetic energy, and the next start is worse. Before the
 * solver rejected such starts the rover was thrown within 0.1 s (kinetic
 * energy 176 J at 0.1 s, bodies at tens of m/s). */
static void test_apgd_capped(void** state)
{
    (void)state;
    const double T = 1.0; /* also under the sanitizers (2 s there): a shorter window is mostly the ramp */
    course c;
    dvi_world_def wd = dvi_default_world_def();
    wd.solver = "apgd";
    wd.solver_settings.max_iterations = 100;
    wd.solver_settings.tolerance = 1e-4;
    wd.collision_envelope = 0.005;
    wd.contact_recovery_speed = 0.1;
    wd.joint_recovery_speed = 0.05;
    course_build_def(&c, &wd, "Scarecrow", false, NULL);
    c.h = 1e-3;
    record rec;
    run(&c, T, 10, &rec);
    double v[3], sum = 0.0; /* mean total load over the second half */
    int half = 0;
    assert_int_equal(dvi_body_get_velocity(c.w, c.r.chassis, v), DVI_OK);
    for (int k = rec.n / 2; k < rec.n; k++, half++)
        for (int i = 0; i < ROVER_WHEELS; i++) sum += rec.load[i][k];
    sum /= half;
    double rim = SPEED * 0.25 * fmin(T / RAMP, 1.0);
    printf("[ rover    ] apgd, 100 iterations, 1 ms, %.1f s on rigid ground: fastest body %.3f m/s, chassis vx %.3f "
           "m/s (rim %.3f), loads sum to %.1f N on average over the second half (M g %.1f N)\n",
           T, rec.max_speed, v[0], rim, sum, c.r.total_mass * G);
    assert_true(rec.max_speed < 0.5);               /* thrown: tens of m/s */
    assert_true(fabs(v[0] - rim) < 0.05);           /* drives at the rim speed */
    assert_true(fabs(sum / (c.r.total_mass * G) - 1.0) < 0.1);
    record_free(&rec);
    dvi_world_destroy(c.w);
}

int main(void)
{
    if (rover_register_probes() != DVI_OK) return 1; /* the rover scenes' probe kinds */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_geometry),
        cmocka_unit_test(test_phase_means),
        cmocka_unit_test(test_measured_cuts),
        cmocka_unit_test(test_flat_fullrover),
        cmocka_unit_test(test_crossing),
        cmocka_unit_test(test_crossing_dem),
        cmocka_unit_test(test_dem_dc_motors),
        cmocka_unit_test(test_strip_dem),
        cmocka_unit_test(test_redundant_rows),
        cmocka_unit_test(test_grousers),
        cmocka_unit_test(test_grousers_start_clear),
        cmocka_unit_test(test_apgd_capped),
    };
    const char* only = getenv("DVI_TEST_FILTER"); /* e.g. DVI_TEST_FILTER=test_strip_dem: one test */
    if (only && only[0]) cmocka_set_test_filter(only);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
