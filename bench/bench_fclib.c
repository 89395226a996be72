/* dvicontact — FCLIB benchmark: every solver on every FCLIB problem (.hdf5)
 * of one or more directories, one row per (problem, solver), then a summary
 * per problem family and, when Siconos Numerics is built in, a side-by-side
 * of our solvers of Coulomb's law against Siconos's on each problem.
 *
 * The family of a problem is its file name up to "-i<digit>" or
 * "-ex<digit>" (FCLIB's and Siconos's naming of the steps and examples of one
 * simulation), without a trailing "_<digits>" / "-<digits>" group or a
 * trailing step number of three digits or more: "Capsules-i125-1213" and
 * "Capsules-i101-404" are "Capsules", "Rover1039" is "Rover",
 * "NESpheres_30_1" is "NESpheres".
 *
 * Uses only the public API (dvi/io.h): dvi_fclib_read_ex to read a file,
 * dvi_fclib_solve to solve it as the file states it (a splitting around the
 * symmetric part when the file's W is not symmetric), dvi_fclib_evaluate for
 * the residuals, so they are FCLIB's: the CCP residual and the Coulomb
 * residual of Siconos's fc3d_compute_error, normalised by
 * max(‖q‖, ‖r‖, ‖u‖) (docs/fclib.md). Every row reports both, and the law
 * its solver targets (dvi_solver_law). "Solved" is judged by that law: a CCP
 * solver's status is converged (apgd, pgs, jacobi: the CCP residual at most
 * the tolerance; lemke: its pyramid LCP); a solver of Coulomb's law, ours or
 * Siconos's, has a Coulomb residual at most the tolerance. "coulomb_ok" is
 * that Coulomb test for every solver.
 *
 * The reference (siconos_ref.h): Siconos's NSN_AC, PROX and NSGS get the
 * file's own W, q and μ (a global file read again in the Delassus form
 * W = Hᵀ M⁻¹ H), the same tolerance and iteration budget, start from r = 0,
 * and their answers are judged by dvi_fclib_evaluate like ours; Siconos's
 * own error is reported beside. Times are measured the same way for both:
 * the solve call, repeated until BENCH_MIN_SECONDS in total (at most
 * BENCH_MAX_REPEATS times), the fastest kept. Every row runs in a child
 * process stopped after --time-limit seconds (run_row). */
#include "bench_cli.h"
#include "dvi/io.h"
#ifdef DVI_HAVE_SICONOS
#include "siconos_ref.h"
#endif

#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BENCH_MAX_SOLVERS 16
#define BENCH_MAX_DIRS 8
#define BENCH_MIN_SECONDS 0.25 /* repeat shorter solves ... */
#define BENCH_MAX_REPEATS 20   /* ... at most this many times, keep the fastest */

#ifndef DVI_HAVE_SICONOS
#define REF_SOLVER_COUNT 0
static const char* ref_solver_name(int k)
{
    (void)k;
    return NULL;
}
static int ref_solver_find(const char* name)
{
    (void)name;
    return -1;
}
#endif

typedef struct bench_options {
    const char* dirs[BENCH_MAX_DIRS];
    int dir_count;
    char solvers[BENCH_MAX_SOLVERS][32];
    int solver_count;
    double tolerance;
    int32_t max_iterations;
    int32_t threads;
    int32_t lemke_max_size; /* 0: the library's default */
    double time_limit;   /* seconds for all the solves of one row (run_row) */
    bool json;
} bench_options;

typedef struct bench_row {
    char problem[128];
    char family[128];
    const char* kind; /* "local" / "global" */
    int32_t contacts;
    char solver[32];
    const char* law;  /* "ccp" / "coulomb": the law the solver targets */
    bool reference;   /* a Siconos solver */
    int32_t iterations;
    double residual_ccp;
    double residual_coulomb;
    double seconds; /* fastest of the repeats */
    int repeats;
    const char* status;
    bool solved;
    bool coulomb_ok; /* Coulomb residual <= tolerance */
    bool error;
    double own_error; /* Siconos's own error (reference rows), else NaN */
    int own_info;     /* Siconos's driver return (reference rows) */
} bench_row;

