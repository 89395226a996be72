/* dvicontact tests — exact sums and a CCP shared by several processes (dvi_ccp_shared).
 *
 * Part 1, the exact sums (src/ccp/exact_sum.h): sums whose naive value is
 * wrong (1e300 + 1 − 1e300 = 1; 1e308 + 1e308 − 1e308 = 1e308 without
 * overflowing; subnormals), the same bits in any order and when the terms
 * are spread over accumulators merged afterwards, within one rounding of
 * a reference formed in 128-bit arithmetic, and non-finite terms.
 *
 * Part 2, the solver layer's contract for a problem split over processes,
 * without MPI: a random frictional CCP of 60 bodies and 160 contacts given
 * by frames is solved whole (settings.exact_sums) and split over 2 and 3
 * "processes" (threads; their exchange, sum and max meet at a barrier).
 * Each process holds the contacts of its bodies, in the whole problem's
 * order, and every body they touch. APGD and Jacobi give each process's
 * contacts, its own and its copies of its neighbours', the whole problem's
 * impulses bit for bit, with the same iterations, residual and objective.
 * Refused: a solver that sweeps in order (pgs), the Delassus form.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dvi/dvi.h"
#include "exact_sum.h"
#include "test_util.h"

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static double urand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (double)(rng >> 11) * 0x1.0p-53;
}

/* ---- part 1: exact sums ------------------------------------------------------------------ */

static double xsum_of(const double* x, int n)
{
    ccp_xsum s;
    ccp_xsum_init(&s);
    for (int i = 0; i < n; i++) ccp_xsum_add(&s, x[i]);
    return ccp_xsum_value(&s);
}

static void test_exact_known(void** state)
{
    (void)state;
    const double a[] = {1e300, 1.0, -1e300};
    assert_true(xsum_of(a, 3) == 1.0); /* naive: 0 */
    const double b[] = {1e308, 1e308, -1e308};
    assert_true(xsum_of(b, 3) == 1e308); /* naive: inf */
    const double c[] = {0x1p-1074, 0x1p-1074, 0x1p-1074, -0x1p-1073};
    assert_true(xsum_of(c, 4) == 0x1p-1074);
    const double d[] = {0.1, 0.2, -0.3};
    assert_true(xsum_of(d, 3) == 0x1p-55); /* the doubles' exact remainder; naive: 2^-54 */
    const double e[] = {-2.5, 1.0, -0.5};
    assert_true(xsum_of(e, 3) == -2.0);
    assert_true(xsum_of(e, 0) == 0.0);
    const double f[] = {1.0, NAN, 2.0};
    assert_true(isnan(xsum_of(f, 3)));
    const double g[] = {INFINITY, 1.0};
    assert_true(xsum_of(g, 2) == INFINITY);
    const double h[] = {INFINITY, -INFINITY};
    assert_true(isnan(xsum_of(h, 2)));
    const double k[] = {-INFINITY, -1e308};
    assert_true(xsum_of(k, 2) == -INFINITY);
}

/* 4000 terms of both signs over 60 decades: any order and any split over
 * accumulators give the same bits, and a long double sum agrees to 1e-12
 * (a check of the value; the orders check the exactness). */
static void test_exact_orders(void** state)
{
    (void)state;
    enum { N = 4000 };
    double* x = malloc(N * sizeof *x);
    assert_non_null(x);
    for (int i = 0; i < N; i++) x[i] = (urand() < 0.5 ? -1.0 : 1.0) * ldexp(1.0 + urand(), (int)(urand() * 200) - 100);
    const double ref = xsum_of(x, N);
    long double naive = 0.0L;
    for (int i = 0; i < N; i++) naive += x[i];
    for (int trial = 0; trial < 20; trial++) {
        for (int i = N - 1; i > 0; i--) { /* shuffle */
            int j = (int)(urand() * (i + 1));
            double t = x[i];
            x[i] = x[j], x[j] = t;
        }
        assert_true(xsum_of(x, N) == ref);
        /* spread over k accumulators, merged in another order */
        const int k = 2 + trial % 5;
        ccp_xsum acc[6];
        for (int a = 0; a < k; a++) ccp_xsum_init(&acc[a]);
        for (int i = 0; i < N; i++) ccp_xsum_add(&acc[(int)(urand() * k)], x[i]);
        for (int a = k - 1; a > 0; a--) ccp_xsum_merge(&acc[a - 1], &acc[a]);
        assert_true(ccp_xsum_value(&acc[0]) == ref);
    }
    /* long double rounds too: the two agree to its precision */
    assert_true(fabs((double)naive - ref) <= 1e-12 * fabs(ref) + 1e-300);
    free(x);
}

