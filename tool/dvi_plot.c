/* `dvi plot CSV [options]`: draw (or redraw) the SVG plot of a CSV file, as
 * `dvi run` draws its probes, with a choice of columns and axes, so that a
 * long run can be replotted without being run again. */
#include "dvi_cli.h"
#include <dvi/output.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { OPT_OUT = 1, OPT_COLUMNS, OPT_LOG, OPT_LINEAR, OPT_TITLE, OPT_WIDTH };

static const cli_option plot_options[] = {
    {"out", true, OPT_OUT},       {"columns", true, OPT_COLUMNS}, {"log", false, OPT_LOG},
    {"linear", false, OPT_LINEAR}, {"title", true, OPT_TITLE},    {"width", true, OPT_WIDTH},
    {NULL, false, 0},
};

int dvi_cmd_plot(int argc, char** argv)
{
    cli_parser p;
    cli_init(&p, argc, argv, "plot");
    const char *csv = NULL, *out = NULL, *title = NULL;
    dvi_svg_options o = dvi_svg_default_options();
    const char* arg;
    int id;
    while ((id = cli_next(&p, plot_options, &arg)) != CLI_END) {
        switch (id) {
        case CLI_ERROR: return DVI_EXIT_USAGE;
        case CLI_HELP: dvi_print_help("plot"); return DVI_EXIT_OK;
        case CLI_POSITIONAL:
            if (csv) return cli_usage_error("plot", "unexpected argument '%s' (one CSV file only)", arg);
            csv = arg;
            break;
        case OPT_OUT: out = arg; break;
        case OPT_COLUMNS:
            if (!*arg) return cli_usage_error("plot", "--columns: an empty list");
            o.columns = arg;
            break;
        case OPT_LOG: o.log = 1; break;
        case OPT_LINEAR: o.log = 0; break;
        case OPT_TITLE: title = arg; break;
        case OPT_WIDTH: {
            int64_t w = 0;
            if (!cli_parse_int64("plot", "width", arg, 320, 20000, &w)) return DVI_EXIT_USAGE;
            o.width = (int)w;
            break;
        }
        }
    }
    if (!csv) return cli_usage_error("plot", "missing CSV (a probe's CSV file, as dvi run writes)");
    char path[4096];
    if (!out) { /* NAME.csv -> NAME.svg beside it */
        size_t n = strlen(csv);
        if (n >= 4 && strcmp(csv + n - 4, ".csv") == 0) n -= 4;
        if (n + 5 > sizeof path) return cli_usage_error("plot", "the CSV's path is too long");
        memcpy(path, csv, n);
        memcpy(path + n, ".svg", 5);
        out = path;
    }
    char msg[1024];
    if (dvi_svg_plot_csv_ex(csv, out, title, &o, msg, sizeof msg) != 0) {
        fprintf(stderr, "dvi plot: %s\n", msg);
        return strstr(msg, "no column") ? DVI_EXIT_USAGE : DVI_EXIT_FAILED;
    }
    printf("%s\n", out);
    return DVI_EXIT_OK;
}
