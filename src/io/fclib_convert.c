/* dvicontact — FCLIB files, the conversions to and from the CCP: a global
 * problem made a CCP (the factor form for a block-diagonal M, else W by
 * CHOLMOD), the problem packed into one owning block, and the W of a factor-
 * form CCP for the writer (fclib_internal.h: the whole job). */
#include "fclib_internal.h"
#include "error.h"

#include "ccp_work.h"

#include <cholmod.h>

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the problem being built ------------------------------------------------------------ */

void fclib_built_free(built* b)
{
    free(b->blk);
    free(b->r);
    fclib_csc_free(&b->op);
    free(b->inv_mass);
    free(b->gamma0);
    free(b->solution);
    memset(b, 0, sizeof *b);
}

static size_t align16(size_t x)
{
    return (x + 15u) & ~(size_t)15u;
}

/* Packs b into one owning block (see THE OWNING OBJECT); frees b's arrays. */
dvi_ccp_file* fclib_pack(built* b)
{
    const int32_t m = b->rows, cols = b->op.cols;
    const size_t nnz = (size_t)b->op.p[cols];
    size_t off = OWNER_HEADER;
    size_t o_csc = off;
    off = align16(off + sizeof(dvi_csc));
    size_t o_blk = off;
    off = align16(off + (size_t)b->blocks * sizeof(dvi_ccp_block));
    size_t o_r = off;
    off = align16(off + (size_t)m * sizeof(double));
    size_t o_p = off;
    off = align16(off + ((size_t)cols + 1) * sizeof(int32_t));
    size_t o_i = off;
    off = align16(off + nnz * sizeof(int32_t));
    size_t o_x = off;
    off = align16(off + nnz * sizeof(double));
    size_t o_im = off;
    off = align16(off + (b->factor ? 36 * (size_t)b->bodies * sizeof(double) : 0));
    size_t o_g0 = off;
    off = align16(off + (b->gamma0 ? (size_t)m * sizeof(double) : 0));
    size_t o_sol = off;
    off = align16(off + (b->solution ? (size_t)m * sizeof(double) : 0));
    char* block = calloc(1, off);
    if (!block) return NULL;
    dvi_ccp_file* f = (dvi_ccp_file*)block;
    dvi_csc* op = (dvi_csc*)(block + o_csc);
    memcpy(block + o_blk, b->blk, (size_t)b->blocks * sizeof(dvi_ccp_block));
    memcpy(block + o_r, b->r, (size_t)m * sizeof(double));
    memcpy(block + o_p, b->op.p, ((size_t)cols + 1) * sizeof(int32_t));
    if (nnz) {
        memcpy(block + o_i, b->op.i, nnz * sizeof(int32_t));
        memcpy(block + o_x, b->op.x, nnz * sizeof(double));
    }
    *op = (dvi_csc){b->op.rows, cols, (const int32_t*)(block + o_p), (const int32_t*)(block + o_i),
                    (const double*)(block + o_x)};
    dvi_ccp_problem* p = &f->problem;
    *p = dvi_ccp_problem_empty();
    p->rows = m;
    p->block_count = b->blocks;
    p->blocks = (const dvi_ccp_block*)(block + o_blk);
    p->r = (const double*)(block + o_r);
    if (b->factor) {
        memcpy(block + o_im, b->inv_mass, 36 * (size_t)b->bodies * sizeof(double));
        p->body_count = b->bodies;
        p->inv_mass = (const double*)(block + o_im);
        p->D = op;
    } else {
        p->W = op;
    }
    if (b->gamma0) {
        memcpy(block + o_g0, b->gamma0, (size_t)m * sizeof(double));
        f->gamma0 = (const double*)(block + o_g0);
    }
    if (b->solution) {
        memcpy(block + o_sol, b->solution, (size_t)m * sizeof(double));
        f->solution = (const double*)(block + o_sol);
    }
    fclib_built_free(b);
    return f;
}

