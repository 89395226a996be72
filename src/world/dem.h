/* dvicontact — internal: the DEM penalty ("smooth contact") back end.
 *
 * Design note. DEM shares the world's bodies, shapes, collision detection
 * and joints with the DVI step (step_common.c); dvi_world_step dispatches to
 * wld_step_dem (step_dem.c) when def.method is DVI_METHOD_DEM. A DEM step runs the stages
 *     geoms → collide → contact forces (penalty, with history)
 *           → terrain samples (hysteretic height-field model)
 *           → free velocities (symplectic Euler) → bilateral solve (joints)
 *           → guard (finite, bounded speeds) → commit (bodies, history) → outputs
 * and nothing is written to the world before the guard has passed, so a step
 * that fails leaves the world as it was.
 *
 * Contact history. Each contact point that overlaps carries state from step
 * to step: the tangential spring displacement u (world vector, kept in the
 * tangent plane) and the rolling spring rotation θ. It is keyed by
 * (shape_a, shape_b, feature) — the collision layer's pair order and its
 * stable feature id — in an open-addressing table (linear probing,
 * backward-shift deletion, load ≤ 1/2) over a dense array of entries:
 * find, insert and remove are O(1) expected; an entry is created on the
 * first step of overlap and removed on the first step without it. The table
 * is only probed, never iterated into results, so nothing depends on its
 * layout. Memory is grow-only: a settled system allocates nothing.
 *
 * Files: dem.c (settings, pair constants, the step), dem_history.c (the
 * table), dem_terrain.c (the hysteretic point–height-field model).
 * Formulas and sources: docs/dem.md.
 */
#ifndef DVI_DEM_H
#define DVI_DEM_H

#include "world_internal.h"

#include <stdbool.h>
#include <stdint.h>

/* ---- contact history (dem_history.c) ------------------------------------------ */

typedef struct wld_dem_key {
    int32_t shape_a, shape_b; /* as the collision layer orders them (shape_a < shape_b) */
    uint32_t feature;         /* the collision layer's feature id, or the sample index */
} wld_dem_key;

typedef struct wld_dem_entry {
    wld_dem_key key;
    uint64_t stamp;  /* last DEM step in which the contact overlapped */
    double u[3];     /* tangential spring displacement, world frame (m) */
    double roll[3];  /* rolling spring rotation, world frame (rad) */
    double ft[3];    /* friction force of the last step (N, world; for the chatter count only) */
    int32_t reversals; /* consecutive steps on which that force reversed near the Coulomb limit */
    bool near_limit; /* that force was at DVI_DEM_CHATTER_FRACTION of μ F_n or more */
} wld_dem_entry;

typedef struct wld_dem_history {
    wld_dem_entry* entries; /* dense, [count]; order is not meaningful */
    int32_t count, cap;
    int32_t* slots;         /* [slot_count], entry index or −1; slot_count a power of two */
    int32_t slot_count;
    dvi_allocator alloc;    /* the world's */
} wld_dem_history;

void wld_dem_history_init(wld_dem_history* h, const dvi_allocator* alloc);
void wld_dem_history_free(wld_dem_history* h);
/* Index of the entry with key k, or −1. */
int32_t wld_dem_history_find(const wld_dem_history* h, const wld_dem_key* k);
/* Appends a zeroed entry with key k (which must be absent) and returns its
 * index in *index. DVI_ERR_NOMEM leaves the table unchanged. */
dvi_status wld_dem_history_insert(wld_dem_history* h, const wld_dem_key* k, int32_t* index);
/* Removes entry `index`; the last entry moves into its place. */
void wld_dem_history_remove(wld_dem_history* h, int32_t index);
/* Removes every entry whose stamp differs from `stamp`; returns how many. */
int32_t wld_dem_history_sweep(wld_dem_history* h, uint64_t stamp);
/* Makes room for n entries without further allocation. */
dvi_status wld_dem_history_reserve(wld_dem_history* h, int32_t n);

/* ---- the hysteretic height-field model (dem_terrain.c) --------------------------- */

/* One sample point against a height field (local frame of the field): the
 * triangle under (x, y), its upward unit normal and the signed distance z
 * of p from its plane along that normal (< 0: below the surface). Returns
 * false when p is outside the grid. */
bool wld_dem_terrain_query(const col_heightfield* hf, const double p[3], double normal[3], double* z);

/* Force of the hysteretic law on one sample of area S at signed distance
 * z < 0 with normal speed v_n and tangential velocity v_t (world), given
 * c (N/m³), γ, the friction coefficient μ and the regularisation speed
 * eps: F_n = c S |z| (1 − γ sgn_eps(v_n)) along the normal, and
 * F_t = −μ F_n v_t / max(|v_t|, eps). Returns F_n; writes F_t. */
double wld_dem_terrain_force(double c, double S, double gamma, double mu, double eps, double z, double vn,
                             const double vt[3], double ft[3]);

/* ---- the back end (dem.c) -------------------------------------------------------- */

/* Per shape, prepared once (materials and sizes never change). */
typedef struct wld_dem_shape {
    double radius;       /* characteristic radius (m); INFINITY for plane, height field, mesh */
    double alpha;        /* dimensionless damping factor of the shape's restitution */
    int32_t sample_first, sample_count; /* terrain sample points (4 doubles each) */
} wld_dem_shape;

/* Per contact of the step being computed (committed only after the guard). */
typedef struct wld_dem_work {
    wld_dem_key key;
    int32_t entry;          /* history entry read, or −1 (new contact) */
    double u[3], roll[3];   /* history after this step */
    double ft[3];           /* the step's friction force (N) */
    int32_t reversals;      /* the chatter count after this step */
    bool near_limit;        /* |ft| ≥ DVI_DEM_CHATTER_FRACTION μ F_n */
    double k_eff, m_eff, alpha; /* for the stable-step estimate in messages */
    double omega2, rate;    /* bounds of the pair's bodies' normal spring (1/s²) and dashpot (1/s) rates; 0: none */
    double k_n, d;          /* Hertz: the pair's k_n and length scale (dvi_world_dem_stable_step); d = 0: none */
    int32_t body_a, body_b;
} wld_dem_work;

