/* dvicontact — the prepared CCP operator (see the design note in ccp_work.h). */
#include "ccp_work.h"
#include "exact_sum.h"
#include "math3.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

static bool rigid_blocks(ccp_work* w);
static dvi_status prepare_shared(ccp_work* w, const dvi_ccp_problem* p, char* msg, size_t msg_size);
static void prepare_frames(ccp_work* w, const dvi_ccp_problem* p);

/* p, holding cap elements, grown to need (at least 1) of elem bytes; p
 * unchanged and *ok false when out of memory. The caller records the new
 * capacity of the array's size class. */
static void* grow(const dvi_allocator* a, void* p, size_t cap, size_t need, size_t elem, bool* ok)
{
    if (need <= cap && p) return p;
    size_t n = need > 0 ? need : 1;
    void* q = base_mem_realloc(a, p, n * elem);
    if (!q) {
        *ok = false;
        return p;
    }
    return q;
}

void ccp_work_free(ccp_work* w)
{
    if (!w) return;
    const dvi_allocator keep = w->alloc, *a = &keep;
    base_mem_free(a, w->block_row);
    base_mem_free(a, w->run_body);
    base_mem_free(a, w->run_col);
    base_mem_free(a, w->run_d);
    base_mem_free(a, w->run_md);
    base_mem_free(a, w->body_ptr);
    base_mem_free(a, w->brun_col);
    base_mem_free(a, w->brun_d);
    base_mem_free(a, w->fc_rows);
    base_mem_free(a, w->inc_ptr);
    base_mem_free(a, w->drows);
    base_mem_free(a, w->minv10);
    base_mem_free(a, w->wt_p);
    base_mem_free(a, w->wt_i);
    base_mem_free(a, w->wt_x);
    base_mem_free(a, w->bodyvec);
    base_mem_free(a, w->lr_v);
    base_mem_free(a, w->cursor);
    for (int k = 0; k < DVI_WORK_PLACED; k++) base_mem_free(a, w->own[k]);
    base_mem_free(a, w->scratch_raw);
    base_mem_free(a, w->part);
    base_mem_free(a, w->pyramid_turn);
    base_mem_free(a, w->row_own);
    memset(w, 0, sizeof *w);
    w->alloc = keep;
}

void* ccp_work_scratch(ccp_work* w, size_t bytes)
{
    if (bytes <= w->scratch_cap && w->scratch) return w->scratch;
    base_mem_free(&w->alloc, w->scratch_raw);
    w->scratch = w->scratch_raw = NULL;
    w->scratch_cap = 0;
    size_t n = (bytes + 63) / 64 * 64;
    if (n == 0) n = 64;
    /* 64 bytes more, to start at a 64-byte boundary whatever the allocator */
    w->scratch_raw = base_mem_alloc(&w->alloc, n + 64);
    if (!w->scratch_raw) return NULL;
    w->scratch = (void*)(((uintptr_t)w->scratch_raw + 63) / 64 * 64);
    w->scratch_cap = n;
    return w->scratch;
}

/* Places array k of the work (vec[k] below DVI_WORK_VECTORS, else a
 * ccp_work_placed) for `bytes`: in the first lent block with room (at a
 * page boundary: vectors that start at one offset within a page stream as
 * fast as separately allocated ones, where packed vectors were measured 5 %
 * slower), else in the work's own memory; placed in lent memory, its own
 * is freed. The contents are not kept: every solve writes these arrays
 * before it reads them. */
static void** placed_slot(ccp_work* w, int k)
{
    switch (k) {
    case DVI_PLACE_DIAG: return (void**)&w->diag;
    case DVI_PLACE_FC_FORCE: return (void**)&w->fc_force;
    case DVI_PLACE_INC_ARM: return w->fc_armf ? (void**)&w->inc_arm_f : (void**)&w->inc_arm;
    case DVI_PLACE_RUN_PTR: return (void**)&w->run_ptr;
    case DVI_PLACE_BLOCK_MU: return (void**)&w->block_mu;
    case DVI_PLACE_INC: return (void**)&w->inc;
    case DVI_PLACE_FC_ROW: return (void**)&w->fc_row;
    case DVI_PLACE_BLOCK_FC: return (void**)&w->block_fc;
    default: return (void**)&w->vec[k];
    }
}

static bool place(ccp_work* w, int k, size_t bytes)
{
    void** slot = placed_slot(w, k);
    const size_t need = (bytes + 4095) / 4096 * 4096;
    for (int32_t b = 0; b < w->lent_count; b++) {
        const uintptr_t base = (uintptr_t)w->lent[b].data, end = base + w->lent[b].bytes;
        const uintptr_t at = (base + w->lent_at[b] + 4095) / 4096 * 4096;
        if (at <= end && end - at >= need) {
            w->lent_at[b] = at + need - base;
            base_mem_free(&w->alloc, w->own[k]);
            w->own[k] = NULL;
            w->own_bytes[k] = 0;
            *slot = (void*)at;
            return true;
        }
    }
    if (bytes > w->own_bytes[k] || !w->own[k]) {
        base_mem_free(&w->alloc, w->own[k]);
        w->own[k] = base_mem_alloc(&w->alloc, bytes > 0 ? bytes : 1);
        w->own_bytes[k] = w->own[k] ? bytes : 0;
    }
    *slot = w->own[k];
    return w->own[k] != NULL;
}

/* The vectors a solve of any iterative solver touches and the diagonal of
 * N, first (ccp_check takes vec[0] and vec[1]): APGD's seven and the
 * driver's guess product, which APGD's block scaling reuses. */
static bool place_vectors(ccp_work* w, size_t m)
{
    static const int first[] = {0, 1, 2, 3, 4, 5, 6, DVI_WORK_VECTORS - 1, DVI_PLACE_DIAG};
    for (int32_t b = 0; b < w->lent_count; b++) w->lent_at[b] = 0;
    bool ok = true;
    for (size_t i = 0; i < sizeof first / sizeof first[0]; i++) ok = place(w, first[i], (m + 1) * sizeof(double)) && ok;
    return ok;
}

/* Then the rest, largest first (nfc contacts by frames, nblocks blocks),
 * the vectors few solves touch last. */
static bool place_rest(ccp_work* w, size_t m, size_t nblocks, size_t nfc)
{
    if (nfc == 0) nfc = 1;
    bool ok = place(w, DVI_PLACE_FC_FORCE, 3 * nfc * sizeof(double));
    ok = place(w, DVI_PLACE_INC_ARM, 6 * nfc * (w->fc_armf ? sizeof(float) : sizeof(double))) && ok;
    ok = place(w, DVI_PLACE_RUN_PTR, (m + 1) * sizeof(int32_t)) && ok;
    ok = place(w, DVI_PLACE_BLOCK_MU, (nblocks + 1) * sizeof(double)) && ok;
    ok = place(w, DVI_PLACE_INC, 2 * nfc * sizeof(int32_t)) && ok;
    ok = place(w, DVI_PLACE_FC_ROW, nfc * sizeof(int32_t)) && ok;
    ok = place(w, DVI_PLACE_BLOCK_FC, (nblocks + 1) * sizeof(int32_t)) && ok;
    for (int k = 7; k < DVI_WORK_VECTORS - 1; k++) ok = place(w, k, (m + 1) * sizeof(double)) && ok;
    return ok;
}

/* An array that is a size class of its own grown to n (capacity *cap). */
static bool reserve_one(const dvi_allocator* a, void** p, size_t* cap, size_t n, size_t elem)
{
    if (n <= *cap && *p) return true;
    bool ok = true;
    *p = grow(a, *p, *cap, n, elem, &ok);
    if (ok) *cap = n;
    return ok;
}

/* Grows every buffer to the sizes of the problem at hand. Capacities are
 * tracked per size class; arrays of one class are (re)allocated together. */
static dvi_status reserve(ccp_work* w, int32_t m, int32_t nblocks, int32_t nbody, size_t nruns, size_t nnz,
                          size_t nfc)
{
    bool ok = true;
    if ((size_t)m > w->cap_m || !w->drows) {
        w->wt_p = grow(&w->alloc, w->wt_p, w->cap_m, (size_t)m + 1, sizeof(int32_t), &ok);
        w->drows = grow(&w->alloc, w->drows, w->cap_m, (size_t)m + 1, sizeof(int32_t), &ok);
        if (!ok) return DVI_ERR_NOMEM;
        w->cap_m = (size_t)m;
    }
    /* chunks: ⌈blocks / DVI_CHUNK_BLOCKS⌉ ≤ ⌈m / DVI_CHUNK_BLOCKS⌉, ⌈m / DVI_CHUNK_ROWS⌉
     * is smaller, and bodies go by DVI_CHUNK_ROWS (ccp_work_minv_d_quad) */
    size_t chunks = (size_t)m / (size_t)w->chunk_blocks, bchunks = (size_t)nbody / (size_t)w->chunk_bodies;
    const size_t nch = (chunks > bchunks ? chunks : bchunks) + 2, parts = DVI_PART_SLOTS * nch;
    if (!reserve_one(&w->alloc, (void**)&w->part, &w->cap_part, parts, sizeof(double))) return DVI_ERR_NOMEM;
    w->part_cs = w->exact ? 1 : DVI_PART_SLOTS;
    w->part_ss = w->exact ? w->cap_part / DVI_PART_SLOTS : 1;
    if (!reserve_one(&w->alloc, (void**)&w->block_row, &w->cap_blocks, (size_t)nblocks + 1, sizeof(int32_t)))
        return DVI_ERR_NOMEM;
    size_t ncur = ((size_t)m > (size_t)nbody ? (size_t)m : (size_t)nbody) + 1;
    if (!reserve_one(&w->alloc, (void**)&w->cursor, &w->cap_cursor, ncur, sizeof(int32_t))) return DVI_ERR_NOMEM;
    if ((size_t)nbody + 1 > w->cap_body || !w->body_ptr) {
        w->body_ptr = grow(&w->alloc, w->body_ptr, w->cap_body, (size_t)nbody + 1, sizeof(int32_t), &ok);
        w->bodyvec = grow(&w->alloc, w->bodyvec, w->cap_body, 6 * (size_t)nbody + 1, sizeof(double), &ok);
        w->inc_ptr = grow(&w->alloc, w->inc_ptr, w->cap_body, (size_t)nbody + 1, sizeof(int32_t), &ok);
        w->minv10 = grow(&w->alloc, w->minv10, w->cap_body, 10 * (size_t)nbody + 1, sizeof(double), &ok);
        if (!ok) return DVI_ERR_NOMEM;
        w->cap_body = (size_t)nbody + 1;
    }
    /* a class's capacity counts units (runs, contacts) of which its arrays hold
     * 1 or 6 elements each: at least one unit, so that a later problem with
     * one unit never finds an array sized for an empty one */
    if (nruns == 0) nruns = 1;
    if (nfc == 0) nfc = 1;
    if (nruns > w->cap_runs || !w->run_body) {
        w->run_body = grow(&w->alloc, w->run_body, w->cap_runs, nruns, sizeof(int32_t), &ok);
        w->run_col = grow(&w->alloc, w->run_col, w->cap_runs, nruns, sizeof(int32_t), &ok);
        w->brun_col = grow(&w->alloc, w->brun_col, w->cap_runs, nruns, sizeof(int32_t), &ok);
        w->brun_d = grow(&w->alloc, w->brun_d, w->cap_runs, 6 * nruns, sizeof(double), &ok);
        w->run_d = grow(&w->alloc, w->run_d, w->cap_runs, 6 * nruns, sizeof(double), &ok);
        w->run_md = grow(&w->alloc, w->run_md, w->cap_runs, 6 * nruns, sizeof(double), &ok);
        if (!ok) return DVI_ERR_NOMEM;
        w->cap_runs = nruns;
    }
    if (!reserve_one(&w->alloc, (void**)&w->fc_rows, &w->cap_fc, nfc, sizeof(int8_t))) return DVI_ERR_NOMEM;
    if (nnz > w->cap_nnz || !w->wt_i) {
        w->wt_i = grow(&w->alloc, w->wt_i, w->cap_nnz, nnz, sizeof(int32_t), &ok);
        w->wt_x = grow(&w->alloc, w->wt_x, w->cap_nnz, nnz, sizeof(double), &ok);
        if (!ok) return DVI_ERR_NOMEM;
        w->cap_nnz = nnz > 0 ? nnz : 1;
    }
    return DVI_OK;
}