/* Blocks (contacts friction blocks, then bilateral rows) and μ. */
dvi_status fclib_make_blocks(const io_msg* c, built* b, const double* mu, const char* mu_path)
{
    b->blocks = b->contacts + b->equalities;
    b->rows = 3 * b->contacts + b->equalities;
    b->blk = calloc((size_t)b->blocks + 1, sizeof(dvi_ccp_block));
    if (!b->blk) return io_fail(c, DVI_ERR_NOMEM, "out of memory");
    for (int32_t a = 0; a < b->contacts; a++) {
        if (!(mu[a] >= 0.0))
            return io_fail(c, DVI_ERR_INVALID_ARG, "%s[%d]: friction coefficient must be >= 0 (got %g)", mu_path, a,
                        mu[a]);
        b->blk[a].kind = DVI_BLOCK_FRICTION;
        b->blk[a].mu = mu[a];
    }
    for (int32_t k = 0; k < b->equalities; k++) b->blk[b->contacts + k].kind = DVI_BLOCK_BILATERAL;
    return DVI_OK;
}

/* ---- global problems: the factor form --------------------------------------------- */

/* Diagonal blocks of M from the profile of its nonzeros (explicit zeros
 * ignored): a block ends after index k when no nonzero of columns 0..k lies
 * below row k and no nonzero of columns k+1.. lies above row k+1 (both
 * tested, so a pattern that is symmetric only up to rounding still splits
 * correctly). O(n + nnz). starts[0..count] (starts[count] = n); returns the
 * largest block size, or −1 when out of memory. */
int32_t fclib_find_blocks(const csc* M, int32_t* starts, int32_t* count)
{
    const int32_t n = M->cols;
    int32_t* lo = malloc(((size_t)n + 1) * sizeof(int32_t)); /* suffix minimum of the top rows */
    if (!lo) return -1;
    for (int32_t j = 0; j < n; j++) {
        lo[j] = j;
        for (int32_t k = M->p[j]; k < M->p[j + 1]; k++)
            if (M->x[k] != 0.0 && M->i[k] < lo[j]) lo[j] = M->i[k];
    }
    lo[n] = n;
    for (int32_t j = n - 1; j >= 0; j--)
        if (lo[j + 1] < lo[j]) lo[j] = lo[j + 1];
    int32_t nb = 0, largest = 0, reach = -1;
    starts[nb++] = 0;
    for (int32_t j = 0; j < n; j++) {
        for (int32_t k = M->p[j]; k < M->p[j + 1]; k++)
            if (M->x[k] != 0.0 && M->i[k] > reach) reach = M->i[k];
        if (j > reach) reach = j;
        if (reach <= j && lo[j + 1] > j) { /* boundary after j */
            if (j + 1 - starts[nb - 1] > largest) largest = j + 1 - starts[nb - 1];
            starts[nb++] = j + 1;
        }
    }
    free(lo);
    *count = nb - 1; /* the last start is n */
    return largest;
}

/* Inverts the symmetric positive definite k×k A (row-major, k ≤ 6) into
 * inv (row-major, k×k), symmetrised. false if not positive definite. */
static bool spd_inverse(const double* A, int k, double* inv)
{
    double L[36] = {0};
    for (int j = 0; j < k; j++) {
        double d = A[k * j + j];
        for (int q = 0; q < j; q++) d -= L[6 * j + q] * L[6 * j + q];
        if (!(d > 0.0) || !isfinite(d)) return false;
        L[6 * j + j] = sqrt(d);
        for (int i = j + 1; i < k; i++) {
            double s = A[k * i + j];
            for (int q = 0; q < j; q++) s -= L[6 * i + q] * L[6 * j + q];
            L[6 * i + j] = s / L[6 * j + j];
        }
    }
    double X[36];
    for (int col = 0; col < k; col++) { /* solve L Lᵀ x = e_col */
        double y[6];
        for (int i = 0; i < k; i++) {
            double s = i == col ? 1.0 : 0.0;
            for (int q = 0; q < i; q++) s -= L[6 * i + q] * y[q];
            y[i] = s / L[6 * i + i];
        }
        for (int i = k - 1; i >= 0; i--) {
            double s = y[i];
            for (int q = i + 1; q < k; q++) s -= L[6 * q + i] * X[6 * q + col];
            X[6 * i + col] = s / L[6 * i + i];
        }
    }
    for (int i = 0; i < k; i++)
        for (int j = 0; j < k; j++) inv[k * i + j] = 0.5 * (X[6 * i + j] + X[6 * j + i]);
    for (int i = 0; i < k * k; i++)
        if (!isfinite(inv[i])) return false;
    return true;
}

