/* dvicontact — JSON scene files (docs/scene-format.md, docs/scene.schema.json).
 *
 * A scene describes a whole experiment: units (SI), gravity, materials,
 * bodies with shapes, generators (e.g. a granular bed), joints and motors,
 * the formulation and its settings, the duration and the probes (what to
 * record and how often). Three objects:
 *
 *   dvi_scene   the parsed and validated description (no world yet);
 *   dvi_model   a world built from a scene, with the scene's names resolved
 *               to ids and its probes ready to sample;
 *   dvi_scene_errors   every problem found, one line per problem, each
 *               naming the JSON path: `joints[2].body_b: no body named "bogie_L"`.
 *
 * Typical use:
 *
 *     dvi_scene* s; dvi_scene_errors e;
 *     if (dvi_scene_load("pendulum.json", &s, &e) < 0) { fputs(e.text, stderr); ... }
 *     dvi_model* m; dvi_model_create(s, &m, msg, sizeof msg);
 *     while (dvi_model_time(m) < dvi_scene_get_settings(s).duration) {
 *         dvi_model_step(m);
 *         for (int32_t p = 0; p < dvi_model_probe_count(m); p++)
 *             if (dvi_model_probe_due(m, p)) dvi_model_probe_sample(m, p, row);
 *     }
 *
 * The library prints nothing. Parsing needs no world; building does not
 * change the scene, so one scene can build several models.
 */
#ifndef DVI_SCENE_H
#define DVI_SCENE_H

#include "base.h"
#include "ccp.h"
#include "world.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dvi_scene dvi_scene;
typedef struct dvi_model dvi_model;

/// Problems found while reading or validating a scene. `text` holds `count`
/// lines "path: message\n" (malloc'd; NULL when count is 0). Free with
/// dvi_scene_errors_free.
typedef struct dvi_scene_errors {
    int32_t count;
    char* text;
} dvi_scene_errors;

DVI_API void dvi_scene_errors_free(dvi_scene_errors* errors);

/// Reads and validates a scene file. Relative file names inside the scene
/// (mesh files) are resolved against the scene file's directory.
/// Returns DVI_OK, DVI_ERR_IO (cannot read), DVI_ERR_PARSE (not JSON, with
/// line and column), DVI_ERR_INVALID_ARG (validation: all errors reported at
/// once), DVI_ERR_UNSUPPORTED (the only problem is a request for something
/// this version does not provide) or DVI_ERR_NOMEM. On
/// failure *out is NULL. `errors` may be NULL. At most 200 problems are
/// listed; a last line then counts the others.
DVI_API dvi_status dvi_scene_load(const char* path, dvi_scene** out, dvi_scene_errors* errors);
/// Same from memory; base_dir (may be NULL: the current directory) resolves
/// relative file names.
DVI_API dvi_status dvi_scene_parse(const char* text, size_t length, const char* base_dir, dvi_scene** out,
                                   dvi_scene_errors* errors);
DVI_API void dvi_scene_destroy(dvi_scene* scene);
/// What a loaded scene says that is accepted but should change (a
/// deprecated key): lines "path: message\n", "" when there are none. Owned
/// by the scene; the library prints nothing, the caller reports them.
DVI_API const char* dvi_scene_warnings(const dvi_scene* scene);

/* The health monitor's settings and report (dvi_health_settings,
 * dvi_health_report): <dvi/world.h>. */

/// Run settings of a scene (after overrides). Strings are owned by the scene.
typedef struct dvi_scene_settings {
    const char* name;         ///< scene name ("" if none)
    const char* method;       ///< "dvi" or "dem" (formulation.dem: the DEM settings)
    double dt;                ///< s
    double duration;          ///< s
    const char* solver;       ///< CCP solver name
    dvi_solver_settings solver_settings;
    int32_t threads;          ///< 0 = library default
    dvi_health_settings health; ///< formulation.health
    dvi_friction_law friction; ///< formulation.friction_law: the world's friction law (default DVI_LAW_CCP)
    const char* coulomb_check; ///< formulation.coulomb_check: the solver that checks steps under Coulomb's
                              ///< law (dvi_world_def.coulomb_check; "" for none)
    double smallest_size;     ///< m: the smallest shape (its class's smallest half size: a radius, a box's
                              ///< smallest half extent, a cylinder's radius or half length) among the
                              ///< bodies' shapes and generated grains; INFINITY when none has one
} dvi_scene_settings;

