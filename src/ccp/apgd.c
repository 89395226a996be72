/* dvicontact — APGD: accelerated projected gradient descent.
 *
 * Problem: min f(γ) = ½ γᵀNγ + rᵀγ over γ ∈ K (the CCP's convex QP).
 * Algorithm: Nesterov's accelerated projected gradient with a backtracked
 * Lipschitz estimate L, adaptive (gradient) restart and return of the best
 * iterate — Mazhar, Heyn, Negrut, Tasora, "Using Nesterov's method to
 * accelerate multibody dynamics with friction and contact", ACM TOG 34(3),
 * 2015, Algorithm 2. The numbered comments follow that algorithm.
 *
 * Two details make it exact and cheap:
 *  - the sufficient-decrease test f(γ⁺) ≤ f(y) + ∇f(y)ᵀd + L/2 ‖d‖², with
 *    d = γ⁺ − y and the FULL gradient ∇f(y) = N y + r, is algebraically
 *    ½ dᵀN d ≤ L/2 ‖d‖²: it is evaluated in that form (no cancellation);
 *  - N is linear, so N γ⁺ = N y + N d and N y⁺ = (1+β) N γ⁺ − β N γ: one
 *    product N d per trial step, none for the gradient. The recurrences are
 *    refreshed with true products every REFRESH iterations and before the
 *    stopping test is accepted.
 * Preconditioning (settings.apgd.precondition): a positive scale per block
 * (see block_scaling) — an exact change of variables, because each cone is
 * invariant under positive scaling.
 * Stopping: the common CCP residual (ccp.h) of γ⁺ ≤ tolerance, confirmed on a
 * fresh product. Cost: one matrix-free product per iteration (plus one per
 * backtrack) and four fused passes over the vectors: the loop is bound by
 * memory traffic at large sizes, so the passes that can share a sweep do.
 * Every pass runs on the work's threads; its sums are chunked (ccp_work.h),
 * so the iterates have the same bits for any thread count.
 */
#include "ccp_work.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define REFRESH 50
#define MAX_BACKTRACK 60

#define JOINT_BLOCK_MAX 192 /* bilateral rows scaled by the inverse of their own block of N, at most */

/* The bilateral rows' preconditioner: P_J = (N_JJ + C_J)⁻¹ on the n rows of
 * the bilateral blocks (their own block of N, compliance included). Those
 * rows have no cone, so any positive definite P_J is an exact change of
 * variables there (the other blocks keep their positive scale, which maps
 * each cone onto itself). It undoes the coupling and the mass ratios inside
 * a mechanism's joints (the rover's links against its chassis), which a
 * scale per row cannot. n = 0: none (no bilateral rows, more than
 * JOINT_BLOCK_MAX of them, or their block not positive definite). */
typedef struct joint_block {
    int32_t n;
    int32_t* rows; /* [n] */
    double* P;     /* [n × n] row-major, symmetric positive definite */
    double* z;     /* [n] scratch: P_J Gy_J */
} joint_block;

/* false when out of memory (nothing built) */
static bool joint_block_build(ccp_work* w, joint_block* jb)
{
    jb->n = 0;
    int32_t n = 0;
    for (int32_t b = 0; b < w->nblocks; b++)
        if (w->p->blocks[b].kind == DVI_BLOCK_BILATERAL) n += w->block_row[b + 1] - w->block_row[b];
    if (n == 0 || n > JOINT_BLOCK_MAX) return true;
    const size_t nn = (size_t)n * (size_t)n;
    char* mem = ccp_work_scratch(w, (size_t)n * sizeof(int32_t) + (3 * nn + 5 * (size_t)n) * sizeof(double) + 64);
    if (!mem) return false;
    double* P = (double*)(void*)(mem + ((size_t)n * sizeof(int32_t) + 7) / 8 * 8);
    double* A = P + nn;
    double* V = A + nn;
    double* z = V + nn;
    double* inv = z + n; /* the eigenvalues' inverses, 0 on the null space */
    double* lam = inv + n; /* the eigenvalues */
    double* work = lam + n; /* [2n] */
    int32_t* rows = (int32_t*)(void*)mem;
    int32_t k = 0;
    for (int32_t b = 0; b < w->nblocks; b++)
        if (w->p->blocks[b].kind == DVI_BLOCK_BILATERAL)
            for (int32_t i = w->block_row[b]; i < w->block_row[b + 1]; i++) rows[k++] = i;
    for (int32_t a = 0; a < n; a++) {
        for (int32_t c = 0; c < a; c++) {
            double e = ccp_work_block_entry(w, rows[a], rows[c]);
            A[(size_t)a * n + c] = A[(size_t)c * n + a] = e;
        }
        A[(size_t)a * n + a] = w->diag[rows[a]];
    }
    /* P_J = N_JJ⁺, the pseudo-inverse: redundant joints make N_JJ singular,
     * and on its null space (impulses that move nothing, D d = 0) P_J takes
     * no step at all, so redundant rows keep the share of the reaction they
     * start from instead of drifting along it (an inverse of a shifted N_JJ
     * amplifies the null-space part of the gradient, and the reactions of
     * redundant rows grew without bound). Eigenvalues below 1e-9 of the
     * largest count as zero. */
    if (ccp_sym_eigen(A, V, lam, work, n) != 0) return true;
    double lmax = 0.0;
    for (int32_t a = 0; a < n; a++)
        if (lam[a] > lmax) lmax = lam[a];
    if (!(lmax > 0.0) || !isfinite(lmax)) return true;
    for (int32_t a = 0; a < n; a++) {
        const double l = lam[a];
        inv[a] = l > 1e-9 * lmax ? 1.0 / l : 0.0;
    }
    for (int32_t i = 0; i < n; i++)
        for (int32_t j = 0; j <= i; j++) {
            double sum = 0.0;
            for (int32_t a = 0; a < n; a++) sum += V[(size_t)i * n + a] * inv[a] * V[(size_t)j * n + a];
            P[(size_t)i * n + j] = P[(size_t)j * n + i] = sum;
        }
    jb->n = n, jb->rows = rows, jb->P = P, jb->z = z;
    return true;
}

