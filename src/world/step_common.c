/* dvicontact — what the DVI step (step_dvi.c) and the DEM step (step_dem.c) share:
 * grow-only buffers, the clock, applied motor torques, and the joint rows of
 * the CCP with their reactions.
 *
 * Joint rows come first in both steps' problems. Each joint contributes the
 * rows wld_joint_build_rows gives (its speed motor last); a row's D column
 * holds J_A and J_B on the dynamic bodies only, lower dynamic index first, and
 *     r = bias + J_B · v_free,B + J_A · v_free,A.
 * J_B and J_A of every row are staged in w->joint_jb and w->joint_ja and copied into the joints only
 * when the step commits, so a step that fails leaves the joints as they were.
 */
#include "world_internal.h"

#include "math3.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

double wld_step_clock(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void wld_step_stage_times(dvi_world* w, const double t[6])
{
    w->stats.seconds_collide = t[1] - t[0];
    w->stats.seconds_assemble = t[2] - t[1];
    w->stats.seconds_solve = t[3] - t[2];
    w->stats.seconds_integrate = t[4] - t[3];
    w->stats.seconds_report = t[5] - t[4];
}

bool wld_reserve(const dvi_allocator* a, void** p, size_t* cap, size_t n, size_t elem)
{
    return base_mem_grow(a, p, cap, n, elem, 64);
}

bool wld_step_reserve_frames(dvi_world* w, int32_t n)
{
    return DVI_RESERVE(w, fr_frame, 9 * (size_t)n + 9) && DVI_RESERVE(w, fr_arm, 6 * (size_t)n + 6) &&
           DVI_RESERVE(w, fr_ell, (size_t)n + 1);
}

/* Adds h M⁻¹ (±τ a) of every torque motor to w->vfree. */
static void motor_torques(dvi_world* w, double h)
{
    for (int32_t k = 0; k < w->joint_count; k++) {
        const wld_joint* j = &w->joints[k];
        if (j->motor != DVI_MOTOR_ROTATION_TORQUE) continue;
        double RA[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, a[3], dw[3];
        if (j->a >= 0) q_to_m3(RA, w->bodies[j->a].q);
        m3_mulv(a, RA, j->axa);
        for (int side = 0; side < 2; side++) {
            int32_t bi = side ? j->b : j->a;
            if (bi < 0 || w->dyn[bi] < 0) continue;
            const double* M = w->inv_mass + 10 * (size_t)w->dyn[bi];
            double tq[3];
            v3_scale(tq, side ? j->torque : -j->torque, a);
            for (int r = 0; r < 3; r++) dw[r] = M[1 + 3 * r] * tq[0] + M[2 + 3 * r] * tq[1] + M[3 + 3 * r] * tq[2];
            v3_axpy(w->vfree + 6 * (size_t)bi + 3, h, dw);
        }
    }
}

dvi_status wld_step_collide(dvi_world* w, const col_contact_point** pts, int32_t* npts)
{
    const int32_t nb = w->body_count, ns = w->shape_count;
    if (!DVI_RESERVE(w, geoms, ns + 1) || !DVI_RESERVE(w, dyn, nb + 1) || !DVI_RESERVE(w, vfree, 6 * (size_t)nb + 6))
        return wld_error(w, DVI_ERR_NOMEM, "step: out of memory");
    /* each shape's geom on its own: any thread count gives the same geoms */
    const int nt = wld_threads(w);
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 512) num_threads(nt) if (nt > 1 && ns >= DVI_COLLIDE_PAR_MIN)
#endif
    for (int32_t i = 0; i < ns; i++) {
        const wld_shape* s = &w->shapes[i];
        const wld_body* b = &w->bodies[s->body];
        col_geom* g = &w->geoms[i];
        memset(g, 0, sizeof *g);
        double R[9], off[3];
        q_to_m3(R, b->q);
        m3_mulv(off, R, s->lpos);
        v3_add(g->pos, b->x, off);
        m3_mul(g->rot, R, s->lrot);
        g->type = s->type;
        g->owner = s->body;
        g->is_static = b->type != DVI_BODY_DYNAMIC;
        g->radius = s->radius;
        g->half_length = s->half_length;
        v3_copy(g->half, s->half);
        g->hfield = s->hfield;
        g->mesh = s->mesh;
        g->filtered = s->category != 1u || s->mask != 0xFFFFFFFFu;
        g->category = s->category;
        g->mask = s->mask;
        g->linked = b->excluded_pairs > 0;
        col_geom_update(g);
    }
    *pts = NULL;
    *npts = 0;
    col_set_threads(w->collision, nt);
    col_set_excluded(w->collision, w->excluded, w->excluded_count);
    dvi_status st = col_collide(w->collision, w->geoms, ns, w->def.collision_envelope, pts, npts);
    if (st != DVI_OK)
        return wld_error(w, st, "step: collision detection failed%s",
                               st == DVI_ERR_NOMEM ? " (out of memory)" : "");
    return DVI_OK;
}

/* The angular free velocity of one body: the midpoint velocity x of the
 * torque-free rotation over the step,
 *     I x + (h/2) x × I x = L,    L = I ω + h τ,
 * I the world inertia at the step's start. The step turns the body by the
 * Cayley rotation of h x (q += h/2 x q, normalised): this is the midpoint
 * Lie–Poisson update of the free rigid body (the implicit midpoint rule on
 * Euler's equations in the body frame, Π⁺ − Π = h Π_m × I_b⁻¹ Π_m with
 * Π_m = (Π + Π⁺)/2), which keeps both the angular momentum L and the energy
 * ½ Π·I_b⁻¹Π of a torque-free body to rounding, at second order in h. The
 * velocity at the step's end is I⁺⁻¹ L⁺ (wld_step_end_angular_velocity).
 * Newton's method from x = I⁻¹ L converges in 0–3 iterations at the steps
 * used here; spheres (x ∥ L) take none. */
static void free_angular_velocity(double* x, const double* I, const double* Iinv, const double* L, double h)
{
    m3_mulv(x, Iinv, L);
    const double tol = 1e-15 * v3_norm(L);
    for (int it = 0; it < 12; it++) {
        double Ix[3], F[3];
        m3_mulv(Ix, I, x);
        v3_cross(F, x, Ix);
        for (int k = 0; k < 3; k++) F[k] = Ix[k] + 0.5 * h * F[k] - L[k];
        if (!(v3_norm(F) > tol)) return;
        /* J = I + (h/2) (x̂ I − (I x)^): column c is I e_c + (h/2) (x × I e_c − I x × e_c) */
        double J[9];
        for (int c = 0; c < 3; c++) {
            double ic[3] = {I[c], I[3 + c], I[6 + c]}, e[3] = {0, 0, 0}, a[3], b[3];
            e[c] = 1.0;
            v3_cross(a, x, ic);
            v3_cross(b, Ix, e);
            for (int r = 0; r < 3; r++) J[3 * r + c] = ic[r] + 0.5 * h * (a[r] - b[r]);
        }
        /* dx = −J⁻¹ F by the adjugate */
        double c0[3], c1[3], c2[3], r0[3] = {J[0], J[1], J[2]}, r1[3] = {J[3], J[4], J[5]}, r2[3] = {J[6], J[7], J[8]};
        v3_cross(c0, r1, r2);
        v3_cross(c1, r2, r0);
        v3_cross(c2, r0, r1);
        double det = v3_dot(r0, c0);
        if (!(fabs(det) > 0.0)) return;
        for (int k = 0; k < 3; k++) x[k] -= (c0[k] * F[0] + c1[k] * F[1] + c2[k] * F[2]) / det;
    }
}

bool wld_body_isotropic(const wld_body* b)
{
    const double* I = b->inertia;
    return I[1] == 0.0 && I[2] == 0.0 && I[3] == 0.0 && I[5] == 0.0 && I[6] == 0.0 && I[7] == 0.0 && I[0] == I[4] &&
           I[4] == I[8];
}

void wld_step_end_angular_velocity(const wld_body* b, const double q0[4], const double q1[4], const double w_mid[3],
                                   const double w_step[3], double h, double out[3])
{
    /* L⁺ = L + I (ω_step − ω_mid), with L = I ω_mid + (h/2) ω_mid × I ω_mid
     * (the free velocity's equation): the momentum after the impulses */
    double R[9], I0[9], Iw[9], a[3], g[3], L[3];
    q_to_m3(R, q0);
    m3_rotate_tensor(I0, R, b->inertia);
    m3_mulv(a, I0, w_mid);
    v3_cross(g, w_mid, a);
    m3_mulv(L, I0, w_step);
    v3_axpy(L, 0.5 * h, g);
    q_to_m3(R, q1);
    m3_rotate_tensor(Iw, R, b->inv_inertia);
    m3_mulv(out, Iw, L);
}

dvi_status wld_step_free_velocities(dvi_world* w, double h, const double* acc, int32_t* ndyn_out)
{
    const int32_t nb = w->body_count;
    int32_t ndyn = 0;
    for (int32_t i = 0; i < nb; i++) w->dyn[i] = w->bodies[i].type == DVI_BODY_DYNAMIC ? ndyn++ : -1;
    if (!DVI_RESERVE(w, inv_mass, 10 * (size_t)ndyn + 10) || !DVI_RESERVE(w, dv, 6 * (size_t)ndyn + 6))
        return wld_error(w, DVI_ERR_NOMEM, "step: out of memory");
    for (int32_t i = 0; i < nb; i++) {
        const wld_body* b = &w->bodies[i];
        double* vf = w->vfree + 6 * (size_t)i;
        if (b->type == DVI_BODY_FIXED) {
            memset(vf, 0, 6 * sizeof(double));
            continue;
        }
        v3_copy(vf, b->v);
        v3_copy(vf + 3, b->w);
        if (b->type != DVI_BODY_DYNAMIC) continue;
        double R[9], Iw[9], Iinv[9], L[3], tq[3];
        q_to_m3(R, b->q);
        m3_rotate_tensor(Iw, R, b->inertia);
        m3_rotate_tensor(Iinv, R, b->inv_inertia);
        /* applied forces, and the force elements' of this step (added only
         * when the world has elements: without them the bits are those of
         * the applied force alone) */
        double fa[3], ta[3];
        v3_copy(fa, b->force);
        v3_copy(ta, b->torque);
        if (w->element_count) {
            v3_add(fa, fa, b->step_force);
            v3_add(ta, ta, b->step_torque);
        }
        if (acc) { /* the DEM step's contact forces and torques on the body */
            const double* a = acc + 6 * (size_t)i;
            for (int k = 0; k < 3; k++)
                vf[k] += h * (b->inv_mass * (fa[k] + a[k]) + b->gravity_scale * w->def.gravity[k]);
            v3_add(tq, ta, a + 3);
        } else {
            for (int k = 0; k < 3; k++) vf[k] += h * (b->inv_mass * fa[k] + b->gravity_scale * w->def.gravity[k]);
            v3_copy(tq, ta);
        }
        m3_mulv(L, Iw, b->w);
        v3_axpy(L, h, tq);
        free_angular_velocity(vf + 3, Iw, Iinv, L, h);
        double* M = w->inv_mass + 10 * (size_t)w->dyn[i];
        M[0] = b->inv_mass;
        memcpy(M + 1, Iinv, 9 * sizeof(double));
    }
    motor_torques(w, h);
    *ndyn_out = ndyn;
    return DVI_OK;
}

void wld_step_add_column(dvi_world* w, int32_t* nz, const double* ja, int32_t a, const double* jb, int32_t b)
{
    int32_t da = a >= 0 ? w->dyn[a] : -1, db = b >= 0 ? w->dyn[b] : -1;
    const double* first = ja;
    const double* second = jb;
    int32_t d1 = da, d2 = db;
    if (d1 > d2) { /* row indices must increase: lower dynamic index first */
        first = jb;
        second = ja;
        d1 = db;
        d2 = da;
    }
    if (d1 >= 0)
        for (int k = 0; k < 6; k++) {
            w->rowind[*nz] = 6 * d1 + k;
            w->values[(*nz)++] = first[k];
        }
    if (d2 >= 0 && d2 != d1)
        for (int k = 0; k < 6; k++) {
            w->rowind[*nz] = 6 * d2 + k;
            w->values[(*nz)++] = second[k];
        }
}

int32_t wld_step_joint_row_total(const dvi_world* w)
{
    int32_t n = 0;
    for (int32_t k = 0; k < w->joint_count; k++) n += wld_joint_row_count(&w->joints[k]);
    return n;
}

int32_t wld_step_joint_rows(dvi_world* w, double h, int32_t* nz, bool* any_compliance, double* max_violation)
{
    w->stats.max_joint_violation_relative = 0.0;
    w->stats.worst_joint = -1;
    wld_joint_row jrows[DVI_JOINT_MAX_ROWS];
    int32_t row = 0;
    for (int32_t k = 0; k < w->joint_count; k++) {
        const wld_joint* j = &w->joints[k];
        int n = wld_joint_build_rows(j, j->a >= 0 ? &w->bodies[j->a] : NULL, &w->bodies[j->b], w->time + h, h,
                                     w->def.joint_recovery_speed, jrows);
        double RB[9];
        q_to_m3(RB, w->bodies[j->b].q);
        m3_mulv(w->joint_lever + 3 * (size_t)k, RB, j->lb);
        for (int q = 0; q < n; q++) {
            const wld_joint_row* jr = &jrows[q];
            w->colptr[row] = *nz;
            wld_step_add_column(w, nz, jr->ja, j->a, jr->jb, j->b);
            double rv = jr->bias + v6_dot(jr->jb, w->vfree + 6 * (size_t)j->b);
            if (j->a >= 0) rv += v6_dot(jr->ja, w->vfree + 6 * (size_t)j->a);
            w->r[row] = rv;
            w->compliance[row] = jr->compliance;
            if (jr->compliance > 0.0) *any_compliance = true;
            w->gamma[row] = j->gamma[q];
            memcpy(w->joint_jb + 6 * (size_t)row, jr->jb, 6 * sizeof(double));
            memcpy(w->joint_ja + 6 * (size_t)row, jr->ja, 6 * sizeof(double));
            if (fabs(jr->violation) > *max_violation) *max_violation = fabs(jr->violation);
            const bool linear = jr->ja[0] != 0.0 || jr->ja[1] != 0.0 || jr->ja[2] != 0.0 || jr->jb[0] != 0.0 ||
                                jr->jb[1] != 0.0 || jr->jb[2] != 0.0;
            const double rel = linear ? fabs(jr->violation) / j->size : fabs(jr->violation);
            if (rel > w->stats.max_joint_violation_relative) {
                w->stats.max_joint_violation_relative = rel;
                w->stats.worst_joint = k;
            }
            w->blocks[row] = (dvi_ccp_block){DVI_BLOCK_BILATERAL, 0.0, 0.0, 0.0};
            row++;
        }
    }
    return row;
}

double wld_step_kinetic_energy(const dvi_world* w)
{
    double e = 0.0;
    for (int32_t i = 0; i < w->body_count; i++) {
        const wld_body* b = &w->bodies[i];
        if (b->type != DVI_BODY_DYNAMIC) continue;
        double R[9], wb[3], L[3]; /* ω in the body frame against the body-frame inertia */
        q_to_m3(R, b->q);
        m3_tmulv(wb, R, b->w);
        m3_mulv(L, b->inertia, wb);
        e += 0.5 * b->mass * v3_dot(b->v, b->v) + 0.5 * v3_dot(wb, L);
    }
    return e;
}

void wld_step_joint_reactions(dvi_world* w, double h)
{
    int32_t row = 0;
    for (int32_t k = 0; k < w->joint_count; k++) {
        wld_joint* j = &w->joints[k];
        int n = wld_joint_row_count(j);
        j->nrows = n;
        double F[3] = {0, 0, 0}, T[3] = {0, 0, 0};
        for (int q = 0; q < n; q++) {
            double g = w->gamma[row + q];
            j->gamma[q] = g;
            memcpy(j->jb[q], w->joint_jb + 6 * (size_t)(row + q), sizeof j->jb[q]);
            memcpy(j->ja[q], w->joint_ja + 6 * (size_t)(row + q), sizeof j->ja[q]);
            v3_axpy(F, g / h, j->jb[q]);
            v3_axpy(T, g / h, j->jb[q] + 3);
        }
        /* torque about the anchor on B: T_com − (p_B − x_B) × F, with the
         * lever of B's pose at the step's start, the one its rows used: the
         * pose after the step would leave |v|·h·|F| on a free axis */
        double c[3];
        v3_cross(c, w->joint_lever + 3 * (size_t)k, F);
        v3_sub(T, T, c);
        v3_copy(j->reaction_force, F);
        v3_copy(j->reaction_torque, T);
        row += n;
    }
}

void wld_step_joint_impulses(dvi_world* w, int32_t nrows)
{
    for (int32_t jr = 0; jr < nrows; jr++)
        for (int32_t k = w->colptr[jr]; k < w->colptr[jr + 1]; k++) w->dv[w->rowind[k]] += w->values[k] * w->gamma[jr];
}
