/* dvicontact — the scene's "bekker_wong" terrain model (docs/scene-format.md,
 * "Terrain"): Bekker–Wong wheels (<dvi/terrain.h>) on named wheel bodies
 * over a plane or a fixed body's height field. */
#include "dvi/terrain.h"
#include "scene_internal.h"
#include "scene_parse.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PI_BW 3.14159265358979323846

typedef struct bw_scene_def {
    dvi_bw_def def;          /* wheels NULL here: the scene's body indices below */
    int64_t* wheel_index;    /* [def.wheel_count] */
    int64_t ground_index;    /* −1: the plane */
} bw_scene_def;

static const char* const KEYS[] = {"wheels", "soil", "ground", "radius", "damping", "regularisation_speed", NULL};
static const char* const SOIL_KEYS[] = {"preset",         "k_c",  "k_phi", "n0",   "n1",   "cohesion",
                                        "friction_angle", "K_x",  "K_x_slope", "K_y", "K_y_slope", "a1",
                                        "a2",             "lambda", NULL};
static const char* const PRESETS[] = {"ishigami2007", "ding2011", NULL};
static const char* const GROUND_KEYS[] = {"height", "normal", "body", NULL};

static void parse_soil(ctx* c, const cJSON* v, const char* path, dvi_bw_soil* s)
{
    char p[PATH_LEN];
    if (cJSON_IsString(v)) {
        int k = sc_index_of(PRESETS, v->valuestring);
        if (k < 0) {
            char q[128];
            sc_errf(c, path, "unknown soil %s (presets: \"ishigami2007\", \"ding2011\"; or an object)",
                    sc_quote(q, sizeof q, v->valuestring));
            return;
        }
        *s = k == 0 ? dvi_bw_soil_ishigami2007() : dvi_bw_soil_ding2011();
        return;
    }
    if (!sc_is_object(c, v, path)) return;
    sc_check_keys(c, v, path, SOIL_KEYS, NULL, "soil");
    const bool preset = sc_member(v, "preset") != NULL;
    if (preset) {
        int k = sc_enum_field(c, v, path, "preset", true, PRESETS);
        if (k >= 0) *s = k == 0 ? dvi_bw_soil_ishigami2007() : dvi_bw_soil_ding2011();
    }
    /* without a preset, the soil's own keys are required */
    const bool req = !preset;
    double kx = s->K_x0, ky = s->K_y0;
    sc_num_field(c, v, path, "k_c", req, R_NONNEG, &s->k_c);
    sc_num_field(c, v, path, "k_phi", req, R_NONNEG, &s->k_phi);
    sc_num_field(c, v, path, "n0", req, R_POS, &s->n0);
    sc_num_field(c, v, path, "n1", false, R_NONNEG, &s->n1);
    sc_num_field(c, v, path, "cohesion", req, R_NONNEG, &s->cohesion);
    /* rad, as every angle of the format */
    double phi = s->friction_angle;
    if (sc_num_field(c, v, path, "friction_angle", req, R_NONNEG, &phi)) {
        if (!(phi < 0.5 * PI_BW))
            sc_errf(c, sc_path_key(p, path, "friction_angle"), "must be below pi/2 rad (got %g)", phi);
        else s->friction_angle = phi;
    }
    if (sc_num_field(c, v, path, "K_x", req, R_POS, &kx) && !sc_member(v, "K_y")) ky = kx;
    sc_num_field(c, v, path, "K_x_slope", false, R_NONNEG, &s->K_x1);
    sc_num_field(c, v, path, "K_y", false, R_POS, &ky);
    sc_num_field(c, v, path, "K_y_slope", false, R_NONNEG, &s->K_y1);
    s->K_x0 = kx;
    s->K_y0 = ky;
    sc_num_field(c, v, path, "a1", req, R_ANY, &s->a1);
    sc_num_field(c, v, path, "a2", req, R_ANY, &s->a2);
    if (sc_num_field(c, v, path, "lambda", req, R_NONNEG, &s->lambda) && s->lambda > 2.0)
        sc_errf(c, sc_path_key(p, path, "lambda"), "must be in [0, 2] (got %g)", s->lambda);
    if (s->n0 + s->n1 > 4.0) sc_errf(c, sc_path_key(p, path, "n1"), "n0 + n1 must be at most 4");
    if (s->k_c + s->k_phi <= 0.0 && (sc_member(v, "k_c") || sc_member(v, "k_phi")))
        sc_errf(c, sc_path_key(p, path, "k_phi"), "k_c and k_phi must not both be 0");
}

