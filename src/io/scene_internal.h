/* dvicontact — internal: the parsed scene shared by the scene reader
 * (scene.c, scene_json.c and scene_schema.c, whose own declarations are in
 * scene_parse.h; scene_mass.c serves it, scene_map.c and scene_lattice.c
 * both sides) and scene_model.c (building worlds, probes, state).
 *
 * Design note. Reading a scene is two passes over the cJSON tree: the first
 * collects names (materials, bodies, generators, joints) into hash indexes,
 * the second reads every field, checks it, and resolves references through
 * those indexes, so validation is linear in the size of the file and every
 * problem is reported, not just the first. The result is plain C data: no
 * cJSON survives the parse. Generators are stored as parameters plus their
 * (already known) count; their bodies are laid out only when a model is
 * built. Body indices run over the explicit bodies first, in file order, then
 * over each generator's bodies in generator order: that is the order in which
 * the model creates them.
 */
#ifndef DVI_SCENE_INTERNAL_H
#define DVI_SCENE_INTERNAL_H

#include "dvi/io.h"
#include "dvi/scene.h"
#include "collision.h"
#include "out_internal.h"

#include <stdbool.h>
#include <stdint.h>

/* Limits (documented in docs/scene-format.md). */
#define SC_MAX_BODIES 10000000        /* explicit + generated */
#define SC_MAX_EXPLICIT_BODIES 100000 /* entries of "bodies" */
#define SC_MAX_SHAPES_PER_BODY 1000
#define SC_MAX_JOINTS 100000
#define SC_MAX_MATERIALS 10000
#define SC_MAX_GENERATORS 1000
#define SC_MAX_PROBES 1000
#define SC_MAX_PROBE_TARGETS 100000
#define SC_MAX_HEIGHTS 16777216       /* 4096 × 4096 */
#define SC_MAX_DEM_SAMPLES 1000000    /* per shape */
#define SC_MAX_NAME 64
#define SC_MAX_NUMBER 1e15            /* |x| above this is refused */

/* ---- open-addressing string → index map (scene_map.c) ---------------------- */

typedef struct sc_map {
    const char** keys; /* borrowed */
    int32_t* values;
    uint32_t cap;      /* power of two, 0 = empty */
    uint32_t count;
} sc_map;

bool sc_map_put(sc_map* m, const char* key, int32_t value); /* false: no memory */
int32_t sc_map_get(const sc_map* m, const char* key);       /* −1: absent */
/* For a terrain kind's build (scene_parse.h): the world's ids of the n
 * scene bodies index[0..n) (bodies, body_count: build's) into a new *ids
 * (NULL for n = 0; the caller frees it); an index out of range is refused,
 * "<list>[k]: no such body" in msg. */
dvi_status sc_terrain_body_ids(const int64_t* index, int32_t n, const char* list, const dvi_body_id* bodies,
                               int64_t body_count, dvi_body_id** ids, char* msg, size_t msg_size);
void sc_map_free(sc_map* m);

/* ---- scene contents ----------------------------------------------------------- */

typedef struct sc_shape {
    dvi_shape_type type;
    double radius, half_length, half[3];
    int32_t nx, ny;
    double dx, dy;
    double* heights;      /* owned, [nx·ny] */
    dvi_mesh_data mesh;   /* owned */
    double pos[3], q[4];  /* offset in the body frame */
    dvi_material material;
    double* dem_samples;  /* owned, [4·dem_sample_count]: x, y, z (shape frame), area */
    int32_t dem_sample_count;
    uint32_t category, mask; /* "filter" */
} sc_shape;

/* A convex shape's lengths as a geom at its own frame's origin, for its
 * class's functions (col_shape_class). */
static inline col_geom sc_shape_geom(const sc_shape* sh)
{
    col_geom g = {.type = sh->type, .radius = sh->radius, .half_length = sh->half_length};
    g.half[0] = sh->half[0], g.half[1] = sh->half[1], g.half[2] = sh->half[2];
    g.rot[0] = g.rot[4] = g.rot[8] = 1.0;
    return g;
}

typedef struct sc_body {
    char* name;           /* owned, NULL if unnamed */
    dvi_body_type type;
    double mass;
    double inertia[9];
    double pos[3], q[4], v[3], w[3];
    double gravity_scale;
    double force[3], torque[3];
    bool has_force;
    int32_t shape_first, shape_count;
} sc_body;