/* ---- friction blocks four at a time (apgd_groups.h) ---- */

typedef double v4d __attribute__((vector_size(32)));
typedef long long v4l __attribute__((vector_size(32)));
/* four consecutive doubles anywhere, read and written as one vector */
typedef double v4d_u __attribute__((vector_size(32), aligned(8), may_alias));
#define LD4(p) ((v4d) * (const v4d_u*)(p))
#define ST4(p, v) (*(v4d_u*)(p) = (v))

/* Lanes i0 … i3 of the eight of a, b (or of the four of a). */
#if defined(__has_builtin)
#if __has_builtin(__builtin_shufflevector)
#define SHUF2(a, b, i0, i1, i2, i3) __builtin_shufflevector(a, b, i0, i1, i2, i3)
#define SHUF1(a, i0, i1, i2, i3) __builtin_shufflevector(a, a, i0, i1, i2, i3)
#endif
#endif
#ifndef SHUF2
#define SHUF2(a, b, i0, i1, i2, i3) __builtin_shuffle(a, b, (v4l){i0, i1, i2, i3})
#define SHUF1(a, i0, i1, i2, i3) __builtin_shuffle(a, (v4l){i0, i1, i2, i3})
#endif

/* a where the lane's mask is set, else b */
#define SEL4(mask, a, b) ((v4d)((((v4l)(a)) & (mask)) | (((v4l)(b)) & ~(mask))))

/* ccp_project_friction on four blocks (μ > 0), without branches: each
 * lane takes the operations of the scalar projection's case it falls in
 * (the surface's answer is formed in every lane; where it is not kept,
 * ‖t‖ may be 0 and it is not finite, which no kept lane sees). */
static inline __attribute__((always_inline)) void project4(const v4d* mu, v4d* x0, v4d* x1, v4d* x2)
{
    const v4d zero = {0.0, 0.0, 0.0, 0.0};
    const v4d m = *mu, n = *x0, t1 = *x1, t2 = *x2;
    const v4d t2sq = t1 * t1 + t2 * t2;
    const v4d mn = m * n;
    const v4l inside = (n >= zero) & (t2sq <= mn * mn);
    const v4l polar = (n < zero) & ((m * m) * t2sq <= n * n);
    v4d tn;
    for (int l = 0; l < 4; l++) tn[l] = sqrt(t2sq[l]);
    const v4d np = (m * tn + n) / (m * m + 1.0);
    const v4d s = m * np / tn;
    *x0 = SEL4(inside, n, SEL4(polar, zero, np));
    *x1 = SEL4(inside, t1, SEL4(polar, zero, t1 * s));
    *x2 = SEL4(inside, t2, SEL4(polar, zero, t2 * s));
}

/* ccp_project_rolling on four blocks, lane by lane, without branches: the
 * inside test, then the walk over the breakpoints (cone.c) with the same
 * operations in the same order, every interval's candidate formed and the
 * first that holds kept; so each lane has the scalar projection's bits.
 * c: the blocks' μ, μ_s, μ_r (clamped at 0); x: n, t1, t2, s, ρ1, ρ2. */
