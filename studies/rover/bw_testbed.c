/* bw_testbed — see bw_testbed.h. */
#include "bw_testbed.h"

#include "rover_model.h"

#include <dvi/scene.h>

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define GRAVITY 9.81
#define WHEEL_MASS BW_RIG_WHEEL_MASS

static void set_msg(char* msg, size_t size, const char* fmt, ...)
{
    if (!msg || size == 0) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, size, fmt, ap);
    va_end(ap);
}

bw_rig_config bw_rig_default(const char* soil)
{
    bw_rig_config c;
    memset(&c, 0, sizeof c);
    c.soil = soil;
    const int ding = soil && strcmp(soil, "ding2011") == 0;
    c.radius = ding ? 0.15735 : 0.09;
    c.width = ding ? 0.165 : 0.11;
    c.load = ding ? 80.0 : 50.0;
    c.rim_speed = 0.2;
    c.damping = 300.0;
    c.scm_spacing = 0.0025;
    c.scm_stiffness = 4e7;
    c.scm_damping = 3e3;
    c.ramp = 0.5;
    c.dt = 0.001;
    c.duration = 3.0;
    c.window_start = 2.0;
    return c;
}

static int soil_of(const char* name, dvi_bw_soil* s)
{
    if (name && strcmp(name, "ishigami2007") == 0) *s = dvi_bw_soil_ishigami2007();
    else if (name && strcmp(name, "ding2011") == 0) *s = dvi_bw_soil_ding2011();
    else return -1;
    return 0;
}

/* ---- the terrains: one row each ------------------------------------------------ */

/* The rig's path along the rail: the wheel's travel by the end, and a
 * margin either side. */
static double path_length(const bw_rig_config* c)
{
    return (1.0 - c->slip) * c->rim_speed * c->duration + 4.0 * c->radius + 0.2;
}

static double bw_start_sinkage(const bw_rig_config* c, const dvi_bw_soil* soil)
{
    dvi_bw_forces st;
    return dvi_bw_static(soil, c->radius, c->width, c->load, 0.0, 0.0, &st) == DVI_OK ? st.sinkage : -1.0;
}

static void bw_write_entry(FILE* f, const bw_rig_config* c, const dvi_bw_soil* soil)
{
    (void)soil;
    fprintf(f, "  \"terrain\": [{\"model\": \"bekker_wong\", \"wheels\": [\"wheel\"], \"soil\": \"%s\", "
               "\"ground\": {\"height\": 0}, \"damping\": ",
            c->soil);
    rover_write_number(f, c->damping);
    fputs("}],\n", f);
}

/* drawbar pull, lateral, normal, torque, sinkage, slip of the last step */
static int bw_measure(dvi_world* w, dvi_body_id wheel, const bw_rig_config* c, double q[6])
{
    (void)c, (void)wheel;
    dvi_bw_forces fw;
    if (dvi_bw_wheel_forces(w, 0, 0, &fw) != DVI_OK) return -1;
    q[0] = fw.drawbar_pull, q[1] = fw.lateral, q[2] = fw.normal, q[3] = fw.torque, q[4] = fw.sinkage;
    q[5] = fw.slip;
    return 0;
}

static double scm_start_sinkage(const bw_rig_config* c, const dvi_bw_soil* soil)
{
    (void)c, (void)soil;
    return 0.0;
}

/* The patch: along the rail from behind the wheel to past its travel,
 * 4r wider than the wheel. Janosi's K: the soil's K_x0. */
static void scm_write_entry(FILE* f, const bw_rig_config* c, const dvi_bw_soil* soil)
{
    const double back = 2.0 * c->radius + 0.1, half = 0.5 * c->width + 2.0 * c->radius;
    const double origin[3] = {-back, -half, 0.0}, size[2] = {path_length(c), 2.0 * half};
    fputs("  \"terrain\": [{\"model\": \"scm\", \"bodies\": [\"wheel\"], \"origin\": ", f);
    rover_write_vector(f, origin, 3);
    fputs(", \"size\": ", f);
    rover_write_vector(f, size, 2);
    const char* keys[9] = {"spacing", "k_c", "k_phi", "n", "cohesion", "friction_angle", "janosi_shear",
                           "elastic_stiffness", "damping"};
    const double vals[9] = {c->scm_spacing, soil->k_c, soil->k_phi, soil->n0, soil->cohesion, soil->friction_angle,
                            soil->K_x0, c->scm_stiffness, c->scm_damping};
    for (int k = 0; k < 9; k++) {
        fprintf(f, ", \"%s\": ", keys[k]);
        rover_write_number(f, vals[k]);
    }
    fputs("}],\n", f);
}

