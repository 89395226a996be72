/* Checkpoints of `dvi run`: DIR/checkpoint/state-STEP.bin + DIR/checkpoint/run.json.
 *
 * Crash safety. The blob is named by its step and written atomically (temp
 * file, fsync, rename); run.json, which names the blob and records the CSV
 * row counts, is written atomically after it; only then are older blobs
 * removed. A crash at any point leaves run.json naming a complete blob that
 * matches it: the old pair, or the new one. The CSVs are flushed (fsync)
 * before run.json is written, so the rows it counts are on disk; rows written
 * after it are cut off by the resume (dvi_csv_open_resume).
 *
 * run.json keeps the blob's size and FNV-1a hash, the scene file's hash
 * (resuming with a changed scene is refused: it would not continue the same
 * run), and the statistics accumulated so far, numbers written exactly (the
 * JSON writer round-trips doubles). */
#include "dvi_cli.h"
#include "dvi_run.h"

#include <cjson/cJSON.h>

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <unistd.h>

#define RUN_FORMAT "dvi-run-checkpoint"
#define RUN_FORMAT_VERSION 1

/* A run over MPI ranks keeps its state in a directory ranks-STEP
 * (dvi_dist_save: manifest.bin and a file per rank). */
static bool is_rank_dir(const char* name)
{
    return strncmp(name, "ranks-", 6) == 0 && name[6] >= '0' && name[6] <= '9' && !strchr(name, '/');
}

static bool any_file(const char* name, const void* ctx)
{
    (void)ctx;
    return strcmp(name, ".") != 0 && strcmp(name, "..") != 0;
}

/* Removes the ranks-* directories of checkpoint_dir except `keep` (NULL: all). */
static void remove_rank_dirs(const char* checkpoint_dir, const char* keep)
{
    DIR* d = opendir(checkpoint_dir);
    if (!d) return;
    char* names[64];
    int count = 0;
    struct dirent* e;
    while ((e = readdir(d)) != NULL && count < 64)
        if (is_rank_dir(e->d_name) && !(keep && strcmp(e->d_name, keep) == 0))
            names[count++] = cli_path_join(checkpoint_dir, e->d_name);
    closedir(d);
    for (int i = 0; i < count; i++) {
        if (!names[i]) continue;
        cli_remove_matching(names[i], any_file, NULL);
        rmdir(names[i]);
        free(names[i]);
    }
}

static bool is_state_file(const char* name)
{
    size_t n = strlen(name);
    if (strncmp(name, "state-", 6) != 0) return false;
    if (n > 4 && strcmp(name + n - 4, ".bin") == 0) return true;
    if (n > 8 && strcmp(name + n - 8, ".bin.tmp") == 0) return true;
    return false;
}

typedef struct checkpoint_match {
    const char* keep;
    bool run_json;
} checkpoint_match;

static bool match_checkpoint_file(const char* name, const void* ctx)
{
    const checkpoint_match* m = ctx;
    if (is_state_file(name)) return !(m->keep && strcmp(name, m->keep) == 0);
    return m->run_json && (strcmp(name, "run.json") == 0 || strcmp(name, "run.json.tmp") == 0);
}

void run_remove_checkpoint_files(const char* checkpoint_dir, const char* keep, bool run_json)
{
    checkpoint_match m = {keep, run_json};
    cli_remove_matching(checkpoint_dir, match_checkpoint_file, &m);
    remove_rank_dirs(checkpoint_dir, keep);
}

static int write_run_json(run_state* rs, const char* name, size_t size, uint64_t hash, char* msg, size_t msg_size);

