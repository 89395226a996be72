/* Physics of the rigid-body world against analytic answers.
 * Each test states the number it expects and a tolerance that a real bug
 * (wrong sign, missing term, wrong Jacobian) would break. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "dvi/world.h"
#include "test_util.h"

#define PI 3.14159265358979323846
#define G 9.81

static dvi_world* make_world(const char* solver)
{
    dvi_world_def wd = dvi_default_world_def();
    wd.solver = solver;
    if (strcmp(solver, "lemke") == 0) wd.solver_settings.lemke.friction_directions = 4;
    if (strcmp(solver, "pgs") == 0) { /* redundant box contacts: PGS needs thousands of sweeps (docs/solvers.md) */
        wd.solver_settings.tolerance = 1e-6;
        wd.solver_settings.max_iterations = 20000;
    }
    dvi_world* w = NULL;
    assert_int_equal(dvi_world_create(&wd, &w), DVI_OK);
    return w;
}

/* A fixed ground body with a plane whose outward normal is rotated by theta
 * about the x axis (an incline descending towards −y... see below). */
static dvi_body_id add_ground(dvi_world* w, double theta, double mu)
{
    dvi_shape_def sd = test_plane_def(theta);
    sd.material.friction = mu;
    dvi_body_id g = test_fixed_plane(w, &sd);
    return g;
}

/* Body resting on the incline (rotated by theta about x), centre at height
 * `lift` above the surface along its normal. */
static dvi_body_id add_on_incline(dvi_world* w, double theta, dvi_shape_type type, double size, double mass,
                                  double mu, double lift)
{
    dvi_body_def bd = dvi_default_body_def();
    bd.mass = mass;
    double I = type == DVI_SHAPE_SPHERE ? 0.4 * mass * size * size : mass * (4 * size * size) / 6.0;
    bd.inertia[0] = bd.inertia[4] = bd.inertia[8] = I;
    /* plane normal n = R_x(θ) e_z = (0, −sin θ, cos θ) */
    bd.position[1] = -sin(theta) * lift;
    bd.position[2] = cos(theta) * lift;
    bd.orientation[0] = cos(theta / 2);
    bd.orientation[1] = sin(theta / 2);
    dvi_body_id b;
    assert_int_equal(dvi_body_create(w, &bd, &b), DVI_OK);
    dvi_shape_def sd = dvi_default_shape_def();
    sd.type = type;
    sd.radius = size;
    sd.half_extents[0] = sd.half_extents[1] = sd.half_extents[2] = size;
    sd.material.friction = mu;
    dvi_shape_id s;
    assert_int_equal(dvi_shape_create(w, b, &sd, &s), DVI_OK);
    return b;
}

/* Distance travelled down the slope (the slope's downhill direction is
 * R_x(θ)(0, 1, 0) rotated: d = (0, cos θ, sin θ) points uphill, so downhill is −d). */
static double downhill(const double* x0, const double* x, double theta)
{
    return -((x[1] - x0[1]) * cos(theta) + (x[2] - x0[2]) * sin(theta));
}

static void run(dvi_world* w, double h, double seconds)
{
    int n = (int)llround(seconds / h);
    for (int i = 0; i < n; i++) {
        dvi_status st = dvi_world_step(w, h);
        if (st < 0) fail_msg("step %d: %s", i, dvi_world_last_error(w));
    }
}

static const char* const SOLVERS[3] = {"apgd", "pgs", "lemke"};

static void test_box_incline_stick(void** state)
{
    (void)state;
    const double theta = 20 * PI / 180; /* tan θ = 0.364 < μ = 0.5 */
    for (int k = 0; k < 3; k++) {
        dvi_world* w = make_world(SOLVERS[k]);
        add_ground(w, theta, 0.5);
        dvi_body_id b = add_on_incline(w, theta, DVI_SHAPE_BOX, 0.1, 1.0, 0.5, 0.1);
        double x0[3], x[3];
        run(w, 1e-3, 0.05); /* settle the initial step */
        dvi_body_get_position(w, b, x0);
        run(w, 1e-3, 2.0);
        dvi_body_get_position(w, b, x);
        double d = sqrt((x[0] - x0[0]) * (x[0] - x0[0]) + (x[1] - x0[1]) * (x[1] - x0[1]) +
                        (x[2] - x0[2]) * (x[2] - x0[2]));
        print_message("box, %s, tan(theta) = %.3f < mu = 0.5: displacement over 2 s = %.3g m (limit 1e-6)\n",
                      SOLVERS[k], tan(theta), d);
        assert_true(d < 1e-6);
        dvi_world_destroy(w);
    }
}

/* Lemke on a box pyramid: 6 rows of 0.2 m cubes (21 boxes, 1 kg, μ 0.5,
 * 10 mm apart in a row), 4 corner contacts a face, so the pyramid LCP
 * (n = 864) is degenerate throughout. With its pivot tolerance at
 * 1e-10·max|d| and no second attempt, the solver pivoted on rounding noise:
 * 7 of these 30 steps failed the LCP check (residuals up to 1.5e6) and a box
 * was thrown 84 km. Now every step converges (some on the second path,
 * lemke.c) and no box moves more than 1e-6 m (8.3e-11 m measured). The LCP
 * tolerance is 1e-8 (the solver's default is 1e-6). It was loosened to 1e-6
 * while the residual depended on the BLAS kernels (1.6e-6 under OpenBLAS's
 * Haswell kernels on an AMD EPYC); Lemke's dense algebra is now the
 * library's own, in a fixed order (the same bits on every CPU), and its
 * residual is relative to the size of the terms of w = Mz + q
 * (‖|M||z|‖ ≈ 17 here, ‖q‖ = 0.24): largest 3.4e-9 over the 30 steps,
 * while the failure this test guards against left residuals of 0.2 and
 * more. The path still depends on the order of the sums: Lemke's basis
 * product summed over the basic columns alone left 2.8e-6 on one step.
 * Relative to the velocities (‖q‖ = 0.24, not ‖|M||z|‖ = 17) those answers
 * leave the contacts approaching at up to 4.9e-7 of them: 8 of the 30 steps
 * fail the driver's feasibility check at the world's 1e-8 and are reported
 * not converged (docs/solvers.md); the stack still does not move. */
static void test_lemke_box_pyramid(void** state)
{
    (void)state;
    dvi_world* w = make_world("lemke");
    dvi_solver_settings ls = dvi_default_solver_settings();
    ls.lemke.friction_directions = 4;
    ls.tolerance = 1e-8;
    ls.warm_start = true;
    assert_int_equal(dvi_world_set_solver(w, "lemke", &ls), DVI_OK);
    dvi_body_id ground = add_ground(w, 0.0, 0.5);
    (void)ground;
    dvi_body_id boxes[21];
    double x0[21][3];
    int nb = 0;
    for (int row = 0; row < 6; row++) {
        int count = 6 - row;
        for (int i = 0; i < count; i++) {
            dvi_body_def bd = dvi_default_body_def();
            bd.mass = 1.0;
            bd.inertia[0] = bd.inertia[4] = bd.inertia[8] = 4.0 * 0.01 / 6.0;
            bd.position[0] = (i - 0.5 * (count - 1)) * 0.21;
            bd.position[2] = 0.1 + 0.2 * row;
            assert_int_equal(dvi_body_create(w, &bd, &boxes[nb]), DVI_OK);
            dvi_shape_def sd = dvi_default_shape_def();
            sd.type = DVI_SHAPE_BOX;
            sd.half_extents[0] = sd.half_extents[1] = sd.half_extents[2] = 0.1;
            sd.material.friction = 0.5;
            dvi_shape_id sh;
            assert_int_equal(dvi_shape_create(w, boxes[nb], &sd, &sh), DVI_OK);
            memcpy(x0[nb], bd.position, sizeof x0[nb]);
            nb++;
        }
    }
    int failed = 0, unconverged = 0;
    double worst_res = 0.0;
    for (int k = 0; k < 30; k++) {
        dvi_status st = dvi_world_step(w, 0.005);
        assert_true(st == DVI_OK || st == DVI_NOT_CONVERGED);
        dvi_step_stats ss = dvi_world_get_stats(w);
        if (!(ss.residual <= ls.tolerance)) failed++; /* the LCP check */
        if (ss.solver_status != DVI_SOLVE_CONVERGED) unconverged++;
        if (ss.solver_status != DVI_SOLVE_CONVERGED && ss.solver_status != DVI_SOLVE_MAX_ITERATIONS)
            fail_msg("step %d: %s", k, dvi_solve_status_string(ss.solver_status));
        if (ss.residual > worst_res) worst_res = ss.residual;
    }
    double moved = 0.0;
    for (int b = 0; b < nb; b++) {
        double x[3];
        dvi_body_get_position(w, boxes[b], x);
        double d = sqrt((x[0] - x0[b][0]) * (x[0] - x0[b][0]) + (x[1] - x0[b][1]) * (x[1] - x0[b][1]) +
                        (x[2] - x0[b][2]) * (x[2] - x0[b][2]));
        if (d > moved) moved = d;
    }
    print_message("lemke, 6-row box pyramid (21 boxes), 30 steps of 5 ms: %d steps failed the LCP check, %d the "
                  "feasibility check, largest residual %.3g, largest displacement %.3g m (limit 1e-6)\n",
                  failed, unconverged, worst_res, moved);
    assert_int_equal(failed, 0);
    assert_true(unconverged <= 10);
    assert_true(moved < 1e-6);
    dvi_world_destroy(w);
}

