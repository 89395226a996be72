/* Shared test helpers (cmocka 1.1 has no double comparison). */
#ifndef DVI_TEST_UTIL_H
#define DVI_TEST_UTIL_H
#include <math.h>
#include <stdio.h>

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
