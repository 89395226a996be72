/* Every public function of include/dvi/ (every header) called with NULL in each of its
 * pointer arguments in turn, the others valid: a function that returns a
 * status returns one that is not DVI_OK (DVI_ERR_INVALID_ARG for a missing
 * argument, with a message naming it), never DVI_OK and never a crash;
 * the other functions return their documented null value (NULL, 0, false,
 * a default) without crashing. Arguments a header documents as optional
 * ("may be NULL") are marked so in the table: those calls must only not
 * crash. tests/check_null_args.py checks that the table names every
 * function the headers declare. Run under the ASan build too
 * (-Db_sanitize=address,undefined). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dvi/dvi.h"
#include "dvi/output.h"
#include "dvi/terrain.h"
#include "test_util.h"

/* The valid arguments: a world with a body, a shape and a joint, a CCP
 * problem, a solver, a CSV, a JSON writer, a scene and its model. */
static struct {
    dvi_world* w;
    dvi_body_id body, body_out;
    dvi_joint_id joint, joint_out;
    dvi_shape_id shape, shape_out;
    dvi_ccp_file* file;
    const dvi_ccp_problem* p;
    dvi_solver* solver;
    dvi_csv* csv;
    dvi_json_writer* jw;
    dvi_scene* scene;
    dvi_model* model;
    dvi_fclib_info info;
    dvi_scene_errors errors;
    FILE* file_out;
    const dvi_force_element_class* fe_cls_p;
    dvi_scm* scm;
    dvi_dist* dist; /* NULL: no MPI here (creating one needs MPI_Init; tests/test_mpi.py runs it) */
    char dir[64], path[128], msg[512];
    const char* names[4];
    const char* json;
    double din[4096], dout[4096];
    _Alignas(64) unsigned char any[1 << 16];
    void* vp;
    char* text;
    size_t sz;
    int32_t i32;
    int i;
    long long ll;
} fx;

static void namer(void* user, int32_t index, char* out, size_t size)
{
    (void)user;
    snprintf(out, size, "b%d", (int)index);
}

static int setup(void** state)
{
    (void)state;
    snprintf(fx.dir, sizeof fx.dir, "/tmp/dvi_null_XXXXXX");
    assert_non_null(mkdtemp(fx.dir));
    snprintf(fx.path, sizeof fx.path, "%s/missing.file", fx.dir);
    fx.names[0] = "t";
    fx.names[1] = "x";
    fx.json = "{\"rows\": 0}";
    dvi_world_def wd = dvi_default_world_def();
    assert_int_equal(dvi_world_create(&wd, &fx.w), DVI_OK);
    dvi_body_def bd = dvi_default_body_def();
    assert_int_equal(dvi_body_create(fx.w, &bd, &fx.body), DVI_OK);
    dvi_shape_def sd = dvi_default_shape_def();
    dvi_sphere sp = {0.1};
    assert_int_equal(dvi_world_add_sphere(fx.w, fx.body, &sd, &sp, &fx.shape), DVI_OK);
    dvi_joint_def jd = dvi_default_joint_def();
    jd.type = DVI_JOINT_REVOLUTE;
    jd.body_b = fx.body;
    jd.axis[0] = 1;
    assert_int_equal(dvi_joint_create(fx.w, &jd, &fx.joint), DVI_OK);
    dvi_scm_def scm = dvi_default_scm_def();
    assert_int_equal(dvi_scm_create(fx.w, &scm, &fx.scm), DVI_OK);
    assert_int_equal(dvi_ccp_problem_read_json(SRC_PATH("tests/data/ccp/stack3.json"), &fx.file, fx.msg, sizeof fx.msg),
                     DVI_OK);
    fx.p = &fx.file->problem;
    dvi_solver_settings ss = dvi_default_solver_settings();
    assert_int_equal(dvi_solver_create("apgd", &ss, &fx.solver), DVI_OK);
    char csv[128];
    snprintf(csv, sizeof csv, "%s/t.csv", fx.dir);
    assert_int_equal(dvi_csv_open(&fx.csv, csv, 2, fx.names, NULL, fx.msg, sizeof fx.msg), DVI_OK);
    assert_int_equal(dvi_json_writer_open_buffer(&fx.jw), DVI_OK);
    assert_int_equal(dvi_scene_load(SRC_PATH("examples/scenes/pendulum.json"), &fx.scene, &fx.errors), DVI_OK);
    assert_int_equal(dvi_model_create(fx.scene, &fx.model, fx.msg, sizeof fx.msg), DVI_OK);
    fx.file_out = tmpfile();
    assert_non_null(fx.file_out);
    return 0;
}

static int teardown(void** state)
{
    (void)state;
    dvi_model_destroy(fx.model);
    dvi_scene_destroy(fx.scene);
    dvi_scene_errors_free(&fx.errors);
    dvi_json_writer_free(fx.jw);
    dvi_csv_close(fx.csv);
    dvi_solver_destroy(fx.solver);
    dvi_ccp_file_free(fx.file);
    dvi_world_destroy(fx.w);
    fclose(fx.file_out);
    test_remove_tree(fx.dir);
    return 0;
}

/* A(i, v): the i-th pointer argument, NULL when it is the one tested. */
static int g_null; /* the index of the pointer argument passed as NULL */
#define A(i, v) ((i) == g_null ? NULL : (v))

