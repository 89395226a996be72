/* `dvi solve PROBLEM`: solve a CCP problem file with one solver or all of
 * them and print what each reports. PROBLEM is a JSON CCP file
 * (docs/ccp-file.md) or an FCLIB file (HDF5, docs/fclib.md), told apart by
 * the HDF5 signature at offset 0. */
#include "dvi_cli.h"
#include "../src/base/regular_file.h"

#include <dvi/dvi.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { OPT_SOLVER = 1, OPT_ALL, OPT_TOLERANCE, OPT_BLOCK_TOLERANCE, OPT_MAX_ITERATIONS, OPT_THREADS, OPT_WARM_START, OPT_DELASSUS, OPT_JSON };

static const cli_option solve_options[] = {
    {"solver", true, OPT_SOLVER},
    {"all-solvers", false, OPT_ALL},
    {"tolerance", true, OPT_TOLERANCE},
    {"block-tolerance", true, OPT_BLOCK_TOLERANCE},
    {"max-iterations", true, OPT_MAX_ITERATIONS},
    {"threads", true, OPT_THREADS},
    {"warm-start", false, OPT_WARM_START},
    {"delassus", false, OPT_DELASSUS},
    {"json", false, OPT_JSON},
    {NULL, false, 0},
};

static void describe_problem(const char* path, const dvi_ccp_problem* p, bool has_solution, bool has_gamma0)
{
    int32_t counts[5] = {0};
    for (int32_t b = 0; b < p->block_count; b++)
        if (p->blocks[b].kind >= 1 && p->blocks[b].kind <= 4) counts[p->blocks[b].kind]++;
    printf("%s: %d rows, %d blocks (", path, (int)p->rows, (int)p->block_count);
    static const char* kind_names[5] = {"", "bilateral", "frictionless", "friction", "friction+rolling"};
    bool first = true;
    for (int k = 1; k <= 4; k++) {
        if (!counts[k]) continue;
        printf("%s%d %s", first ? "" : ", ", (int)counts[k], kind_names[k]);
        first = false;
    }
    if (first) printf("none");
    if (p->D)
        printf("); operator D, M^-1 (%d bodies)", (int)p->body_count);
    else
        printf("); operator W");
    printf("%s%s\n", has_solution ? "; reference solution" : "", has_gamma0 ? "; initial guess" : "");
}

/* Does the file start with the HDF5 signature \x89HDF\r\n\x1a\n? (Not
 * when it is not a regular file: the reader then says what it is.) */
