/* dvicontact — the table of shape kinds (collision.h): one class per kind,
 * indexed by dvi_shape_type. A new kind adds its class here; its pair
 * routines, if it has any beyond the general ones, go in narrow.c. */
#include "collision.h"

#include <string.h>

extern const col_shape_class col_shape_class_sphere, col_shape_class_box, col_shape_class_capsule,
    col_shape_class_cylinder, col_shape_class_plane, col_shape_class_heightfield, col_shape_class_mesh,
    col_shape_class_ellipsoid;

#define KINDS (DVI_SHAPE_ELLIPSOID + 1)

const col_shape_class* const col_shape_classes[KINDS] = {
    [DVI_SHAPE_SPHERE] = &col_shape_class_sphere,
    [DVI_SHAPE_BOX] = &col_shape_class_box,
    [DVI_SHAPE_CAPSULE] = &col_shape_class_capsule,
    [DVI_SHAPE_CYLINDER] = &col_shape_class_cylinder,
    [DVI_SHAPE_PLANE] = &col_shape_class_plane,
    [DVI_SHAPE_HEIGHTFIELD] = &col_shape_class_heightfield,
    [DVI_SHAPE_MESH] = &col_shape_class_mesh,
    [DVI_SHAPE_ELLIPSOID] = &col_shape_class_ellipsoid,
};

const int col_shape_kinds = KINDS;
