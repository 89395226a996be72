/* The soil contact model (SCM, <dvi/terrain.h>) against analytic answers,
 * at the soil of Horvat 2024 §6.3 (k_φ 0.82e6 Pa/m, k_c 0.14e6 Pa, n 1,
 * c 0, φ 30°, K 0.01 m, k_e 4e7 Pa/m, r 3e4 Pa·s/m) and the 1 ms step.
 *
 * Plate: a square plate (side a, a whole number of cells) loaded slowly by
 * its weight W sinks to Bekker's z = (p/(k_c/b + k_φ))^(1/n), p = W/a²,
 * b = a/2 (the patch's 2A/P). Grid-resolution argument: a side of m cells
 * covers exactly m × m nodes whatever its offset (no node on an edge), so
 * the nodes carry W on m²Δ² = a² and the hull of their cells is the plate:
 * the grid adds no error; the tolerance, 0.5 %, covers the settling. A
 * plate of 10.5 cells covers 10 or 11 nodes a row: its sinkage must lie
 * between the two grids' answers.
 * Unloading and reloading: a kinematic plate pressed, lifted and pressed
 * again follows Bekker's curve, then the elastic line of slope k_e, and
 * yields again at the previous yield pressure (to one step's travel).
 * Drag: a block on a carriage (prismatic joint, free vertically) dragged at
 * 0.1 m/s: its shear force follows the Janosi build-up of the nodes under
 * it, F(d) = tan φ (W/L)[(L − d)(1 − e^(−d/K)) + d − K(1 − e^(−d/K))]
 * (nodes under it from the start have j = d, those entering at the front
 * less), within tan φ·(W/L)·Δ (one column of nodes) and its mean over
 * whole column periods reaches the Mohr–Coulomb limit less the front band,
 * W tan φ (1 − K/L), within 1 %.
 * Wheel: a cylinder at rest sinks to the depth z₀ where Bekker's pressure
 * under it carries its weight, W = b_w ∫ (k_c/b + k_φ)(z₀ − r + √(r² − x²))ⁿ dx
 * over the chord, b = 2A/P of the contact rectangle; the test integrates it
 * itself. The contact length on the grid is the chord to within one
 * spacing; the tolerance is the spread of z₀ over that length ± Δ.
 * Rolling wheel: the single-wheel rig of the rover study
 * (studies/rover/bw_testbed.c, terrain "scm": the wheel of Ishigami et al.
 * 2007, r 0.09 m, b 0.11 m, 50 N, rω 0.2 m/s, their soil, k_e 4e7, r 3e3,
 * Δ 2.5 mm) at slip 0.3. The soil under a rolling wheel is loaded along
 * Bekker's curve on the front arc (from the bottom to the entry, chord x₁)
 * and unloads along the elastic line behind the bottom, σ = k z₀ −
 * k_e(r − √(r² − x²)), to where that reaches zero (x_r); the damping adds
 * r·ωx on the front arc (the rim sinks at ωx there). W = b_w ∫ σ dx over
 * both arcs gives z₀ (the test integrates and solves it itself, b = 2A/P of
 * the b_w × (x₁ + x_r) rectangle); the steady sinkage must be within 2 %
 * (the grid: 1.0 % at this Δ, 0.5 % at Δ/2). The pressure acts along the
 * rim's normal, so its horizontal part is the compaction resistance
 * R_c = b_w ∫ σ x/√(r² − x²) dx, and passes through the axle; the shear is
 * horizontal, at depths between r cos θ₁ and r below the axle, so its sum
 * H lies in [T/r, T/(r cos θ₁)] and R_c = H − DP in [T/r − DP,
 * T/(r cos θ₁) − DP] (2 % below for the grid). The rig refuses an unknown
 * terrain and a grid coarser than a quarter of the wheel's width.
 * State: a run saved and resumed continues bit-identically, and 1 and 2
 * threads give the same state. Errors: bad parameters, a too-large grid,
 * too many nodes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dvi/output.h"
#include "dvi/scene.h"
#include "dvi/terrain.h"
#include "dvi/world.h"
#include "test_util.h"

#include "bw_testbed.h"

#define H 0.001
#define G 9.81
#define PI 3.14159265358979323846

/* Horvat 2024 §6.3 */
#define K_PHI 0.82e6
#define K_C 0.14e6
#define K_E 4e7
#define R_DAMP 3e4
#define JANOSI 0.01

static dvi_method method = DVI_METHOD_DVI;

static dvi_world* make_world(void)
{
    dvi_world_def wd = dvi_default_world_def();
    wd.method = method;
    dvi_world* w;
    assert_int_equal(dvi_world_create(&wd, &w), DVI_OK);
    return w;
}

static dvi_body_id add_box_body(dvi_world* w, dvi_body_type type, double mass, const double half[3],
                                const double pos[3])
{
    dvi_body_def bd = dvi_default_body_def();
    bd.type = type;
    bd.mass = mass;
    const double a = 2 * half[0], b = 2 * half[1], c = 2 * half[2];
    bd.inertia[0] = mass * (b * b + c * c) / 12;
    bd.inertia[4] = mass * (a * a + c * c) / 12;
    bd.inertia[8] = mass * (a * a + b * b) / 12;
    memcpy(bd.position, pos, sizeof bd.position);
    dvi_body_id id;
    assert_int_equal(dvi_body_create(w, &bd, &id), DVI_OK);
    dvi_shape_def sd = dvi_default_shape_def();
    dvi_box box = {{half[0], half[1], half[2]}};
    dvi_shape_id shape_id;
    dvi_status st = dvi_world_add_box(w, id, &sd, &box, &shape_id);
    if (st != DVI_OK) printf("%s\n", dvi_error_message());
    assert_int_equal(st, DVI_OK);
    return id;
}

static dvi_scm* add_soil(dvi_world* w, double spacing)
{
    dvi_scm_def d = dvi_default_scm_def();
    d.origin[0] = d.origin[1] = -0.5;
    d.size[0] = d.size[1] = 1.0;
    d.spacing = spacing;
    dvi_scm* s;
    assert_int_equal(dvi_scm_create(w, &d, &s), DVI_OK);
    return s;
}

/* Holds the body up with W (1 + cos(πt/T))/2, released smoothly over T. */
static void step_ramped(dvi_world* w, dvi_body_id b, double W, double T, int steps)
{
    for (int i = 0; i < steps; i++) {
        double t = dvi_world_time(w);
        double up = t < T ? 0.5 * W * (1.0 + cos(PI * t / T)) : 0.0;
        assert_int_equal(dvi_body_set_applied_force(w, b, (double[3]){0, 0, up}, NULL), DVI_OK);
        dvi_status st = dvi_world_step(w, H);
        assert_true(st == DVI_OK || st == DVI_NOT_CONVERGED);
    }
}

static double plate_sinkage(double half, double cx, double mass, dvi_scm_stats* stats)
{
    dvi_world* w = make_world();
    const double hz = 0.025;
    dvi_body_id b = add_box_body(w, DVI_BODY_DYNAMIC, mass, (double[3]){half, half, hz}, (double[3]){cx, cx, hz});
    dvi_scm* s = add_soil(w, 0.02);
    step_ramped(w, b, mass * G, 1.0, 2500);
    double x[3], v[3];
    dvi_body_get_position(w, b, x);
    dvi_body_get_velocity(w, b, v);
    assert_true(fabs(v[2]) < 1e-4);
    *stats = dvi_scm_get_stats(s);
    dvi_world_destroy(w);
    return hz - x[2];
}

static double bekker_z(double p, double b)
{
    return p / (K_C / b + K_PHI); /* n = 1 */
}

