/* dvicontact — dvi_world_step: checks the step length and runs the world's
 * force elements (force_element.c) and the world's method, the DVI step
 * (step_dvi.c) or the DEM step (step_dem.c). Apart from
 * the object store (world.c), so that the steps, which call the layer's
 * common files, are called from here and call nothing back. */
#include "world_internal.h"

#include "dem.h"
#include "error.h"

#include <math.h>

dvi_status dvi_world_step(dvi_world* w, double h)
{
    if (!w) return base_error_set(DVI_ERR_INVALID_ARG, "world: NULL");
    if (!(h > 0.0) || !isfinite(h)) return wld_error(w, DVI_ERR_INVALID_ARG, "step: h must be > 0 (got %g)", h);
    dvi_status st = wld_force_elements_apply(w, h);
    if (st != DVI_OK) return st;
    return w->def.method == DVI_METHOD_DEM ? wld_step_dem(w, h) : wld_step_dvi(w, h);
}
