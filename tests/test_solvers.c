/* dvicontact — physics and cross-solver tests of the CCP solvers.
 *
 * Every test states the number it expects and a tolerance tight enough to
 * catch a real bug (a wrong sign, a missing term, a bad step size). Reference
 * answers come from closed forms (single contact, sphere stack, box stacks),
 * from a direct CHOLMOD factorisation (bilateral-only problems), or from
 * another solver when only agreement can be claimed (random problems).
 *
 * A note on the single sliding contact. The cone solvers (apgd, pgs,
 * jacobi) solve the CCP: min ½γᵀNγ + rᵀγ over the cone. For a point body
 * with N = I and r = (−1, 2, 0), μ = 0.5, that is the projection of −r onto
 * the cone, γ = (1.6, −0.8, 0), u = (0.6, 1.2, 0): the contact slides AND
 * separates with u_n = μ‖u_t‖ (the known artefact of the convex relaxation).
 * Lemke by default (settings.lemke.coulomb = false) solves the same CCP with
 * the cone replaced by its inscribed k-pyramid, so it returns the same
 * γ = (1.6, −0.8, 0) exactly when the push is along a pyramid vertex.
 * With settings.lemke.coulomb = true it solves the Anitescu–Potra Coulomb
 * pyramid LCP instead, whose answer is γ = (1, −0.5, 0), u = (0, 1.5, 0)
 * (exactly, when the sliding direction is a pyramid vertex). All are
 * checked, each against the right number. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cholmod.h>
#include <lapacke.h>

#include "dvi/dvi.h"
#include "problems.h"
#include "ccp_split.h"
#include "ccp_work.h"
#include "hash_rng.h"
#include "sphere_pile.h"

#define PI 3.14159265358979323846

#define CHECK(cond, ...)                                                                                               \
    do {                                                                                                               \
        if (!(cond)) fail_msg(__VA_ARGS__);                                                                            \
    } while (0)

/* ------------------------------------------------------------------------- */
/* Small independent helpers (no library internals)                           */
/* ------------------------------------------------------------------------- */

static double norm2(const double* x, int32_t n)
{
    double s = 0.0;
    for (int32_t i = 0; i < n; i++) s += x[i] * x[i];
    return sqrt(s);
}
static double dist2(const double* x, const double* y, int32_t n)
{
    double s = 0.0;
    for (int32_t i = 0; i < n; i++) s += (x[i] - y[i]) * (x[i] - y[i]);
    return sqrt(s);
}
static double dmax(double a, double b) { return a > b ? a : b; }

/* y = N x, computed here from D and M⁻¹ (or W), compliance included. */
static void apply_n(const dvi_ccp_problem* p, const double* x, double* y)
{
    int32_t m = p->rows;
    if (p->W) {
        for (int32_t i = 0; i < m; i++) y[i] = 0.0;
        for (int32_t j = 0; j < m; j++)
            for (int32_t e = p->W->colptr[j]; e < p->W->colptr[j + 1]; e++) y[p->W->rowind[e]] += p->W->values[e] * x[j];
    } else {
        int32_t ndof = 6 * p->body_count;
        double* dx = calloc((size_t)ndof, sizeof(double));
        double* v = calloc((size_t)ndof, sizeof(double));
        assert_non_null(dx);
        assert_non_null(v);
        for (int32_t j = 0; j < m; j++)
            for (int32_t e = p->D->colptr[j]; e < p->D->colptr[j + 1]; e++) dx[p->D->rowind[e]] += p->D->values[e] * x[j];
        for (int32_t b = 0; b < p->body_count; b++)
            for (int i = 0; i < 6; i++) {
                double s = 0.0;
                for (int k = 0; k < 6; k++) s += p->inv_mass[36 * b + 6 * i + k] * dx[6 * b + k];
                v[6 * b + i] = s;
            }
        for (int32_t j = 0; j < m; j++) {
            double s = 0.0;
            for (int32_t e = p->D->colptr[j]; e < p->D->colptr[j + 1]; e++) s += p->D->values[e] * v[p->D->rowind[e]];
            y[j] = s;
        }
        free(dx);
        free(v);
    }
    if (p->compliance)
        for (int32_t i = 0; i < m; i++) y[i] += p->compliance[i] * x[i];
}

/* u = N γ + r, and the objective ½γᵀNγ + rᵀγ. */
static double velocity_and_objective(const dvi_ccp_problem* p, const double* gamma, double* u)
{
    apply_n(p, gamma, u);
    double obj = 0.0;
    for (int32_t i = 0; i < p->rows; i++) {
        obj += 0.5 * gamma[i] * u[i] + p->r[i] * gamma[i];
        u[i] += p->r[i];
    }
    return obj;
}

/* Dense N (column-major), from the helper above, one column at a time. */
static double* dense_n(const dvi_ccp_problem* p)
{
    int32_t m = p->rows;
    double* N = calloc((size_t)m * (size_t)m, sizeof(double));
    double* e = calloc((size_t)m, sizeof(double));
    assert_non_null(N);
    assert_non_null(e);
    for (int32_t j = 0; j < m; j++) {
        e[j] = 1.0;
        apply_n(p, e, N + (size_t)j * m);
        e[j] = 0.0;
    }
    free(e);
    return N;
}

/* Condition number λmax/λmin of N (inf when singular), via LAPACKE_dsyev. */
static double condition_number(const dvi_ccp_problem* p)
{
    int32_t m = p->rows;
    double* N = dense_n(p);
    double* w = calloc((size_t)m, sizeof(double));
    assert_non_null(w);
    lapack_int info = LAPACKE_dsyev(LAPACK_COL_MAJOR, 'N', 'U', m, N, m, w);
    assert_int_equal(info, 0);
    double lmin = w[0], lmax = w[m - 1];
    free(N);
    free(w);
    return lmin > 1e-12 * lmax ? lmax / lmin : INFINITY;
}

static dvi_solver_settings settings(double tol, int32_t maxit)
{
    dvi_solver_settings s = dvi_default_solver_settings();
    s.tolerance = tol;
    s.max_iterations = maxit;
    return s;
}

/* dvi_ccp_solve from γ = 0 (or warm), with a check that nothing is an error. */
/* dvi_ccp_solve, recording the residual of each iteration into hist[cap]
 * (a solver of its own, since the buffer belongs to the solver). */
static dvi_status solve_recording(const dvi_ccp_problem* p, const char* name, const dvi_solver_settings* s,
                                  double* gamma, dvi_solve_result* res, double* hist, int32_t cap)
{
    dvi_solver* solver = NULL;
    dvi_status st = dvi_solver_create(name, s, &solver);
    if (st != DVI_OK) return st;
    st = dvi_solver_record_history(solver, hist, cap);
    if (st == DVI_OK) st = dvi_solver_solve(solver, p, gamma, res);
    dvi_solver_destroy(solver);
    return st;
}

static dvi_status run(const dvi_ccp_problem* p, const char* name, const dvi_solver_settings* s, double* gamma,
                      dvi_solve_result* res)
{
    memset(res, 0, sizeof *res);
    dvi_status st = dvi_ccp_solve(p, name, s, gamma, res);
    CHECK(st >= 0, "%s: solve failed with %d (%s): %s", name, (int)st, dvi_status_string(st), res->message);
    print_message("  %-6s %-15s it %6d  res %.3e  coulomb %.3e  block %.3e  obj %.12g  %.4f s\n", name,
                  dvi_solve_status_string(res->status), res->iterations, res->metrics.residual,
                  res->metrics.residual_coulomb, res->metrics.residual_block, res->metrics.objective, res->seconds);
    return st;
}

/* ------------------------------------------------------------------------- */
/* 1. A single frictional contact on a point-like body                         */
/* ------------------------------------------------------------------------- */

/* One body with M⁻¹ = I6; the contact acts at the centre, so D has only
 * linear parts: n = +z (row 2), t1 = +x (row 0), t2 = +y (row 1). N = I3. */
typedef struct one_contact {
    int32_t cp[4], ri[3];
    double va[3], minv[36], r[3];
    dvi_ccp_block block;
    dvi_csc D;
    dvi_ccp_problem p;
} one_contact;

static void one_contact_init(one_contact* c, double rn, double rt1, double rt2, double mu)
{
    memset(c, 0, sizeof *c);
    c->cp[0] = 0;
    c->cp[1] = 1;
    c->cp[2] = 2;
    c->cp[3] = 3;
    c->ri[0] = 2;
    c->ri[1] = 0;
    c->ri[2] = 1;
    c->va[0] = c->va[1] = c->va[2] = 1.0;
    for (int i = 0; i < 6; i++) c->minv[7 * i] = 1.0;
    c->r[0] = rn;
    c->r[1] = rt1;
    c->r[2] = rt2;
    c->block.kind = DVI_BLOCK_FRICTION;
    c->block.mu = mu;
    c->D = (dvi_csc){6, 3, c->cp, c->ri, c->va};
    c->p = dvi_ccp_problem_empty();
    c->p.rows = 3;
    c->p.block_count = 1;
    c->p.blocks = &c->block;
    c->p.body_count = 1;
    c->p.D = &c->D;
    c->p.inv_mass = c->minv;
    c->p.r = c->r;
}

static void check_vec3(const char* what, const double* got, const double* want, double tol)
{
    for (int i = 0; i < 3; i++)
        CHECK(fabs(got[i] - want[i]) <= tol, "%s[%d] = %.15g, expected %.15g (tolerance %g)", what, i, got[i], want[i],
              tol);
}

static void test_single_contact_stick(void** state)
{
    (void)state;
    /* r = (−1, 0.1, 0), μ = 0.5: −r = (1, −0.1, 0) is inside the cone
     * (0.1 ≤ 0.5), so γ = −r and u = 0 (stick). */
    one_contact c;
    one_contact_init(&c, -1.0, 0.1, 0.0, 0.5);
    const double gamma_ok[3] = {1.0, -0.1, 0.0}, u_ok[3] = {0, 0, 0};
    static const char* const iterative[] = {"apgd", "pgs", "jacobi"};
    for (int k = 0; k < 3; k++) {
        dvi_solver_settings s = settings(1e-10, 100000);
        double gamma[3] = {0}, u[3];
        dvi_solve_result res;
        dvi_status st = run(&c.p, iterative[k], &s, gamma, &res);
        CHECK(st == DVI_OK && res.status == DVI_SOLVE_CONVERGED, "%s: not converged (%s)", iterative[k],
              dvi_solve_status_string(res.status));
        velocity_and_objective(&c.p, gamma, u);
        check_vec3(iterative[k], gamma, gamma_ok, 1e-8);
        check_vec3("u", u, u_ok, 1e-8);
    }
    /* Lemke, k = 4 and k = 7: a sticking answer inside the pyramid is exact */
    for (int k = 0; k < 2; k++) {
        dvi_solver_settings s = settings(1e-12, 1000);
        s.lemke.friction_directions = k == 0 ? 4 : 7;
        double gamma[3] = {0}, u[3];
        dvi_solve_result res;
        dvi_status st = run(&c.p, "lemke", &s, gamma, &res);
        CHECK(st == DVI_OK && res.status == DVI_SOLVE_CONVERGED, "lemke k=%d: status %s", s.lemke.friction_directions,
              dvi_solve_status_string(res.status));
        velocity_and_objective(&c.p, gamma, u);
        check_vec3("lemke gamma", gamma, gamma_ok, 1e-12);
        check_vec3("lemke u", u, u_ok, 1e-12);
    }
}

static void test_single_contact_slip(void** state)
{
    (void)state;
    /* r = (−1, 2, 0), μ = 0.5. CCP (cone solvers): γ = Π_K(−r) = Π_K(1, −2, 0):
     *   γ_n = (μ‖x_t‖ + x_n)/(1 + μ²) = (1 + 1)/1.25 = 1.6, γ_t = μγ_n(−1, 0) = (−0.8, 0);
     *   u = γ + r = (0.6, 1.2, 0): sliding with u_n = μ‖u_t‖ = 0.6.
     *   Its Coulomb residual is not zero: ũ = (1.2, 1.2, 0), γ − ũ = (0.4, −2, 0),
     *   Π_K = (1.12, −0.56, 0), term (0.48, −0.24, 0): e = √0.288, scale ‖r‖ = √5
     *   → residual_coulomb = √(0.288/5) = 0.24.
     * Lemke, default (pyramid CCP), k = 4: −r_t points along the pyramid
     *   vertex d_2 = (−1, 0), where the pyramid touches the cone, and the
     *   projection of −r onto the pyramid is the projection onto the cone:
     *   γ = (1.6, −0.8, 0), u = (0.6, 1.2, 0) exactly, CCP residual 0,
     *   Coulomb residual 0.24 as for the cone solvers.
     * Lemke, coulomb = true (Anitescu–Potra pyramid LCP with a vertex along
     *   −t1): γ = (1, −0.5, 0), u = (0, 1.5, 0). Its CCP residual:
     *   γ − u = (1, −2, 0) → Π = (1.6, −0.8, 0), term (−0.6, 0.3, 0):
     *   √(0.45/5) = 0.3; its Coulomb residual is 0. */
    one_contact c;
    one_contact_init(&c, -1.0, 2.0, 0.0, 0.5);
    const double gamma_ccp[3] = {1.6, -0.8, 0.0}, u_ccp[3] = {0.6, 1.2, 0.0};
    static const char* const iterative[] = {"apgd", "pgs", "jacobi"};
    for (int k = 0; k < 3; k++) {
        dvi_solver_settings s = settings(1e-10, 100000);
        double gamma[3] = {0}, u[3];
        dvi_solve_result res;
        dvi_status st = run(&c.p, iterative[k], &s, gamma, &res);
        CHECK(st == DVI_OK && res.status == DVI_SOLVE_CONVERGED, "%s: not converged", iterative[k]);
        velocity_and_objective(&c.p, gamma, u);
        check_vec3(iterative[k], gamma, gamma_ccp, 1e-8);
        check_vec3("u", u, u_ccp, 1e-8);
        CHECK(fabs(res.metrics.residual_coulomb - 0.24) <= 1e-7, "%s: residual_coulomb %.10g, expected 0.24",
              iterative[k], res.metrics.residual_coulomb);
    }
    /* Lemke, default: the pyramid CCP */
    dvi_solver_settings s = settings(1e-12, 1000);
    s.lemke.friction_directions = 4;
    double gamma[3] = {0}, u[3];
    dvi_solve_result res;
    CHECK(!s.lemke.coulomb, "settings.lemke.coulomb defaults to true");
    dvi_status st = run(&c.p, "lemke", &s, gamma, &res);
    CHECK(st == DVI_OK && res.status == DVI_SOLVE_CONVERGED, "lemke (default): status %s (%s)",
          dvi_solve_status_string(res.status), res.message);
    velocity_and_objective(&c.p, gamma, u);
    check_vec3("lemke (default) gamma", gamma, gamma_ccp, 1e-12);
    check_vec3("lemke (default) u", u, u_ccp, 1e-12);
    CHECK(res.metrics.residual <= 1e-12, "lemke (default): CCP residual %.3g, expected 0", res.metrics.residual);
    CHECK(fabs(res.metrics.residual_coulomb - 0.24) <= 1e-12, "lemke (default): residual_coulomb %.15g, expected 0.24",
          res.metrics.residual_coulomb);

    /* Lemke, default, k = 64, pushed at the middle of a pyramid edge:
     * r = (−1, 2cos α, 2sin α), α = π/64, so −r_t = 2e with e at angle π + α,
     * the mid-angle between the vertices d_32 (angle π) and d_33. The cone
     * answer is Π_K(−r) = (1.6, −0.8e). The pyramid face through that edge is
     * {t·e = μ c γ_n}, c = cos(π/64), and −r_t ∥ e, so the projection stays in
     * the (n, e) plane and lands on the ray s = μ c n (at the mid-edge point,
     * inside the face): γ_n = (1 + 2μc)/(1 + μ²c²) = 1.5998067,
     * γ_t = μ c γ_n e (magnitude 0.7989398), i.e. 1.9e-4 and 1.06e-3 off the
     * cone answer (≤ 1.1e-3 per component). CCP residual: with N = I,
     * γ − u = −r, so the residual is ‖γ − Π_K(−r)‖ / ‖r‖ = ‖γ − γ_cone‖ / √5
     * = 4.8193e-4. */
    {
        const double a = PI / 64.0, mu = 0.5, cs = cos(PI / 64.0);
        one_contact e;
        one_contact_init(&e, -1.0, 2.0 * cos(a), 2.0 * sin(a), mu);
        const double gn = (1.0 + 2.0 * mu * cs) / (1.0 + mu * mu * cs * cs);
        const double gamma_pyr[3] = {gn, -mu * cs * gn * cos(a), -mu * cs * gn * sin(a)};
        const double gamma_cone[3] = {1.6, -0.8 * cos(a), -0.8 * sin(a)};
        s.lemke.friction_directions = 64;
        s.lemke.orient = false; /* the pyramid fixed to the contact's tangents */
        memset(gamma, 0, sizeof gamma);
        st = run(&e.p, "lemke", &s, gamma, &res);
        CHECK(st == DVI_OK && res.status == DVI_SOLVE_CONVERGED, "lemke (fixed, k=64 mid-edge): status %s (%s)",
              dvi_solve_status_string(res.status), res.message);
        check_vec3("lemke (fixed, k=64 mid-edge) gamma", gamma, gamma_pyr, 1e-12);
        check_vec3("lemke (fixed, k=64 mid-edge) gamma vs cone", gamma, gamma_cone, 1.1e-3);
        CHECK(hypot(gamma[1], gamma[2]) <= mu * gamma[0], "lemke (fixed, k=64): gamma outside the cone");
        double dn = gamma_pyr[0] - gamma_cone[0], d1 = gamma_pyr[1] - gamma_cone[1], d2 = gamma_pyr[2] - gamma_cone[2];
        double res_want = sqrt(dn * dn + d1 * d1 + d2 * d2) / sqrt(5.0);
        CHECK(fabs(res.metrics.residual - res_want) <= 1e-12,
              "lemke (fixed, k=64 mid-edge): CCP residual %.15g, expected %.15g", res.metrics.residual, res_want);
        /* lemke.orient turns the pyramid so that an edge lies along −r_t,
         * where it touches the cone: the cone's answer, CCP residual 0 */
        s.lemke.orient = true;
        s.lemke.orient_grid = 0.0; /* exact (the default rounds the turn to 0.5°: 0.1875° off here) */
        memset(gamma, 0, sizeof gamma);
        st = run(&e.p, "lemke", &s, gamma, &res);
        s.lemke.orient_grid = dvi_default_solver_settings().lemke.orient_grid;
        CHECK(st == DVI_OK && res.status == DVI_SOLVE_CONVERGED, "lemke (orient, k=64 mid-edge): status %s",
              dvi_solve_status_string(res.status));
        check_vec3("lemke (orient, k=64 mid-edge) gamma", gamma, gamma_cone, 1e-12);
        CHECK(res.metrics.residual <= 1e-12, "lemke (orient, k=64 mid-edge): CCP residual %.3g, expected 0",
              res.metrics.residual);
    }

    /* Lemke, coulomb = true: the Anitescu–Potra LCP */
    const double gamma_coulomb[3] = {1.0, -0.5, 0.0}, u_coulomb[3] = {0.0, 1.5, 0.0};
    s.lemke.friction_directions = 4;
    s.lemke.coulomb = true;
    memset(gamma, 0, sizeof gamma);
    st = run(&c.p, "lemke", &s, gamma, &res);
    CHECK(st == DVI_OK && res.status == DVI_SOLVE_CONVERGED, "lemke: status %s (%s)",
          dvi_solve_status_string(res.status), res.message);
    velocity_and_objective(&c.p, gamma, u);
    check_vec3("lemke gamma", gamma, gamma_coulomb, 1e-12);
    check_vec3("lemke u", u, u_coulomb, 1e-12);
    CHECK(res.metrics.residual_coulomb <= 1e-12, "lemke: Coulomb residual %.3g, expected 0",
          res.metrics.residual_coulomb);
    CHECK(fabs(res.metrics.residual - 0.3) <= 1e-12, "lemke: CCP residual %.15g, expected 0.3", res.metrics.residual);

    /* the same push along +t2 (also an edge for k = 4): γ = (1, 0, −0.5) */
    one_contact_init(&c, -1.0, 0.0, 2.0, 0.5);
    memset(gamma, 0, sizeof gamma);
    st = run(&c.p, "lemke", &s, gamma, &res);
    CHECK(st == DVI_OK, "lemke (t2): %d", (int)st);
    const double gamma_t2[3] = {1.0, 0.0, -0.5};
    check_vec3("lemke gamma (t2)", gamma, gamma_t2, 1e-12);
}