static inline __attribute__((always_inline)) void rolling4(const v4d* c, v4d* x)
{
    const v4d zero = {0.0, 0.0, 0.0, 0.0}, one = {1.0, 1.0, 1.0, 1.0};
    const v4d inf = {INFINITY, INFINITY, INFINITY, INFINITY};
    const double in1 = 1.0 - 1e-9;
    const v4d in = {in1, in1, in1, in1};
    const v4l absmask = {0x7fffffffffffffffLL, 0x7fffffffffffffffLL, 0x7fffffffffffffffLL, 0x7fffffffffffffffLL};
    const v4d n0 = x[0];
    const v4d t2 = x[1] * x[1] + x[2] * x[2], r2 = x[4] * x[4] + x[5] * x[5];
    const v4d a1 = (v4d)((v4l)x[3] & absmask);
    /* inside: unchanged, but for the parts whose coefficient is 0 */
    const v4d cn0 = c[0] * n0, cn1 = c[1] * n0, cn2 = c[2] * n0;
    const v4l inside = (n0 > zero) & ((c[0] == zero) | (t2 <= in * (cn0 * cn0))) &
                       ((c[1] == zero) | (a1 <= in * cn1)) & ((c[2] == zero) | (r2 <= in * (cn2 * cn2)));
    const v4l clear_t = (c[0] == zero) & (t2 > zero), clear_r = (c[2] == zero) & (r2 > zero);
    const v4l clear_s = (c[1] == zero) & (a1 > zero);
    const v4d in1v = SEL4(clear_t, x[1] * 0.0, x[1]), in2v = SEL4(clear_t, x[2] * 0.0, x[2]);
    const v4d in3v = SEL4(clear_s, SEL4(x[3] > zero, zero, -zero), x[3]);
    const v4d in4v = SEL4(clear_r, x[4] * 0.0, x[4]), in5v = SEL4(clear_r, x[5] * 0.0, x[5]);
    /* the walk */
    v4d a0, a2;
    for (int l = 0; l < 4; l++) {
        a0[l] = sqrt(t2[l]);
        a2[l] = sqrt(r2[l]);
    }
    const v4d b0 = SEL4((c[0] > zero) & (a0 > zero), a0 / c[0], zero);
    const v4d b1 = SEL4((c[1] > zero) & (a1 > zero), a1 / c[1], zero);
    const v4d b2 = SEL4((c[2] > zero) & (a2 > zero), a2 / c[2], zero);
    const v4l l01 = b0 < b1;
    const v4d lo01 = SEL4(l01, b0, b1), hi01 = SEL4(l01, b1, b0);
    const v4d mid = SEL4(hi01 < b2, hi01, b2);
    const v4d order[5] = {zero, SEL4(lo01 < b2, lo01, b2), SEL4(lo01 < mid, mid, lo01), SEL4(hi01 < b2, b2, hi01), inf};
    const v4d ca0 = c[0] * a0, ca1 = c[1] * a1, ca2 = c[2] * a2;
    const v4d cc0 = c[0] * c[0], cc1 = c[1] * c[1], cc2 = c[2] * c[2];
    v4d np = order[3];
    v4l done = (v4l){0, 0, 0, 0};
    for (int k = 0; k < 4; k++) {
        const v4d lo = order[k], hi = order[k + 1];
        v4l skip = {0, 0, 0, 0};
        if (k < 3) skip = (v4l)(hi <= lo);
        const v4l a_0 = b0 > lo, a_1 = b1 > lo, a_2 = b2 > lo;
        v4d num = n0, den = one;
        num = SEL4(a_0, num + ca0, num), den = SEL4(a_0, den + cc0, den);
        num = SEL4(a_1, num + ca1, num), den = SEL4(a_1, den + cc1, den);
        num = SEL4(a_2, num + ca2, num), den = SEL4(a_2, den + cc2, den);
        const v4d cand = num / den;
        const v4l at_lo = cand <= lo;
        const v4l take = ~done & ~skip & (at_lo | (cand < hi));
        np = SEL4(take, SEL4(at_lo, lo, cand), np);
        done |= take;
    }
    np = SEL4(np < zero, zero, np);
    const v4d lim0 = c[0] * np, lim1 = c[1] * np, lim2 = c[2] * np;
    const v4d sc0 = SEL4(a0 > lim0, SEL4(a0 > zero, lim0 / a0, zero), one);
    const v4d sc2 = SEL4(a2 > lim2, SEL4(a2 > zero, lim2 / a2, zero), one);
    const v4d w3 = SEL4(a1 > lim1, SEL4(x[3] > zero, lim1, -lim1), x[3]);
    x[0] = SEL4(inside, n0, np);
    x[1] = SEL4(inside, in1v, x[1] * sc0);
    x[2] = SEL4(inside, in2v, x[2] * sc0);
    x[3] = SEL4(inside, in3v, w3);
    x[4] = SEL4(inside, in4v, x[4] * sc2);
    x[5] = SEL4(inside, in5v, x[5] * sc2);
}

/* The kernels pass four-wide vectors between inlined functions only; GCC
 * warns that such a vector changes the calling convention of a function
 * built without AVX, which does not apply to a function that is inlined
 * (the warning comes at the end of the file, so it is off for all of it). */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wpsabi"
#endif
#define GROUP_TARGET
#define GROUP_FN(name) name
#include "apgd_groups.h"
#undef GROUP_TARGET
#undef GROUP_FN
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#define APGD_AVX2 1
#define GROUP_TARGET __attribute__((target("avx2")))
#define GROUP_FN(name) name##_avx2
#include "apgd_groups.h"
#undef GROUP_TARGET
#undef GROUP_FN
#endif

int ccp_apgd_group_mode = -1;

/* The kernels of one instruction set: friction blocks (μ > 0) and blocks
 * with spinning and rolling friction, four at a time. */
typedef struct group_kernels {
    void (*step)(int32_t ng, int32_t b, int32_t r, const double* mu, const double* P, const double* cp,
                 const double* y, const double* Gy, double t, double* gp, double* d, double* dd_out, double* cd_out,
                 double* const* parts);
    void (*advance)(int32_t ng, int32_t b, int32_t r, const double* mu, const double* g, const double* gp, double* Gy,
                    const double* Nd, const double* cd, const double* cp, double* Ggp, const double* Gg, double beta,
                    double* y, double q[4], double* const* parts);
    void (*rstep)(int32_t ng, int32_t b, int32_t r, const dvi_ccp_block* B, const double* P, const double* cp,
                  const double* y, const double* Gy, double t, double* gp, double* d, double* dd, double* cd);
    void (*radvance)(int32_t ng, int32_t b, int32_t r, const dvi_ccp_block* B, const double* g, const double* gp,
                     double* Gy, const double* Nd, const double* cd, const double* cp, double* Ggp, const double* Gg,
                     double beta, double* y, double q[4]);
} group_kernels;

/* The number of groups of four blocks with spinning and rolling friction
 * from block b, not past b1. */
