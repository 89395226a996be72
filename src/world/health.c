/* dvicontact — the run health monitor (docs/health.md), in the world layer
 * because it reads the world's arrays; a model (scene_model.c) runs it.
 *
 * After every step of a model it checks what a run that went wrong shows:
 *   - energy: E = Σ ½ m v² + ½ ωᵀ I ω − m g·x over the dynamic bodies (the
 *     kinetic energy plus gravity's potential) against E₀ + W_in, W_in being
 *     the work put in since the start by motors, applied forces, force
 *     elements and kinematic bodies (both signs). The excess (E − E₀ − W_in)
 *     is measured in energy scales: S = KE₀ + M g H + W⁺, M the dynamic
 *     mass, H the initial bodies' extent along gravity (at least the largest
 *     shape), W⁺ the positive parts of the work put in. Above energy_growth
 *     it is a warning, above blowup_factor a blow-up;
 *   - the energy audit: each step's change of the staggered energy (below)
 *     against the work put in and the energy the contacts' and joints'
 *     impulses take, each evaluated at the velocity that makes the balance
 *     exact for the step's update; what remains is integration error, and
 *     above audit_fraction of S (either sign) it is a warning;
 *   - escape: bodies farther than region_margin outside the region that
 *     bounds the scene: the initial positions, the fixed shapes' extent
 *     (unbounded along a plane) and the reach of the bodies held by joints;
 *   - penetration: a contact deeper (a DEM overlap larger) than
 *     penetration_fraction of the smaller of its two shapes (the contacts
 *     are walked only when the step's deepest one exceeds that fraction of
 *     the scene's smallest shape);
 *   - joints: the step's largest relative violation
 *     (dvi_step_stats.max_joint_violation_relative) above joint_fraction;
 *   - chatter: a DEM contact whose friction force reversed direction near
 *     its Coulomb limit on each of the last DVI_DEM_CHATTER_STEPS steps
 *     (dvi_step_stats.chattering_contacts, counted by the DEM step);
 *   - hover: the CCP's relaxation (a sliding contact that pushes opens at
 *     u_n = μ‖u_t‖, where Coulomb's law keeps it closed) opened a contact
 *     in one step by more than hover_envelope_fraction of the collision
 *     envelope (the contact leaves it: the body hops), or the friction of
 *     such contacts took more than hover_work_fraction of the kinetic
 *     energy at the step's start (at least of S/10) in one step (the
 *     opening is blocked, or bought by a large normal impulse: the body is
 *     braked as Coulomb's law would not brake it). dvi_step_stats.ccp_hover
 *     and ccp_hover_friction, summed by the DVI step.
 *
 * The audit's identity. Both steps update a body's velocity by
 * v⁺ = v + M⁻¹ (h f + P), P the constraint impulse (DVI: Jᵀγ; DEM: h times
 * the contact force), then its position by x⁺ = x + h v⁺ (symplectic Euler).
 * Exactly, ½ m (v⁺² − v²) = (h f + P)·v̄ with v̄ = (v + v⁺)/2, the average
 * velocity; and with gravity's potential taken at the staggered position
 * x − (h/2) v (the midpoint of the step that brought the body to x), its
 * change is −m g·h v̄ too. So the staggered energy
 *     E' = ½ m v² + ½ ωᵀ I ω − m g·(x − (h/2) v)
 * changes by the work of every force and impulse at v̄ and nothing else: the
 * end velocity alone leaves the O(h) energy error of the symplectic step in
 * the balance (a pendulum's ±hω/2), the start velocity the same of the other
 * sign. For the rotation (the midpoint Lie–Poisson step of step_common.c),
 * ½ L⁺·I⁺⁻¹L⁺ − ½ L·I⁻¹L = P_ω·ω̄ exactly for a torque-free body, with
 * ω̄ = (ω + Qᵀ ω⁺)/2 and Q the step's rotation: the end velocity seen in the
 * body's orientation at the start. With impulses on a body whose momentum is
 * not along a principal axis the gyroscopic term leaves h (ω × Iω)·I⁻¹P/2,
 * O(h²) a step: that, and rounding, is the audit's error.
 * A contact's or a joint row's work is then γ·(J_A·V̄_A + J_B·V̄_B): for the
 * contacts, summed over their bodies as h (F·v̄ + T·ω̄) of the step's contact
 * force and torque; a speed motor's row is work put in, a kinematic body's
 * share of a contact or joint is work it puts in.
 *
 * Two passes over the bodies per step (the start, after the step), O(bodies);
 * joints O(rows); contacts only as said. The report keeps the first
 * occurrence of each kind, named, and the worst values; the model's state
 * blob carries it, so a resumed run reports as a straight one does.
 */
#include "health.h"
#include "error.h"

#define DVI_HEALTH_G0 9.80665 /* m/s², standard gravity: the energy scale's floor */
#include "hash_rng.h"
#include "world_internal.h"
#include "dem.h"

#include "math3.h"

#include "bytes_le.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

