/* dvicontact — the sections of a scene file, read and checked
 * (docs/scene-format.md): materials, the names of bodies, generators and
 * joints (a first pass, so that references resolve in any order), shapes,
 * bodies, generators, joints, the formulation and the probes, then the
 * whole scene (sc_parse_scene), which reads them in that order (the top
 * level's own fields first). Every problem is reported through the parse
 * context (scene_json.c), and the body names through it (sc_body_ref,
 * sc_resolve_body).
 */
#include "scene_parse.h"
#include "registry.h"

#include "alloc.h"
#include "math3.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SHAPES_TOTAL 1000000
#define MAX_SEED 9007199254740992.0 /* 2^53: every integer up to it is exact in JSON */

/* ---- names and indices ------------------------------------------------------------------ */

/* A name that may label a body, joint, material, generator or probe (a probe
 * name is a file stem): 1..SC_MAX_NAME characters from [A-Za-z0-9_.-],
 * starting with a letter, a digit or '_'. */
static bool valid_name(const char* s)
{
    size_t n = strlen(s);
    if (n == 0 || n > SC_MAX_NAME) return false;
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        bool alnum = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_';
        if (!alnum && (i == 0 || (ch != '.' && ch != '-'))) return false;
    }
    return true;
}

/* ---- materials ---------------------------------------------------------------------------- */

static const char* const MATERIAL_KEYS[] = {"friction",          "rolling_friction", "spinning_friction",
                                            "restitution",       "compliance",       "young_modulus",
                                            "poisson_ratio",     "k_n",              "k_t",
                                            "gamma_n",           "gamma_t",          "terrain_stiffness",
                                            "terrain_hysteresis", NULL};

static void parse_material(ctx* c, const cJSON* v, const char* path, dvi_material* m)
{
    *m = dvi_default_shape_def().material;
    if (!sc_is_object(c, v, path)) return;
    sc_check_keys(c, v, path, MATERIAL_KEYS, NULL, NULL);
    sc_num_field(c, v, path, "friction", false, R_NONNEG, &m->friction);
    sc_num_field(c, v, path, "rolling_friction", false, R_NONNEG, &m->rolling_friction);
    sc_num_field(c, v, path, "spinning_friction", false, R_NONNEG, &m->spinning_friction);
    sc_num_field(c, v, path, "restitution", false, R_UNIT, &m->restitution);
    sc_num_field(c, v, path, "compliance", false, R_NONNEG, &m->compliance);
    /* DEM (docs/dem.md); the ranges of dvi_shape_create */
    char p[PATH_LEN], t[32];
    double x;
    sc_num_field(c, v, path, "young_modulus", false, R_NONNEG, &m->young_modulus);
    if (sc_num_field(c, v, path, "poisson_ratio", false, R_ANY, &x)) {
        if (!(x > -1.0 && x <= 0.5))
            sc_errf(c, sc_path_key(p, path, "poisson_ratio"), "must be in (-1, 0.5] (got %s)", sc_num_text(t, x));
        else m->poisson_ratio = x;
    }
    sc_num_field(c, v, path, "k_n", false, R_NONNEG, &m->k_n);
    sc_num_field(c, v, path, "k_t", false, R_NONNEG, &m->k_t);
    sc_num_field(c, v, path, "gamma_n", false, R_ANY, &m->gamma_n);
    sc_num_field(c, v, path, "gamma_t", false, R_ANY, &m->gamma_t);
    sc_num_field(c, v, path, "terrain_stiffness", false, R_NONNEG, &m->terrain_stiffness);
    if (sc_num_field(c, v, path, "terrain_hysteresis", false, R_ANY, &x)) {
        if (!(x >= 0.0 && x < 1.0))
            sc_errf(c, sc_path_key(p, path, "terrain_hysteresis"), "must be in [0, 1) (got %s)", sc_num_text(t, x));
        else m->terrain_hysteresis = x;
    }
}

static void parse_materials(ctx* c, const cJSON* root)
{
    c->default_material = dvi_default_shape_def().material;
    const cJSON* v = sc_member(root, "materials");
    if (!v) return;
    if (!sc_is_object(c, v, "materials")) return;
    int64_t n = sc_array_size(v);
    if (n > SC_MAX_MATERIALS) {
        sc_errf(c, "materials", "%lld entries, more than the limit of %d", (long long)n, SC_MAX_MATERIALS);
        return;
    }
    c->mat_names = calloc((size_t)n + 1, sizeof *c->mat_names);
    c->mats = calloc((size_t)n + 1, sizeof *c->mats);
    if (!c->mat_names || !c->mats) {
        c->nomem = true;
        return;
    }
    for (const cJSON* it = v->child; it; it = it->next) {
        const char* name = it->string ? it->string : "";
        char p[PATH_LEN], q[128];
        sc_path_key(p, "materials", name);
        if (!valid_name(name)) {
            sc_errf(c, p, "invalid name %s (1 to %d characters: letters, digits, '_', '.', '-'; starting with a "
                       "letter, digit or '_')", sc_quote(q, sizeof q, name), SC_MAX_NAME);
            continue;
        }
        if (sc_map_get(&c->mat_map, name) >= 0) {
            sc_errf(c, "materials", "duplicate material %s", sc_quote(q, sizeof q, name));
            continue;
        }
        int32_t k = c->mat_count++;
        c->mat_names[k] = sc_dup_string(name);
        if (!c->mat_names[k] || !sc_map_put(&c->mat_map, c->mat_names[k], k)) {
            c->nomem = true;
            return;
        }
        parse_material(c, it, p, &c->mats[k]);
    }
    int32_t d = sc_map_get(&c->mat_map, "default");
    if (d >= 0) c->default_material = c->mats[d];
}

/* A material given by name or inline; absent: the "default" material. */
static void material_ref(ctx* c, const cJSON* obj, const char* path, dvi_material* out)
{
    const cJSON* v = sc_member(obj, "material");
    *out = c->default_material;
    if (!v) return;
    char p[PATH_LEN], q[128];
    sc_path_key(p, path, "material");
    if (cJSON_IsString(v)) {
        int32_t k = sc_map_get(&c->mat_map, v->valuestring);
        if (k < 0)
            sc_errf(c, p, "no material named %s", sc_quote(q, sizeof q, v->valuestring));
        else
            *out = c->mats[k];
    } else if (cJSON_IsObject(v)) {
        parse_material(c, v, p, out);
    } else {
        sc_errf(c, p, "must be a material name or an object (got %s)", sc_type_name(v));
    }
}

/* ---- names: first pass ------------------------------------------------------------------ */

/* The name of section[i] (object `it`) and its path in p when it is a valid
 * name; NULL when there is none, it is not a string (reported where the
 * object is read) or it is invalid (reported here). */
static const char* name_at(ctx* c, const cJSON* it, const char* section, int64_t i, char p[PATH_LEN])
{
    const cJSON* jn = sc_member(it, "name");
    if (!cJSON_IsObject(it) || !cJSON_IsString(jn)) return NULL;
    char pi[PATH_LEN], q[128];
    sc_path_key(p, sc_path_index(pi, section, i), "name");
    if (!valid_name(jn->valuestring)) {
        sc_errf(c, p, "invalid name %s (1 to %d characters: letters, digits, '_', '.', '-'; starting with a "
                   "letter, digit or '_')", sc_quote(q, sizeof q, jn->valuestring), SC_MAX_NAME);
        return NULL;
    }
    return jn->valuestring;
}

/* Registers name, section[i]'s (at path p), in map and as *slot, unless the
 * map has it already (reported). */
static void register_name(ctx* c, sc_map* map, const char* section, int64_t i, const char* name, const char* p,
                          char** slot)
{
    char q[128];
    const int32_t prev = sc_map_get(map, name);
    if (prev >= 0) {
        sc_errf(c, p, "duplicate name %s (also %s[%d])", sc_quote(q, sizeof q, name), section, prev);
        return;
    }
    *slot = sc_dup_string(name);
    if (!*slot || !sc_map_put(map, *slot, (int32_t)i)) c->nomem = true;
}

/* Registers the names of bodies and generators (one namespace) and joints,
 * so that references can be resolved in any order. */
static void collect_names(ctx* c, const cJSON* bodies, int64_t nb, const cJSON* gens, const cJSON* joints)
{
    dvi_scene* s = c->s;
    int64_t i = 0;
    for (const cJSON* it = bodies ? bodies->child : NULL; it && i < nb; it = it->next, i++) {
        char p[PATH_LEN];
        const char* name = name_at(c, it, "bodies", i, p);
        if (!name) continue;
        if (strcmp(name, "world") == 0)
            sc_errf(c, p, "\"world\" is reserved (it names the world in joints)");
        else
            register_name(c, &c->body_map, "bodies", i, name, p, &s->bodies[i].name);
    }
    i = 0;
    for (const cJSON* it = gens ? gens->child : NULL; it; it = it->next, i++) {
        char p[PATH_LEN], q[128];
        const char* name = name_at(c, it, "generators", i, p);
        if (!name) continue;
        int32_t pb = sc_map_get(&c->body_map, name), pg = sc_map_get(&c->gen_map, name);
        if (pb >= 0 || pg >= 0 || strcmp(name, "world") == 0) {
            if (pg >= 0)
                sc_errf(c, p, "duplicate name %s (also generators[%d])", sc_quote(q, sizeof q, name), pg);
            else if (pb >= 0)
                sc_errf(c, p, "duplicate name %s (also bodies[%d]; bodies and generators share names)",
                        sc_quote(q, sizeof q, name), pb);
            else
                sc_errf(c, p, "\"world\" is reserved (it names the world in joints)");
            continue;
        }
        register_name(c, &c->gen_map, "generators", i, name, p, &s->generators[i].name);
    }
    i = 0;
    for (const cJSON* it = joints ? joints->child : NULL; it; it = it->next, i++) {
        char p[PATH_LEN];
        const char* name = name_at(c, it, "joints", i, p);
        if (name) register_name(c, &c->joint_map, "joints", i, name, p, &s->joints[i].name);
    }
}

static dvi_body_type body_type_of(const dvi_scene* s, int64_t b)
{
    return b < s->body_count ? s->bodies[b].type : DVI_BODY_DYNAMIC;
}

/* ---- shapes ------------------------------------------------------------------------------ */

/* The keys of a shape: these first, then its class's parameters (a convex
 * kind) or its data (the static kinds below), then "dem_samples" (convex
 * kinds), then "filter". The kind names and parameters come from the shape
 * classes (collision.h). */
#define SHAPE_KEYS_MAX 24
static const char* const SHAPE_COMMON_KEYS[] = {"type", "position", "orientation", "material", NULL};
static const char* const HEIGHTFIELD_KEYS[] = {"nx", "ny", "dx", "dy", "heights", NULL};
static const char* const MESH_KEYS[] = {"file", NULL};

