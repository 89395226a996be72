/* The same results for any thread count: the whole world's state (every
 * body's pose and velocity, the warm-start history, the joints' impulses,
 * dvi_model_save_state) after a few steps of a granular scene with the rover
 * is byte-identical for 1, 2 and 3 threads, with DVI (the solver's passes,
 * the parallel collision and assembly) and with DEM.
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

/* Steps the scene with `threads` threads; returns the state blob (caller frees). */
static void* run(const char* path, int threads, int steps, size_t* size)
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
    int64_t contacts = 0;
    for (int k = 0; k < steps; k++) {
        assert_true(dvi_model_step(m) >= 0);
        contacts = dvi_world_get_stats(dvi_model_world_const(m)).contacts;
    }
    void* data = NULL;
    assert_int_equal(dvi_model_save_state(m, &data, size), DVI_OK);
    print_message("%s, %d thread(s): %d steps, %lld contacts in the last, state %zu bytes, hash %016llx\n", path,
                  threads, steps, (long long)contacts, *size, (unsigned long long)hash_bytes(data, *size));
    dvi_model_destroy(m);
    dvi_scene_destroy(s);
    return data;
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

int main(void)
{
    if (rover_register_probes() != DVI_OK) return 1; /* the rover scenes' probe kinds */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dvi_strip),
        cmocka_unit_test(test_dem_strip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
