/* dvicontact — the cone-complementarity problem (CCP) and its solvers.
 *
 * This header stands alone: an embedding multibody code can hand its own
 * sparse problem to the solvers without creating any body.
 *
 * The problem (sign conventions used everywhere in the library):
 *
 *     find γ ∈ K,  u = N γ + r ∈ K*,  ⟨γ, u⟩ = 0,
 *
 * which is the optimality condition of   min ½ γᵀNγ + rᵀγ  over γ ∈ K.
 * N is symmetric positive semidefinite, given either
 *   - as factors: N = Dᵀ M⁻¹ D + diag(compliance), with D sparse (CSC,
 *     6·bodies × rows, one column per constraint row) and M⁻¹ block-diagonal
 *     (one symmetric 6×6 block per body); N is applied matrix-free; or
 *   - directly: N = W + diag(compliance), W sparse (CSC, rows × rows),
 *     the Delassus matrix, as FCLIB and other codes exchange problems.
 * K is a product of one set per constraint block (dvi_block_kind); K* its
 * dual. The rows of the problem are the rows of the blocks, in block order.
 */
#ifndef DVI_CCP_H
#define DVI_CCP_H

#include "base.h"

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

/// A compressed-sparse-column matrix, borrowed from the caller (CSparse
/// layout, 0-based). Column j holds entries colptr[j] .. colptr[j+1]-1.
typedef struct dvi_csc {
    int32_t rows;           ///< number of rows
    int32_t cols;           ///< number of columns
    const int32_t* colptr;  ///< [cols + 1], colptr[0] == 0, non-decreasing
    const int32_t* rowind;  ///< [colptr[cols]] row index of each entry
    const double* values;   ///< [colptr[cols]] value of each entry
} dvi_csc;

/// Kinds of constraint block. A block is a group of consecutive rows
/// sharing one set of K. New kinds are appended; values are stable.
typedef enum dvi_block_kind {
    /// 1 row, γ free, u = 0 (joint equation, motor).
    DVI_BLOCK_BILATERAL = 1,
    /// 1 row, frictionless contact: γ ≥ 0, u ≥ 0, γ·u = 0.
    DVI_BLOCK_FRICTIONLESS = 2,
    /// 3 rows (normal n, tangents t1, t2): Coulomb cone ‖γ_t‖ ≤ μ γ_n.
    DVI_BLOCK_FRICTION = 3,
    /// 6 rows (n, t1, t2, spin s, roll r1, roll r2): sliding cone
    /// ‖γ_t‖ ≤ μ γ_n, spinning |γ_s| ≤ μ_spin γ_n, rolling ‖γ_r‖ ≤ μ_roll γ_n.
    DVI_BLOCK_FRICTION_ROLLING = 4
} dvi_block_kind;

/// One constraint block.
typedef struct dvi_ccp_block {
    dvi_block_kind kind;
    double mu;      ///< sliding friction coefficient (≥ 0), FRICTION and FRICTION_ROLLING
    double mu_spin; ///< spinning coefficient (≥ 0, length units of the spin row), FRICTION_ROLLING
    double mu_roll; ///< rolling coefficient (≥ 0, length units of the roll rows), FRICTION_ROLLING
} dvi_ccp_block;

/// Number of rows a block kind occupies (0 for an unknown kind).
DVI_API int32_t dvi_block_rows(dvi_block_kind kind);