typedef enum kind { ST, VOID, OTHER } kind;
typedef struct entry {
    const char* name;
    int pointers;      /* pointer arguments, numbered left to right */
    kind k;
    const char* opt;   /* per pointer: 'R' required, 'O' documented optional (NULL accepted) */
    dvi_status (*call)(void);
} entry;

#define ENTRY_ST(fn, n, opt, call) static dvi_status call_##fn(void) { return call; }
#define ENTRY_VOID(fn, n, opt, call) static dvi_status call_##fn(void) { call; return DVI_OK; }
#define ENTRY_OTHER(fn, n, opt, call) static dvi_status call_##fn(void) { (void)(call); return DVI_OK; }
#define ENTRY(fn, n, k, opt, call) ENTRY_##k(fn, n, opt, call)
#include "null_args_table.h"
#undef ENTRY
#define ENTRY(fn, n, k, opt, call) {#fn, n, k, opt, call_##fn},
static const entry TABLE[] = {
#include "null_args_table.h"
};
#undef ENTRY

/* The objects a call made although an argument was NULL (an optional one:
 * defaults) are released, so that the ASan build's leak check stays
 * meaningful. */
static void release_outputs(const char* name)
{
    if (!fx.vp) return;
    if (!strcmp(name, "dvi_solver_create")) dvi_solver_destroy(fx.vp);
    else if (!strcmp(name, "dvi_world_create")) dvi_world_destroy(fx.vp);
    else if (!strcmp(name, "dvi_json_writer_open_file") || !strcmp(name, "dvi_json_writer_open_buffer"))
        dvi_json_writer_free(fx.vp);
    else if (!strcmp(name, "dvi_csv_open") || !strcmp(name, "dvi_csv_open_resume")) dvi_csv_close(fx.vp);
    else if (!strcmp(name, "dvi_model_create") || !strcmp(name, "dvi_model_create_with")) dvi_model_destroy(fx.vp);
    else if (!strcmp(name, "dvi_scene_load") || !strcmp(name, "dvi_scene_parse")) dvi_scene_destroy(fx.vp);
    else if (strstr(name, "_json") || strstr(name, "fclib_read")) dvi_ccp_file_free(fx.vp);
    else if (strstr(name, "save_state")) free(fx.vp);
    else if (!strcmp(name, "dvi_dist_create")) dvi_dist_destroy(fx.vp);
    else {
        print_error("%s: an output of unknown kind was made\n", name);
        fail();
    }
    fx.vp = NULL;
}

static void test_null_arguments(void** state)
{
    (void)state;
    int failures = 0, calls = 0;
    for (size_t e = 0; e < sizeof TABLE / sizeof TABLE[0]; e++) {
        const entry* t = &TABLE[e];
        assert_int_equal((int)strlen(t->opt), t->pointers);
        for (g_null = 0; g_null < t->pointers; g_null++) {
            dvi_error_clear();
            fx.msg[0] = '\0';
            fx.vp = NULL;
            fx.text = NULL;
            /* the scratch the valid pointers point at: zeros, not what an
             * earlier call wrote there (a panel whose title is the bits
             * of a residual) */
            memset(fx.any, 0, sizeof fx.any);
            dvi_status st = t->call();
            calls++;
            release_outputs(t->name);
            dvi_scene_errors_free(&fx.errors); /* what a failed scene call listed */
            dvi_fclib_info_clear(&fx.info);
            free(fx.text);
            fx.text = NULL;
            if (t->k != ST || t->opt[g_null] == 'O') continue;
            if (st == DVI_OK) {
                print_error("%s with NULL in pointer argument %d: DVI_OK\n", t->name, g_null + 1);
                failures++;
            } else if (st == DVI_ERR_INVALID_ARG && dvi_error_message()[0] == '\0') {
                print_error("%s with NULL in pointer argument %d: no message\n", t->name, g_null + 1);
                failures++;
            }
        }
    }
    g_null = -1;
    printf("%zu functions, %d calls with a NULL argument\n", sizeof TABLE / sizeof TABLE[0], calls);
    assert_int_equal(failures, 0);
}

/* The message of a missing output pointer names the function and the argument. */
static void test_null_message(void** state)
{
    (void)state;
    dvi_error_clear();
    assert_int_equal(dvi_body_get_position(fx.w, fx.body, NULL), DVI_ERR_INVALID_ARG);
    assert_non_null(strstr(dvi_error_message(), "dvi_body_get_position"));
    assert_non_null(strstr(dvi_error_message(), "out"));
    /* the documented null values of functions that return no status */
    assert_int_equal(dvi_solver_index(NULL), -1);
    assert_int_equal(dvi_world_get_friction_law(NULL), DVI_LAW_CCP);
    assert_int_equal(dvi_world_body_count(NULL), 0);
    assert_null(dvi_json_writer_buffer(NULL, NULL));
    double pos[3] = {1, 1, 1};
    assert_int_equal(dvi_body_get_position(fx.w, fx.body, pos), DVI_OK);
    assert_true(pos[0] == 0 && pos[1] == 0 && pos[2] == 0);
}

int main(void)
{
    g_null = -1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_null_message),
        cmocka_unit_test(test_null_arguments),
    };
    return cmocka_run_group_tests_name("null_args", tests, setup, teardown);
}
