/* dvicontact — models: worlds built from scenes (scene.h), their probes and
 * checkpoints. Only the public world API is used.
 *
 * A model copies what it needs from the scene (names, probe definitions,
 * mass properties for the kinetic energy), so the scene may be destroyed
 * once the model is built.
 */
#include "scene_internal.h"
#include "dvi/terrain.h"
#include "alloc.h"
#include "error.h"
#include "hash_rng.h"
#include "world_internal.h"
#include "health.h"
#include "terrain_internal.h"

#include "math3.h"
#include "bytes_le.h"

#ifdef _OPENMP
#include <omp.h>
#endif
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct model_probe {
    char* name;
    char* title;
    const sc_probe_class* kind;
    int32_t every;
    double interval;       /* s; > 0: sampled by time (probe_due_at) */
    int32_t* targets;      /* body or joint indices */
    int32_t target_count;
    sc_component component;
    double direction[3];
    double* data;          /* a registered kind: [data_width·target_count], its setup's per target */
    int32_t data_width;
    int32_t* lookup;       /* component "normal" or "with": [2·target_count] (body id index1, target), sorted */
    int32_t* with;         /* contact_force "with": the other bodies' id index1, sorted */
    int32_t with_count;    /* 0: every contact */
    bool average;          /* contact_force, joint_reaction: report the mean since the last due step */
    int32_t raw_width;     /* per-step quantities per target: 6 (force, torque) or 1 (normal-force sum) */
    double* acc;           /* average: [raw_width·target_count], the sum over the steps since the last due step */
    int64_t acc_count;     /* average: the number of steps in acc */
    double* raw;           /* contact_force, joint_reaction: [raw_width·target_count], a sample's raw values */
    int32_t columns;
    char** column_names;   /* [columns], strings in `arena` */
    const char** units;    /* [columns], static strings */
    char* arena;
} model_probe;

struct dvi_model {
    dvi_world* world;
    double dt;
    double up[3];            /* −gravity direction (z if no gravity) */
    int64_t steps;

    int64_t body_count;      /* explicit + generated */
    int32_t explicit_count;
    dvi_body_id* bodies;     /* [body_count], creation order */
    double* mass;            /* [body_count], 0 unless dynamic */
    double* iso_inertia;     /* [body_count − explicit_count], generated spheres: 0.4 m r² */
    double* inertia;         /* [9 · explicit_count], body frame */

    char** body_names;       /* [explicit_count], NULL if unnamed */
    sc_map body_map;
    int32_t generator_count;
    char** generator_names;
    int64_t* generator_first;
    int64_t* generator_count_of;
    sc_map generator_map;

    int32_t joint_count;
    dvi_joint_id* joints;
    char** joint_names;
    sc_map joint_map;

    int32_t probe_count;
    model_probe* probes;

    /* Contacts the contact-walking probes (component "normal" or "with") look
     * at: the bodies those probes name (near_mask, by body id index1), and the
     * contacts of the last step that touch one of them (near, filled by
     * dvi_model_step on the steps a probe needs it, valid while near_step ==
     * steps), so that eight
     * such probes on a granular bed walk a few hundred contacts, not eight
     * times all of them. */
    uint8_t* near_mask;      /* [near_mask_size], NULL if no probe walks contacts */
    int32_t near_mask_size;
    int32_t* near;           /* [near_cap] contact indices of the last step, ascending */
    int32_t near_count, near_cap;
    int32_t* near_chunk;     /* [near_chunk_cap] hits per chunk of the parallel scan, then offsets */
    int32_t near_chunk_cap;
    uint8_t* near_flag;      /* [near_flag_cap] per contact: touches a probed body */
    int32_t near_flag_cap;
    int threads;             /* the world's threads (the solver settings'; 0: the library default) */
    int64_t near_step;       /* the step `near` belongs to; −1: none */
    double near_time;        /* and the world's time then (the world may be stepped directly) */

    world_health health;     /* the run health monitor (src/world/health.c) */

    /* One rank's part of a scene spread over ranks (sc_model_set_part):
     * per world body its level (SC_LEVEL_OWNED, a ghost, SC_LEVEL_FIXED);
     * NULL for a whole scene. */
    const int8_t* part;
    bool part_root;          /* the rank that gives the time, the joints and the fixed bodies' states */
};

static void label_body(const void* ctx, int64_t b, char* out, size_t size);

/* ---- helpers -------------------------------------------------------------------- */

#if defined(__GNUC__)
__attribute__((format(printf, 4, 5)))
#endif
static dvi_status fail(char* msg, size_t size, dvi_status st, const char* fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    st = base_error_vreport(msg, size, st, NULL, fmt, ap);
    va_end(ap);
    return st;
}