static const char* const* data_keys(dvi_shape_type t)
{
    return t == DVI_SHAPE_HEIGHTFIELD ? HEIGHTFIELD_KEYS : t == DVI_SHAPE_MESH ? MESH_KEYS : NULL;
}

static void add_key(const char** keys, int* n, const char* k)
{
    for (int i = 0; i < *n; i++)
        if (strcmp(keys[i], k) == 0) return;
    if (*n < SHAPE_KEYS_MAX - 1) keys[(*n)++] = k;
    keys[*n] = NULL;
}

/* The keys kind t allows (t = 0: every kind's, in kind order). */
static void shape_keys(dvi_shape_type t, const char** keys)
{
    int n = 0;
    for (int i = 0; SHAPE_COMMON_KEYS[i]; i++) add_key(keys, &n, SHAPE_COMMON_KEYS[i]);
    bool convex = false;
    for (int k = 1; k < col_shape_kinds; k++) {
        const col_shape_class* c = col_shape_classes[k];
        if (t != 0 && k != (int)t) continue;
        for (int p = 0; p < 2 && c->params[p].key; p++) add_key(keys, &n, c->params[p].key);
        if (data_keys((dvi_shape_type)k))
            for (const char* const* d = data_keys((dvi_shape_type)k); *d; d++) add_key(keys, &n, *d);
        if (c->core_support) convex = true;
    }
    if (convex) add_key(keys, &n, "dem_samples");
    add_key(keys, &n, "filter");
}

static const char* const FILTER_KEYS[] = {"category", "mask", NULL};

static char* join_path(const char* dir, const char* file)
{
    if (file[0] == '/' || !dir || !dir[0]) return sc_dup_string(file);
    size_t nd = strlen(dir), nf = strlen(file);
    char* p = malloc(nd + nf + 2);
    if (!p) return NULL;
    memcpy(p, dir, nd);
    p[nd] = '/';
    memcpy(p + nd + 1, file, nf + 1);
    return p;
}

static void parse_heights(ctx* c, const cJSON* v, const char* path, sc_shape* sh)
{
    int64_t nx = 0, ny = 0;
    bool okx = sc_int_field(c, v, path, "nx", true, 2, SC_MAX_HEIGHTS, &nx);
    bool oky = sc_int_field(c, v, path, "ny", true, 2, SC_MAX_HEIGHTS, &ny);
    sc_num_field(c, v, path, "dx", true, R_POS, &sh->dx);
    sc_num_field(c, v, path, "dy", true, R_POS, &sh->dy);
    char p[PATH_LEN];
    sc_path_key(p, path, "heights");
    const cJSON* h = sc_member(v, "heights");
    if (!h) {
        sc_errf(c, p, "missing");
        return;
    }
    if (!cJSON_IsArray(h)) {
        sc_errf(c, p, "must be an array of nx·ny numbers (got %s)", sc_type_name(h));
        return;
    }
    if (!okx || !oky) return;
    if (nx * ny > SC_MAX_HEIGHTS) {
        sc_errf(c, path, "nx·ny = %lld heights, more than the limit of %d", (long long)(nx * ny), SC_MAX_HEIGHTS);
        return;
    }
    int64_t n = sc_array_size(h);
    if (n != nx * ny) {
        sc_errf(c, p, "must have nx·ny = %lld elements (got %lld)", (long long)(nx * ny), (long long)n);
        return;
    }
    if (!sc_as_number_array(c, h, p, n, &sh->heights)) return;
    sh->nx = (int32_t)nx;
    sh->ny = (int32_t)ny;
}

static void parse_mesh(ctx* c, const cJSON* v, const char* path, sc_shape* sh)
{
    const char* file = sc_str_field(c, v, path, "file", true);
    if (!file) return;
    char p[PATH_LEN];
    sc_path_key(p, path, "file");
    if (!file[0] || strlen(file) > 4096) {
        sc_errf(c, p, "must be a file name (1 to 4096 characters)");
        return;
    }
    char* full = join_path(c->base_dir, file);
    if (!full) {
        c->nomem = true;
        return;
    }
    char msg[512];
    dvi_status st = dvi_obj_read(full, &sh->mesh, msg, sizeof msg);
    if (st == DVI_ERR_NOMEM) c->nomem = true;
    else if (st != DVI_OK) {
        char q[128];
        if (st == DVI_ERR_IO)
            sc_errf(c, p, "cannot read the mesh file %s: %s", sc_quote(q, sizeof q, file), msg);
        else
            sc_errf(c, p, "%s", msg);
    }
    free(full);
}

/* "dem_samples": [[x, y, z, area], ...], points of the shape (shape frame)
 * for the hysteretic height-field model of DEM mode. */
static void parse_dem_samples(ctx* c, const cJSON* v, const char* path, sc_shape* sh, dvi_body_type body_type)
{
    char p[PATH_LEN];
    sc_path_key(p, path, "dem_samples");
    int64_t n = 0;
    const cJSON* a = sc_array_field(c, v, path, "dem_samples", SC_MAX_DEM_SAMPLES, NULL, &n);
    if (!a) return;
    if (body_type == DVI_BODY_FIXED) {
        sc_errf(c, p, "needs a dynamic or kinematic body (this body is fixed)");
        return;
    }
    if (n == 0) return;
    sh->dem_samples = malloc((size_t)n * 4 * sizeof(double));
    if (!sh->dem_samples) {
        c->nomem = true;
        return;
    }
    int64_t i = 0;
    for (const cJSON* it = a->child; it; it = it->next, i++) {
        char pe[PATH_LEN], pa[PATH_LEN];
        double* q = sh->dem_samples + 4 * i;
        sc_path_index(pe, p, i);
        /* the first bad one only */
        if (!sc_as_vec(c, it, pe, 4, q) || !sc_check_range(c, sc_path_index(pa, pe, 3), q[3], R_POS)) {
            free(sh->dem_samples);
            sh->dem_samples = NULL;
            return;
        }
    }
    sh->dem_sample_count = (int32_t)n;
}

static void parse_shape(ctx* c, const cJSON* v, const char* path, sc_shape* sh, dvi_body_type body_type)
{
    memset(sh, 0, sizeof *sh);
    sh->q[0] = 1.0;
    sh->material = c->default_material;
    if (!sc_is_object(c, v, path)) return;
    const char* types[SHAPE_KEYS_MAX] = {NULL};
    for (int k = 1; k < col_shape_kinds && k < SHAPE_KEYS_MAX; k++) types[k - 1] = col_shape_classes[k]->name;
    const char* all[SHAPE_KEYS_MAX];
    shape_keys((dvi_shape_type)0, all);
    int t = sc_enum_field(c, v, path, "type", true, types);
    if (t < 0) {
        sc_check_keys(c, v, path, all, NULL, NULL);
        return;
    }
    sh->type = (dvi_shape_type)(t + 1);
    const col_shape_class* cls = col_shape_class_of(sh->type);
    const char* keys[SHAPE_KEYS_MAX];
    shape_keys(sh->type, keys);
    sc_check_keys(c, v, path, keys, all, cls->article);
    sc_vec_field(c, v, path, "position", false, 3, sh->pos);
    sc_quat_field(c, v, path, "orientation", sh->q);
    material_ref(c, v, path, &sh->material);
    sh->category = 1u;
    sh->mask = 0xFFFFFFFFu;
    const cJSON* fo = sc_member(v, "filter");
    char fp[PATH_LEN];
    if (fo && sc_is_object(c, fo, sc_path_key(fp, path, "filter"))) {
        sc_check_keys(c, fo, fp, FILTER_KEYS, NULL, NULL);
        int64_t iv;
        if (sc_int_field(c, fo, fp, "category", false, 1, 4294967295.0, &iv)) sh->category = (uint32_t)iv;
        if (sc_int_field(c, fo, fp, "mask", false, 0, 4294967295.0, &iv)) sh->mask = (uint32_t)iv;
    }
    for (int p = 0; p < 2 && cls->params[p].key; p++) {
        const col_shape_param* pp = &cls->params[p];
        double* dst = col_shape_param_ptr(pp, &sh->radius, &sh->half_length, sh->half);
        if (col_shape_param_length(pp) == 1) {
            sc_num_field(c, v, path, pp->key, true, R_POS, dst);
        } else if (sc_vec_field(c, v, path, pp->key, true, 3, dst)) {
            char pk[PATH_LEN], pe[PATH_LEN];
            sc_path_key(pk, path, pp->key);
            for (int k = 0; k < 3; k++) sc_check_range(c, sc_path_index(pe, pk, k), dst[k], R_POS);
        }
    }
    if (sh->type == DVI_SHAPE_HEIGHTFIELD) parse_heights(c, v, path, sh);
    if (sh->type == DVI_SHAPE_MESH) parse_mesh(c, v, path, sh);
    if (cls->core_support) parse_dem_samples(c, v, path, sh, body_type);
    if (cls->fixed_only && body_type != DVI_BODY_FIXED) {
        char p[PATH_LEN];
        sc_errf(c, sc_path_key(p, path, "type"), "%s needs a fixed body (this body is %s)", cls->article,
                body_type == DVI_BODY_DYNAMIC ? "dynamic" : "kinematic");
    }
}

/* ---- bodies ------------------------------------------------------------------------------ */

static const char* const BODY_TYPES[] = {"dynamic", "fixed", "kinematic", NULL};
static const char* const BODY_KEYS_DYNAMIC[] = {"name",          "type",          "mass",     "density",
                                                "inertia",       "position",      "orientation", "velocity",
                                                "angular_velocity", "gravity_scale", "applied_force",
                                                "applied_torque", "shapes",       NULL};
static const char* const BODY_KEYS_FIXED[] = {"name", "type", "position", "orientation", "shapes", NULL};
static const char* const BODY_KEYS_KINEMATIC[] = {"name",     "type",             "position", "orientation",
                                                  "velocity", "angular_velocity", "shapes",   NULL};

/* Symmetric positive definite, with the tolerances of dvi_body_create. */
static bool spd3(const double* J, char* why, size_t n)
{
    double s = 0.0;
    for (int k = 0; k < 9; k++) s = fabs(J[k]) > s ? fabs(J[k]) : s;
    for (int i = 0; i < 3; i++)
        for (int j = i + 1; j < 3; j++)
            if (fabs(J[3 * i + j] - J[3 * j + i]) > 1e-12 * s) {
                char a[32], b[32];
                snprintf(why, n, "must be symmetric (row %d column %d is %s, row %d column %d is %s)", i, j,
                         sc_num_text(a, J[3 * i + j]), j, i, sc_num_text(b, J[3 * j + i]));
                return false;
            }
    double d1 = J[0] * J[4] - J[1] * J[3];
    double det = J[0] * (J[4] * J[8] - J[5] * J[7]) - J[1] * (J[3] * J[8] - J[5] * J[6]) +
                 J[2] * (J[3] * J[7] - J[4] * J[6]);
    if (!(J[0] > 0.0) || !(d1 > 1e-14 * s * s) || !(det > 1e-14 * s * s * s)) {
        snprintf(why, n, "must be positive definite (this one is singular or indefinite: determinant %.6g)", det);
        return false;
    }
    return true;
}