bool ccp_work_reserve_turns(ccp_work* w)
{
    return reserve_one(&w->alloc, (void**)&w->pyramid_turn, &w->cap_turn, 2 * (size_t)w->nblocks, sizeof(double));
}

dvi_status ccp_work_prepare(ccp_work* w, const dvi_ccp_problem* p, int threads, char* msg, size_t msg_size)
{
    if (msg && msg_size) msg[0] = '\0';
    w->pyramid_edges = 0;
    w->sh = p ? p->shared : NULL;
    w->exact = w->exact_req || w->sh;
    w->chunk_blocks = w->exact ? 1 : DVI_CHUNK_BLOCKS;
    w->chunk_rows = w->exact ? 1 : DVI_CHUNK_ROWS;
    w->chunk_bodies = w->exact ? 1 : DVI_CHUNK_ROWS;
    /* cheap structural checks first, so sizes below can be trusted */
    dvi_status st;
    if (!p || p->rows <= 0 || p->block_count <= 0 || !p->blocks)
        return ccp_check(p, NULL, NULL, NULL, 1, msg, msg_size);
    st = reserve(w, p->rows, p->block_count, 0, 0, 0, 0);
    if (st != DVI_OK) return st;
    if (!place_vectors(w, (size_t)p->rows)) return DVI_ERR_NOMEM;
    st = ccp_check(p, w->vec[0], w->vec[1], w->block_row, threads > 0 ? threads : 1, msg, msg_size);
    if (st != DVI_OK) return st;

    w->p = p;
    w->u_final = NULL;
    w->guess_Ng = NULL;
    w->m = p->rows;
    w->nblocks = p->block_count;
    w->threads = threads > 0 ? threads : 1;
    w->block_tol = 0.0;
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
    const size_t nfc = w->factor_form && p->frames ? (size_t)p->frames->count : 0;
    st = reserve(w, w->m, w->nblocks, w->nbody, nruns, nnz, nfc);
    w->fc_armf = nfc > 0 ? p->frames->arm_f : NULL; /* (prepare_frames sets it again) */
    if (st == DVI_OK && !place_rest(w, (size_t)w->m, (size_t)w->nblocks, nfc)) st = DVI_ERR_NOMEM;
    if (st != DVI_OK) {
        if (msg && msg_size) strncpy(msg, "out of memory preparing the problem", msg_size - 1);
        return st;
    }
    w->nruns = (int32_t)nruns;

    /* block layout: block_row holds each block's first row since the
     * validation (ccp_check fills it; growing keeps its contents) */
    w->other_blocks = 0;
    for (int32_t b = 0; b < w->nblocks; b++) {
        const bool friction = p->blocks[b].kind == DVI_BLOCK_FRICTION;
        w->block_mu[b] = friction ? p->blocks[b].mu : -1.0;
        w->other_blocks += !friction;
    }
    for (int32_t b = 0; b < w->nblocks; b++) w->block_fc[b] = -1;
    w->nfc = 0;
    w->rigid_minv = false;

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
                double tmp[36];
                const double* A = ccp_minv_block(p, w->run_body[q], tmp);
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
        w->rigid_minv = rigid_blocks(w);
        prepare_frames(w, p);
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
    st = prepare_shared(w, p, msg, msg_size);
    if (st != DVI_OK) return st;
    w->rnorm = ccp_work_norm2(w, p->r);
    /* the low-rank term: N_ii −= ‖G_i‖² */
    w->lr = w->factor_form ? p->G : NULL;
    if (w->lr) {
        const dvi_csc* G = w->lr;
        if ((size_t)G->rows > w->cap_lr || !w->lr_v) {
            bool ok = true;
            w->lr_v = grow(&w->alloc, w->lr_v, w->cap_lr, (size_t)G->rows + 1, sizeof(double), &ok);
            if (!ok) return DVI_ERR_NOMEM;
            w->cap_lr = (size_t)G->rows;
        }
        memset(w->lr_v, 0, (size_t)G->rows * sizeof(double));
        for (int32_t i = 0; i < w->m; i++) {
            double s = 0.0;
            for (int32_t q = G->colptr[i]; q < G->colptr[i + 1]; q++) s += G->values[q] * G->values[q];
            w->diag[i] -= s;
        }
    }
    return DVI_OK;
}

/* A shared problem's checks, owner mask of the rows and whole-problem
 * counts (dvi_ccp_shared); without one, the counts are this problem's. */
static dvi_status prepare_shared(ccp_work* w, const dvi_ccp_problem* p, char* msg, size_t msg_size)
{
    w->m_all = w->m;
    w->nblocks_all = w->nblocks;
    const dvi_ccp_shared* sh = w->sh;
    if (!sh) return DVI_OK;
    const char* bad = !w->factor_form || !p->frames ? "needs the factor form with frames (dvi_ccp_frames)"
                      : p->G                        ? "does not take a low-rank term G"
                      : p->D->colptr[w->m] > 0      ? "does not take rows given by columns of D (joints)"
                                                    : NULL;
    if (bad) {
        if (msg && msg_size) snprintf(msg, msg_size, "shared: a problem split over processes %s", bad);
        return DVI_ERR_UNSUPPORTED;
    }
    if (sh->block_own) {
        if (!reserve_one(&w->alloc, (void**)&w->row_own, &w->cap_row_own, (size_t)w->m + 1, 1)) return DVI_ERR_NOMEM;
        for (int32_t b = 0; b < w->nblocks; b++)
            memset(w->row_own + w->block_row[b], sh->block_own[b] ? 1 : 0,
                   (size_t)(w->block_row[b + 1] - w->block_row[b]));
    }
    if (sh->sum) {
        int64_t n[2] = {0, 0};
        for (int32_t b = 0; b < w->nblocks; b++)
            if (!sh->block_own || sh->block_own[b]) {
                n[0] += w->block_row[b + 1] - w->block_row[b];
                n[1]++;
            }
        sh->sum(sh->ctx, n, 2);
        w->m_all = n[0];
        w->nblocks_all = n[1];
    }
    return DVI_OK;
}

/* The owner mask of the rows of a shared problem, or NULL: every row counts. */
static const uint8_t* row_mask(const ccp_work* w)
{
    return w->sh && w->sh->block_own ? w->row_own : NULL;
}

/* The exact sum's value, after summing its digits over the processes. */
static double xsum_all(const ccp_work* w, ccp_xsum* s)
{
    if (w->sh && w->sh->sum) {
        ccp_xsum_carry(s);
        w->sh->sum(w->sh->ctx, s->d, CCP_XSUM_WORDS);
    }
    return ccp_xsum_value(s);
}

double ccp_work_part_sum_exact(const ccp_work* w, int32_t chunks, int slot, int by)
{
    const dvi_ccp_shared* sh = w->sh;
    const uint8_t* own = !sh                 ? NULL
                         : by == CCP_BY_BLOCK ? sh->block_own
                         : by == CCP_BY_ROW   ? row_mask(w)
                                              : sh->body_own;
    const double* part = &CCP_PART(w, 0, slot); /* contiguous: part_cs = 1 */
    ccp_xsum s;
    ccp_xsum_init(&s);
    const int nt = ccp_work_nt(w, chunks);
    (void)nt; /* used by the OpenMP pragmas only */
#ifdef _OPENMP
#pragma omp parallel num_threads(nt) if (nt > 1)
#endif
    { /* each thread its own exact sum of a share, then the sums added: exact, so any order */
        ccp_xsum t;
        ccp_xsum_init(&t);
#ifdef _OPENMP
#pragma omp for schedule(static)
#endif
        for (int32_t c = 0; c < chunks; c++)
            if (!own || own[c]) ccp_xsum_add(&t, part[c]);
#ifdef _OPENMP
#pragma omp critical(ccp_xsum_merge)
#endif
        ccp_xsum_merge(&s, &t);
    }
    return xsum_all(w, &s);
}

double ccp_work_max_all(const ccp_work* w, double x)
{
    if (w->sh && w->sh->max) w->sh->max(w->sh->ctx, &x, 1);
    return x;
}

double ccp_work_norm2(const ccp_work* w, const double* x)
{
    if (!w->exact) return ccp_norm2(x, w->m);
    const uint8_t* own = row_mask(w);
    ccp_xsum s;
    ccp_xsum_init(&s);
    for (int32_t i = 0; i < w->m; i++)
        if (!own || own[i]) ccp_xsum_add(&s, x[i] * x[i]);
    return sqrt(xsum_all(w, &s));
}

double ccp_work_positive_sum(const ccp_work* w, const double* x, int64_t* count)
{
    int64_t n = 0;
    double sum = 0.0;
    const uint8_t* own = row_mask(w);
    ccp_xsum s;
    ccp_xsum_init(&s);
    for (int32_t i = 0; i < w->m; i++)
        if ((!own || own[i]) && x[i] > 0.0 && isfinite(x[i])) {
            if (w->exact)
                ccp_xsum_add(&s, x[i]);
            else
                sum += x[i];
            n++;
        }
    if (w->sh && w->sh->sum) w->sh->sum(w->sh->ctx, &n, 1);
    *count = n;
    return w->exact ? xsum_all(w, &s) : sum;
}

/* v_b = M⁻¹_b s (6), from the rigid layout or the 6×6 block; both give the
 * same bits (the rigid layout only leaves out terms that are exact zeros). */
