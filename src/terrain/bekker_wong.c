/* dvicontact — the Bekker–Wong wheel (docs/terrain.md, "Bekker–Wong
 * wheel"; <dvi/terrain.h>): Bekker's pressure–sinkage law over the contact
 * arc of a rigid wheel with Wong and Reece's stress distribution, Janosi and
 * Hanamoto's shear, and the force and torque integrals of Kruuse 2023
 * (eqs 2.3–2.14, 3.4–3.7), evaluated by Gauss–Legendre quadrature on each
 * side of the maximum-stress angle. The world's force element finds every
 * wheel's sinkage below a plane or a height field, its slip and slip angle,
 * and applies the forces at the wheel's centre with the torque about its
 * axle. */
#include "dvi/terrain.h"

#include "bytes_le.h"
#include "error.h"
#include "math3.h"
#include "terrain_internal.h"
#include "world_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define HALF_PI 1.57079632679489661923

/* Gauss–Legendre nodes and weights on [−1, 1]. */
static const double GAUSS[DVI_BW_QUADRATURE_POINTS][2] = {
    {-0.98156063424671924, 0.047175336386511835}, {-0.9041172563704748, 0.10693932599531857},
    {-0.76990267419430469, 0.16007832854334633},  {-0.58731795428661748, 0.20316742672306584},
    {-0.36783149899818018, 0.23349253653835478},  {-0.12523340851146891, 0.24914704581340288},
    {0.12523340851146894, 0.24914704581340288},   {0.36783149899818018, 0.23349253653835478},
    {0.58731795428661748, 0.20316742672306584},   {0.76990267419430469, 0.16007832854334633},
    {0.9041172563704748, 0.10693932599531857},    {0.98156063424671924, 0.047175336386511835},
};

/* The presets' soils (terrain.h), a row each: the pressure-sinkage and
 * shear-strength parameters, then the shear moduli and the stress angles. */
static const dvi_bw_soil soil_ishigami2007 = {
    .k_c = 1.37e3, .k_phi = 814e3, .n0 = 1.0, .n1 = 0.0, .cohesion = 0.8e3, .friction_angle = 37.2 * HALF_PI / 90.0,
    .K_x0 = 0.036, .K_x1 = 0.043, .K_y0 = 0.013, .K_y1 = 0.020, .a1 = 0.4, .a2 = 0.15, .lambda = 1.0,
};
static const dvi_bw_soil soil_ding2011 = {
    .k_c = 15.6e3, .k_phi = 2407.4e3, .n0 = 1.1, .n1 = 0.0, .cohesion = 0.25e3, .friction_angle = 31.9 * HALF_PI / 90.0,
    .K_x0 = 0.0114, .K_y0 = 0.0114, .a1 = 0.4, .a2 = 0.15, .lambda = 0.0,
};

dvi_bw_soil dvi_bw_soil_ishigami2007(void)
{
    return soil_ishigami2007;
}

dvi_bw_soil dvi_bw_soil_ding2011(void)
{
    return soil_ding2011;
}

/* ---- the integrals ---------------------------------------------------------- */

static dvi_status check_soil(const dvi_bw_soil* s, const char* where)
{
#define FIELD(cond, what)                                                                                           \
    if (!(cond)) return base_error_setf(DVI_ERR_INVALID_ARG, "%s: soil.%s", where, what)
    FIELD(s->k_c >= 0.0 && isfinite(s->k_c), "k_c must be >= 0");
    FIELD(s->k_phi >= 0.0 && isfinite(s->k_phi) && s->k_c + s->k_phi > 0.0, "k_phi must be >= 0, k_c + k_phi > 0");
    FIELD(s->n0 > 0.0 && s->n0 <= 4.0, "n0 must be in (0, 4]");
    FIELD(s->n1 >= 0.0 && s->n0 + s->n1 <= 4.0, "n1 must be >= 0 with n0 + n1 <= 4");
    FIELD(s->cohesion >= 0.0 && isfinite(s->cohesion), "cohesion must be >= 0");
    FIELD(s->friction_angle >= 0.0 && s->friction_angle < HALF_PI, "friction_angle must be in [0, pi/2)");
    FIELD(s->K_x0 > 0.0 && isfinite(s->K_x0), "K_x0 must be > 0");
    FIELD(s->K_x1 >= 0.0 && isfinite(s->K_x1), "K_x1 must be >= 0");
    FIELD(s->K_y0 > 0.0 && isfinite(s->K_y0), "K_y0 must be > 0");
    FIELD(s->K_y1 >= 0.0 && isfinite(s->K_y1), "K_y1 must be >= 0");
    FIELD(isfinite(s->a1) && isfinite(s->a2), "a1 and a2 must be finite");
    FIELD(s->lambda >= 0.0 && s->lambda <= 2.0, "lambda must be in [0, 2]");
#undef FIELD
    return DVI_OK;
}