static void parse_inertia(ctx* c, const cJSON* jb, const char* path, sc_body* b, const sc_shape* first)
{
    char p[PATH_LEN], why[256];
    sc_path_key(p, path, "inertia");
    const cJSON* v = sc_member(jb, "inertia");
    if (!v || (cJSON_IsString(v) && strcmp(v->valuestring, "auto") == 0)) {
        double vol, J[9];
        if (!first || !sc_shape_mass_properties(first, &vol, J)) {
            sc_errf(c, p, "%s (no first shape with a volume to derive it from: sphere, box, capsule or cylinder)",
                    v ? "\"auto\" is not possible" : "missing");
            return;
        }
        if (first->pos[0] != 0.0 || first->pos[1] != 0.0 || first->pos[2] != 0.0) {
            sc_errf(c, p, "\"auto\" needs the first shape at the body origin, the centre of mass (its position is "
                       "(%g, %g, %g))", first->pos[0], first->pos[1], first->pos[2]);
            return;
        }
        for (int k = 0; k < 9; k++) b->inertia[k] = b->mass * J[k];
        return;
    }
    if (cJSON_IsArray(v) && sc_array_size(v) == 3 && cJSON_IsArray(v->child)) { /* 3×3 */
        bool ok = true;
        int i = 0;
        for (const cJSON* row = v->child; row; row = row->next, i++) {
            char pr[PATH_LEN];
            ok = sc_as_vec(c, row, sc_path_index(pr, p, i), 3, b->inertia + 3 * i) && ok;
        }
        if (ok && !spd3(b->inertia, why, sizeof why)) sc_errf(c, p, "%s", why);
        return;
    }
    if (cJSON_IsArray(v) && sc_array_size(v) == 3) { /* diagonal */
        double d[3];
        if (!sc_as_vec(c, v, p, 3, d)) return;
        memset(b->inertia, 0, sizeof b->inertia);
        bool ok = true;
        for (int k = 0; k < 3; k++) {
            char pe[PATH_LEN];
            ok = sc_check_range(c, sc_path_index(pe, p, k), d[k], R_POS) && ok;
            b->inertia[4 * k] = d[k];
        }
        if (ok && !spd3(b->inertia, why, sizeof why)) sc_errf(c, p, "%s", why);
        return;
    }
    if (cJSON_IsString(v)) {
        char q[128];
        sc_errf(c, p, "unknown value %s (\"auto\", [Ixx, Iyy, Izz] or a 3×3 array of rows)",
                sc_quote(q, sizeof q, v->valuestring));
        return;
    }
    sc_errf(c, p, "must be \"auto\", [Ixx, Iyy, Izz] or a 3×3 array of rows (got %s%s)", sc_type_name(v),
            cJSON_IsArray(v) ? " of another size" : "");
}

static void parse_body(ctx* c, const cJSON* jb, const char* path, sc_body* b)
{
    b->type = DVI_BODY_DYNAMIC;
    b->q[0] = 1.0;
    b->gravity_scale = 1.0;
    if (!sc_is_object(c, jb, path)) return;
    const cJSON* jn = sc_member(jb, "name");
    if (jn && !cJSON_IsString(jn)) {
        char p[PATH_LEN];
        sc_errf(c, sc_path_key(p, path, "name"), "must be a string (got %s)", sc_type_name(jn));
    }
    int t = sc_member(jb, "type") ? sc_enum_field(c, jb, path, "type", false, BODY_TYPES) : 0;
    if (t < 0) t = 0;
    b->type = t == 0 ? DVI_BODY_DYNAMIC : t == 1 ? DVI_BODY_FIXED : DVI_BODY_KINEMATIC;
    static const char* const* const ALLOWED[3] = {BODY_KEYS_DYNAMIC, BODY_KEYS_FIXED, BODY_KEYS_KINEMATIC};
    static const char* const OWNER[3] = {"a dynamic body", "a fixed body", "a kinematic body"};
    sc_check_keys(c, jb, path, ALLOWED[t], BODY_KEYS_DYNAMIC, OWNER[t]);
    sc_vec_field(c, jb, path, "position", false, 3, b->pos);
    sc_quat_field(c, jb, path, "orientation", b->q);
    if (b->type != DVI_BODY_FIXED) {
        sc_vec_field(c, jb, path, "velocity", false, 3, b->v);
        sc_vec_field(c, jb, path, "angular_velocity", false, 3, b->w);
    }

    /* shapes */
    int64_t ns = 0;
    const cJSON* shapes = sc_array_field(c, jb, path, "shapes", SC_MAX_SHAPES_PER_BODY, NULL, &ns);
    dvi_scene* s = c->s;
    b->shape_first = s->shape_count;
    if (ns > 0 && s->shape_count + ns > MAX_SHAPES_TOTAL) {
        char p[PATH_LEN];
        sc_errf(c, sc_path_key(p, path, "shapes"), "more than %d shapes in the scene", MAX_SHAPES_TOTAL);
        ns = 0;
    }
    if (ns > 0) {
        void* nsh = s->shapes;
        if (!base_mem_grow(NULL, &nsh, &c->shape_cap, (size_t)(s->shape_count + ns), sizeof *s->shapes, 16)) {
            c->nomem = true;
            return;
        }
        s->shapes = nsh;
    }
    int64_t k = 0;
    for (const cJSON* it = shapes ? shapes->child : NULL; it && k < ns; it = it->next, k++) {
        char p[PATH_LEN], pk[PATH_LEN];
        sc_path_key(p, path, "shapes");
        sc_shape* sh = &s->shapes[s->shape_count++];
        parse_shape(c, it, sc_path_index(pk, p, k), sh, b->type);
        b->shape_count++;
    }
    const sc_shape* first = b->shape_count > 0 ? &s->shapes[b->shape_first] : NULL;

    if (b->type != DVI_BODY_DYNAMIC) return;
    b->has_force = sc_vec_field(c, jb, path, "applied_force", false, 3, b->force);
    b->has_force = sc_vec_field(c, jb, path, "applied_torque", false, 3, b->torque) || b->has_force;
    sc_num_field(c, jb, path, "gravity_scale", false, R_ANY, &b->gravity_scale);
    const cJSON* jm = sc_member(jb, "mass");
    const cJSON* jd = sc_member(jb, "density");
    char p[PATH_LEN];
    if (jm && jd) {
        sc_errf(c, sc_path_key(p, path, "density"), "give \"mass\" or \"density\", not both");
        return;
    }
    if (!jm && !jd) {
        sc_errf(c, sc_path_key(p, path, "mass"), "missing (a dynamic body needs \"mass\" or \"density\")");
        return;
    }
    if (jm) {
        if (!sc_num_field(c, jb, path, "mass", true, R_POS, &b->mass)) return;
    } else {
        double rho, vol, J[9];
        if (!sc_num_field(c, jb, path, "density", true, R_POS, &rho)) return;
        if (!first || !sc_shape_mass_properties(first, &vol, J)) {
            sc_errf(c, sc_path_key(p, path, "density"),
                    "needs a first shape with a volume (sphere, box, capsule or cylinder)");
            return;
        }
        b->mass = rho * vol;
        if (!(b->mass > 0.0) || !isfinite(b->mass)) {
            sc_errf(c, sc_path_key(p, path, "density"), "gives a mass of %g kg", b->mass);
            return;
        }
    }
    parse_inertia(c, jb, path, b, first);
}

/* ---- generators ---------------------------------------------------------------------------- */

static const char* const GENERATOR_TYPES[] = {"granular_bed", NULL};
static const char* const GENERATOR_KEYS[] = {"type",    "name",      "region",    "radius",  "gap",     "jitter",
                                             "seed",    "material",  "density",   "max_count", "exclude", "packing",
                                             NULL};
static const char* const PACKINGS[] = {"cubic", "hexagonal", NULL};
static const char* const EXCLUDE_KEYS[] = {"centre", "radius", NULL};
#define SC_MAX_EXCLUDE 1000


static const char* const REGION_KEYS[] = {"min", "max", NULL};
static const char* const RADIUS_KEYS[] = {"distribution", "min", "max", NULL};
static const char* const DISTRIBUTIONS[] = {"uniform", NULL};