static void json_stats(dvi_json_writer* w, const run_stats* a, double wall_total)
{
    dvi_json_begin_object(w);
    dvi_json_key_int(w, "steps", a->steps);
    dvi_json_key_int(w, "iterations_sum", a->iterations_sum);
    dvi_json_key_int(w, "iterations_max", a->iterations_max);
    dvi_json_key_number(w, "residual_max", a->residual_max);
    dvi_json_key_int(w, "not_converged", a->not_converged);
    dvi_json_key_int(w, "first_not_converged", a->first_not_converged);
    dvi_json_key_int(w, "joint_dropped_steps", a->joint_dropped_steps);
    dvi_json_key_int(w, "joint_dropped_max", a->joint_dropped_max);
    dvi_json_key_int(w, "joint_residual_steps", a->joint_residual_steps);
    dvi_json_key_number(w, "joint_residual_max", a->joint_residual_max);
    dvi_json_key_int(w, "warm_starts_rejected", a->warm_starts_rejected);
    dvi_json_key_int(w, "coulomb_checked", a->coulomb_checked);
    dvi_json_key_int(w, "nonunique", a->nonunique);
    dvi_json_key_int(w, "first_nonunique", a->first_nonunique);
    dvi_json_key_number(w, "seconds_collide", a->seconds_collide);
    dvi_json_key_number(w, "seconds_assemble", a->seconds_assemble);
    dvi_json_key_number(w, "seconds_solve", a->seconds_solve);
    dvi_json_key_number(w, "seconds_integrate", a->seconds_integrate);
    dvi_json_key_number(w, "seconds_report", a->seconds_report);
    dvi_json_key_number(w, "seconds_step", a->seconds_step);
    dvi_json_key_number(w, "max_penetration", a->max_penetration);
    dvi_json_key_int(w, "max_penetration_step", a->max_penetration_step);
    dvi_json_key_number(w, "max_joint_violation", a->max_joint_violation);
    dvi_json_key_int(w, "max_joint_violation_step", a->max_joint_violation_step);
    dvi_json_key_number(w, "max_ccp_hover", a->max_ccp_hover);
    dvi_json_key_int(w, "max_ccp_hover_step", a->max_ccp_hover_step);
    dvi_json_key_number(w, "ccp_hover_work", a->ccp_hover_work);
    dvi_json_key_int(w, "contacts_max", a->contacts_max);
    dvi_json_key_number(w, "wall_seconds", wall_total);
    dvi_json_key_int(w, "invocations", a->invocations);
    dvi_json_end_object(w);
}

/* Flushes the probes' CSVs (to disk: run.json counts their rows). Past the
 * file-size limit (SIGXFSZ) a probe file stays short: the state is saved
 * all the same, as on SIGTERM. */
static int flush_probes(run_state* rs, char* msg, size_t msg_size)
{
    for (int32_t i = 0; i < rs->probe_count; i++)
        if (rs->probes[i].csv && dvi_csv_flush(rs->probes[i].csv) != 0 && !rs->size_limit[0]) {
            snprintf(msg, msg_size, "%s", dvi_csv_last_error(rs->probes[i].csv));
            return 1;
        }
    return 0;
}

/* Over ranks (collective): every rank's part into checkpoint/ranks-STEP
 * (dvi_dist_save), then run.json from rank 0; the outcome agreed. */
static int write_checkpoint_dist(run_state* rs, char* msg, size_t msg_size)
{
    int rc = flush_probes(rs, msg, msg_size);
    if (dvi_dist_agree_max(rc)) {
        if (!rc) snprintf(msg, msg_size, "checkpoint: a probe's CSV could not be written");
        return 1;
    }
    char name[64];
    snprintf(name, sizeof name, "ranks-%012" PRId64, rs->step);
    char* dir = cli_path_join(rs->checkpoint_dir, name);
    if (dvi_dist_agree_max(dir == NULL)) {
        free(dir);
        snprintf(msg, msg_size, "checkpoint: out of memory");
        return 1;
    }
    dvi_status st = dvi_dist_save(rs->dist, dir);
    free(dir);
    if (st != DVI_OK) {
        snprintf(msg, msg_size, "checkpoint at step %" PRId64 ": %s", rs->step, dvi_dist_last_error(rs->dist));
        return 1;
    }
    rc = rs->rank == 0 ? write_run_json(rs, name, 0, 0, msg, msg_size) : 0;
    if (dvi_dist_agree_max(rc)) {
        if (!rc) snprintf(msg, msg_size, "checkpoint: run.json could not be written on rank 0");
        return 1;
    }
    if (rs->rank == 0) run_remove_checkpoint_files(rs->checkpoint_dir, name, false);
    free(rs->state_file);
    rs->state_file = cli_strdup(name);
    return 0;
}

