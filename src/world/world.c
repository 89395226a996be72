/* dvicontact — worlds, bodies, shapes and joints: creation, validation,
 * queries. The time step is in step_dvi.c and step_dem.c (step.c picks
 * one), joint rows in joint.c; the world's error text, its thread count and
 * a body id's index, which every file of the layer calls, in world_core.c. */
#include "world_internal.h"

#include "dem.h"
#include "registry.h"

#include "error.h"
#include "math3.h"

#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>

#define WORLD_COOKIE 0x44565757u
#define BODY_COOKIE 0x44564242u
#define SHAPE_COOKIE 0x44565353u
#define JOINT_COOKIE 0x44564a4au

dvi_world_def dvi_default_world_def(void)
{
    dvi_world_def d;
    memset(&d, 0, sizeof d);
    d.gravity[2] = -9.81;
    d.solver = "apgd";
    d.solver_settings = dvi_default_solver_settings(); /* its tolerance, 1e-8, the step's too */
    d.solver_settings.max_iterations = 2000;
    d.solver_settings.warm_start = true;
    d.collision_envelope = 0.005;
    d.contact_recovery_speed = 0.6;
    d.joint_recovery_speed = 1e30;
    d.bounce_threshold = 0.5;
    d.thread_fallback = true;
    d.method = DVI_METHOD_DVI;
    d.friction_law = DVI_LAW_CCP;
    d.dem = dvi_default_dem_settings();
    d.coulomb_check = "desaxce";
    d.internal_cookie = WORLD_COOKIE;
    return d;
}

static bool finite3(const double* a)
{
    return isfinite(a[0]) && isfinite(a[1]) && isfinite(a[2]);
}

/* ---- world tags ------------------------------------------------------------
 * Every id carries its world's 16-bit tag, so that an id handed to another
 * world is refused. The tags of the worlds alive at one time are distinct:
 * the library's only process-wide state is this set of tags in use, one bit
 * per tag, claimed and released with atomic operations (threads may create
 * and destroy worlds at the same time). Tag 0 is never given out. */
#define TAG_WORDS (65536 / 64)
static _Atomic uint64_t tags_in_use[TAG_WORDS];
static _Atomic uint32_t tag_next = 1;

/* A free tag, marked as in use; 0 when all 65,535 are taken. */
static uint16_t tag_take(void)
{
    uint32_t start = atomic_fetch_add(&tag_next, 1u);
    for (uint32_t k = 0; k < 65536u; k++) {
        uint32_t t = (start + k) & 0xFFFFu;
        if (t == 0) continue;
        uint64_t bit = (uint64_t)1 << (t & 63u);
        if (!(atomic_fetch_or(&tags_in_use[t >> 6], bit) & bit)) return (uint16_t)t;
    }
    return 0;
}

static void tag_give_back(uint16_t t)
{
    if (t) atomic_fetch_and(&tags_in_use[t >> 6], ~((uint64_t)1 << (t & 63u)));
}

dvi_status dvi_world_create(const dvi_world_def* def, dvi_world** out)
{
    if (!out) return base_error_set(DVI_ERR_INVALID_ARG, "dvi_world_create: out is NULL");
    *out = NULL;
    dvi_world_def d = def ? *def : dvi_default_world_def();
    const dvi_status bad = DVI_ERR_INVALID_ARG;
    if (d.internal_cookie != WORLD_COOKIE)
        return base_error_set(bad, "world_def: not initialised with dvi_default_world_def()");
    if (!finite3(d.gravity)) return base_error_set(bad, "world_def.gravity: must be finite");
    if (!(d.collision_envelope >= 0.0) || !isfinite(d.collision_envelope))
        return base_error_setf(bad, "world_def.collision_envelope: must be finite and >= 0 (got %g)", d.collision_envelope);
    if (!(d.contact_recovery_speed > 0.0))
        return base_error_setf(bad, "world_def.contact_recovery_speed: must be > 0 (got %g)", d.contact_recovery_speed);
    if (!(d.joint_recovery_speed > 0.0))
        return base_error_setf(bad, "world_def.joint_recovery_speed: must be > 0 (got %g)", d.joint_recovery_speed);
    if (!(d.bounce_threshold >= 0.0))
        return base_error_setf(bad, "world_def.bounce_threshold: must be >= 0 (got %g)", d.bounce_threshold);
    if (d.method != DVI_METHOD_DVI && d.method != DVI_METHOD_DEM)
        return base_error_setf(bad, "world_def.method: unknown value %d", (int)d.method);
    if (!wld_dem_settings_valid(&d.dem))
        return base_error_set(bad, "world_def.dem: invalid DEM settings (see dvi_default_dem_settings for the ranges)");
    if (d.joint_solve != DVI_JOINT_SOLVE_AUTO && d.joint_solve != DVI_JOINT_SOLVE_ITERATIVE &&
        d.joint_solve != DVI_JOINT_SOLVE_DIRECT)
        return base_error_setf(bad, "world_def.joint_solve: unknown value %d", (int)d.joint_solve);
    if (!base_allocator_valid(&d.allocator))
        return base_error_set(bad, "world_def.allocator: set all three functions (alloc, realloc, free) or none");
    if (!dvi_friction_law_string(d.friction_law))
        return base_error_setf(bad, "world_def.friction_law: unknown value %d", (int)d.friction_law);
    int32_t check = -1;
    if (d.coulomb_check && d.coulomb_check[0]) {
        check = dvi_solver_index(d.coulomb_check);
        if (check < 0 || dvi_solver_law_with(check, &d.solver_settings) != DVI_LAW_COULOMB) {
            char names[160];
            ccp_solver_names_for(DVI_LAW_COULOMB, 1u << DVI_BLOCK_FRICTION, false, names, sizeof names);
            return base_error_setf(bad, "world_def.coulomb_check: \"%s\" is not a solver of Coulomb's law (%s; or "
                                        "\"\" for no check)", d.coulomb_check, names);
        }
    }
    d.solver_settings.allocator = d.allocator; /* the solver takes the world's */
    dvi_world* w = base_mem_calloc(&d.allocator, 1, sizeof *w);
    if (!w) return base_error_set(DVI_ERR_NOMEM, "out of memory creating the world");
    w->def = d;
    w->alloc = d.allocator;
    w->def.solver = NULL; /* the name is not kept; the solver is */
    w->def.coulomb_check = NULL; /* nor the check's: its index is */
    w->check_index = check;
    w->tag = tag_take();
    if (w->tag == 0) {
        base_mem_free(&d.allocator, w);
        return base_error_set(DVI_ERR_NOMEM, "world: all 65,535 world tags are in use (too many live worlds)");
    }
    dvi_status st = dvi_solver_create(d.solver ? d.solver : "apgd", &d.solver_settings, &w->solver);
    if (st == DVI_OK) {
        st = col_create(&w->alloc, &w->collision);
        if (st != DVI_OK) base_error_set(st, "out of memory creating the world's collision");
    }
    if (st != DVI_OK) { /* the message is the solver's or the collision's */
        dvi_world_destroy(w);
        return st;
    }
    *out = w;
    return DVI_OK;
}

