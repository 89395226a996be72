/* rover_model — the rocker-bogie rover from its reference JSON, built with
 * the public world API. See rover_model.h for the model. */
#include "rover_model.h"

#include <cjson/cJSON.h>

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- errors ------------------------------------------------------------------ */

typedef struct err {
    char* msg;
    size_t size;
    dvi_status status; /* DVI_OK until the first failure */
} err;

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static dvi_status fail(err* e, dvi_status st, const char* fmt, ...)
{
    if (e->status == DVI_OK) { /* keep the first message */
        e->status = st;
        if (e->msg && e->size > 0) {
            va_list ap;
            va_start(ap, fmt);
            vsnprintf(e->msg, e->size, fmt, ap);
            va_end(ap);
        }
    }
    return st;
}

/* ---- reading the file ----------------------------------------------------------- */

static cJSON* load_json(const char* path, err* e)
{
    if (!path) {
        fail(e, DVI_ERR_INVALID_ARG, "json_path: NULL");
        return NULL;
    }
    FILE* f = fopen(path, "rb");
    if (!f) {
        fail(e, DVI_ERR_IO, "%s: cannot open (%s)", path, strerror(errno));
        return NULL;
    }
    size_t cap = 1 << 16, len = 0;
    char* buf = malloc(cap + 1);
    if (!buf) {
        fclose(f);
        fail(e, DVI_ERR_NOMEM, "%s: out of memory", path);
        return NULL;
    }
    for (;;) {
        size_t got = fread(buf + len, 1, cap - len, f);
        len += got;
        if (len < cap) break;
        char* nb = realloc(buf, 2 * cap + 1);
        if (!nb) {
            free(buf);
            fclose(f);
            fail(e, DVI_ERR_NOMEM, "%s: out of memory", path);
            return NULL;
        }
        buf = nb;
        cap *= 2;
    }
    bool read_error = ferror(f) != 0;
    fclose(f);
    if (read_error) {
        free(buf);
        fail(e, DVI_ERR_IO, "%s: read error", path);
        return NULL;
    }
    buf[len] = '\0';
    const char* end = NULL;
    cJSON* root = cJSON_ParseWithLengthOpts(buf, len, &end, 0);
    if (!root || !cJSON_IsObject(root)) {
        /* locate the error: line and column of the first byte cJSON refused */
        size_t pos = end && end >= buf && end <= buf + len ? (size_t)(end - buf) : len;
        int line = 1, col = 1;
        for (size_t i = 0; i < pos; i++) {
            if (buf[i] == '\n') { line++; col = 1; }
            else col++;
        }
        if (!root)
            fail(e, DVI_ERR_PARSE, "%s:%d:%d: malformed JSON", path, line, col);
        else
            fail(e, DVI_ERR_PARSE, "%s: the top level is not a JSON object", path);
        cJSON_Delete(root);
        free(buf);
        return NULL;
    }
    free(buf);
    return root;
}

/* ---- typed field access; every failure names the JSON path ------------------- */

static const cJSON* get_field(const cJSON* obj, const char* path, const char* key, err* e)
{
    const cJSON* v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!v) fail(e, DVI_ERR_PARSE, "%s%s%s: missing", path, *path ? "." : "", key);
    return v;
}

static const cJSON* get_object(const cJSON* obj, const char* path, const char* key, err* e)
{
    const cJSON* v = get_field(obj, path, key, e);
    if (v && !cJSON_IsObject(v)) {
        fail(e, DVI_ERR_PARSE, "%s%s%s: not an object", path, *path ? "." : "", key);
        return NULL;
    }
    return v;
}

static bool get_number(const cJSON* obj, const char* path, const char* key, double* out, err* e)
{
    const cJSON* v = get_field(obj, path, key, e);
    if (!v) return false;
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble)) {
        fail(e, DVI_ERR_PARSE, "%s.%s: not a finite number", path, key);
        return false;
    }
    *out = v->valuedouble;
    return true;
}

static const char* get_string(const cJSON* obj, const char* path, const char* key, err* e)
{
    const cJSON* v = get_field(obj, path, key, e);
    if (!v) return NULL;
    if (!cJSON_IsString(v) || !v->valuestring) {
        fail(e, DVI_ERR_PARSE, "%s.%s: not a string", path, key);
        return NULL;
    }
    return v->valuestring;
}

