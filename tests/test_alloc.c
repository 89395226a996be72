/* The allocator hook (dvi_allocator, base.h): every allocation of a solver,
 * and of a world with its collision, DEM and solver state, goes through the
 * allocator it was given and is freed through it by destroy; and failing
 * the k-th allocation, for every k up to the last one a run makes, gives
 * DVI_ERR_NOMEM cleanly (no crash, no leak) and leaves the object
 * destroyable, and a solver usable. */
#include "dvi/ccp.h"
#include "dvi/world.h"
#include "problems.h"
#include "world_internal.h" /* the collision's threshold for its parallel path */
#include "test_util.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* A pass-through to malloc that counts, with a header that marks its own
 * blocks: a block from libc freed here, or one of these freed by libc,
 * fails under ASan (and the magic check) instead of passing unnoticed. */
typedef struct counter {
    long allocs;    /* alloc, and realloc of NULL */
    long reallocs;  /* realloc of a block */
    long frees;
    long live;      /* blocks not yet freed */
    long fail_at;   /* countdown: the allocation (alloc or realloc) that fails, 1-based; 0: none */
    long calls;     /* allocations so far (alloc and realloc) */
    int failed;     /* the countdown's failure happened */
} counter;

#define MAGIC 0x64766961u
typedef union head {
    struct {
        uint32_t magic;
    } h;
    max_align_t align;
} head;

/* Counts with atomics: with threads > 1 the collision's threads allocate at once. */
#define ADD(x, v) __atomic_add_fetch(&(x), (v), __ATOMIC_RELAXED)

static int fail_now(counter* c)
{
    const long call = ADD(c->calls, 1);
    if (c->fail_at > 0 && call == c->fail_at) {
        c->failed = 1;
        return 1;
    }
    return 0;
}

static void* c_alloc(void* user, size_t size)
{
    counter* c = user;
    if (fail_now(c)) return NULL;
    head* h = malloc(sizeof(head) + size);
    if (!h) return NULL;
    h->h.magic = MAGIC;
    ADD(c->allocs, 1);
    ADD(c->live, 1);
    return h + 1;
}

static void* c_realloc(void* user, void* ptr, size_t size)
{
    counter* c = user;
    if (!ptr) return c_alloc(user, size);
    head* h = (head*)ptr - 1;
    assert_int_equal(h->h.magic, MAGIC);
    if (fail_now(c)) return NULL;
    head* q = realloc(h, sizeof(head) + size);
    if (!q) return NULL;
    ADD(c->reallocs, 1);
    return q + 1;
}

static void c_free(void* user, void* ptr)
{
    counter* c = user;
    if (!ptr) return;
    head* h = (head*)ptr - 1;
    assert_int_equal(h->h.magic, MAGIC);
    h->h.magic = 0;
    ADD(c->frees, 1);
    ADD(c->live, -1);
    free(h);
}

static dvi_allocator counting(counter* c)
{
    memset(c, 0, sizeof *c);
    return (dvi_allocator){c_alloc, c_realloc, c_free, c};
}

/* ---------------------------------------------------------------- solvers */

static void gen_problems(dvi_gen_problem g[2])
{
    memset(g, 0, 2 * sizeof *g);
    assert_int_equal(dvi_gen_random(8, 12, 3, 5, &g[0]), DVI_OK);
    assert_int_equal(dvi_gen_random(8, 12, 3, 5, &g[1]), DVI_OK);
    assert_true(dvi_gen_use_frames(&g[1]) > 0); /* the same contacts given by frames */
}

static void test_solver_counting(void** state)
{
    (void)state;
    dvi_gen_problem g[2];
    gen_problems(g);
    for (int32_t k = 0; k < dvi_solver_count(); k++) {
        const char* name = dvi_solver_name(k);
        for (int f = 0; f < 2; f++) {
            const int32_t m = g[f].p.rows;
            double* gamma = calloc((size_t)m, sizeof(double));
            double* ref = calloc((size_t)m, sizeof(double));
            dvi_solver_settings s = dvi_default_solver_settings();
            s.max_iterations = 200;
            dvi_solve_result r0, r1;
            dvi_status st0 = dvi_ccp_solve(&g[f].p, name, &s, ref, &r0);
            counter c;
            s.allocator = counting(&c);
            dvi_status st1 = dvi_ccp_solve(&g[f].p, name, &s, gamma, &r1);
            assert_int_equal(st0, st1);
            assert_memory_equal(gamma, ref, (size_t)m * sizeof(double)); /* the same bits */
            assert_true(c.allocs > 0);
            assert_int_equal(c.live, 0);
            /* a solver kept across solves, then destroyed */
            dvi_solver* sv = NULL;
            assert_int_equal(dvi_solver_create(name, &s, &sv), DVI_OK);
            for (int rep = 0; rep < 3; rep++) {
                assert_int_equal(dvi_solver_solve(sv, &g[f].p, gamma, &r1), st0);
                assert_memory_equal(gamma, ref, (size_t)m * sizeof(double));
            }
            assert_true(c.live > 0);
            dvi_solver_destroy(sv);
            assert_int_equal(c.live, 0);
            free(gamma);
            free(ref);
        }
    }
    dvi_gen_free(&g[0]);
    dvi_gen_free(&g[1]);
}

