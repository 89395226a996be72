/* The joint rows of a DVI step eliminated by the sparse factorisation
 * (joint_solve, src/world/joint_direct.c, docs/world.md "Joint rows solved
 * directly"), against the world's solver on every row:
 *   - joint rows alone (a 60-link chain: 180 rows, and 1 revolute pendulum):
 *     no iteration, joint violation as with the solver, the same motion;
 *   - a chain lying partly on the ground: direct (APGD, PGS and Lemke on the
 *     contacts' Schur complement) and iterative (APGD on every row, to 1e-10)
 *     give the same motion, and ground and anchor hold the chain's weight;
 *   - redundant rows: a body on two identical hinges (5 of 10 rows
 *     redundant) moves as on one, and the two reactions add up to the one's;
 *   - nearly singular rows: a 1,000-link revolute chain drops none; the
 *     rigid rover's differential keeps its joints closed through the climb;
 *   - a joint added mid-run: the analysis follows the new pattern;
 *   - after the first steps a direct step allocates nothing (a counting
 *     allocator);
 *   - DVI_JOINT_SOLVE_AUTO: which steps it takes directly.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dvi/scene.h"
#include "dvi/world.h"
#include "rover_probes.h"
#include "test_util.h"

#define G 9.81
#define H 1e-3
#define CHECK(cond, ...)                                                                                               \
    do {                                                                                                               \
        if (!(cond)) fail_msg(__VA_ARGS__);                                                                            \
    } while (0)
#ifdef SANITIZED
#define SANITIZED_LINKS 200 /* the optimised build runs the 1,000 links */
#else
#define SANITIZED_LINKS 1000
#endif

static dvi_world* world(const char* solver, dvi_joint_solve js, double tol, const dvi_allocator* a)
{
    dvi_world_def wd = dvi_default_world_def();
    wd.solver = solver;
    wd.joint_solve = js;
    if (tol > 0.0) {
        wd.solver_settings.tolerance = tol;
        wd.solver_settings.max_iterations = 200000;
    }
    if (a) wd.allocator = *a;
    dvi_world* w = NULL;
    assert_int_equal(dvi_world_create(&wd, &w), DVI_OK);
    return w;
}

static dvi_body_id sphere(dvi_world* w, double m, double r, const double* x, bool shape)
{
    dvi_body_def bd = dvi_default_body_def();
    bd.mass = m;
    bd.inertia[0] = bd.inertia[4] = bd.inertia[8] = 0.4 * m * r * r;
    memcpy(bd.position, x, sizeof bd.position);
    dvi_body_id id;
    assert_int_equal(dvi_body_create(w, &bd, &id), DVI_OK);
    if (shape) {
        dvi_shape_def sd = dvi_default_shape_def();
        sd.type = DVI_SHAPE_SPHERE;
        sd.radius = r;
        sd.material.friction = 0.5;
        dvi_shape_id s;
        assert_int_equal(dvi_shape_create(w, id, &sd, &s), DVI_OK);
    }
    return id;
}

static dvi_joint_id joint(dvi_world* w, dvi_joint_type type, dvi_body_id a, dvi_body_id b, const double* anchor,
                          const double* axis)
{
    dvi_joint_def jd = dvi_default_joint_def();
    jd.type = type;
    jd.body_a = a;
    jd.body_b = b;
    memcpy(jd.anchor, anchor, sizeof jd.anchor);
    if (axis) memcpy(jd.axis, axis, sizeof jd.axis);
    dvi_joint_id j;
    assert_int_equal(dvi_joint_create(w, &jd, &j), DVI_OK);
    return j;
}

/* A chain of `links` spheres (0.1 kg, r 2 cm, 5 cm apart) on spherical
 * joints from the world at the origin. lying = 0: released horizontal along
 * x (tilted 0.3 rad down so that it swings in 3-D with the y push), else
 * hanging straight down to a ground plane with its last `lying` links on it. */
static dvi_joint_id g_first_joint; /* the last chain's joint to the world */

