/* The run health monitor (docs/health.md): runs that go wrong say so, runs
 * that do not stay quiet. Each case states what goes wrong and by how much. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bytes_le.h"
#include "dvi/scene.h"
#include "hash_rng.h"
#include "rover_probes.h"
#include "test_util.h"

#define BIN SRC_PATH("tests/data/scenes_health/bin200.json")

static dvi_scene* load(const char* path, const char* method, double dt, double duration)
{
    dvi_scene* s = NULL;
    dvi_scene_errors e = {0};
    dvi_status st = dvi_scene_load(path, &s, &e);
    if (st != DVI_OK) fail_msg("%s: %s", path, e.text);
    dvi_scene_overrides ov;
    memset(&ov, 0, sizeof ov);
    ov.method = method;
    ov.dt = dt;
    ov.duration = duration;
    assert_int_equal(dvi_scene_apply_overrides(s, &ov, &e), DVI_OK);
    return s;
}

/* Steps the scene's duration or until a step fails; returns the last
 * status and the report. */
static dvi_status run(dvi_scene* s, dvi_health_report* rep, int64_t* steps)
{
    dvi_model* m = NULL;
    char msg[256];
    assert_int_equal(dvi_model_create(s, &m, msg, sizeof msg), DVI_OK);
    dvi_scene_settings set = dvi_scene_get_settings(s);
    const int64_t n = llround(set.duration / set.dt);
    dvi_status st = DVI_OK;
    for (*steps = 0; *steps < n; (*steps)++) {
        st = dvi_model_step(m);
        if (st < 0) {
            (*steps)++;
            break;
        }
    }
    assert_int_equal(dvi_model_health(m, rep), DVI_OK);
    dvi_model_destroy(m);
    return st;
}

static int kinds(const dvi_health_report* r)
{
    int n = 0;
    for (int k = 0; k < DVI_HEALTH_KINDS; k++)
        if (r->raised & (1u << k)) n++;
    return n;
}

/* 200 spheres poured into a bin with 20 mm walls. DEM at 3 ms (E = 1e7 Pa)
 * explodes: the normal springs of the impacts need h < 5e-4 s. At 1 ms
 * (before the normal dashpot was limited to the step, this exploded too:
 * the kinetic energy ×1e5 and 199 grains gone before the monitor) the
 * grains settle, and the monitor says that the tangential springs chatter.
 * At 0.1 ms it settles quietly. */
static void test_dem_blowup(void** state)
{
    (void)state;
    dvi_health_report r;
    int64_t steps = 0;
    dvi_scene* s = load(BIN, "dem", 1e-3, 1.0);
    dvi_status st = run(s, &r, &steps);
    dvi_scene_destroy(s);
    print_message("DEM at 1 ms: status %s after %lld steps; %s\n", dvi_status_string(st), (long long)steps,
                  r.first[DVI_HEALTH_CHATTER]);
    assert_true(st >= 0);
    assert_true(r.raised & (1u << DVI_HEALTH_CHATTER));
    assert_false(r.raised & (1u << DVI_HEALTH_BLOWUP));
    s = load(BIN, "dem", 3e-3, 1.0);
    st = run(s, &r, &steps);
    dvi_scene_destroy(s);
    print_message("DEM at 3 ms: status %s after %lld steps; %s\n", dvi_status_string(st), (long long)steps,
                  r.first[DVI_HEALTH_BLOWUP]);
    assert_int_equal(st, DVI_ERR_NUMERIC);
    assert_true(r.raised & (1u << DVI_HEALTH_BLOWUP));
    assert_true(r.energy_excess > 100.0);
    assert_true(steps < 1000);
    s = load(BIN, "dem", 1e-4, 0.3);
    st = run(s, &r, &steps);
    dvi_scene_destroy(s);
    print_message("DEM at 0.1 ms: %d warnings, energy excess %.3g, worst overlap %.3g of a shape\n", kinds(&r),
                  r.energy_excess, r.worst_penetration);
    assert_true(st >= 0);
    assert_int_equal(r.raised, 0);
}

/* DVI at 16 ms lets grains pass into the 20 mm walls (126 % of the wall's
 * half thickness); at 2 ms nothing is raised. */
static void test_dvi_tunnelling(void** state)
{
    (void)state;
    dvi_health_report r;
    int64_t steps = 0;
    dvi_scene* s = load(BIN, NULL, 0.016, 1.0);
    run(s, &r, &steps);
    dvi_scene_destroy(s);
    print_message("DVI at 16 ms: %s\n", r.first[DVI_HEALTH_PENETRATION]);
    assert_true(r.raised & (1u << DVI_HEALTH_PENETRATION));
    assert_true(r.worst_penetration > 1.0);
    s = load(BIN, NULL, 0.002, 1.0);
    run(s, &r, &steps);
    dvi_scene_destroy(s);
    print_message("DVI at 2 ms: %d warnings, worst penetration %.3g of a shape\n", kinds(&r), r.worst_penetration);
    assert_int_equal(r.raised, 0);
}

/* The pendulum at h = 1 s ended 9.6 km from its 1 m pivot: its bob leaves
 * the region and its joint comes apart. At 1 ms: nothing. */
