/* rover_scene — writes the rocker-bogie rover of the reference JSON
 * (data/rover/rocker_bogie_rover.json) as scene files:
 *
 *   rover_statics_scarecrow.json, rover_statics_fullrover.json
 *       the rover at rest on flat ground (static wheel loads);
 *   rover_obstacle_rigid.json, rover_obstacle_rigid_fullrover.json
 *       the obstacle crossing of Horvat (2024, §6) on rigid ground: a hemisphere of radius 0.15 m (a fixed sphere
 *       centred on the ground) at (1.6, −1.0) under the right-hand wheels,
 *       the six wheels driven at 0.08889 rad/s after a 1 s linear ramp, for
 *       long enough that the rear wheel has crossed (below);
 *   rover_obstacle_rigid_dem.json
 *       the same crossing in DEM mode: Hertz contacts with the reference's
 *       SMC material (E = 2e7 Pa, ν = 0.3), dt = 1e-4 s, and spherical joints
 *       at the differential links' ends (the rigid scenes carry the same
 *       material, so `--method dem --dt 1e-4` runs them as well, but with the
 *       redundant revolutes each DEM step hands its joint rows to the CCP
 *       solver: ~20 times slower);
 *   rover_obstacle_granular.json
 *       the thesis's granular bed: 6 × 3.8 m, spheres of radius 0.03 m,
 *       ρ = 2000, μ = 0.4, 53,728 of them (9 layers, 0.549 m deep: see the
 *       reference README), four walls, the obstacle sunk into the bed so a
 *       0.15 m cap protrudes, the rover on top; 30 s as in the thesis;
 *   rover_obstacle_granular_hex.json
 *       the thesis's 53,728 spheres on its 6 × 3.8 m footprint in hexagonal
 *       close packing (8 layers, the top one partly filled; the depth follows
 *       from the count), the footprint moved 0.5 m forward (x from −1.5 to
 *       4.5 m) so that the rear wheel crosses before the front wheel meets the
 *       end wall (in the thesis's place it meets the wall after 2.6 m of
 *       travel, before the rear wheel is over the obstacle at 2.76 m),
 *       grousered wheels at 0.8 rad/s as on the hexagonal strip; 19.4 s: at
 *       the two-sided strip's pace the rear wheel has landed by about 19.1 s
 *       and the front wheel meets the end wall near 19.5 s; spherical joints
 *       at the differential links' ends; the full bed of bench/bench_scale.c;
 *   rover_obstacle_granular_strip.json
 *       a strip of that bed under the right-hand wheels only (3 layers, the
 *       depth of the thesis's printed code), the left-hand wheels on a rigid
 *       track level with the bed, driven faster so that all three right
 *       wheels cross in a run of minutes;
 *   rover_obstacle_granular_strip_hex.json
 *       the strip with a bed that holds and wheels that grip: 3 layers of
 *       hexagonal close packing (0.16 m deep) and 24 grousers of 0.02 m on
 *       every wheel, 25 s (RECORD.md, "Granular ground");
 *   rover_obstacle_granular_strip_hex_roll.json
 *       that strip with rolling resistance between the grains (an arm of
 *       0.003 m, a tenth of their radius, on grain–grain contacts only);
 *   rover_obstacle_granular_tracks_hex.json
 *       the hexagonal strip under each side's wheels (the left one the
 *       mirror image of the right one, instead of the rigid track),
 *       20.4 s: the rear wheel has landed, and 0.1 s later the front wheel
 *       meets the bed's end wall;
 *   rover_obstacle_granular_tracks_hex_pad.json,
 *   rover_obstacle_granular_tracks_hex_patch.json,
 *   rover_obstacle_tracks_rigid.json
 *       that bed split at the obstacle: rigid pads instead of grains
 *       around it, grains only there (rigid flats elsewhere), and no grains
 *       at all, the reference (RECORD.md, "Grains at the obstacle or
 *       under the flat wheels");
 *   rover_obstacle_tracks_slick.json
 *       the rigid flats of the last with their friction lowered to 0.2
 *       (about the pull the bed gives the wheels on the flat while another
 *       wheel climbs) except around the obstacle, where it stays 0.4
 *       (RECORD.md, "Rigid flats that pull like the bed");
 *   rover_obstacle_granular_strip_hex_dem.json
 *       that strip with the DEM back end: Hertz contacts with the
 *       reference's SMC material (E = 2e7 Pa) everywhere, dt = 1e-4 s,
 *       spherical joints at the differential links' ends.
 *
 * usage: rover_scene [--grousers N] [REFERENCE_JSON [OUTPUT_DIR]]
 * (defaults: the reference of the data directory, tool/data_path.h, and the
 * current directory). Each file is loaded back with dvi_scene_load and built with
 * dvi_model_create as a check. The committed copies are in examples/scenes/.
 * Their descriptions end "Written by studies/rover/rover_scene.c".
 * --grousers N gives the wheels of the obstacle scenes N grousers (thin
 * boxes, rover_grouser_pose in rover_model.c); the committed rigid scenes
 * have plain cylinders, the granular and track scenes 24 grousers. With
 * grousers the rover starts with the lowest grouser tips on z = 0 (the
 * top of the bed or of the flats), not 2 cm inside it.
 *
 * The model is that of rover_model.c (see rover_model.h):
 *   - 18 bodies, each at its centre of mass with the JSON's inertia tensor
 *     about it (chassis axes); the chassis frame is lifted so that the
 *     lowest wheel points of the as-built pose (the grouser tips, with
 *     grousers) touch the ground z = 0 (the top of a granular bed);
 *   - only the wheels collide: a cylinder per wheel (radius and width from
 *     the JSON), its axis on the wheel's spin axis; wheel material: the JSON's
 *     friction and restitution, and on rigid ground a contact compliance of
 *     1e-8 m/N, which makes the split of each wheel's load between its two
 *     rim contact points unique (with rigid contact it is statically
 *     indeterminate; see tests/test_rover_statics.c); the ground and the
 *     obstacle have the same friction;
 *   - joints as listed in the JSON (the differential links keep the source
 *     model's revolutes: redundant rows); steering joints fixed; the drive
 *     joints are revolutes, carrier as body_a and wheel as body_b, with a
 *     speed motor in the obstacle scenes;
 *   - rigid ground: Lemke's method on the CCP (exact on this small problem
 *     and cheap, ~2 ms a step; the rover's CCP is badly conditioned for the
 *     iterative solvers); granular beds: APGD.
 */
#include "data_path.h"
#include "rover_model.h"

#include <dvi/scene.h>

#include <cjson/cJSON.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char* const PARTS[17] = {"rocker_L",    "rocker_R",   "bogie_L",    "bogie_R",    "diff_bar",
                                      "diff_link_L", "diff_link_R", "upright_FL", "upright_FR", "upright_RL",
                                      "upright_RR",  "wheel_LF",   "wheel_LM",   "wheel_LB",   "wheel_RF",
                                      "wheel_RM",    "wheel_RB"};
static const char* const WHEELS[6] = {"wheel_LF", "wheel_LM", "wheel_LB", "wheel_RF", "wheel_RM", "wheel_RB"};

/* ---- the course of the thesis (Horvat 2024, §6.2) ------------------------------- */

#define OBSTACLE_X 1.6
#define OBSTACLE_Y (-1.0)    /* under the right-hand wheels (y < 0) */
#define OBSTACLE_RADIUS 0.15
#define THESIS_SPEED 0.08889 /* rad/s */
#define THESIS_RAMP 1.0      /* s */
#define GRAIN_RADIUS 0.03
#define GRAIN_GAP 0.001
#define GRAIN_DENSITY 2000.0
#define GRAIN_FRICTION 0.4
#define GRAIN_ROLLING 0.003 /* m: the rolling-resistance arm of the grains in the _roll scene */
#define GRANULAR_ENVELOPE 0.005 /* m: the collision envelope of the granular scenes */
#define THESIS_GRAINS 53728     /* the spheres of the thesis's bed */
#define GRANULAR_HEX_X0 (-1.5)  /* m: the back of the hexagonal full bed (the thesis's box starts at -2) */
/* The stretch of both strips around the obstacle that the _pad scene makes
 * rigid and the _patch scene leaves granular: x from 1.22 to 1.98 m, the
 * obstacle's centre ± 0.38 m. A wheel (0.27 m to its grouser tips) first
 * touches the obstacle when its centre is 0.32 m before the obstacle's; 0.06 m
 * more is one grain. */
