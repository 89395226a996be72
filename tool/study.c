/* Step-size studies (study.h): judging, summary, table and plots, shared by
 * `dvi study` and bench/bench_dvi_vs_dem. */
#include "study.h"

#include <dvi/output.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool same_modulus(double a, double b)
{
    if (isnan(a) || isnan(b)) return isnan(a) && isnan(b);
    return fabs(a - b) <= 1e-12 * fmax(fabs(a), fabs(b));
}

bool study_same_series(const study_run* a, const study_run* b)
{
    return strcmp(a->method, b->method) == 0 && same_modulus(a->young_modulus, b->young_modulus);
}

void study_series_name(const study_run* r, char* out, size_t size)
{
    if (isnan(r->young_modulus)) snprintf(out, size, "%s", r->method);
    else snprintf(out, size, "%s E=%.3g Pa", r->method, r->young_modulus);
}

void study_judge(const study_criteria* c, study_run* runs, int n)
{
    for (int i = 0; i < n; i++) {
        runs[i].reference = false;
        runs[i].error = NAN;
    }
    for (int i = 0; i < n; i++) {
        study_run* r = &runs[i];
        bool overlap_ok = r->penetration_fraction < c->overlap_fraction;
        /* the reference of r's series: its finest stable run (whatever its overlap: a soft
         * material's overlap is its own, and the observable still converges in the step) */
        int ref = -1;
        for (int j = 0; j < n; j++) {
            const study_run* q = &runs[j];
            if (!study_same_series(q, r) || q->status != STUDY_STABLE || q->not_converged_steps > 0) continue;
            if (ref < 0 || q->dt < runs[ref].dt) ref = j;
        }
        if (ref == i) r->reference = true;
        if (c->have_observable && ref >= 0 && r->status == STUDY_STABLE && isfinite(r->observable) &&
            isfinite(runs[ref].observable)) {
            double d = fabs(r->observable - runs[ref].observable);
            if (c->relative) d = runs[ref].observable != 0 ? d / fabs(runs[ref].observable) : (d == 0 ? 0 : INFINITY);
            r->error = d;
        }
        r->acceptable = false;
        if (r->status != STUDY_STABLE) continue; /* the reason is the run's */
        if (r->not_converged_steps > 0) { /* its steps' answers are not the method's */
            snprintf(r->reason, sizeof r->reason, "solver: %lld steps not converged", r->not_converged_steps);
            continue;
        }
        if (!overlap_ok) {
            snprintf(r->reason, sizeof r->reason, "overlap: %.3g of the smallest shape (limit %.3g)",
                     r->penetration_fraction, c->overlap_fraction);
            continue;
        }
        if (c->have_observable) {
            if (!isfinite(r->observable)) {
                snprintf(r->reason, sizeof r->reason, "observable: no value");
                continue;
            }
            if (!(r->error <= c->tolerance)) {
                snprintf(r->reason, sizeof r->reason, "observable: %s %.3g from the finest run's %.6g (tolerance %.3g)",
                         c->relative ? "relative error" : "error", r->error, runs[ref].observable, c->tolerance);
                continue;
            }
        }
        r->reason[0] = '\0';
        r->acceptable = true;
    }
}

int study_largest_acceptable(const double* dt, const bool* ok, int n)
{
    int best = -1;
    for (int i = 0; i < n; i++) {
        if (!ok[i]) continue;
        bool below_ok = true;
        for (int j = 0; j < n; j++)
            if (dt[j] < dt[i] && !ok[j]) below_ok = false;
        if (below_ok && (best < 0 || dt[i] > dt[best])) best = i;
    }
    return best;
}

int study_summarise(const study_run* runs, int n, study_best* best)
{
    int ns = 0;
    double* dt = malloc((size_t)(n > 0 ? n : 1) * sizeof *dt);
    bool* ok = malloc((size_t)(n > 0 ? n : 1) * sizeof *ok);
    int* idx = malloc((size_t)(n > 0 ? n : 1) * sizeof *idx);
    if (!dt || !ok || !idx) {
        free(dt);
        free(ok);
        free(idx);
        return 0;
    }
    for (int i = 0; i < n; i++) {
        bool seen = false;
        for (int k = 0; k < ns; k++)
            if (study_same_series(&runs[best[k].first], &runs[i])) seen = true;
        if (seen) continue;
        int m = 0;
        for (int j = 0; j < n; j++)
            if (study_same_series(&runs[j], &runs[i])) {
                dt[m] = runs[j].dt;
                ok[m] = runs[j].acceptable;
                idx[m++] = j;
            }
        int b = study_largest_acceptable(dt, ok, m);
        best[ns].first = i;
        best[ns].best = b >= 0 ? idx[b] : -1;
        ns++;
    }
    free(dt);
    free(ok);
    free(idx);
    return ns;
}

