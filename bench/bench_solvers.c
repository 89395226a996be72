/* dvicontact — solver benchmark: every solver on the "stack" and "granular"
 * problem families at growing sizes, one table row per (family, size, solver).
 *
 * Uses only the public API (dvi/ccp.h) and the problem generators. Time per
 * iteration is the solver's own wall time (result.seconds, setup included)
 * divided by its iteration count; ns/iter/contact divides that by the number
 * of contacts, so a solver whose cost is linear in the problem size shows a
 * flat ns/iter/contact column. */
#include "bench_cli.h"
#include "dvi/ccp.h"
#include "problems.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BENCH_MAX_SOLVERS 8
#define BENCH_MAX_FAMILIES 2
#define BENCH_MAX_SIZES 7
#define BENCH_MAX_ROWS (BENCH_MAX_FAMILIES * BENCH_MAX_SIZES * BENCH_MAX_SOLVERS)

#define BENCH_TOLERANCE 1e-6
#define BENCH_MU 0.5
#define BENCH_STEP 0.01
#define BENCH_SEED 20240601u
#define BENCH_STACK_HEIGHT 5
#define BENCH_LEMKE_MAX_CONTACTS 200
#define BENCH_QUICK_MAX_CONTACTS 3000
#define BENCH_MIN_SECONDS 0.25 /* repeat shorter solves ... */
#define BENCH_MAX_REPEATS 20  /* ... at most this many times, keep the fastest */

static const int32_t bench_sizes[BENCH_MAX_SIZES] = {100, 300, 1000, 3000, 10000, 30000, 100000};
static const char* const bench_families[BENCH_MAX_FAMILIES] = {"stack", "granular"};

typedef struct bench_options {
    bool family_on[BENCH_MAX_FAMILIES];
    char solvers[BENCH_MAX_SOLVERS][32];
    int solver_count;
    int64_t max_contacts;
    int32_t max_iterations;
    int32_t threads;
    bool json;
    bool frames;        /* contacts given by frames (dvi_gen_use_frames) */
} bench_options;

typedef struct bench_row {
    char family[32];
    char solver[32];
    int32_t target;     /* size asked for */
    int32_t contacts;   /* size produced */
    int32_t iterations;
    double residual;        /* CCP residual of the returned γ (same measure for every solver) */
    double target_residual; /* residual of the problem the solver targets */
    const char* status;
    bool converged;
    bool error;
    double seconds;         /* fastest of the repeats */
    int repeats;
    double ms_per_iter;
    double ns_per_iter_per_contact;
    double bytes_per_contact_iter; /* dvi_solve_result.bytes_per_iteration / contacts */
} bench_row;

static void usage(FILE* f, const char* prog) {
    fprintf(f,
            "usage: %s [options]\n"
            "Runs CCP solvers on the \"stack\" and \"granular\" problem families at growing sizes\n"
            "(about 100, 300, 1000, 3000, 10000, 30000, 100000 contacts) and prints a table.\n"
            "\n"
            "  --families LIST        comma-separated families (default stack,granular)\n"
            "  --solvers LIST         comma-separated solvers (default: all built-in: apgd,pgs,jacobi,lemke);\n"
            "                         lemke runs only on problems of at most %d contacts\n"
            "  --max-contacts N       skip sizes above N contacts\n"
            "  --max-iterations N     iteration budget per solve (default 5000)\n"
            "  --threads N            solver threads (default 1; 0 = library default)\n"
            "  --frames               give the contacts by their frames and lever arms (dvi_ccp_frames)\n"
            "                         instead of columns of D\n"
            "  --quick                sizes up to %d contacts only\n"
            "  --json                 one JSON object per row on stdout (checks go to stderr)\n"
            "  --help                 this text\n"
            "\n"
            "Problems: stack = columns of %d boxes, 4 corner contacts per interface; granular = FCC sphere\n"
            "packing in a box. mu = %g, h = %g s, tolerance %g on the CCP residual, zero initial guess.\n"
            "Timing: a solve's own wall time (result.seconds, setup included); solves are repeated until\n"
            "%g s in total (at most %d times) and the fastest is reported. ms/iter = seconds / iterations,\n"
            "ns/it/cont = that / contacts; \"total s\" is the seconds of that one solve.\n"
            "Exit status: 0 unless a problem could not be built or a solver returned an error.\n",
            prog, BENCH_LEMKE_MAX_CONTACTS, BENCH_QUICK_MAX_CONTACTS, BENCH_STACK_HEIGHT, BENCH_MU, BENCH_STEP,
            BENCH_TOLERANCE, BENCH_MIN_SECONDS, BENCH_MAX_REPEATS);
}

