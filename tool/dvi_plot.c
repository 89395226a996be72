/* `dvi plot CSV... [options]`: draw (or redraw) the SVG plot of a CSV file,
 * as `dvi run` draws its probes, with a choice of columns and axes, so that a
 * long run can be replotted without being run again; with several CSV files
 * (runs of one scene), the same columns of each overlaid in one picture, one
 * line per run, the legend naming the runs. */
#include "dvi_cli.h"
#include <dvi/output.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { OPT_OUT = 1, OPT_COLUMNS, OPT_LOG, OPT_LINEAR, OPT_TITLE, OPT_WIDTH, OPT_LABELS };

static const cli_option plot_options[] = {
    {"out", true, OPT_OUT},        {"columns", true, OPT_COLUMNS}, {"column", true, OPT_COLUMNS},
    {"log", false, OPT_LOG},       {"linear", false, OPT_LINEAR},  {"title", true, OPT_TITLE},
    {"width", true, OPT_WIDTH},    {"labels", true, OPT_LABELS},   {NULL, false, 0},
};

#define MAX_CSVS 64

/* The runs' names: each path without the leading and trailing parts that all
 * paths share, cut at '/' or '_' ("out/a/box.csv", "out/b/box.csv": "a",
 * "b"); the whole path when that leaves nothing. */
static void default_labels(const char* const* csv, int n, char (*labels)[256])
{
    size_t pre = strlen(csv[0]), suf = strlen(csv[0]);
    for (int k = 1; k < n; k++) {
        size_t i = 0;
        while (i < pre && csv[k][i] == csv[0][i]) i++;
        pre = i;
        const size_t l0 = strlen(csv[0]), lk = strlen(csv[k]);
        size_t j = 0;
        while (j < suf && j < l0 && j < lk && csv[k][lk - 1 - j] == csv[0][l0 - 1 - j]) j++;
        suf = j;
    }
    while (pre > 0 && csv[0][pre - 1] != '/' && csv[0][pre - 1] != '_') pre--; /* whole names only */
    for (int k = 0; k < n; k++) {
        const size_t l = strlen(csv[k]);
        size_t s = suf;
        while (s > 0 && csv[k][l - s] != '/' && csv[k][l - s] != '_' && csv[k][l - s] != '.') s--;
        if (pre + s >= l) snprintf(labels[k], sizeof labels[k], "%s", csv[k]);
        else snprintf(labels[k], sizeof labels[k], "%.*s", (int)(l - pre - s), csv[k] + pre);
    }
}

int dvi_cmd_plot(int argc, char** argv)
{
    cli_parser p;
    cli_init(&p, argc, argv, "plot");
    const char* csv[MAX_CSVS];
    int ncsv = 0;
    const char *out = NULL, *title = NULL, *label_list = NULL;
    dvi_svg_options o = dvi_svg_default_options();
    const char* arg;
    int id;
    while ((id = cli_next(&p, plot_options, &arg)) != CLI_END) {
        switch (id) {
        case CLI_ERROR: return DVI_EXIT_USAGE;
        case CLI_HELP: dvi_print_help("plot"); return DVI_EXIT_OK;
        case CLI_POSITIONAL:
            if (ncsv == MAX_CSVS) return cli_usage_error("plot", "at most %d CSV files", MAX_CSVS);
            csv[ncsv++] = arg;
            break;
        case OPT_OUT: out = arg; break;
        case OPT_COLUMNS:
            if (!*arg) return cli_usage_error("plot", "--columns: an empty list");
            o.columns = arg;
            break;
        case OPT_LOG: o.log = 1; break;
        case OPT_LINEAR: o.log = 0; break;
        case OPT_TITLE: title = arg; break;
        case OPT_LABELS: label_list = arg; break;
        case OPT_WIDTH: {
            int64_t w = 0;
            if (!cli_parse_int64("plot", "width", arg, 320, 20000, &w)) return DVI_EXIT_USAGE;
            o.width = (int)w;
            break;
        }
        }
    }
    if (ncsv == 0) return cli_usage_error("plot", "missing CSV (a probe's CSV file, as dvi run writes)");
    if (label_list && ncsv == 1) return cli_usage_error("plot", "--labels: for several CSV files (runs to overlay)");
    char path[4096];
    if (!out) { /* one CSV: NAME.csv -> NAME.svg beside it; several: NAME_overlay.svg here */
        const char* c = ncsv == 1 ? csv[0] : strrchr(csv[0], '/') ? strrchr(csv[0], '/') + 1 : csv[0];
        size_t n = strlen(c);
        if (n >= 4 && strcmp(c + n - 4, ".csv") == 0) n -= 4;
        const char* tail = ncsv == 1 ? ".svg" : "_overlay.svg";
        if (n + strlen(tail) + 1 > sizeof path) return cli_usage_error("plot", "the CSV's path is too long");
        memcpy(path, c, n);
        memcpy(path + n, tail, strlen(tail) + 1);
        out = path;
    }
    char msg[1024];
    dvi_status rc;
    if (ncsv == 1) {
        rc = dvi_svg_plot_csv_ex(csv[0], out, title, &o, msg, sizeof msg);
    } else {
        static char labels[MAX_CSVS][256];
        const char* lp[MAX_CSVS];
        if (label_list) {
            int k = 0;
            for (const char* c = label_list; k < ncsv; k++) {
                const char* e = strchr(c, ',');
                size_t n = e ? (size_t)(e - c) : strlen(c);
                snprintf(labels[k], sizeof labels[k], "%.*s", (int)n, c);
                if (!e) {
                    k++;
                    break;
                }
                c = e + 1;
            }
            int given = 1;
            for (const char* c = label_list; *c; c++) given += *c == ',';
            if (given != ncsv)
                return cli_usage_error("plot", "--labels: %d label%s for %d CSV files", given, given == 1 ? "" : "s", ncsv);
        } else {
            default_labels(csv, ncsv, labels);
        }
        for (int k = 0; k < ncsv; k++) lp[k] = labels[k];
        rc = dvi_svg_plot_csv_overlay(csv, lp, ncsv, out, title, &o, msg, sizeof msg);
    }
    if (rc != DVI_OK) {
        fprintf(stderr, "dvi plot: %s\n", msg);
        return rc == DVI_ERR_INVALID_ARG ? DVI_EXIT_USAGE : DVI_EXIT_FAILED; /* a column the CSV lacks */
    }
    printf("%s\n", out);
    return DVI_EXIT_OK;
}
