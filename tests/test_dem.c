/* The DEM penalty back end against analytic answers (docs/dem.md).
 * Each test prints what it measured and the bound it checks; the bounds are
 * those a penalty model can meet (elastic overlap and tangential spring
 * displacements are part of the model, not errors). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rover_model.h"
#include "dem.h"
#include "dvi/scene.h"
#include "dvi/world.h"
#include "test_util.h"


#define PI 3.14159265358979323846
#define G 9.81

static dvi_world* make_world(dvi_dem_normal_model model, bool gravity)
{
    dvi_world_def wd = dvi_default_world_def();
    wd.method = DVI_METHOD_DEM;
    wd.dem.normal_model = model;
    if (!gravity) wd.gravity[2] = 0.0;
    dvi_world* w = NULL;
    assert_int_equal(dvi_world_create(&wd, &w), DVI_OK);
    return w;
}

static dvi_material material(double E, double e, double mu)
{
    dvi_material m = dvi_default_shape_def().material;
    m.young_modulus = E;
    m.poisson_ratio = 0.3;
    m.restitution = e;
    m.friction = mu;
    return m;
}

/* A fixed plane through the origin, normal R_x(θ) e_z = (0, −sin θ, cos θ). */
static dvi_body_id add_plane(dvi_world* w, double theta, dvi_material m)
{
    dvi_shape_def sd = test_plane_def(theta);
    sd.material = m;
    return test_fixed_plane(w, &sd);
}

static dvi_body_id add_sphere(dvi_world* w, const double x[3], double r, double mass, dvi_material m)
{
    dvi_body_def bd = dvi_default_body_def();
    bd.mass = mass;
    bd.inertia[0] = bd.inertia[4] = bd.inertia[8] = 0.4 * mass * r * r;
    for (int k = 0; k < 3; k++) bd.position[k] = x[k];
    dvi_body_id b;
    assert_int_equal(dvi_body_create(w, &bd, &b), DVI_OK);
    dvi_shape_def sd = dvi_default_shape_def();
    sd.type = DVI_SHAPE_SPHERE;
    sd.radius = r;
    sd.material = m;
    dvi_shape_id s;
    assert_int_equal(dvi_shape_create(w, b, &sd, &s), DVI_OK);
    return b;
}

/* A cube of half side s resting on the incline of angle θ (rotated with it),
 * its centre `lift` above the plane along the normal. */
static dvi_body_id add_box_on_incline(dvi_world* w, double theta, double s, double mass, double lift, dvi_material m)
{
    dvi_body_def bd = dvi_default_body_def();
    bd.mass = mass;
    bd.inertia[0] = bd.inertia[4] = bd.inertia[8] = mass * 4 * s * s / 6.0;
    bd.position[1] = -sin(theta) * lift;
    bd.position[2] = cos(theta) * lift;
    bd.orientation[0] = cos(theta / 2);
    bd.orientation[1] = sin(theta / 2);
    dvi_body_id b;
    assert_int_equal(dvi_body_create(w, &bd, &b), DVI_OK);
    dvi_shape_def sd = dvi_default_shape_def();
    sd.type = DVI_SHAPE_BOX;
    sd.half_extents[0] = sd.half_extents[1] = sd.half_extents[2] = s;
    sd.material = m;
    dvi_shape_id sid;
    assert_int_equal(dvi_shape_create(w, b, &sd, &sid), DVI_OK);
    return b;
}

static void run(dvi_world* w, double h, double seconds)
{
    long n = lround(seconds / h);
    for (long i = 0; i < n; i++) {
        dvi_status st = dvi_world_step(w, h);
        if (st < 0) fail_msg("step %ld: %s", i, dvi_world_last_error(w));
    }
}

static double dist3(const double* a, const double* b)
{
    return sqrt((a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) + (a[2] - b[2]) * (a[2] - b[2]));
}

/* E* of two equal materials. */
static double e_star(double E, double nu)
{
    return E / (2.0 * (1.0 - nu * nu));
}

/* ---- restitution ↔ damping -------------------------------------------------------- */

/* The clamped Hooke collision has a closed form (Schwager & Pöschel 2007):
 * e = exp(−r (π − 2 atan r)), r = β/ω, β = α/2, ω = sqrt(1 − β²). */
static void test_restitution_map(void** state)
{
    (void)state;
    const double alphas[4] = {0.1, 0.5, 1.0, 1.8};
    for (int k = 0; k < 4; k++) {
        double b = alphas[k] / 2, r = b / sqrt(1 - b * b);
        double closed = exp(-r * (PI - 2 * atan(r)));
        double num = wld_dem_restitution(0, alphas[k]);
        assert_near(num, closed, 1e-4);
    }
    const double es[4] = {0.1, 0.5, 0.9, 0.99};
    for (int m = 0; m < 2; m++)
        for (int k = 0; k < 4; k++) {
            double a = wld_dem_alpha(m, es[k]);
            assert_near(wld_dem_restitution(m, a), es[k], 1e-6);
        }
    /* the clamp matters: the unclamped log-decrement value would give e = 0.55, not 0.5 */
    double a_log = 2 * -log(0.5) / sqrt(PI * PI + log(0.5) * log(0.5));
    print_message("Hooke e = 0.5: alpha %.6f (log-decrement, unclamped: %.6f -> e %.4f with the clamp); "
                  "Hertz e = 0.5: alpha %.6f (Antypov-Elliott, unclamped: %.6f)\n",
                  wld_dem_alpha(0, 0.5), a_log, wld_dem_restitution(0, a_log), wld_dem_alpha(1, 0.5),
                  sqrt(5.0) * -log(0.5) / sqrt(PI * PI + log(0.5) * log(0.5)));
    assert_int_equal(wld_dem_alpha(1, 1.0) == 0.0, 1);
    /* Feng's phase-space map sends the Hertz model onto the Hooke one with
     * α_Hertz = (√5/2) α_Hooke, the clamp included */
    for (int k = 0; k < 4; k++) assert_near(wld_dem_alpha(1, es[k]) / wld_dem_alpha(0, es[k]), sqrt(5.0) / 2, 2e-4);
}

/* Two equal spheres (R = 0.1 m, m = 1 kg, E = 1e7 Pa, ν = 0.3) meet head on
 * at 1 m/s relative speed without gravity. Returns the measured restitution
 * and the time the two were overlapping. */
static void head_on(dvi_dem_normal_model model, double e, double* e_meas, double* duration)
{
    const double R = 0.1, m = 1.0, E = 1e7, v = 0.5;
    dvi_world* w = make_world(model, false);
    dvi_material mat = material(E, e, 0.5);
    double xa[3] = {-R - 1e-4, 0, 0}, xb[3] = {R + 1e-4, 0, 0};
    dvi_body_id a = add_sphere(w, xa, R, m, mat);
    dvi_body_id b = add_sphere(w, xb, R, m, mat);
    double va[3] = {v, 0, 0}, vb[3] = {-v, 0, 0};
    dvi_body_set_velocity(w, a, va, NULL);
    dvi_body_set_velocity(w, b, vb, NULL);
    /* analytic Hertz duration as the time scale; the Hooke spring matches the
     * Hertz overlap at 1 m/s, so its duration is of the same order */
    const double Es = e_star(E, 0.3), Rs = R / 2, ms = m / 2;
    const double tc = 2.868 * pow(ms * ms / (Rs * Es * Es * 2 * v), 0.2);
    const double h = tc / 2000;
    int contact_steps = 0;
    bool touched = false;
    for (int i = 0; i < 100000; i++) {
        assert_true(dvi_world_step(w, h) >= 0);
        int32_t nc = dvi_world_contact_count(w);
        if (nc > 0) {
            touched = true;
            contact_steps++;
        } else if (touched) {
            break;
        }
    }
    assert_true(touched);
    dvi_body_get_velocity(w, a, va);
    dvi_body_get_velocity(w, b, vb);
    *e_meas = (vb[0] - va[0]) / (2 * v);
    *duration = contact_steps * h;
    dvi_world_destroy(w);
}

