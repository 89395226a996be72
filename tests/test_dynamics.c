/* The free rigid body, and other dynamics that must hold whatever the
 * contacts do: each test states the number it expects and a tolerance that
 * the defect it guards against would break by orders of magnitude. */
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

/* ---- the torque-free spinning body ----------------------------------------
 * A body spinning about its axis of largest inertia with a small wobble
 * keeps its angular momentum L = R I Rᵀ ω and its kinetic energy. The
 * gyroscopic term taken explicitly (ω += h I⁻¹(−ω × I ω)) gains energy on
 * every step: a rover wheel's shape at 20 rad/s went from 6.25 J to 642 J in
 * 6 s at h = 0.01, a box spun about its stable axis ×83 in 9 s. */

typedef struct spin_result {
    double max_rise; /* max (E − E0)/E0 over the run */
    double max_dL;   /* max |L − L0| / |L0| */
    double final_w;  /* |ω| at the end */
} spin_result;

static void world_inertia_times(double* out, const double* q, const double* Ibody, const double* v)
{
    /* R diag(I) Rᵀ v for a body-frame diagonal inertia */
    double w = q[0], x = q[1], y = q[2], z = q[3];
    double R[9] = {1 - 2 * (y * y + z * z), 2 * (x * y - w * z),     2 * (x * z + w * y),
                   2 * (x * y + w * z),     1 - 2 * (x * x + z * z), 2 * (y * z - w * x),
                   2 * (x * z - w * y),     2 * (y * z + w * x),     1 - 2 * (x * x + y * y)};
    double b[3];
    for (int r = 0; r < 3; r++) b[r] = Ibody[r] * (R[r] * v[0] + R[3 + r] * v[1] + R[6 + r] * v[2]);
    for (int r = 0; r < 3; r++) out[r] = R[3 * r] * b[0] + R[3 * r + 1] * b[1] + R[3 * r + 2] * b[2];
}

static spin_result spin(dvi_method method, const double Ibody[3], const double w0[3], double h, double seconds)
{
    dvi_world_def wd = dvi_default_world_def();
    wd.gravity[0] = wd.gravity[1] = wd.gravity[2] = 0.0;
    wd.method = method;
    dvi_world* w = NULL;
    assert_int_equal(dvi_world_create(&wd, &w), DVI_OK);
    dvi_body_def bd = dvi_default_body_def();
    bd.mass = 1.0;
    memset(bd.inertia, 0, sizeof bd.inertia);
    for (int k = 0; k < 3; k++) bd.inertia[4 * k] = Ibody[k];
    memcpy(bd.angular_velocity, w0, sizeof bd.angular_velocity);
    dvi_body_id b;
    assert_int_equal(dvi_body_create(w, &bd, &b), DVI_OK);
    double q[4], om[3], L0[3], L[3];
    assert_int_equal(dvi_body_get_orientation(w, b, q), DVI_OK);
    world_inertia_times(L0, q, Ibody, w0);
    const double E0 = 0.5 * (w0[0] * L0[0] + w0[1] * L0[1] + w0[2] * L0[2]);
    const double nL0 = sqrt(L0[0] * L0[0] + L0[1] * L0[1] + L0[2] * L0[2]);
    spin_result res = {-INFINITY, 0.0, 0.0};
    const long n = lround(seconds / h);
    for (long i = 0; i < n; i++) {
        dvi_status st = dvi_world_step(w, h);
        if (st < 0) fail_msg("step %ld: %s", i, dvi_world_last_error(w));
        assert_int_equal(dvi_body_get_orientation(w, b, q), DVI_OK);
        assert_int_equal(dvi_body_get_angular_velocity(w, b, om), DVI_OK);
        world_inertia_times(L, q, Ibody, om);
        double E = 0.5 * (om[0] * L[0] + om[1] * L[1] + om[2] * L[2]);
        double dL = sqrt((L[0] - L0[0]) * (L[0] - L0[0]) + (L[1] - L0[1]) * (L[1] - L0[1]) +
                         (L[2] - L0[2]) * (L[2] - L0[2])) / nL0;
        if ((E - E0) / E0 > res.max_rise) res.max_rise = (E - E0) / E0;
        if (dL > res.max_dL) res.max_dL = dL;
        if (!isfinite(E)) fail_msg("step %ld: the energy is not finite", i);
    }
    res.final_w = sqrt(om[0] * om[0] + om[1] * om[1] + om[2] * om[2]);
    dvi_world_destroy(w);
    return res;
}

