/* dvicontact — FCLIB benchmark: every solver on every FCLIB problem (.hdf5)
 * of a directory, one row per (problem, solver), then a summary per problem
 * family (the file name up to "-i<digit>", FCLIB's naming of the steps of one
 * simulation: "Capsules-i125-1213" is family "Capsules").
 *
 * Uses only the public API (dvi/io.h): dvi_fclib_read_ex to read a file,
 * dvi_fclib_solve to solve it as the file states it (a splitting around the
 * symmetric part when the file's W is not symmetric), so the residuals are
 * FCLIB's: the CCP residual and the Coulomb residual of Siconos's
 * fc3d_compute_error, normalised by max(‖q‖, ‖r‖, ‖u‖) (docs/fclib.md).
 * "Solved" means the solver's status is converged: for apgd, pgs and jacobi
 * the CCP residual against the file's W is at most the tolerance, reached
 * within the iteration budget; for lemke its own pyramid LCP. */
#include "bench_cli.h"
#include "dvi/io.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BENCH_MAX_SOLVERS 8
#define BENCH_MIN_SECONDS 0.25 /* repeat shorter solves ... */
#define BENCH_MAX_REPEATS 20   /* ... at most this many times, keep the fastest */

typedef struct bench_options {
    const char* dir;
    char solvers[BENCH_MAX_SOLVERS][32];
    int solver_count;
    double tolerance;
    int32_t max_iterations;
    int32_t threads;
    bool json;
} bench_options;

typedef struct bench_row {
    char problem[128];
    char family[128];
    const char* kind; /* "local" / "global" */
    int32_t contacts;
    char solver[32];
    int32_t iterations;
    double residual_ccp;
    double residual_coulomb;
    double seconds; /* fastest of the repeats */
    int repeats;
    const char* status;
    bool solved;
    bool coulomb_ok; /* Coulomb residual <= tolerance */
    bool error;
} bench_row;

static void usage(FILE* f, const char* prog) {
    fprintf(f,
            "usage: %s DIR [options]\n"
            "Runs CCP solvers on every FCLIB problem (*.hdf5) of DIR and prints one row per (problem, solver),\n"
            "then per problem family (the file name up to \"-i<digit>\") the fraction solved and the median time.\n"
            "\n"
            "  --tolerance X          tolerance on the residual the solver targets (default 1e-6)\n"
            "  --max-iterations N     iteration budget per solve (default 10000)\n"
            "  --solvers LIST         comma-separated solvers (default: all built-in: apgd,pgs,jacobi,lemke)\n"
            "  --threads N            solver threads (default 1; 0 = library default)\n"
            "  --json                 one JSON object per (problem, solver) on stdout; the summary goes to stderr\n"
            "  --help                 this text\n"
            "\n"
            "Residuals: FCLIB's, against the problem as the file states it (docs/fclib.md): the CCP residual and\n"
            "the Coulomb residual (De Saxce), both normalised by max(|q|, |r|, |u|). Solved = status converged:\n"
            "apgd, pgs, jacobi: CCP residual <= tolerance within the budget; lemke: its pyramid LCP.\n"
            "Start from r = 0. Times: a solve's wall time (setup included), repeated until %g s in total (at most\n"
            "%d times), fastest kept. Exit status: 0 unless a file could not be read or a solver failed with an\n"
            "error (a solver refusing a problem too large for it is reported as \"unsupported\").\n",
            prog, BENCH_MIN_SECONDS, BENCH_MAX_REPEATS);
}