static char* copy_string(const char* s)
{
    if (!s) return NULL;
    size_t n = strlen(s) + 1;
    char* d = malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

/* Body index of a name in the model (as sc_resolve_body in the scene). */
static int64_t model_resolve(const dvi_model* m, const char* name)
{
    if (!name) return -1;
    int32_t b = sc_map_get(&m->body_map, name);
    if (b >= 0) return b;
    char gen[SC_MAX_NAME + 1];
    int64_t idx;
    if (!sc_split_indexed(name, gen, &idx)) return -1;
    int32_t g = sc_map_get(&m->generator_map, gen);
    if (g < 0 || idx >= m->generator_count_of[g]) return -1;
    return m->generator_first[g] + idx;
}

/* The name of body b for column names ("gen[i]" for generated bodies). */
static void body_label(const dvi_model* m, int64_t b, char* out, size_t size)
{
    if (b < m->explicit_count) {
        snprintf(out, size, "%s", m->body_names[b] ? m->body_names[b] : "body");
        return;
    }
    /* generators' first bodies increase with their index: the last one starting at or before b */
    int32_t lo = 0, hi = m->generator_count - 1, g = -1;
    while (lo <= hi) {
        int32_t mid = lo + (hi - lo) / 2;
        if (m->generator_first[mid] <= b) {
            g = mid;
            lo = mid + 1;
        } else {
            hi = mid - 1;
        }
    }
    while (g >= 0 && m->generator_count_of[g] == 0) g--; /* empty generators share a first body */
    if (g >= 0 && b < m->generator_first[g] + m->generator_count_of[g])
        snprintf(out, size, "%s[%lld]", m->generator_names[g], (long long)(b - m->generator_first[g]));
    else
        snprintf(out, size, "body%lld", (long long)b);
}

/* A body's name as the scene gives it ("wheel_LF", "grains[49]"), or
 * bodies[i] for an unnamed body of the file. */
static void label_body(const void* ctx, int64_t b, char* out, size_t size)
{
    const dvi_model* m = ctx;
    if (b >= 0 && b < m->explicit_count && !m->body_names[b]) snprintf(out, size, "bodies[%lld]", (long long)b);
    else if (b >= 0 && b < m->body_count) body_label(m, b, out, size);
    else snprintf(out, size, "the world");
}

/* The world's names of its bodies, in its error messages and the health
 * monitor's findings (dvi_world_set_body_namer). */
static void name_body(void* ctx, int32_t b, char* out, size_t size)
{
    label_body(ctx, b, out, size);
}

/* ---- probes: columns and the per-body samples (the table of kinds: below) --------------- */

/* A kind's columns are declared once, each column's name and unit next to
 * the value it writes where the two could drift apart (the solver's). */

static const dvi_probe_column COLS_POSITION[] = {{"x", "m"}, {"y", "m"}, {"z", "m"}};
static const dvi_probe_column COLS_VELOCITY[] = {{"vx", "m/s"}, {"vy", "m/s"}, {"vz", "m/s"}};
static const dvi_probe_column COLS_ANGULAR[] = {{"wx", "rad/s"}, {"wy", "rad/s"}, {"wz", "rad/s"}};
static const dvi_probe_column COLS_ORIENTATION[] = {{"qw", "1"}, {"qx", "1"}, {"qy", "1"}, {"qz", "1"}};
static const dvi_probe_column COLS_WRENCH[] = {{"fx", "N"},   {"fy", "N"},   {"fz", "N"},
                                               {"tx", "N m"}, {"ty", "N m"}, {"tz", "N m"}};
/* contact_force with a component other than "vector": one column */
static const dvi_probe_column COLS_UP[] = {{"f_up", "N"}};
static const dvi_probe_column COLS_DIR[] = {{"f_dir", "N"}};
static const dvi_probe_column COLS_NORMAL[] = {{"f_n", "N"}};
static const dvi_probe_column COLS_MAGNITUDE[] = {{"f_mag", "N"}};
static const dvi_probe_column COLS_ENERGY[] = {{"kinetic_energy", "J"}};

/* The solver probe: name, unit and value of each column (s: the step's
 * dvi_step_stats). Counts and codes get units of their own, so that a plot
 * (one panel a unit) does not share an axis between a residual of 1e-9 and
 * hundreds of contacts. */
#define SOLVER_COLUMNS(X)                                  \
    X("iterations", "it", s.iterations)                    \
    X("residual", "1", s.residual)                         \
    X("contacts", "count", s.contacts)                     \
    X("rows", "count", s.rows)                             \
    X("max_penetration", "m", s.max_penetration)           \
    X("max_joint_violation", "m", s.max_joint_violation)   \
    X("ccp_hover", "m", s.ccp_hover)                       \
    X("ccp_hover_work", "J", s.ccp_hover_work)             \
    X("solver_status", "code", (double)s.solver_status)    \
    X("wall_collide", "s", s.seconds_collide)              \
    X("wall_assemble", "s", s.seconds_assemble)            \
    X("wall_solve", "s", s.seconds_solve)                  \
    X("wall_integrate", "s", s.seconds_integrate)          \
    X("wall_report", "s", s.seconds_report)
#define SOLVER_COLUMN_SPEC(name, unit, value) {name, unit},
static const dvi_probe_column COLS_SOLVER[] = {SOLVER_COLUMNS(SOLVER_COLUMN_SPEC)};
#undef SOLVER_COLUMN_SPEC

static dvi_status sample_solver(const dvi_model* m, const model_probe* p, double* o)
{
    (void)p;
    const dvi_step_stats s = dvi_world_get_stats(m->world);
#define SOLVER_COLUMN_VALUE(name, unit, value) *o++ = (value);
    SOLVER_COLUMNS(SOLVER_COLUMN_VALUE)
#undef SOLVER_COLUMN_VALUE
    return DVI_OK;
}

static dvi_status sample_position(const dvi_probe_context* c, const double* data, double* o)
{
    (void)data;
    return dvi_body_get_position(c->world, c->body, o);
}

/* soil: what the world's terrain models did to the body in the last step:
 * the SCM soils' deepest sinkage under it and their contact nodes, the
 * Bekker–Wong elements' sinkage of the wheel (one contact when it sank),
 * and the force of them all. */
static const dvi_probe_column COLS_SOIL[] = {
    {"sinkage", "m"}, {"contacts", "count"}, {"fx", "N"}, {"fy", "N"}, {"fz", "N"}};

static dvi_status sample_soil(const dvi_probe_context* c, const double* data, double* o)
{
    (void)data;
    memset(o, 0, 5 * sizeof *o);
    for (int32_t e = 0; e < dvi_world_force_element_count(c->world); e++) {
        const dvi_scm* soil = dvi_scm_of_element(c->world, e);
        dvi_bw_forces bw;
        double f[3];
        if (soil) {
            dvi_scm_body_contact bc;
            dvi_status st = dvi_scm_get_body_contact(soil, c->body, &bc);
            if (st != DVI_OK) return st;
            if (bc.sinkage_max > o[0]) o[0] = bc.sinkage_max;
            o[1] += bc.contacts;
            for (int k = 0; k < 3; k++) o[2 + k] += bc.force[k];
        } else if (bw_body_forces(c->world, e, c->body, &bw, f)) {
            if (bw.sinkage > o[0]) o[0] = bw.sinkage;
            o[1] += bw.sinkage > 0.0;
            for (int k = 0; k < 3; k++) o[2 + k] += f[k];
        }
    }
    return DVI_OK;
}

/* The terrain models' normal load on body b in the last step: each SCM
 * soil's force along its patch normal, each Bekker–Wong wheel's f_z (along
 * its ground normal). Other force elements have no normal: not counted. */
static double terrain_normal_load(const dvi_world* w, dvi_body_id b)
{
    double fn = 0.0;
    for (int32_t e = 0; e < dvi_world_force_element_count(w); e++) {
        const dvi_scm* soil = dvi_scm_of_element(w, e);
        dvi_bw_forces bw;
        double f[3];
        if (soil) {
            dvi_scm_body_contact bc;
            if (dvi_scm_get_body_contact(soil, b, &bc) != DVI_OK || bc.contacts == 0) continue;
            const dvi_scm_stats st = dvi_scm_get_stats(soil);
            const double n[3] = {st.rotation[2], st.rotation[5], st.rotation[8]}; /* the patch's z */
            fn += v3_dot(bc.force, n);
        } else if (bw_body_forces(w, e, b, &bw, f)) {
            fn += bw.normal;
        }
    }
    return fn;
}

static dvi_status sample_velocity(const dvi_probe_context* c, const double* data, double* o)
{
    (void)data;
    return dvi_body_get_velocity(c->world, c->body, o);
}

static dvi_status sample_angular_velocity(const dvi_probe_context* c, const double* data, double* o)
{
    (void)data;
    return dvi_body_get_angular_velocity(c->world, c->body, o);
}

static dvi_status sample_orientation(const dvi_probe_context* c, const double* data, double* o)
{
    (void)data;
    return dvi_body_get_orientation(c->world, c->body, o);
}

/* The columns of a probe, per target (or once): contact_force's depend on its component. */
static const dvi_probe_column* probe_columns(const model_probe* p, int32_t* count)
{
    *count = 1;
    if (sc_probe_is_contact_force(p->kind)) switch (p->component) {
        case SC_COMPONENT_VECTOR: break;
        case SC_COMPONENT_UP: return COLS_UP;
        case SC_COMPONENT_DIRECTION: return COLS_DIR;
        case SC_COMPONENT_NORMAL: return COLS_NORMAL;
        case SC_COMPONENT_MAGNITUDE: return COLS_MAGNITUDE;
        }
    *count = p->kind->column_count;
    return p->kind->columns;
}

static int cmp_pair(const void* a, const void* b)
{
    const int32_t *x = a, *y = b;
    return (x[0] > y[0]) - (x[0] < y[0]);
}

static dvi_status build_probe(dvi_model* m, const sc_probe* sp, model_probe* p)
{
    p->kind = sp->kind;
    p->every = sp->every;
    p->interval = sp->interval;
    p->component = sp->component;
    const bool contact = sc_probe_is_contact_force(sp->kind);
    p->raw_width = contact && sp->component == SC_COMPONENT_NORMAL ? 1 : 6;
    p->average = sp->average && (contact || sc_probe_is_joint_reaction(sp->kind));
    if (p->average) {
        p->acc = calloc((size_t)p->raw_width * (size_t)(sp->target_count > 0 ? sp->target_count : 1), sizeof *p->acc);
        if (!p->acc) return DVI_ERR_NOMEM;
    }
    v3_copy(p->direction, sp->direction);
    p->name = copy_string(sp->name);
    if (!p->name) return DVI_ERR_NOMEM;
    if (sp->title) {
        p->title = copy_string(sp->title);
    } else {
        char t[256];
        const char* mean = p->average && sp->with_count > 0 ? ", mean per sample, only contacts with the \"with\" bodies"
                           : p->average                     ? ", mean per sample"
                           : sp->with_count > 0             ? ", only contacts with the \"with\" bodies"
                                                            : "";
        if (contact && sp->component == SC_COMPONENT_UP)
            snprintf(t, sizeof t, "Contact force, up component%s (%s)", mean, sp->name);
        else if (contact && sp->component == SC_COMPONENT_DIRECTION)
            snprintf(t, sizeof t, "Contact force along (%.3g, %.3g, %.3g)%s (%s)", sp->direction[0], sp->direction[1],
                     sp->direction[2], mean, sp->name);
        else if (contact && sp->component == SC_COMPONENT_NORMAL)
            snprintf(t, sizeof t, "Contact force, normal%s (%s)", mean, sp->name);
        else if (contact && sp->component == SC_COMPONENT_MAGNITUDE)
            snprintf(t, sizeof t, "Contact force, magnitude%s (%s)", mean, sp->name);
        else
            snprintf(t, sizeof t, "%s%s (%s)", sp->kind->label, mean, sp->name);
        p->title = copy_string(t);
    }
    if (!p->title) return DVI_ERR_NOMEM;
    if (sp->target_count > 0) {
        p->targets = malloc((size_t)sp->target_count * sizeof *p->targets);
        if (!p->targets) return DVI_ERR_NOMEM;
        memcpy(p->targets, sp->targets, (size_t)sp->target_count * sizeof *p->targets);
        p->target_count = sp->target_count;
    }
    if (sp->data && sp->kind->ext && sp->kind->ext->data_width > 0 && sp->target_count > 0) {
        const size_t n = (size_t)sp->target_count * (size_t)sp->kind->ext->data_width;
        p->data = malloc(n * sizeof *p->data);
        if (!p->data) return DVI_ERR_NOMEM;
        memcpy(p->data, sp->data, n * sizeof *p->data);
        p->data_width = sp->kind->ext->data_width;
    }
    if (contact && sp->with_count > 0) {
        p->with = malloc((size_t)sp->with_count * sizeof *p->with);
        if (!p->with) return DVI_ERR_NOMEM;
        for (int32_t k = 0; k < sp->with_count; k++) p->with[k] = m->bodies[sp->with[k]].index1;
        qsort(p->with, (size_t)sp->with_count, sizeof *p->with, sc_cmp_i32);
        p->with_count = sp->with_count;
    }
    if (contact || sc_probe_is_joint_reaction(sp->kind)) {
        p->raw = malloc((size_t)p->raw_width * (size_t)(sp->target_count > 0 ? sp->target_count : 1) * sizeof *p->raw);
        if (!p->raw) return DVI_ERR_NOMEM;
    }
    if (contact && (sp->component == SC_COMPONENT_NORMAL || sp->with_count > 0) &&
        sp->target_count > 0) {
        p->lookup = malloc((size_t)sp->target_count * 2 * sizeof *p->lookup);
        if (!p->lookup) return DVI_ERR_NOMEM;
        for (int32_t t = 0; t < sp->target_count; t++) {
            p->lookup[2 * t] = m->bodies[sp->targets[t]].index1;
            p->lookup[2 * t + 1] = t;
        }
        qsort(p->lookup, (size_t)sp->target_count, 2 * sizeof *p->lookup, cmp_pair);
    }
    int32_t per;
    const bool global = p->kind->targets == SC_TARGETS_NONE || p->kind->targets == SC_TARGETS_ALL_DYNAMIC;
    const dvi_probe_column* cs = probe_columns(p, &per);
    int64_t ncol = 1 + (global ? per : (int64_t)per * p->target_count);
    if (ncol > INT32_MAX / 2) return DVI_ERR_NOMEM;
    p->columns = (int32_t)ncol;
    p->column_names = calloc((size_t)ncol, sizeof *p->column_names);
    p->units = calloc((size_t)ncol, sizeof *p->units);
    /* arena: "time" + per column at most label (SC_MAX_NAME + 12) + '.' + suffix (≤ 20) + NUL */
    size_t arena = 8 + (size_t)ncol * (SC_MAX_NAME + 40);
    p->arena = malloc(arena);
    if (!p->column_names || !p->units || !p->arena) return DVI_ERR_NOMEM;
    size_t o = 0;
    strcpy(p->arena, "time");
    p->column_names[0] = p->arena;
    p->units[0] = "s";
    o = 5;
    int32_t col = 1;
    int32_t nt = global ? 1 : p->target_count;
    for (int32_t t = 0; t < nt; t++) {
        char label[SC_MAX_NAME + 24];
        if (!global) {
            if (p->kind->targets == SC_TARGETS_JOINTS)
                snprintf(label, sizeof label, "%s", m->joint_names[p->targets[t]] ? m->joint_names[p->targets[t]] : "joint");
            else
                body_label(m, p->targets[t], label, sizeof label);
        }
        for (int k = 0; k < per; k++) {
            int n = global ? snprintf(p->arena + o, arena - o, "%s", cs[k].name)
                           : snprintf(p->arena + o, arena - o, "%s.%s", label, cs[k].name);
            p->column_names[col] = p->arena + o;
            p->units[col] = cs[k].unit;
            o += (size_t)n + 1;
            col++;
        }
    }
    return DVI_OK;
}

static void free_probe(model_probe* p)
{
    free(p->name);
    free(p->title);
    free(p->targets);
    free(p->data);
    free(p->lookup);
    free(p->with);
    free(p->acc);
    free(p->raw);
    free(p->column_names);
    free(p->units);
    free(p->arena);
}

/* ---- building --------------------------------------------------------------------------- */

void dvi_model_destroy(dvi_model* m)
{
    if (!m) return;
    dvi_world_destroy(m->world);
    BASE_FREE_ALL(m->bodies, m->mass, m->iso_inertia, m->inertia);
    for (int32_t i = 0; i < m->explicit_count; i++) free(m->body_names[i]);
    free(m->body_names);
    sc_map_free(&m->body_map);
    for (int32_t i = 0; i < m->generator_count; i++) free(m->generator_names[i]);
    free(m->generator_names);
    free(m->generator_first);
    free(m->generator_count_of);
    sc_map_free(&m->generator_map);
    free(m->joints);
    for (int32_t i = 0; i < m->joint_count; i++) free(m->joint_names[i]);
    free(m->joint_names);
    sc_map_free(&m->joint_map);
    for (int32_t i = 0; i < m->probe_count; i++) free_probe(&m->probes[i]);
    BASE_FREE_ALL(m->probes, m->near_mask, m->near, m->near_chunk, m->near_flag);
    wld_health_free(&m->health);
    free(m);
}

/* A copy of name as *slot, entered in map as i; false when out of memory. */
static bool enter_name(sc_map* map, char** slot, const char* name, int32_t i)
{
    *slot = copy_string(name);
    return *slot && sc_map_put(map, *slot, i);
}

static dvi_status create_shape(dvi_model* m, dvi_body_id body, const sc_shape* sh)
{
    dvi_shape_def sd = dvi_default_shape_def();
    sd.type = sh->type;
    sd.radius = sh->radius;
    sd.half_length = sh->half_length;
    v3_copy(sd.half_extents, sh->half);
    sd.nx = sh->nx;
    sd.ny = sh->ny;
    sd.dx = sh->dx;
    sd.dy = sh->dy;
    sd.heights = sh->heights;
    sd.vertex_count = sh->mesh.vertex_count;
    sd.triangle_count = sh->mesh.triangle_count;
    sd.vertices = sh->mesh.vertices;
    sd.triangles = sh->mesh.triangles;
    v3_copy(sd.offset_position, sh->pos);
    for (int k = 0; k < 4; k++) sd.offset_orientation[k] = sh->q[k];
    sd.material = sh->material;
    sd.collision_category = sh->category;
    sd.collision_mask = sh->mask;
    dvi_shape_id id;
    dvi_status st = dvi_shape_create(m->world, body, &sd, &id);
    if (st == DVI_OK && sh->dem_sample_count > 0)
        st = dvi_shape_set_dem_samples(m->world, id, sh->dem_sample_count, sh->dem_samples);
    return st;
}

/* The bodies of one granular bed: a cubic lattice of cells of side
 * s = 2 r_max + gap, or a hexagonal close packing with neighbours s apart,
 * centred in x and y in the region and resting on its bottom; site i (x
 * fastest, then y, then z) holds sphere i. Per sphere, in
 * this order: the radius (a uniform draw when min < max), then the jitter of
 * x, y and z (uniform in [−jitter, jitter), when jitter > 0), all from one
 * splitmix64 stream seeded with `seed`. */
/* The next sphere of generator g: its position and radius; *cell and *rng
 * carry the lattice cell and the random stream from one sphere to the next
 * (start: cell 0, rng g->seed). */
static void generator_next(const sc_generator* g, const double origin[3], int64_t* cell, uint64_t* rng,
                           double pos[3], double* radius)
{
    const int64_t nxy = (int64_t)g->n[0] * g->n[1];
    for (;; (*cell)++) { /* the next cell that an exclusion does not empty */
        int64_t iz = *cell / nxy, rem = *cell % nxy;
        int64_t iy = rem / g->n[0], ix = rem % g->n[0];
        sc_generator_site(g, origin, ix, iy, iz, pos);
        if (g->exclude_count == 0 || !sc_generator_excluded(g, pos)) break;
    }
    (*cell)++;
    *radius = g->rmin < g->rmax ? g->rmin + (g->rmax - g->rmin) * base_uniform01(rng) : g->rmin;
    if (g->jitter > 0.0)
        for (int k = 0; k < 3; k++) pos[k] += g->jitter * (2.0 * base_uniform01(rng) - 1.0);
}

/* A subset of the scene's bodies (sc_model_create_subset): ascending
 * scene body indices, walked by a cursor as the bodies are created in
 * that order. */
typedef struct model_subset {
    const int64_t* ids;
    int64_t count, at;
} model_subset;

/* True when body b is to be created (always without a subset); b must not
 * decrease from one call to the next. */
static bool subset_take(model_subset* ss, int64_t b)
{
    if (!ss) return true;
    while (ss->at < ss->count && ss->ids[ss->at] < b) ss->at++;
    return ss->at < ss->count && ss->ids[ss->at] == b;
}

static bool subset_has(const model_subset* ss, int64_t b)
{
    if (!ss) return true;
    int64_t lo = 0, hi = ss->count;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (ss->ids[mid] < b) lo = mid + 1;
        else hi = mid;
    }
    return lo < ss->count && ss->ids[lo] == b;
}

