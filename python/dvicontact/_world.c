/* dvicontact's Python extension: worlds built and stepped from Python
 * (<dvi/world.h>). Types World, Body and Joint.
 *
 * Settings, bodies, shapes and joints take keyword arguments read through
 * tables of fields (name, kind, place in the C struct): one row per field,
 * so that a new field of a def is one row. An unknown keyword is an
 * InputError naming it and listing the known ones; every check of a value
 * is the library's, with its message.
 *
 * A Body or Joint holds a strong reference to its World: the world lives as
 * long as they do. World.close() frees the library's world at once; the
 * objects of a closed world refuse every call. A World is not thread-safe,
 * but different worlds step in parallel threads: steps run with the GIL
 * released, and a call on a world that another thread is stepping raises
 * RuntimeError instead of racing. */
#include "_common.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* ---- keyword tables -------------------------------------------------------- */

typedef enum field_kind {
    K_F64,     /* a real number */
    K_VEC3,    /* 3 reals */
    K_VEC4,    /* 4 reals */
    K_I32,     /* an integer */
    K_U32,     /* an unsigned 32-bit integer (collision bits) */
    K_BOOL,    /* True or False */
    K_ENUM,    /* one of the names of `values` (index = the enum's value; NULL entries skipped) */
    K_CHARS,   /* a str copied into char[size] */
    K_TABLE,   /* a dict of the fields of `table`, at offset */
    K_SPECIAL  /* read by the caller */
} field_kind;

typedef struct field {
    const char* name;
    field_kind kind;
    size_t offset;
    const char* const* values; /* K_ENUM */
    int value_count;           /* K_ENUM */
    const struct field* table; /* K_TABLE */
    size_t size;               /* K_CHARS */
} field;

#define F(name, kind, type, member) {name, kind, offsetof(type, member), NULL, 0, NULL, 0}
#define FE(name, type, member, names) \
    {name, K_ENUM, offsetof(type, member), names, (int)(sizeof names / sizeof names[0]), NULL, 0}
#define FT(name, type, member, sub) {name, K_TABLE, offsetof(type, member), NULL, 0, sub, 0}
#define FS(name) {name, K_SPECIAL, 0, NULL, 0, NULL, 0}
#define FEND {NULL, K_SPECIAL, 0, NULL, 0, NULL, 0}

static const char* const LAWS[] = {"ccp", "coulomb"};
static const char* const METHODS[] = {"dvi", "dem"};
static const char* const JOINT_SOLVES[] = {"auto", "iterative", "direct"};
static const char* const NORMAL_MODELS[] = {"hertz", "hooke"};
static const char* const DEM_CONSTANTS[] = {"from_material", "direct"};
static const char* const BODY_TYPES[] = {"dynamic", "fixed", "kinematic"};
static const char* const JOINT_TYPES[] = {NULL, "spherical", "revolute", "prismatic", "fixed", "distance"};
static const char* const MOTORS[] = {"none", "rotation_speed", "rotation_torque", "linear_speed"};

typedef dvi_solver_settings SS;
static const field APGD_FIELDS[] = {F("restart", K_BOOL, SS, apgd.restart), F("grow", K_F64, SS, apgd.grow),
                                    F("shrink", K_F64, SS, apgd.shrink),
                                    F("precondition", K_BOOL, SS, apgd.precondition), FEND};
static const field PGS_FIELDS[] = {F("omega", K_F64, SS, pgs.omega), F("symmetric", K_BOOL, SS, pgs.symmetric),
                                   F("block_iterations", K_I32, SS, pgs.block_iterations), FEND};
static const field JACOBI_FIELDS[] = {F("omega", K_F64, SS, jacobi.omega), FEND};
static const field LEMKE_FIELDS[] = {F("friction_directions", K_I32, SS, lemke.friction_directions),
                                     F("max_pivots", K_I32, SS, lemke.max_pivots),
                                     F("max_lcp_size", K_I32, SS, lemke.max_lcp_size),
                                     F("coulomb", K_BOOL, SS, lemke.coulomb),
                                     F("orient", K_BOOL, SS, lemke.orient),
                                     F("orient_grid", K_F64, SS, lemke.orient_grid), FEND};
static const field NSGS_FIELDS[] = {F("local_iterations", K_I32, SS, nsgs.local_iterations),
                                    F("local_tolerance", K_F64, SS, nsgs.local_tolerance),
                                    F("omega", K_F64, SS, nsgs.omega), FEND};
static const field NEWTON_FIELDS[] = {F("max_dense_rows", K_I32, SS, newton.max_dense_rows),
                                      F("line_search", K_BOOL, SS, newton.line_search),
                                      F("rho", K_F64, SS, newton.rho), FEND};
static const field DESAXCE_FIELDS[] = {{"inner", K_CHARS, offsetof(SS, desaxce.inner), NULL, 0, NULL,
                                        sizeof(((SS*)0)->desaxce.inner)},
                                       F("inner_iterations", K_I32, SS, desaxce.inner_iterations),
                                       F("damping", K_F64, SS, desaxce.damping), FEND};

typedef dvi_dem_settings DS;
static const field DEM_FIELDS[] = {FE("normal_model", DS, normal_model, NORMAL_MODELS),
                                   FE("constants", DS, constants, DEM_CONSTANTS),
                                   F("k_n", K_F64, DS, k_n),
                                   F("k_t", K_F64, DS, k_t),
                                   F("gamma_n", K_F64, DS, gamma_n),
                                   F("gamma_t", K_F64, DS, gamma_t),
                                   F("characteristic_speed", K_F64, DS, characteristic_speed),
                                   F("rolling_damping", K_F64, DS, rolling_damping),
                                   F("terrain_slip_speed", K_F64, DS, terrain_slip_speed),
                                   F("max_speed", K_F64, DS, max_speed),
                                   FEND};

/* World(**settings): the scene file's formulation keys (docs/scene-format.md). */
typedef dvi_world_def WD;
static const field WORLD_FIELDS[] = {F("gravity", K_VEC3, WD, gravity),
                                     FS("dt"),
                                     FE("method", WD, method, METHODS),
                                     FS("solver"),
                                     FE("friction_law", WD, friction_law, LAWS),
                                     F("tolerance", K_F64, WD, solver_settings.tolerance),
                                     F("block_tolerance", K_F64, WD, solver_settings.block_tolerance),
                                     F("max_iterations", K_I32, WD, solver_settings.max_iterations),
                                     F("warm_start", K_BOOL, WD, solver_settings.warm_start),
                                     F("warm_start_scale", K_F64, WD, solver_settings.warm_start_scale),
                                     F("threads", K_I32, WD, solver_settings.threads),
                                     F("exact_sums", K_BOOL, WD, solver_settings.exact_sums),
                                     FT("apgd", WD, solver_settings, APGD_FIELDS),
                                     FT("pgs", WD, solver_settings, PGS_FIELDS),
                                     FT("jacobi", WD, solver_settings, JACOBI_FIELDS),
                                     FT("lemke", WD, solver_settings, LEMKE_FIELDS),
                                     FT("nsgs", WD, solver_settings, NSGS_FIELDS),
                                     FT("newton", WD, solver_settings, NEWTON_FIELDS),
                                     FT("desaxce", WD, solver_settings, DESAXCE_FIELDS),
                                     F("collision_envelope", K_F64, WD, collision_envelope),
                                     F("contact_recovery_speed", K_F64, WD, contact_recovery_speed),
                                     F("joint_recovery_speed", K_F64, WD, joint_recovery_speed),
                                     F("bounce_threshold", K_F64, WD, bounce_threshold),
                                     FE("joint_solve", WD, joint_solve, JOINT_SOLVES),
                                     FS("coulomb_check"),
                                     FT("dem", WD, dem, DEM_FIELDS),
                                     FEND};

typedef dvi_body_def BD;
static const field BODY_FIELDS[] = {FE("type", BD, type, BODY_TYPES),
                                    FS("fixed"),
                                    F("mass", K_F64, BD, mass),
                                    FS("inertia"),
                                    F("position", K_VEC3, BD, position),
                                    F("orientation", K_VEC4, BD, orientation),
                                    F("velocity", K_VEC3, BD, velocity),
                                    F("angular_velocity", K_VEC3, BD, angular_velocity),
                                    F("gravity_scale", K_F64, BD, gravity_scale),
                                    FEND};

/* A shape's arguments: what every kind has (dvi_shape_def) and each kind's geometry. */
typedef struct shape_args {
    dvi_shape_def def;
    double radius, half_length, half_extents[3], semi_axes[3], dx, dy;
} shape_args;
typedef shape_args SA;