/* Returns the number of bodies the generator makes (0 when invalid). */
static int64_t parse_generator(ctx* c, const cJSON* v, const char* path, sc_generator* g)
{
    if (!sc_is_object(c, v, path)) return 0;
    int t = sc_enum_field(c, v, path, "type", true, GENERATOR_TYPES);
    sc_check_keys(c, v, path, GENERATOR_KEYS, NULL, NULL);
    const cJSON* jn = sc_member(v, "name");
    char p[PATH_LEN];
    if (!jn) sc_errf(c, sc_path_key(p, path, "name"), "missing");
    else if (!cJSON_IsString(jn))
        sc_errf(c, sc_path_key(p, path, "name"), "must be a string (got %s)", sc_type_name(jn));
    bool ok = t >= 0 && g->name != NULL;

    /* region */
    sc_path_key(p, path, "region");
    const cJSON* jr = sc_member(v, "region");
    if (!jr) {
        sc_errf(c, p, "missing");
        ok = false;
    } else if (!sc_is_object(c, jr, p)) {
        ok = false;
    } else {
        sc_check_keys(c, jr, p, REGION_KEYS, NULL, NULL);
        bool a = sc_vec_field(c, jr, p, "min", true, 3, g->lo);
        bool b = sc_vec_field(c, jr, p, "max", true, 3, g->hi);
        if (a && b && !(g->lo[0] < g->hi[0] && g->lo[1] < g->hi[1] && g->lo[2] < g->hi[2])) {
            sc_errf(c, p, "min must be below max on every axis");
            a = false;
        }
        ok = ok && a && b;
    }
    /* radius */
    sc_path_key(p, path, "radius");
    const cJSON* jrad = sc_member(v, "radius");
    if (!jrad) {
        sc_errf(c, p, "missing");
        ok = false;
    } else if (cJSON_IsNumber(jrad)) {
        ok = sc_num_field(c, v, path, "radius", true, R_POS, &g->rmin) && ok;
        g->rmax = g->rmin;
    } else if (cJSON_IsObject(jrad)) {
        sc_check_keys(c, jrad, p, RADIUS_KEYS, NULL, NULL);
        ok = sc_enum_field(c, jrad, p, "distribution", true, DISTRIBUTIONS) >= 0 && ok;
        bool a = sc_num_field(c, jrad, p, "min", true, R_POS, &g->rmin);
        bool b = sc_num_field(c, jrad, p, "max", true, R_POS, &g->rmax);
        if (a && b && !(g->rmin <= g->rmax)) {
            sc_errf(c, p, "min (%g) must not exceed max (%g)", g->rmin, g->rmax);
            a = false;
        }
        ok = ok && a && b;
    } else {
        sc_errf(c, p, "must be a number or {\"distribution\": \"uniform\", \"min\": ..., \"max\": ...} (got %s)",
                sc_type_name(jrad));
        ok = false;
    }
    sc_num_field(c, v, path, "gap", false, R_NONNEG, &g->gap);
    if (sc_num_field(c, v, path, "jitter", false, R_NONNEG, &g->jitter) && g->jitter > 0.5 * g->gap) {
        sc_errf(c, sc_path_key(p, path, "jitter"), "must be <= gap/2 = %g (or spheres could overlap)", 0.5 * g->gap);
        ok = false;
    }
    int64_t seed = 0;
    if (sc_int_field(c, v, path, "seed", false, 0, MAX_SEED, &seed)) g->seed = (uint64_t)seed;
    if (sc_member(v, "packing")) {
        int pk = sc_enum_field(c, v, path, "packing", false, PACKINGS);
        if (pk < 0) ok = false;
        else g->packing = pk;
    }
    /* hexagonal neighbours lie off the axes: a jitter of j per axis brings
     * two of them up to 2·√3·j closer */
    if (g->packing == SC_PACKING_HEXAGONAL && g->jitter > 0.5 * g->gap / SC_SQRT3 && g->jitter <= 0.5 * g->gap) {
        sc_errf(c, sc_path_key(p, path, "jitter"), "must be <= gap/(2·√3) = %g with hexagonal packing (or spheres "
                "could overlap)", 0.5 * g->gap / SC_SQRT3);
        ok = false;
    }
    ok = sc_num_field(c, v, path, "density", true, R_POS, &g->density) && ok;
    material_ref(c, v, path, &g->material);
    int64_t max_count = -1;
    if (sc_member(v, "max_count") && !sc_int_field(c, v, path, "max_count", false, 0, SC_MAX_BODIES, &max_count))
        ok = false;
    /* exclude: spheres the bed leaves empty (an obstacle sunk into it) */
    int64_t nx = 0;
    const cJSON* jx = sc_array_field(c, v, path, "exclude", SC_MAX_EXCLUDE, NULL, &nx);
    if (sc_member(v, "exclude") && !jx) ok = false;
    if (jx && nx > 0) {
        g->exclude = calloc((size_t)nx * 4, sizeof *g->exclude);
        if (!g->exclude) {
            c->nomem = true;
            return 0;
        }
        int64_t i = 0;
        char pe[PATH_LEN];
        sc_path_key(p, path, "exclude");
        for (const cJSON* it = jx->child; it; it = it->next, i++) {
            sc_path_index(pe, p, i);
            double* e = g->exclude + 4 * i;
            if (!sc_is_object(c, it, pe)) {
                ok = false;
                continue;
            }
            sc_check_keys(c, it, pe, EXCLUDE_KEYS, NULL, NULL);
            bool a = sc_vec_field(c, it, pe, "centre", true, 3, e);
            bool b = sc_num_field(c, it, pe, "radius", true, R_POS, &e[3]);
            ok = ok && a && b;
        }
        g->exclude_count = (int32_t)nx;
    }
    if (!ok) return 0;

    double sites = sc_generator_lattice(g);
    if (sites < 1.0) {
        sc_errf(c, sc_path_key(p, path, "region"),
                g->packing == SC_PACKING_HEXAGONAL
                 ? "too small for one sphere (hexagonal packing: at least 1.5·s × 1.29·s × s, s = 2·radius + gap "
                   "= %g m)"
                 : "too small for one sphere (cell side 2·radius + gap = %g m)",
                g->spacing);
        return 0;
    }
    g->sites = sites > 9e18 ? INT64_MAX : (int64_t)sites;
    int64_t free_cells = g->sites;
    if (g->exclude_count > 0) {
        int32_t bad = -1;
        int64_t ex = sc_generator_excluded_cells(g, &bad);
        if (ex < 0) {
            char pe[PATH_LEN];
            sc_errf(c, sc_path_index(pe, sc_path_key(p, path, "exclude"), bad),
                    "covers more than %.0f lattice cells (a smaller radius, or a smaller region)",
                    SC_MAX_EXCLUDE_CELLS);
            return 0;
        }
        free_cells -= ex;
    }
    g->count = max_count >= 0 && max_count < free_cells ? max_count : free_cells;
    if (g->count > SC_MAX_BODIES) {
        sc_errf(c, path, "makes %.0f spheres, more than the limit of %d (set max_count, or a larger radius or gap)",
                sites, SC_MAX_BODIES);
        g->count = 0;
        return 0;
    }
    return g->count;
}

/* ---- joints ---------------------------------------------------------------------------------- */

static const char* const JOINT_TYPES[] = {"spherical", "revolute", "prismatic", "fixed", "distance", NULL};
static const char* const JOINT_KEYS_ALL[] = {"name", "type", "body_a", "body_b", "anchor", "anchor_b", "axis",
                                             "motor", "collide", NULL};
static const char* const JOINT_KEYS[5][9] = {
    {"name", "type", "body_a", "body_b", "anchor", "collide", NULL},
    {"name", "type", "body_a", "body_b", "anchor", "axis", "motor", "collide", NULL},
    {"name", "type", "body_a", "body_b", "anchor", "axis", "motor", "collide", NULL},
    {"name", "type", "body_a", "body_b", "anchor", "collide", NULL},
    {"name", "type", "body_a", "body_b", "anchor", "anchor_b", "collide", NULL},
};
static const char* const JOINT_OWNER[5] = {"a spherical joint", "a revolute joint", "a prismatic joint",
                                           "a fixed joint", "a distance joint"};
static const char* const MOTOR_TYPES[] = {"speed", "torque", "linear_speed", NULL};
static const char* const MOTOR_KEYS_ALL[] = {"type", "speed", "ramp_time", "damping", "torque", NULL};
static const char* const MOTOR_KEYS_SPEED[] = {"type", "speed", "ramp_time", "damping", NULL};
static const char* const MOTOR_KEYS_TORQUE[] = {"type", "torque", NULL};

static void parse_motor(ctx* c, const cJSON* v, const char* path, sc_joint* j)
{
    if (!sc_is_object(c, v, path)) return;
    int t = sc_enum_field(c, v, path, "type", true, MOTOR_TYPES);
    if (t < 0) {
        sc_check_keys(c, v, path, MOTOR_KEYS_ALL, NULL, NULL);
        return;
    }
    sc_check_keys(c, v, path, t == 1 ? MOTOR_KEYS_TORQUE : MOTOR_KEYS_SPEED, MOTOR_KEYS_ALL,
                  t == 1 ? "a torque motor" : "a speed motor");
    char p[PATH_LEN];
    if (t == 2 && j->def.type != DVI_JOINT_PRISMATIC)
        sc_errf(c, sc_path_key(p, path, "type"), "\"linear_speed\" needs a prismatic joint");
    if (t != 2 && j->def.type != DVI_JOINT_REVOLUTE)
        sc_errf(c, sc_path_key(p, path, "type"), "\"%s\" needs a revolute joint", MOTOR_TYPES[t]);
    j->def.motor = t == 0 ? DVI_MOTOR_ROTATION_SPEED : t == 1 ? DVI_MOTOR_ROTATION_TORQUE : DVI_MOTOR_LINEAR_SPEED;
    if (t == 1) {
        sc_num_field(c, v, path, "torque", true, R_ANY, &j->def.motor_torque);
    } else {
        sc_num_field(c, v, path, "speed", true, R_ANY, &j->def.motor_speed);
        sc_num_field(c, v, path, "ramp_time", false, R_NONNEG, &j->def.motor_ramp_time);
        sc_num_field(c, v, path, "damping", false, R_NONNEG, &j->def.motor_damping);
    }
}

static void parse_joint(ctx* c, const cJSON* v, const char* path, sc_joint* j)
{
    j->a = j->b = -1;
    j->def = dvi_default_joint_def();
    if (!sc_is_object(c, v, path)) return;
    const cJSON* jn = sc_member(v, "name");
    char p[PATH_LEN], q[128];
    if (jn && !cJSON_IsString(jn))
        sc_errf(c, sc_path_key(p, path, "name"), "must be a string (got %s)", sc_type_name(jn));
    int t = sc_enum_field(c, v, path, "type", true, JOINT_TYPES);
    if (t < 0) sc_check_keys(c, v, path, JOINT_KEYS_ALL, NULL, NULL);
    else sc_check_keys(c, v, path, JOINT_KEYS[t], JOINT_KEYS_ALL, JOINT_OWNER[t]);
    j->def.type = t >= 0 ? (dvi_joint_type)(t + 1) : DVI_JOINT_SPHERICAL;
    sc_bool_field(c, v, path, "collide", &j->def.collide_connected);

    const cJSON* ja = sc_member(v, "body_a");
    int64_t a = -1, b = -1;
    bool a_ok = true;
    if (ja && !cJSON_IsNull(ja) && !(cJSON_IsString(ja) && strcmp(ja->valuestring, "world") == 0)) {
        a = sc_body_ref(c, ja, sc_path_key(p, path, "body_a"));
        a_ok = a >= 0;
    }
    const cJSON* jb = sc_member(v, "body_b");
    sc_path_key(p, path, "body_b");
    if (!jb)
        sc_errf(c, p, "missing");
    else if (cJSON_IsString(jb) && strcmp(jb->valuestring, "world") == 0)
        sc_errf(c, p, "must be a body (\"world\" can only be body_a)");
    else
        b = sc_body_ref(c, jb, p);
    j->a = (int32_t)a;
    j->b = (int32_t)b;
    if (a >= 0 && a == b)
        sc_errf(c, p, "body_a and body_b are the same body (%s)", sc_quote(q, sizeof q, jb->valuestring));
    else if (a_ok && b >= 0 && body_type_of(c->s, b) != DVI_BODY_DYNAMIC &&
             (a < 0 || body_type_of(c->s, a) != DVI_BODY_DYNAMIC))
        sc_errf(c, path, "at least one of the two bodies must be dynamic");

    sc_vec_field(c, v, path, "anchor", true, 3, j->def.anchor);
    if (t + 1 == DVI_JOINT_REVOLUTE || t + 1 == DVI_JOINT_PRISMATIC) {
        if (sc_vec_field(c, v, path, "axis", true, 3, j->def.axis) && !(v3_norm(j->def.axis) > 1e-12))
            sc_errf(c, sc_path_key(p, path, "axis"), "must not be zero");
    }
    if (t + 1 == DVI_JOINT_DISTANCE) {
        if (sc_vec_field(c, v, path, "anchor_b", true, 3, j->def.anchor_b)) {
            double d[3];
            v3_sub(d, j->def.anchor_b, j->def.anchor);
            if (!(v3_norm(d) > 1e-12)) sc_errf(c, sc_path_key(p, path, "anchor_b"), "must differ from anchor");
        }
    }
    const cJSON* jm = sc_member(v, "motor");
    if (jm && t >= 0 && (t + 1 == DVI_JOINT_REVOLUTE || t + 1 == DVI_JOINT_PRISMATIC))
        parse_motor(c, jm, sc_path_key(p, path, "motor"), j);
}

