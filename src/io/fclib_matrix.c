/* dvicontact — FCLIB files, sparse matrices: the CSC matrices of a file
 * (read from the CSR, CSC and triplet layouts), their products, and the
 * symmetry test with the repairs it calls for (a stored triangle completed,
 * the symmetric part taken) (fclib_internal.h: the whole job). */
#include "fclib_internal.h"
#include "error.h"

#include "ccp_work.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- sparse matrices --------------------------------------------------------------- */

void fclib_csc_free(csc* A)
{
    free(A->p);
    free(A->i);
    free(A->x);
    memset(A, 0, sizeof *A);
}

bool fclib_triplets_init(fclib_triplets* t, int64_t cap)
{
    t->n = 0;
    t->ri = calloc((size_t)cap + 1, sizeof(int32_t));
    t->ci = calloc((size_t)cap + 1, sizeof(int32_t));
    t->x = calloc((size_t)cap + 1, sizeof(double));
    if (t->ri && t->ci && t->x) return true;
    fclib_triplets_free(t);
    return false;
}

void fclib_triplets_free(fclib_triplets* t)
{
    free(t->ri);
    free(t->ci);
    free(t->x);
    memset(t, 0, sizeof *t);
}

/* Builds the canonical CSC of `rows` × `cols` from nnz entries (ri[k], ci[k],
 * x[k]), indices already checked: counting sort by row, then by column over
 * the rows in order (so rows increase within a column and equal entries keep
 * their order), then duplicates summed in that order. */
dvi_status fclib_csc_build(int32_t rows, int32_t cols, int64_t nnz, const int32_t* ri, const int32_t* ci,
                           const double* x, csc* out)
{
    memset(out, 0, sizeof *out);
    int32_t* rp = calloc((size_t)rows + 1, sizeof(int32_t));
    int32_t* rc = malloc(((size_t)nnz + 1) * sizeof(int32_t));
    double* rx = malloc(((size_t)nnz + 1) * sizeof(double));
    int32_t* next = malloc(((size_t)(rows > cols ? rows : cols) + 1) * sizeof(int32_t));
    out->p = calloc((size_t)cols + 1, sizeof(int32_t));
    out->i = malloc(((size_t)nnz + 1) * sizeof(int32_t));
    out->x = malloc(((size_t)nnz + 1) * sizeof(double));
    if (!rp || !rc || !rx || !next || !out->p || !out->i || !out->x) {
        free(rp);
        free(rc);
        free(rx);
        free(next);
        fclib_csc_free(out);
        return DVI_ERR_NOMEM;
    }
    for (int64_t k = 0; k < nnz; k++) rp[ri[k] + 1]++;
    for (int32_t r = 0; r < rows; r++) rp[r + 1] += rp[r];
    memcpy(next, rp, (size_t)rows * sizeof(int32_t));
    for (int64_t k = 0; k < nnz; k++) {
        int32_t e = next[ri[k]]++;
        rc[e] = ci[k];
        rx[e] = x[k];
    }
    int32_t* cp = out->p;
    for (int64_t e = 0; e < nnz; e++) cp[rc[e] + 1]++;
    for (int32_t j = 0; j < cols; j++) cp[j + 1] += cp[j];
    memcpy(next, cp, (size_t)cols * sizeof(int32_t));
    for (int32_t r = 0; r < rows; r++)
        for (int32_t e = rp[r]; e < rp[r + 1]; e++) {
            int32_t d = next[rc[e]]++;
            out->i[d] = r;
            out->x[d] = rx[e];
        }
    /* sum duplicates (adjacent within a column) */
    int32_t w = 0;
    for (int32_t j = 0; j < cols; j++) {
        int32_t start = cp[j], end = cp[j + 1];
        cp[j] = w;
        for (int32_t e = start; e < end; e++) {
            if (w > cp[j] && out->i[w - 1] == out->i[e]) {
                out->x[w - 1] += out->x[e];
            } else {
                out->i[w] = out->i[e];
                out->x[w] = out->x[e];
                w++;
            }
        }
    }
    cp[cols] = w;
    out->rows = rows;
    out->cols = cols;
    free(rp);
    free(rc);
    free(rx);
    free(next);
    return DVI_OK;
}