/* The height field or mesh a shape owns. */
static void free_terrain(dvi_world* w, wld_shape* s)
{
    if (s->hfield) base_mem_free(&w->alloc, s->hfield->heights);
    base_mem_free(&w->alloc, s->hfield);
    if (s->mesh) {
        base_mem_free(&w->alloc, s->mesh->vertices);
        base_mem_free(&w->alloc, s->mesh->triangles);
    }
    base_mem_free(&w->alloc, s->mesh);
}

void dvi_world_destroy(dvi_world* w)
{
    if (!w) return;
    tag_give_back(w->tag);
    wld_force_elements_free(w);
    for (int32_t i = 0; i < w->shape_count; i++) free_terrain(w, &w->shapes[i]);
    BASE_MEM_FREE_ALL(&w->alloc, w->bodies, w->shapes, w->materials, w->joints, w->excluded);
    dvi_solver_destroy(w->solver);
    dvi_solver_destroy(w->check_solver);
    col_destroy(w->collision);
    BASE_MEM_FREE_ALL(&w->alloc, w->geoms, w->dyn, w->vfree, w->inv_mass, w->blocks, w->r, w->compliance, w->gamma,
                      w->colptr, w->rowind, w->values, w->contacts, w->warm, w->warm_roll, w->slots, w->taken, w->dv,
                      w->joint_jb, w->joint_ja, w->joint_lever);
    wld_joint_direct_free(w);
    BASE_MEM_FREE_ALL(&w->alloc, w->fr_block, w->fr_body, w->fr_frame, w->fr_arm, w->fr_ell, w->chunk_start,
                       w->share_block, w->share_dyn);
    BASE_MEM_FREE_ALL(&w->alloc, w->check_gamma, w->check_r, w->check_dv, w->check_body);
    wld_dem_destroy(w->dem);
    const dvi_allocator a = w->alloc;
    base_mem_free(&a, w);
}

double dvi_world_time(const dvi_world* w)
{
    return w ? w->time : NAN;
}

dvi_status dvi_world_set_solver(dvi_world* w, const char* name, const dvi_solver_settings* settings)
{
    if (!w) return base_error_set(DVI_ERR_INVALID_ARG, "world: NULL");
    dvi_solver* s = NULL;
    dvi_solver_settings ss = settings ? *settings : dvi_default_solver_settings();
    ss.allocator = w->alloc; /* the solver takes the world's */
    dvi_status st = dvi_solver_create(name, &ss, &s);
    if (st != DVI_OK) return wld_error(w, st, "%s", dvi_error_message()); /* names the setting or the name */
    dvi_solver_destroy(w->solver);
    w->solver = s;
    dvi_solver_destroy(w->check_solver); /* made again with these settings when next needed */
    w->check_solver = NULL;
    w->def.solver_settings = ss; /* wld_threads */
    return DVI_OK;
}

dvi_status dvi_world_set_thread_fallback(dvi_world* w, bool on)
{
    if (!w) return base_error_set(DVI_ERR_INVALID_ARG, "world: NULL");
    w->def.thread_fallback = on;
    w->guard = (wld_thread_guard){0}; /* the next steps time afresh */
    return DVI_OK;
}

dvi_status dvi_world_set_friction_law(dvi_world* w, dvi_friction_law law)
{
    if (!w) return base_error_set(DVI_ERR_INVALID_ARG, "world: NULL");
    if (!dvi_friction_law_string(law))
        return wld_error(w, DVI_ERR_INVALID_ARG, "world: unknown friction law %d (DVI_LAW_CCP or DVI_LAW_COULOMB)",
                               (int)law);
    w->def.friction_law = law;
    return DVI_OK;
}

dvi_friction_law dvi_world_get_friction_law(const dvi_world* w)
{
    return w ? w->def.friction_law : DVI_LAW_CCP;
}

/* ---- bodies --------------------------------------------------------------- */

dvi_body_def dvi_default_body_def(void)
{
    dvi_body_def d;
    memset(&d, 0, sizeof d);
    d.type = DVI_BODY_DYNAMIC;
    d.mass = 1.0;
    d.inertia[0] = d.inertia[4] = d.inertia[8] = 1.0;
    d.orientation[0] = 1.0;
    d.gravity_scale = 1.0;
    d.internal_cookie = BODY_COOKIE;
    return d;
}

