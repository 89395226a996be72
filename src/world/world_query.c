/* dvicontact — enumeration of a world's bodies and what a frame writer needs
 * to draw them.
 *
 * Bodies are never destroyed, so the live bodies are the slots 0..count−1 in
 * creation order and dvi_world_body_at is a direct index. The per-body shape
 * summary (count, first type, bounding radius) is kept up to date as shapes
 * are attached (wld_body_note_shape, called by dvi_shape_create), so
 * dvi_body_get_info is O(1). The body's shapes are a list through
 * wld_shape.next in the order they were attached (dvi_body_get_shape).
 */
#include "world_internal.h"
#include "error.h"
#include "hash_rng.h"

#include "math3.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Radius of a sphere about the body's centre of mass enclosing shape s, or a
 * negative number for unbounded or static-only shapes (plane, height field,
 * mesh), which are left out of the bounding radius. */
static double shape_bound(const wld_shape* s)
{
    const col_shape_class* c = col_shape_class_of(s->type);
    if (!c || !c->bound) return -1.0;
    const col_geom g = wld_shape_local_geom(s);
    return c->bound(&g, v3_norm(s->lpos));
}

void wld_body_note_shape(dvi_world* w, int32_t bi, int32_t si)
{
    wld_body* b = &w->bodies[bi];
    const wld_shape* s = &w->shapes[si];
    if (b->shape_count == 0) {
        b->first_shape = s->type;
        b->shape_head = si;
    } else {
        w->shapes[b->shape_tail].next = si;
    }
    b->shape_tail = si;
    b->shape_count++;
    double r = shape_bound(s);
    if (r > b->bounding_radius) b->bounding_radius = r;
}

int32_t dvi_world_body_count(const dvi_world* w)
{
    return w ? w->body_count : 0;
}

dvi_status dvi_world_body_at(const dvi_world* w, int32_t index, dvi_body_id* out)
{
    if (out) memset(out, 0, sizeof *out);
    if (!w || !out) return base_error_set(DVI_ERR_INVALID_ARG, "dvi_world_body_at: world or out is NULL");
    if (index < 0 || index >= w->body_count)
        return base_error_setf(DVI_ERR_INVALID_ARG, "index: must be in [0, %d) (got %d)", (int)w->body_count, (int)index);
    out->index1 = index + 1;
    out->generation = w->bodies[index].generation;
    out->world = w->tag;
    return DVI_OK;
}

dvi_status dvi_body_get_info(const dvi_world* w, dvi_body_id id, dvi_body_info* out)
{
    if (out) memset(out, 0, sizeof *out);
    int32_t i = wld_body_index(w, id);
    if (!w || !out) return base_error_set(DVI_ERR_INVALID_ARG, "dvi_body_get_info: world or out is NULL");
    if (i < 0) return base_error_set(DVI_ERR_INVALID_ARG, "body: not an id of this world");
    const wld_body* b = &w->bodies[i];
    out->type = b->type;
    out->mass = b->type == DVI_BODY_DYNAMIC ? b->mass : 0.0;
    out->shape_count = b->shape_count;
    out->shape_type = b->shape_count > 0 ? b->first_shape : (dvi_shape_type)0;
    out->bounding_radius = b->bounding_radius;
    return DVI_OK;
}

/* Unit quaternion (w, x, y, z) of a rotation matrix R (row-major), the
 * largest of the four candidates for accuracy (Shepperd). */
