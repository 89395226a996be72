/* dvicontact — the prepared CCP operator (see the design note in ccp_work.h). */
#include "ccp_work.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

static void* grow(void* p, size_t* cap, size_t need, size_t elem, bool* ok)
{
    if (need <= *cap && p) return p;
    size_t n = need > 0 ? need : 1;
    void* q = realloc(p, n * elem);
    if (!q) {
        *ok = false;
        return p;
    }
    *cap = n;
    return q;
}

void dvi_work_free(dvi_ccp_work* w)
{
    if (!w) return;
    free(w->block_row);
    free(w->row_block);
    free(w->run_ptr);
    free(w->run_body);
    free(w->run_col);
    free(w->run_d);
    free(w->run_md);
    free(w->body_ptr);
    free(w->brun_col);
    free(w->brun_d);
    free(w->wt_p);
    free(w->wt_i);
    free(w->wt_x);
    free(w->diag);
    free(w->bodyvec);
    free(w->cursor);
    for (int k = 0; k < DVI_WORK_VECTORS; k++) free(w->vec[k]);
    free(w->scratch);
    free(w->part);
    memset(w, 0, sizeof *w);
}

void* dvi_work_scratch(dvi_ccp_work* w, size_t bytes)
{
    if (bytes <= w->scratch_cap && w->scratch) return w->scratch;
    free(w->scratch);
    w->scratch_cap = 0;
    size_t n = (bytes + 63) / 64 * 64;
    w->scratch = aligned_alloc(64, n > 0 ? n : 64);
    if (w->scratch) w->scratch_cap = n;
    return w->scratch;
}

/* Grows every buffer to the sizes of the problem at hand. Capacities are
 * tracked per size class; arrays of one class are (re)allocated together. */
static dvi_status reserve(dvi_ccp_work* w, int32_t m, int32_t nblocks, int32_t nbody, size_t nruns, size_t nnz)
{
    bool ok = true;
    size_t c;
    if ((size_t)m > w->cap_m || !w->diag) {
        c = w->cap_m;
        w->row_block = grow(w->row_block, &c, (size_t)m, sizeof(int32_t), &ok);
        c = w->cap_m;
        w->diag = grow(w->diag, &c, (size_t)m, sizeof(double), &ok);
        c = w->cap_m;
        w->run_ptr = grow(w->run_ptr, &c, (size_t)m + 1, sizeof(int32_t), &ok);
        c = w->cap_m;
        w->wt_p = grow(w->wt_p, &c, (size_t)m + 1, sizeof(int32_t), &ok);
        for (int k = 0; k < DVI_WORK_VECTORS; k++) {
            c = w->cap_m;
            w->vec[k] = grow(w->vec[k], &c, (size_t)m + 1, sizeof(double), &ok);
        }
        /* chunks: ⌈blocks / DVI_CHUNK_BLOCKS⌉ ≤ ⌈m / DVI_CHUNK_BLOCKS⌉, and
         * ⌈m / DVI_CHUNK_ROWS⌉ is smaller */
        c = w->cap_part;
        size_t parts = DVI_PART_SLOTS * ((size_t)m / DVI_CHUNK_BLOCKS + 2);
        w->part = grow(w->part, &c, parts, sizeof(double), &ok);
        if (ok) w->cap_part = c;
        if (!ok) return DVI_ERR_NOMEM;
        w->cap_m = (size_t)m;
    }
    if ((size_t)nblocks + 1 > w->cap_blocks || !w->block_row) {
        c = w->cap_blocks;
        w->block_row = grow(w->block_row, &c, (size_t)nblocks + 1, sizeof(int32_t), &ok);
        if (!ok) return DVI_ERR_NOMEM;
        w->cap_blocks = (size_t)nblocks + 1;
    }
    size_t ncur = ((size_t)m > (size_t)nbody ? (size_t)m : (size_t)nbody) + 1;
    if (ncur > w->cap_cursor || !w->cursor) {
        c = w->cap_cursor;
        w->cursor = grow(w->cursor, &c, ncur, sizeof(int32_t), &ok);
        if (!ok) return DVI_ERR_NOMEM;
        w->cap_cursor = ncur;
    }
    if ((size_t)nbody + 1 > w->cap_body || !w->body_ptr) {
        c = w->cap_body;
        w->body_ptr = grow(w->body_ptr, &c, (size_t)nbody + 1, sizeof(int32_t), &ok);
        c = w->cap_body;
        w->bodyvec = grow(w->bodyvec, &c, 6 * (size_t)nbody + 1, sizeof(double), &ok);
        if (!ok) return DVI_ERR_NOMEM;
        w->cap_body = (size_t)nbody + 1;
    }
    if (nruns > w->cap_runs || !w->run_body) {
        c = w->cap_runs;
        w->run_body = grow(w->run_body, &c, nruns, sizeof(int32_t), &ok);
        c = w->cap_runs;
        w->run_col = grow(w->run_col, &c, nruns, sizeof(int32_t), &ok);
        c = w->cap_runs;
        w->brun_col = grow(w->brun_col, &c, nruns, sizeof(int32_t), &ok);
        c = w->cap_runs;
        w->brun_d = grow(w->brun_d, &c, 6 * nruns, sizeof(double), &ok);
        c = w->cap_runs;
        w->run_d = grow(w->run_d, &c, 6 * nruns, sizeof(double), &ok);
        c = w->cap_runs;
        w->run_md = grow(w->run_md, &c, 6 * nruns, sizeof(double), &ok);
        if (!ok) return DVI_ERR_NOMEM;
        w->cap_runs = nruns > 0 ? nruns : 1;
    }
    if (nnz > w->cap_nnz || !w->wt_i) {
        c = w->cap_nnz;
        w->wt_i = grow(w->wt_i, &c, nnz, sizeof(int32_t), &ok);
        c = w->cap_nnz;
        w->wt_x = grow(w->wt_x, &c, nnz, sizeof(double), &ok);
        if (!ok) return DVI_ERR_NOMEM;
        w->cap_nnz = nnz > 0 ? nnz : 1;
    }
    return DVI_OK;
}