/* An array of n finite numbers (path names the array, for messages). */
static bool read_vec(const cJSON* v, const char* path, int n, double* out, err* e)
{
    if (!cJSON_IsArray(v)) {
        fail(e, DVI_ERR_PARSE, "%s: not an array", path);
        return false;
    }
    if (cJSON_GetArraySize(v) != n) {
        fail(e, DVI_ERR_PARSE, "%s: expected %d numbers, got %d", path, n, cJSON_GetArraySize(v));
        return false;
    }
    for (int i = 0; i < n; i++) {
        const cJSON* x = cJSON_GetArrayItem(v, i);
        if (!cJSON_IsNumber(x) || !isfinite(x->valuedouble)) {
            fail(e, DVI_ERR_PARSE, "%s[%d]: not a finite number", path, i);
            return false;
        }
        out[i] = x->valuedouble;
    }
    return true;
}

static bool get_vec(const cJSON* obj, const char* path, const char* key, int n, double* out, err* e)
{
    const cJSON* v = get_field(obj, path, key, e);
    if (!v) return false;
    char p[160];
    snprintf(p, sizeof p, "%s.%s", path, key);
    return read_vec(v, p, n, out, e);
}

/* A 3×3 matrix as an array of three rows, row-major into out[9]. */
static bool get_mat3(const cJSON* obj, const char* path, const char* key, double out[9], err* e)
{
    const cJSON* v = get_field(obj, path, key, e);
    if (!v) return false;
    char p[160];
    snprintf(p, sizeof p, "%s.%s", path, key);
    if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) != 3) {
        fail(e, DVI_ERR_PARSE, "%s: expected an array of 3 rows", p);
        return false;
    }
    for (int i = 0; i < 3; i++) {
        char pr[176];
        snprintf(pr, sizeof pr, "%s[%d]", p, i);
        if (!read_vec(cJSON_GetArrayItem(v, i), pr, 3, out + 3 * i, e)) return false;
    }
    return true;
}

/* ---- the model -------------------------------------------------------------- */

/* Parts other than the chassis, in creation order. */
static const char* const PART_NAMES[ROVER_BODIES - 1] = {
    "rocker_L",    "rocker_R",    "bogie_L",     "bogie_R",    "diff_bar",   "diff_link_L",
    "diff_link_R", "upright_FL",  "upright_FR",  "upright_RL", "upright_RR", "wheel_LF",
    "wheel_LM",    "wheel_LB",    "wheel_RF",    "wheel_RM",   "wheel_RB",
};

static const char* const WHEEL_NAMES[ROVER_WHEELS] = {"wheel_LF", "wheel_LM", "wheel_LB",
                                                      "wheel_RF", "wheel_RM", "wheel_RB"};
static const char* const WHEEL_LABELS[ROVER_WHEELS] = {"front left",  "middle left",  "rear left",
                                                       "front right", "middle right", "rear right"};

rover_options rover_default_options(void)
{
    rover_options o;
    memset(&o, 0, sizeof o);
    o.wheel_friction = -1.0;
    return o;
}

/* Unit quaternion (w, x, y, z) turning the unit vector (0, 0, 1) onto unit a. */
static void quat_z_to(const double a[3], double q[4])
{
    double c = a[2]; /* z · a */
    if (c < -1.0 + 1e-12) { /* antiparallel: half turn about x */
        q[0] = 0.0;
        q[1] = 1.0;
        q[2] = q[3] = 0.0;
        return;
    }
    /* q = (1 + z·a, z × a) normalised; z × a = (−a_y, a_x, 0) */
    q[0] = 1.0 + c;
    q[1] = -a[1];
    q[2] = a[0];
    q[3] = 0.0;
    double n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    for (int k = 0; k < 4; k++) q[k] /= n;
}