static const field MATERIAL_FIELDS[] = {F("friction", K_F64, dvi_material, friction),
                                        F("rolling_friction", K_F64, dvi_material, rolling_friction),
                                        F("spinning_friction", K_F64, dvi_material, spinning_friction),
                                        F("restitution", K_F64, dvi_material, restitution),
                                        F("compliance", K_F64, dvi_material, compliance),
                                        F("young_modulus", K_F64, dvi_material, young_modulus),
                                        F("poisson_ratio", K_F64, dvi_material, poisson_ratio),
                                        F("k_n", K_F64, dvi_material, k_n),
                                        F("k_t", K_F64, dvi_material, k_t),
                                        F("gamma_n", K_F64, dvi_material, gamma_n),
                                        F("gamma_t", K_F64, dvi_material, gamma_t),
                                        F("terrain_stiffness", K_F64, dvi_material, terrain_stiffness),
                                        F("terrain_hysteresis", K_F64, dvi_material, terrain_hysteresis),
                                        FEND};

/* the keywords of every add_KIND: the place on the body, the filter, the material (a dict, then its
 * fields one by one, which override it) */
static const field SHAPE_FIELDS[] = {FS("body"),
                                     F("position", K_VEC3, SA, def.offset_position),
                                     F("orientation", K_VEC4, SA, def.offset_orientation),
                                     F("collision_category", K_U32, SA, def.collision_category),
                                     F("collision_mask", K_U32, SA, def.collision_mask),
                                     FS("material"),
                                     F("friction", K_F64, SA, def.material.friction),
                                     F("rolling_friction", K_F64, SA, def.material.rolling_friction),
                                     F("spinning_friction", K_F64, SA, def.material.spinning_friction),
                                     F("restitution", K_F64, SA, def.material.restitution),
                                     F("compliance", K_F64, SA, def.material.compliance),
                                     F("young_modulus", K_F64, SA, def.material.young_modulus),
                                     F("poisson_ratio", K_F64, SA, def.material.poisson_ratio),
                                     F("k_n", K_F64, SA, def.material.k_n),
                                     F("k_t", K_F64, SA, def.material.k_t),
                                     F("gamma_n", K_F64, SA, def.material.gamma_n),
                                     F("gamma_t", K_F64, SA, def.material.gamma_t),
                                     F("terrain_stiffness", K_F64, SA, def.material.terrain_stiffness),
                                     F("terrain_hysteresis", K_F64, SA, def.material.terrain_hysteresis),
                                     FEND};
static const field SPHERE_FIELDS[] = {F("radius", K_F64, SA, radius), FEND};
static const field BOX_FIELDS[] = {F("half_extents", K_VEC3, SA, half_extents), FEND};
static const field CAPSULE_FIELDS[] = {F("radius", K_F64, SA, radius), F("half_length", K_F64, SA, half_length),
                                       FEND};
static const field ELLIPSOID_FIELDS[] = {F("semi_axes", K_VEC3, SA, semi_axes), FEND};
static const field PLANE_FIELDS[] = {FEND};
static const field HEIGHTFIELD_FIELDS[] = {FS("heights"), F("dx", K_F64, SA, dx), F("dy", K_F64, SA, dy), FEND};
static const field MESH_FIELDS[] = {FS("vertices"), FS("triangles"), FEND};

typedef dvi_joint_def JD;
static const field JOINT_FIELDS[] = {FS("kind"),
                                     FS("body_a"),
                                     FS("body_b"),
                                     F("anchor", K_VEC3, JD, anchor),
                                     F("anchor_b", K_VEC3, JD, anchor_b),
                                     F("axis", K_VEC3, JD, axis),
                                     FS("motor"),
                                     F("motor_speed", K_F64, JD, motor_speed),
                                     F("motor_ramp_time", K_F64, JD, motor_ramp_time),
                                     F("motor_torque", K_F64, JD, motor_torque),
                                     F("motor_damping", K_F64, JD, motor_damping),
                                     F("collide_connected", K_BOOL, JD, collide_connected),
                                     FEND};

static const field* find_field(const field* const* tables, const char* name)
{
    for (int t = 0; tables[t]; t++)
        for (const field* f = tables[t]; f->name; f++)
            if (!strcmp(f->name, name)) return f;
    return NULL;
}

/* "a, b, c" of the tables' names into buf */
static void known_names(const field* const* tables, char* buf, size_t n)
{
    size_t k = 0;
    buf[0] = '\0';
    for (int t = 0; tables[t]; t++)
        for (const field* f = tables[t]; f->name && k < n; f++)
            k += (size_t)snprintf(buf + k, n - k, "%s%s", k ? ", " : "", f->name);
}

static int parse_fields(void* base, const field* const* tables, PyObject* dict, const char* what);

/* `place` names the value in errors ("World: tolerance", "dem.k_n") */
static int set_field(void* base, const field* f, PyObject* v, const char* place)
{
    char* p = (char*)base + f->offset;
    switch (f->kind) {
    case K_F64: {
        if (PyBool_Check(v) || !(PyFloat_Check(v) || PyLong_Check(v) || PyNumber_Check(v)) || PyUnicode_Check(v)) {
            PyErr_Format(PyExc_TypeError, "%s: must be a real number (got %.100s)", place, Py_TYPE(v)->tp_name);
            return -1;
        }
        const double x = PyFloat_AsDouble(v);
        if (x == -1.0 && PyErr_Occurred()) {
            PyErr_Clear();
            PyErr_Format(PyExc_TypeError, "%s: must be a real number (got %.100s)", place, Py_TYPE(v)->tp_name);
            return -1;
        }
        memcpy(p, &x, sizeof x);
        return 0;
    }
    case K_VEC3:
    case K_VEC4: {
        const npy_intp n = f->kind == K_VEC3 ? 3 : 4;
        PyArrayObject* a = pydvi_as_f64(v, place, 1, &n);
        if (!a) return -1;
        memcpy(p, PyArray_DATA(a), (size_t)n * sizeof(double));
        Py_DECREF(a);
        return 0;
    }
    case K_I32:
    case K_U32: {
        if (PyBool_Check(v) || !PyIndex_Check(v)) {
            PyErr_Format(PyExc_TypeError, "%s: must be an integer (got %.100s)", place, Py_TYPE(v)->tp_name);
            return -1;
        }
        PyObject* i = PyNumber_Index(v);
        if (!i) return -1;
        int overflow = 0;
        const long long x = PyLong_AsLongLongAndOverflow(i, &overflow);
        Py_DECREF(i);
        if (x == -1 && PyErr_Occurred()) return -1;
        const bool in = f->kind == K_I32 ? !overflow && x >= INT32_MIN && x <= INT32_MAX
                                         : !overflow && x >= 0 && x <= (long long)UINT32_MAX;
        if (!in) {
            pydvi_raisef(DVI_ERR_INVALID_ARG, "%s: out of range of a %s", place,
                         f->kind == K_I32 ? "32-bit integer" : "32-bit unsigned integer");
            return -1;
        }
        if (f->kind == K_I32) {
            const int32_t y = (int32_t)x;
            memcpy(p, &y, sizeof y);
        } else {
            const uint32_t y = (uint32_t)x;
            memcpy(p, &y, sizeof y);
        }
        return 0;
    }
    case K_BOOL: {
        if (!PyBool_Check(v) && !PyArray_IsScalar(v, Bool)) {
            PyErr_Format(PyExc_TypeError, "%s: must be True or False (got %.100s)", place, Py_TYPE(v)->tp_name);
            return -1;
        }
        const bool b = PyObject_IsTrue(v) == 1;
        memcpy(p, &b, sizeof b);
        return 0;
    }
    case K_ENUM: {
        if (!PyUnicode_Check(v)) {
            PyErr_Format(PyExc_TypeError, "%s: must be a str (got %.100s)", place, Py_TYPE(v)->tp_name);
            return -1;
        }
        const char* s = PyUnicode_AsUTF8(v);
        if (!s) return -1;
        char names[256];
        size_t k = 0;
        names[0] = '\0';
        for (int i = 0; i < f->value_count; i++) {
            if (!f->values[i]) continue;
            if (!strcmp(s, f->values[i])) {
                const int e = i; /* the C enums here are int-sized */
                memcpy(p, &e, sizeof e);
                return 0;
            }
            k += (size_t)snprintf(names + k, sizeof names - k, "%s\"%s\"", k ? ", " : "", f->values[i]);
            if (k >= sizeof names) k = sizeof names - 1;
        }
        pydvi_raisef(DVI_ERR_INVALID_ARG, "%s: unknown value \"%.100s\" (one of %s)", place, s, names);
        return -1;
    }
    case K_CHARS: {
        if (!PyUnicode_Check(v)) {
            PyErr_Format(PyExc_TypeError, "%s: must be a str (got %.100s)", place, Py_TYPE(v)->tp_name);
            return -1;
        }
        Py_ssize_t n = 0;
        const char* s = PyUnicode_AsUTF8AndSize(v, &n);
        if (!s) return -1;
        if ((size_t)n >= f->size) {
            pydvi_raisef(DVI_ERR_INVALID_ARG, "%s: longer than %d bytes", place, (int)f->size - 1);
            return -1;
        }
        memcpy(p, s, (size_t)n + 1);
        return 0;
    }
    case K_TABLE: {
        if (!PyDict_Check(v)) {
            PyErr_Format(PyExc_TypeError, "%s: must be a dict (got %.100s)", place, Py_TYPE(v)->tp_name);
            return -1;
        }
        const field* sub[] = {f->table, NULL};
        return parse_fields(p, sub, v, place);
    }
    case K_SPECIAL: return 0;
    }
    return 0;
}

