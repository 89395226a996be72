/* What a solve's status claims, against answers known in closed form:
 * "converged" only with the right answer, "infeasible" only with no answer.
 * Each problem is small (N given densely, in the W form) and is solved by
 * every solver at its default settings (tolerance 1e-6, 1,000 iterations).
 *
 * - Two bilateral rows asking γ₁ + γ₂ = 1 and γ₁ + γ₂ = 0 (N = [[1, 1],
 *   [1, 1]], r = (−1, 0)) have no solution; Lemke's least-squares answer
 *   leaves u = (−½, ½), a feasibility residual of 1/√2: not converged.
 * - Bilateral rows of very different scales (N₁₁ = 1e-8, r₁ = −1, beside a
 *   coupled pair of unit rows): γ = (1e8, 10, −10). The natural-map
 *   residual divides by ‖γ‖ = 1e8; the small rows' error must still count.
 * - One friction contact at μ = 1e6 and 1e9 approaching at 1 m/s with a
 *   tangential velocity of 1e-3 m/s: γ = (1, −1e-3, 0) (sticking). γ = 0
 *   leaves u_n = −1; the De Saxcé shift μ‖u_t‖ hides it from the Coulomb
 *   residual.
 * - A positive-definite, nearly singular pair (N = [[1, a], [a, 1]],
 *   a = 1 − 1e-4, r = (−1, 1)): γ = 1e4 (1, −1), never "infeasible"; the
 *   same with friction: one contact, its normal and first tangential rows
 *   coupled by a, μ = 1, r = (−1, 1, 0).
 * - A box (1 kg) at rest on the ground under μ = 1e6 and 1e9 (Coulomb's
 *   law, nsgs): it stays on the ground. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "dvi/ccp.h"
#include "dvi/world.h"
#include "test_util.h"

#define CHECK(cond, ...)                                                                                               \
    do {                                                                                                               \
        if (!(cond)) fail_msg(__VA_ARGS__);                                                                            \
    } while (0)

static const char* const SOLVERS[] = {"apgd", "pgs", "jacobi", "lemke", "nsgs", "newton", "desaxce"};
#define NSOLVERS 7

/* A problem of m ≤ 4 rows in the W form from a dense row-major N. */
typedef struct dense_problem {
    dvi_ccp_problem p;
    dvi_csc W;
    int32_t cp[5], ri[16];
    double va[16], r[4];
    dvi_ccp_block blocks[4];
} dense_problem;

static void dense_init(dense_problem* d, const double* N, const double* r, int32_t m, const dvi_ccp_block* blocks,
                       int32_t nb)
{
    int32_t nz = 0;
    d->cp[0] = 0;
    for (int32_t j = 0; j < m; j++) {
        for (int32_t i = 0; i < m; i++)
            if (N[m * i + j] != 0.0) {
                d->ri[nz] = i;
                d->va[nz++] = N[m * i + j];
            }
        d->cp[j + 1] = nz;
    }
    d->W = (dvi_csc){m, m, d->cp, d->ri, d->va};
    memcpy(d->r, r, (size_t)m * sizeof(double));
    memcpy(d->blocks, blocks, (size_t)nb * sizeof(dvi_ccp_block));
    d->p = dvi_ccp_problem_empty();
    d->p.rows = m;
    d->p.block_count = nb;
    d->p.blocks = d->blocks;
    d->p.W = &d->W;
    d->p.r = d->r;
}

static dvi_solve_result solve(const dense_problem* d, const char* name, double* gamma)
{
    dvi_solver_settings s = dvi_default_solver_settings();
    dvi_solve_result res;
    memset(gamma, 0, 4 * sizeof(double));
    const dvi_status st = dvi_ccp_solve(&d->p, name, &s, gamma, &res);
    CHECK((st == DVI_OK) == (res.status == DVI_SOLVE_CONVERGED), "%s: status %d with %s", name, (int)st,
          dvi_solve_status_string(res.status));
    print_message("  %-8s %-15s %5d it, target %.2e, feasibility %.2e, gamma %.9g %.9g %.9g\n", name,
                  dvi_solve_status_string(res.status), (int)res.iterations, res.target_residual,
                  res.metrics.residual_feasibility, gamma[0], gamma[1], gamma[2]);
    return res;
}

