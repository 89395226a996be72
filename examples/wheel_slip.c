/* wheel_slip — the traction–slip curve of the rover's wheel: one wheel on a
 * carriage (wheel_testbed.h), driven over a bin of the rover scenes' grains
 * (or rigid ground) at a series of imposed slips s = v/(ωr) − 1. For each
 * slip it prints the drawbar pull DP (the ground's forward force on the
 * wheel) with its standard error, DP over the load, the vertical force, the
 * motor torque, the sinkage and the cost; then the slip at which DP = 0
 * (where a wheel that pulls nothing runs: a rover's wheel on the flat) and
 * the slope of DP against slip there, also as the damping d of a DC motor
 * that would couple the wheel's speed to its torque as stiffly:
 * d = r (1 + s) / ω · dDP/d(−s) (docs/rover.md, "The wheels' speed law").
 *
 * usage: wheel_slip [--slips S1,S2,...] [--grain-radius R] [--grousers N]
 *                   [--grouser-height H] [--friction MU] [--rolling-friction ARM]
 *                   [--load N] [--speed W] [--length L] [--width W] [--depth D]
 *                   [--duration T] [--window T0] [--max-iterations N]
 *                   [--tolerance TOL] [--threads N] [--csv FILE] [--json]
 *                   [--scene FILE] [--reference ROVER_JSON]
 * Defaults: slips −0.5,−0.3,−0.2,−0.1,−0.05,−0.02 (run in ascending order);
 * grains of radius 0.03 m (0: rigid ground); 24 grousers of 0.02 m; μ = 0.4;
 * no rolling resistance between grains (--rolling-friction: its arm in m, on
 * grain–grain contacts only); load 480.03 N; ω = 0.8 rad/s; bin 1.4 × 0.7 ×
 * 0.1606 m; 3 s, window from 1.5 s; APGD at most 100 iterations a step to
 * 1e-4 (the rover's granular scenes); the rover's reference JSON next to the
 * source tree.
 * --csv writes the time series (slip, t, drawbar pull, vertical force,
 * torque, sinkage; 20-step means) of every run. --json prints one JSON
 * object per slip instead of the table (keys: grain_radius, grains, slip,
 * drawbar_pull, drawbar_pull_se, pull_over_load, vertical, torque, sinkage,
 * sinkage_end, slip_measured, mean_iterations, unconverged_steps,
 * max_iterations, tolerance, rolling_friction, ms_per_step), then one with
 * the fit (keys: grain_radius, zero_pull_slip, slope, equivalent_damping;
 * null where the sweep does not bracket DP = 0).
 * --scene writes the rig's scene for the first slip (for `dvi run`) and
 * exits. Exit status 0, 1 when a run fails, 2 for bad usage. */
#include "wheel_testbed.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef ROVER_JSON
#define ROVER_JSON "../shared/reference/rover/rocker_bogie_rover.json"
#endif

#define MAX_SLIPS 64

static int usage(const char* why)
{
    fprintf(stderr,
            "wheel_slip: %s\nusage: wheel_slip [--slips S1,S2,...] [--grain-radius R] [--grousers N] "
            "[--grouser-height H] [--friction MU] [--rolling-friction ARM] [--load N] [--speed W] [--length L] "
            "[--width W] [--depth D] [--duration T] [--window T0] [--max-iterations N] [--tolerance TOL] [--threads N] "
            "[--csv FILE] [--json] [--scene FILE] [--reference ROVER_JSON]\n",
            why);
    return 2;
}

static bool parse_double(const char* s, double* out)
{
    char* end;
    errno = 0;
    double x = strtod(s, &end);
    if (end == s || *end || errno || !isfinite(x)) return false;
    *out = x;
    return true;
}

static int by_value(const void* a, const void* b)
{
    const double x = *(const double*)a, y = *(const double*)b;
    return (x > y) - (x < y);
}

/* Comma-separated numbers, sorted ascending (the fit pairs neighbours). */
static int parse_slips(const char* s, double* slips)
{
    int n = 0;
    char buf[1024];
    if (strlen(s) >= sizeof buf) return -1;
    strcpy(buf, s);
    for (char* tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        if (n == MAX_SLIPS || !parse_double(tok, &slips[n])) return -1;
        n++;
    }
    qsort(slips, (size_t)n, sizeof *slips, by_value);
    return n;
}

