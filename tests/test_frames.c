/* Contacts given by frames (dvi_ccp_frames) against the same rows given as
 * columns of D, built here from the documented formulas, independently of
 * the library:
 *     row q < 3:  J_b = [d_q, ρ_b × d_q],  J_a = −[d_q, ρ_a × d_q]
 *     row q ≥ 3:  J_b = ℓ [0, d_{q−3}],    J_a = −ℓ [0, d_{q−3}]
 * A random problem mixes bilateral rows (columns of D), frictionless,
 * friction and rolling contacts, contacts with one body (−1 on the other
 * side) and a contact whose two sides are one body; bodies with a rigid
 * body's M⁻¹ and, in a second variant, one body with a general 6×6 block.
 * Checked: the metrics of the same γ (objective, residuals) and the velocity
 * change M⁻¹ D γ agree to round-off; every solver converges on both forms to
 * the same objective; the JSON writer writes the frames as columns; bad
 * frames are refused with a message naming the field. */
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
#include "test_util.h"

#define NB 12          /* bodies */
#define NC 40          /* contacts */
#define NJ 5           /* bilateral rows */
#define MAXROWS (NJ + 6 * NC)

typedef struct case_t {
    int32_t rows, nblocks;
    dvi_ccp_block blocks[NJ + NC];
    double inv_mass[36 * NB];
    double r[MAXROWS];
    /* frames */
    int32_t fblock[NC], fbody[2 * NC];
    double frame[9 * NC], arm[6 * NC], ell[NC];
    dvi_ccp_frames frames;
    /* D with the joint columns only (frames problem) and with every column */
    int32_t cp_j[MAXROWS + 1], ri_j[12 * NJ];
    double va_j[12 * NJ];
    int32_t cp_f[MAXROWS + 1], ri_f[12 * MAXROWS];
    double va_f[12 * MAXROWS];
    dvi_csc Dj, Df;
    dvi_ccp_problem pf, pd; /* frames, columns */
} case_t;

static uint64_t rng = 88172645463325252ull;
static double urand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (double)(rng >> 11) / 9007199254740992.0;
}
static double srand1(void) { return 2.0 * urand() - 1.0; }

static void cross(const double* a, const double* b, double* c)
{
    c[0] = a[1] * b[2] - a[2] * b[1];
    c[1] = a[2] * b[0] - a[0] * b[2];
    c[2] = a[0] * b[1] - a[1] * b[0];
}

/* Adds the 6-vector j of body b to a column being built (sorted by body; the
 * same body twice is summed). */
typedef struct col { int32_t body[2]; double v[2][6]; int n; } col;
static void col_add(col* c, int32_t b, const double* j)
{
    if (b < 0) return;
    for (int i = 0; i < c->n; i++)
        if (c->body[i] == b) {
            for (int k = 0; k < 6; k++) c->v[i][k] += j[k];
            return;
        }
    c->body[c->n] = b;
    memcpy(c->v[c->n], j, 6 * sizeof(double));
    c->n++;
}
static void col_emit(const col* c, int32_t* ri, double* va, int32_t* nz)
{
    int order[2] = {0, 1};
    if (c->n == 2 && c->body[1] < c->body[0]) order[0] = 1, order[1] = 0;
    for (int i = 0; i < c->n; i++)
        for (int k = 0; k < 6; k++) {
            ri[*nz] = 6 * c->body[order[i]] + k;
            va[(*nz)++] = c->v[order[i]][k];
        }
}

