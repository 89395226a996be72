/* The Bekker–Wong wheel (<dvi/terrain.h>, src/terrain/bekker_wong.c).
 *
 * Against an independent implementation: tests/data/bekker_wong_reference.py
 * (plain Python, adaptive Simpson to 1e-12, bisection) wrote
 * bekker_wong_reference.csv — the static model (load carried at slip s and
 * slip angle β) for the soils and wheels of Ishigami et al. 2007 (r 0.09 m,
 * b 0.11 m, 50 N) and Ding et al. 2011 (r 0.15735 m, b 0.165 m, 80 N), and
 * the forces at given sinkages. The library's 12-point Gauss–Legendre on
 * each side of θ_m agrees to 1e-5 of the load in every force and the
 * sinkage to 1e-5 relative (measured: 1.1e-6 for both).
 * Closed forms: with no shear (c = 0, φ = 0), θ_m = 0 and θ2 = 0 (λ = 0),
 *   f_z = b k r² (θ1/2 − sin 2θ1 / 4)      (n = 1),
 *   f_x = −b k z^(n+1)/(n+1)                (any n: Bekker's compaction resistance),
 * since r sin θ dθ = −dh; with λ = 1 the stress is even in θ: f_x = 0 and f_z
 * doubles. Slip: the static drawbar pull and torque rise monotonically with
 * s from 0 to 0.9; no slip angle gives no lateral force.
 * In a world at 1 ms: a free wheel settles to the static sinkage under its
 * weight (DVI and DEM, to 0.1 %); a run saved and loaded continues
 * bit-identically; on the carriage at imposed slip (studies/
 * rover/bw_testbed.c, a scene with a "bekker_wong" terrain) the wheel's
 * drawbar pull, lateral force and torque reach the static model's to 0.2 %
 * of the load (times r for the torque), the sinkage to 0.2 % (measured: to
 * the 4 digits printed).
 * Errors: bad soils, loads, wheels and grounds give a status and a message
 * naming the field; a wheel off the height field fails the step, naming it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bw_testbed.h"
#include "dvi/scene.h"
#include "dvi/terrain.h"
#include "test_util.h"

#define H 0.001
#define G 9.81

static dvi_bw_soil soil_named(const char* name)
{
    return strcmp(name, "ding2011") == 0 ? dvi_bw_soil_ding2011() : dvi_bw_soil_ishigami2007();
}

static void wheel_of(const char* name, double* r, double* b)
{
    const int ding = strcmp(name, "ding2011") == 0;
    *r = ding ? 0.15735 : 0.09;
    *b = ding ? 0.165 : 0.11;
}

/* ---- the independent implementation ---- */
static void test_reference(void** state)
{
    (void)state;
    size_t size = 0;
    char* text = test_read_text(SRC_PATH("tests/data/bekker_wong_reference.csv"), &size);
    assert_non_null(text);
    int rows = 0;
    double worst_f = 0.0, worst_z = 0.0;
    for (char* line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        if (line[0] == '#' || strncmp(line, "kind", 4) == 0) continue;
        char kind[16], soil[32];
        double W, s, beta, t1, z, fz, fx, fy, T;
        assert_int_equal(sscanf(line, "%15[^,],%31[^,],%lf,%lf,%lf,%lf,%lf,%lf,%lf,%lf,%lf", kind, soil, &W, &s,
                                &beta, &t1, &z, &fz, &fx, &fy, &T),
                         11);
        const dvi_bw_soil so = soil_named(soil);
        double r, b;
        wheel_of(soil, &r, &b);
        dvi_bw_forces f;
        double scale;
        if (strcmp(kind, "static") == 0) {
            assert_int_equal(dvi_bw_static(&so, r, b, W, s, beta, &f), DVI_OK);
            const double ez = fabs(f.sinkage - z) / z;
            if (ez > worst_z) worst_z = ez;
            assert_true(ez < 1e-5);
            assert_true(fabs(f.normal - W) < 1e-9 * W);
            scale = W;
        } else {
            assert_int_equal(dvi_bw_forces_at(&so, r, b, z, s, beta, &f), DVI_OK);
            scale = fz;
            assert_true(fabs(f.normal - fz) < 1e-5 * scale);
        }
        const double e = fmax(fmax(fabs(f.drawbar_pull - fx), fabs(f.lateral - fy)), fabs(f.torque - T) / r) / scale;
        if (e > worst_f) worst_f = e;
        assert_true(e < 1e-5);
        rows++;
    }
    printf("reference: %d rows; largest force difference %.2e of the load, sinkage %.2e relative\n", rows, worst_f,
           worst_z);
    assert_int_equal(rows, 2 * 9 + 9 + 9 + 9);
    free(text);
}

