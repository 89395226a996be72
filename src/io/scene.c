/* dvicontact — JSON scene files: loading (scene.h; the format is
 * docs/scene-format.md). The text is read and pre-scanned here, then parsed
 * by cJSON; scene_schema.c reads and checks its sections, scene_json.c
 * holds the error lines and typed values they share (scene_parse.h).
 * Building worlds from scenes is in scene_model.c.
 *
 * Every problem is reported, one "json.path: message" line each, up to
 * MAX_ERROR_LINES lines (then one line counting the rest). Nothing is
 * printed; no global state; the cJSON tree never outlives the parse.
 */
#include "alloc.h"
#include "error.h"
#include "scene_parse.h"

#include "regular_file.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_NESTING 64
#define MAX_FILE_SIZE ((size_t)1 << 30)

/* ---- JSON text ---------------------------------------------------------------------------------- */

static void line_col(const char* t, size_t pos, int* line, int* col)
{
    int l = 1, cl = 1;
    for (size_t i = 0; i < pos; i++) {
        if (t[i] == '\n') {
            l++;
            cl = 1;
        } else {
            cl++;
        }
    }
    *line = l;
    *col = cl;
}

/* Structure check before cJSON: nesting deeper than MAX_NESTING (cJSON's own
 * limit is 1000, and its failure reads like a syntax error), and text that
 * ends inside a string or an open array or object (a truncated file).
 * Returns 0, 1 (too deep; *where = the opening bracket), 2 (an array or
 * object left open) or 3 (inside a string at the end). */
static int prescan(const char* t, size_t n, size_t* where)
{
    int depth = 0;
    bool in_string = false;
    for (size_t i = 0; i < n; i++) {
        char ch = t[i];
        if (in_string) {
            if (ch == '\\') i++;
            else if (ch == '"') in_string = false;
            continue;
        }
        if (ch == '"') in_string = true;
        else if (ch == '[' || ch == '{') {
            if (++depth > MAX_NESTING) {
                *where = i;
                return 1;
            }
        } else if (ch == ']' || ch == '}') {
            depth--;
        }
    }
    *where = n;
    return in_string ? 3 : depth > 0 ? 2 : 0;
}

static bool starts_with_word(const char* t, size_t n, const char* w)
{
    size_t k = strlen(w);
    return n >= k && strncmp(t, w, k) == 0;
}

/* Parses the text; on failure adds the one error line and returns NULL. */
static cJSON* parse_json(ctx* c, const char* text, size_t len, const char* display, dvi_status* st)
{
    size_t k = 0;
    while (k < len && (text[k] == ' ' || text[k] == '\t' || text[k] == '\r' || text[k] == '\n')) k++;
    if (k == len) {
        sc_errf(c, display, "empty file (no JSON value)");
        *st = DVI_ERR_PARSE;
        return NULL;
    }
    size_t where = 0;
    int pre = prescan(text, len, &where);
    int line, col;
    if (pre == 1) {
        line_col(text, where, &line, &col);
        char p[PATH_LEN];
        snprintf(p, sizeof p, "%s:%d:%d", display, line, col);
        sc_errf(c, p, "arrays and objects nested deeper than %d levels", MAX_NESTING);
        *st = DVI_ERR_PARSE;
        return NULL;
    }
    const char* end = NULL;
    cJSON* root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
    if (root) {
        size_t pos = end && end >= text && end <= text + len ? (size_t)(end - text) : len;
        while (pos < len && (text[pos] == ' ' || text[pos] == '\t' || text[pos] == '\r' || text[pos] == '\n' ||
                             text[pos] == '\0'))
            pos++;
        if (pos == len) return root;
        cJSON_Delete(root);
        line_col(text, pos, &line, &col);
        char p[PATH_LEN];
        snprintf(p, sizeof p, "%s:%d:%d", display, line, col);
        sc_errf(c, p, "malformed JSON: unexpected text after the end of the scene");
        *st = DVI_ERR_PARSE;
        return NULL;
    }
    if (c->nomem) {
        *st = DVI_ERR_NOMEM;
        return NULL;
    }
    size_t pos = end && end >= text && end <= text + len ? (size_t)(end - text) : len;
    char p[PATH_LEN], why[96];
    if (pre == 3 || (pre == 2 && pos + 1 >= len)) {
        line_col(text, len, &line, &col);
        snprintf(why, sizeof why, "unexpected end of the file%s (truncated?)", pre == 3 ? " inside a string" : "");
    } else {
        line_col(text, pos, &line, &col);
        const char* at = text + pos;
        size_t rest = len - pos;
        unsigned char ch = pos < len ? (unsigned char)*at : 0;
        if (starts_with_word(at, rest, "NaN") || starts_with_word(at, rest, "nan") ||
            starts_with_word(at, rest, "Infinity") || starts_with_word(at, rest, "-Infinity") ||
            starts_with_word(at, rest, "inf") || starts_with_word(at, rest, "-inf"))
            snprintf(why, sizeof why, "NaN and Infinity are not JSON numbers");
        else if (ch >= 0x20 && ch < 0x7f)
            snprintf(why, sizeof why, "unexpected '%c'", ch);
        else
            snprintf(why, sizeof why, "unexpected byte 0x%02x", ch);
    }
    snprintf(p, sizeof p, "%s:%d:%d", display, line, col);
    sc_errf(c, p, "malformed JSON: %s", why);
    *st = DVI_ERR_PARSE;
    return NULL;
}