static void test_solver_allocator_half_set(void** state)
{
    (void)state;
    counter c;
    dvi_solver_settings s = dvi_default_solver_settings();
    s.allocator = counting(&c);
    s.allocator.free = NULL;
    dvi_solver* sv = NULL;
    assert_int_equal(dvi_solver_create("apgd", &s, &sv), DVI_ERR_INVALID_ARG);
    assert_null(sv);
    assert_int_equal(c.calls, 0);
}

static void test_solver_countdown(void** state)
{
    (void)state;
    dvi_gen_problem g[2];
    gen_problems(g);
    long points = 0;
    for (int32_t k = 0; k < dvi_solver_count(); k++) {
        const char* name = dvi_solver_name(k);
        for (int f = 0; f < 2; f++) {
            const int32_t m = g[f].p.rows;
            double* gamma = calloc((size_t)m, sizeof(double));
            double* ref = calloc((size_t)m, sizeof(double));
            dvi_solver_settings s = dvi_default_solver_settings();
            s.max_iterations = 200;
            const dvi_status st0 = dvi_ccp_solve(&g[f].p, name, &s, ref, NULL);
            assert_true(st0 >= 0);
            long walked = 0;
            for (long fail = 1;; fail++) {
                counter c;
                s.allocator = counting(&c);
                c.fail_at = fail;
                dvi_solver* sv = NULL;
                dvi_status st = dvi_solver_create(name, &s, &sv);
                if (st == DVI_OK) {
                    dvi_solve_result res;
                    st = dvi_solver_solve(sv, &g[f].p, gamma, &res);
                    if (c.failed) {
                        assert_true(res.message[0] != 0); /* it says why */
                        if (st != DVI_ERR_NOMEM)
                            printf("%s (%s): allocation %ld failed, the solve returned %d (%s)\n", name,
                                   f ? "frames" : "D", fail, (int)st, res.message);
                        assert_int_equal(st, DVI_ERR_NOMEM);
                        /* still usable: the next solve (nothing fails now) gives the answer */
                        assert_int_equal(dvi_solver_solve(sv, &g[f].p, gamma, &res), st0);
                        assert_memory_equal(gamma, ref, (size_t)m * sizeof(double));
                    } else {
                        assert_int_equal(st, st0);
                    }
                    dvi_solver_destroy(sv);
                } else {
                    assert_int_equal(st, DVI_ERR_NOMEM);
                    assert_null(sv);
                    assert_true(c.failed);
                }
                assert_int_equal(c.live, 0);
                if (!c.failed) break;
                walked++;
            }
            assert_true(walked > 0);
            points += walked;
            /* dvi_ccp_solve: the same countdown through the one call */
            for (long fail = 1;; fail++) {
                counter c;
                s.allocator = counting(&c);
                c.fail_at = fail;
                dvi_status st = dvi_ccp_solve(&g[f].p, name, &s, gamma, NULL);
                assert_int_equal(c.live, 0);
                if (!c.failed) {
                    assert_int_equal(st, st0);
                    break;
                }
                assert_int_equal(st, DVI_ERR_NOMEM);
            }
            free(gamma);
            free(ref);
        }
    }
    printf("solver countdown: %ld allocation points walked (%d solvers, D and frames), every one DVI_ERR_NOMEM\n",
           points, (int)dvi_solver_count());
    dvi_gen_free(&g[0]);
    dvi_gen_free(&g[1]);
}

/* ------------------------------------------------------------------ world */

#define SPHERES 4
#define STEPS 20

/* A world of the given method with allocator a (NULL: libc): a plane,
 * SPHERES spheres (two resting on it, two landing on them a few steps in,
 * so that the step's buffers grow mid-run) and a distance joint between
 * the two on the plane. Returns the first error; the world, if created, is
 * in *out. */