/* μ = 0 on a FRICTION block: frictionless. r = (−1, 2, 0) → γ = (1, 0, 0),
 * u = (0, 2, 0), for every solver (no division by μ anywhere). */
static void test_single_contact_mu_zero(void** state)
{
    (void)state;
    one_contact c;
    one_contact_init(&c, -1.0, 2.0, 0.0, 0.0);
    const double gamma_ok[3] = {1.0, 0.0, 0.0}, u_ok[3] = {0.0, 2.0, 0.0};
    static const char* const names[] = {"apgd", "pgs", "jacobi", "lemke"};
    for (int k = 0; k < 4; k++) {
        dvi_solver_settings s = settings(1e-10, 100000);
        double gamma[3] = {0}, u[3];
        dvi_solve_result res;
        dvi_status st = run(&c.p, names[k], &s, gamma, &res);
        CHECK(st == DVI_OK && res.status == DVI_SOLVE_CONVERGED, "%s: mu = 0: %s (%s)", names[k],
              dvi_solve_status_string(res.status), res.message);
        velocity_and_objective(&c.p, gamma, u);
        check_vec3(names[k], gamma, gamma_ok, 1e-8);
        check_vec3("u", u, u_ok, 1e-8);
    }
}

/* Rows that touch only a fixed body (zero M⁻¹ block) have a zero diagonal
 * in N. Problem: body 0 free (M⁻¹ = I), body 1 fixed.
 *   block 0 FRICTION on body 0 (n = z, t1 = x, t2 = y), μ = 0.5, r = (−1, 0.1, 0)
 *       → stick: γ = (1, −0.1, 0), u = 0;
 *   block 1 FRICTIONLESS on body 1 only (z), r = +0.5 → γ = 0, u = 0.5;
 *   block 2 BILATERAL on body 1 only (x), r = 0 → u = 0 whatever γ; γ finite.
 * No solver may divide by the zero diagonal. */
static void test_fixed_body_rows(void** state)
{
    (void)state;
    static const int32_t cp[6] = {0, 1, 2, 3, 4, 5};
    static const int32_t ri[5] = {2, 0, 1, 8, 6};
    static const double va[5] = {1, 1, 1, 1, 1};
    dvi_csc D = {12, 5, cp, ri, va};
    double minv[72] = {0};
    for (int i = 0; i < 6; i++) minv[7 * i] = 1.0;
    dvi_ccp_block blocks[3] = {{DVI_BLOCK_FRICTION, 0.5, 0, 0}, {DVI_BLOCK_FRICTIONLESS, 0, 0, 0},
                               {DVI_BLOCK_BILATERAL, 0, 0, 0}};
    double r[5] = {-1.0, 0.1, 0.0, 0.5, 0.0};
    dvi_ccp_problem p = dvi_ccp_problem_empty();
    p.rows = 5;
    p.block_count = 3;
    p.blocks = blocks;
    p.body_count = 2;
    p.D = &D;
    p.inv_mass = minv;
    p.r = r;
    const double gamma_ok[4] = {1.0, -0.1, 0.0, 0.0}, u_ok[5] = {0, 0, 0, 0.5, 0};
    static const char* const names[] = {"apgd", "pgs", "jacobi", "lemke"};
    for (int k = 0; k < 4; k++) {
        dvi_solver_settings s = settings(1e-10, 100000);
        double gamma[5] = {0}, u[5];
        dvi_solve_result res;
        dvi_status st = run(&p, names[k], &s, gamma, &res);
        CHECK(st == DVI_OK && res.status == DVI_SOLVE_CONVERGED, "%s: fixed-body rows: %s (%s)", names[k],
              dvi_solve_status_string(res.status), res.message);
        for (int i = 0; i < 5; i++) CHECK(isfinite(gamma[i]), "%s: gamma[%d] = %g", names[k], i, gamma[i]);
        velocity_and_objective(&p, gamma, u);
        for (int i = 0; i < 4; i++)
            CHECK(fabs(gamma[i] - gamma_ok[i]) <= 1e-8, "%s: gamma[%d] = %.15g, expected %g", names[k], i, gamma[i],
                  gamma_ok[i]);
        for (int i = 0; i < 5; i++)
            CHECK(fabs(u[i] - u_ok[i]) <= 1e-8, "%s: u[%d] = %.15g, expected %g", names[k], i, u[i], u_ok[i]);
    }
}

/* Problems with no solution get their own status from every solver, never
 * "converged": (a) one frictionless row with N = 0 and r = −1 (u = −1
 * whatever γ: APGD once reported "converged" there, its residual e/‖γ‖
 * shrinking as γ grew); (b) a contact between two bodies that cannot move
 * (zero inverse masses) approaching at 0.2 m/s; (c) two frictionless rows
 * that demand γ1 − γ2 ≥ 1 and γ2 − γ1 ≥ 1 (N = [[1, −1], [−1, 1]],
 * r = (−1, −1)): γ runs away along (1, 1), which moves nothing. The same
 * structures with a solution stay "converged": (b) separating at 0.2 m/s
 * gives γ = 0. */
static void test_infeasible_problems(void** state)
{
    (void)state;
    static const char* const names[] = {"apgd", "pgs", "jacobi", "lemke"};
    /* (a) */
    static const int32_t cp1[2] = {0, 0};
    dvi_csc W1 = {1, 1, cp1, NULL, NULL};
    dvi_ccp_block b1[1] = {{DVI_BLOCK_FRICTIONLESS, 0, 0, 0}};
    double r1[1] = {-1.0};
    dvi_ccp_problem pa = dvi_ccp_problem_empty();
    pa.rows = 1;
    pa.block_count = 1;
    pa.blocks = b1;
    pa.W = &W1;
    pa.r = r1;
    /* (b): bodies with zero inverse mass, one friction contact between them */
    static const int32_t cpb[4] = {0, 2, 4, 6};
    static const int32_t rib[6] = {2, 8, 0, 6, 1, 7};
    static const double vab[6] = {-1, 1, -1, 1, -1, 1};
    dvi_csc Db = {12, 3, cpb, rib, vab};
    double minv0[72] = {0};
    dvi_ccp_block bb[1] = {{DVI_BLOCK_FRICTION, 0.5, 0, 0}};
    double rb[3] = {-0.2, 0.0, 0.0};
    dvi_ccp_problem pb = dvi_ccp_problem_empty();
    pb.rows = 3;
    pb.block_count = 1;
    pb.blocks = bb;
    pb.body_count = 2;
    pb.D = &Db;
    pb.inv_mass = minv0;
    pb.r = rb;
    /* (c) */
    static const int32_t cpc[3] = {0, 2, 4};
    static const int32_t ric[4] = {0, 1, 0, 1};
    static const double vac[4] = {1, -1, -1, 1};
    dvi_csc Wc = {2, 2, cpc, ric, vac};
    dvi_ccp_block bc[2] = {{DVI_BLOCK_FRICTIONLESS, 0, 0, 0}, {DVI_BLOCK_FRICTIONLESS, 0, 0, 0}};
    double rc[2] = {-1.0, -1.0};
    dvi_ccp_problem pc = dvi_ccp_problem_empty();
    pc.rows = 2;
    pc.block_count = 2;
    pc.blocks = bc;
    pc.W = &Wc;
    pc.r = rc;
    const dvi_ccp_problem* probs[3] = {&pa, &pb, &pc};
    for (int q = 0; q < 3; q++)
        for (int k = 0; k < 4; k++) {
            dvi_solver_settings s = settings(1e-8, 2000);
            double gamma[3] = {0, 0, 0};
            dvi_solve_result res;
            dvi_status st = run(probs[q], names[k], &s, gamma, &res);
            print_message("  problem %c, %-6s: %s after %d, %s (gamma %g %g, res %g vel %g)\n", 'a' + q, names[k],
                          dvi_solve_status_string(res.status), (int)res.iterations, res.message, gamma[0], gamma[1],
                          res.metrics.residual, res.metrics.residual_velocity);
            CHECK(st == DVI_NOT_CONVERGED && res.status == DVI_SOLVE_INFEASIBLE,
                  "problem %c, %s: status %s (%s), expected infeasible", 'a' + q, names[k],
                  dvi_solve_status_string(res.status), res.message);
        }
    rb[0] = 0.2; /* separating: γ = 0 solves it */
    for (int k = 0; k < 4; k++) {
        dvi_solver_settings s = settings(1e-8, 2000);
        double gamma[3] = {0, 0, 0};
        dvi_solve_result res;
        run(&pb, names[k], &s, gamma, &res);
        CHECK(res.status == DVI_SOLVE_CONVERGED && gamma[0] == 0.0, "separating fixed bodies, %s: %s, gamma %g",
              names[k], dvi_solve_status_string(res.status), gamma[0]);
    }
}

/* One 6-row FRICTION_ROLLING block on a point body, D = I6 (rows n, t1, t2,
 * spin s, roll r1, r2 → body rows z, x, y, ωz, ωx, ωy), N = I6, μ = 0.5,
 * μ_spin = 0.01, μ_roll = 0.02.
 * Stick: r = (−1, 0.1, 0, 0.001, 0.002, 0) → γ = −r (0.1 ≤ 0.5, 0.001 ≤ 0.01,
 *   0.002 ≤ 0.02, and inside the k = 4 pyramids: 0.002 < 0.02 cos(π/4)), u = 0.
 * Slide and spin: r = (−1, 2, 0, 0.05, 0, 0). CCP: γ = Π_K(−r); with the
 *   sliding and spin parts both clipped, n' minimises (n' − 1)² +
 *   (2 − μn')² + (0.05 − μ_s n')²: n' = (1 + μ·2 + μ_s·0.05)/(1 + μ² + μ_s²)
 *   = 2.0005/1.2501; γ_t1 = −μn', γ_s = −μ_s n' (both below their a_i = 2,
 *   0.05: the breakpoints 4 and 5 exceed n', so both parts are active).
 *   Coulomb (Lemke, t1 is a pyramid edge, spin uses ±1): γ = (1, −0.5, 0,
 *   −0.01, 0, 0), u = (0, 1.5, 0, 0.04, 0, 0). */
static void rolling_problem(dvi_ccp_problem* p, dvi_csc* D, int32_t* cp, int32_t* ri, double* va, double* minv,
                            dvi_ccp_block* blk, double* r)
{
    static const int32_t rows[6] = {2, 0, 1, 5, 3, 4};
    for (int j = 0; j < 6; j++) {
        cp[j] = j;
        ri[j] = rows[j];
        va[j] = 1.0;
    }
    cp[6] = 6;
    memset(minv, 0, 36 * sizeof(double));
    for (int i = 0; i < 6; i++) minv[7 * i] = 1.0;
    *D = (dvi_csc){6, 6, cp, ri, va};
    *blk = (dvi_ccp_block){DVI_BLOCK_FRICTION_ROLLING, 0.5, 0.01, 0.02};
    *p = dvi_ccp_problem_empty();
    p->rows = 6;
    p->block_count = 1;
    p->blocks = blk;
    p->body_count = 1;
    p->D = D;
    p->inv_mass = minv;
    p->r = r;
}

static void test_rolling_friction(void** state)
{
    (void)state;
    int32_t cp[7], ri[6];
    double va[6], minv[36], r[6];
    dvi_csc D;
    dvi_ccp_block blk;
    dvi_ccp_problem p;
    rolling_problem(&p, &D, cp, ri, va, minv, &blk, r);
    static const char* const names[] = {"apgd", "pgs", "jacobi", "lemke"};

    /* stick */
    const double r_stick[6] = {-1, 0.1, 0, 0.001, 0.002, 0};
    memcpy(r, r_stick, sizeof r_stick);
    for (int k = 0; k < 4; k++) {
        dvi_solver_settings s = settings(1e-10, 100000);
        double gamma[6] = {0}, u[6];
        dvi_solve_result res;
        dvi_status st = run(&p, names[k], &s, gamma, &res);
        CHECK(st == DVI_OK, "%s: rolling stick: %s (%s)", names[k], dvi_solve_status_string(res.status), res.message);
        velocity_and_objective(&p, gamma, u);
        double tol = k == 3 ? 1e-12 : 1e-8;
        for (int i = 0; i < 6; i++) {
            CHECK(fabs(gamma[i] + r_stick[i]) <= tol, "%s: rolling stick gamma[%d] = %.15g, expected %g", names[k], i,
                  gamma[i], -r_stick[i]);
            CHECK(fabs(u[i]) <= tol, "%s: rolling stick u[%d] = %.3g", names[k], i, u[i]);
        }
    }

    /* slide and spin */
    const double r_slide[6] = {-1, 2, 0, 0.05, 0, 0};
    memcpy(r, r_slide, sizeof r_slide);
    const double np = 2.0005 / 1.2501;
    const double gamma_ccp[6] = {np, -0.5 * np, 0, -0.01 * np, 0, 0};
    const double gamma_coulomb[6] = {1, -0.5, 0, -0.01, 0, 0};
    /* k = 0..2 cone solvers, 3 lemke default (t1 is a pyramid vertex and the
     * spin "pyramid" ±1 is exact: the CCP answer to rounding), 4 lemke with
     * coulomb = true */
    for (int k = 0; k < 5; k++) {
        const char* name = names[k < 4 ? k : 3];
        dvi_solver_settings s = settings(1e-10, 100000);
        s.lemke.coulomb = k == 4;
        double gamma[6] = {0};
        dvi_solve_result res;
        dvi_status st = run(&p, name, &s, gamma, &res);
        CHECK(st == DVI_OK, "%s: rolling slide: %s (%s)", name, dvi_solve_status_string(res.status), res.message);
        const double* want = k == 4 ? gamma_coulomb : gamma_ccp;
        double tol = k >= 3 ? 1e-12 : 1e-8;
        for (int i = 0; i < 6; i++)
            CHECK(fabs(gamma[i] - want[i]) <= tol, "%s%s: rolling slide gamma[%d] = %.15g, expected %.15g", name,
                  k == 4 ? " (coulomb)" : "", i, gamma[i], want[i]);
    }
}

/* ------------------------------------------------------------------------- */
/* 2. Bilateral-only problem against a direct CHOLMOD solve                   */
/* ------------------------------------------------------------------------- */

typedef struct chain {
    int32_t bodies, rows, nnz;
    int32_t* colptr;
    int32_t* rowind;
    double* values;
    double* inv_mass;
    double* r;
    dvi_ccp_block* blocks;
    dvi_csc D;
    dvi_ccp_problem p;
} chain;

static void chain_free(chain* c)
{
    free(c->colptr);
    free(c->rowind);
    free(c->values);
    free(c->inv_mass);
    free(c->r);
    free(c->blocks);
    memset(c, 0, sizeof *c);
}

static void cross3(const double* a, const double* b, double* c)
{
    c[0] = a[1] * b[2] - a[2] * b[1];
    c[1] = a[2] * b[0] - a[0] * b[2];
    c[2] = a[0] * b[1] - a[1] * b[0];
}

/* Three orthonormal rows (Gram–Schmidt of random vectors). */
static void random_frame(uint64_t* s, double* f)
{
    for (int k = 0; k < 3; k++) {
        double v[3];
        for (;;) {
            for (int i = 0; i < 3; i++) v[i] = base_uniform_sym(s);
            for (int q = 0; q < k; q++) {
                double d = v[0] * f[3 * q] + v[1] * f[3 * q + 1] + v[2] * f[3 * q + 2];
                for (int i = 0; i < 3; i++) v[i] -= d * f[3 * q + i];
            }
            if (norm2(v, 3) > 0.3) break;
        }
        double n = norm2(v, 3);
        for (int i = 0; i < 3; i++) f[3 * k + i] = v[i] / n;
    }
}

/* A chain of `bodies` bodies along x (centres 0.5 b), body 0 held to the
 * ground and each body to the previous one by a ball joint (3 rows in
 * random independent directions at the midpoint), plus `extra` single random
 * rows between random pairs. Masses in [0.5, 2], inertia SPD (via
 * dvi_inv_mass_block), r random in [−1, 1]. All rows BILATERAL. */
static void chain_init(chain* c, int32_t bodies, int32_t extra, uint64_t seed)
{
    memset(c, 0, sizeof *c);
    c->bodies = bodies;
    c->rows = 3 * bodies + extra;
    c->colptr = calloc((size_t)c->rows + 1, sizeof(int32_t));
    c->rowind = calloc((size_t)c->rows * 12, sizeof(int32_t));
    c->values = calloc((size_t)c->rows * 12, sizeof(double));
    c->inv_mass = calloc((size_t)bodies * 36, sizeof(double));
    c->r = calloc((size_t)c->rows, sizeof(double));
    c->blocks = calloc((size_t)c->rows, sizeof(dvi_ccp_block));
    assert_non_null(c->colptr);
    assert_non_null(c->rowind);
    assert_non_null(c->values);
    assert_non_null(c->inv_mass);
    assert_non_null(c->r);
    assert_non_null(c->blocks);
    uint64_t s = seed;
    for (int32_t b = 0; b < bodies; b++) {
        double mass = 0.5 + 1.5 * base_uniform01(&s);
        double J[9] = {0};
        for (int i = 0; i < 3; i++) J[4 * i] = 0.05 + 0.15 * base_uniform01(&s);
        for (int i = 0; i < 3; i++)
            for (int j = i + 1; j < 3; j++) J[3 * i + j] = J[3 * j + i] = 0.01 * base_uniform_sym(&s);
        assert_int_equal(dvi_inv_mass_block(mass, J, c->inv_mass + 36 * b), DVI_OK);
    }
    int32_t nnz = 0;
    double frame[9];
    for (int32_t row = 0; row < c->rows; row++) {
        int32_t A, B; /* A < B; A = −1 is the ground */
        double x[3];
        if (row < 3 * bodies) {
            B = row / 3;
            A = B - 1;
            x[0] = 0.5 * B - 0.25;
            x[1] = 0.05 * base_uniform_sym(&s);
            x[2] = 0.05 * base_uniform_sym(&s);
        } else {
            A = (int32_t)(base_uniform01(&s) * bodies);
            do
                B = (int32_t)(base_uniform01(&s) * bodies);
            while (B == A);
            if (A > B) {
                int32_t t = A;
                A = B;
                B = t;
            }
            x[0] = 0.25 * (A + B) + 0.1 * base_uniform_sym(&s);
            x[1] = 0.1 * base_uniform_sym(&s);
            x[2] = 0.1 * base_uniform_sym(&s);
        }
        double d[3];
        if (row < 3 * bodies) {
            /* the 3 rows of a ball joint: an orthonormal frame, random per joint */
            if (row % 3 == 0) random_frame(&s, frame);
            for (int i = 0; i < 3; i++) d[i] = frame[3 * (row % 3) + i];
        } else {
            for (int i = 0; i < 3; i++) d[i] = base_uniform_sym(&s);
            double nd = norm2(d, 3);
            for (int i = 0; i < 3; i++) d[i] /= nd;
        }
        c->colptr[row] = nnz;
        const int32_t who[2] = {A, B};
        for (int k = 0; k < 2; k++) {
            int32_t body = who[k];
            if (body < 0) continue;
            double sign = k == 0 ? -1.0 : 1.0;
            double arm[3] = {x[0] - 0.5 * body, x[1], x[2]}, ang[3];
            cross3(arm, d, ang);
            for (int i = 0; i < 6; i++) {
                double v = i < 3 ? d[i] : ang[i - 3];
                if (v == 0.0) continue;
                c->rowind[nnz] = 6 * body + i;
                c->values[nnz] = sign * v;
                nnz++;
            }
        }
        c->r[row] = base_uniform_sym(&s);
        c->blocks[row].kind = DVI_BLOCK_BILATERAL;
    }
    c->colptr[c->rows] = nnz;
    c->nnz = nnz;
    c->D = (dvi_csc){6 * bodies, c->rows, c->colptr, c->rowind, c->values};
    c->p = dvi_ccp_problem_empty();
    c->p.rows = c->rows;
    c->p.block_count = c->rows;
    c->p.blocks = c->blocks;
    c->p.body_count = bodies;
    c->p.D = &c->D;
    c->p.inv_mass = c->inv_mass;
    c->p.r = c->r;
}