static inline int32_t rolling_count(const dvi_ccp_block* B, int32_t b, int32_t b1)
{
    int32_t ng = 0;
    while (b + 4 * (ng + 1) <= b1) {
        const dvi_ccp_block* q = B + b + 4 * ng;
        if (!(q[0].kind == DVI_BLOCK_FRICTION_ROLLING && q[1].kind == DVI_BLOCK_FRICTION_ROLLING &&
              q[2].kind == DVI_BLOCK_FRICTION_ROLLING && q[3].kind == DVI_BLOCK_FRICTION_ROLLING))
            break;
        ng++;
    }
    return ng;
}

/* The number of groups of four friction blocks (μ > 0) from block b, not
 * past b1. */
static inline int32_t group_count(const double* mu, int32_t b, int32_t b1)
{
    int32_t ng = 0;
    while (b + 4 * (ng + 1) <= b1) {
        const double* q = mu + b + 4 * ng;
        if (!(q[0] > 0.0 && q[1] > 0.0 && q[2] > 0.0 && q[3] > 0.0)) break;
        ng++;
    }
    return ng;
}

/* (9) γ⁺ = Π(y − t Gy), Gy = ∇f(y) = N y + r, and d = γ⁺ − y, block by
 * block in one pass; returns ‖d‖² (chunked, so the bits do not depend on
 * the threads) and, in *dcd, Σ c_i d_i² with the compliance c (0 without). */
static double gradient_step(const ccp_work* w, const double* y, const double* Gy, const double* P,
                            const joint_block* jb, double t, double* gp, double* d, double* dcd,
                            const group_kernels* gk)
{
    const bool dense = jb && jb->n > 0;
    const double* cp = w->p->compliance;
    const dvi_ccp_block* B = w->p->blocks;
    const double* mu = w->block_mu;
    const int32_t* br = w->block_row;
    const int32_t nb = w->nblocks, nc = ccp_block_chunks(w);
    /* exact sums: each block's partial sums (the parts), the loop in chunks of the usual size */
    const bool ex = w->exact;
    double* const parts[2] = {&CCP_PART(w, 0, 0), &CCP_PART(w, 0, 1)};
    const int32_t cl = ex ? DVI_CHUNK_BLOCKS : w->chunk_blocks, nl = (nb + cl - 1) / cl;
    const int nt = ccp_work_nt(w, w->m);
    DVI_OMP_FOR_CHUNKS
    for (int32_t c = 0; c < nl; c++) {
        int32_t b1 = ccp_chunk_end(c, cl, nb);
        double dd = 0.0, cd = 0.0;
        for (int32_t b = c * cl; b < b1; b++) {
            const int32_t ng = gk && mu[b] > 0.0 ? group_count(mu, b, b1) : 0;
            if (ng > 0) { /* friction blocks four at a time */
                gk->step(ng, b, br[b], mu, P, cp, y, Gy, t, gp, d, &dd, &cd, ex ? parts : NULL);
                b += 4 * ng - 1;
                continue;
            }
            const int32_t nr = gk && !ex && mu[b] < 0.0 && B[b].kind == DVI_BLOCK_FRICTION_ROLLING ? rolling_count(B, b, b1) : 0;
            if (nr > 0) { /* spinning and rolling friction four at a time (the scalar pass's bits) */
                gk->rstep(nr, b, br[b], B, P, cp, y, Gy, t, gp, d, &dd, &cd);
                b += 4 * nr - 1;
                continue;
            }
            if (ex) dd = cd = 0.0; /* this block's own sums, from 0 */
            do {
            int32_t r0 = br[b], k = br[b + 1] - r0;
            double pb = P ? P[b] : 1.0, tb = t * pb, ib = 1.0 / pb;
            if (mu[b] >= 0.0) { /* the common block (FRICTION), unrolled */
                const int32_t i = r0;
                double x3[3] = {y[i] - tb * Gy[i], y[i + 1] - tb * Gy[i + 1], y[i + 2] - tb * Gy[i + 2]};
                ccp_project_friction(mu[b], x3);
                double d0 = x3[0] - y[i], d1 = x3[1] - y[i + 1], d2 = x3[2] - y[i + 2];
                gp[i] = x3[0], gp[i + 1] = x3[1], gp[i + 2] = x3[2];
                d[i] = d0, d[i + 1] = d1, d[i + 2] = d2;
                dd += d0 * d0 * ib;
                dd += d1 * d1 * ib;
                dd += d2 * d2 * ib;
                if (cp) {
                    cd += cp[i] * d0 * d0;
                    cd += cp[i + 1] * d1 * d1;
                    cd += cp[i + 2] * d2 * d2;
                }
                break;
            }
            if (dense && B[b].kind == DVI_BLOCK_BILATERAL) break; /* below */
            double x[6];
            for (int32_t a = 0; a < k; a++) x[a] = y[r0 + a] - tb * Gy[r0 + a];
            if (B[b].kind != DVI_BLOCK_BILATERAL) ccp_cone_project(&B[b], x);
            for (int32_t a = 0; a < k; a++) {
                double da = x[a] - y[r0 + a];
                gp[r0 + a] = x[a];
                d[r0 + a] = da;
                dd += da * da * ib;
                if (cp) cd += cp[r0 + a] * da * da;
            }
            } while (0);
            if (ex) parts[0][b] = dd, parts[1][b] = cd;
        }
        if (!ex) CCP_PART(w, c, 0) = dd, CCP_PART(w, c, 1) = cd;
    }
    *dcd = cp ? ccp_work_part_sum(w, nc, 1, CCP_BY_BLOCK) : 0.0;
    double dd = ccp_work_part_sum(w, nc, 0, CCP_BY_BLOCK);
    if (dense) { /* the bilateral rows: d_J = −t P_J Gy_J, ‖d_J‖²_{P⁻¹} = t² Gy_Jᵀ P_J Gy_J */
        const int32_t n = jb->n;
        double gz = 0.0;
        for (int32_t a = 0; a < n; a++) {
            const double* Pa = jb->P + (size_t)a * n;
            double z = 0.0;
            for (int32_t c = 0; c < n; c++) z += Pa[c] * Gy[jb->rows[c]];
            jb->z[a] = z;
            gz += z * Gy[jb->rows[a]];
        }
        for (int32_t a = 0; a < n; a++) {
            const int32_t i = jb->rows[a];
            const double x = y[i] - t * jb->z[a];
            gp[i] = x;
            d[i] = x - y[i];
            if (cp) *dcd += cp[i] * d[i] * d[i];
        }
        dd += t * t * gz;
    }
    return dd;
}

