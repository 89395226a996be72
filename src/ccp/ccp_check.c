/* dvicontact — CCP problem: validation (ccp_check, dvi_ccp_validate)
 * and the CSC helpers it stands on. Validation reports the first problem
 * found, naming the place. It needs nothing of the solvers' work
 * (ccp_work.c calls it), so the two files point one way. */
#include "ccp_check.h"
#include "error.h"
#include "hash_rng.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static dvi_status fail(char* msg, size_t n, const char* fmt, ...)
{
    if (msg && n > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, n, fmt, ap);
        va_end(ap);
    }
    return DVI_ERR_INVALID_ARG;
}

/* Checks the CSC structure of A (name for messages): pointers, sizes,
 * indices in range, finite values; strictly increasing rows if `sorted`. */
static dvi_status check_csc(const dvi_csc* A, const char* name, int32_t rows, int32_t cols, bool sorted,
                            char* msg, size_t n)
{
    if (A->rows != rows || A->cols != cols)
        return fail(msg, n, "%s: is %d x %d, expected %d x %d", name, A->rows, A->cols, rows, cols);
    if (!A->colptr) return fail(msg, n, "%s.colptr: NULL", name);
    if (A->colptr[0] != 0) return fail(msg, n, "%s.colptr[0]: must be 0 (got %d)", name, A->colptr[0]);
    for (int32_t j = 0; j < cols; j++)
        if (A->colptr[j + 1] < A->colptr[j])
            return fail(msg, n, "%s.colptr[%d]: decreases (%d after %d)", name, j + 1, A->colptr[j + 1],
                        A->colptr[j]);
    int32_t nnz = A->colptr[cols];
    if (nnz > 0 && (!A->rowind || !A->values)) return fail(msg, n, "%s: rowind or values is NULL", name);
    for (int32_t j = 0; j < cols; j++) {
        for (int32_t k = A->colptr[j]; k < A->colptr[j + 1]; k++) {
            int32_t i = A->rowind[k];
            if (i < 0 || i >= rows)
                return fail(msg, n, "%s column %d: row index %d out of range [0, %d)", name, j, i, rows);
            if (sorted && k > A->colptr[j] && i <= A->rowind[k - 1])
                return fail(msg, n, "%s column %d: row indices not strictly increasing (%d after %d)", name, j, i,
                            A->rowind[k - 1]);
            if (!isfinite(A->values[k]))
                return fail(msg, n, "%s column %d, row %d: value is not finite", name, j, i);
        }
    }
    return DVI_OK;
}

/* Is the symmetric 6x6 (row-major) positive semidefinite? Cholesky of
 * A + eps*I with eps relative to the trace. */
static bool psd6(const double* A)
{
    double L[36] = {0}, tr = 0.0;
    for (int i = 0; i < 6; i++) tr += A[7 * i];
    if (tr == 0.0) return true; /* the zero block (fixed body) */
    double eps = 1e-12 * tr;
    for (int j = 0; j < 6; j++) {
        double d = A[7 * j] + eps;
        for (int k = 0; k < j; k++) d -= L[6 * j + k] * L[6 * j + k];
        if (!(d > 0.0)) return false;
        L[7 * j] = sqrt(d);
        for (int i = j + 1; i < 6; i++) {
            double s = A[6 * i + j];
            for (int k = 0; k < j; k++) s -= L[6 * i + k] * L[6 * j + k];
            L[6 * i + j] = s / L[7 * j];
        }
    }
    return true;
}

/* Deterministic pseudo-random numbers in [-1, 1) (splitmix64). */
/* Contact c's bodies and numbers (the checks that need nothing of the
 * other contacts); msg may be NULL. */