/* γ* = −(N + c I)⁻¹ r with N = Dᵀ M⁻¹ D assembled by CHOLMOD and N + c I
 * factored by it (c: a uniform compliance, 0 for none). */
static void cholmod_reference(const dvi_ccp_problem* p, double compliance, double* gamma)
{
    cholmod_common cc;
    cholmod_start(&cc);
    int32_t m = p->rows, ndof = 6 * p->body_count, nnz = p->D->colptr[m];

    cholmod_sparse* D = cholmod_allocate_sparse((size_t)ndof, (size_t)m, (size_t)nnz, 1, 1, 0, CHOLMOD_REAL, &cc);
    assert_non_null(D);
    memcpy(D->p, p->D->colptr, (size_t)(m + 1) * sizeof(int32_t));
    memcpy(D->i, p->D->rowind, (size_t)nnz * sizeof(int32_t));
    memcpy(D->x, p->D->values, (size_t)nnz * sizeof(double));

    cholmod_sparse* Mi = cholmod_allocate_sparse((size_t)ndof, (size_t)ndof, (size_t)ndof * 6, 1, 1, 0, CHOLMOD_REAL, &cc);
    assert_non_null(Mi);
    int* mp = Mi->p;
    int* mi = Mi->i;
    double* mx = Mi->x;
    int32_t k = 0;
    for (int32_t col = 0; col < ndof; col++) {
        int32_t b = col / 6, j = col % 6;
        mp[col] = k;
        for (int i = 0; i < 6; i++) {
            mi[k] = 6 * b + i;
            mx[k] = p->inv_mass[36 * b + 6 * i + j];
            k++;
        }
    }
    mp[ndof] = k;

    cholmod_sparse* MD = cholmod_ssmult(Mi, D, 0, 1, 1, &cc);
    cholmod_sparse* Dt = cholmod_transpose(D, 1, &cc);
    assert_non_null(MD);
    assert_non_null(Dt);
    cholmod_sparse* N = cholmod_ssmult(Dt, MD, 1, 1, 1, &cc); /* symmetric, upper part stored */
    assert_non_null(N);
    assert_true(N->stype > 0);
    cholmod_factor* L = cholmod_analyze(N, &cc);
    assert_non_null(L);
    double beta[2] = {compliance, 0.0};
    assert_true(cholmod_factorize_p(N, beta, NULL, 0, L, &cc)); /* factors N + beta[0] I */
    CHECK(cc.status == CHOLMOD_OK && L->minor == L->n, "CHOLMOD: N not positive definite (status %d, minor %d of %d)",
          cc.status, (int)L->minor, (int)L->n);
    cholmod_dense* rhs = cholmod_allocate_dense((size_t)m, 1, (size_t)m, CHOLMOD_REAL, &cc);
    assert_non_null(rhs);
    for (int32_t i = 0; i < m; i++) ((double*)rhs->x)[i] = -p->r[i];
    cholmod_dense* x = cholmod_solve(CHOLMOD_A, L, rhs, &cc);
    assert_non_null(x);
    memcpy(gamma, x->x, (size_t)m * sizeof(double));

    cholmod_free_dense(&x, &cc);
    cholmod_free_dense(&rhs, &cc);
    cholmod_free_factor(&L, &cc);
    cholmod_free_sparse(&N, &cc);
    cholmod_free_sparse(&Dt, &cc);
    cholmod_free_sparse(&MD, &cc);
    cholmod_free_sparse(&Mi, &cc);
    cholmod_free_sparse(&D, &cc);
    cholmod_finish(&cc);
}

static void test_bilateral_vs_cholmod(void** state)
{
    (void)state;
    int tested = 0;
    for (uint64_t seed = 1; seed <= 30 && tested < 3; seed++) {
        chain c;
        chain_init(&c, 8, 4, seed);
        int32_t m = c.rows;
        char msg[256];
        CHECK(dvi_ccp_validate(&c.p, msg, sizeof msg) == DVI_OK, "chain rejected: %s", msg);
        /* The error in γ is at most cond(N) × (residual × scale / ‖r‖): with a
         * solver tolerance of 1e-13, cond(N) < 1e3 leaves room for 1e-10.
         * Chains with a worse conditioning (random extra rows can be nearly
         * dependent) are skipped; the seeds are this file's own. */
        double kappa = condition_number(&c.p);
        if (kappa >= 1e3) {
            chain_free(&c);
            continue;
        }
        /* the third chain carries a compliance of 0.05 on every row */
        double comp = tested == 2 ? 0.05 : 0.0;
        double* cvec = calloc((size_t)m, sizeof(double));
        assert_non_null(cvec);
        for (int32_t i = 0; i < m; i++) cvec[i] = comp;
        if (comp > 0.0) c.p.compliance = cvec;
        print_message("  chain seed %llu: %d rows, cond(N) = %.3g, compliance %g\n", (unsigned long long)seed, m, kappa,
                      comp);
        tested++;

        double* ref = calloc((size_t)m, sizeof(double));
        double* u = calloc((size_t)m, sizeof(double));
        double* gamma = calloc((size_t)m, sizeof(double));
        assert_non_null(ref);
        assert_non_null(u);
        assert_non_null(gamma);
        cholmod_reference(&c.p, comp, ref);
        velocity_and_objective(&c.p, ref, u);
        double rn = norm2(c.r, m), gn = norm2(ref, m);
        CHECK(norm2(u, m) <= 1e-13 * rn, "CHOLMOD reference itself inaccurate: |N g + r| = %.3g", norm2(u, m));

        static const char* const names[] = {"apgd", "pgs", "lemke"};
        for (int k = 0; k < 3; k++) {
            dvi_solver_settings s = settings(1e-13, 200000);
            memset(gamma, 0, (size_t)m * sizeof(double));
            dvi_solve_result res;
            run(&c.p, names[k], &s, gamma, &res);
            double err = dist2(gamma, ref, m) / gn;
            print_message("         %s: |gamma - gamma_chol| / |gamma_chol| = %.3e\n", names[k], err);
            CHECK(err <= 1e-10, "%s: relative error %.3e vs CHOLMOD (status %s, %d iterations, residual %.3g)",
                  names[k], err, dvi_solve_status_string(res.status), res.iterations, res.metrics.residual);
        }
        free(ref);
        free(u);
        free(gamma);
        free(cvec);
        chain_free(&c);
    }
    CHECK(tested == 3, "only %d well-conditioned chains found", tested);
}

/* ------------------------------------------------------------------------- */
/* 3. Sphere stack                                                             */
/* ------------------------------------------------------------------------- */

#define STACK_N 10
#define STACK_M 1.0
#define STACK_G 9.81
#define STACK_H 1e-3

static void make_stack(dvi_gen_problem* g)
{
    memset(g, 0, sizeof *g);
    dvi_status st = dvi_gen_sphere_stack(STACK_N, 0.1, STACK_M, 0.5, STACK_G, STACK_H, g);
    assert_int_equal(st, DVI_OK);
    assert_int_equal(g->contacts, STACK_N);
    assert_int_equal(g->p.rows, 3 * STACK_N);
}

static void check_stack_answer(const char* name, const double* gamma, double tol)
{
    /* contact k carries the weight of the N − k spheres above: (N − k) m g h */
    for (int k = 0; k < STACK_N; k++) {
        double want = (STACK_N - k) * STACK_M * STACK_G * STACK_H;
        double rel = fabs(gamma[3 * k] - want) / want;
        CHECK(rel <= tol, "%s: normal impulse at contact %d = %.15g, expected %.15g (relative error %.3e)", name, k,
              gamma[3 * k], want, rel);
        double gt = hypot(gamma[3 * k + 1], gamma[3 * k + 2]);
        CHECK(gt < 1e-9, "%s: tangential impulse at contact %d = %.3e, expected 0", name, k, gt);
    }
}

/* The 10-sphere stack: every contact sticks with zero tangential impulse,
 * so the cone, the pyramid (Lemke default) and the Coulomb LCP (Lemke,
 * coulomb = true) share the exact answer. The iterative solvers (tolerance
 * 1e-10) are held to 1e-6 relative; Lemke, a direct method, to 1e-9. */
static void test_sphere_stack(void** state)
{
    (void)state;
    dvi_gen_problem g;
    make_stack(&g);
    static const char* const names[] = {"apgd", "pgs", "lemke", "lemke"};
    for (int k = 0; k < 4; k++) {
        dvi_solver_settings s = settings(1e-10, 100000);
        s.lemke.coulomb = k == 3;
        double gamma[3 * STACK_N] = {0};
        dvi_solve_result res;
        dvi_status st = run(&g.p, names[k], &s, gamma, &res);
        CHECK(st == DVI_OK && res.status == DVI_SOLVE_CONVERGED, "%s%s: status %s", names[k],
              k == 3 ? " (coulomb)" : "", dvi_solve_status_string(res.status));
        print_message("         bottom impulse %.15g (exact %.15g)\n", gamma[0], STACK_N * STACK_M * STACK_G * STACK_H);
        check_stack_answer(k == 3 ? "lemke (coulomb)" : names[k], gamma, k >= 2 ? 1e-9 : 1e-6);
        if (k >= 2)
            CHECK(res.metrics.residual <= 1e-12, "%s: CCP residual %.3g on the stack (all stick: exact)", names[k],
                  res.metrics.residual);
    }
    dvi_gen_free(&g);
}

/* Box stacks with redundant corner contacts (4 per interface): γ is not
 * unique, but when every contact stays closed (u_n = 0: no box slides, lifts
 * or tips) the 4 normal impulses of interface j add up to (height − j) m g h
 * exactly (vertical momentum of each box, at rest vertically before and
 * after the step). μ = 10 and h = 10 ms make that certain: the largest
 * tangential impulse needed to stop a column is 3 m |v| ≈ 3·500·0.014 = 21,
 * against μ m g h = 490 at the top interface, and the tipping moment of
 * friction at the base (≤ 21 × 0.75 m) is far below the righting moment of
 * the weight (3 m g h × 0.5 m = 74). (With h = 1 ms the friction needed
 * to stop the columns tips them: corners lift and the sums exceed the
 * weight by about 1%, which is physics, not a solver error.) */
static void test_box_stacks(void** state)
{
    (void)state;
    const int32_t columns = 2, height = 3;
    const double mass = 500.0, h = 1e-2;
    dvi_gen_problem g;
    memset(&g, 0, sizeof g);
    assert_int_equal(dvi_gen_box_stacks(columns, height, 10.0, h, 7, &g), DVI_OK);
    assert_int_equal(g.contacts, columns * height * 4);
    static const char* const names[] = {"apgd", "pgs", "lemke"};
    for (int k = 0; k < 3; k++) {
        dvi_solver_settings s = settings(1e-10, 200000);
        double* gamma = calloc((size_t)g.p.rows, sizeof(double));
        assert_non_null(gamma);
        dvi_solve_result res;
        run(&g.p, names[k], &s, gamma, &res);
        CHECK(res.status == DVI_SOLVE_CONVERGED, "%s: box stacks not solved (%s)", names[k],
              dvi_solve_status_string(res.status));
        for (int32_t c = 0; c < columns; c++)
            for (int32_t j = 0; j < height; j++) {
                double sum = 0.0;
                for (int q = 0; q < 4; q++) sum += gamma[3 * (4 * (c * height + j) + q)];
                double want = (height - j) * mass * 9.81 * h;
                double rel = fabs(sum - want) / want;
                CHECK(rel <= 1e-6, "%s: column %d interface %d: normal impulses add to %.12g, expected %.12g (rel %.3e)",
                      names[k], c, j, sum, want, rel);
            }
        free(gamma);
    }
    dvi_gen_free(&g);
}

/* ------------------------------------------------------------------------- */
/* 4. Cross-solver agreement on random problems                                */
/* ------------------------------------------------------------------------- */

#define RANDOM_SEEDS 6

static void make_random(dvi_gen_problem* g, uint64_t seed)
{
    memset(g, 0, sizeof *g);
    assert_int_equal(dvi_gen_random(8, 12, 3, seed, g), DVI_OK);
    assert_int_equal(g->bilateral, 3);
    assert_int_equal(g->contacts, 12);
    assert_int_equal(g->p.rows, 3 + 36);
}

/* A random problem with a non-singular N (cond < 1e3): 8 bodies, 6
 * contacts, 3 bilateral rows; the k-th such seed counting from 1. (With 12
 * contacts on 8 bodies N is singular for every seed tried: some body
 * carries more than 6 rows.) */
static double make_random_regular(dvi_gen_problem* g, int k)
{
    for (uint64_t seed = 1; seed <= 200; seed++) {
        memset(g, 0, sizeof *g);
        assert_int_equal(dvi_gen_random(8, 6, 3, seed, g), DVI_OK);
        double kappa = condition_number(&g->p);
        if (kappa < 1e3 && --k == 0) return kappa;
        dvi_gen_free(g);
    }
    fail_msg("no regular random problem found");
    return 0.0;
}

static void compare_apgd_pgs(dvi_gen_problem* g, const char* label, double kappa)
{
    int32_t m = g->p.rows;
    double ga[64] = {0}, gp[64] = {0}, ua[64], up[64];
    assert_true(m <= 64);
    dvi_solver_settings s = settings(1e-9, 500000);
    dvi_solve_result ra, rp;
    dvi_status sa = run(&g->p, "apgd", &s, ga, &ra);
    dvi_status sp = run(&g->p, "pgs", &s, gp, &rp);
    CHECK(sa == DVI_OK && ra.status == DVI_SOLVE_CONVERGED, "%s: apgd did not converge to 1e-9 (%s, %.3g)", label,
          dvi_solve_status_string(ra.status), ra.metrics.residual);
    CHECK(sp == DVI_OK && rp.status == DVI_SOLVE_CONVERGED, "%s: pgs did not converge to 1e-9 (%s, %.3g)", label,
          dvi_solve_status_string(rp.status), rp.metrics.residual);
    double oa = velocity_and_objective(&g->p, ga, ua);
    double op = velocity_and_objective(&g->p, gp, up);
    /* u = Nγ + r is unique for the convex QP even when γ is not */
    double scale_u = dmax(norm2(up, m), norm2(g->r, m));
    double du = dist2(ua, up, m) / scale_u;
    double dob = fabs(oa - op) / fabs(op);
    double dg = dist2(ga, gp, m) / norm2(gp, m);
    print_message("         %s: cond(N) %.3g  |du|/|u| %.3e  |dobj|/|obj| %.3e  |dgamma|/|gamma| %.3e\n", label,
                  kappa, du, dob, dg);
    CHECK(du <= 1e-5, "%s: apgd and pgs velocities differ by %.3e (relative)", label, du);
    CHECK(dob <= 1e-6, "%s: objectives %.15g (apgd) vs %.15g (pgs): %.3e relative", label, oa, op, dob);
    /* the library's objective is the same number */
    CHECK(fabs(ra.metrics.objective - oa) <= 1e-12 * dmax(1.0, fabs(oa)), "%s: apgd metrics.objective %.15g vs %.15g",
          label, ra.metrics.objective, oa);
    CHECK(fabs(rp.metrics.objective - op) <= 1e-12 * dmax(1.0, fabs(op)), "%s: pgs metrics.objective %.15g vs %.15g",
          label, rp.metrics.objective, op);
    /* γ is unique when N is non-singular; its error is ≲ cond(N) × 1e-9 */
    if (kappa < 1e3)
        CHECK(dg <= 1e-5, "%s: apgd and pgs impulses differ by %.3e relative (cond %.3g)", label, dg, kappa);
}

static void test_random_apgd_vs_pgs(void** state)
{
    (void)state;
    /* singular N (redundant rows): u and the objective must agree */
    for (uint64_t seed = 1; seed <= RANDOM_SEEDS; seed++) {
        dvi_gen_problem g;
        make_random(&g, seed);
        char label[64];
        snprintf(label, sizeof label, "random(8,12,3) seed %llu", (unsigned long long)seed);
        compare_apgd_pgs(&g, label, condition_number(&g.p));
        dvi_gen_free(&g);
    }
    /* regular N: γ must agree too */
    for (int k = 1; k <= 5; k++) {
        dvi_gen_problem g;
        double kappa = make_random_regular(&g, k);
        char label[64];
        snprintf(label, sizeof label, "random(8,6,3) regular #%d", k);
        compare_apgd_pgs(&g, label, kappa);
        dvi_gen_free(&g);
    }
}

/* APGD's passes on friction blocks four at a time (src/ccp/apgd_groups.h)
 * against its scalar passes, on a random problem (sticking, sliding and
 * separating contacts after 20 bilateral rows, so the groups do not start
 * at block 0; compliance on a third of the rows) and on a granular packing
 * given by frames: 60 iterations with nothing stopping them. The four-wide
 * kernels for the baseline instruction set and for AVX2 give the same
 * bits in every output, for 1, 2 and 3 threads; against the scalar passes
 * each row of γ is the same to 1e-12 of the largest (the rows are computed
 * with the same operations, so they are equal unless a sum added in another
 * order turns a decision: a backtrack, a restart; measured: equal), and
 * the residual history differs in its last bits somewhere, which shows the
 * kernels ran. */