/* Block-diagonal (Jacobi) preconditioner: P_b = k_b / Σ_{i∈b} N_ii, one
 * positive number per block, P[b] (a bilateral block has one row). Scaling
 * a block by a positive number maps its cone onto itself, so running APGD
 * on x = P^{-1/2} γ (operator P^{1/2} N P^{1/2}) is an exact change of
 * variables; written back in γ it is the gradient step
 * γ⁺ = Π(y − t P ∇f(y)) with the metric ‖d‖²_{P⁻¹}. */
static void block_scaling(const ccp_work* w, double* P)
{
    int64_t pos = 0;
    const double sum = ccp_work_positive_sum(w, w->diag, &pos);
    const double fallback = pos > 0 ? (double)pos / sum : 1.0; /* rows with no diagonal: the mean */
    const int32_t nb = w->nblocks;
    const int nt = ccp_work_nt(w, w->m);
    DVI_OMP_FOR_ROWS
    for (int32_t b = 0; b < nb; b++) {
        int32_t r0 = w->block_row[b], k = w->block_row[b + 1] - r0;
        if (w->p->blocks[b].kind == DVI_BLOCK_BILATERAL) { /* one row */
            double di = w->diag[r0];
            P[b] = di > 0.0 && isfinite(di) ? 1.0 / di : fallback;
            continue;
        }
        double s = 0.0;
        for (int32_t a = 0; a < k; a++) s += w->diag[r0 + a];
        P[b] = s > 0.0 && isfinite(s) ? k / s : fallback;
    }
}

/* advance's work on rows r0 .. r0+k−1 of one block (u: the block's u). */
static inline __attribute__((always_inline)) void advance_rows(int32_t r0, int32_t k, const double* g, const double* gp,
                                                               double* Gy, const double* Nd, const double* cd,
                                                               const double* cp, double* Ggp, const double* Gg,
                                                               double beta, double* y, double* u, double* g2,
                                                               double* u2, double* gd)
{
    for (int32_t a = 0; a < k; a++) {
        const int32_t i = r0 + a;
        double nd = cd ? Nd[i] + cp[i] * cd[i] : Nd[i];
        double ggp = Gy[i] + nd;
        Ggp[i] = ggp;
        u[a] = ggp;
        *g2 += gp[i] * gp[i];
        *u2 += u[a] * u[a];
        *gd += Gy[i] * (gp[i] - g[i]);
        y[i] = gp[i] + beta * (gp[i] - g[i]);
        Gy[i] = ggp + beta * (ggp - Gg[i]);
    }
}

/* ---- blocks with spinning and rolling friction four at a time ---- */
#define GROUP_TARGET
#define GROUP_FN(name) name
#include "apgd_rolling.h"
#undef GROUP_TARGET
#undef GROUP_FN
#ifdef APGD_AVX2
#define GROUP_TARGET __attribute__((target("avx2")))
#define GROUP_FN(name) name##_avx2
#include "apgd_rolling.h"
#undef GROUP_TARGET
#undef GROUP_FN
#endif

static const group_kernels KERNELS_BASE = {step_groups, advance_groups, rstep_groups, radvance_groups};
#ifdef APGD_AVX2
static const group_kernels KERNELS_AVX2 = {step_groups_avx2, advance_groups_avx2, rstep_groups_avx2,
                                           radvance_groups_avx2};
#endif

/* The kernels of this solve: NULL for the scalar passes only
 * (ccp_apgd_group_mode 0), else the fastest the machine runs, or those
 * ccp_apgd_group_mode asks for. */
static const group_kernels* group_kernels_for_solve(void)
{
    if (ccp_apgd_group_mode == 0) return NULL;
#ifdef APGD_AVX2
    if (ccp_apgd_group_mode != 1 && __builtin_cpu_supports("avx2")) return &KERNELS_AVX2;
#endif
    return &KERNELS_BASE;
}

/* (17) the gradient at γ⁺, Gγ⁺ = N γ⁺ + r = Gy + N d (+ c∘d when Nd lacks
 * the compliance: cd = d), which is also u = N γ⁺ + r, and in the same pass
 * the residual of γ⁺ (the sums and chunks of ccp_work_residual), the
 * restart product ∇f(y)ᵀ(γ⁺ − γ), and (16) the next y = γ⁺ + β (γ⁺ − γ)
 * with its gradient likewise, taken for granted (a restart then overwrites
 * them). The gradients carry r, so no pass reads r. */
