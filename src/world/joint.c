/* dvicontact — joint and motor rows.
 *
 * Each joint contributes bilateral rows u = J_A v_A + J_B v_B + b = 0 to the
 * step's CCP, with v = (linear, angular) velocity in the world frame and
 * b = clamp(Ψ/h, ±joint_recovery_speed) the drift stabilisation (Ψ: the
 * position-level error; the documented recovery speed caps how fast drift is
 * removed). Anchors p_A = x_A + R_A l_A, p_B = x_B + R_B l_B; ρ = p − x.
 *
 *   point coincidence (spherical, revolute, fixed), per world axis e:
 *       Ψ = e·(p_B − p_A),  J_A = −[e, ρ_A × e],  J_B = [e, ρ_B × e]
 *   axis alignment (revolute), a = R_A a_A, for p, q ⟂ the axis fixed in B:
 *       Ψ = a·p,  J_A = [0, a × p],  J_B = [0, p × a]
 *   angular lock (fixed, prismatic): rotation error of q_A* q_B against its
 *       initial value, as a world vector θ; per world axis e:
 *       Ψ = e·θ,  J_A = [0, −e],  J_B = [0, e]
 *   sliding along the axis (prismatic), p ⟂ a fixed in A, d = p_B − p_A:
 *       Ψ = p·d,  J_A = [−p, p × d − ρ_A × p],  J_B = [p, ρ_B × p]
 *   distance, n = d/|d|:  Ψ = |d| − L,  J_A = −[n, ρ_A × n],  J_B = [n, ρ_B × n]
 *   speed motors: rotation J_A = [0, −a], J_B = [0, a]; linear as sliding with
 *       p = a; b = −s(t), s(t) = speed · min(1, t / ramp) at the step's end.
 *       A damping d > 0 adds the compliance 1/(d h) to the row: the row then
 *       reads u_end + γ/(d h) = 0, i.e. the motor's torque γ/h equals
 *       d·(s − ω_end) with ω_end the relative speed at the step's end (a DC
 *       motor's linear torque–speed law, backward Euler).
 * A torque motor adds no row: step_common.c applies ±τ a to the bodies.
 */
#include "world_internal.h"

#include "math3.h"

#include <string.h>

static void body_pose(const wld_body* B, double R[9], double x[3], double q[4])
{
    if (B) {
        q_to_m3(R, B->q);
        v3_copy(x, B->x);
        for (int k = 0; k < 4; k++) q[k] = B->q[k];
    } else { /* the world */
        memset(R, 0, 9 * sizeof(double));
        R[0] = R[4] = R[8] = 1.0;
        memset(x, 0, 3 * sizeof(double));
        q[0] = 1.0;
        q[1] = q[2] = q[3] = 0.0;
    }
}

/* Two unit vectors perpendicular to the unit a, and to each other. */
static void perpendiculars(const double* a, double* p, double* q)
{
    basis_from_normal(a, p, q);
}

dvi_status wld_joint_init(wld_joint* j, const dvi_joint_def* def, const wld_body* A, const wld_body* B)
{
    double RA[9], RB[9], xA[3], xB[3], qA[4], qB[4], d[3];
    body_pose(A, RA, xA, qA);
    body_pose(B, RB, xB, qB);
    j->type = def->type;
    /* anchors in body frames: l = Rᵀ (p − x) */
    v3_sub(d, def->anchor, xA);
    m3_tmulv(j->la, RA, d);
    const double* pb_world = def->type == DVI_JOINT_DISTANCE ? def->anchor_b : def->anchor;
    v3_sub(d, pb_world, xB);
    m3_tmulv(j->lb, RB, d);
    if (def->type == DVI_JOINT_DISTANCE) {
        v3_sub(d, def->anchor_b, def->anchor);
        j->length = v3_norm(d);
        if (!(j->length > 1e-12)) return DVI_ERR_INVALID_ARG;
    }
    double axis[3] = {def->axis[0], def->axis[1], def->axis[2]};
    double an = v3_norm(axis);
    if (an > 0.0) v3_scale(axis, 1.0 / an, axis);
    else v3_set(axis, 0, 0, 1);
    double p[3], q[3];
    perpendiculars(axis, p, q);
    m3_tmulv(j->axa, RA, axis);
    m3_tmulv(j->pa, RA, p);
    m3_tmulv(j->qa, RA, q);
    m3_tmulv(j->pb, RB, p);
    m3_tmulv(j->qb, RB, q);
    double qAc[4];
    q_conj(qAc, qA);
    q_mul(j->q_rel0, qAc, qB);
    j->motor = def->motor;
    j->speed = def->motor_speed;
    j->ramp = def->motor_ramp_time;
    j->torque = def->motor_torque;
    j->damping = def->motor_damping;
    return DVI_OK;
}

int wld_joint_row_count(const wld_joint* j)
{
    static const int base[] = {0, 3, 5, 5, 6, 1}; /* by dvi_joint_type */
    int n = j->type >= DVI_JOINT_SPHERICAL && j->type <= DVI_JOINT_DISTANCE ? base[j->type] : 0;
    return n + (j->motor == DVI_MOTOR_ROTATION_SPEED || j->motor == DVI_MOTOR_LINEAR_SPEED ? 1 : 0);
}

static double clamp_bias(double psi, double h, double vmax)
{
    double b = psi / h;
    return b > vmax ? vmax : b < -vmax ? -vmax : b;
}

