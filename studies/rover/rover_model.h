/* rover_model — builds the Curiosity-like rocker-bogie rover of
 * data/rover/rocker_bogie_rover.json in a dvi_world through
 * the public API only (dvi/world.h).
 *
 * Model (all numbers from the JSON; see data/rover/README.md and
 * data/rover/SOURCES.md):
 *   - 18 bodies: chassis, rocker_L/R, bogie_L/R, diff_bar, diff_link_L/R,
 *     upright_FL/FR/RL/RR, wheel_LF/RF/LM/RM/LB/RB. Each body's frame is its
 *     centre of mass with the chassis orientation (identity at build time);
 *     its inertia is the JSON's tensor about the COM in the chassis axes.
 *   - Positions in the JSON are in the chassis frame; the chassis frame is
 *     placed at options.position in the world, axes parallel to the world's
 *     (x forward, y left, z up).
 *   - Only the wheels collide (only_wheels_collide): a cylinder of the JSON's
 *     radius and width per wheel, its axis (shape local z) turned onto the
 *     wheel's spin_axis (world y). Optionally (options.grousers = N > 0) N
 *     grousers per wheel: thin boxes across the tread, evenly spaced around
 *     the axle, each reaching options.grouser_height beyond the rim
 *     (rover_grouser_pose). The wheel's mass and inertia stay the JSON's.
 *   - Joints as listed in the JSON: revolutes (rocker, bogie and
 *     differential-bar pivots; the differential-link ends, or sphericals
 *     there when options.spherical_diff_links is set), fixed steering, and
 *     a revolute per wheel (with a rotation speed motor when
 *     options.wheel_speed != 0). For the wheel joints the carrier (upright or
 *     bogie) is body_a and the wheel body_b, whatever the JSON's order, so a
 *     positive speed spins the wheel about +y relative to its carrier:
 *     forward (+x) rolling, as in the source model.
 *
 * With the as-built pose all wheel centres are at chassis z = 0.249 and the
 * wheel bottoms at 0.249 − radius = −0.001: options.on_ground places the
 * rover on flat ground (chassis origin 0.001 above it; with grousers, on the
 * tips of the grousers that point down).
 *
 * The JSON is read and checked completely before anything is created, so a
 * file or parse error leaves the world untouched.
 */
#ifndef ROVER_MODEL_H
#define ROVER_MODEL_H

#include <dvi/world.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Wheel order used by every array in this header.
enum { ROVER_LF = 0, ROVER_LM = 1, ROVER_LB = 2, ROVER_RF = 3, ROVER_RM = 4, ROVER_RB = 5, ROVER_WHEELS = 6 };
enum { ROVER_BODIES = 18, ROVER_MAX_JOINTS = 24 };

typedef struct rover_options {
    double position[3];        ///< world position of the chassis frame origin (m); default (0, 0, 0)
    bool on_ground;            ///< true: position[2] is the height of flat ground instead, and the chassis frame
                               ///< is lifted so the lowest wheel point of the as-built pose touches it (gap 0);
                               ///< default false
    double wheel_friction;     ///< μ of the wheel shapes; < 0 (default −1): the JSON's wheels.material_nsc.friction
    bool spherical_diff_links; ///< spherical joints at both ends of each differential link instead of the
                               ///< source model's (redundant) revolutes; default false
    double wheel_speed;        ///< rad/s of every wheel relative to its carrier, + = forward; 0 (default): no
                               ///< motors, the wheels spin freely
    double wheel_ramp;         ///< s; the motor target rises linearly over this time; default 0
    double wheel_damping;      ///< N·m·s/rad; 0 (default): the motors hold their speed exactly; > 0: each
                               ///< gives damping·(target − speed), a DC motor's law (dvi_joint_def.motor_damping)
    double wheel_compliance;   ///< m/N, contact compliance of the wheel shapes (dvi_material.compliance);
                               ///< default 0 (rigid, as the source model's NSC contact)
    double wheel_young_modulus; ///< Pa, E of the wheel shapes for the DEM method (dvi_material.young_modulus,
                               ///< with ν = 0.3); 0 (default): the material default
    int grousers;              ///< grousers per wheel (thin boxes on the tread); default 0 (plain cylinder)
    double grouser_height;     ///< m beyond the rim; default 0.02 (the reference's grousered wheel: 0.27 m tips)
    double grouser_thickness;  ///< m, along the tread; default 0.01
} rover_options;

