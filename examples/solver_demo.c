/* solver_demo — every solver on three contact problems, with convergence
 * histories written as CSV and drawn as an SVG plot.
 *
 *   solver_demo [OUTDIR]        (default: out/solver_demo)
 *
 * Problems: a 10-sphere stack (exact answer known: the bottom contact carries
 * the weight of all ten spheres), a wall of box stacks with four redundant
 * corner contacts per interface, and a granular packing of ~2,000 contacts.
 * Writes OUTDIR/<problem>.csv (iteration, one residual column per solver) and
 * OUTDIR/<problem>.svg (log10 residual against iteration), and prints a table.
 */
#include "dvi/ccp.h"
#include "problems.h"

#include <errno.h>
#include <stdbool.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

enum { MAX_IT = 5000, NSOLVERS = 4 };

typedef struct run {
    const char* solver;
    bool iterative;           /* false: Lemke (a direct method: no residual curve) */
    double* history;
    int32_t length;
    dvi_solve_result res;
} run;

static int make_dirs(const char* path)
{
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", path);
    for (char* p = buf + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            if (mkdir(buf, 0777) != 0 && errno != EEXIST) return -1;
            *p = '/';
        }
    return mkdir(buf, 0777) != 0 && errno != EEXIST ? -1 : 0;
}

static int write_csv(const char* path, const run* runs, int n)
{
    FILE* f = fopen(path, "w");
    if (!f) return -1;
    int32_t longest = 0;
    fprintf(f, "iteration");
    for (int s = 0; s < n; s++) {
        if (!runs[s].iterative) continue;
        fprintf(f, ",%s_residual", runs[s].solver);
        if (runs[s].length > longest) longest = runs[s].length;
    }
    fprintf(f, "\n");
    for (int32_t k = 0; k < longest; k++) {
        fprintf(f, "%d", k + 1);
        for (int s = 0; s < n; s++) {
            if (!runs[s].iterative) continue;
            if (k < runs[s].length) fprintf(f, ",%.6e", runs[s].history[k]);
            else fprintf(f, ",");
        }
        fprintf(f, "\n");
    }
    return fclose(f);
}

/* A log-y line plot: one polyline per solver, axes, decade ticks, legend. */
static int write_svg(const char* path, const char* title, const run* runs, int n, double tol)
{
    static const char* colors[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd"};
    const double W = 720, H = 440, L = 80, R = 170, T = 40, B = 60;
    int32_t xmax = 1;
    double lo = log10(tol) - 1, hi = 0;
    for (int s = 0; s < n; s++)
        for (int32_t k = 0; runs[s].iterative && k < runs[s].length; k++) {
            double v = runs[s].history[k];
            if (v > 0 && isfinite(v)) {
                if (log10(v) < lo) lo = floor(log10(v));
                if (log10(v) > hi) hi = ceil(log10(v));
            }
            if (k + 1 > xmax) xmax = k + 1;
        }
    FILE* f = fopen(path, "w");
    if (!f) return -1;
    double pw = W - L - R, ph = H - T - B;
#define X(k) (L + pw * (double)(k) / (double)xmax)
#define Y(v) (T + ph * (hi - (v)) / (hi - lo))
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%g\" height=\"%g\" font-family=\"sans-serif\" "
               "font-size=\"12\">\n", W, H);
    fprintf(f, "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n");
    fprintf(f, "<text x=\"%g\" y=\"22\" font-size=\"15\" text-anchor=\"middle\">%s</text>\n", L + pw / 2, title);
    for (int d = (int)lo; d <= (int)hi; d++) { /* decade grid and labels */
        fprintf(f, "<line x1=\"%g\" y1=\"%g\" x2=\"%g\" y2=\"%g\" stroke=\"#ddd\"/>\n", L, Y(d), L + pw, Y(d));
        fprintf(f, "<text x=\"%g\" y=\"%g\" text-anchor=\"end\">1e%d</text>\n", L - 6, Y(d) + 4, d);
    }
    for (int i = 0; i <= 5; i++) {
        int32_t k = (int32_t)llround((double)xmax * i / 5.0);
        fprintf(f, "<line x1=\"%g\" y1=\"%g\" x2=\"%g\" y2=\"%g\" stroke=\"black\"/>\n", X(k), T + ph, X(k), T + ph + 5);
        fprintf(f, "<text x=\"%g\" y=\"%g\" text-anchor=\"middle\">%d</text>\n", X(k), T + ph + 20, k);
    }
    fprintf(f, "<rect x=\"%g\" y=\"%g\" width=\"%g\" height=\"%g\" fill=\"none\" stroke=\"black\"/>\n", L, T, pw, ph);
    fprintf(f, "<line x1=\"%g\" y1=\"%g\" x2=\"%g\" y2=\"%g\" stroke=\"gray\" stroke-dasharray=\"6,4\"/>\n", L,
            Y(log10(tol)), L + pw, Y(log10(tol)));
    fprintf(f, "<text x=\"%g\" y=\"%g\" text-anchor=\"middle\">iteration</text>\n", L + pw / 2, H - 15);
    fprintf(f, "<text transform=\"translate(20,%g) rotate(-90)\" text-anchor=\"middle\">CCP residual</text>\n",
            T + ph / 2);
    for (int s = 0; s < n; s++) {
        double ly = T + 20 + 22 * s;
        if (!runs[s].iterative) { /* a direct method: legend entry only */
            fprintf(f, "<text x=\"%g\" y=\"%g\">%s: %d pivots,</text>\n", L + pw + 15, ly + 4, runs[s].solver,
                    runs[s].res.iterations);
            fprintf(f, "<text x=\"%g\" y=\"%g\">CCP residual %.1e</text>\n", L + pw + 15, ly + 18,
                    runs[s].res.metrics.residual);
            continue;
        }
        fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" points=\"", colors[s % 4]);
        for (int32_t k = 0; k < runs[s].length; k++) {
            double v = runs[s].history[k];
            if (v > 0 && isfinite(v)) fprintf(f, "%.1f,%.1f ", X(k + 1), Y(log10(v)));
        }
        fprintf(f, "\"/>\n");
        fprintf(f, "<line x1=\"%g\" y1=\"%g\" x2=\"%g\" y2=\"%g\" stroke=\"%s\" stroke-width=\"3\"/>\n", L + pw + 15, ly,
                L + pw + 40, ly, colors[s % 4]);
        fprintf(f, "<text x=\"%g\" y=\"%g\">%s (%d it)</text>\n", L + pw + 46, ly + 4, runs[s].solver,
                runs[s].res.iterations);
    }
    fprintf(f, "</svg>\n");