/* ---- public functions ---------------------------------------------------------------------------- */

void dvi_scene_errors_free(dvi_scene_errors* e)
{
    if (!e) return;
    free(e->text);
    e->text = NULL;
    e->count = 0;
}

const char* dvi_scene_warnings(const dvi_scene* s)
{
    return s && s->warnings.data ? s->warnings.data : "";
}

void dvi_scene_destroy(dvi_scene* s)
{
    if (!s) return;
    free(s->name);
    out_sb_free(&s->warnings);
    free(s->method);
    free(s->solver);
    for (int32_t i = 0; i < s->body_count; i++) free(s->bodies[i].name);
    for (int32_t i = 0; i < s->shape_count; i++) {
        free(s->shapes[i].heights);
        free(s->shapes[i].dem_samples);
        dvi_mesh_data_free(&s->shapes[i].mesh);
    }
    for (int32_t i = 0; i < s->generator_count; i++) {
        free(s->generators[i].name);
        free(s->generators[i].exclude);
    }
    for (int32_t i = 0; i < s->joint_count; i++) free(s->joints[i].name);
    for (int32_t i = 0; i < s->probe_count; i++) {
        free(s->probes[i].name);
        free(s->probes[i].title);
        free(s->probes[i].targets);
        free(s->probes[i].data);
        free(s->probes[i].with);
    }
    BASE_FREE_ALL(s->bodies, s->shapes, s->generators, s->joints, s->probes);
    sc_free_terrain(s);
    free(s);
}

static dvi_scene* scene_new(void)
{
    dvi_scene* s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->name = sc_dup_string("");
    s->method = sc_dup_string("dvi");
    s->solver = sc_dup_string(dvi_default_world_def().solver);
    dvi_world_def wd = dvi_default_world_def();
    for (int k = 0; k < 3; k++) s->gravity[k] = wd.gravity[k];
    s->solver_settings = wd.solver_settings;
    s->dem = wd.dem;
    snprintf(s->coulomb_check, sizeof s->coulomb_check, "%s", wd.coulomb_check);
    if (!s->name || !s->method || !s->solver) {
        dvi_scene_destroy(s);
        return NULL;
    }
    return s;
}

