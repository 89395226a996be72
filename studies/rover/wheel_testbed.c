/* wheel_testbed — see wheel_testbed.h. */
#include "wheel_testbed.h"

#include "rover_model.h"

#include <dvi/scene.h>

#include <cjson/cJSON.h>

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define GRAVITY 9.81
#define BLOCKS 10           /* blocks of the window for the standard errors */

static void set_msg(char* msg, size_t size, const char* fmt, ...)
{
    if (!msg || size == 0) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, size, fmt, ap);
    va_end(ap);
}

/* ---- the wheel of the reference ------------------------------------------------ */

static const cJSON* member(const cJSON* o, const char* key)
{
    return cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, key) : NULL;
}

static bool positive_number(const cJSON* v, double* out)
{
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || !(v->valuedouble > 0.0)) return false;
    *out = v->valuedouble;
    return true;
}

dvi_status wheel_params_read(const char* json_path, wheel_params* out, char* msg, size_t msg_size)
{
    dvi_status st;
    cJSON* root = rover_load_json(json_path, &st, msg, msg_size);
    if (!root) return st;
    st = DVI_OK;
    const cJSON* wheels = member(root, "wheels");
    const cJSON* part = member(member(root, "parts"), "wheel_RF");
    const cJSON* inertia = member(part, "inertia_about_com");
    if (!positive_number(member(wheels, "radius"), &out->radius)) {
        set_msg(msg, msg_size, "%s: wheels.radius: missing or not > 0", json_path);
        st = DVI_ERR_PARSE;
    } else if (!positive_number(member(wheels, "width"), &out->width)) {
        set_msg(msg, msg_size, "%s: wheels.width: missing or not > 0", json_path);
        st = DVI_ERR_PARSE;
    } else if (!positive_number(member(part, "mass"), &out->mass)) {
        set_msg(msg, msg_size, "%s: parts.wheel_RF.mass: missing or not > 0", json_path);
        st = DVI_ERR_PARSE;
    } else if (!cJSON_IsArray(inertia) || cJSON_GetArraySize(inertia) != 3) {
        set_msg(msg, msg_size, "%s: parts.wheel_RF.inertia_about_com: expected a 3 × 3 array", json_path);
        st = DVI_ERR_PARSE;
    } else {
        for (int i = 0; i < 3 && st == DVI_OK; i++) {
            const cJSON* row = cJSON_GetArrayItem(inertia, i);
            if (!cJSON_IsArray(row) || cJSON_GetArraySize(row) != 3 ||
                !positive_number(cJSON_GetArrayItem(row, i), &out->inertia[i])) {
                set_msg(msg, msg_size, "%s: parts.wheel_RF.inertia_about_com[%d][%d]: missing or not > 0", json_path,
                        i, i);
                st = DVI_ERR_PARSE;
            }
        }
    }
    cJSON_Delete(root);
    return st;
}

/* ---- configuration and scene --------------------------------------------------- */

testbed_config testbed_default_config(void)
{
    testbed_config c;
    memset(&c, 0, sizeof c);
    c.wheel.radius = 0.25;
    c.wheel.width = 0.4;
    c.wheel.mass = 1.7812830345854127;
    c.wheel.inertia[0] = c.wheel.inertia[2] = 0.07923769199375999;
    c.wheel.inertia[1] = 0.11097450306524229;
    c.load = 480.03;
    c.wheel_speed = 0.8;
    c.ramp = 0.5;
    c.slip = -0.1;
    c.friction = 0.4;
    c.grousers = 24;
    c.grouser_height = 0.02;
    c.grain_radius = 0.03;
    c.length = 1.4;
    c.width = 0.7;
    c.depth = 0.16061258287318259;
    c.back = 0.45;
    c.dt = 0.001;
    c.max_iterations = 100;
    c.tolerance = 1e-4;
    c.duration = 3.0;
    c.window_start = 1.5;
    c.sample_every = 20;
    c.switch_start = 1.5;
    c.slip_alt = -0.1;
    c.load_alt = 480.03;
    return c;
}


static void box_body(FILE* f, const char* name, double cx, double cy, double cz, double hx, double hy, double hz)
{
    const double c[3] = {cx, cy, cz}, h[3] = {hx, hy, hz};
    fprintf(f, ",\n    {\"name\": \"%s\", \"type\": \"fixed\", \"position\": ", name);
    rover_write_vector(f, c, 3);
    fprintf(f, ", \"shapes\": [{\"type\": \"box\", \"half_extents\": ");
    rover_write_vector(f, h, 3);
    fputs(", \"material\": \"ground\"}]}", f);
}

