/* dvicontact — tests of the CCP problem layer through the public API:
 * validation of bad input (every entry point must refuse it with
 * DVI_ERR_INVALID_ARG, a message naming the place, and no crash), solver
 * settings checks, dvi_inv_mass_block, status strings, and dvi_ccp_evaluate
 * on tiny problems whose metrics are worked out by hand below.
 *
 * The fixture used for bad input is a valid 2-body, 5-row problem with one
 * block of each common kind:
 *     blocks[0] BILATERAL (row 0), blocks[1] FRICTIONLESS (row 1),
 *     blocks[2] FRICTION μ = 0.4 (rows 2, 3, 4),
 * in factor form (D 12 × 5, M⁻¹ two 6×6 blocks) or, for the W cases, in
 * Delassus form with W = Dᵀ M⁻¹ D assembled densely here. Each bad case
 * corrupts one field of a fresh copy. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dvi/dvi.h"

#define CHECK(cond, ...)                                                                                               \
    do {                                                                                                               \
        if (!(cond)) fail_msg(__VA_ARGS__);                                                                            \
    } while (0)

/* |a − b| ≤ eps (cmocka 1.1 has no assert_double_equal) */
#define ASSERT_NEAR(a, b, eps)                                                                                         \
    do {                                                                                                               \
        double a_ = (a), b_ = (b);                                                                                     \
        CHECK(fabs(a_ - b_) <= (eps), "%s = %.17g, expected %.17g (tolerance %g)", #a, a_, b_, (double)(eps));       \
    } while (0)

static const char* const solver_names[] = {"apgd", "pgs", "jacobi", "lemke", "nsgs", "newton", "desaxce"};
#define NSOLVERS 7

/* ------------------------------------------------------------------------- */
/* The fixture                                                                */
/* ------------------------------------------------------------------------- */

#define FX_ROWS 5
#define FX_BODIES 2
#define FX_NNZ 12

typedef struct fixture {
    int32_t colptr[FX_ROWS + 1];
    int32_t rowind[FX_NNZ];
    double values[FX_NNZ];
    double inv_mass[36 * FX_BODIES];
    double r[FX_ROWS];
    double compliance[FX_ROWS];
    dvi_ccp_block blocks[3];
    dvi_csc D;
    /* Delassus form: full dense W stored as CSC (all 25 entries) */
    int32_t w_colptr[FX_ROWS + 1];
    int32_t w_rowind[FX_ROWS * FX_ROWS];
    double w_values[FX_ROWS * FX_ROWS];
    dvi_csc W;
    dvi_ccp_problem p;
} fixture;

/* Dense N = Dᵀ M⁻¹ D (column-major m × m) of a factor-form problem,
 * computed here independently of the library. */
static void dense_n(const dvi_ccp_problem* p, double* N)
{
    int32_t m = p->rows, ndof = 6 * p->body_count;
    double* dj = calloc((size_t)ndof, sizeof(double));
    double* v = calloc((size_t)ndof, sizeof(double));
    assert_non_null(dj);
    assert_non_null(v);
    for (int32_t j = 0; j < m; j++) {
        memset(dj, 0, (size_t)ndof * sizeof(double));
        for (int32_t e = p->D->colptr[j]; e < p->D->colptr[j + 1]; e++) dj[p->D->rowind[e]] = p->D->values[e];
        for (int32_t b = 0; b < p->body_count; b++)
            for (int i = 0; i < 6; i++) {
                double s = 0.0;
                for (int k = 0; k < 6; k++) s += p->inv_mass[36 * b + 6 * i + k] * dj[6 * b + k];
                v[6 * b + i] = s;
            }
        for (int32_t k = 0; k < m; k++) {
            double s = 0.0;
            for (int32_t e = p->D->colptr[k]; e < p->D->colptr[k + 1]; e++) s += p->D->values[e] * v[p->D->rowind[e]];
            N[(size_t)j * m + k] = s;
        }
    }
    free(dj);
    free(v);
}

static void fx_init(fixture* f)
{
    memset(f, 0, sizeof *f);
    /* columns: 0 bilateral   body0 vx − body1 vx
     *          1 frictionless body1 vz + 0.2 body1 ωx
     *          2 normal       body0 vz − body1 vz
     *          3 t1           body0 vx + 0.1 body0 ωy − body1 vx
     *          4 t2           body0 vy − 0.1 body0 ωx − body1 vy */
    static const int32_t cp[FX_ROWS + 1] = {0, 2, 4, 6, 9, 12};
    static const int32_t ri[FX_NNZ] = {0, 6, 8, 9, 2, 8, 0, 4, 6, 1, 3, 7};
    static const double va[FX_NNZ] = {1, -1, 1, 0.2, 1, -1, 1, 0.1, -1, 1, -0.1, -1};
    memcpy(f->colptr, cp, sizeof cp);
    memcpy(f->rowind, ri, sizeof ri);
    memcpy(f->values, va, sizeof va);
    /* body 0: diag(1,1,1,2,2,2) with a symmetric angular coupling 0.1 (3,4);
     * body 1: diag(0.5,0.5,0.5,1,1,1) */
    for (int i = 0; i < 6; i++) {
        f->inv_mass[7 * i] = i < 3 ? 1.0 : 2.0;
        f->inv_mass[36 + 7 * i] = i < 3 ? 0.5 : 1.0;
    }
    f->inv_mass[6 * 3 + 4] = f->inv_mass[6 * 4 + 3] = 0.1;
    static const double rr[FX_ROWS] = {-0.1, -0.2, -1.0, 0.3, 0.1};
    memcpy(f->r, rr, sizeof rr);
    f->blocks[0].kind = DVI_BLOCK_BILATERAL;
    f->blocks[1].kind = DVI_BLOCK_FRICTIONLESS;
    f->blocks[2].kind = DVI_BLOCK_FRICTION;
    f->blocks[2].mu = 0.4;
    f->D.rows = 6 * FX_BODIES;
    f->D.cols = FX_ROWS;
    f->D.colptr = f->colptr;
    f->D.rowind = f->rowind;
    f->D.values = f->values;

    f->p = dvi_ccp_problem_empty();
    f->p.rows = FX_ROWS;
    f->p.block_count = 3;
    f->p.blocks = f->blocks;
    f->p.body_count = FX_BODIES;
    f->p.D = &f->D;
    f->p.inv_mass = f->inv_mass;
    f->p.r = f->r;

    /* the Delassus matrix of the same problem, all entries stored */
    double N[FX_ROWS * FX_ROWS];
    dense_n(&f->p, N);
    for (int j = 0; j <= FX_ROWS; j++) f->w_colptr[j] = FX_ROWS * j;
    for (int j = 0; j < FX_ROWS; j++)
        for (int i = 0; i < FX_ROWS; i++) {
            f->w_rowind[FX_ROWS * j + i] = i;
            f->w_values[FX_ROWS * j + i] = N[FX_ROWS * j + i];
        }
    f->W.rows = f->W.cols = FX_ROWS;
    f->W.colptr = f->w_colptr;
    f->W.rowind = f->w_rowind;
    f->W.values = f->w_values;
}

/* Switches a fixture to the Delassus form. */
static void fx_use_w(fixture* f)
{
    f->p.D = NULL;
    f->p.inv_mass = NULL;
    f->p.body_count = 0;
    f->p.W = &f->W;
}

static bool contains(const char* s, const char* needle) { return needle == NULL || strstr(s, needle) != NULL; }

/* Every entry point must refuse p with DVI_ERR_INVALID_ARG and say why
 * (message non-empty and containing `needle`, the place, when given).
 * After a refused solve the solver instance must still solve a good problem. */
static void expect_bad(const char* what, const dvi_ccp_problem* p, const char* needle)
{
    fixture good;
    fx_init(&good);
    char msg[256];
    memset(msg, 0, sizeof msg);

    /* validate, with a message buffer */
    dvi_status st = dvi_ccp_validate(p, msg, sizeof msg);
    CHECK(st == DVI_ERR_INVALID_ARG, "%s: dvi_ccp_validate returned %d (%s), expected DVI_ERR_INVALID_ARG", what,
          (int)st, dvi_status_string(st));
    CHECK(msg[0] != '\0', "%s: dvi_ccp_validate gave an empty message", what);
    CHECK(contains(msg, needle), "%s: message \"%s\" does not name the place \"%s\"", what, msg, needle);
    print_message("  %-34s -> \"%s\"\n", what, msg);

    /* without a message buffer, and with a tiny one (must stay terminated) */
    st = dvi_ccp_validate(p, NULL, 0);
    CHECK(st == DVI_ERR_INVALID_ARG, "%s: dvi_ccp_validate(msg=NULL) returned %d", what, (int)st);
    char small[16];
    memset(small, 'x', sizeof small);
    st = dvi_ccp_validate(p, small, 8);
    CHECK(st == DVI_ERR_INVALID_ARG, "%s: dvi_ccp_validate(msg_size=8) returned %d", what, (int)st);
    CHECK(memchr(small, '\0', 8) != NULL, "%s: 8-byte message buffer not NUL-terminated", what);
    for (int i = 8; i < 16; i++) CHECK(small[i] == 'x', "%s: wrote past an 8-byte message buffer", what);

    /* evaluate */
    double gamma[64];
    for (int i = 0; i < 64; i++) gamma[i] = 0.25;
    dvi_ccp_metrics m;
    st = dvi_ccp_evaluate(p, gamma, &m);
    CHECK(st == DVI_ERR_INVALID_ARG, "%s: dvi_ccp_evaluate returned %d", what, (int)st);

    /* every solver, through an instance that then solves a good problem */
    for (int s = 0; s < NSOLVERS; s++) {
        dvi_solver* solver = NULL;
        st = dvi_solver_create(solver_names[s], NULL, &solver);
        CHECK(st == DVI_OK && solver != NULL, "create %s failed", solver_names[s]);
        dvi_solve_result res;
        memset(&res, 0, sizeof res);
        res.status = DVI_SOLVE_CONVERGED;
        st = dvi_solver_solve(solver, p, gamma, &res);
        CHECK(st == DVI_ERR_INVALID_ARG, "%s: %s solve returned %d (%s), expected DVI_ERR_INVALID_ARG", what,
              solver_names[s], (int)st, dvi_status_string(st));
        CHECK(res.status == DVI_SOLVE_BAD_INPUT, "%s: %s result.status = %d (%s), expected bad_input", what,
              solver_names[s], (int)res.status, dvi_solve_status_string(res.status));
        CHECK(res.message[0] != '\0', "%s: %s result.message is empty", what, solver_names[s]);
        CHECK(memchr(res.message, '\0', sizeof res.message) != NULL, "%s: result.message not terminated", what);
        CHECK(contains(res.message, needle), "%s: %s result.message \"%s\" does not name \"%s\"", what,
              solver_names[s], res.message, needle);
        /* result == NULL is allowed */
        st = dvi_solver_solve(solver, p, gamma, NULL);
        CHECK(st == DVI_ERR_INVALID_ARG, "%s: %s solve(result=NULL) returned %d", what, solver_names[s], (int)st);

        double g2[FX_ROWS] = {0};
        memset(&res, 0, sizeof res);
        st = dvi_solver_solve(solver, &good.p, g2, &res);
        CHECK(st >= 0, "%s: %s could not solve the good fixture after refusing bad input (%d: %s)", what,
              solver_names[s], (int)st, res.message);
        CHECK(res.status != DVI_SOLVE_BAD_INPUT, "%s: %s good fixture reported bad_input", what, solver_names[s]);
        dvi_solver_destroy(solver);
    }

    /* one-shot */
    dvi_solve_result res;
    memset(&res, 0, sizeof res);
    st = dvi_ccp_solve(p, "pgs", NULL, gamma, &res);
    CHECK(st == DVI_ERR_INVALID_ARG, "%s: dvi_ccp_solve returned %d", what, (int)st);
    CHECK(res.status == DVI_SOLVE_BAD_INPUT, "%s: dvi_ccp_solve status %d", what, (int)res.status);
    CHECK(res.message[0] != '\0', "%s: dvi_ccp_solve message empty", what);
    st = dvi_ccp_solve(p, "apgd", NULL, gamma, NULL);
    CHECK(st == DVI_ERR_INVALID_ARG, "%s: dvi_ccp_solve(result=NULL) returned %d", what, (int)st);
}

/* ------------------------------------------------------------------------- */
/* Registry, strings, defaults                                                */
/* ------------------------------------------------------------------------- */

static void test_block_rows_and_registry(void** state)
{
    (void)state;
    assert_int_equal(dvi_block_rows(DVI_BLOCK_BILATERAL), 1);
    assert_int_equal(dvi_block_rows(DVI_BLOCK_FRICTIONLESS), 1);
    assert_int_equal(dvi_block_rows(DVI_BLOCK_FRICTION), 3);
    assert_int_equal(dvi_block_rows(DVI_BLOCK_FRICTION_ROLLING), 6);
    assert_int_equal(dvi_block_rows((dvi_block_kind)0), 0);
    assert_int_equal(dvi_block_rows((dvi_block_kind)99), 0);
    assert_int_equal(dvi_block_rows((dvi_block_kind)-1), 0);

    /* the built-in solvers, each creatable by its name */
    assert_int_equal(dvi_solver_count(), NSOLVERS);
    for (int s = 0; s < NSOLVERS; s++) {
        bool found = false;
        for (int32_t i = 0; i < dvi_solver_count(); i++) {
            const char* n = dvi_solver_name(i);
            assert_non_null(n);
            assert_non_null(dvi_solver_summary(i));
            assert_true(strlen(dvi_solver_summary(i)) > 0);
            if (strcmp(n, solver_names[s]) == 0) found = true;
        }
        CHECK(found, "solver \"%s\" not in the registry", solver_names[s]);
        dvi_solver* solver = NULL;
        assert_int_equal(dvi_solver_create(solver_names[s], NULL, &solver), DVI_OK);
        assert_non_null(solver);
        assert_string_equal(dvi_solver_get_name(solver), solver_names[s]);
        dvi_solver_destroy(solver);
    }
    /* out of range indices must not crash (NULL or a string) */
    (void)dvi_solver_name(-1);
    (void)dvi_solver_name(dvi_solver_count());
    (void)dvi_solver_summary(-1);
    (void)dvi_solver_summary(dvi_solver_count());
    dvi_solver_destroy(NULL);
}

static void test_status_strings(void** state)
{
    (void)state;
    static const int codes[] = {DVI_OK,
                                DVI_NOT_CONVERGED,
                                DVI_ABORTED,
                                DVI_ERR_NOMEM,
                                DVI_ERR_INVALID_ARG,
                                DVI_ERR_SINGULAR,
                                DVI_ERR_NUMERIC,
                                DVI_ERR_UNSUPPORTED,
                                DVI_ERR_PARSE,
                                DVI_ERR_IO};
    const int n = (int)(sizeof codes / sizeof codes[0]);
    for (int i = 0; i < n; i++) {
        const char* s = dvi_status_string((dvi_status)codes[i]);
        CHECK(s != NULL && s[0] != '\0', "dvi_status_string(%d) is NULL or empty", codes[i]);
        for (int j = 0; j < i; j++)
            CHECK(strcmp(s, dvi_status_string((dvi_status)codes[j])) != 0, "dvi_status_string(%d) == (%d): \"%s\"",
                  codes[i], codes[j], s);
    }
    /* values outside the enum still give a string */
    assert_non_null(dvi_status_string((dvi_status)42));
    assert_non_null(dvi_status_string((dvi_status)-42));

    for (int i = DVI_SOLVE_CONVERGED; i <= DVI_SOLVE_INFEASIBLE; i++) {
        const char* s = dvi_solve_status_string((dvi_solve_status)i);
        CHECK(s != NULL && s[0] != '\0', "dvi_solve_status_string(%d) is NULL or empty", i);
        for (int j = DVI_SOLVE_CONVERGED; j < i; j++)
            CHECK(strcmp(s, dvi_solve_status_string((dvi_solve_status)j)) != 0, "solve status %d and %d share \"%s\"",
                  i, j, s);
    }
    assert_string_equal(dvi_solve_status_string(DVI_SOLVE_CONVERGED), "converged");
    assert_string_equal(dvi_solve_status_string(DVI_SOLVE_MAX_ITERATIONS), "max_iterations");
    assert_non_null(dvi_solve_status_string((dvi_solve_status)42));
    assert_non_null(dvi_solve_status_string((dvi_solve_status)-1));

    assert_non_null(dvi_version_string());
    assert_string_equal(dvi_version_string(), DVI_VERSION_STRING);
}

static void test_problem_empty_and_defaults(void** state)
{
    (void)state;
    dvi_ccp_problem p = dvi_ccp_problem_empty();
    assert_int_equal(p.rows, 0);
    assert_int_equal(p.block_count, 0);
    assert_int_equal(p.body_count, 0);
    assert_null(p.blocks);
    assert_null(p.D);
    assert_null(p.inv_mass);
    assert_null(p.W);
    assert_null(p.r);
    assert_null(p.compliance);

    /* the documented defaults */
    dvi_solver_settings s = dvi_default_solver_settings();
    assert_int_equal(s.max_iterations, 1000);
    assert_true(s.tolerance == 1e-8);
    assert_false(s.warm_start);
    assert_int_equal(s.threads, 1);
    assert_true(s.apgd.restart);
    assert_true(s.apgd.grow == 2.0);
    assert_true(s.apgd.shrink == 0.9);
    assert_true(s.pgs.omega == 1.0);
    assert_false(s.pgs.symmetric);
    assert_true(s.jacobi.omega == 1.5);
    assert_int_equal(s.lemke.friction_directions, 4);
    assert_int_equal(s.lemke.max_pivots, 0);
    assert_int_equal(s.lemke.max_lcp_size, 4000);
    assert_true(s.internal_cookie != 0);
}

/* ------------------------------------------------------------------------- */
/* Valid input is accepted                                                     */
/* ------------------------------------------------------------------------- */

static void test_valid_fixture_accepted(void** state)
{
    (void)state;
    fixture f;
    fx_init(&f);
    char msg[256] = "";
    dvi_status st = dvi_ccp_validate(&f.p, msg, sizeof msg);
    CHECK(st == DVI_OK, "factor-form fixture rejected: %s", msg);
    assert_int_equal(dvi_ccp_validate(&f.p, NULL, 0), DVI_OK);

    fixture fw;
    fx_init(&fw);
    fx_use_w(&fw);
    st = dvi_ccp_validate(&fw.p, msg, sizeof msg);
    CHECK(st == DVI_OK, "Delassus-form fixture rejected: %s", msg);

    /* compliance ≥ 0 is fine, so is a fixed (zero) M⁻¹ block */
    for (int i = 0; i < FX_ROWS; i++) f.compliance[i] = 0.01 * i;
    f.p.compliance = f.compliance;
    st = dvi_ccp_validate(&f.p, msg, sizeof msg);
    CHECK(st == DVI_OK, "non-negative compliance rejected: %s", msg);
    memset(f.inv_mass + 36, 0, 36 * sizeof(double));
    st = dvi_ccp_validate(&f.p, msg, sizeof msg);
    CHECK(st == DVI_OK, "zero M^-1 block (fixed body) rejected: %s", msg);

    /* every solver accepts both forms and reports a usable result */
    fx_init(&f);
    for (int form = 0; form < 2; form++) {
        fixture* g = form == 0 ? &f : &fw;
        for (int s = 0; s < NSOLVERS; s++) {
            double gamma[FX_ROWS] = {0};
            dvi_solve_result res;
            memset(&res, 0, sizeof res);
            st = dvi_ccp_solve(&g->p, solver_names[s], NULL, gamma, &res);
            CHECK(st >= 0, "%s on the %s fixture: %d (%s)", solver_names[s], form ? "W" : "D", (int)st, res.message);
            CHECK(res.status != DVI_SOLVE_BAD_INPUT, "%s: bad_input on a valid problem", solver_names[s]);
            if (st == DVI_OK) {
                CHECK(res.status == DVI_SOLVE_CONVERGED, "%s: DVI_OK but status %d", solver_names[s], (int)res.status);
                CHECK(res.message[0] == '\0', "%s: converged but message \"%s\"", solver_names[s], res.message);
            }
        }
    }
}

/* W with duplicate entries: duplicates are summed, and a W that is
 * symmetric only after summing is valid and equivalent to the plain one. */
static void test_w_duplicates_summed(void** state)
{
    (void)state;
    /* W = [[2, 1], [1, 3]] given as: column 0: (0,0)=2, (1,0)=0.25, (1,0)=0.75;
     *                                column 1: (0,1)=1, (1,1)=1, (1,1)=2 */
    static const int32_t cp[3] = {0, 3, 6};
    static const int32_t ri[6] = {0, 1, 1, 0, 1, 1};
    static const double va[6] = {2, 0.25, 0.75, 1, 1, 2};
    dvi_csc W = {2, 2, cp, ri, va};
    dvi_ccp_block blocks[2] = {{DVI_BLOCK_BILATERAL, 0, 0, 0}, {DVI_BLOCK_BILATERAL, 0, 0, 0}};
    double r[2] = {-1, -2};
    dvi_ccp_problem p = dvi_ccp_problem_empty();
    p.rows = 2;
    p.block_count = 2;
    p.blocks = blocks;
    p.W = &W;
    p.r = r;
    char msg[256] = "";
    dvi_status st = dvi_ccp_validate(&p, msg, sizeof msg);
    CHECK(st == DVI_OK, "W symmetric after summing duplicates rejected: %s", msg);

    /* γ = (1, 1): u = Wγ + r = (3 − 1, 4 − 2) = (2, 2); objective
     * ½γᵀWγ + rᵀγ = ½(2+1+1+3) − 3 = 0.5 */
    double gamma[2] = {1, 1};
    dvi_ccp_metrics m;
    assert_int_equal(dvi_ccp_evaluate(&p, gamma, &m), DVI_OK);
    ASSERT_NEAR(m.objective, 0.5, 1e-15);
    /* bilateral: residual terms are |u_i|: e = √8; scale max(√5, √2, √8) */
    ASSERT_NEAR(m.residual, 1.0, 1e-15);
    ASSERT_NEAR(m.complementarity, 2.0, 1e-15);

    /* the exact solution γ = −W⁻¹ r = (1/5)(3·1 − 1·2, −1·1 + 2·2) = (0.2, 0.6) */
    double sol[2] = {0, 0};
    dvi_solver_settings s = dvi_default_solver_settings();
    s.tolerance = 1e-12;
    s.max_iterations = 10000;
    dvi_solve_result res;
    memset(&res, 0, sizeof res);
    st = dvi_ccp_solve(&p, "pgs", &s, sol, &res);
    CHECK(st == DVI_OK, "pgs on the 2x2 W: %d %s", (int)st, res.message);
    ASSERT_NEAR(sol[0], 0.2, 1e-10);
    ASSERT_NEAR(sol[1], 0.6, 1e-10);
}

/* ------------------------------------------------------------------------- */
/* Bad problems                                                               */
/* ------------------------------------------------------------------------- */

static void test_nonfinite_r(void** state)
{
    (void)state;
    fixture f;
    fx_init(&f);
    f.r[3] = NAN;
    expect_bad("NaN in r[3]", &f.p, "r[3]");
    fx_init(&f);
    f.r[0] = INFINITY;
    expect_bad("+Inf in r[0]", &f.p, "r[0]");
    fx_init(&f);
    fx_use_w(&f);
    f.r[4] = -INFINITY;
    expect_bad("-Inf in r[4] (W form)", &f.p, "r[4]");
}

static void test_nonfinite_matrices(void** state)
{
    (void)state;
    fixture f;
    fx_init(&f);
    f.values[7] = INFINITY; /* column 3 */
    expect_bad("Inf in D values", &f.p, "D");
    fx_init(&f);
    f.values[0] = NAN;
    expect_bad("NaN in D values", &f.p, "D");
    fx_init(&f);
    f.inv_mass[36 + 7] = NAN;
    expect_bad("NaN in inv_mass", &f.p, "inv_mass");
    fx_init(&f);
    fx_use_w(&f);
    f.w_values[6] = INFINITY;
    expect_bad("Inf in W values", &f.p, "W");
}

static void test_bad_mu(void** state)
{
    (void)state;
    fixture f;
    fx_init(&f);
    f.blocks[2].mu = -0.2;
    expect_bad("negative mu", &f.p, "blocks[2].mu");
    fx_init(&f);
    f.blocks[2].mu = NAN;
    expect_bad("NaN mu", &f.p, "blocks[2].mu");
    fx_init(&f);
    f.blocks[2].mu = INFINITY;
    expect_bad("Inf mu", &f.p, "blocks[2].mu");

    /* rolling block: negative spin / roll coefficients. Problem: one body,
     * one 6-row FRICTION_ROLLING block, D = I6. */
    static const int32_t cp[7] = {0, 1, 2, 3, 4, 5, 6};
    static const int32_t ri[6] = {2, 0, 1, 5, 3, 4};
    static const double va[6] = {1, 1, 1, 1, 1, 1};
    dvi_csc D = {6, 6, cp, ri, va};
    double minv[36] = {0};
    for (int i = 0; i < 6; i++) minv[7 * i] = 1.0;
    double r[6] = {-1, 0.1, 0, 0, 0, 0};
    dvi_ccp_block blk = {DVI_BLOCK_FRICTION_ROLLING, 0.5, 0.01, 0.02};
    dvi_ccp_problem p = dvi_ccp_problem_empty();
    p.rows = 6;
    p.block_count = 1;
    p.blocks = &blk;
    p.body_count = 1;
    p.D = &D;
    p.inv_mass = minv;
    p.r = r;
    char msg[256];
    CHECK(dvi_ccp_validate(&p, msg, sizeof msg) == DVI_OK, "rolling problem rejected: %s", msg);
    blk.mu_spin = -0.01;
    expect_bad("negative mu_spin", &p, "blocks[0].mu_spin");
    blk.mu_spin = 0.01;
    blk.mu_roll = -1;
    expect_bad("negative mu_roll", &p, "blocks[0].mu_roll");
}

static void test_wrong_dimensions(void** state)
{
    (void)state;
    fixture f;
    fx_init(&f);
    f.D.rows = 6 * FX_BODIES + 1;
    expect_bad("D rows != 6 body_count", &f.p, "D");
    fx_init(&f);
    f.p.body_count = 3; /* D has 12 rows, 3 bodies need 18 (inv_mass is long enough for 2 only: never read) */
    expect_bad("body_count disagrees with D", &f.p, NULL);
    fx_init(&f);
    f.D.cols = FX_ROWS - 1;
    expect_bad("D cols != rows", &f.p, "D");
    fx_init(&f);
    f.p.body_count = -1;
    expect_bad("negative body_count", &f.p, NULL);

    fx_init(&f);
    fx_use_w(&f);
    f.W.cols = FX_ROWS - 1;
    expect_bad("W not square", &f.p, "W");
    fx_init(&f);
    fx_use_w(&f);
    f.W.rows = FX_ROWS - 1;
    f.W.cols = FX_ROWS - 1;
    expect_bad("W size != rows", &f.p, "W");

    /* block rows not summing to rows: drop the last block (2 rows ≠ 5) */
    fx_init(&f);
    f.p.block_count = 2;
    expect_bad("block rows sum 2 != rows 5", &f.p, NULL);
    /* or change a 1-row kind into a 3-row one (7 ≠ 5) */
    fx_init(&f);
    f.blocks[1].kind = DVI_BLOCK_FRICTION;
    f.blocks[1].mu = 0.1;
    expect_bad("block rows sum 7 != rows 5", &f.p, NULL);
    /* and rows smaller than the blocks need, with D consistent with rows */
    fx_init(&f);
    f.p.rows = 4;
    f.D.cols = 4;
    expect_bad("block rows sum 5 != rows 4", &f.p, NULL);
    fx_init(&f);
    f.p.block_count = -1;
    expect_bad("negative block_count", &f.p, NULL);
}

static void test_empty_and_null(void** state)
{
    (void)state;
    fixture f;
    fx_init(&f);
    f.p.rows = 0;
    f.D.cols = 0;
    f.p.block_count = 0;
    expect_bad("rows = 0", &f.p, NULL);
    fx_init(&f);
    f.p.rows = -5;
    expect_bad("rows < 0", &f.p, NULL);

    dvi_ccp_problem e = dvi_ccp_problem_empty();
    expect_bad("dvi_ccp_problem_empty()", &e, NULL);
    expect_bad("NULL problem", NULL, NULL);

    fx_init(&f);
    f.p.blocks = NULL;
    expect_bad("blocks NULL", &f.p, "blocks");
    fx_init(&f);
    f.p.r = NULL;
    expect_bad("r NULL", &f.p, "r");
    fx_init(&f);
    f.p.inv_mass = NULL;
    expect_bad("inv_mass NULL", &f.p, "inv_mass");
    fx_init(&f);
    f.D.colptr = NULL;
    expect_bad("D colptr NULL", &f.p, "colptr");
    fx_init(&f);
    f.D.rowind = NULL;
    expect_bad("D rowind NULL", &f.p, "D");
    fx_init(&f);
    f.D.values = NULL;
    expect_bad("D values NULL", &f.p, "D");
    fx_init(&f);
    fx_use_w(&f);
    f.W.values = NULL;
    expect_bad("W values NULL", &f.p, "W");

    /* NULL gamma / metrics / names / output pointers */
    fx_init(&f);
    dvi_ccp_metrics m;
    double gamma[FX_ROWS] = {0};
    assert_int_equal(dvi_ccp_evaluate(&f.p, NULL, &m), DVI_ERR_INVALID_ARG);
    assert_int_equal(dvi_ccp_evaluate(&f.p, gamma, NULL), DVI_ERR_INVALID_ARG);
    double dv[12];
    assert_int_equal(dvi_ccp_velocity(&f.p, NULL, dv), DVI_ERR_INVALID_ARG);
    assert_int_equal(dvi_ccp_velocity(&f.p, gamma, NULL), DVI_ERR_INVALID_ARG);
    for (int s = 0; s < NSOLVERS; s++) {
        dvi_solver* solver = NULL;
        assert_int_equal(dvi_solver_create(solver_names[s], NULL, &solver), DVI_OK);
        dvi_solve_result res;
        memset(&res, 0, sizeof res);
        dvi_status st = dvi_solver_solve(solver, &f.p, NULL, &res);
        CHECK(st == DVI_ERR_INVALID_ARG, "%s: solve with gamma NULL returned %d", solver_names[s], (int)st);
        CHECK(res.status == DVI_SOLVE_BAD_INPUT, "%s: gamma NULL status %d", solver_names[s], (int)res.status);
        CHECK(res.message[0] != '\0', "%s: gamma NULL: empty message", solver_names[s]);
        dvi_solver_destroy(solver);
    }
    dvi_solve_result res;
    memset(&res, 0, sizeof res);
    assert_int_equal(dvi_ccp_solve(&f.p, NULL, NULL, gamma, &res), DVI_ERR_INVALID_ARG);
    assert_int_equal(res.status, DVI_SOLVE_BAD_INPUT);
    assert_true(res.message[0] != '\0');
    dvi_solver* out = NULL;
    assert_int_equal(dvi_solver_create(NULL, NULL, &out), DVI_ERR_INVALID_ARG);
    assert_null(out);
    assert_int_equal(dvi_solver_create("apgd", NULL, NULL), DVI_ERR_INVALID_ARG);
}

static void test_operator_forms(void** state)
{
    (void)state;
    fixture f;
    fx_init(&f);
    f.p.W = &f.W;
    expect_bad("both D and W", &f.p, NULL);
    fx_init(&f);
    f.p.D = NULL;
    f.p.inv_mass = NULL;
    expect_bad("neither D nor W", &f.p, NULL);
    fx_init(&f);
    f.p.D = NULL; /* inv_mass alone is not a factor form */
    expect_bad("inv_mass without D", &f.p, NULL);

    /* the Delassus form has no bodies: dvi_ccp_velocity cannot work */
    fx_init(&f);
    fx_use_w(&f);
    double gamma[FX_ROWS] = {1, 1, 1, 0, 0}, dv[12];
    CHECK(dvi_ccp_velocity(&f.p, gamma, dv) < 0, "dvi_ccp_velocity accepted a W-form problem");
}

static void test_bad_sparse_structure(void** state)
{
    (void)state;
    fixture f;
    fx_init(&f);
    f.rowind[5] = 12; /* column 2, 12 = 6·body_count: out of range */
    expect_bad("D row index = 6*body_count", &f.p, "D");
    fx_init(&f);
    f.rowind[0] = -1;
    expect_bad("D row index -1", &f.p, "D");
    fx_init(&f);
    f.rowind[6] = 4; /* column 3 is {0,4,6}: make it {4,4,6} (duplicate) */
    expect_bad("D duplicate row in a column", &f.p, "D");
    fx_init(&f);
    f.rowind[7] = 0; /* column 3: {0,0,6} */
    f.rowind[6] = 4; /* column 3: {4,0,6} unsorted */
    expect_bad("D unsorted rows in a column", &f.p, "D");
    fx_init(&f);
    f.colptr[2] = 1; /* {0,2,1,6,...}: decreasing */
    expect_bad("D colptr decreasing", &f.p, "colptr");
    fx_init(&f);
    f.colptr[0] = 1;
    expect_bad("D colptr[0] != 0", &f.p, "colptr");

    fx_init(&f);
    fx_use_w(&f);
    f.w_rowind[7] = FX_ROWS;
    expect_bad("W row index out of range", &f.p, "W");
    fx_init(&f);
    fx_use_w(&f);
    f.w_colptr[3] = 2;
    expect_bad("W colptr decreasing", &f.p, "W");
}

static void test_unknown_block_kind(void** state)
{
    (void)state;
    fixture f;
    fx_init(&f);
    f.blocks[1].kind = (dvi_block_kind)99;
    expect_bad("block kind 99", &f.p, "blocks[1]");
    fx_init(&f);
    f.blocks[0].kind = (dvi_block_kind)0;
    expect_bad("block kind 0", &f.p, "blocks[0]");
}

static void test_bad_compliance(void** state)
{
    (void)state;
    fixture f;
    fx_init(&f);
    f.p.compliance = f.compliance;
    f.compliance[1] = -1e-3;
    expect_bad("negative compliance", &f.p, "compliance[1]");
    fx_init(&f);
    f.p.compliance = f.compliance;
    f.compliance[4] = NAN;
    expect_bad("NaN compliance", &f.p, "compliance[4]");
}

static void test_nonsymmetric_operators(void** state)
{
    (void)state;
    fixture f;
    /* W(0,2) = 0.5 but W(2,0) unchanged */
    fx_init(&f);
    fx_use_w(&f);
    f.w_values[FX_ROWS * 2 + 0] += 0.5;
    expect_bad("non-symmetric W", &f.p, "W");
    /* a W stored as upper triangle only is not symmetric either */
    fx_init(&f);
    fx_use_w(&f);
    for (int j = 0; j < FX_ROWS; j++)
        for (int i = j + 1; i < FX_ROWS; i++) f.w_values[FX_ROWS * j + i] = 0.0;
    f.w_values[FX_ROWS * 1 + 0] = 1.0; /* make sure one off-diagonal pair is unmatched */
    f.w_values[FX_ROWS * 0 + 1] = 0.0;
    expect_bad("W upper triangle only", &f.p, "W");

    /* M⁻¹ block of body 1: (0,1) = 0.1, (1,0) = 0 */
    fx_init(&f);
    f.inv_mass[36 + 1] = 0.1;
    expect_bad("non-symmetric M^-1 block", &f.p, "inv_mass");
    /* and a symmetric but indefinite one (negative diagonal) */
    fx_init(&f);
    f.inv_mass[7 * 2] = -1.0;
    expect_bad("indefinite M^-1 block", &f.p, "inv_mass");
}

/* A warm start from a non-finite guess is bad input, for every solver;
 * without warm_start the same buffer is simply overwritten. */
static void test_warm_start_nonfinite_guess(void** state)
{
    (void)state;
    fixture f;
    fx_init(&f);
    for (int s = 0; s < NSOLVERS; s++) {
        dvi_solver_settings set = dvi_default_solver_settings();
        set.warm_start = true;
        double gamma[FX_ROWS] = {0.1, 0.1, 1.0, NAN, 0.0};
        dvi_solve_result res;
        memset(&res, 0, sizeof res);
        dvi_status st = dvi_ccp_solve(&f.p, solver_names[s], &set, gamma, &res);
        CHECK(st == DVI_ERR_INVALID_ARG, "%s: warm start from NaN returned %d", solver_names[s], (int)st);
        CHECK(res.status == DVI_SOLVE_BAD_INPUT, "%s: warm start from NaN: status %s", solver_names[s],
              dvi_solve_status_string(res.status));
        CHECK(strstr(res.message, "gamma[3]") != NULL, "%s: message \"%s\" does not name gamma[3]", solver_names[s],
              res.message);
        set.warm_start = false;
        memset(&res, 0, sizeof res);
        st = dvi_ccp_solve(&f.p, solver_names[s], &set, gamma, &res);
        CHECK(st >= 0, "%s: cold start over a NaN buffer returned %d (%s)", solver_names[s], (int)st, res.message);
        for (int i = 0; i < FX_ROWS; i++) CHECK(isfinite(gamma[i]), "%s: gamma[%d] = %g", solver_names[s], i, gamma[i]);
    }
}

/* ------------------------------------------------------------------------- */
/* Bad solver names and settings                                              */
/* ------------------------------------------------------------------------- */

static void test_unknown_solver(void** state)
{
    (void)state;
    fixture f;
    fx_init(&f);
    dvi_solver* s = NULL;
    assert_int_equal(dvi_solver_create("no-such-solver", NULL, &s), DVI_ERR_INVALID_ARG);
    assert_null(s);
    assert_int_equal(dvi_solver_create("", NULL, &s), DVI_ERR_INVALID_ARG);
    assert_null(s);
    double gamma[FX_ROWS] = {0};
    dvi_solve_result res;
    memset(&res, 0, sizeof res);
    dvi_status st = dvi_ccp_solve(&f.p, "no-such-solver", NULL, gamma, &res);
    assert_int_equal(st, DVI_ERR_INVALID_ARG);
    assert_int_equal(res.status, DVI_SOLVE_BAD_INPUT);
    CHECK(res.message[0] != '\0', "unknown solver: empty message");
    print_message("  unknown solver -> \"%s\"\n", res.message);
    assert_int_equal(dvi_ccp_solve(&f.p, "no-such-solver", NULL, gamma, NULL), DVI_ERR_INVALID_ARG);
}

typedef void (*settings_mutator)(dvi_solver_settings* s);
static void set_tol0(dvi_solver_settings* s) { s->tolerance = 0.0; }
static void set_tolneg(dvi_solver_settings* s) { s->tolerance = -1e-6; }
static void set_tolnan(dvi_solver_settings* s) { s->tolerance = NAN; }
static void set_maxit0(dvi_solver_settings* s) { s->max_iterations = 0; }
static void set_maxitneg(dvi_solver_settings* s) { s->max_iterations = -10; }
static void set_threadsneg(dvi_solver_settings* s) { s->threads = -1; }
static void set_omega2(dvi_solver_settings* s) { s->pgs.omega = 2.0; }
static void set_omega3(dvi_solver_settings* s) { s->pgs.omega = 3.0; }
static void set_omega0(dvi_solver_settings* s) { s->pgs.omega = 0.0; }
static void set_omeganan(dvi_solver_settings* s) { s->pgs.omega = NAN; }
static void set_jomega0(dvi_solver_settings* s) { s->jacobi.omega = 0.0; }
static void set_jomega2(dvi_solver_settings* s) { s->jacobi.omega = 2.0; }
static void set_k2(dvi_solver_settings* s) { s->lemke.friction_directions = 2; }
static void set_kneg(dvi_solver_settings* s) { s->lemke.friction_directions = -4; }
static void set_pivneg(dvi_solver_settings* s) { s->lemke.max_pivots = -1; }
static void set_cookie0(dvi_solver_settings* s) { s->internal_cookie = 0; }
static void set_cookie1(dvi_solver_settings* s) { s->internal_cookie ^= 1u; }
/* a struct filled by hand with sensible values but never passed through
 * dvi_default_solver_settings */
static void set_by_hand(dvi_solver_settings* s)
{
    memset(s, 0, sizeof *s);
    s->max_iterations = 100;
    s->tolerance = 1e-6;
    s->threads = 1;
    s->apgd.restart = true;
    s->apgd.grow = 2.0;
    s->apgd.shrink = 0.9;
    s->pgs.omega = 1.0;
    s->jacobi.omega = 1.5;
    s->lemke.friction_directions = 4;
    s->lemke.max_lcp_size = 4000;
}
static void set_grow1(dvi_solver_settings* s) { s->apgd.grow = 1.0; }
static void set_shrink0(dvi_solver_settings* s) { s->apgd.shrink = 0.0; }

typedef struct bad_settings_case {
    const char* what;
    settings_mutator mutate;
    const char* solvers[NSOLVERS + 1]; /* NULL-terminated */
} bad_settings_case;

static void check_bad_settings(const bad_settings_case* c)
{
    fixture f;
    fx_init(&f);
    for (int k = 0; c->solvers[k]; k++) {
        const char* name = c->solvers[k];
        dvi_solver_settings s = dvi_default_solver_settings();
        c->mutate(&s);

        dvi_solver* out = NULL;
        dvi_status st = dvi_solver_create(name, &s, &out);
        CHECK(st == DVI_ERR_INVALID_ARG, "%s (%s): dvi_solver_create returned %d", c->what, name, (int)st);
        CHECK(out == NULL, "%s (%s): dvi_solver_create failed but returned an instance", c->what, name);
        if (out) dvi_solver_destroy(out);
        out = NULL;

        /* set_settings on a working instance refuses and keeps the old settings */
        assert_int_equal(dvi_solver_create(name, NULL, &out), DVI_OK);
        st = dvi_solver_set_settings(out, &s);
        CHECK(st == DVI_ERR_INVALID_ARG, "%s (%s): dvi_solver_set_settings returned %d", c->what, name, (int)st);
        double gamma[FX_ROWS] = {0};
        dvi_solve_result res;
        memset(&res, 0, sizeof res);
        st = dvi_solver_solve(out, &f.p, gamma, &res);
        CHECK(st >= 0, "%s (%s): instance unusable after refused settings (%d %s)", c->what, name, (int)st,
              res.message);
        dvi_solver_destroy(out);

        /* one-shot */
        memset(&res, 0, sizeof res);
        st = dvi_ccp_solve(&f.p, name, &s, gamma, &res);
        CHECK(st == DVI_ERR_INVALID_ARG, "%s (%s): dvi_ccp_solve returned %d", c->what, name, (int)st);
        CHECK(res.status == DVI_SOLVE_BAD_INPUT, "%s (%s): status %d", c->what, name, (int)res.status);
        CHECK(res.message[0] != '\0', "%s (%s): empty message", c->what, name);
        if (k == 0) print_message("  %-32s -> \"%s\"\n", c->what, res.message);
    }
}

static void test_bad_settings(void** state)
{
    (void)state;
    static const bad_settings_case cases[] = {
        {"tolerance = 0", set_tol0, {"apgd", "pgs", "jacobi", "lemke", NULL}},
        {"tolerance < 0", set_tolneg, {"apgd", "pgs", "jacobi", "lemke", NULL}},
        {"tolerance NaN", set_tolnan, {"apgd", "pgs", "jacobi", "lemke", NULL}},
        {"max_iterations = 0", set_maxit0, {"apgd", "pgs", "jacobi", "lemke", NULL}},
        {"max_iterations < 0", set_maxitneg, {"apgd", "pgs", "jacobi", "lemke", NULL}},
        {"threads < 0", set_threadsneg, {"apgd", "pgs", "jacobi", "lemke", NULL}},
        {"pgs.omega = 2", set_omega2, {"pgs", NULL}},
        {"pgs.omega = 3", set_omega3, {"pgs", NULL}},
        {"pgs.omega = 0", set_omega0, {"pgs", NULL}},
        {"pgs.omega NaN", set_omeganan, {"pgs", NULL}},
        {"jacobi.omega = 0", set_jomega0, {"jacobi", NULL}},
        {"jacobi.omega = 2", set_jomega2, {"jacobi", NULL}},
        {"lemke.friction_directions = 2", set_k2, {"lemke", NULL}},
        {"lemke.friction_directions < 0", set_kneg, {"lemke", NULL}},
        {"lemke.max_pivots < 0", set_pivneg, {"lemke", NULL}},
        {"internal_cookie = 0", set_cookie0, {"apgd", "pgs", "jacobi", "lemke", NULL}},
        {"internal_cookie altered", set_cookie1, {"apgd", "pgs", "jacobi", "lemke", NULL}},
        {"settings not from defaults", set_by_hand, {"apgd", "pgs", "jacobi", "lemke", NULL}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) check_bad_settings(&cases[i]);
}

/* APGD knobs that would make the backtracking loop never end (grow ≤ 1)
 * or the step infinite (shrink ≤ 0) must be refused before any solve. */
static void test_bad_settings_apgd(void** state)
{
    (void)state;
    static const bad_settings_case cases[] = {
        {"apgd.grow = 1", set_grow1, {"apgd", NULL}},
        {"apgd.shrink = 0", set_shrink0, {"apgd", NULL}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) check_bad_settings(&cases[i]);
}

/* ------------------------------------------------------------------------- */
/* dvi_inv_mass_block                                                          */
/* ------------------------------------------------------------------------- */

static void test_inv_mass_block(void** state)
{
    (void)state;
    double out[36];

    /* mass 2, full symmetric inertia J = [[2,1,0],[1,2,0],[0,0,4]]:
     * det = 4·(4 − 1) = 12, J⁻¹ = [[2/3, −1/3, 0], [−1/3, 2/3, 0], [0, 0, 1/4]];
     * M⁻¹ = diag(1/2, 1/2, 1/2) ⊕ J⁻¹, zero off-diagonal blocks. */
    const double J[9] = {2, 1, 0, 1, 2, 0, 0, 0, 4};
    const double expect_ang[9] = {2.0 / 3, -1.0 / 3, 0, -1.0 / 3, 2.0 / 3, 0, 0, 0, 0.25};
    assert_int_equal(dvi_inv_mass_block(2.0, J, out), DVI_OK);
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 6; j++) {
            double e = 0.0;
            if (i < 3 && j < 3) e = i == j ? 0.5 : 0.0;
            if (i >= 3 && j >= 3) e = expect_ang[3 * (i - 3) + (j - 3)];
            CHECK(fabs(out[6 * i + j] - e) <= 1e-15, "M^-1(%d,%d) = %.17g, expected %.17g", i, j, out[6 * i + j], e);
        }
    /* exactly symmetric, as the validator requires */
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 6; j++) assert_true(out[6 * i + j] == out[6 * j + i]);

    /* a solid sphere m = 3, R = 0.5: I = 2/5 m R² = 0.3 → 1/I = 10/3 */
    const double Js[9] = {0.3, 0, 0, 0, 0.3, 0, 0, 0, 0.3};
    assert_int_equal(dvi_inv_mass_block(3.0, Js, out), DVI_OK);
    for (int i = 0; i < 3; i++) {
        ASSERT_NEAR(out[7 * i], 1.0 / 3.0, 1e-15);
        ASSERT_NEAR(out[7 * (i + 3)], 10.0 / 3.0, 1e-14);
    }

    /* a valid block passes the problem validator */
    assert_int_equal(dvi_inv_mass_block(2.0, J, out), DVI_OK);
    {
        static const int32_t cp[2] = {0, 1};
        static const int32_t ri[1] = {2};
        static const double va[1] = {1};
        dvi_csc D = {6, 1, cp, ri, va};
        dvi_ccp_block b = {DVI_BLOCK_FRICTIONLESS, 0, 0, 0};
        double r[1] = {-1};
        dvi_ccp_problem p = dvi_ccp_problem_empty();
        p.rows = 1;
        p.block_count = 1;
        p.blocks = &b;
        p.body_count = 1;
        p.D = &D;
        p.inv_mass = out;
        p.r = r;
        char msg[256];
        CHECK(dvi_ccp_validate(&p, msg, sizeof msg) == DVI_OK, "block from dvi_inv_mass_block rejected: %s", msg);
    }

    /* fixed body: mass 0, zero inertia → zero block */
    const double Z[9] = {0};
    for (int i = 0; i < 36; i++) out[i] = 7.0;
    assert_int_equal(dvi_inv_mass_block(0.0, Z, out), DVI_OK);
    for (int i = 0; i < 36; i++) assert_true(out[i] == 0.0);

    /* errors */
    assert_int_equal(dvi_inv_mass_block(-1.0, J, out), DVI_ERR_INVALID_ARG);
    assert_int_equal(dvi_inv_mass_block(NAN, J, out), DVI_ERR_INVALID_ARG);
    assert_int_equal(dvi_inv_mass_block(INFINITY, J, out), DVI_ERR_INVALID_ARG);
    const double Jn[9] = {2, 1, 0, 0.5, 2, 0, 0, 0, 4}; /* J(0,1) ≠ J(1,0) */
    assert_int_equal(dvi_inv_mass_block(2.0, Jn, out), DVI_ERR_INVALID_ARG);
    const double Jsing[9] = {1, 1, 0, 1, 1, 0, 0, 0, 1}; /* rank 2 */
    dvi_status st = dvi_inv_mass_block(2.0, Jsing, out);
    CHECK(st == DVI_ERR_SINGULAR || st == DVI_ERR_INVALID_ARG, "singular inertia: returned %d", (int)st);
    st = dvi_inv_mass_block(2.0, Z, out); /* a point mass with zero inertia is singular */
    CHECK(st == DVI_ERR_SINGULAR || st == DVI_ERR_INVALID_ARG, "zero inertia with mass 2: returned %d", (int)st);
    const double Jneg[9] = {-1, 0, 0, 0, -1, 0, 0, 0, -1}; /* invertible but negative definite */
    st = dvi_inv_mass_block(2.0, Jneg, out);
    CHECK(st < 0, "negative definite inertia accepted (returned %d)", (int)st);
    const double Jnan[9] = {1, 0, 0, 0, NAN, 0, 0, 0, 1};
    CHECK(dvi_inv_mass_block(2.0, Jnan, out) < 0, "NaN inertia accepted");
    assert_int_equal(dvi_inv_mass_block(2.0, NULL, out), DVI_ERR_INVALID_ARG);
    assert_int_equal(dvi_inv_mass_block(2.0, J, NULL), DVI_ERR_INVALID_ARG);
}

/* ------------------------------------------------------------------------- */
/* dvi_ccp_evaluate against hand computations                                  */
/* ------------------------------------------------------------------------- */

/* The tiny problem: blocks BILATERAL (row 0), FRICTION μ = 0.5 (rows 1-3),
 *
 *     W = [[2, .5, 0, 0], [.5, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]],
 *     r = (−1.4, −1, 0, 0),   γ = (0.5, 1, 0.6, 0.8).
 *
 * u = Wγ + r = (1 + .5 − 1.4, .25 + 1 − 1, .6, .8) = (0.1, 0.25, 0.6, 0.8).
 *
 * CCP residual. Bilateral: K = R, so γ0 − Π(γ0 − u0) = u0 = 0.1 → 0.01.
 *   Friction: γ_a − u_a = (0.75, 0, 0) is inside the cone, so the term is
 *   u_a itself: 0.0625 + 0.36 + 0.64 = 1.0625. e² = 1.0725.
 *   Scale: ‖r‖ = √2.96 ≈ 1.7205, ‖γ‖ = √2.25 = 1.5, ‖u‖ = √1.0725 ≈ 1.0356,
 *   max = √2.96. residual = √(1.0725 / 2.96) = 0.60193...
 * Coulomb residual. ‖u_t‖ = 1, ũ_n = 0.25 + 0.5·1 = 0.75; γ_a − ũ_a =
 *   (0.25, 0, 0) inside; term = ‖(0.75, 0.6, 0.8)‖² = 1.5625;
 *   e² = 1.5725; residual_coulomb = √(1.5725 / 2.96) = √0.53125.
 * Cone violation. γ_a = (1, 0.6, 0.8): ‖γ_t‖ = 1 > μγ_n = 0.5.
 *   Π: γ_n' = (0.5·1 + 1)/1.25 = 1.2, γ_t' = 0.5·1.2·(0.6, 0.8) = (0.36, 0.48);
 *   ‖(−0.2, 0.24, 0.32)‖ = √0.2. Bilateral: 0. → √0.2.
 * Dual violation. K* of the cone is ‖u_t‖ ≤ u_n/μ (coefficient 2).
 *   u_a = (0.25, 0.6, 0.8): 2·1 > 0.25 → Π: u_n' = (2·1 + 0.25)/5 = 0.45,
 *   u_t' = 2·0.45·(0.6, 0.8) = (0.54, 0.72); ‖(−0.2, 0.06, 0.08)‖ = √0.05.
 *   Bilateral: K* = {0}, |u0| = 0.1. max → √0.05 ≈ 0.2236.
 * Complementarity. Bilateral 0.5·0.1 = 0.05; friction 0.25 + 0.36 + 0.64
 *   = 1.25 → 1.25.
 * Objective. Wγ = u − r = (1.5, 1.25, 0.6, 0.8); γᵀWγ = .75 + 1.25 + .36
 *   + .64 = 3; ½·3 + rᵀγ = 1.5 − 0.7 − 1 = −0.2.
 *
 * The same N in factor form, with two bodies and M⁻¹ = I:
 *   D columns: 0 = (1, 1, 0, 0, 0, 0 | 0…), 1 = (.5, 0, .5, .5, .5, 0 | 0…),
 *   2 = e_6, 3 = e_7: DᵀD = W exactly (all numbers are binary fractions). */
typedef struct tiny {
    dvi_ccp_block blocks[2];
    double r[4];
    int32_t wcp[5], wri[6];
    double wva[6];
    dvi_csc W;
    int32_t dcp[5], dri[8];
    double dva[8];
    double minv[72];
    dvi_csc D;
    dvi_ccp_problem pw, pd;
} tiny;

static void tiny_init(tiny* t)
{
    memset(t, 0, sizeof *t);
    t->blocks[0].kind = DVI_BLOCK_BILATERAL;
    t->blocks[1].kind = DVI_BLOCK_FRICTION;
    t->blocks[1].mu = 0.5;
    t->r[0] = -1.4;
    t->r[1] = -1.0;
    /* W in CSC, lower and upper parts both stored */
    static const int32_t wcp[5] = {0, 2, 4, 5, 6};
    static const int32_t wri[6] = {0, 1, 0, 1, 2, 3};
    static const double wva[6] = {2, 0.5, 0.5, 1, 1, 1};
    memcpy(t->wcp, wcp, sizeof wcp);
    memcpy(t->wri, wri, sizeof wri);
    memcpy(t->wva, wva, sizeof wva);
    t->W = (dvi_csc){4, 4, t->wcp, t->wri, t->wva};
    static const int32_t dcp[5] = {0, 2, 6, 7, 8};
    static const int32_t dri[8] = {0, 1, 0, 2, 3, 4, 6, 7};
    static const double dva[8] = {1, 1, 0.5, 0.5, 0.5, 0.5, 1, 1};
    memcpy(t->dcp, dcp, sizeof dcp);
    memcpy(t->dri, dri, sizeof dri);
    memcpy(t->dva, dva, sizeof dva);
    t->D = (dvi_csc){12, 4, t->dcp, t->dri, t->dva};
    for (int b = 0; b < 2; b++)
        for (int i = 0; i < 6; i++) t->minv[36 * b + 7 * i] = 1.0;

    t->pw = dvi_ccp_problem_empty();
    t->pw.rows = 4;
    t->pw.block_count = 2;
    t->pw.blocks = t->blocks;
    t->pw.r = t->r;
    t->pw.W = &t->W;
    t->pd = t->pw;
    t->pd.W = NULL;
    t->pd.D = &t->D;
    t->pd.inv_mass = t->minv;
    t->pd.body_count = 2;
}

static void test_evaluate_by_hand(void** state)
{
    (void)state;
    tiny t;
    tiny_init(&t);
    const double gamma[4] = {0.5, 1.0, 0.6, 0.8};
    for (int form = 0; form < 2; form++) {
        const dvi_ccp_problem* p = form == 0 ? &t.pw : &t.pd;
        const char* fname = form == 0 ? "W form" : "factor form";
        dvi_ccp_metrics m;
        memset(&m, 0xff, sizeof m);
        dvi_status st = dvi_ccp_evaluate(p, gamma, &m);
        CHECK(st == DVI_OK, "%s: dvi_ccp_evaluate returned %d", fname, (int)st);
        print_message("  %s: residual %.17g coulomb %.17g cone %.17g dual %.17g compl %.17g obj %.17g\n", fname,
                      m.residual, m.residual_coulomb, m.cone_violation, m.dual_violation, m.complementarity,
                      m.objective);
        CHECK(fabs(m.residual - sqrt(1.0725 / 2.96)) <= 1e-14, "%s: residual %.17g, expected %.17g", fname, m.residual,
              sqrt(1.0725 / 2.96));
        CHECK(fabs(m.residual_coulomb - sqrt(0.53125)) <= 1e-14, "%s: residual_coulomb %.17g, expected %.17g", fname,
              m.residual_coulomb, sqrt(0.53125));
        CHECK(fabs(m.cone_violation - sqrt(0.2)) <= 1e-14, "%s: cone_violation %.17g, expected %.17g", fname,
              m.cone_violation, sqrt(0.2));
        CHECK(fabs(m.dual_violation - sqrt(0.05)) <= 1e-14, "%s: dual_violation %.17g, expected %.17g", fname,
              m.dual_violation, sqrt(0.05));
        CHECK(fabs(m.complementarity - 1.25) <= 1e-14, "%s: complementarity %.17g, expected 1.25", fname,
              m.complementarity);
        CHECK(fabs(m.objective - (-0.2)) <= 1e-14, "%s: objective %.17g, expected -0.2", fname, m.objective);
    }

    /* dvi_ccp_velocity: dv = M⁻¹ D γ = 0.5·col0 + 1·col1 + 0.6·e6 + 0.8·e7
     *   = (1, 0.5, 0.5, 0.5, 0.5, 0 | 0.6, 0.8, 0, 0, 0, 0) */
    const double expect_dv[12] = {1, 0.5, 0.5, 0.5, 0.5, 0, 0.6, 0.8, 0, 0, 0, 0};
    double dv[12];
    assert_int_equal(dvi_ccp_velocity(&t.pd, gamma, dv), DVI_OK);
    for (int i = 0; i < 12; i++) CHECK(fabs(dv[i] - expect_dv[i]) <= 1e-15, "dv[%d] = %g, expected %g", i, dv[i], expect_dv[i]);

    /* with compliance c = (0.1, 0, 0, 0): u0 = 0.1 + 0.1·0.5 = 0.15;
     * objective −0.2 + ½·0.1·0.25 = −0.1875; complementarity unchanged (1.25
     * dominates; the bilateral term is 0.075). residual: e² = 0.0225 + 1.0625
     * = 1.085, scale √2.96 → √(1.085/2.96). */
    double c[4] = {0.1, 0, 0, 0};
    for (int form = 0; form < 2; form++) {
        dvi_ccp_problem p = form == 0 ? t.pw : t.pd;
        p.compliance = c;
        dvi_ccp_metrics m;
        assert_int_equal(dvi_ccp_evaluate(&p, gamma, &m), DVI_OK);
        CHECK(fabs(m.objective - (-0.1875)) <= 1e-14, "compliance (form %d): objective %.17g, expected -0.1875", form,
              m.objective);
        CHECK(fabs(m.residual - sqrt(1.085 / 2.96)) <= 1e-14, "compliance (form %d): residual %.17g, expected %.17g",
              form, m.residual, sqrt(1.085 / 2.96));
    }

    /* γ = the exact solution of a problem gives zeros: r = (0, 1, 0, 0),
     * γ = 0 → u = r; bilateral u0 = 0; friction γ − Π(γ − u) = −Π(−1,0,0)
     * = 0 (the polar cone maps to 0). Residual 0, objective 0. */
    t.r[0] = 0.0;
    t.r[1] = 1.0;
    const double zero[4] = {0, 0, 0, 0};
    dvi_ccp_metrics m;
    assert_int_equal(dvi_ccp_evaluate(&t.pw, zero, &m), DVI_OK);
    assert_true(m.residual == 0.0);
    assert_true(m.residual_coulomb == 0.0);
    assert_true(m.cone_violation == 0.0);
    assert_true(m.dual_violation == 0.0);
    assert_true(m.complementarity == 0.0);
    assert_true(m.objective == 0.0);

    /* all-zero data: the scale max(‖r‖, ‖γ‖, ‖u‖) is 0 → residual = e = 0, no NaN */
    t.r[1] = 0.0;
    assert_int_equal(dvi_ccp_evaluate(&t.pd, zero, &m), DVI_OK);
    CHECK(m.residual == 0.0 && m.residual_coulomb == 0.0, "0/0 scale: residual %g, coulomb %g", m.residual,
          m.residual_coulomb);
}

/* A one-row frictionless block, W = [1], r = −1. First γ = −0.5 (outside K):
 *   u = −1.5; γ − max(0, γ − u) = −0.5 − 1 = −1.5 → e = 1.5; scale
 *   max(1, 0.5, 1.5) = 1.5 → residual 1 (Coulomb the same: no friction);
 *   cone violation |γ − max(γ, 0)| = 0.5; dual violation |u − max(u, 0)|
 *   = 1.5; complementarity |γu| = 0.75; objective ½·0.25 + 0.5 = 0.625. */
static void test_evaluate_frictionless(void** state)
{
    (void)state;
    static const int32_t cp[2] = {0, 1};
    static const int32_t ri[1] = {0};
    static const double va[1] = {1.0};
    dvi_csc W = {1, 1, cp, ri, va};
    dvi_ccp_block b = {DVI_BLOCK_FRICTIONLESS, 0, 0, 0};
    double r[1] = {-1.0};
    dvi_ccp_problem p = dvi_ccp_problem_empty();
    p.rows = 1;
    p.block_count = 1;
    p.blocks = &b;
    p.W = &W;
    p.r = r;
    double gamma[1] = {-0.5};
    dvi_ccp_metrics m;
    assert_int_equal(dvi_ccp_evaluate(&p, gamma, &m), DVI_OK);
    ASSERT_NEAR(m.residual, 1.0, 1e-15);
    ASSERT_NEAR(m.residual_coulomb, 1.0, 1e-15);
    ASSERT_NEAR(m.cone_violation, 0.5, 1e-15);
    ASSERT_NEAR(m.dual_violation, 1.5, 1e-15);
    ASSERT_NEAR(m.complementarity, 0.75, 1e-15);
    ASSERT_NEAR(m.objective, 0.625, 1e-15);

    /* γ = 3 (too large): u = 2; γ − max(0, γ − u) = 3 − 1 = 2; the scale is
     * now ‖γ‖: max(1, 3, 2) = 3 → residual 2/3; dual violation 0 (u ≥ 0);
     * complementarity 6; objective ½·9 − 3 = 1.5 */
    gamma[0] = 3.0;
    assert_int_equal(dvi_ccp_evaluate(&p, gamma, &m), DVI_OK);
    ASSERT_NEAR(m.residual, 2.0 / 3.0, 1e-15);
    ASSERT_NEAR(m.residual_coulomb, 2.0 / 3.0, 1e-15);
    ASSERT_NEAR(m.cone_violation, 0.0, 0.0);
    ASSERT_NEAR(m.dual_violation, 0.0, 0.0);
    ASSERT_NEAR(m.complementarity, 6.0, 1e-15);
    ASSERT_NEAR(m.objective, 1.5, 1e-15);

    /* at the solution γ = 1: u = 0, everything zero, objective −0.5 */
    gamma[0] = 1.0;
    assert_int_equal(dvi_ccp_evaluate(&p, gamma, &m), DVI_OK);
    assert_true(m.residual == 0.0);
    assert_true(m.cone_violation == 0.0);
    assert_true(m.dual_violation == 0.0);
    assert_true(m.complementarity == 0.0);
    ASSERT_NEAR(m.objective, -0.5, 1e-15);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_block_rows_and_registry),
        cmocka_unit_test(test_status_strings),
        cmocka_unit_test(test_problem_empty_and_defaults),
        cmocka_unit_test(test_valid_fixture_accepted),
        cmocka_unit_test(test_w_duplicates_summed),
        cmocka_unit_test(test_nonfinite_r),
        cmocka_unit_test(test_nonfinite_matrices),
        cmocka_unit_test(test_bad_mu),
        cmocka_unit_test(test_wrong_dimensions),
        cmocka_unit_test(test_empty_and_null),
        cmocka_unit_test(test_operator_forms),
        cmocka_unit_test(test_bad_sparse_structure),
        cmocka_unit_test(test_unknown_block_kind),
        cmocka_unit_test(test_bad_compliance),
        cmocka_unit_test(test_nonsymmetric_operators),
        cmocka_unit_test(test_warm_start_nonfinite_guess),
        cmocka_unit_test(test_unknown_solver),
        cmocka_unit_test(test_bad_settings),
        cmocka_unit_test(test_bad_settings_apgd),
        cmocka_unit_test(test_inv_mass_block),
        cmocka_unit_test(test_evaluate_by_hand),
        cmocka_unit_test(test_evaluate_frictionless),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