/* Sets base's fields from dict (keyword → value; None: the default, left
 * as it is); K_SPECIAL fields are left to the caller. what names the call
 * in errors ("World", "add_sphere"). */
static int parse_fields(void* base, const field* const* tables, PyObject* dict, const char* what)
{
    if (!dict) return 0;
    PyObject *key, *value;
    Py_ssize_t pos = 0;
    while (PyDict_Next(dict, &pos, &key, &value)) {
        const char* name = PyUnicode_Check(key) ? PyUnicode_AsUTF8(key) : NULL;
        if (!name) {
            PyErr_Format(PyExc_TypeError, "%s: keywords must be str", what);
            return -1;
        }
        const field* f = find_field(tables, name);
        if (!f) {
            char known[1024];
            known_names(tables, known, sizeof known);
            pydvi_raisef(DVI_ERR_INVALID_ARG, "%s: unknown setting \"%.100s\" (known: %s)", what, name, known);
            return -1;
        }
        if (f->kind == K_SPECIAL || value == Py_None) continue;
        char place[160];
        snprintf(place, sizeof place, "%s%s%s", what, strchr(what, ':') ? "." : ": ", name); /* "World: apgd.restart" */
        if (set_field(base, f, value, place) < 0) return -1;
    }
    return 0;
}

/* kwargs with the positional args under the given names (a new dict); TypeError for too many or a
 * name given twice */
static PyObject* merge_args(PyObject* args, PyObject* kwargs, const char* const* names, int count, const char* what)
{
    PyObject* d = kwargs ? PyDict_Copy(kwargs) : PyDict_New();
    if (!d) return NULL;
    const Py_ssize_t n = args ? PyTuple_GET_SIZE(args) : 0;
    if (n > count) {
        PyErr_Format(PyExc_TypeError, "%s() takes at most %d positional arguments (%zd given)", what, count, n);
        Py_DECREF(d);
        return NULL;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        if (PyDict_GetItemString(d, names[i])) {
            PyErr_Format(PyExc_TypeError, "%s() got multiple values for argument '%s'", what, names[i]);
            Py_DECREF(d);
            return NULL;
        }
        if (PyDict_SetItemString(d, names[i], PyTuple_GET_ITEM(args, i)) < 0) {
            Py_DECREF(d);
            return NULL;
        }
    }
    return d;
}

/* d[name], None counting as absent (borrowed, or NULL) */
static PyObject* get_arg(PyObject* d, const char* name)
{
    PyObject* v = d ? PyDict_GetItemString(d, name) : NULL;
    return v == Py_None ? NULL : v;
}

/* ---- the types ------------------------------------------------------------------ */

typedef struct World {
    PyObject_HEAD
    dvi_world* w;
    double dt;
    int busy; /* a thread is stepping it with the GIL released */
} World;

typedef struct Body {
    PyObject_HEAD
    World* world;
    dvi_body_id id;
} Body;

typedef struct Joint {
    PyObject_HEAD
    World* world;
    dvi_joint_id id;
} Joint;

static PyTypeObject WorldType;
static PyTypeObject BodyType;
static PyTypeObject JointType;

/* 0 when the world can be used, else -1 with the error set: closed, or busy in another thread */
static int usable(World* self)
{
    if (!self->w) {
        pydvi_raisef(DVI_ERR_INVALID_ARG, "World: closed (close() was called)");
        return -1;
    }
    if (self->busy) {
        PyErr_SetString(PyExc_RuntimeError,
                        "World: in use by another thread (a World is not thread-safe; use one per thread)");
        return -1;
    }
    return 0;
}

/* a Body of this world as its id (0 and the error set otherwise); `place` names the argument */
static int body_arg(World* self, PyObject* o, const char* place, dvi_body_id* id)
{
    if (!PyObject_TypeCheck(o, &BodyType)) {
        PyErr_Format(PyExc_TypeError, "%s: must be a dvicontact.Body (got %.100s)", place, Py_TYPE(o)->tp_name);
        return -1;
    }
    const Body* b = (const Body*)o;
    if (b->world != self) {
        pydvi_raisef(DVI_ERR_INVALID_ARG, "%s: a body of another World", place);
        return -1;
    }
    *id = b->id;
    return 0;
}

static PyObject* new_body(World* self, dvi_body_id id)
{
    Body* b = PyObject_New(Body, &BodyType);
    if (!b) return NULL;
    Py_INCREF(self);
    b->world = self;
    b->id = id;
    return (PyObject*)b;
}

/* a float64 array of shape (n,) or (n, m) filled from v */
static PyObject* vector(const double* v, npy_intp n)
{
    PyArrayObject* a = pydvi_zeros(1, &n);
    if (a) memcpy(PyArray_DATA(a), v, (size_t)n * sizeof(double));
    return (PyObject*)a;
}

/* ---- World ------------------------------------------------------------------------ */

static int World_init(World* self, PyObject* args, PyObject* kwargs)
{
    if (args && PyTuple_GET_SIZE(args) > 0) {
        PyErr_SetString(PyExc_TypeError, "World() takes keyword arguments only");
        return -1;
    }
    if (self->w) { /* __init__ called again */
        pydvi_raisef(DVI_ERR_INVALID_ARG, "World: already initialised");
        return -1;
    }
    dvi_world_def def = dvi_default_world_def();
    const field* tables[] = {WORLD_FIELDS, NULL};
    if (parse_fields(&def, tables, kwargs, "World") < 0) return -1;
    double dt = 1e-3;
    PyObject* v = get_arg(kwargs, "dt");
    if (v && set_field(&dt, &(field){"dt", K_F64, 0, NULL, 0, NULL, 0}, v, "World: dt") < 0) return -1;
    if (!(dt > 0.0) || !isfinite(dt)) {
        pydvi_raisef(DVI_ERR_INVALID_ARG, "World: dt: must be > 0 (got %g)", dt);
        return -1;
    }
    if ((v = get_arg(kwargs, "solver")) != NULL) {
        if (!PyUnicode_Check(v)) {
            PyErr_Format(PyExc_TypeError, "World: solver: must be a str (got %.100s)", Py_TYPE(v)->tp_name);
            return -1;
        }
        if (!(def.solver = PyUnicode_AsUTF8(v))) return -1;
    }
    if (kwargs && PyDict_GetItemString(kwargs, "coulomb_check") == Py_None) def.coulomb_check = NULL;
    else if ((v = get_arg(kwargs, "coulomb_check")) != NULL) {
        if (!PyUnicode_Check(v)) {
            PyErr_Format(PyExc_TypeError, "World: coulomb_check: must be a str or None (got %.100s)",
                         Py_TYPE(v)->tp_name);
            return -1;
        }
        if (!(def.coulomb_check = PyUnicode_AsUTF8(v))) return -1;
        if (!strcmp(def.coulomb_check, "none")) def.coulomb_check = NULL;
    }
    def.allocator = pydvi_allocator;
    dvi_world* w = NULL;
    const dvi_status st = dvi_world_create(&def, &w);
    if (st != DVI_OK) {
        pydvi_raise(st, NULL);
        return -1;
    }
    self->w = w;
    self->dt = dt;
    return 0;
}

static void World_dealloc(World* self)
{
    dvi_world_destroy(self->w);
    self->w = NULL;
    Py_TYPE(self)->tp_free((PyObject*)self);
}

PyDoc_STRVAR(close_doc, "close() -> None\n\n"
                        "Frees the world now (else when the World and its Body and Joint objects are\n"
                        "gone). Every later call on it, its bodies or joints raises InputError. Also\n"
                        "`with dvicontact.World(...) as w:`.");
static PyObject* World_close(World* self, PyObject* noargs)
{
    (void)noargs;
    if (self->busy) {
        PyErr_SetString(PyExc_RuntimeError, "World: in use by another thread (a World is not thread-safe)");
        return NULL;
    }
    dvi_world_destroy(self->w);
    self->w = NULL;
    Py_RETURN_NONE;
}

static PyObject* World_enter(World* self, PyObject* noargs)
{
    (void)noargs;
    if (usable(self) < 0) return NULL;
    Py_INCREF(self);
    return (PyObject*)self;
}

static PyObject* World_exit(World* self, PyObject* args)
{
    (void)args;
    return World_close(self, NULL);
}