typedef struct series {
    FILE* f;
    double slip;
} series;

static void write_row(void* user, double t, double fx, double fz, double torque, double sinkage)
{
    series* s = user;
    fprintf(s->f, "%.6g,%.6g,%.6g,%.6g,%.6g,%.6g\n", s->slip, t, fx, fz, torque, sinkage);
}

static void json_number(double x)
{
    if (isfinite(x))
        printf("%.6g", x);
    else
        printf("null");
}

int main(int argc, char** argv)
{
    testbed_config c = testbed_default_config();
    double slips[MAX_SLIPS] = {-0.5, -0.3, -0.2, -0.1, -0.05, -0.02};
    int nslips = 6;
    const char *csv = NULL, *scene = NULL, *reference = ROVER_JSON;
    bool json = false;
    for (int i = 1; i < argc; i++) {
        const char* a = argv[i];
        const char* v = i + 1 < argc ? argv[i + 1] : NULL;
        double x;
        if (strcmp(a, "--json") == 0) {
            json = true;
            continue;
        }
        if (!v) return usage("missing value after an option, or an unknown option");
        i++;
        if (strcmp(a, "--slips") == 0) {
            if ((nslips = parse_slips(v, slips)) <= 0)
                return usage("--slips: expected up to 64 numbers, comma-separated");
        } else if (strcmp(a, "--csv") == 0) {
            csv = v;
        } else if (strcmp(a, "--scene") == 0) {
            scene = v;
        } else if (strcmp(a, "--reference") == 0) {
            reference = v;
        } else if (strcmp(a, "--grousers") == 0 || strcmp(a, "--threads") == 0) {
            char* end;
            long k = strtol(v, &end, 10);
            if (end == v || *end || k < 0 || k > 1000)
                return usage("--grousers / --threads: expected an integer in [0, 1000]");
            *(strcmp(a, "--grousers") == 0 ? &c.grousers : &c.threads) = (int)k;
        } else if (strcmp(a, "--max-iterations") == 0) {
            char* end;
            long k = strtol(v, &end, 10);
            if (end == v || *end || k < 1 || k > 1000000)
                return usage("--max-iterations: expected an integer in [1, 1000000]");
            c.max_iterations = (int)k;
        } else if (!parse_double(v, &x)) {
            return usage("expected a number after an option, or an unknown option");
        } else if (strcmp(a, "--grain-radius") == 0) {
            c.grain_radius = x;
        } else if (strcmp(a, "--grouser-height") == 0) {
            c.grouser_height = x;
        } else if (strcmp(a, "--friction") == 0) {
            c.friction = x;
        } else if (strcmp(a, "--rolling-friction") == 0) {
            c.rolling_friction = x;
        } else if (strcmp(a, "--load") == 0) {
            c.load = x;
        } else if (strcmp(a, "--speed") == 0) {
            c.wheel_speed = x;
        } else if (strcmp(a, "--length") == 0) {
            c.length = x;
        } else if (strcmp(a, "--width") == 0) {
            c.width = x;
        } else if (strcmp(a, "--depth") == 0) {
            c.depth = x;
        } else if (strcmp(a, "--duration") == 0) {
            c.duration = x;
        } else if (strcmp(a, "--window") == 0) {
            c.window_start = x;
        } else if (strcmp(a, "--tolerance") == 0) {
            c.tolerance = x;
        } else {
            return usage("unknown option");
        }
    }
    char msg[512];
    if (wheel_params_read(reference, &c.wheel, msg, sizeof msg) != DVI_OK) {
        fprintf(stderr, "wheel_slip: %s\n", msg);
        return 2;
    }
    if (scene) {
        c.slip = slips[0];
        FILE* f = fopen(scene, "w");
        if (!f) {
            perror(scene);
            return 1;
        }
        int bad = testbed_write_scene(&c, f, msg, sizeof msg);
        if (fclose(f) != 0) bad = 1;
        if (bad) {
            fprintf(stderr, "wheel_slip: %s\n", msg);
            return 2;
        }
        return 0;
    }
    series s = {NULL, 0.0};
    if (csv) {
        if (!(s.f = fopen(csv, "w"))) {
            perror(csv);
            return 1;
        }
        fprintf(s.f, "slip,time,drawbar_pull,vertical,torque,sinkage\n");
    }
    if (!json) {
        printf("wheel on %s, %d grousers of %g m, mu %g, load %g N, omega %g rad/s; means over %g-%g s\n",
               c.grain_radius > 0 ? "grains" : "rigid ground", c.grousers, c.grouser_height, c.friction, c.load,
               c.wheel_speed, c.window_start, c.duration);
        if (c.grain_radius > 0)
            printf("grain radius %g m, rolling arm %g m; APGD at most %d iterations a step to %g\n", c.grain_radius,
                   c.rolling_friction, c.max_iterations, c.tolerance);
        printf("%8s %8s %9s %7s %9s %9s %9s %9s %8s %7s\n", "slip", "grains", "DP (N)", "+-", "DP/W", "Fz (N)",
               "T (N m)", "sink (m)", "iters", "ms/step");
    }
    testbed_result res[MAX_SLIPS];
    int status = 0;
    for (int k = 0; k < nslips; k++) {
        c.slip = slips[k];
        s.slip = slips[k];
        if (testbed_run(&c, csv ? write_row : NULL, &s, &res[k], msg, sizeof msg) != DVI_OK) {
            fprintf(stderr, "wheel_slip: slip %g: %s\n", slips[k], msg);
            status = 1;
            res[k].drawbar_pull = NAN;
            continue;
        }
        const testbed_result* r = &res[k];
        if (json) {
            printf("{\"grain_radius\": %.6g, \"grains\": %lld, \"slip\": %.6g, \"drawbar_pull\": ", c.grain_radius,
                   r->grains, slips[k]);
            json_number(r->drawbar_pull);
            printf(", \"drawbar_pull_se\": %.6g, \"pull_over_load\": %.6g, \"vertical\": %.6g, \"torque\": %.6g, "
                   "\"sinkage\": %.6g, \"sinkage_end\": %.6g, \"slip_measured\": %.6g, \"mean_iterations\": %.4g, "
                   "\"unconverged_steps\": %d, \"max_iterations\": %d, \"tolerance\": %.6g, \"rolling_friction\": %.6g, "
                   "\"ms_per_step\": %.4g}\n",
                   r->drawbar_pull_se, r->drawbar_pull / c.load, r->vertical, r->torque, r->sinkage, r->sinkage_end,
                   r->slip_measured, r->mean_iterations, r->unconverged_steps, c.max_iterations, c.tolerance,
                   c.rolling_friction, r->ms_per_step);
        } else {
            printf("%8.3f %8lld %9.1f %7.1f %9.3f %9.1f %9.1f %9.4f %8.1f %7.1f\n", slips[k], r->grains,
                   r->drawbar_pull, r->drawbar_pull_se, r->drawbar_pull / c.load, r->vertical, r->torque, r->sinkage,
                   r->mean_iterations, r->ms_per_step);
        }
        fflush(stdout);
        if (s.f) fflush(s.f);
    }
    if (s.f) fclose(s.f);

    /* DP = 0 between two neighbouring slips (in the order given), and the
     * slope there */
    double zero = NAN, slope = NAN;
    for (int k = 0; k + 1 < nslips; k++) {
        const double a = res[k].drawbar_pull, b = res[k + 1].drawbar_pull;
        if (isfinite(a) && isfinite(b) && a * b <= 0.0 && a != b) {
            zero = slips[k] + (slips[k + 1] - slips[k]) * a / (a - b);
            slope = -(b - a) / (slips[k + 1] - slips[k]);
            break;
        }
    }
    const double damping = c.wheel.radius * (1.0 + zero) / c.wheel_speed * slope;
    if (json) {
        printf("{\"grain_radius\": %.6g, \"zero_pull_slip\": ", c.grain_radius);
        json_number(zero);
        printf(", \"slope\": ");
        json_number(slope);
        printf(", \"equivalent_damping\": ");
        json_number(damping);
        printf("}\n");
    } else if (isfinite(zero)) {
        printf("DP = 0 at s = %.3f; slope there dDP/d(-s) = %.0f N per unit slip; as a DC motor's damping "
               "r(1+s)/omega * slope = %.0f N m s/rad\n",
               zero, slope, damping);
    } else {
        printf("DP does not change sign between neighbouring slips of the sweep\n");
    }
    return status;
}
