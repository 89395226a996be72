/* dvicontact — cost per step of joint-heavy worlds: the joint rows eliminated
 * by the sparse factorisation (joint_solve "direct"; docs/world.md, "Joint
 * rows solved directly") against the world's solver on every row
 * ("iterative"), for the scenes of issue 29:
 *
 *   rover_rigid    the rover crossing on rigid ground (scenes/rover_obstacle_rigid.json,
 *                  Scarecrow, 105 joint rows, 12–14 contacts), its first steps
 *                  from the start (the wheels' speed ramp)
 *   pendulum       a 1 kg sphere on a revolute joint to the world, 1 m below, 3°
 *   chain_1000     1,000 spheres (0.1 kg, 5 cm apart) on spherical joints, hanging
 *                  from the world, released horizontal (3,000 joint rows, no contact)
 *   chain_200      200 such spheres hanging from the world, the last 10 lying on
 *                  the ground (600 joint rows, 10 contacts)
 *
 * Each configuration runs `--repeat` times (default 3; once when a step
 * takes more than 20 ms: the iterative rows of the chains) from the same start;
 * the row shows the median µs per step (and the range), µs per joint row,
 * the mean solver iterations (the contact solver's under "direct": 0 for
 * joint rows alone), the largest joint violation before a step, and, for
 * the joint-only worlds, the relative drift of the total energy over the
 * run. Lemke on chain_1000 is left out: it eliminates 3,000 bilateral rows
 * by a dense eigen-decomposition (~2.4e11 flops a step).
 *
 * usage: bench_joints [--steps N] [--repeat R] [--json] [--only NAME]
 * --only NAME runs the rows of one scene; --only sweep runs the 200-link chain
 * with 20 to 150 links on the ground, APGD direct and iterative (not in the
 * default rows): where the dense Schur complement stops paying.
 * --steps N scales every row's steps by N/400 (default: 400 for the direct rows of the
 * rover and the chains, 2000 for the pendulum, 10–40 for the slow iterative rows).
 * The first step of a run
 * (cold: no warm start, the analysis, buffers growing) is left out of the means.
 */
#include "bench_cli.h"
#include "data_path.h"
#include "rover_probes.h"

#include <dvi/scene.h>
#include <dvi/world.h>

#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define G 9.81

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

typedef struct result {
    double us_per_step;
    double iterations;      /* mean per step */
    int max_iterations;
    double contacts;        /* mean per step */
    int joint_rows;
    double max_violation;   /* largest max_joint_violation over the steps */
    double energy_drift;    /* (E_end − E_0) / E_scale, NAN when not measured */
    int not_converged;
    int last_status;        /* dvi_solve_status of the last step that was not converged, or 0 */
    double max_residual;
} result;

/* ---- worlds built through world.h ----------------------------------------------------- */

typedef struct built {
    dvi_world* w;
    int n;                  /* dynamic bodies, in order */
    dvi_body_id* body;
    double* mass;
    double* inertia;        /* a scalar per body (spheres) */
} built;

static dvi_world* new_world(const char* solver, const char* joint_solve)
{
    dvi_world_def wd = dvi_default_world_def();
    wd.solver = solver;
    wd.joint_solve = strcmp(joint_solve, "direct") == 0      ? DVI_JOINT_SOLVE_DIRECT
                     : strcmp(joint_solve, "iterative") == 0 ? DVI_JOINT_SOLVE_ITERATIVE
                                                             : DVI_JOINT_SOLVE_AUTO;
    dvi_world* w = NULL;
    if (dvi_world_create(&wd, &w) != DVI_OK) return NULL;
    return w;
}

static dvi_body_id sphere_body(built* b, double m, double r, const double* x, bool shape)
{
    dvi_body_def bd = dvi_default_body_def();
    bd.mass = m;
    const double I = 0.4 * m * r * r;
    bd.inertia[0] = bd.inertia[4] = bd.inertia[8] = I;
    memcpy(bd.position, x, sizeof bd.position);
    dvi_body_id id;
    if (dvi_body_create(b->w, &bd, &id) != DVI_OK) exit(1);
    if (shape) {
        dvi_shape_def sd = dvi_default_shape_def();
        sd.type = DVI_SHAPE_SPHERE;
        sd.radius = r;
        sd.material.friction = 0.5;
        dvi_shape_id s;
        if (dvi_shape_create(b->w, id, &sd, &s) != DVI_OK) exit(1);
    }
    b->body[b->n] = id;
    b->mass[b->n] = m;
    b->inertia[b->n] = I;
    b->n++;
    return id;
}

