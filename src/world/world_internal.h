/* dvicontact — internal: the world's storage and the joint row builder.
 *
 * Design note. Bodies, shapes and joints live in contiguous arrays indexed
 * by id (index1 − 1), with a generation counter per slot; nothing points at
 * anything else, so the step can later be split over threads or domains.
 * dvi_world_step (step.c) runs the DVI step (step_dvi.c) or the DEM step
 * (step_dem.c), both in the stages collide → assemble → solve → integrate
 * → report, sharing step_common.c. Each keeps every per-step array in grow-only buffers of the world: after the
 * first steps no stage allocates.
 */
#ifndef DVI_WORLD_INTERNAL_H
#define DVI_WORLD_INTERNAL_H

#include "collision.h"
#include "dvi/world.h"

typedef struct wld_body {
    dvi_body_type type;
    uint16_t generation;
    double mass, inv_mass;
    double inertia[9], inv_inertia[9]; /* body frame */
    double x[3], q[4], v[3], w[3];
    double force[3], torque[3];        /* applied, world frame */
    double gravity_scale;
    double contact_force[3], contact_torque[3]; /* last step */
    double step_force[3], step_torque[3];       /* the force elements' in the last (or current) step */
    /* shape summary (dvi_body_get_info), kept by wld_body_note_shape */
    int32_t shape_count;
    dvi_shape_type first_shape;        /* 0 while the body has no shape */
    double bounding_radius;            /* about the centre of mass, bounded shapes only */
    int32_t shape_head, shape_tail;    /* its shapes (w->shapes), linked by wld_shape.next; valid when
                                        * shape_count > 0 */
    int32_t excluded_pairs;            /* joints that keep this body's shapes off another body's */
} wld_body;

typedef struct wld_shape {
    int32_t body;
    uint16_t generation;
    dvi_shape_type type;
    int32_t next;                      /* the body's next shape, −1: last (dvi_body_get_shape) */
    double radius, half_length, half[3];
    col_heightfield* hfield;
    col_trimesh* mesh;
    double lpos[3], lrot[9];           /* pose in the body frame */
    int32_t material;                  /* into the world's materials (wld_shape_material) */
    uint32_t category, mask;           /* collision filter (dvi_shape_def) */
} wld_shape;

/* Shape s as a geom at the origin of its own frame: what its class's
 * functions read (col_shape_class). */
static inline col_geom wld_shape_local_geom(const wld_shape* s)
{
    col_geom g = {.type = s->type, .radius = s->radius, .half_length = s->half_length, .hfield = s->hfield,
                  .mesh = s->mesh};
    g.half[0] = s->half[0], g.half[1] = s->half[1], g.half[2] = s->half[2];
    g.rot[0] = g.rot[4] = g.rot[8] = 1.0;
    return g;
}

#define DVI_JOINT_MAX_ROWS 7

typedef struct wld_joint {
    dvi_joint_type type;
    uint16_t generation;
    int32_t a, b;                      /* body indices; a = −1: the world */
    double la[3], lb[3];               /* anchors in the A and B frames (A: world if a = −1) */
    double axa[3], pa[3], qa[3];       /* axis and two perpendiculars in the A frame */
    double pb[3], qb[3];               /* perpendiculars of the axis in the B frame */
    double q_rel0[4];                  /* initial qA* qB */
    double length;                     /* distance joint */
    dvi_motor_type motor;
    double speed, ramp, torque;
    double damping;                    /* speed motors: torque per unit speed error, 0 = exact */
    int32_t nrows;                     /* rows in the last CCP */
    double gamma[DVI_JOINT_MAX_ROWS];  /* last impulses (warm start) */
    double jb[DVI_JOINT_MAX_ROWS][6];  /* J_B of each row in the last step (reactions) */
    double ja[DVI_JOINT_MAX_ROWS][6];  /* J_A of each row in the last step (the health monitor's energy
                                        * audit; not in the saved state: read right after a step) */
    double reaction_force[3], reaction_torque[3];
    bool collide_connected;            /* false: the two bodies' shapes never touch */
    double size;                       /* m: the longer anchor lever at creation (relative violations) */
} wld_joint;