/* ---- closed forms ---- */
static dvi_bw_soil frictionless(double k_c, double k_phi, double n, double lambda)
{
    dvi_bw_soil s = dvi_bw_soil_ishigami2007();
    s.k_c = k_c, s.k_phi = k_phi, s.n0 = n, s.n1 = 0.0;
    s.cohesion = 0.0, s.friction_angle = 0.0;
    s.a1 = s.a2 = 0.0;
    s.lambda = lambda;
    return s;
}

static void test_bekker_closed_form(void** state)
{
    (void)state;
    const double r = 0.09, b = 0.11;
    for (int which = 0; which < 2; which++) {
        const double n = which ? 1.1 : 1.0;
        const dvi_bw_soil s = frictionless(1.37e3, 814e3, n, 0.0);
        const double k = s.k_c / b + s.k_phi;
        for (double z = 0.002; z < 0.05; z += 0.008) {
            dvi_bw_forces f;
            assert_int_equal(dvi_bw_forces_at(&s, r, b, z, 0.2, 0.0, &f), DVI_OK);
            const double fx = -b * k * pow(z, n + 1.0) / (n + 1.0);
            assert_true(fabs(f.drawbar_pull - fx) < (n == 1.0 ? 1e-12 : 2e-5) * fabs(fx));
            assert_true(f.torque == 0.0 && f.lateral == 0.0);
            if (n == 1.0) {
                const double t1 = acos(1.0 - z / r);
                const double fz = b * k * r * r * (0.5 * t1 - 0.25 * sin(2.0 * t1));
                assert_true(fabs(f.normal - fz) < 1e-12 * fz);
            }
        }
    }
    /* the static solver on the closed form: W(θ1) = W */
    const dvi_bw_soil s = frictionless(1.37e3, 814e3, 1.0, 0.0);
    const double k = s.k_c / b + s.k_phi;
    dvi_bw_forces f;
    assert_int_equal(dvi_bw_static(&s, r, b, 50.0, 0.0, 0.0, &f), DVI_OK);
    const double W = b * k * r * r * (0.5 * f.theta1 - 0.25 * sin(2.0 * f.theta1));
    printf("Bekker n = 1, 50 N: theta1 %.6f rad, sinkage %.6f m, closed form %.12g N\n", f.theta1, f.sinkage, W);
    assert_true(fabs(W - 50.0) < 1e-9);
}

static void test_symmetric(void** state)
{
    (void)state;
    const double r = 0.15735, b = 0.165;
    const dvi_bw_soil s = frictionless(15.6e3, 2407.4e3, 1.0, 1.0);
    const double k = s.k_c / b + s.k_phi;
    for (double z = 0.002; z < 0.05; z += 0.012) {
        dvi_bw_forces f;
        assert_int_equal(dvi_bw_forces_at(&s, r, b, z, 0.0, 0.0, &f), DVI_OK);
        const double t1 = acos(1.0 - z / r), fz = 2.0 * b * k * r * r * (0.5 * t1 - 0.25 * sin(2.0 * t1));
        assert_true(fabs(f.theta2 + t1) < 1e-12);
        assert_true(fabs(f.normal - fz) < 1e-12 * fz);
        assert_true(fabs(f.drawbar_pull) < 1e-12 * fz);
    }
}

