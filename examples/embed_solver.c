/* Embedding the dvicontact solver layer in your own multibody code.
 *
 * Your code owns the bodies. Each time step it hands the library a
 * cone-complementarity problem built from its own contact Jacobians:
 *
 *   D        one column per constraint row, 6 rows per body (linear x,y,z,
 *            then angular x,y,z), world frame: row for direction d at contact
 *            point x of a body with centre c is [d, (x − c) × d];
 *   M⁻¹      one 6×6 block per body (dvi_inv_mass_block builds it);
 *   r        Dᵀ M⁻¹ (M v + h f) + b, the velocities the constraints would see
 *            without impulses (b = Φ/h for contacts with a gap Φ);
 *   blocks   what each group of rows is (friction cone, bilateral, ...).
 *
 * and receives impulses γ, from which v⁺ = v + h M⁻¹ f + M⁻¹ D γ.
 *
 * The scene: a 20 kg crate (1.0 × 0.6 × 0.4 m) on flat ground, touching at
 * its four bottom corners (a statically indeterminate support), friction
 * μ = 0.5, pushed horizontally through its centre. With F = 50 N < μmg
 * = 98.1 N it sticks: the ground's friction impulse is exactly −F h and the
 * crate does not move. With F = 150 N it slides, and the answer shows the
 * one property of the CCP that differs from Coulomb's law: a sliding
 * contact separates with normal velocity u_n = μ‖u_t‖ (the CCP is the convex
 * relaxation of the Coulomb problem; docs/formulation.md). So in the step the
 * crate gains v_x = h (F/m − μ g)/(1 + μ²) and v_z = μ v_x, the normal
 * impulse is m (g h + μ v_x) and the friction impulse μ times that. Once the
 * crate hovers at the gap μ v_x h, the gap term Φ/h of r takes the normal
 * velocity over and the normal impulse returns to m g h: the artifact is an
 * O(h) offset in position, not a wrong friction force.
 * The program checks both answers and exits 0 when they hold to 1e-6.
 *
 * Build against an installed copy:
 *   cc embed_solver.c $(pkg-config --cflags --libs dvicontact) -o embed_solver
 */
#include <dvi/ccp.h>

#include <math.h>
#include <stdio.h>

enum { CONTACTS = 4, ROWS = 3 * CONTACTS, ENTRIES = 6 * ROWS };

/* One step of the crate with push force F (N); returns 0 if the impulses
 * match the analytic answer. */
static int crate_step(const char* solver, double push)
{
    const double m = 20.0, g = 9.81, h = 1e-3, mu = 0.5;
    const double a = 0.5, b = 0.3, hz = 0.2; /* half extents (m) */
    const double c[3] = {0.0, 0.0, hz};     /* centre of mass (m) */

    /* --- the body: inverse mass block --- */
    double inertia[9] = {m / 3.0 * (b * b + hz * hz), 0, 0, 0, m / 3.0 * (a * a + hz * hz), 0, 0, 0,
                         m / 3.0 * (a * a + b * b)};
    double inv_mass[36];
    if (dvi_inv_mass_block(m, inertia, inv_mass) != DVI_OK) return 1;

    /* --- contacts: the four bottom corners, normal +z, tangents x and y --- */
    int32_t colptr[ROWS + 1], rowind[ENTRIES];
    double values[ENTRIES];
    dvi_ccp_block blocks[CONTACTS];
    const double dirs[3][3] = {{0, 0, 1}, {1, 0, 0}, {0, 1, 0}}; /* n, t1, t2 */
    int32_t nz = 0;
    for (int k = 0; k < CONTACTS; k++) {
        double x[3] = {(k & 1) ? a : -a, (k & 2) ? b : -b, 0.0};
        double rho[3] = {x[0] - c[0], x[1] - c[1], x[2] - c[2]};
        blocks[k] = (dvi_ccp_block){DVI_BLOCK_FRICTION, mu, 0.0, 0.0};
        for (int i = 0; i < 3; i++) {
            const double* d = dirs[i];
            double row[6] = {d[0], d[1], d[2], rho[1] * d[2] - rho[2] * d[1], rho[2] * d[0] - rho[0] * d[2],
                             rho[0] * d[1] - rho[1] * d[0]};
            colptr[3 * k + i] = nz;
            for (int q = 0; q < 6; q++) { /* the crate is body 0; the ground is not a body */
                rowind[nz] = q;
                values[nz++] = row[q];
            }
        }
    }
    colptr[ROWS] = nz;
    dvi_csc D = {6, ROWS, colptr, rowind, values};

    /* --- right-hand side r = Dᵀ (v + h M⁻¹ f), crate at rest, b = 0 --- */
    double v_free[6] = {h * push / m, 0.0, -h * g, 0.0, 0.0, 0.0};
    double r[ROWS];
    for (int j = 0; j < ROWS; j++) {
        r[j] = 0.0;
        for (int q = colptr[j]; q < colptr[j + 1]; q++) r[j] += values[q] * v_free[rowind[q]];
    }

    dvi_ccp_problem p = dvi_ccp_problem_empty();
    p.rows = ROWS;
    p.block_count = CONTACTS;
    p.blocks = blocks;
    p.body_count = 1;
    p.D = &D;
    p.inv_mass = inv_mass;
    p.r = r;

    /* --- solve --- */
    dvi_solver_settings s = dvi_default_solver_settings();
    s.tolerance = 1e-10;
    s.max_iterations = 20000;
    double gamma[ROWS];
    dvi_solve_result res = {0};
    dvi_status st = dvi_ccp_solve(&p, solver, &s, gamma, &res);
    if (st < 0) {
        fprintf(stderr, "%s: %s: %s\n", solver, dvi_status_string(st), res.message);
        return 1;
    }

    /* --- use the impulses: totals and the new velocity --- */
    double fn = 0.0, ft = 0.0, dv[6];
    for (int k = 0; k < CONTACTS; k++) {
        fn += gamma[3 * k];
        ft += gamma[3 * k + 1];
    }
    dvi_ccp_velocity(&p, gamma, dv);
    double vx = v_free[0] + dv[0];
    bool sticks = push < mu * m * g;
    double vx_exact = sticks ? 0.0 : h * (push / m - mu * g) / (1.0 + mu * mu);
    double fn_exact = m * (g * h + mu * vx_exact);
    double ft_exact = sticks ? -push * h : -mu * fn_exact;
    printf("%-6s F = %5.1f N: %-9s it %5d  residual %.1e  normal %.6f N s (exact %.6f)  friction %+.6f N s "
           "(exact %+.6f)  v_x %+.3e m/s (exact %+.3e)\n",
           solver, push, dvi_solve_status_string(res.status), res.iterations, res.metrics.residual, fn, fn_exact, ft,
           ft_exact, vx, vx_exact);
    double vz = v_free[2] + dv[2];
    int ok = res.status == DVI_SOLVE_CONVERGED && fabs(fn - fn_exact) <= 1e-6 * fn_exact &&
             fabs(ft - ft_exact) <= 1e-6 * fn_exact && fabs(vx - vx_exact) <= 1e-6 * h * g &&
             fabs(vz - mu * vx_exact) <= 1e-6 * h * g;
    return ok ? 0 : 1;
}

int main(void)
{
    int failures = 0;
    const char* solvers[] = {"apgd", "pgs"};
    for (int i = 0; i < 2; i++) {
        failures += crate_step(solvers[i], 50.0);
        failures += crate_step(solvers[i], 150.0);
    }
    printf("%s\n", failures ? "MISMATCH with the analytic answer" : "all impulses match the analytic answer");
    return failures ? 1 : 0;
}
