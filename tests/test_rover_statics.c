/* The rocker-bogie rover of data/rover at rest on flat ground:
 * wheel loads against the analytic static loads of the reference JSON
 * (static_wheel_loads; data/rover/SOURCES.md §6, "method 3"), for both variants
 * (Scarecrow 280.88 kg, FullRover 830.88 kg) and the solvers apgd, pgs and
 * lemke. The rover is built by studies/rover/rover_model.c (public API only).
 *
 * Set-up shared by every run:
 *   - ground: a fixed body with a plane (z ≤ 0); the rover in its as-built
 *     pose with the lowest wheel points on z = 0 (gap 0). On flat ground that
 *     pose is the static equilibrium, so "settling" removes only start-up
 *     transients: the loads agree with the reference from the second step on.
 *   - h = 2e-3 s; the loads are those of the last step. APGD runs 50 steps
 *     (0.1 s), PGS 25 (0.05 s), Lemke 100 (0.2 s), and the one long settle,
 *     Lemke on frictionless ground with compliance (below), 500 steps (1 s).
 *     The iterative solvers are short because they are slow on this rover
 *     (below): ~0.05–0.15 s per step for APGD. The loads are within 0.03 % of
 *     the reference from the second step on and stay there (1 s with Lemke).
 *     Under AddressSanitizer every run is shorter.
 *   - 12 contacts: cylinder–plane gives the 2 rim ends of each wheel's
 *     contact line.
 *
 * Solver settings, and why they differ from the world defaults:
 *   - apgd and pgs: max_iterations 100,000 (default 2,000), tolerance kept at
 *     the world default 1e-8. Measured: the rover's CCP is badly conditioned
 *     (Delassus condition number 6e7 for Scarecrow, 3e8 for FullRover, from
 *     the differential links' 1.8e-4 kg·m² roll inertia against the
 *     200/750 kg chassis; the revolute differential links add 6 redundant
 *     rows), so APGD needs 5,000–65,000 iterations per step (the cold first
 *     step is the dearest) and PGS 2,000–40,000 sweeps on Scarecrow; on
 *     FullRover PGS's first steps reach the 100,000 cap (residual 6e-7, loads
 *     still within 0.03 %). With the default 2,000 the solve stops at a
 *     residual of ~1e-2 (apgd) / ~5e-4 (pgs), the loads are off by 20–100 %
 *     and within 0.2–0.3 s the rover is thrown off the ground. A looser
 *     tolerance does not save work: at 1e-5 the redundant loop drifts, the
 *     drift makes the CCP inconsistent (r outside the range of N), the solves
 *     stop converging and the rover is thrown off again; at 1e-6 FullRover's
 *     loads are off by 1.3 %.
 *   - lemke: defaults (pyramid with 4 directions).
 *
 * Rigid contact and Lemke: with two rim points per wheel, how a wheel's load
 * splits between its rim ends, and with it the left/right split, is
 * statically indeterminate (the rims can carry the roll moment). APGD and PGS
 * return the symmetric split; Lemke returns a vertex of the solution set,
 * and which vertex changes from step to step: at the extreme every left wheel
 * on its outer rim point and every right wheel on its inner one, moving up to
 * ±25 % of a wheel's load across (measured on the last step: Scarecrow ±14–24 %,
 * FullRover ±0.7–1.3 % after 100 steps, ±10–18 % after 500). All are exact
 * solutions: same motion, CCP residual ≤ 1e-9. With rigid contact the test
 * therefore checks Lemke on the axle sums (left + right), and it checks
 * Lemke's per-wheel loads with a contact compliance of 1e-8 m/N (deflection
 * 2–8 µm at 240–765 N per rim point; the loads then agree with the reference
 * to 0.002 %), which makes the split unique.
 *
 * Tolerances: each wheel's load within 1 % of the reference; the sum within
 * 0.1 % of M g; solvers agree within 1 %; rocker pitch angles equal within
 * 1e-6 rad (1 µm of wheel height over the rocker's 0.9 m lever) and the
 * chassis pitch below 1e-6 rad (without the differential the chassis would
 * pitch freely about the rocker pivots); chassis speed below 1e-4 m/s.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rover_model.h"
#include "dvi/world.h"
#include "test_util.h"

#define G 9.81
#define H 2e-3

/* Under the sanitizers the runs are shorter (SANITIZED, test_util.h). */
#ifdef SANITIZED
enum { APGD_STEPS = 12, PGS_STEPS = 8, LEMKE_STEPS = 30, SETTLE_STEPS = 100 };
#else
enum { APGD_STEPS = 50, PGS_STEPS = 25, LEMKE_STEPS = 100, SETTLE_STEPS = 500 };
#endif

static const char* const VARIANTS[2] = {"Scarecrow", "FullRover"};

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