static void test_pendulum_step_too_long(void** state)
{
    (void)state;
    dvi_health_report r;
    int64_t steps = 0;
    dvi_scene* s = load(SRC_PATH("examples/scenes/pendulum.json"), NULL, 1.0, 20.0);
    run(s, &r, &steps);
    dvi_scene_destroy(s);
    print_message("pendulum at 1 s: %s | %s\n", r.first[DVI_HEALTH_ESCAPE], r.first[DVI_HEALTH_JOINT]);
    assert_true(r.raised & (1u << DVI_HEALTH_ESCAPE));
    assert_true(r.raised & (1u << DVI_HEALTH_JOINT));
    assert_true(r.worst_joint > 0.5);
    s = load(SRC_PATH("examples/scenes/pendulum.json"), NULL, 1e-3, 5.0);
    run(s, &r, &steps);
    dvi_scene_destroy(s);
    print_message("pendulum at 1 ms: %d warnings, worst joint %.3g of its size, energy excess %.3g\n", kinds(&r),
                  r.worst_joint, r.energy_excess);
    assert_int_equal(r.raised, 0);
    assert_true(r.worst_joint < 1e-6);
}

/* g = 1e10 m/s² drove a sphere 1e6 m through the ground, every step
 * "converged": the impulses (1e7 N·s) dwarf the velocities, and the CCP
 * residual alone could not see the velocity error. With the velocity
 * residual in the stopping test the sphere rests (within 1e-3 m over 1 s)
 * and the monitor stays quiet; it would have raised the escape. */
static void test_huge_gravity(void** state)
{
    (void)state;
    const char* text =
        "{\"gravity\": [0, 0, -1e10], \"duration\": 1, \"formulation\": {\"dt\": 0.001},\n"
        " \"bodies\": [{\"name\": \"ground\", \"type\": \"fixed\", \"shapes\": [{\"type\": \"plane\"}]},\n"
        "   {\"name\": \"ball\", \"mass\": 1, \"position\": [0, 0, 0.1], \"shapes\": [{\"type\": \"sphere\", "
        "\"radius\": 0.1}]}]}";
    dvi_scene* s = NULL;
    dvi_scene_errors e = {0};
    assert_int_equal(dvi_scene_parse(text, strlen(text), NULL, &s, &e), DVI_OK);
    dvi_model* m = NULL;
    char msg[256];
    assert_int_equal(dvi_model_create(s, &m, msg, sizeof msg), DVI_OK);
    double worst = 0.0;
    for (int i = 0; i < 1000; i++) {
        assert_true(dvi_model_step(m) >= 0);
        dvi_body_id ball;
        double x[3];
        assert_int_equal(dvi_model_find_body(m, "ball", &ball), DVI_OK);
        dvi_body_get_position(dvi_model_world_const(m), ball, x);
        if (fabs(x[2] - 0.1) > worst) worst = fabs(x[2] - 0.1);
    }
    dvi_health_report r;
    assert_int_equal(dvi_model_health(m, &r), DVI_OK);
    print_message("g = 1e10: the ball's height stays within %.3g m of rest over 1 s; %d warnings\n", worst, kinds(&r));
    assert_true(worst < 1e-3);
    assert_int_equal(r.raised, 0);
    dvi_model_destroy(m);
    dvi_scene_destroy(s);
}

/* Bodies at rest without gravity: the energy scale was 0 J, and the
 * first step's energy (two boxes of 2 and 1 kg overlapping by 1 µm, pushed
 * apart at rounding-level speeds) was a blow-up of 1e299 scales, exit 1.
 * The scale's floor, 0.01 M g₀ L (M = 3 kg, L = 0.199999 m, the region's
 * extent), is 0.0588 J; the push puts in some 1e-6 J, nothing is raised. */
static void test_zero_gravity_at_rest(void** state)
{
    (void)state;
    const char* text =
        "{\"gravity\": [0, 0, 0], \"duration\": 0.2, \"formulation\": {\"dt\": 0.001},\n"
        " \"bodies\": [{\"name\": \"a\", \"mass\": 2, \"position\": [0, 0, 0], \"shapes\": [{\"type\": \"box\", "
        "\"half_extents\": [0.1, 0.1, 0.1]}]},\n"
        "   {\"name\": \"b\", \"mass\": 1, \"position\": [0.199999, 0, 0], \"shapes\": [{\"type\": \"box\", "
        "\"half_extents\": [0.1, 0.1, 0.1]}]}]}";
    dvi_scene* s = NULL;
    dvi_scene_errors e = {0};
    assert_int_equal(dvi_scene_parse(text, strlen(text), NULL, &s, &e), DVI_OK);
    dvi_health_report r;
    int64_t steps = 0;
    const dvi_status st = run(s, &r, &steps);
    print_message("zero gravity at rest: %lld steps, status %d, energy scale %.6g J, excess %.3g\n", (long long)steps,
                  (int)st, r.energy_scale, r.energy_excess);
    assert_true(st >= 0);
    assert_int_equal(steps, 200);
    assert_int_equal(r.raised, 0);
    assert_near(r.energy_scale, 0.01 * 3.0 * 9.80665 * 0.199999, 1e-12);
    assert_true(r.energy_excess < 1e-3);
    dvi_scene_destroy(s);
}

/* Work put in is not a gain: a flywheel (I = 0.5 kg m² about its axle)
 * spun up by a speed motor to 10 rad/s over 0.5 s gains 25 J, all of it
 * the motor's work; nothing is raised at an energy_growth of 0.01 (the
 * gain unaccounted would be 25 J over a scale of some 0.5 J). Thresholds
 * come from the scene, and bad ones are named. */