/* The bodies of one granular bed: a cubic lattice of cells of side
 * s = 2 r_max + gap, or a hexagonal close packing with neighbours s apart,
 * centred in x and y in the region and resting on its bottom; site i (x
 * fastest, then y, then z) holds sphere i. Per sphere, in
 * this order: the radius (a uniform draw when min < max), then the jitter of
 * x, y and z (uniform in [−jitter, jitter), when jitter > 0), all from one
 * splitmix64 stream seeded with `seed`. With a subset, only its spheres are
 * created (the others are still drawn: the stream is the same). */
static dvi_status create_generator(dvi_model* m, const sc_generator* g, model_subset* ss, char* msg,
                                   size_t msg_size)
{
    const double pi = 3.14159265358979323846;
    double origin[3];
    sc_generator_origin(g, origin);
    uint64_t rng = g->seed;
    int64_t cell = 0;
    for (int64_t i = 0; i < g->count; i++) {
        dvi_body_def bd = dvi_default_body_def();
        double r;
        generator_next(g, origin, &cell, &rng, bd.position, &r);
        int64_t b = g->first_body + i;
        if (!subset_take(ss, b)) continue;
        bd.mass = g->density * 4.0 / 3.0 * pi * r * r * r;
        double I = 0.4 * bd.mass * r * r;
        bd.inertia[0] = bd.inertia[4] = bd.inertia[8] = I;
        dvi_status st = dvi_body_create(m->world, &bd, &m->bodies[b]);
        if (st == DVI_OK) {
            dvi_shape_def sd = dvi_default_shape_def();
            sd.type = DVI_SHAPE_SPHERE;
            sd.radius = r;
            sd.material = g->material;
            dvi_shape_id sid;
            st = dvi_shape_create(m->world, m->bodies[b], &sd, &sid);
        }
        if (st != DVI_OK)
            return fail(msg, msg_size, st, "generator %s, sphere %lld: %s", g->name, (long long)i,
                        dvi_world_last_error(m->world));
        m->mass[b] = bd.mass;
        m->iso_inertia[b - m->explicit_count] = I;
    }
    return DVI_OK;
}

void sc_scene_positions(const dvi_scene* s, double* xyz)
{
    for (int32_t i = 0; i < s->body_count; i++) v3_copy(xyz + 3 * (size_t)i, s->bodies[i].pos);
    for (int32_t k = 0; k < s->generator_count; k++) {
        const sc_generator* g = &s->generators[k];
        double origin[3], r;
        sc_generator_origin(g, origin);
        uint64_t rng = g->seed;
        int64_t cell = 0;
        for (int64_t i = 0; i < g->count; i++)
            generator_next(g, origin, &cell, &rng, xyz + 3 * (size_t)(g->first_body + i), &r);
    }
}

static dvi_status build(dvi_model* m, const dvi_scene* s, const dvi_allocator* alloc, model_subset* ss, char* msg,
                        size_t msg_size)
{
    dvi_world_def wd = dvi_default_world_def();
    if (alloc) wd.allocator = *alloc;
    v3_copy(wd.gravity, s->gravity);
    wd.solver = s->solver;
    wd.solver_settings = s->solver_settings;
    wd.friction_law = s->friction;
    m->threads = s->solver_settings.threads;
    wd.collision_envelope = s->collision_envelope;
    wd.contact_recovery_speed = s->contact_recovery_speed;
    wd.joint_recovery_speed = s->joint_recovery_speed;
    wd.bounce_threshold = s->bounce_threshold;
    wd.joint_solve = s->joint_solve;
    wd.coulomb_check = s->coulomb_check;
    wd.method = strcmp(s->method, "dem") == 0 ? DVI_METHOD_DEM : DVI_METHOD_DVI;
    wd.dem = s->dem;
    dvi_status st = dvi_world_create(&wd, &m->world);
    if (st != DVI_OK) return fail(msg, msg_size, st, "cannot create the world (solver \"%s\")", s->solver);
    m->dt = s->dt;
    double gn = v3_norm(s->gravity);
    if (gn > 0.0) v3_scale(m->up, -1.0 / gn, s->gravity);
    else v3_set(m->up, 0.0, 0.0, 1.0);

    /* names and per-body data */
    m->body_count = s->total_bodies;
    m->explicit_count = s->body_count;
    size_t nb = (size_t)(m->body_count > 0 ? m->body_count : 1);
    size_t ng = (size_t)(m->body_count - m->explicit_count > 0 ? m->body_count - m->explicit_count : 1);
    m->bodies = calloc(nb, sizeof *m->bodies);
    m->mass = calloc(nb, sizeof *m->mass);
    m->iso_inertia = calloc(ng, sizeof *m->iso_inertia);
    m->inertia = calloc(9 * (size_t)(m->explicit_count + 1), sizeof *m->inertia);
    m->body_names = calloc((size_t)m->explicit_count + 1, sizeof *m->body_names);
    m->generator_names = calloc((size_t)s->generator_count + 1, sizeof *m->generator_names);
    m->generator_first = calloc((size_t)s->generator_count + 1, sizeof *m->generator_first);
    m->generator_count_of = calloc((size_t)s->generator_count + 1, sizeof *m->generator_count_of);
    m->joints = calloc((size_t)s->joint_count + 1, sizeof *m->joints);
    m->joint_names = calloc((size_t)s->joint_count + 1, sizeof *m->joint_names);
    m->probes = calloc((size_t)s->probe_count + 1, sizeof *m->probes);
    if (!m->bodies || !m->mass || !m->iso_inertia || !m->inertia || !m->body_names || !m->generator_names ||
        !m->generator_first || !m->generator_count_of || !m->joints || !m->joint_names || !m->probes)
        return fail(msg, msg_size, DVI_ERR_NOMEM, "out of memory");

    /* explicit bodies and their shapes */
    for (int32_t i = 0; i < s->body_count; i++) {
        const sc_body* b = &s->bodies[i];
        if (b->name && !enter_name(&m->body_map, &m->body_names[i], b->name, i)) /* every name: the probes' columns */
            return fail(msg, msg_size, DVI_ERR_NOMEM, "out of memory");
        if (!subset_take(ss, i)) continue;
        dvi_body_def bd = dvi_default_body_def();
        bd.type = b->type;
        if (b->type == DVI_BODY_DYNAMIC) {
            bd.mass = b->mass;
            memcpy(bd.inertia, b->inertia, sizeof bd.inertia);
            bd.gravity_scale = b->gravity_scale;
            m->mass[i] = b->mass;
            memcpy(m->inertia + 9 * (size_t)i, b->inertia, sizeof b->inertia);
        }
        v3_copy(bd.position, b->pos);
        for (int k = 0; k < 4; k++) bd.orientation[k] = b->q[k];
        v3_copy(bd.velocity, b->v);
        v3_copy(bd.angular_velocity, b->w);
        const char* label = b->name ? b->name : "";
        st = dvi_body_create(m->world, &bd, &m->bodies[i]);
        if (st != DVI_OK)
            return fail(msg, msg_size, st, "bodies[%d] %s: %s", i, label, dvi_world_last_error(m->world));
        if (b->has_force) {
            st = dvi_body_set_applied_force(m->world, m->bodies[i], b->force, b->torque);
            if (st != DVI_OK)
                return fail(msg, msg_size, st, "bodies[%d] %s: %s", i, label, dvi_world_last_error(m->world));
        }
        for (int32_t k = 0; k < b->shape_count; k++) {
            st = create_shape(m, m->bodies[i], &s->shapes[b->shape_first + k]);
            if (st != DVI_OK)
                return fail(msg, msg_size, st, "bodies[%d] %s, shapes[%d]: %s", i, label, k,
                            dvi_world_last_error(m->world));
        }
    }
    /* generated bodies */
    for (int32_t g = 0; g < s->generator_count; g++) {
        const sc_generator* gen = &s->generators[g];
        m->generator_first[g] = gen->first_body;
        m->generator_count_of[g] = gen->count;
        m->generator_count = g + 1;
        if (!enter_name(&m->generator_map, &m->generator_names[g], gen->name, g))
            return fail(msg, msg_size, DVI_ERR_NOMEM, "out of memory");
        st = create_generator(m, gen, ss, msg, msg_size);
        if (st != DVI_OK) return st;
    }
    /* joints */
    for (int32_t i = 0; i < s->joint_count; i++) {
        const sc_joint* j = &s->joints[i];
        if (j->name && !enter_name(&m->joint_map, &m->joint_names[i], j->name, i))
            return fail(msg, msg_size, DVI_ERR_NOMEM, "out of memory");
        m->joint_count = i + 1;
        if (!(j->a < 0 || subset_has(ss, j->a)) || !subset_has(ss, j->b)) continue; /* a subset without its bodies */
        dvi_joint_def jd = j->def;
        if (j->a >= 0) jd.body_a = m->bodies[j->a];
        jd.body_b = m->bodies[j->b];
        st = dvi_joint_create(m->world, &jd, &m->joints[i]);
        if (st != DVI_OK)
            return fail(msg, msg_size, st, "joints[%d] %s: %s", i, j->name ? j->name : "",
                        dvi_world_last_error(m->world));
    }
    /* terrain models (scene_terrain.c): force elements on the bodies (a subset has none: refused) */
    if (!ss) {
        st = sc_build_terrain(s, m->world, m->bodies, m->body_count, msg, msg_size);
        if (st != DVI_OK) return st;
    }
    /* probes */
    for (int32_t i = 0; i < s->probe_count; i++) {
        m->probe_count = i + 1;
        st = build_probe(m, &s->probes[i], &m->probes[i]);
        if (st != DVI_OK) return fail(msg, msg_size, st, "probes[%d]: out of memory", i);
    }
    m->near_step = -1;
    int32_t top = 0;
    for (int32_t i = 0; i < m->probe_count; i++)
        for (int32_t t = 0; m->probes[i].lookup && t < m->probes[i].target_count; t++)
            if (m->probes[i].lookup[2 * t] > top) top = m->probes[i].lookup[2 * t];
    if (top > 0) {
        m->near_mask = calloc((size_t)top + 1, 1);
        if (!m->near_mask) return fail(msg, msg_size, DVI_ERR_NOMEM, "probes: out of memory");
        m->near_mask_size = top + 1;
        for (int32_t i = 0; i < m->probe_count; i++)
            for (int32_t t = 0; m->probes[i].lookup && t < m->probes[i].target_count; t++)
                m->near_mask[m->probes[i].lookup[2 * t]] = 1;
    }
    st = wld_health_init(&m->health, &s->health, m->world);
    if (st != DVI_OK) return fail(msg, msg_size, st, "the health monitor: out of memory");
    if (ss) return DVI_OK; /* a subset's world indices are not the scene's: its messages number the bodies */
    /* from here on the world's messages name bodies as the scene does */
    return dvi_world_set_body_namer(m->world, name_body, m);
}