static void test_head_on_restitution(void** state)
{
    (void)state;
    const double es[2] = {0.5, 0.9};
    const char* names[2] = {"Hertz", "Hooke"};
    for (int model = 0; model < 2; model++)
        for (int k = 0; k < 2; k++) {
            double em, t;
            head_on((dvi_dem_normal_model)model, es[k], &em, &t);
            print_message("%s, requested e = %.2f: measured %.5f (error %.3f%%, limit 2%%), contact %.4g ms\n",
                          names[model], es[k], em, 100 * (em - es[k]) / es[k], 1e3 * t);
            assert_near(em, es[k], 0.02 * es[k]);
        }
}

/* Elastic Hertz impact: t = 2 (δ_max/v) ∫₀¹ (1 − u^(5/2))^(−1/2) du
 *   = 2 · 0.4 B(2/5, 1/2) (15/16)^(2/5) (m*²/(R* E*² v))^(1/5) = 2.8682 (…)^(1/5). */
static void test_hertz_duration(void** state)
{
    (void)state;
    const double R = 0.1, m = 1.0, E = 1e7, v = 1.0;
    const double Es = e_star(E, 0.3), Rs = R / 2, ms = m / 2;
    const double c = 0.8 * tgamma(0.4) * tgamma(0.5) / tgamma(0.9) * pow(15.0 / 16.0, 0.4);
    const double expect = c * pow(ms * ms / (Rs * Es * Es * v), 0.2);
    double em, t;
    head_on(DVI_DEM_HERTZ, 1.0, &em, &t);
    print_message("Hertz, e = 1: contact duration %.6g s, analytic %.4f (m*^2/(R* E*^2 v))^(1/5) = %.6g s "
                  "(error %.3f%%, limit 3%%); restitution %.5f\n",
                  t, c, expect, 100 * (t - expect) / expect, em);
    assert_near(t, expect, 0.03 * expect);
    assert_near(em, 1.0, 0.01);
    head_on(DVI_DEM_HERTZ, 0.9, &em, &t);
    print_message("Hertz, e = 0.9: contact duration %.6g s (%.1f%% of the elastic value)\n", t, 100 * t / expect);
}

/* ---- friction ------------------------------------------------------------------------- */

static double downhill(const double* x0, const double* x, double theta)
{
    return -((x[1] - x0[1]) * cos(theta) + (x[2] - x0[2]) * sin(theta));
}

static void test_incline_stick(void** state)
{
    (void)state;
    const double theta = 20 * PI / 180, h = 1e-4; /* tan θ = 0.364 < μ = 0.5 */
    for (int model = 0; model < 2; model++) {
        dvi_world* w = make_world((dvi_dem_normal_model)model, true);
        dvi_material mat = material(1e7, 0.5, 0.5);
        add_plane(w, theta, mat);
        dvi_body_id b = add_box_on_incline(w, theta, 0.1, 1.0, 0.1, mat);
        double x0[3], x[3];
        run(w, h, 0.2); /* settle into the static overlap and tangential deflection */
        dvi_body_get_position(w, b, x0);
        run(w, h, 2.0);
        dvi_body_get_position(w, b, x);
        double d = dist3(x0, x);
        print_message("%s: box on a 20 deg incline, mu = 0.5: displacement over 2 s after settling %.3g m "
                      "(limit 1e-4 m); overlap %.3g m, %d contacts, history %d\n",
                      model == 0 ? "Hertz" : "Hooke", d, dvi_world_get_stats(w).max_overlap,
                      dvi_world_get_stats(w).contacts, dvi_world_get_stats(w).contact_history);
        assert_true(d < 1e-4);
        dvi_world_destroy(w);
    }
}

static void test_incline_slide(void** state)
{
    (void)state;
    const double theta = 30 * PI / 180, mu = 0.3, h = 1e-4; /* tan θ = 0.577 > μ */
    for (int model = 0; model < 2; model++) {
        dvi_world* w = make_world((dvi_dem_normal_model)model, true);
        dvi_material mat = material(1e7, 0.5, mu);
        add_plane(w, theta, mat);
        dvi_body_id b = add_box_on_incline(w, theta, 0.1, 1.0, 0.1, mat);
        double v1[3], v2[3], zero[3] = {0, 0, 0};
        run(w, h, 0.2);
        dvi_body_get_velocity(w, b, v1);
        run(w, h, 1.0);
        dvi_body_get_velocity(w, b, v2);
        double a = downhill(zero, v2, theta) - downhill(zero, v1, theta);
        double expect = G * (sin(theta) - mu * cos(theta));
        print_message("%s: box slides: a = %.5f m/s^2, g(sin - mu cos) = %.5f (error %.3f%%, limit 1%%)\n",
                      model == 0 ? "Hertz" : "Hooke", a, expect, 100 * (a - expect) / expect);
        assert_near(a, expect, 0.01 * expect);
        dvi_world_destroy(w);
    }
}

static void test_sliding_box_distance(void** state)
{
    (void)state;
    const double mu = 0.4, v0 = 2.0, h = 1e-4;
    for (int model = 0; model < 2; model++) {
        dvi_world* w = make_world((dvi_dem_normal_model)model, true);
        dvi_material mat = material(1e7, 0.5, mu);
        add_plane(w, 0.0, mat);
        dvi_body_id b = add_box_on_incline(w, 0.0, 0.1, 1.0, 0.1, mat);
        run(w, h, 0.1);
        double x0[3], x[3], v[3] = {v0, 0, 0};
        dvi_body_get_position(w, b, x0);
        dvi_body_set_velocity(w, b, v, NULL);
        run(w, h, 1.0); /* stops after v0/(μg) = 0.51 s */
        dvi_body_get_position(w, b, x);
        double d = x[0] - x0[0], expect = v0 * v0 / (2 * mu * G);
        dvi_body_get_velocity(w, b, v);
        print_message("%s: box sliding from %.1f m/s, mu = %.1f: stops after %.5f m, v^2/(2 mu g) = %.5f "
                      "(error %.3f%%, limit 2%%); final speed %.2g m/s\n",
                      model == 0 ? "Hertz" : "Hooke", v0, mu, d, expect, 100 * (d - expect) / expect,
                      sqrt(v[0] * v[0] + v[1] * v[1]));
        assert_near(d, expect, 0.02 * expect);
        dvi_world_destroy(w);
    }
}

/* The README's first DEM run: examples/scenes/sliding_box.json with
 * --method dem --dt 1e-4 (1 kg box, μ = 0.4, from 2 m/s, the scene's
 * materials: E = 1e7 Pa, restitution 0). It must stop at v0²/(2μg) =
 * 0.50968 m, and once stopped, with nothing pushing it sideways, its
 * friction must die out: below 1e-3 μmg on every step from 0.1 s after it
 * stops to the end, below 1e-5 μmg at t = 1 s, and no contact may chatter.
 * The model before the step-consistent tangential dashpot stopped the box
 * 0.1 mm short and then flipped the friction between +3.92 N and −3.92 N
 * (μmg) every step until the end. */