static void chain(dvi_world* w, int links, int lying, dvi_body_id* body)
{
    const double s = 0.05, r = 0.02, m = 0.1;
    const bool contacts = lying > 0;
    if (contacts) {
        dvi_body_def gd = dvi_default_body_def();
        gd.type = DVI_BODY_FIXED;
        dvi_body_id g;
        assert_int_equal(dvi_body_create(w, &gd, &g), DVI_OK);
        dvi_shape_def sd = dvi_default_shape_def();
        sd.type = DVI_SHAPE_PLANE;
        sd.material.friction = 0.5;
        dvi_shape_id sh;
        assert_int_equal(dvi_shape_create(w, g, &sd, &sh), DVI_OK);
    }
    const int hanging = links - lying;
    const double top = contacts ? r + hanging * s : 0.0;
    double prev[3] = {0.0, 0.0, top};
    dvi_body_id pb = {0};
    for (int i = 1; i <= links; i++) {
        double x[3];
        if (!contacts) {
            x[0] = i * s * cos(0.3);
            x[1] = 0.0;
            x[2] = -i * s * sin(0.3);
        } else if (i <= hanging) {
            x[0] = 0.0;
            x[1] = 0.0;
            x[2] = top - i * s;
        } else {
            x[0] = (i - hanging) * s;
            x[1] = 0.0;
            x[2] = r;
        }
        const double anchor[3] = {0.5 * (prev[0] + x[0]), 0.5 * (prev[1] + x[1]), 0.5 * (prev[2] + x[2])};
        dvi_body_id id = sphere(w, m, r, x, contacts);
        dvi_joint_id j = joint(w, DVI_JOINT_SPHERICAL, pb, id, anchor, NULL);
        if (i == 1) g_first_joint = j;
        if (!contacts) { /* a sideways push on every link: 3-D motion */
            const double v[3] = {0.0, 0.2, 0.0}, om[3] = {0, 0, 0};
            assert_int_equal(dvi_body_set_velocity(w, id, v, om), DVI_OK);
        }
        body[i - 1] = id;
        pb = id;
        memcpy(prev, x, sizeof prev);
    }
}

static double max_distance(const dvi_world* a, const dvi_body_id* ba, const dvi_world* b, const dvi_body_id* bb, int n)
{
    double d = 0.0;
    for (int i = 0; i < n; i++) {
        double xa[3], xb[3];
        dvi_body_get_position(a, ba[i], xa);
        dvi_body_get_position(b, bb[i], xb);
        for (int k = 0; k < 3; k++) d = fmax(d, fabs(xa[k] - xb[k]));
    }
    return d;
}

/* Joint rows alone: 0 iterations, converged, violation and motion as with APGD on every row. */
static void test_joints_alone(void** state)
{
    (void)state;
    enum { LINKS = 60, STEPS = 300 };
    dvi_body_id bd[LINKS], bi[LINKS];
    dvi_world* wd = world("apgd", DVI_JOINT_SOLVE_DIRECT, 0.0, NULL);
    dvi_world* wa = world("apgd", DVI_JOINT_SOLVE_AUTO, 0.0, NULL);
    dvi_world* wi = world("apgd", DVI_JOINT_SOLVE_ITERATIVE, 1e-12, NULL);
    dvi_body_id ba[LINKS];
    chain(wd, LINKS, 0, bd);
    chain(wa, LINKS, 0, ba);
    chain(wi, LINKS, 0, bi);
    double viol_d = 0.0, viol_i = 0.0;
    long it_i = 0;
    for (int k = 0; k < STEPS; k++) {
        assert_int_equal(dvi_world_step(wd, H), DVI_OK);
        assert_int_equal(dvi_world_step(wa, H), DVI_OK);
        assert_true(dvi_world_step(wi, H) >= 0);
        const dvi_step_stats sd = dvi_world_get_stats(wd), sa = dvi_world_get_stats(wa), si = dvi_world_get_stats(wi);
        assert_int_equal(sd.joint_rows, 3 * LINKS);
        assert_int_equal(sd.iterations, 0);
        assert_int_equal(sa.iterations, 0);
        assert_int_equal(sd.solver_status, DVI_SOLVE_CONVERGED);
        assert_true(sd.residual <= 1e-10);
        viol_d = fmax(viol_d, sd.max_joint_violation);
        viol_i = fmax(viol_i, si.max_joint_violation);
        it_i += si.iterations;
    }
    const double dx = max_distance(wd, bd, wi, bi, LINKS), da = max_distance(wd, bd, wa, ba, LINKS);
    print_message("%d-link chain, %d steps: joint violation direct %.3g, iterative %.3g m; positions differ by %.3g m "
                  "(auto: %.3g); APGD on every row took %ld iterations\n",
                  LINKS, STEPS, viol_d, viol_i, dx, da, it_i);
    assert_true(viol_d <= fmax(2.0 * viol_i, 1e-9));
    assert_true(dx < 1e-6);
    assert_true(da == 0.0); /* auto takes the same direct path */
    dvi_world_destroy(wd);
    dvi_world_destroy(wa);
    dvi_world_destroy(wi);
}

