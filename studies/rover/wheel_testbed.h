/* wheel_testbed — one rover wheel on a carriage, driven at an imposed slip
 * over a granular bin (or rigid ground): the traction–slip curve of the
 * rover's wheel on the rover's grains.
 *
 * The rig (a scene, written as JSON text and loaded through scene.h):
 *   - a carriage on a rail along +x (prismatic joint to the world) whose
 *     linear-speed motor holds v = (1 + s) ω r;
 *   - a slider on the carriage, free along z (prismatic joint, no motor): it
 *     carries the ballast, so the wheel presses on the ground with the
 *     weight `load` whatever its sinkage;
 *   - the wheel on the slider (revolute about y) whose speed motor holds ω.
 *   Both motors ramp up over the same time, so the slip ratio
 *   s = v/(ωr) − 1 is imposed from the start. The rail and the wheel's
 *   motor do not let the wheel find its own speed: the ground's forward
 *   force on the wheel (the drawbar pull) is what the slip costs or gives.
 *   - The ground: rigid (a box, top at z = 0), or a bin of the rover scenes'
 *     grains: a granular_bed generator (hexagonal packing, gap 0.001 m,
 *     jitter 0.00025 m, density 2000 kg/m³) filling a region of the given
 *     length, width and depth below z = 0, a ground box under it and four
 *     walls round it.
 *   - The wheel: the reference rover's (radius, width, mass and inertia
 *     from the reference JSON), optionally with grousers as on the rover
 *     (rover_grouser_pose); friction μ on every shape, as in the rover's
 *     granular scenes; DVI with APGD at 1 ms (tolerance 1e-4, at most 100
 *     iterations, envelope 0.005 m, recovery speeds 0.1 and 0.05 m/s: the
 *     rover's granular settings); Lemke's method on rigid ground.
 *
 * The slip and the load can also alternate between two values (a square
 * wave, switch_period), so that the time series shows how fast the bed's
 * answer follows a change.
 *
 * Measured over the window [window_start, duration], per step: the contact
 * force on the wheel (forward component: the drawbar pull; vertical: the
 * load it carries), the motor torque on the wheel about its axle, and the
 * wheel centre's height. Means and standard errors come from ten equal
 * blocks of the window (the per-step forces on grains are spiky and
 * correlated over a few steps). Sinkage is measured from the bed's nominal
 * top z = 0 to the lowest point of the rim (or of a grouser's tip).
 *
 * Public API only (dvi/scene.h, dvi/world.h) and rover_model.h for the
 * grousers' poses. */
#ifndef WHEEL_TESTBED_H
#define WHEEL_TESTBED_H

#include <dvi/world.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

typedef struct wheel_params {
    double radius, width;      ///< m
    double mass;               ///< kg
    double inertia[3];         ///< kg m², about the centre of mass (x, y = axle, z)
} wheel_params;

/// Reads wheels.radius, wheels.width and parts.wheel_RF (mass, inertia_about_com
/// diagonal) from the reference rover JSON. DVI_ERR_IO / DVI_ERR_PARSE with a
/// message naming the field.
dvi_status wheel_params_read(const char* json_path, wheel_params* out, char* msg, size_t msg_size);

