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

/// Run settings of a scene (after overrides). Strings are owned by the scene.
typedef struct dvi_scene_settings {
    const char* name;         ///< scene name ("" if none)
    const char* method;       ///< "dvi" or "dem" (formulation.dem: the DEM settings)
    double dt;                ///< s
    double duration;          ///< s
    const char* solver;       ///< CCP solver name
    dvi_solver_settings solver_settings;
    int32_t threads;          ///< 0 = library default
} dvi_scene_settings;

DVI_API dvi_scene_settings dvi_scene_get_settings(const dvi_scene* scene);

/// Command-line style overrides; a zero / NULL field leaves the scene's value.
typedef struct dvi_scene_overrides {
    double dt;
    double duration;
    const char* solver;
    const char* method;
    int32_t threads;
} dvi_scene_overrides;

/// Applies overrides, validating them like scene fields (errors name the
/// override, e.g. `--dt: must be > 0`).
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
DVI_API double dvi_model_time(const dvi_model* model);

/// Named objects of the scene; "gen[i]" names body i of generator gen.
/// DVI_ERR_INVALID_ARG for an unknown name.
DVI_API dvi_status dvi_model_find_body(const dvi_model* model, const char* name, dvi_body_id* out);
DVI_API dvi_status dvi_model_find_joint(const dvi_model* model, const char* name, dvi_joint_id* out);

/* ---- probes ------------------------------------------------------------- */

/// One probe: a CSV file of `columns` values per sample (the first column is
/// the time in s), sampled after every `every` steps.
typedef struct dvi_probe_info {
    const char* name;          ///< file stem, e.g. "wheel_forces"
    const char* title;         ///< human title for plots
    int32_t every;             ///< steps between samples (≥ 1)
    int32_t columns;           ///< number of columns, time included
    const char* const* column_names; ///< [columns], e.g. "time", "wheel_RF.fz"
    const char* const* units;        ///< [columns], e.g. "s", "N"
} dvi_probe_info;

DVI_API int32_t dvi_model_probe_count(const dvi_model* model);
DVI_API dvi_status dvi_model_probe_info(const dvi_model* model, int32_t probe, dvi_probe_info* out);
/// True when the probe should be sampled after the step just taken: when the
/// step count is a multiple of `every` (step 0, the initial state, included).
DVI_API bool dvi_model_probe_due(const dvi_model* model, int32_t probe);
/// Writes the probe's current values (time first) into values[columns].
DVI_API dvi_status dvi_model_probe_sample(const dvi_model* model, int32_t probe, double* values);

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