static void usage(FILE* f, const char* prog) {
    fprintf(f,
            "usage: %s DIR... [options]\n"
            "Runs every solver on every FCLIB problem (*.hdf5) of the DIRs and prints one row per (problem, solver),\n"
            "then per problem family (the file name up to \"-i<digit>\") the fraction solved and the median time,\n"
            "and, with the reference library built in, our solvers of Coulomb's law beside Siconos's per problem.\n"
            "\n"
            "  --tolerance X          tolerance on the residual of the law the solver targets (default 1e-8)\n"
            "  --max-iterations N     iteration budget per solve, ours and the reference's (default 10000)\n"
            "  --solvers LIST         comma-separated solvers (default: every built-in one, lemke-coulomb (lemke with\n"
            "                         lemke.coulomb and lemke.orient: the Coulomb LCP on friction pyramids), %s%s)\n"
            "  --lemke-max-size N     lemke refuses LCPs of more rows (\"unsupported\"; default: the library's)\n"
            "  --time-limit S         a row (all its repeats) is stopped after S seconds and reported as\n"
            "                         \"time_limit\" (default 60; every row runs in a child process)\n"
            "  --threads N            solver threads (default 1; 0 = library default)\n"
            "  --json                 one JSON object per (problem, solver) on stdout; the summaries go to stderr\n"
            "  --help                 this text\n"
            "\n"
            "Residuals: FCLIB's, against the problem as the file states it (docs/fclib.md): the CCP residual and\n"
            "the Coulomb residual (De Saxce), both normalised by max(|q|, |r|, |u|), the same code for every\n"
            "solver. law: what the solver targets (ccp / coulomb). solved, by that law: CCP solvers converged\n"
            "(apgd, pgs, jacobi: CCP residual <= tolerance; lemke: its pyramid LCP); Coulomb solvers (ours and\n"
            "Siconos's): Coulomb residual <= tolerance. coulomb_ok: Coulomb residual <= tolerance, any solver.\n"
            "Start from r = 0. Times: the solve call's wall time (setup included), repeated until %g s in total\n"
            "(at most %d times), fastest kept. Exit status: 0 unless a file could not be read or a solver failed\n"
            "with an error (a solver refusing a problem, e.g. too large for lemke, is reported as \"unsupported\").\n",
            prog,
#ifdef DVI_HAVE_SICONOS
            "then the reference's: ", "siconos:nsn_ac,siconos:prox,siconos:nsgs",
#else
            "", "no reference library in this build",
#endif
            BENCH_MIN_SECONDS, BENCH_MAX_REPEATS);
}

/* "lemke-coulomb": Lemke with lemke.coulomb and lemke.orient, the Coulomb
 * LCP on friction pyramids, so that Lemke's Coulomb mode is judged by the
 * same Coulomb residual as the other solvers of Coulomb's law. */
#define LEMKE_COULOMB "lemke-coulomb"

static bool is_lemke_coulomb(const char* name) {
    return strcmp(name, LEMKE_COULOMB) == 0;
}

static bool builtin_solver(const char* name, int32_t* index) {
    if (is_lemke_coulomb(name)) name = "lemke";
    for (int32_t i = 0; i < dvi_solver_count(); ++i) {
        if (strcmp(dvi_solver_name(i), name) == 0) {
            if (index) *index = i;
            return true;
        }
    }
    return false;
}

/* --solvers: built-in names and, when built in, the reference's. */
static bool parse_solvers(const char* prog, const char* list, bench_options* o) {
    int n = cli_split_names(list, o->solvers, BENCH_MAX_SOLVERS);
    if (n <= 0) {
        fprintf(stderr, "%s: --solvers: bad list '%s'\n", prog, list);
        return false;
    }
    for (int k = 0; k < n; ++k) {
        if (builtin_solver(o->solvers[k], NULL) || ref_solver_find(o->solvers[k]) >= 0) continue;
        fprintf(stderr, "%s: --solvers: unknown solver '%s' (known:", prog, o->solvers[k]);
        for (int32_t i = 0; i < dvi_solver_count(); ++i) fprintf(stderr, " %s", dvi_solver_name(i));
        fprintf(stderr, " %s", LEMKE_COULOMB);
        for (int i = 0; i < REF_SOLVER_COUNT; ++i) fprintf(stderr, " %s", ref_solver_name(i));
        fprintf(stderr, "%s)\n", REF_SOLVER_COUNT ? "" : "; no reference library in this build");
        return false;
    }
    o->solver_count = n;
    return true;
}