static void test_apgd_groups(void** state)
{
    (void)state;
    dvi_gen_problem gen[2];
    memset(gen, 0, sizeof gen);
    assert_int_equal(dvi_gen_random(300, 2000, 20, 17, &gen[0]), DVI_OK);
    assert_int_equal(dvi_gen_granular(3000, 0.4, 1e-3, 11, &gen[1]), DVI_OK);
    assert_true(dvi_gen_use_frames(&gen[1]) > 0);
    double* comp = calloc((size_t)gen[0].p.rows, sizeof(double));
    assert_non_null(comp);
    for (int32_t i = 0; i < gen[0].p.rows; i += 3) comp[i] = 1e-4;
    gen[0].p.compliance = comp;
    for (int k = 0; k < 2; k++) {
        const dvi_ccp_problem* p = &gen[k].p;
        const int32_t m = p->rows;
        enum { RUNS = 6, HIST = 64 };
        static const int MODE[RUNS] = {0, 1, 2, 2, 2, 1};
        static const int THREADS[RUNS] = {1, 1, 1, 2, 3, 2};
        double* gm[RUNS];
        double hist[RUNS][HIST];
        dvi_solve_result res[RUNS];
        for (int r = 0; r < RUNS; r++) {
            dvi_solver_settings s = settings(1e-300, 60);
            s.threads = THREADS[r];
            gm[r] = calloc((size_t)m, sizeof(double));
            assert_non_null(gm[r]);
            ccp_apgd_group_mode = MODE[r];
            assert_true(solve_recording(p, "apgd", &s, gm[r], &res[r], hist[r], HIST) >= 0);
            ccp_apgd_group_mode = -1;
            assert_int_equal(res[r].iterations, 60);
        }
        for (int r = 2; r < RUNS; r++) {
            assert_memory_equal(gm[r], gm[1], (size_t)m * sizeof(double));
            assert_memory_equal(hist[r], hist[1], 60 * sizeof(double));
        }
        double gmax = 0.0, dmax = 0.0;
        int hdiff = 0;
        for (int32_t i = 0; i < m; i++) {
            gmax = fmax(gmax, fabs(gm[0][i]));
            dmax = fmax(dmax, fabs(gm[1][i] - gm[0][i]));
        }
        for (int i = 0; i < 60; i++) hdiff += hist[1][i] != hist[0][i];
        print_message("  %s: %d rows; grouped against scalar passes: max |Δγ| / max |γ| = %.2e, residual history "
                      "differs at %d of 60 iterations (last %.6e / %.6e)\n",
                      k == 0 ? "random" : "granular, frames", m, dmax / gmax, hdiff, hist[1][59], hist[0][59]);
        assert_true(dmax <= 1e-12 * gmax);
        assert_true(hdiff > 0);
        for (int r = 0; r < RUNS; r++) free(gm[r]);
    }
    /* A converged solve hands its last fresh product to the driver, which
     * reports the metrics of the returned γ from it: they must be those
     * that dvi_ccp_evaluate forms from γ itself, to the bit. */
    for (int k = 0; k < 2; k++) {
        const dvi_ccp_problem* p = &gen[k].p;
        double* gm = calloc((size_t)p->rows, sizeof(double));
        assert_non_null(gm);
        dvi_solver_settings s = settings(1e-6, 100000);
        dvi_solve_result res;
        memset(&res, 0, sizeof res);
        const dvi_status st = dvi_ccp_solve(p, "apgd", &s, gm, &res);
        print_message("  converged solve: %d iterations, residual %.3e (%s)\n", res.iterations, res.metrics.residual,
                      dvi_solve_status_string(res.status));
        assert_int_equal(st, DVI_OK);
        assert_int_equal(res.status, DVI_SOLVE_CONVERGED);
        dvi_ccp_metrics m;
        assert_int_equal(dvi_ccp_evaluate(p, gm, &m), DVI_OK);
        assert_memory_equal(&m, &res.metrics, sizeof m);
        free(gm);
    }
    gen[0].p.compliance = NULL;
    free(comp);
    dvi_gen_free(&gen[0]);
    dvi_gen_free(&gen[1]);
}

/* p must be refused by dvi_ccp_validate (one thread) and by dvi_ccp_solve
 * on three threads with the same message, which names `want`; returns that
 * message (valid until the next call). */
static const char* refused_alike(const dvi_ccp_problem* p, double* gm, const char* want)
{
    static char serial[256];
    assert_int_equal(dvi_ccp_validate(p, serial, sizeof serial), DVI_ERR_INVALID_ARG);
    dvi_solver_settings s = settings(1e-6, 10);
    s.threads = 3;
    dvi_solve_result res;
    memset(&res, 0, sizeof res);
    assert_int_equal(dvi_ccp_solve(p, "apgd", &s, gm, &res), DVI_ERR_INVALID_ARG);
    print_message("  %s\n", res.message);
    assert_string_equal(res.message, serial);
    assert_non_null(strstr(serial, want));
    return serial;
}

/* The checks of bodies and contact frames run on the solver's threads and
 * must name the same first bad item as the serial validation: on a packing
 * of 10,000 contacts given by frames (enough for the parallel path), a
 * NaN in a frame near the end and a negative 1/m near the end, then one
 * early as well; each time dvi_ccp_solve on three threads refuses the
 * problem with the message dvi_ccp_validate (one thread) gives. */
static void test_validation_threads(void** state)
{
    (void)state;
    dvi_gen_problem g;
    memset(&g, 0, sizeof g);
    assert_int_equal(dvi_gen_granular(10000, 0.4, 1e-3, 5, &g), DVI_OK);
    assert_true(dvi_gen_use_frames(&g) > 4096);
    assert_true(g.p.body_count > 1024);
    double* gm = calloc((size_t)g.p.rows, sizeof(double));
    assert_non_null(gm);
    const int32_t nc = g.frames.count, nb = g.p.body_count;
    struct {
        double* where;
        double value;
        const char* names;
    } cases[4] = {
        {&g.fr_frame[9 * (size_t)(nc - 3) + 4], NAN, "frames.frame["},
        {&g.fr_frame[9 * (size_t)(nc / 3) + 1], INFINITY, "frames.frame["},
        {&g.inv_mass[36 * (size_t)(nb - 2)], -1.0, "inv_mass[body"},
        {&g.inv_mass[36 * (size_t)(nb / 4) + 7], -2.0, "inv_mass[body"},
    };
    double keep[4];
    for (int k = 0; k < 4; k++) {
        keep[k] = *cases[k].where;
        *cases[k].where = cases[k].value; /* cases 1 and 3 add an earlier bad item to 0 and 2 */
        char want[64];
        const int32_t at = k == 0 ? 9 * (nc - 3) + 4 : k == 1 ? 9 * (nc / 3) + 1 : k == 2 ? nb - 2 : nb / 4;
        snprintf(want, sizeof want, k < 2 ? "[%d]" : "[body %d]", at);
        const char* serial = refused_alike(&g.p, gm, want);
        assert_non_null(strstr(serial, cases[k].names));
        if (k == 1 || k == 3) /* restore the pair */
            for (int j = k - 1; j <= k; j++) *cases[j].where = keep[j];
    }
    assert_int_equal(dvi_ccp_validate(&g.p, NULL, 0), DVI_OK);
    free(gm);
    dvi_gen_free(&g);
}

/* Validation of bodies given in the rigid layout (inv_mass_rigid) takes a
 * test of its own on the ten numbers; it must refuse exactly the bodies the
 * test on the 6×6 block refuses, and name the same one. 3,000 random bodies,
 * each alone in an otherwise valid problem: an angular block Q diag(λ) Qᵀ
 * with eigenvalues spread over ±1e-13 … 1 of the largest (borderline
 * semidefinite both ways), 1/m of either sign or zero, asymmetries of
 * 0.5e-12 … 4e-12 of the largest entry (both sides of the 1e-12 tolerance),
 * and non-finite numbers. Both layouts must give the same verdict and the
 * same body; the checks also report the first bad block's r (a NaN) and the
 * first contact whose block breaks the order, on three threads as on one. */
static void test_validation_rigid(void** state)
{
    (void)state;
    dvi_gen_problem g;
    memset(&g, 0, sizeof g);
    assert_int_equal(dvi_gen_granular(10000, 0.4, 1e-3, 5, &g), DVI_OK);
    assert_true(dvi_gen_use_frames(&g) > 4096);
    const int32_t nb = g.p.body_count, nc = g.frames.count;
    double* R = malloc(10 * (size_t)nb * sizeof(double));
    assert_non_null(R);
    for (int32_t b = 0; b < nb; b++) {
        const double* A = g.inv_mass + 36 * (size_t)b;
        R[10 * b] = A[0];
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) R[10 * b + 1 + 3 * i + j] = A[6 * (3 + i) + 3 + j];
    }
    dvi_ccp_problem full = g.p, rigid = g.p;
    rigid.inv_mass = NULL;
    rigid.inv_mass_rigid = R;
    char m1[256], m2[256];
    assert_int_equal(dvi_ccp_validate(&rigid, m1, sizeof m1), DVI_OK);
    uint64_t seed = 99;
    int refused = 0, accepted = 0;
    const int32_t at = nb / 2;
    double keepA[36], keepR[10];
    memcpy(keepA, g.inv_mass + 36 * (size_t)at, sizeof keepA);
    memcpy(keepR, R + 10 * (size_t)at, sizeof keepR);
    for (int t = 0; t < 3000; t++) {
        double lam[3], Q[9], B[9], r0;
        for (int k = 0; k < 3; k++) { /* eigenvalues: 1, or ±10^(−13 … 0), or 0 */
            const double u = base_uniform01(&seed), e = -13.0 * base_uniform01(&seed);
            lam[k] = k == 0 ? 1.0 : u < 0.1 ? 0.0 : (u < 0.4 ? -1.0 : 1.0) * pow(10.0, e);
        }
        random_frame(&seed, Q);
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) {
                B[3 * i + j] = 0.0;
                for (int k = 0; k < 3; k++) B[3 * i + j] += Q[3 * i + k] * lam[k] * Q[3 * j + k];
            }
        for (int i = 0; i < 3; i++) /* symmetric, unless perturbed below */
            for (int j = 0; j < i; j++) B[3 * i + j] = B[3 * j + i];
        const double u = base_uniform01(&seed);
        r0 = u < 0.1 ? 0.0 : u < 0.2 ? -1e-14 : 0.2 + base_uniform01(&seed);
        if (base_uniform01(&seed) < 0.2) B[3 * 2 + 0] += (0.5 + 3.5 * base_uniform01(&seed)) * 1e-12;
        if (base_uniform01(&seed) < 0.02) B[4] = base_uniform01(&seed) < 0.5 ? NAN : INFINITY;
        if (base_uniform01(&seed) < 0.02) r0 = NAN;
        double* A = g.inv_mass + 36 * (size_t)at;
        memset(A, 0, 36 * sizeof(double));
        A[0] = A[7] = A[14] = r0;
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) A[6 * (3 + i) + 3 + j] = B[3 * i + j];
        R[10 * at] = r0;
        memcpy(R + 10 * (size_t)at + 1, B, sizeof B);
        const dvi_status s1 = dvi_ccp_validate(&full, m1, sizeof m1);
        const dvi_status s2 = dvi_ccp_validate(&rigid, m2, sizeof m2);
        assert_int_equal(s1, s2);
        if (s1 != DVI_OK) {
            char want[32];
            snprintf(want, sizeof want, "[body %d]", at);
            assert_non_null(strstr(m1, want));
            assert_non_null(strstr(m2, want));
            refused++;
        } else {
            accepted++;
        }
    }
    print_message("  rigid layout against the 6x6 block: %d bodies refused, %d accepted, the same by both\n", refused,
                  accepted);
    assert_true(refused > 500 && accepted > 500);
    memcpy(g.inv_mass + 36 * (size_t)at, keepA, sizeof keepA);
    memcpy(R + 10 * (size_t)at, keepR, sizeof keepR);

    /* the first bad block's r, and the first contact out of block order,
     * on three threads as on one (cases 1, 3: an earlier one as well) */
    double* gm = calloc((size_t)g.p.rows, sizeof(double));
    assert_non_null(gm);
    double* r = g.r;
    int32_t* fb = g.fr_block;
    const int32_t mrow = g.p.rows;
    for (int k = 0; k < 4; k++) {
        int32_t keep_b[2] = {fb[nc - 5], fb[nc / 3]};
        double keep_r[2] = {r[mrow - 7], r[mrow / 5]};
        if (k == 0 || k == 1) r[mrow - 7] = NAN;
        if (k == 1) r[mrow / 5] = NAN;
        if (k == 2 || k == 3) fb[nc - 5] = fb[nc - 6];
        if (k == 3) fb[nc / 3] = g.p.block_count + 3;
        char want[64];
        if (k < 2)
            snprintf(want, sizeof want, "r[%d]", k == 0 ? mrow - 7 : mrow / 5);
        else
            snprintf(want, sizeof want, "frames.block[%d]", k == 2 ? nc - 5 : nc / 3);
        (void)refused_alike(&rigid, gm, want);
        fb[nc - 5] = keep_b[0], fb[nc / 3] = keep_b[1];
        r[mrow - 7] = keep_r[0], r[mrow / 5] = keep_r[1];
    }
    assert_int_equal(dvi_ccp_validate(&rigid, NULL, 0), DVI_OK);
    free(gm);
    free(R);
    dvi_gen_free(&g);
}

/* APGD returns its best iterate (the smallest residual of its history),
 * kept in one of its two buffers or copied out before its buffer takes a
 * later iterate. On a granular packing whose residual history is not
 * monotone, a solve of K iterations must return, to the bit, the γ that a
 * solve stopped right after the best iteration k* returns (its last
 * iterate, the same deterministic sequence), for a K at least three
 * iterations past k* (so that k*'s buffer was taken by a later iterate),
 * on one thread and on two. */
static void test_apgd_best_iterate(void** state)
{
    (void)state;
    dvi_gen_problem g;
    memset(&g, 0, sizeof g);
    assert_int_equal(dvi_gen_granular(2000, 0.4, 1e-3, 7, &g), DVI_OK);
    const int32_t m = g.p.rows;
    enum { KMAX = 400 };
    double hist[KMAX];
    double* g1 = calloc((size_t)m, sizeof(double));
    double* g2 = calloc((size_t)m, sizeof(double));
    assert_true(g1 && g2);
    dvi_solver_settings s = settings(1e-300, KMAX);
    dvi_solve_result res;
    assert_true(solve_recording(&g.p, "apgd", &s, g1, &res, hist, KMAX) >= 0);
    assert_int_equal(res.iterations, KMAX);
    /* the shortest prefix whose best lies at least three iterations back,
     * while the residual is well above rounding */
    int32_t K = 0, kbest = -1;
    for (int32_t k = 4; k <= KMAX && K == 0; k++) {
        int32_t a = 0;
        for (int32_t i = 1; i < k; i++)
            if (hist[i] < hist[a]) a = i;
        if (a <= k - 3 && hist[a] < hist[k - 1] && hist[a] > 1e-10) K = k, kbest = a;
    }
    print_message("  best of %d iterations at %d (residual %.3e; the last %.3e)\n", K, kbest + 1, hist[kbest],
                  hist[K - 1]);
    assert_true(K > 0);
    for (int threads = 1; threads <= 2; threads++) {
        s.threads = threads;
        s.max_iterations = K;
        memset(g1, 0, (size_t)m * sizeof(double));
        memset(&res, 0, sizeof res);
        assert_true(dvi_ccp_solve(&g.p, "apgd", &s, g1, &res) >= 0);
        s.max_iterations = kbest + 1;
        memset(g2, 0, (size_t)m * sizeof(double));
        memset(&res, 0, sizeof res);
        assert_true(dvi_ccp_solve(&g.p, "apgd", &s, g2, &res) >= 0);
        assert_memory_equal(g1, g2, (size_t)m * sizeof(double));
    }
    free(g1);
    free(g2);
    dvi_gen_free(&g);
}

/* APGD's passes on blocks with spinning and rolling friction four at a
 * time (src/ccp/apgd_rolling.h) keep the scalar passes' arithmetic and sums
 * and project four blocks at once, lane by lane, with the scalar
 * projection's operations: a falling and settling pile of 64 spheres with
 * rolling and spinning friction (every contact such a block), 150 steps,
 * must end in the same state, to the bit, with the scalar passes, with the
 * baseline kernels and with AVX2's, on one thread and on two. */
static void test_apgd_rolling_groups(void** state)
{
    (void)state;
    (void)pile_run; /* the header's, unused here */
    enum { RUNS = 4 };
    static const int MODE[RUNS] = {0, 1, -1, -1};
    static const int THREADS[RUNS] = {1, 1, 1, 2};
    void* blob[RUNS];
    size_t size[RUNS];
    int64_t contacts = 0;
    for (int r = 0; r < RUNS; r++) {
        pile_config c = pile_default_config(64);
        c.bed.rolling_friction = 1e-4;
        c.bed.max_iterations = 200;
        pile p;
        char err[256];
        assert_int_equal(pile_create(&p, &c, err, sizeof err), 0);
        dvi_solver_settings s = dvi_default_solver_settings();
        s.tolerance = 1e-6;
        s.max_iterations = 200;
        s.threads = THREADS[r];
        assert_int_equal(dvi_world_set_solver(p.bed.world, "apgd", &s), DVI_OK);
        ccp_apgd_group_mode = MODE[r];
        for (int k = 0; k < 150; k++) {
            assert_true(dvi_world_step(p.bed.world, c.dt) >= 0);
            if (r == 0) contacts += dvi_world_get_stats(p.bed.world).contacts;
        }
        ccp_apgd_group_mode = -1;
        assert_int_equal(dvi_world_save_state(p.bed.world, &blob[r], &size[r]), DVI_OK);
        pile_destroy(&p);
    }
    print_message("  64-sphere pile with rolling and spinning friction, 150 steps (%lld contact-steps): the same state "
                  "with the scalar passes, the baseline and the AVX2 kernels, on 1 and 2 threads\n",
                  (long long)contacts);
    assert_true(contacts > 150 * 64);
    for (int r = 1; r < RUNS; r++) {
        assert_int_equal(size[r], size[0]);
        assert_memory_equal(blob[r], blob[0], size[0]);
    }
    for (int r = 0; r < RUNS; r++) free(blob[r]);
}

/* What the registry says of each solver, through the public queries that
 * the world step and the scene reader ask instead of testing names: an
 * instance solves the law dvi_solver_law_with predicts from its settings;
 * a solver has a law setting exactly when it also solves the other law
 * (lemke: lemke.coulomb); pgs and nsgs, and no other, sweep in order. */
static void test_registry_capabilities(void** state)
{
    (void)state;
    assert_int_equal(dvi_solver_index("no such solver"), -1);
    assert_int_equal(dvi_solver_index(NULL), -1);
    assert_false(dvi_solver_sweeps_in_order(-1));
    assert_null(dvi_solver_law_setting(dvi_solver_count()));
    assert_int_equal(dvi_solver_law_with(-1, NULL), DVI_LAW_CCP);
    int32_t in_order = 0, with_setting = 0;
    for (int32_t i = 0; i < dvi_solver_count(); i++) {
        const char* name = dvi_solver_name(i);
        assert_int_equal(dvi_solver_index(name), i);
        dvi_solver_settings s = dvi_default_solver_settings();
        assert_int_equal(dvi_solver_law_with(i, NULL), dvi_solver_law(i));
        assert_int_equal(dvi_solver_law_with(i, &s), dvi_solver_law(i));
        s.lemke.coulomb = true;
        dvi_solver* sv = NULL;
        assert_int_equal(dvi_solver_create(name, &s, &sv), DVI_OK);
        assert_int_equal(dvi_solver_get_law(sv), dvi_solver_law_with(i, &s));
        dvi_solver_destroy(sv);
        const char* setting = dvi_solver_law_setting(i);
        const dvi_friction_law other = dvi_solver_law(i) == DVI_LAW_CCP ? DVI_LAW_COULOMB : DVI_LAW_CCP;
        assert_int_equal(dvi_solver_supports(i, other, DVI_BLOCK_FRICTION), setting != NULL);
        if (setting) {
            with_setting++;
            assert_string_equal(setting, "lemke.coulomb");
            assert_string_equal(name, "lemke");
            assert_int_equal(dvi_solver_law_with(i, &s), other);
        } else {
            assert_int_equal(dvi_solver_law_with(i, &s), dvi_solver_law(i));
        }
        in_order += dvi_solver_sweeps_in_order(i);
    }
    assert_int_equal(with_setting, 1);
    assert_true(dvi_solver_sweeps_in_order(dvi_solver_index("pgs")));
    assert_true(dvi_solver_sweeps_in_order(dvi_solver_index("nsgs")));
    assert_int_equal(in_order, 2);
}

/* Memory lent to a solver (dvi_solver_lend) holds its vectors and per-solve
 * arrays instead of its own: on a granular packing, APGD, PGS and Jacobi on
 * one and two threads, warm-started, must give γ and M⁻¹Dγ to the bit as
 * without the loan, whether the loan is one large block, many blocks of
 * which some are too small for anything, or blocks at odd addresses, all
 * filled with NaN beforehand. The loan must be used (its bytes changed),
 * taking it back ends the solve's operator (dvi_solver_velocity refuses),
 * and a solve after it, with the blocks scribbled over, keeps the bits. */