/* Every index of ix[0..n) (array `path`) in [0, bound); else an error
 * naming the first that is not, a `what` (row or column) index. */
static dvi_status check_indices(const io_msg* c, const char* path, const int32_t* ix, int64_t n, int32_t bound,
                                const char* what)
{
    for (int64_t k = 0; k < n; k++)
        if (ix[k] < 0 || ix[k] >= bound)
            return io_fail(c, DVI_ERR_INVALID_ARG, "%s[%lld]: %s index %d out of range [0, %d)", path, (long long)k,
                               what, ix[k], bound);
    return DVI_OK;
}

/* Reads the matrix group `g` ("/fclib_local/W") into canonical CSC.
 * rows / cols: required sizes, or −1 (any, ≥ 0); rows_from / cols_from name
 * where a required size comes from, for the message (or NULL). The header's
 * sizes are checked before anything of their size is allocated. */
dvi_status fclib_read_matrix(const io_msg* c, hid_t file, const char* g, int32_t rows, const char* rows_from,
                             int32_t cols, const char* cols_from, csc* out)
{
    memset(out, 0, sizeof *out);
    char path[PATH_MAX_LEN];
    if (!fclib_link_exists(file, g)) return io_fail(c, DVI_ERR_INVALID_ARG, "%s: missing (matrix group)", g);
    int32_t m = 0, n = 0, nz = 0;
    dvi_status st;
    snprintf(path, sizeof path, "%s/m", g);
    if ((st = fclib_read_scalar_int(c, file, path, &m)) != DVI_OK) return st;
    snprintf(path, sizeof path, "%s/n", g);
    if ((st = fclib_read_scalar_int(c, file, path, &n)) != DVI_OK) return st;
    snprintf(path, sizeof path, "%s/nz", g);
    if ((st = fclib_read_scalar_int(c, file, path, &nz)) != DVI_OK) return st;
    if (m < 0 || n < 0) return io_fail(c, DVI_ERR_INVALID_ARG, "%s: negative size %d x %d (m x n)", g, m, n);
    if (rows >= 0 && m != rows)
        return io_fail(c, DVI_ERR_INVALID_ARG, "%s/m: %d rows, expected %d%s%s%s", g, m, rows, rows_from ? " (" : "",
                    rows_from ? rows_from : "", rows_from ? ")" : "");
    if (cols >= 0 && n != cols)
        return io_fail(c, DVI_ERR_INVALID_ARG, "%s/n: %d columns, expected %d%s%s%s", g, n, cols,
                    cols_from ? " (" : "", cols_from ? cols_from : "", cols_from ? ")" : "");
    if (nz < -2)
        return io_fail(c, DVI_ERR_INVALID_ARG, "%s/nz: %d (expected -2 for CSR, -1 for CSC or a triplet count >= 0)",
                    g, nz);
    /* no dataset of a matrix holds more entries than m x n: the extents of
     * i and x (nzmax may exceed nnz) are checked against it before reading */
    const int64_t mn = (int64_t)m * (int64_t)n;
    int32_t* p = NULL;
    int32_t* ix = NULL;
    double* x = NULL;
    int32_t* ri = NULL;
    int32_t* ci = NULL;
    int64_t np = 0, ni = 0, nx = 0, nnz = 0;
    char expect[96];
    void* a = NULL;
    if (nz < 0) { /* compressed: p has (outer + 1) pointers */
        int32_t outer = nz == -1 ? n : m, inner = nz == -1 ? m : n;
        snprintf(path, sizeof path, "%s/p", g);
        snprintf(expect, sizeof expect, "%lld (%s + 1 pointers, %s)", (long long)outer + 1,
                 nz == -1 ? "columns" : "rows", nz == -1 ? "CSC" : "CSR");
        if ((st = fclib_read_array(c, file, path, RD_INT, (int64_t)outer + 1, (int64_t)outer + 1, expect, &a, &np)) !=
            DVI_OK)
            goto done;
        p = a;
        if (p[0] != 0) {
            st = io_fail(c, DVI_ERR_INVALID_ARG, "%s[0]: %d, expected 0", path, p[0]);
            goto done;
        }
        for (int32_t k = 0; k < outer; k++)
            if (p[k + 1] < p[k]) {
                st = io_fail(c, DVI_ERR_INVALID_ARG, "%s[%d]: %d, decreasing after %d", path, k + 1, p[k + 1], p[k]);
                goto done;
            }
        nnz = p[outer];
        if (nnz > mn) {
            st = io_fail(c, DVI_ERR_INVALID_ARG, "%s[%d]: %lld entries, more than the %d x %d matrix has", path, outer,
                             (long long)nnz, m, n);
            goto done;
        }
        snprintf(expect, sizeof expect, "at least %lld (the last pointer), at most %lld (m x n)", (long long)nnz,
                 (long long)mn);
        snprintf(path, sizeof path, "%s/i", g);
        if ((st = fclib_read_array_head(c, file, path, RD_INT, nnz, mn, nnz, expect, &a, &ni)) != DVI_OK) goto done;
        ix = a;
        if ((st = check_indices(c, path, ix, nnz, inner, nz == -1 ? "row" : "column")) != DVI_OK) goto done;
        snprintf(path, sizeof path, "%s/x", g);
        if ((st = fclib_read_array_head(c, file, path, RD_REAL, nnz, mn, nnz, expect, &a, &nx)) != DVI_OK) goto done;
        x = a;
        ri = malloc(((size_t)nnz + 1) * sizeof(int32_t));
        ci = malloc(((size_t)nnz + 1) * sizeof(int32_t));
        if (!ri || !ci) {
            st = io_fail(c, DVI_ERR_NOMEM, "%s: out of memory", g);
            goto done;
        }
        for (int32_t o = 0; o < outer; o++)
            for (int32_t k = p[o]; k < p[o + 1]; k++) {
                ri[k] = nz == -1 ? ix[k] : o;
                ci[k] = nz == -1 ? o : ix[k];
            }
    } else { /* triplet: i = row, p = column, nz entries */
        nnz = nz;
        if (nnz > mn) {
            st = io_fail(c, DVI_ERR_INVALID_ARG, "%s/nz: %d entries, more than the %d x %d matrix has", g, nz, m, n);
            goto done;
        }
        snprintf(expect, sizeof expect, "at least %d (nz, triplet form), at most %lld (m x n)", nz, (long long)mn);
        snprintf(path, sizeof path, "%s/i", g);
        if ((st = fclib_read_array_head(c, file, path, RD_INT, nnz, mn, nnz, expect, &a, &ni)) != DVI_OK) goto done;
        ri = a;
        if ((st = check_indices(c, path, ri, nnz, m, "row")) != DVI_OK) goto done;
        snprintf(path, sizeof path, "%s/p", g);
        if ((st = fclib_read_array_head(c, file, path, RD_INT, nnz, mn, nnz, expect, &a, &np)) != DVI_OK) goto done;
        ci = a;
        if ((st = check_indices(c, path, ci, nnz, n, "column")) != DVI_OK) goto done;
        snprintf(path, sizeof path, "%s/x", g);
        if ((st = fclib_read_array_head(c, file, path, RD_REAL, nnz, mn, nnz, expect, &a, &nx)) != DVI_OK) goto done;
        x = a;
    }
    if (fclib_csc_build(m, n, nnz, ri, ci, x, out) != DVI_OK) st = io_fail(c, DVI_ERR_NOMEM, "%s: out of memory", g);
done:
    free(p);
    free(ix);
    free(x);
    free(ri);
    free(ci);
    return st;
}