static void build(case_t* t, bool general_mass)
{
    memset(t, 0, sizeof *t);
    /* bodies: rigid M⁻¹ = [1/m I, 0; 0, R diag(1/I) Rᵀ] */
    for (int b = 0; b < NB; b++) {
        double* A = t->inv_mass + 36 * b;
        double im = 0.5 + urand();
        for (int k = 0; k < 3; k++) A[7 * k] = im;
        double S[9] = {0}, q[3] = {srand1(), srand1(), srand1()};
        double d[3] = {1 + urand(), 1 + urand(), 1 + urand()};
        for (int i = 0; i < 3; i++) S[4 * i] = d[i];
        for (int i = 0; i < 3; i++) /* + q qᵀ: symmetric positive definite */
            for (int j = 0; j < 3; j++) S[3 * i + j] += 0.3 * q[i] * q[j];
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) A[6 * (3 + i) + 3 + j] = S[3 * i + j];
    }
    if (general_mass) { /* a symmetric linear–angular coupling on body 3 */
        double* A = t->inv_mass + 36 * 3;
        A[6 * 0 + 4] = A[6 * 4 + 0] = 0.05;
        A[6 * 1 + 1] = 0.9; /* and an anisotropic linear block */
    }
    int32_t row = 0, blk = 0, nzj = 0, nzf = 0;
    /* bilateral rows: random columns on two bodies */
    for (int j = 0; j < NJ; j++) {
        t->blocks[blk++] = (dvi_ccp_block){DVI_BLOCK_BILATERAL, 0, 0, 0};
        col c = {{0, 0}, {{0}}, 0};
        double ja[6], jb[6];
        for (int k = 0; k < 6; k++) ja[k] = srand1(), jb[k] = srand1();
        col_add(&c, (2 * j) % NB, ja);
        col_add(&c, (2 * j + 5) % NB, jb);
        t->cp_j[row] = nzj;
        col_emit(&c, t->ri_j, t->va_j, &nzj);
        t->cp_f[row] = nzf;
        col_emit(&c, t->ri_f, t->va_f, &nzf);
        t->r[row] = 0.1 * srand1();
        row++;
    }
    for (int c = 0; c < NC; c++) {
        int kind = c % 5 == 0 ? 1 : c % 7 == 0 ? 6 : 3; /* rows */
        double mu = 0.2 + 0.5 * urand();
        t->blocks[blk] = kind == 1   ? (dvi_ccp_block){DVI_BLOCK_FRICTIONLESS, 0, 0, 0}
                         : kind == 3 ? (dvi_ccp_block){DVI_BLOCK_FRICTION, mu, 0, 0}
                                     : (dvi_ccp_block){DVI_BLOCK_FRICTION_ROLLING, mu, 0.1, 0.2};
        int32_t a = (int32_t)(urand() * NB), b = (int32_t)(urand() * NB);
        if (c % 6 == 1) a = -1;      /* against the world */
        if (c % 11 == 4) b = a >= 0 ? a : 2; /* one body on both sides */
        t->fblock[c] = blk;
        t->fbody[2 * c] = a;
        t->fbody[2 * c + 1] = b;
        /* frame: n random unit, t1 ⟂ n, t2 = n × t1 */
        double n[3] = {srand1(), srand1(), srand1()}, t1[3], t2[3], z[3] = {0.3, -0.7, 0.2};
        double nn = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
        for (int k = 0; k < 3; k++) n[k] /= nn;
        cross(n, z, t1);
        double tn = sqrt(t1[0] * t1[0] + t1[1] * t1[1] + t1[2] * t1[2]);
        for (int k = 0; k < 3; k++) t1[k] /= tn;
        cross(n, t1, t2);
        const double* d[3] = {n, t1, t2};
        for (int q = 0; q < 3; q++)
            for (int k = 0; k < 3; k++) t->frame[9 * c + 3 * q + k] = d[q][k];
        for (int k = 0; k < 6; k++) t->arm[6 * c + k] = 0.2 * srand1();
        t->ell[c] = 0.5 + urand();
        const double* ra = t->arm + 6 * c;
        const double* rb = t->arm + 6 * c + 3;
        for (int q = 0; q < kind; q++) {
            double ja[6], jb[6];
            if (q < 3) {
                double ca[3], cb[3];
                cross(ra, d[q], ca);
                cross(rb, d[q], cb);
                for (int k = 0; k < 3; k++) {
                    jb[k] = d[q][k];
                    jb[3 + k] = cb[k];
                    ja[k] = -d[q][k];
                    ja[3 + k] = -ca[k];
                }
            } else {
                for (int k = 0; k < 3; k++) {
                    jb[k] = ja[k] = 0.0;
                    jb[3 + k] = t->ell[c] * d[q - 3][k];
                    ja[3 + k] = -t->ell[c] * d[q - 3][k];
                }
            }
            col cc = {{0, 0}, {{0}}, 0};
            col_add(&cc, a, ja);
            col_add(&cc, b, jb);
            t->cp_j[row] = nzj; /* empty in the frames problem */
            t->cp_f[row] = nzf;
            col_emit(&cc, t->ri_f, t->va_f, &nzf);
            t->r[row] = q == 0 ? -0.2 * urand() : 0.05 * srand1();
            row++;
        }
        blk++;
    }
    t->cp_j[row] = nzj;
    t->cp_f[row] = nzf;
    t->rows = row;
    t->nblocks = blk;
    t->Dj = (dvi_csc){6 * NB, row, t->cp_j, t->ri_j, t->va_j};
    t->Df = (dvi_csc){6 * NB, row, t->cp_f, t->ri_f, t->va_f};
    t->frames = (dvi_ccp_frames){.count = NC, .block = t->fblock, .body = t->fbody, .frame = t->frame, .arm = t->arm, .ell = t->ell};
    dvi_ccp_problem p = dvi_ccp_problem_empty();
    p.rows = row;
    p.block_count = blk;
    p.blocks = t->blocks;
    p.body_count = NB;
    p.inv_mass = t->inv_mass;
    p.r = t->r;
    t->pd = p;
    t->pd.D = &t->Df;
    t->pf = p;
    t->pf.D = &t->Dj;
    t->pf.frames = &t->frames;
}

