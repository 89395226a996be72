/* Tests of the semismooth Newton solver of Coulomb's law (src/ccp/newton.c).
 *
 * A particle on an incline, whose answers are derived in the comments, in
 * the W form, the factor form and on the matrix-free GMRES path: sliding
 * (u_n = 0 and |γ_t| = μ γ_n exactly, where the CCP lifts off at
 * u_n = μ‖u_t‖), sticking, and taking off. Quadratic convergence near the
 * solution on a small random problem. The FCLIB files of tests/data/fclib:
 * every one reaches a Coulomb residual of 1e-8. Warm start, history, reuse
 * without allocation, the same bits on both linear-algebra paths' reruns,
 * and bad input (rolling blocks, settings). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dvi/ccp.h"
#include "dvi/io.h"
#include "problems.h"
#include "test_util.h"

#define PI 3.14159265358979323846

#define CHECK(cond, ...)                                                                                               \
    do {                                                                                                               \
        if (!(cond)) fail_msg(__VA_ARGS__);                                                                            \
    } while (0)
#define ASSERT_NEAR(a, b, eps)                                                                                         \
    do {                                                                                                               \
        double a_ = (a), b_ = (b);                                                                                     \
        CHECK(fabs(a_ - b_) <= (eps), "%s = %.17g, expected %.17g (tolerance %g)", #a, a_, b_, (double)(eps));       \
    } while (0)

/* ---- a particle on an incline -------------------------------------------------------------
 *
 * One FRICTION block, frame n = the incline's normal, t1 = down the slope,
 * t2 = across it; a particle of mass m = 2 kg at rest, gravity g = 9.81,
 * step h = 0.01 s, slope θ. The free velocity after the step is
 * r = (−g h cos θ, g h sin θ, 0) and N = I/m (the rows have no angular part),
 * so u = γ/m + r. */

#define P_MASS 2.0
#define P_G 9.81
#define P_H 0.01

typedef struct incline {
    dvi_ccp_block block;
    double r[3];
    /* W form */
    int32_t wp[4], wi[3];
    double wx[3];
    dvi_csc W;
    /* factor form: one body, D's columns are e_z (n), e_x (t1), e_y (t2) */
    int32_t dp[4], di[3];
    double dx[3];
    dvi_csc D;
    double inv_mass[36];
    dvi_ccp_problem p;
} incline;

static void incline_init(incline* c, double theta, double mu, bool factor_form)
{
    memset(c, 0, sizeof *c);
    c->block.kind = DVI_BLOCK_FRICTION;
    c->block.mu = mu;
    c->r[0] = -P_G * P_H * cos(theta);
    c->r[1] = P_G * P_H * sin(theta);
    c->r[2] = 0.0;
    c->p = dvi_ccp_problem_empty();
    c->p.rows = 3;
    c->p.block_count = 1;
    c->p.blocks = &c->block;
    c->p.r = c->r;
    for (int j = 0; j < 4; j++) c->wp[j] = c->dp[j] = j;
    for (int j = 0; j < 3; j++) {
        c->wi[j] = j;
        c->wx[j] = 1.0 / P_MASS;
        c->dx[j] = 1.0;
    }
    c->di[0] = 2;
    c->di[1] = 0;
    c->di[2] = 1;
    if (factor_form) {
        c->D = (dvi_csc){6, 3, c->dp, c->di, c->dx};
        for (int i = 0; i < 6; i++) c->inv_mass[7 * i] = i < 3 ? 1.0 / P_MASS : 20.0; /* inertia 0.05 kg m² */
        c->p.body_count = 1;
        c->p.D = &c->D;
        c->p.inv_mass = c->inv_mass;
    } else {
        c->W = (dvi_csc){3, 3, c->wp, c->wi, c->wx};
        c->p.W = &c->W;
    }
}

/* Solves with newton (path 0: dense LU, 1: GMRES; line search on or off)
 * and returns u = γ/m + r. */