/* Lemke's 4-sided pyramid, turned per contact (lemke.orient, the default)
 * along its previous tangential impulse or against its tangential velocity
 * (to 0.5°), decides stick and slip and the sliding direction right for any
 * orientation, at the default settings. Fixed to the frame it held only
 * μ/(|cos θ| + |sin θ|) off its edges: a box that must stick on a 16° slope
 * (tan 16° = 0.287 < μ = 0.3) slid 1.2 m when the slope fell 30° off x, a
 * box pushed at 0.894 μmg at 26.6° slid 1.39 m, one pushed at 0.99 μmg at
 * 30° slid, boxes pushed at 2 μmg went off at 45°, a box sliding down a 30°
 * slope whose fall line is 30° off x accelerated 24.5 % too fast and
 * drifted 11.9° sideways, and a sphere that must roll on it slid. */
static dvi_body_id flat_box(dvi_world* w, double mu)
{
    dvi_body_def bd = dvi_default_body_def();
    bd.mass = 1.0;
    bd.inertia[0] = bd.inertia[4] = bd.inertia[8] = 4.0 * 0.01 / 6.0;
    bd.position[2] = 0.1;
    dvi_body_id b;
    assert_int_equal(dvi_body_create(w, &bd, &b), DVI_OK);
    dvi_shape_def sd = dvi_default_shape_def();
    sd.type = DVI_SHAPE_BOX;
    sd.half_extents[0] = sd.half_extents[1] = sd.half_extents[2] = 0.1;
    sd.material.friction = mu;
    dvi_shape_id s;
    assert_int_equal(dvi_shape_create(w, b, &sd, &s), DVI_OK);
    return b;
}

/* Lemke with its default settings (a 4-sided pyramid, oriented), in one of
 * its two modes. */
static dvi_world* make_lemke_default(bool coulomb)
{
    dvi_world_def wd = dvi_default_world_def();
    wd.solver = "lemke";
    wd.solver_settings.lemke.coulomb = coulomb;
    if (coulomb) wd.friction_law = DVI_LAW_COULOMB;
    dvi_world* w = NULL;
    assert_int_equal(dvi_world_create(&wd, &w), DVI_OK);
    assert_int_equal(wd.solver_settings.lemke.friction_directions, 4);
    assert_true(wd.solver_settings.lemke.orient);
    return w;
}

/* A plane tilted by th whose fall line points ph − 90° off x (R_z(ph)
 * R_x(th)), and a box (or a sphere) of size 0.1 resting on it; *down gets
 * the unit fall line. */
static dvi_body_id off_axis_slope(dvi_world* w, double th, double ph, double mu, bool sphere, double down[3])
{
    const double qz[4] = {cos(ph / 2), 0, 0, sin(ph / 2)}, qx[4] = {cos(th / 2), sin(th / 2), 0, 0};
    double q[4] = {qz[0] * qx[0], qz[0] * qx[1], qz[3] * qx[1], qz[3] * qx[0]}; /* qz ⊗ qx */
    dvi_shape_def sd = dvi_default_shape_def();
    memcpy(sd.offset_orientation, q, sizeof q);
    sd.material.friction = mu;
    test_fixed_plane(w, &sd);
    /* normal n = R_z(ph) (0, −sin th, cos th); fall line R_z(ph) (0, −cos th, −sin th) */
    const double n[3] = {sin(ph) * sin(th), -cos(ph) * sin(th), cos(th)};
    down[0] = sin(ph) * cos(th), down[1] = -cos(ph) * cos(th), down[2] = -sin(th);
    dvi_body_def bd = dvi_default_body_def();
    bd.mass = 1.0;
    double I = sphere ? 0.4 * 0.01 : 4.0 * 0.01 / 6.0;
    bd.inertia[0] = bd.inertia[4] = bd.inertia[8] = I;
    for (int k = 0; k < 3; k++) bd.position[k] = 0.1 * n[k];
    memcpy(bd.orientation, q, sizeof q);
    dvi_body_id b;
    assert_int_equal(dvi_body_create(w, &bd, &b), DVI_OK);
    sd = dvi_default_shape_def();
    sd.type = sphere ? DVI_SHAPE_SPHERE : DVI_SHAPE_BOX;
    sd.radius = 0.1;
    sd.half_extents[0] = sd.half_extents[1] = sd.half_extents[2] = 0.1;
    sd.material.friction = mu;
    dvi_shape_id s;
    assert_int_equal(dvi_shape_create(w, b, &sd, &s), DVI_OK);
    return b;
}