/* Hands the error lines to the caller (or frees them). */
static dvi_status finish(ctx* c, dvi_status st, dvi_scene_errors* errors)
{
    if (c->hidden > 0) {
        char line[128];
        int n = snprintf(line, sizeof line, "scene: %lld more problems not listed\n", (long long)c->hidden);
        sc_append_text(c, line, (size_t)n);
        c->lines++;
    }
    if (c->nomem) st = DVI_ERR_NOMEM;
    if (st != DVI_OK) { /* every problem, one per line, without the last newline */
        char* t = c->text.data;
        size_t n = t ? strlen(t) : 0;
        if (n > 0 && t[n - 1] == '\n') t[n - 1] = '\0';
        base_error_set(st, t && t[0] ? t : (st == DVI_ERR_NOMEM ? "scene: out of memory" : NULL));
        if (n > 0 && t[n - 1] == '\0') t[n - 1] = '\n';
    }
    if (errors) {
        errors->count = c->text.data ? c->lines : 0;
        errors->text = c->text.data;
    } else {
        free(c->text.data);
    }
    c->text.data = NULL;
    for (int32_t i = 0; i < c->mat_count; i++) free(c->mat_names[i]);
    free(c->mat_names);
    free(c->mats);
    sc_map_free(&c->mat_map);
    sc_map_free(&c->body_map);
    sc_map_free(&c->gen_map);
    sc_map_free(&c->joint_map);
    sc_map_free(&c->probe_map);
    return st;
}

static dvi_status parse_text(const char* text, size_t length, const char* base_dir, const char* display,
                             dvi_scene** out, dvi_scene_errors* errors)
{
    ctx c;
    memset(&c, 0, sizeof c);
    c.base_dir = base_dir;
    dvi_status st = DVI_OK;
    cJSON* root = parse_json(&c, text, length, display, &st);
    if (!root) return finish(&c, st, errors);
    if (!cJSON_IsObject(root)) {
        sc_errf(&c, display, "the top level must be a JSON object (got %s)", sc_type_name(root));
        cJSON_Delete(root);
        return finish(&c, DVI_ERR_PARSE, errors);
    }
    c.s = scene_new();
    if (!c.s) {
        cJSON_Delete(root);
        c.nomem = true;
        return finish(&c, DVI_ERR_NOMEM, errors);
    }
    sc_parse_scene(&c, root);
    cJSON_Delete(root);
    if (c.problems > 0 || c.nomem) {
        dvi_scene_destroy(c.s);
        st = c.problems > 0 && c.problems == c.unsupported ? DVI_ERR_UNSUPPORTED : DVI_ERR_INVALID_ARG;
        return finish(&c, st, errors);
    }
    *out = c.s;
    return finish(&c, DVI_OK, errors);
}

dvi_status dvi_scene_parse(const char* text, size_t length, const char* base_dir, dvi_scene** out,
                           dvi_scene_errors* errors)
{
    if (errors) memset(errors, 0, sizeof *errors);
    if (!out) return base_error_set(DVI_ERR_INVALID_ARG, "scene: out is NULL");
    *out = NULL;
    if (!text) {
        ctx c;
        memset(&c, 0, sizeof c);
        sc_errf(&c, "scene", "no text (NULL)");
        return finish(&c, DVI_ERR_INVALID_ARG, errors);
    }
    return parse_text(text, length, base_dir ? base_dir : ".", "scene", out, errors);
}

dvi_status dvi_scene_load(const char* path, dvi_scene** out, dvi_scene_errors* errors)
{
    if (errors) memset(errors, 0, sizeof *errors);
    if (!out) return base_error_set(DVI_ERR_INVALID_ARG, "scene: out is NULL");
    *out = NULL;
    ctx c;
    memset(&c, 0, sizeof c);
    if (!path || !path[0]) {
        sc_errf(&c, "scene", "no file name");
        return finish(&c, DVI_ERR_INVALID_ARG, errors);
    }
    char why[160];
    char* buf = NULL;
    size_t len = 0;
    const int rc = base_read_regular(path, MAX_FILE_SIZE, &buf, &len, why, sizeof why);
    if (rc == -2) {
        c.nomem = true;
        return finish(&c, DVI_ERR_NOMEM, errors);
    }
    if (rc != 0) {
        sc_errf(&c, path, "%s", why);
        return finish(&c, DVI_ERR_IO, errors);
    }
    /* the directory of the file resolves relative names inside it */
    char* dir = sc_dup_string(path);
    if (!dir) {
        free(buf);
        c.nomem = true;
        return finish(&c, DVI_ERR_NOMEM, errors);
    }
    char* slash = strrchr(dir, '/');
    if (!slash) strcpy(dir, ".");
    else if (slash == dir) dir[1] = '\0';
    else *slash = '\0';
    dvi_status st = parse_text(buf, len, dir, path, out, errors);
    free(dir);
    free(buf);
    return st;
}

