/* dvicontact rover study — the study's probe kinds: "attitude" (a body's
 * roll, pitch and yaw) and "wheel_slip" (a wheel's forward speed, rim speed
 * and slip ratio), registered with dvi_probe_register (docs/scene-format.md
 * describes their keys and columns). The dvi tool registers them at start,
 * so that the rover scenes run there; a program of its own that reads those
 * scenes calls rover_register_probes before it loads them. */
#ifndef ROVER_PROBES_H
#define ROVER_PROBES_H

#include <dvi/scene.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Registers "attitude" and "wheel_slip" (again: DVI_OK). */
dvi_status rover_register_probes(void);

#ifdef __cplusplus
}
#endif
#endif /* ROVER_PROBES_H */