/// Contact blocks given by their frame and lever arms instead of columns of
/// D (factor form only): the compact form of the rows a contact between two
/// rigid bodies produces. Contact c couples bodies a = body[2c] and
/// b = body[2c+1] (indices of the factor form's bodies, or −1: a body not in
/// the problem, such as a fixed one) at a point p; d_0, d_1, d_2 =
/// frame[9c..9c+8] are the normal n and the tangents t1, t2 (world frame),
/// ρ_a, ρ_b = arm[6c..6c+5] are p minus each body's centre. Its rows, in
/// order, have the columns
///     row q < 3:       J_b = [d_q, ρ_b × d_q],    J_a = −[d_q, ρ_a × d_q]
///     row q = 3 .. 5:  J_b = ℓ [0, d_{q−3}],      J_a = −ℓ [0, d_{q−3}]
/// (linear part first; rows 3–5, the spin and rolling rows of a
/// FRICTION_ROLLING block, are angular, scaled by ℓ = ell[c], or 1 without
/// ell). A FRICTIONLESS block has row 0 only, a FRICTION block rows 0–2.
/// The columns of D for these rows must be empty. The solvers never form
/// the columns: a product reads the 15 numbers of a contact instead of the
/// 36 of its three columns (docs/solvers.md).
typedef struct dvi_ccp_frames {
    int32_t count;          ///< contacts given this way
    const int32_t* block;   ///< [count] the block of each contact, strictly increasing
    const int32_t* body;    ///< [2 count] bodies a, b of each contact (−1: none)
    const double* frame;    ///< [9 count] n, t1, t2 of each contact (world)
    const double* arm;      ///< [6 count] ρ_a, ρ_b of each contact (world)
    const double* ell;      ///< [count] scale of the angular rows, or NULL (1)
    /// Instead of frame and arm (give one pair): the same numbers in single
    /// precision. The products still sum in double; the rows are those of
    /// the rounded numbers (a relative change of about 6e-8), and an
    /// iteration reads 60 bytes a contact fewer. The world gives its
    /// contacts this way.
    const float* frame_f;   ///< [9 count] n, t1, t2 of each contact (world)
    const float* arm_f;     ///< [6 count] ρ_a, ρ_b of each contact (world)
} dvi_ccp_frames;

/// A problem split over several processes (a domain decomposition), given
/// by each process for its part: the blocks and bodies it can see, its own
/// and copies of its neighbours' (ghosts), with the same rows and bodies as
/// the whole problem's. With it every sum the solvers form is exact (order
/// free, settings.exact_sums) over the blocks and bodies the process owns,
/// then summed over the processes by `sum`; every maximum likewise by `max`;
/// and after every M⁻¹ D x the entries of the bodies it does not own are
/// made their owners' by `exchange`. Every process then takes the same
/// steps on its rows as one process on the whole problem, to the bit, when
/// each body's contacts are in the whole problem's relative order (docs/scale.md).
/// Factor form with frames only (no W, no columns of D, no G); solvers apgd
/// and jacobi. All fields NULL: exact sums on one process.
typedef struct dvi_ccp_shared {
    const uint8_t* block_own; ///< [block_count] 1: this process counts the block; NULL: all
    const uint8_t* body_own;  ///< [body_count] 1: this process owns the body; NULL: all
    void* ctx;                ///< passed to the three functions
    /// v: 6 numbers a body in body order; set the bodies this process does not own. NULL: none.
    void (*exchange)(void* ctx, double* v);
    /// x[0 … n) summed elementwise over the processes, in place (integers: the order is free). NULL: one process.
    void (*sum)(void* ctx, int64_t* x, int32_t n);
    /// x[0 … n) the largest over the processes, in place (a NaN wins). NULL: one process.
    void (*max)(void* ctx, double* x, int32_t n);
} dvi_ccp_shared;