#define PATCH_X0 1.22
#define PATCH_X1 1.98
#define PAD_TOP (-0.015) /* m: the pad's top, about where the grouser tips run in the ruts */
/* The _slick scene's flats outside that stretch: about the pull per unit
 * load that the wheels on the bed's flat get while another wheel climbs
 * (0.13-0.14 in the _pad run; RECORD.md). */
#define SLICK_FRICTION 0.2

typedef enum scene_kind {
    STATICS,
    RIGID,
    RIGID_DEM,
    GRANULAR,
    GRANULAR_HEX, /* the thesis's count and footprint in hexagonal close packing */
    STRIP,
    STRIP_HEX,
    STRIP_HEX_ROLL,
    STRIP_HEX_DEM,
    TRACKS_HEX,
    TRACKS_HEX_PAD,   /* TRACKS_HEX with a rigid pad instead of grains around the obstacle */
    TRACKS_HEX_PATCH, /* grains only around the obstacle, rigid flats elsewhere */
    TRACKS_RIGID,     /* the same walls and wheels on rigid flats, no grains */
    TRACKS_SLICK      /* TRACKS_RIGID with the flats outside that stretch at SLICK_FRICTION */
} scene_kind;

/* A stretch of the strips along x: grains (a generator), or a rigid box with
 * its top at `top` on the floor. */
typedef struct span {
    double x0, x1, top;
    const char* name;     /* the generator's suffix, or the box's name */
    const char* material; /* the box's; NULL: "ground" */
} span;

typedef struct spec {
    scene_kind kind;
    const char* file;
    const char* variant;
    double speed;    /* rad/s (0: no motors) */
    double duration; /* s; 0: computed for the crossing (rigid) */
    int grousers;    /* per wheel; 0: --grousers */
    bool coulomb;    /* statics: Coulomb's law (formulation.friction_law), Lemke's Coulomb LCP */
} spec;

static const spec SPECS[] = {
    {STATICS, "rover_statics_scarecrow.json", "Scarecrow", 0.0, 1.0, 0, false},
    {STATICS, "rover_statics_fullrover.json", "FullRover", 0.0, 1.0, 0, false},
    {STATICS, "rover_statics_scarecrow_coulomb.json", "Scarecrow", 0.0, 1.0, 0, true},
    {RIGID, "rover_obstacle_rigid.json", "Scarecrow", THESIS_SPEED, 0.0, 0, false},
    {RIGID, "rover_obstacle_rigid_fullrover.json", "FullRover", THESIS_SPEED, 0.0, 0, false},
    {RIGID_DEM, "rover_obstacle_rigid_dem.json", "Scarecrow", THESIS_SPEED, 0.0, 0, false},
    {GRANULAR, "rover_obstacle_granular.json", "Scarecrow", THESIS_SPEED, 30.0, 0, false},
    {GRANULAR_HEX, "rover_obstacle_granular_hex.json", "Scarecrow", 0.8, 19.4, 24, false},
    {STRIP, "rover_obstacle_granular_strip.json", "Scarecrow", 0.8, 0.0, 0, false},
    {STRIP_HEX, "rover_obstacle_granular_strip_hex.json", "Scarecrow", 0.8, 25.0, 24, false},
    {STRIP_HEX_ROLL, "rover_obstacle_granular_strip_hex_roll.json", "Scarecrow", 0.8, 25.0, 24, false},
    {STRIP_HEX_DEM, "rover_obstacle_granular_strip_hex_dem.json", "Scarecrow", 0.8, 17.5, 24, false},
    {TRACKS_HEX, "rover_obstacle_granular_tracks_hex.json", "Scarecrow", 0.8, 20.4, 24, false},
    {TRACKS_HEX_PAD, "rover_obstacle_granular_tracks_hex_pad.json", "Scarecrow", 0.8, 20.4, 24, false},
    {TRACKS_HEX_PATCH, "rover_obstacle_granular_tracks_hex_patch.json", "Scarecrow", 0.8, 18.5, 24, false},
    {TRACKS_RIGID, "rover_obstacle_tracks_rigid.json", "Scarecrow", 0.8, 18.5, 24, false},
    {TRACKS_SLICK, "rover_obstacle_tracks_slick.json", "Scarecrow", 0.8, 18.5, 24, false},
};


static const cJSON* need(const cJSON* o, const char* key, const char* where)
{
    const cJSON* v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!v) fprintf(stderr, "rover_scene: %s.%s: missing\n", where, key);
    return v;
}

static int read_vec(const cJSON* v, double* out, int n, const char* where)
{
    if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) != n) {
        fprintf(stderr, "rover_scene: %s: expected %d numbers\n", where, n);
        return -1;
    }
    int i = 0;
    for (const cJSON* it = v->child; it; it = it->next, i++) {
        if (!cJSON_IsNumber(it)) {
            fprintf(stderr, "rover_scene: %s[%d]: not a number\n", where, i);
            return -1;
        }
        out[i] = it->valuedouble;
    }
    return 0;
}

static int read_number(const cJSON* o, const char* key, double* out, const char* where)
{
    const cJSON* v = need(o, key, where);
    if (!v) return -1;
    if (!cJSON_IsNumber(v)) {
        fprintf(stderr, "rover_scene: %s.%s: not a number\n", where, key);
        return -1;
    }
    *out = v->valuedouble;
    return 0;
}

/* Unit quaternion turning (0, 0, 1) onto the unit vector a. */
static void quat_z_to(const double a[3], double q[4])
{
    if (a[2] < -1.0 + 1e-12) {
        q[0] = 0.0, q[1] = 1.0, q[2] = q[3] = 0.0;
        return;
    }
    q[0] = 1.0 + a[2];
    q[1] = -a[1];
    q[2] = a[0];
    q[3] = 0.0;
    double n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    for (int k = 0; k < 4; k++) q[k] /= n;
}

/* A fixed box body: centre c, half extents h. */
static void box_body(FILE* f, const char* name, const double c[3], const double h[3], const char* material)
{
    fprintf(f, ",\n    {\"name\": \"%s\", \"type\": \"fixed\", \"position\": ", name);
    rover_write_vector(f, c, 3);
    fprintf(f, ", \"shapes\": [{\"type\": \"box\", \"half_extents\": ");
    rover_write_vector(f, h, 3);
    fprintf(f, ", \"material\": \"%s\"}]}", material);
}

/* Travel (m) at which a wheel whose centre starts at x_w (height dz above the
 * obstacle's centre) leaves the obstacle: its centre passes
 * x_obstacle + √((r + R)² − dz²). */
static double leave_travel(double x_w, double dz, double r)
{
    double s = r + OBSTACLE_RADIUS;
    return OBSTACLE_X + sqrt(s * s - dz * dz) - x_w;
}

typedef struct rover_data {
    double cmass, cdiag[3], ccom[3], radius, width, envelope, friction, restitution, lift;
    double rear_x, wheel_z;
} rover_data;

static int read_rover(const cJSON* root, const char* variant, rover_data* d)
{
    const cJSON* chassis = need(root, "chassis", "");
    const cJSON* cv = chassis ? need(chassis, variant, "chassis") : NULL;
    const cJSON* parts = need(root, "parts", "");
    const cJSON* wheels = need(root, "wheels", "");
    const cJSON* mat = wheels ? need(wheels, "material_nsc", "wheels") : NULL;
    if (!cv || !parts || !wheels || !mat) return -1;
    if (read_number(cv, "mass", &d->cmass, "chassis") ||
        read_vec(need(cv, "inertia_diag", "chassis"), d->cdiag, 3, "inertia_diag") ||
        read_vec(need(chassis, "com", "chassis"), d->ccom, 3, "chassis.com") ||
        read_number(wheels, "radius", &d->radius, "wheels") || read_number(wheels, "width", &d->width, "wheels") ||
        read_number(wheels, "collision_envelope_nsc", &d->envelope, "wheels") ||
        read_number(mat, "friction", &d->friction, "wheels.material_nsc") ||
        read_number(mat, "restitution", &d->restitution, "wheels.material_nsc"))
        return -1;
    /* lift: the lowest wheel point of the as-built pose on z = 0 */
    double bottom = INFINITY;
    d->rear_x = INFINITY;
    for (int w = 0; w < 6; w++) {
        const cJSON* p = need(parts, WHEELS[w], "parts");
        double o[3], a[3];
        if (!p || read_vec(need(p, "frame_origin", WHEELS[w]), o, 3, "frame_origin") ||
            read_vec(need(p, "spin_axis", WHEELS[w]), a, 3, "spin_axis"))
            return -1;
        double an = sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]);
        double az = a[2] / an, hz = sqrt(fmax(0.0, 1.0 - az * az));
        double b = o[2] - d->radius * hz - 0.5 * d->width * fabs(az);
        if (b < bottom) bottom = b;
        if (o[0] < d->rear_x) {
            d->rear_x = o[0];
            d->wheel_z = o[2];
        }
    }
    d->lift = -bottom;
    d->wheel_z += d->lift;
    return 0;
}