static void m3_to_q(const double* R, double* q)
{
    const double tr = R[0] + R[4] + R[8];
    if (tr >= R[0] && tr >= R[4] && tr >= R[8]) {
        double s = 2.0 * sqrt(1.0 + tr);
        q[0] = 0.25 * s, q[1] = (R[7] - R[5]) / s, q[2] = (R[2] - R[6]) / s, q[3] = (R[3] - R[1]) / s;
    } else if (R[0] >= R[4] && R[0] >= R[8]) {
        double s = 2.0 * sqrt(1.0 + R[0] - R[4] - R[8]);
        q[0] = (R[7] - R[5]) / s, q[1] = 0.25 * s, q[2] = (R[1] + R[3]) / s, q[3] = (R[2] + R[6]) / s;
    } else if (R[4] >= R[8]) {
        double s = 2.0 * sqrt(1.0 + R[4] - R[0] - R[8]);
        q[0] = (R[2] - R[6]) / s, q[1] = (R[1] + R[3]) / s, q[2] = 0.25 * s, q[3] = (R[5] + R[7]) / s;
    } else {
        double s = 2.0 * sqrt(1.0 + R[8] - R[0] - R[4]);
        q[0] = (R[3] - R[1]) / s, q[1] = (R[2] + R[6]) / s, q[2] = (R[5] + R[7]) / s, q[3] = 0.25 * s;
    }
    if (q[0] < 0)
        for (int k = 0; k < 4; k++) q[k] = -q[k];
    const double n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    for (int k = 0; k < 4; k++) q[k] /= n;
}

dvi_status dvi_body_get_shape(const dvi_world* w, dvi_body_id id, int32_t index, dvi_shape_info* out)
{
    if (out) memset(out, 0, sizeof *out);
    if (!w || !out) return base_error_set(DVI_ERR_INVALID_ARG, "dvi_body_get_shape: world or out is NULL");
    int32_t bi = wld_body_index(w, id);
    if (bi < 0) return base_error_set(DVI_ERR_INVALID_ARG, "body: not an id of this world");
    const wld_body* b = &w->bodies[bi];
    if (index < 0 || index >= b->shape_count)
        return base_error_setf(DVI_ERR_INVALID_ARG, "index: must be in [0, %d) (got %d)", (int)b->shape_count,
                              (int)index);
    int32_t si = b->shape_head;
    for (int32_t k = 0; k < index; k++) si = w->shapes[si].next;
    const wld_shape* s = &w->shapes[si];
    out->type = s->type;
    const col_shape_class* c = col_shape_class_of(s->type);
    for (int p = 0; c && p < 2 && c->params[p].key; p++) {
        double r = s->radius, hl = s->half_length, h[3] = {s->half[0], s->half[1], s->half[2]};
        const double* v = col_shape_param_ptr(&c->params[p], &r, &hl, h);
        double* dst = col_shape_param_ptr(&c->params[p], &out->radius, &out->half_length, out->half_extents);
        for (int k = 0; k < col_shape_param_length(&c->params[p]); k++) dst[k] = v[k];
    }
    if (s->hfield) {
        out->nx = s->hfield->nx;
        out->ny = s->hfield->ny;
        out->dx = s->hfield->dx;
        out->dy = s->hfield->dy;
        out->heights = s->hfield->heights;
    }
    if (s->mesh) {
        out->vertex_count = s->mesh->vertex_count;
        out->triangle_count = s->mesh->triangle_count;
        out->vertices = s->mesh->vertices;
        out->triangles = s->mesh->triangles;
    }
    v3_copy(out->offset_position, s->lpos);
    memcpy(out->offset_rotation, s->lrot, sizeof out->offset_rotation);
    m3_to_q(s->lrot, out->offset_orientation);
    return DVI_OK;
}

/* The state record of body b: x, q, v, ω (dvi_world_state_hash, the ranks' exchanges). */
void wld_body_state13(const wld_body* b, double* out)
{
    memcpy(out, b->x, 3 * sizeof(double));
    memcpy(out + 3, b->q, 4 * sizeof(double));
    memcpy(out + 7, b->v, 3 * sizeof(double));
    memcpy(out + 10, b->w, 3 * sizeof(double));
}

dvi_status dvi_world_state_hash(const dvi_world* w, uint64_t* out)
{
    if (!w || !out) return base_error_set(DVI_ERR_INVALID_ARG, "dvi_world_state_hash: invalid argument (!w || !out)");
    uint64_t h = base_fnv1a_f64(DVI_FNV_OFFSET, &w->time, 1);
    for (int32_t i = 0; i < w->body_count; i++) {
        double s[13];
        wld_body_state13(&w->bodies[i], s);
        h = base_fnv1a_f64(h, s, 13);
    }
    *out = h;
    return DVI_OK;
}
