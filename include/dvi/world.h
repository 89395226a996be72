/* dvicontact — rigid multibody systems with frictional contact, advanced by
 * DVI time stepping (Anitescu–Tasora; docs/formulation.md).
 *
 * A dvi_world owns bodies, shapes and joints, addressed by ids. Each step:
 * collide → assemble one CCP (joint rows, then contacts) → solve with the
 * selected solver (ccp.h) → update velocities → integrate positions.
 * With def.method = DVI_METHOD_DEM contacts are penalty forces instead and
 * the bodies are integrated explicitly (docs/dem.md).
 *
 * Conventions: SI units; world frame z up unless gravity says otherwise;
 * quaternions (w, x, y, z), unit length; inertia tensors row-major 3×3 about
 * the centre of mass, in the body frame; angular velocities in the world
 * frame. Ids are small value types: zero is null; an id from another world
 * (the worlds alive at one time have distinct tags) or beyond the world's
 * objects is refused with DVI_ERR_INVALID_ARG. Bodies, shapes and joints
 * live as long as their world: there is no destroy call for them yet (the
 * ids' generation is kept for it and is 1). Worlds are independent: the
 * only process-wide state is the set of tags in use (thread-safe; at most
 * 65,535 worlds alive at once, dvi_world_create then fails with
 * DVI_ERR_NOMEM). The library prints nothing; a log
 * callback receives messages if set.
 */
#ifndef DVI_WORLD_H
#define DVI_WORLD_H

