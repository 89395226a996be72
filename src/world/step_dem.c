/* dvicontact — the DEM time step (the penalty model is dem.c; docs/dem.md).
 *
 * Stages, as the DVI step's (step_dvi.c), sharing step_common.c:
 *   collide    geoms, broad and narrow phase (as the DVI step)
 *   assemble   the penalty forces of the overlapping points and of the
 *              terrain samples (dem.c), then v_free = v + h M⁻¹ (f_contact +
 *              f_applied + m g − ω × Jω) (symplectic Euler: forces at the
 *              start of the step)
 *   solve      joints and speed motors: one bilateral-only problem
 *              N γ = −r on v_free (dense Cholesky up to DVI_JOINT_DENSE_ROWS
 *              rows, else the world's solver), exact joints in DEM mode
 *   integrate  v⁺ = v_free + M⁻¹ D γ, x⁺ = x + h v⁺,
 *              q⁺ = normalise(q + h/2 [0, ω⁺] ⊗ q), computed aside, then
 *              the guard: a non-finite state or a surface speed over
 *              dem.max_speed fails the step, leaving the world unchanged
 *   report     commit the poses and velocities, the bodies' contact forces,
 *              the contact history, the step's contacts and the joints'
 *              reactions
 */
#include "dem.h"

#include "math3.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* What the stages of one DEM step hand on to each other. */
typedef struct wld_step_dem_ctx {
    double h;
    wld_dem* d;
    const col_contact_point* pts; /* the collision's points */
    int32_t npts;
    wld_dem_forces_out f;         /* the penalty stage's counts */
    int32_t ndyn;                 /* dynamic bodies */
    int32_t nrows;                /* joint rows */
    double kinetic;               /* J, after the step */
} wld_step_dem_ctx;

/* Stage "solve": the joints' bilateral problem on v_free; leaves D γ per
 * dynamic body in w->dv (zero without joints). */
static dvi_status stage_joints(dvi_world* w, wld_step_dem_ctx* x)
{
    const double h = x->h;
    const int32_t ndyn = x->ndyn;
    const int32_t nrows = wld_step_joint_row_total(w);
    x->nrows = nrows;
    w->stats.bodies = w->body_count;
    w->stats.joint_rows = nrows;
    w->stats.rows = nrows;
    double max_violation = 0.0;
    if (!DVI_RESERVE(w, blocks, nrows + 1) || !DVI_RESERVE(w, r, nrows + 1) || !DVI_RESERVE(w, gamma, nrows + 1) ||
        !DVI_RESERVE(w, compliance, nrows + 1) || !DVI_RESERVE(w, colptr, nrows + 1) ||
        !DVI_RESERVE(w, rowind, 12 * (size_t)nrows + 1) || !DVI_RESERVE(w, values, 12 * (size_t)nrows + 1) ||
        !DVI_RESERVE(w, joint_jb, 6 * (size_t)nrows + 6) || !DVI_RESERVE(w, joint_ja, 6 * (size_t)nrows + 6) ||
        !DVI_RESERVE(w, joint_lever, 3 * (size_t)w->joint_count + 3))
        return wld_error(w, DVI_ERR_NOMEM, "step: out of memory");
    memset(w->dv, 0, 6 * (size_t)ndyn * sizeof(double));
    if (nrows > 0) {
        int32_t nz = 0;
        bool any_compliance = false;
        int32_t row = wld_step_joint_rows(w, h, &nz, &any_compliance, &max_violation);
        w->colptr[row] = nz;
        double rel = INFINITY;
        if (nrows <= DVI_JOINT_DENSE_ROWS && !wld_step_joint_direct(w, nrows, ndyn, &rel))
            return wld_error(w, DVI_ERR_NOMEM, "step: out of memory");
        w->stats.iterations = 0;
        w->stats.residual = rel;
        w->stats.solver_status = DVI_SOLVE_CONVERGED;
        dvi_csc D = {6 * ndyn, nrows, w->colptr, w->rowind, w->values};
        dvi_ccp_problem p = dvi_ccp_problem_empty();
        p.rows = nrows;
        p.block_count = nrows;
        p.blocks = w->blocks;
        p.body_count = ndyn;
        p.D = &D;
        p.inv_mass_rigid = w->inv_mass;
        p.r = w->r;
        p.compliance = any_compliance ? w->compliance : NULL;
        if (!(rel <= 1e-10)) { /* large, or redundant and inconsistent: the world's solver, warm-started */
            dvi_solve_result res;
            dvi_status st = dvi_solver_solve(w->solver, &p, w->gamma, &res);
            if (st < 0) return wld_error(w, st, "step: the joint problem was refused: %s", res.message);
            w->stats.iterations = res.iterations;
            w->stats.residual = res.target_residual;
            w->stats.solver_status = res.status;
        }
        wld_step_joint_impulses(w, nrows); /* D γ per dynamic body */
    }
    w->stats.max_joint_violation = max_violation;
    return DVI_OK;
}