static void incline_solve(const incline* c, int path, bool line_search, double* g, double* u, dvi_solve_result* res)
{
    dvi_solver_settings s = dvi_default_solver_settings();
    s.tolerance = 1e-12;
    s.newton.max_dense_rows = path == 0 ? 1000 : 0;
    s.newton.line_search = line_search;
    memset(g, 0, 3 * sizeof(double));
    dvi_status st = dvi_ccp_solve(&c->p, "newton", &s, g, res);
    CHECK(st == DVI_OK, "newton: %s (%s)", dvi_solve_status_string(res->status), res->message);
    CHECK(res->metrics.residual_coulomb <= 1e-12, "Coulomb residual %g", res->metrics.residual_coulomb);
    CHECK(res->iterations <= 10, "%d iterations on one contact", res->iterations);
    for (int i = 0; i < 3; i++) u[i] = g[i] / P_MASS + c->r[i];
}

/* θ = 30°, μ = 0.3: tan θ = 0.577 > μ, the particle slides. Coulomb:
 *   u_n = 0            ⇒ γ_n = m g h cos θ = 2·9.81·0.01·0.8660254 = 0.16991418 N s
 *   γ_t = −μ γ_n e_t1  = −0.05097426 N s (up the slope)
 *   u_t1 = g h (sin θ − μ cos θ) = 0.0981·(0.5 − 0.2598076) = 0.02356287 m/s.
 * The CCP instead (N = I/m: γ = m Π_K(−r)) lifts the particle off:
 *   γ_n = m (μ g h sin θ + g h cos θ)/(1 + μ²) = 0.18288457,
 *   u_t1 = g h sin θ − μ γ_n/m = 0.02161731, u_n = μ u_t1 = 0.00648519. */
static void test_incline_slides(void** state)
{
    (void)state;
    const double theta = PI / 6.0, mu = 0.3;
    const double gn = P_MASS * P_G * P_H * cos(theta);
    ASSERT_NEAR(gn, 0.16991418, 1e-8);
    ASSERT_NEAR(P_G * P_H * (sin(theta) - mu * cos(theta)), 0.02356287, 1e-8);
    for (int form = 0; form < 2; form++)
        for (int path = 0; path < 2; path++)
            for (int ls = 0; ls < 2; ls++) {
                incline c;
                incline_init(&c, theta, mu, form == 1);
                double g[3], u[3];
                dvi_solve_result res;
                incline_solve(&c, path, ls == 0, g, u, &res);
                ASSERT_NEAR(g[0], gn, 1e-12);
                ASSERT_NEAR(g[1], -mu * gn, 1e-12);
                ASSERT_NEAR(g[2], 0.0, 1e-12);
                ASSERT_NEAR(fabs(g[1]) / g[0], mu, 1e-12); /* the ratio is exactly μ */
                ASSERT_NEAR(u[0], 0.0, 1e-12);             /* no lift-off */
                ASSERT_NEAR(u[1], 0.02356287, 1e-8);
                ASSERT_NEAR(u[2], 0.0, 1e-12);
                /* the answer is Coulomb's, not the CCP's */
                CHECK(res.metrics.residual > 1e-3, "CCP residual %g of a sliding Coulomb answer", res.metrics.residual);
            }
    /* the CCP's answer (APGD) lifts off at u_n = μ‖u_t‖ */
    incline c;
    incline_init(&c, theta, mu, false);
    dvi_solver_settings s = dvi_default_solver_settings();
    s.tolerance = 1e-12;
    s.max_iterations = 10000;
    double g[3] = {0, 0, 0};
    dvi_solve_result res;
    assert_int_equal(dvi_ccp_solve(&c.p, "apgd", &s, g, &res), DVI_OK);
    ASSERT_NEAR(g[0], 0.18288457, 1e-8);
    const double un = g[0] / P_MASS + c.r[0], ut = g[1] / P_MASS + c.r[1];
    ASSERT_NEAR(ut, 0.02161731, 1e-8);
    ASSERT_NEAR(un, mu * ut, 1e-9);
    CHECK(un > 6e-3, "the CCP answer lifts off (u_n = %g)", un);
}

/* θ = 10°, μ = 0.3: tan θ = 0.176 < μ, the particle sticks: u = 0, γ = −m r
 * = (m g h cos θ, −m g h sin θ, 0) = (0.19321928, −0.03406977, 0), inside the
 * cone (0.0341 < μ γ_n = 0.0580). */
