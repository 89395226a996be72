/* The run health monitor (health.c; docs/health.md): what a model checks
 * after every step of its world. It reads the world's arrays, so it lives
 * in the world layer; the bodies it reports are named by the world's body
 * namer (dvi_world_set_body_namer), the joints by the names the caller
 * passes. Internal to the library. */
#ifndef DVI_WORLD_HEALTH_H
#define DVI_WORLD_HEALTH_H

#include <dvi/world.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct health_motor {
    int32_t joint;        /* world joint index */
    bool linear;          /* linear speed motor (force along the axis) */
    double axis_a[3];     /* the axis in body A's frame (the world's when A is the world) */
} health_motor;

typedef struct world_health {
    dvi_health_settings set;
    dvi_health_report rep;
    double e0;            /* energy at the start (kinetic + gravity's potential) */
    double scale0;        /* the energy scale without the work put in */
    double work_pos;      /* J: the positive parts of the work put in (in the energy scale) */
    double lo[3], hi[3];  /* the region that bounds the scene (±INFINITY where unbounded) */
    double margin;        /* m, beyond it a body has escaped */
    double* size;         /* [bodies] smallest size among each body's bounded shapes, INFINITY if none */
    double min_size;      /* the smallest of them */
    health_motor* motors;
    int32_t motor_count;
    /* the energy audit: each body's velocity, angular velocity and
     * orientation at the start of the step [10 per body], and the staggered
     * energy then (wld_health_before_step) */
    double* start;
    double e_start;
    double ke_start;      /* J, the kinetic energy then */
    double dt_start;      /* the step the start was taken for; 0: none */
} world_health;

/* Baseline at the world's current state: sizes, motors, energy, region. */
dvi_status wld_health_init(world_health* h, const dvi_health_settings* set, const dvi_world* w);
void wld_health_free(world_health* h);
/* Before a step of dt: what the energy audit needs of the state at the
 * step's start. One pass over the bodies, no allocation. */
void wld_health_before_step(world_health* h, const dvi_world* w, double dt);
/* The checks after a step of dt that took the world to `step`;
 * DVI_ERR_NUMERIC on a blow-up. joint_names[j] (or the array) may be NULL. */
dvi_status wld_health_after_step(world_health* h, const dvi_world* w, int64_t step, double dt,
                                 char* const* joint_names);
/* The monitor's part of a model's state blob: fixed size, checksummed. */
size_t wld_health_state_size(void);
/* True for the size of this version's section and of the earlier ones
 * without the hover kind, without the audit, and without the chatter kind (wld_health_load reads
 * them all). */
bool wld_health_state_size_valid(size_t size);
void wld_health_save(const world_health* h, unsigned char* out);
dvi_status wld_health_load(world_health* h, const unsigned char* in, size_t size);

#endif /* DVI_WORLD_HEALTH_H */