static void test_free_spin_keeps_energy_and_momentum(void** state)
{
    (void)state;
    /* a rover wheel's shape: solid cylinder r 0.25 m, half length 0.05 m,
     * axis z, m 1 kg; a box of half extents 0.1 × 0.2 × 0.3 spun about x,
     * its axis of largest inertia */
    const double r = 0.25, hl = 0.05, a = 0.1, bb = 0.2, c = 0.3;
    const double It = (3 * r * r + 4 * hl * hl) / 12.0;
    const double cyl[3] = {It, It, 0.5 * r * r};
    const double box[3] = {(bb * bb + c * c) / 3.0, (a * a + c * c) / 3.0, (a * a + bb * bb) / 3.0};
    const double w_cyl[3] = {0.02, 0.0, 20.0}, w_box[3] = {20.0, 0.02, 0.0};
    const double steps[2] = {0.01, 0.001};
    const dvi_method methods[2] = {DVI_METHOD_DVI, DVI_METHOD_DEM};
    for (int m = 0; m < 2; m++)
        for (int k = 0; k < 2; k++) {
            double h = steps[k];
            /* 100 s at both steps in the optimised build; the sanitizer
             * build runs the coarse step's 100 s and 10 s of the fine one */
#ifdef SANITIZED
            double T = h < 0.005 ? 10.0 : 100.0;
#else
            double T = 100.0;
#endif
            spin_result rc = spin(methods[m], cyl, w_cyl, h, T);
            spin_result rb = spin(methods[m], box, w_box, h, T);
            printf("%s h %.3f: cylinder rise %.2e dL %.2e, box rise %.2e dL %.2e\n", m ? "dem" : "dvi", h,
                   rc.max_rise, rc.max_dL, rb.max_rise, rb.max_dL);
            /* energy never rises (the explicit term: ×1e6 within 9 s at h 0.01) */
            assert_true(rc.max_rise <= 1e-6);
            assert_true(rb.max_rise <= 1e-6);
            /* angular momentum kept, vector and size */
            assert_true(rb.max_dL <= 1e-6);
            assert_true(rc.max_dL <= 1e-6);
            /* and the spin is still there (a scheme that damps it away would
             * pass the two checks above) */
            assert_true(fabs(rc.final_w - 20.0) < 0.02);
            assert_true(fabs(rb.final_w - 20.0) < 0.02);
        }
}

/* ---- resting contact in any unit system ---------------------------------------
 * A sphere resting on a plane, or on a box 1e12 times heavier, stays put:
 * drift below 1e-3 radii over 1 s, every step converged. The CCP residual
 * alone (impulse and velocity errors added as numbers) let a 1e-11 kg
 * sphere hop by 4 µm (0.4 of its radius of 1e-5 m) at a reported residual
 * of 1e-11: an impulse of twice its right size costs 1e-13 N·s there. The
 * stopping test also asks the velocity residual (formulation.md). */
static double rest_drift(double r, double m, bool on_box, int* unconverged)
{
    dvi_world_def wd = dvi_default_world_def();
    dvi_world* w = NULL;
    assert_int_equal(dvi_world_create(&wd, &w), DVI_OK);
    test_fixed_plane(w, NULL);
    dvi_body_def bd;
    dvi_shape_def sd;
    dvi_shape_id s;
    double z0 = r;
    if (on_box) { /* a box 1e12 times heavier, 4 r high, under the sphere */
        bd = dvi_default_body_def();
        bd.mass = 1e12 * m;
        double h = 2.0 * r, I = bd.mass * (2.0 * (2.0 * h) * (2.0 * h)) / 12.0;
        bd.inertia[0] = bd.inertia[4] = bd.inertia[8] = I;
        bd.position[2] = h;
        dvi_body_id box;
        assert_int_equal(dvi_body_create(w, &bd, &box), DVI_OK);
        sd = dvi_default_shape_def();
        sd.type = DVI_SHAPE_BOX;
        sd.half_extents[0] = sd.half_extents[1] = sd.half_extents[2] = h;
        assert_int_equal(dvi_shape_create(w, box, &sd, &s), DVI_OK);
        z0 = 2.0 * h + r;
    }
    bd = dvi_default_body_def();
    bd.mass = m;
    bd.inertia[0] = bd.inertia[4] = bd.inertia[8] = 0.4 * m * r * r;
    bd.position[2] = z0;
    dvi_body_id b;
    assert_int_equal(dvi_body_create(w, &bd, &b), DVI_OK);
    sd = dvi_default_shape_def();
    sd.type = DVI_SHAPE_SPHERE;
    sd.radius = r;
    assert_int_equal(dvi_shape_create(w, b, &sd, &s), DVI_OK);
    double drift = 0.0;
    *unconverged = 0;
    for (int i = 0; i < 1000; i++) {
        dvi_status st = dvi_world_step(w, 1e-3);
        if (st < 0) fail_msg("r %g m %g: step %d: %s", r, m, i, dvi_world_last_error(w));
        if (dvi_world_get_stats(w).solver_status != DVI_SOLVE_CONVERGED) (*unconverged)++;
        double x[3];
        assert_int_equal(dvi_body_get_position(w, b, x), DVI_OK);
        double d = sqrt(x[0] * x[0] + x[1] * x[1] + (x[2] - z0) * (x[2] - z0));
        if (d > drift) drift = d;
    }
    dvi_world_destroy(w);
    return drift / r;
}