/// A CCP as handed over by the caller. All arrays are borrowed and must
/// stay valid and unchanged during a solve. Exactly one of the two operator
/// forms is given: (D, inv_mass or inv_mass_rigid) or W.
typedef struct dvi_ccp_problem {
    int32_t rows;                ///< m, total number of rows (sum of block rows)
    int32_t block_count;         ///< number of blocks
    const dvi_ccp_block* blocks; ///< [block_count], rows follow block order

    /* --- operator form 1: factors --- */
    int32_t body_count;          ///< bodies in D (D has 6·body_count rows)
    const dvi_csc* D;            ///< 6·body_count × m; in each column the row indices must be
                                 ///< strictly increasing. Rows 6b..6b+5 are body b's
                                 ///< (linear x,y,z, angular x,y,z) velocity components.
    const double* inv_mass;      ///< [36·body_count], body b's symmetric 6×6 M⁻¹ block,
                                 ///< row-major at 36·b (zero block = fixed body)
    const dvi_ccp_frames* frames; ///< contact blocks given by frames instead of D's columns, or NULL

    /* --- operator form 2: Delassus matrix --- */
    const dvi_csc* W;            ///< m × m, symmetric (duplicates are summed)

    const double* r;             ///< [m] right-hand side
    const double* compliance;    ///< [m] added to the diagonal of N (≥ 0), or NULL

    /// Factor form, instead of inv_mass (give exactly one of the two when
    /// body_count > 0): every body's M⁻¹ as a rigid body's, [1/m I, 0; 0, A],
    /// in 10 numbers at 10·b: 1/m, then A (the symmetric 3×3 inverse inertia,
    /// world frame) row-major; all zeros = fixed body. 80 bytes a body instead
    /// of 288, the layout the solvers use for rigid bodies (same results).
    const double* inv_mass_rigid;

    /// Factor form only, or NULL: a low-rank term taken off the operator,
    /// N = Dᵀ M⁻¹ D + diag(compliance) − Gᵀ G, with G k × m (k ≥ 1; in each
    /// column the row indices strictly increasing). The caller guarantees
    /// that N stays positive semidefinite: a world passes the Schur
    /// complement of its joint rows this way, G = L⁻¹ P N_BC (docs/world.md),
    /// so that the contacts are solved matrix-free with the joints
    /// eliminated. Every solver applies it; dvi_ccp_velocity and
    /// dvi_solver_velocity give M⁻¹ D γ without it.
    const dvi_csc* G;

    /// NULL, or this process's part of a problem split over processes (dvi_ccp_shared).
    const dvi_ccp_shared* shared;
} dvi_ccp_problem;

/// An empty problem (all zero / NULL), to be filled field by field.
DVI_API dvi_ccp_problem dvi_ccp_problem_empty(void);

/// Checks dimensions, index ranges, finiteness, μ ≥ 0, the block layout and
/// the symmetry of W and of the M⁻¹ blocks. Returns DVI_OK or
/// DVI_ERR_INVALID_ARG / DVI_ERR_NOMEM and writes a message naming the place
/// (e.g. "blocks[3].mu: must be >= 0 (got -0.2)") into msg (may be NULL).
DVI_API dvi_status dvi_ccp_validate(const dvi_ccp_problem* p, char* msg, size_t msg_size);

/// Convenience: the 6×6 inverse-mass block of a rigid body with the given
/// mass (kg) and world-frame inertia tensor (kg·m², row-major 3×3), written
/// row-major into out[36]. mass == 0 (with a zero inertia) gives a fixed
/// body. Errors: negative/non-finite mass, non-symmetric or singular inertia.
DVI_API dvi_status dvi_inv_mass_block(double mass, const double inertia[9], double out[36]);

/// Quality measures of a candidate γ, the same for every solver.
/// The CCP residual is the natural-map measure of the FCLIB/Siconos
/// community without the De Saxcé term:
///   e² = Σ_blocks ‖γ_a − Π_{K_a}(γ_a − u_a)‖²,
///   residual = e / max(‖r‖, ‖γ‖, ‖u‖)   (e itself when that max is < 1e-300).
/// residual_coulomb is the same with u_a replaced by the De Saxcé velocity
/// ũ_a = u_a + (μ‖u_t‖ [+ μ_spin|u_s| + μ_roll‖u_r‖]) e_n on friction blocks.
typedef struct dvi_ccp_metrics {
    double residual;          ///< CCP residual (see above), dimensionless
    double residual_coulomb;  ///< Coulomb residual (see above), dimensionless
    double residual_velocity; ///< velocity residual (see above), dimensionless: the natural map on
                              ///< (η_a γ_a, u_a), η_a the mean diagonal of block a of N
    double residual_feasibility; ///< feasibility residual, dimensionless: in velocities, the rows on which
                              ///< every law agrees (a bilateral row's u; a frictionless row's
                              ///< min(η γ, u); a friction block's min(0, u_n) and min(0, η γ_n)),
                              ///< over max(‖r‖, ‖Nγ‖, ‖u‖). Every solver's "converged" needs it
                              ///< ≤ tolerance (docs/solvers.md, "What a status means")
    double residual_block;    ///< block residual, dimensionless: the largest over blocks of each block's
                              ///< own error, the natural map on (η_a γ_a, u_a) over that block's scale
                              ///< max(‖η_a γ_a‖, ‖r_a‖, ‖u_a‖, ‖u_a − r_a‖, 1e-6 min(‖r‖, η_a ‖γ‖)/√blocks),
                              ///< η_a the block's mean diagonal and again its smallest diagonal entry, so
                              ///< that a block of small impulses beside large ones is measured in its own
                              ///< units. The CCP solvers' "converged" needs it ≤ settings.block_tolerance
                              ///< (docs/solvers.md)
    double residual_block_coulomb; ///< the same with the De Saxcé velocity ũ_a in place of u_a: the
                              ///< Coulomb solvers' "converged" needs it ≤ settings.block_tolerance
    double cone_violation;    ///< max over blocks of ‖γ_a − Π_K(γ_a)‖ (impulse units)
    double dual_violation;    ///< max over blocks of ‖u_a − Π_K*(u_a)‖ (velocity units)
    double complementarity;   ///< max over blocks of |⟨γ_a, u_a⟩|
    double objective;         ///< ½ γᵀNγ + rᵀγ
} dvi_ccp_metrics;