static void test_lemke_pyramid_turned(void** state)
{
    (void)state;
    const double mu = 0.3, ph = 60 * PI / 180;
    for (int mode = 0; mode < 2; mode++) {
        const char* name = mode ? "lemke (Coulomb LCP)" : "lemke";
        /* (a) a box that must stick on a 16° slope whose fall line is 30° off x */
        {
            dvi_world* w = make_lemke_default(mode == 1);
            double down[3], x0[3], x[3];
            dvi_body_id b = off_axis_slope(w, 16 * PI / 180, ph, mu, false, down);
            run(w, 1e-3, 0.05);
            dvi_body_get_position(w, b, x0);
            run(w, 1e-3, 1.0);
            dvi_body_get_position(w, b, x);
            double d = sqrt((x[0] - x0[0]) * (x[0] - x0[0]) + (x[1] - x0[1]) * (x[1] - x0[1]) +
                            (x[2] - x0[2]) * (x[2] - x0[2]));
            print_message("%s, defaults: box on a 16 deg slope falling 30 deg off x (mu 0.3): moved %.3g m in 1 s "
                          "(it must stick)\n",
                          name, d);
            assert_true(d < 1e-5);
            dvi_world_destroy(w);
        }
        /* (b) a box sliding down a 30° slope, fall line 30° off x: a = g (sin θ − μ cos θ) along the fall line;
         * (c) a sphere (μ 0.3 ≥ 2/7 tan 30° = 0.165) rolls: a = 5/7 g sin θ */
        for (int sphere = 0; sphere < 2; sphere++) {
            dvi_world* w = make_lemke_default(mode == 1);
            const double th = 30 * PI / 180;
            double down[3], v1[3], v2[3], x1[3], x2[3];
            dvi_body_id b = off_axis_slope(w, th, ph, mu, sphere == 1, down);
            run(w, 1e-3, 0.2);
            dvi_body_get_velocity(w, b, v1);
            dvi_body_get_position(w, b, x1);
            run(w, 1e-3, 1.0);
            dvi_body_get_velocity(w, b, v2);
            dvi_body_get_position(w, b, x2);
            double a = 0.0, dx[3], along = 0.0, len = 0.0;
            for (int k = 0; k < 3; k++) {
                a += (v2[k] - v1[k]) * down[k];
                dx[k] = x2[k] - x1[k];
                along += dx[k] * down[k];
                len += dx[k] * dx[k];
            }
            double side = acos(fmin(1.0, along / sqrt(len))) * 180 / PI;
            double want = sphere ? 5.0 / 7.0 * G * sin(th) : G * (sin(th) - mu * cos(th));
            print_message("%s, defaults: %s on a 30 deg slope falling 30 deg off x: a = %.5f m/s^2 (want %.5f, "
                          "%.3f %%), %.3f deg off the fall line\n",
                          name, sphere ? "sphere rolls" : "box slides", a, want, 100 * (a / want - 1), side);
            assert_near(a, want, 0.005 * want);
            assert_true(side < 0.3);
            dvi_world_destroy(w);
        }
        /* (d) pushed on flat ground: 0.894 μmg at 26.6° and 0.99 μmg at 30° stick; (e) 2 μmg at 30° slides along
         * the push with a = (2 − 1) μ g */
        const double pushes[3] = {0.894, 0.99, 2.0}, angles[3] = {atan2(1.0, 2.0), 30 * PI / 180, 30 * PI / 180};
        for (int c = 0; c < 3; c++) {
            dvi_world* w = make_lemke_default(mode == 1);
            add_ground(w, 0.0, mu);
            dvi_body_id b = flat_box(w, mu);
            run(w, 1e-3, 0.05);
            double x0[3], x[3];
            dvi_body_get_position(w, b, x0);
            const double F = pushes[c] * mu * G, f[3] = {F * cos(angles[c]), F * sin(angles[c]), 0},
                         zero[3] = {0, 0, 0};
            assert_int_equal(dvi_body_set_applied_force(w, b, f, zero), DVI_OK);
            run(w, 1e-3, 1.0);
            dvi_body_get_position(w, b, x);
            double dx = x[0] - x0[0], dy = x[1] - x0[1], d = sqrt(dx * dx + dy * dy);
            if (c < 2) {
                print_message("%s, defaults: pushed at %.3g mu m g at %.1f deg: moved %.3g m in 1 s (it must stick)\n",
                              name, pushes[c], angles[c] * 180 / PI, d);
                assert_true(d < 1e-5);
            } else {
                const double want = 0.5 * (pushes[c] - 1.0) * mu * G;
                const double dir = atan2(dy, dx) * 180 / PI;
                print_message("%s, defaults: pushed at 2 mu m g at 30 deg: slid %.4f m (want %.4f) towards %.2f deg\n",
                              name, d, want, dir);
                assert_near(d, want, 0.01 * want);
                assert_near(dir, 30.0, 0.3);
            }
            dvi_world_destroy(w);
        }
    }
}

/* The CCP's relaxation, reported. A sliding contact of the CCP that pushes
 * separates at u_n = μ‖u_t‖ (u_n = v_n + Φ/h). A box resting on flat ground
 * and set sliding at v0 = 2 m/s (μ 0.3, h 1 ms) is therefore launched in the
 * first step at v_z = μ v = 0.55 m/s (its contacts were closed, Φ = 0), flies
 * for about 2 v_z / g = 0.11 s, and after it lands rides at the gap h μ v,
 * lifted by h μ v in every step, the normal impulses doing the work
 * γ_n u_n = m g h μ v (the friction work the relaxation offsets). The step
 * reports both (dvi_step_stats.ccp_hover, ccp_hover_work). Coulomb's law
 * keeps the contacts closed: no hover, no launch. At the default step. */
static void test_ccp_hover(void** state)
{
    (void)state;
    const double mu = 0.3, h = 1e-3, v0 = 2.0, m = 1.0;
    for (int law = 0; law < 2; law++) {
        dvi_world_def wd = dvi_default_world_def();
        wd.solver = law ? "nsgs" : "apgd";
        wd.friction_law = law ? DVI_LAW_COULOMB : DVI_LAW_CCP;
        dvi_world* w = NULL;
        assert_int_equal(dvi_world_create(&wd, &w), DVI_OK);
        add_ground(w, 0.0, mu);
        dvi_body_id b = add_on_incline(w, 0.0, DVI_SHAPE_BOX, 0.1, m, mu, 0.1);
        const double zero[3] = {0, 0, 0}, v[3] = {v0, 0, 0};
        assert_int_equal(dvi_body_set_velocity(w, b, v, zero), DVI_OK);
        double worst = 0.0, worst_work = 0.0, largest = 0.0, vz_max = 0.0, first_hover = 0.0, first_vx = 0.0;
        for (int i = 0; i < 400; i++) { /* 0.4 s: it slides until v0 / (μ g) = 0.68 s */
            assert_true(dvi_world_step(w, h) >= 0);
            dvi_step_stats st = dvi_world_get_stats(w);
            double vb[3];
            dvi_body_get_velocity(w, b, vb);
            if (st.ccp_hover > largest) largest = st.ccp_hover;
            if (vb[2] > vz_max) vz_max = vb[2];
            if (i == 0) first_hover = st.ccp_hover, first_vx = vb[0];
            if (law == 0 && i >= 150) { /* landed: steady sliding */
                const double want = h * mu * vb[0], work = m * G * h * mu * vb[0];
                if (fabs(st.ccp_hover / want - 1) > worst) worst = fabs(st.ccp_hover / want - 1);
                if (fabs(st.ccp_hover_work / work - 1) > worst_work) worst_work = fabs(st.ccp_hover_work / work - 1);
            }
        }
        if (law == 0) {
            print_message("CCP, box set sliding at 2 m/s (mu 0.3, h 1 ms): launched at v_z %.4f m/s (mu v %.4f), "
                          "first hover %.4g m (h mu v %.4g); sliding after it lands: hover h mu v to %.2e, its "
                          "work m g h mu v to %.2e\n",
                          vz_max, mu * first_vx, first_hover, h * mu * first_vx, worst, worst_work);
            assert_near(vz_max, mu * first_vx, 1e-3 * mu * first_vx);
            assert_near(first_hover, h * mu * first_vx, 1e-3 * h * mu * first_vx);
            assert_true(worst < 0.01);
            assert_true(worst_work < 0.01);
        } else {
            print_message("Coulomb's law (nsgs), the same box: largest hover %.3g m, largest v_z %.3g m/s\n", largest,
                          vz_max);
            assert_true(largest < 1e-9);
            assert_true(vz_max < 1e-6);
        }
        dvi_world_destroy(w);
    }
}

/* Acceleration down the slope from the velocity change over [t1, t2]. */
static double slope_acceleration(dvi_world* w, dvi_body_id b, double theta, double h)
{
    double v1[3], v2[3], x1[3], x2[3];
    run(w, h, 0.2);
    dvi_body_get_velocity(w, b, v1);
    dvi_body_get_position(w, b, x1);
    run(w, h, 1.0);
    dvi_body_get_velocity(w, b, v2);
    dvi_body_get_position(w, b, x2);
    double zero[3] = {0, 0, 0};
    return (downhill(zero, v2, theta) - downhill(zero, v1, theta)) / 1.0;
}