PyDoc_STRVAR(add_body_doc,
             "add_body(*, type='dynamic', fixed=False, mass=1.0, inertia=eye(3), position=(0, 0, 0),\n"
             "         orientation=(1, 0, 0, 0), velocity=(0, 0, 0), angular_velocity=(0, 0, 0),\n"
             "         gravity_scale=1.0) -> Body\n\n"
             "Adds a rigid body (dvi_body_create). type: 'dynamic', 'fixed' (never moves; fixed=True\n"
             "says the same) or 'kinematic' (moves with its set velocity). mass in kg (> 0 for a\n"
             "dynamic body); inertia in kg m^2 about the centre of mass in the body frame, a (3, 3)\n"
             "symmetric positive definite matrix or (3,) principal moments; position (m) of the\n"
             "centre of mass; orientation a unit quaternion (w, x, y, z); velocity (m/s) and\n"
             "angular_velocity (rad/s, world frame). Bodies have no shape until add_sphere, ... .\n"
             "Errors: InputError with the library's message (\"body.mass: must be finite and > 0\n"
             "(got -1)\"), or for an unknown keyword or a wrong shape; TypeError for a wrong type.");
static PyObject* World_add_body(World* self, PyObject* args, PyObject* kwargs)
{
    if (usable(self) < 0) return NULL;
    if (args && PyTuple_GET_SIZE(args) > 0) {
        PyErr_SetString(PyExc_TypeError, "add_body() takes keyword arguments only");
        return NULL;
    }
    dvi_body_def def = dvi_default_body_def();
    const field* tables[] = {BODY_FIELDS, NULL};
    if (parse_fields(&def, tables, kwargs, "add_body") < 0) return NULL;
    PyObject* v = get_arg(kwargs, "fixed");
    if (v) {
        bool fixed = false;
        if (set_field(&fixed, &(field){"fixed", K_BOOL, 0, NULL, 0, NULL, 0}, v, "add_body: fixed") < 0) return NULL;
        if (fixed && get_arg(kwargs, "type") && def.type != DVI_BODY_FIXED)
            return pydvi_raisef(DVI_ERR_INVALID_ARG, "add_body: fixed=True and type=\"%s\" disagree",
                                BODY_TYPES[def.type]);
        if (fixed) def.type = DVI_BODY_FIXED;
    }
    if ((v = get_arg(kwargs, "inertia")) != NULL) {
        PyArrayObject* a0 = (PyArrayObject*)PyArray_FROM_O(v);
        if (!a0) {
            PyErr_Clear();
            PyErr_Format(PyExc_TypeError, "add_body: inertia: must be an array of real numbers (got %.100s)",
                         Py_TYPE(v)->tp_name);
            return NULL;
        }
        const int nd = PyArray_NDIM(a0) == 1 ? 1 : 2;
        Py_DECREF(a0);
        const npy_intp s1[1] = {3}, s2[2] = {3, 3};
        PyArrayObject* a = pydvi_as_f64(v, "add_body: inertia", nd, nd == 1 ? s1 : s2);
        if (!a) return NULL;
        const double* x = (const double*)PyArray_DATA(a);
        if (nd == 1) {
            memset(def.inertia, 0, sizeof def.inertia);
            def.inertia[0] = x[0], def.inertia[4] = x[1], def.inertia[8] = x[2];
        } else
            memcpy(def.inertia, x, sizeof def.inertia);
        Py_DECREF(a);
    }
    dvi_body_id id;
    const dvi_status st = dvi_body_create(self->w, &def, &id);
    if (st != DVI_OK) return pydvi_raise(st, NULL);
    return new_body(self, id);
}

/* add_KIND: the body, the common keywords, the kind's own */
static PyObject* add_shape(World* self, PyObject* args, PyObject* kwargs, dvi_shape_type type, const char* what,
                           const field* kind_fields)
{
    if (usable(self) < 0) return NULL;
    static const char* const names[] = {"body"};
    PyObject* d = merge_args(args, kwargs, names, 1, what);
    if (!d) return NULL;
    PyObject* result = NULL;
    PyArrayObject *heights = NULL, *vertices = NULL, *triangles = NULL;
    shape_args sa;
    memset(&sa, 0, sizeof sa);
    sa.def = dvi_default_shape_def();
    const field* tables[] = {SHAPE_FIELDS, kind_fields, NULL};
    const field* mtables[] = {MATERIAL_FIELDS, NULL};
    dvi_body_id body;
    char place[64];
    PyObject* v = get_arg(d, "body");
    if (!v) {
        PyErr_Format(PyExc_TypeError, "%s() missing required argument 'body'", what);
        goto done;
    }
    snprintf(place, sizeof place, "%s: body", what);
    if (body_arg(self, v, place, &body) < 0) goto done;
    if ((v = get_arg(d, "material")) != NULL) {
        if (!PyDict_Check(v)) {
            PyErr_Format(PyExc_TypeError, "%s: material: must be a dict (got %.100s)", what, Py_TYPE(v)->tp_name);
            goto done;
        }
        snprintf(place, sizeof place, "%s: material", what);
        if (parse_fields(&sa.def.material, mtables, v, place) < 0) goto done;
    }
    if (parse_fields(&sa, tables, d, what) < 0) goto done;
    for (const field* f = kind_fields; f->name; f++)
        if (!get_arg(d, f->name)) {
            PyErr_Format(PyExc_TypeError, "%s() missing required argument '%s'", what, f->name);
            goto done;
        }
    dvi_shape_id sid;
    dvi_status st = DVI_ERR_INVALID_ARG;
    switch (type) {
    case DVI_SHAPE_SPHERE: st = dvi_world_add_sphere(self->w, body, &sa.def, &(dvi_sphere){sa.radius}, &sid); break;
    case DVI_SHAPE_BOX: {
        dvi_box g;
        memcpy(g.half_extents, sa.half_extents, sizeof g.half_extents);
        st = dvi_world_add_box(self->w, body, &sa.def, &g, &sid);
        break;
    }
    case DVI_SHAPE_CAPSULE:
        st = dvi_world_add_capsule(self->w, body, &sa.def, &(dvi_capsule){sa.radius, sa.half_length}, &sid);
        break;
    case DVI_SHAPE_CYLINDER:
        st = dvi_world_add_cylinder(self->w, body, &sa.def, &(dvi_cylinder){sa.radius, sa.half_length}, &sid);
        break;
    case DVI_SHAPE_ELLIPSOID: {
        dvi_ellipsoid g;
        memcpy(g.semi_axes, sa.semi_axes, sizeof g.semi_axes);
        st = dvi_world_add_ellipsoid(self->w, body, &sa.def, &g, &sid);
        break;
    }
    case DVI_SHAPE_PLANE: st = dvi_world_add_plane(self->w, body, &sa.def, &sid); break;
    case DVI_SHAPE_HEIGHTFIELD: {
        const npy_intp any2[2] = {-1, -1};
        snprintf(place, sizeof place, "%s: heights", what);
        if (!(heights = pydvi_as_f64(get_arg(d, "heights"), place, 2, any2))) goto done;
        if (PyArray_DIM(heights, 0) > INT32_MAX || PyArray_DIM(heights, 1) > INT32_MAX) {
            pydvi_raisef(DVI_ERR_INVALID_ARG, "%s: too large", place);
            goto done;
        }
        const dvi_height_grid g = {(int32_t)PyArray_DIM(heights, 1), (int32_t)PyArray_DIM(heights, 0), sa.dx, sa.dy,
                                   (const double*)PyArray_DATA(heights)};
        st = dvi_world_add_heightfield(self->w, body, &sa.def, &g, &sid);
        break;
    }
    case DVI_SHAPE_MESH: {
        const npy_intp n3[2] = {-1, 3};
        snprintf(place, sizeof place, "%s: vertices", what);
        if (!(vertices = pydvi_as_f64(get_arg(d, "vertices"), place, 2, n3))) goto done;
        snprintf(place, sizeof place, "%s: triangles", what);
        if (!(triangles = pydvi_as_i32(get_arg(d, "triangles"), place, 2, n3))) goto done;
        if (PyArray_DIM(vertices, 0) > INT32_MAX || PyArray_DIM(triangles, 0) > INT32_MAX) {
            pydvi_raisef(DVI_ERR_INVALID_ARG, "%s: too large", what);
            goto done;
        }
        const dvi_triangle_mesh g = {(int32_t)PyArray_DIM(vertices, 0), (int32_t)PyArray_DIM(triangles, 0),
                                     (const double*)PyArray_DATA(vertices), (const int32_t*)PyArray_DATA(triangles)};
        st = dvi_world_add_mesh(self->w, body, &sa.def, &g, &sid);
        break;
    }
    }
    if (st != DVI_OK) pydvi_raise(st, NULL);
    else result = PyLong_FromLong((long)sid.index1 - 1);
done:
    Py_XDECREF(heights);
    Py_XDECREF(vertices);
    Py_XDECREF(triangles);
    Py_DECREF(d);
    return result;
}