static void test_work_and_settings(void** state)
{
    (void)state;
    const char* text =
        "{\"duration\": 1, \"gravity\": [0, 0, 0], \"formulation\": {\"dt\": 0.001, \"health\": "
        "{\"energy_growth\": 0.01}},\n"
        " \"bodies\": [{\"name\": \"wheel\", \"mass\": 4, \"inertia\": [0.3, 0.3, 0.5], \"shapes\": [{\"type\": "
        "\"cylinder\", \"radius\": 0.5, \"half_length\": 0.05}]}],\n"
        " \"joints\": [{\"name\": \"axle\", \"type\": \"revolute\", \"body_b\": \"wheel\", \"anchor\": [0, 0, 0], "
        "\"axis\": [0, 0, 1], \"motor\": {\"type\": \"speed\", \"speed\": 10, \"ramp_time\": 0.5}}]}";
    dvi_scene* s = NULL;
    dvi_scene_errors e = {0};
    if (dvi_scene_parse(text, strlen(text), NULL, &s, &e) != DVI_OK) fail_msg("%s", e.text);
    assert_true(dvi_scene_get_settings(s).health.energy_growth == 0.01);
    dvi_health_report r;
    int64_t steps = 0;
    run(s, &r, &steps);
    dvi_scene_destroy(s);
    print_message("flywheel: motor work %.6f J (½ I ω² = 25 J), energy excess %.3g, %d warnings\n", r.work_in,
                  r.energy_excess, kinds(&r));
    assert_near(r.work_in, 25.0, 1e-9); /* the motor's row at the mean speed: ½ I ω² to rounding */
    assert_int_equal(r.raised, 0);
    const char* bad = "{\"duration\": 1, \"formulation\": {\"health\": {\"energy_growth\": -1, \"blowup\": 3}}}";
    assert_int_equal(dvi_scene_parse(bad, strlen(bad), NULL, &s, &e), DVI_ERR_INVALID_ARG);
    assert_non_null(strstr(e.text, "formulation.health.energy_growth"));
    assert_non_null(strstr(e.text, "formulation.health.blowup: unknown key"));
    dvi_scene_errors_free(&e);
}

/* Model states written before the audit kind existed (six kinds in the
 * health section, 8 · 24 + 6 · 256 + 8 bytes) and before the chatter kind
 * (five, 8 · 23 + 5 · 256 + 8) still load, with the same findings, the
 * newer kinds not raised and the audit from zero; a section of any other
 * size is refused. The old sections are made from a new one by dropping
 * the newer first_steps, the audit's numbers and the newer messages, and
 * re-sealing both checksums. */
static void test_report_from_older_layouts(void** state)
{
    (void)state;
    dvi_scene* s = load(BIN, NULL, 0.016, 1.0);
    dvi_model* a = NULL;
    char msg[256];
    assert_int_equal(dvi_model_create(s, &a, msg, sizeof msg), DVI_OK);
    for (int i = 0; i < 40; i++) dvi_model_step(a);
    dvi_health_report ra, rb;
    assert_int_equal(dvi_model_health(a, &ra), DVI_OK);
    assert_true(ra.raised != 0 && !(ra.raised & (1u << DVI_HEALTH_CHATTER)) && !(ra.raised & (1u << DVI_HEALTH_AUDIT)));
    void* blob = NULL;
    size_t size = 0;
    assert_int_equal(dvi_model_save_state(a, &blob, &size), DVI_OK);
    const unsigned char* b = blob;
    const size_t header = 56, wsize = le_get_u64(b + 24), psize = le_get_u64(b + 32), hsize = le_get_u64(b + 40);
    const size_t nums8 = 4 + 6 + 1 + 1 + 8 + 6 + 6;
    assert_int_equal(hsize, 8 * nums8 + 8 * 256 + 8);
    const unsigned char* h8 = b + header + wsize + psize;
    for (size_t kinds = 5; kinds <= 7; kinds++) {
        const size_t nums = 12 + kinds + 6 + (kinds == 7 ? 6 : 0), old = 8 * nums + kinds * 256 + 8;
        unsigned char* c = calloc(1, header + wsize + psize + old);
        assert_non_null(c);
        memcpy(c, b, header + wsize + psize);
        unsigned char* ho = c + header + wsize + psize;
        memcpy(ho, h8, 8 * (12 + kinds));                      /* up to first_step[kinds − 1] */
        memcpy(ho + 8 * (12 + kinds), h8 + 8 * (12 + 8), 8 * (nums - 12 - kinds)); /* the numbers after */
        memset(ho + 8 * (12 + kinds + 4), 0, 16);              /* the two numbers the hover kind took were 0 */
        memcpy(ho + 8 * nums, h8 + 8 * nums8, kinds * 256);     /* the first messages */
        const uint32_t known = ra.raised & ((1u << kinds) - 1u);  /* the kinds the older layout had */
        le_put_u64(ho + 8 * 10, known);
        le_put_u64(ho + old - 8, base_fnv1a(1469598103934665603u, ho, old - 8));
        le_put_u64(c + 40, old);
        le_put_u64(c + 48, base_fnv1a(1469598103934665603u, c, 48));
        dvi_model* m = NULL;
        assert_int_equal(dvi_model_create(s, &m, msg, sizeof msg), DVI_OK);
        assert_int_equal(dvi_model_load_state(m, c, header + wsize + psize + old, msg, sizeof msg), DVI_OK);
        assert_int_equal(dvi_model_health(m, &rb), DVI_OK);
        assert_int_equal(rb.raised, known);
        for (int k = 0; k < (int)kinds; k++) {
            assert_int_equal(rb.first_step[k], ra.first_step[k]);
            assert_string_equal(rb.first[k], ra.first[k]);
        }
        for (int k = (int)kinds; k < DVI_HEALTH_KINDS; k++) assert_true(rb.first_step[k] == -1 && !rb.first[k][0]);
        if (kinds < 7) assert_true(rb.audit_error == 0.0 && rb.dissipated_contacts == 0.0 && rb.work_in == ra.work_in);
        else assert_true(rb.audit_error == ra.audit_error && rb.dissipated_contacts == ra.dissipated_contacts);
        assert_true(rb.hover_worst == 0.0 && rb.hover_work_worst == 0.0);
        /* a section one number short of the layout */
        le_put_u64(c + 40, old - 8);
        le_put_u64(c + 48, base_fnv1a(1469598103934665603u, c, 48));
        assert_int_equal(dvi_model_load_state(m, c, header + wsize + psize + old - 8, msg, sizeof msg),
                         DVI_ERR_PARSE);
        print_message("%zu-kind health section: loads with the same findings; %zu bytes: %s\n", kinds, old - 8, msg);
        assert_non_null(strstr(msg, "health section"));
        free(c);
        dvi_model_destroy(m);
    }
    free(blob);
    dvi_model_destroy(a);
    dvi_scene_destroy(s);
}

