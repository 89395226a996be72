/* dvicontact — internal: the validation of a CCP (ccp_check.c) and the
 * CSC helpers it uses. It stands below the solvers' work (ccp_work.h),
 * which validates every problem it prepares. */
#ifndef DVI_CCP_CHECK_H
#define DVI_CCP_CHECK_H

#include "dvi/ccp.h"

#include <stdbool.h>
#include <stddef.h>

/* Body b's 6×6 M⁻¹ block (row-major) of a factor-form problem: p->inv_mass's
 * own, or written into tmp from p->inv_mass_rigid (exact zeros elsewhere). */
static inline const double* ccp_minv_block(const dvi_ccp_problem* p, int32_t b, double tmp[36])
{
    if (p->inv_mass) return p->inv_mass + 36 * (size_t)b;
    const double* R = p->inv_mass_rigid + 10 * (size_t)b;
    for (int k = 0; k < 36; k++) tmp[k] = 0.0;
    tmp[0] = tmp[7] = tmp[14] = R[0];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) tmp[6 * (3 + i) + 3 + j] = R[1 + 3 * i + j];
    return tmp;
}

/* Full validation of a problem (ccp_check.c); y, wy: rows doubles of
 * scratch each, used only for the Delassus form; brow: block_count + 1 ints
 * of scratch (may be NULL when block_count <= 0), left holding each block's
 * first row when the problem passes. Parallel on `threads` threads; the
 * message names the first bad item, as a serial pass would. */
dvi_status ccp_check(const dvi_ccp_problem* p, double* y, double* wy, int32_t* brow, int threads, char* msg,
                         size_t msg_size);

/* y = A x (A rows × cols; x [cols], y [rows]), column by column in index
 * order: y is zeroed, then y[A_ij's row] += A_ij x_j. */
void ccp_csc_mul(const dvi_csc* A, const double* x, double* y);

/* The library's symmetry test of the square A (dvi_ccp_validate's for W):
 * A y against Aᵀ y for a fixed pseudo-random y, true when
 * ‖Ay − Aᵀy‖∞ ≤ 1e-9 · max_j Σ_i |A_ij y_i|. y, ay: A->cols doubles of
 * scratch each; err and mag (may be NULL) receive the two sides. */
bool ccp_csc_symmetric(const dvi_csc* A, double* y, double* ay, double* err, double* mag);

#endif /* DVI_CCP_CHECK_H */