static dvi_status check_wheel(double r, double b, const char* where)
{
    if (!(r > 0.0 && isfinite(r)))
        return base_error_setf(DVI_ERR_INVALID_ARG, "%s: wheel radius must be > 0 (got %g)", where, r);
    if (!(b > 0.0 && isfinite(b)))
        return base_error_setf(DVI_ERR_INVALID_ARG, "%s: wheel width must be > 0 (got %g)", where, b);
    return DVI_OK;
}

/* Janosi and Hanamoto's shear stress at displacement j, odd in j. */
static inline double janosi(double tau_max, double j, double K)
{
    const double t = tau_max * -expm1(-fabs(j) / K);
    return j < 0.0 ? -t : t;
}

/* How the forces change with the slip and the slip angle through the shear
 * displacements (the shift of θ_m and n with s left out): what the wheel's
 * slip relaxation needs (wheel_apply). */
typedef struct bw_slopes {
    double dfx_ds, dt_ds, dfy_dbeta;
} bw_slopes;

/* The forces at entry angle theta1 (in (0, π/2]); out->sinkage is r(1 − cos θ1).
 * slopes (may be NULL): ∂f_x/∂s, ∂T/∂s and ∂f_y/∂β. */
static void integrate(const dvi_bw_soil* S, double r, double b, double theta1, double s, double beta,
                      dvi_bw_forces* out, bw_slopes* slopes)
{
    const double z = r * (1.0 - cos(theta1));
    const double n = S->n0 + S->n1 * fabs(s);
    const double k = S->k_c / b + S->k_phi, tanphi = tan(S->friction_angle);
    const double c_rear = 1.0 - S->lambda * z / r;
    const double theta2 = -acos(c_rear < -1.0 ? -1.0 : c_rear > 1.0 ? 1.0 : c_rear);
    double theta_m = (S->a1 + S->a2 * s) * theta1;
    if (theta_m > theta1) theta_m = theta1;
    if (theta_m < theta2) theta_m = theta2;
    const double tb = tan(beta), ab = fabs(beta);
    const double Kx = S->K_x0 + S->K_x1 * ab, Ky = S->K_y0 + S->K_y1 * ab;
    const double sin1 = sin(theta1);
    const bool linear = n == 1.0;
    const double djy = r * (1.0 - s) / (cos(beta) * cos(beta)); /* ∂j_y/∂β per unit of θ1 − θ */
    double iz = 0.0, ix = 0.0, iy = 0.0, it = 0.0, dx = 0.0, dt = 0.0, dy = 0.0;
    for (int side = 0; side < 2; side++) {
        /* side 0: [θ_m, θ1], the front; side 1: [θ2, θ_m], the rear */
        const double lo = side ? theta2 : theta_m, hi = side ? theta_m : theta1;
        const double half = 0.5 * (hi - lo), mid = 0.5 * (hi + lo);
        if (!(half > 0.0)) continue;
        for (int q = 0; q < DVI_BW_QUADRATURE_POINTS; q++) {
            const double th = mid + half * GAUSS[q][0], w = half * GAUSS[q][1];
            /* the equivalent front angle of eq 2.5: θ itself in front, the
             * rear arc mapped onto [θ_m, θ1] behind */
            const double te = side ? theta1 - (th - theta2) / (theta_m - theta2) * (theta1 - theta_m) : th;
            /* h = r (cos θe − cos θ1), without cancellation near θ1 */
            double h = 2.0 * r * sin(0.5 * (theta1 + te)) * sin(0.5 * (theta1 - te));
            if (h < 0.0) h = 0.0;
            const double sigma = linear ? k * h : k * pow(h, n);
            const double tau_max = S->cohesion + sigma * tanphi;
            const double st = sin(th), ct = cos(th);
            const double jx = r * ((theta1 - th) - (1.0 - s) * (sin1 - st));
            const double jy = r * (1.0 - s) * (theta1 - th) * tb;
            const double tx = janosi(tau_max, jx, Kx), ty = janosi(tau_max, jy, Ky);
            iz += w * (sigma * ct + tx * st);
            ix += w * (tx * ct - sigma * st);
            iy += w * ty;
            it += w * tx;
            if (slopes) { /* dτ/dj = τ_max e^(−|j|/K)/K, ∂j_x/∂s = r(sin θ1 − sin θ) */
                const double gx = tau_max * exp(-fabs(jx) / Kx) / Kx * r * (sin1 - st);
                dx += w * gx * ct;
                dt += w * gx;
                dy += w * tau_max * exp(-fabs(jy) / Ky) / Ky * djy * (theta1 - th);
            }
        }
    }
    if (slopes) {
        slopes->dfx_ds = b * r * dx;
        slopes->dt_ds = b * r * r * dt;
        slopes->dfy_dbeta = b * r * dy;
    }
    out->normal = b * r * iz;
    out->drawbar_pull = b * r * ix;
    out->lateral = b * r * iy;
    out->torque = b * r * r * it;
    out->sinkage = z;
    out->theta1 = theta1;
    out->theta2 = theta2;
    out->theta_m = theta_m;
    out->slip = s;
    out->slip_angle = beta;
    out->exponent = n;
}