static double advance(const ccp_work* w, const double* g, const double* gp, double* Gy, const double* Nd,
                      const double* cd, double* Ggp, const double* Gg, double beta, double* y, double rnorm,
                      double* gdot, const group_kernels* gk)
{
    const double* cp = w->p->compliance;
    const dvi_ccp_block* B = w->p->blocks;
    const double* mu = w->block_mu;
    const int32_t* br = w->block_row;
    const int32_t nb = w->nblocks, nc = ccp_block_chunks(w);
    /* exact sums: each block's partial sums (the parts), the loop in chunks of the usual size */
    const bool ex = w->exact;
    double* const parts[4] = {&CCP_PART(w, 0, 0), &CCP_PART(w, 0, 1), &CCP_PART(w, 0, 2), &CCP_PART(w, 0, 3)};
    const int32_t cl = ex ? DVI_CHUNK_BLOCKS : w->chunk_blocks, nl = (nb + cl - 1) / cl;
    const int nt = ccp_work_nt(w, w->m);
    DVI_OMP_FOR_CHUNKS
    for (int32_t c = 0; c < nl; c++) {
        int32_t b1 = ccp_chunk_end(c, cl, nb);
        double e2 = 0.0, g2 = 0.0, u2 = 0.0, gd = 0.0;
        for (int32_t b = c * cl; b < b1; b++) {
            const int32_t ng = gk && mu[b] > 0.0 ? group_count(mu, b, b1) : 0;
            if (ng > 0) { /* friction blocks four at a time */
                double q4[4] = {e2, g2, u2, gd};
                gk->advance(ng, b, br[b], mu, g, gp, Gy, Nd, cd, cp, Ggp, Gg, beta, y, q4, ex ? parts : NULL);
                e2 = q4[0], g2 = q4[1], u2 = q4[2], gd = q4[3];
                b += 4 * ng - 1;
                continue;
            }
            const int32_t nr = gk && !ex && mu[b] < 0.0 && B[b].kind == DVI_BLOCK_FRICTION_ROLLING ? rolling_count(B, b, b1) : 0;
            if (nr > 0) { /* spinning and rolling friction four at a time (the scalar pass's bits) */
                double q4[4] = {e2, g2, u2, gd};
                gk->radvance(nr, b, br[b], B, g, gp, Gy, Nd, cd, cp, Ggp, Gg, beta, y, q4);
                e2 = q4[0], g2 = q4[1], u2 = q4[2], gd = q4[3];
                b += 4 * nr - 1;
                continue;
            }
            if (ex) e2 = g2 = u2 = gd = 0.0; /* this block's own sums, from 0 */
            int32_t r0 = br[b], k = br[b + 1] - r0;
            double u[6];
            if (mu[b] >= 0.0) { /* the common block (FRICTION): k = 3, unrolled */
                advance_rows(r0, 3, g, gp, Gy, Nd, cd, cp, Ggp, Gg, beta, y, u, &g2, &u2, &gd);
                double x3[3] = {gp[r0] - u[0], gp[r0 + 1] - u[1], gp[r0 + 2] - u[2]};
                ccp_project_friction(mu[b], x3);
                double e0 = gp[r0] - x3[0], e1 = gp[r0 + 1] - x3[1], e2b = gp[r0 + 2] - x3[2];
                e2 += e0 * e0 + e1 * e1 + e2b * e2b;
            } else {
                advance_rows(r0, k, g, gp, Gy, Nd, cd, cp, Ggp, Gg, beta, y, u, &g2, &u2, &gd);
                e2 += ccp_natural_map2(&B[b], gp + r0, u, k);
            }
            if (ex) parts[0][b] = e2, parts[1][b] = g2, parts[2][b] = u2, parts[3][b] = gd;
        }
        if (!ex) CCP_PART(w, c, 0) = e2, CCP_PART(w, c, 1) = g2, CCP_PART(w, c, 2) = u2, CCP_PART(w, c, 3) = gd;
    }
    *gdot = ccp_work_part_sum(w, nc, 3, CCP_BY_BLOCK);
    double e2 = ccp_work_part_sum(w, nc, 0, CCP_BY_BLOCK), g2 = ccp_work_part_sum(w, nc, 1, CCP_BY_BLOCK),
           u2 = ccp_work_part_sum(w, nc, 2, CCP_BY_BLOCK);
    return sqrt(e2) / ccp_residual_scale(rnorm, sqrt(g2), sqrt(u2));
}

/* y = a + β (a − b) and its gradient likewise, in one parallel pass. */
static void extrapolate(const ccp_work* w, const double* gp, const double* g, const double* Ngp, const double* Ng,
                        double beta, double* y, double* Ny)
{
    const int32_t m = w->m;
    const int nt = ccp_work_nt(w, m);
    DVI_OMP_FOR_ROWS
    for (int32_t i = 0; i < m; i++) {
        y[i] = gp[i] + beta * (gp[i] - g[i]);
        Ny[i] = Ngp[i] + beta * (Ngp[i] - Ng[i]);
    }
}