static void test_monotone_slip(void** state)
{
    (void)state;
    const char* soils[] = {"ishigami2007", "ding2011"};
    for (int i = 0; i < 2; i++) {
        const dvi_bw_soil so = soil_named(soils[i]);
        double r, b;
        wheel_of(soils[i], &r, &b);
        double last_dp = -INFINITY, last_t = -INFINITY;
        for (int k = 0; k <= 18; k++) {
            dvi_bw_forces f;
            assert_int_equal(dvi_bw_static(&so, r, b, i ? 80.0 : 50.0, 0.05 * k, 0.0, &f), DVI_OK);
            assert_true(f.drawbar_pull > last_dp && f.torque > last_t);
            assert_true(f.lateral == 0.0);
            last_dp = f.drawbar_pull, last_t = f.torque;
        }
        printf("%s: drawbar pull at s = 0.9: %.3f N\n", soils[i], last_dp);
    }
}

/* ---- in a world ---- */
static dvi_world* wheel_world(dvi_method method, double z0, dvi_body_id* wheel)
{
    dvi_world_def wd = dvi_default_world_def();
    wd.method = method;
    dvi_world* w;
    assert_int_equal(dvi_world_create(&wd, &w), DVI_OK);
    dvi_body_def bd = dvi_default_body_def();
    bd.type = DVI_BODY_DYNAMIC;
    bd.mass = 50.0 / G;
    bd.inertia[0] = bd.inertia[4] = bd.inertia[8] = 0.02;
    bd.position[2] = z0;
    assert_int_equal(dvi_body_create(w, &bd, wheel), DVI_OK);
    dvi_shape_def sd = dvi_default_shape_def();
    sd.offset_orientation[0] = sqrt(0.5), sd.offset_orientation[1] = -sqrt(0.5); /* axle along y */
    dvi_shape_id shape;
    dvi_status st = dvi_world_add_cylinder(w, *wheel, &sd, &(dvi_cylinder){0.09, 0.055}, &shape);
    if (st != DVI_OK) printf("%s\n", dvi_error_message());
    assert_int_equal(st, DVI_OK);
    return w;
}

static void settle(dvi_method method)
{
    dvi_body_id wheel;
    dvi_world* w = wheel_world(method, 0.09, &wheel);
    dvi_bw_def d = dvi_default_bw_def();
    d.wheels = &wheel;
    d.wheel_count = 1;
    d.damping = 300.0;
    int32_t index = -1;
    assert_int_equal(dvi_world_add_bekker_wong(w, &d, &index), DVI_OK);
    for (int i = 0; i < 2000; i++) assert_int_equal(dvi_world_step(w, H), DVI_OK);
    dvi_bw_forces f, st;
    assert_int_equal(dvi_bw_wheel_forces(w, index, 0, &f), DVI_OK);
    const dvi_bw_soil so = dvi_bw_soil_ishigami2007();
    assert_int_equal(dvi_bw_static(&so, 0.09, 0.11, 50.0, 0.0, 0.0, &st), DVI_OK);
    double x[3];
    dvi_body_get_position(w, wheel, x);
    printf("%s: settled sinkage %.6f m (centre %.6f m), static %.6f m; normal force %.4f N\n",
           method == DVI_METHOD_DEM ? "DEM" : "DVI", f.sinkage, 0.09 - x[2], st.sinkage, f.normal);
    assert_true(fabs(f.sinkage - st.sinkage) < 1e-3 * st.sinkage);
    assert_true(fabs(f.normal - 50.0) < 1e-3 * 50.0);
    assert_true(f.drawbar_pull == 0.0 && f.torque == 0.0);
    dvi_world_destroy(w);
}

