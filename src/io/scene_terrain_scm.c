/* dvicontact — the scene's "scm" terrain model: a deformable soil patch
 * (the soil contact model, <dvi/terrain.h>), read from a "terrain" entry
 * and built as the world's force element. Every key is checked here with
 * the error naming it; docs/scene-format.md lists them. */
#include "dvi/terrain.h"

#include "scene_internal.h"
#include "scene_parse.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PI 3.14159265358979323846

static const char* const SCM_KEYS[] = {"origin",         "orientation",    "size",         "spacing",
                                       "heights",        "k_phi",          "k_c",          "n",
                                       "cohesion",       "friction_angle", "janosi_shear", "elastic_stiffness",
                                       "damping",        "max_nodes",      "bodies",       "bulldozing",
                                       "erosion_angle",  "erosion_iterations", "erosion_propagations", NULL};

#define SC_MAX_SCM_BODIES 4096

typedef struct scm_entry {
    dvi_scm_def def;
    double* heights;
    int64_t* bodies; /* scene body indices */
    int32_t body_count;
} scm_entry;

static void scm_free(void* p)
{
    scm_entry* e = p;
    if (!e) return;
    free(e->heights);
    free(e->bodies);
    free(e);
}

static void parse_heights(ctx* c, const cJSON* v, const char* path, scm_entry* e, int64_t nx, int64_t ny)
{
    const cJSON* h = sc_member(v, "heights");
    if (!h) return;
    char p[PATH_LEN];
    sc_path_key(p, path, "heights");
    if (!cJSON_IsArray(h)) {
        sc_errf(c, p, "must be an array of (nx + 1)·(ny + 1) numbers (got %s)", sc_type_name(h));
        return;
    }
    if (nx <= 0 || ny <= 0) return; /* size or spacing reported */
    const int64_t want = (nx + 1) * (ny + 1);
    if (want > SC_MAX_HEIGHTS) {
        sc_errf(c, p, "the grid has %lld nodes, more than the limit of %d for initial heights", (long long)want,
                SC_MAX_HEIGHTS);
        return;
    }
    int64_t n = sc_array_size(h);
    if (n != want) {
        sc_errf(c, p, "must have (nx + 1)·(ny + 1) = %lld elements, one per node (got %lld)", (long long)want,
                (long long)n);
        return;
    }
    if (!sc_as_number_array(c, h, p, n, &e->heights)) return;
    e->def.heights = e->heights;
}

static void parse_bodies(ctx* c, const cJSON* v, const char* path, scm_entry* e)
{
    int64_t n = 0;
    const cJSON* a = sc_array_field(c, v, path, "bodies", SC_MAX_SCM_BODIES, NULL, &n);
    if (!a || n == 0) return;
    e->bodies = calloc((size_t)n, sizeof *e->bodies);
    if (!e->bodies) {
        c->nomem = true;
        return;
    }
    char p[PATH_LEN], pe[PATH_LEN];
    sc_path_key(p, path, "bodies");
    int64_t i = 0;
    for (const cJSON* it = a->child; it; it = it->next, i++) {
        int64_t b = sc_body_ref(c, it, sc_path_index(pe, p, i));
        e->bodies[i] = b;
        if (b < 0) continue;
        for (int64_t k = 0; k < i; k++)
            if (e->bodies[k] == b) sc_errf(c, pe, "names the same body as bodies[%lld]", (long long)k);
        if (b < c->s->body_count && c->s->bodies[b].type == DVI_BODY_FIXED)
            sc_errf(c, pe, "a fixed body: the soil acts on dynamic and kinematic bodies");
    }
    e->body_count = (int32_t)n;
}