static void test_plate_bekker_sinkage(void** state)
{
    (void)state;
    const double M = 20.0, W = M * G, a = 0.2;
    dvi_scm_stats st;
    /* centred off the nodes by 0.01 m: exactly 10 × 10 nodes under it */
    double z = plate_sinkage(0.5 * a, 0.01, M, &st);
    double expect = bekker_z(W / (a * a), a / 2);
    printf("plate %.2f m, %.0f N: sinkage %.6f m, Bekker %.6f m (%.3f %%); %d patch(es), b = %.4f m, %lld contacts\n",
           a, W, z, expect, 100 * (z / expect - 1), st.patches, st.min_b, (long long)st.contacts);
    assert_int_equal(st.contacts, 100);
    assert_int_equal(st.patches, 1);
    assert_true(fabs(st.min_b - a / 2) < 1e-12);
    assert_true(fabs(z / expect - 1) < 0.005);

    /* a side of 10.5 cells: 10 or 11 nodes a row, b between */
    const double a2 = 0.21;
    double z2 = plate_sinkage(0.5 * a2, 0.0, M, &st);
    double z_lo = bekker_z(W / (0.22 * 0.22), 0.11), z_hi = bekker_z(W / (0.2 * 0.2), 0.10);
    double z_true = bekker_z(W / (a2 * a2), a2 / 2);
    printf("plate %.2f m: sinkage %.6f m on %lld nodes, grid bounds [%.6f, %.6f] m, continuous Bekker %.6f m\n", a2, z2,
           (long long)st.contacts, z_lo, z_hi, z_true);
    assert_true(z2 > z_lo * 0.995 && z2 < z_hi * 1.005);
}

/* An initial height field: soil raised to 0.05 m, flat over |y| ≤ 0.2 m and
 * falling 1 in 20 beyond: the plate set on the raised part sinks the same
 * Bekker depth below it, and the nodes keep their initial heights. */
static void test_plate_on_heights(void** state)
{
    (void)state;
    const double M = 20.0, W = M * G, a = 0.2, hz = 0.025, top = 0.05;
    dvi_world* w = make_world();
    dvi_body_id b = add_box_body(w, DVI_BODY_DYNAMIC, M, (double[3]){a / 2, a / 2, hz},
                                 (double[3]){0.01, 0.01, top + hz});
    dvi_scm_def d = dvi_default_scm_def();
    d.origin[0] = d.origin[1] = -0.5;
    const int n = 51; /* 50 cells a side */
    double* heights = malloc((size_t)n * n * sizeof *heights);
    assert_non_null(heights);
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++) {
            const double y = -0.5 + 0.02 * j; /* flat top over |y| <= 0.2, falling 1 in 20 beyond */
            heights[j * n + i] = top - (fabs(y) > 0.2 ? 0.05 * (fabs(y) - 0.2) : 0.0);
        }
    d.heights = heights;
    dvi_scm* s;
    assert_int_equal(dvi_scm_create(w, &d, &s), DVI_OK);
    free(heights); /* copied */
    step_ramped(w, b, W, 1.0, 2500);
    double x[3];
    dvi_body_get_position(w, b, x);
    const double z = top + hz - x[2], expect = bekker_z(W / (a * a), a / 2);
    dvi_scm_node nd;
    assert_int_equal(dvi_scm_get_node(s, 25, 25, &nd), DVI_OK);
    printf("plate on a height field at %.2f m: sinkage %.6f m below it (Bekker %.6f m); node (25, 25) level %.6f m "
           "from %.6f m\n", top, z, expect, nd.level, nd.level_initial);
    assert_true(fabs(z / expect - 1) < 0.005);
    assert_true(nd.level_initial == top && fabs(nd.level - (top - z)) < 1e-6);
    assert_int_equal(dvi_scm_get_node(s, 25, 0, &nd), DVI_OK);
    assert_true(fabs(nd.level_initial - (top - 0.05 * 0.3)) < 1e-15 && !nd.touched);
    dvi_world_destroy(w);
}

/* The same in the DEM method: the soil is a force element of both steps. */
static void test_plate_bekker_sinkage_dem(void** state)
{
    (void)state;
    method = DVI_METHOD_DEM;
    const double M = 20.0, W = M * G, a = 0.2;
    dvi_scm_stats st;
    double z = plate_sinkage(0.5 * a, 0.01, M, &st);
    method = DVI_METHOD_DVI;
    double expect = bekker_z(W / (a * a), a / 2);
    printf("DEM: plate %.2f m, %.0f N: sinkage %.6f m, Bekker %.6f m (%.3f %%)\n", a, W, z, expect,
           100 * (z / expect - 1));
    assert_true(fabs(z / expect - 1) < 0.005);
}

/* A kinematic plate pressed to 3 mm, lifted 2 mm, pressed to 5 mm. */
static void test_unload_reload(void** state)
{
    (void)state;
    dvi_world* w = make_world();
    const double a = 0.2, hz = 0.025, A = a * a, V = 0.01, k = K_C / (a / 2) + K_PHI;
    dvi_body_id b = add_box_body(w, DVI_BODY_KINEMATIC, 1.0, (double[3]){a / 2, a / 2, hz}, (double[3]){0.01, 0.01, hz});
    dvi_scm* s = add_soil(w, 0.02);
    double s_max = 0.0, s_p = 0.0, worst = 0.0, reyield_at = -1.0, s_max1 = 0.0;
    int phase_steps[3] = {300, 200, 400};
    double speeds[3] = {-V, V, -V};
    bool elastic_seen = false, free_seen = false;
    for (int ph = 0; ph < 3; ph++) {
        assert_int_equal(dvi_body_set_velocity(w, b, (double[3]){0, 0, speeds[ph]}, (double[3]){0, 0, 0}), DVI_OK);
        for (int i = 0; i < phase_steps[ph]; i++) {
            double x[3];
            dvi_body_get_position(w, b, x);
            assert_int_equal(dvi_world_step(w, H), DVI_OK);
            double f[3];
            dvi_body_get_step_force(w, b, f, NULL);
            double sink = hz - x[2]; /* the plate's depth at the start of the step */
            double vc = -speeds[ph]; /* compression speed */
            double sigma = 0.0;
            bool plastic = false;
            if (sink > 0.0) {
                double trial = K_E * (sink - s_p);
                if (trial > 0.0) {
                    sigma = trial;
                    if (trial > k * s_max && k * sink < trial) {
                        sigma = k * sink;
                        plastic = true;
                    }
                }
            }
            if (plastic) {
                if (ph == 2 && reyield_at < 0) reyield_at = sink;
                s_max = sink;
                s_p = sink - k * sink / K_E;
            }
            if (ph == 1 && sigma > 0.0 && !plastic) elastic_seen = true;
            if (ph == 1 && sigma == 0.0) free_seen = true;
            if (ph == 1) s_max1 = s_max;
            double expect = sigma > 0.0 ? fmax(0.0, sigma + R_DAMP * vc) * A : 0.0;
            double e = fabs(f[2] - expect);
            if (e > worst) worst = e;
        }
    }
    dvi_scm_node nd;
    assert_int_equal(dvi_scm_get_node(s, 25, 25, &nd), DVI_OK);
    printf("unload/reload: largest |F - F_expected| = %.3e N (peak %.1f N); plastic sinkage %.6f m (node %.6f m), "
           "re-yield at %.6f m vs previous maximum %.6f m; yield pressure %.1f Pa\n",
           worst, k * s_max * A, s_p, nd.sinkage_plastic, reyield_at, s_max1, nd.yield_pressure);
    assert_true(elastic_seen && free_seen);
    assert_true(worst < 1e-6 * k * s_max * A);
    assert_true(fabs(nd.sinkage_plastic - s_p) < 1e-12);
    assert_true(fabs(nd.yield_pressure - k * s_max) < 1e-6 * k * s_max);
    /* reloading yields once past the old maximum: within one step's travel */
    assert_true(s_max1 > 0.0029 && reyield_at > s_max1 && reyield_at < s_max1 + V * H * 1.001);
    dvi_world_destroy(w);
}

/* Bulldozing: a kinematic plate pressed 20 mm into the soil; the volume
 * its nodes lost is found on the rim around it (conserved to rounding),
 * and erosion leaves no step between free neighbours much above Δ tan θ_r. */