static void test_solver_lend(void** state)
{
    (void)state;
    dvi_gen_problem g;
    memset(&g, 0, sizeof g);
    assert_int_equal(dvi_gen_granular(1500, 0.4, 1e-3, 9, &g), DVI_OK);
    const int32_t m = g.p.rows, ndof = 6 * g.p.body_count;
    const size_t vec = (size_t)m * sizeof(double);
    double *ref = malloc(vec), *got = malloc(vec), *guess = malloc(vec);
    double *dv_ref = malloc((size_t)ndof * sizeof(double)), *dv = malloc((size_t)ndof * sizeof(double));
    const size_t big = 40 * vec + (1u << 16);
    unsigned char* pool = malloc(big + 64);
    assert_true(ref && got && guess && dv_ref && dv && pool);
    for (int32_t i = 0; i < m; i++) guess[i] = 0.0;
    static const char* names[] = {"apgd", "pgs", "jacobi"};
    for (size_t n = 0; n < sizeof names / sizeof names[0]; n++)
        for (int threads = 1; threads <= 2; threads++) {
            dvi_solver_settings s = settings(1e-300, 60);
            s.threads = threads;
            s.warm_start = true;
            dvi_solver* sv = NULL;
            assert_int_equal(dvi_solver_create(names[n], &s, &sv), DVI_OK);
            dvi_solve_result res;
            memset(&res, 0, sizeof res);
            memcpy(ref, guess, vec);
            assert_true(dvi_solver_solve(sv, &g.p, ref, &res) >= 0);
            assert_int_equal(dvi_solver_velocity(sv, ref, dv_ref), DVI_OK);
            /* warm start for the loans: the reference's γ (a guess as a step has) */
            memcpy(guess, ref, vec);
            memcpy(ref, guess, vec);
            assert_true(dvi_solver_solve(sv, &g.p, ref, &res) >= 0);
            assert_int_equal(dvi_solver_velocity(sv, ref, dv_ref), DVI_OK);
            for (int layout = 0; layout < 3; layout++) {
                dvi_memory_block blocks[DVI_SOLVER_LEND_MAX];
                int32_t count = 0;
                memset(pool, 0xff, big + 64); /* NaN in every double */
                if (layout == 0) {
                    blocks[count++] = (dvi_memory_block){pool, big};
                } else {
                    /* blocks of 100 bytes, of half a vector and of one to three vectors and a bit */
                    const size_t sizes[] = {100, vec / 2, vec + 5000, 3 * vec + 9000, 100, 2 * vec + 9000, vec / 3,
                                            6 * vec + 40000};
                    size_t at = layout == 2 ? 3 : 0; /* odd addresses */
                    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
                        blocks[count++] = (dvi_memory_block){pool + at, sizes[k]};
                        at += sizes[k] + 8 + (layout == 2 ? 5 : 0);
                    }
                    assert_true(at <= big);
                }
                assert_int_equal(dvi_solver_lend(sv, blocks, count), DVI_OK);
                memcpy(got, guess, vec);
                assert_true(dvi_solver_solve(sv, &g.p, got, &res) >= 0);
                assert_int_equal(dvi_solver_velocity(sv, got, dv), DVI_OK);
                assert_memory_equal(got, ref, vec);
                assert_memory_equal(dv, dv_ref, (size_t)ndof * sizeof(double));
                size_t changed = 0;
                for (size_t q = 0; q < big; q++) changed += pool[q] != 0xff;
                assert_true(changed > vec); /* at least a vector's worth was written there */
                assert_int_equal(dvi_solver_lend(sv, NULL, 0), DVI_OK);
                assert_int_equal(dvi_solver_velocity(sv, got, dv), DVI_ERR_INVALID_ARG);
                memset(pool, 0x7f, big + 64);
                memcpy(got, guess, vec);
                assert_true(dvi_solver_solve(sv, &g.p, got, &res) >= 0);
                assert_int_equal(dvi_solver_velocity(sv, got, dv), DVI_OK);
                assert_memory_equal(got, ref, vec);
                assert_memory_equal(dv, dv_ref, (size_t)ndof * sizeof(double));
            }
            /* bad loans */
            dvi_memory_block one = {pool, 64}, null_data = {NULL, 64};
            assert_int_equal(dvi_solver_lend(NULL, &one, 1), DVI_ERR_INVALID_ARG);
            assert_int_equal(dvi_solver_lend(sv, &one, -1), DVI_ERR_INVALID_ARG);
            assert_int_equal(dvi_solver_lend(sv, &one, DVI_SOLVER_LEND_MAX + 1), DVI_ERR_INVALID_ARG);
            assert_int_equal(dvi_solver_lend(sv, NULL, 1), DVI_ERR_INVALID_ARG);
            assert_int_equal(dvi_solver_lend(sv, &null_data, 1), DVI_ERR_INVALID_ARG);
            dvi_solver_destroy(sv);
        }
    print_message("  %d rows: APGD, PGS and Jacobi on 1 and 2 threads, three loans: the same bits as without\n", m);
    free(ref);
    free(got);
    free(guess);
    free(dv_ref);
    free(dv);
    free(pool);
    dvi_gen_free(&g);
}

/* The joint block's eigen-decomposition (ccp_sym_eigen) against LAPACK's
 * dsyev: random symmetric matrices of sizes 1 … 192 (APGD's largest joint
 * block) that are positive definite, positive semidefinite of rank n/2
 * (redundant joints), indefinite, with an eigenvalue of multiplicity four,
 * diagonal and zero. Each must give A V = V Λ and VᵀV = I to 1e-12 of ‖A‖
 * (of 1), and the eigenvalues LAPACK gives to 1e-12 of ‖A‖. */
static int cmp_double(const void* a, const void* b)
{
    const double x = *(const double*)a, y = *(const double*)b;
    return x < y ? -1 : x > y;
}

static void test_sym_eigen(void** state)
{
    (void)state;
    static const int32_t sizes[] = {1, 2, 3, 7, 24, 97, 192};
    uint64_t seed = 2024;
    double worst_res = 0.0, worst_orth = 0.0, worst_val = 0.0;
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        const int32_t n = sizes[si];
        const size_t nn = (size_t)n * n;
        double *A = malloc(nn * sizeof(double)), *A0 = malloc(nn * sizeof(double)), *V = malloc(nn * sizeof(double));
        double *B = malloc(nn * sizeof(double)), *d = malloc((size_t)n * sizeof(double));
        double *w = malloc(2 * (size_t)n * sizeof(double)), *ref = malloc((size_t)n * sizeof(double));
        assert_true(A && A0 && V && B && d && w && ref);
        for (int kind = 0; kind < 6; kind++) {
            /* A0 = B diag(λ) Bᵀ from a random B (kinds 0–3), or diagonal, or 0 */
            for (size_t q = 0; q < nn; q++) B[q] = base_uniform_sym(&seed);
            double lam[192];
            for (int32_t a = 0; a < n; a++)
                lam[a] = kind == 0 ? 0.1 + base_uniform01(&seed)
                         : kind == 1 ? (a < n / 2 ? 0.0 : 1.0 + base_uniform01(&seed))
                         : kind == 2 ? base_uniform_sym(&seed)
                         : kind == 3 ? (a < 4 ? 2.5 : base_uniform01(&seed))
                                     : 0.0;
            memset(A0, 0, nn * sizeof(double));
            if (kind <= 3) {
                for (int32_t i = 0; i < n; i++)
                    for (int32_t j = 0; j <= i; j++) {
                        double sum = 0.0;
                        for (int32_t a = 0; a < n; a++) sum += B[(size_t)i * n + a] * lam[a] * B[(size_t)j * n + a];
                        A0[(size_t)i * n + j] = A0[(size_t)j * n + i] = sum;
                    }
            } else if (kind == 4) {
                for (int32_t i = 0; i < n; i++) A0[(size_t)i * n + i] = base_uniform_sym(&seed);
            }
            double anorm = 0.0;
            for (size_t q = 0; q < nn; q++) anorm += A0[q] * A0[q];
            anorm = sqrt(anorm);
            memcpy(A, A0, nn * sizeof(double));
            assert_int_equal(ccp_sym_eigen(A, V, d, w, n), 0);
            double res = 0.0, orth = 0.0;
            for (int32_t i = 0; i < n; i++)
                for (int32_t a = 0; a < n; a++) {
                    double av = 0.0, vv = 0.0;
                    for (int32_t k = 0; k < n; k++) {
                        av += A0[(size_t)i * n + k] * V[(size_t)k * n + a];
                        vv += V[(size_t)k * n + i] * V[(size_t)k * n + a];
                    }
                    res = fmax(res, fabs(av - d[a] * V[(size_t)i * n + a]));
                    orth = fmax(orth, fabs(vv - (i == a ? 1.0 : 0.0)));
                }
            memcpy(A, A0, nn * sizeof(double));
            assert_int_equal(LAPACKE_dsyev(LAPACK_ROW_MAJOR, 'N', 'U', n, A, n, ref), 0);
            qsort(d, (size_t)n, sizeof(double), cmp_double);
            double val = 0.0;
            for (int32_t a = 0; a < n; a++) val = fmax(val, fabs(d[a] - ref[a]));
            const double scale = anorm > 0.0 ? anorm : 1.0;
            CHECK(res <= 1e-12 * scale && orth <= 1e-12 && val <= 1e-12 * scale,
                  "n = %d, kind %d: |AV - V diag(d)| = %.2e, |V'V - I| = %.2e, eigenvalues off LAPACK's by %.2e "
                  "(|A| = %.3g)",
                  n, kind, res, orth, val, anorm);
            worst_res = fmax(worst_res, res / scale);
            worst_orth = fmax(worst_orth, orth);
            worst_val = fmax(worst_val, val / scale);
        }
        free(A), free(A0), free(V), free(B), free(d), free(w), free(ref);
    }
    print_message("  worst over 42 matrices: |AV - V diag(d)| / |A| = %.2e, |V'V - I| = %.2e, eigenvalues %.2e of "
                  "|A| from LAPACK's\n",
                  worst_res, worst_orth, worst_val);
}

/* The APGD block preconditioner is an exact change of variables: with it
 * and without it APGD reaches the same answer. Two independent box columns,
 * one 10⁴ times lighter than the other, have known interface loads (as in
 * test_box_stacks) and N's diagonal spans four decades: the preconditioned
 * solve must need at least 5× fewer iterations (measured: 134 vs 10920). */
static void test_apgd_preconditioner(void** state)
{
    (void)state;
    for (int k = 1; k <= 3; k++) {
        dvi_gen_problem g;
        (void)make_random_regular(&g, k);
        int32_t m = g.p.rows;
        double g1[64] = {0}, g0[64] = {0};
        assert_true(m <= 64);
        dvi_solver_settings s = settings(1e-10, 200000);
        dvi_solve_result r1, r0;
        run(&g.p, "apgd", &s, g1, &r1);
        s.apgd.precondition = false;
        run(&g.p, "apgd", &s, g0, &r0);
        CHECK(r1.status == DVI_SOLVE_CONVERGED && r0.status == DVI_SOLVE_CONVERGED, "regular #%d: not converged", k);
        double dg = dist2(g1, g0, m) / norm2(g0, m);
        CHECK(dg <= 1e-6, "regular #%d: preconditioned and plain APGD differ by %.3e", k, dg);
        dvi_gen_free(&g);
    }

    /* two independent box columns of test_box_stacks, the second 10⁴ times
     * lighter: unscaled, N's spectrum spans the two columns' */
    const int32_t columns = 2, height = 3;
    const double mass[2] = {500.0, 0.05}, h = 1e-2;
    dvi_gen_problem g;
    memset(&g, 0, sizeof g);
    assert_int_equal(dvi_gen_box_stacks(columns, height, 10.0, h, 7, &g), DVI_OK);
    for (int32_t b = height; b < 2 * height; b++)
        for (int q = 0; q < 36; q++) g.inv_mass[36 * b + q] *= mass[0] / mass[1];
    int32_t iters[2];
    for (int pre = 1; pre >= 0; pre--) {
        dvi_solver_settings s = settings(1e-10, 500000);
        s.apgd.precondition = pre;
        double* gamma = calloc((size_t)g.p.rows, sizeof(double));
        assert_non_null(gamma);
        dvi_solve_result res;
        run(&g.p, "apgd", &s, gamma, &res);
        CHECK(res.status == DVI_SOLVE_CONVERGED, "box columns, precondition %d: %s", pre,
              dvi_solve_status_string(res.status));
        for (int32_t c = 0; c < columns; c++)
            for (int32_t j = 0; j < height; j++) {
                double sum = 0.0;
                for (int q = 0; q < 4; q++) sum += gamma[3 * (4 * (c * height + j) + q)];
                double want = (height - j) * mass[c] * 9.81 * h;
                CHECK(fabs(sum - want) <= 1e-6 * want,
                      "precondition %d: column %d interface %d carries %.12g, expected %.12g", pre, c, j, sum, want);
            }
        iters[pre] = res.iterations;
        free(gamma);
    }
    print_message("         heavy and light box columns: %d iterations preconditioned, %d plain\n", iters[1], iters[0]);
    CHECK(5 * iters[1] <= iters[0], "preconditioning should cut the iterations 5x on mixed masses (%d vs %d)",
          iters[1], iters[0]);
    dvi_gen_free(&g);
}

/* APGD's preconditioner on the bilateral rows: the inverse of their own
 * block of N (solvers.md). A chain of 12 bodies whose first body is 10⁴
 * times heavier than the others (a chassis and its links), bilateral rows
 * only: against CHOLMOD, and in far fewer iterations than a scale per row
 * (with the block, P N = I on these rows up to the starting step length;
 * without it, the rows of the heavy and the light bodies set the spectrum).
 * The chain of 40 rows is below the block's 192-row limit; one of 202 rows
 * (above it) is solved with the scale per row alone, to 1e-10: its
 * velocity residual (‖u‖ over the velocity scale ‖r‖, where the CCP
 * residual divides by ‖γ‖, 1e4 times larger here) does not reach 1e-12 in
 * 400,000 plain iterations at cond(N) ~ 1e9. */
static void test_apgd_joint_block(void** state)
{
    (void)state;
    const int32_t sizes[2] = {12, 66}; /* 3 rows a body, 4 extra: 40 and 202 rows */
    for (int t = 0; t < 2; t++) {
        chain c;
        chain_init(&c, sizes[t], 4, 11);
        for (int q = 0; q < 36; q++) c.inv_mass[q] *= 1e-4; /* body 0: 10⁴ times heavier */
        const int32_t m = c.rows;
        double* ref = calloc((size_t)m, sizeof(double));
        double* gamma = calloc((size_t)m, sizeof(double));
        assert_non_null(ref);
        assert_non_null(gamma);
        cholmod_reference(&c.p, 0.0, ref);
        const double gn = norm2(ref, m);
        /* the error in γ is at most cond(N) times the relative residual */
        const double kappa = condition_number(&c.p), tol = c.rows <= 192 ? 1e-12 : 1e-10;
        int32_t iters[2];
        for (int pre = 1; pre >= 0; pre--) {
            dvi_solver_settings s = settings(tol, 400000);
            s.apgd.precondition = pre;
            memset(gamma, 0, (size_t)m * sizeof(double));
            dvi_solve_result res;
            run(&c.p, "apgd", &s, gamma, &res);
            double err = dist2(gamma, ref, m) / gn;
            /* plain, the CCP residual comes to the tolerance but the light
             * links' rows stay off in their own units (block residual
             * 1.4e-8 on 40 rows, 8.8e-7 on 202) after 400,000 iterations:
             * not converged */
            const bool plain_short = pre == 0 && res.status == DVI_SOLVE_MAX_ITERATIONS &&
                                     res.metrics.residual <= 2.0 * tol && res.metrics.residual_block > tol;
            CHECK(res.status == DVI_SOLVE_CONVERGED || plain_short, "%d rows, precondition %d: %s", m, pre,
                  dvi_solve_status_string(res.status));
            CHECK(err <= 10.0 * kappa * tol, "%d rows, precondition %d: |gamma - gamma_chol| / |gamma_chol| = %.3e (cond %.3g)",
                  m, pre, err, kappa);
            iters[pre] = res.iterations;
        }
        print_message("         chain of %d rows, one body 1e4 times heavier (cond(N) %.3g): %d iterations "
                      "preconditioned, %d plain\n",
                      m, kappa, iters[1], iters[0]);
        if (m <= 192) /* above the limit only the scale per row acts; both runs are checked against CHOLMOD above */
            CHECK(iters[1] <= 30 && 100 * iters[1] <= iters[0],
                  "%d rows: the joint block should solve a bilateral-only problem in a few iterations (%d vs %d)", m,
                  iters[1], iters[0]);
        free(ref);
        free(gamma);
        chain_free(&c);
    }
}

/* Redundant joint rows: every row of a chain given twice, the copy with an
 * r off by 1e-3 (a stabilization term that disagrees, as redundant joints'
 * do). N is singular and the objective falls without bound along γ_a − γ_b,
 * which moves nothing (D(γ_a − γ_b) = 0). APGD's block for the joints must
 * not step along that null space: each pair must carry the chain's impulse
 * between them (its sum within 1e-6 of the chain solved once with the mean
 * r) and no pair may grow (each impulse within 1.5 times the pair's sum).
 * The inverse of a shifted N_JJ failed this: the pairs' impulses grew by
 * orders of magnitude in a few solves while the residual, scaled by ‖γ‖,
 * looked converged. */
static void test_apgd_redundant_joints(void** state)
{
    (void)state;
    chain c;
    chain_init(&c, 6, 0, 5);
    const int32_t m = c.rows, m2 = 2 * m;
    int32_t* colptr = calloc((size_t)m2 + 1, sizeof(int32_t));
    int32_t* rowind = calloc((size_t)c.nnz * 2, sizeof(int32_t));
    double* values = calloc((size_t)c.nnz * 2, sizeof(double));
    double* r = calloc((size_t)m2, sizeof(double));
    dvi_ccp_block* blocks = calloc((size_t)m2, sizeof(dvi_ccp_block));
    double* ref = calloc((size_t)m, sizeof(double));
    double* gamma = calloc((size_t)m2, sizeof(double));
    assert_true(colptr && rowind && values && r && blocks && ref && gamma);
    int32_t nz = 0;
    for (int32_t j = 0; j < m2; j++) { /* row j: row j / 2 of the chain */
        const int32_t i = j / 2;
        colptr[j] = nz;
        for (int32_t k = c.colptr[i]; k < c.colptr[i + 1]; k++) {
            rowind[nz] = c.rowind[k];
            values[nz++] = c.values[k];
        }
        r[j] = c.r[i] + (j % 2 ? 1e-3 : 0.0);
        blocks[j].kind = DVI_BLOCK_BILATERAL;
    }
    colptr[m2] = nz;
    dvi_csc D = {6 * c.bodies, m2, colptr, rowind, values};
    dvi_ccp_problem p = c.p;
    p.rows = m2;
    p.block_count = m2;
    p.blocks = blocks;
    p.D = &D;
    p.r = r;
    /* the chain once, with the mean r of each pair */
    for (int32_t i = 0; i < m; i++) c.r[i] += 0.5e-3;
    cholmod_reference(&c.p, 0.0, ref);
    const double gn = norm2(ref, m);
    /* five solves in a row, each warm-started from the last, as a world's steps are */
    dvi_solver_settings s = settings(1e-10, 3000);
    s.warm_start = true;
    dvi_solve_result res;
    for (int k = 0; k < 5; k++) run(&p, "apgd", &s, gamma, &res);
    double err = 0.0, worst = 0.0;
    for (int32_t i = 0; i < m; i++) {
        const double sum = gamma[2 * i] + gamma[2 * i + 1];
        err = dmax(err, fabs(sum - ref[i]));
        const double big = dmax(fabs(gamma[2 * i]), fabs(gamma[2 * i + 1]));
        worst = dmax(worst, big / dmax(fabs(ref[i]), 1e-3 * gn));
    }
    print_message("         chain of %d rows given twice: pair sums within %.3e of the chain's (|gamma| %.3g), largest "
                  "impulse %.3g times its pair's\n",
                  m, err / gn, gn, worst);
    CHECK(err <= 1e-6 * gn, "redundant rows: pair sums off by %.3e relative", err / gn);
    CHECK(worst <= 1.5, "redundant rows: an impulse grew to %.3g times its pair's sum (drift along the null space)",
          worst);
    free(colptr);
    free(rowind);
    free(values);
    free(r);
    free(blocks);
    free(ref);
    free(gamma);
    chain_free(&c);
}

