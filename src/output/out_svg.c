/* Output writers (dvi/output.h): SVG plots of CSV time series. */
#include "out_internal.h"

#include "alloc.h"
#include "regular_file.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

/* ==== SVG plots ========================================================== */

dvi_svg_options dvi_svg_default_options(void)
{
    dvi_svg_options o;
    o.width = 900;
    o.panel_height = 220;
    o.log = -1;
    o.columns = NULL;
    return o;
}

/* Okabe–Ito palette, most distinct first (yellow last: weak on white). */
static const char* const palette[] = {"#0072B2", "#D55E00", "#009E73", "#E69F00",
                                      "#CC79A7", "#56B4E9", "#000000", "#F0E442"};
static const char* const dashes[] = {NULL, "7 3", "2 2.5", "9 3 2 3"};

/* Series j of a panel: colour j mod 8 and a dash pattern that changes with
 * j too, so that two series on each other both show (solid under dashed). */
static const char* series_dash(int style) { return dashes[(style + style / 8) % 4]; }

#define FONT_FAMILY "system-ui, -apple-system, &apos;Segoe UI&apos;, Helvetica, Arial, &apos;DejaVu Sans&apos;, sans-serif"

typedef struct pt {
    float x, y; /* pixels; x = NaN marks a break */
} pt;

typedef struct sample {
    long long row;
    double x, y;
} sample;

typedef struct series {
    char* name;   /* in the legend: the column's name, or (overlays) the run's, with the column's when several */
    char* column; /* the column's name */
    char* unit;
    int file;  /* index of its CSV file */
    int col;   /* column in the CSV */
    int panel;
    int style; /* index within its panel: colour and dash */
    double lo, hi;
    double pos_lo;      /* smallest positive value */
    long long finite, nonfinite, positive;
    int drawn;          /* in opt->columns (or all are) */
    /* decimation state (pass 2) */
    int bucket;
    int agg_n;
    sample first, mn, mx, last;
    int breaks_in_bucket;
    int last_was_nan;
    pt* pts;
    size_t npts, cappts;
    int oom;
} series;

typedef struct panel {
    char* unit;
    int* members;
    int n;
    double lo, hi;                 /* finite data range */
    int has_data;
    double axis_lo, axis_hi;       /* axis range (multiples of the tick step) */
    int tick_m, tick_k;            /* step = m × 10^k */
    long long tick_i0, tick_i1;    /* ticks i·step, i in [i0, i1] */
    double top, height;            /* plot area, px */
    int log;                       /* axis in log10 of the values (ranges and ticks too) */
} panel;

/* The largest magnitude a plot draws: the axes' ranges, steps and ticks
 * stay finite below it (plot_check_row refuses data beyond it). */
#define PLOT_MAX_ABS 1e300

static double pow10i(int k)
{
    /* exact for |k| <= 22 */
    return pow(10.0, (double)k);
}

/* A tick value i·m·10^k, computed so that it is the double nearest the
 * decimal number (no accumulated noise). */
static double tick_value(long long i, int m, int k)
{
    double im = (double)(i * m);
    if (k >= 0) return im * pow10i(k);
    if (k >= -300) return im / pow10i(-k);
    return im * pow10i(k);
}

/* Chooses a 1-2-5 step giving about `target` intervals over [lo, hi]. */
static void nice_step(double lo, double hi, int target, int* m_out, int* k_out)
{
    double span = hi - lo;
    double raw = span / (double)target;
    if (!(raw > 0) || !isfinite(raw)) raw = 1;
    int k = (int)floor(log10(raw));
    double norm = raw / pow10i(k);
    int m;
    if (norm <= 1.0 + 1e-9) m = 1;
    else if (norm <= 2.0 + 1e-9) m = 2;
    else if (norm <= 5.0 + 1e-9) m = 5;
    else {
        m = 1;
        k++;
    }
    *m_out = m;
    *k_out = k;
}

/* Widens [lo, hi] to something drawable: finite, clamped, not degenerate. */
static void sane_range(double* lo, double* hi)
{
    const double big = 1e300;
    if (!isfinite(*lo) || !isfinite(*hi) || *lo > *hi) {
        *lo = 0;
        *hi = 1;
    }
    if (*lo < -big) *lo = -big;
    if (*hi > big) *hi = big;
    double mag = fmax(fabs(*lo), fabs(*hi));
    double min_span = mag * 1e-9;
    if (*hi - *lo <= min_span || *hi - *lo < 1e-300) {
        double mid = 0.5 * (*lo + *hi);
        double d = mag > 0 ? fmax(0.1 * mag, 1e-300) : 1.0;
        *lo = mid - d;
        *hi = mid + d;
    }
}

static void axis_ticks(panel* p, double lo, double hi, int target)
{
    sane_range(&lo, &hi);
    nice_step(lo, hi, target, &p->tick_m, &p->tick_k);
    double step = tick_value(1, p->tick_m, p->tick_k);
    p->tick_i0 = (long long)floor(lo / step);
    p->tick_i1 = (long long)ceil(hi / step);
    /* guard against rounding in the divisions */
    while (tick_value(p->tick_i0, p->tick_m, p->tick_k) > lo) p->tick_i0--;
    while (tick_value(p->tick_i1, p->tick_m, p->tick_k) < hi) p->tick_i1++;
    if (p->tick_i1 <= p->tick_i0) p->tick_i1 = p->tick_i0 + 1;
    p->axis_lo = tick_value(p->tick_i0, p->tick_m, p->tick_k);
    p->axis_hi = tick_value(p->tick_i1, p->tick_m, p->tick_k);
}

/* Tick label: fixed notation for moderate magnitudes, m×10ⁿ otherwise, with
 * just the digits the step needs; a true minus sign. */
static void format_tick(char* out, size_t size, double v, int k, double maxabs)
{
    if (v == 0) {
        snprintf(out, size, "0");
        return;
    }
    if (!isfinite(v)) { /* not reached: the values are at most PLOT_MAX_ABS */
        snprintf(out, size, "%s", v > 0 ? "\xE2\x88\x9E" : "\xE2\x88\x92\xE2\x88\x9E");
        return;
    }
    char num[64];
    const char* minus = v < 0 ? "\xE2\x88\x92" : "";
    double a = fabs(v);
    if (maxabs >= 1e-3 && maxabs < 1e5) {
        int dec = k < 0 ? -k : 0;
        snprintf(num, sizeof num, "%.*f", dec, a);
        snprintf(out, size, "%s%s", minus, num);
        return;
    }
    snprintf(num, sizeof num, "%.6e", a);
    int e = atoi(strchr(num, 'e') + 1);
    int digits = e - k;
    if (digits < 0) digits = 0;
    if (digits > 15) digits = 15;
    snprintf(num, sizeof num, "%.*e", digits, a);
    char* ep = strchr(num, 'e');
    e = atoi(ep + 1);
    *ep = '\0';
    if (strchr(num, '.')) {
        size_t n = strlen(num);
        while (n > 0 && num[n - 1] == '0') num[--n] = '\0';
        if (n > 0 && num[n - 1] == '.') num[--n] = '\0';
    }
    static const char* const sup[] = {"\xE2\x81\xB0", "\xC2\xB9", "\xC2\xB2", "\xC2\xB3", "\xE2\x81\xB4",
                                      "\xE2\x81\xB5", "\xE2\x81\xB6", "\xE2\x81\xB7", "\xE2\x81\xB8", "\xE2\x81\xB9"};
    char exp[64] = "";
    size_t el = 0;
    if (e < 0) {
        el += (size_t)snprintf(exp + el, sizeof exp - el, "\xE2\x81\xBB"); /* superscript minus */
        e = -e;
    }
    char ed[16];
    snprintf(ed, sizeof ed, "%d", e);
    for (const char* d = ed; *d && el + 4 < sizeof exp; d++) el += (size_t)snprintf(exp + el, sizeof exp - el, "%s", sup[*d - '0']);
    snprintf(out, size, "%s%s\xC3\x97" "10%s", minus, num, exp);
}