/* ---- part 2: a CCP shared by processes -------------------------------------------------- */

enum { NB = 60, NC = 160, MAXP = 3 };

typedef struct whole {
    int32_t body[2 * NC]; /* −1: fixed */
    double frame[9 * NC], arm[6 * NC], r[3 * NC];
    double minv[10 * NB];
} whole;

static void make_whole(whole* W)
{
    for (int b = 0; b < NB; b++) {
        double* m = W->minv + 10 * b;
        memset(m, 0, 10 * sizeof *m);
        m[0] = 1.0 / (0.5 + urand());
        const double ii = 1.0 / (0.01 + 0.02 * urand());
        m[1] = m[5] = m[9] = ii;
    }
    for (int c = 0; c < NC; c++) {
        int a = (int)(urand() * NB), b = (int)(urand() * NB);
        if (a == b || urand() < 0.15) a = -1; /* a contact with the ground */
        if (a > b) {
            int t = a;
            a = b, b = t;
        }
        W->body[2 * c] = a, W->body[2 * c + 1] = b;
        double n[3] = {urand() - 0.5, urand() - 0.5, 1.0 + urand()};
        double l = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
        for (int i = 0; i < 3; i++) n[i] /= l;
        double t1[3] = {n[2], 0.0, -n[0]};
        l = sqrt(t1[0] * t1[0] + t1[2] * t1[2]);
        for (int i = 0; i < 3; i++) t1[i] /= l;
        double t2[3] = {n[1] * t1[2] - n[2] * t1[1], n[2] * t1[0] - n[0] * t1[2], n[0] * t1[1] - n[1] * t1[0]};
        memcpy(W->frame + 9 * c, n, sizeof n);
        memcpy(W->frame + 9 * c + 3, t1, sizeof t1);
        memcpy(W->frame + 9 * c + 6, t2, sizeof t2);
        for (int i = 0; i < 6; i++) W->arm[6 * c + i] = 0.1 * (urand() - 0.5);
        W->r[3 * c] = urand() - 0.7; /* most approach */
        W->r[3 * c + 1] = 0.3 * (urand() - 0.5);
        W->r[3 * c + 2] = 0.3 * (urand() - 0.5);
    }
}

/* One process's part: its contacts (those of its bodies, in the whole
 * problem's order) and the bodies they touch (in the whole's order). */
typedef struct part {
    int p, P, threads;
    const char* solver;
    const whole* W;
    int32_t nb, nc;
    int32_t gbody[NB];  /* whole index of each local body */
    int32_t gc[NC];     /* whole index of each local contact */
    uint8_t block_own[NC], body_own[NB];
    int32_t block[NC], body[2 * NC];
    double frame[9 * NC], arm[6 * NC], r[3 * NC], minv[10 * NB];
    dvi_ccp_block blocks[NC];
    double gamma[3 * NC];
    dvi_solve_result res;
    dvi_status st;
} part;

static int owner(int b, int P)
{
    return b < 0 ? -1 : (b * P) / NB; /* contiguous ranges of bodies */
}

typedef struct meeting {
    pthread_barrier_t bar;
    int P;
    part* parts;
    double v[6 * NB];         /* the owners' body vectors */
    int64_t isum[MAXP][CCP_XSUM_WORDS + 4];
    double dmax[MAXP][4];
} meeting;

static meeting meet;