/* Height of the wheel centre at the start: the rim (or grouser 0's tip, which
 * points down) on z = 0. */
static double start_height(const testbed_config* c)
{
    return c->wheel.radius + (c->grousers > 0 ? c->grouser_height : 0.0);
}

static bool switching(const testbed_config* c)
{
    return c->switch_period > 0.0;
}

/* Forward travel of the carriage by time t: the ramp costs half its length.
 * With a square wave, a bound: the faster of the two slips throughout. */
static double travel(const testbed_config* c, double t)
{
    const double s = switching(c) && c->slip_alt > c->slip ? c->slip_alt : c->slip;
    const double v = (1.0 + s) * c->wheel_speed * c->wheel.radius;
    return t < c->ramp ? 0.5 * v * t * t / c->ramp : v * (t - 0.5 * c->ramp);
}

/* Steps per half period of the square wave. */
static long half_period_steps(const testbed_config* c)
{
    return llround(0.5 * c->switch_period / c->dt);
}

static int check_config(const testbed_config* c, char* msg, size_t size)
{
#define REQUIRE(cond, ...)                                                                                          \
    do {                                                                                                            \
        if (!(cond)) {                                                                                              \
            set_msg(msg, size, __VA_ARGS__);                                                                        \
            return -1;                                                                                              \
        }                                                                                                           \
    } while (0)
    REQUIRE(isfinite(c->wheel.radius) && c->wheel.radius > 0.0, "wheel.radius: must be > 0");
    REQUIRE(isfinite(c->wheel.width) && c->wheel.width > 0.0, "wheel.width: must be > 0");
    REQUIRE(isfinite(c->wheel.mass) && c->wheel.mass > 0.0, "wheel.mass: must be > 0");
    for (int k = 0; k < 3; k++)
        REQUIRE(isfinite(c->wheel.inertia[k]) && c->wheel.inertia[k] > 0.0, "wheel.inertia[%d]: must be > 0", k);
    REQUIRE(isfinite(c->load) && c->load > c->wheel.mass * GRAVITY * 1.01,
            "load: must exceed the wheel's own weight %.4g N by 1 %% (got %g)", c->wheel.mass * GRAVITY, c->load);
    REQUIRE(isfinite(c->wheel_speed) && c->wheel_speed > 0.0, "wheel_speed: must be > 0 (got %g)", c->wheel_speed);
    REQUIRE(isfinite(c->ramp) && c->ramp >= 0.0, "ramp: must be >= 0 (got %g)", c->ramp);
    REQUIRE(isfinite(c->slip) && c->slip > -1.0 && c->slip <= 1.0, "slip: must be in (-1, 1] (got %g)", c->slip);
    REQUIRE(isfinite(c->friction) && c->friction >= 0.0, "friction: must be >= 0 (got %g)", c->friction);
    REQUIRE(isfinite(c->rolling_friction) && c->rolling_friction >= 0.0, "rolling_friction: must be >= 0 (got %g)",
            c->rolling_friction);
    REQUIRE(c->grousers >= 0 && c->grousers <= 360, "grousers: must be in [0, 360] (got %d)", c->grousers);
    REQUIRE(c->grousers == 0 || (isfinite(c->grouser_height) && c->grouser_height > 0.0),
            "grouser_height: must be > 0 (got %g)", c->grouser_height);
    REQUIRE(isfinite(c->grain_radius) && c->grain_radius >= 0.0, "grain_radius: must be >= 0 (got %g)",
            c->grain_radius);
    REQUIRE(isfinite(c->dt) && c->dt > 0.0, "dt: must be > 0 (got %g)", c->dt);
    REQUIRE(c->max_iterations >= 1 && c->max_iterations <= 1000000, "max_iterations: must be in [1, 1e6] (got %d)",
            c->max_iterations);
    REQUIRE(isfinite(c->tolerance) && c->tolerance > 0.0, "tolerance: must be > 0 (got %g)", c->tolerance);
    REQUIRE(isfinite(c->duration) && c->duration > c->dt, "duration: must exceed dt (got %g)", c->duration);
    REQUIRE(isfinite(c->window_start) && c->window_start >= 0.0 && c->window_start + BLOCKS * c->dt <= c->duration,
            "window_start: must leave at least %d steps before the duration %g (got %g)", BLOCKS, c->duration,
            c->window_start);
    REQUIRE(c->threads >= 0, "threads: must be >= 0 (got %d)", c->threads);
    REQUIRE(c->sample_every >= 1, "sample_every: must be >= 1 (got %d)", c->sample_every);
    REQUIRE(isfinite(c->switch_period) && c->switch_period >= 0.0, "switch_period: must be >= 0 (got %g)",
            c->switch_period);
    if (switching(c)) {
        const double half = 0.5 * c->switch_period / c->dt;
        REQUIRE(half >= 1.0 && fabs(half - (double)llround(half)) < 1e-6,
                "switch_period: must be a whole, even number of steps of %g s (got %g)", c->dt, c->switch_period);
        REQUIRE(isfinite(c->switch_start) && c->switch_start >= c->ramp && c->switch_start < c->duration,
                "switch_start: must lie between the ramp %g s and the duration %g s (got %g)", c->ramp, c->duration,
                c->switch_start);
        REQUIRE(isfinite(c->slip_alt) && c->slip_alt > -1.0 && c->slip_alt <= 1.0,
                "slip_alt: must be in (-1, 1] (got %g)", c->slip_alt);
        REQUIRE(isfinite(c->load_alt) && c->load_alt > c->wheel.mass * GRAVITY * 1.01,
                "load_alt: must exceed the wheel's own weight %.4g N by 1 %% (got %g)", c->wheel.mass * GRAVITY,
                c->load_alt);
    }
    if (c->grain_radius > 0.0) {
        const double s = 2.0 * c->grain_radius + 0.001;
        REQUIRE(isfinite(c->width) && c->width > c->wheel.width + 2.0 * s,
                "width: must exceed the wheel's width plus two grains (got %g)", c->width);
        REQUIRE(isfinite(c->depth) && c->depth >= s, "depth: must hold one layer of grains, %g m (got %g)", s,
                c->depth);
        REQUIRE(isfinite(c->length) && c->length > 0.0, "length: must be > 0 (got %g)", c->length);
        REQUIRE(isfinite(c->back) && c->back >= start_height(c) + s && c->back < c->length,
                "back: must hold the wheel's rear and a grain behind it, %.3g m, and be shorter than the bin (got %g)",
                start_height(c) + s, c->back);
        /* the wheel must stay inside the bin: its front (rim or grouser tip)
         * at the end, with a grain's width of room */
        const double front = travel(c, c->duration) + start_height(c);
        const double room = c->length - c->back - s;
        REQUIRE(front <= room, "slip: the wheel would reach the bin's end wall (its front at %.3g m, room to %.3g m)",
                front, room);
    }
    return 0;
#undef REQUIRE
}

