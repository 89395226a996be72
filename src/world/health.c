/* dvicontact — the run health monitor (docs/health.md), in the world layer
 * because it reads the world's arrays; a model (scene_model.c) runs it.
 *
 * After every step of a model it checks what a run that went wrong shows:
 *   - energy: E = Σ ½ m v² + ½ ωᵀ I ω − m g·x over the dynamic bodies (the
 *     kinetic energy plus gravity's potential) against E₀ + W_in, W_in being
 *     the work put in since the start by speed and torque motors, applied
 *     forces and kinematic bodies (each counted when positive, so that
 *     brakes do not hide a gain). The excess (E − E₀ − W_in) is measured in
 *     energy scales: S = KE₀ + M g H + W_in, M the dynamic mass, H the
 *     initial region's extent along gravity (at least the largest shape);
 *     KE₀ + M g H is at least 0.01 M g₀ L (g₀ standard gravity, L the
 *     region's largest extent or the largest shape).
 *     Above energy_growth it is a warning, above blowup_factor a blow-up;
 *   - escape: bodies farther than region_margin outside the box of the
 *     initial bodies' positions and joint anchors;
 *   - penetration: a contact deeper (a DEM overlap larger) than
 *     penetration_fraction of the smaller of its two shapes (the contacts
 *     are walked only when the step's deepest one exceeds that fraction of
 *     the scene's smallest shape);
 *   - joints: the step's largest relative violation
 *     (dvi_step_stats.max_joint_violation_relative) above joint_fraction;
 *   - chatter: a DEM contact whose friction force reversed direction near
 *     its Coulomb limit on each of the last DVI_DEM_CHATTER_STEPS steps
 *     (dvi_step_stats.chattering_contacts, counted by the DEM step).
 * One pass over the bodies per step, O(bodies); contacts and joints only as
 * said. The report keeps the first occurrence of each kind, named, and the
 * worst values; the model's state blob carries it, so a resumed run reports
 * as a straight one does.
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
    else dvi_world_body_name(w, b, out, size);
}

/* A dynamic body's kinetic energy (*ke) plus gravity's potential. */
static double body_energy(const dvi_body* b, const double* g, double* ke)
{
    double R[9], wl[3], Iw[3];
    q_to_m3(R, b->q);
    m3_tmulv(wl, R, b->w);
    m3_mulv(Iw, b->inertia, wl);
    *ke = 0.5 * b->mass * v3_dot(b->v, b->v) + 0.5 * v3_dot(wl, Iw);
    return *ke - b->mass * b->gravity_scale * v3_dot(g, b->x);
}

void dvi_health_free(world_health* h)
{
    free(h->size);
    free(h->motors);
    h->size = NULL;
    h->motors = NULL;
    h->motor_count = 0;
}