static dvi_status check_args(const dvi_bw_soil* soil, double r, double b, double slip, double slip_angle,
                             const void* out, const char* where)
{
    if (!soil || !out) return base_error_setf(DVI_ERR_INVALID_ARG, "%s: soil or out is NULL", where);
    dvi_status st = check_soil(soil, where);
    if (st == DVI_OK) st = check_wheel(r, b, where);
    if (st != DVI_OK) return st;
    if (!(slip >= -1.0 && slip <= 1.0))
        return base_error_setf(DVI_ERR_INVALID_ARG, "%s: slip must be in [-1, 1] (got %g)", where, slip);
    if (!(fabs(slip_angle) < HALF_PI))
        return base_error_setf(DVI_ERR_INVALID_ARG, "%s: slip angle must be in (-pi/2, pi/2) (got %g)", where,
                              slip_angle);
    return DVI_OK;
}

dvi_status dvi_bw_forces_at(const dvi_bw_soil* soil, double r, double b, double sinkage, double slip,
                            double slip_angle, dvi_bw_forces* out)
{
    dvi_status st = check_args(soil, r, b, slip, slip_angle, out, "dvi_bw_forces_at");
    if (st != DVI_OK) return st;
    if (!(sinkage >= 0.0 && sinkage <= r))
        return base_error_setf(DVI_ERR_INVALID_ARG, "dvi_bw_forces_at: sinkage must be in [0, r = %g] (got %g)", r,
                              sinkage);
    memset(out, 0, sizeof *out);
    if (sinkage == 0.0) {
        out->slip = slip;
        out->slip_angle = slip_angle;
        out->exponent = soil->n0 + soil->n1 * fabs(slip);
        return DVI_OK;
    }
    integrate(soil, r, b, acos(1.0 - sinkage / r), slip, slip_angle, out, NULL);
    return DVI_OK;
}