int testbed_write_scene(const testbed_config* c, FILE* f, char* msg, size_t msg_size)
{
    if (check_config(c, msg, msg_size)) return -1;
    const bool grains = c->grain_radius > 0.0;
    const double r = c->wheel.radius, zc = start_height(c);
    const double omega = c->wheel_speed, v = (1.0 + c->slip) * omega * r;
    const double slider_mass = c->load / GRAVITY - c->wheel.mass;
    const double bottom = grains ? -c->depth : 0.0; /* the ground box's top */
    const double x0 = grains ? -c->back : -1.0;
    const double x1 = grains ? c->length - c->back : travel(c, c->duration) + 1.0;
    const double hw = grains ? 0.5 * c->width : 0.5 * c->wheel.width + 0.5;

    fputs("{\n  \"name\": \"wheel_testbed\",\n", f);
    fprintf(f, "  \"description\": \"One rover wheel (%d grousers) on a carriage: rail speed (1 + s) ω r with s = ",
            c->grousers);
    rover_write_number(f, c->slip);
    fputs(", wheel speed ω = ", f);
    rover_write_number(f, omega);
    fputs(" rad/s, load ", f);
    rover_write_number(f, c->load);
    fprintf(f, " N, on %s. Written by studies/rover/wheel_testbed.c.\",\n", grains ? "a bin of grains" : "rigid ground");
    fputs("  \"units\": \"SI\",\n  \"gravity\": [0, 0, -9.81],\n  \"materials\": {", f);
    const char* mats[] = {"ground", "grain", "wheel"};
    for (int k = 0; k < 3; k++) {
        fprintf(f, "%s\"%s\": {\"friction\": ", k ? ", " : "", mats[k]);
        rover_write_number(f, c->friction);
        if (k == 1 && c->rolling_friction > 0.0) { /* grains: a contact rolls with the smaller arm of its two */
            fputs(", \"rolling_friction\": ", f);
            rover_write_number(f, c->rolling_friction);
        }
        fputs(", \"restitution\": 0}", f);
    }
    fputs("},\n  \"bodies\": [\n", f);
    /* the ground box (its top at `bottom`), then the bin's walls */
    fputs("    {\"name\": \"ground\", \"type\": \"fixed\", \"position\": ", f);
    const double gc[3] = {0.5 * (x0 + x1), 0.0, bottom - 0.05}, gh[3] = {0.5 * (x1 - x0) + 0.1, hw + 0.1, 0.05};
    rover_write_vector(f, gc, 3);
    fputs(", \"shapes\": [{\"type\": \"box\", \"half_extents\": ", f);
    rover_write_vector(f, gh, 3);
    fputs(", \"material\": \"ground\"}]}", f);
    if (grains) {
        const double top = zc + r, hz = 0.5 * (top - bottom), cz = 0.5 * (top + bottom);
        box_body(f, "wall_back", x0 - 0.05, 0.0, cz, 0.05, hw + 0.1, hz);
        box_body(f, "wall_front", x1 + 0.05, 0.0, cz, 0.05, hw + 0.1, hz);
        box_body(f, "wall_right", 0.5 * (x0 + x1), -hw - 0.05, cz, 0.5 * (x1 - x0), 0.05, hz);
        box_body(f, "wall_left", 0.5 * (x0 + x1), hw + 0.05, cz, 0.5 * (x1 - x0), 0.05, hz);
    }
    /* carriage and slider: no shapes; the slider carries the ballast */
    const double p[3] = {0.0, 0.0, zc};
    fputs(",\n    {\"name\": \"carriage\", \"mass\": 10, \"inertia\": [1, 1, 1], \"position\": ", f);
    rover_write_vector(f, p, 3);
    fputs("},\n    {\"name\": \"slider\", \"mass\": ", f);
    rover_write_number(f, slider_mass);
    fputs(", \"inertia\": [1, 1, 1], \"position\": ", f);
    rover_write_vector(f, p, 3);
    fputs("},\n    {\"name\": \"wheel\", \"mass\": ", f);
    rover_write_number(f, c->wheel.mass);
    fputs(", \"inertia\": ", f);
    rover_write_vector(f, c->wheel.inertia, 3);
    fputs(", \"position\": ", f);
    rover_write_vector(f, p, 3);
    fputs(",\n     \"shapes\": [{\"type\": \"cylinder\", \"radius\": ", f);
    rover_write_number(f, r);
    fputs(", \"half_length\": ", f);
    rover_write_number(f, 0.5 * c->wheel.width);
    fputs(", \"orientation\": [0.7071067811865475, -0.7071067811865475, 0, 0], \"material\": \"wheel\"}", f);
    const double axle[3] = {0.0, 1.0, 0.0};
    for (int k = 0; k < c->grousers; k++) {
        double gp[3], gq[4];
        rover_grouser_pose(axle, k, c->grousers, r, gp, gq);
        const double half[3] = {0.005, 0.5 * c->wheel.width, c->grouser_height};
        fputs(",\n       {\"type\": \"box\", \"half_extents\": ", f);
        rover_write_vector(f, half, 3);
        fputs(", \"position\": ", f);
        rover_write_vector(f, gp, 3);
        fputs(", \"orientation\": ", f);
        rover_write_vector(f, gq, 4);
        fputs(", \"material\": \"wheel\"}", f);
    }
    fputs("]}\n  ],\n", f);
    if (grains) {
        const double lo[3] = {x0, -hw, -c->depth}, hi[3] = {x1, hw, 0.0};
        fputs("  \"generators\": [{\"type\": \"granular_bed\", \"name\": \"bed\", \"region\": {\"min\": ", f);
        rover_write_vector(f, lo, 3);
        fputs(", \"max\": ", f);
        rover_write_vector(f, hi, 3);
        fputs("},\n    \"radius\": ", f);
        rover_write_number(f, c->grain_radius);
        fputs(", \"gap\": 0.001, \"packing\": \"hexagonal\", \"jitter\": 0.00025, \"seed\": 1, \"density\": 2000, "
              "\"material\": \"grain\"}],\n",
              f);
    }
    static const double rail[3] = {1.0, 0.0, 0.0};
    rover_write_carriage_joints(f, p, rail, v, omega, c->ramp);
    fputs("  \"formulation\": {\"method\": \"dvi\", \"dt\": ", f);
    rover_write_number(f, c->dt);
    if (grains) {
        fputs(", \"solver\": \"apgd\", \"tolerance\": ", f);
        rover_write_number(f, c->tolerance);
        fprintf(f, ", \"max_iterations\": %d, \"collision_envelope\": 0.005, "
                   "\"contact_recovery_speed\": 0.1, \"joint_recovery_speed\": 0.05},\n",
                c->max_iterations);
    } else
        fputs(", \"solver\": \"lemke\", \"collision_envelope\": 0.005, \"joint_recovery_speed\": 0.05},\n", f);
    fputs("  \"duration\": ", f);
    rover_write_number(f, c->duration);
    fputs("\n}\n", f);
    return ferror(f) ? -1 : 0;
}

