/* World state blobs (checkpoints), body enumeration, and the JSON CCP file.
 *
 * State: a world saved after N steps and loaded into a world built the same
 * way continues bit-identically (positions, velocities, contact forces,
 * reactions, solver iterations, stats), whether the loading world is fresh
 * or has stepped on its own before. A blob is refused, leaving the world
 * unchanged, when the structure differs or when it is damaged (every single
 * flipped byte, every truncation, forged contents with a valid checksum).
 *
 * CCP files: write → read is bit-exact in both operator forms; malformed
 * files give messages naming the place; a problem read from a file solves to
 * the same bits as the one in memory; the sample tests/data/ccp/stack3.json
 * solves to its reference solution. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dvi/io.h"
#include "dvi/world.h"
#include "test_util.h"

#define H 0.005

/* Sizes in the state format (world_state.c), for the forged-blob tests. */
#define STATS_BYTES (7 * 4 + 9 * 8)
#define BODY_BYTES (25 * 8)
#define JOINT_BYTES (2 * 8 + 4 + 7 * 8 + 7 * 6 * 8 + 6 * 8)
#define DEM_HEAD_BYTES (8 + 4)
#define DEM_ENTRY_BYTES (3 * 4 + 6 * 8)
#define CONTACT_BYTES (5 * 4 + 13 * 8 + 2 * 4 + 10 * 8)