dvi_status dvi_work_prepare(dvi_ccp_work* w, const dvi_ccp_problem* p, int threads, char* msg, size_t msg_size)
{
    if (msg && msg_size) msg[0] = '\0';
    /* cheap structural checks first, so sizes below can be trusted */
    dvi_status st;
    if (!p || p->rows <= 0 || p->block_count <= 0 || !p->blocks)
        return dvi_ccp_check(p, NULL, NULL, msg, msg_size);
    st = reserve(w, p->rows, p->block_count, 0, 0, 0);
    if (st != DVI_OK) return st;
    st = dvi_ccp_check(p, w->vec[0], w->vec[1], msg, msg_size);
    if (st != DVI_OK) return st;

    w->p = p;
    w->m = p->rows;
    w->nblocks = p->block_count;
    w->threads = threads > 0 ? threads : 1;
    w->factor_form = p->D != NULL;
    w->nbody = w->factor_form ? p->body_count : 0;
    w->ndof = 6 * w->nbody;

    /* count runs (factor form) or nonzeros (Delassus form) */
    size_t nruns = 0, nnz = 0;
    if (w->factor_form) {
        const dvi_csc* D = p->D;
        for (int32_t j = 0; j < w->m; j++) {
            int32_t last = -1;
            for (int32_t k = D->colptr[j]; k < D->colptr[j + 1]; k++) {
                int32_t b = D->rowind[k] / 6;
                if (b != last) nruns++;
                last = b;
            }
        }
        if (nruns > (size_t)INT32_MAX) return DVI_ERR_INVALID_ARG;
    } else {
        nnz = (size_t)p->W->colptr[w->m];
    }
    st = reserve(w, w->m, w->nblocks, w->nbody, nruns, nnz);
    if (st != DVI_OK) {
        if (msg && msg_size) strncpy(msg, "out of memory preparing the problem", msg_size - 1);
        return st;
    }
    w->nruns = (int32_t)nruns;

    /* block layout */
    int32_t row = 0;
    for (int32_t b = 0; b < w->nblocks; b++) {
        w->block_row[b] = row;
        int32_t k = dvi_block_rows(p->blocks[b].kind);
        for (int32_t i = 0; i < k; i++) w->row_block[row + i] = b;
        row += k;
    }
    w->block_row[w->nblocks] = row;

    if (w->factor_form) {
        const dvi_csc* D = p->D;
        int32_t r = 0;
        memset(w->body_ptr, 0, ((size_t)w->nbody + 1) * sizeof(int32_t));
        for (int32_t j = 0; j < w->m; j++) {
            w->run_ptr[j] = r;
            int32_t last = -1;
            for (int32_t k = D->colptr[j]; k < D->colptr[j + 1]; k++) {
                int32_t b = D->rowind[k] / 6;
                if (b != last) {
                    w->run_body[r] = b;
                    w->run_col[r] = j;
                    memset(w->run_d + 6 * (size_t)r, 0, 6 * sizeof(double));
                    w->body_ptr[b + 1]++;
                    r++;
                    last = b;
                }
                w->run_d[6 * (size_t)(r - 1) + D->rowind[k] % 6] = D->values[k];
            }
        }
        w->run_ptr[w->m] = r;
        /* M^-1 D per run, and the diagonal of N */
        for (int32_t j = 0; j < w->m; j++) {
            double d = 0.0;
            for (int32_t q = w->run_ptr[j]; q < w->run_ptr[j + 1]; q++) {
                const double* A = p->inv_mass + 36 * (size_t)w->run_body[q];
                const double* x = w->run_d + 6 * (size_t)q;
                double* y = w->run_md + 6 * (size_t)q;
                for (int i = 0; i < 6; i++) {
                    double s = 0.0;
                    for (int c = 0; c < 6; c++) s += A[6 * i + c] * x[c];
                    y[i] = s;
                }
                for (int i = 0; i < 6; i++) d += x[i] * y[i];
            }
            w->diag[j] = d;
        }
        /* body-major index of the runs (counting sort; column order within a body) */
        for (int32_t b = 0; b < w->nbody; b++) w->body_ptr[b + 1] += w->body_ptr[b];
        int32_t* next = w->cursor;
        memcpy(next, w->body_ptr, (size_t)w->nbody * sizeof(int32_t));
        for (int32_t q = 0; q < w->nruns; q++) {
            int32_t at = next[w->run_body[q]]++;
            w->brun_col[at] = w->run_col[q];
            memcpy(w->brun_d + 6 * (size_t)at, w->run_d + 6 * (size_t)q, 6 * sizeof(double));
        }
    } else {
        const dvi_csc* W = p->W;
        memset(w->wt_p, 0, ((size_t)w->m + 1) * sizeof(int32_t));
        for (size_t k = 0; k < nnz; k++) w->wt_p[W->rowind[k] + 1]++;
        for (int32_t i = 0; i < w->m; i++) w->wt_p[i + 1] += w->wt_p[i];
        int32_t* next = w->cursor;
        memcpy(next, w->wt_p, (size_t)w->m * sizeof(int32_t));
        for (int32_t j = 0; j < w->m; j++)
            for (int32_t k = W->colptr[j]; k < W->colptr[j + 1]; k++) {
                int32_t at = next[W->rowind[k]]++;
                w->wt_i[at] = j;
                w->wt_x[at] = W->values[k];
            }
        for (int32_t i = 0; i < w->m; i++) {
            double d = 0.0;
            for (int32_t k = w->wt_p[i]; k < w->wt_p[i + 1]; k++)
                if (w->wt_i[k] == i) d += w->wt_x[k];
            w->diag[i] = d;
        }
    }
    if (p->compliance)
        for (int32_t i = 0; i < w->m; i++) w->diag[i] += p->compliance[i];
    return DVI_OK;
}