typedef struct testbed_config {
    wheel_params wheel;
    double load;               ///< N, the wheel's weight on the ground (wheel + slider + ballast); default 480.03
                               ///< (the Scarecrow's front-right static load)
    double wheel_speed;        ///< rad/s; default 0.8 (the rover's granular runs)
    double ramp;               ///< s, both motors' ramp; default 0.5
    double slip;               ///< imposed s = v/(ωr) − 1; default −0.1
    double friction;           ///< μ of the wheel, grains and ground; default 0.4
    double rolling_friction;   ///< m, rolling resistance arm between grains (grain–grain contacts only); default 0
    int grousers;              ///< default 24
    double grouser_height;     ///< m; default 0.02
    double grain_radius;       ///< m; 0: rigid ground; default 0.03
    double length, width, depth; ///< m, the bin; defaults 1.4, 0.7, 0.1606 (the rover strips' three layers of
                               ///< 0.03 m grains); the bin spans x from −back to length − back
    double back;               ///< m, the bin's length behind the wheel's start (x = 0); default 0.45
    double dt;                 ///< s; default 0.001
    int max_iterations;        ///< APGD's cap per step on grains; default 100 (the rover's granular scenes)
    double tolerance;          ///< APGD's residual tolerance on grains; default 1e-4
    double duration;           ///< s; default 3
    double window_start;       ///< s; default 1.5
    int threads;               ///< 0: the library's default
    int sample_every;          ///< steps per row of the time series (callback); default 20
    /* A square wave in slip and load (the rig's answer to a change): from
     * switch_start on, the rig holds (slip_alt, load_alt) for the first half
     * of each switch_period and (slip, load) for the second. The carriage's
     * motor takes the new speed at once; the load changes by a vertical force
     * on the slider. switch_period 0 (default): constant slip and load. */
    double switch_start;       ///< s; at least the ramp; default 1.5
    double switch_period;      ///< s; a whole number of steps per half; default 0
    double slip_alt;           ///< default −0.1
    double load_alt;           ///< N; default 480.03
} testbed_config;

testbed_config testbed_default_config(void);

/// Writes the rig's scene as JSON (a complete file) to f. Returns 0, or −1
/// with a message when the configuration is invalid (names the field:
/// "slip: the wheel would leave the bin (travel 1.2 m, room 0.6 m)").
int testbed_write_scene(const testbed_config* c, FILE* f, char* msg, size_t msg_size);

typedef struct testbed_result {
    long long grains;
    double drawbar_pull, drawbar_pull_se;   ///< N, forward force of the ground on the wheel
    double vertical, vertical_se;           ///< N, its upward force
    double torque, torque_se;               ///< N m, motor torque on the wheel about the axle
    double sinkage;                         ///< m, mean over the window
    double sinkage_end;                     ///< m, at the end
    double slip_measured;                   ///< v/(ωr) − 1 from the wheel's own velocities, window mean
    double mean_iterations;                 ///< solver iterations per step, window mean
    double ms_per_step;                     ///< wall time
    int unconverged_steps;                  ///< steps whose solver did not reach its tolerance (window)
} testbed_result;

/// A time-series row every sample_every steps: time, and the means since the
/// previous row of the drawbar pull, vertical force, torque, and the sinkage.
typedef void (*testbed_sample_fn)(void* user, double t, double fx, double fz, double torque, double sinkage);

/// Builds the rig and runs it. Returns DVI_OK and fills out, or an error with
/// a message (a scene problem, a failed step).
dvi_status testbed_run(const testbed_config* c, testbed_sample_fn sample, void* user, testbed_result* out,
                       char* msg, size_t msg_size);

/// A square wave's response folded over its whole periods (testbed_fold).
typedef struct testbed_folded {
    int bins;              ///< samples per period
    int periods;           ///< whole periods from switch_start in the series
    double width;          ///< s per sample (sample_every · dt)
    double* mean;          ///< [3 · bins]: drawbar pull (N), vertical force (N), sinkage (m) by phase bin, quantity
                           ///< major; bin b ends (b + 1) · width after the switch to (slip_alt, load_alt)
    double* se;            ///< [3 · bins]: their standard errors over the periods
    double plateau[2];     ///< N, the pull's mean over the last quarter of each half: [0] at (slip, load), [1] at
                           ///< (slip_alt, load_alt)
    double t63[2], t90[2]; ///< s from the switch ([0] to the alternate, [1] back) to the end of the first sample
                           ///< that is 63 % (90 %) of the way between the plateaus: an upper bound to one sample;
                           ///< NAN if no sample is
} testbed_folded;

/// Folds n time-series rows (time, drawbar pull, vertical force, sinkage:
/// what the sample callback receives) of a run of c with a square wave.
/// Needs an even number (≥ 4) of samples per period and at least two whole
/// periods. Returns 0 and fills out (free with testbed_folded_free), or −1
/// with a message naming the field.
int testbed_fold(const testbed_config* c, const double (*rows)[4], long n, testbed_folded* out, char* msg,
                 size_t msg_size);
void testbed_folded_free(testbed_folded* f);

#endif
