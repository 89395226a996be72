/* rover_obstacle — the project's flagship example: the rocker-bogie rover of
 * data/rover drives over a 0.15 m hemispherical obstacle under its
 * right-hand wheels, the case of Horvat (2024, §6). It runs a scene file through scene.h, writes one CSV and
 * one SVG per probe (the library's output writers, <dvi/output.h>: the
 * same files `dvi run` writes), then finds the three characteristic wheel-
 * load events (rover_events.h) and prints them against the times at which
 * the wheels reach the obstacle, as computed from the distance travelled.
 *
 * usage: rover_obstacle [SCENE] [--out DIR] [--duration T] [--method dvi|dem] [--dt H] [--smooth T]
 *                       [--baseline D] [--phase-baseline D] [--phases predicted|measured]
 *                       [--load normal|up|magnitude] [--reference ROVER_JSON] [--quiet]
 *        rover_obstacle [SCENE] --analyse DIR [--smooth T] [--baseline D] [--phase-baseline D]
 *                       [--phases predicted|measured]
 *                       [--load normal|up|magnitude] [--reference ROVER_JSON]
 * Defaults: the example scene rover_obstacle_rigid.json (the thesis's wheel
 * speed, 0.08889 rad/s after a 1 s ramp; 160 s; ~45 s) and the rover
 * reference rover/rocker_bogie_rover.json, both from the data directory
 * (tool/data_path.h: the build tree's copy of examples/scenes and data/rover,
 * or an installed share/dvicontact); out/NAME with NAME the scene's name. --analyse reads the CSVs of a finished run of
 * SCENE in DIR (by this program or by `dvi run SCENE`, also a partial one)
 * instead of simulating, and prints the event table. --duration, --method
 * and --dt override the scene's (dvi_scene_apply_overrides): the rigid
 * scenes carry the reference's SMC material, so `--method dem --dt 1e-4`
 * runs them with Hertz contacts. --smooth T averages each load over a
 * centred window of T seconds before the event analysis (on a granular bed
 * the per-step contact forces are spiky; the CSVs keep the raw values).
 * --baseline D measures each event against the mean loads over the D metres
 * of travel before its wheel reaches the obstacle instead of the static
 * loads (rover_event_thresholds.baseline_travel); the default is 0 (static)
 * for DVI and 0.1 m for DEM, whose stored tangential springs keep the loads
 * off static between the climbs (RECORD.md).
 * The phase means (rover_phase_means) read the same pattern from the mean
 * loads over stretches of travel (each wheel's climb and descent, halved),
 * relative to the mean loads over the D metres of travel that end 0.02 m
 * before the front wheel reaches the obstacle: --phase-baseline D, default
 * 0.1 m; 0 measures them against the static loads. --phases measured cuts
 * the phases where the wheel centres actually climb and land (rover_measured_cuts)
 * instead of where a straight drive meets the obstacle (the default,
 * predicted). On a granular bed the
 * loads are too noisy for the excursions; the phase means still show the
 * pattern. --load up analyses the wheels' vertical loads (the columns
 * wheel_XX.f_up of a contact_force probe with component "up", which the
 * granular scenes carry) instead of the sums of their contacts' normal
 * forces (wheel_XX.f_n, the default): on grains a grousered wheel also
 * pushes sideways and forwards, and those pushes count in f_n. --load
 * magnitude analyses the magnitudes of the wheels' resultant contact forces
 * (wheel_XX.f_mag, component "magnitude"), the quantity of the thesis's
 * Figures 27 and 33: traction and the obstacle's push count in it, but
 * opposed pushes of grousers and grains cancel.
 *
 * The scene must hold the rover of rover_scene.c (bodies chassis and
 * wheel_LF ... wheel_RB), a fixed sphere named "obstacle", and probes with the
 * columns chassis.x and wheel_XX.f_n (contact_force, component "normal"; f_up with --load up,
 * f_mag with --load magnitude)
 * for the six wheels. The variant (Scarecrow or FullRover) is recognised by
 * the chassis mass; the static loads are the reference's, and the rover is
 * also built by rover_model.c (the C model) to check that both place the
 * wheels alike and to compute where each wheel meets the obstacle
 * (rover_obstacle_travel).
 *
 * Output (DIR): NAME.csv and NAME.svg per probe, events.json (the event
 * table). Exit status: 0 when the run finished and, on rigid ground (a
 * scene without generators), the three events were found on time and the
 * loads settled; 1 otherwise; 2 for bad usage. */
#include "data_path.h"
#include <dvi/output.h>
#include "rover_events.h"
#include "rover_model.h"
#include "rover_probes.h"

#include <dvi/scene.h>

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

/* A growing array of doubles. */
typedef struct series {
    double* v;
    size_t n, cap;
} series;

static int push(series* s, double x)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 4096;
        double* nv = realloc(s->v, cap * sizeof *nv);
        if (!nv) return -1;
        s->v = nv;
        s->cap = cap;
    }
    s->v[s->n++] = x;
    return 0;
}

/* Where a column lives: probe and column index (−1 if absent). */
typedef struct where {
    int probe, column;
} where;

/* The first column called `name` of the probe named `probe`, or of any
 * probe when probe is NULL (−1 if absent). */
static where find_probe_column(const dvi_model* m, const char* probe, const char* name)
{
    where w = {-1, -1};
    for (int32_t p = 0; p < dvi_model_probe_count(m); p++) {
        dvi_probe_info info;
        if (dvi_model_probe_info(m, p, &info) != DVI_OK || (probe && strcmp(info.name, probe) != 0)) continue;
        for (int32_t c = 0; c < info.columns; c++)
            if (strcmp(info.column_names[c], name) == 0) {
                w.probe = p;
                w.column = c;
                return w;
            }
    }
    return w;
}

static where find_column(const dvi_model* m, const char* name)
{
    return find_probe_column(m, NULL, name);
}

/* Reads a probe's CSV (as written by dvi_csv): the rows of `columns`
 * numbers after the header, malloc'd into *data; the number of rows. −1 on
 * failure. */