/* A borrowed view of A, the CCP layer's matrix type. */
dvi_csc fclib_csc_view(const csc* A)
{
    return (dvi_csc){A->rows, A->cols, A->p, A->i, A->x};
}

/* y = A x (A rows × cols). */
void fclib_csc_mul(const csc* A, const double* x, double* y)
{
    const dvi_csc v = fclib_csc_view(A);
    ccp_csc_mul(&v, x, y);
}

/* y = Aᵀ x + add (add may be NULL). */
void fclib_csc_tmul(const csc* A, const double* x, const double* add, double* y)
{
    for (int32_t j = 0; j < A->cols; j++) {
        double s = 0.0;
        for (int32_t k = A->p[j]; k < A->p[j + 1]; k++) s += A->x[k] * x[A->i[k]];
        y[j] = s + (add ? add[j] : 0.0);
    }
}

/* The library's symmetry test (ccp_csc_symmetric, dvi_ccp_validate's for
 * W) on the square A. -1 when out of memory, else 1 (symmetric) or 0. */
static int passes_symmetry_test(const csc* A)
{
    int32_t n = A->cols;
    double* y = calloc((size_t)n + 1, sizeof(double));
    double* ay = calloc((size_t)n + 1, sizeof(double));
    int sym = -1;
    if (y && ay) {
        const dvi_csc v = fclib_csc_view(A);
        sym = ccp_csc_symmetric(&v, y, ay, NULL, NULL) ? 1 : 0;
    }
    free(y);
    free(ay);
    return sym;
}