static bool is_hdf5(const char* path)
{
    static const unsigned char sig[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
    unsigned char head[8];
    char why[160];
    FILE* f = base_open_regular(path, 0, NULL, why, sizeof why);
    if (!f) return false;
    size_t n = fread(head, 1, sizeof head, f);
    fclose(f);
    return n == sizeof head && memcmp(head, sig, sizeof sig) == 0;
}

/* The FCLIB side of the description: kind, sizes, conversion, and the
 * stored solution's residuals (the stored solutions of published files are
 * often not solutions: they are shown so that one can tell). */
static void describe_fclib(const dvi_ccp_problem* p, const dvi_fclib_info* info, const double* solution)
{
    printf("FCLIB %s problem%s%s%s: %d contacts", info->kind == DVI_FCLIB_GLOBAL ? "global" : "local",
           info->title[0] ? " \"" : "", info->title, info->title[0] ? "\"" : "", (int)info->contacts);
    if (info->equalities) printf(", %d equality rows", (int)info->equalities);
    if (info->kind == DVI_FCLIB_GLOBAL) {
        printf(", %d degrees of freedom; ", (int)info->dofs);
        if (p->D)
            printf("M block-diagonal (%d blocks): factor form, %d bodies", (int)info->mass_blocks, (int)p->body_count);
        else
            printf("W = H' M^-1 H (CHOLMOD)");
    }
    printf("\n");
    if (info->symmetrized)
        printf("note: the file's %s is not symmetric (asymmetry %.1e): the solvers get its symmetric part, %s\n",
               info->kind == DVI_FCLIB_GLOBAL ? "M" : "W", info->asymmetry,
               info->kind == DVI_FCLIB_GLOBAL ? "and so do the residuals"
                                              : "within a splitting that solves the file's own W");
    dvi_ccp_metrics m;
    if (solution && dvi_fclib_evaluate(p, info, solution, &m) == DVI_OK) {
        printf("stored solution r: CCP residual %.3e, Coulomb residual %.3e", m.residual, m.residual_coulomb);
        if (!isnan(info->u_mismatch)) printf("; stored u vs W r + q: %.1e", info->u_mismatch);
        if (!isnan(info->v_mismatch)) printf("; stored v vs M^-1 (H r + f): %.1e", info->v_mismatch);
        printf("\n");
    }
}

int dvi_cmd_solve(int argc, char** argv)
{
    cli_parser p;
    cli_init(&p, argc, argv, "solve");
    const char* path = NULL;
    const char* solver = NULL;
    bool all = false, warm = false, delassus = false, json = false;
    double tolerance = 0, block_tolerance = 0;
    int64_t max_iterations = 0, threads = 0;
    const char* arg;
    int id;
    while ((id = cli_next(&p, solve_options, &arg)) != CLI_END) {
        switch (id) {
        case CLI_ERROR:
            return DVI_EXIT_USAGE;
        case CLI_HELP:
            dvi_print_help("solve");
            return DVI_EXIT_OK;
        case CLI_POSITIONAL:
            if (path) return cli_usage_error("solve", "unexpected argument '%s' (one problem file only)", arg);
            path = arg;
            break;
        case OPT_SOLVER:
            if (dvi_solver_index(arg) < 0) {
                char names[256] = "";
                size_t n = 0;
                for (int32_t i = 0; i < dvi_solver_count() && n < sizeof names; i++)
                    n += (size_t)snprintf(names + n, sizeof names - n, "%s%s", i ? ", " : "", dvi_solver_name(i));
                return cli_usage_error("solve", "--solver: unknown solver '%s' (solvers: %s)", arg, names);
            }
            solver = arg;
            break;
        case OPT_ALL:
            all = true;
            break;
        case OPT_TOLERANCE:
            if (!cli_parse_double("solve", "tolerance", arg, &tolerance)) return DVI_EXIT_USAGE;
            if (!(tolerance > 0)) return cli_usage_error("solve", "--tolerance: must be > 0 (got %s)", arg);
            break;
        case OPT_BLOCK_TOLERANCE:
            if (!cli_parse_double("solve", "block-tolerance", arg, &block_tolerance)) return DVI_EXIT_USAGE;
            if (!(block_tolerance > 0))
                return cli_usage_error("solve", "--block-tolerance: must be > 0 (got %s)", arg);
            break;
        case OPT_MAX_ITERATIONS:
            if (!cli_parse_int64("solve", "max-iterations", arg, 1, INT32_MAX, &max_iterations))
                return DVI_EXIT_USAGE;
            break;
        case OPT_THREADS:
            if (!cli_parse_int64("solve", "threads", arg, 1, 4096, &threads)) return DVI_EXIT_USAGE;
            break;
        case OPT_WARM_START:
            warm = true;
            break;
        case OPT_DELASSUS:
            delassus = true;
            break;
        case OPT_JSON:
            json = true;
            break;
        default:
            break;
        }
    }
    if (!path) return cli_usage_error("solve", "missing PROBLEM (a CCP problem file: JSON, or FCLIB HDF5)");
    if (all && solver) return cli_usage_error("solve", "--solver and --all-solvers exclude each other");

    char msg[1024] = "";
    dvi_ccp_file* file = NULL;
    dvi_fclib_info info;
    memset(&info, 0, sizeof info);
    bool fclib = is_hdf5(path);
    if (delassus && !fclib) return cli_usage_error("solve", "--delassus: only for FCLIB (HDF5) files");
    dvi_status st = fclib ? dvi_fclib_read_ex(path, delassus ? DVI_FCLIB_DELASSUS : 0u, &file, &info, msg, sizeof msg)
                          : dvi_ccp_problem_read_json(path, &file, msg, sizeof msg);
    if (st < 0) {
        fprintf(stderr, "%s\n", msg[0] ? msg : dvi_status_string(st));
        return st == DVI_ERR_NOMEM ? DVI_EXIT_FAILED : DVI_EXIT_USAGE;
    }
    const dvi_ccp_problem* prob = &file->problem;
    if (warm && !file->gamma0) {
        dvi_ccp_file_free(file);
        dvi_fclib_info_clear(&info);
        return cli_usage_error("solve", "--warm-start: %s has no initial guess (%s)", path,
                               fclib ? "/guesses/1/r" : "gamma0");
    }
    if (!json) {
        describe_problem(path, prob, file->solution != NULL, file->gamma0 != NULL);
        if (fclib) describe_fclib(prob, &info, file->solution);
    }

    dvi_solver_settings s = dvi_default_solver_settings();
    if (tolerance > 0) s.tolerance = tolerance;
    if (block_tolerance > 0) s.block_tolerance = block_tolerance;
    if (max_iterations > 0) s.max_iterations = (int32_t)max_iterations;
    if (threads > 0) s.threads = (int32_t)threads;
    s.warm_start = warm;

    size_t m = (size_t)(prob->rows > 0 ? prob->rows : 1);
    double* gamma = malloc(m * sizeof(double));
    if (!gamma) {
        dvi_ccp_file_free(file);
        dvi_fclib_info_clear(&info);
        fprintf(stderr, "dvi solve: out of memory\n");
        return DVI_EXIT_FAILED;
    }
    double ref_norm = 0;
    if (file->solution)
        for (int32_t i = 0; i < prob->rows; i++) ref_norm += file->solution[i] * file->solution[i];
    ref_norm = sqrt(ref_norm);

    char block_text[64];
    if (s.block_tolerance > 0)
        snprintf(block_text, sizeof block_text, "%.3g", s.block_tolerance);
    else /* the automatic value of this problem (ccp.h) */
        snprintf(block_text, sizeof block_text, "auto (%.3g)", dvi_block_tolerance(&s, prob->block_count));
    if (!json)
        printf("tolerance %.3g, block tolerance %s, at most %d iterations%s\n", s.tolerance, block_text,
               (int)s.max_iterations, warm ? ", warm start from gamma0" : "");
    if (!json) printf("%-8s %-15s %10s %13s %13s %12s %13s\n", "solver", "status", "iterations", "CCP residual", "Coulomb res.",
           "time", file->solution ? "|g-ref|/|ref|" : "");
    int rc = DVI_EXIT_OK;
    int first = all ? 0 : (int)dvi_solver_index(solver ? solver : "apgd");
    int last = all ? (int)dvi_solver_count() - 1 : first;
    for (int k = first; k <= last; k++) {
        const char* name = dvi_solver_name(k);
        for (int32_t i = 0; i < prob->rows; i++) gamma[i] = warm ? file->gamma0[i] : 0.0;
        dvi_solve_result res;
        memset(&res, 0, sizeof res);
        st = fclib ? dvi_fclib_solve(name, &s, prob, &info, gamma, &res) : dvi_ccp_solve(prob, name, &s, gamma, &res);
        if (st < 0) {
            if (!json) printf("%-8s %-15s %s\n", name, "error", res.message[0] ? res.message : dvi_status_string(st));
            fprintf(stderr, "dvi solve: %s: %s: %s\n", path, name, res.message[0] ? res.message : dvi_status_string(st));
            rc = DVI_EXIT_FAILED;
            continue;
        }
        char diff[32] = "";
        if (file->solution) {
            double d = 0;
            for (int32_t i = 0; i < prob->rows; i++) {
                double e = gamma[i] - file->solution[i];
                d += e * e;
            }
            d = sqrt(d);
            snprintf(diff, sizeof diff, "%13.3e", ref_norm > 0 ? d / ref_norm : d);
        }
        if (json) { /* 17 significant digits: the same bits read back */
            printf("{\"solver\": \"%s\", \"status\": \"%s\", \"iterations\": %d, \"residual\": %.17g, "
                   "\"residual_coulomb\": %.17g, \"seconds\": %.6g}\n",
                   name, dvi_solve_status_string(res.status), (int)res.iterations, res.metrics.residual,
                   res.metrics.residual_coulomb, res.seconds);
            continue;
        }
        char time[32];
        snprintf(time, sizeof time, "%.3f ms", 1e3 * res.seconds);
        printf("%-8s %-15s %10d %13.3e %13.3e %12s %s\n", name, dvi_solve_status_string(res.status),
               (int)res.iterations, res.metrics.residual, res.metrics.residual_coulomb, time, diff);
    }
    free(gamma);
    dvi_ccp_file_free(file);
    dvi_fclib_info_clear(&info);
    return rc;
}