#define SHAPE_COMMON_DOC                                                                                         \
    "position=(0, 0, 0) and orientation=(1, 0, 0, 0) place the shape's frame in the body's frame (m, unit\n"   \
    "quaternion). The material: material=dict(...) and/or its fields as keywords (these win): friction\n"   \
    "(0.5), rolling_friction and spinning_friction (m, 0), restitution (0), compliance (m/N, 0), and for\n"    \
    "DEM young_modulus (Pa, 1e7), poisson_ratio (0.3), k_n, k_t (N/m), gamma_n, gamma_t (1/s),\n"             \
    "terrain_stiffness, terrain_hysteresis (docs/dem.md). collision_category (1) and collision_mask\n"         \
    "(0xFFFFFFFF) filter the pairs. Returns the shape's index (creation order). Errors: InputError with the\n" \
    "library's message (\"shape.radius: must be > 0\"), an unknown keyword, a Body of another World."

PyDoc_STRVAR(add_sphere_doc, "add_sphere(body, *, radius, position=..., orientation=..., material=None, ...) -> int\n\n"
                             "Adds a sphere of radius (m) to body. " SHAPE_COMMON_DOC);
static PyObject* World_add_sphere(World* self, PyObject* a, PyObject* k)
{
    return add_shape(self, a, k, DVI_SHAPE_SPHERE, "add_sphere", SPHERE_FIELDS);
}
PyDoc_STRVAR(add_box_doc, "add_box(body, *, half_extents, position=..., orientation=..., material=None, ...) -> int\n\n"
                          "Adds a box of half_extents (3,) (m) along the shape's axes to body. " SHAPE_COMMON_DOC);
static PyObject* World_add_box(World* self, PyObject* a, PyObject* k)
{
    return add_shape(self, a, k, DVI_SHAPE_BOX, "add_box", BOX_FIELDS);
}
PyDoc_STRVAR(add_capsule_doc,
             "add_capsule(body, *, radius, half_length, position=..., orientation=..., ...) -> int\n\n"
             "Adds a capsule (the segment +-half_length along the shape's z swept by a ball of radius, m)\n"
             "to body. " SHAPE_COMMON_DOC);
static PyObject* World_add_capsule(World* self, PyObject* a, PyObject* k)
{
    return add_shape(self, a, k, DVI_SHAPE_CAPSULE, "add_capsule", CAPSULE_FIELDS);
}
PyDoc_STRVAR(add_cylinder_doc,
             "add_cylinder(body, *, radius, half_length, position=..., orientation=..., ...) -> int\n\n"
             "Adds a cylinder (axis along the shape's z, faces at +-half_length, m; a wheel's axle is its z)\n"
             "to body. " SHAPE_COMMON_DOC);
static PyObject* World_add_cylinder(World* self, PyObject* a, PyObject* k)
{
    return add_shape(self, a, k, DVI_SHAPE_CYLINDER, "add_cylinder", CAPSULE_FIELDS);
}
PyDoc_STRVAR(add_ellipsoid_doc,
             "add_ellipsoid(body, *, semi_axes, position=..., orientation=..., ...) -> int\n\n"
             "Adds an ellipsoid of semi_axes (3,) (m) along the shape's x, y, z to body. " SHAPE_COMMON_DOC);
static PyObject* World_add_ellipsoid(World* self, PyObject* a, PyObject* k)
{
    return add_shape(self, a, k, DVI_SHAPE_ELLIPSOID, "add_ellipsoid", ELLIPSOID_FIELDS);
}
PyDoc_STRVAR(add_plane_doc, "add_plane(body, *, position=..., orientation=..., material=None, ...) -> int\n\n"
                            "Adds the half-space z <= 0 of the shape's frame to body, which must be fixed.\n"
                            "Tilt it with orientation. " SHAPE_COMMON_DOC);
static PyObject* World_add_plane(World* self, PyObject* a, PyObject* k)
{
    return add_shape(self, a, k, DVI_SHAPE_PLANE, "add_plane", PLANE_FIELDS);
}
PyDoc_STRVAR(add_heightfield_doc,
             "add_heightfield(body, *, heights, dx, dy, position=..., orientation=..., ...) -> int\n\n"
             "Adds a height field to body, which must be fixed: heights (ny, nx) (m; copied), heights[j, i]\n"
             "at (i dx, j dy) of the shape's frame. " SHAPE_COMMON_DOC);
static PyObject* World_add_heightfield(World* self, PyObject* a, PyObject* k)
{
    return add_shape(self, a, k, DVI_SHAPE_HEIGHTFIELD, "add_heightfield", HEIGHTFIELD_FIELDS);
}
PyDoc_STRVAR(add_mesh_doc,
             "add_mesh(body, *, vertices, triangles, position=..., orientation=..., ...) -> int\n\n"
             "Adds a triangle mesh to body, which must be fixed: vertices (n, 3) (m) and triangles (m, 3)\n"
             "(vertex indices, counter-clockwise seen from outside), copied. " SHAPE_COMMON_DOC);
static PyObject* World_add_mesh(World* self, PyObject* a, PyObject* k)
{
    return add_shape(self, a, k, DVI_SHAPE_MESH, "add_mesh", MESH_FIELDS);
}

PyDoc_STRVAR(add_joint_doc,
             "add_joint(kind, body_a, body_b, *, anchor=(0, 0, 0), axis=(0, 0, 1), anchor_b=(0, 0, 0),\n"
             "          motor=None, motor_speed=0.0, motor_ramp_time=0.0, motor_torque=0.0,\n"
             "          motor_damping=0.0, collide_connected=False) -> Joint\n\n"
             "Joins body_b to body_a (None: to the world) (dvi_joint_create). kind: 'spherical',\n"
             "'revolute', 'prismatic', 'fixed' or 'distance'. anchor: the world point (m) where they are\n"
             "joined, at creation; axis: the world axis of a revolute or prismatic joint; anchor_b: a\n"
             "distance joint's second point (on body_b). motor: None, 'rotation_speed' or\n"
             "'rotation_torque' (revolute), 'linear_speed' (prismatic), with motor_speed (rad/s or m/s,\n"
             "of body_b relative to body_a), reached over motor_ramp_time (s); motor_torque (N m);\n"
             "motor_damping (N m s/rad: a DC motor's law; 0 holds the speed exactly).\n"
             "collide_connected: whether the two bodies' shapes touch. Errors: InputError with the\n"
             "library's message, an unknown keyword, a Body of another World.");
static PyObject* World_add_joint(World* self, PyObject* args, PyObject* kwargs)
{
    if (usable(self) < 0) return NULL;
    static const char* const names[] = {"kind", "body_a", "body_b"};
    PyObject* d = merge_args(args, kwargs, names, 3, "add_joint");
    if (!d) return NULL;
    PyObject* result = NULL;
    dvi_joint_def def = dvi_default_joint_def();
    const field* tables[] = {JOINT_FIELDS, NULL};
    if (parse_fields(&def, tables, d, "add_joint") < 0) goto done;
    PyObject* v = get_arg(d, "kind");
    if (!v) {
        PyErr_SetString(PyExc_TypeError, "add_joint() missing required argument 'kind'");
        goto done;
    }
    if (set_field(&def, &(field)FE("kind", JD, type, JOINT_TYPES), v, "add_joint: kind") < 0) goto done;
    if ((v = get_arg(d, "motor")) != NULL &&
        set_field(&def, &(field)FE("motor", JD, motor, MOTORS), v, "add_joint: motor") < 0)
        goto done;
    if ((v = get_arg(d, "body_a")) != NULL && body_arg(self, v, "add_joint: body_a", &def.body_a) < 0) goto done;
    if (!(v = get_arg(d, "body_b"))) {
        PyErr_SetString(PyExc_TypeError, "add_joint() missing required argument 'body_b'");
        goto done;
    }
    if (body_arg(self, v, "add_joint: body_b", &def.body_b) < 0) goto done;
    dvi_joint_id id;
    const dvi_status st = dvi_joint_create(self->w, &def, &id);
    if (st != DVI_OK) {
        pydvi_raise(st, NULL);
        goto done;
    }
    Joint* j = PyObject_New(Joint, &JointType);
    if (!j) goto done;
    Py_INCREF(self);
    j->world = self;
    j->id = id;
    result = (PyObject*)j;
done:
    Py_DECREF(d);
    return result;
}

PyDoc_STRVAR(step_doc,
             "step(n=1, dt=None) -> int\n\n"
             "Advances the world by n steps of dt seconds (default: the World's dt) and returns how\n"
             "many of them ended with the solver short of its tolerance (the steps were taken; see\n"
             "stats). The GIL is released during each step; Ctrl-C raises KeyboardInterrupt after\n"
             "the current step, the world left consistent at the steps taken. A step that fails\n"
             "raises with the library's message (NumericError for a blow-up, InputError for a\n"
             "solver that does not solve the friction law), the world as before that step.");