DVI_API dvi_scene_settings dvi_scene_get_settings(const dvi_scene* scene);

/// Command-line style overrides; a zero / NULL field leaves the scene's value.
typedef struct dvi_scene_overrides {
    double dt;
    double duration;
    const char* solver;
    const char* method;
    int32_t threads;
    /// Pa: Young's modulus of every material of the scene (the explicit
    /// shapes' and the generators'), for DEM studies over the stiffness.
    /// Materials that give the DEM constants k_n, k_t directly keep them.
    double young_modulus;
    /// s: every probe samples by time, at the step nearest each multiple of
    /// probe_interval (as a probe's `interval`), instead of by its own
    /// `every` or `interval`, so that runs at different steps record the same
    /// times (to rounding when the step divides the interval).
    double probe_interval;
    /// "ccp" or "coulomb": the friction law (formulation.friction_law).
    const char* friction;
    /// "auto", "iterative" or "direct": the formulation's joint_solve
    /// (dvi_joint_solve), or NULL: the scene's.
    const char* joint_solve;
    /// true: Lemke solves Coulomb's law (formulation.lemke.coulomb = true,
    /// the option --lemke-coulomb); false: the scene's setting.
    bool lemke_coulomb;
} dvi_scene_overrides;

/// Applies overrides, validating them like scene fields (errors name the
/// override, e.g. `--dt: must be > 0`). A DVI scene's solver must solve its
/// friction law after the overrides as in the file: `--solver: "apgd" solves
/// the CCP but --friction is "coulomb" (its solvers: ...)`, and take the
/// blocks its contacts may give under it: `--solver: "nsgs" does not take
/// the friction_rolling blocks of Coulomb's law, which the contacts between
/// bodies[5].shapes[0] ("ball") and bodies[0].shapes[0] ("ground") give ...`;
/// the solvers named are those that take the scene (dvi_solver_supports).
/// dvi_scene_load checks the file's own settings the same way.
DVI_API dvi_status dvi_scene_apply_overrides(dvi_scene* scene, const dvi_scene_overrides* overrides,
                                             dvi_scene_errors* errors);

/// A generator of the scene ("generators" in the file) and what it makes.
typedef struct dvi_generator_info {
    const char* name;     ///< generator name (owned by the scene); its bodies are "name[0]", "name[1]", ...
    const char* type;     ///< "granular_bed"
    int64_t count;        ///< bodies it makes: the lattice sites, capped by max_count
    int64_t sites;        ///< lattice sites that fit in its region (≥ count)
    int64_t first_body;   ///< creation-order index of its first body (explicit bodies come first)
} dvi_generator_info;

/// Number of generators in the scene.
DVI_API int32_t dvi_scene_generator_count(const dvi_scene* scene);
/// Generator `index` (in file order). DVI_ERR_INVALID_ARG for a bad index.
DVI_API dvi_status dvi_scene_get_generator(const dvi_scene* scene, int32_t index, dvi_generator_info* out);
/// Bodies a model of this scene creates: the explicit ones plus every
/// generator's (known without building anything).
DVI_API int64_t dvi_scene_body_count(const dvi_scene* scene);

/* ---- models: a world built from a scene ---------------------------------- */

/// Builds the world (generators expanded, deterministic). msg (may be NULL)
/// receives a message on failure. The model copies what it needs: the scene
/// may be destroyed while the model lives.
DVI_API dvi_status dvi_model_create(const dvi_scene* scene, dvi_model** out, char* msg, size_t msg_size);
DVI_API void dvi_model_destroy(dvi_model* model);
/// The model's world (owned by the model).
DVI_API dvi_world* dvi_model_world(dvi_model* model);
DVI_API const dvi_world* dvi_model_world_const(const dvi_model* model);
/// Steps the world by the scene's dt (returns what dvi_world_step returns).
DVI_API dvi_status dvi_model_step(dvi_model* model);
/// Number of steps taken since creation (or since the restored state).
DVI_API int64_t dvi_model_step_count(const dvi_model* model);
/// Simulated time in s: the step count times the scene's dt (the probes'
/// time column too). The world's own time (dvi_world_time), a sum of its
/// steps, may differ from it in the last bits.
DVI_API double dvi_model_time(const dvi_model* model);