/// Defaults as documented in rover_options.
rover_options rover_default_options(void);

typedef struct rover_wheel {
    const char* name;          ///< "wheel_LF", ... (static storage)
    const char* label;         ///< "front left", "middle right", ... (static storage)
    int side;                  ///< 0 left (+y), 1 right (−y)
    int place;                 ///< 0 front, 1 middle, 2 rear
    dvi_body_id body;
    dvi_shape_id shape;
    dvi_joint_id joint;        ///< revolute carrier–wheel (with the speed motor if any)
    double position[3];        ///< world position of the wheel centre at build time
} rover_wheel;

typedef struct rover_named_body {
    char name[32];
    dvi_body_id id;
    double mass;
} rover_named_body;

typedef struct rover_named_joint {
    char name[32];
    dvi_joint_type type;       ///< as created (after the spherical option)
    dvi_motor_type motor;      ///< DVI_MOTOR_NONE or DVI_MOTOR_ROTATION_SPEED (wheel drives)
    dvi_joint_id id;
} rover_named_joint;

typedef struct rover {
    dvi_body_id chassis;
    dvi_body_id rocker[2];     ///< [0] left, [1] right
    dvi_body_id bogie[2];
    dvi_body_id diff_bar;
    dvi_body_id diff_link[2];
    dvi_body_id upright[4];    ///< FL, FR, RL, RR
    rover_wheel wheel[ROVER_WHEELS]; ///< ROVER_LF ... ROVER_RB

    dvi_joint_id rocker_pivot[2];  ///< rocker–chassis
    dvi_joint_id bogie_pivot[2];   ///< bogie–rocker
    dvi_joint_id diff_bar_pivot;   ///< diff bar–chassis
    dvi_joint_id rocker_link[2];   ///< rocker–diff link
    dvi_joint_id link_bar[2];      ///< diff link–diff bar
    dvi_joint_id steer[4];         ///< FL, FR, RL, RR (fixed)

    rover_named_body bodies[ROVER_BODIES]; ///< every body, in creation order
    int body_count;
    rover_named_joint joints[ROVER_MAX_JOINTS]; ///< every joint, in the JSON's order
    int joint_count;

    double origin[3];          ///< world position of the chassis frame origin as built
    double total_mass;         ///< kg, sum over the bodies
    double wheel_radius, wheel_width; ///< m
    double wheel_bottom_z;     ///< chassis-frame z of the lowest wheel point in the as-built pose (−0.001;
                               ///< with grousers, of grouser 0's tip: −0.001 − grouser_height)
    double json_envelope;      ///< the JSON's wheels.collision_envelope_nsc (a world setting; informative)
} rover;

/// Builds the rover `variant` ("Scarecrow" or "FullRover") from the JSON file
/// into w. opt may be NULL (defaults). On failure returns DVI_ERR_IO (file
/// unreadable), DVI_ERR_PARSE (malformed JSON, missing or ill-typed field;
/// the message names the JSON path, e.g. "parts.bogie_L.mass: missing"),
/// DVI_ERR_INVALID_ARG (unknown variant, bad option) or the world's error
/// (message: the part and dvi_world_last_error), and writes the message into
/// msg (may be NULL). Only a world error can leave a partly built rover.
dvi_status rover_build(dvi_world* w, const char* json_path, const char* variant, const rover_options* opt,
                       rover* out, char* msg, size_t msg_size);

/// The JSON's static_wheel_loads of `variant` (N), in wheel order
/// (ROVER_LF ... ROVER_RB). Errors as rover_build.
dvi_status rover_reference_loads(const char* json_path, const char* variant, double loads[ROVER_WHEELS],
                                 char* msg, size_t msg_size);

/// Contact force (N, world frame) on each wheel during the last step, in
/// wheel order: force[i][2] is the normal load on flat ground.
dvi_status rover_wheel_forces(const dvi_world* w, const rover* r, double force[ROVER_WHEELS][3]);

/// Pitch angle (rad, about +y) of a body's current orientation: the angle
/// of its x axis above the world's x–y plane, positive nose-down (right-hand
/// rule about +y).
double rover_pitch(const dvi_world* w, dvi_body_id body);

