/* Rotation at the default step (h = 1 ms) against references the step does
 * not share: Euler's equations integrated by classical RK4 at h = 10 µs, the
 * complete elliptic integral K(m) (by the arithmetic–geometric mean), and
 * the heavy top's steady-precession condition.
 *
 * - A free asymmetric body (I = 1, 2, 3 kg·m²) spinning at 20 rad/s near its
 *   intermediate axis keeps its kinetic energy to 1e-10 relative and its
 *   angular momentum to 1e-10 over 100 s (the midpoint Lie–Poisson update
 *   conserves both quadratic invariants).
 * - The same body's intermediate-axis (Dzhanibekov) flips: the times at
 *   which the intermediate component of the body-frame angular velocity
 *   changes sign, over 10 s, within 1 % of RK4's; their spacing is the
 *   analytic half-period 2K(m)/λ.
 * - A heavy symmetric top on a spherical joint, started in steady precession
 *   at 30° tilt, keeps its tilt within 0.5° over 10 s and precesses at the
 *   analytic rate within 1 %.
 * - A coin (a thin cylinder) rolling without slipping in a steady circle,
 *   leaning 20° towards its centre, with the default solver: its centre
 *   circles at the analytic precession rate within 1 % over 3 s, and its
 *   lean stays within 1°. The rate follows from the angular momentum
 *   balance about the centre in the frame turning with the precession
 *   (contact on the rim of the lower face, at w = half the thickness):
 *     Ω² [m ρ (a cos β + w sin β) + cos β (I3 R/a − (I3 − I1) sin β)]
 *        = m g (a sin β − w cos β),
 *   R the contact circle's radius, ρ = R − a sin β + w cos β the centre's,
 *   spin about the axis −Ω R/a (Ω² = g tan β / (1.5 R − 1.25 a sin β) for
 *   w = 0, the classical thin-disk result). */
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

#define H 0.001
#define PI 3.14159265358979323846

static const double IB[3] = {1.0, 2.0, 3.0};

/* body-frame vector of a world vector */
static void to_body(const double q[4], const double v[3], double out[3])
{
    double w = q[0], x = q[1], y = q[2], z = q[3];
    double R[9] = {1 - 2 * (y * y + z * z), 2 * (x * y - w * z),     2 * (x * z + w * y),
                   2 * (x * y + w * z),     1 - 2 * (x * x + z * z), 2 * (y * z - w * x),
                   2 * (x * z - w * y),     2 * (y * z + w * x),     1 - 2 * (x * x + y * y)};
    for (int i = 0; i < 3; i++) out[i] = R[i] * v[0] + R[3 + i] * v[1] + R[6 + i] * v[2];
}

static dvi_world* free_world(const double w0[3], dvi_body_id* b)
{
    dvi_world_def wd = dvi_default_world_def();
    wd.gravity[2] = 0.0;
    dvi_world* w;
    assert_int_equal(dvi_world_create(&wd, &w), DVI_OK);
    dvi_body_def bd = dvi_default_body_def();
    bd.mass = 1.0;
    memset(bd.inertia, 0, sizeof bd.inertia);
    bd.inertia[0] = IB[0], bd.inertia[4] = IB[1], bd.inertia[8] = IB[2];
    memcpy(bd.angular_velocity, w0, sizeof bd.angular_velocity);
    assert_int_equal(dvi_body_create(w, &bd, b), DVI_OK);
    return w;
}

static void euler_rhs(const double W[3], double d[3])
{
    d[0] = (IB[1] - IB[2]) * W[1] * W[2] / IB[0];
    d[1] = (IB[2] - IB[0]) * W[2] * W[0] / IB[1];
    d[2] = (IB[0] - IB[1]) * W[0] * W[1] / IB[2];
}

static void rk4(double W[3], double h)
{
    double k1[3], k2[3], k3[3], k4[3], t[3];
    euler_rhs(W, k1);
    for (int i = 0; i < 3; i++) t[i] = W[i] + 0.5 * h * k1[i];
    euler_rhs(t, k2);
    for (int i = 0; i < 3; i++) t[i] = W[i] + 0.5 * h * k2[i];
    euler_rhs(t, k3);
    for (int i = 0; i < 3; i++) t[i] = W[i] + h * k3[i];
    euler_rhs(t, k4);
    for (int i = 0; i < 3; i++) W[i] += h / 6.0 * (k1[i] + 2 * k2[i] + 2 * k3[i] + k4[i]);
}

