/* Scene files (scene.h, docs/scene-format.md): the malformed corpus of
 * tests/data/scenes_bad/ (status and message of each file), every scene of
 * examples/scenes/ loads and builds, physics through scenes against analytic
 * answers (pendulum period, incline stick/slip, sliding distance, stacks, the
 * rover's static wheel loads), the granular_bed generator (count,
 * determinism), probe columns, overrides, and model checkpoints.
 *
 * Under AddressSanitizer (about 10× slower) the long runs are shorter. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <cjson/cJSON.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sys/stat.h>
#include "dvi/io.h"
#include "dvi/scene.h"
#include "rover_probes.h"
#include "test_util.h"


#define PI 3.14159265358979323846
#define G 9.81

/* ---- helpers ----------------------------------------------------------------- */

static dvi_scene* load_ok(const char* path)
{
    dvi_scene* s = NULL;
    dvi_scene_errors e;
    dvi_status st = dvi_scene_load(path, &s, &e);
    if (st != DVI_OK) fail_msg("%s: %s\n%s", path, dvi_status_string(st), e.text ? e.text : "");
    assert_int_equal(e.count, 0);
    assert_null(e.text);
    assert_non_null(s);
    return s;
}

static dvi_scene* parse_ok(const char* text)
{
    dvi_scene* s = NULL;
    dvi_scene_errors e;
    dvi_status st = dvi_scene_parse(text, strlen(text), NULL, &s, &e);
    if (st != DVI_OK) fail_msg("%s\n%s", dvi_status_string(st), e.text ? e.text : "");
    assert_non_null(s);
    return s;
}

static dvi_model* build_ok(const dvi_scene* s)
{
    dvi_model* m = NULL;
    char msg[512];
    dvi_status st = dvi_model_create(s, &m, msg, sizeof msg);
    if (st != DVI_OK) fail_msg("dvi_model_create: %s: %s", dvi_status_string(st), msg);
    return m;
}

static void step_n(dvi_model* m, int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        dvi_status st = dvi_model_step(m);
        if (st < 0) fail_msg("step %lld: %s", (long long)i, dvi_world_last_error(dvi_model_world(m)));
    }
}

static int column_index(const dvi_model* m, int probe, const char* column)
{
    dvi_probe_info info;
    assert_int_equal(dvi_model_probe_info(m, probe, &info), DVI_OK);
    for (int32_t c = 0; c < info.columns; c++)
        if (strcmp(info.column_names[c], column) == 0) return c;
    fail_msg("probe %s has no column \"%s\"", info.name, column);
    return -1;
}

/* Samples probe `name` into values (at most 64 columns here). */
static void sample(const dvi_model* m, const char* name, double* values)
{
    int p = probe_index(m, name);
    assert_int_equal(dvi_model_probe_sample(m, p, values), DVI_OK);
}

/* ---- (a) the malformed corpus ----------------------------------------------------- */

typedef struct bad_case {
    const char* file;
    dvi_status status;
    const char* want[12]; /* substrings the error text must contain */
} bad_case;

static const bad_case BAD_CASES[] = {
    {"empty.json", DVI_ERR_PARSE, {"empty.json: empty file"}},
    {"truncated.json", DVI_ERR_PARSE, {"truncated.json:5:", "unexpected end of the file"}},
    {"binary_garbage.json", DVI_ERR_PARSE, {"binary_garbage.json:1:1: malformed JSON", "unexpected byte 0x7f"}},
    {"nan.json", DVI_ERR_PARSE, {"nan.json:2:", "NaN and Infinity are not JSON numbers"}},
    {"inf_1e999.json", DVI_ERR_INVALID_ARG, {"bodies[0].mass: must be a finite number (got +inf"}},
    {"huge_number.json", DVI_ERR_INVALID_ARG, {"bodies[0].position[1]: 1e+300 is out of range"}},
    {"negative_mass.json", DVI_ERR_INVALID_ARG, {"bodies[3].mass: must be > 0 (got -2)"}},
    {"negative_radius.json", DVI_ERR_INVALID_ARG, {"bodies[0].shapes[0].radius: must be > 0 (got -0.1"}},
    {"non_spd_inertia.json", DVI_ERR_INVALID_ARG, {"bodies[0].inertia: must be positive definite"}},
    {"asymmetric_inertia.json", DVI_ERR_INVALID_ARG, {"bodies[0].inertia: must be symmetric"}},
    {"singular_inertia.json", DVI_ERR_INVALID_ARG, {"bodies[0].inertia: must be positive definite"}},
    {"joint_missing_body.json", DVI_ERR_INVALID_ARG, {"joints[2].body_b: no body named \"bogie_L\""}},
    {"duplicate_names.json",
     DVI_ERR_INVALID_ARG,
     {"bodies[1].name: duplicate name \"a\" (also bodies[0])", "joints[1].name: duplicate name \"j\" (also joints[0])"}},
    {"unknown_key.json", DVI_ERR_INVALID_ARG, {"bodies[0].mas: unknown key (did you mean \"mass\"?)"}},
    {"unknown_top_key.json", DVI_ERR_INVALID_ARG, {"probe: unknown key (did you mean \"probes\"?)"}},
    {"wrong_type.json", DVI_ERR_INVALID_ARG, {"bodies[0].mass: must be a number (got a string)"}},
    {"deep_nesting.json", DVI_ERR_PARSE, {"deep_nesting.json:1:", "nested deeper than 64 levels"}},
    {"missing_mesh.json", DVI_ERR_INVALID_ARG,
     {"bodies[0].shapes[0].file: cannot read the mesh file \"no_such_mesh.obj\"", "cannot open (No such file or directory)"}},
    {"bad_mesh.json", DVI_ERR_INVALID_ARG, {"bodies[0].shapes[0].file: ", "bad_face_index.obj:", "out of range"}},
    {"bad_dem.json",
     DVI_ERR_INVALID_ARG,
     {"formulation.dem.normal_model: unknown value \"herz\" (did you mean \"hertz\"?",
      "materials.soft.young_modulus: must be >= 0 (got -1e+07)", "materials.soft.poisson_ratio: must be in (-1, 0.5] (got 0.6)",
      "bodies[0].shapes[1].dem_samples: needs a dynamic or kinematic body (this body is fixed)"}},
    {"zero_dt.json", DVI_ERR_INVALID_ARG, {"formulation.dt: must be > 0 (got 0)"}},
    {"bad_warm_start_scale.json", DVI_ERR_INVALID_ARG, {"formulation.warm_start_scale: must be in (0, 1] (got 1.5)"}},
    {"bad_joint_solve.json", DVI_ERR_INVALID_ARG, {"formulation.joint_solve: must be \"auto\", \"iterative\" or \"direct\" (got \"cholesky\")"}},
    {"bad_coulomb_check.json", DVI_ERR_INVALID_ARG, {"formulation.coulomb_check: must be a solver of Coulomb's law", "(got \"apgd\")"}},
    {"non_unit_quaternion.json", DVI_ERR_INVALID_ARG, {"bodies[0].orientation: must be a unit quaternion", "norm 1.118"}},
    {"joint_same_body.json", DVI_ERR_INVALID_ARG, {"joints[0].body_b: body_a and body_b are the same body (\"a\")"}},
    {"generator_too_many.json", DVI_ERR_INVALID_ARG,
     {"generators[0]: makes 125000000 spheres, more than the limit of 10000000"}},
    {"units_imperial.json", DVI_ERR_INVALID_ARG, {"units: must be \"SI\" (got \"imperial\")"}},
    {"missing_formulation.json", DVI_ERR_INVALID_ARG, {"formulation: missing"}},
    {"top_level_array.json", DVI_ERR_PARSE, {"top_level_array.json: the top level must be a JSON object (got an array)"}},
    {"unknown_solver.json", DVI_ERR_INVALID_ARG, {"formulation.solver: unknown solver \"apdg\" (one of \"apgd\""}},
    {"plane_on_dynamic_body.json", DVI_ERR_INVALID_ARG,
     {"bodies[0].shapes[0].type: a plane needs a fixed body (this body is dynamic)"}},
    {"bad_probes.json",
     DVI_ERR_INVALID_ARG,
     {"probes[0].joint: no joint named \"hinge\"", "probes[1].what: unknown value \"pressure\"",
      "probes[2].bodies: names the same body twice", "probes[3].every: must be an integer (got 2.5)"}},
    {"many_errors.json",
     DVI_ERR_INVALID_ARG,
     {"formulation.dt: must be > 0 (got -1)", "bodies[0].type: unknown value \"floating\"",
      "bodies[1].shapes[0].half_extents: must have 3 elements (got 2)", "materials.rubber.restitution: must be in [0, 1]"}},
    {"duplicate_keys.json", DVI_ERR_INVALID_ARG, {"bodies[0]: duplicate key \"mass\""}},
    {"trailing_garbage.json", DVI_ERR_PARSE, {"trailing_garbage.json:2:1: malformed JSON: unexpected text after the end"}},
    {"jitter_too_large.json", DVI_ERR_INVALID_ARG, {"generators[0].jitter: must be <= gap/2 = 0.005"}},
    {"motor_wrong_joint.json", DVI_ERR_INVALID_ARG, {"joints[0].motor.type: \"linear_speed\" needs a prismatic joint"}},
    {"motor_damping.json",
     DVI_ERR_INVALID_ARG,
     {"joints[0].motor.damping: must be >= 0 (got -2)", "joints[1].motor.damping: not used by a torque motor"}},
    {"fixed_body_with_mass.json", DVI_ERR_INVALID_ARG, {"bodies[0].mass: not used by a fixed body"}},
    {"invalid_name.json", DVI_ERR_INVALID_ARG, {"bodies[0].name: invalid name \"left wheel\""}},
    {"bad_heightfield.json", DVI_ERR_INVALID_ARG, {"bodies[0].shapes[0].heights: must have nx·ny = 9 elements (got 8)"}},
    {"radius_range.json",
     DVI_ERR_INVALID_ARG,
     {"generators[0].radius.distribution: unknown value \"normal\"", "generators[0].radius: min (0.05) must not exceed max"}},
    {"negative_duration.json", DVI_ERR_INVALID_ARG, {"duration: must be > 0 (got -5)"}},
    {"auto_inertia_no_shape.json", DVI_ERR_INVALID_ARG, {"bodies[0].inertia: missing (no first shape with a volume"}},
    {"joint_two_fixed_bodies.json", DVI_ERR_INVALID_ARG, {"joints[0]: at least one of the two bodies must be dynamic"}},
    {"generated_body_out_of_range.json", DVI_ERR_INVALID_ARG, {"probes[0].bodies[2]: no body named \"bed[4]\""}},
    {"unterminated_string.json", DVI_ERR_PARSE, {"unterminated_string.json:", "unexpected end of the file"}},
    {"bad_material_ref.json", DVI_ERR_INVALID_ARG, {"bodies[0].shapes[0].material: no material named \"stel\""}},
    {"bad_exclude.json",
     DVI_ERR_INVALID_ARG,
     {"generators[0].exclude[0].radius: must be > 0 (got 0)", "generators[0].exclude[1].centre: missing",
      "generators[0].exclude[2].center: unknown key (did you mean \"centre\"?)", "generators[1].exclude[0]: covers more"}},
    {"bad_friction_law.json", DVI_ERR_INVALID_ARG, {"formulation.friction_law: must be \"ccp\" or \"coulomb\" (got \"coloumb\")"}},
    {"friction_law_solver.json",
     DVI_ERR_INVALID_ARG,
     {"formulation.solver: \"apgd\" solves the CCP but formulation.friction_law is \"coulomb\" (its solvers: "}},
    {"friction_rolling_nsgs.json",
     DVI_ERR_INVALID_ARG,
     {"formulation.solver: \"nsgs\" does not take the friction_rolling blocks of Coulomb's law, which the contacts "
      "between generators[0] (\"bed\") and bodies[0].shapes[0] (\"ground\") give (rolling_friction > 0 on both); "
      "solvers that do: desaxce or lemke with lemke.coulomb"}},
    {"friction_law_lemke.json",
     DVI_ERR_INVALID_ARG,
     {"formulation.solver: \"lemke\" with lemke.coulomb solves Coulomb's law but formulation.friction_law (the default) "
      "is \"ccp\""}},
    {"bad_scm.json",
     DVI_ERR_INVALID_ARG,
     {"terrain[0].elastic_stiffness: must exceed k_phi (820000 Pa/m^n; got 500000 Pa/m)",
      "terrain[1].spacing: larger than size[0] (1 m)",
      "terrain[2].spacing: gives 2000001 nodes along size[0], more than the limit of 1048576",
      "terrain[2].friction_angle: must be in [0, pi/2) rad (got 30)"}},
    {"bad_scm_keys.json",
     DVI_ERR_INVALID_ARG,
     {"terrain[0].heights: must have (nx + 1)·(ny + 1) = 9 elements, one per node (got 3)",
      "terrain[0].bodies[0]: a fixed body", "terrain[0].bodies[1]: no body named \"wheel\"",
      "terrain[1].erosion_angle: needs \"bulldozing\": true"}},
    {"bad_wheel_slip.json",
     DVI_ERR_INVALID_ARG,
     {"probes[0].radius: missing, and body \"ball\" has no cylinder as its first shape to take it from",
      "probes[1].axis: the axle direction must not be zero", "probes[2].radius: must be > 0 (got -1)",
      "probes[3].radius: not used by a \"attitude\" probe"}},
    {"bad_bekker_wong.json",
     DVI_ERR_INVALID_ARG,
     {"terrain[0].soil.lambda: must be in [0, 2] (got 3)", "terrain[0].soil.friction_angle: must be below pi/2 rad (got 1.7)",
      "terrain[0].ground.normal: must not be zero", "terrain[0].regularisation_speed: must be > 0",
      "terrain[1].wheels[0]: must name a dynamic body with a cylinder shape",
      "terrain[1].wheels[2]: names the same wheel as wheels[1]",
      "terrain[1].ground.body: must name a fixed body with a height-field shape", "terrain[1].radius: must be >= 0",
      "terrain[2].model: unknown value \"bekker_wang\""}},
};

static int count_lines(const char* t)
{
    int n = 0;
    for (; t && *t; t++) n += *t == '\n';
    return n;
}

static void check_errors(const char* label, dvi_status got, const dvi_scene_errors* e, dvi_status status,
                         const char* const* want, int nwant)
{
    if (got != status) fail_msg("%s: status %s, expected %s\n%s", label, dvi_status_string(got),
                                dvi_status_string(status), e->text ? e->text : "");
    assert_non_null(e->text);
    assert_true(e->count >= 1);
    assert_int_equal(e->count, count_lines(e->text)); /* one line per problem, each "path: message" */
    for (int k = 0; k < nwant; k++)
        if (want[k] && !strstr(e->text, want[k]))
            fail_msg("%s: the errors\n%sdo not contain \"%s\"", label, e->text, want[k]);
}

static void test_bad_corpus(void** state)
{
    (void)state;
    size_t n = sizeof BAD_CASES / sizeof BAD_CASES[0];
    assert_true(n >= 30);
    for (size_t k = 0; k < n; k++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", SRC_PATH("tests/data/scenes_bad"), BAD_CASES[k].file);
        dvi_scene* s = (dvi_scene*)&path; /* must be reset to NULL */
        dvi_scene_errors e;
        dvi_status st = dvi_scene_load(path, &s, &e);
        assert_null(s);
        int nwant = 0;
        while (nwant < 12 && BAD_CASES[k].want[nwant]) nwant++;
        check_errors(BAD_CASES[k].file, st, &e, BAD_CASES[k].status, BAD_CASES[k].want, nwant);
        print_message("%-34s %-18s %d line(s), first: %.*s\n", BAD_CASES[k].file, dvi_status_string(st), e.count,
                      (int)strcspn(e.text, "\n"), e.text);
        /* the same text through dvi_scene_parse gives the same status; errors may be NULL */
        FILE* f = fopen(path, "rb");
        assert_non_null(f);
        static char buf[1 << 16];
        size_t len = fread(buf, 1, sizeof buf, f);
        fclose(f);
        dvi_scene* s2 = NULL;
        dvi_status st2 = dvi_scene_parse(buf, len, SRC_PATH("tests/data/scenes_bad"), &s2, NULL);
        assert_int_equal(st2, st);
        assert_null(s2);
        dvi_scene_errors_free(&e);
        assert_null(e.text);
        assert_int_equal(e.count, 0);
    }
    /* every file of the directory is in the table */
    DIR* d = opendir(SRC_PATH("tests/data/scenes_bad"));
    assert_non_null(d);
    struct dirent* de;
    size_t files = 0;
    while ((de = readdir(d))) {
        if (de->d_name[0] == '.') continue;
        files++;
        bool listed = false;
        for (size_t k = 0; k < n; k++) listed = listed || strcmp(BAD_CASES[k].file, de->d_name) == 0;
        if (!listed) fail_msg("%s/%s has no expected error in the table", SRC_PATH("tests/data/scenes_bad"), de->d_name);
    }
    closedir(d);
    assert_int_equal(files, n);
}

/* Hostile inputs made at run time: a million-element array, a 100,000-entry
 * bodies array, a very long key, a 100-level nesting, a missing file. */
static void test_hostile_generated(void** state)
{
    (void)state;
    const char* head = "{\"formulation\": {\"dt\": 0.001}, \"duration\": 1, \"gravity\": [";
    size_t n = 1000000, cap = strlen(head) + 2 * n + 64;
    char* t = malloc(cap);
    assert_non_null(t);
    size_t o = (size_t)snprintf(t, cap, "%s", head);
    for (size_t i = 0; i < n; i++) {
        t[o++] = '0';
        t[o++] = i + 1 < n ? ',' : ']';
    }
    o += (size_t)snprintf(t + o, cap - o, "}");
    dvi_scene* s = NULL;
    dvi_scene_errors e;
    dvi_status st = dvi_scene_parse(t, o, NULL, &s, &e);
    const char* want1[] = {"gravity: must have 3 elements (got 1000000)"};
    check_errors("million-element gravity", st, &e, DVI_ERR_INVALID_ARG, want1, 1);
    assert_int_equal(e.count, 1);
    dvi_scene_errors_free(&e);

    /* 200,000 bodies written out: refused as a whole, without 200,000 messages */
    head = "{\"formulation\": {\"dt\": 0.001}, \"duration\": 1, \"bodies\": [";
    n = 200000;
    free(t);
    cap = strlen(head) + 3 * n + 64;
    t = malloc(cap);
    assert_non_null(t);
    o = (size_t)snprintf(t, cap, "%s", head);
    for (size_t i = 0; i < n; i++) {
        memcpy(t + o, "{}", 2);
        o += 2;
        t[o++] = i + 1 < n ? ',' : ']';
    }
    o += (size_t)snprintf(t + o, cap - o, ", \"probes\": [{\"name\": \"p\", \"what\": \"position\", \"body\": \"x\"}]}");
    st = dvi_scene_parse(t, o, NULL, &s, &e);
    const char* want2[] = {"bodies: 200000 entries, more than the limit of 100000"};
    check_errors("200,000 bodies", st, &e, DVI_ERR_INVALID_ARG, want2, 1);
    assert_int_equal(e.count, 1); /* no "no body named" for the probe: the bodies were not read */
    dvi_scene_errors_free(&e);

    /* 5,000 unknown keys: 200 lines, then one line counting the rest */
    free(t);
    cap = 5000 * 16 + 128;
    t = malloc(cap);
    assert_non_null(t);
    o = (size_t)snprintf(t, cap, "{\"formulation\": {\"dt\": 0.001}, \"duration\": 1");
    for (int i = 0; i < 5000; i++) o += (size_t)snprintf(t + o, cap - o, ", \"k%d\": %d", i, i);
    o += (size_t)snprintf(t + o, cap - o, "}");
    st = dvi_scene_parse(t, o, NULL, &s, &e);
    const char* want3[] = {"k0: unknown key", "scene: 4800 more problems not listed"};
    check_errors("5,000 unknown keys", st, &e, DVI_ERR_INVALID_ARG, want3, 2);
    assert_int_equal(e.count, 201);
    dvi_scene_errors_free(&e);
    free(t);

    /* nesting at the limit (64) parses; 65 does not */
    char deep[512];
    for (int levels = 63; levels <= 64; levels++) {
        o = (size_t)snprintf(deep, sizeof deep, "{\"formulation\": {\"dt\": 0.001}, \"duration\": 1, \"comment\": \"x\", \"description\": ");
        (void)o;
        char* p = deep + strlen(deep);
        for (int i = 0; i < levels; i++) *p++ = '[';
        for (int i = 0; i < levels; i++) *p++ = ']';
        strcpy(p, "}");
        st = dvi_scene_parse(deep, strlen(deep), NULL, &s, &e);
        if (levels == 63) {
            /* depth 64 in all: accepted by the parser, refused by the schema */
            const char* w[] = {"description: must be a string (got an array)"};
            check_errors("63 nested arrays", st, &e, DVI_ERR_INVALID_ARG, w, 1);
        } else {
            const char* w[] = {"nested deeper than 64 levels"};
            check_errors("64 nested arrays", st, &e, DVI_ERR_PARSE, w, 1);
        }
        dvi_scene_errors_free(&e);
    }

    st = dvi_scene_load(SRC_PATH("tests/data/scenes_bad/no_such_scene.json"), &s, &e);
    const char* want4[] = {"no_such_scene.json: cannot open (No such file or directory)"};
    check_errors("missing file", st, &e, DVI_ERR_IO, want4, 1);
    dvi_scene_errors_free(&e);
    st = dvi_scene_load(SRC_PATH("tests/data/scenes_bad"), &s, &e); /* a directory */
    assert_true(st == DVI_ERR_IO || st == DVI_ERR_PARSE);
    dvi_scene_errors_free(&e);
    assert_int_equal(dvi_scene_load(NULL, &s, NULL), DVI_ERR_INVALID_ARG);
    assert_int_equal(dvi_scene_parse("{}", 2, NULL, NULL, NULL), DVI_ERR_INVALID_ARG);
}

/* Collision filters and a joint's "collide" in scene files: a ball of
 * category 2 falls through a ground whose mask leaves 2 out; bad values are
 * named. */
