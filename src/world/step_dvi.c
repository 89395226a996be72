/* dvicontact — the DVI time step (Anitescu–Tasora, docs/formulation.md).
 *
 * Stages (each timed in the step's stats, as the DEM step's in step_dem.c):
 *   collide    geoms at the bodies' poses, broad and narrow phase (step_common.c)
 *   assemble   free velocities, then the rows: joints (step_common.c), contacts
 *   solve      the CCP by the world's solver, or the joint rows eliminated
 *              directly (joint_direct.c) and the contacts' Schur complement
 *              by the world's solver
 *   integrate  velocities v⁺ = v_free + M⁻¹ D γ, then positions
 *   report     contact forces on the bodies, joint reactions, warm start
 * Before anything, the world's solver must solve the world's friction law
 * (def.friction_law, dvi_solver_get_law): the step refuses it otherwise.
 * dvi_world_step (step.c) picks this step or the DEM one. Rows are ordered joints first (each joint's rows, its speed motor
 * last), then contacts in the collision layer's deterministic order. The
 * joints' rows are columns of D; the contacts' rows are given to the solver
 * by their frames and lever arms (dvi_ccp_frames: 15 numbers a contact, no
 * columns). Only dynamic bodies appear in the problem; fixed bodies
 * contribute nothing and kinematic bodies contribute their prescribed
 * velocity to r:
 *     v_free = v + h M⁻¹ (f_applied + m g − ω × Jω)      (dynamic)
 *     r_j    = b_j + Σ_bodies J_j,body · v_free,body
 *     v⁺     = v_free + M⁻¹ D γ,   x⁺ = x + h v⁺,   q⁺ = normalise(q + h/2 [0, ω⁺] ⊗ q)
 * Contact stabilisation: b_n = max(Φ/h, −contact_recovery_speed); with
 * restitution e, a contact approaching faster than bounce_threshold that
 * would close within the step gets b_n = min(b_n, e·v_n⁻) (Newton's law at
 * the velocity level). Compliance c (m/N) becomes the CCP regularisation
 * c/h² on the contact's normal and tangent rows.
 * Warm start: a contact point takes the previous step's impulses of the
 * point of the same shape pair with the same feature id, or else of the
 * nearest one within envelope + 1 mm. Pairs are found by open addressing
 * (look-ups only, never iterated, so nothing depends on the table's order).
 */
#include "world_internal.h"
#include "material_pair.h"
#include "registry.h"

#include "math3.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* contacts per chunk of the parallel assembly (moved forward to a shape pair's start) */
#define ASSEMBLE_CHUNK 1024

/* Whether shape pair (a1, b1) comes before (a2, b2). */
static inline bool pair_before(int32_t a1, int32_t b1, int32_t a2, int32_t b2)
{
    return a1 < a2 || (a1 == a2 && b1 < b2);
}

/* The first of the previous step's points whose shape pair is not before
 * (a, b): the points are in the collision's order, sorted by shape pair. */