/* Every "converged" within rel of the reference γ (relative to its size). */
static void check_converged_right(const dense_problem* d, const double* want, double rel, bool must_converge)
{
    const int32_t m = d->p.rows;
    double wn = 0.0;
    for (int32_t i = 0; i < m; i++) wn = fmax(wn, fabs(want[i]));
    for (int k = 0; k < NSOLVERS; k++) {
        double g[4];
        dvi_solve_result res = solve(d, SOLVERS[k], g);
        CHECK(res.status != DVI_SOLVE_INFEASIBLE, "%s: infeasible on a problem with a solution (%s)", SOLVERS[k],
              res.message);
        if (must_converge)
            CHECK(res.status == DVI_SOLVE_CONVERGED, "%s: %s (%s)", SOLVERS[k], dvi_solve_status_string(res.status),
                  res.message);
        if (res.status != DVI_SOLVE_CONVERGED) continue;
        for (int32_t i = 0; i < m; i++)
            CHECK(fabs(g[i] - want[i]) <= rel * wn, "%s: converged with gamma[%d] = %.9g, expected %.9g (within %g)",
                  SOLVERS[k], (int)i, g[i], want[i], rel * wn);
    }
}

static void test_inconsistent_bilateral(void** state)
{
    (void)state;
    const double N[4] = {1, 1, 1, 1}, r[2] = {-1, 0};
    const dvi_ccp_block b[2] = {{.kind = DVI_BLOCK_BILATERAL}, {.kind = DVI_BLOCK_BILATERAL}};
    dense_problem d;
    dense_init(&d, N, r, 2, b, 2);
    for (int k = 0; k < NSOLVERS; k++) {
        double g[4];
        dvi_solve_result res = solve(&d, SOLVERS[k], g);
        CHECK(res.status != DVI_SOLVE_CONVERGED, "%s: converged on a problem with no solution", SOLVERS[k]);
        if (strcmp(SOLVERS[k], "lemke") == 0) { /* its least-squares answer: u = (−½, ½) */
            assert_near(res.metrics.residual_feasibility, sqrt(0.5), 1e-9);
            assert_int_equal(res.status, DVI_SOLVE_MAX_ITERATIONS);
            CHECK(strstr(res.message, "feasibility residual") != NULL, "lemke: message \"%s\"", res.message);
        }
    }
}

static void test_bilateral_scales(void** state)
{
    (void)state;
    /* rows 2 and 3 coupled by 0.9: [[1, 0.9], [0.9, 1]] γ = (1, −1) → γ = (10, −10) */
    const double N[9] = {1e-8, 0, 0, 0, 1, 0.9, 0, 0.9, 1}, r[3] = {-1, -1, 1};
    const dvi_ccp_block b[3] = {{.kind = DVI_BLOCK_BILATERAL}, {.kind = DVI_BLOCK_BILATERAL},
                                {.kind = DVI_BLOCK_BILATERAL}};
    dense_problem d;
    dense_init(&d, N, r, 3, b, 3);
    /* the small rows checked on their own scale: 1e-5 of 10 */
    const double want[3] = {1e8, 10, -10};
    for (int k = 0; k < NSOLVERS; k++) {
        double g[4];
        dvi_solve_result res = solve(&d, SOLVERS[k], g);
        CHECK(res.status == DVI_SOLVE_CONVERGED, "%s: %s (%s)", SOLVERS[k], dvi_solve_status_string(res.status),
              res.message);
        assert_near(g[0], want[0], 1e-5 * want[0]);
        assert_near(g[1], want[1], 1e-5 * 10.0);
        assert_near(g[2], want[2], 1e-5 * 10.0);
    }
}

/* The automatic block tolerance: 100 √blocks × tolerance within [1e-6,
 * 0.1]; a value set is kept; the solve reports the one it was judged by. */
