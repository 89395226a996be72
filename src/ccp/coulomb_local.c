/* dvicontact — the exact solve of one contact's 3×3 Coulomb problem
 * (coulomb_local.h states the problem and its cases). */
#include "coulomb_local.h"
#include "ccp_work.h"

#include <math.h>
#include <string.h>

#define PI 3.14159265358979323846
#define SCAN 96 /* directions of the slide's scan (uniform part) */

static void mat3_vec(const double* W, const double* x, double* y)
{
    for (int i = 0; i < 3; i++) y[i] = W[3 * i] * x[0] + W[3 * i + 1] * x[1] + W[3 * i + 2] * x[2];
}

/* ‖x − y‖ of 3-vectors (y NULL: ‖x‖). */
static double dist3(const double* x, const double* y)
{
    double s = 0.0;
    for (int i = 0; i < 3; i++) {
        const double d = x[i] - (y ? y[i] : 0.0);
        s += d * d;
    }
    return sqrt(s);
}

int ccp_coulomb_local_prepare(const double W[9], ccp_coulomb_local* L)
{
    double A[9], V[9], d[3], work[6];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            if (!isfinite(W[3 * i + j])) return -1;
            A[3 * i + j] = L->W[3 * i + j] = 0.5 * (W[3 * i + j] + W[3 * j + i]);
        }
    if (ccp_sym_eigen(A, V, d, work, 3) != 0) return -1;
    double lmax = fmax(d[0], fmax(d[1], d[2]));
    if (!(lmax >= 0.0)) return -1;
    L->lmax = lmax;
    for (int k = 0; k < 3; k++)
        if (d[k] < -1e-9 * lmax) return -1;
    memset(L->Wp, 0, sizeof L->Wp);
    L->singular = false;
    for (int k = 0; k < 3; k++) {
        if (!(d[k] > 1e-12 * lmax)) { /* a null direction */
            L->singular = true;
            continue;
        }
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) L->Wp[3 * i + j] += V[3 * i + k] * V[3 * j + k] / d[k];
    }
    return 0;
}

double ccp_coulomb_local_residual(const ccp_coulomb_local* L, const double q[3], double mu, const double r[3])
{
    double u[3], x[3];
    mat3_vec(L->W, r, u);
    for (int i = 0; i < 3; i++) u[i] += q[i];
    const double eta = L->lmax > 0.0 ? 1.0 / L->lmax : 0.0;
    const double ut = u[0] + mu * hypot(u[1], u[2]);
    x[0] = r[0] - eta * ut;
    x[1] = r[1] - eta * u[1];
    x[2] = r[2] - eta * u[2];
    ccp_project_friction(mu, x);
    const double e = dist3(r, x);
    const double s = fmax(dist3(r, NULL), eta * fmax(dist3(u, NULL), dist3(q, NULL)));
    return s > 1e-300 ? e / s : e;
}

/* The slide equation at direction φ (coulomb_local.h): r_n, u_t, the
 * equation f, the sliding speed g = u_t·(cos φ, sin φ) and f'. Returns
 * false where a_n(φ) is not positive (no sliding impulse along φ). */
typedef struct slide_eval {
    double rn, f, g, df;
} slide_eval;

static bool slide_at(const ccp_coulomb_local* L, const double q[3], double mu, double phi, slide_eval* e)
{
    const double c = cos(phi), s = sin(phi);
    const double d[3] = {1.0, -mu * c, -mu * s}, dp[3] = {0.0, mu * s, -mu * c};
    double a[3], ap[3];
    mat3_vec(L->W, d, a);
    mat3_vec(L->W, dp, ap);
    if (!(a[0] > 1e-13 * L->lmax * (1.0 + mu))) return false;
    const double rn = -q[0] / a[0], rnp = q[0] * ap[0] / (a[0] * a[0]);
    const double u1 = rn * a[1] + q[1], u2 = rn * a[2] + q[2];
    const double u1p = rnp * a[1] + rn * ap[1], u2p = rnp * a[2] + rn * ap[2];
    e->rn = rn;
    e->f = s * u1 - c * u2;
    e->g = c * u1 + s * u2;
    e->df = e->g + s * u1p - c * u2p;
    return true;
}

static double angle_distance(double a, double b)
{
    double d = fmod(fabs(a - b), 2.0 * PI);
    return d > PI ? 2.0 * PI - d : d;
}

/* Newton on f from φ, each step at most 0.5 rad and halved into the valid
 * directions. Returns true with *phi at a root whose sliding speed is ≥ 0. */
static bool slide_newton(const ccp_coulomb_local* L, const double q[3], double mu, int max_iter, double tol,
                         double fscale, double* phi)
{
    double x = *phi;
    slide_eval e;
    if (!slide_at(L, q, mu, x, &e)) return false;
    for (int it = 0; it < max_iter; it++) {
        if (fabs(e.f) <= tol * fscale) break;
        if (!(e.df != 0.0) || !isfinite(e.df)) return false;
        double step = -e.f / e.df;
        if (step > 0.5) step = 0.5;
        if (step < -0.5) step = -0.5;
        slide_eval t;
        int halvings = 0;
        while (!slide_at(L, q, mu, x + step, &t) && halvings < 30) {
            step *= 0.5;
            halvings++;
        }
        if (halvings == 30) return false;
        x += step;
        e = t;
        if (fabs(step) <= tol) break;
    }
    if (!(fabs(e.f) <= 1e3 * tol * fscale + 1e-15 * fscale) || !(e.g >= -1e3 * tol * fscale)) return false;
    *phi = x;
    return true;
}

