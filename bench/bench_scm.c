/* bench_scm — the cost of the SCM soil (<dvi/terrain.h>, docs/terrain.md)
 * per step, against the nodes it has touched, on the soil of Horvat 2024
 * §6.3 at grid spacings of 0.02 and 0.01 m:
 *
 *   wheel   one cylinder wheel (r 0.25 m, b 0.2 m, 30 kg) turned at 2 rad/s
 *           (its spin set every step, its motion free) over a 4 × 1 m patch
 *   rover   the rocker-bogie rover (data/rover/rocker_bogie_rover.json,
 *           Scarecrow) with its six wheels at 0.8 rad/s on a 14 × 4 m
 *           patch (the thesis's), DVI, joints solved directly
 *
 * One thread. Each row: the mean wall time of a step (ms_per_step) and of
 * the soil's part of it (ms_terrain, dvi_scm_stats.seconds) over the run,
 * the step's CPU time (cpu_ms_per_step: what it costs on a core of its own
 * when other jobs share the machine),
 * the nodes touched at the end, and the touched nodes' growth shows the
 * cost is linear in them, not in the patch's 560,000 cells at 1 cm.
 *
 * usage: bench_scm [--steps N] [--json] [--rover-json PATH]
 */
#include <dvi/dvi.h>

#include "bench_cli.h"
#include "data_path.h"
#include "rover_model.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double clock_s(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double now(void)
{
    return clock_s(CLOCK_MONOTONIC);
}

typedef struct row {
    const char* scene;
    double grid;
    int steps;
    long long nodes, contacts;
    double ms_step, ms_terrain, cpu_ms_step, travel;
} row;

static dvi_scm* add_soil(dvi_world* w, double x0, double y0, double lx, double ly, double grid)
{
    dvi_scm_def d = dvi_default_scm_def();
    d.origin[0] = x0, d.origin[1] = y0;
    d.size[0] = lx, d.size[1] = ly;
    d.spacing = grid;
    dvi_scm* s = NULL;
    if (dvi_scm_create(w, &d, &s) != DVI_OK) fprintf(stderr, "bench_scm: %s\n", dvi_error_message());
    return s;
}

static bool build_wheel(dvi_world* w, double grid, dvi_body_id* probe, dvi_scm** soil)
{
    const double r = 0.25, bw = 0.2, M = 30.0;
    dvi_body_def bd = dvi_default_body_def();
    bd.mass = M;
    bd.inertia[0] = bd.inertia[4] = M * (3 * r * r + bw * bw) / 12, bd.inertia[8] = M * r * r / 2;
    bd.position[0] = -1.5, bd.position[2] = r;
    bd.orientation[0] = sqrt(0.5), bd.orientation[1] = -sqrt(0.5); /* axle along y */
    if (dvi_body_create(w, &bd, probe) != DVI_OK) return false;
    dvi_shape_def sd = dvi_default_shape_def();
    dvi_shape_id sh;
    if (dvi_world_add_cylinder(w, *probe, &sd, &(dvi_cylinder){r, bw / 2}, &sh) != DVI_OK) return false;
    *soil = add_soil(w, -2.0, -0.5, 4.0, 1.0, grid);
    return *soil != NULL;
}

static bool build_rover(dvi_world* w, const char* json, double grid, dvi_body_id* probe, dvi_scm** soil)
{
    rover_options o = rover_default_options();
    o.on_ground = true;
    o.position[0] = -5.0;
    o.wheel_speed = 0.8;
    o.wheel_ramp = 0.5;
    rover r;
    char msg[512];
    if (rover_build(w, json, "Scarecrow", &o, &r, msg, sizeof msg) != DVI_OK) {
        fprintf(stderr, "bench_scm: %s\n", msg);
        return false;
    }
    *probe = r.chassis;
    *soil = add_soil(w, -7.0, -2.0, 14.0, 4.0, grid);
    return *soil != NULL;
}