dvi_status dvi_model_create(const dvi_scene* s, dvi_model** out, char* msg, size_t msg_size)
{
    return dvi_model_create_with(s, NULL, out, msg, msg_size);
}

dvi_status dvi_model_create_with(const dvi_scene* s, const dvi_allocator* alloc, dvi_model** out, char* msg,
                                 size_t msg_size)
{
    if (msg && msg_size > 0) msg[0] = '\0';
    if (!out) return fail(msg, msg_size, DVI_ERR_INVALID_ARG, "dvi_model_create: out is NULL");
    *out = NULL;
    if (!s) return fail(msg, msg_size, DVI_ERR_INVALID_ARG, "dvi_model_create: scene is NULL");
    if (strcmp(s->method, "dvi") != 0 && strcmp(s->method, "dem") != 0)
        return fail(msg, msg_size, DVI_ERR_INVALID_ARG, "formulation.method: unknown method \"%s\"", s->method);
    dvi_model* m = calloc(1, sizeof *m);
    if (!m) return fail(msg, msg_size, DVI_ERR_NOMEM, "out of memory");
    dvi_status st = build(m, s, alloc, NULL, msg, msg_size);
    if (st != DVI_OK) {
        dvi_model_destroy(m);
        return st;
    }
    *out = m;
    return DVI_OK;
}

dvi_status sc_model_create_subset(const dvi_scene* s, const int64_t* ids, int64_t count, dvi_model** out, char* msg,
                                  size_t msg_size)
{
    if (msg && msg_size > 0) msg[0] = '\0';
    *out = NULL;
    if (s->terrain_count > 0)
        return fail(msg, msg_size, DVI_ERR_INVALID_ARG, "terrains: a subset of the bodies cannot carry terrain models");
    for (int64_t k = 0; k < count; k++)
        if (ids[k] < 0 || ids[k] >= s->total_bodies || (k > 0 && ids[k] <= ids[k - 1]))
            return fail(msg, msg_size, DVI_ERR_INVALID_ARG, "subset: body indices must ascend within [0, %lld)",
                        (long long)s->total_bodies);
    dvi_model* m = calloc(1, sizeof *m);
    if (!m) return fail(msg, msg_size, DVI_ERR_NOMEM, "out of memory");
    model_subset ss = {ids, count, 0};
    dvi_status st = build(m, s, NULL, &ss, msg, msg_size);
    if (st != DVI_OK) {
        dvi_model_destroy(m);
        return st;
    }
    *out = m;
    return DVI_OK;
}

dvi_body_id sc_model_body(const dvi_model* m, int64_t b)
{
    return m->bodies[b];
}

int32_t sc_model_joint_count(const dvi_model* m)
{
    return m->joint_count;
}

dvi_joint_id sc_model_joint(const dvi_model* m, int32_t j)
{
    return m->joints[j];
}

dvi_world* dvi_model_world(dvi_model* m)
{
    return m ? m->world : NULL;
}

const dvi_world* dvi_model_world_const(const dvi_model* m)
{
    return m ? m->world : NULL;
}

static void raw_values(const dvi_model* m, const model_probe* p, double* raw);

/* Whether contact k of the last step touches a body a probe names. */
static bool near_hit(const dvi_model* m, int32_t k)
{
    dvi_contact_info ci;
    if (dvi_world_get_contact(m->world, k, &ci) != DVI_OK) return false;
    int32_t a = ci.body_a.index1, b = ci.body_b.index1;
    return (a > 0 && a < m->near_mask_size && m->near_mask[a]) || (b > 0 && b < m->near_mask_size && m->near_mask[b]);
}

#define NEAR_CHUNK 16384 /* contacts per chunk of the parallel scan */

/* m->near: the last step's contacts that touch a probed body, ascending.
 * Chunks of contacts are scanned in parallel (hits counted, then written at
 * their offsets), so the list is the same for any thread count. */
static dvi_status near_contacts(dvi_model* m)
{
    const int32_t nc = dvi_world_contact_count(m->world);
    const int32_t nch = (nc + NEAR_CHUNK - 1) / NEAR_CHUNK;
    if (nch + 1 > m->near_chunk_cap) {
        int32_t* q = realloc(m->near_chunk, (size_t)(nch + 1) * sizeof *q);
        if (!q) return DVI_ERR_NOMEM;
        m->near_chunk = q;
        m->near_chunk_cap = nch + 1;
    }
    if (nc > m->near_flag_cap) {
        uint8_t* q = realloc(m->near_flag, (size_t)nc);
        if (!q) return DVI_ERR_NOMEM;
        m->near_flag = q;
        m->near_flag_cap = nc;
    }
    int32_t* cnt = m->near_chunk;
    uint8_t* flag = m->near_flag;
#ifdef _OPENMP
    const int nt = m->threads > 0 ? m->threads : omp_get_max_threads();
#pragma omp parallel for schedule(static) num_threads(nt) if (nt > 1 && nch > 1)
#endif
    for (int32_t ch = 0; ch < nch; ch++) {
        const int32_t k1 = ch == nch - 1 ? nc : (ch + 1) * NEAR_CHUNK;
        int32_t n = 0;
        for (int32_t k = ch * NEAR_CHUNK; k < k1; k++) n += flag[k] = near_hit(m, k);
        cnt[ch + 1] = n;
    }
    cnt[0] = 0;
    for (int32_t ch = 0; ch < nch; ch++) cnt[ch + 1] += cnt[ch];
    const int32_t total = nch > 0 ? cnt[nch] : 0;
    if (total > m->near_cap) {
        int32_t* q = realloc(m->near, (size_t)total * sizeof *q);
        if (!q) return DVI_ERR_NOMEM;
        m->near = q;
        m->near_cap = total;
    }
#ifdef _OPENMP
#pragma omp parallel for schedule(static) num_threads(nt) if (nt > 1 && nch > 1)
#endif
    for (int32_t ch = 0; ch < nch; ch++) {
        const int32_t k1 = ch == nch - 1 ? nc : (ch + 1) * NEAR_CHUNK;
        int32_t at = cnt[ch];
        for (int32_t k = ch * NEAR_CHUNK; k < k1; k++)
            if (flag[k]) m->near[at++] = k;
    }
    m->near_count = total;
    return DVI_OK;
}

/* Whether the probe is due after step n: by steps, when n is a multiple of
 * `every`; by time, at the step nearest each multiple k·interval (the one
 * with k·interval in [(n − ½) dt, (n + ½) dt)), step 0 included, so that
 * runs at different steps sample the same times to within half a step, and
 * to rounding when the step divides the interval. */
static bool probe_due_at(const dvi_model* m, const model_probe* p, int64_t n)
{
    if (!(p->interval > 0.0)) return n % p->every == 0;
    if (n == 0) return true;
    const double r = m->dt / p->interval;
    return floor(((double)n + 0.5) * r) > floor(((double)n - 0.5) * r);
}

static dvi_status after_step(dvi_model* m);

dvi_status dvi_model_step(dvi_model* m)
{
    if (!m) return base_error_set(DVI_ERR_INVALID_ARG, "dvi_model_step: invalid argument (!m)");
    wld_health_before_step(&m->health, m->world, m->dt);
    dvi_status st = dvi_world_step(m->world, m->dt);
    if (st < 0) return st; /* the world's message names bodies as the scene does (name_body) */
    dvi_status pst = after_step(m);
    if (pst != DVI_OK) return pst;
    dvi_status hst = wld_health_after_step(&m->health, m->world, m->steps, m->dt, m->joint_names);
    return hst < 0 ? hst : st;
}

/* A step's bookkeeping once the world has stepped: the step count, the
 * contacts the probes walk, the averaging windows. */
static dvi_status after_step(dvi_model* m)
{
    m->steps++;
    /* the contacts the contact-walking probes need, once: on every step when
     * one of them averages, else on the steps where one is due (a sample at
     * another step walks all contacts) */
    bool need_near = false;
    for (int32_t i = 0; m->near_mask && i < m->probe_count && !need_near; i++) {
        const model_probe* p = &m->probes[i];
        need_near = p->lookup && (p->average || probe_due_at(m, p, m->steps));
    }
    m->near_step = -1;
    if (need_near) {
        dvi_status nst = near_contacts(m);
        if (nst != DVI_OK) return nst;
        m->near_step = m->steps;
        m->near_time = dvi_world_time(m->world);
    }
    /* averaged probes: a window starts after each due step */
    for (int32_t i = 0; i < m->probe_count; i++) {
        model_probe* p = &m->probes[i];
        if (!p->average) continue;
        size_t n = (size_t)p->raw_width * (size_t)p->target_count;
        if (probe_due_at(m, p, m->steps - 1)) {
            memset(p->acc, 0, n * sizeof *p->acc);
            p->acc_count = 0;
        }
        raw_values(m, p, p->acc); /* adds */
        p->acc_count++;
    }
    return DVI_OK;
}