static long read_csv(const char* path, int columns, double** data)
{
    FILE* f = fopen(path, "rb");
    *data = NULL;
    if (!f) return -1;
    size_t cap = 0, n = 0;
    char* line = NULL;
    size_t lcap = 0;
    long rows = 0;
    bool header = true;
    while (getline(&line, &lcap, f) > 0) {
        if (header) {
            header = false;
            continue;
        }
        if (n + (size_t)columns > cap) {
            cap = cap ? 2 * cap : (size_t)columns * 4096;
            double* nd = realloc(*data, cap * sizeof *nd);
            if (!nd) break;
            *data = nd;
        }
        char* p = line;
        for (int c = 0; c < columns; c++) {
            char* end;
            (*data)[n + (size_t)c] = strtod(p, &end);
            p = *end == ',' ? end + 1 : end;
        }
        n += (size_t)columns;
        rows++;
    }
    free(line);
    fclose(f);
    return rows;
}

static const char* const WHEEL_BODY[ROVER_WHEELS] = {"wheel_LF", "wheel_LM", "wheel_LB",
                                                     "wheel_RF", "wheel_RM", "wheel_RB"};

/* Optional probes of one contact partner's force on each crossing-side
 * wheel ("with" the obstacle, or the beds' grains); their phase means are
 * printed after the loads', in pairs (vertical, horizontal). */
enum { SHARE_OBSTACLE_UP, SHARE_OBSTACLE_BACK, SHARE_GRAINS_UP, SHARE_GRAINS_FWD, SHARES };
static const struct {
    const char *probe, *suffix, *label;
} SHARE[SHARES] = {
    {"crossing_side_obstacle_up", "f_up", "vertical"},
    {"crossing_side_obstacle_back", "f_dir", "backward"},
    {"crossing_side_grains_up", "f_up", "vertical"},
    {"crossing_side_grains_fwd", "f_dir", "forward"},
};

/* The columns the analysis reads, and their values over the run. */
typedef struct trace {
    where x, load[ROVER_WHEELS], pitch, slip[3]; /* chassis.x, wheel_XX.f_n, chassis.pitch, wheel_RX.slip */
    where wx[3], wz[3];                          /* wheel_RX.x, wheel_RX.z (optional) */
    where other_slip[3];                         /* wheel_LX.slip (optional) */
    where share[SHARES][3];                      /* the SHARE probes' columns (optional) */
    series t, travel, value[ROVER_WHEELS], pitch_v, slip_v[3], wx_v[3], wz_v[3], other_slip_v[3], share_v[SHARES][3];
    double x0;
} trace;

/* suffix: the load column of each wheel, "f_n" (component "normal"), "f_up" (component "up") or "f_mag"
 * (component "magnitude") */
static bool trace_find(trace* tr, const dvi_model* m, const char* suffix)
{
    char col[64];
    memset(tr, 0, sizeof *tr);
    tr->x0 = NAN;
    tr->x = find_column(m, "chassis.x");
    bool ok = tr->x.probe >= 0;
    for (int i = 0; i < ROVER_WHEELS; i++) {
        snprintf(col, sizeof col, "%s.%s", WHEEL_BODY[i], suffix);
        tr->load[i] = find_column(m, col);
        ok = ok && tr->load[i].probe >= 0;
    }
    tr->pitch = find_column(m, "chassis.pitch");
    for (int i = 0; i < 3; i++) {
        snprintf(col, sizeof col, "%s.slip", WHEEL_BODY[ROVER_RF + i]);
        tr->slip[i] = find_column(m, col);
        snprintf(col, sizeof col, "%s.slip", WHEEL_BODY[i]);
        tr->other_slip[i] = find_column(m, col);
        snprintf(col, sizeof col, "%s.x", WHEEL_BODY[ROVER_RF + i]);
        tr->wx[i] = find_column(m, col);
        snprintf(col, sizeof col, "%s.z", WHEEL_BODY[ROVER_RF + i]);
        tr->wz[i] = find_column(m, col);
        for (int j = 0; j < SHARES; j++) {
            snprintf(col, sizeof col, "%s.%s", WHEEL_BODY[ROVER_RF + i], SHARE[j].suffix);
            tr->share[j][i] = find_probe_column(m, SHARE[j].probe, col);
        }
    }
    return ok;
}

/* One sample; value(w) gives a column's value (NaN for w.probe < 0). */
typedef double value_fn(const where* w, const void* ctx);

static int trace_push(trace* tr, double t, value_fn* value, const void* ctx)
{
    double x = value(&tr->x, ctx);
    if (isnan(tr->x0)) tr->x0 = x;
    int bad = push(&tr->t, t) | push(&tr->travel, x - tr->x0) | push(&tr->pitch_v, value(&tr->pitch, ctx));
    for (int i = 0; i < ROVER_WHEELS; i++) bad |= push(&tr->value[i], value(&tr->load[i], ctx));
    for (int i = 0; i < 3; i++)
        bad |= push(&tr->slip_v[i], value(&tr->slip[i], ctx)) | push(&tr->wx_v[i], value(&tr->wx[i], ctx)) |
               push(&tr->wz_v[i], value(&tr->wz[i], ctx)) | push(&tr->other_slip_v[i], value(&tr->other_slip[i], ctx));
    for (int j = 0; j < SHARES; j++)
        for (int i = 0; i < 3; i++) bad |= push(&tr->share_v[j][i], value(&tr->share[j][i], ctx));
    return bad;
}

static void trace_free(trace* tr)
{
    free(tr->t.v);
    free(tr->travel.v);
    free(tr->pitch_v.v);
    for (int i = 0; i < ROVER_WHEELS; i++) free(tr->value[i].v);
    for (int i = 0; i < 3; i++) {
        free(tr->slip_v[i].v);
        free(tr->wx_v[i].v);
        free(tr->wz_v[i].v);
        free(tr->other_slip_v[i].v);
        for (int j = 0; j < SHARES; j++) free(tr->share_v[j][i].v);
    }
}

/* The crossing side's wheel centres: each wheel's highest point, and when
 * its climb starts, against the time the travel brings it to the obstacle
 * (the kinematic timing, which holds where the loads are too noisy to time
 * the events: a granular bed). A climb starts at the first sample, from 0.12 m
 * of travel before the wheel's reach on, at which its centre is RISE above
 * its mean height over the 0.1 m of travel that ends 0.02 m before the
 * reach. */