/* a = a_src and, when b is not NULL, b = b_src: m numbers each, in parallel. */
static void copy2(const ccp_work* w, double* a, const double* a_src, double* b, const double* b_src)
{
    const int32_t m = w->m;
    const int nt = ccp_work_nt(w, m);
    const int32_t nc = ccp_row_chunks(m);
    DVI_OMP_FOR_CHUNKS
    for (int32_t c = 0; c < nc; c++) {
        const int32_t i0 = c * DVI_CHUNK_ROWS, n = ccp_chunk_end(c, DVI_CHUNK_ROWS, m) - i0;
        memcpy(a + i0, a_src + i0, (size_t)n * sizeof(double));
        if (b) memcpy(b + i0, b_src + i0, (size_t)n * sizeof(double));
    }
}

/* G = Nx + r from Nx (G may be Nx), in parallel. */
static void add_r(const ccp_work* w, const double* Nx, double* G)
{
    const int32_t m = w->m;
    const double* r = w->p->r;
    const int nt = ccp_work_nt(w, m);
    DVI_OMP_FOR_ROWS
    for (int32_t i = 0; i < m; i++) G[i] = Nx[i] + r[i];
}

/* G = N x + r, in parallel. */
static void gradient(const ccp_work* w, const double* x, double* G)
{
    ccp_work_apply(w, x, G);
    add_r(w, G, G);
}