/* Factor form from a block-diagonal M (blocks ≤ 6): groups, M⁻¹ blocks, D,
 * and r = Bᵀ M⁻¹ f + wb. */
dvi_status fclib_factor_form(const io_msg* c, const csc* M, const int32_t* starts, int32_t nblk, const csc* B,
                             const double* f, const double* wb, built* b, int32_t* mass_blocks)
{
    int32_t n = M->cols;
    /* greedy groups of whole blocks, at most 6 degrees of freedom each */
    int32_t* gstart = malloc(((size_t)nblk + 2) * sizeof(int32_t));
    int32_t* row_of = malloc(((size_t)n + 1) * sizeof(int32_t)); /* dof -> row of D */
    double* y = malloc(((size_t)n + 1) * sizeof(double));        /* M⁻¹ f */
    if (!gstart || !row_of || !y) {
        free(gstart);
        free(row_of);
        free(y);
        return io_fail(c, DVI_ERR_NOMEM, "out of memory");
    }
    int32_t ng = 0;
    for (int32_t k = 0; k < nblk; k++)
        if (ng == 0 || starts[k + 1] - gstart[ng - 1] > 6) gstart[ng++] = starts[k];
    gstart[ng] = n;
    dvi_status st = DVI_OK;
    if (6 * (int64_t)ng > INT32_MAX) {
        st = io_fail(c, DVI_ERR_INVALID_ARG, "/fclib_global/M: too many degrees of freedom");
        goto done;
    }
    b->bodies = ng;
    b->inv_mass = calloc(36 * (size_t)ng + 1, sizeof(double));
    if (!b->inv_mass) {
        st = io_fail(c, DVI_ERR_NOMEM, "out of memory");
        goto done;
    }
    for (int32_t g = 0, k = 0; g < ng; g++) {
        for (int32_t d = gstart[g]; d < gstart[g + 1]; d++) row_of[d] = 6 * g + (d - gstart[g]);
        for (; k < nblk && starts[k] < gstart[g + 1]; k++) { /* blocks of group g */
            int32_t s0 = starts[k], sz = starts[k + 1] - s0;
            double A[36] = {0}, inv[36];
            for (int32_t j = s0; j < s0 + sz; j++)
                for (int32_t e = M->p[j]; e < M->p[j + 1]; e++) {
                    int32_t i = M->i[e];
                    if (i >= s0 && i < s0 + sz) A[sz * (i - s0) + (j - s0)] = M->x[e];
                }
            if (!spd_inverse(A, sz, inv)) {
                st = io_fail(c, DVI_ERR_SINGULAR,
                          "/fclib_global/M: diagonal block of rows %d..%d is not positive definite", s0,
                          s0 + sz - 1);
                goto done;
            }
            int32_t o = s0 - gstart[g];
            double* IM = b->inv_mass + 36 * (size_t)g;
            for (int32_t i = 0; i < sz; i++)
                for (int32_t j = 0; j < sz; j++) IM[6 * (o + i) + (o + j)] = inv[sz * i + j];
            for (int32_t i = 0; i < sz; i++) {
                double s = 0.0;
                for (int32_t j = 0; j < sz; j++) s += inv[sz * i + j] * f[s0 + j];
                y[s0 + i] = s;
            }
        }
    }
    /* D = B with rows renumbered (monotone: rows stay sorted) */
    int32_t nnz = B->p[B->cols];
    b->op.rows = 6 * ng;
    b->op.cols = B->cols;
    b->op.p = malloc(((size_t)B->cols + 1) * sizeof(int32_t));
    b->op.i = malloc(((size_t)nnz + 1) * sizeof(int32_t));
    b->op.x = malloc(((size_t)nnz + 1) * sizeof(double));
    b->r = malloc(((size_t)B->cols + 1) * sizeof(double));
    if (!b->op.p || !b->op.i || !b->op.x || !b->r) {
        st = io_fail(c, DVI_ERR_NOMEM, "out of memory");
        goto done;
    }
    memcpy(b->op.p, B->p, ((size_t)B->cols + 1) * sizeof(int32_t));
    for (int32_t e = 0; e < nnz; e++) {
        b->op.i[e] = row_of[B->i[e]];
        b->op.x[e] = B->x[e];
    }
    fclib_csc_tmul(B, y, wb, b->r);
    b->factor = true;
    *mass_blocks = nblk;
done:
    free(gstart);
    free(row_of);
    free(y);
    return st;
}

