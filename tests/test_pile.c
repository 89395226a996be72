/* A pile of spheres dropped into a box settles: no sphere escapes, the
 * kinetic energy decays below 1e-6 of its peak, and the bed lies within
 * physical bounds. The scene and the bounds are in examples/sphere_pile.h
 * (public API): r = 0.02 m, density 2500 kg/m³, μ = 0.4, spinning friction
 * 2e-5 m, no rolling friction, no restitution; box side d·round(∛N); step
 * 2 ms.
 *
 * Default: 216 spheres (64 under the sanitizers) in a 0.24 m box (6 × 6 diameters). Bounds for 216:
 * bed height 2·mean(z) between 0.196 m (random close packing) and 0.270 m
 * (loosest bed: random loose packing inside, a jammed monolayer at the
 * boundaries); the interior packing fraction between 0.536 and 0.64, less a
 * 0.02 allowance for the sampling grid (±0.005 on lattices) and the rough
 * free surface. Measured: 0.257 m, interior 0.557.
 *
 * Solver: APGD to a CCP residual of 1e-6 (sphere_pile.h explains why that
 * is enough for a criterion on KE) with at most 500 iterations per step.
 * The cap binds only while the pile is dense and moving; "settled" requires
 * KE/peak < 1e-6 over 0.2 s with every solve in that window converged, so
 * the final energy is that of converged solves. Measured: settled from
 * t = 1.14 s, KE/peak 1.7e-7, 28 s.
 *
 * Without spinning friction 1 in 6 random 216-sphere piles levels off
 * above 1e-6 (a sphere spinning on the floor; "Free modes" in
 * sphere_pile.h). With it, all seven runs tried settle (seeds 1–5 and the
 * default; steps of 1 and 2 ms), at KE/peak 2e-12–6e-7.
 *
 * Environment: DVI_PILE_SPHERES (the required 1,000-sphere pile is the
 * benchmark 'pile_1000': `meson test --benchmark`), DVI_PILE_SOLVER,
 * DVI_PILE_MAX_ITERATIONS (0: the world default). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sphere_pile.h"
#include "test_util.h"

/* Under the sanitizers (test_util.h) 64 spheres in a 0.16 m box (measured
 * in the optimised build: settled from t = 0.95 s, KE/peak 1.3e-8, bed
 * 0.185 m within 0.131 .. 0.190). */
#ifdef SANITIZED
#define PILE_DEFAULT_SPHERES 64
#else
#define PILE_DEFAULT_SPHERES 216
#endif

static void test_pile_settles(void** state)
{
    (void)state;
    int n = PILE_DEFAULT_SPHERES;
    const char* env = getenv("DVI_PILE_SPHERES");
    if (env && atoi(env) > 0) n = atoi(env);
    pile_config c = pile_default_config(n);
    const char* solver = getenv("DVI_PILE_SOLVER");
    if (solver && solver[0]) c.bed.solver = solver;
    c.bed.max_iterations = 500;
    const char* iters = getenv("DVI_PILE_MAX_ITERATIONS");
    if (iters && iters[0]) c.bed.max_iterations = atoi(iters);

    pile p;
    char err[256];
    int rc = pile_create(&p, &c, err, sizeof err);
    if (rc != 0) print_error("pile_create: %s\n", err);
    assert_int_equal(rc, 0);
    pile_result r;
    pile_run(&p, NULL, NULL, &r);
    printf("pile: %d spheres (%s), box %.3f m: %d steps to t = %.3f s, %.2f ms/step (wall %.1f s), max contacts %d\n",
           n, c.bed.solver, p.bed.side, r.steps, r.time, 1e3 * r.wall_per_step, r.wall_seconds, r.max_contacts);
    printf("pile: peak KE %.4e J at t = %.3f s, final KE %.3e J, KE/peak %.3e (settled window from t = %.3f s)\n",
           r.peak_ke, r.peak_time, r.final_ke, r.final_ratio, r.settle_time);
    printf("pile: %d escaped, bed height %.4f m (bounds %.4f .. %.4f), top %.4f m, interior packing fraction %.3f, "
           "max penetration %.2e m, largest loaded gap %.1e m\n",
           r.escaped, r.bed_height, r.h_rcp, r.h_loose, r.top, r.phi_bulk, r.penetration_max, r.loaded_gap_max);
    printf("pile: %d steps not converged, max residual %.2e\n", r.not_converged, r.residual_max);
    pile_destroy(&p);

    assert_int_equal(r.step_error, 0);
    assert_int_equal(r.escaped, 0);
    assert_true(r.settled);
    assert_true(r.final_ratio < 1e-6);
    /* contacts: overlap stays far below the radius; at rest, a contact that
     * carries force is closed (a force across an open gap would hold the bed up) */
    assert_true(r.penetration_max < 1e-3 * c.bed.radius);
    assert_true(r.loaded_gap_max < 1e-5);
    assert_true(r.bed_height >= r.h_rcp);
    assert_true(r.bed_height <= r.h_loose);
    assert_true(r.phi_bulk >= PILE_PHI_RLP - 0.02);
    assert_true(r.phi_bulk <= PILE_PHI_RCP + 0.02);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pile_settles),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