static int local_body(const part* q, int32_t g)
{
    for (int32_t k = 0; k < q->nb; k++)
        if (q->gbody[k] == g) return k;
    return -1;
}

static void m_exchange(void* ctx, double* v)
{
    part* q = ctx;
    for (int32_t k = 0; k < q->nb; k++)
        if (q->body_own[k]) memcpy(meet.v + 6 * q->gbody[k], v + 6 * k, 6 * sizeof(double));
    pthread_barrier_wait(&meet.bar);
    for (int32_t k = 0; k < q->nb; k++)
        if (!q->body_own[k]) memcpy(v + 6 * k, meet.v + 6 * q->gbody[k], 6 * sizeof(double));
    pthread_barrier_wait(&meet.bar);
}

static void m_sum(void* ctx, int64_t* x, int32_t n)
{
    part* q = ctx;
    assert_true(n <= CCP_XSUM_WORDS + 4);
    memcpy(meet.isum[q->p], x, (size_t)n * sizeof *x);
    pthread_barrier_wait(&meet.bar);
    for (int32_t i = 0; i < n; i++) {
        int64_t s = 0;
        for (int p = 0; p < meet.P; p++) s += meet.isum[(q->p + p) % meet.P][i]; /* each its own order */
        x[i] = s;
    }
    pthread_barrier_wait(&meet.bar);
}

static void m_max(void* ctx, double* x, int32_t n)
{
    part* q = ctx;
    assert_true(n <= 4);
    memcpy(meet.dmax[q->p], x, (size_t)n * sizeof *x);
    pthread_barrier_wait(&meet.bar);
    for (int32_t i = 0; i < n; i++) {
        double m = x[i];
        for (int p = 0; p < meet.P; p++) {
            const double y = meet.dmax[p][i];
            if (y != y || (m == m && y > m)) m = y;
        }
        x[i] = m;
    }
    pthread_barrier_wait(&meet.bar);
}

static void make_part(part* q, const whole* W, int p, int P)
{
    memset(q, 0, sizeof *q);
    q->p = p, q->P = P, q->W = W;
    bool seen[NB] = {false};
    for (int c = 0; c < NC; c++) {
        const int a = W->body[2 * c], b = W->body[2 * c + 1];
        if (owner(a, P) != p && owner(b, P) != p) continue;
        q->gc[q->nc++] = c;
        if (a >= 0) seen[a] = true;
        seen[b] = true;
    }
    for (int b = 0; b < NB; b++)
        if (seen[b] || owner(b, P) == p) q->gbody[q->nb++] = b;
    for (int32_t k = 0; k < q->nb; k++) {
        q->body_own[k] = owner(q->gbody[k], P) == p;
        memcpy(q->minv + 10 * k, W->minv + 10 * q->gbody[k], 10 * sizeof(double));
    }
    for (int32_t i = 0; i < q->nc; i++) {
        const int c = q->gc[i], a = W->body[2 * c], b = W->body[2 * c + 1];
        q->block[i] = i;
        q->body[2 * i] = a >= 0 ? local_body(q, a) : -1;
        q->body[2 * i + 1] = local_body(q, b);
        q->block_own[i] = owner(a >= 0 ? a : b, P) == p;
        memcpy(q->frame + 9 * i, W->frame + 9 * c, 9 * sizeof(double));
        memcpy(q->arm + 6 * i, W->arm + 6 * c, 6 * sizeof(double));
        memcpy(q->r + 3 * i, W->r + 3 * c, 3 * sizeof(double));
        q->blocks[i] = (dvi_ccp_block){.kind = DVI_BLOCK_FRICTION, .mu = 0.5};
    }
}

/* q's problem in pb (D without columns, the frames of q), sharing nothing. */
typedef struct part_problem {
    int32_t zero[NC * 3 + 1];
    dvi_csc D;
    dvi_ccp_frames fr;
    dvi_ccp_problem pb;
} part_problem;