static void test_bulldozing(void** state)
{
    (void)state;
    dvi_world* w = make_world();
    const double a = 0.2, hz = 0.025, V = 0.02, D = 0.02;
    dvi_body_id b = add_box_body(w, DVI_BODY_KINEMATIC, 1.0, (double[3]){a / 2, a / 2, hz}, (double[3]){0.01, 0.01, hz});
    dvi_scm_def d = dvi_default_scm_def();
    d.origin[0] = d.origin[1] = -0.5;
    d.bulldozing = true;
    dvi_scm* s;
    assert_int_equal(dvi_scm_create(w, &d, &s), DVI_OK);
    assert_int_equal(dvi_body_set_velocity(w, b, (double[3]){0, 0, -V}, (double[3]){0, 0, 0}), DVI_OK);
    for (int i = 0; i < 1000; i++) assert_int_equal(dvi_world_step(w, H), DVI_OK);
    dvi_scm_stats st = dvi_scm_get_stats(s);
    double lost = 0.0, gained = 0.0, worst_step = 0.0, rim_max = 0.0;
    for (int64_t k = 0; k < st.nodes_touched; k++) {
        dvi_scm_node n, m;
        int32_t i, j;
        assert_int_equal(dvi_scm_touched_node(s, k, &i, &j, &n), DVI_OK);
        if (n.sinkage_plastic > 0) lost += n.sinkage_plastic;
        else gained -= n.sinkage_plastic;
        if (n.contact) continue;
        if (n.level > rim_max) rim_max = n.level;
        static const int DI[4] = {1, -1, 0, 0}, DJ[4] = {0, 0, 1, -1};
        for (int q = 0; q < 4; q++) {
            if (dvi_scm_get_node(s, i + DI[q], j + DJ[q], &m) != DVI_OK || m.contact) continue;
            double step = n.level - m.level;
            if (step > worst_step) worst_step = step;
        }
    }
    const double max_step = D * tan(d.erosion_angle);
    printf("bulldozing: %lld nodes; volume pressed down %.6e m^3, heaped up %.6e m^3 (difference %.1e); highest "
           "rim %.4f m; steepest step between free nodes %.4f m (D tan 40 deg = %.4f m)\n",
           (long long)st.nodes_touched, lost * D * D, gained * D * D, (gained - lost) * D * D, rim_max, worst_step,
           max_step);
    assert_true(lost > 0.0 && fabs(gained - lost) < 1e-12 * lost + 1e-15);
    assert_true(rim_max > 0.0);
    assert_true(worst_step < 1.02 * max_step);
    dvi_world_destroy(w);
}

/* A block dragged on a carriage. */
static void test_drag_janosi(void** state)
{
    (void)state;
    dvi_world* w = make_world();
    const double L = 0.4, B = 0.2, hz = 0.02, M = 20.0, W = M * G, V = 0.1, D = 0.02;
    const double tphi = tan(PI / 6);
    dvi_body_id blk = add_box_body(w, DVI_BODY_DYNAMIC, M, (double[3]){L / 2, B / 2, hz},
                                   (double[3]){-0.2 + 0.01, 0.01, hz});
    dvi_body_def cd = dvi_default_body_def();
    cd.type = DVI_BODY_KINEMATIC;
    cd.position[0] = -0.2 + 0.01, cd.position[1] = 0.01, cd.position[2] = 0.3;
    dvi_body_id car;
    assert_int_equal(dvi_body_create(w, &cd, &car), DVI_OK);
    dvi_joint_def jd = dvi_default_joint_def();
    jd.type = DVI_JOINT_PRISMATIC;
    jd.body_a = car, jd.body_b = blk;
    memcpy(jd.anchor, cd.position, sizeof jd.anchor);
    jd.axis[2] = 1.0;
    assert_int_equal(dvi_joint_create(w, &jd, &(dvi_joint_id){0}), DVI_OK);
    add_soil(w, D);
    step_ramped(w, blk, W, 1.0, 1500);
    double x0[3];
    dvi_body_get_position(w, blk, x0);
    assert_int_equal(dvi_body_set_velocity(w, car, (double[3]){V, 0, 0}, (double[3]){0, 0, 0}), DVI_OK);
    double worst = 0.0, mean = 0.0;
    int n_mean = 0;
    const int steps = 1000, period = (int)lround(D / (V * H)); /* 200 steps a column */
    for (int i = 1; i <= steps; i++) {
        double st = dvi_world_step(w, H);
        assert_true(st == DVI_OK || st == DVI_NOT_CONVERGED);
        double f[3], x[3];
        dvi_body_get_step_force(w, blk, f, NULL);
        dvi_body_get_position(w, blk, x);
        double d = i * V * H; /* the shear path of the nodes under it from the start, this step */
        double e = exp(-d / JANOSI);
        double expect = tphi * W / L * ((L - d) * (1 - e) + d - JANOSI * (1 - e));
        double err = fabs(-f[0] - expect);
        if (err > worst) worst = err;
        if (i > steps - 2 * period) mean += -f[0], n_mean++;
        if (i % 50 == 0)
            printf("  d = %.3f m: drag %.2f N, Janosi build-up %.2f N, tau_max A (1 - e^(-d/K)) %.2f N\n", d, -f[0],
                   expect, tphi * W * (1 - e));
    }
    mean /= n_mean;
    double plateau = W * tphi * (1 - JANOSI / L);
    printf("drag: largest |F - F_Janosi| = %.2f N (bound tan(phi) W/L D = %.2f N); mean over the last two column "
           "periods %.2f N vs W tan(phi) (1 - K/L) = %.2f N (%.2f %%), Mohr-Coulomb W tan(phi) = %.2f N\n",
           worst, tphi * W / L * D, mean, plateau, 100 * (mean / plateau - 1), W * tphi);
    assert_true(worst < tphi * W / L * D);
    assert_true(fabs(mean / plateau - 1) < 0.01);
    dvi_world_destroy(w);
}

/* The shear's loading and unloading: a kinematic 0.2 m plate pressed 3 mm
 * into the soil, then slid 5 mm forward, 2 mm back and 1 mm forward again
 * at 0.01 m/s (its edges stay between the same nodes, so every node under
 * it slides the same). Janosi's curve forward, q = 1 − e^(−x/K); the
 * elastic line back, q = q₁ − y/K; Janosi's curve again from there,
 * 1 − (1 − q₂) e^(−z/K): the drag is −q tan φ times the load, every step,
 * to 1e-9 of the load. (With j the path slid, the drag turned with the
 * sliding: +tan φ (1 − e^(−7/10)) W at the end of the way back.) */
static void test_shear_unload(void** state)
{
    (void)state;
    dvi_world* w = make_world();
    const double a = 0.2, hz = 0.025, V = 0.01, tphi = tan(PI / 6);
    dvi_body_id b = add_box_body(w, DVI_BODY_KINEMATIC, 1.0, (double[3]){a / 2, a / 2, hz}, (double[3]){0.01, 0.01, hz});
    add_soil(w, 0.02);
    assert_int_equal(dvi_body_set_velocity(w, b, (double[3]){0, 0, -V}, NULL), DVI_OK);
    for (int i = 0; i < 300; i++) assert_int_equal(dvi_world_step(w, H), DVI_OK);
    const int steps[3] = {500, 200, 100};
    const double dir[3] = {1.0, -1.0, 1.0};
    double worst = 0.0, q_end[3] = {0, 0, 0}, f_end[3] = {0, 0, 0};
    for (int ph = 0; ph < 3; ph++) {
        assert_int_equal(dvi_body_set_velocity(w, b, (double[3]){dir[ph] * V, 0, 0}, NULL), DVI_OK);
        for (int i = 1; i <= steps[ph]; i++) {
            assert_int_equal(dvi_world_step(w, H), DVI_OK);
            double f[3];
            dvi_body_get_step_force(w, b, f, NULL);
            const double d = i * V * H; /* this phase's slide, including this step */
            const double q = ph == 0   ? -expm1(-d / JANOSI)
                             : ph == 1 ? q_end[0] - d / JANOSI
                                       : q_end[1] - (1.0 - q_end[1]) * expm1(-d / JANOSI);
            const double e = fabs(f[0] + q * tphi * f[2]);
            if (e > worst) worst = e;
            if (i == steps[ph]) q_end[ph] = q, f_end[ph] = f[0] / f[2];
        }
    }
    double f[3];
    dvi_body_get_step_force(w, b, f, NULL);
    printf("shear: drag / load at the ends of 5 mm forward, 2 mm back, 1 mm forward: %.6f, %.6f, %.6f "
           "(-q tan phi: %.6f, %.6f, %.6f); largest difference %.2e N of a %.1f N load\n",
           f_end[0], f_end[1], f_end[2], -q_end[0] * tphi, -q_end[1] * tphi, -q_end[2] * tphi, worst, f[2]);
    assert_true(worst < 1e-9 * f[2]);
    assert_true(fabs(q_end[1] - (1.0 - exp(-0.5) - 0.2)) < 1e-12);
    dvi_world_destroy(w);
}

