/* dvicontact — per-step cost of the rover obstacle scenes: builds each scene
 * (scene.h), takes a number of steps and reports the wall time per step and
 * its phases (dvi_step_stats), contacts, solver iterations, the peak
 * resident memory, and the wall time the scene's whole duration would take
 * at that rate. One table row per scene.
 *
 * usage: bench_rover [--steps N] [--method dvi|dem] [--dt H] [--solver NAME]
 *                    [--joint-solve auto|iterative|direct] [--json] [SCENE ...]
 * Default scenes: rover_obstacle_rigid.json and
 * rover_obstacle_granular_strip.json of the data directory's scenes/
 * (tool/data_path.h: the build tree's copy of examples/scenes/; the full 53,728-sphere bed,
 * rover_obstacle_granular.json, only when named: one step takes seconds).
 * Default steps: 200. The first step (cold: no warm start, buffers growing) is
 * timed separately and left out of the means. --json prints one JSON object
 * per row instead of the table. --method, --dt, --solver and --joint-solve
 * (the formulation's joint_solve, docs/world.md) override every scene's
 * (the rigid rover scenes carry the material data for `--method dem --dt 1e-4`).
 *
 * Peak RSS is the process's (getrusage): with several scenes in one run, a
 * row shows the largest so far; name one scene per run to measure each. */
#include "bench_cli.h"
#include "data_path.h"
#include "rover_probes.h"

#include <dvi/scene.h>

#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double peak_rss_mib(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0) return NAN;
    return (double)ru.ru_maxrss / 1024.0; /* ru_maxrss is in KiB on Linux */
}

typedef struct row {
    const char* scene;
    long long bodies;
    int steps;
    double build_s, first_ms, step_ms, collide_ms, assemble_ms, solve_ms, integrate_ms;
    double contacts, iterations;
    int max_iterations, not_converged;
    double max_residual, rss_mib, duration, projected_h;
} row;

static int bench(const char* path, int steps, const dvi_scene_overrides* ov, row* r)
{
    memset(r, 0, sizeof *r);
    r->scene = path;
    dvi_scene* s = NULL;
    dvi_scene_errors e;
    double t0 = now();
    if (dvi_scene_load(path, &s, &e) != DVI_OK) {
        fprintf(stderr, "bench_rover: %s:\n%s", path, e.text ? e.text : "cannot load\n");
        dvi_scene_errors_free(&e);
        return -1;
    }
    if (dvi_scene_apply_overrides(s, ov, &e) != DVI_OK) {
        fprintf(stderr, "bench_rover: %s:\n%s", path, e.text ? e.text : "bad override\n");
        dvi_scene_errors_free(&e);
        dvi_scene_destroy(s);
        return -1;
    }
    dvi_model* m = NULL;
    char msg[256];
    if (dvi_model_create(s, &m, msg, sizeof msg) != DVI_OK) {
        fprintf(stderr, "bench_rover: %s: %s\n", path, msg);
        dvi_scene_destroy(s);
        return -1;
    }
    r->build_s = now() - t0;
    const dvi_scene_settings set = dvi_scene_get_settings(s);
    r->bodies = dvi_scene_body_count(s);
    r->duration = set.duration;
    const dvi_world* w = dvi_model_world_const(m);
    double t_first = now();
    if (dvi_model_step(m) < 0) {
        fprintf(stderr, "bench_rover: %s: step 1: %s\n", path, dvi_world_last_error(w));
        return -1;
    }
    r->first_ms = 1e3 * (now() - t_first);
    double t1 = now();
    for (int k = 0; k < steps; k++) {
        dvi_status st = dvi_model_step(m);
        if (st < 0) {
            fprintf(stderr, "bench_rover: %s: step %d: %s\n", path, k + 2, dvi_world_last_error(w));
            return -1;
        }
        dvi_step_stats ss = dvi_world_get_stats(w);
        r->not_converged += st == DVI_NOT_CONVERGED;
        r->collide_ms += ss.seconds_collide;
        r->assemble_ms += ss.seconds_assemble;
        r->solve_ms += ss.seconds_solve;
        r->integrate_ms += ss.seconds_integrate + ss.seconds_report;
        r->contacts += ss.contacts;
        r->iterations += ss.iterations;
        if (ss.iterations > r->max_iterations) r->max_iterations = ss.iterations;
        if (ss.residual > r->max_residual) r->max_residual = ss.residual;
    }
    double wall = now() - t1;
    r->steps = steps;
    double n = steps > 0 ? steps : 1;
    r->step_ms = 1e3 * wall / n;
    r->collide_ms *= 1e3 / n;
    r->assemble_ms *= 1e3 / n;
    r->solve_ms *= 1e3 / n;
    r->integrate_ms *= 1e3 / n;
    r->contacts /= n;
    r->iterations /= n;
    r->rss_mib = peak_rss_mib();
    r->projected_h = set.duration / set.dt * r->step_ms / 3.6e6;
    dvi_model_destroy(m);
    dvi_scene_destroy(s);
    return 0;
}