static void part_problem_of(part_problem* pp, part* q)
{
    memset(pp->zero, 0, sizeof pp->zero);
    pp->D = (dvi_csc){6 * q->nb, 3 * q->nc, pp->zero, NULL, NULL};
    pp->fr = (dvi_ccp_frames){.count = q->nc, .block = q->block, .body = q->body, .frame = q->frame, .arm = q->arm};
    pp->pb = dvi_ccp_problem_empty();
    pp->pb.rows = 3 * q->nc;
    pp->pb.block_count = q->nc;
    pp->pb.blocks = q->blocks;
    pp->pb.body_count = q->nb;
    pp->pb.D = &pp->D;
    pp->pb.inv_mass_rigid = q->minv;
    pp->pb.frames = &pp->fr;
    pp->pb.r = q->r;
}

/* Solves q's problem (q->P == 0: the whole one, exact sums, no sharing). */
static void* solve_part(void* arg)
{
    part* q = arg;
    part_problem* pp = malloc(sizeof *pp);
    if (!pp) {
        q->st = DVI_ERR_NOMEM;
        return NULL;
    }
    part_problem_of(pp, q);
    dvi_ccp_shared sh = {.block_own = q->block_own, .body_own = q->body_own, .ctx = q,
                         .exchange = m_exchange, .sum = m_sum, .max = m_max};
    pp->pb.shared = q->P > 0 ? &sh : NULL;
    dvi_solver_settings s = dvi_default_solver_settings();
    s.exact_sums = true;
    s.tolerance = 1e-7;
    s.max_iterations = 3000;
    s.threads = q->threads;
    dvi_solver* solver = NULL;
    q->st = dvi_solver_create(q->solver, &s, &solver);
    if (q->st == DVI_OK) q->st = dvi_solver_solve(solver, &pp->pb, q->gamma, &q->res);
    dvi_solver_destroy(solver);
    free(pp);
    return NULL;
}

static void whole_part(part* q, const whole* W)
{
    make_part(q, W, 0, 1); /* every body is process 0's */
    q->P = 0;
}

static void split_against_whole(const char* solver, int P, int threads)
{
    whole* W = malloc(sizeof *W);
    part* all = calloc(MAXP + 1, sizeof *all);
    assert_non_null(W);
    assert_non_null(all);
    rng = 0x9E3779B97F4A7C15ull;
    make_whole(W);
    part* ref = &all[MAXP];
    whole_part(ref, W);
    ref->solver = solver;
    ref->threads = threads;
    solve_part(ref);
    assert_true(ref->st == DVI_OK || ref->st == DVI_NOT_CONVERGED); /* Jacobi: short of 1e-7 in 3000 sweeps */
    assert_true(ref->res.iterations > 5);                          /* a real solve */
    meet.P = P;
    meet.parts = all;
    pthread_barrier_init(&meet.bar, NULL, (unsigned)P);
    pthread_t th[MAXP];
    for (int p = 0; p < P; p++) {
        make_part(&all[p], W, p, P);
        all[p].solver = solver;
        all[p].threads = threads;
        assert_true(all[p].nc < NC); /* a real split */
        assert_int_equal(pthread_create(&th[p], NULL, solve_part, &all[p]), 0);
    }
    for (int p = 0; p < P; p++) pthread_join(th[p], NULL);
    pthread_barrier_destroy(&meet.bar);
    int32_t owned = 0;
    for (int p = 0; p < P; p++) {
        const part* q = &all[p];
        assert_int_equal(q->st, ref->st);
        assert_int_equal(q->res.iterations, ref->res.iterations);
        assert_true(q->res.metrics.residual == ref->res.metrics.residual);
        assert_true(q->res.metrics.objective == ref->res.metrics.objective);
        for (int32_t i = 0; i < q->nc; i++) { /* every local contact, owned or not, has the whole's bits */
            owned += q->block_own[i];
            assert_memory_equal(q->gamma + 3 * i, ref->gamma + 3 * q->gc[i], 3 * sizeof(double));
        }
    }
    assert_int_equal(owned, NC);
    print_message("%s, %d processes: %d iterations, residual %.3e, the whole's bits\n", solver, P,
                  ref->res.iterations, ref->res.metrics.residual);
    free(W), free(all);
}