/* One bilateral row of a joint: u = ja·vA + jb·vB + bias + compliance·γ = 0,
 * with v = (linear, angular) in world frame. violation: position-level error
 * (0 for motors). compliance: 1/(damping·h) on a damped speed motor's row,
 * else 0. */
typedef struct wld_joint_row {
    double ja[6], jb[6];
    double bias;
    double violation;
    double compliance;
} wld_joint_row;

/* Rows of joint j between bodies A (NULL = world) and B for a step of h
 * ending at time t_end; returns the number of rows. */
int wld_joint_build_rows(const wld_joint* j, const wld_body* A, const wld_body* B, double t_end, double h,
                         double recovery_speed, wld_joint_row* rows);
/* Number of rows wld_joint_build_rows gives for j. */
int wld_joint_row_count(const wld_joint* j);
/* Fills the joint's frames from the def and the current body poses. */
dvi_status wld_joint_init(wld_joint* j, const dvi_joint_def* def, const wld_body* A, const wld_body* B);

/* Warm start: the previous step's contact points (sorted by shape pair, as
 * the collision layer returns them) and an open-addressing index from a
 * shape pair to its first point. */
typedef struct wld_warm_point {
    int32_t shape_a, shape_b;
    uint32_t feature;
    int32_t roll;     /* its spin and rolling impulses: w->warm_roll[3 roll …], or −1: none (zeros) */
    double point[3];
    double gamma[3];  /* normal and tangential impulses */
} wld_warm_point;

typedef struct wld_warm_slot {
    int32_t shape_a, shape_b; /* shape_a = −1: empty */
    int32_t first;            /* index into the previous points */
} wld_warm_slot;

/* Per-contact output of the last step. Contact c's normal, lever arms and
 * ℓ are not repeated here: they are the frame arrays the solver read (the
 * normal and the arms in single precision, as the solver used them),
 * w->fr_frame[9c..9c+2] (n; the tangents after it are basis_from_normal(n)),
 * w->fr_arm[6c..6c+5] (ρ_a, ρ_b: the point relative to the centres at the
 * start of the step) and w->fr_ell[c] (the lever scaling the spin and
 * rolling rows, 1 without them); the DEM step fills them too. */
typedef struct wld_contact_rec {
    int32_t body_a, body_b, shape_a, shape_b;
    uint32_t feature;
    int32_t row, nrows;
    double point[3];
    double distance;
    double force[3];
} wld_contact_rec;

/* The direct joint solver's state (joint_direct.c), after CSparse's css
 * (symbolic) and csn (numeric): created on the first direct step, grown and
 * freed by joint_direct.c alone; every array is grow-only, in the world's
 * allocator. The world's saved state does not hold it: each step
 * refactors the numbers, and the analysis is redone when the joint rows'
 * bodies differ from those it was made for (sym.key). */
typedef struct wld_jd_symbolic {
    /* the analysis of N_BB's pattern, kept while the joint rows' dynamic
     * bodies (key) stay the same */
    bool valid;                 /* the analysis below is of n rows, ndyn dynamic bodies */
    int32_t n, ndyn;
    int32_t npairs;             /* pairs of rows sharing a body (pair) */
    int32_t* key;               size_t key_cap;       /* [2 rows] the dynamic bodies of each joint row */
    int32_t* perm;              size_t perm_cap;      /* [rows] the ordering: new → old row */
    int32_t* pinv;              size_t pinv_cap;      /* [rows] old → new */
    int32_t* bptr;              size_t bptr_cap;      /* [dynamic + 1] rows on each body (CSR) … */
    int32_t* bcol;              size_t bcol_cap;      /* … the row */
    int32_t* bent;              size_t bent_cap;      /* … the offset of its 6 entries in D */
    int32_t* mark;              size_t mark_cap;      /* [rows] work */
    int32_t* stack;             size_t stack_cap;     /* [rows] work */
    int32_t* cp;                size_t cp_cap;        /* C = P N_BB Pᵀ, upper, CSC (its values: num.cx) */
    int32_t* ci;                size_t ci_cap;
    int32_t* ci2;               size_t ci2_cap;       /* work of the analysis */
    int32_t* cdiag;             size_t cdiag_cap;     /* [rows] the diagonal entry of each column of C */
    int32_t* pair;              size_t pair_cap;      /* [3 pairs] C entry, D offsets of the two rows */
    int32_t* parent;            size_t parent_cap;    /* [rows] elimination tree */
    int32_t* lp;                size_t lp_cap;        /* L's pattern, CSC, diagonal first in each column */
    int32_t* li;                size_t li_cap;
    int32_t* rp;                size_t rp_cap;        /* L's rows' patterns, topological order */
    int32_t* ri;                size_t ri_cap;
} wld_jd_symbolic;