/* Inverse of a symmetric positive definite 3×3 (Cholesky test first). */
static bool spd_inverse(const double* J, double* inv)
{
    double s = 0.0;
    for (int k = 0; k < 9; k++) s = fabs(J[k]) > s ? fabs(J[k]) : s;
    for (int i = 0; i < 3; i++)
        for (int j = i + 1; j < 3; j++)
            if (fabs(J[3 * i + j] - J[3 * j + i]) > 1e-12 * s) return false;
    double d0 = J[0], d1 = J[0] * J[4] - J[1] * J[3];
    double det = J[0] * (J[4] * J[8] - J[5] * J[7]) - J[1] * (J[3] * J[8] - J[5] * J[6]) +
                 J[2] * (J[3] * J[7] - J[4] * J[6]);
    if (!(d0 > 0.0) || !(d1 > 1e-14 * s * s) || !(det > 1e-14 * s * s * s)) return false;
    inv[0] = (J[4] * J[8] - J[5] * J[7]) / det;
    inv[1] = (J[2] * J[7] - J[1] * J[8]) / det;
    inv[2] = (J[1] * J[5] - J[2] * J[4]) / det;
    inv[3] = (J[5] * J[6] - J[3] * J[8]) / det;
    inv[4] = (J[0] * J[8] - J[2] * J[6]) / det;
    inv[5] = (J[2] * J[3] - J[0] * J[5]) / det;
    inv[6] = (J[3] * J[7] - J[4] * J[6]) / det;
    inv[7] = (J[1] * J[6] - J[0] * J[7]) / det;
    inv[8] = (J[0] * J[4] - J[1] * J[3]) / det;
    return true;
}

/* Room for one more element after the `count` of array p (base_mem_grow,
 * doubling from 16): the array, moved or not, or NULL when out of memory. */
/* The checks a create call opens with: its out (size bytes) zeroed, w, the
 * def (its cookie) and out given, the def from its default call (*cookie
 * == want); `what` names the object ("body"). */
static dvi_status create_args(dvi_world* w, const uint32_t* cookie, uint32_t want, void* out, size_t size,
                              const char* what)
{
    if (out) memset(out, 0, size);
    if (!w) return base_error_set(DVI_ERR_INVALID_ARG, "world: NULL");
    if (!cookie || !out) return wld_error(w, DVI_ERR_INVALID_ARG, "%s: NULL argument", what);
    if (*cookie != want)
        return wld_error(w, DVI_ERR_INVALID_ARG, "%s: def not initialised with dvi_default_%s_def()", what, what);
    return DVI_OK;
}

static void* grow_array(dvi_world* w, void* p, size_t* cap, int32_t count, size_t elem)
{
    return base_mem_grow(&w->alloc, &p, cap, (size_t)count + 1, elem, 16) ? p : NULL;
}

dvi_status dvi_body_create(dvi_world* w, const dvi_body_def* def, dvi_body_id* out)
{
    dvi_status st = create_args(w, def ? &def->internal_cookie : NULL, BODY_COOKIE, out, sizeof *out, "body");
    if (st != DVI_OK) return st;
    if (def->type != DVI_BODY_DYNAMIC && def->type != DVI_BODY_FIXED && def->type != DVI_BODY_KINEMATIC)
        return wld_error(w, DVI_ERR_INVALID_ARG, "body.type: unknown type %d", (int)def->type);
    if (!finite3(def->position) || !finite3(def->velocity) || !finite3(def->angular_velocity))
        return wld_error(w, DVI_ERR_INVALID_ARG, "body: position or velocity is not finite");
    double q[4] = {def->orientation[0], def->orientation[1], def->orientation[2], def->orientation[3]};
    double qn = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    if (!isfinite(qn) || fabs(qn - 1.0) > 1e-6)
        return wld_error(w, DVI_ERR_INVALID_ARG, "body.orientation: must be a unit quaternion (norm %g)", qn);
    if (!isfinite(def->gravity_scale))
        return wld_error(w, DVI_ERR_INVALID_ARG, "body.gravity_scale: not finite");
    double inv_inertia[9] = {0};
    if (def->type == DVI_BODY_DYNAMIC) {
        if (!(def->mass > 0.0) || !isfinite(def->mass))
            return wld_error(w, DVI_ERR_INVALID_ARG, "body.mass: must be finite and > 0 (got %g)", def->mass);
        for (int k = 0; k < 9; k++)
            if (!isfinite(def->inertia[k]))
                return wld_error(w, DVI_ERR_INVALID_ARG, "body.inertia[%d]: not finite", k);
        if (!spd_inverse(def->inertia, inv_inertia))
            return wld_error(w, DVI_ERR_INVALID_ARG,
                                   "body.inertia: must be symmetric positive definite");
    }
    if (w->body_count >= INT32_MAX - 1) return wld_error(w, DVI_ERR_NOMEM, "body: too many bodies");
    wld_body* nb = grow_array(w, w->bodies, &w->body_cap, w->body_count, sizeof *nb);
    if (!nb) return wld_error(w, DVI_ERR_NOMEM, "body: out of memory");
    w->bodies = nb;
    wld_body* b = &w->bodies[w->body_count];
    memset(b, 0, sizeof *b);
    b->type = def->type;
    b->generation = 1;
    if (def->type == DVI_BODY_DYNAMIC) {
        b->mass = def->mass;
        b->inv_mass = 1.0 / def->mass;
        memcpy(b->inertia, def->inertia, sizeof b->inertia);
        memcpy(b->inv_inertia, inv_inertia, sizeof b->inv_inertia);
    }
    v3_copy(b->x, def->position);
    for (int k = 0; k < 4; k++) b->q[k] = q[k] / qn;
    if (def->type != DVI_BODY_FIXED) {
        v3_copy(b->v, def->velocity);
        v3_copy(b->w, def->angular_velocity);
    }
    b->gravity_scale = def->gravity_scale;
    w->body_count++;
    out->index1 = w->body_count;
    out->generation = b->generation;
    out->world = w->tag;
    return DVI_OK;
}

static wld_body* body_of(const dvi_world* w, dvi_body_id id)
{
    int32_t i = wld_body_index(w, id);
    return i < 0 ? NULL : &w->bodies[i];
}

