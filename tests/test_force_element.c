/* Force elements (dvi_force_element_class): models that add forces at the
 * start of every step.
 *
 * Physics: a linear spring element on a free body is the harmonic
 * oscillator; at a step of 1 ms it follows A cos(ωt) over 10 periods in
 * both methods to the first-order term of the step's symplectic Euler
 * (x_{n+1} = x_n + h v_{n+1}): its discrete solution leads the exact one by
 * half a step in velocity, a difference of amplitude ωhA/2 (5e-4 m here),
 * and its frequency differs by only (ωh)²/24 (energy does not drift). A Maxwell element
 * (spring k in series with a dashpot c, its elongation the element's own
 * state) dissipates exactly the energy the dashpot takes: the body's
 * energy plus the spring's decreases monotonically.
 * State: a world saved mid-run and loaded into one built the same way,
 * with the element's state, continues bit-identically; a world with other
 * elements refuses the blob, naming them.
 * Errors: a bad class, a failing apply, a non-finite force each give a
 * non-zero status and a message naming the element or the body. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dvi/world.h"
#include "test_util.h"

#define H 0.001
#define PI 3.14159265358979323846

/* ---- a linear spring to the origin along x: F = −k x ---- */
typedef struct spring {
    dvi_body_id body;
    double k;
    int calls;
} spring;

static dvi_status spring_apply(void* self, dvi_world* w, double h)
{
    (void)h;
    spring* s = self;
    double x[3];
    dvi_status st = dvi_body_get_position(w, s->body, x);
    if (st != DVI_OK) return st;
    double f[3] = {-s->k * x[0], 0.0, 0.0};
    s->calls++;
    return dvi_body_add_step_force(w, s->body, f, NULL);
}

static const dvi_force_element_class spring_class = {.name = "spring", .apply = spring_apply};

static dvi_world* free_body_world(dvi_method method, double x0, dvi_body_id* body)
{
    dvi_world_def wd = dvi_default_world_def();
    wd.gravity[2] = 0.0;
    wd.method = method;
    dvi_world* w;
    assert_int_equal(dvi_world_create(&wd, &w), DVI_OK);
    dvi_body_def bd = dvi_default_body_def();
    bd.type = DVI_BODY_DYNAMIC;
    bd.mass = 2.0;
    bd.inertia[0] = bd.inertia[4] = bd.inertia[8] = 0.1;
    bd.position[0] = x0;
    assert_int_equal(dvi_body_create(w, &bd, body), DVI_OK);
    return w;
}

static void oscillator(dvi_method method)
{
    dvi_body_id b;
    const double A = 0.1, m = 2.0, k = 200.0, omega = sqrt(k / m);
    dvi_world* w = free_body_world(method, A, &b);
    spring s = {b, k, 0};
    int32_t index = -7;
    assert_int_equal(dvi_world_add_force_element(w, &spring_class, &s, &index), DVI_OK);
    assert_int_equal(index, 0);
    assert_int_equal(dvi_world_force_element_count(w), 1);
    const dvi_force_element_class* cls = NULL;
    assert_ptr_equal(dvi_world_force_element(w, 0, &cls), &s);
    assert_ptr_equal(cls, &spring_class);
    assert_null(dvi_world_force_element(w, 1, &cls));
    const int n = (int)lround(10.0 * 2.0 * PI / omega / H);
    double worst = 0.0;
    for (int i = 1; i <= n; i++) {
        assert_int_equal(dvi_world_step(w, H), DVI_OK);
        double x[3];
        dvi_body_get_position(w, b, x);
        double e = fabs(x[0] - A * cos(omega * i * H));
        if (e > worst) worst = e;
    }
    printf("%s: spring element, %d steps, largest |x - A cos wt| = %.3e m (A = %.2f m)\n",
           method == DVI_METHOD_DEM ? "DEM" : "DVI", n, worst, A);
    assert_int_equal(s.calls, n);
    assert_true(worst < 1.1 * 0.5 * omega * H * A);
    double f[3], t[3];
    assert_int_equal(dvi_body_get_step_force(w, b, f, t), DVI_OK);
    double x[3];
    dvi_body_get_position(w, b, x);
    assert_true(fabs(f[0]) > 0.0 && t[0] == 0.0 && t[1] == 0.0 && t[2] == 0.0);
    dvi_world_destroy(w);
}

static void test_oscillator_dvi(void** state)
{
    (void)state;
    oscillator(DVI_METHOD_DVI);
}

static void test_oscillator_dem(void** state)
{
    (void)state;
    oscillator(DVI_METHOD_DEM);
}

/* ---- a Maxwell element: spring k in series with dashpot c, to the ground
 * along x; its elongation s is the state. Semi-implicit update of
 * ds/dt = v − (k/c) s, force −k s. ---- */
typedef struct maxwell {
    dvi_body_id body;
    double k, c, s;
    bool owned; /* destroyed by the world */
} maxwell;