/// Grouser k of n on a wheel of the given radius whose axle (unit, body
/// frame) is axis: the box's centre relative to the wheel centre (pos) and
/// its orientation (q, w x y z) in the body frame. The box's local axes are
/// (tangential, axle, radial) and its half extents (thickness/2,
/// width/2, height): it spans radius − height … radius + height, so it
/// reaches height beyond the rim. Grouser 0 points down (−z) and the others
/// follow at 2π k/n about the axle.
void rover_grouser_pose(const double axis[3], int k, int n, double radius, double pos[3], double q[4]);

/* ---- the obstacle-crossing course ------------------------------------------------ */

/// A fixed body with a plane shape: flat ground z ≤ 0, friction μ.
dvi_status rover_add_ground(dvi_world* w, double friction, dvi_body_id* out);

/// A fixed sphere of the given radius centred at centre (on the ground,
/// z = 0, for a hemispherical bump), friction μ.
dvi_status rover_add_obstacle(dvi_world* w, const double centre[3], double radius, double friction,
                              dvi_body_id* out);

/// The load on each wheel during the last step, in wheel order: the sum over
/// the wheel's contacts of their normal forces (N), whatever the contacts'
/// normals (ground, obstacle). On flat ground it equals the vertical
/// component of rover_wheel_forces.
dvi_status rover_wheel_loads(const dvi_world* w, const rover* r, double load[ROVER_WHEELS]);

/// Wheel i's forward speed v (m/s, its centre along axle × z), rim speed
/// ω r (m/s, ω = angular velocity · axle) and slip ratio s = v / (ω r) − 1
/// (NaN when |ω r| < 1e-9 m/s). Any output may be NULL.
dvi_status rover_wheel_slip(const dvi_world* w, const rover* r, int i, double* v, double* omega_r, double* slip);

/// Travel of the rover along +x (m, from its as-built position) at which
/// wheel i first touches a sphere of the given centre and radius, and at
/// which it leaves it, for straight-line driving: the wheel's side (or, when
/// the sphere's centre lies beyond the wheel's faces, its rim) meets the
/// sphere. Returns false when the wheel's path misses the sphere.
bool rover_obstacle_travel(const rover* r, int i, const double centre[3], double radius, double* reach,
                           double* leave);

/* ---- reading and writing JSON files --------------------------------------------- */

struct cJSON;
/// Reads and parses a JSON file whose top level is an object (the reference,
/// or any other input of the study's programs). NULL on failure, with the message in
/// msg (may be NULL) and the status in *status (may be NULL): DVI_ERR_IO
/// (cannot open or read), DVI_ERR_NOMEM, DVI_ERR_PARSE ("PATH:LINE:COL:
/// malformed JSON", or the top level is not an object). Free with cJSON_Delete.
struct cJSON* rover_load_json(const char* path, dvi_status* status, char* msg, size_t msg_size);

/* ---- writing scene files ------------------------------------------------------- */

/// Writes x as the shortest decimal that reads back as the same double
/// ("-0" as "0"): scene generators' numbers round-trip exactly.
void rover_write_number(FILE* f, double x);
/// Writes v[0..n) as a JSON array of such numbers.
void rover_write_vector(FILE* f, const double* v, int n);
/// Writes the "joints" array of a single-wheel testbed (the rigs of
/// wheel_testbed.c and bw_testbed.c): "rail", the carriage on a prismatic
/// joint along `rail_axis` driven at `speed` m/s; "guide", a slider free in
/// z on it; "drive", the wheel on the slider, turned about y at `omega`
/// rad/s; both motors ramped over `ramp` s; every anchor at p. Ends with
/// the array's "],".
void rover_write_carriage_joints(FILE* f, const double p[3], const double rail_axis[3], double speed, double omega,
                                 double ramp);
/// Parses a generated scene's text (len bytes) into *out; on failure a
/// message "scene: …" in msg and the parser's status (the rigs' scenes).
struct dvi_scene;
dvi_status rover_parse_scene_text(const char* text, size_t len, struct dvi_scene** out, char* msg, size_t msg_size);

#ifdef __cplusplus
}
#endif
#endif /* ROVER_MODEL_H */