static void test_box_incline_slide(void** state)
{
    (void)state;
    const double theta = 30 * PI / 180, mu = 0.3; /* tan θ = 0.577 > μ */
    for (int k = 0; k < 3; k++) {
        dvi_world* w = make_world(SOLVERS[k]);
        add_ground(w, theta, mu);
        dvi_body_id b = add_on_incline(w, theta, DVI_SHAPE_BOX, 0.1, 1.0, mu, 0.1);
        double a = slope_acceleration(w, b, theta, 1e-3);
        double expect = G * (sin(theta) - mu * cos(theta)); /* 2.3556 m/s² */
        /* Lemke's 4-sided pyramid is exact here: the sliding direction is a pyramid edge */
        print_message("box slides, %s: a = %.5f m/s^2, g(sin - mu cos) = %.5f (1%%)\n", SOLVERS[k], a, expect);
        assert_near(a, expect, 0.01 * expect);
        dvi_world_destroy(w);
    }
}

/* A sphere does not stick on an incline: with enough friction it rolls
 * (a = 5/7 g sin θ, no slip for μ ≥ 2/7 tan θ); with less it slides. */
static void test_sphere_incline(void** state)
{
    (void)state;
    const double theta = 30 * PI / 180;
    const double mus[2] = {0.5, 0.1}; /* 2/7 tan θ = 0.165 */
    for (int k = 0; k < 2; k++) {
        dvi_world* w = make_world("apgd");
        add_ground(w, theta, mus[k]);
        dvi_body_id b = add_on_incline(w, theta, DVI_SHAPE_SPHERE, 0.1, 1.0, mus[k], 0.1);
        double a = slope_acceleration(w, b, theta, 1e-3);
        double expect = k == 0 ? 5.0 / 7.0 * G * sin(theta) : G * (sin(theta) - mus[k] * cos(theta));
        print_message("sphere, mu = %.2f: a = %.5f m/s^2, expected %.5f (%s, 1%%)\n", mus[k], a, expect,
                      k == 0 ? "rolls" : "slides");
        assert_near(a, expect, 0.01 * expect);
        dvi_world_destroy(w);
    }
}

/* A sphere with rolling friction arm μ_r ≥ R tan θ holds on the incline. */
static void test_sphere_incline_rolling_friction_stick(void** state)
{
    (void)state;
    const double theta = 20 * PI / 180;
    dvi_world_def wd = dvi_default_world_def();
    dvi_world* w = NULL;
    assert_int_equal(dvi_world_create(&wd, &w), DVI_OK);
    dvi_shape_def sd = test_plane_def(theta);
    sd.material.friction = 0.5;
    sd.material.rolling_friction = 0.1; /* R tan θ = 0.036 m */
    test_fixed_plane(w, &sd);
    dvi_shape_id s;
    dvi_body_def bd = dvi_default_body_def();
    bd.inertia[0] = bd.inertia[4] = bd.inertia[8] = 0.4 * 0.01;
    bd.position[1] = -sin(theta) * 0.1;
    bd.position[2] = cos(theta) * 0.1;
    dvi_body_id b;
    dvi_body_create(w, &bd, &b);
    sd = dvi_default_shape_def();
    sd.type = DVI_SHAPE_SPHERE;
    sd.radius = 0.1;
    sd.material.friction = 0.5;
    sd.material.rolling_friction = 0.1;
    dvi_shape_create(w, b, &sd, &s);
    double x0[3], x[3];
    run(w, 1e-3, 0.05);
    dvi_body_get_position(w, b, x0);
    run(w, 1e-3, 2.0);
    dvi_body_get_position(w, b, x);
    double d = fabs(downhill(x0, x, theta));
    print_message("sphere with rolling friction 0.1 m >= R tan(theta) = %.3f m: displacement %.3g m (1e-6)\n",
                  0.1 * tan(theta), d);
    assert_true(d < 1e-6);
    dvi_world_destroy(w);
}

static void test_box_sliding_distance(void** state)
{
    (void)state;
    const double mu = 0.4, v0 = 2.0;
    for (int k = 0; k < 3; k++) {
        dvi_world* w = make_world(SOLVERS[k]);
        add_ground(w, 0.0, mu);
        dvi_body_id b = add_on_incline(w, 0.0, DVI_SHAPE_BOX, 0.1, 1.0, mu, 0.1);
        run(w, 1e-3, 0.02);
        double x0[3], x[3], v[3] = {v0, 0, 0};
        dvi_body_get_position(w, b, x0);
        dvi_body_set_velocity(w, b, v, NULL);
        run(w, 1e-3, 1.0); /* stops after v0/(μg) = 0.51 s */
        dvi_body_get_position(w, b, x);
        double d = x[0] - x0[0], expect = v0 * v0 / (2 * mu * G); /* 0.50968 m */
        print_message("box sliding from %.1f m/s, mu = %.1f, %s: stops after %.5f m, v^2/(2 mu g) = %.5f (1%%)\n", v0,
                      mu, SOLVERS[k], d, expect);
        assert_near(d, expect, 0.01 * expect);
        dvi_world_destroy(w);
    }
}

/* 10 spheres or 10 boxes stacked on the ground stay put for 10 s and the
 * bottom contacts carry the whole weight. */
static void stack_test(const char* solver, dvi_shape_type type, double h, double seconds)
{
    const int N = 10;
    const double s = 0.1, m = 1.0;
    dvi_world* w = make_world(solver);
    add_ground(w, 0.0, 0.5);
    dvi_body_id ids[10];
    for (int k = 0; k < N; k++) {
        dvi_body_def bd = dvi_default_body_def();
        bd.mass = m;
        double I = type == DVI_SHAPE_SPHERE ? 0.4 * m * s * s : m * 4 * s * s / 6;
        bd.inertia[0] = bd.inertia[4] = bd.inertia[8] = I;
        bd.position[2] = s + 2 * s * k;
        assert_int_equal(dvi_body_create(w, &bd, &ids[k]), DVI_OK);
        dvi_shape_def sd = dvi_default_shape_def();
        sd.type = type;
        sd.radius = s;
        sd.half_extents[0] = sd.half_extents[1] = sd.half_extents[2] = s;
        dvi_shape_id sid;
        assert_int_equal(dvi_shape_create(w, ids[k], &sd, &sid), DVI_OK);
    }
    double top0[3], top[3];
    dvi_body_get_position(w, ids[N - 1], top0);
    run(w, h, seconds);
    dvi_body_get_position(w, ids[N - 1], top);
    double drift = sqrt((top[0] - top0[0]) * (top[0] - top0[0]) + (top[1] - top0[1]) * (top[1] - top0[1]) +
                        (top[2] - top0[2]) * (top[2] - top0[2]));
    /* ground contact force: minus the sum over contacts with the ground of the force on body 0 */
    double f[3];
    dvi_body_get_contact_force(w, ids[0], f, NULL);
    double above[3];
    dvi_body_get_contact_force(w, ids[1], above, NULL); /* force on body 1 from bodies 0 and 2 */
    /* bottom contact = force on body 0 from the ground = f(body 0) + force from body 1 on body 0 */
    int32_t nc = dvi_world_contact_count(w);
    double ground = 0.0;
    for (int32_t c = 0; c < nc; c++) {
        dvi_contact_info ci;
        dvi_world_get_contact(w, c, &ci);
        bool bottom = (ci.body_a.index1 == 1 && ci.body_b.index1 == ids[0].index1) ||
                      (ci.body_b.index1 == 1 && ci.body_a.index1 == ids[0].index1);
        if (bottom) ground += fabs(ci.force[2]);
    }
    double weight = N * m * G;
    print_message("%s stack, %s, h = %g: top drift %.3g m over %g s (1e-3); bottom contact %.4f N, weight %.4f N "
                  "(0.5%%); %d contacts, last step %d iterations, residual %.2e\n",
                  type == DVI_SHAPE_SPHERE ? "sphere" : "box", solver, h, drift, seconds, ground, weight, nc,
                  dvi_world_get_stats(w).iterations, dvi_world_get_stats(w).residual);
    assert_true(drift < 1e-3);
    assert_near(ground, weight, 0.005 * weight);
    dvi_world_destroy(w);
}