static int32_t warm_lower_bound(const dvi_world* w, int32_t a, int32_t b)
{
    int32_t lo = 0, hi = w->warm_count;
    while (lo < hi) {
        int32_t mid = lo + (hi - lo) / 2;
        if (pair_before(w->warm[mid].shape_a, w->warm[mid].shape_b, a, b))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The previous step's impulses for a new contact point: the point of the
 * same shape pair with the same feature id, or else the nearest one within
 * `radius` not taken yet (feature ids of some routines change when a
 * manifold is rebuilt; positions of resting contacts do not). Both steps'
 * points are sorted by shape pair, so the lookup walks the previous points
 * forward from *cursor (a merge: the points of a chunk of contacts are
 * visited once). */
static const wld_warm_point* warm_find(const dvi_world* w, const col_contact_point* pt, double radius, bool* taken,
                                       int32_t* cursor)
{
    int32_t k = *cursor;
    while (k < w->warm_count && pair_before(w->warm[k].shape_a, w->warm[k].shape_b, pt->geom_a, pt->geom_b)) k++;
    *cursor = k;
    int32_t best = -1;
    double best_d2 = radius * radius;
    for (; k < w->warm_count && w->warm[k].shape_a == pt->geom_a && w->warm[k].shape_b == pt->geom_b; k++) {
        if (taken[k]) continue;
        if (w->warm[k].feature == pt->feature) {
            best = k;
            break;
        }
        double d[3];
        v3_sub(d, w->warm[k].point, pt->point);
        double d2 = v3_dot(d, d);
        if (d2 < best_d2) {
            best_d2 = d2;
            best = k;
        }
    }
    if (best < 0) return NULL;
    taken[best] = true;
    return &w->warm[best];
}

/* Makes room for warm_store's arrays before the solve (which borrows them,
 * lend_idle) and before the step changes the bodies, so that running out
 * of memory there cannot leave a step half taken. */
static bool warm_reserve(dvi_world* w, int32_t npts)
{
    if (!DVI_RESERVE(w, warm, npts + 1) || !DVI_RESERVE(w, slots, 16)) return false;
    int32_t nroll = 0;
    for (int32_t c = 0; c < npts; c++) nroll += w->contacts[c].nrows > 3;
    return nroll == 0 || DVI_RESERVE(w, warm_roll, 3 * (size_t)nroll);
}

/* Stores this step's points and impulses for the next step's warm start,
 * in the collision's order (sorted by shape pair; warm_find relies on it).
 * The state format keeps a table of slots from an earlier lookup by
 * hashing; it is written empty (16 slots). */
static bool warm_store(dvi_world* w, int32_t npts, int nt)
{
    if (!DVI_RESERVE(w, warm, npts + 1) || !DVI_RESERVE(w, slots, 16)) return false;
    w->slot_count = 16;
    for (size_t i = 0; i < 16; i++) w->slots[i] = (wld_warm_slot){-1, -1, -1};
    (void)nt;
#ifdef _OPENMP
#pragma omp parallel for schedule(static) num_threads(nt) if (nt > 1 && npts >= 4 * ASSEMBLE_CHUNK)
#endif
    for (int32_t c = 0; c < npts; c++) {
        const wld_contact_rec* rec = &w->contacts[c];
        wld_warm_point* p = &w->warm[c];
        p->shape_a = rec->shape_a;
        p->shape_b = rec->shape_b;
        p->feature = rec->feature;
        p->roll = -1;
        v3_copy(p->point, rec->point);
        for (int32_t r = 0; r < 3; r++) p->gamma[r] = r < rec->nrows ? w->gamma[rec->row + r] : 0.0;
    }
    /* the spin and rolling impulses apart, in point order (a scene without
     * rolling resistance keeps none) */
    int32_t nroll = 0;
    for (int32_t c = 0; c < npts; c++) nroll += w->contacts[c].nrows > 3;
    if (nroll > 0) {
        if (!DVI_RESERVE(w, warm_roll, 3 * (size_t)nroll)) return false;
        int32_t k = 0;
        for (int32_t c = 0; c < npts; c++) {
            const wld_contact_rec* rec = &w->contacts[c];
            if (rec->nrows <= 3) continue;
            w->warm[c].roll = k;
            for (int32_t r = 0; r < 3; r++) w->warm_roll[3 * (size_t)k + r] = w->gamma[rec->row + 3 + r];
            k++;
        }
    }
    w->warm_count = npts;
    return true;
}

/* Body velocity (6) used in r: v_free (dynamic), v (kinematic), 0 (fixed). */
static const double* body_velocity(const dvi_world* w, int32_t b)
{
    return w->vfree + 6 * (size_t)b;
}

/* Contact row for direction d at point p: J_B = [d, ρ_B × d], J_A = −[d, ρ_A × d];
 * angular-only rows (spin/rolling) when linear is false. */
static void contact_row(const double* d, const double* rhoA, const double* rhoB, bool linear, double* ja, double* jb)
{
    double c[3];
    for (int k = 0; k < 3; k++) {
        jb[k] = linear ? d[k] : 0.0;
        ja[k] = -jb[k];
    }
    if (linear) {
        v3_cross(c, rhoB, d);
        v3_copy(jb + 3, c);
        v3_cross(c, rhoA, d);
        v3_scale(ja + 3, -1.0, c);
    } else {
        v3_copy(jb + 3, d);
        v3_scale(ja + 3, -1.0, d);
    }
}

/* The rows of contact c (its record, frame, block, r and warm start) from
 * the collision point; its first row and row count are already in its
 * record, and its block is blk. Returns whether the contact has compliance
 * (the caller then fills the compliance of every contact row). Touches only
 * contact c's entries and the warm-start points of its shape pair. */
static bool assemble_contact(dvi_world* w, const col_contact_point* pts, int32_t c, double h, int32_t blk,
                             int32_t* cursor)
{
    const double env = w->def.collision_envelope;
    const col_contact_point* pt = &pts[c];
    const wld_shape* sa = &w->shapes[pt->geom_a];
    const wld_shape* sb = &w->shapes[pt->geom_b];
    wld_contact_rec* rec = &w->contacts[c];
    rec->shape_a = pt->geom_a;
    rec->shape_b = pt->geom_b;
    rec->body_a = sa->body;
    rec->body_b = sb->body;
    rec->feature = pt->feature;
    v3_copy(rec->point, pt->point);
    const double* normal = pt->normal;
    double t1[3], t2[3];
    basis_from_normal(normal, t1, t2);
    rec->distance = pt->distance;
    const dvi_material* ma = wld_shape_material(w, sa);
    const dvi_material* mb = wld_shape_material(w, sb);
    const wld_material_pair mp = wld_pair_of(ma, mb);
    double mu = mp.mu;
    double mu_roll = mp.mu_roll;
    double mu_spin = mp.mu_spin;
    double e = mp.restitution;
    double comp = mp.compliance;
    bool rolling = rec->nrows == 6;
    int32_t row = rec->row;
    const double* dirs[6] = {normal, t1, t2, normal, t1, t2};
    double rhoA[3], rhoB[3];
    v3_sub(rhoA, rec->point, w->bodies[rec->body_a].x);
    v3_sub(rhoB, rec->point, w->bodies[rec->body_b].x);
    /* Spin and rolling rows are angular (J = ±[0, d]); scaled by the lever
     * ℓ = |ρ| of the dynamic body they are multiplied by ℓ and their
     * coefficients divided by ℓ (the same cone), so that their impulses are
     * in N·s like the other rows and N stays well conditioned: unscaled,
     * 1/I of a 2 cm sphere (7.5e4) against 1/m (12) slowed APGD 10–20×. */
    double ell = 1.0;
    if (rolling) {
        ell = v3_norm(w->bodies[rec->body_b].type == DVI_BODY_DYNAMIC ? rhoB : rhoA);
        if (!(ell > 1e-9)) ell = 1.0;
    }
    w->fr_block[c] = blk;
    w->fr_body[2 * c] = w->dyn[rec->body_a];
    w->fr_body[2 * c + 1] = w->dyn[rec->body_b];
    for (int k = 0; k < 3; k++) {
        w->fr_frame[9 * (size_t)c + k] = (float)normal[k];
        w->fr_frame[9 * (size_t)c + 3 + k] = (float)t1[k];
        w->fr_frame[9 * (size_t)c + 6 + k] = (float)t2[k];
        w->fr_arm[6 * (size_t)c + k] = (float)rhoA[k];
        w->fr_arm[6 * (size_t)c + 3 + k] = (float)rhoB[k];
    }
    w->fr_ell[c] = ell;
    w->blocks[blk] = rolling ? (dvi_ccp_block){DVI_BLOCK_FRICTION_ROLLING, mu, mu_spin / ell, mu_roll / ell}
                             : (dvi_ccp_block){DVI_BLOCK_FRICTION, mu, 0.0, 0.0};
    const wld_warm_point* prev = warm_find(w, pt, env + 1e-3, w->taken, cursor);
    for (int q = 0; q < rec->nrows; q++) {
        double ja[6], jb[6];
        contact_row(dirs[q], rhoA, rhoB, q < 3, ja, jb);
        if (q >= 3)
            for (int k = 0; k < 6; k++) {
                ja[k] *= ell;
                jb[k] *= ell;
            }
        double vrel = v6_dot(ja, body_velocity(w, rec->body_a)) + v6_dot(jb, body_velocity(w, rec->body_b));
        double b = 0.0;
        if (q == 0) {
            b = fmax(pt->distance / h, -w->def.contact_recovery_speed);
            if (e > 0.0) { /* pre-step approach speed (v, not v_free) */
                const wld_body* A = &w->bodies[rec->body_a];
                const wld_body* B = &w->bodies[rec->body_b];
                double va[3], vb[3], c1[3], c2[3];
                v3_cross(c1, A->w, rhoA);
                v3_add(va, A->v, c1);
                v3_cross(c2, B->w, rhoB);
                v3_add(vb, B->v, c2);
                double vn = v3_dot(vb, normal) - v3_dot(va, normal);
                if (vn < -w->def.bounce_threshold && pt->distance + h * vn < 0.0) b = fmin(b, e * vn);
            }
        }
        w->r[row] = vrel + b;
        w->gamma[row] = !prev ? 0.0
                        : q < 3        ? prev->gamma[q]
                        : prev->roll >= 0 ? w->warm_roll[3 * (size_t)prev->roll + (q - 3)]
                                          : 0.0;
        row++;
    }
    return comp > 0.0;
}

/* Lends the solver, for the solve and the velocity update, the memory that
 * holds nothing until the step's end: the geoms (the collision is done),
 * the collision's points and pairs (the rows are built) and the last
 * step's warm-start points (every contact has looked its own up;
 * warm_store writes them afresh, and until then the world keeps none). The
 * solver's vectors and per-solve arrays go there instead of adding to the
 * step's peak (docs/performance.md, Memory). */
static void lend_idle(dvi_world* w)
{
    dvi_memory_block blocks[DVI_SOLVER_LEND_MAX];
    void* data[DVI_SOLVER_LEND_MAX];
    size_t bytes[DVI_SOLVER_LEND_MAX];
    int n = col_idle_buffers(w->collision, data, bytes, DVI_SOLVER_LEND_MAX - 3);
    for (int k = 0; k < n; k++) blocks[k] = (dvi_memory_block){data[k], bytes[k]};
    if (w->geoms) blocks[n++] = (dvi_memory_block){w->geoms, w->geoms_cap * sizeof *w->geoms};
    w->warm_count = 0;
    if (w->warm) blocks[n++] = (dvi_memory_block){w->warm, w->warm_cap * sizeof *w->warm};
    if (w->warm_roll) blocks[n++] = (dvi_memory_block){w->warm_roll, w->warm_roll_cap * sizeof *w->warm_roll};
    dvi_solver_lend(w->solver, blocks, n);
}

/* What the stages of one DVI step hand on to each other. */
typedef struct wld_step_dvi_ctx {
    double h;
    int nt;                       /* threads */
    const col_contact_point* pts; /* the collision's points, npts of them */
    int32_t npts;
    int32_t ndyn;                 /* dynamic bodies: the problem's bodies */
    int32_t joint_rows, nrows, nblocks;
    bool any_compliance;
    bool direct;                  /* the joint rows were eliminated directly (joint_direct.c) */
} wld_step_dvi_ctx;

/* Stage "assemble": each contact's rows (three, or six with rolling or
 * spinning resistance) after the joints' rows, the CCP's blocks, r and
 * compliance, the frames and lever arms; each contact looks up its warm
 * start. */
static dvi_status stage_assemble(dvi_world* w, wld_step_dvi_ctx* x)
{
    const double h = x->h;
    const int nt = x->nt;
    const col_contact_point* pts = x->pts;
    const int32_t npts = x->npts;
    const int32_t joint_rows = wld_step_joint_row_total(w);
    if (!DVI_RESERVE(w, contacts, npts + 1)) return wld_error(w, DVI_ERR_NOMEM, "step: out of memory");
    /* each contact's row count (in parallel), then the first rows in order */
#ifdef _OPENMP
#pragma omp parallel for schedule(static) num_threads(nt) if (nt > 1 && npts >= 4 * ASSEMBLE_CHUNK)
#endif
    for (int32_t c = 0; c < npts; c++) {
        const dvi_material* ma = wld_shape_material(w, &w->shapes[pts[c].geom_a]);
        const dvi_material* mb = wld_shape_material(w, &w->shapes[pts[c].geom_b]);
        const wld_material_pair mp = wld_pair_of(ma, mb);
        bool rolling = mp.mu_roll > 0.0 || mp.mu_spin > 0.0;
        w->contacts[c].nrows = rolling ? 6 : 3;
    }
    int32_t nrows = joint_rows, nblocks = joint_rows + npts;
    for (int32_t c = 0; c < npts; c++) {
        w->contacts[c].row = nrows;
        nrows += w->contacts[c].nrows;
    }
    x->joint_rows = joint_rows;
    x->nrows = nrows;
    x->nblocks = nblocks;
    w->stats.bodies = w->body_count;
    w->stats.contacts = npts;
    w->stats.joint_rows = joint_rows;
    w->stats.rows = nrows;
    if (!DVI_RESERVE(w, blocks, nblocks + 1) || !DVI_RESERVE(w, r, nrows + 1) || !DVI_RESERVE(w, compliance, nrows + 1) ||
        !DVI_RESERVE(w, gamma, nrows + 1) || !DVI_RESERVE(w, colptr, nrows + 1) || !DVI_RESERVE(w, rowind, 12 * (size_t)joint_rows + 1) ||
        !DVI_RESERVE(w, values, 12 * (size_t)joint_rows + 1) ||
        !DVI_RESERVE(w, taken, w->warm_count + 1) || !DVI_RESERVE(w, joint_jb, 6 * (size_t)joint_rows + 6) || !DVI_RESERVE(w, joint_ja, 6 * (size_t)joint_rows + 6) ||
        !DVI_RESERVE(w, joint_lever, 3 * (size_t)w->joint_count + 3) ||
        !DVI_RESERVE(w, fr_block, npts + 1) || !DVI_RESERVE(w, fr_body, 2 * (size_t)npts + 2) ||
        !wld_step_reserve_frames(w, npts))
        return wld_error(w, DVI_ERR_NOMEM, "step: out of memory");

    memset(w->taken, 0, ((size_t)w->warm_count + 1) * sizeof *w->taken);
    int32_t nz = 0;
    bool any_compliance = false;
    double max_violation = 0.0;
    int32_t row = wld_step_joint_rows(w, h, &nz, &any_compliance, &max_violation);
    /* the contacts' rows, in parallel, in chunks that never split a shape
     * pair (a pair's warm-start points are matched in order within the
     * pair, and pairs use disjoint stretches of the previous step's points),
     * so every thread count gives the same rows */
    double max_pen = 0.0;
    const int32_t nchunks = (npts + ASSEMBLE_CHUNK - 1) / ASSEMBLE_CHUNK;
    if (!DVI_RESERVE(w, chunk_start, nchunks + 2)) return wld_error(w, DVI_ERR_NOMEM, "step: out of memory");
    for (int32_t k = 0; k < nchunks; k++) {
        int32_t c = k * ASSEMBLE_CHUNK;
        while (c > 0 && c < npts && pts[c].geom_a == pts[c - 1].geom_a && pts[c].geom_b == pts[c - 1].geom_b) c++;
        w->chunk_start[k] = c;
    }
    w->chunk_start[nchunks] = npts;
    int comp_any = 0;
#ifdef _OPENMP
#pragma omp parallel for schedule(static) num_threads(nt) if (nt > 1 && npts >= 4 * ASSEMBLE_CHUNK) \
    reduction(max : max_pen) reduction(|| : comp_any)
#endif
    for (int32_t k = 0; k < nchunks; k++) {
        const int32_t c0 = w->chunk_start[k], c1 = w->chunk_start[k + 1];
        int32_t cursor = c0 < c1 ? warm_lower_bound(w, pts[c0].geom_a, pts[c0].geom_b) : 0;
        for (int32_t c = c0; c < c1; c++) { /* starts never decrease */
            if (-pts[c].distance > max_pen) max_pen = -pts[c].distance;
            if (assemble_contact(w, pts, c, h, joint_rows + c, &cursor)) comp_any = 1;
        }
    }
    if (comp_any) any_compliance = true;
    if (any_compliance) { /* the contacts' compliance rows, only when some row has compliance */
#ifdef _OPENMP
#pragma omp parallel for schedule(static) num_threads(nt) if (nt > 1 && npts >= 4 * ASSEMBLE_CHUNK)
#endif
        for (int32_t c = 0; c < npts; c++) {
            const wld_contact_rec* rec = &w->contacts[c];
            double comp = wld_shape_material(w, &w->shapes[rec->shape_a])->compliance +
                          wld_shape_material(w, &w->shapes[rec->shape_b])->compliance;
            for (int32_t q = 0; q < rec->nrows; q++) w->compliance[rec->row + q] = q < 3 ? comp / (h * h) : 0.0;
        }
    }
    if (npts > 0) row = w->contacts[npts - 1].row + w->contacts[npts - 1].nrows;
#ifdef _OPENMP
#pragma omp parallel for schedule(static) num_threads(nt) if (nt > 1 && npts >= 4 * ASSEMBLE_CHUNK)
#endif
    for (int32_t j = joint_rows; j < row; j++) w->colptr[j] = nz; /* no columns: the frames give the rows */
    w->colptr[row] = nz;
    x->any_compliance = any_compliance;
    w->stats.max_penetration = max_pen;
    w->stats.max_joint_violation = max_violation;
    return DVI_OK;
}

/* Copies a solver's result into the step's statistics. */
static void note_result(dvi_world* w, const dvi_solve_result* res)
{
    w->stats.iterations = res->iterations;
    w->stats.residual = res->target_residual;
    w->stats.solver_status = res->status;
    w->stats.warm_start_rejected = res->warm_start_rejected;
    w->stats.solver_bytes_per_iteration = res->bytes_per_iteration;
}

/* ---- the Coulomb check --------------------------------------------------------
 * Coulomb's law may give a step several solutions where the CCP gives one
 * (docs/formulation.md, "Several solutions"): a body squeezed between
 * contacts whose normals oppose (a box between floor and ceiling with no
 * clearance: any equal extra push on both is a solution, and while the box
 * slides each brakes it), or a sliding contact whose friction drives it
 * into the ground (Painlevé: the normal velocity falls as the impulse
 * grows, W_nn − μ W_nt·ŝ ≤ 0). The signs are read off the converged answer
 * in O(contacts + bodies); only on a step that shows one the world's check
 * solver (def.coulomb_check) solves the same problem again from γ = 0. If
 * the contact velocities u = Nγ + r of the two answers differ by more than
 * CHECK_TOLERANCE of the step's velocity scale, the step is reported
 * (dvi_step_stats.coulomb_nonunique) and the answer with the smaller
 * Σ γ_n² kept: the compliant limit with equal contact stiffnesses stores
 * Σ f_n²/(2k), and of two distributions that both hold the bodies it takes
 * the one storing less (no squeeze; the impact shared by both corners of
 * an edge). */
#define CHECK_TOLERANCE 1e-4

/* u = r + J dv at contact c along n, t1, t2 (dv: M⁻¹ D γ of the dynamic bodies). */
static void contact_velocity(const dvi_world* w, int32_t c, const double* dv, double u[3])
{
    const wld_contact_rec* rec = &w->contacts[c];
    double tn[9], arm[6];
    wld_f2d(w->fr_frame + 9 * (size_t)c, 9, tn);
    wld_f2d(w->fr_arm + 6 * (size_t)c, 6, arm);
    for (int k = 0; k < 3; k++) u[k] = w->r[rec->row + k];
    const int32_t ids[2] = {w->dyn[rec->body_a], w->dyn[rec->body_b]};
    for (int side = 0; side < 2; side++) {
        const int32_t i = ids[side];
        if (i < 0) continue;
        const double* d = dv + 6 * (size_t)i;
        for (int k = 0; k < 3; k++) {
            double rk[3];
            v3_cross(rk, arm + 3 * side, tn + 3 * k);
            const double du = v3_dot(tn + 3 * k, d) + v3_dot(rk, d + 3);
            u[k] += side ? du : -du;
        }
    }
}

/* The normal row of contact c's block of N = J M⁻¹ Jᵀ: W_nn, W_nt1, W_nt2. */
static void contact_normal_row(const dvi_world* w, int32_t c, double wn[3])
{
    const wld_contact_rec* rec = &w->contacts[c];
    double tn[9], arm[6];
    wld_f2d(w->fr_frame + 9 * (size_t)c, 9, tn);
    wld_f2d(w->fr_arm + 6 * (size_t)c, 6, arm);
    wn[0] = wn[1] = wn[2] = 0.0;
    const int32_t ids[2] = {w->dyn[rec->body_a], w->dyn[rec->body_b]};
    for (int side = 0; side < 2; side++) {
        const int32_t i = ids[side];
        if (i < 0) continue;
        const double* im = w->inv_mass + 10 * (size_t)i; /* 1/m, then A row-major */
        double cn[3], an[3];
        v3_cross(cn, arm + 3 * side, tn);
        for (int a = 0; a < 3; a++) an[a] = im[1 + 3 * a] * cn[0] + im[2 + 3 * a] * cn[1] + im[3 + 3 * a] * cn[2];
        for (int k = 0; k < 3; k++) {
            double ck[3];
            v3_cross(ck, arm + 3 * side, tn + 3 * k);
            wn[k] += im[0] * v3_dot(tn, tn + 3 * k) + v3_dot(an, ck);
        }
    }
}

/* Whether a friction impulse against the tangential velocity (t1, t2) at
 * contact c lowers its normal velocity faster than the normal impulse
 * raises it: W_nn − μ W_nt·t̂ ≤ 0. */
static bool painleve(const double* wn, double mu, double t1, double t2)
{
    const double t = hypot(t1, t2);
    return wn[0] - mu * (wn[1] * t1 + wn[2] * t2) / t <= 0.0;
}

/* Σ γ_n² over the contacts. */
static double normal_squares(const dvi_world* w, int32_t npts, const double* g)
{
    double s = 0.0;
    for (int32_t c = 0; c < npts; c++) s += g[w->contacts[c].row] * g[w->contacts[c].row];
    return s;
}

/* The sign (see above) on the world's answer w->gamma, given M⁻¹ D γ in
 * w->dv: the number of contacts that show it. Their impulses are zeroed in
 * the check's starting point w->check_gamma (a copy of the answer: the
 * other starting point, without the squeeze or the Painlevé impulse), and
 * a contact that opposes its body's net normal force is held open in the
 * check's problem (w->check_r, a copy of r: its r_n raised by `hold`), so
 * that the check finds the answer without that squeeze if one exists. */
static int32_t check_signal(dvi_world* w, const wld_step_dvi_ctx* x, double vtol, double hold)
{
    const int32_t npts = x->npts, ndyn = x->ndyn;
    double* body = w->check_body; /* per dynamic body: Σ γ_n n (on it), then 1 if a pushing contact slides */
    double* start = w->check_gamma;
    memset(body, 0, 4 * (size_t)ndyn * sizeof *body);
    int32_t count = 0;
    for (int32_t c = 0; c < npts; c++) {
        const wld_contact_rec* rec = &w->contacts[c];
        const double gn = w->gamma[rec->row];
        if (!(gn > 0.0)) continue;
        double u[3], n[3];
        contact_velocity(w, c, w->dv, u);
        wld_f2d(w->fr_frame + 9 * (size_t)c, 3, n);
        const double* r = w->r + rec->row;
        const bool slides = hypot(u[1], u[2]) > vtol, slid = hypot(r[1], r[2]) > vtol;
        const double mu = w->blocks[w->fr_block[c]].mu;
        if ((slides || slid) && mu > 0.0) {
            double wn[3];
            contact_normal_row(w, c, wn);
            if ((slides && painleve(wn, mu, u[1], u[2])) || (slid && painleve(wn, mu, r[1], r[2]))) {
                memset(start + rec->row, 0, (size_t)rec->nrows * sizeof *start);
                count++;
            }
        }
        const int32_t ids[2] = {w->dyn[rec->body_a], w->dyn[rec->body_b]};
        for (int side = 0; side < 2; side++) {
            if (ids[side] < 0) continue;
            double* b = body + 4 * (size_t)ids[side];
            v3_axpy(b, side ? gn : -gn, n);
            if (slides) b[3] = 1.0;
        }
    }
    for (int32_t c = 0; c < npts; c++) {
        const wld_contact_rec* rec = &w->contacts[c];
        const double gn = w->gamma[rec->row];
        if (!(gn > 0.0) || !(start[rec->row] > 0.0)) continue;
        double n[3];
        wld_f2d(w->fr_frame + 9 * (size_t)c, 3, n);
        const int32_t ids[2] = {w->dyn[rec->body_a], w->dyn[rec->body_b]};
        for (int side = 0; side < 2; side++) {
            if (ids[side] < 0) continue;
            const double* b = body + 4 * (size_t)ids[side];
            /* against the body's net normal force (or across it) while the body slides */
            if (b[3] != 0.0 && (side ? 1.0 : -1.0) * v3_dot(n, b) <= 1e-9 * gn * v3_norm(b)) {
                memset(start + rec->row, 0, (size_t)rec->nrows * sizeof *start);
                w->check_r[rec->row] = fmax(w->r[rec->row], 0.0) + hold; /* held open */
                count++;
                break;
            }
        }
    }
    return count;
}

/* The check on the step's problem p, solved by the world's solver into
 * w->gamma (a converged answer). */
static dvi_status coulomb_check(dvi_world* w, const wld_step_dvi_ctx* x, const dvi_ccp_problem* p)
{
    const int32_t npts = x->npts, ndyn = x->ndyn, nrows = x->nrows;
    if (!DVI_RESERVE(w, check_body, 4 * (size_t)ndyn + 4) || !DVI_RESERVE(w, check_gamma, nrows + 1) ||
        !DVI_RESERVE(w, check_r, nrows + 1) || !DVI_RESERVE(w, check_dv, 6 * (size_t)ndyn + 6))
        return wld_error(w, DVI_ERR_NOMEM, "step: out of memory");
    dvi_status st = dvi_solver_velocity(w->solver, w->gamma, w->dv);
    if (st != DVI_OK) return wld_error(w, st, "step: the velocity update failed");
    double vscale = 0.0;
    for (int32_t c = 0; c < npts; c++)
        for (int k = 0; k < 3; k++) vscale = fmax(vscale, fabs(w->r[w->contacts[c].row + k]));
    if (!(vscale > 0.0)) return DVI_OK;
    memcpy(w->check_gamma, w->gamma, (size_t)nrows * sizeof *w->check_gamma);
    memcpy(w->check_r, w->r, (size_t)nrows * sizeof *w->check_r);
    if (check_signal(w, x, 1e-6 * vscale, 4.0 * vscale) == 0) return DVI_OK;
    if (!w->check_solver) { /* the world's settings, from the other starting point */
        dvi_solver_settings ss = w->def.solver_settings;
        ss.warm_start = true;
        ss.warm_start_scale = 1.0;
        ss.allocator = w->alloc;
        const char* name = dvi_solver_name(w->check_index);
        st = dvi_solver_create(name, &ss, &w->check_solver);
        if (st != DVI_OK) return wld_error(w, st, "step: the Coulomb check's solver \"%s\": %s", name, dvi_error_message());
        if (dvi_solver_get_law(w->check_solver) != DVI_LAW_COULOMB) {
            dvi_solver_destroy(w->check_solver);
            w->check_solver = NULL;
            return wld_error(w, DVI_ERR_INVALID_ARG,
                             "step: the Coulomb check's solver \"%s\" does not solve Coulomb's law with the world's "
                             "solver settings (world_def.coulomb_check)",
                             name);
        }
    }
    dvi_ccp_problem q = *p;
    q.r = w->check_r;
    dvi_solve_result res;
    w->stats.coulomb_checked = true;
    w->stats.coulomb_kept = 1;
    st = dvi_solver_solve(w->check_solver, &q, w->check_gamma, &res);
    /* no verdict without a second answer: the first is kept */
    if (st != DVI_OK || dvi_solver_velocity(w->check_solver, w->check_gamma, w->check_dv) != DVI_OK) return DVI_OK;
    double diff = 0.0, scale = vscale;
    int32_t worst = 0;
    bool valid = true; /* a contact held open must not push, nor close (u_n ≥ 0: Coulomb's law at γ = 0) */
    for (int32_t c = 0; c < npts; c++) {
        const int32_t row = w->contacts[c].row;
        double u1[3], u2[3];
        contact_velocity(w, c, w->dv, u1);
        contact_velocity(w, c, w->check_dv, u2);
        if (w->check_r[row] != w->r[row] && (w->check_gamma[row] != 0.0 || u2[0] < -CHECK_TOLERANCE * vscale))
            valid = false;
        for (int k = 0; k < 3; k++) {
            scale = fmax(scale, fmax(fabs(u1[k]), fabs(u2[k])));
            if (fabs(u1[k] - u2[k]) > diff) diff = fabs(u1[k] - u2[k]), worst = c;
        }
    }
    if (!valid) return DVI_OK; /* the squeeze is needed: the answer is the first */
    w->stats.coulomb_difference = diff / scale;
    w->stats.coulomb_contact = worst;
    w->stats.coulomb_nonunique = diff > CHECK_TOLERANCE * scale;
    /* the smaller Σ γ_n² (a small difference too: a squeeze grows step by step) */
    if (normal_squares(w, npts, w->check_gamma) < normal_squares(w, npts, w->gamma)) {
        memcpy(w->gamma, w->check_gamma, (size_t)nrows * sizeof *w->gamma);
        w->stats.coulomb_kept = 2;
        const int32_t first = w->stats.iterations;
        note_result(w, &res);
        w->stats.iterations += first; /* both solves' */
    }
    return DVI_OK;
}

/* The joint rows eliminated directly (joint_direct.c): joint rows alone
 * are solved outright (taken under AUTO when the residual meets the
 * tolerance and 1e-10, else x->direct stays false and the solver starts
 * from that answer); with contacts the world's solver solves their Schur
 * complement, and the joint impulses follow from theirs. */
static dvi_status solve_direct(dvi_world* w, wld_step_dvi_ctx* x)
{
    const int32_t nj = x->joint_rows, ncr = x->nrows - x->joint_rows, npts = x->npts;
    dvi_status st = wld_joint_direct_factor(w, nj, x->ndyn);
    if (st != DVI_OK) return st;
    w->stats.joint_rows_dropped = w->jf->num.dropped; /* said, not hidden: a redundant row's impulse is 0 */
    w->stats.joint_rows_regularised = w->jf->num.regularised;
    if (ncr == 0) {
        const double rel = wld_joint_direct_solve(w, nj);
        const double tol = w->def.solver_settings.tolerance;
        if (w->def.joint_solve == DVI_JOINT_SOLVE_DIRECT || rel <= fmin(1e-10, tol)) {
            x->direct = true;
            w->stats.joint_residual = rel;
            w->stats.iterations = 0;
            w->stats.residual = rel;
            w->stats.solver_status = rel <= tol ? DVI_SOLVE_CONVERGED : DVI_SOLVE_MAX_ITERATIONS;
            w->stats.warm_start_rejected = false;
            w->stats.solver_bytes_per_iteration = 0.0;
        }
        return DVI_OK;
    }
    dvi_ccp_problem p = dvi_ccp_problem_empty();
    p.rows = ncr;
    p.block_count = npts;
    p.blocks = w->blocks + nj;
    p.compliance = x->any_compliance ? w->compliance + nj : NULL;
    dvi_csc S;
    dvi_ccp_frames frames;
    const bool lowrank = ncr > DVI_JOINT_SOLVE_AUTO_CONTACT_ROWS;
    if (!lowrank) { /* S dense, in the W form */
        st = wld_joint_direct_schur(w, nj, npts, ncr);
        if (st != DVI_OK) return st;
        S = (dvi_csc){ncr, ncr, w->jf->num.scol, w->jf->num.srow, w->jf->num.s};
        p.W = &S;
    } else { /* S = N_CC − Gᵀ G: the contacts' frames and every body's M⁻¹, G = Z */
        st = wld_joint_direct_lowrank(w, nj, npts, ncr);
        if (st != DVI_OK) return st;
        wld_jd_numeric* nu = &w->jf->num;
        nu->dc = (dvi_csc){6 * x->ndyn, ncr, nu->dzero, w->rowind, w->values};
        nu->g = (dvi_csc){nj, ncr, nu->gp, nu->gi, nu->gx};
        frames = (dvi_ccp_frames){.count = npts, .block = nu->frblock, .body = w->fr_body, .ell = w->fr_ell,
                                  .frame_f = w->fr_frame, .arm_f = w->fr_arm};
        p.body_count = x->ndyn;
        p.D = &nu->dc;
        p.inv_mass_rigid = w->inv_mass;
        p.frames = &frames;
        p.G = nu->gp[ncr] > 0 ? &nu->g : NULL;
    }
    p.r = w->jf->num.rs;
    dvi_solve_result res;
    lend_idle(w);
    st = dvi_solver_solve(w->solver, &p, w->gamma + nj, &res);
    dvi_solver_lend(w->solver, NULL, 0);
    if (st < 0) return wld_error(w, st, "step: the contacts' CCP was refused: %s", res.message);
    note_result(w, &res);
    if (lowrank) wld_joint_direct_recover_lowrank(w, nj, npts, ncr);
    else wld_joint_direct_recover(w, nj, ncr);
    w->stats.joint_residual = w->jf->num.residual;
    x->direct = true;
    return DVI_OK;
}

/* Whether DVI_JOINT_SOLVE_AUTO eliminates the nj joint rows of a step with
 * ncr contact rows: always for joint rows alone; with contacts, up to
 * DVI_JOINT_SOLVE_AUTO_CONTACT_ROWS of them (S dense) or up to nj (S
 * matrix-free), unless the world's solver
 * sweeps the contacts one after another (dvi_solver_sweeps_in_order: PGS;
 * NSGS, its counterpart for Coulomb's law). PGS sweeps the rows in order, and on the Schur complement the rows
 * of a statically indeterminate contact set are nearly dependent, so the
 * first of them takes the load: on the rover at rest the two rim points of
 * each wheel and with them the left and right wheels split their loads
 * ±10 % off the symmetric split that PGS finds on the full problem (both
 * are solutions; the axle sums agree). DVI_JOINT_SOLVE_DIRECT takes PGS too. */
static bool auto_direct(const dvi_world* w, int32_t nj, int32_t ncr)
{
    if (ncr == 0) return true;
    /* above the dense threshold, matrix-free S only while the joints have
     * at least as many rows as the contacts: on a granular bed (the rover
     * on the strip, 75,000 contact rows against 105) G costs more per
     * iteration than the joint rows did and saves no iteration */
    if (ncr > DVI_JOINT_SOLVE_AUTO_CONTACT_ROWS && ncr > nj) return false;
    return !dvi_solver_sweeps_in_order(dvi_solver_index(dvi_solver_get_name(w->solver)));
}

void wld_set_share(dvi_world* w, const dvi_ccp_shared* share, const uint8_t* body_own)
{
    w->share = share;
    w->share_body_own = body_own;
}

/* The one block a process with no rows of its own solves, so that it takes
 * part in every sum and exchange of the others' solve: a frictionless
 * contact of no bodies held open (r = 1), not its own (γ = 0, no term). */
static const dvi_ccp_block SHARE_IDLE_BLOCK = {.kind = DVI_BLOCK_FRICTIONLESS};
static const int32_t SHARE_IDLE_FC[3] = {0, -1, -1}; /* block, bodies a and b */
static const float SHARE_IDLE_FRAME[15] = {1, 0, 0, 0, 1, 0, 0, 0, 1}; /* then the arms: 0 */
static const double SHARE_IDLE_R = 1.0;
static const int32_t SHARE_IDLE_COLPTR[2] = {0, 0};

/* The owner masks of a process's part of a problem split over processes
 * (w->share): its blocks (the idle block when it has no rows) and its
 * dynamic bodies. */
static bool share_masks(dvi_world* w, const wld_step_dvi_ctx* x, bool idle)
{
    const int32_t nblocks = idle ? 1 : x->nblocks;
    if (!DVI_RESERVE(w, share_block, nblocks + 1) || !DVI_RESERVE(w, share_dyn, x->ndyn + 1)) return false;
    const uint8_t* own = w->share_body_own;
    for (int32_t c = 0; c < x->npts; c++) {
        const wld_contact_rec* rec = &w->contacts[c];
        const int32_t k = w->bodies[rec->body_a].type == DVI_BODY_FIXED ? rec->body_b : rec->body_a;
        w->share_block[c] = own[k];
    }
    if (idle) w->share_block[0] = 0;
    for (int32_t i = 0; i < w->body_count; i++)
        if (w->dyn[i] >= 0) w->share_dyn[w->dyn[i]] = own[i];
    w->share_step = *w->share;
    w->share_step.block_own = w->share_block;
    w->share_step.body_own = w->share_dyn;
    return true;
}

/* Stage "solve": the joint rows directly (joint_solve: solve_direct) when
 * chosen, else the CCP by the world's solver on every row. */
static dvi_status stage_solve(dvi_world* w, wld_step_dvi_ctx* x)
{
    const int32_t nrows = x->nrows, npts = x->npts, ndyn = x->ndyn;
    const int32_t ncr = nrows - x->joint_rows;
    const dvi_joint_solve js = w->def.joint_solve;
    x->direct = false;
    if (w->share && x->joint_rows > 0)
        return wld_error(w, DVI_ERR_UNSUPPORTED, "step: a world split over processes takes no joints (%d joint rows)",
                         x->joint_rows);
    if (x->joint_rows > 0 &&
        (js == DVI_JOINT_SOLVE_DIRECT || (js == DVI_JOINT_SOLVE_AUTO && auto_direct(w, x->joint_rows, ncr)))) {
        dvi_status st = solve_direct(w, x);
        if (st != DVI_OK) return st;
    }
    const bool idle = w->share && nrows == 0; /* takes part in the others' solve */
    if ((nrows > 0 || idle) && !x->direct) {
        if (w->share && !share_masks(w, x, idle)) return wld_error(w, DVI_ERR_NOMEM, "step: out of memory");
        dvi_csc D = {6 * ndyn, idle ? 1 : nrows, idle ? SHARE_IDLE_COLPTR : w->colptr, w->rowind, w->values};
        dvi_ccp_problem p = dvi_ccp_problem_empty();
        p.rows = idle ? 1 : nrows;
        p.block_count = idle ? 1 : x->nblocks;
        p.blocks = idle ? &SHARE_IDLE_BLOCK : w->blocks;
        p.body_count = ndyn;
        p.D = &D;
        p.inv_mass_rigid = w->inv_mass;
        /* the frames and arms in single precision: 60 bytes a contact fewer to
         * hold and to read every iteration (docs/performance.md) */
        dvi_ccp_frames frames = {.count = npts, .block = w->fr_block, .body = w->fr_body, .ell = w->fr_ell,
                                 .frame_f = w->fr_frame, .arm_f = w->fr_arm};
        if (idle)
            frames = (dvi_ccp_frames){.count = 1, .block = SHARE_IDLE_FC, .body = SHARE_IDLE_FC + 1,
                                      .frame_f = SHARE_IDLE_FRAME, .arm_f = SHARE_IDLE_FRAME + 9};
        p.frames = npts > 0 || idle ? &frames : NULL;
        p.r = idle ? &SHARE_IDLE_R : w->r;
        p.compliance = x->any_compliance && !idle ? w->compliance : NULL;
        p.shared = w->share ? &w->share_step : NULL;
        dvi_solve_result res;
        lend_idle(w);
        dvi_status st = dvi_solver_solve(w->solver, &p, w->gamma, &res);
        if (st < 0) {
            dvi_solver_lend(w->solver, NULL, 0);
            return wld_error(w, st, "step: the CCP was refused: %s", res.message);
        }
        note_result(w, &res);
        if (w->def.friction_law == DVI_LAW_COULOMB && w->check_index >= 0 && npts > 0 &&
            res.status == DVI_SOLVE_CONVERGED) {
            st = coulomb_check(w, x, &p);
            if (st != DVI_OK) {
                dvi_solver_lend(w->solver, NULL, 0);
                return st;
            }
        }
    }
    return DVI_OK;
}

/* Stage "integrate": v⁺ = v_free + M⁻¹ D γ (the solver's operator, in
 * parallel), then positions, body by body. */
static dvi_status stage_integrate(dvi_world* w, const wld_step_dvi_ctx* x)
{
    const double h = x->h;
    const int nt = x->nt;
    const int32_t nb = w->body_count, ndyn = x->ndyn, nrows = x->nrows;
    if (x->direct) { /* M⁻¹ D γ body by body, D γ in row order */
        wld_joint_direct_velocity(w, x->joint_rows, x->npts, ndyn);
    } else if (nrows > 0 || w->share) {
        dvi_status st = dvi_solver_velocity(w->solver, w->gamma, w->dv);
        dvi_solver_lend(w->solver, NULL, 0); /* the loan ends with the operator's last use */
        if (st != DVI_OK) return wld_error(w, st, "step: the velocity update failed");
    } else {
        memset(w->dv, 0, 6 * (size_t)ndyn * sizeof(double));
    }
#ifdef _OPENMP
#pragma omp parallel for schedule(static) num_threads(nt) if (nt > 1 && nb >= 4 * ASSEMBLE_CHUNK)
#endif
    for (int32_t i = 0; i < nb; i++) {
        wld_body* b = &w->bodies[i];
        memset(b->contact_force, 0, sizeof b->contact_force);
        memset(b->contact_torque, 0, sizeof b->contact_torque);
        if (b->type == DVI_BODY_FIXED) continue;
        const double* vf = w->vfree + 6 * (size_t)i;
        if (b->type == DVI_BODY_DYNAMIC) {
            const double* dv = w->dv + 6 * (size_t)w->dyn[i];
            double nv[6];
            for (int r = 0; r < 6; r++) nv[r] = vf[r] + dv[r];
            v3_copy(b->v, nv);
            v3_copy(b->w, nv + 3);
        }
        /* positions: the Cayley rotation of h ω; a dynamic body that is not
         * a sphere then takes its end angular velocity from its momentum */
        v3_axpy(b->x, h, b->v);
        double wq[4] = {0.0, b->w[0], b->w[1], b->w[2]}, dq[4], q0[4];
        memcpy(q0, b->q, sizeof q0);
        q_mul(dq, wq, b->q);
        for (int k = 0; k < 4; k++) b->q[k] += 0.5 * h * dq[k];
        q_normalize(b->q);
        if (b->type == DVI_BODY_DYNAMIC && !wld_body_isotropic(b)) {
            double ws[3];
            v3_copy(ws, b->w);
            wld_step_end_angular_velocity(b, q0, b->q, vf + 3, ws, h, b->w);
        }
    }
    return DVI_OK;
}

/* Stage "report": each contact's force (in parallel) and the bodies' sums
 * of them (in contact order), the joints' reactions, and the warm-start
 * points of the next step. */
static dvi_status stage_report(dvi_world* w, const wld_step_dvi_ctx* x)
{
    const double h = x->h;
    const int nt = x->nt;
    const int32_t npts = x->npts;
    const double inv_h = 1.0 / h;
#ifdef _OPENMP
#pragma omp parallel for schedule(static) num_threads(nt) if (nt > 1 && npts >= 4 * ASSEMBLE_CHUNK)
#endif
    for (int32_t c = 0; c < npts; c++) {
        wld_contact_rec* rec = &w->contacts[c];
        const double* g = w->gamma + rec->row;
        double d[9]; /* n, t1, t2 as the solver used them */
        wld_f2d(w->fr_frame + 9 * (size_t)c, 9, d);
        for (int k = 0; k < 3; k++) rec->force[k] = (g[0] * d[k] + g[1] * d[3 + k] + g[2] * d[6 + k]) * inv_h;
    }
    /* the bodies' sums in contact order, and the CCP relaxation's opening at
     * the contacts that push: u_n = r_n + J_n (dv_B − dv_A) */
    double hover = 0.0, hover_work = 0.0, hover_friction = 0.0;
    int32_t hover_contact = -1;
    for (int32_t c = 0; c < npts; c++) {
        const wld_contact_rec* rec = &w->contacts[c];
        const double* f = rec->force;
        double couple[3] = {0, 0, 0}; /* spin and rolling resistance on B */
        if (rec->nrows == 6) {
            double d[9];
            wld_f2d(w->fr_frame + 9 * (size_t)c, 9, d);
            for (int q = 3; q < 6; q++) v3_axpy(couple, w->fr_ell[c] * w->gamma[rec->row + q] / h, d + 3 * (q - 3));
        }
        wld_body* A = &w->bodies[rec->body_a];
        wld_body* B = &w->bodies[rec->body_b];
        double ta[3], tb[3];
        double arm[6]; /* levers of the step's rows; −f on A */
        wld_f2d(w->fr_arm + 6 * (size_t)c, 6, arm);
        v3_cross(ta, arm, f);
        v3_cross(tb, arm + 3, f);
        for (int k = 0; k < 3; k++) {
            A->contact_force[k] -= f[k];
            A->contact_torque[k] -= ta[k] + couple[k];
            B->contact_force[k] += f[k];
            B->contact_torque[k] += tb[k] + couple[k];
        }
        const double gn = w->gamma[rec->row];
        if (!(gn > 0.0)) continue;
        /* a world split over processes: the contacts it owns (share_masks' rule), so that the
         * processes' hover work adds up to the whole problem's */
        if (w->share && !w->share_body_own[A->type == DVI_BODY_FIXED ? rec->body_b : rec->body_a]) continue;
        /* u = r + J dv along n, t1, t2 */
        double tn[9], u[3] = {w->r[rec->row], w->r[rec->row + 1], w->r[rec->row + 2]};
        wld_f2d(w->fr_frame + 9 * (size_t)c, 9, tn);
        const int32_t ia = w->dyn[rec->body_a], ib = w->dyn[rec->body_b];
        for (int side = 0; side < 2; side++) {
            const int32_t i = side ? ib : ia;
            if (i < 0) continue;
            const double* dv = w->dv + 6 * (size_t)i;
            for (int k = 0; k < 3; k++) {
                double rk[3];
                v3_cross(rk, arm + 3 * side, tn + 3 * k);
                const double du = v3_dot(tn + 3 * k, dv) + v3_dot(rk, dv + 3);
                u[k] += side ? du : -du;
            }
        }
        const double un = u[0];
        if (un > 0.0) {
            if (h * un > hover) hover = h * un, hover_contact = c;
            hover_work += gn * un;
            /* the friction's work at the step's mean tangential velocity
             * (r_t is the free velocity's, u_t the end's) */
            const double* g = w->gamma + rec->row;
            hover_friction -= 0.5 * (g[1] * (w->r[rec->row + 1] + u[1]) + g[2] * (w->r[rec->row + 2] + u[2]));
        }
    }
    w->stats.ccp_hover = hover;
    w->stats.ccp_hover_work = hover_work;
    w->stats.ccp_hover_contact = hover_contact;
    w->stats.ccp_hover_friction = hover_friction;
    w->contact_count = npts;
    w->stats.kinetic_energy = wld_step_kinetic_energy(w);
    wld_step_joint_reactions(w, h);
    if (!warm_store(w, npts, nt)) return wld_error(w, DVI_ERR_NOMEM, "step: out of memory");
    return DVI_OK;
}

/* The block kinds the world's DVI steps may hand the solver (bits
 * 1 << dvi_block_kind): bilateral with joints, friction, and
 * friction_rolling when two shapes of different bodies, one of them dynamic,
 * both have rolling friction or both spinning friction (the rule of the
 * contacts' row counts above). For a message: O(shapes). */
static uint32_t world_block_kinds(const dvi_world* w)
{
    uint32_t kinds = 1u << DVI_BLOCK_FRICTION;
    if (w->joint_count > 0) kinds |= 1u << DVI_BLOCK_BILATERAL;
    for (int spin = 0; spin < 2; spin++) {
        int32_t a = -1; /* the first such shape on a dynamic body */
        for (int32_t i = 0; i < w->shape_count && a < 0; i++) {
            const dvi_material* m = wld_shape_material(w, &w->shapes[i]);
            if ((spin ? m->spinning_friction : m->rolling_friction) > 0.0 &&
                w->bodies[w->shapes[i].body].type == DVI_BODY_DYNAMIC)
                a = i;
        }
        for (int32_t i = 0; i < w->shape_count && a >= 0; i++) {
            const dvi_material* m = wld_shape_material(w, &w->shapes[i]);
            if ((spin ? m->spinning_friction : m->rolling_friction) > 0.0 && w->shapes[i].body != w->shapes[a].body)
                return kinds | 1u << DVI_BLOCK_FRICTION_ROLLING;
        }
    }
    return kinds;
}

/* Refuses a solver that does not solve the world's friction law, naming the
 * solvers that do on the blocks the world may give (the registry's
 * dvi_solver_supports), and the setting that picks the solver's law
 * (dvi_solver_law_setting: lemke.coulomb) if it has one. */
static dvi_status check_law(dvi_world* w)
{
    const dvi_friction_law law = w->def.friction_law;
    const dvi_friction_law has = dvi_solver_get_law(w->solver);
    if (has == law) return DVI_OK;
    char names[160];
    ccp_solver_names_for(law, world_block_kinds(w), false, names, sizeof names);
    const char* solver = dvi_solver_get_name(w->solver);
    const int32_t index = dvi_solver_index(solver);
    const char* setting = dvi_solver_law_setting(index);
    return wld_error(w, DVI_ERR_INVALID_ARG,
                           "world: friction law \"%s\" needs a solver of %s (%s); the solver is \"%s\"%s%s",
                           dvi_friction_law_string(law), law == DVI_LAW_COULOMB ? "Coulomb's law" : "the CCP", names,
                           solver, !setting ? "" : has != dvi_solver_law(index) ? " with " : " without ",
                           setting ? setting : "");
}

dvi_status wld_step_dvi(dvi_world* w, double h)
{
    dvi_status law_ok = check_law(w);
    if (law_ok != DVI_OK) return law_ok;
    wld_step_dvi_ctx x;
    memset(&x, 0, sizeof x);
    x.h = h;
    x.nt = wld_threads(w);
    memset(&w->stats, 0, sizeof w->stats);
    w->stats.worst_joint = -1;
    w->stats.chattering_contact = -1;
    w->stats.ccp_hover_contact = -1;
    w->stats.coulomb_contact = -1;
    double t[7];
    t[0] = wld_step_clock();
    dvi_status st = wld_step_collide(w, &x.pts, &x.npts);
    t[1] = wld_step_clock();
    if (st == DVI_OK) st = wld_step_free_velocities(w, h, NULL, &x.ndyn);
    if (st == DVI_OK) st = stage_assemble(w, &x);
    t[2] = wld_step_clock();
    if (st == DVI_OK && !warm_reserve(w, x.npts)) st = wld_error(w, DVI_ERR_NOMEM, "step: out of memory");
    if (w->share && w->share->sum) { /* every process, failed or not, before the solve's sums: all stop, or none */
        int64_t failed = st != DVI_OK;
        w->share->sum(w->share->ctx, &failed, 1);
        if (st == DVI_OK && failed > 0)
            st = wld_error(w, DVI_ERR_NUMERIC, "step: the step failed on %lld other process(es)", (long long)failed);
    }
    if (st != DVI_OK) return st;
    st = stage_solve(w, &x);
    if (st != DVI_OK) return st;
    t[3] = wld_step_clock();
    st = stage_integrate(w, &x);
    if (st != DVI_OK) return st;
    t[4] = wld_step_clock();
    st = stage_report(w, &x);
    if (st != DVI_OK) return st;
    w->time += h;
    t[5] = wld_step_clock();
    wld_step_stage_times(w, t);
    return w->stats.solver_status == DVI_SOLVE_CONVERGED || x.nrows == 0 ? DVI_OK : DVI_NOT_CONVERGED;
}