/* Ticks of a log axis over [lo, hi] (log10 of the values): whole decades,
 * one or more apart. */
static void axis_ticks_log(panel* p, double lo, double hi, int target)
{
    double l = floor(lo), h = ceil(hi);
    if (!isfinite(l) || !isfinite(h)) l = 0, h = 1;
    if (h <= l) h = l + 1;
    const long long step = (long long)ceil((h - l) / (double)target);
    p->tick_m = (int)(step > 0 ? step : 1);
    p->tick_k = 0;
    p->tick_i0 = (long long)floor(l / p->tick_m);
    p->tick_i1 = (long long)ceil(h / p->tick_m);
    if (p->tick_i1 <= p->tick_i0) p->tick_i1 = p->tick_i0 + 1;
    p->axis_lo = tick_value(p->tick_i0, p->tick_m, 0);
    p->axis_hi = tick_value(p->tick_i1, p->tick_m, 0);
}

/* The label of tick i of panel p: its value, or on a log axis the power of
 * ten (1×10⁻⁶; 0.01 … 1000 when every tick lies in [1e-3, 1e5)). */
static void y_tick_label(char* out, size_t size, const panel* p, long long i, double maxabs)
{
    const double v = tick_value(i, p->tick_m, p->tick_k);
    if (!p->log) {
        format_tick(out, size, v, p->tick_k, maxabs);
        return;
    }
    const int e = (int)v;
    const bool fixed = p->axis_lo >= -3 && p->axis_hi <= 4;
    if (fixed) {
        format_tick(out, size, pow(10.0, e), e, pow(10.0, p->axis_hi));
        return;
    }
    /* 10⁻⁶ written from the exponent: a decade tick beyond the doubles'
     * range (10³⁶⁰ above data near 1e300, 10⁻³⁶⁰ under subnormal values) is
     * still labelled by its power */
    static const char* const sup[] = {"\xE2\x81\xB0", "\xC2\xB9", "\xC2\xB2", "\xC2\xB3", "\xE2\x81\xB4",
                                      "\xE2\x81\xB5", "\xE2\x81\xB6", "\xE2\x81\xB7", "\xE2\x81\xB8", "\xE2\x81\xB9"};
    char ed[16];
    snprintf(ed, sizeof ed, "%d", e < 0 ? -e : e);
    size_t n = (size_t)snprintf(out, size, "10%s", e < 0 ? "\xE2\x81\xBB" : "");
    for (const char* d = ed; *d && n + 4 < size; d++) n += (size_t)snprintf(out + n, size - n, "%s", sup[*d - '0']);
}

/* Whether name is one of the comma-separated names of list. */
static int column_listed(const char* list, const char* name)
{
    const size_t n = strlen(name);
    for (const char* c = list; *c;) {
        const char* e = strchr(c, ',');
        const size_t len = e ? (size_t)(e - c) : strlen(c);
        if (len == n && strncmp(c, name, n) == 0) return 1;
        c += len + (e != NULL);
    }
    return 0;
}

/* Splits "name [unit]" into malloc'd name and unit ("" if none). */
static int split_title(const char* field, char** name, char** unit)
{
    size_t n = strlen(field);
    const char* open = NULL;
    if (n >= 2 && field[n - 1] == ']') open = strrchr(field, '[');
    if (open) {
        size_t nl = (size_t)(open - field);
        while (nl > 0 && field[nl - 1] == ' ') nl--;
        *name = malloc(nl + 1);
        size_t ul = (size_t)(field + n - 1 - (open + 1));
        *unit = malloc(ul + 1);
        if (!*name || !*unit) return -1;
        memcpy(*name, field, nl);
        (*name)[nl] = '\0';
        memcpy(*unit, open + 1, ul);
        (*unit)[ul] = '\0';
        if (nl == 0) {
            free(*name);
            *name = out_strdup(field);
            if (!*name) return -1;
        }
    } else {
        *name = out_strdup(field);
        *unit = out_strdup("");
        if (!*name || !*unit) return -1;
    }
    return 0;
}

static void series_push(series* s, float x, float y)
{
    if (s->oom) return;
    void* p = s->pts;
    if (!base_mem_grow(NULL, &p, &s->cappts, s->npts + 1, sizeof *s->pts, 256)) {
        s->oom = 1;
        return;
    }
    s->pts = p;
    s->pts[s->npts].x = x;
    s->pts[s->npts].y = y;
    s->npts++;
}

static void series_break(series* s)
{
    if (s->npts > 0 && !isnan(s->pts[s->npts - 1].x)) series_push(s, NAN, NAN);
}

typedef struct mapping {
    double x0, x1, px0, pw; /* x axis */
} mapping;

static float map_x(const mapping* m, double x)
{
    double t = (x - m->x0) / (m->x1 - m->x0);
    if (!(t >= 0)) t = 0;
    if (t > 1) t = 1;
    return (float)(m->px0 + t * m->pw);
}

static float map_y(const panel* p, double y)
{
    double t = (p->axis_hi - y) / (p->axis_hi - p->axis_lo);
    if (!(t >= 0)) t = 0;
    if (t > 1) t = 1;
    return (float)(p->top + t * p->height);
}

/* Emits the aggregated samples of the current pixel column in row order. */
static void series_flush(series* s, const mapping* m, const panel* p)
{
    if (s->agg_n > 0) {
        sample c[4] = {s->first, s->mn, s->mx, s->last};
        /* sort 4 by row (insertion) */
        for (int i = 1; i < 4; i++)
            for (int j = i; j > 0 && c[j].row < c[j - 1].row; j--) {
                sample t = c[j];
                c[j] = c[j - 1];
                c[j - 1] = t;
            }
        for (int i = 0; i < 4; i++) {
            if (i > 0 && c[i].row == c[i - 1].row) continue;
            series_push(s, map_x(m, c[i].x), map_y(p, c[i].y));
        }
        s->agg_n = 0;
    }
    if (s->last_was_nan) series_break(s);
}

static void series_add(series* s, const mapping* m, const panel* p, int bucket, long long row, double x, double y)
{
    if (bucket != s->bucket) {
        series_flush(s, m, p);
        s->bucket = bucket;
        s->breaks_in_bucket = 0;
    }
    if (!isfinite(y)) {
        /* At most one break per pixel column: narrower gaps would not show. */
        if (s->breaks_in_bucket == 0) {
            s->last_was_nan = 0;
            series_flush(s, m, p);
            series_break(s);
            s->breaks_in_bucket = 1;
        }
        s->last_was_nan = 1;
        return;
    }
    s->last_was_nan = 0;
    sample c = {row, x, y};
    if (s->agg_n == 0) s->first = s->mn = s->mx = c;
    else {
        if (y < s->mn.y) s->mn = c;
        if (y > s->mx.y) s->mx = c;
    }
    s->last = c;
    s->agg_n++;
}

/* Counts code points of a UTF-8 string. */
static size_t utf8_chars(const char* s)
{
    size_t n = 0;
    for (; *s; s++) n += ((unsigned char)*s & 0xC0) != 0x80;
    return n;
}

/* Copies at most max_chars code points, with an ellipsis if cut. */
static void truncate_utf8(char* out, size_t size, const char* s, size_t max_chars)
{
    if (utf8_chars(s) <= max_chars) {
        snprintf(out, size, "%s", s);
        return;
    }
    size_t k = 0, chars = 0;
    const char* p = s;
    while (*p && k + 8 < size) {
        if (((unsigned char)*p & 0xC0) != 0x80) {
            if (chars == max_chars - 1) break;
            chars++;
        }
        out[k++] = *p++;
    }
    memcpy(out + k, "\xE2\x80\xA6", 4); /* … */
}