static void joint(dvi_world* w, dvi_joint_type type, dvi_body_id a, dvi_body_id b, const double* anchor,
                  const double* axis)
{
    dvi_joint_def jd = dvi_default_joint_def();
    jd.type = type;
    jd.body_a = a;
    jd.body_b = b;
    memcpy(jd.anchor, anchor, sizeof jd.anchor);
    if (axis) memcpy(jd.axis, axis, sizeof jd.axis);
    dvi_joint_id j;
    if (dvi_joint_create(w, &jd, &j) != DVI_OK) exit(1);
}

static bool build_pendulum(built* b, const char* solver, const char* js)
{
    b->w = new_world(solver, js);
    if (!b->w) return false;
    const double amp = 3.0 * 3.141592653589793 / 180.0;
    const double x[3] = {0.0, sin(amp), -cos(amp)}, o[3] = {0, 0, 0}, ax[3] = {1, 0, 0};
    dvi_body_id s = sphere_body(b, 1.0, 0.05, x, false);
    joint(b->w, DVI_JOINT_REVOLUTE, (dvi_body_id){0}, s, o, ax);
    return true;
}

/* links spheres 5 cm apart on spherical joints (at the midpoints) from the
 * world; `lying` of them on the ground (with a plane), the rest hanging */
static bool build_chain(built* b, const char* solver, const char* js, int links, int lying)
{
    b->w = new_world(solver, js);
    if (!b->w) return false;
    const double s = 0.05, r = 0.02, m = 0.1;
    const bool contacts = lying > 0;
    if (contacts) {
        dvi_body_def gd = dvi_default_body_def();
        gd.type = DVI_BODY_FIXED;
        dvi_body_id g;
        dvi_shape_def sd = dvi_default_shape_def();
        sd.type = DVI_SHAPE_PLANE;
        sd.material.friction = 0.5;
        dvi_shape_id sh;
        if (dvi_body_create(b->w, &gd, &g) != DVI_OK || dvi_shape_create(b->w, g, &sd, &sh) != DVI_OK) return false;
    }
    const int hanging = links - lying;
    /* hanging: released horizontal along x from the anchor (no contact);
     * with contacts: straight down from the anchor at height r + hanging·s,
     * then along x on the ground */
    const double top = contacts ? r + hanging * s : 0.0;
    double prev[3] = {0.0, 0.0, top};
    dvi_body_id pb = {0};
    for (int i = 1; i <= links; i++) {
        double x[3];
        if (!contacts) {
            x[0] = i * s;
            x[1] = 0.0;
            x[2] = 0.0;
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
        dvi_body_id id = sphere_body(b, m, r, x, contacts);
        joint(b->w, DVI_JOINT_SPHERICAL, pb, id, anchor, NULL);
        pb = id;
        memcpy(prev, x, sizeof prev);
    }
    return true;
}

static double energy(const built* b)
{
    double e = 0.0;
    for (int i = 0; i < b->n; i++) {
        double x[3], v[3], om[3];
        dvi_body_get_position(b->w, b->body[i], x);
        dvi_body_get_velocity(b->w, b->body[i], v);
        dvi_body_get_angular_velocity(b->w, b->body[i], om);
        e += 0.5 * b->mass[i] * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]) +
             0.5 * b->inertia[i] * (om[0] * om[0] + om[1] * om[1] + om[2] * om[2]) + b->mass[i] * G * x[2];
    }
    return e;
}

typedef bool (*step_fn)(void* ctx);
typedef const dvi_world* (*world_fn)(void* ctx);

static bool step_built(void* ctx)
{
    return dvi_world_step(((built*)ctx)->w, 1e-3) >= 0;
}

static bool step_model(void* ctx)
{
    return dvi_model_step((dvi_model*)ctx) >= 0;
}

/* Runs `steps` steps after a first one; fills r (energy not touched). */
static bool run_steps(step_fn step, void* ctx, const dvi_world* w, int steps, result* r)
{
    if (!step(ctx)) return false;
    double t0 = now();
    long it = 0;
    double contacts = 0.0;
    for (int k = 0; k < steps; k++) {
        if (!step(ctx)) return false;
        const dvi_step_stats st = dvi_world_get_stats(w);
        it += st.iterations;
        if (st.iterations > r->max_iterations) r->max_iterations = st.iterations;
        contacts += st.contacts;
        r->joint_rows = st.joint_rows;
        if (st.max_joint_violation > r->max_violation) r->max_violation = st.max_joint_violation;
        if (st.solver_status != DVI_SOLVE_CONVERGED && st.rows > 0) {
            r->not_converged++;
            r->last_status = (int)st.solver_status;
        }
        if (st.residual > r->max_residual) r->max_residual = st.residual;
    }
    r->us_per_step = 1e6 * (now() - t0) / steps;
    r->iterations = (double)it / steps;
    r->contacts = contacts / steps;
    return true;
}

typedef enum kind { K_ROVER, K_PENDULUM, K_CHAIN1000, K_CHAIN200 } kind;