void dvi_work_minv_d(const dvi_ccp_work* w, const double* x, double* v)
{
    /* v_b = M⁻¹_b Σ_{runs q of b} d_q x_col(q): accumulating D x first and
     * applying the 6×6 block once per body reads 6 numbers per run instead
     * of the 6 of M⁻¹D (memory traffic is what bounds this loop). */
    const int32_t nb = w->nbody;
    const int32_t* bp = w->body_ptr;
    const int32_t* rc = w->brun_col;
    const double* dd = w->brun_d;
    const double* minv = w->p->inv_mass;
#ifdef _OPENMP
#pragma omp parallel for schedule(static) num_threads(w->threads) if (w->threads > 1 && w->m > DVI_PAR_MIN)
#endif
    for (int32_t b = 0; b < nb; b++) {
        double s[6] = {0, 0, 0, 0, 0, 0};
        for (int32_t k = bp[b]; k < bp[b + 1]; k++) {
            double a = x[rc[k]];
            const double* y = dd + 6 * (size_t)k;
            for (int c = 0; c < 6; c++) s[c] += y[c] * a;
        }
        const double* A = minv + 36 * (size_t)b;
        double* o = v + 6 * (size_t)b;
        for (int i = 0; i < 6; i++) {
            const double* Ai = A + 6 * i;
            o[i] = Ai[0] * s[0] + Ai[1] * s[1] + Ai[2] * s[2] + Ai[3] * s[3] + Ai[4] * s[4] + Ai[5] * s[5];
        }
    }
}