static dvi_status check_frame_values(const dvi_ccp_problem* p, int32_t c, bool sgl, char* msg, size_t n)
{
    const dvi_ccp_frames* F = p->frames;
    for (int s = 0; s < 2; s++) {
        int32_t body = F->body[2 * c + s];
        if (body < -1 || body >= p->body_count)
            return fail(msg, n, "frames.body[%d]: must be -1 or in [0, %d) (got %d)", 2 * c + s, p->body_count, body);
    }
    for (int k = 0; k < 9; k++)
        if (!isfinite(sgl ? F->frame_f[9 * (size_t)c + k] : F->frame[9 * (size_t)c + k]))
            return fail(msg, n, "frames.frame%s[%d]: not finite", sgl ? "_f" : "", 9 * c + k);
    for (int k = 0; k < 6; k++)
        if (!isfinite(sgl ? F->arm_f[6 * (size_t)c + k] : F->arm[6 * (size_t)c + k]))
            return fail(msg, n, "frames.arm%s[%d]: not finite", sgl ? "_f" : "", 6 * c + k);
    if (F->ell && !(F->ell[c] > 0.0 && isfinite(F->ell[c])))
        return fail(msg, n, "frames.ell[%d]: must be finite and > 0 (got %g)", c, F->ell[c]);
    return DVI_OK;
}

/* One item (a block's rows, a body, a contact frame) of the checks that
 * run in parallel; with msg NULL it may take a quicker test that gives the
 * same verdict. */
typedef dvi_status (*item_check)(const dvi_ccp_problem* p, const int32_t* brow, int32_t i, char* msg, size_t n);

/* Runs check on items 0 … count−1, on `threads` threads above par_min
 * items, and reports the first that fails with its message: the item and
 * the message a serial pass gives. */
static dvi_status first_failure(const dvi_ccp_problem* p, const int32_t* brow, int32_t count, int threads,
                                int32_t par_min, item_check check, char* msg, size_t n)
{
    int32_t first_bad = count;
    (void)threads, (void)par_min;
#ifdef _OPENMP
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1 && count > par_min) \
    reduction(min : first_bad)
#endif
    for (int32_t i = 0; i < count; i++)
        if (i < first_bad && check(p, brow, i, NULL, 0) != DVI_OK) first_bad = i;
    for (int32_t i = first_bad; i < count; i++) { /* the message, from the full test */
        const dvi_status st = check(p, brow, i, msg, n);
        if (st != DVI_OK) return st;
    }
    return DVI_OK;
}

/* Contact c of the frames: its block in range, after the previous
 * contact's, of a contact kind, with empty columns of D (brow: each block's
 * first row), then its own numbers; msg may be NULL. */
static dvi_status check_frame(const dvi_ccp_problem* p, const int32_t* brow, int32_t c, char* msg, size_t n)
{
    const dvi_ccp_frames* F = p->frames;
    const bool sgl = F->frame_f || F->arm_f;
    const int32_t blk = F->block[c], prev = c > 0 ? F->block[c - 1] : -1;
    if (blk <= prev || blk >= p->block_count)
        return fail(msg, n, "frames.block[%d]: must be increasing and in [0, %d) (got %d)", c, p->block_count, blk);
    dvi_block_kind kind = p->blocks[blk].kind;
    if (kind != DVI_BLOCK_FRICTION && kind != DVI_BLOCK_FRICTIONLESS && kind != DVI_BLOCK_FRICTION_ROLLING)
        return fail(msg, n, "frames.block[%d]: blocks[%d] is not a contact block (frictionless, friction or rolling)", c,
                    blk);
    const int32_t* cp = p->D->colptr;
    for (int32_t i = brow[blk]; i < brow[blk + 1]; i++)
        if (cp[i + 1] != cp[i])
            return fail(msg, n, "frames.block[%d]: column %d of D (blocks[%d]) must be empty", c, i, blk);
    return check_frame_values(p, c, sgl, msg, n);
}

/* The contact frames (dvi_ccp_frames): blocks in range, increasing, of a
 * contact kind, with empty D columns; bodies in range or −1; every number
 * finite, ell > 0. In parallel: the first contact that fails is the one a
 * serial pass names. */