#undef X
#undef Y
    return fclose(f);
}

static int run_problem(const char* outdir, const char* name, const char* title, dvi_gen_problem* g)
{
    const char* solvers[NSOLVERS] = {"apgd", "pgs", "jacobi", "lemke"};
    run runs[NSOLVERS];
    int n = 0, failures = 0;
    double* gamma = malloc((size_t)g->p.rows * sizeof(double));
    if (!gamma) return 1;
    printf("\n%s: %d contacts, %d rows\n", title, g->contacts, g->p.rows);
    printf("  %-7s %-15s %6s %10s %10s %10s %9s\n", "solver", "status", "iter", "residual", "coulomb", "objective",
           "seconds");
    for (int s = 0; s < NSOLVERS; s++) {
        if (strcmp(solvers[s], "lemke") == 0 && g->contacts > 120) continue; /* dense: small problems only */
        dvi_solver_settings st = dvi_default_solver_settings();
        st.max_iterations = MAX_IT;
        st.tolerance = 1e-6; /* as printed below; the default is 1e-8 */
        run* r = &runs[n];
        memset(r, 0, sizeof *r);
        r->solver = solvers[s];
        r->iterative = strcmp(solvers[s], "lemke") != 0;
        r->history = calloc(MAX_IT, sizeof(double));
        if (!r->history) break;
        dvi_solver* solver = NULL;
        dvi_status e = dvi_solver_create(solvers[s], &st, &solver);
        if (e == DVI_OK) e = dvi_solver_record_history(solver, r->history, MAX_IT);
        if (e == DVI_OK) e = dvi_solver_solve(solver, &g->p, gamma, &r->res);
        dvi_solver_destroy(solver);
        r->length = r->res.history_length;
        if (e < 0) {
            printf("  %-7s error: %s (%s)\n", solvers[s], dvi_status_string(e), r->res.message);
            failures++;
        } else {
            printf("  %-7s %-15s %6d %10.2e %10.2e %10.3e %9.4f\n", solvers[s], dvi_solve_status_string(r->res.status),
                   r->res.iterations, r->res.metrics.residual, r->res.metrics.residual_coulomb,
                   r->res.metrics.objective, r->res.seconds);
            if (strcmp(g->family, "sphere_stack") == 0)
                printf("          bottom contact normal impulse %.9f N s\n", gamma[0]);
        }
        n++;
    }
    char path[1200];
    snprintf(path, sizeof path, "%s/%s.csv", outdir, name);
    if (write_csv(path, runs, n) != 0) failures++;
    snprintf(path, sizeof path, "%s/%s.svg", outdir, name);
    if (write_svg(path, title, runs, n, 1e-6) != 0) failures++;
    for (int s = 0; s < n; s++) free(runs[s].history);
    free(gamma);
    return failures;
}

int main(int argc, char** argv)
{
    const char* outdir = argc > 1 ? argv[1] : "out/solver_demo";
    if (argc > 2 || (argc == 2 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0))) {
        printf("usage: solver_demo [OUTDIR]   (default out/solver_demo)\n");
        return argc > 2 ? 2 : 0;
    }
    if (make_dirs(outdir) != 0) {
        fprintf(stderr, "solver_demo: cannot create %s: %s\n", outdir, strerror(errno));
        return 1;
    }
    printf("dvicontact %s — solvers:", dvi_version_string());
    for (int i = 0; i < dvi_solver_count(); i++) printf(" %s", dvi_solver_name(i));
    printf("\ntolerance 1e-6 on the CCP residual, at most %d iterations, cold start\n", MAX_IT);

    int failures = 0;
    dvi_gen_problem g;
    memset(&g, 0, sizeof g);
    if (dvi_gen_sphere_stack(10, 0.1, 1.0, 0.5, 9.81, 1e-3, &g) == DVI_OK) {
        printf("\nexact bottom normal impulse: 10 m g h = %.9f N s", 10 * 1.0 * 9.81 * 1e-3);
        failures += run_problem(outdir, "sphere_stack", "10-sphere stack", &g);
    } else failures++;
    dvi_gen_free(&g);
    if (dvi_gen_box_stacks(3, 5, 0.5, 1e-3, 1, &g) == DVI_OK)
        failures += run_problem(outdir, "box_stacks", "3 columns of 5 boxes, 4 corner contacts each", &g);
    else failures++;
    dvi_gen_free(&g);
    if (dvi_gen_granular(2000, 0.4, 1e-3, 1, &g) == DVI_OK)
        failures += run_problem(outdir, "granular", "granular packing, ~2000 contacts", &g);
    else failures++;
    dvi_gen_free(&g);
    printf("\nwrote CSV and SVG files to %s/\n", outdir);
    return failures ? 1 : 0;
}