void dvi_work_dt(const dvi_ccp_work* w, const double* v, double* y)
{
    const int32_t m = w->m;
    const int32_t* rp = w->run_ptr;
    const int32_t* rb = w->run_body;
    const double* d = w->run_d;
#ifdef _OPENMP
#pragma omp parallel for schedule(static) num_threads(w->threads) if (w->threads > 1 && m > DVI_PAR_MIN)
#endif
    for (int32_t j = 0; j < m; j++) {
        double s = 0.0;
        for (int32_t q = rp[j]; q < rp[j + 1]; q++) {
            const double* a = d + 6 * (size_t)q;
            const double* b = v + 6 * (size_t)rb[q];
            s += a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3] + a[4] * b[4] + a[5] * b[5];
        }
        y[j] = s;
    }
}

void dvi_work_apply(const dvi_ccp_work* w, const double* x, double* y)
{
    const int32_t m = w->m;
    if (w->factor_form) {
        dvi_work_minv_d(w, x, w->bodyvec);
        dvi_work_dt(w, w->bodyvec, y);
    } else {
        const int32_t* wp = w->wt_p;
        const int32_t* wi = w->wt_i;
        const double* wx = w->wt_x;
#ifdef _OPENMP
#pragma omp parallel for schedule(static) num_threads(w->threads) if (w->threads > 1 && m > DVI_PAR_MIN)
#endif
        for (int32_t i = 0; i < m; i++) {
            double s = 0.0;
            for (int32_t k = wp[i]; k < wp[i + 1]; k++) s += wx[k] * x[wi[k]];
            y[i] = s;
        }
    }
    const double* c = w->p->compliance;
    if (c) {
        const int nt = dvi_work_nt(w, m);
#ifdef _OPENMP
#pragma omp parallel for schedule(static) num_threads(nt) if (nt > 1)
#endif
        for (int32_t i = 0; i < m; i++) y[i] += c[i] * x[i];
    }
}

void dvi_work_project(const dvi_ccp_work* w, double* x)
{
    const dvi_ccp_block* B = w->p->blocks;
    const int32_t* br = w->block_row;
    for (int32_t b = 0; b < w->nblocks; b++)
        if (B[b].kind != DVI_BLOCK_BILATERAL) dvi_cone_project(&B[b], x + br[b]);
}

double dvi_norm2(const double* x, int32_t n)
{
    double s = 0.0;
    for (int32_t i = 0; i < n; i++) s += x[i] * x[i];
    return sqrt(s);
}

double dvi_dot(const double* x, const double* y, int32_t n)
{
    double s = 0.0;
    for (int32_t i = 0; i < n; i++) s += x[i] * y[i];
    return s;
}

double dvi_residual_scale(double rnorm, double gnorm, double unorm)
{
    double s = rnorm > gnorm ? rnorm : gnorm;
    s = s > unorm ? s : unorm;
    return s > 1e-300 ? s : 1.0;
}

/* The residual's three sums — e² (natural map), ‖γ‖², ‖u‖² — chunked by
 * blocks; u = v + add (add = NULL: u = v). Returns e²; g2, u2 out. */