/* Returns 0 to run, 1 to exit successfully (--help), 2 on a usage error. */
static int parse_options(int argc, char** argv, bench_options* o) {
    memset(o, 0, sizeof *o);
    o->solver_count = cli_all_solvers(o->solvers, BENCH_MAX_SOLVERS);
    if (o->solver_count < BENCH_MAX_SOLVERS) snprintf(o->solvers[o->solver_count++], 32, "%s", LEMKE_COULOMB);
    for (int k = 0; k < REF_SOLVER_COUNT && o->solver_count < BENCH_MAX_SOLVERS; ++k)
        snprintf(o->solvers[o->solver_count++], 32, "%s", ref_solver_name(k));
    o->tolerance = 1e-8;
    o->max_iterations = 10000;
    o->threads = 1;
    o->time_limit = 60.0;
    for (int i = 1; i < argc; ++i) {
        const char* a = argv[i];
        const char* val = i + 1 < argc ? argv[i + 1] : NULL;
        int r;
        int64_t v;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout, argv[0]);
            return 1;
        } else if (strcmp(a, "--json") == 0) {
            o->json = true;
        } else if (strcmp(a, "--tolerance") == 0 && val) {
            if (!cli_double(argv[0], "--tolerance", val, 0.0, true, INFINITY, "a number > 0", &o->tolerance)) return 2;
            ++i;
        } else if (strcmp(a, "--solvers") == 0 && val) {
            if (!parse_solvers(argv[0], val, o)) return 2;
            ++i;
        } else if (strcmp(a, "--time-limit") == 0 && val) {
            if (!cli_double(argv[0], a, val, 0.0, true, 1e6, "a number of seconds > 0", &o->time_limit))
                return 2;
            ++i;
        } else if (strcmp(a, "--lemke-max-size") == 0 && val) {
            if (!cli_int(argv[0], a, val, 1, INT32_MAX, "a positive integer", &v)) return 2;
            o->lemke_max_size = (int32_t)v;
            ++i;
        } else if ((r = cli_solver_option(argv[0], a, val, o->solvers, BENCH_MAX_SOLVERS, &o->solver_count,
                                          &o->max_iterations, &o->threads)) != 0) {
            if (r < 0) return 2;
            ++i;
        } else if (a[0] != '-') {
            if (o->dir_count == BENCH_MAX_DIRS) {
                fprintf(stderr, "%s: at most %d directories\n", argv[0], BENCH_MAX_DIRS);
                return 2;
            }
            o->dirs[o->dir_count++] = a;
        } else {
            fprintf(stderr, "%s: unknown or incomplete option '%s' (see --help)\n", argv[0], a);
            return 2;
        }
    }
    if (o->dir_count == 0) {
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

/* Appends the *.hdf5 / *.h5 files of dir, sorted by name, as "dir/name"
 * (malloc'd) to *names (count *n, capacity *cap). False when dir cannot be
 * read or memory runs out. */
static bool list_files(const char* dir, char*** names, int* n, int* cap) {
    DIR* d = opendir(dir);
    if (!d) return false;
    int first = *n;
    bool ok = true;
    struct dirent* e;
    while (ok && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.' || !(ends_with(e->d_name, ".hdf5") || ends_with(e->d_name, ".h5"))) continue;
        if (*n == *cap) {
            int c = *cap ? 2 * *cap : 16;
            char** more = realloc(*names, (size_t)c * sizeof *more);
            if (!more) {
                ok = false;
                break;
            }
            *names = more;
            *cap = c;
        }
        size_t len = strlen(dir) + strlen(e->d_name) + 2;
        char* path = malloc(len);
        if (!path) {
            ok = false;
            break;
        }
        snprintf(path, len, "%s/%s", dir, e->d_name);
        (*names)[(*n)++] = path;
    }
    closedir(d);
    if (*n > first) qsort(*names + first, (size_t)(*n - first), sizeof **names, cmp_names);
    return ok;
}

static bool is_digit(char c) {
    return c >= '0' && c <= '9';
}

/* ".../Capsules-i125-1213.hdf5" -> problem "Capsules-i125-1213", family
 * "Capsules" (the rule of the header comment). */
static void names_of(const char* path, char* problem, size_t np, char* family, size_t nf) {
    const char* base = strrchr(path, '/');
    snprintf(problem, np, "%s", base ? base + 1 : path);
    char* dot = strrchr(problem, '.');
    if (dot) *dot = '\0';
    snprintf(family, nf, "%s", problem);
    for (char* s = family + 1; *s; s++) {
        if (s[0] == '-' && ((s[1] == 'i' && is_digit(s[2])) || (s[1] == 'e' && s[2] == 'x' && is_digit(s[3])))) {
            *s = '\0';
            break;
        }
    }
    size_t n = strlen(family);
    for (;;) { /* trailing "_<digits>" / "-<digits>" groups */
        size_t k = n;
        while (k > 0 && is_digit(family[k - 1])) k--;
        if (k == n || k < 2 || (family[k - 1] != '_' && family[k - 1] != '-')) break;
        n = k - 1;
        family[n] = '\0';
    }
    size_t k = n; /* a trailing step number: three digits or more */
    while (k > 0 && is_digit(family[k - 1])) k--;
    if (n - k >= 3 && k > 0) family[k] = '\0';
}

static void print_row(const bench_options* o, const bench_row* r) {
    if (o->json) {
        printf("{\"problem\":\"%s\",\"family\":\"%s\",\"kind\":\"%s\",\"contacts\":%d,\"solver\":\"%s\",\"law\":\"%s\","
               "\"iterations\":%d,\"residual_ccp\":",
               r->problem, r->family, r->kind, (int)r->contacts, r->solver, r->law, (int)r->iterations);
        cli_json_number(stdout, r->residual_ccp);
        printf(",\"residual_coulomb\":");
        cli_json_number(stdout, r->residual_coulomb);
        printf(",\"seconds\":");
        cli_json_number(stdout, r->seconds);
        printf(",\"status\":\"%s\",\"solved\":%s,\"coulomb_ok\":%s,\"reference\":%s,\"repeats\":%d,\"tolerance\":%g,"
               "\"max_iterations\":%d,\"threads\":%d",
               r->status, r->solved ? "true" : "false", r->coulomb_ok ? "true" : "false",
               r->reference ? "true" : "false", r->repeats, o->tolerance, (int)o->max_iterations, (int)o->threads);
        if (r->reference) {
            printf(",\"siconos_error\":");
            cli_json_number(stdout, r->own_error);
            printf(",\"siconos_info\":%d", r->own_info);
        }
        printf("}\n");
    } else {
        printf("%-38s %8d  %-14s %-7s %7d  %10.3e  %10.3e  %-15s %-3s %-3s %10.6f", r->problem, (int)r->contacts,
               r->solver, r->law, (int)r->iterations, r->residual_ccp, r->residual_coulomb, r->status,
               r->solved ? "yes" : "no", r->coulomb_ok ? "yes" : "no", r->seconds);
        if (r->reference) printf("  (own error %.3e)", r->own_error);
        printf("\n");
    }
    fflush(stdout);
}

static void row_start(bench_row* row, const char* name) {
    snprintf(row->solver, sizeof row->solver, "%s", name);
    row->status = "error";
    row->residual_ccp = NAN;
    row->residual_coulomb = NAN;
    row->seconds = NAN;
    row->own_error = NAN;
}

/* What the child process of a row sends back (run_row). */
typedef struct row_report {
    int ok;              /* 0: an error, in message */
    int unsupported;     /* the solver refused the problem */
    int32_t iterations;  /* of the last solve (every solve starts from r = 0 and gives the same answer) */
    int repeats;
    double best;         /* the fastest solve's seconds */
    double residual_ccp; /* dvi_fclib_evaluate on the last answer */
    double residual_coulomb;
    int status;          /* ours: dvi_solve_status; reference: 0 converged, 1 max_iterations, 2 failed */
    double own_error;    /* reference: Siconos's own error */
    int own_info;        /* reference: the driver's return */
    char message[320];
} row_report;

/* In the child: one of our solvers, repeated by the timing rule. */
static void child_ours(const bench_options* o, const char* name, const dvi_ccp_file* file, const dvi_fclib_info* info,
                       double* gamma, row_report* rep) {
    dvi_solver_settings s = dvi_default_solver_settings();
    s.max_iterations = o->max_iterations;
    s.tolerance = o->tolerance;
    s.threads = o->threads;
    s.warm_start = false;
    if (o->lemke_max_size > 0) s.lemke.max_lcp_size = o->lemke_max_size;
    if (is_lemke_coulomb(name)) {
        s.lemke.coulomb = true;
        s.lemke.orient = true;
        name = "lemke";
    }
    double total = 0.0;
    dvi_solve_result res;
    dvi_status st = DVI_OK;
    while (rep->repeats < BENCH_MAX_REPEATS && total < BENCH_MIN_SECONDS) {
        memset(&res, 0, sizeof res);
        st = dvi_fclib_solve(name, &s, &file->problem, info, gamma, &res);
        if (st < 0) break;
        rep->repeats++;
        total += res.seconds;
        if (res.seconds < rep->best) rep->best = res.seconds;
    }
    if (st == DVI_ERR_UNSUPPORTED) { /* e.g. Lemke on an LCP above its size limit */
        rep->unsupported = 1;
        return;
    }
    if (st < 0) {
        rep->ok = 0;
        snprintf(rep->message, sizeof rep->message, "%.40s (%.255s)", dvi_status_string(st), res.message);
        return;
    }
    rep->iterations = res.iterations;
    rep->status = (int)res.status;
    rep->residual_ccp = res.metrics.residual; /* dvi_fclib_evaluate on the answer (dvi_fclib_solve) */
    rep->residual_coulomb = res.metrics.residual_coulomb;
}

#ifdef DVI_HAVE_SICONOS
/* The problem handed to the reference: the file's own W (a global file read
 * again in the Delassus form), q = the problem's r, μ of its contacts. */
typedef struct ref_input {
    bool tried, ok;
    dvi_ccp_file* delassus; /* the second reading of a global file in the factor form, or NULL */
    dvi_fclib_info delassus_info;
    dvi_csc W;
    double* mu;
} ref_input;

static bool ref_prepare(ref_input* in, const char* path, const dvi_ccp_file* file, const dvi_fclib_info* info) {
    if (in->tried) return in->ok;
    in->tried = true;
    if (info->equalities > 0) return false; /* Siconos's local problem has no equality rows */
    const dvi_ccp_problem* p = &file->problem;
    const dvi_fclib_info* pi = info;
    if (!p->W) {
        char msg[512];
        if (dvi_fclib_read_ex(path, DVI_FCLIB_DELASSUS, &in->delassus, &in->delassus_info, msg, sizeof msg) != DVI_OK) {
            fprintf(stderr, "error: %s\n", msg);
            return false;
        }
        p = &in->delassus->problem;
        pi = &in->delassus_info;
    }
    if (dvi_fclib_file_W(p, pi, &in->W) != DVI_OK) return false;
    in->mu = malloc(((size_t)info->contacts + 1) * sizeof *in->mu);
    if (!in->mu) return false;
    for (int32_t a = 0; a < info->contacts; ++a) in->mu[a] = p->blocks[a].mu;
    in->ok = true;
    return true;
}

static void ref_release(ref_input* in) {
    if (in->delassus) dvi_ccp_file_free(in->delassus);
    dvi_fclib_info_clear(&in->delassus_info);
    free(in->mu);
    memset(in, 0, sizeof *in);
}

/* In the child: reference solver k, repeated by the timing rule, its answer
 * judged by our residuals. */
static void child_ref(const bench_options* o, int k, const ref_input* in, const dvi_ccp_file* file,
                      const dvi_fclib_info* info, double* gamma, row_report* rep) {
    const dvi_ccp_problem* q = in->delassus ? &in->delassus->problem : &file->problem;
    double* u = malloc((3 * (size_t)info->contacts + 1) * sizeof *u);
    ref_result last = {0};
    double total = 0.0;
    while (u && rep->repeats < BENCH_MAX_REPEATS && total < BENCH_MIN_SECONDS) {
        if (!ref_solve(k, &in->W, q->r, in->mu, info->contacts, o->tolerance, o->max_iterations, gamma, u, &last)) {
            free(u);
            u = NULL;
            break;
        }
        rep->repeats++;
        total += last.seconds;
        if (last.seconds < rep->best) rep->best = last.seconds;
    }
    free(u);
    dvi_ccp_metrics met;
    if (rep->repeats == 0 || dvi_fclib_evaluate(&file->problem, info, gamma, &met) != DVI_OK) {
        rep->ok = 0;
        snprintf(rep->message, sizeof rep->message, "%s", rep->repeats ? "cannot evaluate the answer" : "out of memory");
        return;
    }
    rep->iterations = last.iterations;
    rep->status = last.info == 0 ? 0 : last.iterations >= o->max_iterations ? 1 : 2;
    rep->own_error = last.error;
    rep->own_info = last.info;
    rep->residual_ccp = met.residual;
    rep->residual_coulomb = met.residual_coulomb;
}
#endif

static bool write_all(int fd, const void* data, size_t n) {
    const char* p = data;
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return false;
        p += w;
        n -= (size_t)w;
    }
    return true;
}

