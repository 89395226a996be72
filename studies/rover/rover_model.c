/* rover_model — the rocker-bogie rover from its reference JSON, built with
 * the public world API. See rover_model.h for the model. */
#include "rover_model.h"

#include <cjson/cJSON.h>
#include <dvi/scene.h>

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

cJSON* rover_load_json(const char* path, dvi_status* status, char* msg, size_t msg_size)
{
    err e = {msg, msg_size, DVI_OK};
    cJSON* root = load_json(path, &e);
    if (status) *status = root ? DVI_OK : e.status;
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
    char p[320];
    snprintf(p, sizeof p, "%s.%s", path, key);
    return read_vec(v, p, n, out, e);
}

/* A 3×3 matrix as an array of three rows, row-major into out[9]. */
static bool get_mat3(const cJSON* obj, const char* path, const char* key, double out[9], err* e)
{
    const cJSON* v = get_field(obj, path, key, e);
    if (!v) return false;
    char p[320];
    snprintf(p, sizeof p, "%s.%s", path, key);
    if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) != 3) {
        fail(e, DVI_ERR_PARSE, "%s: expected an array of 3 rows", p);
        return false;
    }
    for (int i = 0; i < 3; i++) {
        char pr[340];
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
    o.grouser_height = 0.02;
    o.grouser_thickness = 0.01;
    return o;
}

/* Unit quaternion (w, x, y, z) of the rotation matrix R (row-major) whose
 * columns are the rotated x, y, z axes. */
static void quat_from_matrix(const double R[9], double q[4])
{
    double tr = R[0] + R[4] + R[8];
    if (tr > 0.0) {
        double s = 2.0 * sqrt(1.0 + tr);
        q[0] = 0.25 * s;
        q[1] = (R[7] - R[5]) / s;
        q[2] = (R[2] - R[6]) / s;
        q[3] = (R[3] - R[1]) / s;
    } else if (R[0] > R[4] && R[0] > R[8]) {
        double s = 2.0 * sqrt(1.0 + R[0] - R[4] - R[8]);
        q[0] = (R[7] - R[5]) / s;
        q[1] = 0.25 * s;
        q[2] = (R[1] + R[3]) / s;
        q[3] = (R[2] + R[6]) / s;
    } else if (R[4] > R[8]) {
        double s = 2.0 * sqrt(1.0 + R[4] - R[0] - R[8]);
        q[0] = (R[2] - R[6]) / s;
        q[1] = (R[1] + R[3]) / s;
        q[2] = 0.25 * s;
        q[3] = (R[5] + R[7]) / s;
    } else {
        double s = 2.0 * sqrt(1.0 + R[8] - R[0] - R[4]);
        q[0] = (R[3] - R[1]) / s;
        q[1] = (R[2] + R[6]) / s;
        q[2] = (R[5] + R[7]) / s;
        q[3] = 0.25 * s;
    }
    if (q[0] < 0.0)
        for (int k = 0; k < 4; k++) q[k] = -q[k];
    double n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    for (int k = 0; k < 4; k++) q[k] /= n;
}