/* ---- global problems: W by CHOLMOD --------------------------------------------------- */

static cholmod_sparse* to_cholmod(const csc* A, int stype, cholmod_common* cc)
{
    size_t nnz = (size_t)A->p[A->cols];
    cholmod_sparse* S =
        cholmod_allocate_sparse((size_t)A->rows, (size_t)A->cols, nnz, 1, 1, stype, CHOLMOD_REAL, cc);
    if (!S) return NULL;
    int* sp = S->p;
    int* si = S->i;
    double* sx = S->x;
    for (int32_t j = 0; j <= A->cols; j++) sp[j] = A->p[j];
    for (size_t k = 0; k < nnz; k++) {
        si[k] = A->i[k];
        sx[k] = A->x[k];
    }
    return S;
}

dvi_status fclib_delassus_cholmod(const io_msg* c, const csc* M, const csc* B, const double* f, const double* wb,
                                  built* b)
{
    cholmod_common cc;
    cholmod_start(&cc);
    cc.print = 0;
    cc.error_handler = NULL;
    cc.supernodal = CHOLMOD_SIMPLICIAL;
    cc.final_ll = 1;
    cc.nmethods = 1;
    cc.method[0].ordering = CHOLMOD_AMD;
    dvi_status st = DVI_OK;
    cholmod_sparse *Ms = NULL, *Bs = NULL, *PB = NULL, *Y = NULL, *Yt = NULL, *Ws = NULL;
    cholmod_factor* L = NULL;
    cholmod_dense *fd = NULL, *x = NULL;
    const int32_t n = M->cols, m = B->cols;
    Ms = to_cholmod(M, 1, &cc);
    Bs = to_cholmod(B, 0, &cc);
    if (!Ms || !Bs) goto nomem;
    L = cholmod_analyze(Ms, &cc);
    if (!L) goto fail;
    if (!cholmod_factorize(Ms, L, &cc)) goto fail;
    if (cc.status == CHOLMOD_NOT_POSDEF || L->minor < (size_t)n) {
        st = io_fail(c, DVI_ERR_SINGULAR, "/fclib_global/M: not positive definite (CHOLMOD: leading minor %zu of %d)",
                  (size_t)L->minor + 1, n);
        goto done;
    }
    if (!L->is_ll) goto fail;
    PB = cholmod_spsolve(CHOLMOD_P, L, Bs, &cc);
    if (!PB) goto fail;
    Y = cholmod_spsolve(CHOLMOD_L, L, PB, &cc);
    if (!Y) goto fail;
    Yt = cholmod_transpose(Y, 1, &cc);
    if (!Yt) goto fail;
    Ws = cholmod_ssmult(Yt, Y, 0, 1, 1, &cc);
    if (!Ws) goto fail;
    fd = cholmod_allocate_dense((size_t)n, 1, (size_t)n, CHOLMOD_REAL, &cc);
    if (!fd) goto nomem;
    memcpy(fd->x, f, (size_t)n * sizeof(double));
    x = cholmod_solve(CHOLMOD_A, L, fd, &cc);
    if (!x) goto fail;
    {
        size_t nnz = cholmod_nnz(Ws, &cc);
        if (nnz > (size_t)INT32_MAX) {
            st = io_fail(c, DVI_ERR_NOMEM, "W = H' M^-1 H: too many entries (%zu)", nnz);
            goto done;
        }
        b->op.rows = m;
        b->op.cols = m;
        b->op.p = malloc(((size_t)m + 1) * sizeof(int32_t));
        b->op.i = malloc((nnz + 1) * sizeof(int32_t));
        b->op.x = malloc((nnz + 1) * sizeof(double));
        b->r = malloc(((size_t)m + 1) * sizeof(double));
        if (!b->op.p || !b->op.i || !b->op.x || !b->r) goto nomem;
        const int* wp = Ws->p;
        const int* wi = Ws->i;
        const double* wx = Ws->x;
        for (int32_t j = 0; j <= m; j++) b->op.p[j] = wp[j];
        for (size_t k = 0; k < nnz; k++) {
            b->op.i[k] = wi[k];
            b->op.x[k] = wx[k];
        }
        fclib_csc_tmul(B, (const double*)x->x, wb, b->r);
        b->factor = false;
    }
    goto done;
nomem:
    st = io_fail(c, DVI_ERR_NOMEM, "out of memory forming W = H' M^-1 H");
    goto done;
fail:
    st = io_fail(c, cc.status == CHOLMOD_OUT_OF_MEMORY ? DVI_ERR_NOMEM : DVI_ERR_NUMERIC,
              "forming W = H' M^-1 H with CHOLMOD failed (status %d)", cc.status);
done:
    cholmod_free_dense(&x, &cc);
    cholmod_free_dense(&fd, &cc);
    cholmod_free_sparse(&Ws, &cc);
    cholmod_free_sparse(&Yt, &cc);
    cholmod_free_sparse(&Y, &cc);
    cholmod_free_sparse(&PB, &cc);
    cholmod_free_factor(&L, &cc);
    cholmod_free_sparse(&Bs, &cc);
    cholmod_free_sparse(&Ms, &cc);
    cholmod_finish(&cc);
    return st;
}

