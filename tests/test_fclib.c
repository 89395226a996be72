/* FCLIB files (src/io/fclib_*.c): reading, conversion, residuals, solvers,
 * writing, bad files.
 *
 * On the six reference files of tests/data/fclib: each is read and
 * checked against the raw datasets read here with plain HDF5 (q and μ bit
 * for bit; local W against the stored matrix; global problems against a
 * dense H' M⁻¹ H and H' M⁻¹ f + w computed here, in both the factor form and
 * the CHOLMOD Delassus form, and again after writing them as local files);
 * the residuals of dvi_fclib_evaluate against the FCLIB formula implemented
 * here independently; APGD reaches a CCP residual of 1e-6 on every file
 * within 10,000 iterations, PGS and Lemke (files of at most 60 contacts)
 * are run and reported with both residuals. Writing: a problem written and
 * read back has the same W, q, μ bit for bit, the file bytes do not depend
 * on the run, frictionless blocks and the factor form are converted,
 * bilateral and rolling blocks are refused; with libfclib installed its
 * reader and writer are cross-checked against ours. Bad files (missing or
 * malformed datasets, NaN, truncations, damaged bytes, not HDF5) give
 * errors naming the place. The `dvi solve` command on an FCLIB file. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#ifdef DVI_HAVE_LIBFCLIB
#include <fclib.h>
#endif
#include <hdf5.h>
#include <lapacke.h>

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dvi/io.h"
#include "hash_rng.h"
#include "test_util.h"


#define FCLIB_DIR SRC_PATH("tests/data/fclib")

typedef struct ref_file {
    const char* name;
    int32_t contacts;
    bool global;
    bool symmetrized; /* the file's W (local) or M (global) fails the 1e-9 symmetry test */
    bool triangular;  /* ... and is stored as one triangle (LMGC90's dumps) */
} ref_file;

static const ref_file REFS[] = {
    {"CubeH8", 1, true, false, true}, /* M: its upper triangle only (3,006 off-diagonal entries) */
    {"OneObject-i1028-138", 23, false, true, false},
    {"local_problem_test", 48, false, false, false},
    {"LMGC_100_PR_PerioBox-i00361-60-03000", 60, false, false, false},
    {"Box_Stacks-i0122-82-5", 82, true, false, false},
    {"Capsules-i125-1213", 286, false, true, false},
};
#define NREFS ((int)(sizeof REFS / sizeof REFS[0]))

static void ref_path(const ref_file* r, char* out, size_t n)
{
    snprintf(out, n, "%s/%s.hdf5", FCLIB_DIR, r->name);
}

/* ---- small helpers -------------------------------------------------------------------- */

static double max_abs(const double* x, int n)
{
    double m = 0.0;
    for (int i = 0; i < n; i++)
        if (fabs(x[i]) > m) m = fabs(x[i]);
    return m;
}

static double rel_diff(const double* a, const double* b, int n)
{
    double d = 0.0;
    for (int i = 0; i < n; i++)
        if (fabs(a[i] - b[i]) > d) d = fabs(a[i] - b[i]);
    double s = max_abs(b, n);
    return s > 0.0 ? d / s : d;
}

/* y = N x for a problem in either form (no compliance in FCLIB problems). */
static void problem_apply(const dvi_ccp_problem* p, const double* x, double* y)
{
    if (p->W) {
        const dvi_csc* W = p->W;
        memset(y, 0, (size_t)p->rows * sizeof(double));
        for (int32_t j = 0; j < p->rows; j++)
            for (int32_t k = W->colptr[j]; k < W->colptr[j + 1]; k++) y[W->rowind[k]] += W->values[k] * x[j];
        return;
    }
    const dvi_csc* D = p->D;
    size_t nd = 6 * (size_t)p->body_count;
    double* v = calloc(nd + 1, sizeof(double));
    double* mv = calloc(nd + 1, sizeof(double));
    assert_non_null(v);
    assert_non_null(mv);
    for (int32_t j = 0; j < p->rows; j++)
        for (int32_t k = D->colptr[j]; k < D->colptr[j + 1]; k++) v[D->rowind[k]] += D->values[k] * x[j];
    for (int32_t b = 0; b < p->body_count; b++)
        for (int i = 0; i < 6; i++)
            for (int j = 0; j < 6; j++) mv[6 * b + i] += p->inv_mass[36 * (size_t)b + 6 * i + j] * v[6 * b + j];
    for (int32_t j = 0; j < p->rows; j++) {
        double s = 0.0;
        for (int32_t k = D->colptr[j]; k < D->colptr[j + 1]; k++) s += D->values[k] * mv[D->rowind[k]];
        y[j] = s;
    }
    free(v);
    free(mv);
}

/* ---- raw datasets, read here with plain HDF5 ----------------------------------------------- */

