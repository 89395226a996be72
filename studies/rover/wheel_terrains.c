/* wheel_terrains — one wheel on four terrain models (docs/terrain.md, "One
 * wheel on four terrain models"): the wheel of Ishigami et al. 2007 (r 0.09
 * m, b 0.11 m, load 50 N, rω = 0.2 m/s) on the carriage of the single-wheel
 * rigs, driven at imposed slips s = 1 − v/(rω), on
 *   bw_static  the Bekker–Wong static model (dvi_bw_static: the sinkage
 *              carrying the load at the slip), every 0.025 in slip;
 *   bw_rig     the Bekker–Wong force model in the world (bw_testbed.c,
 *              terrain "bekker_wong"), every 0.1;
 *   scm        an SCM soil grid with the same Bekker and shear parameters
 *              (bw_testbed.c, terrain "scm"), every 0.1;
 *   grains     the granular bed of wheel_slip (wheel_testbed.c) scaled to
 *              this wheel: grains of 0.12 r in three hexagonal layers, μ 0.4,
 *              APGD, at the slips of --grain-slips (one thread).
 * For each it writes the drawbar pull over the load, the resisting (motor)
 * torque over load · r and the sinkage (the rim's depth below z = 0), as
 * DIR/wheel_terrains_<quantity>.csv (model, slip, value, standard error:
 * the grains' pull and torque from ten blocks of the window, else 0) and
 * .svg.
 *
 * usage: wheel_terrains [--out DIR] [--grain-slips S1,S2,...]
 *                       [--grain-duration T] [--grain-window T0]
 *                       [--grain-friction MU] [--grain-rolling ARM]
 * Defaults: docs/figures; slips 0,0.2,0.4,0.6,0.8; 3 s, window from 1 s;
 * μ 0.4 on every shape and no rolling resistance (wheel_slip's), or μ and
 * the grains' rolling arm (m) given.
 * Exit status 0, 1 when a run or a file fails, 2 for bad usage. */
#include "bw_testbed.h"
#include "wheel_testbed.h"

#include <dvi/output.h>
#include <dvi/terrain.h>

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N_STATIC 37 /* 0 … 0.9 by 0.025 */
#define N_RIG 10    /* 0 … 0.9 by 0.1 */
#define MAX_GRAIN_SLIPS 16
#define N_MODELS 4
#define N_QUANTITIES 3

typedef struct curve {
    const char* name;  /* CSV key */
    const char* label; /* legend */
    bool lines;
    int n;
    double s[N_STATIC], q[N_QUANTITIES][N_STATIC], se[N_QUANTITIES][N_STATIC];
} curve;

typedef struct grain_opts {
    double duration, window, friction, rolling; /* s, s, μ, m */
} grain_opts;

/* The granular bed of wheel_slip scaled to the rig's wheel: every length of
 * the rover's set-up (grain radius, bin width, the bin's back) times r/0.25,
 * the grains' gap kept (0.001 m) and the depth three hexagonal layers; the
 * same wheel (mass, inertia), load and rim speed as the rig, no grousers. */

static testbed_config grain_config(const bw_rig_config* rig, double slip, const grain_opts* o)
{
    testbed_config c = testbed_default_config();
    const double k = rig->radius / c.wheel.radius;
    c.wheel.radius = rig->radius, c.wheel.width = rig->width, c.wheel.mass = BW_RIG_WHEEL_MASS;
    c.wheel.inertia[0] = c.wheel.inertia[1] = c.wheel.inertia[2] = BW_RIG_WHEEL_INERTIA;
    c.load = rig->load;
    c.wheel_speed = rig->rim_speed / rig->radius;
    c.ramp = rig->ramp;
    c.slip = -slip; /* the testbed's slip is v/(rω) − 1 */
    c.grousers = 0;
    c.grain_radius *= k;
    c.width *= k;
    c.back *= k;
    c.depth = (2.0 * c.grain_radius + 0.001) * (1.0 + 2.0 * sqrt(2.0 / 3.0)) + 1e-6;
    c.duration = o->duration;
    c.window_start = o->window;
    c.friction = o->friction;
    c.rolling_friction = o->rolling;
    /* the wheel's travel, its front and a grain's width of room */
    c.length = c.back + (1.0 - slip) * rig->rim_speed * o->duration + rig->radius + 2.0 * c.grain_radius + 0.01;
    c.threads = 1;
    return c;
}