/* Bekker's static wheel: the load the pressure under a cylinder of radius r
 * and width bw at sinkage z carries, with the patch length taken as len. */
static double wheel_load(double r, double bw, double z, double len)
{
    double x0 = sqrt(2 * r * z - z * z);
    double b = bw * len / (bw + len);
    double k = K_C / b + K_PHI;
    const int n = 4000;
    double sum = 0.0;
    for (int i = 0; i <= n; i++) { /* Simpson */
        double x = -x0 + 2 * x0 * i / n;
        double y = z - r + sqrt(fmax(0.0, r * r - x * x));
        double wgt = (i == 0 || i == n) ? 1 : (i % 2 ? 4 : 2);
        sum += wgt * k * fmax(0.0, y);
    }
    return bw * sum * (2 * x0 / n) / 3;
}

/* z₀ with wheel_load = W, the contact length 2x₀ + dl. */
static double wheel_sinkage(double r, double bw, double W, double dl)
{
    double lo = 1e-6, hi = r;
    for (int it = 0; it < 200; it++) {
        double z = 0.5 * (lo + hi);
        double len = 2 * sqrt(2 * r * z - z * z) + dl;
        if (wheel_load(r, bw, z, len) > W) hi = z;
        else lo = z;
    }
    return 0.5 * (lo + hi);
}

static void test_wheel_at_rest(void** state)
{
    (void)state;
    const double r = 0.15, bw = 0.1, M = 10.0, W = M * G, D = 0.005;
    dvi_world* w = make_world();
    dvi_body_def bd = dvi_default_body_def();
    bd.mass = M;
    bd.inertia[0] = bd.inertia[4] = M * (3 * r * r + bw * bw) / 12, bd.inertia[8] = M * r * r / 2;
    bd.position[0] = 0.0025, bd.position[1] = 0.0025, bd.position[2] = r;
    bd.orientation[0] = sqrt(0.5), bd.orientation[1] = -sqrt(0.5); /* axle along y */
    dvi_body_id b;
    assert_int_equal(dvi_body_create(w, &bd, &b), DVI_OK);
    dvi_shape_def sd = dvi_default_shape_def();
    assert_int_equal(dvi_world_add_cylinder(w, b, &sd, &(dvi_cylinder){r, bw / 2}, &(dvi_shape_id){0}), DVI_OK);
    dvi_scm* s = add_soil(w, D);
    step_ramped(w, b, W, 1.0, 2500);
    double x[3];
    dvi_body_get_position(w, b, x);
    double z = r - x[2];
    double z0 = wheel_sinkage(r, bw, W, 0.0);
    double z_a = wheel_sinkage(r, bw, W, -D), z_b = wheel_sinkage(r, bw, W, D);
    dvi_scm_stats st = dvi_scm_get_stats(s);
    printf("wheel r %.2f m, b %.2f m, %.1f N: sinkage %.6f m, Bekker static wheel %.6f m (%.2f %%), "
           "contact length +-D: [%.6f, %.6f] m; patch b %.4f m, %lld contacts\n",
           r, bw, W, z, z0, 100 * (z / z0 - 1), fmin(z_a, z_b), fmax(z_a, z_b), st.min_b, (long long)st.contacts);
    assert_int_equal(st.patches, 1);
    assert_true(z > fmin(z_a, z_b) * 0.995 && z < fmax(z_a, z_b) * 1.005);
    dvi_world_destroy(w);
}

/* The rolling wheel's loaded arc (see the top): the soil's vertical force
 * (rear = 0: the vertical force; rear = 1: the compaction resistance) for a
 * sinkage z0, with the soil's k for b = 2A/P of the arcs' rectangle. */
static double rolling_arc(double r, double bw, double z0, const dvi_bw_soil* so, double ke, double damp, double omega,
                          bool horizontal)
{
    const double x1 = sqrt(r * r - (r - z0) * (r - z0));
    double k = so->k_c / bw + so->k_phi, xr = 0.0;
    for (int it = 0; it < 30; it++) { /* b depends on x_r, x_r on k */
        const double d = k * z0 / ke;
        xr = sqrt(r * r - (r - d) * (r - d));
        const double len = x1 + xr, b = bw * len / (bw + len);
        k = so->k_c / b + so->k_phi;
    }
    const int n = 4000;
    double sum = 0.0;
    for (int i = 0; i < n; i++) { /* midpoint rule on each arc */
        const double xf = (i + 0.5) * x1 / n, xb = (i + 0.5) * xr / n;
        const double sf = k * (z0 - r + sqrt(r * r - xf * xf)) + damp * omega * xf;
        const double sb = fmax(0.0, k * z0 - ke * (r - sqrt(r * r - xb * xb)));
        if (horizontal)
            sum += sf * xf / sqrt(r * r - xf * xf) * x1 / n - sb * xb / sqrt(r * r - xb * xb) * xr / n;
        else
            sum += sf * x1 / n + sb * xr / n;
    }
    return bw * sum;
}

static void test_rig_rolling(void** state)
{
    (void)state;
    bw_rig_config c = bw_rig_default("ishigami2007");
    c.terrain = "scm";
    c.slip = 0.3;
    bw_rig_result res;
    char msg[512] = "";
    dvi_status st = bw_rig_run(&c, &res, msg, sizeof msg);
    if (st != DVI_OK) printf("rig: %s\n", msg);
    assert_int_equal(st, DVI_OK);
    const dvi_bw_soil so = dvi_bw_soil_ishigami2007();
    const double r = c.radius, omega = c.rim_speed / r;
    double lo = 1e-4, hi = 0.5 * r;
    for (int it = 0; it < 60; it++) {
        const double z = 0.5 * (lo + hi);
        if (rolling_arc(r, c.width, z, &so, c.scm_stiffness, c.scm_damping, omega, false) < c.load) lo = z;
        else hi = z;
    }
    const double z0 = 0.5 * (lo + hi);
    const double rc = rolling_arc(r, c.width, z0, &so, c.scm_stiffness, c.scm_damping, omega, true);
    const double cos1 = (r - z0) / r;
    printf("SCM rig s = 0.3: sinkage %.4f mm (arcs %.4f mm, %+.2f %%), DP %.3f N, T %.4f N m, normal %.3f N; "
           "compaction resistance %.3f N in [%.3f, %.3f] N\n",
           1e3 * res.sinkage, 1e3 * z0, 100 * (res.sinkage / z0 - 1), res.drawbar_pull, res.torque, res.normal, rc,
           res.torque / r - res.drawbar_pull, res.torque / (r * cos1) - res.drawbar_pull);
    assert_true(fabs(res.normal - c.load) < 0.005 * c.load);
    assert_true(fabs(res.sinkage - z0) < 0.02 * z0);
    assert_true(rc > 0.98 * (res.torque / r - res.drawbar_pull));
    assert_true(rc < res.torque / (r * cos1) - res.drawbar_pull);
    assert_true(fabs(res.slip_measured - c.slip) < 1e-3);
    /* the rig refuses an unknown terrain and a grid coarser than a quarter of the wheel's width, naming them */
    c.terrain = "clay";
    assert_int_equal(bw_rig_run(&c, &res, msg, sizeof msg), DVI_ERR_INVALID_ARG);
    assert_non_null(strstr(msg, "terrain"));
    c.terrain = "scm";
    c.scm_spacing = 0.05;
    assert_int_equal(bw_rig_run(&c, &res, msg, sizeof msg), DVI_ERR_INVALID_ARG);
    assert_non_null(strstr(msg, "scm_spacing"));
}