/* The most nearly singular rows whose nearly null directions a direct step
 * takes out of the joint rows' right-hand side (joint_direct.c) */
#define DVI_JOINT_NEAR_MAX 8
typedef struct wld_jd_numeric {
    /* the step's factor into the analysed pattern */
    int32_t dropped;            /* rows dropped as redundant in the last factorisation */
    int32_t regularised;        /* rows whose pivot was raised (L Lᵀ = N_BB + E) */
    int32_t first_raised;       /* the first of them (permuted order), the row count when none */
    int32_t nnear;              /* nearly singular rows dropped (inconsistent), at most DVI_JOINT_NEAR_MAX */
    int32_t near[DVI_JOINT_NEAR_MAX]; /* those rows (permuted order) */
    double gnear[DVI_JOINT_NEAR_MAX * DVI_JOINT_NEAR_MAX]; /* the Cholesky factor of VᵀV */
    int32_t refinements;        /* conjugate-gradient steps of the last solve against N_BB */
    double residual;            /* the joint rows' relative residual after the last solve */
    double* cx;                 size_t cx_cap;        /* C's values */
    double* lx;                 size_t lx_cap;        /* L's values */
    double* dinv;               size_t dinv_cap;      /* [rows] 1 / L's diagonal, 0 for a dropped row */
    double* minvd;              size_t minvd_cap;     /* M⁻¹ D of the joint rows */
    int32_t* next;              size_t next_cap;      /* [rows] work */
    double* x;                  size_t x_cap;         /* [rows] work */
    double* rhs;                size_t rhs_cap;       /* [rows] the joint rows' right-hand side, permuted */
    double* res_w;              size_t res_w_cap;     /* [rows] the refinement's residual, then its step */
    double* cy_w;               size_t cy_w_cap;      /* [rows] C y */
    double* vnear;              size_t vnear_cap;     /* [rows × nnear] V: their nearly null directions */
    /* the contacts' Schur complement, dense … */
    double* z;                  size_t z_cap;         /* [rows × contact rows] Z = L⁻¹ P N_BC */
    int32_t* zlo;               size_t zlo_cap;       /* [contact rows] Z's column t is zero above this row */
    double* y;                  size_t y_cap;         /* [rows] L⁻¹ P r_B */
    double* s;                  size_t s_cap;         /* [contact rows²] S, dense, both triangles */
    int32_t* scol;              size_t scol_cap;      /* S's CSC column pointers and rows */
    int32_t* srow;              size_t srow_cap;
    double* rs;                 size_t rs_cap;        /* [contact rows] r_S */
    double* jc;                 size_t jc_cap;        /* [24 contact rows] J_a, J_b, M⁻¹J_a, M⁻¹J_b */
    int32_t* cbody;             size_t cbody_cap;     /* [2 contact rows] dynamic bodies */
    /* … or matrix-free, N_CC − Gᵀ G with G = Z sparse (many contacts: the
     * solver's low-rank term, dvi_ccp_problem.G) */
    int32_t* gp;                size_t gp_cap;        /* [contact rows + 1] G, CSC */
    int32_t* gi;                size_t gi_cap;
    double* gx;                 size_t gx_cap;
    int32_t* dzero;             size_t dzero_cap;     /* [contact rows + 1] zeros: D has no column of a contact */
    int32_t* frblock;           size_t frblock_cap;   /* [contacts] each contact's block in the contacts' problem */
    double* col;                size_t col_cap;       /* [6 rows] one contact's columns of Z */
    dvi_csc g, dc;              /* G and the contacts' empty D, as the solver's problem points to them */
} wld_jd_numeric;