static dvi_status apgd_solve(ccp_work* w, const ccp_solver_call* call, const dvi_solver_settings* s,
                             double* gamma, dvi_solve_result* res)
{
    (void)call; /* no state, no inner solver */
    const int32_t m = w->m;
    const double rnorm = w->rnorm;
    /* Two buffers alternate between γ_k and γ_{k+1}; the best iterate is one
     * of them, or a copy in `gamma` (free once the guess is read), made
     * when the buffer that holds it is about to take γ_{k+1}. */
    double* buf[2] = {w->vec[0], w->vec[1]};
    /* Gx = N x + r: the gradient of the objective at x (for γ⁺ also u) */
    double* y = w->vec[2];
    double* Gy = w->vec[3];
    double* Gg = w->vec[4];
    double* Ggp = w->vec[5];
    double* d = w->vec[6];
    /* N d; in the factor form without compliance it takes d's place: d is
     * last read by M⁻¹D d (the backtracking test) before Dᵀv writes N d,
     * and `advance` reads N d alone (one vector less: 8 bytes a row) */
    const bool nd_in_d = w->factor_form && !w->p->compliance;
    double* Nd = nd_in_d ? d : w->vec[7];
    double* P = s->apgd.precondition ? w->vec[9] : NULL;
    joint_block jb = {0, NULL, NULL, NULL};
    const group_kernels* gk = group_kernels_for_solve();

    /* (1)–(4) γ_0 (projected guess), y_0 = γ_0, θ_0 = 1; a guess the driver
     * has projected and multiplied is taken with its product (first: P may
     * take the vector that holds it) */
    double* g = buf[0];
    copy2(w, g, gamma, NULL, NULL);
    if (w->guess_Ng) {
        add_r(w, w->guess_Ng, Gg);
        w->guess_Ng = NULL;
    } else {
        ccp_work_project(w, g);
        gradient(w, g, Gg);
    }
    if (P) {
        block_scaling(w, P);
        if (!joint_block_build(w, &jb)) {
            snprintf(res->message, sizeof res->message, "APGD: out of memory (the bilateral rows' block)");
            return DVI_ERR_NOMEM;
        }
    }
    double* best = g;
    double best_res = ccp_work_residual_checked(w, g, Gg, s->tolerance);
    res->iterations = 0;
    res->status = DVI_SOLVE_MAX_ITERATIONS;

    /* (5)–(6) L_0 = ‖N(γ_0 − γ̃)‖ / ‖γ_0 − γ̃‖ with γ̃ = γ_0 − 1: a lower
     * estimate of the largest eigenvalue; backtracking corrects it. */
    const int nt0 = ccp_work_nt(w, m);
    (void)nt0; /* used by the OpenMP pragmas only */
#ifdef _OPENMP
#pragma omp parallel for schedule(static) num_threads(nt0) if (nt0 > 1)
#endif
    for (int32_t b = 0; b < w->nblocks; b++) /* P^{1/2} 1 */
        for (int32_t i = w->block_row[b]; i < w->block_row[b + 1]; i++) d[i] = P ? sqrt(P[b]) : 1.0;
    double* Ne = Ggp; /* N P^{1/2} 1 (Ggp is free until the first update) */
    ccp_work_apply(w, d, Ne);
    if (P) {
#ifdef _OPENMP
#pragma omp parallel for schedule(static) num_threads(nt0) if (nt0 > 1)
#endif
        for (int32_t b = 0; b < w->nblocks; b++)
            for (int32_t i = w->block_row[b]; i < w->block_row[b + 1]; i++) Ne[i] *= sqrt(P[b]);
    }
    double L = ccp_work_norm2(w, Ne) / sqrt((double)w->m_all);
    if (!(L > 0.0) || !isfinite(L)) L = 1.0;
    double theta = 1.0;
    copy2(w, y, g, Gy, Gg);

    /* memory traffic of the iterations (ccp_work.h): products and passes */
    const double product = ccp_work_product_bytes(w);
    const double step_pass =
        ccp_work_mu_pass_bytes(w, 2, 2) + (P ? 8.0 * w->nblocks : 0.0) + (w->p->compliance ? 8.0 * m : 0.0);
    const double dot_pass = ccp_work_pass_bytes(w, 2, 0);
    const double minv_d_bytes = ccp_work_minv_d_bytes(w), dt_bytes = ccp_work_dt_bytes(w);
    /* factor form: the backtracking test takes dᵀNd = (Dd)ᵀM⁻¹(Dd) + Σ c d² from
     * the body pass, so a rejected trial step costs no Dᵀv, and Dᵀv of the
     * accepted step goes into `advance`, which adds c∘d itself */
    const bool body_test = w->factor_form;
    const double* cd = body_test && w->p->compliance ? d : NULL;
    double traffic = 0.0;
    int32_t k = 0;
    if (best_res <= s->tolerance) res->status = DVI_SOLVE_CONVERGED;
    const double* fresh_g = NULL; /* the iterate whose gradient the last iteration formed afresh, */
    const double* fresh_G = NULL; /* and that gradient */
    for (; k < s->max_iterations && res->status != DVI_SOLVE_CONVERGED; k++) {
        fresh_g = fresh_G = NULL;
        if (k > 0 && k % REFRESH == 0) { /* refresh the linear recurrences */
            gradient(w, g, Gg);
            gradient(w, y, Gy);
            traffic += 2.0 * (product + 24.0 * m);
        }
        double* gp = buf[0] != g ? buf[0] : buf[1];
        if (best == gp) { /* keep the best iterate before γ_{k+1} takes its buffer */
            copy2(w, gamma, best, NULL, NULL);
            best = gamma;
            traffic += 16.0 * m;
        }
        /* (8)–(9) γ_{k+1} = Π(y − t ∇f(y)), ∇f(y) = N y + r; (10)–(13) backtrack
         * until ½dᵀNd ≤ L/2 ‖d‖² */
        double t = 1.0 / L, dcd = 0.0;
        double dd = gradient_step(w, y, Gy, P, &jb, t, gp, d, &dcd, gk);
        for (int bt = 0;; bt++) {
            double dNd;
            if (body_test) {
                dNd = ccp_work_minv_d_quad(w, d, w->bodyvec) + dcd;
                traffic += step_pass + minv_d_bytes;
            } else {
                ccp_work_apply(w, d, Nd);
                dNd = ccp_work_dot(w, d, Nd);
                traffic += step_pass + product + dot_pass;
            }
            if (bt == MAX_BACKTRACK || !(dNd > L * dd * (1.0 + 1e-12))) break;
            L *= s->apgd.grow;
            t = 1.0 / L;
            dd = gradient_step(w, y, Gy, P, &jb, t, gp, d, &dcd, gk);
        }
        if (body_test) {
            ccp_work_dt(w, w->bodyvec, Nd);
            traffic += dt_bytes;
        }
        /* (14)–(15) θ_{k+1}, β_{k+1} */
        double theta_n = 0.5 * (-theta * theta + theta * sqrt(theta * theta + 4.0));
        double beta = theta * (1.0 - theta) / (theta * theta + theta_n);

        /* (17)–(22) N γ_{k+1}, its residual, the best iterate; (16) the next y */
        double gdot;
        double rk = advance(w, g, gp, Gy, Nd, cd, Ggp, Gg, beta, y, rnorm, &gdot, gk);
        traffic += ccp_work_mu_pass_bytes(w, 5, 3) + (cd ? 16.0 * m : 0.0);
        if (!isfinite(rk)) {
            res->status = DVI_SOLVE_DIVERGED;
            snprintf(res->message, sizeof res->message, "APGD: non-finite residual at iteration %d", k + 1);
            k++;
            break;
        }
        bool fresh = false;
        if (rk <= s->tolerance) { /* confirm on a fresh product */
            gradient(w, gp, Ggp);
            rk = ccp_work_residual_checked(w, gp, Ggp, s->tolerance);
            traffic += product + 24.0 * m + ccp_work_pass_bytes(w, 2, 0);
            fresh = true;
            fresh_g = gp, fresh_G = Ggp;
        }
        ccp_history_push(w, res, rk);
        if (rk < best_res) {
            best_res = rk;
            best = gp;
        }
        if (rk <= s->tolerance) res->status = DVI_SOLVE_CONVERGED;
        /* (23)–(26) adaptive restart when ∇f(y)ᵀ(γ_{k+1} − γ_k) > 0 */
        if (s->apgd.restart && gdot > 0.0) {
            copy2(w, y, gp, Gy, Ggp);
            theta_n = 1.0;
            traffic += 32.0 * m;
        } else if (fresh && res->status != DVI_SOLVE_CONVERGED) { /* N y from the fresh N γ⁺ */
            extrapolate(w, gp, g, Ggp, Gg, beta, y, Gy);
            traffic += 48.0 * m;
        }
        /* (27)–(28) */
        L *= s->apgd.shrink;
        theta = theta_n;
        g = gp;
        double* tmp = Gg;
        Gg = Ggp;
        Ggp = tmp;
    }
    res->iterations = k;
    res->target_residual = best_res;
    res->bytes_per_iteration = k > 0 ? traffic / k : 0.0;
    if (best != gamma) copy2(w, gamma, best, NULL, NULL); /* (29)–(33) return the best iterate */
    if (best == fresh_g) w->u_final = fresh_G;       /* its N γ + r, for the driver */
    return DVI_OK;
}

const ccp_solver_impl ccp_solver_apgd = {
    .name = "apgd", .solve = apgd_solve, .law = DVI_LAW_CCP, .targets_ccp = true,
    .summary = "Nesterov-accelerated projected gradient with adaptive step and restart (Mazhar et al. 2015)",
    .nests = true, /* desaxce's inner solver */
    .shared = true,
};
