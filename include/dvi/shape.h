/* dvicontact — the kinds of collision shape. Its own header because the
 * collision layer, which sits below the world, names them too; <dvi/world.h>
 * includes it. */
#ifndef DVI_SHAPE_H
#define DVI_SHAPE_H

#ifdef __cplusplus
extern "C" {
#endif

typedef enum dvi_shape_type {
    DVI_SHAPE_SPHERE = 1,      ///< radius
    DVI_SHAPE_BOX = 2,         ///< half_extents
    DVI_SHAPE_CAPSULE = 3,     ///< radius, half_length of the segment along local z
    DVI_SHAPE_CYLINDER = 4,    ///< radius, half_length along local z (a wheel's axle is its z axis)
    DVI_SHAPE_PLANE = 5,       ///< the half-space z ≤ 0 of the shape frame (fixed bodies only)
    DVI_SHAPE_HEIGHTFIELD = 6, ///< grid heights over local x, y (fixed bodies only)
    DVI_SHAPE_MESH = 7,        ///< triangle mesh (fixed bodies only)
    DVI_SHAPE_ELLIPSOID = 8    ///< semi-axes along local x, y, z
} dvi_shape_type;

#ifdef __cplusplus
}
#endif
#endif /* DVI_SHAPE_H */