/// Evaluates the metrics of γ [m] for a problem (validates it first).
/// Allocates temporary memory; meant for tests and tools, not inner loops.
DVI_API dvi_status dvi_ccp_evaluate(const dvi_ccp_problem* p, const double* gamma, dvi_ccp_metrics* out);

/// Velocity change produced by impulses γ: dv = M⁻¹ D γ, written to
/// dv[6·body_count]. Requires the factor form.
DVI_API dvi_status dvi_ccp_velocity(const dvi_ccp_problem* p, const double* gamma, double* dv);

/// The friction law a solver's answer satisfies (docs/formulation.md).
typedef enum dvi_friction_law {
    /// The cone complementarity problem above (Anitescu–Tasora): a convex
    /// relaxation of Coulomb's law. A sliding contact also separates at the
    /// normal velocity μ‖u_t‖.
    DVI_LAW_CCP = 0,
    /// Coulomb's law: γ ∈ K, ũ = u + μ‖u_t‖ e_n ∈ K*, ⟨γ, ũ⟩ = 0 on each
    /// friction block (De Saxcé's form; the spin and rolling rows of a
    /// FRICTION_ROLLING block add μ_spin|u_s| + μ_roll‖u_r‖): a sliding
    /// contact keeps u_n = 0. Not an optimisation problem: solutions may be
    /// several or none. Its residual is metrics.residual_coulomb.
    DVI_LAW_COULOMB = 1
} dvi_friction_law;

/// Short name of a law ("ccp", "coulomb"), NULL for an unknown value.
DVI_API const char* dvi_friction_law_string(dvi_friction_law law);