/* ---- formulation --------------------------------------------------------------------------- */

static const char* const FORMULATION_KEYS[] = {"method",
                                               "dt",
                                               "solver",
                                               "friction_law",
                                               "friction",
                                               "tolerance",
                                               "block_tolerance",
                                               "max_iterations",
                                               "warm_start",
                                               "warm_start_scale",
                                               "threads",
                                               "exact_sums",
                                               "apgd",
                                               "pgs",
                                               "jacobi",
                                               "lemke",
                                               "collision_envelope",
                                               "contact_recovery_speed",
                                               "joint_recovery_speed",
                                               "bounce_threshold",
                                               "joint_solve",
                                               "coulomb_check",
                                               "dem",
                                               "health",
                                               NULL};
static const char* const HEALTH_KEYS[] = {"enabled",          "energy_growth",        "blowup_factor",
                                          "region_margin",    "penetration_fraction", "joint_fraction", "audit_fraction",
                                          "hover_envelope_fraction", "hover_work_fraction", NULL};
static const char* const APGD_KEYS[] = {"restart", "grow", "shrink", "precondition", NULL};
static const char* const PGS_KEYS[] = {"omega", "symmetric", "block_iterations", NULL};
static const char* const JACOBI_KEYS[] = {"omega", NULL};
static const char* const LEMKE_KEYS[] = {"friction_directions", "max_pivots", "max_lcp_size", "coulomb", "orient",
                                         "orient_grid", NULL};
static const char* const METHODS[] = {"dvi", "dem", NULL};
/* formulation.dem: the fields of dvi_dem_settings */
static const char* const DEM_KEYS[] = {"normal_model",         "constants",       "k_n",
                                       "k_t",                  "gamma_n",         "gamma_t",
                                       "characteristic_speed", "rolling_damping", "terrain_slip_speed",
                                       "max_speed",            NULL};
static const char* const DEM_MODELS[] = {"hertz", "hooke", NULL};
static const char* const DEM_CONSTANTS[] = {"from_material", "direct", NULL};

/* True when name is a built-in solver; list receives the names, quoted. */
bool sc_known_solver(const char* name, char* list, size_t size)
{
    list[0] = '\0';
    for (int32_t i = 0; i < dvi_solver_count(); i++) {
        const char* n = dvi_solver_name(i);
        size_t o = strlen(list);
        snprintf(list + o, size - o, "%s\"%s\"", i ? ", " : "", n);
    }
    return dvi_solver_index(name) >= 0;
}

void sc_check_method(ctx* c, const char* path, const char* method)
{
    char q[128];
    if (sc_index_of(METHODS, method) >= 0) return;
    const char* near = sc_suggest(method, METHODS);
    if (near)
        sc_errf(c, path, "unknown method %s (did you mean \"%s\"? \"dvi\" or \"dem\")", sc_quote(q, sizeof q, method),
                near);
    else
        sc_errf(c, path, "unknown method %s (\"dvi\" or \"dem\")", sc_quote(q, sizeof q, method));
}

bool sc_friction_law(const char* word, dvi_friction_law* law)
{
    if (strcmp(word, "ccp") == 0) *law = DVI_LAW_CCP;
    else if (strcmp(word, "coulomb") == 0) *law = DVI_LAW_COULOMB;
    else return false;
    return true;
}

/* Whether two shapes of different bodies, one of them dynamic, both have
 * rolling friction (spin: spinning friction), so that their contact has
 * spin and rolling rows (a friction_rolling block; the world step's rule);
 * a generator's bodies are dynamic spheres of its material. On true, where
 * names the two ("bodies[3].shapes[0] (\"ball\") and bodies[0].shapes[0]
 * (\"ground\")"). O(shapes + generators). */
typedef struct sc_place {
    int32_t body, shape, gen; /* gen >= 0: generators[gen]; else bodies[body].shapes[shape] */
} sc_place;

static double sc_place_coefficient(const dvi_material* m, bool spin)
{
    return spin ? m->spinning_friction : m->rolling_friction;
}

static void sc_place_name(const dvi_scene* s, sc_place at, char* out, size_t size)
{
    if (at.gen >= 0) {
        snprintf(out, size, "generators[%d] (\"%s\")", (int)at.gen, s->generators[at.gen].name);
    } else {
        const char* name = s->bodies[at.body].name;
        snprintf(out, size, "bodies[%d].shapes[%d]%s%s%s", (int)at.body, (int)at.shape, name ? " (\"" : "",
                 name ? name : "", name ? "\")" : "");
    }
}

static bool sc_rolling_pair(const dvi_scene* s, bool spin, char* where, size_t size)
{
    sc_place a = {-1, -1, -1}, b = {-1, -1, -1};
    for (int32_t i = 0; i < s->body_count && a.body < 0; i++) {
        const sc_body* bd = &s->bodies[i];
        if (bd->type != DVI_BODY_DYNAMIC) continue;
        for (int32_t k = 0; k < bd->shape_count && a.body < 0; k++)
            if (sc_place_coefficient(&s->shapes[bd->shape_first + k].material, spin) > 0.0) a = (sc_place){i, k, -1};
    }
    for (int32_t g = 0; g < s->generator_count && a.body < 0 && a.gen < 0; g++)
        if (s->generators[g].count > 0 && sc_place_coefficient(&s->generators[g].material, spin) > 0.0)
            a = (sc_place){-1, -1, g};
    if (a.body < 0 && a.gen < 0) return false;
    for (int32_t i = 0; i < s->body_count && b.body < 0; i++) {
        const sc_body* bd = &s->bodies[i];
        if (i == a.body) continue;
        for (int32_t k = 0; k < bd->shape_count && b.body < 0; k++)
            if (sc_place_coefficient(&s->shapes[bd->shape_first + k].material, spin) > 0.0) b = (sc_place){i, k, -1};
    }
    for (int32_t g = 0; g < s->generator_count && b.body < 0 && b.gen < 0; g++)
        if (s->generators[g].count > (g == a.gen ? 1 : 0) &&
            sc_place_coefficient(&s->generators[g].material, spin) > 0.0)
            b = (sc_place){-1, -1, g};
    if (b.body < 0 && b.gen < 0) return false;
    char na[160], nb[160];
    sc_place_name(s, a, na, sizeof na);
    sc_place_name(s, b, nb, sizeof nb);
    if (a.gen >= 0 && a.gen == b.gen)
        snprintf(where, size, "two bodies of %s", na);
    else
        snprintf(where, size, "%s and %s", na, nb);
    return true;
}

void sc_check_law(ctx* c, const char* path, const char* method, const char* solver,
                  const dvi_solver_settings* settings, dvi_friction_law law, const char* law_where, bool options)
{
    if (!solver || (method && strcmp(method, "dvi") != 0)) return;
    char list[256];
    if (!sc_known_solver(solver, list, sizeof list)) return; /* reported where it was read */
    const dvi_scene* s = c->s;
    /* the kinds of block the scene's steps may give the solver */
    uint32_t kinds = 1u << DVI_BLOCK_FRICTION;
    if (s->joint_count > 0) kinds |= 1u << DVI_BLOCK_BILATERAL;
    char where[400] = "";
    const char* coefficient = "rolling_friction";
    if (sc_rolling_pair(s, false, where, sizeof where) ||
        (coefficient = "spinning_friction", sc_rolling_pair(s, true, where, sizeof where)))
        kinds |= 1u << DVI_BLOCK_FRICTION_ROLLING;
    char names[200];
    ccp_solver_names_for(law, kinds, options, names, sizeof names);
    const int32_t index = dvi_solver_index(solver);
    const dvi_friction_law has = dvi_solver_law_with(index, settings);
    const char* setting = dvi_solver_law_setting(index); /* "lemke.coulomb" */
    if (has != law) {
        sc_errf(c, path, "\"%s\"%s%s solves %s but %s is \"%s\" (its solvers: %s)", solver,
                !setting ? "" : has != dvi_solver_law(index) ? " with " : " without ", setting ? setting : "",
                has == DVI_LAW_COULOMB ? "Coulomb's law" : "the CCP", law_where, dvi_friction_law_string(law), names);
        return;
    }
    for (int k = 0; k < 32; k++) {
        if (!(kinds & (1u << k)) || dvi_solver_supports(index, law, (dvi_block_kind)k)) continue;
        const char* of = law == DVI_LAW_COULOMB ? "Coulomb's law" : "the CCP";
        if (k == DVI_BLOCK_FRICTION_ROLLING)
            sc_errf(c, path,
                    "\"%s\" does not take the friction_rolling blocks of %s, which the contacts between %s give "
                    "(%s > 0 on both); solvers that do: %s",
                    solver, of, where, coefficient, names);
        else
            sc_errf(c, path, "\"%s\" does not take the %s blocks of %s that this scene gives; solvers that do: %s",
                    solver, ccp_block_kind_name((dvi_block_kind)k), of, names);
        return;
    }
}

/* formulation.dem (read whatever the method, so that --method dem uses it). */
static void parse_dem_settings(ctx* c, const cJSON* o, const char* p)
{
    dvi_dem_settings* d = &c->s->dem;
    sc_check_keys(c, o, p, DEM_KEYS, NULL, NULL);
    int k = sc_enum_field(c, o, p, "normal_model", false, DEM_MODELS);
    if (k >= 0) d->normal_model = k == 0 ? DVI_DEM_HERTZ : DVI_DEM_HOOKE;
    k = sc_enum_field(c, o, p, "constants", false, DEM_CONSTANTS);
    if (k >= 0) d->constants = k == 0 ? DVI_DEM_FROM_MATERIAL : DVI_DEM_DIRECT;
    sc_num_field(c, o, p, "k_n", false, R_POS, &d->k_n);
    sc_num_field(c, o, p, "k_t", false, R_NONNEG, &d->k_t);
    sc_num_field(c, o, p, "gamma_n", false, R_ANY, &d->gamma_n);
    sc_num_field(c, o, p, "gamma_t", false, R_ANY, &d->gamma_t);
    sc_num_field(c, o, p, "characteristic_speed", false, R_POS, &d->characteristic_speed);
    sc_num_field(c, o, p, "rolling_damping", false, R_NONNEG, &d->rolling_damping);
    sc_num_field(c, o, p, "terrain_slip_speed", false, R_POS, &d->terrain_slip_speed);
    sc_num_field(c, o, p, "max_speed", false, R_POS, &d->max_speed);
}

double sc_smallest_size(const dvi_scene* s)
{
    double smallest = INFINITY;
    for (int32_t i = 0; i < s->shape_count; i++) {
        const sc_shape* sh = &s->shapes[i];
        const col_shape_class* c = col_shape_class_of(sh->type);
        if (c && c->thickness) {
            const col_geom g = sc_shape_geom(sh);
            smallest = fmin(smallest, c->thickness(&g));
        }
    }
    for (int32_t g = 0; g < s->generator_count; g++)
        if (s->generators[g].count > 0) smallest = fmin(smallest, s->generators[g].rmin);
    return smallest;
}