static dvi_status maxwell_apply(void* self, dvi_world* w, double h)
{
    maxwell* e = self;
    double v[3];
    dvi_body_get_velocity(w, e->body, v);
    e->s = (e->s + h * v[0]) / (1.0 + h * e->k / e->c);
    double f[3] = {-e->k * e->s, 0.0, 0.0};
    return dvi_body_add_step_force(w, e->body, f, NULL);
}

static size_t maxwell_size(const void* self)
{
    (void)self;
    return sizeof(double);
}

static void maxwell_save(const void* self, void* out)
{
    memcpy(out, &((const maxwell*)self)->s, sizeof(double));
}

static dvi_status maxwell_load(void* self, const void* data, size_t size)
{
    if (size != sizeof(double)) return dvi_error_report(DVI_ERR_PARSE, "maxwell: %zu bytes, expected 8", size);
    double s;
    memcpy(&s, data, sizeof s);
    if (!isfinite(s)) return dvi_error_report(DVI_ERR_PARSE, "maxwell: elongation not finite");
    ((maxwell*)self)->s = s;
    return DVI_OK;
}

static void maxwell_destroy(void* self)
{
    free(self);
}

static const dvi_force_element_class maxwell_class = {.name = "maxwell",
                                                      .apply = maxwell_apply,
                                                      .state_size = maxwell_size,
                                                      .save = maxwell_save,
                                                      .load = maxwell_load,
                                                      .destroy = maxwell_destroy};

static dvi_world* maxwell_world(maxwell** out)
{
    dvi_body_id b;
    dvi_world* w = free_body_world(DVI_METHOD_DVI, 0.0, &b);
    assert_int_equal(dvi_body_set_velocity(w, b, (double[3]){1.0, 0.0, 0.0}, (double[3]){0.0, 0.0, 0.0}), DVI_OK);
    maxwell* e = calloc(1, sizeof *e);
    assert_non_null(e);
    *e = (maxwell){.body = b, .k = 400.0, .c = 20.0, .s = 0.0, .owned = true};
    assert_int_equal(dvi_world_add_force_element(w, &maxwell_class, e, NULL), DVI_OK);
    *out = e;
    return w;
}

static double maxwell_energy(const dvi_world* w, const maxwell* e)
{
    double v[3];
    dvi_body_get_velocity(w, e->body, v);
    return 0.5 * 2.0 * v[0] * v[0] + 0.5 * e->k * e->s * e->s;
}

static void test_maxwell_dissipates_and_resumes(void** state)
{
    (void)state;
    maxwell* e;
    dvi_world* w = maxwell_world(&e);
    double E0 = maxwell_energy(w, e), last = E0;
    bool monotone = true;
    for (int i = 0; i < 300; i++) {
        assert_int_equal(dvi_world_step(w, H), DVI_OK);
        double E = maxwell_energy(w, e);
        if (E > last * (1.0 + 1e-12)) monotone = false;
        last = E;
    }
    printf("Maxwell element: energy %.6f J -> %.6f J in 0.3 s, monotone %s\n", E0, last, monotone ? "yes" : "no");
    assert_true(monotone);
    assert_true(last < 0.5 * E0 && last > 0.0);
    void* blob;
    size_t size;
    assert_int_equal(dvi_world_save_state(w, &blob, &size), DVI_OK);
    maxwell* e2;
    dvi_world* w2 = maxwell_world(&e2);
    assert_int_equal(dvi_world_load_state(w2, blob, size), DVI_OK);
    assert_true(e2->s == e->s);
    for (int i = 0; i < 200; i++) {
        assert_int_equal(dvi_world_step(w, H), DVI_OK);
        assert_int_equal(dvi_world_step(w2, H), DVI_OK);
    }
    double x1[3], x2[3];
    dvi_body_get_position(w, e->body, x1);
    dvi_body_get_position(w2, e2->body, x2);
    assert_memory_equal(x1, x2, sizeof x1);
    assert_memory_equal(&e->s, &e2->s, sizeof(double));
    printf("Maxwell element: resumed run bit-identical over 200 steps (x = %.9f m, s = %.9f m)\n", x1[0], e->s);

    /* a world without the element refuses the blob, and one with a spring
     * instead */
    dvi_body_id b3;
    dvi_world* w3 = free_body_world(DVI_METHOD_DVI, 0.0, &b3);
    assert_int_equal(dvi_world_load_state(w3, blob, size), DVI_ERR_INVALID_ARG);
    assert_non_null(strstr(dvi_world_last_error(w3), "force elements 1 in the state vs 0 here"));
    spring s3 = {b3, 1.0, 0};
    assert_int_equal(dvi_world_add_force_element(w3, &spring_class, &s3, NULL), DVI_OK);
    assert_int_equal(dvi_world_load_state(w3, blob, size), DVI_ERR_INVALID_ARG);
    assert_non_null(strstr(dvi_world_last_error(w3), "'maxwell' in the state, 'spring' here"));
    /* the blob of a world with the element is refused by... a damaged element state: the element's load decides */
    unsigned char* bad = malloc(size);
    memcpy(bad, blob, size);
    double nan_value = NAN;
    memcpy(bad + size - 8, &nan_value, 8);
    /* reseal: FNV-1a 64 over header bytes 0..55 and the payload */
    uint64_t hsum = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < size; i++) {
        if (i >= 56 && i < 64) continue;
        hsum ^= bad[i];
        hsum *= 0x100000001b3ull;
    }
    for (int k = 0; k < 8; k++) bad[56 + k] = (unsigned char)(hsum >> (8 * k));
    double before_x[3];
    dvi_body_get_position(w2, e2->body, before_x);
    double before_s = e2->s;
    assert_int_equal(dvi_world_load_state(w2, bad, size), DVI_ERR_PARSE);
    assert_non_null(strstr(dvi_world_last_error(w2), "force element 0 (maxwell): maxwell: elongation not finite"));
    double after_x[3];
    dvi_body_get_position(w2, e2->body, after_x);
    assert_memory_equal(before_x, after_x, sizeof before_x);
    assert_true(e2->s == before_s);
    free(bad);
    free(blob);
    dvi_world_destroy(w3);
    dvi_world_destroy(w2);
    dvi_world_destroy(w); /* frees e through the class's destroy (ASan checks) */
}