/* The dense solve of a few joint rows alone (wld_step_joint_direct). */
typedef struct wld_jd_dense {
    double* nmat;               size_t nmat_cap;      /* N and its Cholesky factor */
    double* lmat;               size_t lmat_cap;
    double* minvd;              size_t minvd_cap;     /* M⁻¹ D, the sparsity of D */
    int32_t* bptr;              size_t bptr_cap;      /* columns of each dynamic body (CSR) */
    int32_t* bcol;              size_t bcol_cap;
    int32_t* bent;              size_t bent_cap;
} wld_jd_dense;

/* Every array of the three parts, for freeing them all (joint_direct.c):
 * an array added to a part above is added to its list. */
#define DVI_JD_SYMBOLIC_ARRAYS(X) X(key) X(perm) X(pinv) X(bptr) X(bcol) X(bent) X(mark) X(stack) X(cp) X(ci) \
    X(ci2) X(cdiag) X(pair) X(parent) X(lp) X(li) X(rp) X(ri)
#define DVI_JD_NUMERIC_ARRAYS(X) X(cx) X(lx) X(dinv) X(minvd) X(next) X(x) X(rhs) X(res_w) X(cy_w) X(vnear) X(z) X(zlo) X(y) X(s) \
    X(scol) X(srow) X(rs) X(jc) X(cbody) X(gp) X(gi) X(gx) X(dzero) X(frblock) X(col)
#define DVI_JD_DENSE_ARRAYS(X) X(nmat) X(lmat) X(minvd) X(bptr) X(bcol) X(bent)

typedef struct wld_joint_factor {
    wld_jd_symbolic sym;
    wld_jd_numeric num;
    wld_jd_dense dense;
} wld_joint_factor;

/* The fallback to one thread (dvi_world_def.thread_fallback). A step on
 * `full` > 1 threads whose process took less than GUARD_EFFICIENCY × full
 * CPU seconds per wall second (a core shared with another process: the
 * team waits at every barrier for the thread the OS descheduled), or that
 * took more than twice the mean of its mode, is followed by a trial step on
 * the other count; the steps stay on whichever ran the faster (by 10%). On
 * one thread a trial on `full` threads comes after `interval` steps,
 * doubling from GUARD_FIRST to GUARD_LAST while one thread stays the
 * faster; when it is due and the one thread itself ran less than
 * GUARD_EFFICIENCY of the wall time (no core is free), the interval
 * doubles without the trial. The bits are the same for any thread count,
 * so this changes times only (world_core.c). */
typedef struct wld_thread_guard {
    int32_t threads;    /* the threads of the step under way (wld_threads); 0: none set */
    bool one;           /* the steps run on one thread */
    bool trial;         /* the step under way runs on the other count */
    int32_t countdown;  /* steps on one thread until the next trial */
    int32_t interval;   /* steps between those trials */
    int64_t steps;      /* steps timed */
    double mean;        /* s, mean wall time of a step in the current mode (exponential, weight 1/4) */
    int64_t fewer;      /* steps run on one thread instead of `full` (dvi_step_stats.fallback_steps) */
} wld_thread_guard;

#define GUARD_EFFICIENCY 0.8
#define GUARD_FIRST 16
#define GUARD_LAST 1024

/* The threads of the next step: 1 or full (full ≤ 1, or on false: full). */
int wld_guard_threads(const wld_thread_guard* g, int full, bool on);
/* Notes a step on `threads` of `full` that took `wall` seconds, the
 * process `cpu` CPU seconds; decides the next step's threads. */
void wld_guard_note(wld_thread_guard* g, int full, int threads, double wall, double cpu);

struct dvi_world {
    dvi_world_def def;
    dvi_allocator alloc;    /* def.allocator: every array below, the collision's, the DEM state's, the solver's */
    uint16_t tag;
    double time;
    char last_error[512];   /* the text of the last failure, also the thread's (wld_error) */
    dvi_body_namer* namer;  /* names bodies in that text (dvi_world_set_body_namer); NULL: bodies[i] */
    void* namer_user;