static void test_block_tolerance_value(void** state)
{
    (void)state;
    dvi_solver_settings s = dvi_default_solver_settings();
    assert_true(s.block_tolerance == 0.0);
    assert_true(dvi_block_tolerance(&s, 1) == 1e-6);            /* 100 × 1e-8 = 1e-6 */
    s.tolerance = 1e-9;
    assert_true(dvi_block_tolerance(&s, 4) == 1e-6);            /* 2e-7, below the floor */
    s.tolerance = 1e-6;
    assert_true(fabs(dvi_block_tolerance(&s, 100) - 1e-3) <= 1e-18); /* 100 × 10 × 1e-6 */
    s.tolerance = 1e-4;
    assert_true(dvi_block_tolerance(&s, 25000) == 0.1);         /* 1.58, at the ceiling */
    s.block_tolerance = 1e-5;
    assert_true(dvi_block_tolerance(&s, 25000) == 1e-5);
    assert_true(isnan(dvi_block_tolerance(NULL, 3)));
    /* the bilateral rows of different scales: judged by 100 √3 × 1e-8 */
    const double N[9] = {1e-8, 0, 0, 0, 1, 0.9, 0, 0.9, 1}, r[3] = {-1, -1, 1};
    const dvi_ccp_block b[3] = {{.kind = DVI_BLOCK_BILATERAL}, {.kind = DVI_BLOCK_BILATERAL},
                                {.kind = DVI_BLOCK_BILATERAL}};
    dense_problem d;
    dense_init(&d, N, r, 3, b, 3);
    double g[4];
    dvi_solve_result res = solve(&d, "apgd", g);
    assert_true(res.block_tolerance == 100.0 * sqrt(3.0) * 1e-8 && res.metrics.residual_block <= res.block_tolerance);
    res = solve(&d, "lemke", g); /* a pivoting method: at least 1e-4 */
    assert_true(res.block_tolerance == 1e-4);
}