static int family_index(const char* name) {
    for (int f = 0; f < BENCH_MAX_FAMILIES; ++f) {
        if (strcmp(bench_families[f], name) == 0) return f;
    }
    return -1;
}

/* Returns 0 to run, 1 to exit successfully (--help), 2 on a usage error. */
static int parse_options(int argc, char** argv, bench_options* o) {
    memset(o, 0, sizeof *o);
    for (int f = 0; f < BENCH_MAX_FAMILIES; ++f) o->family_on[f] = true;
    o->solver_count = cli_all_solvers(o->solvers, BENCH_MAX_SOLVERS);
    o->max_contacts = INT32_MAX;
    o->max_iterations = 5000;
    o->threads = 1;
    o->json = false;
    bool quick = false;
    for (int i = 1; i < argc; ++i) {
        const char* a = argv[i];
        const char* val = i + 1 < argc ? argv[i + 1] : NULL;
        int64_t v = 0;
        int r;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout, argv[0]);
            return 1;
        } else if (strcmp(a, "--frames") == 0) {
            o->frames = true;
        } else if (strcmp(a, "--json") == 0) {
            o->json = true;
        } else if (strcmp(a, "--quick") == 0) {
            quick = true;
        } else if (strcmp(a, "--families") == 0 && val) {
            char items[BENCH_MAX_FAMILIES * 4][32];
            int n = cli_split_names(val, items, BENCH_MAX_FAMILIES * 4);
            if (n <= 0) {
                fprintf(stderr, "%s: --families: bad list '%s'\n", argv[0], val);
                return 2;
            }
            for (int f = 0; f < BENCH_MAX_FAMILIES; ++f) o->family_on[f] = false;
            for (int k = 0; k < n; ++k) {
                int f = family_index(items[k]);
                if (f < 0) {
                    fprintf(stderr, "%s: --families: unknown family '%s' (known: stack, granular)\n", argv[0],
                            items[k]);
                    return 2;
                }
                o->family_on[f] = true;
            }
            ++i;
        } else if ((r = cli_solver_option(argv[0], a, val, o->solvers, BENCH_MAX_SOLVERS, &o->solver_count,
                                          &o->max_iterations, &o->threads)) != 0) {
            if (r < 0) return 2;
            ++i;
        } else if (strcmp(a, "--max-contacts") == 0 && val) {
            if (!cli_int(argv[0], "--max-contacts", val, 1, INT32_MAX, "a positive integer", &v)) return 2;
            o->max_contacts = v;
            ++i;
        } else {
            fprintf(stderr, "%s: unknown or incomplete option '%s' (see --help)\n", argv[0], a);
            return 2;
        }
    }
    if (quick && o->max_contacts > BENCH_QUICK_MAX_CONTACTS) o->max_contacts = BENCH_QUICK_MAX_CONTACTS;
    return 0;
}

/* Builds family f at about `target` contacts. */
static dvi_status build_problem(int f, int32_t target, dvi_gen_problem* g) {
    if (f == 0) {
        int32_t columns = (target + 2 * BENCH_STACK_HEIGHT) / (4 * BENCH_STACK_HEIGHT);
        if (columns < 1) columns = 1;
        return dvi_gen_box_stacks(columns, BENCH_STACK_HEIGHT, BENCH_MU, BENCH_STEP, BENCH_SEED, g);
    }
    return dvi_gen_granular(target, BENCH_MU, BENCH_STEP, BENCH_SEED, g);
}