/* The collision envelope a scene gets when it names none: the world's
 * default (5 mm), but at most half the smallest size among the scene's
 * spheres, capsules, cylinders, boxes and generated grains. A fixed 5 mm
 * around grains of a micrometre made every pair of a 729-sphere bed a
 * contact (266,085 of them, 57 s for the first step). */
static void default_envelope(dvi_scene* s)
{
    const double smallest = sc_smallest_size(s);
    if (smallest > 0.0 && 0.5 * smallest < s->collision_envelope) s->collision_envelope = 0.5 * smallest;
}

static void parse_formulation(ctx* c, const cJSON* root)
{
    dvi_scene* s = c->s;
    dvi_world_def wd = dvi_default_world_def();
    s->solver_settings = wd.solver_settings;
    s->collision_envelope = wd.collision_envelope;
    s->contact_recovery_speed = wd.contact_recovery_speed;
    s->joint_recovery_speed = wd.joint_recovery_speed;
    s->bounce_threshold = wd.bounce_threshold;
    s->joint_solve = wd.joint_solve;
    s->dem = wd.dem;
    s->health = dvi_default_health_settings();
    const char* P = "formulation";
    const cJSON* v = sc_member(root, P);
    if (!v) {
        sc_errf(c, P, "missing (it gives at least the time step \"dt\")");
        return;
    }
    if (!sc_is_object(c, v, P)) return;
    sc_check_keys(c, v, P, FORMULATION_KEYS, NULL, NULL);
    char p[PATH_LEN], pp[PATH_LEN], q[128], list[256];
    const char* method = sc_str_field(c, v, P, "method", false);
    if (method) {
        sc_check_method(c, sc_path_key(p, P, "method"), method);
        free(s->method);
        s->method = sc_dup_string(method);
        if (!s->method) c->nomem = true;
    }
    if (sc_num_field(c, v, P, "dt", true, R_POS, &s->dt) && s->dt > 1.0)
        sc_errf(c, sc_path_key(p, P, "dt"), "must be at most 1 s (got %g)", s->dt);
    const char* solver = sc_str_field(c, v, P, "solver", false);
    if (solver) {
        if (!sc_known_solver(solver, list, sizeof list))
            sc_errf(c, sc_path_key(p, P, "solver"), "unknown solver %s (one of %s)", sc_quote(q, sizeof q, solver),
                    list);
        free(s->solver);
        s->solver = sc_dup_string(solver);
        if (!s->solver) c->nomem = true;
    }
    /* The friction law's key was "friction" (as μ's, materials.*.friction):
     * still read, with a warning, and refused beside the new one. */
    const char* law_key = "friction_law";
    if (sc_member(v, "friction")) {
        if (sc_member(v, "friction_law"))
            sc_errf(c, sc_path_key(p, P, "friction"),
                    "give the friction law once: %s.friction_law, or the deprecated %s.friction, not both", P, P);
        else {
            law_key = "friction";
            sc_warnf(c, sc_path_key(p, P, "friction"), "deprecated key for the friction law: write %s.friction_law",
                     P);
        }
    }
    const char* friction = sc_str_field(c, v, P, law_key, false);
    const bool law_known = !friction || sc_friction_law(friction, &s->friction);
    if (!law_known)
        sc_errf(c, sc_path_key(p, P, law_key), "must be \"ccp\" or \"coulomb\" (got %s)",
                sc_quote(q, sizeof q, friction));
    dvi_solver_settings* ss = &s->solver_settings;
    sc_num_field(c, v, P, "tolerance", false, R_POS, &ss->tolerance);
    sc_num_field(c, v, P, "block_tolerance", false, R_POS, &ss->block_tolerance);
    int64_t iv;
    if (sc_int_field(c, v, P, "max_iterations", false, 1, 1e9, &iv)) ss->max_iterations = (int32_t)iv;
    sc_bool_field(c, v, P, "warm_start", &ss->warm_start);
    sc_bool_field(c, v, P, "exact_sums", &ss->exact_sums);
    {
        double x;
        if (sc_num_field(c, v, P, "warm_start_scale", false, R_ANY, &x)) {
            if (!(x > 0.0 && x <= 1.0))
                sc_errf(c, sc_path_key(p, P, "warm_start_scale"), "must be in (0, 1] (got %g)", x);
            else ss->warm_start_scale = x;
        }
    }
    if (sc_int_field(c, v, P, "threads", false, 0, 1024, &iv)) {
        s->threads = (int32_t)iv;
        if (iv > 0) ss->threads = (int32_t)iv;
    }
    const cJSON* o;
    if ((o = sc_member(v, "apgd")) && sc_is_object(c, o, sc_path_key(p, P, "apgd"))) {
        sc_check_keys(c, o, p, APGD_KEYS, NULL, NULL);
        sc_bool_field(c, o, p, "restart", &ss->apgd.restart);
        sc_bool_field(c, o, p, "precondition", &ss->apgd.precondition);
        double x;
        if (sc_num_field(c, o, p, "grow", false, R_ANY, &x)) {
            if (!(x > 1.0)) sc_errf(c, sc_path_key(pp, p, "grow"), "must be > 1 (got %g)", x);
            else ss->apgd.grow = x;
        }
        if (sc_num_field(c, o, p, "shrink", false, R_ANY, &x)) {
            if (!(x > 0.0 && x <= 1.0)) sc_errf(c, sc_path_key(pp, p, "shrink"), "must be in (0, 1] (got %g)", x);
            else ss->apgd.shrink = x;
        }
    }
    if ((o = sc_member(v, "pgs")) && sc_is_object(c, o, sc_path_key(p, P, "pgs"))) {
        sc_check_keys(c, o, p, PGS_KEYS, NULL, NULL);
        double x;
        if (sc_num_field(c, o, p, "omega", false, R_ANY, &x)) {
            if (!(x > 0.0 && x < 2.0)) sc_errf(c, sc_path_key(pp, p, "omega"), "must be in (0, 2) (got %g)", x);
            else ss->pgs.omega = x;
        }
        sc_bool_field(c, o, p, "symmetric", &ss->pgs.symmetric);
        if (sc_int_field(c, o, p, "block_iterations", false, 1, 1e6, &iv)) ss->pgs.block_iterations = (int32_t)iv;
    }
    if ((o = sc_member(v, "jacobi")) && sc_is_object(c, o, sc_path_key(p, P, "jacobi"))) {
        sc_check_keys(c, o, p, JACOBI_KEYS, NULL, NULL);
        double x;
        if (sc_num_field(c, o, p, "omega", false, R_ANY, &x)) {
            if (!(x > 0.0 && x < 2.0)) sc_errf(c, sc_path_key(pp, p, "omega"), "must be in (0, 2) (got %g)", x);
            else ss->jacobi.omega = x;
        }
    }
    if ((o = sc_member(v, "lemke")) && sc_is_object(c, o, sc_path_key(p, P, "lemke"))) {
        sc_check_keys(c, o, p, LEMKE_KEYS, NULL, NULL);
        if (sc_int_field(c, o, p, "friction_directions", false, 3, 1024, &iv))
            ss->lemke.friction_directions = (int32_t)iv;
        if (sc_int_field(c, o, p, "max_pivots", false, 0, 2e9, &iv)) ss->lemke.max_pivots = (int32_t)iv;
        if (sc_int_field(c, o, p, "max_lcp_size", false, 1, 1e6, &iv)) ss->lemke.max_lcp_size = (int32_t)iv;
        sc_bool_field(c, o, p, "coulomb", &ss->lemke.coulomb);
        sc_bool_field(c, o, p, "orient", &ss->lemke.orient);
        double x;
        if (sc_num_field(c, o, p, "orient_grid", false, R_NONNEG, &x)) {
            if (x > 1.0) sc_errf(c, sc_path_key(pp, p, "orient_grid"), "must be in [0, 1] rad (got %g)", x);
            else ss->lemke.orient_grid = x;
        }
    }
    sc_num_field(c, v, P, "collision_envelope", false, R_NONNEG, &s->collision_envelope);
    sc_num_field(c, v, P, "contact_recovery_speed", false, R_POS, &s->contact_recovery_speed);
    sc_num_field(c, v, P, "joint_recovery_speed", false, R_POS, &s->joint_recovery_speed);
    sc_num_field(c, v, P, "bounce_threshold", false, R_NONNEG, &s->bounce_threshold);
    const char* js = sc_str_field(c, v, P, "joint_solve", false);
    if (js) {
        if (strcmp(js, "auto") == 0) s->joint_solve = DVI_JOINT_SOLVE_AUTO;
        else if (strcmp(js, "iterative") == 0) s->joint_solve = DVI_JOINT_SOLVE_ITERATIVE;
        else if (strcmp(js, "direct") == 0) s->joint_solve = DVI_JOINT_SOLVE_DIRECT;
        else sc_errf(c, sc_path_key(p, P, "joint_solve"), "must be \"auto\", \"iterative\" or \"direct\" (got %s)",
                     sc_quote(q, sizeof q, js));
    }
    const char* cc = sc_str_field(c, v, P, "coulomb_check", false);
    if (cc) {
        const int32_t ci = strcmp(cc, "none") == 0 ? -2 : dvi_solver_index(cc);
        if (ci == -1 || (ci >= 0 && dvi_solver_law_with(ci, ss) != DVI_LAW_COULOMB) ||
            strlen(cc) >= sizeof s->coulomb_check) {
            char names[160];
            ccp_solver_names_for(DVI_LAW_COULOMB, 1u << DVI_BLOCK_FRICTION, false, names, sizeof names);
            sc_errf(c, sc_path_key(p, P, "coulomb_check"), "must be a solver of Coulomb's law (%s) or \"none\" (got %s)",
                    names, sc_quote(q, sizeof q, cc));
        } else {
            snprintf(s->coulomb_check, sizeof s->coulomb_check, "%s", ci == -2 ? "" : cc);
        }
    }
    /* the solver against the law, once the solver's settings are read */
    if (law_known)
        sc_check_law(c, sc_path_key(p, P, "solver"), s->method, s->solver, ss, s->friction,
                     !friction                            ? "formulation.friction_law (the default)"
                     : strcmp(law_key, "friction") == 0 ? "formulation.friction"
                                                          : "formulation.friction_law",
                     false);
    if ((o = sc_member(v, "dem")) && sc_is_object(c, o, sc_path_key(p, P, "dem"))) parse_dem_settings(c, o, p);
    if ((o = sc_member(v, "health")) && sc_is_object(c, o, sc_path_key(p, P, "health"))) {
        dvi_health_settings* hs = &s->health;
        sc_check_keys(c, o, p, HEALTH_KEYS, NULL, NULL);
        sc_bool_field(c, o, p, "enabled", &hs->enabled);
        sc_num_field(c, o, p, "energy_growth", false, R_POS, &hs->energy_growth);
        sc_num_field(c, o, p, "blowup_factor", false, R_POS, &hs->blowup_factor);
        sc_num_field(c, o, p, "region_margin", false, R_NONNEG, &hs->region_margin);
        sc_num_field(c, o, p, "penetration_fraction", false, R_POS, &hs->penetration_fraction);
        sc_num_field(c, o, p, "joint_fraction", false, R_POS, &hs->joint_fraction);
        sc_num_field(c, o, p, "audit_fraction", false, R_POS, &hs->audit_fraction);
        sc_num_field(c, o, p, "hover_envelope_fraction", false, R_POS, &hs->hover_envelope_fraction);
        sc_num_field(c, o, p, "hover_work_fraction", false, R_POS, &hs->hover_work_fraction);
        if (hs->blowup_factor < hs->energy_growth)
            sc_errf(c, p, "blowup_factor (%g) must be at least energy_growth (%g)", hs->blowup_factor,
                    hs->energy_growth);
    }
}