static const char* status_name(study_status s)
{
    return s == STUDY_STABLE ? "stable" : s == STUDY_UNSTABLE ? "unstable" : "not_run";
}

static double per_sim(const study_run* r)
{
    return r->simulated_seconds > 0 ? r->wall_seconds / r->simulated_seconds : NAN;
}

static double cpu_per_sim(const study_run* r)
{
    return r->simulated_seconds > 0 ? r->cpu_seconds / r->simulated_seconds : NAN;
}

/* CSV cells: numbers as %.6g (nan when not finite), text quoted when it holds a comma or quote. */
static void csv_text(char* buf, size_t* len, size_t cap, const char* s)
{
    bool quote = strpbrk(s, ",\"\n") != NULL;
    if (quote && *len < cap) buf[(*len)++] = '"';
    for (const char* p = s; *p && *len + 2 < cap; p++) {
        if (*p == '"') buf[(*len)++] = '"';
        buf[(*len)++] = *p == '\n' ? ' ' : *p;
    }
    if (quote && *len < cap) buf[(*len)++] = '"';
}

dvi_status study_write_csv(const char* path, const study_run* runs, int n, char* msg, size_t msg_size)
{
    size_t cap = 512 + (size_t)n * 1024, len = 0;
    char* buf = malloc(cap);
    if (!buf) {
        snprintf(msg, msg_size, "%s: out of memory", path);
        return DVI_ERR_NOMEM;
    }
    len += (size_t)snprintf(buf, cap,
                            "method,dt [s],young_modulus [Pa],status,reason,not_converged_steps,max_penetration [m],"
                            "penetration_fraction,observable,error,wall_seconds [s],wall_per_simulated_second,cpu_seconds [s],"
                            "cpu_per_simulated_second,acceptable\n");
    for (int i = 0; i < n; i++) {
        const study_run* r = &runs[i];
        len += (size_t)snprintf(buf + len, cap - len, "%s,%.6g,%.6g,%s,", r->method, r->dt, r->young_modulus,
                                status_name(r->status));
        csv_text(buf, &len, cap, r->reason);
        len += (size_t)snprintf(buf + len, cap - len, ",%lld,%.6g,%.6g,%.10g,%.6g,%.6g,%.6g,%.6g,%.6g,%d\n",
                                r->not_converged_steps, r->max_penetration, r->penetration_fraction, r->observable, r->error, r->wall_seconds,
                                per_sim(r), r->cpu_seconds, cpu_per_sim(r), r->acceptable ? 1 : 0);
        if (len >= cap) len = cap - 1;
    }
    dvi_status rc = dvi_write_file_atomic(path, buf, len, msg, msg_size);
    free(buf);
    return rc;
}

static void json_row(dvi_json_writer* w, const study_run* r)
{
    dvi_json_begin_object(w);
    dvi_json_key_string(w, "method", r->method);
    dvi_json_key_number(w, "dt", r->dt);
    dvi_json_key_number(w, "young_modulus", r->young_modulus);
    dvi_json_key_string(w, "status", status_name(r->status));
    dvi_json_key_string(w, "reason", r->reason);
    dvi_json_key_int(w, "not_converged_steps", r->not_converged_steps);
    dvi_json_key_number(w, "max_penetration", r->max_penetration);
    dvi_json_key_number(w, "penetration_fraction", r->penetration_fraction);
    dvi_json_key_number(w, "observable", r->observable);
    dvi_json_key_number(w, "error", r->error);
    dvi_json_key_bool(w, "reference", r->reference);
    dvi_json_key_number(w, "wall_seconds", r->wall_seconds);
    dvi_json_key_number(w, "wall_per_simulated_second", per_sim(r));
    dvi_json_key_number(w, "cpu_seconds", r->cpu_seconds);
    dvi_json_key_number(w, "cpu_per_simulated_second", cpu_per_sim(r));
    dvi_json_key_bool(w, "acceptable", r->acceptable);
    dvi_json_end_object(w);
}