static void test_sliding_box_scene_holds(void** state)
{
    (void)state;
    const char* path = SRC_PATH("examples/scenes/sliding_box.json");
    dvi_scene* s = NULL;
    dvi_scene_errors e = {0};
    if (dvi_scene_load(path, &s, &e) != DVI_OK) fail_msg("%s: %s", path, e.text);
    dvi_scene_overrides ov;
    memset(&ov, 0, sizeof ov);
    ov.method = "dem";
    ov.dt = 1e-4;
    assert_int_equal(dvi_scene_apply_overrides(s, &ov, &e), DVI_OK);
    dvi_model* m = NULL;
    char msg[256];
    assert_int_equal(dvi_model_create(s, &m, msg, sizeof msg), DVI_OK);
    dvi_world* w = dvi_model_world(m);
    dvi_body_id box;
    assert_int_equal(dvi_model_find_body(m, "box", &box), DVI_OK);
    const double mu = 0.4, v0 = 2.0, mg = 1.0 * G, expect = v0 * v0 / (2 * mu * G);
    const double settle = 0.1, bound = 1e-3 * mu * mg;
    double x0[3], x[3], v[3], F[3];
    dvi_body_get_position(w, box, x0);
    double t_stop = -1.0, worst = 0.0, t_worst = 0.0, last = 0.0;
    int32_t chatter = 0;
    const long n = lround(1.0 / 1e-4);
    for (long i = 0; i < n; i++) {
        if (dvi_model_step(m) < 0) fail_msg("step %ld: %s", i, dvi_world_last_error(w));
        const double t = dvi_model_time(m);
        dvi_body_get_velocity(w, box, v);
        assert_int_equal(dvi_body_get_contact_force(w, box, F, NULL), DVI_OK);
        const double ft = sqrt(F[0] * F[0] + F[1] * F[1]);
        if (dvi_world_get_stats(w).chattering_contacts > chatter) chatter = dvi_world_get_stats(w).chattering_contacts;
        if (t_stop < 0.0 && v[0] <= 0.0) t_stop = t;
        if (t_stop >= 0.0 && t >= t_stop + settle - 1e-9 && ft > worst) {
            worst = ft;
            t_worst = t;
        }
        last = ft;
    }
    dvi_body_get_position(w, box, x);
    const double d = x[0] - x0[0];
    print_message("sliding_box.json, DEM at 1e-4 s: stops at t = %.4f s (v0/(mu g) = %.4f s) after %.5f m, "
                  "v^2/(2 mu g) = %.5f m (%.3f mm off, limit 0.5 mm); |F_t| from %.1f s after the stop to 1 s: at "
                  "most %.3g N = %.2g mu m g (at t = %.4f s; limit 1e-3 mu m g), at 1 s %.3g N = %.2g mu m g "
                  "(limit 1e-5); chattering contacts %d\n",
                  t_stop, v0 / (mu * G), d, expect, 1e3 * (d - expect), settle, worst, worst / (mu * mg), t_worst,
                  last, last / (mu * mg), (int)chatter);
    assert_true(t_stop > 0.0 && t_stop + settle < 1.0);
    assert_near(d, expect, 0.5e-3);
    assert_true(worst < bound);
    assert_true(last < 1e-5 * mu * mg);
    assert_int_equal(chatter, 0);
    dvi_health_report r;
    assert_int_equal(dvi_model_health(m, &r), DVI_OK);
    assert_int_equal(r.raised, 0u);
    dvi_model_destroy(m);
    dvi_scene_destroy(s);
}

/* A sphere on a 20° incline rolls without slipping (a = 5/7 g sin θ) through
 * the tangential spring; with a rolling-resistance arm μ_r ≥ R tan θ it holds. */
static void test_sphere_incline_rolling(void** state)
{
    (void)state;
    const double theta = 20 * PI / 180, R = 0.1, h = 1e-4;
    for (int k = 0; k < 2; k++) {
        dvi_world* w = make_world(DVI_DEM_HERTZ, true);
        dvi_material mat = material(1e7, 0.5, 0.5);
        mat.rolling_friction = k == 0 ? 0.0 : 0.05; /* R tan θ = 0.036 m */
        add_plane(w, theta, mat);
        double x[3] = {0, -sin(theta) * R, cos(theta) * R};
        dvi_body_id b = add_sphere(w, x, R, 1.0, mat);
        double x0[3], x1[3], v1[3], v2[3], zero[3] = {0, 0, 0};
        run(w, h, 0.2);
        dvi_body_get_position(w, b, x0);
        dvi_body_get_velocity(w, b, v1);
        run(w, h, 1.0);
        dvi_body_get_position(w, b, x1);
        dvi_body_get_velocity(w, b, v2);
        if (k == 0) {
            double a = downhill(zero, v2, theta) - downhill(zero, v1, theta), expect = 5.0 / 7.0 * G * sin(theta);
            print_message("sphere rolls down 20 deg: a = %.5f m/s^2, 5/7 g sin = %.5f (error %.3f%%, limit 1%%)\n", a,
                          expect, 100 * (a - expect) / expect);
            assert_near(a, expect, 0.01 * expect);
        } else {
            double d = dist3(x0, x1);
            print_message("sphere with rolling arm 0.05 m >= R tan = %.3f m: displacement over 1 s %.3g m "
                          "(limit 1e-4 m)\n",
                          R * tan(theta), d);
            assert_true(d < 1e-4);
        }
        dvi_world_destroy(w);
    }
}

/* ---- stack ---------------------------------------------------------------------------- */

/* Ten spheres (R = 0.1 m, 1 kg, E = 1e7 Pa, e = 0.5) stacked on the ground.
 * The static Hertz overlap of the contact below sphere k, which carries the
 * N − k spheres above it, is δ_k = ((N − k) m g / K_k)^(2/3),
 * K_k = 4/3 E* sqrt(R_eff,k). (a) Placed at these overlaps, the stack stays at
 * rest for 5 s and the ground carries the whole weight; (b) placed touching
 * (no overlap), it settles within 1 mm of the same positions. */
static double stack_case(bool at_rest, double* ground_force)
{
    const int N = 10;
    const double R = 0.1, m = 1.0, E = 1e7, h = 1e-4;
    const double Es = e_star(E, 0.3);
    double overlap[10], below = 0.0, sink = 0.0;
    for (int k = 0; k < N; k++) {
        double Reff = k == 0 ? R : R / 2, K = 4.0 / 3.0 * Es * sqrt(Reff);
        overlap[k] = pow((N - k) * m * G / K, 2.0 / 3.0);
        sink += overlap[k];
    }
    dvi_world* w = make_world(DVI_DEM_HERTZ, true);
    dvi_material mat = material(E, 0.5, 0.5);
    add_plane(w, 0.0, mat);
    dvi_body_id ids[10];
    double expect[10];
    for (int k = 0; k < N; k++) {
        below += overlap[k];
        expect[k] = R + 2 * R * k - below;
        double x[3] = {0, 0, at_rest ? expect[k] : R + 2 * R * k};
        ids[k] = add_sphere(w, x, R, m, mat);
    }
    run(w, h, 5.0);
    double drift = 0.0;
    for (int k = 0; k < N; k++) {
        double x[3], e[3] = {0, 0, expect[k]};
        dvi_body_get_position(w, ids[k], x);
        if (dist3(x, e) > drift) drift = dist3(x, e);
    }
    double ground = 0.0;
    for (int32_t c = 0; c < dvi_world_contact_count(w); c++) {
        dvi_contact_info ci;
        dvi_world_get_contact(w, c, &ci);
        if (ci.body_a.index1 == 1 || ci.body_b.index1 == 1) ground += fabs(ci.force[2]);
    }
    *ground_force = ground;
    print_message("10-sphere stack placed %s, 5 s: static overlaps sum to %.5f m; largest distance of a sphere from "
                  "its static position %.3g m (limit 1e-3); ground force %.5f N (weight %.4f N); kinetic energy %.3g J\n",
                  at_rest ? "at the static overlaps" : "touching", sink, drift, ground, N * m * G,
                  dvi_world_get_stats(w).kinetic_energy);
    dvi_world_destroy(w);
    return drift;
}