/* The error of a query on a world given an id it does not hold. Queries
 * take a const world, so the message goes to dvi_error_message only. */
static dvi_status stale_id(const dvi_world* w, const char* what)
{
    if (!w) return base_error_set(DVI_ERR_INVALID_ARG, "world: NULL");
    return base_error_setf(DVI_ERR_INVALID_ARG, "%s: not an id of this world", what);
}

#define BODY_OR_FAIL(w, id, b)                                                                                     \
    const wld_body* b = body_of(w, id);                                                                           \
    if (!b) return stale_id(w, "body")

/* n doubles of body id's state at byte offset `field` of wld_body into out;
 * `call` names the public call in errors. */
static dvi_status body_get(const dvi_world* w, dvi_body_id id, double* out, size_t field, size_t n, const char* call)
{
    BODY_OR_FAIL(w, id, b);
    if (!out) return base_error_setf(DVI_ERR_INVALID_ARG, "%s: out is NULL", call);
    memcpy(out, (const char*)b + field, n * sizeof(double));
    return DVI_OK;
}

dvi_status dvi_body_get_position(const dvi_world* w, dvi_body_id id, double out[3])
{
    return body_get(w, id, out, offsetof(wld_body, x), 3, __func__);
}

dvi_status dvi_body_get_orientation(const dvi_world* w, dvi_body_id id, double out[4])
{
    return body_get(w, id, out, offsetof(wld_body, q), 4, __func__);
}

dvi_status dvi_body_get_velocity(const dvi_world* w, dvi_body_id id, double out[3])
{
    return body_get(w, id, out, offsetof(wld_body, v), 3, __func__);
}

dvi_status dvi_body_get_angular_velocity(const dvi_world* w, dvi_body_id id, double out[3])
{
    return body_get(w, id, out, offsetof(wld_body, w), 3, __func__);
}

dvi_status dvi_body_get_contact_force(const dvi_world* w, dvi_body_id id, double force[3], double torque[3])
{
    BODY_OR_FAIL(w, id, b);
    if (force) v3_copy(force, b->contact_force);
    if (torque) v3_copy(torque, b->contact_torque);
    return DVI_OK;
}

/* Body id's 3-vectors at byte offsets fa, fb of wld_body set to a, c (each
 * NULL: kept); refused unless finite (`what` names them) or, when they move
 * the body, on a fixed body. `call` names the public call in errors. */
static dvi_status body_set(dvi_world* w, dvi_body_id id, const double a[3], const double c[3], size_t fa, size_t fb,
                           const char* what, bool moves, const char* call)
{
    int32_t i = wld_body_index(w, id);
    if (i < 0) return w ? wld_error(w, DVI_ERR_INVALID_ARG, "body: invalid id") : base_error_setf(DVI_ERR_INVALID_ARG, "%s: world is NULL", call);
    if ((a && !finite3(a)) || (c && !finite3(c))) return wld_error(w, DVI_ERR_INVALID_ARG, "%s: not finite", what);
    wld_body* b = &w->bodies[i];
    if (moves && b->type == DVI_BODY_FIXED) return wld_error(w, DVI_ERR_INVALID_ARG, "body: a fixed body cannot move");
    if (a) v3_copy((double*)((char*)b + fa), a);
    if (c) v3_copy((double*)((char*)b + fb), c);
    return DVI_OK;
}

dvi_status dvi_body_set_velocity(dvi_world* w, dvi_body_id id, const double v[3], const double av[3])
{
    return body_set(w, id, v, av, offsetof(wld_body, v), offsetof(wld_body, w), "body velocity", true, __func__);
}

dvi_status dvi_body_set_applied_force(dvi_world* w, dvi_body_id id, const double force[3], const double torque[3])
{
    return body_set(w, id, force, torque, offsetof(wld_body, force), offsetof(wld_body, torque), "applied force", false,
                    __func__);
}

/* ---- shapes ------------------------------------------------------------------ */

dvi_shape_def dvi_default_shape_def(void)
{
    dvi_shape_def d;
    memset(&d, 0, sizeof d);
    d.type = DVI_SHAPE_SPHERE;
    d.radius = 0.5;
    d.offset_orientation[0] = 1.0;
    d.material.friction = 0.5;
    d.material.young_modulus = 1e7;
    d.material.poisson_ratio = 0.3;
    d.material.gamma_n = -1.0;
    d.material.gamma_t = -1.0;
    d.collision_category = 1u;
    d.collision_mask = 0xFFFFFFFFu;
    d.internal_cookie = SHAPE_COOKIE;
    return d;
}

static dvi_status check_material(dvi_world* w, const dvi_material* m)
{
    if (!(m->friction >= 0.0) || !isfinite(m->friction))
        return wld_error(w, DVI_ERR_INVALID_ARG, "shape.material.friction: must be finite and >= 0 (got %g)",
                               m->friction);
    if (!(m->rolling_friction >= 0.0) || !isfinite(m->rolling_friction) || !(m->spinning_friction >= 0.0) ||
        !isfinite(m->spinning_friction))
        return wld_error(w, DVI_ERR_INVALID_ARG, "shape.material: rolling/spinning friction must be >= 0");
    if (!(m->restitution >= 0.0 && m->restitution <= 1.0))
        return wld_error(w, DVI_ERR_INVALID_ARG, "shape.material.restitution: must be in [0, 1] (got %g)",
                               m->restitution);
    if (!(m->compliance >= 0.0) || !isfinite(m->compliance))
        return wld_error(w, DVI_ERR_INVALID_ARG, "shape.material.compliance: must be finite and >= 0");
    if (!(m->young_modulus >= 0.0) || !isfinite(m->young_modulus) || !(m->poisson_ratio > -1.0) ||
        !(m->poisson_ratio <= 0.5))
        return wld_error(w, DVI_ERR_INVALID_ARG,
                               "shape.material: young_modulus must be finite and >= 0, poisson_ratio in (-1, 0.5]");
    if (!(m->k_n >= 0.0) || !isfinite(m->k_n) || !(m->k_t >= 0.0) || !isfinite(m->k_t) || !isfinite(m->gamma_n) ||
        !isfinite(m->gamma_t))
        return wld_error(w, DVI_ERR_INVALID_ARG,
                               "shape.material: k_n, k_t must be finite and >= 0, gamma_n, gamma_t finite");
    if (!(m->terrain_stiffness >= 0.0) || !isfinite(m->terrain_stiffness) || !(m->terrain_hysteresis >= 0.0) ||
        !(m->terrain_hysteresis < 1.0))
        return wld_error(w, DVI_ERR_INVALID_ARG,
                               "shape.material: terrain_stiffness must be finite and >= 0, terrain_hysteresis in [0, 1)");
    return DVI_OK;
}