dvi_status study_write_json(const char* path, const study_table_info* info, const study_run* runs, int n, char* msg,
                            size_t msg_size)
{
    dvi_json_writer* w = NULL;
    study_best* best = malloc((size_t)(n > 0 ? n : 1) * sizeof *best);
    if (!best || dvi_json_writer_open_buffer(&w) != 0) {
        free(best);
        snprintf(msg, msg_size, "%s: out of memory", path);
        return DVI_ERR_NOMEM;
    }
    const study_criteria* c = info->criteria;
    dvi_json_begin_object(w);
    dvi_json_key_string(w, "scene", info->scene);
    dvi_json_key_string(w, "scene_name", info->scene_name);
    dvi_json_key_number(w, "duration", info->duration);
    dvi_json_key(w, "criteria");
    dvi_json_begin_object(w);
    dvi_json_key_number(w, "overlap_fraction", c->overlap_fraction);
    dvi_json_key_string(w, "observable", info->observable);
    if (c->have_observable) {
        dvi_json_key_number(w, "tolerance", c->tolerance);
        dvi_json_key_string(w, "tolerance_kind", c->relative ? "relative" : "absolute");
    }
    dvi_json_end_object(w);
    if (info->ladders) {
        dvi_json_key(w, "ladders");
        dvi_json_begin_array(w);
        for (int k = 0; k < info->ladder_count; k++) {
            const study_ladder* l = &info->ladders[k];
            dvi_json_begin_object(w);
            dvi_json_key_string(w, "method", l->method);
            dvi_json_key(w, "dts");
            dvi_json_begin_array_inline(w);
            for (int i = 0; i < l->count; i++) dvi_json_number(w, l->dts[i]);
            dvi_json_end_array(w);
            dvi_json_key_string(w, "origin", l->origin);
            dvi_json_end_object(w);
        }
        dvi_json_end_array(w);
    }
    dvi_json_key(w, "runs");
    dvi_json_begin_array(w);
    for (int i = 0; i < n; i++) json_row(w, &runs[i]);
    dvi_json_end_array(w);
    int ns = study_summarise(runs, n, best);
    dvi_json_key(w, "largest_acceptable");
    dvi_json_begin_array(w);
    for (int k = 0; k < ns; k++) {
        const study_run* f = &runs[best[k].first];
        const study_run* b = best[k].best >= 0 ? &runs[best[k].best] : NULL;
        dvi_json_begin_object(w);
        dvi_json_key_string(w, "method", f->method);
        dvi_json_key_number(w, "young_modulus", f->young_modulus);
        dvi_json_key_number(w, "dt", b ? b->dt : NAN);
        dvi_json_key_number(w, "wall_per_simulated_second", b ? per_sim(b) : NAN);
        dvi_json_key_number(w, "cpu_per_simulated_second", b ? cpu_per_sim(b) : NAN);
        dvi_json_key_number(w, "error", b ? b->error : NAN);
        dvi_json_key_number(w, "penetration_fraction", b ? b->penetration_fraction : NAN);
        dvi_json_end_object(w);
    }
    dvi_json_end_array(w);
    dvi_json_end_object(w);
    dvi_status rc = dvi_json_writer_finish(w, msg, msg_size);
    size_t size = 0;
    const char* text = rc == DVI_OK ? dvi_json_writer_buffer(w, &size) : NULL;
    if (rc == 0) rc = dvi_write_file_atomic(path, text, size, msg, msg_size);
    dvi_json_writer_free(w);
    free(best);
    return rc;
}