int run_write_checkpoint(run_state* rs, char* msg, size_t msg_size)
{
    if (rs->dist) return write_checkpoint_dist(rs, msg, msg_size);
    char m[512];
    if (flush_probes(rs, msg, msg_size) != 0) return 1;

    void* blob = NULL;
    size_t size = 0;
    dvi_status st = dvi_model_save_state(rs->model, &blob, &size);
    if (st < 0) {
        snprintf(msg, msg_size, "checkpoint at step %" PRId64 ": cannot save the state: %s", rs->step,
                 dvi_status_string(st));
        return 1;
    }
    char name[64];
    snprintf(name, sizeof name, "state-%012" PRId64 ".bin", rs->step);
    char* blob_path = cli_path_join(rs->checkpoint_dir, name);
    char* new_state_file = cli_strdup(name);
    int rc = 1;
    if (!blob_path || !new_state_file) {
        snprintf(msg, msg_size, "checkpoint: out of memory");
        goto done;
    }
    if (dvi_write_file_atomic(blob_path, blob, size, m, sizeof m) != 0) {
        snprintf(msg, msg_size, "%s", m);
        goto done;
    }
    if (write_run_json(rs, name, size, cli_hash64(blob, size), msg, msg_size) != 0) goto done;
    /* run.json now names the new blob: the old ones can go */
    run_remove_checkpoint_files(rs->checkpoint_dir, name, false);
    free(rs->state_file);
    rs->state_file = new_state_file;
    new_state_file = NULL;
    rc = 0;
done:
    free(blob);
    free(blob_path);
    free(new_state_file);
    return rc;
}

/* checkpoint/run.json naming the state `name` (a blob of `size` bytes and
 * FNV-1a `hash`, or over ranks a ranks-STEP directory). */
static int write_run_json(run_state* rs, const char* name, size_t size, uint64_t hash, char* msg, size_t msg_size)
{
    char m[512];
    char* run_path = cli_path_join(rs->checkpoint_dir, "run.json");
    int rc = 1;
    dvi_json_writer* w = NULL;
    if (!run_path) {
        snprintf(msg, msg_size, "checkpoint: out of memory");
        goto done;
    }
    char state_hash[17], scene_hash[17];
    cli_hash_hex(hash, state_hash);
    cli_hash_hex(rs->scene_hash, scene_hash);

    if (dvi_json_writer_open_buffer(&w) != 0) {
        snprintf(msg, msg_size, "checkpoint: out of memory");
        goto done;
    }
    dvi_json_begin_object(w);
    dvi_json_key_string(w, "format", RUN_FORMAT);
    dvi_json_key_int(w, "format_version", RUN_FORMAT_VERSION);
    dvi_json_key_string(w, "dvi_version", dvi_version_string());
    dvi_json_key_string(w, "scene", rs->scene_path);
    dvi_json_key_string(w, "scene_hash", scene_hash);
    dvi_json_key(w, "overrides");
    dvi_json_begin_object(w);
    if (rs->overrides.dt > 0) dvi_json_key_number(w, "dt", rs->overrides.dt);
    if (rs->overrides.duration > 0) dvi_json_key_number(w, "duration", rs->overrides.duration);
    if (rs->overrides.solver) dvi_json_key_string(w, "solver", rs->overrides.solver);
    if (rs->overrides.method) dvi_json_key_string(w, "method", rs->overrides.method);
    if (rs->overrides.friction) dvi_json_key_string(w, "friction", rs->overrides.friction);
    if (rs->overrides.lemke_coulomb) dvi_json_key_bool(w, "lemke_coulomb", true);
    if (rs->overrides.threads > 0) dvi_json_key_int(w, "threads", rs->overrides.threads);
    if (rs->overrides.young_modulus > 0) dvi_json_key_number(w, "young_modulus", rs->overrides.young_modulus);
    if (rs->overrides.probe_interval > 0) dvi_json_key_number(w, "probe_interval", rs->overrides.probe_interval);
    dvi_json_end_object(w);
    dvi_json_key_int(w, "vtk_every", rs->vtk_every);
    dvi_json_key_int(w, "checkpoint_every", rs->checkpoint_every);
    dvi_json_key_int(w, "contacts_every", rs->contacts_every);
    dvi_json_key_int(w, "step", rs->step);
    dvi_json_key_number(w, "time", (double)rs->step * rs->settings.dt);
    dvi_json_key_number(w, "dt", rs->settings.dt);
    dvi_json_key_number(w, "duration", rs->settings.duration);
    dvi_json_key(w, "state");
    dvi_json_begin_object(w);
    dvi_json_key_string(w, "file", name);
    dvi_json_key_int(w, "size", (long long)size);
    dvi_json_key_string(w, "hash", state_hash);
    if (rs->dist) dvi_json_key_int(w, "ranks", rs->ranks); /* a directory: dvi_dist_save */
    dvi_json_end_object(w);
    dvi_json_key(w, "probes");
    dvi_json_begin_array(w);
    for (int32_t i = 0; i < rs->probe_count; i++) {
        dvi_json_begin_object(w);
        dvi_json_key_string(w, "name", rs->probes[i].info.name);
        dvi_json_key_int(w, "columns", rs->probes[i].info.columns);
        dvi_json_key_int(w, "rows", dvi_csv_rows(rs->probes[i].csv));
        dvi_json_end_object(w);
    }
    dvi_json_end_array(w);
    dvi_json_key(w, "vtk_frame_times");
    dvi_json_begin_array_inline(w);
    for (int32_t i = 0; i < rs->frame_count; i++) dvi_json_number(w, rs->frame_times[i]);
    dvi_json_end_array(w);
    dvi_json_key(w, "stats");
    json_stats(w, &rs->stats, rs->stats.wall_seconds + (cli_now() - rs->wall_start));
    dvi_json_end_object(w);
    if (dvi_json_writer_finish(w, m, sizeof m) != 0) {
        snprintf(msg, msg_size, "run.json: %s", m);
        goto done;
    }
    size_t n = 0;
    const char* text = dvi_json_writer_buffer(w, &n);
    if (dvi_write_file_atomic(run_path, text, n, m, sizeof m) != 0) {
        snprintf(msg, msg_size, "%s", m);
        goto done;
    }
    rc = 0;
done:
    dvi_json_writer_free(w);
    free(run_path);
    return rc;
}