static void print_climbs(const trace* tr, const double obstacle[3], const rover_course* c, const rover_events* ev)
{
    static const char* const NAME[3] = {"front", "middle", "rear"};
    const double RISE = 0.01, GAP = 0.02, WINDOW = 0.1; /* m */
    if (tr->wz[0].probe < 0 || tr->t.n < 2) return;
    printf("\nwheel centres (crossing side): the highest point of each above its start, and the climb's start (centre "
           "%.0f mm above its height before the obstacle); obstacle centre x = %.3f m\n",
           1e3 * RISE, obstacle[0]);
    for (int i = 0; i < 3; i++) {
        size_t best = 0;
        for (size_t k = 1; k < tr->t.n; k++)
            if (tr->wz_v[i].v[k] > tr->wz_v[i].v[best]) best = k;
        double rise = tr->wz_v[i].v[best] - tr->wz_v[i].v[0];
        printf("  %-6s up %.3f m at t = %.2f s, x = %.3f m%s\n", NAME[i], rise, tr->t.v[best], tr->wx_v[i].v[best],
               tr->wx_v[i].v[tr->t.n - 1] > obstacle[0] + 0.15 ? "; past the obstacle at the end" : "");
        const double d1 = c->reach[i] - GAP, d0 = d1 - WINDOW;
        double sum = 0.0, start = NAN;
        int cnt = 0;
        for (size_t k = 1; k < tr->t.n; k++)
            if (tr->travel.v[k] >= d0 && tr->travel.v[k] <= d1) {
                sum += tr->wz_v[i].v[k];
                cnt++;
            }
        if (cnt == 0) continue;
        const double level = sum / cnt;
        for (size_t k = 1; k < tr->t.n && isnan(start); k++)
            if (tr->travel.v[k] >= d0 && tr->wz_v[i].v[k] > level + RISE) start = tr->t.v[k];
        const double err = start - ev->event[i].t_reach;
        printf("         climb starts at t = %.2f s; predicted (reach %.3f m) %.2f s: error %+.2f s", start, c->reach[i],
               ev->event[i].t_reach, err);
        if (isfinite(ev->crossing_time) && isfinite(err))
            printf(" = %+.2f %% of the crossing\n", 100.0 * err / ev->crossing_time);
        else
            printf("\n");
    }
}

/* The obstacle's push on each crossing-side wheel against the wheel's
 * contact angle θ on it, from the vertical: cos θ = (z − z_o) / |(x, z) −
 * (x_o, z_o)| of the wheel centre and the obstacle centre, over the samples
 * in which the obstacle carries the wheel (more than 1 N up) before its top.
 * Per bin of cos θ: the samples, the mean push and vertical force against
 * the static load, and the mean 1 + s of the five other wheels (the speed of
 * the wheels on the flat against their rims). */
static void print_by_angle(const trace* tr, const double obstacle[3], const rover_course* c)
{
    static const double EDGE[] = {0.6, 0.7, 0.8, 0.9, 0.95, 1.0};
    enum { BINS = 5 };
    static const char* const NAME[3] = {"front", "middle", "rear"};
    if (tr->wz[0].probe < 0 || tr->share[SHARE_OBSTACLE_UP][0].probe < 0 ||
        tr->share[SHARE_OBSTACLE_BACK][0].probe < 0 || tr->other_slip[0].probe < 0)
        return;
    printf("\nthe obstacle's force on the climbing wheel by its contact angle (cos θ: 1 at the top), means / static "
           "load; 1+s: the five other wheels' speed against their rims\n%12s", "");
    for (int w = 0; w < 3; w++) printf(" | %-25s", NAME[w]);
    printf("\n%-13s", "cos θ"); /* θ: two bytes, one column */
    for (int w = 0; w < 3; w++) printf(" | %4s %6s %6s %6s", "n", "push", "up", "1+s");
    printf("\n");
    for (int b = 0; b < BINS; b++) {
        printf("%.2f..%.2f  ", EDGE[b], EDGE[b + 1]);
        for (int w = 0; w < 3; w++) {
            int n = 0, ns = 0;
            double push = 0.0, up = 0.0, speed = 0.0;
            for (size_t k = 0; k < tr->t.n; k++) {
                const double dx = obstacle[0] - tr->wx_v[w].v[k], dz = tr->wz_v[w].v[k] - obstacle[2];
                const double u = tr->share_v[SHARE_OBSTACLE_UP][w].v[k];
                if (!(u > 1.0) || !(dx >= 0.0)) continue;
                const double cs = dz / hypot(dx, dz);
                if (!(cs >= EDGE[b] && (cs < EDGE[b + 1] || (b == BINS - 1 && cs <= EDGE[b + 1])))) continue;
                n++;
                push += tr->share_v[SHARE_OBSTACLE_BACK][w].v[k] / c->static_load[w];
                up += u / c->static_load[w];
                for (int o = 0; o < 6; o++) {
                    if (o == 3 + w) continue;
                    const double s = o < 3 ? tr->other_slip_v[o].v[k] : tr->slip_v[o - 3].v[k];
                    if (isfinite(s)) {
                        speed += 1.0 + s;
                        ns++;
                    }
                }
            }
            if (n > 0)
                printf(" | %4d %6.2f %6.2f %6.3f", n, push / n, up / n, ns > 0 ? speed / ns : NAN);
            else
                printf(" | %4d %6s %6s %6s", 0, "-", "-", "-");
        }
        printf("\n");
    }
}

/* One partner's share: the phase means (same cuts as the loads') of the
 * vertical and horizontal force of one contact partner on each
 * crossing-side wheel, against the static loads, for the SHARE pair
 * (j, j + 1) when the scene has both probes. */
static void print_share(const trace* tr, const rover_course* c, const rover_event_thresholds* th, int j,
                        const char* partner)
{
    for (int w = 0; w < 3; w++)
        if (tr->share[j][w].probe < 0 || tr->share[j + 1][w].probe < 0) return;
    rover_course cu = *c, cb = *c;
    for (int w = 0; w < 3; w++) {
        cu.load[w] = tr->share_v[j][w].v;
        cb.load[w] = tr->share_v[j + 1][w].v;
    }
    rover_phases pu, pb;
    if (rover_phase_means(&cu, th, 0.0, &pu) < 0 || rover_phase_means(&cb, th, 0.0, &pb) < 0) return;
    printf("\n%s own force on each wheel (probes %s, %s), phase means / static load\n%-17s %20s   %20s\n"
           "%-17s %6s %6s %6s   %6s %6s %6s\n",
           partner, SHARE[j].probe, SHARE[j + 1].probe, "phase", SHARE[j].label, SHARE[j + 1].label, "", "front",
           "middle", "rear", "front", "middle", "rear");
    for (int k = 1; k < ROVER_PHASES - 1; k++)
        printf("%-17s %6.2f %6.2f %6.2f   %6.2f %6.2f %6.2f\n", rover_phase_name(k), pu.mean[k][0], pu.mean[k][1],
               pu.mean[k][2], pb.mean[k][0], pb.mean[k][1], pb.mean[k][2]);
}