/* A chain with its last links on the ground: direct with APGD, PGS and
 * Lemke on the contacts against APGD on every row, to 1e-10. */
static void chain_contacts(int LYING)
{
    enum { LINKS = 50, STEPS = 100 };
    dvi_body_id bref[LINKS];
    dvi_world* wi = world("apgd", DVI_JOINT_SOLVE_ITERATIVE, 1e-10, NULL);
    chain(wi, LINKS, LYING, bref);
    dvi_joint_id jref = g_first_joint, jd[3];
    static const char* const SOLVERS[3] = {"apgd", "pgs", "lemke"};
    dvi_world* wd[3];
    dvi_body_id bd[3][LINKS];
    for (int s = 0; s < 3; s++) {
        wd[s] = world(SOLVERS[s], DVI_JOINT_SOLVE_DIRECT, s < 2 ? 1e-10 : 0.0, NULL);
        chain(wd[s], LINKS, LYING, bd[s]);
        jd[s] = g_first_joint;
    }
    long it_i = 0, it_d[3] = {0, 0, 0};
    /* steps short of 1e-10 in some block's own units (the block residual), of APGD on every row and of
     * each contact solver: counted and printed; the answers are held to the forces and positions below */
    int short_i = 0, short_d[3] = {0, 0, 0};
    for (int k = 0; k < STEPS; k++) {
        dvi_status st0 = dvi_world_step(wi, H);
        assert_true(st0 == DVI_OK || st0 == DVI_NOT_CONVERGED);
        short_i += st0 != DVI_OK;
        it_i += dvi_world_get_stats(wi).iterations;
        for (int s = 0; s < 3; s++) {
            st0 = dvi_world_step(wd[s], H);
            assert_true(st0 == DVI_OK || st0 == DVI_NOT_CONVERGED);
            short_d[s] += st0 != DVI_OK;
            const dvi_step_stats st = dvi_world_get_stats(wd[s]);
            assert_int_equal(st.contacts, LYING + 1); /* and the last hanging link, on the ground too */
            assert_int_equal(st.joint_rows, 3 * LINKS);
            it_d[s] += st.iterations;
        }
    }
    /* The chain rests: the ground and the anchor hold its weight. How the
     * weight of the link at the corner splits between the ground and the
     * straight hanging chain above it is statically indeterminate (the
     * motion is not): APGD on every row puts 6.055 N on the ground, the
     * contact solvers on the Schur complement 5.89–6.19 N. Their sums are
     * the weight. */
    const double weight = LINKS * 0.1 * G;
    for (int s = -1; s < 3; s++) {
        dvi_world* w = s < 0 ? wi : wd[s];
        const dvi_body_id* b = s < 0 ? bref : bd[s];
        double ground = 0.0, f[3], t[3];
        for (int i = 0; i < LINKS; i++) {
            assert_int_equal(dvi_body_get_contact_force(w, b[i], f, t), DVI_OK);
            ground += f[2];
        }
        assert_int_equal(dvi_joint_get_reaction(w, s < 0 ? jref : jd[s], f, t), DVI_OK);
        const double dx = s < 0 ? 0.0 : max_distance(wi, bref, w, b, LINKS);
        print_message("chain of %d, %d on the ground, %d steps: %s%s: %ld iterations, positions differ from "
                      "iterative APGD's by %.3g m; ground %.4f N + anchor %.4f N = %.6f N (weight %.6f N)\n",
                      LINKS, LYING, STEPS, s < 0 ? "iterative " : "direct + ", s < 0 ? "apgd" : SOLVERS[s],
                      s < 0 ? it_i : it_d[s], dx, ground, f[2], ground + f[2], weight);
        assert_true(dx < 1e-7);
        assert_near(ground + f[2], weight, 1e-6 * weight);
        assert_true(ground > 0.1 * G * (LYING - 1));
    }
    print_message("steps short of the tolerance: iterative apgd %d, direct + apgd %d, pgs %d, lemke %d of %d\n",
                  short_i, short_d[0], short_d[1], short_d[2], STEPS);
    assert_true(it_d[0] < it_i);
    dvi_world_destroy(wi);
    for (int s = 0; s < 3; s++) dvi_world_destroy(wd[s]);
}