/* Stage "integrate": the new velocities and poses into d->next (the world
 * is not written yet), the kinetic energy, and the guard. */
static dvi_status stage_integrate(dvi_world* w, wld_step_dem_ctx* x)
{
    const double h = x->h;
    wld_dem* d = x->d;
    const dvi_dem_settings* set = &w->def.dem;
    const int32_t nb = w->body_count;
    double kinetic = 0.0;
    for (int32_t i = 0; i < nb; i++) {
        const wld_body* b = &w->bodies[i];
        double* nx = d->next + 13 * (size_t)i; /* x[3], q[4], v[3], ω[3] */
        v3_copy(nx, b->x);
        for (int k = 0; k < 4; k++) nx[3 + k] = b->q[k];
        v3_copy(nx + 7, b->v);
        v3_copy(nx + 10, b->w);
        if (b->type == DVI_BODY_FIXED) continue;
        const double* vf = w->vfree + 6 * (size_t)i;
        if (b->type == DVI_BODY_DYNAMIC) {
            double mdg[6];
            minv10_apply(w->inv_mass + 10 * (size_t)w->dyn[i], w->dv + 6 * (size_t)w->dyn[i], mdg);
            for (int r = 0; r < 6; r++) nx[7 + r] = vf[r] + mdg[r];
        }
        v3_axpy(nx, h, nx + 7);
        double wq[4] = {0.0, nx[10], nx[11], nx[12]}, dq[4];
        q_mul(dq, wq, b->q);
        for (int k = 0; k < 4; k++) nx[3 + k] += 0.5 * h * dq[k];
        q_normalize(nx + 3);
        if (b->type == DVI_BODY_DYNAMIC && !wld_body_isotropic(b)) { /* the end velocity (step_dvi.c) */
            double ws[3];
            v3_copy(ws, nx + 10);
            wld_step_end_angular_velocity(b, b->q, nx + 3, vf + 3, ws, h, nx + 10);
        }
        double ke = 0.0;
        if (b->type == DVI_BODY_DYNAMIC) {
            double R[9], Iw[9], L[3];
            q_to_m3(R, wld_body_isotropic(b) ? b->q : nx + 3); /* the end inertia (a sphere's is any) */
            m3_rotate_tensor(Iw, R, b->inertia);
            m3_mulv(L, Iw, nx + 10);
            ke = 0.5 * b->mass * v3_dot(nx + 7, nx + 7) + 0.5 * v3_dot(nx + 10, L);
            kinetic += ke;
        }
        bool finite = true;
        for (int k = 0; k < 13; k++) finite = finite && isfinite(nx[k]);
        double speed = v3_norm(nx + 7), spin = v3_norm(nx + 10);
        double surface = speed + spin * b->bounding_radius;
        if (!finite || !(surface <= set->max_speed)) {
            double kmax, hs = wld_dem_stable_step(d, x->f.nwork, i, &kmax);
            char name[128];
            return wld_error(w, DVI_ERR_NUMERIC,
                                   "step %llu (t = %.6g s, h = %g s): DEM blow-up at %s: %s (surface speed %.3g "
                                   "m/s = %.3g m/s + %.3g rad/s x %.3g m, against max_speed %g m/s; kinetic energy %.3g "
                                   "J); stiffest contact %.3g N/m needs h < ~%.3g s; world unchanged",
                                   (unsigned long long)(d->steps + 1), w->time, h,
                                   wld_body_name(w, (int32_t)i, name, sizeof name), finite ? "speed over the bound" : "non-finite state", surface, speed, spin,
                                   b->bounding_radius, set->max_speed, ke, kmax, hs);
        }
    }
    if (!isfinite(kinetic))
        return wld_error(w, DVI_ERR_NUMERIC, "step %llu (t = %.6g s): DEM kinetic energy is not finite",
                               (unsigned long long)(d->steps + 1), w->time);
    /* the history must take the new entries without failing after the commit */
    if (wld_dem_history_reserve(&d->history, d->history.count + x->f.new_entries) != DVI_OK)
        return wld_error(w, DVI_ERR_NOMEM, "step: out of memory");
    x->kinetic = kinetic;
    return DVI_OK;
}

/* Stage "report" (the commit; nothing here can fail): bodies, their contact
 * forces, the contact history, the step's contacts, the joints' reactions. */
