/* rover_events — the three wheel-load events of an obstacle crossing. See
 * rover_events.h. */
#include "rover_events.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

rover_event_thresholds rover_default_event_thresholds(void)
{
    rover_event_thresholds th;
    th.band = 0.05;
    th.merge_travel = 0.1;
    th.jump = 0.2;
    th.drop = 0.1;
    th.equal = 0.25;
    th.timing_tolerance = 0.05;
    th.settle_tolerance = 0.01;
    th.baseline_travel = 0.0;
    return th;
}

/* First time at which the travel reaches d (linear interpolation), NaN if never. */
static double time_at_travel(const rover_course* c, double d)
{
    for (int k = 0; k < c->n; k++) {
        if (c->travel[k] < d) continue;
        if (k == 0) return c->t[0];
        double d0 = c->travel[k - 1], d1 = c->travel[k];
        double f = d1 > d0 ? (d - d0) / (d1 - d0) : 1.0;
        return c->t[k - 1] + f * (c->t[k] - c->t[k - 1]);
    }
    return NAN;
}

/* Largest relative deviation of the side's loads from ref at sample k. */
static double deviation(const rover_course* c, const double ref[3], int k)
{
    double d = 0.0;
    for (int w = 0; w < 3; w++) d = fmax(d, fabs(c->load[w][k] / ref[w] - 1.0));
    return d;
}

/* Extremes of load/ref per wheel over samples with t in [t0, t1]; NaN when
 * no sample lies there (an excursion that ends before the wheel's top). */
static void extremes(const rover_course* c, const double ref[3], double t0, double t1, double mx[3], double mn[3])
{
    for (int w = 0; w < 3; w++) {
        mx[w] = -INFINITY;
        mn[w] = INFINITY;
    }
    int cnt = 0;
    for (int k = 0; k < c->n; k++) {
        if (c->t[k] < t0 || c->t[k] > t1) continue;
        cnt++;
        for (int w = 0; w < 3; w++) {
            double r = c->load[w][k] / ref[w];
            mx[w] = fmax(mx[w], r);
            mn[w] = fmin(mn[w], r);
        }
    }
    if (cnt == 0)
        for (int w = 0; w < 3; w++) mx[w] = mn[w] = NAN;
}

/* The mean loads over travel in [d0, d1] into ref; false when no sample
 * lies there or a mean is not positive. */
static bool mean_loads(const rover_course* c, double d0, double d1, double ref[3])
{
    int cnt = 0;
    double sum[3] = {0.0, 0.0, 0.0};
    for (int k = 1; k < c->n; k++) { /* sample 0: before any step, no loads */
        if (c->travel[k] < d0 || c->travel[k] > d1) continue;
        for (int w = 0; w < 3; w++) sum[w] += c->load[w][k];
        cnt++;
    }
    for (int w = 0; w < 3; w++) ref[w] = cnt > 0 ? sum[w] / cnt : NAN;
    return cnt > 0 && ref[0] > 0.0 && ref[1] > 0.0 && ref[2] > 0.0;
}