dvi_status dvi_model_health(const dvi_model* m, dvi_health_report* out)
{
    if (!m || !out) return base_error_set(DVI_ERR_INVALID_ARG, "dvi_model_health: invalid argument (!m || !out)");
    *out = m->health.rep;
    return DVI_OK;
}

int64_t dvi_model_step_count(const dvi_model* m)
{
    return m ? m->steps : 0;
}

double dvi_model_time(const dvi_model* m)
{
    /* the step count times dt: the world's time is a sum of the steps,
     * which drifts in its last bits (0.019999999999999355 after ten steps
     * of 2 ms) */
    return m ? (double)m->steps * m->dt : NAN;
}

dvi_status dvi_model_body_name(const dvi_model* m, dvi_body_id body, char* out, size_t size)
{
    if (out && size) out[0] = '\0';
    if (!m || !out || size == 0) return base_error_set(DVI_ERR_INVALID_ARG, "dvi_model_body_name: invalid argument (!m || !out || size == 0)");
    const int32_t b = wld_body_index(m->world, body);
    if (b < 0) return base_error_set(DVI_ERR_INVALID_ARG, "body: not an id of this model's world");
    label_body(m, b, out, size);
    return DVI_OK;
}

dvi_status dvi_model_find_body(const dvi_model* m, const char* name, dvi_body_id* out)
{
    if (out) memset(out, 0, sizeof *out);
    if (!m || !name || !out) return base_error_set(DVI_ERR_INVALID_ARG, "dvi_model_find_body: invalid argument (!m || !name || !out)");
    int64_t b = model_resolve(m, name);
    if (b < 0) return base_error_setf(DVI_ERR_INVALID_ARG, "body \"%s\": not in the model", name);
    *out = m->bodies[b];
    return DVI_OK;
}

dvi_status dvi_model_find_joint(const dvi_model* m, const char* name, dvi_joint_id* out)
{
    if (out) memset(out, 0, sizeof *out);
    if (!m || !name || !out) return base_error_set(DVI_ERR_INVALID_ARG, "dvi_model_find_joint: invalid argument (!m || !name || !out)");
    int32_t j = sc_map_get(&m->joint_map, name);
    if (j < 0) return base_error_setf(DVI_ERR_INVALID_ARG, "joint \"%s\": not in the model", name);
    *out = m->joints[j];
    return DVI_OK;
}

/* ---- probes: sampling -------------------------------------------------------------------- */

int32_t dvi_model_probe_count(const dvi_model* m)
{
    return m ? m->probe_count : 0;
}

dvi_status dvi_model_probe_info(const dvi_model* m, int32_t probe, dvi_probe_info* out)
{
    if (!m || !out || probe < 0 || probe >= m->probe_count) return base_error_set(DVI_ERR_INVALID_ARG, "dvi_model_probe_info: invalid argument (!m || !out || probe < 0 || probe >= m->probe_count)");
    const model_probe* p = &m->probes[probe];
    out->name = p->name;
    out->title = p->title;
    out->every = p->interval > 0.0 ? (int32_t)fmax(1.0, fmin(2147483647.0, floor(p->interval / m->dt + 0.5)))
                                   : p->every;
    out->interval = p->interval;
    out->columns = p->columns;
    out->column_names = (const char* const*)p->column_names;
    out->units = p->units;
    return DVI_OK;
}

bool dvi_model_probe_due(const dvi_model* m, int32_t probe)
{
    if (!m || probe < 0 || probe >= m->probe_count) return false;
    return probe_due_at(m, &m->probes[probe], m->steps);
}

/* ½ m v² + ½ ωᵀ R J Rᵀ ω of body b. */
static double kinetic_energy(const dvi_model* m, int64_t b)
{
    if (!(m->mass[b] > 0.0)) return 0.0;
    double v[3], w[3];
    dvi_body_get_velocity(m->world, m->bodies[b], v);
    dvi_body_get_angular_velocity(m->world, m->bodies[b], w);
    double e = 0.5 * m->mass[b] * v3_dot(v, v);
    if (b >= m->explicit_count) return e + 0.5 * m->iso_inertia[b - m->explicit_count] * v3_dot(w, w);
    double q[4], R[9], wl[3], Jw[3];
    dvi_body_get_orientation(m->world, m->bodies[b], q);
    q_to_m3(R, q);
    m3_tmulv(wl, R, w); /* body frame */
    m3_mulv(Jw, m->inertia + 9 * (size_t)b, wl);
    return e + 0.5 * v3_dot(wl, Jw);
}

/* One target's per-step quantities of a contact_force (not "normal") or
 * joint_reaction probe: force and torque. */
static dvi_status raw_target(const dvi_model* m, const model_probe* p, int32_t t, double r[6])
{
    if (sc_probe_is_joint_reaction(p->kind)) return dvi_joint_get_reaction(m->world, m->joints[p->targets[t]], r, r + 3);
    const dvi_body_id b = m->bodies[p->targets[t]];
    dvi_status st = dvi_body_get_contact_force(m->world, b, r, r + 3);
    if (st != DVI_OK || dvi_world_force_element_count(m->world) == 0) return st;
    /* the force elements' (terrain models') force and torque: a wheel's load on soil */
    double f[6];
    st = dvi_body_get_step_force(m->world, b, f, f + 3);
    for (int k = 0; k < 6 && st == DVI_OK; k++) r[k] += f[k];
    return st;
}

/* The probe's target with body id index1 `id`, or −1. */
static int32_t target_of(const model_probe* p, int32_t id)
{
    int32_t key[2] = {id, 0};
    const int32_t* hit = bsearch(key, p->lookup, (size_t)p->target_count, 2 * sizeof *p->lookup, cmp_pair);
    return hit ? hit[1] : -1;
}

static bool with_has(const model_probe* p, int32_t id)
{
    return bsearch(&id, p->with, (size_t)p->with_count, sizeof *p->with, sc_cmp_i32) != NULL;
}

/* Adds the last step's quantities of a contact_force or joint_reaction probe
 * to raw[raw_width · target_count].
 * - Component "normal", or "with" given: one pass over the contacts of the
 *   last step. Each contact adds, to the targets among its two bodies (whose
 *   other body is in "with", if given), its normal force (raw_width 1) or
 *   its force on the target and that force's torque about the target's centre
 *   of mass, with the lever from the end-of-step position to the contact
 *   point (raw_width 6; rolling and spin couples are not in it).
 *   Without "with", the normal load of the terrain models (SCM soils,
 *   Bekker–Wong wheels) on each target is added (terrain_normal_load).
 * - Otherwise: each target's contact force and torque as the world sums them,
 *   plus the force elements' force and torque on it (dvi_body_get_step_force:
 *   a wheel on soil is carried by them, not by contacts). */
/* A rank's part (m->part): whether it adds the contact's share to the
 * target at one end. An owned target takes all its contacts (its owner has
 * every one of them); a fixed target (on every rank) takes those whose other
 * body this rank owns; a ghost none. */
static bool part_adds(const dvi_model* m, dvi_body_id target, dvi_body_id other)
{
    const int8_t lt = m->part[target.index1 - 1];
    if (lt == SC_LEVEL_OWNED) return true;
    return lt == SC_LEVEL_FIXED && !DVI_IS_NULL(other) && m->part[other.index1 - 1] == SC_LEVEL_OWNED;
}

/* Adds to r[6] the force of contact ci on its end e and that force's torque
 * about the end's centre of mass (the lever from the end-of-step position). */
static void add_contact_wrench(const dvi_world* w, const dvi_contact_info* ci, int e, dvi_body_id end, double* r)
{
    double f[3], x[3], lever[3], tq[3];
    v3_scale(f, e == 1 ? 1.0 : -1.0, ci->force); /* force on body b; −force on a */
    if (dvi_body_get_position(w, end, x) != DVI_OK) return;
    v3_sub(lever, ci->point, x);
    v3_cross(tq, lever, f);
    for (int q = 0; q < 3; q++) {
        r[q] += f[q];
        r[3 + q] += tq[q];
    }
}

/* A rank's share of a fixed body's contact force and torque: its contacts
 * with the bodies this rank owns (the world's per-body sums hold the
 * ghosts' contacts too, which their owners count). With the DVI method the
 * torque is the world's own: each contact's levers of the step's rows and
 * its spin and rolling couples (step_dvi.c); with DEM the lever from the
 * body's position to the contact point, as DEM takes it. */
static void fixed_share(const dvi_model* m, dvi_body_id b, double* r)
{
    const dvi_world* w = m->world;
    const int32_t nc = dvi_world_contact_count(w);
    const bool rows = w->def.method != DVI_METHOD_DEM && w->fr_arm && w->fr_ell;
    const double h = m->dt;
    for (int32_t j = 0; j < nc; j++) {
        dvi_contact_info ci;
        if (dvi_world_get_contact(w, j, &ci) != DVI_OK) continue;
        const dvi_body_id ends[2] = {ci.body_a, ci.body_b};
        for (int e = 0; e < 2; e++) {
            if (ends[e].index1 != b.index1 || !part_adds(m, ends[e], ends[1 - e])) continue;
            if (!rows) {
                add_contact_wrench(w, &ci, e, b, r);
                continue;
            }
            const wld_contact_rec* rec = &w->contacts[j];
            double arm[6], t[3], couple[3] = {0, 0, 0};
            wld_f2d(w->fr_arm + 6 * (size_t)j, 6, arm);
            v3_cross(t, arm + 3 * e, rec->force);
            if (rec->nrows == 6) {
                double d[9];
                wld_f2d(w->fr_frame + 9 * (size_t)j, 9, d);
                for (int q = 3; q < 6; q++) v3_axpy(couple, w->fr_ell[j] * w->gamma[rec->row + q] / h, d + 3 * (q - 3));
            }
            const double sg = e == 1 ? 1.0 : -1.0; /* +f on b, −f on a */
            for (int k = 0; k < 3; k++) {
                r[k] += sg * rec->force[k];
                r[3 + k] += sg * (t[k] + couple[k]);
            }
        }
    }
}

/* What this model holds of target t's force and torque (raw_target), into
 * r[6]: the whole on one process, and in a rank's part when it owns the body
 * (the joints: the root, with the bodies the scene lists); a fixed body's
 * share (fixed_share); nothing elsewhere (*held false, r untouched). */
static dvi_status target_held(const dvi_model* m, const model_probe* p, int32_t t, double r[6], bool* held)
{
    *held = true;
    if (!m->part) return raw_target(m, p, t, r);
    if (sc_probe_is_joint_reaction(p->kind)) {
        *held = m->part_root && !DVI_IS_NULL(m->joints[p->targets[t]]);
    } else {
        const dvi_body_id b = m->bodies[p->targets[t]];
        const int8_t lv = DVI_IS_NULL(b) ? -1 : m->part[b.index1 - 1];
        if (lv == SC_LEVEL_FIXED) {
            for (int k = 0; k < 6; k++) r[k] = 0.0;
            fixed_share(m, b, r);
            return DVI_OK;
        }
        *held = lv == SC_LEVEL_OWNED;
    }
    return *held ? raw_target(m, p, t, r) : DVI_OK;
}