/* Measures the asymmetry ‖A − Aᵀ‖_F / (2‖A‖_F) of the square canonical A
 * and, when A fails the library's symmetry test, replaces A by (A + Aᵀ)/2
 * (exactly symmetric: each entry is the sum of the same two halves),
 * handing the original to *original (or freeing it when original is NULL). */
/* A symmetric matrix stored as one triangle: every off-diagonal entry in
 * the strict upper triangle, or every one in the strict lower, and at least
 * one of them. LMGC90's dumps store M so (CubeH8: 3,006 off-diagonal
 * entries, all above the diagonal). Such an A becomes A + Aᵀ − diag(A), in
 * place; *completed tells. Reading it as it stands would make its symmetric
 * part (A + Aᵀ)/2 the operator, halving every off-diagonal entry. */
dvi_status fclib_complete_triangle(csc* A, bool* completed)
{
    *completed = false;
    const int32_t n = A->cols;
    int64_t upper = 0, lower = 0;
    for (int32_t j = 0; j < n; j++)
        for (int32_t k = A->p[j]; k < A->p[j + 1]; k++) {
            if (A->i[k] < j) upper++;
            else if (A->i[k] > j) lower++;
        }
    if (A->rows != A->cols || (upper > 0) == (lower > 0)) return DVI_OK;
    const int64_t nnz = A->p[n], e_max = nnz + upper + lower;
    if (e_max > INT32_MAX) return DVI_ERR_NOMEM;
    fclib_triplets t;
    csc S = {0};
    dvi_status st = DVI_ERR_NOMEM;
    if (fclib_triplets_init(&t, e_max)) {
        for (int32_t j = 0; j < n; j++)
            for (int32_t k = A->p[j]; k < A->p[j + 1]; k++) {
                fclib_triplets_add(&t, A->i[k], j, A->x[k]);
                if (A->i[k] != j) fclib_triplets_add(&t, j, A->i[k], A->x[k]);
            }
        if (fclib_triplets_build(&t, n, n, &S) == DVI_OK) {
            fclib_csc_free(A);
            *A = S;
            *completed = true;
            st = DVI_OK;
        }
        fclib_triplets_free(&t);
    }
    return st;
}