static bool positive(double x)
{
    return x > 0.0 && isfinite(x);
}

/* The index of material m in the world's table: the last entry when it is
 * the same bits (consecutive shapes of one material share it, in O(1)),
 * else a new entry; −1 when out of memory. */
static int32_t material_index(dvi_world* w, const dvi_material* m)
{
    if (w->material_count > 0 && memcmp(&w->materials[w->material_count - 1], m, sizeof *m) == 0)
        return w->material_count - 1;
    dvi_material* t = grow_array(w, w->materials, &w->material_cap, w->material_count, sizeof *t);
    if (!t) return -1;
    w->materials = t;
    t[w->material_count] = *m;
    return w->material_count++;
}

static dvi_status shape_null(dvi_world* w, dvi_shape_id* out)
{
    if (out) memset(out, 0, sizeof *out);
    if (!w) return base_error_set(DVI_ERR_INVALID_ARG, "world: NULL");
    return wld_error(w, DVI_ERR_INVALID_ARG, "shape: NULL argument");
}

/* A shape being added (shape_begin, then shape_finish): its record, its
 * body's index, its offset's unit quaternion. */
typedef struct shape_start {
    wld_shape s;
    int32_t bi;
    double q[4];
} shape_start;

/* The checks every kind shares, in this order: arguments, body, material,
 * offset, filter. Starts n->s (kind, filter) and gives the body's index and
 * the offset's unit quaternion. */
static dvi_status shape_begin(dvi_world* w, dvi_body_id body, const dvi_shape_def* def, dvi_shape_id* out,
                              dvi_shape_type type, shape_start* n)
{
    wld_shape* s = &n->s;
    int32_t* bi = &n->bi;
    double* q = n->q;
    dvi_status st = create_args(w, def ? &def->internal_cookie : NULL, SHAPE_COOKIE, out, sizeof *out, "shape");
    if (st != DVI_OK) return st;
    *bi = wld_body_index(w, body);
    if (*bi < 0) return wld_error(w, DVI_ERR_INVALID_ARG, "shape.body: not a body of this world");
    st = check_material(w, &def->material);
    if (st != DVI_OK) return st;
    if (!finite3(def->offset_position))
        return wld_error(w, DVI_ERR_INVALID_ARG, "shape.offset_position: not finite");
    for (int k = 0; k < 4; k++) q[k] = def->offset_orientation[k];
    double qn = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    if (!isfinite(qn) || fabs(qn - 1.0) > 1e-6)
        return wld_error(w, DVI_ERR_INVALID_ARG, "shape.offset_orientation: must be a unit quaternion");
    for (int k = 0; k < 4; k++) q[k] /= qn;
    if (def->collision_category == 0u)
        return wld_error(w, DVI_ERR_INVALID_ARG,
                               "shape.collision_category: must have at least one bit set (0 collides with nothing)");
    const col_shape_class* c = col_shape_class_of(type);
    if (!c) return wld_error(w, DVI_ERR_INVALID_ARG, "shape.type: unknown type %d", (int)type);
    if (c->fixed_only && w->bodies[*bi].type != DVI_BODY_FIXED)
        return wld_error(w, DVI_ERR_INVALID_ARG, "shape: %s must belong to a fixed body", c->article);
    memset(s, 0, sizeof *s);
    s->type = type;
    s->category = def->collision_category;
    s->mask = def->collision_mask;
    return DVI_OK;
}

/* Appends n->s (its geometry set) to the world and to its body. */
static dvi_status shape_finish(dvi_world* w, const dvi_shape_def* def, const shape_start* n, dvi_shape_id* out)
{
    wld_shape s = n->s;
    const int32_t bi = n->bi;
    const double* q = n->q;
    const int32_t mi = material_index(w, &def->material);
    wld_shape* ns = mi < 0 ? NULL : grow_array(w, w->shapes, &w->shape_cap, w->shape_count, sizeof *ns);
    if (!ns) {
        free_terrain(w, &s);
        return wld_error(w, DVI_ERR_NOMEM, "shape: out of memory");
    }
    w->shapes = ns;
    s.body = bi;
    s.generation = 1;
    v3_copy(s.lpos, def->offset_position);
    q_to_m3(s.lrot, q);
    s.material = mi;
    s.next = -1;
    w->shapes[w->shape_count++] = s;
    wld_body_note_shape(w, bi, w->shape_count - 1);
    out->index1 = w->shape_count;
    out->generation = 1;
    out->world = w->tag;
    return DVI_OK;
}

/* A convex kind: its class's parameters, each > 0, taken from radius,
 * half_length and half (col_shape_param). */