static void raw_values(const dvi_model* m, const model_probe* p, double* raw)
{
    const dvi_world* w = m->world;
    if (p->raw_width == 1 || p->with_count > 0) {
        /* the contacts that touch a probed body (dvi_model_step), else all */
        const bool near = m->near_step == m->steps && m->near_time == dvi_world_time(w);
        int32_t nc = near ? m->near_count : dvi_world_contact_count(w);
        for (int32_t j = 0; j < nc; j++) {
            dvi_contact_info ci;
            if (dvi_world_get_contact(w, near ? m->near[j] : j, &ci) != DVI_OK) continue;
            const dvi_body_id ends[2] = {ci.body_a, ci.body_b};
            for (int e = 0; e < 2; e++) {
                int32_t t = target_of(p, ends[e].index1);
                if (t < 0 || (p->with_count > 0 && !with_has(p, ends[1 - e].index1))) continue;
                if (m->part && !part_adds(m, ends[e], ends[1 - e])) continue;
                if (p->raw_width == 1) {
                    raw[t] += v3_dot(ci.force, ci.normal);
                    continue;
                }
                add_contact_wrench(w, &ci, e, ends[e], raw + 6 * (size_t)t);
            }
        }
        /* "normal" without "with": the terrain models' normal loads too */
        if (p->raw_width == 1 && p->with_count == 0 && dvi_world_force_element_count(w) > 0)
            for (int32_t t = 0; t < p->target_count; t++) raw[t] += terrain_normal_load(w, m->bodies[p->targets[t]]);
        return;
    }
    for (int32_t t = 0; t < p->target_count; t++) {
        double r[6];
        bool held;
        if (target_held(m, p, t, r, &held) != DVI_OK || !held) continue; /* targets were checked at the build */
        for (int k = 0; k < 6; k++) raw[6 * (size_t)t + (size_t)k] += r[k];
    }
}

/* kinetic_energy: the sum over its bodies (none named: every body). */
static dvi_status sample_kinetic_energy(const dvi_model* m, const model_probe* p, double* o)
{
    double e = 0.0;
    if (p->target_count == 0)
        for (int64_t b = 0; b < m->body_count; b++) e += kinetic_energy(m, b);
    else
        for (int32_t t = 0; t < p->target_count; t++) e += kinetic_energy(m, p->targets[t]);
    o[0] = e;
    return DVI_OK;
}

/* energy: each body's kinetic energy and its potential energy in the
 * world's gravity g, −m s g · x (s its gravity_scale, x its centre of mass):
 * zero at the origin, 0 for fixed and kinematic bodies. */
static const dvi_probe_column COLS_BODY_ENERGY[] = {{"kinetic", "J"}, {"potential", "J"}};

static dvi_status energy_of(const dvi_model* m, int64_t b, double* o)
{
    const dvi_world* w = m->world;
    double x[3];
    dvi_status st = dvi_body_get_position(w, m->bodies[b], x);
    if (st != DVI_OK) return st;
    const double s = w->bodies[wld_body_index(w, m->bodies[b])].gravity_scale;
    o[0] = kinetic_energy(m, b);                        /* kinetic */
    o[1] = -m->mass[b] * s * v3_dot(w->def.gravity, x); /* potential */
    return DVI_OK;
}

static dvi_status sample_energy(const dvi_model* m, const model_probe* p, double* o)
{
    for (int32_t t = 0; t < p->target_count; t++, o += 2) {
        dvi_status st = energy_of(m, p->targets[t], o);
        if (st != DVI_OK) return st;
    }
    return DVI_OK;
}

/* energy_audit: the health monitor's energy audit so far (docs/health.md):
 * the change of the kinetic energy plus gravity's potential, the work put
 * in, the energy the contacts and the joints took, and what none of them
 * accounts for, in joules and in energy scales. */
static const dvi_probe_column COLS_AUDIT[] = {{"energy_change", "J"},       {"work_in", "J"},
                                              {"dissipated_contacts", "J"}, {"dissipated_joints", "J"},
                                              {"error", "J"},               {"error_relative", "1"}};

static dvi_status sample_energy_audit(const dvi_model* m, const model_probe* p, double* o)
{
    (void)p;
    const dvi_health_report* r = &m->health.rep;
    o[0] = r->energy_change;
    o[1] = r->work_in;
    o[2] = r->dissipated_contacts;
    o[3] = r->dissipated_joints;
    o[4] = r->audit_error;
    o[5] = r->audit_error / (r->energy_scale > 1e-300 ? r->energy_scale : 1e-300);
    return DVI_OK;
}

/* contact_force and joint_reaction, in two halves so that a scene spread
 * over ranks can sum the ranks' raw values in between: wrench_raw gives the
 * raw values, raw_width per target (the window's sums when averaging, else
 * the last step's), and wrench_finish the columns (the mean, the
 * component). */
static dvi_status wrench_raw(const dvi_model* m, const model_probe* p, double* raw)
{
    const int32_t wd = p->raw_width;
    const size_t n = (size_t)wd * (size_t)p->target_count;
    if (p->average && p->acc_count > 0) {
        memcpy(raw, p->acc, n * sizeof *raw);
        return DVI_OK;
    }
    if (wd == 1 || p->with_count > 0) { /* walks the contacts ("normal", "with") */
        for (size_t i = 0; i < n; i++) raw[i] = 0.0;
        raw_values(m, p, raw);
        return DVI_OK;
    }
    for (int32_t t = 0; t < p->target_count; t++) { /* a part gives −0 where it holds nothing */
        double* r = raw + 6 * (size_t)t;
        bool held;
        dvi_status st = target_held(m, p, t, r, &held);
        if (st != DVI_OK) return st;
        if (!held)
            for (int k = 0; k < 6; k++) r[k] = -0.0;
    }
    return DVI_OK;
}

static void wrench_finish(const dvi_model* m, const model_probe* p, const double* raw, double* o)
{
    const int32_t wd = p->raw_width;
    const bool mean = p->average && p->acc_count > 0;
    for (int32_t t = 0; t < p->target_count; t++) {
        double r[6];
        for (int32_t k = 0; k < wd; k++) {
            const double v = raw[(size_t)wd * (size_t)t + (size_t)k];
            r[k] = mean ? v / (double)p->acc_count : v;
        }
        if (wd == 1) o[t] = r[0];
        else if (sc_probe_is_joint_reaction(p->kind) || p->component == SC_COMPONENT_VECTOR)
            memcpy(o + 6 * (size_t)t, r, sizeof r);
        else if (p->component == SC_COMPONENT_MAGNITUDE) o[t] = v3_norm(r);
        else o[t] = v3_dot(r, p->component == SC_COMPONENT_UP ? m->up : p->direction);
    }
}

/* contact_force and joint_reaction: the last step's quantities (raw_values),
 * or their mean since the last due step. */
static dvi_status sample_wrench(const dvi_model* m, const model_probe* p, double* o)
{
    dvi_status st = wrench_raw(m, p, p->raw);
    if (st == DVI_OK) wrench_finish(m, p, p->raw, o);
    return st;
}

/* ---- probes: the table of kinds ------------------------------------------------------ */

static const char* const KEYS_CONTACT[] = {"component", "average", "with", NULL};
static const char* const KEYS_JOINT[] = {"average", NULL};

#define NCOLS(a) (int32_t)(sizeof(a) / sizeof(a)[0])

/* The library's probe kinds (docs/scene-format.md), one row each: name,
 * default title, targets, own keys, columns, sample function. */
static const sc_probe_class KINDS[] = {
    {"position", "Position", SC_TARGETS_BODIES, NULL, COLS_POSITION, NCOLS(COLS_POSITION), sample_position, NULL, NULL},
    {"velocity", "Velocity", SC_TARGETS_BODIES, NULL, COLS_VELOCITY, NCOLS(COLS_VELOCITY), sample_velocity, NULL, NULL},
    {"angular_velocity", "Angular velocity", SC_TARGETS_BODIES, NULL, COLS_ANGULAR, NCOLS(COLS_ANGULAR),
     sample_angular_velocity, NULL, NULL},
    {"orientation", "Orientation", SC_TARGETS_BODIES, NULL, COLS_ORIENTATION, NCOLS(COLS_ORIENTATION),
     sample_orientation, NULL, NULL},
    {"joint_reaction", "Joint reaction", SC_TARGETS_JOINTS, KEYS_JOINT, COLS_WRENCH, NCOLS(COLS_WRENCH), NULL,
     sample_wrench, NULL},
    {"contact_force", "Contact force", SC_TARGETS_BODIES, KEYS_CONTACT, COLS_WRENCH, NCOLS(COLS_WRENCH), NULL,
     sample_wrench, NULL},
    {"solver", "Solver statistics", SC_TARGETS_NONE, NULL, COLS_SOLVER, NCOLS(COLS_SOLVER), NULL, sample_solver, NULL},
    {"kinetic_energy", "Kinetic energy", SC_TARGETS_ALL_DYNAMIC, NULL, COLS_ENERGY, NCOLS(COLS_ENERGY), NULL,
     sample_kinetic_energy, NULL},
    {"energy", "Energy", SC_TARGETS_BODIES, NULL, COLS_BODY_ENERGY, NCOLS(COLS_BODY_ENERGY), NULL, sample_energy, NULL},
    {"energy_audit", "Energy audit", SC_TARGETS_NONE, NULL, COLS_AUDIT, NCOLS(COLS_AUDIT), NULL, sample_energy_audit,
     NULL},
    {"soil", "Soil contact", SC_TARGETS_BODIES, NULL, COLS_SOIL, NCOLS(COLS_SOIL), sample_soil, NULL, NULL},
};
#define NKINDS NCOLS(KINDS)

/* Registered kinds (dvi_probe_register), after the library's. */
#define MAX_REGISTERED 64
static dvi_probe_class registered_ext[MAX_REGISTERED];
static sc_probe_class registered[MAX_REGISTERED];
static int32_t registered_count;
_Static_assert(NKINDS + MAX_REGISTERED <= SC_MAX_PROBE_KINDS, "SC_MAX_PROBE_KINDS holds every kind");

/* The two kinds sampled by sample_wrench: on bodies, on joints. */
bool sc_probe_is_contact_force(const sc_probe_class* k)
{
    return k && k->sample == sample_wrench && k->targets == SC_TARGETS_BODIES;
}

bool sc_probe_is_joint_reaction(const sc_probe_class* k)
{
    return k && k->sample == sample_wrench && k->targets == SC_TARGETS_JOINTS;
}

const sc_probe_class* sc_probe_class_find(const char* what)
{
    if (!what) return NULL;
    for (int32_t i = 0; i < NKINDS; i++)
        if (strcmp(KINDS[i].name, what) == 0) return &KINDS[i];
    for (int32_t i = 0; i < registered_count; i++)
        if (strcmp(registered[i].name, what) == 0) return &registered[i];
    return NULL;
}

void sc_probe_class_names(const char** names)
{
    int32_t n = 0;
    for (int32_t i = 0; i < NKINDS; i++) names[n++] = KINDS[i].name;
    for (int32_t i = 0; i < registered_count; i++) names[n++] = registered[i].name;
    names[n] = NULL;
}

static bool same_class(const dvi_probe_class* a, const dvi_probe_class* b)
{
    return strcmp(a->name, b->name) == 0 && a->sample == b->sample && a->setup == b->setup &&
           a->columns == b->columns && a->column_count == b->column_count && a->keys == b->keys &&
           a->key_count == b->key_count && a->data_width == b->data_width;
}

