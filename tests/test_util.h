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

#endif
