/* dvicontact — cost of the Bekker–Wong wheel model (<dvi/terrain.h>;
 * docs/terrain.md) per wheel and step: the force element's apply alone,
 * called repeatedly on a world of free wheels (r 0.09 m, b 0.11 m) sunk
 * 12 mm into the ground, driven at slip 0.3 with a slip angle of 5°:
 *
 *   plane_ishigami    the soil of Ishigami et al. 2007 (n = 1), a plane ground
 *   plane_ding        the soil of Ding et al. 2011 (n = 1.1: one pow per point)
 *   heightfield_ding  the same over a 101 × 101 height field (bilinear heights and normal)
 *
 * each with 1 and 64 wheels. A row is the median over --repeat runs
 * (default 5) of --calls applications (default 20000 wheel-steps per run).
 *
 * usage: bench_bekker_wong [--calls N] [--repeat R] [--json]
 * --json: one object per line, keys scene, wheels, us_per_wheel_step. */
#include "bench_cli.h"

#include <dvi/terrain.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_WHEELS 64

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void* a, const void* b)
{
    const double x = *(const double*)a, y = *(const double*)b;
    return (x > y) - (x < y);
}

/* µs per wheel-step, median of `repeat` runs, or −1 on an error. */
static double run(const char* scene, int wheels, long calls, int repeat)
{
    const int ding = strstr(scene, "ding") != NULL, field = strncmp(scene, "heightfield", 11) == 0;
    dvi_world_def wd = dvi_default_world_def();
    dvi_world* w = NULL;
    if (dvi_world_create(&wd, &w) != DVI_OK) return -1.0;
    dvi_body_id ids[MAX_WHEELS];
    const double r = 0.09, v = 0.1;
    for (int i = 0; i < wheels; i++) {
        dvi_body_def bd = dvi_default_body_def();
        bd.type = DVI_BODY_DYNAMIC;
        bd.mass = 5.0;
        bd.inertia[0] = bd.inertia[4] = bd.inertia[8] = 0.02;
        bd.position[0] = 0.3 * (i % 8) + 0.5, bd.position[1] = 0.3 * (i / 8) + 0.5, bd.position[2] = r - 0.012;
        dvi_shape_def sd = dvi_default_shape_def();
        sd.offset_orientation[0] = sqrt(0.5), sd.offset_orientation[1] = -sqrt(0.5);
        dvi_shape_id sh;
        if (dvi_body_create(w, &bd, &ids[i]) != DVI_OK ||
            dvi_world_add_cylinder(w, ids[i], &sd, &(dvi_cylinder){r, 0.055}, &sh) != DVI_OK)
            return -1.0;
        const double vel[3] = {v * cos(0.0873), v * sin(0.0873), 0.0}, om[3] = {0.0, v * cos(0.0873) / 0.7 / r, 0.0};
        dvi_body_set_velocity(w, ids[i], vel, om);
    }
    dvi_bw_def d = dvi_default_bw_def();
    if (ding) d.soil = dvi_bw_soil_ding2011();
    d.wheels = ids;
    d.wheel_count = wheels;
    d.damping = 300.0;
    double* heights = NULL;
    if (field) {
        heights = malloc(101 * 101 * sizeof *heights);
        if (!heights) return -1.0;
        for (int k = 0; k < 101 * 101; k++) heights[k] = 0.002 * sin(0.3 * (k % 101)) * cos(0.2 * (k / 101));
        dvi_body_def gd = dvi_default_body_def();
        gd.type = DVI_BODY_FIXED;
        dvi_shape_def sd = dvi_default_shape_def();
        sd.collision_mask = 0;
        dvi_shape_id sh;
        if (dvi_body_create(w, &gd, &d.ground_body) != DVI_OK ||
            dvi_world_add_heightfield(w, d.ground_body, &sd, &(dvi_height_grid){101, 101, 0.03, 0.03, heights}, &sh) !=
                DVI_OK)
            return -1.0;
        d.ground_set = true;
    }
    int32_t index;
    if (dvi_world_add_bekker_wong(w, &d, &index) != DVI_OK) {
        fprintf(stderr, "bench_bekker_wong: %s\n", dvi_error_message());
        return -1.0;
    }
    const dvi_force_element_class* cls = NULL;
    void* self = dvi_world_force_element(w, index, &cls);
    const long applies = calls / wheels > 0 ? calls / wheels : 1;
    double times[64];
    double check = 0.0;
    for (int rep = 0; rep < repeat; rep++) {
        const double t0 = now();
        for (long k = 0; k < applies; k++)
            if (cls->apply(self, w, 0.001) != DVI_OK) return -1.0;
        times[rep] = 1e6 * (now() - t0) / (double)(applies * wheels);
        dvi_bw_forces f;
        dvi_bw_wheel_forces(w, index, 0, &f);
        check += f.drawbar_pull;
    }
    if (!(check > 0.0)) fprintf(stderr, "bench_bekker_wong: %s: no drawbar pull (%g)\n", scene, check);
    qsort(times, (size_t)repeat, sizeof times[0], cmp_double);
    dvi_world_destroy(w);
    free(heights);
    return times[repeat / 2];
}

int main(int argc, char** argv)
{
    int64_t calls = 20000, repeat = 5;
    bool json = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0) json = true;
        else if (strcmp(argv[i], "--calls") == 0 && i + 1 < argc) {
            if (!cli_int("bench_bekker_wong", "--calls", argv[++i], 1, 100000000, "an integer from 1 to 1e8", &calls))
                return 2;
        } else if (strcmp(argv[i], "--repeat") == 0 && i + 1 < argc) {
            if (!cli_int("bench_bekker_wong", "--repeat", argv[++i], 1, 64, "an integer from 1 to 64", &repeat))
                return 2;
        } else {
            fprintf(stderr, "usage: bench_bekker_wong [--calls N] [--repeat R] [--json]\n");
            return 2;
        }
    }
    const char* scenes[] = {"plane_ishigami", "plane_ding", "heightfield_ding"};
    const int counts[] = {1, 64};
    if (!json) printf("%-18s %7s %18s\n", "scene", "wheels", "us/wheel-step");
    for (int s = 0; s < 3; s++)
        for (int c = 0; c < 2; c++) {
            const double us = run(scenes[s], counts[c], (long)calls, (int)repeat);
            if (us < 0.0) {
                fprintf(stderr, "bench_bekker_wong: %s with %d wheels failed\n", scenes[s], counts[c]);
                return 1;
            }
            if (json) {
                printf("{\"scene\": \"%s\", \"wheels\": %d, \"us_per_wheel_step\": ", scenes[s], counts[c]);
                cli_json_number(stdout, us);
                printf("}\n");
            } else
                printf("%-18s %7d %18.3f\n", scenes[s], counts[c], us);
        }
    return 0;
}