dvi_health_settings dvi_default_health_settings(void)
{
    dvi_health_settings s;
    memset(&s, 0, sizeof s);
    s.enabled = true;
    s.energy_growth = 0.1;
    s.blowup_factor = 100.0;
    s.region_margin = 0.0;
    s.penetration_fraction = 0.2;
    s.joint_fraction = 1e-3;
    s.audit_fraction = 1e-3;
    s.hover_envelope_fraction = 1.0;
    s.hover_work_fraction = 0.5;
    return s;
}

/* Room for a body's name in a finding: a scene's name (at most 64 bytes)
 * and an index. */
#define HEALTH_NAME 96

/* Body b's name in a finding: the world's namer's (the scene's names in a
 * model), "the world" for the ground (b < 0). */
static void body_name(const dvi_world* w, int32_t b, char* out, size_t size)
{
    if (b < 0) snprintf(out, size, "the world");
    else wld_body_name(w, b, out, size);
}

/* A dynamic body's kinetic energy (*ke) plus gravity's potential. */
static double body_energy(const wld_body* b, const double* g, double* ke)
{
    double R[9], wl[3], Iw[3];
    q_to_m3(R, b->q);
    m3_tmulv(wl, R, b->w);
    m3_mulv(Iw, b->inertia, wl);
    *ke = 0.5 * b->mass * v3_dot(b->v, b->v) + 0.5 * v3_dot(wl, Iw);
    return *ke - b->mass * b->gravity_scale * v3_dot(g, b->x);
}

void wld_health_free(world_health* h)
{
    free(h->size);
    free(h->motors);
    free(h->start);
    h->size = NULL;
    h->motors = NULL;
    h->start = NULL;
    h->motor_count = 0;
    h->dt_start = 0.0;
}

/* Widens [lo, hi] to hold p ± r. */
static void grow_box(double* lo, double* hi, const double* p, double r)
{
    for (int k = 0; k < 3; k++) {
        lo[k] = fmin(lo[k], p[k] - r);
        hi[k] = fmax(hi[k], p[k] + r);
    }
}

/* The region that bounds the scene: the initial positions and joint
 * anchors; each fixed shape's box, and along a plane every axis the plane
 * extends along (±INFINITY); and the reach of the bodies held by joints: a
 * body jointed to the world or a fixed body stays within its lever (plus its
 * size) of the anchor, and a body jointed to such a body within the sum of
 * the levers along the chain (JOINT_PASSES passes over the joints, enough for
 * chains given in order and for short ones in any order; a body the passes do
 * not reach keeps its initial position only). */
#define JOINT_PASSES 4
static dvi_status scene_region(world_health* h, const dvi_world* w, double* lo, double* hi)
{
    for (int k = 0; k < 3; k++) {
        lo[k] = INFINITY;
        hi[k] = -INFINITY;
    }
    for (int32_t i = 0; i < w->body_count; i++) grow_box(lo, hi, w->bodies[i].x, 0.0);
    for (int32_t i = 0; i < w->shape_count; i++) {
        const wld_shape* sh = &w->shapes[i];
        const wld_body* b = &w->bodies[sh->body];
        const col_shape_class* c = col_shape_class_of(sh->type);
        if (b->type != DVI_BODY_FIXED || !c || !c->bounds) continue;
        col_geom g = wld_shape_local_geom(sh);
        double R[9], off[3];
        q_to_m3(R, b->q);
        m3_mulv(off, R, sh->lpos);
        v3_add(g.pos, b->x, off);
        m3_mul(g.rot, R, sh->lrot);
        if (!c->bounds(&g)) continue;
        if (g.unbounded) { /* a plane: its normal is the shape frame's z */
            const double n[3] = {g.rot[2], g.rot[5], g.rot[8]};
            for (int k = 0; k < 3; k++)
                if (fabs(n[k]) < 1.0 - 1e-12) {
                    lo[k] = -INFINITY;
                    hi[k] = INFINITY;
                }
            grow_box(lo, hi, g.pos, 0.0);
            continue;
        }
        for (int k = 0; k < 3; k++) {
            lo[k] = fmin(lo[k], g.aabb_min[k]);
            hi[k] = fmax(hi[k], g.aabb_max[k]);
        }
    }
    /* the joints: each body's reach, a centre and a radius (NaN: none yet) */
    double* reach = NULL;
    if (w->joint_count > 0) {
        reach = malloc(4 * (size_t)w->body_count * sizeof *reach);
        if (!reach) return base_error_set(DVI_ERR_NOMEM, "wld_health_init: out of memory");
        for (int32_t i = 0; i < w->body_count; i++) reach[4 * (size_t)i + 3] = NAN;
    }
    for (int pass = 0; pass < JOINT_PASSES && w->joint_count > 0; pass++) {
        bool changed = false;
        for (int32_t k = 0; k < w->joint_count; k++) {
            const wld_joint* j = &w->joints[k];
            const wld_body* B = &w->bodies[j->b];
            double R[9], lever[3], p[3];
            q_to_m3(R, B->q);
            m3_mulv(lever, R, j->lb);
            v3_add(p, lever, B->x); /* the anchor on B */
            const double rb = v3_norm(lever);
            const bool grounded = j->a < 0 || w->bodies[j->a].type == DVI_BODY_FIXED;
            for (int side = 0; side < 2; side++) { /* side 0: B from A; side 1: A from B */
                const int32_t from = side ? j->b : j->a, to = side ? j->a : j->b;
                if (to < 0 || w->bodies[to].type == DVI_BODY_FIXED) continue;
                double c[3], r;
                double la = 0.0;
                if (j->a >= 0) {
                    double RA[9], l[3];
                    q_to_m3(RA, w->bodies[j->a].q);
                    m3_mulv(l, RA, j->la);
                    la = v3_norm(l);
                }
                if (side == 0 && grounded) {
                    v3_copy(c, p);
                    r = rb;
                } else if (from >= 0 && !isnan(reach[4 * (size_t)from + 3])) {
                    v3_copy(c, reach + 4 * (size_t)from);
                    r = reach[4 * (size_t)from + 3] + la + rb;
                } else {
                    continue;
                }
                double* t = reach + 4 * (size_t)to;
                if (isnan(t[3]) || r < t[3]) {
                    v3_copy(t, c);
                    t[3] = r;
                    changed = true;
                }
            }
            grow_box(lo, hi, p, 0.0);
        }
        if (!changed) break;
    }
    for (int32_t i = 0; reach && i < w->body_count; i++)
        if (!isnan(reach[4 * (size_t)i + 3]))
            grow_box(lo, hi, reach + 4 * (size_t)i, reach[4 * (size_t)i + 3] + w->bodies[i].bounding_radius);
    free(reach);
    if (w->body_count == 0)
        for (int k = 0; k < 3; k++) lo[k] = hi[k] = 0.0;
    return DVI_OK;
}