/* A γ inside the cones (random). */
static void some_gamma(const case_t* t, double* g)
{
    int32_t row = 0;
    for (int32_t b = 0; b < t->nblocks; b++) {
        int32_t k = dvi_block_rows(t->blocks[b].kind);
        for (int32_t i = 0; i < k; i++) g[row + i] = 0.1 * srand1();
        if (k > 1 || t->blocks[b].kind == DVI_BLOCK_FRICTIONLESS) g[row] = 0.3 * urand() + 0.3;
        row += k;
    }
}

static void test_same_operator(void** state)
{
    (void)state;
    for (int variant = 0; variant < 2; variant++) {
        case_t* t = malloc(sizeof *t);
        assert_non_null(t);
        build(t, variant == 1);
        char msg[256];
        assert_int_equal(dvi_ccp_validate(&t->pf, msg, sizeof msg), DVI_OK);
        assert_int_equal(dvi_ccp_validate(&t->pd, msg, sizeof msg), DVI_OK);
        double g[MAXROWS], dvf[6 * NB], dvd[6 * NB];
        some_gamma(t, g);
        dvi_ccp_metrics mf, md;
        assert_int_equal(dvi_ccp_evaluate(&t->pf, g, &mf), DVI_OK);
        assert_int_equal(dvi_ccp_evaluate(&t->pd, g, &md), DVI_OK);
        print_message("variant %d: %d rows; objective %.15g (frames) %.15g (columns), residual %.15g / %.15g\n", variant,
                      t->rows, mf.objective, md.objective, mf.residual, md.residual);
        assert_near(mf.objective, md.objective, 1e-13 * (1.0 + fabs(md.objective)));
        assert_near(mf.residual, md.residual, 1e-12);
        assert_near(mf.residual_coulomb, md.residual_coulomb, 1e-12);
        assert_near(mf.complementarity, md.complementarity, 1e-12);
        assert_int_equal(dvi_ccp_velocity(&t->pf, g, dvf), DVI_OK);
        assert_int_equal(dvi_ccp_velocity(&t->pd, g, dvd), DVI_OK);
        for (int i = 0; i < 6 * NB; i++) assert_near(dvf[i], dvd[i], 1e-13 * (1.0 + fabs(dvd[i])));
        free(t);
    }
}

