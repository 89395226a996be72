/* dvicontact — the table of shape kinds (collision.h): one class per kind,
 * indexed by dvi_shape_type. A new kind adds its class here; its pair
 * routines, if it has any beyond the general ones, go in narrow.c. */
#include "collision.h"

#include <string.h>

extern const dvi_shape_class dvi_shape_class_sphere, dvi_shape_class_box, dvi_shape_class_capsule,
    dvi_shape_class_cylinder, dvi_shape_class_plane, dvi_shape_class_heightfield, dvi_shape_class_mesh,
    dvi_shape_class_ellipsoid;

#define KINDS (DVI_SHAPE_ELLIPSOID + 1)

const dvi_shape_class* const dvi_shape_classes[KINDS] = {
    [DVI_SHAPE_SPHERE] = &dvi_shape_class_sphere,
    [DVI_SHAPE_BOX] = &dvi_shape_class_box,
    [DVI_SHAPE_CAPSULE] = &dvi_shape_class_capsule,
    [DVI_SHAPE_CYLINDER] = &dvi_shape_class_cylinder,
    [DVI_SHAPE_PLANE] = &dvi_shape_class_plane,
    [DVI_SHAPE_HEIGHTFIELD] = &dvi_shape_class_heightfield,
    [DVI_SHAPE_MESH] = &dvi_shape_class_mesh,
    [DVI_SHAPE_ELLIPSOID] = &dvi_shape_class_ellipsoid,
};

const int dvi_shape_kinds = KINDS;