static void set_row(wld_joint_row* r, const double* la, const double* aa, const double* lb, const double* ab,
                    double bias, double violation)
{
    for (int k = 0; k < 3; k++) {
        r->ja[k] = la ? la[k] : 0.0;
        r->ja[3 + k] = aa ? aa[k] : 0.0;
        r->jb[k] = lb ? lb[k] : 0.0;
        r->jb[3 + k] = ab ? ab[k] : 0.0;
    }
    r->bias = bias;
    r->violation = violation;
    r->compliance = 0.0;
}

/* Rows making p_B and p_A coincide along direction e (unit). */
static void point_row(wld_joint_row* r, const double* e, const double* rhoA, const double* rhoB, const double* dp,
                      double h, double vmax)
{
    double na[3], ca[3], cb[3];
    v3_scale(na, -1.0, e);
    v3_cross(ca, rhoA, e);
    v3_scale(ca, -1.0, ca);
    v3_cross(cb, rhoB, e);
    double psi = v3_dot(e, dp);
    set_row(r, na, ca, e, cb, clamp_bias(psi, h, vmax), psi);
}

int wld_joint_build_rows(const wld_joint* j, const wld_body* A, const wld_body* B, double t_end, double h,
                         double vmax, wld_joint_row* rows)
{
    double RA[9], RB[9], xA[3], xB[3], qA[4], qB[4];
    body_pose(A, RA, xA, qA);
    body_pose(B, RB, xB, qB);
    double rhoA[3], rhoB[3], pA[3], pB[3], dp[3];
    m3_mulv(rhoA, RA, j->la);
    m3_mulv(rhoB, RB, j->lb);
    v3_add(pA, xA, rhoA);
    v3_add(pB, xB, rhoB);
    v3_sub(dp, pB, pA);
    static const double E[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
    double a[3];
    m3_mulv(a, RA, j->axa);
    int n = 0;

    if (j->type == DVI_JOINT_SPHERICAL || j->type == DVI_JOINT_REVOLUTE || j->type == DVI_JOINT_FIXED)
        for (int k = 0; k < 3; k++) point_row(&rows[n++], E[k], rhoA, rhoB, dp, h, vmax);

    if (j->type == DVI_JOINT_REVOLUTE) {
        const double* perp[2] = {j->pb, j->qb};
        for (int k = 0; k < 2; k++) {
            double pw[3], axp[3], pxa[3];
            m3_mulv(pw, RB, perp[k]);
            v3_cross(axp, a, pw);
            v3_cross(pxa, pw, a);
            double psi = v3_dot(a, pw);
            set_row(&rows[n++], NULL, axp, NULL, pxa, clamp_bias(psi, h, vmax), psi);
        }
    }

    if (j->type == DVI_JOINT_FIXED || j->type == DVI_JOINT_PRISMATIC) {
        /* rotation error θ (world) of q_A* q_B against q_rel0 */
        double qAc[4], qrel[4], q0c[4], qe[4], th_local[3], th[3];
        q_conj(qAc, qA);
        q_mul(qrel, qAc, qB);
        q_conj(q0c, j->q_rel0);
        q_mul(qe, qrel, q0c);
        double s = qe[0] < 0.0 ? -2.0 : 2.0;
        v3_set(th_local, s * qe[1], s * qe[2], s * qe[3]);
        m3_mulv(th, RA, th_local);
        for (int k = 0; k < 3; k++) {
            double ne[3];
            v3_scale(ne, -1.0, E[k]);
            double psi = th[k];
            set_row(&rows[n++], NULL, ne, NULL, E[k], clamp_bias(psi, h, vmax), psi);
        }
    }

    if (j->type == DVI_JOINT_PRISMATIC) {
        const double* perp[2] = {j->pa, j->qa};
        for (int k = 0; k < 2; k++) {
            double p[3], np[3], pxd[3], rxp[3], aa[3], ab[3];
            m3_mulv(p, RA, perp[k]);
            v3_scale(np, -1.0, p);
            v3_cross(pxd, p, dp);
            v3_cross(rxp, rhoA, p);
            v3_sub(aa, pxd, rxp);
            v3_cross(ab, rhoB, p);
            double psi = v3_dot(p, dp);
            set_row(&rows[n++], np, aa, p, ab, clamp_bias(psi, h, vmax), psi);
        }
    }

    if (j->type == DVI_JOINT_DISTANCE) {
        double len = v3_norm(dp), e[3];
        if (len > 1e-15) v3_scale(e, 1.0 / len, dp);
        else v3_set(e, 0, 0, 1);
        double na[3], ca[3], cb[3];
        v3_scale(na, -1.0, e);
        v3_cross(ca, rhoA, e);
        v3_scale(ca, -1.0, ca);
        v3_cross(cb, rhoB, e);
        double psi = len - j->length;
        set_row(&rows[n++], na, ca, e, cb, clamp_bias(psi, h, vmax), psi);
    }

    if (j->motor == DVI_MOTOR_ROTATION_SPEED || j->motor == DVI_MOTOR_LINEAR_SPEED) {
        double s = j->speed * (j->ramp > 0.0 && t_end < j->ramp ? t_end / j->ramp : 1.0);
        if (j->motor == DVI_MOTOR_ROTATION_SPEED) {
            double na[3];
            v3_scale(na, -1.0, a);
            set_row(&rows[n], NULL, na, NULL, a, -s, 0.0);
        } else {
            double na[3], axd[3], rxa[3], aa[3], ab[3];
            v3_scale(na, -1.0, a);
            v3_cross(axd, a, dp);
            v3_cross(rxa, rhoA, a);
            v3_sub(aa, axd, rxa);
            v3_cross(ab, rhoB, a);
            set_row(&rows[n], na, aa, a, ab, -s, 0.0);
        }
        if (j->damping > 0.0) rows[n].compliance = 1.0 / (j->damping * h);
        n++;
    }
    return n;
}