dvi_status dvi_bw_static(const dvi_bw_soil* soil, double r, double b, double load, double slip, double slip_angle,
                         dvi_bw_forces* out)
{
    dvi_status st = check_args(soil, r, b, slip, slip_angle, out, "dvi_bw_static");
    if (st != DVI_OK) return st;
    if (!(load > 0.0 && isfinite(load)))
        return base_error_setf(DVI_ERR_INVALID_ARG, "dvi_bw_static: load must be > 0 (got %g)", load);
    /* f(θ1) = f_z(θ1) − W: negative at θ1 → 0, positive at the bracket's top */
    double lo = 0.0, hi = HALF_PI, flo = -load;
    integrate(soil, r, b, hi, slip, slip_angle, out, NULL);
    double fhi = out->normal - load;
    if (!(fhi > 0.0))
        return base_error_setf(DVI_ERR_INVALID_ARG,
                              "dvi_bw_static: the soil carries at most %.6g N at sinkage r = %g m, less than the "
                              "load %g N",
                              out->normal, r, load);
    /* Illinois (regula falsi that halves the stale end's value), bracketed */
    int stale = 0;
    for (int it = 0; it < 200 && hi - lo > 1e-12; it++) {
        double x = hi - fhi * (hi - lo) / (fhi - flo);
        if (!(x > lo && x < hi)) x = 0.5 * (lo + hi);
        integrate(soil, r, b, x, slip, slip_angle, out, NULL);
        const double f = out->normal - load;
        if (f == 0.0) return DVI_OK;
        base_illinois_step(x, f, &lo, &hi, &flo, &fhi, &stale);
    }
    integrate(soil, r, b, 0.5 * (lo + hi), slip, slip_angle, out, NULL);
    return DVI_OK;
}

/* ---- the force element -------------------------------------------------------- */

typedef struct bw_wheel {
    dvi_body_id body;
    double axis_body[3];   /* the cylinder's axis in the body frame */
    double centre_body[3]; /* its centre in the body frame */
    double radius, width;
    dvi_bw_forces last;
    double force[3];       /* the force applied in the last step, world frame */
    /* the slip relaxation (state, saved): the slip and slip angle the law
     * saw in the last step and their rates h·λ for this one; valid when
     * the wheel was in contact, driving in direction dir (±1) */
    double slip, slip_angle, rate_slip, rate_angle;
    int8_t dir;
    uint8_t valid;
} bw_wheel;

typedef struct bw_element {
    dvi_bw_def def;
    bw_wheel* wheels;
} bw_element;

static void element_destroy(void* self)
{
    bw_element* e = self;
    if (!e) return;
    free(e->wheels);
    free(e);
}

/* The ground below world point x: a point p on it and its unit normal n.
 * Heights are interpolated bilinearly, the normal from the same bilinear
 * patch's gradient. false when x lies over no part of the height field. */
static bool ground_at(const bw_element* e, dvi_world* w, const double* x, double* p, double* n)
{
    const dvi_bw_def* d = &e->def;
    if (!d->ground_set) {
        v3_copy(n, d->plane_normal);
        v3_set(p, 0.0, 0.0, d->plane_height);
        return true;
    }
    dvi_shape_info si;
    double g[3], qg[4], Rg[9];
    if (dvi_body_get_shape(w, d->ground_body, d->ground_shape, &si) != DVI_OK ||
        dvi_body_get_position(w, d->ground_body, g) != DVI_OK ||
        dvi_body_get_orientation(w, d->ground_body, qg) != DVI_OK)
        return false;
    q_to_m3(Rg, qg);
    /* x in the shape frame: R_s^T (R_g^T (x − g) − o) */
    double t[3], u[3], xl[3];
    v3_sub(t, x, g);
    m3_tmulv(u, Rg, t);
    v3_sub(u, u, si.offset_position);
    m3_tmulv(xl, si.offset_rotation, u);
    const double fx = xl[0] / si.dx, fy = xl[1] / si.dy;
    if (!(fx >= 0.0 && fy >= 0.0 && fx <= si.nx - 1 && fy <= si.ny - 1)) return false;
    int32_t i = (int32_t)fx, j = (int32_t)fy;
    if (i > si.nx - 2) i = si.nx - 2;
    if (j > si.ny - 2) j = si.ny - 2;
    const double a = fx - i, c = fy - j;
    const double* H = si.heights;
    const double h00 = H[(size_t)j * si.nx + i], h10 = H[(size_t)j * si.nx + i + 1];
    const double h01 = H[(size_t)(j + 1) * si.nx + i], h11 = H[(size_t)(j + 1) * si.nx + i + 1];
    const double hgt = (1 - a) * (1 - c) * h00 + a * (1 - c) * h10 + (1 - a) * c * h01 + a * c * h11;
    const double hx = ((1 - c) * (h10 - h00) + c * (h11 - h01)) / si.dx;
    const double hy = ((1 - a) * (h01 - h00) + a * (h11 - h10)) / si.dy;
    double nl[3] = {-hx, -hy, 1.0}, pl[3] = {xl[0], xl[1], hgt};
    v3_scale(nl, 1.0 / v3_norm(nl), nl);
    m3_mulv(u, si.offset_rotation, nl);
    m3_mulv(n, Rg, u);
    m3_mulv(u, si.offset_rotation, pl);
    v3_add(u, u, si.offset_position);
    m3_mulv(p, Rg, u);
    v3_add(p, p, g);
    return true;
}