static void test_sphere_stack(void** state)
{
    (void)state;
    const double weight = 10 * 1.0 * G;
    double ground;
    double drift = stack_case(true, &ground);
    print_message("at rest: ground force error %.4f%% (limit 0.5%%)\n", 100 * (ground - weight) / weight);
    assert_true(drift < 1e-3);
    assert_near(ground, weight, 0.005 * weight);
    drift = stack_case(false, &ground);
    print_message("settling: ground force error %.4f%% (oscillation left after 5 s; not checked)\n",
                  100 * (ground - weight) / weight);
    assert_true(drift < 1e-3);
}

/* ---- resting stacks and stopped boxes at the documented step ------------------------ */

/* A brick (half extents a, mass m, uniform) centred at x, turned by yaw
 * about z. */
static dvi_body_id add_brick(dvi_world* w, const double x[3], double yaw, const double a[3], double m, dvi_material mat)
{
    dvi_body_def bd = dvi_default_body_def();
    bd.mass = m;
    bd.inertia[0] = m * (a[1] * a[1] + a[2] * a[2]) / 3.0;
    bd.inertia[4] = m * (a[0] * a[0] + a[2] * a[2]) / 3.0;
    bd.inertia[8] = m * (a[0] * a[0] + a[1] * a[1]) / 3.0;
    for (int k = 0; k < 3; k++) bd.position[k] = x[k];
    bd.orientation[0] = cos(yaw / 2);
    bd.orientation[3] = sin(yaw / 2);
    dvi_body_id b;
    assert_int_equal(dvi_body_create(w, &bd, &b), DVI_OK);
    dvi_shape_def sd = dvi_default_shape_def();
    sd.type = DVI_SHAPE_BOX;
    for (int k = 0; k < 3; k++) sd.half_extents[k] = a[k];
    sd.material = mat;
    dvi_shape_id sid;
    assert_int_equal(dvi_shape_create(w, b, &sd, &sid), DVI_OK);
    return b;
}

/* Kinetic plus gravitational potential energy of the dynamic bodies (J). */
static double mechanical_energy(const dvi_world* w)
{
    double e = dvi_world_get_stats(w).kinetic_energy;
    for (int32_t i = 0; i < dvi_world_body_count(w); i++) {
        dvi_body_id id;
        dvi_body_info bi;
        double x[3];
        assert_int_equal(dvi_world_body_at(w, i, &id), DVI_OK);
        assert_int_equal(dvi_body_get_info(w, id, &bi), DVI_OK);
        assert_int_equal(dvi_body_get_position(w, id, x), DVI_OK);
        e += bi.mass * G * x[2];
    }
    return e;
}

/* The friction force (its part in the plane ⊥ up) alternates when it points
 * against the previous step's on two steps in a row, all three above
 * `floor` (N): what an explicit contact that over-corrects does every step.
 * `flips` counts such steps, `reversals` every reversal (a damped
 * oscillation of the contact's spring reverses once per half period). */
typedef struct flip_count {
    double prev[3], floor;
    bool reversed;
    long flips, reversals;
} flip_count;

static void count_flip(flip_count* fc, const double F[3], const double up[3])
{
    double t[3], fu = F[0] * up[0] + F[1] * up[1] + F[2] * up[2];
    for (int k = 0; k < 3; k++) t[k] = F[k] - fu * up[k];
    const double a = sqrt(t[0] * t[0] + t[1] * t[1] + t[2] * t[2]);
    const double b = sqrt(fc->prev[0] * fc->prev[0] + fc->prev[1] * fc->prev[1] + fc->prev[2] * fc->prev[2]);
    const bool rev = a > fc->floor && b > fc->floor && t[0] * fc->prev[0] + t[1] * fc->prev[1] + t[2] * fc->prev[2] < 0.0;
    if (rev) fc->reversals++;
    if (rev && fc->reversed) fc->flips++;
    fc->reversed = rev;
    for (int k = 0; k < 3; k++) fc->prev[k] = t[k];
}

/* Two bricks (0.2 × 0.1 × 0.06 m, 1 kg each, E = 1e7 Pa, ν = 0.3, μ = 0.8,
 * restitution 0) on the ground, the top one 30 mm and 10 mm off centre and
 * turned 10°, placed touching, at the documented h = 1e-4 s. After 0.5 s of
 * settling they must stay at rest for 3.5 s: the top brick's horizontal
 * drift below 1 µm/s, the mechanical energy never above its value at 0.5 s
 * by more than 1e-9 J, and its friction never alternating from step to step.
 * Before the normal dashpot was limited to the step (docs/dem.md), the
 * bricks rocked at the step's frequency, half of the corners carrying the
 * load on alternate steps: Hertz crept at 49 µm/s with the friction
 * reversing on every step; Hooke crept at 278 µm/s and its energy rose by
 * up to 6.5e-4 J (lighter bricks, 0.3 kg: thrown 0.5 m). At h = 2e-5 s both
 * stood still. */
static void test_brick_stack_rests(void** state)
{
    (void)state;
    const double h = 1e-4, a[3] = {0.1, 0.05, 0.03}, m = 1.0, mu = 0.8;
    for (int model = 0; model < 2; model++) {
        dvi_world* w = make_world((dvi_dem_normal_model)model, true);
        dvi_material mat = material(1e7, 0.0, mu);
        add_plane(w, 0.0, mat);
        const double x1[3] = {0, 0, a[2]}, x2[3] = {0.03, 0.01, 3 * a[2]}, up[3] = {0, 0, 1};
        add_brick(w, x1, 0.0, a, m, mat);
        dvi_body_id top = add_brick(w, x2, 10 * PI / 180, a, m, mat);
        run(w, h, 0.5);
        const double e0 = mechanical_energy(w);
        double p0[3], p[3], F[3], rise = 0.0;
        dvi_body_get_position(w, top, p0);
        flip_count fc = {{0, 0, 0}, 1e-3 * mu * m * G, false, 0, 0};
        const long n = lround(3.5 / h);
        for (long i = 0; i < n; i++) {
            if (dvi_world_step(w, h) < 0) fail_msg("step %ld: %s", i, dvi_world_last_error(w));
            const double e = mechanical_energy(w);
            if (e - e0 > rise) rise = e - e0;
            assert_int_equal(dvi_body_get_contact_force(w, top, F, NULL), DVI_OK);
            count_flip(&fc, F, up);
        }
        dvi_body_get_position(w, top, p);
        const double creep = hypot(p[0] - p0[0], p[1] - p0[1]) / 3.5;
        print_message("%s: two bricks at h = 1e-4 s, 0.5 s to 4 s: top brick creeps %.3g um/s (limit 1), mechanical "
                      "energy %.9f J, largest rise %.3g J (limit 1e-9), friction alternating on %ld steps (limit 0; "
                      "reversals %ld), kinetic energy at 4 s %.3g J\n",
                      model == 0 ? "Hertz" : "Hooke", 1e6 * creep, e0, rise, fc.flips, fc.reversals,
                      dvi_world_get_stats(w).kinetic_energy);
        assert_true(creep < 1e-6);
        assert_true(rise <= 1e-9);
        assert_int_equal(fc.flips, 0);
        dvi_world_destroy(w);
    }
}

/* A 1 kg cube (0.2 m) launched along the ground (2 m/s, μ = 0.4) or up a
 * 20° slope (1 m/s, μ = 0.5 > tan 20° = 0.364) with E = 1e7 Pa, restitution
 * 0.5 (sliding_box_dem.json's material), at h = 1e-4 s. Once it has
 * stopped, its friction is the static requirement: m g sin θ up the slope
 * (3.3552 N; 0 on flat ground) within 1e-3 μmg from 0.2 s after the stop to
 * the end (1.5 s), and it never alternates (reverses on two steps in a
 * row) while above 1e-6 μmg. */