static inline void minv_apply(const ccp_work* w, int32_t b, const double* s, double* o)
{
    if (w->rigid_minv) {
        minv10_apply(w->rigid10 + 10 * (size_t)b, s, o);
        return;
    }
    const double* A = w->p->inv_mass + 36 * (size_t)b;
    for (int i = 0; i < 6; i++) {
        const double* Ai = A + 6 * i;
        o[i] = Ai[0] * s[0] + Ai[1] * s[1] + Ai[2] * s[2] + Ai[3] * s[3] + Ai[4] * s[4] + Ai[5] * s[5];
    }
}

/* Contacts given by frames come in double (frames->frame, arm) or single
 * precision (frame_f, arm_f). The passes below are written once, as macros
 * on a pointer d to the contact's n, t1, t2 and r to its lever arms ρ_a, ρ_b
 * of either type (the arithmetic is in double either way), and branch on
 * the precision outside the arithmetic. */

/* F = Σ_q xc_q d_q over the contact's linear rows (nr: its rows). */
#define FRAME_FORCE(d, nr, xc, F)                                                  \
    do {                                                                           \
        if ((nr) == 1) {                                                           \
            (F)[0] = (xc)[0] * (d)[0];                                             \
            (F)[1] = (xc)[0] * (d)[1];                                             \
            (F)[2] = (xc)[0] * (d)[2];                                             \
        } else {                                                                   \
            (F)[0] = (xc)[0] * (d)[0] + (xc)[1] * (d)[3] + (xc)[2] * (d)[6];       \
            (F)[1] = (xc)[0] * (d)[1] + (xc)[1] * (d)[4] + (xc)[2] * (d)[7];       \
            (F)[2] = (xc)[0] * (d)[2] + (xc)[1] * (d)[5] + (xc)[2] * (d)[8];       \
        }                                                                          \
    } while (0)

/* T = r × F. */
#define FRAME_MOMENT(r, F, T)                                  \
    do {                                                       \
        (T)[0] = (r)[1] * (F)[2] - (r)[2] * (F)[1];            \
        (T)[1] = (r)[2] * (F)[0] - (r)[0] * (F)[2];            \
        (T)[2] = (r)[0] * (F)[1] - (r)[1] * (F)[0];            \
    } while (0)

/* T += ℓ Σ_q xc_{3+q} d_q: the moment of a rolling block's spin and rolling rows. */
#define FRAME_COUPLE(d, ell, xc, T)                                                        \
    do {                                                                                   \
        for (int k_ = 0; k_ < 3; k_++)                                                     \
            (T)[k_] += (ell) * ((xc)[3] * (d)[k_] + (xc)[4] * (d)[3 + k_] + (xc)[5] * (d)[6 + k_]); \
    } while (0)

/* yc = J_c v from the bodies' velocities va, vb (6 each). */
#define FRAME_GATHER(d, r, nr, ell, va, vb, yc)                                                       \
    do {                                                                                              \
        double rel_[3];                                                                               \
        for (int k_ = 0; k_ < 3; k_++) {                                                              \
            const int k1_ = k_ == 2 ? 0 : k_ + 1, k2_ = k_ == 0 ? 2 : k_ - 1;                         \
            double pb_ = (vb)[k_] + ((vb)[3 + k1_] * (r)[3 + k2_] - (vb)[3 + k2_] * (r)[3 + k1_]);    \
            double pa_ = (va)[k_] + ((va)[3 + k1_] * (r)[k2_] - (va)[3 + k2_] * (r)[k1_]);            \
            rel_[k_] = pb_ - pa_;                                                                     \
        }                                                                                             \
        const int nl_ = (nr) < 3 ? (nr) : 3;                                                          \
        for (int q_ = 0; q_ < nl_; q_++)                                                              \
            (yc)[q_] = (d)[3 * q_] * rel_[0] + (d)[3 * q_ + 1] * rel_[1] + (d)[3 * q_ + 2] * rel_[2];  \
        if ((nr) == 6) {                                                                              \
            double wr_[3] = {(vb)[3] - (va)[3], (vb)[4] - (va)[4], (vb)[5] - (va)[5]};                \
            for (int q_ = 0; q_ < 3; q_++)                                                            \
                (yc)[3 + q_] = (ell) * ((d)[3 * q_] * wr_[0] + (d)[3 * q_ + 1] * wr_[1] + (d)[3 * q_ + 2] * wr_[2]); \
        }                                                                                             \
    } while (0)

/* Contact c's frame and arms as doubles (setup and the rarer paths). */
static void fc_frame_arms(const ccp_work* w, int32_t c, double d[9], double r[6])
{
    for (int k = 0; k < 9; k++) d[k] = w->fc_df ? (double)w->fc_df[9 * (size_t)c + k] : w->fc_d[9 * (size_t)c + k];
    for (int k = 0; k < 6; k++) r[k] = w->fc_armf ? (double)w->fc_armf[6 * (size_t)c + k] : w->fc_arm[6 * (size_t)c + k];
}

/* yc = J_c v for contact c: its rows' relative velocities. */
static inline __attribute__((always_inline)) void frame_gather(const ccp_work* w, int32_t c, const double* v, double* yc)
{
    static const double zero[6] = {0, 0, 0, 0, 0, 0};
    const int32_t a = w->fc_body[2 * (size_t)c], b = w->fc_body[2 * (size_t)c + 1];
    const double* va = a >= 0 ? v + 6 * (size_t)a : zero;
    const double* vb = b >= 0 ? v + 6 * (size_t)b : zero;
    const int nr = w->fc_rows[c];
    if (w->fc_df) {
        const float* d = w->fc_df + 9 * (size_t)c;
        const float* r = w->fc_armf + 6 * (size_t)c;
        FRAME_GATHER(d, r, nr, ccp_fc_ell(w, c), va, vb, yc);
    } else {
        const double* d = w->fc_d + 9 * (size_t)c;
        const double* r = w->fc_arm + 6 * (size_t)c;
        FRAME_GATHER(d, r, nr, ccp_fc_ell(w, c), va, vb, yc);
    }
}

/* s += J_{c,side}ᵀ x_c: the force and moment of contact c's impulses xc (its
 * rows) on one of its bodies (side 0: a, with the minus sign; 1: b). */
static inline __attribute__((always_inline)) void frame_scatter(const ccp_work* w, int32_t c, int side, const double* xc, double* s)
{
    const int nr = w->fc_rows[c];
    double F[3], T[3];
    if (w->fc_df) {
        const float* d = w->fc_df + 9 * (size_t)c;
        const float* r = w->fc_armf + 6 * (size_t)c + 3 * side;
        FRAME_FORCE(d, nr, xc, F);
        FRAME_MOMENT(r, F, T);
        if (nr == 6) FRAME_COUPLE(d, ccp_fc_ell(w, c), xc, T);
    } else {
        const double* d = w->fc_d + 9 * (size_t)c;
        const double* r = w->fc_arm + 6 * (size_t)c + 3 * side;
        FRAME_FORCE(d, nr, xc, F);
        FRAME_MOMENT(r, F, T);
        if (nr == 6) FRAME_COUPLE(d, ccp_fc_ell(w, c), xc, T);
    }
    if (side) {
        for (int k = 0; k < 3; k++) {
            s[k] += F[k];
            s[3 + k] += T[k];
        }
    } else {
        for (int k = 0; k < 3; k++) {
            s[k] -= F[k];
            s[3 + k] -= T[k];
        }
    }
}

/* Row q of a contact on one side (0: a, 1: b) as a 6-vector (J_a or J_b),
 * from its frame fd, lever arms and ℓ as doubles (fc_frame_arms). */
static inline void frame_row6_of(const double fd[9], const double arms[6], double ell, int q, int side, double* j)
{
    const double sg = side ? 1.0 : -1.0;
    if (q < 3) {
        const double* d = fd + 3 * q;
        const double* r = arms + 3 * side;
        j[0] = sg * d[0];
        j[1] = sg * d[1];
        j[2] = sg * d[2];
        j[3] = sg * (r[1] * d[2] - r[2] * d[1]);
        j[4] = sg * (r[2] * d[0] - r[0] * d[2]);
        j[5] = sg * (r[0] * d[1] - r[1] * d[0]);
    } else {
        const double* d = fd + 3 * (q - 3);
        const double e = sg * ell;
        j[0] = j[1] = j[2] = 0.0;
        j[3] = e * d[0];
        j[4] = e * d[1];
        j[5] = e * d[2];
    }
}

static void frame_row6(const ccp_work* w, int32_t c, int q, int side, double* j)
{
    double fd[9], arms[6];
    fc_frame_arms(w, c, fd, arms);
    frame_row6_of(fd, arms, ccp_fc_ell(w, c), q, side, j);
}

/* ccp_work_frame_columns from contact c's frame and arms already loaded. */
static inline int frame_columns_of(const ccp_work* w, int32_t c, const double fd[9], const double arms[6], int q,
                                   int32_t body[2], double j[2][6])
{
    int n = 0;
    for (int side = 0; side < 2; side++) {
        int32_t b = w->fc_body[2 * (size_t)c + side];
        if (b < 0) continue;
        double t[6];
        frame_row6_of(fd, arms, ccp_fc_ell(w, c), q, side, t);
        if (n == 1 && body[0] == b) { /* one body on both sides: J_a + J_b */
            for (int k = 0; k < 6; k++) j[0][k] += t[k];
            continue;
        }
        body[n] = b;
        memcpy(j[n], t, sizeof t);
        n++;
    }
    return n;
}

int ccp_work_frame_columns(const ccp_work* w, int32_t c, int q, int32_t body[2], double j[2][6])
{
    double fd[9], arms[6];
    fc_frame_arms(w, c, fd, arms);
    return frame_columns_of(w, c, fd, arms, q, body, j);
}

/* N_ik (compliance excluded) for rows i = q, k = s of contact c. */
static double frame_entry(const ccp_work* w, int32_t c, int q, int s)
{
    int32_t bi[2], bk[2];
    double ji[2][6], jk[2][6];
    int n = ccp_work_frame_columns(w, c, q, bi, ji);
    ccp_work_frame_columns(w, c, s, bk, jk);
    double sum = 0.0;
    for (int e = 0; e < n; e++) {
        double mk[6];
        minv_apply(w, bi[e], jk[e], mk);
        for (int k = 0; k < 6; k++) sum += ji[e][k] * mk[k];
    }
    return sum;
}

/* The diagonal of N (compliance excluded) on contact c's rows, into out:
 * frame_entry(w, c, q, q) for each row q, with the same operations (so the
 * same bits), the frame loaded once. */
static void frame_diag(const ccp_work* w, int32_t c, double* out)
{
    double fd[9], arms[6];
    fc_frame_arms(w, c, fd, arms);
    for (int q = 0; q < w->fc_rows[c]; q++) {
        int32_t bi[2];
        double ji[2][6];
        int n = frame_columns_of(w, c, fd, arms, q, bi, ji);
        double sum = 0.0;
        for (int e = 0; e < n; e++) {
            double mk[6];
            minv_apply(w, bi[e], ji[e], mk);
            for (int k = 0; k < 6; k++) sum += ji[e][k] * mk[k];
        }
        out[q] = sum;
    }
}