static double* raw_reals(hid_t f, const char* path, int* n)
{
    hid_t ds = H5Dopen2(f, path, H5P_DEFAULT);
    assert_true(ds >= 0);
    hid_t sp = H5Dget_space(ds);
    hssize_t np = H5Sget_simple_extent_npoints(sp);
    double* v = malloc(((size_t)np + 1) * sizeof(double));
    assert_non_null(v);
    assert_true(H5Dread(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0);
    H5Sclose(sp);
    H5Dclose(ds);
    if (n) *n = (int)np;
    return v;
}

static int* raw_ints(hid_t f, const char* path, int* n)
{
    hid_t ds = H5Dopen2(f, path, H5P_DEFAULT);
    assert_true(ds >= 0);
    hid_t sp = H5Dget_space(ds);
    hssize_t np = H5Sget_simple_extent_npoints(sp);
    int* v = malloc(((size_t)np + 1) * sizeof(int));
    assert_non_null(v);
    assert_true(H5Dread(ds, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0);
    H5Sclose(sp);
    H5Dclose(ds);
    if (n) *n = (int)np;
    return v;
}

static int raw_int(hid_t f, const char* path)
{
    int* v = raw_ints(f, path, NULL);
    int x = v[0];
    free(v);
    return x;
}

/* A matrix group as a dense column-major rows × cols array (README
 * conventions: CSR nz = −2, CSC −1, triplet i = row, p = column; duplicates
 * summed). */
static double* raw_dense(hid_t f, const char* g, int* rows, int* cols)
{
    char path[128];
    snprintf(path, sizeof path, "%s/m", g);
    int m = raw_int(f, path);
    snprintf(path, sizeof path, "%s/n", g);
    int n = raw_int(f, path);
    snprintf(path, sizeof path, "%s/nz", g);
    int nz = raw_int(f, path);
    snprintf(path, sizeof path, "%s/p", g);
    int* p = raw_ints(f, path, NULL);
    snprintf(path, sizeof path, "%s/i", g);
    int* ix = raw_ints(f, path, NULL);
    snprintf(path, sizeof path, "%s/x", g);
    double* x = raw_reals(f, path, NULL);
    double* A = calloc((size_t)m * n + 1, sizeof(double));
    assert_non_null(A);
    if (nz == -2) {
        for (int r = 0; r < m; r++)
            for (int k = p[r]; k < p[r + 1]; k++) A[(size_t)ix[k] * m + r] += x[k];
    } else if (nz == -1) {
        for (int c = 0; c < n; c++)
            for (int k = p[c]; k < p[c + 1]; k++) A[(size_t)c * m + ix[k]] += x[k];
    } else {
        for (int k = 0; k < nz; k++) A[(size_t)p[k] * m + ix[k]] += x[k];
    }
    free(p);
    free(ix);
    free(x);
    *rows = m;
    *cols = n;
    return A;
}

/* The raw local problem: W (dense, as stored), q, μ. */
typedef struct raw_local {
    int m, nc;
    double* W;
    double* q;
    double* mu;
} raw_local;

static raw_local raw_local_read(const char* path)
{
    raw_local r;
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    assert_true(f >= 0);
    int n2 = 0;
    r.W = raw_dense(f, "/fclib_local/W", &r.m, &n2);
    r.q = raw_reals(f, "/fclib_local/vectors/q", NULL);
    r.mu = raw_reals(f, "/fclib_local/vectors/mu", &r.nc);
    H5Fclose(f);
    return r;
}

static void raw_local_free(raw_local* r)
{
    free(r->W);
    free(r->q);
    free(r->mu);
}

/* The raw global problem, densely: M factorised (LAPACK) — M completed from
 * its triangle when every stored off-diagonal entry lies on one side of the
 * diagonal, else M's symmetric part —
 * H, f, w, μ; W x = Hᵀ M⁻¹ H x and q = Hᵀ M⁻¹ f + w computed from them. */
typedef struct raw_global {
    int n, m, nc;
    bool triangle; /* M was stored as one triangle */
    double* L; /* Cholesky factor of M (completed) or of (M + Mᵀ)/2, column-major */
    double* H; /* n × m column-major */
    double* f;
    double* w;
    double* mu;
} raw_global;

static raw_global raw_global_read(const char* path)
{
    raw_global g;
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    assert_true(f >= 0);
    int n2 = 0, n3 = 0;
    g.L = raw_dense(f, "/fclib_global/M", &g.n, &n2);
    assert_int_equal(g.n, n2);
    g.H = raw_dense(f, "/fclib_global/H", &n3, &g.m);
    assert_int_equal(n3, g.n);
    g.f = raw_reals(f, "/fclib_global/vectors/f", NULL);
    g.w = raw_reals(f, "/fclib_global/vectors/w", NULL);
    g.mu = raw_reals(f, "/fclib_global/vectors/mu", &g.nc);
    H5Fclose(f);
    long below = 0, above = 0; /* column-major: (i, j) at j n + i */
    for (int j = 0; j < g.n; j++)
        for (int i = 0; i < g.n; i++) {
            if (i > j && g.L[(size_t)j * g.n + i] != 0.0) below++;
            if (i < j && g.L[(size_t)j * g.n + i] != 0.0) above++;
        }
    g.triangle = (below > 0) != (above > 0);
    for (int j = 0; j < g.n; j++)
        for (int i = j + 1; i < g.n; i++) {
            double lo = g.L[(size_t)j * g.n + i], up = g.L[(size_t)i * g.n + j];
            double s = g.triangle ? lo + up : 0.5 * (lo + up); /* one of the two is 0 in a triangle */
            g.L[(size_t)j * g.n + i] = g.L[(size_t)i * g.n + j] = s;
        }
    assert_int_equal(LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', g.n, g.L, g.n), 0);
    return g;
}

static void raw_global_free(raw_global* g)
{
    free(g->L);
    free(g->H);
    free(g->f);
    free(g->w);
    free(g->mu);
}

/* y = Hᵀ M⁻¹ (H x + add) (+ w when with_w): the global operator, densely. */
static void raw_global_apply(const raw_global* g, const double* x, const double* add, bool with_w, double* y)
{
    double* t = calloc((size_t)g->n + 1, sizeof(double));
    assert_non_null(t);
    for (int c = 0; c < g->m; c++)
        if (x[c] != 0.0)
            for (int r = 0; r < g->n; r++) t[r] += g->H[(size_t)c * g->n + r] * x[c];
    if (add)
        for (int r = 0; r < g->n; r++) t[r] += add[r];
    assert_int_equal(LAPACKE_dpotrs(LAPACK_COL_MAJOR, 'L', g->n, 1, g->L, g->n, t, g->n), 0);
    for (int c = 0; c < g->m; c++) {
        double s = 0.0;
        for (int r = 0; r < g->n; r++) s += g->H[(size_t)c * g->n + r] * t[r];
        y[c] = s + (with_w ? g->w[c] : 0.0);
    }
    free(t);
}

/* ---- the FCLIB residual, written here from the reference README -------------------------- */

/* Siconos's projectionOnCone, in its order of tests. */
static void cone_project(double mu, double* x)
{
    double nt = hypot(x[1], x[2]);
    if (mu * nt <= -x[0]) {
        x[0] = x[1] = x[2] = 0.0;
    } else if (nt > mu * x[0]) {
        x[0] = (mu * nt + x[0]) / (mu * mu + 1.0);
        x[1] *= mu * x[0] / nt;
        x[2] *= mu * x[0] / nt;
    }
}

/* e / max(‖q‖, ‖r‖, ‖u‖) with e² = Σ ‖r_a − Π(r_a − ũ_a)‖², ũ_a = u_a + μ‖u_T‖e_N
 * (coulomb) or u_a (the CCP residual); u = W r + q given. */
static double readme_error(int nc, const double* mu, const double* q, const double* r, const double* u, bool coulomb)
{
    double e = 0.0, nq = 0.0, nr = 0.0, nu = 0.0;
    for (int a = 0; a < nc; a++) {
        double x[3];
        double ut = coulomb ? mu[a] * hypot(u[3 * a + 1], u[3 * a + 2]) : 0.0;
        x[0] = r[3 * a] - (u[3 * a] + ut);
        x[1] = r[3 * a + 1] - u[3 * a + 1];
        x[2] = r[3 * a + 2] - u[3 * a + 2];
        cone_project(mu[a], x);
        for (int i = 0; i < 3; i++) e += (r[3 * a + i] - x[i]) * (r[3 * a + i] - x[i]);
    }
    for (int i = 0; i < 3 * nc; i++) {
        nq += q[i] * q[i];
        nr += r[i] * r[i];
        nu += u[i] * u[i];
    }
    double s = sqrt(fmax(nq, fmax(nr, nu)));
    return s > 1e-300 ? sqrt(e) / s : sqrt(e);
}

/* ---- reading the reference files ---------------------------------------------------------- */

static void test_read_reference(void** state)
{
    (void)state;
    for (int f = 0; f < NREFS; f++) {
        const ref_file* R = &REFS[f];
        char path[512], msg[512];
        ref_path(R, path, sizeof path);
        dvi_ccp_file* file = NULL;
        dvi_fclib_info info;
        dvi_status st = dvi_fclib_read_ex(path, 0, &file, &info, msg, sizeof msg);
        if (st != DVI_OK) print_error("%s\n", msg);
        assert_int_equal(st, DVI_OK);
        assert_string_equal(msg, "");
        const dvi_ccp_problem* p = &file->problem;
        assert_int_equal(dvi_ccp_validate(p, NULL, 0), DVI_OK);
        assert_int_equal(info.kind, R->global ? DVI_FCLIB_GLOBAL : DVI_FCLIB_LOCAL);
        assert_int_equal(info.contacts, R->contacts);
        assert_int_equal(info.equalities, 0);
        assert_int_equal(p->rows, 3 * R->contacts);
        assert_int_equal(p->block_count, R->contacts);
        assert_int_equal(info.symmetrized, R->symmetrized);
        assert_int_equal(info.triangular, R->triangular);
        if (!R->symmetrized) assert_true(info.asymmetry < 1e-9);
        for (int32_t b = 0; b < p->block_count; b++) assert_int_equal(p->blocks[b].kind, DVI_BLOCK_FRICTION);
        uint64_t seed = 99 + (uint64_t)f;
        int m = p->rows;
        double* x = malloc((size_t)m * sizeof(double));
        double* y = malloc((size_t)m * sizeof(double));
        double* z = malloc((size_t)m * sizeof(double));
        for (int i = 0; i < m; i++) x[i] = base_uniform_sym(&seed);
        problem_apply(p, x, y);
        if (!R->global) {
            raw_local raw = raw_local_read(path);
            assert_int_equal(raw.m, m);
            assert_int_equal(raw.nc, R->contacts);
            assert_memory_equal(p->r, raw.q, (size_t)m * sizeof(double)); /* q bit for bit */
            for (int a = 0; a < raw.nc; a++) assert_memory_equal(&p->blocks[a].mu, &raw.mu[a], sizeof(double));
            /* the operator: W (or its symmetric part) */
            for (int i = 0; i < m; i++) {
                double s = 0.0;
                for (int j = 0; j < m; j++) {
                    double wij = raw.W[(size_t)j * m + i];
                    if (R->symmetrized) wij = 0.5 * (wij + raw.W[(size_t)i * m + j]);
                    s += wij * x[j];
                }
                z[i] = s;
            }
            assert_true(rel_diff(y, z, m) < 1e-13);
            raw_local_free(&raw);
            assert_true(info.dofs == 0 && info.mass_blocks == 0);
            assert_true(R->symmetrized == (info.file_operator != NULL));
        } else {
            raw_global g = raw_global_read(path);
            assert_int_equal(g.m, m);
            for (int a = 0; a < g.nc; a++) assert_memory_equal(&p->blocks[a].mu, &g.mu[a], sizeof(double));
            raw_global_apply(&g, x, NULL, false, z);
            double e1 = rel_diff(y, z, m);
            double* q = malloc((size_t)m * sizeof(double));
            memset(z, 0, (size_t)m * sizeof(double));
            raw_global_apply(&g, z, g.f, true, q); /* Hᵀ M⁻¹ f + w */
            double e2 = rel_diff(p->r, q, m);
            print_message("%-38s global: |N x - H'M^-1H x|/|.| = %.1e, |r - (H'M^-1 f + w)|/|.| = %.1e (%s)\n",
                          R->name, e1, e2, p->D ? "factor form" : "CHOLMOD W");
            assert_true(e1 < 1e-10);
            assert_true(e2 < 1e-10);
            assert_int_equal(info.dofs, g.n);
            free(q);
            raw_global_free(&g);
        }
        free(x);
        free(y);
        free(z);
        dvi_ccp_file_free(file);
        dvi_fclib_info_clear(&info);
    }
    /* the stored solutions and guesses */
    char path[512], msg[512];
    dvi_ccp_file* file = NULL;
    dvi_fclib_info info;
    ref_path(&REFS[4], path, sizeof path); /* Box_Stacks: r, u, v and a guess */
    assert_int_equal(dvi_fclib_read_ex(path, 0, &file, &info, msg, sizeof msg), DVI_OK);
    assert_non_null(file->solution);
    assert_non_null(file->gamma0);
    assert_non_null(info.u);
    assert_non_null(info.v);
    assert_int_equal(info.guesses, 1);
    assert_true(isfinite(info.u_mismatch) && isfinite(info.v_mismatch));
    assert_true(file->problem.D != NULL);
    assert_int_equal(file->problem.body_count, 75); /* 450 degrees of freedom in groups of 6 */
    assert_int_equal(info.mass_blocks, 450);         /* M is diagonal */
    print_message("Box_Stacks stored solution: u vs W r + q %.2g, v vs M^-1 (H r + f) %.2g (not a valid reference)\n",
                  info.u_mismatch, info.v_mismatch);
    dvi_ccp_file_free(file);
    dvi_fclib_info_clear(&info);
    assert_null(info.u);
    /* the short form, NULL info */
    ref_path(&REFS[2], path, sizeof path);
    assert_int_equal(dvi_fclib_read(path, &file, msg, sizeof msg), DVI_OK);
    assert_non_null(file->solution);
    dvi_ccp_file_free(file);
    /* bad arguments */
    assert_int_equal(dvi_fclib_read(NULL, &file, msg, sizeof msg), DVI_ERR_INVALID_ARG);
    assert_int_equal(dvi_fclib_read_ex(path, 0x10u, &file, NULL, msg, sizeof msg), DVI_ERR_INVALID_ARG);
    assert_null(file);
}

/* Global problems in the three ways: factor form, CHOLMOD W, and as a local
 * file written by the library and read back; all against the dense product. */
static void test_global_conversion(void** state)
{
    (void)state;
    char dir[] = "/tmp/dvi_fclib_XXXXXX";
    assert_non_null(mkdtemp(dir));
    for (int f = 0; f < NREFS; f++) {
        const ref_file* R = &REFS[f];
        if (!R->global) continue;
        char path[512], out[600], msg[512];
        ref_path(R, path, sizeof path);
        raw_global g = raw_global_read(path);
        int m = g.m;
        double* x = malloc((size_t)m * sizeof(double));
        double* y = malloc((size_t)m * sizeof(double));
        double* z = malloc((size_t)m * sizeof(double));
        uint64_t seed = 7;
        for (int i = 0; i < m; i++) x[i] = base_uniform_sym(&seed);
        raw_global_apply(&g, x, NULL, false, z);
        for (int way = 0; way < 3; way++) {
            dvi_ccp_file* file = NULL;
            dvi_status st;
            if (way < 2) {
                st = dvi_fclib_read_ex(path, way == 1 ? DVI_FCLIB_DELASSUS : 0u, &file, NULL, msg, sizeof msg);
            } else {
                dvi_ccp_file* gf = NULL;
                assert_int_equal(dvi_fclib_read(path, &gf, msg, sizeof msg), DVI_OK);
                snprintf(out, sizeof out, "%s/%s-local.hdf5", dir, R->name);
                assert_int_equal(dvi_fclib_write_local(&gf->problem, NULL, out, msg, sizeof msg), DVI_OK);
                dvi_ccp_file_free(gf);
                dvi_fclib_info li;
                st = dvi_fclib_read_ex(out, 0, &file, &li, msg, sizeof msg);
                assert_int_equal(li.kind, DVI_FCLIB_LOCAL);
                dvi_fclib_info_clear(&li);
            }
            if (st != DVI_OK) print_error("%s\n", msg);
            assert_int_equal(st, DVI_OK);
            if (way == 1 || way == 2) assert_non_null(file->problem.W);
            problem_apply(&file->problem, x, y);
            double e = rel_diff(y, z, m);
            print_message("%-38s %-22s |W x - H'M^-1H x|/|.| = %.1e\n", R->name,
                          way == 0 ? (file->problem.D ? "factor form" : "default (CHOLMOD W)")
                                   : way == 1 ? "DVI_FCLIB_DELASSUS" : "written local, read",
                          e);
            assert_true(e < 1e-10);
            dvi_ccp_file_free(file);
        }
        free(x);
        free(y);
        free(z);
        raw_global_free(&g);
        remove(out);
    }
    rmdir(dir);
}

/* dvi_fclib_file_W: the file's own W for a local file (its raw W, entry for
 * entry, also where the problem holds the symmetric part), p->W for a global
 * file in the Delassus form, DVI_ERR_UNSUPPORTED in the factor form. */
static void test_file_W(void** state)
{
    (void)state;
    for (int f = 0; f < NREFS; f++) {
        const ref_file* R = &REFS[f];
        char path[512], msg[512];
        ref_path(R, path, sizeof path);
        for (int way = 0; way < 2; way++) {
            dvi_ccp_file* file = NULL;
            dvi_fclib_info info;
            assert_int_equal(dvi_fclib_read_ex(path, way ? DVI_FCLIB_DELASSUS : 0u, &file, &info, msg, sizeof msg),
                             DVI_OK);
            const dvi_ccp_problem* p = &file->problem;
            dvi_csc W;
            dvi_status st = dvi_fclib_file_W(p, &info, &W);
            if (!p->W) {
                assert_int_equal(st, DVI_ERR_UNSUPPORTED); /* the factor form: Box_Stacks */
            } else if (R->global) {
                assert_int_equal(st, DVI_OK);
                assert_ptr_equal(W.values, p->W->values);
            } else {
                assert_int_equal(st, DVI_OK);
                raw_local raw = raw_local_read(path);
                assert_int_equal(W.rows, raw.m);
                assert_int_equal(W.cols, raw.m);
                double* A = calloc((size_t)raw.m * raw.m + 1, sizeof(double));
                assert_non_null(A);
                for (int c = 0; c < W.cols; c++)
                    for (int k = W.colptr[c]; k < W.colptr[c + 1]; k++) A[(size_t)c * raw.m + W.rowind[k]] += W.values[k];
                for (size_t k = 0; k < (size_t)raw.m * raw.m; k++) assert_true(A[k] == raw.W[k]);
                assert_true((W.values != p->W->values) == R->symmetrized);
                free(A);
                raw_local_free(&raw);
            }
            assert_int_equal(dvi_fclib_file_W(NULL, &info, &W), DVI_ERR_INVALID_ARG);
            assert_int_equal(dvi_fclib_file_W(p, &info, NULL), DVI_ERR_INVALID_ARG);
            dvi_ccp_file_free(file);
            dvi_fclib_info_clear(&info);
        }
    }
}

/* dvi_fclib_evaluate gives the README's residuals, computed here from the raw
 * data, for several γ. */
static void test_residual_formula(void** state)
{
    (void)state;
    for (int f = 0; f < NREFS; f++) {
        const ref_file* R = &REFS[f];
        char path[512], msg[512];
        ref_path(R, path, sizeof path);
        dvi_ccp_file* file = NULL;
        dvi_fclib_info info;
        assert_int_equal(dvi_fclib_read_ex(path, 0, &file, &info, msg, sizeof msg), DVI_OK);
        const dvi_ccp_problem* p = &file->problem;
        int m = p->rows, nc = m / 3;
        double* mu = malloc((size_t)nc * sizeof(double));
        for (int a = 0; a < nc; a++) mu[a] = p->blocks[a].mu;
        double* gam = malloc((size_t)m * sizeof(double));
        double* u = malloc((size_t)m * sizeof(double));
        raw_local L = {0};
        raw_global G = {0};
        if (R->global) G = raw_global_read(path);
        else L = raw_local_read(path);
        dvi_solver_settings s = dvi_default_solver_settings();
        s.max_iterations = 50;
        for (int trial = 0; trial < 3; trial++) {
            uint64_t seed = 5 + (uint64_t)trial;
            if (trial == 0) memset(gam, 0, (size_t)m * sizeof(double));
            if (trial == 1)
                for (int i = 0; i < m; i++) gam[i] = base_uniform_sym(&seed);
            if (trial == 2) { /* a rough APGD iterate: near a solution, some contacts sliding */
                dvi_solve_result res;
                memset(&res, 0, sizeof res);
                assert_true(dvi_ccp_solve(p, "apgd", &s, gam, &res) >= 0);
            }
            if (R->global) {
                raw_global_apply(&G, gam, G.f, true, u);
            } else {
                for (int i = 0; i < m; i++) {
                    double t = L.q[i];
                    for (int j = 0; j < m; j++) t += L.W[(size_t)j * m + i] * gam[j];
                    u[i] = t;
                }
            }
            double ccp = readme_error(nc, mu, p->r, gam, u, false);
            double cou = readme_error(nc, mu, p->r, gam, u, true);
            dvi_ccp_metrics met;
            assert_int_equal(dvi_fclib_evaluate(p, &info, gam, &met), DVI_OK);
            assert_near(met.residual, ccp, 1e-9 * ccp + 1e-13);
            assert_near(met.residual_coulomb, cou, 1e-9 * cou + 1e-13);
            if (!info.symmetrized || R->global) { /* same as the library's evaluation */
                dvi_ccp_metrics m2;
                assert_int_equal(dvi_ccp_evaluate(p, gam, &m2), DVI_OK);
                assert_near(m2.residual_coulomb, met.residual_coulomb, 1e-12 * cou + 1e-15);
            }
        }
        if (R->global) raw_global_free(&G);
        else raw_local_free(&L);
        free(mu);
        free(gam);
        free(u);
        dvi_ccp_file_free(file);
        dvi_fclib_info_clear(&info);
    }
}

/* APGD to 1e-6 on every file; PGS and Lemke reported. */
/* Lemke's answer does not depend on threads or on the CPU: its dense
 * algebra is the library's own (src/ccp/dense.c), in a fixed order. On
 * Capsules (286 contacts, some thousand pivots) one and two solver threads
 * give the same pivots, status and γ bit for bit (with OpenBLAS's threads
 * they once gave 839 against 842 pivots on a 404-contact problem of the
 * same family). The line printed (pivots and a hash of γ's bytes) is the
 * same under every OPENBLAS_NUM_THREADS and OPENBLAS_CORETYPE
 * (docs/performance.md#dense-algebra-own-kernels-or-blas). */
static void test_lemke_blas_threads(void** state)
{
    (void)state;
    char path[512], msg[512];
    snprintf(path, sizeof path, "%s/Capsules-i125-1213.hdf5", FCLIB_DIR);
    dvi_ccp_file* file = NULL;
    dvi_fclib_info info;
    assert_int_equal(dvi_fclib_read_ex(path, 0, &file, &info, msg, sizeof msg), DVI_OK);
    const int m = file->problem.rows;
    double* g[2];
    dvi_solve_result res[2];
    for (int k = 0; k < 2; k++) {
        g[k] = calloc((size_t)m, sizeof(double));
        assert_non_null(g[k]);
        dvi_solver_settings s = dvi_default_solver_settings();
        s.tolerance = 1e-8;
        s.threads = k + 1;
        memset(&res[k], 0, sizeof res[k]);
        dvi_ccp_solve(&file->problem, "lemke", &s, g[k], &res[k]);
    }
    uint64_t h = 14695981039346656037u; /* FNV-1a over γ's bytes */
    const unsigned char* bytes = (const unsigned char*)g[0];
    for (size_t i = 0; i < (size_t)m * sizeof(double); i++) h = (h ^ bytes[i]) * 1099511628211u;
    print_message("Capsules, lemke on 1 and 2 threads: %d and %d pivots, %s and %s, gamma hash %016llx\n",
                  (int)res[0].iterations, (int)res[1].iterations, dvi_solve_status_string(res[0].status),
                  dvi_solve_status_string(res[1].status), (unsigned long long)h);
    assert_int_equal(res[0].iterations, res[1].iterations);
    assert_int_equal(res[0].status, res[1].status);
    assert_memory_equal(g[0], g[1], (size_t)m * sizeof(double));
    free(g[0]);
    free(g[1]);
    dvi_ccp_file_free(file);
    dvi_fclib_info_clear(&info);
}

static void test_solvers_reference(void** state)
{
    (void)state;
    print_message("%-38s %-6s %-15s %6s %11s %11s %9s\n", "problem", "solver", "status", "iters", "CCP res.",
                  "Coulomb", "ms");
    for (int f = 0; f < NREFS; f++) {
        const ref_file* R = &REFS[f];
        char path[512], msg[512];
        ref_path(R, path, sizeof path);
        dvi_ccp_file* file = NULL;
        dvi_fclib_info info;
        assert_int_equal(dvi_fclib_read_ex(path, 0, &file, &info, msg, sizeof msg), DVI_OK);
        const dvi_ccp_problem* p = &file->problem;
        double* gam = malloc((size_t)p->rows * sizeof(double));
        static const char* const names[3] = {"apgd", "pgs", "lemke"};
        for (int k = 0; k < 3; k++) {
            if (k == 2 && R->contacts > 60) continue;
            dvi_solver_settings s = dvi_default_solver_settings();
            s.tolerance = 1e-6;
            s.max_iterations = 10000;
            dvi_solve_result res;
            memset(&res, 0, sizeof res);
            dvi_status st = dvi_fclib_solve(names[k], &s, p, &info, gam, &res);
            print_message("%-38s %-6s %-15s %6d %11.3e %11.3e %9.3f%s%s\n", R->name, names[k],
                          dvi_solve_status_string(res.status), (int)res.iterations, res.metrics.residual,
                          res.metrics.residual_coulomb, 1e3 * res.seconds, res.message[0] ? "  " : "", res.message);
            assert_true(st >= 0);
            /* the reported metrics are those of the file's problem */
            dvi_ccp_metrics met;
            assert_int_equal(dvi_fclib_evaluate(p, &info, gam, &met), DVI_OK);
            assert_near(met.residual, res.metrics.residual, 1e-12);
            if (k == 0 && strncmp(R->name, "Capsules", 8) == 0) {
                /* its W is not symmetric (dvi_fclib_solve's splitting): the CCP residual reaches 1e-6
                 * but blocks of 1/1000 of ‖r‖ stay 1e-5 off in their own units (block residual) */
                assert_true(res.metrics.residual <= 1.001e-6);
            } else if (k == 0) {
                assert_int_equal(st, DVI_OK);
                assert_int_equal(res.status, DVI_SOLVE_CONVERGED);
                assert_true(res.metrics.residual <= 1e-6);
            }
            if (k == 2) { /* Lemke: its pyramid LCP; cone-feasible, near the CCP solution */
                assert_true(res.status != DVI_SOLVE_RAY && res.status != DVI_SOLVE_DIVERGED);
                assert_true(res.metrics.cone_violation <= 1e-9 * (1.0 + max_abs(gam, p->rows)));
                assert_true(res.metrics.residual < 0.1);
            }
        }
        free(gam);
        dvi_ccp_file_free(file);
        dvi_fclib_info_clear(&info);
    }
}

/* ---- writing -------------------------------------------------------------------------------- */

/* A random friction-only problem in the W form, W = A Aᵀ (made exactly symmetric). */
typedef struct mem_problem {
    dvi_ccp_problem p;
    dvi_ccp_block* blocks;
    dvi_csc W;
    int32_t* colptr;
    int32_t* rowind;
    double* values;
    double* r;
    double* sol;
} mem_problem;

static void make_problem(mem_problem* qp, int nc, uint64_t seed, bool frictionless_mix)
{
    mem_problem q;
    memset(&q, 0, sizeof q);
    q.blocks = calloc((size_t)nc, sizeof(dvi_ccp_block));
    int m = 0;
    for (int a = 0; a < nc; a++) {
        q.blocks[a].kind = frictionless_mix && a % 3 == 1 ? DVI_BLOCK_FRICTIONLESS : DVI_BLOCK_FRICTION;
        q.blocks[a].mu = q.blocks[a].kind == DVI_BLOCK_FRICTION ? 0.3 + 0.2 * base_uniform_sym(&seed) : 0.0;
        m += dvi_block_rows(q.blocks[a].kind);
    }
    /* dense symmetric W with a sparse-ish pattern: coupling between nearby rows */
    double* D = calloc((size_t)m * m, sizeof(double));
    for (int i = 0; i < m; i++)
        for (int j = i; j < m && j < i + 7; j++) {
            double v = i == j ? 8.0 + base_uniform_sym(&seed) : 0.5 * base_uniform_sym(&seed);
            D[(size_t)i * m + j] = D[(size_t)j * m + i] = v;
        }
    q.colptr = calloc((size_t)m + 1, sizeof(int32_t));
    q.rowind = malloc((size_t)m * m * sizeof(int32_t));
    q.values = malloc((size_t)m * m * sizeof(double));
    int32_t k = 0;
    for (int j = 0; j < m; j++) {
        for (int i = 0; i < m; i++)
            if (D[(size_t)i * m + j] != 0.0) {
                q.rowind[k] = i;
                q.values[k++] = D[(size_t)i * m + j];
            }
        q.colptr[j + 1] = k;
    }
    free(D);
    q.r = malloc((size_t)m * sizeof(double));
    q.sol = malloc((size_t)m * sizeof(double));
    for (int i = 0; i < m; i++) {
        q.r[i] = base_uniform_sym(&seed);
        q.sol[i] = base_uniform_sym(&seed);
    }
    q.W = (dvi_csc){m, m, q.colptr, q.rowind, q.values};
    q.p = dvi_ccp_problem_empty();
    q.p.rows = m;
    q.p.block_count = nc;
    q.p.blocks = q.blocks;
    q.p.r = q.r;
    *qp = q;
    qp->p.W = &qp->W; /* points into the caller's struct */
}

static void free_problem(mem_problem* q)
{
    free(q->blocks);
    free(q->colptr);
    free(q->rowind);
    free(q->values);
    free(q->r);
    free(q->sol);
}

static unsigned char* slurp(const char* path, size_t* n)
{
    FILE* f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char* b = malloc((size_t)len + 1);
    assert_int_equal(fread(b, 1, (size_t)len, f), (size_t)len);
    fclose(f);
    *n = (size_t)len;
    return b;
}

static void spit(const char* path, const void* data, size_t n)
{
    FILE* f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, n, f), n);
    fclose(f);
}

static void test_roundtrip(void** state)
{
    (void)state;
    char dir[] = "/tmp/dvi_fclib_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char a[600], b[600], msg[512];
    snprintf(a, sizeof a, "%s/a.hdf5", dir);
    snprintf(b, sizeof b, "%s/b.hdf5", dir);

    /* friction blocks, W form: W, q, μ and the solution bit for bit */
    mem_problem q;
    make_problem(&q, 20, 11, false);
    dvi_status st = dvi_fclib_write_local(&q.p, q.sol, a, msg, sizeof msg);
    if (st != DVI_OK) print_error("%s\n", msg);
    assert_int_equal(st, DVI_OK);
    dvi_ccp_file* file = NULL;
    dvi_fclib_info info;
    assert_int_equal(dvi_fclib_read_ex(a, 0, &file, &info, msg, sizeof msg), DVI_OK);
    const dvi_ccp_problem* p = &file->problem;
    assert_int_equal(p->rows, q.p.rows);
    assert_non_null(p->W);
    assert_false(info.symmetrized);
    assert_true(info.asymmetry == 0.0);
    assert_memory_equal(p->W->colptr, q.colptr, ((size_t)q.p.rows + 1) * sizeof(int32_t));
    assert_memory_equal(p->W->rowind, q.rowind, (size_t)q.colptr[q.p.rows] * sizeof(int32_t));
    assert_memory_equal(p->W->values, q.values, (size_t)q.colptr[q.p.rows] * sizeof(double));
    assert_memory_equal(p->r, q.r, (size_t)q.p.rows * sizeof(double));
    for (int32_t k = 0; k < q.p.block_count; k++) {
        assert_int_equal(p->blocks[k].kind, DVI_BLOCK_FRICTION);
        assert_memory_equal(&p->blocks[k].mu, &q.blocks[k].mu, sizeof(double));
    }
    assert_non_null(file->solution);
    assert_memory_equal(file->solution, q.sol, (size_t)q.p.rows * sizeof(double));
    assert_non_null(info.u);
    assert_true(info.u_mismatch < 1e-15); /* /solution/u = W r + q */
    assert_string_equal(info.title, "dvicontact CCP");
    dvi_ccp_file_free(file);
    dvi_fclib_info_clear(&info);

    /* the file's bytes do not depend on the run */
    st = dvi_fclib_write_local(&q.p, q.sol, b, msg, sizeof msg);
    if (st != DVI_OK) print_error("%s\n", msg);
    assert_int_equal(st, DVI_OK);
    size_t na, nb;
    unsigned char* ba = slurp(a, &na);
    unsigned char* bb = slurp(b, &nb);
    assert_int_equal(na, nb);
    assert_memory_equal(ba, bb, na);
    free(ba);
    free(bb);

    /* an existing file is replaced, not added to */
    mem_problem small;
    make_problem(&small, 3, 12, false);
    assert_int_equal(dvi_fclib_write_local(&small.p, NULL, a, msg, sizeof msg), DVI_OK);
    assert_int_equal(dvi_fclib_read(a, &file, msg, sizeof msg), DVI_OK);
    assert_int_equal(file->problem.rows, 9);
    assert_null(file->solution);
    dvi_ccp_file_free(file);
    free_problem(&small);

    /* frictionless blocks: contacts with μ = 0 and empty tangent rows */
    mem_problem fm;
    make_problem(&fm, 9, 13, true);
    assert_int_equal(dvi_fclib_write_local(&fm.p, fm.sol, a, msg, sizeof msg), DVI_OK);
    assert_int_equal(dvi_fclib_read(a, &file, msg, sizeof msg), DVI_OK);
    p = &file->problem;
    assert_int_equal(p->rows, 27);
    assert_int_equal(p->block_count, 9);
    {
        int32_t ours = 0;
        int32_t* map = malloc((size_t)fm.p.rows * sizeof(int32_t));
        for (int32_t k = 0; k < 9; k++) {
            assert_int_equal(p->blocks[k].kind, DVI_BLOCK_FRICTION);
            assert_true(p->blocks[k].mu == fm.blocks[k].mu);
            for (int32_t i = 0; i < dvi_block_rows(fm.blocks[k].kind); i++) map[ours++] = 3 * k + i;
            if (fm.blocks[k].kind == DVI_BLOCK_FRICTIONLESS) {
                assert_true(p->r[3 * k + 1] == 0.0 && p->r[3 * k + 2] == 0.0);
                assert_true(file->solution[3 * k + 1] == 0.0 && file->solution[3 * k + 2] == 0.0);
                for (int t = 1; t < 3; t++) /* empty tangent columns */
                    assert_int_equal(p->W->colptr[3 * k + t + 1], p->W->colptr[3 * k + t]);
            }
        }
        for (int32_t i = 0; i < fm.p.rows; i++) {
            assert_true(p->r[map[i]] == fm.r[i]);
            assert_true(file->solution[map[i]] == fm.sol[i]);
            for (int32_t e = fm.colptr[i]; e < fm.colptr[i + 1]; e++) { /* W entries in place */
                int32_t col = map[i], row = map[fm.rowind[e]];
                bool found = false;
                for (int32_t t = p->W->colptr[col]; t < p->W->colptr[col + 1]; t++)
                    if (p->W->rowind[t] == row) found = p->W->values[t] == fm.values[e];
                assert_true(found);
            }
        }
        free(map);
    }
    dvi_ccp_file_free(file);

    /* compliance is added to W's diagonal */
    double* comp = calloc((size_t)fm.p.rows, sizeof(double));
    for (int32_t i = 0; i < fm.p.rows; i++) comp[i] = 1e-3 * (i % 4);
    fm.p.compliance = comp;
    assert_int_equal(dvi_fclib_write_local(&fm.p, NULL, a, msg, sizeof msg), DVI_OK);
    assert_int_equal(dvi_fclib_read(a, &file, msg, sizeof msg), DVI_OK);
    {
        double* x = calloc((size_t)fm.p.rows, sizeof(double));
        double* y1 = calloc((size_t)fm.p.rows, sizeof(double));
        double* y2 = calloc((size_t)file->problem.rows, sizeof(double));
        double* x2 = calloc((size_t)file->problem.rows, sizeof(double));
        uint64_t seed = 3;
        for (int32_t i = 0, row = 0; i < fm.p.block_count; i++) {
            for (int32_t t = 0; t < dvi_block_rows(fm.blocks[i].kind); t++, row++) {
                x[row] = base_uniform_sym(&seed);
                x2[3 * i + t] = x[row];
            }
        }
        fm.p.compliance = NULL;
        problem_apply(&fm.p, x, y1);
        for (int32_t i = 0; i < fm.p.rows; i++) y1[i] += comp[i] * x[i];
        problem_apply(&file->problem, x2, y2);
        for (int32_t i = 0, row = 0; i < fm.p.block_count; i++)
            for (int32_t t = 0; t < dvi_block_rows(fm.blocks[i].kind); t++, row++)
                assert_near(y2[3 * i + t], y1[row], 1e-12 * (1.0 + fabs(y1[row])));
        free(x);
        free(x2);
        free(y1);
        free(y2);
    }
    dvi_ccp_file_free(file);
    free(comp);
    free_problem(&fm);

    /* bilateral and rolling blocks are refused, naming the block, and leave no file */
    remove(a);
    mem_problem bad;
    make_problem(&bad, 4, 14, false);
    bad.blocks[2].kind = DVI_BLOCK_BILATERAL; /* rows 6 and 7: keep W's leading 8 × 8 block */
    bad.blocks[3].kind = DVI_BLOCK_BILATERAL;
    bad.p.rows = 3 * 2 + 2;
    bad.W.rows = bad.W.cols = 8;
    {
        int32_t k = 0;
        for (int32_t j = 0; j < 8; j++) {
            int32_t start = bad.colptr[j], end = bad.colptr[j + 1];
            bad.colptr[j] = k;
            for (int32_t e = start; e < end; e++)
                if (bad.rowind[e] < 8) {
                    bad.rowind[k] = bad.rowind[e];
                    bad.values[k++] = bad.values[e];
                }
        }
        bad.colptr[8] = k;
    }
    assert_int_equal(dvi_ccp_validate(&bad.p, msg, sizeof msg), DVI_OK);
    assert_int_equal(dvi_fclib_write_local(&bad.p, NULL, a, msg, sizeof msg), DVI_ERR_UNSUPPORTED);
    assert_non_null(strstr(msg, "blocks[2]: bilateral"));
    struct stat sb;
    assert_true(stat(a, &sb) != 0);
    free_problem(&bad);
    free_problem(&q);

    /* the factor form is multiplied out (checked on Box_Stacks in test_global_conversion) and
       rolling blocks are refused */
    {
        dvi_ccp_block blk[1] = {{DVI_BLOCK_FRICTION_ROLLING, 0.5, 0.01, 0.01}};
        int32_t cp[7] = {0, 1, 2, 3, 4, 5, 6}, ri[6] = {0, 1, 2, 3, 4, 5};
        double v[6] = {1, 1, 1, 1, 1, 1}, r[6] = {-1, 0, 0, 0, 0, 0};
        dvi_csc W = {6, 6, cp, ri, v};
        dvi_ccp_problem rp = dvi_ccp_problem_empty();
        rp.rows = 6;
        rp.block_count = 1;
        rp.blocks = blk;
        rp.W = &W;
        rp.r = r;
        assert_int_equal(dvi_fclib_write_local(&rp, NULL, a, msg, sizeof msg), DVI_ERR_UNSUPPORTED);
        assert_non_null(strstr(msg, "blocks[0]: friction_rolling"));
    }

    /* reference files: local → write → read gives the same problem bit for bit
       (the symmetric part, for the files whose W is not symmetric) */
    for (int f = 0; f < NREFS; f++) {
        char path[512];
        ref_path(&REFS[f], path, sizeof path);
        dvi_ccp_file* f1 = NULL;
        dvi_ccp_file* f2 = NULL;
        assert_int_equal(dvi_fclib_read_ex(path, DVI_FCLIB_DELASSUS, &f1, NULL, msg, sizeof msg), DVI_OK);
        assert_int_equal(dvi_fclib_write_local(&f1->problem, f1->solution, a, msg, sizeof msg), DVI_OK);
        assert_int_equal(dvi_fclib_read(a, &f2, msg, sizeof msg), DVI_OK);
        const dvi_ccp_problem *p1 = &f1->problem, *p2 = &f2->problem;
        int32_t m = p1->rows, nnz = p1->W->colptr[m];
        assert_int_equal(p2->rows, m);
        assert_memory_equal(p2->W->colptr, p1->W->colptr, ((size_t)m + 1) * sizeof(int32_t));
        assert_memory_equal(p2->W->rowind, p1->W->rowind, (size_t)nnz * sizeof(int32_t));
        assert_memory_equal(p2->W->values, p1->W->values, (size_t)nnz * sizeof(double));
        assert_memory_equal(p2->r, p1->r, (size_t)m * sizeof(double));
        for (int32_t k = 0; k < p1->block_count; k++) assert_memory_equal(&p2->blocks[k].mu, &p1->blocks[k].mu, 8);
        dvi_ccp_file_free(f1);
        dvi_ccp_file_free(f2);
    }
    remove(a);
    remove(b);
    rmdir(dir);
}

#ifdef DVI_HAVE_LIBFCLIB
/* libfclib (the FCLIB project's reader and writer) reads our files as we
 * wrote them, and we read its files as it wrote them. */
static void test_libfclib_crosscheck(void** state)
{
    (void)state;
    char dir[] = "/tmp/dvi_fclib_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char a[600], b[600], msg[512];
    snprintf(a, sizeof a, "%s/ours.hdf5", dir);
    snprintf(b, sizeof b, "%s/theirs.hdf5", dir);
    char path[512];
    ref_path(&REFS[3], path, sizeof path); /* LMGC PerioBox, 60 contacts */
    dvi_ccp_file* f1 = NULL;
    assert_int_equal(dvi_fclib_read(path, &f1, msg, sizeof msg), DVI_OK);
    const dvi_ccp_problem* p = &f1->problem;
    int32_t m = p->rows, nnz = p->W->colptr[m];
    assert_int_equal(dvi_fclib_write_local(p, NULL, a, msg, sizeof msg), DVI_OK);
    struct fclib_local* L = fclib_read_local(a);
    assert_non_null(L);
    assert_int_equal(L->spacedim, 3);
    assert_int_equal(L->W->m, m);
    assert_int_equal(L->W->n, m);
    assert_int_equal(L->W->nz, -1);
    assert_int_equal(L->W->nzmax, nnz);
    assert_memory_equal(L->W->p, p->W->colptr, ((size_t)m + 1) * sizeof(int));
    assert_memory_equal(L->W->i, p->W->rowind, (size_t)nnz * sizeof(int));
    assert_memory_equal(L->W->x, p->W->values, (size_t)nnz * sizeof(double));
    assert_memory_equal(L->q, p->r, (size_t)m * sizeof(double));
    for (int32_t k = 0; k < p->block_count; k++) assert_memory_equal(&L->mu[k], &p->blocks[k].mu, sizeof(double));
    /* and the other way: libfclib writes, we read */
    assert_int_equal(fclib_write_local(L, b), 1);
    fclib_delete_local(L);
    free(L);
    dvi_ccp_file* f2 = NULL;
    assert_int_equal(dvi_fclib_read(b, &f2, msg, sizeof msg), DVI_OK);
    assert_memory_equal(f2->problem.W->values, p->W->values, (size_t)nnz * sizeof(double));
    assert_memory_equal(f2->problem.r, p->r, (size_t)m * sizeof(double));
    dvi_ccp_file_free(f2);
    dvi_ccp_file_free(f1);
    remove(a);
    remove(b);
    rmdir(dir);
}
#endif

/* ---- bad files ----------------------------------------------------------------------------- */

/* Writes a dataset (creating intermediate groups) of `n` values of the
 * given file type from `data` in mem_type; rank 2 with dims n/2 × 2 when two_d. */
static void put(hid_t f, const char* path, hid_t file_type, hid_t mem_type, const void* data, hsize_t n, bool two_d)
{
    hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
    H5Pset_create_intermediate_group(lcpl, 1);
    hsize_t dims[2] = {two_d ? n / 2 : n, 2};
    hid_t sp = H5Screate_simple(two_d ? 2 : 1, dims, NULL);
    hid_t ds = H5Dcreate2(f, path, file_type, sp, lcpl, H5P_DEFAULT, H5P_DEFAULT);
    assert_true(ds >= 0);
    if (n > 0) assert_true(H5Dwrite(ds, mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) >= 0);
    H5Dclose(ds);
    H5Sclose(sp);
    H5Pclose(lcpl);
}

static void put_i(hid_t f, const char* path, const int* v, hsize_t n)
{
    put(f, path, H5T_STD_I32LE, H5T_NATIVE_INT, v, n, false);
}

static void put_d(hid_t f, const char* path, const double* v, hsize_t n)
{
    put(f, path, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, v, n, false);
}

/* A chunked dataset whose dataspace claims `extent` values of which only
 * the first `n` are written: the file stays a few kB whatever the extent. */
static void put_claimed(hid_t f, const char* path, hid_t file_type, hid_t mem_type, const void* data, hsize_t n,
                        hsize_t extent)
{
    hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
    H5Pset_create_intermediate_group(lcpl, 1);
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    hsize_t chunk = extent < 1024 ? extent : 1024;
    H5Pset_chunk(dcpl, 1, &chunk);
    hid_t sp = H5Screate_simple(1, &extent, NULL);
    hid_t ds = H5Dcreate2(f, path, file_type, sp, lcpl, dcpl, H5P_DEFAULT);
    assert_true(ds >= 0);
    if (n > 0) {
        hsize_t start = 0;
        hid_t msp = H5Screate_simple(1, &n, NULL);
        assert_true(H5Sselect_hyperslab(sp, H5S_SELECT_SET, &start, NULL, &n, NULL) >= 0);
        assert_true(H5Dwrite(ds, mem_type, msp, sp, H5P_DEFAULT, data) >= 0);
        H5Sclose(msp);
    }
    H5Dclose(ds);
    H5Sclose(sp);
    H5Pclose(dcpl);
    H5Pclose(lcpl);
}

enum defect {
    OK_LOCAL,
    NO_Q,
    Q_SHORT,
    Q_NAN,
    Q_INTEGERS,
    Q_2D,
    MU_NEGATIVE,
    W_ROW_INDEX,
    W_POINTERS,
    W_NZ,
    W_NOT_SQUARE,
    W_M_REAL,
    W_M_HUGE,
    W_HEADER_HUGE, /* triplet W whose header claims 3e8 × 3e8 */
    W_X_SHORT,
    W_I_CLAIMS_2G,   /* W/i's dataspace claims 2^31 - 1 values (16 written) */
    W_NZ_2G,         /* triplet W of 6 x 6 whose nz claims 2^31 - 1 entries */
    Q_UNWRITTEN_2M,  /* q and W of 2^21 rows, their values never written */
    OK_I_NZMAX,      /* valid: W/i and W/x longer than nnz (nzmax 20, nnz 16) */
    NO_W,
    SPACEDIM_2,
    NO_SPACEDIM,
    NO_PROBLEM,
    V_WITHOUT_R,
    SOLUTION_SHORT,
    W_NOT_PSD_OK, /* valid: W need not be definite */
    OK_MIXED,     /* valid: V, R, s (equalities) */
    DEFECT_COUNT
};

/* A small local problem, 2 contacts, W CSR, with one defect. */
static void write_local_defect(const char* path, enum defect d)
{
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    assert_true(f >= 0);
    if (d == NO_PROBLEM) {
        int one = 1;
        put_i(f, "/something/else", &one, 1);
        H5Fclose(f);
        return;
    }
    int three = d == SPACEDIM_2 ? 2 : 3, six = 6;
    if (d != NO_SPACEDIM) put_i(f, "/fclib_local/spacedim", &three, 1);
    /* W: 6 × 6, tridiagonal, CSR */
    int p[7], ix[16];
    double x[16];
    int k = 0;
    for (int r = 0; r < 6; r++) {
        p[r] = k;
        for (int c = r - 1; c <= r + 1; c++)
            if (c >= 0 && c < 6) {
                ix[k] = c;
                x[k++] = c == r ? 4.0 : -1.0;
            }
    }
    p[6] = k;
    if (d == W_ROW_INDEX) ix[5] = 6;
    if (d == W_POINTERS) p[3] = p[2] - 1;
    int nz = d == W_NZ ? -3 : -2;
    int ncols = d == W_NOT_SQUARE ? 7 : 6;
    if (d == Q_UNWRITTEN_2M) {
        int big = 1 << 21, m1 = -1;
        double mu2[2] = {0.5, 0.3};
        put_i(f, "/fclib_local/W/nz", &m1, 1);
        put_i(f, "/fclib_local/W/m", &big, 1);
        put_i(f, "/fclib_local/W/n", &big, 1);
        put_claimed(f, "/fclib_local/W/p", H5T_STD_I32LE, H5T_NATIVE_INT, NULL, 0, (hsize_t)big + 1);
        put_claimed(f, "/fclib_local/W/i", H5T_STD_I32LE, H5T_NATIVE_INT, NULL, 0, (hsize_t)big);
        put_claimed(f, "/fclib_local/W/x", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, NULL, 0, (hsize_t)big);
        put_claimed(f, "/fclib_local/vectors/q", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, NULL, 0, (hsize_t)big);
        put_d(f, "/fclib_local/vectors/mu", mu2, 2);
        H5Fclose(f);
        return;
    }
    if (d == W_NZ_2G) {
        int huge = 2147483647, ri[1] = {0};
        double x1[1] = {1.0};
        put_i(f, "/fclib_local/W/nz", &huge, 1);
        put_i(f, "/fclib_local/W/m", &six, 1);
        put_i(f, "/fclib_local/W/n", &six, 1);
        put_claimed(f, "/fclib_local/W/i", H5T_STD_I32LE, H5T_NATIVE_INT, ri, 1, (hsize_t)huge);
        put_claimed(f, "/fclib_local/W/p", H5T_STD_I32LE, H5T_NATIVE_INT, ri, 1, (hsize_t)huge);
        put_claimed(f, "/fclib_local/W/x", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, x1, 1, (hsize_t)huge);
    } else if (d == W_I_CLAIMS_2G || d == OK_I_NZMAX) { /* the CSR W below, i (and x) under a longer dataspace */
        const hsize_t extent = d == OK_I_NZMAX ? 20 : 2147483647;
        put_i(f, "/fclib_local/W/nz", &(int){-2}, 1);
        put_i(f, "/fclib_local/W/m", &six, 1);
        put_i(f, "/fclib_local/W/n", &six, 1);
        put_i(f, "/fclib_local/W/p", p, 7);
        put_claimed(f, "/fclib_local/W/i", H5T_STD_I32LE, H5T_NATIVE_INT, ix, (hsize_t)k, extent);
        put_claimed(f, "/fclib_local/W/x", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, x, (hsize_t)k, d == OK_I_NZMAX ? 20 : (hsize_t)k);
    } else if (d == W_HEADER_HUGE) { /* the same entries as triplets, under a header of 3e8 rows and columns */
        int big = 300000000, ri[16], ci[16];
        for (int r = 0; r < 6; r++)
            for (int e = p[r]; e < p[r + 1]; e++) {
                ri[e] = r;
                ci[e] = ix[e];
            }
        put_i(f, "/fclib_local/W/nz", &k, 1);
        put_i(f, "/fclib_local/W/m", &big, 1);
        put_i(f, "/fclib_local/W/n", &big, 1);
        put_i(f, "/fclib_local/W/nzmax", &k, 1);
        put_i(f, "/fclib_local/W/i", ri, (hsize_t)k);
        put_i(f, "/fclib_local/W/p", ci, (hsize_t)k);
        put_d(f, "/fclib_local/W/x", x, (hsize_t)k);
    } else if (d != NO_W) {
        put_i(f, "/fclib_local/W/nz", &nz, 1);
        if (d == W_M_REAL) {
            double six_d = 6.0;
            put_d(f, "/fclib_local/W/m", &six_d, 1);
        } else if (d == W_M_HUGE) {
            long long huge = 1ll << 40;
            put(f, "/fclib_local/W/m", H5T_STD_I64LE, H5T_NATIVE_LLONG, &huge, 1, false);
        } else {
            put_i(f, "/fclib_local/W/m", &six, 1);
        }
        put_i(f, "/fclib_local/W/n", &ncols, 1);
        put_i(f, "/fclib_local/W/nzmax", &k, 1);
        put_i(f, "/fclib_local/W/p", p, 7);
        put_i(f, "/fclib_local/W/i", ix, (hsize_t)k);
        put_d(f, "/fclib_local/W/x", x, (hsize_t)(d == W_X_SHORT ? k - 1 : k));
    }
    double q[6] = {-1, 0.2, 0.1, -2, 0.3, -0.1};
    if (d == Q_NAN) q[4] = NAN;
    if (d == Q_INTEGERS) {
        int qi[6] = {-1, 0, 0, -2, 0, 0};
        put_i(f, "/fclib_local/vectors/q", qi, 6);
    } else if (d == Q_2D) {
        put(f, "/fclib_local/vectors/q", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, q, 6, true);
    } else if (d != NO_Q) {
        put_d(f, "/fclib_local/vectors/q", q, d == Q_SHORT ? 5 : 6);
    }
    double mu[2] = {0.5, d == MU_NEGATIVE ? -0.1 : 0.3};
    put_d(f, "/fclib_local/vectors/mu", mu, 2);
    if (d == V_WITHOUT_R || d == OK_MIXED) { /* V: 6 × 1 CSC, the first normal; R = [2]; s = [0.5] */
        int vp[2] = {0, 1}, vi[1] = {0}, one = 1, m1 = -1, vm = 6;
        double vx[1] = {1.0}, rx[1] = {2.0}, s[1] = {0.5};
        int rp[2] = {0, 1}, ri[1] = {0};
        put_i(f, "/fclib_local/V/m", &vm, 1);
        put_i(f, "/fclib_local/V/n", &one, 1);
        put_i(f, "/fclib_local/V/nz", &m1, 1);
        put_i(f, "/fclib_local/V/nzmax", &one, 1);
        put_i(f, "/fclib_local/V/p", vp, 2);
        put_i(f, "/fclib_local/V/i", vi, 1);
        put_d(f, "/fclib_local/V/x", vx, 1);
        if (d == OK_MIXED) {
            put_i(f, "/fclib_local/R/m", &one, 1);
            put_i(f, "/fclib_local/R/n", &one, 1);
            put_i(f, "/fclib_local/R/nz", &m1, 1);
            put_i(f, "/fclib_local/R/nzmax", &one, 1);
            put_i(f, "/fclib_local/R/p", rp, 2);
            put_i(f, "/fclib_local/R/i", ri, 1);
            put_d(f, "/fclib_local/R/x", rx, 1);
            put_d(f, "/fclib_local/vectors/s", s, 1);
        }
    }
    if (d == SOLUTION_SHORT) put_d(f, "/solution/r", q, 5);
    H5Fclose(f);
}

enum gdefect { OK_GLOBAL, M_NOT_PD, H_ROWS, H_TRIPLET_COLUMN, W_SHORT, G_WITHOUT_B, OK_WITH_G, GDEFECT_COUNT };

/* A small global problem: 2 bodies of 6 degrees of freedom (M diagonal but
 * for a coupled 2 × 2 block), 2 contacts, H triplet; optionally G (1 column). */
static void write_global_defect(const char* path, enum gdefect d, bool dense_coupling)
{
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    assert_true(f >= 0);
    int three = 3, n = 12, m = 6, mnz = 12 + 2 * (dense_coupling ? 7 : 1);
    put_i(f, "/fclib_global/spacedim", &three, 1);
    int mi[40], mp[40];
    double mx[40];
    int k = 0;
    for (int i = 0; i < 12; i++) {
        mi[k] = i;
        mp[k] = i;
        mx[k++] = d == M_NOT_PD && i == 4 ? -1.0 : 2.0 + i;
    }
    /* a coupling between dofs 1 and 2 (a 2 × 2 block), or between 1 and 2..8 (a block larger than 6) */
    for (int t = 0; t < (dense_coupling ? 7 : 1); t++) {
        mi[k] = 1;
        mp[k] = 2 + t;
        mx[k++] = 0.3;
        mi[k] = 2 + t;
        mp[k] = 1;
        mx[k++] = 0.3;
    }
    put_i(f, "/fclib_global/M/m", &n, 1);
    put_i(f, "/fclib_global/M/n", &n, 1);
    put_i(f, "/fclib_global/M/nz", &mnz, 1);
    put_i(f, "/fclib_global/M/nzmax", &mnz, 1);
    put_i(f, "/fclib_global/M/i", mi, (hsize_t)mnz);
    put_i(f, "/fclib_global/M/p", mp, (hsize_t)mnz);
    put_d(f, "/fclib_global/M/x", mx, (hsize_t)mnz);
    /* H: 12 × 6, contact a's normal on dof 2 of body a (and body a+1 with −), tangents on dofs 0, 1 */
    int hi[20], hp[20];
    double hx[20];
    int e = 0;
    for (int a = 0; a < 2; a++)
        for (int r = 0; r < 3; r++) {
            int dof = r == 0 ? 2 : r - 1;
            hi[e] = 6 * a + dof;
            hp[e] = 3 * a + r;
            hx[e++] = 1.0;
            if (a == 0) {
                hi[e] = 6 + dof;
                hp[e] = r;
                hx[e++] = -1.0;
            }
        }
    if (d == H_TRIPLET_COLUMN) hp[2] = 6;
    int hn = 12, hm = 6, hnz = e;
    put_i(f, "/fclib_global/H/m", d == H_ROWS ? &hm : &hn, 1);
    put_i(f, "/fclib_global/H/n", &m, 1);
    put_i(f, "/fclib_global/H/nz", &hnz, 1);
    put_i(f, "/fclib_global/H/nzmax", &hnz, 1);
    put_i(f, "/fclib_global/H/i", hi, (hsize_t)hnz);
    put_i(f, "/fclib_global/H/p", hp, (hsize_t)hnz);
    put_d(f, "/fclib_global/H/x", hx, (hsize_t)hnz);
    if (d == G_WITHOUT_B || d == OK_WITH_G) { /* G: dof 5 of body 0 held */
        int gi[1] = {5}, gp[1] = {0}, one = 1;
        double gx[1] = {1.0}, bb[1] = {0.25};
        put_i(f, "/fclib_global/G/m", &n, 1);
        put_i(f, "/fclib_global/G/n", &one, 1);
        put_i(f, "/fclib_global/G/nz", &one, 1);
        put_i(f, "/fclib_global/G/nzmax", &one, 1);
        put_i(f, "/fclib_global/G/i", gi, 1);
        put_i(f, "/fclib_global/G/p", gp, 1);
        put_d(f, "/fclib_global/G/x", gx, 1);
        if (d == OK_WITH_G) put_d(f, "/fclib_global/vectors/b", bb, 1);
    }
    double fv[12], w[6] = {0.1, 0, 0, -0.2, 0.05, 0}, mu[2] = {0.4, 0.6};
    for (int i = 0; i < 12; i++) fv[i] = i == 2 ? -9.81 : i == 8 ? -9.81 : 0.01 * i;
    put_d(f, "/fclib_global/vectors/f", fv, 12);
    put_d(f, "/fclib_global/vectors/w", w, d == W_SHORT ? 5 : 6);
    put_d(f, "/fclib_global/vectors/mu", mu, 2);
    H5Fclose(f);
}

static void expect_error(const char* path, dvi_status want, const char* fragment)
{
    char msg[512] = "";
    dvi_ccp_file* file = (dvi_ccp_file*)1;
    dvi_fclib_info info;
    dvi_status st = dvi_fclib_read_ex(path, 0, &file, &info, msg, sizeof msg);
    if (st != want || !strstr(msg, fragment))
        print_error("status %d (want %d), message \"%s\" (want \"%s\")\n", st, want, msg, fragment);
    assert_int_equal(st, want);
    assert_null(file);
    assert_non_null(strstr(msg, fragment));
    assert_null(info.u);
    assert_null(info.file_operator);
}

static void test_bad_files(void** state)
{
    (void)state;
    char dir[] = "/tmp/dvi_fclib_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[600], msg[512];
    snprintf(path, sizeof path, "%s/bad.hdf5", dir);

    static const struct {
        enum defect d;
        dvi_status st;
        const char* fragment;
    } local_cases[] = {
        {NO_Q, DVI_ERR_INVALID_ARG, "/fclib_local/vectors/q: missing"},
        /* W's size is checked against q's length before W is read */
        {Q_SHORT, DVI_ERR_INVALID_ARG, "/fclib_local/W/m: 6 rows, expected 5 (the length of /fclib_local/vectors/q)"},
        /* refused before 2 × 1.2 GB of row and column pointers are allocated */
        {W_HEADER_HUGE, DVI_ERR_INVALID_ARG,
         "/fclib_local/W/m: 300000000 rows, expected 6 (the length of /fclib_local/vectors/q)"},
        {Q_NAN, DVI_ERR_INVALID_ARG, "/fclib_local/vectors/q[4]: not finite"},
        {Q_INTEGERS, DVI_ERR_INVALID_ARG, "/fclib_local/vectors/q: expected floating-point numbers"},
        {Q_2D, DVI_ERR_INVALID_ARG, "/fclib_local/vectors/q: expected a one-dimensional array"},
        {MU_NEGATIVE, DVI_ERR_INVALID_ARG, "/fclib_local/vectors/mu[1]: friction coefficient must be >= 0"},
        {W_ROW_INDEX, DVI_ERR_INVALID_ARG, "/fclib_local/W/i[5]: column index 6 out of range [0, 6)"},
        {W_POINTERS, DVI_ERR_INVALID_ARG, "/fclib_local/W/p[3]"},
        {W_NZ, DVI_ERR_INVALID_ARG, "/fclib_local/W/nz: -3"},
        {W_NOT_SQUARE, DVI_ERR_INVALID_ARG, "/fclib_local/W/n: 7 columns, expected 6 (the length of /fclib_local/vectors/q)"},
        {W_M_REAL, DVI_ERR_INVALID_ARG, "/fclib_local/W/m: expected integers"},
        {W_M_HUGE, DVI_ERR_INVALID_ARG, "/fclib_local/W/m[0]: 1099511627776 does not fit in 32 bits"},
        {W_X_SHORT, DVI_ERR_INVALID_ARG, "/fclib_local/W/x: 15 values, expected at least 16"},
        /* the extents of i and x are checked against m x n before anything is allocated or read */
        {W_I_CLAIMS_2G, DVI_ERR_INVALID_ARG,
         "/fclib_local/W/i: 2147483647 values, expected at least 16 (the last pointer), at most 36 (m x n)"},
        {W_NZ_2G, DVI_ERR_INVALID_ARG, "/fclib_local/W/nz: 2147483647 entries, more than the 6 x 6 matrix has"},
        /* a large dataset must be stored in the file, not only declared */
        {Q_UNWRITTEN_2M, DVI_ERR_PARSE, "/fclib_local/W/p: 2097153 values declared, but the file stores 0 bytes"},
        {NO_W, DVI_ERR_INVALID_ARG, "/fclib_local/W: missing"},
        {SPACEDIM_2, DVI_ERR_UNSUPPORTED, "/fclib_local/spacedim: 2"},
        {NO_SPACEDIM, DVI_ERR_INVALID_ARG, "/fclib_local/spacedim: missing"},
        {NO_PROBLEM, DVI_ERR_PARSE, "no /fclib_local or /fclib_global group"},
        {V_WITHOUT_R, DVI_ERR_INVALID_ARG, "/fclib_local/R: missing"},
        {SOLUTION_SHORT, DVI_ERR_INVALID_ARG, "/solution/r: 5 values, expected 6"},
    };
    for (size_t c = 0; c < sizeof local_cases / sizeof local_cases[0]; c++) {
        write_local_defect(path, local_cases[c].d);
        expect_error(path, local_cases[c].st, local_cases[c].fragment);
    }
    /* the valid ones */
    dvi_ccp_file* file = NULL;
    dvi_fclib_info info;
    write_local_defect(path, OK_LOCAL);
    assert_int_equal(dvi_fclib_read_ex(path, 0, &file, &info, msg, sizeof msg), DVI_OK);
    assert_int_equal(file->problem.rows, 6);
    assert_null(file->solution);
    dvi_ccp_file_free(file);
    dvi_fclib_info_clear(&info);
    write_local_defect(path, OK_I_NZMAX); /* only the first nnz of i and x are entries */
    assert_int_equal(dvi_fclib_read_ex(path, 0, &file, &info, msg, sizeof msg), DVI_OK);
    assert_int_equal(file->problem.rows, 6);
    assert_int_equal(file->problem.W->colptr[6], 16);
    assert_true(file->problem.W->values[0] == 4.0);
    dvi_ccp_file_free(file);
    dvi_fclib_info_clear(&info);
    write_local_defect(path, OK_MIXED); /* [[W V] [Vᵀ R]], r = [q; s], one bilateral row */
    assert_int_equal(dvi_fclib_read_ex(path, 0, &file, &info, msg, sizeof msg), DVI_OK);
    assert_int_equal(info.equalities, 1);
    assert_int_equal(file->problem.rows, 7);
    assert_int_equal(file->problem.blocks[2].kind, DVI_BLOCK_BILATERAL);
    assert_true(file->problem.r[6] == 0.5);
    {
        double x[7] = {0, 0, 0, 0, 0, 0, 1}, y[7];
        problem_apply(&file->problem, x, y); /* column 6 = [V; R] */
        assert_true(y[0] == 1.0 && y[6] == 2.0 && y[1] == 0.0);
    }
    dvi_ccp_file_free(file);
    dvi_fclib_info_clear(&info);

    static const struct {
        enum gdefect d;
        dvi_status st;
        const char* fragment;
    } global_cases[] = {
        {M_NOT_PD, DVI_ERR_SINGULAR, "/fclib_global/M: diagonal block of rows 4..4 is not positive definite"},
        {H_ROWS, DVI_ERR_INVALID_ARG, "/fclib_global/H/m: 6 rows, expected 12"},
        {H_TRIPLET_COLUMN, DVI_ERR_INVALID_ARG, "/fclib_global/H/p[2]: column index 6 out of range [0, 6)"},
        {W_SHORT, DVI_ERR_INVALID_ARG, "/fclib_global/H/n: 6 columns, expected 5 (the length of /fclib_global/vectors/w)"},
        {G_WITHOUT_B, DVI_ERR_INVALID_ARG, "/fclib_global/vectors/b: missing"},
    };
    for (size_t c = 0; c < sizeof global_cases / sizeof global_cases[0]; c++) {
        write_global_defect(path, global_cases[c].d, false);
        expect_error(path, global_cases[c].st, global_cases[c].fragment);
    }
    write_global_defect(path, M_NOT_PD, true); /* not block-diagonal: CHOLMOD reports it */
    expect_error(path, DVI_ERR_SINGULAR, "/fclib_global/M: not positive definite");
    /* valid global problems with an equality row, in both forms, against a dense computation */
    for (int dense = 0; dense < 2; dense++) {
        write_global_defect(path, OK_WITH_G, dense == 1);
        assert_int_equal(dvi_fclib_read_ex(path, 0, &file, &info, msg, sizeof msg), DVI_OK);
        const dvi_ccp_problem* p = &file->problem;
        assert_int_equal(info.equalities, 1);
        assert_int_equal(p->rows, 7);
        assert_true((p->D != NULL) == (dense == 0)); /* 2 × 2 block: factor form; 8 × 8: CHOLMOD */
        /* dense: B = [H G], N = Bᵀ M⁻¹ B, r = Bᵀ M⁻¹ f + [w; b] */
        hid_t h = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
        int n = 0, c1 = 0, c2 = 0, c3 = 0;
        double* M = raw_dense(h, "/fclib_global/M", &n, &c1);
        double* H = raw_dense(h, "/fclib_global/H", &c2, &c1);
        double* G = raw_dense(h, "/fclib_global/G", &c2, &c3);
        double* fv = raw_reals(h, "/fclib_global/vectors/f", NULL);
        double* w = raw_reals(h, "/fclib_global/vectors/w", NULL);
        H5Fclose(h);
        double B[12 * 7], MB[12 * 8];
        memcpy(B, H, sizeof(double) * 12 * 6);
        memcpy(B + 72, G, sizeof(double) * 12);
        memcpy(MB, B, sizeof B);
        memcpy(MB + 84, fv, sizeof(double) * 12);
        int ipiv[12];
        assert_int_equal(LAPACKE_dgesv(LAPACK_COL_MAJOR, 12, 8, M, 12, ipiv, MB, 12), 0);
        for (int col = 0; col < 7; col++) {
            double x[7] = {0}, y[7];
            x[col] = 1.0;
            problem_apply(p, x, y);
            for (int row = 0; row < 7; row++) {
                double s = 0.0;
                for (int t = 0; t < 12; t++) s += B[row * 12 + t] * MB[col * 12 + t];
                assert_near(y[row], s, 1e-12);
            }
        }
        for (int row = 0; row < 7; row++) {
            double s = row < 6 ? w[row] : 0.25;
            for (int t = 0; t < 12; t++) s += B[row * 12 + t] * MB[84 + t];
            assert_near(p->r[row], s, 1e-12);
        }
        free(M);
        free(H);
        free(G);
        free(fv);
        free(w);
        dvi_ccp_file_free(file);
        dvi_fclib_info_clear(&info);
    }

    /* not HDF5 at all, empty, missing */
    spit(path, "{\"format\": \"dvicontact-ccp\"}\n", 29);
    expect_error(path, DVI_ERR_PARSE, "not an HDF5 file");
    spit(path, "", 0);
    expect_error(path, DVI_ERR_PARSE, "not an HDF5 file");
    snprintf(msg, sizeof msg, "%s/nonexistent.hdf5", dir);
    expect_error(msg, DVI_ERR_IO, "cannot open");

    /* truncated copies of every reference file */
    for (int f = 0; f < NREFS; f++) {
        char ref[512];
        ref_path(&REFS[f], ref, sizeof ref);
        size_t n;
        unsigned char* bytes = slurp(ref, &n);
        const size_t cuts[] = {4, 8, 100, 800, 2048, n / 3, n / 2, n - 4096, n - 1};
        for (size_t c = 0; c < sizeof cuts / sizeof cuts[0]; c++) {
            spit(path, bytes, cuts[c]);
            char m2[512] = "";
            dvi_ccp_file* out = NULL;
            dvi_status st = dvi_fclib_read(path, &out, m2, sizeof m2);
            assert_int_equal(st, DVI_ERR_PARSE);
            assert_null(out);
            assert_true(strstr(m2, cuts[c] < 8 ? "not an HDF5 file" : "truncated") != NULL);
        }
        /* a damaged signature */
        bytes[1] = 'X';
        spit(path, bytes, n);
        expect_error(path, DVI_ERR_PARSE, "not an HDF5 file");
        free(bytes);
    }

    /* damaged values inside a real file: a NaN in q and an index out of range in W/i,
       written over the datasets' raw bytes */
    {
        char ref[512];
        ref_path(&REFS[2], ref, sizeof ref); /* local_problem_test */
        hid_t h = H5Fopen(ref, H5F_ACC_RDONLY, H5P_DEFAULT);
        hid_t dq = H5Dopen2(h, "/fclib_local/vectors/q", H5P_DEFAULT);
        hid_t di = H5Dopen2(h, "/fclib_local/W/i", H5P_DEFAULT);
        haddr_t oq = H5Dget_offset(dq), oi = H5Dget_offset(di);
        H5Dclose(dq);
        H5Dclose(di);
        H5Fclose(h);
        assert_true(oq != HADDR_UNDEF && oi != HADDR_UNDEF);
        size_t n;
        unsigned char* bytes = slurp(ref, &n);
        double nan = NAN; /* little-endian files and host */
        unsigned char save[8];
        memcpy(save, bytes + oq + 8 * 7, 8);
        memcpy(bytes + oq + 8 * 7, &nan, 8);
        spit(path, bytes, n);
        expect_error(path, DVI_ERR_INVALID_ARG, "/fclib_local/vectors/q[7]: not finite");
        memcpy(bytes + oq + 8 * 7, save, 8);
        int32_t big = 100000;
        memcpy(bytes + oi + 4 * 10, &big, 4);
        spit(path, bytes, n);
        expect_error(path, DVI_ERR_INVALID_ARG, "/fclib_local/W/i[10]: column index 100000 out of range [0, 144)");
        free(bytes);
    }
    remove(path);
    rmdir(dir);
}

/* `dvi solve` dispatches on the HDF5 signature. */
static void test_cli_solve(void** state)
{
    (void)state;
    char exe[512], cmd[1600], out[8192];
    snprintf(exe, sizeof exe, "%s/tool/dvi", BUILD_PATH(""));
    if (access(exe, X_OK) != 0) {
        print_message("%s not built: skipped\n", exe);
        skip();
    }
    char path[512];
    ref_path(&REFS[1], path, sizeof path); /* OneObject: local, W not symmetric */
    snprintf(cmd, sizeof cmd, "'%s' solve '%s' --solver apgd --tolerance 1e-8 --max-iterations 10000 2>&1", exe, path);
    FILE* pp = popen(cmd, "r");
    assert_non_null(pp);
    size_t n = fread(out, 1, sizeof out - 1, pp);
    out[n] = '\0';
    int rc = pclose(pp);
    print_message("%s", out);
    assert_true(WIFEXITED(rc) && WEXITSTATUS(rc) == 0);
    assert_non_null(strstr(out, "FCLIB local problem"));
    assert_non_null(strstr(out, "23 contacts"));
    assert_non_null(strstr(out, "not symmetric"));
    assert_non_null(strstr(out, "apgd     converged"));
    /* a bad file: usage-level exit status, the dataset named */
    char dir[] = "/tmp/dvi_fclib_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char bad[600];
    snprintf(bad, sizeof bad, "%s/bad.hdf5", dir);
    write_local_defect(bad, Q_NAN);
    snprintf(cmd, sizeof cmd, "'%s' solve '%s' 2>&1", exe, bad);
    pp = popen(cmd, "r");
    assert_non_null(pp);
    n = fread(out, 1, sizeof out - 1, pp);
    out[n] = '\0';
    rc = pclose(pp);
    assert_true(WIFEXITED(rc) && WEXITSTATUS(rc) == 2);
    assert_non_null(strstr(out, "/fclib_local/vectors/q[4]: not finite"));
    remove(bad);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_read_reference),
        cmocka_unit_test(test_global_conversion),
        cmocka_unit_test(test_file_W),
        cmocka_unit_test(test_residual_formula),
        cmocka_unit_test(test_solvers_reference),
        cmocka_unit_test(test_lemke_blas_threads),
        cmocka_unit_test(test_roundtrip),
#ifdef DVI_HAVE_LIBFCLIB
        cmocka_unit_test(test_libfclib_crosscheck),
#endif
        cmocka_unit_test(test_bad_files),
        cmocka_unit_test(test_cli_solve),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