static bool run(const char* scene, const char* json, double grid, int steps, row* out)
{
    dvi_world_def wd = dvi_default_world_def();
    wd.solver = "lemke"; /* as the rover's crossing scenes; the joint rows are solved directly */
    wd.joint_solve = DVI_JOINT_SOLVE_DIRECT;
    dvi_world* w = NULL;
    if (dvi_world_create(&wd, &w) != DVI_OK) return false;
    dvi_body_id probe;
    dvi_scm* soil = NULL;
    bool ok = strcmp(scene, "wheel") == 0 ? build_wheel(w, grid, &probe, &soil)
                                           : build_rover(w, json, grid, &probe, &soil);
    double x0[3] = {0}, x1[3] = {0}, wall = 0.0, terrain = 0.0, cpu = 0.0;
    if (ok) dvi_body_get_position(w, probe, x0);
    const bool wheel = strcmp(scene, "wheel") == 0;
    for (int i = 0; ok && i < steps; i++) {
        if (wheel) { /* the wheel's spin held at 2 rad/s about its axle (world y) */
            double v[3], om[3];
            dvi_body_get_velocity(w, probe, v);
            dvi_body_get_angular_velocity(w, probe, om);
            om[1] = 2.0;
            dvi_body_set_velocity(w, probe, v, om);
        }
        double t0 = now(), c0 = clock_s(CLOCK_THREAD_CPUTIME_ID);
        dvi_status st = dvi_world_step(w, 0.001);
        wall += now() - t0;
        cpu += clock_s(CLOCK_THREAD_CPUTIME_ID) - c0;
        terrain += dvi_scm_get_stats(soil).seconds;
        if (st < 0) {
            fprintf(stderr, "bench_scm: %s at %g m, step %d: %s\n", scene, grid, i, dvi_world_last_error(w));
            ok = false;
        }
    }
    if (ok) {
        dvi_body_get_position(w, probe, x1);
        dvi_scm_stats s = dvi_scm_get_stats(soil);
        *out = (row){scene, grid, steps, (long long)s.nodes_touched, (long long)s.contacts, 1e3 * wall / steps,
                     1e3 * terrain / steps, 1e3 * cpu / steps, x1[0] - x0[0]};
    }
    dvi_world_destroy(w);
    return ok;
}

int main(int argc, char** argv)
{
    int steps = 3000;
    bool json = false;
    const char* rover_json = NULL;
    for (int i = 1; i < argc; i++) {
        int64_t n = 0;
        if (strcmp(argv[i], "--steps") == 0 && i + 1 < argc) {
            if (!cli_int("bench_scm", "--steps", argv[++i], 1, INT_MAX, "an integer >= 1", &n)) return 2;
            steps = (int)n;
        } else if (strcmp(argv[i], "--json") == 0) {
            json = true;
        } else if (strcmp(argv[i], "--rover-json") == 0 && i + 1 < argc) {
            rover_json = argv[++i];
        } else {
            fprintf(stderr, "usage: bench_scm [--steps N] [--json] [--rover-json PATH]\n");
            return 2;
        }
    }
    char found[4096];
    const char* js = data_path_or(rover_json, "rover/rocker_bogie_rover.json", found, sizeof found, "bench_scm");
    if (!js) return 1;
    static const struct {
        const char* scene;
        double grid;
    } rows[] = {{"wheel", 0.02}, {"wheel", 0.01}, {"rover", 0.02}, {"rover", 0.01}};
    if (!json)
        printf("%-6s %7s %6s %13s %9s %12s %11s %16s %9s\n", "scene", "grid_m", "steps", "nodes_touched", "contacts",
               "ms_per_step", "ms_terrain", "cpu_ms_per_step", "travel_m");
    int rc = 0;
    for (size_t k = 0; k < sizeof rows / sizeof rows[0]; k++) {
        row r;
        if (!run(rows[k].scene, js, rows[k].grid, steps, &r)) {
            rc = 1;
            continue;
        }
        if (json) {
            printf("{\"scene\": \"%s\", \"grid_m\": ", r.scene);
            cli_json_number(stdout, r.grid);
            printf(", \"steps\": %d, \"nodes_touched\": %lld, \"contacts\": %lld, \"ms_per_step\": ", r.steps, r.nodes,
                   r.contacts);
            cli_json_number(stdout, r.ms_step);
            printf(", \"ms_terrain\": ");
            cli_json_number(stdout, r.ms_terrain);
            printf(", \"cpu_ms_per_step\": ");
            cli_json_number(stdout, r.cpu_ms_step);
            printf(", \"travel_m\": ");
            cli_json_number(stdout, r.travel);
            printf("}\n");
        } else {
            printf("%-6s %7.3f %6d %13lld %9lld %12.4f %11.4f %16.4f %9.3f\n", r.scene, r.grid, r.steps, r.nodes,
                   r.contacts, r.ms_step, r.ms_terrain, r.cpu_ms_step, r.travel);
        }
        fflush(stdout);
    }
    return rc;
}
