/* dvicontact — internal: small 3-D vector, matrix and quaternion helpers.
 * Matrices are row-major 3×3; quaternions (w, x, y, z). */
#ifndef DVI_MATH3_H
#define DVI_MATH3_H

#include <math.h>

static inline void v3_set(double* o, double x, double y, double z) { o[0] = x; o[1] = y; o[2] = z; }
static inline void v3_copy(double* o, const double* a) { o[0] = a[0]; o[1] = a[1]; o[2] = a[2]; }
static inline double v3_dot(const double* a, const double* b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
static inline double v3_norm(const double* a) { return sqrt(v3_dot(a, a)); }
/* a·b of two 6-vectors (a body's linear and angular parts), in index order */
static inline double v6_dot(const double* a, const double* b)
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3] + a[4] * b[4] + a[5] * b[5];
}
/* o = M⁻¹ s for a rigid body's inverse mass in 10 numbers A (1/m, then the
 * 3×3 angular block row-major; dvi_ccp_problem.inv_mass_rigid), s and o
 * 6-vectors (the same bits as the 6×6 block's rows: their other terms are
 * exact zeros). */
static inline void minv10_apply(const double* A, const double* s, double* o)
{
    o[0] = A[0] * s[0];
    o[1] = A[0] * s[1];
    o[2] = A[0] * s[2];
    o[3] = A[1] * s[3] + A[2] * s[4] + A[3] * s[5];
    o[4] = A[4] * s[3] + A[5] * s[4] + A[6] * s[5];
    o[5] = A[7] * s[3] + A[8] * s[4] + A[9] * s[5];
}
static inline void v3_sub(double* o, const double* a, const double* b)
{
    o[0] = a[0] - b[0]; o[1] = a[1] - b[1]; o[2] = a[2] - b[2];
}
static inline void v3_add(double* o, const double* a, const double* b)
{
    o[0] = a[0] + b[0]; o[1] = a[1] + b[1]; o[2] = a[2] + b[2];
}
static inline void v3_axpy(double* o, double s, const double* a) { o[0] += s * a[0]; o[1] += s * a[1]; o[2] += s * a[2]; }
/* o = a + s d (out of place; o may be a or d) */
static inline void v3_add_scaled(double* o, const double* a, double s, const double* d)
{
    o[0] = a[0] + s * d[0]; o[1] = a[1] + s * d[1]; o[2] = a[2] + s * d[2];
}
static inline void v3_scale(double* o, double s, const double* a) { o[0] = s * a[0]; o[1] = s * a[1]; o[2] = s * a[2]; }
static inline void v3_cross(double* o, const double* a, const double* b)
{
    double x = a[1] * b[2] - a[2] * b[1], y = a[2] * b[0] - a[0] * b[2], z = a[0] * b[1] - a[1] * b[0];
    o[0] = x; o[1] = y; o[2] = z;
}
/* o = M a */
static inline void m3_mulv(double* o, const double* M, const double* a)
{
    double x = M[0] * a[0] + M[1] * a[1] + M[2] * a[2];
    double y = M[3] * a[0] + M[4] * a[1] + M[5] * a[2];
    double z = M[6] * a[0] + M[7] * a[1] + M[8] * a[2];
    o[0] = x; o[1] = y; o[2] = z;
}
/* o = Mᵀ a */
static inline void m3_tmulv(double* o, const double* M, const double* a)
{
    double x = M[0] * a[0] + M[3] * a[1] + M[6] * a[2];
    double y = M[1] * a[0] + M[4] * a[1] + M[7] * a[2];
    double z = M[2] * a[0] + M[5] * a[1] + M[8] * a[2];
    o[0] = x; o[1] = y; o[2] = z;
}
/* O = A B */
static inline void m3_mul(double* O, const double* A, const double* B)
{
    double T[9];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) T[3 * i + j] = A[3 * i] * B[j] + A[3 * i + 1] * B[3 + j] + A[3 * i + 2] * B[6 + j];
    for (int k = 0; k < 9; k++) O[k] = T[k];
}
/* O = R S Rᵀ */
static inline void m3_rotate_tensor(double* O, const double* R, const double* S)
{
    double T[9], Rt[9];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) Rt[3 * i + j] = R[3 * j + i];
    m3_mul(T, R, S);
    m3_mul(O, T, Rt);
}
/* Rotation matrix of a unit quaternion. */
static inline void q_to_m3(double* R, const double* q)
{
    double w = q[0], x = q[1], y = q[2], z = q[3];
    R[0] = 1 - 2 * (y * y + z * z); R[1] = 2 * (x * y - w * z);     R[2] = 2 * (x * z + w * y);
    R[3] = 2 * (x * y + w * z);     R[4] = 1 - 2 * (x * x + z * z); R[5] = 2 * (y * z - w * x);
    R[6] = 2 * (x * z - w * y);     R[7] = 2 * (y * z + w * x);     R[8] = 1 - 2 * (x * x + y * y);
}
/* o = a ⊗ b */
static inline void q_mul(double* o, const double* a, const double* b)
{
    double w = a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3];
    double x = a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2];
    double y = a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1];
    double z = a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0];
    o[0] = w; o[1] = x; o[2] = y; o[3] = z;
}
static inline void q_conj(double* o, const double* a) { o[0] = a[0]; o[1] = -a[1]; o[2] = -a[2]; o[3] = -a[3]; }
static inline void q_normalize(double* q)
{
    double n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    for (int k = 0; k < 4; k++) q[k] /= n;
}
/* Two unit vectors t1, t2 completing the unit n to a right-handed basis
 * (n, t1, t2); depends on n only (deterministic). */
static inline void basis_from_normal(const double* n, double* t1, double* t2)
{
    double a[3];
    if (fabs(n[0]) < 0.57735) v3_set(a, 1, 0, 0);
    else if (fabs(n[1]) < 0.57735) v3_set(a, 0, 1, 0);
    else v3_set(a, 0, 0, 1);
    v3_cross(t1, n, a);
    v3_scale(t1, 1.0 / v3_norm(t1), t1);
    v3_cross(t2, n, t1);
}
/* One step of Illinois regula falsi on a bracket [lo, hi] whose ends have
 * values flo ≤ 0 ≤ fhi: the value f at t replaces the end of its sign, and
 * when the same end is replaced twice running (*side: the last, −1 lo, 1 hi,
 * 0 none yet) the other end's value is halved. */
static inline void base_illinois_step(double t, double f, double* lo, double* hi, double* flo, double* fhi, int* side)
{
    if (f < 0.0) {
        *lo = t;
        *flo = f;
        if (*side == -1) *fhi *= 0.5;
        *side = -1;
    } else {
        *hi = t;
        *fhi = f;
        if (*side == 1) *flo *= 0.5;
        *side = 1;
    }
}
#endif /* DVI_MATH3_H */