/* Whether every M⁻¹ block is a rigid body's, [1/m I, 0; 0, A]; if so, fills
 * minv10 (1/m and A row by row) and points rigid10 at it. A problem given
 * by inv_mass_rigid is read where it is. */
static bool rigid_blocks(ccp_work* w)
{
    if (!w->p->inv_mass) {
        w->rigid10 = w->p->inv_mass_rigid;
        return w->rigid10 != NULL;
    }
    w->rigid10 = w->minv10;
    const double* M = w->p->inv_mass;
    const int32_t nb = w->nbody;
    int rigid = 1;
#ifdef _OPENMP
#pragma omp parallel for schedule(static) num_threads(w->threads) if (w->threads > 1 && nb > DVI_PAR_MIN / 8) \
    reduction(&& : rigid)
#endif
    for (int32_t b = 0; b < nb; b++) {
        const double* A = M + 36 * (size_t)b;
        bool ok = A[7] == A[0] && A[14] == A[0];
        for (int i = 0; i < 6 && ok; i++)
            for (int j = 0; j < 6; j++) {
                bool lin = i < 3 && j < 3, ang = i >= 3 && j >= 3;
                if ((lin && i != j) || (!lin && !ang))
                    if (A[6 * i + j] != 0.0) ok = false;
            }
        rigid = rigid && ok;
    }
    if (!rigid) return false;
#ifdef _OPENMP
#pragma omp parallel for schedule(static) num_threads(w->threads) if (w->threads > 1 && nb > DVI_PAR_MIN / 8)
#endif
    for (int32_t b = 0; b < nb; b++) {
        const double* A = M + 36 * (size_t)b;
        double* o = w->minv10 + 10 * (size_t)b;
        o[0] = A[0];
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) o[1 + 3 * i + j] = A[6 * (3 + i) + 3 + j];
    }
    return true;
}

/* The compact contacts (dvi_ccp_frames): records, rows, incidence lists,
 * the rows left to D, and the diagonal of N on the contacts' rows. */
static void prepare_frames(ccp_work* w, const dvi_ccp_problem* p)
{
    const dvi_ccp_frames* F = p->frames;
    w->nfc = F ? F->count : 0;
    memset(w->inc_ptr, 0, ((size_t)w->nbody + 1) * sizeof(int32_t));
    w->fc_d = F ? F->frame : NULL;
    w->fc_arm = F ? F->arm : NULL;
    w->fc_df = F ? F->frame_f : NULL;
    w->fc_armf = F ? F->arm_f : NULL;
    w->fc_body = F ? F->body : NULL;
    w->fc_ell = F ? F->ell : NULL;
    const int32_t nfc0 = w->nfc;
#ifdef _OPENMP
#pragma omp parallel for schedule(static) num_threads(w->threads) if (w->threads > 1 && w->m > DVI_PAR_MIN)
#endif
    for (int32_t c = 0; c < nfc0; c++) { /* each contact's own entries */
        int32_t blk = F->block[c];
        w->fc_row[c] = w->block_row[blk];
        w->fc_rows[c] = (int8_t)(w->block_row[blk + 1] - w->block_row[blk]);
        w->block_fc[blk] = c;
    }
    for (int32_t c = 0; c < nfc0; c++) { /* incidences per body */
        const int32_t fa = F->body[2 * (size_t)c], fb = F->body[2 * (size_t)c + 1];
        if (fa >= 0) w->inc_ptr[fa + 1]++;
        if (fb >= 0) w->inc_ptr[fb + 1]++;
    }
    w->ndrows = 0; /* the rows of the blocks no contact gives, in row order */
    for (int32_t b = 0; b < w->nblocks; b++)
        if (w->block_fc[b] < 0)
            for (int32_t i = w->block_row[b]; i < w->block_row[b + 1]; i++) w->drows[w->ndrows++] = i;
    /* incidences, body-major, contact order within a body */
    for (int32_t b = 0; b < w->nbody; b++) w->inc_ptr[b + 1] += w->inc_ptr[b];
    int32_t* next = w->cursor;
    memcpy(next, w->inc_ptr, (size_t)w->nbody * sizeof(int32_t));
    for (int32_t c = 0; c < w->nfc; c++) {
        int32_t roll = w->fc_rows[c] == 6 ? 2 : 0;
        const int32_t fa = w->fc_body[2 * (size_t)c], fb = w->fc_body[2 * (size_t)c + 1];
        for (int side = 0; side < 2; side++) { /* the arms as given, in the precision given */
            const int32_t b = side ? fb : fa;
            if (b < 0) continue;
            int32_t k = next[b]++;
            w->inc[k] = 4 * c + roll + side;
            if (w->fc_armf)
                memcpy(w->inc_arm_f + 3 * (size_t)k, w->fc_armf + 6 * (size_t)c + 3 * side, 3 * sizeof(float));
            else
                memcpy(w->inc_arm + 3 * (size_t)k, w->fc_arm + 6 * (size_t)c + 3 * side, 3 * sizeof(double));
        }
    }
    const int32_t nfc = w->nfc;
#ifdef _OPENMP
#pragma omp parallel for schedule(static) num_threads(w->threads) if (w->threads > 1 && w->m > DVI_PAR_MIN)
#endif
    for (int32_t c = 0; c < nfc; c++) frame_diag(w, c, w->diag + w->fc_row[c]);
}

/* v = M⁻¹ D x, and when quad is set, xᵀDᵀM⁻¹Dx = Σ_b s_b · v_b summed in
 * fixed chunks of bodies (the same bits for any thread count). */
static double minv_d(const ccp_work* w, const double* x, double* v, bool quad)
{
    /* v_b = M⁻¹_b (Σ_{runs q of b} d_q x_col(q) + Σ_{contacts c of b} J_cᵀ x_c):
     * accumulating D x first and applying the 6×6 block once per body reads
     * 6 numbers per run instead of the 6 of M⁻¹D (memory traffic is what
     * bounds this loop). A contact's force F_c = Σ_q x_q d_q is formed once,
     * contact by contact, and each of its bodies then takes ±[F_c, ρ × F_c]. */
    const int32_t nb = w->nbody, nfc = w->nfc;
    const int32_t* bp = w->body_ptr;
    const int32_t* rc = w->brun_col;
    const double* dd = w->brun_d;
    const int32_t* ip = w->inc_ptr;
    const int32_t* inc = w->inc;
    const int32_t* frow = w->fc_row;
    const int8_t* frows = w->fc_rows;
    double* force = w->fc_force;
    const double* arm = w->inc_arm;
    const float* armf = w->fc_armf ? w->inc_arm_f : NULL;
    const float* fdf = w->fc_df;
    const double* fdd = w->fc_d;
    const int32_t cb = w->chunk_bodies, nch = (nb + cb - 1) / cb;
#ifdef _OPENMP
#pragma omp parallel num_threads(w->threads) if (w->threads > 1 && w->m > DVI_PAR_MIN)
#endif
    {
#ifdef _OPENMP
#pragma omp for schedule(static)
#endif
        for (int32_t c = 0; c < nfc; c++) {
            const double* xc = x + frow[c];
            double* F = force + 3 * (size_t)c;
            if (fdf) {
                const float* d = fdf + 9 * (size_t)c;
                FRAME_FORCE(d, frows[c], xc, F);
            } else {
                const double* d = fdd + 9 * (size_t)c;
                FRAME_FORCE(d, frows[c], xc, F);
            }
        }
#ifdef _OPENMP
#pragma omp for schedule(static) nowait /* the region's end waits */
#endif
        for (int32_t ch = 0; ch < nch; ch++) {
        const int32_t b1 = ccp_chunk_end(ch, cb, nb);
        double qsum = 0.0;
        for (int32_t b = ch * cb; b < b1; b++) {
            double s[6] = {0, 0, 0, 0, 0, 0};
            for (int32_t k = bp[b]; k < bp[b + 1]; k++) {
                double a = x[rc[k]];
                const double* y = dd + 6 * (size_t)k;
                for (int c = 0; c < 6; c++) s[c] += y[c] * a;
            }
            for (int32_t k = ip[b]; k < ip[b + 1]; k++) {
                const int32_t e = inc[k], c = e >> 2;
                const double* F = force + 3 * (size_t)c;
                double r[3];
                if (armf) {
                    r[0] = armf[3 * (size_t)k], r[1] = armf[3 * (size_t)k + 1], r[2] = armf[3 * (size_t)k + 2];
                } else {
                    r[0] = arm[3 * (size_t)k], r[1] = arm[3 * (size_t)k + 1], r[2] = arm[3 * (size_t)k + 2];
                }
                double T[3];
                FRAME_MOMENT(r, F, T);
                if (e & 2) { /* spin and rolling rows */
                    const double* xc = x + frow[c];
                    if (fdf)
                        FRAME_COUPLE(fdf + 9 * (size_t)c, ccp_fc_ell(w, c), xc, T);
                    else
                        FRAME_COUPLE(fdd + 9 * (size_t)c, ccp_fc_ell(w, c), xc, T);
                }
                if (e & 1) {
                    s[0] += F[0], s[1] += F[1], s[2] += F[2];
                    s[3] += T[0], s[4] += T[1], s[5] += T[2];
                } else {
                    s[0] -= F[0], s[1] -= F[1], s[2] -= F[2];
                    s[3] -= T[0], s[4] -= T[1], s[5] -= T[2];
                }
            }
            double* vb = v + 6 * (size_t)b;
            minv_apply(w, b, s, vb);
            if (quad) qsum += s[0] * vb[0] + s[1] * vb[1] + s[2] * vb[2] + s[3] * vb[3] + s[4] * vb[4] + s[5] * vb[5];
        }
        CCP_PART(w, ch, 0) = qsum;
        }
    }
    if (w->sh && w->sh->exchange) w->sh->exchange(w->sh->ctx, v); /* the bodies of other processes */
    double lq = 0.0;
    if (w->lr) { /* lr_v = G x, in column order (serial: the same bits for any thread count) */
        const dvi_csc* G = w->lr;
        double* t = w->lr_v;
        memset(t, 0, (size_t)G->rows * sizeof(double));
        for (int32_t i = 0; i < w->m; i++) {
            const double xi = x[i];
            if (xi == 0.0) continue;
            for (int32_t q = G->colptr[i]; q < G->colptr[i + 1]; q++) t[G->rowind[q]] += G->values[q] * xi;
        }
        if (quad)
            for (int32_t k = 0; k < G->rows; k++) lq += t[k] * t[k];
    }
    return quad ? ccp_work_part_sum(w, nch, 0, CCP_BY_BODY) - lq : 0.0;
}

void ccp_work_minv_d(const ccp_work* w, const double* x, double* v)
{
    minv_d(w, x, v, false);
}

double ccp_work_minv_d_quad(const ccp_work* w, const double* x, double* v)
{
    return minv_d(w, x, v, true);
}