static dvi_status build(dvi_method method, const dvi_allocator* a, dvi_world** out)
{
    dvi_world_def wd = dvi_default_world_def();
    wd.method = method;
    if (method == DVI_METHOD_DEM) {
        wd.dem.constants = DVI_DEM_DIRECT;
        wd.dem.k_n = 1e5;
    }
    if (a) wd.allocator = *a;
    *out = NULL;
    dvi_status st = dvi_world_create(&wd, out);
    if (st != DVI_OK) return st;
    dvi_world* w = *out;
    dvi_body_def gd = dvi_default_body_def();
    gd.type = DVI_BODY_FIXED;
    dvi_body_id ground;
    if ((st = dvi_body_create(w, &gd, &ground)) != DVI_OK) return st;
    dvi_shape_def plane = dvi_default_shape_def();
    plane.type = DVI_SHAPE_PLANE;
    dvi_shape_id sid;
    if ((st = dvi_shape_create(w, ground, &plane, &sid)) != DVI_OK) return st;
    dvi_body_id b[SPHERES];
    for (int i = 0; i < SPHERES; i++) {
        dvi_body_def bd = dvi_default_body_def();
        bd.mass = 1.0;
        bd.inertia[0] = bd.inertia[4] = bd.inertia[8] = 0.4 * 0.1 * 0.1;
        bd.position[0] = 0.3 * (i % 2) + 0.002 * (i / 2);
        bd.position[2] = i < 2 ? 0.0999 : 0.3054 + 0.0005 * i; /* they land after a few steps: buffers grow mid-run */
        if ((st = dvi_body_create(w, &bd, &b[i])) != DVI_OK) return st;
        dvi_shape_def sphere = dvi_default_shape_def();
        sphere.type = DVI_SHAPE_SPHERE;
        sphere.radius = 0.1;
        if ((st = dvi_shape_create(w, b[i], &sphere, &sid)) != DVI_OK) return st;
    }
    dvi_joint_def jd = dvi_default_joint_def();
    jd.type = DVI_JOINT_DISTANCE;
    jd.body_a = b[0];
    jd.body_b = b[1];
    jd.anchor[2] = jd.anchor_b[2] = 0.0999;
    jd.anchor_b[0] = 0.3;
    dvi_joint_id jid;
    return dvi_joint_create(w, &jd, &jid);
}

static void state_of(const dvi_world* w, double x[SPHERES][19])
{
    for (int32_t i = 0; i < SPHERES; i++) {
        dvi_body_id id;
        assert_int_equal(dvi_world_body_at(w, i + 1, &id), DVI_OK);
        test_body_state(w, id, x[i]);
    }
}

static void reference(dvi_method method, double x[SPHERES][19])
{
    dvi_world* w = NULL;
    assert_int_equal(build(method, NULL, &w), DVI_OK);
    for (int k = 0; k < STEPS; k++) assert_true(dvi_world_step(w, 1e-3) >= 0);
    state_of(w, x);
    dvi_world_destroy(w);
}

static void test_world_counting(void** state)
{
    (void)state;
    for (int method = 0; method < 2; method++) {
        const dvi_method m = method ? DVI_METHOD_DEM : DVI_METHOD_DVI;
        double ref[SPHERES][19], x[SPHERES][19];
        reference(m, ref);
        counter c;
        const dvi_allocator a = counting(&c);
        dvi_world* w = NULL;
        assert_int_equal(build(m, &a, &w), DVI_OK);
        for (int k = 0; k < STEPS; k++) assert_true(dvi_world_step(w, 1e-3) >= 0);
        assert_true(dvi_world_get_stats(w).contacts > 0);
        state_of(w, x);
        assert_memory_equal(x, ref, sizeof x); /* the same bits */
        /* a checkpoint restored: its reads grow the world's arrays through the allocator too */
        void* blob = NULL;
        size_t size = 0;
        assert_int_equal(dvi_world_save_state(w, &blob, &size), DVI_OK);
        assert_int_equal(dvi_world_load_state(w, blob, size), DVI_OK);
        free(blob); /* documented: libc's */
        assert_true(c.allocs > 0);
        assert_true(c.live > 0);
        dvi_world_destroy(w);
        assert_int_equal(c.live, 0);
        printf("%s world: %ld allocations, %ld reallocations, all freed\n", method ? "DEM" : "DVI", c.allocs,
               c.reallocs);
    }
}