static const char* base_name(const char* path)
{
    const char* s = strrchr(path, '/');
    return s ? s + 1 : path;
}

/* One CSV file of a plot (several when runs are overlaid). */
typedef struct plot_file {
    const char* path;
    const char* label;  /* the run's name in the legend (overlays) */
    FILE* f;
    int ncols;
    char** fields;
    double* vals;       /* [ncols] */
    int first, nser;    /* its series: ser[first, first + nser) */
} plot_file;

typedef struct plot {
    plot_file* files;
    int nfiles;
    series* ser;
    int nser;
    panel* pan;
    int npan;
    char* line;
    size_t cap;
    int total; /* the series of all files (the panels' member arrays hold as many) */
} plot;

static void plot_free(plot* P)
{
    for (int k = 0; k < P->nfiles; k++) {
        plot_file* F = &P->files[k];
        for (int i = 0; i < F->ncols; i++) free(F->fields ? F->fields[i] : NULL);
        free(F->fields);
        free(F->vals);
        if (F->f) fclose(F->f);
    }
    free(P->files);
    for (int i = 0; i < P->nser; i++) {
        free(P->ser[i].name);
        free(P->ser[i].column);
        free(P->ser[i].unit);
        free(P->ser[i].pts);
    }
    free(P->ser);
    for (int i = 0; i < P->npan; i++) {
        free(P->pan[i].unit);
        free(P->pan[i].members);
    }
    free(P->pan);
    free(P->line);
}

/* Writes the polylines of one series: one per run of finite points. */
static void emit_series(out_sbuf* b, const series* s, const char* color, const char* dash)
{
    size_t i = 0;
    while (i < s->npts) {
        while (i < s->npts && isnan(s->pts[i].x)) i++;
        size_t j = i;
        while (j < s->npts && !isnan(s->pts[j].x)) j++;
        if (j > i) {
            out_sb_printf(b, "<polyline fill=\"none\" stroke=\"%s\"%s%s%s points=\"", color, dash ? " stroke-dasharray=\"" : "",
                      dash ? dash : "", dash ? "\"" : "");
            for (size_t k = i; k < j; k++) out_sb_printf(b, "%s%.1f,%.1f", k > i ? " " : "", s->pts[k].x, s->pts[k].y);
            if (j == i + 1) out_sb_printf(b, " %.1f,%.1f", s->pts[i].x, s->pts[i].y); /* a lone point: a dot */
            out_sb_puts(b, "\"/>\n");
        }
        i = j;
    }
}

static dvi_status plot_csvs(const char* const* csv_paths, const char* const* labels, int nfiles, const char* svg_path,
                            const char* title, const dvi_svg_options* opt, char* msg, size_t msg_size);

dvi_status dvi_svg_plot_csv(const char* csv_path, const char* svg_path, const char* title, char* msg, size_t msg_size)
{
    return dvi_svg_plot_csv_ex(csv_path, svg_path, title, NULL, msg, msg_size);
}

dvi_status dvi_svg_plot_csv_ex(const char* csv_path, const char* svg_path, const char* title, const dvi_svg_options* opt,
                               char* msg, size_t msg_size)
{
    if (!csv_path || !*csv_path) return out_fail_st(DVI_ERR_INVALID_ARG, msg, msg_size, "plot: no CSV path");
    return plot_csvs(&csv_path, NULL, 1, svg_path, title, opt, msg, msg_size);
}

dvi_status dvi_svg_plot_csv_overlay(const char* const* csv_paths, const char* const* labels, int count, const char* svg_path,
                                    const char* title, const dvi_svg_options* opt, char* msg, size_t msg_size)
{
    if (!csv_paths || count < 1) return out_fail_st(DVI_ERR_INVALID_ARG, msg, msg_size, "plot: no CSV path");
    for (int k = 0; k < count; k++)
        if (!csv_paths[k] || !*csv_paths[k]) return out_fail(msg, msg_size, "plot: CSV path %d is empty", k + 1);
    return plot_csvs(csv_paths, labels, count, svg_path, title, opt, msg, msg_size);
}

/* Whether the list names exactly one column. */
static int one_column(const char* list)
{
    return list && *list && !strchr(list, ',');
}

/* What the plot's geometry is once the CSVs are read: the page, the plot
 * area's columns, the x range and its ticks. */
typedef struct plot_frame {
    double W, left, right, plot_w, title_h, gap, bottom_h, entry_h;
    double H, last_bottom;
    long long rows, skipped;   /* rows with a finite x; rows without one */
    double x0, x1;             /* the x axis' range */
    panel xp;                  /* x axis: exact data range, ticks inside */
    mapping M;
} plot_frame;

/* Opens the CSVs and reads their headers (the x label from the first);
 * allocates the series and panels for all their columns. */
static dvi_status plot_open_files(plot* P, const char* const* csv_paths, const char* const* labels, int nfiles,
                                  char* xlabel, size_t xlabel_size, char* msg, size_t msg_size)
{
    ssize_t len = 0;
    P->files = calloc((size_t)nfiles, sizeof *P->files);
    if (!P->files) return out_fail(msg, msg_size, "%s: out of memory", csv_paths[0]);
    P->nfiles = nfiles;
    int total = 0; /* series of all files */
    for (int k = 0; k < nfiles; k++) {
        plot_file* F = &P->files[k];
        F->path = csv_paths[k];
        F->label = labels && labels[k] && *labels[k] ? labels[k] : csv_paths[k];
        char why[160];
        F->f = base_open_regular(F->path, 0, NULL, why, sizeof why);
        if (!F->f) return out_fail(msg, msg_size, "%s: %s", F->path, why);
        len = getline(&P->line, &P->cap, F->f);
        if (len <= 0) return out_fail(msg, msg_size, "%s: empty file (no header line)", F->path);
        out_chomp(P->line, &len);
        if (len == 0) return out_fail(msg, msg_size, "%s: empty header line", F->path);
        if (out_csv_split_header(P->line, &F->fields, &F->ncols)) return out_fail(msg, msg_size, "%s: out of memory", F->path);
        F->vals = malloc((size_t)F->ncols * sizeof *F->vals);
        if (!F->vals) return out_fail(msg, msg_size, "%s: out of memory", F->path);
        F->first = total;
        F->nser = F->ncols - 1;
        total += F->nser;
        if (k == 0) {
            char *xname = NULL, *xunit = NULL;
            if (split_title(F->fields[0], &xname, &xunit)) {
                free(xname);
                free(xunit);
                return out_fail(msg, msg_size, "%s: out of memory", F->path);
            }
            if (*xunit) snprintf(xlabel, xlabel_size, "%s [%s]", xname, xunit);
            else snprintf(xlabel, xlabel_size, "%s", xname);
            free(xname);
            free(xunit);
        }
    }
    P->ser = calloc(total > 0 ? (size_t)total : 1, sizeof *P->ser);
    P->pan = calloc(total > 0 ? (size_t)total : 1, sizeof *P->pan);
    if (!P->ser || !P->pan) return out_fail(msg, msg_size, "%s: out of memory", csv_paths[0]);
    P->total = total;
    return DVI_OK;
}

/* The panel of series i (one per unit, in order of first appearance): a
 * column without a unit gets its own panel, as nothing says its values
 * compare with those of other columns (in an overlay, the same column of
 * every run shares one). */