static void print_row(const bench_options* o, const bench_row* r) {
    if (o->json) {
        printf("{\"family\":\"%s\",\"contacts\":%d,\"solver\":\"%s\",\"iterations\":%d,\"residual\":", r->family,
               (int)r->contacts, r->solver, (int)r->iterations);
        cli_json_number(stdout, r->residual);
        printf(",\"status\":\"%s\",\"ns_per_iter_per_contact\":", r->status);
        cli_json_number(stdout, r->ns_per_iter_per_contact);
        printf(",\"target_residual\":");
        cli_json_number(stdout, r->target_residual);
        printf(",\"ms_per_iter\":");
        cli_json_number(stdout, r->ms_per_iter);
        printf(",\"seconds\":");
        cli_json_number(stdout, r->seconds);
        printf(",\"bytes_per_contact_iter\":");
        cli_json_number(stdout, r->bytes_per_contact_iter);
        printf(",\"form\":\"%s\"", o->frames ? "frames" : "columns");
        printf(",\"repeats\":%d,\"threads\":%d,\"max_iterations\":%d,\"tolerance\":%g}\n", r->repeats, (int)o->threads,
               (int)o->max_iterations, BENCH_TOLERANCE);
    } else {
        printf("%-9s %8d  %-7s %7d  %10.3e  %-15s %10.4f  %10.2f  %9.3f  %8.0f\n", r->family, (int)r->contacts,
               r->solver, (int)r->iterations, r->residual, r->status, r->ms_per_iter, r->ns_per_iter_per_contact,
               r->seconds, r->bytes_per_contact_iter);
    }
    fflush(stdout);
}

/* Solves g with one solver and fills *row. Returns false on an error.
 * Short solves are repeated (fresh solver and zero initial guess each time)
 * until BENCH_MIN_SECONDS of solving or BENCH_MAX_REPEATS, and the fastest
 * is kept, so that small sizes are not dominated by timer and scheduler noise. */
static bool run_solver(const bench_options* o, const char* name, const dvi_gen_problem* g, double* gamma,
                       bench_row* row) {
    dvi_solver_settings s = dvi_default_solver_settings();
    s.max_iterations = o->max_iterations;
    s.tolerance = BENCH_TOLERANCE;
    s.threads = o->threads;
    s.warm_start = false;
    snprintf(row->solver, sizeof row->solver, "%s", name);
    row->status = "error";
    row->residual = NAN;
    row->target_residual = NAN;
    row->ms_per_iter = NAN;
    row->ns_per_iter_per_contact = NAN;

    double total = 0.0, best = INFINITY;
    dvi_solve_result res;
    dvi_status st = DVI_OK;
    int repeats = 0;
    while (repeats < BENCH_MAX_REPEATS && total < BENCH_MIN_SECONDS) {
        dvi_solver* solver = NULL;
        st = dvi_solver_create(name, &s, &solver);
        if (st != DVI_OK) {
            fprintf(stderr, "error: %s: cannot create solver %s: %s\n", g->family, name, dvi_error_message());
            row->error = true;
            return false;
        }
        memset(&res, 0, sizeof res);
        st = dvi_solver_solve(solver, &g->p, gamma, &res);
        dvi_solver_destroy(solver);
        repeats++;
        total += res.seconds;
        if (res.seconds < best) best = res.seconds;
        if (st < 0) break;
    }

    row->repeats = repeats;
    row->iterations = res.iterations;
    row->seconds = best;
    row->residual = res.metrics.residual;
    row->target_residual = res.target_residual;
    row->status = dvi_solve_status_string(res.status);
    row->converged = res.status == DVI_SOLVE_CONVERGED;
    int32_t it = res.iterations > 0 ? res.iterations : 1;
    row->ms_per_iter = 1e3 * best / it;
    row->ns_per_iter_per_contact = g->contacts > 0 ? 1e9 * best / it / g->contacts : NAN;
    row->bytes_per_contact_iter = g->contacts > 0 ? res.bytes_per_iteration / g->contacts : NAN;
    if (st < 0) {
        fprintf(stderr, "error: %s, %d contacts, %s: %s (%s)\n", g->family, (int)g->contacts, name,
                dvi_status_string(st), res.message);
        row->error = true;
        return false;
    }
    return true;
}

