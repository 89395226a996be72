/* dvicontact — internal: what a terrain model did to one body in the last
 * step, for the probes (src/io/scene_model.c). The SCM soil answers through
 * its public calls (<dvi/terrain.h>); the Bekker–Wong element keeps no
 * public map from bodies to its wheels, hence this. */
#ifndef DVI_TERRAIN_INTERNAL_H
#define DVI_TERRAIN_INTERNAL_H

#include "dvi/terrain.h"

#include <stdbool.h>

/* When force element `element` of the world is a Bekker–Wong element and
 * `body` one of its wheels: true, that wheel's last forces in *forces and the
 * force the element applied to it (world frame, N) in force[3]. Otherwise
 * false and nothing written. O(wheels of the element). */
bool bw_body_forces(const dvi_world* w, int32_t element, dvi_body_id body, dvi_bw_forces* forces, double force[3]);

#endif
