/* dvicontact — force elements (dvi_force_element_class, world.h): models
 * that add forces to bodies at the start of every step (the soil and
 * wheel–terrain models of the terrain layer, or a caller's own). The world
 * keeps them in a list, zeroes the bodies' step forces, and runs them before
 * either step; the steps add the step forces to the applied ones
 * (wld_step_free_velocities), the health monitor counts their work, and the
 * saved state carries the elements' own state (world_state.c). */
#include "alloc.h"
#include "error.h"
#include "world_internal.h"

#include <math.h>
#include <string.h>

#define ELEMENT_NAME_MAX 63

dvi_status dvi_world_add_force_element(dvi_world* w, const dvi_force_element_class* cls, void* self, int32_t* index)
{
    if (index) *index = -1;
    if (!w) return base_error_set(DVI_ERR_INVALID_ARG, "dvi_world_add_force_element: world is NULL");
    if (!cls) return wld_error(w, DVI_ERR_INVALID_ARG, "force element: class is NULL");
    if (!cls->name || !cls->name[0] || strlen(cls->name) > ELEMENT_NAME_MAX)
        return wld_error(w, DVI_ERR_INVALID_ARG, "force element: name must be 1 to %d bytes",
                               ELEMENT_NAME_MAX);
    if (!cls->apply) return wld_error(w, DVI_ERR_INVALID_ARG, "force element '%s': apply is NULL", cls->name);
    if (cls->state_size && (!cls->save || !cls->load))
        return wld_error(w, DVI_ERR_INVALID_ARG, "force element '%s': state_size needs save and load",
                               cls->name);
    size_t cap = (size_t)w->element_cap;
    if (!base_mem_grow(&w->alloc, (void**)&w->elements, &cap, (size_t)w->element_count + 1, sizeof *w->elements, 4))
        return wld_error(w, DVI_ERR_NOMEM, "force element: out of memory");
    w->element_cap = (int32_t)cap;
    w->elements[w->element_count] = (wld_force_element_rec){cls, self};
    if (index) *index = w->element_count;
    w->element_count++;
    return DVI_OK;
}

int32_t dvi_world_force_element_count(const dvi_world* w)
{
    return w ? w->element_count : 0;
}

void* dvi_world_force_element(const dvi_world* w, int32_t i, const dvi_force_element_class** cls)
{
    if (cls) *cls = NULL;
    if (!w || i < 0 || i >= w->element_count) return NULL;
    if (cls) *cls = w->elements[i].cls;
    return w->elements[i].self;
}

dvi_status dvi_body_add_step_force(dvi_world* w, dvi_body_id id, const double force[3], const double torque[3])
{
    if (!w) return base_error_set(DVI_ERR_INVALID_ARG, "dvi_body_add_step_force: world is NULL");
    int32_t i = wld_body_index(w, id);
    if (i < 0) return wld_error(w, DVI_ERR_INVALID_ARG, "step force: invalid body id");
    for (int k = 0; k < 3; k++)
        if ((force && !isfinite(force[k])) || (torque && !isfinite(torque[k]))) {
            char name[64];
            return wld_error(w, DVI_ERR_INVALID_ARG, "step force on %s: not finite",
                                   wld_body_name(w, i, name, sizeof name));
        }
    wld_body* b = &w->bodies[i];
    for (int k = 0; k < 3; k++) {
        if (force) b->step_force[k] += force[k];
        if (torque) b->step_torque[k] += torque[k];
    }
    return DVI_OK;
}

dvi_status dvi_body_get_step_force(const dvi_world* w, dvi_body_id id, double force[3], double torque[3])
{
    if (!w) return base_error_set(DVI_ERR_INVALID_ARG, "dvi_body_get_step_force: world is NULL");
    int32_t i = wld_body_index(w, id);
    if (i < 0) return base_error_set(DVI_ERR_INVALID_ARG, "step force: invalid body id");
    const wld_body* b = &w->bodies[i];
    if (force) memcpy(force, b->step_force, sizeof b->step_force);
    if (torque) memcpy(torque, b->step_torque, sizeof b->step_torque);
    return DVI_OK;
}

dvi_status wld_force_elements_apply(dvi_world* w, double h)
{
    if (w->element_count == 0) return DVI_OK;
    for (int32_t i = 0; i < w->body_count; i++) {
        memset(w->bodies[i].step_force, 0, sizeof w->bodies[i].step_force);
        memset(w->bodies[i].step_torque, 0, sizeof w->bodies[i].step_torque);
    }
    for (int32_t e = 0; e < w->element_count; e++) {
        const wld_force_element_rec* r = &w->elements[e];
        dvi_error_clear();
        dvi_status st = r->cls->apply(r->self, w, h);
        if (st != DVI_OK) {
            const char* why = dvi_error_message();
            return wld_error(w, st < 0 ? st : DVI_ERR_INVALID_ARG, "force element %d (%s): %s", (int)e,
                                   r->cls->name, why && why[0] ? why : dvi_status_string(st));
        }
    }
    return DVI_OK;
}

void wld_force_elements_free(dvi_world* w)
{
    for (int32_t e = 0; e < w->element_count; e++)
        if (w->elements[e].cls->destroy) w->elements[e].cls->destroy(w->elements[e].self);
    base_mem_free(&w->alloc, w->elements);
    w->elements = NULL;
    w->element_count = w->element_cap = 0;
}
