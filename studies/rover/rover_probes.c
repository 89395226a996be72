/* dvicontact rover study — the probe kinds "attitude" and "wheel_slip"
 * (rover_probes.h). Public headers only: the arithmetic is written out in
 * the order the library's own 3-vector routines use, so a probe gives the
 * same bits wherever it is registered. */
#include "rover_probes.h"

#include <math.h>
#include <stdio.h>

/* R of a unit quaternion (w, x, y, z), row-major. */
static void rotation(double R[9], const double q[4])
{
    double w = q[0], x = q[1], y = q[2], z = q[3];
    R[0] = 1 - 2 * (y * y + z * z); R[1] = 2 * (x * y - w * z);     R[2] = 2 * (x * z + w * y);
    R[3] = 2 * (x * y + w * z);     R[4] = 1 - 2 * (x * x + z * z); R[5] = 2 * (y * z - w * x);
    R[6] = 2 * (x * z - w * y);     R[7] = 2 * (y * z + w * x);     R[8] = 1 - 2 * (x * x + y * y);
}

/* o = M a */
static void mulv(double o[3], const double M[9], const double a[3])
{
    double x = M[0] * a[0] + M[1] * a[1] + M[2] * a[2];
    double y = M[3] * a[0] + M[4] * a[1] + M[5] * a[2];
    double z = M[6] * a[0] + M[7] * a[1] + M[8] * a[2];
    o[0] = x; o[1] = y; o[2] = z;
}

static double dot(const double a[3], const double b[3])
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

/* ---- attitude ---------------------------------------------------------------------------- */

/* Roll, pitch and yaw (rad) of a body: the z-y-x (Tait–Bryan) angles of its
 * orientation, R = R_z(yaw) R_y(pitch) R_x(roll). Pitch is in [−π/2, π/2]
 * and follows the right-hand rule about y: with x forward and z up, a
 * positive pitch lowers the nose. */
static dvi_status sample_attitude(const dvi_probe_context* c, const double* data, double* out)
{
    (void)data;
    double q[4], R[9];
    dvi_status st = dvi_body_get_orientation(c->world, c->body, q);
    if (st != DVI_OK) return st;
    rotation(R, q);
    out[0] = atan2(R[7], R[8]);
    out[1] = asin(fmax(-1.0, fmin(1.0, -R[6])));
    out[2] = atan2(R[3], R[0]);
    return DVI_OK;
}

static const dvi_probe_column ATTITUDE_COLUMNS[] = {{"roll", "rad"}, {"pitch", "rad"}, {"yaw", "rad"}};

static const dvi_probe_class ATTITUDE = {
    .name = "attitude",
    .label = "Attitude",
    .columns = ATTITUDE_COLUMNS,
    .column_count = 3,
    .sample = sample_attitude,
};

/* ---- wheel_slip -------------------------------------------------------------------------- */

enum { KEY_RADIUS = 0, KEY_AXIS = 1 };
static const dvi_probe_key WHEEL_KEYS[] = {{"radius", DVI_PROBE_KEY_POSITIVE, NULL},
                                           {"axis", DVI_PROBE_KEY_DIRECTION, "axle"}};

/* data = radius, unit axle (body frame): "radius" and "axis" when given,
 * else from the target's first shape, which must then be a cylinder (its
 * radius; its local z axis turned by its orientation). */
static dvi_status setup_wheel(const dvi_probe_keys* keys, const dvi_probe_body* body, double* data, char* msg,
                              size_t msg_size)
{
    const int has_radius = (keys->given >> KEY_RADIUS) & 1u, has_axis = (keys->given >> KEY_AXIS) & 1u;
    data[0] = has_radius ? keys->value[KEY_RADIUS][0] : 0.0;
    for (int k = 0; k < 3; k++) data[1 + k] = has_axis ? keys->value[KEY_AXIS][k] : 0.0;
    if (has_radius && has_axis) return DVI_OK;
    if (body->shape_count < 1 || body->shape_type != DVI_SHAPE_CYLINDER) {
        snprintf(msg, msg_size, "%s: missing, and body \"%s\" has no cylinder as its first shape to take it from",
                 has_radius ? "axis" : "radius", body->name);
        return DVI_ERR_INVALID_ARG;
    }
    if (!has_radius) data[0] = body->shape_radius;
    if (!has_axis) {
        double R[9];
        const double z[3] = {0.0, 0.0, 1.0};
        rotation(R, body->shape_orientation);
        mulv(data + 1, R, z);
    }
    return DVI_OK;
}

/* A wheel's forward speed v (m/s, of its centre of mass along a × up, a the
 * axle in the world frame), its rim speed ω r (ω = angular velocity · a) and
 * the slip ratio s = v / (ω r) − 1 (NaN when |ω r| < 1e-9 m/s or the axle is
 * vertical). data = radius, axle in the body frame. */
static dvi_status sample_wheel_slip(const dvi_probe_context* c, const double* data, double* out)
{
    double q[4], R[9], a[3], f[3], v[3], om[3];
    dvi_status st = dvi_body_get_orientation(c->world, c->body, q);
    if (st == DVI_OK) st = dvi_body_get_velocity(c->world, c->body, v);
    if (st == DVI_OK) st = dvi_body_get_angular_velocity(c->world, c->body, om);
    if (st != DVI_OK) return st;
    rotation(R, q);
    mulv(a, R, data + 1);
    const double* up = c->up;
    double x = a[1] * up[2] - a[2] * up[1], y = a[2] * up[0] - a[0] * up[2], z = a[0] * up[1] - a[1] * up[0];
    f[0] = x; f[1] = y; f[2] = z;
    double fn = sqrt(dot(f, f));
    if (!(fn > 1e-9)) {
        out[0] = out[1] = out[2] = NAN;
        return DVI_OK;
    }
    out[0] = dot(v, f) / fn;
    out[1] = dot(om, a) * data[0];
    out[2] = fabs(out[1]) >= 1e-9 ? out[0] / out[1] - 1.0 : NAN;
    return DVI_OK;
}

static const dvi_probe_column WHEEL_COLUMNS[] = {{"v_fwd", "m/s"}, {"omega_r", "m/s"}, {"slip", "1"}};

static const dvi_probe_class WHEEL_SLIP = {
    .name = "wheel_slip",
    .label = "Wheel slip",
    .columns = WHEEL_COLUMNS,
    .column_count = 3,
    .keys = WHEEL_KEYS,
    .key_count = 2,
    .data_width = 4,
    .setup = setup_wheel,
    .sample = sample_wheel_slip,
};

dvi_status rover_register_probes(void)
{
    dvi_status st = dvi_probe_register(&ATTITUDE);
    return st != DVI_OK ? st : dvi_probe_register(&WHEEL_SLIP);
}
