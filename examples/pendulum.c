/* pendulum — a ball on a revolute joint, released from 10°.
 * Prints the period measured from zero crossings next to the small-angle
 * value 2π sqrt(I_pivot / (m g L)) with the finite-amplitude correction
 * (1 + θ0²/16), the largest joint violation, and the bob's final state to
 * 17 digits (python/tests/test_world.py builds the same world in Python and
 * compares the bits). Public API only. */
#include <dvi/world.h>

#include <math.h>
#include <stdio.h>

int main(void)
{
    const double L = 1.0, m = 1.0, r = 0.05, amp = 10.0 * 3.14159265358979 / 180.0, h = 1e-3, g = 9.81;
    dvi_world_def wd = dvi_default_world_def();
    dvi_world* w = NULL;
    if (dvi_world_create(&wd, &w) != DVI_OK) return 1;
    dvi_body_def bd = dvi_default_body_def();
    bd.mass = m;
    bd.inertia[0] = bd.inertia[4] = bd.inertia[8] = 0.4 * m * r * r;
    bd.position[1] = L * sin(amp);
    bd.position[2] = -L * cos(amp);
    dvi_body_id bob;
    dvi_joint_def jd = dvi_default_joint_def();
    jd.type = DVI_JOINT_REVOLUTE; /* to the world (body_a null), at the origin, about x */
    jd.axis[0] = 1.0;
    jd.axis[2] = 0.0;
    dvi_joint_id pivot;
    if (dvi_body_create(w, &bd, &bob) != DVI_OK || (jd.body_b = bob, dvi_joint_create(w, &jd, &pivot)) != DVI_OK) {
        fprintf(stderr, "pendulum: %s\n", dvi_error_message());
        dvi_world_destroy(w);
        return 1;
    }
    double prev = 0.0, tprev = 0.0, first = -1.0, last = 0.0, worst = 0.0;
    int crossings = 0;
    for (int i = 0; i < 6000; i++) {
        dvi_world_step(w, h);
        double x[3];
        dvi_body_get_position(w, bob, x);
        double t = dvi_world_time(w);
        if (i > 0 && prev > 0.0 && x[1] <= 0.0) {
            double tc = tprev + (t - tprev) * prev / (prev - x[1]);
            if (first < 0.0) first = tc;
            last = tc;
            crossings++;
        }
        prev = x[1];
        tprev = t;
        double viol = fabs(sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2]) - L);
        if (viol > worst) worst = viol;
    }
    double T = (last - first) / (crossings - 1);
    double T0 = 2 * 3.14159265358979 * sqrt((m * L * L + 0.4 * m * r * r) / (m * g * L)) * (1 + amp * amp / 16);
    double F[3], Tq[3], x_end[3];
    dvi_joint_get_reaction(w, pivot, F, Tq);
    printf("period %.5f s (theory %.5f s, %+.3f%%), max joint violation %.2e m, pivot force (%.3f, %.3f, %.3f) N\n", T,
           T0, 100 * (T - T0) / T0, worst, F[0], F[1], F[2]);
    double v[3];
    dvi_body_get_position(w, bob, x_end);
    dvi_body_get_velocity(w, bob, v);
    printf("bob at t = %.17g s: position (%.17g, %.17g, %.17g) m, velocity (%.17g, %.17g, %.17g) m/s\n",
           dvi_world_time(w), x_end[0], x_end[1], x_end[2], v[0], v[1], v[2]);
    dvi_world_destroy(w);
    return fabs(T - T0) < 0.005 * T0 ? 0 : 1;
}