static dvi_status plot_place_series(plot* P, int i, int overlay, const char* path, char* msg, size_t msg_size)
{
    series* s = &P->ser[i];
    int pi = 0;
    if (*s->unit)
        while (pi < P->npan && strcmp(P->pan[pi].unit, s->unit) != 0) pi++;
    else if (overlay) {
        pi = P->npan;
        for (int q = 0; q < P->npan; q++) {
            const series* m0 = &P->ser[P->pan[q].members[0]];
            if (!*P->pan[q].unit && strcmp(m0->column, s->column) == 0) pi = q;
        }
    } else pi = P->npan;
    if (pi == P->npan) {
        P->pan[pi].unit = out_strdup(s->unit);
        P->pan[pi].members = malloc((size_t)P->total * sizeof(int));
        if (!P->pan[pi].unit || !P->pan[pi].members) return out_fail(msg, msg_size, "%s: out of memory", path);
        P->npan++;
    }
    s->panel = pi;
    s->style = P->pan[pi].n;
    P->pan[pi].members[P->pan[pi].n++] = i;
    return DVI_OK;
}

/* Every column o->columns lists must be one of file F's; DVI_ERR_INVALID_ARG if not. */
static dvi_status plot_check_columns(const plot* P, const plot_file* F, const char* columns, char* msg, size_t msg_size)
{
    const char* c = columns;
    while (*c) {
        const char* e = strchr(c, ',');
        size_t n = e ? (size_t)(e - c) : strlen(c);
        int found = n == 0;
        for (int i = F->first; i < F->first + F->nser && !found; i++)
            found = strlen(P->ser[i].column) == n && strncmp(P->ser[i].column, c, n) == 0;
        if (!found) {
            char cols[1024];
            size_t l = 0;
            cols[0] = '\0';
            for (int q = 0; q < F->ncols && l + 1 < sizeof cols; q++)
                l += (size_t)snprintf(cols + l, sizeof cols - l, "%s%s", q ? "," : "", F->fields[q]);
            return out_fail_st(DVI_ERR_INVALID_ARG, msg, msg_size, "%s: no column '%.*s' (its columns: %s)", F->path,
                               (int)n, c, cols);
        }
        c += n + (e != NULL);
    }
    return DVI_OK;
}

/* The series of every file's columns, their legend names, and the panels
 * of those drawn. */
static dvi_status plot_make_series(plot* P, const dvi_svg_options* o, int overlay, char* msg, size_t msg_size)
{
    for (int k = 0; k < P->nfiles; k++) {
        const plot_file* F = &P->files[k];
        for (int c = 1; c < F->ncols; c++) {
            const int i = P->nser++;
            series* s = &P->ser[i];
            s->file = k;
            s->col = c;
            s->lo = INFINITY;
            s->hi = -INFINITY;
            s->pos_lo = INFINITY;
            s->bucket = -1;
            s->panel = -1;
            if (split_title(F->fields[c], &s->column, &s->unit)) return out_fail(msg, msg_size, "%s: out of memory", F->path);
            s->drawn = !o->columns || !*o->columns || column_listed(o->columns, s->column);
            /* the legend: the column; in an overlay the run, and the column too unless only one is drawn */
            size_t nl = strlen(s->column) + strlen(F->label) + 3;
            s->name = malloc(nl);
            if (!s->name) return out_fail(msg, msg_size, "%s: out of memory", F->path);
            if (!overlay) snprintf(s->name, nl, "%s", s->column);
            else if (one_column(o->columns)) snprintf(s->name, nl, "%s", F->label);
            else snprintf(s->name, nl, "%s: %s", F->label, s->column);
            if (!s->drawn) continue;
            dvi_status st = plot_place_series(P, i, overlay, F->path, msg, msg_size);
            if (st != DVI_OK) return st;
        }
        if (o->columns && *o->columns) { /* every listed column must exist, in every file */
            dvi_status st = plot_check_columns(P, F, o->columns, msg, msg_size);
            if (st != DVI_OK) return st;
        }
    }
    return DVI_OK;
}

/* Refuses a data row (line `lineno` of F, parsed into F->vals) holding
 * what a plot cannot draw truthfully: a hexadecimal number (strtod reads
 * 0x10 as 16; no CSV the library writes has one, so it is not data), or a
 * number beyond ±PLOT_MAX_ABS (1e308 overflows the axis' arithmetic; a
 * number overflowing a double, 1e400, is not an infinity either). The
 * message names the file, line and column. Non-numbers (nan, inf, empty,
 * text) stay gaps. */
static dvi_status plot_check_row(const plot_file* F, long long lineno, const char* line, char* msg, size_t msg_size)
{
    const char* p = line;
    for (int col = 1;; col++) {
        const char* f = p; /* the field's text */
        while (*f == ' ' || *f == '\t' || *f == '"') f++;
        const char* q = f;
        if (*q == '+' || *q == '-') q++;
        const char* end = p;
        if (*p == '"') {
            for (end = p + 1; *end; end++)
                if (*end == '"') {
                    if (end[1] != '"') break;
                    end++;
                }
        }
        while (*end && *end != ',') end++;
        int width = (int)(end - f < 40 ? end - f : 40);
        while (width > 0 && (f[width - 1] == '"' || f[width - 1] == ' ' || f[width - 1] == '\t')) width--;
        if (q[0] == '0' && (q[1] == 'x' || q[1] == 'X'))
            return out_fail_st(DVI_ERR_PARSE, msg, msg_size, "%s:%lld:%d: '%.*s' is a hexadecimal number (data must be decimal)", F->path,
                            lineno, col, width, f);
        if (col <= F->ncols) {
            const double v = F->vals[col - 1];
            const bool overflow = isinf(v) && !memchr(f, 'i', (size_t)(end - f)) && !memchr(f, 'I', (size_t)(end - f));
            if ((isfinite(v) && fabs(v) > PLOT_MAX_ABS) || overflow)
                return out_fail_st(DVI_ERR_PARSE, msg, msg_size, "%s:%lld:%d: '%.*s' is beyond the range a plot draws (magnitude up to %g)",
                                F->path, lineno, col, width, f, PLOT_MAX_ABS);
        }
        if (*end != ',') break;
        p = end + 1;
    }
    return DVI_OK;
}

/* Pass 1 over the data rows: the x range and each series' ranges; a row
 * plot_check_row refuses ends the plot. */
static dvi_status plot_read_ranges(plot* P, plot_frame* fr, double* xlo, double* xhi, char* msg, size_t msg_size)
{
    ssize_t len;
    for (int k = 0; k < P->nfiles; k++) {
        plot_file* F = &P->files[k];
        long long lineno = 1; /* the header */
        while ((len = getline(&P->line, &P->cap, F->f)) >= 0) {
            lineno++;
            out_chomp(P->line, &len);
            out_csv_parse_row(P->line, F->vals, F->ncols);
            dvi_status st = plot_check_row(F, lineno, P->line, msg, msg_size);
            if (st != DVI_OK) return st;
            double x = F->vals[0];
            if (!isfinite(x)) {
                fr->skipped++;
                continue;
            }
            fr->rows++;
            if (x < *xlo) *xlo = x;
            if (x > *xhi) *xhi = x;
            for (int i = F->first; i < F->first + F->nser; i++) {
                series* s = &P->ser[i];
                double y = F->vals[s->col];
                if (isfinite(y)) {
                    s->finite++;
                    if (y < s->lo) s->lo = y;
                    if (y > s->hi) s->hi = y;
                    if (y > 0) {
                        s->positive++;
                        if (y < s->pos_lo) s->pos_lo = y;
                    }
                } else s->nonfinite++;
            }
        }
        if (ferror(F->f)) return out_fail(msg, msg_size, "%s: read error", F->path);
    }
    return DVI_OK;
}

/* Logarithmic axes where asked or where a panel's positive values span
 * three decades: the series' ranges become ranges of log10. */
