/* DVI and DEM settle the same pile of spheres to the same bed height.
 *
 * The pile of examples/sphere_pile.h (r = 0.02 m, glass, μ = 0.4, box side
 * d·round(∛N)), rebuilt by bench/granular_bed.c with the contact
 * formulation as a parameter, falls from the same loose lattice twice:
 *   - DVI: APGD, tolerance 1e-6, at most 500 iterations per step, step
 *     2 ms, spinning friction 2e-5 m, restitution 0 (the sphere_pile.h and
 *     tests/test_pile.c settings);
 *   - DEM: Hertz, E = 1e8 Pa, ν = 0.3, restitution 0 (taken as 0.01),
 *     friction 0.4, step 2e-5 s (no spinning friction in DEM).
 * Each run stops when KE/peak has stayed below 1e-4 for 0.1 s (DVI: with
 * converged solves), or at 3 s. The bed height 2·mean(z) of the two runs
 * must agree within 3% of the DVI height. Why these DEM settings, and what
 * happens with longer DEM steps, is in docs/dvi-vs-dem.md.
 *
 * Default: 216 spheres (0.24 m box). Measured: DVI 0.2560 m, DEM 0.2542 m.
 * Under the sanitizers (test_util.h): 125 spheres (0.20 m box; measured in
 * the optimised build: DEM − DVI −0.58 %).
 * Environment: DVI_VS_DEM_SPHERES (the 1,000-sphere comparison is the
 * benchmark 'dvi_vs_dem_1000': `meson test --benchmark`). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "granular_bed.h"
#include "test_util.h"

static void test_bed_heights(void** state)
{
    (void)state;
#ifdef SANITIZED
    int n = 125;
#else
    int n = 216;
#endif
    const char* env = getenv("DVI_VS_DEM_SPHERES");
    if (env && atoi(env) > 0) n = atoi(env);
    const gbed_config cfg[2] = {gbed_pile_dvi_config(n), gbed_pile_dem_config(n)};
    const double dt[2] = {GBED_PILE_DVI_DT, GBED_PILE_DEM_DT};
    const char* names[2] = {"DVI (APGD)", "DEM (Hertz, E = 1e8 Pa)"};
    gbed_settle_result res[2];
    for (int k = 0; k < 2; k++) {
        gbed b;
        char err[256];
        int rc = gbed_create(&b, &cfg[k], NULL, err, sizeof err);
        if (rc != 0) print_error("gbed_create: %s\n", err);
        assert_int_equal(rc, 0);
        gbed_settle(&b, dt[k], GBED_PILE_SECONDS, GBED_PILE_RATIO, GBED_PILE_HOLD, &res[k]);
        const gbed_settle_result* s = &res[k];
        if (s->step_error) print_error("%s: %s\n", names[k], dvi_world_last_error(b.world));
        printf("%s: %d spheres, h = %g s: %d steps to t = %.3f s (%s, KE/peak %.1e), wall %.1f s; bed height "
               "%.4f m, max overlap %.3f%% of r, %d escaped\n",
               names[k], n, dt[k], s->steps, s->time, s->settled ? "settled" : "time limit", s->final_ratio,
               s->wall_seconds, s->bed_height, 100 * s->penetration_max / cfg[k].radius, s->escaped);
        gbed_destroy(&b);
        assert_int_equal(s->step_error, 0);
        assert_int_equal(s->escaped, 0);
        assert_true(s->final_ratio < 1e-4);
    }
    const double diff = (res[1].bed_height - res[0].bed_height) / res[0].bed_height;
    printf("bed height DEM − DVI: %+.2f%% (limit ±3%%)\n", 100 * diff);
    assert_true(fabs(diff) < 0.03);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bed_heights),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
