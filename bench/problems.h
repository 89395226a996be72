/* dvicontact — reproducible CCP problem generators for benchmarks and tests.
 *
 * Every generator fills a dvi_gen_problem whose member `p` is a ready-to-solve
 * dvi_ccp_problem in factor form (D, M⁻¹). All arrays are owned by the struct
 * and released by dvi_gen_free(). `p.D` points at the struct's own member `D`,
 * so a dvi_gen_problem must not be copied or moved by value once generated
 * (pass it by pointer).
 *
 * Conventions (shared by all generators)
 * --------------------------------------
 * Bodies. Only free (dynamic) bodies appear in D and in inv_mass; fixed bodies
 * (ground, floor, walls) are not bodies of the problem at all: a constraint
 * with a fixed body simply has entries for the free body only. Body b owns
 * rows 6b..6b+5 of D (linear x,y,z then angular x,y,z, world frame), and
 * inv_mass[36b..36b+35] is its 6×6 M⁻¹ block, row-major: diag(1/m) in the
 * linear part and the inverse world inertia in the angular part (the random
 * family uses general SPD blocks instead).
 *
 * Contact rows. A contact at point x has a unit normal n pointing from body A
 * to body B (B is the body "above" or "outside"; a fixed body is always A),
 * and tangents t1, t2 with (n, t1, t2) orthonormal and right-handed. For a body
 * with centre c the Jacobian row of direction d at x is [d, (x−c)×d]. The D
 * column of direction d is +that row for B and −that row for A, so that
 * Dᵀv is the velocity of B minus the velocity of A at x along d. A FRICTION
 * block has its three columns in the order n, t1, t2. Entries that are exactly
 * zero are not stored; row indices in each column are strictly increasing.
 *
 * Right-hand side. r = b + Dᵀ (v + h M⁻¹ f), with f the gravity force
 * (0, 0, −m g) on each body (no torque), v the current velocity and
 * b_n = Φ/h on contact normals (Φ = 0 for touching bodies), 0 elsewhere.
 * Then u = N γ + r is the relative velocity (B minus A) after the step.
 *
 * Determinism. All randomness comes from a splitmix64 stream seeded by the
 * caller; body order and contact order depend only on the arguments, never on
 * the platform or on memory addresses. All generators run in time linear in
 * the size of the problem.
 *
 * Errors. DVI_ERR_INVALID_ARG for out-of-range arguments (including sizes
 * that would overflow int32 row or entry counts), DVI_ERR_NOMEM when an
 * allocation fails. On any error *out is left zeroed (nothing to free).
 */
#ifndef DVI_BENCH_PROBLEMS_H
#define DVI_BENCH_PROBLEMS_H

#include "dvi/ccp.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dvi_gen_problem {
    dvi_ccp_problem p;        /* ready to solve; points into the arrays below */
    dvi_csc D;                /* factor form */
    int32_t* colptr; int32_t* rowind; double* values;
    double* inv_mass;         /* [36*body_count] */
    double* r;                /* [rows] */
    dvi_ccp_block* blocks;
    int32_t contacts;         /* number of contact blocks */
    int32_t bilateral;        /* number of bilateral rows */
    char family[32];          /* "stack", "granular", "sphere_stack", "random" */
    /* after dvi_gen_use_frames: the contacts as frames (p.frames) */
    dvi_ccp_frames frames;
    int32_t *fr_block, *fr_body;
    double *fr_frame, *fr_arm;
} dvi_gen_problem;

/* Gives every FRICTION block whose columns have the contact structure of the
 * conventions below (on one or two bodies, orthonormal directions, angular
 * parts ρ × d) to the solver by its frame (dvi_ccp_frames) instead of its
 * columns: ρ = ½ Σ_q d_q × (ρ × d_q) recovers each lever arm, and a block is
 * converted only when its columns are rebuilt from the frame to 1e-12.
 * Returns the number of blocks converted, or −1 when out of memory. */
int32_t dvi_gen_use_frames(dvi_gen_problem* g);

/* Frees and zeroes; safe on a zeroed struct (and on NULL). */
void dvi_gen_free(dvi_gen_problem* g);