static void test_solvers_agree(void** state)
{
    (void)state;
    static const char* const SOLVERS[4] = {"apgd", "pgs", "jacobi", "lemke"};
    case_t* t = malloc(sizeof *t);
    assert_non_null(t);
    build(t, false);
    for (int s = 0; s < 4; s++) {
        dvi_solver_settings set = dvi_default_solver_settings();
        set.tolerance = 1e-9;
        set.max_iterations = s == 3 ? 0 : 200000;
        if (s == 3) set.max_iterations = 1000;
        double gf[MAXROWS] = {0}, gd[MAXROWS] = {0};
        dvi_solve_result rf, rd;
        memset(&rf, 0, sizeof rf);
        memset(&rd, 0, sizeof rd);
        dvi_status sf = dvi_ccp_solve(&t->pf, SOLVERS[s], &set, gf, &rf);
        dvi_status sd = dvi_ccp_solve(&t->pd, SOLVERS[s], &set, gd, &rd);
        print_message("%-6s frames: %s, %d iterations, residual %.2e, objective %.12g, %.0f bytes/iteration; columns: "
                      "%s, %d iterations, objective %.12g, %.0f bytes/iteration\n",
                      SOLVERS[s], dvi_solve_status_string(rf.status), rf.iterations, rf.metrics.residual,
                      rf.metrics.objective, rf.bytes_per_iteration, dvi_solve_status_string(rd.status), rd.iterations,
                      rd.metrics.objective, rd.bytes_per_iteration);
        assert_int_equal(sf, sd);
        assert_int_equal(rf.status, rd.status);
        if (rd.status == DVI_SOLVE_CONVERGED) {
            double scale = 1.0 + fabs(rd.metrics.objective);
            assert_near(rf.metrics.objective, rd.metrics.objective, 1e-7 * scale);
        }
        if (s < 3) { /* the iterative solvers estimate their memory traffic: the frames move fewer bytes */
            assert_true(rf.bytes_per_iteration > 0.0);
            assert_true(rf.bytes_per_iteration < rd.bytes_per_iteration);
        }
    }
    free(t);
}

/* dvi_solver_velocity: M⁻¹ D γ from the solver's operator, as dvi_ccp_velocity
 * gives it; refused before a solve, after a refused solve, and for W. */
static void test_solver_velocity(void** state)
{
    (void)state;
    case_t* t = malloc(sizeof *t);
    assert_non_null(t);
    build(t, true);
    dvi_solver* s = NULL;
    assert_int_equal(dvi_solver_create("apgd", NULL, &s), DVI_OK);
    double g[MAXROWS] = {0}, dv[6 * NB], ref[6 * NB];
    assert_int_equal(dvi_solver_velocity(s, g, dv), DVI_ERR_INVALID_ARG); /* nothing solved yet */
    dvi_solve_result res;
    memset(&res, 0, sizeof res);
    assert_true(dvi_solver_solve(s, &t->pf, g, &res) >= 0);
    assert_int_equal(dvi_solver_velocity(s, g, dv), DVI_OK);
    assert_int_equal(dvi_ccp_velocity(&t->pd, g, ref), DVI_OK);
    for (int i = 0; i < 6 * NB; i++) assert_near(dv[i], ref[i], 1e-13 * (1.0 + fabs(ref[i])));
    assert_int_equal(dvi_solver_velocity(s, NULL, dv), DVI_ERR_INVALID_ARG);
    dvi_ccp_problem bad = t->pf;
    bad.r = NULL;
    assert_true(dvi_solver_solve(s, &bad, g, &res) < 0);
    assert_int_equal(dvi_solver_velocity(s, g, dv), DVI_ERR_INVALID_ARG); /* the refused problem is not used */
    dvi_solver_destroy(s);
    free(t);
}

/* One solver through problems whose layouts grow from nothing: no runs and no
 * frames, then one contact by frames, then one column on one body, then
 * many contacts (a workspace sized for an empty layout must grow; the
 * sanitizer build sees any overrun). The one-contact answers are exact:
 * a 1 kg point body on the ground, r = −1 on the normal row. */