    wld_body* bodies;   int32_t body_count; size_t body_cap;
    wld_shape* shapes;  int32_t shape_count; size_t shape_cap;
    dvi_material* materials; int32_t material_count; size_t material_cap; /* the shapes' materials: a shape
                                                    * takes the last entry when its material is
                                                    * the same (a generated bed holds one), else
                                                    * a new one (104 bytes a shape fewer) */
    wld_joint* joints;  int32_t joint_count; size_t joint_cap;
    uint64_t* excluded; int32_t excluded_count; size_t excluded_cap; /* body pairs that never touch (sorted keys, collision.h) */

    dvi_solver* solver;
    col_collision* collision;
    dvi_step_stats stats;

    /* per-step buffers (grow-only) */
    col_geom* geoms;            size_t geoms_cap;
    int32_t* dyn;               size_t dyn_cap;       /* body -> dynamic index or -1 */
    double* vfree;              size_t vfree_cap;     /* [6 * bodies] */
    double* inv_mass;           size_t inv_mass_cap;  /* [10 * dynamic]: 1/m, then the world-frame inverse
                                                       * inertia row-major (dvi_ccp_problem.inv_mass_rigid) */
    dvi_ccp_block* blocks;      size_t blocks_cap;
    double* r;                  size_t r_cap;
    double* compliance;         size_t compliance_cap;
    double* gamma;              size_t gamma_cap;
    int32_t* colptr;            size_t colptr_cap;
    int32_t* rowind;            size_t rowind_cap;
    double* values;             size_t values_cap;
    wld_contact_rec* contacts;  size_t contacts_cap;  int32_t contact_count;
    wld_warm_point* warm;       size_t warm_cap;      int32_t warm_count;
    double* warm_roll;          size_t warm_roll_cap; /* [3 * points with spin and rolling rows] */
    wld_warm_slot* slots;       size_t slots_cap;     size_t slot_count; /* power of two */
    double* dv;                 size_t dv_cap;        /* [6 * dynamic] */
    bool* taken;                size_t taken_cap;     /* previous points already matched */
    double* joint_jb;           size_t joint_jb_cap;  /* [6 * joint rows] J_B of each joint row, until commit */
    double* joint_ja;           size_t joint_ja_cap;  /* [6 * joint rows] J_A of each joint row, until commit */
    double* joint_lever;        size_t joint_lever_cap; /* [3 * joints] p_B − x_B at the step's start, which J_B used */
    /* the contacts' rows, given to the solver by their frames (dvi_ccp_frames);
     * after the step, with w->contacts, the last step's contacts */
    int32_t* fr_block;          size_t fr_block_cap;  /* [contacts] */
    int32_t* fr_body;           size_t fr_body_cap;   /* [2 contacts] dynamic indices or −1 */
    float* fr_frame;            size_t fr_frame_cap;  /* [9 contacts] single precision (dvi_ccp_frames.frame_f) */
    float* fr_arm;              size_t fr_arm_cap;    /* [6 contacts] (dvi_ccp_frames.arm_f) */
    double* fr_ell;             size_t fr_ell_cap;    /* [contacts] */
    int32_t* chunk_start;       size_t chunk_start_cap; /* parallel assembly: first contact of each chunk */
    /* the Coulomb check (def.coulomb_check, step_dvi.c): grown once, made when first needed */
    dvi_solver* check_solver;   /* NULL until a step needs it, and after dvi_world_set_solver */
    int32_t check_index;        /* the check's solver in the registry, −1: no check */
    double* check_gamma;        size_t check_gamma_cap; /* [rows] its answer */
    double* check_r;            size_t check_r_cap;     /* [rows] its r (contacts held open) */
    double* check_dv;           size_t check_dv_cap;    /* [6 * dynamic] M⁻¹ D of it */
    double* check_body;         size_t check_body_cap;  /* [4 * dynamic] net normal force, sliding flag */

    struct wld_joint_factor* jf; /* the direct joint solver's state (joint_direct.c); NULL until used */