/* Bisection, then Newton polish, on a bracket [lo, hi] of f's sign change. */
static double slide_bisect(const ccp_coulomb_local* L, const double q[3], double mu, double lo, double flo, double hi,
                           double tol)
{
    slide_eval e;
    for (int it = 0; it < 64 && hi - lo > tol; it++) {
        const double mid = 0.5 * (lo + hi);
        if (!slide_at(L, q, mu, mid, &e)) break;
        if ((e.f < 0.0) == (flo < 0.0)) {
            lo = mid;
            flo = e.f;
        } else {
            hi = mid;
        }
    }
    return 0.5 * (lo + hi);
}

/* The directions of the scan, ascending, into phi[] (at most SCAN_MAX);
 * returns how many. a_n(φ) = W_nn − μ (W_n1 cos φ + W_n2 sin φ) =
 * W_nn − μρ cos(φ − ψ) is positive on the whole circle when W_nn > μρ,
 * else on the arc φ − ψ ∈ (β, 2π − β), β = acos(W_nn / μρ); towards the
 * arc's ends r_n grows without bound, and roots there (a large normal
 * impulse) are sampled by points at geometrically shrinking distances. */
#define SCAN_MAX (SCAN + 2 * 44)
static int scan_points(const ccp_coulomb_local* L, double mu, double phi0, double* phi)
{
    const double* W = L->W;
    const double rho = hypot(W[1], W[2]);
    int n = 0;
    if (!(mu * rho > W[0])) {
        for (int k = 0; k <= SCAN; k++) phi[n++] = phi0 + 2.0 * PI * k / SCAN;
        return n;
    }
    const double psi = atan2(W[2], W[1]), beta = acos(W[0] / (mu * rho));
    const double lo = psi + beta, len = 2.0 * PI - 2.0 * beta;
    for (int j = 44; j >= 4; j--) phi[n++] = lo + len * ldexp(1.0, -j);
    for (int k = 0; k <= SCAN; k++) phi[n++] = lo + len * (0.0625 + 0.875 * k / SCAN);
    for (int j = 4; j <= 44; j++) phi[n++] = lo + len * (1.0 - ldexp(1.0, -j));
    return n;
}

/* Every root of f over the scan with a non-negative sliding speed; the one
 * nearest φ0 into *phi. */
static bool slide_scan(const ccp_coulomb_local* L, const double q[3], double mu, double tol, double fscale,
                       double phi0, double* phi)
{
    double pts[SCAN_MAX + 8];
    const int n = scan_points(L, mu, phi0, pts);
    slide_eval e0, e1;
    bool ok0 = slide_at(L, q, mu, pts[0], &e0), found = false;
    double best = 0.0, bestd = INFINITY;
    for (int k = 1; k < n; k++) {
        const double x0 = pts[k - 1], x1 = pts[k];
        const bool ok1 = slide_at(L, q, mu, x1, &e1);
        if (ok0 && ok1 && (e0.f == 0.0 || (e0.f < 0.0) != (e1.f < 0.0))) {
            double x = e0.f == 0.0 ? x0 : slide_bisect(L, q, mu, x0, e0.f, x1, tol);
            if (slide_newton(L, q, mu, 4, tol, fscale, &x)) {
                const double dist = angle_distance(x, phi0);
                if (dist < bestd) {
                    bestd = dist;
                    best = x;
                    found = true;
                }
            }
        }
        ok0 = ok1;
        e0 = e1;
    }
    if (found) *phi = best;
    return found;
}

/* Alternating projections from x, a solution of W x = −q, onto
 * {x + null(W)} ∩ K_μ (coulomb_local.h): true with x at a point of K_μ that
 * still solves W x = −q to rounding. */
static bool stick_search(const ccp_coulomb_local* L, double mu, double x[3])
{
    double x0[3], y[3], z[3];
    memcpy(x0, x, sizeof x0);
    const double scale = sqrt(x0[0] * x0[0] + x0[1] * x0[1] + x0[2] * x0[2]) + 1e-300;
    for (int it = 0; it < 500; it++) {
        memcpy(y, x, sizeof y); /* y = Π_K(x) */
        ccp_project_friction(mu, y);
        for (int i = 0; i < 3; i++) z[i] = y[i] - x0[i]; /* x = x0 + P(y − x0), P = I − W⁺W */
        double wz[3], pz[3];
        mat3_vec(L->W, z, wz);
        mat3_vec(L->Wp, wz, pz);
        double d = 0.0;
        for (int i = 0; i < 3; i++) {
            x[i] = x0[i] + z[i] - pz[i];
            d += (x[i] - y[i]) * (x[i] - y[i]);
        }
        if (sqrt(d) <= 1e-13 * scale) {
            memcpy(x, y, sizeof y);
            return y[0] > 0.0;
        }
    }
    return false;
}