/* Bit-identical arrays of doubles, with the first difference printed. */
#define assert_bits(a, b, n)                                                                                   \
    do {                                                                                                      \
        const double* a_ = (a);                                                                               \
        const double* b_ = (b);                                                                               \
        for (size_t i_ = 0; i_ < (size_t)(n); i_++)                                                          \
            if (memcmp(&a_[i_], &b_[i_], sizeof(double)) != 0) {                                              \
                print_error("%s[%zu] = %.17g differs from %s[%zu] = %.17g\n", #a, i_, a_[i_], #b, i_, b_[i_]); \
                fail();                                                                                       \
            }                                                                                                 \
    } while (0)

/* ---- the scene: spheres falling onto boxes, a motorised pendulum ------------------ */

enum { N_SPHERES = 6 };

typedef struct scene {
    dvi_world* w;
    dvi_body_id ground, boxes[2], spheres[N_SPHERES], kinematic, arm, bob;
    dvi_joint_id hinge, ball;
} scene;

/* Structural variants, for the refusal tests. */
enum { V_SAME = 0, V_EXTRA_SPHERE, V_MASS, V_RADIUS, V_GRAVITY, V_ANCHOR, V_MATERIAL };

static dvi_body_id add_body(dvi_world* w, dvi_body_type type, double mass, double I, double x, double y, double z)
{
    dvi_body_def bd = dvi_default_body_def();
    bd.type = type;
    bd.mass = mass;
    bd.inertia[0] = bd.inertia[4] = bd.inertia[8] = I;
    bd.position[0] = x;
    bd.position[1] = y;
    bd.position[2] = z;
    dvi_body_id b;
    assert_int_equal(dvi_body_create(w, &bd, &b), DVI_OK);
    return b;
}

static void build_scene(scene* s, int variant)
{
    memset(s, 0, sizeof *s);
    dvi_world_def wd = dvi_default_world_def();
    if (variant == V_GRAVITY) wd.gravity[2] = -9.80;
    assert_int_equal(dvi_world_create(&wd, &s->w), DVI_OK);
    dvi_world* w = s->w;

    s->ground = add_body(w, DVI_BODY_FIXED, 1, 1, 0, 0, 0);
    dvi_shape_def sd = dvi_default_shape_def();
    sd.type = DVI_SHAPE_PLANE;
    sd.material.friction = 0.6;
    sd.material.rolling_friction = 0.02;
    sd.material.spinning_friction = 0.01;
    test_add_shape(w, s->ground, &sd);

    for (int k = 0; k < 2; k++) {
        double m = variant == V_MASS && k == 1 ? 5.5 : 5.0;
        s->boxes[k] = add_body(w, DVI_BODY_DYNAMIC, m, m * (0.09 + 0.01) / 3.0, k ? 0.4 : -0.4, 0.0, 0.1);
        sd = dvi_default_shape_def();
        sd.type = DVI_SHAPE_BOX;
        sd.half_extents[0] = sd.half_extents[1] = 0.3;
        sd.half_extents[2] = 0.1;
        sd.material.friction = variant == V_MATERIAL && k == 0 ? 0.45 : 0.4;
        test_add_shape(w, s->boxes[k], &sd);
    }
    static const double sx[N_SPHERES] = {-0.5, -0.3, 0.3, 0.5, 0.0, 0.05};
    static const double sy[N_SPHERES] = {0.02, -0.05, 0.1, 0.0, -0.01, 0.3};
    for (int k = 0; k < N_SPHERES; k++) {
        const double r = variant == V_RADIUS && k == 3 ? 0.081 : 0.08, m = 0.5;
        s->spheres[k] = add_body(w, DVI_BODY_DYNAMIC, m, 0.4 * m * 0.08 * 0.08, sx[k], sy[k], 0.4 + 0.1 * k);
        sd = dvi_default_shape_def();
        sd.type = DVI_SHAPE_SPHERE;
        sd.radius = r;
        sd.material.friction = 0.5;
        if (k < 3) { /* rolling and spinning resistance against the ground: 6-row blocks */
            sd.material.rolling_friction = 0.01;
            sd.material.spinning_friction = 0.005;
        }
        if (k == 5) sd.material.restitution = 0.5;
        test_add_shape(w, s->spheres[k], &sd);
    }
    double v[3] = {-0.2, 0.0, 0.0};
    s->kinematic = add_body(w, DVI_BODY_KINEMATIC, 1, 1, 1.5, 0.0, 0.1);
    assert_int_equal(dvi_body_set_velocity(w, s->kinematic, v, NULL), DVI_OK);
    sd = dvi_default_shape_def();
    sd.type = DVI_SHAPE_BOX;
    sd.half_extents[0] = sd.half_extents[1] = sd.half_extents[2] = 0.1;
    test_add_shape(w, s->kinematic, &sd);

    /* a motorised arm hinged to the world about x, a bob on a ball joint */
    s->arm = add_body(w, DVI_BODY_DYNAMIC, 1.0, 0.02, 0.0, 2.0, 1.0);
    sd = dvi_default_shape_def();
    sd.type = DVI_SHAPE_CAPSULE;
    sd.radius = 0.03;
    sd.half_length = 0.2;
    test_add_shape(w, s->arm, &sd);
    s->bob = add_body(w, DVI_BODY_DYNAMIC, 0.3, 0.4 * 0.3 * 0.05 * 0.05, 0.0, 2.0, 0.7);
    sd = dvi_default_shape_def();
    sd.radius = 0.05;
    test_add_shape(w, s->bob, &sd);
    dvi_joint_def jd = dvi_default_joint_def();
    jd.type = DVI_JOINT_REVOLUTE;
    jd.body_b = s->arm;
    jd.anchor[0] = 0.0;
    jd.anchor[1] = 2.0;
    jd.anchor[2] = variant == V_ANCHOR ? 1.21 : 1.2;
    jd.axis[0] = 1.0;
    jd.axis[2] = 0.0;
    jd.motor = DVI_MOTOR_ROTATION_SPEED;
    jd.motor_speed = 2.0;
    jd.motor_ramp_time = 0.4;
    assert_int_equal(dvi_joint_create(w, &jd, &s->hinge), DVI_OK);
    jd = dvi_default_joint_def();
    jd.type = DVI_JOINT_SPHERICAL;
    jd.body_a = s->arm;
    jd.body_b = s->bob;
    jd.anchor[1] = 2.0;
    jd.anchor[2] = 0.8;
    assert_int_equal(dvi_joint_create(w, &jd, &s->ball), DVI_OK);

    if (variant == V_EXTRA_SPHERE) {
        dvi_body_id e = add_body(w, DVI_BODY_DYNAMIC, 0.5, 0.002, 3.0, 3.0, 0.5);
        sd = dvi_default_shape_def();
        sd.radius = 0.08;
        test_add_shape(w, e, &sd);
    }
}

/* Changes made through the API during the run: after step 100 (steps count
 * from 1), the motor's target and an applied force on a sphere. */
static void events(scene* s, int step)
{
    if (step == 100) {
        assert_int_equal(dvi_joint_set_motor(s->w, s->hinge, -1.0, 0.0), DVI_OK);
        double f[3] = {0.5, 0.0, 0.0}, t[3] = {0.0, 0.0, 0.01};
        assert_int_equal(dvi_body_set_applied_force(s->w, s->spheres[4], f, t), DVI_OK);
    }
}

static void run(scene* s, int from, int to)
{
    for (int k = from + 1; k <= to; k++) {
        dvi_status st = dvi_world_step(s->w, H);
        if (st < 0) print_error("step %d: %s\n", k, dvi_world_last_error(s->w));
        assert_true(st >= 0);
        events(s, k);
    }
}

/* Everything observable through the API is bit-identical: time, bodies,
 * contacts, the reactions of the joints ja/jb, the stats (DEM fields too). */
static void assert_same_world(dvi_world* wa, dvi_world* wb, const dvi_joint_id* ja, const dvi_joint_id* jb, int nj)
{
    double ta = dvi_world_time(wa), tb = dvi_world_time(wb);
    assert_bits(&ta, &tb, 1);
    int32_t n = dvi_world_body_count(wa);
    assert_int_equal(n, dvi_world_body_count(wb));
    for (int32_t i = 0; i < n; i++) {
        dvi_body_id ia, ib;
        assert_int_equal(dvi_world_body_at(wa, i, &ia), DVI_OK);
        assert_int_equal(dvi_world_body_at(wb, i, &ib), DVI_OK);
        double va[19], vb[19];
        test_body_state(wa, ia, va);
        test_body_state(wb, ib, vb);
        assert_bits(va, vb, 19);
    }
    int32_t nc = dvi_world_contact_count(wa);
    assert_int_equal(nc, dvi_world_contact_count(wb));
    for (int32_t c = 0; c < nc; c++) {
        dvi_contact_info ca, cb;
        assert_int_equal(dvi_world_get_contact(wa, c, &ca), DVI_OK);
        assert_int_equal(dvi_world_get_contact(wb, c, &cb), DVI_OK);
        assert_int_equal(ca.body_a.index1, cb.body_a.index1);
        assert_int_equal(ca.body_b.index1, cb.body_b.index1);
        assert_bits(ca.point, cb.point, 3);
        assert_bits(ca.normal, cb.normal, 3);
        assert_bits(&ca.distance, &cb.distance, 1);
        assert_bits(ca.force, cb.force, 3);
    }
    for (int k = 0; k < nj; k++) {
        double ra[6], rb[6];
        assert_int_equal(dvi_joint_get_reaction(wa, ja[k], ra, ra + 3), DVI_OK);
        assert_int_equal(dvi_joint_get_reaction(wb, jb[k], rb, rb + 3), DVI_OK);
        assert_bits(ra, rb, 6);
    }
    dvi_step_stats sa = dvi_world_get_stats(wa), sb = dvi_world_get_stats(wb);
    assert_int_equal(sa.bodies, sb.bodies);
    assert_int_equal(sa.contacts, sb.contacts);
    assert_int_equal(sa.joint_rows, sb.joint_rows);
    assert_int_equal(sa.rows, sb.rows);
    assert_int_equal(sa.iterations, sb.iterations);
    assert_int_equal(sa.solver_status, sb.solver_status);
    assert_bits(&sa.residual, &sb.residual, 1);
    assert_bits(&sa.max_penetration, &sb.max_penetration, 1);
    assert_bits(&sa.max_joint_violation, &sb.max_joint_violation, 1);
    assert_bits(&sa.max_overlap, &sb.max_overlap, 1);
    assert_int_equal(sa.contact_history, sb.contact_history);
    assert_bits(&sa.kinetic_energy, &sb.kinetic_energy, 1);
}

static void assert_same(const scene* a, const scene* b)
{
    const dvi_joint_id ja[2] = {a->hinge, a->ball}, jb[2] = {b->hinge, b->ball};
    assert_same_world(a->w, b->w, ja, jb, 2);
}

static void save(const scene* s, void** data, size_t* size)
{
    assert_int_equal(dvi_world_save_state(s->w, data, size), DVI_OK);
    assert_non_null(*data);
    assert_true(*size > 64);
}

static void test_resume_bit_identical(void** state)
{
    (void)state;
    /* the straight run */
    scene a;
    build_scene(&a, V_SAME);
    run(&a, 0, 300);
    void* blob_a300;
    size_t size_a300;
    save(&a, &blob_a300, &size_a300);

    /* a run saved half way, with contacts and warm-start history */
    scene b;
    build_scene(&b, V_SAME);
    run(&b, 0, 150);
    assert_true(dvi_world_contact_count(b.w) >= 8);
    assert_true(dvi_world_get_stats(b.w).rows > 30);
    void* blob;
    size_t size;
    save(&b, &blob, &size);

    /* a fresh world: equal right after loading, then step for step */
    scene c;
    build_scene(&c, V_SAME);
    assert_int_equal(dvi_world_load_state(c.w, blob, size), DVI_OK);
    assert_same(&b, &c);
    for (int k = 151; k <= 300; k++) {
        run(&b, k - 1, k);
        run(&c, k - 1, k);
        assert_same(&b, &c);
    }
    assert_same(&a, &c);

    /* the blobs of the straight and resumed runs agree byte for byte (the
     * wall-clock timings of the stats are stored as 0) */
    void* blob_c300;
    size_t size_c300;
    save(&c, &blob_c300, &size_c300);
    assert_int_equal(size_c300, size_a300);
    assert_memory_equal(blob_a300, blob_c300, size_a300);

    /* a world that has stepped on its own (other motor target) first */
    scene d;
    build_scene(&d, V_SAME);
    assert_int_equal(dvi_joint_set_motor(d.w, d.hinge, 5.0, 0.0), DVI_OK);
    run(&d, 0, 37);
    assert_int_equal(dvi_world_load_state(d.w, blob, size), DVI_OK);
    run(&d, 150, 300);
    assert_same(&a, &d);

    /* loading the same blob twice is harmless; so is reloading the world's own state */
    assert_int_equal(dvi_world_load_state(d.w, blob_a300, size_a300), DVI_OK);
    assert_int_equal(dvi_world_load_state(d.w, blob_a300, size_a300), DVI_OK);
    assert_same(&a, &d);
    run(&a, 300, 310);
    run(&d, 300, 310);
    assert_same(&a, &d);

    free(blob);
    free(blob_a300);
    free(blob_c300);
    dvi_world_destroy(a.w);
    dvi_world_destroy(b.w);
    dvi_world_destroy(c.w);
    dvi_world_destroy(d.w);
}

/* A world saved before its first step restores to "never stepped". */
static void test_state_before_first_step(void** state)
{
    (void)state;
    scene a, b;
    build_scene(&a, V_SAME);
    build_scene(&b, V_SAME);
    void* blob;
    size_t size;
    save(&a, &blob, &size);
    run(&b, 0, 20);
    assert_int_equal(dvi_world_load_state(b.w, blob, size), DVI_OK);
    assert_int_equal(dvi_world_contact_count(b.w), 0);
    assert_true(dvi_world_time(b.w) == 0.0);
    /* the motor target set by the 20 steps' events is not touched (< 100) */
    run(&a, 0, 120);
    run(&b, 0, 120);
    assert_same(&a, &b);
    free(blob);
    dvi_world_destroy(a.w);
    dvi_world_destroy(b.w);
}

static void assert_refused(scene* target, const void* blob, size_t size, dvi_status want, const char* text)
{
    void* before;
    size_t before_size;
    save(target, &before, &before_size);
    dvi_status st = dvi_world_load_state(target->w, blob, size);
    if (st != want || (text && !strstr(dvi_world_last_error(target->w), text)))
        print_error("load: status %d, message \"%s\"; expected %d and \"%s\"\n", (int)st,
                    dvi_world_last_error(target->w), (int)want, text ? text : "");
    assert_int_equal(st, want);
    if (text) assert_non_null(strstr(dvi_world_last_error(target->w), text));
    void* after;
    size_t after_size;
    save(target, &after, &after_size);
    assert_int_equal(before_size, after_size);
    assert_memory_equal(before, after, before_size); /* unchanged */
    free(before);
    free(after);
}

static void test_refuses_other_structure(void** state)
{
    (void)state;
    scene a;
    build_scene(&a, V_SAME);
    run(&a, 0, 120);
    void* blob;
    size_t size;
    save(&a, &blob, &size);
    static const struct {
        int variant;
        const char* text;
    } cases[] = {
        {V_EXTRA_SPHERE, "structure differs from this world (bodies 12 in the state vs 13 here)"},
        {V_MASS, "bodies[2]: type, mass"},
        {V_RADIUS, "shapes[6]"},
        {V_GRAVITY, "world settings"},
        {V_ANCHOR, "joints[0]"},
        {V_MATERIAL, "shapes[1]"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        scene o;
        build_scene(&o, cases[k].variant);
        run(&o, 0, 10);
        assert_refused(&o, blob, size, DVI_ERR_INVALID_ARG, cases[k].text);
        dvi_world_destroy(o.w);
    }
    /* an empty world */
    scene e;
    memset(&e, 0, sizeof e);
    assert_int_equal(dvi_world_create(NULL, &e.w), DVI_OK);
    assert_refused(&e, blob, size, DVI_ERR_INVALID_ARG, "bodies 12 in the state vs 0 here");
    dvi_world_destroy(e.w);
    /* bad arguments */
    assert_int_equal(dvi_world_load_state(NULL, blob, size), DVI_ERR_INVALID_ARG);
    assert_int_equal(dvi_world_load_state(a.w, NULL, size), DVI_ERR_INVALID_ARG);
    assert_int_equal(dvi_world_load_state(a.w, blob, 0), DVI_ERR_INVALID_ARG);
    void* d;
    size_t n;
    assert_int_equal(dvi_world_save_state(NULL, &d, &n), DVI_ERR_INVALID_ARG);
    assert_int_equal(dvi_world_save_state(a.w, NULL, &n), DVI_ERR_INVALID_ARG);
    assert_int_equal(dvi_world_save_state(a.w, &d, NULL), DVI_ERR_INVALID_ARG);
    free(blob);
    dvi_world_destroy(a.w);
}

/* A small world: a box on the ground, a sphere on a distance joint. */
static dvi_world* small_world(void)
{
    dvi_world* w;
    assert_int_equal(dvi_world_create(NULL, &w), DVI_OK);
    dvi_body_id g = add_body(w, DVI_BODY_FIXED, 1, 1, 0, 0, 0);
    dvi_shape_def sd = dvi_default_shape_def();
    sd.type = DVI_SHAPE_PLANE;
    test_add_shape(w, g, &sd);
    dvi_body_id box = add_body(w, DVI_BODY_DYNAMIC, 1, 0.01, 0, 0, 0.1);
    sd = dvi_default_shape_def();
    sd.type = DVI_SHAPE_BOX;
    sd.half_extents[0] = sd.half_extents[1] = sd.half_extents[2] = 0.1;
    test_add_shape(w, box, &sd);
    dvi_body_id ball = add_body(w, DVI_BODY_DYNAMIC, 0.2, 0.001, 0.3, 0, 0.5);
    sd = dvi_default_shape_def();
    sd.radius = 0.05;
    test_add_shape(w, ball, &sd);
    dvi_joint_def jd = dvi_default_joint_def();
    jd.type = DVI_JOINT_DISTANCE;
    jd.body_a = box;
    jd.body_b = ball;
    jd.anchor[2] = 0.2;
    jd.anchor_b[0] = 0.3;
    jd.anchor_b[2] = 0.5;
    dvi_joint_id j;
    assert_int_equal(dvi_joint_create(w, &jd, &j), DVI_OK);
    for (int k = 0; k < 60; k++) assert_true(dvi_world_step(w, H) >= 0);
    assert_true(dvi_world_contact_count(w) >= 4);
    return w;
}

static uint64_t fnv(uint64_t h, const unsigned char* p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

/* Recomputes the checksum of a blob (header bytes 0..55 and the payload). */
static void reseal(unsigned char* b, size_t size)
{
    uint64_t h = fnv(fnv(0xcbf29ce484222325ull, b, 56), b + 64, size - 64);
    for (int k = 0; k < 8; k++) b[56 + k] = (unsigned char)(h >> (8 * k));
}

static void test_corrupted_blobs(void** state)
{
    (void)state;
    dvi_world* w = small_world();
    scene t;
    memset(&t, 0, sizeof t);
    t.w = w;
    void* blob;
    size_t size;
    save(&t, &blob, &size);
    void* before;
    size_t before_size;
    save(&t, &before, &before_size);
    unsigned char* bad = malloc(size);
    assert_non_null(bad);
    /* every single flipped byte, two patterns */
    for (size_t i = 0; i < size; i++) {
        for (int pat = 0; pat < 2; pat++) {
            memcpy(bad, blob, size);
            bad[i] ^= pat ? 0x01 : 0xA5;
            dvi_status st = dvi_world_load_state(w, bad, size);
            if (st >= 0) print_error("flipped byte %zu (of %zu) accepted\n", i, size);
            assert_true(st < 0);
        }
    }
    /* every truncation */
    for (size_t n = 0; n < size; n++) {
        memcpy(bad, blob, n);
        assert_true(dvi_world_load_state(w, n ? bad : blob, n) < 0);
    }
    assert_non_null(strstr(dvi_world_last_error(w), "truncated"));
    /* trailing bytes */
    unsigned char* longer = malloc(size + 1);
    memcpy(longer, blob, size);
    longer[size] = 0;
    assert_true(dvi_world_load_state(w, longer, size + 1) < 0);
    free(longer);
    /* specific messages */
    memcpy(bad, blob, size);
    bad[0] = 'X';
    assert_int_equal(dvi_world_load_state(w, bad, size), DVI_ERR_PARSE);
    assert_non_null(strstr(dvi_world_last_error(w), "not a world state"));
    memcpy(bad, blob, size);
    bad[8] = 1; /* the format before the DEM section */
    assert_int_equal(dvi_world_load_state(w, bad, size), DVI_ERR_PARSE);
    assert_non_null(strstr(dvi_world_last_error(w), "version 1 not supported"));
    bad[8] = 4;
    assert_int_equal(dvi_world_load_state(w, bad, size), DVI_ERR_PARSE);
    assert_non_null(strstr(dvi_world_last_error(w), "version 4 not supported"));
    /* version 2 (no force elements' section: the last 4 bytes, a count of
     * 0) is still read by a world without force elements */
    memcpy(bad, blob, size);
    assert_int_equal(bad[size - 4] | bad[size - 3] | bad[size - 2] | bad[size - 1], 0);
    bad[8] = 2;
    uint64_t payload2 = (uint64_t)(size - 4 - 64);
    for (int k = 0; k < 8; k++) bad[24 + k] = (unsigned char)(payload2 >> (8 * k));
    reseal(bad, size - 4);
    assert_int_equal(dvi_world_load_state(w, bad, size - 4), DVI_OK);
    memcpy(bad, blob, size);
    bad[size - 1] ^= 0x10;
    assert_int_equal(dvi_world_load_state(w, bad, size), DVI_ERR_PARSE);
    assert_non_null(strstr(dvi_world_last_error(w), "checksum"));

    /* forged contents with a valid checksum: indices are still checked */
    size_t nobj = 3 + 3 + 1;
    size_t contacts_at = 64 + 8 * (1 + nobj) + 8 + STATS_BYTES + 3 * 200 + 1 * 460 + DEM_HEAD_BYTES;
    assert_true(contacts_at + 8 < size);
    memcpy(bad, blob, size);
    assert_true(bad[contacts_at] > 0 || bad[contacts_at + 1] > 0); /* contacts present */
    bad[contacts_at + 4] = 77; /* contacts[0].body_a */
    reseal(bad, size);
    assert_int_equal(dvi_world_load_state(w, bad, size), DVI_ERR_PARSE);
    assert_non_null(strstr(dvi_world_last_error(w), "contacts[0].body_a out of range"));
    memcpy(bad, blob, size);
    bad[size - 12] = 0xFF; /* last slot's shape_a → −1 with junk: not a clean empty slot, or a bad index */
    bad[size - 11] = 0xFF;
    bad[size - 10] = 0xFF;
    bad[size - 9] = 0x7F;
    reseal(bad, size);
    assert_int_equal(dvi_world_load_state(w, bad, size), DVI_ERR_PARSE);
    assert_non_null(strstr(dvi_world_last_error(w), "damaged"));
    /* a joint row count beyond the maximum */
    size_t joint_at = 64 + 8 * (1 + nobj) + 8 + STATS_BYTES + 3 * 200;
    memcpy(bad, blob, size);
    bad[joint_at + 16] = 8;
    reseal(bad, size);
    assert_int_equal(dvi_world_load_state(w, bad, size), DVI_ERR_PARSE);
    assert_non_null(strstr(dvi_world_last_error(w), "joints[0].nrows"));

    /* the world is unchanged and the genuine blob still loads */
    void* after;
    size_t after_size;
    save(&t, &after, &after_size);
    assert_int_equal(before_size, after_size);
    assert_memory_equal(before, after, before_size);
    assert_int_equal(dvi_world_load_state(w, blob, size), DVI_OK);

    /* the large scene: 1000 sampled positions */
    scene a;
    build_scene(&a, V_SAME);
    run(&a, 0, 150);
    void* big;
    size_t big_size;
    save(&a, &big, &big_size);
    unsigned char* bb = malloc(big_size);
    assert_non_null(bb);
    uint64_t seed = 42;
    for (int k = 0; k < 1000; k++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        size_t i = (size_t)(seed >> 33) % big_size;
        memcpy(bb, big, big_size);
        bb[i] ^= (unsigned char)(1u << (k % 8));
        assert_true(dvi_world_load_state(a.w, bb, big_size) < 0);
    }
    assert_int_equal(dvi_world_load_state(a.w, big, big_size), DVI_OK);

    free(bb);
    free(big);
    free(bad);
    free(blob);
    free(before);
    free(after);
    dvi_world_destroy(a.w);
    dvi_world_destroy(w);
}

/* ---- DEM mode ------------------------------------------------------------------------- */

/* A DEM world: spheres dropping onto a plane, one sliding and one bouncing,
 * two spheres in contact with each other, a tilted box landing on its
 * corners, and a pendulum whose bob scrapes the ground (a revolute joint,
 * solved directly). Tangential springs, rolling springs and history entries
 * that appear and disappear between the save and the end. */
typedef struct dem_scene {
    dvi_world* w;
    dvi_body_id spheres[5], box, bob;
    dvi_joint_id hinge;
} dem_scene;

enum { DV_SAME = 0, DV_DVI, DV_HOOKE, DV_YOUNG, DV_KN, DV_ROLLING_DAMPING, DV_SAMPLE };

#define DEM_H 1e-4

static dvi_material dem_material(double mu, double mu_roll, double e)
{
    dvi_material m = dvi_default_shape_def().material;
    m.young_modulus = 1e7;
    m.poisson_ratio = 0.3;
    m.friction = mu;
    m.rolling_friction = mu_roll;
    m.restitution = e;
    return m;
}

static dvi_shape_id add_shape_id(dvi_world* w, dvi_body_id b, const dvi_shape_def* sd)
{
    dvi_shape_id s;
    assert_int_equal(dvi_shape_create(w, b, sd, &s), DVI_OK);
    return s;
}

static void build_dem_scene(dem_scene* s, dvi_dem_normal_model model, int variant)
{
    memset(s, 0, sizeof *s);
    dvi_world_def wd = dvi_default_world_def();
    wd.method = variant == DV_DVI ? DVI_METHOD_DVI : DVI_METHOD_DEM;
    wd.dem.normal_model = variant == DV_HOOKE ? DVI_DEM_HOOKE : model;
    if (variant == DV_ROLLING_DAMPING) wd.dem.rolling_damping = 0.31;
    assert_int_equal(dvi_world_create(&wd, &s->w), DVI_OK);
    dvi_world* w = s->w;
    dvi_body_id ground = add_body(w, DVI_BODY_FIXED, 1, 1, 0, 0, 0);
    dvi_shape_def sd = dvi_default_shape_def();
    sd.type = DVI_SHAPE_PLANE;
    sd.material = dem_material(0.5, 0.01, 0.3);
    test_add_shape(w, ground, &sd);

    const double r = 0.05, m = 0.5, I = 0.4 * m * r * r;
    /* x, z, vx; [3] and [4] touch each other */
    static const double P[5][3] = {{0.0, 0.051, 0.0}, {0.3, 0.049, 1.0}, {0.6, 0.07, 0.0}, {0.9, 0.0495, 0.0},
                                   {0.999, 0.0495, -0.2}};
    for (int k = 0; k < 5; k++) {
        s->spheres[k] = add_body(w, DVI_BODY_DYNAMIC, m, I, P[k][0], 0.0, P[k][1]);
        double v[3] = {P[k][2], 0.0, 0.0};
        assert_int_equal(dvi_body_set_velocity(w, s->spheres[k], v, NULL), DVI_OK);
        sd = dvi_default_shape_def();
        sd.radius = r;
        sd.material = dem_material(0.4, k == 1 || k == 3 ? 0.01 : 0.0, k == 2 ? 0.7 : 0.3);
        if (variant == DV_YOUNG && k == 2) sd.material.young_modulus = 2e7;
        if (variant == DV_KN && k == 4) sd.material.k_n = 1e5;
        test_add_shape(w, s->spheres[k], &sd);
    }
    /* a box tilted about x and y, corners first */
    dvi_body_def bd = dvi_default_body_def();
    bd.mass = 1.0;
    bd.inertia[0] = bd.inertia[4] = bd.inertia[8] = 1.0 * 0.02 / 3.0;
    bd.position[0] = -0.5;
    bd.position[2] = 0.14;
    bd.orientation[0] = 0.99;
    bd.orientation[1] = 0.1;
    bd.orientation[2] = 0.0995;
    double qn = sqrt(0.99 * 0.99 + 0.1 * 0.1 + 0.0995 * 0.0995);
    for (int k = 0; k < 3; k++) bd.orientation[k] /= qn;
    assert_int_equal(dvi_body_create(w, &bd, &s->box), DVI_OK);
    sd = dvi_default_shape_def();
    sd.type = DVI_SHAPE_BOX;
    sd.half_extents[0] = sd.half_extents[1] = sd.half_extents[2] = 0.1;
    sd.material = dem_material(0.6, 0.0, 0.2);
    test_add_shape(w, s->box, &sd);
    /* a pendulum about y through (0, 1, 0.3), arm 0.2498 m: at the bottom the
     * bob (r = 0.05) overlaps the ground by 0.2 mm; it starts there at 0.8 m/s */
    const double L = 0.2498, v0 = 0.8;
    s->bob = add_body(w, DVI_BODY_DYNAMIC, m, I, 0.0, 1.0, 0.3 - L);
    double v[3] = {v0, 0.0, 0.0}, om[3] = {0.0, -v0 / L, 0.0};
    assert_int_equal(dvi_body_set_velocity(w, s->bob, v, om), DVI_OK);
    sd = dvi_default_shape_def();
    sd.radius = r;
    sd.material = dem_material(0.5, 0.0, 0.3);
    dvi_shape_id bob_shape = add_shape_id(w, s->bob, &sd);
    if (variant == DV_SAMPLE) { /* samples only count as structure */
        double smp[4] = {0.0, 0.0, -r, 1e-4};
        assert_int_equal(dvi_shape_set_dem_samples(w, bob_shape, 1, smp), DVI_OK);
    }
    dvi_joint_def jd = dvi_default_joint_def();
    jd.type = DVI_JOINT_REVOLUTE;
    jd.body_b = s->bob;
    jd.anchor[1] = 1.0;
    jd.anchor[2] = 0.3;
    jd.axis[1] = 1.0;
    jd.axis[2] = 0.0;
    assert_int_equal(dvi_joint_create(w, &jd, &s->hinge), DVI_OK);
}

static void run_world(dvi_world* w, int steps)
{
    for (int k = 0; k < steps; k++) {
        dvi_status st = dvi_world_step(w, DEM_H);
        if (st < 0) print_error("step %d: %s\n", k, dvi_world_last_error(w));
        assert_true(st >= 0);
    }
}

static void save_world(dvi_world* w, void** data, size_t* size)
{
    assert_int_equal(dvi_world_save_state(w, data, size), DVI_OK);
    assert_non_null(*data);
}

static uint32_t blob_u32(const unsigned char* b, size_t at)
{
    uint32_t v = 0;
    for (int k = 0; k < 4; k++) v |= (uint32_t)b[at + (size_t)k] << (8 * k);
    return v;
}

static void blob_put_u32(unsigned char* b, size_t at, uint32_t v)
{
    for (int k = 0; k < 4; k++) b[at + (size_t)k] = (unsigned char)(v >> (8 * k));
}

/* Offset of the DEM section (u64 step count, u32 entry count, entries). */
static size_t dem_section_at(dvi_world* w, int32_t shapes, int32_t joints)
{
    size_t nb = (size_t)dvi_world_body_count(w), nobj = nb + (size_t)shapes + (size_t)joints;
    return 64 + 8 * (1 + nobj) + 8 + STATS_BYTES + nb * BODY_BYTES + (size_t)joints * JOINT_BYTES;
}

/* Save after `half` steps, load into a fresh world and into one that has
 * stepped on its own, continue step for step: bit-identical to the straight
 * run, and the final blobs agree byte for byte. The entries of the history,
 * stored in reversed order, load into another table layout and still give
 * the same steps. */
static void dem_resume_case(dvi_dem_normal_model model)
{
    const int half = 1200, total = 2400;
    const char* name = model == DVI_DEM_HERTZ ? "Hertz" : "Hooke";
    dem_scene a, b, c, d, e;
    build_dem_scene(&a, model, DV_SAME);
    run_world(a.w, total);
    void *blob_a, *blob_b, *blob_c;
    size_t size_a, size_b, size_c;
    save_world(a.w, &blob_a, &size_a);

    build_dem_scene(&b, model, DV_SAME);
    run_world(b.w, half);
    dvi_step_stats sb = dvi_world_get_stats(b.w);
    print_message("DEM %s, saved after %d steps: %d contacts, %d history entries, max overlap %.3g m, kinetic "
                  "energy %.4g J, %d joint rows\n",
                  name, half, sb.contacts, sb.contact_history, sb.max_overlap, sb.kinetic_energy, sb.joint_rows);
    assert_true(sb.contacts >= 5);
    assert_true(sb.contact_history >= 5);
    assert_true(sb.max_overlap > 0.0 && sb.kinetic_energy > 0.0);
    assert_int_equal(sb.joint_rows, 5);
    save_world(b.w, &blob_b, &size_b);

    build_dem_scene(&c, model, DV_SAME);
    assert_int_equal(dvi_world_load_state(c.w, blob_b, size_b), DVI_OK);
    assert_same_world(b.w, c.w, &b.hinge, &c.hinge, 1);
    int changes = 0, prev = sb.contact_history;
    for (int k = half; k < total; k++) {
        run_world(b.w, 1);
        run_world(c.w, 1);
        assert_same_world(b.w, c.w, &b.hinge, &c.hinge, 1);
        int hc = dvi_world_get_stats(c.w).contact_history;
        changes += hc != prev;
        prev = hc;
    }
    assert_same_world(a.w, c.w, &a.hinge, &c.hinge, 1);
    save_world(c.w, &blob_c, &size_c);
    assert_int_equal(size_c, size_a);
    assert_memory_equal(blob_a, blob_c, size_a);
    print_message("DEM %s: resumed run bit-identical over %d steps (the history size changed %d times); final "
                  "blobs equal (%zu bytes)\n",
                  name, total - half, changes, size_a);
    assert_true(changes > 0);

    /* a world that stepped on its own first (other history, table grown) */
    build_dem_scene(&d, model, DV_SAME);
    double push[3] = {0.0, 2.0, 0.0};
    assert_int_equal(dvi_body_set_velocity(d.w, d.spheres[0], push, NULL), DVI_OK);
    run_world(d.w, 500);
    assert_int_equal(dvi_world_load_state(d.w, blob_b, size_b), DVI_OK);
    run_world(d.w, total - half);
    assert_same_world(a.w, d.w, &a.hinge, &d.hinge, 1);

    /* the entries in reversed order: the same steps */
    unsigned char* rev = malloc(size_b);
    assert_non_null(rev);
    memcpy(rev, blob_b, size_b);
    size_t at = dem_section_at(b.w, 8, 1);
    uint32_t nh = blob_u32(rev, at + 8);
    assert_int_equal(nh, (uint32_t)sb.contact_history);
    const unsigned char* src = (const unsigned char*)blob_b + at + DEM_HEAD_BYTES;
    for (uint32_t k = 0; k < nh; k++)
        memcpy(rev + at + DEM_HEAD_BYTES + (size_t)k * DEM_ENTRY_BYTES, src + (size_t)(nh - 1 - k) * DEM_ENTRY_BYTES,
               DEM_ENTRY_BYTES);
    assert_true(memcmp(rev, blob_b, size_b) != 0);
    reseal(rev, size_b);
    build_dem_scene(&e, model, DV_SAME);
    assert_int_equal(dvi_world_load_state(e.w, rev, size_b), DVI_OK);
    run_world(e.w, total - half);
    assert_same_world(a.w, e.w, &a.hinge, &e.hinge, 1);

    free(rev);
    free(blob_a);
    free(blob_b);
    free(blob_c);
    dvi_world_destroy(a.w);
    dvi_world_destroy(b.w);
    dvi_world_destroy(c.w);
    dvi_world_destroy(d.w);
    dvi_world_destroy(e.w);
}

static void test_dem_resume_bit_identical(void** state)
{
    (void)state;
    dem_resume_case(DVI_DEM_HERTZ);
    dem_resume_case(DVI_DEM_HOOKE);
}

/* The hysteretic height-field model: a plate with 5 × 5 sample points and a
 * sphere (ordinary penalty contact) land on a bumpy field and slide. The
 * plate is created first, so the terrain records name the height field as
 * shape_a with a larger index than shape_b. */
typedef struct terrain_scene {
    dvi_world* w;
    dvi_body_id plate, ball;
} terrain_scene;

enum { TNX = 21 };

static void build_terrain_scene(terrain_scene* s, int variant)
{
    memset(s, 0, sizeof *s);
    dvi_world_def wd = dvi_default_world_def();
    wd.method = DVI_METHOD_DEM;
    assert_int_equal(dvi_world_create(&wd, &s->w), DVI_OK);
    dvi_world* w = s->w;
    const double a = 0.2, hz = 0.02, m = 2.0;
    s->plate = add_body(w, DVI_BODY_DYNAMIC, m, m * (4 * a * a + 4 * hz * hz) / 12, 0.6, 1.0, 0.035);
    double v[3] = {1.0, 0.3, 0.0};
    assert_int_equal(dvi_body_set_velocity(w, s->plate, v, NULL), DVI_OK);
    dvi_shape_def sd = dvi_default_shape_def();
    sd.type = DVI_SHAPE_BOX;
    sd.half_extents[0] = sd.half_extents[1] = a;
    sd.half_extents[2] = hz;
    sd.material.friction = 0.5;
    dvi_shape_id ps = add_shape_id(w, s->plate, &sd);
    double samples[25 * 4];
    for (int i = 0; i < 5; i++)
        for (int j = 0; j < 5; j++) {
            double* p = samples + 4 * (5 * i + j);
            p[0] = -a + (i + 0.5) * (2 * a / 5);
            p[1] = -a + (j + 0.5) * (2 * a / 5);
            p[2] = -hz;
            p[3] = (2 * a) * (2 * a) / 25;
        }
    if (variant == DV_SAMPLE) samples[4 * 7 + 2] -= 1e-3;
    assert_int_equal(dvi_shape_set_dem_samples(w, ps, 25, samples), DVI_OK);
    s->ball = add_body(w, DVI_BODY_DYNAMIC, 0.5, 0.4 * 0.5 * 0.05 * 0.05, 1.4, 0.6, 0.07);
    v[0] = -0.5;
    v[1] = 0.0;
    assert_int_equal(dvi_body_set_velocity(w, s->ball, v, NULL), DVI_OK);
    sd = dvi_default_shape_def();
    sd.radius = 0.05;
    sd.material.friction = 0.5;
    sd.material.rolling_friction = 0.005;
    test_add_shape(w, s->ball, &sd);
    static double heights[TNX * TNX];
    for (int j = 0; j < TNX; j++)
        for (int i = 0; i < TNX; i++) heights[j * TNX + i] = 0.01 * sin(0.7 * i) * cos(0.5 * j);
    dvi_body_id ground = add_body(w, DVI_BODY_FIXED, 1, 1, 0, 0, 0);
    sd = dvi_default_shape_def();
    sd.type = DVI_SHAPE_HEIGHTFIELD;
    sd.nx = sd.ny = TNX;
    sd.dx = sd.dy = 0.1;
    sd.heights = heights;
    sd.material.friction = 0.6;
    sd.material.terrain_stiffness = 1e6;
    sd.material.terrain_hysteresis = variant == DV_YOUNG ? 0.25 : 0.3;
    test_add_shape(w, ground, &sd);
}

static void test_dem_terrain_resume(void** state)
{
    (void)state;
    const int half = 1500, total = 3000;
    terrain_scene a, b, c;
    build_terrain_scene(&a, DV_SAME);
    run_world(a.w, total);
    build_terrain_scene(&b, DV_SAME);
    run_world(b.w, half);
    dvi_step_stats sb = dvi_world_get_stats(b.w);
    int samples = 0, terrain_first = 0;
    for (int32_t k = 0; k < dvi_world_contact_count(b.w); k++) {
        dvi_contact_info ci;
        assert_int_equal(dvi_world_get_contact(b.w, k, &ci), DVI_OK);
        if (ci.body_b.index1 == b.plate.index1) {
            samples++;
            terrain_first += ci.body_a.index1 == 3; /* the field's body, created last */
        }
    }
    print_message("terrain: saved after %d steps: %d contacts (%d plate samples), %d history entries, max overlap "
                  "%.3g m\n",
                  half, sb.contacts, samples, sb.contact_history, sb.max_overlap);
    assert_true(samples >= 3 && terrain_first == samples);
    assert_true(sb.contact_history >= 1 && sb.contact_history < sb.contacts);
    void *blob, *end_a, *end_c;
    size_t size, size_a, size_c;
    save_world(b.w, &blob, &size);
    build_terrain_scene(&c, DV_SAME);
    assert_int_equal(dvi_world_load_state(c.w, blob, size), DVI_OK);
    for (int k = half; k < total; k++) {
        run_world(b.w, 1);
        run_world(c.w, 1);
        assert_same_world(b.w, c.w, NULL, NULL, 0);
    }
    assert_same_world(a.w, c.w, NULL, NULL, 0);
    save_world(a.w, &end_a, &size_a);
    save_world(c.w, &end_c, &size_c);
    assert_int_equal(size_a, size_c);
    assert_memory_equal(end_a, end_c, size_a);
    double x[3];
    dvi_body_get_position(c.w, c.plate, x);
    print_message("terrain: resumed run bit-identical over %d steps; plate at (%.4f, %.4f, %.4f) m\n", total - half,
                  x[0], x[1], x[2]);

    /* other samples or another terrain material: refused, the world unchanged */
    static const struct {
        int variant;
        const char* text;
    } cases[] = {{DV_SAMPLE, "shapes[0]: body, type, size, offset, material, data or DEM samples"},
                 {DV_YOUNG, "shapes[2]"}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        terrain_scene o;
        build_terrain_scene(&o, cases[k].variant);
        scene t;
        memset(&t, 0, sizeof t);
        t.w = o.w;
        assert_refused(&t, blob, size, DVI_ERR_INVALID_ARG, cases[k].text);
        dvi_world_destroy(o.w);
    }
    free(blob);
    free(end_a);
    free(end_c);
    dvi_world_destroy(a.w);
    dvi_world_destroy(b.w);
    dvi_world_destroy(c.w);
}

/* A DEM blob is refused by a world of another method, normal model, DEM
 * setting, DEM material or DEM samples; forged DEM contents are refused. */
static void test_dem_refusals(void** state)
{
    (void)state;
    dem_scene a;
    build_dem_scene(&a, DVI_DEM_HERTZ, DV_SAME);
    run_world(a.w, 800);
    void* blob;
    size_t size;
    save_world(a.w, &blob, &size);
    static const struct {
        int variant;
        const char* text;
    } cases[] = {
        {DV_DVI, "world settings: gravity, collision envelope, recovery speeds, bounce threshold, method or DEM settings"},
        {DV_HOOKE, "method or DEM settings"},
        {DV_ROLLING_DAMPING, "method or DEM settings"},
        {DV_YOUNG, "shapes[3]: body, type, size, offset, material"},
        {DV_KN, "shapes[5]"},
        {DV_SAMPLE, "shapes[7]"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        dem_scene o;
        build_dem_scene(&o, DVI_DEM_HERTZ, cases[k].variant);
        run_world(o.w, 10);
        scene t;
        memset(&t, 0, sizeof t);
        t.w = o.w;
        assert_refused(&t, blob, size, DVI_ERR_INVALID_ARG, cases[k].text);
        dvi_world_destroy(o.w);
    }
    /* and a DVI blob of the same bodies by the DEM world */
    dem_scene v;
    build_dem_scene(&v, DVI_DEM_HERTZ, DV_DVI);
    for (int k = 0; k < 20; k++) assert_true(dvi_world_step(v.w, 1e-3) >= 0);
    void* dvi_blob;
    size_t dvi_size;
    save_world(v.w, &dvi_blob, &dvi_size);
    scene t;
    memset(&t, 0, sizeof t);
    t.w = a.w;
    assert_refused(&t, dvi_blob, dvi_size, DVI_ERR_INVALID_ARG, "method or DEM settings");
    free(dvi_blob);
    dvi_world_destroy(v.w);

    /* forged contents with a valid checksum */
    unsigned char* bad = malloc(size);
    assert_non_null(bad);
    size_t at = dem_section_at(a.w, 8, 1);
    uint32_t nh = blob_u32(blob, at + 8);
    assert_true(nh >= 2);
    size_t e0 = at + DEM_HEAD_BYTES, e1 = e0 + DEM_ENTRY_BYTES;
    memcpy(bad, blob, size);
    blob_put_u32(bad, e0, 8); /* shape_a: there are 8 shapes */
    reseal(bad, size);
    assert_refused(&t, bad, size, DVI_ERR_PARSE, "dem_history[0].shape_a out of range");
    memcpy(bad, blob, size);
    memcpy(bad + e1 + 4, bad + e0 + 4, 4); /* shape_b of entry 0: the same shape twice, or another pair */
    blob_put_u32(bad, e1 + 4, blob_u32(bad, e1)); /* shape_b = shape_a */
    reseal(bad, size);
    assert_refused(&t, bad, size, DVI_ERR_PARSE, "dem_history[1].shape_b out of range");
    memcpy(bad, blob, size);
    memcpy(bad + e1, bad + e0, 12); /* entry 1 gets entry 0's key */
    reseal(bad, size);
    assert_refused(&t, bad, size, DVI_ERR_PARSE, "dem_history[1]: duplicate key");
    memcpy(bad, blob, size);
    blob_put_u32(bad, at + 8, 0x7FFFFFFF);
    reseal(bad, size);
    assert_refused(&t, bad, size, DVI_ERR_PARSE, "DEM history count does not fit the payload");
    /* a DEM contact record posing as a DVI one */
    size_t contacts_at = at + DEM_HEAD_BYTES + (size_t)nh * DEM_ENTRY_BYTES;
    assert_true(blob_u32(blob, contacts_at) > 0);
    memcpy(bad, blob, size);
    blob_put_u32(bad, contacts_at + 4 + 128, 3); /* contacts[0].nrows */
    reseal(bad, size);
    assert_refused(&t, bad, size, DVI_ERR_PARSE, "contacts[0].nrows out of range");
    memcpy(bad, blob, size);
    blob_put_u32(bad, contacts_at + 4 + 124, 0); /* contacts[0].row */
    reseal(bad, size);
    assert_refused(&t, bad, size, DVI_ERR_PARSE, "contacts[0].row out of range");
    /* every flipped byte of the small DEM blob */
    for (size_t i = 0; i < size; i += 3) {
        memcpy(bad, blob, size);
        bad[i] ^= 0x21;
        assert_true(dvi_world_load_state(a.w, bad, size) < 0);
    }
    /* the genuine blob still loads, and the method cannot change afterwards */
    assert_int_equal(dvi_world_load_state(a.w, blob, size), DVI_OK);
    assert_int_equal(dvi_world_set_method(a.w, DVI_METHOD_DVI, NULL), DVI_ERR_INVALID_ARG);
    free(bad);
    free(blob);
    dvi_world_destroy(a.w);
}

/* ---- enumeration -------------------------------------------------------------------- */

static void test_body_enumeration(void** state)
{
    (void)state;
    scene s;
    build_scene(&s, V_SAME);
    assert_int_equal(dvi_world_body_count(s.w), 12);
    dvi_body_id id;
    assert_int_equal(dvi_world_body_at(s.w, 0, &id), DVI_OK);
    assert_memory_equal(&id, &s.ground, sizeof id);
    assert_int_equal(dvi_world_body_at(s.w, 3, &id), DVI_OK);
    assert_memory_equal(&id, &s.spheres[0], sizeof id);
    assert_int_equal(dvi_world_body_at(s.w, 11, &id), DVI_OK);
    assert_memory_equal(&id, &s.bob, sizeof id);
    assert_int_equal(dvi_world_body_at(s.w, 12, &id), DVI_ERR_INVALID_ARG);
    assert_true(DVI_IS_NULL(id));
    assert_int_equal(dvi_world_body_at(s.w, -1, &id), DVI_ERR_INVALID_ARG);
    assert_int_equal(dvi_world_body_at(NULL, 0, &id), DVI_ERR_INVALID_ARG);
    assert_int_equal(dvi_world_body_count(NULL), 0);

    dvi_body_info info;
    assert_int_equal(dvi_body_get_info(s.w, s.ground, &info), DVI_OK);
    assert_int_equal(info.type, DVI_BODY_FIXED);
    assert_true(info.mass == 0.0);
    assert_int_equal(info.shape_count, 1);
    assert_int_equal(info.shape_type, DVI_SHAPE_PLANE);
    assert_true(info.bounding_radius == 0.0); /* planes excluded */
    assert_int_equal(dvi_body_get_info(s.w, s.boxes[0], &info), DVI_OK);
    assert_int_equal(info.type, DVI_BODY_DYNAMIC);
    assert_true(info.mass == 5.0);
    assert_int_equal(info.shape_type, DVI_SHAPE_BOX);
    assert_near(info.bounding_radius, sqrt(0.09 + 0.09 + 0.01), 1e-15);
    assert_int_equal(dvi_body_get_info(s.w, s.spheres[2], &info), DVI_OK);
    assert_near(info.bounding_radius, 0.08, 0.0);
    assert_int_equal(dvi_body_get_info(s.w, s.arm, &info), DVI_OK);
    assert_int_equal(info.shape_type, DVI_SHAPE_CAPSULE);
    assert_near(info.bounding_radius, 0.23, 1e-15);
    assert_int_equal(dvi_body_get_info(s.w, s.kinematic, &info), DVI_OK);
    assert_int_equal(info.type, DVI_BODY_KINEMATIC);
    assert_true(info.mass == 0.0);

    /* several shapes, offsets, a shapeless body */
    dvi_body_id multi = add_body(s.w, DVI_BODY_DYNAMIC, 2.0, 1.0, 5, 5, 5);
    assert_int_equal(dvi_body_get_info(s.w, multi, &info), DVI_OK);
    assert_int_equal(info.shape_count, 0);
    assert_int_equal(info.shape_type, 0);
    assert_true(info.bounding_radius == 0.0);
    dvi_shape_def sd = dvi_default_shape_def();
    sd.type = DVI_SHAPE_CYLINDER;
    sd.radius = 0.3;
    sd.half_length = 0.4;
    test_add_shape(s.w, multi, &sd);
    sd = dvi_default_shape_def();
    sd.radius = 0.1;
    sd.offset_position[0] = 0.6;
    test_add_shape(s.w, multi, &sd);
    assert_int_equal(dvi_body_get_info(s.w, multi, &info), DVI_OK);
    assert_int_equal(info.shape_count, 2);
    assert_int_equal(info.shape_type, DVI_SHAPE_CYLINDER);
    assert_near(info.bounding_radius, 0.7, 1e-15);
    assert_int_equal(dvi_world_body_count(s.w), 13);

    dvi_body_id stale = multi;
    stale.generation++;
    assert_int_equal(dvi_body_get_info(s.w, stale, &info), DVI_ERR_INVALID_ARG);
    assert_int_equal(dvi_body_get_info(s.w, multi, NULL), DVI_ERR_INVALID_ARG);
    dvi_world_destroy(s.w);
}

/* ---- CCP files ------------------------------------------------------------------------ */

static double urand(uint64_t* s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(*s >> 11) * (1.0 / 9007199254740992.0);
}

/* A random problem in either form, owning its arrays. */
typedef struct rand_problem {
    dvi_ccp_problem p;
    dvi_ccp_block blocks[64];
    double r[400], compliance[400], gamma0[400], solution[400];
    int32_t colptr[401], rowind[400 * 400];
    double values[400 * 400];
    double inv_mass[36 * 16];
    dvi_csc op;
} rand_problem;

static void random_problem(rand_problem* q, bool factor, uint64_t seed)
{
    memset(q, 0, sizeof *q);
    uint64_t s = seed;
    const int nb = 6;
    const int nblocks = 24;
    int32_t m = 0;
    for (int b = 0; b < nblocks; b++) {
        int kind = 1 + (int)(urand(&s) * 4.0);
        q->blocks[b].kind = (dvi_block_kind)kind;
        if (kind == DVI_BLOCK_FRICTION || kind == DVI_BLOCK_FRICTION_ROLLING) q->blocks[b].mu = urand(&s);
        if (kind == DVI_BLOCK_FRICTION_ROLLING) {
            q->blocks[b].mu_spin = 0.01 * urand(&s);
            q->blocks[b].mu_roll = 0.02 * urand(&s);
        }
        m += dvi_block_rows(q->blocks[b].kind);
    }
    for (int32_t i = 0; i < m; i++) {
        /* wide exponents, and a few special values */
        q->r[i] = (urand(&s) - 0.5) * pow(10.0, 6.0 * urand(&s) - 4.0);
        q->compliance[i] = urand(&s) < 0.5 ? 0.0 : 1e-7 * urand(&s);
        q->gamma0[i] = urand(&s) - 0.3;
        q->solution[i] = 1.0 / 3.0 + urand(&s);
    }
    q->r[0] = -0.0;
    q->r[1] = 4.9406564584124654e-324;
    q->solution[0] = 0.1;
    q->p = dvi_ccp_problem_empty();
    q->p.rows = m;
    q->p.block_count = nblocks;
    q->p.blocks = q->blocks;
    q->p.r = q->r;
    q->p.compliance = q->compliance;
    int32_t nz = 0;
    if (factor) {
        for (int b = 0; b < nb; b++) {
            double I[9] = {0};
            double a = 0.1 + urand(&s), c = 0.05 * urand(&s);
            I[0] = a;
            I[4] = a * 1.3;
            I[8] = a * 0.7;
            I[1] = I[3] = c;
            assert_int_equal(dvi_inv_mass_block(0.5 + urand(&s), I, q->inv_mass + 36 * b), DVI_OK);
        }
        for (int32_t j = 0; j < m; j++) {
            q->colptr[j] = nz;
            int b1 = (int)(urand(&s) * nb), b2 = (int)(urand(&s) * nb);
            if (b2 < b1) {
                int t = b1;
                b1 = b2;
                b2 = t;
            }
            for (int k = 0; k < 6; k++) {
                q->rowind[nz] = 6 * b1 + k;
                q->values[nz++] = urand(&s) - 0.5;
            }
            if (b2 != b1)
                for (int k = 0; k < 6; k++) {
                    q->rowind[nz] = 6 * b2 + k;
                    q->values[nz++] = urand(&s) - 0.5;
                }
        }
        q->colptr[m] = nz;
        q->op = (dvi_csc){6 * nb, m, q->colptr, q->rowind, q->values};
        q->p.body_count = nb;
        q->p.D = &q->op;
        q->p.inv_mass = q->inv_mass;
    } else {
        /* W = AᵀA + I with A random m × m sparse-ish, mirrored to exact symmetry */
        static double A[400 * 400], Wd[400 * 400];
        for (int32_t i = 0; i < m * m; i++) A[i] = urand(&s) < 0.2 ? urand(&s) - 0.5 : 0.0;
        for (int32_t i = 0; i < m; i++)
            for (int32_t j = i; j < m; j++) {
                double t = i == j ? 1.0 : 0.0;
                for (int32_t k = 0; k < m; k++) t += A[k * m + i] * A[k * m + j];
                Wd[i * m + j] = Wd[j * m + i] = t;
            }
        for (int32_t j = 0; j < m; j++) {
            q->colptr[j] = nz;
            for (int32_t i = 0; i < m; i++)
                if (Wd[i * m + j] != 0.0) {
                    q->rowind[nz] = i;
                    q->values[nz++] = Wd[i * m + j];
                }
        }
        q->colptr[m] = nz;
        q->op = (dvi_csc){m, m, q->colptr, q->rowind, q->values};
        q->p.W = &q->op;
    }
    char msg[256];
    assert_int_equal(dvi_ccp_validate(&q->p, msg, sizeof msg), DVI_OK);
}

static void assert_same_problem(const dvi_ccp_problem* a, const dvi_ccp_problem* b)
{
    assert_int_equal(a->rows, b->rows);
    assert_int_equal(a->block_count, b->block_count);
    for (int32_t k = 0; k < a->block_count; k++) {
        assert_int_equal(a->blocks[k].kind, b->blocks[k].kind);
        if (a->blocks[k].kind == DVI_BLOCK_FRICTION || a->blocks[k].kind == DVI_BLOCK_FRICTION_ROLLING)
            assert_bits(&a->blocks[k].mu, &b->blocks[k].mu, 1);
        if (a->blocks[k].kind == DVI_BLOCK_FRICTION_ROLLING) {
            assert_bits(&a->blocks[k].mu_spin, &b->blocks[k].mu_spin, 1);
            assert_bits(&a->blocks[k].mu_roll, &b->blocks[k].mu_roll, 1);
        }
    }
    assert_bits(a->r, b->r, a->rows);
    assert_int_equal(a->compliance != NULL, b->compliance != NULL);
    if (a->compliance) assert_bits(a->compliance, b->compliance, a->rows);
    assert_int_equal(a->W != NULL, b->W != NULL);
    const dvi_csc* A = a->W ? a->W : a->D;
    const dvi_csc* B = b->W ? b->W : b->D;
    assert_int_equal(A->rows, B->rows);
    assert_int_equal(A->cols, B->cols);
    assert_memory_equal(A->colptr, B->colptr, ((size_t)A->cols + 1) * sizeof(int32_t));
    assert_memory_equal(A->rowind, B->rowind, (size_t)A->colptr[A->cols] * sizeof(int32_t));
    assert_bits(A->values, B->values, A->colptr[A->cols]);
    if (a->D) {
        assert_int_equal(a->body_count, b->body_count);
        assert_bits(a->inv_mass, b->inv_mass, 36 * (size_t)a->body_count);
    }
}

static void roundtrip(bool factor)
{
    static rand_problem q;
    random_problem(&q, factor, factor ? 7 : 8);
    char msg[256];
    char* text = NULL;
    size_t len = 0;
    assert_int_equal(dvi_ccp_problem_format_json(&q.p, q.gamma0, q.solution, &text, &len, msg, sizeof msg), DVI_OK);
    assert_int_equal(strlen(text), len);
    dvi_ccp_file* f = NULL;
    dvi_status st = dvi_ccp_problem_parse_json(text, len, &f, msg, sizeof msg);
    if (st != DVI_OK) print_error("%s\n", msg);
    assert_int_equal(st, DVI_OK);
    assert_string_equal(msg, "");
    assert_same_problem(&q.p, &f->problem);
    assert_non_null(f->gamma0);
    assert_non_null(f->solution);
    assert_bits(q.gamma0, f->gamma0, q.p.rows);
    assert_bits(q.solution, f->solution, q.p.rows);
    /* writing what was read gives the same text */
    char* text2 = NULL;
    size_t len2 = 0;
    assert_int_equal(dvi_ccp_problem_format_json(&f->problem, f->gamma0, f->solution, &text2, &len2, msg, sizeof msg),
                     DVI_OK);
    assert_int_equal(len, len2);
    assert_memory_equal(text, text2, len);
    dvi_ccp_file_free(f);

    /* through a file, without the optional vectors and compliance */
    char path[512];
    snprintf(path, sizeof path, "%s/test_state_%s.json", BUILD_PATH(""), factor ? "factor" : "delassus");
    q.p.compliance = NULL;
    assert_int_equal(dvi_ccp_problem_write_json(&q.p, NULL, NULL, path, msg, sizeof msg), DVI_OK);
    assert_int_equal(dvi_ccp_problem_read_json(path, &f, msg, sizeof msg), DVI_OK);
    assert_same_problem(&q.p, &f->problem);
    assert_null(f->gamma0);
    assert_null(f->solution);
    assert_null(f->problem.compliance);

    /* solved by APGD: the same bits as the problem in memory */
    dvi_solver_settings set = dvi_default_solver_settings();
    set.tolerance = 1e-9;
    set.max_iterations = 3000;
    static double g1[400], g2[400];
    memset(g1, 0, sizeof g1);
    memset(g2, 0, sizeof g2);
    dvi_solve_result r1, r2;
    memset(&r1, 0, sizeof r1);
    memset(&r2, 0, sizeof r2);
    assert_true(dvi_ccp_solve(&q.p, "apgd", &set, g1, &r1) >= 0);
    assert_true(dvi_ccp_solve(&f->problem, "apgd", &set, g2, &r2) >= 0);
    assert_int_equal(r1.iterations, r2.iterations);
    assert_int_equal(r1.status, r2.status);
    assert_bits(g1, g2, q.p.rows);
    dvi_ccp_file_free(f);
    remove(path);
    free(text);
    free(text2);
}

static void test_ccp_roundtrip_factor(void** state)
{
    (void)state;
    roundtrip(true);
}

static void test_ccp_roundtrip_delassus(void** state)
{
    (void)state;
    roundtrip(false);
}

/* A small valid document with pieces replaceable: 2 bodies, blocks
 * friction (3 rows) + bilateral + frictionless + friction (3) = 8 rows. */
static char* doc(const char* blocks, const char* r, const char* op, const char* extra)
{
    static char buf[8192];
    const char* def_blocks =
        "[{\"kind\": \"friction\", \"mu\": 0.5}, {\"kind\": \"bilateral\"}, {\"kind\": \"frictionless\"},\n"
        " {\"kind\": \"friction\", \"mu\": 0.3}]";
    const char* def_r = "[-1, 0, 0, 0.5, -0.2, -0.3, 0.1, 0]";
    const char* def_op = "\"W\": {\"rows\": 8, \"cols\": 8,\n"
                         "  \"colptr\": [0, 1, 2, 3, 4, 5, 6, 7, 8],\n"
                         "  \"rowind\": [0, 1, 2, 3, 4, 5, 6, 7],\n"
                         "  \"values\": [2, 2, 2, 1, 1, 3, 3, 3]}";
    snprintf(buf, sizeof buf, "{\n\"format\": \"dvicontact-ccp\", \"version\": 1,\n\"blocks\": %s,\n\"r\": %s,\n%s%s\n}\n",
             blocks ? blocks : def_blocks, r ? r : def_r, op ? op : def_op, extra ? extra : "");
    return buf;
}

static void expect_error(const char* text, size_t len, dvi_status want, const char* substring)
{
    dvi_ccp_file* f = (dvi_ccp_file*)&f; /* overwritten with NULL */
    char msg[512];
    dvi_status st = dvi_ccp_problem_parse_json(text, len, &f, msg, sizeof msg);
    if (st != want || !strstr(msg, substring))
        print_error("got status %d, message \"%s\"; expected %d and \"%s\"\n", (int)st, msg, (int)want, substring);
    assert_int_equal(st, want);
    assert_null(f);
    assert_non_null(strstr(msg, substring));
}

static void expect_error_doc(const char* text, dvi_status want, const char* substring)
{
    expect_error(text, strlen(text), want, substring);
}

static void test_ccp_malformed(void** state)
{
    (void)state;
    char msg[512];
    dvi_ccp_file* f = NULL;
    const char* good = doc(NULL, NULL, NULL, NULL);
    assert_int_equal(dvi_ccp_problem_parse_json(good, strlen(good), &f, msg, sizeof msg), DVI_OK);
    assert_int_equal(f->problem.rows, 8);
    assert_int_equal(f->problem.block_count, 4);
    dvi_ccp_file_free(f);

    /* JSON syntax */
    static char trunc[8192];
    strcpy(trunc, good);
    size_t cut = strstr(trunc, "\"colptr\"") - trunc + 15;
    expect_error(trunc, cut, DVI_ERR_PARSE, "line 7, column 18: malformed JSON (unexpected end of input");
    for (size_t n = 0; n + 1 < strlen(good); n++) { /* every truncation is refused (but the final newline's) */
        f = (dvi_ccp_file*)&f;
        assert_true(dvi_ccp_problem_parse_json(good, n, &f, msg, sizeof msg) < 0);
        assert_null(f);
    }
    expect_error_doc(doc(NULL, "[-1, 0, NaN, 0.5, -0.2, -0.3, 0.1, 0]", NULL, NULL), DVI_ERR_PARSE,
                     "line 5, column 14: malformed JSON (NaN and Infinity are not JSON numbers)");
    expect_error_doc(doc(NULL, "[-1, 0, 1e999, 0.5, -0.2, -0.3, 0.1, 0]", NULL, NULL), DVI_ERR_INVALID_ARG,
                     "r[2]: not a finite number");
    expect_error_doc("{\"format\": \"dvicontact-ccp\", \"version\": 1} x", DVI_ERR_PARSE,
                     "line 1, column 44: unexpected text after the JSON value");
    expect_error_doc("[1, 2]", DVI_ERR_PARSE, "expected a JSON object at the top level");
    expect_error_doc("", DVI_ERR_PARSE, "empty file");
    /* format and version */
    expect_error_doc("{\"format\": \"fclib\", \"version\": 1}", DVI_ERR_PARSE, "format: expected \"dvicontact-ccp\"");
    expect_error_doc("{\"format\": \"dvicontact-ccp\", \"version\": 2}", DVI_ERR_PARSE,
                     "version: 2 not supported (this library reads version 1)");
    /* fields and values */
    expect_error_doc(doc(NULL, NULL, NULL, ",\n\"gama0\": [0]"), DVI_ERR_INVALID_ARG, "gama0: unknown field");
    expect_error_doc(doc(NULL, NULL, NULL, ",\n\"r\": [0]"), DVI_ERR_INVALID_ARG, "r: given twice");
    expect_error_doc(doc(NULL, "[-1, 0, 0, 0.5, -0.2, -0.3, 0.1]", NULL, NULL), DVI_ERR_INVALID_ARG,
                     "r: expected 8 numbers, got 7");
    expect_error_doc(doc(NULL, "[-1, 0, 0, 0.5, -0.2, -0.3, 0.1, \"0\"]", NULL, NULL), DVI_ERR_INVALID_ARG,
                     "r[7]: expected a number");
    expect_error_doc(doc("[{\"kind\": \"friction\", \"mu\": 0.5}, {\"kind\": \"bilateral\"}, {\"kind\": \"frictionless\"},"
                         " {\"kind\": \"friction\", \"mu\": -0.3}]",
                         NULL, NULL, NULL),
                     DVI_ERR_INVALID_ARG, "blocks[3].mu: must be finite and >= 0 (got -0.3)");
    expect_error_doc(doc("[{\"kind\": \"friction\"}, {\"kind\": \"bilateral\"}, {\"kind\": \"frictionless\"},"
                         " {\"kind\": \"friction\", \"mu\": 0.3}]",
                         NULL, NULL, NULL),
                     DVI_ERR_INVALID_ARG, "blocks[0].mu: missing");
    expect_error_doc(doc("[{\"kind\": \"friction\", \"mu\": 0.5}, {\"kind\": \"bilateral\", \"mu\": 1}, {\"kind\": "
                         "\"frictionless\"}, {\"kind\": \"friction\", \"mu\": 0.3}]",
                         NULL, NULL, NULL),
                     DVI_ERR_INVALID_ARG, "blocks[1].mu: unknown field");
    expect_error_doc(doc("[{\"kind\": \"cone\", \"mu\": 0.5}]", NULL, NULL, NULL), DVI_ERR_INVALID_ARG,
                     "blocks[0].kind: unknown kind \"cone\"");
    expect_error_doc(doc("[]", NULL, NULL, NULL), DVI_ERR_INVALID_ARG, "blocks: expected at least one block");
    expect_error_doc(doc(NULL, NULL, NULL, ",\n\"rows\": 9"), DVI_ERR_INVALID_ARG, "rows: 9, but the blocks have 8 rows");
    /* operators */
    expect_error_doc(doc(NULL, NULL, "\"description\": \"no operator\"", NULL), DVI_ERR_INVALID_ARG,
                     "W: missing (give W, or D with inv_mass)");
    expect_error_doc(doc(NULL, NULL, NULL, ",\n\"D\": {}"), DVI_ERR_INVALID_ARG, "W, D: both given");
    expect_error_doc(doc(NULL, NULL,
                         "\"W\": {\"colptr\": [0, 1, 2, 3, 4, 5, 6, 7], \"rowind\": [0, 1, 2, 3, 4, 5, 6, 7],"
                         " \"values\": [2, 2, 2, 1, 1, 3, 3, 3]}",
                         NULL),
                     DVI_ERR_INVALID_ARG, "W.colptr: expected 9 integers, got 8");
    expect_error_doc(doc(NULL, NULL,
                         "\"W\": {\"colptr\": [0, 1, 2, 3, 4, 5, 6, 7, 8], \"rowind\": [0, 1, 2.5, 3, 4, 5, 6, 7],"
                         " \"values\": [2, 2, 2, 1, 1, 3, 3, 3]}",
                         NULL),
                     DVI_ERR_INVALID_ARG, "W.rowind[2]: expected an integer");
    expect_error_doc(doc(NULL, NULL,
                         "\"W\": {\"colptr\": [0, 1, 2, 3, 4, 5, 6, 7, 8], \"rowind\": [0, 1, 2, 3, 4, 5, 6, 9],"
                         " \"values\": [2, 2, 2, 1, 1, 3, 3, 3]}",
                         NULL),
                     DVI_ERR_INVALID_ARG, "W column 7: row index 9 out of range [0, 8)");
    expect_error_doc(doc(NULL, NULL,
                         "\"W\": {\"colptr\": [0, 1, 2, 3, 4, 5, 6, 7, 9], \"rowind\": [0, 1, 2, 3, 4, 5, 6, 7, 0],"
                         " \"values\": [2, 2, 2, 1, 1, 3, 3, 3, 0.5]}",
                         NULL),
                     DVI_ERR_INVALID_ARG, "W: not symmetric");
    expect_error_doc(doc(NULL, NULL,
                         "\"W\": {\"colptr\": [0, 1, 2, 3, 4, 5, 6, 7, 7], \"rowind\": [0, 1, 2, 3, 4, 5, 6, 7],"
                         " \"values\": [2, 2, 2, 1, 1, 3, 3, 3]}",
                         NULL),
                     DVI_ERR_INVALID_ARG, "W.colptr[8]: must be the number of entries, 8 (got 7)");
    expect_error_doc(doc(NULL, NULL, "\"W\": [[1, 0], [0, 1]]", NULL), DVI_ERR_INVALID_ARG,
                     "W: expected 8 rows (the rows of the blocks), got 2");
    expect_error_doc(doc("[{\"kind\": \"bilateral\"}, {\"kind\": \"frictionless\"}]", "[0.5, -1]",
                         "\"W\": [[1, 0], [0]]", NULL),
                     DVI_ERR_INVALID_ARG, "W[1]: expected 2 numbers, got 1");
    /* factor form */
    const char* d_ok = "\"D\": {\"rows\": 6, \"cols\": 2, \"colptr\": [0, 1, 2], \"rowind\": [2, 0], \"values\": [1, 1]},\n"
                       "\"inv_mass\": [[1,0,0,0,0,0, 0,1,0,0,0,0, 0,0,1,0,0,0, 0,0,0,2,0,0, 0,0,0,0,2,0, 0,0,0,0,0,2]]";
    const char* two = "[{\"kind\": \"bilateral\"}, {\"kind\": \"frictionless\"}]";
    const char* t = doc(two, "[0.5, -1]", d_ok, NULL);
    assert_int_equal(dvi_ccp_problem_parse_json(t, strlen(t), &f, msg, sizeof msg), DVI_OK);
    assert_int_equal(f->problem.body_count, 1);
    dvi_ccp_file_free(f);
    expect_error_doc(doc(two, "[0.5, -1]",
                         "\"D\": {\"colptr\": [0, 1, 2], \"rowind\": [2, 0], \"values\": [1, 1]},\n"
                         "\"inv_mass\": [[1,0,0,0,0,0, 0,1,0,0,0,0, 0,0,1,0,0,0, 0,0,0,2,0,0, 0,0,0,0,2,0, 0,0,0,0,0]]",
                         NULL),
                     DVI_ERR_INVALID_ARG, "inv_mass[0]: expected 36 numbers, got 35");
    expect_error_doc(doc(two, "[0.5, -1]", "\"D\": {\"colptr\": [0, 1, 2], \"rowind\": [2, 0], \"values\": [1, 1]}", NULL),
                     DVI_ERR_INVALID_ARG, "inv_mass: missing (required with D)");
    expect_error_doc(doc(two, "[0.5, -1]", d_ok, ",\n\"body_count\": 2"), DVI_ERR_INVALID_ARG,
                     "body_count: 2, but inv_mass has 1 blocks");
    expect_error_doc(doc(two, "[0.5, -1]",
                         "\"D\": {\"rows\": 12, \"colptr\": [0, 1, 2], \"rowind\": [2, 0], \"values\": [1, 1]},\n"
                         "\"inv_mass\": [[1,0,0,0,0,0, 0,1,0,0,0,0, 0,0,1,0,0,0, 0,0,0,2,0,0, 0,0,0,0,2,0, 0,0,0,0,0,2]]",
                         NULL),
                     DVI_ERR_INVALID_ARG, "D.rows: expected 6 (6 x the blocks of inv_mass), got 12");
    expect_error_doc(doc(two, "[0.5, -1]",
                         "\"D\": {\"colptr\": [0, 2, 2], \"rowind\": [2, 0], \"values\": [1, 1]},\n"
                         "\"inv_mass\": [[1,0,0,0,0,0, 0,1,0,0,0,0, 0,0,1,0,0,0, 0,0,0,2,0,0, 0,0,0,0,2,0, 0,0,0,0,0,2]]",
                         NULL),
                     DVI_ERR_INVALID_ARG, "D column 0: row indices not strictly increasing");
    expect_error_doc(doc(two, "[0.5, -1]",
                         "\"D\": {\"colptr\": [0, 1, 2], \"rowind\": [2, 0], \"values\": [1, 1]},\n"
                         "\"inv_mass\": [[1,0,0,0,0,0, 0,1,0,0,0,0, 0,0,1,0,0,0, 0,0,0,2,0,0, 0,0,0,0,2,0, 0,0,0,0,0,-2]]",
                         NULL),
                     DVI_ERR_INVALID_ARG, "inv_mass[body 0]: negative diagonal entry 5");
    expect_error_doc(doc(NULL, NULL, NULL, ",\n\"gamma0\": [1, 2]"), DVI_ERR_INVALID_ARG,
                     "gamma0: expected 8 numbers, got 2");
    expect_error_doc(doc(NULL, NULL, NULL, ",\n\"compliance\": [0, 0, 0, 0, 0, 0, 0, -1]"), DVI_ERR_INVALID_ARG,
                     "compliance[7] (blocks[3]): must be finite and >= 0");

    /* files: a missing file, and the name in front of the message */
    assert_int_equal(dvi_ccp_problem_read_json(BUILD_PATH("no/such/file.json"), &f, msg, sizeof msg), DVI_ERR_IO);
    assert_non_null(strstr(msg, "file.json: cannot open"));
    char path[512];
    snprintf(path, sizeof path, "%s/test_state_bad.json", BUILD_PATH(""));
    FILE* fp = fopen(path, "wb");
    assert_non_null(fp);
    fputs(doc(NULL, "[-1, 0, 0, 0.5]", NULL, NULL), fp);
    fclose(fp);
    assert_int_equal(dvi_ccp_problem_read_json(path, &f, msg, sizeof msg), DVI_ERR_INVALID_ARG);
    assert_non_null(strstr(msg, "test_state_bad.json: r: expected 8 numbers, got 4"));
    remove(path);

    /* writing refuses an invalid problem and non-finite vectors */
    dvi_ccp_block blk = {DVI_BLOCK_FRICTION, -1.0, 0, 0};
    double r3[3] = {0, 0, 0}, g3[3] = {0, NAN, 0};
    int32_t cp[4] = {0, 1, 2, 3}, ri[3] = {0, 1, 2};
    double vals[3] = {1, 1, 1};
    dvi_csc W = {3, 3, cp, ri, vals};
    dvi_ccp_problem p = dvi_ccp_problem_empty();
    p.rows = 3;
    p.block_count = 1;
    p.blocks = &blk;
    p.W = &W;
    p.r = r3;
    char* text = NULL;
    size_t len;
    assert_int_equal(dvi_ccp_problem_format_json(&p, NULL, NULL, &text, &len, msg, sizeof msg), DVI_ERR_INVALID_ARG);
    assert_non_null(strstr(msg, "blocks[0].mu"));
    assert_null(text);
    blk.mu = 0.2;
    assert_int_equal(dvi_ccp_problem_format_json(&p, g3, NULL, &text, &len, msg, sizeof msg), DVI_ERR_INVALID_ARG);
    assert_non_null(strstr(msg, "gamma0[1]: not finite"));
    assert_int_equal(dvi_ccp_problem_write_json(&p, NULL, NULL, BUILD_PATH("no/such/dir/x.json"), msg, sizeof msg),
                     DVI_ERR_IO);
    assert_non_null(strstr(msg, "x.json: cannot open for writing"));
    dvi_ccp_file_free(NULL);
}

static void test_ccp_sample_stack3(void** state)
{
    (void)state;
    char msg[512];
    dvi_ccp_file* f = NULL;
    dvi_status st = dvi_ccp_problem_read_json(SRC_PATH("tests/data/ccp/stack3.json"), &f, msg, sizeof msg);
    if (st != DVI_OK) print_error("%s\n", msg);
    assert_int_equal(st, DVI_OK);
    assert_int_equal(f->problem.rows, 9);
    assert_int_equal(f->problem.body_count, 3);
    assert_non_null(f->solution);
    double g[9] = {0};
    dvi_solver_settings set = dvi_default_solver_settings();
    set.tolerance = 1e-10;
    set.max_iterations = 5000;
    dvi_solve_result res;
    memset(&res, 0, sizeof res);
    assert_int_equal(dvi_ccp_solve(&f->problem, "apgd", &set, g, &res), DVI_OK);
    const double mgh = 9.81 * 0.01;
    for (int i = 0; i < 9; i++) assert_near(g[i], f->solution[i], 1e-8);
    assert_near(g[0], 3 * mgh, 1e-8);
    assert_near(g[3], 2 * mgh, 1e-8);
    assert_near(g[6], mgh, 1e-8);
    /* the velocity change brings every sphere to rest: v_free = −g h */
    double dv[18];
    assert_int_equal(dvi_ccp_velocity(&f->problem, g, dv), DVI_OK);
    for (int b = 0; b < 3; b++) assert_near(dv[6 * b + 2], mgh, 1e-8);
    dvi_ccp_file_free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_resume_bit_identical),
        cmocka_unit_test(test_state_before_first_step),
        cmocka_unit_test(test_refuses_other_structure),
        cmocka_unit_test(test_corrupted_blobs),
        cmocka_unit_test(test_dem_resume_bit_identical),
        cmocka_unit_test(test_dem_terrain_resume),
        cmocka_unit_test(test_dem_refusals),
        cmocka_unit_test(test_body_enumeration),
        cmocka_unit_test(test_ccp_roundtrip_factor),
        cmocka_unit_test(test_ccp_roundtrip_delassus),
        cmocka_unit_test(test_ccp_malformed),
        cmocka_unit_test(test_ccp_sample_stack3),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
