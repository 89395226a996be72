/* The single-wheel rig of studies/rover/wheel_testbed.c: on rigid ground a
 * slipping wheel's drawbar pull is Coulomb's ±μW exactly, its motor torque
 * DP·r, its load W, and a square wave in slip or load is followed within
 * the step that switches; on a small bin of the rover's grains a wheel that spins
 * faster than it advances pulls and one that is dragged brakes; bad
 * configurations and reference files are refused with the field named. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "wheel_testbed.h"
#include "test_util.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>


static testbed_config rig(void)
{
    testbed_config c = testbed_default_config();
    char msg[256];
    if (wheel_params_read(ROVER_JSON, &c.wheel, msg, sizeof msg) != DVI_OK) fail_msg("%s", msg);
    return c;
}

/* The rig on rigid ground with a plain wheel. */
static testbed_config rigid_rig(void)
{
    testbed_config c = rig();
    c.grain_radius = 0.0;
    c.grousers = 0;
    return c;
}

/* Rigid ground, plain wheel: while it slips, the friction is saturated, so
 * the ground's forward force is +μW when the wheel spins faster than it
 * advances (s < 0) and −μW when it is dragged (s > 0), whatever |s|. */
static void test_rigid_coulomb(void** state)
{
    (void)state;
    testbed_config c = rigid_rig();
    c.duration = 1.0;
    c.window_start = 0.6;
    const double slips[] = {-0.5, -0.05, 0.3};
    const double sign[] = {1.0, 1.0, -1.0};
    for (int k = 0; k < 3; k++) {
        c.slip = slips[k];
        testbed_result r;
        char msg[256];
        assert_int_equal(testbed_run(&c, NULL, NULL, &r, msg, sizeof msg), DVI_OK);
        print_message("rigid, s = %+.2f: DP %.4f N, Fz %.4f N, torque %.4f N m, slip %.9f\n", slips[k],
                      r.drawbar_pull, r.vertical, r.torque, r.slip_measured);
        assert_near(r.drawbar_pull, sign[k] * 0.4 * 480.03, 0.5);
        assert_near(r.vertical, 480.03, 0.5);
        assert_near(r.torque, r.drawbar_pull * 0.25, 0.2);
        assert_near(r.slip_measured, slips[k], 1e-6);
        assert_near(r.sinkage, 0.0, 1e-3);
        assert_int_equal(r.unconverged_steps, 0);
        assert_int_equal(r.grains, 0);
    }
}

/* The square wave on rigid ground (plain wheel): Coulomb friction answers a
 * change at once, so every 10-step sample after a switch carries the new
 * pull: μ times the new load while s < 0, −μ times it after a switch to a
 * dragged wheel. The switches fall on the samples' boundaries. */
typedef struct square_samples {
    const testbed_config* c;
    int checked;
    double rows[400][4]; /* every sample, for testbed_fold */
    long n;
} square_samples;

static void check_square_sample(void* user, double t, double fx, double fz, double torque, double sinkage)
{
    square_samples* s = user;
    const testbed_config* c = s->c;
    if (s->n < 400) {
        s->rows[s->n][0] = t, s->rows[s->n][1] = fx, s->rows[s->n][2] = fz, s->rows[s->n][3] = sinkage;
        s->n++;
    }
    const double w = c->sample_every * c->dt;
    if (t - w < c->switch_start - 1e-9) return;
    const double since = fmod(t - w - c->switch_start + 1e-9, c->switch_period);
    const bool alt = since < 0.5 * c->switch_period;
    const double load = alt ? c->load_alt : c->load, slip = alt ? c->slip_alt : c->slip;
    const double pull = (slip < 0.0 ? 0.4 : -0.4) * load;
    if (fabs(fx - pull) > 1.0 || fabs(fz - load) > 2.0 || fabs(torque - 0.25 * fx) > 0.5)
        fail_msg("t = %g s (%s half): DP %.3f N, Fz %.3f N, torque %.3f N m; expected DP %.3f, Fz %.3f", t,
                 alt ? "alternate" : "first", fx, fz, torque, pull, load);
    s->checked++;
}