/* ---- reading run.json ------------------------------------------------------------- */

typedef struct reader {
    const char* file;
    char* msg;
    size_t msg_size;
    bool failed;
} reader;

static void bad(reader* r, const char* key, const char* what)
{
    if (r->failed) return;
    snprintf(r->msg, r->msg_size, "%s: %s: %s", r->file, key, what);
    r->failed = true;
}

static double get_number(reader* r, const cJSON* obj, const char* key, bool required, double fallback)
{
    const cJSON* v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!v) {
        if (required) bad(r, key, "missing");
        return fallback;
    }
    if (cJSON_IsNull(v)) return NAN; /* the writer's non-finite numbers */
    if (!cJSON_IsNumber(v)) {
        bad(r, key, "not a number");
        return fallback;
    }
    return v->valuedouble;
}

static int64_t get_int(reader* r, const cJSON* obj, const char* key, bool required, int64_t lo, int64_t hi,
                       int64_t fallback)
{
    const cJSON* v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!v) {
        if (required) bad(r, key, "missing");
        return fallback;
    }
    double d = cJSON_IsNumber(v) ? v->valuedouble : NAN;
    if (!(d == floor(d)) || d < (double)lo || d > (double)hi || fabs(d) > 9007199254740992.0) {
        bad(r, key, "not an integer in range");
        return fallback;
    }
    return (int64_t)d;
}

static const char* get_string(reader* r, const cJSON* obj, const char* key, bool required)
{
    const cJSON* v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!v) {
        if (required) bad(r, key, "missing");
        return NULL;
    }
    if (!cJSON_IsString(v)) {
        bad(r, key, "not a string");
        return NULL;
    }
    return v->valuestring;
}

static bool get_bool(reader* r, const cJSON* obj, const char* key)
{
    const cJSON* v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (v && !cJSON_IsBool(v)) bad(r, key, "not true or false");
    return cJSON_IsTrue(v);
}