/* The rover's bodies (after the ones already written: starts with ",\n"). */
static int write_rover_bodies(FILE* f, const cJSON* root, const rover_data* d, int grousers)
{
    const cJSON* parts = need(root, "parts", "");
    double pos[3] = {d->ccom[0], d->ccom[1], d->ccom[2] + d->lift};
    fprintf(f, ",\n    {\"name\": \"chassis\", \"mass\": ");
    rover_write_number(f, d->cmass);
    fprintf(f, ", \"inertia\": ");
    rover_write_vector(f, d->cdiag, 3);
    fprintf(f, ", \"position\": ");
    rover_write_vector(f, pos, 3);
    fprintf(f, "}");
    for (int i = 0; i < 17; i++) {
        const cJSON* p = need(parts, PARTS[i], "parts");
        double mass, com[3], J[9];
        if (!p || read_number(p, "mass", &mass, PARTS[i]) || read_vec(need(p, "com", PARTS[i]), com, 3, "com"))
            return -1;
        const cJSON* jj = need(p, "inertia_about_com", PARTS[i]);
        if (!cJSON_IsArray(jj) || cJSON_GetArraySize(jj) != 3) {
            fprintf(stderr, "rover_scene: %s.inertia_about_com: expected 3 rows\n", PARTS[i]);
            return -1;
        }
        int r = 0;
        for (const cJSON* row = jj->child; row; row = row->next, r++)
            if (read_vec(row, J + 3 * r, 3, "inertia_about_com")) return -1;
        double x[3] = {com[0], com[1], com[2] + d->lift};
        fprintf(f, ",\n    {\"name\": \"%s\", \"mass\": ", PARTS[i]);
        rover_write_number(f, mass);
        fprintf(f, ",\n     \"inertia\": [");
        for (int k = 0; k < 3; k++) {
            if (k) fputs(", ", f);
            rover_write_vector(f, J + 3 * k, 3);
        }
        fprintf(f, "],\n     \"position\": ");
        rover_write_vector(f, x, 3);
        if (strncmp(PARTS[i], "wheel_", 6) == 0) {
            double o[3], a[3], q[4], off[3];
            if (read_vec(need(p, "frame_origin", PARTS[i]), o, 3, "frame_origin") ||
                read_vec(need(p, "spin_axis", PARTS[i]), a, 3, "spin_axis"))
                return -1;
            double an = sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]);
            for (int k = 0; k < 3; k++) {
                a[k] /= an;
                off[k] = o[k] - com[k];
            }
            quat_z_to(a, q);
            fprintf(f, ",\n     \"shapes\": [{\"type\": \"cylinder\", \"radius\": ");
            rover_write_number(f, d->radius);
            fprintf(f, ", \"half_length\": ");
            rover_write_number(f, 0.5 * d->width);
            fprintf(f, ", \"position\": ");
            rover_write_vector(f, off, 3);
            fprintf(f, ", \"orientation\": ");
            rover_write_vector(f, q, 4);
            fprintf(f, ", \"material\": \"wheel\"}");
            rover_options ro = rover_default_options();
            for (int g = 0; g < grousers; g++) {
                double gp[3], gq[4], he[3] = {0.5 * ro.grouser_thickness, 0.5 * d->width, ro.grouser_height};
                rover_grouser_pose(a, g, grousers, d->radius, gp, gq);
                for (int k = 0; k < 3; k++) gp[k] += off[k];
                fprintf(f, ",\n       {\"type\": \"box\", \"half_extents\": ");
                rover_write_vector(f, he, 3);
                fprintf(f, ", \"position\": ");
                rover_write_vector(f, gp, 3);
                fprintf(f, ", \"orientation\": ");
                rover_write_vector(f, gq, 4);
                fprintf(f, ", \"material\": \"wheel\"}");
            }
            fprintf(f, "]");
        }
        fprintf(f, "}");
    }
    return 0;
}

/* spherical: spherical joints at both ends of the differential links (no
 * redundant rows) instead of the source model's revolutes */
static int write_joints(FILE* f, const cJSON* root, const rover_data* d, double speed, bool spherical)
{
    const cJSON* joints = need(root, "joints", "");
    if (!joints) return -1;
    fprintf(f, "  \"joints\": [\n");
    int j = 0;
    for (const cJSON* it = joints->child; it; it = it->next, j++) {
        const cJSON* jn = need(it, "name", "joints");
        const cJSON* jt = need(it, "type", "joints");
        const cJSON* ja = need(it, "body_a", "joints");
        const cJSON* jb = need(it, "body_b", "joints");
        double p[3], ax[3];
        if (!cJSON_IsString(jn) || !cJSON_IsString(jt) || !cJSON_IsString(ja) || !cJSON_IsString(jb) ||
            read_vec(need(it, "position", "joints"), p, 3, "position") ||
            read_vec(need(it, "axis", "joints"), ax, 3, "axis"))
            return -1;
        const char* type = jt->valuestring;
        const char *a = ja->valuestring, *b = jb->valuestring;
        bool drive = strncmp(type, "rotational speed motor", 22) == 0;
        const char* kind = strncmp(type, "revolute", 8) == 0 || drive ? "revolute"
                           : strncmp(type, "fixed", 5) == 0          ? "fixed"
                           : strncmp(type, "spherical", 9) == 0      ? "spherical"
                                                                     : NULL;
        if (!kind) {
            fprintf(stderr, "rover_scene: joints[%d].type: unknown \"%s\"\n", j, type);
            return -1;
        }
        if (spherical && (strncmp(a, "diff_link", 9) == 0 || strncmp(b, "diff_link", 9) == 0)) kind = "spherical";
        if (drive && strncmp(a, "wheel_", 6) == 0) { /* carrier = body_a, wheel = body_b */
            const char* t = a;
            a = b;
            b = t;
        }
        double anchor[3] = {p[0], p[1], p[2] + d->lift};
        fprintf(f, "%s    {\"name\": \"%s\", \"type\": \"%s\", \"body_a\": \"%s\", \"body_b\": \"%s\", \"anchor\": ",
                j ? ",\n" : "", jn->valuestring, kind, a, b);
        rover_write_vector(f, anchor, 3);
        if (strcmp(kind, "revolute") == 0) {
            fprintf(f, ", \"axis\": ");
            rover_write_vector(f, ax, 3);
        }
        if (drive && speed != 0.0) {
            fprintf(f, ",\n     \"motor\": {\"type\": \"speed\", \"speed\": ");
            rover_write_number(f, speed);
            fprintf(f, ", \"ramp_time\": ");
            rover_write_number(f, THESIS_RAMP);
            fprintf(f, "}");
        }
        fprintf(f, "}");
    }
    fprintf(f, "\n  ],\n");
    return 0;
}

/* The probes of the obstacle scenes, sampled every `every` steps. grains:
 * the "with" value naming the scene's grain generators (JSON text), or NULL
 * on rigid ground; pad: one more probe, the force of the right-hand pad
 * (TRACKS_HEX_PAD). */