/// Named objects of the scene; "gen[i]" names body i of generator gen.
/// DVI_ERR_INVALID_ARG for an unknown name.
DVI_API dvi_status dvi_model_find_body(const dvi_model* model, const char* name, dvi_body_id* out);
DVI_API dvi_status dvi_model_find_joint(const dvi_model* model, const char* name, dvi_joint_id* out);
/// The scene's name of a body of the model's world ("wheel_LF", "grains[49]",
/// "bodies[3]" for an unnamed body of the file) into out (size bytes, cut if
/// longer). DVI_ERR_INVALID_ARG for a NULL argument or a body not in the world.
DVI_API dvi_status dvi_model_body_name(const dvi_model* model, dvi_body_id body, char* out, size_t size);

/* ---- probes ------------------------------------------------------------- */

/// One probe: a CSV file of `columns` values per sample (the first column is
/// the time in s), sampled after every `every` steps, or by time: at the step
/// nearest each multiple of `interval` seconds.
typedef struct dvi_probe_info {
    const char* name;          ///< file stem, e.g. "wheel_forces"
    const char* title;         ///< human title for plots
    int32_t every;             ///< steps between samples (≥ 1); by time: round(interval / dt), at least 1
    int32_t columns;           ///< number of columns, time included
    const char* const* column_names; ///< [columns], e.g. "time", "wheel_RF.fz"
    const char* const* units;        ///< [columns], e.g. "s", "N"
    double interval;           ///< s between samples when sampled by time (the probe's `interval`,
                               ///< or dvi_scene_overrides.probe_interval); 0: by steps (`every`)
} dvi_probe_info;

DVI_API int32_t dvi_model_probe_count(const dvi_model* model);
DVI_API dvi_status dvi_model_probe_info(const dvi_model* model, int32_t probe, dvi_probe_info* out);
/// True when the probe should be sampled after the step just taken: when the
/// step count is a multiple of `every`, or, sampled by time, when the step is
/// the one nearest a multiple k·interval (k·interval within half a step of its
/// time); step 0, the initial state, included.
DVI_API bool dvi_model_probe_due(const dvi_model* model, int32_t probe);
/// Writes the probe's current values (time first) into values[columns].
DVI_API dvi_status dvi_model_probe_sample(const dvi_model* model, int32_t probe, double* values);

/* ---- probe kinds ------------------------------------------------------- */

/// A probe's "what" names a probe kind: the library's own (docs/scene-format.md)
/// or one registered by the program with dvi_probe_register before it reads
/// the scenes that use it (the `dvi` tool registers the rover study's kinds,
/// "attitude" and "wheel_slip", at start). A registered kind samples its
/// target bodies ("body" or "bodies", required) after the steps: the same
/// columns for each target, named "TARGET.COLUMN".

/// One column of a probe kind, per target: e.g. {"roll", "rad"}.
typedef struct dvi_probe_column {
    const char* name;
    const char* unit;
} dvi_probe_column;

/// The type of a key a registered kind accepts beyond "name", "title",
/// "every", "interval", "what" and "body"/"bodies".
typedef enum dvi_probe_key_type {
    DVI_PROBE_KEY_POSITIVE = 0,  ///< a number > 0
    DVI_PROBE_KEY_DIRECTION = 1  ///< [x, y, z], not zero; made a unit vector
} dvi_probe_key_type;

typedef struct dvi_probe_key {
    const char* name;            ///< the JSON key, e.g. "radius"
    dvi_probe_key_type type;
    const char* noun;            ///< direction: the error "the NOUN direction must not be zero" (NULL: none)
} dvi_probe_key;

#define DVI_PROBE_MAX_KEYS 8