static void test_settle_dvi(void** state)
{
    (void)state;
    settle(DVI_METHOD_DVI);
}

static void test_settle_dem(void** state)
{
    (void)state;
    settle(DVI_METHOD_DEM);
}

/* A rolling wheel saved mid-run and loaded into a world built the same way
 * continues bit-identically (the element's state, the slip relaxation of
 * each wheel, is saved with the world); a damaged element state is
 * refused, naming the wheel. */
static dvi_world* rolling_world(dvi_body_id* wheel)
{
    dvi_world* w = wheel_world(DVI_METHOD_DVI, 0.08, wheel);
    assert_int_equal(dvi_body_set_velocity(w, *wheel, (double[3]){0.2, 0.01, 0.0}, (double[3]){0.0, 3.0, 0.0}),
                     DVI_OK);
    dvi_bw_def d = dvi_default_bw_def();
    d.wheels = wheel;
    d.wheel_count = 1;
    d.damping = 300.0;
    assert_int_equal(dvi_world_add_bekker_wong(w, &d, NULL), DVI_OK);
    return w;
}

static void test_resume(void** state)
{
    (void)state;
    dvi_body_id a, b;
    dvi_world* wa = rolling_world(&a);
    for (int i = 0; i < 200; i++) assert_int_equal(dvi_world_step(wa, H), DVI_OK);
    void* blob = NULL;
    size_t size = 0;
    assert_int_equal(dvi_world_save_state(wa, &blob, &size), DVI_OK);
    dvi_world* wb = rolling_world(&b);
    assert_int_equal(dvi_world_load_state(wb, blob, size), DVI_OK);
    /* the element's state (magic "BWS1", the wheel count, then per wheel the
     * flag, the direction and four doubles) ends the blob: a flag of 7 is
     * refused (the blob resealed: FNV-1a 64 over all but header bytes 56..63) */
    unsigned char* bad = malloc(size);
    memcpy(bad, blob, size);
    const size_t wheel_at = size - (2 + 4 * 8);
    assert_memory_equal(bad + wheel_at - 8, "BWS1", 4);
    bad[wheel_at] = 7;
    uint64_t hsum = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < size; i++) {
        if (i >= 56 && i < 64) continue;
        hsum ^= bad[i];
        hsum *= 0x100000001b3ull;
    }
    for (int k = 0; k < 8; k++) bad[56 + k] = (unsigned char)(hsum >> (8 * k));
    assert_int_equal(dvi_world_load_state(wb, bad, size), DVI_ERR_PARSE);
    printf("damaged state: %s\n", dvi_world_last_error(wb));
    assert_non_null(strstr(dvi_world_last_error(wb), "wheels[0]"));
    free(bad);
    free(blob);
    for (int i = 0; i < 300; i++) {
        assert_int_equal(dvi_world_step(wa, H), DVI_OK);
        assert_int_equal(dvi_world_step(wb, H), DVI_OK);
    }
    double xa[19], xb[19];
    test_body_state(wa, a, xa);
    test_body_state(wb, b, xb);
    assert_memory_equal(xa, xb, sizeof xa);
    assert_true(xa[0] > 0.05); /* it rolled */
    dvi_world_destroy(wa);
    dvi_world_destroy(wb);
}