static void test_incline_sticks(void** state)
{
    (void)state;
    const double theta = 10.0 * PI / 180.0, mu = 0.3;
    for (int form = 0; form < 2; form++)
        for (int path = 0; path < 2; path++) {
            incline c;
            incline_init(&c, theta, mu, form == 1);
            double g[3], u[3];
            dvi_solve_result res;
            incline_solve(&c, path, true, g, u, &res);
            ASSERT_NEAR(g[0], 0.19321928, 1e-8);
            ASSERT_NEAR(g[1], -0.03406977, 1e-8);
            ASSERT_NEAR(g[2], 0.0, 1e-12);
            for (int i = 0; i < 3; i++) ASSERT_NEAR(u[i], 0.0, 1e-12);
            CHECK(res.metrics.residual <= 1e-12, "sticking: the CCP residual %g agrees", res.metrics.residual);
        }
}

/* Take-off: the particle already moves away from the surface,
 * r = (0.05, 0.02, −0.01): γ = 0 and u = r. */
static void test_incline_takes_off(void** state)
{
    (void)state;
    for (int form = 0; form < 2; form++)
        for (int path = 0; path < 2; path++) {
            incline c;
            incline_init(&c, 0.0, 0.5, form == 1);
            c.r[0] = 0.05;
            c.r[1] = 0.02;
            c.r[2] = -0.01;
            double g[3], u[3];
            dvi_solve_result res;
            incline_solve(&c, path, true, g, u, &res);
            for (int i = 0; i < 3; i++) ASSERT_NEAR(g[i], 0.0, 1e-14);
            ASSERT_NEAR(u[0], 0.05, 1e-14);
        }
}

/* ---- convergence ------------------------------------------------------------------------- */

/* Near the solution the residuals fall quadratically: on a random problem
 * (8 bodies, 12 contacts, no redundancy; dense path, tolerance 1e-13) the
 * history reads 5.9e-2 3.9e-3 7.1e-5 2.4e-8 1.7e-14 (the last the largest
 * block's own residual; the global one is 3.2e-15): each of the last two
 * steps has the empirical order log(e_k+1/e_k)/log(e_k/e_k-1) ≈ 2, 2.0 and
 * 1.8. Below 1e-13 the block residual is at rounding level (1.7e-16 after
 * a sixth step), where no order can be read. (Where
 * redundant contacts make N singular the proximal shift ε = residual slows
 * this to superlinear: docs/solvers.md.) */
static void test_quadratic(void** state)
{
    (void)state;
    dvi_gen_problem gp;
    assert_int_equal(dvi_gen_random(8, 12, 0, 1, &gp), DVI_OK);
    const int32_t m = gp.p.rows;
    double* g = calloc((size_t)m, sizeof(double));
    double hist[200];
    dvi_solver_settings s = dvi_default_solver_settings();
    s.tolerance = 1e-13;
    s.max_iterations = 200;
    dvi_solver* sv = NULL;
    assert_int_equal(dvi_solver_create("newton", &s, &sv), DVI_OK);
    assert_int_equal(dvi_solver_record_history(sv, hist, 200), DVI_OK);
    dvi_solve_result res;
    dvi_status st = dvi_solver_solve(sv, &gp.p, g, &res);
    CHECK(st == DVI_OK, "random problem: %s (%s)", dvi_solve_status_string(res.status), res.message);
    const int n = res.history_length;
    assert_int_equal(n, res.iterations);
    printf("random problem, %d rows: %d Newton iterations, residuals", (int)m, n);
    for (int i = 0; i < n; i++) printf(" %.1e", hist[i]);
    printf("\n");
    CHECK(n >= 4 && n <= 8, "%d iterations", n);
    for (int k = n - 2; k < n; k++) {
        const double order = log(hist[k] / hist[k - 1]) / log(hist[k - 1] / hist[k - 2]);
        CHECK(order >= 1.7, "order %.2f at iteration %d (residuals %g %g %g)", order, k + 1, hist[k - 2], hist[k - 1],
              hist[k]);
    }
    dvi_solver_destroy(sv);
    free(g);
    dvi_gen_free(&gp);
}

/* ---- FCLIB files ------------------------------------------------------------------------- */

/* Every file reaches the Coulomb residual 1e-8 (FCLIB's measure, against
 * the file's own W) from γ = 0 on the dense path, all six in well under 2 s
 * optimised (about 0.9 s, most of it Capsules); and on the GMRES path
 * (newton.max_dense_rows = 0) all but local_problem_test, a box stack on
 * which GMRES needs 0.8 s alone (about 0.3 s for the five). */