static void test_growing_layouts(void** state)
{
    (void)state;
    dvi_solver* s = NULL;
    dvi_solver_settings set = dvi_default_solver_settings();
    set.tolerance = 1e-12;
    assert_int_equal(dvi_solver_create("apgd", &set, &s), DVI_OK);
    dvi_ccp_block blk = {DVI_BLOCK_FRICTION, 0.5, 0, 0};
    double minv[36] = {0}, r[3] = {-1.0, 0.0, 0.0}, g[3], dv[6];
    for (int k = 0; k < 6; k++) minv[7 * k] = 1.0;
    int32_t cp0[4] = {0, 0, 0, 0};
    dvi_csc D0 = {6, 3, cp0, NULL, NULL};
    dvi_ccp_problem p = dvi_ccp_problem_empty();
    p.rows = 3;
    p.block_count = 1;
    p.blocks = &blk;
    p.body_count = 1;
    p.D = &D0;
    p.inv_mass = minv;
    p.r = r;
    dvi_solve_result res;
    memset(&res, 0, sizeof res);
    memset(g, 0, sizeof g);
    assert_true(dvi_solver_solve(s, &p, g, &res) >= 0); /* rows coupled to nothing */
    /* the same contact by its frame: normal +z on body 0 (side b), arm 0 */
    int32_t fb = 0, bodies[2] = {-1, 0};
    double frame[9] = {0, 0, 1, 1, 0, 0, 0, 1, 0}, arm[6] = {0};
    dvi_ccp_frames F = {.count = 1, .block = &fb, .body = bodies, .frame = frame, .arm = arm};
    p.frames = &F;
    memset(g, 0, sizeof g);
    memset(&res, 0, sizeof res);
    assert_int_equal(dvi_solver_solve(s, &p, g, &res), DVI_OK);
    assert_near(g[0], 1.0, 1e-10); /* u_n = γ_n − 1 = 0 */
    assert_near(g[1], 0.0, 1e-12);
    assert_int_equal(dvi_solver_velocity(s, g, dv), DVI_OK);
    assert_near(dv[2], 1.0, 1e-10);
    /* one column on one body (a run), no frames */
    int32_t cp1[4] = {0, 1, 2, 3}, ri1[3] = {2, 0, 1};
    double va1[3] = {1.0, 1.0, 1.0};
    dvi_csc D1 = {6, 3, cp1, ri1, va1};
    p.D = &D1;
    p.frames = NULL;
    memset(g, 0, sizeof g);
    assert_int_equal(dvi_solver_solve(s, &p, g, &res), DVI_OK);
    assert_near(g[0], 1.0, 1e-10);
    /* and the large random problem */
    case_t* t = malloc(sizeof *t);
    assert_non_null(t);
    build(t, false);
    double* gg = calloc(MAXROWS, sizeof *gg);
    assert_non_null(gg);
    assert_true(dvi_solver_solve(s, &t->pf, gg, &res) >= 0);
    assert_true(isfinite(res.metrics.residual));
    free(gg);
    free(t);
    dvi_solver_destroy(s);
}

static void test_writer_expands(void** state)
{
    (void)state;
    case_t* t = malloc(sizeof *t);
    assert_non_null(t);
    build(t, true);
    char msg[256];
    char* text = NULL;
    size_t len = 0;
    assert_int_equal(dvi_ccp_problem_format_json(&t->pf, NULL, NULL, &text, &len, msg, sizeof msg), DVI_OK);
    dvi_ccp_file* f = NULL;
    assert_int_equal(dvi_ccp_problem_parse_json(text, len, &f, msg, sizeof msg), DVI_OK);
    double g[MAXROWS];
    some_gamma(t, g);
    dvi_ccp_metrics a, b;
    assert_int_equal(dvi_ccp_evaluate(&f->problem, g, &b), DVI_OK);
    assert_int_equal(dvi_ccp_evaluate(&t->pf, g, &a), DVI_OK);
    assert_null(f->problem.frames);
    assert_near(a.objective, b.objective, 1e-12 * (1.0 + fabs(a.objective)));
    assert_near(a.residual, b.residual, 1e-11);
    dvi_ccp_file_free(f);
    free(text);
    free(t);
}

static void expect_refused(const dvi_ccp_problem* p, const char* needle)
{
    char msg[256] = "";
    assert_int_equal(dvi_ccp_validate(p, msg, sizeof msg), DVI_ERR_INVALID_ARG);
    print_message("refused: %s\n", msg);
    if (!strstr(msg, needle)) fail_msg("expected a message with \"%s\", got \"%s\"", needle, msg);
    double g[MAXROWS] = {0};
    dvi_solve_result res;
    memset(&res, 0, sizeof res);
    assert_int_equal(dvi_ccp_solve(p, "apgd", NULL, g, &res), DVI_ERR_INVALID_ARG);
    assert_non_null(strstr(res.message, needle));
}