static void test_rest_in_any_units(void** state)
{
    (void)state;
    const double masses[4] = {1e-12, 1e-6, 1.0, 1e6}, radii[4] = {1e-6, 1e-3, 1.0, 10.0};
    double worst = 0.0;
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) {
            int bad = 0;
            double d = rest_drift(radii[j], masses[i], false, &bad);
            if (d > worst) worst = d;
            if (!(d < 1e-3) || bad > 0)
                fail_msg("sphere of %g kg, r %g m, on a plane: drift %.3g radii, %d unconverged steps", masses[i],
                         radii[j], d, bad);
        }
    int bad = 0;
    double d = rest_drift(0.01, 1e-6, true, &bad);
    print_message("resting spheres of 1e-12..1e6 kg, r 1e-6..10 m: largest drift over 1 s %.3g radii; 1e-6 kg on "
                  "1e6 kg: %.3g radii, %d unconverged steps\n",
                  worst, d, bad);
    assert_true(d < 1e-3);
    assert_int_equal(bad, 0);
}

/* ---- what touches what ------------------------------------------------------
 * A capsule hinged inside the fixed box it hangs from: its shape overlaps
 * the box. With the joint's bodies kept apart (the default) it swings as a
 * pendulum, its hinge carrying about its weight; when they may collide
 * (collide_connected) the overlap becomes contacts that fight the hinge
 * (3.7e10 N and no converged step before the default changed). */
static double hinged_capsule(bool collide, int* contacts_seen, double* max_force)
{
    dvi_world_def wd = dvi_default_world_def();
    wd.solver_settings.tolerance = 1e-8;
    wd.solver_settings.max_iterations = 2000;
    dvi_world* w = NULL;
    assert_int_equal(dvi_world_create(&wd, &w), DVI_OK);
    dvi_body_def bd = dvi_default_body_def();
    bd.type = DVI_BODY_FIXED;
    dvi_body_id box;
    assert_int_equal(dvi_body_create(w, &bd, &box), DVI_OK);
    dvi_shape_def sd = dvi_default_shape_def();
    sd.type = DVI_SHAPE_BOX;
    sd.half_extents[0] = sd.half_extents[1] = sd.half_extents[2] = 0.1;
    dvi_shape_id sid;
    assert_int_equal(dvi_shape_create(w, box, &sd, &sid), DVI_OK);
    /* capsule: axis z, half length 0.3, radius 0.03, centre 0.3 below the
     * hinge at the box's centre, started 0.2 rad off vertical about x */
    const double m = 2.0, th = 0.2, L = 0.3;
    bd = dvi_default_body_def();
    bd.mass = m;
    bd.inertia[0] = bd.inertia[4] = m * (0.6 * 0.6) / 12.0;
    bd.inertia[8] = 0.5 * m * 0.03 * 0.03;
    bd.position[1] = L * sin(th);
    bd.position[2] = -L * cos(th);
    bd.orientation[0] = cos(th / 2);
    bd.orientation[1] = sin(th / 2);
    dvi_body_id cap;
    assert_int_equal(dvi_body_create(w, &bd, &cap), DVI_OK);
    sd = dvi_default_shape_def();
    sd.type = DVI_SHAPE_CAPSULE;
    sd.radius = 0.03;
    sd.half_length = 0.3;
    assert_int_equal(dvi_shape_create(w, cap, &sd, &sid), DVI_OK);
    dvi_joint_def jd = dvi_default_joint_def();
    jd.type = DVI_JOINT_REVOLUTE;
    jd.body_a = box;
    jd.body_b = cap;
    jd.axis[0] = 1.0;
    jd.axis[2] = 0.0;
    jd.collide_connected = collide;
    dvi_joint_id j;
    assert_int_equal(dvi_joint_create(w, &jd, &j), DVI_OK);
    *contacts_seen = 0;
    *max_force = 0.0;
    for (int i = 0; i < 500; i++) {
        dvi_status st = dvi_world_step(w, 1e-3);
        if (st < 0) fail_msg("step %d: %s", i, dvi_world_last_error(w));
        *contacts_seen += dvi_world_contact_count(w);
        double F[3], T[3];
        assert_int_equal(dvi_joint_get_reaction(w, j, F, T), DVI_OK);
        double f = sqrt(F[0] * F[0] + F[1] * F[1] + F[2] * F[2]);
        if (f > *max_force) *max_force = f;
    }
    double x[3];
    assert_int_equal(dvi_body_get_position(w, cap, x), DVI_OK);
    dvi_world_destroy(w);
    return atan2(x[1], -x[2]); /* the swing angle */
}

