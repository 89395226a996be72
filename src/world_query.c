/* dvicontact — enumeration of a world's bodies and what a frame writer needs
 * to draw them.
 *
 * Bodies are never destroyed, so the live bodies are the slots 0..count−1 in
 * creation order and dvi_world_body_at is a direct index. The per-body shape
 * summary (count, first type, bounding radius) is kept up to date as shapes
 * are attached (dvi_body_note_shape, called by dvi_shape_create), so
 * dvi_body_get_info is O(1).
 */
#include "world_internal.h"

#include "math3.h"

#include <math.h>
#include <string.h>

/* Radius of a sphere about the body's centre of mass enclosing shape s, or a
 * negative number for unbounded or static-only shapes (plane, height field,
 * mesh), which are left out of the bounding radius. */
static double shape_bound(const dvi_shape* s)
{
    double off = v3_norm(s->lpos);
    switch (s->type) {
    case DVI_SHAPE_SPHERE:
        return off + s->radius;
    case DVI_SHAPE_BOX:
        return off + v3_norm(s->half);
    case DVI_SHAPE_CAPSULE:
        return off + s->half_length + s->radius;
    case DVI_SHAPE_CYLINDER:
        return off + sqrt(s->radius * s->radius + s->half_length * s->half_length);
    default:
        return -1.0;
    }
}

void dvi_body_note_shape(dvi_body* b, const dvi_shape* s)
{
    if (b->shape_count == 0) b->first_shape = s->type;
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
    if (!w || !out || index < 0 || index >= w->body_count) return DVI_ERR_INVALID_ARG;
    out->index1 = index + 1;
    out->generation = w->bodies[index].generation;
    out->world = w->tag;
    return DVI_OK;
}

dvi_status dvi_body_get_info(const dvi_world* w, dvi_body_id id, dvi_body_info* out)
{
    if (out) memset(out, 0, sizeof *out);
    int32_t i = dvi_world_body_index(w, id);
    if (i < 0 || !out) return DVI_ERR_INVALID_ARG;
    const dvi_body* b = &w->bodies[i];
    out->type = b->type;
    out->mass = b->type == DVI_BODY_DYNAMIC ? b->mass : 0.0;
    out->shape_count = b->shape_count;
    out->shape_type = b->shape_count > 0 ? b->first_shape : (dvi_shape_type)0;
    out->bounding_radius = b->bounding_radius;
    return DVI_OK;
}
