/* bw_slip — the single-wheel testbed on Bekker–Wong soil (docs/terrain.md,
 * "Single-wheel testbed"): drawbar pull, lateral force, resisting (driving)
 * torque and sinkage against slip 0 … 0.9, for the soils and wheels of
 * Ishigami et al. 2007 (r 0.09 m, b 0.11 m, 50 N; slip angles 0° and 10°)
 * and Ding et al. 2011 (r 0.15735 m, b 0.165 m, 80 N; 0°). Two columns:
 *   static   the static model (dvi_bw_static: the sinkage carrying the load
 *            at the slip), every 0.025 in slip;
 *   dynamic  the wheel in the world on the carriage of bw_testbed.c (DVI,
 *            1 ms, motors imposing the slip and the slip angle), the model's
 *            forces averaged over t = 2 … 3 s, every 0.1 in slip;
 *   script   the static model of the independent implementation
 *            (tests/data/bekker_wong_reference.py: plain Python, adaptive
 *            Simpson, bisection), the rows of its CSV at s ≥ 0.
 *
 * usage: bw_slip [--out DIR] [--scenes DIR] [--reference CSV]
 * (default CSV: tests/data/bekker_wong_reference.csv)
 * writes DIR/bekker_wong_slip.csv and DIR/bekker_wong_slip_<soil>.svg
 * (default DIR: docs/figures); with --scenes, the rigs at slip 0.3 as
 * SCENES/bekker_wong_wheel_<soil>.json. */
#include "bw_testbed.h"

#include <dvi/output.h>
#include <dvi/terrain.h>

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PI 3.14159265358979323846
#define N_STATIC 37 /* 0 … 0.9 by 0.025 */
#define N_DYNAMIC 10 /* 0 … 0.9 by 0.1 */

typedef struct curve {
    int n;
    double s[N_STATIC], dp[N_STATIC], fy[N_STATIC], t[N_STATIC], z[N_STATIC];
} curve;

/* The script's static rows of a soil and slip angle at s >= 0 into c. */
static int read_reference(const char* path, const char* soil, double beta, curve* c)
{
    c->n = 0;
    FILE* f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "bw_slip: cannot read %s\n", path);
        return -1;
    }
    char line[512];
    while (fgets(line, sizeof line, f)) {
        char kind[16], name[32];
        double W, s, b, t1, z, fz, fx, fy, T;
        if (sscanf(line, "%15[^,],%31[^,],%lf,%lf,%lf,%lf,%lf,%lf,%lf,%lf,%lf", kind, name, &W, &s, &b, &t1, &z, &fz,
                   &fx, &fy, &T) != 11)
            continue;
        if (strcmp(kind, "static") || strcmp(name, soil) || fabs(b - beta) > 1e-9 || s < 0.0 || c->n == N_STATIC)
            continue;
        c->s[c->n] = s, c->dp[c->n] = fx, c->fy[c->n] = fy, c->t[c->n] = T, c->z[c->n] = 1e3 * z;
        c->n++;
    }
    fclose(f);
    if (c->n == 0) {
        fprintf(stderr, "bw_slip: %s: no static rows of %s at slip angle %g\n", path, soil, beta);
        return -1;
    }
    return 0;
}