/* Values from the probes' latest rows (simulation). */
static double row_value(const where* w, const void* ctx)
{
    double* const* rows = ctx;
    return w->probe >= 0 ? rows[w->probe][w->column] : NAN;
}

/* Values from CSV tables read back (analysis of a finished run). */
typedef struct table_ctx {
    double** data;
    long* rows;
    int* columns;
    long k;
} table_ctx;

static double table_value(const where* w, const void* ctx)
{
    const table_ctx* tc = ctx;
    if (w->probe < 0 || tc->k >= tc->rows[w->probe]) return NAN;
    return tc->data[w->probe][(size_t)tc->k * (size_t)tc->columns[w->probe] + (size_t)w->column];
}

/* Runs the model to its end: one CSV per probe in dir, SVGs at the end. */
static int simulate(dvi_model* model, const dvi_scene_settings* set, const char* dir, bool quiet, trace* tr)
{
    char msg[512];
    const dvi_world* world = dvi_model_world_const(model);
    if (dvi_make_dirs(dir, msg, sizeof msg) != 0) {
        fprintf(stderr, "rover_obstacle: %s\n", msg);
        return 1;
    }
    const int32_t np = dvi_model_probe_count(model);
    dvi_csv** csv = calloc((size_t)np + 1, sizeof *csv);
    double** rows = calloc((size_t)np + 1, sizeof *rows);
    if (!csv || !rows) return 1;
    int rc = 0;
    for (int32_t p = 0; p < np && rc == 0; p++) {
        dvi_probe_info info;
        dvi_model_probe_info(model, p, &info);
        char path[4200];
        snprintf(path, sizeof path, "%s/%s.csv", dir, info.name);
        rows[p] = calloc((size_t)info.columns, sizeof **rows);
        if (!rows[p] || dvi_csv_open(&csv[p], path, info.columns, info.column_names, info.units, msg, sizeof msg)) {
            fprintf(stderr, "rover_obstacle: %s\n", rows[p] ? msg : "out of memory");
            rc = 1;
        }
    }
    const long long steps = (long long)llround(set->duration / set->dt);
    double t0 = now(), next_report = t0 + 10.0;
    long long not_converged = 0, max_iter = 0, k = 0, joint_over = 0;
    double joint_max = 0.0;
    for (; k <= steps && rc == 0; k++) {
        if (k > 0) {
            dvi_status st = dvi_model_step(model);
            if (st < 0) {
                fprintf(stderr, "rover_obstacle: step %lld (t = %g s): %s\n", k, dvi_model_time(model),
                        dvi_error_message());
                rc = 1;
                break;
            }
            dvi_step_stats ss = dvi_world_get_stats(world);
            not_converged += st == DVI_NOT_CONVERGED;
            if (ss.iterations > max_iter) max_iter = ss.iterations;
            joint_over += ss.joint_residual > set->solver_settings.tolerance;
            if (ss.joint_residual > joint_max) joint_max = ss.joint_residual;
        }
        for (int32_t p = 0; p < np; p++) {
            if (!dvi_model_probe_due(model, p)) continue;
            dvi_model_probe_sample(model, p, rows[p]);
            if (dvi_csv_write_row(csv[p], rows[p]) != 0) {
                fprintf(stderr, "rover_obstacle: %s\n", dvi_csv_last_error(csv[p]));
                rc = 1;
            }
        }
        /* the latest rows of the probes involved (the same step when they share `every`) */
        if (dvi_model_probe_due(model, tr->x.probe) && trace_push(tr, dvi_model_time(model), row_value, rows)) rc = 1;
        if (!quiet && now() >= next_report) {
            double el = now() - t0;
            fprintf(stderr, "  t = %7.2f / %g s, travel %.3f m, %.2f ms/step, ETA %.0f s\n", dvi_model_time(model),
                    set->duration, tr->travel.n ? tr->travel.v[tr->travel.n - 1] : 0.0, 1e3 * el / (double)(k + 1),
                    el / (double)(k + 1) * (double)(steps - k));
            next_report = now() + 10.0;
        }
    }
    const double wall = now() - t0;
    for (int32_t p = 0; p < np; p++) {
        if (!csv[p]) continue;
        if (dvi_csv_close(csv[p]) != 0) rc = 1;
        dvi_probe_info info;
        dvi_model_probe_info(model, p, &info);
        char cpath[4200], spath[4200];
        snprintf(cpath, sizeof cpath, "%s/%s.csv", dir, info.name);
        snprintf(spath, sizeof spath, "%s/%s.svg", dir, info.name);
        if (dvi_svg_plot_csv(cpath, spath, info.title, msg, sizeof msg) != 0) {
            fprintf(stderr, "rover_obstacle: %s\n", msg);
            rc = 1;
        }
    }
    for (int32_t p = 0; p < np; p++) free(rows[p]);
    free(rows);
    free(csv);
    long long done = dvi_model_step_count(model);
    printf("\n%s: %lld steps in %.1f s (%.2f ms/step); solver %s: %lld steps not converged, at most %lld "
           "iterations\n",
           set->name, done, wall, 1e3 * wall / (double)(done > 0 ? done : 1), set->solver, not_converged, max_iter);
    if (joint_over > 0)
        printf("joint rows: %lld steps with a relative residual above the tolerance %g (largest %.3g): the "
               "differential's nearly singular loop (docs/world.md)\n",
               joint_over, set->solver_settings.tolerance, joint_max);
    return rc;
}