/* Σ val[q] x[idx[q]] over q in [p[i], p[i + 1]), in order: row i of a CSR
 * matrix (column i of a CSC one) times x. */
static inline double sparse_dot(const int32_t* p, const int32_t* idx, const double* val, const double* x, int32_t i)
{
    double s = 0.0;
    for (int32_t q = p[i]; q < p[i + 1]; q++) s += val[q] * x[idx[q]];
    return s;
}

void ccp_work_dt(const ccp_work* w, const double* v, double* y)
{
    const int32_t nfc = w->nfc;
    const int32_t nd = w->ndrows;
    const int32_t* dr = w->drows;
    const int32_t* rp = w->run_ptr;
    const int32_t* rb = w->run_body;
    const double* d = w->run_d;
    /* the rows of D and the contacts' rows are disjoint: one parallel
     * region, the threads go on to the contacts without waiting */
#ifdef _OPENMP
#pragma omp parallel num_threads(w->threads) if (w->threads > 1 && w->m > DVI_PAR_MIN)
#endif
    {
#ifdef _OPENMP
#pragma omp for schedule(static) nowait
#endif
        for (int32_t i = 0; i < nd; i++) {
            const int32_t j = dr[i];
            double s = 0.0;
            for (int32_t q = rp[j]; q < rp[j + 1]; q++) {
                const double* a = d + 6 * (size_t)q;
                const double* b = v + 6 * (size_t)rb[q];
                s += a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3] + a[4] * b[4] + a[5] * b[5];
            }
            y[j] = s;
        }
#ifdef _OPENMP
#pragma omp for schedule(static) nowait
#endif
        for (int32_t c = 0; c < nfc; c++) frame_gather(w, c, v, y + w->fc_row[c]);
    }
    if (w->lr) { /* y −= Gᵀ lr_v */
        const dvi_csc* G = w->lr;
        const double* t = w->lr_v;
        const int32_t m = w->m;
#ifdef _OPENMP
#pragma omp parallel for schedule(static) num_threads(w->threads) if (w->threads > 1 && m > DVI_PAR_MIN)
#endif
        for (int32_t i = 0; i < m; i++) y[i] -= sparse_dot(G->colptr, G->rowind, G->values, t, i);
    }
}

void ccp_work_frame_row(const ccp_work* w, int32_t c, int q, int side, double* j)
{
    frame_row6(w, c, q, side, j);
}

void ccp_work_frame_velocity(const ccp_work* w, int32_t c, const double* v, double* out)
{
    frame_gather(w, c, v, out);
}

void ccp_work_frame_update(const ccp_work* w, int32_t c, const double* delta, double* v)
{
    for (int side = 0; side < 2; side++) {
        int32_t b = w->fc_body[2 * (size_t)c + side];
        if (b < 0) continue;
        double s[6] = {0, 0, 0, 0, 0, 0}, t[6];
        frame_scatter(w, c, side, delta, s);
        minv_apply(w, b, s, t);
        double* vb = v + 6 * (size_t)b;
        for (int k = 0; k < 6; k++) vb[k] += t[k];
    }
}

void ccp_work_apply(const ccp_work* w, const double* x, double* y)
{
    const int32_t m = w->m;
    if (w->factor_form) {
        ccp_work_minv_d(w, x, w->bodyvec);
        ccp_work_dt(w, w->bodyvec, y);
    } else {
        const int32_t* wp = w->wt_p;
        const int32_t* wi = w->wt_i;
        const double* wx = w->wt_x;
#ifdef _OPENMP
#pragma omp parallel for schedule(static) num_threads(w->threads) if (w->threads > 1 && m > DVI_PAR_MIN)
#endif
        for (int32_t i = 0; i < m; i++) y[i] = sparse_dot(wp, wi, wx, x, i);
    }
    const double* c = w->p->compliance;
    if (c) {
        const int nt = ccp_work_nt(w, m);
        DVI_OMP_FOR_ROWS
        for (int32_t i = 0; i < m; i++) y[i] += c[i] * x[i];
    }
}

double ccp_work_minv_d_bytes(const ccp_work* w)
{
    if (!w->factor_form) return 0.0;
    const double runs = w->nruns, bodies = w->nbody;
    /* body_ptr, inc_ptr, M⁻¹ (36, or 10 in the rigid layout), v (6) per body;
     * brun_col, brun_d (6), x per run; per contact given by its frame, the
     * contact pass: its frame (the normal alone for one row), fc_row,
     * fc_rows and rows of x, writing F (3); per incidence, the body pass: its
     * entry of inc, its lever arm and its contact's F (the spin and rolling
     * rows: the frame, ℓ and those rows of x again) */
    double fc = 0.0;
    const double real = w->fc_df ? 4.0 : 8.0; /* bytes of a frame's or an arm's number */
    for (int32_t c = 0; c < w->nfc; c++) {
        const int nr = w->fc_rows[c];
        const double ninc = (w->fc_body[2 * (size_t)c] >= 0) + (w->fc_body[2 * (size_t)c + 1] >= 0);
        fc += (nr == 1 ? 3.0 : 9.0) * real + 4.0 + 1.0 + 8.0 * (nr < 3 ? nr : 3) + 24.0;
        fc += ninc * (4.0 + 3.0 * real + 24.0 + (nr == 6 ? 9.0 * real + 8.0 + 24.0 : 0.0));
    }
    /* the low-rank term: colptr and x per row, rowind, values and lr_v per entry of G, lr_v once */
    const double lr = w->lr ? (double)w->m * 12.0 + (double)w->lr->colptr[w->m] * 20.0 + (double)w->lr->rows * 8.0 : 0.0;
    return bodies * (8.0 + (w->rigid_minv ? 10 : 36) * 8.0 + 6 * 8.0) + runs * (4.0 + 6 * 8.0 + 8.0) + fc + lr;
}

double ccp_work_dt_bytes(const ccp_work* w)
{
    if (!w->factor_form) return 0.0;
    /* drows, run_ptr, y per row given by D; run_body, run_d (6), v (6,
     * gathered) per run; per contact its frame, lever arms, bodies, fc_row,
     * fc_rows (ℓ with spin and rolling rows), its rows of y and the v of each
     * of its bodies */
    double fc = 0.0;
    const double real = w->fc_df ? 4.0 : 8.0; /* bytes of a frame's or an arm's number */
    for (int32_t c = 0; c < w->nfc; c++) {
        const int nr = w->fc_rows[c];
        const double nbody = (w->fc_body[2 * (size_t)c] >= 0) + (w->fc_body[2 * (size_t)c + 1] >= 0);
        fc += 15.0 * real + 8.0 + 4.0 + 1.0 + (nr == 6 ? 8.0 : 0.0) + 8.0 * nr + 48.0 * nbody;
    }
    const double lr = w->lr ? (double)w->m * 12.0 + (double)w->lr->colptr[w->m] * 20.0 : 0.0;
    return (double)w->ndrows * (4.0 + 4.0 + 8.0) + (double)w->nruns * (4.0 + 6 * 8.0 + 6 * 8.0) + fc + lr;
}

double ccp_work_product_bytes(const ccp_work* w)
{
    double b;
    if (w->factor_form)
        b = ccp_work_minv_d_bytes(w) + ccp_work_dt_bytes(w);
    else /* wt_p, y per row; wt_i, wt_x, x (gathered) per entry */
        b = (double)w->m * (4.0 + 8.0) + (double)w->wt_p[w->m] * (4.0 + 8.0 + 8.0);
    if (w->p->compliance) b += (double)w->m * 3 * 8.0; /* y += c∘x */
    return b;
}

double ccp_work_mu_pass_bytes(const ccp_work* w, int vin, int vout)
{
    return (double)w->nblocks * (4.0 + 8.0) + (double)w->other_blocks * (double)sizeof(dvi_ccp_block) +
           (double)w->m * 8.0 * (vin + vout);
}

double ccp_work_pass_bytes(const ccp_work* w, int vin, int vout)
{
    /* per block: block_row (4) and the dvi_ccp_block (its kind and μ) */
    return (double)w->nblocks * (4.0 + (double)sizeof(dvi_ccp_block)) + (double)w->m * 8.0 * (vin + vout);
}

void ccp_work_project(const ccp_work* w, double* x)
{
    const dvi_ccp_block* B = w->p->blocks;
    const int32_t* br = w->block_row;
    for (int32_t b = 0; b < w->nblocks; b++)
        if (B[b].kind != DVI_BLOCK_BILATERAL) ccp_cone_project(&B[b], x + br[b]);
}

double ccp_norm2(const double* x, int32_t n)
{
    double s = 0.0;
    for (int32_t i = 0; i < n; i++) s += x[i] * x[i];
    return sqrt(s);
}

double ccp_dot(const double* x, const double* y, int32_t n)
{
    double s = 0.0;
    for (int32_t i = 0; i < n; i++) s += x[i] * y[i];
    return s;
}

double ccp_residual_scale(double rnorm, double gnorm, double unorm)
{
    double s = rnorm > gnorm ? rnorm : gnorm;
    s = s > unorm ? s : unorm;
    return s > 1e-300 ? s : 1.0;
}

/* Block b's terms of the CCP residual (ga, ua: its rows of γ and u): adds
 * to ‖γ‖² and ‖u‖² and returns its natural map's e². One definition for
 * the residual's own pass and the metrics' pass, so both have the same
 * bits. */
static inline double residual_block(const dvi_ccp_block* B, const double* ga, const double* ua, int32_t k, double* gg,
                                    double* uu)
{
    for (int32_t a = 0; a < k; a++) {
        *gg += ga[a] * ga[a];
        *uu += ua[a] * ua[a];
    }
    return ccp_natural_map2(B, ga, ua, k);
}

/* Block b's terms of the velocity residual (ra: its rows of r; eta: η_b,
 * 0 when not positive and finite): adds to ‖u − r‖² and ‖u‖² and returns
 * the natural map's e² of (η γ, u). */
static inline double velocity_block(const dvi_ccp_block* B, const double* ga, const double* ua, const double* ra,
                                    double eta, int32_t k, double* gg, double* uu)
{
    double sg[6];
    for (int32_t a = 0; a < k; a++) {
        sg[a] = eta * ga[a];
        const double ng = ua[a] - ra[a];
        *gg += ng * ng;
        *uu += ua[a] * ua[a];
    }
    return ccp_natural_map2(B, sg, ua, k);
}

/* Block b's terms of the feasibility residual (ra: its rows of r; eta: η_b,
 * 0 when not positive and finite), every one a velocity and each one zero at
 * a solution of either law and of Lemke's pyramids: a bilateral row's u; a
 * frictionless row's natural map min(η γ, u); a friction block's normal
 * rows only, min(0, u_n) and min(0, η γ_n) (the tangential rows differ
 * between the laws). Adds to ‖u − r‖² and ‖u‖² and returns e². */
