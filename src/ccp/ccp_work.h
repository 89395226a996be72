/* dvicontact — internal: the prepared CCP operator shared by every solver.
 *
 * Design note. A dvi_ccp_problem is borrowed caller data in one of two
 * operator forms. ccp_work_prepare() validates it and builds, once per solve,
 * the structures every solver needs, reusing memory from earlier solves:
 *
 *   factor form  N x = Dᵀ M⁻¹ D x + c∘x
 *       D is regrouped into "runs": the entries of one column that belong to
 *       one body, stored densely as 6 numbers (run_d), together with the
 *       6 numbers of M⁻¹ D for that run (run_md). A body-major copy of the
 *       runs (body_ptr, brun_col, brun_d) lets v = M⁻¹ D x be computed body
 *       by body over contiguous memory, and u = Dᵀ v column by column; both
 *       loops are free of write conflicts, so both run in parallel and give
 *       the same bits for any thread count.
 *       Contacts given by frames (dvi_ccp_frames) are stored compactly, one
 *       128-byte record each (frame, lever arms, bodies), and never expanded
 *       into columns: v = M⁻¹ J x takes, contact by contact, the force
 *       F_c = Σ_q x_q d_q, then body by body the sum of ±[F_c, ρ × F_c] of its
 *       contacts (an incidence list per body, in contact order); u takes
 *       d_q · (v_b + ω_b × ρ_b − v_a − ω_a × ρ_a) contact by contact. When every M⁻¹ block is that of a rigid body (1/m on the
 *       linear diagonal, no linear–angular coupling), it is applied as 1/m
 *       and a 3×3 block (80 bytes instead of 288).
 *   Delassus form  N x = W x + c∘x
 *       W's transpose is built (rows of W as columns), so y = W x is a
 *       gather over rows, parallel and deterministic; duplicates are summed.
 *
 * Every solver measures convergence with ccp_work_residual() (the CCP
 * natural-map residual) and every result's metrics come from
 * ccp_work_metrics() on a fresh product, so solvers are comparable.
 */
#ifndef DVI_CCP_WORK_H
#define DVI_CCP_WORK_H

#include "dvi/ccp.h"
#include "alloc.h"
#include "ccp_check.h"

#include <math.h>
#include <stdbool.h>

#define DVI_WORK_VECTORS 10 /* scratch m-vectors available to a solver */

/* The arrays of the work that may live in lent memory (dvi_solver_lend):
 * vec[0 … DVI_WORK_VECTORS), then these. */
enum ccp_work_placed {
    DVI_PLACE_DIAG = DVI_WORK_VECTORS,
    DVI_PLACE_FC_FORCE,
    DVI_PLACE_INC_ARM, /* inc_arm or inc_arm_f, whichever the frames' precision uses */
    DVI_PLACE_RUN_PTR,
    DVI_PLACE_BLOCK_MU,
    DVI_PLACE_INC,
    DVI_PLACE_FC_ROW,
    DVI_PLACE_BLOCK_FC,
    DVI_WORK_PLACED
};

/* Passes over the rows run on w->threads OpenMP threads above DVI_PAR_MIN
 * rows. Reductions (dot products, norms, residuals) are summed in fixed
 * chunks of DVI_CHUNK_BLOCKS blocks or DVI_CHUNK_ROWS rows: each chunk's
 * partial sum is formed in index order and the partial sums are added in
 * chunk order, so the bits do not depend on the thread count. */
#define DVI_PAR_MIN 4096
#define DVI_CHUNK_BLOCKS 512
#define DVI_CHUNK_ROWS 2048
#define DVI_PART_SLOTS 24 /* partial sums per chunk (ccp_work_metrics takes 19; whole cache lines) */