static void obstacle_probes(FILE* f, int every, const char* grains, bool pad)
{
    fprintf(f, "  \"probes\": [\n");
    fprintf(f,
            "    {\"name\": \"crossing_side_forces\", \"title\": \"Resultant contact force, right-hand (crossing) "
            "wheels\",\n"
            "     \"what\": \"contact_force\", \"component\": \"magnitude\", \"average\": true, \"every\": %d, \"bodies\": [\"wheel_RF\", "
            "\"wheel_RM\", \"wheel_RB\"]},\n",
            every);
    fprintf(f,
            "    {\"name\": \"crossing_side_loads\", \"title\": \"Normal load, right-hand (crossing) wheels\",\n"
            "     \"what\": \"contact_force\", \"component\": \"normal\", \"average\": true, \"every\": %d, \"bodies\": [\"wheel_RF\", "
            "\"wheel_RM\", \"wheel_RB\"]},\n",
            every);
    fprintf(f,
            "    {\"name\": \"other_side_forces\", \"title\": \"Resultant contact force, left-hand wheels\",\n"
            "     \"what\": \"contact_force\", \"component\": \"magnitude\", \"average\": true, \"every\": %d, \"bodies\": [\"wheel_LF\", "
            "\"wheel_LM\", \"wheel_LB\"]},\n",
            every);
    fprintf(f,
            "    {\"name\": \"other_side_loads\", \"title\": \"Normal load, left-hand wheels\",\n"
            "     \"what\": \"contact_force\", \"component\": \"normal\", \"average\": true, \"every\": %d, \"bodies\": [\"wheel_LF\", "
            "\"wheel_LM\", \"wheel_LB\"]},\n",
            every);
    { /* vertical loads: f_n also counts the obstacle's backward push and, on grains, a grousered wheel's
         sideways and forward pushes */
        fprintf(f,
                "    {\"name\": \"crossing_side_up\", \"title\": \"Vertical load, right-hand (crossing) wheels\",\n"
                "     \"what\": \"contact_force\", \"component\": \"up\", \"average\": true, \"every\": %d, \"bodies\": [\"wheel_RF\", "
                "\"wheel_RM\", \"wheel_RB\"]},\n",
                every);
        fprintf(f,
                "    {\"name\": \"other_side_up\", \"title\": \"Vertical load, left-hand wheels\",\n"
                "     \"what\": \"contact_force\", \"component\": \"up\", \"average\": true, \"every\": %d, \"bodies\": [\"wheel_LF\", "
                "\"wheel_LM\", \"wheel_LB\"]},\n",
                every);
    }
    /* the obstacle's share: its force alone on each crossing-side wheel */
    fprintf(f,
            "    {\"name\": \"crossing_side_obstacle_up\", \"title\": \"Vertical force of the obstacle alone, "
            "right-hand wheels\",\n"
            "     \"what\": \"contact_force\", \"component\": \"up\", \"with\": \"obstacle\", \"average\": true, "
            "\"every\": %d, \"bodies\": [\"wheel_RF\", \"wheel_RM\", \"wheel_RB\"]},\n",
            every);
    fprintf(f,
            "    {\"name\": \"crossing_side_obstacle_back\", \"title\": \"Backward (-x) force of the obstacle "
            "alone, right-hand wheels\",\n"
            "     \"what\": \"contact_force\", \"component\": [-1, 0, 0], \"with\": \"obstacle\", \"average\": "
            "true, \"every\": %d, \"bodies\": [\"wheel_RF\", \"wheel_RM\", \"wheel_RB\"]},\n",
            every);
    if (pad)
        fprintf(f,
                "    {\"name\": \"crossing_side_pad_up\", \"title\": \"Vertical force of the pad alone, right-hand "
                "wheels\",\n"
                "     \"what\": \"contact_force\", \"component\": \"up\", \"with\": \"pad\", \"average\": true, "
                "\"every\": %d, \"bodies\": [\"wheel_RF\", \"wheel_RM\", \"wheel_RB\"]},\n",
                every);
    if (grains) { /* the grains' share: their force alone on each wheel (the traction is its forward part) */
        static const char* const SIDE[2][3] = {
            {"crossing_side", "right-hand", "\"wheel_RF\", \"wheel_RM\", \"wheel_RB\""},
            {"other_side", "left-hand", "\"wheel_LF\", \"wheel_LM\", \"wheel_LB\""}};
        for (int s = 0; s < 2; s++) {
            fprintf(f,
                    "    {\"name\": \"%s_grains_up\", \"title\": \"Vertical force of the grains alone, %s wheels\",\n"
                    "     \"what\": \"contact_force\", \"component\": \"up\", \"with\": %s, \"average\": true, "
                    "\"every\": %d, \"bodies\": [%s]},\n",
                    SIDE[s][0], SIDE[s][1], grains, every, SIDE[s][2]);
            fprintf(f,
                    "    {\"name\": \"%s_grains_fwd\", \"title\": \"Forward (+x) force of the grains alone, %s "
                    "wheels\",\n"
                    "     \"what\": \"contact_force\", \"component\": [1, 0, 0], \"with\": %s, \"average\": true, "
                    "\"every\": %d, \"bodies\": [%s]},\n",
                    SIDE[s][0], SIDE[s][1], grains, every, SIDE[s][2]);
        }
    }
    fprintf(f,
            "    {\"name\": \"crossing_side_speeds\", \"title\": \"Right-hand wheels: forward speed, rim speed, slip "
            "ratio\",\n"
            "     \"what\": \"wheel_slip\", \"every\": %d, \"bodies\": [\"wheel_RF\", \"wheel_RM\", \"wheel_RB\"]},\n",
            every);
    fprintf(f,
            "    {\"name\": \"other_side_speeds\", \"title\": \"Left-hand wheels: forward speed, rim speed, slip "
            "ratio\",\n"
            "     \"what\": \"wheel_slip\", \"every\": %d, \"bodies\": [\"wheel_LF\", \"wheel_LM\", \"wheel_LB\"]},\n",
            every);
    fprintf(f,
            "    {\"name\": \"crossing_side_wheels\", \"title\": \"Right-hand wheel centres\", \"what\": \"position\", "
            "\"every\": %d,\n"
            "     \"bodies\": [\"wheel_RF\", \"wheel_RM\", \"wheel_RB\"]},\n",
            every);
    fprintf(f, "    {\"name\": \"chassis_position\", \"title\": \"Chassis position\", \"what\": \"position\", \"every\": "
               "%d, \"body\": \"chassis\"},\n",
            every);
    fprintf(f, "    {\"name\": \"chassis_velocity\", \"title\": \"Chassis velocity\", \"what\": \"velocity\", \"every\": "
               "%d, \"body\": \"chassis\"},\n",
            every);
    fprintf(f, "    {\"name\": \"chassis_attitude\", \"title\": \"Chassis roll, pitch (+ nose down) and yaw\", \"what\": "
               "\"attitude\", \"every\": %d, \"body\": \"chassis\"},\n",
            every);
    fprintf(f, "    {\"name\": \"suspension_attitude\", \"title\": \"Right rocker and bogie attitude\", \"what\": "
               "\"attitude\", \"every\": %d,\n     \"bodies\": [\"rocker_R\", \"bogie_R\"]},\n",
            every);
    fprintf(f, "    {\"name\": \"rocker_pivots\", \"title\": \"Rocker pivot reactions (on the chassis)\", \"what\": "
               "\"joint_reaction\", \"average\": true, \"every\": %d,\n     \"joints\": [\"rocker_pivot_L\", \"rocker_pivot_R\"]},\n",
            every);
    if (grains)
        fprintf(f, "    {\"name\": \"kinetic_energy\", \"what\": \"kinetic_energy\", \"every\": %d},\n", every);
    fprintf(f, "    {\"name\": \"solver\", \"what\": \"solver\", \"every\": %d}\n  ]\n}\n", every);
}

/* The grain generators' names: the bed (the strip under the right-hand
 * wheels on the reduced beds), and the strip under the left-hand wheels
 * (TRACKS_HEX and its variants). The _pad scene splits each strip in two at
 * the pads; the second parts are NAME_front, and the grain probes name only
 * the first (the grains the wheels drive on before the obstacle). */
/* The end of the grousered scenes' descriptions: grousers, speed, duration. */
static void grousered_tail(FILE* f, const spec* sp, double duration)
{
    fprintf(f, "%d grousers of 0.02 m on every wheel; wheels at %g rad/s after a %g s ramp, %g s. Written by "
               "studies/rover/rover_scene.c.\",\n",
            sp->grousers, sp->speed, THESIS_RAMP, duration);
}