static dvi_status wheel_apply(bw_element* e, dvi_world* w, bw_wheel* wh, double h)
{
    const dvi_bw_def* d = &e->def;
    double xc[3], q[4], v[3], om[3], R[9];
    dvi_body_get_position(w, wh->body, xc);
    dvi_body_get_orientation(w, wh->body, q);
    dvi_body_get_velocity(w, wh->body, v);
    dvi_body_get_angular_velocity(w, wh->body, om);
    q_to_m3(R, q);
    double a[3], arm[3], c[3];
    m3_mulv(a, R, wh->axis_body);
    m3_mulv(arm, R, wh->centre_body);
    v3_add(c, xc, arm);
    memset(&wh->last, 0, sizeof wh->last);
    memset(wh->force, 0, sizeof wh->force);
    const uint8_t was_valid = wh->valid;
    wh->valid = 0;
    double p[3], n[3];
    if (!ground_at(e, w, c, p, n)) {
        char name[64];
        return base_error_setf(DVI_ERR_INVALID_ARG, "wheel %s is over no part of the ground's height field",
                              wld_body_name(w, wld_body_index(w, wh->body), name, sizeof name));
    }
    /* forward e_x = a × n; the lowest point of the rim is r along −(n − (n·a) a)/|…| */
    double ex[3], ey[3], np[3];
    v3_cross(ex, a, n);
    const double sin_tilt = v3_norm(ex);
    if (!(sin_tilt > 1e-2)) return DVI_OK; /* the axle along the normal: the wheel lies on its face */
    v3_scale(ex, 1.0 / sin_tilt, ex);
    v3_add_scaled(np, n, -v3_dot(n, a), a);
    const double r = wh->radius, b = wh->width;
    double pc[3];
    v3_sub(pc, p, c);
    const double z = v3_dot(pc, n) + r * v3_norm(np);
    if (!(z > 0.0)) return DVI_OK;
    /* velocities of the wheel's centre */
    double vc[3];
    v3_cross(vc, om, arm);
    v3_add(vc, vc, v);
    double vx = v3_dot(vc, ex), rw = r * v3_dot(om, a);
    /* the direction of travel: the wheel's spin and its forward speed together */
    const int8_t dir = rw + vx < 0.0 ? -1 : 1;
    if (dir < 0) {
        v3_scale(ex, -1.0, ex);
        v3_scale(a, -1.0, a);
        vx = -vx;
        rw = -rw;
    }
    v3_cross(ey, n, ex);
    const double vy = v3_dot(vc, ey), vreg = d->regularisation_speed;
    double den = rw > vx ? rw : vx;
    if (den < vreg) den = vreg;
    double s = (rw - vx) / den;
    s = s > 1.0 ? 1.0 : s < -1.0 ? -1.0 : s;
    const double beta = atan(vy / (fabs(vx) > vreg ? fabs(vx) : vreg));
    double speed = fabs(rw);
    if (fabs(vx) > speed) speed = fabs(vx);
    if (fabs(vy) > speed) speed = fabs(vy);
    const double fade = speed < vreg ? speed / vreg : 1.0;
    const double theta1 = z >= r ? HALF_PI : acos(1.0 - z / r);
    /* slip relaxation: s_k = (s + hλ s_(k−1))/(1 + hλ), the same for β */
    double s_law = s, beta_law = beta;
    if (was_valid && wh->dir == dir) {
        s_law = (s + wh->rate_slip * wh->slip) / (1.0 + wh->rate_slip);
        beta_law = (beta + wh->rate_angle * wh->slip_angle) / (1.0 + wh->rate_angle);
    }
    bw_slopes sl;
    integrate(&d->soil, r, b, theta1, s_law, beta_law, &wh->last, &sl);
    /* the rates for the next step: how fast the wheel's own mass and
     * inertia about the axle would drive s and β back under the slopes,
     * hλ = h (∂f_x/∂s / m + r ∂T/∂s / I_a) / max(rω, v_x, v_reg) and
     * h (∂f_y/∂β) / (m max(|v_x|, v_reg)) */
    {
        const wld_body* bd = &w->bodies[wld_body_index(w, wh->body)];
        double Ia_v[3], al[3];
        m3_tmulv(al, R, a); /* the axle in the body frame */
        m3_mulv(Ia_v, bd->inv_inertia, al);
        const double inv_Ia = v3_dot(al, Ia_v); /* an upper bound of 1/(aᵀ I a) */
        const double den_y = fabs(vx) > vreg ? fabs(vx) : vreg;
        double lam_s = fade * (sl.dfx_ds * bd->inv_mass + r * sl.dt_ds * inv_Ia) / den;
        double lam_b = fade * sl.dfy_dbeta * bd->inv_mass / den_y;
        wh->rate_slip = lam_s > 0.0 && isfinite(lam_s) ? h * lam_s : 0.0;
        wh->rate_angle = lam_b > 0.0 && isfinite(lam_b) ? h * lam_b : 0.0;
        wh->slip = s_law, wh->slip_angle = beta_law, wh->dir = dir, wh->valid = 1;
    }
    double fz = wh->last.normal - d->damping * v3_dot(vc, n);
    if (fz < 0.0) fz = 0.0;
    wh->last.normal = fz;
    wh->last.drawbar_pull *= fade;
    wh->last.lateral *= fade;
    wh->last.torque *= fade;
    double f[3], t[3], ta[3];
    v3_scale(f, fz, n);
    v3_axpy(f, wh->last.drawbar_pull, ex);
    v3_axpy(f, -wh->last.lateral, ey);
    v3_scale(t, -wh->last.torque, a);
    v3_cross(ta, arm, f);
    v3_add(t, t, ta);
    v3_copy(wh->force, f);
    return dvi_body_add_step_force(w, wh->body, f, t);
}