typedef struct wld_dem {
    dvi_allocator alloc;                     /* the world's: every array below */
    wld_dem_history history;
    uint64_t steps;                          /* DEM steps taken */
    wld_dem_shape* shapes; int32_t shape_cap;
    int32_t prepared;                        /* shapes [0, prepared) have radius and alpha */
    bool lists_dirty;                        /* terrains / sampled to be rebuilt */
    double* samples; int32_t sample_count, sample_cap; /* [4 · sample_cap]: x, y, z (shape frame), area */
    int32_t* terrains; int32_t terrain_count, terrain_cap; /* height fields with terrain_stiffness > 0 */
    int32_t* sampled; int32_t sampled_count, sampled_cap;  /* shapes with samples */
    struct { int model; double e, alpha; } cache[32];
    int32_t cache_count;
    int32_t last_nwork;                      /* work items of the last step (dvi_world_dem_stable_step) */
    /* per-step buffers (grow-only) */
    wld_dem_work* work; size_t work_cap;
    double* acc; size_t acc_cap;             /* [6 · bodies] contact force and torque */
    double* next; size_t next_cap;           /* [13 · bodies] x, q, v, ω after the step */
    wld_contact_rec* recs; size_t recs_cap;  /* the step's contacts, copied to the world on commit */
    double* geo;           size_t geo_cap;   /* [9 recs] their normal, ρ_a, ρ_b (to w->fr_frame, fr_arm on commit) */
    int32_t* touch;        size_t touch_cap; /* [bodies] penalty contacts on each dynamic body this step */
    double* iinv;          size_t iinv_cap;  /* [9 · bodies] world-frame inverse inertia of each dynamic body */
    struct wld_dem_pair* pairs; size_t pairs_cap; /* [penalty contacts] their constants (dem.c) */
    double* ndamp;         size_t ndamp_cap; /* [24 · bodies] each dynamic body's normal dashpots and springs: Σ c n nᵀ, Σ c (ρ×n)(ρ×n)ᵀ, the same with k */
    double* lam;           size_t lam_cap;   /* [2 · bodies] their largest rates, bounded above: dashpots (1/s), springs (1/s²) */
} wld_dem;

/* The DEM step (step_dem.c; called by dvi_world_step, h already checked). */
dvi_status wld_step_dem(dvi_world* w, double h);

/* The step's share of the model (dem.c): prepares the shapes' constants
 * and the per-body buffers (acc, next) for a step. */
dvi_status wld_dem_prepare_step(dvi_world* w, wld_dem* d);

/* What wld_dem_forces found. */
typedef struct wld_dem_forces_out {
    int32_t nwork;       /* work items in d->work (contacts and terrain samples) */
    int32_t ncon;        /* contacts in d->recs / d->geo */
    int32_t new_entries; /* contacts without a history entry yet */
    double max_overlap;  /* m */
    int32_t chattering;  /* contacts whose friction reversed on DVI_DEM_CHATTER_STEPS steps in a row */
    int32_t chatter_contact; /* the first of them in d->recs, −1 if none */
} wld_dem_forces_out;

/* The chatter count: a contact's friction force "reverses" on a step when
 * it and the last step's are each at least DVI_DEM_CHATTER_FRACTION of
 * their μ F_n and point more than 120° apart; a contact that does so on
 * DVI_DEM_CHATTER_STEPS consecutive steps chatters. */
#define DVI_DEM_CHATTER_STEPS 10
#define DVI_DEM_CHATTER_FRACTION 0.5

/* The penalty forces of the overlapping points pts[npts] and of the
 * terrain samples at the start of the step: the bodies' contact force and
 * torque sums in d->acc, each contact's record in d->recs / d->geo, and its
 * updated history in d->work (committed by the step only after its guard). */
dvi_status wld_dem_forces(dvi_world* w, wld_dem* d, double h, const col_contact_point* pts, int32_t npts,
                          wld_dem_forces_out* out);

/* Stable step estimate (symplectic Euler on a spring of rate ω with the
 * step-limited dashpot of rate a ω: h ω < x, a x³ + x² − 2 a x − 4 = 0; ω
 * and a from the bounds of the bodies' normal rates, rotation and their
 * other contacts included) over the first nwork work items that touch body
 * b; INFINITY if none. kmax: the stiffest of them (N/m). */
double wld_dem_stable_step(const wld_dem* d, int32_t nwork, int32_t b, double* kmax);
/* The world's DEM state, created on first use (NULL when out of memory). */
wld_dem* wld_dem_get(dvi_world* w);
void wld_dem_destroy(wld_dem* d);
/* True when the settings are acceptable (world creation checks them). */
bool wld_dem_settings_valid(const dvi_dem_settings* s);

/* Dimensionless damping factor α ≥ 0 for which one collision of the normal
 * model (0 Hooke, 1 Hertz), with the force clamped at zero, has restitution
 * e (clamped to [DVI_DEM_E_MIN, 1]): the normal damping rate is then
 * γ_n = α sqrt(k_n / m_eff). Deterministic; costs a few milliseconds. */
double wld_dem_alpha(int hertz, double e);
/* Restitution of one collision of the dimensionless clamped model with
 * damping factor α (for tests and for wld_dem_alpha). */
double wld_dem_restitution(int hertz, double alpha);
#define DVI_DEM_E_MIN 0.01

#endif /* DVI_DEM_H */