static const bench_row* find_row(const bench_row* rows, int n, const char* family, int32_t target,
                                 const char* solver) {
    for (int k = 0; k < n; ++k) {
        if (rows[k].target == target && strcmp(rows[k].family, family) == 0 && strcmp(rows[k].solver, solver) == 0) {
            return &rows[k];
        }
    }
    return NULL;
}

/* The two summary checks; to stdout in table mode, stderr in JSON mode. */
static void print_checks(FILE* f, const bench_row* rows, int n, const bench_options* o) {
    fprintf(f, "\nchecks\n");
    /* (a) APGD cost per iteration per contact: largest size vs ~1000 contacts */
    for (int fam = 0; fam < BENCH_MAX_FAMILIES; ++fam) {
        if (!o->family_on[fam]) continue;
        const char* name = bench_families[fam];
        const bench_row* ref = find_row(rows, n, name, 1000, "apgd");
        const bench_row* big = NULL;
        for (int k = 0; k < n; ++k) {
            if (strcmp(rows[k].family, name) == 0 && strcmp(rows[k].solver, "apgd") == 0 && !rows[k].error &&
                (!big || rows[k].contacts > big->contacts)) {
                big = &rows[k];
            }
        }
        if (!ref || !big || ref->error || !isfinite(ref->ns_per_iter_per_contact) ||
            !isfinite(big->ns_per_iter_per_contact) || ref->ns_per_iter_per_contact <= 0.0) {
            fprintf(f, "(a) %-9s APGD ns/iter/contact, largest vs ~1000 contacts: n/a (apgd not run at both sizes)\n",
                    name);
            continue;
        }
        double ratio = big->ns_per_iter_per_contact / ref->ns_per_iter_per_contact;
        fprintf(f, "(a) %-9s APGD ns/iter/contact at %d contacts / at %d contacts = %.2f / %.2f = %.2f  %s\n", name,
                (int)big->contacts, (int)ref->contacts, big->ns_per_iter_per_contact, ref->ns_per_iter_per_contact,
                ratio, ratio > 2.0 ? "FLAG: > 2, cost per contact grows with size (not linear)" : "ok (<= 2)");
    }
    /* (b) stack family: APGD iterations vs Jacobi iterations */
    if (o->family_on[0]) {
        int shown = 0;
        for (int s = 0; s < BENCH_MAX_SIZES; ++s) {
            const bench_row* ap = find_row(rows, n, "stack", bench_sizes[s], "apgd");
            const bench_row* ja = find_row(rows, n, "stack", bench_sizes[s], "jacobi");
            if (!ap || !ja) continue;
            shown++;
            const char* verdict;
            if (ap->error || ja->error) {
                verdict = "n/a (a solver errored)";
            } else if (ap->converged && (!ja->converged || ap->iterations < ja->iterations)) {
                verdict = "yes";
            } else if (!ap->converged && !ja->converged) {
                verdict = ap->residual < ja->residual ? "undecided: both hit the budget (APGD residual lower)"
                                                      : "NO: both hit the budget and APGD residual is not lower";
            } else {
                verdict = "NO";
            }
            fprintf(f, "(b) stack %6d contacts: APGD fewer iterations than Jacobi? %s  (apgd %d %s res %.2e, "
                       "jacobi %d %s res %.2e)\n",
                    (int)ap->contacts, verdict, (int)ap->iterations, ap->status, ap->residual, (int)ja->iterations,
                    ja->status, ja->residual);
        }
        if (shown == 0) fprintf(f, "(b) stack: n/a (needs both apgd and jacobi in --solvers)\n");
    }
}