/* A wheel driven by a torque over bulldozed soil, saved mid-run and resumed. */
static dvi_world* rolling_world(dvi_body_id* wheel)
{
    const double r = 0.15, bw = 0.1, M = 10.0;
    dvi_world* w = make_world();
    dvi_body_def bd = dvi_default_body_def();
    bd.mass = M;
    bd.inertia[0] = bd.inertia[4] = M * (3 * r * r + bw * bw) / 12, bd.inertia[8] = M * r * r / 2;
    bd.position[0] = -0.3, bd.position[2] = r;
    bd.orientation[0] = sqrt(0.5), bd.orientation[1] = -sqrt(0.5);
    bd.velocity[0] = 0.2;
    bd.angular_velocity[1] = 0.2 / r * 0.8;
    assert_int_equal(dvi_body_create(w, &bd, wheel), DVI_OK);
    dvi_shape_def sd = dvi_default_shape_def();
    assert_int_equal(dvi_world_add_cylinder(w, *wheel, &sd, &(dvi_cylinder){r, bw / 2}, &(dvi_shape_id){0}), DVI_OK);
    /* driven: 3 N·m about the axle; the soil bulldozed */
    assert_int_equal(dvi_body_set_applied_force(w, *wheel, (double[3]){0, 0, 0}, (double[3]){0, 3.0, 0}), DVI_OK);
    dvi_scm_def d = dvi_default_scm_def();
    d.origin[0] = d.origin[1] = -0.5;
    d.bulldozing = true;
    assert_int_equal(dvi_scm_create(w, &d, NULL), DVI_OK);
    return w;
}

static void test_resume_bit_identical(void** state)
{
    (void)state;
    dvi_body_id b1, b2;
    dvi_world* w1 = rolling_world(&b1);
    for (int i = 0; i < 300; i++) assert_true(dvi_world_step(w1, H) >= 0);
    void* blob;
    size_t size;
    assert_int_equal(dvi_world_save_state(w1, &blob, &size), DVI_OK);
    dvi_world* w2 = rolling_world(&b2);
    dvi_status ls = dvi_world_load_state(w2, blob, size);
    if (ls != DVI_OK) printf("%s\n", dvi_world_last_error(w2));
    assert_int_equal(ls, DVI_OK);
    for (int i = 0; i < 300; i++) {
        assert_true(dvi_world_step(w1, H) >= 0);
        assert_true(dvi_world_step(w2, H) >= 0);
    }
    double x1[3], x2[3], f1[3], f2[3];
    dvi_body_get_position(w1, b1, x1);
    dvi_body_get_position(w2, b2, x2);
    dvi_body_get_step_force(w1, b1, f1, NULL);
    dvi_body_get_step_force(w2, b2, f2, NULL);
    assert_memory_equal(x1, x2, sizeof x1);
    assert_memory_equal(f1, f2, sizeof f1);
    const dvi_force_element_class* cls;
    dvi_scm* s1 = dvi_world_force_element(w1, 0, &cls);
    dvi_scm* s2 = dvi_world_force_element(w2, 0, NULL);
    assert_string_equal(cls->name, "scm");
    dvi_scm_stats a = dvi_scm_get_stats(s1), c = dvi_scm_get_stats(s2);
    assert_int_equal(a.nodes_touched, c.nodes_touched);
    for (int64_t k = 0; k < a.nodes_touched; k++) {
        dvi_scm_node n1, n2;
        int32_t i1, j1, i2, j2;
        assert_int_equal(dvi_scm_touched_node(s1, k, &i1, &j1, &n1), DVI_OK);
        assert_int_equal(dvi_scm_touched_node(s2, k, &i2, &j2, &n2), DVI_OK);
        assert_true(i1 == i2 && j1 == j2);
        assert_memory_equal(&n1, &n2, sizeof n1);
    }
    printf("resume: bit-identical after 300 + 300 steps (x = %.9f m, %lld nodes touched, Fz = %.6f N)\n", x1[0],
           (long long)a.nodes_touched, f1[2]);
    assert_true(x1[0] > -0.3 + 0.05 && a.nodes_touched > 50);
    /* a damaged soil state (a node's contact flag 7; the blob resealed) is
     * refused and the soil left as it was */
    unsigned char* bad = malloc(size);
    memcpy(bad, blob, size);
    bad[size - 1] = 7;
    uint64_t hsum = 0xcbf29ce484222325ull; /* FNV-1a 64 over all but header bytes 56..63 */
    for (size_t i = 0; i < size; i++) {
        if (i >= 56 && i < 64) continue;
        hsum ^= bad[i];
        hsum *= 0x100000001b3ull;
    }
    for (int k = 0; k < 8; k++) bad[56 + k] = (unsigned char)(hsum >> (8 * k));
    assert_int_equal(dvi_world_load_state(w2, bad, size), DVI_ERR_PARSE);
    printf("damaged state: %s\n", dvi_world_last_error(w2));
    assert_non_null(strstr(dvi_world_last_error(w2), "force element 0 (scm): SCM soil: state node"));
    assert_int_equal(dvi_scm_get_stats(s2).nodes_touched, c.nodes_touched);
    free(bad);
    free(blob);
    dvi_world_destroy(w1);
    dvi_world_destroy(w2);
}

/* examples/scenes/scm_plate.json through the scene reader and the model:
 * the plate comes to rest on its 100 nodes, the soil probe's force carries
 * its weight and its sinkage is the plate's depth; the VTK frame's soil
 * surface has those 100 cells at that depth. */
static void test_scene_plate(void** state)
{
    (void)state;
    dvi_scene* s = NULL;
    dvi_scene_errors e;
    dvi_status st = dvi_scene_load(SRC_PATH("examples/scenes/scm_plate.json"), &s, &e);
    if (st != DVI_OK) printf("%s", e.text ? e.text : "");
    assert_int_equal(st, DVI_OK);
    dvi_scene_errors_free(&e);
    dvi_model* m = NULL;
    char msg[256];
    assert_int_equal(dvi_model_create(s, &m, msg, sizeof msg), DVI_OK);
    int probe = -1;
    for (int32_t p = 0; p < dvi_model_probe_count(m); p++) {
        dvi_probe_info info;
        assert_int_equal(dvi_model_probe_info(m, p, &info), DVI_OK);
        if (strcmp(info.name, "soil") == 0) probe = p;
    }
    assert_true(probe >= 0);
    for (int i = 0; i < 1000; i++) assert_true(dvi_model_step(m) >= 0);
    double v[6];
    assert_int_equal(dvi_model_probe_sample(m, probe, v), DVI_OK);
    const dvi_world* w = dvi_model_world_const(m);
    dvi_body_id plate;
    assert_int_equal(dvi_world_body_at(w, 0, &plate), DVI_OK);
    double x[3];
    dvi_body_get_position(w, plate, x);
    const double W = 20.0 * G;
    printf("scm_plate.json after 1 s: sinkage %.6f m (plate depth %.6f m), %g contacts, soil force %.3f N (weight "
           "%.3f N)\n",
           v[1], 0.025 - x[2], v[2], v[5], W);
    assert_true(v[2] == 100.0);
    assert_true(fabs(v[1] - (0.025 - x[2])) < 1e-6);
    assert_true(fabs(v[5] / W - 1) < 0.01 && fabs(v[3]) < 1e-6 * W && fabs(v[4]) < 1e-6 * W);

    /* the VTK frame carries the deformed surface: 100 cells at the plate's depth */
    const char* dir = BUILD_PATH("test_scm_vtk");
    test_remove_tree(dir);
    assert_int_equal(dvi_vtk_write_frame_ex(w, dir, 0, true, msg, sizeof msg), DVI_OK);
    assert_int_equal(dvi_vtk_write_pvd(dir, 1, (double[1]){1.0}, msg, sizeof msg), DVI_OK);
    char path[1024];
    snprintf(path, sizeof path, "%s/frames/soil_000000.vtp", dir);
    char* text = test_read_text(path, NULL);
    assert_non_null(text);
    assert_non_null(strstr(text, "NumberOfPoints=\"400\""));
    assert_non_null(strstr(text, "NumberOfPolys=\"100\""));
    char depth[64];
    snprintf(depth, sizeof depth, "%.10g", v[1]);
    assert_non_null(strstr(text, depth));
    free(text);
    snprintf(path, sizeof path, "%s/soil.pvd", dir);
    text = test_read_text(path, NULL);
    assert_non_null(text);
    assert_non_null(strstr(text, "frames/soil_000000.vtp"));
    free(text);
    test_remove_tree(dir);
    dvi_model_destroy(m);
    dvi_scene_destroy(s);
}

