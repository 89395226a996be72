/* wheel_slip — the traction–slip curve of the rover's wheel: one wheel on a
 * carriage (wheel_testbed.h), driven over a bin of the rover scenes' grains
 * (or rigid ground) at a series of imposed slips s = v/(ωr) − 1. For each
 * slip it prints the drawbar pull DP (the ground's forward force on the
 * wheel) with its standard error, DP over the load, the vertical force, the
 * motor torque, the sinkage and the cost; then the slip at which DP = 0
 * (where a wheel that pulls nothing runs: a rover's wheel on the flat) and
 * the slope of DP against slip there, also as the damping d of a DC motor
 * that would couple the wheel's speed to its torque as stiffly:
 * d = r (1 + s) / ω · dDP/d(−s) (RECORD.md, "The wheels' speed law").
 *
 * usage: wheel_slip [--slips S1,S2,...] [--grain-radius R] [--grousers N]
 *                   [--grouser-height H] [--friction MU] [--rolling-friction ARM]
 *                   [--load N] [--speed W] [--length L] [--width W] [--depth D]
 *                   [--duration T] [--window T0] [--max-iterations N]
 *                   [--tolerance TOL] [--threads N] [--csv FILE] [--json]
 *                   [--scene FILE] [--reference ROVER_JSON]
 *                   [--switch-period P --slip-alt S2 [--load-alt N2] [--switch-start T]]
 * Defaults: slips −0.5,−0.3,−0.2,−0.1,−0.05,−0.02 (run in ascending order);
 * grains of radius 0.03 m (0: rigid ground); 24 grousers of 0.02 m; μ = 0.4;
 * no rolling resistance between grains (--rolling-friction: its arm in m, on
 * grain–grain contacts only); load 480.03 N; ω = 0.8 rad/s; bin 1.4 × 0.7 ×
 * 0.1606 m; 3 s, window from 1.5 s; APGD at most 100 iterations a step to
 * 1e-4 (the rover's granular scenes); the rover's reference JSON of the
 * data directory (tool/data_path.h).
 * --csv writes the time series (slip, t, drawbar pull, vertical force,
 * torque, sinkage; 20-step means) of every run. --json prints one JSON
 * object per slip instead of the table (keys: grain_radius, grains, slip,
 * drawbar_pull, drawbar_pull_se, pull_over_load, vertical, torque, sinkage,
 * sinkage_end, slip_measured, mean_iterations, unconverged_steps,
 * max_iterations, tolerance, rolling_friction, ms_per_step), then one with
 * the fit (keys: grain_radius, zero_pull_slip, slope, equivalent_damping;
 * null where the sweep does not bracket DP = 0).
 * --scene writes the rig's scene for the first slip (for `dvi run`) and
 * exits.
 *
 * With --switch-period P the run is one square wave instead of a sweep (how
 * fast the bed's answer follows a change in slip or load): the first slip
 * and --load hold until --switch-start (default 1.5 s), then every P the rig
 * takes slip S2 and load N2 (default: --load) for P/2 and the first pair for
 * P/2. It prints the response folded over the whole periods of the run:
 * per phase bin (the time since the switch to S2), the drawbar pull, the
 * vertical force and the sinkage, means over the periods ± their standard
 * errors; then for each switch the two plateaus (the means over the last
 * quarter of each half) and the time, and the carriage's travel, to the
 * end of the first sample that is 63 % (90 %) of the way to the new pull. --json prints one object per phase bin
 * (keys: phase, drawbar_pull, drawbar_pull_se, vertical, vertical_se,
 * sinkage, sinkage_se, periods), then one per switch (keys: switch,
 * slip_from, slip_to, load_from, load_to, pull_from, pull_to, t63, t90,
 * travel63, travel90; null where the curve does not get there), then one
 * with the run (keys: grains, mean_iterations, unconverged_steps,
 * ms_per_step).
 *
 * Exit status 0, 1 when a run fails, 2 for bad usage. */
#include "data_path.h"
#include "wheel_testbed.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SLIPS 64
#define MAX_SAMPLES 100000