static const char* bed_name(scene_kind kind) { return kind == GRANULAR || kind == GRANULAR_HEX ? "bed" : "strip"; }
#define LEFT_STRIP_NAME "strip_left"

/* A granular_bed generator of the grains, up to its "material" (the caller
 * adds further keys and the closing brace). */
static void bed_generator(FILE* f, const char* name, const double lo[3], const double hi[3], bool hex, int seed)
{
    fprintf(f, "    {\"type\": \"granular_bed\", \"name\": \"%s\", \"region\": {\"min\": ", name);
    rover_write_vector(f, lo, 3);
    fprintf(f, ", \"max\": ");
    rover_write_vector(f, hi, 3);
    fprintf(f, "},\n     \"radius\": ");
    rover_write_number(f, GRAIN_RADIUS);
    fprintf(f, ", \"gap\": ");
    rover_write_number(f, GRAIN_GAP);
    /* jitter: at most gap/2 (cubic), gap/(2√3) (hexagonal) */
    fprintf(f, ", %s\"seed\": %d, \"density\": ",
            hex ? "\"packing\": \"hexagonal\", \"jitter\": 0.00025, " : "\"jitter\": 0.0004, ", seed);
    rover_write_number(f, GRAIN_DENSITY);
    fprintf(f, ", \"material\": \"grain\"");
}

/* Layers of the hexagonal full bed: the fewest whose lattice sites on the
 * 6 × 3.8 m footprint (the hexagonal formulas of docs/scene-format.md) hold
 * the thesis's count; check() confirms that the generator makes that many
 * once the obstacle's cells are left out. */
static int granular_hex_layers(void)
{
    const double s = 2.0 * GRAIN_RADIUS + GRAIN_GAP;
    const long nx = (long)floor((6.0 - 1.5 * s) / s + 1e-9) + 1;
    const long ny = (long)floor((3.8 - (1.0 + 1.0 / (2.0 * sqrt(3.0))) * s) / (s * sqrt(3.0) / 2.0) + 1e-9) + 1;
    return (int)((THESIS_GRAINS + nx * ny - 1) / (nx * ny));
}