/* Two wheels on soil through the scene reader, each (5 and 10 kg, r 0.25 m,
 * b 0.2 m) turning freely on a 10 kg load that slides on a vertical
 * prismatic joint: at rest each carries itself and its load, W_1 = 15 g,
 * W_2 = 20 g (the joint takes no vertical force). The soil carries them
 * through force elements, not contacts; the contact_force probes
 * ("normal" averaged, "up", "vector") and the soil probe must all read
 * those loads (within 1 %: a missing soil term reads 0, a doubled one 2 W),
 * and a probe restricted to contacts "with" a body reads none of it. On SCM
 * (the soil of the file's header, 0.02 m grid) and on Bekker–Wong wheels
 * (the same Bekker constants, damping 300 N·s/m). */
static void check_wheel_loads(const char* terrain, const char* label)
{
    char text[4096];
    static const char* const RIG =
        "  {\"name\": \"l%d\", \"mass\": 10, \"inertia\": [0.1, 0.1, 0.1], \"position\": [0, %g, 0.3],"
        "   \"shapes\": [{\"type\": \"box\", \"half_extents\": [0.02, 0.02, 0.02]}]},"
        "  {\"name\": \"w%d\", \"mass\": %d, \"inertia\": [0.09, 0.16, 0.09], \"position\": [0, %g, 0.26],"
        "   \"orientation\": [0.7071067811865476, -0.7071067811865476, 0, 0],"
        "   \"shapes\": [{\"type\": \"cylinder\", \"radius\": 0.25, \"half_length\": 0.1}]}";
    static const char* const RIG_JOINTS =
        "  {\"type\": \"prismatic\", \"body_b\": \"l%d\", \"anchor\": [0, %g, 0.3], \"axis\": [0, 0, 1]},"
        "  {\"type\": \"revolute\", \"body_a\": \"l%d\", \"body_b\": \"w%d\", \"anchor\": [0, %g, 0.26], \"axis\": [0, 1, 0]}";
    char rig1[600], rig2[600], j1[400], j2[400];
    snprintf(rig1, sizeof rig1, RIG, 1, 0.4, 1, 5, 0.4);
    snprintf(rig2, sizeof rig2, RIG, 2, -0.4, 2, 10, -0.4);
    snprintf(j1, sizeof j1, RIG_JOINTS, 1, 0.4, 1, 1, 0.4);
    snprintf(j2, sizeof j2, RIG_JOINTS, 2, -0.4, 2, 2, -0.4);
    snprintf(text, sizeof text,
             "{\"name\": \"wheels\", \"gravity\": [0, 0, -9.81], \"bodies\": [%s, %s], \"joints\": [%s, %s],"
             " \"terrain\": [%s],"
             " \"formulation\": {\"method\": \"dvi\", \"dt\": 0.001, \"solver\": \"lemke\", \"joint_solve\": \"direct\"},"
             " \"duration\": 2,"
             " \"probes\": ["
             "  {\"name\": \"n\", \"what\": \"contact_force\", \"component\": \"normal\", \"average\": true, \"every\": 20, \"bodies\": [\"w1\", \"w2\"]},"
             "  {\"name\": \"up\", \"what\": \"contact_force\", \"component\": \"up\", \"every\": 20, \"bodies\": [\"w1\", \"w2\"]},"
             "  {\"name\": \"vec\", \"what\": \"contact_force\", \"every\": 20, \"bodies\": [\"w1\", \"w2\"]},"
             "  {\"name\": \"with\", \"what\": \"contact_force\", \"component\": \"up\", \"with\": [\"l1\", \"l2\"], \"every\": 20, \"bodies\": [\"w1\", \"w2\"]},"
             "  {\"name\": \"soil\", \"what\": \"soil\", \"every\": 20, \"bodies\": [\"w1\", \"w2\"]}]}",
             rig1, rig2, j1, j2, terrain);
    dvi_scene* s = NULL;
    dvi_scene_errors e = {0};
    dvi_status st = dvi_scene_parse(text, strlen(text), NULL, &s, &e);
    if (st != DVI_OK) printf("%s", e.text ? e.text : "");
    assert_int_equal(st, DVI_OK);
    dvi_scene_errors_free(&e);
    dvi_model* m = NULL;
    char msg[256];
    st = dvi_model_create(s, &m, msg, sizeof msg);
    if (st != DVI_OK) printf("%s\n", msg);
    assert_int_equal(st, DVI_OK);
    for (int i = 0; i < 2000; i++) assert_true(dvi_model_step(m) >= 0);
    double v[5][16];
    for (int32_t p = 0; p < 5; p++) assert_int_equal(dvi_model_probe_sample(m, p, v[p]), DVI_OK);
    const double W[2] = {15.0 * G, 20.0 * G};
    for (int k = 0; k < 2; k++) {
        const double fn = v[0][1 + k], fup = v[1][1 + k], fz = v[2][3 + 6 * k], with = v[3][1 + k];
        const double sink = v[4][1 + 5 * k], soil = v[4][5 + 5 * k];
        printf("%s, wheel %d: load %.3f N; f_n %.3f, f_up %.3f, fz %.3f, with the loads %.3f, soil fz %.3f N, "
               "sinkage %.2f mm\n",
               label, k + 1, W[k], fn, fup, fz, with, soil, 1e3 * sink);
        assert_true(fabs(fn / W[k] - 1.0) < 0.01);
        assert_true(fabs(fup / W[k] - 1.0) < 0.01);
        assert_true(fabs(fz / W[k] - 1.0) < 0.01);
        assert_true(fabs(soil / W[k] - 1.0) < 0.01);
        assert_true(fabs(with) < 1e-9);
        assert_true(sink > 0.005 && sink < 0.05);
    }
    dvi_model_destroy(m);
    dvi_scene_destroy(s);
}

static void test_scene_wheel_loads(void** state)
{
    (void)state;
    check_wheel_loads("{\"model\": \"scm\", \"origin\": [-1, -1, 0], \"size\": [2, 2], \"spacing\": 0.02}", "SCM");
    check_wheel_loads("{\"model\": \"bekker_wong\", \"wheels\": [\"w1\", \"w2\"], \"damping\": 300,"
                     " \"soil\": {\"preset\": \"ding2011\", \"k_c\": 0.14e6, \"k_phi\": 0.82e6, \"n0\": 1},"
                     " \"ground\": {\"height\": 0}}",
                     "Bekker-Wong");
}

/* Four of Scarecrow's wheels (r 0.25 m, b 0.4 m, 1.78 kg) on a 188 kg cart
 * (each carries 479 N, the rover's share), driven at the thesis's wheel
 * speed, 0.08889 rad/s (0.022 m/s at the rim, after a 0.5 s ramp), on SCM
 * (the soil above) and on Bekker–Wong wheels (the same Bekker constants,
 * K 0.01 m, damping 1000 N·s/m), for 3 s. With the soil forces explicit in
 * the state at the start of the step, the front wheel's force along x
 * reversed from step to step at 1 ms (SCM: 752 reversals in the last 2 s,
 * jumps of 184 N, the shear at τ_max both ways; Bekker–Wong: 1351, 422 N,
 * the slip law's 5e4 N·s/m, and the slip 0.53 against 0.32 at 0.25 ms).
 * With the shear unloading when the sliding reverses and the slip relaxed
 * (docs/terrain.md), from 1 s on no step changes it by 5 % of the wheel's
 * load and the cart's slip over the last second at 1 ms is that at 0.25 ms
 * within 0.02. */
#define WHEEL_MASS 1.7812830345854127
#define WHEEL_LOAD ((47.0 + WHEEL_MASS) * G)

typedef struct driven_wheel_run {
    double slip, fx_mean, jump; /* jump: the largest change of f_x from a step to the next */
    int flips;                  /* steps whose f_x has the other sign, changed by more than 5 % of the load */
} driven_wheel_run;