static void test_bad_frames(void** state)
{
    (void)state;
    case_t* t = malloc(sizeof *t);
    assert_non_null(t);
    build(t, false);
    dvi_ccp_frames F = t->frames;
    dvi_ccp_problem p = t->pf;
    p.frames = &F;

    F.count = -1;
    expect_refused(&p, "frames.count");
    F = t->frames;
    int32_t blocks[NC];
    memcpy(blocks, t->fblock, sizeof blocks);
    F.block = blocks;
    blocks[3] = blocks[2];
    expect_refused(&p, "frames.block[3]: must be increasing");
    memcpy(blocks, t->fblock, sizeof blocks);
    blocks[0] = 0; /* a bilateral block */
    expect_refused(&p, "is not a contact block");
    F = t->frames;
    p.D = &t->Df; /* the columns are not empty */
    expect_refused(&p, "must be empty");
    p.D = &t->Dj;
    int32_t bodies[2 * NC];
    memcpy(bodies, t->fbody, sizeof bodies);
    F.body = bodies;
    bodies[5] = NB;
    expect_refused(&p, "frames.body[5]");
    F = t->frames;
    double frame[9 * NC], arm[6 * NC], ell[NC];
    memcpy(frame, t->frame, sizeof frame);
    F.frame = frame;
    frame[13] = NAN;
    expect_refused(&p, "frames.frame[13]: not finite");
    F = t->frames;
    memcpy(arm, t->arm, sizeof arm);
    F.arm = arm;
    arm[7] = INFINITY;
    expect_refused(&p, "frames.arm[7]");
    F = t->frames;
    memcpy(ell, t->ell, sizeof ell);
    F.ell = ell;
    ell[2] = 0.0;
    expect_refused(&p, "frames.ell[2]");
    F = t->frames;
    F.arm = NULL;
    expect_refused(&p, "frames: block, body, frame and arm");
    /* frames need the factor form */
    F = t->frames;
    dvi_ccp_problem q = p;
    q.D = NULL;
    q.inv_mass = NULL;
    q.W = &t->Dj; /* any CSC: the frames are refused before W is looked at */
    char msg[256] = "";
    assert_int_equal(dvi_ccp_validate(&q, msg, sizeof msg), DVI_ERR_INVALID_ARG);
    print_message("refused: %s\n", msg);
    assert_non_null(strstr(msg, "frames: given with W"));
    free(t);
}

/* dvi_ccp_problem.inv_mass_rigid: the same bodies given in 10 numbers each
 * give every solver the same bits as their 6×6 blocks (the world gives its
 * bodies this way); the JSON writer writes the 6×6 blocks; bad blocks are
 * refused by name. */
