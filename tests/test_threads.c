/* The same results for any thread count: the whole world's state (every
 * body's pose and velocity, the warm-start history, the joints' impulses,
 * dvi_model_save_state) after a few steps of a granular scene with the rover
 * is byte-identical for 1, 2 and 3 threads, with DVI (the solver's passes,
 * the parallel collision and assembly) and with DEM, the fallback to one
 * thread off so that every step runs on the threads asked for; and with the
 * fallback on, whichever threads its timing picks.
 *
 * The fallback's decisions (world_internal.h, wld_thread_guard) are checked
 * on given step times and CPU times, not measured ones.
 *
 * Scenes: examples/scenes/rover_obstacle_granular_strip_hex.json (the rover
 * on a strip of 4,821 spheres: about 25,000 contacts, above every threshold
 * at which a pass goes parallel) and its DEM twin _dem.json; STEPS steps from
 * the scene's start (fewer under the sanitizers). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dvi/scene.h"
#include "rover_probes.h"
#include "test_util.h"
#include "world_internal.h"

#ifdef SANITIZED
#define STEPS 2
#else
#define STEPS 3
#endif

/* FNV-1a, 64 bits. */
static uint64_t hash_bytes(const void* data, size_t n)
{
    const unsigned char* p = data;
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 1099511628211ull;
    }
    return h;
}

/* Steps the scene with `threads` threads, the fallback to one thread on or
 * off; returns the state blob (caller frees). */
static void* run_with(const char* path, int threads, bool fallback, int steps, size_t* size)
{
    dvi_scene* s = NULL;
    dvi_scene_errors e;
    assert_int_equal(dvi_scene_load(path, &s, &e), DVI_OK);
    dvi_scene_overrides o;
    memset(&o, 0, sizeof o);
    o.threads = threads;
    assert_int_equal(dvi_scene_apply_overrides(s, &o, &e), DVI_OK);
    dvi_model* m = NULL;
    char msg[256];
    assert_int_equal(dvi_model_create(s, &m, msg, sizeof msg), DVI_OK);
    assert_int_equal(dvi_world_set_thread_fallback(dvi_model_world(m), fallback), DVI_OK);
    int64_t contacts = 0, on_one = 0;
    for (int k = 0; k < steps; k++) {
        assert_true(dvi_model_step(m) >= 0);
        const dvi_step_stats st = dvi_world_get_stats(dvi_model_world_const(m));
        contacts = st.contacts;
        if (!fallback) assert_int_equal(st.threads, threads); /* every step on the threads asked for */
        assert_true(st.threads == threads || (fallback && st.threads == 1));
        on_one += st.threads < threads;
        assert_int_equal(st.fallback_steps, on_one);
    }
    void* data = NULL;
    assert_int_equal(dvi_model_save_state(m, &data, size), DVI_OK);
    print_message("%s, %d thread(s): %d steps, %lld contacts in the last, state %zu bytes, hash %016llx\n", path,
                  threads, steps, (long long)contacts, *size, (unsigned long long)hash_bytes(data, *size));
    dvi_model_destroy(m);
    dvi_scene_destroy(s);
    return data;
}

static void* run(const char* path, int threads, int steps, size_t* size)
{
    return run_with(path, threads, false, steps, size);
}

static void same_for_threads(const char* rel)
{
    const char* path = SRC_PATH(rel);
    size_t n1 = 0, n2 = 0, n3 = 0;
    void* a = run(path, 1, STEPS, &n1);
    void* b = run(path, 2, STEPS, &n2);
    void* c = run(path, 3, STEPS, &n3);
    assert_int_equal(n1, n2);
    assert_int_equal(n1, n3);
    assert_true(memcmp(a, b, n1) == 0);
    assert_true(memcmp(a, c, n1) == 0);
    free(a);
    free(b);
    free(c);
}

static void test_dvi_strip(void** state)
{
    (void)state;
    same_for_threads("examples/scenes/rover_obstacle_granular_strip_hex.json");
}

static void test_dem_strip(void** state)
{
    (void)state;
    same_for_threads("examples/scenes/rover_obstacle_granular_strip_hex_dem.json");
}

/* With the fallback on (the default), two threads give the bits of one,
 * whichever steps its timing runs on one thread. */
static void test_dvi_strip_fallback(void** state)
{
    (void)state;
    const char* path = SRC_PATH("examples/scenes/rover_obstacle_granular_strip_hex.json");
    size_t n1 = 0, n2 = 0;
    void* a = run(path, 1, STEPS, &n1);
    void* b = run_with(path, 2, true, STEPS, &n2);
    assert_int_equal(n1, n2);
    assert_true(memcmp(a, b, n1) == 0);
    free(a);
    free(b);
}