dvi_status dvi_health_init(world_health* h, const dvi_health_settings* set, const dvi_world* w)
{
    dvi_health_free(h);
    /* each body's smallest bounded shape; the motors and their axes */
    h->size = malloc(((size_t)w->body_count + 1) * sizeof *h->size);
    h->motors = malloc(((size_t)w->joint_count + 1) * sizeof *h->motors);
    if (!h->size || !h->motors) return dvi_error_set(DVI_ERR_NOMEM, "dvi_health_init: out of memory");
    for (int32_t i = 0; i < w->body_count; i++) h->size[i] = INFINITY;
    h->min_size = INFINITY;
    for (int32_t i = 0; i < w->shape_count; i++) {
        const dvi_shape* s = &w->shapes[i];
        double z = INFINITY;
        const dvi_shape_class* c = dvi_shape_class_of(s->type);
        if (c && c->thickness) {
            const dvi_geom g = dvi_shape_local_geom(s);
            z = c->thickness(&g);
        }
        if (z < h->size[s->body]) h->size[s->body] = z;
        if (z < h->min_size) h->min_size = z;
    }
    h->motor_count = 0;
    for (int32_t k = 0; k < w->joint_count; k++) {
        const dvi_joint* j = &w->joints[k];
        if (j->motor == DVI_MOTOR_NONE) continue;
        health_motor* mo = &h->motors[h->motor_count++];
        mo->joint = k;
        mo->linear = j->motor == DVI_MOTOR_LINEAR_SPEED;
        v3_copy(mo->axis_a, j->axa);
    }
    h->set = *set;
    memset(&h->rep, 0, sizeof h->rep);
    for (int k = 0; k < DVI_HEALTH_KINDS; k++) h->rep.first_step[k] = -1;
    double e0 = 0.0;
    /* the region: the box of every body's position; the energy scale */
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    double ke = 0.0, mass = 0.0, all_mass = 0.0, largest = 0.0;
    for (int32_t i = 0; i < w->body_count; i++) {
        const dvi_body* b = &w->bodies[i];
        for (int k = 0; k < 3; k++) {
            lo[k] = fmin(lo[k], b->x[k]);
            hi[k] = fmax(hi[k], b->x[k]);
        }
        if (b->bounding_radius > largest) largest = b->bounding_radius;
        if (b->type != DVI_BODY_DYNAMIC) continue;
        all_mass += b->mass;
        mass += b->mass * b->gravity_scale;
        double kb;
        e0 += body_energy(b, w->def.gravity, &kb);
        ke += kb;
    }
    h->e0 = e0;
    for (int32_t k = 0; k < w->joint_count; k++) { /* bodies swing about their joints' anchors */
        const dvi_joint* j = &w->joints[k];
        const dvi_body* B = &w->bodies[j->b];
        double R[9], p[3];
        q_to_m3(R, B->q);
        m3_mulv(p, R, j->lb);
        v3_add(p, p, B->x);
        for (int c = 0; c < 3; c++) {
            lo[c] = fmin(lo[c], p[c]);
            hi[c] = fmax(hi[c], p[c]);
        }
    }
    if (w->body_count == 0) {
        v3_set(lo, 0, 0, 0);
        v3_set(hi, 0, 0, 0);
    }
    v3_copy(h->lo, lo);
    v3_copy(h->hi, hi);
    double extent = fmax(hi[0] - lo[0], fmax(hi[1] - lo[1], hi[2] - lo[2]));
    h->margin = set->region_margin > 0.0 ? set->region_margin : fmax(extent, 10.0 * largest);
    if (!(h->margin > 0.0)) h->margin = 1.0;
    const double gn = v3_norm(w->def.gravity);
    double height = 0.0;
    if (gn > 0.0) {
        double d[3];
        v3_scale(d, 1.0 / gn, w->def.gravity);
        for (int k = 0; k < 3; k++) height += fabs(d[k]) * (hi[k] - lo[k]);
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

/* Work the motors put in over the last step of length dt: their reaction
 * about or along the axis times the relative speed, positive parts only.
 * (Applied forces and kinematic bodies: in the body pass of
 * dvi_health_after_step.) */
static double motor_work(const world_health* h, const dvi_world* w, double dt)
{
    double W = 0.0;
    for (int32_t i = 0; i < h->motor_count; i++) {
        const health_motor* mo = &h->motors[i];
        const dvi_joint* j = &w->joints[mo->joint];
        double ax[3];
        v3_copy(ax, mo->axis_a);
        if (j->a >= 0) {
            double R[9];
            q_to_m3(R, w->bodies[j->a].q);
            m3_mulv(ax, R, mo->axis_a);
        }
        const dvi_body* B = &w->bodies[j->b];
        const dvi_body* A = j->a >= 0 ? &w->bodies[j->a] : NULL;
        double P;
        if (mo->linear) {
            double rel = v3_dot(B->v, ax) - (A ? v3_dot(A->v, ax) : 0.0);
            P = v3_dot(j->reaction_force, ax) * rel;
        } else {
            double rel = v3_dot(B->w, ax) - (A ? v3_dot(A->w, ax) : 0.0);
            double tq = j->motor == DVI_MOTOR_ROTATION_TORQUE ? j->torque : v3_dot(j->reaction_torque, ax);
            P = tq * rel;
        }
        if (P > 0.0) W += P * dt;
    }
    return W;
}

dvi_status dvi_health_after_step(world_health* h, const dvi_world* w, int64_t step, double dt,
                                 char* const* joint_names)
{
    if (!h->set.enabled) return DVI_OK;
    const double t = w->time;
    char name[HEALTH_NAME];
    /* one pass over the bodies: their energy, the work of applied forces
     * and kinematic bodies (positive parts), and the bodies outside the
     * region */
    double W = motor_work(h, w, dt), e = 0.0;
    int64_t out = 0, first = -1;
    for (int32_t i = 0; i < w->body_count; i++) {
        const dvi_body* b = &w->bodies[i];
        if (b->type == DVI_BODY_FIXED) continue;
        double P = 0.0, kb;
        if (b->type == DVI_BODY_DYNAMIC) {
            P = v3_dot(b->force, b->v) + v3_dot(b->torque, b->w);
            if (w->element_count) P += v3_dot(b->step_force, b->v) + v3_dot(b->step_torque, b->w);
            e += body_energy(b, w->def.gravity, &kb);
        } else {
            P = -(v3_dot(b->contact_force, b->v) + v3_dot(b->contact_torque, b->w));
        }
        if (P > 0.0) W += P * dt;
        bool o = false;
        for (int k = 0; k < 3; k++)
            if (!(b->x[k] >= h->lo[k] - h->margin && b->x[k] <= h->hi[k] + h->margin)) o = true;
        if (o) {
            if (first < 0) first = i;
            out++;
        }
    }
    /* energy */
    h->rep.work_in += W;
    const double scale = h->scale0 + h->rep.work_in;
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
    /* escape */
    h->rep.escaped = out;
    if (out > 0 && !(h->rep.raised & (1u << DVI_HEALTH_ESCAPE))) {
        body_name(w, first, name, sizeof name);
        const double* x = w->bodies[first].x;
        raise_kind(h, DVI_HEALTH_ESCAPE, step,
                   "step %lld (t = %.6g s): %lld bod%s left the region they started in by more than %.3g m; %s is at "
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
    return DVI_OK;
}

/* ---- state ------------------------------------------------------------------- */

/* Little-endian f64/i64 fields, then one message per kind, then an FNV-1a
 * 64. Records written before the chatter kind existed hold five kinds and
 * still load (chatter not raised). */
#define HEALTH_NUMBERS_OF(kinds) (4 + 6 + 1 + 1 + (kinds) + 6)
#define HEALTH_NUMBERS HEALTH_NUMBERS_OF(DVI_HEALTH_KINDS)
#define HEALTH_KINDS_V1 5

static size_t state_size_of(int kinds) { return 8 * (size_t)HEALTH_NUMBERS_OF(kinds) + (size_t)kinds * 256 + 8; }

size_t dvi_health_state_size(void) { return state_size_of(DVI_HEALTH_KINDS); }

bool dvi_health_state_size_valid(size_t size)
{
    return size == state_size_of(DVI_HEALTH_KINDS) || size == state_size_of(HEALTH_KINDS_V1);
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
static uint64_t fnv(const unsigned char* p, size_t n) { return dvi_fnv1a(1469598103934665603u, p, n); }

void dvi_health_save(const world_health* h, unsigned char* out)
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
    v[n++] = 0;
    v[n++] = 0;
    for (int i = 0; i < n; i++) le_put_u64(out + 8 * i, v[i]);
    unsigned char* q = out + 8 * HEALTH_NUMBERS;
    for (int k = 0; k < DVI_HEALTH_KINDS; k++) {
        memset(q + 256 * k, 0, 256);
        memcpy(q + 256 * k, h->rep.first[k], strnlen(h->rep.first[k], 255));
    }
    le_put_u64(q + 256 * DVI_HEALTH_KINDS, fnv(out, dvi_health_state_size() - 8));
}

dvi_status dvi_health_load(world_health* h, const unsigned char* in, size_t size)
{
    const int kinds = size == state_size_of(HEALTH_KINDS_V1) ? HEALTH_KINDS_V1 : DVI_HEALTH_KINDS;
    if (size != state_size_of(kinds) || le_get_u64(in + size - 8) != fnv(in, size - 8)) return dvi_error_set(DVI_ERR_PARSE, "state: the model's health record is corrupt");
    world_health t = *h;
    int n = 0;
    t.e0 = bitsd(le_get_u64(in + 8 * n++));
    t.scale0 = bitsd(le_get_u64(in + 8 * n++));
    t.margin = bitsd(le_get_u64(in + 8 * n++));
    t.rep.work_in = bitsd(le_get_u64(in + 8 * n++));
    for (int k = 0; k < 3; k++) t.lo[k] = bitsd(le_get_u64(in + 8 * n++));
    for (int k = 0; k < 3; k++) t.hi[k] = bitsd(le_get_u64(in + 8 * n++));
    uint64_t raised = le_get_u64(in + 8 * n++);
    if (raised >= (1u << kinds)) return dvi_error_set(DVI_ERR_PARSE, "state: the model's health record is corrupt");
    t.rep.raised = (uint32_t)raised;
    t.rep.escaped = (int64_t)le_get_u64(in + 8 * n++);
    for (int k = 0; k < DVI_HEALTH_KINDS; k++) t.rep.first_step[k] = k < kinds ? (int64_t)le_get_u64(in + 8 * n++) : -1;
    t.rep.energy_scale = bitsd(le_get_u64(in + 8 * n++));
    t.rep.energy_excess = bitsd(le_get_u64(in + 8 * n++));
    t.rep.worst_penetration = bitsd(le_get_u64(in + 8 * n++));
    t.rep.worst_joint = bitsd(le_get_u64(in + 8 * n++));
    const unsigned char* q = in + 8 * HEALTH_NUMBERS_OF(kinds);
    for (int k = 0; k < DVI_HEALTH_KINDS; k++) {
        if (k >= kinds) {
            memset(t.rep.first[k], 0, 256);
            continue;
        }
        if (q[256 * k + 255] != 0) return dvi_error_set(DVI_ERR_PARSE, "state: the model's health record is corrupt");
        memcpy(t.rep.first[k], q + 256 * k, 256);
    }
    *h = t;
    return DVI_OK;
}