    struct wld_dem* dem;        /* DEM back end (dem.h): history, samples; NULL until used */

    /* force elements (force_element.c), applied at the start of every step */
    struct wld_force_element_rec* elements; int32_t element_count, element_cap;

    wld_thread_guard guard; /* the fallback to one thread (def.thread_fallback, world_core.c) */

    /* one process's part of a scene split over processes (src/dist, wld_set_share):
     * share is NULL, or the callbacks the DVI step hands its CCP (dvi_ccp_shared)
     * with share_body_own[k] = 1 for each body k this process owns; the step
     * adds the masks of its blocks and dynamic bodies (a contact is its body
     * a's, or body b's when a is fixed) */
    const dvi_ccp_shared* share;
    const uint8_t* share_body_own;
    dvi_ccp_shared share_step;
    uint8_t* share_block;       size_t share_block_cap;
    uint8_t* share_dyn;         size_t share_dyn_cap;
};

/* Makes w one process's part of a problem split over processes (NULL: none):
 * share's ctx, exchange, sum and max are the DVI step's CCP's
 * (dvi_ccp_shared; its masks are ignored), body_own[k] for each body k.
 * Both borrowed until the next call. */
void wld_set_share(dvi_world* w, const dvi_ccp_shared* share, const uint8_t* body_own);

/* The material of shape s. */
static inline const dvi_material* wld_shape_material(const dvi_world* w, const wld_shape* s)
{
    return &w->materials[s->material];
}

/* Records an error message on the world as the thread's last error
 * (dvi_error_message), sends it to the log and returns st (world_core.c).
 * A body named in it is named by wld_body_name. */