/* Notes a step of `wall` seconds on the threads the guard gives (of 2), the
 * process taking eff_one × wall CPU seconds on one thread, eff × 2 × wall on
 * two; returns the threads it ran on. */
static int guard_step_cpu(wld_thread_guard* g, double wall_one, double wall_two, double eff_one, double eff)
{
    const int nt = wld_guard_threads(g, 2, true);
    const double wall = nt == 1 ? wall_one : wall_two;
    wld_guard_note(g, 2, nt, wall, (nt == 1 ? eff_one : eff * 2.0) * wall);
    return nt;
}

static int guard_step(wld_thread_guard* g, double wall_one, double wall_two, double eff)
{
    return guard_step_cpu(g, wall_one, wall_two, 1.0, eff);
}

/* The fallback's decisions on given times (2 threads asked for): on a
 * machine where the two threads run (CPU 1.96 s per wall second, as
 * measured idle) it never tries one thread; with one core busy (CPU 1.2 s
 * per second, the step 4.3 times slower on two threads than on one, the
 * figures of docs/performance.md) it runs on one thread from the third step
 * (the first sets the mean, the second is slow and shows the CPU short, the
 * third is the trial), and tries two threads again after 16 steps, then
 * 32, 64; when the core is free again the trial on two threads wins and the
 * steps go back to two. Off, or with one thread asked for, nothing changes. */
static void test_guard_policy(void** state)
{
    (void)state;
    wld_thread_guard g = {0};
    for (int k = 0; k < 2000; k++) assert_int_equal(guard_step(&g, 0.45, 0.25, 0.98), 2);
    assert_int_equal(g.fewer, 0);

    g = (wld_thread_guard){0};
    int threads[128];
    for (int k = 0; k < 128; k++) threads[k] = guard_step(&g, 0.562, 2.413, 0.6);
    assert_int_equal(threads[0], 2);
    assert_int_equal(threads[1], 2);
    assert_int_equal(threads[2], 1); /* the trial, kept */
    /* trials on two threads 16, 32, 64 steps after the last */
    int trials[3], nt = 0;
    for (int k = 3; k < 128; k++)
        if (threads[k] == 2) {
            assert_true(nt < 3);
            trials[nt++] = k;
        }
    assert_int_equal(nt, 3);
    assert_int_equal(trials[0], 19);
    assert_int_equal(trials[1], 52);
    assert_int_equal(trials[2], 117);
    assert_int_equal(g.fewer, 128 - 5);
    /* the core is free again from step 128: the next trial on two threads
     * (step 246, 128 steps after the last) is faster, and kept */
    int k = 0;
    while (guard_step(&g, 0.45, 0.25, 0.98) == 1) assert_true(++k <= GUARD_LAST);
    assert_int_equal(k, 246 - 128);
    for (int j = 0; j < 100; j++) assert_int_equal(guard_step(&g, 0.45, 0.25, 0.98), 2);

    /* one thread as fast as two (a small scene, the second thread idle):
     * trials on one thread at steps 2, 35, 100, 229, 486, 999 (32, 64, …
     * steps apart), none kept */
    g = (wld_thread_guard){0};
    int ones = 0;
    for (int j = 0; j < 2000; j++) ones += guard_step(&g, 0.010, 0.010, 0.5) == 1;
    assert_false(g.one);
    assert_int_equal(ones, 6);
    assert_int_equal(g.fewer, 6);

    /* a machine so loaded that one thread runs 0.4 of the time (measured:
     * 0.30–0.37 at a load average of 5.5 on 2 cores): after the switch to
     * one thread no trial on two, whose step there took up to 17 times
     * one's (the 10,000-sphere bed, docs/performance.md) */
    g = (wld_thread_guard){0};
    int twos = 0;
    for (int j = 0; j < 2000; j++) twos += guard_step_cpu(&g, 1.0, 12.0, 0.4, 0.3) == 2;
    assert_int_equal(twos, 2); /* the first two steps */
    assert_true(g.one);

    g = (wld_thread_guard){0};
    for (int j = 0; j < 100; j++) {
        assert_int_equal(wld_guard_threads(&g, 2, false), 2);
        assert_int_equal(wld_guard_threads(&g, 1, true), 1);
        wld_guard_note(&g, 1, 1, 0.5, 0.5);
    }
    assert_int_equal(g.steps, 0);
}

int main(void)
{
    if (rover_register_probes() != DVI_OK) return 1; /* the rover scenes' probe kinds */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dvi_strip),
        cmocka_unit_test(test_dem_strip),
        cmocka_unit_test(test_dvi_strip_fallback),
        cmocka_unit_test(test_guard_policy),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