static bool run_once(kind k, const char* solver, const char* js, int steps, int lying, result* r)
{
    memset(r, 0, sizeof *r);
    r->energy_drift = NAN;
    if (k == K_ROVER) {
        char path[4096];
        if (!data_path_or(NULL, "scenes/rover_obstacle_rigid.json", path, sizeof path, "bench_joints")) return false;
        dvi_scene* s = NULL;
        dvi_scene_errors e;
        if (dvi_scene_load(path, &s, &e) != DVI_OK) {
            fprintf(stderr, "bench_joints: %s: %s", path, e.text ? e.text : "cannot load\n");
            dvi_scene_errors_free(&e);
            return false;
        }
        dvi_scene_overrides ov;
        memset(&ov, 0, sizeof ov);
        ov.solver = solver;
        ov.joint_solve = js;
        dvi_model* m = NULL;
        char msg[256];
        bool ok = dvi_scene_apply_overrides(s, &ov, &e) == DVI_OK && dvi_model_create(s, &m, msg, sizeof msg) == DVI_OK;
        dvi_scene_errors_free(&e);
        if (ok) ok = run_steps(step_model, m, dvi_model_world_const(m), steps, r);
        dvi_model_destroy(m);
        dvi_scene_destroy(s);
        return ok;
    }
    built b;
    memset(&b, 0, sizeof b);
    const int cap = 1001;
    b.body = calloc(cap, sizeof *b.body);
    b.mass = calloc(cap, sizeof *b.mass);
    b.inertia = calloc(cap, sizeof *b.inertia);
    bool ok = b.body && b.mass && b.inertia;
    if (ok) {
        ok = k == K_PENDULUM    ? build_pendulum(&b, solver, js)
             : k == K_CHAIN1000 ? build_chain(&b, solver, js, 1000, 0)
                                : build_chain(&b, solver, js, 200, lying);
    }
    if (ok) {
        const double e0 = energy(&b);
        /* the energy's scale: the potential energy of the bodies' height range */
        double zmin = INFINITY, zmax = -INFINITY, mtot = 0.0;
        for (int i = 0; i < b.n; i++) {
            double x[3];
            dvi_body_get_position(b.w, b.body[i], x);
            zmin = fmin(zmin, x[2]);
            zmax = fmax(zmax, x[2]);
            mtot += b.mass[i];
        }
        const double scale = k == K_PENDULUM ? b.mass[0] * G * (1.0 - cos(3.0 * 3.141592653589793 / 180.0))
                                             : mtot * G * fmax(zmax - zmin, 0.05 * b.n);
        ok = run_steps(step_built, &b, b.w, steps, r);
        if (ok && k != K_CHAIN200) r->energy_drift = (energy(&b) - e0) / scale;
    }
    dvi_world_destroy(b.w);
    free(b.body);
    free(b.mass);
    free(b.inertia);
    return ok;
}

static int cmp_double(const void* a, const void* b)
{
    const double x = *(const double*)a, y = *(const double*)b;
    return (x > y) - (x < y);
}