static void test_shared_apgd(void** state)
{
    (void)state;
    split_against_whole("apgd", 2, 1);
    split_against_whole("apgd", 3, 1);
}

static void test_shared_jacobi(void** state)
{
    (void)state;
    split_against_whole("jacobi", 2, 1);
    split_against_whole("jacobi", 3, 1);
}

/* The whole problem (*W, malloc'd) as process 0's part of itself. */
static part* the_whole(whole** W)
{
    *W = malloc(sizeof **W);
    part* q = calloc(1, sizeof *q);
    assert_non_null(*W);
    assert_non_null(q);
    rng = 0x9E3779B97F4A7C15ull;
    make_whole(*W);
    whole_part(q, *W);
    return q;
}

/* Without exact sums the chunked sums of one process differ in the last
 * bits from the exact ones: the setting is what the split needs. */
static void test_exact_changes_bits(void** state)
{
    (void)state;
    whole* W = NULL;
    part* q = the_whole(&W);
    q->solver = "apgd";
    q->threads = 1;
    solve_part(q);
    assert_true(q->st == DVI_OK);
    double g1[3 * NC];
    memcpy(g1, q->gamma, sizeof g1);
    /* the same solve with the ordinary sums: the same answer to the tolerance */
    part_problem* pp = malloc(sizeof *pp);
    assert_non_null(pp);
    part_problem_of(pp, q);
    dvi_solver_settings s = dvi_default_solver_settings();
    s.tolerance = 1e-7;
    s.max_iterations = 3000;
    dvi_solve_result res;
    double g2[3 * NC] = {0};
    assert_int_equal(dvi_ccp_solve(&pp->pb, "apgd", &s, g2, &res), DVI_OK);
    free(pp);
    double dmax = 0.0, gmax = 0.0;
    for (int i = 0; i < 3 * NC; i++) {
        dmax = fmax(dmax, fabs(g1[i] - g2[i]));
        gmax = fmax(gmax, fabs(g1[i]));
    }
    assert_true(dmax <= 1e-4 * gmax); /* both within the tolerance of the answer */
    assert_true(dmax > 0.0);          /* but not the same bits */
    free(W), free(q);
}

static void test_shared_refused(void** state)
{
    (void)state;
    whole* W = NULL;
    part* q = the_whole(&W);
    part_problem* pp = malloc(sizeof *pp);
    assert_non_null(pp);
    part_problem_of(pp, q);
    dvi_ccp_shared sh = {0};
    pp->pb.shared = &sh;
    dvi_solve_result res;
    dvi_status st = dvi_ccp_solve(&pp->pb, "pgs", NULL, q->gamma, &res);
    free(pp);
    assert_int_equal(st, DVI_ERR_UNSUPPORTED);
    assert_non_null(strstr(res.message, "shared: pgs does not take a problem split over processes (solvers that do: apgd, jacobi)"));
    /* the Delassus form */
    dvi_ccp_problem pw = dvi_ccp_problem_empty();
    const dvi_ccp_block one = {.kind = DVI_BLOCK_FRICTIONLESS};
    const int32_t cp[2] = {0, 1}, ri[1] = {0};
    const double wv[1] = {1.0}, r1[1] = {-1.0};
    dvi_csc Wm = {1, 1, cp, ri, wv};
    pw.rows = 1, pw.block_count = 1, pw.blocks = &one, pw.W = &Wm, pw.r = r1, pw.shared = &sh;
    double g = 0.0;
    st = dvi_ccp_solve(&pw, "apgd", NULL, &g, &res);
    assert_int_equal(st, DVI_ERR_UNSUPPORTED);
    assert_non_null(strstr(res.message, "shared: a problem split over processes needs the factor form with frames"));
    free(W), free(q);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exact_known),        cmocka_unit_test(test_exact_orders),
        cmocka_unit_test(test_shared_apgd),        cmocka_unit_test(test_shared_jacobi),
        cmocka_unit_test(test_exact_changes_bits), cmocka_unit_test(test_shared_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
