/* rover_statics — the rocker-bogie rover at rest on flat ground: settles it
 * and prints the six wheel loads against the analytic static loads of the
 * reference JSON (data/rover/rocker_bogie_rover.json).
 *
 * usage: rover_statics [--variant Scarecrow|FullRover] [--solver apgd|pgs|jacobi|lemke]
 *                      [--friction MU] [--time T] [--h H] [--spherical] [--compliance C]
 *                      [--max-iter N] [--tol TOL] [--reference ROVER_JSON]
 * Defaults: the reference from the data directory (tool/data_path.h), both variants, apgd, μ = 0 (frictionless ground), T = 0.2 s,
 * h = 2e-3 s, rigid contact, the world's tolerance (1e-8) and 100,000
 * iterations per step. The rover starts in its as-built pose with the wheels
 * touching the ground, which is the static equilibrium on flat ground.
 *
 * Why 100,000 iterations: the rover's CCP is badly conditioned (Delassus
 * condition number ~6e7 for Scarecrow, ~3e8 for FullRover; the differential
 * links' roll inertia of 1.8e-4 kg·m² against the 200–750 kg chassis) and the
 * revolute differential links add redundant rows. APGD needs ~10^4
 * iterations per step to reach 1e-8 and PGS 10^3–10^4 sweeps; with the
 * default 2,000 the solve stops at a residual of ~1e-2 (APGD) and the rover
 * is thrown off the ground within 0.2 s. Lemke needs ~20–40 pivots.
 *
 * Rigid contact leaves the split of each wheel's load between its two rim
 * points, and so the left/right split, statically indeterminate: APGD and PGS
 * return the symmetric split, Lemke a vertex that changes from step to step
 * (at the extreme one side's wheels on their outer rims and the other's on
 * their inner rims: up to ±25 % per wheel; the axle sums stay exact). A small
 * --compliance (e.g. 1e-8 m/N) makes the split unique for every solver.
 *
 * Exit status 0 when every load is within 1 % of the reference. Public API
 * plus rover_model.c only. */
#include "data_path.h"
#include "rover_model.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Returns the largest |relative difference| of the six loads, or −1 on error. */
typedef struct config {
    const char *json, *solver;
    double mu, T, h, compliance, tol;
    int max_iter;
    bool spherical;
} config;

static double run(const config* c, const char* variant)
{
    const char* json = c->json;
    const char* solver = c->solver;
    double mu = c->mu, T = c->T, h = c->h;
    bool spherical = c->spherical;
    char msg[256];
    double ref[ROVER_WHEELS];
    if (rover_reference_loads(json, variant, ref, msg, sizeof msg) != DVI_OK) {
        fprintf(stderr, "rover_statics: %s\n", msg);
        return -1.0;
    }
    dvi_world_def wd = dvi_default_world_def();
    wd.solver = solver;
    wd.solver_settings.max_iterations = c->max_iter;
    if (c->tol > 0.0) wd.solver_settings.tolerance = c->tol;
    dvi_world* w = NULL;
    if (dvi_world_create(&wd, &w) != DVI_OK) {
        fprintf(stderr, "rover_statics: cannot create the world: %s\n", dvi_error_message());
        return -1.0;
    }
    /* ground: the half-space z <= 0 */
    dvi_body_def gd = dvi_default_body_def();
    gd.type = DVI_BODY_FIXED;
    dvi_body_id ground;
    dvi_shape_def plane = dvi_default_shape_def();
    plane.type = DVI_SHAPE_PLANE;
    plane.material.friction = mu;
    dvi_shape_id sid;
    if (dvi_body_create(w, &gd, &ground) != DVI_OK || dvi_shape_create(w, ground, &plane, &sid) != DVI_OK) {
        fprintf(stderr, "rover_statics: ground: %s\n", dvi_error_message());
        dvi_world_destroy(w);
        return -1.0;
    }
    rover_options opt = rover_default_options();
    opt.wheel_friction = mu;
    opt.spherical_diff_links = spherical;
    opt.wheel_compliance = c->compliance;
    opt.on_ground = true; /* lowest wheel points on z = 0 */
    rover r;
    if (rover_build(w, json, variant, &opt, &r, msg, sizeof msg) != DVI_OK) {
        fprintf(stderr, "rover_statics: %s\n", msg);
        dvi_world_destroy(w);
        return -1.0;
    }
    int steps = (int)lround(T / h), not_converged = 0, max_iter = 0;
    double t0 = now(), max_res = 0.0;
    for (int i = 0; i < steps; i++) {
        dvi_status st = dvi_world_step(w, h);
        if (st < 0) {
            fprintf(stderr, "rover_statics: step %d: %s\n", i, dvi_error_message());
            dvi_world_destroy(w);
            return -1.0;
        }
        dvi_step_stats s = dvi_world_get_stats(w);
        if (st == DVI_NOT_CONVERGED) not_converged++;
        if (s.iterations > max_iter) max_iter = s.iterations;
        if (s.residual > max_res) max_res = s.residual;
    }
    double secs = now() - t0;
    dvi_step_stats s = dvi_world_get_stats(w);
    double f[ROVER_WHEELS][3];
    rover_wheel_forces(w, &r, f);
    double worst = 0.0, sum = 0.0;
    printf("\n%s, solver %s, mu %.2f, compliance %g m/N, %s differential links, %.2f s at h = %g (%.2f s wall)\n",
           variant, solver, mu, c->compliance, spherical ? "spherical" : "revolute", T, h, secs);
    printf("  last step: %d contacts, %d rows (%d joint rows), %d iterations, residual %.1e; "
           "%d/%d steps not converged, max %d iterations, max residual %.1e\n",
           s.contacts, s.rows, s.joint_rows, s.iterations, s.residual, not_converged, steps, max_iter, max_res);
    printf("  %-13s %10s %10s %8s %9s %9s\n", "wheel", "N (sim)", "N (ref)", "diff %", "Fx", "Fy");
    for (int i = 0; i < ROVER_WHEELS; i++) {
        double d = 100.0 * (f[i][2] - ref[i]) / ref[i];
        if (fabs(d) > worst) worst = fabs(d);
        sum += f[i][2];
        printf("  %-13s %10.2f %10.2f %+8.3f %9.3f %9.3f\n", r.wheel[i].label, f[i][2], ref[i], d, f[i][0], f[i][1]);
    }
    printf("  sum %.2f N, M g = %.2f N; rocker pitch L %+.3e rad, R %+.3e rad\n", sum, r.total_mass * 9.81,
           rover_pitch(w, r.rocker[0]), rover_pitch(w, r.rocker[1]));
    printf("  axles (left + right): front %.2f (ref %.2f), middle %.2f (ref %.2f), rear %.2f (ref %.2f)\n",
           f[0][2] + f[3][2], ref[0] + ref[3], f[1][2] + f[4][2], ref[1] + ref[4], f[2][2] + f[5][2], ref[2] + ref[5]);
    dvi_world_destroy(w);
    return worst / 100.0;
}