static void test_stopped_box_friction(void** state)
{
    (void)state;
    const double h = 1e-4, mg = 1.0 * G;
    for (int slope = 0; slope < 2; slope++)
        for (int model = 0; model < 2; model++) {
            const double theta = slope ? 20 * PI / 180 : 0.0, mu = slope ? 0.5 : 0.4, v0 = slope ? 1.0 : 2.0;
            dvi_world* w = make_world((dvi_dem_normal_model)model, true);
            dvi_material mat = material(1e7, 0.5, mu);
            add_plane(w, theta, mat);
            dvi_body_id b = add_box_on_incline(w, theta, 0.1, 1.0, 0.1, mat);
            run(w, h, 0.1);
            /* up the slope: −downhill, downhill = (0, −cos θ, −sin θ) */
            const double up[3] = {0, -sin(theta), cos(theta)}, dn[3] = {0, -cos(theta), -sin(theta)};
            double v[3] = {slope ? 0 : v0, slope ? v0 * cos(theta) : 0, slope ? v0 * sin(theta) : 0}, F[3];
            dvi_body_set_velocity(w, b, v, NULL);
            const double need = mg * sin(theta); /* the static friction, up the slope */
            flip_count fc = {{0, 0, 0}, 1e-6 * mu * mg, false, 0, 0};
            double t_stop = -1.0, worst = 0.0;
            const long n = lround(1.5 / h);
            for (long i = 0; i < n; i++) {
                if (dvi_world_step(w, h) < 0) fail_msg("step %ld: %s", i, dvi_world_last_error(w));
                const double t = (i + 1) * h;
                dvi_body_get_velocity(w, b, v);
                assert_int_equal(dvi_body_get_contact_force(w, b, F, NULL), DVI_OK);
                const double along = slope ? v[1] * dn[1] + v[2] * dn[2] : v[0];
                if (t_stop < 0.0 && (slope ? along >= 0.0 : along <= 0.0)) t_stop = t;
                if (t_stop < 0.0) continue;
                count_flip(&fc, F, up);
                if (t >= t_stop + 0.2) {
                    /* friction: the part ⊥ up; its error against −need along dn */
                    const double fu = F[0] * up[0] + F[1] * up[1] + F[2] * up[2];
                    double e[3];
                    for (int k = 0; k < 3; k++) e[k] = F[k] - fu * up[k] + need * dn[k];
                    const double err = sqrt(e[0] * e[0] + e[1] * e[1] + e[2] * e[2]);
                    if (err > worst) worst = err;
                }
            }
            print_message("%s, %s: box stops at t = %.4f s; friction from 0.2 s after the stop to 1.5 s within %.3g N "
                          "= %.2g mu m g of the static requirement %.4f N (limit 1e-3 mu m g); alternating on %ld "
                          "steps (limit 0; reversals %ld)\n",
                          model == 0 ? "Hertz" : "Hooke", slope ? "20 deg slope" : "flat ground", t_stop, worst,
                          worst / (mu * mg), need, fc.flips, fc.reversals);
            assert_true(t_stop > 0.0 && t_stop < 1.0);
            assert_true(worst < 1e-3 * mu * mg);
            assert_int_equal(fc.flips, 0);
            dvi_world_destroy(w);
        }
}

/* ---- joints ---------------------------------------------------------------------------- */

/* The pendulum of test_world.c in DEM mode: the revolute joint is solved
 * exactly every step (a bilateral-only problem), so it does not drift. */
static void test_pendulum(void** state)
{
    (void)state;
    const double L = 1.0, m = 1.0, r = 0.05, amp = 3.0 * PI / 180, h = 1e-3, seconds = 10.0;
    dvi_world* w = make_world(DVI_DEM_HERTZ, true);
    dvi_body_def bd = dvi_default_body_def();
    bd.mass = m;
    bd.inertia[0] = bd.inertia[4] = bd.inertia[8] = 0.4 * m * r * r;
    bd.position[1] = L * sin(amp);
    bd.position[2] = -L * cos(amp);
    dvi_body_id b;
    assert_int_equal(dvi_body_create(w, &bd, &b), DVI_OK);
    dvi_joint_def jd = dvi_default_joint_def();
    jd.type = DVI_JOINT_REVOLUTE;
    jd.body_b = b;
    jd.axis[0] = 1.0;
    jd.axis[2] = 0.0;
    dvi_joint_id j;
    assert_int_equal(dvi_joint_create(w, &jd, &j), DVI_OK);
    double prev = 0.0, t_prev = 0.0, crossings[64];
    int nc = 0;
    double max_violation = 0.0;
    for (int i = 0; i < (int)(seconds / h); i++) {
        assert_true(dvi_world_step(w, h) >= 0);
        double x[3];
        dvi_body_get_position(w, b, x);
        double t = dvi_world_time(w);
        if (i > 0 && prev > 0.0 && x[1] <= 0.0 && nc < 64) crossings[nc++] = t_prev + (t - t_prev) * prev / (prev - x[1]);
        prev = x[1];
        t_prev = t;
        double v = fabs(sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2]) - L);
        if (fabs(x[0]) > v) v = fabs(x[0]);
        if (v > max_violation) max_violation = v;
    }
    assert_true(nc >= 3);
    double T = (crossings[nc - 1] - crossings[0]) / (nc - 1);
    double expect = 2 * PI * sqrt((m * L * L + 0.4 * m * r * r) / (m * G * L)) * (1.0 + amp * amp / 16.0);
    print_message("DEM pendulum, 10 s: period %.5f s, expected %.5f s (0.5%%); max joint violation %.3g m "
                  "(limit 1e-6); joint solve: %d iterations, residual %.2e\n",
                  T, expect, max_violation, dvi_world_get_stats(w).iterations, dvi_world_get_stats(w).residual);
    assert_near(T, expect, 0.005 * expect);
    assert_true(max_violation < 1e-6);
    double F[3], Tq[3];
    dvi_joint_get_reaction(w, j, F, Tq);
    assert_true(F[2] > 0.9 * m * G);
    dvi_world_destroy(w);
}

/* The rocker-bogie rover of studies/rover/rover_model.c (18 bodies, 99 joint rows,
 * the differential links' redundant revolutes included) standing on Hertz
 * contacts: after 2 s the wheel loads are the reference statics of the JSON
 * (Horvat 2024, §4.1.1) and the joints have not moved apart. */
static void test_rover_statics(void** state)
{
    (void)state;
    const double h = 2e-4;
    dvi_world* w = make_world(DVI_DEM_HERTZ, true);
    dvi_material ground = material(1e8, 0.2, 0.8);
    add_plane(w, 0.0, ground);
    rover_options opt = rover_default_options();
    opt.on_ground = true;
    opt.wheel_friction = 0.8;
    rover r;
    char msg[256];
    if (rover_build(w, ROVER_JSON, "FullRover", &opt, &r, msg, sizeof msg) != DVI_OK) fail_msg("rover_build: %s", msg);
    double ref[ROVER_WHEELS], F[ROVER_WHEELS][3];
    assert_int_equal(rover_reference_loads(ROVER_JSON, "FullRover", ref, msg, sizeof msg), DVI_OK);
    double max_violation = 0.0;
    for (int i = 0; i < (int)(2.0 / h); i++) {
        dvi_status st = dvi_world_step(w, h);
        if (st < 0) fail_msg("step %d: %s", i, dvi_world_last_error(w));
        if (i > 100 && dvi_world_get_stats(w).max_joint_violation > max_violation)
            max_violation = dvi_world_get_stats(w).max_joint_violation;
    }
    assert_int_equal(rover_wheel_forces(w, &r, F), DVI_OK);
    dvi_step_stats st = dvi_world_get_stats(w);
    double worst = 0.0;
    for (int i = 0; i < ROVER_WHEELS; i++) worst = fmax(worst, fabs(F[i][2] - ref[i]) / ref[i]);
    print_message("DEM rover (FullRover, %d joint rows, %d contacts), 2 s of h = %g: wheel loads within %.3f%% of the "
                  "reference statics (limit 1%%), max joint violation %.2g m (limit 1e-6), joint solve %d iterations "
                  "(0: direct), residual %.1e\n",
                  st.joint_rows, st.contacts, h, 100 * worst, max_violation, st.iterations, st.residual);
    assert_true(worst < 0.01);
    assert_true(max_violation < 1e-6);
    dvi_world_destroy(w);
}

