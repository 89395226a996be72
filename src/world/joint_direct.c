/* dvicontact — the joint rows of a DVI step eliminated by a sparse
 * factorisation, the contacts solved on their Schur complement
 * (docs/world.md, "Joint rows solved directly").
 *
 * The step's CCP, rows ordered joints (B) first, then contacts (C):
 *     [N_BB N_BC] [γ_B]   [r_B]   [0  ]
 *     [N_CB N_CC] [γ_C] + [r_C] = [u_C],   γ_C ∈ K, u_C ∈ K*, ⟨γ_C, u_C⟩ = 0,
 * N = Dᵀ M⁻¹ D (+ the compliance of damped motors on N_BB's diagonal).
 * The bilateral rows have no cone, so γ_B = −N_BB⁻¹ (r_B + N_BC γ_C), and
 * the contacts solve the CCP of the Schur complement
 *     S = N_CC − N_CB N_BB⁻¹ N_BC,   r_S = r_C − N_CB N_BB⁻¹ r_B,
 * which is again symmetric positive semidefinite; the world's solver gets it
 * in the W form (dense, both triangles), so every solver works on it
 * unchanged.
 *
 * N_BB = Pᵀ L Lᵀ P. P is an AMD ordering (CHOLMOD's cholmod_amd) of N_BB's
 * pattern, which only the joints' dynamic bodies decide: it is computed,
 * with the elimination tree and L's pattern, when the joint rows' bodies
 * change (a joint added), and each step refactors the numbers into the
 * same pattern (an up-looking Cholesky, CSparse's cs_chol, in a fixed
 * order: the bits do not depend on threads). With triangular solves by L,
 *     Z = L⁻¹ P N_BC,   y = L⁻¹ P r_B,   S = N_CC − Zᵀ Z,   r_S = r_C − Zᵀ y,
 *     γ_B = −Pᵀ L⁻ᵀ (y + Z γ_C).
 *
 * Redundant and nearly singular rows. A pivot at or below
 * DVI_JOINT_PIVOT_DROP (1e-10) times its row's diagonal of N_BB is
 * redundant to rounding (a mechanism's closed loop: the rover's
 * differential at rest, a body on two identical hinges, the dense path's
 * rule, wld_step_joint_direct): its row is dropped (counted in the step's
 * joint_rows_dropped), its column of L is zero and its impulse 0; the
 * other rows carry the whole reaction and the dropped row holds as far as
 * they imply it, exactly when it is exactly redundant. Bodies move as with
 * any other split of a redundant reaction (Lemke's pseudo-inverse gives the
 * least-norm split, APGD and PGS whatever their iterations leave).
 * A pivot above that but below both DVI_JOINT_PIVOT_FLOOR (1e-7) times
 * N_BB's largest diagonal and DVI_JOINT_PIVOT_REL (1e-2) times its own is
 * nearly singular. It is raised to the smaller of the two (L Lᵀ = N_BB + E,
 * E diagonal on those rows, counted in joint_rows_regularised) and the
 * solve refines against N_BB (refine: y += (L Lᵀ)⁻¹ (b − N_BB y), at most
 * DVI_JOINT_REFINE_STEPS steps, to the solver's tolerance and at most
 * DVI_JOINT_REFINE_TARGET): an independent row converges, however ill
 * conditioned. The 1,000-link revolute chain has one such row (its pivot
 * keeps 1.1e-9 of its diagonal), which was dropped although an open chain
 * has no redundant row; kept, the residual is 6.5e-15 with no refinement
 * step.
 * The rows are kept only when they are consistent: at the factorisation,
 * N_BB γ_B = −r_B (the contacts' impulses are not known yet) must meet the
 * target after the refinement; else the step refactors from the first
 * raised pivot with its nearly singular rows dropped. That is the rover's
 * differential with revolute link ends: one direction of the loop has an
 * eigenvalue of 2.2e-8 λ_max θ² when the rockers turn by θ
 * (docs/rover.md), redundant to first order and not to second, and from
 * the front wheel's climb on (9.18 s) r_B has a part along it that would
 * take an impulse growing as 1/λ. Enforcing that direction changes the
 * rover (measured over the 160 s crossing): solved outright (a conjugate
 * gradient on N_BB) the rover is thrown at 9.23 s (the energy 14 times
 * its scale; an earlier floor of 1e-9 threw it at 111 m/s); refined 8
 * steps the loop stiffens and the front wheel stalls 16 mm up the
 * obstacle; raised and not refined, the front wheel's peak load is 2.48
 * instead of 2.01 times static and the middle event 5.5 % of the crossing
 * late. Dropping the rows alone left that part on the dropped row, whose
 * constraint then drifted: rocker_difflink_R opened by 1e-3 of its size at
 * 18.7 s (the health monitor's `joint` warning) and the joints by 1.2 mm
 * at most. So the dropped rows' nearly null directions V (near_vectors:
 * v_k = 1 on the dropped row k, L's leading rows solving the rest) are
 * taken out of r_B (project_near; the first DVI_JOINT_NEAR_MAX of them):
 * the rows solve r_B − V (VᵀV)⁻¹ Vᵀ r_B, which they meet, and the residual
 * left is r_B's part along V, spread over the loop's rows as Lemke's
 * pseudo-inverse leaves it. The joints stay
 * within 0.104 mm through the crossing (Lemke on every row: 0.105 mm), the
 * events come within 0.02 % of the crossing of the rows-dropped run (and of
 * Lemke's), and the joint residual is at most 0.053 (median 1.0e-3) on the
 * 57 % of steps from the climb on: that part of r_B, not a convergence
 * failure.
 * The floor and the share of the row's own diagonal: a light part (a 1 g
 * sensor on a fixed joint, N_BB's largest diagonal 2.5e9) puts the floor
 * above a 1 kg wheel's whole revolute, motor included (diagonals 1 to
 * 200); its pivots keep their whole diagonals, so nothing is raised or
 * dropped and the wheel turns at its motor's 10 rad/s.
 *
 * The state (w->jf, wld_joint_factor in world_internal.h) is this file's
 * alone: the symbolic part (sym, CSparse's css: ordering, patterns) kept
 * across steps, the numeric part (num, csn: L's values, Z, S) refreshed
 * each step, and the DEM step's dense solve (dense, wld_step_joint_direct
 * at the end of this file). Created on the first direct step, grow-only.
 */
#include "world_internal.h"

#include "math3.h"

#include <cholmod.h>
#include <math.h>
#include <string.h>

/* Grows array `field` of part p (sy, nu or de: the parts of w->jf) to n
 * elements in the world's allocator; false when out of memory. */