static bool parse_hash(const char* s, uint64_t* out)
{
    if (!s || strlen(s) != 16) return false;
    uint64_t h = 0;
    for (int i = 0; i < 16; i++) {
        char c = s[i];
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        if (d < 0) return false;
        h = h << 4 | (uint64_t)d;
    }
    *out = h;
    return true;
}

void run_resume_info_free(run_resume_info* info)
{
    for (int32_t i = 0; i < info->probe_count; i++) free(info->probe_names ? info->probe_names[i] : NULL);
    free(info->probe_names);
    free(info->probe_rows);
    free(info->probe_columns);
    free(info->state_file);
    memset(info, 0, sizeof *info);
}

int run_read_checkpoint(run_state* rs, run_resume_info* info, char* msg, size_t msg_size)
{
    char* path = cli_path_join(rs->checkpoint_dir ? rs->checkpoint_dir : "", "run.json");
    if (!path) {
        snprintf(msg, msg_size, "out of memory");
        return 1;
    }
    size_t n = 0;
    char m[512];
    char* text = cli_read_file(path, &n, m, sizeof m);
    if (!text) {
        snprintf(msg, msg_size, "%s (is %s the output directory of a run?)", m, rs->out_dir);
        free(path);
        return 1;
    }
    reader r = {path, msg, msg_size, false};
    cJSON* root = cJSON_ParseWithLength(text, n);
    free(text);
    if (!root || !cJSON_IsObject(root)) {
        snprintf(msg, msg_size, "%s: not a valid checkpoint (JSON)", path);
        cJSON_Delete(root);
        free(path);
        return 1;
    }
    const char* format = get_string(&r, root, "format", true);
    if (format && strcmp(format, RUN_FORMAT) != 0) bad(&r, "format", "not a dvi run checkpoint");
    int64_t version = get_int(&r, root, "format_version", true, 1, 1000000, 0);
    if (!r.failed && version != RUN_FORMAT_VERSION) bad(&r, "format_version", "written by another version of dvi");
    const char* scene = get_string(&r, root, "scene", true);
    uint64_t scene_hash = 0;
    if (!r.failed && !parse_hash(get_string(&r, root, "scene_hash", true), &scene_hash))
        bad(&r, "scene_hash", "not 16 hex digits");

    const cJSON* ov = cJSON_GetObjectItemCaseSensitive(root, "overrides");
    if (!cJSON_IsObject(ov)) bad(&r, "overrides", "missing or not an object");
    double ov_dt = 0, ov_duration = 0, ov_young = 0, ov_probe_interval = 0;
    int64_t ov_threads = 0;
    const char *ov_solver = NULL, *ov_method = NULL, *ov_friction = NULL;
    bool ov_lemke_coulomb = false;
    if (!r.failed) {
        ov_dt = get_number(&r, ov, "dt", false, 0);
        ov_duration = get_number(&r, ov, "duration", false, 0);
        ov_young = get_number(&r, ov, "young_modulus", false, 0);
        ov_probe_interval = get_number(&r, ov, "probe_interval", false, 0);
        ov_threads = get_int(&r, ov, "threads", false, 0, 4096, 0);
        ov_solver = get_string(&r, ov, "solver", false);
        ov_method = get_string(&r, ov, "method", false);
        ov_friction = get_string(&r, ov, "friction", false);
        ov_lemke_coulomb = get_bool(&r, ov, "lemke_coulomb");
    }
    int64_t vtk_every = get_int(&r, root, "vtk_every", true, 0, INT32_MAX, 0);
    int64_t checkpoint_every = get_int(&r, root, "checkpoint_every", true, 0, INT64_MAX / 2, 0);
    int64_t contacts_every = get_int(&r, root, "contacts_every", false, 0, INT64_MAX / 2, 0);
    info->step = get_int(&r, root, "step", true, 0, INT64_MAX / 2, 0);
    info->duration = get_number(&r, root, "duration", true, 0);

    const cJSON* state = cJSON_GetObjectItemCaseSensitive(root, "state");
    if (!cJSON_IsObject(state)) bad(&r, "state", "missing or not an object");
    if (!r.failed) {
        const char* file = get_string(&r, state, "file", true);
        info->state_ranks = (int32_t)get_int(&r, state, "ranks", false, 1, INT32_MAX, 0);
        if (file && info->state_ranks > 0 && !is_rank_dir(file)) bad(&r, "state.file", "not a ranks-STEP directory");
        else if (file && info->state_ranks == 0 && (!is_state_file(file) || strchr(file, '/')))
            bad(&r, "state.file", "not a state file name");
        info->state_size = get_int(&r, state, "size", true, 0, INT64_MAX / 2, 0);
        if (!r.failed && !parse_hash(get_string(&r, state, "hash", true), &info->state_hash))
            bad(&r, "state.hash", "not 16 hex digits");
        if (!r.failed) info->state_file = cli_strdup(file);
    }

    const cJSON* probes = cJSON_GetObjectItemCaseSensitive(root, "probes");
    if (!cJSON_IsArray(probes)) bad(&r, "probes", "missing or not an array");
    if (!r.failed) {
        int np = cJSON_GetArraySize(probes);
        info->probe_names = calloc((size_t)(np > 0 ? np : 1), sizeof(char*));
        info->probe_rows = calloc((size_t)(np > 0 ? np : 1), sizeof(long long));
        info->probe_columns = calloc((size_t)(np > 0 ? np : 1), sizeof(int32_t));
        if (!info->probe_names || !info->probe_rows || !info->probe_columns) bad(&r, "probes", "out of memory");
        const cJSON* p;
        int i = 0;
        cJSON_ArrayForEach(p, probes)
        {
            if (r.failed) break;
            const char* name = get_string(&r, p, "name", true);
            info->probe_rows[i] = (long long)get_int(&r, p, "rows", true, 0, INT64_MAX / 2, 0);
            info->probe_columns[i] = (int32_t)get_int(&r, p, "columns", true, 1, INT32_MAX, 1);
            if (r.failed) break;
            info->probe_names[i] = cli_strdup(name);
            info->probe_count = ++i;
        }
    }

    const cJSON* frames = cJSON_GetObjectItemCaseSensitive(root, "vtk_frame_times");
    if (!cJSON_IsArray(frames)) bad(&r, "vtk_frame_times", "missing or not an array");
    if (!r.failed) {
        int nf = cJSON_GetArraySize(frames);
        if (nf > 0) {
            rs->frame_times = malloc(sizeof(double) * (size_t)nf);
            if (!rs->frame_times) bad(&r, "vtk_frame_times", "out of memory");
        }
        const cJSON* t;
        int i = 0;
        cJSON_ArrayForEach(t, frames)
        {
            if (r.failed) break;
            if (!cJSON_IsNumber(t) || !isfinite(t->valuedouble)) {
                bad(&r, "vtk_frame_times", "not a list of numbers");
                break;
            }
            rs->frame_times[i++] = t->valuedouble;
        }
        rs->frame_count = i;
        rs->frame_capacity = i;
    }

    const cJSON* stats = cJSON_GetObjectItemCaseSensitive(root, "stats");
    if (!cJSON_IsObject(stats)) bad(&r, "stats", "missing or not an object");
    if (!r.failed) {
        run_stats* a = &rs->stats;
        const int64_t big = INT64_MAX / 2;
        a->steps = get_int(&r, stats, "steps", true, 0, big, 0);
        a->iterations_sum = get_int(&r, stats, "iterations_sum", true, 0, big, 0);
        a->iterations_max = get_int(&r, stats, "iterations_max", true, 0, big, 0);
        a->residual_max = get_number(&r, stats, "residual_max", true, 0);
        a->not_converged = get_int(&r, stats, "not_converged", true, 0, big, 0);
        a->first_not_converged = get_int(&r, stats, "first_not_converged", true, 0, big, 0);
        a->joint_dropped_steps = get_int(&r, stats, "joint_dropped_steps", false, 0, big, 0); /* absent before: 0 */
        a->joint_dropped_max = get_int(&r, stats, "joint_dropped_max", false, 0, big, 0);
        a->joint_residual_steps = get_int(&r, stats, "joint_residual_steps", false, 0, big, 0); /* absent before: 0 */
        a->joint_residual_max = get_number(&r, stats, "joint_residual_max", false, 0);
        a->warm_starts_rejected = get_int(&r, stats, "warm_starts_rejected", false, 0, big, 0);
        a->coulomb_checked = get_int(&r, stats, "coulomb_checked", false, 0, big, 0); /* absent before: 0 */
        a->nonunique = get_int(&r, stats, "nonunique", false, 0, big, 0);
        a->first_nonunique = get_int(&r, stats, "first_nonunique", false, 0, big, 0);
        a->seconds_collide = get_number(&r, stats, "seconds_collide", true, 0);
        a->seconds_assemble = get_number(&r, stats, "seconds_assemble", true, 0);
        a->seconds_solve = get_number(&r, stats, "seconds_solve", true, 0);
        a->seconds_integrate = get_number(&r, stats, "seconds_integrate", true, 0);
        a->seconds_report = get_number(&r, stats, "seconds_report", false, 0);
        a->seconds_step = get_number(&r, stats, "seconds_step", true, 0);
        a->max_penetration = get_number(&r, stats, "max_penetration", true, 0);
        a->max_penetration_step = get_int(&r, stats, "max_penetration_step", true, 0, big, 0);
        a->max_joint_violation = get_number(&r, stats, "max_joint_violation", true, 0);
        a->max_joint_violation_step = get_int(&r, stats, "max_joint_violation_step", true, 0, big, 0);
        a->max_ccp_hover = get_number(&r, stats, "max_ccp_hover", false, 0);
        a->max_ccp_hover_step = get_int(&r, stats, "max_ccp_hover_step", false, 0, big, 0);
        a->ccp_hover_work = get_number(&r, stats, "ccp_hover_work", false, 0);
        a->contacts_max = get_int(&r, stats, "contacts_max", true, 0, big, 0);
        a->wall_seconds = get_number(&r, stats, "wall_seconds", true, 0);
        a->invocations = get_int(&r, stats, "invocations", true, 0, big, 0);
    }

    if (!r.failed) {
        if (scene[0] != '/') bad(&r, "scene", "not an absolute path");
    }
    if (!r.failed) {
        rs->scene_path = cli_strdup(scene);
        rs->scene_arg = cli_strdup(scene);
        rs->scene_hash = scene_hash;
        rs->overrides.dt = ov_dt > 0 ? ov_dt : 0;
        rs->overrides.duration = ov_duration > 0 ? ov_duration : 0;
        rs->overrides.threads = (int32_t)ov_threads;
        rs->overrides.young_modulus = ov_young > 0 ? ov_young : 0;
        rs->overrides.probe_interval = ov_probe_interval > 0 ? ov_probe_interval : 0;
        if (ov_solver) rs->ov_solver = cli_strdup(ov_solver);
        if (ov_method) rs->ov_method = cli_strdup(ov_method);
        if (ov_friction) rs->ov_friction = cli_strdup(ov_friction);
        rs->overrides.lemke_coulomb = ov_lemke_coulomb;
        rs->vtk_every = vtk_every;
        rs->checkpoint_every = checkpoint_every;
        rs->contacts_every = contacts_every;
        if (vtk_every == 0 && rs->frame_count > 0) bad(&r, "vtk_frame_times", "frames without vtk_every");
    }
    cJSON_Delete(root);
    free(path);
    return r.failed ? 1 : 0;
}

bool run_checkpoint_over_ranks(const char* out_dir)
{
    char* dir = cli_path_join(out_dir, "checkpoint");
    char* path = dir ? cli_path_join(dir, "run.json") : NULL;
    size_t n = 0;
    char m[256];
    char* text = path ? cli_read_file(path, &n, m, sizeof m) : NULL;
    cJSON* root = text ? cJSON_ParseWithLength(text, n) : NULL;
    const cJSON* state = root ? cJSON_GetObjectItemCaseSensitive(root, "state") : NULL;
    const cJSON* ranks = state ? cJSON_GetObjectItemCaseSensitive(state, "ranks") : NULL;
    bool over = cJSON_IsNumber(ranks) && ranks->valuedouble >= 1;
    cJSON_Delete(root);
    free(text), free(path), free(dir);
    return over;
}