static dvi_status element_apply(void* self, dvi_world* w, double h)
{
    bw_element* e = self;
    for (int32_t i = 0; i < e->def.wheel_count; i++) {
        dvi_status st = wheel_apply(e, w, &e->wheels[i], h);
        if (st != DVI_OK) return st;
    }
    return DVI_OK;
}

/* ---- state: each wheel's slip relaxation ---- */

#define BW_STATE_MAGIC 0x31535742u /* "BWS1" */
#define BW_WHEEL_BYTES (1 + 1 + 4 * 8)

static size_t element_state_size(const void* self)
{
    const bw_element* e = self;
    return 8 + (size_t)e->def.wheel_count * BW_WHEEL_BYTES;
}

static void element_save(const void* self, void* out)
{
    const bw_element* e = self;
    unsigned char* p = out;
    le_put_u32(p, BW_STATE_MAGIC), p += 4;
    le_put_u32(p, (uint32_t)e->def.wheel_count), p += 4;
    for (int32_t i = 0; i < e->def.wheel_count; i++) {
        const bw_wheel* wh = &e->wheels[i];
        *p++ = wh->valid;
        *p++ = (unsigned char)wh->dir;
        le_put_f64_next(&p, wh->slip);
        le_put_f64_next(&p, wh->slip_angle);
        le_put_f64_next(&p, wh->rate_slip);
        le_put_f64_next(&p, wh->rate_angle);
    }
}