static void* scm_parse(ctx* c, const cJSON* v, const char* path)
{
    scm_entry* e = calloc(1, sizeof *e);
    if (!e) {
        c->nomem = true;
        return NULL;
    }
    dvi_scm_def* d = &e->def;
    *d = dvi_default_scm_def();
    char p[PATH_LEN], t1[32], t2[32];
    sc_vec_field(c, v, path, "origin", false, 3, d->origin);
    sc_quat_field(c, v, path, "orientation", d->orientation);
    double size[2] = {0, 0};
    bool have_size = false;
    if (sc_vec_field(c, v, path, "size", true, 2, size)) {
        have_size = true;
        for (int k = 0; k < 2; k++)
            if (!(size[k] > 0.0)) {
                sc_errf(c, sc_path_key(p, path, "size"), "must be > 0 (got %s)", sc_num_text(t1, size[k]));
                have_size = false;
            }
        d->size[0] = size[0], d->size[1] = size[1];
    }
    sc_num_field(c, v, path, "spacing", false, R_POS, &d->spacing);
    int64_t nx = 0, ny = 0;
    if (have_size && d->spacing > 0.0) {
        for (int k = 0; k < 2; k++) {
            double cells = floor(size[k] / d->spacing + 0.5);
            sc_path_key(p, path, "spacing");
            if (cells < 1.0)
                sc_errf(c, p, "larger than size[%d] (%s m)", k, sc_num_text(t1, size[k]));
            else if (cells + 1.0 > DVI_SCM_MAX_SIDE)
                sc_errf(c, p, "gives %.0f nodes along size[%d], more than the limit of %d", cells + 1.0, k,
                        DVI_SCM_MAX_SIDE);
            else
                *(k == 0 ? &nx : &ny) = (int64_t)cells;
        }
        if (nx == 0 || ny == 0) nx = ny = 0;
    }
    parse_heights(c, v, path, e, nx, ny);
    sc_num_field(c, v, path, "k_phi", false, R_POS, &d->k_phi);
    sc_num_field(c, v, path, "k_c", false, R_NONNEG, &d->k_c);
    if (sc_num_field(c, v, path, "n", false, R_POS, &d->n) && d->n > 3.0)
        sc_errf(c, sc_path_key(p, path, "n"), "must be in (0, 3] (got %s)", sc_num_text(t1, d->n));
    sc_num_field(c, v, path, "cohesion", false, R_NONNEG, &d->cohesion);
    if (sc_num_field(c, v, path, "friction_angle", false, R_NONNEG, &d->friction_angle) &&
        d->friction_angle >= 0.5 * PI)
        sc_errf(c, sc_path_key(p, path, "friction_angle"), "must be in [0, pi/2) rad (got %s)",
                sc_num_text(t1, d->friction_angle));
    sc_num_field(c, v, path, "janosi_shear", false, R_POS, &d->janosi_shear);
    if (sc_num_field(c, v, path, "elastic_stiffness", false, R_POS, &d->elastic_stiffness) &&
        !(d->elastic_stiffness > d->k_phi))
        sc_errf(c, sc_path_key(p, path, "elastic_stiffness"), "must exceed k_phi (%s Pa/m^n; got %s Pa/m)",
                sc_num_text(t1, d->k_phi), sc_num_text(t2, d->elastic_stiffness));
    else if (!(d->elastic_stiffness > d->k_phi))
        sc_errf(c, sc_path_key(p, path, "k_phi"), "must be below elastic_stiffness (%s Pa/m; got %s Pa/m^n)",
                sc_num_text(t1, d->elastic_stiffness), sc_num_text(t2, d->k_phi));
    sc_num_field(c, v, path, "damping", false, R_NONNEG, &d->damping);
    int64_t mx = 0;
    if (sc_int_field(c, v, path, "max_nodes", false, 1, DVI_SCM_MAX_NODES_LIMIT, &mx)) d->max_nodes = mx;
    sc_bool_field(c, v, path, "bulldozing", &d->bulldozing);
    if (sc_num_field(c, v, path, "erosion_angle", false, R_POS, &d->erosion_angle) && d->erosion_angle >= 0.5 * PI)
        sc_errf(c, sc_path_key(p, path, "erosion_angle"), "must be in (0, pi/2) rad (got %s)",
                sc_num_text(t1, d->erosion_angle));
    if (sc_int_field(c, v, path, "erosion_iterations", false, 0, 100, &mx)) d->erosion_iterations = (int32_t)mx;
    if (sc_int_field(c, v, path, "erosion_propagations", false, 0, 1000, &mx)) d->erosion_propagations = (int32_t)mx;
    if (!d->bulldozing) {
        static const char* const ONLY[] = {"erosion_angle", "erosion_iterations", "erosion_propagations", NULL};
        for (int k = 0; ONLY[k]; k++)
            if (sc_member(v, ONLY[k])) sc_errf(c, sc_path_key(p, path, ONLY[k]), "needs \"bulldozing\": true");
    }
    parse_bodies(c, v, path, e);
    return e;
}

static dvi_status scm_build(const void* def, dvi_world* w, const dvi_body_id* bodies, int64_t body_count, char* msg,
                            size_t msg_size)
{
    const scm_entry* e = def;
    dvi_scm_def d = e->def;
    dvi_body_id* ids;
    dvi_status st = sc_terrain_body_ids(e->bodies, e->body_count, "bodies", bodies, body_count, &ids, msg, msg_size);
    if (st != DVI_OK) return st;
    if (e->body_count > 0) {
        d.bodies = ids;
        d.body_count = e->body_count;
    }
    st = dvi_scm_create(w, &d, NULL);
    if (st != DVI_OK) snprintf(msg, msg_size, "%s", dvi_error_message());
    free(ids);
    return st;
}

const sc_terrain_kind sc_terrain_scm = {
    .name = "scm",
    .keys = SCM_KEYS,
    .parse = scm_parse,
    .build = scm_build,
    .free = scm_free,
};