/* 6 links on the ground: 21 contact rows, the dense Schur complement. */
static void test_chain_contacts(void** state)
{
    (void)state;
    chain_contacts(6);
}

/* 40 links on the ground: 123 contact rows, above
 * DVI_JOINT_SOLVE_AUTO_CONTACT_ROWS: the Schur complement matrix-free, as
 * the contacts' factor form with the low-rank term G = Z. */
static void test_chain_contacts_lowrank(void** state)
{
    (void)state;
    chain_contacts(40);
}

/* A pendulum on two identical hinges: 5 of its 10 rows are redundant. */
static void test_redundant_hinges(void** state)
{
    (void)state;
    const double x[3] = {0.0, 0.3, -0.9539392014169456}, o[3] = {0, 0, 0}, ax[3] = {1, 0, 0};
    dvi_world* w1 = world("apgd", DVI_JOINT_SOLVE_DIRECT, 0.0, NULL);
    dvi_world* w2 = world("apgd", DVI_JOINT_SOLVE_DIRECT, 0.0, NULL);
    dvi_body_id b1 = sphere(w1, 1.0, 0.05, x, false), b2 = sphere(w2, 1.0, 0.05, x, false);
    dvi_joint_id j1 = joint(w1, DVI_JOINT_REVOLUTE, (dvi_body_id){0}, b1, o, ax);
    dvi_joint_id ja = joint(w2, DVI_JOINT_REVOLUTE, (dvi_body_id){0}, b2, o, ax);
    dvi_joint_id jb = joint(w2, DVI_JOINT_REVOLUTE, (dvi_body_id){0}, b2, o, ax);
    double worst = 0.0, worst_f = 0.0;
    for (int k = 0; k < 500; k++) {
        assert_int_equal(dvi_world_step(w1, H), DVI_OK);
        assert_int_equal(dvi_world_step(w2, H), DVI_OK);
        const dvi_step_stats s2 = dvi_world_get_stats(w2);
        assert_int_equal(s2.joint_rows, 10);
        assert_int_equal(s2.iterations, 0);
        assert_int_equal(s2.joint_rows_dropped, 5); /* said in the step's statistics */
        assert_int_equal(dvi_world_get_stats(w1).joint_rows_dropped, 0);
        double p1[3], p2[3], f1[3], t1[3], fa[3], ta[3], fb[3], tb[3];
        dvi_body_get_position(w1, b1, p1);
        dvi_body_get_position(w2, b2, p2);
        for (int i = 0; i < 3; i++) worst = fmax(worst, fabs(p1[i] - p2[i]));
        assert_int_equal(dvi_joint_get_reaction(w1, j1, f1, t1), DVI_OK);
        assert_int_equal(dvi_joint_get_reaction(w2, ja, fa, ta), DVI_OK);
        assert_int_equal(dvi_joint_get_reaction(w2, jb, fb, tb), DVI_OK);
        for (int i = 0; i < 3; i++) worst_f = fmax(worst_f, fabs(fa[i] + fb[i] - f1[i]));
    }
    print_message("two identical hinges against one, 500 steps: positions differ by %.3g m, reactions by %.3g N\n",
                  worst, worst_f);
    assert_true(worst < 1e-9);
    assert_true(worst_f < 1e-6);
    dvi_world_destroy(w1);
    dvi_world_destroy(w2);
}