/* ---- probes ---------------------------------------------------------------------------------- */

/* Keys every probe takes, and its targets' keys. */
static const char* const PROBE_KEYS_COMMON[] = {"name", "title", "every", "interval", "what", NULL};
static const char* const PROBE_KEYS_BODIES[] = {"body", "bodies", NULL};
static const char* const PROBE_KEYS_JOINTS[] = {"joint", "joints", NULL};
#define PROBE_MAX_KEYS 128
/* The string values of "component" (a direction [x, y, z] is the other form). */
static const char* const COMPONENTS[] = {"vector", "up", "normal", "magnitude", NULL};
static const sc_component COMPONENT_OF[] = {SC_COMPONENT_VECTOR, SC_COMPONENT_UP, SC_COMPONENT_NORMAL,
                                            SC_COMPONENT_MAGNITUDE};

/* "body"/"bodies" or "joint"/"joints": the probe's targets. */
static void parse_targets(ctx* c, const cJSON* v, const char* path, sc_probe* pr, bool joints, bool required)
{
    const char* one = joints ? "joint" : "body";
    const char* many = joints ? "joints" : "bodies";
    const cJSON* j1 = sc_member(v, one);
    const cJSON* jn = sc_member(v, many);
    char p[PATH_LEN], q[128];
    if (j1 && jn) {
        sc_errf(c, sc_path_key(p, path, one), "give \"%s\" or \"%s\", not both", one, many);
        return;
    }
    if (!j1 && !jn) {
        if (required) sc_errf(c, sc_path_key(p, path, many), "missing (or give \"%s\")", one);
        return;
    }
    int64_t n = 1;
    if (jn) {
        jn = sc_array_field(c, v, path, many, SC_MAX_PROBE_TARGETS, NULL, &n);
        if (!jn) return;
        if (n == 0) {
            sc_errf(c, sc_path_key(p, path, many), "must not be empty");
            return;
        }
    }
    pr->targets = malloc((size_t)n * sizeof *pr->targets);
    if (!pr->targets) {
        c->nomem = true;
        return;
    }
    int64_t i = 0;
    bool ok = true;
    for (const cJSON* it = jn ? jn->child : j1; it && i < n; it = jn ? it->next : NULL, i++) {
        char pe[PATH_LEN];
        if (jn)
            sc_path_index(pe, sc_path_key(p, path, many), i);
        else
            sc_path_key(pe, path, one);
        int64_t t = -1;
        if (joints) {
            if (!cJSON_IsString(it))
                sc_errf(c, pe, "must be a joint name (got %s)", sc_type_name(it));
            else if ((t = sc_map_get(&c->joint_map, it->valuestring)) < 0)
                sc_errf(c, pe, "no joint named %s", sc_quote(q, sizeof q, it->valuestring));
        } else {
            t = sc_body_ref(c, it, pe);
        }
        ok = ok && t >= 0;
        pr->targets[i] = (int32_t)t;
    }
    if (!ok) return;
    pr->target_count = (int32_t)n;
    /* no target twice: the column names must be unique */
    int32_t* sorted = malloc((size_t)n * sizeof *sorted);
    if (!sorted) {
        c->nomem = true;
        return;
    }
    memcpy(sorted, pr->targets, (size_t)n * sizeof *sorted);
    qsort(sorted, (size_t)n, sizeof *sorted, sc_cmp_i32);
    for (int64_t k = 1; k < n; k++)
        if (sorted[k] == sorted[k - 1]) {
            sc_errf(c, sc_path_key(p, path, jn ? many : one), "names the same %s twice", one);
            break;
        }
    free(sorted);
}

/* contact_force "with": a body name, a generator name (all of its bodies)
 * or a non-empty array of such names; the probe then counts only the
 * contacts between its targets and these bodies. Kept sorted and unique. */
static void parse_with(ctx* c, const cJSON* v, const char* path, sc_probe* pr)
{
    const cJSON* jw = sc_member(v, "with");
    if (!jw) return;
    char p[PATH_LEN], q[128];
    sc_path_key(p, path, "with");
    const bool many = cJSON_IsArray(jw);
    int64_t n = 1;
    if (many) {
        if (!sc_array_field(c, v, path, "with", SC_MAX_PROBE_TARGETS, NULL, &n)) return;
        if (n == 0) {
            sc_errf(c, p, "must not be empty");
            return;
        }
    } else if (!cJSON_IsString(jw)) {
        sc_errf(c, p, "must be a body or generator name, or an array of them (got %s)", sc_type_name(jw));
        return;
    }
    /* first pass: check the names and count the bodies */
    int64_t total = 0, i = 0;
    bool ok = true;
    for (const cJSON* it = many ? jw->child : jw; it && i < n; it = many ? it->next : NULL, i++) {
        char pe[PATH_LEN];
        const char* where = many ? sc_path_index(pe, p, i) : p;
        if (!cJSON_IsString(it)) {
            sc_errf(c, where, "must be a body or generator name (got %s)", sc_type_name(it));
            ok = false;
            continue;
        }
        int32_t g = sc_map_get(&c->gen_map, it->valuestring);
        if (sc_resolve_body(c->s, &c->body_map, &c->gen_map, it->valuestring) >= 0) {
            total++;
        } else if (g >= 0) {
            total += c->s->generators[g].count;
        } else {
            if (!c->bodies_unreadable && !c->generator_failed)
                sc_errf(c, where, "no body or generator named %s", sc_quote(q, sizeof q, it->valuestring));
            ok = false;
        }
    }
    if (!ok) return;
    if (total == 0) {
        if (!c->generator_failed) sc_errf(c, p, "names no body (its generators produced none)");
        return;
    }
    pr->with = malloc((size_t)total * sizeof *pr->with);
    if (!pr->with) {
        c->nomem = true;
        return;
    }
    int64_t k = 0;
    i = 0;
    for (const cJSON* it = many ? jw->child : jw; it && i < n; it = many ? it->next : NULL, i++) {
        int64_t b = sc_resolve_body(c->s, &c->body_map, &c->gen_map, it->valuestring);
        if (b >= 0) {
            pr->with[k++] = (int32_t)b;
            continue;
        }
        const sc_generator* gen = &c->s->generators[sc_map_get(&c->gen_map, it->valuestring)];
        for (int64_t j = 0; j < gen->count; j++) pr->with[k++] = gen->first_body + (int32_t)j;
    }
    qsort(pr->with, (size_t)total, sizeof *pr->with, sc_cmp_i32);
    int64_t u = 0;
    for (int64_t j = 0; j < total; j++)
        if (u == 0 || pr->with[j] != pr->with[u - 1]) pr->with[u++] = pr->with[j];
    pr->with_count = (int32_t)u;
}

/* Appends a NULL-terminated list of keys to keys[*n] (no duplicates). */
static void add_keys(const char** keys, int* n, const char* const* more)
{
    for (; more && *more && *n < PROBE_MAX_KEYS - 1; more++) {
        int k = 0;
        while (k < *n && strcmp(keys[k], *more) != 0) k++;
        if (k == *n) keys[(*n)++] = *more;
    }
    keys[*n] = NULL;
}

/* The keys a kind accepts: the common ones, its targets', its own. */
static void kind_keys(const sc_probe_class* k, const char** keys, int* n)
{
    add_keys(keys, n, PROBE_KEYS_COMMON);
    if (k->targets == SC_TARGETS_JOINTS) add_keys(keys, n, PROBE_KEYS_JOINTS);
    else if (k->targets != SC_TARGETS_NONE) add_keys(keys, n, PROBE_KEYS_BODIES);
    add_keys(keys, n, k->keys);
    for (int32_t i = 0; k->ext && i < k->ext->key_count && *n < PROBE_MAX_KEYS - 1; i++) {
        const char* one[] = {k->ext->keys[i].name, NULL};
        add_keys(keys, n, one);
    }
}

/* contact_force "component": "vector", "up", "normal", "magnitude" or a direction. */
static void parse_component(ctx* c, const cJSON* v, const char* path, sc_probe* pr)
{
    char p[PATH_LEN];
    const cJSON* jc = sc_member(v, "component");
    sc_path_key(p, path, "component");
    if (!jc) return;
    if (cJSON_IsArray(jc)) {
        double d[3];
        if (sc_as_vec(c, jc, p, 3, d)) {
            double n = v3_norm(d);
            if (!(n > 1e-12)) sc_errf(c, p, "the direction must not be zero");
            else {
                v3_scale(pr->direction, 1.0 / n, d);
                pr->component = SC_COMPONENT_DIRECTION;
            }
        }
    } else if (cJSON_IsString(jc)) {
        int k = sc_enum_field(c, v, path, "component", false, COMPONENTS);
        if (k >= 0) pr->component = COMPONENT_OF[k];
    } else {
        sc_errf(c, p, "must be \"vector\", \"up\", \"normal\", \"magnitude\" or a direction [x, y, z] (got %s)",
                sc_type_name(jc));
    }
}