static PyObject* World_step(World* self, PyObject* args, PyObject* kwargs)
{
    static char* kw[] = {"n", "dt", NULL};
    long long n = 1;
    PyObject* dto = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|LO:step", kw, &n, &dto)) return NULL;
    if (usable(self) < 0) return NULL;
    double h = self->dt;
    if (dto != Py_None && set_field(&h, &(field){"dt", K_F64, 0, NULL, 0, NULL, 0}, dto, "step: dt") < 0)
        return NULL;
    if (n < 0) return pydvi_raisef(DVI_ERR_INVALID_ARG, "step: n: must be >= 0 (got %lld)", n);
    long long missed = 0;
    dvi_world* w = self->w;
    self->busy = 1;
    for (long long i = 0; i < n; i++) {
        dvi_status st;
        Py_BEGIN_ALLOW_THREADS
        st = dvi_world_step(w, h);
        Py_END_ALLOW_THREADS
        if (st < 0) {
            self->busy = 0;
            return pydvi_raise(st, NULL); /* the message of this thread's failed call */
        }
        if (st == DVI_NOT_CONVERGED) missed++;
        if (i + 1 < n && PyErr_CheckSignals() < 0) {
            self->busy = 0;
            return NULL;
        }
    }
    self->busy = 0;
    return PyLong_FromLongLong(missed);
}

PyDoc_STRVAR(body_doc, "body(index) -> Body\n\n"
                       "The body of that index (0-based, creation order; negative counts from the end).");
static PyObject* World_body(World* self, PyObject* arg)
{
    if (usable(self) < 0) return NULL;
    Py_ssize_t i = PyNumber_AsSsize_t(arg, PyExc_IndexError);
    if (i == -1 && PyErr_Occurred()) return NULL;
    const int32_t n = dvi_world_body_count(self->w);
    if (i < 0) i += n;
    if (i < 0 || i >= n) {
        PyErr_Format(PyExc_IndexError, "body: index out of range (%d bodies)", (int)n);
        return NULL;
    }
    dvi_body_id id;
    const dvi_status st = dvi_world_body_at(self->w, (int32_t)i, &id);
    if (st != DVI_OK) return pydvi_raise(st, NULL);
    return new_body(self, id);
}

/* (bodies, m) of one getter over the bodies in creation order */
typedef dvi_status (*body_getter)(const dvi_world*, dvi_body_id, double*);
static dvi_status get_contact_force(const dvi_world* w, dvi_body_id b, double* out)
{
    return dvi_body_get_contact_force(w, b, out, NULL);
}
static dvi_status get_contact_torque(const dvi_world* w, dvi_body_id b, double* out)
{
    return dvi_body_get_contact_force(w, b, NULL, out);
}

static PyObject* all_bodies(World* self, body_getter get, npy_intp m)
{
    if (usable(self) < 0) return NULL;
    const npy_intp shape[2] = {dvi_world_body_count(self->w), m};
    PyArrayObject* a = pydvi_zeros(2, shape);
    if (!a) return NULL;
    double* x = (double*)PyArray_DATA(a);
    for (npy_intp i = 0; i < shape[0]; i++) {
        dvi_body_id id;
        dvi_status st = dvi_world_body_at(self->w, (int32_t)i, &id);
        if (st == DVI_OK) st = get(self->w, id, x + i * m);
        if (st != DVI_OK) {
            Py_DECREF(a);
            return pydvi_raise(st, NULL);
        }
    }
    return (PyObject*)a;
}

PyDoc_STRVAR(positions_doc, "Every body's centre of mass, ndarray (bodies, 3) (m, world frame; creation order).");
static PyObject* World_positions(World* self, void* closure)
{
    (void)closure;
    return all_bodies(self, dvi_body_get_position, 3);
}
PyDoc_STRVAR(orientations_doc, "Every body's orientation, ndarray (bodies, 4): unit quaternions (w, x, y, z).");
static PyObject* World_orientations(World* self, void* closure)
{
    (void)closure;
    return all_bodies(self, dvi_body_get_orientation, 4);
}
PyDoc_STRVAR(velocities_doc, "Every body's linear velocity, ndarray (bodies, 3) (m/s, world frame).");
static PyObject* World_velocities(World* self, void* closure)
{
    (void)closure;
    return all_bodies(self, dvi_body_get_velocity, 3);
}
PyDoc_STRVAR(angular_velocities_doc, "Every body's angular velocity, ndarray (bodies, 3) (rad/s, world frame).");
static PyObject* World_angular_velocities(World* self, void* closure)
{
    (void)closure;
    return all_bodies(self, dvi_body_get_angular_velocity, 3);
}
PyDoc_STRVAR(contact_forces_doc,
             "The sum of the contact forces on every body during the last step, ndarray (bodies, 3) (N,\n"
             "world frame).");
static PyObject* World_contact_forces(World* self, void* closure)
{
    (void)closure;
    return all_bodies(self, get_contact_force, 3);
}

PyDoc_STRVAR(stats_doc,
             "The last step's statistics (dvi_world_get_stats; docs/world.md): bodies, contacts,\n"
             "joint_rows, rows, iterations, residual, solver_status ('converged', 'max_iterations', ...),\n"
             "max_penetration (m), max_joint_violation, kinetic_energy (J), the stages' wall times\n"
             "seconds_* (s), and the DEM, CCP-hover, Coulomb-check and direct-joint-solve fields of\n"
             "dvi_step_stats under the same names.");
static PyObject* World_stats(World* self, void* closure)
{
    (void)closure;
    if (usable(self) < 0) return NULL;
    const dvi_step_stats s = dvi_world_get_stats(self->w);
    return pydvi_step_stats(&s);
}

PyDoc_STRVAR(contacts_doc,
             "The last step's contacts (dvi_world_get_contact), a dict of ndarray, one row each:\n"
             "'body_a', 'body_b' (body indices, int32 (n,)), 'point' (n, 3) (m, world), 'normal' (n, 3)\n"
             "(from a to b), 'distance' (n,) (m, the gap at collision time) and 'force' (n, 3) (N, on\n"
             "body_b; -force on body_a).");
static PyObject* World_contacts(World* self, void* closure)
{
    (void)closure;
    if (usable(self) < 0) return NULL;
    return pydvi_contacts(self->w);
}

PyDoc_STRVAR(save_state_doc,
             "save_state() -> bytes\n\n"
             "The world's complete dynamic state (dvi_world_save_state): time, poses, velocities,\n"
             "applied forces, motor targets, warm starts, DEM contact history. load_state of these bytes\n"
             "into a world of the same structure makes its next steps bit-identical.");
static PyObject* World_save_state(World* self, PyObject* noargs)
{
    (void)noargs;
    if (usable(self) < 0) return NULL;
    void* data = NULL;
    size_t size = 0;
    const dvi_status st = dvi_world_save_state(self->w, &data, &size);
    if (st != DVI_OK) return pydvi_raise(st, NULL);
    PyObject* b = PyBytes_FromStringAndSize((const char*)data, (Py_ssize_t)size);
    free(data); /* the blob is on libc (world.h) */
    return b;
}

PyDoc_STRVAR(load_state_doc,
             "load_state(state) -> None\n\n"
             "Restores a state from save_state() (bytes-like). InputError, the world unchanged, when the\n"
             "world's structure differs from the saved one's or the bytes are damaged.");
static PyObject* World_load_state(World* self, PyObject* arg)
{
    if (usable(self) < 0) return NULL;
    Py_buffer buf;
    if (PyObject_GetBuffer(arg, &buf, PyBUF_SIMPLE) < 0) return NULL;
    const dvi_status st = dvi_world_load_state(self->w, buf.buf, (size_t)buf.len);
    PyBuffer_Release(&buf);
    if (st != DVI_OK) return pydvi_raise(st, NULL);
    Py_RETURN_NONE;
}

static PyObject* World_get_time(World* self, void* closure)
{
    (void)closure;
    if (usable(self) < 0) return NULL;
    return PyFloat_FromDouble(dvi_world_time(self->w));
}

static PyObject* World_get_dt(World* self, void* closure)
{
    (void)closure;
    return PyFloat_FromDouble(self->dt);
}

static PyObject* World_get_body_count(World* self, void* closure)
{
    (void)closure;
    if (usable(self) < 0) return NULL;
    return PyLong_FromLong(dvi_world_body_count(self->w));
}

static PyObject* World_repr(World* self)
{
    if (!self->w) return PyUnicode_FromString("<dvicontact.World (closed)>");
    char t[32];
    snprintf(t, sizeof t, "%.17g", dvi_world_time(self->w));
    return PyUnicode_FromFormat("<dvicontact.World: %d bodies, t = %s s>", (int)dvi_world_body_count(self->w), t);
}