dvi_status fclib_symmetrize(csc* A, double* asymmetry, bool* changed, csc* original)
{
    *changed = false;
    *asymmetry = 0.0;
    if (original) memset(original, 0, sizeof *original);
    const int32_t n = A->cols;
    const int32_t nnz = A->p[n];
    fclib_triplets e;
    csc T = {0}, S = {0};
    dvi_status st = DVI_ERR_NOMEM;
    if (!fclib_triplets_init(&e, 2 * (int64_t)nnz)) return st;
    for (int32_t j = 0; j < n; j++)
        for (int32_t k = A->p[j]; k < A->p[j + 1]; k++) fclib_triplets_add(&e, j, A->i[k], A->x[k]); /* Aᵀ */
    if (fclib_triplets_build(&e, n, n, &T) != DVI_OK) goto done;
    double d2 = 0.0, a2 = 0.0;
    for (int32_t j = 0; j < n; j++) { /* merge column j of A and of Aᵀ (both sorted) */
        int32_t a = A->p[j], t = T.p[j];
        while (a < A->p[j + 1] || t < T.p[j + 1]) {
            int32_t ra = a < A->p[j + 1] ? A->i[a] : n, rt = t < T.p[j + 1] ? T.i[t] : n;
            double va = 0.0, vt = 0.0;
            if (ra <= rt) va = A->x[a++];
            if (rt <= ra) vt = T.x[t++];
            d2 += (va - vt) * (va - vt);
            a2 += va * va;
        }
    }
    *asymmetry = a2 > 0.0 ? 0.5 * sqrt(d2) / sqrt(a2) : 0.0;
    int sym = passes_symmetry_test(A);
    if (sym < 0) goto done;
    if (sym == 1) {
        st = DVI_OK;
        goto done;
    }
    e.n = 0;
    for (int32_t j = 0; j < n; j++)
        for (int32_t k = A->p[j]; k < A->p[j + 1]; k++) {
            fclib_triplets_add(&e, A->i[k], j, 0.5 * A->x[k]);
            fclib_triplets_add(&e, j, A->i[k], 0.5 * A->x[k]);
        }
    if (fclib_triplets_build(&e, n, n, &S) != DVI_OK) goto done;
    if (original) *original = *A;
    else fclib_csc_free(A);
    *A = S;
    *changed = true;
    st = DVI_OK;
done:
    fclib_triplets_free(&e);
    fclib_csc_free(&T);
    return st;
}

/* Concatenates the columns of A and B (same rows); B may be empty (cols 0). */
dvi_status fclib_csc_hcat(const csc* A, const csc* B, csc* out)
{
    memset(out, 0, sizeof *out);
    int32_t na = A->p[A->cols], nb = B->cols ? B->p[B->cols] : 0;
    out->rows = A->rows;
    out->cols = A->cols + B->cols;
    out->p = malloc(((size_t)out->cols + 1) * sizeof(int32_t));
    out->i = malloc(((size_t)na + nb + 1) * sizeof(int32_t));
    out->x = malloc(((size_t)na + nb + 1) * sizeof(double));
    if (!out->p || !out->i || !out->x) {
        fclib_csc_free(out);
        return DVI_ERR_NOMEM;
    }
    memcpy(out->p, A->p, ((size_t)A->cols + 1) * sizeof(int32_t));
    for (int32_t j = 0; j < B->cols; j++) out->p[A->cols + 1 + j] = na + B->p[j + 1];
    memcpy(out->i, A->i, (size_t)na * sizeof(int32_t));
    memcpy(out->x, A->x, (size_t)na * sizeof(double));
    if (nb) {
        memcpy(out->i + na, B->i, (size_t)nb * sizeof(int32_t));
        memcpy(out->x + na, B->x, (size_t)nb * sizeof(double));
    }
    return DVI_OK;
}