#include "base.h"
#include "shape.h"
#include "ccp.h"

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Ids: index1 = index + 1 (0 = null); generation (1: objects are not
/// destroyed yet) and world, the owning world's tag, are checked on use.
typedef struct dvi_body_id { int32_t index1; uint16_t generation; uint16_t world; } dvi_body_id;
typedef struct dvi_shape_id { int32_t index1; uint16_t generation; uint16_t world; } dvi_shape_id;
typedef struct dvi_joint_id { int32_t index1; uint16_t generation; uint16_t world; } dvi_joint_id;

#define DVI_IS_NULL(id) ((id).index1 == 0)

typedef struct dvi_world dvi_world;

/// Log levels passed to the log callback.
typedef enum dvi_log_level { DVI_LOG_ERROR = 0, DVI_LOG_WARNING = 1, DVI_LOG_INFO = 2 } dvi_log_level;
typedef void dvi_log_fn(void* user, dvi_log_level level, const char* message);

/// Contact formulation of a world's step.
typedef enum dvi_method {
    DVI_METHOD_DVI = 0, ///< complementarity (CCP) time stepping (default; docs/formulation.md)
    DVI_METHOD_DEM = 1  ///< penalty ("smooth") contact, explicit integration (docs/dem.md)
} dvi_method;

/// DEM normal force law: F_n = f(δ/d) k_n δ − g(δ/d) γ_n m_eff v_n, F_n ≥ 0.
typedef enum dvi_dem_normal_model {
    DVI_DEM_HERTZ = 0, ///< f = √x, g = x^¼ (Hertz spring, Tsuji damping)
    DVI_DEM_HOOKE = 1  ///< f = g = 1 (linear spring–dashpot)
} dvi_dem_normal_model;

/// Where the DEM contact constants come from when no material gives them.
typedef enum dvi_dem_constants {
    DVI_DEM_FROM_MATERIAL = 0, ///< from Young's modulus, Poisson ratio and restitution
    DVI_DEM_DIRECT = 1         ///< the k_n, k_t, gamma_n, gamma_t below
} dvi_dem_constants;

/// DEM settings (used when method is DVI_METHOD_DEM). Start from
/// dvi_default_dem_settings(). Formulas: docs/dem.md.
typedef struct dvi_dem_settings {
    dvi_dem_normal_model normal_model; ///< default DVI_DEM_HERTZ
    dvi_dem_constants constants;       ///< default DVI_DEM_FROM_MATERIAL
    double k_n;      ///< N/m, DIRECT: normal stiffness (Hertz: at δ = d); default 1e5
    double k_t;      ///< N/m, DIRECT: tangential stiffness; ≤ 0: 2/7 k_n; default 0
    double gamma_n;  ///< 1/s, DIRECT: normal damping rate; < 0: from the restitution; default −1
    double gamma_t;  ///< 1/s, DIRECT: tangential damping rate; < 0: from the restitution; default −1
    double characteristic_speed; ///< m/s, Hooke from material: the spring reaches the Hertz
                                 ///< overlap of an impact at this speed; default 1
    double rolling_damping;      ///< η_r ≥ 0, damping ratio of the rolling spring–dashpot; default 0.3
    double terrain_slip_speed;   ///< m/s > 0, regularisation of sign(v) in the terrain model; default 0.01
    double max_speed;            ///< m/s > 0, stability guard: a body whose speed |v| + |ω| r_bound
                                 ///< exceeds this fails the step with DVI_ERR_NUMERIC; default 1e3
} dvi_dem_settings;

DVI_API dvi_dem_settings dvi_default_dem_settings(void);

/// How the DVI step solves its joint (bilateral) rows (docs/world.md, "Joint rows solved directly").
/// Directly: a sparse Cholesky factorisation of the joint rows' block N_BB of the Delassus
/// operator (AMD ordering, analysed once while the joints' bodies stay the same, refactored each
/// step; a pivot below 1e-10 of its diagonal marks a redundant row, which gets no impulse), and
/// the contacts, if any, solved by the world's solver on their Schur complement: dense, in the
/// W form, up to DVI_JOINT_SOLVE_AUTO_CONTACT_ROWS contact rows; beyond, matrix-free, as the
/// contacts' factor form with the low-rank term G = L⁻¹ P N_BC (dvi_ccp_problem.G). The solver
/// sees only the contact rows, and dvi_step_stats.iterations counts its iterations on them (0
/// for joint rows alone).
typedef enum dvi_joint_solve {
    DVI_JOINT_SOLVE_AUTO = 0,      ///< directly when the step has joint rows and at most
                                   ///< DVI_JOINT_SOLVE_AUTO_CONTACT_ROWS contact rows, or at most
                                   ///< as many contact rows as joint rows, and the solver does not
                                   ///< sweep in order (dvi_solver_sweeps_in_order: pgs, nsgs;
                                   ///< docs/world.md); joint rows alone are
                                   ///< taken when their residual meets the tolerance (and
                                   ///< 1e-10), else the world's solver starts from them
    DVI_JOINT_SOLVE_ITERATIVE = 1, ///< always the world's solver on every row (to compare solvers on joints)
    DVI_JOINT_SOLVE_DIRECT = 2     ///< directly whenever the step has joint rows, with any solver
} dvi_joint_solve;

/// The most contact rows (three a contact, six with rolling resistance) whose Schur
/// complement a direct step forms densely; above, it is handed matrix-free (docs/world.md).
#define DVI_JOINT_SOLVE_AUTO_CONTACT_ROWS 96

/// World settings. Always start from dvi_default_world_def().
typedef struct dvi_world_def {
    double gravity[3];          ///< m/s²; default (0, 0, −9.81)
    const char* solver;         ///< CCP solver name (ccp.h); default "apgd"
    dvi_solver_settings solver_settings; ///< default dvi_default_solver_settings() (its tolerance,
                                ///< 1e-8) with max_iterations 2000, warm_start true
                                ///< (why 1e-8, not a solve's 1e-6: docs/solvers.md)
    double collision_envelope;  ///< m; contacts enter the CCP when the gap is below this; default 0.005
    double contact_recovery_speed; ///< m/s; cap on the speed at which penetration is removed; default 0.6
    double joint_recovery_speed;   ///< m/s (and rad/s); cap on joint drift correction speed; default 1e30 (none)
    double bounce_threshold;    ///< m/s; restitution acts only above this approach speed; default 0.5
    dvi_log_fn* log;            ///< optional log callback (NULL: silent)
    void* log_user;             ///< passed to log
    dvi_method method;          ///< default DVI_METHOD_DVI
    dvi_dem_settings dem;       ///< default dvi_default_dem_settings()
    dvi_joint_solve joint_solve; ///< how DVI steps solve the joint rows; default DVI_JOINT_SOLVE_AUTO
    dvi_allocator allocator;    ///< where the world takes its memory (base.h): its bodies, shapes and
                                ///< joints, collision, DEM state and solver (whose
                                ///< solver_settings.allocator is replaced by this one, here and in
                                ///< dvi_world_set_solver); default all NULL: libc. With threads > 1
                                ///< the collision's threads call it at once: it must be thread-safe.
                                ///< dvi_world_save_state's blob stays on libc (free() it)
    dvi_friction_law friction_law; ///< the friction law of the DVI step (ccp.h, docs/formulation.md):
                                ///< DVI_LAW_CCP (default), the cone complementarity problem, whose
                                ///< sliding contacts also separate at μ‖u_t‖; or DVI_LAW_COULOMB,
                                ///< Coulomb's law, whose sliding contacts keep u_n = 0. The world's
                                ///< solver must solve this law (dvi_solver_get_law): a DVI step
                                ///< refuses otherwise (DVI_ERR_INVALID_ARG, the world unchanged).
                                ///< The DEM step has no CCP and ignores it
    const char* coulomb_check;  ///< under Coulomb's law, the solver (a name of the registry, ccp.h, that
                                ///< solves Coulomb's law with solver_settings) that solves a DVI step's
                                ///< contacts again, from γ = 0, when the first answer shows a sign that
                                ///< the step's problem may have several solutions (docs/formulation.md,
                                ///< "Several solutions"); the answer kept is the one with the smaller
                                ///< Σ γ_n². Default "desaxce"; NULL or "": no check. Steps with joint
                                ///< rows solved directly are not checked
    bool thread_fallback;       ///< with solver_settings.threads resolving to more than one thread: a
                                ///< step whose threads did not all run (the process took less than 0.8
                                ///< CPU seconds per thread and wall second: cores shared with other
                                ///< work) is followed by a trial step on one thread, and the steps stay
                                ///< on one thread while it is the faster by 10%, with trials on all the
                                ///< threads after 16, 32, … 1024 steps, skipped while the one thread
                                ///< itself runs short of CPU (docs/performance.md, "Running on shared
                                ///< cores"). The same bits either way; dvi_step_stats.threads and
                                ///< fallback_steps tell. Default true
    uint32_t internal_cookie;   ///< set by dvi_default_world_def; do not touch
} dvi_world_def;

DVI_API dvi_world_def dvi_default_world_def(void);
/// def NULL: dvi_default_world_def(). out NULL: DVI_ERR_INVALID_ARG.
DVI_API dvi_status dvi_world_create(const dvi_world_def* def, dvi_world** out);
DVI_API void dvi_world_destroy(dvi_world* world);
/// Deprecated: read dvi_error_message() (<dvi/base.h>), the one channel.
/// A copy of the text dvi_error_message() gave after the last failing call
/// that changes this world ("" if none), bodies named as there. The queries
/// of a const world write only the thread's message.
DVI_API const char* dvi_world_last_error(const dvi_world* world);
/// Writes the name of body `index` (0-based, in creation order) for an
/// error message into out[size] (NUL-terminated; leave out empty for the
/// default). Called only while a failing call of the world writes its
/// message, on the calling thread.
typedef void dvi_body_namer(void* user, int32_t index, char* out, size_t size);
/// How this world names its bodies in its error messages (the thread's
/// message, the log, dvi_world_last_error): namer(user, i, ...), or
/// "bodies[i]" when namer is NULL (the default). A model built from a scene
/// sets the scene's names ("wheel_LF", "grains[49]"; "bodies[i]" for an
/// unnamed body of the file). user must outlive the world or the next call.
DVI_API dvi_status dvi_world_set_body_namer(dvi_world* world, dvi_body_namer* namer, void* user);
/// Simulated time (s).
DVI_API double dvi_world_time(const dvi_world* world);
/// Changes the CCP solver (name as in ccp.h) and its settings (NULL: the
/// solver's defaults).
DVI_API dvi_status dvi_world_set_solver(dvi_world* world, const char* name, const dvi_solver_settings* settings);
/// Turns the fallback to one thread (dvi_world_def.thread_fallback) on or
/// off for the next steps, which start timing afresh. The same bits either
/// way. Errors: world NULL (DVI_ERR_INVALID_ARG).
DVI_API dvi_status dvi_world_set_thread_fallback(dvi_world* world, bool on);
/// Changes the friction law of the following DVI steps (def.friction_law),
/// at any time: like the solver, it is configuration, not state (neither
/// saved nor checked by dvi_world_save_state). Change the solver with it
/// (dvi_world_set_solver, either order): the next DVI step refuses a solver
/// of the other law. Errors: NULL world, a law not in dvi_friction_law
/// (DVI_ERR_INVALID_ARG).
DVI_API dvi_status dvi_world_set_friction_law(dvi_world* world, dvi_friction_law law);
/// The world's friction law (DVI_LAW_CCP for a NULL world).
DVI_API dvi_friction_law dvi_world_get_friction_law(const dvi_world* world);
/// Switches the contact formulation (and, if settings is not NULL, the DEM
/// settings). Only before the first step: DVI_ERR_INVALID_ARG afterwards.
DVI_API dvi_status dvi_world_set_method(dvi_world* world, dvi_method method, const dvi_dem_settings* settings);

/// The stable step of the stiffest penalty contact of the world's last DEM
/// step (docs/dem.md, "Stable step"): the smallest (√(α² + 4) − α)·√(m/k)
/// over its contacts, m the pair's effective mass, α its damping ratio and k
/// its tangent normal stiffness: k_n for Hooke; for Hertz 1.5 k_n √(δ/d) at
/// the contact's overlap δ or, when larger, at the overlap of an impact at
/// dem.characteristic_speed, δ_max = (15 m v² / (16 E* √R))^(2/5). Explicit
/// steps above it gain energy in such a contact. *h = INFINITY when that step
/// had no penalty contact, or no DEM step was taken. DVI_ERR_INVALID_ARG for
/// a NULL argument or a world whose method is not DVI_METHOD_DEM.
DVI_API dvi_status dvi_world_dem_stable_step(const dvi_world* world, double* h);

/* ---- bodies ------------------------------------------------------------ */

typedef enum dvi_body_type {
    DVI_BODY_DYNAMIC = 0,   ///< moved by forces and contacts
    DVI_BODY_FIXED = 1,     ///< never moves (ground)
    DVI_BODY_KINEMATIC = 2  ///< moves with its set velocity, unaffected by forces
} dvi_body_type;

typedef struct dvi_body_def {
    dvi_body_type type;
    double mass;            ///< kg, > 0 for dynamic bodies; default 1
    double inertia[9];      ///< kg·m², body frame about the centre of mass, symmetric positive definite; default identity
    double position[3];     ///< m, centre of mass
    double orientation[4];  ///< unit quaternion (w, x, y, z); default (1, 0, 0, 0)
    double velocity[3];     ///< m/s
    double angular_velocity[3]; ///< rad/s, world frame
    double gravity_scale;   ///< default 1
    uint32_t internal_cookie;
} dvi_body_def;

DVI_API dvi_body_def dvi_default_body_def(void);
DVI_API dvi_status dvi_body_create(dvi_world* world, const dvi_body_def* def, dvi_body_id* out);
DVI_API dvi_status dvi_body_get_position(const dvi_world* world, dvi_body_id body, double out[3]);
DVI_API dvi_status dvi_body_get_orientation(const dvi_world* world, dvi_body_id body, double out[4]);
DVI_API dvi_status dvi_body_get_velocity(const dvi_world* world, dvi_body_id body, double out[3]);
DVI_API dvi_status dvi_body_get_angular_velocity(const dvi_world* world, dvi_body_id body, double out[3]);
/// Sets the linear (m/s) and angular (rad/s) velocity, world frame; either
/// may be NULL (left unchanged).
DVI_API dvi_status dvi_body_set_velocity(dvi_world* world, dvi_body_id body, const double v[3], const double w[3]);
/// Constant applied force (N) at the centre of mass and torque (N·m), world
/// frame, acting every step until changed. Either may be NULL (left unchanged).
DVI_API dvi_status dvi_body_set_applied_force(dvi_world* world, dvi_body_id body, const double force[3],
                                              const double torque[3]);
/// Sum of the contact forces (N) on the body during the last step and their
/// torque (N·m) about its centre of mass at the start of the step (rolling
/// and spinning resistance included), world frame. Either output may be NULL
/// (not written).
DVI_API dvi_status dvi_body_get_contact_force(const dvi_world* world, dvi_body_id body, double force[3],
                                              double torque[3]);

/* ---- force elements ----------------------------------------------------- */

/// A force element: a model that adds forces and torques to bodies at the
/// start of every step, in both methods — soil and wheel–terrain models,
/// aerodynamic loads, user springs. The forces are explicit: computed from
/// the state at the start of the step (after the caller's changes) and held
/// through it, like an applied force. An element may keep its own state
/// (a soil's deformation); it is then part of the world's saved state
/// through `state_size`/`save`/`load`.
///
/// Elements run in the order they were added. A step that fails after the
/// elements ran keeps the elements' state changes (a DEM step that fails
/// restores the bodies, not the elements).
typedef struct dvi_force_element_class {
    const char* name; ///< identifies the element's kind in messages and saved states (≤ 63 bytes)
    /// Adds this step's forces with dvi_body_add_step_force. h: the step
    /// length. A status other than DVI_OK fails the step with it (the
    /// element sets the message with dvi_error_report of <dvi/base.h>).
    dvi_status (*apply)(void* self, dvi_world* world, double h);
    /// Bytes of the element's state; NULL: stateless. The size may vary
    /// with the state (a soil's touched nodes): load receives the size the
    /// saved element wrote and checks it.
    size_t (*state_size)(const void* self);
    /// Writes exactly state_size bytes (portable: little-endian, raw IEEE doubles).
    void (*save)(const void* self, void* out);
    /// Reads a state written by save of an element built the same way;
    /// DVI_ERR_PARSE (with a message) for one it cannot take. It must not
    /// change the element when it fails.
    dvi_status (*load)(void* self, const void* data, size_t size);
    /// Releases `self` when the world is destroyed; NULL: the caller owns it.
    void (*destroy)(void* self);
} dvi_force_element_class;

/// Adds an element (the class is borrowed and must outlive the world).
/// `index` (may be NULL) receives its position among the world's elements.
/// DVI_ERR_INVALID_ARG: NULL world or class, no apply, a name missing or
/// longer than 63 bytes, or state_size without save and load.
DVI_API dvi_status dvi_world_add_force_element(dvi_world* world, const dvi_force_element_class* cls, void* self,
                                               int32_t* index);
/// Number of force elements, and element i's class and `self` (NULL for a
/// bad index).
DVI_API int32_t dvi_world_force_element_count(const dvi_world* world);
DVI_API void* dvi_world_force_element(const dvi_world* world, int32_t i, const dvi_force_element_class** cls);
/// During a force element's apply: adds a force (N) at the centre of mass and
/// a torque (N·m), world frame, to this step only. Either may be NULL.
/// Fixed bodies take it and ignore it. Not finite: DVI_ERR_INVALID_ARG.
DVI_API dvi_status dvi_body_add_step_force(dvi_world* world, dvi_body_id body, const double force[3],
                                           const double torque[3]);
/// The force elements' force and torque on the body in the last step
/// (zero when it had none). Either output may be NULL (not written).
DVI_API dvi_status dvi_body_get_step_force(const dvi_world* world, dvi_body_id body, double force[3],
                                           double torque[3]);

/* ---- shapes ------------------------------------------------------------ */

/* dvi_shape_type: <dvi/shape.h> */

/// Contact material. Pair values: friction and rolling/spinning friction are
/// the smaller of the two, restitution the larger, compliance the sum.
typedef struct dvi_material {
    double friction;          ///< μ, default 0.5
    double rolling_friction;  ///< m (rolling resistance arm), default 0
    double spinning_friction; ///< m, default 0
    double restitution;       ///< in [0, 1], default 0
    double compliance;        ///< m/N, default 0 (rigid)
    /* DEM penalty contact (method DVI_METHOD_DEM only; docs/dem.md). Pair
     * values: E and ν combine as in Hertz theory; given constants are averaged. */
    double young_modulus;     ///< Pa, E (0: not given); default 1e7
    double poisson_ratio;     ///< ν in (−1, 0.5]; default 0.3
    double k_n;               ///< N/m, normal stiffness (Hertz: at δ = d); 0 (default): not given
    double k_t;               ///< N/m, tangential stiffness; 0 (default): not given
    double gamma_n;           ///< 1/s, normal damping rate; < 0 (default −1): not given
    double gamma_t;           ///< 1/s, tangential damping rate; < 0 (default −1): not given
    double terrain_stiffness; ///< N/m³, c of the hysteretic height-field model (on a height
                              ///< field; 0, the default: the field uses the penalty model)
    double terrain_hysteresis;///< γ in [0, 1) of that model; default 0
} dvi_material;

/// What every shape has, whatever its kind: its place on the body, its
/// material, its collision filter. Start from dvi_default_shape_def(); the
/// kind and its geometry are the arguments of the kind's call below.
typedef struct dvi_shape_def {
    /* Deprecated (kept for one release, for dvi_shape_create only): the
     * kind and every kind's geometry in one struct. The per-kind calls
     * (dvi_world_add_sphere, ...) ignore these fields. */
    dvi_shape_type type;
    double radius;            ///< m
    double half_length;       ///< m
    double half_extents[3];   ///< m
    /* height field: nx × ny heights (copied), spacing dx, dy */
    int32_t nx, ny;
    double dx, dy;
    const double* heights;
    /* mesh: vertices [3·vertex_count] and triangles [3·triangle_count] (copied) */
    int32_t vertex_count, triangle_count;
    const double* vertices;
    const int32_t* triangles;
    double offset_position[3];    ///< shape frame in the body frame
    double offset_orientation[4]; ///< (w, x, y, z), default identity
    dvi_material material;
    /// Collision filter: shapes A and B can touch only when
    /// (A.category & B.mask) != 0 and (B.category & A.mask) != 0.
    uint32_t collision_category;  ///< the shape's category bits, non-zero; default 1
    uint32_t collision_mask;      ///< the categories it can touch; default 0xFFFFFFFF (all)
    uint32_t internal_cookie;
} dvi_shape_def;

DVI_API dvi_shape_def dvi_default_shape_def(void);

/* Each kind's geometry, in the shape frame (docs/world.md). */
typedef struct dvi_sphere { double radius; } dvi_sphere;                 ///< m
typedef struct dvi_box { double half_extents[3]; } dvi_box;             ///< m
/// The segment ±half_length along local z, swept by a ball of `radius`.
typedef struct dvi_capsule { double radius, half_length; } dvi_capsule;
/// Axis along local z (a wheel's axle), faces at ±half_length.
typedef struct dvi_cylinder { double radius, half_length; } dvi_cylinder;
/// {x²/a² + y²/b² + z²/c² ≤ 1}: semi-axes (a, b, c) along local x, y, z.
typedef struct dvi_ellipsoid { double semi_axes[3]; } dvi_ellipsoid;
/// Height field: nx × ny heights (copied), heights[j·nx + i] at (i·dx, j·dy).
typedef struct dvi_height_grid {
    int32_t nx, ny;
    double dx, dy;
    const double* heights;
} dvi_height_grid;
/// Triangle mesh: vertices [3·vertex_count] and triangles [3·triangle_count]
/// (copied), counter-clockwise seen from outside.
typedef struct dvi_triangle_mesh {
    int32_t vertex_count, triangle_count;
    const double* vertices;
    const int32_t* triangles;
} dvi_triangle_mesh;

/// Add a shape of one kind to a body: `def` from dvi_default_shape_def(),
/// the geometry in the kind's own struct. Lengths must be > 0; a plane,
/// height field or mesh needs a fixed body. A plane is the half-space
/// z ≤ 0 of the shape frame.
DVI_API dvi_status dvi_world_add_sphere(dvi_world* world, dvi_body_id body, const dvi_shape_def* def,
                                        const dvi_sphere* sphere, dvi_shape_id* out);
DVI_API dvi_status dvi_world_add_box(dvi_world* world, dvi_body_id body, const dvi_shape_def* def, const dvi_box* box,
                                     dvi_shape_id* out);
DVI_API dvi_status dvi_world_add_capsule(dvi_world* world, dvi_body_id body, const dvi_shape_def* def,
                                         const dvi_capsule* capsule, dvi_shape_id* out);
DVI_API dvi_status dvi_world_add_cylinder(dvi_world* world, dvi_body_id body, const dvi_shape_def* def,
                                          const dvi_cylinder* cylinder, dvi_shape_id* out);
DVI_API dvi_status dvi_world_add_ellipsoid(dvi_world* world, dvi_body_id body, const dvi_shape_def* def,
                                           const dvi_ellipsoid* ellipsoid, dvi_shape_id* out);
DVI_API dvi_status dvi_world_add_plane(dvi_world* world, dvi_body_id body, const dvi_shape_def* def,
                                       dvi_shape_id* out);
DVI_API dvi_status dvi_world_add_heightfield(dvi_world* world, dvi_body_id body, const dvi_shape_def* def,
                                             const dvi_height_grid* grid, dvi_shape_id* out);
DVI_API dvi_status dvi_world_add_mesh(dvi_world* world, dvi_body_id body, const dvi_shape_def* def,
                                      const dvi_triangle_mesh* mesh, dvi_shape_id* out);
/// Deprecated, removed in the next release: the kind in def->type and its
/// geometry in def's deprecated fields; calls the kind's own call above.
DVI_API dvi_status dvi_shape_create(dvi_world* world, dvi_body_id body, const dvi_shape_def* def, dvi_shape_id* out);
/// DEM: sample points of a shape for the hysteretic height-field model
/// (docs/dem.md). samples holds count × 4 doubles: x, y, z in the shape's
/// frame (m) and the elementary area S (m², > 0) of each point; copied.
/// In DEM mode the shape then meets height fields whose material has a
/// terrain_stiffness > 0 through these points only. count 0 removes them.
/// The shape must be on a dynamic or kinematic body.
DVI_API dvi_status dvi_shape_set_dem_samples(dvi_world* world, dvi_shape_id shape, int32_t count,
                                             const double* samples);

/* ---- joints and motors --------------------------------------------------- */

typedef enum dvi_joint_type {
    DVI_JOINT_SPHERICAL = 1, ///< anchors coincide (3 rows)
    DVI_JOINT_REVOLUTE = 2,  ///< spherical + axes stay parallel (5 rows)
    DVI_JOINT_PRISMATIC = 3, ///< relative motion only along the axis, no rotation (5 rows)
    DVI_JOINT_FIXED = 4,     ///< no relative motion (6 rows)
    DVI_JOINT_DISTANCE = 5   ///< |anchor_b − anchor| keeps its initial length (1 row)
} dvi_joint_type;

typedef enum dvi_motor_type {
    DVI_MOTOR_NONE = 0,
    DVI_MOTOR_ROTATION_SPEED = 1, ///< revolute: relative angular speed about the axis (1 row)
    DVI_MOTOR_ROTATION_TORQUE = 2,///< revolute: torque about the axis (applied force, no row)
    DVI_MOTOR_LINEAR_SPEED = 3    ///< prismatic: relative speed along the axis (1 row)
} dvi_motor_type;

typedef struct dvi_joint_def {
    dvi_joint_type type;
    dvi_body_id body_a;       ///< may be null: the joint then attaches body_b to the world
    dvi_body_id body_b;
    double anchor[3];         ///< world point at creation where the bodies are joined
    double anchor_b[3];       ///< distance joint: second world point (on body_b)
    double axis[3];           ///< world axis at creation (revolute, prismatic, motors)
    dvi_motor_type motor;
    double motor_speed;       ///< rad/s or m/s, target of B relative to A
    double motor_ramp_time;   ///< s; the target rises linearly from 0 over this time (0 = at once)
    double motor_torque;      ///< N·m, for a torque motor
    double motor_damping;     ///< speed motors: N·m·s/rad (N·s/m linear); 0 (default) holds the target
                              ///< exactly; > 0 gives a DC motor's linear law, torque (force) =
                              ///< damping·(target − speed), implicit in the step. Other motors: 0
    bool collide_connected;   ///< false (default): the two bodies' shapes never touch each other
                              ///< (a hinge's parts usually overlap); true: they collide as any others
    uint32_t internal_cookie;
} dvi_joint_def;

DVI_API dvi_joint_def dvi_default_joint_def(void);
DVI_API dvi_status dvi_joint_create(dvi_world* world, const dvi_joint_def* def, dvi_joint_id* out);
/// Constraint force (N) and torque (N·m) that the joint exerted on body_b during
/// the last step, world frame, torque about the anchor (motor included).
/// Either output may be NULL (not written).
DVI_API dvi_status dvi_joint_get_reaction(const dvi_world* world, dvi_joint_id joint, double force[3],
                                          double torque[3]);
/// Changes a motor's target speed (keeps its ramp) or torque.
DVI_API dvi_status dvi_joint_set_motor(dvi_world* world, dvi_joint_id joint, double speed, double torque);

/* ---- stepping ------------------------------------------------------------ */

/// Each field means the same after a DVI and a DEM step; what the two steps
/// put into it differs only as their models do: the contacts of a DVI step
/// are the points within the collision envelope (one row block each of the
/// CCP), those of a DEM step the overlapping points and terrain samples (one
/// penalty force each); the constraint problem of a DVI step holds the joints'
/// and the contacts' rows, that of a DEM step the joints' rows alone.
typedef struct dvi_step_stats {
    int32_t bodies;               ///< bodies of the world
    int32_t contacts;             ///< the step's contacts (dvi_world_contact_count)
    int32_t joint_rows;           ///< rows of the joints and speed motors
    int32_t rows;                 ///< rows of the step's constraint problem
    int32_t iterations;           ///< of the solver on that problem (0: solved directly, or no rows)
    double residual;              ///< its residual (the solver's target residual)
    dvi_solve_status solver_status;
    double max_penetration;       ///< m, max over the contacts of −Φ after collision (≥ 0)
    double max_joint_violation;   ///< m (or rad), max position-level joint error before the step
    double max_joint_violation_relative; ///< the same as a fraction of the joint's size: a distance
                                  ///< error over the longer of the joint's two anchor levers, an
                                  ///< angle error (rad) as it is
    int32_t worst_joint;          ///< index (creation order) of the joint with that error, −1 if none
    /// wall time of the step's stages: collide (geoms, broad and narrow phase), assemble (free
    /// velocities, the rows; DEM: the penalty forces), solve (the CCP; DEM: the joints'
    /// problem), integrate (velocities and poses; DEM: with the speed guard), report (contact
    /// forces on the bodies, joint reactions, warm start or contact history)
    double seconds_collide, seconds_assemble, seconds_solve, seconds_integrate, seconds_report;
    /* of the DEM model alone (0 after a DVI step) */
    double max_overlap;           ///< m, largest overlap δ of a penalty contact (terrain samples: −z)
    int32_t contact_history;      ///< entries in the contact history after the step
    /* of both methods again */
    double kinetic_energy;        ///< J, of the dynamic bodies after the step (before this version: 0
                                  ///< after a DVI step)
    bool warm_start_rejected;     ///< the solver started from γ = 0: the previous step's impulses had a
                                  ///< higher objective (dvi_solve_result.warm_start_rejected)
    double solver_bytes_per_iteration; ///< dvi_solve_result.bytes_per_iteration of the step's solve
    /* of the DEM model alone (0 and −1 after a DVI step) */
    int32_t chattering_contacts;  ///< penalty contacts whose friction force reversed direction, at half
                                  ///< its Coulomb limit μF_n or more, on each of the last 10 steps
                                  ///< (docs/dem.md, "Friction chatter")
    int32_t chattering_contact;   ///< index (dvi_world_get_contact) of the first of them, −1 if none
    /* of the DVI step alone (0 after a DEM step): the CCP's relaxation. A
     * sliding contact of the CCP separates at u_n = μ‖u_t‖ while it pushes
     * (γ_n > 0), where Coulomb's law keeps it closed (formulation.md) */
    double ccp_hover;             ///< m, largest h·u_n over the contacts that push: the normal opening
                                  ///< the relaxation imposes in the step (0 under Coulomb's law)
    double ccp_hover_work;        ///< J, Σ γ_n u_n over those contacts: the work of the normal impulses
                                  ///< on that opening (the CCP's relaxation; the friction work it offsets)
    double ccp_hover_friction;    ///< J, the energy the friction of those contacts took in the step (at
                                  ///< the step's mean tangential velocity): what their impulses cost
    int32_t ccp_hover_contact;    ///< index (dvi_world_get_contact) of the contact that opened by ccp_hover,
                                  ///< −1 if none
    /* of a DVI step under Coulomb's law (def.coulomb_check; else false, 0 and −1) */
    bool coulomb_checked;         ///< the step's contacts were solved a second time: its answer had a body
                                  ///< whose pushing contacts oppose its net contact force while one of
                                  ///< them slides, or a sliding contact whose normal velocity falls as its
                                  ///< friction grows (W_nn − μ W_nt·ŝ ≤ 0: Painlevé's condition)
    bool coulomb_nonunique;       ///< the two answers' contact velocities u = Nγ + r differ by more than
                                  ///< 1e-4 of the step's velocity scale: the step has several solutions
    double coulomb_difference;    ///< that difference, max |u₁ − u₂| over the largest |r| or |u|
    int32_t coulomb_kept;         ///< the answer kept: 1 the world's solver's, 2 the check's (the smaller
                                  ///< Σ γ_n²); 0 if not checked
    int32_t coulomb_contact;      ///< index (dvi_world_get_contact) of the contact whose velocity differs
                                  ///< most between the two answers, −1 if not checked
    /* of a DVI step whose joint rows were solved directly (joint_solve; else 0) */
    int32_t joint_rows_dropped;   ///< joint rows the factorisation dropped: redundant to rounding (a
                                  ///< pivot at or below 1e-10 of the row's diagonal), or nearly singular
                                  ///< (below 1e-7 of N_BB's largest diagonal and 1e-2 of its own) and
                                  ///< not consistent: impulse 0, the constraint held only as far as the
                                  ///< other rows imply it; a nearly singular row's nearly null direction
                                  ///< is taken out of the joint rows' right-hand side (docs/world.md)
    int32_t joint_rows_regularised; ///< nearly singular joint rows kept: their pivots raised, the answer
                                  ///< refined against N_BB (docs/world.md)
    double joint_residual;        ///< the joint rows' relative residual ‖N_BB γ_B + N_BC γ_C + r_B‖ /
                                  ///< max(‖r_B + N_BC γ_C‖, ‖γ_B‖, the numerator) after the direct solve
                                  ///< (with joint rows alone, also `residual`)
    /* of both methods */
    int32_t threads;              ///< OpenMP threads the step ran on: those of solver_settings.threads, or
                                  ///< 1 while the fallback (dvi_world_def.thread_fallback) runs on one
    int64_t fallback_steps;       ///< steps of this world so far that the fallback ran on one thread
                                  ///< instead of more (its trials included)
} dvi_step_stats;

/// Advances the world by h seconds. Returns DVI_OK, DVI_NOT_CONVERGED when the
/// step was taken but the solver missed its tolerance (see the stats), or an
/// error: bodies, joints and time unchanged. A DVI step whose solver does not
/// solve the world's friction law (def.friction_law) is refused with
/// DVI_ERR_INVALID_ARG before anything changes, the message naming the law
/// and the solver. A DVI step that fails in its
/// solve (out of memory, or a refused problem) also loses the last step's
/// warm start, whose memory the solver was using; the next step then starts
/// its solve cold. With method DVI_METHOD_DEM the step is the penalty
/// back end of docs/dem.md (the solver then handles only joint problems of
/// more than 256 rows; smaller ones are solved directly); it fails
/// with DVI_ERR_NUMERIC, naming the step and the body, when a body's velocity
/// or pose would become non-finite or its speed exceed dem.max_speed.
DVI_API dvi_status dvi_world_step(dvi_world* world, double h);
DVI_API dvi_step_stats dvi_world_get_stats(const dvi_world* world);

/// Contacts of the last step.
typedef struct dvi_contact_info {
    dvi_body_id body_a, body_b;   ///< normal points from a to b
    double point[3];              ///< world
    double normal[3];
    double distance;              ///< signed gap at collision time (m)
    double force[3];              ///< force on body_b (N, world), −force on body_a
} dvi_contact_info;

DVI_API int32_t dvi_world_contact_count(const dvi_world* world);
DVI_API dvi_status dvi_world_get_contact(const dvi_world* world, int32_t index, dvi_contact_info* out);

/* ---- enumeration (writers of frames and reports) -------------------------- */

/// Number of live bodies; dvi_world_body_at enumerates them in creation order
/// (index in [0, count)).
DVI_API int32_t dvi_world_body_count(const dvi_world* world);
DVI_API dvi_status dvi_world_body_at(const dvi_world* world, int32_t index, dvi_body_id* out);
/// FNV-1a 64 of the time and of every body's state (x, q, v, ω: 13 doubles,
/// their IEEE-754 bits little-endian) in creation order: two runs agree bit
/// for bit when their hashes do (dvi_dist_state_hash gives the same for a
/// scene spread over ranks).
DVI_API dvi_status dvi_world_state_hash(const dvi_world* world, uint64_t* out);

/// What a frame writer needs to draw a body.
typedef struct dvi_body_info {
    dvi_body_type type;
    double mass;              ///< kg (0 for fixed and kinematic bodies)
    int32_t shape_count;
    dvi_shape_type shape_type; ///< type of the first shape (0 if none)
    double bounding_radius;   ///< m, radius of a sphere about the centre of mass enclosing
                              ///< all bounded shapes (planes, height fields and meshes excluded)
} dvi_body_info;

DVI_API dvi_status dvi_body_get_info(const dvi_world* world, dvi_body_id body, dvi_body_info* out);

/// One shape of a body, for drawing it: what dvi_body_get_shape gives.
/// The fields that do not apply to the type are 0 (or NULL).
typedef struct dvi_shape_info {
    dvi_shape_type type;
    double radius;                ///< m: sphere, capsule, cylinder
    double half_length;           ///< m: capsule (segment), cylinder; along the shape's z
    double half_extents[3];       ///< m: box; an ellipsoid's semi-axes
    double offset_position[3];    ///< shape frame in the body frame
    double offset_orientation[4]; ///< (w, x, y, z), unit
    double offset_rotation[9];    ///< the same rotation, row-major: shape frame → body frame
    /* height field: heights[j·nx + i] at (i·dx, j·dy) of the shape frame */
    int32_t nx, ny;
    double dx, dy;
    const double* heights;
    /* mesh, in the shape frame; triangles counter-clockwise seen from outside */
    int32_t vertex_count, triangle_count;
    const double* vertices;       ///< [3·vertex_count]
    const int32_t* triangles;     ///< [3·triangle_count]
} dvi_shape_info;

/// Shape `index` (0 … dvi_body_info.shape_count − 1, in the order they were
/// attached) of a body. heights, vertices and triangles point into the world:
/// valid until the world is changed (a body or shape added) or destroyed.
/// DVI_ERR_INVALID_ARG for a bad id, an index out of range or a NULL out;
/// out is then zeroed. Like the other queries of a const world, it writes
/// nothing into the world (its message goes to dvi_error_message only), so
/// threads may query one world at the same time.
DVI_API dvi_status dvi_body_get_shape(const dvi_world* world, dvi_body_id body, int32_t index, dvi_shape_info* out);

/* ---- state (checkpoints) -------------------------------------------------- */

/// The complete dynamic state of the world — time, body poses, velocities and
/// applied forces, motor targets, the warm-start history of contacts and
/// joints, and in DEM mode the contact history (tangential and rolling
/// springs) — as a byte blob (malloc'd; free with free()). The blob holds a
/// fingerprint of the world's structure (bodies, shapes with their materials
/// and DEM sample points, joints) and a checksum. Loading it into a world
/// with the same structure (e.g. built again from the same scene) makes the
/// next steps bit-identical to those of the world that was saved. Refused
/// (DVI_ERR_INVALID_ARG / DVI_ERR_PARSE, message on the world) if the
/// structure differs or the blob is damaged; the world is then unchanged.
/// The world's settings (gravity, envelope, recovery speeds, bounce
/// threshold, method and DEM settings) count as structure. The solver and its
/// settings are configuration, not state: they are neither saved nor
/// checked, so the loading world must use the same solver for the steps to
/// be identical. The format is portable (little-endian, raw IEEE doubles).
DVI_API dvi_status dvi_world_save_state(const dvi_world* world, void** data, size_t* size);
DVI_API dvi_status dvi_world_load_state(dvi_world* world, const void* data, size_t size);

/* ---- the run health monitor's settings and findings ---------------------- */

/// Thresholds of the run health monitor (docs/health.md): what a model
/// (<dvi/scene.h>, the scene's formulation.health) checks after every step
/// of its world. Fractions are of the scale each check states.
typedef struct dvi_health_settings {
    bool enabled;                ///< default true
    double energy_growth;        ///< warning: E − E₀ − W_in above this fraction of the energy scale; 0.1
    double blowup_factor;        ///< blow-up (an error): E − E₀ − W_in above this many energy scales; 100
    double region_margin;        ///< m; escape: a body this far outside the region that bounds the scene
                                 ///< (the initial positions, the fixed shapes, the joints' reach);
                                 ///< 0 (default): the region's longest bounded side, at least 10 × the
                                 ///< largest shape
    double penetration_fraction; ///< warning: a contact's penetration (DEM: overlap) above this fraction
                                 ///< of the smaller of its two shapes; 0.2
    double joint_fraction;       ///< warning: a joint's violation above this fraction of its size
                                 ///< (dvi_step_stats.max_joint_violation_relative); 1e-3
    double audit_fraction;       ///< warning: the energy audit's error (dvi_health_report.audit_error)
                                 ///< above this fraction of the energy scale, either sign; 1e-3
    double hover_envelope_fraction; ///< warning (DVI step, CCP): a pushing contact opened in one step by
                                 ///< more than this fraction of the collision envelope
                                 ///< (dvi_step_stats.ccp_hover): the contact leaves it; 1
    double hover_work_fraction;  ///< warning (DVI step, CCP): the friction of the contacts that hover took
                                 ///< more than this fraction of the kinetic energy at the step's start
                                 ///< (at least a tenth of the energy scale) in one step
                                 ///< (dvi_step_stats.ccp_hover_friction); 0.5
} dvi_health_settings;

DVI_API dvi_health_settings dvi_default_health_settings(void);

/// What the health monitor has found so far (dvi_model_health).
typedef enum dvi_health_kind {
    DVI_HEALTH_ENERGY = 0,      ///< energy grew beyond what work and gravity explain
    DVI_HEALTH_ESCAPE = 1,      ///< bodies left the region that bounds the scene
    DVI_HEALTH_PENETRATION = 2, ///< a contact penetrates (overlaps) too deep
    DVI_HEALTH_JOINT = 3,       ///< a joint came apart
    DVI_HEALTH_BLOWUP = 4,      ///< the energy exploded (the step that found it failed)
    DVI_HEALTH_CHATTER = 5,     ///< a DEM contact's friction reversed direction step after step
                                ///< (dvi_step_stats.chattering_contacts)
    DVI_HEALTH_AUDIT = 6,       ///< the energy audit does not close: energy gained or lost that no work,
                                ///< contact or joint accounts for (integration error)
    DVI_HEALTH_HOVER = 7,       ///< the CCP's relaxation opened a sliding contact by a good part of the
                                ///< envelope, or took a good part of the energy, in one step: Coulomb's
                                ///< law would keep the contact closed (docs/health.md)
    DVI_HEALTH_KINDS = 8
} dvi_health_kind;

typedef struct dvi_health_report {
    uint32_t raised;            ///< bit k set: kind k has occurred
    int64_t first_step[DVI_HEALTH_KINDS]; ///< step count at which kind k first occurred, −1 if never
    char first[DVI_HEALTH_KINDS][256];    ///< what was seen then, naming the body, contact or joint
    double energy_scale;        ///< J: the initial kinetic energy, plus total dynamic mass × |g| × the
                                ///< initial region's height (at least the largest shape), plus W_in
    double energy_excess;       ///< largest (E − E₀ − W_in) / energy_scale so far
    double work_in;             ///< J: work of the motors, applied forces, force elements and kinematic
                                ///< bodies so far, both signs (before this version: positive parts)
    /* the energy audit (docs/health.md): energy_change = work_in − dissipated_contacts −
     * dissipated_joints + audit_error */
    double energy_change;       ///< J: change of the kinetic energy plus gravity's potential so far
    double dissipated_contacts; ///< J: energy taken by the contacts' impulses (DEM: forces) so far
    double dissipated_joints;   ///< J: energy taken by the joints' impulses (motor rows excluded) so far
    double audit_error;         ///< J: what no work, contact or joint accounts for: integration error
    double audit_worst;         ///< largest |audit_error| / energy_scale so far
    int64_t escaped;            ///< bodies outside the region after the last step
    double worst_penetration;   ///< largest penetration (overlap) over the smaller shape so far
    double worst_joint;         ///< largest relative joint violation so far
    double hover_worst;         ///< largest ccp_hover / collision envelope of a step so far
    double hover_work_worst;    ///< largest ccp_hover_friction / kinetic energy (as hover_work_fraction)
                                ///< of a step so far
} dvi_health_report;

#ifdef __cplusplus
}
#endif
#endif /* DVI_WORLD_H */