static dvi_status add_convex(dvi_world* w, dvi_body_id body, const dvi_shape_def* def, dvi_shape_type type,
                             double radius, double half_length, const double half[3], dvi_shape_id* out)
{
    shape_start sh;
    dvi_status st = shape_begin(w, body, def, out, type, &sh);
    if (st != DVI_OK) return st;
    const col_shape_class* c = col_shape_class_of(type);
    if (!c->core_support)
        return wld_error(w, DVI_ERR_INVALID_ARG, "shape.type: %s is not defined by lengths", c->article);
    double h[3] = {half[0], half[1], half[2]};
    for (int p = 0; p < 2 && c->params[p].key; p++) {
        const col_shape_param* pp = &c->params[p];
        const double* v = col_shape_param_ptr(pp, &radius, &half_length, h);
        const int n = col_shape_param_length(pp);
        for (int k = 0; k < n; k++)
            if (!positive(v[k]))
                return n == 1 ? wld_error(w, DVI_ERR_INVALID_ARG, "shape.%s: must be > 0", pp->key)
                              : wld_error(w, DVI_ERR_INVALID_ARG, "shape.%s[%d]: must be > 0", pp->key, k);
        double* dst = col_shape_param_ptr(pp, &sh.s.radius, &sh.s.half_length, sh.s.half);
        for (int k = 0; k < n; k++) dst[k] = v[k];
    }
    return shape_finish(w, def, &sh, out);
}

dvi_status dvi_world_add_sphere(dvi_world* w, dvi_body_id body, const dvi_shape_def* def, const dvi_sphere* g,
                                dvi_shape_id* out)
{
    const double zero[3] = {0.0, 0.0, 0.0};
    if (!g) return shape_null(w, out);
    return add_convex(w, body, def, DVI_SHAPE_SPHERE, g->radius, 0.0, zero, out);
}

dvi_status dvi_world_add_box(dvi_world* w, dvi_body_id body, const dvi_shape_def* def, const dvi_box* g,
                             dvi_shape_id* out)
{
    if (!g) return shape_null(w, out);
    return add_convex(w, body, def, DVI_SHAPE_BOX, 0.0, 0.0, g->half_extents, out);
}

dvi_status dvi_world_add_capsule(dvi_world* w, dvi_body_id body, const dvi_shape_def* def, const dvi_capsule* g,
                                 dvi_shape_id* out)
{
    const double zero[3] = {0.0, 0.0, 0.0};
    if (!g) return shape_null(w, out);
    return add_convex(w, body, def, DVI_SHAPE_CAPSULE, g->radius, g->half_length, zero, out);
}

dvi_status dvi_world_add_cylinder(dvi_world* w, dvi_body_id body, const dvi_shape_def* def, const dvi_cylinder* g,
                                  dvi_shape_id* out)
{
    const double zero[3] = {0.0, 0.0, 0.0};
    if (!g) return shape_null(w, out);
    return add_convex(w, body, def, DVI_SHAPE_CYLINDER, g->radius, g->half_length, zero, out);
}

dvi_status dvi_world_add_ellipsoid(dvi_world* w, dvi_body_id body, const dvi_shape_def* def, const dvi_ellipsoid* g,
                                   dvi_shape_id* out)
{
    if (!g) return shape_null(w, out);
    return add_convex(w, body, def, DVI_SHAPE_ELLIPSOID, 0.0, 0.0, g->semi_axes, out);
}

dvi_status dvi_world_add_plane(dvi_world* w, dvi_body_id body, const dvi_shape_def* def, dvi_shape_id* out)
{
    shape_start sh;
    dvi_status st = shape_begin(w, body, def, out, DVI_SHAPE_PLANE, &sh);
    if (st != DVI_OK) return st;
    return shape_finish(w, def, &sh, out);
}

dvi_status dvi_world_add_heightfield(dvi_world* w, dvi_body_id body, const dvi_shape_def* sdef,
                                     const dvi_height_grid* def, dvi_shape_id* out)
{
    if (!def) return shape_null(w, out);
    shape_start sh;
    dvi_status st = shape_begin(w, body, sdef, out, DVI_SHAPE_HEIGHTFIELD, &sh);
    if (st != DVI_OK) return st;
    if (def->nx < 2 || def->ny < 2 || (int64_t)def->nx * def->ny > 100000000 || !def->heights)
        return wld_error(w, DVI_ERR_INVALID_ARG, "shape: height field needs nx, ny >= 2 and heights");
    if (!positive(def->dx) || !positive(def->dy))
        return wld_error(w, DVI_ERR_INVALID_ARG, "shape: height field spacing dx, dy must be > 0");
    size_t n = (size_t)def->nx * (size_t)def->ny;
    sh.s.hfield = base_mem_calloc(&w->alloc, 1, sizeof *sh.s.hfield);
    if (sh.s.hfield) sh.s.hfield->heights = base_mem_alloc(&w->alloc, n * sizeof(double));
    if (!sh.s.hfield || !sh.s.hfield->heights) {
        if (sh.s.hfield) base_mem_free(&w->alloc, sh.s.hfield);
        return wld_error(w, DVI_ERR_NOMEM, "shape: out of memory for the height field");
    }
    sh.s.hfield->nx = def->nx;
    sh.s.hfield->ny = def->ny;
    sh.s.hfield->dx = def->dx;
    sh.s.hfield->dy = def->dy;
    sh.s.hfield->hmin = INFINITY;
    sh.s.hfield->hmax = -INFINITY;
    for (size_t k = 0; k < n; k++) {
        double hk = def->heights[k];
        if (!isfinite(hk)) {
            base_mem_free(&w->alloc, sh.s.hfield->heights);
            base_mem_free(&w->alloc, sh.s.hfield);
            return wld_error(w, DVI_ERR_INVALID_ARG, "shape.heights[%zu]: not finite", k);
        }
        sh.s.hfield->heights[k] = hk;
        if (hk < sh.s.hfield->hmin) sh.s.hfield->hmin = hk;
        if (hk > sh.s.hfield->hmax) sh.s.hfield->hmax = hk;
    }
    return shape_finish(w, sdef, &sh, out);
}