static driven_wheel_run driven_wheel(bool scm, double h)
{
    const double R = 0.25, OMEGA = 0.08889, T = 3.0;
    dvi_world_def wd = dvi_default_world_def();
    wd.solver = "lemke";
    wd.joint_solve = DVI_JOINT_SOLVE_DIRECT;
    dvi_world* w;
    assert_int_equal(dvi_world_create(&wd, &w), DVI_OK);
    dvi_body_def bd = dvi_default_body_def();
    bd.type = DVI_BODY_DYNAMIC;
    bd.mass = 188.0;
    bd.inertia[0] = bd.inertia[4] = bd.inertia[8] = 20.0;
    bd.position[2] = R;
    dvi_body_id cart, wheels[4];
    assert_int_equal(dvi_body_create(w, &bd, &cart), DVI_OK);
    for (int k = 0; k < 4; k++) {
        bd.mass = WHEEL_MASS;
        bd.inertia[0] = bd.inertia[8] = 0.07923769199375999;
        bd.inertia[4] = 0.11097450306524229;
        bd.position[0] = k < 2 ? 0.5 : -0.5, bd.position[1] = k % 2 ? 0.6 : -0.6;
        assert_int_equal(dvi_body_create(w, &bd, &wheels[k]), DVI_OK);
        dvi_shape_def sd = dvi_default_shape_def();
        sd.offset_orientation[0] = sqrt(0.5), sd.offset_orientation[1] = -sqrt(0.5); /* axle along y */
        assert_int_equal(dvi_world_add_cylinder(w, wheels[k], &sd, &(dvi_cylinder){R, 0.2}, &(dvi_shape_id){0}),
                         DVI_OK);
        dvi_joint_def jd = dvi_default_joint_def();
        jd.type = DVI_JOINT_REVOLUTE;
        jd.body_a = cart, jd.body_b = wheels[k];
        memcpy(jd.anchor, bd.position, sizeof jd.anchor);
        jd.axis[1] = 1.0;
        jd.motor = DVI_MOTOR_ROTATION_SPEED;
        jd.motor_speed = OMEGA;
        jd.motor_ramp_time = 0.5;
        assert_int_equal(dvi_joint_create(w, &jd, &(dvi_joint_id){0}), DVI_OK);
    }
    if (scm) {
        dvi_scm_def d = dvi_default_scm_def();
        d.origin[0] = -1.0, d.origin[1] = -1.0;
        d.size[0] = 2.0, d.size[1] = 2.0;
        d.bodies = wheels, d.body_count = 4;
        assert_int_equal(dvi_scm_create(w, &d, NULL), DVI_OK);
    } else {
        dvi_bw_def d = dvi_default_bw_def();
        d.soil = dvi_bw_soil_ding2011();
        d.soil.k_c = K_C, d.soil.k_phi = K_PHI, d.soil.n0 = 1.0, d.soil.cohesion = 0.0;
        d.soil.friction_angle = PI / 6, d.soil.K_x0 = d.soil.K_y0 = JANOSI;
        d.wheels = wheels, d.wheel_count = 4;
        d.damping = 1000.0;
        assert_int_equal(dvi_world_add_bekker_wong(w, &d, NULL), DVI_OK);
    }
    driven_wheel_run out = {0};
    const int steps = (int)lround(T / h), from = (int)lround(1.0 / h), last = (int)lround((T - 1.0) / h);
    double x0 = 0.0, prev = 0.0;
    int n = 0;
    for (int i = 1; i <= steps; i++) {
        dvi_status st = dvi_world_step(w, h);
        assert_true(st == DVI_OK || st == DVI_NOT_CONVERGED);
        double f[3], x[3];
        dvi_body_get_step_force(w, wheels[0], f, NULL);
        dvi_body_get_position(w, cart, x);
        if (i >= from) {
            if (i > from && fabs(f[0] - prev) > out.jump) out.jump = fabs(f[0] - prev);
            if (i > from && (f[0] > 0.0) != (prev > 0.0) && fabs(f[0] - prev) > 0.05 * WHEEL_LOAD) out.flips++;
            prev = f[0];
        }
        if (i == last) x0 = x[0];
        if (i > last) out.fx_mean += f[0], n++;
        if (i == steps) out.slip = 1.0 - (x[0] - x0) / (R * OMEGA * (steps - last) * h);
    }
    out.fx_mean /= n;
    dvi_world_destroy(w);
    return out;
}

static void test_driven_wheel_1ms(void** state)
{
    (void)state;
    for (int k = 0; k < 2; k++) {
        const driven_wheel_run a = driven_wheel(k == 0, 0.001), b = driven_wheel(k == 0, 0.00025);
        printf("%s, driven wheels: at 1 ms slip %.4f, front wheel's soil force x %.2f N, from 1 s %d reversals, largest "
               "change %.2f N; at 0.25 ms slip %.4f, %.2f N, %d, %.2f N\n",
               k == 0 ? "SCM" : "Bekker-Wong", a.slip, a.fx_mean, a.flips, a.jump, b.slip, b.fx_mean, b.flips, b.jump);
        assert_int_equal(a.flips, 0);
        assert_true(a.jump < 0.05 * WHEEL_LOAD && b.jump < 0.05 * WHEEL_LOAD);
        assert_true(fabs(a.slip - b.slip) < 0.02);
        assert_true(a.slip > 0.0 && a.slip < 0.9);
    }
}

/* Off the patch there is no soil: a ball beside the patch falls freely
 * (and is counted as off the patch once below its surface); one whose box
 * reaches past the edge but whose contact is inside is carried. */
static void test_off_patch(void** state)
{
    (void)state;
    dvi_world* w = make_world();
    dvi_body_def bd = dvi_default_body_def();
    bd.mass = 5.0;
    bd.inertia[0] = bd.inertia[4] = bd.inertia[8] = 0.4 * 5.0 * 0.1 * 0.1;
    bd.position[0] = 0.8, bd.position[2] = 0.1; /* the patch is [-0.5, 0.5]² */
    dvi_body_id off, edge;
    assert_int_equal(dvi_body_create(w, &bd, &off), DVI_OK);
    bd.position[0] = 0.45, bd.position[1] = 0.31;
    assert_int_equal(dvi_body_create(w, &bd, &edge), DVI_OK);
    dvi_shape_def sd = dvi_default_shape_def();
    sd.collision_mask = 0; /* the balls do not meet each other */
    assert_int_equal(dvi_world_add_sphere(w, off, &sd, &(dvi_sphere){0.1}, &(dvi_shape_id){0}), DVI_OK);
    assert_int_equal(dvi_world_add_sphere(w, edge, &sd, &(dvi_sphere){0.1}, &(dvi_shape_id){0}), DVI_OK);
    dvi_scm* s = add_soil(w, 0.02);
    for (int i = 0; i < 500; i++) assert_int_equal(dvi_world_step(w, H), DVI_OK);
    double x[3], y[3];
    dvi_body_get_position(w, off, x);
    dvi_body_get_position(w, edge, y);
    dvi_scm_stats st = dvi_scm_get_stats(s);
    dvi_scm_body_contact bc;
    assert_int_equal(dvi_scm_get_body_contact(s, edge, &bc), DVI_OK);
    const double t = 500 * H, fall = 0.5 * G * t * t;
    printf("off the patch: ball fell %.4f m (free fall %.4f m); ball on the edge at z %.4f m on %d nodes, %d shape(s) "
           "off the patch\n", 0.1 - x[2], fall, y[2], (int)bc.contacts, (int)st.shapes_off_patch);
    assert_true(fabs((0.1 - x[2]) / fall - 1) < 0.01);
    assert_int_equal(st.shapes_off_patch, 1);
    assert_true(bc.contacts > 0 && y[2] > 0.05 && fabs(bc.force[2] - 5.0 * G) < 0.1 * 5.0 * G);
    dvi_world_destroy(w);
}

/* A scene's terrain entry with every key: its soil has the keys' values
 * (the heights per node, the listed body only). */
