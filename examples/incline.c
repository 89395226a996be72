/* incline — a box on a 30° slope with μ = 0.3 slides with acceleration
 * g (sin θ − μ cos θ); with μ = 0.7 it sticks. Prints measured against
 * analytic values. Public API only. */
#include <dvi/world.h>

#include <math.h>
#include <stdio.h>

static double slide(double mu, double theta)
{
    dvi_world_def wd = dvi_default_world_def();
    dvi_world* w = NULL;
    if (dvi_world_create(&wd, &w) != DVI_OK) return NAN;
    dvi_body_def gd = dvi_default_body_def();
    gd.type = DVI_BODY_FIXED;
    dvi_body_id ground, box;
    dvi_shape_id sid;
    dvi_body_create(w, &gd, &ground);
    dvi_shape_def plane = dvi_default_shape_def();
    /* the half-space z <= 0, tilted about x by θ */
    plane.offset_orientation[0] = cos(theta / 2);
    plane.offset_orientation[1] = sin(theta / 2);
    plane.material.friction = mu;
    dvi_world_add_plane(w, ground, &plane, &sid);
    dvi_body_def bd = dvi_default_body_def();
    bd.inertia[0] = bd.inertia[4] = bd.inertia[8] = 4 * 0.01 / 6;
    bd.position[1] = -0.1 * sin(theta);
    bd.position[2] = 0.1 * cos(theta);
    bd.orientation[0] = cos(theta / 2);
    bd.orientation[1] = sin(theta / 2);
    dvi_body_create(w, &bd, &box);
    dvi_shape_def sd = dvi_default_shape_def();
    sd.material.friction = mu;
    const dvi_box cube = {{0.1, 0.1, 0.1}};
    dvi_world_add_box(w, box, &sd, &cube, &sid);
    double v0[3], v1[3];
    for (int i = 0; i < 200; i++) dvi_world_step(w, 1e-3);
    dvi_body_get_velocity(w, box, v0);
    for (int i = 0; i < 1000; i++) dvi_world_step(w, 1e-3);
    dvi_body_get_velocity(w, box, v1);
    dvi_world_destroy(w);
    /* downhill speed gained in 1 s */
    return -((v1[1] - v0[1]) * cos(theta) + (v1[2] - v0[2]) * sin(theta));
}

int main(void)
{
    const double theta = 30 * 3.14159265358979 / 180, g = 9.81;
    double a1 = slide(0.3, theta), a2 = slide(0.7, theta);
    double e1 = g * (sin(theta) - 0.3 * cos(theta));
    printf("mu = 0.3: a = %.4f m/s^2 (theory %.4f)\nmu = 0.7: a = %.2e m/s^2 (theory 0: sticks, tan 30 = 0.577)\n", a1,
           e1, a2);
    return fabs(a1 - e1) < 0.01 * e1 && fabs(a2) < 1e-6 ? 0 : 1;
}