static dvi_status check_frames(const dvi_ccp_problem* p, const int32_t* brow, int threads, char* msg, size_t n)
{
    const dvi_ccp_frames* F = p->frames;
    if (F->count < 0) return fail(msg, n, "frames.count: must be >= 0 (got %d)", F->count);
    if (F->count == 0) return DVI_OK;
    const bool dbl = F->frame || F->arm, sgl = F->frame_f || F->arm_f;
    if (dbl && sgl) return fail(msg, n, "frames: frame and arm, or frame_f and arm_f: give one pair, not both");
    if (!F->block || !F->body || (sgl ? !F->frame_f || !F->arm_f : !F->frame || !F->arm))
        return fail(msg, n, "frames: block, body, frame and arm (or frame_f and arm_f) must all be given");
    return first_failure(p, brow, F->count, threads, 4096, check_frame, msg, n);
}

/* Body b's block of M⁻¹: finite, non-negative diagonal, symmetric,
 * positive semidefinite; msg may be NULL. */
static dvi_status check_body(const dvi_ccp_problem* p, int32_t b, char* msg, size_t n)
{
    const char* mname = p->inv_mass ? "inv_mass" : "inv_mass_rigid";
    double tmp[36];
    if (!p->inv_mass)
        for (int k = 0; k < 10; k++)
            if (!isfinite(p->inv_mass_rigid[10 * (size_t)b + k]))
                return fail(msg, n, "inv_mass_rigid[body %d][%d]: not finite", b, k);
    const double* A = ccp_minv_block(p, b, tmp);
    double scale = 0.0;
    for (int k = 0; k < 36; k++) {
        if (!isfinite(A[k])) return fail(msg, n, "inv_mass[body %d][%d]: not finite", b, k);
        if (fabs(A[k]) > scale) scale = fabs(A[k]);
    }
    for (int i = 0; i < 6; i++) {
        if (A[7 * i] < 0.0) return fail(msg, n, "%s[body %d]: negative diagonal entry %d", mname, b, i);
        for (int j = i + 1; j < 6; j++)
            if (fabs(A[6 * i + j] - A[6 * j + i]) > 1e-12 * scale)
                return fail(msg, n, "%s[body %d]: not symmetric (entries %d,%d and %d,%d of the 6x6 block)", mname,
                            b, i, j, j, i);
    }
    if (!psd6(A)) return fail(msg, n, "%s[body %d]: not positive semidefinite", mname, b);
    return DVI_OK;
}

/* check_body(p, b) == DVI_OK for a body given by inv_mass_rigid (R: its
 * 10 numbers), without forming the 6×6 block: the same tests with the same
 * operations, less those on its exact zeros (psd6 of [R₀ I, 0; 0, A] is a
 * Cholesky of R₀ + ε three times and of A + ε I, ε from the whole trace). */
static bool rigid_body_ok(const double* R)
{
    double scale = 0.0;
    for (int k = 0; k < 10; k++) {
        if (!isfinite(R[k])) return false;
        if (fabs(R[k]) > scale) scale = fabs(R[k]);
    }
    if (R[0] < 0.0 || R[1] < 0.0 || R[5] < 0.0 || R[9] < 0.0) return false;
    for (int i = 0; i < 3; i++)
        for (int j = i + 1; j < 3; j++)
            if (fabs(R[1 + 3 * i + j] - R[1 + 3 * j + i]) > 1e-12 * scale) return false;
    double tr = 0.0;
    tr += R[0];
    tr += R[0];
    tr += R[0];
    tr += R[1];
    tr += R[5];
    tr += R[9];
    if (tr == 0.0) return true;
    const double eps = 1e-12 * tr;
    if (!(R[0] + eps > 0.0)) return false;
    double L[3][3] = {{0}};
    for (int j = 0; j < 3; j++) {
        double d = R[1 + 4 * j] + eps;
        for (int k = 0; k < j; k++) d -= L[j][k] * L[j][k];
        if (!(d > 0.0)) return false;
        L[j][j] = sqrt(d);
        for (int i = j + 1; i < 3; i++) {
            double v = R[1 + 3 * i + j];
            for (int k = 0; k < j; k++) v -= L[i][k] * L[j][k];
            L[i][j] = v / L[j][j];
        }
    }
    return true;
}

/* check_body as an item of first_failure: a body in the rigid layout is
 * judged on its ten numbers when no message is asked for. */