static void test_rigid_layout(void** state)
{
    (void)state;
    case_t* t = malloc(sizeof *t);
    assert_non_null(t);
    build(t, false);
    double R[10 * NB];
    for (int b = 0; b < NB; b++) {
        const double* A = t->inv_mass + 36 * b;
        R[10 * b] = A[0];
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) R[10 * b + 1 + 3 * i + j] = A[6 * (3 + i) + 3 + j];
    }
    dvi_ccp_problem q = t->pf;
    q.inv_mass = NULL;
    q.inv_mass_rigid = R;
    char msg[256];
    assert_int_equal(dvi_ccp_validate(&q, msg, sizeof msg), DVI_OK);
    static const char* const SOLVERS[4] = {"apgd", "pgs", "jacobi", "lemke"};
    for (int s = 0; s < 4; s++) {
        dvi_solver_settings set = dvi_default_solver_settings();
        set.tolerance = 1e-8;
        set.max_iterations = s == 3 ? 1000 : 20000;
        double g6[MAXROWS] = {0}, g10[MAXROWS] = {0};
        dvi_solve_result r6, r10;
        memset(&r6, 0, sizeof r6);
        memset(&r10, 0, sizeof r10);
        assert_true(dvi_ccp_solve(&t->pf, SOLVERS[s], &set, g6, &r6) >= 0);
        assert_true(dvi_ccp_solve(&q, SOLVERS[s], &set, g10, &r10) >= 0);
        print_message("%-6s 6x6: %s after %d iterations; rigid: %s after %d, residual %.3e\n", SOLVERS[s],
                      dvi_solve_status_string(r6.status), r6.iterations, dvi_solve_status_string(r10.status),
                      r10.iterations, r10.metrics.residual);
        assert_int_equal(r6.status, r10.status);
        assert_int_equal(r6.iterations, r10.iterations);
        assert_memory_equal(g6, g10, (size_t)t->rows * sizeof(double));
        if (s == 0) {
            double v6[6 * NB], v10[6 * NB];
            assert_int_equal(dvi_ccp_velocity(&t->pf, g6, v6), DVI_OK);
            assert_int_equal(dvi_ccp_velocity(&q, g10, v10), DVI_OK);
            assert_memory_equal(v6, v10, sizeof v6);
        }
    }
    char *t6 = NULL, *t10 = NULL;
    size_t n6 = 0, n10 = 0;
    assert_int_equal(dvi_ccp_problem_format_json(&t->pf, NULL, NULL, &t6, &n6, msg, sizeof msg), DVI_OK);
    assert_int_equal(dvi_ccp_problem_format_json(&q, NULL, NULL, &t10, &n10, msg, sizeof msg), DVI_OK);
    assert_int_equal(n6, n10);
    assert_string_equal(t6, t10);
    free(t6);
    free(t10);

    dvi_ccp_problem both = q;
    both.inv_mass = t->inv_mass;
    expect_refused(&both, "inv_mass, inv_mass_rigid: both given");
    dvi_ccp_problem none = q;
    none.inv_mass_rigid = NULL;
    expect_refused(&none, "inv_mass: NULL");
    double bad[10 * NB];
    memcpy(bad, R, sizeof bad);
    bad[10 * 5 + 1] = NAN;
    q.inv_mass_rigid = bad;
    expect_refused(&q, "inv_mass_rigid[body 5][1]: not finite");
    memcpy(bad, R, sizeof bad);
    bad[10 * 2] = -1.0;
    expect_refused(&q, "inv_mass_rigid[body 2]: negative diagonal entry 0");
    memcpy(bad, R, sizeof bad);
    bad[10 * 4 + 2] += 0.5; /* A[0][1] ≠ A[1][0] */
    expect_refused(&q, "inv_mass_rigid[body 4]: not symmetric");
    memcpy(bad, R, sizeof bad);
    for (int k = 0; k < 9; k++) bad[10 * 6 + 1 + k] = k % 4 == 0 ? 1.0 : 2.0; /* eigenvalues 5, −1, −1 */
    expect_refused(&q, "inv_mass_rigid[body 6]: not positive semidefinite");
    free(t);
}

/* dvi_ccp_frames.frame_f, arm_f: the same contacts in single precision (as
 * the world gives them) give the rows of the rounded numbers: the objective
 * and the answers of APGD and PGS agree with the double-precision problem to
 * the rounding (about 1e-7 relative), an iteration moves fewer bytes, the
 * writer expands them into columns, and bad input is refused by name. */