static void test_sphere_stack(void** state)
{
    (void)state;
    stack_test("apgd", DVI_SHAPE_SPHERE, 5e-3, 10.0);
    stack_test("pgs", DVI_SHAPE_SPHERE, 5e-3, 2.0);
    stack_test("lemke", DVI_SHAPE_SPHERE, 5e-3, 1.0);
}

static void test_box_stack(void** state)
{
    (void)state;
    stack_test("apgd", DVI_SHAPE_BOX, 5e-3, 10.0);
    stack_test("pgs", DVI_SHAPE_BOX, 5e-3, 0.5);
    stack_test("lemke", DVI_SHAPE_BOX, 5e-3, 0.5);
}

/* A body of mass m and inertia diag(Ixy, Ixy, Iz) at pos, hinged to the world
 * at the origin about `axis` (a world axis: 0 = x, 2 = z); a speed motor with
 * the given target and damping when motor is set. */
static dvi_body_id hinged(dvi_world* w, double m, double Ixy, double Iz, const double pos[3], int axis, bool motor,
                          double speed, double damping, dvi_joint_id* j)
{
    dvi_body_def bd = dvi_default_body_def();
    bd.mass = m;
    bd.inertia[0] = bd.inertia[4] = Ixy;
    bd.inertia[8] = Iz;
    for (int k = 0; k < 3; k++) bd.position[k] = pos[k];
    dvi_body_id b;
    assert_int_equal(dvi_body_create(w, &bd, &b), DVI_OK);
    dvi_joint_def jd = dvi_default_joint_def();
    jd.type = DVI_JOINT_REVOLUTE;
    jd.body_b = b;
    jd.axis[2] = 0.0;
    jd.axis[axis] = 1.0;
    if (motor) {
        jd.motor = DVI_MOTOR_ROTATION_SPEED;
        jd.motor_speed = speed;
        jd.motor_damping = damping;
    }
    assert_int_equal(dvi_joint_create(w, &jd, j), DVI_OK);
    return b;
}

/* A sphere (m, r) hanging at distance L below a revolute joint to the world.
 * Small-angle period T = 2π sqrt(I_pivot / (m g L)), I_pivot = m L² + 2/5 m r². */
static void pendulum_case(const char* solver, double seconds, dvi_joint_solve joint_solve)
{
    const double L = 1.0, m = 1.0, r = 0.05, amp = 3.0 * PI / 180, h = 1e-3;
    dvi_world* w = make_world(solver);
    if (joint_solve != DVI_JOINT_SOLVE_AUTO) { /* the same world, the solver on every step */
        dvi_world_destroy(w);
        dvi_world_def wd = dvi_default_world_def();
        wd.solver = solver;
        if (strcmp(solver, "lemke") == 0) wd.solver_settings.lemke.friction_directions = 4;
        wd.joint_solve = joint_solve;
        assert_int_equal(dvi_world_create(&wd, &w), DVI_OK);
    }
    const double pos[3] = {0.0, L * sin(amp), -L * cos(amp)}, I = 0.4 * m * r * r;
    dvi_joint_id j;
    dvi_body_id b = hinged(w, m, I, I, pos, 0, false, 0.0, 0.0, &j);
    double prev = 0.0, t_prev = 0.0, crossings[64];
    int nc = 0;
    double max_violation = 0.0, max_free_torque = 0.0, max_residual = 0.0;
    int iterations = 0;
    for (int i = 0; i < (int)(seconds / h); i++) {
        assert_true(dvi_world_step(w, h) >= 0);
        const dvi_step_stats st = dvi_world_get_stats(w);
        iterations += st.iterations;
        if (st.residual > max_residual) max_residual = st.residual;
        assert_int_equal(st.solver_status, DVI_SOLVE_CONVERGED);
        /* a frictionless hinge about x carries no torque about x: a reaction
         * moved to the anchor with the end-of-step lever while the rows used
         * the start-of-step one leaves |v|·h·|F| ≈ 5e-3 N·m here */
        double Fr[3], Tr[3];
        assert_int_equal(dvi_joint_get_reaction(w, j, Fr, Tr), DVI_OK);
        if (fabs(Tr[0]) > max_free_torque) max_free_torque = fabs(Tr[0]);
        double x[3];
        dvi_body_get_position(w, b, x);
        double t = dvi_world_time(w);
        if (i > 0 && prev > 0.0 && x[1] <= 0.0 && nc < 64) /* downward zero crossing, interpolated */
            crossings[nc++] = t_prev + (t - t_prev) * prev / (prev - x[1]);
        prev = x[1];
        t_prev = t;
        double dist = sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2]);
        double v = fabs(dist - L);
        if (fabs(x[0]) > v) v = fabs(x[0]);
        if (v > max_violation) max_violation = v;
    }
    assert_true(nc >= 3);
    double T = (crossings[nc - 1] - crossings[0]) / (nc - 1);
    double expect = 2 * PI * sqrt((m * L * L + 0.4 * m * r * r) / (m * G * L));
    /* finite amplitude correction: T ≈ T0 (1 + θ0²/16) */
    expect *= 1.0 + amp * amp / 16.0;
    print_message("pendulum, %s, %g s: period %.5f s, expected %.5f s (0.5%%); max joint violation %.3g m (1e-6)\n",
                  solver, seconds, T, expect, max_violation);
    assert_near(T, expect, 0.005 * expect);
    assert_true(max_violation < 1e-6);
    print_message("pendulum, %s, joint_solve %s: %d solver iterations in all, largest residual %.3g\n", solver,
                  joint_solve == DVI_JOINT_SOLVE_AUTO ? "auto" : "iterative", iterations, max_residual);
    if (joint_solve == DVI_JOINT_SOLVE_AUTO) { /* joint rows alone: solved directly, to 1e-10 */
        assert_int_equal(iterations, 0);
        assert_true(max_residual <= 1e-10);
    } else if (strcmp(solver, "lemke") != 0) { /* (Lemke eliminates bilateral rows: no pivot) */
        assert_true(iterations >= (int)(seconds / h)); /* the solver ran on every step */
    }
    print_message("pendulum, %s: largest torque about the free axis %.3g N m (1e-9)\n", solver, max_free_torque);
    assert_true(max_free_torque < 1e-9);
    double F[3], Tq[3];
    dvi_joint_get_reaction(w, j, F, Tq);
    assert_true(F[2] > 0.9 * m * G); /* the pivot holds the bob up */
    dvi_world_destroy(w);
}

/* The step's kinetic energy means the same under both methods: a 2 kg ball
 * (inertia 0.1 kg·m² about every axis) spinning at 3 rad/s falls freely for
 * 10 steps of 10 ms. Semi-implicit Euler gives v = g·10·h = 0.981 m/s
 * exactly, so E = ½·2·0.981² + ½·0.1·3² = 0.962361 + 0.45 = 1.412361 J. */
static void test_kinetic_energy_both_methods(void** state)
{
    (void)state;
    for (int m = 0; m < 2; m++) {
        dvi_world_def wd = dvi_default_world_def();
        wd.method = m == 0 ? DVI_METHOD_DVI : DVI_METHOD_DEM;
        dvi_world* w = NULL;
        assert_int_equal(dvi_world_create(&wd, &w), DVI_OK);
        dvi_body_def bd = dvi_default_body_def();
        bd.mass = 2.0;
        bd.inertia[0] = bd.inertia[4] = bd.inertia[8] = 0.1;
        bd.angular_velocity[2] = 3.0;
        bd.position[2] = 10.0;
        dvi_body_id b;
        assert_int_equal(dvi_body_create(w, &bd, &b), DVI_OK);
        dvi_shape_def sd = dvi_default_shape_def();
        sd.type = DVI_SHAPE_SPHERE;
        sd.radius = 0.1;
        dvi_shape_id sh;
        assert_int_equal(dvi_shape_create(w, b, &sd, &sh), DVI_OK);
        for (int k = 0; k < 10; k++) assert_int_equal(dvi_world_step(w, 0.01), DVI_OK);
        const double e = dvi_world_get_stats(w).kinetic_energy;
        print_message("kinetic energy after 10 free steps, %s: %.12g J (expected 1.412361)\n", m == 0 ? "DVI" : "DEM", e);
        assert_true(fabs(e - 1.412361) < 1e-9);
        dvi_world_destroy(w);
    }
}