static PyMethodDef World_methods[] = {
    {"add_body", (PyCFunction)(void (*)(void))World_add_body, METH_VARARGS | METH_KEYWORDS, add_body_doc},
    {"add_sphere", (PyCFunction)(void (*)(void))World_add_sphere, METH_VARARGS | METH_KEYWORDS, add_sphere_doc},
    {"add_box", (PyCFunction)(void (*)(void))World_add_box, METH_VARARGS | METH_KEYWORDS, add_box_doc},
    {"add_capsule", (PyCFunction)(void (*)(void))World_add_capsule, METH_VARARGS | METH_KEYWORDS, add_capsule_doc},
    {"add_cylinder", (PyCFunction)(void (*)(void))World_add_cylinder, METH_VARARGS | METH_KEYWORDS, add_cylinder_doc},
    {"add_ellipsoid", (PyCFunction)(void (*)(void))World_add_ellipsoid, METH_VARARGS | METH_KEYWORDS,
     add_ellipsoid_doc},
    {"add_plane", (PyCFunction)(void (*)(void))World_add_plane, METH_VARARGS | METH_KEYWORDS, add_plane_doc},
    {"add_heightfield", (PyCFunction)(void (*)(void))World_add_heightfield, METH_VARARGS | METH_KEYWORDS,
     add_heightfield_doc},
    {"add_mesh", (PyCFunction)(void (*)(void))World_add_mesh, METH_VARARGS | METH_KEYWORDS, add_mesh_doc},
    {"add_joint", (PyCFunction)(void (*)(void))World_add_joint, METH_VARARGS | METH_KEYWORDS, add_joint_doc},
    {"step", (PyCFunction)(void (*)(void))World_step, METH_VARARGS | METH_KEYWORDS, step_doc},
    {"body", (PyCFunction)World_body, METH_O, body_doc},
    {"save_state", (PyCFunction)World_save_state, METH_NOARGS, save_state_doc},
    {"load_state", (PyCFunction)World_load_state, METH_O, load_state_doc},
    {"close", (PyCFunction)World_close, METH_NOARGS, close_doc},
    {"__enter__", (PyCFunction)World_enter, METH_NOARGS, "__enter__() -> World"},
    {"__exit__", (PyCFunction)World_exit, METH_VARARGS, "__exit__(*exc) -> None: close()"},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef World_getset[] = {
    {"time", (getter)World_get_time, NULL, "Simulated time (s).", NULL},
    {"dt", (getter)World_get_dt, NULL, "The step (s) of step() without dt.", NULL},
    {"body_count", (getter)World_get_body_count, NULL, "Number of bodies.", NULL},
    {"positions", (getter)World_positions, NULL, positions_doc, NULL},
    {"orientations", (getter)World_orientations, NULL, orientations_doc, NULL},
    {"velocities", (getter)World_velocities, NULL, velocities_doc, NULL},
    {"angular_velocities", (getter)World_angular_velocities, NULL, angular_velocities_doc, NULL},
    {"contact_forces", (getter)World_contact_forces, NULL, contact_forces_doc, NULL},
    {"contacts", (getter)World_contacts, NULL, contacts_doc, NULL},
    {"stats", (getter)World_stats, NULL, stats_doc, NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyDoc_STRVAR(
    World_doc,
    "World(**settings)\n\n"
    "A world of rigid bodies, shapes and joints advanced by DVI (complementarity) or DEM (penalty)\n"
    "steps (dvi_world_create; docs/world.md). The settings are the scene file's formulation keys\n"
    "(docs/scene-format.md), all optional: gravity (m/s^2, (0, 0, -9.81)), dt (s, the step of\n"
    "step(); 0.001), method ('dvi' or 'dem'), solver ('apgd', 'pgs', 'jacobi', 'lemke', 'nsgs',\n"
    "'newton', 'desaxce'), friction_law ('ccp' or 'coulomb'), tolerance (1e-8), max_iterations (2000),\n"
    "warm_start (True), warm_start_scale (1), threads (0: the library default), the solvers'\n"
    "own settings as dicts (apgd={'restart': True}, pgs={'omega': 1.0}, lemke=..., nsgs=...,\n"
    "newton=..., desaxce=..., jacobi=...), collision_envelope (m, 0.005), contact_recovery_speed\n"
    "(m/s, 0.6), joint_recovery_speed, bounce_threshold (m/s, 0.5), joint_solve ('auto',\n"
    "'iterative', 'direct'), coulomb_check (a Coulomb solver or None; 'desaxce') and dem (a dict:\n"
    "normal_model 'hertz' or 'hooke', constants, k_n, k_t, gamma_n, gamma_t, characteristic_speed,\n"
    "rolling_damping, terrain_slip_speed, max_speed).\n\n"
    "Errors: InputError for an unknown setting (naming it and the known ones) or a value the\n"
    "library refuses (its message), TypeError for a value of the wrong type.\n\n"
    "Not thread-safe: use a World from one thread at a time (another thread's call while it steps\n"
    "raises RuntimeError); different Worlds step in parallel threads (steps release the GIL).");

static PyTypeObject WorldType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "dvicontact.World",
    .tp_basicsize = sizeof(World),
    .tp_dealloc = (destructor)World_dealloc,
    .tp_repr = (reprfunc)World_repr,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = World_doc,
    .tp_methods = World_methods,
    .tp_getset = World_getset,
    .tp_init = (initproc)World_init,
    .tp_new = PyType_GenericNew,
};

/* ---- Body --------------------------------------------------------------------------- */

static void Body_dealloc(Body* self)
{
    Py_XDECREF(self->world);
    PyObject_Free(self);
}

/* the body's world, usable, or NULL with the error set */
static dvi_world* body_world(Body* self)
{
    return usable(self->world) < 0 ? NULL : self->world->w;
}

static PyObject* body_vector(Body* self, body_getter get, npy_intp n)
{
    dvi_world* w = body_world(self);
    if (!w) return NULL;
    double v[4];
    const dvi_status st = get(w, self->id, v);
    if (st != DVI_OK) return pydvi_raise(st, NULL);
    return vector(v, n);
}

/* The vector getters of a Body: one row each (the closure of Body_getset) */
typedef struct {
    body_getter get;
    npy_intp n;
} body_vector_row;
static const body_vector_row BODY_POSITION = {dvi_body_get_position, 3},
                             BODY_ORIENTATION = {dvi_body_get_orientation, 4},
                             BODY_VELOCITY = {dvi_body_get_velocity, 3},
                             BODY_ANGULAR_VELOCITY = {dvi_body_get_angular_velocity, 3},
                             BODY_CONTACT_FORCE = {get_contact_force, 3},
                             BODY_CONTACT_TORQUE = {get_contact_torque, 3};

static PyObject* Body_get_vector(Body* self, void* c)
{
    const body_vector_row* row = c;
    return body_vector(self, row->get, row->n);
}

static PyObject* Body_get_index(Body* self, void* c)
{
    (void)c;
    return PyLong_FromLong((long)self->id.index1 - 1);
}
static PyObject* Body_get_world(Body* self, void* c)
{
    (void)c;
    Py_INCREF(self->world);
    return (PyObject*)self->world;
}
static PyObject* Body_get_mass(Body* self, void* c)
{
    (void)c;
    dvi_world* w = body_world(self);
    if (!w) return NULL;
    dvi_body_info info;
    const dvi_status st = dvi_body_get_info(w, self->id, &info);
    if (st != DVI_OK) return pydvi_raise(st, NULL);
    return PyFloat_FromDouble(info.mass);
}
static PyObject* Body_get_type(Body* self, void* c)
{
    (void)c;
    dvi_world* w = body_world(self);
    if (!w) return NULL;
    dvi_body_info info;
    const dvi_status st = dvi_body_get_info(w, self->id, &info);
    if (st != DVI_OK) return pydvi_raise(st, NULL);
    return PyUnicode_FromString(BODY_TYPES[info.type]);
}

/* two optional 3-vectors of a setter: a, b (NULL when None or absent) */
static int two_vectors(PyObject* args, PyObject* kwargs, const char* fmt, char** kw, const char* what, double a[3],
                       double b[3], bool* have_a, bool* have_b)
{
    PyObject *oa = Py_None, *ob = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, fmt, kw, &oa, &ob)) return -1;
    const npy_intp three = 3;
    char place[96];
    PyObject* o[2] = {oa, ob};
    double* out[2] = {a, b};
    bool* have[2] = {have_a, have_b};
    for (int k = 0; k < 2; k++) {
        *have[k] = o[k] != Py_None;
        if (!*have[k]) continue;
        snprintf(place, sizeof place, "%s: %s", what, kw[k]);
        PyArrayObject* arr = pydvi_as_f64(o[k], place, 1, &three);
        if (!arr) return -1;
        memcpy(out[k], PyArray_DATA(arr), 3 * sizeof(double));
        Py_DECREF(arr);
    }
    return 0;
}