dvi_status dvi_probe_register(const dvi_probe_class* k)
{
    if (!k) return base_error_set(DVI_ERR_INVALID_ARG, "dvi_probe_register: invalid argument (!kind)");
    if (!k->name || !k->name[0] || strlen(k->name) > SC_MAX_NAME)
        return base_error_set(DVI_ERR_INVALID_ARG, "dvi_probe_register: name: 1 to 64 letters, digits or '_'");
    for (const char* c = k->name; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '_'))
            return base_error_setf(DVI_ERR_INVALID_ARG, "dvi_probe_register: name \"%s\": letters, digits or '_' only",
                                  k->name);
    if (!k->label) return base_error_setf(DVI_ERR_INVALID_ARG, "dvi_probe_register: \"%s\": label: missing", k->name);
    if (!k->columns || k->column_count < 1 || k->column_count > 64)
        return base_error_setf(DVI_ERR_INVALID_ARG, "dvi_probe_register: \"%s\": columns: 1 to 64 needed", k->name);
    for (int32_t i = 0; i < k->column_count; i++)
        if (!k->columns[i].name || !k->columns[i].unit || strlen(k->columns[i].name) > 20)
            return base_error_setf(DVI_ERR_INVALID_ARG,
                                  "dvi_probe_register: \"%s\": columns[%d]: a name of 1 to 20 characters and a unit",
                                  k->name, (int)i);
    if (k->key_count < 0 || k->key_count > DVI_PROBE_MAX_KEYS || (k->key_count > 0 && !k->keys))
        return base_error_setf(DVI_ERR_INVALID_ARG, "dvi_probe_register: \"%s\": keys: 0 to %d keys", k->name,
                              DVI_PROBE_MAX_KEYS);
    for (int32_t i = 0; i < k->key_count; i++)
        if (!k->keys[i].name || (k->keys[i].type != DVI_PROBE_KEY_POSITIVE && k->keys[i].type != DVI_PROBE_KEY_DIRECTION))
            return base_error_setf(DVI_ERR_INVALID_ARG, "dvi_probe_register: \"%s\": keys[%d]: a name and a type",
                                  k->name, (int)i);
    if (k->data_width < 0 || k->data_width > 64 || (k->data_width > 0 && !k->setup))
        return base_error_setf(DVI_ERR_INVALID_ARG, "dvi_probe_register: \"%s\": data_width: 0 to 64, with a setup",
                              k->name);
    if (!k->sample) return base_error_setf(DVI_ERR_INVALID_ARG, "dvi_probe_register: \"%s\": sample: missing", k->name);
    for (int32_t i = 0; i < registered_count; i++)
        if (strcmp(registered[i].name, k->name) == 0) {
            if (same_class(&registered_ext[i], k)) return DVI_OK;
            return base_error_setf(DVI_ERR_INVALID_ARG, "dvi_probe_register: \"%s\": another kind has that name", k->name);
        }
    for (int32_t i = 0; i < NKINDS; i++)
        if (strcmp(KINDS[i].name, k->name) == 0)
            return base_error_setf(DVI_ERR_INVALID_ARG, "dvi_probe_register: \"%s\": a kind of the library", k->name);
    if (registered_count >= MAX_REGISTERED)
        return base_error_setf(DVI_ERR_NOMEM, "dvi_probe_register: \"%s\": already %d kinds registered", k->name,
                              MAX_REGISTERED);
    registered_ext[registered_count] = *k;
    const dvi_probe_class* e = &registered_ext[registered_count];
    registered[registered_count] = (sc_probe_class){e->name, e->label, SC_TARGETS_BODIES, NULL, e->columns,
                                                    e->column_count, e->sample, NULL, e};
    registered_count++;
    return DVI_OK;
}

dvi_status dvi_model_probe_sample(const dvi_model* m, int32_t probe, double* values)
{
    if (!m || !values || probe < 0 || probe >= m->probe_count) return base_error_set(DVI_ERR_INVALID_ARG, "dvi_model_probe_sample: invalid argument (!m || !values || probe < 0 || probe >= m->probe_count)");
    const model_probe* p = &m->probes[probe];
    values[0] = dvi_model_time(m);
    double* o = values + 1;
    if (p->kind->sample) return p->kind->sample(m, p, o);
    dvi_probe_context c;
    c.world = m->world;
    v3_copy(c.up, m->up);
    for (int32_t t = 0; t < p->target_count; t++) {
        c.body = m->bodies[p->targets[t]];
        dvi_status st = p->kind->sample_body(&c, p->data ? p->data + (size_t)t * (size_t)p->data_width : NULL, o);
        if (st != DVI_OK) return st;
        o += p->kind->column_count;
    }
    return DVI_OK;
}

/* ---- one rank's part of a scene spread over ranks (src/dist) -------------------------------
 *
 * Each rank's model holds its owned bodies, ghosts and the fixed bodies
 * (sc_model_create_subset) and builds the scene's probes. A probe's sample
 * is the element-wise sum of every rank's part (sc_model_probe_part), the
 * solver's largest-of columns their maximum, finished on one rank
 * (sc_model_probe_finish). A body's numbers come from its owner, the other
 * ranks giving −0 (x + −0 = x for every x, −0 included, so the sum is the
 * owner's bits); a fixed body's contact force is the sum of each rank's
 * contacts with the bodies it owns; the time, the fixed bodies' states and
 * the joints (whose bodies the first rank owns) from the root rank. */

void sc_model_set_part(dvi_model* m, const int8_t* level, bool root)
{
    m->part = level;
    m->part_root = root;
}

void sc_model_set_steps(dvi_model* m, int64_t steps)
{
    m->steps = steps;
    m->near_step = -1;
}

dvi_status sc_model_after_step(dvi_model* m)
{
    return after_step(m);
}

void sc_model_carry_windows(dvi_model* to, const dvi_model* from)
{
    for (int32_t i = 0; i < to->probe_count && i < from->probe_count; i++) {
        model_probe* p = &to->probes[i];
        const model_probe* q = &from->probes[i];
        if (!p->acc || !q->acc || p->raw_width != q->raw_width || p->target_count != q->target_count) continue;
        memcpy(p->acc, q->acc, (size_t)p->raw_width * (size_t)p->target_count * sizeof *p->acc);
        p->acc_count = q->acc_count;
    }
}

/* The windows as numbers: per averaged probe its step count, then per
 * averaged probe its sums (raw_width · targets). */
int64_t sc_model_windows_size(const dvi_model* m)
{
    int64_t n = 0;
    for (int32_t i = 0; i < m->probe_count; i++)
        if (m->probes[i].acc) n += 1 + (int64_t)m->probes[i].raw_width * m->probes[i].target_count;
    return n;
}

int32_t sc_model_windows_counts(const dvi_model* m)
{
    int32_t n = 0;
    for (int32_t i = 0; i < m->probe_count; i++) n += m->probes[i].acc != NULL;
    return n;
}

void sc_model_windows_get(const dvi_model* m, double* out)
{
    double* sums = out;
    for (int32_t i = 0; i < m->probe_count; i++)
        if (m->probes[i].acc) *sums++ = (double)m->probes[i].acc_count;
    for (int32_t i = 0; i < m->probe_count; i++) {
        const model_probe* p = &m->probes[i];
        if (!p->acc) continue;
        const size_t n = (size_t)p->raw_width * (size_t)p->target_count;
        memcpy(sums, p->acc, n * sizeof *sums);
        sums += n;
    }
}

void sc_model_windows_set(dvi_model* m, const double* in, bool sums)
{
    const double* at = in;
    for (int32_t i = 0; i < m->probe_count; i++)
        if (m->probes[i].acc) m->probes[i].acc_count = (int64_t)*at++;
    for (int32_t i = 0; i < m->probe_count; i++) {
        model_probe* p = &m->probes[i];
        if (!p->acc) continue;
        const size_t n = (size_t)p->raw_width * (size_t)p->target_count;
        if (sums) memcpy(p->acc, at, n * sizeof *at);
        else memset(p->acc, 0, n * sizeof *p->acc);
        at += n;
    }
}

/* Whether this rank gives scene body b's numbers. */
static bool part_gives(const dvi_model* m, int64_t b)
{
    const dvi_body_id id = m->bodies[b];
    if (DVI_IS_NULL(id)) return false;
    const int8_t lv = m->part[id.index1 - 1];
    return lv == SC_LEVEL_OWNED || (lv == SC_LEVEL_FIXED && m->part_root);
}

int32_t sc_model_probe_raw_count(const dvi_model* m, int32_t probe)
{
    const model_probe* p = &m->probes[probe];
    if (p->kind->sample == sample_wrench) return 1 + p->raw_width * p->target_count;
    return p->columns;
}

bool sc_model_probe_raw_max(const dvi_model* m, int32_t probe, int32_t k)
{
    if (m->probes[probe].kind->sample != sample_solver) return false;
    static const char* const largest[] = {"max_penetration", "max_joint_violation", "ccp_hover", "wall_collide", "wall_assemble", "wall_solve", "wall_integrate",
                                          "wall_report"};
    if (k < 1 || k > NCOLS(COLS_SOLVER)) return false;
    for (size_t i = 0; i < sizeof largest / sizeof largest[0]; i++)
        if (strcmp(COLS_SOLVER[k - 1].name, largest[i]) == 0) return true;
    return false;
}

bool sc_model_probe_parts_supported(const dvi_model* m, int32_t probe)
{
    const sc_probe_class* k = m->probes[probe].kind;
    return k->sample_body || k->sample == sample_wrench || k->sample == sample_kinetic_energy ||
           k->sample == sample_energy || k->sample == sample_solver;
}

/* The solver's columns over ranks: the iterations, residual and status
 * (the same on every rank with the DVI method) and the joints' rows from the
 * root; the contacts and their rows counted where their first movable body
 * is owned; the largest-of columns each rank's own (sc_model_probe_raw_max). */
static void solver_part(const dvi_model* m, double* o)
{
    const dvi_world* w = m->world;
    dvi_step_stats s = dvi_world_get_stats(w);
    int64_t contacts = 0, rows = 0;
    const bool dvi = w->def.method != DVI_METHOD_DEM;
    for (int32_t c = 0; c < w->contact_count; c++) {
        const wld_contact_rec* r = &w->contacts[c];
        const int32_t k = m->part[r->body_a] == SC_LEVEL_FIXED ? r->body_b : r->body_a;
        if (m->part[k] != SC_LEVEL_OWNED) continue;
        contacts++;
        if (dvi) rows += r->nrows;
    }
    const double root = m->part_root ? 1.0 : 0.0;
    s.contacts = (int32_t)contacts;
    s.rows = (int32_t)(rows + (m->part_root ? s.joint_rows : 0));
    double* o0 = o;
#define SOLVER_COLUMN_VALUE(name, unit, value) *o++ = (value);
    SOLVER_COLUMNS(SOLVER_COLUMN_VALUE)
#undef SOLVER_COLUMN_VALUE
    for (int32_t k = 0; k < NCOLS(COLS_SOLVER); k++) {
        const char* c = COLS_SOLVER[k].name;
        if (strcmp(c, "iterations") == 0 || strcmp(c, "residual") == 0 || strcmp(c, "solver_status") == 0)
            o0[k] = root > 0.0 ? o0[k] : -0.0;
    }
}