enum { SC_PACKING_CUBIC = 0, SC_PACKING_HEXAGONAL = 1 };
#define SC_SQRT3 1.7320508075688772

typedef struct sc_generator {
    char* name;           /* owned */
    double lo[3], hi[3];  /* region */
    double rmin, rmax;    /* radius range (equal: one radius) */
    double gap, jitter, density;
    uint64_t seed;
    dvi_material material;
    int32_t n[3];         /* lattice sites per axis */
    double spacing;       /* nearest-neighbour distance of the lattice, 2·rmax + gap */
    int32_t packing;      /* SC_PACKING_CUBIC or SC_PACKING_HEXAGONAL */
    double pitch[3];      /* distance between neighbouring rows of sites along x, y, z */
    int64_t sites;        /* n[0]·n[1]·n[2] */
    int64_t count;        /* bodies produced: min(sites − excluded cells, max_count) */
    int32_t first_body;   /* scene body index of the first generated body */
    double* exclude;      /* owned, [4·exclude_count]: centre, radius of each excluded sphere */
    int32_t exclude_count;
} sc_generator;

typedef struct sc_joint {
    char* name;         /* owned, NULL if unnamed */
    int32_t a, b;       /* body indices; a = −1: the world */
    dvi_joint_def def;  /* dvi_default_joint_def with the entry's keys; its bodies are set when built */
} sc_joint;

/* ---- probe kinds (scene_model.c: the table; scene_schema.c reads them) ---- */

/* What a probe kind's targets are. */
typedef enum sc_probe_targets {
    SC_TARGETS_BODIES = 0,   /* "body" or "bodies", required */
    SC_TARGETS_ALL_DYNAMIC,  /* "body" or "bodies", optional: none means every dynamic body */
    SC_TARGETS_JOINTS,       /* "joint" or "joints", required */
    SC_TARGETS_NONE          /* none: the columns once per probe */
} sc_probe_targets;

struct dvi_model;
struct model_probe;

/* One probe kind: its name ("what"), the keys it accepts beyond the common
 * ones and its targets', its columns and its sample function. The library's
 * kinds are rows of one table in scene_model.c; a registered kind
 * (dvi_probe_register) is a row whose `ext` is the public class. Keys the
 * reader knows how to read: "average", "component", "with" (contact
 * forces); a registered kind's typed keys (ext->keys). */
typedef struct sc_probe_class {
    const char* name;
    const char* label;                  /* default title: "label (probe name)" */
    sc_probe_targets targets;
    const char* const* keys;            /* NULL-terminated, NULL: none */
    const dvi_probe_column* columns;    /* per target (SC_TARGETS_NONE: once) */
    int32_t column_count;
    /* per-target kinds: one target's values (data: the target's setup data) */
    dvi_status (*sample_body)(const dvi_probe_context* ctx, const double* data, double* out);
    /* the other kinds: every value of the probe after the time column */
    dvi_status (*sample)(const struct dvi_model* m, const struct model_probe* p, double* out);
    const dvi_probe_class* ext;         /* registered kind, else NULL */
} sc_probe_class;

/* The kind named `what`, or NULL. */
const sc_probe_class* sc_probe_class_find(const char* what);
/* The names of every kind into names[SC_MAX_PROBE_KINDS + 1], NULL-terminated
 * (the library's, then the registered). */
#define SC_MAX_PROBE_KINDS 128
void sc_probe_class_names(const char** names);
/* Whether a kind is contact_force / joint_reaction (their per-step sums and averages). */
bool sc_probe_is_contact_force(const sc_probe_class* k);
bool sc_probe_is_joint_reaction(const sc_probe_class* k);

typedef enum sc_component {
    SC_COMPONENT_VECTOR = 0,
    SC_COMPONENT_UP,
    SC_COMPONENT_DIRECTION,
    SC_COMPONENT_NORMAL,   /* sum over the body's contacts of the normal force */
    SC_COMPONENT_MAGNITUDE /* |sum of the contact forces| */
} sc_component;