/* A chain of 55 links on revolute joints (275 rows: beyond the dense direct
 * solve, so the world's solver, APGD with tolerance 1e-10, takes the joint
 * problem) falls from the horizontal for 0.15 s. The violation measured is
 * the drift of one step (O(h²), removed by the next), as in DVI mode. */
static void test_chain_iterative(void** state)
{
    (void)state;
    const int N = 55;
    const double l = 0.05, m = 0.1, h = 5e-4, T = 0.15;
    dvi_world_def wd = dvi_default_world_def();
    wd.method = DVI_METHOD_DEM;
    wd.solver_settings.tolerance = 1e-10; /* the iterative solve is as exact as its tolerance */
    wd.solver_settings.max_iterations = 20000;
    dvi_world* w = NULL;
    assert_int_equal(dvi_world_create(&wd, &w), DVI_OK);
    dvi_body_id prev = {0, 0, 0};
    dvi_body_id last = prev;
    for (int k = 0; k < N; k++) {
        dvi_body_def bd = dvi_default_body_def();
        bd.mass = m;
        bd.inertia[0] = bd.inertia[4] = bd.inertia[8] = m * l * l / 12;
        bd.position[1] = (k + 0.5) * l; /* horizontal at the start */
        dvi_body_id b;
        assert_int_equal(dvi_body_create(w, &bd, &b), DVI_OK);
        dvi_joint_def jd = dvi_default_joint_def();
        jd.type = DVI_JOINT_REVOLUTE;
        jd.body_a = prev;
        jd.body_b = b;
        jd.anchor[1] = k * l;
        jd.axis[0] = 1.0;
        jd.axis[2] = 0.0;
        dvi_joint_id j;
        assert_int_equal(dvi_joint_create(w, &jd, &j), DVI_OK);
        prev = last = b;
    }
    double max_violation = 0.0;
    int iterations = 0;
    for (int i = 0; i < (int)(T / h); i++) {
        assert_true(dvi_world_step(w, h) >= 0);
        dvi_step_stats st = dvi_world_get_stats(w);
        if (st.max_joint_violation > max_violation) max_violation = st.max_joint_violation;
        iterations += st.iterations;
    }
    double x[3];
    dvi_body_get_position(w, last, x);
    print_message("chain of %d revolute links (%d rows, iterative): max joint violation %.2g m (limit 1e-6), %.0f "
                  "iterations per step; tip at z = %.3f m\n",
                  N, dvi_world_get_stats(w).joint_rows, max_violation, iterations / (T / h), x[2]);
    assert_true(dvi_world_get_stats(w).joint_rows > 256 && iterations > 0);
    assert_true(max_violation < 1e-6);
    assert_true(x[2] < -0.05); /* it falls */
    dvi_world_destroy(w);
}

/* ---- contact history -------------------------------------------------------------------- */

static uint64_t lcg(uint64_t* s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return *s >> 33;
}

/* Insert, find and remove under churn against a plain array of flags. */
static void test_history_churn(void** state)
{
    (void)state;
    enum { KEYS = 4096 };
    static int32_t where[KEYS]; /* −1: absent, else the entry index we expect the key at */
    wld_dem_history h;
    wld_dem_history_init(&h, &(dvi_allocator){0});
    for (int k = 0; k < KEYS; k++) where[k] = -1;
    uint64_t seed = 12345;
    int32_t live = 0, cap_after_warmup = 0, slots_after_warmup = 0;
    for (int round = 0; round < 200000; round++) {
        int k = (int)(lcg(&seed) % KEYS);
        wld_dem_key key = {k % 97, 1000 + k / 97, (uint32_t)(k * 7)};
        int32_t e = wld_dem_history_find(&h, &key);
        if (where[k] < 0) {
            assert_int_equal(e, -1);
            if (live < KEYS / 2) { /* keep the table at most half full of keys */
                assert_int_equal(wld_dem_history_insert(&h, &key, &e), DVI_OK);
                h.entries[e].u[0] = (double)k;
                where[k] = 1;
                live++;
            }
        } else {
            assert_true(e >= 0);
            assert_int_equal(h.entries[e].key.feature, key.feature);
            assert_true(h.entries[e].u[0] == (double)k);
            wld_dem_history_remove(&h, e);
            where[k] = -1;
            live--;
        }
        assert_int_equal(h.count, live);
        if (round == 20000) {
            cap_after_warmup = h.cap;
            slots_after_warmup = h.slot_count;
        }
    }
    for (int k = 0; k < KEYS; k++) { /* every key where expected */
        wld_dem_key key = {k % 97, 1000 + k / 97, (uint32_t)(k * 7)};
        int32_t e = wld_dem_history_find(&h, &key);
        assert_int_equal(e >= 0, where[k] >= 0);
    }
    /* sweep: stamp half of the entries, the rest goes */
    int32_t keep = 0;
    for (int32_t e = 0; e < h.count; e++) {
        h.entries[e].stamp = (e % 2 == 0) ? 7u : 3u;
        keep += e % 2 == 0;
    }
    int32_t removed = wld_dem_history_sweep(&h, 7u);
    assert_int_equal(h.count, keep);
    assert_int_equal(removed + keep, live);
    for (int32_t e = 0; e < h.count; e++) assert_int_equal(wld_dem_history_find(&h, &h.entries[e].key), e);
    print_message("history churn: 200000 operations, %d live keys at most %d; capacity %d entries / %d slots after "
                  "warm-up and %d / %d at the end\n",
                  live, KEYS / 2, cap_after_warmup, slots_after_warmup, h.cap, h.slot_count);
    assert_int_equal(h.cap, cap_after_warmup);
    assert_int_equal(h.slot_count, slots_after_warmup);
    wld_dem_history_free(&h);
}

/* 50 spheres in a walled square (5 × 5, then 4 × 4, then 3 × 3), settled,
 * stepped 1e5 times: the history holds exactly the overlapping contacts and
 * no buffer grows after the warm-up. */
static dvi_world* make_pile(void)
{
    const double R = 0.05, E = 1e7;
    dvi_world* w = make_world(DVI_DEM_HERTZ, true);
    dvi_material mat = material(E, 0.3, 0.5);
    mat.rolling_friction = 0.002;
    add_plane(w, 0.0, mat);
    /* walls: a fixed body with four boxes around [−5R, 5R]² */
    dvi_body_def gd = dvi_default_body_def();
    gd.type = DVI_BODY_FIXED;
    dvi_body_id walls;
    assert_int_equal(dvi_body_create(w, &gd, &walls), DVI_OK);
    for (int k = 0; k < 4; k++) {
        dvi_shape_def sd = dvi_default_shape_def();
        sd.type = DVI_SHAPE_BOX;
        sd.material = mat;
        double off = 5 * R + 0.05;
        sd.half_extents[0] = k < 2 ? 0.05 : 6 * R;
        sd.half_extents[1] = k < 2 ? 6 * R : 0.05;
        sd.half_extents[2] = 0.3;
        sd.offset_position[0] = k == 0 ? -off : k == 1 ? off : 0.0;
        sd.offset_position[1] = k == 2 ? -off : k == 3 ? off : 0.0;
        sd.offset_position[2] = 0.3;
        dvi_shape_id s;
        assert_int_equal(dvi_shape_create(w, walls, &sd, &s), DVI_OK);
    }
    const int sides[3] = {5, 4, 3};
    double z = R;
    for (int layer = 0; layer < 3; layer++) {
        int n = sides[layer];
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++) {
                double x[3] = {(2 * i - (n - 1)) * R, (2 * j - (n - 1)) * R, z + 0.002 * layer};
                add_sphere(w, x, R, 0.5, mat);
            }
        z += sqrt(2.0) * R;
    }
    return w;
}