/* Per-contact state of a solution: 0 separated, 1 stick, 2 slide. */
static int contact_state(const double* g3, const double* u3, double gscale, double uscale)
{
    if (g3[0] <= 1e-7 * gscale) return 0;
    return hypot(u3[1], u3[2]) <= 1e-6 * uscale ? 1 : 2;
}

/* Lemke with settings.lemke.coulomb = true (pyramid, Coulomb-type LCP)
 * against the cone solvers on the nominal random problems, where most
 * contacts slide.
 * (a) The pyramid is inscribed in the cone: Lemke's γ is feasible for the
 *     CCP, so its CCP objective is never below the CCP minimum.
 * (b) Sliding contacts: the CCP answer has u_n = μ‖u_t‖, the Coulomb one
 *     u_n = 0, so the objectives differ by design (printed; 4-30% here).
 * (c) Lemke solves the pyramid-Coulomb problem: its friction direction is
 *     off the exact Coulomb one by at most the pyramid's half-angle π/k, so
 *     its Coulomb residual is bounded by about sin(π/k) (0.049 for k = 64),
 *     while the cone solvers' Coulomb residual stays O(0.1). */
static void test_random_lemke_vs_cone(void** state)
{
    (void)state;
    const int32_t k = 64;
    for (uint64_t seed = 1; seed <= RANDOM_SEEDS; seed++) {
        dvi_gen_problem g;
        make_random(&g, seed);
        int32_t m = g.p.rows, nb = g.bilateral;
        double gc[64] = {0}, gl[64] = {0}, uc[64], ul[64];
        dvi_solver_settings s = settings(1e-10, 500000);
        dvi_solve_result rc, rl;
        run(&g.p, "pgs", &s, gc, &rc);
        s.lemke.friction_directions = k;
        s.lemke.coulomb = true;
        dvi_status st = run(&g.p, "lemke", &s, gl, &rl);
        CHECK(st == DVI_OK && rl.status == DVI_SOLVE_CONVERGED, "seed %llu: lemke k=64: %s (%s)",
              (unsigned long long)seed, dvi_solve_status_string(rl.status), rl.message);
        double oc = velocity_and_objective(&g.p, gc, uc);
        double ol = velocity_and_objective(&g.p, gl, ul);
        double gscale = norm2(gc, m), uscale = dmax(norm2(uc, m), norm2(g.r, m));
        int sliding = 0, sticking = 0;
        for (int32_t c = 0; c < g.contacts; c++) {
            int cs = contact_state(gc + nb + 3 * c, uc + nb + 3 * c, gscale, uscale);
            sliding += cs == 2;
            sticking += cs == 1;
        }
        print_message("         seed %llu: CCP has %d stick, %d slide; objective lemke-64 %.10g vs CCP %.10g (%+.3e "
                      "rel); Coulomb residual lemke %.3g, pgs %.3g\n",
                      (unsigned long long)seed, sticking, sliding, ol, oc, (ol - oc) / fabs(oc),
                      rl.metrics.residual_coulomb, rc.metrics.residual_coulomb);
        CHECK(rl.metrics.cone_violation <= 1e-10 * dmax(1.0, gscale), "seed %llu: lemke gamma outside the cone by %.3g",
              (unsigned long long)seed, rl.metrics.cone_violation);
        CHECK(ol >= oc - 1e-7 * fabs(oc), "seed %llu: lemke objective %.15g below the CCP minimum %.15g",
              (unsigned long long)seed, ol, oc);
        CHECK(rl.metrics.residual_coulomb <= sin(PI / k), "seed %llu: lemke k=%d Coulomb residual %.3g > sin(pi/k) = %.3g",
              (unsigned long long)seed, k, rl.metrics.residual_coulomb, sin(PI / k));
        dvi_gen_free(&g);
    }
}

/* Lemke by default (settings.lemke.coulomb = false) solves the CCP with the
 * cone replaced by its inscribed k-pyramid: min ½γᵀNγ + rᵀγ over a subset
 * of K. On the nominal random problems (most contacts slide) it is compared
 * with apgd solved to 1e-10:
 * (a) γ lies in the cone, so its objective is never below the CCP optimum
 *     (apgd's objective, up to apgd's own 1e-10 accuracy);
 * (b) k = 64: objective within REL_OBJ of the CCP optimum and u = Nγ + r
 *     (unique for the CCP even where N is singular) within REL_U relative;
 * (c) the pyramids are nested (the vertices for k = 4 are among those for
 *     16, those for 16 among those for 64), so the objective cannot rise as
 *     k goes 4 → 16 → 64, and the CCP residual of Lemke's answer falls;
 *     for k = 64 it is at most RES64.
 * Measured over seeds 1–6 (printed), k = 4 / 16 / 64: objective above the
 * CCP optimum by ≤ 1.3e-1 / 7.4e-3 / 3.9e-4 relative, |u − u_apgd|/|u| ≤
 * 1.6e-1 / 3.7e-2 / 6.1e-3, CCP residual ≤ 7.5e-2 / 1.9e-2 / 2.3e-3 (the
 * pyramid's inner radius is cos(π/64) = 1 − 1.2e-3 of the cone's). The k = 64
 * bounds below leave a margin of about 2. */
static void test_random_lemke_relaxed_vs_apgd(void** state)
{
    (void)state;
    const double REL_OBJ = 1e-3, REL_U = 1e-2, RES64 = 5e-3;
    double worst_obj = 0.0, worst_u = 0.0, worst_res = 0.0;
    for (uint64_t seed = 1; seed <= RANDOM_SEEDS; seed++) {
        dvi_gen_problem g;
        make_random(&g, seed);
        int32_t m = g.p.rows, nb = g.bilateral;
        double ga[64] = {0}, ua[64];
        dvi_solver_settings s = settings(1e-10, 500000);
        dvi_solve_result ra;
        dvi_status st = run(&g.p, "apgd", &s, ga, &ra);
        CHECK(st == DVI_OK && ra.status == DVI_SOLVE_CONVERGED, "seed %llu: apgd did not reach 1e-10 (%s, %.3g)",
              (unsigned long long)seed, dvi_solve_status_string(ra.status), ra.metrics.residual);
        double oa = velocity_and_objective(&g.p, ga, ua);
        double gscale = norm2(ga, m), uscale = dmax(norm2(ua, m), norm2(g.r, m));
        int sliding = 0;
        for (int32_t c = 0; c < g.contacts; c++)
            sliding += contact_state(ga + nb + 3 * c, ua + nb + 3 * c, gscale, uscale) == 2;
        CHECK(sliding >= 1, "seed %llu: no sliding contact in the CCP answer (the test needs some)",
              (unsigned long long)seed);
        double prev = INFINITY, prev_obj = INFINITY;
        for (int32_t k = 4; k <= 64; k *= 4) {
            double gl[64] = {0}, ul[64];
            dvi_solver_settings sl = settings(1e-12, 1000);
            sl.lemke.friction_directions = k;
            dvi_solve_result rl;
            st = run(&g.p, "lemke", &sl, gl, &rl);
            CHECK(st == DVI_OK && rl.status == DVI_SOLVE_CONVERGED, "seed %llu: lemke k=%d: %s (%s)",
                  (unsigned long long)seed, k, dvi_solve_status_string(rl.status), rl.message);
            double ol = velocity_and_objective(&g.p, gl, ul);
            double dobj = (ol - oa) / fabs(oa), du = dist2(ul, ua, m) / uscale;
            print_message("         seed %llu (%d sliding): lemke k=%2d: objective %+.3e rel to apgd, |du|/|u| %.3e, "
                          "CCP residual %.3e\n",
                          (unsigned long long)seed, sliding, k, dobj, du, rl.metrics.residual);
            CHECK(rl.metrics.cone_violation <= 1e-12 * dmax(1.0, gscale),
                  "seed %llu: lemke k=%d outside the cone by %.3g", (unsigned long long)seed, k,
                  rl.metrics.cone_violation);
            CHECK(dobj >= -1e-9, "seed %llu: lemke k=%d objective %.15g below the CCP optimum %.15g (%.3e rel)",
                  (unsigned long long)seed, k, ol, oa, dobj);
            CHECK(rl.metrics.residual < prev, "seed %llu: lemke CCP residual %.3e at k=%d not below %.3e at k/4",
                  (unsigned long long)seed, rl.metrics.residual, k, prev);
            CHECK(ol <= prev_obj + 1e-12 * fabs(oa), "seed %llu: lemke k=%d objective %.15g above k/4's %.15g (nested "
                  "pyramids)", (unsigned long long)seed, k, ol, prev_obj);
            prev = rl.metrics.residual;
            prev_obj = ol;
            if (k == 64) {
                worst_obj = dmax(worst_obj, dobj);
                worst_u = dmax(worst_u, du);
                worst_res = dmax(worst_res, rl.metrics.residual);
                CHECK(dobj <= REL_OBJ, "seed %llu: lemke k=64 objective %.3e above the CCP optimum (> %g)",
                      (unsigned long long)seed, dobj, REL_OBJ);
                CHECK(du <= REL_U, "seed %llu: lemke k=64 velocities %.3e away from apgd's (> %g)",
                      (unsigned long long)seed, du, REL_U);
                CHECK(rl.metrics.residual <= RES64, "seed %llu: lemke k=64 CCP residual %.3e > %g",
                      (unsigned long long)seed, rl.metrics.residual, RES64);
            }
        }
        dvi_gen_free(&g);
    }
    print_message("         worst over seeds, k = 64: objective %.3e, |du|/|u| %.3e, CCP residual %.3e\n", worst_obj,
                  worst_u, worst_res);
}

/* Replaces r by −N γ* for a chosen γ* in the cone: then γ* solves the CCP
 * with u = 0 (γ* ∈ K, u = 0 ∈ K*, ⟨γ*, u⟩ = 0); it also solves the Coulomb
 * problem (u = 0), and the pyramid LCP whenever γ* lies inside the pyramid.
 * Contacts get γ_n ∈ [0.5, 1.5] and ‖γ_t‖ = ratio(c) · μ γ_n in a random
 * direction; bilateral rows γ ∈ [−1, 1]. */
static void set_known_solution(dvi_gen_problem* g, uint64_t seed, double (*ratio)(int32_t c), double* gstar)
{
    uint64_t s = seed * 7919u + 17u;
    int32_t nb = g->bilateral, m = g->p.rows;
    for (int32_t i = 0; i < nb; i++) gstar[i] = base_uniform_sym(&s);
    for (int32_t c = 0; c < g->contacts; c++) {
        assert_int_equal(g->blocks[nb + c].kind, DVI_BLOCK_FRICTION);
        double mu = g->blocks[nb + c].mu, gn = 0.5 + base_uniform01(&s), th = 2.0 * PI * base_uniform01(&s);
        gstar[nb + 3 * c] = gn;
        gstar[nb + 3 * c + 1] = ratio(c) * mu * gn * cos(th);
        gstar[nb + 3 * c + 2] = ratio(c) * mu * gn * sin(th);
    }
    apply_n(&g->p, gstar, g->r);
    for (int32_t i = 0; i < m; i++) g->r[i] = -g->r[i];
}

/* strictly inside even the 4-sided pyramid: ‖γ_t‖ ≤ 0.6 μγ_n < cos(π/4) μγ_n */
static double ratio_inside(int32_t c) { return 0.1 * (c % 7); }
/* half the contacts at the cone's boundary (sticking at the friction limit) */
static double ratio_limit(int32_t c) { return c % 2 ? 1.0 : 0.3; }

/* Everything sticks strictly inside the pyramid: the CCP, the Coulomb
 * problem and the pyramid LCP share the exact answer γ*, with objective
 * −½ γ*ᵀNγ*, for every solver and k. */
static void test_known_solution_all_stick(void** state)
{
    (void)state;
    for (int q = 1; q <= 4; q++) {
        dvi_gen_problem g;
        double kappa = make_random_regular(&g, q);
        int32_t m = g.p.rows;
        double gstar[64], ustar[64];
        set_known_solution(&g, (uint64_t)q, ratio_inside, gstar);
        double fstar = velocity_and_objective(&g.p, gstar, ustar);
        double gs = norm2(gstar, m);
        /* lemke: k = 4 and 64, default form (3, 4) and coulomb = true (5, 6) */
        static const char* const names[] = {"apgd", "pgs", "jacobi", "lemke", "lemke", "lemke", "lemke"};
        for (int k = 0; k < 7; k++) {
            dvi_solver_settings s = settings(1e-12, 500000);
            s.lemke.friction_directions = k % 2 ? 4 : 64;
            s.lemke.coulomb = k >= 5;
            double gamma[64] = {0};
            dvi_solve_result res;
            run(&g.p, names[k], &s, gamma, &res);
            double err = dist2(gamma, gstar, m) / gs;
            /* iterative: ≲ cond(N) × 1e-12 ≤ 1e-9; lemke: exact up to rounding */
            double tol = k < 3 ? 1e-8 : 1e-10;
            CHECK(err <= tol, "regular #%d (cond %.3g) %s%s%s: |gamma - gamma*|/|gamma*| = %.3e > %g", q, kappa,
                  names[k], k < 3 ? "" : (k % 2 ? " k=4" : " k=64"), k >= 5 ? " coulomb" : "", err, tol);
            CHECK(fabs(res.metrics.objective - fstar) <= 1e-8 * fabs(fstar),
                  "regular #%d %s: objective %.15g, expected -0.5 g*'N g* = %.15g", q, names[k], res.metrics.objective,
                  fstar);
        }
        dvi_gen_free(&g);
    }
}

/* Half the contacts stick AT the friction limit (γ* on the cone's boundary,
 * u = 0). The cone solvers find γ*; the inscribed k-pyramid cannot hold
 * those tangential impulses in most directions, so Lemke's answer must
 * differ, by an amount set by the pyramid: its inscribed radius is
 * cos(π/k) of the cone's, 0.9988 for k = 64, 0.71 for k = 4. Accounted
 * bound: with k = 64 the objective is within 1% of the CCP optimum (and
 * never below it), γ within 5%. For k = 4 the difference is printed. */
static void test_known_solution_stick_at_limit(void** state)
{
    (void)state;
    for (int q = 1; q <= 4; q++) {
        dvi_gen_problem g;
        (void)make_random_regular(&g, q);
        int32_t m = g.p.rows;
        double gstar[64], ustar[64];
        set_known_solution(&g, (uint64_t)q + 100u, ratio_limit, gstar);
        double fstar = velocity_and_objective(&g.p, gstar, ustar);
        double gs = norm2(gstar, m);
        static const char* const iterative[] = {"apgd", "pgs"};
        for (int k = 0; k < 2; k++) {
            dvi_solver_settings s = settings(1e-12, 500000);
            double gamma[64] = {0};
            dvi_solve_result res;
            run(&g.p, iterative[k], &s, gamma, &res);
            double err = dist2(gamma, gstar, m) / gs;
            CHECK(err <= 1e-8, "regular #%d %s: |gamma - gamma*|/|gamma*| = %.3e (stick at the limit)", q,
                  iterative[k], err);
        }
        for (int kk = 0; kk < 2; kk++) {
            int32_t k = kk == 0 ? 4 : 64;
            dvi_solver_settings s = settings(1e-12, 1000);
            s.lemke.friction_directions = k;
            double gamma[64] = {0}, u[64];
            dvi_solve_result res;
            dvi_status st = run(&g.p, "lemke", &s, gamma, &res);
            CHECK(st == DVI_OK, "regular #%d lemke k=%d: %s", q, k, res.message);
            double f = velocity_and_objective(&g.p, gamma, u);
            double rel = (f - fstar) / fabs(fstar), err = dist2(gamma, gstar, m) / gs;
            print_message("         regular #%d lemke k=%2d: objective %+.3e relative to the CCP optimum, "
                          "|gamma - gamma*|/|gamma*| = %.3e\n",
                          q, k, rel, err);
            CHECK(rel >= -1e-9, "regular #%d lemke k=%d: objective below the CCP optimum (%.3e)", q, k, rel);
            if (k == 64) {
                CHECK(rel <= 0.01, "regular #%d lemke k=64: objective %.3e above the CCP optimum (> 1%%)", q, rel);
                CHECK(err <= 0.05, "regular #%d lemke k=64: gamma %.3e away from gamma* (> 5%%)", q, err);
            }
        }
        dvi_gen_free(&g);
    }
}

/* The Delassus form of the same problem gives the same answer. */
/* W (CSC, every entry of the dense m × m N, symmetrised exactly: the sums in
 * N are rounded per column); the arrays are the caller's to free. */
static dvi_csc dense_to_w(const double* N, int32_t m, int32_t** cp_out, int32_t** ri_out, double** va_out)
{
    int32_t* cp = calloc((size_t)m + 1, sizeof(int32_t));
    int32_t* ri = calloc((size_t)m * m, sizeof(int32_t));
    double* va = calloc((size_t)m * m, sizeof(double));
    assert_non_null(cp);
    assert_non_null(ri);
    assert_non_null(va);
    int32_t nnz = 0;
    for (int32_t j = 0; j < m; j++) {
        cp[j] = nnz;
        for (int32_t i = 0; i < m; i++) {
            double v = 0.5 * (N[(size_t)j * m + i] + N[(size_t)i * m + j]);
            if (v != 0.0) {
                ri[nnz] = i;
                va[nnz++] = v;
            }
        }
    }
    cp[m] = nnz;
    *cp_out = cp;
    *ri_out = ri;
    *va_out = va;
    return (dvi_csc){m, m, cp, ri, va};
}

static void test_w_form_matches_factor_form(void** state)
{
    (void)state;
    dvi_gen_problem g;
    make_random(&g, 3);
    int32_t m = g.p.rows;
    double* N = dense_n(&g.p);
    int32_t *cp, *ri;
    double* va;
    dvi_csc W = dense_to_w(N, m, &cp, &ri, &va);
    dvi_ccp_problem pw = g.p;
    pw.D = NULL;
    pw.inv_mass = NULL;
    pw.body_count = 0;
    pw.W = &W;
    static const char* const names[] = {"apgd", "pgs", "lemke"};
    for (int k = 0; k < 3; k++) {
        double gd[64] = {0}, gw[64] = {0}, ud[64], uw[64];
        dvi_solver_settings s = settings(1e-10, 500000);
        dvi_solve_result rd, rw;
        run(&g.p, names[k], &s, gd, &rd);
        run(&pw, names[k], &s, gw, &rw);
        double od = velocity_and_objective(&g.p, gd, ud);
        double ow = velocity_and_objective(&g.p, gw, uw);
        double du = dist2(ud, uw, m) / dmax(norm2(ud, m), norm2(g.r, m));
        CHECK(du <= 1e-6, "%s: W form and factor form velocities differ by %.3e", names[k], du);
        CHECK(fabs(od - ow) <= 1e-7 * fabs(od), "%s: objectives %.15g (D) vs %.15g (W)", names[k], od, ow);
    }
    free(N);
    free(cp);
    free(ri);
    free(va);
    dvi_gen_free(&g);
}