typedef struct run_config {
    const char* variant;
    const char* solver;
    double mu;         /* ground and wheel friction */
    double compliance; /* wheel contact compliance, m/N */
    bool spherical;    /* spherical differential-link ends */
    int steps;
    dvi_friction_law law; /* Coulomb's: solver "lemke" with lemke.coulomb and lemke.orient */
} run_config;

/* The worlds' joint_solve (test_direct_one_step sets it for its runs). */
static dvi_joint_solve g_joint_solve = DVI_JOINT_SOLVE_AUTO;

typedef struct run_result {
    double N[ROVER_WHEELS];       /* normal load (z of the contact force) */
    double F[ROVER_WHEELS][3];    /* contact force */
    double ref[ROVER_WHEELS];     /* reference loads */
    double pitch_rocker[2], pitch_chassis, speed;
    double mass;
    int contacts, joint_rows, not_converged, max_iterations;
    long iterations;
    double max_residual, seconds;
} run_result;

static void run(const run_config* c, run_result* out)
{
    memset(out, 0, sizeof *out);
    char msg[256];
    assert_int_equal(rover_reference_loads(ROVER_JSON, c->variant, out->ref, msg, sizeof msg), DVI_OK);

    dvi_world_def wd = dvi_default_world_def();
    wd.solver = c->solver;
    wd.joint_solve = g_joint_solve;
    if (strcmp(c->solver, "lemke") != 0) wd.solver_settings.max_iterations = 100000; /* see the header */
    wd.friction_law = c->law;
    wd.solver_settings.lemke.coulomb = wd.solver_settings.lemke.orient = c->law == DVI_LAW_COULOMB;
    dvi_world* w = NULL;
    assert_int_equal(dvi_world_create(&wd, &w), DVI_OK);

    dvi_body_def gd = dvi_default_body_def();
    gd.type = DVI_BODY_FIXED;
    dvi_body_id ground;
    assert_int_equal(dvi_body_create(w, &gd, &ground), DVI_OK);
    dvi_shape_def plane = dvi_default_shape_def();
    plane.type = DVI_SHAPE_PLANE;
    plane.material.friction = c->mu;
    dvi_shape_id sid;
    assert_int_equal(dvi_shape_create(w, ground, &plane, &sid), DVI_OK);

    rover_options opt = rover_default_options();
    opt.on_ground = true;
    opt.wheel_friction = c->mu;
    opt.wheel_compliance = c->compliance;
    opt.spherical_diff_links = c->spherical;
    rover r;
    if (rover_build(w, ROVER_JSON, c->variant, &opt, &r, msg, sizeof msg) != DVI_OK) {
        print_error("rover_build: %s\n", msg);
        fail();
    }
    out->mass = r.total_mass;

    double t0 = now();
    for (int i = 0; i < c->steps; i++) {
        dvi_status st = dvi_world_step(w, H);
        if (st < 0) {
            print_error("step %d: %s\n", i, dvi_world_last_error(w));
            fail();
        }
        dvi_step_stats s = dvi_world_get_stats(w);
        out->not_converged += st == DVI_NOT_CONVERGED;
        out->iterations += s.iterations;
        if (s.iterations > out->max_iterations) out->max_iterations = s.iterations;
        if (s.residual > out->max_residual) out->max_residual = s.residual;
    }
    out->seconds = now() - t0;
    dvi_step_stats s = dvi_world_get_stats(w);
    out->contacts = s.contacts;
    out->joint_rows = s.joint_rows;
    assert_int_equal(rover_wheel_forces(w, &r, out->F), DVI_OK);
    for (int i = 0; i < ROVER_WHEELS; i++) out->N[i] = out->F[i][2];
    out->pitch_rocker[0] = rover_pitch(w, r.rocker[0]);
    out->pitch_rocker[1] = rover_pitch(w, r.rocker[1]);
    out->pitch_chassis = rover_pitch(w, r.chassis);
    double v[3];
    assert_int_equal(dvi_body_get_velocity(w, r.chassis, v), DVI_OK);
    out->speed = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    dvi_world_destroy(w);

    printf("[ rover    ] %s, %s (%s), mu %.1f, compliance %g, %s links, %d steps of %g s: %.2f s wall, %ld iterations "
           "(max %d/step), %d steps not converged, max residual %.1e\n",
           c->variant, c->solver, dvi_friction_law_string(c->law), c->mu, c->compliance, c->spherical ? "spherical" : "revolute", c->steps, H,
           out->seconds, out->iterations, out->max_iterations, out->not_converged, out->max_residual);
    printf("[ rover    ]   %-13s %9s %9s %8s %9s %9s\n", "wheel", "N", "ref", "diff %", "Fx", "Fy");
    static const char* const LABEL[ROVER_WHEELS] = {"front left",  "middle left",  "rear left",
                                                    "front right", "middle right", "rear right"};
    for (int i = 0; i < ROVER_WHEELS; i++)
        printf("[ rover    ]   %-13s %9.2f %9.2f %+8.3f %9.3f %9.3f\n", LABEL[i], out->N[i], out->ref[i],
               100.0 * (out->N[i] - out->ref[i]) / out->ref[i], out->F[i][0], out->F[i][1]);
    printf("[ rover    ]   rocker pitch L %+.2e R %+.2e rad, chassis pitch %+.2e rad, chassis speed %.1e m/s\n",
           out->pitch_rocker[0], out->pitch_rocker[1], out->pitch_chassis, out->speed);
}