static dvi_status body_item(const dvi_ccp_problem* p, const int32_t* brow, int32_t b, char* msg, size_t n)
{
    (void)brow;
    if (!msg && !p->inv_mass)
        return rigid_body_ok(p->inv_mass_rigid + 10 * (size_t)b) ? DVI_OK : DVI_ERR_INVALID_ARG;
    return check_body(p, b, msg, n);
}

/* r and the compliance on block b's rows (brow: each block's first row);
 * msg may be NULL. */
static dvi_status check_rows(const dvi_ccp_problem* p, const int32_t* brow, int32_t b, char* msg, size_t n)
{
    for (int32_t i = brow[b]; i < brow[b + 1]; i++) {
        if (!isfinite(p->r[i])) return fail(msg, n, "r[%d] (blocks[%d]): not finite", i, b);
        if (p->compliance && (!isfinite(p->compliance[i]) || p->compliance[i] < 0.0))
            return fail(msg, n, "compliance[%d] (blocks[%d]): must be finite and >= 0 (got %g)", i, b,
                        p->compliance[i]);
    }
    return DVI_OK;
}

/* The full validation; y and wy hold rows doubles each (symmetry test of W),
 * brow block_count + 1 ints (each block's first row, once the blocks pass);
 * the checks of rows, bodies and contact frames run on `threads` threads and
 * name the first bad item, as a serial pass would. */
dvi_status ccp_check(const dvi_ccp_problem* p, double* y, double* wy, int32_t* brow, int threads, char* msg,
                         size_t n)
{
    if (msg && n) msg[0] = '\0';
    if (!p) return fail(msg, n, "problem: NULL");
    if (p->rows <= 0) return fail(msg, n, "rows: must be > 0 (got %d; empty problem)", p->rows);
    if (p->block_count <= 0) return fail(msg, n, "block_count: must be > 0 (got %d)", p->block_count);
    if (!p->blocks) return fail(msg, n, "blocks: NULL");
    int64_t sum = 0;
    for (int32_t b = 0; b < p->block_count; b++) {
        const dvi_ccp_block* B = &p->blocks[b];
        int32_t k = dvi_block_rows(B->kind);
        if (k == 0) return fail(msg, n, "blocks[%d].kind: unknown block kind %d", b, (int)B->kind);
        if (B->kind == DVI_BLOCK_FRICTION || B->kind == DVI_BLOCK_FRICTION_ROLLING) {
            if (!isfinite(B->mu) || B->mu < 0.0)
                return fail(msg, n, "blocks[%d].mu: must be finite and >= 0 (got %g)", b, B->mu);
        }
        if (B->kind == DVI_BLOCK_FRICTION_ROLLING) {
            if (!isfinite(B->mu_spin) || B->mu_spin < 0.0)
                return fail(msg, n, "blocks[%d].mu_spin: must be finite and >= 0 (got %g)", b, B->mu_spin);
            if (!isfinite(B->mu_roll) || B->mu_roll < 0.0)
                return fail(msg, n, "blocks[%d].mu_roll: must be finite and >= 0 (got %g)", b, B->mu_roll);
        }
        brow[b] = (int32_t)sum; /* beyond rows only when the test below fails */
        sum += k;
    }
    brow[p->block_count] = (int32_t)sum;
    if (sum != p->rows)
        return fail(msg, n, "blocks: their rows add up to %lld but rows is %d", (long long)sum, p->rows);
    if (!p->r) return fail(msg, n, "r: NULL");
    dvi_status st = first_failure(p, brow, p->block_count, threads, 4096, check_rows, msg, n);
    if (st != DVI_OK) return st;
    bool has_d = p->D != NULL, has_w = p->W != NULL;
    if (has_d == has_w)
        return fail(msg, n, has_d ? "operator: both D and W are given; give exactly one"
                                  : "operator: neither D (with inv_mass) nor W is given");
    if (has_d) {
        if (p->body_count < 0) return fail(msg, n, "body_count: must be >= 0 (got %d)", p->body_count);
        if (p->body_count > INT32_MAX / 36) return fail(msg, n, "body_count: too large (%d)", p->body_count);
        if (p->body_count > 0 && !p->inv_mass && !p->inv_mass_rigid)
            return fail(msg, n, "inv_mass: NULL (give inv_mass or inv_mass_rigid)");
        if (p->inv_mass && p->inv_mass_rigid)
            return fail(msg, n, "inv_mass, inv_mass_rigid: both given; give exactly one");
        st = check_csc(p->D, "D", 6 * p->body_count, p->rows, true, msg, n);
        if (st != DVI_OK) return st;
        st = first_failure(p, brow, p->body_count, threads, 1024, body_item, msg, n);
        if (st != DVI_OK) return st;
        if (p->frames) {
            st = check_frames(p, brow, threads, msg, n);
            if (st != DVI_OK) return st;
        }
        if (p->G) {
            if (p->G->rows < 1) return fail(msg, n, "G: must have at least one row (got %d)", p->G->rows);
            st = check_csc(p->G, "G", p->G->rows, p->rows, true, msg, n);
            if (st != DVI_OK) return st;
        }
    } else {
        if (p->frames) return fail(msg, n, "frames: given with W; contact frames need the factor form (D, inv_mass)");
        if (p->G) return fail(msg, n, "G: given with W; the low-rank term needs the factor form (fold it into W)");
        st = check_csc(p->W, "W", p->rows, p->rows, false, msg, n);
        if (st != DVI_OK) return st;
        /* symmetry: W y == Wᵀ y for a fixed pseudo-random y */
        double err = 0.0, mag = 0.0;
        if (!ccp_csc_symmetric(p->W, y, wy, &err, &mag))
            return fail(msg, n, "W: not symmetric (|Wy - W'y| = %.3g for |W||y| = %.3g)", err, mag);
    }
    return DVI_OK;
}

