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

static void add_shape(dvi_world* w, dvi_body_id b, const dvi_shape_def* sd)
{
    dvi_shape_id s;
    assert_int_equal(dvi_shape_create(w, b, sd, &s), DVI_OK);
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
    add_shape(w, s->ground, &sd);

    for (int k = 0; k < 2; k++) {
        double m = variant == V_MASS && k == 1 ? 5.5 : 5.0;
        s->boxes[k] = add_body(w, DVI_BODY_DYNAMIC, m, m * (0.09 + 0.01) / 3.0, k ? 0.4 : -0.4, 0.0, 0.1);
        sd = dvi_default_shape_def();
        sd.type = DVI_SHAPE_BOX;
        sd.half_extents[0] = sd.half_extents[1] = 0.3;
        sd.half_extents[2] = 0.1;
        sd.material.friction = variant == V_MATERIAL && k == 0 ? 0.45 : 0.4;
        add_shape(w, s->boxes[k], &sd);
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
        add_shape(w, s->spheres[k], &sd);
    }
    double v[3] = {-0.2, 0.0, 0.0};
    s->kinematic = add_body(w, DVI_BODY_KINEMATIC, 1, 1, 1.5, 0.0, 0.1);
    assert_int_equal(dvi_body_set_velocity(w, s->kinematic, v, NULL), DVI_OK);
    sd = dvi_default_shape_def();
    sd.type = DVI_SHAPE_BOX;
    sd.half_extents[0] = sd.half_extents[1] = sd.half_extents[2] = 0.1;
    add_shape(w, s->kinematic, &sd);

    /* a motorised arm hinged to the world about x, a bob on a ball joint */
    s->arm = add_body(w, DVI_BODY_DYNAMIC, 1.0, 0.02, 0.0, 2.0, 1.0);
    sd = dvi_default_shape_def();
    sd.type = DVI_SHAPE_CAPSULE;
    sd.radius = 0.03;
    sd.half_length = 0.2;
    add_shape(w, s->arm, &sd);
    s->bob = add_body(w, DVI_BODY_DYNAMIC, 0.3, 0.4 * 0.3 * 0.05 * 0.05, 0.0, 2.0, 0.7);
    sd = dvi_default_shape_def();
    sd.radius = 0.05;
    add_shape(w, s->bob, &sd);
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
        add_shape(w, e, &sd);
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

/* Everything observable through the API is bit-identical. */
static void assert_same(const scene* a, const scene* b)
{
    double ta = dvi_world_time(a->w), tb = dvi_world_time(b->w);
    assert_bits(&ta, &tb, 1);
    int32_t n = dvi_world_body_count(a->w);
    assert_int_equal(n, dvi_world_body_count(b->w));
    for (int32_t i = 0; i < n; i++) {
        dvi_body_id ia, ib;
        assert_int_equal(dvi_world_body_at(a->w, i, &ia), DVI_OK);
        assert_int_equal(dvi_world_body_at(b->w, i, &ib), DVI_OK);
        double va[19], vb[19];
        dvi_body_get_position(a->w, ia, va);
        dvi_body_get_orientation(a->w, ia, va + 3);
        dvi_body_get_velocity(a->w, ia, va + 7);
        dvi_body_get_angular_velocity(a->w, ia, va + 10);
        dvi_body_get_contact_force(a->w, ia, va + 13, va + 16);
        dvi_body_get_position(b->w, ib, vb);
        dvi_body_get_orientation(b->w, ib, vb + 3);
        dvi_body_get_velocity(b->w, ib, vb + 7);
        dvi_body_get_angular_velocity(b->w, ib, vb + 10);
        dvi_body_get_contact_force(b->w, ib, vb + 13, vb + 16);
        assert_bits(va, vb, 19);
    }
    int32_t nc = dvi_world_contact_count(a->w);
    assert_int_equal(nc, dvi_world_contact_count(b->w));
    for (int32_t c = 0; c < nc; c++) {
        dvi_contact_info ca, cb;
        assert_int_equal(dvi_world_get_contact(a->w, c, &ca), DVI_OK);
        assert_int_equal(dvi_world_get_contact(b->w, c, &cb), DVI_OK);
        assert_int_equal(ca.body_a.index1, cb.body_a.index1);
        assert_int_equal(ca.body_b.index1, cb.body_b.index1);
        assert_bits(ca.point, cb.point, 3);
        assert_bits(ca.normal, cb.normal, 3);
        assert_bits(&ca.distance, &cb.distance, 1);
        assert_bits(ca.force, cb.force, 3);
    }
    const dvi_joint_id ja[2] = {a->hinge, a->ball}, jb[2] = {b->hinge, b->ball};
    for (int k = 0; k < 2; k++) {
        double ra[6], rb[6];
        assert_int_equal(dvi_joint_get_reaction(a->w, ja[k], ra, ra + 3), DVI_OK);
        assert_int_equal(dvi_joint_get_reaction(b->w, jb[k], rb, rb + 3), DVI_OK);
        assert_bits(ra, rb, 6);
    }
    dvi_step_stats sa = dvi_world_get_stats(a->w), sb = dvi_world_get_stats(b->w);
    assert_int_equal(sa.bodies, sb.bodies);
    assert_int_equal(sa.contacts, sb.contacts);
    assert_int_equal(sa.joint_rows, sb.joint_rows);
    assert_int_equal(sa.rows, sb.rows);
    assert_int_equal(sa.iterations, sb.iterations);
    assert_int_equal(sa.solver_status, sb.solver_status);
    assert_bits(&sa.residual, &sb.residual, 1);
    assert_bits(&sa.max_penetration, &sb.max_penetration, 1);
    assert_bits(&sa.max_joint_violation, &sb.max_joint_violation, 1);
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
    add_shape(w, g, &sd);
    dvi_body_id box = add_body(w, DVI_BODY_DYNAMIC, 1, 0.01, 0, 0, 0.1);
    sd = dvi_default_shape_def();
    sd.type = DVI_SHAPE_BOX;
    sd.half_extents[0] = sd.half_extents[1] = sd.half_extents[2] = 0.1;
    add_shape(w, box, &sd);
    dvi_body_id ball = add_body(w, DVI_BODY_DYNAMIC, 0.2, 0.001, 0.3, 0, 0.5);
    sd = dvi_default_shape_def();
    sd.radius = 0.05;
    add_shape(w, ball, &sd);
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
    bad[8] = 2;
    assert_int_equal(dvi_world_load_state(w, bad, size), DVI_ERR_PARSE);
    assert_non_null(strstr(dvi_world_last_error(w), "version 2 not supported"));
    memcpy(bad, blob, size);
    bad[size - 1] ^= 0x10;
    assert_int_equal(dvi_world_load_state(w, bad, size), DVI_ERR_PARSE);
    assert_non_null(strstr(dvi_world_last_error(w), "checksum"));

    /* forged contents with a valid checksum: indices are still checked */
    size_t nobj = 3 + 3 + 1;
    size_t contacts_at = 64 + 8 * (1 + nobj) + 8 + 80 + 3 * 200 + 1 * 460;
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
    size_t joint_at = 64 + 8 * (1 + nobj) + 8 + 80 + 3 * 200;
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
    add_shape(s.w, multi, &sd);
    sd = dvi_default_shape_def();
    sd.radius = 0.1;
    sd.offset_position[0] = 0.6;
    add_shape(s.w, multi, &sd);
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
    snprintf(path, sizeof path, "%s/test_state_%s.json", DVI_BUILD_DIR, factor ? "factor" : "delassus");
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
    assert_int_equal(dvi_ccp_problem_read_json(DVI_BUILD_DIR "/no/such/file.json", &f, msg, sizeof msg), DVI_ERR_IO);
    assert_non_null(strstr(msg, "file.json: cannot open"));
    char path[512];
    snprintf(path, sizeof path, "%s/test_state_bad.json", DVI_BUILD_DIR);
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
    assert_int_equal(dvi_ccp_problem_write_json(&p, NULL, NULL, DVI_BUILD_DIR "/no/such/dir/x.json", msg, sizeof msg),
                     DVI_ERR_IO);
    assert_non_null(strstr(msg, "x.json: cannot open for writing"));
    dvi_ccp_file_free(NULL);
}

static void test_ccp_sample_stack3(void** state)
{
    (void)state;
    char msg[512];
    dvi_ccp_file* f = NULL;
    dvi_status st = dvi_ccp_problem_read_json(DVI_SOURCE_DIR "/tests/data/ccp/stack3.json", &f, msg, sizeof msg);
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
        cmocka_unit_test(test_body_enumeration),
        cmocka_unit_test(test_ccp_roundtrip_factor),
        cmocka_unit_test(test_ccp_roundtrip_delassus),
        cmocka_unit_test(test_ccp_malformed),
        cmocka_unit_test(test_ccp_sample_stack3),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