PyDoc_STRVAR(set_velocity_doc, "set_velocity(velocity=None, angular_velocity=None) -> None\n\n"
                               "Sets the body's linear (m/s) and angular (rad/s) velocity, world frame; None\n"
                               "leaves one as it is. InputError for a fixed body or a value not finite.");
static PyObject* Body_set_velocity(Body* self, PyObject* args, PyObject* kwargs)
{
    static char* kw[] = {"velocity", "angular_velocity", NULL};
    double v[3], w3[3];
    bool hv, hw;
    if (two_vectors(args, kwargs, "|OO:set_velocity", kw, "set_velocity", v, w3, &hv, &hw) < 0) return NULL;
    dvi_world* w = body_world(self);
    if (!w) return NULL;
    const dvi_status st = dvi_body_set_velocity(w, self->id, hv ? v : NULL, hw ? w3 : NULL);
    if (st != DVI_OK) return pydvi_raise(st, NULL);
    Py_RETURN_NONE;
}

PyDoc_STRVAR(set_applied_force_doc,
             "set_applied_force(force=None, torque=None) -> None\n\n"
             "A constant force (N, at the centre of mass) and torque (N m), world frame, acting every\n"
             "step until changed; None leaves one as it is.");
static PyObject* Body_set_applied_force(Body* self, PyObject* args, PyObject* kwargs)
{
    static char* kw[] = {"force", "torque", NULL};
    double f[3], t[3];
    bool hf, ht;
    if (two_vectors(args, kwargs, "|OO:set_applied_force", kw, "set_applied_force", f, t, &hf, &ht) < 0) return NULL;
    dvi_world* w = body_world(self);
    if (!w) return NULL;
    const dvi_status st = dvi_body_set_applied_force(w, self->id, hf ? f : NULL, ht ? t : NULL);
    if (st != DVI_OK) return pydvi_raise(st, NULL);
    Py_RETURN_NONE;
}

static PyObject* Body_richcompare(PyObject* a, PyObject* b, int op)
{
    if (!PyObject_TypeCheck(b, &BodyType) || (op != Py_EQ && op != Py_NE)) Py_RETURN_NOTIMPLEMENTED;
    const Body *x = (const Body*)a, *y = (const Body*)b;
    const bool eq = x->world == y->world && x->id.index1 == y->id.index1;
    return PyBool_FromLong(op == Py_EQ ? eq : !eq);
}

static Py_hash_t Body_hash(Body* self)
{
    Py_hash_t h = (Py_hash_t)((uintptr_t)self->world >> 4) * 1000003 + self->id.index1;
    return h == -1 ? -2 : h;
}

static PyObject* Body_repr(Body* self)
{
    return PyUnicode_FromFormat("<dvicontact.Body %d>", (int)self->id.index1 - 1);
}

static PyMethodDef Body_methods[] = {
    {"set_velocity", (PyCFunction)(void (*)(void))Body_set_velocity, METH_VARARGS | METH_KEYWORDS, set_velocity_doc},
    {"set_applied_force", (PyCFunction)(void (*)(void))Body_set_applied_force, METH_VARARGS | METH_KEYWORDS,
     set_applied_force_doc},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef Body_getset[] = {
    {"index", (getter)Body_get_index, NULL, "The body's index in its world (creation order).", NULL},
    {"world", (getter)Body_get_world, NULL, "The World the body belongs to.", NULL},
    {"type", (getter)Body_get_type, NULL, "'dynamic', 'fixed' or 'kinematic'.", NULL},
    {"mass", (getter)Body_get_mass, NULL, "kg (0 for fixed and kinematic bodies).", NULL},
    {"position", (getter)Body_get_vector, NULL, "Centre of mass (m, world frame), ndarray (3,).",
     (void*)&BODY_POSITION},
    {"orientation", (getter)Body_get_vector, NULL, "Unit quaternion (w, x, y, z), ndarray (4,).",
     (void*)&BODY_ORIENTATION},
    {"velocity", (getter)Body_get_vector, NULL, "Linear velocity (m/s, world frame), ndarray (3,).",
     (void*)&BODY_VELOCITY},
    {"angular_velocity", (getter)Body_get_vector, NULL, "Angular velocity (rad/s, world frame), ndarray (3,).",
     (void*)&BODY_ANGULAR_VELOCITY},
    {"contact_force", (getter)Body_get_vector, NULL,
     "Sum of the contact forces on the body during the last step (N, world frame), ndarray (3,).",
     (void*)&BODY_CONTACT_FORCE},
    {"contact_torque", (getter)Body_get_vector, NULL,
     "Their torque about the centre of mass (N m, world frame), ndarray (3,).", (void*)&BODY_CONTACT_TORQUE},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject BodyType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "dvicontact.Body",
    .tp_basicsize = sizeof(Body),
    .tp_dealloc = (destructor)Body_dealloc,
    .tp_repr = (reprfunc)Body_repr,
    .tp_hash = (hashfunc)Body_hash,
    .tp_richcompare = Body_richcompare,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Body: a body of a World (World.add_body, World.body). Holds its World alive; its\n"
              "state is read through properties (arrays in SI units, world frame).",
    .tp_methods = Body_methods,
    .tp_getset = Body_getset,
};

/* ---- Joint ---------------------------------------------------------------------------- */

static void Joint_dealloc(Joint* self)
{
    Py_XDECREF(self->world);
    PyObject_Free(self);
}

PyDoc_STRVAR(reaction_doc, "reaction() -> (force, torque)\n\n"
                           "The force (N) and torque (N m, about the anchor, motor included) the joint exerted\n"
                           "on body_b during the last step, world frame: two ndarrays (3,).");
static PyObject* Joint_reaction(Joint* self, PyObject* noargs)
{
    (void)noargs;
    if (usable(self->world) < 0) return NULL;
    double f[3], t[3];
    const dvi_status st = dvi_joint_get_reaction(self->world->w, self->id, f, t);
    if (st != DVI_OK) return pydvi_raise(st, NULL);
    PyObject* a = vector(f, 3);
    PyObject* b = a ? vector(t, 3) : NULL;
    if (!b) {
        Py_XDECREF(a);
        return NULL;
    }
    return Py_BuildValue("(NN)", a, b);
}

PyDoc_STRVAR(set_motor_doc, "set_motor(speed=0.0, torque=0.0) -> None\n\n"
                            "Changes the motor's target (dvi_joint_set_motor): a speed motor's speed (rad/s or\n"
                            "m/s; its ramp kept), a torque motor's torque (N m). InputError for a joint without\n"
                            "a motor or a value not finite.");
static PyObject* Joint_set_motor(Joint* self, PyObject* args, PyObject* kwargs)
{
    static char* kw[] = {"speed", "torque", NULL};
    double speed = 0.0, torque = 0.0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|dd:set_motor", kw, &speed, &torque)) return NULL;
    if (usable(self->world) < 0) return NULL;
    const dvi_status st = dvi_joint_set_motor(self->world->w, self->id, speed, torque);
    if (st != DVI_OK) return pydvi_raise(st, NULL);
    Py_RETURN_NONE;
}

static PyObject* Joint_get_index(Joint* self, void* c)
{
    (void)c;
    return PyLong_FromLong((long)self->id.index1 - 1);
}
static PyObject* Joint_get_world(Joint* self, void* c)
{
    (void)c;
    Py_INCREF(self->world);
    return (PyObject*)self->world;
}

static PyMethodDef Joint_methods[] = {
    {"reaction", (PyCFunction)Joint_reaction, METH_NOARGS, reaction_doc},
    {"set_motor", (PyCFunction)(void (*)(void))Joint_set_motor, METH_VARARGS | METH_KEYWORDS, set_motor_doc},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef Joint_getset[] = {
    {"index", (getter)Joint_get_index, NULL, "The joint's index in its world (creation order).", NULL},
    {"world", (getter)Joint_get_world, NULL, "The World the joint belongs to.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject JointType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "dvicontact.Joint",
    .tp_basicsize = sizeof(Joint),
    .tp_dealloc = (destructor)Joint_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Joint: a joint of a World (World.add_joint). Holds its World alive.",
    .tp_methods = Joint_methods,
    .tp_getset = Joint_getset,
};

int pydvi_world_init(PyObject* m)
{
    PyTypeObject* types[] = {&WorldType, &BodyType, &JointType};
    const char* names[] = {"World", "Body", "Joint"};
    for (int i = 0; i < 3; i++) {
        if (PyType_Ready(types[i]) < 0) return -1;
        if (PyModule_AddObjectRef(m, names[i], (PyObject*)types[i]) < 0) return -1;
    }
    return 0;
}