static int write_scene(const cJSON* root, const spec* sp, int grousers, const char* path)
{
    rover_data d;
    if (read_rover(root, sp->variant, &d)) return -1;
    if (grousers > 0 && sp->kind != STATICS) { /* grouser 0 points straight down: its tip on z = 0, as
                                                * rover_model.c's on_ground puts it, not inside the bed */
        const double h = rover_default_options().grouser_height;
        d.lift += h;
        d.wheel_z += h;
    }
    const bool pad = sp->kind == TRACKS_HEX_PAD, patch = sp->kind == TRACKS_HEX_PATCH;
    const bool slick = sp->kind == TRACKS_SLICK;
    const bool no_grains = sp->kind == TRACKS_RIGID || slick;
    const bool tracks = sp->kind == TRACKS_HEX || pad || patch || no_grains;
    const bool roll = sp->kind == STRIP_HEX_ROLL;
    const bool full = sp->kind == GRANULAR || sp->kind == GRANULAR_HEX; /* the thesis's whole bed */
    const bool hex = sp->kind == STRIP_HEX || roll || sp->kind == STRIP_HEX_DEM || tracks || sp->kind == GRANULAR_HEX;
    const bool strip = (sp->kind == STRIP || hex) && !full;
    const bool bed = full || strip;
    char lower[32];
    size_t n = strlen(sp->variant);
    for (size_t k = 0; k <= n && k < sizeof lower; k++)
        lower[k] = (char)(sp->variant[k] >= 'A' && sp->variant[k] <= 'Z' ? sp->variant[k] + 32 : sp->variant[k]);

    /* rigid: long enough that the rear wheel has crossed, from the geometry:
     * the rear wheel leaves the obstacle at travel L (leave_travel), then
     * 0.3 m more to settle and 0.15 m for the slip while climbing, at the
     * no-slip speed ω r after the ramp (which costs ramp/2) */
    double duration = sp->duration;
    const double v = sp->speed * d.radius;
    const double rear_leave = leave_travel(d.rear_x, d.wheel_z, d.radius);
    if (duration == 0.0) duration = 5.0 * ceil(((rear_leave + 0.45) / v + 0.5 * THESIS_RAMP) / 5.0);

    FILE* f = fopen(path, "w");
    if (!f) {
        perror(path);
        return -1;
    }
    const char* stem = sp->file;
    fprintf(f, "{\n  \"name\": \"%.*s\",\n", (int)(strlen(stem) - 5), stem);
    switch (sp->kind) {
    case STATICS:
        if (sp->coulomb)
            fprintf(f, "  \"description\": \"rover_statics_%s.json under Coulomb's law (formulation.friction_law "
                       "\\\"coulomb\\\", Lemke's Coulomb LCP): at rest every contact sticks, where the two laws "
                       "agree; the lateral wheel forces (probe wheel_forces) are internal forces of the rigid rover "
                       "and sum to zero under both (written by studies/rover/rover_scene.c from "
                       "data/rover/rocker_bogie_rover.json).\",\n",
                    lower);
        else
            fprintf(f, "  \"description\": \"The rocker-bogie rover (%s variant) at rest on flat ground; the six "
                       "wheel loads settle to the static loads of the reference (written by studies/rover/rover_scene.c "
                       "from data/rover/rocker_bogie_rover.json).\",\n",
                    sp->variant);
        break;
    case RIGID_DEM:
        fprintf(f,
                "  \"description\": \"rover_obstacle_rigid.json in DEM mode: Hertz contacts with the reference's SMC "
                "material (E = 2e7 Pa, nu = 0.3, mu = 0.4, restitution 0) on the ground, the obstacle and the wheels, "
                "dt = 1e-4 s (the stiffest contact, a wheel rim point under ~240 N: k ~ 3.5e5 N/m on 1.78 kg, "
                "0.1 sqrt(m/k) = 2.3e-4 s), and spherical joints at the differential links' ends (the revolutes are "
                "redundant: DEM then hands the joint rows to the CCP solver every step, 20 times slower). Wheel speed "
                "%g rad/s after a %g s ramp; %g s. Written by studies/rover/rover_scene.c.\",\n",
                sp->speed, THESIS_RAMP, duration);
        break;
    case RIGID:
        fprintf(f,
                "  \"description\": \"The rocker-bogie rover (%s variant) on flat rigid ground drives over a "
                "hemisphere of radius 0.15 m centred at (1.6, -1.0) under its right-hand wheels (the obstacle "
                "crossing of Horvat 2024, section 6). Wheel speed %g rad/s after "
                "a %g s linear ramp (%.4f m/s without slip); the rear wheel leaves the obstacle after %.3f m of travel, "
                "so %g s covers it with 0.45 m to spare. Written by studies/rover/rover_scene.c.\",\n",
                sp->variant, sp->speed, THESIS_RAMP, v, rear_leave, duration);
        break;
    case GRANULAR:
        fprintf(f,
                "  \"description\": \"The granular case of Horvat 2024, section 6.2: the rocker-bogie rover (%s) "
                "on a 6 x 3.8 m bed of 53,728 spheres (radius 0.03 m, density 2000, friction 0.4; 9 layers, 0.549 m "
                "deep) in four walls, over a 0.15 m obstacle cap at (1.6, -1.0) under its right-hand wheels, "
                "wheels at %g rad/s after a %g s ramp, 30 s. Written by studies/rover/rover_scene.c.\",\n",
                sp->variant, sp->speed, THESIS_RAMP);
        break;
    case GRANULAR_HEX:
        fprintf(f,
                "  \"description\": \"The granular case of Horvat 2024, section 6.2, on a bed that holds: the "
                "rocker-bogie rover (%s) on the thesis's 53,728 spheres (radius 0.03 m, density 2000, friction 0.4) "
                "over its 6 x 3.8 m footprint in hexagonal close packing (%d layers, %.3f m deep, the top one partly "
                "filled), moved 0.5 m forward (x from %g to %g m) so that the rear wheel crosses the 0.15 m obstacle "
                "cap at (1.6, -1.0) before the front wheel meets the end wall; spherical joints at the differential "
                "links' ends (the source model's revolutes there lock the loop once the bed tilts the rockers); ",
                sp->variant, granular_hex_layers(),
                (2.0 * GRAIN_RADIUS + GRAIN_GAP) * (1.0 + (granular_hex_layers() - 1) * sqrt(2.0 / 3.0)),
                GRANULAR_HEX_X0, GRANULAR_HEX_X0 + 6.0);
        grousered_tail(f, sp, duration);
        break;
    case STRIP_HEX:
        fprintf(f,
                "  \"description\": \"rover_obstacle_granular_strip.json with a bed that holds and wheels that grip: "
                "3 layers of hexagonal close packing (0.16 m deep; the thesis's cubic lattice collapses under the "
                "wheels) and ");
        grousered_tail(f, sp, duration);
        break;
    case STRIP_HEX_ROLL:
        fprintf(f,
                "  \"description\": \"rover_obstacle_granular_strip_hex.json with rolling resistance between the "
                "grains: an arm of %g m (a tenth of their radius) on grain-grain contacts only, some of the "
                "interlocking that angular sand grains have and spheres lack (docs/rover.md); ",
                GRAIN_ROLLING);
        grousered_tail(f, sp, duration);
        break;
    case STRIP_HEX_DEM:
        fprintf(f,
                "  \"description\": \"rover_obstacle_granular_strip_hex.json in DEM mode: Hertz contacts with the "
                "reference's SMC material (E = 2e7 Pa, nu = 0.3, mu = 0.4, restitution 0) on the grains, the walls, "
                "the track, the obstacle and the wheels, dt = 1e-4 s (a grain of 0.226 kg pressed by a wheel with ~75 N: "
                "k ~ 9e4 N/m, 0.1 sqrt(m/k) = 1.6e-4 s; the wheels as in rover_obstacle_rigid_dem.json), and "
                "spherical joints at the differential links' ends; ");
        grousered_tail(f, sp, duration);
        break;
    case TRACKS_HEX:
        fprintf(f,
                "  \"description\": \"rover_obstacle_granular_strip_hex.json with a second strip, its mirror image, "
                "under the left-hand wheels instead of the rigid track: both sides sink and grip alike, so the rover "
                "drives straight; %d grousers of 0.02 m on every wheel; wheels at %g rad/s after a %g s ramp, %g s "
                "(the rear wheel is over the obstacle at 17.3 s and has landed by 19.1 s; at 20.5 s the front wheel "
                "meets the bed's end wall). Written by studies/rover/rover_scene.c.\",\n",
                sp->grousers, sp->speed, THESIS_RAMP, duration);
        break;
    case TRACKS_HEX_PAD:
        fprintf(f,
                "  \"description\": \"rover_obstacle_granular_tracks_hex.json with rigid pads instead of grains around "
                "the obstacle (x from %g to %g m on both strips, their tops at %g m, about where the grouser tips run in "
                "the ruts): the wheels on the flat run on grains, the climbing wheel meets the obstacle without grains "
                "at its foot (docs/rover.md); ",
                PATCH_X0, PATCH_X1, PAD_TOP);
        grousered_tail(f, sp, duration);
        break;
    case TRACKS_HEX_PATCH:
        fprintf(f,
                "  \"description\": \"The converse of rover_obstacle_granular_tracks_hex_pad.json: grains only around "
                "the obstacle (x from %g to %g m on both strips), rigid flats level with the bed's top elsewhere "
                "(docs/rover.md); ",
                PATCH_X0, PATCH_X1);
        grousered_tail(f, sp, duration);
        break;
    case TRACKS_RIGID:
        fprintf(f,
                "  \"description\": \"rover_obstacle_granular_tracks_hex_patch.json without grains: rigid flats level "
                "with the bed's top under both sides, the same walls, grousered wheels and solver settings, the "
                "reference for the _pad and _patch scenes (docs/rover.md); ");
        grousered_tail(f, sp, duration);
        break;
    case TRACKS_SLICK:
        fprintf(f,
                "  \"description\": \"rover_obstacle_tracks_rigid.json with the flats' friction lowered to %g, about "
                "the pull per unit load that the wheels on the bed's flat get while another wheel climbs, except "
                "around the obstacle (x from %g to %g m on both strips), where it stays %g (docs/rover.md); ",
                SLICK_FRICTION, PATCH_X0, PATCH_X1, d.friction);
        grousered_tail(f, sp, duration);
        break;
    case STRIP:
        fprintf(f,
                "  \"description\": \"A strip of the thesis's granular bed (3 layers of spheres of radius 0.03 m, "
                "density 2000, friction 0.4) under the right-hand wheels of the rocker-bogie rover (%s), the "
                "left-hand wheels on a rigid track level with it, over a 0.15 m obstacle cap at (1.6, -1.0); wheels "
                "at %g rad/s after a %g s ramp (%.2f m/s without slip), long enough for the rear wheel to cross. "
                "Written by studies/rover/rover_scene.c.\",\n",
                sp->variant, sp->speed, THESIS_RAMP, v);
        break;
    }
    fprintf(f, "  \"units\": \"SI\",\n  \"gravity\": [0, 0, -9.81],\n");
    /* rigid obstacle scenes also carry the reference's SMC material (E, ν),
     * which only the DEM method reads: `--method dem --dt 1e-4` runs them
     * with Hertz contacts */
    const bool dem = sp->kind == RIGID_DEM || sp->kind == STRIP_HEX_DEM;
    const char* smc = sp->kind == RIGID || dem ? ", \"young_modulus\": 2e7, \"poisson_ratio\": 0.3" : "";
    fprintf(f, "  \"materials\": {\n    \"ground\": {\"friction\": ");
    rover_write_number(f, d.friction);
    fprintf(f, "%s},\n", smc);
    if (sp->kind != STATICS) {
        fprintf(f, "    \"obstacle\": {\"friction\": ");
        rover_write_number(f, d.friction);
        fprintf(f, "%s},\n", smc);
    }
    if (slick) {
        fprintf(f, "    \"flat\": {\"friction\": ");
        rover_write_number(f, SLICK_FRICTION);
        fprintf(f, "},\n");
    }
    if (bed && !no_grains) {
        fprintf(f, "    \"grain\": {\"friction\": ");
        rover_write_number(f, GRAIN_FRICTION);
        if (roll) {
            fprintf(f, ", \"rolling_friction\": ");
            rover_write_number(f, GRAIN_ROLLING);
        }
        fprintf(f, "%s, \"comment\": \"the thesis's restitution 0.9 acts only above the bounce threshold (0.5 m/s), "
                   "which no impact in the bed reaches; 0 here\"},\n",
                smc);
    }
    fprintf(f, "    \"wheel\": {\"friction\": ");
    rover_write_number(f, d.friction);
    fprintf(f, ", \"restitution\": ");
    rover_write_number(f, d.restitution);
    if (bed)
        fprintf(f, "%s}\n  },\n", smc);
    else
        fprintf(f, ", \"compliance\": 1e-8%s, \"comment\": \"a stiff contact (2-8 um at the rover's loads) makes "
                   "each wheel's load split between its two rim points unique\"}\n  },\n",
                smc);

    /* bodies */
    fprintf(f, "  \"bodies\": [\n");
    const double s = 2.0 * GRAIN_RADIUS + GRAIN_GAP;
    double bed_lo[3] = {0, 0, 0}, bed_hi[3] = {0, 0, 0};
    if (!bed) {
        fprintf(f, "    {\"name\": \"ground\", \"type\": \"fixed\", \"shapes\": [{\"type\": \"plane\", \"material\": "
                   "\"ground\"}]}");
    } else {
        /* the bed: n layers of cells of side s, its top cell face at z = 0 */
        int layers = sp->kind == GRANULAR ? 9 : sp->kind == GRANULAR_HEX ? granular_hex_layers() : 3;
        if (sp->kind == GRANULAR) { /* the thesis's box: 6 × 3.8 m centred at (1, 0) */
            bed_lo[0] = -2.0, bed_hi[0] = 4.0;
            bed_lo[1] = -1.9, bed_hi[1] = 1.9;
        } else if (sp->kind == GRANULAR_HEX) { /* the same footprint, 0.5 m forward */
            bed_lo[0] = GRANULAR_HEX_X0, bed_hi[0] = GRANULAR_HEX_X0 + 6.0;
            bed_lo[1] = -1.9, bed_hi[1] = 1.9;
        } else { /* the strip under the right-hand wheels, long enough for the crossing */
            bed_lo[0] = -1.6, bed_hi[0] = 4.7;
            bed_lo[1] = -1.5, bed_hi[1] = -0.62;
        }
        /* hexagonal layers are s·√(2/3) apart: the top spheres' tops at 0 */
        bed_lo[2] = hex ? -(s + (layers - 1) * s * sqrt(2.0 / 3.0)) : -layers * s;
        bed_hi[2] = 0.0;
        /* tracks: the floor spans both strips (the left one is the mirror image in y = 0) */
        double floor_c[3] = {0.5 * (bed_lo[0] + bed_hi[0]), tracks ? 0.0 : 0.5 * (bed_lo[1] + bed_hi[1]),
                             bed_lo[2] - 0.05};
        double floor_h[3] = {0.5 * (bed_hi[0] - bed_lo[0]) + 0.1,
                             tracks ? -bed_lo[1] + 0.1 : 0.5 * (bed_hi[1] - bed_lo[1]) + 0.1, 0.05};
        fprintf(f, "    {\"name\": \"ground\", \"type\": \"fixed\", \"position\": ");
        rover_write_vector(f, floor_c, 3);
        fprintf(f, ", \"shapes\": [{\"type\": \"box\", \"half_extents\": ");
        rover_write_vector(f, floor_h, 3);
        fprintf(f, ", \"material\": \"ground\"}]}");
        /* four walls, 0.1 m thick, 0.3 m above the bed */
        const double t = 0.05, top = 0.3, hz = 0.5 * (top - bed_lo[2]), cz = 0.5 * (top + bed_lo[2]);
        double cx = 0.5 * (bed_lo[0] + bed_hi[0]), cy = 0.5 * (bed_lo[1] + bed_hi[1]);
        double lx = 0.5 * (bed_hi[0] - bed_lo[0]), ly = 0.5 * (bed_hi[1] - bed_lo[1]);
        double c1[3] = {cx, bed_lo[1] - t, cz}, c2[3] = {cx, bed_hi[1] + t, cz};
        double c3[3] = {bed_lo[0] - t, cy, cz}, c4[3] = {bed_hi[0] + t, cy, cz};
        double h12[3] = {lx + 2 * t, t, hz}, h34[3] = {t, ly, hz};
        box_body(f, "wall_right", c1, h12, "ground");
        box_body(f, "wall_left", c2, h12, "ground");
        box_body(f, "wall_back", c3, h34, "ground");
        box_body(f, "wall_front", c4, h34, "ground");
        if (tracks) { /* the left strip's walls: the mirror images of the right strip's */
            double m1[3] = {cx, -c2[1], cz}, m2[3] = {cx, -c1[1], cz}, m3[3] = {c3[0], -cy, cz}, m4[3] = {c4[0], -cy, cz};
            box_body(f, "left_wall_right", m1, h12, "ground");
            box_body(f, "left_wall_left", m2, h12, "ground");
            box_body(f, "left_wall_back", m3, h34, "ground");
            box_body(f, "left_wall_front", m4, h34, "ground");
        } else if (strip) { /* the left-hand wheels' rigid track, its top level with the bed's top cells */
            double c[3] = {cx, 1.1, -0.25}, h[3] = {lx, 0.5, 0.25};
            box_body(f, "left_track", c, h, "ground");
        }
    }
    if (sp->kind != STATICS) {
        fprintf(f, ",\n    {\"name\": \"obstacle\", \"type\": \"fixed\", \"position\": [");
        rover_write_number(f, OBSTACLE_X);
        fprintf(f, ", ");
        rover_write_number(f, OBSTACLE_Y);
        fprintf(f, ", 0], \"shapes\": [{\"type\": \"sphere\", \"radius\": ");
        rover_write_number(f, OBSTACLE_RADIUS);
        fprintf(f, ", \"material\": \"obstacle\"}]}");
    }
    if (write_rover_bodies(f, root, &d, sp->kind == STATICS ? 0 : grousers)) {
        fclose(f);
        return -1;
    }
    /* the stretches of the strips: grains, and the rigid boxes of the split scenes */
    span grain[2] = {{bed_lo[0], bed_hi[0], 0.0, "", NULL}}, rigid[3];
    int n_grain = 1, n_rigid = 0;
    if (pad) {
        grain[0].x1 = PATCH_X0, grain[1] = (span){PATCH_X1, bed_hi[0], 0.0, "_front", NULL}, n_grain = 2;
        rigid[0] = (span){PATCH_X0, PATCH_X1, PAD_TOP, "pad", NULL}, n_rigid = 1;
    } else if (patch) {
        grain[0].x0 = PATCH_X0, grain[0].x1 = PATCH_X1;
        rigid[0] = (span){bed_lo[0], PATCH_X0, 0.0, "flat_back", NULL};
        rigid[1] = (span){PATCH_X1, bed_hi[0], 0.0, "flat_front", NULL}, n_rigid = 2;
    } else if (slick) {
        rigid[0] = (span){bed_lo[0], PATCH_X0, 0.0, "flat_back", "flat"};
        rigid[1] = (span){PATCH_X0, PATCH_X1, 0.0, "pad", NULL};
        rigid[2] = (span){PATCH_X1, bed_hi[0], 0.0, "flat_front", "flat"}, n_rigid = 3, n_grain = 0;
    } else if (no_grains) {
        rigid[0] = (span){bed_lo[0], bed_hi[0], 0.0, "flat", NULL}, n_rigid = 1, n_grain = 0;
    }
    for (int k = 0; k < 2 && n_rigid > 0; k++) { /* under both strips, after the rover's bodies */
        const double y = k ? -0.5 * (bed_lo[1] + bed_hi[1]) : 0.5 * (bed_lo[1] + bed_hi[1]);
        for (int q = 0; q < n_rigid; q++) {
            const span* r = &rigid[q];
            double c[3] = {(r->x0 + r->x1) / 2, y, (bed_lo[2] + r->top) / 2};
            double h[3] = {(r->x1 - r->x0) / 2, 0.5 * (bed_hi[1] - bed_lo[1]), (r->top - bed_lo[2]) / 2};
            char name[32];
            snprintf(name, sizeof name, "%s%s", r->name, k ? "_left" : "");
            box_body(f, name, c, h, r->material ? r->material : "ground");
        }
    }
    fprintf(f, "\n  ],\n");

    /* the grain probes' "with": every grain generator of the scene, by the
     * names the loop below gives them */
    char grains[160];
    if (tracks || n_grain > 1) {
        size_t len = (size_t)snprintf(grains, sizeof grains, "[");
        for (int k = 0; k < (tracks ? 2 : 1); k++)
            for (int q = 0; q < n_grain; q++)
                len += (size_t)snprintf(grains + len, sizeof grains - len, "%s\"%s%s\"", k || q ? ", " : "",
                                        k ? LEFT_STRIP_NAME : bed_name(sp->kind), grain[q].name);
        snprintf(grains + len, sizeof grains - len, "]");
    } else {
        snprintf(grains, sizeof grains, "\"%s\"", bed_name(sp->kind));
    }
    if (bed && n_grain > 0) {
        fprintf(f, "  \"generators\": [\n");
        for (int k = 0; k < (tracks ? 2 : 1); k++) { /* the right-hand strip; its mirror image under the left wheels */
            for (int q = 0; q < n_grain; q++) {
                double lo[3] = {grain[q].x0, k ? -bed_hi[1] : bed_lo[1], bed_lo[2]};
                double hi[3] = {grain[q].x1, k ? -bed_lo[1] : bed_hi[1], bed_hi[2]};
                char name[32];
                snprintf(name, sizeof name, "%s%s", k ? LEFT_STRIP_NAME : bed_name(sp->kind), grain[q].name);
                if (k || q) fprintf(f, ",\n");
                bed_generator(f, name, lo, hi, hex, 1 + k + 10 * q);
                if (k == 0 && !pad) { /* the obstacle sits in the right-hand strip */
                    fprintf(f, ",%s\n     \"exclude\": [{\"centre\": [",
                            full ? " \"max_count\": 53728," : ""); /* THESIS_GRAINS */
                    rover_write_number(f, OBSTACLE_X);
                    fprintf(f, ", ");
                    rover_write_number(f, OBSTACLE_Y);
                    fprintf(f, ", 0], \"radius\": ");
                    rover_write_number(f, OBSTACLE_RADIUS);
                    fprintf(f, ", \"comment\": \"the obstacle\"}]");
                }
                fprintf(f, "}");
            }
        }
        fprintf(f, "\n  ],\n");
    }
    /* The full bed's crossing needs the non-redundant differential: with the
     * source model's revolutes at the link ends the loop's rows become
     * inconsistent once the bed tilts the rockers apart (RECORD.md,
     * "The full bed"); from t ≈ 1.6 s APGD stalled at a residual of 2.3e-4
     * whatever its iteration count, and the loop's joints opened by 0.16 mm
     * within 1.2 s, growing. */
    if (write_joints(f, root, &d, sp->speed, dem || sp->kind == GRANULAR_HEX)) {
        fclose(f);
        return -1;
    }

    switch (sp->kind) {
    case STATICS:
        fprintf(f, "  \"formulation\": {\n    \"method\": \"dvi\",\n    \"dt\": 0.002,\n    \"solver\": \"lemke\",\n");
        if (sp->coulomb)
            fprintf(f, "    \"friction_law\": \"coulomb\",\n    \"lemke\": {\"coulomb\": true, \"orient\": true},\n");
        fprintf(f, "    \"collision_envelope\": ");
        rover_write_number(f, d.envelope);
        fprintf(f, "\n  },\n  \"duration\": ");
        rover_write_number(f, sp->duration);
        fprintf(f, ".0,\n");
        fprintf(f, "  \"probes\": [\n");
        fprintf(f, "    {\"name\": \"wheel_loads\", \"what\": \"contact_force\", \"component\": \"up\", \"every\": 5,\n"
                   "     \"bodies\": [\"wheel_LF\", \"wheel_LM\", \"wheel_LB\", \"wheel_RF\", \"wheel_RM\", "
                   "\"wheel_RB\"]},\n");
        fprintf(f, "    {\"name\": \"wheel_forces\", \"what\": \"contact_force\", \"every\": 25,\n"
                   "     \"bodies\": [\"wheel_LF\", \"wheel_LM\", \"wheel_LB\", \"wheel_RF\", \"wheel_RM\", "
                   "\"wheel_RB\"]},\n");
        fprintf(f, "    {\"name\": \"chassis\", \"what\": \"position\", \"body\": \"chassis\", \"every\": 25},\n");
        fprintf(f, "    {\"name\": \"solver\", \"what\": \"solver\", \"every\": 5}\n  ]\n}\n");
        break;
    case RIGID_DEM:
    case STRIP_HEX_DEM:
        fprintf(f, "  \"formulation\": {\n    \"method\": \"dem\",\n    \"dt\": 1e-4,\n    \"solver\": \"lemke\",\n"
                   "    \"collision_envelope\": ");
        rover_write_number(f, sp->kind == RIGID_DEM ? d.envelope : GRANULAR_ENVELOPE);
        fprintf(f, ",\n    \"dem\": {\"normal_model\": \"hertz\"}\n  },\n  \"duration\": ");
        rover_write_number(f, duration);
        fprintf(f, ",\n");
        obstacle_probes(f, 200, sp->kind == STRIP_HEX_DEM ? grains : NULL, false);
        break;
    case RIGID:
        fprintf(f, "  \"formulation\": {\n    \"method\": \"dvi\",\n    \"dt\": 0.001,\n    \"solver\": \"lemke\",\n"
                   "    \"collision_envelope\": ");
        rover_write_number(f, d.envelope);
        fprintf(f, ",\n    \"dem\": {\"normal_model\": \"hertz\", \"comment\": \"read with --method dem (dt 1e-4)\"}");
        fprintf(f, "\n  },\n  \"duration\": ");
        rover_write_number(f, duration);
        fprintf(f, ",\n");
        obstacle_probes(f, 20, NULL, false);
        break;
    case GRANULAR:
    case GRANULAR_HEX:
    case STRIP:
    case STRIP_HEX:
    case STRIP_HEX_ROLL:
    case TRACKS_HEX:
    case TRACKS_HEX_PAD:
    case TRACKS_HEX_PATCH:
    case TRACKS_RIGID:
    case TRACKS_SLICK:
        /* APGD: the bed alone needs ~10 iterations a step at 1e-4, the rover's
         * joints (Delassus condition number ~6e7) far more: 100 keep them
         * within 3e-4 m (RECORD.md). The warm start damped to 0.85: a
         * tenth fewer iterations while the rover drives (docs/solvers.md) */
        fprintf(f, "  \"formulation\": {\n    \"method\": \"dvi\",\n    \"dt\": 0.001,\n    \"solver\": \"apgd\",\n"
                   "    \"tolerance\": 1e-4,\n    \"max_iterations\": 100,\n    \"warm_start_scale\": 0.85,\n"
                   "    \"collision_envelope\": ");
        rover_write_number(f, GRANULAR_ENVELOPE);
        fprintf(f, ",\n    \"contact_recovery_speed\": 0.1,\n    \"joint_recovery_speed\": 0.05\n  },\n");
        fprintf(f, "  \"duration\": ");
        rover_write_number(f, duration);
        fprintf(f, ",\n");
        obstacle_probes(f, 20, no_grains ? NULL : grains, sp->kind == TRACKS_HEX_PAD);
        break;
    }
    if (fclose(f) != 0) {
        perror(path);
        return -1;
    }
    return 0;
}