int rover_find_events(const rover_course* c, const rover_event_thresholds* thp, rover_events* out)
{
    if (!c || !out || c->n < 2 || !c->t || !c->travel || !c->load[0] || !c->load[1] || !c->load[2]) return -1;
    for (int w = 0; w < 3; w++)
        if (!(c->static_load[w] > 0.0)) return -1;
    const rover_event_thresholds th = thp ? *thp : rover_default_event_thresholds();
    if (!(th.baseline_travel >= 0.0) || !isfinite(th.baseline_travel)) return -1;
    memset(out, 0, sizeof *out);

    /* the loads each event is measured against; with baselines, a sample
     * belongs to the last wheel whose baseline window has begun */
    const double GAP = 0.02; /* m of travel between a baseline window and the wheel's reach */
    double ref[3][3];
    double from[3] = {-INFINITY, INFINITY, INFINITY}; /* travel from which event w's reference applies */
    for (int w = 0; w < 3; w++) {
        for (int j = 0; j < 3; j++) ref[w][j] = c->static_load[j];
        if (th.baseline_travel > 0.0) {
            double d1 = c->reach[w] - GAP, d0 = d1 - th.baseline_travel;
            if (!mean_loads(c, d0, d1, ref[w])) /* not reached: the previous event's, or static */
                for (int j = 0; j < 3; j++) ref[w][j] = w > 0 ? ref[w - 1][j] : c->static_load[j];
            if (w > 0) from[w] = d0;
        }
        for (int j = 0; j < 3; j++) out->event[w].baseline[j] = ref[w][j];
    }
#define REF_AT(k) (ref[(c->travel[k] >= from[2]) ? 2 : (c->travel[k] >= from[1]) ? 1 : 0])

    /* excursions: [start, end] sample ranges where the deviation exceeds the
     * band, from when the rover is halfway to the obstacle (the start-up
     * before: the first sample, taken before any step, has no loads) */
    enum { MAX_EXC = 64 };
    int s0[MAX_EXC], s1[MAX_EXC], ne = 0, first = 0;
    while (first < c->n && c->travel[first] < 0.5 * c->reach[ROVER_FRONT]) first++;
    for (int k = first; k < c->n;) {
        if (!(deviation(c, REF_AT(k), k) > th.band)) {
            k++;
            continue;
        }
        int a = k;
        const double* ra = REF_AT(a);
        while (k < c->n && REF_AT(k) == ra && deviation(c, ra, k) > th.band) k++;
        int b = k - 1;
        if (ne > 0 && REF_AT(s1[ne - 1]) == ra && c->travel[a] - c->travel[s1[ne - 1]] < th.merge_travel) {
            s1[ne - 1] = b; /* merge with the previous one */
        } else if (ne < MAX_EXC) {
            s0[ne] = a;
            s1[ne] = b;
            ne++;
        }
    }
    out->excursions = ne;

    for (int w = 0; w < 3; w++) {
        rover_event* e = &out->event[w];
        e->t_reach = time_at_travel(c, c->reach[w]);
        e->t_top = time_at_travel(c, 0.5 * (c->reach[w] + c->leave[w]));
        e->t_leave = time_at_travel(c, c->leave[w]);
        e->t_start = e->t_end = e->error = NAN;
        e->front_rear = NAN;
    }
    out->crossing_time = out->event[ROVER_REAR].t_leave - out->event[ROVER_FRONT].t_reach;

    /* the excursions in order belong to the front, middle and rear wheels */
    bool all = ne == 3 && isfinite(out->crossing_time);
    for (int w = 0; w < 3 && w < ne; w++) {
        rover_event* e = &out->event[w];
        e->t_start = c->t[s0[w]];
        e->t_end = c->t[s1[w]];
        e->error = e->t_start - e->t_reach;
        e->on_time = isfinite(e->error) && isfinite(out->crossing_time) &&
                     fabs(e->error) <= th.timing_tolerance * out->crossing_time;
        double top = isfinite(e->t_top) ? e->t_top : e->t_end;
        extremes(c, ref[w], e->t_start, top, e->climb_max, e->climb_min);
        extremes(c, ref[w], top, e->t_end, e->descent_max, e->descent_min);
        double hi = 1.0 + th.jump, lo = 1.0 - th.drop;
        /* front ≈ rear, mean over the excursion */
        double sum = 0.0;
        int cnt = 0;
        for (int k = s0[w]; k <= s1[w]; k++) {
            double f = c->load[ROVER_FRONT][k], r = c->load[ROVER_REAR][k];
            if (f + r > 0.0) {
                sum += fabs(f - r) / (0.5 * (f + r));
                cnt++;
            }
        }
        e->front_rear = cnt ? sum / cnt : NAN;
        switch (w) {
        case ROVER_FRONT:
            e->pattern = e->climb_max[ROVER_FRONT] > hi && e->climb_min[ROVER_MIDDLE] < lo;
            snprintf(e->why, sizeof e->why, "front up to %.2f x %s, middle down to %.2f x while climbing",
                     e->climb_max[ROVER_FRONT], th.baseline_travel > 0.0 ? "baseline" : "static",
                     e->climb_min[ROVER_MIDDLE]);
            break;
        case ROVER_MIDDLE:
            e->pattern = e->climb_max[ROVER_MIDDLE] > hi && e->front_rear <= th.equal &&
                         e->descent_min[ROVER_MIDDLE] < lo && e->descent_max[ROVER_FRONT] > 1.0 + th.drop &&
                         e->descent_max[ROVER_REAR] > 1.0 + th.drop;
            snprintf(e->why, sizeof e->why,
                     "middle up to %.2f x, front/rear differ by %.0f %% on average; then middle down to %.2f x, "
                     "front up to %.2f x, rear %.2f x",
                     e->climb_max[ROVER_MIDDLE], 100.0 * e->front_rear, e->descent_min[ROVER_MIDDLE],
                     e->descent_max[ROVER_FRONT], e->descent_max[ROVER_REAR]);
            break;
        default:
            /* the middle wheel's load falls while the rear climbs: by `drop` of
             * its highest value in the climb (it first rises with the impact) */
            e->pattern = e->climb_min[ROVER_MIDDLE] < (1.0 - th.drop) * e->climb_max[ROVER_MIDDLE] &&
                         e->descent_min[ROVER_REAR] < lo && e->descent_max[ROVER_MIDDLE] > hi;
            snprintf(e->why, sizeof e->why,
                     "middle falls from %.2f to %.2f x while climbing; then rear down to %.2f x, middle up to %.2f x",
                     e->climb_max[ROVER_MIDDLE], e->climb_min[ROVER_MIDDLE], e->descent_min[ROVER_REAR],
                     e->descent_max[ROVER_MIDDLE]);
            break;
        }
        all = all && e->pattern && e->on_time;
    }

    /* settling: the second half of what follows the last excursion */
    out->settle_error = NAN;
    out->t_settled = NAN;
    if (ne > 0 && s1[ne - 1] + 1 < c->n) {
        int after = s1[ne - 1] + 1, mid = after + (c->n - after) / 2;
        double worst = 0.0;
        for (int k = mid; k < c->n; k++) worst = fmax(worst, deviation(c, c->static_load, k));
        out->settle_error = worst;
        int k = c->n - 1;
        while (k >= after && deviation(c, c->static_load, k) <= th.settle_tolerance) k--;
        if (k < c->n - 1) out->t_settled = c->t[k + 1];
    }
    out->ok = all && isfinite(out->settle_error) && out->settle_error <= th.settle_tolerance;
    return ne;
#undef REF_AT
}

