/* bw_testbed — see bw_testbed.h. */
#include "bw_testbed.h"

#include "rover_model.h"

#include <dvi/scene.h>

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define GRAVITY 9.81
#define WHEEL_MASS 1.0 /* kg; the slider carries the rest of the load */

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

int bw_rig_write_scene(const bw_rig_config* c, FILE* f, char* msg, size_t msg_size)
{
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
    dvi_bw_forces st;
    if (dvi_bw_static(&soil, c->radius, c->width, c->load, 0.0, 0.0, &st) != DVI_OK) {
        set_msg(msg, msg_size, "load: %s", dvi_error_message());
        return -1;
    }
    const double r = c->radius, zc = r - st.sinkage, omega = c->rim_speed / r;
    const double v = (1.0 - c->slip) * c->rim_speed / cos(c->slip_angle);
    const double p[3] = {0.0, 0.0, zc};
    fprintf(f, "{\n  \"name\": \"bw_testbed\",\n  \"description\": \"A wheel (r = %g m, b = %g m) on a carriage over "
               "Bekker-Wong soil (%s): load %g N, slip %g, slip angle %g rad. Written by "
               "studies/rover/bw_testbed.c.\",\n",
            r, c->width, c->soil, c->load, c->slip, c->slip_angle);
    fputs("  \"units\": \"SI\",\n  \"gravity\": [0, 0, -9.81],\n  \"bodies\": [\n", f);
    fputs("    {\"name\": \"carriage\", \"mass\": 10, \"inertia\": [1, 1, 1], \"position\": ", f);
    rover_write_vector(f, p, 3);
    fputs("},\n    {\"name\": \"slider\", \"mass\": ", f);
    rover_write_number(f, c->load / GRAVITY - WHEEL_MASS);
    fputs(", \"inertia\": [1, 1, 1], \"position\": ", f);
    rover_write_vector(f, p, 3);
    fprintf(f, "},\n    {\"name\": \"wheel\", \"mass\": %g, \"inertia\": [0.01, 0.01, 0.01], \"position\": ",
            WHEEL_MASS);
    rover_write_vector(f, p, 3);
    fputs(",\n     \"shapes\": [{\"type\": \"cylinder\", \"radius\": ", f);
    rover_write_number(f, r);
    fputs(", \"half_length\": ", f);
    rover_write_number(f, 0.5 * c->width);
    fputs(", \"orientation\": [0.7071067811865475, -0.7071067811865475, 0, 0]}]}\n  ],\n", f);
    const double axis[3] = {cos(c->slip_angle), sin(c->slip_angle), 0.0};
    rover_write_carriage_joints(f, p, axis, v, omega, c->ramp);
    fprintf(f, "  \"terrain\": [{\"model\": \"bekker_wong\", \"wheels\": [\"wheel\"], \"soil\": \"%s\", "
               "\"ground\": {\"height\": 0}, \"damping\": ",
            c->soil);
    rover_write_number(f, c->damping);
    fputs("}],\n  \"probes\": [\n    {\"name\": \"wheel\", \"what\": \"position\", \"body\": \"wheel\", \"every\": 10},\n"
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
    dvi_scene_errors errs = {0};
    dvi_status st = dvi_scene_parse(text, len, NULL, &scene, &errs);
    free(text);
    if (st != DVI_OK) {
        set_msg(msg, msg_size, "scene: %s", errs.text ? errs.text : "invalid");
        dvi_scene_errors_free(&errs);
        return st;
    }
    dvi_scene_errors_free(&errs);
    dvi_model* model = NULL;
    st = dvi_model_create(scene, &model, msg, msg_size);
    dvi_scene_destroy(scene);
    if (st != DVI_OK) return st;
    dvi_world* w = dvi_model_world(model);
    const long steps = lround(c->duration / c->dt), first = lround(c->window_start / c->dt);
    double sum[6] = {0}, zmin = INFINITY, zmax = -INFINITY;
    for (long k = 1; k <= steps; k++) {
        st = dvi_model_step(model);
        if (st != DVI_OK && st != DVI_NOT_CONVERGED) {
            set_msg(msg, msg_size, "step %ld: %s", k, dvi_error_message());
            break;
        }
        st = DVI_OK;
        dvi_bw_forces fw;
        dvi_bw_wheel_forces(w, 0, 0, &fw);
        if (k > first) {
            sum[0] += fw.drawbar_pull, sum[1] += fw.lateral, sum[2] += fw.normal, sum[3] += fw.torque;
            sum[4] += fw.sinkage, sum[5] += fw.slip;
            if (fw.sinkage < zmin) zmin = fw.sinkage;
            if (fw.sinkage > zmax) zmax = fw.sinkage;
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