static double residual_sums(const dvi_ccp_work* w, const double* g, const double* v, const double* add, double* g2,
                            double* u2)
{
    const dvi_ccp_block* B = w->p->blocks;
    const int32_t* br = w->block_row;
    const int32_t nb = w->nblocks, nc = dvi_block_chunks(w);
    double* part = w->part;
    const int nt = dvi_work_nt(w, w->m);
#ifdef _OPENMP
#pragma omp parallel for schedule(static) num_threads(nt) if (nt > 1)
#endif
    for (int32_t c = 0; c < nc; c++) {
        int32_t b1 = dvi_chunk_end(c, DVI_CHUNK_BLOCKS, nb);
        double e2 = 0.0, gg = 0.0, uu = 0.0;
        for (int32_t b = c * DVI_CHUNK_BLOCKS; b < b1; b++) {
            int32_t r0 = br[b], k = br[b + 1] - r0;
            double u[6];
            for (int32_t a = 0; a < k; a++) {
                u[a] = add ? v[r0 + a] + add[r0 + a] : v[r0 + a];
                gg += g[r0 + a] * g[r0 + a];
                uu += u[a] * u[a];
            }
            e2 += dvi_natural_map2(&B[b], g + r0, u, k);
        }
        double* q = part + DVI_PART_SLOTS * (size_t)c;
        q[0] = e2;
        q[1] = gg;
        q[2] = uu;
    }
    *g2 = dvi_part_sum(part, nc, 1);
    *u2 = dvi_part_sum(part, nc, 2);
    return dvi_part_sum(part, nc, 0);
}

double dvi_work_residual(const dvi_ccp_work* w, const double* g, const double* u)
{
    double g2, u2;
    double e2 = residual_sums(w, g, u, NULL, &g2, &u2);
    return sqrt(e2) / dvi_residual_scale(dvi_norm2(w->p->r, w->m), sqrt(g2), sqrt(u2));
}

double dvi_work_residual_n(const dvi_ccp_work* w, const double* g, const double* Ng, double rnorm)
{
    double g2, u2;
    double e2 = residual_sums(w, g, Ng, w->p->r, &g2, &u2);
    return sqrt(e2) / dvi_residual_scale(rnorm, sqrt(g2), sqrt(u2));
}

double dvi_work_dot(const dvi_ccp_work* w, const double* x, const double* y)
{
    const int32_t m = w->m, nc = dvi_row_chunks(m);
    double* part = w->part;
    const int nt = dvi_work_nt(w, m);
#ifdef _OPENMP
#pragma omp parallel for schedule(static) num_threads(nt) if (nt > 1)
#endif
    for (int32_t c = 0; c < nc; c++) {
        int32_t i1 = dvi_chunk_end(c, DVI_CHUNK_ROWS, m);
        double s = 0.0;
        for (int32_t i = c * DVI_CHUNK_ROWS; i < i1; i++) s += x[i] * y[i];
        part[DVI_PART_SLOTS * (size_t)c] = s;
    }
    return dvi_part_sum(part, nc, 0);
}