int rover_measured_cuts(const rover_course* c, const double* const height[3], double reach[3], double leave[3])
{
    const double RISE = 0.01, GAP = 0.02, WINDOW = 0.1, SEARCH = 0.3, SETTLE = 0.05; /* m */
    if (!c || !height || !reach || !leave || c->n < 2 || !c->travel) return -1;
    for (int i = 0; i < 3; i++)
        if (!height[i] || !isfinite(c->reach[i]) || !isfinite(c->leave[i])) return -1;
    const int n = c->n;
    const double* d = c->travel;
    for (int i = 0; i < 3; i++) {
        const double* z = height[i];
        const double d1 = c->reach[i] - GAP, d0 = d1 - WINDOW;
        double sum = 0.0;
        int cnt = 0;
        for (int k = 0; k < n; k++)
            if (d[k] >= d0 && d[k] <= d1 && isfinite(z[k])) {
                sum += z[k];
                cnt++;
            }
        if (cnt == 0) return i;
        const double level = sum / cnt;
        int start = -1, land = -1;
        for (int k = 0; k < n && start < 0; k++)
            if (d[k] >= d0 && z[k] > level + RISE) start = k;
        if (start < 0) return i;
        int top = start, end = start;
        for (int k = start; k < n && d[k] <= c->leave[i] + SEARCH; k++) {
            if (z[k] > z[top]) top = k;
            end = k;
        }
        /* the ground it lands on: as before the obstacle, or the lowest it
         * comes down to after its top within the search (on grains a wheel
         * can land on a surface higher than the one it left: its own rut is
         * not there) */
        double after = z[top];
        for (int k = top; k <= end; k++)
            if (isfinite(z[k]) && z[k] < after) after = z[k];
        const double ground = fmax(level, after);
        for (int k = top; k < n && land < 0; k++)
            if (z[k] <= ground + RISE) land = k;
        if (land < 0) return i;
        if (after > level) { /* a raised landing must hold for SETTLE of travel: not the run's end mid-descent */
            int k = land;
            while (k < n && d[k] < d[land] + SETTLE && z[k] <= ground + RISE) k++;
            if (k == n || d[k] < d[land] + SETTLE) return i;
        }
        reach[i] = d[start];
        leave[i] = d[land];
    }
    return 3;
}