/* A motor beside a light part: a free chassis (1,000 kg, 1 m cube) drives
 * a wheel (1 kg, I = 0.005 kg m²) on a revolute joint with a speed motor at
 * 10 rad/s, and carries a 1 g sensor (r = 1 mm) on a fixed joint. No
 * gravity. The sensor's rows make N_BB's largest diagonal 2.5e9, and the
 * global floor (1e-7 of it) lay above the wheel's whole revolute
 * (diagonals 1 to 200): its six rows were dropped and the wheel stood
 * still, every step "converged". Each row is now judged on its own
 * diagonal too: nothing is dropped and the wheel turns at 10 rad/s
 * relative to the chassis from the first step (a speed row holds its
 * target exactly: to 1e-9 rad/s). */
static void test_motor_beside_light_part(void** state)
{
    (void)state;
    dvi_world_def wd = dvi_default_world_def();
    memset(wd.gravity, 0, sizeof wd.gravity);
    wd.joint_solve = DVI_JOINT_SOLVE_DIRECT;
    dvi_world* w = NULL;
    assert_int_equal(dvi_world_create(&wd, &w), DVI_OK);
    dvi_body_def bd = dvi_default_body_def();
    bd.mass = 1000.0;
    for (int k = 0; k < 3; k++) bd.inertia[4 * k] = 1000.0 / 6.0;
    dvi_body_id chassis, wheel, sensor;
    assert_int_equal(dvi_body_create(w, &bd, &chassis), DVI_OK);
    bd = dvi_default_body_def();
    bd.mass = 1.0;
    for (int k = 0; k < 3; k++) bd.inertia[4 * k] = 0.005;
    bd.position[1] = 0.6;
    assert_int_equal(dvi_body_create(w, &bd, &wheel), DVI_OK);
    bd = dvi_default_body_def();
    bd.mass = 1e-3;
    for (int k = 0; k < 3; k++) bd.inertia[4 * k] = 0.4 * 1e-3 * 1e-6;
    bd.position[0] = bd.position[2] = 0.5;
    assert_int_equal(dvi_body_create(w, &bd, &sensor), DVI_OK);
    dvi_joint_def jd = dvi_default_joint_def();
    jd.type = DVI_JOINT_REVOLUTE;
    jd.body_a = chassis;
    jd.body_b = wheel;
    jd.anchor[1] = 0.6;
    jd.axis[0] = 0.0, jd.axis[1] = 1.0, jd.axis[2] = 0.0;
    jd.motor = DVI_MOTOR_ROTATION_SPEED;
    jd.motor_speed = 10.0;
    dvi_joint_id j;
    assert_int_equal(dvi_joint_create(w, &jd, &j), DVI_OK);
    jd = dvi_default_joint_def();
    jd.type = DVI_JOINT_FIXED;
    jd.body_a = chassis;
    jd.body_b = sensor;
    jd.anchor[0] = 0.5, jd.anchor[2] = 0.501;
    assert_int_equal(dvi_joint_create(w, &jd, &j), DVI_OK);
    double worst = 0.0;
    for (int k = 0; k < 100; k++) {
        assert_int_equal(dvi_world_step(w, H), DVI_OK);
        const dvi_step_stats st = dvi_world_get_stats(w);
        assert_int_equal(st.joint_rows, 12);
        assert_int_equal(st.joint_rows_dropped, 0);
        assert_int_equal(st.iterations, 0);
        double ow[3], oc[3];
        dvi_body_get_angular_velocity(w, wheel, ow);
        dvi_body_get_angular_velocity(w, chassis, oc);
        worst = fmax(worst, fabs(ow[1] - oc[1] - 10.0));
    }
    print_message("motor beside a 1 g sensor: relative speed within %.3g rad/s of 10\n", worst);
    assert_true(worst < 1e-9);
    dvi_world_destroy(w);
}