/* Friction chatter. A 1 kg box (0.2 m cube, μ = 0.4) slides from
 * 0.2 m/s and stops after v0/(μg) = 0.051 s. With k_t = 3e9 N/m given on
 * the material, each corner's tangential spring (√(δ/d) k_t ≈ 1e8 N/m) is
 * far too stiff for h = 1e-4 s (h √(k/m_t) = 3.1 to 3.4 > 2 on the box's sliding
 * modes): the stopped box's friction flips between ±μ F_n every step,
 * which the monitor names within 20 ms of the stop. With the material's
 * own k_t (Mindlin, 9e5 N/m) the box holds quietly, and so does the
 * README's DEM run of examples/scenes/sliding_box.json at 1e-4 s. */
static void test_friction_chatter(void** state)
{
    (void)state;
    const char* fmt =
        "{\"duration\": 0.2, \"formulation\": {\"method\": \"dem\", \"dt\": 1e-4},\n"
        " \"materials\": {\"default\": {\"friction\": 0.4%s}},\n"
        " \"bodies\": [{\"name\": \"ground\", \"type\": \"fixed\", \"shapes\": [{\"type\": \"plane\"}]},\n"
        "   {\"name\": \"box\", \"mass\": 1, \"position\": [0, 0, 0.1], \"velocity\": [0.2, 0, 0],\n"
        "    \"shapes\": [{\"type\": \"box\", \"half_extents\": [0.1, 0.1, 0.1]}]}]}";
    for (int stiff = 1; stiff >= 0; stiff--) {
        char text[1024];
        snprintf(text, sizeof text, fmt, stiff ? ", \"k_t\": 3e9" : "");
        dvi_scene* s = NULL;
        dvi_scene_errors e = {0};
        if (dvi_scene_parse(text, strlen(text), NULL, &s, &e) != DVI_OK) fail_msg("%s", e.text);
        dvi_health_report r;
        int64_t steps = 0;
        dvi_status st = run(s, &r, &steps);
        dvi_scene_destroy(s);
        assert_true(st >= 0);
        if (stiff) {
            print_message("k_t = 3e9 N/m at h = 1e-4 s (stop at step 510): %s\n", r.first[DVI_HEALTH_CHATTER]);
            assert_int_equal(r.raised, 1u << DVI_HEALTH_CHATTER);
            assert_true(r.first_step[DVI_HEALTH_CHATTER] > 510 && r.first_step[DVI_HEALTH_CHATTER] < 710);
            assert_non_null(strstr(r.first[DVI_HEALTH_CHATTER], "between ground and box reverses every step"));
        } else {
            print_message("material k_t: %d warnings\n", kinds(&r));
            assert_int_equal(r.raised, 0u);
        }
    }
    dvi_scene* s = load(SRC_PATH("examples/scenes/sliding_box.json"), "dem", 1e-4, 1.0);
    dvi_health_report r;
    int64_t steps = 0;
    assert_true(run(s, &r, &steps) >= 0);
    dvi_scene_destroy(s);
    print_message("sliding_box.json, DEM at 1e-4 s: %d warnings\n", kinds(&r));
    assert_int_equal(r.raised, 0u);
}

/* The report travels with the model's state: a run saved after its
 * warning and resumed reports the step at which it first occurred. */
static void test_report_in_state(void** state)
{
    (void)state;
    dvi_scene* s = load(BIN, NULL, 0.016, 1.0);
    dvi_model* a = NULL;
    char msg[256];
    assert_int_equal(dvi_model_create(s, &a, msg, sizeof msg), DVI_OK);
    for (int i = 0; i < 40; i++) dvi_model_step(a);
    dvi_health_report ra, rb;
    assert_int_equal(dvi_model_health(a, &ra), DVI_OK);
    assert_true(ra.raised != 0);
    void* blob = NULL;
    size_t size = 0;
    assert_int_equal(dvi_model_save_state(a, &blob, &size), DVI_OK);
    dvi_model* b = NULL;
    assert_int_equal(dvi_model_create(s, &b, msg, sizeof msg), DVI_OK);
    assert_int_equal(dvi_model_load_state(b, blob, size, msg, sizeof msg), DVI_OK);
    assert_int_equal(dvi_model_health(b, &rb), DVI_OK);
    assert_int_equal(rb.raised, ra.raised);
    for (int k = 0; k < DVI_HEALTH_KINDS; k++) {
        assert_int_equal(rb.first_step[k], ra.first_step[k]);
        assert_string_equal(rb.first[k], ra.first[k]);
    }
    assert_true(rb.energy_scale == ra.energy_scale && rb.work_in == ra.work_in);
    assert_true(rb.audit_error == ra.audit_error && rb.dissipated_contacts == ra.dissipated_contacts &&
                rb.audit_worst == ra.audit_worst && rb.energy_change == ra.energy_change);
    /* the audit goes on from the loaded state as it does in the run that saved it */
    for (int i = 0; i < 10; i++) {
        dvi_model_step(a);
        dvi_model_step(b);
    }
    assert_int_equal(dvi_model_health(a, &ra), DVI_OK);
    assert_int_equal(dvi_model_health(b, &rb), DVI_OK);
    assert_true(rb.audit_error == ra.audit_error && rb.dissipated_contacts == ra.dissipated_contacts);
    free(blob);
    dvi_model_destroy(a);
    dvi_model_destroy(b);
    dvi_scene_destroy(s);
}