const char* rover_phase_name(int k)
{
    static const char* const NAMES[ROVER_PHASES] = {
        "before",          "front climb 1",   "front climb 2",    "front descent 1", "front descent 2", "front-middle",
        "middle climb 1",  "middle climb 2",  "middle descent 1", "middle descent 2", "middle-rear",    "rear climb 1",
        "rear climb 2",    "rear descent 1",  "rear descent 2",   "after"};
    return k >= 0 && k < ROVER_PHASES ? NAMES[k] : "?";
}

/* Sample-weighted mean of two phases' relative means, per load. */
static void merge_halves(const rover_phases* p, int a, double out[3])
{
    int n = p->samples[a] + p->samples[a + 1];
    for (int j = 0; j < 3; j++) {
        double s = 0.0;
        for (int k = a; k <= a + 1; k++)
            if (p->samples[k] > 0) s += p->samples[k] * p->mean[k][j];
        out[j] = n > 0 ? s / n : NAN;
    }
}

int rover_phase_means(const rover_course* c, const rover_event_thresholds* thp, double baseline_travel,
                      rover_phases* out)
{
    if (!c || !out || c->n < 2 || !c->t || !c->travel || !c->load[0] || !c->load[1] || !c->load[2]) return -1;
    if (!(baseline_travel >= 0.0) || !isfinite(baseline_travel)) return -1;
    for (int w = 0; w < 3; w++)
        if (!(c->static_load[w] > 0.0) || !(c->reach[w] < c->leave[w])) return -1;
    if (!(c->leave[0] <= c->reach[1] && c->leave[1] <= c->reach[2])) return -1;
    const rover_event_thresholds th = thp ? *thp : rover_default_event_thresholds();
    memset(out, 0, sizeof *out);

    const double GAP = 0.02, SETTLE = 0.3; /* m */
    const double w = baseline_travel > 0.0 ? baseline_travel : 0.1;
    out->d0[0] = c->reach[0] - GAP - w;
    out->d1[0] = c->reach[0] - GAP;
    for (int v = 0; v < 3; v++) {
        const int b = 1 + 5 * v;
        const double top = 0.5 * (c->reach[v] + c->leave[v]);
        const double cut[5] = {c->reach[v], 0.5 * (c->reach[v] + top), top, 0.5 * (top + c->leave[v]), c->leave[v]};
        for (int k = 0; k < 4; k++) {
            out->d0[b + k] = cut[k];
            out->d1[b + k] = cut[k + 1];
        }
        if (v < 2) {
            out->d0[b + 4] = c->leave[v];
            out->d1[b + 4] = c->reach[v + 1];
        }
    }
    out->d0[15] = c->leave[2] + SETTLE;
    out->d1[15] = c->leave[2] + SETTLE + w;

    /* the mean loads (N) of every phase, then relative to the baseline:
     * phase 0's means, or the static loads */
    for (int k = 0; k < ROVER_PHASES; k++) {
        double sum[3] = {0.0, 0.0, 0.0};
        int cnt = 0;
        out->t0[k] = out->t1[k] = NAN;
        for (int i = 1; i < c->n; i++) { /* sample 0: before any step, no loads */
            if (c->travel[i] < out->d0[k] || c->travel[i] >= out->d1[k]) continue;
            if (cnt == 0) out->t0[k] = c->t[i];
            out->t1[k] = c->t[i];
            for (int j = 0; j < 3; j++) sum[j] += c->load[j][i];
            cnt++;
        }
        out->samples[k] = cnt;
        for (int j = 0; j < 3; j++) out->mean[k][j] = cnt > 0 ? sum[j] / cnt : NAN;
    }
    for (int j = 0; j < 3; j++) {
        out->baseline[j] = baseline_travel > 0.0 ? out->mean[0][j] : c->static_load[j];
        if (!(out->baseline[j] > 0.0)) return -1; /* no sample in the baseline window, or no load there */
    }
    for (int k = 0; k < ROVER_PHASES; k++)
        for (int j = 0; j < 3; j++) out->mean[k][j] /= out->baseline[j];
    for (int v = 0; v < 3; v++) {
        merge_halves(out, 1 + 5 * v, out->climb[v]);
        merge_halves(out, 3 + 5 * v, out->descent[v]);
    }

    const double hi = 1.0 + th.jump, lo = 1.0 - th.drop, up = 1.0 + th.drop;
    const double* fc = out->climb[ROVER_FRONT];
    out->pattern[0] = fc[ROVER_FRONT] > hi && fc[ROVER_MIDDLE] < lo;
    snprintf(out->why[0], sizeof out->why[0], "climb: front %.2f x, middle %.2f x", fc[ROVER_FRONT], fc[ROVER_MIDDLE]);

    const double* mc = out->climb[ROVER_MIDDLE];
    const double* md = out->descent[ROVER_MIDDLE];
    const double fr = fabs(mc[ROVER_FRONT] - mc[ROVER_REAR]) / (0.5 * (mc[ROVER_FRONT] + mc[ROVER_REAR]));
    out->pattern[1] = mc[ROVER_MIDDLE] > hi && fr <= th.equal && md[ROVER_MIDDLE] < lo && md[ROVER_FRONT] > up &&
                      md[ROVER_REAR] > up;
    snprintf(out->why[1], sizeof out->why[1],
             "climb: middle %.2f x, front %.2f x, rear %.2f x (differ by %.0f %%); descent: middle %.2f x, front "
             "%.2f x, rear %.2f x",
             mc[ROVER_MIDDLE], mc[ROVER_FRONT], mc[ROVER_REAR], 100.0 * fr, md[ROVER_MIDDLE], md[ROVER_FRONT],
             md[ROVER_REAR]);

    const double m1 = out->mean[11][ROVER_MIDDLE], m2 = out->mean[12][ROVER_MIDDLE];
    const double* rd = out->descent[ROVER_REAR];
    out->pattern[2] = m2 < m1 && rd[ROVER_REAR] < lo && rd[ROVER_MIDDLE] > hi;
    snprintf(out->why[2], sizeof out->why[2], "climb: middle %.2f then %.2f x; descent: rear %.2f x, middle %.2f x", m1,
             m2, rd[ROVER_REAR], rd[ROVER_MIDDLE]);

    int found = 0;
    for (int v = 0; v < 3; v++) found += out->pattern[v];
    return found;
}
