/* dvicontact — internal: reading a scene file, shared by scene.c (the text,
 * the pre-scan and the public entry points), scene_json.c (error lines with
 * exact JSON paths, typed values) and scene_schema.c (the format's sections,
 * read and checked). See scene_internal.h for the parsed scene itself.
 */
#ifndef DVI_SCENE_PARSE_H
#define DVI_SCENE_PARSE_H

#include "out_internal.h"
#include "scene_internal.h"

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PATH_LEN 320        /* bytes of a JSON path in a message */
#define MAX_ERROR_LINES 200 /* then one line counts the rest */

/* ---- the parse context ---- */

/* One parse: the scene being filled, its error lines and problem counts,
 * and the names (materials, bodies, generators, joints, probes) that the
 * sections' references resolve through. */
typedef struct ctx {
    dvi_scene* s;
    const char* base_dir;
    out_sbuf text; /* error lines */
    int32_t lines;
    int64_t hidden;      /* problems beyond MAX_ERROR_LINES */
    int64_t problems;
    int64_t unsupported; /* problems that name something not available rather than something wrong */
    bool nomem;
    /* materials */
    char** mat_names;
    dvi_material* mats;
    int32_t mat_count;
    sc_map mat_map;
    dvi_material default_material;
    /* names */
    sc_map body_map, gen_map, joint_map, probe_map;
    bool bodies_unreadable; /* "bodies" could not be read: skip "no body named" */
    bool generator_failed;  /* a generator is invalid: skip "no body named" for "gen[i]" names */
    size_t shape_cap;
} ctx;

/* ---- error lines and JSON paths (scene_json.c) ---- */

/* malloc'd copy of s (NULL for NULL or when out of memory). */
char* sc_dup_string(const char* s);
/* Appends raw text to the error lines (sets c->nomem when out of memory). */
void sc_append_text(ctx* c, const char* s, size_t n);
/* Reports a problem at a JSON path: one "path: message" line while fewer
 * than MAX_ERROR_LINES were written, else only counted. */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
void sc_errf(ctx* c, const char* path, const char* fmt, ...);
/* Reports something accepted but worth changing (a deprecated key): one
 * "path: message" line appended to the scene's warnings. */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
void sc_warnf(ctx* c, const char* path, const char* fmt, ...);
/* A user string for a message: quoted, shortened, control bytes escaped. */
const char* sc_quote(char* buf, size_t size, const char* s);
/* parent.key and parent[i] into buf (PATH_LEN bytes). */
const char* sc_path_key(char* buf, const char* parent, const char* key);
const char* sc_path_index(char* buf, const char* parent, long long i);
/* "a number", "a string", ...: the kind of a JSON value, for messages. */
const char* sc_type_name(const cJSON* v);
/* obj[key] (NULL for a NULL obj), the length of an array, the index of s in a
 * NULL-terminated list (-1 if absent), the nearest word of a list to a
 * misspelt one (NULL if none is near). */
const cJSON* sc_member(const cJSON* obj, const char* key);
int64_t sc_array_size(const cJSON* a);
int sc_index_of(const char* const* list, const char* s);
const char* sc_suggest(const char* key, const char* const* list);
/* Reports keys of obj not allowed, duplicated or misspelt. */
void sc_check_keys(ctx* c, const cJSON* obj, const char* path, const char* const* allowed,
                   const char* const* known, const char* owner);

/* ---- typed values (scene_json.c) ---- */

typedef enum range { R_ANY, R_POS, R_NONNEG, R_UNIT } range;

/* The shortest decimal text that reads back as x. */
const char* sc_num_text(char buf[32], double x);
/* A finite number of magnitude at most SC_MAX_NUMBER; x within range r. */
bool sc_as_number(ctx* c, const cJSON* v, const char* path, double* out);
bool sc_check_range(ctx* c, const char* path, double x, range r);
/* obj[key] as a number, an integer, a boolean, n numbers, a unit quaternion,
 * a string, one of a list of words, an array: false, NULL or -1 when absent
 * (an error only when required) or wrong (reported). */
bool sc_num_field(ctx* c, const cJSON* obj, const char* path, const char* key, bool required, range r,
                  double* out);
bool sc_int_field(ctx* c, const cJSON* obj, const char* path, const char* key, bool required, double lo,
                  double hi, int64_t* out);
