/* dvicontact — APGD's two block passes on friction contacts four at a time.
 *
 * A run of four consecutive FRICTION blocks (μ > 0) has twelve contiguous
 * rows. The kernels below read and write them as three vectors of four
 * consecutive rows, do the row-wise arithmetic of apgd.c's scalar passes on
 * them, and turn them in registers into the blocks' lanes (lane l: block l
 * of the group; one vector each for n, t1, t2) only for the cone
 * projection, which is written without branches (the three answers formed,
 * one kept per lane). Every row is computed with the same operations in
 * the same order as in the scalar pass, so γ⁺, d, y and the gradients have
 * the scalar pass's bits; the sums (‖d‖², the residual's and the restart
 * test's) are kept per lane and added in lane order at the end of the
 * group run, so they differ from a scalar sum by rounding, and are the same
 * for any thread count (the groups start at fixed block indices of fixed
 * chunks). With exact sums (parts given) each block's own sums are formed
 * on its lane instead, with the scalar pass's operations on a block of its
 * own (its three rows in order from 0), and stored per block: the bits
 * the scalar pass gives a chunk of one block.
 *
 * The vectors are GCC's generic vector extension: the same code gives the
 * same bits whatever the machine's vector width. apgd.c compiles the
 * kernels twice, for the baseline instruction set and for AVX2 (chosen at
 * run time).
 *
 * Included by apgd.c with GROUP_TARGET (a function attribute, possibly
 * empty) and GROUP_FN(name) defined; no include guard. */

/* The twelve rows of a group as three vectors of four consecutive rows
 * (a0 … a11: n, t1, t2 of block 0, then of block 1, …) into the blocks'
 * n, t1, t2 as three vectors of four lanes, and back. */
GROUP_TARGET static inline __attribute__((always_inline)) void GROUP_FN(to_lanes)(const v4d* a, const v4d* b, const v4d* c,
                                                                     v4d* n, v4d* t1, v4d* t2)
{
    const v4d abn = SHUF2(*a, *b, 0, 3, 6, 0);
    const v4d abt = SHUF2(*a, *b, 1, 4, 7, 0);
    const v4d abs = SHUF2(*a, *b, 2, 5, 0, 0);
    *n = SHUF2(abn, *c, 0, 1, 2, 5);
    *t1 = SHUF2(abt, *c, 0, 1, 2, 6);
    *t2 = SHUF2(abs, *c, 0, 1, 4, 7);
}
GROUP_TARGET static inline __attribute__((always_inline)) void GROUP_FN(to_rows)(const v4d* n, const v4d* t1, const v4d* t2,
                                                                    v4d* a, v4d* b, v4d* c)
{
    *a = SHUF2(SHUF2(*n, *t1, 0, 4, 0, 1), *t2, 0, 1, 4, 3);
    *b = SHUF2(SHUF2(*t1, *t2, 1, 5, 0, 2), *n, 0, 1, 6, 3);
    *c = SHUF2(SHUF2(*t2, *n, 2, 7, 0, 3), *t1, 0, 1, 7, 3);
}

/* A block's number spread over its three rows: (p0 p0 p0 p1), (p1 p1 p2 p2),
 * (p2 p3 p3 p3). */
GROUP_TARGET static inline __attribute__((always_inline)) void GROUP_FN(spread)(const v4d* p, v4d* a, v4d* b, v4d* c)
{
    *a = SHUF1(*p, 0, 0, 0, 1);
    *b = SHUF1(*p, 1, 1, 2, 2);
    *c = SHUF1(*p, 2, 3, 3, 3);
}

/* Per lane, ((a0 b0) c0 + (a1 b1) c1) + (a2 b2) c2: a block's sum over its
 * three rows in the scalar pass's order. */
GROUP_TARGET static inline __attribute__((always_inline)) v4d GROUP_FN(lane_sum3)(v4d a0, v4d b0, v4d c0, v4d a1,
                                                                     v4d b1, v4d c1, v4d a2, v4d b2, v4d c2)
{
    v4d s = a0 * b0 * c0;
    s = s + a1 * b1 * c1;
    return s + a2 * b2 * c2;
}

/* dd += Σ (d²/P) and cd += Σ c d² over ng groups of four friction blocks
 * from block b (rows r = br[b] on); writes γ⁺ and d. The rows are read and
 * written four consecutive at a time; only the projection works on the
 * blocks' lanes. parts (exact sums): each block's two sums to parts[0][b],
 * parts[1][b] instead. */