/* Two threads, the collision's parallel path taken at any size: its
 * per-thread buffers come from the allocator too. */
static void test_world_counting_threads(void** state)
{
    (void)state;
    double x[2][SPHERES][19];
    counter c;
    const dvi_allocator a = counting(&c);
    for (int run = 0; run < 2; run++) {
        dvi_world* w = NULL;
        assert_int_equal(build(DVI_METHOD_DVI, run ? &a : NULL, &w), DVI_OK);
        dvi_solver_settings ss = dvi_default_solver_settings();
        ss.threads = 2;
        ss.tolerance = 1e-8;
        ss.max_iterations = 2000;
        ss.warm_start = true;
        assert_int_equal(dvi_world_set_solver(w, "apgd", &ss), DVI_OK);
        col_set_parallel_min(w->collision, 1);
        for (int k = 0; k < STEPS; k++) assert_true(dvi_world_step(w, 1e-3) >= 0);
        state_of(w, x[run]);
        dvi_world_destroy(w);
    }
    assert_memory_equal(x[0], x[1], sizeof x[0]);
    assert_true(c.allocs > 0);
    assert_int_equal(c.live, 0);
    printf("DVI world, 2 threads: %ld allocations, %ld reallocations, all freed\n", c.allocs, c.reallocs);
}

static void test_world_allocator_half_set(void** state)
{
    (void)state;
    counter c;
    dvi_world_def wd = dvi_default_world_def();
    wd.allocator = counting(&c);
    wd.allocator.realloc = NULL;
    dvi_world* w = NULL;
    assert_int_equal(dvi_world_create(&wd, &w), DVI_ERR_INVALID_ARG);
    assert_null(w);
    assert_int_equal(c.calls, 0);
}

static void test_world_countdown(void** state)
{
    (void)state;
    long points = 0;
    for (int method = 0; method < 2; method++) {
        const dvi_method m = method ? DVI_METHOD_DEM : DVI_METHOD_DVI;
        double ref[SPHERES][19], x[SPHERES][19];
        reference(m, ref);
        long walked = 0, in_steps = 0;
        for (long fail = 1;; fail++) {
            counter c;
            const dvi_allocator a = counting(&c);
            c.fail_at = fail;
            dvi_world* w = NULL;
            dvi_status st = build(m, &a, &w);
            if (st != DVI_OK) {
                assert_true(c.failed);
                assert_int_equal(st, DVI_ERR_NOMEM);
            } else {
                for (int k = 0; k < STEPS; k++) {
                    const long before = c.failed;
                    st = dvi_world_step(w, 1e-3);
                    if (c.failed && !before) {
                        if (st != DVI_ERR_NOMEM)
                            printf("%s: allocation %ld failed in step %d, which returned %d (%s)\n",
                                   method ? "DEM" : "DVI", fail, k, (int)st, dvi_world_last_error(w));
                        assert_int_equal(st, DVI_ERR_NOMEM);
                        if (!strstr(dvi_world_last_error(w), "out of memory"))
                            printf("allocation %ld: the message does not say why: %s\n", fail, dvi_world_last_error(w));
                        assert_non_null(strstr(dvi_world_last_error(w), "out of memory"));
                        in_steps++;
                        /* the state is unchanged: the step taken again (nothing fails now) */
                        st = dvi_world_step(w, 1e-3);
                    }
                    assert_true(st >= 0);
                }
                state_of(w, x);
                if (memcmp(x, ref, sizeof x) != 0) printf("%s: allocation %ld failed: not the same bits\n", method ? "DEM" : "DVI", fail);
                assert_memory_equal(x, ref, sizeof x);
            }
            dvi_world_destroy(w);
            assert_int_equal(c.live, 0);
            if (!c.failed) break;
            walked++;
        }
        assert_true(walked > 0);
        printf("%s world countdown: %ld allocation points walked (%ld of them in steps), every one DVI_ERR_NOMEM, "
               "the world destroyed without a leak and, after a failed step, the same bits\n",
               method ? "DEM" : "DVI", walked, in_steps);
        points += walked;
    }
    assert_true(points > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_solver_counting),
        cmocka_unit_test(test_solver_allocator_half_set),
        cmocka_unit_test(test_solver_countdown),
        cmocka_unit_test(test_world_counting),
        cmocka_unit_test(test_world_counting_threads),
        cmocka_unit_test(test_world_allocator_half_set),
        cmocka_unit_test(test_world_countdown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