static void* parse(ctx* c, const cJSON* v, const char* path)
{
    bw_scene_def* d = calloc(1, sizeof *d);
    if (!d) {
        c->nomem = true;
        return NULL;
    }
    d->def = dvi_default_bw_def();
    d->ground_index = -1;
    char p[PATH_LEN], q[PATH_LEN];
    int64_t n = 0;
    const cJSON* wheels = sc_array_field(c, v, path, "wheels", DVI_BW_MAX_WHEELS, NULL, &n);
    if (wheels && n == 0) sc_errf(c, sc_path_key(p, path, "wheels"), "must name at least one wheel body");
    if (wheels && n > 0) {
        d->wheel_index = calloc((size_t)n, sizeof *d->wheel_index);
        if (!d->wheel_index) {
            c->nomem = true;
            free(d);
            return NULL;
        }
        d->def.wheel_count = (int32_t)n;
        int64_t i = 0;
        for (const cJSON* it = wheels->child; it; it = it->next, i++) {
            sc_path_index(q, sc_path_key(p, path, "wheels"), i);
            d->wheel_index[i] = sc_body_ref(c, it, q);
            for (int64_t k = 0; k < i && d->wheel_index[i] >= 0; k++)
                if (d->wheel_index[k] == d->wheel_index[i]) sc_errf(c, q, "names the same wheel as wheels[%lld]",
                                                                   (long long)k);
        }
    }
    const cJSON* soil = sc_member(v, "soil");
    if (!soil) sc_errf(c, path, "missing key \"soil\" (a preset name or an object)");
    else parse_soil(c, soil, sc_path_key(p, path, "soil"), &d->def.soil);
    const cJSON* g = sc_member(v, "ground");
    sc_path_key(p, path, "ground");
    if (!g) sc_errf(c, path, "missing key \"ground\" ({\"height\": z0} or {\"body\": a fixed body with a height field})");
    else if (sc_is_object(c, g, p)) {
        sc_check_keys(c, g, p, GROUND_KEYS, NULL, "ground");
        const cJSON* body = sc_member(g, "body");
        if (body) {
            if (sc_member(g, "height") || sc_member(g, "normal"))
                sc_errf(c, p, "give either \"body\" (a height field) or \"height\" and \"normal\" (a plane)");
            int64_t b = sc_body_ref(c, body, sc_path_key(q, p, "body"));
            if (b >= 0) {
                if (b >= c->s->body_count || c->s->bodies[b].type != DVI_BODY_FIXED)
                    sc_errf(c, q, "must name a fixed body with a height-field shape");
                else {
                    const sc_body* sb = &c->s->bodies[b];
                    int32_t k = 0;
                    while (k < sb->shape_count && c->s->shapes[sb->shape_first + k].type != DVI_SHAPE_HEIGHTFIELD)
                        k++;
                    if (k == sb->shape_count) sc_errf(c, q, "body has no height-field shape");
                    else d->def.ground_shape = k;
                }
            }
            d->ground_index = b;
            d->def.ground_set = true;
        } else {
            sc_num_field(c, g, p, "height", true, R_ANY, &d->def.plane_height);
            if (sc_vec_field(c, g, p, "normal", false, 3, d->def.plane_normal)) {
                const double *nv = d->def.plane_normal, nn = sqrt(nv[0] * nv[0] + nv[1] * nv[1] + nv[2] * nv[2]);
                if (!(nn > 0.0)) sc_errf(c, sc_path_key(q, p, "normal"), "must not be zero");
            }
        }
    }
    sc_num_field(c, v, path, "radius", false, R_NONNEG, &d->def.radius);
    sc_num_field(c, v, path, "damping", false, R_NONNEG, &d->def.damping);
    sc_num_field(c, v, path, "regularisation_speed", false, R_POS, &d->def.regularisation_speed);
    /* the wheels: dynamic bodies with a cylinder */
    for (int32_t i = 0; i < d->def.wheel_count && d->wheel_index; i++) {
        const int64_t b = d->wheel_index[i];
        if (b < 0 || b >= c->s->body_count) continue; /* generated bodies: checked when built */
        const sc_body* sb = &c->s->bodies[b];
        bool cyl = false;
        for (int32_t k = 0; k < sb->shape_count; k++)
            cyl = cyl || c->s->shapes[sb->shape_first + k].type == DVI_SHAPE_CYLINDER;
        sc_path_index(q, sc_path_key(p, path, "wheels"), i);
        if (sb->type != DVI_BODY_DYNAMIC || !cyl) sc_errf(c, q, "must name a dynamic body with a cylinder shape");
    }
    return d;
}

static dvi_status build(const void* def, dvi_world* w, const dvi_body_id* bodies, int64_t body_count, char* msg,
                        size_t msg_size)
{
    const bw_scene_def* d = def;
    dvi_bw_def bd = d->def;
    dvi_body_id* ids;
    dvi_status st = sc_terrain_body_ids(d->wheel_index, bd.wheel_count, "wheels", bodies, body_count, &ids, msg,
                                        msg_size);
    if (st != DVI_OK) return st;
    bd.wheels = ids;
    if (bd.ground_set) bd.ground_body = bodies[d->ground_index];
    st = dvi_world_add_bekker_wong(w, &bd, NULL);
    free(ids);
    if (st != DVI_OK) snprintf(msg, msg_size, "%s", dvi_error_message());
    return st;
}

static void free_def(void* def)
{
    bw_scene_def* d = def;
    if (!d) return;
    free(d->wheel_index);
    free(d);
}

const sc_terrain_kind sc_terrain_bekker_wong = {
    .name = "bekker_wong",
    .keys = KEYS,
    .parse = parse,
    .build = build,
    .free = free_def,
};