static int scm_measure(dvi_world* w, dvi_body_id wheel, const bw_rig_config* c, double q[6])
{
    const dvi_scm* soil = dvi_scm_of_element(w, 0);
    dvi_scm_body_contact bc;
    if (!soil || dvi_scm_get_body_contact(soil, wheel, &bc) != DVI_OK) return -1;
    double pos[3], vel[3], om[3];
    dvi_body_get_position(w, wheel, pos);
    dvi_body_get_velocity(w, wheel, vel);
    dvi_body_get_angular_velocity(w, wheel, om);
    q[0] = bc.force[0], q[1] = -bc.force[1], q[2] = bc.force[2], q[3] = -bc.torque[1];
    q[4] = c->radius - pos[2];
    q[5] = om[1] * c->radius > 0.0 ? 1.0 - vel[0] / (om[1] * c->radius) : 0.0;
    return 0;
}

typedef struct rig_terrain {
    const char* name;
    double (*start_sinkage)(const bw_rig_config* c, const dvi_bw_soil* soil); /* m; < 0: the load is refused */
    void (*write_entry)(FILE* f, const bw_rig_config* c, const dvi_bw_soil* soil);
    int (*measure)(dvi_world* w, dvi_body_id wheel, const bw_rig_config* c, double q[6]);
} rig_terrain;

static const rig_terrain TERRAINS[] = {
    {"bekker_wong", bw_start_sinkage, bw_write_entry, bw_measure},
    {"scm", scm_start_sinkage, scm_write_entry, scm_measure},
};

static const rig_terrain* terrain_of(const bw_rig_config* c)
{
    const char* name = c->terrain ? c->terrain : "bekker_wong";
    for (size_t k = 0; k < sizeof TERRAINS / sizeof TERRAINS[0]; k++)
        if (strcmp(TERRAINS[k].name, name) == 0) return &TERRAINS[k];
    return NULL;
}

int bw_rig_write_scene(const bw_rig_config* c, FILE* f, char* msg, size_t msg_size)
{
    const rig_terrain* terrain = terrain_of(c);
    if (!terrain) {
        set_msg(msg, msg_size, "terrain: must be \"bekker_wong\" or \"scm\" (got \"%s\")", c->terrain);
        return -1;
    }
    dvi_bw_soil soil;
    if (soil_of(c->soil, &soil)) {
        set_msg(msg, msg_size, "soil: must be \"ishigami2007\" or \"ding2011\"");
        return -1;
    }
    if (!(c->radius > 0.0 && c->width > 0.0)) {
        set_msg(msg, msg_size, "radius, width: must be > 0");
        return -1;
    }
    if (!(c->load > 1.01 * WHEEL_MASS * GRAVITY)) {
        set_msg(msg, msg_size, "load: must exceed the wheel's weight %g N by 1 %%", WHEEL_MASS * GRAVITY);
        return -1;
    }
    if (!(c->slip >= 0.0 && c->slip <= 0.95)) {
        set_msg(msg, msg_size, "slip: must be in [0, 0.95] (got %g)", c->slip);
        return -1;
    }
    if (!(c->slip_angle >= 0.0 && c->slip_angle <= 0.5)) {
        set_msg(msg, msg_size, "slip_angle: must be in [0, 0.5] rad (got %g)", c->slip_angle);
        return -1;
    }
    if (!(c->rim_speed > 0.0 && c->damping >= 0.0 && c->ramp >= 0.0 && c->dt > 0.0 && c->duration > c->dt &&
          c->window_start >= 0.0 && c->window_start < c->duration)) {
        set_msg(msg, msg_size, "rim_speed, damping, ramp, dt, duration, window_start: out of range");
        return -1;
    }
    if (strcmp(terrain->name, "scm") == 0) {
        if (!(c->scm_spacing > 0.0 && c->scm_spacing <= 0.25 * c->width)) {
            set_msg(msg, msg_size, "scm_spacing: must be in (0, width/4 = %g] m (got %g)", 0.25 * c->width,
                    c->scm_spacing);
            return -1;
        }
        if (!(c->scm_stiffness > soil.k_phi)) {
            set_msg(msg, msg_size, "scm_stiffness: must exceed the soil's k_phi %g Pa/m (got %g)", soil.k_phi,
                    c->scm_stiffness);
            return -1;
        }
        if (!(c->scm_damping >= 0.0)) {
            set_msg(msg, msg_size, "scm_damping: must be >= 0 (got %g)", c->scm_damping);
            return -1;
        }
    }
    const double sinkage = terrain->start_sinkage(c, &soil);
    if (sinkage < 0.0) {
        set_msg(msg, msg_size, "load: %s", dvi_error_message());
        return -1;
    }
    const double r = c->radius, zc = r - sinkage, omega = c->rim_speed / r;
    const double v = (1.0 - c->slip) * c->rim_speed / cos(c->slip_angle);
    const double p[3] = {0.0, 0.0, zc};
    fprintf(f, "{\n  \"name\": \"bw_testbed\",\n  \"description\": \"A wheel (r = %g m, b = %g m) on a carriage over "
               "%s soil (%s): load %g N, slip %g, slip angle %g rad. Written by "
               "studies/rover/bw_testbed.c.\",\n",
            r, c->width, strcmp(terrain->name, "scm") == 0 ? "SCM" : "Bekker-Wong", c->soil, c->load, c->slip,
            c->slip_angle);
    fputs("  \"units\": \"SI\",\n  \"gravity\": [0, 0, -9.81],\n  \"bodies\": [\n", f);
    fputs("    {\"name\": \"carriage\", \"mass\": 10, \"inertia\": [1, 1, 1], \"position\": ", f);
    rover_write_vector(f, p, 3);
    fputs("},\n    {\"name\": \"slider\", \"mass\": ", f);
    rover_write_number(f, c->load / GRAVITY - WHEEL_MASS);
    fputs(", \"inertia\": [1, 1, 1], \"position\": ", f);
    rover_write_vector(f, p, 3);
    fprintf(f, "},\n    {\"name\": \"wheel\", \"mass\": %g, \"inertia\": [%g, %g, %g], \"position\": ", WHEEL_MASS,
            BW_RIG_WHEEL_INERTIA, BW_RIG_WHEEL_INERTIA, BW_RIG_WHEEL_INERTIA);
    rover_write_vector(f, p, 3);
    fputs(",\n     \"shapes\": [{\"type\": \"cylinder\", \"radius\": ", f);
    rover_write_number(f, r);
    fputs(", \"half_length\": ", f);
    rover_write_number(f, 0.5 * c->width);
    fputs(", \"orientation\": [0.7071067811865475, -0.7071067811865475, 0, 0]}]}\n  ],\n", f);
    const double axis[3] = {cos(c->slip_angle), sin(c->slip_angle), 0.0};
    rover_write_carriage_joints(f, p, axis, v, omega, c->ramp);
    terrain->write_entry(f, c, &soil);
    fputs("  \"probes\": [\n    {\"name\": \"wheel\", \"what\": \"position\", \"body\": \"wheel\", \"every\": 10},\n"
          "    {\"name\": \"rail\", \"what\": \"joint_reaction\", \"joint\": \"rail\", \"every\": 10, \"average\": true},\n"
          "    {\"name\": \"drive\", \"what\": \"joint_reaction\", \"joint\": \"drive\", \"every\": 10, \"average\": true}\n  ],\n"
          "  \"formulation\": {\"method\": \"dvi\", \"dt\": ",
          f);
    rover_write_number(f, c->dt);
    fputs(", \"solver\": \"lemke\", \"joint_recovery_speed\": 0.05},\n  \"duration\": ", f);
    rover_write_number(f, c->duration);
    fputs("\n}\n", f);
    return ferror(f) ? -1 : 0;
}

