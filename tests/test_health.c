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

/* 200 spheres poured into a bin with 20 mm walls. DEM at 1 ms (E = 1e7 Pa)
 * explodes: before the monitor the run finished with the kinetic energy
 * ×1e5 and 199 grains gone. At 0.1 ms it settles quietly. */
static void test_dem_blowup(void** state)
{
    (void)state;
    dvi_health_report r;
    int64_t steps = 0;
    dvi_scene* s = load(BIN, "dem", 1e-3, 1.0);
    dvi_status st = run(s, &r, &steps);
    dvi_scene_destroy(s);
    print_message("DEM at 1 ms: status %s after %lld steps; %s\n", dvi_status_string(st), (long long)steps,
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
    assert_near(r.work_in, 25.0, 0.1);
    assert_int_equal(r.raised, 0);
    const char* bad = "{\"duration\": 1, \"formulation\": {\"health\": {\"energy_growth\": -1, \"blowup\": 3}}}";
    assert_int_equal(dvi_scene_parse(bad, strlen(bad), NULL, &s, &e), DVI_ERR_INVALID_ARG);
    assert_non_null(strstr(e.text, "formulation.health.energy_growth"));
    assert_non_null(strstr(e.text, "formulation.health.blowup: unknown key"));
    dvi_scene_errors_free(&e);
}

/* A model state written before the chatter kind existed (five kinds in its
 * health section, 8 · 23 + 5 · 256 + 8 bytes) still loads, with the same
 * findings and chatter not raised; a section of any other size is refused.
 * The old section is made from a new one by dropping the sixth first_step
 * and the sixth message and re-sealing both checksums. */
static void test_report_from_five_kinds(void** state)
{
    (void)state;
    dvi_scene* s = load(BIN, NULL, 0.016, 1.0);
    dvi_model* a = NULL;
    char msg[256];
    assert_int_equal(dvi_model_create(s, &a, msg, sizeof msg), DVI_OK);
    for (int i = 0; i < 40; i++) dvi_model_step(a);
    dvi_health_report ra, rb;
    assert_int_equal(dvi_model_health(a, &ra), DVI_OK);
    assert_true(ra.raised != 0 && !(ra.raised & (1u << DVI_HEALTH_CHATTER)));
    void* blob = NULL;
    size_t size = 0;
    assert_int_equal(dvi_model_save_state(a, &blob, &size), DVI_OK);
    const unsigned char* b = blob;
    const size_t header = 56, wsize = le_get_u64(b + 24), psize = le_get_u64(b + 32), hsize = le_get_u64(b + 40);
    const size_t nums6 = 4 + 6 + 1 + 1 + 6 + 6, nums5 = nums6 - 1, old = 8 * nums5 + 5 * 256 + 8;
    assert_int_equal(hsize, 8 * nums6 + 6 * 256 + 8);
    unsigned char* c = calloc(1, header + wsize + psize + old);
    assert_non_null(c);
    memcpy(c, b, header + wsize + psize);
    const unsigned char* h6 = b + header + wsize + psize;
    unsigned char* h5 = c + header + wsize + psize;
    memcpy(h5, h6, 8 * 17);                                     /* up to first_step[4] */
    memcpy(h5 + 8 * 17, h6 + 8 * 18, 8 * (nums6 - 18));         /* the numbers after first_step[5] */
    memcpy(h5 + 8 * nums5, h6 + 8 * nums6, 5 * 256);            /* five messages */
    le_put_u64(h5 + old - 8, dvi_fnv1a(1469598103934665603u, h5, old - 8));
    le_put_u64(c + 40, old);
    le_put_u64(c + 48, dvi_fnv1a(1469598103934665603u, c, 48));
    dvi_model* m = NULL;
    assert_int_equal(dvi_model_create(s, &m, msg, sizeof msg), DVI_OK);
    assert_int_equal(dvi_model_load_state(m, c, header + wsize + psize + old, msg, sizeof msg), DVI_OK);
    assert_int_equal(dvi_model_health(m, &rb), DVI_OK);
    assert_int_equal(rb.raised, ra.raised);
    for (int k = 0; k < DVI_HEALTH_KINDS; k++) {
        assert_int_equal(rb.first_step[k], ra.first_step[k]);
        assert_string_equal(rb.first[k], ra.first[k]);
    }
    /* a section one number short of either layout */
    le_put_u64(c + 40, old - 8);
    le_put_u64(c + 48, dvi_fnv1a(1469598103934665603u, c, 48));
    assert_int_equal(dvi_model_load_state(m, c, header + wsize + psize + old - 8, msg, sizeof msg), DVI_ERR_PARSE);
    print_message("five-kind health section: loads with the same findings; %zu bytes: %s\n", old - 8, msg);
    assert_non_null(strstr(msg, "health section"));
    free(c);
    free(blob);
    dvi_model_destroy(a);
    dvi_model_destroy(m);
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
    free(blob);
    dvi_model_destroy(a);
    dvi_model_destroy(b);
    dvi_scene_destroy(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dem_blowup),           cmocka_unit_test(test_dvi_tunnelling),
        cmocka_unit_test(test_pendulum_step_too_long), cmocka_unit_test(test_huge_gravity),
        cmocka_unit_test(test_zero_gravity_at_rest),
        cmocka_unit_test(test_work_and_settings),    cmocka_unit_test(test_report_in_state),
        cmocka_unit_test(test_friction_chatter),     cmocka_unit_test(test_report_from_five_kinds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