/* Loads the written scene back and builds it. grains > 0: its first
 * generator must make that many spheres. */
static int check(const char* path, int64_t grains)
{
    dvi_scene* s = NULL;
    dvi_scene_errors e;
    if (dvi_scene_load(path, &s, &e) != DVI_OK) {
        fprintf(stderr, "rover_scene: %s does not load:\n%s", path, e.text ? e.text : "");
        dvi_scene_errors_free(&e);
        return -1;
    }
    dvi_generator_info g;
    if (grains > 0 && (dvi_scene_get_generator(s, 0, &g) != DVI_OK || g.count != grains)) {
        fprintf(stderr, "rover_scene: %s: the bed does not make %lld spheres\n", path, (long long)grains);
        dvi_scene_destroy(s);
        return -1;
    }
    dvi_model* m = NULL;
    char msg[256];
    dvi_status st = dvi_model_create(s, &m, msg, sizeof msg);
    if (st != DVI_OK) fprintf(stderr, "rover_scene: %s does not build: %s\n", path, msg);
    dvi_model_destroy(m);
    dvi_scene_destroy(s);
    return st == DVI_OK ? 0 : -1;
}

int main(int argc, char** argv)
{
    const char* json = NULL;
    const char* dir = ".";
    int grousers = 0, positional = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--grousers") == 0 && i + 1 < argc) {
            grousers = atoi(argv[++i]);
            if (grousers < 0 || grousers > 360) {
                fprintf(stderr, "rover_scene: --grousers: expected 0 to 360\n");
                return 2;
            }
        } else if (argv[i][0] == '-' || positional >= 2) {
            fprintf(stderr, "usage: rover_scene [--grousers N] [REFERENCE_JSON [OUTPUT_DIR]]\n");
            return 2;
        } else if (positional++ == 0) {
            json = argv[i];
        } else {
            dir = argv[i];
        }
    }
    char found[4096];
    json = data_path_or(json, "rover/rocker_bogie_rover.json", found, sizeof found, "rover_scene");
    if (!json) return 2;
    dvi_status st = DVI_OK;
    char msg[512];
    cJSON* root = rover_load_json(json, &st, msg, sizeof msg);
    if (!root) {
        fprintf(stderr, "rover_scene: %s\n", msg);
        return 1;
    }
    int rc = 0;
    for (size_t v = 0; v < sizeof SPECS / sizeof SPECS[0]; v++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, SPECS[v].file);
        if (write_scene(root, &SPECS[v], SPECS[v].grousers > 0 ? SPECS[v].grousers : grousers, path) != 0 ||
            check(path, SPECS[v].kind == GRANULAR || SPECS[v].kind == GRANULAR_HEX ? THESIS_GRAINS : 0) != 0) {
            rc = 1;
            continue;
        }
        printf("wrote %s\n", path);
    }
    cJSON_Delete(root);
    return rc;
}