static void test_pendulum(void** state)
{
    (void)state;
    pendulum_case("apgd", 10.0, DVI_JOINT_SOLVE_AUTO); /* the required 10 s */
    pendulum_case("apgd", 5.0, DVI_JOINT_SOLVE_ITERATIVE);
    pendulum_case("pgs", 5.0, DVI_JOINT_SOLVE_ITERATIVE);
    pendulum_case("lemke", 5.0, DVI_JOINT_SOLVE_ITERATIVE);
}

/* A damped speed motor (dvi_joint_def.motor_damping d) is a DC motor's law,
 * torque = d (target − ω), taken at the step's end. A flywheel (I about the
 * axis) started from rest then follows ω_n = ω0 (1 − ρⁿ), ρ = I / (I + h d),
 * exactly for every solver and for the DEM method; its continuous limit is
 * ω0 (1 − e^(−t d/I)). An arm under gravity held by a motor with target 0
 * sinks at the terminal speed −m g L / d. */
static double flywheel_speed(const char* solver, dvi_method method, int steps, double h, double I, double d,
                             double w0)
{
    dvi_world_def wd = dvi_default_world_def();
    wd.solver = solver;
    wd.method = method;
    wd.solver_settings.tolerance = 1e-12;
    dvi_world* w = NULL;
    assert_int_equal(dvi_world_create(&wd, &w), DVI_OK);
    const double origin[3] = {0.0, 0.0, 0.0};
    dvi_joint_id j;
    dvi_body_id b = hinged(w, 3.0, 1.5, I, origin, 2, true, w0, d, &j);
    run(w, h, steps * h);
    double om[3];
    assert_int_equal(dvi_body_get_angular_velocity(w, b, om), DVI_OK);
    assert_true(fabs(om[0]) < 1e-9 && fabs(om[1]) < 1e-9); /* the axis holds */
    dvi_world_destroy(w);
    return om[2];
}

static void test_damped_motor(void** state)
{
    (void)state;
    const double I = 2.0, d = 50.0, w0 = 3.0, h = 1e-3;
    const int n = 40; /* one time constant I/d = 0.04 s */
    const double rho = I / (I + h * d), exact = w0 * (1.0 - pow(rho, n));
    const char* const solvers[4] = {"apgd", "pgs", "jacobi", "lemke"};
    for (int s = 0; s < 5; s++) {
        const char* name = s < 4 ? solvers[s] : "apgd";
        double om = flywheel_speed(name, s < 4 ? DVI_METHOD_DVI : DVI_METHOD_DEM, n, h, I, d, w0);
        print_message("damped motor, %s%s: omega after %d steps %.12f rad/s, backward Euler %.12f (1e-9), "
                      "continuous %.6f\n", name, s < 4 ? "" : " (DEM)", n, om, exact, w0 * (1.0 - exp(-n * h * d / I)));
        assert_near(om, exact, 1e-9 * w0);
    }
    /* the continuous law: the first order error h d / (2 I) = 1.25 % of the gap at t = I/d */
    double om = flywheel_speed("apgd", DVI_METHOD_DVI, n, h, I, d, w0);
    assert_near(om, w0 * (1.0 - exp(-1.0)), 0.02 * w0 * exp(-1.0));
    /* d = 0 is the exact motor: at the target after one step */
    assert_near(flywheel_speed("apgd", DVI_METHOD_DVI, 1, h, I, 0.0, w0), w0, 1e-9 * w0);

    /* an arm of mass m at L from a horizontal axis, motor target 0: terminal speed −m g L / d */
    const double m = 1.0, L = 1.0, dm = 500.0;
    dvi_world* w = make_world("apgd");
    const double arm[3] = {0.0, L, 0.0};
    dvi_joint_id j;
    dvi_body_id b = hinged(w, m, 1e-4, 1e-4, arm, 0, true, 0.0, dm, &j);
    run(w, h, 0.1); /* 50 time constants (m L² / d = 2 ms) */
    double om3[3], x[3], F[3], T[3];
    dvi_body_get_angular_velocity(w, b, om3);
    dvi_body_get_position(w, b, x);
    dvi_joint_get_reaction(w, j, F, T);
    double c = x[1] / L; /* cos of the arm's angle below the horizontal */
    print_message("damped motor, arm: omega %.6f rad/s, -m g L cos / d = %.6f (1e-4); motor torque %.4f N m, "
                  "m g L cos = %.4f\n", om3[0], -m * G * L * c / dm, T[0], m * G * L * c);
    assert_near(om3[0], -m * G * L * c / dm, 1e-4 * m * G * L / dm);
    dvi_world_destroy(w);

    /* bad input */
    w = make_world("apgd");
    dvi_body_def bd = dvi_default_body_def();
    assert_int_equal(dvi_body_create(w, &bd, &b), DVI_OK);
    dvi_joint_def jd = dvi_default_joint_def();
    jd.body_b = b;
    jd.motor = DVI_MOTOR_ROTATION_SPEED;
    jd.motor_damping = -1.0;
    assert_int_equal(dvi_joint_create(w, &jd, &j), DVI_ERR_INVALID_ARG);
    assert_non_null(strstr(dvi_world_last_error(w), "joint.motor_damping: must be finite and >= 0"));
    jd.motor_damping = NAN;
    assert_int_equal(dvi_joint_create(w, &jd, &j), DVI_ERR_INVALID_ARG);
    jd.motor = DVI_MOTOR_ROTATION_TORQUE;
    jd.motor_damping = 1.0;
    assert_int_equal(dvi_joint_create(w, &jd, &j), DVI_ERR_INVALID_ARG);
    assert_non_null(strstr(dvi_world_last_error(w), "only a speed motor"));
    dvi_world_destroy(w);
}