void dvi_work_metrics(const dvi_ccp_work* w, const double* g, const double* u, dvi_ccp_metrics* out)
{
    const dvi_ccp_block* B = w->p->blocks;
    /* the CCP natural map: the same sums, and bits, as dvi_work_residual */
    double g2, u2;
    double e2 = residual_sums(w, g, u, NULL, &g2, &u2);
    double s = dvi_residual_scale(dvi_norm2(w->p->r, w->m), sqrt(g2), sqrt(u2));
    double c2 = 0.0, cone = 0.0, dual = 0.0, comp = 0.0;
    for (int32_t b = 0; b < w->nblocks; b++) {
        int32_t r0 = w->block_row[b], k = w->block_row[b + 1] - r0;
        const double* ga = g + r0;
        const double* ua = u + r0;
        double y[6], ut[6];
        for (int i = 0; i < k; i++) ut[i] = ua[i]; /* Coulomb: De Saxcé velocity */
        if (B[b].kind == DVI_BLOCK_FRICTION || B[b].kind == DVI_BLOCK_FRICTION_ROLLING)
            ut[0] += B[b].mu * sqrt(ua[1] * ua[1] + ua[2] * ua[2]);
        if (B[b].kind == DVI_BLOCK_FRICTION_ROLLING)
            ut[0] += B[b].mu_spin * fabs(ua[3]) + B[b].mu_roll * sqrt(ua[4] * ua[4] + ua[5] * ua[5]);
        c2 += dvi_natural_map2(&B[b], ga, ut, k);
        /* primal feasibility: ‖γ − Π_K γ‖ */
        for (int i = 0; i < k; i++) y[i] = ga[i];
        dvi_cone_project(&B[b], y);
        double d = 0.0;
        for (int i = 0; i < k; i++) d += (ga[i] - y[i]) * (ga[i] - y[i]);
        if (sqrt(d) > cone) cone = sqrt(d);
        /* dual feasibility: ‖u − Π_K* u‖ = ‖Π_K(−u)‖ */
        for (int i = 0; i < k; i++) y[i] = -ua[i];
        dvi_cone_project(&B[b], y);
        d = 0.0;
        for (int i = 0; i < k; i++) d += y[i] * y[i];
        if (sqrt(d) > dual) dual = sqrt(d);
        double gu = 0.0;
        for (int i = 0; i < k; i++) gu += ga[i] * ua[i];
        if (fabs(gu) > comp) comp = fabs(gu);
    }
    out->residual = sqrt(e2) / s;
    out->residual_coulomb = sqrt(c2) / s;
    out->cone_violation = cone;
    out->dual_violation = dual;
    out->complementarity = comp;
    /* ½ γᵀNγ + rᵀγ = ½ γᵀ(u − r) + rᵀγ = ½ γᵀu + ½ rᵀγ */
    out->objective = 0.5 * dvi_dot(g, u, w->m) + 0.5 * dvi_dot(g, w->p->r, w->m);
}

/* Step sizes η_a = rows / trace(N_aa); 0 for uncoupled blocks. */
/* Entry (i, k) of N for two rows of the same block (compliance excluded): see ccp_work.h. */
double dvi_work_block_entry(const dvi_ccp_work* w, int32_t i, int32_t k)
{
    double s = 0.0;
    if (w->factor_form) {
        for (int32_t q = w->run_ptr[i]; q < w->run_ptr[i + 1]; q++)
            for (int32_t p = w->run_ptr[k]; p < w->run_ptr[k + 1]; p++)
                if (w->run_body[p] == w->run_body[q]) {
                    const double* d = w->run_d + 6 * (size_t)q;
                    const double* md = w->run_md + 6 * (size_t)p;
                    s += d[0] * md[0] + d[1] * md[1] + d[2] * md[2] + d[3] * md[3] + d[4] * md[4] + d[5] * md[5];
                }
    } else {
        for (int32_t e = w->wt_p[i]; e < w->wt_p[i + 1]; e++)
            if (w->wt_i[e] == k) s += w->wt_x[e];
    }
    return s;
}

void dvi_block_steps(const dvi_ccp_work* w, double* eta)
{
    for (int32_t b = 0; b < w->nblocks; b++) {
        int32_t r0 = w->block_row[b], k = w->block_row[b + 1] - r0;
        double bound = 0.0; /* Gershgorin bound on λmax(N_aa) */
        for (int32_t a = 0; a < k; a++) {
            double row = w->diag[r0 + a];
            for (int32_t c = 0; c < k; c++)
                if (c != a) row += fabs(dvi_work_block_entry(w, r0 + a, r0 + c));
            if (row > bound) bound = row;
        }
        eta[b] = bound > 0.0 ? 1.0 / bound : 0.0;
    }
}

double dvi_impulse_scale(const dvi_ccp_work* w, const double* eta)
{
    double scale = 0.0;
    for (int32_t b = 0; b < w->nblocks; b++) {
        double rn = 0.0;
        for (int32_t i = w->block_row[b]; i < w->block_row[b + 1]; i++) rn += w->p->r[i] * w->p->r[i];
        rn = eta[b] * sqrt(rn);
        if (rn > scale) scale = rn;
    }
    return scale;
}