/// Settings shared by all solvers, plus solver-specific knobs.
/// Always start from dvi_default_solver_settings().
typedef struct dvi_solver_settings {
    int32_t max_iterations; ///< iterations (sweeps) at most; default 1000
    double tolerance;       ///< on the residual of the problem the solver targets (target_residual):
                            ///< the CCP residual, Lemke's LCP, or the Coulomb residual; default 1e-8 (a world's step's too)
    double block_tolerance; ///< on every block's own residual (metrics.residual_block, or
                            ///< residual_block_coulomb for the solvers of Coulomb's law; Lemke's on its
                            ///< pyramids): each block within this fraction of its own scale. 0, the
                            ///< default: automatic, 100 √blocks × tolerance within [1e-6, 0.1], what the global
                            ///< residual already implies for a block of typical scale, so that the test
                            ///< catches the blocks whose scale hides them (result.block_tolerance says
                            ///< the value used); > 0: that value
    bool warm_start;        ///< use γ passed in as the initial guess; default false (γ = 0)
    double warm_start_scale; ///< with warm_start, the guess is first multiplied by this, in (0, 1];
                             ///< default 1. Below 1 it damps a guess carried over from an earlier
                             ///< step (0.85 cuts APGD's iterations on a bed a rover drives over
                             ///< by about a tenth, solvers.md)
    int32_t threads;        ///< OpenMP threads for products, 0 = library default; default 1
    bool exact_sums;        ///< every sum over blocks, rows and bodies exact (independent of their order
                            ///< and of how a problem is split over processes: dvi_ccp_shared), each block's
                            ///< terms in its own order; default false (sums in fixed chunks: the same bits
                            ///< for any thread count, faster; docs/scale.md gives the cost)
    struct {
        bool restart;       ///< adaptive restart (gradient test); default true
        double grow;        ///< factor on L when backtracking; default 2.0
        double shrink;      ///< factor on L after each iteration; default 0.9
        bool precondition;  ///< scale each block by the inverse mean of its diagonal of N
                            ///< (exact: cones are invariant under positive scaling), and the
                            ///< bilateral rows, when at most 192, by the pseudo-inverse of
                            ///< their own block of N (exact: they have no cone); default true
    } apgd;
    struct {
        double omega;       ///< over-relaxation ω in (0, 2); default 1.0
        bool symmetric;     ///< forward then backward sweep; default false
        int32_t block_iterations; ///< projected-gradient steps on a block's own k×k problem per
                                  ///< visit (≥ 1; 1 = one Tasora–Anitescu step); default 8
    } pgs;
    struct {
        double omega;       ///< relaxation ω in (0, 2) of the simultaneous update; default 1.5
    } jacobi;
    struct {
        int32_t friction_directions; ///< k, edges of the friction pyramid (≥ 3); default 4
        int32_t max_pivots;          ///< 0 = 50·LCP size; default 0
        int32_t max_lcp_size;        ///< refuse larger LCPs (dense memory); default 4000
        bool coulomb;                ///< false (default): the CCP with each cone replaced by its
                                     ///< pyramid (a positive semidefinite LCP; agrees with the
                                     ///< cone solvers up to the pyramid). true: the Coulomb LCP of
                                     ///< Anitescu–Potra 1997 (sliding contacts keep u_n = 0).
        bool orient;                 ///< true (default): each pyramid is turned so that an edge
                                     ///< points along the previous impulse's tangential part (the
                                     ///< guess, with warm_start), else against the tangential
                                     ///< velocity: k = 4 then decides stick and slip, and the sliding
                                     ///< direction, as the cone does (solvers.md); false: each
                                     ///< pyramid's edges lie along its contact's tangents
        double orient_grid;          ///< rad ≥ 0: the turn is rounded to a multiple of this (modulo
                                     ///< the pyramid's 2π/k), so that a contact whose impulse turns
                                     ///< slowly keeps its pyramid and Lemke its warm start; the edge
                                     ///< is then at most orient_grid/2 off (k = 4 holds ≥ 99.6 % of
                                     ///< μ at the default). 0: exact. Default 0.5° (0.0087266 rad)
    } lemke;
    struct {
        int32_t local_iterations; ///< iterations at most of the exact solve of one contact's 3×3 Coulomb
                                  ///< problem per visit (≥ 1); default 20
        double local_tolerance;   ///< relative tolerance of that local solve (> 0); default 1e-14
        double omega;             ///< relaxation ω in (0, 2] of each contact's update; default 1.0
    } nsgs;
    struct {
        int32_t max_dense_rows;   ///< largest problem (rows) whose Newton systems are factored densely
                                  ///< (LU, 16 m² bytes); larger ones are solved by preconditioned GMRES;
                                  ///< default 1000 (measured crossover, docs/solvers.md)
        bool line_search;         ///< globalising line search on the merit ½‖Φ‖²; default true
        double rho;               ///< Alart–Curnier parameter ρ > 0, scaled per contact by the inverse of
                                  ///< its mean diagonal of N; default 1.0
    } newton;
    struct {
        char inner[16];           ///< the CCP solver of each fixed-point step: "apgd" (default) or "pgs"
        int32_t inner_iterations; ///< iterations at most of each inner CCP solve; default 1000
        double damping;           ///< θ in (0, 1] of the update s ← θ μ‖u_t‖ + (1−θ) s; default 1.0
    } desaxce;
    dvi_allocator allocator; ///< where a solver takes its memory (base.h); default all NULL: libc.
                             ///< A solver keeps the one it was created with (dvi_solver_set_settings
                             ///< cannot change it); dvi_ccp_solve uses it
    uint32_t internal_cookie; ///< set by dvi_default_solver_settings; do not touch
} dvi_solver_settings;