/* A chain of 1,000 links (0.1 kg spheres, 5 cm apart) on revolute joints
 * (5,000 rows; axes along y) hanging from the world, released 0.3 rad
 * from the vertical, 20 steps directly. An open chain has no redundant row,
 * but one out-of-plane pivot near the anchor keeps only 1.1e-9 of its row's
 * diagonal (below both the floor and 1e-2 of its own diagonal): it was
 * dropped, one row a step. It is now raised and kept (joint_rows_regularised
 * 1 a step, joint_rows_dropped 0), and the answer meets the tolerance: every
 * step's residual on all 5,000 rows stays at rounding (measured 6.5e-15),
 * and the joints hold to 1e-7 m (measured 4.3e-10 m; 2.1e-9 m for the 200
 * links of a sanitized build), well below the 1.1e-6 m a wrongly dropped
 * row opened. */
static void test_long_revolute_chain(void** state)
{
    (void)state;
    const int links = SANITIZED_LINKS;
    dvi_world* w = world("apgd", DVI_JOINT_SOLVE_DIRECT, 0.0, NULL);
    dvi_body_id pb = {0};
    const double s = 0.05, ax[3] = {0, 1, 0};
    double prev[3] = {0, 0, 0};
    for (int i = 1; i <= links; i++) {
        const double x[3] = {i * s * sin(0.3), 0.0, -i * s * cos(0.3)};
        const double anchor[3] = {0.5 * (prev[0] + x[0]), 0.0, 0.5 * (prev[2] + x[2])};
        dvi_body_id id = sphere(w, 0.1, 0.02, x, false);
        joint(w, DVI_JOINT_REVOLUTE, pb, id, anchor, ax);
        pb = id;
        memcpy(prev, x, sizeof prev);
    }
    int dropped = 0, raised = 0;
    double worst = 0.0, opened = 0.0;
    for (int k = 0; k < 20; k++) {
        const dvi_status st = dvi_world_step(w, H);
        const dvi_step_stats ss = dvi_world_get_stats(w);
        assert_int_equal(ss.joint_rows, 5 * links);
        assert_true(ss.joint_residual == ss.residual); /* joint rows alone: the step's residual */
        dropped += ss.joint_rows_dropped;
        raised += ss.joint_rows_regularised;
        worst = fmax(worst, ss.residual);
        opened = fmax(opened, ss.max_joint_violation);
        CHECK(st == DVI_OK, "step %d: status %d, residual %g, %d rows dropped", k, (int)st, ss.residual,
              (int)ss.joint_rows_dropped);
    }
    print_message("%d-link revolute chain, 20 steps: %d rows dropped, %d raised, largest residual %.3g, joints open "
                  "%.3g m\n", links, dropped, raised, worst, opened);
    assert_int_equal(dropped, 0);
    assert_true(worst < 1e-10);
    assert_true(opened < 1e-7);
    dvi_world_destroy(w);
}

/* The rigid rover (examples/scenes/rover_obstacle_rigid.json: 19 joints,
 * 105 rows, a differential whose links end in revolute joints) with
 * joint_solve "direct", its first 12 s. Until the front wheel's climb
 * (9.18 s) the differential's loop has 6 rows redundant to rounding
 * (pivots below 1e-10 of their diagonals), dropped on every step, and the
 * other rows meet the step's tolerance (1e-8) given the contacts' impulses
 * on every step (measured: at most 5.8e-13). From the climb on, one
 * direction of the loop is redundant to first order only: its rows are
 * dropped as inconsistent and that direction taken out of the right-hand
 * side, which keeps the joints within 2e-5 m (measured 7.1e-6 m; dropping
 * the rows alone let them open by 5.4e-5 m by 12 s and 1.2 mm by 26 s). */