/* The checks every settled run must pass: loads per wheel (per axle when
 * axle_only) within 1 %, their sum within sum_tol (relative) of M g. */
static void check_statics(const run_result* r, bool axle_only, double sum_tol)
{
    assert_int_equal(r->contacts, 12);
    double sum = 0.0;
    for (int i = 0; i < ROVER_WHEELS; i++) sum += r->N[i];
    assert_near(sum, r->mass * G, sum_tol * r->mass * G);
    if (axle_only) {
        for (int k = 0; k < 3; k++) {
            double ref = r->ref[k] + r->ref[3 + k];
            assert_near(r->N[k] + r->N[3 + k], ref, 0.01 * ref);
        }
    } else {
        for (int i = 0; i < ROVER_WHEELS; i++) assert_near(r->N[i], r->ref[i], 0.01 * r->ref[i]);
    }
    assert_near(r->pitch_rocker[0], r->pitch_rocker[1], 1e-6);
    assert_near(r->pitch_chassis, 0.0, 1e-6);
    assert_near(r->speed, 0.0, 1e-4);
}

/* Loads of a and b agree within 1 % (per wheel, or per axle). */
static void check_agree(const run_result* a, const run_result* b, bool axle_only)
{
    if (axle_only) {
        for (int k = 0; k < 3; k++) {
            double na = a->N[k] + a->N[3 + k], nb = b->N[k] + b->N[3 + k];
            assert_near(na, nb, 0.01 * nb);
        }
    } else {
        for (int i = 0; i < ROVER_WHEELS; i++) assert_near(a->N[i], b->N[i], 0.01 * b->N[i]);
    }
}

/* ---- the model ------------------------------------------------------------- */

static void test_model(void** state)
{
    (void)state;
    for (int v = 0; v < 2; v++) {
        cJSON* root = NULL;
        {
            FILE* f = fopen(ROVER_JSON, "rb");
            assert_non_null(f);
            static char buf[1 << 17];
            size_t n = fread(buf, 1, sizeof buf - 1, f);
            fclose(f);
            buf[n] = '\0';
            root = cJSON_Parse(buf);
            assert_non_null(root);
        }
        const cJSON* swl = cJSON_GetObjectItem(cJSON_GetObjectItem(root, "static_wheel_loads"), VARIANTS[v]);
        double json_mass = cJSON_GetObjectItem(swl, "total_mass")->valuedouble;
        cJSON_Delete(root);

        for (int sph = 0; sph < 2; sph++) {
            dvi_world_def wd = dvi_default_world_def();
            wd.solver = "lemke";
            dvi_world* w = NULL;
            assert_int_equal(dvi_world_create(&wd, &w), DVI_OK);
            dvi_body_def gd = dvi_default_body_def();
            gd.type = DVI_BODY_FIXED;
            dvi_body_id ground;
            assert_int_equal(dvi_body_create(w, &gd, &ground), DVI_OK);
            dvi_shape_def plane = dvi_default_shape_def();
            plane.type = DVI_SHAPE_PLANE;
            dvi_shape_id sid;
            assert_int_equal(dvi_shape_create(w, ground, &plane, &sid), DVI_OK);
            rover_options opt = rover_default_options();
            opt.on_ground = true;
            opt.spherical_diff_links = sph;
            opt.wheel_speed = 0.5; /* motors: one more row per wheel */
            rover r;
            char msg[256];
            assert_int_equal(rover_build(w, ROVER_JSON, VARIANTS[v], &opt, &r, msg, sizeof msg), DVI_OK);
            assert_int_equal(r.body_count, 18);
            assert_int_equal(r.joint_count, 19);
            assert_near(r.total_mass, json_mass, 1e-9 * json_mass);
            assert_near(r.wheel_radius, 0.25, 0);
            assert_near(r.wheel_width, 0.40, 0);
            assert_near(r.wheel_bottom_z, -0.001, 1e-12);
            assert_near(r.origin[2], 0.001, 1e-12);
            /* wheel table: names, sides, places, positions (chassis frame + origin) */
            static const char* const NAMES[ROVER_WHEELS] = {"wheel_LF", "wheel_LM", "wheel_LB",
                                                            "wheel_RF", "wheel_RM", "wheel_RB"};
            static const double X[3] = {1.095, -0.089, -1.163}, Y[3] = {1.063, 1.194, 1.063};
            for (int i = 0; i < ROVER_WHEELS; i++) {
                assert_string_equal(r.wheel[i].name, NAMES[i]);
                assert_int_equal(r.wheel[i].side, i / 3);
                assert_int_equal(r.wheel[i].place, i % 3);
                assert_false(DVI_IS_NULL(r.wheel[i].body));
                assert_false(DVI_IS_NULL(r.wheel[i].joint));
                double p[3];
                assert_int_equal(dvi_body_get_position(w, r.wheel[i].body, p), DVI_OK);
                assert_near(p[0], X[i % 3], 1e-12);
                assert_near(p[1], i < 3 ? Y[i % 3] : -Y[i % 3], 1e-12);
                assert_near(p[2], 0.25, 1e-12);
            }
            int spherical = 0, motors = 0;
            for (int j = 0; j < r.joint_count; j++) {
                spherical += r.joints[j].type == DVI_JOINT_SPHERICAL;
                motors += r.joints[j].motor == DVI_MOTOR_ROTATION_SPEED;
            }
            assert_int_equal(spherical, sph ? 4 : 0);
            assert_int_equal(motors, 6);
            /* one step: rows (revolute 5, fixed 6, spherical 3, motor 1) and contacts (2 per wheel) */
            assert_true(dvi_world_step(w, H) >= 0);
            dvi_step_stats s = dvi_world_get_stats(w);
            assert_int_equal(s.joint_rows, (sph ? 5 * 5 + 4 * 3 : 9 * 5) + 4 * 6 + 6 * 5 + 6);
            assert_int_equal(s.contacts, 12);
            dvi_world_destroy(w);
        }
    }
    /* the oracle itself: the six loads carry M g */
    for (int v = 0; v < 2; v++) {
        double ref[ROVER_WHEELS], sum = 0.0;
        char msg[256];
        assert_int_equal(rover_reference_loads(ROVER_JSON, VARIANTS[v], ref, msg, sizeof msg), DVI_OK);
        for (int i = 0; i < ROVER_WHEELS; i++) sum += ref[i];
        assert_near(sum, (v == 0 ? 280.8805631634035 : 830.8805631634035) * G, 1e-6 * sum);
    }
}