/* K(m) = π / (2 AGM(1, √(1 − m))) */
static double ellip_k(double m)
{
    double a = 1.0, g = sqrt(1.0 - m);
    for (int i = 0; i < 40 && fabs(a - g) > 1e-16 * a; i++) {
        double an = 0.5 * (a + g);
        g = sqrt(a * g);
        a = an;
    }
    return PI / (2.0 * a);
}

static double energy(const double W[3])
{
    return 0.5 * (IB[0] * W[0] * W[0] + IB[1] * W[1] * W[1] + IB[2] * W[2] * W[2]);
}

static void test_free_body_invariants(void** state)
{
    (void)state;
    const double w0[3] = {0.2, 20.0, 0.2};
    dvi_body_id b;
    dvi_world* w = free_world(w0, &b);
    const double E0 = energy(w0);
    double L0[3] = {IB[0] * w0[0], IB[1] * w0[1], IB[2] * w0[2]}; /* world = body at t = 0 */
    double dE = 0.0, dL = 0.0;
    const int n = test_long() ? 100000 : 100000;
    for (int i = 0; i < n; i++) {
        assert_int_equal(dvi_world_step(w, H), DVI_OK);
        if (i % 100 == 99 || i == n - 1) {
            double q[4], ww[3], W[3];
            dvi_body_get_orientation(w, b, q);
            dvi_body_get_angular_velocity(w, b, ww);
            to_body(q, ww, W);
            double e = fabs(energy(W) / E0 - 1.0);
            if (e > dE) dE = e;
            double Lw[3], Lb[3] = {IB[0] * W[0], IB[1] * W[1], IB[2] * W[2]};
            /* back to the world: Lw = R Lb */
            double qc[4] = {q[0], -q[1], -q[2], -q[3]};
            to_body(qc, Lb, Lw);
            double d = sqrt((Lw[0] - L0[0]) * (Lw[0] - L0[0]) + (Lw[1] - L0[1]) * (Lw[1] - L0[1]) +
                            (Lw[2] - L0[2]) * (Lw[2] - L0[2])) /
                       sqrt(L0[0] * L0[0] + L0[1] * L0[1] + L0[2] * L0[2]);
            if (d > dL) dL = d;
        }
    }
    printf("free body, 100 s at h = 1 ms: largest relative energy error %.2e, angular momentum %.2e\n", dE, dL);
    assert_true(dE < 1e-10);
    assert_true(dL < 1e-10);
    dvi_world_destroy(w);
}

static int crossings_rk4(const double w0[3], double T, double* t, int max)
{
    double W[3] = {w0[0], w0[1], w0[2]}, hr = 1e-5;
    int n = 0;
    long steps = lround(T / hr);
    for (long i = 1; i <= steps && n < max; i++) {
        double prev = W[1];
        rk4(W, hr);
        if ((prev > 0) != (W[1] > 0)) t[n++] = (i - 1 + prev / (prev - W[1])) * hr;
    }
    return n;
}

static void test_intermediate_axis_flips(void** state)
{
    (void)state;
    const double w0[3] = {0.2, 20.0, 0.2};
    double tr[32], tw[32];
    int nr = crossings_rk4(w0, 10.0, tr, 32);
    /* analytic spacing: with I1 < I2 < I3 and 2 E I2 < L² (here), the
     * intermediate component is λ-periodic like cn/sn of parameter m:
     * λ² = (I3 − I2)(L² − 2EI1)/(I1 I2 I3), m = (I2 − I1)(2EI3 − L²)/((I3 − I2)(L² − 2EI1)) */
    double E = energy(w0), L2 = 0.0;
    for (int k = 0; k < 3; k++) L2 += IB[k] * IB[k] * w0[k] * w0[k];
    double lam2 = (IB[2] - IB[1]) * (L2 - 2 * E * IB[0]) / (IB[0] * IB[1] * IB[2]);
    double m = (IB[1] - IB[0]) * (2 * E * IB[2] - L2) / ((IB[2] - IB[1]) * (L2 - 2 * E * IB[0]));
    if (m > 1.0) { /* the other branch: swap the roles of I1 and I3 */
        lam2 = (IB[1] - IB[0]) * (2 * E * IB[2] - L2) / (IB[0] * IB[1] * IB[2]);
        m = 1.0 / m;
    }
    double half = 2.0 * ellip_k(m) / sqrt(lam2);
    dvi_body_id b;
    dvi_world* w = free_world(w0, &b);
    int nw = 0;
    double prev = w0[1];
    for (int i = 1; i <= 10000 && nw < 32; i++) {
        assert_int_equal(dvi_world_step(w, H), DVI_OK);
        double q[4], ww[3], W[3];
        dvi_body_get_orientation(w, b, q);
        dvi_body_get_angular_velocity(w, b, ww);
        to_body(q, ww, W);
        if ((prev > 0) != (W[1] > 0)) tw[nw++] = (i - 1 + prev / (prev - W[1])) * H;
        prev = W[1];
    }
    printf("intermediate-axis flips over 10 s: %d (RK4 at 10 us: %d); analytic spacing 2K/lambda = %.5f s\n", nw, nr,
           half);
    assert_true(nr >= 3);
    assert_int_equal(nw, nr);
    double worst = 0.0;
    for (int i = 0; i < nr; i++) {
        double e = fabs(tw[i] - tr[i]) / tr[i];
        printf("  flip %d: %.5f s (RK4 %.5f s, error %.3f %%)\n", i + 1, tw[i], tr[i], 100 * e);
        if (e > worst) worst = e;
        if (i > 0) assert_true(fabs((tr[i] - tr[i - 1]) / half - 1.0) < 1e-4); /* the reference itself */
    }
    assert_true(worst < 0.01);
    dvi_world_destroy(w);
}