static void carriage(const char* soil, double slip, double beta)
{
    bw_rig_config c = bw_rig_default(soil);
    c.slip = slip;
    c.slip_angle = beta;
    bw_rig_result res;
    char msg[512] = "";
    dvi_status st = bw_rig_run(&c, &res, msg, sizeof msg);
    if (st != DVI_OK) printf("rig: %s\n", msg);
    assert_int_equal(st, DVI_OK);
    const dvi_bw_soil so = soil_named(soil);
    dvi_bw_forces f;
    assert_int_equal(dvi_bw_static(&so, c.radius, c.width, c.load, slip, beta, &f), DVI_OK);
    printf("%s s = %.2f beta = %.3f: dynamic DP %.4f N Fy %.4f N T %.4f N m z %.5f m (slip %.4f, spread %.1e m); "
           "static %.4f N %.4f N %.4f N m %.5f m\n",
           soil, slip, beta, res.drawbar_pull, res.lateral, res.torque, res.sinkage, res.slip_measured,
           res.sinkage_spread, f.drawbar_pull, f.lateral, f.torque, f.sinkage);
    assert_true(fabs(res.drawbar_pull - f.drawbar_pull) < 0.002 * c.load);
    assert_true(fabs(res.lateral - f.lateral) < 0.002 * c.load);
    assert_true(fabs(res.torque - f.torque) < 0.002 * c.load * c.radius);
    assert_true(fabs(res.sinkage - f.sinkage) < 0.002 * f.sinkage);
}

static void test_carriage_slip(void** state)
{
    (void)state;
    carriage("ishigami2007", 0.3, 0.0);
    carriage("ishigami2007", 0.5, 10.0 * 3.14159265358979323846 / 180.0);
    carriage("ding2011", 0.6, 0.0);
}

/* ---- a height field and errors ---- */
static void test_height_field(void** state)
{
    (void)state;
    dvi_body_id wheel;
    dvi_world* w = wheel_world(DVI_METHOD_DVI, 0.11, &wheel);
    double heights[16];
    for (int i = 0; i < 16; i++) heights[i] = 0.02;
    dvi_body_def gd = dvi_default_body_def();
    gd.type = DVI_BODY_FIXED;
    gd.position[0] = gd.position[1] = -0.3;
    dvi_body_id ground;
    assert_int_equal(dvi_body_create(w, &gd, &ground), DVI_OK);
    dvi_shape_def sd = dvi_default_shape_def();
    dvi_shape_id hf;
    sd.collision_mask = 0; /* the wheel meets the soil through the model only */
    assert_int_equal(dvi_world_add_heightfield(w, ground, &sd, &(dvi_height_grid){4, 4, 0.2, 0.2, heights}, &hf),
                     DVI_OK);
    dvi_bw_def d = dvi_default_bw_def();
    d.wheels = &wheel;
    d.wheel_count = 1;
    d.damping = 300.0;
    d.ground_set = true;
    d.ground_body = wheel; /* not fixed */
    assert_int_equal(dvi_world_add_bekker_wong(w, &d, NULL), DVI_ERR_INVALID_ARG);
    d.ground_body = ground;
    int32_t index;
    assert_int_equal(dvi_world_add_bekker_wong(w, &d, &index), DVI_OK);
    for (int i = 0; i < 2000; i++) assert_int_equal(dvi_world_step(w, H), DVI_OK);
    dvi_bw_forces f, st;
    dvi_bw_wheel_forces(w, index, 0, &f);
    const dvi_bw_soil so = dvi_bw_soil_ishigami2007();
    dvi_bw_static(&so, 0.09, 0.11, 50.0, 0.0, 0.0, &st);
    double x[3];
    dvi_body_get_position(w, wheel, x);
    printf("height field at 0.02 m: sinkage %.6f m, centre %.6f m (static %.6f m)\n", f.sinkage, x[2], st.sinkage);
    assert_true(fabs(f.sinkage - st.sinkage) < 1e-3 * st.sinkage);
    assert_true(fabs(x[2] - (0.02 + 0.09 - st.sinkage)) < 1e-3 * st.sinkage);
    /* off the field: the step fails, naming the wheel */
    assert_int_equal(dvi_body_set_velocity(w, wheel, (double[3]){2.0, 0.0, 0.0}, (double[3]){0.0, 0.0, 0.0}), DVI_OK);
    dvi_status st_off = DVI_OK;
    int steps = 0;
    while (st_off == DVI_OK && steps < 1000) st_off = dvi_world_step(w, H), steps++;
    assert_int_not_equal(st_off, DVI_OK);
    assert_true(steps > 100 && steps < 300); /* the centre crosses x = 0.3 m after about 0.15 s */
    printf("off the field: %s\n", dvi_error_message());
    assert_non_null(strstr(dvi_error_message(), "height field"));
    dvi_world_destroy(w);
}

