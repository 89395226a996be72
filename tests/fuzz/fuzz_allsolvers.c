/* dvicontact — fuzz harness: every built-in solver on a small random CCP
 * decoded from the input, and every "converged" checked against a residual
 * computed here, from the problem alone (not from the solver's metrics).
 *
 * The problem: 1–4 blocks (bilateral, frictionless or friction), W =
 * S (B Bᵀ + δ I) S with B from the input, S a per-block scale of 10^-3 …
 * 10^3 (blocks of very different scales), δ ≥ 1e-3 (W positive definite),
 * r from the input, μ from 0 to 1.9 or, for one input byte in eight, 10^k
 * up to 10^7. Bytes past the input's end come from a generator seeded by
 * the input, so any input is a problem.
 *
 * The independent residual, per block b with s_b = 1 / W_bb (its first
 * row's diagonal), u = W γ + r, and u' = u + μ ‖u_t‖ e_n for the solvers of
 * Coulomb's law (u for the CCP's): the natural map γ_b − Π_K(γ_b − s_b u'_b),
 * K the block's cone (R for a bilateral row, R+ for a frictionless one,
 * ‖γ_t‖ ≤ μ γ_n for friction; for a solver that answers for pyramids in
 * the cones' place, result.pyramid_edges = k, the pyramid of k edges on
 * the cone that dvi_solver_pyramid gives), which is 0 exactly at a
 * solution (Moreau);
 * relative to the block's own scale max(‖γ_b‖, s_b ‖r_b‖, s_b Σ|W_bj||γ_j|),
 * so that a large block does not hide a small one's error, and at least
 * FUZZ_SCALE_FLOOR (1e-10) times the largest block's (rounding). A "converged"
 * whose largest relative residual exceeds FUZZ_RESIDUAL_MAX is a wrong
 * claim: the harness aborts (libFuzzer keeps the input), or with
 * DVI_FUZZ_REPORT set in the environment prints a line for each solver's
 * first five wrong claims, goes on, and at exit prints each solver's converged and wrong claims (to
 * count them over a long run); DVI_FUZZ_DUMP also prints each problem, and
 * every solver's γ with its independent residual. */
#include "fuzz_common.h"

#include "dvi/ccp.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>

#define FUZZ_RESIDUAL_MAX 1e-3 /* relative; the solvers stop at 1e-6 in their own measure */
/* A block's scale is at least this times the largest block's: an error of
 * 1e-13 of the largest impulse (450 ε) is rounding, not a wrong answer (a
 * block of r = 0 keeps γ = 1.9e-16 beside 0.067, 13 ε of it; the block
 * scales the decoder makes differ by 1e6 at most times W's spread). */
#define FUZZ_SCALE_FLOOR 1e-10
#define MAX_BLOCKS 4
#define MAX_ROWS (3 * MAX_BLOCKS)

typedef struct bytes {
    const uint8_t* data;
    size_t size, at;
    uint64_t state; /* splitmix64, seeded by the input */
} bytes;