static void test_history_no_growth(void** state)
{
    (void)state;
    const double h = 1e-4;
    const long warmup = 10000, steps = 100000;
    dvi_world* w = make_pile();
    assert_int_equal(dvi_world_body_count(w), 52);
    run(w, h, warmup * h);
    wld_dem* d = w->dem;
    assert_non_null(d);
    const int32_t cap = d->history.cap, slots = d->history.slot_count;
    const size_t work_cap = d->work_cap, acc_cap = d->acc_cap, contacts_cap = w->contacts_cap;
    int32_t lo = INT32_MAX, hi = 0;
    for (long i = warmup; i < steps; i++) {
        assert_true(dvi_world_step(w, h) >= 0);
        int32_t n = d->history.count;
        if (n < lo) lo = n;
        if (n > hi) hi = n;
        /* exactly the overlapping penalty contacts are in the history */
        if (n != dvi_world_contact_count(w)) fail_msg("step %ld: history %d, contacts %d", i, n, dvi_world_contact_count(w));
    }
    dvi_step_stats st = dvi_world_get_stats(w);
    print_message("pile of 50 spheres, 1e5 steps: history %d..%d entries after warm-up (capacity %d entries, %d slots, "
                  "unchanged: %s); kinetic energy at the end %.3g J, max overlap %.3g m\n",
                  lo, hi, d->history.cap, d->history.slot_count,
                  d->history.cap == cap && d->history.slot_count == slots ? "yes" : "NO", st.kinetic_energy,
                  st.max_overlap);
    assert_int_equal(d->history.cap, cap);
    assert_int_equal(d->history.slot_count, slots);
    assert_true(d->work_cap == work_cap && d->acc_cap == acc_cap && w->contacts_cap == contacts_cap);
    assert_true(st.kinetic_energy < 1e-6);
    dvi_world_destroy(w);
}

/* ---- guard, determinism, switching ------------------------------------------------------- */

static void test_stability_guard(void** state)
{
    (void)state;
    dvi_world_def wd = dvi_default_world_def();
    wd.method = DVI_METHOD_DEM;
    wd.dem.normal_model = DVI_DEM_HOOKE;
    wd.dem.constants = DVI_DEM_DIRECT;
    wd.dem.k_n = 1e6; /* sqrt(m/k) = 1 ms */
    dvi_world* w = NULL;
    assert_int_equal(dvi_world_create(&wd, &w), DVI_OK);
    dvi_material mat = material(1e7, 1.0, 0.5);
    add_plane(w, 0.0, mat);
    double x[3] = {0, 0, 0.1};
    dvi_body_id b = add_sphere(w, x, 0.1, 1.0, mat);
    const double h = 3e-3; /* ω h = 3 > 2: unstable */
    dvi_status st = DVI_OK;
    double last[3] = {0, 0, 0}, now_x[3], t_last = 0.0;
    dvi_step_stats stats_last;
    memset(&stats_last, 0, sizeof stats_last);
    int32_t contacts_last = 0;
    long i;
    for (i = 0; i < 400000 && st >= 0; i++) {
        dvi_body_get_position(w, b, last);
        stats_last = dvi_world_get_stats(w);
        contacts_last = dvi_world_contact_count(w);
        t_last = dvi_world_time(w);
        st = dvi_world_step(w, h);
    }
    dvi_body_get_position(w, b, now_x);
    const char* msg = dvi_world_last_error(w);
    print_message("h = 3 sqrt(m/k): step %ld returned %s: \"%s\"\n", i, dvi_status_string(st), msg);
    assert_int_equal(st, DVI_ERR_NUMERIC);
    assert_non_null(strstr(msg, "step"));
    assert_non_null(strstr(msg, "bodies[1]"));
    assert_non_null(strstr(msg, "kinetic energy"));
    assert_true(isfinite(now_x[0]) && isfinite(now_x[1]) && isfinite(now_x[2]));
    assert_memory_equal(last, now_x, sizeof last); /* the failed step changed nothing */
    dvi_step_stats stats_now = dvi_world_get_stats(w);
    assert_true(stats_now.contacts == stats_last.contacts && stats_now.max_overlap == stats_last.max_overlap &&
                stats_now.kinetic_energy == stats_last.kinetic_energy &&
                stats_now.seconds_collide == stats_last.seconds_collide);
    assert_int_equal(dvi_world_contact_count(w), contacts_last);
    assert_true(dvi_world_time(w) == t_last);
    double v[3];
    dvi_body_get_velocity(w, b, v);
    assert_true(isfinite(v[2]) && fabs(v[2]) <= wd.dem.max_speed);
    dvi_world_destroy(w);
}

static void test_deterministic(void** state)
{
    (void)state;
    double pos[2][3];
    for (int k = 0; k < 2; k++) {
        dvi_world* w = make_pile();
        run(w, 1e-4, 0.2);
        dvi_body_id id;
        assert_int_equal(dvi_world_body_at(w, 40, &id), DVI_OK);
        dvi_body_get_position(w, id, pos[k]);
        dvi_world_destroy(w);
    }
    assert_memory_equal(pos[0], pos[1], sizeof pos[0]);
}

/* DVI ignores every DEM field: the same DVI scene with other DEM settings and
 * materials runs bit-identically; the method can be switched before the
 * first step only. */
static void test_dvi_untouched_and_switch(void** state)
{
    (void)state;
    double pos[2][3];
    for (int k = 0; k < 2; k++) {
        dvi_world_def wd = dvi_default_world_def();
        if (k == 1) {
            wd.dem.normal_model = DVI_DEM_HOOKE;
            wd.dem.constants = DVI_DEM_DIRECT;
            wd.dem.k_n = 3e3;
            wd.dem.max_speed = 1e-3;
        }
        dvi_world* w = NULL;
        assert_int_equal(dvi_world_create(&wd, &w), DVI_OK);
        dvi_material mat = material(k == 0 ? 1e7 : 5e9, 0.0, 0.3);
        if (k == 1) {
            mat.poisson_ratio = 0.1;
            mat.k_n = 1e4;
            mat.gamma_t = 3.0;
        }
        add_plane(w, 0.1, mat);
        dvi_body_id b = add_box_on_incline(w, 0.1, 0.1, 2.0, 0.1, mat);
        run(w, 1e-3, 0.3);
        dvi_body_get_position(w, b, pos[k]);
        assert_true(dvi_world_get_stats(w).max_overlap == 0.0);
        assert_int_equal(dvi_world_set_method(w, DVI_METHOD_DEM, NULL), DVI_ERR_INVALID_ARG);
        dvi_world_destroy(w);
    }
    assert_memory_equal(pos[0], pos[1], sizeof pos[0]);
    /* switching before the first step */
    dvi_world* w = NULL;
    assert_int_equal(dvi_world_create(NULL, &w), DVI_OK);
    dvi_dem_settings s = dvi_default_dem_settings();
    s.normal_model = DVI_DEM_HOOKE;
    assert_int_equal(dvi_world_set_method(w, DVI_METHOD_DEM, &s), DVI_OK);
    dvi_material mat = material(1e7, 0.5, 0.5);
    add_plane(w, 0.0, mat);
    double x[3] = {0, 0, 0.1};
    add_sphere(w, x, 0.1, 1.0, mat);
    run(w, 1e-4, 0.05);
    assert_true(dvi_world_get_stats(w).max_overlap > 0.0); /* a DEM step ran */
    s.k_n = -1.0;
    assert_int_equal(dvi_world_set_method(w, DVI_METHOD_DVI, &s), DVI_ERR_INVALID_ARG);
    dvi_world_destroy(w);
    /* bad settings and materials are refused */
    dvi_world_def wd = dvi_default_world_def();
    wd.dem.terrain_slip_speed = 0.0;
    assert_int_equal(dvi_world_create(&wd, &w), DVI_ERR_INVALID_ARG);
    wd = dvi_default_world_def();
    wd.method = (dvi_method)7;
    assert_int_equal(dvi_world_create(&wd, &w), DVI_ERR_INVALID_ARG);
}

