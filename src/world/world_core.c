/* dvicontact — what every file of the world layer calls: the world's error
 * text, the names of its bodies in it, its thread count and a body id's
 * index. It calls nothing else of the layer, so the object store
 * (world.c), the steps and the queries all point down to it. */
#include "world_internal.h"

#include "error.h"

#include <stdarg.h>
#include <stdio.h>

#ifdef _OPENMP
#include <omp.h>
#endif

dvi_status wld_error(dvi_world* w, dvi_status st, const char* fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(w->last_error, sizeof w->last_error, fmt, ap);
    va_end(ap);
    if (w->def.log) w->def.log(w->def.log_user, DVI_LOG_ERROR, w->last_error);
    return base_error_set(st, w->last_error);
}

const char* dvi_world_last_error(const dvi_world* w)
{
    return w ? w->last_error : "world: NULL";
}

dvi_status dvi_world_set_body_namer(dvi_world* w, dvi_body_namer* namer, void* user)
{
    if (!w) return base_error_set(DVI_ERR_INVALID_ARG, "world: NULL");
    w->namer = namer;
    w->namer_user = namer ? user : NULL;
    return DVI_OK;
}

const char* wld_body_name(const dvi_world* w, int32_t b, char* out, size_t size)
{
    out[0] = '\0';
    if (w->namer) w->namer(w->namer_user, b, out, size);
    if (!out[0]) snprintf(out, size, "bodies[%d]", (int)b);
    return out;
}

int wld_threads(const dvi_world* w)
{
#ifdef _OPENMP
    const int t = w->def.solver_settings.threads;
    return t > 0 ? t : omp_get_max_threads();
#else
    (void)w;
    return 1;
#endif
}

int32_t wld_body_index(const dvi_world* w, dvi_body_id id)
{
    if (!w || id.index1 <= 0 || id.index1 > w->body_count || id.world != w->tag) return -1;
    if (w->bodies[id.index1 - 1].generation != id.generation) return -1;
    return id.index1 - 1;
}