/* "sphere_stack": N spheres (radius R, mass m, solid-sphere inertia 2/5 m R²)
   stacked vertically on a fixed ground at rest, gravity g, step h, friction mu:
   one FRICTION block per contact, contact k (0 = ground) between sphere k-1 and
   k (sphere k is body k, centre (0, 0, R + 2kR); normal +z, t1 = +x, t2 = +y).
   Exact answer: normal impulse at contact k = (N-k)*m*g*h, tangential = 0.
   Requires n >= 0, radius > 0, mass > 0, mu >= 0, g >= 0, h > 0. */
dvi_status dvi_gen_sphere_stack(int32_t n, double radius, double mass, double mu, double g, double h,
                                dvi_gen_problem* out);

/* "stack": `columns` columns of `height` boxes on fixed ground, gravity
   9.81 m/s², at rest (Φ = 0) but with small reproducible random horizontal
   velocities (vx, vy uniform in ±0.01 m/s, seeded). Boxes are 1 × 1 × 0.5 m
   (x × y × z), 500 kg (density 1000 kg/m³), axis-aligned; columns stand on a
   square-ish grid with 1.5 m spacing (0.5 m gaps, no contact between columns).
   Every interface (ground–box and box–box) has 4 corner contacts (redundant,
   as in real box stacks), normal +z, t1 = +x, t2 = +y.
   Body order: column c, level j -> body c*height + j (j = 0 on the ground).
   Contact order: column by column, interface j (0 = ground) upwards, corners
   (−x,−y), (+x,−y), (−x,+y), (+x,+y). contacts = columns*height*4.
   Exact answer at rest: the 4 normal impulses at interface j sum to
   (height − j)·m·g·h when the boxes stick. */
dvi_status dvi_gen_box_stacks(int32_t columns, int32_t height, double mu, double h, uint64_t seed,
                              dvi_gen_problem* out);

/* "granular": equal spheres (radius 0.01 m, glass 2500 kg/m³) on a face-centred
   cubic lattice (spacing √2·R, each interior sphere touching 12 neighbours)
   filling a box nx × ny × nz lattice sites (nx = ny), resting on a fixed floor
   (z = 0) inside four fixed walls that touch the outer spheres; gravity
   9.81 m/s²; small random velocities (linear ±0.01 m/s, angular ±1 rad/s per
   component, seeded); friction mu everywhere. Touching pairs are found with
   a uniform grid (linear time) and all have Φ = 0. The lattice dimensions are
   chosen so that the contact count is as close as possible to
   target_contacts (aspect nz/nx between 1/2 and 2).
   Body order: layer by layer upwards (k, then j, then i). Contact order: for
   each sphere in body order, its floor/wall contacts (floor, x−, x+, y−, y+)
   and then its contacts with higher-numbered spheres in increasing order;
   for a sphere pair the lower-numbered sphere is A, n = (c_B − c_A)/2R.
   Requires target_contacts >= 1. */
dvi_status dvi_gen_granular(int32_t target_contacts, double mu, double h, uint64_t seed, dvi_gen_problem* out);

/* "random": a random well-posed problem: `bodies` free bodies with random SPD
   6×6 inverse-mass blocks (eigenvalues in [0.5, 2]), `contacts` FRICTION
   blocks each between a random body and either another body or the ground
   (random unit normal, orthonormal tangents, random contact offset giving
   angular Jacobian parts), plus `bilateral` linearly independent bilateral
   rows placed FIRST (one 1-row BILATERAL block each; bilateral row i acts on
   body i mod bodies, sometimes also on a second body), μ uniform in [0.1, 1].
   r = b + Dᵀw with w a random velocity vector (mixed signs: some contacts
   separate, some stick, some slide) and b_n = gap/h ≥ 0 (zero on about two
   thirds of the contacts, b = 0 on bilateral rows), which makes the problem
   solvable. Deterministic from seed.
   Requires bodies >= 0, contacts >= 0, 0 <= bilateral <= 6*bodies, and
   bodies >= 1 when contacts > 0. */
dvi_status dvi_gen_random(int32_t bodies, int32_t contacts, int32_t bilateral, uint64_t seed,
                          dvi_gen_problem* out);

#ifdef __cplusplus
}
#endif
#endif /* DVI_BENCH_PROBLEMS_H */