/* Returns 0 to run, 1 to exit successfully (--help), 2 on a usage error. */
static int parse_options(int argc, char** argv, bench_options* o) {
    memset(o, 0, sizeof *o);
    o->solver_count = cli_all_solvers(o->solvers, BENCH_MAX_SOLVERS);
    o->tolerance = 1e-6;
    o->max_iterations = 10000;
    o->threads = 1;
    for (int i = 1; i < argc; ++i) {
        const char* a = argv[i];
        const char* val = i + 1 < argc ? argv[i + 1] : NULL;
        int r;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout, argv[0]);
            return 1;
        } else if (strcmp(a, "--json") == 0) {
            o->json = true;
        } else if (strcmp(a, "--tolerance") == 0 && val) {
            if (!cli_double(argv[0], "--tolerance", val, 0.0, true, INFINITY, "a number > 0", &o->tolerance)) return 2;
            ++i;
        } else if ((r = cli_solver_option(argv[0], a, val, o->solvers, BENCH_MAX_SOLVERS, &o->solver_count,
                                          &o->max_iterations, &o->threads)) != 0) {
            if (r < 0) return 2;
            ++i;
        } else if (a[0] != '-' && !o->dir) {
            o->dir = a;
        } else {
            fprintf(stderr, "%s: unknown or incomplete option '%s' (see --help)\n", argv[0], a);
            return 2;
        }
    }
    if (!o->dir) {
        fprintf(stderr, "%s: missing DIR (a directory of FCLIB .hdf5 files; see --help)\n", argv[0]);
        return 2;
    }
    return 0;
}

