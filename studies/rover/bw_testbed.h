/* bw_testbed — a single wheel on a carriage over a soil model
 * (<dvi/terrain.h>; docs/terrain.md): the single-wheel testbed of the
 * terramechanics literature, with the wheel–soil forces of the Bekker–Wong
 * model or of an SCM soil grid with the same Bekker parameters.
 *
 * The rig (a scene, written as JSON text and loaded through scene.h):
 *   - a carriage on a rail (prismatic joint to the world) along
 *     (cos β, sin β, 0), whose linear-speed motor holds the speed
 *     v = (1 − s) r ω / cos β: the wheel's forward speed is (1 − s) r ω
 *     (slip s, driving) and its slip angle β;
 *   - a slider on the carriage, free along z, carrying the ballast, so that
 *     the wheel presses on the soil with the load W whatever its sinkage;
 *   - the wheel on the slider (revolute about y, a cylinder of radius r and
 *     width b) whose speed motor holds ω;
 *   - the terrain, one row of a table in bw_testbed.c:
 *       "bekker_wong"  a bekker_wong entry: the soil preset, the ground the
 *                      plane z = 0, damping γ; the wheel starts at the
 *                      static model's sinkage for the load at zero slip;
 *       "scm"          an scm entry under the wheel's path, flat at z = 0,
 *                      with the preset's k_c, k_φ, n₀, c, φ and K_x0 as
 *                      Janosi's K, and its own grid Δ, elastic stiffness
 *                      k_e and damping r; the wheel starts with its rim on
 *                      the surface.
 *   Both motors ramp up over `ramp`. DVI at 1 ms.
 *
 * Measured over [window_start, duration]: the terrain's forces on the wheel
 * (dvi_bw_wheel_forces, dvi_scm_get_body_contact) — drawbar pull, lateral
 * force, normal force, resisting torque — and the sinkage (the rim's depth
 * below z = 0), as means per step.
 *
 * Public API only (dvi/scene.h, dvi/terrain.h). */
#ifndef BW_TESTBED_H
#define BW_TESTBED_H

#include <dvi/terrain.h>

#include <stddef.h>
#include <stdio.h>

/// The rig's wheel: its mass (kg) and principal moments of inertia (kg·m²);
/// the slider carries the rest of the load.
#define BW_RIG_WHEEL_MASS 1.0
#define BW_RIG_WHEEL_INERTIA 0.01

typedef struct bw_rig_config {
    const char* terrain;   ///< "bekker_wong" (default; NULL too) or "scm"
    const char* soil;      ///< "ishigami2007" or "ding2011"
    double radius, width;  ///< m
    double load;           ///< N
    double slip;           ///< s in [0, 0.95]
    double slip_angle;     ///< rad, β in [0, 0.5]
    double rim_speed;      ///< m/s, r ω; default 0.2
    double damping;        ///< N·s/m, γ of the Bekker–Wong wheel; default 300
    double scm_spacing;    ///< m, SCM grid Δ; default 0.0025
    double scm_stiffness;  ///< Pa/m, SCM elastic stiffness k_e; default 4e7
    double scm_damping;    ///< Pa·s/m, SCM damping r; default 3e3
    double ramp;           ///< s; default 0.5
    double dt;             ///< s; default 0.001
    double duration;       ///< s; default 3
    double window_start;   ///< s; default 2
} bw_rig_config;

/// The rig of Ishigami et al. 2007 (r 0.09 m, b 0.11 m, load 50 N) or of
/// Ding et al. 2011 (r 0.15735 m, b 0.165 m, load 80 N); soil: the name.
/// The terrain is Bekker–Wong's.
bw_rig_config bw_rig_default(const char* soil);

/// Writes the rig's scene (a complete JSON file) to f. 0, or −1 with a
/// message naming the field.
int bw_rig_write_scene(const bw_rig_config* c, FILE* f, char* msg, size_t msg_size);

typedef struct bw_rig_result {
    double drawbar_pull, lateral, normal, torque, sinkage; ///< N, N, N, N·m, m: window means
    double slip_measured;                                  ///< 1 − v/(rω) (Bekker–Wong: the model's), window mean
    double sinkage_spread;                                 ///< m, max − min of the sinkage over the window
} bw_rig_result;

/// Builds the rig and runs it (the terrain named; NULL: Bekker–Wong). DVI_OK and out, or an error with a message.
dvi_status bw_rig_run(const bw_rig_config* c, bw_rig_result* out, char* msg, size_t msg_size);

#endif