static double monotonic(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Reads n bytes before the deadline (monotonic() seconds): 1 done, 0 the
 * deadline passed, −1 end of file or error. */
static int read_until(int fd, void* data, size_t n, double deadline) {
    char* p = data;
    while (n > 0) {
        double left = deadline - monotonic();
        if (left <= 0.0) return 0;
        struct pollfd pfd = {fd, POLLIN, 0};
        int pr = poll(&pfd, 1, (int)(left * 1000.0) + 1);
        if (pr < 0 && errno == EINTR) continue;
        if (pr < 0) return -1;
        if (pr == 0) continue; /* the loop checks the deadline */
        ssize_t r = read(fd, p, n);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return -1;
        p += r;
        n -= (size_t)r;
    }
    return 1;
}

static const char* ref_status_string(int status) {
    return status == 0 ? "converged" : status == 1 ? "max_iterations" : "failed";
}

/* One row: solver s (ours, or the reference's when ref >= 0) on the file.
 * The solves (the repeats of the timing rule) and the evaluation run in a
 * child process, stopped after --time-limit seconds: neither library has a
 * time limit of its own (Siconos's PROX runs an inner Newton solve to its
 * own budget at each iteration; a Newton method on a large problem may take
 * minutes for its 10,000 iterations), and a solver that exits or crashes
 * takes the bench with it no further. The row then says "time_limit" or
 * "crashed". The child writes on stderr only; the parent never solves, so
 * no thread pool is running when it forks. Returns false on an error. */
static bool run_row(const bench_options* o, const char* name, int ref, void* ref_in, const dvi_ccp_file* file,
                    const dvi_fclib_info* info, double* gamma, bench_row* row) {
    row_start(row, name);
    row->reference = ref >= 0;
    if (ref >= 0) {
        row->law = dvi_friction_law_string(DVI_LAW_COULOMB);
    } else {
        int32_t index = 0;
        builtin_solver(name, &index);
        row->law = dvi_friction_law_string(is_lemke_coulomb(name) ? DVI_LAW_COULOMB : dvi_solver_law(index));
    }
    int fd[2];
    fflush(stdout);
    fflush(stderr);
    if (pipe(fd) != 0) {
        fprintf(stderr, "error: %s, %s: pipe: %s\n", row->problem, name, strerror(errno));
        row->error = true;
        return false;
    }
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "error: %s, %s: fork: %s\n", row->problem, name, strerror(errno));
        close(fd[0]);
        close(fd[1]);
        row->error = true;
        return false;
    }
    if (pid == 0) { /* the child: solve, report, leave without flushing the parent's buffers */
        close(fd[0]);
        dup2(2, 1);
        row_report rep = {.ok = 1, .best = INFINITY, .residual_ccp = NAN, .residual_coulomb = NAN, .own_error = NAN};
#ifdef DVI_HAVE_SICONOS
        if (ref >= 0)
            child_ref(o, ref, ref_in, file, info, gamma, &rep);
        else
#endif
            child_ours(o, name, file, info, gamma, &rep);
        _exit(write_all(fd[1], &rep, sizeof rep) ? 0 : 1);
    }
    (void)ref_in;
    close(fd[1]);
    row_report rep;
    int got = read_until(fd[0], &rep, sizeof rep, monotonic() + o->time_limit);
    close(fd[0]);
    if (got == 0) kill(pid, SIGKILL);
    int wstatus = 0;
    while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
    }
    if (got != 1) {
        row->status = got == 0 ? "time_limit" : "crashed";
        return true;
    }
    row->repeats = rep.repeats;
    if (rep.unsupported) {
        row->status = "unsupported";
        return true;
    }
    if (!rep.ok) {
        fprintf(stderr, "error: %s, %s: %s\n", row->problem, name, rep.message);
        row->error = true;
        return false;
    }
    row->iterations = rep.iterations;
    row->seconds = rep.best;
    row->residual_ccp = rep.residual_ccp;
    row->residual_coulomb = rep.residual_coulomb;
    row->coulomb_ok = rep.residual_coulomb <= o->tolerance;
    if (ref >= 0) {
        row->status = ref_status_string(rep.status);
        row->own_error = rep.own_error;
        row->own_info = rep.own_info;
        row->solved = row->coulomb_ok;
    } else {
        row->status = dvi_solve_status_string((dvi_solve_status)rep.status);
        row->solved = strcmp(row->law, "coulomb") == 0 ? row->coulomb_ok : rep.status == DVI_SOLVE_CONVERGED;
    }
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
    fprintf(f, "\nper family (tolerance %g, at most %d iterations; solved by the solver's law)\n", o->tolerance,
            (int)o->max_iterations);
    fprintf(f, "%-34s %-14s %-7s %8s  %12s  %9s  %12s\n", "family", "solver", "law", "solved", "Coulomb<=tol",
            "median s", "median iters");
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
        fprintf(f, "%-34s %-14s %-7s %8s  %12s  %9.2e  %12.0f\n", rows[a].family, rows[a].solver, rows[a].law, s1, s2,
                median(t, timed), median(it, timed));
    }
    free(t);
    free(it);
}