/* Heavy symmetric top: mass m, centre at distance l from the pivot along
 * its axis, inertia about the centre I1c (transverse), I3 (axis). Steady
 * precession at tilt θ with rate Ω and axial spin ω3 (the total angular
 * velocity's axial component): m g l = Ω (I3 ω3 − I1 Ω cos θ), I1 = I1c + m l². */
static void test_heavy_top(void** state)
{
    (void)state;
    const double m = 1.0, l = 0.1, I1c = 0.004, I3 = 0.006, g = 9.81, th = 30.0 * PI / 180.0, w3 = 60.0;
    const double I1 = I1c + m * l * l;
    /* the slow root of I1 cos θ Ω² − I3 ω3 Ω + m g l = 0 */
    double a = I1 * cos(th), bq = -I3 * w3, c = m * g * l;
    double Om = (-bq - sqrt(bq * bq - 4 * a * c)) / (2 * a);
    dvi_world* w;
    assert_int_equal(dvi_world_create(NULL, &w), DVI_OK);
    /* axis e3 tilted by θ about x: e3 = (0, −sin θ, cos θ) */
    double e3[3] = {0.0, -sin(th), cos(th)};
    dvi_body_def bd = dvi_default_body_def();
    bd.mass = m;
    memset(bd.inertia, 0, sizeof bd.inertia);
    bd.inertia[0] = I1c, bd.inertia[4] = I1c, bd.inertia[8] = I3;
    bd.orientation[0] = cos(th / 2), bd.orientation[1] = sin(th / 2); /* body z → e3 */
    for (int k = 0; k < 3; k++) bd.position[k] = l * e3[k];
    double ws = w3 - Om * cos(th); /* spin relative to the precessing frame */
    double om[3] = {ws * e3[0], ws * e3[1], Om + ws * e3[2]};
    memcpy(bd.angular_velocity, om, sizeof om);
    /* centre velocity ω × r */
    bd.velocity[0] = om[1] * bd.position[2] - om[2] * bd.position[1];
    bd.velocity[1] = om[2] * bd.position[0] - om[0] * bd.position[2];
    bd.velocity[2] = om[0] * bd.position[1] - om[1] * bd.position[0];
    dvi_body_id b;
    assert_int_equal(dvi_body_create(w, &bd, &b), DVI_OK);
    dvi_joint_def jd = dvi_default_joint_def();
    jd.type = DVI_JOINT_SPHERICAL;
    jd.body_b = b;
    dvi_joint_id j;
    assert_int_equal(dvi_joint_create(w, &jd, &j), DVI_OK);
    double worst = 0.0, azimuth = 0.0, last_az = atan2(bd.position[1], bd.position[0]);
    for (int i = 1; i <= 10000; i++) {
        assert_int_equal(dvi_world_step(w, H), DVI_OK);
        double x[3];
        dvi_body_get_position(w, b, x);
        double tilt = acos(x[2] / sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2]));
        if (fabs(tilt - th) > worst) worst = fabs(tilt - th);
        double az = atan2(x[1], x[0]), d = az - last_az;
        if (d > PI) d -= 2 * PI;
        if (d < -PI) d += 2 * PI;
        azimuth += d;
        last_az = az;
    }
    double rate = azimuth / 10.0;
    printf("heavy top, 10 s at h = 1 ms: largest tilt error %.3f deg; precession %.5f rad/s (analytic %.5f, %.3f %%)\n",
           worst * 180 / PI, rate, Om, 100 * (rate / Om - 1));
    assert_true(worst * 180 / PI < 0.5);
    assert_true(fabs(rate / Om - 1) < 0.01);
    dvi_world_destroy(w);
}