dvi_status wld_error(dvi_world* w, dvi_status st, const char* fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* Validates a state blob against the world as dvi_world_load_state does,
 * without writing anything; *time (if given) gets the state's time. The
 * model's loader checks its step count against that time first. */
dvi_status wld_check_state(dvi_world* w, const void* data, size_t size, double* time);

/* dvi_world_save_state into one buffer of before + *size + after bytes:
 * the world's state at offset `before` (*size: its length), the rest left
 * for the caller (the model's header, probe and health sections), so a
 * model state is written without a second copy of the world's. */
dvi_status wld_save_state_within(const dvi_world* w, size_t before, size_t after, void** data, size_t* size);

/* Body b's name for an error message, in out[size]: the world's namer's
 * (dvi_world_set_body_namer), or "bodies[b]" (b: creation index). Returns out. */
const char* wld_body_name(const dvi_world* w, int32_t b, char* out, size_t size);

/* Resolves an id to an index, or −1 (stale, null, other world). */
int32_t wld_body_index(const dvi_world* w, dvi_body_id id);

/* OpenMP threads of the world's step: its solver settings' `threads`
 * resolved as the solvers do (0 = omp_get_max_threads()), or fewer while
 * the step runs on the fallback's (w->guard.threads); 1 without OpenMP. */
int wld_threads(const dvi_world* w);
/* The same without the fallback: the threads the settings ask for. */
int wld_threads_asked(const dvi_world* w);

/* Updates body b's shape summary and shape list for the shape w->shapes[si]
 * just attached to it (world_query.c). */
void wld_body_note_shape(dvi_world* w, int32_t b, int32_t si);
/* Body b's state as 13 doubles: x, q, v, ω (world_query.c). */
void wld_body_state13(const wld_body* b, double* out);

/* ---- rotation (step_common.c) ---- */

/* True when the body's inertia is a multiple of the identity (a sphere):
 * its midpoint and end angular velocities coincide. */
bool wld_body_isotropic(const wld_body* b);
/* The angular velocity at the step's end of a dynamic body turned from q0
 * to q1 by the Cayley rotation of h w_step, whose free (midpoint) angular
 * velocity was w_mid: I(q1)⁻¹ L⁺, L⁺ its angular momentum after the step's
 * impulses (docs/formulation.md). */
void wld_step_end_angular_velocity(const wld_body* b, const double q0[4], const double q1[4], const double w_mid[3],
                                   const double w_step[3], double h, double out[3]);

/* ---- force elements (force_element.c) ---------------------------------------------------- */

typedef struct wld_force_element_rec {
    const dvi_force_element_class* cls;
    void* self;
} wld_force_element_rec;

/* Zeroes every body's step force, then runs the elements' apply in order;
 * a failure names the element on the world's message. */
dvi_status wld_force_elements_apply(dvi_world* w, double h);
/* Destroys the elements that own themselves and frees the list. */
void wld_force_elements_free(dvi_world* w);

/* ---- the steps: dvi_world_step (step.c) runs one of them --------------------------------- */

/* The DVI step (step_dvi.c) and the DEM step (step_dem.c, dem.h); h checked. */
dvi_status wld_step_dvi(dvi_world* w, double h);

/* ---- shared by the DVI step (step_dvi.c) and the DEM step (step_dem.c): step_common.c ---- */

/* Monotonic clock in seconds (stage timings). */
double wld_step_clock(void);
/* The step's stage times into w->stats from the clock's readings t[0..5]
 * at the starts of collide, assemble, solve, integrate, report and at the
 * end. */
void wld_step_stage_times(dvi_world* w, const double t[6]);
/* Grows *p to hold n elements of size elem, contents kept; false when out of memory. */
bool wld_reserve(const dvi_allocator* a, void** p, size_t* cap, size_t n, size_t elem);
/* o: the world or the DEM state (each has its allocator in o->alloc) */
#define DVI_RESERVE(o, field, n) wld_reserve(&(o)->alloc, (void**)&(o)->field, &(o)->field##_cap, (size_t)(n), sizeof *(o)->field)

/* d[0..n) = the single-precision numbers f[0..n) (the contacts' frames and arms). */
static inline void wld_f2d(const float* f, int n, double* d)
{
    for (int k = 0; k < n; k++) d[k] = (double)f[k];
}

/* Sizes the contacts' frame arrays (w->fr_frame, fr_arm, fr_ell) for n
 * contacts; false when out of memory. */
bool wld_step_reserve_frames(dvi_world* w, int32_t n);
/* Places every shape's geometry (w->geoms) at its body's pose and runs the
 * collision layer; sizes w->dyn and w->vfree. On failure records the error. */
dvi_status wld_step_collide(dvi_world* w, const col_contact_point** pts, int32_t* npts);
/* Numbers the dynamic bodies (w->dyn), fills w->inv_mass (world frame, 10 numbers a body) and the
 * free velocities v_free = v + h M⁻¹ (f + acc + m g − ω × Jω) plus the torque
 * motors' ±τ a; acc: [6 · bodies] extra force and torque per body (the DEM
 * contacts), or NULL. Sizes w->dv. */
dvi_status wld_step_free_velocities(dvi_world* w, double h, const double* acc, int32_t* ndyn);
/* Appends one D column at w->rowind/values[*nz]: J_A on body a and J_B on body b
 * (a or b = −1: the world), dynamic bodies only, lower dynamic index first. */
void wld_step_add_column(dvi_world* w, int32_t* nz, const double* ja, int32_t a, const double* jb, int32_t b);
/* The number of joint rows this step. */
int32_t wld_step_joint_row_total(const dvi_world* w);
/* Writes the joint rows 0.. of the step's CCP (colptr, D entries from *nz, r from
 * w->vfree, compliance, warm-start gamma, bilateral blocks) and stages each J_B in
 * w->joint_jb; the buffers must hold wld_step_joint_row_total rows. Raises
 * *any_compliance and *max_violation; returns the rows written. */
int32_t wld_step_joint_rows(dvi_world* w, double h, int32_t* nz, bool* any_compliance, double* max_violation);
/* Joint-only problems of at most this many rows are solved directly. */
#define DVI_JOINT_DENSE_ROWS 256
/* Direct solve of the joint rows 0 … n−1 alone (w->colptr, rowind, values,
 * r, compliance as wld_step_joint_rows wrote them) into w->gamma; false
 * when out of memory, else *rel = ‖Nγ + r‖ / max(‖r‖, ‖γ‖, ‖Nγ + r‖). */
bool wld_step_joint_direct(dvi_world* w, int32_t n, int32_t ndyn, double* rel);
/* w->dv += D γ over the joint rows 0 … nrows−1 (6 numbers a dynamic body,
 * rows in order): what the joints' impulses give each body. */
void wld_step_joint_impulses(dvi_world* w, int32_t nrows);
/* Commits the joint rows' impulses w->gamma[0..] and staged J_B into the joints
 * and sets their reaction force and torque (about the anchor on B, bodies' new poses). */
void wld_step_joint_reactions(dvi_world* w, double h);
/* Kinetic energy (J) of the dynamic bodies in their present state, summed
 * in body order (the same bits for any thread count). */
double wld_step_kinetic_energy(const dvi_world* w);

/* ---- the joint rows eliminated by a sparse factorisation: joint_direct.c ---- */

/* A pivot at or below this fraction of its row's diagonal of N_BB drops
 * the row (redundant to rounding): its impulse is 0 (the dense path's rule). */
#define DVI_JOINT_PIVOT_DROP 1e-10
/* A pivot below this fraction of N_BB's largest diagonal (the scale of its
 * largest eigenvalue) … */
#define DVI_JOINT_PIVOT_FLOOR 1e-7
/* … and below this fraction of its own row's diagonal is nearly singular:
 * raised to the smaller of the two and refined against N_BB, or dropped
 * when its rows are not consistent (a loop redundant to second order, the
 * rover's differential: joint_direct.c). A row whose pivot keeps a larger
 * share of its diagonal is independent, however small that diagonal beside
 * the largest (a heavy wheel's motor beside a light sensor's joint) */
#define DVI_JOINT_PIVOT_REL 1e-2
/* The refinement against N_BB (joint_direct.c): its relative residual
 * target (with the solver's tolerance, the smaller), and its most steps */
#define DVI_JOINT_REFINE_TARGET 1e-10
#define DVI_JOINT_REFINE_STEPS 4
/* Frees the world's w->jf (NULL: nothing), at the world's destruction. */
void wld_joint_direct_free(dvi_world* w);
/* Factors N_BB of the joint rows 0 … n−1 (D, compliance as
 * wld_step_joint_rows wrote them), analysing its pattern first when the
 * rows' bodies changed. Records the error. */
dvi_status wld_joint_direct_factor(dvi_world* w, int32_t n, int32_t ndyn);
/* Joint rows alone: γ_B = −N_BB⁻¹ r_B into w->gamma; returns the relative
 * residual ‖Nγ + r‖ / max(‖r‖, ‖γ‖, ‖Nγ + r‖). */
double wld_joint_direct_solve(dvi_world* w, int32_t n);
/* The Schur complement of the ncr contact rows (rows n … n+ncr−1, npts
 * contacts, frames as assembled): S (w->jf->num.s, dense, CSC in its scol,
 * srow) and r_S (num.rs). Records the error. */
dvi_status wld_joint_direct_schur(dvi_world* w, int32_t n, int32_t npts, int32_t ncr);
/* γ_B from the contacts' γ_C (w->gamma[n …]) after the Schur solve. */
void wld_joint_direct_recover(dvi_world* w, int32_t n, int32_t ncr);
/* w->dv = M⁻¹ (D_B γ_B + D_C γ_C) after a direct step (npts contacts, 0:
 * joints alone), dense or matrix-free. */
void wld_joint_direct_velocity(dvi_world* w, int32_t n, int32_t npts, int32_t ndyn);
/* The Schur complement of the contact rows matrix-free: G = Z (w->jf->num.gp,
 * gi, gx: only the contacts on joint bodies have a column), r_S
 * (num.rs), and the contacts' problem's empty D and block numbers.
 * Records the error. */
dvi_status wld_joint_direct_lowrank(dvi_world* w, int32_t n, int32_t npts, int32_t ncr);
/* γ_B from γ_C after the low-rank solve. */
void wld_joint_direct_recover_lowrank(dvi_world* w, int32_t n, int32_t npts, int32_t ncr);

#endif /* DVI_WORLD_INTERNAL_H */