dvi_status wld_health_init(world_health* h, const dvi_health_settings* set, const dvi_world* w)
{
    wld_health_free(h);
    /* each body's smallest bounded shape; the motors and their axes; the
     * bodies' start of step */
    h->size = malloc(((size_t)w->body_count + 1) * sizeof *h->size);
    h->motors = malloc(((size_t)w->joint_count + 1) * sizeof *h->motors);
    h->start = malloc((10 * (size_t)w->body_count + 1) * sizeof *h->start);
    if (!h->size || !h->motors || !h->start) return base_error_set(DVI_ERR_NOMEM, "wld_health_init: out of memory");
    for (int32_t i = 0; i < w->body_count; i++) h->size[i] = INFINITY;
    h->min_size = INFINITY;
    for (int32_t i = 0; i < w->shape_count; i++) {
        const wld_shape* s = &w->shapes[i];
        double z = INFINITY;
        const col_shape_class* c = col_shape_class_of(s->type);
        if (c && c->thickness) {
            const col_geom g = wld_shape_local_geom(s);
            z = c->thickness(&g);
        }
        if (z < h->size[s->body]) h->size[s->body] = z;
        if (z < h->min_size) h->min_size = z;
    }
    h->motor_count = 0;
    for (int32_t k = 0; k < w->joint_count; k++) {
        const wld_joint* j = &w->joints[k];
        if (j->motor == DVI_MOTOR_NONE) continue;
        health_motor* mo = &h->motors[h->motor_count++];
        mo->joint = k;
        mo->linear = j->motor == DVI_MOTOR_LINEAR_SPEED;
        v3_copy(mo->axis_a, j->axa);
    }
    h->set = *set;
    memset(&h->rep, 0, sizeof h->rep);
    for (int k = 0; k < DVI_HEALTH_KINDS; k++) h->rep.first_step[k] = -1;
    h->work_pos = 0.0;
    h->dt_start = 0.0;
    double e0 = 0.0;
    /* the energy scale: the initial bodies' box along gravity */
    double blo[3] = {INFINITY, INFINITY, INFINITY}, bhi[3] = {-INFINITY, -INFINITY, -INFINITY};
    double ke = 0.0, mass = 0.0, all_mass = 0.0, largest = 0.0, moving = 0.0; /* the largest shape, of a moving body */
    for (int32_t i = 0; i < w->body_count; i++) {
        const wld_body* b = &w->bodies[i];
        grow_box(blo, bhi, b->x, 0.0);
        if (b->bounding_radius > largest) largest = b->bounding_radius;
        if (b->type != DVI_BODY_FIXED && b->bounding_radius > moving) moving = b->bounding_radius;
        if (b->type != DVI_BODY_DYNAMIC) continue;
        all_mass += b->mass;
        mass += b->mass * b->gravity_scale;
        double kb;
        e0 += body_energy(b, w->def.gravity, &kb);
        ke += kb;
    }
    h->e0 = e0;
    for (int32_t k = 0; k < w->joint_count; k++) { /* bodies swing about their joints' anchors */
        const wld_joint* j = &w->joints[k];
        const wld_body* B = &w->bodies[j->b];
        double R[9], p[3];
        q_to_m3(R, B->q);
        m3_mulv(p, R, j->lb);
        v3_add(p, p, B->x);
        grow_box(blo, bhi, p, 0.0);
    }
    dvi_status st = scene_region(h, w, h->lo, h->hi);
    if (st != DVI_OK) return st;
    double extent = 0.0;
    for (int k = 0; k < 3; k++)
        if (isfinite(h->hi[k] - h->lo[k])) extent = fmax(extent, h->hi[k] - h->lo[k]);
    h->margin = set->region_margin > 0.0 ? set->region_margin : fmax(extent, 10.0 * moving);
    if (!(h->margin > 0.0)) h->margin = 1.0;
    const double gn = v3_norm(w->def.gravity);
    double height = 0.0;
    if (gn > 0.0 && w->body_count > 0) {
        double d[3];
        v3_scale(d, 1.0 / gn, w->def.gravity);
        for (int k = 0; k < 3; k++) height += fabs(d[k]) * (bhi[k] - blo[k]);
    }
    height = fmax(height, largest);
    /* the floor: a hundredth of lifting the dynamic mass by the scene's size
     * under standard gravity, so that bodies at rest without gravity (a
     * scale of 0 J) do not call a step's rounding a blow-up */
    h->scale0 = fmax(ke + mass * gn * height, 0.01 * all_mass * DVI_HEALTH_G0 * fmax(extent, largest));
    h->rep.energy_scale = h->scale0;
    return DVI_OK;
}