#define JD_RESERVE(w, p, field, n) \
    wld_reserve(&(w)->alloc, (void**)&(p)->field, &(p)->field##_cap, (size_t)(n), sizeof *(p)->field)

/* Creates w->jf, empty, on the first direct step; false when out of memory. */
static bool factor_create(dvi_world* w)
{
    if (!w->jf) w->jf = base_mem_calloc(&w->alloc, 1, sizeof *w->jf);
    return w->jf != NULL;
}

void wld_joint_direct_free(dvi_world* w)
{
    wld_joint_factor* f = w->jf;
    if (!f) return;
    const dvi_allocator* a = &w->alloc;
#define FREE_SYM(field) base_mem_free(a, f->sym.field);
#define FREE_NUM(field) base_mem_free(a, f->num.field);
#define FREE_DENSE(field) base_mem_free(a, f->dense.field);
    DVI_JD_SYMBOLIC_ARRAYS(FREE_SYM)
    DVI_JD_NUMERIC_ARRAYS(FREE_NUM)
    DVI_JD_DENSE_ARRAYS(FREE_DENSE)
#undef FREE_SYM
#undef FREE_NUM
#undef FREE_DENSE
    base_mem_free(a, f);
    w->jf = NULL;
}

/* The dynamic bodies of joint row j: (first, second), −1 when none. */
static void row_bodies(const dvi_world* w, int32_t j, int32_t* b0, int32_t* b1)
{
    const int32_t p0 = w->colptr[j], p1 = w->colptr[j + 1];
    *b0 = p1 > p0 ? w->rowind[p0] / 6 : -1;
    *b1 = p1 - p0 > 6 ? w->rowind[p0 + 6] / 6 : -1;
}

/* Whether the analysis matches rows 0 … n−1 of this step. */
static bool analysis_current(const dvi_world* w, int32_t n, int32_t ndyn)
{
    const wld_jd_symbolic* sy = &w->jf->sym;
    if (!sy->valid || sy->n != n || sy->ndyn != ndyn) return false;
    for (int32_t j = 0; j < n; j++) {
        int32_t b0, b1;
        row_bodies(w, j, &b0, &b1);
        if (sy->key[2 * (size_t)j] != b0 || sy->key[2 * (size_t)j + 1] != b1) return false;
    }
    return true;
}

/* The nonzero pattern of row k of L (CSparse's cs_ereach): the rows i < k
 * reached from C's column k up the elimination tree, in topological order
 * in s[top … n−1]; returns top. mark: [n], stamped with k. */
static int32_t ereach(const int32_t* Cp, const int32_t* Ci, int32_t k, const int32_t* parent, int32_t* s,
                      int32_t* mark, int32_t n)
{
    int32_t top = n;
    mark[k] = k;
    for (int32_t p = Cp[k]; p < Cp[k + 1]; p++) {
        int32_t i = Ci[p];
        if (i > k) continue;
        int32_t len = 0;
        for (; mark[i] != k; i = parent[i]) {
            s[len++] = i;
            mark[i] = k;
        }
        while (len > 0) s[--top] = s[--len];
    }
    return top;
}

/* The symbolic analysis of N_BB for joint rows 0 … n−1: the rows of each
 * dynamic body, the ordering, C = P N_BB Pᵀ's upper pattern, the map from
 * each pair of rows sharing a body to its entry of C, the elimination tree
 * and L's pattern. Returns DVI_OK, DVI_ERR_NOMEM, or DVI_ERR_NUMERIC when
 * the ordering fails. */
static dvi_status analyse(dvi_world* w, int32_t n, int32_t ndyn)
{
    wld_jd_symbolic* sy = &w->jf->sym;
    wld_jd_numeric* nu = &w->jf->num;
    sy->valid = false;
    const int32_t nnzd = w->colptr[n];
    const size_t nent = (size_t)nnzd / 6; /* (row, body) entries */
    if (!JD_RESERVE(w, sy, key, 2 * (size_t)n + 2) || !JD_RESERVE(w, sy, perm, (size_t)n + 1) ||
        !JD_RESERVE(w, sy, pinv, (size_t)n + 1) || !JD_RESERVE(w, sy, bptr, (size_t)ndyn + 2) ||
        !JD_RESERVE(w, sy, bcol, nent + 1) || !JD_RESERVE(w, sy, bent, nent + 1) ||
        !JD_RESERVE(w, sy, mark, (size_t)n + 1) || !JD_RESERVE(w, sy, stack, (size_t)n + 1) ||
        !JD_RESERVE(w, sy, cp, (size_t)n + 2) || !JD_RESERVE(w, sy, parent, (size_t)n + 1) ||
        !JD_RESERVE(w, sy, cdiag, (size_t)n + 1) || !JD_RESERVE(w, nu, next, (size_t)n + 1) ||
        !JD_RESERVE(w, sy, lp, (size_t)n + 2) || !JD_RESERVE(w, sy, rp, (size_t)n + 2) ||
        !JD_RESERVE(w, nu, x, (size_t)n + 1) || !JD_RESERVE(w, nu, dinv, (size_t)n + 1))
        return DVI_ERR_NOMEM;
    for (int32_t j = 0; j < n; j++) row_bodies(w, j, &sy->key[2 * (size_t)j], &sy->key[2 * (size_t)j + 1]);
    /* the rows on each body, in row order */
    int32_t* bptr = sy->bptr;
    memset(bptr, 0, ((size_t)ndyn + 2) * sizeof *bptr);
    for (int32_t j = 0; j < n; j++)
        for (int32_t k = w->colptr[j]; k < w->colptr[j + 1]; k += 6) bptr[w->rowind[k] / 6 + 1]++;
    for (int32_t b = 0; b < ndyn; b++) bptr[b + 1] += bptr[b];
    for (int32_t j = 0; j < n; j++)
        for (int32_t k = w->colptr[j]; k < w->colptr[j + 1]; k += 6) {
            const int32_t b = w->rowind[k] / 6;
            sy->bcol[bptr[b]] = j;
            sy->bent[bptr[b]] = k;
            bptr[b]++;
        }
    for (int32_t b = ndyn; b > 0; b--) bptr[b] = bptr[b - 1];
    bptr[0] = 0;
    /* the upper pattern of N_BB in the rows' order (for the ordering), then
     * of C: column j holds the rows i ≤ j that share a body with j */
    int32_t* mark = sy->mark;
    for (int32_t i = 0; i < n; i++) mark[i] = -1;
    size_t nza = 0;
    for (int pass = 0; pass < 2; pass++) {
        nza = 0;
        for (int32_t j = 0; j < n; j++) {
            if (pass) sy->cp[j] = (int32_t)nza;
            /* the diagonal first, so that every column has it (a row
             * always has a dynamic body: dvi_joint_create checks it) */
            mark[j] = j + pass * n;
            if (pass) sy->ci[nza] = j;
            nza++;
            for (int32_t k = w->colptr[j]; k < w->colptr[j + 1]; k += 6) {
                const int32_t b = w->rowind[k] / 6;
                for (int32_t x = bptr[b]; x < bptr[b + 1]; x++) {
                    const int32_t i = sy->bcol[x];
                    if (i > j || mark[i] == j + pass * n) continue;
                    mark[i] = j + pass * n;
                    if (pass) sy->ci[nza] = i;
                    nza++;
                }
            }
        }
        if (!pass) {
            if (nza > (size_t)INT32_MAX || !JD_RESERVE(w, sy, ci, nza + 1) || !JD_RESERVE(w, sy, ci2, nza + 1) ||
                !JD_RESERVE(w, nu, cx, nza + 1))
                return DVI_ERR_NOMEM;
            for (int32_t i = 0; i < n; i++) mark[i] = -1;
        }
    }
    sy->cp[n] = (int32_t)nza;
    /* AMD (CHOLMOD) on that pattern: the only allocation outside the
     * world's allocator, and only here, when the joints' bodies change */
    cholmod_common cc;
    cholmod_start(&cc);
    cc.print = 0;
    cc.error_handler = NULL;
    cholmod_sparse A;
    memset(&A, 0, sizeof A);
    A.nrow = A.ncol = (size_t)n;
    A.nzmax = nza;
    A.p = sy->cp;
    A.i = sy->ci;
    A.stype = 1;
    A.itype = CHOLMOD_INT;
    A.xtype = CHOLMOD_PATTERN;
    A.dtype = CHOLMOD_DOUBLE;
    A.sorted = 0;
    A.packed = 1;
    int ok = cholmod_amd(&A, NULL, 0, sy->perm, &cc);
    cholmod_finish(&cc);
    if (!ok) return cc.status == CHOLMOD_OUT_OF_MEMORY ? DVI_ERR_NOMEM : DVI_ERR_NUMERIC;
    for (int32_t k = 0; k < n; k++) sy->pinv[sy->perm[k]] = k;
    /* C = P N_BB Pᵀ, upper: new column kj holds new rows ki ≤ kj; each
     * stored entry of the rows' pattern goes to column max(ki, kj) */
    int32_t* cnt = nu->next;
    memset(cnt, 0, (size_t)n * sizeof *cnt);
    for (int32_t j = 0; j < n; j++)
        for (int32_t p = sy->cp[j]; p < sy->cp[j + 1]; p++) {
            const int32_t a = sy->pinv[sy->ci[p]], b = sy->pinv[j];
            cnt[a > b ? a : b]++;
        }
    int32_t* Cp = sy->lp; /* C's column pointers, staged in lp, then copied into cp */
    Cp[0] = 0;
    for (int32_t k = 0; k < n; k++) Cp[k + 1] = Cp[k] + cnt[k];
    for (int32_t k = 0; k < n; k++) cnt[k] = Cp[k];
    for (int32_t j = 0; j < n; j++)
        for (int32_t p = sy->cp[j]; p < sy->cp[j + 1]; p++) {
            const int32_t a = sy->pinv[sy->ci[p]], b = sy->pinv[j];
            sy->ci2[cnt[a > b ? a : b]++] = a < b ? a : b;
        }
    memcpy(sy->cp, Cp, ((size_t)n + 1) * sizeof *Cp);
    int32_t* t = sy->ci;
    sy->ci = sy->ci2;
    sy->ci2 = t;
    size_t tc = sy->ci_cap;
    sy->ci_cap = sy->ci2_cap;
    sy->ci2_cap = tc;
    const int32_t* Ci = sy->ci;
    for (int32_t k = 0; k < n; k++) {
        sy->cdiag[k] = -1;
        for (int32_t p = sy->cp[k]; p < sy->cp[k + 1]; p++)
            if (Ci[p] == k) sy->cdiag[k] = p;
        if (sy->cdiag[k] < 0) return DVI_ERR_NUMERIC; /* every row has its diagonal */
    }
    /* each pair of entries on one body: its entry of C */
    size_t npairs = 0;
    for (int32_t b = 0; b < ndyn; b++) {
        const size_t m = (size_t)(bptr[b + 1] - bptr[b]);
        npairs += m * (m + 1) / 2;
    }
    if (!JD_RESERVE(w, sy, pair, 3 * npairs + 3)) return DVI_ERR_NOMEM;
    size_t q = 0;
    for (int32_t b = 0; b < ndyn; b++)
        for (int32_t x = bptr[b]; x < bptr[b + 1]; x++)
            for (int32_t y = x; y < bptr[b + 1]; y++) {
                const int32_t a = sy->pinv[sy->bcol[x]], c = sy->pinv[sy->bcol[y]];
                const int32_t col = a > c ? a : c, row = a < c ? a : c;
                int32_t at = -1;
                for (int32_t p = sy->cp[col]; p < sy->cp[col + 1]; p++)
                    if (Ci[p] == row) at = p;
                if (at < 0) return DVI_ERR_NUMERIC;
                sy->pair[3 * q] = at;
                sy->pair[3 * q + 1] = sy->bent[x];
                sy->pair[3 * q + 2] = sy->bent[y];
                q++;
            }
    sy->npairs = (int32_t)npairs;
    /* the elimination tree of C (cs_etree; stack holds the ancestors) */
    int32_t* parent = sy->parent;
    int32_t* anc = sy->stack;
    for (int32_t k = 0; k < n; k++) {
        parent[k] = -1;
        anc[k] = -1;
        for (int32_t p = sy->cp[k]; p < sy->cp[k + 1]; p++) {
            int32_t i = Ci[p];
            while (i != -1 && i < k) {
                const int32_t inext = anc[i];
                anc[i] = k;
                if (inext == -1) parent[i] = k;
                i = inext;
            }
        }
    }
    /* L's pattern: row k's off-diagonal pattern (topological order) in
     * ri[rp[k] …], the column counts into lp */
    for (int32_t i = 0; i < n; i++) mark[i] = -1;
    memset(cnt, 0, (size_t)n * sizeof *cnt);
    size_t nzr = 0;
    for (int32_t k = 0; k < n; k++) {
        const int32_t top = ereach(sy->cp, Ci, k, parent, sy->stack, mark, n);
        nzr += (size_t)(n - top);
        for (int32_t p = top; p < n; p++) cnt[sy->stack[p]]++;
        cnt[k]++;
    }
    if (nzr + (size_t)n > (size_t)INT32_MAX || !JD_RESERVE(w, sy, ri, nzr + 1) ||
        !JD_RESERVE(w, sy, li, nzr + (size_t)n + 1) || !JD_RESERVE(w, nu, lx, nzr + (size_t)n + 1))
        return DVI_ERR_NOMEM;
    sy->lp[0] = 0;
    for (int32_t k = 0; k < n; k++) sy->lp[k + 1] = sy->lp[k] + cnt[k];
    for (int32_t i = 0; i < n; i++) mark[i] = -1;
    for (int32_t k = 0; k < n; k++) cnt[k] = sy->lp[k];
    sy->rp[0] = 0;
    for (int32_t k = 0; k < n; k++) {
        const int32_t top = ereach(sy->cp, Ci, k, parent, sy->stack, mark, n);
        int32_t r = sy->rp[k];
        for (int32_t p = top; p < n; p++) {
            const int32_t i = sy->stack[p];
            sy->ri[r++] = i;
            sy->li[cnt[i]++] = k;
        }
        sy->li[cnt[k]++] = k; /* the diagonal: first in its column (rows < k never reach column k) */
        sy->rp[k + 1] = r;
    }
    sy->n = n;
    sy->ndyn = ndyn;
    sy->valid = true;
    return DVI_OK;
}

/* y ← L⁻¹ y (permuted order; a dropped row's entry is 0) on m ≤ 6 columns
 * y + c·n at once, zero before lo (one pass over L: the rows of one
 * contact). Inlined into forward_cols with m a constant for the usual
 * sizes. */
static inline __attribute__((always_inline)) void forward_cols_m(const dvi_world* w, double* y, int m, int32_t lo)
{
    const wld_jd_symbolic* sy = &w->jf->sym;
    const wld_jd_numeric* nu = &w->jf->num;
    const int32_t n = sy->n;
    const int32_t* Lp = sy->lp;
    const int32_t* Li = sy->li;
    const double* Lx = nu->lx;
    const double* dinv = nu->dinv;
    for (int32_t k = lo; k < n; k++) {
        const double di = dinv[k];
        if (di == 0.0) {
            for (int c = 0; c < m; c++) y[(size_t)c * (size_t)n + (size_t)k] = 0.0;
            continue;
        }
        double v[6];
        bool any = false;
        for (int c = 0; c < m; c++) {
            double* yc = y + (size_t)c * (size_t)n;
            v[c] = yc[k] == 0.0 ? 0.0 : yc[k] * di;
            if (yc[k] != 0.0) yc[k] = v[c];
            any |= v[c] != 0.0;
        }
        if (!any) continue;
        for (int32_t p = Lp[k] + 1; p < Lp[k + 1]; p++) {
            const int32_t i = Li[p];
            const double l = Lx[p];
            for (int c = 0; c < m; c++)
                if (v[c] != 0.0) y[(size_t)c * (size_t)n + (size_t)i] -= l * v[c];
        }
    }
}

static void forward_cols(const dvi_world* w, double* y, int m, int32_t lo)
{
    switch (m) {
    case 1: forward_cols_m(w, y, 1, lo); break;
    case 3: forward_cols_m(w, y, 3, lo); break;
    default: forward_cols_m(w, y, m, lo); break;
    }
}

/* y ← L⁻¹ y, one column. */
static void forward(const dvi_world* w, double* y)
{
    forward_cols(w, y, 1, 0);
}

/* Σ a[k] b[k], k in [lo, n), in four running sums (a fixed order: the same
 * bits on every run, four times the speed of one chain of additions). */
static double dot_from(const double* a, const double* b, int32_t lo, int32_t n)
{
    double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
    int32_t k = lo;
    for (; k + 4 <= n; k += 4) {
        s0 += a[k] * b[k];
        s1 += a[k + 1] * b[k + 1];
        s2 += a[k + 2] * b[k + 2];
        s3 += a[k + 3] * b[k + 3];
    }
    for (; k < n; k++) s0 += a[k] * b[k];
    return (s0 + s1) + (s2 + s3);
}

/* y ← L⁻ᵀ y (a dropped row's entry is 0). */
static void backward(const dvi_world* w, double* y)
{
    const wld_jd_symbolic* sy = &w->jf->sym;
    const wld_jd_numeric* nu = &w->jf->num;
    const int32_t* Lp = sy->lp;
    const int32_t* Li = sy->li;
    const double* Lx = nu->lx;
    const double* dinv = nu->dinv;
    for (int32_t k = sy->n - 1; k >= 0; k--) {
        const double di = dinv[k];
        if (di == 0.0) {
            y[k] = 0.0;
            continue;
        }
        double s = y[k];
        for (int32_t p = Lp[k] + 1; p < Lp[k + 1]; p++) s -= Lx[p] * y[Li[p]];
        y[k] = s * di;
    }
}

static double refine(dvi_world* w, const double* b, double* y, double target);

/* The refinement's target: the solver's tolerance, at most
 * DVI_JOINT_REFINE_TARGET. */
static double refine_target(const dvi_world* w)
{
    return fmin(DVI_JOINT_REFINE_TARGET, w->def.solver_settings.tolerance);
}

/* N_BB = Pᵀ L Lᵀ P into the analysed pattern (an up-looking Cholesky,
 * CSparse's cs_chol, in a fixed order). A pivot at or below
 * DVI_JOINT_PIVOT_DROP of its row's diagonal drops the row (redundant to
 * rounding: L's column 0, impulse 0); a pivot below both
 * DVI_JOINT_PIVOT_FLOOR of N_BB's largest diagonal and DVI_JOINT_PIVOT_REL
 * of its own (nearly singular) is raised to the smaller of the two, or,
 * with drop_near, drops its row too. Rows before k0 are those of the
 * last call (the same C, nothing raised among them: k0 ≤ its
 * first_raised). Sets nu->dropped, nu->regularised and nu->first_raised. */
static void cholesky(dvi_world* w, int32_t n, bool drop_near, int32_t k0)
{
    const wld_jd_symbolic* sy = &w->jf->sym;
    wld_jd_numeric* nu = &w->jf->num;
    const double* Cx = nu->cx;
    const int32_t* Cp = sy->cp;
    const int32_t* Ci = sy->ci;
    const int32_t* Lp = sy->lp;
    double* Lx = nu->lx;
    double* x = nu->x;
    double* dinv = nu->dinv;
    int32_t* next = nu->next;
    int32_t dropped = 0, regularised = 0;
    for (int32_t k = 0; k < n; k++) {
        next[k] = Lp[k];
        x[k] = 0.0;
    }
    for (int32_t k = 0; k < k0; k++) { /* rows before k0 kept: where their entries of L end */
        next[k]++;
        for (int32_t r = sy->rp[k]; r < sy->rp[k + 1]; r++) next[sy->ri[r]]++;
        dropped += dinv[k] == 0.0;
    }
    double dmax = 0.0; /* the largest diagonal of N_BB: the scale of its largest eigenvalue */
    for (int32_t k = 0; k < n; k++) {
        const double c = Cx[sy->cdiag[k]];
        if (c > dmax) dmax = c;
    }
    const double floor_abs = DVI_JOINT_PIVOT_FLOOR * dmax;
    nu->first_raised = n;
    nu->nnear = 0;
    for (int32_t k = k0; k < n; k++) {
        for (int32_t p = Cp[k]; p < Cp[k + 1]; p++) x[Ci[p]] = Cx[p]; /* C(:,k), rows ≤ k */
        const double diag = x[k];
        double d = diag;
        x[k] = 0.0;
        for (int32_t r = sy->rp[k]; r < sy->rp[k + 1]; r++) {
            const int32_t i = sy->ri[r];
            const double lki = x[i] * dinv[i]; /* 0 for a dropped row */
            x[i] = 0.0;
            for (int32_t p = Lp[i] + 1; p < next[i]; p++) x[sy->li[p]] -= Lx[p] * lki;
            d -= lki * lki;
            Lx[next[i]++] = lki;
        }
        double piv = d;
        bool keep = diag > 0.0 && d > DVI_JOINT_PIVOT_DROP * diag;
        if (keep && d <= floor_abs && d <= DVI_JOINT_PIVOT_REL * diag) {
            if (drop_near) {
                keep = false;
                if (nu->nnear < DVI_JOINT_NEAR_MAX) nu->near[nu->nnear++] = k;
            } else {
                piv = fmin(floor_abs, DVI_JOINT_PIVOT_REL * diag);
                if (regularised++ == 0) nu->first_raised = k;
            }
        }
        const double lkk = keep ? sqrt(piv) : 0.0;
        Lx[next[k]++] = lkk;
        dinv[k] = keep ? 1.0 / lkk : 0.0;
        dropped += !keep;
    }
    nu->regularised = regularised;
    nu->dropped = dropped;
}

/* The nearly null directions of C that the dropped nearly singular rows
 * leave (nu->near): for row k, v with v_k = 1, v = 0 after k and on the
 * other dropped rows, and L's leading rows solving the rest, so that
 * (C v)_i = 0 for the kept rows i < k and vᵀ C v is k's pivot; into
 * nu->vnear (one column of n per row), with the Cholesky factor of their
 * Gram matrix VᵀV in nu->gnear. */
static void near_vectors(dvi_world* w, int32_t n)
{
    const wld_jd_symbolic* sy = &w->jf->sym;
    wld_jd_numeric* nu = &w->jf->num;
    const int m = nu->nnear;
    for (int a = 0; a < m; a++) {
        double* v = nu->vnear + (size_t)a * (size_t)n;
        const int32_t k = nu->near[a];
        memset(v, 0, (size_t)n * sizeof *v);
        v[k] = 1.0;
        for (int32_t i = k - 1; i >= 0; i--) {
            if (nu->dinv[i] == 0.0) continue;
            double t = 0.0;
            for (int32_t p = sy->lp[i] + 1; p < sy->lp[i + 1]; p++) t -= nu->lx[p] * v[sy->li[p]];
            v[i] = t * nu->dinv[i];
        }
    }
    double* g = nu->gnear; /* VᵀV = G Gᵀ, lower, m × m */
    for (int a = 0; a < m; a++)
        for (int b = 0; b <= a; b++) {
            double t = dot_from(nu->vnear + (size_t)a * (size_t)n, nu->vnear + (size_t)b * (size_t)n, 0, n);
            for (int c = 0; c < b; c++) t -= g[a * DVI_JOINT_NEAR_MAX + c] * g[b * DVI_JOINT_NEAR_MAX + c];
            g[a * DVI_JOINT_NEAR_MAX + b] = a == b ? sqrt(fmax(t, 1e-300)) : t / g[b * DVI_JOINT_NEAR_MAX + b];
        }
}

/* b ← b − V (VᵀV)⁻¹ Vᵀ b (permuted order): b without its part along the
 * nearly null directions, the part no bounded impulse meets. No-op when
 * no nearly singular row was dropped. */
static void project_near(const dvi_world* w, double* b, int32_t n)
{
    const wld_jd_numeric* nu = &w->jf->num;
    const int m = nu->nnear;
    if (m == 0) return;
    const double* g = nu->gnear;
    double c[DVI_JOINT_NEAR_MAX];
    for (int a = 0; a < m; a++) { /* c = G⁻ᵀ G⁻¹ Vᵀ b */
        double t = dot_from(nu->vnear + (size_t)a * (size_t)n, b, 0, n);
        for (int e = 0; e < a; e++) t -= g[a * DVI_JOINT_NEAR_MAX + e] * c[e];
        c[a] = t / g[a * DVI_JOINT_NEAR_MAX + a];
    }
    for (int a = m - 1; a >= 0; a--) {
        double t = c[a];
        for (int e = a + 1; e < m; e++) t -= g[e * DVI_JOINT_NEAR_MAX + a] * c[e];
        c[a] = t / g[a * DVI_JOINT_NEAR_MAX + a];
    }
    for (int a = 0; a < m; a++) {
        const double* v = nu->vnear + (size_t)a * (size_t)n;
        for (int32_t k = 0; k < n; k++) b[k] -= v[k] * c[a];
    }
}

dvi_status wld_joint_direct_factor(dvi_world* w, int32_t n, int32_t ndyn)
{
    if (!factor_create(w)) return wld_error(w, DVI_ERR_NOMEM, "step: out of memory (joint factorisation)");
    wld_jd_symbolic* sy = &w->jf->sym;
    wld_jd_numeric* nu = &w->jf->num;
    if (!analysis_current(w, n, ndyn)) {
        dvi_status st = analyse(w, n, ndyn);
        if (st != DVI_OK)
            return wld_error(w, st, st == DVI_ERR_NOMEM ? "step: out of memory (joint factorisation)"
                                                               : "step: the joint rows' ordering failed");
    }
    const int32_t nnzd = w->colptr[n];
    if (!JD_RESERVE(w, nu, minvd, (size_t)nnzd + 1) || !JD_RESERVE(w, nu, rhs, (size_t)n + 1) ||
        !JD_RESERVE(w, nu, res_w, (size_t)n + 1) || !JD_RESERVE(w, nu, cy_w, (size_t)n + 1) ||
        !JD_RESERVE(w, nu, vnear, DVI_JOINT_NEAR_MAX * (size_t)n + 1))
        return wld_error(w, DVI_ERR_NOMEM, "step: out of memory (joint factorisation)");
    /* M⁻¹ D, then C's entries body by body (a pair of rows sharing both
     * bodies sums both), the damped motors' compliance on the diagonal */
    for (int32_t k = 0; k < nnzd; k += 6)
        minv10_apply(w->inv_mass + 10 * (size_t)(w->rowind[k] / 6), w->values + k, nu->minvd + k);
    double* Cx = nu->cx;
    memset(Cx, 0, (size_t)sy->cp[n] * sizeof *Cx);
    for (int32_t q = 0; q < sy->npairs; q++) {
        const int32_t* pr = sy->pair + 3 * (size_t)q;
        Cx[pr[0]] += v6_dot(w->values + pr[1], nu->minvd + pr[2]);
    }
    for (int32_t k = 0; k < n; k++) Cx[sy->cdiag[k]] += w->compliance[sy->perm[k]];
    nu->nnear = 0;
    cholesky(w, n, false, 0);
    if (nu->regularised > 0) {
        /* raised pivots: kept when the rows they lift are consistent, i.e.
         * C y = −P r_B is met within the target after the refinement (a
         * long chain's nearly singular row: the answer needs no share of
         * it); dropped as before when not (a loop redundant to second
         * order, whose rows ask for an impulse that grows as 1/λ) */
        double* b = nu->rhs;
        double* y = nu->x;
        for (int32_t k = 0; k < n; k++) b[k] = -w->r[sy->perm[k]];
        memcpy(y, b, (size_t)n * sizeof *y);
        forward(w, y);
        backward(w, y);
        nu->residual = refine(w, b, y, refine_target(w));
        if (nu->residual > refine_target(w)) {
            cholesky(w, n, true, nu->first_raised); /* the rows before it stand */
            near_vectors(w, n);
        }
    }
    return DVI_OK;
}

/* out = C x, C = P N_BB Pᵀ from its upper triangle (permuted order). */
static void c_times(const dvi_world* w, const double* x, double* out)
{
    const wld_jd_symbolic* sy = &w->jf->sym;
    const int32_t* Cp = sy->cp;
    const int32_t* Ci = sy->ci;
    const double* Cx = w->jf->num.cx;
    const int32_t n = sy->n;
    memset(out, 0, (size_t)n * sizeof *out);
    for (int32_t k = 0; k < n; k++) {
        double s = 0.0;
        for (int32_t p = Cp[k]; p < Cp[k + 1]; p++) {
            const int32_t i = Ci[p];
            if (i == k) continue;
            out[i] += Cx[p] * x[k];
            s += Cx[p] * x[i];
        }
        out[k] += s + Cx[sy->cdiag[k]] * x[k];
    }
}

/* ‖a‖² in four running sums (dot_from's order). */
static double norm2(const double* a, int32_t n)
{
    return dot_from(a, a, 0, n);
}

/* y ← C⁻¹ b (permuted order) as far as C's nearly singular directions
 * allow, from y = (L Lᵀ)⁻¹ b. L Lᵀ = C + E, E diagonal on the raised
 * pivots, so y misses C's answer by (C + E)⁻¹ E along the few directions E
 * touches; each refinement step y += (L Lᵀ)⁻¹ (b − C y) divides that miss
 * by 1 + λ/e along a direction of C's eigenvalue λ beside its raise e.
 * An independent row whose pivot was raised (λ ≳ e) converges in a few
 * steps, or needs none when b has nothing along it (the long chain); a
 * direction redundant to second order (λ ≪ e) that b asks for stalls
 * (wld_joint_direct_factor then drops its rows). Stops at the relative
 * residual ‖b − C y‖ / max(‖b‖, ‖y‖, ‖b − C y‖) ≤ target, after a step
 * that did not halve it, or after DVI_JOINT_REFINE_STEPS steps (none when
 * nothing was raised); returns that residual. */
static double refine(dvi_world* w, const double* b, double* y, double target)
{
    wld_jd_numeric* nu = &w->jf->num;
    const int32_t n = w->jf->sym.n;
    double* res = nu->res_w;
    double* q = nu->cy_w;
    const double bb = norm2(b, n);
    const int max_steps = nu->regularised > 0 ? DVI_JOINT_REFINE_STEPS : 0;
    double last = INFINITY;
    for (int steps = 0;; steps++) {
        c_times(w, y, q);
        for (int32_t k = 0; k < n; k++) res[k] = b[k] - q[k];
        const double rr = norm2(res, n);
        const double scale2 = fmax(rr, fmax(bb, norm2(y, n)));
        const double rel = scale2 > 1e-300 ? sqrt(rr / scale2) : sqrt(rr);
        /* done, or stalled: a step that did not halve the residual met a
         * direction with λ ≪ e, which the next steps would not converge */
        if (rel <= target || steps >= max_steps || rel > 0.5 * last) {
            nu->refinements = steps;
            return rel;
        }
        last = rel;
        forward(w, res);
        backward(w, res);
        for (int32_t k = 0; k < n; k++) y[k] += res[k];
    }
}

double wld_joint_direct_solve(dvi_world* w, int32_t n)
{
    wld_jd_symbolic* sy = &w->jf->sym;
    wld_jd_numeric* nu = &w->jf->num;
    double* y = nu->x;
    double* b = nu->rhs;
    if (nu->regularised == 0) { /* else the factorisation's check solved this already, into y */
        for (int32_t k = 0; k < n; k++) b[k] = -w->r[sy->perm[k]];
        memcpy(y, b, (size_t)n * sizeof *y);
        project_near(w, y, n);
        forward(w, y);
        backward(w, y);
        nu->residual = refine(w, b, y, refine_target(w));
    }
    for (int32_t k = 0; k < n; k++) w->gamma[sy->perm[k]] = y[k];
    return nu->residual;
}

/* Contact row t's columns on its two bodies, J_a and J_b (the rows the
 * solver would build from the frames: single-precision frame and arms). */
static void contact_cols(const dvi_world* w, int32_t c, int q, double* ja, double* jb)
{
    double f[9], arm[6], d[3];
    wld_f2d(w->fr_frame + 9 * (size_t)c, 9, f);
    wld_f2d(w->fr_arm + 6 * (size_t)c, 6, arm);
    const double ell = w->fr_ell[c];
    memcpy(d, f + 3 * (q % 3), sizeof d);
    if (q < 3) {
        double ca[3], cb[3];
        v3_cross(ca, arm, d);
        v3_cross(cb, arm + 3, d);
        for (int k = 0; k < 3; k++) {
            jb[k] = d[k];
            ja[k] = -d[k];
            jb[3 + k] = cb[k];
            ja[3 + k] = -ca[k];
        }
    } else {
        for (int k = 0; k < 3; k++) {
            jb[k] = ja[k] = 0.0;
            jb[3 + k] = ell * d[k];
            ja[3 + k] = -ell * d[k];
        }
    }
}

/* z += the joint rows' columns (permuted) on body b times M⁻¹J (mj: a
 * contact row's 6-vector on b, times b's M⁻¹): one side of a column of
 * P N_BC; *lo: its first row so far. No-op for b < 0. */
static void add_nbc(const dvi_world* w, int32_t b, const double* mj, double* z, int32_t* lo)
{
    const wld_jd_symbolic* sy = &w->jf->sym;
    if (b < 0) return;
    for (int32_t x = sy->bptr[b]; x < sy->bptr[b + 1]; x++) {
        const int32_t k = sy->pinv[sy->bcol[x]];
        z[k] += v6_dot(w->values + sy->bent[x], mj);
        if (k < *lo) *lo = k;
    }
}

dvi_status wld_joint_direct_schur(dvi_world* w, int32_t n, int32_t npts, int32_t ncr)
{
    wld_jd_symbolic* sy = &w->jf->sym;
    wld_jd_numeric* nu = &w->jf->num;
    const size_t nz = (size_t)n * (size_t)ncr;
    if (!JD_RESERVE(w, nu, z, nz + 1) || !JD_RESERVE(w, nu, s, (size_t)ncr * (size_t)ncr + 1) ||
        !JD_RESERVE(w, nu, scol, (size_t)ncr + 2) || !JD_RESERVE(w, nu, srow, (size_t)ncr * (size_t)ncr + 1) ||
        !JD_RESERVE(w, nu, rs, (size_t)ncr + 1) || !JD_RESERVE(w, nu, jc, 24 * (size_t)ncr + 24) ||
        !JD_RESERVE(w, nu, cbody, 2 * (size_t)ncr + 2) || !JD_RESERVE(w, nu, y, (size_t)n + 1) ||
        !JD_RESERVE(w, nu, zlo, (size_t)ncr + 1))
        return wld_error(w, DVI_ERR_NOMEM, "step: out of memory (contacts' Schur complement)");
    /* each contact row's columns and M⁻¹ times them, and its bodies */
    int32_t t = 0;
    for (int32_t c = 0; c < npts; c++) {
        const int32_t nr = w->contacts[c].nrows;
        for (int q = 0; q < nr; q++, t++) {
            double* J = nu->jc + 24 * (size_t)t; /* J_a, J_b, M⁻¹J_a, M⁻¹J_b */
            contact_cols(w, c, q, J, J + 6);
            const int32_t da = w->fr_body[2 * c], db = w->fr_body[2 * c + 1];
            nu->cbody[2 * t] = da;
            nu->cbody[2 * t + 1] = db;
            if (da >= 0) minv10_apply(w->inv_mass + 10 * (size_t)da, J, J + 12);
            else memset(J + 12, 0, 6 * sizeof(double));
            if (db >= 0) minv10_apply(w->inv_mass + 10 * (size_t)db, J + 6, J + 18);
            else memset(J + 18, 0, 6 * sizeof(double));
        }
    }
    /* Z = L⁻¹ P N_BC, each column zero before its first entry lo_t
     * (zlo: a forward solve fills only later rows), the rows of one
     * contact (same bodies, same lo) in one pass; y = L⁻¹ P r_B */
    t = 0;
    for (int32_t c = 0; c < npts; c++) {
        const int nr = w->contacts[c].nrows;
        int32_t lo = n;
        for (int q = 0; q < nr; q++) {
            const int32_t tq = t + q;
            double* z = nu->z + (size_t)tq * (size_t)n;
            memset(z, 0, (size_t)n * sizeof *z);
            const double* J = nu->jc + 24 * (size_t)tq;
            for (int side = 0; side < 2; side++)
                add_nbc(w, nu->cbody[2 * tq + side], J + 12 + 6 * side, z, &lo);
        }
        for (int q = 0; q < nr; q++) nu->zlo[t + q] = lo;
        forward_cols(w, nu->z + (size_t)t * (size_t)n, nr, lo);
        t += nr;
    }
    double* y = nu->y;
    for (int32_t k = 0; k < n; k++) y[k] = w->r[sy->perm[k]];
    project_near(w, y, n);
    forward(w, y);
    /* S = N_CC − Zᵀ Z (lower triangle computed, mirrored), r_S = r_C − Zᵀ y */
    double* S = nu->s;
    for (t = 0; t < ncr; t++) {
        const double* zt = nu->z + (size_t)t * (size_t)n;
        const double* Jt = nu->jc + 24 * (size_t)t;
        const int32_t lot = nu->zlo[t];
        const double ry = dot_from(zt, y, lot, n);
        nu->rs[t] = w->r[n + t] - ry;
        for (int32_t s = 0; s <= t; s++) {
            const double* zs = nu->z + (size_t)s * (size_t)n;
            const double* Js = nu->jc + 24 * (size_t)s;
            double v = 0.0;
            for (int st = 0; st < 2; st++) {
                const int32_t b = nu->cbody[2 * t + st];
                if (b < 0) continue;
                for (int ss = 0; ss < 2; ss++)
                    if (nu->cbody[2 * s + ss] == b) v += v6_dot(Jt + 6 * st, Js + 12 + 6 * ss);
            }
            const int32_t los = nu->zlo[s];
            v -= dot_from(zt, zs, lot > los ? lot : los, n);
            S[(size_t)s * (size_t)ncr + (size_t)t] = v; /* column s, row t */
            S[(size_t)t * (size_t)ncr + (size_t)s] = v;
        }
    }
    for (t = 0; t <= ncr; t++) nu->scol[t] = t * ncr;
    for (t = 0; t < ncr; t++)
        for (int32_t s = 0; s < ncr; s++) nu->srow[(size_t)t * (size_t)ncr + (size_t)s] = s;
    return DVI_OK;
}

/* b −= g · P N_BC's column of a contact row on body b (mj: M⁻¹ times the
 * row's 6-vector on b). No-op for b < 0. */
static void sub_nbc(const dvi_world* w, int32_t body, const double* mj, double g, double* b)
{
    const wld_jd_symbolic* sy = &w->jf->sym;
    if (body < 0) return;
    double m[6];
    for (int k = 0; k < 6; k++) m[k] = g * mj[k];
    for (int32_t x = sy->bptr[body]; x < sy->bptr[body + 1]; x++)
        b[sy->pinv[sy->bcol[x]]] -= v6_dot(w->values + sy->bent[x], m);
}

/* γ_B from the contacts' impulses: −Pᵀ (L Lᵀ)⁻¹ P (r_B + N_BC γ_C) (v: y
 * + Z γ_C, from L⁻¹), refined against N_BB (b: the right-hand side
 * −P (r_B + N_BC γ_C), filled by the caller). */
static void recover_refine(dvi_world* w, int32_t n, double* v)
{
    wld_jd_symbolic* sy = &w->jf->sym;
    wld_jd_numeric* nu = &w->jf->num;
    backward(w, v);
    for (int32_t k = 0; k < n; k++) v[k] = -v[k];
    nu->residual = refine(w, nu->rhs, v, refine_target(w));
    for (int32_t k = 0; k < n; k++) w->gamma[sy->perm[k]] = v[k];
}

/* The recovery's right-hand side b = −P r_B (the contacts' part is
 * subtracted by the caller); returns γ_C. */
static const double* recover_rhs(dvi_world* w, int32_t n)
{
    const int32_t* perm = w->jf->sym.perm;
    double* b = w->jf->num.rhs;
    for (int32_t k = 0; k < n; k++) b[k] = -w->r[perm[k]];
    return w->gamma + n;
}

void wld_joint_direct_recover(dvi_world* w, int32_t n, int32_t ncr)
{
    wld_jd_numeric* nu = &w->jf->num;
    double* v = nu->y; /* y = L⁻¹ P r_B from the Schur step */
    double* b = nu->rhs;
    const double* gc = recover_rhs(w, n);
    for (int32_t t = 0; t < ncr; t++) {
        const double g = gc[t];
        if (g == 0.0) continue;
        const double* zt = nu->z + (size_t)t * (size_t)n;
        for (int32_t k = nu->zlo[t]; k < n; k++) v[k] += zt[k] * g;
        const double* J = nu->jc + 24 * (size_t)t;
        for (int side = 0; side < 2; side++) sub_nbc(w, nu->cbody[2 * t + side], J + 12 + 6 * side, g, b);
    }
    recover_refine(w, n, v);
}

/* ---- many contacts: S matrix-free ----------------------------------------------------
 * S = N_CC − Zᵀ Z is handed to the solver as its factor form (the contacts'
 * frames, every body's M⁻¹) with the low-rank term G = Z (dvi_ccp_problem.G):
 * no dense S, and only the contacts on a joint's body have a column of Z,
 * filled from its first row lo to n (the forward solve's reach). */
dvi_status wld_joint_direct_lowrank(dvi_world* w, int32_t n, int32_t npts, int32_t ncr)
{
    wld_jd_symbolic* sy = &w->jf->sym;
    wld_jd_numeric* nu = &w->jf->num;
    if (!JD_RESERVE(w, nu, gp, (size_t)ncr + 2) || !JD_RESERVE(w, nu, rs, (size_t)ncr + 1) ||
        !JD_RESERVE(w, nu, dzero, (size_t)ncr + 2) || !JD_RESERVE(w, nu, frblock, (size_t)npts + 1) ||
        !JD_RESERVE(w, nu, y, (size_t)n + 1) || !JD_RESERVE(w, nu, col, 6 * (size_t)n + 6))
        return wld_error(w, DVI_ERR_NOMEM, "step: out of memory (contacts' Schur complement)");
    double* y = nu->y;
    for (int32_t k = 0; k < n; k++) y[k] = w->r[sy->perm[k]];
    project_near(w, y, n);
    forward(w, y);
    memset(nu->dzero, 0, ((size_t)ncr + 1) * sizeof(int32_t));
    size_t nnz = 0;
    int32_t t = 0;
    for (int32_t c = 0; c < npts; c++) {
        nu->frblock[c] = c;
        const int nr = w->contacts[c].nrows;
        const int32_t da = w->fr_body[2 * c], db = w->fr_body[2 * c + 1];
        const bool touches = (da >= 0 && sy->bptr[da + 1] > sy->bptr[da]) ||
                             (db >= 0 && sy->bptr[db + 1] > sy->bptr[db]);
        if (!touches) {
            for (int q = 0; q < nr; q++) {
                nu->gp[t + q] = (int32_t)nnz;
                nu->rs[t + q] = w->r[n + t + q];
            }
            t += nr;
            continue;
        }
        /* the contact's columns of N_BC (permuted), then forward solves in one pass */
        double* col = nu->col;
        memset(col, 0, (size_t)nr * (size_t)n * sizeof *col);
        int32_t lo = n;
        for (int q = 0; q < nr; q++) {
            double J[24]; /* J_a, J_b, M⁻¹J_a, M⁻¹J_b */
            contact_cols(w, c, q, J, J + 6);
            if (da >= 0) minv10_apply(w->inv_mass + 10 * (size_t)da, J, J + 12);
            if (db >= 0) minv10_apply(w->inv_mass + 10 * (size_t)db, J + 6, J + 18);
            double* z = col + (size_t)q * (size_t)n;
            for (int side = 0; side < 2; side++) add_nbc(w, side ? db : da, J + 12 + 6 * side, z, &lo);
        }
        forward_cols(w, col, nr, lo);
        if (!JD_RESERVE(w, nu, gi, nnz + (size_t)nr * (size_t)(n - lo) + 1) ||
            !JD_RESERVE(w, nu, gx, nnz + (size_t)nr * (size_t)(n - lo) + 1))
            return wld_error(w, DVI_ERR_NOMEM, "step: out of memory (contacts' Schur complement)");
        for (int q = 0; q < nr; q++) {
            const double* z = col + (size_t)q * (size_t)n;
            nu->gp[t + q] = (int32_t)nnz;
            nu->rs[t + q] = w->r[n + t + q] - dot_from(z, y, lo, n);
            for (int32_t k = lo; k < n; k++)
                if (z[k] != 0.0) {
                    nu->gi[nnz] = k;
                    nu->gx[nnz++] = z[k];
                }
        }
        t += nr;
    }
    if (nnz > (size_t)INT32_MAX)
        return wld_error(w, DVI_ERR_NOMEM, "step: the contacts' Schur complement is too large (%zu entries)", nnz);
    nu->gp[ncr] = (int32_t)nnz;
    return DVI_OK;
}

void wld_joint_direct_recover_lowrank(dvi_world* w, int32_t n, int32_t npts, int32_t ncr)
{
    wld_jd_symbolic* sy = &w->jf->sym;
    wld_jd_numeric* nu = &w->jf->num;
    double* v = nu->y; /* y = L⁻¹ P r_B from wld_joint_direct_lowrank */
    double* b = nu->rhs;
    const double* gc = recover_rhs(w, n);
    for (int32_t t = 0; t < ncr; t++) {
        const double g = gc[t];
        if (g == 0.0) continue;
        for (int32_t q = nu->gp[t]; q < nu->gp[t + 1]; q++) v[nu->gi[q]] += nu->gx[q] * g;
    }
    /* b −= P N_BC γ_C over the contacts on a joint's body (G's columns) */
    int32_t t = 0;
    for (int32_t c = 0; c < npts; c++) {
        const int nr = w->contacts[c].nrows;
        const int32_t da = w->fr_body[2 * c], db = w->fr_body[2 * c + 1];
        const bool touches = (da >= 0 && sy->bptr[da + 1] > sy->bptr[da]) ||
                             (db >= 0 && sy->bptr[db + 1] > sy->bptr[db]);
        for (int q = 0; q < nr; q++, t++) {
            const double g = gc[t];
            if (g == 0.0 || !touches) continue;
            double J[24]; /* J_a, J_b, M⁻¹J_a, M⁻¹J_b */
            contact_cols(w, c, q, J, J + 6);
            if (da >= 0) minv10_apply(w->inv_mass + 10 * (size_t)da, J, J + 12);
            if (db >= 0) minv10_apply(w->inv_mass + 10 * (size_t)db, J + 6, J + 18);
            sub_nbc(w, da, J + 12, g, b);
            sub_nbc(w, db, J + 18, g, b);
        }
    }
    recover_refine(w, n, v);
}

void wld_joint_direct_velocity(dvi_world* w, int32_t n, int32_t npts, int32_t ndyn)
{
    memset(w->dv, 0, 6 * (size_t)ndyn * sizeof(double));
    wld_step_joint_impulses(w, n);
    int32_t t = n;
    for (int32_t c = 0; c < npts; c++) {
        const int nr = w->contacts[c].nrows;
        const int32_t da = w->fr_body[2 * c], db = w->fr_body[2 * c + 1];
        for (int q = 0; q < nr; q++, t++) {
            const double g = w->gamma[t];
            double ja[6], jb[6];
            contact_cols(w, c, q, ja, jb);
            if (da >= 0)
                for (int k = 0; k < 6; k++) w->dv[6 * (size_t)da + k] += ja[k] * g;
            if (db >= 0)
                for (int k = 0; k < 6; k++) w->dv[6 * (size_t)db + k] += jb[k] * g;
        }
    }
    for (int32_t b = 0; b < ndyn; b++) {
        double dg[6];
        memcpy(dg, w->dv + 6 * (size_t)b, sizeof dg);
        minv10_apply(w->inv_mass + 10 * (size_t)b, dg, w->dv + 6 * (size_t)b);
    }
}

/* ---- a few joint rows alone: dense ---------------------------------------------------- */

/* Direct solve of the bilateral-only problem N γ = −r, N = Dᵀ M⁻¹ D (D, r in
 * the world's buffers, n ≤ DVI_JOINT_DENSE_ROWS rows), into w->gamma:
 *   y_j = M⁻¹ D_j per column; N_ij = Σ_bodies D_iᵀ y_j over the columns that
 *   share a body (upper triangle, mirrored); dense Cholesky N = L Lᵀ in a
 *   fixed order (deterministic, no BLAS threads); a pivot below 1e-10 of its
 *   diagonal marks a redundant row, whose γ is set to 0 (a consistent
 *   redundant set is still met by the others).
 * Returns false (out of memory) or true with the relative residual
 * ‖Nγ + r‖ / max(‖r‖, ‖γ‖, ‖Nγ + r‖) in *rel. Cost O(n³/6) per step. */
bool wld_step_joint_direct(dvi_world* w, int32_t n, int32_t ndyn, double* rel)
{
    if (!factor_create(w)) return false;
    wld_jd_dense* de = &w->jf->dense;
    const int32_t nnz = w->colptr[n];
    if (!JD_RESERVE(w, de, nmat, (size_t)n * (size_t)n + 1) || !JD_RESERVE(w, de, lmat, (size_t)n * (size_t)n + 1) ||
        !JD_RESERVE(w, de, minvd, (size_t)nnz + 1) || !JD_RESERVE(w, de, bptr, (size_t)ndyn + 2) ||
        !JD_RESERVE(w, de, bcol, (size_t)nnz / 6 + 1) || !JD_RESERVE(w, de, bent, (size_t)nnz / 6 + 1))
        return false;
    /* y = M⁻¹ D, and the columns of each body (column order) */
    memset(de->bptr, 0, ((size_t)ndyn + 2) * sizeof *de->bptr);
    for (int32_t j = 0; j < n; j++)
        for (int32_t k = w->colptr[j]; k < w->colptr[j + 1]; k += 6) {
            const int32_t b = w->rowind[k] / 6;
            minv10_apply(w->inv_mass + 10 * (size_t)b, w->values + k, de->minvd + k);
            de->bptr[b + 1]++;
        }
    for (int32_t b = 0; b < ndyn; b++) de->bptr[b + 1] += de->bptr[b];
    for (int32_t j = 0; j < n; j++)
        for (int32_t k = w->colptr[j]; k < w->colptr[j + 1]; k += 6) {
            const int32_t b = w->rowind[k] / 6;
            de->bcol[de->bptr[b]] = j;
            de->bent[de->bptr[b]] = k;
            de->bptr[b]++;
        }
    for (int32_t b = ndyn; b > 0; b--) de->bptr[b] = de->bptr[b - 1]; /* back to the starts */
    de->bptr[0] = 0;
    double* N = de->nmat;
    double* L = de->lmat;
    memset(N, 0, (size_t)n * (size_t)n * sizeof *N);
    for (int32_t b = 0; b < ndyn; b++)
        for (int32_t x = de->bptr[b]; x < de->bptr[b + 1]; x++)
            for (int32_t y = x; y < de->bptr[b + 1]; y++) {
                const int32_t i = de->bcol[x], j = de->bcol[y];
                N[(size_t)i * (size_t)n + (size_t)j] += v6_dot(w->values + de->bent[x], de->minvd + de->bent[y]);
            }
    for (int32_t i = 0; i < n; i++)
        for (int32_t j = 0; j < i; j++) N[(size_t)i * (size_t)n + (size_t)j] = N[(size_t)j * (size_t)n + (size_t)i];
    for (int32_t i = 0; i < n; i++) N[(size_t)i * (size_t)n + (size_t)i] += w->compliance[i]; /* damped motors */
    /* Cholesky, lower triangle of L (row-major) */
    for (int32_t k = 0; k < n; k++) {
        double* Lk = L + (size_t)k * (size_t)n;
        for (int32_t i = k; i < n; i++) {
            double* Li = L + (size_t)i * (size_t)n;
            double sum = N[(size_t)i * (size_t)n + (size_t)k];
            for (int32_t p = 0; p < k; p++) sum -= Li[p] * Lk[p];
            if (i == k) {
                const double diag = N[(size_t)k * (size_t)n + (size_t)k];
                Lk[k] = sum > 1e-10 * diag && diag > 0.0 ? sqrt(sum) : 0.0; /* 0: redundant row */
            } else {
                Li[k] = Lk[k] > 0.0 ? sum / Lk[k] : 0.0;
            }
        }
    }
    double* g = w->gamma;
    for (int32_t k = 0; k < n; k++) { /* L z = −r */
        const double* Lk = L + (size_t)k * (size_t)n;
        double sum = -w->r[k];
        for (int32_t p = 0; p < k; p++) sum -= Lk[p] * g[p];
        g[k] = Lk[k] > 0.0 ? sum / Lk[k] : 0.0;
    }
    for (int32_t k = n - 1; k >= 0; k--) { /* Lᵀ γ = z */
        const double Lkk = L[(size_t)k * (size_t)n + (size_t)k];
        double sum = g[k];
        for (int32_t i = k + 1; i < n; i++) sum -= L[(size_t)i * (size_t)n + (size_t)k] * g[i];
        g[k] = Lkk > 0.0 ? sum / Lkk : 0.0;
    }
    double uu = 0.0, rr = 0.0, gg = 0.0;
    for (int32_t i = 0; i < n; i++) {
        const double* Ni = N + (size_t)i * (size_t)n;
        double u = w->r[i];
        for (int32_t j = 0; j < n; j++) u += Ni[j] * g[j];
        uu += u * u;
        rr += w->r[i] * w->r[i];
        gg += g[i] * g[i];
    }
    double scale = sqrt(fmax(uu, fmax(rr, gg)));
    *rel = scale > 1e-300 ? sqrt(uu) / scale : sqrt(uu);
    return true;
}