static int parse_slips(const char* s, double* slips)
{
    int n = 0;
    char buf[512];
    if (strlen(s) >= sizeof buf) return -1;
    strcpy(buf, s);
    for (char* tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        char* end;
        errno = 0;
        const double x = strtod(tok, &end);
        if (n == MAX_GRAIN_SLIPS || end == tok || *end || errno || !(x >= 0.0 && x <= 0.9)) return -1;
        slips[n++] = x;
    }
    return n;
}

static int usage(const char* why)
{
    fprintf(stderr,
            "wheel_terrains: %s\nusage: wheel_terrains [--out DIR] [--grain-slips S1,S2,...] [--grain-duration T] "
            "[--grain-window T0] [--grain-friction MU] [--grain-rolling ARM]\n",
            why);
    return 2;
}

static int write_quantity(const char* out, const char* key, const char* title, const char* y_label,
                          const curve* m, int nm, const char* note)
{
    char heading[256];
    snprintf(heading, sizeof heading, "One wheel on four terrain models: %s", title);
    char path[1024], msg[512];
    snprintf(path, sizeof path, "%s/wheel_terrains_%s.csv", out, key);
    FILE* f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "wheel_terrains: cannot write %s\n", path);
        return -1;
    }
    const int q = strcmp(key, "drawbar_pull") == 0 ? 0 : strcmp(key, "torque") == 0 ? 1 : 2;
    fprintf(f, "model,slip,%s,standard_error\n", q == 0 ? "drawbar_pull_over_load" : q == 1 ? "torque_over_load_radius"
                                                                                            : "sinkage_mm");
    for (int k = 0; k < nm; k++)
        for (int i = 0; i < m[k].n; i++)
            fprintf(f, "%s,%.3f,%.6f,%.6f\n", m[k].name, m[k].s[i], m[k].q[q][i], m[k].se[q][i]);
    if (fclose(f) != 0) {
        fprintf(stderr, "wheel_terrains: cannot write %s\n", path);
        return -1;
    }
    dvi_svg_xy_series series[N_MODELS];
    for (int k = 0; k < nm; k++)
        series[k] = (dvi_svg_xy_series){m[k].label, m[k].n, m[k].s, m[k].q[q], NULL, m[k].lines};
    dvi_svg_xy_panel panel = dvi_svg_xy_default_panel();
    panel.title = title;
    panel.x_label = "slip s";
    panel.y_label = y_label;
    panel.log_x = panel.log_y = false;
    panel.series_count = nm;
    panel.series = series;
    snprintf(path, sizeof path, "%s/wheel_terrains_%s.svg", out, key);
    if (dvi_svg_xy_plot(path, heading, note, 1, &panel, 1, msg, sizeof msg) != DVI_OK) {
        fprintf(stderr, "wheel_terrains: %s: %s\n", path, msg);
        return -1;
    }
    return 0;
}

