/* dvicontact — one way to get an error's text: after any call of any layer
 * that fails, dvi_error_message() names the place, and the channels some
 * calls also have (a solve's result->message, the world's last error, a
 * caller's buffer, a scene's list of problems) hold the same text. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>

#include "test_util.h"

#include "dvi/dvi.h"
#include "dvi/io.h"
#include "dvi/output.h"
#include "dvi/scene.h"
#include "error.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* The message is set, names `place`, and equals `channel` when given. */
static void expect_message(const char* place, const char* channel)
{
    const char* m = dvi_error_message();
    if (!strstr(m, place)) fail_msg("message \"%s\" does not name \"%s\"", m, place);
    if (channel) assert_string_equal(m, channel);
}

static void test_solver_layer(void** state)
{
    (void)state;
    dvi_error_clear();
    assert_string_equal(dvi_error_message(), "");
    assert_int_equal(dvi_error_status(), DVI_OK);

    dvi_solver* s = NULL;
    assert_int_equal(dvi_solver_create("nope", NULL, &s), DVI_ERR_INVALID_ARG);
    expect_message("solver: unknown name \"nope\"", NULL);
    assert_int_equal(dvi_error_status(), DVI_ERR_INVALID_ARG);

    dvi_solver_settings bad = dvi_default_solver_settings();
    bad.tolerance = -1.0;
    assert_int_equal(dvi_solver_create("apgd", &bad, &s), DVI_ERR_INVALID_ARG);
    expect_message("settings.tolerance", NULL);
    dvi_solver_settings bad_block = dvi_default_solver_settings();
    bad_block.block_tolerance = -1e-4;
    assert_int_equal(dvi_solver_create("apgd", &bad_block, &s), DVI_ERR_INVALID_ARG);
    expect_message("settings.block_tolerance: must be finite and >= 0 (0: automatic) (got -0.0001)", NULL);

    /* one frictional contact: N = I (W form), r = (−1, 0.2, 0) */
    const int32_t cp[4] = {0, 1, 2, 3}, ri[3] = {0, 1, 2};
    const double wx[3] = {1.0, 1.0, 1.0}, r[3] = {-1.0, 0.2, 0.0};
    dvi_csc W = {3, 3, cp, ri, wx};
    dvi_ccp_block blk = {DVI_BLOCK_FRICTION, -0.5, 0.0, 0.0};
    dvi_ccp_problem p = dvi_ccp_problem_empty();
    p.rows = 3, p.block_count = 1, p.blocks = &blk, p.W = &W, p.r = r;
    char msg[256];
    assert_int_equal(dvi_ccp_validate(&p, msg, sizeof msg), DVI_ERR_INVALID_ARG);
    expect_message("blocks[0].mu", msg);
    assert_int_equal(dvi_ccp_validate(&p, NULL, 0), DVI_ERR_INVALID_ARG); /* no buffer: the text still comes */
    expect_message("blocks[0].mu", msg);

    double g[3];
    dvi_solve_result res;
    blk.mu = 0.5;
    assert_int_equal(dvi_solver_create("apgd", NULL, &s), DVI_OK);
    assert_int_equal(dvi_solver_solve(s, &p, NULL, &res), DVI_ERR_INVALID_ARG);
    expect_message("gamma: NULL", res.message);
    /* a run out of iterations is not an error, but says why it stopped */
    dvi_solver_settings one = dvi_default_solver_settings();
    one.max_iterations = 1, one.tolerance = 1e-14;
    assert_int_equal(dvi_solver_set_settings(s, &one), DVI_OK);
    dvi_error_clear();
    dvi_status st = dvi_solver_solve(s, &p, g, &res);
    if (st == DVI_NOT_CONVERGED) {
        assert_true(dvi_error_message()[0] != '\0');
        assert_int_equal(dvi_error_status(), DVI_NOT_CONVERGED);
    }
    /* a success leaves the last message as it was */
    base_error_set(DVI_ERR_IO, "earlier");
    assert_int_equal(dvi_solver_set_settings(s, &bad) == DVI_OK, 0);
    expect_message("settings.tolerance", NULL);
    assert_int_equal(dvi_solver_set_settings(s, &one), DVI_OK);
    expect_message("settings.tolerance", NULL);
    dvi_solver_destroy(s);

    double inertia[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, out[36];
    assert_int_equal(dvi_inv_mass_block(-2.0, inertia, out), DVI_ERR_INVALID_ARG);
    expect_message("mass: must be finite and >= 0 (got -2)", NULL);
    inertia[8] = 0.0;
    assert_int_equal(dvi_inv_mass_block(2.0, inertia, out), DVI_ERR_SINGULAR);
    expect_message("inertia: singular", NULL);
}

static void test_world_layer(void** state)
{
    (void)state;
    dvi_world_def wd = dvi_default_world_def();
    wd.collision_envelope = -1.0;
    dvi_world* w = NULL;
    assert_int_equal(dvi_world_create(&wd, &w), DVI_ERR_INVALID_ARG);
    expect_message("world_def.collision_envelope", NULL);
    wd = dvi_default_world_def();
    wd.solver = "nope";
    assert_int_equal(dvi_world_create(&wd, &w), DVI_ERR_INVALID_ARG);
    expect_message("solver: unknown name \"nope\"", NULL);

    assert_int_equal(dvi_world_create(NULL, &w), DVI_OK);
    dvi_body_def bd = dvi_default_body_def();
    bd.mass = -3.0;
    dvi_body_id b;
    assert_true(dvi_body_create(w, &bd, &b) < 0);
    expect_message("mass", dvi_world_last_error(w));
    assert_int_equal(dvi_world_set_solver(w, "pgs", &(dvi_solver_settings){0}), DVI_ERR_INVALID_ARG);
    expect_message("settings", dvi_world_last_error(w));
    dvi_joint_def jd = dvi_default_joint_def();
    jd.type = DVI_JOINT_REVOLUTE;
    jd.body_b.index1 = 7, jd.body_b.generation = 1; /* no such body */
    dvi_joint_id j;
    assert_true(dvi_joint_create(w, &jd, &j) < 0);
    expect_message("body_b", dvi_world_last_error(w));
    assert_int_equal(dvi_world_step(w, -1.0), DVI_ERR_INVALID_ARG);
    expect_message("step: h must be > 0", dvi_world_last_error(w));
    dvi_contact_info ci;
    assert_int_equal(dvi_world_get_contact(w, 3, &ci), DVI_ERR_INVALID_ARG);
    expect_message("index: must be in [0, 0) (got 3)", NULL);
    double x[3];
    assert_int_equal(dvi_body_get_position(w, b, x), DVI_ERR_INVALID_ARG); /* b was never created */
    expect_message("body: not an id of this world", NULL);
    dvi_world_destroy(w);
}

static void test_terrain_layer(void** state)
{
    (void)state;
    dvi_bw_soil soil = dvi_bw_soil_ding2011();
    dvi_bw_forces f;
    assert_int_equal(dvi_bw_static(&soil, 0.15735, 0.165, -80.0, 0.2, 0.0, &f), DVI_ERR_INVALID_ARG);
    expect_message("dvi_bw_static: load must be > 0", NULL);
    dvi_world* w = NULL;
    assert_int_equal(dvi_world_create(NULL, &w), DVI_OK);
    dvi_bw_def d = dvi_default_bw_def();
    d.soil.lambda = 5.0;
    assert_int_equal(dvi_world_add_bekker_wong(w, &d, NULL), DVI_ERR_INVALID_ARG);
    expect_message("soil.lambda must be in [0, 2]", dvi_world_last_error(w));
    dvi_world_destroy(w);
}

static void test_io_layer(void** state)
{
    (void)state;
    /* a scene with two problems: the message lists both, one per line */
    const char* text = "{\"format\": \"dvicontact-scene\", \"version\": 1, \"time_step\": -1,"
                       " \"bodies\": [{\"name\": \"a\", \"mass\": -2, \"shapes\": [{\"type\": \"sphere\", \"radius\": 0.1}]}]}";
    dvi_scene* sc = NULL;
    dvi_scene_errors errs;
    assert_true(dvi_scene_parse(text, strlen(text), NULL, &sc, &errs) < 0);
    assert_true(errs.count >= 2);
    char joined[4096];
    snprintf(joined, sizeof joined, "%s", errs.text);
    size_t n = strlen(joined);
    if (n > 0 && joined[n - 1] == '\n') joined[n - 1] = '\0';
    expect_message("bodies[0].mass", joined);
    assert_non_null(strchr(dvi_error_message(), '\n'));
    dvi_scene_errors_free(&errs);
    assert_true(dvi_scene_parse("{ nope", 6, NULL, &sc, NULL) < 0); /* no list asked for: the text still comes */
    expect_message("malformed JSON", NULL);

    char msg[512];
    dvi_ccp_file* f = NULL;
    assert_int_equal(dvi_ccp_problem_parse_json("{\"format\": 3}", 13, &f, msg, sizeof msg), DVI_ERR_PARSE);
    expect_message("format", msg);
    dvi_mesh_data mesh;
    assert_int_equal(dvi_obj_read("/nonexistent/x.obj", &mesh, msg, sizeof msg), DVI_ERR_IO);
    expect_message("/nonexistent/x.obj", msg);
    dvi_csv* csv = NULL;
    const char* names[1] = {"t"};
    assert_int_equal(dvi_csv_open(&csv, "/nonexistent/dir/a.csv", 1, names, NULL, msg, sizeof msg), DVI_ERR_IO);
    expect_message("/nonexistent/dir/a.csv", msg);
    assert_int_equal(dvi_make_dirs("/proc/self/nope/x", NULL, 0), DVI_ERR_IO);
    expect_message("/proc/self/nope", NULL);
    /* a problem with a low-rank term has no file format: refused, not written without it */
    int32_t cp[2] = {0, 0}, gp[2] = {0, 1}, gi[1] = {0};
    double gx[1] = {0.5}, r[1] = {-1.0}, minv[10] = {1, 1, 0, 0, 0, 1, 0, 0, 0, 1};
    dvi_csc D = {6, 1, cp, NULL, NULL}, G = {1, 1, gp, gi, gx};
    dvi_ccp_block blk = {DVI_BLOCK_FRICTIONLESS, 0, 0, 0};
    dvi_ccp_problem p = dvi_ccp_problem_empty();
    p.rows = 1;
    p.block_count = 1;
    p.blocks = &blk;
    p.body_count = 1;
    p.D = &D;
    p.inv_mass_rigid = minv;
    p.r = r;
    p.G = &G;
    char* out = NULL;
    size_t len = 0;
    assert_int_equal(dvi_ccp_problem_format_json(&p, NULL, NULL, &out, &len, msg, sizeof msg), DVI_ERR_UNSUPPORTED);
    expect_message("G: the file format has no low-rank term", msg);
    assert_null(out);
    assert_int_equal(dvi_fclib_write_local(&p, NULL, "/tmp/never_written.hdf5", msg, sizeof msg), DVI_ERR_UNSUPPORTED);
    expect_message("G: FCLIB has no low-rank term", msg);
}

/* ---- one text in every channel, bodies named when it is written ---------------- */

/* The world's log: the last error it was sent. */
static char logged[2048];
static void log_last(void* user, dvi_log_level level, const char* message)
{
    (void)user;
    if (level == DVI_LOG_ERROR) snprintf(logged, sizeof logged, "%s", message);
}

/* A namer that calls body i "part-i" and leaves body 0 to the default. */
static void name_parts(void* user, int32_t i, char* out, size_t size)
{
    (*(int*)user)++;
    if (i > 0) snprintf(out, size, "part-%d", (int)i);
}

/* The thread's message, the world's last error and its log say the same,
 * and name `place`. */
static void expect_one_text(const dvi_world* w, const char* place)
{
    expect_message(place, dvi_world_last_error(w));
    assert_string_equal(logged, dvi_error_message());
}

/* A world of a static sphere and a sphere moving at 1 m/s, with `method`;
 * body 1's mass is `mass`. */
static dvi_world* two_spheres(dvi_method method, double mass)
{
    dvi_world_def wd = dvi_default_world_def();
    wd.method = method;
    wd.dem.max_speed = 0.1; /* the moving sphere is over it */
    wd.gravity[2] = 0.0;
    wd.log = log_last;
    dvi_world* w = NULL;
    assert_int_equal(dvi_world_create(&wd, &w), DVI_OK);
    for (int i = 0; i < 2; i++) {
        dvi_body_def bd = dvi_default_body_def();
        bd.type = i == 0 ? DVI_BODY_FIXED : DVI_BODY_DYNAMIC;
        bd.mass = mass;
        bd.position[0] = 3.0 * i;
        bd.velocity[0] = i;
        dvi_body_id b;
        assert_int_equal(dvi_body_create(w, &bd, &b), DVI_OK);
        dvi_shape_def sd = dvi_default_shape_def();
        sd.type = DVI_SHAPE_SPHERE;
        sd.radius = 0.5;
        dvi_shape_id sh;
        assert_int_equal(dvi_shape_create(w, b, &sd, &sh), DVI_OK);
    }
    return w;
}

static void test_world_names_bodies(void** state)
{
    (void)state;
    /* the DEM step's speed guard: the default name, then the namer's */
    dvi_world* w = two_spheres(DVI_METHOD_DEM, 1.0);
    assert_int_equal(dvi_world_step(w, 1e-4), DVI_ERR_NUMERIC);
    expect_one_text(w, "DEM blow-up at bodies[1]: speed over the bound");
    int calls = 0;
    assert_int_equal(dvi_world_set_body_namer(w, name_parts, &calls), DVI_OK);
    assert_int_equal(dvi_world_step(w, 1e-4), DVI_ERR_NUMERIC);
    expect_one_text(w, "DEM blow-up at part-1: speed over the bound");
    assert_null(strstr(dvi_error_message(), "bodies[1]"));
    assert_int_equal(calls, 1);

    /* the state check: a body that differs, named as the world names it */
    void* blob = NULL;
    size_t size = 0;
    assert_int_equal(dvi_world_save_state(w, &blob, &size), DVI_OK);
    dvi_world* heavier = two_spheres(DVI_METHOD_DEM, 2.0);
    assert_int_equal(dvi_world_load_state(heavier, blob, size), DVI_ERR_INVALID_ARG);
    expect_one_text(heavier, "(bodies[1]: type, mass, inertia or gravity scale)");
    assert_int_equal(dvi_world_set_body_namer(heavier, name_parts, &calls), DVI_OK);
    assert_int_equal(dvi_world_load_state(heavier, blob, size), DVI_ERR_INVALID_ARG);
    expect_one_text(heavier, "(part-1: type, mass, inertia or gravity scale)");
    /* a namer that leaves a body unnamed gives the default; NULL restores it */
    assert_int_equal(dvi_world_set_body_namer(heavier, NULL, NULL), DVI_OK);
    assert_int_equal(dvi_world_load_state(heavier, blob, size), DVI_ERR_INVALID_ARG);
    expect_one_text(heavier, "(bodies[1]: type");
    assert_int_equal(dvi_world_set_body_namer(NULL, name_parts, &calls), DVI_ERR_INVALID_ARG);
    expect_message("world: NULL", NULL);
    free(blob);
    dvi_world_destroy(heavier);

    /* the other failures of a world: the same text everywhere */
    assert_int_equal(dvi_world_step(w, 0.0), DVI_ERR_INVALID_ARG);
    expect_one_text(w, "step: h must be > 0");
    assert_int_equal(dvi_world_set_friction_law(w, (dvi_friction_law)9), DVI_ERR_INVALID_ARG);
    expect_one_text(w, "world: unknown friction law 9");
    assert_int_equal(dvi_world_set_solver(w, "nope", NULL), DVI_ERR_INVALID_ARG);
    expect_one_text(w, "solver: unknown name \"nope\"");
    dvi_body_def bd = dvi_default_body_def();
    bd.mass = -1.0;
    dvi_body_id b;
    assert_true(dvi_body_create(w, &bd, &b) < 0);
    expect_one_text(w, "mass");
    dvi_world_destroy(w);
}

/* A DEM scene of a body `first` (a name, or NULL: unnamed) moving at
 * 0.5 m/s against max_speed 0.1 m/s; with `bed`, that body fixed and a
 * granular bed falling under gravity (a generator's bodies come after the
 * file's). */
static char* dem_scene(const char* first, int bed)
{
    static char text[2048];
    char name[64] = "";
    if (first) snprintf(name, sizeof name, "\"name\": \"%s\", ", first);
    snprintf(text, sizeof text,
             "{\"gravity\": [0, 0, %s], \"materials\": {\"default\": {\"friction\": 0.5}},"
             " \"bodies\": [{%s%s, \"position\": [0, 0, 5], \"shapes\": [{\"type\": \"sphere\", \"radius\": 0.1}]}]%s,"
             " \"formulation\": {\"method\": \"dem\", \"dt\": 1e-3, \"dem\": {\"max_speed\": 0.1}}, \"duration\": 1}",
             bed ? "-1000" : "0", name,
             bed ? "\"type\": \"fixed\"" : "\"mass\": 1, \"inertia\": \"auto\", \"velocity\": [0.5, 0, 0]",
             bed ? ", \"generators\": [{\"type\": \"granular_bed\", \"name\": \"bed\", \"region\": {\"min\": [-0.2, -0.2, 0],"
                   " \"max\": [0.2, 0.2, 0.2]}, \"radius\": 0.05, \"gap\": 0.01, \"density\": 2000}]"
                 : "");
    return text;
}

static void test_model_names_bodies(void** state)
{
    (void)state;
    const struct {
        const char* first;
        int bed;
        const char* place;
    } cases[] = {
        {"left", 0, "DEM blow-up at left: speed over the bound"},
        {NULL, 0, "DEM blow-up at bodies[0]: speed over the bound"}, /* an unnamed body of the file */
        {"ground", 1, "DEM blow-up at bed[0]: speed over the bound"}, /* the file's body fixed */
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const char* text = dem_scene(cases[k].first, cases[k].bed);
        dvi_scene* sc = NULL;
        dvi_scene_errors errs;
        if (dvi_scene_parse(text, strlen(text), NULL, &sc, &errs) != DVI_OK) fail_msg("scene %d: %s", (int)k, errs.text);
        dvi_model* m = NULL;
        char msg[512];
        assert_int_equal(dvi_model_create(sc, &m, msg, sizeof msg), DVI_OK);
        dvi_status st = DVI_OK;
        for (int i = 0; i < 10 && st >= 0; i++) st = dvi_model_step(m);
        assert_int_equal(st, DVI_ERR_NUMERIC);
        expect_message(cases[k].place, dvi_world_last_error(dvi_model_world(m)));
        dvi_model_destroy(m);
        dvi_scene_destroy(sc);
    }

    /* the model's own failures: its buffer and the thread's message */
    const char* text = dem_scene("left", 0);
    dvi_scene* sc = NULL;
    assert_int_equal(dvi_scene_parse(text, strlen(text), NULL, &sc, NULL), DVI_OK);
    dvi_model* m = NULL;
    char msg[512];
    assert_int_equal(dvi_model_create(sc, &m, msg, sizeof msg), DVI_OK);
    assert_int_equal(dvi_model_load_state(m, "junk", 4, msg, sizeof msg) < 0, 1);
    expect_message("state", msg);
    dvi_model* none = NULL;
    assert_int_equal(dvi_model_create(NULL, &none, msg, sizeof msg), DVI_ERR_INVALID_ARG);
    assert_null(none);
    expect_message("scene is NULL", msg);
    dvi_model_destroy(m);
    dvi_scene_destroy(sc);
}

/* A solve that fails or stops early: its result's message is the thread's. */
static void test_solver_result_message(void** state)
{
    (void)state;
    /* one frictional contact, W dense and coupled: one iteration does not solve it */
    const int32_t cp[4] = {0, 3, 6, 9}, ri[9] = {0, 1, 2, 0, 1, 2, 0, 1, 2};
    const double wx[9] = {2.0, 0.5, 0.3, 0.5, 2.0, 0.4, 0.3, 0.4, 2.0}, r[3] = {-1.0, 0.7, -0.4};
    dvi_csc W = {3, 3, cp, ri, wx};
    dvi_ccp_block blk = {DVI_BLOCK_FRICTION, 0.5, 0.0, 0.0};
    dvi_ccp_problem p = dvi_ccp_problem_empty();
    p.rows = 3, p.block_count = 1, p.blocks = &blk, p.W = &W, p.r = r;
    dvi_solver_settings one = dvi_default_solver_settings();
    one.max_iterations = 1, one.tolerance = 1e-14;
    dvi_solver* s = NULL;
    assert_int_equal(dvi_solver_create("apgd", &one, &s), DVI_OK);
    double g[3];
    dvi_solve_result res;
    dvi_error_clear();
    assert_int_equal(dvi_solver_solve(s, &p, g, &res), DVI_NOT_CONVERGED);
    assert_true(res.message[0] != '\0');
    assert_string_equal(res.message, dvi_error_message());
    assert_int_equal(dvi_error_status(), DVI_NOT_CONVERGED);
    blk.mu = -1.0;
    assert_int_equal(dvi_solver_solve(s, &p, g, &res), DVI_ERR_INVALID_ARG);
    expect_message("blocks[0].mu", res.message);
    dvi_solver_destroy(s);
}

/* Each thread has its own message. */
static void* other_thread(void* arg)
{
    (void)arg;
    dvi_error_clear();
    dvi_solver* s = NULL;
    dvi_solver_create("other", NULL, &s);
    return strstr(dvi_error_message(), "\"other\"") ? (void*)1 : NULL;
}

static void test_threads_and_length(void** state)
{
    (void)state;
    base_error_set(DVI_ERR_IO, "main thread");
    pthread_t t;
    void* ok = NULL;
    assert_int_equal(pthread_create(&t, NULL, other_thread, NULL), 0);
    assert_int_equal(pthread_join(t, &ok), 0);
    assert_non_null(ok);
    assert_string_equal(dvi_error_message(), "main thread");
    assert_int_equal(dvi_error_status(), DVI_ERR_IO);

    /* a message longer than the buffer is cut to 2047 bytes ending in "..." */
    char big[3000];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    base_error_set(DVI_ERR_PARSE, big);
    assert_int_equal(strlen(dvi_error_message()), 2047);
    assert_string_equal(dvi_error_message() + 2044, "...");
    base_error_set(DVI_ERR_NOMEM, NULL); /* no text: the status's own */
    assert_string_equal(dvi_error_message(), dvi_status_string(DVI_ERR_NOMEM));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_solver_layer),
        cmocka_unit_test(test_world_layer),
        cmocka_unit_test(test_terrain_layer),
        cmocka_unit_test(test_io_layer),
        cmocka_unit_test(test_world_names_bodies),
        cmocka_unit_test(test_model_names_bodies),
        cmocka_unit_test(test_solver_result_message),
        cmocka_unit_test(test_threads_and_length),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