static dvi_status validate(const dvi_ccp_problem* p, char* msg, size_t msg_size)
{
    double* tmp = NULL;
    int32_t* brow = NULL;
    if (p && p->rows > 0 && p->W && !p->D) {
        tmp = malloc(2 * (size_t)p->rows * sizeof(double));
        if (!tmp) return fail(msg, msg_size, "out of memory validating W"), DVI_ERR_NOMEM;
    }
    if (p && p->block_count > 0) {
        brow = malloc(((size_t)p->block_count + 1) * sizeof(int32_t));
        if (!brow) {
            free(tmp);
            return fail(msg, msg_size, "out of memory validating the blocks"), DVI_ERR_NOMEM;
        }
    }
    dvi_status st = ccp_check(p, tmp, tmp ? tmp + p->rows : NULL, brow, 1, msg, msg_size);
    free(tmp);
    free(brow);
    return st;
}

dvi_status dvi_ccp_validate(const dvi_ccp_problem* p, char* msg, size_t msg_size)
{
    char text[512] = "";
    dvi_status st = validate(p, text, sizeof text);
    if (msg && msg_size) snprintf(msg, msg_size, "%s", text);
    return st == DVI_OK ? st : base_error_set(st, text);
}

void ccp_csc_mul(const dvi_csc* A, const double* x, double* y)
{
    memset(y, 0, (size_t)A->rows * sizeof(double));
    for (int32_t j = 0; j < A->cols; j++)
        for (int32_t k = A->colptr[j]; k < A->colptr[j + 1]; k++) y[A->rowind[k]] += A->values[k] * x[j];
}

bool ccp_csc_symmetric(const dvi_csc* A, double* y, double* ay, double* err_out, double* mag_out)
{
    const int32_t n = A->cols;
    uint64_t seed = 12345;
    for (int32_t k = 0; k < n; k++) y[k] = base_uniform_sym(&seed);
    ccp_csc_mul(A, y, ay);
    double err = 0.0, mag = 0.0;
    for (int32_t j = 0; j < n; j++) {
        double s = 0.0, a = 0.0;
        for (int32_t k = A->colptr[j]; k < A->colptr[j + 1]; k++) {
            s += A->values[k] * y[A->rowind[k]];
            a += fabs(A->values[k] * y[A->rowind[k]]);
        }
        const double d = fabs(s - ay[j]);
        if (d > err) err = d;
        if (a > mag) mag = a;
    }
    if (err_out) *err_out = err;
    if (mag_out) *mag_out = mag;
    return err <= 1e-9 * mag;
}