int main(int argc, char** argv)
{
    const char* out = "docs/figures";
    double grain_slips[MAX_GRAIN_SLIPS] = {0.0, 0.2, 0.4, 0.6, 0.8};
    int n_grain = 5;
    grain_opts go = {3.0, 1.0, 0.4, 0.0};
    for (int i = 1; i < argc; i++) {
        const char* a = argv[i];
        const char* v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v) return usage("missing value after an option, or an unknown option");
        i++;
        char* end;
        if (strcmp(a, "--out") == 0) {
            out = v;
        } else if (strcmp(a, "--grain-slips") == 0) {
            if ((n_grain = parse_slips(v, grain_slips)) <= 0)
                return usage("--grain-slips: expected up to 16 numbers in [0, 0.9], comma-separated");
        } else if (strcmp(a, "--grain-duration") == 0 || strcmp(a, "--grain-window") == 0 ||
                   strcmp(a, "--grain-friction") == 0 || strcmp(a, "--grain-rolling") == 0) {
            const double x = strtod(v, &end);
            if (end == v || *end || !isfinite(x) || x < 0.0) return usage("--grain-duration, --grain-window, "
                                                                          "--grain-friction, --grain-rolling: "
                                                                          "expected a number >= 0");
            if (strcmp(a, "--grain-duration") == 0) go.duration = x;
            else if (strcmp(a, "--grain-window") == 0) go.window = x;
            else if (strcmp(a, "--grain-friction") == 0) go.friction = x;
            else go.rolling = x;
        } else {
            return usage("unknown option");
        }
    }
    const bw_rig_config base = bw_rig_default("ishigami2007");
    const dvi_bw_soil soil = dvi_bw_soil_ishigami2007();
    const double W = base.load, r = base.radius;
    static curve m[N_MODELS];
    m[0] = (curve){.name = "bw_static", .label = "Bekker-Wong, static model", .lines = true};
    m[1] = (curve){.name = "bw_rig", .label = "Bekker-Wong, wheel on the rig"};
    m[2] = (curve){.name = "scm", .label = "SCM, wheel on the rig"};
    m[3] = (curve){.name = "grains", .label = "granular bed (DVI)"};
    char msg[512];
    printf("%-9s %5s %9s %7s %9s %7s %8s %s\n", "model", "slip", "DP/W", "+-", "T/(Wr)", "+-", "z (mm)", "");
    for (int i = 0; i < N_STATIC; i++) {
        dvi_bw_forces f;
        const double s = 0.025 * i;
        if (dvi_bw_static(&soil, r, base.width, W, s, 0.0, &f) != DVI_OK) {
            fprintf(stderr, "wheel_terrains: static model at s = %g: %s\n", s, dvi_error_message());
            return 1;
        }
        m[0].s[i] = s, m[0].q[0][i] = f.drawbar_pull / W, m[0].q[1][i] = f.torque / (W * r);
        m[0].q[2][i] = 1e3 * f.sinkage;
    }
    m[0].n = N_STATIC;
    for (int k = 1; k <= 2; k++) {
        for (int i = 0; i < N_RIG; i++) {
            bw_rig_config c = base;
            c.terrain = k == 1 ? "bekker_wong" : "scm";
            c.slip = 0.1 * i;
            bw_rig_result res;
            if (bw_rig_run(&c, &res, msg, sizeof msg) != DVI_OK) {
                fprintf(stderr, "wheel_terrains: %s at s = %g: %s\n", c.terrain, c.slip, msg);
                return 1;
            }
            m[k].s[i] = c.slip, m[k].q[0][i] = res.drawbar_pull / W, m[k].q[1][i] = res.torque / (W * r);
            m[k].q[2][i] = 1e3 * res.sinkage;
            printf("%-9s %5.2f %9.4f %7s %9.4f %7s %8.3f normal %.3f N, sinkage spread %.3f mm\n", m[k].name,
                   c.slip, m[k].q[0][i], "", m[k].q[1][i], "", m[k].q[2][i], res.normal, 1e3 * res.sinkage_spread);
            fflush(stdout);
        }
        m[k].n = N_RIG;
    }
    for (int i = 0; i < n_grain; i++) {
        testbed_config c = grain_config(&base, grain_slips[i], &go);
        testbed_result res;
        if (testbed_run(&c, NULL, NULL, &res, msg, sizeof msg) != DVI_OK) {
            fprintf(stderr, "wheel_terrains: grains at s = %g: %s\n", grain_slips[i], msg);
            return 1;
        }
        m[3].s[i] = grain_slips[i];
        m[3].q[0][i] = res.drawbar_pull / W, m[3].se[0][i] = res.drawbar_pull_se / W;
        m[3].q[1][i] = res.torque / (W * r), m[3].se[1][i] = res.torque_se / (W * r);
        m[3].q[2][i] = 1e3 * res.sinkage, m[3].se[2][i] = 0.0;
        printf("%-9s %5.2f %9.4f %7.4f %9.4f %7.4f %8.3f %lld grains, vertical %.2f N, %.1f iterations a step, "
               "%d of %ld steps unconverged, %.1f ms a step\n",
               m[3].name, grain_slips[i], m[3].q[0][i], m[3].se[0][i], m[3].q[1][i], m[3].se[1][i], m[3].q[2][i],
               res.grains, res.vertical, res.mean_iterations, res.unconverged_steps,
               lround((c.duration - c.window_start) / c.dt), res.ms_per_step);
        fflush(stdout);
    }
    m[3].n = n_grain;
    char note[512], rolling[64] = "";
    if (go.rolling > 0.0) snprintf(rolling, sizeof rolling, ", rolling arm %g m", go.rolling);
    snprintf(note, sizeof note,
             "Ishigami 2007: r %g m, b %g m, %g N, r omega %g m/s; grains %.3g mm, mu %g%s, %g-%g s", r,
             base.width, W, base.rim_speed, 1e3 * grain_config(&base, 0.0, &go).grain_radius, go.friction, rolling,
             go.window, go.duration);
    if (write_quantity(out, "drawbar_pull", "drawbar pull / load", "DP / W", m, N_MODELS, note) ||
        write_quantity(out, "torque", "torque / (load r)", "T / (W r)", m, N_MODELS, note) ||
        write_quantity(out, "sinkage", "sinkage", "z (mm), below z = 0", m, N_MODELS, note))
        return 1;
    return 0;
}