int main(int argc, char** argv)
{
    if (rover_register_probes() != DVI_OK) return 1; /* the rover scene's probe kinds */
    int steps = 0, repeat = 3;
    bool json = false;
    const char* only = NULL;
    for (int i = 1; i < argc; i++) {
        int64_t n = 0;
        if (strcmp(argv[i], "--steps") == 0 && i + 1 < argc) {
            if (!cli_int("bench_joints", "--steps", argv[++i], 1, INT_MAX, "an integer >= 1", &n)) return 2;
            steps = (int)n;
        } else if (strcmp(argv[i], "--repeat") == 0 && i + 1 < argc) {
            if (!cli_int("bench_joints", "--repeat", argv[++i], 1, 99, "an integer in [1, 99]", &n)) return 2;
            repeat = (int)n;
        } else if (strcmp(argv[i], "--json") == 0) {
            json = true;
        } else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc) {
            only = argv[++i];
        } else {
            fprintf(stderr, "usage: bench_joints [--steps N] [--repeat R] [--json] [--only NAME]\n");
            return 2;
        }
    }
    static const struct {
        const char* scene;
        kind k;
        const char* solver;
        const char* js;
        int steps;
        int lying; /* chain_200: links on the ground (10, or the sweep's) */
    } rows[] = {
        {"rover_rigid", K_ROVER, "lemke", "direct", 400, 0},
        {"rover_rigid", K_ROVER, "lemke", "iterative", 400, 0},
        {"rover_rigid", K_ROVER, "apgd", "direct", 400, 0},
        {"rover_rigid", K_ROVER, "apgd", "iterative", 40, 0},
        {"pendulum", K_PENDULUM, "apgd", "direct", 2000, 0},
        {"pendulum", K_PENDULUM, "apgd", "iterative", 2000, 0},
        {"chain_1000", K_CHAIN1000, "apgd", "direct", 400, 0},
        {"chain_1000", K_CHAIN1000, "apgd", "iterative", 10, 0},
        {"chain_1000", K_CHAIN1000, "pgs", "iterative", 10, 0},
        {"chain_200", K_CHAIN200, "apgd", "direct", 400, 0},
        {"chain_200", K_CHAIN200, "pgs", "direct", 400, 0},
        {"chain_200", K_CHAIN200, "lemke", "direct", 400, 0},
        {"chain_200", K_CHAIN200, "apgd", "iterative", 40, 0},
        {"chain_200", K_CHAIN200, "pgs", "iterative", 20, 0},
        {"chain_200", K_CHAIN200, "lemke", "iterative", 10, 0},
        /* --only sweep: the contact rows at which the dense Schur complement stops paying */
        {"sweep", K_CHAIN200, "apgd", "direct", 100, 20},
        {"sweep", K_CHAIN200, "apgd", "iterative", 40, 20},
        {"sweep", K_CHAIN200, "apgd", "direct", 100, 30},
        {"sweep", K_CHAIN200, "apgd", "iterative", 40, 30},
        {"sweep", K_CHAIN200, "apgd", "direct", 100, 45},
        {"sweep", K_CHAIN200, "apgd", "iterative", 40, 45},
        {"sweep", K_CHAIN200, "apgd", "direct", 40, 90},
        {"sweep", K_CHAIN200, "apgd", "iterative", 40, 90},
        {"sweep", K_CHAIN200, "apgd", "direct", 20, 150},
        {"sweep", K_CHAIN200, "apgd", "iterative", 40, 150},
    };
    if (!json)
        printf("%-12s %-6s %-10s %6s %6s %9s %17s %9s %8s %7s %9s %10s %9s %5s\n", "scene", "solver", "joint_solve",
               "steps", "rows", "contacts", "us/step (range)", "us/row", "iter", "max it", "max viol", "E drift",
               "max res", "n.c.");
    int rc = 0;
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        if (only ? strcmp(only, rows[i].scene) != 0 : strcmp(rows[i].scene, "sweep") == 0) continue;
        int n = steps > 0 ? (int)((long long)rows[i].steps * steps / 400) : rows[i].steps;
        if (n < 1) n = 1;
        double t[99];
        result r;
        bool ok = true;
        int reps = repeat;
        for (int k = 0; k < reps && ok; k++) {
            ok = run_once(rows[i].k, rows[i].solver, rows[i].js, n, rows[i].lying ? rows[i].lying : 10, &r);
            t[k] = r.us_per_step;
            if (k == 0 && r.us_per_step > 2e4) reps = 1; /* the slow iterative rows: once */
        }
        if (!ok) {
            fprintf(stderr, "bench_joints: %s %s %s failed\n", rows[i].scene, rows[i].solver, rows[i].js);
            rc = 1;
            continue;
        }
        qsort(t, (size_t)reps, sizeof t[0], cmp_double);
        const double med = t[reps / 2];
        const double per_row = r.joint_rows > 0 ? med / r.joint_rows : NAN;
        if (json)
            printf("{\"scene\": \"%s\", \"solver\": \"%s\", \"joint_solve\": \"%s\", \"steps\": %d, \"repeat\": %d, "
                   "\"joint_rows\": %d, \"contacts\": %.1f, \"us_per_step\": %.2f, \"us_per_step_min\": %.2f, "
                   "\"us_per_step_max\": %.2f, \"us_per_joint_row\": %.4f, \"iterations\": %.1f, "
                   "\"iterations_max\": %d, \"max_joint_violation\": %.3e, \"energy_drift\": %.3e, "
                   "\"residual_max\": %.3e, \"not_converged\": %d, \"status_not_converged\": %d}\n",
                   rows[i].scene, rows[i].solver, rows[i].js, n, reps, r.joint_rows, r.contacts, med, t[0],
                   t[reps - 1], per_row, r.iterations, r.max_iterations, r.max_violation, r.energy_drift,
                   r.max_residual, r.not_converged, r.last_status);
        else
            printf("%-12s %-6s %-10s %6d %6d %9.1f %8.1f (%.0f-%.0f) %9.3f %8.1f %7d %9.2e %10.2e %9.2e %5d\n",
                   rows[i].scene, rows[i].solver, rows[i].js, n, r.joint_rows, r.contacts, med, t[0], t[reps - 1],
                   per_row, r.iterations, r.max_iterations, r.max_violation, r.energy_drift, r.max_residual,
                   r.not_converged);
        fflush(stdout);
    }
    return rc;
}