dvi_status dvi_world_add_mesh(dvi_world* w, dvi_body_id body, const dvi_shape_def* sdef, const dvi_triangle_mesh* def,
                              dvi_shape_id* out)
{
    if (!def) return shape_null(w, out);
    shape_start sh;
    dvi_status st = shape_begin(w, body, sdef, out, DVI_SHAPE_MESH, &sh);
    if (st != DVI_OK) return st;
    if (def->vertex_count < 3 || def->triangle_count < 1 || !def->vertices || !def->triangles ||
        def->vertex_count > 50000000 || def->triangle_count > 50000000)
        return wld_error(w, DVI_ERR_INVALID_ARG, "shape: a mesh needs >= 3 vertices and >= 1 triangle");
    for (int32_t k = 0; k < 3 * def->vertex_count; k++)
        if (!isfinite(def->vertices[k]))
            return wld_error(w, DVI_ERR_INVALID_ARG, "shape.vertices[%d]: not finite", k);
    for (int32_t k = 0; k < 3 * def->triangle_count; k++)
        if (def->triangles[k] < 0 || def->triangles[k] >= def->vertex_count)
            return wld_error(w, DVI_ERR_INVALID_ARG, "shape.triangles[%d]: vertex index %d out of range",
                                   k, def->triangles[k]);
    sh.s.mesh = base_mem_calloc(&w->alloc, 1, sizeof *sh.s.mesh);
    if (sh.s.mesh) {
        sh.s.mesh->vertices = base_mem_alloc(&w->alloc, 3 * (size_t)def->vertex_count * sizeof(double));
        sh.s.mesh->triangles = base_mem_alloc(&w->alloc, 3 * (size_t)def->triangle_count * sizeof(int32_t));
    }
    if (!sh.s.mesh || !sh.s.mesh->vertices || !sh.s.mesh->triangles) {
        if (sh.s.mesh) {
            base_mem_free(&w->alloc, sh.s.mesh->vertices);
            base_mem_free(&w->alloc, sh.s.mesh->triangles);
            base_mem_free(&w->alloc, sh.s.mesh);
        }
        return wld_error(w, DVI_ERR_NOMEM, "shape: out of memory for the mesh");
    }
    sh.s.mesh->vertex_count = def->vertex_count;
    sh.s.mesh->triangle_count = def->triangle_count;
    memcpy(sh.s.mesh->vertices, def->vertices, 3 * (size_t)def->vertex_count * sizeof(double));
    memcpy(sh.s.mesh->triangles, def->triangles, 3 * (size_t)def->triangle_count * sizeof(int32_t));
    return shape_finish(w, sdef, &sh, out);
}

/* The call of the previous release: the kind and every kind's geometry in
 * one def; each kind's own call does the work. */
dvi_status dvi_shape_create(dvi_world* w, dvi_body_id body, const dvi_shape_def* def, dvi_shape_id* out)
{
    if (!w || !def) return shape_null(w, out);
    switch (def->type) {
    case DVI_SHAPE_PLANE:
        return dvi_world_add_plane(w, body, def, out);
    case DVI_SHAPE_HEIGHTFIELD: {
        const dvi_height_grid g = {def->nx, def->ny, def->dx, def->dy, def->heights};
        return dvi_world_add_heightfield(w, body, def, &g, out);
    }
    case DVI_SHAPE_MESH: {
        const dvi_triangle_mesh g = {def->vertex_count, def->triangle_count, def->vertices, def->triangles};
        return dvi_world_add_mesh(w, body, def, &g, out);
    }
    default:
        return add_convex(w, body, def, def->type, def->radius, def->half_length, def->half_extents, out);
    }
}

/* ---- joints ------------------------------------------------------------------ */

dvi_joint_def dvi_default_joint_def(void)
{
    dvi_joint_def d;
    memset(&d, 0, sizeof d);
    d.type = DVI_JOINT_REVOLUTE;
    d.axis[2] = 1.0;
    d.collide_connected = false;
    d.internal_cookie = JOINT_COOKIE;
    return d;
}

