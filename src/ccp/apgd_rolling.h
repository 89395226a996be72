/* dvicontact — APGD's two block passes on blocks with spinning and rolling
 * friction (DVI_BLOCK_FRICTION_ROLLING), four at a time.
 *
 * The rows keep the scalar passes' arithmetic, row by row and block by
 * block, and so do the sums; only the projection onto the blocks' sets runs
 * on four blocks at once (rolling4: each block in a lane, every lane with
 * the scalar projection's operations). The results have the scalar passes'
 * bits. On a settled pile the projection was half of APGD's time: its
 * square roots and divisions, one block after another, waited on each
 * other; four lanes take four blocks' at once.
 *
 * Included by apgd.c after advance_rows, with GROUP_TARGET (a function
 * attribute, possibly empty) and GROUP_FN(name) defined; no include guard. */

/* The blocks' μ, μ_s and μ_r (clamped at 0, as ccp_project_rolling does) in
 * lanes. */
GROUP_TARGET static inline __attribute__((always_inline)) void GROUP_FN(rolling_coefficients)(const dvi_ccp_block* B,
                                                                                 v4d* c)
{
    double m[3][4];
    for (int l = 0; l < 4; l++) {
        m[0][l] = B[l].mu > 0.0 ? B[l].mu : 0.0;
        m[1][l] = B[l].mu_spin > 0.0 ? B[l].mu_spin : 0.0;
        m[2][l] = B[l].mu_roll > 0.0 ? B[l].mu_roll : 0.0;
    }
    for (int k = 0; k < 3; k++) c[k] = LD4(m[k]);
}

/* gradient_step's work on ng groups of four rolling blocks from block b
 * (rows r on): γ⁺ = Π(y − t P Gy), d = γ⁺ − y, *dd += Σ d²/P, *cd += Σ c d². */
GROUP_TARGET static void GROUP_FN(rstep_groups)(int32_t ng, int32_t b, int32_t r, const dvi_ccp_block* B,
                                                const double* P, const double* cp, const double* y, const double* Gy,
                                                double t, double* gp, double* d, double* dd, double* cd)
{
    double ddl = *dd, cdl = *cd; /* in registers: dd and cd could alias the rows written */
    for (int32_t g = 0; g < ng; g++, b += 4, r += 24) {
        v4d c[3], x[6];
        double xs[6][4], ib[4];
        GROUP_FN(rolling_coefficients)(B + b, c);
        for (int l = 0; l < 4; l++) {
            const int32_t r0 = r + 6 * l;
            const double pb = P ? P[b + l] : 1.0, tb = t * pb;
            ib[l] = 1.0 / pb;
            for (int a = 0; a < 6; a++) xs[a][l] = y[r0 + a] - tb * Gy[r0 + a];
        }
        for (int a = 0; a < 6; a++) x[a] = LD4(xs[a]);
        rolling4(c, x);
        for (int l = 0; l < 4; l++) {
            const int32_t r0 = r + 6 * l;
            for (int a = 0; a < 6; a++) {
                const double xa = x[a][l], da = xa - y[r0 + a];
                gp[r0 + a] = xa;
                d[r0 + a] = da;
                ddl += da * da * ib[l];
                if (cp) cdl += cp[r0 + a] * da * da;
            }
        }
    }
    *dd = ddl;
    *cd = cdl;
}

/* advance's work on ng groups of four rolling blocks from block b (rows r
 * on): advance_rows on each block, then the residual's natural map of the
 * four at once; q[0] += e², q[1] += ‖γ⁺‖², q[2] += ‖u‖², q[3] the restart
 * product, each in the scalar pass's order. */
GROUP_TARGET static void GROUP_FN(radvance_groups)(int32_t ng, int32_t b, int32_t r, const dvi_ccp_block* B,
                                                   const double* g, const double* gp, double* Gy, const double* Nd,
                                                   const double* cd, const double* cp, double* Ggp, const double* Gg,
                                                   double beta, double* y, double q[4])
{
    double e2s = q[0], g2 = q[1], u2 = q[2], gd = q[3]; /* in registers: q could alias the rows written */
    for (int32_t grp = 0; grp < ng; grp++, b += 4, r += 24) {
        v4d c[3], x[6];
        double xs[6][4];
        GROUP_FN(rolling_coefficients)(B + b, c);
        for (int l = 0; l < 4; l++) {
            const int32_t r0 = r + 6 * l;
            double u[6];
            advance_rows(r0, 6, g, gp, Gy, Nd, cd, cp, Ggp, Gg, beta, y, u, &g2, &u2, &gd);
            for (int a = 0; a < 6; a++) xs[a][l] = gp[r0 + a] - u[a];
        }
        for (int a = 0; a < 6; a++) x[a] = LD4(xs[a]);
        rolling4(c, x);
        for (int l = 0; l < 4; l++) {
            const int32_t r0 = r + 6 * l;
            double e2 = 0.0;
            for (int a = 0; a < 6; a++) e2 += (gp[r0 + a] - x[a][l]) * (gp[r0 + a] - x[a][l]);
            e2s += e2;
        }
    }
    q[0] = e2s, q[1] = g2, q[2] = u2, q[3] = gd;
}