static void test_bad_input(void** state)
{
    (void)state;
    dvi_world* w = make_world("apgd");
    dvi_world* w2 = make_world("apgd");
    dvi_body_def bd = dvi_default_body_def();
    dvi_body_id b;
    bd.position[0] = NAN;
    assert_int_equal(dvi_body_create(w, &bd, &b), DVI_ERR_INVALID_ARG);
    assert_true(DVI_IS_NULL(b));
    assert_non_null(strstr(dvi_world_last_error(w), "position"));
    bd = dvi_default_body_def();
    bd.mass = 0.0;
    assert_int_equal(dvi_body_create(w, &bd, &b), DVI_ERR_INVALID_ARG);
    assert_non_null(strstr(dvi_world_last_error(w), "body.mass"));
    bd.mass = -1.0;
    assert_int_equal(dvi_body_create(w, &bd, &b), DVI_ERR_INVALID_ARG);
    bd = dvi_default_body_def();
    bd.inertia[4] = -1.0; /* not positive definite */
    assert_int_equal(dvi_body_create(w, &bd, &b), DVI_ERR_INVALID_ARG);
    assert_non_null(strstr(dvi_world_last_error(w), "inertia"));
    bd = dvi_default_body_def();
    bd.inertia[1] = 0.5; /* not symmetric */
    assert_int_equal(dvi_body_create(w, &bd, &b), DVI_ERR_INVALID_ARG);
    bd = dvi_default_body_def();
    bd.orientation[0] = 2.0;
    assert_int_equal(dvi_body_create(w, &bd, &b), DVI_ERR_INVALID_ARG);
    bd = dvi_default_body_def();
    bd.internal_cookie = 0;
    assert_int_equal(dvi_body_create(w, &bd, &b), DVI_ERR_INVALID_ARG);
    /* valid bodies in each world */
    bd = dvi_default_body_def();
    dvi_body_id b1, b2, other;
    assert_int_equal(dvi_body_create(w, &bd, &b1), DVI_OK);
    assert_int_equal(dvi_body_create(w, &bd, &b2), DVI_OK);
    assert_int_equal(dvi_body_create(w2, &bd, &other), DVI_OK);
    /* a joint naming a missing body, and a body of another world */
    dvi_joint_def jd = dvi_default_joint_def();
    jd.type = DVI_JOINT_SPHERICAL;
    jd.body_a = b1;
    jd.body_b.index1 = 99;
    jd.body_b.world = b1.world;
    dvi_joint_id j;
    assert_int_equal(dvi_joint_create(w, &jd, &j), DVI_ERR_INVALID_ARG);
    assert_non_null(strstr(dvi_world_last_error(w), "joint.body_b"));
    jd.body_b = other;
    assert_int_equal(dvi_joint_create(w, &jd, &j), DVI_ERR_INVALID_ARG);
    jd.body_b = b1; /* same body twice */
    assert_int_equal(dvi_joint_create(w, &jd, &j), DVI_ERR_INVALID_ARG);
    /* shapes */
    dvi_shape_def sd = dvi_default_shape_def();
    dvi_shape_id s;
    sd.radius = -0.1;
    assert_int_equal(dvi_shape_create(w, b1, &sd, &s), DVI_ERR_INVALID_ARG);
    sd = dvi_default_shape_def();
    sd.material.friction = -0.5;
    assert_int_equal(dvi_shape_create(w, b1, &sd, &s), DVI_ERR_INVALID_ARG);
    sd = dvi_default_shape_def();
    sd.type = DVI_SHAPE_PLANE; /* on a dynamic body */
    assert_int_equal(dvi_shape_create(w, b1, &sd, &s), DVI_ERR_INVALID_ARG);
    sd = dvi_default_shape_def();
    assert_int_equal(dvi_shape_create(w, other, &sd, &s), DVI_ERR_INVALID_ARG);
    /* steps */
    assert_int_equal(dvi_world_step(w, 0.0), DVI_ERR_INVALID_ARG);
    assert_int_equal(dvi_world_step(w, NAN), DVI_ERR_INVALID_ARG);
    /* nothing corrupted: the world still steps and has 2 bodies */
    assert_int_equal(dvi_world_step(w, 1e-3), DVI_OK);
    assert_int_equal(dvi_world_get_stats(w).bodies, 2);
    double v[3] = {NAN, 0, 0};
    assert_int_equal(dvi_body_set_velocity(w, b1, v, NULL), DVI_ERR_INVALID_ARG);
    dvi_world_destroy(w);
    dvi_world_destroy(w2);
}

/* Two worlds step independently and give identical results for identical
 * scenes (no shared state); the same scene run twice is bit-identical. */
static void test_independent_and_deterministic(void** state)
{
    (void)state;
    double pos[2][3];
    for (int k = 0; k < 2; k++) {
        dvi_world* w = make_world("apgd");
        dvi_world* noise = make_world("pgs");
        add_ground(w, 0.1, 0.3);
        add_ground(noise, 0.0, 0.9);
        dvi_body_id b = add_on_incline(w, 0.1, DVI_SHAPE_BOX, 0.1, 2.0, 0.3, 0.1);
        add_on_incline(noise, 0.0, DVI_SHAPE_SPHERE, 0.2, 1.0, 0.9, 0.3);
        for (int i = 0; i < 300; i++) {
            assert_true(dvi_world_step(w, 1e-3) >= 0);
            if (k == 1) assert_true(dvi_world_step(noise, 1e-3) >= 0);
        }
        dvi_body_get_position(w, b, pos[k]);
        dvi_world_destroy(w);
        dvi_world_destroy(noise);
    }
    assert_memory_equal(pos[0], pos[1], sizeof pos[0]);
}

/* The contact torque a body reports is the one that changed its spin: for a
 * sphere rolling with rolling resistance, I·Δω/h about the contact-normal
 * axis balance equals the reported torque (friction lever + rolling couple). */
static void test_contact_torque_with_rolling_couple(void** state)
{
    (void)state;
    const double r = 0.02, m = 0.0838, I = 0.4 * m * r * r, h = 1e-3;
    dvi_world* w = make_world("apgd");
    dvi_body_def gd = dvi_default_body_def();
    gd.type = DVI_BODY_FIXED;
    dvi_body_id g, b;
    dvi_shape_id s;
    assert_int_equal(dvi_body_create(w, &gd, &g), DVI_OK);
    dvi_shape_def pl = dvi_default_shape_def();
    pl.type = DVI_SHAPE_PLANE;
    pl.material.rolling_friction = 1e-3;
    assert_int_equal(dvi_shape_create(w, g, &pl, &s), DVI_OK);
    dvi_body_def bd = dvi_default_body_def();
    bd.mass = m;
    bd.inertia[0] = bd.inertia[4] = bd.inertia[8] = I;
    bd.position[2] = r;
    bd.velocity[0] = 0.1;
    bd.angular_velocity[1] = 0.1 / r;
    assert_int_equal(dvi_body_create(w, &bd, &b), DVI_OK);
    dvi_shape_def sd = dvi_default_shape_def();
    sd.type = DVI_SHAPE_SPHERE;
    sd.radius = r;
    sd.material.rolling_friction = 1e-3;
    assert_int_equal(dvi_shape_create(w, b, &sd, &s), DVI_OK);
    for (int k = 0; k < 5; k++) {
        double w0[3], w1[3], f[3], t[3];
        dvi_body_get_angular_velocity(w, b, w0);
        assert_true(dvi_world_step(w, h) >= 0);
        dvi_body_get_angular_velocity(w, b, w1);
        dvi_body_get_contact_force(w, b, f, t);
        double expect = I * (w1[1] - w0[1]) / h; /* no gyroscopic term: isotropic inertia */
        if (k == 4)
            print_message("rolling sphere: reported contact torque %.6e N m, I dw/h = %.6e N m\n", t[1], expect);
        assert_near(t[1], expect, 1e-9 * fabs(expect) + 1e-12);
    }
    dvi_world_destroy(w);
}

/* World tags: ids name their world, so the tags of worlds alive at one time
 * must differ. 300 live worlds (an address hash of 16 bits would collide
 * among 300 with probability 1 − Π(1 − k/65535) ≈ 0.49) get 300 distinct
 * tags; a body id of each is refused by every other world tried; a tag is
 * reused only once its world is gone. */
static void test_world_tags_distinct(void** state)
{
    (void)state;
    enum { N = 300 };
    dvi_world* w[N];
    dvi_body_id b[N];
    dvi_body_def bd = dvi_default_body_def();
    for (int i = 0; i < N; i++) {
        assert_int_equal(dvi_world_create(NULL, &w[i]), DVI_OK);
        assert_int_equal(dvi_body_create(w[i], &bd, &b[i]), DVI_OK);
        assert_int_equal(b[i].index1, 1);
        assert_int_not_equal(b[i].world, 0);
    }
    for (int i = 0; i < N; i++)
        for (int j = i + 1; j < N; j++)
            if (b[i].world == b[j].world) fail_msg("worlds %d and %d share the tag %u", i, j, (unsigned)b[i].world);
    double p[3];
    for (int i = 0; i < N; i++) {
        assert_int_equal(dvi_body_get_position(w[i], b[i], p), DVI_OK);
        assert_int_equal(dvi_body_get_position(w[(i + 1) % N], b[i], p), DVI_ERR_INVALID_ARG);
    }
    for (int i = 0; i < N; i++) dvi_world_destroy(w[i]);
}

/* The per-kind calls store what the previous release's dvi_shape_create
 * stores for the same geometry, and name the bad field of a geometry. */