/* The low-rank term (dvi_ccp_problem.G): the factor form with G solves the
 * problem whose N is Dᵀ M⁻¹ D − Gᵀ G, here against the same N given as W.
 * G is half of body 0's six rows of D: Gᵀ G = ¼ Dᵀ E D ⪯ ½ Dᵀ D ⪯ N, since
 * the random M⁻¹ blocks have eigenvalues ≥ 0.5, so N stays positive
 * semidefinite. The metrics of any γ agree between the two forms (the
 * operator), and each solver's answer with G is an answer of the W form:
 * its residual there is its own, its objective the W form's solve's. */
static void test_low_rank_term(void** state)
{
    (void)state;
    dvi_gen_problem g;
    make_random(&g, 5);
    const int32_t m = g.p.rows;
    /* G (6 × m) from D's rows 0..5, halved */
    int32_t gp[64], gi[64 * 6];
    double gx[64 * 6];
    int32_t nnz = 0;
    for (int32_t j = 0; j < m; j++) {
        gp[j] = nnz;
        for (int32_t k = g.p.D->colptr[j]; k < g.p.D->colptr[j + 1]; k++)
            if (g.p.D->rowind[k] < 6) {
                gi[nnz] = g.p.D->rowind[k];
                gx[nnz++] = 0.5 * g.p.D->values[k];
            }
    }
    gp[m] = nnz;
    assert_true(nnz > m / 4);
    dvi_csc G = {6, m, gp, gi, gx};
    /* W = N − Gᵀ G */
    double* N = dense_n(&g.p);
    for (int32_t j = 0; j < m; j++)
        for (int32_t i = 0; i < m; i++) {
            double s = 0.0;
            for (int32_t a = gp[i]; a < gp[i + 1]; a++)
                for (int32_t b = gp[j]; b < gp[j + 1]; b++)
                    if (gi[a] == gi[b]) s += gx[a] * gx[b];
            N[(size_t)j * m + i] -= s;
        }
    int32_t *cp, *ri;
    double* va;
    dvi_csc W = dense_to_w(N, m, &cp, &ri, &va);
    dvi_ccp_problem pg = g.p, pw = g.p;
    pg.G = &G;
    pw.D = NULL;
    pw.inv_mass = NULL;
    pw.body_count = 0;
    pw.W = &W;
    /* the operator: the metrics of a fixed γ */
    double gam[64];
    for (int32_t i = 0; i < m; i++) gam[i] = 0.1 * (double)((i * 37) % 11) - 0.3;
    dvi_ccp_metrics mg, mw;
    assert_int_equal(dvi_ccp_evaluate(&pg, gam, &mg), DVI_OK);
    assert_int_equal(dvi_ccp_evaluate(&pw, gam, &mw), DVI_OK);
    CHECK(fabs(mg.objective - mw.objective) <= 1e-12 * fabs(mw.objective), "objective %.17g with G, %.17g as W",
          mg.objective, mw.objective);
    CHECK(fabs(mg.residual - mw.residual) <= 1e-12 * mw.residual, "residual %.17g with G, %.17g as W", mg.residual,
          mw.residual);
    /* every solver: its answer with G solves the W form */
    static const char* const names[] = {"apgd", "pgs", "jacobi", "lemke", "nsgs", "newton"};
    for (int k = 0; k < 6; k++) {
        const bool coulomb = k >= 4;
        double gg[64] = {0}, gw[64] = {0};
        dvi_solver_settings s = settings(1e-9, 500000);
        dvi_solve_result rg, rw;
        run(&pg, names[k], &s, gg, &rg);
        run(&pw, names[k], &s, gw, &rw);
        CHECK(rg.status == DVI_SOLVE_CONVERGED, "%s with G: %s", names[k], dvi_solve_status_string(rg.status));
        dvi_ccp_metrics eg, ew;
        assert_int_equal(dvi_ccp_evaluate(&pw, gg, &eg), DVI_OK);
        assert_int_equal(dvi_ccp_evaluate(&pw, gw, &ew), DVI_OK);
        if (coulomb) {
            CHECK(eg.residual_coulomb <= 1e-8, "%s: the answer with G has Coulomb residual %.3e as W", names[k],
                  eg.residual_coulomb);
        } else {
            /* lemke: the pyramid's answer, whose CCP residual is the W form's own */
            CHECK(k == 3 ? fabs(eg.residual - ew.residual) <= 1e-9 : eg.residual <= 1e-8,
                  "%s: the answer with G has CCP residual %.3e as W (the W form's answer: %.3e)", names[k],
                  eg.residual, ew.residual);
            CHECK(fabs(eg.objective - ew.objective) <= (k == 3 ? 1e-12 : 1e-6) * fabs(ew.objective),
                  "%s: objectives %.15g (G) vs %.15g (W)", names[k], eg.objective, ew.objective);
        }
    }
    /* validation: G needs the factor form and m columns */
    char msg[256];
    dvi_ccp_problem bad = pw;
    bad.G = &G;
    assert_int_equal(dvi_ccp_validate(&bad, msg, sizeof msg), DVI_ERR_INVALID_ARG);
    assert_non_null(strstr(msg, "G: given with W"));
    dvi_csc G2 = {6, m - 1, gp, gi, gx};
    bad = pg;
    bad.G = &G2;
    assert_int_equal(dvi_ccp_validate(&bad, msg, sizeof msg), DVI_ERR_INVALID_ARG);
    assert_non_null(strstr(msg, "G: is 6 x"));
    free(N);
    free(cp);
    free(ri);
    free(va);
    dvi_gen_free(&g);
}

/* The granular bed of about 100 contacts (105 contacts, 23 spheres, FCC
 * packing: N very singular, the LCP highly degenerate) solved by Lemke's
 * default (pyramid CCP, k = 4) and by apgd to 1e-10. Lemke must finish with
 * LCP residual ≤ 1e-10 and γ in the cone. Every contact sticks (apgd's
 * answer, printed: 105 stick) and inside the 4-pyramid, so the pyramid
 * changes nothing here: measured, the objectives agree to 6e-16 relative,
 * |u − u_apgd|/|u| = 8.9e-11 (apgd's own accuracy) and Lemke's CCP
 * residual is 1.5e-14. Held to 1e-10, 1e-9 and 1e-12. */
static void test_granular_lemke_vs_apgd(void** state)
{
    (void)state;
    dvi_gen_problem g;
    memset(&g, 0, sizeof g);
    assert_int_equal(dvi_gen_granular(100, 0.5, 0.01, 3, &g), DVI_OK);
    int32_t m = g.p.rows;
    double* ga = calloc((size_t)m, sizeof(double));
    double* gl = calloc((size_t)m, sizeof(double));
    double* ua = calloc((size_t)m, sizeof(double));
    double* ul = calloc((size_t)m, sizeof(double));
    assert_non_null(ga);
    assert_non_null(gl);
    assert_non_null(ua);
    assert_non_null(ul);
    print_message("  granular: %d contacts, %d rows, %d bodies\n", g.contacts, m, g.p.body_count);
    dvi_solver_settings s = settings(1e-10, 1000000);
    dvi_solve_result ra, rl;
    dvi_status st = run(&g.p, "apgd", &s, ga, &ra);
    CHECK(st == DVI_OK && ra.status == DVI_SOLVE_CONVERGED, "granular: apgd did not reach 1e-10 (%s, %.3g)",
          dvi_solve_status_string(ra.status), ra.metrics.residual);
    double oa = velocity_and_objective(&g.p, ga, ua);
    double gscale = norm2(ga, m), uscale = dmax(norm2(ua, m), norm2(g.r, m));
    int states[3] = {0, 0, 0};
    for (int32_t c = 0; c < g.contacts; c++) states[contact_state(ga + 3 * c, ua + 3 * c, gscale, uscale)]++;
    print_message("         apgd: %d separated, %d stick, %d slide\n", states[0], states[1], states[2]);

    dvi_solver_settings sl = settings(1e-10, 1000);
    st = run(&g.p, "lemke", &sl, gl, &rl);
    CHECK(st == DVI_OK && rl.status == DVI_SOLVE_CONVERGED, "granular: lemke: %s (%s)",
          dvi_solve_status_string(rl.status), rl.message);
    CHECK(rl.target_residual <= 1e-10, "granular: lemke LCP residual %.3e", rl.target_residual);
    double ol = velocity_and_objective(&g.p, gl, ul);
    double dobj = (ol - oa) / fabs(oa), du = dist2(ul, ua, m) / uscale;
    print_message("         lemke k=4: %d pivots, objective %.15g vs apgd %.15g (%+.3e rel), |du|/|u| %.3e, "
                  "CCP residual %.3e\n",
                  rl.iterations, ol, oa, dobj, du, rl.metrics.residual);
    CHECK(rl.metrics.cone_violation <= 1e-12 * gscale, "granular: lemke outside the cone by %.3g",
          rl.metrics.cone_violation);
    CHECK(fabs(dobj) <= 1e-10, "granular: lemke objective %.15g vs apgd %.15g (%.3e rel)", ol, oa, dobj);
    CHECK(du <= 1e-9, "granular: lemke velocities %.3e away from apgd's", du);
    CHECK(rl.metrics.residual <= 1e-12, "granular: lemke CCP residual %.3e", rl.metrics.residual);
    free(ga);
    free(gl);
    free(ua);
    free(ul);
    dvi_gen_free(&g);
}

/* ------------------------------------------------------------------------- */
/* 5. Honest residual reporting                                                */
/* ------------------------------------------------------------------------- */

