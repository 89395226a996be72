/* Shared test helpers that build worlds (test_util.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>

#include "dvi/world.h"
#include "test_util.h"

dvi_shape_def test_plane_def(double theta)
{
    dvi_shape_def sd = dvi_default_shape_def();
    sd.type = DVI_SHAPE_PLANE;
    sd.offset_orientation[0] = cos(theta / 2);
    sd.offset_orientation[1] = sin(theta / 2);
    return sd;
}

dvi_body_id test_fixed_plane(dvi_world* w, const dvi_shape_def* plane)
{
    dvi_body_def bd = dvi_default_body_def();
    bd.type = DVI_BODY_FIXED;
    dvi_body_id g;
    assert_int_equal(dvi_body_create(w, &bd, &g), DVI_OK);
    dvi_shape_def sd = dvi_default_shape_def();
    if (plane) sd = *plane;
    sd.type = DVI_SHAPE_PLANE;
    dvi_shape_id s;
    assert_int_equal(dvi_shape_create(w, g, &sd, &s), DVI_OK);
    return g;
}