int main(int argc, char** argv) {
    bench_options o;
    int pr = parse_options(argc, argv, &o);
    if (pr == 1) return 0;
    if (pr == 2) return 2;

    static bench_row rows[BENCH_MAX_ROWS];
    int nrows = 0;
    bool failed = false;

    if (!o.json) {
        printf("dvicontact %s solver benchmark: tolerance %g, max iterations %d, threads %d, mu %g, h %g s\n",
               dvi_version_string(), BENCH_TOLERANCE, (int)o.max_iterations, (int)o.threads, BENCH_MU, BENCH_STEP);
        printf("stack = columns of %d boxes (4 corner contacts per interface); granular = FCC sphere packing in a "
               "box; lemke only up to %d contacts\n",
               BENCH_STACK_HEIGHT, BENCH_LEMKE_MAX_CONTACTS);
        printf("times: fastest of repeated solves (repeated until %g s, at most %d times)\n\n", BENCH_MIN_SECONDS,
               BENCH_MAX_REPEATS);
        printf("contacts given %s\n\n", o.frames ? "by their frames (dvi_ccp_frames)" : "as columns of D");
        printf("%-9s %8s  %-7s %7s  %10s  %-15s %10s  %10s  %9s  %8s\n", "family", "contacts", "solver", "iters",
               "residual", "status", "ms/iter", "ns/it/cont", "total s", "B/it/con");
        printf("%-9s %8s  %-7s %7s  %10s  %-15s %10s  %10s  %9s  %8s\n", "---------", "--------", "-------", "-------",
               "----------", "---------------", "----------", "----------", "---------", "--------");
        fflush(stdout);
    }

    for (int fam = 0; fam < BENCH_MAX_FAMILIES; ++fam) {
        if (!o.family_on[fam]) continue;
        for (int s = 0; s < BENCH_MAX_SIZES; ++s) {
            int32_t target = bench_sizes[s];
            if (target > o.max_contacts) continue;
            dvi_gen_problem g;
            memset(&g, 0, sizeof g);
            dvi_status st = build_problem(fam, target, &g);
            if (st == DVI_OK && o.frames && dvi_gen_use_frames(&g) < 0) st = DVI_ERR_NOMEM;
            if (st != DVI_OK) {
                fprintf(stderr, "error: cannot build %s problem of ~%d contacts: %s\n", bench_families[fam],
                        (int)target, dvi_status_string(st));
                failed = true;
                continue;
            }
            double* gamma = calloc(g.p.rows > 0 ? (size_t)g.p.rows : 1, sizeof *gamma);
            if (!gamma) {
                fprintf(stderr, "error: out of memory for %d rows\n", (int)g.p.rows);
                dvi_gen_free(&g);
                failed = true;
                continue;
            }
            for (int k = 0; k < o.solver_count; ++k) {
                if (strcmp(o.solvers[k], "lemke") == 0 && g.contacts > BENCH_LEMKE_MAX_CONTACTS) continue;
                if (nrows == BENCH_MAX_ROWS) break;
                bench_row* row = &rows[nrows++];
                memset(row, 0, sizeof *row);
                snprintf(row->family, sizeof row->family, "%s", bench_families[fam]);
                row->target = target;
                row->contacts = g.contacts;
                if (!run_solver(&o, o.solvers[k], &g, gamma, row)) failed = true;
                print_row(&o, row);
            }
            free(gamma);
            dvi_gen_free(&g);
        }
    }
    print_checks(o.json ? stderr : stdout, rows, nrows, &o);
    return failed ? 1 : 0;
}