static void test_single_precision_frames(void** state)
{
    (void)state;
    case_t* t = malloc(sizeof *t);
    assert_non_null(t);
    build(t, false);
    float frame_f[9 * NC], arm_f[6 * NC];
    for (int k = 0; k < 9 * NC; k++) frame_f[k] = (float)t->frame[k];
    for (int k = 0; k < 6 * NC; k++) arm_f[k] = (float)t->arm[k];
    dvi_ccp_frames F = {.count = NC, .block = t->fblock, .body = t->fbody, .ell = t->ell, .frame_f = frame_f,
                        .arm_f = arm_f};
    dvi_ccp_problem q = t->pf;
    q.frames = &F;
    char msg[256];
    assert_int_equal(dvi_ccp_validate(&q, msg, sizeof msg), DVI_OK);
    double g[MAXROWS];
    some_gamma(t, g);
    dvi_ccp_metrics md, ms;
    assert_int_equal(dvi_ccp_evaluate(&t->pf, g, &md), DVI_OK);
    assert_int_equal(dvi_ccp_evaluate(&q, g, &ms), DVI_OK);
    const double rel = fabs(ms.objective - md.objective) / fabs(md.objective);
    print_message("objective %.15g (double) %.15g (single): relative difference %.2e\n", md.objective, ms.objective, rel);
    assert_true(rel > 0.0 && rel < 1e-6); /* rounded, and only by the rounding */
    static const char* const SOLVERS[2] = {"apgd", "pgs"};
    for (int s = 0; s < 2; s++) {
        dvi_solver_settings set = dvi_default_solver_settings();
        set.tolerance = 1e-9;
        set.max_iterations = 200000;
        double gd[MAXROWS] = {0}, gs[MAXROWS] = {0};
        dvi_solve_result rd, rs;
        memset(&rd, 0, sizeof rd);
        memset(&rs, 0, sizeof rs);
        assert_int_equal(dvi_ccp_solve(&t->pf, SOLVERS[s], &set, gd, &rd), DVI_OK);
        assert_int_equal(dvi_ccp_solve(&q, SOLVERS[s], &set, gs, &rs), DVI_OK);
        double dmax = 0.0, gmax = 0.0;
        for (int i = 0; i < t->rows; i++) {
            dmax = fmax(dmax, fabs(gs[i] - gd[i]));
            gmax = fmax(gmax, fabs(gd[i]));
        }
        print_message("%-5s double: %d iterations, %.0f bytes/iteration; single: %d iterations, %.0f bytes/iteration, "
                      "residual %.2e; max |γ_s − γ_d| / max |γ_d| = %.2e\n",
                      SOLVERS[s], rd.iterations, rd.bytes_per_iteration, rs.iterations, rs.bytes_per_iteration,
                      rs.metrics.residual, dmax / gmax);
        assert_int_equal(rs.status, DVI_SOLVE_CONVERGED);
        assert_true(rs.metrics.residual <= 1e-9);
        assert_true(dmax <= 1e-5 * gmax);
        assert_true(rs.bytes_per_iteration < rd.bytes_per_iteration);
    }
    double vd[6 * NB], vs[6 * NB];
    assert_int_equal(dvi_ccp_velocity(&t->pf, g, vd), DVI_OK);
    assert_int_equal(dvi_ccp_velocity(&q, g, vs), DVI_OK);
    for (int i = 0; i < 6 * NB; i++) assert_near(vs[i], vd[i], 1e-6 * (1.0 + fabs(vd[i])));
    /* the writer expands the single-precision rows into columns */
    char* text = NULL;
    size_t len = 0;
    assert_int_equal(dvi_ccp_problem_format_json(&q, NULL, NULL, &text, &len, msg, sizeof msg), DVI_OK);
    dvi_ccp_file* f = NULL;
    assert_int_equal(dvi_ccp_problem_parse_json(text, len, &f, msg, sizeof msg), DVI_OK);
    dvi_ccp_metrics mf;
    assert_int_equal(dvi_ccp_evaluate(&f->problem, g, &mf), DVI_OK);
    assert_near(mf.objective, ms.objective, 1e-12 * (1.0 + fabs(ms.objective)));
    dvi_ccp_file_free(f);
    free(text);

    dvi_ccp_frames G = F;
    dvi_ccp_problem p = q;
    p.frames = &G;
    G.frame = t->frame;
    expect_refused(&p, "give one pair, not both");
    G = F;
    G.arm_f = NULL;
    expect_refused(&p, "frame and arm (or frame_f and arm_f) must all be given");
    G = F;
    float bad[9 * NC];
    memcpy(bad, frame_f, sizeof bad);
    bad[4] = NAN;
    G.frame_f = bad;
    expect_refused(&p, "frames.frame_f[4]: not finite");
    free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_operator),
        cmocka_unit_test(test_solvers_agree),
        cmocka_unit_test(test_solver_velocity),
        cmocka_unit_test(test_growing_layouts),
        cmocka_unit_test(test_writer_expands),
        cmocka_unit_test(test_bad_frames),
        cmocka_unit_test(test_rigid_layout),
        cmocka_unit_test(test_single_precision_frames),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