bool sc_bool_field(ctx* c, const cJSON* obj, const char* path, const char* key, bool* out);
bool sc_as_vec(ctx* c, const cJSON* v, const char* path, int n, double* out);
/* The n numbers of array v (its length checked by the caller) into a new
 * buffer *out (NULL, c->nomem set, when out of memory; the caller frees it):
 * false there or at the first element that is not a number (reported). */
bool sc_as_number_array(ctx* c, const cJSON* v, const char* path, int64_t n, double** out);
bool sc_vec_field(ctx* c, const cJSON* obj, const char* path, const char* key, bool required, int n,
                  double* out);
bool sc_quat_field(ctx* c, const cJSON* obj, const char* path, const char* key, double q[4]);
const char* sc_str_field(ctx* c, const cJSON* obj, const char* path, const char* key, bool required);
int sc_enum_field(ctx* c, const cJSON* obj, const char* path, const char* key, bool required,
                  const char* const* words);
bool sc_is_object(ctx* c, const cJSON* v, const char* path);
const cJSON* sc_array_field(ctx* c, const cJSON* obj, const char* path, const char* key, int64_t limit,
                            const char* hint, int64_t* count);

/* A body name at path: its index (explicit bodies, then generated ones),
 * or −1 (reported unless the bodies themselves were unreadable). */
int64_t sc_body_ref(ctx* c, const cJSON* v, const char* path);

/* ---- the sections of a scene (scene_schema.c) ---- */

/* ---- terrain models (scene_terrain.c): the scene's "terrain" array ---- */

/* One kind of terrain model: a row of the table in scene_terrain.c, its
 * functions in a file of its own (scene_terrain_<name>.c). */
typedef struct sc_terrain_kind {
    const char* name;         /* the entry's "model" */
    const char* const* keys;  /* its keys besides "model" (NULL-terminated) */
    /* Reads entry v (an object whose keys were checked) at path into a new
     * definition (malloc'd; NULL when none could be made), reporting its
     * errors: a definition read with errors (or with c->nomem set) is freed
     * by the caller (free below). */
    void* (*parse)(ctx* c, const cJSON* v, const char* path);
    /* Creates the model in a world built from the scene: bodies[i] is the
     * scene's body i (explicit bodies, then generated ones). On failure,
     * the reason in msg. */
    dvi_status (*build)(const void* def, dvi_world* w, const dvi_body_id* bodies, int64_t body_count, char* msg,
                        size_t msg_size);
    void (*free)(void* def);
} sc_terrain_kind;

/* The terrain models (one file each). */
extern const sc_terrain_kind sc_terrain_bekker_wong;
/* The rows (scene_terrain_<name>.c). */
extern const sc_terrain_kind sc_terrain_scm;

/* Reads root's "terrain" array into the scene (c->s->terrains). */
void sc_parse_terrain(ctx* c, const cJSON* root);

/* ---- the sections of a scene (scene_schema.c) ---- */

/* True when name is a built-in solver; list receives the names, quoted. */
bool sc_known_solver(const char* name, char* list, size_t size);
/* Reports a method other than "dvi" and "dem". */
void sc_check_method(ctx* c, const char* path, const char* method);
/* The friction law of "ccp" or "coulomb" into *law; false (nothing
 * reported) for another word. */
bool sc_friction_law(const char* word, dvi_friction_law* law);
/* Reports, at path, a DVI scene whose solver does not solve its friction law
 * (the DEM step ignores the law), or refuses a kind of block the scene's
 * contacts may give under it (nsgs and newton: friction_rolling, from the
 * bodies and generators read so far into c->s, naming two shapes that give
 * them). path names the solver's side of the message (e.g.
 * "formulation.solver"), law_where the law's. Each message names the
 * solvers that take the scene, from the registry; options: a solver's
 * setting is named as the option of dvi run ("--lemke-coulomb"). */
void sc_check_law(ctx* c, const char* path, const char* method, const char* solver,
                  const dvi_solver_settings* settings, dvi_friction_law law, const char* law_where, bool options);
/* Reads and checks the whole scene (root: its top-level JSON value) into c->s. */
void sc_parse_scene(ctx* c, const cJSON* root);

#endif /* DVI_SCENE_PARSE_H */