dvi_status dvi_joint_create(dvi_world* w, const dvi_joint_def* def, dvi_joint_id* out)
{
    dvi_status st = create_args(w, def ? &def->internal_cookie : NULL, JOINT_COOKIE, out, sizeof *out, "joint");
    if (st != DVI_OK) return st;
    int32_t a = -1, b = wld_body_index(w, def->body_b);
    if (b < 0) return wld_error(w, DVI_ERR_INVALID_ARG, "joint.body_b: not a body of this world");
    if (!DVI_IS_NULL(def->body_a)) {
        a = wld_body_index(w, def->body_a);
        if (a < 0) return wld_error(w, DVI_ERR_INVALID_ARG, "joint.body_a: not a body of this world");
        if (a == b) return wld_error(w, DVI_ERR_INVALID_ARG, "joint: body_a and body_b are the same body");
    }
    if (def->type < DVI_JOINT_SPHERICAL || def->type > DVI_JOINT_DISTANCE)
        return wld_error(w, DVI_ERR_INVALID_ARG, "joint.type: unknown type %d", (int)def->type);
    if (!finite3(def->anchor) || !finite3(def->anchor_b) || !finite3(def->axis))
        return wld_error(w, DVI_ERR_INVALID_ARG, "joint: anchor or axis not finite");
    bool needs_axis = def->type == DVI_JOINT_REVOLUTE || def->type == DVI_JOINT_PRISMATIC;
    if (needs_axis && !(v3_norm(def->axis) > 1e-12))
        return wld_error(w, DVI_ERR_INVALID_ARG, "joint.axis: must be non-zero");
    if (def->motor != DVI_MOTOR_NONE) {
        bool ok = (def->motor == DVI_MOTOR_ROTATION_SPEED || def->motor == DVI_MOTOR_ROTATION_TORQUE)
                      ? def->type == DVI_JOINT_REVOLUTE
                      : def->motor == DVI_MOTOR_LINEAR_SPEED && def->type == DVI_JOINT_PRISMATIC;
        if (!ok) return wld_error(w, DVI_ERR_INVALID_ARG, "joint.motor: not valid for this joint type");
        if (!isfinite(def->motor_speed) || !isfinite(def->motor_torque) || !(def->motor_ramp_time >= 0.0) ||
            !isfinite(def->motor_ramp_time))
            return wld_error(w, DVI_ERR_INVALID_ARG, "joint.motor: speed, torque, ramp must be finite, ramp >= 0");
    }
    if (!(def->motor_damping >= 0.0) || !isfinite(def->motor_damping))
        return wld_error(w, DVI_ERR_INVALID_ARG, "joint.motor_damping: must be finite and >= 0 (got %g)",
                               def->motor_damping);
    if (def->motor_damping > 0.0 && def->motor != DVI_MOTOR_ROTATION_SPEED && def->motor != DVI_MOTOR_LINEAR_SPEED)
        return wld_error(w, DVI_ERR_INVALID_ARG, "joint.motor_damping: only a speed motor takes a damping");
    if (w->bodies[b].type != DVI_BODY_DYNAMIC && (a < 0 || w->bodies[a].type != DVI_BODY_DYNAMIC))
        return wld_error(w, DVI_ERR_INVALID_ARG, "joint: at least one body must be dynamic");
    wld_joint j;
    memset(&j, 0, sizeof j);
    j.a = a;
    j.b = b;
    st = wld_joint_init(&j, def, a >= 0 ? &w->bodies[a] : NULL, &w->bodies[b]);
    if (st != DVI_OK) return wld_error(w, st, "joint: degenerate geometry (distance joint of zero length?)");
    j.collide_connected = def->collide_connected;
    j.size = fmax(v3_norm(j.la), v3_norm(j.lb));
    if (!(j.size > 0.0)) j.size = 1.0; /* anchors at both centres: distances count in metres */
    wld_joint* nj = grow_array(w, w->joints, &w->joint_cap, w->joint_count, sizeof *nj);
    if (!nj) return wld_error(w, DVI_ERR_NOMEM, "joint: out of memory");
    w->joints = nj;
    if (!j.collide_connected && a >= 0) { /* the pair joins the sorted list of pairs that never touch */
        uint64_t key = (uint64_t)(uint32_t)(a < b ? a : b) << 32 | (uint64_t)(uint32_t)(a < b ? b : a);
        int32_t at = 0;
        while (at < w->excluded_count && w->excluded[at] < key) at++;
        if (at == w->excluded_count || w->excluded[at] != key) {
            uint64_t* ne = grow_array(w, w->excluded, &w->excluded_cap, w->excluded_count, sizeof *ne);
            if (!ne) return wld_error(w, DVI_ERR_NOMEM, "joint: out of memory");
            w->excluded = ne;
            memmove(ne + at + 1, ne + at, (size_t)(w->excluded_count - at) * sizeof *ne);
            ne[at] = key;
            w->excluded_count++;
            w->bodies[a].excluded_pairs++;
            w->bodies[b].excluded_pairs++;
        }
    }
    j.generation = 1;
    w->joints[w->joint_count++] = j;
    out->index1 = w->joint_count;
    out->generation = 1;
    out->world = w->tag;
    return DVI_OK;
}

static wld_joint* joint_of(const dvi_world* w, dvi_joint_id id)
{
    if (!w || id.index1 <= 0 || id.index1 > w->joint_count || id.world != w->tag) return NULL;
    wld_joint* j = &w->joints[id.index1 - 1];
    return j->generation == id.generation ? j : NULL;
}

dvi_status dvi_joint_get_reaction(const dvi_world* w, dvi_joint_id id, double force[3], double torque[3])
{
    const wld_joint* j = joint_of(w, id);
    if (!j) return stale_id(w, "joint");
    if (force) v3_copy(force, j->reaction_force);
    if (torque) v3_copy(torque, j->reaction_torque);
    return DVI_OK;
}

dvi_status dvi_joint_set_motor(dvi_world* w, dvi_joint_id id, double speed, double torque)
{
    wld_joint* j = joint_of(w, id);
    if (!j) return w ? wld_error(w, DVI_ERR_INVALID_ARG, "joint: invalid id") : base_error_setf(DVI_ERR_INVALID_ARG, "%s: world is NULL", __func__);
    if (j->motor == DVI_MOTOR_NONE) return wld_error(w, DVI_ERR_INVALID_ARG, "joint: has no motor");
    if (!isfinite(speed) || !isfinite(torque))
        return wld_error(w, DVI_ERR_INVALID_ARG, "joint motor: speed and torque must be finite");
    j->speed = speed;
    j->torque = torque;
    return DVI_OK;
}

dvi_step_stats dvi_world_get_stats(const dvi_world* w)
{
    dvi_step_stats s;
    if (w) return w->stats;
    memset(&s, 0, sizeof s);
    return s;
}

int32_t dvi_world_contact_count(const dvi_world* w)
{
    return w ? w->contact_count : 0;
}

dvi_status dvi_world_get_contact(const dvi_world* w, int32_t index, dvi_contact_info* out)
{
    if (!w || !out) return base_error_set(DVI_ERR_INVALID_ARG, "dvi_world_get_contact: world or out is NULL");
    if (index < 0 || index >= w->contact_count)
        return base_error_setf(DVI_ERR_INVALID_ARG, "index: must be in [0, %d) (got %d)", (int)w->contact_count,
                              (int)index);
    const wld_contact_rec* c = &w->contacts[index];
    memset(out, 0, sizeof *out);
    out->body_a.index1 = c->body_a + 1;
    out->body_a.generation = w->bodies[c->body_a].generation;
    out->body_a.world = w->tag;
    out->body_b.index1 = c->body_b + 1;
    out->body_b.generation = w->bodies[c->body_b].generation;
    out->body_b.world = w->tag;
    v3_copy(out->point, c->point);
    wld_f2d(w->fr_frame + 9 * (size_t)index, 3, out->normal);
    out->distance = c->distance;
    v3_copy(out->force, c->force);
    return DVI_OK;
}