static bool ends_with(const char* s, const char* suffix) {
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

static int cmp_names(const void* a, const void* b) {
    return strcmp(*(char* const*)a, *(char* const*)b);
}

/* The *.hdf5 / *.h5 files of dir, sorted by name (malloc'd; count in *n). */
static char** list_files(const char* dir, int* n) {
    *n = 0;
    DIR* d = opendir(dir);
    if (!d) return NULL;
    int cap = 16;
    char** names = malloc((size_t)cap * sizeof *names);
    struct dirent* e;
    while (names && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.' || !(ends_with(e->d_name, ".hdf5") || ends_with(e->d_name, ".h5"))) continue;
        if (*n == cap) {
            cap *= 2;
            char** more = realloc(names, (size_t)cap * sizeof *names);
            if (!more) break;
            names = more;
        }
        size_t len = strlen(e->d_name);
        names[*n] = malloc(len + 1);
        if (!names[*n]) break;
        memcpy(names[*n], e->d_name, len + 1);
        (*n)++;
    }
    closedir(d);
    if (names) qsort(names, (size_t)*n, sizeof *names, cmp_names);
    return names;
}

/* "Capsules-i125-1213.hdf5" -> problem "Capsules-i125-1213", family "Capsules". */
static void names_of(const char* file, char* problem, size_t np, char* family, size_t nf) {
    snprintf(problem, np, "%s", file);
    char* dot = strrchr(problem, '.');
    if (dot) *dot = '\0';
    snprintf(family, nf, "%s", problem);
    for (char* s = family; *s; s++) {
        if (s[0] == '-' && s[1] == 'i' && s[2] >= '0' && s[2] <= '9' && s > family) {
            *s = '\0';
            break;
        }
    }
}

static void print_row(const bench_options* o, const bench_row* r) {
    if (o->json) {
        printf("{\"problem\":\"%s\",\"contacts\":%d,\"solver\":\"%s\",\"iterations\":%d,\"residual_ccp\":", r->problem,
               (int)r->contacts, r->solver, (int)r->iterations);
        cli_json_number(stdout, r->residual_ccp);
        printf(",\"residual_coulomb\":");
        cli_json_number(stdout, r->residual_coulomb);
        printf(",\"seconds\":");
        cli_json_number(stdout, r->seconds);
        printf(",\"status\":\"%s\",\"family\":\"%s\",\"kind\":\"%s\",\"solved\":%s,\"repeats\":%d,\"tolerance\":%g,"
               "\"max_iterations\":%d,\"threads\":%d}\n",
               r->status, r->family, r->kind, r->solved ? "true" : "false", r->repeats, o->tolerance,
               (int)o->max_iterations, (int)o->threads);
    } else {
        printf("%-38s %8d  %-7s %7d  %10.3e  %10.3e  %-15s %10.6f\n", r->problem, (int)r->contacts, r->solver,
               (int)r->iterations, r->residual_ccp, r->residual_coulomb, r->status, r->seconds);
    }
    fflush(stdout);
}

/* Solves the problem with one solver and fills *row; false on an error. */
static bool run_solver(const bench_options* o, const char* name, const dvi_ccp_file* file,
                       const dvi_fclib_info* info, double* gamma, bench_row* row) {
    dvi_solver_settings s = dvi_default_solver_settings();
    s.max_iterations = o->max_iterations;
    s.tolerance = o->tolerance;
    s.threads = o->threads;
    s.warm_start = false;
    snprintf(row->solver, sizeof row->solver, "%s", name);
    row->status = "error";
    row->residual_ccp = NAN;
    row->residual_coulomb = NAN;
    row->seconds = NAN;
    double total = 0.0, best = INFINITY;
    dvi_solve_result res;
    dvi_status st = DVI_OK;
    int repeats = 0;
    while (repeats < BENCH_MAX_REPEATS && total < BENCH_MIN_SECONDS) {
        memset(&res, 0, sizeof res);
        st = dvi_fclib_solve(name, &s, &file->problem, info, gamma, &res);
        repeats++;
        total += res.seconds;
        if (res.seconds < best) best = res.seconds;
        if (st < 0) break;
    }
    row->repeats = repeats;
    if (st == DVI_ERR_UNSUPPORTED) { /* e.g. Lemke on an LCP above its size limit */
        row->status = "unsupported";
        return true;
    }
    if (st < 0) {
        fprintf(stderr, "error: %s, %s: %s (%s)\n", row->problem, name, dvi_status_string(st), res.message);
        row->error = true;
        return false;
    }
    row->iterations = res.iterations;
    row->seconds = best;
    row->residual_ccp = res.metrics.residual;
    row->residual_coulomb = res.metrics.residual_coulomb;
    row->status = dvi_solve_status_string(res.status);
    row->solved = res.status == DVI_SOLVE_CONVERGED;
    row->coulomb_ok = res.metrics.residual_coulomb <= o->tolerance;
    return true;
}

static int cmp_double(const void* a, const void* b) {
    double x = *(const double*)a, y = *(const double*)b;
    return (x > y) - (x < y);
}

static double median(double* v, int n) {
    if (n == 0) return NAN;
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Per family and solver: problems solved, Coulomb residual within the
 * tolerance, median time and iterations over the family's problems. */
static void print_summary(FILE* f, const bench_row* rows, int n, const bench_options* o) {
    fprintf(f, "\nper family (tolerance %g, at most %d iterations)\n", o->tolerance, (int)o->max_iterations);
    fprintf(f, "%-24s %-7s %8s  %12s  %9s  %12s\n", "family", "solver", "solved", "Coulomb<=tol", "median s",
            "median iters");
    double* t = malloc(((size_t)n + 1) * sizeof *t);
    double* it = malloc(((size_t)n + 1) * sizeof *it);
    if (!t || !it) {
        free(t);
        free(it);
        return;
    }
    for (int a = 0; a < n; ++a) {
        bool first = true; /* the first row of its (family, solver) pair prints the line */
        for (int b = 0; b < a; ++b) {
            if (strcmp(rows[b].family, rows[a].family) == 0 && strcmp(rows[b].solver, rows[a].solver) == 0) {
                first = false;
                break;
            }
        }
        if (!first) continue;
        int count = 0, solved = 0, cou = 0, timed = 0;
        for (int b = a; b < n; ++b) {
            if (strcmp(rows[b].family, rows[a].family) != 0 || strcmp(rows[b].solver, rows[a].solver) != 0) continue;
            count++;
            solved += rows[b].solved;
            cou += rows[b].coulomb_ok;
            if (isfinite(rows[b].seconds)) {
                t[timed] = rows[b].seconds;
                it[timed++] = rows[b].iterations;
            }
        }
        char s1[32], s2[32];
        snprintf(s1, sizeof s1, "%d/%d", solved, count);
        snprintf(s2, sizeof s2, "%d/%d", cou, count);
        fprintf(f, "%-24s %-7s %8s  %12s  %9.2e  %12.0f\n", rows[a].family, rows[a].solver, s1, s2, median(t, timed),
                median(it, timed));
    }
    free(t);
    free(it);
}

int main(int argc, char** argv) {
    bench_options o;
    int pr = parse_options(argc, argv, &o);
    if (pr == 1) return 0;
    if (pr == 2) return 2;
    int nfiles = 0;
    char** files = list_files(o.dir, &nfiles);
    if (!files) {
        fprintf(stderr, "%s: cannot read directory '%s': %s\n", argv[0], o.dir, strerror(errno));
        return 2;
    }
    if (nfiles == 0) fprintf(stderr, "%s: no .hdf5 files in '%s'\n", argv[0], o.dir);

    bench_row* rows = calloc((size_t)nfiles * (size_t)o.solver_count + 1, sizeof *rows);
    if (!rows) {
        fprintf(stderr, "%s: out of memory\n", argv[0]);
        return 1;
    }
    int nrows = 0;
    bool failed = false;
    if (!o.json) {
        printf("dvicontact %s FCLIB benchmark: %s (%d problems), tolerance %g, at most %d iterations, threads %d\n",
               dvi_version_string(), o.dir, nfiles, o.tolerance, (int)o.max_iterations, (int)o.threads);
        printf("residuals: FCLIB's CCP and Coulomb residuals against the file's problem; solved = converged "
               "(apgd/pgs/jacobi: CCP residual; lemke: its pyramid LCP)\n");
        printf("times: fastest of repeated solves (repeated until %g s, at most %d times), from r = 0\n\n",
               BENCH_MIN_SECONDS, BENCH_MAX_REPEATS);
        printf("%-38s %8s  %-7s %7s  %10s  %10s  %-15s %10s\n", "problem", "contacts", "solver", "iters", "CCP res.",
               "Coulomb", "status", "seconds");
        fflush(stdout);
    }
    for (int k = 0; k < nfiles; ++k) {
        size_t len = strlen(o.dir) + strlen(files[k]) + 2;
        char* path = malloc(len);
        if (!path) {
            failed = true;
            break;
        }
        snprintf(path, len, "%s/%s", o.dir, files[k]);
        char msg[1024];
        dvi_ccp_file* file = NULL;
        dvi_fclib_info info;
        dvi_status st = dvi_fclib_read_ex(path, 0, &file, &info, msg, sizeof msg);
        free(path);
        if (st != DVI_OK) {
            fprintf(stderr, "error: %s\n", msg);
            failed = true;
            continue;
        }
        double* gamma = calloc((size_t)file->problem.rows + 1, sizeof *gamma);
        for (int s = 0; gamma && s < o.solver_count; ++s) {
            bench_row* row = &rows[nrows++];
            names_of(files[k], row->problem, sizeof row->problem, row->family, sizeof row->family);
            row->kind = info.kind == DVI_FCLIB_GLOBAL ? "global" : "local";
            row->contacts = info.contacts;
            if (!run_solver(&o, o.solvers[s], file, &info, gamma, row)) failed = true;
            print_row(&o, row);
        }
        if (!gamma) failed = true;
        free(gamma);
        dvi_ccp_file_free(file);
        dvi_fclib_info_clear(&info);
    }
    print_summary(o.json ? stderr : stdout, rows, nrows, &o);
    for (int k = 0; k < nfiles; ++k) free(files[k]);
    free(files);
    free(rows);
    return failed ? 1 : 0;
}