typedef struct ccp_work {
    const dvi_ccp_problem* p;
    int32_t m;          /* rows */
    int32_t nblocks;    /* blocks */
    int32_t nbody;      /* bodies (factor form), 0 otherwise */
    int32_t ndof;       /* 6 * nbody */
    int threads;        /* OpenMP threads for products (1 = serial) */
    bool factor_form;   /* true: D, M^-1; false: W */

    int32_t* block_row; /* [nblocks + 1] first row of each block */
    double* block_mu;   /* [nblocks] μ of a FRICTION block, −1 for any other kind: what APGD's
                         * passes read of the common block (8 bytes instead of its 32-byte record) */
    int32_t other_blocks; /* blocks that are not FRICTION */
    double rnorm;       /* ‖r‖ = ccp_work_norm2(r): the scale every residual takes */
    /* exact sums (settings.exact_sums, or a shared problem: dvi_ccp_shared):
     * every reduction takes chunks of one block, row or body and sums their
     * partial sums exactly (exact_sum.h) over the owned ones, then over the
     * processes; otherwise the chunks below */
    bool exact_req;     /* the driver's request (settings.exact_sums), read by ccp_work_prepare */
    bool exact;
    const dvi_ccp_shared* sh; /* the problem's, or NULL */
    int32_t chunk_blocks, chunk_rows, chunk_bodies; /* DVI_CHUNK_BLOCKS, DVI_CHUNK_ROWS, DVI_CHUNK_ROWS; 1 exact */
    uint8_t* row_own;   /* [m] with a shared block_own: 1 for the rows of owned blocks */
    size_t cap_row_own;
    int64_t m_all, nblocks_all; /* rows and blocks of the whole problem (owned ones summed over the processes) */
    double block_tol;   /* settings.block_tolerance (the driver sets it; ccp_work_prepare: 0, the
                         * stopping tests' tolerance then) */

    /* factor form, run layout (see the design note) */
    int32_t nruns;
    int32_t* run_ptr;   /* [m + 1] */
    int32_t* run_body;  /* [nruns] */
    int32_t* run_col;   /* [nruns] */
    double* run_d;      /* [6 nruns] */
    double* run_md;     /* [6 nruns] */
    int32_t* body_ptr;  /* [nbody + 1] */
    int32_t* brun_col;  /* [nruns] column of each run, body-major order */
    double* brun_d;     /* [6 nruns] run_d in body-major order */

    /* factor form: contacts given by frames (see the design note) */
    int32_t nfc;        /* contacts */
    const double* fc_d;    /* [9 nfc] n, t1, t2 of each: the problem's frames->frame (not copied) */
    const double* fc_arm;  /* [6 nfc] lever arms of bodies a and b: frames->arm */
    const float* fc_df;    /* the same in single precision (frames->frame_f, arm_f); */
    const float* fc_armf;  /* exactly one of the pairs is set (ccp_work.c reads either) */
    const int32_t* fc_body;/* [2 nfc] bodies a and b, or −1: frames->body */
    int32_t* fc_row;    /* [nfc] first row of each */
    int8_t* fc_rows;    /* [nfc] rows of each: 1, 3 or 6 */
    const double* fc_ell; /* [nfc] scale of the angular rows: frames->ell (not copied), or NULL: 1 */
    int32_t* block_fc;  /* [nblocks] contact of each block, −1 for blocks in D */
    int32_t* inc_ptr;   /* [nbody + 1] incidences of each body */
    int32_t* inc;       /* [2 nfc] 4·contact + 2·(6 rows) + side (0: a, 1: b), body-major, contact order */
    double* fc_force;   /* [3 nfc] scratch of a product: Σ_q x_q d_q (q < 3) of each contact */
    double* inc_arm;    /* [3 · 2 nfc] the lever arm of each incidence, in incidence order */
    float* inc_arm_f;   /* the same for single-precision frames (the arms as given) */
    int32_t ndrows;     /* rows given by D (or by nothing) */
    int32_t* drows;     /* [ndrows] */
    bool rigid_minv;    /* every M⁻¹ block is a rigid body's: minv10 holds them */
    double* minv10;     /* [10 nbody]: 1/m, then the angular 3×3 block row-major */
    const double* rigid10; /* with rigid_minv: minv10, or the problem's inv_mass_rigid (no copy) */

    /* Delassus form: transpose of W */
    int32_t* wt_p;      /* [m + 1] */
    int32_t* wt_i;      /* [nnz] */
    double* wt_x;       /* [nnz] */

    double* diag;       /* [m] diagonal of N (compliance included, the low-rank term taken off) */

    /* factor form with the problem's low-rank term G (k × m; N = DᵀM⁻¹D − GᵀG):
     * lr_v = G x of the x whose M⁻¹Dx was formed last (ccp_work_minv_d), kept
     * up to date by ccp_work_set_block; ccp_work_dt takes Gᵀ lr_v off */
    const dvi_csc* lr;  /* the problem's G, or NULL */
    double* lr_v;       /* [k] */
    size_t cap_lr;
    double* bodyvec;    /* [ndof] scratch for M^-1 D x */
    int32_t* cursor;    /* [max(m, nbody) + 1] scratch for counting sorts */
    double* vec[DVI_WORK_VECTORS]; /* scratch [m] vectors, for solvers: in lent memory or vec_own */
    /* the arrays a solve writes before it reads them (DVI_WORK_PLACED: the
     * vectors, then those of ccp_work_placed) live in memory lent by
     * dvi_solver_lend where it has room, else in own[] (NULL when lent) */
    void* own[DVI_WORK_PLACED];
    size_t own_bytes[DVI_WORK_PLACED];
    dvi_memory_block lent[DVI_SOLVER_LEND_MAX];
    size_t lent_at[DVI_SOLVER_LEND_MAX]; /* bytes of each block taken by this solve's arrays */
    int32_t lent_count;

    /* capacities (memory is kept and grown, never shrunk, between solves) */
    size_t cap_m, cap_blocks, cap_runs, cap_body, cap_nnz, cap_cursor, cap_fc;
    void* scratch;      /* solver-private persistent buffer, 64-byte aligned within scratch_raw */
    void* scratch_raw;
    /* where every array above comes from (the solver's settings.allocator);
     * ccp_work_free keeps it */
    dvi_allocator alloc;
    size_t scratch_cap;
    double* part;       /* [DVI_PART_SLOTS × chunks] partial sums of chunked reductions: slot k of
                         * chunk c at part[part_cs c + part_ss k] (CCP_PART) */
    size_t part_cs, part_ss; /* DVI_PART_SLOTS and 1; exact sums (chunks of one block): 1 and the
                              * chunks' capacity, so that a slot's partial sums are contiguous */
    /* N γ + r of the γ a solver returns, formed as ccp_work_apply then + r
     * (the driver's own order), when the solver holds it in one of
     * vec[0 … DVI_WORK_VECTORS − 2]; else NULL (ccp_work_prepare clears it).
     * The driver then takes it instead of forming the product again. */
    const double* u_final;
    /* N γ (compliance included, r not) of the warm start γ the driver has
     * projected and kept, in vec[DVI_WORK_VECTORS − 1]; else NULL
     * (ccp_work_prepare clears it). A solver may take γ as projected and
     * this product instead of forming them again; it must read it before
     * it writes that vector. */
    const double* guess_Ng;
    size_t cap_part;
    /* the friction pyramids of the last solve, when it replaced the cones by
     * them (lemke): their edges (0: the cones; ccp_work_prepare clears it)
     * and each block's turns, the friction pyramid's and the rolling one's
     * (rad; [2 nblocks], grown by ccp_work_reserve_turns): dvi_solver_pyramid */
    int32_t pyramid_edges;
    double* pyramid_turn;
    size_t cap_turn;
    /* the caller's buffer for the residual of each iteration
     * (dvi_solver_record_history); NULL: none */
    double* history;
    int32_t history_capacity;
} ccp_work;

