/* dvicontact — the scenes' string → index map (scene_internal.h): open
 * addressing with linear probing, FNV-1a hashes, keys borrowed. It indexes
 * the names of materials, bodies, generators, joints and probes while a
 * scene is read, and a model's names (scene_model.c). Also a list of scene
 * bodies mapped to a world's ids (sc_terrain_body_ids).
 */
#include "scene_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint32_t hash_string(const char* s)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 16777619u;
    }
    return h;
}

bool sc_map_put(sc_map* m, const char* key, int32_t value)
{
    if (2 * ((uint64_t)m->count + 1) > m->cap) {
        uint32_t cap = m->cap ? 2 * m->cap : 16;
        const char** keys = calloc(cap, sizeof *keys);
        int32_t* values = malloc(cap * sizeof *values);
        if (!keys || !values) {
            free(keys);
            free(values);
            return false;
        }
        for (uint32_t i = 0; i < m->cap; i++) {
            if (!m->keys[i]) continue;
            uint32_t j = hash_string(m->keys[i]) & (cap - 1);
            while (keys[j]) j = (j + 1) & (cap - 1);
            keys[j] = m->keys[i];
            values[j] = m->values[i];
        }
        free(m->keys);
        free(m->values);
        m->keys = keys;
        m->values = values;
        m->cap = cap;
    }
    uint32_t j = hash_string(key) & (m->cap - 1);
    while (m->keys[j]) {
        if (strcmp(m->keys[j], key) == 0) {
            m->values[j] = value;
            return true;
        }
        j = (j + 1) & (m->cap - 1);
    }
    m->keys[j] = key;
    m->values[j] = value;
    m->count++;
    return true;
}

int32_t sc_map_get(const sc_map* m, const char* key)
{
    if (!m->cap || !key) return -1;
    uint32_t j = hash_string(key) & (m->cap - 1);
    while (m->keys[j]) {
        if (strcmp(m->keys[j], key) == 0) return m->values[j];
        j = (j + 1) & (m->cap - 1);
    }
    return -1;
}

void sc_map_free(sc_map* m)
{
    free(m->keys);
    free(m->values);
    memset(m, 0, sizeof *m);
}

dvi_status sc_terrain_body_ids(const int64_t* index, int32_t n, const char* list, const dvi_body_id* bodies,
                               int64_t body_count, dvi_body_id** ids, char* msg, size_t msg_size)
{
    *ids = NULL;
    if (n <= 0) return DVI_OK;
    dvi_body_id* t = malloc((size_t)n * sizeof *t);
    if (!t) {
        snprintf(msg, msg_size, "out of memory");
        return DVI_ERR_NOMEM;
    }
    for (int32_t k = 0; k < n; k++) {
        if (index[k] < 0 || index[k] >= body_count) { /* not reached: checked when read */
            free(t);
            snprintf(msg, msg_size, "%s[%d]: no such body", list, (int)k);
            return DVI_ERR_INVALID_ARG;
        }
        t[k] = bodies[index[k]];
    }
    *ids = t;
    return DVI_OK;
}