static dvi_status element_load(void* self, const void* data, size_t size)
{
    bw_element* e = self;
    const unsigned char* p = data;
    if (size != element_state_size(e) || le_get_u32(p) != BW_STATE_MAGIC ||
        le_get_u32(p + 4) != (uint32_t)e->def.wheel_count)
        return dvi_error_report(DVI_ERR_PARSE,
                                "Bekker-Wong wheels: the state (%zu bytes) is not that of an element of %d wheels",
                                size, (int)e->def.wheel_count);
    p += 8;
    const unsigned char* q = p;
    for (int32_t i = 0; i < e->def.wheel_count; i++) { /* check everything before changing anything */
        const int8_t dir = (int8_t)q[1];
        bool ok = q[0] <= 1 && dir >= -1 && dir <= 1 && (q[0] == 0 || dir != 0);
        q += 2;
        for (int k = 0; k < 4; k++) {
            const double x = le_get_f64_next(&q);
            ok = ok && isfinite(x) && (k < 2 || x >= 0.0);
        }
        if (!ok)
            return dvi_error_report(DVI_ERR_PARSE, "Bekker-Wong wheels: state of wheels[%d]: a value is out of range",
                                    (int)i);
    }
    for (int32_t i = 0; i < e->def.wheel_count; i++) {
        bw_wheel* wh = &e->wheels[i];
        wh->valid = *p++;
        wh->dir = (int8_t)*p++;
        wh->slip = le_get_f64_next(&p);
        wh->slip_angle = le_get_f64_next(&p);
        wh->rate_slip = le_get_f64_next(&p);
        wh->rate_angle = le_get_f64_next(&p);
    }
    return DVI_OK;
}

/* name, apply, state_size, save, load, destroy */
static const dvi_force_element_class BW_CLASS = {"bekker_wong", element_apply, element_state_size,
                                                 element_save, element_load, element_destroy};

dvi_bw_def dvi_default_bw_def(void)
{
    dvi_bw_def d;
    memset(&d, 0, sizeof d);
    d.soil = dvi_bw_soil_ishigami2007();
    d.regularisation_speed = 0.01;
    d.plane_normal[2] = 1.0;
    d.ground_shape = 0;
    return d;
}