/* The block of row i (0 ≤ i < m), by bisection of block_row. */
static inline int32_t ccp_work_row_block(const ccp_work* w, int32_t i)
{
    int32_t lo = 0, hi = w->nblocks; /* block_row[lo] ≤ i < block_row[hi] */
    while (hi - lo > 1) {
        const int32_t mid = lo + (hi - lo) / 2;
        if (w->block_row[mid] <= i)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* ℓ of contact c given by a frame: the scale of its spin and rolling rows. */
static inline double ccp_fc_ell(const ccp_work* w, int32_t c)
{
    return w->fc_ell ? w->fc_ell[c] : 1.0;
}

/* Threads for a pass over n rows: 1 below DVI_PAR_MIN. */
static inline int ccp_work_nt(const ccp_work* w, int32_t n)
{
    return n > DVI_PAR_MIN ? w->threads : 1;
}

/* The headers of a pass run on `nt` threads (a variable in scope, e.g.
 * ccp_work_nt), in parallel when nt > 1; without OpenMP nothing but nt
 * marked as used. Each thread takes one contiguous share of the pass (the
 * static schedule: on an idle machine 4-7 % faster than taking pieces
 * dynamically, which moved the rows between the cores' caches from one pass
 * to the next; a core shared with another process is the world step's
 * measured fallback to one thread, docs/performance.md). Which thread runs
 * a piece changes nothing in the bits: each piece writes its own outputs (a
 * chunk its own partial sums, summed in chunk order afterwards).
 * DVI_OMP_FOR_CHUNKS: a loop over chunk indices;
 * DVI_OMP_FOR_ROWS: a loop over rows or blocks. */
#ifdef _OPENMP
#define DVI_OMP_FOR_CHUNKS _Pragma("omp parallel for schedule(static) num_threads(nt) if (nt > 1)")
#define DVI_OMP_FOR_ROWS _Pragma("omp parallel for schedule(static) num_threads(nt) if (nt > 1)")
#else
#define DVI_OMP_FOR_CHUNKS (void)nt;
#define DVI_OMP_FOR_ROWS (void)nt;
#endif

/* The larger of a and b, NaN if either is (a residual that is NaN stays so). */
static inline double ccp_max_nan(double a, double b)
{
    return a != a || b <= a ? a : b;
}

/* A block's own scale in metrics.residual_block is at least this times
 * ‖r‖/√blocks, a typical block's share of ‖r‖: a block of almost nothing
 * is not asked for an error below 1e-10 of that at the default block
 * tolerance, 1e-4 (measured: docs/solvers.md). */
#define DVI_BLOCK_SCALE_FLOOR 1e-6

/* The same floor for Lemke's blocks on their pyramids: a pivoting
 * answer's error on a block of almost nothing is the LCP's tolerance on
 * the whole problem (in a box pyramid, |r| = 0.24, blocks without a normal
 * impulse keep 3e-8 of tangential impulse or slide at 2e-8 m/s), not a
 * block short of its answer (docs/solvers.md). Block b's floor is this
 * times the smaller of ‖r‖/√blocks and η_b ‖γ‖/√blocks
 * (ccp_work_block_pyramid), so that one row of a large r and no impulse
 * does not lift it over the small blocks beside it. */
#define DVI_BLOCK_SCALE_FLOOR_PIVOTING 1e-1

/* A block residual rb as a term of a stopping test at tolerance tol: 0
 * when rb is within block_tol (the test is then the global residuals', to
 * the bit), else rb tol / block_tol, above tol (NaN kept). block_tol not
 * set: tol. */
static inline double ccp_block_in_tol(const ccp_work* w, double rb, double tol)
{
    const double bt = w->block_tol > 0.0 ? w->block_tol : tol;
    return rb <= bt ? 0.0 : rb != rb ? rb : rb * (tol / bt);
}

/* The block tolerance a solve of nblocks blocks is judged by:
 * settings.block_tolerance, or when that is 0 (automatic) 100 √nblocks ×
 * tolerance within [1e-6, 0.1]: a block of typical scale (1/√nblocks of
 * the problem's) within the global tolerance has its own error at most
 * √nblocks × tolerance, so the test asks nothing more of blocks within a
 * factor 100 of the typical scale and catches the blocks whose smaller
 * scale the global residual hides. At least 1e-6: a
 * block at the scale floor (DVI_BLOCK_SCALE_FLOOR of a typical block's)
 * is then asked for 1e-12 of a typical block's scale, above the rounding
 * of the sums that form it; at most 0.1, so that no block 10 % off its
 * answer is converged. */
#define DVI_BLOCK_TOL_PIVOTING 1e-4 /* the automatic block tolerance's floor for Lemke's answers (driver.c) */
static inline double ccp_block_tolerance(const dvi_solver_settings* s, int32_t nblocks)
{
    if (s->block_tolerance > 0.0) return s->block_tolerance;
    const double t = 100.0 * sqrt((double)(nblocks > 1 ? nblocks : 1)) * s->tolerance;
    return t < 1e-6 ? 1e-6 : t < 0.1 ? t : 0.1;
}

/* Chunks of a block-chunked or row-chunked reduction. */
static inline int32_t ccp_block_chunks(const ccp_work* w)
{
    return (w->nblocks + w->chunk_blocks - 1) / w->chunk_blocks;
}
static inline int32_t ccp_row_chunks(int32_t n)
{
    return (n + DVI_CHUNK_ROWS - 1) / DVI_CHUNK_ROWS;
}

/* One past the last index of chunk c of `size` over n items. */
static inline int32_t ccp_chunk_end(int32_t c, int32_t size, int32_t n)
{
    return (c + 1) * size < n ? (c + 1) * size : n;
}

/* What the chunks of a reduction are chunks of (the owner mask they take). */
enum { CCP_BY_BLOCK, CCP_BY_ROW, CCP_BY_BODY };

/* The partial sum of slot k of chunk c in w->part. */
#define CCP_PART(w, c, k) ((w)->part[(w)->part_cs * (size_t)(c) + (w)->part_ss * (size_t)(k)])

/* Σ_c part[DVI_PART_SLOTS c + slot] in chunk order; exact sums: over the
 * owned chunks, exactly, then over the processes. */
double ccp_work_part_sum_exact(const ccp_work* w, int32_t chunks, int slot, int by);
static inline double ccp_work_part_sum(const ccp_work* w, int32_t chunks, int slot, int by)
{
    if (w->exact) return ccp_work_part_sum_exact(w, chunks, slot, by);
    double s = 0.0;
    for (int32_t c = 0; c < chunks; c++) s += CCP_PART(w, c, slot);
    return s;
}

/* The largest of x over the processes (x itself on one). */
double ccp_work_max_all(const ccp_work* w, double x);

/* ‖x‖ over the problem's m rows: ccp_norm2, or with exact sums the exact
 * sum over the owned rows and the processes. */
double ccp_work_norm2(const ccp_work* w, const double* x);

/* Σ x_i over the rows with x_i > 0 and finite, and their number (*count):
 * in row order, or with exact sums exactly over the owned rows and the
 * processes. */
double ccp_work_positive_sum(const ccp_work* w, const double* x, int64_t* count);

/* APGD's passes on friction blocks four at a time (src/ccp/apgd_groups.h):
 * −1 (the default) the fastest the machine runs, 0 the scalar passes only,
 * 1 the four-wide kernels for the baseline instruction set, 2 for AVX2
 * (the baseline's where the machine has none). For tests; set it before
 * solving. */
extern int ccp_apgd_group_mode;

/* A problem with its contacts given by frames turned into columns of D (for
 * the file writers, which write D): e->problem is p with e's own D and no
 * frames. A problem without frames is copied as it is. Validates p first. */
typedef struct ccp_expanded {
    dvi_ccp_problem problem;
    dvi_csc D;
    int32_t *colptr, *rowind;
    double* values;
} ccp_expanded;
dvi_status ccp_expand(const dvi_ccp_problem* p, ccp_expanded* e, char* msg, size_t msg_size);
void ccp_expanded_free(ccp_expanded* e);

/* The metrics of gamma (dvi_ccp_metrics) for p with u = W gamma + r for
 * another operator W (rows × rows, e.g. a nonsymmetric operator whose
 * symmetric part p holds); the cones and the block scales are p's. W NULL:
 * p's own operator, dvi_ccp_evaluate. Errors: NULL arguments or W of another
 * size (DVI_ERR_INVALID_ARG), those of ccp_work_prepare. */
dvi_status ccp_evaluate_with(const dvi_ccp_problem* p, const dvi_csc* W, const double* gamma,
                                 dvi_ccp_metrics* out);

/* Wall-clock seconds from a monotonic clock (src/ccp/driver.c). */
double ccp_seconds_now(void);

/* Grows pyramid_turn to 2 nblocks (false: out of memory). */
bool ccp_work_reserve_turns(ccp_work* w);

/* Frees everything a work holds and zeroes it. */
void ccp_work_free(ccp_work* w);

/* Validates p and builds the work for it (memory reused). On failure returns
 * DVI_ERR_INVALID_ARG / DVI_ERR_NOMEM with a message naming the place. */
dvi_status ccp_work_prepare(ccp_work* w, const dvi_ccp_problem* p, int threads, char* msg, size_t msg_size);

/* y = N x (compliance included). x and y must not alias. */
void ccp_work_apply(const ccp_work* w, const double* x, double* y);

/* Factor form only. v = M^-1 D x  (v has ndof entries). */
void ccp_work_minv_d(const ccp_work* w, const double* x, double* v);
/* Factor form only. v = M⁻¹ D x, and returns xᵀ Dᵀ M⁻¹ D x (= x · N x without
 * compliance), summed in fixed chunks of bodies. */
double ccp_work_minv_d_quad(const ccp_work* w, const double* x, double* v);
/* Factor form only. y = D^T v (no compliance). */
void ccp_work_dt(const ccp_work* w, const double* v, double* y);

/* Factor form, contact c given by a frame: out = J_c v (its rows), and
 * v += M⁻¹ J_cᵀ δ (δ: its rows). */
void ccp_work_frame_velocity(const ccp_work* w, int32_t c, const double* v, double* out);
/* Row q of contact c as the column of D it stands for: its 6-vectors on its
 * bodies (one body on both sides: summed), at most two; returns how many. */
int ccp_work_frame_columns(const ccp_work* w, int32_t c, int q, int32_t body[2], double j[2][6]);
/* Row q of contact c on side 0 (body a) or 1 (body b) as a 6-vector. */
void ccp_work_frame_row(const ccp_work* w, int32_t c, int q, int side, double* j);
void ccp_work_frame_update(const ccp_work* w, int32_t c, const double* delta, double* v);

/* ---- the pieces of a Gauss–Seidel sweep (pgs.c, nsgs.c) ---------------------
 * In the factor form the body velocities v = M⁻¹Dγ are kept up to date, so
 * that a block costs the entries of its own columns. Inline: they run once
 * per block visit. */

/* The low-rank term's share of block b's rows: ua[a] −= G_iᵀ lr_v. */
static inline void ccp_work_lr_block(const ccp_work* w, int32_t b, double* ua)
{
    const dvi_csc* G = w->lr;
    for (int32_t i = w->block_row[b], a = 0; i < w->block_row[b + 1]; i++, a++) {
        double s = 0.0;
        for (int32_t q = G->colptr[i]; q < G->colptr[i + 1]; q++) s += G->values[q] * w->lr_v[G->rowind[q]];
        ua[a] -= s;
    }
}

/* u_A of block b into ua[] (the other blocks at their latest values):
 * D_Aᵀ v + c∘γ_A + r_A in the factor form (− G_Aᵀ G γ with the low-rank
 * term), the rows of W in the Delassus form. */
static inline void ccp_work_block_velocity(const ccp_work* w, const double* g, const double* v, int32_t b,
                                           double* ua)
{
    const double* c = w->p->compliance;
    const double* r = w->p->r;
    const int32_t fc = w->factor_form ? w->block_fc[b] : -1;
    if (fc >= 0) { /* a contact given by its frame */
        double jv[6];
        ccp_work_frame_velocity(w, fc, v, jv);
        for (int32_t i = w->block_row[b], a = 0; i < w->block_row[b + 1]; i++, a++)
            ua[a] = r[i] + (c ? c[i] * g[i] : 0.0) + jv[a];
        if (w->lr) ccp_work_lr_block(w, b, ua);
        return;
    }
    for (int32_t i = w->block_row[b], a = 0; i < w->block_row[b + 1]; i++, a++) {
        double s = r[i] + (c ? c[i] * g[i] : 0.0);
        if (w->factor_form) {
            for (int32_t q = w->run_ptr[i]; q < w->run_ptr[i + 1]; q++) {
                const double* dd = w->run_d + 6 * (size_t)q;
                const double* vb = v + 6 * (size_t)w->run_body[q];
                s += dd[0] * vb[0] + dd[1] * vb[1] + dd[2] * vb[2] + dd[3] * vb[3] + dd[4] * vb[4] + dd[5] * vb[5];
            }
        } else {
            for (int32_t k = w->wt_p[i]; k < w->wt_p[i + 1]; k++) s += w->wt_x[k] * g[w->wt_i[k]];
        }
        ua[a] = s;
    }
    if (w->lr) ccp_work_lr_block(w, b, ua);
}

/* lr_v += G_i δ (row i of the problem changed by δ). */
static inline void ccp_work_lr_update(const ccp_work* w, int32_t i, double delta)
{
    const dvi_csc* G = w->lr;
    for (int32_t q = G->colptr[i]; q < G->colptr[i + 1]; q++) w->lr_v[G->rowind[q]] += G->values[q] * delta;
}

/* γ_A ← x (the block's k rows), and in the factor form v += M⁻¹D_A (x − γ_A). */
static inline void ccp_work_set_block(const ccp_work* w, int32_t b, const double* x, double* g, double* v)
{
    const int32_t r0 = w->block_row[b], k = w->block_row[b + 1] - r0;
    const int32_t fc = w->factor_form ? w->block_fc[b] : -1;
    if (fc >= 0) { /* a contact given by its frame */
        double delta[6];
        bool moved = false;
        for (int32_t a = 0; a < k; a++) {
            delta[a] = x[a] - g[r0 + a];
            moved = moved || delta[a] != 0.0;
            g[r0 + a] = x[a];
            if (w->lr && delta[a] != 0.0) ccp_work_lr_update(w, r0 + a, delta[a]);
        }
        if (moved) ccp_work_frame_update(w, fc, delta, v);
        return;
    }
    for (int32_t a = 0; a < k; a++) {
        const double delta = x[a] - g[r0 + a];
        g[r0 + a] = x[a];
        if (w->lr && delta != 0.0) ccp_work_lr_update(w, r0 + a, delta);
        if (w->factor_form && delta != 0.0) {
            const int32_t i = r0 + a;
            for (int32_t q = w->run_ptr[i]; q < w->run_ptr[i + 1]; q++) {
                const double* md = w->run_md + 6 * (size_t)q;
                double* vb = v + 6 * (size_t)w->run_body[q];
                for (int cc = 0; cc < 6; cc++) vb[cc] += md[cc] * delta;
            }
        }
    }
}

/* u = N γ + r from the maintained v (factor form) or a product (Delassus). */
static inline void ccp_work_sweep_velocity(const ccp_work* w, const double* g, const double* v, double* u)
{
    const double* r = w->p->r;
    const double* c = w->p->compliance;
    if (w->factor_form) {
        ccp_work_dt(w, v, u);
        for (int32_t i = 0; i < w->m; i++) u[i] += r[i] + (c ? c[i] * g[i] : 0.0);
    } else {
        ccp_work_apply(w, g, u);
        for (int32_t i = 0; i < w->m; i++) u[i] += r[i];
    }
}

/* One sweep of a Gauss–Seidel solver over the blocks (γ and, in the factor
 * form, v = M⁻¹Dγ kept up to date; ctx: the solver's own state). */
typedef void (*ccp_gs_sweep_fn)(const ccp_work* w, void* ctx, double* g, double* v);

/* The iterations PGS and NSGS share: γ projected, then sweeps until the
 * residual (the CCP's, checked, or with coulomb Coulomb's) after a sweep is
 * ≤ tolerance — confirmed on v recomputed from γ, which is also recomputed
 * every 25 sweeps against drift — the budget is spent, or ‖γ‖ diverges
 * (ccp_diverging, scale from eta). Fills iterations, status, target_residual,
 * history and, on divergence, the message ("NAME: … lower KNOB"). */
void ccp_gs_iterate(const ccp_work* w, const dvi_solver_settings* s, const double* eta, ccp_gs_sweep_fn sweep,
                    void* ctx, bool coulomb, const char* name, const char* knob, double* gamma,
                    dvi_solve_result* res);

/* Memory traffic of a sweep's visits, per visit of every block, beyond the
 * blocks' own data: its rows of γ, r (c), u and the reads of its columns
 * and, in the factor form, the update of v; and of what follows a sweep:
 * the full velocity, the residual and ‖γ‖ (ccp_gs_check_bytes). */
double ccp_gs_visit_bytes(const ccp_work* w);
double ccp_gs_check_bytes(const ccp_work* w);

/* Per-block steps η_a = 1 / (Gershgorin bound of λmax(N_aa)), 0 for a block
 * coupled to nothing: with ω < 2 every block update of PGS then decreases
 * the objective. For an isotropic block this is the Tasora–Anitescu step
 * |a| / trace(N_aa). nblocks entries. */
void ccp_block_steps(const ccp_work* w, double* eta);

/* N_ik for rows i, k that share bodies (e.g. rows of one block), without
 * compliance; cost O(runs of i × runs of k). */
double ccp_work_block_entry(const ccp_work* w, int32_t i, int32_t k);

/* ---- memory traffic (dvi_solve_result.bytes_per_iteration) ----
 * Bytes read plus written, counted per element a pass touches: arrays a
 * pass streams once each, and one entry of a gathered vector per access
 * (no credit for caches), so the figures are what a pass moves when its
 * working set does not fit in cache (docs/performance.md). */

/* One ccp_work_apply (compliance included). */
double ccp_work_product_bytes(const ccp_work* w);
/* v = M⁻¹ D x alone, and D^T v alone (factor form; 0 otherwise). */
double ccp_work_minv_d_bytes(const ccp_work* w);
double ccp_work_dt_bytes(const ccp_work* w);
/* A block-by-block pass that reads `vin` and writes `vout` m-vectors
 * (block layout and kinds included). */
double ccp_work_pass_bytes(const ccp_work* w, int vin, int vout);
/* The same for a pass that reads w->block_mu, and the block record only of
 * the blocks that are not FRICTION. */
double ccp_work_mu_pass_bytes(const ccp_work* w, int vin, int vout);

/* x <- Π_K(x), block by block. */
void ccp_work_project(const ccp_work* w, double* x);

/* CCP residual of gamma given u = N gamma + r (see ccp.h). */
double ccp_work_residual(const ccp_work* w, const double* gamma, const double* u);

/* The mean of block b's diagonal of N: the velocity a unit impulse gives the
 * block (η_b of the velocity residual and of the infeasibility test). */
static inline double ccp_block_eta(const ccp_work* w, int32_t b)
{
    const int32_t r0 = w->block_row[b], k = w->block_row[b + 1] - r0;
    double eta = 0.0;
    for (int32_t a = 0; a < k; a++) eta += w->diag[r0 + a];
    return eta / k;
}

/* The velocity residual (ccp.h): the natural map of block a taken on
 * (η_a γ_a, u_a), η_a the mean of the block's diagonal of N, so that both
 * sides are velocities, over max(‖r‖, ‖u‖, ‖Nγ‖). Zero at the same γ as
 * the CCP residual (cones are invariant under positive scaling); unlike it,
 * it does not call an impulse of twice its right size "converged" when the
 * impulses are tiny beside the velocities (bodies of 1e-11 kg), and its
 * scale does not grow with impulses that move nothing (‖Nγ‖, not ‖γ‖), so
 * γ running away along a null direction of N cannot shrink it. */
double ccp_work_residual_velocity(const ccp_work* w, const double* gamma, const double* u);

/* The shift of De Saxcé's change of variable for a friction block's
 * velocity ua: μ‖u_t‖, plus μ_spin|u_s| + μ_roll‖u_r‖ on a
 * FRICTION_ROLLING block (ũ_n = u_n + this; ccp.h). */
static inline double ccp_desaxce_shift(const dvi_ccp_block* B, const double* ua)
{
    double s = B->mu * sqrt(ua[1] * ua[1] + ua[2] * ua[2]);
    if (B->kind == DVI_BLOCK_FRICTION_ROLLING)
        s += B->mu_spin * fabs(ua[3]) + B->mu_roll * sqrt(ua[4] * ua[4] + ua[5] * ua[5]);
    return s;
}

/* The Coulomb residual of gamma given u = N gamma + r (metrics.residual_coulomb,
 * the same bits): the solvers of Coulomb's law stop on it. */
double ccp_work_residual_coulomb(const ccp_work* w, const double* gamma, const double* u);

/* The feasibility residual (metrics.residual_feasibility, the same bits):
 * in velocities, the rows on which every law agrees (ccp.h). */
double ccp_work_residual_feasibility(const ccp_work* w, const double* gamma, const double* u);

/* The Coulomb solvers' stopping test: ccp_work_residual_coulomb, and when
 * that is at most tol also ccp_work_residual_feasibility and every block's
 * own Coulomb residual (metrics.residual_block_coulomb), in one more pass;
 * the largest of those computed. */
double ccp_work_residual_coulomb_checked(const ccp_work* w, const double* gamma, const double* u, double tol);

/* Lemke's block residual: metrics.residual_block with each FRICTION
 * block's cone replaced by its pyramid (w->pyramid_edges edges, turned by
 * w->pyramid_turn), u = N gamma + r. FRICTION_ROLLING blocks are left to
 * the LCP's own residual (0 here). Serial, O(blocks · edges). */
double ccp_work_block_pyramid(const ccp_work* w, const double* gamma, const double* u);

/* The stopping test's residual: ccp_work_residual, and when that is at most
 * tol also ccp_work_residual_velocity and every block's own CCP residual
 * (metrics.residual_block), in one more pass; the largest of those
 * computed. Every CCP solver stops on it. */
double ccp_work_residual_checked(const ccp_work* w, const double* gamma, const double* u, double tol);

/* The same residual, with the same bits, given Ng = N gamma (u = Ng + r
 * formed on the fly) and rnorm = ccp_norm2(r). */
double ccp_work_residual_n(const ccp_work* w, const double* gamma, const double* Ng, double rnorm);

/* x·y over the problem's m rows, chunked (DVI_CHUNK_ROWS) and parallel. */
double ccp_work_dot(const ccp_work* w, const double* x, const double* y);

/* The normalisation of every residual: max(‖r‖, ‖γ‖, ‖u‖), or 1 below 1e-300. */
double ccp_residual_scale(double rnorm, double gnorm, double unorm);

/* The sums of the driver's test for a problem with no solution (driver.c), each block scaled by η_b (ccp_block_eta; blocks with η_b ≤ 0
 * left out): ‖η^½ γ‖², ‖η^-½ (u − r)‖², ‖η^-½ u‖², uᵀγ; and whether a block
 * has η_b = 0 (nothing moves it). */
typedef struct ccp_ray_sums {
    double gg, nn, uu, ug;
    bool zero_block;
} ccp_ray_sums;

/* All metrics of gamma given u = N gamma + r, in one parallel pass; with ray
 * (may be NULL) also the sums of the infeasibility test. */
void ccp_work_metrics(const ccp_work* w, const double* gamma, const double* u, dvi_ccp_metrics* out,
                      ccp_ray_sums* ray);

/* Eigen-decomposition of the symmetric n×n A (row-major; overwritten):
 * eigenvalues into d (unordered), eigenvectors as the columns of V (n×n,
 * row-major), work: 2n doubles. Householder tridiagonalisation and implicit
 * QL (src/ccp/symeig.c). Returns 0, or −1 if an eigenvalue took more than 60
 * QL steps (not seen on finite input). */
int ccp_sym_eigen(double* A, double* V, double* d, double* work, int32_t n);

/* Small dense kernels (src/ccp/dense.c): a fixed order of operations, no
 * threads, no allocation, the same bits on every CPU. LU: column-major n×n,
 * ipiv 0-based; returns 0 or 1 + the first column with a zero pivot. */
double ccp_dense_dot(const double* a, const double* x, int32_t n);
double ccp_dense_dot_abs(const double* a, const double* x, int32_t n, double* abs_sum);
void ccp_dense_gemv(int32_t m, int32_t n, const double* A, size_t lda, const double* x, double beta, double* y);
void ccp_dense_gemv_t(int32_t m, int32_t n, double alpha, const double* A, size_t lda, const double* x, double* y);
int32_t ccp_dense_lu(int32_t n, double* a, int32_t* ipiv);
void ccp_dense_lu_solve(int32_t n, const double* lu, const int32_t* ipiv, bool trans, double* b);
int32_t ccp_dense_lu_inverse(int32_t n, double* a, const int32_t* ipiv, double* work);

/* A persistent solver-private buffer of at least `bytes` bytes (grown as
 * needed, 64-byte aligned, content not preserved on growth), or NULL. */
void* ccp_work_scratch(ccp_work* w, size_t bytes);

/* Euclidean norm and dot product, serial and in index order (deterministic). */
double ccp_norm2(const double* x, int32_t n);
double ccp_dot(const double* x, const double* y, int32_t n);

/* ---- one-block cone operations (src/ccp/cone.c) ---- */

/* Projection onto the friction cone {‖t‖ ≤ μ n} of x = (n, t1, t2) (closed
 * form; src/ccp/cone.c explains every set). Inline: the solvers' passes call
 * it for every block of every iteration. */
static inline void ccp_project_friction(double mu, double* x)
{
    double n = x[0], t1 = x[1], t2 = x[2];
    if (mu <= 0.0) {
        x[0] = n > 0.0 ? n : 0.0;
        x[1] = 0.0;
        x[2] = 0.0;
        return;
    }
    const double t2sq = t1 * t1 + t2 * t2;
    if (n >= 0.0) {
        if (t2sq <= (mu * n) * (mu * n)) return; /* inside the cone (no square root) */
    } else if ((mu * mu) * t2sq <= n * n) { /* inside the polar cone, μ‖t‖ ≤ −n (no square root) */
        x[0] = x[1] = x[2] = 0.0;
        return;
    }
    double tn = sqrt(t2sq);
    double np = (mu * tn + n) / (mu * mu + 1.0); /* onto the surface */
    double s = mu * np / tn;
    x[0] = np;
    x[1] = t1 * s;
    x[2] = t2 * s;
}

/* Projection onto the rolling block's set (src/ccp/cone.c): a test for
 * points well inside, then the walk over the breakpoints; the walk alone
 * gives the same bits (tests/test_cone.c). */
void ccp_project_rolling(double mu, double mu_s, double mu_r, double* x);
void ccp_project_rolling_walk(double mu, double mu_s, double mu_r, double* x);

/* x <- Π_K(x) for one block of the given kind (x points at its first row). */
static inline void ccp_cone_project(const dvi_ccp_block* b, double* x)
{
    switch (b->kind) {
    case DVI_BLOCK_BILATERAL:
        return;
    case DVI_BLOCK_FRICTIONLESS:
        if (!(x[0] > 0.0)) x[0] = 0.0;
        return;
    case DVI_BLOCK_FRICTION:
        ccp_project_friction(b->mu, x);
        return;
    case DVI_BLOCK_FRICTION_ROLLING:
        ccp_project_rolling(b->mu, b->mu_spin, b->mu_roll, x);
        return;
    }
}

/* ‖γ_a − Π_K(γ_a − v_a)‖² for one block of k rows: one block's share of
 * the natural-map residual (e² in ccp.h). */
static inline double ccp_natural_map2(const dvi_ccp_block* b, const double* ga, const double* va, int32_t k)
{
    double x[6] = {0, 0, 0, 0, 0, 0}, e2 = 0.0;
    for (int32_t i = 0; i < k; i++) x[i] = ga[i] - va[i];
    ccp_cone_project(b, x);
    for (int32_t i = 0; i < k; i++) e2 += (ga[i] - x[i]) * (ga[i] - x[i]);
    return e2;
}

/* A natural scale of the impulses: max_a η_a ‖r_a‖ (the size of one step
 * from zero), used by the divergence tests of the iterative solvers. */
double ccp_impulse_scale(const ccp_work* w, const double* eta);

/* Divergence test of the iterative solvers. The residual is scale-free and
 * stays bounded while iterates run away, so the test looks at ‖γ‖: non-finite,
 * or 1e10 times larger than both the natural scale and ‖γ‖ after the first
 * iteration. */
static inline bool ccp_diverging(double gnorm, double gnorm_first, double scale)
{
    double ref = gnorm_first > scale ? gnorm_first : scale;
    return !isfinite(gnorm) || gnorm > 1e10 * (ref > 1e-300 ? ref : 1e-300);
}

/* ---- solver plug-in interface ---- */

/* A solver fills res->status, iterations, target_residual, history and,
 * on trouble, message; the driver then times it, recomputes the metrics on a
 * fresh product and never reports "converged" for a CCP-targeting solver
 * whose fresh residual exceeds the tolerance. Return < 0 only for errors
 * (memory, a problem the method cannot take), with res->message set.
 *
 * A row of the registry (src/ccp/registry.c) is one of these, defined in
 * the solver's own file: everything the layers above ask of a solver is a
 * field here, read through the public queries of ccp.h (dvi_solver_law,
 * dvi_solver_supports, dvi_solver_law_with, dvi_solver_sweeps_in_order,
 * dvi_solver_law_setting), never its name. A row names its fields
 * (.name = …), the solver's identity on its first line (name, solve, law,
 * targets_ccp), then the summary, then the others that are not zero (false,
 * NULL: left out). */
typedef struct ccp_solver_impl ccp_solver_impl;

/* What the driver hands a solve besides the work and the settings. */
typedef struct ccp_solver_call {
    void* state;                  /* the solver's own state (its create), or NULL */
    const ccp_solver_impl* inner; /* the row its settings name (its inner_name), or NULL */
} ccp_solver_call;

struct ccp_solver_impl {
    const char* name;    /* registry key, lower case */
    const char* summary; /* one line */
    bool targets_ccp;    /* false: the solver targets another problem (Lemke: pyramid LCP; Coulomb's law) */
    dvi_status (*solve)(ccp_work* w, const ccp_solver_call* call, const dvi_solver_settings* s, double* gamma,
                        dvi_solve_result* res);
    dvi_friction_law law; /* the law of its answers with default settings (0: the CCP) */
    const char* law_setting; /* the setting that makes it solve the other law ("lemke.coulomb"), or NULL */
    uint32_t refused_kinds;  /* block kinds it refuses (bits 1 << dvi_block_kind): the driver refuses
                              * a problem holding one before the solve (dvi_solver_supports) */
    bool sweeps_in_order; /* updates the blocks one after another, each from the latest values of the
                           * others (Gauss–Seidel: pgs, nsgs), so that the order of the rows matters */
    bool shared;          /* takes a problem split over processes (dvi_ccp_shared): every sum and product
                           * goes through the work's reductions and products */
    bool nests;           /* may be the inner CCP solver of another (settings.desaxce.inner): targets the
                           * CCP and has no state (create NULL) */
    /* with law_setting: the law these settings pick; NULL: law */
    dvi_friction_law (*law_under)(const dvi_solver_settings* s);
    /* the solver it calls, named by its settings (a row with nests; the
     * driver checks it and hands it over as call->inner), or NULL */
    const char* (*inner_name)(const dvi_solver_settings* s);
    /* its own state, from the solver's allocator: made by dvi_solver_create,
     * freed by dvi_solver_destroy (both NULL: none). create returns
     * DVI_ERR_NOMEM or DVI_OK. */
    dvi_status (*create)(const dvi_allocator* a, void** state);
    void (*destroy)(const dvi_allocator* a, void* state);
};

/* The built-in solver called `name`, or NULL; row `index` of the table,
 * or NULL (src/ccp/registry.c). */
const ccp_solver_impl* ccp_solver_find(const char* name);
const ccp_solver_impl* ccp_solver_row(int32_t index);


/* Appends one residual to the caller's history buffer (dvi_solver_record_history)
 * if there is room, counting it in res->history_length. */
static inline void ccp_history_push(const ccp_work* w, dvi_solve_result* res, double value)
{
    if (w->history && res->history_length < w->history_capacity) w->history[res->history_length++] = value;
}

#endif /* DVI_CCP_WORK_H */