/* Reads the CSVs of a run in dir. */
static int read_run(const dvi_model* model, const char* dir, trace* tr)
{
    const int32_t np = dvi_model_probe_count(model);
    table_ctx tc = {calloc((size_t)np + 1, sizeof(double*)), calloc((size_t)np + 1, sizeof(long)),
                    calloc((size_t)np + 1, sizeof(int)), 0};
    if (!tc.data || !tc.rows || !tc.columns) return 1;
    for (int32_t p = 0; p < np; p++) {
        dvi_probe_info info;
        dvi_model_probe_info(model, p, &info);
        tc.columns[p] = info.columns;
        char path[4200];
        snprintf(path, sizeof path, "%s/%s.csv", dir, info.name);
        tc.rows[p] = read_csv(path, info.columns, &tc.data[p]);
    }
    long n = tc.rows[tr->x.probe];
    for (int i = 0; i < ROVER_WHEELS; i++)
        if (tc.rows[tr->load[i].probe] < n) n = tc.rows[tr->load[i].probe];
    int rc = 0;
    for (tc.k = 0; tc.k < n && rc == 0; tc.k++)
        rc = trace_push(tr, tc.data[tr->x.probe][(size_t)tc.k * (size_t)tc.columns[tr->x.probe]], table_value, &tc);
    for (int32_t p = 0; p < np; p++) free(tc.data[p]);
    free(tc.data);
    free(tc.rows);
    free(tc.columns);
    if (n < 2) {
        fprintf(stderr, "rover_obstacle: %s: no rows in the CSVs of the probes with chassis.x and wheel_XX.f_n\n", dir);
        return 1;
    }
    return rc;
}

/* Replaces v by its centred moving average over windows of width w (s):
 * the mean of the samples with |t_j − t_k| ≤ w/2. */
static int moving_average(const series* t, series* v, double w)
{
    double* out = malloc(v->n * sizeof *out);
    if (!out) return -1;
    size_t lo = 0, hi = 0;
    double sum = 0.0;
    for (size_t k = 0; k < v->n; k++) {
        while (hi < v->n && t->v[hi] <= t->v[k] + 0.5 * w) sum += v->v[hi++];
        while (t->v[lo] < t->v[k] - 0.5 * w) sum -= v->v[lo++];
        out[k] = sum / (double)(hi - lo);
    }
    memcpy(v->v, out, v->n * sizeof *out);
    free(out);
    return 0;
}

/* The averaged loads (column suffix `suffix`) of the six wheels as a CSV and its plot. */
static int write_smoothed(const char* dir, const trace* tr, double w, const char* suffix)
{
    char path[4200], svg[4200], msg[512], title[128];
    char names[1 + ROVER_WHEELS][32];
    const char* NAMES[1 + ROVER_WHEELS] = {"time"};
    for (int i = 0; i < ROVER_WHEELS; i++) {
        snprintf(names[1 + i], sizeof names[1 + i], "%s.%s", WHEEL_BODY[i], suffix);
        NAMES[1 + i] = names[1 + i];
    }
    static const char* const UNITS[1 + ROVER_WHEELS] = {"s", "N", "N", "N", "N", "N", "N"};
    snprintf(path, sizeof path, "%s/loads_smoothed.csv", dir);
    snprintf(svg, sizeof svg, "%s/loads_smoothed.svg", dir);
    dvi_csv* c = NULL;
    if (dvi_csv_open(&c, path, 1 + ROVER_WHEELS, NAMES, UNITS, msg, sizeof msg) != 0) {
        fprintf(stderr, "rover_obstacle: %s\n", msg);
        return -1;
    }
    for (size_t k = 0; k < tr->t.n; k++) {
        double row[1 + ROVER_WHEELS] = {tr->t.v[k]};
        for (int i = 0; i < ROVER_WHEELS; i++) row[1 + i] = tr->value[i].v[k];
        dvi_csv_write_row(c, row);
    }
    if (dvi_csv_close(c) != 0) return -1;
    snprintf(title, sizeof title, "%s, averaged over %g s",
             strcmp(suffix, "f_up") == 0    ? "Vertical loads"
             : strcmp(suffix, "f_mag") == 0 ? "Resultant contact forces"
                                            : "Normal loads",
             w);
    if (dvi_svg_plot_csv(path, svg, title, msg, sizeof msg) != 0) {
        fprintf(stderr, "rover_obstacle: %s\n", msg);
        return -1;
    }
    return 0;
}

static void write_events_json(const char* dir, const char* scene_name, const char* variant, const rover_course* c,
                              const rover_events* ev, const rover_phases* ph, const double ref[ROVER_WHEELS],
                              const double peak[ROVER_WHEELS], const char* const* names)
{
    char msg[512];
    dvi_json_writer* jw = NULL;
    if (dvi_json_writer_open_buffer(&jw) != 0) return;
    dvi_json_begin_object(jw);
    dvi_json_key_string(jw, "scene", scene_name);
    dvi_json_key_string(jw, "variant", variant);
    dvi_json_key_number(jw, "crossing_time", ev->crossing_time);
    dvi_json_key_int(jw, "excursions", ev->excursions);
    dvi_json_key_number(jw, "settle_error", ev->settle_error);
    dvi_json_key_bool(jw, "ok", ev->ok);
    dvi_json_key(jw, "events");
    dvi_json_begin_array(jw);
    for (int w = 0; w < 3; w++) {
        const rover_event* e = &ev->event[w];
        dvi_json_begin_object(jw);
        dvi_json_key_string(jw, "event", names[w]);
        dvi_json_key_number(jw, "reach_travel", c->reach[w]);
        dvi_json_key_number(jw, "leave_travel", c->leave[w]);
        dvi_json_key_number(jw, "t_reach", e->t_reach);
        dvi_json_key_number(jw, "t_top", e->t_top);
        dvi_json_key_number(jw, "t_leave", e->t_leave);
        dvi_json_key_number(jw, "t_start", e->t_start);
        dvi_json_key_number(jw, "t_end", e->t_end);
        dvi_json_key_number(jw, "error", e->error);
        dvi_json_key_bool(jw, "on_time", e->on_time);
        dvi_json_key_bool(jw, "pattern", e->pattern);
        dvi_json_key_numbers(jw, "climb_max", e->climb_max, 3);
        dvi_json_key_numbers(jw, "climb_min", e->climb_min, 3);
        dvi_json_key_numbers(jw, "descent_max", e->descent_max, 3);
        dvi_json_key_numbers(jw, "descent_min", e->descent_min, 3);
        dvi_json_key_number(jw, "front_rear", e->front_rear);
        dvi_json_key_string(jw, "pattern_found", e->why);
        dvi_json_end_object(jw);
    }
    dvi_json_end_array(jw);
    dvi_json_key_numbers(jw, "static_loads", ref, ROVER_WHEELS);
    dvi_json_key_numbers(jw, "peak_loads", peak, ROVER_WHEELS);
    if (ph) { /* the phase means (rover_phase_means) */
        dvi_json_key(jw, "phases");
        dvi_json_begin_object(jw);
        dvi_json_key_numbers(jw, "baseline", ph->baseline, 3);
        dvi_json_key(jw, "table");
        dvi_json_begin_array(jw);
        for (int k = 0; k < ROVER_PHASES; k++) {
            dvi_json_begin_object(jw);
            dvi_json_key_string(jw, "phase", rover_phase_name(k));
            dvi_json_key_number(jw, "travel_from", ph->d0[k]);
            dvi_json_key_number(jw, "travel_to", ph->d1[k]);
            dvi_json_key_number(jw, "t_from", ph->t0[k]);
            dvi_json_key_number(jw, "t_to", ph->t1[k]);
            dvi_json_key_int(jw, "samples", ph->samples[k]);
            dvi_json_key_numbers(jw, "mean", ph->mean[k], 3);
            dvi_json_end_object(jw);
        }
        dvi_json_end_array(jw);
        dvi_json_key(jw, "patterns");
        dvi_json_begin_array(jw);
        for (int w = 0; w < 3; w++) {
            dvi_json_begin_object(jw);
            dvi_json_key_string(jw, "event", names[w]);
            dvi_json_key_bool(jw, "pattern", ph->pattern[w]);
            dvi_json_key_string(jw, "pattern_found", ph->why[w]);
            dvi_json_end_object(jw);
        }
        dvi_json_end_array(jw);
        dvi_json_end_object(jw);
    }
    dvi_json_end_object(jw);
    if (dvi_json_writer_finish(jw, msg, sizeof msg) == 0) {
        size_t size;
        const char* text = dvi_json_writer_buffer(jw, &size);
        char path[4200];
        snprintf(path, sizeof path, "%s/events.json", dir);
        if (dvi_write_file_atomic(path, text, size, msg, sizeof msg) != 0) fprintf(stderr, "rover_obstacle: %s\n", msg);
    }
    dvi_json_writer_free(jw);
}