/* A sloped height field and the plane of the same slope give the same
 * forces: the field's normal and point under the wheel are the plane's. */
static void sloped_forces(bool field, dvi_bw_forces* out)
{
    dvi_body_id wheel;
    dvi_world* w = wheel_world(DVI_METHOD_DVI, 0.085, &wheel);
    assert_int_equal(dvi_body_set_velocity(w, wheel, (double[3]){0.1, 0.02, 0.0}, (double[3]){0.0, 1.5, 0.0}),
                     DVI_OK);
    dvi_bw_def d = dvi_default_bw_def();
    d.wheels = &wheel;
    d.wheel_count = 1;
    d.damping = 300.0;
    const double slope = 0.1; /* ground z = 0.1 x */
    if (field) {
        double heights[25];
        for (int j = 0; j < 5; j++)
            for (int i = 0; i < 5; i++) heights[j * 5 + i] = slope * (-0.4 + 0.2 * i);
        dvi_body_def gd = dvi_default_body_def();
        gd.type = DVI_BODY_FIXED;
        gd.position[0] = gd.position[1] = -0.4;
        dvi_body_id ground;
        dvi_shape_id hf;
        assert_int_equal(dvi_body_create(w, &gd, &ground), DVI_OK);
        dvi_shape_def sd = dvi_default_shape_def();
        sd.collision_mask = 0;
        assert_int_equal(
            dvi_world_add_heightfield(w, ground, &sd, &(dvi_height_grid){5, 5, 0.2, 0.2, heights}, &hf), DVI_OK);
        d.ground_set = true;
        d.ground_body = ground;
    } else {
        d.plane_normal[0] = -slope; /* scaled to unit length by the element */
        d.plane_normal[2] = 1.0;
    }
    int32_t index;
    assert_int_equal(dvi_world_add_bekker_wong(w, &d, &index), DVI_OK);
    assert_int_equal(dvi_world_step(w, H), DVI_OK);
    assert_int_equal(dvi_bw_wheel_forces(w, index, 0, out), DVI_OK);
    dvi_world_destroy(w);
}

static void test_sloped_field(void** state)
{
    (void)state;
    dvi_bw_forces a, b;
    sloped_forces(false, &a);
    sloped_forces(true, &b);
    printf("slope 0.1: plane z %.9f m s %.6f beta %.6f DP %.6f N; field z %.9f m DP %.6f N\n", a.sinkage, a.slip,
           a.slip_angle, a.drawbar_pull, b.sinkage, b.drawbar_pull);
    /* the lowest point of the rim is r along −n from the centre, which stands 0.085/|(−0.1, 0, 1)| m above the plane */
    const double z = 0.09 - 0.085 / sqrt(1.01);
    assert_true(fabs(a.sinkage - z) < 1e-12);
    assert_true(fabs(b.sinkage - a.sinkage) < 1e-12 && fabs(b.normal - a.normal) < 1e-9 * a.normal);
    assert_true(fabs(b.drawbar_pull - a.drawbar_pull) < 1e-9 * a.normal);
    assert_true(fabs(b.lateral - a.lateral) < 1e-9 * a.normal && a.lateral != 0.0);
}