static void plot_choose_log_axes(plot* P, int log)
{
    for (int pi = 0; pi < P->npan; pi++) {
        panel* p = &P->pan[pi];
        double pos_lo = INFINITY, hi = -INFINITY;
        long long finite = 0, positive = 0;
        for (int j = 0; j < p->n; j++) {
            const series* s = &P->ser[p->members[j]];
            pos_lo = fmin(pos_lo, s->pos_lo);
            if (s->positive) hi = fmax(hi, s->hi);
            finite += s->finite;
            positive += s->positive;
        }
        if (log == 0 || positive == 0) continue;
        if (log < 0 && !(hi >= 1e3 * pos_lo && 10 * (finite - positive) <= finite)) continue;
        p->log = 1;
        for (int j = 0; j < p->n; j++) {
            series* s = &P->ser[p->members[j]];
            s->finite = s->positive; /* what a log axis draws */
            if (s->positive) {
                s->lo = log10(s->pos_lo);
                s->hi = log10(s->hi);
            }
        }
    }
}

/* The page: the panels stacked under the title, their y ranges and ticks;
 * the x axis' range and ticks. */
static void plot_layout(plot* P, plot_frame* fr, const dvi_svg_options* o, double xlo, double xhi)
{
    fr->W = o->width;
    fr->left = 88;
    const double legend_w = 190;
    fr->right = fr->W - legend_w;
    fr->plot_w = fr->right - fr->left;
    fr->title_h = 48, fr->gap = 30, fr->bottom_h = 62, fr->entry_h = 18;
    plot_choose_log_axes(P, o->log);
    double y = fr->title_h;
    for (int pi = 0; pi < P->npan; pi++) {
        panel* p = &P->pan[pi];
        p->lo = INFINITY;
        p->hi = -INFINITY;
        for (int j = 0; j < p->n; j++) {
            series* s = &P->ser[p->members[j]];
            if (s->finite) {
                p->has_data = 1;
                p->lo = fmin(p->lo, s->lo);
                p->hi = fmax(p->hi, s->hi);
            }
        }
        double h = o->panel_height - fr->gap;
        double need = 10 + fr->entry_h * p->n;
        if (need > h) h = need;
        p->top = y;
        p->height = h;
        if (p->log) axis_ticks_log(p, p->lo, p->hi, h >= 150 ? 5 : 3);
        else axis_ticks(p, p->has_data ? p->lo : 0, p->has_data ? p->hi : 1, h >= 150 ? 5 : 3);
        y += h + fr->gap;
    }
    if (P->npan == 0) y += o->panel_height; /* only an x column: one empty frame */
    fr->H = y - fr->gap + fr->bottom_h;
    fr->last_bottom = y - fr->gap;

    panel* xp = &fr->xp;
    memset(xp, 0, sizeof *xp);
    double x0 = fr->rows > 0 ? xlo : 0, x1 = fr->rows > 0 ? xhi : 1;
    sane_range(&x0, &x1);
    int target = (int)(fr->plot_w / 90);
    if (target < 2) target = 2;
    nice_step(x0, x1, target, &xp->tick_m, &xp->tick_k);
    double step = tick_value(1, xp->tick_m, xp->tick_k);
    xp->tick_i0 = (long long)ceil(x0 / step);
    xp->tick_i1 = (long long)floor(x1 / step);
    while (xp->tick_i0 > LLONG_MIN / 2 && tick_value(xp->tick_i0 - 1, xp->tick_m, xp->tick_k) >= x0) xp->tick_i0--;
    while (tick_value(xp->tick_i0, xp->tick_m, xp->tick_k) < x0) xp->tick_i0++;
    while (tick_value(xp->tick_i1 + 1, xp->tick_m, xp->tick_k) <= x1) xp->tick_i1++;
    while (tick_value(xp->tick_i1, xp->tick_m, xp->tick_k) > x1) xp->tick_i1--;
    fr->x0 = x0;
    fr->x1 = x1;
    fr->M = (mapping){x0, x1, fr->left, fr->plot_w};
}

/* Pass 2 over the data rows: the points, decimated per pixel column. */
static dvi_status plot_read_points(plot* P, const plot_frame* fr, char* msg, size_t msg_size)
{
    ssize_t len;
    for (int k = 0; fr->rows > 0 && P->nser > 0 && k < P->nfiles; k++) {
        plot_file* F = &P->files[k];
        rewind(F->f);
        len = getline(&P->line, &P->cap, F->f); /* header */
        long long row = 0;
        int ncolumns = (int)fr->plot_w;
        while ((len = getline(&P->line, &P->cap, F->f)) >= 0) {
            out_chomp(P->line, &len);
            out_csv_parse_row(P->line, F->vals, F->ncols);
            double x = F->vals[0];
            if (!isfinite(x)) continue;
            double t = (x - fr->x0) / (fr->x1 - fr->x0);
            int bucket = (int)floor(t * ncolumns);
            if (bucket < 0) bucket = 0;
            if (bucket >= ncolumns) bucket = ncolumns - 1;
            for (int i = F->first; i < F->first + F->nser; i++) {
                series* s = &P->ser[i];
                if (s->panel < 0) continue;
                const panel* p = &P->pan[s->panel];
                double v = F->vals[s->col];
                if (p->log) v = v > 0 ? log10(v) : NAN;
                series_add(s, &fr->M, p, bucket, row, x, v);
            }
            row++;
        }
        for (int i = F->first; i < F->first + F->nser; i++) {
            series* s = &P->ser[i];
            if (s->panel < 0) continue;
            series_flush(s, &fr->M, &P->pan[s->panel]);
            if (s->oom) return out_fail(msg, msg_size, "%s: out of memory", F->path);
        }
    }
    return DVI_OK;
}

