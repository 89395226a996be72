/* sphere_pile — N spheres (default 1000) dropped into a box settle without
 * any escaping, and their kinetic energy decays below 1e-6 of its peak.
 *
 * Scene (sphere_pile.h): r = 0.02 m, density 2500 kg/m³, μ = 0.4,
 * spinning friction 2e-5 m, no rolling friction, no restitution; box side
 * d·round(∛N) (0.40 m for 1000 spheres), walls 1 m high; step 2 ms. Steps
 * until KE/peak has stayed below 1e-6 for 0.2 s with converged solves, or
 * the time limit (default 6 s). APGD to a residual of 1e-6, at most 2000
 * iterations per step, unless overridden.
 *
 *   sphere_pile [--spheres N] [--solver NAME] [--dt H] [--seconds T]
 *               [--tolerance TOL] [--max-iterations K] [--box L] [--seed S]
 *               [--friction MU] [--rolling M] [--spinning M] [--dump FILE]
 *
 * --rolling/--spinning set the rolling and spinning friction (m) of every
 * shape; --dump writes the final centres (x y z per line).
 *
 * Prints one line per 0.1 s of simulated time, then the summary. Exit status
 * 0 iff no sphere escaped and the final KE/peak < 1e-6. Public API only. */
#include "sphere_pile.h"

#include <dvi/world.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void report(void* user, const pile_sample* s)
{
    (void)user;
    printf("%6.2f  %10.3e  %9.2e  %7d  %7.1f %5d  %9.2e %4d  %9.2e  %8.2f  %5.2f %5.2f %6.3f\n", s->time, s->ke, s->ratio,
           s->contacts, s->iterations_mean, s->iterations_max, s->residual_max, s->not_converged, s->penetration_max,
           1e3 * s->wall_per_step, s->rot_fraction, s->top_fraction, s->top_z);
    fflush(stdout);
}

static void usage(void)
{
    fprintf(stderr, "usage: sphere_pile [--spheres N] [--solver NAME] [--dt H] [--seconds T] [--tolerance TOL]\n"
                    "                   [--max-iterations K] [--box L] [--seed S] [--friction MU] [--rolling M]\n"
                    "                   [--spinning M] [--dump FILE]\n");
}

int main(int argc, char** argv)
{
    pile_config c = pile_default_config(1000);
    const char* dump = NULL;
    for (int i = 1; i < argc; i++) {
        const char* a = argv[i];
        const char* v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v) {
            usage();
            return 2;
        }
        if (!strcmp(a, "--spheres")) c.bed.spheres = atoi(v);
        else if (!strcmp(a, "--solver")) c.bed.solver = v;
        else if (!strcmp(a, "--dt")) c.dt = atof(v);
        else if (!strcmp(a, "--seconds")) c.seconds = atof(v);
        else if (!strcmp(a, "--tolerance")) c.bed.tolerance = atof(v);
        else if (!strcmp(a, "--max-iterations")) c.bed.max_iterations = atoi(v);
        else if (!strcmp(a, "--box")) c.bed.box_side = atof(v);
        else if (!strcmp(a, "--dump")) dump = v;
        else if (!strcmp(a, "--friction")) c.bed.friction = atof(v);
        else if (!strcmp(a, "--rolling")) c.bed.rolling_friction = atof(v);
        else if (!strcmp(a, "--spinning")) c.bed.spinning_friction = atof(v);
        else if (!strcmp(a, "--seed")) c.bed.seed = strtoull(v, NULL, 10);
        else {
            usage();
            return 2;
        }
        i++;
    }
    if (c.bed.spheres < 1 || !(c.dt > 0) || !(c.seconds > 0)) {
        usage();
        return 2;
    }
    pile p;
    char err[256];
    if (pile_create(&p, &c, err, sizeof err) != 0) {
        fprintf(stderr, "sphere_pile: %s\n", err);
        pile_destroy(&p);
        return 1;
    }
    printf("sphere_pile: %d spheres, r = %.3f m, m = %.4f kg, mu = %.2f, box %.3f m, solver %s, dt %.1e s, "
           "tolerance %.0e\n",
           c.bed.spheres, c.bed.radius, p.bed.mass, c.bed.friction, p.bed.side, c.bed.solver, c.dt, c.bed.tolerance > 0 ? c.bed.tolerance : 1e-8);
    printf("  t(s)     KE(J)     KE/peak  contacts  iter(mean max)  residual  !cv  max pen(m)  ms/step  rot   top  top z\n");
    pile_result r;
    pile_run(&p, report, NULL, &r);
    if (r.step_error) fprintf(stderr, "sphere_pile: step failed: %s\n", dvi_error_message());
    printf("steps %d (%.3f s simulated), wall %.1f s (%.2f ms/step), peak KE %.4e J at t = %.3f s\n", r.steps, r.time,
           r.wall_seconds, 1e3 * r.wall_per_step, r.peak_ke, r.peak_time);
    printf("max contacts %d, steps not converged %d, max residual %.2e, max penetration %.2e m\n", r.max_contacts,
           r.not_converged, r.residual_max, r.penetration_max);
    printf("escaped spheres: %d\n", r.escaped);
    printf("final KE %.3e J, KE/peak %.3e (%s; below 1e-6 with converged solves since t = %.3f s)\n", r.final_ke,
           r.final_ratio, r.settled ? "settled" : "NOT settled", r.settle_time);
    printf("bed height 2*mean(z) = %.4f m (bounds %.4f .. %.4f: random close packing .. loosest bed; simple cubic "
           "%.4f), packing fraction %.3f, top of highest sphere %.4f m\n",
           r.bed_height, r.h_rcp, r.h_loose, r.h_sc,
           c.bed.spheres * 4.0 / 3.0 * PILE_PI * pow(c.bed.radius, 3) / (p.bed.side * p.bed.side * r.bed_height), r.top);
    printf("interior packing fraction %.3f (bounds %.3f .. %.3f); force-carrying contacts per sphere %.2f, "
           "largest |gap| of a loaded contact %.1e m\n",
           r.phi_bulk, PILE_PHI_RLP, PILE_PHI_RCP, r.coordination, r.loaded_gap_max);
    if (dump) {
        FILE* f = fopen(dump, "w");
        if (f) {
            for (int i = 0; i < c.bed.spheres; i++) {
                double x[3];
                dvi_body_get_position(p.bed.world, p.bed.balls[i], x);
                fprintf(f, "%.9f %.9f %.9f\n", x[0], x[1], x[2]);
            }
            fclose(f);
        }
    }
    int ok = !r.step_error && r.escaped == 0 && r.final_ratio < 1e-6;
    printf("%s\n", ok ? "PASS" : "FAIL");
    pile_destroy(&p);
    return ok ? 0 : 1;
}