static void test_rolling_coin(void** state)
{
    (void)state;
    const double a = 0.05, hw = 0.002, m = 0.2, beta = 20.0 * PI / 180.0, R = 0.5, g = 9.81;
    const double I3 = 0.5 * m * a * a, I1 = m * (a * a / 4 + hw * hw / 3);
    const double rho = R - a * sin(beta) + hw * cos(beta);
    const double Om = sqrt(m * g * (a * sin(beta) - hw * cos(beta)) /
                           (m * rho * (a * cos(beta) + hw * sin(beta)) + cos(beta) * (I3 * R / a - (I3 - I1) * sin(beta))));
    const double spin = -Om * R / a;
    /* contact P = (R, 0, 0); towards the centre e2 = −x, travel e1 = +y */
    const double e2[3] = {-1, 0, 0}, z[3] = {0, 0, 1};
    double u[3], n[3], C[3], om[3], v[3];
    for (int k = 0; k < 3; k++) {
        u[k] = sin(beta) * e2[k] + cos(beta) * z[k];
        n[k] = sin(beta) * z[k] - cos(beta) * e2[k];
    }
    const double P[3] = {R, 0, 0};
    for (int k = 0; k < 3; k++) {
        C[k] = P[k] + a * u[k] + hw * n[k];
        om[k] = Om * z[k] + spin * n[k];
    }
    v[0] = -Om * C[1], v[1] = Om * C[0], v[2] = 0.0; /* Ω z × C */
    dvi_world* w;
    assert_int_equal(dvi_world_create(NULL, &w), DVI_OK);
    dvi_body_def gd = dvi_default_body_def();
    gd.type = DVI_BODY_FIXED;
    dvi_body_id ground, coin;
    assert_int_equal(dvi_body_create(w, &gd, &ground), DVI_OK);
    dvi_shape_def sd = dvi_default_shape_def();
    sd.material.friction = 1.0;
    dvi_shape_id sid;
    assert_int_equal(dvi_world_add_plane(w, ground, &sd, &sid), DVI_OK);
    dvi_body_def bd = dvi_default_body_def();
    bd.mass = m;
    memset(bd.inertia, 0, sizeof bd.inertia);
    bd.inertia[0] = bd.inertia[4] = I1, bd.inertia[8] = I3;
    memcpy(bd.position, C, sizeof C);
    memcpy(bd.velocity, v, sizeof v);
    memcpy(bd.angular_velocity, om, sizeof om);
    /* body z → n: about z × n by acos(n_z) */
    double ax[3] = {-n[1], n[0], 0.0}, an = acos(n[2]), al = sqrt(ax[0] * ax[0] + ax[1] * ax[1]);
    bd.orientation[0] = cos(an / 2);
    for (int k = 0; k < 3; k++) bd.orientation[1 + k] = sin(an / 2) * ax[k] / al;
    assert_int_equal(dvi_body_create(w, &bd, &coin), DVI_OK);
    dvi_cylinder cyl = {a, hw};
    assert_int_equal(dvi_world_add_cylinder(w, coin, &sd, &cyl, &sid), DVI_OK);
    double az = 0.0, last = atan2(C[1], C[0]), worst_lean = 0.0;
    const int steps = 3000;
    for (int i = 1; i <= steps; i++) {
        assert_true(dvi_world_step(w, H) >= 0);
        double x[3], q[4];
        dvi_body_get_position(w, coin, x);
        dvi_body_get_orientation(w, coin, q);
        double a2 = atan2(x[1], x[0]), d = a2 - last;
        if (d > PI) d -= 2 * PI;
        if (d < -PI) d += 2 * PI;
        az += d;
        last = a2;
        double nz = 1 - 2 * (q[1] * q[1] + q[2] * q[2]); /* the body z axis's world z */
        double lean = asin(nz);
        if (fabs(lean - beta) > worst_lean) worst_lean = fabs(lean - beta);
    }
    double rate = az / (steps * H);
    printf("rolling coin, 3 s at h = 1 ms: precession %.5f rad/s (analytic %.5f, %.3f %%), largest lean error %.3f deg\n",
           rate, Om, 100 * (rate / Om - 1), worst_lean * 180 / PI);
    assert_true(fabs(rate / Om - 1) < 0.01);
    assert_true(worst_lean * 180 / PI < 1.0);
    dvi_world_destroy(w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_free_body_invariants),
        cmocka_unit_test(test_intermediate_axis_flips),
        cmocka_unit_test(test_heavy_top),
        cmocka_unit_test(test_rolling_coin),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