/* The energy audit (docs/health.md): the change of the kinetic energy plus
 * gravity's potential equals the work put in minus what the contacts and
 * joints take, to rounding, at the default step and settings.
 *
 * The frictionless pendulum (examples/scenes/pendulum.json, 10 s at 1 ms):
 * the symplectic step's energy swings by ±hω/2 ≈ 1.6e-3 of the bob's
 * energy, which the audit finds in the joint's impulses at the mean velocity:
 * the joint's work sums to zero over each swing (2.4e-8 J left of 9.66 J),
 * and the audit closes to 2.5e-15 of the energy scale. Evaluated at the end
 * velocity the joint would take nothing (J v⁺ = 0) and leave the swing,
 * 1.6e-3, as the error. */
static void test_audit_pendulum(void** state)
{
    (void)state;
    dvi_scene* s = load(SRC_PATH("examples/scenes/pendulum.json"), NULL, 0.0, 0.0);
    dvi_health_report r;
    int64_t steps = 0;
    assert_int_equal(run(s, &r, &steps), DVI_OK);
    dvi_scene_destroy(s);
    print_message("pendulum, %lld steps: energy change %.3g J, joints took %.3g J, error %.3g J, worst %.3g of "
                  "%.4g J\n",
                  (long long)steps, r.energy_change, r.dissipated_joints, r.audit_error, r.audit_worst,
                  r.energy_scale);
    assert_int_equal(steps, 10000);
    assert_int_equal(r.raised, 0);
    assert_true(r.audit_worst < 1e-6);
    assert_true(fabs(r.audit_error) < 1e-6 * r.energy_scale);
    assert_true(fabs(r.dissipated_joints) < 1e-6 * r.energy_scale); /* an ideal joint takes nothing */
    assert_true(r.work_in == 0.0 && r.dissipated_contacts == 0.0);
}

/* The rigid rover (examples/scenes/rover_obstacle_rigid.json, its first
 * 10 s at 1 ms, 10,000 steps): the six wheels' speed motors put 13.68 J in,
 * the contacts take 8.17 J, the rover gains 5.52 J (it speeds up and
 * climbs), the ideal joints take −3.8e-5 J (the symplectic step's swing, as
 * on the pendulum), and 3.1e-10 J is left: the audit closes to 9.6e-14 of
 * the energy scale (3246 J). */
static void test_audit_rover(void** state)
{
    (void)state;
    dvi_scene* s = load(SRC_PATH("examples/scenes/rover_obstacle_rigid.json"), NULL, 0.0, 10.0);
    dvi_health_report r;
    int64_t steps = 0;
    dvi_status st = run(s, &r, &steps);
    dvi_scene_destroy(s);
    print_message("rover, %lld steps: energy change %.4g J = work in %.4g J − contacts %.4g J − joints %.3g J + "
                  "error %.3g J; worst %.3g of %.4g J\n",
                  (long long)steps, r.energy_change, r.work_in, r.dissipated_contacts, r.dissipated_joints,
                  r.audit_error, r.audit_worst, r.energy_scale);
    assert_true(st >= 0);
    assert_int_equal(r.raised, 0);
    assert_true(r.audit_worst < 1e-6);
    assert_true(r.work_in > 1.0 && r.dissipated_contacts > 0.5 * r.work_in); /* the motors' work goes somewhere */
    assert_near(r.energy_change, r.work_in - r.dissipated_contacts - r.dissipated_joints, 1e-6 * r.energy_scale);
}

/* The sliding box (examples/scenes/sliding_box.json): 1 kg launched at
 * 2 m/s on μ = 0.4 stops after v0²/(2μg) = 0.50968 m, friction having taken
 * μ m g × distance = ½ m v0² = 2 J. The audit's dissipation is that to 1e-12.
 * The symplectic step's box stops at x = 0.50868 m, h v0/2 = 1 mm short: the
 * distance its staggered position x − (h/2) v travels, the one the friction
 * impulses act over at the mean velocity, is 0.50968 m. */
static void test_audit_sliding_box(void** state)
{
    (void)state;
    dvi_scene* s = load(SRC_PATH("examples/scenes/sliding_box.json"), NULL, 0.0, 0.0);
    dvi_model* m = NULL;
    char msg[256];
    assert_int_equal(dvi_model_create(s, &m, msg, sizeof msg), DVI_OK);
    for (int i = 0; i < 1000; i++) assert_true(dvi_model_step(m) >= 0);
    dvi_health_report r;
    assert_int_equal(dvi_model_health(m, &r), DVI_OK);
    double x[3];
    dvi_body_id box;
    assert_int_equal(dvi_model_find_body(m, "box", &box), DVI_OK);
    assert_int_equal(dvi_body_get_position(dvi_model_world(m), box, x), DVI_OK);
    dvi_model_destroy(m);
    dvi_scene_destroy(s);
    const double mu = 0.4, g = 9.81, v0 = 2.0, h = 1e-3, d = v0 * v0 / (2 * mu * g);
    print_message("sliding box: friction took %.12g J; mu m g d = %.12g J (d = %.5f m); stopped at x = %.5f m, "
                  "+ h v0/2 = %.5f m; audit error %.3g J\n",
                  r.dissipated_contacts, mu * g * d, d, x[0], x[0] + 0.5 * h * v0, r.audit_error);
    assert_int_equal(r.raised, 0);
    assert_near(r.dissipated_contacts, mu * 1.0 * g * d, 1e-3 * mu * g * d);
    assert_near(r.dissipated_contacts, mu * 1.0 * g * (x[0] + 0.5 * h * v0), 1e-3 * mu * g * d);
    assert_true(fabs(r.audit_error) < 1e-9);
}