static inline double feasibility_block(const dvi_ccp_block* B, const double* ga, const double* ua, const double* ra,
                                       double eta, int32_t k, double* gg, double* uu)
{
    double e2 = 0.0;
    for (int32_t a = 0; a < k; a++) {
        const double ng = ua[a] - ra[a];
        *gg += ng * ng;
        *uu += ua[a] * ua[a];
    }
    if (B->kind == DVI_BLOCK_BILATERAL) {
        for (int32_t a = 0; a < k; a++) e2 += ua[a] * ua[a];
    } else if (B->kind == DVI_BLOCK_FRICTIONLESS) {
        const double sg = eta * ga[0], d = sg < ua[0] ? sg : ua[0];
        e2 = d * d;
    } else {
        const double un = ua[0] < 0.0 ? ua[0] : 0.0, sg = eta * ga[0] < 0.0 ? eta * ga[0] : 0.0;
        e2 = un * un + sg * sg;
    }
    return e2;
}

/* Block b's share of the Coulomb residual: the natural map with u replaced
 * by the De Saxcé velocity (ccp.h). One definition for the metrics and
 * ccp_work_residual_coulomb, so both have the same bits. */
static inline double coulomb_block(const dvi_ccp_block* B, const double* ga, const double* ua, int32_t k)
{
    double ut[6];
    for (int32_t i = 0; i < k; i++) ut[i] = ua[i];
    if (B->kind == DVI_BLOCK_FRICTION || B->kind == DVI_BLOCK_FRICTION_ROLLING)
        ut[0] += B->mu * sqrt(ua[1] * ua[1] + ua[2] * ua[2]);
    if (B->kind == DVI_BLOCK_FRICTION_ROLLING)
        ut[0] += B->mu_spin * fabs(ua[3]) + B->mu_roll * sqrt(ua[4] * ua[4] + ua[5] * ua[5]);
    return ccp_natural_map2(B, ga, ut, k);
}

/* Block b's error in its own units (metrics.residual_block; with coulomb,
 * residual_block_coulomb): the natural map on (η γ_b, u_b) — ũ_b, the De
 * Saxcé velocity, with coulomb — over the block's own scale
 * max(‖η γ_b‖, ‖r_b‖, ‖u_b‖, ‖u_b − r_b‖, floor), every term a velocity
 * (eta: η_b, 0 when not positive and finite; floor: block_floor). The
 * global residuals divide by the whole problem's scale, so a block of small
 * impulses and velocities beside large ones can be far from its answer
 * while they pass; this cannot. */
static inline double block_relative(const dvi_ccp_block* B, const double* ga, const double* ua, const double* ra,
                                    double eta, int32_t k, bool coulomb, double floor)
{
    double sg[6], ut[6], gg = 0.0, rr = 0.0, uu = 0.0, nn = 0.0;
    for (int32_t a = 0; a < k; a++) {
        sg[a] = eta * ga[a];
        ut[a] = ua[a];
        const double ng = ua[a] - ra[a];
        gg += sg[a] * sg[a];
        rr += ra[a] * ra[a];
        uu += ua[a] * ua[a];
        nn += ng * ng;
    }
    if (coulomb && (B->kind == DVI_BLOCK_FRICTION || B->kind == DVI_BLOCK_FRICTION_ROLLING))
        ut[0] += ccp_desaxce_shift(B, ua);
    double s2 = floor * floor;
    s2 = gg > s2 ? gg : s2;
    s2 = rr > s2 ? rr : s2;
    s2 = uu > s2 ? uu : s2;
    s2 = nn > s2 ? nn : s2;
    const double e = sqrt(ccp_natural_map2(B, sg, ut, k)), s = sqrt(s2);
    return s > 1e-300 ? e / s : e;
}

/* The floor of block b's scale in block_relative: `fraction`
 * (DVI_BLOCK_SCALE_FLOOR, or DVI_BLOCK_SCALE_FLOOR_PIVOTING for Lemke's
 * pyramids) of a typical block's share of ‖r‖ or of η_b ‖γ‖ (the velocity a
 * typical block's impulse gives block b; gnorm = ‖γ‖), the smaller: one
 * row of a large r and no impulse (a stiff contact flying apart) lifts the
 * first, not the second, and would hide the small blocks beside it. */
static inline double block_floor(const ccp_work* w, double fraction, double gnorm, double eta)
{
    const double per = fraction / sqrt((double)(w->nblocks_all > 1 ? w->nblocks_all : 1));
    const double fr = per * w->rnorm, fg = per * eta * gnorm;
    return fg < fr ? fg : fr;
}

/* The η block b is judged with (block_relative): the mean of its diagonal
 * of N (η_b), and its smallest diagonal entry where that is smaller (a
 * friction block whose tangential rows are far softer than its normal
 * one: the mean overstated the velocity of the normal impulse 150 and 870
 * times on two fuzz inputs, and PGS passed 0.17 % off in the normal
 * impulse, NSGS 1.9 % off in the tangential one; test_solver_claims).
 * Both are zero at a solution; the block is asked within the tolerance
 * for each. Returns how many (1 or 2). */
static inline int block_etas(const ccp_work* w, int32_t b, double eta[2])
{
    const int32_t r0 = w->block_row[b], k = w->block_row[b + 1] - r0;
    double e = ccp_block_eta(w, b), lo = e;
    if (!(e > 0.0) || !isfinite(e)) e = lo = 0.0;
    for (int32_t a = 0; a < k && e > 0.0; a++) {
        const double d = w->diag[r0 + a];
        if (d > 0.0 && d < lo) lo = d;
    }
    eta[0] = e;
    eta[1] = lo;
    return lo < e ? 2 : 1;
}

/* Π onto the pyramid of k edges (1, μ cos θ_j, μ sin θ_j), θ_j = turn +
 * 2πj/k (Lemke's, lemke_pyramid): x itself when inside every face, else
 * the nearest of its projections onto the faces (each the cone of two
 * adjacent edges) and the apex. */