static void check_metrics_honest(const char* name, const dvi_ccp_problem* p, const double* gamma,
                                 const dvi_solve_result* res)
{
    dvi_ccp_metrics m;
    assert_int_equal(dvi_ccp_evaluate(p, gamma, &m), DVI_OK);
#define SAME(field)                                                                                                    \
    CHECK(fabs(res->metrics.field - m.field) <= 1e-14 * dmax(1.0, fabs(m.field)),                                      \
          "%s: result.metrics." #field " = %.17g but dvi_ccp_evaluate gives %.17g", name, res->metrics.field, m.field)
    SAME(residual);
    SAME(residual_coulomb);
    SAME(cone_violation);
    SAME(dual_violation);
    SAME(complementarity);
    SAME(objective);
#undef SAME
}

static void test_residual_honesty(void** state)
{
    (void)state;
    dvi_gen_problem stack, rnd;
    make_stack(&stack);
    make_random(&rnd, 2);
    static const char* const names[] = {"apgd", "pgs", "jacobi", "lemke"};
    const dvi_gen_problem* probs[2] = {&stack, &rnd};
    for (int q = 0; q < 2; q++)
        for (int k = 0; k < 4; k++) {
            const dvi_ccp_problem* p = &probs[q]->p;
            for (int tol_i = 0; tol_i < 2; tol_i++) {
                double tol = tol_i == 0 ? 1e-4 : 1e-8;
                dvi_solver_settings s = settings(tol, 20000);
                double gamma[64] = {0};
                dvi_solve_result res;
                dvi_status st = run(p, names[k], &s, gamma, &res);
                check_metrics_honest(names[k], p, gamma, &res);
                CHECK((st == DVI_OK) == (res.status == DVI_SOLVE_CONVERGED), "%s: return %d with status %s", names[k],
                      (int)st, dvi_solve_status_string(res.status));
                if (res.status == DVI_SOLVE_CONVERGED && k < 3) {
                    CHECK(res.metrics.residual <= tol, "%s: CONVERGED at tol %g but metrics.residual = %.3e", names[k],
                          tol, res.metrics.residual);
                    CHECK(res.target_residual <= tol, "%s: CONVERGED at tol %g but target_residual = %.3e", names[k],
                          tol, res.target_residual);
                }
                if (k < 3)
                    CHECK(res.iterations >= 1 && res.iterations <= s.max_iterations, "%s: %d iterations", names[k],
                          res.iterations);
                CHECK(res.seconds >= 0.0 && isfinite(res.seconds), "%s: seconds = %g", names[k], res.seconds);
            }
        }

    /* a budget of 3 iterations on the stack is not enough for anyone */
    for (int k = 0; k < 3; k++) {
        dvi_solver_settings s = settings(1e-10, 3);
        double gamma[3 * STACK_N] = {0};
        dvi_solve_result res;
        memset(&res, 0, sizeof res);
        dvi_status st = dvi_ccp_solve(&stack.p, names[k], &s, gamma, &res);
        CHECK(st == DVI_NOT_CONVERGED, "%s: 3 iterations returned %d, expected DVI_NOT_CONVERGED", names[k], (int)st);
        CHECK(res.status == DVI_SOLVE_MAX_ITERATIONS, "%s: 3 iterations gave status %s", names[k],
              dvi_solve_status_string(res.status));
        CHECK(res.iterations == 3, "%s: %d iterations reported with max_iterations = 3", names[k], res.iterations);
        CHECK(res.metrics.residual > 1e-10, "%s: residual %.3g after 3 iterations yet not converged?", names[k],
              res.metrics.residual);
        check_metrics_honest(names[k], &stack.p, gamma, &res);
    }
    /* Lemke: a budget of 3 pivots cannot solve 10 contacts */
    {
        dvi_solver_settings s = settings(1e-10, 1000);
        s.lemke.max_pivots = 3;
        double gamma[3 * STACK_N] = {0};
        dvi_solve_result res;
        memset(&res, 0, sizeof res);
        dvi_status st = dvi_ccp_solve(&stack.p, "lemke", &s, gamma, &res);
        CHECK(st == DVI_NOT_CONVERGED, "lemke: 3 pivots returned %d, expected DVI_NOT_CONVERGED", (int)st);
        CHECK(res.status == DVI_SOLVE_PIVOT_LIMIT, "lemke: 3 pivots gave status %s",
              dvi_solve_status_string(res.status));
        CHECK(res.iterations <= 3, "lemke: %d pivots reported with max_pivots = 3", res.iterations);
    }
    /* Lemke: an LCP larger than max_lcp_size is refused with a message */
    {
        dvi_solver_settings s = settings(1e-10, 1000);
        s.lemke.max_lcp_size = 5;
        double gamma[3 * STACK_N] = {0};
        dvi_solve_result res;
        memset(&res, 0, sizeof res);
        dvi_status st = dvi_ccp_solve(&stack.p, "lemke", &s, gamma, &res);
        CHECK(st < 0, "lemke: LCP larger than max_lcp_size = 5 accepted (returned %d)", (int)st);
        CHECK(res.message[0] != '\0', "lemke: refused LCP size without a message");
        CHECK(res.status != DVI_SOLVE_CONVERGED, "lemke: refused but status converged");
    }
    dvi_gen_free(&stack);
    dvi_gen_free(&rnd);
}

/* ------------------------------------------------------------------------- */
/* 6. Warm start                                                               */
/* ------------------------------------------------------------------------- */

static void test_warm_start(void** state)
{
    (void)state;
    dvi_gen_problem stack, rnd;
    make_stack(&stack);
    make_random(&rnd, 4);
    static const char* const names[] = {"apgd", "pgs", "jacobi"};
    const dvi_gen_problem* probs[2] = {&stack, &rnd};
    for (int q = 0; q < 2; q++)
        for (int k = 0; k < 3; k++) {
            const dvi_ccp_problem* p = &probs[q]->p;
            int32_t m = p->rows;
            dvi_solver* solver = NULL;
            dvi_solver_settings s = settings(1e-9, 500000);
            assert_int_equal(dvi_solver_create(names[k], &s, &solver), DVI_OK);
            double gamma[64] = {0}, first[64];
            dvi_solve_result res;
            memset(&res, 0, sizeof res);
            dvi_status st = dvi_solver_solve(solver, p, gamma, &res);
            CHECK(st == DVI_OK, "%s: cold solve did not converge (%s, %d it, %.3g)", names[k],
                  dvi_solve_status_string(res.status), res.iterations, res.metrics.residual);
            int cold = res.iterations;
            memcpy(first, gamma, sizeof first);

            s.warm_start = true;
            assert_int_equal(dvi_solver_set_settings(solver, &s), DVI_OK);
            memset(&res, 0, sizeof res);
            st = dvi_solver_solve(solver, p, gamma, &res);
            print_message("  %s on %s: cold %d iterations, warm %d\n", names[k], q ? "random" : "stack", cold,
                          res.iterations);
            CHECK(st == DVI_OK && res.status == DVI_SOLVE_CONVERGED, "%s: warm solve not converged", names[k]);
            CHECK(res.iterations <= 2, "%s: warm start from the solution took %d iterations (cold: %d)", names[k],
                  res.iterations, cold);
            CHECK(dist2(gamma, first, m) <= 1e-8 * norm2(first, m), "%s: warm start moved gamma by %.3e", names[k],
                  dist2(gamma, first, m));
            CHECK(!res.warm_start_rejected, "%s: the solution as the start was rejected", names[k]);

            /* c γ* has the objective a (c²/2 − c), a = γ*ᵀNγ* = −rᵀγ* > 0: above
             * f(0) = 0 for c > 2, and kept for c < 2 */
            for (int32_t i = 0; i < m; i++) gamma[i] = 10.0 * first[i];
            memset(&res, 0, sizeof res);
            st = dvi_solver_solve(solver, p, gamma, &res);
            CHECK(res.warm_start_rejected, "%s: 10 γ* as the start (objective above γ = 0) was kept", names[k]);
            CHECK(st == DVI_OK && memcmp(gamma, first, (size_t)m * sizeof(double)) == 0,
                  "%s: after rejecting the start the solve differs from the cold one", names[k]);
            for (int32_t i = 0; i < m; i++) gamma[i] = 1.5 * first[i];
            memset(&res, 0, sizeof res);
            st = dvi_solver_solve(solver, p, gamma, &res);
            CHECK(st == DVI_OK && !res.warm_start_rejected, "%s: 1.5 γ* as the start (objective below γ = 0) was "
                  "rejected", names[k]);
            CHECK(dist2(gamma, first, m) <= 1e-6 * norm2(first, m), "%s: from 1.5 γ* the solve ends %.3e away",
                  names[k], dist2(gamma, first, m));

            /* warm_start_scale multiplies the guess first: 2 γ* scaled by 0.5 is the
             * solution itself (at most 2 iterations), 2 γ* as it is is not */
            for (int32_t i = 0; i < m; i++) gamma[i] = 2.0 * first[i];
            memset(&res, 0, sizeof res);
            st = dvi_solver_solve(solver, p, gamma, &res);
            const int unscaled = res.iterations;
            s.warm_start_scale = 0.5;
            assert_int_equal(dvi_solver_set_settings(solver, &s), DVI_OK);
            for (int32_t i = 0; i < m; i++) gamma[i] = 2.0 * first[i];
            memset(&res, 0, sizeof res);
            st = dvi_solver_solve(solver, p, gamma, &res);
            print_message("  %s on %s: from 2 γ*: %d iterations, with warm_start_scale 0.5: %d\n", names[k],
                          q ? "random" : "stack", unscaled, res.iterations);
            CHECK(st == DVI_OK && res.iterations <= 2 && unscaled > res.iterations,
                  "%s: warm_start_scale 0.5 on 2 γ*: %d iterations (unscaled %d)", names[k], res.iterations, unscaled);
            CHECK(dist2(gamma, first, m) <= 1e-8 * norm2(first, m), "%s: scaled start ends %.3e away", names[k],
                  dist2(gamma, first, m));
            const double bad_scales[3] = {0.0, 1.5, NAN};
            for (int b = 0; b < 3; b++) {
                s.warm_start_scale = bad_scales[b];
                assert_int_equal(dvi_solver_set_settings(solver, &s), DVI_ERR_INVALID_ARG);
            }
            s.warm_start_scale = 1.0;

            /* warm_start = false ignores whatever is in gamma (even NaN) */
            s.warm_start = false;
            assert_int_equal(dvi_solver_set_settings(solver, &s), DVI_OK);
            for (int32_t i = 0; i < m; i++) gamma[i] = NAN;
            memset(&res, 0, sizeof res);
            st = dvi_solver_solve(solver, p, gamma, &res);
            CHECK(st == DVI_OK, "%s: cold solve over a NaN gamma failed (%d)", names[k], (int)st);
            CHECK(memcmp(gamma, first, (size_t)m * sizeof(double)) == 0,
                  "%s: cold solve over a NaN-filled gamma differs from the cold solve over zeros", names[k]);
            dvi_solver_destroy(solver);
        }
    dvi_gen_free(&stack);
    dvi_gen_free(&rnd);
}

/* ------------------------------------------------------------------------- */
/* 7. Determinism                                                              */
/* ------------------------------------------------------------------------- */

static void test_determinism(void** state)
{
    (void)state;
    dvi_gen_problem gran, stack;
    memset(&gran, 0, sizeof gran);
    assert_int_equal(dvi_gen_granular(3000, 0.4, 1e-3, 11, &gran), DVI_OK);
    make_stack(&stack);
    int32_t m = gran.p.rows;
    print_message("  granular: %d contacts, %d rows, %d bodies\n", gran.contacts, m, gran.p.body_count);
    size_t bytes = (size_t)m * sizeof(double);
    static const char* const names[] = {"apgd", "pgs", "jacobi"};
    for (int k = 0; k < 3; k++) {
        double* g1 = calloc((size_t)m, sizeof(double));
        double* g2 = calloc((size_t)m, sizeof(double));
        double* g3 = calloc((size_t)m, sizeof(double));
        double* g4 = calloc((size_t)m, sizeof(double));
        assert_non_null(g1);
        assert_non_null(g2);
        assert_non_null(g3);
        assert_non_null(g4);
        dvi_solver_settings s = settings(1e-12, 150);
        s.threads = 1;
        dvi_solve_result r1, r2, r3, r4;
        memset(&r1, 0, sizeof r1);
        memset(&r2, 0, sizeof r2);
        memset(&r3, 0, sizeof r3);
        memset(&r4, 0, sizeof r4);
        /* one instance, twice; with a different problem solved in between */
        dvi_solver* solver = NULL;
        assert_int_equal(dvi_solver_create(names[k], &s, &solver), DVI_OK);
        assert_true(dvi_solver_solve(solver, &gran.p, g1, &r1) >= 0);
        double sg[3 * STACK_N] = {0}, sg_fresh[3 * STACK_N] = {0};
        dvi_solve_result rs;
        memset(&rs, 0, sizeof rs);
        assert_true(dvi_solver_solve(solver, &stack.p, sg, &rs) >= 0);
        assert_true(dvi_solver_solve(solver, &gran.p, g2, &r2) >= 0);
        dvi_solver_destroy(solver);
        CHECK(memcmp(g1, g2, bytes) == 0, "%s: two solves of the same problem by one instance differ", names[k]);
        CHECK(r1.iterations == r2.iterations, "%s: iterations %d vs %d", names[k], r1.iterations, r2.iterations);
        /* the stack solved by a reused (larger) workspace = by a fresh one */
        run(&stack.p, names[k], &s, sg_fresh, &rs);
        CHECK(memcmp(sg, sg_fresh, sizeof sg) == 0, "%s: a reused instance solves the stack differently", names[k]);
        /* a fresh instance */
        assert_true(dvi_ccp_solve(&gran.p, names[k], &s, g3, &r3) >= 0);
        CHECK(memcmp(g1, g3, bytes) == 0, "%s: a fresh instance gives different bits", names[k]);
        /* two threads */
        s.threads = 2;
        assert_true(dvi_ccp_solve(&gran.p, names[k], &s, g4, &r4) >= 0);
        if (memcmp(g1, g4, bytes) != 0) {
            double d = 0.0;
            for (int32_t i = 0; i < m; i++) d = dmax(d, fabs(g1[i] - g4[i]));
            fail_msg("%s: threads = 2 gives different bits from threads = 1 (max difference %.3e)", names[k], d);
        }
        CHECK(r1.iterations == r4.iterations && r1.metrics.residual == r4.metrics.residual,
              "%s: threads 1 vs 2: %d/%d iterations, residual %.17g/%.17g", names[k], r1.iterations, r4.iterations,
              r1.metrics.residual, r4.metrics.residual);
        /* and the library default (threads = 0: OpenMP's count) */
        s.threads = 0;
        memset(g4, 0, bytes);
        assert_true(dvi_ccp_solve(&gran.p, names[k], &s, g4, &r4) >= 0);
        CHECK(memcmp(g1, g4, bytes) == 0, "%s: threads = 0 gives different bits from threads = 1", names[k]);
        print_message("  %s: deterministic over reuse, fresh instance, 1 vs 2 threads (%d it, res %.3e)\n", names[k],
                      r1.iterations, r1.metrics.residual);
        free(g1);
        free(g2);
        free(g3);
        free(g4);
    }
    dvi_gen_free(&gran);
    dvi_gen_free(&stack);
}

/* ------------------------------------------------------------------------- */
/* 8. History                                                                  */
/* ------------------------------------------------------------------------- */

#define CANARY (-12345.0)

static void test_history(void** state)
{
    (void)state;
    dvi_gen_problem stack;
    make_stack(&stack);
    static const char* const names[] = {"apgd", "pgs", "jacobi", "lemke"};
    for (int k = 0; k < 4; k++) {
        /* a buffer large enough for every iteration */
        enum { CAP = 20000 };
        double* hist = malloc((CAP + 8) * sizeof(double));
        assert_non_null(hist);
        for (int i = 0; i < CAP + 8; i++) hist[i] = CANARY;
        dvi_solver_settings s = settings(1e-8, CAP);
        double gamma[3 * STACK_N] = {0};
        /* the result is output only: garbage in it must not matter */
        dvi_solve_result res;
        memset(&res, 0xA5, sizeof res);
        dvi_status st = solve_recording(&stack.p, names[k], &s, gamma, &res, hist, CAP);
        CHECK(st >= 0, "%s: %d", names[k], (int)st);
        print_message("  %s: %d iterations, history_length %d\n", names[k], res.iterations, res.history_length);
        if (k < 3)
            CHECK(res.history_length == res.iterations, "%s: history_length %d != iterations %d", names[k],
                  res.history_length, res.iterations);
        else
            CHECK(res.history_length >= 0 && res.history_length <= res.iterations + 1, "lemke: history_length %d, %d pivots",
                  res.history_length, res.iterations);
        for (int i = 0; i < res.history_length; i++)
            CHECK(hist[i] >= 0.0 && isfinite(hist[i]), "%s: history[%d] = %g", names[k], i, hist[i]);
        for (int i = res.history_length; i < CAP + 8; i++)
            CHECK(hist[i] == CANARY, "%s: history[%d] written beyond history_length %d", names[k], i,
                  res.history_length);
        if (k < 3 && res.status == DVI_SOLVE_CONVERGED && res.history_length > 0)
            CHECK(hist[res.history_length - 1] <= s.tolerance,
                  "%s: converged but the last history entry is %.3e > tolerance", names[k],
                  hist[res.history_length - 1]);

        /* a small buffer: filled to capacity, nothing written past it */
        for (int i = 0; i < CAP + 8; i++) hist[i] = CANARY;
        memset(gamma, 0, sizeof gamma);
        st = solve_recording(&stack.p, names[k], &s, gamma, &res, hist, 5);
        CHECK(st >= 0, "%s: %d", names[k], (int)st);
        if (k < 3)
            CHECK(res.history_length == (res.iterations < 5 ? res.iterations : 5), "%s: history_length %d (capacity 5, %d iterations)",
                  names[k], res.history_length, res.iterations);
        CHECK(res.history_length <= 5, "%s: history_length %d > capacity 5", names[k], res.history_length);
        for (int i = 5; i < CAP + 8; i++) CHECK(hist[i] == CANARY, "%s: history[%d] written with capacity 5", names[k], i);

        /* no buffer: nothing recorded */
        memset(&res, 0xA5, sizeof res);
        memset(gamma, 0, sizeof gamma);
        st = dvi_ccp_solve(&stack.p, names[k], &s, gamma, &res);
        CHECK(st >= 0 && res.history_length == 0, "%s: history_length %d without a buffer", names[k],
              res.history_length);
        /* bad buffers are refused */
        dvi_solver* sv = NULL;
        CHECK(dvi_solver_create(names[k], &s, &sv) == DVI_OK, "%s: create", names[k]);
        CHECK(dvi_solver_record_history(sv, NULL, 4) == DVI_ERR_INVALID_ARG, "%s: NULL buffer of 4 accepted", names[k]);
        CHECK(dvi_solver_record_history(sv, hist, -1) == DVI_ERR_INVALID_ARG, "%s: capacity -1 accepted", names[k]);
        CHECK(dvi_solver_record_history(NULL, hist, 4) == DVI_ERR_INVALID_ARG, "%s: NULL solver accepted", names[k]);
        CHECK(dvi_solver_record_history(sv, NULL, 0) == DVI_OK, "%s: stopping refused", names[k]);
        dvi_solver_destroy(sv);
        free(hist);
    }
    dvi_gen_free(&stack);
}

/* ------------------------------------------------------------------------- */
/* 9. Convergence budgets                                                     */
/* ------------------------------------------------------------------------- */

/* An accelerated projected gradient needs O(√κ ln(1/tol)) iterations and
 * projected Gauss–Seidel O(κ ln(1/tol)) sweeps, κ = cond(N). Budgets at
 * twice those estimates catch a solver that still converges but has
 * lost its acceleration or step size: e.g. an APGD whose restart test uses
 * N·y instead of the full gradient N·y + r (one of ARCHITECTURE.md's two
 * pitfalls) needs 1349 iterations on the stack instead of 162, and 6859
 * instead of 417 on the first chain. */
static void test_convergence_budget(void** state)
{
    (void)state;
    dvi_gen_problem stack;
    make_stack(&stack);
    double kappa = condition_number(&stack.p);
    const double tol = 1e-10;
    double budget_apgd = 2.0 * sqrt(kappa) * log(1.0 / tol), budget_pgs = 2.0 * kappa * log(1.0 / tol);
    print_message("  stack: cond(N) = %.4g, budgets apgd %.0f, pgs %.0f\n", kappa, budget_apgd, budget_pgs);
    for (int k = 0; k < 2; k++) {
        const char* name = k == 0 ? "apgd" : "pgs";
        double budget = k == 0 ? budget_apgd : budget_pgs;
        dvi_solver_settings s = settings(tol, 100000);
        double gamma[3 * STACK_N] = {0};
        dvi_solve_result res;
        run(&stack.p, name, &s, gamma, &res);
        CHECK(res.status == DVI_SOLVE_CONVERGED && res.iterations <= budget,
              "%s on the stack: %d iterations (%s), budget %.0f", name, res.iterations,
              dvi_solve_status_string(res.status), budget);
    }
    dvi_gen_free(&stack);

    int tested = 0;
    for (uint64_t seed = 1; seed <= 30 && tested < 3; seed++) {
        chain c;
        chain_init(&c, 8, 4, seed);
        double kc = condition_number(&c.p);
        if (kc >= 1e3) {
            chain_free(&c);
            continue;
        }
        tested++;
        const double tc = 1e-13;
        double budget = 2.0 * sqrt(kc) * log(1.0 / tc);
        dvi_solver_settings s = settings(tc, 100000);
        double* gamma = calloc((size_t)c.rows, sizeof(double));
        assert_non_null(gamma);
        dvi_solve_result res;
        run(&c.p, "apgd", &s, gamma, &res);
        CHECK(res.status == DVI_SOLVE_CONVERGED && res.iterations <= budget,
              "apgd on chain seed %llu (cond %.3g): %d iterations (%s), budget %.0f", (unsigned long long)seed, kc,
              res.iterations, dvi_solve_status_string(res.status), budget);
        free(gamma);
        chain_free(&c);
    }
}

/* The splitting for a nonsymmetric W (src/ccp/ccp_split.c) on two
 * frictionless rows worked out by hand, W given with its symmetric part
 * W_s = (W + Wᵀ)/2 in the problem. Case 1: W = [2 1; 0 2], r = (−1, −1):
 * both rows active, W γ = −r, γ = (0.25, 0.5) (the symmetric part alone
 * gives (0.4, 0.4)). Case 2: W = [2 0; 1 2], r = (−1, −0.4): row 1 only,
 * γ = (0.5, 0), u = (0, 0.1) (W_s alone makes both active: (0.48, 0.08)). */
static void test_split_nonsymmetric(void** state)
{
    (void)state;
    static const int32_t cp[3] = {0, 1, 3}, ri1[3] = {0, 0, 1}, cp2[3] = {0, 2, 3}, ri2[3] = {0, 1, 1};
    static const int32_t cps[3] = {0, 2, 4}, ris[4] = {0, 1, 0, 1};
    static const double w[3] = {2.0, 1.0, 2.0}, ws[4] = {2.0, 0.5, 0.5, 2.0}; /* the same numbers in both */
    static const double r1[2] = {-1.0, -1.0}, r2[2] = {-1.0, -0.4};
    static const double want1[2] = {0.25, 0.5}, want2[2] = {0.5, 0.0};
    const dvi_csc W[2] = {{2, 2, cp, ri1, w}, {2, 2, cp2, ri2, w}};
    const dvi_csc Ws = {2, 2, cps, ris, ws};
    const double* r[2] = {r1, r2};
    const double* want[2] = {want1, want2};
    static const char* const names[] = {"apgd", "pgs", "jacobi", "lemke"};
    const dvi_ccp_block blocks[2] = {{.kind = DVI_BLOCK_FRICTIONLESS}, {.kind = DVI_BLOCK_FRICTIONLESS}};
    dvi_ccp_problem p = {.rows = 2, .block_count = 2, .blocks = blocks, .W = &Ws}; /* W_s, and r of each case */
    for (int c = 0; c < 2; c++)
        for (int k = 0; k < 4; k++) {
            p.r = r[c];
            dvi_solver_settings s = dvi_default_solver_settings();
            s.tolerance = 1e-10;
            s.max_iterations = 10000;
            double gamma[2] = {7.0, 7.0};
            dvi_solve_result res;
            dvi_status st = ccp_solve_split(names[k], &s, &p, &W[c], gamma, &res);
            CHECK(st == DVI_OK && res.status == DVI_SOLVE_CONVERGED, "case %d, %s: %s (%s)", c + 1, names[k],
                  dvi_status_string(st), res.message);
            for (int i = 0; i < 2; i++)
                CHECK(fabs(gamma[i] - want[c][i]) <= 1e-8, "case %d, %s: gamma[%d] = %.15g, expected %g", c + 1,
                      names[k], i, gamma[i], want[c][i]);
            CHECK(res.metrics.residual <= 1e-8, "case %d, %s: residual against W %g", c + 1, names[k],
                  res.metrics.residual);
            CHECK(res.iterations > 0 && res.seconds >= 0.0, "case %d, %s: iterations %d", c + 1, names[k],
                  res.iterations);
        }
    /* refused: an unknown solver, a W of another size, a problem without W */
    double gamma[2] = {0.0, 0.0};
    dvi_solve_result res;
    assert_int_equal(ccp_solve_split("nosuch", NULL, &p, &W[0], gamma, &res), DVI_ERR_INVALID_ARG);
    assert_int_equal(res.status, DVI_SOLVE_BAD_INPUT);
    CHECK(strstr(res.message, "unknown solver") != NULL, "message: %s", res.message);
    const dvi_csc W3 = {3, 3, cp, ri1, w};
    assert_int_equal(ccp_solve_split("apgd", NULL, &p, &W3, gamma, &res), DVI_ERR_INVALID_ARG);
    assert_int_equal(res.status, DVI_SOLVE_BAD_INPUT);
    p.W = NULL;
    assert_int_equal(ccp_solve_split("apgd", NULL, &p, &W[0], gamma, NULL), DVI_ERR_INVALID_ARG);
}

/* Overflow: finite but extreme data (W ~ 1e300, r ~ 1e300) make the products
 * overflow. Every iterative solver must end with status diverged (or report a
 * finite answer honestly), never "converged" with non-finite numbers, and
 * must not crash. */
static void test_overflow_reported(void** state)
{
    (void)state;
    static const int32_t colptr[4] = {0, 2, 4, 5}, rowind[5] = {0, 1, 0, 1, 2};
    static const double values[5] = {1e300, 9e299, 9e299, 1e300, 1e300};
    static const double r[3] = {-1e300, 1e300, 1e300};
    dvi_csc W = {3, 3, colptr, rowind, values};
    dvi_ccp_block block = {DVI_BLOCK_FRICTION, 0.5, 0.0, 0.0};
    dvi_ccp_problem p = dvi_ccp_problem_empty();
    p.rows = 3;
    p.block_count = 1;
    p.blocks = &block;
    p.W = &W;
    p.r = r;
    static const char* const names[] = {"apgd", "pgs", "jacobi"};
    for (int k = 0; k < 3; k++) {
        dvi_solver_settings s = dvi_default_solver_settings();
        s.max_iterations = 200;
        double gamma[3];
        dvi_solve_result res;
        memset(&res, 0, sizeof res);
        dvi_status st = dvi_ccp_solve(&p, names[k], &s, gamma, &res);
        bool finite = isfinite(gamma[0]) && isfinite(gamma[1]) && isfinite(gamma[2]) && isfinite(res.metrics.residual);
        if (res.status == DVI_SOLVE_CONVERGED)
            CHECK(finite && res.metrics.residual <= s.tolerance, "%s: converged with residual %g", names[k],
                  res.metrics.residual);
        else
            CHECK(st == DVI_NOT_CONVERGED && (res.status == DVI_SOLVE_DIVERGED || finite), "%s: status %s, st %d",
                  names[k], dvi_solve_status_string(res.status), (int)st);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_single_contact_stick),
        cmocka_unit_test(test_low_rank_term),
        cmocka_unit_test(test_single_contact_slip),
        cmocka_unit_test(test_single_contact_mu_zero),
        cmocka_unit_test(test_fixed_body_rows),
        cmocka_unit_test(test_infeasible_problems),
        cmocka_unit_test(test_rolling_friction),
        cmocka_unit_test(test_bilateral_vs_cholmod),
        cmocka_unit_test(test_sphere_stack),
        cmocka_unit_test(test_box_stacks),
        cmocka_unit_test(test_random_apgd_vs_pgs),
        cmocka_unit_test(test_apgd_preconditioner),
        cmocka_unit_test(test_apgd_groups),
        cmocka_unit_test(test_validation_threads),
        cmocka_unit_test(test_validation_rigid),
        cmocka_unit_test(test_sym_eigen),
        cmocka_unit_test(test_apgd_best_iterate),
        cmocka_unit_test(test_solver_lend),
        cmocka_unit_test(test_registry_capabilities),
        cmocka_unit_test(test_apgd_rolling_groups),
        cmocka_unit_test(test_apgd_joint_block),
        cmocka_unit_test(test_apgd_redundant_joints),
        cmocka_unit_test(test_random_lemke_vs_cone),
        cmocka_unit_test(test_random_lemke_relaxed_vs_apgd),
        cmocka_unit_test(test_granular_lemke_vs_apgd),
        cmocka_unit_test(test_known_solution_all_stick),
        cmocka_unit_test(test_known_solution_stick_at_limit),
        cmocka_unit_test(test_w_form_matches_factor_form),
        cmocka_unit_test(test_residual_honesty),
        cmocka_unit_test(test_warm_start),
        cmocka_unit_test(test_determinism),
        cmocka_unit_test(test_history),
        cmocka_unit_test(test_convergence_budget),
        cmocka_unit_test(test_overflow_reported),
        cmocka_unit_test(test_split_nonsymmetric),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