static void test_scene_filters(void** state)
{
    (void)state;
    dvi_scene* s = parse_ok(
        "{\"duration\": 0.3, \"formulation\": {\"dt\": 0.001},\n"
        " \"bodies\": [{\"name\": \"ground\", \"type\": \"fixed\", \"shapes\": [{\"type\": \"plane\", \"filter\": "
        "{\"mask\": 4294967293}}]},\n"
        "   {\"name\": \"kept\", \"mass\": 1, \"position\": [0, 0, 0.1], \"shapes\": [{\"type\": \"sphere\", \"radius\": 0.1}]},\n"
        "   {\"name\": \"ghost\", \"mass\": 1, \"position\": [1, 0, 0.1], \"shapes\": [{\"type\": \"sphere\", \"radius\": 0.1, "
        "\"filter\": {\"category\": 2}}]},\n"
        "   {\"name\": \"arm\", \"mass\": 1, \"position\": [3, 0, 0.5], \"shapes\": [{\"type\": \"box\", \"half_extents\": [0.2, "
        "0.2, 0.2]}]}],\n"
        " \"joints\": [{\"type\": \"spherical\", \"body_a\": \"kept\", \"body_b\": \"arm\", \"anchor\": [3, 0, 0.5], "
        "\"collide\": true}]}");
    dvi_model* m = build_ok(s);
    step_n(m, 300);
    dvi_body_id kept, ghost;
    assert_int_equal(dvi_model_find_body(m, "kept", &kept), DVI_OK);
    assert_int_equal(dvi_model_find_body(m, "ghost", &ghost), DVI_OK);
    double xk[3], xg[3];
    dvi_body_get_position(dvi_model_world_const(m), kept, xk);
    dvi_body_get_position(dvi_model_world_const(m), ghost, xg);
    assert_true(xg[2] < -0.2);
    assert_true(xk[2] > 0.09);
    dvi_model_destroy(m);
    dvi_scene_destroy(s);
    dvi_scene_errors e = {0};
    const char* bad =
        "{\"bodies\": [{\"name\": \"b\", \"mass\": 1, \"shapes\": [{\"type\": \"sphere\", \"radius\": 0.1, \"filter\": "
        "{\"category\": 0, \"mask\": -1, \"group\": 3}}]}],\n"
        " \"joints\": [{\"type\": \"spherical\", \"body_b\": \"b\", \"anchor\": [0, 0, 0], \"collide\": 1}]}";
    assert_int_equal(dvi_scene_parse(bad, strlen(bad), NULL, &s, &e), DVI_ERR_INVALID_ARG);
    print_message("bad filters:\n%s", e.text);
    assert_non_null(strstr(e.text, "bodies[0].shapes[0].filter.category"));
    assert_non_null(strstr(e.text, "bodies[0].shapes[0].filter.mask"));
    assert_non_null(strstr(e.text, "bodies[0].shapes[0].filter.group: unknown key"));
    assert_non_null(strstr(e.text, "joints[0].collide"));
    dvi_scene_errors_free(&e);
}

/* A scene that names no collision envelope gets the world's 5 mm, but at
 * most half its smallest shape: a bed of 729 spheres of r = 1 µm under 5 mm
 * made every pair a contact (266,085 contacts, 57 s for the first step). */
/* formulation.block_tolerance reaches the solver's settings; its default
 * is the solvers' one; a value not > 0 is refused, naming the place. */
static void test_block_tolerance_key(void** state)
{
    (void)state;
    const char* body = " \"bodies\": [{\"name\": \"ground\", \"type\": \"fixed\", \"shapes\": [{\"type\": \"plane\"}]}]}";
    char text[512];
    snprintf(text, sizeof text, "{\"duration\": 0.01, \"formulation\": {\"dt\": 0.001, \"block_tolerance\": 1e-6},\n%s", body);
    dvi_scene* s = parse_ok(text);
    assert_true(dvi_scene_get_settings(s).solver_settings.block_tolerance == 1e-6);
    dvi_scene_destroy(s);
    snprintf(text, sizeof text, "{\"duration\": 0.01, \"formulation\": {\"dt\": 0.001},\n%s", body);
    s = parse_ok(text);
    assert_true(dvi_scene_get_settings(s).solver_settings.block_tolerance ==
                dvi_default_solver_settings().block_tolerance);
    dvi_scene_destroy(s);
    snprintf(text, sizeof text, "{\"duration\": 0.01, \"formulation\": {\"dt\": 0.001, \"block_tolerance\": 0},\n%s", body);
    s = NULL;
    dvi_scene_errors e;
    assert_int_equal(dvi_scene_parse(text, strlen(text), NULL, &s, &e), DVI_ERR_INVALID_ARG);
    assert_null(s);
    assert_non_null(e.text);
    assert_non_null(strstr(e.text, "formulation.block_tolerance: must be > 0 (got 0)"));
    dvi_scene_errors_free(&e);
}

static void test_default_envelope(void** state)
{
    (void)state;
    const char* text =
        "{\"duration\": 0.001, \"formulation\": {\"dt\": 1e-6},\n"
        " \"bodies\": [{\"name\": \"ground\", \"type\": \"fixed\", \"shapes\": [{\"type\": \"plane\"}]}],\n"
        " \"generators\": [{\"type\": \"granular_bed\", \"name\": \"bed\", \"region\": {\"min\": [0, 0, 0], \"max\": "
        "[1.89e-5, 1.89e-5, 1.89e-5]}, \"radius\": 1e-6, \"gap\": 1e-7, \"jitter\": 0, \"density\": 2500}]}";
    dvi_scene* s = parse_ok(text);
    assert_int_equal(dvi_scene_body_count(s), 1 + 729);
    dvi_model* m = build_ok(s);
    assert_true(dvi_model_step(m) >= 0);
    int32_t nc = dvi_world_contact_count(dvi_model_world(m));
    print_message("729 spheres of r = 1e-6 m, no envelope named: %d contacts after one step (lattice neighbours and "
                  "the ground: at most 2,268)\n",
                  (int)nc);
    assert_true(nc > 0 && nc <= 3 * 729 + 81); /* every pair within 5 mm: 266,085 */
    dvi_model_destroy(m);
    dvi_scene_destroy(s);
}

/* An ellipsoid in a scene: "density" gives m = ρ·4/3·π·abc, "inertia":
 * "auto" the closed form m(b² + c²)/5 … (checked through the motion: a
 * torque τ about x gives ω̇ = τ / I_xx), and a zero semi-axis is named. */
static void test_scene_ellipsoid(void** state)
{
    (void)state;
    const char* text =
        "{\"name\": \"egg\", \"gravity\": [0, 0, 0],\n"
        " \"bodies\": [{\"name\": \"egg\", \"density\": 1000, \"inertia\": \"auto\", \"position\": [0, 0, 1],\n"
        "   \"applied_torque\": [0.5, 0, 0],\n"
        "   \"shapes\": [{\"type\": \"ellipsoid\", \"semi_axes\": [0.3, 0.2, 0.1]}]}],\n"
        " \"formulation\": {\"dt\": 0.001}, \"duration\": 0.01}";
    dvi_scene* s = parse_ok(text);
    dvi_model* m = build_ok(s);
    const dvi_world* w = dvi_model_world_const(m);
    dvi_body_id b;
    assert_int_equal(dvi_world_body_at(w, 0, &b), DVI_OK);
    dvi_body_info info;
    assert_int_equal(dvi_body_get_info(w, b, &info), DVI_OK);
    const double mass = 1000.0 * 4.0 / 3.0 * PI * 0.3 * 0.2 * 0.1, Ixx = mass * (0.2 * 0.2 + 0.1 * 0.1) / 5.0;
    print_message("ellipsoid (0.3, 0.2, 0.1) m, 1000 kg/m^3: mass %.9f kg (closed form %.9f)\n", info.mass, mass);
    assert_near(info.mass, mass, 1e-12 * mass);
    assert_int_equal(info.shape_type, DVI_SHAPE_ELLIPSOID);
    assert_near(info.bounding_radius, 0.3, 1e-15);
    step_n(m, 10);
    double wv[3];
    assert_int_equal(dvi_body_get_angular_velocity(w, b, wv), DVI_OK);
    const double expect = 0.5 / Ixx * 0.01;
    print_message("after 10 ms of 0.5 N m about x: omega_x %.9f rad/s, tau t / I_xx = %.9f\n", wv[0], expect);
    assert_near(wv[0], expect, 1e-9 * expect);
    dvi_model_destroy(m);
    dvi_scene_destroy(s);

    const char* bad =
        "{\"bodies\": [{\"mass\": 1, \"shapes\": [{\"type\": \"ellipsoid\", \"semi_axes\": [0.3, 0, 0.1]}]}],\n"
        " \"formulation\": {\"dt\": 0.001}, \"duration\": 0.01}";
    dvi_scene_errors e;
    s = NULL;
    assert_int_equal(dvi_scene_parse(bad, strlen(bad), NULL, &s, &e), DVI_ERR_INVALID_ARG);
    print_message("%s", e.text);
    assert_non_null(strstr(e.text, "bodies[0].shapes[0].semi_axes[1]"));
    dvi_scene_errors_free(&e);
}

/* Input files are checked before a byte is read: a FIFO (which would block
 * the reader forever), a character device (/dev/urandom: read without end),
 * a directory and a sparse file of 2 GiB (read to its end, once) are refused
 * at once by every reader, each saying what the file is. */