dvi_status study_write_svg(const char* path, const study_table_info* info, const study_run* runs, int n, char* msg,
                           size_t msg_size)
{
    study_best* best = malloc((size_t)(n > 0 ? n : 1) * sizeof *best);
    int ns = best ? study_summarise(runs, n, best) : 0;
    dvi_svg_xy_series* ser = calloc((size_t)(3 * ns + 1), sizeof *ser);
    double* xs = malloc((size_t)(4 * n + 1) * sizeof *xs);
    bool* fill = malloc((size_t)(n + 1) * sizeof *fill);
    char(*names)[96] = calloc((size_t)(ns + 1), sizeof *names);
    dvi_status rc = DVI_ERR_NOMEM;
    if (!best || !ser || !xs || !fill || !names) {
        snprintf(msg, msg_size, "%s: out of memory", path);
        goto done;
    }
    /* per series, its runs sorted by dt (descending): x = cost, y = error; x2 = dt, y2 = overlap */
    double *cost = xs, *err = xs + n, *dtv = xs + 2 * n, *cpu = xs + 3 * n;
    double* pen = malloc((size_t)(n + 1) * sizeof *pen);
    if (!pen) {
        snprintf(msg, msg_size, "%s: out of memory", path);
        goto done;
    }
    int m = 0;
    for (int k = 0; k < ns; k++) {
        int start = m;
        for (int i = 0; i < n; i++)
            if (study_same_series(&runs[i], &runs[best[k].first])) {
                int j = m++;
                while (j > start && runs[i].dt > dtv[j - 1]) { /* insertion by dt, largest first */
                    cost[j] = cost[j - 1], err[j] = err[j - 1], dtv[j] = dtv[j - 1], pen[j] = pen[j - 1];
                    cpu[j] = cpu[j - 1];
                    fill[j] = fill[j - 1];
                    j--;
                }
                const study_run* r = &runs[i];
                bool drawn = r->status == STUDY_STABLE;
                cost[j] = drawn ? per_sim(r) : NAN;
                cpu[j] = drawn ? cpu_per_sim(r) : NAN;
                err[j] = drawn ? r->error : NAN;
                dtv[j] = r->dt;
                pen[j] = drawn ? r->penetration_fraction : NAN;
                fill[j] = r->acceptable;
            }
        study_series_name(&runs[best[k].first], names[k], sizeof names[k]);
        ser[k] = (dvi_svg_xy_series){names[k], m - start, cost + start, err + start, fill + start, true};
        ser[ns + k] = (dvi_svg_xy_series){names[k], m - start, dtv + start, pen + start, fill + start, true};
        ser[2 * ns + k] = (dvi_svg_xy_series){names[k], m - start, cpu + start, err + start, fill + start, true};
    }
    const study_criteria* c = info->criteria;
    dvi_svg_xy_panel p[3] = {dvi_svg_xy_default_panel(), dvi_svg_xy_default_panel(), dvi_svg_xy_default_panel()};
    char ylab[256], t0[256];
    snprintf(t0, sizeof t0, "error of %s against cost", info->observable ? info->observable : "(no observable)");
    p[0].title = t0;
    p[0].x_label = "wall seconds per simulated second";
    snprintf(ylab, sizeof ylab, "%s error (vs the finest run of the series)", c->relative ? "relative" : "absolute");
    p[0].y_label = ylab;
    p[0].series_count = ns;
    p[0].series = ser;
    p[0].hline = c->have_observable ? c->tolerance : NAN;
    p[0].hline_label = "tolerance";
    p[0].legend_note = "filled: acceptable";
    p[0].zero_at_bottom = true;
    /* the same against CPU time: on a machine shared with other work, wall time also counts the waiting */
    p[2] = p[0];
    p[2].title = "the same against CPU time";
    p[2].x_label = "CPU seconds per simulated second";
    p[2].series = ser + 2 * ns;
    p[1].title = "largest penetration / overlap against the step";
    p[1].x_label = "dt (s)";
    p[1].y_label = "penetration / smallest shape size";
    p[1].series_count = ns;
    p[1].series = ser + ns;
    p[1].hline = c->overlap_fraction;
    p[1].hline_label = "limit";
    p[1].legend_note = "filled: acceptable";
    char title[512];
    snprintf(title, sizeof title, "dvi study: %s (%.3g s simulated)", info->scene_name ? info->scene_name : "",
             info->duration);
    rc = dvi_svg_xy_plot(path, title,
                         "Unstable runs are not drawn. The finest stable run of each series is its reference: "
                         "error 0, a triangle on the bottom edge.",
                         3, (const dvi_svg_xy_panel[]){p[0], p[2], p[1]}, 2, msg, msg_size);
    free(pen);
done:
    free(best);
    free(ser);
    free(xs);
    free(fill);
    free(names);
    return rc;
}

void study_print_summary(FILE* f, const study_run* runs, int n)
{
    study_best* best = malloc((size_t)(n > 0 ? n : 1) * sizeof *best);
    if (!best) return;
    int ns = study_summarise(runs, n, best);
    for (int k = 0; k < ns; k++) {
        char name[96];
        study_series_name(&runs[best[k].first], name, sizeof name);
        if (best[k].best < 0) {
            fprintf(f, "  %-22s no acceptable step\n", name);
            continue;
        }
        const study_run* b = &runs[best[k].best];
        fprintf(f, "  %-22s largest acceptable step %.3g s: %.3g wall s (%.3g CPU s) per simulated s\n", name,
                b->dt, per_sim(b), cpu_per_sim(b));
    }
    free(best);
}