static void test_errors(void** state)
{
    (void)state;
    dvi_bw_soil s = dvi_bw_soil_ishigami2007();
    dvi_bw_forces f;
    assert_int_equal(dvi_bw_forces_at(&s, 0.09, 0.11, 0.2, 0.0, 0.0, &f), DVI_ERR_INVALID_ARG);
    assert_non_null(strstr(dvi_error_message(), "sinkage"));
    assert_int_equal(dvi_bw_forces_at(&s, 0.09, 0.11, 0.01, 1.5, 0.0, &f), DVI_ERR_INVALID_ARG);
    assert_non_null(strstr(dvi_error_message(), "slip"));
    assert_int_equal(dvi_bw_static(&s, 0.09, 0.11, 1e6, 0.0, 0.0, &f), DVI_ERR_INVALID_ARG);
    assert_non_null(strstr(dvi_error_message(), "carries at most"));
    assert_int_equal(dvi_bw_static(&s, 0.09, -1.0, 50.0, 0.0, 0.0, &f), DVI_ERR_INVALID_ARG);
    assert_non_null(strstr(dvi_error_message(), "width"));
    s.K_x0 = 0.0;
    assert_int_equal(dvi_bw_static(&s, 0.09, 0.11, 50.0, 0.0, 0.0, &f), DVI_ERR_INVALID_ARG);
    assert_non_null(strstr(dvi_error_message(), "soil.K_x0"));
    /* never NaN: a wheel at rest, spinning in place, locked and sliding */
    dvi_body_id wheel;
    dvi_world* w = wheel_world(DVI_METHOD_DVI, 0.08, &wheel);
    dvi_bw_def d = dvi_default_bw_def();
    d.wheels = &wheel;
    d.wheel_count = 1;
    int32_t index;
    assert_int_equal(dvi_world_add_bekker_wong(w, &d, &index), DVI_OK);
    const double cases[4][6] = {{0, 0, 0, 0, 0, 0}, {0, 0, 0, 0, 5, 0}, {0.3, 0, 0, 0, 0, 0}, {0, 0.2, 0, 0, 1e-9, 0}};
    for (int i = 0; i < 4; i++) {
        assert_int_equal(dvi_body_set_velocity(w, wheel, cases[i], cases[i] + 3), DVI_OK);
        assert_int_equal(dvi_world_step(w, H), DVI_OK);
        assert_int_equal(dvi_bw_wheel_forces(w, index, 0, &f), DVI_OK);
        assert_true(isfinite(f.normal) && isfinite(f.drawbar_pull) && isfinite(f.lateral) && isfinite(f.torque));
        assert_true(f.slip >= -1.0 && f.slip <= 1.0);
    }
    assert_int_equal(dvi_bw_wheel_forces(w, index, 1, &f), DVI_ERR_INVALID_ARG);
    assert_int_equal(dvi_bw_wheel_forces(w, index + 1, 0, &f), DVI_ERR_INVALID_ARG);
    d.wheel_count = 0;
    assert_int_equal(dvi_world_add_bekker_wong(w, &d, NULL), DVI_ERR_INVALID_ARG);
    assert_non_null(strstr(dvi_error_message(), "wheel_count"));
    /* a body without a cylinder */
    dvi_body_def bd = dvi_default_body_def();
    bd.type = DVI_BODY_DYNAMIC;
    dvi_body_id ball;
    assert_int_equal(dvi_body_create(w, &bd, &ball), DVI_OK);
    d.wheels = &ball;
    d.wheel_count = 1;
    assert_int_equal(dvi_world_add_bekker_wong(w, &d, NULL), DVI_ERR_INVALID_ARG);
    assert_non_null(strstr(dvi_error_message(), "cylinder"));
    dvi_world_destroy(w);
}