static void test_huge_friction(void** state)
{
    (void)state;
    const double N[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, r[3] = {-1, 1e-3, 0}, want[3] = {1, -1e-3, 0};
    for (double mu = 1e6; mu <= 1e9; mu *= 1e3) {
        const dvi_ccp_block b[1] = {{.kind = DVI_BLOCK_FRICTION, .mu = mu}};
        dense_problem d;
        dense_init(&d, N, r, 3, b, 1);
        print_message("mu = %g\n", mu);
        for (int k = 0; k < NSOLVERS; k++) {
            double g[4];
            dvi_solve_result res = solve(&d, SOLVERS[k], g);
            if (strcmp(SOLVERS[k], "lemke") == 0 && mu > 1e6) continue; /* its pyramid LCP: a ray at 1e9 */
            CHECK(res.status == DVI_SOLVE_CONVERGED, "%s, mu %g: %s (%s)", SOLVERS[k], mu,
                  dvi_solve_status_string(res.status), res.message);
            /* γ = 0 (u_n = −1) was "converged" after 0 iterations */
            for (int i = 0; i < 3; i++) assert_near(g[i], want[i], 1e-5);
            CHECK(res.metrics.residual_feasibility <= 1e-6, "%s: feasibility residual %g", SOLVERS[k],
                  res.metrics.residual_feasibility);
        }
    }
}

static void test_nearly_singular_not_infeasible(void** state)
{
    (void)state;
    const double a = 1.0 - 1e-4;
    {
        const double N[4] = {1, a, a, 1}, r[2] = {-1, 1}, want[2] = {1e4, -1e4};
        const dvi_ccp_block b[2] = {{.kind = DVI_BLOCK_BILATERAL}, {.kind = DVI_BLOCK_BILATERAL}};
        dense_problem d;
        dense_init(&d, N, r, 2, b, 2);
        print_message("bilateral pair\n");
        check_converged_right(&d, want, 1e-5, false);
        /* apgd and lemke solve it (they called it infeasible) */
        double g[4];
        assert_int_equal(solve(&d, "apgd", g).status, DVI_SOLVE_CONVERGED);
        assert_int_equal(solve(&d, "lemke", g).status, DVI_SOLVE_CONVERGED);
    }
    {
        /* friction: the normal and first tangential rows coupled by a; μ = 1.
         * The unconstrained answer N⁻¹(1, −1, 0) = 1e4 (1, −1, 0) lies on
         * the cone's surface (‖γ_t‖ = μ γ_n) with u = 0: the solution. */
        const double N[9] = {1, a, 0, a, 1, 0, 0, 0, 1}, r[3] = {-1, 1, 0}, want[3] = {1e4, -1e4, 0};
        const dvi_ccp_block b[1] = {{.kind = DVI_BLOCK_FRICTION, .mu = 1.0}};
        dense_problem d;
        dense_init(&d, N, r, 3, b, 1);
        print_message("friction contact\n");
        check_converged_right(&d, want, 1e-4, false);
    }
}

/* A 0.2 m box of 1 kg at rest on the ground, Coulomb's law with nsgs (the
 * world's tolerance 1e-8, 2,000 sweeps), 0.5 s at h = 1e-3 s, at μ = 1e6
 * and 1e9: the box's centre stays at 0.1 m (at 1e9 it sank 0.197 m in 1 s,
 * every step "converged" at γ = 0). At 1e6 every step converges; at 1e9
 * nsgs stalls near 3e-7, and a step is "converged" exactly when its
 * residual is within the tolerance. */
static void test_box_huge_friction(void** state)
{
    (void)state;
    for (double mu = 1e6; mu <= 1e9; mu *= 1e3) {
        dvi_world_def wd = dvi_default_world_def();
        wd.friction_law = DVI_LAW_COULOMB;
        wd.solver = "nsgs";
        const double tol = wd.solver_settings.tolerance;
        dvi_world* w = NULL;
        assert_int_equal(dvi_world_create(&wd, &w), DVI_OK);
        dvi_body_def gd = dvi_default_body_def();
        gd.type = DVI_BODY_FIXED;
        dvi_body_id ground, box;
        dvi_shape_id sid;
        assert_int_equal(dvi_body_create(w, &gd, &ground), DVI_OK);
        dvi_shape_def sd = dvi_default_shape_def();
        sd.type = DVI_SHAPE_PLANE;
        sd.material.friction = mu;
        assert_int_equal(dvi_shape_create(w, ground, &sd, &sid), DVI_OK);
        dvi_body_def bd = dvi_default_body_def();
        bd.mass = 1.0;
        for (int k = 0; k < 3; k++) bd.inertia[4 * k] = 0.04 / 6.0;
        bd.position[2] = 0.1;
        assert_int_equal(dvi_body_create(w, &bd, &box), DVI_OK);
        sd = dvi_default_shape_def();
        sd.type = DVI_SHAPE_BOX;
        sd.half_extents[0] = sd.half_extents[1] = sd.half_extents[2] = 0.1;
        sd.material.friction = mu;
        assert_int_equal(dvi_shape_create(w, box, &sd, &sid), DVI_OK);
        int not_converged = 0;
        double x[3], zmin = 1.0;
        for (int i = 0; i < 500; i++) {
            const dvi_status st = dvi_world_step(w, 1e-3);
            CHECK(st >= 0, "step %d: %s", i, dvi_world_last_error(w));
            const dvi_step_stats ss = dvi_world_get_stats(w);
            CHECK((st == DVI_OK) == (ss.residual <= tol), "mu %g, step %d: status %d with residual %g", mu, i,
                  (int)st, ss.residual);
            not_converged += st == DVI_NOT_CONVERGED;
            assert_int_equal(dvi_body_get_position(w, box, x), DVI_OK);
            zmin = fmin(zmin, x[2]);
        }
        dvi_world_destroy(w);
        print_message("box at mu %g: lowest centre %.9f m, %d steps not converged\n", mu, zmin, not_converged);
        /* resting contact: the centre stays within rounding of 0.1 m */
        CHECK(zmin >= 0.1 - 1e-6, "mu %g: the box sank to %.6f m", mu, zmin);
        if (mu < 1e7) assert_int_equal(not_converged, 0);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_inconsistent_bilateral),
        cmocka_unit_test(test_bilateral_scales),
        cmocka_unit_test(test_block_tolerance_value),
        cmocka_unit_test(test_huge_friction),
        cmocka_unit_test(test_nearly_singular_not_infeasible),
        cmocka_unit_test(test_box_huge_friction),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