/* ---- hysteretic height-field model --------------------------------------------------------- */

/* A 0.4 × 0.4 m plate (2 kg) sampled by 5 × 5 points on its bottom face
 * (S = 0.0064 m² each) on a flat height field with c = 1e6 N/m³, γ = 0.3:
 * it settles at the sinkage m g / (c ΣS) (the regularised sign vanishes at
 * rest), and pushed at 1 m/s it slides v²/(2 μ g) before it stops. */
static void test_terrain_hysteretic(void** state)
{
    (void)state;
    const double c = 1e6, gam = 0.3, mu = 0.5, m = 2.0, a = 0.2, hz = 0.02, h = 1e-4;
    dvi_world* w = make_world(DVI_DEM_HERTZ, true);
    enum { NX = 21 };
    static double heights[NX * NX];
    memset(heights, 0, sizeof heights);
    dvi_body_def gd = dvi_default_body_def();
    gd.type = DVI_BODY_FIXED;
    dvi_body_id ground;
    assert_int_equal(dvi_body_create(w, &gd, &ground), DVI_OK);
    dvi_shape_def hd = dvi_default_shape_def();
    hd.type = DVI_SHAPE_HEIGHTFIELD;
    hd.nx = hd.ny = NX;
    hd.dx = hd.dy = 0.1;
    hd.heights = heights;
    hd.material.friction = mu;
    hd.material.terrain_stiffness = c;
    hd.material.terrain_hysteresis = gam;
    dvi_shape_id hs;
    assert_int_equal(dvi_shape_create(w, ground, &hd, &hs), DVI_OK);
    dvi_body_def bd = dvi_default_body_def();
    bd.mass = m;
    bd.inertia[0] = bd.inertia[4] = m * (4 * a * a + 4 * hz * hz) / 12;
    bd.inertia[8] = m * 8 * a * a / 12;
    bd.position[0] = 0.6;
    bd.position[1] = 1.0;
    bd.position[2] = hz;
    dvi_body_id plate;
    assert_int_equal(dvi_body_create(w, &bd, &plate), DVI_OK);
    dvi_shape_def sd = dvi_default_shape_def();
    sd.type = DVI_SHAPE_BOX;
    sd.half_extents[0] = sd.half_extents[1] = a;
    sd.half_extents[2] = hz;
    sd.material.friction = mu;
    dvi_shape_id ps;
    assert_int_equal(dvi_shape_create(w, plate, &sd, &ps), DVI_OK);
    double samples[25 * 4];
    const double S = (2 * a) * (2 * a) / 25;
    for (int i = 0; i < 5; i++)
        for (int j = 0; j < 5; j++) {
            double* p = samples + 4 * (5 * i + j);
            p[0] = -a + (i + 0.5) * (2 * a / 5);
            p[1] = -a + (j + 0.5) * (2 * a / 5);
            p[2] = -hz;
            p[3] = S;
        }
    assert_int_equal(dvi_shape_set_dem_samples(w, ps, 25, samples), DVI_OK);
    run(w, h, 0.5);
    double x[3], v[3];
    dvi_body_get_position(w, plate, x);
    const double sink = hz - x[2], expect = m * G / (c * 25 * S);
    assert_int_equal(dvi_world_contact_count(w), 25);
    print_message("plate on the hysteretic terrain: sinkage %.6g m, m g/(c S) = %.6g m (error %.3f%%, limit 1%%); "
                  "band of the unregularised law [%.4g, %.4g] m\n",
                  sink, expect, 100 * (sink - expect) / expect, expect / (1 + gam), expect / (1 - gam));
    assert_near(sink, expect, 0.01 * expect);
    double x0[3];
    dvi_body_get_position(w, plate, x0);
    v[0] = 1.0;
    v[1] = v[2] = 0.0;
    dvi_body_set_velocity(w, plate, v, NULL);
    run(w, h, 0.5);
    dvi_body_get_position(w, plate, x);
    dvi_body_get_velocity(w, plate, v);
    double d = x[0] - x0[0], dexp = 1.0 / (2 * mu * G);
    print_message("plate pushed at 1 m/s slides %.5f m, v^2/(2 mu g) = %.5f m (error %.3f%%, limit 2%%), "
                  "final speed %.2g m/s\n",
                  d, dexp, 100 * (d - dexp) / dexp, fabs(v[0]));
    assert_near(d, dexp, 0.02 * dexp);
    /* samples are refused on fixed bodies and with bad areas */
    assert_int_equal(dvi_shape_set_dem_samples(w, hs, 25, samples), DVI_ERR_INVALID_ARG);
    samples[3] = -1.0;
    assert_int_equal(dvi_shape_set_dem_samples(w, ps, 25, samples), DVI_ERR_INVALID_ARG);
    dvi_world_destroy(w);
}

/* The height-field triangles of the terrain model: a tilted plane z = 0.1 x +
 * 0.2 y is represented exactly by both triangles of a cell. */
static void test_terrain_query(void** state)
{
    (void)state;
    double H[3 * 3];
    for (int j = 0; j < 3; j++)
        for (int i = 0; i < 3; i++) H[3 * j + i] = 0.1 * (0.5 * i) + 0.2 * (0.25 * j);
    col_heightfield hf = {3, 3, 0.5, 0.25, H, 0.0, 0.0};
    double nexp[3] = {-0.1, -0.2, 1.0}, l = sqrt(1.05);
    const double pts[3][3] = {{0.1, 0.2, 0.0}, {0.4, 0.05, 0.3}, {0.9, 0.45, -0.1}};
    for (int k = 0; k < 3; k++) {
        double n[3], z;
        assert_true(wld_dem_terrain_query(&hf, pts[k], n, &z));
        double surf = 0.1 * pts[k][0] + 0.2 * pts[k][1];
        for (int q = 0; q < 3; q++) assert_near(n[q], nexp[q] / l, 1e-12);
        assert_near(z, (pts[k][2] - surf) / l, 1e-12);
    }
    double n[3], z, out[3] = {1.1, 0.1, 0.0};
    assert_false(wld_dem_terrain_query(&hf, out, n, &z));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_restitution_map),
        cmocka_unit_test(test_head_on_restitution),
        cmocka_unit_test(test_hertz_duration),
        cmocka_unit_test(test_incline_stick),
        cmocka_unit_test(test_incline_slide),
        cmocka_unit_test(test_sliding_box_distance),
        cmocka_unit_test(test_sliding_box_scene_holds),
        cmocka_unit_test(test_sphere_incline_rolling),
        cmocka_unit_test(test_sphere_stack),
        cmocka_unit_test(test_brick_stack_rests),
        cmocka_unit_test(test_stopped_box_friction),
        cmocka_unit_test(test_pendulum),
        cmocka_unit_test(test_rover_statics),
        cmocka_unit_test(test_chain_iterative),
        cmocka_unit_test(test_history_churn),
        cmocka_unit_test(test_history_no_growth),
        cmocka_unit_test(test_stability_guard),
        cmocka_unit_test(test_deterministic),
        cmocka_unit_test(test_dvi_untouched_and_switch),
        cmocka_unit_test(test_terrain_query),
        cmocka_unit_test(test_terrain_hysteretic),
    };
    return cmocka_run_group_tests_name("dem", tests, NULL, NULL);
}