/* A registered kind: its typed keys, then its setup for every target. */
static void parse_registered(ctx* c, const cJSON* v, const char* path, sc_probe* pr)
{
    const dvi_probe_class* k = pr->kind->ext;
    char p[PATH_LEN], q[128];
    dvi_probe_keys keys;
    memset(&keys, 0, sizeof keys);
    bool ok = true;
    for (int32_t i = 0; i < k->key_count; i++) {
        const dvi_probe_key* key = &k->keys[i];
        const bool present = sc_member(v, key->name) != NULL;
        bool got = false;
        if (key->type == DVI_PROBE_KEY_POSITIVE) {
            got = sc_num_field(c, v, path, key->name, false, R_POS, &keys.value[i][0]);
        } else if (sc_vec_field(c, v, path, key->name, false, 3, keys.value[i])) {
            double n = v3_norm(keys.value[i]);
            if (!(n > 1e-12)) {
                if (key->noun) sc_errf(c, sc_path_key(p, path, key->name), "the %s direction must not be zero", key->noun);
                else sc_errf(c, sc_path_key(p, path, key->name), "the direction must not be zero");
            } else {
                v3_scale(keys.value[i], 1.0 / n, keys.value[i]);
                got = true;
            }
        }
        if (got) keys.given |= 1u << i;
        ok = ok && (got || !present);
    }
    if (!ok || pr->target_count <= 0 || k->data_width <= 0 || !k->setup) return;
    pr->data = calloc((size_t)pr->target_count * (size_t)k->data_width, sizeof *pr->data);
    if (!pr->data) {
        c->nomem = true;
        return;
    }
    const dvi_scene* s = c->s;
    for (int32_t t = 0; t < pr->target_count; t++) {
        int32_t b = pr->targets[t];
        char label[SC_MAX_NAME + 24];
        if (b < s->body_count && s->bodies[b].name) snprintf(label, sizeof label, "%s", s->bodies[b].name);
        else snprintf(label, sizeof label, "bodies[%d]", (int)b);
        dvi_probe_body body;
        memset(&body, 0, sizeof body);
        body.name = label;
        body.shape_orientation[0] = 1.0;
        if (b < s->body_count && s->bodies[b].shape_count > 0) {
            const sc_shape* first = &s->shapes[s->bodies[b].shape_first];
            body.shape_count = s->bodies[b].shape_count;
            body.shape_type = first->type;
            body.shape_radius = first->radius;
            memcpy(body.shape_orientation, first->q, sizeof body.shape_orientation);
        }
        char msg[256] = "";
        dvi_status st = k->setup(&keys, &body, pr->data + (size_t)t * (size_t)k->data_width, msg, sizeof msg);
        if (st == DVI_OK) continue;
        if (st == DVI_ERR_NOMEM) {
            c->nomem = true;
        } else {
            /* "KEY: message" → "probes[i].KEY: message" */
            const char* colon = strstr(msg, ": ");
            if (colon && colon > msg && (size_t)(colon - msg) < sizeof q) {
                memcpy(q, msg, (size_t)(colon - msg));
                q[colon - msg] = '\0';
                sc_errf(c, sc_path_key(p, path, q), "%s", colon + 2);
            } else {
                sc_errf(c, path, "%s", msg[0] ? msg : "a target the probe kind refuses");
            }
        }
        free(pr->data);
        pr->data = NULL;
        return;
    }
}

static void parse_probe(ctx* c, const cJSON* v, const char* path, sc_probe* pr, int32_t index)
{
    pr->every = 1;
    if (!sc_is_object(c, v, path)) return;
    char p[PATH_LEN], q[128];
    /* every kind's keys: a key of another kind is "not used by" this one */
    const char* known[PROBE_MAX_KEYS];
    int nknown = 0;
    known[0] = NULL;
    const char* names[SC_MAX_PROBE_KINDS + 1];
    sc_probe_class_names(names);
    for (int i = 0; names[i]; i++) kind_keys(sc_probe_class_find(names[i]), known, &nknown);
    int w = sc_enum_field(c, v, path, "what", true, names);
    pr->kind = w >= 0 ? sc_probe_class_find(names[w]) : NULL;
    if (pr->kind) {
        const char* allowed[PROBE_MAX_KEYS];
        int nallowed = 0;
        allowed[0] = NULL;
        kind_keys(pr->kind, allowed, &nallowed);
        char owner[64];
        snprintf(owner, sizeof owner, "a \"%s\" probe", pr->kind->name);
        sc_check_keys(c, v, path, allowed, known, owner);
    } else {
        sc_check_keys(c, v, path, known, NULL, NULL);
    }
    const char* name = sc_str_field(c, v, path, "name", true);
    if (name) {
        sc_path_key(p, path, "name");
        if (!valid_name(name)) {
            sc_errf(c, p, "invalid name %s (it names a file: 1 to %d characters: letters, digits, '_', '.', '-'; "
                       "starting with a letter, digit or '_')", sc_quote(q, sizeof q, name), SC_MAX_NAME);
        } else if (sc_map_get(&c->probe_map, name) >= 0) {
            sc_errf(c, p, "duplicate name %s (also probes[%d])", sc_quote(q, sizeof q, name),
                    sc_map_get(&c->probe_map, name));
        } else {
            pr->name = sc_dup_string(name);
            if (!pr->name || !sc_map_put(&c->probe_map, pr->name, index)) c->nomem = true;
        }
    }
    const char* title = sc_str_field(c, v, path, "title", false);
    if (title) {
        if (strlen(title) > 256) sc_errf(c, sc_path_key(p, path, "title"), "longer than 256 characters");
        else if (!(pr->title = sc_dup_string(title))) c->nomem = true;
    }
    int64_t every;
    const bool has_every = sc_int_field(c, v, path, "every", false, 1, 2147483647.0, &every);
    if (has_every) pr->every = (int32_t)every;
    if (sc_num_field(c, v, path, "interval", false, R_POS, &pr->interval) && has_every)
        sc_errf(c, sc_path_key(p, path, "interval"), "every (steps) or interval (s), not both");
    const sc_probe_class* k = pr->kind;
    if (!k) return;
    if (k->targets != SC_TARGETS_NONE)
        parse_targets(c, v, path, pr, k->targets == SC_TARGETS_JOINTS, k->targets != SC_TARGETS_ALL_DYNAMIC);
    const char* const* own = k->keys;
    if (own && sc_index_of(own, "average") >= 0) sc_bool_field(c, v, path, "average", &pr->average);
    if (own && sc_index_of(own, "with") >= 0) parse_with(c, v, path, pr);
    if (own && sc_index_of(own, "component") >= 0) parse_component(c, v, path, pr);
    if (k->ext) parse_registered(c, v, path, pr);
}

/* ---- the whole scene -------------------------------------------------------------------------- */

static const char* const TOP_KEYS[] = {"$schema", "name",   "description", "units",    "gravity",  "materials",
                                       "bodies",  "generators", "joints",  "formulation", "duration", "probes",
                                       "study",   "terrain", NULL};

void sc_parse_scene(ctx* c, const cJSON* root)
{
    dvi_scene* s = c->s;
    char p[PATH_LEN], q[128];
    if (!cJSON_IsObject(root)) {
        sc_errf(c, "scene", "the top level must be a JSON object (got %s)", sc_type_name(root));
        return;
    }
    sc_check_keys(c, root, "", TOP_KEYS, NULL, NULL);
    const char* name = sc_str_field(c, root, "", "name", false);
    if (name) {
        if (strlen(name) > 256) sc_errf(c, "name", "longer than 256 characters");
        else {
            free(s->name);
            if (!(s->name = sc_dup_string(name))) c->nomem = true;
        }
    }
    sc_str_field(c, root, "", "description", false);
    sc_str_field(c, root, "", "$schema", false);
    /* the settings of `dvi study` (tool/study.c reads and checks them): an object, not used here */
    const cJSON* study = cJSON_GetObjectItemCaseSensitive(root, "study");
    if (study && !cJSON_IsObject(study)) sc_errf(c, "study", "must be an object (got %s)", sc_type_name(study));
    const char* units = sc_str_field(c, root, "", "units", false);
    if (units && strcmp(units, "SI") != 0)
        sc_errf(c, "units", "must be \"SI\" (got %s): lengths in m, masses in kg, times in s",
                sc_quote(q, sizeof q, units));
    sc_vec_field(c, root, "", "gravity", false, 3, s->gravity);
    sc_num_field(c, root, "", "duration", true, R_POS, &s->duration);

    parse_materials(c, root);

    int64_t nb = 0, ng = 0, nj = 0, np = 0;
    const cJSON* bodies = sc_array_field(c, root, "", "bodies", SC_MAX_EXPLICIT_BODIES,
                                         " (a generator makes large sets of bodies)", &nb);
    if (sc_member(root, "bodies") && !bodies) c->bodies_unreadable = true;
    const cJSON* gens = sc_array_field(c, root, "", "generators", SC_MAX_GENERATORS, NULL, &ng);
    if (sc_member(root, "generators") && !gens) c->generator_failed = true;
    const cJSON* joints = sc_array_field(c, root, "", "joints", SC_MAX_JOINTS, NULL, &nj);
    const cJSON* probes = sc_array_field(c, root, "", "probes", SC_MAX_PROBES, NULL, &np);
    s->bodies = calloc((size_t)nb + 1, sizeof *s->bodies);
    s->generators = calloc((size_t)ng + 1, sizeof *s->generators);
    s->joints = calloc((size_t)nj + 1, sizeof *s->joints);
    s->probes = calloc((size_t)np + 1, sizeof *s->probes);
    if (!s->bodies || !s->generators || !s->joints || !s->probes) {
        c->nomem = true;
        return;
    }
    s->body_count = (int32_t)nb;
    s->generator_count = (int32_t)ng;
    s->joint_count = (int32_t)nj;
    s->probe_count = (int32_t)np;

    collect_names(c, bodies, nb, gens, joints);
    if (c->nomem) return;

    int64_t i = 0;
    for (const cJSON* it = bodies ? bodies->child : NULL; it; it = it->next, i++) {
        parse_body(c, it, sc_path_index(p, "bodies", i), &s->bodies[i]);
        if (c->nomem) return;
    }
    int64_t total = nb;
    i = 0;
    for (const cJSON* it = gens ? gens->child : NULL; it; it = it->next, i++) {
        sc_generator* g = &s->generators[i];
        int64_t n = parse_generator(c, it, sc_path_index(p, "generators", i), g);
        if (n == 0) c->generator_failed = true; /* its bodies cannot be named */
        g->first_body = (int32_t)(total < SC_MAX_BODIES ? total : SC_MAX_BODIES);
        if (total + n > SC_MAX_BODIES) {
            sc_errf(c, p, "the scene would have %lld bodies, more than the limit of %d", (long long)(total + n),
                    SC_MAX_BODIES);
            g->count = 0;
            n = 0;
        }
        total += n;
    }
    s->total_bodies = total;
    i = 0;
    for (const cJSON* it = joints ? joints->child : NULL; it; it = it->next, i++)
        parse_joint(c, it, sc_path_index(p, "joints", i), &s->joints[i]);
    parse_formulation(c, root);
    const cJSON* form = sc_member(root, "formulation");
    if (!(form && sc_member(form, "collision_envelope"))) default_envelope(s);
    if (s->dt > 0.0 && s->duration > 0.0 && s->duration / s->dt > 1e12)
        sc_errf(c, "duration", "%g s is more than 1e12 steps of %g s", s->duration, s->dt);
    i = 0;
    for (const cJSON* it = probes ? probes->child : NULL; it; it = it->next, i++) {
        parse_probe(c, it, sc_path_index(p, "probes", i), &s->probes[i], (int32_t)i);
        if (c->nomem) return;
    }
    sc_parse_terrain(c, root);
}