static void test_rover_differential(void** state)
{
    (void)state;
    const char* path = SRC_PATH("examples/scenes/rover_obstacle_rigid.json");
    dvi_scene* s = NULL;
    dvi_scene_errors e = {0};
    if (dvi_scene_load(path, &s, &e) != DVI_OK) fail_msg("%s: %s", path, e.text);
    dvi_scene_overrides ov;
    memset(&ov, 0, sizeof ov);
    ov.joint_solve = "direct";
    assert_int_equal(dvi_scene_apply_overrides(s, &ov, &e), DVI_OK);
    dvi_model* m = NULL;
    char msg[256];
    assert_int_equal(dvi_model_create(s, &m, msg, sizeof msg), DVI_OK);
    const double tol = dvi_default_solver_settings().tolerance; /* the scene sets none */
    double worst = 0.0, opened = 0.0;
    for (int k = 0; k < 12000; k++) {
        const dvi_status st = dvi_model_step(m);
        const dvi_step_stats ss = dvi_world_get_stats(dvi_model_world(m));
        CHECK(st == DVI_OK, "step %d: status %d", k, (int)st);
        assert_int_equal(ss.joint_rows, 105);
        assert_int_equal(ss.joint_rows_dropped, 6);
        assert_int_equal(ss.joint_rows_regularised, 0);
        opened = fmax(opened, ss.max_joint_violation);
        if (k >= 9150) continue; /* the climb: the loop's second-order direction */
        CHECK(ss.joint_residual <= tol, "step %d: joint residual %g above the tolerance %g", k, ss.joint_residual, tol);
        worst = fmax(worst, ss.joint_residual);
    }
    print_message("rigid rover, direct joint solve: largest joint residual %.3g before the climb (tolerance %g); "
                  "joints open %.3g m in 12 s\n", worst, tol, opened);
    assert_true(opened < 2e-5);
    dvi_model_destroy(m);
    dvi_scene_destroy(s);
}

/* A link added to a chain mid-run: the pattern changes and is analysed
 * anew; the chain then moves as with APGD on every row. */
static void test_joint_added(void** state)
{
    (void)state;
    enum { LINKS = 8 };
    dvi_body_id b[2][LINKS + 1];
    dvi_world* w[2] = {world("apgd", DVI_JOINT_SOLVE_DIRECT, 0.0, NULL),
                       world("apgd", DVI_JOINT_SOLVE_ITERATIVE, 1e-12, NULL)};
    double viol[2] = {0.0, 0.0};
    for (int q = 0; q < 2; q++) {
        chain(w[q], LINKS, 0, b[q]);
        for (int k = 0; k < 50; k++) assert_true(dvi_world_step(w[q], H) >= 0);
        double x[3];
        dvi_body_get_position(w[q], b[q][LINKS - 1], x);
        const double xn[3] = {x[0] + 0.05, x[1], x[2]}, anchor[3] = {x[0] + 0.025, x[1], x[2]};
        b[q][LINKS] = sphere(w[q], 0.1, 0.02, xn, false);
        joint(w[q], DVI_JOINT_SPHERICAL, b[q][LINKS - 1], b[q][LINKS], anchor, NULL);
        for (int k = 0; k < 200; k++) {
            assert_true(dvi_world_step(w[q], H) >= 0);
            const dvi_step_stats s = dvi_world_get_stats(w[q]);
            assert_int_equal(s.joint_rows, 3 * (LINKS + 1));
            if (q == 0) assert_int_equal(s.iterations, 0);
            viol[q] = fmax(viol[q], s.max_joint_violation);
        }
    }
    const double dx = max_distance(w[0], b[0], w[1], b[1], LINKS + 1);
    print_message("a link added after 50 steps: largest violation %.3g m (iterative %.3g m) over 200 steps; "
                  "positions differ by %.3g m\n", viol[0], viol[1], dx);
    assert_true(viol[0] <= 1.01 * viol[1] + 1e-9);
    assert_true(dx < 1e-6);
    dvi_world_destroy(w[0]);
    dvi_world_destroy(w[1]);
}

/* ---- a counting allocator ---------------------------------------------------------------- */

static long g_calls;
static void* count_alloc(void* u, size_t n)
{
    (void)u;
    g_calls++;
    return malloc(n);
}
static void* count_realloc(void* u, void* p, size_t n)
{
    (void)u;
    g_calls++;
    return realloc(p, n);
}
static void count_free(void* u, void* p)
{
    (void)u;
    free(p);
}