GROUP_TARGET static void GROUP_FN(step_groups)(int32_t ng, int32_t b, int32_t r, const double* mu, const double* P,
                                               const double* cp, const double* y, const double* Gy, double t,
                                               double* gp, double* d, double* dd_out, double* cd_out,
                                               double* const* parts)
{
    const v4d zero = {0.0, 0.0, 0.0, 0.0}, one = {1.0, 1.0, 1.0, 1.0};
    v4d dd = zero, cd = zero;
    for (int32_t g = 0; g < ng; g++, b += 4, r += 12) {
        const v4d m = LD4(mu + b);
        const v4d pb = P ? LD4(P + b) : one;
        const v4d tb = t * pb, ib = 1.0 / pb;
        v4d tba, tbb, tbc, iba, ibb, ibc;
        GROUP_FN(spread)(&tb, &tba, &tbb, &tbc);
        GROUP_FN(spread)(&ib, &iba, &ibb, &ibc);
        const v4d ya = LD4(y + r), yb = LD4(y + r + 4), yc = LD4(y + r + 8);
        const v4d xa = ya - tba * LD4(Gy + r), xb = yb - tbb * LD4(Gy + r + 4),
                  xc = yc - tbc * LD4(Gy + r + 8);
        v4d x0, x1, x2;
        GROUP_FN(to_lanes)(&xa, &xb, &xc, &x0, &x1, &x2);
        project4(&m, &x0, &x1, &x2);
        v4d pa, pbv, pc;
        GROUP_FN(to_rows)(&x0, &x1, &x2, &pa, &pbv, &pc);
        const v4d da = pa - ya, db = pbv - yb, dc = pc - yc;
        ST4(gp + r, pa);
        ST4(gp + r + 4, pbv);
        ST4(gp + r + 8, pc);
        ST4(d + r, da);
        ST4(d + r + 4, db);
        ST4(d + r + 8, dc);
        if (parts) { /* per block, on its lane */
            v4d l0, l1, l2;
            GROUP_FN(to_lanes)(&da, &db, &dc, &l0, &l1, &l2);
            ST4(parts[0] + b, GROUP_FN(lane_sum3)(l0, l0, ib, l1, l1, ib, l2, l2, ib));
            if (cp) {
                const v4d ca = LD4(cp + r), cb = LD4(cp + r + 4), cc = LD4(cp + r + 8);
                v4d c0, c1, c2;
                GROUP_FN(to_lanes)(&ca, &cb, &cc, &c0, &c1, &c2);
                ST4(parts[1] + b, GROUP_FN(lane_sum3)(c0, l0, l0, c1, l1, l1, c2, l2, l2));
            }
            continue;
        }
        dd += da * da * iba;
        dd += db * db * ibb;
        dd += dc * dc * ibc;
        if (cp) {
            cd += LD4(cp + r) * da * da;
            cd += LD4(cp + r + 4) * db * db;
            cd += LD4(cp + r + 8) * dc * dc;
        }
    }
    *dd_out += (dd[0] + dd[1]) + (dd[2] + dd[3]);
    *cd_out += (cd[0] + cd[1]) + (cd[2] + cd[3]);
}

/* advance's work on ng groups of four friction blocks from block b (rows r
 * on): Gγ⁺ = Gy + N d (+ c∘d), the next y and its gradient, row by row four
 * at a time, and the sums q[0] += e² (the residual's natural map, on the
 * blocks' lanes), q[1] += ‖γ⁺‖², q[2] += ‖u‖², q[3] += Gyᵀ(γ⁺ − γ).
 * parts (exact sums): each block's four sums to parts[k][b] instead. */
GROUP_TARGET static void GROUP_FN(advance_groups)(int32_t ng, int32_t b, int32_t r, const double* mu,
                                                  const double* g, const double* gp, double* Gy, const double* Nd,
                                                  const double* cd, const double* cp, double* Ggp, const double* Gg,
                                                  double beta, double* y, double q[4], double* const* parts)
{
    const v4d zero = {0.0, 0.0, 0.0, 0.0};
    v4d e2 = zero, g2 = zero, u2 = zero, gd = zero;
    for (int32_t k = 0; k < ng; k++, b += 4, r += 12) {
        const v4d m = LD4(mu + b);
        v4d u[3], gpv[3], gdv[3];
        for (int c = 0; c < 3; c++) { /* rows r + 4c … r + 4c + 3 */
            const int32_t i = r + 4 * c;
            const v4d gi = LD4(g + i), gpi = LD4(gp + i), gyi = LD4(Gy + i),
                      ggi = LD4(Gg + i);
            v4d nd = LD4(Nd + i);
            if (cd) nd = nd + LD4(cp + i) * LD4(cd + i);
            const v4d ggp = gyi + nd;
            gdv[c] = gyi * (gpi - gi);
            if (!parts) {
                g2 += gpi * gpi;
                u2 += ggp * ggp;
                gd += gdv[c];
            }
            const v4d yn = gpi + beta * (gpi - gi);
            const v4d gyn = ggp + beta * (ggp - ggi);
            ST4(Ggp + i, ggp);
            ST4(y + i, yn);
            ST4(Gy + i, gyn);
            u[c] = ggp;
            gpv[c] = gpi;
        }
        const v4d xa = gpv[0] - u[0], xb = gpv[1] - u[1], xc = gpv[2] - u[2];
        v4d x0, x1, x2, p0, p1, p2;
        GROUP_FN(to_lanes)(&xa, &xb, &xc, &x0, &x1, &x2);
        GROUP_FN(to_lanes)(&gpv[0], &gpv[1], &gpv[2], &p0, &p1, &p2);
        project4(&m, &x0, &x1, &x2);
        const v4d a0 = p0 - x0, a1 = p1 - x1, a2 = p2 - x2;
        if (parts) { /* per block, on its lane, each sum over its rows in order */
            v4d u0, u1, u2l, t0, t1, t2;
            GROUP_FN(to_lanes)(&u[0], &u[1], &u[2], &u0, &u1, &u2l);
            GROUP_FN(to_lanes)(&gdv[0], &gdv[1], &gdv[2], &t0, &t1, &t2);
            ST4(parts[0] + b, a0 * a0 + a1 * a1 + a2 * a2);
            ST4(parts[1] + b, p0 * p0 + p1 * p1 + p2 * p2);
            ST4(parts[2] + b, u0 * u0 + u1 * u1 + u2l * u2l);
            ST4(parts[3] + b, t0 + t1 + t2);
            continue;
        }
        e2 += a0 * a0 + a1 * a1 + a2 * a2;
    }
    q[0] += (e2[0] + e2[1]) + (e2[2] + e2[3]);
    q[1] += (g2[0] + g2[1]) + (g2[2] + g2[3]);
    q[2] += (u2[0] + u2[1]) + (u2[2] + u2[3]);
    q[3] += (gd[0] + gd[1]) + (gd[2] + gd[3]);
}