/* ---- errors ---- */
static dvi_status failing_apply(void* self, dvi_world* w, double h)
{
    (void)self, (void)w, (void)h;
    return dvi_error_report(DVI_ERR_NUMERIC, "soil node 12: sinkage not finite");
}

static dvi_status nan_apply(void* self, dvi_world* w, double h)
{
    (void)h;
    double f[3] = {0.0, NAN, 0.0};
    return dvi_body_add_step_force(w, *(dvi_body_id*)self, f, NULL);
}

static void test_errors(void** state)
{
    (void)state;
    dvi_body_id b;
    dvi_world* w = free_body_world(DVI_METHOD_DVI, 0.0, &b);
    assert_int_equal(dvi_world_add_force_element(NULL, &spring_class, NULL, NULL), DVI_ERR_INVALID_ARG);
    assert_int_equal(dvi_world_add_force_element(w, NULL, NULL, NULL), DVI_ERR_INVALID_ARG);
    const dvi_force_element_class no_apply = {.name = "x"};
    assert_int_equal(dvi_world_add_force_element(w, &no_apply, NULL, NULL), DVI_ERR_INVALID_ARG);
    assert_non_null(strstr(dvi_error_message(), "force element 'x': apply is NULL"));
    const dvi_force_element_class no_name = {.apply = spring_apply};
    assert_int_equal(dvi_world_add_force_element(w, &no_name, NULL, NULL), DVI_ERR_INVALID_ARG);
    assert_non_null(strstr(dvi_error_message(), "name must be 1 to 63 bytes"));
    const dvi_force_element_class half = {.name = "half", .apply = spring_apply, .state_size = maxwell_size};
    assert_int_equal(dvi_world_add_force_element(w, &half, NULL, NULL), DVI_ERR_INVALID_ARG);
    assert_non_null(strstr(dvi_error_message(), "state_size needs save and load"));
    assert_int_equal(dvi_world_force_element_count(w), 0);

    const dvi_force_element_class failing = {.name = "soil", .apply = failing_apply};
    assert_int_equal(dvi_world_add_force_element(w, &failing, NULL, NULL), DVI_OK);
    assert_int_equal(dvi_world_step(w, H), DVI_ERR_NUMERIC);
    assert_string_equal(dvi_world_last_error(w), "force element 0 (soil): soil node 12: sinkage not finite");
    assert_string_equal(dvi_error_message(), dvi_world_last_error(w));
    assert_true(dvi_world_time(w) == 0.0);
    dvi_world_destroy(w);

    w = free_body_world(DVI_METHOD_DEM, 0.0, &b);
    const dvi_force_element_class nan_class = {.name = "nan", .apply = nan_apply};
    assert_int_equal(dvi_world_add_force_element(w, &nan_class, &b, NULL), DVI_OK);
    assert_int_equal(dvi_world_step(w, H), DVI_ERR_INVALID_ARG);
    assert_non_null(strstr(dvi_world_last_error(w), "step force on bodies[0]: not finite"));
    assert_int_equal(dvi_body_add_step_force(w, (dvi_body_id){0}, NULL, NULL), DVI_ERR_INVALID_ARG);
    assert_int_equal(dvi_body_get_step_force(w, (dvi_body_id){0}, NULL, NULL), DVI_ERR_INVALID_ARG);
    dvi_world_destroy(w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_oscillator_dvi),
        cmocka_unit_test(test_oscillator_dem),
        cmocka_unit_test(test_maxwell_dissipates_and_resumes),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