static void test_fclib(void** state)
{
    (void)state;
    static const char* const names[] = {"CubeH8", "OneObject-i1028-138", "local_problem_test",
                                         "LMGC_100_PR_PerioBox-i00361-60-03000", "Box_Stacks-i0122-82-5",
                                         "Capsules-i125-1213"};
    double total = 0.0;
    for (int run = 0; run < 12; run++) {
        const int f = run % 6;
        const bool gmres = run >= 6;
        if (gmres && f == 2) continue; /* local_problem_test: slow on GMRES */
        char path[1024], msg[256];
        snprintf(path, sizeof path, "%s/%s.hdf5", SRC_PATH("tests/data/fclib"), names[f]);
        dvi_ccp_file* file = NULL;
        dvi_fclib_info info;
        dvi_status st = dvi_fclib_read_ex(path, 0, &file, &info, msg, sizeof msg);
        CHECK(st == DVI_OK, "%s: %s", names[f], msg);
        dvi_solver_settings s = dvi_default_solver_settings();
        s.tolerance = 1e-8;
        s.max_iterations = 200;
        s.newton.max_dense_rows = gmres ? 0 : 1000;
        double* g = calloc((size_t)file->problem.rows, sizeof(double));
        dvi_solve_result res;
        st = dvi_fclib_solve("newton", &s, &file->problem, &info, g, &res);
        printf("%-38s %4d rows, %s: %-10s %3d iterations, Coulomb residual %.2e (CCP %.2e), %.3f s\n", names[f],
               (int)file->problem.rows, gmres ? "GMRES" : "dense", dvi_solve_status_string(res.status), (int)res.iterations,
               res.metrics.residual_coulomb, res.metrics.residual, res.seconds);
        CHECK(st == DVI_OK, "%s: %s (%s)", names[f], dvi_solve_status_string(res.status), res.message);
        CHECK(res.metrics.residual_coulomb <= 1e-8, "%s: Coulomb residual %g", names[f], res.metrics.residual_coulomb);
        total += res.seconds;
        free(g);
        dvi_fclib_info_clear(&info);
        dvi_ccp_file_free(file);
    }
    printf("FCLIB: eleven solves in %.2f s\n", total);
}

/* ---- warm start, history, reuse, determinism ----------------------------------------------- */

typedef struct counter {
    long allocs;
} counter;

static void* count_alloc(void* user, size_t n)
{
    ((counter*)user)->allocs++;
    return malloc(n);
}
static void* count_realloc(void* user, void* p, size_t n)
{
    ((counter*)user)->allocs++;
    return realloc(p, n);
}
static void count_free(void* user, void* p)
{
    (void)user;
    free(p);
}

static void test_warm_start_and_reuse(void** state)
{
    (void)state;
    dvi_gen_problem gp;
    assert_int_equal(dvi_gen_box_stacks(2, 3, 0.5, 1e-3, 5, &gp), DVI_OK); /* redundant corner contacts */
    const int32_t m = gp.p.rows;
    double* g = calloc((size_t)m, sizeof(double));
    double* ref = calloc((size_t)m, sizeof(double));
    for (int path = 0; path < 2; path++) {
        counter c = {0};
        dvi_solver_settings s = dvi_default_solver_settings();
        s.tolerance = 1e-10;
        s.newton.max_dense_rows = path == 0 ? 1000 : 0;
        s.allocator = (dvi_allocator){count_alloc, count_realloc, count_free, &c};
        dvi_solver* sv = NULL;
        assert_int_equal(dvi_solver_create("newton", &s, &sv), DVI_OK);
        double hist[100];
        assert_int_equal(dvi_solver_record_history(sv, hist, 100), DVI_OK);
        dvi_solve_result res;
        dvi_status st = dvi_solver_solve(sv, &gp.p, ref, &res);
        CHECK(st == DVI_OK, "box stacks (%s): %s (%s)", path ? "GMRES" : "dense", dvi_solve_status_string(res.status),
              res.message);
        CHECK(res.history_length == res.iterations && res.iterations > 0, "history %d, iterations %d",
              res.history_length, res.iterations);
        ASSERT_NEAR(hist[res.history_length - 1], res.target_residual, 0.0);
        CHECK(res.target_residual == fmax(res.metrics.residual_coulomb, res.metrics.residual_feasibility) &&
                  res.metrics.residual_block_coulomb <= res.block_tolerance,
              "target %g, Coulomb residual %g, feasibility residual %g, block residual %g", res.target_residual,
              res.metrics.residual_coulomb, res.metrics.residual_feasibility, res.metrics.residual_block_coulomb);
        /* the same problem again: no allocation, the same bits */
        const long before = c.allocs;
        st = dvi_solver_solve(sv, &gp.p, g, &res);
        assert_int_equal(st, DVI_OK);
        assert_int_equal(c.allocs, before);
        assert_memory_equal(g, ref, (size_t)m * sizeof(double));
        /* warm start from the answer: no iteration */
        s.warm_start = true;
        assert_int_equal(dvi_solver_set_settings(sv, &s), DVI_OK);
        st = dvi_solver_solve(sv, &gp.p, g, &res);
        assert_int_equal(st, DVI_OK);
        assert_int_equal(res.iterations, 0);
        assert_int_equal(res.history_length, 0);
        dvi_solver_destroy(sv);
    }
    free(g);
    free(ref);
    dvi_gen_free(&gp);
}