dvi_status dvi_world_add_bekker_wong(dvi_world* w, const dvi_bw_def* d, int32_t* index)
{
    if (index) *index = -1;
    if (!w || !d) return base_error_set(DVI_ERR_INVALID_ARG, "dvi_world_add_bekker_wong: world or def is NULL");
    const char* where = "Bekker-Wong wheels";
    dvi_status st = check_soil(&d->soil, where);
    if (st != DVI_OK) return wld_error(w, st, "%s", dvi_error_message());
#define REFUSE(...) return wld_error(w, DVI_ERR_INVALID_ARG, __VA_ARGS__)
    if (!d->wheels || d->wheel_count < 1 || d->wheel_count > DVI_BW_MAX_WHEELS)
        REFUSE("%s: wheel_count must be 1 to %d with a wheel list (got %d)", where, DVI_BW_MAX_WHEELS,
               (int)d->wheel_count);
    if (!(d->radius >= 0.0 && isfinite(d->radius))) REFUSE("%s: radius must be >= 0 (got %g)", where, d->radius);
    if (!(d->damping >= 0.0 && isfinite(d->damping))) REFUSE("%s: damping must be >= 0 (got %g)", where, d->damping);
    if (!(d->regularisation_speed > 0.0 && isfinite(d->regularisation_speed)))
        REFUSE("%s: regularisation_speed must be > 0 (got %g)", where, d->regularisation_speed);
    dvi_bw_def def = *d;
    if (!def.ground_set) {
        const double nn = v3_norm(def.plane_normal);
        if (!(nn > 0.0 && isfinite(nn) && isfinite(def.plane_height)))
            REFUSE("%s: plane_normal must be a non-zero vector and plane_height finite", where);
        v3_scale(def.plane_normal, 1.0 / nn, def.plane_normal);
    } else {
        dvi_body_info bi;
        dvi_shape_info si;
        if (dvi_body_get_info(w, def.ground_body, &bi) != DVI_OK) REFUSE("%s: ground_body is not a body", where);
        if (bi.type != DVI_BODY_FIXED) REFUSE("%s: ground_body must be fixed", where);
        if (dvi_body_get_shape(w, def.ground_body, def.ground_shape, &si) != DVI_OK ||
            si.type != DVI_SHAPE_HEIGHTFIELD)
            REFUSE("%s: ground_shape %d of ground_body is not a height field", where, (int)def.ground_shape);
    }
    bw_element* e = calloc(1, sizeof *e);
    bw_wheel* wheels = calloc((size_t)def.wheel_count, sizeof *wheels);
    if (!e || !wheels) {
        free(e);
        free(wheels);
        return wld_error(w, DVI_ERR_NOMEM, "%s: out of memory", where);
    }
    for (int32_t i = 0; i < def.wheel_count; i++) {
        bw_wheel* wh = &wheels[i];
        wh->body = def.wheels[i];
        dvi_body_info bi;
        dvi_shape_info si = {0};
        char name[64] = "?";
        bool ok = dvi_body_get_info(w, wh->body, &bi) == DVI_OK;
        if (ok) wld_body_name(w, wld_body_index(w, wh->body), name, sizeof name);
        int32_t k = 0;
        for (; ok && k < bi.shape_count; k++)
            if (dvi_body_get_shape(w, wh->body, k, &si) == DVI_OK && si.type == DVI_SHAPE_CYLINDER) break;
        if (!ok || bi.type != DVI_BODY_DYNAMIC || k == bi.shape_count) {
            free(wheels);
            free(e);
            if (!ok) REFUSE("%s: wheels[%d] is not a body", where, (int)i);
            REFUSE("%s: wheel %s (wheels[%d]) must be a dynamic body with a cylinder shape", where, name, (int)i);
        }
        const double zaxis[3] = {0.0, 0.0, 1.0};
        m3_mulv(wh->axis_body, si.offset_rotation, zaxis);
        v3_copy(wh->centre_body, si.offset_position);
        wh->radius = def.radius > 0.0 ? def.radius : si.radius;
        wh->width = 2.0 * si.half_length;
    }
    def.wheels = NULL;
    e->def = def;
    e->wheels = wheels;
    st = dvi_world_add_force_element(w, &BW_CLASS, e, index);
    if (st != DVI_OK) element_destroy(e);
    return st;
#undef REFUSE
}

dvi_status dvi_bw_wheel_forces(const dvi_world* w, int32_t index, int32_t wheel, dvi_bw_forces* out)
{
    const dvi_force_element_class* cls = NULL;
    const bw_element* e = dvi_world_force_element(w, index, &cls);
    if (!out) return base_error_set(DVI_ERR_INVALID_ARG, "dvi_bw_wheel_forces: out is NULL");
    if (!e || cls != &BW_CLASS)
        return base_error_setf(DVI_ERR_INVALID_ARG, "dvi_bw_wheel_forces: element %d is not a Bekker-Wong element",
                              (int)index);
    if (wheel < 0 || wheel >= e->def.wheel_count)
        return base_error_setf(DVI_ERR_INVALID_ARG, "dvi_bw_wheel_forces: wheel %d out of range (0 to %d)",
                              (int)wheel, (int)e->def.wheel_count - 1);
    *out = e->wheels[wheel].last;
    return DVI_OK;
}

bool bw_body_forces(const dvi_world* w, int32_t element, dvi_body_id body, dvi_bw_forces* forces, double force[3])
{
    const dvi_force_element_class* cls = NULL;
    const bw_element* e = dvi_world_force_element(w, element, &cls);
    if (!e || cls != &BW_CLASS) return false;
    for (int32_t i = 0; i < e->def.wheel_count; i++) {
        const bw_wheel* wh = &e->wheels[i];
        if (wh->body.index1 != body.index1 || wh->body.generation != body.generation) continue;
        *forces = wh->last;
        v3_copy(force, wh->force);
        return true;
    }
    return false;
}