/* y = N x for the problem being built (either form; no compliance). */
dvi_status fclib_built_apply(const built* b, const double* x, double* y)
{
    if (!b->factor) {
        fclib_csc_mul(&b->op, x, y);
        return DVI_OK;
    }
    double* v = calloc(6 * (size_t)b->bodies + 1, sizeof(double));
    double* mv = malloc((6 * (size_t)b->bodies + 1) * sizeof(double));
    if (!v || !mv) {
        free(v);
        free(mv);
        return DVI_ERR_NOMEM;
    }
    fclib_csc_mul(&b->op, x, v);
    for (int32_t g = 0; g < b->bodies; g++)
        for (int i = 0; i < 6; i++) {
            double s = 0.0;
            for (int j = 0; j < 6; j++) s += b->inv_mass[36 * (size_t)g + 6 * i + j] * v[6 * g + j];
            mv[6 * g + i] = s;
        }
    fclib_csc_tmul(&b->op, mv, NULL, y);
    free(v);
    free(mv);
    return DVI_OK;
}

/* ---- writing ------------------------------------------------------------------------------ */

static int cmp_int32(const void* a, const void* b)
{
    int32_t x = *(const int32_t*)a, y = *(const int32_t*)b;
    return (x > y) - (x < y);
}

/* W = Dᵀ M⁻¹ D (+ compliance on the diagonal) of a factor-form problem, in
 * canonical CSC: E = M⁻¹ D body by body, then W(:, j) = Σ_k E(k, j) D(k, :)
 * over the rows of D (a row-wise copy of D), accumulated in a dense column
 * with a marker; each column's rows are sorted. */