/* The bilateral and frictionless rows of a random problem with joints, in
 * the factor form and with its contacts given by frames: a Coulomb answer
 * with bilateral rows at u = 0. */
static void test_joints_and_frames(void** state)
{
    (void)state;
    dvi_gen_problem gp;
    assert_int_equal(dvi_gen_random(10, 15, 4, 9, &gp), DVI_OK);
    const int32_t m = gp.p.rows;
    double* g = calloc((size_t)m, sizeof(double));
    double* g2 = calloc((size_t)m, sizeof(double));
    dvi_solver_settings s = dvi_default_solver_settings();
    s.tolerance = 1e-10;
    dvi_solve_result res;
    dvi_status st = dvi_ccp_solve(&gp.p, "newton", &s, g, &res);
    CHECK(st == DVI_OK, "random with joints: %s (%s)", dvi_solve_status_string(res.status), res.message);
    assert_true(dvi_gen_use_frames(&gp) > 0);
    st = dvi_ccp_solve(&gp.p, "newton", &s, g2, &res);
    CHECK(st == DVI_OK, "random with joints, frames: %s (%s)", dvi_solve_status_string(res.status), res.message);
    double d = 0.0, n = 0.0;
    for (int32_t i = 0; i < m; i++) {
        d = fmax(d, fabs(g[i] - g2[i]));
        n = fmax(n, fabs(g[i]));
    }
    CHECK(d <= 1e-6 * n, "columns and frames differ by %g (|gamma| %g)", d, n);
    free(g);
    free(g2);
    dvi_gen_free(&gp);
}

/* ---- bad input ------------------------------------------------------------------------------ */

static void test_bad_input(void** state)
{
    (void)state;
    /* a rolling block is refused, naming it */
    incline c;
    incline_init(&c, 0.0, 0.3, false);
    dvi_ccp_block blocks[2] = {{DVI_BLOCK_FRICTION, 0.3, 0, 0}, {DVI_BLOCK_FRICTION_ROLLING, 0.3, 0.01, 0.01}};
    int32_t wp[10], wi[9];
    double wx[9], r[9] = {-0.1, 0, 0, -0.1, 0.01, 0, 0, 0, 0};
    for (int j = 0; j <= 9; j++) wp[j] = j;
    for (int j = 0; j < 9; j++) {
        wi[j] = j;
        wx[j] = 1.0;
    }
    dvi_csc W = {9, 9, wp, wi, wx};
    dvi_ccp_problem p = dvi_ccp_problem_empty();
    p.rows = 9;
    p.block_count = 2;
    p.blocks = blocks;
    p.W = &W;
    p.r = r;
    double g[9] = {0};
    dvi_solve_result res;
    dvi_status st = dvi_ccp_solve(&p, "newton", NULL, g, &res);
    assert_int_equal(st, DVI_ERR_INVALID_ARG);
    assert_int_equal(res.status, DVI_SOLVE_BAD_INPUT);
    CHECK(strstr(res.message, "blocks[1]") && strstr(res.message, "friction_rolling"), "message \"%s\"",
          res.message);
    /* settings */
    dvi_solver_settings s = dvi_default_solver_settings();
    s.newton.rho = 0.0;
    st = dvi_ccp_solve(&c.p, "newton", &s, g, &res);
    assert_int_equal(st, DVI_ERR_INVALID_ARG);
    CHECK(strstr(res.message, "settings.newton.rho") != NULL, "message \"%s\"", res.message);
    s.newton.rho = NAN;
    assert_int_equal(dvi_ccp_solve(&c.p, "newton", &s, g, &res), DVI_ERR_INVALID_ARG);
    s = dvi_default_solver_settings();
    s.newton.max_dense_rows = -1;
    st = dvi_ccp_solve(&c.p, "newton", &s, g, &res);
    assert_int_equal(st, DVI_ERR_INVALID_ARG);
    CHECK(strstr(res.message, "settings.newton.max_dense_rows") != NULL, "message \"%s\"", res.message);
    /* the law and the name */
    dvi_solver* sv = NULL;
    assert_int_equal(dvi_solver_create("newton", NULL, &sv), DVI_OK);
    assert_int_equal(dvi_solver_get_law(sv), DVI_LAW_COULOMB);
    assert_string_equal(dvi_solver_get_name(sv), "newton");
    dvi_solver_destroy(sv);
}