static void test_rigid_square_wave(void** state)
{
    (void)state;
    testbed_config c = rigid_rig();
    c.duration = 1.9;
    c.window_start = 1.0;
    c.sample_every = 10;
    c.switch_start = 0.7;
    c.switch_period = 0.4;
    const double alt_slip[] = {-0.1, 0.2}, alt_load[] = {600.0, 350.0};
    for (int k = 0; k < 2; k++) {
        c.slip = -0.3;
        c.slip_alt = alt_slip[k];
        c.load_alt = alt_load[k];
        static square_samples s;
        s.c = &c, s.checked = 0, s.n = 0;
        testbed_result r;
        char msg[256];
        assert_int_equal(testbed_run(&c, check_square_sample, &s, &r, msg, sizeof msg), DVI_OK);
        print_message("rigid square wave to s = %+.2f, W = %.0f N: %d samples checked\n", alt_slip[k], alt_load[k],
                      s.checked);
        /* every sample from the first switch on: 1.2 s of 10 ms */
        assert_int_equal(s.checked, 120);

        /* folded: three periods of 40 samples; the plateaus are ±μ times each
         * load, reached in the first sample after either switch */
        testbed_folded fo;
        assert_int_equal(testbed_fold(&c, (const double(*)[4])s.rows, s.n, &fo, msg, sizeof msg), 0);
        print_message("folded: %d periods of %d samples; plateaus %.3f / %.3f N; t63 %g / %g s, t90 %g / %g s\n",
                      fo.periods, fo.bins, fo.plateau[0], fo.plateau[1], fo.t63[0], fo.t63[1], fo.t90[0], fo.t90[1]);
        assert_int_equal(fo.periods, 3);
        assert_int_equal(fo.bins, 40);
        assert_near(fo.plateau[0], 0.4 * c.load, 1.0); /* s = −0.3 */
        assert_near(fo.plateau[1], (alt_slip[k] < 0.0 ? 0.4 : -0.4) * alt_load[k], 1.0);
        for (int sw = 0; sw < 2; sw++) {
            assert_near(fo.t63[sw], 0.01, 1e-12);
            assert_near(fo.t90[sw], 0.01, 1e-12);
        }
        for (int b = 0; b < fo.bins; b++) {
            const double load = b < 20 ? alt_load[k] : c.load;
            assert_near(fo.mean[fo.bins + b], load, 2.0);
            assert_true(fo.se[b] < 1.0 && fo.se[fo.bins + b] < 1.0);
        }
        testbed_folded_free(&fo);

        /* refused: an odd number of samples per period, fewer than two periods */
        testbed_config bad = c;
        bad.switch_period = 0.03;
        assert_int_equal(testbed_fold(&bad, (const double(*)[4])s.rows, s.n, &fo, msg, sizeof msg), -1);
        print_message("refused: %s\n", msg);
        assert_true(strncmp(msg, "switch_period:", 14) == 0);
        bad = c;
        bad.duration = 1.4;
        assert_int_equal(testbed_fold(&bad, (const double(*)[4])s.rows, s.n, &fo, msg, sizeof msg), -1);
        print_message("refused: %s\n", msg);
        assert_true(strncmp(msg, "duration:", 9) == 0);
    }
}

/* A small bin of 0.03 m grains (shorter and narrower than the sweep's).
 * Measured: see the messages; the bounds are a fifth of the load in each
 * direction, about twice the run-to-run scatter of a 0.3 s window. Under
 * the sanitizers (test_util.h) only the driven wheel (s = −0.6) runs; the
 * optimised build checks both. */
static void test_grains_pull_and_brake(void** state)
{
    (void)state;
    testbed_config c = rig();
    c.length = 1.0;
    c.width = 0.6;
    c.duration = 0.8;
    c.window_start = 0.5;
    testbed_result spin;
    char msg[256];
    c.slip = -0.6;
    assert_int_equal(testbed_run(&c, NULL, NULL, &spin, msg, sizeof msg), DVI_OK);
    print_message("grains (%lld): s = -0.6: DP %.1f +- %.1f N, Fz %.1f N, sinkage %.4f m\n", spin.grains,
                  spin.drawbar_pull, spin.drawbar_pull_se, spin.vertical, spin.sinkage);
    assert_true(spin.grains > 300 && spin.grains < 1000);
    assert_true(spin.drawbar_pull > 0.2 * c.load);
    /* the slider carries the load: the grains hold the wheel up */
    assert_near(spin.vertical, c.load, 0.05 * c.load);
    /* the grousers (0.02 m) dig in; the rim stays above the first layer's centres */
    assert_true(spin.sinkage > 0.005 && spin.sinkage < 0.06);
#ifndef SANITIZED
    testbed_result drag;
    c.slip = 0.3;
    assert_int_equal(testbed_run(&c, NULL, NULL, &drag, msg, sizeof msg), DVI_OK);
    print_message("grains (%lld): s = +0.3: DP %.1f +- %.1f N, Fz %.1f N, sinkage %.4f m\n", drag.grains,
                  drag.drawbar_pull, drag.drawbar_pull_se, drag.vertical, drag.sinkage);
    assert_true(drag.drawbar_pull < -0.2 * c.load);
    assert_near(drag.vertical, c.load, 0.05 * c.load);
    assert_true(drag.sinkage > 0.005 && drag.sinkage < 0.06);
#endif
}

