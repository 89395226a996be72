/* Shared test helpers (cmocka 1.1 has no double comparison). */
#ifndef DVI_TEST_UTIL_H
#define DVI_TEST_UTIL_H
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The path of `rel` under the directory named by the environment variable
 * `var`: DVI_SOURCE_DIR (the source tree) or DVI_BUILD_DIR (the build tree),
 * which meson test sets (tests/meson.build), so that no path of the build
 * machine is compiled into a test. The strings are interned (one copy per
 * distinct path, kept for the life of the process), so a returned pointer
 * stays valid. A missing variable ends the process with a message. */
static inline const char* test_path_in(const char* var, const char* rel)
{
    typedef struct { const char *var, *rel; char* full; } entry;
    static entry* table = NULL;
    static size_t count = 0, cap = 0;
    for (size_t i = 0; i < count; i++)
        if (strcmp(table[i].var, var) == 0 && strcmp(table[i].rel, rel) == 0) return table[i].full;
    const char* root = getenv(var);
    if (!root || !*root) {
        fprintf(stderr, "%s is not set: run the suites with `meson test` (tests/meson.build sets it)\n", var);
        exit(1);
    }
    if (count == cap) {
        size_t ncap = cap ? 2 * cap : 32;
        entry* t = (entry*)realloc(table, ncap * sizeof *t);
        if (!t) abort();
        table = t;
        cap = ncap;
    }
    size_t n = strlen(root) + strlen(rel) + 2;
    char* full = (char*)malloc(n);
    char* rel_copy = (char*)malloc(strlen(rel) + 1);
    if (!full || !rel_copy) abort();
    snprintf(full, n, rel[0] ? "%s/%s" : "%s%s", root, rel);
    strcpy(rel_copy, rel);
    table[count].var = var;
    table[count].rel = rel_copy;
    table[count].full = full;
    count++;
    return full;
}
#define SRC_PATH(rel) test_path_in("DVI_SOURCE_DIR", (rel))
#define BUILD_PATH(rel) test_path_in("DVI_BUILD_DIR", (rel))
/* The rover reference model (data/rover/README.md). */
#define ROVER_JSON SRC_PATH("data/rover/rocker_bogie_rover.json")

/* SANITIZED: defined in a build with AddressSanitizer (tools/run-tests.sh
 * runs every suite a second time so, at -O1, several times slower than the
 * optimised build). Long physics runs are shorter there or left to the
 * optimised build, which checks their numbers; the sanitizers still see
 * every code path. */
#if defined(__SANITIZE_ADDRESS__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SANITIZED 1
#endif
#endif

/* True when DVI_TEST_LONG is set to a non-empty value other than 0: the
 * long version of a physics run (the benchmarks of tests/meson.build, run by
 * `meson test --benchmark`); the suite runs the short one. */
static inline int test_long(void)
{
    const char* v = getenv("DVI_TEST_LONG");
    return v && v[0] && strcmp(v, "0") != 0;
}

/* Fails with both values printed unless |a − b| ≤ tol. */
#define assert_near(a, b, tol)                                                                                 \
    do {                                                                                                      \
        double a_ = (a), b_ = (b), t_ = (tol);                                                                \
        if (!(fabs(a_ - b_) <= t_)) {                                                                         \
            print_error("%s = %.17g, expected %s = %.17g within %.3g (diff %.3g)\n", #a, a_, #b, b_, t_,   \
                        fabs(a_ - b_));                                                                       \
            fail();                                                                                           \
        }                                                                                                     \
    } while (0)

/* Rotations, row-major 3×3 (tests/test_util.c): R = rotation by angle t
 * about the axis (x, y, z), normalised here (Rodrigues); O = A B (O may be
 * A or B). */
void test_rot_axis(double R[9], double x, double y, double z, double t);
void test_mat_mul(double O[9], const double A[9], const double B[9]);

/* Files (tests/test_util.c, linked into every suite). The whole file as a
 * '\0'-terminated string (its length in *size when size is not NULL), or
 * NULL when it does not open; free it. */
char* test_read_text(const char* path, size_t* size);
/* Writes text to path; fails the test on an error. */
void test_write_text(const char* path, const char* text);
/* Removes path, and below it when it is a directory (a scratch tree). */
void test_remove_tree(const char* path);

/* World-building helpers (tests/test_util.c, linked into every suite).
 * For tests that include dvi/world.h (before this header). */
#ifdef DVI_WORLD_H
/* A plane shape definition (the defaults otherwise) whose outward normal is
 * e_z rotated by theta about the x axis: R_x(θ) e_z = (0, −sin θ, cos θ). */
dvi_shape_def test_plane_def(double theta);
/* A fixed body carrying the plane `plane` (NULL: dvi_default_shape_def's,
 * through the origin with normal e_z); its type is set to a plane. Fails
 * the test if the body or the shape is refused. */
dvi_body_id test_fixed_plane(dvi_world* w, const dvi_shape_def* plane);
/* Attaches shape sd to body b; fails the test if it is refused. */
void test_add_shape(dvi_world* w, dvi_body_id b, const dvi_shape_def* sd);
/* A body's state as 19 numbers: position, orientation (4), velocity,
 * angular velocity, contact force and torque. */
void test_body_state(const dvi_world* w, dvi_body_id b, double x[19]);
#endif

/* The index of the model's probe named `name`; fails the test when there
 * is none. For tests that include dvi/scene.h (before this header). */
#ifdef DVI_SCENE_H
#include <string.h>
static inline int probe_index(const dvi_model* m, const char* name)
{
    for (int32_t p = 0; p < dvi_model_probe_count(m); p++) {
        dvi_probe_info info;
        assert_int_equal(dvi_model_probe_info(m, p, &info), DVI_OK);
        if (strcmp(info.name, name) == 0) return p;
    }
    fail_msg("no probe \"%s\"", name);
    return -1;
}
#endif

#endif