static void test_input_files_refused(void** state)
{
    (void)state;
    char dir[] = "/tmp/dvi_inputs_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char fifo[128], big[128], scene[128], msg[512];
    snprintf(fifo, sizeof fifo, "%s/pipe", dir);
    snprintf(big, sizeof big, "%s/big.json", dir);
    snprintf(scene, sizeof scene, "%s/mesh_from_pipe.json", dir);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    FILE* f = fopen(big, "wb");
    assert_non_null(f);
    assert_int_equal(ftruncate(fileno(f), (off_t)2 << 30), 0); /* sparse: no disk used */
    fclose(f);
    f = fopen(scene, "wb");
    assert_non_null(f);
    fputs("{\"duration\": 1, \"bodies\": [{\"name\": \"g\", \"type\": \"fixed\", \"shapes\": [{\"type\": \"mesh\", \"file\": "
          "\"pipe\"}]}]}",
          f);
    fclose(f);
    const struct {
        const char* path;
        const char* why;
    } cases[] = {
        {fifo, "not a regular file (a FIFO)"},
        {"/dev/urandom", "not a regular file (a character device)"},
        {dir, "not a regular file (a directory)"},
        {big, "larger than 1073741824 bytes (2147483648 bytes)"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        dvi_scene* s = NULL;
        dvi_scene_errors e = {0};
        dvi_status st = dvi_scene_load(cases[k].path, &s, &e);
        assert_true(st < 0);
        assert_null(s);
        if (!e.text || !strstr(e.text, cases[k].why)) fail_msg("scene %s: \"%s\"", cases[k].path, e.text);
        dvi_scene_errors_free(&e);
        dvi_mesh_data mesh;
        st = dvi_obj_read(cases[k].path, &mesh, msg, sizeof msg);
        if (st >= 0 || !strstr(msg, cases[k].why)) fail_msg("obj %s: \"%s\"", cases[k].path, msg);
        dvi_ccp_file* cf = NULL;
        st = dvi_ccp_problem_read_json(cases[k].path, &cf, msg, sizeof msg);
        if (st >= 0 || cf || !strstr(msg, cases[k].why)) fail_msg("ccp json %s: \"%s\"", cases[k].path, msg);
        if (k < 3) { /* FCLIB files have no size limit of their own (HDF5 reads what it needs) */
            dvi_fclib_info info;
            st = dvi_fclib_read_ex(cases[k].path, 0, &cf, &info, msg, sizeof msg);
            if (st >= 0 || cf || !strstr(msg, cases[k].why)) fail_msg("fclib %s: \"%s\"", cases[k].path, msg);
        }
    }
    /* a scene naming a FIFO as its mesh file */
    dvi_scene* s = NULL;
    dvi_scene_errors e = {0};
    assert_true(dvi_scene_load(scene, &s, &e) < 0);
    if (!e.text || !strstr(e.text, "not a regular file (a FIFO)")) fail_msg("mesh: \"%s\"", e.text);
    print_message("a FIFO, /dev/urandom, a directory and a sparse 2 GiB file refused by four readers; a scene's "
                  "mesh: %s",
                  e.text);
    dvi_scene_errors_free(&e);
    unlink(fifo);
    unlink(big);
    unlink(scene);
    rmdir(dir);
}

/* Random byte edits of a valid scene: never a crash, and the status agrees
 * with the result (a scene and no errors, or errors and no scene). */
static void test_mutations(void** state)
{
    (void)state;
    FILE* f = fopen(SRC_PATH("examples/scenes/pendulum.json"), "rb");
    assert_non_null(f);
    static char orig[1 << 14], buf[1 << 14];
    size_t len = fread(orig, 1, sizeof orig, f);
    fclose(f);
    static const char BYTES[] = "{}[]\":,0123456789-+.eE \n\\tfnaxyz\x01\xff";
    uint64_t rng = 12345;
    int ok = 0, bad = 0;
#ifdef SANITIZED
    const int rounds = 300;
#else
    const int rounds = 2000;
#endif
    for (int r = 0; r < rounds; r++) {
        memcpy(buf, orig, len);
        size_t n = len;
        int edits = 1 + (int)(rng % 4);
        for (int k = 0; k < edits; k++) {
            rng = rng * 6364136223846793005u + 1442695040888963407u;
            size_t at = (size_t)(rng >> 33) % n;
            int op = (int)((rng >> 20) % 3);
            char ch = BYTES[(rng >> 40) % (sizeof BYTES - 1)];
            if (op == 0) buf[at] = ch;                                            /* replace */
            else if (op == 1 && n > 1) memmove(buf + at, buf + at + 1, --n - at); /* delete */
            else if (n + 1 < sizeof buf) {                                        /* insert */
                memmove(buf + at + 1, buf + at, n - at);
                buf[at] = ch;
                n++;
            }
        }
        if (r % 97 == 0) n = (size_t)(rng >> 35) % n; /* truncate */
        dvi_scene* s = NULL;
        dvi_scene_errors e;
        dvi_status st = dvi_scene_parse(buf, n, NULL, &s, &e);
        if (st == DVI_OK) {
            assert_non_null(s);
            assert_int_equal(e.count, 0);
            ok++;
            dvi_model* m = NULL;
            char msg[256];
            if (dvi_model_create(s, &m, msg, sizeof msg) == DVI_OK) {
                step_n(m, 2);
                dvi_model_destroy(m);
            }
            dvi_scene_destroy(s);
        } else {
            assert_true(st < 0);
            assert_null(s);
            assert_true(e.count >= 1 && e.text != NULL);
            assert_int_equal(e.count, count_lines(e.text));
            bad++;
        }
        dvi_scene_errors_free(&e);
    }
    print_message("%d mutated pendulum scenes: %d accepted, %d refused\n", rounds, ok, bad);
    assert_true(bad > rounds / 2);
}

/* ---- (b) every example scene loads and builds ------------------------------------ */

static void test_example_scenes(void** state)
{
    (void)state;
    DIR* d = opendir(SRC_PATH("examples/scenes"));
    assert_non_null(d);
    struct dirent* de;
    int count = 0;
    while ((de = readdir(d))) {
        size_t n = strlen(de->d_name);
        if (n < 6 || strcmp(de->d_name + n - 5, ".json") != 0) continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", SRC_PATH("examples/scenes"), de->d_name);
        dvi_scene* s = load_ok(path);
        dvi_scene_settings set = dvi_scene_get_settings(s);
        assert_true(strcmp(set.method, "dvi") == 0 || strcmp(set.method, "dem") == 0);
        assert_true(set.dt > 0.0 && set.duration > set.dt);
        assert_true(set.name[0] != '\0');
        dvi_model* m = build_ok(s);
        assert_int_equal(dvi_world_body_count(dvi_model_world_const(m)), dvi_scene_body_count(s));
        assert_true(dvi_model_probe_count(m) >= 1);
        /* step once; every probe samples finite values */
        assert_true(dvi_model_step(m) >= 0);
        assert_int_equal(dvi_model_step_count(m), 1);
        assert_near(dvi_model_time(m), set.dt, 1e-15);
        for (int32_t p = 0; p < dvi_model_probe_count(m); p++) {
            dvi_probe_info info;
            assert_int_equal(dvi_model_probe_info(m, p, &info), DVI_OK);
            double* v = malloc((size_t)info.columns * sizeof *v);
            assert_non_null(v);
            assert_int_equal(dvi_model_probe_sample(m, p, v), DVI_OK);
            for (int32_t c = 0; c < info.columns; c++) {
                /* a slip ratio is NaN by definition while the wheel does not turn
                 * (ω r = 0, as at the start of a motor ramp) */
                size_t ln = strlen(info.column_names[c]);
                bool slip = ln >= 5 && strcmp(info.column_names[c] + ln - 5, ".slip") == 0;
                if (!(slip && isnan(v[c])) && !isfinite(v[c]))
                    fail_msg("%s: probe %s column %s = %g after one step", de->d_name, info.name,
                             info.column_names[c], v[c]);
            }
            free(v);
        }
        print_message("%-32s %-24s %6lld bodies, %d probes, dt %g s, %g s, solver %s\n", de->d_name, set.name,
                      (long long)dvi_scene_body_count(s), dvi_model_probe_count(m), set.dt, set.duration, set.solver);
        dvi_model_destroy(m);
        dvi_scene_destroy(s);
        count++;
    }
    closedir(d);
    assert_true(count >= 8);
}

/* ---- (c) physics through scenes --------------------------------------------------- */

/* Period from the downward zero crossings of the bob's y (probe "bob",
 * sampled every 10 steps, linear interpolation: y is almost linear near
 * y = 0, where the angular acceleration vanishes); relative tolerance tol. */
static void pendulum_case(const char* file, double tol)
{
    dvi_scene* s = load_ok(file);
    dvi_model* m = build_ok(s);
    const double L = 1.0, mass = 1.0, r = 0.05, amp = 10.0 * PI / 180;
    const double expect = 2 * PI * sqrt((mass * L * L + 0.4 * mass * r * r) / (mass * G * L)) * (1 + amp * amp / 16);
    int p = probe_index(m, "bob"), cy = column_index(m, p, "bob.y");
    double v[4], prev_t = 0, prev_y = 0, first = -1, last = 0, worst = 0;
    int crossings = 0;
    const dvi_scene_settings set = dvi_scene_get_settings(s);
    int64_t steps = llround(set.duration / set.dt);
    for (int64_t i = 0; i < steps; i++) {
        step_n(m, 1);
        if (!dvi_model_probe_due(m, p)) continue;
        assert_int_equal(dvi_model_probe_sample(m, p, v), DVI_OK);
        if (prev_y > 0 && v[cy] <= 0) {
            double tc = prev_t + (v[0] - prev_t) * prev_y / (prev_y - v[cy]);
            if (first < 0) first = tc;
            last = tc;
            crossings++;
        }
        prev_t = v[0];
        prev_y = v[cy];
        worst = fmax(worst, fabs(sqrt(v[1] * v[1] + v[2] * v[2] + v[3] * v[3]) - L));
    }
    assert_true(crossings >= 4);
    double T = (last - first) / (crossings - 1);
    double F[7];
    sample(m, "pivot", F);
    print_message("%s: period %.5f s over %d crossings, expected %.5f s (%g%%); max |r| - L = %.2e m "
                  "(1e-6); pivot force z %.3f N\n",
                  strrchr(file, '/') + 1, T, crossings, expect, 100 * tol, worst, F[3]);
    assert_near(T, expect, tol * expect);
    assert_true(worst < 1e-6);
    assert_true(F[3] > 0.9 * mass * G);
    dvi_model_destroy(m);
    dvi_scene_destroy(s);
}

static void test_pendulum_period(void** state)
{
    (void)state;
    pendulum_case(SRC_PATH("examples/scenes/pendulum.json"), 0.002);
}

/* Accelerations down the 30° slope from the velocity probe over
 * [0.2 s, 1.2 s] within rel (relative); sticking bodies move less than
 * stick_limit. */
static void incline_case(const char* file, double stick_limit, double rel)
{
    dvi_scene* s = load_ok(file);
    dvi_model* m = build_ok(s);
    const double th = 30 * PI / 180, dt = dvi_scene_get_settings(s).dt;
    static const char* const NAMES[5] = {"box_stick", "box_slide", "sphere_roll", "sphere_slide", "sphere_stick"};
    const double expect[5] = {0.0, G * (sin(th) - 0.3 * cos(th)), 5.0 / 7.0 * G * sin(th),
                              G * (sin(th) - 0.1 * cos(th)), 0.0};
    double v0[16], v1[16], x0[16], x1[16];
    step_n(m, llround(0.2 / dt));
    sample(m, "velocity", v0);
    sample(m, "position", x0);
    step_n(m, llround(1.0 / dt));
    assert_near(dvi_model_time(m), 1.2, 1e-9);
    sample(m, "velocity", v1);
    sample(m, "position", x1);
    int pv = probe_index(m, "velocity"), px = probe_index(m, "position");
    for (int k = 0; k < 5; k++) {
        char col[64];
        snprintf(col, sizeof col, "%s.vy", NAMES[k]);
        int cy = column_index(m, pv, col);
        /* downhill = −(cos θ, sin θ) in (y, z) */
        double a = -((v1[cy] - v0[cy]) * cos(th) + (v1[cy + 1] - v0[cy + 1]) * sin(th)) / 1.0;
        snprintf(col, sizeof col, "%s.x", NAMES[k]);
        int cx = column_index(m, px, col);
        double d = sqrt(pow(x1[cx] - x0[cx], 2) + pow(x1[cx + 1] - x0[cx + 1], 2) + pow(x1[cx + 2] - x0[cx + 2], 2));
        print_message("%s: %-12s a = %.5f m/s^2 (expected %.5f), moved %.3g m over 1 s (%g)\n",
                      strrchr(file, '/') + 1, NAMES[k], a, expect[k], d, stick_limit);
        if (expect[k] == 0.0)
            assert_true(d < stick_limit);
        else
            assert_near(a, expect[k], rel * expect[k]);
    }
    dvi_model_destroy(m);
    dvi_scene_destroy(s);
}

static void test_incline(void** state)
{
    (void)state;
    incline_case(SRC_PATH("examples/scenes/incline.json"), 1e-6, 0.01);
    /* Coulomb's law: the sliding bodies keep their contacts closed, so the
     * accelerations are the analytic ones to the single-precision contact
     * frames (measured within 5e-8 relative) */
    incline_case(SRC_PATH("examples/scenes/incline_coulomb.json"), 1e-6, 1e-6);
}

/* The box stops after v0²/(2 μ g) (relative tolerance tol) and stays. */
static void sliding_box_case(const char* file, double tol, double speed_limit)
{
    dvi_scene* s = load_ok(file);
    dvi_model* m = build_ok(s);
    double x0[4], x[4], v[4];
    sample(m, "box", x0);
    step_n(m, llround(1.0 / dvi_scene_get_settings(s).dt));
    sample(m, "box", x);
    sample(m, "box_velocity", v);
    double d = x[1] - x0[1], expect = 2.0 * 2.0 / (2 * 0.4 * G);
    print_message("%s: slid %.5f m, v0^2/(2 mu g) = %.5f m (error %.3f%%, limit %g%%); final speed %.2e m/s (%g)\n",
                  strrchr(file, '/') + 1, d, expect, 100 * (d - expect) / expect, 100 * tol, fabs(v[1]), speed_limit);
    assert_near(d, expect, tol * expect);
    assert_true(fabs(v[1]) < speed_limit);
    dvi_model_destroy(m);
    dvi_scene_destroy(s);
}

/* Probes sampled by time ("interval"): a DVI run at 1 ms and a DEM run at
 * 0.1 ms of the sliding box (DVI under Coulomb's law, which has no hop: the
 * CCP's would fly the box for 0.16 s; DEM with the Hertz contacts of
 * sliding_box_dem.json) write their rows at the same times, t = 0.01 k to
 * rounding, 31 rows over 0.3 s; and the box's x there is the analytic
 * x = v0 t − μ g t²/2 (it slides until 0.51 s) in both, to 1e-3 m (measured:
 * DVI 5.9e-4 m, DEM 4.6e-5 m). A step
 * that does not divide the interval (0.3 ms; 0.01 / 0.3e-3 = 33.3) samples
 * within half a step of each 0.01 k, without drift: a count of
 * round(0.01 / dt) = 33 steps would sample 30 × 9.9 ms = 0.297 s instead of
 * 0.3 s. */
static int interval_rows(const char* method, double dt, double probe_interval, double* t, double* x, int max)
{
    static const char text[] =
        "{\"formulation\": {\"dt\": 0.001, \"solver\": \"lemke\", \"friction_law\": \"coulomb\",\n"
        "   \"lemke\": {\"coulomb\": true, \"orient\": true}, \"dem\": {\"normal_model\": \"hertz\"}},\n"
        " \"duration\": 0.3,\n"
        " \"gravity\": [0, 0, -9.81],\n"
        " \"materials\": {\"default\": {\"friction\": 0.4, \"restitution\": 0.5, \"young_modulus\": 1e7}},\n"
        " \"bodies\": [{\"name\": \"ground\", \"type\": \"fixed\", \"shapes\": [{\"type\": \"plane\"}]},\n"
        "   {\"name\": \"box\", \"mass\": 1, \"position\": [0, 0, 0.1], \"velocity\": [2, 0, 0],\n"
        "    \"shapes\": [{\"type\": \"box\", \"half_extents\": [0.1, 0.1, 0.1]}]}],\n"
        " \"probes\": [{\"name\": \"box\", \"what\": \"position\", \"body\": \"box\", \"interval\": 0.01}]}";
    dvi_scene* s = parse_ok(text);
    dvi_scene_overrides o;
    memset(&o, 0, sizeof o);
    o.method = method;
    o.dt = dt;
    o.probe_interval = probe_interval;
    assert_int_equal(dvi_scene_apply_overrides(s, &o, NULL), DVI_OK);
    dvi_model* m = build_ok(s);
    dvi_probe_info info;
    assert_int_equal(dvi_model_probe_info(m, 0, &info), DVI_OK);
    assert_true(info.interval == (probe_interval > 0 ? probe_interval : 0.01));
    const int64_t steps = llround(0.3 / dt);
    int n = 0;
    for (int64_t i = 0; i <= steps; i++) {
        if (i > 0) step_n(m, 1);
        if (!dvi_model_probe_due(m, 0)) continue;
        assert_true(n < max);
        double row[4];
        sample(m, "box", row);
        t[n] = row[0];
        x[n++] = row[1];
    }
    dvi_model_destroy(m);
    dvi_scene_destroy(s);
    return n;
}

static void test_probe_interval(void** state)
{
    (void)state;
    double td[64], xd[64], te[64], xe[64], tq[64], xq[64];
    int nd = interval_rows("dvi", 1e-3, 0, td, xd, 64);
    int ne = interval_rows("dem", 1e-4, 0, te, xe, 64);
    assert_int_equal(nd, 31);
    assert_int_equal(ne, 31);
    double worst = 0, worst_d = 0, worst_e = 0;
    for (int k = 0; k < 31; k++) {
        assert_near(td[k], 0.01 * k, 1e-12);
        assert_near(te[k], td[k], 1e-12);
        const double t = 0.01 * k, expect = 2.0 * t - 0.5 * 0.4 * G * t * t;
        worst_d = fmax(worst_d, fabs(xd[k] - expect));
        worst_e = fmax(worst_e, fabs(xe[k] - expect));
        worst = fmax(worst, fabs(te[k] - td[k]));
    }
    print_message("interval 0.01 s: 31 rows at DVI 1 ms and DEM 0.1 ms, times apart by at most %.2g s; "
                  "x against v0 t - mu g t^2/2: DVI %.3g m, DEM %.3g m (x(0.3) = %.5f, %.5f)\n", worst, worst_d,
                  worst_e, xd[30], xe[30]);
    assert_true(worst_d < 1e-3 && worst_e < 1e-3);
    /* a step that does not divide the interval: the override, within half a step of 0.01 k */
    int nq = interval_rows("dem", 3e-4, 0.01, tq, xq, 64);
    assert_int_equal(nq, 31);
    for (int k = 0; k < 31; k++) assert_true(fabs(tq[k] - 0.01 * k) <= 0.5 * 3e-4 + 1e-15);
    /* every and interval are two ways to say one thing: not both; an interval is > 0 */
    dvi_scene* s = NULL;
    dvi_scene_errors e;
    const char* both = "{\"bodies\": [{\"name\": \"b\", \"mass\": 1}], \"probes\": [{\"name\": \"p\", \"what\": "
                       "\"position\", \"body\": \"b\", \"every\": 10, \"interval\": 0.01},\n"
                       " {\"name\": \"q\", \"what\": \"solver\", \"interval\": 0}]}";
    assert_int_equal(dvi_scene_parse(both, strlen(both), NULL, &s, &e), DVI_ERR_INVALID_ARG);
    assert_non_null(strstr(e.text, "probes[0].interval: every (steps) or interval (s), not both"));
    assert_non_null(strstr(e.text, "probes[1].interval: must be > 0"));
    dvi_scene_errors_free(&e);
}

/* A probe's `every` counts the scene's own steps: with --dt it samples at
 * the same times (every × the scene's dt). The sliding box's probe every 10
 * steps of 1 ms, run by DEM at 0.1 ms: 31 rows at t = 0.01 k over 0.3 s, as
 * at the scene's own step; without --dt it is still a count of steps. */
static void test_probe_every_at_another_step(void** state)
{
    (void)state;
    static const char text[] =
        "{\"formulation\": {\"dt\": 0.001, \"dem\": {\"normal_model\": \"hertz\"}},\n"
        " \"duration\": 0.3,\n"
        " \"materials\": {\"default\": {\"friction\": 0.4, \"restitution\": 0.5, \"young_modulus\": 1e7}},\n"
        " \"bodies\": [{\"name\": \"ground\", \"type\": \"fixed\", \"shapes\": [{\"type\": \"plane\"}]},\n"
        "   {\"name\": \"box\", \"mass\": 1, \"position\": [0, 0, 0.1], \"velocity\": [2, 0, 0],\n"
        "    \"shapes\": [{\"type\": \"box\", \"half_extents\": [0.1, 0.1, 0.1]}]}],\n"
        " \"probes\": [{\"name\": \"box\", \"what\": \"position\", \"body\": \"box\", \"every\": 10}]}";
    for (int other = 0; other < 2; other++) {
        dvi_scene* s = parse_ok(text);
        dvi_scene_overrides o;
        memset(&o, 0, sizeof o);
        o.method = other ? "dem" : NULL;
        o.dt = other ? 1e-4 : 0.0;
        assert_int_equal(dvi_scene_apply_overrides(s, &o, NULL), DVI_OK);
        dvi_model* m = build_ok(s);
        dvi_probe_info info;
        assert_int_equal(dvi_model_probe_info(m, 0, &info), DVI_OK);
        assert_true(info.interval == (other ? 10 * 1e-3 : 0.0));
        const int64_t steps = other ? 3000 : 300;
        int n = 0;
        for (int64_t i = 0; i <= steps; i++) {
            if (i > 0) step_n(m, 1);
            if (!dvi_model_probe_due(m, 0)) continue;
            double row[4];
            sample(m, "box", row);
            assert_near(row[0], 0.01 * n, 1e-12);
            n++;
        }
        assert_int_equal(n, 31);
        dvi_model_destroy(m);
        dvi_scene_destroy(s);
    }
}

static void test_sliding_box(void** state)
{
    (void)state;
    sliding_box_case(SRC_PATH("examples/scenes/sliding_box.json"), 0.01, 1e-6);
    /* Coulomb's law: the same stop (0.50868 m, the step's rounding of
     * 0.50968), without the hop (test_coulomb_world) */
    sliding_box_case(SRC_PATH("examples/scenes/sliding_box_coulomb.json"), 0.01, 1e-6);
}

/* The stacks stand: the top body drifts less than 1e-3 m, the ground load
 * (probe component along −z) is the weight within 0.5 %. */
static void stack_case(const char* file, double seconds)
{
    dvi_scene* s = load_ok(file);
    dvi_scene_overrides o;
    memset(&o, 0, sizeof o);
    o.duration = seconds;
    assert_int_equal(dvi_scene_apply_overrides(s, &o, NULL), DVI_OK);
    dvi_model* m = build_ok(s);
    double top0[4], top[4], load[2];
    sample(m, "top", top0);
    step_n(m, llround(dvi_scene_get_settings(s).duration / dvi_scene_get_settings(s).dt));
    sample(m, "top", top);
    sample(m, "ground_load", load);
    double drift = sqrt(pow(top[1] - top0[1], 2) + pow(top[2] - top0[2], 2) + pow(top[3] - top0[3], 2));
    print_message("%s: %g s, top drift %.3g m (1e-3), ground load %.4f N, weight %.4f N (0.5%%)\n", strrchr(file, '/') + 1,
                  seconds, drift, load[1], 10 * G);
    assert_true(drift < 1e-3);
    assert_near(load[1], 10 * G, 0.005 * 10 * G);
    dvi_model_destroy(m);
    dvi_scene_destroy(s);
}

static void test_stacks(void** state)
{
    (void)state;
#ifdef SANITIZED
    stack_case(SRC_PATH("examples/scenes/sphere_stack_10.json"), 0.5);
    stack_case(SRC_PATH("examples/scenes/box_stack_10.json"), 0.2);
#else
    stack_case(SRC_PATH("examples/scenes/sphere_stack_10.json"), 10.0);
    stack_case(SRC_PATH("examples/scenes/box_stack_10.json"), 2.0);
#endif
}

/* The reference's static_wheel_loads of a variant, in the order LF LM LB RF RM RB. */
static void reference_loads(const char* variant, double out[6])
{
    FILE* f = fopen(ROVER_JSON, "rb");
    assert_non_null(f);
    static char buf[1 << 17];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    cJSON* root = cJSON_Parse(buf);
    assert_non_null(root);
    const cJSON* v = cJSON_GetObjectItem(cJSON_GetObjectItem(root, "static_wheel_loads"), variant);
    assert_non_null(v);
    static const char* const SIDE[2] = {"left", "right"};
    static const char* const KEY[3] = {"N_front", "N_middle", "N_rear"};
    for (int sd = 0; sd < 2; sd++)
        for (int k = 0; k < 3; k++) {
            const cJSON* x = cJSON_GetObjectItem(cJSON_GetObjectItem(v, SIDE[sd]), KEY[k]);
            assert_true(cJSON_IsNumber(x));
            out[3 * sd + k] = x->valuedouble;
        }
    cJSON_Delete(root);
}

/* The rover at rest: after settling (0.2 s here, 100 steps of Lemke), each
 * wheel's normal load (probe "wheel_loads", the "up" component of the
 * wheel's contact force) within 0.5 % of the reference. */
static void rover_case(const char* file, const char* variant)
{
    double ref[6];
    reference_loads(variant, ref);
    dvi_scene* s = load_ok(file);
    dvi_scene_overrides o;
    memset(&o, 0, sizeof o);
#ifdef SANITIZED
    o.duration = 0.06;
#else
    o.duration = 0.2;
#endif
    assert_int_equal(dvi_scene_apply_overrides(s, &o, NULL), DVI_OK);
    dvi_model* m = build_ok(s);
    int p = probe_index(m, "wheel_loads");
    dvi_probe_info info;
    assert_int_equal(dvi_model_probe_info(m, p, &info), DVI_OK);
    assert_int_equal(info.columns, 7);
    static const char* const COLS[7] = {"time",          "wheel_LF.f_up", "wheel_LM.f_up", "wheel_LB.f_up",
                                        "wheel_RF.f_up", "wheel_RM.f_up", "wheel_RB.f_up"};
    for (int c = 0; c < 7; c++) {
        assert_string_equal(info.column_names[c], COLS[c]);
        assert_string_equal(info.units[c], c ? "N" : "s");
    }
    const dvi_scene_settings set = dvi_scene_get_settings(s);
    step_n(m, llround(set.duration / set.dt));
    assert_true(dvi_model_probe_due(m, p));
    double v[7], sum = 0, worst = 0;
    assert_int_equal(dvi_model_probe_sample(m, p, v), DVI_OK);
    for (int k = 0; k < 6; k++) {
        sum += v[k + 1];
        worst = fmax(worst, fabs(v[k + 1] - ref[k]) / ref[k]);
    }
    print_message("%s after %g s: loads %.2f %.2f %.2f | %.2f %.2f %.2f N; reference %.2f %.2f %.2f | %.2f %.2f %.2f "
                  "N; worst %.4f%% (0.5%%); sum %.2f N\n",
                  variant, set.duration, v[1], v[2], v[3], v[4], v[5], v[6], ref[0], ref[1], ref[2], ref[3], ref[4],
                  ref[5], 100 * worst, sum);
    for (int k = 0; k < 6; k++) assert_near(v[k + 1], ref[k], 0.005 * ref[k]);
    dvi_model_destroy(m);
    dvi_scene_destroy(s);
}

static void test_rover_statics(void** state)
{
    (void)state;
    rover_case(SRC_PATH("examples/scenes/rover_statics_scarecrow.json"), "Scarecrow");
    rover_case(SRC_PATH("examples/scenes/rover_statics_fullrover.json"), "FullRover");
}

/* ---- DEM scenes ------------------------------------------------------------------------ */

static void positions(const dvi_model* m, double* x, int n);

/* The *_dem.json scenes against the answers of their DVI versions, with the
 * bounds a penalty model meets (docs/dem.md): elastic overlaps and
 * tangential springs make sticking bodies creep by micrometres, not 1e-6 m. */
/* dvi_world_dem_stable_step on the DEM sliding box (sliding_box_dem.json:
 * 1 kg, corners on a plane, E = 1e7 Pa, nu = 0.3, restitution 0.5, Hertz;
 * R = d = 0.1 m, K = 4/3 E* sqrt(R) = 2.3167e6, E* = E / (2 (1 - nu^2))).
 * alpha = 0.571 / sqrt(1.5) (Hertz, e = 0.5, docs/dem.md's table). The
 * box's four corners (levers (±0.1, ±0.1, −0.1) m, I = m 0.08/12) give the
 * spring rate bound s k/m, s = 4 (lift) + 6 · 2^(1/4) (the two rocking
 * modes, 6 k/m each, through (tr X⁴)^(1/4)) = 11.135, and the dashpot's
 * rate the same multiple of c/m, so a = sqrt(s) alpha = 1.5558 and
 * a x³ + x² − 2 a x − 4 = 0 at x = 1.60382. At rest (overlap 1.04e-4 m) the
 * impact at 1 m/s is stiffer: delta = (5 m v^2 / (4 K))^(2/5) = 3.1095e-3 m,
 * k = 1.5 K sqrt(delta) = 1.9378e5 N/m, h = x / sqrt(s k) = 1.0918e-3 s.
 * At a characteristic speed of 0.01 m/s the contact's own overlap is the
 * larger: k = 1.5 K sqrt(1.04e-4) = 3.544e4 N/m, h = 2.553e-3 s. (Counting
 * the corner alone, as before the bodies' rates were bounded: 3.606e-3 and
 * 8.43e-3 s, above the rocking modes' own limit 2 sqrt(m/(6 k)) = 1.85e-3
 * and 4.34e-3 s.) */
static double dem_stable_step_of(const char* speed)
{
    char text[1024];
    snprintf(text, sizeof text,
             "{\"materials\": {\"default\": {\"friction\": 0.4, \"restitution\": 0.5, \"young_modulus\": 1e7, "
             "\"poisson_ratio\": 0.3}},\n"
             " \"bodies\": [{\"name\": \"ground\", \"type\": \"fixed\", \"shapes\": [{\"type\": \"plane\"}]},\n"
             "   {\"name\": \"box\", \"mass\": 1, \"position\": [0, 0, 0.099896129], \"shapes\": [{\"type\": \"box\", "
             "\"half_extents\": [0.1, 0.1, 0.1]}]}],\n"
             " \"duration\": 0.01, \"formulation\": {\"method\": \"dem\", \"dt\": 1e-4, \"dem\": {\"normal_model\": "
             "\"hertz\"%s}}}",
             speed);
    dvi_scene* s = parse_ok(text);
    dvi_model* m = build_ok(s);
    double h = 0;
    assert_int_equal(dvi_world_dem_stable_step(dvi_model_world_const(m), &h), DVI_OK);
    assert_true(isinf(h)); /* no step yet */
    step_n(m, 1);
    assert_int_equal(dvi_world_dem_stable_step(dvi_model_world_const(m), &h), DVI_OK);
    dvi_model_destroy(m);
    dvi_scene_destroy(s);
    return h;
}

static void test_dem_stable_step(void** state)
{
    (void)state;
    const double impact = dem_stable_step_of(""), rest = dem_stable_step_of(", \"characteristic_speed\": 0.01");
    print_message("stable step of the DEM sliding box: %.5g s (impact at 1 m/s; 1.0918e-3), %.5g s (at rest; "
                  "2.553e-3)\n", impact, rest);
    assert_near(impact, 1.0918e-3, 0.01 * 1.0918e-3);
    assert_near(rest, 2.553e-3, 0.01 * 2.553e-3);
    /* a DVI world has no such step */
    dvi_scene* s = load_ok(SRC_PATH("examples/scenes/sliding_box.json"));
    dvi_model* m = build_ok(s);
    double h = 0;
    assert_int_equal(dvi_world_dem_stable_step(dvi_model_world_const(m), &h), DVI_ERR_INVALID_ARG);
    assert_int_equal(dvi_world_dem_stable_step(NULL, &h), DVI_ERR_INVALID_ARG);
    dvi_model_destroy(m);
    dvi_scene_destroy(s);
}

static void test_dem_scenes(void** state)
{
    (void)state;
    pendulum_case(SRC_PATH("examples/scenes/pendulum_dem.json"), 0.005);
    incline_case(SRC_PATH("examples/scenes/incline_dem.json"), 1e-4, 0.01);
    sliding_box_case(SRC_PATH("examples/scenes/sliding_box_dem.json"), 0.02, 1e-3);
#ifdef SANITIZED
    stack_case(SRC_PATH("examples/scenes/sphere_stack_10_dem.json"), 0.2);
    stack_case(SRC_PATH("examples/scenes/box_stack_10_dem.json"), 0.1);
#else
    stack_case(SRC_PATH("examples/scenes/sphere_stack_10_dem.json"), 1.0);
    stack_case(SRC_PATH("examples/scenes/box_stack_10_dem.json"), 1.0);
#endif
}

/* Two spheres meet head on at 1 m/s and part at e = 0.8 (2 %); momentum is
 * kept, the kinetic energy falls by e², and the energy probe agrees with the
 * step's kinetic_energy. */
static void test_dem_head_on(void** state)
{
    (void)state;
    dvi_scene* s = load_ok(SRC_PATH("examples/scenes/head_on_dem.json"));
    const dvi_scene_settings set = dvi_scene_get_settings(s);
    assert_string_equal(set.method, "dem");
    dvi_model* m = build_ok(s);
    int p = probe_index(m, "velocity");
    const int cl = column_index(m, p, "left.vx"), cr = column_index(m, p, "right.vx");
    double v0[7], v1[7], e0[2], e1[2];
    sample(m, "velocity", v0);
    sample(m, "energy", e0);
    const int64_t steps = llround(set.duration / set.dt);
    int64_t touching = 0;
    double overlap = 0.0;
    for (int64_t i = 0; i < steps; i++) {
        step_n(m, 1);
        dvi_step_stats st = dvi_world_get_stats(dvi_model_world_const(m));
        touching += st.contacts > 0;
        overlap = fmax(overlap, st.max_overlap);
    }
    sample(m, "velocity", v1);
    sample(m, "energy", e1);
    const double e = -(v1[cr] - v1[cl]) / (v0[cr] - v0[cl]);
    const dvi_step_stats st = dvi_world_get_stats(dvi_model_world_const(m));
    print_message("head_on_dem.json: restitution %.5f (requested 0.8, error %.3f%%, limit 2%%); contact %.3f ms, "
                  "largest overlap %.3g m; kinetic energy %.5f -> %.5f J (e^2 = %.4f)\n",
                  e, 100 * (e - 0.8) / 0.8, 1e3 * (double)touching * set.dt, overlap, e0[1], e1[1], e1[1] / e0[1]);
    assert_near(e, 0.8, 0.02 * 0.8);
    assert_near(v1[cl] + v1[cr], 0.0, 1e-12);
    assert_near(e1[1] / e0[1], e * e, 1e-9);
    assert_near(st.kinetic_energy, e1[1], 1e-12 * e1[1]);
    assert_int_equal(st.contacts, 0);
    assert_int_equal(st.contact_history, 0);
    assert_true(touching > 500 && overlap > 1e-3 && overlap < 4e-3);
    dvi_model_destroy(m);
    dvi_scene_destroy(s);
}

/* formulation.dem, the DEM material fields and dem_samples reach the world:
 *   - a DVI scene with a "dem" block, run with the override --method dem:
 *     a 1 kg sphere on Hooke contacts of k_n = 1e4 N/m (constants "direct")
 *     rests at the overlap m g / k_n;
 *   - a 2 kg plate with 4 sample points on a flat height field of terrain
 *     stiffness c = 1e6 N/m³ sinks by m g / (c ΣS);
 *   - --method dem on the DVI sliding box (default material: E = 1e7 Pa).
 * Then a DEM model checkpoint mid-slide continues bit for bit, and a DVI
 * model refuses it. */
static void test_dem_settings_and_state(void** state)
{
    (void)state;
    const char* text =
        "{\"name\": \"hooke\", \"gravity\": [0, 0, -9.81],\n"
        " \"bodies\": [{\"name\": \"ground\", \"type\": \"fixed\", \"shapes\": [{\"type\": \"plane\"}]},\n"
        "  {\"name\": \"ball\", \"mass\": 1, \"inertia\": \"auto\", \"position\": [0, 0, 0.1],\n"
        "   \"shapes\": [{\"type\": \"sphere\", \"radius\": 0.1, \"material\": {\"friction\": 0.5, \"gamma_n\": 150}}]}],\n"
        " \"formulation\": {\"method\": \"dvi\", \"dt\": 0.001,\n"
        "   \"dem\": {\"normal_model\": \"hooke\", \"constants\": \"direct\", \"k_n\": 1e4, \"k_t\": 3e3, \"gamma_t\": 10,\n"
        "           \"characteristic_speed\": 2, \"rolling_damping\": 0.5, \"terrain_slip_speed\": 0.02, \"max_speed\": 50}},\n"
        " \"duration\": 1, \"probes\": [{\"name\": \"ball\", \"what\": \"position\", \"body\": \"ball\"}]}";
    dvi_scene* s = parse_ok(text);
    dvi_scene_overrides o;
    memset(&o, 0, sizeof o);
    o.method = "dem";
    o.dt = 1e-4;
    dvi_scene_errors e;
    assert_int_equal(dvi_scene_apply_overrides(s, &o, &e), DVI_OK);
    assert_string_equal(dvi_scene_get_settings(s).method, "dem");
    dvi_model* m = build_ok(s);
    step_n(m, 10000);
    double x[4];
    sample(m, "ball", x);
    const double delta = 0.1 - x[3], expect = G / 1e4;
    print_message("--method dem with formulation.dem (Hooke, k_n = 1e4 N/m): overlap %.6g m, m g / k_n = %.6g m\n", delta,
                  expect);
    assert_near(delta, expect, 1e-3 * expect);
    assert_near(dvi_world_get_stats(dvi_model_world_const(m)).max_overlap, delta, 1e-9);
    dvi_model_destroy(m);
    dvi_scene_destroy(s);

    /* the hysteretic height-field model: 4 samples of 0.04 m² */
    char zeros[11 * 11 * 3 + 1];
    for (int i = 0; i < 121; i++) memcpy(zeros + 2 * i, i + 1 < 121 ? "0," : "0 ", 2);
    zeros[242] = '\0';
    char terrain[2048];
    snprintf(terrain, sizeof terrain,
             "{\"name\": \"plate\", \"gravity\": [0, 0, -9.81],\n"
             " \"materials\": {\"soil\": {\"friction\": 0.5, \"terrain_stiffness\": 1e6, \"terrain_hysteresis\": 0.3}},\n"
             " \"bodies\": [{\"name\": \"ground\", \"type\": \"fixed\", \"shapes\": [{\"type\": \"heightfield\", \"nx\": 11, "
             "\"ny\": 11, \"dx\": 0.1, \"dy\": 0.1, \"heights\": [%s], \"material\": \"soil\"}]},\n"
             "  {\"name\": \"plate\", \"mass\": 2, \"inertia\": \"auto\", \"position\": [0.5, 0.5, 0.02],\n"
             "   \"shapes\": [{\"type\": \"box\", \"half_extents\": [0.2, 0.2, 0.02], \"dem_samples\": [[-0.1, -0.1, -0.02, "
             "0.04], [0.1, -0.1, -0.02, 0.04], [-0.1, 0.1, -0.02, 0.04], [0.1, 0.1, -0.02, 0.04]]}]}],\n"
             " \"formulation\": {\"method\": \"dem\", \"dt\": 1e-4}, \"duration\": 0.5,\n"
             " \"probes\": [{\"name\": \"plate\", \"what\": \"position\", \"body\": \"plate\"}]}",
             zeros);
    s = parse_ok(terrain);
    m = build_ok(s);
    step_n(m, 5000);
    sample(m, "plate", x);
    const double sink = 0.02 - x[3], sink_expect = 2 * G / (1e6 * 4 * 0.04);
    print_message("dem_samples on a height field (c = 1e6 N/m^3): sinkage %.6g m, m g / (c S) = %.6g m (1%%); %d "
                  "contacts\n",
                  sink, sink_expect, dvi_world_contact_count(dvi_model_world_const(m)));
    assert_near(sink, sink_expect, 0.01 * sink_expect);
    assert_int_equal(dvi_world_contact_count(dvi_model_world_const(m)), 4);
    dvi_model_destroy(m);
    dvi_scene_destroy(s);

    /* --method dem on the DVI sliding box */
    s = load_ok(SRC_PATH("examples/scenes/sliding_box.json"));
    memset(&o, 0, sizeof o);
    o.method = "dem";
    o.dt = 1e-4;
    assert_int_equal(dvi_scene_apply_overrides(s, &o, NULL), DVI_OK);
    m = build_ok(s);
    double x0[4];
    sample(m, "box", x0);
    step_n(m, 10000);
    sample(m, "box", x);
    const double slid = x[1] - x0[1], slid_expect = 2.0 * 2.0 / (2 * 0.4 * G);
    print_message("sliding_box.json --method dem --dt 1e-4: slid %.5f m, v0^2/(2 mu g) = %.5f m (2%%)\n", slid,
                  slid_expect);
    assert_near(slid, slid_expect, 0.02 * slid_expect);
    dvi_model_destroy(m);
    dvi_scene_destroy(s);

    /* checkpoints of a DEM model: save while sliding (tangential springs in
     * the history), continue in a model built again */
    s = load_ok(SRC_PATH("examples/scenes/sliding_box_dem.json"));
    dvi_model* a = build_ok(s);
    step_n(a, 3000);
    assert_int_equal(dvi_world_get_stats(dvi_model_world_const(a)).contact_history, 4);
    void *blob, *end_a, *end_b;
    size_t size, size_a, size_b;
    assert_int_equal(dvi_model_save_state(a, &blob, &size), DVI_OK);
    step_n(a, 3000);
    dvi_model* b = build_ok(s);
    char msg[256];
    dvi_status st = dvi_model_load_state(b, blob, size, msg, sizeof msg);
    if (st != DVI_OK) fail_msg("dvi_model_load_state: %s", msg);
    assert_int_equal(dvi_model_step_count(b), 3000);
    step_n(b, 3000);
    double xa[6], xb[6];
    positions(a, xa, 2);
    positions(b, xb, 2);
    assert_memory_equal(xa, xb, sizeof xa);
    assert_int_equal(dvi_model_save_state(a, &end_a, &size_a), DVI_OK);
    assert_int_equal(dvi_model_save_state(b, &end_b, &size_b), DVI_OK);
    assert_int_equal(size_a, size_b);
    assert_memory_equal(end_a, end_b, size_a);
    /* the DVI scene of the same bodies refuses it */
    dvi_scene* s2 = load_ok(SRC_PATH("examples/scenes/sliding_box.json"));
    dvi_model* c = build_ok(s2);
    st = dvi_model_load_state(c, blob, size, msg, sizeof msg);
    print_message("DEM state into the DVI model: %s: %s\n", dvi_status_string(st), msg);
    assert_int_equal(st, DVI_ERR_INVALID_ARG);
    assert_non_null(strstr(msg, "method or DEM settings"));
    free(blob);
    free(end_a);
    free(end_b);
    dvi_model_destroy(a);
    dvi_model_destroy(b);
    dvi_model_destroy(c);
    dvi_scene_destroy(s);
    dvi_scene_destroy(s2);
}

/* ---- generators --------------------------------------------------------------------- */

static void expect_columns(const dvi_model* m, const char* probe, int n, const char* const* names,
                           const char* const* units);

static char* bed_scene(char* buf, size_t size, const char* radius, long seed, long max_count)
{
    char cap[64] = "";
    if (max_count >= 0) snprintf(cap, sizeof cap, ", \"max_count\": %ld", max_count);
    snprintf(buf, size,
             "{\"formulation\": {\"dt\": 0.001}, \"duration\": 1,\n"
             " \"generators\": [{\"type\": \"granular_bed\", \"name\": \"bed\", \"region\": {\"min\": [-0.2, -0.2, 0.01], "
             "\"max\": [0.2, 0.2, 1.0]},\n"
             "   \"radius\": %s, \"gap\": 0.01, \"jitter\": 0.005, \"seed\": %ld, \"density\": 2500%s}],\n"
             " \"probes\": [{\"name\": \"first\", \"what\": \"position\", \"bodies\": [\"bed[0]\", \"bed[1]\"]}]}",
             radius, seed, cap);
    return buf;
}

/* Positions of all generated bodies (3·n doubles, malloc'd). */
static double* bed_positions(const char* text, int64_t* count, double* masses)
{
    dvi_scene* s = parse_ok(text);
    dvi_model* m = build_ok(s);
    int64_t n = dvi_scene_body_count(s);
    double* x = malloc(3 * (size_t)n * sizeof *x);
    assert_non_null(x);
    for (int64_t i = 0; i < n; i++) {
        char name[32];
        snprintf(name, sizeof name, "bed[%lld]", (long long)i);
        dvi_body_id b;
        assert_int_equal(dvi_model_find_body(m, name, &b), DVI_OK);
        assert_int_equal(dvi_body_get_position(dvi_model_world_const(m), b, x + 3 * i), DVI_OK);
        if (masses) {
            dvi_body_info info;
            assert_int_equal(dvi_body_get_info(dvi_model_world_const(m), b, &info), DVI_OK);
            masses[i] = info.mass;
        }
    }
    dvi_body_id b;
    char name[32];
    snprintf(name, sizeof name, "bed[%lld]", (long long)n);
    assert_int_equal(dvi_model_find_body(m, name, &b), DVI_ERR_INVALID_ARG);
    assert_int_equal(dvi_model_find_body(m, "bed[01]", &b), DVI_ERR_INVALID_ARG);
    *count = n;
    dvi_model_destroy(m);
    dvi_scene_destroy(s);
    return x;
}

/* Hexagonal close packing: sites inside the region, every pair at least
 * s = 2r + gap apart, interior spheres with 12 neighbours at s, the packing
 * fraction of HCP (π/√18 (2r/s)³ in the bulk); exclusions counted like the
 * cubic lattice; the same seed bit for bit. */
static void test_granular_bed_hexagonal(void** state)
{
    (void)state;
    const double r = 0.02, gap = 0.002, sp = 2 * r + gap;
    char text[2048];
    const char* fmt = "{\"formulation\": {\"dt\": 0.001}, \"duration\": 1,\n"
                      " \"generators\": [{\"type\": \"granular_bed\", \"name\": \"bed\", \"packing\": \"hexagonal\", "
                      "\"region\": {\"min\": [-0.2, -0.2, 0], \"max\": [0.2, 0.2, 0.3]},\n"
                      "   \"radius\": 0.02, \"gap\": 0.002, \"jitter\": %s, \"seed\": 5, \"density\": 2500%s}],\n"
                      " \"probes\": [{\"name\": \"first\", \"what\": \"position\", \"body\": \"bed[0]\"}]}";
    snprintf(text, sizeof text, fmt, "0", "");
    dvi_scene* s = parse_ok(text);
    dvi_generator_info g;
    assert_int_equal(dvi_scene_get_generator(s, 0, &g), DVI_OK);
    /* x: (0.4 − 1.5 s)/s + 1 → 8; y: (0.4 − (1 + 1/(2√3)) s)/(s √3/2) + 1 → 8; z: (0.3 − s)/(s √(2/3)) + 1 → 7 */
    const int64_t nx = (int64_t)floor((0.4 - 1.5 * sp) / sp) + 1;
    const int64_t ny = (int64_t)floor((0.4 - (1 + 1 / (2 * sqrt(3.0))) * sp) / (sp * sqrt(3.0) / 2)) + 1;
    const int64_t nz = (int64_t)floor((0.3 - sp) / (sp * sqrt(2.0 / 3.0))) + 1;
    assert_int_equal(g.sites, nx * ny * nz);
    assert_int_equal(g.count, g.sites);
    dvi_scene_destroy(s);
    int64_t n;
    dvi_scene_errors e_jit;
    double* x = bed_positions(text, &n, NULL);
    assert_int_equal(n, nx * ny * nz);
    double dmin = INFINITY, zmax = -INFINITY;
    int64_t interior = 0, twelve = 0;
    for (int64_t i = 0; i < n; i++) {
        for (int k = 0; k < 3; k++) { /* inside the region */
            double lo = k == 2 ? 0.0 : -0.2, hi = k == 2 ? 0.3 : 0.2;
            assert_true(x[3 * i + k] - r >= lo - 1e-12 && x[3 * i + k] + r <= hi + 1e-12);
        }
        zmax = fmax(zmax, x[3 * i + 2]);
        int near = 0;
        for (int64_t j = 0; j < n; j++) {
            if (j == i) continue;
            double d2 = 0;
            for (int k = 0; k < 3; k++) d2 += (x[3 * i + k] - x[3 * j + k]) * (x[3 * i + k] - x[3 * j + k]);
            double d = sqrt(d2);
            dmin = fmin(dmin, d);
            near += d < sp * (1 + 1e-9);
        }
        bool inside = fabs(x[3 * i]) < 0.2 - 1.6 * sp && fabs(x[3 * i + 1]) < 0.2 - 1.6 * sp &&
                      x[3 * i + 2] > 1.5 * sp && x[3 * i + 2] < 0.3 - 2.0 * sp;
        if (inside) {
            interior++;
            twelve += near == 12;
        }
    }
    print_message("hexagonal bed: %lld spheres (%lld x %lld x %lld), nearest pair %.6f m (s = %.6f), %lld of %lld "
                  "interior spheres with 12 neighbours at s\n",
                  (long long)n, (long long)nx, (long long)ny, (long long)nz, dmin, sp, (long long)twelve,
                  (long long)interior);
    assert_true(fabs(dmin - sp) < 1e-12);
    assert_true(interior > 20);
    assert_int_equal(twelve, interior);
    /* bulk packing fraction: spheres in the box spanned by the lattice */
    const double vol_cell = sp * (sp * sqrt(3.0) / 2) * (sp * sqrt(2.0 / 3.0)); /* one site per cell */
    const double phi = 4.0 / 3.0 * PI * r * r * r / vol_cell;
    assert_true(fabs(phi - PI / sqrt(18.0) * pow(2 * r / sp, 3)) < 1e-12);
    free(x);

    /* jitter within gap/(2√3): pairs stay ≥ 2r apart; the same seed bit for bit */
    snprintf(text, sizeof text, fmt, "0.00057", "");
    int64_t n1, n2;
    double* a = bed_positions(text, &n1, NULL);
    double* b = bed_positions(text, &n2, NULL);
    assert_int_equal(n1, n2);
    assert_memory_equal(a, b, 3 * (size_t)n1 * sizeof *a);
    for (int64_t i = 0; i < n1; i++)
        for (int64_t j = i + 1; j < n1; j++) {
            double d2 = 0;
            for (int k = 0; k < 3; k++) d2 += (a[3 * i + k] - a[3 * j + k]) * (a[3 * i + k] - a[3 * j + k]);
            assert_true(d2 >= 4 * r * r);
        }
    free(a);
    free(b);

    /* an exclusion: the count agrees with the spheres made, none within R + r of the centre */
    snprintf(text, sizeof text, fmt, "0.00057", ", \"exclude\": [{\"centre\": [0.03, -0.05, 0.1], \"radius\": 0.08}]");
    s = parse_ok(text);
    assert_int_equal(dvi_scene_get_generator(s, 0, &g), DVI_OK);
    dvi_scene_destroy(s);
    a = bed_positions(text, &n1, NULL);
    assert_int_equal(n1, g.count);
    assert_true(g.count < g.sites - 10);
    int64_t full_minus = 0; /* sites of the unexcluded lattice within the reach */
    x = bed_positions((snprintf(text, sizeof text, fmt, "0", ""), text), &n, NULL);
    const double reach = 0.08 + r + sqrt(3.0) * 0.00057;
    for (int64_t i = 0; i < n; i++) {
        double d2 = pow(x[3 * i] - 0.03, 2) + pow(x[3 * i + 1] + 0.05, 2) + pow(x[3 * i + 2] - 0.1, 2);
        full_minus += d2 < reach * reach;
    }
    assert_int_equal(g.sites - full_minus, g.count);
    for (int64_t i = 0; i < n1; i++) {
        double d2 = pow(a[3 * i] - 0.03, 2) + pow(a[3 * i + 1] + 0.05, 2) + pow(a[3 * i + 2] - 0.1, 2);
        assert_true(sqrt(d2) >= 0.08 + r);
    }
    free(a);
    free(x);

    /* a jitter that is fine for the cubic lattice but not here */
    snprintf(text, sizeof text, fmt, "0.0006", "");
    assert_int_equal(dvi_scene_parse(text, strlen(text), NULL, &s, &e_jit), DVI_ERR_INVALID_ARG);
    assert_non_null(strstr(e_jit.text, "generators[0].jitter: must be <= gap/(2·√3)"));
    dvi_scene_errors_free(&e_jit);

    /* a bad value, and a region too small */
    static const char* const BAD_GEN[2][2] = {
        {"\"packing\": \"hcp\", \"region\": {\"min\": [0, 0, 0], \"max\": [1, 1, 1]}", "generators[0].packing"},
        {"\"packing\": \"hexagonal\", \"region\": {\"min\": [0, 0, 0], \"max\": [0.05, 1, 1]}",
         "generators[0].region"}};
    for (int i = 0; i < 2; i++) {
        dvi_scene_errors e;
        char bad[2048];
        snprintf(bad, sizeof bad,
                 "{\"formulation\": {\"dt\": 0.001}, \"duration\": 1, \"generators\": [{\"type\": \"granular_bed\", "
                 "\"name\": \"bed\", %s, \"radius\": 0.02, \"density\": 2500}]}",
                 BAD_GEN[i][0]);
        assert_int_equal(dvi_scene_parse(bad, strlen(bad), NULL, &s, &e), DVI_ERR_INVALID_ARG);
        assert_non_null(strstr(e.text, BAD_GEN[i][1]));
        dvi_scene_errors_free(&e);
    }
}

static void test_granular_bed(void** state)
{
    (void)state;
    char text[2048];
    /* count: cells of 2r + gap = 0.05 m in the region 0.4 × 0.4 × 0.99: 8 × 8 × 19 = 1216 sites */
    dvi_scene* s = parse_ok(bed_scene(text, sizeof text, "0.02", 7, -1));
    dvi_generator_info g;
    assert_int_equal(dvi_scene_generator_count(s), 1);
    assert_int_equal(dvi_scene_get_generator(s, 0, &g), DVI_OK);
    assert_string_equal(g.name, "bed");
    assert_string_equal(g.type, "granular_bed");
    assert_int_equal(g.sites, 8 * 8 * 19);
    assert_int_equal(g.count, 8 * 8 * 19);
    assert_int_equal(g.first_body, 0);
    assert_int_equal(dvi_scene_get_generator(s, 1, &g), DVI_ERR_INVALID_ARG);
    dvi_scene_destroy(s);

    int64_t n1, n2, n3;
    double* a = bed_positions(bed_scene(text, sizeof text, "0.02", 7, 1000), &n1, NULL);
    double* b = bed_positions(bed_scene(text, sizeof text, "0.02", 7, 1000), &n2, NULL);
    double* c = bed_positions(bed_scene(text, sizeof text, "0.02", 8, 1000), &n3, NULL);
    assert_int_equal(n1, 1000);
    assert_int_equal(n2, 1000);
    assert_int_equal(n3, 1000);
    assert_memory_equal(a, b, 3 * 1000 * sizeof *a); /* same seed: bit for bit */
    int same = 0;
    for (int i = 0; i < 3000; i++) same += a[i] == c[i];
    assert_true(same < 30); /* another seed: other jitter */
    /* inside the region, on the lattice within the jitter, and apart */
    for (int64_t i = 0; i < n1; i++) {
        int64_t ix = i % 8, iy = (i / 8) % 8, iz = i / 64;
        double site[3] = {-0.175 + 0.05 * (double)ix, -0.175 + 0.05 * (double)iy, 0.035 + 0.05 * (double)iz};
        for (int k = 0; k < 3; k++) assert_true(fabs(a[3 * i + k] - site[k]) <= 0.005 + 1e-12);
    }
    free(a);
    free(b);
    free(c);

    /* a radius distribution: masses (so radii) vary within [min, max], reproducibly */
    double m1[300], m2[300];
    const char* dist = "{\"distribution\": \"uniform\", \"min\": 0.01, \"max\": 0.02}";
    a = bed_positions(bed_scene(text, sizeof text, dist, 3, 300), &n1, m1);
    b = bed_positions(bed_scene(text, sizeof text, dist, 3, 300), &n2, m2);
    assert_int_equal(n1, 300);
    assert_memory_equal(m1, m2, sizeof m1);
    double rmin = 1, rmax = 0;
    for (int i = 0; i < 300; i++) {
        double r = cbrt(3.0 * m1[i] / (4.0 * PI * 2500.0));
        rmin = fmin(rmin, r);
        rmax = fmax(rmax, r);
    }
    print_message("granular_bed: radii from %.5f to %.5f m (uniform in [0.01, 0.02])\n", rmin, rmax);
    assert_true(rmin >= 0.01 - 1e-12 && rmax <= 0.02 + 1e-12 && rmax - rmin > 0.008);
    free(a);
    free(b);

    /* exclusions (an obstacle sunk into the bed): two overlapping spheres;
     * the cells whose centres lie within R + r + √3·jitter of either centre
     * stay empty (counted once), the others fill in lattice order */
    {
        const char* ex = "{\"formulation\": {\"dt\": 0.001}, \"duration\": 1,\n"
                         " \"generators\": [{\"type\": \"granular_bed\", \"name\": \"bed\", \"region\": {\"min\": [-0.2, "
                         "-0.2, 0.01], \"max\": [0.2, 0.2, 1.0]},\n"
                         "   \"radius\": 0.02, \"gap\": 0.01, \"jitter\": 0.005, \"seed\": 7, \"density\": 2500,\n"
                         "   \"exclude\": [{\"centre\": [0, 0, 0.5], \"radius\": 0.1}, {\"centre\": [0.1, 0, 0.5], "
                         "\"radius\": 0.1}]}],\n"
                         " \"probes\": [{\"name\": \"first\", \"what\": \"position\", \"body\": \"bed[0]\"}]}";
        const double reach = 0.1 + 0.02 + sqrt(3.0) * 0.005, C[2][3] = {{0, 0, 0.5}, {0.1, 0, 0.5}};
        int64_t expect = 0;
        double* sites = malloc(3 * 8 * 8 * 19 * sizeof *sites);
        assert_non_null(sites);
        for (int64_t i = 0; i < 8 * 8 * 19; i++) {
            int64_t ix = i % 8, iy = (i / 8) % 8, iz = i / 64;
            double site[3] = {-0.175 + 0.05 * (double)ix, -0.175 + 0.05 * (double)iy, 0.035 + 0.05 * (double)iz};
            bool out = false;
            for (int e = 0; e < 2; e++) {
                double d2 = 0;
                for (int k = 0; k < 3; k++) d2 += (site[k] - C[e][k]) * (site[k] - C[e][k]);
                out = out || d2 < reach * reach;
            }
            if (!out) memcpy(sites + 3 * expect++, site, sizeof site);
        }
        s = parse_ok(ex);
        assert_int_equal(dvi_scene_get_generator(s, 0, &g), DVI_OK);
        print_message("granular_bed: exclusions leave %lld of %lld sites\n", (long long)g.count, (long long)g.sites);
        assert_int_equal(g.sites, 8 * 8 * 19);
        assert_int_equal(g.count, expect);
        assert_true(expect < 8 * 8 * 19 - 50);
        dvi_scene_destroy(s);
        a = bed_positions(ex, &n1, NULL);
        assert_int_equal(n1, expect);
        for (int64_t i = 0; i < n1; i++)
            for (int k = 0; k < 3; k++) assert_true(fabs(a[3 * i + k] - sites[3 * i + k]) <= 0.005 + 1e-12);
        for (int64_t i = 0; i < n1; i++)
            for (int e = 0; e < 2; e++) {
                double d2 = 0;
                for (int k = 0; k < 3; k++) d2 += (a[3 * i + k] - C[e][k]) * (a[3 * i + k] - C[e][k]);
                assert_true(sqrt(d2) >= 0.1 + 0.02); /* no sphere overlaps an excluded one */
            }
        free(a);
        free(sites);
    }

    /* several generators, one of them empty: creation order, names, column labels */
    const char* multi =
        "{\"formulation\": {\"dt\": 0.001}, \"duration\": 1,\n"
        " \"bodies\": [{\"name\": \"floor\", \"type\": \"fixed\", \"shapes\": [{\"type\": \"plane\"}]}],\n"
        " \"generators\": [\n"
        "  {\"type\": \"granular_bed\", \"name\": \"a\", \"region\": {\"min\": [0, 0, 0], \"max\": [0.4, 0.2, 0.2]}, "
        "\"radius\": 0.1, \"density\": 1000},\n"
        "  {\"type\": \"granular_bed\", \"name\": \"e\", \"region\": {\"min\": [0, 0, 1], \"max\": [1, 1, 2]}, "
        "\"radius\": 0.1, \"density\": 1000, \"max_count\": 0},\n"
        "  {\"type\": \"granular_bed\", \"name\": \"b\", \"region\": {\"min\": [2, 0, 0], \"max\": [2.2, 0.2, 0.4]}, "
        "\"radius\": 0.1, \"density\": 1000}],\n"
        " \"probes\": [{\"name\": \"p\", \"what\": \"position\", \"bodies\": [\"b[1]\", \"a[1]\", \"floor\"]}]}";
    s = parse_ok(multi);
    assert_int_equal(dvi_scene_body_count(s), 1 + 2 + 0 + 2);
    static const int64_t FIRST[3] = {1, 3, 3}, COUNT[3] = {2, 0, 2};
    for (int k = 0; k < 3; k++) {
        assert_int_equal(dvi_scene_get_generator(s, k, &g), DVI_OK);
        assert_int_equal(g.first_body, FIRST[k]);
        assert_int_equal(g.count, COUNT[k]);
    }
    dvi_model* mm = build_ok(s);
    {
        const char* names[] = {"time", "b[1].x", "b[1].y", "b[1].z", "a[1].x", "a[1].y", "a[1].z", "floor.x", "floor.y", "floor.z"};
        const char* units[] = {"s", "m", "m", "m", "m", "m", "m", "m", "m", "m"};
        expect_columns(mm, "p", 10, names, units);
    }
    dvi_body_id id, at;
    assert_int_equal(dvi_model_find_body(mm, "b[1]", &id), DVI_OK);
    assert_int_equal(dvi_world_body_at(dvi_model_world_const(mm), 4, &at), DVI_OK);
    assert_memory_equal(&id, &at, sizeof id);
    double xb[3];
    dvi_body_get_position(dvi_model_world_const(mm), id, xb);
    assert_near(xb[0], 2.1, 1e-12);
    assert_near(xb[2], 0.3, 1e-12); /* second layer */
    assert_int_equal(dvi_model_find_body(mm, "e[0]", &id), DVI_ERR_INVALID_ARG);
    assert_int_equal(dvi_model_find_body(mm, "a[2]", &id), DVI_ERR_INVALID_ARG);
    dvi_model_destroy(mm);
    dvi_scene_destroy(s);

    /* the 54,000-sphere bed of the rover study in three lines of JSON:
     * 6 × 3.8 m, 0.55 m deep, radius 0.03, gap 0.001: 98 × 62 × 9 = 54,684 sites, capped at 53,728 */
    const char* big = "{\"formulation\": {\"dt\": 0.001}, \"duration\": 30, \"generators\": [\n"
                      "  {\"type\": \"granular_bed\", \"name\": \"soil\", \"region\": {\"min\": [-3, -1.9, -0.55], "
                      "\"max\": [3, 1.9, 0]},\n"
                      "   \"radius\": 0.03, \"gap\": 0.001, \"jitter\": 0.0005, \"seed\": 1, \"density\": 2000, "
                      "\"max_count\": 53728}]}";
    s = parse_ok(big);
    assert_int_equal(dvi_scene_get_generator(s, 0, &g), DVI_OK);
    assert_int_equal(g.sites, 98 * 62 * 9);
    assert_int_equal(g.count, 53728);
    assert_int_equal(dvi_scene_body_count(s), 53728);
#ifndef SANITIZED
    dvi_model* m = build_ok(s);
    assert_int_equal(dvi_world_body_count(dvi_model_world_const(m)), 53728);
    dvi_model_destroy(m);
#endif
    dvi_scene_destroy(s);
}

/* ---- probes ---------------------------------------------------------------------- */

static void expect_columns(const dvi_model* m, const char* probe, int n, const char* const* names,
                           const char* const* units)
{
    dvi_probe_info info;
    assert_int_equal(dvi_model_probe_info(m, probe_index(m, probe), &info), DVI_OK);
    assert_int_equal(info.columns, n);
    for (int c = 0; c < n; c++) {
        assert_string_equal(info.column_names[c], names[c]);
        assert_string_equal(info.units[c], units[c]);
    }
}

static void test_probe_columns(void** state)
{
    (void)state;
    dvi_scene* s = load_ok(SRC_PATH("examples/scenes/pendulum.json"));
    dvi_model* m = build_ok(s);
    assert_int_equal(dvi_model_probe_count(m), 5);
    {
        const char* n[] = {"time", "bob.x", "bob.y", "bob.z"};
        const char* u[] = {"s", "m", "m", "m"};
        expect_columns(m, "bob", 4, n, u);
    }
    {
        const char* n[] = {"time", "bob.vx", "bob.vy", "bob.vz"};
        const char* u[] = {"s", "m/s", "m/s", "m/s"};
        expect_columns(m, "bob_velocity", 4, n, u);
    }
    {
        const char* n[] = {"time", "pivot.fx", "pivot.fy", "pivot.fz", "pivot.tx", "pivot.ty", "pivot.tz"};
        const char* u[] = {"s", "N", "N", "N", "N m", "N m", "N m"};
        expect_columns(m, "pivot", 7, n, u);
    }
    {
        const char* n[] = {"time", "kinetic_energy"};
        const char* u[] = {"s", "J"};
        expect_columns(m, "energy", 2, n, u);
    }
    {
        const char* n[] = {"time",           "iterations",      "residual",           "contacts",
                           "rows",           "max_penetration", "max_joint_violation", "ccp_hover",
                           "ccp_hover_work", "solver_status",   "wall_collide",        "wall_assemble",
                           "wall_solve",     "wall_integrate",  "wall_report"};
        const char* u[] = {"s", "it", "1", "count", "count", "m", "m", "m", "J", "code", "s", "s", "s", "s", "s"};
        expect_columns(m, "solver", 15, n, u);
    }
    dvi_probe_info info;
    assert_int_equal(dvi_model_probe_info(m, probe_index(m, "bob"), &info), DVI_OK);
    assert_int_equal(info.every, 10);
    assert_string_equal(info.title, "Position (bob)");
    assert_int_equal(dvi_model_probe_info(m, 5, &info), DVI_ERR_INVALID_ARG);
    /* due at step 0 and then every 10 steps */
    int p = probe_index(m, "bob");
    assert_true(dvi_model_probe_due(m, p));
    step_n(m, 1);
    assert_false(dvi_model_probe_due(m, p));
    step_n(m, 9);
    assert_true(dvi_model_probe_due(m, p));
    /* values: the joint holds the bob up (5 rows: 3 positions, 2 angles), the
     * kinetic energy is that of the velocity */
    double e[2], v[4], sv[15];
    sample(m, "energy", e);
    sample(m, "bob_velocity", v);
    sample(m, "solver", sv);
    assert_near(e[0], dvi_model_time(m), 1e-15);
    assert_true(e[1] > 0.0);
    /* (the spin ω = v / L about the pivot adds ½ I ω²) */
    double vv = v[1] * v[1] + v[2] * v[2] + v[3] * v[3];
    assert_near(e[1], 0.5 * vv + 0.5 * 0.001 * vv, 1e-6 * e[1]);
    assert_near(sv[4], 5, 0); /* rows */
    assert_near(sv[7], 0, 0); /* no contacts: no hover */
    assert_near(sv[9], 0, 0); /* converged */
    dvi_model_destroy(m);
    dvi_scene_destroy(s);

    /* contact_force components; generated bodies in columns; a body probe on a kinematic body */
    const char* text =
        "{\"formulation\": {\"dt\": 0.001}, \"duration\": 1, \"gravity\": [0, -9.81, 0],\n"
        " \"bodies\": [{\"name\": \"floor\", \"type\": \"fixed\", \"orientation\": [0.7071067811865476, "
        "-0.7071067811865476, 0, 0], \"shapes\": [{\"type\": \"plane\"}]},\n"
        "   {\"name\": \"belt\", \"type\": \"kinematic\", \"position\": [5, 0, 0], \"velocity\": [1, 0, 0]},\n"
        "   {\"name\": \"ball\", \"density\": 1000, \"position\": [0, 0.1, 0], \"shapes\": [{\"type\": \"sphere\", "
        "\"radius\": 0.1}]}],\n"
        " \"generators\": [{\"type\": \"granular_bed\", \"name\": \"g\", \"region\": {\"min\": [1, 0, 0], \"max\": [1.2, "
        "0.2, 0.2]}, \"radius\": 0.1, \"density\": 1000}],\n"
        " \"probes\": [{\"name\": \"up\", \"what\": \"contact_force\", \"component\": \"up\", \"bodies\": [\"ball\", "
        "\"g[0]\"]},\n"
        "   {\"name\": \"dir\", \"what\": \"contact_force\", \"component\": [0, 2, 0], \"body\": \"ball\"},\n"
        "   {\"name\": \"vec\", \"what\": \"contact_force\", \"body\": \"ball\", \"title\": \"Ball\"},\n"
        "   {\"name\": \"q\", \"what\": \"orientation\", \"body\": \"g[0]\"},\n"
        "   {\"name\": \"w\", \"what\": \"angular_velocity\", \"body\": \"belt\"},\n"
        "   {\"name\": \"ke\", \"what\": \"kinetic_energy\", \"bodies\": [\"ball\"]}]}";
    s = parse_ok(text);
    m = build_ok(s);
    {
        const char* n[] = {"time", "ball.f_up", "g[0].f_up"};
        const char* u[] = {"s", "N", "N"};
        expect_columns(m, "up", 3, n, u);
    }
    {
        const char* n[] = {"time", "ball.f_dir"};
        const char* u[] = {"s", "N"};
        expect_columns(m, "dir", 2, n, u);
    }
    {
        const char* n[] = {"time", "ball.fx", "ball.fy", "ball.fz", "ball.tx", "ball.ty", "ball.tz"};
        const char* u[] = {"s", "N", "N", "N", "N m", "N m", "N m"};
        expect_columns(m, "vec", 7, n, u);
    }
    {
        const char* n[] = {"time", "g[0].qw", "g[0].qx", "g[0].qy", "g[0].qz"};
        const char* u[] = {"s", "1", "1", "1", "1"};
        expect_columns(m, "q", 5, n, u);
    }
    assert_int_equal(dvi_model_probe_info(m, probe_index(m, "vec"), &info), DVI_OK);
    assert_string_equal(info.title, "Ball");
    step_n(m, 50);
    double up[3], dir[2], vec[7], q[5], ke[2];
    sample(m, "up", up);
    sample(m, "dir", dir);
    sample(m, "vec", vec);
    sample(m, "q", q);
    sample(m, "ke", ke);
    double mass = 1000 * 4.0 / 3.0 * PI * 0.001;
    print_message("probes: ball at rest on a floor with gravity along -y: f_up %.6f N, f_dir %.6f N, weight %.6f N\n",
                  up[1], dir[1], mass * G);
    assert_near(up[1], mass * G, 1e-6 * mass * G); /* "up" is −gravity: +y here */
    assert_near(dir[1], up[1], 1e-12);
    assert_near(vec[2], up[1], 1e-12);
    assert_near(up[2], mass * G, 1e-6 * mass * G); /* g[0]: the same sphere, also on the floor */
    assert_near(q[1], 1.0, 1e-9);
    assert_near(ke[1], 0.0, 1e-9);
    dvi_body_id belt;
    assert_int_equal(dvi_model_find_body(m, "belt", &belt), DVI_OK);
    double bx[3];
    dvi_body_get_position(dvi_model_world_const(m), belt, bx);
    assert_near(bx[0], 5.05, 1e-12); /* kinematic: moves with its velocity */
    dvi_joint_id jid;
    assert_int_equal(dvi_model_find_joint(m, "none", &jid), DVI_ERR_INVALID_ARG);
    assert_int_equal(dvi_model_find_body(m, "world", &belt), DVI_ERR_INVALID_ARG);
    dvi_model_destroy(m);
    dvi_scene_destroy(s);
}

/* The rover probes: contact_force "normal" and "magnitude", "attitude" and
 * "wheel_slip", on cases with exact answers:
 *   - a box sticking (μ = 1) on a 30° incline: the normal forces of its
 *     contacts sum to m g cos 30°, the resultant is m g (and its "up"
 *     component too);
 *   - a fixed body turned by roll 0.1, pitch 0.2, yaw 0.3 rad (z-y-x);
 *   - kinematic wheels (a cylinder on its side, axle along +y) moving at
 *     1 m/s along +x and spinning at 2 rad/s about +y: v = 1, ω r = 0.5,
 *     s = 1 / 0.5 − 1 = 1 with the cylinder's radius 0.25; with the radius
 *     0.5 and the axle −y given, v = −1, ω r = −1, s = 0; at rest, s is NaN. */
/* "average": true on contact_force and joint_reaction probes: the mean of the
 * per-step values over the `every` steps that end at the sample.
 *   - A ball dropped on the ground: over every window, m Δv_z = (F̄_up − m g) T,
 *     the momentum balance, to round-off — including the window of the
 *     impact, where the last step's force alone misses it by far;
 *     "normal" gives the same mean on flat ground.
 *   - A pendulum's averaged pivot reaction equals the mean of the same
 *     probe sampled at every step.
 *   - A checkpoint in the middle of a window continues bit-identically, and
 *     a version-1 blob (before the windows were saved) still loads.
 *   - "average" must be a boolean and is refused by other probe kinds. */
/* A probe that a scene with one ball must refuse, and the message. */
typedef struct bad_probe {
    const char* probe;
    const char* want;
} bad_probe;

/* A scene with one ball and the probe `probe` must be refused with a
 * message containing `want`. */
static void expect_probe_error(const char* probe, const char* want)
{
    char text[1024];
    snprintf(text, sizeof text,
             "{\"formulation\": {\"dt\": 0.001}, \"duration\": 1, \"bodies\": [{\"name\": \"ball\", \"mass\": 1, "
             "\"shapes\": [{\"type\": \"sphere\", \"radius\": 0.1}]}], \"probes\": [%s]}",
             probe);
    dvi_scene* sb = NULL;
    dvi_scene_errors e;
    dvi_status st = dvi_scene_parse(text, strlen(text), NULL, &sb, &e);
    assert_int_equal(st, DVI_ERR_INVALID_ARG);
    if (!e.text || !strstr(e.text, want)) fail_msg("want \"%s\", got \"%s\"", want, e.text);
    dvi_scene_errors_free(&e);
}

static void test_probe_average(void** state)
{
    (void)state;
    const char* drop =
        "{\"formulation\": {\"dt\": 0.001, \"tolerance\": 1e-10, \"max_iterations\": 2000}, \"duration\": 1,\n"
        " \"bodies\": [{\"name\": \"ground\", \"type\": \"fixed\", \"shapes\": [{\"type\": \"plane\"}]},\n"
        "   {\"name\": \"ball\", \"mass\": 2, \"position\": [0, 0, 0.6], \"shapes\": [{\"type\": \"sphere\", "
        "\"radius\": 0.1}]}],\n"
        " \"probes\": [{\"name\": \"fa\", \"what\": \"contact_force\", \"component\": \"up\", \"body\": \"ball\", "
        "\"every\": 50, \"average\": true},\n"
        "   {\"name\": \"fi\", \"what\": \"contact_force\", \"component\": \"up\", \"body\": \"ball\", \"every\": 50},\n"
        "   {\"name\": \"fn\", \"what\": \"contact_force\", \"component\": \"normal\", \"body\": \"ball\", \"every\": 50, "
        "\"average\": true},\n"
        "   {\"name\": \"fv\", \"what\": \"contact_force\", \"body\": \"ball\", \"every\": 50, \"average\": true},\n"
        "   {\"name\": \"v\", \"what\": \"velocity\", \"body\": \"ball\", \"every\": 50}]}";
    dvi_scene* s = parse_ok(drop);
    dvi_model* m = build_ok(s);
    const double mass = 2.0, T = 50 * 0.001;
    double fa[8], fi[8], fn[8], fv[8], v[8], v_prev = 0.0, worst = 0.0, worst_inst = 0.0;
    int impact_windows = 0;
    dvi_probe_info info;
    assert_int_equal(dvi_model_probe_info(m, probe_index(m, "fa"), &info), DVI_OK);
    assert_non_null(strstr(info.title, "mean per sample"));
    for (int k = 1; k <= 20; k++) {
        step_n(m, 50);
        sample(m, "fa", fa);
        sample(m, "fi", fi);
        sample(m, "fn", fn);
        sample(m, "fv", fv);
        sample(m, "v", v);
        double want = mass * G + mass * (v[3] - v_prev) / T; /* the mean up-force the momentum change needs */
        worst = fmax(worst, fabs(fa[1] - want));
        worst_inst = fmax(worst_inst, fabs(fi[1] - want));
        if (fa[1] > 2.0 * mass * G) impact_windows++;
        assert_near(fn[1], fa[1], 1e-9 * (1.0 + fabs(fa[1])));
        assert_near(fv[3], fa[1], 1e-9 * (1.0 + fabs(fa[1])));
        v_prev = v[3];
    }
    print_message("dropped ball, 50-step windows: |mean up-force − m(g + Δv/T)| ≤ %.2e N (last step's force: %.1f N "
                  "off); %d window(s) hold the impact\n",
                  worst, worst_inst, impact_windows);
    assert_true(worst < 1e-6);
    assert_true(impact_windows >= 1);
    assert_true(worst_inst > 50.0); /* the impact is missed by one step's sample */
    assert_near(fa[1], mass * G, 1e-6);  /* at rest */

    /* a checkpoint in the middle of the window of the impact (0.32 s); the
     * same samples after it */
    dvi_model* a = build_ok(s);
    step_n(a, 325);
    void* blob;
    size_t size;
    assert_int_equal(dvi_model_save_state(a, &blob, &size), DVI_OK);
    dvi_model* b = build_ok(s);
    char msg[256];
    assert_int_equal(dvi_model_load_state(b, blob, size, msg, sizeof msg), DVI_OK);
    for (int k = 0; k < 4; k++) {
        step_n(a, 25 + (k ? 25 : 0));
        step_n(b, 25 + (k ? 25 : 0));
        double ra[8], rb[8];
        sample(a, "fv", ra);
        sample(b, "fv", rb);
        assert_memory_equal(ra, rb, 7 * sizeof *ra);
    }
    /* a flipped byte in the windows (before the health section) is caught */
    size_t hsize = 0;
    for (int k = 0; k < 8; k++) hsize |= (size_t)((const unsigned char*)blob)[40 + k] << (8 * k);
    ((unsigned char*)blob)[size - hsize - 12] ^= 0x10;
    dvi_model* damaged = build_ok(s);
    dvi_status st0 = dvi_model_load_state(damaged, blob, size, msg, sizeof msg);
    print_message("a flipped byte in the windows: %s\n", msg);
    assert_int_equal(st0, DVI_ERR_PARSE);
    assert_non_null(strstr(msg, "checksum"));
    assert_int_equal(dvi_model_step_count(damaged), 0);
    dvi_model_destroy(damaged);
    /* a version-1 blob (40-byte header, no windows) at rest, in the middle of
     * a window: loads with empty windows */
    free(blob);
    step_n(a, 225); /* to step 725 */
    assert_int_equal(dvi_model_save_state(a, &blob, &size), DVI_OK);
    size_t wsize = 0;
    for (int k = 0; k < 8; k++) wsize |= (size_t)((const unsigned char*)blob)[24 + k] << (8 * k);
    unsigned char* v1 = malloc(40 + wsize);
    assert_non_null(v1);
    memcpy(v1, blob, 32);
    v1[8] = 1, v1[9] = v1[10] = v1[11] = 0;
    v1[12] = 40, v1[13] = v1[14] = v1[15] = 0;
    uint64_t h = 1469598103934665603u;
    for (int k = 0; k < 32; k++) {
        h ^= v1[k];
        h *= 1099511628211u;
    }
    for (int k = 0; k < 8; k++) v1[32 + k] = (unsigned char)(h >> (8 * k));
    memcpy(v1 + 40, (const unsigned char*)blob + 56, wsize); /* after the version-3 header */
    dvi_model* c = build_ok(s);
    dvi_status st = dvi_model_load_state(c, v1, 40 + wsize, msg, sizeof msg);
    if (st != DVI_OK) fail_msg("version-1 state: %s", msg);
    assert_int_equal(dvi_model_step_count(c), 725);
    step_n(c, 25);
    double rc[8];
    sample(c, "fa", rc);
    assert_near(rc[1], mass * G, 1e-6); /* a window of 25 steps at rest */
    /* the windows must match the model's probes */
    dvi_scene* s_other = parse_ok(
        "{\"formulation\": {\"dt\": 0.001}, \"duration\": 1,\n"
        " \"bodies\": [{\"name\": \"ground\", \"type\": \"fixed\", \"shapes\": [{\"type\": \"plane\"}]},\n"
        "   {\"name\": \"ball\", \"mass\": 2, \"position\": [0, 0, 0.6], \"shapes\": [{\"type\": \"sphere\", "
        "\"radius\": 0.1}]}]}");
    dvi_model* d = build_ok(s_other);
    st = dvi_model_load_state(d, blob, size, msg, sizeof msg);
    print_message("state with windows into a model without averaged probes: %s\n", msg);
    assert_int_equal(st, DVI_ERR_INVALID_ARG);
    assert_non_null(strstr(msg, "averaged probes"));
    free(v1);
    free(blob);
    dvi_model_destroy(a);
    dvi_model_destroy(b);
    dvi_model_destroy(c);
    dvi_model_destroy(d);
    dvi_model_destroy(m);
    dvi_scene_destroy(s_other);
    dvi_scene_destroy(s);

    /* a pendulum's pivot reaction: averaged every 10 against every step */
    s = parse_ok("{\"formulation\": {\"dt\": 0.001, \"tolerance\": 1e-10, \"max_iterations\": 2000}, \"duration\": 1,\n"
                 " \"bodies\": [{\"name\": \"bob\", \"mass\": 1, \"position\": [0, 0.5, -0.8], \"shapes\": "
                 "[{\"type\": \"sphere\", \"radius\": 0.05}]}],\n"
                 " \"joints\": [{\"name\": \"pivot\", \"type\": \"revolute\", \"body_b\": \"bob\", \"anchor\": [0, 0, 0], "
                 "\"axis\": [1, 0, 0]}],\n"
                 " \"probes\": [{\"name\": \"ja\", \"what\": \"joint_reaction\", \"joint\": \"pivot\", \"every\": 10, "
                 "\"average\": true},\n"
                 "   {\"name\": \"j1\", \"what\": \"joint_reaction\", \"joint\": \"pivot\"}]}");
    m = build_ok(s);
    double sum[6] = {0}, ja[8], j1[8], spread = 0.0, worst_j = 0.0;
    for (int k = 1; k <= 300; k++) {
        step_n(m, 1);
        sample(m, "j1", j1);
        for (int c6 = 0; c6 < 6; c6++) sum[c6] += j1[1 + c6];
        if (k % 10 == 0) {
            sample(m, "ja", ja);
            for (int c6 = 0; c6 < 6; c6++) {
                worst_j = fmax(worst_j, fabs(ja[1 + c6] - sum[c6] / 10.0));
                spread = fmax(spread, fabs(ja[1 + c6] - j1[1 + c6]));
                sum[c6] = 0.0;
            }
        }
    }
    print_message("pendulum pivot: averaged reaction against the mean of per-step samples: %.1e N (last step differs "
                  "by up to %.3f N)\n",
                  worst_j, spread);
    assert_true(worst_j < 1e-12 * 20.0);
    assert_true(spread > 1e-3);
    dvi_model_destroy(m);
    dvi_scene_destroy(s);

    /* bad values */
    static const bad_probe bad[] = {
        {"{\"name\": \"p\", \"what\": \"contact_force\", \"body\": \"ball\", \"average\": 1}",
         "probes[0].average: must be true or false (got a number)"},
        {"{\"name\": \"p\", \"what\": \"position\", \"body\": \"ball\", \"average\": true}",
         "probes[0].average: not used by a \"position\" probe"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) expect_probe_error(bad[i].probe, bad[i].want);
}

/* Every contact_force component × "average" × "with", against forces by
 * hand. A 1 kg box under a 1,000 kg box, both at rest on the ground: on the
 * lower box the ground pushes +1,001 g, the upper box −1,000 g, the two
 * together +g; the normal-force sum is 1,001 g, 1,000 g and 2,001 g. The
 * probes sample at one step where the stack has been at rest for 0.95 s, so
 * a mean and a single step agree. (A "with" filter was once ignored unless
 * "average" was set or the component was "normal": the lower box reported
 * its total, +g, with every filter.) */
static void test_probe_combinations(void** state)
{
    (void)state;
    static const char* const comps[5] = {"\"vector\"", "\"up\"", "\"magnitude\"", "[0, 0.6, 0.8]", "\"normal\""};
    static const char* const withs[4] = {"", ", \"with\": \"ground\"", ", \"with\": \"top\"",
                                         ", \"with\": [\"top\", \"ground\"]"};
    char text[16384];
    int n = snprintf(text, sizeof text, "%s",
                     "{\"formulation\": {\"dt\": 0.001, \"tolerance\": 1e-12, \"max_iterations\": 5000}, "
                     "\"duration\": 1,\n"
                     " \"bodies\": [{\"name\": \"ground\", \"type\": \"fixed\", \"shapes\": [{\"type\": \"plane\"}]},\n"
                     "   {\"name\": \"low\", \"mass\": 1, \"position\": [0, 0, 0.05], \"shapes\": [{\"type\": \"box\", "
                     "\"half_extents\": [0.2, 0.2, 0.05]}]},\n"
                     "   {\"name\": \"top\", \"mass\": 1000, \"position\": [0, 0, 0.15], \"shapes\": [{\"type\": "
                     "\"box\", \"half_extents\": [0.15, 0.15, 0.05]}]}],\n"
                     " \"probes\": [");
    for (int c = 0; c < 5; c++)
        for (int a = 0; a < 2; a++)
            for (int k = 0; k < 4; k++)
                n += snprintf(text + n, sizeof text - (size_t)n,
                              "%s{\"name\": \"p%d%d%d\", \"what\": \"contact_force\", \"body\": \"low\", "
                              "\"component\": %s, \"average\": %s, \"every\": 50%s}",
                              c + a + k ? ",\n   " : "", c, a, k, comps[c], a ? "true" : "false", withs[k]);
    n += snprintf(text + n, sizeof text - (size_t)n, "]}");
    assert_true(n < (int)sizeof text);
    dvi_scene* s = parse_ok(text);
    dvi_model* m = build_ok(s);
    step_n(m, 1000);
    const double fz[4] = {G, 1001.0 * G, -1000.0 * G, G};  /* the up force: all, ground, top, both */
    const double fn[4] = {2001.0 * G, 1001.0 * G, 1000.0 * G, 2001.0 * G}; /* the normal-force sum */
    double up[4] = {0, 0, 0, 0};
    for (int c = 0; c < 5; c++)
        for (int a = 0; a < 2; a++)
            for (int k = 0; k < 4; k++) {
                char name[40];
                snprintf(name, sizeof name, "p%d%d%d", c, a, k);
                double v[7];
                sample(m, name, v);
                double want = c == 1 ? fz[k] : c == 2 ? fabs(fz[k]) : c == 3 ? 0.8 * fz[k] : c == 4 ? fn[k] : fz[k];
                double got = c == 0 ? v[3] : v[1];
                if (c == 1 && a == 0) up[k] = got;
                if (!(fabs(got - want) <= 1e-6 * fabs(want) + 1e-6)) {
                    print_error("probe %s (component %s, average %d, filter %d): %.9f N, want %.9f N\n", name,
                                comps[c], a, k, got, want);
                    fail();
                }
                if (c == 0) /* the rest of the vector: no sideways force, no torque about the centre */
                    for (int q = 1; q <= 6; q++)
                        if (q != 3) assert_true(fabs(v[q]) <= 1e-6 * 1001.0 * G);
            }
    print_message("contact_force \"up\" on the lower box: from the ground %.6f N (want %.6f), from the top %.6f N (want "
                  "%.6f), from both %.6f N, from all %.6f N (want %.6f); 40 combinations checked\n",
                  up[1], fz[1], up[2], fz[2], up[3], up[0], fz[0]);
    dvi_model_destroy(m);
    dvi_scene_destroy(s);
}

/* contact_force "with": only the contacts with the named bodies. A ball at
 * rest off-centre on a box at rest on the ground: the box's force from the
 * ball is −m_ball g, with torque (0, x m_ball g, 0) about the box's centre;
 * from the ground +(m_box + m_ball) g; the two sets together are the whole. */
static void test_probe_with(void** state)
{
    (void)state;
    const char* text =
        "{\"formulation\": {\"dt\": 0.001, \"tolerance\": 1e-12, \"max_iterations\": 3000}, \"duration\": 1,\n"
        " \"bodies\": [{\"name\": \"ground\", \"type\": \"fixed\", \"shapes\": [{\"type\": \"plane\"}]},\n"
        "   {\"name\": \"table\", \"mass\": 3, \"position\": [0, 0, 0.1], \"shapes\": [{\"type\": \"box\", "
        "\"half_extents\": [0.3, 0.2, 0.1]}]},\n"
        "   {\"name\": \"top\", \"mass\": 2, \"position\": [0.15, 0, 0.3], \"shapes\": [{\"type\": \"sphere\", "
        "\"radius\": 0.1}]}],\n"
        " \"probes\": [{\"name\": \"all\", \"what\": \"contact_force\", \"body\": \"table\", \"every\": 50, \"average\": "
        "true},\n"
        "   {\"name\": \"g\", \"what\": \"contact_force\", \"body\": \"table\", \"with\": \"ground\", \"every\": 50, "
        "\"average\": true},\n"
        "   {\"name\": \"t\", \"what\": \"contact_force\", \"bodies\": [\"table\", \"top\"], \"with\": [\"top\"], "
        "\"every\": 50, \"average\": true},\n"
        "   {\"name\": \"gt\", \"what\": \"contact_force\", \"body\": \"table\", \"with\": [\"top\", \"ground\", "
        "\"top\"], \"every\": 50, \"average\": true},\n"
        "   {\"name\": \"tn\", \"what\": \"contact_force\", \"component\": \"normal\", \"bodies\": [\"table\", "
        "\"top\"], \"with\": \"top\"},\n"
        "   {\"name\": \"tu\", \"what\": \"contact_force\", \"component\": \"up\", \"body\": \"top\", \"with\": "
        "\"table\"}]}";
    dvi_scene* s = parse_ok(text);
    dvi_model* m = build_ok(s);
    dvi_probe_info info;
    assert_int_equal(dvi_model_probe_info(m, probe_index(m, "g"), &info), DVI_OK);
    assert_non_null(strstr(info.title, "only contacts with"));
    step_n(m, 1000);
    double all[8], g[8], t[14], gt[8], tn[4], tu[4];
    sample(m, "all", all);
    sample(m, "g", g);
    sample(m, "t", t);
    sample(m, "gt", gt);
    sample(m, "tn", tn);
    sample(m, "tu", tu);
    const double mb = 3.0, mt = 2.0;
    print_message("box under a ball, at rest: from the ball %.9f N (want %.9f), torque %.9f N m (want %.9f); from the "
                  "ground %.9f N (want %.9f)\n",
                  t[3], -mt * G, t[5], 0.15 * mt * G, g[3], (mb + mt) * G);
    assert_near(t[1], 0.0, 1e-9);
    assert_near(t[2], 0.0, 1e-9);
    assert_near(t[3], -mt * G, 1e-6);
    assert_near(t[4], 0.0, 1e-6);
    assert_near(t[5], 0.15 * mt * G, 1e-5); /* the lever (0.15, 0, 0.1) × (0, 0, −m g) */
    assert_near(t[6], 0.0, 1e-6);
    for (int k = 7; k <= 12; k++) assert_true(t[k] == 0.0); /* the ball has no contact with itself */
    assert_near(g[3], (mb + mt) * G, 1e-6);
    assert_near(tn[1], mt * G, 1e-6);
    assert_true(tn[2] == 0.0);
    assert_near(tu[1], mt * G, 1e-6);
    for (int k = 1; k <= 3; k++) {
        assert_near(gt[k], g[k] + t[k], 1e-9);       /* the sets add up */
        assert_near(gt[k], all[k], 1e-9);            /* and make the whole */
        assert_near(gt[3 + k], all[3 + k], 1e-6);    /* torque: the end-of-step lever, at rest */
    }
    dvi_model_destroy(m);
    dvi_scene_destroy(s);

    /* a generator's name: all of its bodies. 16 spheres (r = 0.02 m,
     * density 2500) at rest on the ground: the ground bears their weight */
    s = parse_ok("{\"formulation\": {\"dt\": 0.001, \"tolerance\": 1e-12, \"max_iterations\": 3000}, \"duration\": 1,\n"
                 " \"bodies\": [{\"name\": \"ground\", \"type\": \"fixed\", \"shapes\": [{\"type\": \"plane\"}]}],\n"
                 " \"generators\": [{\"type\": \"granular_bed\", \"name\": \"bed\", \"region\": {\"min\": [-0.1, -0.1, "
                 "0.0], \"max\": [0.1, 0.1, 0.06]}, \"radius\": 0.02, \"gap\": 0.01, \"jitter\": 0, \"density\": 2500}],\n"
                 " \"probes\": [{\"name\": \"gb\", \"what\": \"contact_force\", \"component\": \"up\", \"body\": "
                 "\"ground\", \"with\": \"bed\", \"every\": 100, \"average\": true},\n"
                 "   {\"name\": \"gb2\", \"what\": \"contact_force\", \"component\": \"up\", \"body\": \"ground\", "
                 "\"with\": [\"bed[3]\", \"bed\"], \"every\": 100, \"average\": true},\n"
                 "   {\"name\": \"g3\", \"what\": \"contact_force\", \"component\": \"up\", \"body\": \"ground\", "
                 "\"with\": \"bed[3]\", \"every\": 100, \"average\": true}]}");
    m = build_ok(s);
    const double pi = 3.14159265358979323846, ms = 2500.0 * 4.0 / 3.0 * pi * 0.02 * 0.02 * 0.02;
    assert_int_equal(dvi_scene_body_count(s), 17);
    step_n(m, 600);
    double gb[2], gb2[2], g3[2];
    sample(m, "gb", gb);
    sample(m, "gb2", gb2);
    sample(m, "g3", g3);
    print_message("16 spheres on the ground: the ground's force from \"bed\" %.9f N (want %.9f), from bed[3] %.9f N "
                  "(want %.9f)\n",
                  gb[1], -16.0 * ms * G, g3[1], -ms * G);
    assert_near(gb[1], -16.0 * ms * G, 1e-6);
    assert_true(gb2[1] == gb[1]);
    assert_near(g3[1], -ms * G, 1e-6);
    dvi_model_destroy(m);
    dvi_scene_destroy(s);

    static const bad_probe bad[] = {
        {"{\"name\": \"p\", \"what\": \"contact_force\", \"body\": \"ball\", \"with\": \"nobody\"}",
         "probes[0].with: no body or generator named \"nobody\""},
        {"{\"name\": \"p\", \"what\": \"contact_force\", \"body\": \"ball\", \"with\": [\"ball\", 3]}",
         "probes[0].with[1]: must be a body or generator name (got a number)"},
        {"{\"name\": \"p\", \"what\": \"contact_force\", \"body\": \"ball\", \"with\": []}",
         "probes[0].with: must not be empty"},
        {"{\"name\": \"p\", \"what\": \"contact_force\", \"body\": \"ball\", \"with\": {}}",
         "probes[0].with: must be a body or generator name, or an array of them (got an object)"},
        {"{\"name\": \"p\", \"what\": \"velocity\", \"body\": \"ball\", \"with\": \"ball\"}",
         "probes[0].with: not used by a \"velocity\" probe"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) expect_probe_error(bad[i].probe, bad[i].want);
}

static void test_probe_kinds(void** state)
{
    (void)state;
    const double roll = 0.1, pitch = 0.2, yaw = 0.3;
    /* q = q_z(yaw) q_y(pitch) q_x(roll) */
    double cr = cos(roll / 2), sr = sin(roll / 2), cp = cos(pitch / 2), sp = sin(pitch / 2), cy = cos(yaw / 2),
           sy = sin(yaw / 2);
    double q[4] = {cy * cp * cr + sy * sp * sr, cy * cp * sr - sy * sp * cr, cy * sp * cr + sy * cp * sr,
                   sy * cp * cr - cy * sp * sr};
    const double a = PI / 6; /* incline */
    double qi[4] = {cos(a / 2), sin(a / 2), 0, 0}, n[3] = {0, -sin(a), cos(a)};
    char text[4096];
    snprintf(text, sizeof text,
             "{\"formulation\": {\"dt\": 0.001, \"tolerance\": 1e-10, \"max_iterations\": 10000}, \"duration\": 1,\n"
             " \"materials\": {\"default\": {\"friction\": 1.0}},\n"
             " \"bodies\": [{\"name\": \"slope\", \"type\": \"fixed\", \"orientation\": [%.17g, %.17g, 0, 0], "
             "\"shapes\": [{\"type\": \"plane\"}]},\n"
             "   {\"name\": \"box\", \"mass\": 2, \"position\": [%.17g, %.17g, %.17g], \"orientation\": [%.17g, %.17g, "
             "0, 0], \"shapes\": [{\"type\": \"box\", \"half_extents\": [0.1, 0.1, 0.1]}]},\n"
             "   {\"name\": \"turned\", \"type\": \"fixed\", \"position\": [0, 5, 0], \"orientation\": [%.17g, %.17g, "
             "%.17g, %.17g]},\n"
             "   {\"name\": \"wheel\", \"type\": \"kinematic\", \"position\": [0, 10, 1], \"velocity\": [1, 0, 0], "
             "\"angular_velocity\": [0, 2, 0], \"shapes\": [{\"type\": \"cylinder\", \"radius\": 0.25, \"half_length\": "
             "0.2, \"orientation\": [0.7071067811865476, -0.7071067811865476, 0, 0]}]},\n"
             "   {\"name\": \"parked\", \"type\": \"kinematic\", \"position\": [0, 15, 1], \"shapes\": [{\"type\": "
             "\"cylinder\", \"radius\": 0.25, \"half_length\": 0.2, \"orientation\": [0.7071067811865476, "
             "-0.7071067811865476, 0, 0]}]}],\n"
             " \"probes\": [{\"name\": \"fn\", \"what\": \"contact_force\", \"component\": \"normal\", \"bodies\": "
             "[\"box\", \"slope\", \"wheel\"]},\n"
             "   {\"name\": \"fm\", \"what\": \"contact_force\", \"component\": \"magnitude\", \"body\": \"box\"},\n"
             "   {\"name\": \"fu\", \"what\": \"contact_force\", \"component\": \"up\", \"body\": \"box\"},\n"
             "   {\"name\": \"att\", \"what\": \"attitude\", \"bodies\": [\"turned\", \"slope\"]},\n"
             "   {\"name\": \"slip\", \"what\": \"wheel_slip\", \"bodies\": [\"wheel\", \"parked\"]},\n"
             "   {\"name\": \"slip2\", \"what\": \"wheel_slip\", \"body\": \"wheel\", \"radius\": 0.5, \"axis\": [0, -1, "
             "0]}]}",
             qi[0], qi[1], 0.1 * n[0], 0.1 * n[1], 0.1 * n[2], qi[0], qi[1], q[0], q[1], q[2], q[3]);
    dvi_scene* s = parse_ok(text);
    dvi_model* m = build_ok(s);
    {
        const char* nm[] = {"time", "box.f_n", "slope.f_n", "wheel.f_n"};
        const char* u[] = {"s", "N", "N", "N"};
        expect_columns(m, "fn", 4, nm, u);
    }
    {
        const char* nm[] = {"time", "box.f_mag"};
        const char* u[] = {"s", "N"};
        expect_columns(m, "fm", 2, nm, u);
    }
    {
        const char* nm[] = {"time", "turned.roll", "turned.pitch", "turned.yaw", "slope.roll", "slope.pitch", "slope.yaw"};
        const char* u[] = {"s", "rad", "rad", "rad", "rad", "rad", "rad"};
        expect_columns(m, "att", 7, nm, u);
    }
    {
        const char* nm[] = {"time",         "wheel.v_fwd",  "wheel.omega_r", "wheel.slip",
                            "parked.v_fwd", "parked.omega_r", "parked.slip"};
        const char* u[] = {"s", "m/s", "m/s", "1", "m/s", "m/s", "1"};
        expect_columns(m, "slip", 7, nm, u);
    }
    dvi_probe_info info;
    assert_int_equal(dvi_model_probe_info(m, probe_index(m, "fn"), &info), DVI_OK);
    assert_string_equal(info.title, "Contact force, normal (fn)");
    assert_int_equal(dvi_model_probe_info(m, probe_index(m, "att"), &info), DVI_OK);
    assert_string_equal(info.title, "Attitude (att)");
    assert_int_equal(dvi_model_probe_info(m, probe_index(m, "slip"), &info), DVI_OK);
    assert_string_equal(info.title, "Wheel slip (slip)");

    double att[7], sl[7], sl2[4];
    sample(m, "att", att);
    sample(m, "slip", sl);
    sample(m, "slip2", sl2);
    assert_near(att[1], roll, 1e-12);
    assert_near(att[2], pitch, 1e-12);
    assert_near(att[3], yaw, 1e-12);
    assert_near(att[4], a, 1e-12); /* the slope: a roll about x */
    assert_near(att[5], 0.0, 1e-12);
    assert_near(att[6], 0.0, 1e-12);
    assert_near(sl[1], 1.0, 1e-12);
    assert_near(sl[2], 0.5, 1e-12);
    assert_near(sl[3], 1.0, 1e-12);
    assert_near(sl[4], 0.0, 1e-12);
    assert_near(sl[5], 0.0, 1e-12);
    assert_true(isnan(sl[6]));
    assert_near(sl2[1], -1.0, 1e-12);
    assert_near(sl2[2], -1.0, 1e-12);
    assert_near(sl2[3], 0.0, 1e-12);

    step_n(m, 100);
    double fn[4], fm[2], fu[2];
    sample(m, "fn", fn);
    sample(m, "fm", fm);
    sample(m, "fu", fu);
    const double W = 2 * G;
    print_message("probes: box sticking on a 30 deg slope: f_n %.6f N (m g cos 30 = %.6f), f_mag %.6f N, f_up %.6f N "
                  "(m g = %.6f)\n",
                  fn[1], W * cos(a), fm[1], fu[1], W);
    assert_near(fn[1], W * cos(a), 1e-6 * W);
    assert_near(fn[2], fn[1], 1e-9 * W); /* the slope: the same contacts */
    assert_near(fn[3], 0.0, 0.0);        /* the wheel touches nothing */
    assert_near(fm[1], W, 1e-6 * W);
    assert_near(fu[1], W, 1e-6 * W);
    dvi_model_destroy(m);
    dvi_scene_destroy(s);
}

/* ---- scenes with every kind of object -------------------------------------------------- */

static void test_all_kinds(void** state)
{
    (void)state;
    const char* text =
        "{\"name\": \"kinds\", \"units\": \"SI\", \"comment\": \"every kind of object\",\n"
        " \"materials\": {\"default\": {\"friction\": 0.3}, \"rubber\": {\"friction\": 0.9, \"restitution\": 0.5, "
        "\"compliance\": 1e-7}},\n"
        " \"bodies\": [\n"
        "  {\"name\": \"terrain\", \"type\": \"fixed\", \"shapes\": [\n"
        "    {\"type\": \"heightfield\", \"nx\": 3, \"ny\": 2, \"dx\": 0.5, \"dy\": 0.5, \"heights\": [0, 0.1, 0, 0, "
        "0.1, 0], \"position\": [5, 0, 0]},\n"
        "    {\"type\": \"mesh\", \"file\": \"../cube.obj\", \"position\": [10, 0, 0]},\n"
        "    {\"type\": \"plane\", \"position\": [0, 0, -1]}]},\n"
        "  {\"name\": \"capsule\", \"density\": 1000, \"position\": [0, 0, 1], \"shapes\": [{\"type\": \"capsule\", "
        "\"radius\": 0.1, \"half_length\": 0.2, \"material\": \"rubber\"}]},\n"
        "  {\"name\": \"can\", \"mass\": 2, \"position\": [1, 0, 1], \"angular_velocity\": [0, 0, 1], "
        "\"gravity_scale\": 0.5,\n"
        "   \"shapes\": [{\"type\": \"cylinder\", \"radius\": 0.1, \"half_length\": 0.2, \"orientation\": "
        "[0.70710678118654752, 0.70710678118654752, 0, 0], \"material\": {\"friction\": 0.2}}]},\n"
        "  {\"name\": \"slider\", \"mass\": 1, \"inertia\": [[0.1, 0.01, 0], [0.01, 0.1, 0], [0, 0, 0.1]], "
        "\"position\": [2, 0, 1], \"applied_force\": [1, 0, 0]},\n"
        "  {\"name\": \"rod\", \"mass\": 1, \"inertia\": [0.1, 0.1, 0.1], \"position\": [3, 0, 1]},\n"
        "  {\"name\": \"wheel\", \"mass\": 1, \"inertia\": [0.1, 0.1, 0.1], \"position\": [4, 0, 1], "
        "\"orientation\": [1.0000001, 0, 0, 0]},\n"
        "  {\"mass\": 1, \"inertia\": [0.1, 0.1, 0.1], \"position\": [6, 0, 1]}],\n"
        " \"joints\": [\n"
        "  {\"name\": \"rail\", \"type\": \"prismatic\", \"body_b\": \"slider\", \"anchor\": [2, 0, 1], \"axis\": [1, 0, "
        "0], \"motor\": {\"type\": \"linear_speed\", \"speed\": 0.5, \"ramp_time\": 0.1}},\n"
        "  {\"name\": \"tether\", \"type\": \"distance\", \"body_a\": null, \"body_b\": \"rod\", \"anchor\": [3, 0, 2], "
        "\"anchor_b\": [3, 0, 1]},\n"
        "  {\"name\": \"axle\", \"type\": \"revolute\", \"body_a\": \"world\", \"body_b\": \"wheel\", \"anchor\": [4, 0, 1], "
        "\"axis\": [0, 1, 0], \"motor\": {\"type\": \"torque\", \"torque\": 0.2}},\n"
        "  {\"name\": \"weld\", \"type\": \"fixed\", \"body_a\": \"rod\", \"body_b\": \"wheel\", \"anchor\": [3.5, 0, "
        "1]},\n"
        "  {\"name\": \"ball\", \"type\": \"spherical\", \"body_a\": \"terrain\", \"body_b\": \"can\", \"anchor\": [1, 0, "
        "1.5]}],\n"
        " \"formulation\": {\"method\": \"dvi\", \"dt\": 0.002, \"solver\": \"pgs\", \"tolerance\": 1e-7, "
        "\"max_iterations\": 500, \"warm_start\": true, \"warm_start_scale\": 0.85, \"threads\": 1,\n"
        "   \"apgd\": {\"restart\": true, \"grow\": 2, \"shrink\": 0.9}, \"pgs\": {\"omega\": 1.2, \"symmetric\": true, "
        "\"block_iterations\": 4},\n"
        "   \"jacobi\": {\"omega\": 1.5}, \"lemke\": {\"friction_directions\": 8, \"max_pivots\": 0, \"max_lcp_size\": 1000, "
        "\"coulomb\": false},\n"
        "   \"collision_envelope\": 0.01, \"contact_recovery_speed\": 1, \"joint_recovery_speed\": 10, "
        "\"bounce_threshold\": 0.2},\n"
        " \"duration\": 0.1,\n"
        " \"probes\": [{\"name\": \"rail\", \"what\": \"joint_reaction\", \"joints\": [\"rail\", \"axle\", \"weld\"], "
        "\"every\": 5},\n"
        "   {\"name\": \"slider\", \"what\": \"velocity\", \"body\": \"slider\"}]}";
    dvi_scene* s = NULL;
    dvi_scene_errors e;
    dvi_status st = dvi_scene_parse(text, strlen(text), SRC_PATH("tests/data/scenes_bad"), &s, &e);
    if (st != DVI_OK) fail_msg("%s", e.text);
    dvi_scene_settings set = dvi_scene_get_settings(s);
    assert_string_equal(set.name, "kinds");
    assert_string_equal(set.solver, "pgs");
    assert_near(set.dt, 0.002, 0);
    assert_int_equal(set.solver_settings.max_iterations, 500);
    assert_near(set.solver_settings.pgs.omega, 1.2, 0);
    assert_true(set.solver_settings.pgs.symmetric);
    assert_int_equal(set.solver_settings.lemke.friction_directions, 8);
    assert_near(set.solver_settings.warm_start_scale, 0.85, 0);
    assert_int_equal(set.threads, 1);
    assert_int_equal(dvi_scene_body_count(s), 7);
    dvi_model* m = build_ok(s);
    dvi_scene_destroy(s); /* the model does not need the scene */
    step_n(m, 50);
    double v[4];
    sample(m, "slider", v);
    print_message("all kinds: slider speed %.6f m/s (motor target 0.5)\n", v[1]);
    assert_near(v[1], 0.5, 1e-6);
    double r[19];
    sample(m, "rail", r);
    assert_true(isfinite(r[18]));
    dvi_model_destroy(m);

    /* the same scene without a base directory: the mesh file is not found */
    st = dvi_scene_parse(text, strlen(text), "/nonexistent", &s, &e);
    const char* w[] = {"bodies[0].shapes[1].file: cannot read the mesh file \"../cube.obj\""};
    check_errors("mesh without base dir", st, &e, DVI_ERR_INVALID_ARG, w, 1);
    dvi_scene_errors_free(&e);
}

/* "damping" on a speed motor reaches the joint: a slider (1 kg) pushed by
 * 2 N along a prismatic joint whose motor targets 0.5 m/s with a damping of
 * 100 N s/m settles where the motor's force 100 (0.5 − v) balances the push,
 * at v = 0.52 m/s (an exact motor: 0.5). */
static void test_motor_damping_scene(void** state)
{
    (void)state;
    const char* text =
        "{\"bodies\": [{\"name\": \"slider\", \"mass\": 1, \"inertia\": [0.1, 0.1, 0.1], \"applied_force\": [2, 0, 0]}],\n"
        " \"joints\": [{\"name\": \"rail\", \"type\": \"prismatic\", \"body_b\": \"slider\", \"anchor\": [0, 0, 0], "
        "\"axis\": [1, 0, 0],\n"
        "   \"motor\": {\"type\": \"linear_speed\", \"speed\": 0.5, \"damping\": %s}}],\n"
        " \"probes\": [{\"name\": \"v\", \"what\": \"velocity\", \"body\": \"slider\"}],\n"
        " \"formulation\": {\"dt\": 0.002}, \"duration\": 0.2}";
    const char* damping[2] = {"100", "0"};
    const double expect[2] = {0.52, 0.5};
    for (int k = 0; k < 2; k++) {
        char buf[1024];
        snprintf(buf, sizeof buf, text, damping[k]);
        dvi_scene* s = NULL;
        dvi_scene_errors e;
        if (dvi_scene_parse(buf, strlen(buf), NULL, &s, &e) != DVI_OK) fail_msg("%s", e.text);
        dvi_model* m = build_ok(s);
        dvi_scene_destroy(s);
        step_n(m, 100); /* 20 time constants m/d */
        double v[4];
        sample(m, "v", v);
        print_message("slider, motor damping %s N s/m: %.9f m/s (expected %.2f, 1e-6)\n", damping[k], v[1], expect[k]);
        assert_near(v[1], expect[k], 1e-6);
        dvi_model_destroy(m);
    }
}

/* ---- overrides ---------------------------------------------------------------------- */

/* The overrides of step-size studies (dvi study): every material's Young's
 * modulus, the explicit shapes' and a generator's, and the probes' period in
 * seconds. A sphere settles on a box on Hertz contacts; its static overlap
 * goes as E^(-2/3) when both materials change (E* ∝ E), and would change by
 * far less if only one did. A study object is accepted (and must be one). */
static const char study_scene[] =
    "{\"materials\": {\"default\": {\"friction\": 0.5, \"restitution\": 0, \"young_modulus\": 3e7},"
    "                \"grain\": {\"friction\": 0.5, \"restitution\": 0, \"young_modulus\": 5e6}},"
    " \"bodies\": [{\"name\": \"slab\", \"type\": \"fixed\", \"shapes\": [{\"type\": \"box\","
    "   \"half_extents\": [0.5, 0.5, 0.05], \"position\": [0, 0, -0.05]}]}],"
    " \"generators\": [{\"type\": \"granular_bed\", \"name\": \"g\", \"region\": {\"min\": [-0.15, -0.15, 0],"
    "   \"max\": [0.15, 0.15, 0.25]}, \"radius\": 0.1, \"density\": 1000, \"material\": \"grain\", \"max_count\": 1}],"
    " \"formulation\": {\"method\": \"dem\", \"dt\": 1e-5, \"dem\": {\"normal_model\": \"hertz\"}},"
    " \"duration\": 0.3,"
    " \"probes\": [{\"name\": \"ke\", \"what\": \"kinetic_energy\", \"every\": 7}],"
    " \"study\": {\"dts\": {\"dem\": [1e-5]}}}";

static double settled_overlap(double E)
{
    dvi_scene* s = parse_ok(study_scene);
    dvi_scene_overrides o;
    memset(&o, 0, sizeof o);
    o.young_modulus = E;
    o.probe_interval = 0.01;
    assert_int_equal(dvi_scene_apply_overrides(s, &o, NULL), DVI_OK);
    dvi_model* m = build_ok(s);
    dvi_probe_info pi;
    assert_int_equal(dvi_model_probe_info(m, 0, &pi), DVI_OK);
    assert_int_equal(pi.every, 1000); /* 0.01 s of 1e-5 s steps, not the file's 7 */
    step_n(m, 30000);
    double overlap = dvi_world_get_stats(dvi_model_world(m)).max_overlap;
    dvi_model_destroy(m);
    dvi_scene_destroy(s);
    return overlap;
}

static void test_overrides_study(void** state)
{
    (void)state;
    const double d7 = settled_overlap(1e7), d9 = settled_overlap(1e9);
    print_message("settled overlap: %.6g m at E = 1e7 Pa, %.6g m at 1e9 Pa: ratio %.4f (Hertz: 100^(-2/3) = %.4f)\n", d7,
                  d9, d9 / d7, pow(100.0, -2.0 / 3.0));
    assert_true(d7 > 0 && d9 > 0);
    assert_near(d9 / d7, pow(100.0, -2.0 / 3.0), 0.02 * pow(100.0, -2.0 / 3.0));
    dvi_scene* s = parse_ok(study_scene);
    dvi_scene_overrides o;
    memset(&o, 0, sizeof o);
    dvi_scene_errors e;
    o.young_modulus = -1;
    o.probe_interval = NAN;
    dvi_status st = dvi_scene_apply_overrides(s, &o, &e);
    const char* w[] = {"--young-modulus: must be > 0 (got -1)", "--probe-interval: must be a finite number"};
    check_errors("study overrides", st, &e, DVI_ERR_INVALID_ARG, w, 2);
    dvi_scene_errors_free(&e);
    dvi_scene_destroy(s);
    /* the study object must be an object */
    char bad[sizeof study_scene + 16];
    snprintf(bad, sizeof bad, "%s", study_scene);
    char* at = strstr(bad, "{\"dts\"");
    assert_non_null(at);
    snprintf(at, 3, "3}"); /* `"study": 3}` */
    dvi_scene* s2 = NULL;
    st = dvi_scene_parse(bad, strlen(bad), NULL, &s2, &e);
    const char* w2[] = {"study: must be an object (got a number)"};
    check_errors("study not an object", st, &e, DVI_ERR_INVALID_ARG, w2, 1);
    dvi_scene_errors_free(&e);
}

static void test_overrides(void** state)
{
    (void)state;
    dvi_scene* s = load_ok(SRC_PATH("examples/scenes/sliding_box.json"));
    dvi_scene_overrides o;
    memset(&o, 0, sizeof o);
    dvi_scene_errors e;
    o.dt = -1;
    o.solver = "nope";
    o.threads = -2;
    dvi_status st = dvi_scene_apply_overrides(s, &o, &e);
    const char* w1[] = {"--dt: must be > 0 (got -1)", "--solver: unknown solver \"nope\"", "--threads: must be in"};
    check_errors("bad overrides", st, &e, DVI_ERR_INVALID_ARG, w1, 3);
    dvi_scene_errors_free(&e);
    memset(&o, 0, sizeof o);
    o.method = "deem";
    st = dvi_scene_apply_overrides(s, &o, &e);
    const char* w2[] = {"--method: unknown method \"deem\" (did you mean \"dem\"?"};
    check_errors("method override", st, &e, DVI_ERR_INVALID_ARG, w2, 1);
    dvi_scene_errors_free(&e);
    o.method = NULL;
    o.duration = NAN;
    assert_int_equal(dvi_scene_apply_overrides(s, &o, NULL), DVI_ERR_INVALID_ARG);
    /* nothing changed by refused overrides */
    dvi_scene_settings set = dvi_scene_get_settings(s);
    assert_near(set.dt, 0.001, 0);
    assert_string_equal(set.solver, "apgd");
    memset(&o, 0, sizeof o);
    o.dt = 0.002;
    o.duration = 0.5;
    o.solver = "lemke";
    o.method = "dvi";
    o.threads = 2;
    assert_int_equal(dvi_scene_apply_overrides(s, &o, &e), DVI_OK);
    assert_int_equal(e.count, 0);
    set = dvi_scene_get_settings(s);
    assert_near(set.dt, 0.002, 0);
    assert_near(set.duration, 0.5, 0);
    assert_string_equal(set.solver, "lemke");
    assert_int_equal(set.threads, 2);
    dvi_model* m = build_ok(s);
    step_n(m, 10);
    assert_near(dvi_model_time(m), 0.02, 1e-15);
    dvi_model_destroy(m);
    dvi_scene_destroy(s);
}

/* The friction law: formulation.friction_law, --friction, and the solver that
 * must solve it after the overrides as in the file. */
static void test_friction_law(void** state)
{
    (void)state;
    dvi_scene* s = load_ok(SRC_PATH("examples/scenes/sliding_box.json"));
    assert_int_equal(dvi_scene_get_settings(s).friction, DVI_LAW_CCP);
    dvi_scene_overrides o;
    memset(&o, 0, sizeof o);
    dvi_scene_errors e;
    o.friction = "coulumb";
    dvi_status st = dvi_scene_apply_overrides(s, &o, &e);
    const char* w1[] = {"--friction: must be \"ccp\" or \"coulomb\" (got \"coulumb\")"};
    check_errors("friction override", st, &e, DVI_ERR_INVALID_ARG, w1, 1);
    dvi_scene_errors_free(&e);
    o.friction = "coulomb";
    st = dvi_scene_apply_overrides(s, &o, &e);
    const char* w2[] = {"formulation.solver: \"apgd\" solves the CCP but --friction is \"coulomb\""};
    check_errors("friction without its solver", st, &e, DVI_ERR_INVALID_ARG, w2, 1);
    dvi_scene_errors_free(&e);
    assert_int_equal(dvi_scene_get_settings(s).friction, DVI_LAW_CCP); /* unchanged */
    /* a DEM run ignores the law */
    o.method = "dem";
    assert_int_equal(dvi_scene_apply_overrides(s, &o, NULL), DVI_OK);
    assert_int_equal(dvi_scene_get_settings(s).friction, DVI_LAW_COULOMB);
    dvi_scene_destroy(s);

    s = load_ok(SRC_PATH("examples/scenes/sliding_box_coulomb.json"));
    dvi_scene_settings set = dvi_scene_get_settings(s);
    assert_int_equal(set.friction, DVI_LAW_COULOMB);
    assert_string_equal(set.solver, "lemke");
    assert_true(set.solver_settings.lemke.coulomb && set.solver_settings.lemke.orient);
    memset(&o, 0, sizeof o);
    o.solver = "apgd";
    st = dvi_scene_apply_overrides(s, &o, &e);
    const char* w3[] = {"--solver: \"apgd\" solves the CCP but formulation.friction_law is \"coulomb\""};
    check_errors("solver override", st, &e, DVI_ERR_INVALID_ARG, w3, 1);
    dvi_scene_errors_free(&e);
    o.friction = "ccp"; /* both: the CCP with apgd */
    assert_int_equal(dvi_scene_apply_overrides(s, &o, NULL), DVI_OK);
    dvi_model* m = build_ok(s);
    assert_int_equal(dvi_world_get_friction_law(dvi_model_world(m)), DVI_LAW_CCP);
    step_n(m, 5);
    dvi_model_destroy(m);
    dvi_scene_destroy(s);

    s = load_ok(SRC_PATH("examples/scenes/sliding_box_coulomb.json"));
    m = build_ok(s);
    assert_int_equal(dvi_world_get_friction_law(dvi_model_world(m)), DVI_LAW_COULOMB);
    step_n(m, 5);
    dvi_model_destroy(m);
    dvi_scene_destroy(s);
}

/* The friction law's key: formulation.friction_law; the old
 * formulation.friction still read with a warning that names the place and the
 * new key; both at once refused, naming both. */
static void test_friction_law_key(void** state)
{
    (void)state;
    const char* base = "{\"bodies\": [], \"duration\": 1, \"formulation\": {\"dt\": 0.001, \"solver\": \"nsgs\", %s}}";
    char text[512];
    snprintf(text, sizeof text, base, "\"friction_law\": \"coulomb\"");
    dvi_scene* s = parse_ok(text);
    assert_int_equal(dvi_scene_get_settings(s).friction, DVI_LAW_COULOMB);
    assert_string_equal(dvi_scene_warnings(s), "");
    dvi_scene_destroy(s);

    snprintf(text, sizeof text, base, "\"friction\": \"coulomb\"");
    s = parse_ok(text);
    assert_int_equal(dvi_scene_get_settings(s).friction, DVI_LAW_COULOMB);
    assert_string_equal(dvi_scene_warnings(s),
                        "formulation.friction: deprecated key for the friction law: write formulation.friction_law\n");
    dvi_scene_destroy(s);

    /* the old key's value is checked as the new one's, under its own name */
    snprintf(text, sizeof text, base, "\"friction\": \"coulumb\"");
    dvi_scene_errors e;
    s = NULL;
    dvi_status st = dvi_scene_parse(text, strlen(text), NULL, &s, &e);
    const char* w1[] = {"formulation.friction: must be \"ccp\" or \"coulomb\" (got \"coulumb\")"};
    check_errors("old key, bad law", st, &e, DVI_ERR_INVALID_ARG, w1, 1);
    assert_null(s);
    dvi_scene_errors_free(&e);

    snprintf(text, sizeof text, base, "\"friction_law\": \"coulomb\", \"friction\": \"coulomb\"");
    st = dvi_scene_parse(text, strlen(text), NULL, &s, &e);
    const char* w2[] = {"formulation.friction: give the friction law once: formulation.friction_law, or the "
                        "deprecated formulation.friction, not both"};
    check_errors("both keys", st, &e, DVI_ERR_INVALID_ARG, w2, 1);
    assert_null(s);
    dvi_scene_errors_free(&e);

    /* the solver check names the key the file used */
    snprintf(text, sizeof text, base, "\"friction\": \"coulomb\"");
    char* at = strstr(text, "\"nsgs\"");
    memcpy(at, "\"apgd\"", 6);
    st = dvi_scene_parse(text, strlen(text), NULL, &s, &e);
    const char* w3[] = {"formulation.solver: \"apgd\" solves the CCP but formulation.friction is \"coulomb\""};
    check_errors("old key, wrong solver", st, &e, DVI_ERR_INVALID_ARG, w3, 1);
    dvi_scene_errors_free(&e);
}

/* ---- (d) checkpoints ----------------------------------------------------------------- */

static void positions(const dvi_model* m, double* x, int n)
{
    const dvi_world* w = dvi_model_world_const(m);
    for (int i = 0; i < n; i++) {
        dvi_body_id b;
        assert_int_equal(dvi_world_body_at(w, i, &b), DVI_OK);
        assert_int_equal(dvi_body_get_position(w, b, x + 3 * i), DVI_OK);
    }
}

static void test_state_round_trip(void** state)
{
    (void)state;
    dvi_scene* s = load_ok(SRC_PATH("examples/scenes/sphere_stack_10.json"));
    dvi_model* a = build_ok(s);
    step_n(a, 60);
    void* blob = NULL;
    size_t size = 0;
    dvi_status st = dvi_model_save_state(a, &blob, &size);
    if (st != DVI_OK) fail_msg("dvi_model_save_state: %s (%s)", dvi_status_string(st), dvi_world_last_error(dvi_model_world(a)));
    assert_true(size > 40);
    step_n(a, 40);
    double xa[33], xb[33];
    positions(a, xa, 11);

    dvi_model* b = build_ok(s);
    char msg[256];
    st = dvi_model_load_state(b, blob, size, msg, sizeof msg);
    if (st != DVI_OK) fail_msg("dvi_model_load_state: %s", msg);
    assert_int_equal(dvi_model_step_count(b), 60);
    assert_near(dvi_model_time(b), 60 * 0.005, 1e-12);
    step_n(b, 40);
    assert_int_equal(dvi_model_step_count(b), 100);
    positions(b, xb, 11);
    assert_memory_equal(xa, xb, sizeof xa); /* continues bit for bit */

    /* damaged blobs are refused and leave the model as it was */
    unsigned char* bad = malloc(size);
    assert_non_null(bad);
    memcpy(bad, blob, size);
    bad[3] ^= 1;
    assert_int_equal(dvi_model_load_state(b, bad, size, msg, sizeof msg), DVI_ERR_PARSE);
    assert_non_null(strstr(msg, "not a model state"));
    memcpy(bad, blob, size);
    bad[17] ^= 1; /* step count: header checksum */
    assert_int_equal(dvi_model_load_state(b, bad, size, msg, sizeof msg), DVI_ERR_PARSE);
    assert_non_null(strstr(msg, "checksum"));
    memcpy(bad, blob, size);
    bad[size - 9] ^= 0x40; /* inside the world's blob */
    assert_true(dvi_model_load_state(b, bad, size, msg, sizeof msg) < 0);
    print_message("damaged world data: %s\n", msg);
    assert_int_equal(dvi_model_load_state(b, blob, size - 1, msg, sizeof msg), DVI_ERR_PARSE);
    assert_int_equal(dvi_model_load_state(b, blob, 10, msg, sizeof msg), DVI_ERR_PARSE);
    /* forged step counts with valid checksums: INT64_MAX (the next step
     * would overflow), and 59 against a world at 60 steps' time */
    const uint64_t forged[2] = {(uint64_t)INT64_MAX, 59};
    for (int k = 0; k < 2; k++) {
        memcpy(bad, blob, size);
        for (int q = 0; q < 8; q++) bad[16 + q] = (unsigned char)(forged[k] >> (8 * q));
        uint64_t h = 1469598103934665603u; /* the header's FNV-1a 64 (56-byte header, checksum last) */
        for (int q = 0; q < 48; q++) {
            h ^= bad[q];
            h *= 1099511628211u;
        }
        for (int q = 0; q < 8; q++) bad[48 + q] = (unsigned char)(h >> (8 * q));
        assert_int_equal(dvi_model_load_state(b, bad, size, msg, sizeof msg), DVI_ERR_PARSE);
        print_message("forged step count %llu: %s\n", (unsigned long long)forged[k], msg);
        assert_non_null(strstr(msg, k == 0 ? "step count 9223372036854775807" : "disagrees with its step count (59"));
    }
    assert_int_equal(dvi_model_step_count(b), 100);
    positions(b, xb, 11);
    assert_memory_equal(xa, xb, sizeof xa);
    free(bad);

    /* a state of another scene is refused */
    dvi_scene* s2 = load_ok(SRC_PATH("examples/scenes/pendulum.json"));
    dvi_model* c = build_ok(s2);
    st = dvi_model_load_state(c, blob, size, msg, sizeof msg);
    print_message("state of another scene: %s: %s\n", dvi_status_string(st), msg);
    assert_true(st < 0);
    assert_int_equal(dvi_model_step_count(c), 0);
    dvi_model_destroy(c);
    dvi_scene_destroy(s2);

    free(blob);
    dvi_model_destroy(a);
    dvi_model_destroy(b);
    dvi_scene_destroy(s);
}

/* ---- misuse ----------------------------------------------------------------------- */

static void test_null_arguments(void** state)
{
    (void)state;
    dvi_model* m = NULL;
    char msg[64];
    assert_int_equal(dvi_model_create(NULL, &m, msg, sizeof msg), DVI_ERR_INVALID_ARG);
    assert_null(m);
    assert_int_equal(dvi_model_step(NULL), DVI_ERR_INVALID_ARG);
    assert_int_equal(dvi_model_probe_count(NULL), 0);
    assert_false(dvi_model_probe_due(NULL, 0));
    assert_int_equal(dvi_model_step_count(NULL), 0);
    assert_null(dvi_model_world(NULL));
    dvi_model_destroy(NULL);
    dvi_scene_destroy(NULL);
    dvi_scene_errors_free(NULL);
    assert_int_equal(dvi_scene_generator_count(NULL), 0);
    assert_int_equal(dvi_scene_body_count(NULL), 0);
    void* data;
    size_t size;
    assert_int_equal(dvi_model_save_state(NULL, &data, &size), DVI_ERR_INVALID_ARG);
    dvi_scene_settings set = dvi_scene_get_settings(NULL);
    assert_string_equal(set.method, "dvi");
}

/* nsgs and newton do not take friction_rolling blocks; a scene gives them
 * when two shapes of different bodies, one dynamic, both have rolling (or
 * both spinning) friction. A ball with rolling friction on a plane without
 * is taken, and nsgs steps it; two such balls, or spinning friction on
 * both, are refused naming the shapes; the DEM method is not checked. */
static void test_rolling_solver_check(void** state)
{
    (void)state;
    static const char* const one =
        "{\"materials\": {\"r\": {\"friction\": 0.5, \"rolling_friction\": 0.05}},\n"
        " \"bodies\": [{\"name\": \"ground\", \"type\": \"fixed\", \"shapes\": [{\"type\": \"plane\"}]},\n"
        "  {\"name\": \"a\", \"mass\": 1, \"position\": [0, 0, 0.1], \"shapes\": [{\"type\": \"sphere\", \"radius\": 0.1, "
        "\"material\": \"r\"}]}],\n"
        " \"formulation\": {\"dt\": 0.001, \"solver\": \"nsgs\", \"friction_law\": \"coulomb\"}, \"duration\": 0.02}";
    dvi_scene* s = parse_ok(one);
    dvi_model* m = build_ok(s);
    step_n(m, 20); /* the contact has no rolling rows: nsgs solves it */
    dvi_body_id b;
    assert_int_equal(dvi_model_find_body(m, "a", &b), DVI_OK);
    double x[3];
    dvi_body_get_position(dvi_model_world(m), b, x);
    assert_near(x[2], 0.1, 1e-5); /* resting on the plane */
    dvi_model_destroy(m);
    dvi_scene_destroy(s);

    static const char* const two =
        "{\"materials\": {\"r\": {\"friction\": 0.5, \"rolling_friction\": 0.05}},\n"
        " \"bodies\": [{\"name\": \"ground\", \"type\": \"fixed\", \"shapes\": [{\"type\": \"plane\"}]},\n"
        "  {\"name\": \"a\", \"mass\": 1, \"position\": [0, 0, 0.1], \"shapes\": [{\"type\": \"sphere\", \"radius\": 0.1, "
        "\"material\": \"r\"}]},\n"
        "  {\"name\": \"b\", \"mass\": 1, \"position\": [0.2, 0, 0.1], \"shapes\": [{\"type\": \"sphere\", \"radius\": 0.1, "
        "\"material\": \"r\"}]}],\n"
        " \"formulation\": {\"dt\": 0.001, \"solver\": \"newton\", \"friction_law\": \"coulomb\"}, \"duration\": 0.02}";
    dvi_scene_errors e;
    s = NULL;
    assert_int_equal(dvi_scene_parse(two, strlen(two), NULL, &s, &e), DVI_ERR_INVALID_ARG);
    assert_string_equal(e.text, "formulation.solver: \"newton\" does not take the friction_rolling blocks of Coulomb's "
                                "law, which the contacts between bodies[1].shapes[0] (\"a\") and bodies[2].shapes[0] "
                                "(\"b\") give (rolling_friction > 0 on both); solvers that do: desaxce or lemke with "
                                "lemke.coulomb\n");
    dvi_scene_errors_free(&e);

    static const char* const spin =
        "{\"materials\": {\"r\": {\"friction\": 0.5, \"spinning_friction\": 0.01}},\n"
        " \"bodies\": [{\"name\": \"ground\", \"type\": \"fixed\", \"shapes\": [{\"type\": \"plane\", \"material\": \"r\"}]},\n"
        "  {\"name\": \"a\", \"mass\": 1, \"position\": [0, 0, 0.1], \"shapes\": [{\"type\": \"sphere\", \"radius\": 0.1, "
        "\"material\": \"r\"}]}],\n"
        " \"formulation\": {\"dt\": 0.001, \"solver\": \"nsgs\", \"friction_law\": \"coulomb\"}, \"duration\": 0.02}";
    assert_int_equal(dvi_scene_parse(spin, strlen(spin), NULL, &s, &e), DVI_ERR_INVALID_ARG);
    assert_non_null(strstr(e.text, "between bodies[1].shapes[0] (\"a\") and bodies[0].shapes[0] (\"ground\") give "
                                   "(spinning_friction > 0 on both)"));
    dvi_scene_errors_free(&e);

    /* the same scene read with the CCP, then overridden to Coulomb's law with nsgs: refused, as --solver */
    char ccp[1024];
    snprintf(ccp, sizeof ccp, "%s", spin);
    char* at = strstr(ccp, "\"nsgs\", \"friction_law\": \"coulomb\"");
    assert_non_null(at);
    memcpy(at, "\"apgd\", \"friction_law\": \"ccp\"    ", strlen("\"nsgs\", \"friction_law\": \"coulomb\""));
    s = parse_ok(ccp);
    dvi_scene_overrides o;
    memset(&o, 0, sizeof o);
    o.solver = "nsgs";
    o.friction = "coulomb";
    assert_int_equal(dvi_scene_apply_overrides(s, &o, &e), DVI_ERR_INVALID_ARG);
    assert_non_null(strstr(e.text, "--solver: \"nsgs\" does not take the friction_rolling blocks"));
    assert_non_null(strstr(e.text, "solvers that do: desaxce or lemke with --lemke-coulomb\n"));
    dvi_scene_errors_free(&e);
    /* lemke with the override takes it */
    o.solver = "lemke";
    o.lemke_coulomb = true;
    assert_int_equal(dvi_scene_apply_overrides(s, &o, &e), DVI_OK);
    assert_true(dvi_scene_get_settings(s).solver_settings.lemke.coulomb);
    dvi_scene_errors_free(&e);
    dvi_scene_destroy(s);
}

/* ---- probe kinds registered by the program (dvi_probe_register) ---------------------------- */

/* A kind of this test: a body's height above a "datum" (a number > 0, given
 * or the body's first shape's radius), one column. */
static const dvi_probe_key HEIGHT_KEYS[] = {{"datum", DVI_PROBE_KEY_POSITIVE, NULL}};
static const dvi_probe_column HEIGHT_COLUMNS[] = {{"h", "m"}};

static dvi_status height_setup(const dvi_probe_keys* keys, const dvi_probe_body* body, double* data, char* msg,
                               size_t msg_size)
{
    if (keys->given & 1u) data[0] = keys->value[0][0];
    else if (body->shape_type == DVI_SHAPE_SPHERE) data[0] = body->shape_radius;
    else {
        snprintf(msg, msg_size, "datum: missing, and body \"%s\" is not a sphere", body->name);
        return DVI_ERR_INVALID_ARG;
    }
    return DVI_OK;
}

static dvi_status height_sample(const dvi_probe_context* c, const double* data, double* out)
{
    double x[3];
    dvi_status st = dvi_body_get_position(c->world, c->body, x);
    out[0] = x[0] * c->up[0] + x[1] * c->up[1] + x[2] * c->up[2] - data[0];
    return st;
}

static const dvi_probe_class HEIGHT = {.name = "height",
                                       .label = "Height",
                                       .columns = HEIGHT_COLUMNS,
                                       .column_count = 1,
                                       .keys = HEIGHT_KEYS,
                                       .key_count = 1,
                                       .data_width = 1,
                                       .setup = height_setup,
                                       .sample = height_sample};

/* - Registration refuses a NULL class, a name of the library's kinds or of
 *   another registered kind, and a class without columns or sample; the same
 *   class again is accepted.
 * - A registered kind reads its keys (a bad value, a key of another kind,
 *   its setup's refusal all name the probe's path), names its columns
 *   "TARGET.COLUMN", titles itself from its label and samples each target:
 *   a ball at z = 3 with radius 0.5 is 2.5 m above the datum 0.5, and 1 m
 *   above the datum 2 given. */
static void test_probe_register(void** state)
{
    (void)state;
    assert_int_equal(dvi_probe_register(NULL), DVI_ERR_INVALID_ARG);
    dvi_probe_class bad = HEIGHT;
    bad.name = "position";
    assert_int_equal(dvi_probe_register(&bad), DVI_ERR_INVALID_ARG);
    assert_non_null(strstr(dvi_error_message(), "\"position\": a kind of the library"));
    bad.name = "wheel_slip"; /* registered by main (rover_probes.c) */
    assert_int_equal(dvi_probe_register(&bad), DVI_ERR_INVALID_ARG);
    assert_non_null(strstr(dvi_error_message(), "\"wheel_slip\": another kind has that name"));
    bad = HEIGHT;
    bad.column_count = 0;
    assert_int_equal(dvi_probe_register(&bad), DVI_ERR_INVALID_ARG);
    bad = HEIGHT;
    bad.sample = NULL;
    assert_int_equal(dvi_probe_register(&bad), DVI_ERR_INVALID_ARG);
    bad = HEIGHT;
    bad.name = "bad name";
    assert_int_equal(dvi_probe_register(&bad), DVI_ERR_INVALID_ARG);
    assert_int_equal(dvi_probe_register(&HEIGHT), DVI_OK);
    assert_int_equal(dvi_probe_register(&HEIGHT), DVI_OK);
    assert_int_equal(rover_register_probes(), DVI_OK); /* again */

    const char* bodies = "{\"formulation\": {\"dt\": 0.001}, \"duration\": 1, \"gravity\": [0, 0, 0],\n"
                         " \"bodies\": [{\"name\": \"ball\", \"type\": \"fixed\", \"position\": [0, 0, 3], \"shapes\": [{\"type\": \"sphere\", "
                         "\"radius\": 0.5}]},\n"
                         "   {\"name\": \"box\", \"type\": \"fixed\", \"position\": [0, 0, 1], \"shapes\": [{\"type\": \"box\", "
                         "\"half_extents\": [1, 1, 1]}]}],\n";
    char text[2048];
    snprintf(text, sizeof text,
             "%s \"probes\": [{\"name\": \"h\", \"what\": \"height\", \"body\": \"ball\"},\n"
             "   {\"name\": \"h2\", \"what\": \"height\", \"bodies\": [\"ball\", \"box\"], \"datum\": 2}]}",
             bodies);
    dvi_scene* s = parse_ok(text);
    dvi_model* m = build_ok(s);
    {
        const char* nm[] = {"time", "ball.h"};
        const char* u[] = {"s", "m"};
        expect_columns(m, "h", 2, nm, u);
    }
    dvi_probe_info info;
    assert_int_equal(dvi_model_probe_info(m, probe_index(m, "h2"), &info), DVI_OK);
    assert_string_equal(info.title, "Height (h2)");
    assert_int_equal(info.columns, 3);
    double h[2], h2[3];
    sample(m, "h", h);
    sample(m, "h2", h2);
    assert_near(h[1], 2.5, 1e-15);
    assert_near(h2[1], 1.0, 1e-15);
    assert_near(h2[2], -1.0, 1e-15);
    dvi_model_destroy(m);
    dvi_scene_destroy(s);

    static const struct {
        const char* probe;
        const char* want;
    } BAD[] = {
        {"{\"name\": \"h\", \"what\": \"height\", \"body\": \"box\"}",
         "probes[0].datum: missing, and body \"box\" is not a sphere"},
        {"{\"name\": \"h\", \"what\": \"height\", \"body\": \"ball\", \"datum\": -1}", "probes[0].datum: must be > 0"},
        {"{\"name\": \"h\", \"what\": \"height\", \"body\": \"ball\", \"radius\": 1}",
         "probes[0].radius: not used by a \"height\" probe"},
        {"{\"name\": \"h\", \"what\": \"position\", \"body\": \"ball\", \"datum\": 1}",
         "probes[0].datum: not used by a \"position\" probe"},
        {"{\"name\": \"h\", \"what\": \"heigth\", \"body\": \"ball\"}", "probes[0].what: "},
    };
    for (size_t k = 0; k < sizeof BAD / sizeof BAD[0]; k++) {
        snprintf(text, sizeof text, "%s \"probes\": [%s]}", bodies, BAD[k].probe);
        dvi_scene* sb = NULL;
        dvi_scene_errors e;
        assert_int_equal(dvi_scene_parse(text, strlen(text), NULL, &sb, &e), DVI_ERR_INVALID_ARG);
        if (!e.text || !strstr(e.text, BAD[k].want)) fail_msg("case %zu: want \"%s\" in:\n%s", k, BAD[k].want, e.text);
        assert_null(sb);
        dvi_scene_errors_free(&e);
    }
}

/* "energy": each body's kinetic and potential energy, on free fall at the
 * default gravity and a step of 1 ms, where both are known in closed form.
 * A ball (2 kg, J = 0.008 kg m² about every axis, ω = (1, 2, 3) rad/s) falls
 * from z = 10 m; a light ball (0.5 kg, gravity_scale 0.5) is thrown up at
 * (1, 0, 2) m/s from (5, 0, 4) m; a fixed plane far below stays at 0, 0.
 * After n steps of h the velocity is v0 + n h s g exactly, and the position,
 * updated with the new velocity, x0 + n h v0 + h² n(n + 1)/2 s g, so
 *   kinetic   = ½ m |v|² + ½ J |ω|² (ω constant: J is isotropic),
 *   potential = −m s g · x,
 *   and the total falls behind its start by ½ m s² g² h t
 * (0.0962361 J for the ball after 1 s, 0.0060148 J for the light one): the
 * step's known energy error, which an integrator updating the position with
 * the old velocity would give with the opposite sign. */
static void test_probe_energy(void** state)
{
    (void)state;
    const char* text =
        "{\"formulation\": {\"dt\": 0.001}, \"duration\": 1,\n"
        " \"bodies\": [{\"name\": \"ball\", \"mass\": 2, \"inertia\": [0.008, 0.008, 0.008], \"position\": [0, 0, 10], "
        "\"angular_velocity\": [1, 2, 3], \"shapes\": [{\"type\": \"sphere\", \"radius\": 0.1}]},\n"
        "   {\"name\": \"light\", \"mass\": 0.5, \"gravity_scale\": 0.5, \"inertia\": [0.001, 0.001, 0.001], "
        "\"position\": [5, 0, 4], \"velocity\": [1, 0, 2], \"shapes\": [{\"type\": \"sphere\", \"radius\": 0.1}]},\n"
        "   {\"name\": \"ground\", \"type\": \"fixed\", \"position\": [0, 0, -100], \"shapes\": [{\"type\": \"plane\"}]}],\n"
        " \"probes\": [{\"name\": \"e\", \"what\": \"energy\", \"bodies\": [\"ball\", \"light\", \"ground\"]}]}";
    dvi_scene* s = parse_ok(text);
    dvi_model* m = build_ok(s);
    {
        const char* nm[] = {"time", "ball.kinetic", "ball.potential", "light.kinetic", "light.potential",
                            "ground.kinetic", "ground.potential"};
        const char* u[] = {"s", "J", "J", "J", "J", "J", "J"};
        expect_columns(m, "e", 7, nm, u);
    }
    dvi_probe_info info;
    assert_int_equal(dvi_model_probe_info(m, probe_index(m, "e"), &info), DVI_OK);
    assert_string_equal(info.title, "Energy (e)");

    const double h = 0.001, J = 0.008, w2 = 1 + 4 + 9;
    const int n = 1000;
    const double t = n * h;
    double e0[7], e1[7];
    sample(m, "e", e0);
    step_n(m, n);
    sample(m, "e", e1);
    /* the ball */
    const double rot = 0.5 * J * w2;
    const double z = 10.0 - h * h * n * (n + 1) / 2.0 * G;
    assert_near(e0[1], rot, 1e-15);
    assert_near(e0[2], 2 * G * 10.0, 1e-12);
    assert_near(e1[1], 0.5 * 2 * (G * t) * (G * t) + rot, 1e-10);
    assert_near(e1[2], 2 * G * z, 1e-10);
    const double drift = (e1[1] + e1[2]) - (e0[1] + e0[2]);
    /* the light ball: s = 0.5 */
    const double gs = 0.5 * G, vz = 2.0 - gs * t, zl = 4.0 + 2.0 * t - h * h * n * (n + 1) / 2.0 * gs;
    assert_near(e0[3], 0.5 * 0.5 * (1 + 4), 1e-15);
    assert_near(e0[4], 0.5 * gs * 4.0, 1e-12);
    assert_near(e1[3], 0.5 * 0.5 * (1 + vz * vz), 1e-10);
    assert_near(e1[4], 0.5 * gs * zl, 1e-10);
    const double drift_l = (e1[3] + e1[4]) - (e0[3] + e0[4]);
    print_message("energy: after %.1f s the ball's total fell by %.7f J (½ m g² h t = %.7f), the light ball's by "
                  "%.7f J (½ m s² g² h t = %.7f)\n",
                  t, -drift, 0.5 * 2 * G * G * h * t, -drift_l, 0.5 * 0.5 * gs * gs * h * t);
    assert_near(drift, -0.5 * 2 * G * G * h * t, 1e-9);
    assert_near(drift_l, -0.5 * 0.5 * gs * gs * h * t, 1e-9);
    for (int k = 5; k <= 6; k++) {
        assert_true(e0[k] == 0.0);
        assert_true(e1[k] == 0.0);
    }
    dvi_model_destroy(m);
    dvi_scene_destroy(s);
}

int main(void)
{
    if (rover_register_probes() != DVI_OK) return 1; /* the rover scenes' probe kinds */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bad_corpus),
        cmocka_unit_test(test_rolling_solver_check),
        cmocka_unit_test(test_hostile_generated),
        cmocka_unit_test(test_mutations),
        cmocka_unit_test(test_example_scenes),
        cmocka_unit_test(test_pendulum_period),
        cmocka_unit_test(test_incline),
        cmocka_unit_test(test_sliding_box),
        cmocka_unit_test(test_stacks),
        cmocka_unit_test(test_rover_statics),
        cmocka_unit_test(test_dem_scenes),
        cmocka_unit_test(test_dem_head_on),
        cmocka_unit_test(test_dem_settings_and_state),
        cmocka_unit_test(test_granular_bed),
        cmocka_unit_test(test_granular_bed_hexagonal),
        cmocka_unit_test(test_probe_columns),
        cmocka_unit_test(test_probe_kinds),
        cmocka_unit_test(test_probe_average),
        cmocka_unit_test(test_probe_interval),
        cmocka_unit_test(test_probe_every_at_another_step),
        cmocka_unit_test(test_dem_stable_step),
        cmocka_unit_test(test_scene_filters),
        cmocka_unit_test(test_block_tolerance_key),
        cmocka_unit_test(test_default_envelope),
        cmocka_unit_test(test_scene_ellipsoid),
        cmocka_unit_test(test_input_files_refused),
        cmocka_unit_test(test_probe_with),
        cmocka_unit_test(test_probe_combinations),
        cmocka_unit_test(test_probe_register),
        cmocka_unit_test(test_probe_energy),
        cmocka_unit_test(test_all_kinds),
        cmocka_unit_test(test_motor_damping_scene),
        cmocka_unit_test(test_overrides),
        cmocka_unit_test(test_friction_law),
        cmocka_unit_test(test_friction_law_key),
        cmocka_unit_test(test_overrides_study),
        cmocka_unit_test(test_state_round_trip),
        cmocka_unit_test(test_null_arguments),
    };
    return cmocka_run_group_tests_name("scene", tests, NULL, NULL);
}