dvi_status sc_model_probe_part(const dvi_model* m, int32_t probe, double* raw)
{
    const model_probe* p = &m->probes[probe];
    const int32_t n = sc_model_probe_raw_count(m, probe);
    raw[0] = m->part_root ? dvi_model_time(m) : -0.0;
    double* o = raw + 1;
    for (int32_t k = 0; k < n - 1; k++) o[k] = -0.0;
    const sc_probe_class* kind = p->kind;
    if (kind->sample == sample_wrench) return wrench_raw(m, p, o);
    if (kind->sample == sample_solver) {
        solver_part(m, o);
        return DVI_OK;
    }
    if (kind->sample == sample_kinetic_energy) { /* the owned bodies' sum */
        double e = 0.0;
        if (p->target_count == 0) {
            for (int64_t b = 0; b < m->body_count; b++)
                if (part_gives(m, b)) e += kinetic_energy(m, b);
        } else {
            for (int32_t t = 0; t < p->target_count; t++)
                if (part_gives(m, p->targets[t])) e += kinetic_energy(m, p->targets[t]);
        }
        o[0] = e;
        return DVI_OK;
    }
    if (kind->sample == sample_energy) {
        for (int32_t t = 0; t < p->target_count; t++, o += 2)
            if (part_gives(m, p->targets[t])) {
                dvi_status st = energy_of(m, p->targets[t], o);
                if (st != DVI_OK) return st;
            }
        return DVI_OK;
    }
    if (!kind->sample_body)
        return base_error_setf(DVI_ERR_UNSUPPORTED, "probe \"%s\" (%s): not sampled over ranks", p->name, kind->name);
    dvi_probe_context c;
    c.world = m->world;
    v3_copy(c.up, m->up);
    for (int32_t t = 0; t < p->target_count; t++, o += kind->column_count) {
        if (!part_gives(m, p->targets[t])) continue;
        c.body = m->bodies[p->targets[t]];
        dvi_status st = kind->sample_body(&c, p->data ? p->data + (size_t)t * (size_t)p->data_width : NULL, o);
        if (st != DVI_OK) return st;
    }
    return DVI_OK;
}

void sc_model_probe_finish(const dvi_model* m, int32_t probe, const double* raw, double* values)
{
    const model_probe* p = &m->probes[probe];
    values[0] = raw[0];
    if (p->kind->sample == sample_wrench) wrench_finish(m, p, raw + 1, values + 1);
    else memcpy(values + 1, raw + 1, (size_t)(p->columns - 1) * sizeof *values);
}

/* ---- state ---------------------------------------------------------------------------------- */

/* Blob: a header, the world's own blob (dvi_world_save_state), then the
 * averaged probes' windows. Header, little-endian: "DVIMODEL", u32 version,
 * u32 header size, i64 step count, u64 world blob size, then
 *   version 1 (40 bytes): u64 FNV-1a of the first 32 bytes;
 *   version 2 (48 bytes): u64 size of the probe section, u64 FNV-1a of the
 *   first 40 bytes;
 *   version 3 (56 bytes): u64 size of the probe section, u64 size of the
 *   health section, u64 FNV-1a of the first 48 bytes.
 * Probe section (empty without averaged probes): for each averaged probe in
 * order, i64 steps in the window, then raw_width · target_count f64 sums
 * (IEEE bits); then u64 FNV-1a of those bytes. Health section (version 3):
 * the monitor's baseline and findings (src/world/health.c). Version 1 blobs (no
 * averaged probes then) load with empty windows; version 1 and 2 blobs take
 * the health monitor's baseline at the loaded state. */
#define STATE_MAGIC "DVIMODEL"
#define STATE_VERSION 3u
#define STATE_HEADER 56u
#define STATE_HEADER_V2 48u
#define STATE_HEADER_V1 40u

/* Bytes of the probe section of the state blob. */
static size_t probe_state_size(const dvi_model* m)
{
    size_t n = 0;
    for (int32_t i = 0; i < m->probe_count; i++)
        if (m->probes[i].average)
            n += 8 + 8 * (size_t)m->probes[i].raw_width * (size_t)m->probes[i].target_count;
    return n ? n + 8 : 0; /* and its checksum */
}

/* FNV-1a from the seed the model's state files have always used. */
static uint64_t fnv64(const unsigned char* p, size_t n) { return base_fnv1a(1469598103934665603u, p, n); }

dvi_status dvi_model_save_state(const dvi_model* m, void** data, size_t* size)
{
    if (data) *data = NULL;
    if (size) *size = 0;
    if (!m || !data || !size) return base_error_set(DVI_ERR_INVALID_ARG, "dvi_model_save_state: invalid argument (!m || !data || !size)");
    /* the world's state written straight into the model's buffer, after its header */
    void* wdata = NULL;
    size_t wsize = 0;
    size_t psize = probe_state_size(m), hsize = wld_health_state_size();
    if (psize > SIZE_MAX / 4 || hsize > SIZE_MAX / 4) return base_error_set(DVI_ERR_NOMEM, "dvi_model_save_state: out of memory");
    dvi_status st = wld_save_state_within(m->world, STATE_HEADER, psize + hsize, &wdata, &wsize);
    if (st != DVI_OK) return st;
    unsigned char* b = wdata;
    memcpy(b, STATE_MAGIC, 8);
    le_put_u32(b + 8, STATE_VERSION);
    le_put_u32(b + 12, STATE_HEADER);
    le_put_u64(b + 16, (uint64_t)m->steps);
    le_put_u64(b + 24, (uint64_t)wsize);
    le_put_u64(b + 32, (uint64_t)psize);
    le_put_u64(b + 40, (uint64_t)hsize);
    le_put_u64(b + 48, fnv64(b, 48));
    unsigned char* q = b + STATE_HEADER + wsize;
    for (int32_t i = 0; i < m->probe_count; i++) {
        const model_probe* p = &m->probes[i];
        if (!p->average) continue;
        le_put_u64(q, (uint64_t)p->acc_count);
        q += 8;
        size_t n = (size_t)p->raw_width * (size_t)p->target_count;
        for (size_t k = 0; k < n; k++, q += 8) {
            uint64_t bits;
            memcpy(&bits, &p->acc[k], 8);
            le_put_u64(q, bits);
        }
    }
    if (psize) le_put_u64(q, fnv64(b + STATE_HEADER + wsize, psize - 8));
    wld_health_save(&m->health, b + STATE_HEADER + wsize + psize);
    *data = b;
    *size = STATE_HEADER + wsize + psize + hsize;
    return DVI_OK;
}

dvi_status dvi_model_load_state(dvi_model* m, const void* data, size_t size, char* msg, size_t msg_size)
{
    if (msg && msg_size > 0) msg[0] = '\0';
    if (!m || !data) return fail(msg, msg_size, DVI_ERR_INVALID_ARG, "state: NULL argument");
    const unsigned char* b = data;
    if (size < STATE_HEADER_V1 || memcmp(b, STATE_MAGIC, 8) != 0)
        return fail(msg, msg_size, DVI_ERR_PARSE, "state: not a model state (no DVIMODEL header)");
    uint32_t version = le_get_u32(b + 8);
    if (version < 1u || version > STATE_VERSION)
        return fail(msg, msg_size, DVI_ERR_PARSE, "state: version %u, this library reads versions 1 to %u", version,
                    STATE_VERSION);
    uint32_t header = version == 1u ? STATE_HEADER_V1 : version == 2u ? STATE_HEADER_V2 : STATE_HEADER;
    if (size < header || le_get_u32(b + 12) != header || le_get_u64(b + header - 8) != fnv64(b, header - 8))
        return fail(msg, msg_size, DVI_ERR_PARSE, "state: damaged header (checksum mismatch)");
    uint64_t steps = le_get_u64(b + 16), wsize = le_get_u64(b + 24), psize = version == 1u ? 0 : le_get_u64(b + 32);
    uint64_t hsize = version >= 3u ? le_get_u64(b + 40) : 0;
    if (version >= 3u && !wld_health_state_size_valid((size_t)hsize))
        return fail(msg, msg_size, DVI_ERR_PARSE, "state: damaged header (health section of %llu bytes)",
                    (unsigned long long)hsize);
    if (wsize > size - header || psize > size - header - wsize || hsize != size - header - wsize - psize)
        return fail(msg, msg_size, DVI_ERR_PARSE, "state: %zu bytes, the header announces %u + %llu + %llu + %llu",
                    size, header, (unsigned long long)wsize, (unsigned long long)psize, (unsigned long long)hsize);
    world_health health = m->health; /* validated before anything is touched */
    if (hsize && wld_health_load(&health, b + header + wsize + psize, (size_t)hsize) != DVI_OK)
        return fail(msg, msg_size, DVI_ERR_PARSE, "state: damaged health section (checksum mismatch)");
    /* the step count: at most 2^53 (so that it and steps·dt are exact
     * enough), and in agreement with the world's time (checked below, before
     * the world is touched) */
    if (steps > ((uint64_t)1 << 53))
        return fail(msg, msg_size, DVI_ERR_PARSE, "state: damaged header (step count %llu)", (unsigned long long)steps);
    size_t want = probe_state_size(m);
    if (version != 1u && psize != want)
        return fail(msg, msg_size, DVI_ERR_INVALID_ARG,
                    "state: its averaged probes hold %llu bytes, this model's %zu (built from another scene?)",
                    (unsigned long long)psize, want);
    const unsigned char* q = b + header + wsize;
    if (psize && le_get_u64(q + psize - 8) != fnv64(q, (size_t)psize - 8))
        return fail(msg, msg_size, DVI_ERR_PARSE, "state: damaged averaged-probe windows (checksum mismatch)");
    for (int32_t i = 0; version != 1u && i < m->probe_count; i++) {
        if (!m->probes[i].average) continue;
        if (le_get_u64(q) > (uint64_t)INT64_MAX)
            return fail(msg, msg_size, DVI_ERR_PARSE, "state: probes[%d]: damaged window (step count)", i);
        q += 8 + 8 * (size_t)m->probes[i].raw_width * (size_t)m->probes[i].target_count;
    }
    double t = 0.0;
    dvi_status st = wld_check_state(m->world, b + header, (size_t)wsize, &t);
    if (st != DVI_OK) return fail(msg, msg_size, st, "%s", dvi_world_last_error(m->world));
    const double expect = (double)steps * m->dt;
    if (!isfinite(t) || !(fabs(t - expect) <= 0.5 * m->dt))
        return fail(msg, msg_size, DVI_ERR_PARSE,
                    "state: its time (%.17g s) disagrees with its step count (%llu steps of %g s)", t,
                    (unsigned long long)steps, m->dt);
    st = dvi_world_load_state(m->world, b + header, (size_t)wsize);
    if (st != DVI_OK) return fail(msg, msg_size, st, "%s", dvi_world_last_error(m->world));
    m->steps = (int64_t)steps;
    if (hsize) {
        m->health = health;
    } else { /* older blobs: the baseline at the loaded state */
        dvi_health_settings hs = m->health.set;
        if (wld_health_init(&m->health, &hs, m->world) != DVI_OK)
            return fail(msg, msg_size, DVI_ERR_NOMEM, "state: out of memory (health monitor)");
    }
    m->near_step = -1; /* the contacts are the restored world's */
    q = b + header + wsize;
    for (int32_t i = 0; i < m->probe_count; i++) {
        model_probe* p = &m->probes[i];
        if (!p->average) continue;
        size_t n = (size_t)p->raw_width * (size_t)p->target_count;
        if (version == 1u) {
            memset(p->acc, 0, n * sizeof *p->acc);
            p->acc_count = 0;
            continue;
        }
        p->acc_count = (int64_t)le_get_u64(q);
        q += 8;
        for (size_t k = 0; k < n; k++, q += 8) {
            uint64_t bits = le_get_u64(q);
            memcpy(&p->acc[k], &bits, 8);
        }
    }
    return DVI_OK;
}