/// The keys of one probe of a scene, as read: key k of the kind's list was
/// given when bit k of `given` is set; its value is value[k] (a number in
/// value[k][0]).
typedef struct dvi_probe_keys {
    uint32_t given;
    double value[DVI_PROBE_MAX_KEYS][3];
} dvi_probe_keys;

/// A probe's target body while the scene is read.
typedef struct dvi_probe_body {
    const char* name;             ///< the scene's name: "wheel_LF", "bodies[2]" (unnamed), "grains[3]"
    int32_t shape_count;          ///< the body's shapes in the file (0 for a generated body)
    dvi_shape_type shape_type;    ///< its first shape's type (0 if none)
    double shape_radius;          ///< its first shape's radius (m; sphere, capsule, cylinder)
    double shape_orientation[4];  ///< its first shape's orientation in the body frame
} dvi_probe_body;

/// What a registered kind's sample function sees: the world after the step,
/// the target body, and the up direction (−gravity, unit; z without gravity).
typedef struct dvi_probe_context {
    const dvi_world* world;
    dvi_body_id body;
    double up[3];
} dvi_probe_context;

/// A probe kind. Strings, arrays and functions must stay valid while scenes
/// and models use the kind (static data).
typedef struct dvi_probe_class {
    const char* name;                 ///< the probe's "what": letters, digits and '_'
    const char* label;                ///< default title "LABEL (probe name)", e.g. "Wheel slip"
    const dvi_probe_column* columns;  ///< [column_count], per target
    int32_t column_count;             ///< 1 to 64
    const dvi_probe_key* keys;        ///< [key_count] the keys it accepts beyond the common ones
    int32_t key_count;                ///< 0 to DVI_PROBE_MAX_KEYS
    int32_t data_width;               ///< doubles `setup` fills per target (0 to 64)
    /// Called once per target while the scene is read (NULL: data_width must
    /// be 0): fills data[data_width] from the keys given and the body. On a
    /// problem it writes "KEY: message" into msg and returns
    /// DVI_ERR_INVALID_ARG; the scene's error then reads
    /// "probes[i].KEY: message".
    dvi_status (*setup)(const dvi_probe_keys* keys, const dvi_probe_body* body, double* data, char* msg,
                        size_t msg_size);
    /// Writes column_count values of one target (data: its setup's data).
    dvi_status (*sample)(const dvi_probe_context* ctx, const double* data, double* out);
} dvi_probe_class;

/// Makes a probe kind available to the scenes read after the call, in every
/// thread (the class is copied; what it points to is borrowed). Registering
/// the same class again returns DVI_OK. DVI_ERR_INVALID_ARG: a NULL class, a
/// bad field (the message names it), or a name the library or another class
/// already uses. DVI_ERR_NOMEM: more than 64 registered kinds. Not thread
/// safe: register at start, before scenes are read.
DVI_API dvi_status dvi_probe_register(const dvi_probe_class* kind);

/* ---- health ------------------------------------------------------------- */

/// The run health monitor's findings (docs/health.md). The model checks
/// after every step, with the scene's formulation.health settings: energy
/// against what work and gravity explain, bodies against the region they
/// started in, penetrations against the shapes, joints against their size.
/// A blow-up makes dvi_model_step return DVI_ERR_NUMERIC (the step is kept,
/// so that the state that blew up can be inspected); the rest are warnings,
/// recorded here and left to the caller to report.
DVI_API dvi_status dvi_model_health(const dvi_model* model, dvi_health_report* out);

/* ---- state (checkpoints) ------------------------------------------------- */

/// The complete dynamic state of the model (world state as given by
/// dvi_world_save_state, plus the step count) as a self-describing byte
/// blob (malloc'd, free with free()). Restoring it into a model built from
/// the same scene continues bit-identically.
DVI_API dvi_status dvi_model_save_state(const dvi_model* model, void** data, size_t* size);
DVI_API dvi_status dvi_model_load_state(dvi_model* model, const void* data, size_t size, char* msg,
                                        size_t msg_size);

#ifdef __cplusplus
}
#endif
#endif /* DVI_SCENE_H */