typedef struct sc_probe {
    char* name;           /* owned */
    char* title;          /* owned */
    const sc_probe_class* kind;
    int32_t every;
    double interval;      /* s: sampled at the step nearest each multiple of it (0: every `every` steps) */
    int32_t* targets;     /* owned: body or joint indices */
    int32_t target_count; /* kinetic_energy with 0 targets: every dynamic body */
    sc_component component;
    double direction[3];  /* unit, for SC_COMPONENT_DIRECTION */
    double* data;         /* owned, a registered kind: [kind->ext->data_width·target_count], its setup's */
    bool average;         /* contact_force, joint_reaction: the mean over the steps since the last sample */
    int32_t* with;        /* owned, contact_force: count only contacts with these bodies (sorted, unique) */
    int32_t with_count;   /* 0: every contact */
} sc_probe;

/* A terrain model of the scene: its kind (scene_parse.h) and definition. */
typedef struct sc_terrain {
    const struct sc_terrain_kind* kind;
    void* def;
} sc_terrain;

/* ---- for models spread over ranks (src/dist) -------------------------------------- */

/* The initial position of every body of the scene, in creation order
 * (explicit bodies, then each generator's spheres): 3 doubles per body,
 * scene.total_bodies of them. */
void sc_scene_positions(const dvi_scene* s, double* xyz);
/* A model whose world holds only bodies ids[0..count) (ascending scene
 * indices), created as dvi_model_create creates them, in the same order,
 * with the joints whose bodies are all there and the scene's probes; no
 * terrain models (refused); its world's messages number the bodies. */
dvi_status sc_model_create_subset(const dvi_scene* s, const int64_t* ids, int64_t count, dvi_model** out, char* msg,
                                  size_t msg_size);
/* One rank's part of a scene spread over ranks (scene_model.c: the rules).
 * level[k] for each body k of the model's world: SC_LEVEL_OWNED, a ghost
 * (1, 2) or SC_LEVEL_FIXED; kept by pointer. The root rank gives the time,
 * the joints and the fixed bodies' states. */
#define SC_LEVEL_OWNED 0
#define SC_LEVEL_FIXED 3
void sc_model_set_part(dvi_model* m, const int8_t* level, bool root);
void sc_model_set_steps(dvi_model* m, int64_t steps);
/* dvi_model_step's bookkeeping after the world stepped (no health monitor). */
dvi_status sc_model_after_step(dvi_model* m);
/* The averaging windows of the probes, from the model a rebuild replaces. */
void sc_model_carry_windows(dvi_model* to, const dvi_model* from);
/* The windows as sc_model_windows_size numbers: each averaged probe's step
 * count, then each one's sums (the ranks' sums add up to the whole);
 * set: the counts, and the sums or (sums false) zeros. */
int64_t sc_model_windows_size(const dvi_model* m);
int32_t sc_model_windows_counts(const dvi_model* m); /* the averaged probes: the counts' number */
void sc_model_windows_get(const dvi_model* m, double* out);
void sc_model_windows_set(dvi_model* m, const double* in, bool sums);
/* Whether probe i can be sampled over ranks (energy_audit and programs'
 * probes without a per-body sample cannot). */
bool sc_model_probe_parts_supported(const dvi_model* m, int32_t probe);
/* The raw values of probe i: their count (the time first), this rank's
 * part (every rank's parts summed element-wise give the whole; the columns
 * sc_model_probe_raw_max names combine by their maximum instead), and the
 * sample's columns from the combined raw values. */
int32_t sc_model_probe_raw_count(const dvi_model* m, int32_t probe);
bool sc_model_probe_raw_max(const dvi_model* m, int32_t probe, int32_t k);
dvi_status sc_model_probe_part(const dvi_model* m, int32_t probe, double* raw);
void sc_model_probe_finish(const dvi_model* m, int32_t probe, const double* raw, double* values);
/* The world's id of scene body b (invalid when a subset left it out). */
dvi_body_id sc_model_body(const dvi_model* m, int64_t b);
/* The scene's joints, and the world's id of joint j (invalid when a subset left it out). */
int32_t sc_model_joint_count(const dvi_model* m);
dvi_joint_id sc_model_joint(const dvi_model* m, int32_t j);

/* Frees the scene's terrain models (scene_terrain.c). */
void sc_free_terrain(dvi_scene* s);
/* Creates the scene's terrain models in w (scene_model.c calls it once the
 * bodies and joints exist); the reason in msg on failure. */