/* After the first steps, a direct step with contacts asks the allocator for nothing. */
static void test_no_step_allocation(void** state)
{
    (void)state;
    const dvi_allocator a = {count_alloc, count_realloc, count_free, NULL};
    static const char* const SOLVERS[2] = {"apgd", "lemke"};
    for (int s = 0; s < 2; s++) {
        dvi_body_id b[24];
        dvi_world* w = world(SOLVERS[s], DVI_JOINT_SOLVE_DIRECT, 0.0, &a);
        chain(w, 24, 5, b);
        /* (the collision's candidate pairs grow once more on step 25) */
        for (int k = 0; k < 30; k++) assert_int_equal(dvi_world_step(w, H), DVI_OK);
        const long before = g_calls;
        for (int k = 0; k < 50; k++) assert_int_equal(dvi_world_step(w, H), DVI_OK);
        print_message("direct + %s: %ld allocator calls in 50 steps after the first 30\n", SOLVERS[s], g_calls - before);
        assert_int_equal(g_calls - before, 0);
        dvi_world_destroy(w);
    }
}

/* DVI_JOINT_SOLVE_AUTO: a step with joint rows is taken directly with the
 * dense Schur complement up to DVI_JOINT_SOLVE_AUTO_CONTACT_ROWS contact
 * rows, and matrix-free beyond while the contact rows are at most the joint
 * rows (a chain of 60 with 40 links down: 123 against 180); else (the
 * same chain beside 30 loose spheres on the ground: 213 against 180), or
 * with PGS, the solver gets every row. */
static void test_auto_choice(void** state)
{
    (void)state;
    static const struct {
        const char* solver;
        int links, lying, loose;
        bool direct;
    } cases[] = {{"apgd", 60, 6, 0, true},   {"apgd", 60, 40, 0, true}, {"apgd", 60, 40, 30, false},
                 {"pgs", 60, 6, 0, false},   {"pgs", 60, 40, 0, false}, {"lemke", 60, 6, 0, true}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        dvi_body_id b[60], bd[60];
        dvi_world* w = world(cases[c].solver, DVI_JOINT_SOLVE_AUTO, 0.0, NULL);
        dvi_world* wd = world(cases[c].solver, cases[c].direct ? DVI_JOINT_SOLVE_DIRECT : DVI_JOINT_SOLVE_ITERATIVE,
                              0.0, NULL);
        const int links = cases[c].links;
        chain(w, links, cases[c].lying, b);
        chain(wd, links, cases[c].lying, bd);
        for (int k = 0; k < cases[c].loose; k++) { /* spheres resting on the ground, 1 m aside */
            const double x[3] = {0.05 * k, 1.0, 0.02};
            sphere(w, 0.1, 0.02, x, true);
            sphere(wd, 0.1, 0.02, x, true);
        }
        for (int k = 0; k < 20; k++) {
            assert_true(dvi_world_step(w, H) >= 0);
            assert_true(dvi_world_step(wd, H) >= 0);
            assert_int_equal(dvi_world_get_stats(w).iterations, dvi_world_get_stats(wd).iterations);
        }
        assert_true(max_distance(w, b, wd, bd, links) == 0.0); /* the same path, the same bits */
        dvi_world_destroy(w);
        dvi_world_destroy(wd);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_joints_alone),       cmocka_unit_test(test_chain_contacts),
        cmocka_unit_test(test_chain_contacts_lowrank),
        cmocka_unit_test(test_redundant_hinges),   cmocka_unit_test(test_joint_added),
        cmocka_unit_test(test_motor_beside_light_part), cmocka_unit_test(test_long_revolute_chain),
        cmocka_unit_test(test_rover_differential),
        cmocka_unit_test(test_no_step_allocation), cmocka_unit_test(test_auto_choice),
    };
    if (rover_register_probes() != DVI_OK) return 1; /* the rover scene's probe kinds */
    return cmocka_run_group_tests(tests, NULL, NULL);
}