static void raise_kind(world_health* h, dvi_health_kind k, int64_t step, const char* fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
static void raise_kind(world_health* h, dvi_health_kind k, int64_t step, const char* fmt, ...)
{
    if (h->rep.raised & (1u << k)) return;
    h->rep.raised |= 1u << k;
    h->rep.first_step[k] = step;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(h->rep.first[k], sizeof h->rep.first[k], fmt, ap);
    va_end(ap);
}

/* The staggered energy of the dynamic bodies for a step of dt: the kinetic
 * energy plus gravity's potential at x − (dt/2) v (the header's identity). */
static double staggered_energy(const dvi_world* w, double dt, double* kinetic)
{
    double e = 0.0, k = 0.0;
    for (int32_t i = 0; i < w->body_count; i++) {
        const wld_body* b = &w->bodies[i];
        if (b->type != DVI_BODY_DYNAMIC) continue;
        double ke, y[3];
        body_energy(b, w->def.gravity, &ke);
        v3_copy(y, b->x);
        v3_axpy(y, -0.5 * dt, b->v);
        e += ke - b->mass * b->gravity_scale * v3_dot(w->def.gravity, y);
        k += ke;
    }
    if (kinetic) *kinetic = k;
    return e;
}

void wld_health_before_step(world_health* h, const dvi_world* w, double dt)
{
    if (!h->set.enabled || !h->start) return;
    for (int32_t i = 0; i < w->body_count; i++) {
        const wld_body* b = &w->bodies[i];
        double* s = h->start + 10 * (size_t)i;
        v3_copy(s, b->v);
        v3_copy(s + 3, b->w);
        memcpy(s + 6, b->q, 4 * sizeof(double));
    }
    h->e_start = staggered_energy(w, dt, &h->ke_start);
    h->dt_start = dt;
}

/* The energy audit's terms of the step just taken (the header's identity):
 * each body's mean velocities replace its start velocities in h->start;
 * *applied: work of the applied forces and force elements on the dynamic
 * bodies; *contacts: work of the contact impulses on every moving body;
 * *kinematic: work the kinematic bodies put in through contacts and joints;
 * *motors: work of the speed motors' rows and the torque motors; *joints:
 * work of the other joint rows. */
typedef struct audit_terms {
    double applied, contacts, kinematic, motors, joints;
} audit_terms;

static audit_terms audit_step(world_health* h, const dvi_world* w, double dt)
{
    audit_terms t = {0, 0, 0, 0, 0};
    for (int32_t i = 0; i < w->body_count; i++) {
        const wld_body* b = &w->bodies[i];
        double* s = h->start + 10 * (size_t)i;
        if (b->type == DVI_BODY_FIXED) {
            memset(s, 0, 6 * sizeof(double));
            continue;
        }
        /* v̄ = (v + v⁺)/2; ω̄ = (ω + Qᵀω⁺)/2 = (ω + R R⁺ᵀ ω⁺)/2 */
        double R0[9], R1[9], wl[3], wq[3];
        q_to_m3(R0, s + 6);
        q_to_m3(R1, b->q);
        m3_tmulv(wl, R1, b->w);
        m3_mulv(wq, R0, wl);
        for (int k = 0; k < 3; k++) {
            s[k] = 0.5 * (s[k] + b->v[k]);
            s[3 + k] = 0.5 * (s[3 + k] + wq[k]);
        }
        const double wc = dt * (v3_dot(b->contact_force, s) + v3_dot(b->contact_torque, s + 3));
        t.contacts += wc;
        if (b->type == DVI_BODY_DYNAMIC) {
            t.applied += dt * (v3_dot(b->force, s) + v3_dot(b->torque, s + 3));
            if (w->element_count) t.applied += dt * (v3_dot(b->step_force, s) + v3_dot(b->step_torque, s + 3));
        } else {
            t.kinematic -= wc;
        }
    }
    for (int32_t k = 0; k < w->joint_count; k++) {
        const wld_joint* j = &w->joints[k];
        const double* va = j->a >= 0 ? h->start + 10 * (size_t)j->a : NULL;
        const double* vb = h->start + 10 * (size_t)j->b;
        const bool kin_a = j->a >= 0 && w->bodies[j->a].type == DVI_BODY_KINEMATIC;
        const bool kin_b = w->bodies[j->b].type == DVI_BODY_KINEMATIC;
        const bool speed_motor = j->motor == DVI_MOTOR_ROTATION_SPEED || j->motor == DVI_MOTOR_LINEAR_SPEED;
        for (int q = 0; q < j->nrows; q++) {
            const double ua = va ? v6_dot(j->ja[q], va) : 0.0, ub = v6_dot(j->jb[q], vb);
            const double g = j->gamma[q];
            if (speed_motor && q == j->nrows - 1) t.motors += g * (ua + ub); /* the motor's row is the last */
            else t.joints += g * (ua + ub);
            if (kin_a) t.kinematic -= g * ua;
            if (kin_b) t.kinematic -= g * ub;
        }
        if (j->motor == DVI_MOTOR_ROTATION_TORQUE) { /* ±τ a on the dynamic bodies, a in A's start frame */
            double ax[3];
            v3_copy(ax, j->axa);
            if (j->a >= 0) {
                double RA[9];
                q_to_m3(RA, va + 6);
                m3_mulv(ax, RA, j->axa);
            }
            double rel = w->bodies[j->b].type == DVI_BODY_DYNAMIC ? v3_dot(vb + 3, ax) : 0.0;
            if (j->a >= 0 && w->bodies[j->a].type == DVI_BODY_DYNAMIC) rel -= v3_dot(va + 3, ax);
            t.motors += dt * j->torque * rel;
        }
    }
    return t;
}

dvi_status wld_health_after_step(world_health* h, const dvi_world* w, int64_t step, double dt,
                                 char* const* joint_names)
{
    if (!h->set.enabled) return DVI_OK;
    const double t = w->time;
    char name[HEALTH_NAME];
    /* the audit's terms (they need the start of the step), then one pass
     * over the bodies: their energy and the bodies outside the region */
    const bool audit = h->dt_start == dt && dt > 0.0;
    audit_terms at = {0, 0, 0, 0, 0};
    if (audit) at = audit_step(h, w, dt);
    h->dt_start = 0.0;
    double e = 0.0;
    int64_t out = 0, first = -1;
    for (int32_t i = 0; i < w->body_count; i++) {
        const wld_body* b = &w->bodies[i];
        if (b->type == DVI_BODY_FIXED) continue;
        double kb;
        if (b->type == DVI_BODY_DYNAMIC) e += body_energy(b, w->def.gravity, &kb);
        bool o = false;
        for (int k = 0; k < 3; k++)
            if (!(b->x[k] >= h->lo[k] - h->margin && b->x[k] <= h->hi[k] + h->margin)) o = true;
        if (o) {
            if (first < 0) first = i;
            out++;
        }
    }
    /* the audit: ΔE' = W_in − D_contacts − D_joints + error */
    const double W = at.applied + at.kinematic + at.motors;
    if (audit) {
        const double e1 = staggered_energy(w, dt, NULL);
        const double d_c = -(at.contacts + at.kinematic), d_j = -at.joints;
        h->rep.energy_change += e1 - h->e_start;
        h->rep.dissipated_contacts += d_c;
        h->rep.dissipated_joints += d_j;
        h->rep.audit_error += (e1 - h->e_start) - W + d_c + d_j;
        h->rep.work_in += W;
        if (W > 0.0) h->work_pos += W;
    }
    /* energy */
    const double scale = h->scale0 + h->work_pos;
    const double excess = (e - h->e0 - h->rep.work_in) / (scale > 1e-300 ? scale : 1e-300);
    h->rep.energy_scale = scale;
    if (excess > h->rep.energy_excess || !isfinite(excess)) h->rep.energy_excess = excess;
    if (!isfinite(e) || excess > h->set.blowup_factor) {
        raise_kind(h, DVI_HEALTH_BLOWUP, step,
                   "step %lld (t = %.6g s): blow-up: the energy is %.3g J above its start plus the work put in "
                   "(%.3g J), %.3g energy scales (%.3g J); the limit is %g",
                   (long long)step, t, e - h->e0 - h->rep.work_in, h->rep.work_in, excess, scale,
                   h->set.blowup_factor);
        return DVI_ERR_NUMERIC;
    }
    if (excess > h->set.energy_growth)
        raise_kind(h, DVI_HEALTH_ENERGY, step,
                   "step %lld (t = %.6g s): the energy is %.3g J above its start plus the work put in (%.3g J): "
                   "%.3g of the energy scale (%.3g J), more than the %g allowed",
                   (long long)step, t, e - h->e0 - h->rep.work_in, h->rep.work_in, excess, scale,
                   h->set.energy_growth);
    if (audit) {
        const double rel = fabs(h->rep.audit_error) / (scale > 1e-300 ? scale : 1e-300);
        if (rel > h->rep.audit_worst || !isfinite(rel)) h->rep.audit_worst = rel;
        if (!(rel <= h->set.audit_fraction))
            raise_kind(h, DVI_HEALTH_AUDIT, step,
                       "step %lld (t = %.6g s): the energy audit does not close: %.3g J %s that nothing accounts "
                       "for, %.3g of the energy scale (%.3g J; limit %g); dE %.4g J, work in %.4g J, contacts took "
                       "%.4g J, joints %.4g J",
                       (long long)step, t, fabs(h->rep.audit_error), h->rep.audit_error > 0.0 ? "gained" : "lost",
                       rel, scale, h->set.audit_fraction, h->rep.energy_change, h->rep.work_in,
                       h->rep.dissipated_contacts, h->rep.dissipated_joints);
    }
    /* escape */
    h->rep.escaped = out;
    if (out > 0 && !(h->rep.raised & (1u << DVI_HEALTH_ESCAPE))) {
        body_name(w, first, name, sizeof name);
        const double* x = w->bodies[first].x;
        raise_kind(h, DVI_HEALTH_ESCAPE, step,
                   "step %lld (t = %.6g s): %lld bod%s left the region that bounds the scene by more than %.3g m; %s is "
                   "at "
                   "(%.4g, %.4g, %.4g)",
                   (long long)step, t, (long long)out, out == 1 ? "y" : "ies", h->margin, name, x[0], x[1], x[2]);
    }
    /* penetration */
    const bool dem = w->def.method == DVI_METHOD_DEM;
    const double deepest = dem ? w->stats.max_overlap : w->stats.max_penetration;
    if (deepest > h->set.penetration_fraction * h->min_size) {
        double worst = 0.0;
        int32_t wc = -1;
        for (int32_t c = 0; c < w->contact_count; c++) {
            dvi_contact_info ci;
            if (dvi_world_get_contact(w, c, &ci) != DVI_OK) continue;
            const double depth = -ci.distance;
            if (!(depth > 0.0)) continue;
            double sa = ci.body_a.index1 > 0 ? h->size[ci.body_a.index1 - 1] : INFINITY;
            double sb = ci.body_b.index1 > 0 ? h->size[ci.body_b.index1 - 1] : INFINITY;
            double s = fmin(sa, sb);
            if (!isfinite(s)) continue;
            if (depth / s > worst) {
                worst = depth / s;
                wc = c;
            }
        }
        if (worst > h->rep.worst_penetration) h->rep.worst_penetration = worst;
        if (wc >= 0 && worst > h->set.penetration_fraction && !(h->rep.raised & (1u << DVI_HEALTH_PENETRATION))) {
            dvi_contact_info ci;
            dvi_world_get_contact(w, wc, &ci);
            char other[HEALTH_NAME];
            body_name(w, ci.body_a.index1 - 1, name, sizeof name);
            body_name(w, ci.body_b.index1 - 1, other, sizeof other);
            raise_kind(h, DVI_HEALTH_PENETRATION, step,
                       "step %lld (t = %.6g s): %s and %s %s by %.3g m, %.3g of the smaller shape (more than %g)",
                       (long long)step, t, name, other, dem ? "overlap" : "penetrate", -ci.distance, worst,
                       h->set.penetration_fraction);
        }
    }
    /* joints */
    const double jr = w->stats.max_joint_violation_relative;
    if (jr > h->rep.worst_joint) h->rep.worst_joint = jr;
    if (jr > h->set.joint_fraction && w->stats.worst_joint >= 0) {
        const int32_t j = w->stats.worst_joint;
        const char* jn = joint_names && joint_names[j] ? joint_names[j] : NULL;
        char idx[32];
        snprintf(idx, sizeof idx, "joints[%d]", (int)j);
        raise_kind(h, DVI_HEALTH_JOINT, step,
                   "step %lld (t = %.6g s): %s%s%s%s came apart by %.3g of its size (%.3g m), more than %g",
                   (long long)step, t, idx, jn ? " (" : "", jn ? jn : "", jn ? ")" : "", jr, w->joints[j].size,
                   h->set.joint_fraction);
    }
    /* friction chatter (DEM) */
    if (w->stats.chattering_contacts > 0 && !(h->rep.raised & (1u << DVI_HEALTH_CHATTER))) {
        dvi_contact_info ci;
        if (dvi_world_get_contact(w, w->stats.chattering_contact, &ci) == DVI_OK) {
            char other[HEALTH_NAME];
            body_name(w, ci.body_a.index1 - 1, name, sizeof name);
            body_name(w, ci.body_b.index1 - 1, other, sizeof other);
            const double fn = v3_dot(ci.force, ci.normal);
            double ft[3];
            v3_copy(ft, ci.force);
            v3_axpy(ft, -fn, ci.normal);
            raise_kind(h, DVI_HEALTH_CHATTER, step,
                       "step %lld (t = %.6g s): the friction between %s and %s reverses every step (%.3g N on a "
                       "normal force of %.3g N, %d steps in a row; %d contact%s): h = %g s is too long for the "
                       "tangential spring",
                       (long long)step, t, name, other, v3_norm(ft), fn, DVI_DEM_CHATTER_STEPS,
                       (int)w->stats.chattering_contacts,
                       w->stats.chattering_contacts == 1 ? "" : "s", dt);
        }
    }
    /* the CCP's relaxation (DVI) */
    const double env = w->def.collision_envelope;
    const double hv = env > 0.0 ? w->stats.ccp_hover / env : 0.0;
    /* against the kinetic energy at the step's start, at least a tenth of
     * the energy scale (a pile coming to rest has little left to take) */
    const double kin = audit ? fmax(h->ke_start, 0.1 * scale) : scale;
    const double hw = w->stats.ccp_hover_friction / (kin > 1e-300 ? kin : 1e-300);
    if (hv > h->rep.hover_worst) h->rep.hover_worst = hv;
    if (hw > h->rep.hover_work_worst) h->rep.hover_work_worst = hw;
    if ((hv > h->set.hover_envelope_fraction || hw > h->set.hover_work_fraction) &&
        !(h->rep.raised & (1u << DVI_HEALTH_HOVER))) {
        dvi_contact_info ci;
        char other[HEALTH_NAME];
        snprintf(name, sizeof name, "a contact");
        other[0] = 0;
        if (dvi_world_get_contact(w, w->stats.ccp_hover_contact, &ci) == DVI_OK) {
            char a[HEALTH_NAME], b[HEALTH_NAME];
            body_name(w, ci.body_a.index1 - 1, a, sizeof a);
            body_name(w, ci.body_b.index1 - 1, b, sizeof b);
            snprintf(name, sizeof name, "%.40s", a);
            snprintf(other, sizeof other, " and %.40s", b);
        }
        raise_kind(h, DVI_HEALTH_HOVER, step,
                   "step %lld (t = %.6g s): CCP relaxation: %s%s open by %.2g m (%.2g envelope) while sliding; "
                   "such contacts' friction took %.3g J (%.2g of the kinetic energy; limits %g, %g); friction_law "
                   "coulomb keeps them closed",
                   (long long)step, t, name, other, w->stats.ccp_hover, hv, w->stats.ccp_hover_friction, hw,
                   h->set.hover_envelope_fraction, h->set.hover_work_fraction);
    }
    return DVI_OK;
}

/* ---- state ------------------------------------------------------------------- */

/* Little-endian f64/i64 fields, then one message per kind, then an FNV-1a
 * 64. Records written before the hover kind existed hold seven kinds (and
 * 0 where the hover's worst values are), those before the audit kind six
 * and no audit numbers, those before the chatter kind five; all load (the
 * audit then starts at zero, its scale from the work put in so far). */
#define HEALTH_AUDIT_NUMBERS 6
#define HEALTH_NUMBERS_OF(kinds) (4 + 6 + 1 + 1 + (kinds) + 6 + ((kinds) >= HEALTH_KINDS_V3 ? HEALTH_AUDIT_NUMBERS : 0))
#define HEALTH_NUMBERS HEALTH_NUMBERS_OF(DVI_HEALTH_KINDS)
#define HEALTH_KINDS_V1 5
#define HEALTH_KINDS_V2 6
#define HEALTH_KINDS_V3 7

static size_t state_size_of(int kinds) { return 8 * (size_t)HEALTH_NUMBERS_OF(kinds) + (size_t)kinds * 256 + 8; }

size_t wld_health_state_size(void) { return state_size_of(DVI_HEALTH_KINDS); }

bool wld_health_state_size_valid(size_t size)
{
    return size == state_size_of(DVI_HEALTH_KINDS) || size == state_size_of(HEALTH_KINDS_V3) ||
           size == state_size_of(HEALTH_KINDS_V2) || size == state_size_of(HEALTH_KINDS_V1);
}

static uint64_t dbits(double d)
{
    uint64_t u;
    memcpy(&u, &d, 8);
    return u;
}
static double bitsd(uint64_t u)
{
    double d;
    memcpy(&d, &u, 8);
    return d;
}
/* FNV-1a from the seed the health state has always used. */
static uint64_t fnv(const unsigned char* p, size_t n) { return base_fnv1a(1469598103934665603u, p, n); }

void wld_health_save(const world_health* h, unsigned char* out)
{
    uint64_t v[HEALTH_NUMBERS];
    int n = 0;
    v[n++] = dbits(h->e0);
    v[n++] = dbits(h->scale0);
    v[n++] = dbits(h->margin);
    v[n++] = dbits(h->rep.work_in);
    for (int k = 0; k < 3; k++) v[n++] = dbits(h->lo[k]);
    for (int k = 0; k < 3; k++) v[n++] = dbits(h->hi[k]);
    v[n++] = h->rep.raised;
    v[n++] = (uint64_t)h->rep.escaped;
    for (int k = 0; k < DVI_HEALTH_KINDS; k++) v[n++] = (uint64_t)h->rep.first_step[k];
    v[n++] = dbits(h->rep.energy_scale);
    v[n++] = dbits(h->rep.energy_excess);
    v[n++] = dbits(h->rep.worst_penetration);
    v[n++] = dbits(h->rep.worst_joint);
    v[n++] = dbits(h->rep.hover_worst);
    v[n++] = dbits(h->rep.hover_work_worst);
    v[n++] = dbits(h->rep.energy_change);
    v[n++] = dbits(h->rep.dissipated_contacts);
    v[n++] = dbits(h->rep.dissipated_joints);
    v[n++] = dbits(h->rep.audit_error);
    v[n++] = dbits(h->rep.audit_worst);
    v[n++] = dbits(h->work_pos);
    for (int i = 0; i < n; i++) le_put_u64(out + 8 * i, v[i]);
    unsigned char* q = out + 8 * HEALTH_NUMBERS;
    for (int k = 0; k < DVI_HEALTH_KINDS; k++) {
        memset(q + 256 * k, 0, 256);
        memcpy(q + 256 * k, h->rep.first[k], strnlen(h->rep.first[k], 255));
    }
    le_put_u64(q + 256 * DVI_HEALTH_KINDS, fnv(out, wld_health_state_size() - 8));
}

dvi_status wld_health_load(world_health* h, const unsigned char* in, size_t size)
{
    const int kinds = size == state_size_of(HEALTH_KINDS_V1)   ? HEALTH_KINDS_V1
                      : size == state_size_of(HEALTH_KINDS_V2) ? HEALTH_KINDS_V2
                      : size == state_size_of(HEALTH_KINDS_V3) ? HEALTH_KINDS_V3
                                                               : DVI_HEALTH_KINDS;
    if (size != state_size_of(kinds) || le_get_u64(in + size - 8) != fnv(in, size - 8)) return base_error_set(DVI_ERR_PARSE, "state: the model's health record is corrupt");
    world_health t = *h;
    int n = 0;
    t.e0 = bitsd(le_get_u64(in + 8 * n++));
    t.scale0 = bitsd(le_get_u64(in + 8 * n++));
    t.margin = bitsd(le_get_u64(in + 8 * n++));
    t.rep.work_in = bitsd(le_get_u64(in + 8 * n++));
    for (int k = 0; k < 3; k++) t.lo[k] = bitsd(le_get_u64(in + 8 * n++));
    for (int k = 0; k < 3; k++) t.hi[k] = bitsd(le_get_u64(in + 8 * n++));
    uint64_t raised = le_get_u64(in + 8 * n++);
    if (raised >= (1u << kinds)) return base_error_set(DVI_ERR_PARSE, "state: the model's health record is corrupt");
    t.rep.raised = (uint32_t)raised;
    t.rep.escaped = (int64_t)le_get_u64(in + 8 * n++);
    for (int k = 0; k < DVI_HEALTH_KINDS; k++) t.rep.first_step[k] = k < kinds ? (int64_t)le_get_u64(in + 8 * n++) : -1;
    t.rep.energy_scale = bitsd(le_get_u64(in + 8 * n++));
    t.rep.energy_excess = bitsd(le_get_u64(in + 8 * n++));
    t.rep.worst_penetration = bitsd(le_get_u64(in + 8 * n++));
    t.rep.worst_joint = bitsd(le_get_u64(in + 8 * n++));
    t.rep.hover_worst = bitsd(le_get_u64(in + 8 * n++)); /* 0 in the records before the hover kind */
    t.rep.hover_work_worst = bitsd(le_get_u64(in + 8 * n++));
    if (kinds >= HEALTH_KINDS_V3) {
        t.rep.energy_change = bitsd(le_get_u64(in + 8 * n++));
        t.rep.dissipated_contacts = bitsd(le_get_u64(in + 8 * n++));
        t.rep.dissipated_joints = bitsd(le_get_u64(in + 8 * n++));
        t.rep.audit_error = bitsd(le_get_u64(in + 8 * n++));
        t.rep.audit_worst = bitsd(le_get_u64(in + 8 * n++));
        t.work_pos = bitsd(le_get_u64(in + 8 * n++));
    } else {
        t.rep.energy_change = t.rep.dissipated_contacts = t.rep.dissipated_joints = 0.0;
        t.rep.audit_error = t.rep.audit_worst = 0.0;
        t.work_pos = t.rep.work_in;
    }
    const unsigned char* q = in + 8 * HEALTH_NUMBERS_OF(kinds);
    for (int k = 0; k < DVI_HEALTH_KINDS; k++) {
        if (k >= kinds) {
            memset(t.rep.first[k], 0, 256);
            continue;
        }
        if (q[256 * k + 255] != 0) return base_error_set(DVI_ERR_PARSE, "state: the model's health record is corrupt");
        memcpy(t.rep.first[k], q + 256 * k, 256);
    }
    *h = t;
    return DVI_OK;
}