static void project_pyramid(double mu, int32_t k, double turn, double x[3])
{
    if (!(mu > 0.0)) {
        x[0] = x[0] > 0.0 ? x[0] : 0.0;
        x[1] = x[2] = 0.0;
        return;
    }
    const double two_pi = 6.283185307179586476925;
    double best[3] = {0.0, 0.0, 0.0}, dbest = x[0] * x[0] + x[1] * x[1] + x[2] * x[2];
    bool inside = true;
    for (int32_t j = 0; j < k; j++) {
        const double t0 = turn + two_pi * j / k, t1 = turn + two_pi * (j + 1) / k;
        const double a[3] = {1.0, mu * cos(t0), mu * sin(t0)}, b[3] = {1.0, mu * cos(t1), mu * sin(t1)};
        const double nrm[3] = {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
        if (nrm[0] * x[0] + nrm[1] * x[1] + nrm[2] * x[2] < 0.0) inside = false; /* nrm points inward */
        const double aa = a[0] * a[0] + a[1] * a[1] + a[2] * a[2], bb = b[0] * b[0] + b[1] * b[1] + b[2] * b[2];
        const double ab = a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
        const double xa = x[0] * a[0] + x[1] * a[1] + x[2] * a[2], xb = x[0] * b[0] + x[1] * b[1] + x[2] * b[2];
        const double det = aa * bb - ab * ab;
        const double cand[3][2] = {{(bb * xa - ab * xb) / det, (aa * xb - ab * xa) / det},
                                   {xa > 0.0 ? xa / aa : 0.0, 0.0},
                                   {0.0, xb > 0.0 ? xb / bb : 0.0}};
        for (int c = 0; c < 3; c++) {
            if (!(cand[c][0] >= 0.0 && cand[c][1] >= 0.0)) continue;
            double y[3], d = 0.0;
            for (int i = 0; i < 3; i++) {
                y[i] = cand[c][0] * a[i] + cand[c][1] * b[i];
                d += (x[i] - y[i]) * (x[i] - y[i]);
            }
            if (d < dbest) {
                dbest = d;
                for (int i = 0; i < 3; i++) best[i] = y[i];
            }
        }
    }
    if (!inside)
        for (int i = 0; i < 3; i++) x[i] = best[i];
}

/* Friction block b's own residual on its pyramid (as block_relative). */
static double pyramid_relative(const ccp_work* w, int32_t b, const double* g, const double* u, double eta,
                               double floor)
{
    const int32_t r0 = w->block_row[b];
    const double* r = w->p->r;
    double sg[3], x[3], s2 = floor * floor, gg = 0.0, rr = 0.0, uu = 0.0, nn = 0.0, e2 = 0.0;
    for (int32_t a = 0; a < 3; a++) {
        sg[a] = eta * g[r0 + a];
        x[a] = sg[a] - u[r0 + a];
        gg += sg[a] * sg[a];
        rr += r[r0 + a] * r[r0 + a];
        uu += u[r0 + a] * u[r0 + a];
        nn += (u[r0 + a] - r[r0 + a]) * (u[r0 + a] - r[r0 + a]);
    }
    project_pyramid(w->p->blocks[b].mu, w->pyramid_edges, w->pyramid_turn[2 * (size_t)b], x);
    for (int32_t a = 0; a < 3; a++) e2 += (sg[a] - x[a]) * (sg[a] - x[a]);
    s2 = gg > s2 ? gg : s2;
    s2 = rr > s2 ? rr : s2;
    s2 = uu > s2 ? uu : s2;
    s2 = nn > s2 ? nn : s2;
    const double s = sqrt(s2), e = sqrt(e2);
    return s > 1e-300 ? e / s : e;
}

double ccp_work_block_pyramid(const ccp_work* w, const double* g, const double* u)
{
    const double gnorm = ccp_work_norm2(w, g);
    const double* r = w->p->r;
    const dvi_ccp_block* B = w->p->blocks;
    double worst = 0.0;
    for (int32_t b = 0; b < w->nblocks; b++) {
        const int32_t r0 = w->block_row[b], k = w->block_row[b + 1] - r0;
        double eta[2];
        const int ne = block_etas(w, b, eta);
        for (int i = 0; i < ne; i++) {
            const double floor = block_floor(w, DVI_BLOCK_SCALE_FLOOR_PIVOTING, gnorm, eta[i]);
            double rel = 0.0;
            if (B[b].kind == DVI_BLOCK_FRICTION)
                rel = pyramid_relative(w, b, g, u, eta[i], floor);
            else if (B[b].kind != DVI_BLOCK_FRICTION_ROLLING) /* no pyramid: the cone's own test */
                rel = block_relative(&B[b], g + r0, u + r0, r + r0, eta[i], k, false, floor);
            worst = ccp_max_nan(worst, rel);
        }
    }
    return worst;
}

/* The largest of part[DVI_PART_SLOTS c + slot] over the chunks (NaN kept):
 * exact, so the same for any thread count; then over the processes. */
static double part_max(const ccp_work* w, int32_t chunks, int slot)
{
    double m = 0.0;
    for (int32_t c = 0; c < chunks; c++) {
        const double x = CCP_PART(w, c, slot);
        m = ccp_max_nan(m, x);
    }
    return ccp_work_max_all(w, m);
}

/* The residual's three sums, chunked by blocks: e², ‖γ‖², ‖u‖². SUM_CCP:
 * e² of the CCP's natural map, u = v + add (add = NULL: u = v);
 * SUM_COULOMB: of Coulomb's (coulomb_block); SUM_VELOCITY: the velocity
 * residual's e² = Σ_a ‖η_a γ_a − Π_K(η_a γ_a − u_a)‖² with u = v,
 * Σ ‖u_a − r_a‖² (= ‖N γ‖²) in place of ‖γ‖², η_a the mean of block a's
 * diagonal of N (m/s per unit impulse; every term is a velocity: see
 * ccp_work_residual_velocity); SUM_FEASIBILITY: the feasibility residual's
 * (feasibility_block) with u = v, ‖u − r‖² in place of ‖γ‖². Returns e²;
 * g2, u2 out. */
enum { SUM_CCP, SUM_COULOMB, SUM_VELOCITY, SUM_FEASIBILITY };
static double residual_sums(const ccp_work* w, const double* g, const double* v, const double* add, int sum,
                            double* g2, double* u2, double* bmax)
{
    const double gnorm = bmax ? ccp_work_norm2(w, g) : 0.0; /* the block floor's */
    const double* r = w->p->r;
    const dvi_ccp_block* B = w->p->blocks;
    const int32_t* br = w->block_row;
    const int32_t nb = w->nblocks, nc = ccp_block_chunks(w);
    const int nt = ccp_work_nt(w, w->m);
    DVI_OMP_FOR_CHUNKS
    for (int32_t c = 0; c < nc; c++) {
        int32_t b1 = ccp_chunk_end(c, w->chunk_blocks, nb);
        double e2 = 0.0, gg = 0.0, uu = 0.0, bm = 0.0;
        for (int32_t b = c * w->chunk_blocks; b < b1; b++) {
            int32_t r0 = br[b], k = br[b + 1] - r0;
            if (sum == SUM_VELOCITY || sum == SUM_FEASIBILITY) {
                double eta = ccp_block_eta(w, b);
                if (!(eta > 0.0) || !isfinite(eta)) eta = 0.0;
                e2 += sum == SUM_VELOCITY ? velocity_block(&B[b], g + r0, v + r0, r + r0, eta, k, &gg, &uu)
                                          : feasibility_block(&B[b], g + r0, v + r0, r + r0, eta, k, &gg, &uu);
                if (bmax) { /* every block's own: the CCP's with the velocity residual, Coulomb's with feasibility */
                    const bool coulomb = sum == SUM_FEASIBILITY;
                    double et[2];
                    for (int i = 0, ne = block_etas(w, b, et); i < ne; i++) {
                        const double floor = block_floor(w, DVI_BLOCK_SCALE_FLOOR, gnorm, et[i]);
                        bm = ccp_max_nan(bm, block_relative(&B[b], g + r0, v + r0, r + r0, et[i], k, coulomb, floor));
                    }
                }
                continue;
            }
            double u[6];
            for (int32_t a = 0; a < k; a++) u[a] = add ? v[r0 + a] + add[r0 + a] : v[r0 + a];
            if (sum == SUM_COULOMB) {
                for (int32_t a = 0; a < k; a++) {
                    gg += g[r0 + a] * g[r0 + a];
                    uu += u[a] * u[a];
                }
                e2 += coulomb_block(&B[b], g + r0, u, k);
            } else {
                e2 += residual_block(&B[b], g + r0, u, k, &gg, &uu);
            }
        }
        CCP_PART(w, c, 0) = e2;
        CCP_PART(w, c, 1) = gg;
        CCP_PART(w, c, 2) = uu;
        CCP_PART(w, c, 3) = bm;
    }
    *g2 = ccp_work_part_sum(w, nc, 1, CCP_BY_BLOCK);
    *u2 = ccp_work_part_sum(w, nc, 2, CCP_BY_BLOCK);
    if (bmax) *bmax = part_max(w, nc, 3);
    return ccp_work_part_sum(w, nc, 0, CCP_BY_BLOCK);
}

/* The residual of `sum` relative to its scale (ccp_residual_scale). */
static double scaled_residual(const ccp_work* w, const double* g, const double* v, const double* add, int sum,
                              double rnorm)
{
    double g2, u2;
    const double e2 = residual_sums(w, g, v, add, sum, &g2, &u2, NULL);
    return sqrt(e2) / ccp_residual_scale(rnorm, sqrt(g2), sqrt(u2));
}

double ccp_work_residual_coulomb(const ccp_work* w, const double* g, const double* u)
{
    return scaled_residual(w, g, u, NULL, SUM_COULOMB, w->rnorm);
}

double ccp_work_residual(const ccp_work* w, const double* g, const double* u)
{
    return scaled_residual(w, g, u, NULL, SUM_CCP, w->rnorm);
}

double ccp_work_residual_velocity(const ccp_work* w, const double* g, const double* u)
{
    return scaled_residual(w, g, u, NULL, SUM_VELOCITY, w->rnorm);
}

double ccp_work_residual_feasibility(const ccp_work* w, const double* g, const double* u)
{
    return scaled_residual(w, g, u, NULL, SUM_FEASIBILITY, w->rnorm);
}

/* rk, or where rk <= tol the largest of rk, the residual of `check` and,
 * when every block's own residual (block_relative) is not within
 * block_tol, that one in units of the tolerance (ccp_block_in_tol; NaN
 * kept). */
static double checked(const ccp_work* w, const double* g, const double* u, double rk, double tol, int check)
{
    if (rk <= tol) {
        double g2, u2, rb;
        const double e2 = residual_sums(w, g, u, NULL, check, &g2, &u2, &rb);
        const double rc = sqrt(e2) / ccp_residual_scale(w->rnorm, sqrt(g2), sqrt(u2));
        rk = ccp_max_nan(ccp_max_nan(rk, rc), ccp_block_in_tol(w, rb, tol));
    }
    return rk;
}

double ccp_work_residual_coulomb_checked(const ccp_work* w, const double* g, const double* u, double tol)
{
    return checked(w, g, u, ccp_work_residual_coulomb(w, g, u), tol, SUM_FEASIBILITY);
}

double ccp_work_residual_checked(const ccp_work* w, const double* g, const double* u, double tol)
{
    return checked(w, g, u, ccp_work_residual(w, g, u), tol, SUM_VELOCITY);
}

double ccp_work_residual_n(const ccp_work* w, const double* g, const double* Ng, double rnorm)
{
    return scaled_residual(w, g, Ng, w->p->r, SUM_CCP, rnorm);
}

double ccp_work_dot(const ccp_work* w, const double* x, const double* y)
{
    const int32_t m = w->m, cr = w->chunk_rows, nc = (m + cr - 1) / cr;
    const int nt = ccp_work_nt(w, m);
    DVI_OMP_FOR_CHUNKS
    for (int32_t c = 0; c < nc; c++) {
        int32_t i1 = ccp_chunk_end(c, cr, m);
        double s = 0.0;
        for (int32_t i = c * cr; i < i1; i++) s += x[i] * y[i];
        CCP_PART(w, c, 0) = s;
    }
    return ccp_work_part_sum(w, nc, 0, CCP_BY_ROW);
}

/* Slots of the metrics' partial sums (a chunk's sums in w->part). */
enum {
    MS_E2, MS_GG, MS_UU,    /* the CCP residual: residual_sums */
    MS_C2, MS_GU, MS_GR,    /* Coulomb residual, γᵀu, γᵀr */
    MS_VE2, MS_VGG, MS_VUU, /* the velocity residual: residual_sums of SUM_VELOCITY */
    MS_RGG, MS_RNN, MS_RUU, MS_RUG, MS_RZERO, /* ccp_ray_sums */
    MS_FE2, MS_FGG, MS_FUU, /* the feasibility residual: residual_sums of SUM_FEASIBILITY */
    MS_BLOCK, MS_BLOCK_C,   /* maxima: every block's own residual, the CCP's and Coulomb's (block_relative) */
    MS_SLOTS
};

void ccp_work_metrics(const ccp_work* w, const double* g, const double* u, dvi_ccp_metrics* out,
                      ccp_ray_sums* ray)
{
    const dvi_ccp_block* B = w->p->blocks;
    const double* r = w->p->r;
    /* one pass, block by block in fixed chunks (sums in chunk order, maxima
     * exact): the same bits for any thread count; each sum takes the same
     * operations in the same order as the pass of its own (residual_sums
     * of SUM_CCP and SUM_VELOCITY), so the residuals have their bits */
    const int32_t nb = w->nblocks, nc = ccp_block_chunks(w);
    double cone = 0.0, dual = 0.0, comp = 0.0;
    const double gnorm = ccp_work_norm2(w, g); /* the block floor's */
    const int nt = ccp_work_nt(w, w->m);
    (void)nt; /* used by the OpenMP pragmas only */
#ifdef _OPENMP
#pragma omp parallel for schedule(static) num_threads(nt) if (nt > 1) reduction(max : cone, dual, comp)
#endif
    for (int32_t ch = 0; ch < nc; ch++) {
        const int32_t b1 = ccp_chunk_end(ch, w->chunk_blocks, nb);
        double q[MS_SLOTS] = {0};
        for (int32_t b = ch * w->chunk_blocks; b < b1; b++) {
            int32_t r0 = w->block_row[b], k = w->block_row[b + 1] - r0;
            const double* ga = g + r0;
            const double* ua = u + r0;
            q[MS_E2] += residual_block(&B[b], ga, ua, k, &q[MS_GG], &q[MS_UU]); /* the CCP natural map */
            double y[6];
            q[MS_C2] += coulomb_block(&B[b], ga, ua, k); /* Coulomb: De Saxcé velocity */
            /* primal feasibility: ‖γ − Π_K γ‖ */
            for (int i = 0; i < k; i++) y[i] = ga[i];
            ccp_cone_project(&B[b], y);
            double d = 0.0;
            for (int i = 0; i < k; i++) d += (ga[i] - y[i]) * (ga[i] - y[i]);
            if (sqrt(d) > cone) cone = sqrt(d);
            /* dual feasibility: ‖u − Π_K* u‖ = ‖Π_K(−u)‖ */
            for (int i = 0; i < k; i++) y[i] = -ua[i];
            ccp_cone_project(&B[b], y);
            d = 0.0;
            for (int i = 0; i < k; i++) d += y[i] * y[i];
            if (sqrt(d) > dual) dual = sqrt(d);
            double gu = 0.0;
            for (int i = 0; i < k; i++) gu += ga[i] * ua[i];
            if (fabs(gu) > comp) comp = fabs(gu);
            for (int i = 0; i < k; i++) {
                q[MS_GU] += ga[i] * ua[i];
                q[MS_GR] += ga[i] * r[r0 + i];
            }
            /* the velocity residual */
            const double eta0 = ccp_block_eta(w, b);
            const double eta = !(eta0 > 0.0) || !isfinite(eta0) ? 0.0 : eta0;
            q[MS_VE2] += velocity_block(&B[b], ga, ua, r + r0, eta, k, &q[MS_VGG], &q[MS_VUU]);
            q[MS_FE2] += feasibility_block(&B[b], ga, ua, r + r0, eta, k, &q[MS_FGG], &q[MS_FUU]);
            /* every block in its own units (maxima: the bits of the passes of their own) */
            double et[2];
            for (int i = 0, ne = block_etas(w, b, et); i < ne; i++) {
                const double floor = block_floor(w, DVI_BLOCK_SCALE_FLOOR, gnorm, et[i]);
                q[MS_BLOCK] = ccp_max_nan(q[MS_BLOCK], block_relative(&B[b], ga, ua, r + r0, et[i], k, false, floor));
                q[MS_BLOCK_C] =
                    ccp_max_nan(q[MS_BLOCK_C], block_relative(&B[b], ga, ua, r + r0, et[i], k, true, floor));
            }
            /* the infeasibility test's sums, each block scaled by η */
            if (eta0 == 0.0) q[MS_RZERO] = 1.0;
            if (eta > 0.0) {
                const double sq = sqrt(eta);
                for (int32_t a = 0; a < k; a++) {
                    const double gt = sq * ga[a], nt_ = (ua[a] - r[r0 + a]) / sq, ut_ = ua[a] / sq;
                    q[MS_RGG] += gt * gt;
                    q[MS_RNN] += nt_ * nt_;
                    q[MS_RUU] += ut_ * ut_;
                    q[MS_RUG] += ua[a] * ga[a];
                }
            }
        }
        for (int k = 0; k < MS_SLOTS; k++) CCP_PART(w, ch, k) = q[k];
    }
    const double rnorm = w->rnorm;
    const double s = ccp_residual_scale(rnorm, sqrt(ccp_work_part_sum(w, nc, MS_GG, CCP_BY_BLOCK)), sqrt(ccp_work_part_sum(w, nc, MS_UU, CCP_BY_BLOCK)));
    out->residual = sqrt(ccp_work_part_sum(w, nc, MS_E2, CCP_BY_BLOCK)) / s;
    out->residual_coulomb = sqrt(ccp_work_part_sum(w, nc, MS_C2, CCP_BY_BLOCK)) / s;
    out->cone_violation = ccp_work_max_all(w, cone);
    out->dual_violation = ccp_work_max_all(w, dual);
    out->complementarity = ccp_work_max_all(w, comp);
    /* ½ γᵀNγ + rᵀγ = ½ γᵀ(u − r) + rᵀγ = ½ γᵀu + ½ rᵀγ */
    out->objective = 0.5 * ccp_work_part_sum(w, nc, MS_GU, CCP_BY_BLOCK) + 0.5 * ccp_work_part_sum(w, nc, MS_GR, CCP_BY_BLOCK);
    out->residual_velocity = sqrt(ccp_work_part_sum(w, nc, MS_VE2, CCP_BY_BLOCK)) /
                             ccp_residual_scale(rnorm, sqrt(ccp_work_part_sum(w, nc, MS_VGG, CCP_BY_BLOCK)),
                                                sqrt(ccp_work_part_sum(w, nc, MS_VUU, CCP_BY_BLOCK)));
    out->residual_feasibility = sqrt(ccp_work_part_sum(w, nc, MS_FE2, CCP_BY_BLOCK)) /
                                ccp_residual_scale(rnorm, sqrt(ccp_work_part_sum(w, nc, MS_FGG, CCP_BY_BLOCK)),
                                                   sqrt(ccp_work_part_sum(w, nc, MS_FUU, CCP_BY_BLOCK)));
    out->residual_block = part_max(w, nc, MS_BLOCK);
    out->residual_block_coulomb = part_max(w, nc, MS_BLOCK_C);
    if (ray) {
        ray->gg = ccp_work_part_sum(w, nc, MS_RGG, CCP_BY_BLOCK);
        ray->nn = ccp_work_part_sum(w, nc, MS_RNN, CCP_BY_BLOCK);
        ray->uu = ccp_work_part_sum(w, nc, MS_RUU, CCP_BY_BLOCK);
        ray->ug = ccp_work_part_sum(w, nc, MS_RUG, CCP_BY_BLOCK);
        ray->zero_block = part_max(w, nc, MS_RZERO) != 0.0;
    }
}

/* Step sizes η_a = rows / trace(N_aa); 0 for uncoupled blocks. */
/* Entry (i, k) of N for two rows of the same block (compliance excluded): see ccp_work.h. */
double ccp_work_block_entry(const ccp_work* w, int32_t i, int32_t k)
{
    double s = 0.0;
    const int32_t c = w->factor_form ? w->block_fc[ccp_work_row_block(w, i)] : -1;
    if (c >= 0 && w->block_fc[ccp_work_row_block(w, k)] == c) {
        s = frame_entry(w, c, i - w->fc_row[c], k - w->fc_row[c]);
    } else if (w->factor_form) {
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
    if (w->lr) { /* − G_iᵀ G_k, both columns' rows increasing */
        const dvi_csc* G = w->lr;
        int32_t a = G->colptr[i], b = G->colptr[k];
        const int32_t ae = G->colptr[i + 1], be = G->colptr[k + 1];
        while (a < ae && b < be) {
            if (G->rowind[a] < G->rowind[b]) a++;
            else if (G->rowind[a] > G->rowind[b]) b++;
            else s -= G->values[a++] * G->values[b++];
        }
    }
    return s;
}

void ccp_block_steps(const ccp_work* w, double* eta)
{
    for (int32_t b = 0; b < w->nblocks; b++) {
        int32_t r0 = w->block_row[b], k = w->block_row[b + 1] - r0;
        double bound = 0.0; /* Gershgorin bound on λmax(N_aa) */
        for (int32_t a = 0; a < k; a++) {
            double row = w->diag[r0 + a];
            for (int32_t c = 0; c < k; c++)
                if (c != a) row += fabs(ccp_work_block_entry(w, r0 + a, r0 + c));
            if (row > bound) bound = row;
        }
        eta[b] = bound > 0.0 ? 1.0 / bound : 0.0;
    }
}

double ccp_impulse_scale(const ccp_work* w, const double* eta)
{
    double scale = 0.0;
    for (int32_t b = 0; b < w->nblocks; b++) {
        double rn = 0.0;
        for (int32_t i = w->block_row[b]; i < w->block_row[b + 1]; i++) rn += w->p->r[i] * w->p->r[i];
        rn = eta[b] * sqrt(rn);
        if (rn > scale) scale = rn;
    }
    return ccp_work_max_all(w, scale);
}

/* ---- the iterations of a Gauss–Seidel solver (pgs.c, nsgs.c) ------------------------ */

#define DVI_GS_REFRESH 25 /* sweeps between recomputations of v from γ */

static double gs_residual(const ccp_work* w, const double* g, const double* u, bool coulomb, double tol)
{
    return coulomb ? ccp_work_residual_coulomb_checked(w, g, u, tol) : ccp_work_residual_checked(w, g, u, tol);
}

void ccp_gs_iterate(const ccp_work* w, const dvi_solver_settings* s, const double* eta, ccp_gs_sweep_fn sweep,
                    void* ctx, bool coulomb, const char* name, const char* knob, double* gamma,
                    dvi_solve_result* res)
{
    double* u = w->vec[0];
    double* v = w->bodyvec; /* factor form: v = M⁻¹ D γ */
    double* g = gamma;
    ccp_work_project(w, g);
    if (w->factor_form) ccp_work_minv_d(w, g, v);
    ccp_work_sweep_velocity(w, g, v, u);
    double rk = gs_residual(w, g, u, coulomb, s->tolerance);
    res->iterations = 0;
    res->target_residual = rk;
    if (rk <= s->tolerance) {
        res->status = DVI_SOLVE_CONVERGED;
        return;
    }
    const double scale = ccp_impulse_scale(w, eta);
    double gnorm_first = 0.0;
    res->status = DVI_SOLVE_MAX_ITERATIONS;
    int32_t it;
    for (it = 1; it <= s->max_iterations; it++) {
        sweep(w, ctx, g, v);
        if (w->factor_form && it % DVI_GS_REFRESH == 0) ccp_work_minv_d(w, g, v);
        ccp_work_sweep_velocity(w, g, v, u);
        rk = gs_residual(w, g, u, coulomb, s->tolerance);
        if (rk <= s->tolerance && w->factor_form && it % DVI_GS_REFRESH != 0) { /* confirm without drift */
            ccp_work_minv_d(w, g, v);
            ccp_work_sweep_velocity(w, g, v, u);
            rk = gs_residual(w, g, u, coulomb, s->tolerance);
        }
        ccp_history_push(w, res, rk);
        const double gnorm = ccp_work_norm2(w, g);
        if (it == 1) gnorm_first = gnorm;
        if (!isfinite(rk) || ccp_diverging(gnorm, gnorm_first, scale)) {
            res->status = DVI_SOLVE_DIVERGED;
            snprintf(res->message, sizeof res->message, "%s: |gamma| = %.3g at sweep %d (diverging; lower %s)", name,
                     gnorm, (int)it, knob);
            break;
        }
        if (rk <= s->tolerance) {
            res->status = DVI_SOLVE_CONVERGED;
            break;
        }
    }
    res->iterations = it > s->max_iterations ? s->max_iterations : it;
    res->target_residual = rk;
}

double ccp_gs_visit_bytes(const ccp_work* w)
{
    const double rows = (double)w->m * (8.0 * 3 + (w->p->compliance ? 8.0 : 0.0));
    double cols = w->factor_form ? (double)w->nruns * ((4.0 + 4.0 + 48.0 + 48.0) + (48.0 + 96.0)) + 4.0 * w->m
                                 : (double)w->wt_p[w->m] * (4.0 + 8.0 + 8.0) + 4.0 * w->m;
    const double real = w->fc_df ? 4.0 : 8.0; /* bytes of a frame's or an arm's number */
    for (int32_t c = 0; c < w->nfc; c++) { /* contacts given by frames: frame, arms and bodies twice, each body's v and M⁻¹ */
        const double nb = (w->fc_body[2 * (size_t)c] >= 0) + (w->fc_body[2 * (size_t)c + 1] >= 0);
        cols += 2.0 * (15.0 * real + 8.0 + 4.0 + 1.0) + nb * (48.0 + 96.0 + (w->rigid_minv ? 80.0 : 288.0));
    }
    return rows + cols;
}

double ccp_gs_check_bytes(const ccp_work* w)
{
    const double velocity =
        w->factor_form ? ccp_work_dt_bytes(w) + 32.0 * w->m : ccp_work_product_bytes(w) + 24.0 * w->m;
    return velocity + ccp_work_pass_bytes(w, 2, 0) + 8.0 * w->m;
}