static void test_joined_bodies_do_not_collide(void** state)
{
    (void)state;
    int contacts = 0;
    double fmax = 0.0;
    double angle = hinged_capsule(false, &contacts, &fmax);
    /* a compound pendulum from 0.2 rad: after 0.5 s it has swung through
     * the bottom (period 2π√(I_p/(m g L)) ≈ 1.27 s, I_p = m(0.6²/12 + 0.3²)) */
    const double Ip = 2.0 * (0.36 / 12.0 + 0.09), T = 2.0 * 3.14159265358979 * sqrt(Ip / (2.0 * 9.81 * 0.3));
    const double want = 0.2 * cos(2.0 * 3.14159265358979 * 0.5 / T);
    print_message("hinged capsule inside its box, default: %d contacts in 500 steps, hinge force at most %.2f N "
                  "(weight %.2f N), angle %.4f rad at 0.5 s (small-angle pendulum %.4f)\n",
                  contacts, fmax, 2.0 * 9.81, angle, want);
    assert_int_equal(contacts, 0);
    assert_true(fmax < 2.0 * 2.0 * 9.81);
    assert_true(fabs(angle - want) < 0.01);
    angle = hinged_capsule(true, &contacts, &fmax);
    print_message("... with collide_connected: %d contacts, hinge force at most %.3g N\n", contacts, fmax);
    assert_true(contacts > 0);
}

/* Collision filters: a sphere of category 2 falls through a ground whose
 * mask leaves out 2, while a default sphere rests on it; and a pair whose
 * categories both masks admit touch. */
static void test_collision_filters(void** state)
{
    (void)state;
    dvi_world_def wd = dvi_default_world_def();
    dvi_world* w = NULL;
    assert_int_equal(dvi_world_create(&wd, &w), DVI_OK);
    dvi_shape_def sd = dvi_default_shape_def();
    sd.collision_mask = 0xFFFFFFFFu & ~2u;
    test_fixed_plane(w, &sd);
    dvi_body_def bd;
    dvi_shape_id sid;
    dvi_body_id ball[2];
    for (int k = 0; k < 2; k++) {
        bd = dvi_default_body_def();
        bd.position[0] = k;
        bd.position[2] = 0.1;
        assert_int_equal(dvi_body_create(w, &bd, &ball[k]), DVI_OK);
        sd = dvi_default_shape_def();
        sd.type = DVI_SHAPE_SPHERE;
        sd.radius = 0.1;
        if (k == 1) sd.collision_category = 2u;
        assert_int_equal(dvi_shape_create(w, ball[k], &sd, &sid), DVI_OK);
    }
    for (int i = 0; i < 500; i++) assert_true(dvi_world_step(w, 1e-3) >= 0);
    double x0[3], x1[3];
    dvi_body_get_position(w, ball[0], x0);
    dvi_body_get_position(w, ball[1], x1);
    print_message("filters: the default ball rests at z = %.6f m, the category-2 ball fell to z = %.4f m "
                  "(free fall: %.4f)\n",
                  x0[2], x1[2], 0.1 - 0.5 * 9.81 * 0.25);
    assert_true(fabs(x0[2] - 0.1) < 1e-4);
    assert_true(fabs(x1[2] - (0.1 - 0.5 * 9.81 * 0.25)) < 0.01);
    sd = dvi_default_shape_def();
    sd.collision_category = 0;
    sd.type = DVI_SHAPE_SPHERE;
    sd.radius = 0.1;
    assert_int_equal(dvi_shape_create(w, ball[0], &sd, &sid), DVI_ERR_INVALID_ARG);
    assert_non_null(strstr(dvi_world_last_error(w), "collision_category"));
    dvi_world_destroy(w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_free_spin_keeps_energy_and_momentum),
        cmocka_unit_test(test_rest_in_any_units),
        cmocka_unit_test(test_joined_bodies_do_not_collide),
        cmocka_unit_test(test_collision_filters),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