static void expect_refused(const testbed_config* c, const char* field)
{
    char msg[256] = "";
    FILE* f = tmpfile();
    assert_non_null(f);
    assert_int_equal(testbed_write_scene(c, f, msg, sizeof msg), -1);
    fclose(f);
    testbed_result r;
    assert_int_equal(testbed_run(c, NULL, NULL, &r, msg, sizeof msg), DVI_ERR_INVALID_ARG);
    print_message("refused: %s\n", msg);
    if (strncmp(msg, field, strlen(field)) != 0) fail_msg("expected a message naming %s, got \"%s\"", field, msg);
}

static void test_bad_config(void** state)
{
    (void)state;
    testbed_config c = rig();
    c.slip = -1.0;
    expect_refused(&c, "slip:");
    c = rig();
    c.slip = NAN;
    expect_refused(&c, "slip:");
    c = rig();
    c.load = 10.0; /* less than the wheel's own weight */
    expect_refused(&c, "load:");
    c = rig();
    c.duration = 6.0; /* the wheel would reach the end wall */
    expect_refused(&c, "slip: the wheel would reach");
    c = rig();
    c.width = 0.45;
    expect_refused(&c, "width:");
    c = rig();
    c.window_start = c.duration;
    expect_refused(&c, "window_start:");
    c = rig();
    c.wheel.inertia[1] = 0.0;
    expect_refused(&c, "wheel.inertia[1]:");
    c = rig();
    c.max_iterations = 0;
    expect_refused(&c, "max_iterations:");
    c = rig();
    c.tolerance = NAN;
    expect_refused(&c, "tolerance:");
    c = rig();
    c.rolling_friction = -0.001;
    expect_refused(&c, "rolling_friction:");
    c = rig();
    c.switch_period = 0.0015; /* not a whole number of steps per half */
    expect_refused(&c, "switch_period:");
    c = rig();
    c.switch_period = 0.4;
    c.switch_start = 0.2; /* inside the ramp */
    expect_refused(&c, "switch_start:");
    c = rig();
    c.switch_period = 0.4;
    c.slip_alt = -1.5;
    expect_refused(&c, "slip_alt:");
    c = rig();
    c.switch_period = 0.4;
    c.load_alt = NAN;
    expect_refused(&c, "load_alt:");
    c = rig();
    c.switch_period = 0.4;
    c.slip_alt = 0.8; /* faster: the wheel would reach the end wall */
    expect_refused(&c, "slip: the wheel would reach");
}

static void test_bad_reference(void** state)
{
    (void)state;
    wheel_params w;
    char msg[256];
    assert_int_equal(wheel_params_read("/nonexistent/rover.json", &w, msg, sizeof msg), DVI_ERR_IO);
    const char* bad[][2] = {
        {"{\"wheels\": ", "malformed JSON"},
        {"{\"wheels\": {\"radius\": -0.25, \"width\": 0.4}}", "wheels.radius"},
        {"{\"wheels\": {\"radius\": 0.25, \"width\": 0.4}, \"parts\": {}}", "parts.wheel_RF.mass"},
        {"{\"wheels\": {\"radius\": 0.25, \"width\": 0.4}, \"parts\": {\"wheel_RF\": {\"mass\": 1.8, "
         "\"inertia_about_com\": [[1, 0, 0], [0, \"x\", 0], [0, 0, 1]]}}}",
         "parts.wheel_RF.inertia_about_com[1][1]"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        char path[64];
        snprintf(path, sizeof path, "test_wheel_slip_bad%zu.json", k);
        FILE* f = fopen(path, "w");
        assert_non_null(f);
        fputs(bad[k][0], f);
        fclose(f);
        assert_int_equal(wheel_params_read(path, &w, msg, sizeof msg), DVI_ERR_PARSE);
        print_message("%s\n", msg);
        if (!strstr(msg, bad[k][1])) fail_msg("expected \"%s\" in \"%s\"", bad[k][1], msg);
        remove(path);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rigid_coulomb),
        cmocka_unit_test(test_rigid_square_wave),
        cmocka_unit_test(test_bad_config),
        cmocka_unit_test(test_bad_reference),
        cmocka_unit_test(test_grains_pull_and_brake),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