/* Bodies that cannot escape do not: a conical pendulum at 60° on a 1 m
 * spherical joint (its bob, r = 0.05 m, circles at 0.866 m from the axis at
 * Ω = √(g/(L cos 60°)) = 4.43 rad/s: the box of the start positions and its
 * margin ended at 0.866 m, the circle's edge) and a box sliding 2.5 m over
 * a 10 m ground box (the box of the start positions and its margin, 10 ×
 * the largest shape, ended at 1.73 m). The region is what bounds the scene:
 * the joint's reach (1.05 m about the pivot) and the ground's extent, with a
 * margin of the region's longest side (10 m). A box launched at 12 m/s off
 * that ground's edge falls away and is named at 15 m. */
static dvi_health_report run_text(const char* text)
{
    dvi_scene* s = NULL;
    dvi_scene_errors e = {0};
    if (dvi_scene_parse(text, strlen(text), NULL, &s, &e) != DVI_OK) fail_msg("%s", e.text);
    dvi_health_report r;
    int64_t steps = 0;
    run(s, &r, &steps);
    dvi_scene_destroy(s);
    return r;
}

static void test_escape_region(void** state)
{
    (void)state;
    char text[2048];
    const double L = 1.0, th = acos(0.5), W = sqrt(9.81 / (L * cos(th)));
    snprintf(text, sizeof text,
             "{\"duration\": 5, \"formulation\": {\"dt\": 0.001},\n"
             " \"bodies\": [{\"name\": \"bob\", \"mass\": 1, \"position\": [%.17g, 0, %.17g], \"velocity\": [0, "
             "%.17g, 0], \"shapes\": [{\"type\": \"sphere\", \"radius\": 0.05}]}],\n"
             " \"joints\": [{\"name\": \"pivot\", \"type\": \"spherical\", \"body_b\": \"bob\", \"anchor\": [0, 0, "
             "0]}]}",
             L * sin(th), -L * cos(th), W * L * sin(th));
    dvi_health_report r = run_text(text);
    print_message("conical pendulum: %d warnings, %lld outside; %s\n", kinds(&r), (long long)r.escaped,
                  r.first[DVI_HEALTH_ESCAPE]);
    assert_int_equal(r.raised, 0);
    const char* ground =
        "{\"duration\": %g, \"formulation\": {\"dt\": 0.001}, \"materials\": {\"default\": {\"friction\": 0.4}},\n"
        " \"bodies\": [{\"name\": \"ground\", \"type\": \"fixed\", \"position\": [0, 0, -0.5], \"shapes\": "
        "[{\"type\": \"box\", \"half_extents\": [5, 5, 0.5]}]},\n"
        "  {\"name\": \"box\", \"mass\": 1, \"position\": [0, 0, 0.1], \"velocity\": [%.17g, 0, 0], \"shapes\": "
        "[{\"type\": \"box\", \"half_extents\": [0.1, 0.1, 0.1]}]}]}";
    snprintf(text, sizeof text, ground, 2.0, sqrt(2 * 0.4 * 9.81 * 2.5));
    r = run_text(text);
    print_message("box sliding 2.5 m: %d warnings; %s\n", kinds(&r), r.first[DVI_HEALTH_ESCAPE]);
    assert_int_equal(r.raised, 0);
    snprintf(text, sizeof text, ground, 3.0, 12.0);
    r = run_text(text);
    print_message("box launched off the edge: %s\n", r.first[DVI_HEALTH_ESCAPE]);
    assert_true(r.raised & (1u << DVI_HEALTH_ESCAPE));
    assert_non_null(strstr(r.first[DVI_HEALTH_ESCAPE], "box is at"));
}

/* The CCP's relaxation named. A 1 kg box (0.2 m cube, μ = 0.5) launched at
 * 4.9 m/s along a channel whose ceiling is 0.1 mm above it: a sliding
 * contact of the CCP must open at μ‖u_t‖, which floor and ceiling together
 * allow only at 0.1 mm / (2 μ h) = 0.1 m/s, so the first step brakes the box
 * from 4.9 to 0.1 m/s, and the friction takes its whole kinetic energy
 * (12.0 J) in that step: warned at step 1, naming Coulomb's law. Under
 * Coulomb's law (nsgs) the contacts stay closed and the box slows at μ g:
 * 4.9 − 0.5 · 9.81 · 0.2 = 3.919 m/s after 0.2 s, quiet. The README's box
 * (sliding_box.json, launched at 2 m/s, μ = 0.4) hops by up to 25 mm: its
 * first step opens the contact by h μ v = 0.69 mm (0.138 of the envelope)
 * and its friction takes 0.26 of the kinetic energy: reported in the
 * summary, below the default limits (1 and 0.5); a limit of 0.2 names it. */
