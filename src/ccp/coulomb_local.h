/* dvicontact — internal: the exact solve of one contact's 3×3 Coulomb problem.
 *
 * Given a friction block's symmetric positive (semi)definite W = N_aa (3×3,
 * rows n, t1, t2), the rest q of its velocity (u = W r + q, the other
 * blocks frozen) and μ ≥ 0, find
 *
 *     r ∈ K_μ = {‖r_t‖ ≤ μ r_n},   ũ = u + μ‖u_t‖ e_n ∈ K*_μ,   ⟨r, ũ⟩ = 0,
 *
 * Coulomb's law in De Saxcé's form. Its three cases (Alart & Curnier 1991;
 * Jourdan, Alart & Jean 1998; Bonnefon's and Acary et al.'s local solvers of
 * Siconos, fc3d_onecontact_*):
 *   take-off  r = 0, which is a solution exactly when q_n ≥ 0;
 *   stick     u = 0: r = −W⁺q (the pseudo-inverse: a semidefinite W), when
 *             W r + q = 0 holds and r lies in K_μ; for a semidefinite W,
 *             alternating projections look for another solution of
 *             W r + q = 0 (r + null(W)) inside K_μ;
 *   slide     r on the cone's surface, r = r_n (1, −μ cos φ, −μ sin φ), with
 *             u_n = 0 and u_t = α (cos φ, sin φ), α ≥ 0. For a direction φ
 *             the normal condition gives r_n = −q_n / a_n(φ), a = W d(φ),
 *             d = (1, −μ cos φ, −μ sin φ); what is left is one equation in
 *             φ, f(φ) = u_t × (cos φ, sin φ) = 0 with u_t·(cos φ, sin φ) ≥ 0.
 *             A safeguarded Newton on φ from the caller's guess (the
 *             previous impulse's direction) solves it; failing that, a scan
 *             of directions (96 spread over the valid ones, and more towards where
 *             a_n(φ) vanishes) brackets every root and bisection with
 *             Newton steps refines them (the valid root nearest the guess
 *             is taken: Coulomb's law may have several solutions).
 * Anisotropic W (a box corner: normal and tangent rows coupled, tangents
 * of different stiffness) is handled by the slide equation as it stands;
 * a singular tangent block (W semidefinite) by the pseudo-inverse and by
 * the slide equation, which does not invert W. μ = 0 is the frictionless
 * contact: r = (−q_n / W_nn, 0, 0) when q_n < 0 (reported as a stick).
 * When no case applies (a_n(φ) ≤ 0 somewhere, or rounding at the stick–slip
 * boundary), a projected fixed point r ← Π_K(r − η ũ(r)), η = 1/λmax(W),
 * is tried; its answer is kept only if its residual is small. Otherwise
 * the solve reports failure and leaves r as it was given.
 */
#ifndef DVI_COULOMB_LOCAL_H
#define DVI_COULOMB_LOCAL_H

#include <stdbool.h>

/* What the solve of one contact found. */
typedef enum ccp_local_case {
    DVI_LOCAL_FAILED = -1,     /* no answer: r is left as given */
    DVI_LOCAL_TAKEOFF = 0,     /* r = 0 (q_n ≥ 0) */
    DVI_LOCAL_STICK = 1,       /* u = 0, r inside (or on) the cone */
    DVI_LOCAL_SLIDE = 2,       /* r on the cone's surface, u_n = 0, u_t against r_t */
    DVI_LOCAL_FIXED_POINT = 3  /* the projected fixed point's answer (residual checked) */
} ccp_local_case;

/* One block's W with what the solves reuse: prepared once per solve. */
typedef struct ccp_coulomb_local {
    double W[9];  /* N_aa, symmetric, row-major (n, t1, t2) */
    double Wp[9]; /* its pseudo-inverse (eigenvalues below 1e-12 λmax taken as zero) */
    double lmax;  /* its largest eigenvalue */
    bool singular; /* W has a null direction (then Wp W ≠ I) */
} ccp_coulomb_local;

/* Prepares L from W (row-major 3×3; symmetrised). Returns 0, or −1 when W
 * is not finite or has an eigenvalue below −1e-9 λmax (not semidefinite). */
int ccp_coulomb_local_prepare(const double W[9], ccp_coulomb_local* L);

/* Solves the local problem of L, q, μ (see above). r[3] holds a guess on
 * entry (its direction seeds the slide's Newton; it need not be feasible)
 * and the answer on return. max_iter bounds the Newton steps of one root
 * search (≥ 1), tol is the relative tolerance on the direction φ and on the
 * slide equation. Returns the case found, or DVI_LOCAL_FAILED (r unchanged). */
ccp_local_case ccp_coulomb_local_solve(const ccp_coulomb_local* L, const double q[3], double mu, int max_iter,
                                       double tol, double r[3]);

/* The local residual of r: ‖r − Π_K(r − η ũ)‖ / max(‖r‖, η‖u‖, η‖q‖),
 * u = W r + q, η = 1/λmax (0 when the scale is 0). */
double ccp_coulomb_local_residual(const ccp_coulomb_local* L, const double q[3], double mu, const double r[3]);

#endif /* DVI_COULOMB_LOCAL_H */