int main(int argc, char** argv)
{
    const char* variant = NULL;
    config c = {NULL, "apgd", 0.0, 0.2, 2e-3, 0.0, 0.0, 100000, false};
    for (int i = 1; i < argc; i++) {
        bool more = i + 1 < argc;
        if (strcmp(argv[i], "--variant") == 0 && more) variant = argv[++i];
        else if (strcmp(argv[i], "--solver") == 0 && more) c.solver = argv[++i];
        else if (strcmp(argv[i], "--friction") == 0 && more) c.mu = atof(argv[++i]);
        else if (strcmp(argv[i], "--time") == 0 && more) c.T = atof(argv[++i]);
        else if (strcmp(argv[i], "--h") == 0 && more) c.h = atof(argv[++i]);
        else if (strcmp(argv[i], "--compliance") == 0 && more) c.compliance = atof(argv[++i]);
        else if (strcmp(argv[i], "--max-iter") == 0 && more) c.max_iter = atoi(argv[++i]);
        else if (strcmp(argv[i], "--tol") == 0 && more) c.tol = atof(argv[++i]);
        else if ((strcmp(argv[i], "--reference") == 0 || strcmp(argv[i], "--json") == 0) && more) c.json = argv[++i];
        else if (strcmp(argv[i], "--spherical") == 0) c.spherical = true;
        else {
            fprintf(stderr,
                    "usage: %s [--variant Scarecrow|FullRover] [--solver NAME] [--friction MU] [--time T] [--h H]\n"
                    "       [--spherical] [--compliance C] [--max-iter N] [--tol TOL]\n"
                    "       [--reference ROVER_JSON]\n",
                    argv[0]);
            return 2;
        }
    }
    if (!(c.T > 0.0) || !(c.h > 0.0) || !(c.mu >= 0.0) || !(c.compliance >= 0.0) || c.max_iter < 1 || c.tol < 0.0) {
        fprintf(stderr, "rover_statics: --time, --h, --max-iter must be > 0; --friction, --compliance, --tol >= 0\n");
        return 2;
    }
    char found[4096];
    c.json = data_path_or(c.json, "rover/rocker_bogie_rover.json", found, sizeof found, "rover_statics");
    if (!c.json) return 2;
    const char* variants[2] = {"Scarecrow", "FullRover"};
    int nv = 2;
    if (variant) {
        variants[0] = variant;
        nv = 1;
    }
    double worst = 0.0;
    for (int v = 0; v < nv; v++) {
        double d = run(&c, variants[v]);
        if (d < 0.0) return 1;
        if (d > worst) worst = d;
    }
    printf("\nlargest load difference %.3f %% (tolerance 1 %%)\n", 100.0 * worst);
    return worst <= 0.01 ? 0 : 1;
}