/* The SVG's head: its size, title, description and the title line. */
static void svg_head(out_sbuf* b, const plot* P, const plot_frame* fr, const char* ttl)
{
    const int overlay = P->nfiles > 1;
    out_sb_puts(b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    out_sb_printf(b,
              "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
              "font-family=\"" FONT_FAMILY "\" font-size=\"12\">\n",
              (int)fr->W, (int)ceil(fr->H), (int)fr->W, (int)ceil(fr->H));
    out_sb_puts(b, "<title>");
    out_sb_xml(b, ttl);
    out_sb_puts(b, "</title>\n<desc>");
    for (int k = 0; k < P->nfiles; k++) {
        if (k) out_sb_puts(b, ", ");
        out_sb_xml(b, overlay ? P->files[k].path : base_name(P->files[k].path));
    }
    int drawn = 0;
    for (int i = 0; i < P->nser; i++) drawn += P->ser[i].panel >= 0;
    out_sb_printf(b, ": %lld rows, %d series in %d panels", fr->rows, drawn, P->npan);
    if (fr->skipped) out_sb_printf(b, "; %lld rows without a finite x skipped", fr->skipped);
    out_sb_puts(b, "</desc>\n");
    out_sb_puts(b, "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n");
    out_sb_printf(b, "<text class=\"title\" x=\"%.0f\" y=\"28\" font-size=\"16\" font-weight=\"600\" fill=\"#222222\">", fr->left);
    out_sb_xml(b, ttl);
    out_sb_puts(b, "</text>\n");
}

/* A panel's frame: its group's opening tag, the plot area, the grid, the
 * zero line and the border. */
static void svg_panel_frame(out_sbuf* b, const plot_frame* fr, const panel* p)
{
    const double top = p->top, h = p->height, left = fr->left;
    char a[64], c2[64];
    out_format_roundtrip(a, p->log ? pow(10.0, p->axis_lo) : p->axis_lo);
    out_format_roundtrip(c2, p->log ? pow(10.0, p->axis_hi) : p->axis_hi);
    out_sb_printf(b, "<g class=\"panel\" data-unit=\"");
    out_sb_xml(b, p->unit ? p->unit : "");
    out_sb_printf(b, "\" data-ymin=\"%s\" data-ymax=\"%s\"%s", a, c2, p->log ? " data-log=\"1\"" : "");
    out_format_roundtrip(a, fr->x0);
    out_format_roundtrip(c2, fr->x1);
    out_sb_printf(b, " data-xmin=\"%s\" data-xmax=\"%s\">\n", a, c2);
    out_sb_printf(b, "<rect class=\"plot-area\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#ffffff\"/>\n",
              left, top, fr->plot_w, h);
    /* grid */
    out_sb_puts(b, "<g class=\"grid\" stroke=\"#e8e8e8\" stroke-width=\"1\" shape-rendering=\"crispEdges\">\n");
    for (long long i = fr->xp.tick_i0; i <= fr->xp.tick_i1; i++) {
        double px = map_x(&fr->M, tick_value(i, fr->xp.tick_m, fr->xp.tick_k));
        out_sb_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", px, top, px, top + h);
    }
    for (long long i = p->tick_i0; i <= p->tick_i1; i++) {
        double py = map_y(p, tick_value(i, p->tick_m, p->tick_k));
        out_sb_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", left, py, fr->right, py);
    }
    out_sb_puts(b, "</g>\n");
    if (!p->log && p->axis_lo < 0 && p->axis_hi > 0) {
        double py = map_y(p, 0);
        out_sb_printf(b,
                  "<line class=\"zero\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#b0b0b0\" "
                  "stroke-width=\"1\" shape-rendering=\"crispEdges\"/>\n",
                  left, py, fr->right, py);
    }
    out_sb_printf(b,
              "<rect class=\"frame\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" "
              "stroke=\"#9a9a9a\" stroke-width=\"1\" shape-rendering=\"crispEdges\"/>\n",
              left, top, fr->plot_w, h);
}

/* A panel's y ticks, their labels and the axis' label beside them. */
static void svg_panel_y_axis(out_sbuf* b, const plot* P, const plot_frame* fr, const panel* p)
{
    const double top = p->top, h = p->height, left = fr->left;
    double maxabs = fmax(fabs(p->axis_lo), fabs(p->axis_hi));
    size_t widest = 1;
    for (long long i = p->tick_i0; i <= p->tick_i1; i++) {
        char lab[96];
        y_tick_label(lab, sizeof lab, p, i, maxabs);
        size_t wch = utf8_chars(lab);
        if (wch > widest) widest = wch;
    }
    out_sb_puts(b, "<g class=\"yaxis\" fill=\"#444444\" font-size=\"11\" text-anchor=\"end\">\n");
    for (long long i = p->tick_i0; i <= p->tick_i1; i++) {
        double v = tick_value(i, p->tick_m, p->tick_k);
        double py = map_y(p, v);
        char lab[96];
        y_tick_label(lab, sizeof lab, p, i, maxabs);
        out_sb_printf(b,
                  "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#9a9a9a\" "
                  "shape-rendering=\"crispEdges\"/>\n",
                  left - 4, py, left, py);
        out_sb_printf(b, "<text class=\"ytick\" x=\"%.1f\" y=\"%.1f\" dy=\"0.35em\">%s</text>\n", left - 7, py, lab);
    }
    out_sb_puts(b, "</g>\n");
    /* y label */
    char lab[600];
    const char* unit = p->unit ? p->unit : "";
    int same = p->n > 0; /* one column (of one or several runs) */
    for (int j = 1; j < p->n && same; j++)
        same = strcmp(P->ser[p->members[j]].column, P->ser[p->members[0]].column) == 0;
    if (same) {
        const series* s = &P->ser[p->members[0]];
        if (*unit) snprintf(lab, sizeof lab, "%s [%s]", s->column, unit);
        else snprintf(lab, sizeof lab, "%s", s->column);
    } else if (*unit) snprintf(lab, sizeof lab, "[%s]", unit);
    else snprintf(lab, sizeof lab, "%s", P->npan > 0 ? "value" : "");
    char cut[600];
    truncate_utf8(cut, sizeof cut, lab, (size_t)(h / 7.5));
    double cy = top + h / 2;
    double lx = left - 7 - 6.4 * (double)widest - 14; /* clear of the tick labels */
    if (lx < 14) lx = 14;
    out_sb_printf(b,
              "<text class=\"ylabel\" x=\"%.1f\" y=\"%.1f\" transform=\"rotate(-90 %.1f %.1f)\" "
              "text-anchor=\"middle\" dy=\"0.35em\" fill=\"#222222\">",
              lx, cy, lx, cy);
    out_sb_xml(b, cut);
    out_sb_puts(b, "</text>\n");
}

/* A panel's lines and, when it has nothing to draw, the note saying why. */
static void svg_panel_series(out_sbuf* b, const plot* P, const plot_frame* fr, const panel* p)
{
    out_sb_puts(b, "<g class=\"series\" stroke-width=\"1.6\" stroke-linejoin=\"round\" stroke-linecap=\"round\">\n");
    for (int j = 0; j < p->n; j++) {
        const series* s = &P->ser[p->members[j]];
        out_sb_printf(b, "<g class=\"line\" data-name=\"");
        out_sb_xml(b, s->name);
        out_sb_puts(b, "\"><title>");
        out_sb_xml(b, s->name);
        out_sb_puts(b, "</title>\n");
        emit_series(b, s, palette[s->style % 8], series_dash(s->style));
        out_sb_puts(b, "</g>\n");
    }
    out_sb_puts(b, "</g>\n");
    if (fr->rows == 0 || P->nser == 0 || !p->has_data) {
        out_sb_printf(b,
                  "<text class=\"note\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" fill=\"#888888\" "
                  "font-size=\"14\">%s</text>\n",
                  fr->left + fr->plot_w / 2, p->top + p->height / 2,
                  P->nser == 0 ? "no series (only an x column)" : fr->rows == 0 ? "no data" : "no finite data");
    }
}

/* A panel's legend, right of its plot area. */
static void svg_panel_legend(out_sbuf* b, const plot* P, const plot_frame* fr, const panel* p)
{
    if (p->n == 0) return;
    out_sb_puts(b, "<g class=\"legend\" font-size=\"12\" fill=\"#222222\">\n");
    for (int j = 0; j < p->n; j++) {
        const series* s = &P->ser[p->members[j]];
        double ly = p->top + 8 + fr->entry_h * j + fr->entry_h / 2;
        double lx = fr->right + 14;
        const char* dash = series_dash(s->style);
        int none = s->finite == 0;
        out_sb_puts(b, "<g class=\"entry\"><title>");
        out_sb_xml(b, s->name);
        if (none) out_sb_puts(b, " (no finite data)");
        out_sb_puts(b, "</title>");
        out_sb_printf(b,
                  "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"2.5\"%s%s%s/>",
                  lx, ly, lx + 22, ly, none ? "#bbbbbb" : palette[s->style % 8],
                  dash ? " stroke-dasharray=\"" : "", dash ? dash : "", dash ? "\"" : "");
        char cut[400];
        truncate_utf8(cut, sizeof cut, s->name, none ? 12 : 22);
        out_sb_printf(b, "<text x=\"%.1f\" y=\"%.1f\" dy=\"0.35em\"%s>", lx + 28, ly,
                  none ? " fill=\"#888888\" font-style=\"italic\"" : "");
        out_sb_xml(b, cut);
        if (none) out_sb_puts(b, " (no finite data)");
        out_sb_puts(b, "</text></g>\n");
    }
    out_sb_puts(b, "</g>\n");
}

/* The x axis under the bottom panel: ticks, their labels, the axis' label. */
static void svg_x_axis(out_sbuf* b, const plot_frame* fr, const char* xlabel)
{
    const panel* xp = &fr->xp;
    double xmaxabs = fmax(fabs(tick_value(xp->tick_i0, xp->tick_m, xp->tick_k)),
                          fabs(tick_value(xp->tick_i1, xp->tick_m, xp->tick_k)));
    out_sb_puts(b, "<g class=\"xaxis\" fill=\"#444444\" font-size=\"11\" text-anchor=\"middle\">\n");
    for (long long i = xp->tick_i0; i <= xp->tick_i1; i++) {
        double v = tick_value(i, xp->tick_m, xp->tick_k);
        double px = map_x(&fr->M, v);
        char lab[96];
        format_tick(lab, sizeof lab, v, xp->tick_k, xmaxabs);
        out_sb_printf(b,
                  "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#9a9a9a\" "
                  "shape-rendering=\"crispEdges\"/>\n",
                  px, fr->last_bottom, px, fr->last_bottom + 4);
        out_sb_printf(b, "<text class=\"xtick\" x=\"%.1f\" y=\"%.1f\">%s</text>\n", px, fr->last_bottom + 18, lab);
    }
    out_sb_puts(b, "</g>\n");
    out_sb_printf(b, "<text class=\"xlabel\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" fill=\"#222222\">",
              fr->left + fr->plot_w / 2, fr->last_bottom + 42);
    out_sb_xml(b, xlabel);
    out_sb_puts(b, "</text>\n");
}

/* The whole picture into b. */
static void svg_write(out_sbuf* b, const plot* P, const plot_frame* fr, const dvi_svg_options* o, const char* ttl,
                      const char* xlabel)
{
    svg_head(b, P, fr, ttl);
    int npanels_drawn = P->npan > 0 ? P->npan : 1;
    for (int pi = 0; pi < npanels_drawn; pi++) {
        panel empty;
        const panel* p = &empty;
        if (P->npan > 0) p = &P->pan[pi];
        else {
            memset(&empty, 0, sizeof empty);
            empty.top = fr->title_h;
            empty.height = o->panel_height - fr->gap;
            axis_ticks(&empty, 0, 1, 5);
        }
        svg_panel_frame(b, fr, p);
        svg_panel_y_axis(b, P, fr, p);
        svg_panel_series(b, P, fr, p);
        svg_panel_legend(b, P, fr, p);
        out_sb_puts(b, "</g>\n");
    }
    svg_x_axis(b, fr, xlabel);
    out_sb_puts(b, "</svg>\n");
}

static dvi_status plot_csvs(const char* const* csv_paths, const char* const* labels, int nfiles, const char* svg_path,
                            const char* title, const dvi_svg_options* opt, char* msg, size_t msg_size)
{
    if (!svg_path || !*svg_path) return out_fail_st(DVI_ERR_INVALID_ARG, msg, msg_size, "plot: no SVG path");
    dvi_svg_options o = opt ? *opt : dvi_svg_default_options();
    if (o.width < 320) o.width = 320;
    if (o.width > 20000) o.width = 20000;
    if (o.panel_height < 100) o.panel_height = 100;
    if (o.panel_height > 5000) o.panel_height = 5000;
    const int overlay = nfiles > 1;

    plot P;
    memset(&P, 0, sizeof P);
    plot_frame fr;
    memset(&fr, 0, sizeof fr);
    out_sbuf b = {0};
    char xlabel[512] = "";
    double xlo = INFINITY, xhi = -INFINITY;
    dvi_status rc = plot_open_files(&P, csv_paths, labels, nfiles, xlabel, sizeof xlabel, msg, msg_size);
    if (rc == DVI_OK) rc = plot_make_series(&P, &o, overlay, msg, msg_size);
    if (rc == DVI_OK) rc = plot_read_ranges(&P, &fr, &xlo, &xhi, msg, msg_size);
    if (rc == DVI_OK) {
        plot_layout(&P, &fr, &o, xlo, xhi);
        rc = plot_read_points(&P, &fr, msg, msg_size);
    }
    if (rc == DVI_OK) {
        char overlay_title[600];
        if (overlay) /* the file's name (when the runs share it), the column(s) */
            snprintf(overlay_title, sizeof overlay_title, "%s%s%s (%d runs)", base_name(csv_paths[0]),
                     o.columns && *o.columns ? ": " : "", o.columns && *o.columns ? o.columns : "", nfiles);
        const char* ttl = title && *title ? title : overlay ? overlay_title : base_name(csv_paths[0]);
        svg_write(&b, &P, &fr, &o, ttl, xlabel);
        if (b.failed) rc = out_fail(msg, msg_size, "%s: out of memory", svg_path);
        else rc = dvi_write_file_atomic(svg_path, b.data, b.len, msg, msg_size);
    }
    out_sb_free(&b);
    plot_free(&P);
    return rc;
}

/* ==== XY (scatter) plots ================================================= */

dvi_svg_xy_panel dvi_svg_xy_default_panel(void)
{
    dvi_svg_xy_panel p;
    memset(&p, 0, sizeof p);
    p.log_x = true;
    p.log_y = true;
    p.hline = NAN;
    return p;
}

/* An axis of an XY panel: its ticks (in log10 of the values on a log axis). */
static void xy_axis(panel* a, const dvi_svg_xy_panel* P, bool is_x, bool log_axis)
{
    double lo = INFINITY, hi = -INFINITY;
    for (int s = 0; s < P->series_count; s++) {
        const dvi_svg_xy_series* S = &P->series[s];
        for (int i = 0; i < S->count; i++) {
            double v = is_x ? S->x[i] : S->y[i];
            if (!isfinite(v) || (log_axis && !(v > 0))) continue;
            if (log_axis) v = log10(v);
            lo = fmin(lo, v);
            hi = fmax(hi, v);
        }
    }
    if (!is_x && isfinite(P->hline) && (!log_axis || P->hline > 0)) {
        double v = log_axis ? log10(P->hline) : P->hline;
        lo = fmin(lo, v);
        hi = fmax(hi, v);
    }
    memset(a, 0, sizeof *a);
    a->log = log_axis;
    if (!isfinite(lo)) lo = log_axis ? 0 : 0, hi = 1;
    if (log_axis) axis_ticks_log(a, lo, hi, 6);
    else axis_ticks(a, lo, hi, 5);
}

static double xy_map(const panel* a, double v, double p0, double len, bool flip)
{
    double u = a->log ? log10(v) : v;
    double f = (u - a->axis_lo) / (a->axis_hi - a->axis_lo);
    return flip ? p0 + len - f * len : p0 + f * len;
}

static void xy_tick_label(char* out, size_t size, const panel* a, long long i)
{
    if (a->log) {
        y_tick_label(out, size, a, i, 0);
        return;
    }
    double maxabs = fmax(fabs(a->axis_lo), fabs(a->axis_hi));
    format_tick(out, size, tick_value(i, a->tick_m, a->tick_k), a->tick_k, maxabs);
}

dvi_status dvi_svg_xy_plot(const char* svg_path, const char* title, const char* note, int panel_count,
                           const dvi_svg_xy_panel* panels, int columns, char* msg, size_t msg_size)
{
    if (!svg_path || panel_count < 1 || !panels) return out_fail_st(DVI_ERR_INVALID_ARG, msg, msg_size,
                                                                    "dvi_svg_xy_plot: bad arguments");
    for (int k = 0; k < panel_count; k++) {
        if (panels[k].series_count < 0 || (panels[k].series_count > 0 && !panels[k].series))
            return out_fail(msg, msg_size, "dvi_svg_xy_plot: panel %d: bad series", k);
        for (int s = 0; s < panels[k].series_count; s++)
            if (panels[k].series[s].count < 0 || (panels[k].series[s].count > 0 && (!panels[k].series[s].x ||
                                                                                   !panels[k].series[s].y)))
                return out_fail(msg, msg_size, "dvi_svg_xy_plot: panel %d, series %d: bad points", k, s);
    }
    if (columns < 1) columns = 1;
    if (columns > panel_count) columns = panel_count;
    const int rows = (panel_count + columns - 1) / columns;
    const double PW = 420, PH = 280, ML = 78, MR = 210, MT = 64, MB = 64, GX = 30, GY = 30;
    const double cell_w = ML + PW + MR + GX, cell_h = PH + MB + GY;
    const double W = columns * cell_w, H = MT + rows * cell_h + (note && *note ? 24 : 0);
    out_sbuf b = {0};
    out_sb_puts(&b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    out_sb_printf(&b,
                  "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
                  "font-family=\"" FONT_FAMILY "\" font-size=\"12\">\n",
                  (int)W, (int)ceil(H), (int)W, (int)ceil(H));
    out_sb_puts(&b, "<title>");
    out_sb_xml(&b, title ? title : "");
    out_sb_puts(&b, "</title>\n<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n");
    out_sb_printf(&b, "<text x=\"%.0f\" y=\"28\" font-size=\"16\" font-weight=\"600\" fill=\"#222222\">", ML);
    out_sb_xml(&b, title ? title : "");
    out_sb_puts(&b, "</text>\n");
    if (note && *note) {
        out_sb_printf(&b, "<text x=\"%.0f\" y=\"%.0f\" fill=\"#444444\">", ML, H - 12);
        out_sb_xml(&b, note);
        out_sb_puts(&b, "</text>\n");
    }
    for (int k = 0; k < panel_count; k++) {
        const dvi_svg_xy_panel* P = &panels[k];
        const double x0 = (k % columns) * cell_w + ML, y0 = MT + (k / columns) * cell_h;
        panel ax, ay;
        xy_axis(&ax, P, true, P->log_x);
        xy_axis(&ay, P, false, P->log_y);
        out_sb_printf(&b, "<g class=\"panel\">\n<text x=\"%.1f\" y=\"%.1f\" font-weight=\"600\" fill=\"#222222\">", x0,
                      y0 - 8);
        out_sb_xml(&b, P->title ? P->title : "");
        out_sb_puts(&b, "</text>\n");
        out_sb_printf(&b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" stroke=\"#9a9a9a\"/>\n",
                      x0, y0, PW, PH);
        for (long long i = ax.tick_i0; i <= ax.tick_i1; i += 1) {
            double v = tick_value(i, ax.tick_m, ax.tick_k);
            double px = x0 + PW * (v - ax.axis_lo) / (ax.axis_hi - ax.axis_lo);
            char lab[96];
            xy_tick_label(lab, sizeof lab, &ax, i);
            out_sb_printf(&b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#e6e6e6\"/>\n", px, y0, px,
                          y0 + PH);
            out_sb_printf(&b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" fill=\"#444444\">%s</text>\n", px,
                          y0 + PH + 16, lab);
        }
        for (long long i = ay.tick_i0; i <= ay.tick_i1; i += 1) {
            double v = tick_value(i, ay.tick_m, ay.tick_k);
            double py = y0 + PH - PH * (v - ay.axis_lo) / (ay.axis_hi - ay.axis_lo);
            char lab[96];
            xy_tick_label(lab, sizeof lab, &ay, i);
            out_sb_printf(&b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#e6e6e6\"/>\n", x0, py,
                          x0 + PW, py);
            out_sb_printf(&b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" fill=\"#444444\">%s</text>\n", x0 - 5,
                          py + 4, lab);
        }
        out_sb_printf(&b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" fill=\"#222222\">", x0 + PW / 2,
                      y0 + PH + 36);
        out_sb_xml(&b, P->x_label ? P->x_label : "");
        out_sb_printf(&b, "</text>\n<text transform=\"translate(%.1f %.1f) rotate(-90)\" text-anchor=\"middle\" "
                          "fill=\"#222222\">",
                      x0 - 56, y0 + PH / 2);
        out_sb_xml(&b, P->y_label ? P->y_label : "");
        out_sb_puts(&b, "</text>\n");
        if (isfinite(P->hline) && (!P->log_y || P->hline > 0)) {
            double py = xy_map(&ay, P->hline, y0, PH, true);
            out_sb_printf(&b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#888888\" "
                              "stroke-dasharray=\"6 4\"/>\n",
                          x0, py, x0 + PW, py);
            if (P->hline_label) {
                out_sb_printf(&b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" fill=\"#666666\">", x0 + PW - 4,
                              py - y0 < 18 ? py + 14 : py - 4);
                out_sb_xml(&b, P->hline_label);
                out_sb_puts(&b, "</text>\n");
            }
        }
        for (int s = 0; s < P->series_count; s++) {
            const dvi_svg_xy_series* S = &P->series[s];
            const char* col = palette[s % 8];
            const char* dash = series_dash(s);
            /* the line through the points in their order, broken at points not drawn */
            bool open = false;
            for (int i = 0; i < S->count; i++) {
                double x = S->x[i], y = S->y[i];
                bool ok = isfinite(x) && isfinite(y) && (!P->log_x || x > 0) && (!P->log_y || y > 0);
                if (!ok) {
                    if (open) out_sb_puts(&b, "\"/>\n");
                    open = false;
                    continue;
                }
                if (!open && S->lines) {
                    out_sb_printf(&b, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\"%s%s%s points=\"", col,
                                  dash ? " stroke-dasharray=\"" : "", dash ? dash : "", dash ? "\"" : "");
                    open = true;
                }
                if (open)
                    out_sb_printf(&b, "%.1f,%.1f ", xy_map(&ax, x, x0, PW, false), xy_map(&ay, y, y0, PH, true));
            }
            if (open) out_sb_puts(&b, "\"/>\n");
            for (int i = 0; i < S->count; i++) {
                double x = S->x[i], y = S->y[i];
                if (P->zero_at_bottom && P->log_y && y == 0 && isfinite(x) && (!P->log_x || x > 0)) {
                    /* a zero on the log axis: a triangle pointing down on the bottom edge */
                    double px = xy_map(&ax, x, x0, PW, false), py = y0 + PH - 1;
                    bool filled = !S->filled || S->filled[i];
                    out_sb_printf(&b, "<path d=\"M%.1f %.1fL%.1f %.1fL%.1f %.1fZ\" stroke=\"%s\" stroke-width=\"1.5\" "
                                      "fill=\"%s\"/>\n",
                                  px - 5, py - 9, px + 5, py - 9, px, py, col, filled ? col : "#ffffff");
                    continue;
                }
                if (!(isfinite(x) && isfinite(y) && (!P->log_x || x > 0) && (!P->log_y || y > 0))) continue;
                bool filled = !S->filled || S->filled[i];
                out_sb_printf(&b, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4.5\" stroke=\"%s\" stroke-width=\"1.5\" "
                                  "fill=\"%s\"/>\n",
                              xy_map(&ax, x, x0, PW, false), xy_map(&ay, y, y0, PH, true), col,
                              filled ? col : "#ffffff");
            }
            /* legend */
            const double lx = x0 + PW + 14, ly = y0 + 10 + 18 * s;
            out_sb_printf(&b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"2\"%s%s%s/>\n",
                          lx, ly, lx + 22, ly, col, dash ? " stroke-dasharray=\"" : "", dash ? dash : "",
                          dash ? "\"" : "");
            out_sb_printf(&b, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" stroke=\"%s\" fill=\"%s\"/>\n", lx + 11, ly, col,
                          col);
            out_sb_printf(&b, "<text x=\"%.1f\" y=\"%.1f\" fill=\"#222222\">", lx + 28, ly + 4);
            out_sb_xml(&b, S->name ? S->name : "");
            out_sb_puts(&b, "</text>\n");
        }
        if (P->legend_note) {
            out_sb_printf(&b, "<text x=\"%.1f\" y=\"%.1f\" fill=\"#444444\">", x0 + PW + 14,
                          y0 + 10 + 18 * P->series_count + 8);
            out_sb_xml(&b, P->legend_note);
            out_sb_puts(&b, "</text>\n");
        }
        out_sb_puts(&b, "</g>\n");
    }
    out_sb_puts(&b, "</svg>\n");
    if (b.failed) {
        out_sb_free(&b);
        return out_fail(msg, msg_size, "%s: out of memory", svg_path);
    }
    dvi_status rc = dvi_write_file_atomic(svg_path, b.data, b.len, msg, msg_size);
    out_sb_free(&b);
    return rc;
}