static int usage(const char* why)
{
    fprintf(stderr,
            "wheel_slip: %s\nusage: wheel_slip [--slips S1,S2,...] [--grain-radius R] [--grousers N] "
            "[--grouser-height H] [--friction MU] [--rolling-friction ARM] [--load N] [--speed W] [--length L] "
            "[--width W] [--depth D] [--duration T] [--window T0] [--max-iterations N] [--tolerance TOL] [--threads N] "
            "[--csv FILE] [--json] [--scene FILE] [--reference ROVER_JSON] "
            "[--switch-period P --slip-alt S2 [--load-alt N2] [--switch-start T]]\n",
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
    /* kept for the square wave's fold: time, pull, vertical force, sinkage */
    double (*rows)[4];
    long n;
} series;

static void write_row(void* user, double t, double fx, double fz, double torque, double sinkage)
{
    series* s = user;
    if (s->f) fprintf(s->f, "%.6g,%.6g,%.6g,%.6g,%.6g,%.6g\n", s->slip, t, fx, fz, torque, sinkage);
    if (s->rows && s->n < MAX_SAMPLES) {
        s->rows[s->n][0] = t, s->rows[s->n][1] = fx, s->rows[s->n][2] = fz, s->rows[s->n][3] = sinkage;
        s->n++;
    }
}

static void json_number(double x)
{
    if (isfinite(x))
        printf("%.6g", x);
    else
        printf("null");
}

/* The square wave: one run, folded over its whole periods. */
static int square_wave(testbed_config* c, series* s, bool json)
{
    char msg[512];
    if (!(s->rows = malloc(sizeof *s->rows * MAX_SAMPLES))) {
        fprintf(stderr, "wheel_slip: out of memory\n");
        return 1;
    }
    testbed_result r;
    testbed_folded fo;
    if (testbed_run(c, write_row, s, &r, msg, sizeof msg) != DVI_OK) {
        fprintf(stderr, "wheel_slip: slip %g / %g: %s\n", c->slip, c->slip_alt, msg);
        free(s->rows);
        return 1;
    }
    const int bad = testbed_fold(c, (const double(*)[4])s->rows, s->n, &fo, msg, sizeof msg);
    free(s->rows);
    s->rows = NULL;
    if (bad) {
        fprintf(stderr, "wheel_slip: %s\n", msg);
        return 2;
    }
    const int bins = fo.bins;
    if (!json) {
        printf("wheel on grains of radius %g m (%lld), %d grousers of %g m, mu %g, rolling arm %g m, omega %g rad/s\n",
               c->grain_radius, r.grains, c->grousers, c->grouser_height, c->friction, c->rolling_friction,
               c->wheel_speed);
        printf("square wave from %g s: slip %g, load %g N for %g s, then slip %g, load %g N for %g s; "
               "%d periods folded (means +- standard errors over the periods)\n",
               c->switch_start, c->slip_alt, c->load_alt, 0.5 * c->switch_period, c->slip, c->load,
               0.5 * c->switch_period, fo.periods);
        printf("%9s %9s %7s %9s %7s %9s %7s\n", "phase (s)", "DP (N)", "+-", "Fz (N)", "+-", "sink (mm)", "+-");
    }
    const char* keys[3] = {"drawbar_pull", "vertical", "sinkage"};
    for (int b = 0; b < bins; b++) {
        const double* mean = fo.mean;
        const double* se = fo.se;
        if (json) {
            printf("{\"phase\": %.6g", (b + 1) * fo.width);
            for (int q = 0; q < 3; q++)
                printf(", \"%s\": %.6g, \"%s_se\": %.6g", keys[q], mean[q * bins + b], keys[q], se[q * bins + b]);
            printf(", \"periods\": %d}\n", fo.periods);
        } else {
            printf("%9.3f %9.1f %7.1f %9.1f %7.1f %9.2f %7.2f\n", (b + 1) * fo.width, mean[b], se[b], mean[bins + b],
                   se[bins + b], 1e3 * mean[2 * bins + b], 1e3 * se[2 * bins + b]);
        }
    }
    const double v[2] = {(1.0 + c->slip) * c->wheel_speed * c->wheel.radius,
                         (1.0 + c->slip_alt) * c->wheel_speed * c->wheel.radius};
    const double slip[2] = {c->slip, c->slip_alt}, load[2] = {c->load, c->load_alt};
    for (int sw = 0; sw < 2; sw++) {
        /* sw 0: to the alternate; sw 1: back */
        const int to = sw == 0 ? 1 : 0, from = 1 - to;
        if (json) {
            printf("{\"switch\": %d, \"slip_from\": %.6g, \"slip_to\": %.6g, \"load_from\": %.6g, \"load_to\": %.6g, "
                   "\"pull_from\": %.6g, \"pull_to\": %.6g, \"t63\": ",
                   sw + 1, slip[from], slip[to], load[from], load[to], fo.plateau[from], fo.plateau[to]);
            json_number(fo.t63[sw]);
            printf(", \"t90\": ");
            json_number(fo.t90[sw]);
            printf(", \"travel63\": ");
            json_number(fo.t63[sw] * v[to]);
            printf(", \"travel90\": ");
            json_number(fo.t90[sw] * v[to]);
            printf("}\n");
        } else {
            printf("slip %g -> %g, load %g -> %g N: pull %.1f -> %.1f N; 63 %% after ", slip[from], slip[to],
                   load[from], load[to], fo.plateau[from], fo.plateau[to]);
            if (isfinite(fo.t63[sw]))
                printf("%.0f ms (%.1f mm of travel)", 1e3 * fo.t63[sw], 1e3 * fo.t63[sw] * v[to]);
            else
                printf("never");
            printf(", 90 %% after ");
            if (isfinite(fo.t90[sw]))
                printf("%.0f ms (%.1f mm)\n", 1e3 * fo.t90[sw], 1e3 * fo.t90[sw] * v[to]);
            else
                printf("never\n");
        }
    }
    if (json)
        printf("{\"grains\": %lld, \"mean_iterations\": %.4g, \"unconverged_steps\": %d, \"ms_per_step\": %.4g}\n",
               r.grains, r.mean_iterations, r.unconverged_steps, r.ms_per_step);
    else
        printf("%lld grains; %.1f iterations a step in the window, %d steps unconverged; %.1f ms per step\n",
               r.grains, r.mean_iterations, r.unconverged_steps, r.ms_per_step);
    testbed_folded_free(&fo);
    return 0;
}

int main(int argc, char** argv)
{
    testbed_config c = testbed_default_config();
    double slips[MAX_SLIPS] = {-0.5, -0.3, -0.2, -0.1, -0.05, -0.02};
    int nslips = 6;
    const char *csv = NULL, *scene = NULL, *reference = NULL;
    bool json = false, slip_alt_given = false, load_alt_given = false;
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
        } else if (strcmp(a, "--switch-period") == 0) {
            c.switch_period = x;
        } else if (strcmp(a, "--switch-start") == 0) {
            c.switch_start = x;
        } else if (strcmp(a, "--slip-alt") == 0) {
            c.slip_alt = x, slip_alt_given = true;
        } else if (strcmp(a, "--load-alt") == 0) {
            c.load_alt = x, load_alt_given = true;
        } else {
            return usage("unknown option");
        }
    }
    if (c.switch_period > 0.0 && !slip_alt_given && !load_alt_given)
        return usage("--switch-period: give --slip-alt or --load-alt (what to switch to)");
    if (c.switch_period > 0.0 && !slip_alt_given) c.slip_alt = slips[0];
    if (!load_alt_given) c.load_alt = c.load;
    char msg[512], found[4096];
    reference = data_path_or(reference, "rover/rocker_bogie_rover.json", found, sizeof found, "wheel_slip");
    if (!reference) return 2;
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
    series s = {NULL, 0.0, NULL, 0};
    if (csv) {
        if (!(s.f = fopen(csv, "w"))) {
            perror(csv);
            return 1;
        }
        fprintf(s.f, "slip,time,drawbar_pull,vertical,torque,sinkage\n");
    }
    if (c.switch_period > 0.0) {
        c.slip = slips[0];
        s.slip = slips[0];
        int status = square_wave(&c, &s, json);
        if (s.f) fclose(s.f);
        return status;
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
        if (testbed_run(&c, s.f ? write_row : NULL, &s, &res[k], msg, sizeof msg) != DVI_OK) {
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