dvi_status bw_rig_run(const bw_rig_config* c, bw_rig_result* out, char* msg, size_t msg_size)
{
    memset(out, 0, sizeof *out);
    const rig_terrain* terrain = terrain_of(c);
    char* text = NULL;
    size_t len = 0;
    FILE* f = open_memstream(&text, &len);
    if (!f) {
        set_msg(msg, msg_size, "cannot write the scene");
        return DVI_ERR_IO;
    }
    const int bad = bw_rig_write_scene(c, f, msg, msg_size);
    fclose(f);
    if (bad) {
        free(text);
        return DVI_ERR_INVALID_ARG;
    }
    dvi_scene* scene = NULL;
    dvi_status st = rover_parse_scene_text(text, len, &scene, msg, msg_size);
    free(text);
    if (st != DVI_OK) return st;
    dvi_model* model = NULL;
    st = dvi_model_create(scene, &model, msg, msg_size);
    dvi_scene_destroy(scene);
    if (st != DVI_OK) return st;
    dvi_world* w = dvi_model_world(model);
    dvi_body_id wheel;
    dvi_model_find_body(model, "wheel", &wheel);
    const long steps = lround(c->duration / c->dt), first = lround(c->window_start / c->dt);
    double sum[6] = {0}, zmin = INFINITY, zmax = -INFINITY;
    for (long k = 1; k <= steps; k++) {
        st = dvi_model_step(model);
        if (st != DVI_OK && st != DVI_NOT_CONVERGED) {
            set_msg(msg, msg_size, "step %ld: %s", k, dvi_error_message());
            break;
        }
        st = DVI_OK;
        double q[6];
        if (terrain->measure(w, wheel, c, q)) {
            set_msg(msg, msg_size, "step %ld: the terrain's forces on the wheel are not there", k);
            st = DVI_ERR_INVALID_ARG;
            break;
        }
        if (k > first) {
            for (int i = 0; i < 6; i++) sum[i] += q[i];
            if (q[4] < zmin) zmin = q[4];
            if (q[4] > zmax) zmax = q[4];
        }
    }
    if (st == DVI_OK) {
        const double n = (double)(steps - first);
        out->drawbar_pull = sum[0] / n, out->lateral = sum[1] / n, out->normal = sum[2] / n;
        out->torque = sum[3] / n, out->sinkage = sum[4] / n, out->slip_measured = sum[5] / n;
        out->sinkage_spread = zmax - zmin;
    }
    dvi_model_destroy(model);
    return st;
}