static void stage_report(dvi_world* w, const wld_step_dem_ctx* x)
{
    wld_dem* d = x->d;
    const int32_t nb = w->body_count, nwork = x->f.nwork, ncon = x->f.ncon;
    for (int32_t i = 0; i < nb; i++) {
        wld_body* b = &w->bodies[i];
        const double* nx = d->next + 13 * (size_t)i;
        if (b->type != DVI_BODY_FIXED) {
            v3_copy(b->x, nx);
            for (int k = 0; k < 4; k++) b->q[k] = nx[3 + k];
            v3_copy(b->v, nx + 7);
            v3_copy(b->w, nx + 10);
        }
        v3_copy(b->contact_force, d->acc + 6 * (size_t)i);
        v3_copy(b->contact_torque, d->acc + 6 * (size_t)i + 3);
    }
    const uint64_t stamp = ++d->steps;
    for (int32_t k = 0; k < nwork; k++) {
        const wld_dem_work* wk = &d->work[k];
        if (wk->entry == -2) continue;
        int32_t e = wk->entry;
        if (e < 0) {
            e = wld_dem_history_find(&d->history, &wk->key);
            if (e < 0 && wld_dem_history_insert(&d->history, &wk->key, &e) != DVI_OK) e = -1; /* reserved: cannot fail */
        }
        if (e < 0) continue;
        wld_dem_entry* en = &d->history.entries[e];
        if (en->stamp == stamp) continue; /* a second point with the same key: the first one's state is kept */
        en->stamp = stamp;
        v3_copy(en->u, wk->u);
        v3_copy(en->roll, wk->roll);
        v3_copy(en->ft, wk->ft);
        en->reversals = wk->reversals;
        en->near_limit = wk->near_limit;
    }
    wld_dem_history_sweep(&d->history, stamp);
    if (ncon > 0) memcpy(w->contacts, d->recs, (size_t)ncon * sizeof *d->recs);
    for (int32_t c = 0; c < ncon; c++) { /* the arrays the DVI step fills (world_internal.h); the tangents are not kept */
        const double* geo = d->geo + 9 * (size_t)c;
        for (int k = 0; k < 3; k++) w->fr_frame[9 * (size_t)c + k] = (float)geo[k];
        for (int k = 0; k < 6; k++) w->fr_arm[6 * (size_t)c + k] = (float)geo[3 + k];
        w->fr_ell[c] = 1.0;
    }
    w->contact_count = ncon;
    wld_step_joint_reactions(w, x->h);
}

static dvi_status step(dvi_world* w, wld_dem* d, double h)
{
    wld_step_dem_ctx x;
    memset(&x, 0, sizeof x);
    x.h = h;
    x.d = d;
    memset(&w->stats, 0, sizeof w->stats);
    w->stats.worst_joint = -1;
    w->stats.chattering_contact = -1;
    w->stats.ccp_hover_contact = -1;
    w->stats.coulomb_contact = -1;
    double t[6];
    t[0] = wld_step_clock();
    dvi_status st = wld_dem_prepare_step(w, d);
    if (st == DVI_OK) st = wld_step_collide(w, &x.pts, &x.npts);
    if (st != DVI_OK) return st;
    t[1] = wld_step_clock();
    st = wld_dem_forces(w, d, h, x.pts, x.npts, &x.f);
    if (st == DVI_OK) st = wld_step_free_velocities(w, h, d->acc, &x.ndyn);
    if (st != DVI_OK) return st;
    t[2] = wld_step_clock();
    st = stage_joints(w, &x);
    if (st != DVI_OK) return st;
    t[3] = wld_step_clock();
    st = stage_integrate(w, &x);
    if (st != DVI_OK) return st;
    t[4] = wld_step_clock();
    stage_report(w, &x);
    w->time += h;
    t[5] = wld_step_clock();
    w->stats.contacts = x.f.ncon;
    w->stats.max_penetration = x.f.max_overlap;
    w->stats.max_overlap = x.f.max_overlap;
    w->stats.contact_history = d->history.count;
    w->stats.chattering_contacts = x.f.chattering;
    w->stats.chattering_contact = x.f.chatter_contact;
    w->stats.kinetic_energy = x.kinetic;
    wld_step_stage_times(w, t);
    return x.nrows == 0 || w->stats.solver_status == DVI_SOLVE_CONVERGED ? DVI_OK : DVI_NOT_CONVERGED;
}

dvi_status wld_step_dem(dvi_world* w, double h)
{
    wld_dem* d = wld_dem_get(w);
    if (!d) return wld_error(w, DVI_ERR_NOMEM, "step: out of memory");
    const dvi_step_stats before = w->stats;
    dvi_status st = step(w, d, h);
    if (st < 0) w->stats = before; /* a failed step leaves the world as it was */
    return st;
}