static void test_hover(void** state)
{
    (void)state;
    const char* channel =
        "{\"duration\": 0.2, \"formulation\": {\"dt\": 0.001, \"solver\": \"%s\", \"friction_law\": \"%s\"},"
        " \"materials\": {\"default\": {\"friction\": 0.5}},"
        " \"bodies\": [{\"name\": \"floor\", \"type\": \"fixed\", \"shapes\": [{\"type\": \"plane\"}]},"
        "  {\"name\": \"ceiling\", \"type\": \"fixed\", \"position\": [0, 0, 0.3001], \"shapes\": [{\"type\": \"box\","
        " \"half_extents\": [5, 1, 0.1]}]},"
        "  {\"name\": \"box\", \"mass\": 1, \"position\": [0, 0, 0.1], \"velocity\": [4.9, 0, 0], \"shapes\":"
        " [{\"type\": \"box\", \"half_extents\": [0.1, 0.1, 0.1]}]}]}";
    for (int law = 0; law < 2; law++) {
        char text[1024];
        snprintf(text, sizeof text, channel, law ? "nsgs" : "apgd", law ? "coulomb" : "ccp");
        dvi_scene* s = NULL;
        dvi_scene_errors e = {0};
        if (dvi_scene_parse(text, strlen(text), NULL, &s, &e) != DVI_OK) fail_msg("%s", e.text);
        dvi_model* m = NULL;
        char msg[256];
        assert_int_equal(dvi_model_create(s, &m, msg, sizeof msg), DVI_OK);
        for (int i = 0; i < 200; i++) assert_true(dvi_model_step(m) >= 0);
        dvi_health_report r;
        assert_int_equal(dvi_model_health(m, &r), DVI_OK);
        dvi_body_id box;
        double v[3];
        assert_int_equal(dvi_model_find_body(m, "box", &box), DVI_OK);
        assert_int_equal(dvi_body_get_velocity(dvi_model_world(m), box, v), DVI_OK);
        print_message("channel, %s: v_x %.4f m/s after 0.2 s; hover %.3g of the envelope, friction %.4f of the "
                      "kinetic energy in a step; %s\n",
                      law ? "Coulomb (nsgs)" : "CCP (apgd)", v[0], r.hover_worst, r.hover_work_worst,
                      law ? "quiet" : r.first[DVI_HEALTH_HOVER]);
        if (law == 0) {
            assert_int_equal(r.raised, 1u << DVI_HEALTH_HOVER);
            assert_int_equal(r.first_step[DVI_HEALTH_HOVER], 1);
            assert_true(r.hover_work_worst > 0.99 && r.hover_work_worst < 1.0 + 1e-9);
            assert_non_null(strstr(r.first[DVI_HEALTH_HOVER], "floor and box"));
            assert_non_null(strstr(r.first[DVI_HEALTH_HOVER], "friction_law coulomb"));
            assert_true(v[0] < 0.1);
        } else {
            assert_int_equal(r.raised, 0);
            assert_near(v[0], 4.9 - 0.5 * 9.81 * 0.2, 1e-3);
            assert_true(r.hover_worst < 1e-6 && r.hover_work_worst < 0.01);
        }
        dvi_model_destroy(m);
        dvi_scene_destroy(s);
    }
    for (int strict = 0; strict < 2; strict++) {
        char text[4096] = {0}, edited[4200];
        FILE* f = fopen(SRC_PATH("examples/scenes/sliding_box.json"), "rb");
        assert_non_null(f);
        size_t n = fread(text, 1, sizeof text - 1, f);
        fclose(f);
        text[n] = 0;
        const char* key = "\"solver\": \"apgd\"}";
        char* at = strstr(text, key);
        assert_non_null(at);
        *at = 0;
        snprintf(edited, sizeof edited, "%s\"solver\": \"apgd\", \"health\": {\"hover_work_fraction\": %s}}%s", text,
                 strict ? "0.2" : "0.5", at + strlen(key));
        dvi_scene* s = NULL;
        dvi_scene_errors e = {0};
        if (dvi_scene_parse(edited, strlen(edited), NULL, &s, &e) != DVI_OK) fail_msg("%s", e.text);
        dvi_scene_overrides ov;
        memset(&ov, 0, sizeof ov);
        ov.duration = 0.1;
        assert_int_equal(dvi_scene_apply_overrides(s, &ov, &e), DVI_OK);
        dvi_health_report r;
        int64_t steps = 0;
        run(s, &r, &steps);
        print_message("sliding_box.json, hover_work_fraction %g: hover %.4f of the envelope, friction %.4f of the "
                      "kinetic energy in a step; %s\n",
                      strict ? 0.2 : 0.5, r.hover_worst, r.hover_work_worst, strict ? r.first[DVI_HEALTH_HOVER] : "quiet");
        assert_near(r.hover_worst, 0.1377, 2e-3);
        assert_near(r.hover_work_worst, 0.2598, 2e-3);
        assert_int_equal(r.raised, strict ? 1u << DVI_HEALTH_HOVER : 0u);
        if (strict) assert_int_equal(r.first_step[DVI_HEALTH_HOVER], 1);
        dvi_scene_destroy(s);
    }
}

/* What the audit finds: a 0.6 × 0.3 × 0.1 m plate (1 kg) spinning at
 * (3, 20, 2) rad/s dropped from 0.3 m onto the ground, where it bounces and
 * comes to rest in 2 s. Its impacts meet a body that does not turn about a
 * principal axis: the rotation's midpoint update leaves h (ω × Iω)·I⁻¹P/2
 * a step of impulse P, so the energy the contacts take and the energy the
 * plate loses (9.2222 J at every step: it ends at rest) differ by an error
 * of first order in h: 0.01453 J at 4 ms (1.5e-3 of the 9.71 J energy
 * scale: warned, the energy "gained"), 0.003520 J at 1 ms (3.6e-4: quiet).
 * At 4 ms the CCP's landing also opens a contact by 5.6 mm in one step,
 * 1.13 of the 5 mm envelope (hover warned; 0.61 at 1 ms). */