void rover_grouser_pose(const double axis[3], int k, int n, double radius, double pos[3], double q[4])
{
    const double pi = 3.14159265358979323846;
    /* e1: −z made perpendicular to the axle (x if the axle is vertical); e2 = axle × e1 */
    double e1[3] = {axis[2] * axis[0], axis[2] * axis[1], -1.0 + axis[2] * axis[2]};
    double l = sqrt(e1[0] * e1[0] + e1[1] * e1[1] + e1[2] * e1[2]);
    if (l < 1e-9) {
        e1[0] = 1.0;
        e1[1] = e1[2] = 0.0;
        l = 1.0;
    }
    for (int c = 0; c < 3; c++) e1[c] /= l;
    double e2[3] = {axis[1] * e1[2] - axis[2] * e1[1], axis[2] * e1[0] - axis[0] * e1[2],
                    axis[0] * e1[1] - axis[1] * e1[0]};
    double phi = 2.0 * pi * (double)k / (double)(n > 0 ? n : 1);
    double nr[3], t[3];
    for (int c = 0; c < 3; c++) nr[c] = cos(phi) * e1[c] + sin(phi) * e2[c];
    t[0] = axis[1] * nr[2] - axis[2] * nr[1];
    t[1] = axis[2] * nr[0] - axis[0] * nr[2];
    t[2] = axis[0] * nr[1] - axis[1] * nr[0];
    double R[9];
    for (int c = 0; c < 3; c++) {
        R[3 * c + 0] = t[c];
        R[3 * c + 1] = axis[c];
        R[3 * c + 2] = nr[c];
        pos[c] = radius * nr[c];
    }
    quat_from_matrix(R, q);
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

/* ---- parsing: the whole model is read and checked before anything is created -- */

typedef struct part_data {
    const char* name;
    double mass, com[3], inertia[9];
    bool wheel;
    double origin[3], axis[3]; /* wheels: frame origin and unit spin axis */
} part_data;

typedef struct joint_data {
    char name[32];
    dvi_joint_type type;
    bool drive;
    int a, b; /* part indices (0 = chassis); for drives a = carrier, b = wheel */
    double pos[3], axis[3];
} joint_data;

typedef struct model {
    part_data part[ROVER_BODIES]; /* [0] chassis, then PART_NAMES */
    joint_data joint[ROVER_MAX_JOINTS];
    int joint_count;
    double radius, width, envelope, friction, restitution, bottom_z;
} model;

static int part_index(const model* m, const char* name)
{
    for (int i = 0; i < ROVER_BODIES; i++)
        if (strcmp(m->part[i].name, name) == 0) return i;
    return -1;
}

static dvi_status parse_model(const cJSON* root, const char* variant, const rover_options* o, model* m, err* e)
{
    char path[160];
    /* chassis */
    const cJSON* chassis = get_object(root, "", "chassis", e);
    if (!chassis) return e->status;
    const cJSON* cv = cJSON_GetObjectItemCaseSensitive(chassis, variant);
    if (!cv)
        return fail(e, DVI_ERR_INVALID_ARG, "variant \"%s\": not in chassis (expected \"Scarecrow\" or \"FullRover\")",
                    variant);
    snprintf(path, sizeof path, "chassis.%s", variant);
    if (!cJSON_IsObject(cv)) return fail(e, DVI_ERR_PARSE, "%s: not an object", path);
    part_data* c = &m->part[0];
    c->name = "chassis";
    double idiag[3];
    if (!get_number(cv, path, "mass", &c->mass, e) || !get_vec(cv, path, "inertia_diag", 3, idiag, e) ||
        !get_vec(chassis, "chassis", "com", 3, c->com, e))
        return e->status;
    memset(c->inertia, 0, sizeof c->inertia);
    for (int k = 0; k < 3; k++) c->inertia[4 * k] = idiag[k];

    /* wheel geometry and material */
    const cJSON* wheels = get_object(root, "", "wheels", e);
    if (!wheels) return e->status;
    if (!get_number(wheels, "wheels", "radius", &m->radius, e) ||
        !get_number(wheels, "wheels", "width", &m->width, e) ||
        !get_number(wheels, "wheels", "collision_envelope_nsc", &m->envelope, e))
        return e->status;
    if (!(m->radius > 0.0)) return fail(e, DVI_ERR_PARSE, "wheels.radius: must be > 0");
    if (!(m->width > 0.0)) return fail(e, DVI_ERR_PARSE, "wheels.width: must be > 0");
    const cJSON* mat = get_object(wheels, "wheels", "material_nsc", e);
    if (!mat) return e->status;
    if (!get_number(mat, "wheels.material_nsc", "restitution", &m->restitution, e)) return e->status;
    m->friction = o->wheel_friction;
    if (m->friction < 0.0 && !get_number(mat, "wheels.material_nsc", "friction", &m->friction, e)) return e->status;
    const cJSON* only = cJSON_GetObjectItemCaseSensitive(wheels, "only_wheels_collide");
    if (only && cJSON_IsFalse(only))
        return fail(e, DVI_ERR_UNSUPPORTED, "wheels.only_wheels_collide: false is not supported (no part meshes)");

    /* parts */
    const cJSON* parts = get_object(root, "", "parts", e);
    if (!parts) return e->status;
    m->bottom_z = INFINITY;
    for (int i = 1; i < ROVER_BODIES; i++) {
        part_data* p = &m->part[i];
        p->name = PART_NAMES[i - 1];
        snprintf(path, sizeof path, "parts.%s", p->name);
        const cJSON* jp = get_object(parts, "parts", p->name, e);
        if (!jp) return e->status;
        if (!get_number(jp, path, "mass", &p->mass, e) || !get_vec(jp, path, "com", 3, p->com, e) ||
            !get_mat3(jp, path, "inertia_about_com", p->inertia, e))
            return e->status;
        p->wheel = starts_with(p->name, "wheel_");
        if (!p->wheel) continue;
        if (!get_vec(jp, path, "spin_axis", 3, p->axis, e) || !get_vec(jp, path, "frame_origin", 3, p->origin, e))
            return e->status;
        double an = sqrt(p->axis[0] * p->axis[0] + p->axis[1] * p->axis[1] + p->axis[2] * p->axis[2]);
        if (!(an > 0.0)) return fail(e, DVI_ERR_PARSE, "%s.spin_axis: zero vector", path);
        for (int k = 0; k < 3; k++) p->axis[k] /= an;
        /* lowest point of the wheel cylinder */
        double hz = sqrt(fmax(0.0, 1.0 - p->axis[2] * p->axis[2]));
        double bottom = p->origin[2] - m->radius * hz - 0.5 * m->width * fabs(p->axis[2]);
        if (bottom < m->bottom_z) m->bottom_z = bottom;
    }

    /* joints */
    const cJSON* joints = get_field(root, "", "joints", e);
    if (!joints) return e->status;
    if (!cJSON_IsArray(joints)) return fail(e, DVI_ERR_PARSE, "joints: not an array");
    int nj = cJSON_GetArraySize(joints);
    if (nj > ROVER_MAX_JOINTS) return fail(e, DVI_ERR_PARSE, "joints: %d joints, at most %d", nj, ROVER_MAX_JOINTS);
    for (int i = 0; i < nj; i++) {
        const cJSON* j = cJSON_GetArrayItem(joints, i);
        joint_data* jd = &m->joint[m->joint_count];
        snprintf(path, sizeof path, "joints[%d]", i);
        if (!cJSON_IsObject(j)) return fail(e, DVI_ERR_PARSE, "%s: not an object", path);
        const char* name = get_string(j, path, "name", e);
        if (!name) return e->status;
        snprintf(path, sizeof path, "joints[%d] (%s)", i, name);
        const char* type = get_string(j, path, "type", e);
        const char* na = type ? get_string(j, path, "body_a", e) : NULL;
        const char* nb = na ? get_string(j, path, "body_b", e) : NULL;
        if (!nb || !get_vec(j, path, "position", 3, jd->pos, e) || !get_vec(j, path, "axis", 3, jd->axis, e))
            return e->status;
        snprintf(jd->name, sizeof jd->name, "%s", name);
        jd->a = part_index(m, na);
        jd->b = part_index(m, nb);
        if (jd->a < 0) return fail(e, DVI_ERR_PARSE, "%s.body_a: unknown body \"%s\"", path, na);
        if (jd->b < 0) return fail(e, DVI_ERR_PARSE, "%s.body_b: unknown body \"%s\"", path, nb);
        if (jd->a == jd->b) return fail(e, DVI_ERR_PARSE, "%s: body_a and body_b are the same", path);
        jd->drive = false;
        if (starts_with(type, "revolute")) jd->type = DVI_JOINT_REVOLUTE;
        else if (starts_with(type, "spherical")) jd->type = DVI_JOINT_SPHERICAL;
        else if (starts_with(type, "fixed")) jd->type = DVI_JOINT_FIXED;
        else if (starts_with(type, "rotational speed motor")) {
            jd->type = DVI_JOINT_REVOLUTE;
            jd->drive = true;
        } else
            return fail(e, DVI_ERR_PARSE, "%s.type: unknown joint type \"%s\"", path, type);
        if (o->spherical_diff_links && (starts_with(na, "diff_link") || starts_with(nb, "diff_link")))
            jd->type = DVI_JOINT_SPHERICAL;
        if (jd->type != DVI_JOINT_SPHERICAL &&
            !(jd->axis[0] != 0.0 || jd->axis[1] != 0.0 || jd->axis[2] != 0.0))
            return fail(e, DVI_ERR_PARSE, "%s.axis: zero vector", path);
        if (jd->drive) { /* carrier = body_a, wheel = body_b */
            bool a_wheel = m->part[jd->a].wheel, b_wheel = m->part[jd->b].wheel;
            if (a_wheel == b_wheel)
                return fail(e, DVI_ERR_PARSE, "%s: a drive joint must join exactly one wheel", path);
            if (a_wheel) {
                int t = jd->a;
                jd->a = jd->b;
                jd->b = t;
            }
        }
        m->joint_count++;
    }

    /* the joints rover.h names, and one drive per wheel */
    static const char* const NAMED[] = {"rocker_pivot_L",    "rocker_pivot_R",     "bogie_pivot_L",
                                        "bogie_pivot_R",     "diffbar_pivot",      "rocker_difflink_L",
                                        "rocker_difflink_R", "difflink_diffbar_L", "difflink_diffbar_R",
                                        "steer_FL",          "steer_FR",           "steer_RL",
                                        "steer_RR"};
    for (size_t k = 0; k < sizeof NAMED / sizeof NAMED[0]; k++) {
        bool found = false;
        for (int i = 0; i < m->joint_count; i++) found = found || strcmp(m->joint[i].name, NAMED[k]) == 0;
        if (!found) return fail(e, DVI_ERR_PARSE, "joints: no joint named \"%s\"", NAMED[k]);
    }
    for (int k = 0; k < ROVER_WHEELS; k++) {
        int drives = 0, wi = part_index(m, WHEEL_NAMES[k]);
        for (int i = 0; i < m->joint_count; i++) drives += m->joint[i].drive && m->joint[i].b == wi;
        if (drives != 1)
            return fail(e, DVI_ERR_PARSE, "joints: %s has %d drive joints (expected 1)", WHEEL_NAMES[k], drives);
    }
    return DVI_OK;
}

/* ---- creating the bodies, shapes and joints ------------------------------------ */

static dvi_status create_model(dvi_world* w, const model* m, const rover_options* o, rover* out, err* e)
{
    out->wheel_radius = m->radius;
    out->wheel_width = m->width;
    /* grouser 0 of every wheel points straight down: its tip is the lowest point */
    out->wheel_bottom_z = m->bottom_z - (o->grousers > 0 ? o->grouser_height : 0.0);
    out->json_envelope = m->envelope;
    double off[3] = {o->position[0], o->position[1], o->position[2]};
    if (o->on_ground) off[2] = o->position[2] - out->wheel_bottom_z;
    for (int k = 0; k < 3; k++) out->origin[k] = off[k];

    dvi_body_id ids[ROVER_BODIES];
    for (int i = 0; i < ROVER_BODIES; i++) {
        const part_data* p = &m->part[i];
        dvi_body_def bd = dvi_default_body_def();
        bd.type = DVI_BODY_DYNAMIC;
        bd.mass = p->mass;
        memcpy(bd.inertia, p->inertia, sizeof bd.inertia);
        for (int k = 0; k < 3; k++) bd.position[k] = p->com[k] + off[k];
        dvi_status st = dvi_body_create(w, &bd, &ids[i]);
        if (st != DVI_OK) return fail(e, st, "%s: dvi_body_create: %s", p->name, dvi_world_last_error(w));
        rover_named_body* nb = &out->bodies[out->body_count++];
        snprintf(nb->name, sizeof nb->name, "%s", p->name);
        nb->id = ids[i];
        nb->mass = p->mass;
        out->total_mass += p->mass;
        if (!p->wheel) continue;

        /* a wheel: its cylinder on the wheel frame, axis (local z) on the spin axis */
        int wi = -1;
        for (int k = 0; k < ROVER_WHEELS; k++)
            if (strcmp(WHEEL_NAMES[k], p->name) == 0) wi = k;
        rover_wheel* rw = &out->wheel[wi];
        dvi_shape_def sd = dvi_default_shape_def();
        sd.type = DVI_SHAPE_CYLINDER;
        sd.radius = m->radius;
        sd.half_length = 0.5 * m->width;
        for (int k = 0; k < 3; k++) sd.offset_position[k] = p->origin[k] - p->com[k];
        quat_z_to(p->axis, sd.offset_orientation);
        sd.material.friction = m->friction;
        sd.material.restitution = m->restitution;
        sd.material.compliance = o->wheel_compliance;
        if (o->wheel_young_modulus > 0.0) {
            sd.material.young_modulus = o->wheel_young_modulus;
            sd.material.poisson_ratio = 0.3;
        }
        st = dvi_shape_create(w, ids[i], &sd, &rw->shape);
        if (st != DVI_OK) return fail(e, st, "parts.%s: dvi_shape_create: %s", p->name, dvi_world_last_error(w));
        for (int g = 0; g < o->grousers; g++) { /* thin boxes across the tread */
            dvi_shape_def gs = sd;
            double gp[3];
            gs.type = DVI_SHAPE_BOX;
            gs.radius = gs.half_length = 0.0;
            gs.half_extents[0] = 0.5 * o->grouser_thickness;
            gs.half_extents[1] = 0.5 * m->width;
            gs.half_extents[2] = o->grouser_height;
            rover_grouser_pose(p->axis, g, o->grousers, m->radius, gp, gs.offset_orientation);
            for (int k = 0; k < 3; k++) gs.offset_position[k] = p->origin[k] - p->com[k] + gp[k];
            dvi_shape_id gid;
            st = dvi_shape_create(w, ids[i], &gs, &gid);
            if (st != DVI_OK)
                return fail(e, st, "parts.%s: grouser %d: dvi_shape_create: %s", p->name, g, dvi_world_last_error(w));
        }
        rw->name = WHEEL_NAMES[wi];
        rw->label = WHEEL_LABELS[wi];
        rw->side = wi < 3 ? 0 : 1;
        rw->place = wi % 3;
        rw->body = ids[i];
        for (int k = 0; k < 3; k++) rw->position[k] = p->origin[k] + off[k];
    }
#define ID_OF(name) ids[part_index(m, name)]
    out->chassis = ids[0];
    out->rocker[0] = ID_OF("rocker_L");
    out->rocker[1] = ID_OF("rocker_R");
    out->bogie[0] = ID_OF("bogie_L");
    out->bogie[1] = ID_OF("bogie_R");
    out->diff_bar = ID_OF("diff_bar");
    out->diff_link[0] = ID_OF("diff_link_L");
    out->diff_link[1] = ID_OF("diff_link_R");
    out->upright[0] = ID_OF("upright_FL");
    out->upright[1] = ID_OF("upright_FR");
    out->upright[2] = ID_OF("upright_RL");
    out->upright[3] = ID_OF("upright_RR");
#undef ID_OF

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
    for (int i = 0; i < m->joint_count; i++) {
        const joint_data* j = &m->joint[i];
        dvi_joint_def jd = dvi_default_joint_def();
        jd.type = j->type;
        jd.body_a = ids[j->a];
        jd.body_b = ids[j->b];
        for (int k = 0; k < 3; k++) {
            jd.anchor[k] = j->pos[k] + off[k];
            jd.axis[k] = j->axis[k];
        }
        if (j->drive && o->wheel_speed != 0.0) {
            jd.motor = DVI_MOTOR_ROTATION_SPEED;
            jd.motor_speed = o->wheel_speed;
            jd.motor_ramp_time = o->wheel_ramp;
            jd.motor_damping = o->wheel_damping;
        }
        dvi_joint_id id;
        dvi_status st = dvi_joint_create(w, &jd, &id);
        if (st != DVI_OK)
            return fail(e, st, "joints[%d] (%s): dvi_joint_create: %s", i, j->name, dvi_world_last_error(w));
        rover_named_joint* rj = &out->joints[out->joint_count++];
        snprintf(rj->name, sizeof rj->name, "%s", j->name);
        rj->type = j->type;
        rj->motor = jd.motor;
        rj->id = id;
        if (j->drive) {
            for (int k = 0; k < ROVER_WHEELS; k++)
                if (ids[j->b].index1 == out->wheel[k].body.index1) out->wheel[k].joint = id;
            continue;
        }
        for (size_t k = 0; k < sizeof NAMED / sizeof NAMED[0]; k++)
            if (strcmp(j->name, NAMED[k].name) == 0) *(dvi_joint_id*)((char*)out + NAMED[k].offset) = id;
    }
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
    if (!isfinite(o.wheel_friction) || !isfinite(o.wheel_speed) || !isfinite(o.wheel_ramp) || !(o.wheel_ramp >= 0.0) ||
        !(o.wheel_compliance >= 0.0) || !isfinite(o.wheel_compliance) || !(o.wheel_young_modulus >= 0.0) ||
        !isfinite(o.wheel_young_modulus) || !(o.wheel_damping >= 0.0) || !isfinite(o.wheel_damping))
        return fail(&e, DVI_ERR_INVALID_ARG,
                    "options: wheel_friction, wheel_speed, wheel_ramp, wheel_compliance, wheel_young_modulus, "
                    "wheel_damping must be finite; ramp, compliance, young_modulus, damping >= 0");
    if (o.grousers < 0 || o.grousers > 360 ||
        (o.grousers > 0 && !(o.grouser_height > 0.0 && isfinite(o.grouser_height) && o.grouser_thickness > 0.0 &&
                             isfinite(o.grouser_thickness))))
        return fail(&e, DVI_ERR_INVALID_ARG,
                    "options: grousers must be in [0, 360]; with grousers, grouser_height and grouser_thickness > 0");
    memset(out, 0, sizeof *out);
    cJSON* root = load_json(json_path, &e);
    if (!root) return e.status;
    model* m = calloc(1, sizeof *m);
    if (!m) {
        cJSON_Delete(root);
        return fail(&e, DVI_ERR_NOMEM, "rover_build: out of memory");
    }
    if (parse_model(root, variant, &o, m, &e) == DVI_OK) create_model(w, m, &o, out, &e);
    free(m);
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
    const cJSON* v = NULL;
    if (swl && !cJSON_GetObjectItemCaseSensitive(swl, variant))
        fail(&e, DVI_ERR_INVALID_ARG,
             "variant \"%s\": not in static_wheel_loads (expected \"Scarecrow\" or \"FullRover\")", variant);
    else if (swl)
        v = get_object(swl, "static_wheel_loads", variant, &e);
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

/* ---- the obstacle-crossing course ------------------------------------------------ */

dvi_status rover_add_ground(dvi_world* w, double friction, dvi_body_id* out)
{
    dvi_body_def bd = dvi_default_body_def();
    bd.type = DVI_BODY_FIXED;
    dvi_status st = dvi_body_create(w, &bd, out);
    if (st != DVI_OK) return st;
    dvi_shape_def sd = dvi_default_shape_def();
    sd.type = DVI_SHAPE_PLANE;
    sd.material.friction = friction;
    dvi_shape_id sid;
    return dvi_shape_create(w, *out, &sd, &sid);
}

dvi_status rover_add_obstacle(dvi_world* w, const double centre[3], double radius, double friction,
                              dvi_body_id* out)
{
    dvi_body_def bd = dvi_default_body_def();
    bd.type = DVI_BODY_FIXED;
    for (int k = 0; k < 3; k++) bd.position[k] = centre[k];
    dvi_status st = dvi_body_create(w, &bd, out);
    if (st != DVI_OK) return st;
    dvi_shape_def sd = dvi_default_shape_def();
    sd.type = DVI_SHAPE_SPHERE;
    sd.radius = radius;
    sd.material.friction = friction;
    dvi_shape_id sid;
    return dvi_shape_create(w, *out, &sd, &sid);
}

dvi_status rover_wheel_loads(const dvi_world* w, const rover* r, double load[ROVER_WHEELS])
{
    if (!w || !r || !load) return DVI_ERR_INVALID_ARG;
    for (int i = 0; i < ROVER_WHEELS; i++) load[i] = 0.0;
    int32_t n = dvi_world_contact_count(w);
    for (int32_t k = 0; k < n; k++) {
        dvi_contact_info c;
        dvi_status st = dvi_world_get_contact(w, k, &c);
        if (st != DVI_OK) return st;
        double fn = c.force[0] * c.normal[0] + c.force[1] * c.normal[1] + c.force[2] * c.normal[2];
        for (int i = 0; i < ROVER_WHEELS; i++) {
            int32_t id = r->wheel[i].body.index1;
            if (c.body_a.index1 == id || c.body_b.index1 == id) load[i] += fn;
        }
    }
    return DVI_OK;
}

dvi_status rover_wheel_slip(const dvi_world* w, const rover* r, int i, double* v, double* omega_r, double* slip)
{
    if (!w || !r || i < 0 || i >= ROVER_WHEELS) return DVI_ERR_INVALID_ARG;
    double q[4], vel[3], om[3];
    dvi_status st = dvi_body_get_orientation(w, r->wheel[i].body, q);
    if (st == DVI_OK) st = dvi_body_get_velocity(w, r->wheel[i].body, vel);
    if (st == DVI_OK) st = dvi_body_get_angular_velocity(w, r->wheel[i].body, om);
    if (st != DVI_OK) return st;
    /* the axle: the body's y axis (the wheels are built with the chassis
     * orientation, spin axis y) */
    double a[3] = {2.0 * (q[1] * q[2] - q[0] * q[3]), 1.0 - 2.0 * (q[1] * q[1] + q[3] * q[3]),
                   2.0 * (q[2] * q[3] + q[0] * q[1])};
    double f[3] = {a[1], -a[0], 0.0}; /* a × z */
    double fn = sqrt(f[0] * f[0] + f[1] * f[1]);
    double vf = fn > 1e-9 ? (vel[0] * f[0] + vel[1] * f[1]) / fn : NAN;
    double wr = (om[0] * a[0] + om[1] * a[1] + om[2] * a[2]) * r->wheel_radius;
    if (v) *v = vf;
    if (omega_r) *omega_r = wr;
    if (slip) *slip = fabs(wr) >= 1e-9 ? vf / wr - 1.0 : NAN;
    return DVI_OK;
}

bool rover_obstacle_travel(const rover* r, int i, const double centre[3], double radius, double* reach,
                           double* leave)
{
    if (!r || i < 0 || i >= ROVER_WHEELS) return false;
    const double* c = r->wheel[i].position;
    double hw = 0.5 * r->wheel_width, d = fabs(centre[1] - c[1]), rs = radius;
    if (d > hw) { /* the sphere's section in the plane of the nearer face meets the rim */
        double e = d - hw;
        if (e >= radius) return false;
        rs = sqrt(radius * radius - e * e);
    }
    double dz = c[2] - centre[2], reachr = r->wheel_radius + rs;
    if (fabs(dz) >= reachr) return false;
    double dx = sqrt(reachr * reachr - dz * dz);
    if (reach) *reach = centre[0] - dx - c[0];
    if (leave) *leave = centre[0] + dx - c[0];
    return true;
}

void rover_write_number(FILE* f, double x)
{
    char b[40];
    for (int p = 15; p <= 17; p++) {
        snprintf(b, sizeof b, "%.*g", p, x);
        if (strtod(b, NULL) == x) break;
    }
    if (strcmp(b, "-0") == 0) strcpy(b, "0");
    fputs(b, f);
}

void rover_write_vector(FILE* f, const double* v, int n)
{
    fputc('[', f);
    for (int k = 0; k < n; k++) {
        if (k) fputs(", ", f);
        rover_write_number(f, v[k]);
    }
    fputc(']', f);
}

void rover_write_carriage_joints(FILE* f, const double p[3], const double rail_axis[3], double speed, double omega,
                                 double ramp)
{
    fputs("  \"joints\": [\n    {\"name\": \"rail\", \"type\": \"prismatic\", \"body_b\": \"carriage\", \"anchor\": ", f);
    rover_write_vector(f, p, 3);
    fputs(", \"axis\": ", f);
    rover_write_vector(f, rail_axis, 3);
    fputs(",\n     \"motor\": {\"type\": \"linear_speed\", \"speed\": ", f);
    rover_write_number(f, speed);
    fputs(", \"ramp_time\": ", f);
    rover_write_number(f, ramp);
    fputs("}},\n    {\"name\": \"guide\", \"type\": \"prismatic\", \"body_a\": \"carriage\", \"body_b\": \"slider\", "
          "\"anchor\": ",
          f);
    rover_write_vector(f, p, 3);
    fputs(", \"axis\": [0, 0, 1]},\n    {\"name\": \"drive\", \"type\": \"revolute\", \"body_a\": \"slider\", "
          "\"body_b\": \"wheel\", \"anchor\": ",
          f);
    rover_write_vector(f, p, 3);
    fputs(", \"axis\": [0, 1, 0],\n     \"motor\": {\"type\": \"speed\", \"speed\": ", f);
    rover_write_number(f, omega);
    fputs(", \"ramp_time\": ", f);
    rover_write_number(f, ramp);
    fputs("}}\n  ],\n", f);
}

dvi_status rover_parse_scene_text(const char* text, size_t len, dvi_scene** out, char* msg, size_t msg_size)
{
    dvi_scene_errors errs = {0};
    dvi_status st = dvi_scene_parse(text, len, NULL, out, &errs);
    if (st != DVI_OK && msg && msg_size > 0)
        snprintf(msg, msg_size, "scene: %s", errs.text ? errs.text : "invalid");
    dvi_scene_errors_free(&errs);
    return st;
}