static int run_soil(const char* soil, const double* betas, int nb, FILE* csv, const char* out_dir, const char* ref)
{
    curve st[2], dy[2], sc[2];
    char msg[512];
    for (int b = 0; b < nb; b++) {
        if (read_reference(ref, soil, betas[b], &sc[b])) return -1;
        bw_rig_config c = bw_rig_default(soil);
        const dvi_bw_soil so = strcmp(soil, "ding2011") == 0 ? dvi_bw_soil_ding2011() : dvi_bw_soil_ishigami2007();
        st[b].n = N_STATIC;
        for (int i = 0; i < N_STATIC; i++) {
            dvi_bw_forces f;
            const double s = 0.025 * i;
            if (dvi_bw_static(&so, c.radius, c.width, c.load, s, betas[b], &f) != DVI_OK) {
                fprintf(stderr, "bw_slip: %s: %s\n", soil, dvi_error_message());
                return -1;
            }
            st[b].s[i] = s, st[b].dp[i] = f.drawbar_pull, st[b].fy[i] = f.lateral, st[b].t[i] = f.torque;
            st[b].z[i] = 1e3 * f.sinkage;
            fprintf(csv, "%s,%g,static,%.3f,%.6f,%.6f,%.6f,%.7f\n", soil, betas[b] * 180.0 / PI, s, f.drawbar_pull,
                    f.lateral, f.torque, f.sinkage);
        }
        dy[b].n = N_DYNAMIC;
        for (int i = 0; i < N_DYNAMIC; i++) {
            c.slip = 0.1 * i;
            c.slip_angle = betas[b];
            bw_rig_result r;
            if (bw_rig_run(&c, &r, msg, sizeof msg) != DVI_OK) {
                fprintf(stderr, "bw_slip: %s slip %g: %s\n", soil, c.slip, msg);
                return -1;
            }
            dy[b].s[i] = c.slip, dy[b].dp[i] = r.drawbar_pull, dy[b].fy[i] = r.lateral, dy[b].t[i] = r.torque;
            dy[b].z[i] = 1e3 * r.sinkage;
            fprintf(csv, "%s,%g,dynamic,%.3f,%.6f,%.6f,%.6f,%.7f\n", soil, betas[b] * 180.0 / PI, c.slip,
                    r.drawbar_pull, r.lateral, r.torque, r.sinkage);
            printf("%-13s beta %4.1f deg s %.1f: DP %8.4f N  Fy %8.4f N  T %7.4f N m  z %6.3f mm\n", soil,
                   betas[b] * 180.0 / PI, c.slip, r.drawbar_pull, r.lateral, r.torque, 1e3 * r.sinkage);
        }
    }
    /* four panels: drawbar pull, lateral force, torque, sinkage */
    const char* titles[4] = {"drawbar pull", "lateral force", "resisting torque", "sinkage"};
    const char* ylabels[4] = {"f_x (N)", "f_y (N)", "T (N m)", "z (mm)"};
    dvi_svg_xy_series series[4][6];
    dvi_svg_xy_panel panels[4];
    char names[6][48];
    for (int b = 0; b < nb; b++) {
        snprintf(names[3 * b], sizeof names[0], "static, beta %g deg", betas[b] * 180.0 / PI);
        snprintf(names[3 * b + 1], sizeof names[0], "dynamic, beta %g deg", betas[b] * 180.0 / PI);
        snprintf(names[3 * b + 2], sizeof names[0], "script, beta %g deg", betas[b] * 180.0 / PI);
    }
    for (int p = 0; p < 4; p++) {
        for (int b = 0; b < nb; b++) {
            const double* ys[4] = {st[b].dp, st[b].fy, st[b].t, st[b].z};
            const double* yd[4] = {dy[b].dp, dy[b].fy, dy[b].t, dy[b].z};
            const double* yr[4] = {sc[b].dp, sc[b].fy, sc[b].t, sc[b].z};
            series[p][3 * b] = (dvi_svg_xy_series){names[3 * b], N_STATIC, st[b].s, ys[p], NULL, true};
            series[p][3 * b + 1] = (dvi_svg_xy_series){names[3 * b + 1], N_DYNAMIC, dy[b].s, yd[p], NULL, false};
            series[p][3 * b + 2] = (dvi_svg_xy_series){names[3 * b + 2], sc[b].n, sc[b].s, yr[p], NULL, false};
        }
        panels[p] = dvi_svg_xy_default_panel();
        panels[p].title = titles[p];
        panels[p].x_label = "slip s";
        panels[p].y_label = ylabels[p];
        panels[p].log_x = panels[p].log_y = false;
        panels[p].series_count = 3 * nb;
        panels[p].series = series[p];
    }
    char path[1024], title[256];
    snprintf(path, sizeof path, "%s/bekker_wong_slip_%s.svg", out_dir, soil);
    bw_rig_config c = bw_rig_default(soil);
    snprintf(title, sizeof title, "Bekker-Wong wheel, soil of %s: r %g m, b %g m, load %g N", soil, c.radius, c.width,
             c.load);
    if (dvi_svg_xy_plot(path, title,
                        "static: the model at the sinkage carrying the load; dynamic: the wheel on a carriage at "
                        "1 ms (studies/rover/bw_slip.c); script: tests/data/bekker_wong_reference.py",
                        4, panels, 2, msg, sizeof msg) != DVI_OK) {
        fprintf(stderr, "bw_slip: %s: %s\n", path, msg);
        return -1;
    }
    return 0;
}

int main(int argc, char** argv)
{
    const char* out = "docs/figures";
    const char* scenes = NULL;
    const char* ref = "tests/data/bekker_wong_reference.csv";
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--out") == 0 && i + 1 < argc) out = argv[++i];
        else if (strcmp(argv[i], "--reference") == 0 && i + 1 < argc) ref = argv[++i];
        else if (strcmp(argv[i], "--scenes") == 0 && i + 1 < argc) scenes = argv[++i];
        else {
            fprintf(stderr, "usage: bw_slip [--out DIR] [--scenes DIR] [--reference CSV]\n");
            return 2;
        }
    }
    char path[1024], msg[512];
    snprintf(path, sizeof path, "%s/bekker_wong_slip.csv", out);
    FILE* csv = fopen(path, "w");
    if (!csv) {
        fprintf(stderr, "bw_slip: cannot write %s\n", path);
        return 1;
    }
    fprintf(csv, "soil,slip_angle_deg,kind,slip,drawbar_pull_N,lateral_N,torque_Nm,sinkage_m\n");
    const double ishigami_betas[2] = {0.0, 10.0 * PI / 180.0}, ding_betas[1] = {0.0};
    int bad = run_soil("ishigami2007", ishigami_betas, 2, csv, out, ref) ||
              run_soil("ding2011", ding_betas, 1, csv, out, ref);
    if (fclose(csv) != 0 || bad) return 1;
    if (scenes) {
        const char* soils[2] = {"ishigami2007", "ding2011"};
        for (int k = 0; k < 2; k++) {
            bw_rig_config c = bw_rig_default(soils[k]);
            c.slip = 0.3;
            snprintf(path, sizeof path, "%s/bekker_wong_wheel_%s.json", scenes, soils[k]);
            FILE* f = fopen(path, "w");
            if (!f || bw_rig_write_scene(&c, f, msg, sizeof msg) || fclose(f)) {
                fprintf(stderr, "bw_slip: %s: %s\n", path, msg);
                return 1;
            }
        }
    }
    return 0;
}