dvi_scene_settings dvi_scene_get_settings(const dvi_scene* s)
{
    dvi_scene_settings r;
    memset(&r, 0, sizeof r);
    if (!s) {
        r.name = "";
        r.method = "dvi";
        r.solver = "apgd";
        r.solver_settings = dvi_default_world_def().solver_settings;
        r.health = dvi_default_health_settings();
        r.smallest_size = INFINITY;
        return r;
    }
    r.name = s->name;
    r.method = s->method;
    r.dt = s->dt;
    r.duration = s->duration;
    r.solver = s->solver;
    r.coulomb_check = s->coulomb_check;
    r.solver_settings = s->solver_settings;
    r.threads = s->threads;
    r.health = s->health;
    r.friction = s->friction;
    r.smallest_size = sc_smallest_size(s);
    return r;
}

dvi_status dvi_scene_apply_overrides(dvi_scene* s, const dvi_scene_overrides* o, dvi_scene_errors* errors)
{
    if (errors) memset(errors, 0, sizeof *errors);
    if (!s || !o) return base_error_set(DVI_ERR_INVALID_ARG, "dvi_scene_apply_overrides: scene or overrides is NULL");
    ctx c;
    memset(&c, 0, sizeof c);
    c.s = s; /* read by the check of the solver against the scene's blocks */
    char q[128], list[256];
    if (o->dt != 0.0) {
        if (!isfinite(o->dt)) sc_errf(&c, "--dt", "must be a finite number");
        else if (!(o->dt > 0.0)) sc_errf(&c, "--dt", "must be > 0 (got %g)", o->dt);
        else if (o->dt > 1.0) sc_errf(&c, "--dt", "must be at most 1 s (got %g)", o->dt);
    }
    if (o->duration != 0.0) {
        if (!isfinite(o->duration) || fabs(o->duration) > SC_MAX_NUMBER)
            sc_errf(&c, "--duration", "must be a finite number");
        else if (!(o->duration > 0.0)) sc_errf(&c, "--duration", "must be > 0 (got %g)", o->duration);
    }
    double dt = o->dt > 0.0 ? o->dt : s->dt, T = o->duration > 0.0 ? o->duration : s->duration;
    if (c.problems == 0 && T / dt > 1e12) sc_errf(&c, "--duration", "%g s is more than 1e12 steps of %g s", T, dt);
    if (o->solver && !sc_known_solver(o->solver, list, sizeof list))
        sc_errf(&c, "--solver", "unknown solver %s (one of %s)", sc_quote(q, sizeof q, o->solver), list);
    if (o->method) sc_check_method(&c, "--method", o->method);
    if (o->threads < 0 || o->threads > 1024) sc_errf(&c, "--threads", "must be in [0, 1024] (got %d)", o->threads);
    if (o->young_modulus != 0.0) {
        if (!isfinite(o->young_modulus) || fabs(o->young_modulus) > SC_MAX_NUMBER)
            sc_errf(&c, "--young-modulus", "must be a finite number");
        else if (!(o->young_modulus > 0.0)) sc_errf(&c, "--young-modulus", "must be > 0 (got %g)", o->young_modulus);
    }
    if (o->probe_interval != 0.0) {
        if (!isfinite(o->probe_interval) || fabs(o->probe_interval) > SC_MAX_NUMBER)
            sc_errf(&c, "--probe-interval", "must be a finite number");
        else if (!(o->probe_interval > 0.0))
            sc_errf(&c, "--probe-interval", "must be > 0 (got %g)", o->probe_interval);
        else if (o->probe_interval / dt > 2147483647.0)
            sc_errf(&c, "--probe-interval", "%g s is more than 2147483647 steps of %g s", o->probe_interval, dt);
    }
    dvi_friction_law law = s->friction;
    if (o->friction && !sc_friction_law(o->friction, &law))
        sc_errf(&c, "--friction", "must be \"ccp\" or \"coulomb\" (got %s)", sc_quote(q, sizeof q, o->friction));
    dvi_solver_settings ss = s->solver_settings;
    if (o->lemke_coulomb) ss.lemke.coulomb = true;
    if (c.problems == 0) /* the solver against the law and the scene's blocks, as they will be */
        sc_check_law(&c, o->solver ? "--solver" : "formulation.solver", o->method ? o->method : s->method,
                     o->solver ? o->solver : s->solver, &ss, law, o->friction ? "--friction" : "formulation.friction_law",
                     true);
    dvi_joint_solve js = s->joint_solve;
    if (o->joint_solve) {
        if (strcmp(o->joint_solve, "auto") == 0) js = DVI_JOINT_SOLVE_AUTO;
        else if (strcmp(o->joint_solve, "iterative") == 0) js = DVI_JOINT_SOLVE_ITERATIVE;
        else if (strcmp(o->joint_solve, "direct") == 0) js = DVI_JOINT_SOLVE_DIRECT;
        else
            sc_errf(&c, "--joint-solve", "must be \"auto\", \"iterative\" or \"direct\" (got %s)",
                    sc_quote(q, sizeof q, o->joint_solve));
    }
    if (c.problems > 0)
        return finish(&c, c.problems == c.unsupported ? DVI_ERR_UNSUPPORTED : DVI_ERR_INVALID_ARG, errors);
    s->friction = law;
    s->solver_settings.lemke.coulomb = ss.lemke.coulomb;
    char* solver = o->solver ? sc_dup_string(o->solver) : NULL;
    char* method = o->method ? sc_dup_string(o->method) : NULL;
    if ((o->solver && !solver) || (o->method && !method)) {
        free(solver);
        free(method);
        c.nomem = true;
        return finish(&c, DVI_ERR_NOMEM, errors);
    }
    if (o->dt > 0.0 && o->dt != s->dt) {
        /* A probe's `every` counts the scene's own steps: at another step it
         * samples at the same times (every × the scene's dt), so that runs of
         * one scene at different steps (DVI and DEM) record the same rows. */
        for (int32_t i = 0; i < s->probe_count; i++) {
            sc_probe* p = &s->probes[i];
            const double interval = p->every * s->dt;
            if (p->interval > 0.0 || p->every <= 0 || interval / o->dt > 2147483647.0) continue;
            p->interval = interval;
            p->every = 1;
        }
        s->dt = o->dt;
    }
    s->joint_solve = js;
    if (o->duration > 0.0) s->duration = o->duration;
    if (solver) {
        free(s->solver);
        s->solver = solver;
    }
    if (method) {
        free(s->method);
        s->method = method;
    }
    if (o->threads > 0) {
        s->threads = o->threads;
        s->solver_settings.threads = o->threads;
    }
    if (o->young_modulus > 0.0) {
        for (int32_t i = 0; i < s->shape_count; i++) s->shapes[i].material.young_modulus = o->young_modulus;
        for (int32_t i = 0; i < s->generator_count; i++) s->generators[i].material.young_modulus = o->young_modulus;
    }
    if (o->probe_interval > 0.0) /* by time: the same times at any step */
        for (int32_t i = 0; i < s->probe_count; i++) {
            s->probes[i].interval = o->probe_interval;
            s->probes[i].every = 1;
        }
    return finish(&c, DVI_OK, errors);
}

int32_t dvi_scene_generator_count(const dvi_scene* s)
{
    return s ? s->generator_count : 0;
}

dvi_status dvi_scene_get_generator(const dvi_scene* s, int32_t index, dvi_generator_info* out)
{
    if (!s || !out || index < 0 || index >= s->generator_count) return base_error_set(DVI_ERR_INVALID_ARG, "dvi_scene_get_generator: invalid argument (!s || !out || index < 0 || index >= s->generator_count)");
    const sc_generator* g = &s->generators[index];
    memset(out, 0, sizeof *out);
    out->name = g->name;
    out->type = "granular_bed";
    out->count = g->count;
    out->sites = g->sites;
    out->first_body = g->first_body;
    return DVI_OK;
}

int64_t dvi_scene_body_count(const dvi_scene* s)
{
    return s ? s->total_bodies : 0;
}