/* "ok 1.23e-03" / "no 1.23e-03" / "-" (not run or refused) into buf. */
static void verdict(const bench_row* r, char* buf, size_t n) {
    if (!r || !isfinite(r->seconds))
        snprintf(buf, n, "%s", r ? r->status : "-");
    else
        snprintf(buf, n, "%s %.2e", r->solved ? "ok" : "no", r->seconds);
}

/* Our solvers of Coulomb's law beside the reference's, per problem (rows
 * grouped by problem in file order, so the table follows the files): each
 * cell "ok/no time" by the Coulomb residual, and for ours the ratio of
 * times ours / the reference's where both solved it. Then per pair the
 * problems both, only ours, only the reference's, neither solved and the
 * median ratio over the problems both solved. */
static void print_side_by_side(FILE* f, const bench_row* rows, int n, const bench_options* o) {
    int nref = 0, nours = 0;
    const char* ref[BENCH_MAX_SOLVERS];
    const char* ours[BENCH_MAX_SOLVERS];
    for (int s = 0; s < o->solver_count; ++s) {
        int32_t idx = 0;
        if (ref_solver_find(o->solvers[s]) >= 0)
            ref[nref++] = o->solvers[s];
        else if (builtin_solver(o->solvers[s], &idx) &&
                 (dvi_solver_law(idx) == DVI_LAW_COULOMB || is_lemke_coulomb(o->solvers[s])))
            ours[nours++] = o->solvers[s];
    }
    if (nref == 0) {
        fprintf(f, "\nside by side: no reference solver run (%s)\n",
                REF_SOLVER_COUNT ? "none in --solvers" : "this build has no Siconos Numerics");
        return;
    }
    fprintf(f, "\nside by side, Coulomb's law (tolerance %g on the Coulomb residual, at most %d iterations; cells: "
               "solved? fastest time s; x = ours / the reference's time)\n",
            o->tolerance, (int)o->max_iterations);
    if (nours == 0) fprintf(f, "(no built-in solver of Coulomb's law: the reference alone)\n");
    fprintf(f, "%-38s %8s  %-8s %-15s", "problem", "contacts", "ours", "");
    for (int k = 0; k < nref; ++k) fprintf(f, k + 1 < nref ? "  %-26s" : "  %s", ref[k]);
    fprintf(f, "\n");
    for (int a = 0; a < n; ++a) {
        if (a > 0 && strcmp(rows[a - 1].problem, rows[a].problem) == 0) continue; /* first row of a problem */
        const bench_row* rr[BENCH_MAX_SOLVERS] = {0};
        for (int k = 0; k < nref; ++k)
            for (int b = a; b < n && strcmp(rows[b].problem, rows[a].problem) == 0; ++b)
                if (strcmp(rows[b].solver, ref[k]) == 0) rr[k] = &rows[b];
        for (int s = 0; s < (nours ? nours : 1); ++s) {
            const bench_row* mine = NULL;
            for (int b = a; nours && b < n && strcmp(rows[b].problem, rows[a].problem) == 0; ++b)
                if (strcmp(rows[b].solver, ours[s]) == 0) mine = &rows[b];
            char c[64];
            verdict(mine, c, sizeof c);
            fprintf(f, "%-38s %8d  %-8s %-15s", rows[a].problem, (int)rows[a].contacts, nours ? ours[s] : "-",
                    nours ? c : "");
            for (int k = 0; k < nref; ++k) {
                char cell[64], cell2[80];
                verdict(rr[k], cell, sizeof cell);
                if (mine && rr[k] && mine->solved && rr[k]->solved && rr[k]->seconds > 0.0)
                    snprintf(cell2, sizeof cell2, "%s x%.3g", cell, mine->seconds / rr[k]->seconds);
                else
                    snprintf(cell2, sizeof cell2, "%s", cell);
                fprintf(f, k + 1 < nref ? "  %-26s" : "  %s", cell2);
            }
            fprintf(f, "\n");
        }
    }
    if (nours == 0) return;
    fprintf(f, "\n%-8s %-15s %6s %6s %6s %6s  %12s\n", "ours", "reference", "both", "ours", "theirs", "none",
            "median x");
    double* ratio = malloc(((size_t)n + 1) * sizeof *ratio);
    if (!ratio) return;
    for (int s = 0; s < nours; ++s) {
        for (int k = 0; k < nref; ++k) {
            int both = 0, only_ours = 0, only_ref = 0, none = 0;
            for (int a = 0; a < n; ++a) {
                if (strcmp(rows[a].solver, ours[s]) != 0) continue;
                const bench_row* t = NULL;
                for (int b = 0; b < n; ++b)
                    if (strcmp(rows[b].problem, rows[a].problem) == 0 && strcmp(rows[b].solver, ref[k]) == 0) t = &rows[b];
                if (!t) continue;
                if (rows[a].solved && t->solved)
                    ratio[both++] = rows[a].seconds / t->seconds;
                else if (rows[a].solved)
                    only_ours++;
                else if (t->solved)
                    only_ref++;
                else
                    none++;
            }
            fprintf(f, "%-8s %-15s %6d %6d %6d %6d  %12.3g\n", ours[s], ref[k], both, only_ours, only_ref, none,
                    median(ratio, both));
        }
    }
    free(ratio);
}