/// Defaults for every field (see the field comments).
DVI_API dvi_solver_settings dvi_default_solver_settings(void);

/// How a solve ended.
typedef enum dvi_solve_status {
    DVI_SOLVE_CONVERGED = 0,      ///< residual of the targeted problem ≤ tolerance (re-checked)
    DVI_SOLVE_MAX_ITERATIONS = 1, ///< iteration budget spent; best iterate returned
    DVI_SOLVE_DIVERGED = 2,       ///< iterates grew without bound or became non-finite
    DVI_SOLVE_BAD_INPUT = 3,      ///< the problem or settings failed validation
    DVI_SOLVE_RAY = 4,            ///< Lemke: secondary ray (no solution found)
    DVI_SOLVE_PIVOT_LIMIT = 5,    ///< Lemke: pivot budget spent (cycling suspected)
    DVI_SOLVE_INFEASIBLE = 6      ///< the CCP has no solution, with a certificate (message): a block that
                                  ///< nothing can move whose r_a lies outside its dual cone, or impulses
                                  ///< growing along a direction d in K with N d ≈ 0 and rᵀd < 0
} dvi_solve_status;

/// Short name of a solve status ("converged", "max_iterations", ...).
DVI_API const char* dvi_solve_status_string(dvi_solve_status s);

/// What every solver reports.
typedef struct dvi_solve_result {
    dvi_solve_status status;
    int32_t iterations;       ///< iterations / sweeps / pivots (Lemke) performed
    bool warm_start_rejected; ///< settings.warm_start was set, and the initial guess, projected onto
                              ///< the cones, had a higher objective than γ = 0: the solve started
                              ///< from 0 instead (apgd, pgs, jacobi)
    double target_residual;   ///< residual of the problem the solver targets: for apgd/pgs/jacobi
                              ///< the larger of metrics.residual and residual_velocity; the pyramid
                              ///< LCP's for lemke;
                              ///< metrics.residual_coulomb for the solvers of Coulomb's law (nsgs,
                              ///< newton, desaxce), or when that is within the tolerance the larger of
                              ///< it and residual_feasibility. When a block's own residual (on the
                              ///< pyramids for lemke) is above settings.block_tolerance, that residual
                              ///< times tolerance / block_tolerance if larger (then above the tolerance)
    dvi_ccp_metrics metrics;  ///< recomputed from scratch on the returned γ
    double seconds;           ///< wall time of the solve (setup included)
    double bytes_per_iteration; ///< memory traffic of one iteration, bytes read plus written by its
                              ///< passes over the problem's arrays and vectors, from the layout
                              ///< (docs/performance.md gives the model); averaged over the solve
                              ///< (backtracking products included); 0 when not estimated (lemke)
    double block_tolerance;   ///< the block tolerance the status was judged by (settings.block_tolerance,
                              ///< or its automatic value for this problem)
    int32_t pyramid_edges;    ///< which cones the answer is for: 0, the friction cones; k (lemke), each
                              ///< friction block's cone replaced by an inscribed k-sided pyramid,
                              ///< turned as dvi_solver_pyramid says (its answer is judged on them)
    int32_t history_length;   ///< residuals written into the buffer of dvi_solver_record_history
                              ///< by this solve (0 without one)
    char message[256];        ///< what went wrong, naming the place, or why the solve stopped
                              ///< (DVI_NOT_CONVERGED): the text dvi_error_message() gives; ""
                              ///< when converged
} dvi_solve_result;

/// A solver instance: a chosen algorithm, its settings and its workspace,
/// reused from solve to solve (memory grows only when a problem grows).
/// Not thread-safe: one instance per thread.
typedef struct dvi_solver dvi_solver;

