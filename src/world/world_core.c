/* dvicontact — what every file of the world layer calls: the world's error
 * text, the names of its bodies in it, its thread count and a body id's
 * index. It calls nothing else of the layer, so the object store
 * (world.c), the steps and the queries all point down to it. */
#include "world_internal.h"

#include "error.h"

#include <math.h>
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

int wld_threads_asked(const dvi_world* w)
{
#ifdef _OPENMP
    const int t = w->def.solver_settings.threads;
    return t > 0 ? t : omp_get_max_threads();
#else
    (void)w;
    return 1;
#endif
}

int wld_threads(const dvi_world* w)
{
    const int t = wld_threads_asked(w);
    return w->guard.threads > 0 && w->guard.threads < t ? w->guard.threads : t;
}

int wld_guard_threads(const wld_thread_guard* g, int full, bool on)
{
    if (full <= 1 || !on) return full;
    return g->one != g->trial ? 1 : full;
}

void wld_guard_note(wld_thread_guard* g, int full, int threads, double wall, double cpu)
{
    if (full <= 1) return;
    if (threads < full) g->fewer++;
    if (!(wall > 0.0) || !isfinite(wall)) return;
    if (g->steps++ == 0 || g->interval == 0) { /* the first step (allocations): a mean to start from */
        g->mean = wall;
        g->interval = GUARD_FIRST;
        return;
    }
    if (g->trial) { /* the other count: keep it if it ran the faster */
        g->trial = false;
        if (wall < 0.9 * g->mean) {
            g->one = !g->one;
            g->mean = wall;
            g->interval = GUARD_FIRST;
        } else {
            g->interval = 2 * g->interval < GUARD_LAST ? 2 * g->interval : GUARD_LAST;
        }
        g->countdown = g->interval;
        return;
    }
    const bool slower = wall > 2.0 * g->mean; /* a sudden change of the machine's load */
    g->mean += 0.25 * (wall - g->mean);
    if (g->countdown > 0) g->countdown--;
    const bool due = g->countdown == 0 || slower;
    if (!g->one) {
        if (due && cpu < GUARD_EFFICIENCY * full * wall) g->trial = true;
    } else if (due && cpu < GUARD_EFFICIENCY * wall) { /* not even one thread ran all the time: */
        g->interval = 2 * g->interval < GUARD_LAST ? 2 * g->interval : GUARD_LAST; /* no core is free */
        g->countdown = g->interval;
    } else if (due) {
        g->trial = true;
    }
}

int32_t wld_body_index(const dvi_world* w, dvi_body_id id)
{
    if (!w || id.index1 <= 0 || id.index1 > w->body_count || id.world != w->tag) return -1;
    if (w->bodies[id.index1 - 1].generation != id.generation) return -1;
    return id.index1 - 1;
}