/* ---- the scene's "bekker_wong" entries ---- */
static void scene_error(const char* terrain, const char* expect)
{
    char text[2048];
    snprintf(text, sizeof text,
             "{\"bodies\": [{\"name\": \"wheel\", \"mass\": 5, \"inertia\": [1, 1, 1], \"shapes\": [{\"type\": "
             "\"cylinder\", \"radius\": 0.09, \"half_length\": 0.055}]},"
             "{\"name\": \"box\", \"mass\": 5, \"inertia\": [1, 1, 1], \"shapes\": [{\"type\": \"box\", "
             "\"half_extents\": [0.1, 0.1, 0.1]}]}],"
             "\"terrain\": [%s], \"formulation\": {\"dt\": 0.001}, \"duration\": 1}",
             terrain);
    dvi_scene* s = NULL;
    dvi_scene_errors errs = {0};
    dvi_status st = dvi_scene_parse(text, strlen(text), NULL, &s, &errs);
    if (!expect) {
        if (st != DVI_OK) printf("unexpected: %s\n", errs.text);
        assert_int_equal(st, DVI_OK);
        dvi_model* m = NULL;
        char msg[256];
        assert_int_equal(dvi_model_create(s, &m, msg, sizeof msg), DVI_OK);
        assert_int_equal(dvi_world_force_element_count(dvi_model_world(m)), 1);
        dvi_model_destroy(m);
        dvi_scene_destroy(s);
    } else {
        assert_int_not_equal(st, DVI_OK);
        printf("%s\n", errs.text);
        assert_non_null(strstr(errs.text, expect));
    }
    dvi_scene_errors_free(&errs);
}

static void test_scene_entries(void** state)
{
    (void)state;
    scene_error("{\"model\": \"bekker_wong\", \"wheels\": [\"wheel\"], \"soil\": \"ding2011\", \"ground\": "
                "{\"height\": -0.01, \"normal\": [0, 0.1, 1]}, \"damping\": 100}",
                NULL);
    scene_error("{\"model\": \"bekker_wong\", \"wheels\": [\"wheel\"], \"soil\": {\"preset\": \"ishigami2007\", "
                "\"n1\": 0.5}, \"ground\": {\"height\": 0}}",
                NULL);
    scene_error("{\"model\": \"bekker_wong\", \"wheels\": [\"wheel\"], \"soil\": \"clay\", \"ground\": {\"height\": 0}}",
                "terrain[0].soil: unknown soil");
    scene_error("{\"model\": \"bekker_wong\", \"wheels\": [\"wheels\"], \"soil\": \"ding2011\", \"ground\": {\"height\": 0}}",
                "terrain[0].wheels[0]: no body named");
    scene_error("{\"model\": \"bekker_wong\", \"wheels\": [\"box\"], \"soil\": \"ding2011\", \"ground\": {\"height\": 0}}",
                "terrain[0].wheels[0]: must name a dynamic body with a cylinder");
    scene_error("{\"model\": \"bekker_wong\", \"wheels\": [\"wheel\"], \"soil\": {\"k_c\": 1}, \"ground\": {\"height\": 0}}",
                "terrain[0].soil");
    scene_error("{\"model\": \"bekker_wong\", \"wheels\": [\"wheel\"], \"soil\": \"ding2011\", \"ground\": {\"body\": \"box\"}}",
                "terrain[0].ground.body: must name a fixed body");
    scene_error("{\"model\": \"bekker_wong\", \"wheels\": [\"wheel\"], \"soil\": \"ding2011\", \"ground\": {\"height\": 0}, "
                "\"damping\": -1}",
                "terrain[0].damping");
    scene_error("{\"model\": \"bekker_wong\", \"wheels\": [\"wheel\"], \"soil\": \"ding2011\"}",
                "missing key \"ground\"");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reference),     cmocka_unit_test(test_bekker_closed_form),
        cmocka_unit_test(test_symmetric),     cmocka_unit_test(test_monotone_slip),
        cmocka_unit_test(test_settle_dvi),    cmocka_unit_test(test_settle_dem),
        cmocka_unit_test(test_resume),
        cmocka_unit_test(test_carriage_slip), cmocka_unit_test(test_height_field),
        cmocka_unit_test(test_sloped_field),  cmocka_unit_test(test_errors),
        cmocka_unit_test(test_scene_entries),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