/// The block tolerance a solve of a problem of `block_count` blocks is judged
/// by under `settings`: settings->block_tolerance, or when that is 0
/// (automatic) 100 √block_count × settings->tolerance within [1e-6, 0.1]. NaN when
/// settings is NULL.
DVI_API double dvi_block_tolerance(const dvi_solver_settings* settings, int32_t block_count);

/// Number of built-in solvers and their names ("apgd", "pgs", "jacobi",
/// "lemke" for the CCP; "nsgs", "newton", "desaxce" for Coulomb's law).
DVI_API int32_t dvi_solver_count(void);
DVI_API const char* dvi_solver_name(int32_t index);
/// One-line description of solver `index`.
DVI_API const char* dvi_solver_summary(int32_t index);
/// The law solver `index` solves with default settings (DVI_LAW_CCP for an
/// unknown index).
DVI_API dvi_friction_law dvi_solver_law(int32_t index);
/// Whether solver `index` solves `law` on problems that hold blocks of
/// `kind`: the law is its own (dvi_solver_law) or one a setting picks (lemke:
/// settings.lemke.coulomb), and it does not refuse the kind (nsgs and newton
/// refuse DVI_BLOCK_FRICTION_ROLLING: dvi_solver_solve returns
/// DVI_ERR_INVALID_ARG, naming the block and the solvers that take it).
/// False for an unknown index, law or kind.
DVI_API bool dvi_solver_supports(int32_t index, dvi_friction_law law, dvi_block_kind kind);
/// The index of the built-in solver called `name`, or -1 (name unknown or NULL).
DVI_API int32_t dvi_solver_index(const char* name);
/// The law solver `index` solves under `settings` (lemke with
/// settings.lemke.coulomb: DVI_LAW_COULOMB); settings NULL: dvi_solver_law.
/// DVI_LAW_CCP for an unknown index.
DVI_API dvi_friction_law dvi_solver_law_with(int32_t index, const dvi_solver_settings* settings);
/// The setting that makes solver `index` solve the other law, as the scene
/// format spells it ("lemke.coulomb"), or NULL: none (or an unknown index).
DVI_API const char* dvi_solver_law_setting(int32_t index);
/// Whether solver `index` updates the blocks one after another, each from
/// the latest values of the others (Gauss–Seidel: pgs, nsgs), so that which
/// of two nearly dependent rows comes first decides how they share a load.
/// The world step keeps the joint rows in such a solver's problem rather
/// than eliminating them (docs/world.md). False for an unknown index.
DVI_API bool dvi_solver_sweeps_in_order(int32_t index);

/// Creates a solver by name. settings may be NULL (defaults).
/// Errors: unknown name or bad settings (DVI_ERR_INVALID_ARG), memory.
DVI_API dvi_status dvi_solver_create(const char* name, const dvi_solver_settings* settings, dvi_solver** out);
DVI_API void dvi_solver_destroy(dvi_solver* solver);
DVI_API const char* dvi_solver_get_name(const dvi_solver* solver);
/// The law this instance solves with its settings (lemke with
/// settings.lemke.coulomb: DVI_LAW_COULOMB, with friction pyramids).
DVI_API dvi_friction_law dvi_solver_get_law(const dvi_solver* solver);
DVI_API dvi_status dvi_solver_set_settings(dvi_solver* solver, const dvi_solver_settings* settings);

/// Solves p. gamma[m] is the initial guess when settings.warm_start is set
/// (otherwise it is overwritten with 0 first) and receives the solution.
/// The iterative solvers first project the guess onto the cones and keep
/// it only if its objective ½γᵀNγ + rᵀγ is at most that of γ = 0 (≤ 0):
/// a worse guess is replaced by 0 (result->warm_start_rejected), since an
/// iterate above γ = 0 adds kinetic energy that a capped iteration budget
/// may not remove.
/// Returns DVI_OK when converged, DVI_NOT_CONVERGED when the budget ran out
/// or the method stopped without a solution (see result->status), and an
/// error code (< 0) for bad input, in which case result->message says why.
/// result may be NULL.
DVI_API dvi_status dvi_solver_solve(dvi_solver* solver, const dvi_ccp_problem* p, double* gamma,
                                    dvi_solve_result* result);