dvi_status fclib_factor_to_w(const dvi_ccp_problem* p, csc* W)
{
    memset(W, 0, sizeof *W);
    const dvi_csc* D = p->D;
    const int32_t m = p->rows, nd = D->rows;
    const int32_t nnz = D->colptr[m];
    /* D by rows */
    int32_t* rp = calloc((size_t)nd + 1, sizeof(int32_t));
    int32_t* rc = malloc(((size_t)nnz + 1) * sizeof(int32_t));
    double* rx = malloc(((size_t)nnz + 1) * sizeof(double));
    int32_t* next = malloc(((size_t)nd + 1) * sizeof(int32_t));
    double* acc = calloc((size_t)m + 1, sizeof(double));
    int32_t* mark = malloc(((size_t)m + 1) * sizeof(int32_t));
    int32_t* list = malloc(((size_t)m + 1) * sizeof(int32_t));
    double e[6];
    size_t cap = (size_t)nnz * 4 + 16, used = 0;
    W->p = malloc(((size_t)m + 1) * sizeof(int32_t));
    W->i = malloc(cap * sizeof(int32_t));
    W->x = malloc(cap * sizeof(double));
    dvi_status st = DVI_OK;
    if (!rp || !rc || !rx || !next || !acc || !mark || !list || !W->p || !W->i || !W->x) {
        st = DVI_ERR_NOMEM;
        goto done;
    }
    for (int32_t k = 0; k < nnz; k++) rp[D->rowind[k] + 1]++;
    for (int32_t r = 0; r < nd; r++) rp[r + 1] += rp[r];
    memcpy(next, rp, (size_t)nd * sizeof(int32_t));
    for (int32_t j = 0; j < m; j++)
        for (int32_t k = D->colptr[j]; k < D->colptr[j + 1]; k++) {
            int32_t d = next[D->rowind[k]]++;
            rc[d] = j;
            rx[d] = D->values[k];
        }
    for (int32_t j = 0; j < m; j++) mark[j] = -1;
    W->p[0] = 0;
    for (int32_t j = 0; j < m; j++) {
        int32_t cnt = 0;
        int32_t k = D->colptr[j];
        while (k < D->colptr[j + 1]) { /* one run per body (rows strictly increase) */
            int32_t body = D->rowind[k] / 6;
            double dcol[6] = {0};
            for (; k < D->colptr[j + 1] && D->rowind[k] / 6 == body; k++) dcol[D->rowind[k] - 6 * body] = D->values[k];
            double tmp[36];
            const double* Mi = ccp_minv_block(p, body, tmp);
            for (int a = 0; a < 6; a++) {
                double s = 0.0;
                for (int b2 = 0; b2 < 6; b2++) s += Mi[6 * a + b2] * dcol[b2];
                e[a] = s;
            }
            for (int a = 0; a < 6; a++) {
                if (e[a] == 0.0) continue;
                int32_t row = 6 * body + a;
                for (int32_t t = rp[row]; t < rp[row + 1]; t++) {
                    int32_t i = rc[t];
                    if (mark[i] != j) {
                        mark[i] = j;
                        acc[i] = 0.0;
                        list[cnt++] = i;
                    }
                    acc[i] += rx[t] * e[a];
                }
            }
        }
        if (p->compliance && p->compliance[j] != 0.0) {
            if (mark[j] != j) {
                mark[j] = j;
                acc[j] = 0.0;
                list[cnt++] = j;
            }
            acc[j] += p->compliance[j];
        }
        qsort(list, (size_t)cnt, sizeof(int32_t), cmp_int32);
        if (used + (size_t)cnt > cap) {
            size_t nc = cap * 2 > used + (size_t)cnt ? cap * 2 : used + (size_t)cnt;
            if (nc > (size_t)INT32_MAX) {
                st = DVI_ERR_NOMEM;
                goto done;
            }
            int32_t* ni = realloc(W->i, nc * sizeof(int32_t));
            if (ni) W->i = ni;
            double* nx = realloc(W->x, nc * sizeof(double));
            if (nx) W->x = nx;
            if (!ni || !nx) {
                st = DVI_ERR_NOMEM;
                goto done;
            }
            cap = nc;
        }
        for (int32_t a = 0; a < cnt; a++) {
            W->i[used] = list[a];
            W->x[used++] = acc[list[a]];
        }
        W->p[j + 1] = (int32_t)used;
    }
    W->rows = m;
    W->cols = m;
done:
    free(rp);
    free(rc);
    free(rx);
    free(next);
    free(acc);
    free(mark);
    free(list);
    if (st != DVI_OK) fclib_csc_free(W);
    return st;
}