static void test_shape_kind_calls(void** state)
{
    (void)state;
    dvi_world* w = make_world("apgd");
    dvi_body_def bd = dvi_default_body_def();
    dvi_body_id b, fixed;
    assert_int_equal(dvi_body_create(w, &bd, &b), DVI_OK);
    bd.type = DVI_BODY_FIXED;
    assert_int_equal(dvi_body_create(w, &bd, &fixed), DVI_OK);
    dvi_shape_def sd = dvi_default_shape_def();
    sd.offset_position[2] = 0.25;
    dvi_shape_id id;
    const dvi_sphere sphere = {0.3};
    const dvi_box box = {{0.1, 0.2, 0.4}};
    const dvi_capsule capsule = {0.05, 0.5};
    const dvi_cylinder cylinder = {0.2, 0.07};
    assert_int_equal(dvi_world_add_sphere(w, b, &sd, &sphere, &id), DVI_OK);
    assert_int_equal(dvi_world_add_box(w, b, &sd, &box, &id), DVI_OK);
    assert_int_equal(dvi_world_add_capsule(w, b, &sd, &capsule, &id), DVI_OK);
    assert_int_equal(dvi_world_add_cylinder(w, b, &sd, &cylinder, &id), DVI_OK);
    assert_int_equal(dvi_world_add_plane(w, fixed, &sd, &id), DVI_OK);
    /* the same through the deprecated call */
    dvi_shape_def old = sd;
    old.type = DVI_SHAPE_SPHERE, old.radius = 0.3;
    assert_int_equal(dvi_shape_create(w, b, &old, &id), DVI_OK);
    old.type = DVI_SHAPE_BOX, old.half_extents[0] = 0.1, old.half_extents[1] = 0.2, old.half_extents[2] = 0.4;
    assert_int_equal(dvi_shape_create(w, b, &old, &id), DVI_OK);
    old.type = DVI_SHAPE_CAPSULE, old.radius = 0.05, old.half_length = 0.5;
    assert_int_equal(dvi_shape_create(w, b, &old, &id), DVI_OK);
    old.type = DVI_SHAPE_CYLINDER, old.radius = 0.2, old.half_length = 0.07;
    assert_int_equal(dvi_shape_create(w, b, &old, &id), DVI_OK);
    const double want[4][5] = {{0.3, 0, 0, 0, 0}, {0, 0, 0.1, 0.2, 0.4}, {0.05, 0.5, 0, 0, 0}, {0.2, 0.07, 0, 0, 0}};
    for (int k = 0; k < 4; k++) {
        dvi_shape_info a, c;
        assert_int_equal(dvi_body_get_shape(w, b, k, &a), DVI_OK);
        assert_int_equal(dvi_body_get_shape(w, b, k + 4, &c), DVI_OK);
        assert_int_equal(a.type, k + 1);
        assert_int_equal(c.type, k + 1);
        const double got[5] = {a.radius, a.half_length, a.half_extents[0], a.half_extents[1], a.half_extents[2]};
        for (int j = 0; j < 5; j++) assert_true(got[j] == want[k][j]);
        assert_true(a.offset_position[2] == 0.25 && c.offset_position[2] == 0.25);
        assert_true(a.radius == c.radius && a.half_length == c.half_length &&
                    memcmp(a.half_extents, c.half_extents, sizeof a.half_extents) == 0);
    }
    dvi_body_info info;
    assert_int_equal(dvi_body_get_info(w, b, &info), DVI_OK);
    /* the farthest: the capsule, 0.25 + 0.5 + 0.05 from the centre */
    assert_true(fabs(info.bounding_radius - 0.8) < 1e-15);
    /* bad geometry: the field is named, nothing is added */
    const dvi_box flat = {{0.1, 0.0, 0.1}};
    assert_int_equal(dvi_world_add_box(w, b, &sd, &flat, &id), DVI_ERR_INVALID_ARG);
    assert_non_null(strstr(dvi_error_message(), "shape.half_extents[1]: must be > 0"));
    const dvi_capsule thin = {0.1, -1.0};
    assert_int_equal(dvi_world_add_capsule(w, b, &sd, &thin, &id), DVI_ERR_INVALID_ARG);
    assert_non_null(strstr(dvi_error_message(), "shape.half_length: must be > 0"));
    assert_int_equal(dvi_world_add_sphere(w, b, &sd, NULL, &id), DVI_ERR_INVALID_ARG);
    assert_int_equal(dvi_world_add_plane(w, b, &sd, &id), DVI_ERR_INVALID_ARG);
    assert_non_null(strstr(dvi_error_message(), "a plane must belong to a fixed body"));
    assert_int_equal(dvi_body_get_info(w, b, &info), DVI_OK);
    assert_int_equal(info.shape_count, 8);
    dvi_world_destroy(w);
}

/* An ellipsoid dropped 2 cm onto a plane comes to rest with its centre at
 * the semi-axis along the plane's normal: 0.1 m upright, and 0.1 m again
 * when the smallest semi-axis is its local x, turned onto the world's z
 * (the rest on the smallest semi-axis is the stable one). 1 s at the
 * default solver settings, dt = 1e-3 s. */
static void test_ellipsoid_rest(void** state)
{
    (void)state;
    const double semi[2][3] = {{0.3, 0.2, 0.1}, {0.1, 0.3, 0.2}};
    for (int turned = 0; turned < 2; turned++) {
        dvi_world* w = make_world("apgd");
        add_ground(w, 0.0, 0.5);
        dvi_body_def bd = dvi_default_body_def();
        const double* h = semi[turned];
        const double m = 1000.0 * 4.0 / 3.0 * PI * h[0] * h[1] * h[2];
        bd.mass = m;
        bd.inertia[0] = m * (h[1] * h[1] + h[2] * h[2]) / 5.0;
        bd.inertia[4] = m * (h[0] * h[0] + h[2] * h[2]) / 5.0;
        bd.inertia[8] = m * (h[0] * h[0] + h[1] * h[1]) / 5.0;
        bd.position[2] = 0.12;
        if (turned) { /* local x onto world z: −90° about y */
            bd.orientation[0] = cos(-PI / 4);
            bd.orientation[2] = sin(-PI / 4);
        }
        dvi_body_id b;
        assert_int_equal(dvi_body_create(w, &bd, &b), DVI_OK);
        dvi_shape_def sd = dvi_default_shape_def();
        dvi_ellipsoid e = {{h[0], h[1], h[2]}};
        dvi_shape_id s;
        assert_int_equal(dvi_world_add_ellipsoid(w, b, &sd, &e, &s), DVI_OK);
        run(w, 1e-3, 1.0);
        double x[3];
        dvi_body_get_position(w, b, x);
        print_message("ellipsoid (%.1f, %.1f, %.1f) at rest: z = %.9f m (expected 0.1)\n", h[0], h[1], h[2], x[2]);
        assert_near(x[2], 0.1, 1e-6);
        assert_near(x[0], 0.0, 1e-9);
        assert_near(x[1], 0.0, 1e-9);
        dvi_world_destroy(w);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_box_incline_stick),
        cmocka_unit_test(test_shape_kind_calls),
        cmocka_unit_test(test_ellipsoid_rest),
        cmocka_unit_test(test_world_tags_distinct),
        cmocka_unit_test(test_lemke_pyramid_turned),
        cmocka_unit_test(test_ccp_hover),
        cmocka_unit_test(test_box_incline_slide),
        cmocka_unit_test(test_sphere_incline),
        cmocka_unit_test(test_sphere_incline_rolling_friction_stick),
        cmocka_unit_test(test_box_sliding_distance),
        cmocka_unit_test(test_sphere_stack),
        cmocka_unit_test(test_box_stack),
        cmocka_unit_test(test_lemke_box_pyramid),
        cmocka_unit_test(test_pendulum),
        cmocka_unit_test(test_damped_motor),
        cmocka_unit_test(test_contact_torque_with_rolling_couple),
        cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_independent_and_deterministic),
        cmocka_unit_test(test_kinetic_energy_both_methods),
    };
    return cmocka_run_group_tests_name("world", tests, NULL, NULL);
}
