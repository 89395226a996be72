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
 * Redundant rows (a mechanism's closed loops, the rover's differential
 * links): a pivot below DVI_JOINT_PIVOT_DROP times its row's diagonal of
 * N_BB (the dense path's rule, dvi_step_joint_direct) or below
 * DVI_JOINT_PIVOT_FLOOR times N_BB's largest diagonal drops its row: the
 * row's column of L is zero and its impulse is 0. The other rows are the
 * independent set the ordering met first; they carry the whole reaction,
 * and a dropped row's constraint holds as far as the others imply it
 * (exactly when it is exactly redundant). Bodies move as with any other
 * share of a redundant reaction; only the split among the redundant rows
 * differs (Lemke's pseudo-inverse gives the least-norm split, APGD and PGS
 * whatever their iterations leave).
 * The floor is for loops redundant to second order: the rover's
 * differential with revolute link ends has one direction whose eigenvalue
 * grows as 2.2e-8 λ_max θ² when the rockers turn by θ (docs/rover.md).
 * Through the crossing 6 rows are dropped on every step (the near-redundant
 * direction's pivot stays below 1e-7 of the largest diagonal: when one of
 * the loop's rows passes it, the next row of the loop gets a pivot of
 * ~1e-15 instead), and the rover's independent rows have pivots of at least
 * 2.2e-6 of it. With a floor of 1e-9 the near-redundant pivot was inverted
 * from the front wheel's climb on and the rover was thrown (111 m/s).
 */
#include "world_internal.h"

#include "math3.h"

#include <cholmod.h>
#include <math.h>
#include <string.h>

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
    if (!w->js_valid || w->js_n != n || w->js_ndyn != ndyn) return false;
    for (int32_t j = 0; j < n; j++) {
        int32_t b0, b1;
        row_bodies(w, j, &b0, &b1);
        if (w->js_key[2 * (size_t)j] != b0 || w->js_key[2 * (size_t)j + 1] != b1) return false;
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
    w->js_valid = false;
    const int32_t nnzd = w->colptr[n];
    const size_t nent = (size_t)nnzd / 6; /* (row, body) entries */
    if (!DVI_RESERVE(w, js_key, 2 * (size_t)n + 2) || !DVI_RESERVE(w, js_perm, (size_t)n + 1) ||
        !DVI_RESERVE(w, js_pinv, (size_t)n + 1) || !DVI_RESERVE(w, js_bptr, (size_t)ndyn + 2) ||
        !DVI_RESERVE(w, js_bcol, nent + 1) || !DVI_RESERVE(w, js_bent, nent + 1) ||
        !DVI_RESERVE(w, js_mark, (size_t)n + 1) || !DVI_RESERVE(w, js_stack, (size_t)n + 1) ||
        !DVI_RESERVE(w, js_cp, (size_t)n + 2) || !DVI_RESERVE(w, js_parent, (size_t)n + 1) ||
        !DVI_RESERVE(w, js_cdiag, (size_t)n + 1) || !DVI_RESERVE(w, js_next, (size_t)n + 1) ||
        !DVI_RESERVE(w, js_lp, (size_t)n + 2) || !DVI_RESERVE(w, js_rp, (size_t)n + 2) ||
        !DVI_RESERVE(w, js_x, (size_t)n + 1) || !DVI_RESERVE(w, js_dinv, (size_t)n + 1))
        return DVI_ERR_NOMEM;
    for (int32_t j = 0; j < n; j++) row_bodies(w, j, &w->js_key[2 * (size_t)j], &w->js_key[2 * (size_t)j + 1]);
    /* the rows on each body, in row order */
    int32_t* bptr = w->js_bptr;
    memset(bptr, 0, ((size_t)ndyn + 2) * sizeof *bptr);
    for (int32_t j = 0; j < n; j++)
        for (int32_t k = w->colptr[j]; k < w->colptr[j + 1]; k += 6) bptr[w->rowind[k] / 6 + 1]++;
    for (int32_t b = 0; b < ndyn; b++) bptr[b + 1] += bptr[b];
    for (int32_t j = 0; j < n; j++)
        for (int32_t k = w->colptr[j]; k < w->colptr[j + 1]; k += 6) {
            const int32_t b = w->rowind[k] / 6;
            w->js_bcol[bptr[b]] = j;
            w->js_bent[bptr[b]] = k;
            bptr[b]++;
        }
    for (int32_t b = ndyn; b > 0; b--) bptr[b] = bptr[b - 1];
    bptr[0] = 0;
    /* the upper pattern of N_BB in the rows' order (for the ordering), then
     * of C: column j holds the rows i ≤ j that share a body with j */
    int32_t* mark = w->js_mark;
    for (int32_t i = 0; i < n; i++) mark[i] = -1;
    size_t nza = 0;
    for (int pass = 0; pass < 2; pass++) {
        nza = 0;
        for (int32_t j = 0; j < n; j++) {
            if (pass) w->js_cp[j] = (int32_t)nza;
            /* the diagonal first, so that every column has it (a row
             * always has a dynamic body: dvi_joint_create checks it) */
            mark[j] = j + pass * n;
            if (pass) w->js_ci[nza] = j;
            nza++;
            for (int32_t k = w->colptr[j]; k < w->colptr[j + 1]; k += 6) {
                const int32_t b = w->rowind[k] / 6;
                for (int32_t x = bptr[b]; x < bptr[b + 1]; x++) {
                    const int32_t i = w->js_bcol[x];
                    if (i > j || mark[i] == j + pass * n) continue;
                    mark[i] = j + pass * n;
                    if (pass) w->js_ci[nza] = i;
                    nza++;
                }
            }
        }
        if (!pass) {
            if (nza > (size_t)INT32_MAX || !DVI_RESERVE(w, js_ci, nza + 1) || !DVI_RESERVE(w, js_ci2, nza + 1) ||
                !DVI_RESERVE(w, js_cx, nza + 1))
                return DVI_ERR_NOMEM;
            for (int32_t i = 0; i < n; i++) mark[i] = -1;
        }
    }
    w->js_cp[n] = (int32_t)nza;
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
    A.p = w->js_cp;
    A.i = w->js_ci;
    A.stype = 1;
    A.itype = CHOLMOD_INT;
    A.xtype = CHOLMOD_PATTERN;
    A.dtype = CHOLMOD_DOUBLE;
    A.sorted = 0;
    A.packed = 1;
    int ok = cholmod_amd(&A, NULL, 0, w->js_perm, &cc);
    cholmod_finish(&cc);
    if (!ok) return cc.status == CHOLMOD_OUT_OF_MEMORY ? DVI_ERR_NOMEM : DVI_ERR_NUMERIC;
    for (int32_t k = 0; k < n; k++) w->js_pinv[w->js_perm[k]] = k;
    /* C = P N_BB Pᵀ, upper: new column kj holds new rows ki ≤ kj; each
     * stored entry of the rows' pattern goes to column max(ki, kj) */
    int32_t* cnt = w->js_next;
    memset(cnt, 0, (size_t)n * sizeof *cnt);
    for (int32_t j = 0; j < n; j++)
        for (int32_t p = w->js_cp[j]; p < w->js_cp[j + 1]; p++) {
            const int32_t a = w->js_pinv[w->js_ci[p]], b = w->js_pinv[j];
            cnt[a > b ? a : b]++;
        }
    int32_t* Cp = w->js_lp; /* C's column pointers, staged in js_lp, then copied into js_cp */
    Cp[0] = 0;
    for (int32_t k = 0; k < n; k++) Cp[k + 1] = Cp[k] + cnt[k];
    for (int32_t k = 0; k < n; k++) cnt[k] = Cp[k];
    for (int32_t j = 0; j < n; j++)
        for (int32_t p = w->js_cp[j]; p < w->js_cp[j + 1]; p++) {
            const int32_t a = w->js_pinv[w->js_ci[p]], b = w->js_pinv[j];
            w->js_ci2[cnt[a > b ? a : b]++] = a < b ? a : b;
        }
    memcpy(w->js_cp, Cp, ((size_t)n + 1) * sizeof *Cp);
    int32_t* t = w->js_ci;
    w->js_ci = w->js_ci2;
    w->js_ci2 = t;
    size_t tc = w->js_ci_cap;
    w->js_ci_cap = w->js_ci2_cap;
    w->js_ci2_cap = tc;
    const int32_t* Ci = w->js_ci;
    for (int32_t k = 0; k < n; k++) {
        w->js_cdiag[k] = -1;
        for (int32_t p = w->js_cp[k]; p < w->js_cp[k + 1]; p++)
            if (Ci[p] == k) w->js_cdiag[k] = p;
        if (w->js_cdiag[k] < 0) return DVI_ERR_NUMERIC; /* every row has its diagonal */
    }
    /* each pair of entries on one body: its entry of C */
    size_t npairs = 0;
    for (int32_t b = 0; b < ndyn; b++) {
        const size_t m = (size_t)(bptr[b + 1] - bptr[b]);
        npairs += m * (m + 1) / 2;
    }
    if (!DVI_RESERVE(w, js_pair, 3 * npairs + 3)) return DVI_ERR_NOMEM;
    size_t q = 0;
    for (int32_t b = 0; b < ndyn; b++)
        for (int32_t x = bptr[b]; x < bptr[b + 1]; x++)
            for (int32_t y = x; y < bptr[b + 1]; y++) {
                const int32_t a = w->js_pinv[w->js_bcol[x]], c = w->js_pinv[w->js_bcol[y]];
                const int32_t col = a > c ? a : c, row = a < c ? a : c;
                int32_t at = -1;
                for (int32_t p = w->js_cp[col]; p < w->js_cp[col + 1]; p++)
                    if (Ci[p] == row) at = p;
                if (at < 0) return DVI_ERR_NUMERIC;
                w->js_pair[3 * q] = at;
                w->js_pair[3 * q + 1] = w->js_bent[x];
                w->js_pair[3 * q + 2] = w->js_bent[y];
                q++;
            }
    w->js_npairs = (int32_t)npairs;
    /* the elimination tree of C (cs_etree; js_stack holds the ancestors) */
    int32_t* parent = w->js_parent;
    int32_t* anc = w->js_stack;
    for (int32_t k = 0; k < n; k++) {
        parent[k] = -1;
        anc[k] = -1;
        for (int32_t p = w->js_cp[k]; p < w->js_cp[k + 1]; p++) {
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
     * js_ri[js_rp[k] …], the column counts into js_lp */
    for (int32_t i = 0; i < n; i++) mark[i] = -1;
    memset(cnt, 0, (size_t)n * sizeof *cnt);
    size_t nzr = 0;
    for (int32_t k = 0; k < n; k++) {
        const int32_t top = ereach(w->js_cp, Ci, k, parent, w->js_stack, mark, n);
        nzr += (size_t)(n - top);
        for (int32_t p = top; p < n; p++) cnt[w->js_stack[p]]++;
        cnt[k]++;
    }
    if (nzr + (size_t)n > (size_t)INT32_MAX || !DVI_RESERVE(w, js_ri, nzr + 1) ||
        !DVI_RESERVE(w, js_li, nzr + (size_t)n + 1) || !DVI_RESERVE(w, js_lx, nzr + (size_t)n + 1))
        return DVI_ERR_NOMEM;
    w->js_lp[0] = 0;
    for (int32_t k = 0; k < n; k++) w->js_lp[k + 1] = w->js_lp[k] + cnt[k];
    for (int32_t i = 0; i < n; i++) mark[i] = -1;
    for (int32_t k = 0; k < n; k++) cnt[k] = w->js_lp[k];
    w->js_rp[0] = 0;
    for (int32_t k = 0; k < n; k++) {
        const int32_t top = ereach(w->js_cp, Ci, k, parent, w->js_stack, mark, n);
        int32_t r = w->js_rp[k];
        for (int32_t p = top; p < n; p++) {
            const int32_t i = w->js_stack[p];
            w->js_ri[r++] = i;
            w->js_li[cnt[i]++] = k;
        }
        w->js_li[cnt[k]++] = k; /* the diagonal: first in its column (rows < k never reach column k) */
        w->js_rp[k + 1] = r;
    }
    w->js_n = n;
    w->js_ndyn = ndyn;
    w->js_valid = true;
    return DVI_OK;
}

/* y ← L⁻¹ y (permuted order; a dropped row's entry is 0) on m ≤ 6 columns
 * y + c·n at once, zero before lo (one pass over L: the rows of one
 * contact). Inlined into forward_cols with m a constant for the usual
 * sizes. */
static inline __attribute__((always_inline)) void forward_cols_m(const dvi_world* w, double* y, int m, int32_t lo)
{
    const int32_t n = w->js_n;
    const int32_t* Lp = w->js_lp;
    const int32_t* Li = w->js_li;
    const double* Lx = w->js_lx;
    const double* dinv = w->js_dinv;
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
    const int32_t* Lp = w->js_lp;
    const int32_t* Li = w->js_li;
    const double* Lx = w->js_lx;
    const double* dinv = w->js_dinv;
    for (int32_t k = w->js_n - 1; k >= 0; k--) {
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

dvi_status dvi_joint_direct_factor(dvi_world* w, int32_t n, int32_t ndyn)
{
    if (!analysis_current(w, n, ndyn)) {
        dvi_status st = analyse(w, n, ndyn);
        if (st != DVI_OK)
            return dvi_world_error(w, st, st == DVI_ERR_NOMEM ? "step: out of memory (joint factorisation)"
                                                               : "step: the joint rows' ordering failed");
    }
    const int32_t nnzd = w->colptr[n];
    if (!DVI_RESERVE(w, js_minvd, (size_t)nnzd + 1) || !DVI_RESERVE(w, js_stack_d, (size_t)n + 1))
        return dvi_world_error(w, DVI_ERR_NOMEM, "step: out of memory (joint factorisation)");
    /* M⁻¹ D, then C's entries body by body (a pair of rows sharing both
     * bodies sums both), the damped motors' compliance on the diagonal */
    for (int32_t k = 0; k < nnzd; k += 6)
        minv10_apply(w->inv_mass + 10 * (size_t)(w->rowind[k] / 6), w->values + k, w->js_minvd + k);
    double* Cx = w->js_cx;
    memset(Cx, 0, (size_t)w->js_cp[n] * sizeof *Cx);
    for (int32_t q = 0; q < w->js_npairs; q++) {
        const int32_t* pr = w->js_pair + 3 * (size_t)q;
        Cx[pr[0]] += v6_dot(w->values + pr[1], w->js_minvd + pr[2]);
    }
    for (int32_t k = 0; k < n; k++) Cx[w->js_cdiag[k]] += w->compliance[w->js_perm[k]];
    /* up-looking Cholesky (cs_chol) into the analysed pattern */
    const int32_t* Cp = w->js_cp;
    const int32_t* Ci = w->js_ci;
    const int32_t* Lp = w->js_lp;
    double* Lx = w->js_lx;
    double* x = w->js_x;
    double* dinv = w->js_dinv;
    int32_t* next = w->js_next;
    for (int32_t k = 0; k < n; k++) {
        next[k] = Lp[k];
        x[k] = 0.0;
    }
    double dmax = 0.0; /* the largest diagonal of N_BB: the scale of its largest eigenvalue */
    for (int32_t k = 0; k < n; k++) {
        const double c = Cx[w->js_cdiag[k]];
        if (c > dmax) dmax = c;
    }
    const double floor_abs = DVI_JOINT_PIVOT_FLOOR * dmax;
    int32_t dropped = 0;
    for (int32_t k = 0; k < n; k++) {
        for (int32_t p = Cp[k]; p < Cp[k + 1]; p++) x[Ci[p]] = Cx[p]; /* C(:,k), rows ≤ k */
        const double diag = x[k];
        double d = diag;
        x[k] = 0.0;
        for (int32_t r = w->js_rp[k]; r < w->js_rp[k + 1]; r++) {
            const int32_t i = w->js_ri[r];
            const double lki = x[i] * dinv[i]; /* 0 for a dropped row */
            x[i] = 0.0;
            for (int32_t p = Lp[i] + 1; p < next[i]; p++) x[w->js_li[p]] -= Lx[p] * lki;
            d -= lki * lki;
            Lx[next[i]++] = lki;
        }
        const bool keep = diag > 0.0 && d > DVI_JOINT_PIVOT_DROP * diag && d > floor_abs;
        const double lkk = keep ? sqrt(d) : 0.0;
        Lx[next[k]++] = lkk;
        dinv[k] = keep ? 1.0 / lkk : 0.0;
        dropped += !keep;
    }
    w->js_dropped = dropped;
    return DVI_OK;
}

double dvi_joint_direct_solve(dvi_world* w, int32_t n)
{
    double* y = w->js_x;
    for (int32_t k = 0; k < n; k++) y[k] = -w->r[w->js_perm[k]];
    forward(w, y);
    backward(w, y);
    for (int32_t k = 0; k < n; k++) w->gamma[w->js_perm[k]] = y[k];
    /* the residual ‖N γ + r‖ / max(‖r‖, ‖γ‖, ‖Nγ + r‖), with C (permuted) */
    const int32_t* Cp = w->js_cp;
    const int32_t* Ci = w->js_ci;
    const double* Cx = w->js_cx;
    double* u = w->js_stack_d;
    for (int32_t k = 0; k < n; k++) u[k] = w->r[w->js_perm[k]];
    for (int32_t k = 0; k < n; k++)
        for (int32_t p = Cp[k]; p < Cp[k + 1]; p++) {
            const int32_t i = Ci[p];
            u[i] += Cx[p] * y[k];
            if (i != k) u[k] += Cx[p] * y[i];
        }
    double uu = 0.0, rr = 0.0, gg = 0.0;
    for (int32_t k = 0; k < n; k++) {
        uu += u[k] * u[k];
        rr += w->r[k] * w->r[k];
        gg += y[k] * y[k];
    }
    const double scale = sqrt(fmax(uu, fmax(rr, gg)));
    return scale > 1e-300 ? sqrt(uu) / scale : sqrt(uu);
}

/* Contact row t's columns on its two bodies, J_a and J_b (the rows the
 * solver would build from the frames: single-precision frame and arms). */
static void contact_cols(const dvi_world* w, int32_t c, int q, double* ja, double* jb)
{
    double f[9], arm[6], d[3];
    dvi_f2d(w->fr_frame + 9 * (size_t)c, 9, f);
    dvi_f2d(w->fr_arm + 6 * (size_t)c, 6, arm);
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
    if (b < 0) return;
    for (int32_t x = w->js_bptr[b]; x < w->js_bptr[b + 1]; x++) {
        const int32_t k = w->js_pinv[w->js_bcol[x]];
        z[k] += v6_dot(w->values + w->js_bent[x], mj);
        if (k < *lo) *lo = k;
    }
}

dvi_status dvi_joint_direct_schur(dvi_world* w, int32_t n, int32_t npts, int32_t ncr)
{
    const size_t nz = (size_t)n * (size_t)ncr;
    if (!DVI_RESERVE(w, js_z, nz + 1) || !DVI_RESERVE(w, js_s, (size_t)ncr * (size_t)ncr + 1) ||
        !DVI_RESERVE(w, js_scol, (size_t)ncr + 2) || !DVI_RESERVE(w, js_srow, (size_t)ncr * (size_t)ncr + 1) ||
        !DVI_RESERVE(w, js_rs, (size_t)ncr + 1) || !DVI_RESERVE(w, js_jc, 24 * (size_t)ncr + 24) ||
        !DVI_RESERVE(w, js_cbody, 2 * (size_t)ncr + 2) || !DVI_RESERVE(w, js_y, (size_t)n + 1) ||
        !DVI_RESERVE(w, js_zlo, (size_t)ncr + 1))
        return dvi_world_error(w, DVI_ERR_NOMEM, "step: out of memory (contacts' Schur complement)");
    /* each contact row's columns and M⁻¹ times them, and its bodies */
    int32_t t = 0;
    for (int32_t c = 0; c < npts; c++) {
        const int32_t nr = w->contacts[c].nrows;
        for (int q = 0; q < nr; q++, t++) {
            double* J = w->js_jc + 24 * (size_t)t; /* J_a, J_b, M⁻¹J_a, M⁻¹J_b */
            contact_cols(w, c, q, J, J + 6);
            const int32_t da = w->fr_body[2 * c], db = w->fr_body[2 * c + 1];
            w->js_cbody[2 * t] = da;
            w->js_cbody[2 * t + 1] = db;
            if (da >= 0) minv10_apply(w->inv_mass + 10 * (size_t)da, J, J + 12);
            else memset(J + 12, 0, 6 * sizeof(double));
            if (db >= 0) minv10_apply(w->inv_mass + 10 * (size_t)db, J + 6, J + 18);
            else memset(J + 18, 0, 6 * sizeof(double));
        }
    }
    /* Z = L⁻¹ P N_BC, each column zero before its first entry lo_t
     * (js_zlo: a forward solve fills only later rows), the rows of one
     * contact (same bodies, same lo) in one pass; y = L⁻¹ P r_B */
    t = 0;
    for (int32_t c = 0; c < npts; c++) {
        const int nr = w->contacts[c].nrows;
        int32_t lo = n;
        for (int q = 0; q < nr; q++) {
            const int32_t tq = t + q;
            double* z = w->js_z + (size_t)tq * (size_t)n;
            memset(z, 0, (size_t)n * sizeof *z);
            const double* J = w->js_jc + 24 * (size_t)tq;
            for (int side = 0; side < 2; side++)
                add_nbc(w, w->js_cbody[2 * tq + side], J + 12 + 6 * side, z, &lo);
        }
        for (int q = 0; q < nr; q++) w->js_zlo[t + q] = lo;
        forward_cols(w, w->js_z + (size_t)t * (size_t)n, nr, lo);
        t += nr;
    }
    double* y = w->js_y;
    for (int32_t k = 0; k < n; k++) y[k] = w->r[w->js_perm[k]];
    forward(w, y);
    /* S = N_CC − Zᵀ Z (lower triangle computed, mirrored), r_S = r_C − Zᵀ y */
    double* S = w->js_s;
    for (t = 0; t < ncr; t++) {
        const double* zt = w->js_z + (size_t)t * (size_t)n;
        const double* Jt = w->js_jc + 24 * (size_t)t;
        const int32_t lot = w->js_zlo[t];
        const double ry = dot_from(zt, y, lot, n);
        w->js_rs[t] = w->r[n + t] - ry;
        for (int32_t s = 0; s <= t; s++) {
            const double* zs = w->js_z + (size_t)s * (size_t)n;
            const double* Js = w->js_jc + 24 * (size_t)s;
            double v = 0.0;
            for (int st = 0; st < 2; st++) {
                const int32_t b = w->js_cbody[2 * t + st];
                if (b < 0) continue;
                for (int ss = 0; ss < 2; ss++)
                    if (w->js_cbody[2 * s + ss] == b) v += v6_dot(Jt + 6 * st, Js + 12 + 6 * ss);
            }
            const int32_t los = w->js_zlo[s];
            v -= dot_from(zt, zs, lot > los ? lot : los, n);
            S[(size_t)s * (size_t)ncr + (size_t)t] = v; /* column s, row t */
            S[(size_t)t * (size_t)ncr + (size_t)s] = v;
        }
    }
    for (t = 0; t <= ncr; t++) w->js_scol[t] = t * ncr;
    for (t = 0; t < ncr; t++)
        for (int32_t s = 0; s < ncr; s++) w->js_srow[(size_t)t * (size_t)ncr + (size_t)s] = s;
    return DVI_OK;
}

void dvi_joint_direct_recover(dvi_world* w, int32_t n, int32_t ncr)
{
    double* v = w->js_y; /* y = L⁻¹ P r_B from the Schur step */
    const double* gc = w->gamma + n;
    for (int32_t t = 0; t < ncr; t++) {
        const double g = gc[t];
        if (g == 0.0) continue;
        const double* zt = w->js_z + (size_t)t * (size_t)n;
        for (int32_t k = w->js_zlo[t]; k < n; k++) v[k] += zt[k] * g;
    }
    backward(w, v);
    for (int32_t k = 0; k < n; k++) w->gamma[w->js_perm[k]] = -v[k];
}

/* ---- many contacts: S matrix-free ----------------------------------------------------
 * S = N_CC − Zᵀ Z is handed to the solver as its factor form (the contacts'
 * frames, every body's M⁻¹) with the low-rank term G = Z (dvi_ccp_problem.G):
 * no dense S, and only the contacts on a joint's body have a column of Z,
 * filled from its first row lo to n (the forward solve's reach). */
dvi_status dvi_joint_direct_lowrank(dvi_world* w, int32_t n, int32_t npts, int32_t ncr)
{
    if (!DVI_RESERVE(w, js_gp, (size_t)ncr + 2) || !DVI_RESERVE(w, js_rs, (size_t)ncr + 1) ||
        !DVI_RESERVE(w, js_dzero, (size_t)ncr + 2) || !DVI_RESERVE(w, js_frblock, (size_t)npts + 1) ||
        !DVI_RESERVE(w, js_y, (size_t)n + 1) || !DVI_RESERVE(w, js_col, 6 * (size_t)n + 6))
        return dvi_world_error(w, DVI_ERR_NOMEM, "step: out of memory (contacts' Schur complement)");
    double* y = w->js_y;
    for (int32_t k = 0; k < n; k++) y[k] = w->r[w->js_perm[k]];
    forward(w, y);
    memset(w->js_dzero, 0, ((size_t)ncr + 1) * sizeof(int32_t));
    size_t nnz = 0;
    int32_t t = 0;
    for (int32_t c = 0; c < npts; c++) {
        w->js_frblock[c] = c;
        const int nr = w->contacts[c].nrows;
        const int32_t da = w->fr_body[2 * c], db = w->fr_body[2 * c + 1];
        const bool touches = (da >= 0 && w->js_bptr[da + 1] > w->js_bptr[da]) ||
                             (db >= 0 && w->js_bptr[db + 1] > w->js_bptr[db]);
        if (!touches) {
            for (int q = 0; q < nr; q++) {
                w->js_gp[t + q] = (int32_t)nnz;
                w->js_rs[t + q] = w->r[n + t + q];
            }
            t += nr;
            continue;
        }
        /* the contact's columns of N_BC (permuted), then forward solves in one pass */
        double* col = w->js_col;
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
        if (!DVI_RESERVE(w, js_gi, nnz + (size_t)nr * (size_t)(n - lo) + 1) ||
            !DVI_RESERVE(w, js_gx, nnz + (size_t)nr * (size_t)(n - lo) + 1))
            return dvi_world_error(w, DVI_ERR_NOMEM, "step: out of memory (contacts' Schur complement)");
        for (int q = 0; q < nr; q++) {
            const double* z = col + (size_t)q * (size_t)n;
            w->js_gp[t + q] = (int32_t)nnz;
            w->js_rs[t + q] = w->r[n + t + q] - dot_from(z, y, lo, n);
            for (int32_t k = lo; k < n; k++)
                if (z[k] != 0.0) {
                    w->js_gi[nnz] = k;
                    w->js_gx[nnz++] = z[k];
                }
        }
        t += nr;
    }
    if (nnz > (size_t)INT32_MAX)
        return dvi_world_error(w, DVI_ERR_NOMEM, "step: the contacts' Schur complement is too large (%zu entries)", nnz);
    w->js_gp[ncr] = (int32_t)nnz;
    return DVI_OK;
}

void dvi_joint_direct_recover_lowrank(dvi_world* w, int32_t n, int32_t ncr)
{
    double* v = w->js_y; /* y = L⁻¹ P r_B from dvi_joint_direct_lowrank */
    const double* gc = w->gamma + n;
    for (int32_t t = 0; t < ncr; t++) {
        const double g = gc[t];
        if (g == 0.0) continue;
        for (int32_t q = w->js_gp[t]; q < w->js_gp[t + 1]; q++) v[w->js_gi[q]] += w->js_gx[q] * g;
    }
    backward(w, v);
    for (int32_t k = 0; k < n; k++) w->gamma[w->js_perm[k]] = -v[k];
}

void dvi_joint_direct_velocity(dvi_world* w, int32_t n, int32_t npts, int32_t ndyn)
{
    memset(w->dv, 0, 6 * (size_t)ndyn * sizeof(double));
    dvi_step_joint_impulses(w, n);
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