dvi_status sc_build_terrain(const dvi_scene* s, dvi_world* w, const dvi_body_id* bodies, int64_t body_count,
                            char* msg, size_t msg_size);

struct dvi_scene {
    char* name;
    char* method;
    char* solver;
    double gravity[3];
    double dt, duration;
    dvi_solver_settings solver_settings;
    dvi_friction_law friction; /* formulation.friction_law */
    int32_t threads;
    double collision_envelope, contact_recovery_speed, joint_recovery_speed, bounce_threshold;
    dvi_joint_solve joint_solve;
    char coulomb_check[32];  /* formulation.coulomb_check: a solver's name, "" for none */
    dvi_dem_settings dem;    /* formulation.dem (used when method is "dem") */
    dvi_health_settings health; /* formulation.health */

    sc_body* bodies;         /* explicit bodies */
    int32_t body_count;
    sc_shape* shapes;
    int32_t shape_count;
    sc_generator* generators;
    int32_t generator_count;
    int64_t total_bodies;    /* explicit + generated */
    sc_joint* joints;
    int32_t joint_count;
    sc_probe* probes;
    int32_t probe_count;
    struct sc_terrain* terrains; /* the "terrain" array (scene_terrain.c) */
    int32_t terrain_count;
    out_sbuf warnings; /* "path: message\n" lines (sc_warnf) */
};

/* ---- names and indices (scene_json.c) ---- */

/* qsort/bsearch order of int32_t values. */
int sc_cmp_i32(const void* a, const void* b);

/* Body index of a name: an explicit body's name, or "gen[i]" for the i-th
 * body of generator gen. body_names/generator_names index the scene's
 * arrays. −1 if unknown. */
int64_t sc_resolve_body(const dvi_scene* s, const sc_map* body_names, const sc_map* generator_names,
                        const char* name);

/* Splits "gen[i]" (i in decimal, no sign or leading zero) into gen and i;
 * false for a name of another form. */
bool sc_split_indexed(const char* name, char gen[SC_MAX_NAME + 1], int64_t* index);

/* ---- the lattice of a granular bed (scene_lattice.c) ---- */

#define SC_MAX_EXCLUDE_CELLS 1e8 /* lattice cells an exclusion's bounding box may cover */

/* Lays out the lattice of a generator whose region, radii, gap and packing
 * are known: spacing, pitch and n (sites per axis). Returns the number of
 * sites, n[0]·n[1]·n[2], as a double (below 1: the region holds no sphere). */
double sc_generator_lattice(sc_generator* g);
/* Centre of lattice cell (0, 0, 0) of a generator: the lattice is centred
 * in x and y in the region and starts at its bottom in z. */
void sc_generator_origin(const sc_generator* g, double origin[3]);
/* Position of lattice site (ix, iy, iz) without jitter; origin from sc_generator_origin. */
void sc_generator_site(const sc_generator* g, const double origin[3], int64_t ix, int64_t iy, int64_t iz,
                       double p[3]);
/* True when the cell centred at p gets no sphere: it lies closer than
 * radius + r_max + √3·jitter to the centre of one of the generator's
 * excluded spheres (so no sphere of the bed overlaps one). */
bool sc_generator_excluded(const sc_generator* g, const double p[3]);
/* Cells of the lattice that exclusions empty (each counted once), or −1 when
 * an exclusion's bounding box covers more than SC_MAX_EXCLUDE_CELLS cells
 * (index of that exclusion in *bad). */
int64_t sc_generator_excluded_cells(const sc_generator* g, int32_t* bad);

/* Volume (m³) and inertia about the centre, shape frame, per unit mass, of a
 * bounded solid shape; false for planes, height fields and meshes
 * (scene_mass.c). */
bool sc_shape_mass_properties(const sc_shape* sh, double* volume, double inertia_per_mass[9]);

/* The smallest size among the scene's shapes (their class's thickness) and
 * generated grains (their smallest radius); INFINITY when none has one
 * (scene_schema.c; dvi_scene_settings.smallest_size, the default envelope). */
double sc_smallest_size(const dvi_scene* s);

#endif /* DVI_SCENE_INTERNAL_H */
