/* dvicontact — dvi_world_step: checks the step length and runs the world's
 * force elements (force_element.c) and the world's method, the DVI step
 * (step_dvi.c) or the DEM step (step_dem.c). Apart from
 * the object store (world.c), so that the steps, which call the layer's
 * common files, are called from here and call nothing back. */
#include "world_internal.h"

#include "dem.h"
#include "driver.h"
#include "error.h"

#include <math.h>
#include <time.h>

/* CPU seconds of the process (all its threads); 0 where there is no such clock. */
static double process_cpu(void)
{
#ifdef CLOCK_PROCESS_CPUTIME_ID
    struct timespec ts;
    if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) == 0) return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
#endif
    return 0.0;
}

dvi_status dvi_world_step(dvi_world* w, double h)
{
    if (!w) return base_error_set(DVI_ERR_INVALID_ARG, "world: NULL");
    if (!(h > 0.0) || !isfinite(h)) return wld_error(w, DVI_ERR_INVALID_ARG, "step: h must be > 0 (got %g)", h);
    /* the step's threads: those asked for, or one while the fallback finds
     * one faster (world_internal.h, wld_thread_guard) */
    const int full = wld_threads_asked(w);
    const int nt = wld_guard_threads(&w->guard, full, w->def.thread_fallback);
    w->guard.threads = nt;
    ccp_solver_limit_threads(w->solver, nt);
    ccp_solver_limit_threads(w->check_solver, nt);
    const bool timed = full > 1 && w->def.thread_fallback;
    const double wall0 = timed ? wld_step_clock() : 0.0, cpu0 = timed ? process_cpu() : 0.0;
    dvi_status st = wld_force_elements_apply(w, h);
    if (st == DVI_OK) st = w->def.method == DVI_METHOD_DEM ? wld_step_dem(w, h) : wld_step_dvi(w, h);
    if (timed && st >= 0) wld_guard_note(&w->guard, full, nt, wld_step_clock() - wall0, process_cpu() - cpu0);
    w->stats.threads = nt;
    w->stats.fallback_steps = w->guard.fewer;
    return st;
}