static void test_scene_keys(void** state)
{
    (void)state;
    const char* text =
        "{\"formulation\": {\"dt\": 0.001}, \"duration\": 1,"
        " \"bodies\": [{\"name\": \"a\", \"mass\": 1, \"inertia\": [1, 1, 1], \"position\": [0.16, 0.05, 0.3],"
        "   \"shapes\": [{\"type\": \"sphere\", \"radius\": 0.05}]},"
        "  {\"name\": \"b\", \"mass\": 1, \"inertia\": [1, 1, 1], \"position\": [0.05, 0.05, 0.16],"
        "   \"shapes\": [{\"type\": \"sphere\", \"radius\": 0.05}]}],"
        " \"terrain\": [{\"model\": \"scm\", \"origin\": [0, 0, 0.1], \"size\": [0.2, 0.1], \"spacing\": 0.05,"
        "   \"heights\": [0, 0, 0, 0, 0, 0, 0.01, 0, 0, 0, 0, 0, 0, 0, 0.02], \"k_phi\": 1e6, \"k_c\": 0, \"n\": 1.1,"
        "   \"cohesion\": 100, \"friction_angle\": 0.6, \"janosi_shear\": 0.02, \"elastic_stiffness\": 5e7,"
        "   \"damping\": 0, \"max_nodes\": 100, \"bodies\": [\"b\"], \"bulldozing\": true,"
        "   \"erosion_angle\": 0.7, \"erosion_iterations\": 2, \"erosion_propagations\": 3}],"
        " \"probes\": [{\"name\": \"p\", \"what\": \"soil\", \"bodies\": [\"a\", \"b\"]}]}";
    dvi_scene* s = NULL;
    dvi_scene_errors e;
    dvi_status st = dvi_scene_parse(text, strlen(text), ".", &s, &e);
    if (st != DVI_OK) printf("%s", e.text ? e.text : "");
    assert_int_equal(st, DVI_OK);
    dvi_scene_errors_free(&e);
    dvi_model* m = NULL;
    char msg[256];
    assert_int_equal(dvi_model_create(s, &m, msg, sizeof msg), DVI_OK);
    const dvi_world* w = dvi_model_world_const(m);
    assert_int_equal(dvi_world_force_element_count(w), 1);
    const dvi_scm* soil = dvi_scm_of_element(w, 0);
    assert_non_null(soil);
    dvi_scm_stats ss = dvi_scm_get_stats(soil);
    assert_true(ss.nx == 4 && ss.ny == 2 && ss.spacing == 0.05 && ss.origin[2] == 0.1);
    dvi_scm_node nd;
    assert_int_equal(dvi_scm_get_node(soil, 1, 1, &nd), DVI_OK);
    assert_true(nd.level_initial == 0.01);
    assert_int_equal(dvi_scm_get_node(soil, 4, 2, &nd), DVI_OK);
    assert_true(nd.level_initial == 0.02);
    /* the soil acts on b only: a falls through it */
    for (int k = 0; k < 500; k++) assert_true(dvi_model_step(m) >= 0);
    dvi_body_id a, b;
    dvi_world_body_at(w, 0, &a);
    dvi_world_body_at(w, 1, &b);
    double xa[3], xb[3];
    dvi_body_get_position(w, a, xa);
    dvi_body_get_position(w, b, xb);
    printf("scene keys: ball a at z %.3f m (fell through), ball b at z %.4f m (set at 0.16 m on the node at 0.11 m)\n",
           xa[2], xb[2]);
    assert_true(xa[2] < 0.0 && xb[2] > 0.13 && xb[2] < 0.16);
    dvi_model_destroy(m);
    dvi_scene_destroy(s);
}

/* examples/scenes/scm_wheel.json (bulldozing on) with 1 and 2 threads: the
 * model's saved state after 500 steps is the same, byte for byte. */
static void* wheel_state(int threads, size_t* size)
{
    dvi_scene* s = NULL;
    dvi_scene_errors e;
    assert_int_equal(dvi_scene_load(SRC_PATH("examples/scenes/scm_wheel.json"), &s, &e), DVI_OK);
    dvi_scene_overrides o;
    memset(&o, 0, sizeof o);
    o.threads = threads;
    assert_int_equal(dvi_scene_apply_overrides(s, &o, &e), DVI_OK);
    dvi_model* m = NULL;
    char msg[256];
    assert_int_equal(dvi_model_create(s, &m, msg, sizeof msg), DVI_OK);
    for (int k = 0; k < 500; k++) assert_true(dvi_model_step(m) >= 0);
    void* data = NULL;
    assert_int_equal(dvi_model_save_state(m, &data, size), DVI_OK);
    dvi_model_destroy(m);
    dvi_scene_destroy(s);
    return data;
}

static void test_threads_same(void** state)
{
    (void)state;
    size_t n1 = 0, n2 = 0;
    void* a = wheel_state(1, &n1);
    void* b = wheel_state(2, &n2);
    printf("scm_wheel.json, 500 steps: state %zu bytes with 1 thread, %zu with 2\n", n1, n2);
    assert_int_equal(n1, n2);
    assert_true(memcmp(a, b, n1) == 0);
    free(a);
    free(b);
}

static void expect_error(dvi_world* w, const dvi_scm_def* d, const char* text)
{
    assert_int_not_equal(dvi_scm_create(w, d, NULL), DVI_OK);
    if (!strstr(dvi_error_message(), text)) printf("message: %s\n", dvi_error_message());
    assert_non_null(strstr(dvi_error_message(), text));
}

static void test_errors(void** state)
{
    (void)state;
    dvi_world* w = make_world();
    dvi_scm_def d = dvi_default_scm_def();
    d.elastic_stiffness = 0.5e6;
    expect_error(w, &d, "elastic_stiffness (500000 Pa/m) must exceed k_phi (820000 Pa/m^n)");
    d = dvi_default_scm_def();
    d.spacing = 0.0;
    expect_error(w, &d, "spacing must be > 0");
    d = dvi_default_scm_def();
    d.size[0] = 2e4;
    d.spacing = 0.01;
    expect_error(w, &d, "size[0]/spacing gives 2000001 nodes a side, more than 1048576");
    d = dvi_default_scm_def();
    d.friction_angle = PI / 2;
    expect_error(w, &d, "friction_angle must be in [0, pi/2) rad");
    d = dvi_default_scm_def();
    d.janosi_shear = -1;
    expect_error(w, &d, "janosi_shear must be > 0");
    d = dvi_default_scm_def();
    d.n = 0;
    expect_error(w, &d, "n must be in (0, 3]");
    d = dvi_default_scm_def();
    d.orientation[0] = 2;
    expect_error(w, &d, "orientation must be a unit quaternion");
    d = dvi_default_scm_def();
    dvi_body_id fixed_id;
    dvi_body_def fb = dvi_default_body_def();
    fb.type = DVI_BODY_FIXED;
    assert_int_equal(dvi_body_create(w, &fb, &fixed_id), DVI_OK);
    d.bodies = &fixed_id, d.body_count = 1;
    expect_error(w, &d, "bodies[0]: a fixed body");
    assert_int_equal(dvi_world_force_element_count(w), 0);
    dvi_world_destroy(w);

    /* max_nodes: a plate on 100 nodes with room for 50 fails its step, naming the limit */
    w = make_world();
    dvi_body_id b = add_box_body(w, DVI_BODY_DYNAMIC, 20.0, (double[3]){0.1, 0.1, 0.02}, (double[3]){0.01, 0.01, 0.015});
    d = dvi_default_scm_def();
    d.origin[0] = d.origin[1] = -0.5;
    d.max_nodes = 50;
    assert_int_equal(dvi_scm_create(w, &d, NULL), DVI_OK);
    assert_int_equal(dvi_world_step(w, H), DVI_ERR_INVALID_ARG);
    printf("max_nodes: %s\n", dvi_world_last_error(w));
    assert_non_null(strstr(dvi_world_last_error(w), "force element 0 (scm): SCM soil: more than max_nodes = 50"));
    (void)b;
    dvi_world_destroy(w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plate_bekker_sinkage),
        cmocka_unit_test(test_plate_bekker_sinkage_dem),
        cmocka_unit_test(test_plate_on_heights),
        cmocka_unit_test(test_unload_reload),
        cmocka_unit_test(test_bulldozing),
        cmocka_unit_test(test_drag_janosi),
        cmocka_unit_test(test_shear_unload),
        cmocka_unit_test(test_wheel_at_rest),
        cmocka_unit_test(test_rig_rolling),
        cmocka_unit_test(test_resume_bit_identical),
        cmocka_unit_test(test_scene_plate),
        cmocka_unit_test(test_scene_wheel_loads),
        cmocka_unit_test(test_driven_wheel_1ms),
        cmocka_unit_test(test_threads_same),
        cmocka_unit_test(test_off_patch),
        cmocka_unit_test(test_scene_keys),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