/* Writes text to a fresh temporary file; path receives its name. */
static void write_temp(char* path, size_t size, const char* text)
{
    snprintf(path, size, "/tmp/test_rover_XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    size_t n = strlen(text);
    assert_int_equal(write(fd, text, n), (ssize_t)n);
    close(fd);
}

/* rover_build on a JSON file; expects status and a message containing want.
 * The world must stay empty: the next body created gets index 1. */
static void expect_error(const char* path, const char* variant, dvi_status status, const char* want)
{
    dvi_world_def wd = dvi_default_world_def();
    dvi_world* w = NULL;
    assert_int_equal(dvi_world_create(&wd, &w), DVI_OK);
    rover r;
    char msg[256];
    dvi_status st = rover_build(w, path, variant, NULL, &r, msg, sizeof msg);
    printf("[ rover    ] %s -> %s: %s\n", want, dvi_status_string(st), msg);
    assert_int_equal(st, status);
    if (!strstr(msg, want)) {
        print_error("message \"%s\" does not contain \"%s\"\n", msg, want);
        fail();
    }
    dvi_body_def bd = dvi_default_body_def();
    dvi_body_id b;
    assert_int_equal(dvi_body_create(w, &bd, &b), DVI_OK);
    assert_int_equal(b.index1, 1);
    dvi_world_destroy(w);
}

/* The reference JSON with one edit applied by fn, written to a temp file. */
static void edited_json(char* path, size_t size, void (*fn)(cJSON* root))
{
    FILE* f = fopen(ROVER_JSON, "rb");
    assert_non_null(f);
    static char buf[1 << 17];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    cJSON* root = cJSON_Parse(buf);
    assert_non_null(root);
    fn(root);
    char* text = cJSON_Print(root);
    assert_non_null(text);
    write_temp(path, size, text);
    cJSON_free(text);
    cJSON_Delete(root);
}

static cJSON* part(cJSON* root, const char* name)
{
    return cJSON_GetObjectItem(cJSON_GetObjectItem(root, "parts"), name);
}
static void drop_bogie_mass(cJSON* root) { cJSON_DeleteItemFromObject(part(root, "bogie_L"), "mass"); }
static void bad_com(cJSON* root) { cJSON_ReplaceItemInObject(part(root, "rocker_R"), "com", cJSON_CreateString("x")); }
static void short_inertia(cJSON* root)
{
    cJSON* J = cJSON_GetObjectItem(part(root, "diff_bar"), "inertia_about_com");
    cJSON_DeleteItemFromArray(cJSON_GetArrayItem(J, 1), 2);
}
static void drop_wheel(cJSON* root) { cJSON_DeleteItemFromObject(cJSON_GetObjectItem(root, "parts"), "wheel_RM"); }
static void bad_joint_body(cJSON* root)
{
    cJSON* j = cJSON_GetArrayItem(cJSON_GetObjectItem(root, "joints"), 4);
    cJSON_ReplaceItemInObject(j, "body_a", cJSON_CreateString("rocker_X"));
}
static void bad_joint_type(cJSON* root)
{
    cJSON* j = cJSON_GetArrayItem(cJSON_GetObjectItem(root, "joints"), 0);
    cJSON_ReplaceItemInObject(j, "type", cJSON_CreateString("prismatic"));
}
static void drop_steer(cJSON* root) { cJSON_DeleteItemFromArray(cJSON_GetObjectItem(root, "joints"), 10); }
static void negative_mass(cJSON* root)
{
    cJSON_ReplaceItemInObject(part(root, "upright_FL"), "mass", cJSON_CreateNumber(-6.0));
}

static void test_errors(void** state)
{
    (void)state;
    expect_error("/nonexistent/rover.json", "Scarecrow", DVI_ERR_IO, "/nonexistent/rover.json: cannot open");
    char path[64];
    write_temp(path, sizeof path, "{\n  \"chassis\": {\n    \"Scarecrow\": { \"mass\": 200.0, }\n  }\n}\n");
    expect_error(path, "Scarecrow", DVI_ERR_PARSE, ":3:");
    expect_error(path, "Scarecrow", DVI_ERR_PARSE, "malformed JSON");
    unlink(path);
    write_temp(path, sizeof path, "[1, 2]");
    expect_error(path, "Scarecrow", DVI_ERR_PARSE, "not a JSON object");
    unlink(path);

    expect_error(ROVER_JSON, "Opportunity", DVI_ERR_INVALID_ARG, "variant \"Opportunity\"");

    static const struct {
        void (*fn)(cJSON*);
        dvi_status status;
        const char* want;
    } CASES[] = {
        {drop_bogie_mass, DVI_ERR_PARSE, "parts.bogie_L.mass: missing"},
        {bad_com, DVI_ERR_PARSE, "parts.rocker_R.com: not an array"},
        {short_inertia, DVI_ERR_PARSE, "parts.diff_bar.inertia_about_com[1]: expected 3 numbers, got 2"},
        {drop_wheel, DVI_ERR_PARSE, "parts.wheel_RM: missing"},
        {bad_joint_body, DVI_ERR_PARSE, "joints[4] (rocker_pivot_R).body_a: unknown body \"rocker_X\""},
        {bad_joint_type, DVI_ERR_PARSE, "joints[0] (rocker_pivot_L).type: unknown joint type \"prismatic\""},
        {drop_steer, DVI_ERR_PARSE, "joints: no joint named \"steer_FR\""},
    };
    for (size_t k = 0; k < sizeof CASES / sizeof CASES[0]; k++) {
        edited_json(path, sizeof path, CASES[k].fn);
        expect_error(path, "FullRover", CASES[k].status, CASES[k].want);
        unlink(path);
    }
    /* a value the world refuses: the world's message, named by part */
    edited_json(path, sizeof path, negative_mass);
    dvi_world_def wd = dvi_default_world_def();
    dvi_world* w = NULL;
    assert_int_equal(dvi_world_create(&wd, &w), DVI_OK);
    rover r;
    char msg[256];
    assert_int_equal(rover_build(w, path, "Scarecrow", NULL, &r, msg, sizeof msg), DVI_ERR_INVALID_ARG);
    printf("[ rover    ] negative mass -> %s\n", msg);
    assert_non_null(strstr(msg, "upright_FL: dvi_body_create:"));
    dvi_world_destroy(w);
    unlink(path);
    /* an option out of range */
    assert_int_equal(dvi_world_create(&wd, &w), DVI_OK);
    rover_options opt = rover_default_options();
    opt.wheel_speed = 0.8;
    opt.wheel_damping = -5.0;
    assert_int_equal(rover_build(w, ROVER_JSON, "Scarecrow", &opt, &r, msg, sizeof msg), DVI_ERR_INVALID_ARG);
    assert_non_null(strstr(msg, "wheel_damping"));
    dvi_world_destroy(w);

    double loads[ROVER_WHEELS];
    assert_int_equal(rover_reference_loads(ROVER_JSON, "Opportunity", loads, msg, sizeof msg), DVI_ERR_INVALID_ARG);
    assert_non_null(strstr(msg, "variant \"Opportunity\": not in static_wheel_loads"));
}

/* ---- statics ---------------------------------------------------------------- */

/* Frictionless ground: the loads are those of the reference for every
 * solver (Lemke on rigid contact: per axle, see the header). */
static void frictionless(const char* variant)
{
    run_result apgd, pgs, lemke, lemke_c;
    run(&(run_config){variant, "apgd", 0.0, 0.0, false, APGD_STEPS, DVI_LAW_CCP}, &apgd);
    check_statics(&apgd, false, 1e-3);
    run(&(run_config){variant, "pgs", 0.0, 0.0, false, PGS_STEPS, DVI_LAW_CCP}, &pgs);
    check_statics(&pgs, false, 1e-3);
    run(&(run_config){variant, "lemke", 0.0, 0.0, false, LEMKE_STEPS, DVI_LAW_CCP}, &lemke);
    check_statics(&lemke, true, 1e-3);
    run(&(run_config){variant, "lemke", 0.0, 1e-8, false, SETTLE_STEPS, DVI_LAW_CCP}, &lemke_c);
    check_statics(&lemke_c, false, 1e-3);
    check_agree(&pgs, &apgd, false);
    check_agree(&lemke_c, &apgd, false);
    check_agree(&lemke, &apgd, true);
}

static void test_frictionless_scarecrow(void** state)
{
    (void)state;
    frictionless("Scarecrow");
}

static void test_frictionless_fullrover(void** state)
{
    (void)state;
    frictionless("FullRover");
}

/* μ = 0.4, free wheels. The normal loads stay those of the reference
 * within 1 %. The tangential forces are partly statically indeterminate:
 *   - F_x: each free wheel's spin balance forces its own F_x (summed over
 *     its two rim points, both at the wheel's radius) to zero; checked
 *     (|F_x| ≤ 0.1 N, measured ≤ 0.001 N).
 *   - F_y: lateral forces that cancel over the six wheels are internal
 *     forces of the rigid rover (in the null space of N: they change no
 *     velocity), so any of them within the cones is a solution. Checked:
 *     they sum to zero (0.5 N) and stay inside the cone (|F_t| ≤ μ N).
 *     What the solvers picked (last step; + = towards +y):
 *       apgd   Scarecrow  L −50.6 −64.5 −23.1 N, R +50.6 +64.5 +23.1 N
 *              FullRover  L −177 −220 −77 N,     R +177 +220 +77 N
 *       pgs    Scarecrow  L −106 −78 −20 N,      R +105 +80 +19 N
 *              FullRover  L −338 −267 −64 N,     R +334 +273 +61 N
 *              (measured once; not run here for FullRover, see below)
 *       lemke  0 (rigid and compliant): a vertex with no tangential impulse.
 *     (front, middle, rear). APGD and PGS keep the ground pushing every wheel
 *     towards the centre line, 5–14 % (apgd) and 5–25 % (pgs) of its normal
 *     load: the iterations of the first step put impulse into those internal
 *     directions and, as N has no component there, nothing takes it out
 *     again. With PGS the lateral forces, applied at ground level, also
 *     move ±0.4 % of the normal load from left to right. */
static void friction(const char* variant, bool with_pgs)
{
    run_result apgd, pgs, lemke, lemke_c;
    const run_result* all[4] = {&apgd, &lemke, &lemke_c, &pgs};
    int nall = 3;
    run(&(run_config){variant, "apgd", 0.4, 0.0, false, APGD_STEPS, DVI_LAW_CCP}, &apgd);
    check_statics(&apgd, false, 1e-3);
    if (with_pgs) {
        run(&(run_config){variant, "pgs", 0.4, 0.0, false, PGS_STEPS, DVI_LAW_CCP}, &pgs);
        check_statics(&pgs, false, 1e-3);
        check_agree(&pgs, &apgd, false);
        nall = 4;
    }
    run(&(run_config){variant, "lemke", 0.4, 0.0, false, LEMKE_STEPS, DVI_LAW_CCP}, &lemke);
    check_statics(&lemke, true, 1e-3);
    print_message("%s, lemke, friction: %ld pivots over %d steps (at most %d a step)\n", variant, lemke.iterations,
                  LEMKE_STEPS, lemke.max_iterations);
    /* at rest, every step after the first takes its basis from the warm
     * start's guess (lemke.c, WARM START): 8 pivots in all were measured */
    assert_true(lemke.iterations <= 2 * lemke.max_iterations);
    run(&(run_config){variant, "lemke", 0.4, 1e-8, false, LEMKE_STEPS, DVI_LAW_CCP}, &lemke_c);
    check_statics(&lemke_c, false, 1e-3);
    check_agree(&lemke_c, &apgd, false);
    check_agree(&lemke, &apgd, true);
    for (int k = 0; k < nall; k++) {
        double fy = 0.0;
        for (int i = 0; i < ROVER_WHEELS; i++) {
            const double* F = all[k]->F[i];
            assert_near(F[0], 0.0, 0.1); /* free wheel: no traction */
            assert_true(hypot(F[0], F[1]) <= 0.4 * F[2] * (1 + 1e-6));
            fy += F[1];
        }
        assert_near(fy, 0.0, 0.5); /* internal: no net lateral force */
    }
}

static void test_friction_scarecrow(void** state)
{
    (void)state;
    friction("Scarecrow", true);
}

static void test_friction_fullrover(void** state)
{
    (void)state;
    /* not PGS: on FullRover its first steps need ~10^5 sweeps (~5 s); the
     * frictionless FullRover test runs it once */
    friction("FullRover", false);
}

/* The rover at rest under both friction laws (dvi_world_def.friction_law),
 * μ = 0.4, Lemke: the CCP's pyramid LCP, and Coulomb's law (lemke.coulomb,
 * oriented pyramids). At rest every contact sticks (u = 0), and there the
 * two laws have the same solutions: the normal loads are the reference's
 * under both (per axle on rigid contact, per wheel with the compliance
 * 1e-8 m/N, as above). The lateral forces F_y are internal forces of the
 * rigid rover (see above): they must sum to zero under both laws, and each
 * wheel's tangential force stay within μ N. What each picks (last step;
 * front, middle, rear; + = towards +y):
 *   CCP, apgd        L −50.6 −64.5 −23.1 N, R +50.6 +64.5 +23.1 N (above)
 *   CCP, lemke       0 at every wheel
 *   Coulomb, lemke   0 at every wheel, rigid and compliant
 *   Coulomb, nsgs    |F_y| ≤ 0.001 N (compliant; 25 steps)
 * Lemke reaches a vertex without tangential impulse under either law, and
 * nsgs, which visits one contact at a time from γ = 0, puts none there; the
 * CCP's cone iterations (apgd) keep the internal part their first step gave.
 * nsgs needs the iterative solvers' budget here (100,000; see the header):
 * 13 of its 25 steps reach it (Coulomb residual ≤ 2e-5; the loads are still
 * within 0.002 % of the reference), ~16 s of the test's time. */
static void test_friction_law_scarecrow(void** state)
{
    (void)state;
    run_result ccp, coulomb, coulomb_c, nsgs;
    run(&(run_config){"Scarecrow", "lemke", 0.4, 0.0, false, LEMKE_STEPS, DVI_LAW_CCP}, &ccp);
    run(&(run_config){"Scarecrow", "lemke", 0.4, 0.0, false, LEMKE_STEPS, DVI_LAW_COULOMB}, &coulomb);
    run(&(run_config){"Scarecrow", "lemke", 0.4, 1e-8, false, LEMKE_STEPS, DVI_LAW_COULOMB}, &coulomb_c);
    run(&(run_config){"Scarecrow", "nsgs", 0.4, 1e-8, false, PGS_STEPS, DVI_LAW_COULOMB}, &nsgs);
    check_statics(&ccp, true, 1e-3);
    check_statics(&coulomb, true, 1e-3);
    check_statics(&coulomb_c, false, 1e-3);
    check_statics(&nsgs, false, 1e-3);
    check_agree(&coulomb, &ccp, true);
    check_agree(&nsgs, &coulomb_c, false);
    const run_result* all[4] = {&ccp, &coulomb, &coulomb_c, &nsgs};
    for (int k = 0; k < 4; k++) {
        double fy = 0.0;
        for (int i = 0; i < ROVER_WHEELS; i++) {
            const double* F = all[k]->F[i];
            assert_near(F[0], 0.0, 0.1);
            assert_true(hypot(F[0], F[1]) <= 0.4 * F[2] * (1 + 1e-6));
            assert_near(F[1], 0.0, 0.1); /* Lemke's vertex: no lateral force */
            fy += F[1];
        }
        assert_near(fy, 0.0, 0.5);
    }
    /* On rigid contact the Coulomb LCP of this redundant support ends some
     * steps in Lemke's secondary ray (6 of 100, measured: steps 8, 17, 31,
     * 49, ...; the step keeps the last basis, residual ≤ 1e-11, and the
     * loads stay those of the CCP); with the compliance, which makes the
     * split unique, every step converges, as under the CCP. */
    assert_int_equal(ccp.not_converged, 0);
    assert_true(coulomb.not_converged <= 10);
    assert_int_equal(coulomb_c.not_converged, 0);
}

/* The non-redundant option: spherical joints at both ends of each
 * differential link (91 joint rows instead of 99, no redundant rows; APGD
 * then needs ~10^3 instead of ~10^4 iterations per step). Each link can
 * then spin about its pin-to-pin axis; its mass centre is 0.033 m off that
 * axis, so it swings like an undamped pendulum (period ~0.4 s) and the
 * loads, and their sum, oscillate by about ±0.3 % (sum checked to 1 %). */
static void test_spherical_links(void** state)
{
    (void)state;
    for (int v = 0; v < 2; v++) {
        run_result apgd, lemke_c;
        run(&(run_config){VARIANTS[v], "apgd", 0.0, 0.0, true, APGD_STEPS, DVI_LAW_CCP}, &apgd);
        check_statics(&apgd, false, 0.01);
        assert_int_equal(apgd.joint_rows, 5 * 5 + 4 * 3 + 4 * 6 + 6 * 5);
        run(&(run_config){VARIANTS[v], "lemke", 0.0, 1e-8, true, LEMKE_STEPS, DVI_LAW_CCP}, &lemke_c);
        check_statics(&lemke_c, false, 0.01);
        check_agree(&lemke_c, &apgd, false);
    }
}

/* The drive motors' sign: a positive wheel speed rolls the rover forward
 * (+x) at ω R once the ramp is over (Lemke with compliance: cheap and exact
 * for the pyramid; μ = 0.4 is far more than the traction needed). */
/* The joint rows eliminated directly (joint_solve "direct"; docs/world.md):
 * the contact solver sees only the 36 contact rows of their Schur
 * complement, which holds the differential's near-redundancy no more. One
 * step from rest reaches the static loads: with APGD each wheel's within
 * 0.1 % (iterations of the one solve: Scarecrow 38, FullRover 84, where
 * the full problem takes 5,000–65,000); with PGS the axle sums within
 * 0.1 % (the split between a wheel's rim points, and with it between left
 * and right, is statically indeterminate, and PGS on the Schur complement
 * leaves it with the first rim point it sweeps: ±10 % per wheel, which is
 * why joint_solve "auto" keeps PGS on the full problem). */
static void test_direct_one_step(void** state)
{
    (void)state;
    static const char* const SOLVERS[2] = {"apgd", "pgs"};
    g_joint_solve = DVI_JOINT_SOLVE_DIRECT;
    for (int v = 0; v < 2; v++)
        for (int k = 0; k < 2; k++)
            for (int f = 0; f < 2; f++) {
                run_config c = {VARIANTS[v], SOLVERS[k], f ? 0.4 : 0.0, 0.0, false, 1, DVI_LAW_CCP};
                run_result r;
                run(&c, &r);
                assert_int_equal(r.not_converged, 0);
                assert_true(r.max_iterations <= 2000);
                double sum = 0.0;
                for (int i = 0; i < ROVER_WHEELS; i++) sum += r.N[i];
                assert_near(sum, r.mass * G, 1e-3 * r.mass * G);
                for (int i = 0; i < 3; i++) {
                    const double ref = r.ref[i] + r.ref[3 + i];
                    assert_near(r.N[i] + r.N[3 + i], ref, 1e-3 * ref);
                }
                if (k == 0)
                    for (int i = 0; i < ROVER_WHEELS; i++) assert_near(r.N[i], r.ref[i], 1e-3 * r.ref[i]);
            }
    g_joint_solve = DVI_JOINT_SOLVE_AUTO;
}

static void test_drive_direction(void** state)
{
    (void)state;
    dvi_world_def wd = dvi_default_world_def();
    wd.solver = "lemke";
    dvi_world* w = NULL;
    assert_int_equal(dvi_world_create(&wd, &w), DVI_OK);
    dvi_body_def gd = dvi_default_body_def();
    gd.type = DVI_BODY_FIXED;
    dvi_body_id ground;
    assert_int_equal(dvi_body_create(w, &gd, &ground), DVI_OK);
    dvi_shape_def plane = dvi_default_shape_def();
    plane.type = DVI_SHAPE_PLANE;
    plane.material.friction = 0.4;
    dvi_shape_id sid;
    assert_int_equal(dvi_shape_create(w, ground, &plane, &sid), DVI_OK);
    rover_options opt = rover_default_options();
    opt.on_ground = true;
    opt.wheel_compliance = 1e-8;
    opt.wheel_speed = 0.4; /* rad/s: 0.1 m/s without slip */
    opt.wheel_ramp = 0.1;
    rover r;
    char msg[256];
    assert_int_equal(rover_build(w, ROVER_JSON, "Scarecrow", &opt, &r, msg, sizeof msg), DVI_OK);
    const int steps = 75; /* 0.15 s: past the ramp */
    for (int i = 0; i < steps; i++) assert_true(dvi_world_step(w, H) >= 0);
    double v[3], x[3];
    assert_int_equal(dvi_body_get_velocity(w, r.chassis, v), DVI_OK);
    assert_int_equal(dvi_body_get_position(w, r.chassis, x), DVI_OK);
    printf("[ rover    ] driving at 0.4 rad/s: chassis v = (%.4f, %.1e, %.1e) m/s, x = %.4f m after %g s\n", v[0], v[1],
           v[2], x[0], steps * H);
    assert_near(v[0], 0.4 * 0.25, 0.005);
    assert_near(v[1], 0.0, 1e-4);
    assert_true(x[0] > 0.0);
    dvi_world_destroy(w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_model),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_frictionless_scarecrow),
        cmocka_unit_test(test_frictionless_fullrover),
        cmocka_unit_test(test_friction_scarecrow),
        cmocka_unit_test(test_friction_fullrover),
        cmocka_unit_test(test_friction_law_scarecrow),
        cmocka_unit_test(test_spherical_links),
        cmocka_unit_test(test_drive_direction),
        cmocka_unit_test(test_direct_one_step),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