static bool starts_with(const char* s, const char* prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* Index of a body by name in out->bodies, −1 if none. */
static int body_index(const rover* r, const char* name)
{
    for (int i = 0; i < r->body_count; i++)
        if (strcmp(r->bodies[i].name, name) == 0) return i;
    return -1;
}

static dvi_status create_body(dvi_world* w, rover* out, const char* name, double mass, const double inertia[9],
                              const double com[3], const double offset[3], err* e)
{
    dvi_body_def bd = dvi_default_body_def();
    bd.type = DVI_BODY_DYNAMIC;
    bd.mass = mass;
    memcpy(bd.inertia, inertia, sizeof bd.inertia);
    for (int k = 0; k < 3; k++) bd.position[k] = com[k] + offset[k];
    dvi_body_id id;
    dvi_status st = dvi_body_create(w, &bd, &id);
    if (st != DVI_OK) return fail(e, st, "%s: dvi_body_create: %s", name, dvi_world_last_error(w));
    rover_named_body* nb = &out->bodies[out->body_count++];
    snprintf(nb->name, sizeof nb->name, "%s", name);
    nb->id = id;
    nb->mass = mass;
    out->total_mass += mass;
    return DVI_OK;
}

static dvi_status build(dvi_world* w, const cJSON* root, const char* variant, const rover_options* o, rover* out,
                        err* e)
{
    /* chassis */
    const cJSON* chassis = get_object(root, "", "chassis", e);
    if (!chassis) return e->status;
    const cJSON* cv = cJSON_GetObjectItemCaseSensitive(chassis, variant);
    if (!cv)
        return fail(e, DVI_ERR_INVALID_ARG, "variant \"%s\": not in chassis (expected \"Scarecrow\" or \"FullRover\")",
                    variant);
    char path[160];
    snprintf(path, sizeof path, "chassis.%s", variant);
    if (!cJSON_IsObject(cv)) return fail(e, DVI_ERR_PARSE, "%s: not an object", path);
    double mass, idiag[3], com[3];
    if (!get_number(cv, path, "mass", &mass, e) || !get_vec(cv, path, "inertia_diag", 3, idiag, e) ||
        !get_vec(chassis, "chassis", "com", 3, com, e))
        return e->status;
    double inertia[9] = {idiag[0], 0, 0, 0, idiag[1], 0, 0, 0, idiag[2]};
    if (create_body(w, out, "chassis", mass, inertia, com, o->position, e) != DVI_OK) return e->status;
    out->chassis = out->bodies[0].id;

    /* wheel geometry and material */
    const cJSON* wheels = get_object(root, "", "wheels", e);
    if (!wheels) return e->status;
    if (!get_number(wheels, "wheels", "radius", &out->wheel_radius, e) ||
        !get_number(wheels, "wheels", "width", &out->wheel_width, e) ||
        !get_number(wheels, "wheels", "collision_envelope_nsc", &out->json_envelope, e))
        return e->status;
    if (!(out->wheel_radius > 0.0) || !(out->wheel_width > 0.0))
        return fail(e, DVI_ERR_PARSE, "wheels.radius, wheels.width: must be > 0");
    double friction = o->wheel_friction, restitution = 0.0;
    const cJSON* mat = get_object(wheels, "wheels", "material_nsc", e);
    if (!mat) return e->status;
    if (!get_number(mat, "wheels.material_nsc", "restitution", &restitution, e)) return e->status;
    if (friction < 0.0 && !get_number(mat, "wheels.material_nsc", "friction", &friction, e)) return e->status;
    const cJSON* only = cJSON_GetObjectItemCaseSensitive(wheels, "only_wheels_collide");
    if (only && cJSON_IsFalse(only))
        return fail(e, DVI_ERR_UNSUPPORTED, "wheels.only_wheels_collide: false is not supported (no part meshes)");

    /* parts */
    const cJSON* parts = get_object(root, "", "parts", e);
    if (!parts) return e->status;
    out->wheel_bottom_z = INFINITY;
    for (int i = 0; i < ROVER_BODIES - 1; i++) {
        const char* name = PART_NAMES[i];
        snprintf(path, sizeof path, "parts.%s", name);
        const cJSON* p = get_object(parts, "parts", name, e);
        if (!p) return e->status;
        double m, c[3], J[9];
        if (!get_number(p, path, "mass", &m, e) || !get_vec(p, path, "com", 3, c, e) ||
            !get_mat3(p, path, "inertia_about_com", J, e))
            return e->status;
        if (create_body(w, out, name, m, J, c, o->position, e) != DVI_OK) return e->status;
        dvi_body_id id = out->bodies[out->body_count - 1].id;
        if (!starts_with(name, "wheel_")) continue;

        /* a wheel: its cylinder, axis on spin_axis, centred on the wheel frame */
        double axis[3];
        if (!get_vec(p, path, "spin_axis", 3, axis, e)) return e->status;
        double an = sqrt(axis[0] * axis[0] + axis[1] * axis[1] + axis[2] * axis[2]);
        if (!(an > 0.0)) return fail(e, DVI_ERR_PARSE, "%s.spin_axis: zero vector", path);
        for (int k = 0; k < 3; k++) axis[k] /= an;
        double origin[3];
        if (!get_vec(p, path, "frame_origin", 3, origin, e)) return e->status;
        dvi_shape_def sd = dvi_default_shape_def();
        sd.type = DVI_SHAPE_CYLINDER;
        sd.radius = out->wheel_radius;
        sd.half_length = 0.5 * out->wheel_width;
        for (int k = 0; k < 3; k++) sd.offset_position[k] = origin[k] - c[k]; /* shape at the wheel frame */
        quat_z_to(axis, sd.offset_orientation);
        sd.material.friction = friction;
        sd.material.restitution = restitution;
        int wi = -1;
        for (int k = 0; k < ROVER_WHEELS; k++)
            if (strcmp(WHEEL_NAMES[k], name) == 0) wi = k;
        rover_wheel* rw = &out->wheel[wi];
        dvi_status st = dvi_shape_create(w, id, &sd, &rw->shape);
        if (st != DVI_OK) return fail(e, st, "%s: dvi_shape_create: %s", path, dvi_world_last_error(w));
        rw->name = WHEEL_NAMES[wi];
        rw->label = WHEEL_LABELS[wi];
        rw->side = wi < 3 ? 0 : 1;
        rw->place = wi % 3;
        rw->body = id;
        for (int k = 0; k < 3; k++) rw->position[k] = origin[k] + o->position[k];
        /* lowest point of the rim: centre − radius·(component of −z ⊥ axis) */
        double hz = sqrt(fmax(0.0, 1.0 - axis[2] * axis[2]));
        double bottom = origin[2] - out->wheel_radius * hz - 0.5 * out->wheel_width * fabs(axis[2]);
        if (bottom < out->wheel_bottom_z) out->wheel_bottom_z = bottom;
    }
    out->rocker[0] = out->bodies[body_index(out, "rocker_L")].id;
    out->rocker[1] = out->bodies[body_index(out, "rocker_R")].id;
    out->bogie[0] = out->bodies[body_index(out, "bogie_L")].id;
    out->bogie[1] = out->bodies[body_index(out, "bogie_R")].id;
    out->diff_bar = out->bodies[body_index(out, "diff_bar")].id;
    out->diff_link[0] = out->bodies[body_index(out, "diff_link_L")].id;
    out->diff_link[1] = out->bodies[body_index(out, "diff_link_R")].id;
    static const char* const UPRIGHTS[4] = {"upright_FL", "upright_FR", "upright_RL", "upright_RR"};
    for (int k = 0; k < 4; k++) out->upright[k] = out->bodies[body_index(out, UPRIGHTS[k])].id;

    /* joints */
    const cJSON* joints = get_field(root, "", "joints", e);
    if (!joints) return e->status;
    if (!cJSON_IsArray(joints)) return fail(e, DVI_ERR_PARSE, "joints: not an array");
    int nj = cJSON_GetArraySize(joints);
    if (nj > ROVER_MAX_JOINTS) return fail(e, DVI_ERR_PARSE, "joints: %d joints, at most %d", nj, ROVER_MAX_JOINTS);
    for (int i = 0; i < nj; i++) {
        const cJSON* j = cJSON_GetArrayItem(joints, i);
        snprintf(path, sizeof path, "joints[%d]", i);
        if (!cJSON_IsObject(j)) return fail(e, DVI_ERR_PARSE, "%s: not an object", path);
        const char *name = get_string(j, path, "name", e), *type = name ? get_string(j, path, "type", e) : NULL,
                   *na = type ? get_string(j, path, "body_a", e) : NULL,
                   *nb = na ? get_string(j, path, "body_b", e) : NULL;
        double pos[3], axis[3];
        if (!nb || !get_vec(j, path, "position", 3, pos, e) || !get_vec(j, path, "axis", 3, axis, e))
            return e->status;
        int ia = body_index(out, na), ib = body_index(out, nb);
        if (ia < 0) return fail(e, DVI_ERR_PARSE, "%s.body_a: unknown body \"%s\"", path, na);
        if (ib < 0) return fail(e, DVI_ERR_PARSE, "%s.body_b: unknown body \"%s\"", path, nb);

        dvi_joint_def jd = dvi_default_joint_def();
        bool drive = false;
        if (starts_with(type, "revolute")) jd.type = DVI_JOINT_REVOLUTE;
        else if (starts_with(type, "spherical")) jd.type = DVI_JOINT_SPHERICAL;
        else if (starts_with(type, "fixed")) jd.type = DVI_JOINT_FIXED;
        else if (starts_with(type, "rotational speed motor")) {
            jd.type = DVI_JOINT_REVOLUTE;
            drive = true;
        } else
            return fail(e, DVI_ERR_PARSE, "%s.type: unknown joint type \"%s\"", path, type);
        bool link_end = starts_with(na, "diff_link") || starts_with(nb, "diff_link");
        if (link_end && o->spherical_diff_links) jd.type = DVI_JOINT_SPHERICAL;

        int wheel_body = -1;
        if (drive) {
            /* carrier = body_a, wheel = body_b: + speed spins the wheel about +axis (forward for +y) */
            bool a_wheel = starts_with(na, "wheel_"), b_wheel = starts_with(nb, "wheel_");
            if (a_wheel == b_wheel)
                return fail(e, DVI_ERR_PARSE, "%s: a drive joint must join exactly one wheel", path);
            if (a_wheel) {
                int t = ia;
                ia = ib;
                ib = t;
            }
            wheel_body = ib;
            if (o->wheel_speed != 0.0) {
                jd.motor = DVI_MOTOR_ROTATION_SPEED;
                jd.motor_speed = o->wheel_speed;
                jd.motor_ramp_time = o->wheel_ramp;
            }
        }
        jd.body_a = out->bodies[ia].id;
        jd.body_b = out->bodies[ib].id;
        for (int k = 0; k < 3; k++) {
            jd.anchor[k] = pos[k] + o->position[k];
            jd.axis[k] = axis[k];
        }
        dvi_joint_id id;
        dvi_status st = dvi_joint_create(w, &jd, &id);
        if (st != DVI_OK) return fail(e, st, "%s (%s): dvi_joint_create: %s", path, name, dvi_world_last_error(w));
        rover_named_joint* rj = &out->joints[out->joint_count++];
        snprintf(rj->name, sizeof rj->name, "%s", name);
        rj->type = jd.type;
        rj->id = id;

        if (drive) {
            for (int k = 0; k < ROVER_WHEELS; k++)
                if (strcmp(out->bodies[wheel_body].name, WHEEL_NAMES[k]) == 0) out->wheel[k].joint = id;
            continue;
        }
        static const struct {
            const char* name;
            size_t offset;
        } NAMED[] = {
            {"rocker_pivot_L", offsetof(rover, rocker_pivot[0])},   {"rocker_pivot_R", offsetof(rover, rocker_pivot[1])},
            {"bogie_pivot_L", offsetof(rover, bogie_pivot[0])},     {"bogie_pivot_R", offsetof(rover, bogie_pivot[1])},
            {"diffbar_pivot", offsetof(rover, diff_bar_pivot)},     {"rocker_difflink_L", offsetof(rover, rocker_link[0])},
            {"rocker_difflink_R", offsetof(rover, rocker_link[1])}, {"difflink_diffbar_L", offsetof(rover, link_bar[0])},
            {"difflink_diffbar_R", offsetof(rover, link_bar[1])},   {"steer_FL", offsetof(rover, steer[0])},
            {"steer_FR", offsetof(rover, steer[1])},                {"steer_RL", offsetof(rover, steer[2])},
            {"steer_RR", offsetof(rover, steer[3])},
        };
        for (size_t k = 0; k < sizeof NAMED / sizeof NAMED[0]; k++)
            if (strcmp(name, NAMED[k].name) == 0) *(dvi_joint_id*)((char*)out + NAMED[k].offset) = id;
    }

    /* every named joint and every wheel joint present */
    const dvi_joint_id* must[] = {&out->rocker_pivot[0], &out->rocker_pivot[1], &out->bogie_pivot[0],
                                  &out->bogie_pivot[1],  &out->diff_bar_pivot,  &out->rocker_link[0],
                                  &out->rocker_link[1],  &out->link_bar[0],     &out->link_bar[1]};
    static const char* const MUST_NAMES[] = {"rocker_pivot_L",    "rocker_pivot_R",    "bogie_pivot_L",
                                             "bogie_pivot_R",     "diffbar_pivot",     "rocker_difflink_L",
                                             "rocker_difflink_R", "difflink_diffbar_L", "difflink_diffbar_R"};
    for (size_t k = 0; k < sizeof must / sizeof must[0]; k++)
        if (DVI_IS_NULL(*must[k])) return fail(e, DVI_ERR_PARSE, "joints: no joint named \"%s\"", MUST_NAMES[k]);
    static const char* const STEER_NAMES[4] = {"steer_FL", "steer_FR", "steer_RL", "steer_RR"};
    for (int k = 0; k < 4; k++)
        if (DVI_IS_NULL(out->steer[k])) return fail(e, DVI_ERR_PARSE, "joints: no joint named \"%s\"", STEER_NAMES[k]);
    for (int k = 0; k < ROVER_WHEELS; k++)
        if (DVI_IS_NULL(out->wheel[k].joint))
            return fail(e, DVI_ERR_PARSE, "joints: no drive joint for %s", WHEEL_NAMES[k]);
    return DVI_OK;
}

dvi_status rover_build(dvi_world* w, const char* json_path, const char* variant, const rover_options* opt,
                       rover* out, char* msg, size_t msg_size)
{
    err e = {msg, msg_size, DVI_OK};
    if (msg && msg_size > 0) msg[0] = '\0';
    if (!w || !out || !variant) return fail(&e, DVI_ERR_INVALID_ARG, "rover_build: NULL argument");
    rover_options o = opt ? *opt : rover_default_options();
    for (int k = 0; k < 3; k++)
        if (!isfinite(o.position[k])) return fail(&e, DVI_ERR_INVALID_ARG, "options.position: not finite");
    if (!isfinite(o.wheel_friction) || !isfinite(o.wheel_speed) || !isfinite(o.wheel_ramp) || !(o.wheel_ramp >= 0.0))
        return fail(&e, DVI_ERR_INVALID_ARG, "options: wheel_friction, wheel_speed, wheel_ramp must be finite, ramp >= 0");
    memset(out, 0, sizeof *out);
    cJSON* root = load_json(json_path, &e);
    if (!root) return e.status;
    build(w, root, variant, &o, out, &e);
    cJSON_Delete(root);
    return e.status;
}

dvi_status rover_reference_loads(const char* json_path, const char* variant, double loads[ROVER_WHEELS], char* msg,
                                 size_t msg_size)
{
    err e = {msg, msg_size, DVI_OK};
    if (msg && msg_size > 0) msg[0] = '\0';
    if (!variant || !loads) return fail(&e, DVI_ERR_INVALID_ARG, "rover_reference_loads: NULL argument");
    cJSON* root = load_json(json_path, &e);
    if (!root) return e.status;
    const cJSON* swl = get_object(root, "", "static_wheel_loads", &e);
    const cJSON* v = swl ? get_object(swl, "static_wheel_loads", variant, &e) : NULL;
    char path[128];
    snprintf(path, sizeof path, "static_wheel_loads.%s", variant);
    static const char* const SIDES[2] = {"left", "right"};
    static const char* const KEYS[3] = {"N_front", "N_middle", "N_rear"};
    for (int s = 0; v && s < 2; s++) {
        const cJSON* side = get_object(v, path, SIDES[s], &e);
        if (!side) break;
        char sp[160];
        snprintf(sp, sizeof sp, "%s.%s", path, SIDES[s]);
        for (int k = 0; k < 3; k++)
            if (!get_number(side, sp, KEYS[k], &loads[3 * s + k], &e)) break;
    }
    cJSON_Delete(root);
    return e.status;
}

dvi_status rover_wheel_forces(const dvi_world* w, const rover* r, double force[ROVER_WHEELS][3])
{
    for (int i = 0; i < ROVER_WHEELS; i++) {
        double torque[3];
        dvi_status st = dvi_body_get_contact_force(w, r->wheel[i].body, force[i], torque);
        if (st != DVI_OK) return st;
    }
    return DVI_OK;
}

double rover_pitch(const dvi_world* w, dvi_body_id body)
{
    double q[4];
    if (dvi_body_get_orientation(w, body, q) != DVI_OK) return NAN;
    /* x axis of R(q): (1 − 2(y² + z²), 2(xy + wz), 2(xz − wy)) */
    double xx = 1.0 - 2.0 * (q[2] * q[2] + q[3] * q[3]);
    double xz = 2.0 * (q[1] * q[3] - q[0] * q[2]);
    return atan2(-xz, xx);
}