static void test_audit_spinning_plate(void** state)
{
    (void)state;
    const char* text =
        "{\"duration\": 2, \"formulation\": {\"dt\": %g},\n"
        " \"bodies\": [{\"name\": \"ground\", \"type\": \"fixed\", \"shapes\": [{\"type\": \"plane\"}]},\n"
        "  {\"name\": \"plate\", \"mass\": 1, \"position\": [0, 0, 0.35], \"angular_velocity\": [3, 20, 2], "
        "\"shapes\": [{\"type\": \"box\", \"half_extents\": [0.3, 0.15, 0.05]}]}]}";
    char buf[1024];
    double err[2];
    const double dts[2] = {4e-3, 1e-3};
    for (int i = 0; i < 2; i++) {
        snprintf(buf, sizeof buf, text, dts[i]);
        dvi_health_report r = run_text(buf);
        err[i] = r.audit_error;
        print_message("spinning plate at h = %g s: energy change %.6f J, contacts took %.6f J, error %.4g J (%.3g "
                      "of %.4g J); %s\n",
                      dts[i], r.energy_change, r.dissipated_contacts, r.audit_error, r.audit_worst, r.energy_scale,
                      r.first[DVI_HEALTH_AUDIT]);
        assert_near(r.energy_change, -9.2222, 1e-3);
        print_message("  hover: %.3g of the envelope, friction %.3g of the kinetic energy; %s\n", r.hover_worst,
                      r.hover_work_worst, r.first[DVI_HEALTH_HOVER]);
        if (i == 0) { /* and the landing opens a contact by 1.13 envelopes (0.61 at 1 ms) */
            assert_int_equal(r.raised, (1u << DVI_HEALTH_AUDIT) | (1u << DVI_HEALTH_HOVER));
            assert_non_null(strstr(r.first[DVI_HEALTH_AUDIT], "J gained that nothing accounts for"));
        } else {
            assert_int_equal(r.raised, 0);
        }
    }
    assert_near(err[0], 0.01453, 0.05 * 0.01453);
    assert_near(err[1], 0.003520, 0.05 * 0.003520);
    assert_true(err[0] / err[1] > 3.5 && err[0] / err[1] < 4.7); /* first order in h */
}

/* The probe energy_audit samples the report: after 0.5 s of the spinning
 * plate at 1 ms, its six columns are the report's energy change, work in,
 * contacts' and joints' dissipation and error, in J, and the error in
 * energy scales. */
static void test_audit_probe(void** state)
{
    (void)state;
    const char* text =
        "{\"duration\": 0.5, \"formulation\": {\"dt\": 0.001},\n"
        " \"bodies\": [{\"name\": \"ground\", \"type\": \"fixed\", \"shapes\": [{\"type\": \"plane\"}]},\n"
        "  {\"name\": \"plate\", \"mass\": 1, \"position\": [0, 0, 0.35], \"angular_velocity\": [3, 20, 2], "
        "\"shapes\": [{\"type\": \"box\", \"half_extents\": [0.3, 0.15, 0.05]}]}],\n"
        " \"probes\": [{\"name\": \"audit\", \"what\": \"energy_audit\"}]}";
    dvi_scene* s = NULL;
    dvi_scene_errors e = {0};
    if (dvi_scene_parse(text, strlen(text), NULL, &s, &e) != DVI_OK) fail_msg("%s", e.text);
    dvi_model* m = NULL;
    char msg[256];
    assert_int_equal(dvi_model_create(s, &m, msg, sizeof msg), DVI_OK);
    for (int i = 0; i < 500; i++) assert_true(dvi_model_step(m) >= 0);
    dvi_probe_info info;
    assert_int_equal(dvi_model_probe_info(m, 0, &info), DVI_OK);
    assert_int_equal(info.columns, 7);
    const char* names[7] = {"time", "energy_change", "work_in", "dissipated_contacts", "dissipated_joints", "error",
                            "error_relative"};
    for (int k = 0; k < 7; k++) assert_string_equal(info.column_names[k], names[k]);
    double v[7];
    assert_int_equal(dvi_model_probe_sample(m, 0, v), DVI_OK);
    dvi_health_report r;
    assert_int_equal(dvi_model_health(m, &r), DVI_OK);
    print_message("energy_audit at t = %g s: %.6f %.6f %.6f %.6f %.4g %.4g\n", v[0], v[1], v[2], v[3], v[4], v[5],
                  v[6]);
    assert_true(v[1] == r.energy_change && v[2] == r.work_in && v[3] == r.dissipated_contacts &&
                v[4] == r.dissipated_joints && v[5] == r.audit_error && v[6] == r.audit_error / r.energy_scale);
    assert_true(v[3] > 1.0 && v[1] < -1.0); /* the plate has landed */
    dvi_model_destroy(m);
    dvi_scene_destroy(s);
}

int main(void)
{
    if (rover_register_probes() != DVI_OK) return 1; /* the rover scenes' probe kinds */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dem_blowup),           cmocka_unit_test(test_dvi_tunnelling),
        cmocka_unit_test(test_pendulum_step_too_long), cmocka_unit_test(test_huge_gravity),
        cmocka_unit_test(test_zero_gravity_at_rest),
        cmocka_unit_test(test_work_and_settings),    cmocka_unit_test(test_report_in_state),
        cmocka_unit_test(test_friction_chatter),     cmocka_unit_test(test_report_from_older_layouts),
        cmocka_unit_test(test_audit_pendulum),       cmocka_unit_test(test_audit_rover),
        cmocka_unit_test(test_audit_sliding_box),    cmocka_unit_test(test_escape_region),
        cmocka_unit_test(test_hover),
        cmocka_unit_test(test_audit_spinning_plate), cmocka_unit_test(test_audit_probe),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