/* ---- the run ----------------------------------------------------------------------- */

static double now_seconds(void)
{
    struct timespec ts;
    timespec_get(&ts, TIME_UTC);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Mean and standard error of the mean from BLOCKS equal blocks of x[0..n). */
static void block_stats(const double* x, long n, double* mean, double* se)
{
    double bm[BLOCKS], all = 0.0;
    for (int b = 0; b < BLOCKS; b++) {
        const long lo = n * b / BLOCKS, hi = n * (b + 1) / BLOCKS;
        double s = 0.0;
        for (long i = lo; i < hi; i++) s += x[i];
        bm[b] = hi > lo ? s / (double)(hi - lo) : 0.0;
    }
    for (long i = 0; i < n; i++) all += x[i];
    *mean = n > 0 ? all / (double)n : 0.0;
    double ss = 0.0, mb = 0.0;
    for (int b = 0; b < BLOCKS; b++) mb += bm[b] / BLOCKS;
    for (int b = 0; b < BLOCKS; b++) ss += (bm[b] - mb) * (bm[b] - mb);
    *se = sqrt(ss / (BLOCKS - 1) / BLOCKS);
}

dvi_status testbed_run(const testbed_config* c, testbed_sample_fn sample, void* user, testbed_result* out,
                       char* msg, size_t msg_size)
{
    memset(out, 0, sizeof *out);
    char* text = NULL;
    size_t text_len = 0;
    FILE* f = tmpfile();
    if (!f) {
        set_msg(msg, msg_size, "cannot open a temporary file for the scene");
        return DVI_ERR_IO;
    }
    if (testbed_write_scene(c, f, msg, msg_size)) {
        fclose(f);
        return DVI_ERR_INVALID_ARG;
    }
    long end = ftell(f);
    if (end > 0 && (text = malloc((size_t)end)) != NULL) {
        rewind(f);
        text_len = fread(text, 1, (size_t)end, f);
    }
    fclose(f);
    if (!text || text_len != (size_t)end) {
        free(text);
        set_msg(msg, msg_size, "cannot read the scene back");
        return DVI_ERR_IO;
    }

    dvi_scene* scene = NULL;
    dvi_status st = rover_parse_scene_text(text, text_len, &scene, msg, msg_size);
    free(text);
    if (st != DVI_OK) return st;
    if (c->threads > 0) {
        dvi_scene_overrides ov = {0};
        ov.threads = c->threads;
        if ((st = dvi_scene_apply_overrides(scene, &ov, NULL)) != DVI_OK) {
            dvi_scene_destroy(scene);
            set_msg(msg, msg_size, "threads: refused");
            return st;
        }
    }
    dvi_model* model = NULL;
    st = dvi_model_create(scene, &model, msg, msg_size);
    if (st == DVI_OK && dvi_scene_generator_count(scene) > 0) {
        dvi_generator_info gi;
        if (dvi_scene_get_generator(scene, 0, &gi) == DVI_OK) out->grains = gi.count;
    }
    dvi_scene_destroy(scene);
    if (st != DVI_OK) return st;

    dvi_world* w = dvi_model_world(model);
    dvi_body_id wheel;
    dvi_joint_id drive;
    dvi_model_find_body(model, "wheel", &wheel);
    dvi_model_find_joint(model, "drive", &drive);
    dvi_body_id slider;
    dvi_joint_id rail;
    dvi_model_find_body(model, "slider", &slider);
    dvi_model_find_joint(model, "rail", &rail);
    const long switch_first = llround(c->switch_start / c->dt), half = switching(c) ? half_period_steps(c) : 0;
    bool alt = false;

    const long steps = (long)llround(c->duration / c->dt);
    const long first = (long)llround(c->window_start / c->dt); /* window: steps first+1 … steps */
    const long n = steps - first;
    double* buf = malloc(sizeof(double) * 4 * (size_t)n);
    if (!buf) {
        dvi_model_destroy(model);
        set_msg(msg, msg_size, "out of memory");
        return DVI_ERR_NOMEM;
    }
    double *fx = buf, *fz = buf + n, *tq = buf + 2 * n, *sk = buf + 3 * n;
    const double z_top = start_height(c);
    double acc[4] = {0, 0, 0, 0}, slip_sum = 0.0, iter_sum = 0.0;
    int acc_n = 0;
    const double t0 = now_seconds();
    for (long k = 1; k <= steps; k++) {
        /* the square wave: step k runs from (k − 1) dt */
        const long j = k - 1 - switch_first;
        const bool want_alt = half > 0 && j >= 0 && (j / half) % 2 == 0;
        if (want_alt != alt) {
            alt = want_alt;
            const double s = alt ? c->slip_alt : c->slip, load = alt ? c->load_alt : c->load;
            const double extra[3] = {0.0, 0.0, -(load - c->load)}, none[3] = {0.0, 0.0, 0.0};
            if ((st = dvi_joint_set_motor(w, rail, (1.0 + s) * c->wheel_speed * c->wheel.radius, 0.0)) != DVI_OK ||
                (st = dvi_body_set_applied_force(w, slider, extra, none)) != DVI_OK) {
                set_msg(msg, msg_size, "step %ld: cannot switch the slip or the load", k);
                break;
            }
        }
        st = dvi_model_step(model);
        if (st != DVI_OK && st != DVI_NOT_CONVERGED) {
            set_msg(msg, msg_size, "step %ld (t = %g s): %s", k, (double)k * c->dt, dvi_error_message());
            break;
        }
        double force[3], torque[3], jf[3], jt[3], pos[3];
        dvi_body_get_contact_force(w, wheel, force, torque);
        dvi_joint_get_reaction(w, drive, jf, jt);
        dvi_body_get_position(w, wheel, pos);
        const double sink = z_top - pos[2];
        acc[0] += force[0], acc[1] += force[2], acc[2] += jt[1], acc[3] += sink;
        if (++acc_n == c->sample_every) {
            if (sample)
                sample(user, (double)k * c->dt, acc[0] / acc_n, acc[1] / acc_n, acc[2] / acc_n, acc[3] / acc_n);
            acc[0] = acc[1] = acc[2] = acc[3] = 0.0;
            acc_n = 0;
        }
        if (k > first) {
            const long i = k - first - 1;
            fx[i] = force[0], fz[i] = force[2], tq[i] = jt[1], sk[i] = sink;
            double vel[3], om[3];
            dvi_body_get_velocity(w, wheel, vel);
            dvi_body_get_angular_velocity(w, wheel, om);
            slip_sum += vel[0] / (om[1] * c->wheel.radius) - 1.0;
            dvi_step_stats ss = dvi_world_get_stats(w);
            iter_sum += ss.iterations;
            if (ss.solver_status != DVI_SOLVE_CONVERGED) out->unconverged_steps++;
        }
        if (k == steps) out->sinkage_end = sink;
    }
    const double wall = now_seconds() - t0;
    if (st == DVI_OK || st == DVI_NOT_CONVERGED) {
        block_stats(fx, n, &out->drawbar_pull, &out->drawbar_pull_se);
        block_stats(fz, n, &out->vertical, &out->vertical_se);
        block_stats(tq, n, &out->torque, &out->torque_se);
        double sink_se;
        block_stats(sk, n, &out->sinkage, &sink_se);
        out->slip_measured = slip_sum / (double)n;
        out->mean_iterations = iter_sum / (double)n;
        out->ms_per_step = 1e3 * wall / (double)steps;
        st = DVI_OK;
    }
    free(buf);
    dvi_model_destroy(model);
    return st;
}

/* ---- the square wave's fold ------------------------------------------------------ */

/* End of the first sample of y[0..n) (sample b ends at (b + 1) w) that is a
 * fraction q of the way from `from` to `to`. */
static double reach_time(const double* y, int n, double w, double from, double to, double q)
{
    const double target = from + q * (to - from), sign = to >= from ? 1.0 : -1.0;
    for (int b = 0; b < n; b++)
        if (sign * (y[b] - target) >= 0.0) return (b + 1) * w;
    return NAN;
}

int testbed_fold(const testbed_config* c, const double (*rows)[4], long n, testbed_folded* out, char* msg,
                 size_t msg_size)
{
    memset(out, 0, sizeof *out);
    const double w = c->sample_every * c->dt;
    const int bins = (int)llround(c->switch_period / w);
    const int periods = (int)floor((c->duration - c->switch_start) / c->switch_period + 1e-9);
    if (!(c->switch_period > 0.0) || fabs(bins * w - c->switch_period) > 1e-9 * c->switch_period || bins < 4 ||
        bins % 2) {
        set_msg(msg, msg_size, "switch_period: must be an even number (>= 4) of samples of %g s (got %g)", w,
                c->switch_period);
        return -1;
    }
    if (periods < 2) {
        set_msg(msg, msg_size, "duration: must hold two periods of %g s after switch_start %g s (got %g)",
                c->switch_period, c->switch_start, c->duration);
        return -1;
    }
    double* sum = calloc((size_t)bins * 6, sizeof *sum); /* sums and sums of squares */
    out->mean = calloc((size_t)bins * 3, sizeof *out->mean);
    out->se = calloc((size_t)bins * 3, sizeof *out->se);
    int* count = calloc((size_t)bins, sizeof *count);
    if (!sum || !out->mean || !out->se || !count) {
        free(sum), free(count);
        testbed_folded_free(out);
        set_msg(msg, msg_size, "out of memory");
        return -1;
    }
    out->bins = bins, out->periods = periods, out->width = w;
    for (long i = 0; i < n; i++) {
        /* the sample ending at t covers (t − w, t] */
        const long k = llround((rows[i][0] - c->switch_start) / w) - 1;
        if (k < 0 || k >= (long)bins * periods) continue;
        const int b = (int)(k % bins);
        for (int q = 0; q < 3; q++) {
            sum[2 * q * bins + b] += rows[i][q + 1];
            sum[(2 * q + 1) * bins + b] += rows[i][q + 1] * rows[i][q + 1];
        }
        count[b]++;
    }
    int missing = 0;
    for (int b = 0; b < bins; b++) {
        if (count[b] < 2) {
            missing = 1;
            continue;
        }
        for (int q = 0; q < 3; q++) {
            const double m = sum[2 * q * bins + b] / count[b];
            const double var = (sum[(2 * q + 1) * bins + b] / count[b] - m * m) * count[b] / (count[b] - 1);
            out->mean[q * bins + b] = m;
            out->se[q * bins + b] = sqrt(var > 0.0 ? var / count[b] : 0.0);
        }
    }
    free(sum), free(count);
    if (missing) {
        testbed_folded_free(out);
        set_msg(msg, msg_size, "rows: fewer than two samples in a phase bin (sample_every %d?)", c->sample_every);
        return -1;
    }
    /* the plateaus: the last quarter of each half */
    const int h = bins / 2, quarter = h / 4 > 0 ? h / 4 : 1;
    const double* m = out->mean;
    for (int b = h - quarter; b < h; b++) out->plateau[1] += m[b] / quarter;
    for (int b = bins - quarter; b < bins; b++) out->plateau[0] += m[b] / quarter;
    for (int sw = 0; sw < 2; sw++) {
        const int to = sw == 0 ? 1 : 0;
        out->t63[sw] = reach_time(m + sw * h, h, w, out->plateau[1 - to], out->plateau[to], 0.63);
        out->t90[sw] = reach_time(m + sw * h, h, w, out->plateau[1 - to], out->plateau[to], 0.9);
    }
    return 0;
}

void testbed_folded_free(testbed_folded* f)
{
    if (!f) return;
    free(f->mean);
    free(f->se);
    f->mean = f->se = NULL;
}