/// Records the target residual of each iteration of the following solves
/// (sweep for pgs, jacobi and nsgs, pivot for lemke, outer iteration for
/// desaxce: its Coulomb residual) into buffer[0 … capacity−1],
/// from the start of the buffer at each solve; result->history_length says
/// how many were written. The buffer must stay valid until it is replaced;
/// buffer NULL (or capacity 0) stops recording. Errors: solver NULL,
/// capacity < 0, or buffer NULL with capacity > 0 (DVI_ERR_INVALID_ARG).
DVI_API dvi_status dvi_solver_record_history(dvi_solver* solver, double* buffer, int32_t capacity);

/// After a solve of a factor-form problem: the velocity change dv = M⁻¹ D γ
/// [6·body_count] of impulses γ [rows] (e.g. the solution), from the operator
/// the solver prepared for that solve: no setup, parallel on the solve's
/// threads, the same bits for any thread count. The problem of that solve
/// must still be valid and unchanged. Errors: no factor-form problem solved
/// yet (DVI_ERR_INVALID_ARG), NULL arguments.
DVI_API dvi_status dvi_solver_velocity(const dvi_solver* solver, const double* gamma, double* dv);

/// After a solve whose result has pyramid_edges = k > 0 (lemke): the pyramid
/// that stood for blocks[block]'s friction cone. Its k edges lie on the
/// cone, (1, μ cos θ_j, μ sin θ_j) in the block's rows (n, t1, t2), at
/// θ_j = turn[0] + 2πj/k; turn[1] is the rolling pyramid's of a
/// FRICTION_ROLLING block (the same form on its rolling rows), 0 otherwise.
/// Errors (DVI_ERR_INVALID_ARG): NULL arguments, no such solve since the
/// solver was created or lent memory, block out of range or not a friction
/// block.
DVI_API dvi_status dvi_solver_pyramid(const dvi_solver* solver, int32_t block, double turn[2]);

/// A block of memory lent to a solver (dvi_solver_lend).
typedef struct dvi_memory_block {
    void* data;
    size_t bytes;
} dvi_memory_block;

/// Lends the solver memory for the arrays a solve writes before it reads
/// them (its per-row vectors, 8 bytes a row each, of which APGD touches
/// eight; the diagonal of N; the per-contact scratch of the products) in the
/// following solves, until it is lent again; count 0 takes the loan back.
/// A caller that holds memory idle during its solves (a simulation's
/// collision buffers, say) so keeps these arrays out of its peak. Each array
/// that fits in a block (at a 4096-byte boundary) is placed there and the
/// solver's own copy is freed; the others stay in the solver's memory. The
/// blocks' contents are neither read nor kept from one solve to the next,
/// and the results do not depend on the loan (the same bits with and
/// without it). A solve's operator, which dvi_solver_velocity applies, lies
/// partly in the blocks: the caller must leave them untouched from a solve
/// to its last dvi_solver_velocity, and may write them before the next
/// solve (which writes before it reads). Lending again or taking the loan
/// back ends the last solve's operator: dvi_solver_velocity refuses until
/// the next solve. At most
/// DVI_SOLVER_LEND_MAX blocks. Errors: NULL solver, count out of range, a
/// block with NULL data and bytes > 0, NULL blocks with count > 0
/// (DVI_ERR_INVALID_ARG).
#define DVI_SOLVER_LEND_MAX 16
DVI_API dvi_status dvi_solver_lend(dvi_solver* solver, const dvi_memory_block* blocks, int32_t count);

/// One-shot convenience: create, solve, destroy. settings may be NULL (the
/// defaults).
DVI_API dvi_status dvi_ccp_solve(const dvi_ccp_problem* p, const char* solver_name,
                                 const dvi_solver_settings* settings, double* gamma, dvi_solve_result* result);

#ifdef __cplusplus
}
#endif
#endif /* DVI_CCP_H */