/* A budget too small is reported as such, with the best iterate. */
static void test_budget(void** state)
{
    (void)state;
    dvi_gen_problem gp;
    assert_int_equal(dvi_gen_granular(50, 0.3, 1e-3, 3, &gp), DVI_OK);
    double* g = calloc((size_t)gp.p.rows, sizeof(double));
    dvi_solver_settings s = dvi_default_solver_settings();
    s.tolerance = 1e-12;
    s.max_iterations = 2;
    dvi_solve_result res;
    dvi_status st = dvi_ccp_solve(&gp.p, "newton", &s, g, &res);
    assert_int_equal(st, DVI_NOT_CONVERGED);
    assert_int_equal(res.status, DVI_SOLVE_MAX_ITERATIONS);
    assert_int_equal(res.iterations, 2);
    CHECK(strstr(res.message, "max_iterations") != NULL, "message \"%s\"", res.message);
    CHECK(isfinite(res.metrics.residual_coulomb) && res.metrics.residual_coulomb < 1.0, "residual %g",
          res.metrics.residual_coulomb);
    free(g);
    dvi_gen_free(&gp);
}

/* A problem with no solution is not called converged: two frictionless
 * rows with N = [[1, −1], [−1, 1]] and r = (−1, −1) ask for γ₁ − γ₂ ≥ 1 and
 * γ₂ − γ₁ ≥ 1. With the line search no step lowers the merit (max_iterations,
 * "line search failed"); without it the impulses run away along (1, 1),
 * which N does not see, and the driver's certificate says infeasible. */
static void test_no_solution(void** state)
{
    (void)state;
    static const int32_t cp[3] = {0, 2, 4}, ri[4] = {0, 1, 0, 1};
    static const double va[4] = {1, -1, -1, 1};
    dvi_csc W = {2, 2, cp, ri, va};
    dvi_ccp_block blocks[2] = {{DVI_BLOCK_FRICTIONLESS, 0, 0, 0}, {DVI_BLOCK_FRICTIONLESS, 0, 0, 0}};
    double r[2] = {-1, -1};
    dvi_ccp_problem p = dvi_ccp_problem_empty();
    p.rows = 2;
    p.block_count = 2;
    p.blocks = blocks;
    p.W = &W;
    p.r = r;
    for (int ls = 0; ls < 2; ls++) {
        dvi_solver_settings s = dvi_default_solver_settings();
        s.newton.line_search = ls == 1;
        double g[2] = {0, 0};
        dvi_solve_result res;
        dvi_status st = dvi_ccp_solve(&p, "newton", &s, g, &res);
        assert_int_equal(st, DVI_NOT_CONVERGED);
        if (ls == 1) {
            assert_int_equal(res.status, DVI_SOLVE_MAX_ITERATIONS);
            CHECK(strstr(res.message, "line search failed") != NULL, "message \"%s\"", res.message);
        } else {
            assert_int_equal(res.status, DVI_SOLVE_INFEASIBLE);
            CHECK(strstr(res.message, "infeasible") != NULL, "message \"%s\"", res.message);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_incline_slides),
        cmocka_unit_test(test_incline_sticks),
        cmocka_unit_test(test_incline_takes_off),
        cmocka_unit_test(test_quadratic),
        cmocka_unit_test(test_fclib),
        cmocka_unit_test(test_warm_start_and_reuse),
        cmocka_unit_test(test_joints_and_frames),
        cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_budget),
        cmocka_unit_test(test_no_solution),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
