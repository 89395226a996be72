/* stack — ten boxes stacked on the ground, left to stand for 0.5 s.
 * Prints the drift of the top box and the ground's contact force against the
 * weight of the stack, for each CCP solver. The four corner contacts under
 * each box are redundant; projected Gauss–Seidel needs thousands of sweeps
 * per step on such a stack, so it runs with tolerance 1e-6 and a budget of
 * 20,000 sweeps (APGD: 1e-8 in about 20 iterations). Public API only. */
#include <dvi/world.h>

#include <math.h>
#include <stdio.h>

static int run(const char* solver)
{
    const int N = 10;
    const double s = 0.1, m = 1.0, h = 5e-3;
    dvi_world_def wd = dvi_default_world_def();
    wd.solver = solver;
    if (solver[0] == 'p') {
        wd.solver_settings.tolerance = 1e-6;
        wd.solver_settings.max_iterations = 20000;
    }
    dvi_world* w = NULL;
    if (dvi_world_create(&wd, &w) != DVI_OK) return 1;
    dvi_body_def gd = dvi_default_body_def();
    gd.type = DVI_BODY_FIXED;
    dvi_body_id ground, box[10];
    dvi_shape_id sid;
    dvi_body_create(w, &gd, &ground);
    dvi_shape_def plane = dvi_default_shape_def();
    dvi_world_add_plane(w, ground, &plane, &sid);
    for (int k = 0; k < N; k++) {
        dvi_body_def bd = dvi_default_body_def();
        bd.mass = m;
        bd.inertia[0] = bd.inertia[4] = bd.inertia[8] = m * 4 * s * s / 6;
        bd.position[2] = s + 2 * s * k;
        dvi_shape_def sd = dvi_default_shape_def();
        const dvi_box cube = {{s, s, s}};
        if (dvi_body_create(w, &bd, &box[k]) != DVI_OK || dvi_world_add_box(w, box[k], &sd, &cube, &sid) != DVI_OK) {
            fprintf(stderr, "stack: %s\n", dvi_error_message());
            dvi_world_destroy(w);
            return 1;
        }
    }
    double top0[3], top[3];
    dvi_body_get_position(w, box[N - 1], top0);
    for (int i = 0; i < (int)(0.5 / h); i++) dvi_world_step(w, h);
    dvi_body_get_position(w, box[N - 1], top);
    double ground_force = 0.0;
    for (int32_t c = 0; c < dvi_world_contact_count(w); c++) {
        dvi_contact_info ci;
        dvi_world_get_contact(w, c, &ci);
        if (ci.body_a.index1 == ground.index1 || ci.body_b.index1 == ground.index1) ground_force += fabs(ci.force[2]);
    }
    dvi_step_stats st = dvi_world_get_stats(w);
    printf("%-6s top drift %.2e m, ground force %.4f N (weight %.4f N), %d contacts, %d iterations, residual %.1e\n",
           solver, fabs(top[2] - top0[2]), ground_force, N * m * 9.81, st.contacts, st.iterations, st.residual);
    dvi_world_destroy(w);
    return fabs(ground_force - N * m * 9.81) < 0.005 * N * m * 9.81 ? 0 : 1;
}

int main(void)
{
    return run("apgd") + run("pgs") + run("lemke");
}