static bool accept(const ccp_coulomb_local* L, const double q[3], double mu, const double r[3], double tol)
{
    const double res = ccp_coulomb_local_residual(L, q, mu, r);
    return res <= fmax(1e-9, 100.0 * tol);
}

ccp_local_case ccp_coulomb_local_solve(const ccp_coulomb_local* L, const double q[3], double mu, int max_iter,
                                       double tol, double r[3])
{
    if (!isfinite(q[0]) || !isfinite(q[1]) || !isfinite(q[2]) || !(mu >= 0.0)) return DVI_LOCAL_FAILED;
    double x[3];
    /* take-off: ũ = q ∈ K* exactly when q_n ≥ 0 */
    if (q[0] >= 0.0) {
        r[0] = r[1] = r[2] = 0.0;
        return DVI_LOCAL_TAKEOFF;
    }
    const double* W = L->W;
    /* μ = 0: a frictionless contact */
    if (mu == 0.0) {
        if (!(W[0] > 0.0)) return DVI_LOCAL_FAILED;
        r[0] = -q[0] / W[0];
        r[1] = r[2] = 0.0;
        return DVI_LOCAL_STICK;
    }
    /* stick: u = 0 */
    mat3_vec(L->Wp, q, x);
    x[0] = -x[0], x[1] = -x[1], x[2] = -x[2];
    {
        double y[3];
        mat3_vec(W, x, y);
        for (int i = 0; i < 3; i++) y[i] += q[i];
        const bool consistent = dist3(y, NULL) <= 1e-10 * fmax(dist3(q, NULL), L->lmax * dist3(x, NULL));
        if (consistent && x[0] > 0.0 && hypot(x[1], x[2]) <= mu * x[0] * (1.0 + 1e-12)) {
            memcpy(r, x, sizeof x);
            return DVI_LOCAL_STICK;
        }
        /* a semidefinite W: the sticking impulses are x + null(W); one of
         * them may lie in the cone though x does not. Alternating
         * projections between the cone and that line or plane find a
         * common point when there is one. */
        if (consistent && L->singular && stick_search(L, mu, x)) {
            memcpy(r, x, sizeof x);
            return DVI_LOCAL_STICK;
        }
    }
    /* slide: the guess's direction, else the tangential velocity with the
     * normal impulse alone */
    double phi0;
    const double rt = hypot(r[1], r[2]);
    if (isfinite(rt) && rt > 0.0 && r[0] > 0.0 && rt >= 1e-8 * mu * r[0]) {
        phi0 = atan2(-r[2], -r[1]);
    } else {
        const double rn = W[0] > 0.0 ? -q[0] / W[0] : 0.0;
        const double v1 = q[1] + rn * W[3], v2 = q[2] + rn * W[6];
        phi0 = v1 != 0.0 || v2 != 0.0 ? atan2(v2, v1) : 0.0;
    }
    const double fscale = fabs(q[0]) + hypot(q[1], q[2]) + 1e-300;
    double phi = phi0;
    bool found = slide_newton(L, q, mu, max_iter, tol, fscale, &phi);
    if (!found) {
        phi = phi0;
        found = slide_scan(L, q, mu, tol, fscale, phi0, &phi);
    }
    if (found) {
        slide_eval e;
        if (slide_at(L, q, mu, phi, &e) && e.rn > 0.0) {
            x[0] = e.rn;
            x[1] = -mu * e.rn * cos(phi);
            x[2] = -mu * e.rn * sin(phi);
            if (accept(L, q, mu, x, tol)) {
                memcpy(r, x, sizeof x);
                return DVI_LOCAL_SLIDE;
            }
        }
    }
    /* last resort: the projected fixed point on De Saxcé's map */
    if (!(L->lmax > 0.0)) return DVI_LOCAL_FAILED;
    const double eta = 1.0 / L->lmax;
    for (int i = 0; i < 3; i++) x[i] = isfinite(r[i]) ? r[i] : 0.0;
    ccp_project_friction(mu, x);
    for (int it = 0; it < 200 * max_iter; it++) {
        double u[3], y[3];
        mat3_vec(W, x, u);
        for (int i = 0; i < 3; i++) u[i] += q[i];
        u[0] += mu * hypot(u[1], u[2]);
        for (int i = 0; i < 3; i++) y[i] = x[i] - eta * u[i];
        ccp_project_friction(mu, y);
        double change = fabs(y[0] - x[0]) + fabs(y[1] - x[1]) + fabs(y[2] - x[2]);
        double size = fabs(y[0]) + fabs(y[1]) + fabs(y[2]);
        memcpy(x, y, sizeof x);
        if (change <= tol * size) break;
    }
    if (accept(L, q, mu, x, tol)) {
        memcpy(r, x, sizeof x);
        return DVI_LOCAL_FIXED_POINT;
    }
    return DVI_LOCAL_FAILED;
}
