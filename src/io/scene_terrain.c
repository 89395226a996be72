/* dvicontact — the scene's "terrain" array: terrain models that act on the
 * scene's bodies through force elements (<dvi/world.h>), such as a
 * deformable soil or a wheel–terrain force law. Each entry names its
 * "model"; each model is one row of TERRAIN_KINDS below, with its reader and
 * builder in a file of its own (scene_terrain_<name>.c). */
#include "scene_internal.h"
#include "scene_parse.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The terrain models, one row each. */
static const sc_terrain_kind* const TERRAIN_KINDS[] = {
    &sc_terrain_bekker_wong,
    &sc_terrain_scm, /* the soil contact model (scene_terrain_scm.c) */
    NULL,
};

#define SC_MAX_TERRAIN 64
#define TERRAIN_KEYS_MAX 64

static const sc_terrain_kind* terrain_kind(const char* name)
{
    for (int k = 0; TERRAIN_KINDS[k]; k++)
        if (strcmp(TERRAIN_KINDS[k]->name, name) == 0) return TERRAIN_KINDS[k];
    return NULL;
}

static void parse_entry(ctx* c, const cJSON* v, const char* path, sc_terrain* t)
{
    if (!sc_is_object(c, v, path)) return;
    const char* names[TERRAIN_KEYS_MAX] = {NULL};
    int n = 0;
    for (int k = 0; TERRAIN_KINDS[k] && n < TERRAIN_KEYS_MAX - 1; k++) names[n++] = TERRAIN_KINDS[k]->name;
    int which = sc_enum_field(c, v, path, "model", true, names);
    if (which < 0) return;
    const sc_terrain_kind* kind = terrain_kind(names[which]);
    const char* keys[TERRAIN_KEYS_MAX] = {"model"};
    int nk = 1;
    for (int k = 0; kind->keys && kind->keys[k] && nk < TERRAIN_KEYS_MAX - 1; k++) keys[nk++] = kind->keys[k];
    sc_check_keys(c, v, path, keys, NULL, kind->name);
    const int64_t before = c->problems;
    t->def = kind->parse(c, v, path);
    if (t->def && (c->problems != before || c->nomem)) { /* an entry with errors is not kept */
        kind->free(t->def);
        t->def = NULL;
    }
    if (t->def) t->kind = kind;
}

void sc_parse_terrain(ctx* c, const cJSON* root)
{
    dvi_scene* s = c->s;
    int64_t n = 0;
    const cJSON* a = sc_array_field(c, root, "", "terrain", SC_MAX_TERRAIN, NULL, &n);
    if (!a || n == 0) return;
    s->terrains = calloc((size_t)n, sizeof *s->terrains);
    if (!s->terrains) {
        c->nomem = true;
        return;
    }
    s->terrain_count = (int32_t)n;
    char p[PATH_LEN];
    int64_t i = 0;
    for (const cJSON* it = a->child; it; it = it->next, i++) {
        parse_entry(c, it, sc_path_index(p, "terrain", i), &s->terrains[i]);
        if (c->nomem) return;
    }
}

void sc_free_terrain(dvi_scene* s)
{
    for (int32_t i = 0; i < s->terrain_count; i++)
        if (s->terrains[i].kind) s->terrains[i].kind->free(s->terrains[i].def);
    free(s->terrains);
    s->terrains = NULL;
    s->terrain_count = 0;
}

dvi_status sc_build_terrain(const dvi_scene* s, dvi_world* w, const dvi_body_id* bodies, int64_t body_count,
                            char* msg, size_t msg_size)
{
    for (int32_t i = 0; i < s->terrain_count; i++) {
        const sc_terrain* t = &s->terrains[i];
        if (!t->kind) continue; /* not reached: a scene with errors is not built */
        char why[512] = "";
        dvi_status st = t->kind->build(t->def, w, bodies, body_count, why, sizeof why);
        if (st != DVI_OK) {
            if (msg && msg_size) snprintf(msg, msg_size, "terrain[%d] (%s): %s", (int)i, t->kind->name, why);
            return st;
        }
    }
    return DVI_OK;
}