int main(int argc, char** argv) {
    bench_options o;
    int pr = parse_options(argc, argv, &o);
    if (pr == 1) return 0;
    if (pr == 2) return 2;
    int nfiles = 0, cap = 0;
    char** files = NULL;
    for (int d = 0; d < o.dir_count; ++d) {
        if (!list_files(o.dirs[d], &files, &nfiles, &cap)) {
            fprintf(stderr, "%s: cannot read directory '%s': %s\n", argv[0], o.dirs[d], strerror(errno));
            return 2;
        }
    }
    if (nfiles == 0) fprintf(stderr, "%s: no .hdf5 files in the directories given\n", argv[0]);

    bench_row* rows = calloc((size_t)nfiles * (size_t)o.solver_count + 1, sizeof *rows);
    if (!rows) {
        fprintf(stderr, "%s: out of memory\n", argv[0]);
        return 1;
    }
    int nrows = 0;
    bool failed = false;
    if (!o.json) {
        printf("dvicontact %s FCLIB benchmark: %d problems, tolerance %g, at most %d iterations, threads %d%s\n",
               dvi_version_string(), nfiles, o.tolerance, (int)o.max_iterations, (int)o.threads,
               REF_SOLVER_COUNT ? "; reference: Siconos Numerics" : "");
        printf("residuals: FCLIB's CCP and Coulomb residuals against the file's problem, the same code for every "
               "solver; law: what the solver targets; solved by that law (ccp: converged; coulomb: Coulomb "
               "residual <= tol); C.ok: Coulomb residual <= tol\n");
        printf("times: fastest of repeated solves (repeated until %g s, at most %d times), from r = 0\n\n",
               BENCH_MIN_SECONDS, BENCH_MAX_REPEATS);
        printf("%-38s %8s  %-14s %-7s %7s  %10s  %10s  %-15s %-3s %-3s %10s\n", "problem", "contacts", "solver", "law",
               "iters", "CCP res.", "Coulomb", "status", "ok", "C.ok", "seconds");
        fflush(stdout);
    }
    for (int k = 0; k < nfiles; ++k) {
        char msg[1024];
        dvi_ccp_file* file = NULL;
        dvi_fclib_info info;
        dvi_status st = dvi_fclib_read_ex(files[k], 0, &file, &info, msg, sizeof msg);
        if (st != DVI_OK) {
            fprintf(stderr, "error: %s\n", msg);
            failed = true;
            continue;
        }
#ifdef DVI_HAVE_SICONOS
        ref_input in = {0};
#endif
        double* gamma = calloc((size_t)file->problem.rows + 1, sizeof *gamma);
        for (int s = 0; gamma && s < o.solver_count; ++s) {
            bench_row* row = &rows[nrows++];
            names_of(files[k], row->problem, sizeof row->problem, row->family, sizeof row->family);
            row->kind = info.kind == DVI_FCLIB_GLOBAL ? "global" : "local";
            row->contacts = info.contacts;
            int ref = ref_solver_find(o.solvers[s]);
            void* ref_in = NULL;
#ifdef DVI_HAVE_SICONOS
            if (ref >= 0 && !ref_prepare(&in, files[k], file, &info)) { /* Siconos cannot take this problem */
                row_start(row, o.solvers[s]);
                row->law = dvi_friction_law_string(DVI_LAW_COULOMB);
                row->reference = true;
                row->status = "unsupported";
                print_row(&o, row);
                continue;
            }
            ref_in = &in;
#endif
            bool ok = run_row(&o, o.solvers[s], ref, ref_in, file, &info, gamma, row);
            if (!ok) failed = true;
            print_row(&o, row);
        }
        if (!gamma) failed = true;
        free(gamma);
#ifdef DVI_HAVE_SICONOS
        ref_release(&in);
#endif
        dvi_ccp_file_free(file);
        dvi_fclib_info_clear(&info);
    }
    print_summary(o.json ? stderr : stdout, rows, nrows, &o);
    print_side_by_side(o.json ? stderr : stdout, rows, nrows, &o);
    for (int k = 0; k < nfiles; ++k) free(files[k]);
    free(files);
    free(rows);
    return failed ? 1 : 0;
}