int main(int argc, char** argv)
{
    if (rover_register_probes() != DVI_OK) return 1; /* the rover scenes' probe kinds */
    const char* scene_path = NULL;
    const char* reference = NULL;
    const char* out_dir = NULL;
    const char* analyse = NULL;
    double duration = 0.0, dt = 0.0, smooth = 0.0, baseline = -1.0, phase_baseline = 0.1;
    bool measured_phases = false;
    const char* method = NULL;
    const char* load_suffix = "f_n";
    bool quiet = false;
    for (int i = 1; i < argc; i++) {
        bool more = i + 1 < argc;
        if (strcmp(argv[i], "--out") == 0 && more) out_dir = argv[++i];
        else if (strcmp(argv[i], "--analyse") == 0 && more) analyse = argv[++i];
        else if (strcmp(argv[i], "--duration") == 0 && more) duration = atof(argv[++i]);
        else if (strcmp(argv[i], "--dt") == 0 && more) dt = atof(argv[++i]);
        else if (strcmp(argv[i], "--smooth") == 0 && more) smooth = atof(argv[++i]);
        else if (strcmp(argv[i], "--baseline") == 0 && more) baseline = atof(argv[++i]);
        else if (strcmp(argv[i], "--phase-baseline") == 0 && more) phase_baseline = atof(argv[++i]);
        else if (strcmp(argv[i], "--phases") == 0 && more &&
                 (strcmp(argv[i + 1], "measured") == 0 || strcmp(argv[i + 1], "predicted") == 0))
            measured_phases = strcmp(argv[++i], "measured") == 0;
        else if (strcmp(argv[i], "--load") == 0 && more &&
                 (strcmp(argv[i + 1], "normal") == 0 || strcmp(argv[i + 1], "up") == 0 ||
                  strcmp(argv[i + 1], "magnitude") == 0)) {
            i++;
            load_suffix = strcmp(argv[i], "up") == 0 ? "f_up" : strcmp(argv[i], "magnitude") == 0 ? "f_mag" : "f_n";
        }
        else if (strcmp(argv[i], "--method") == 0 && more) method = argv[++i];
        else if (strcmp(argv[i], "--reference") == 0 && more) reference = argv[++i];
        else if (strcmp(argv[i], "--quiet") == 0) quiet = true;
        else if (argv[i][0] != '-') scene_path = argv[i];
        else {
            fprintf(stderr,
                    "usage: %s [SCENE] [--out DIR] [--duration T] [--method dvi|dem] [--dt H] [--smooth T] "
                    "[--baseline D] [--phase-baseline D] [--phases predicted|measured] [--load normal|up|magnitude] "
                    "[--reference ROVER_JSON] [--quiet]\n"
                    "       %s [SCENE] --analyse DIR [--smooth T] [--baseline D] [--phase-baseline D] "
                    "[--phases predicted|measured] [--load normal|up|magnitude] [--reference ROVER_JSON]\n",
                    argv[0], argv[0]);
            return 2;
        }
    }
    char found_scene[4096], found_reference[4096];
    scene_path = data_path_or(scene_path, "scenes/rover_obstacle_rigid.json", found_scene, sizeof found_scene,
                              "rover_obstacle");
    reference = data_path_or(reference, "rover/rocker_bogie_rover.json", found_reference, sizeof found_reference,
                             "rover_obstacle");
    if (!scene_path || !reference) return 2;

    /* ---- the scene and its model ---- */
    dvi_scene* scene = NULL;
    dvi_scene_errors errs;
    if (dvi_scene_load(scene_path, &scene, &errs) != DVI_OK) {
        fprintf(stderr, "rover_obstacle: %s:\n%s", scene_path, errs.text ? errs.text : "cannot load\n");
        dvi_scene_errors_free(&errs);
        return 2;
    }
    if (duration != 0.0 || dt != 0.0 || method) {
        dvi_scene_overrides o;
        memset(&o, 0, sizeof o);
        o.duration = duration;
        o.dt = dt;
        o.method = method;
        if (dvi_scene_apply_overrides(scene, &o, &errs) != DVI_OK) {
            fprintf(stderr, "rover_obstacle: %s", errs.text ? errs.text : "bad --duration, --dt or --method\n");
            dvi_scene_errors_free(&errs);
            dvi_scene_destroy(scene);
            return 2;
        }
    }
    const dvi_scene_settings set = dvi_scene_get_settings(scene);
    const bool rigid = dvi_scene_generator_count(scene) == 0;
    char msg[512];
    dvi_model* model = NULL;
    if (dvi_model_create(scene, &model, msg, sizeof msg) != DVI_OK) {
        fprintf(stderr, "rover_obstacle: %s: %s\n", scene_path, msg);
        dvi_scene_destroy(scene);
        return 1;
    }
    const dvi_world* world = dvi_model_world_const(model);

    /* the rover's bodies, the obstacle, the variant */
    dvi_body_id chassis, obstacle, wheel[ROVER_WHEELS];
    dvi_body_info cinfo, oinfo;
    bool found = dvi_model_find_body(model, "chassis", &chassis) == DVI_OK &&
                 dvi_model_find_body(model, "obstacle", &obstacle) == DVI_OK &&
                 dvi_body_get_info(world, chassis, &cinfo) == DVI_OK &&
                 dvi_body_get_info(world, obstacle, &oinfo) == DVI_OK;
    for (int i = 0; i < ROVER_WHEELS && found; i++) found = dvi_model_find_body(model, WHEEL_BODY[i], &wheel[i]) == DVI_OK;
    trace tr;
    if (!found || !trace_find(&tr, model, load_suffix)) {
        fprintf(stderr, "rover_obstacle: %s: expected the bodies chassis, obstacle and wheel_LF .. wheel_RB, and probes "
                        "with the columns chassis.x and wheel_XX.%s\n", scene_path, load_suffix);
        return 2;
    }
    double obstacle_centre[3];
    dvi_body_get_position(world, obstacle, obstacle_centre);
    const double obstacle_radius = oinfo.bounding_radius;

    const char* variant = NULL;
    rover cm; /* the C model, for the geometry */
    static const char* const VARIANTS[2] = {"Scarecrow", "FullRover"};
    for (int v = 0; v < 2 && !variant; v++) {
        dvi_world_def wd = dvi_default_world_def();
        dvi_world* tmp = NULL;
        if (dvi_world_create(&wd, &tmp) != DVI_OK) return 1;
        rover_options ro = rover_default_options();
        ro.on_ground = true;
        if (rover_build(tmp, reference, VARIANTS[v], &ro, &cm, msg, sizeof msg) != DVI_OK) {
            fprintf(stderr, "rover_obstacle: %s\n", msg);
            dvi_world_destroy(tmp);
            return 1;
        }
        if (fabs(cm.bodies[0].mass - cinfo.mass) <= 1e-9 * cinfo.mass) variant = VARIANTS[v];
        dvi_world_destroy(tmp);
    }
    if (!variant) {
        fprintf(stderr, "rover_obstacle: the chassis mass %g kg is neither variant's\n", cinfo.mass);
        return 1;
    }
    double worst_pose = 0.0;
    for (int i = 0; i < ROVER_WHEELS; i++) {
        double p[3];
        dvi_body_get_position(world, wheel[i], p);
        for (int k = 0; k < 3; k++) worst_pose = fmax(worst_pose, fabs(p[k] - cm.wheel[i].position[k]));
    }
    double ref[ROVER_WHEELS];
    if (rover_reference_loads(reference, variant, ref, msg, sizeof msg) != DVI_OK) {
        fprintf(stderr, "rover_obstacle: %s\n", msg);
        return 1;
    }

    /* ---- run, or read a run ---- */
    char dir[4096];
    if (analyse) snprintf(dir, sizeof dir, "%s", analyse);
    else if (out_dir) snprintf(dir, sizeof dir, "%s", out_dir);
    else snprintf(dir, sizeof dir, "out/%s", set.name[0] ? set.name : "rover_obstacle");
    int rc;
    if (analyse) {
        rc = read_run(model, dir, &tr);
        if (rc == 0)
            printf("rover_obstacle: %s (%s, %s): %zu samples read from %s/, t = %g .. %g s\n", scene_path, set.name,
                   variant, tr.t.n, dir, tr.t.v[0], tr.t.v[tr.t.n - 1]);
    } else {
        printf("rover_obstacle: %s (%s, %s), %lld steps of %g s, %s%s; outputs in %s/\n", scene_path, set.name,
               variant, (long long)llround(set.duration / set.dt), set.dt, strcmp(set.method, "dem") == 0 ? "DEM" : "DVI with ",
               strcmp(set.method, "dem") == 0 ? "" : set.solver, dir);
        fflush(stdout);
        rc = simulate(model, &set, dir, quiet, &tr);
    }
    if (tr.t.n < 2) {
        trace_free(&tr);
        dvi_model_destroy(model);
        dvi_scene_destroy(scene);
        return 1;
    }
    printf("the scene's rover and the C model (rover_model.c) place the wheels within %.1e m of each other\n",
           worst_pose);

    /* ---- the events ---- */
    if (smooth > 0.0) {
        for (int i = 0; i < ROVER_WHEELS; i++)
            if (moving_average(&tr.t, &tr.value[i], smooth) != 0) return 1;
        if (write_smoothed(dir, &tr, smooth, load_suffix) == 0)
            printf("loads averaged over %g s windows for the analysis: %s/loads_smoothed.csv, .svg\n", smooth, dir);
    }
    rover_course c;
    memset(&c, 0, sizeof c);
    c.n = (int)tr.t.n;
    c.t = tr.t.v;
    c.travel = tr.travel.v;
    for (int w = 0; w < 3; w++) {
        c.load[w] = tr.value[ROVER_RF + w].v;
        c.static_load[w] = ref[ROVER_RF + w];
        if (!rover_obstacle_travel(&cm, ROVER_RF + w, obstacle_centre, obstacle_radius, &c.reach[w], &c.leave[w])) {
            fprintf(stderr, "rover_obstacle: wheel %s misses the obstacle\n", WHEEL_BODY[ROVER_RF + w]);
            return 1;
        }
    }
    rover_events ev;
    rover_event_thresholds th = rover_default_event_thresholds();
    th.baseline_travel = baseline >= 0.0 ? baseline : strcmp(set.method, "dem") == 0 ? 0.1 : 0.0;
    if (rover_find_events(&c, &th, &ev) < 0) {
        fprintf(stderr, "rover_obstacle: cannot analyse the loads (--baseline must be >= 0)\n");
        return 1;
    }
    if (th.baseline_travel > 0.0)
        printf("\nloads measured against baselines: the mean over the %g m of travel before each wheel reaches the "
               "obstacle\n  front %.0f / %.0f / %.0f N, middle %.0f / %.0f / %.0f N, rear %.0f / %.0f / %.0f N "
               "(F / M / R)\n",
               th.baseline_travel, ev.event[0].baseline[0], ev.event[0].baseline[1], ev.event[0].baseline[2],
               ev.event[1].baseline[0], ev.event[1].baseline[1], ev.event[1].baseline[2], ev.event[2].baseline[0],
               ev.event[2].baseline[1], ev.event[2].baseline[2]);
    static const char* const EVENT[3] = {"front climbs", "middle climbs", "rear climbs"};
    const size_t last = tr.t.n - 1;
    printf("\nobstacle: sphere of radius %.3f m at (%.3f, %.3f, %.3f); crossing side: the right-hand wheels\n",
           obstacle_radius, obstacle_centre[0], obstacle_centre[1], obstacle_centre[2]);
    printf("travel %.3f m in %.2f s; crossing time (front reaches .. rear leaves, from the travel) %.2f s\n",
           tr.travel.v[last], tr.t.v[last], ev.crossing_time);
    printf("\n%-14s %9s %9s %9s %9s %8s %7s %7s  %s\n", "event", "reach [m]", "predicted", "found", "error", "error/T",
           "on time", "pattern", "loads (x static)");
    for (int w = 0; w < 3; w++) {
        const rover_event* e = &ev.event[w];
        printf("%-14s %9.3f %8.2fs %8.2fs %+8.2fs %7.2f%% %7s %7s  %s\n", EVENT[w], c.reach[w], e->t_reach,
               e->t_start, e->error, 100.0 * e->error / ev.crossing_time, e->on_time ? "yes" : "NO",
               e->pattern ? "yes" : "NO", e->why);
    }
    printf("excursions found: %d (3 expected); after the crossing the loads are within %.3f %% of static\n",
           ev.excursions, 100.0 * ev.settle_error);

    /* peaks and extremes (after the ramp: travel beyond half the distance to the obstacle) */
    double peak[ROVER_WHEELS] = {0}, pmin = 0, pmax = 0, smin[3] = {0, 0, 0};
    for (size_t k = 0; k < tr.t.n; k++) {
        if (tr.travel.v[k] < 0.5 * c.reach[0]) continue;
        for (int i = 0; i < ROVER_WHEELS; i++) peak[i] = fmax(peak[i], tr.value[i].v[k]);
        if (isfinite(tr.pitch_v.v[k])) {
            pmin = fmin(pmin, tr.pitch_v.v[k]);
            pmax = fmax(pmax, tr.pitch_v.v[k]);
        }
        for (int i = 0; i < 3; i++)
            if (isfinite(tr.slip_v[i].v[k])) smin[i] = fmin(smin[i], tr.slip_v[i].v[k]);
    }
    printf("\n%-13s %10s %10s %11s\n", "wheel", "static [N]", "peak [N]", "peak/static");
    for (int i = 0; i < ROVER_WHEELS; i++)
        printf("%-13s %10.1f %10.1f %11.2f\n", WHEEL_BODY[i], ref[i], peak[i], peak[i] / ref[i]);
    printf("chassis pitch from %+.4f to %+.4f rad (+ nose down); lowest slip ratio of the right-hand wheels: front "
           "%.3f, middle %.3f, rear %.3f\n",
           pmin, pmax, smin[0], smin[1], smin[2]);
    print_climbs(&tr, obstacle_centre, &c, &ev);

    /* the phase means: the pattern read from mean loads over stretches of
     * travel (rover_phase_means), against the mean loads of the 0.1 m before
     * the front wheel reaches the obstacle */
    rover_phases ph;
    rover_course cp = c;
    if (measured_phases) {
        const double* height[3] = {tr.wz_v[0].v, tr.wz_v[1].v, tr.wz_v[2].v};
        if (tr.wz[0].probe < 0 || rover_measured_cuts(&c, height, cp.reach, cp.leave) != 3) {
            fprintf(stderr, "rover_obstacle: --phases measured: a wheel's climb or landing is not in the run (or no "
                            "wheel_RX.z columns)\n");
            cp = c;
        } else {
            printf("\nphases cut where the wheel centres climb and land (--phases measured), travel [m]: reach / "
                   "leave, measured (predicted)\n");
            static const char* const NAME[3] = {"front", "middle", "rear"};
            for (int w = 0; w < 3; w++)
                printf("  %-6s %.3f (%.3f) / %.3f (%.3f)\n", NAME[w], cp.reach[w], c.reach[w], cp.leave[w], c.leave[w]);
        }
    }
    const bool have_phases = rover_phase_means(&cp, &th, phase_baseline, &ph) >= 0;
    if (have_phases) {
        printf("\nphase means: load / its mean over %.3f .. %.3f m of travel (front %.0f N, middle %.0f N, rear %.0f N)\n",
               ph.d0[0], ph.d1[0], ph.baseline[0], ph.baseline[1], ph.baseline[2]);
        printf("%-17s %15s %15s %7s %6s %6s %6s\n", "phase", "travel [m]", "time [s]", "samples", "front", "middle",
               "rear");
        for (int k = 0; k < ROVER_PHASES; k++)
            printf("%-17s %7.3f..%-6.3f %7.2f..%-6.2f %7d %6.2f %6.2f %6.2f\n", rover_phase_name(k), ph.d0[k], ph.d1[k],
                   ph.t0[k], ph.t1[k], ph.samples[k], ph.mean[k][0], ph.mean[k][1], ph.mean[k][2]);
        for (int w = 0; w < 3; w++)
            printf("%-14s pattern %-3s  %s\n", EVENT[w], ph.pattern[w] ? "yes" : "NO", ph.why[w]);
        print_share(&tr, &cp, &th, SHARE_OBSTACLE_UP, "the obstacle's");
        print_share(&tr, &cp, &th, SHARE_GRAINS_UP, "the grains'");
        print_by_angle(&tr, obstacle_centre, &c);
    } else {
        printf("\nphase means: no sample in the baseline window (%.3f m before the front wheel reaches the obstacle)\n",
               phase_baseline);
    }
    write_events_json(dir, set.name, variant, &c, &ev, have_phases ? &ph : NULL, ref, peak, EVENT);
    printf("\n%s\n", ev.ok ? "the three events were found on time, and the loads settled"
                           : "the event pattern is incomplete (see the table)");
    trace_free(&tr);
    dvi_model_destroy(model);
    dvi_scene_destroy(scene);
    if (rc == 0 && rigid && !ev.ok && !analyse) rc = 1;
    return rc;
}
