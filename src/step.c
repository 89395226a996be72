/* dvicontact — the DVI time step (Anitescu–Tasora, docs/formulation.md).
 *
 * Stages: geoms → collide → rows → CCP → solve → velocities → positions →
 * outputs. Rows are ordered joints first (each joint's rows, its speed motor
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

#include "dem.h"
#include "math3.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* contacts per chunk of the parallel assembly (moved forward to a shape pair's start) */
#define ASSEMBLE_CHUNK 1024

static uint64_t pair_hash(int32_t a, int32_t b)
{
    uint64_t z = (uint64_t)(uint32_t)a << 32 | (uint32_t)b;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* The previous step's impulses for a new contact point: the point of the
 * same shape pair with the same feature id, or else the nearest one within
 * `radius` not taken yet (feature ids of some routines change when a
 * manifold is rebuilt; positions of resting contacts do not). */
static const dvi_warm_point* warm_find(const dvi_world* w, const dvi_contact_point* pt, double radius, bool* taken)
{
    if (w->slot_count == 0) return NULL;
    size_t mask = w->slot_count - 1;
    int32_t first = -1;
    for (size_t i = pair_hash(pt->geom_a, pt->geom_b) & mask;; i = (i + 1) & mask) {
        const dvi_warm_slot* s = &w->slots[i];
        if (s->shape_a < 0) return NULL;
        if (s->shape_a == pt->geom_a && s->shape_b == pt->geom_b) {
            first = s->first;
            break;
        }
    }
    int32_t best = -1;
    double best_d2 = radius * radius;
    for (int32_t k = first; k < w->warm_count && w->warm[k].shape_a == pt->geom_a && w->warm[k].shape_b == pt->geom_b;
         k++) {
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

/* Stores this step's points and impulses for the next step's warm start. */
static bool warm_store(dvi_world* w, int32_t npts)
{
    if (!DVI_RESERVE(w, warm, npts + 1)) return false;
    size_t n = 16;
    while (n < 2 * (size_t)npts) n *= 2;
    if (!DVI_RESERVE(w, slots, n)) return false;
    w->slot_count = n;
    for (size_t i = 0; i < n; i++) w->slots[i].shape_a = -1;
    for (int32_t c = 0; c < npts; c++) {
        const dvi_contact_rec* rec = &w->contacts[c];
        dvi_warm_point* p = &w->warm[c];
        p->shape_a = rec->shape_a;
        p->shape_b = rec->shape_b;
        p->feature = rec->feature;
        v3_copy(p->point, rec->point);
        memset(p->gamma, 0, sizeof p->gamma);
        for (int32_t r = 0; r < rec->nrows; r++) p->gamma[r] = w->gamma[rec->row + r];
        if (c > 0 && w->contacts[c - 1].shape_a == rec->shape_a && w->contacts[c - 1].shape_b == rec->shape_b)
            continue; /* not the first point of its pair */
        size_t mask = n - 1;
        size_t i = pair_hash(rec->shape_a, rec->shape_b) & mask;
        while (w->slots[i].shape_a >= 0) i = (i + 1) & mask;
        w->slots[i].shape_a = rec->shape_a;
        w->slots[i].shape_b = rec->shape_b;
        w->slots[i].first = c;
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

/* The rows of contact c (its record, frame, block, r, compliance and
 * warm start) from the collision point; its first row and row count are
 * already in its record, and its block is blk. Returns whether the contact
 * has compliance. Touches only contact c's entries and the warm-start
 * points of its shape pair. */
static bool assemble_contact(dvi_world* w, const dvi_contact_point* pts, int32_t c, double h, int32_t blk)
{
    const double env = w->def.collision_envelope;
    const dvi_contact_point* pt = &pts[c];
    const dvi_shape* sa = &w->shapes[pt->geom_a];
    const dvi_shape* sb = &w->shapes[pt->geom_b];
    dvi_contact_rec* rec = &w->contacts[c];
    rec->shape_a = pt->geom_a;
    rec->shape_b = pt->geom_b;
    rec->body_a = sa->body;
    rec->body_b = sb->body;
    rec->feature = pt->feature;
    v3_copy(rec->point, pt->point);
    v3_copy(rec->normal, pt->normal);
    basis_from_normal(rec->normal, rec->t1, rec->t2);
    rec->distance = pt->distance;
    double mu = fmin(sa->material.friction, sb->material.friction);
    double mu_roll = fmin(sa->material.rolling_friction, sb->material.rolling_friction);
    double mu_spin = fmin(sa->material.spinning_friction, sb->material.spinning_friction);
    double e = fmax(sa->material.restitution, sb->material.restitution);
    double comp = sa->material.compliance + sb->material.compliance;
    bool rolling = rec->nrows == 6;
    int32_t row = rec->row;
    const double* dirs[6] = {rec->normal, rec->t1, rec->t2, rec->normal, rec->t1, rec->t2};
    double rhoA[3], rhoB[3];
    v3_sub(rhoA, rec->point, w->bodies[rec->body_a].x);
    v3_sub(rhoB, rec->point, w->bodies[rec->body_b].x);
    v3_copy(rec->rho_a, rhoA);
    v3_copy(rec->rho_b, rhoB);
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
    rec->ell = ell;
    w->fr_block[c] = blk;
    w->fr_body[2 * c] = w->dyn[rec->body_a];
    w->fr_body[2 * c + 1] = w->dyn[rec->body_b];
    for (int k = 0; k < 3; k++) {
        w->fr_frame[9 * (size_t)c + k] = rec->normal[k];
        w->fr_frame[9 * (size_t)c + 3 + k] = rec->t1[k];
        w->fr_frame[9 * (size_t)c + 6 + k] = rec->t2[k];
        w->fr_arm[6 * (size_t)c + k] = rhoA[k];
        w->fr_arm[6 * (size_t)c + 3 + k] = rhoB[k];
    }
    w->fr_ell[c] = ell;
    w->blocks[blk] = rolling ? (dvi_ccp_block){DVI_BLOCK_FRICTION_ROLLING, mu, mu_spin / ell, mu_roll / ell}
                             : (dvi_ccp_block){DVI_BLOCK_FRICTION, mu, 0.0, 0.0};
    const dvi_warm_point* prev = warm_find(w, pt, env + 1e-3, w->taken);
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
                const dvi_body* A = &w->bodies[rec->body_a];
                const dvi_body* B = &w->bodies[rec->body_b];
                double va[3], vb[3], c1[3], c2[3];
                v3_cross(c1, A->w, rhoA);
                v3_add(va, A->v, c1);
                v3_cross(c2, B->w, rhoB);
                v3_add(vb, B->v, c2);
                double vn = v3_dot(vb, rec->normal) - v3_dot(va, rec->normal);
                if (vn < -w->def.bounce_threshold && pt->distance + h * vn < 0.0) b = fmin(b, e * vn);
            }
        }
        w->r[row] = vrel + b;
        w->compliance[row] = q < 3 ? comp / (h * h) : 0.0;
        w->gamma[row] = prev ? prev->gamma[q] : 0.0;
        row++;
    }
    return comp > 0.0;
}

dvi_status dvi_world_step(dvi_world* w, double h)
{
    if (!w) return DVI_ERR_INVALID_ARG;
    if (!(h > 0.0) || !isfinite(h)) return dvi_world_error(w, DVI_ERR_INVALID_ARG, "step: h must be > 0 (got %g)", h);
    if (w->def.method == DVI_METHOD_DEM) return dvi_dem_step(w, h); /* penalty back end (dem.c) */
    double t0 = dvi_step_clock();
    const int32_t nb = w->body_count;
    memset(&w->stats, 0, sizeof w->stats);

    /* ---- geoms and collision ---- */
    const dvi_contact_point* pts = NULL;
    int32_t npts = 0;
    dvi_status st = dvi_step_collide(w, &pts, &npts);
    if (st != DVI_OK) return st;
    double t1 = dvi_step_clock();

    /* ---- dynamic indices, free velocities, inverse masses, torque motors ---- */
    int32_t ndyn = 0;
    st = dvi_step_free_velocities(w, h, NULL, &ndyn);
    if (st != DVI_OK) return st;

    /* ---- rows: count, then build ---- */
    const int32_t joint_rows = dvi_step_joint_row_total(w);
    int32_t nrows = joint_rows, nblocks = joint_rows;
    for (int32_t c = 0; c < npts; c++) {
        const dvi_shape* sa = &w->shapes[pts[c].geom_a];
        const dvi_shape* sb = &w->shapes[pts[c].geom_b];
        bool rolling = fmin(sa->material.rolling_friction, sb->material.rolling_friction) > 0.0 ||
                       fmin(sa->material.spinning_friction, sb->material.spinning_friction) > 0.0;
        nrows += rolling ? 6 : 3;
        nblocks++;
    }
    w->stats.bodies = nb;
    w->stats.contacts = npts;
    w->stats.joint_rows = joint_rows;
    w->stats.rows = nrows;
    if (!DVI_RESERVE(w, blocks, nblocks + 1) || !DVI_RESERVE(w, r, nrows + 1) || !DVI_RESERVE(w, compliance, nrows + 1) ||
        !DVI_RESERVE(w, gamma, nrows + 1) || !DVI_RESERVE(w, colptr, nrows + 1) || !DVI_RESERVE(w, rowind, 12 * (size_t)joint_rows + 1) ||
        !DVI_RESERVE(w, values, 12 * (size_t)joint_rows + 1) || !DVI_RESERVE(w, contacts, npts + 1) ||
        !DVI_RESERVE(w, taken, w->warm_count + 1) || !DVI_RESERVE(w, joint_jb, 6 * (size_t)joint_rows + 6) ||
        !DVI_RESERVE(w, fr_block, npts + 1) || !DVI_RESERVE(w, fr_body, 2 * (size_t)npts + 2) ||
        !DVI_RESERVE(w, fr_frame, 9 * (size_t)npts + 9) || !DVI_RESERVE(w, fr_arm, 6 * (size_t)npts + 6) ||
        !DVI_RESERVE(w, fr_ell, npts + 1))
        return dvi_world_error(w, DVI_ERR_NOMEM, "step: out of memory");

    memset(w->taken, 0, ((size_t)w->warm_count + 1) * sizeof *w->taken);
    int32_t nz = 0;
    bool any_compliance = false;
    double max_violation = 0.0;
    int32_t row = dvi_step_joint_rows(w, h, &nz, &any_compliance, &max_violation);
    /* the contacts' rows: the first row and the row count of each contact,
     * then the contacts in parallel, in chunks that never split a shape pair
     * (a pair's warm-start points are matched in order within the pair, and
     * pairs use disjoint stretches of the previous step's points), so every
     * thread count gives the same rows */
    double max_pen = 0.0;
    for (int32_t c = 0, rw = row; c < npts; c++) {
        const dvi_shape* sa = &w->shapes[pts[c].geom_a];
        const dvi_shape* sb = &w->shapes[pts[c].geom_b];
        bool rolling = fmin(sa->material.rolling_friction, sb->material.rolling_friction) > 0.0 ||
                       fmin(sa->material.spinning_friction, sb->material.spinning_friction) > 0.0;
        w->contacts[c].row = rw;
        w->contacts[c].nrows = rolling ? 6 : 3;
        rw += rolling ? 6 : 3;
    }
    const int32_t nchunks = (npts + ASSEMBLE_CHUNK - 1) / ASSEMBLE_CHUNK;
    if (!DVI_RESERVE(w, chunk_start, nchunks + 2)) return dvi_world_error(w, DVI_ERR_NOMEM, "step: out of memory");
    for (int32_t k = 0; k < nchunks; k++) {
        int32_t c = k * ASSEMBLE_CHUNK;
        while (c > 0 && c < npts && pts[c].geom_a == pts[c - 1].geom_a && pts[c].geom_b == pts[c - 1].geom_b) c++;
        w->chunk_start[k] = c;
    }
    w->chunk_start[nchunks] = npts;
    const int nt = dvi_world_threads(w);
    int comp_any = 0;
#ifdef _OPENMP
#pragma omp parallel for schedule(static) num_threads(nt) if (nt > 1 && npts >= 4 * ASSEMBLE_CHUNK) \
    reduction(max : max_pen) reduction(|| : comp_any)
#endif
    for (int32_t k = 0; k < nchunks; k++) {
        for (int32_t c = w->chunk_start[k]; c < w->chunk_start[k + 1]; c++) { /* starts never decrease */
            if (-pts[c].distance > max_pen) max_pen = -pts[c].distance;
            if (assemble_contact(w, pts, c, h, joint_rows + c)) comp_any = 1;
        }
    }
    if (comp_any) any_compliance = true;
    if (npts > 0) row = w->contacts[npts - 1].row + w->contacts[npts - 1].nrows;
    for (int32_t j = joint_rows; j < row; j++) w->colptr[j] = nz; /* no columns: the frames give the rows */
    w->colptr[row] = nz;
    w->stats.max_penetration = max_pen;
    w->stats.max_joint_violation = max_violation;
    double t2 = dvi_step_clock();

    /* ---- solve ---- */
    if (nrows > 0) {
        dvi_csc D = {6 * ndyn, nrows, w->colptr, w->rowind, w->values};
        dvi_ccp_problem p = dvi_ccp_problem_empty();
        p.rows = nrows;
        p.block_count = nblocks;
        p.blocks = w->blocks;
        p.body_count = ndyn;
        p.D = &D;
        p.inv_mass = w->inv_mass;
        dvi_ccp_frames frames = {npts, w->fr_block, w->fr_body, w->fr_frame, w->fr_arm, w->fr_ell};
        p.frames = npts > 0 ? &frames : NULL;
        p.r = w->r;
        p.compliance = any_compliance ? w->compliance : NULL;
        dvi_solve_result res;
        memset(&res, 0, sizeof res);
        st = dvi_solver_solve(w->solver, &p, w->gamma, &res);
        if (st < 0) return dvi_world_error(w, st, "step: the CCP was refused: %s", res.message);
        w->stats.iterations = res.iterations;
        w->stats.residual = res.metrics.residual;
        w->stats.solver_status = res.status;
        w->stats.warm_start_rejected = res.warm_start_rejected;
        w->stats.solver_bytes_per_iteration = res.bytes_per_iteration;
    }
    double t3 = dvi_step_clock();

    /* ---- velocities: v⁺ = v_free + M⁻¹ D γ (the solver's operator, in
     * parallel), positions; body by body ---- */
    if (nrows > 0) {
        st = dvi_solver_velocity(w->solver, w->gamma, w->dv);
        if (st != DVI_OK) return dvi_world_error(w, st, "step: the velocity update failed");
    } else {
        memset(w->dv, 0, 6 * (size_t)ndyn * sizeof(double));
    }
#ifdef _OPENMP
#pragma omp parallel for schedule(static) num_threads(nt) if (nt > 1 && nb >= 4 * ASSEMBLE_CHUNK)
#endif
    for (int32_t i = 0; i < nb; i++) {
        dvi_body* b = &w->bodies[i];
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
        /* positions */
        v3_axpy(b->x, h, b->v);
        double wq[4] = {0.0, b->w[0], b->w[1], b->w[2]}, dq[4];
        q_mul(dq, wq, b->q);
        for (int k = 0; k < 4; k++) b->q[k] += 0.5 * h * dq[k];
        q_normalize(b->q);
    }
    double t4 = dvi_step_clock();

    /* ---- outputs: contact forces, joint reactions, warm start ---- */
    for (int32_t c = 0; c < npts; c++) {
        dvi_contact_rec* rec = &w->contacts[c];
        double f[3] = {0, 0, 0};
        const double* dirs[3] = {rec->normal, rec->t1, rec->t2};
        for (int q = 0; q < 3; q++) v3_axpy(f, w->gamma[rec->row + q] / h, dirs[q]);
        v3_copy(rec->force, f);
        double couple[3] = {0, 0, 0}; /* spin and rolling resistance on B */
        for (int q = 3; q < rec->nrows; q++) v3_axpy(couple, rec->ell * w->gamma[rec->row + q] / h, dirs[q - 3]);
        for (int side = 0; side < 2; side++) {
            dvi_body* b = &w->bodies[side ? rec->body_b : rec->body_a];
            double fs[3], tq[3];
            v3_scale(fs, side ? 1.0 : -1.0, f);
            v3_add(b->contact_force, b->contact_force, fs);
            v3_cross(tq, side ? rec->rho_b : rec->rho_a, fs); /* lever of the step's rows */
            v3_axpy(tq, side ? 1.0 : -1.0, couple);
            v3_add(b->contact_torque, b->contact_torque, tq);
        }
    }
    w->contact_count = npts;
    dvi_step_joint_reactions(w, h);
    if (!warm_store(w, npts)) return dvi_world_error(w, DVI_ERR_NOMEM, "step: out of memory");
    w->time += h;
    double t5 = dvi_step_clock();
    w->stats.seconds_collide = t1 - t0;
    w->stats.seconds_assemble = t2 - t1;
    w->stats.seconds_solve = t3 - t2;
    w->stats.seconds_integrate = (t4 - t3) + (t5 - t4);
    return w->stats.solver_status == DVI_SOLVE_CONVERGED || nrows == 0 ? DVI_OK : DVI_NOT_CONVERGED;
}