static unsigned next_byte(bytes* b)
{
    if (b->at < b->size) return b->data[b->at++];
    uint64_t z = (b->state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return (unsigned)((z ^ (z >> 31)) & 0xFF);
}

typedef struct problem {
    int32_t rows, nblocks;
    dvi_ccp_block blocks[MAX_BLOCKS];
    int32_t first[MAX_BLOCKS];
    double W[MAX_ROWS][MAX_ROWS];
    double r[MAX_ROWS];
    int32_t colptr[MAX_ROWS + 1], rowind[MAX_ROWS * MAX_ROWS];
    double values[MAX_ROWS * MAX_ROWS];
    dvi_csc csc;
    dvi_ccp_problem p;
} problem;

static void decode(const uint8_t* data, size_t size, problem* P)
{
    bytes b = {data, size, 0, 0x5EED};
    for (size_t i = 0; i < size; i++) b.state = (b.state ^ data[i]) * 0x100000001B3ull;
    memset(P, 0, sizeof *P);
    P->nblocks = 1 + (int32_t)(next_byte(&b) % MAX_BLOCKS);
    double scale[MAX_ROWS];
    for (int32_t k = 0; k < P->nblocks; k++) {
        const unsigned kind = next_byte(&b) % 3, mu = next_byte(&b), sc = next_byte(&b);
        dvi_ccp_block* B = &P->blocks[k];
        B->kind = kind == 0 ? DVI_BLOCK_BILATERAL : kind == 1 ? DVI_BLOCK_FRICTIONLESS : DVI_BLOCK_FRICTION;
        B->mu = (mu & 7) == 7 ? pow(10.0, (double)(mu >> 5)) : (double)(mu % 16) / 8.0;
        P->first[k] = P->rows;
        const double s = pow(10.0, (double)(sc % 7) - 3.0);
        for (int32_t i = 0; i < dvi_block_rows(B->kind); i++) scale[P->rows++] = s;
    }
    const int32_t m = P->rows;
    double Bm[MAX_ROWS][MAX_ROWS + 2];
    for (int32_t i = 0; i < m; i++)
        for (int32_t j = 0; j < m + 2; j++) Bm[i][j] = ((double)next_byte(&b) - 128.0) / 32.0;
    const double delta = 1e-3 * (1.0 + (double)(next_byte(&b) % 100));
    for (int32_t i = 0; i < m; i++)
        for (int32_t j = 0; j <= i; j++) {
            double v = i == j ? delta : 0.0;
            for (int32_t l = 0; l < m + 2; l++) v += Bm[i][l] * Bm[j][l];
            P->W[i][j] = P->W[j][i] = scale[i] * v * scale[j];
        }
    for (int32_t i = 0; i < m; i++) P->r[i] = scale[i] * ((double)next_byte(&b) - 128.0) / 16.0;
    int32_t nz = 0;
    for (int32_t j = 0; j < m; j++) {
        P->colptr[j] = nz;
        for (int32_t i = 0; i < m; i++) {
            P->rowind[nz] = i;
            P->values[nz++] = P->W[i][j];
        }
    }
    P->colptr[m] = nz;
    P->csc = (dvi_csc){m, m, P->colptr, P->rowind, P->values};
    P->p = dvi_ccp_problem_empty();
    P->p.rows = m;
    P->p.block_count = P->nblocks;
    P->p.blocks = P->blocks;
    P->p.W = &P->csc;
    P->p.r = P->r;
}

/* Π onto ‖x_t‖ ≤ μ x_n (x = [n, t1, t2]). */
static void project_cone(double mu, double x[3])
{
    const double n = x[0], t = hypot(x[1], x[2]);
    if (t <= mu * n && n >= 0.0) return; /* n ≥ 0: with μ = 0, (−1, 0, 0) is not inside */
    if (mu * t <= -n) {
        x[0] = x[1] = x[2] = 0;
        return;
    }
    const double a = (n + mu * t) / (1.0 + mu * mu);
    x[0] = a;
    x[1] *= mu * a / t;
    x[2] *= mu * a / t;
}

/* Π onto the pyramid of k edges (1, μ cos θ_j, μ sin θ_j), θ_j = turn +
 * 2πj/k: x itself when inside every face, else the nearest of its
 * projections onto the faces (each the cone of two adjacent edges). */
static void project_pyramid(double mu, int k, double turn, double x[3])
{
    if (!(mu > 0.0)) {
        x[0] = fmax(x[0], 0.0);
        x[1] = x[2] = 0.0;
        return;
    }
    const double pi = 3.14159265358979323846;
    double best[3] = {0, 0, 0}, dbest = x[0] * x[0] + x[1] * x[1] + x[2] * x[2]; /* the apex */
    bool inside = true;
    for (int j = 0; j < k; j++) {
        const double t0 = turn + 2.0 * pi * j / k, t1 = turn + 2.0 * pi * (j + 1) / k;
        const double a[3] = {1.0, mu * cos(t0), mu * sin(t0)}, b[3] = {1.0, mu * cos(t1), mu * sin(t1)};
        const double nrm[3] = {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
        if (nrm[0] * x[0] + nrm[1] * x[1] + nrm[2] * x[2] < 0.0) inside = false; /* nrm points inward */
        const double aa = a[0] * a[0] + a[1] * a[1] + a[2] * a[2], bb = b[0] * b[0] + b[1] * b[1] + b[2] * b[2];
        const double ab = a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
        const double xa = x[0] * a[0] + x[1] * a[1] + x[2] * a[2], xb = x[0] * b[0] + x[1] * b[1] + x[2] * b[2];
        const double det = aa * bb - ab * ab;
        double cand[3][2] = {{(bb * xa - ab * xb) / det, (aa * xb - ab * xa) / det}, {fmax(xa / aa, 0.0), 0.0},
                             {0.0, fmax(xb / bb, 0.0)}};
        for (int c = 0; c < 3; c++) {
            if (!(cand[c][0] >= 0.0 && cand[c][1] >= 0.0)) continue;
            double y[3], d = 0.0;
            for (int i = 0; i < 3; i++) {
                y[i] = cand[c][0] * a[i] + cand[c][1] * b[i];
                d += (x[i] - y[i]) * (x[i] - y[i]);
            }
            if (d < dbest) {
                dbest = d;
                memcpy(best, y, sizeof best);
            }
        }
    }
    if (!inside) memcpy(x, best, sizeof best);
}

/* The cones an answer is judged on: the friction cones (edges 0), or the
 * pyramids a solver put in their place (Lemke: edges k, each friction
 * block's turn, dvi_solver_pyramid). */
typedef struct cones {
    int edges;
    double turn[MAX_BLOCKS];
} cones;

/* The largest relative natural-map residual over the blocks (see above). */
static double independent_residual(const problem* P, const double* g, bool coulomb, const cones* K)
{
    const int32_t m = P->rows;
    double u[MAX_ROWS], mag[MAX_ROWS];
    for (int32_t i = 0; i < m; i++) {
        double v = P->r[i], a = 0;
        for (int32_t j = 0; j < m; j++) {
            v += P->W[i][j] * g[j];
            a += fabs(P->W[i][j] * g[j]);
        }
        u[i] = v;
        mag[i] = a;
    }
    /* the floor of a block's scale: FUZZ_SCALE_FLOOR of the largest block's */
    double top = 0;
    for (int32_t k = 0; k < P->nblocks; k++) {
        const int32_t o = P->first[k], n = dvi_block_rows(P->blocks[k].kind);
        const double s = 1.0 / P->W[o][o];
        for (int32_t i = 0; i < n; i++)
            top = fmax(top, fmax(fabs(g[o + i]), s * fmax(fabs(P->r[o + i]), mag[o + i])));
    }
    double worst = 0;
    for (int32_t k = 0; k < P->nblocks; k++) {
        const dvi_ccp_block* B = &P->blocks[k];
        const int32_t o = P->first[k], n = dvi_block_rows(B->kind);
        const double s = 1.0 / P->W[o][o];
        double x[3] = {0, 0, 0}, res = 0, ref = FUZZ_SCALE_FLOOR * top;
        double un[3] = {u[o], n == 3 ? u[o + 1] : 0, n == 3 ? u[o + 2] : 0};
        if (coulomb && n == 3) un[0] += B->mu * hypot(un[1], un[2]);
        for (int32_t i = 0; i < n; i++) {
            x[i] = g[o + i] - s * un[i];
            ref = fmax(ref, fmax(fabs(g[o + i]), s * fmax(fabs(P->r[o + i]), mag[o + i])));
        }
        if (B->kind == DVI_BLOCK_FRICTIONLESS) x[0] = fmax(x[0], 0.0);
        else if (B->kind == DVI_BLOCK_FRICTION && K->edges > 0) project_pyramid(B->mu, K->edges, K->turn[k], x);
        else if (B->kind == DVI_BLOCK_FRICTION) project_cone(B->mu, x);
        for (int32_t i = 0; i < n; i++) res = fmax(res, fabs(g[o + i] - x[i]));
        const double rel = ref > 0 ? res / ref : res;
        if (!(rel <= worst)) worst = rel; /* NaN propagates */
    }
    return worst;
}

/* Report mode: per solver, the converged claims and the wrong ones. */
#define MAX_SOLVERS 16
static long g_converged[MAX_SOLVERS], g_wrong[MAX_SOLVERS];
static double g_worst[MAX_SOLVERS];

static void print_summary(void)
{
    for (int32_t s = 0; s < dvi_solver_count() && s < MAX_SOLVERS; s++)
        fprintf(stderr, "fuzz_allsolvers: %-8s %ld converged, %ld of them wrong (largest independent residual %.3g)\n",
                dvi_solver_name(s), g_converged[s], g_wrong[s], g_worst[s]);
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    static problem P;
    decode(data, size, &P);
    char msg[256];
    FUZZ_CHECK(dvi_ccp_validate(&P.p, msg, sizeof msg) == DVI_OK);
    const bool report = getenv("DVI_FUZZ_REPORT") != NULL;
    static bool summary;
    if (report && !summary) {
        summary = true;
        atexit(print_summary);
    }
    for (int32_t s = 0; s < dvi_solver_count(); s++) {
        const dvi_friction_law law = dvi_solver_law(s);
        bool supported = true;
        for (int32_t k = 0; k < P.nblocks; k++) supported = supported && dvi_solver_supports(s, law, P.blocks[k].kind);
        if (!supported) continue;
        double g[MAX_ROWS] = {0};
        dvi_solve_result res;
        memset(&res, 0, sizeof res);
        dvi_solver* sv = NULL;
        FUZZ_CHECK(dvi_solver_create(dvi_solver_name(s), NULL, &sv) == DVI_OK);
        dvi_status st = dvi_solver_solve(sv, &P.p, g, &res);
        for (int32_t i = 0; i < P.rows; i++) FUZZ_CHECK(st != DVI_OK || isfinite(g[i]));
        /* the cones the answer is for: the solver's pyramids when it says so */
        cones K = {.edges = st == DVI_OK ? res.pyramid_edges : 0};
        for (int32_t k = 0; k < P.nblocks && K.edges > 0; k++) {
            double turn[2];
            if (P.blocks[k].kind == DVI_BLOCK_FRICTION) FUZZ_CHECK(dvi_solver_pyramid(sv, k, turn) == DVI_OK);
            K.turn[k] = P.blocks[k].kind == DVI_BLOCK_FRICTION ? turn[0] : 0.0;
        }
        dvi_solver_destroy(sv);
        if (st != DVI_OK || res.status != DVI_SOLVE_CONVERGED) continue;
        const double r = independent_residual(&P, g, law == DVI_LAW_COULOMB, &K);
        if (getenv("DVI_FUZZ_DUMP")) {
            fprintf(stderr, "  %s: independent %.3g%s, gamma", dvi_solver_name(s), r,
                    K.edges > 0 ? " (on its pyramids)" : "");
            for (int32_t i = 0; i < P.rows; i++) fprintf(stderr, " %.9g", g[i]);
            fprintf(stderr, "\n");
        }
        if (s < MAX_SOLVERS) g_converged[s]++;
        if (r <= FUZZ_RESIDUAL_MAX) continue;
        if (s < MAX_SOLVERS) {
            g_wrong[s]++;
            if (!(r <= g_worst[s])) g_worst[s] = r;
        }
        if (report && s < MAX_SOLVERS && g_wrong[s] > 5) continue; /* the first five of each solver */
        fprintf(stderr, "fuzz_allsolvers: %s says converged (its residual %.3g), independent residual %.3g (%d rows, %d blocks)\n",
                dvi_solver_name(s), res.target_residual, r, (int)P.rows, (int)P.nblocks);
        if (getenv("DVI_FUZZ_DUMP")) {
            for (int32_t k = 0; k < P.nblocks; k++)
                fprintf(stderr, "  block %d: kind %d, mu %g, rows from %d\n", (int)k, (int)P.blocks[k].kind, P.blocks[k].mu,
                        (int)P.first[k]);
            for (int32_t i = 0; i < P.rows; i++) {
                fprintf(stderr, "  W[%d] =", (int)i);
                for (int32_t j = 0; j < P.rows; j++) fprintf(stderr, " %.17g", P.W[i][j]);
                fprintf(stderr, "; r = %.17g; gamma = %.17g\n", P.r[i], g[i]);
            }
        }
        if (!report) abort();
    }
    return 0;
}