static const char* base(const char* p)
{
    const char* b = strrchr(p, '/');
    return b ? b + 1 : p;
}

int main(int argc, char** argv)
{
    if (rover_register_probes() != DVI_OK) return 1; /* the rover scenes' probe kinds */
    int steps = 200;
    bool json = false;
    dvi_scene_overrides ov;
    memset(&ov, 0, sizeof ov);
    const char* scenes[64];
    int ns = 0;
    for (int i = 1; i < argc; i++) {
        int64_t n = 0;
        if (strcmp(argv[i], "--steps") == 0 && i + 1 < argc) {
            if (!cli_int("bench_rover", "--steps", argv[++i], 1, INT_MAX, "an integer >= 1", &n)) return 2;
            steps = (int)n;
        } else if (strcmp(argv[i], "--json") == 0) {
            json = true;
        } else if (strcmp(argv[i], "--method") == 0 && i + 1 < argc) {
            ov.method = argv[++i];
        } else if (strcmp(argv[i], "--dt") == 0 && i + 1 < argc) {
            if (!cli_double("bench_rover", "--dt", argv[++i], 0.0, true, INFINITY, "a number > 0", &ov.dt)) return 2;
        } else if (strcmp(argv[i], "--solver") == 0 && i + 1 < argc) {
            ov.solver = argv[++i];
        } else if (strcmp(argv[i], "--joint-solve") == 0 && i + 1 < argc) {
            ov.joint_solve = argv[++i];
        } else if (argv[i][0] != '-' && ns < 64) {
            scenes[ns++] = argv[i];
        } else {
            fprintf(stderr, "usage: bench_rover [--steps N] [--method dvi|dem] [--dt H] [--solver NAME] "
                            "[--joint-solve auto|iterative|direct] [--json] [SCENE ...]\n");
            return 2;
        }
    }
    static char defaults[2][4096];
    if (ns == 0) {
        static const char* const names[2] = {"scenes/rover_obstacle_rigid.json",
                                             "scenes/rover_obstacle_granular_strip.json"};
        for (int k = 0; k < 2; k++) {
            scenes[ns] = data_path_or(NULL, names[k], defaults[k], sizeof defaults[k], "bench_rover");
            if (!scenes[ns++]) return 2;
        }
    }
    if (!json)
        printf("%-36s %8s %6s %8s %9s %9s %8s %8s %8s %9s %8s %7s %9s %8s %9s\n", "scene", "bodies", "steps",
               "build s", "first ms", "ms/step", "collide", "assemb.", "solve", "contacts", "iter", "max it",
               "max res", "RSS MiB", "whole [h]");
    int rc = 0;
    for (int i = 0; i < ns; i++) {
        row r;
        if (bench(scenes[i], steps, &ov, &r) != 0) {
            rc = 1;
            continue;
        }
        if (json)
            printf("{\"scene\": \"%s\", \"bodies\": %lld, \"steps\": %d, \"build_seconds\": %.3f, \"first_step_ms\": %.3f, "
                   "\"ms_per_step\": %.4f, \"collide_ms\": %.4f, \"assemble_ms\": %.4f, \"solve_ms\": %.4f, "
                   "\"integrate_ms\": %.4f, \"contacts\": %.1f, \"iterations_mean\": %.1f, \"iterations_max\": %d, "
                   "\"not_converged\": %d, \"residual_max\": %.3e, \"peak_rss_mib\": %.1f, \"duration\": %g, "
                   "\"projected_hours\": %.3f}\n",
                   base(r.scene), r.bodies, r.steps, r.build_s, r.first_ms, r.step_ms, r.collide_ms, r.assemble_ms,
                   r.solve_ms, r.integrate_ms, r.contacts, r.iterations, r.max_iterations, r.not_converged,
                   r.max_residual, r.rss_mib, r.duration, r.projected_h);
        else
            printf("%-36s %8lld %6d %8.2f %9.1f %9.3f %8.3f %8.3f %8.3f %9.1f %8.1f %7d %9.2e %8.1f %9.2f\n",
                   base(r.scene), r.bodies, r.steps, r.build_s, r.first_ms, r.step_ms, r.collide_ms, r.assemble_ms,
                   r.solve_ms, r.contacts, r.iterations, r.max_iterations, r.max_residual, r.rss_mib, r.projected_h);
        fflush(stdout);
    }
    return rc;
}
