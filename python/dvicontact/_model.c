/* dvicontact's Python extension, part "model": scene files and the models
 * built from them (<dvi/scene.h>), their states, contacts, statistics,
 * health, probes and checkpoints. The pure-Python API over these types is
 * dvicontact/model.py (Scene, Model).
 *
 *   _core._Scene   a parsed scene (dvi_scene), overrides applied in place
 *   _core._Model   a model built from a scene (dvi_model): steps with the
 *                  GIL released per step, Ctrl-C checked between steps,
 *                  the due probes' rows recorded into growing arrays
 *
 * A model's world takes its memory from pydvi_allocator
 * (dvi_model_create_with), so leak tests count its blocks; the scene's and
 * the model's own small tables are libc's. The rover study's probe kinds
 * ("attitude", "wheel_slip") are registered at import, as `dvi` does, so
 * that the rover scenes of examples/scenes load here too. */
#include "_common.h"

#include "rover_probes.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- scenes ------------------------------------------------------------------ */

typedef struct {
    PyObject_HEAD
    dvi_scene* scene;
} SceneObject;

static PyTypeObject Scene_Type;

/* The scene's errors (one line per problem) as the exception's text, the
 * trailing newline dropped; without any, the thread's message. */
static PyObject* raise_scene_errors(dvi_status st, dvi_scene_errors* e)
{
    if (e->count > 0 && e->text) {
        size_t n = strlen(e->text);
        while (n > 0 && e->text[n - 1] == '\n') e->text[--n] = '\0';
        pydvi_raise(st, e->text);
    } else {
        pydvi_raise(st, NULL);
    }
    dvi_scene_errors_free(e);
    return NULL;
}

static PyObject* scene_wrap(dvi_scene* s)
{
    SceneObject* self = PyObject_New(SceneObject, &Scene_Type);
    if (!self) {
        dvi_scene_destroy(s);
        return NULL;
    }
    self->scene = s;
    return (PyObject*)self;
}

PyDoc_STRVAR(scene_load_doc, "_scene_load(path) -> _Scene\n\n"
                             "Reads and validates a scene file (dvi_scene_load). FileError when it cannot be read,\n"
                             "InputError naming the place of every problem.");
static PyObject* py_scene_load(PyObject* self, PyObject* arg)
{
    (void)self;
    PyObject* b = pydvi_path(arg, "source");
    if (!b) return NULL;
    dvi_scene* s = NULL;
    dvi_scene_errors e = {0};
    dvi_status st;
    Py_BEGIN_ALLOW_THREADS
    st = dvi_scene_load(PyBytes_AS_STRING(b), &s, &e);
    Py_END_ALLOW_THREADS
    Py_DECREF(b);
    if (st < 0) {
        /* the thread's message is the scene's: read it on this thread, as the load ran here */
        return raise_scene_errors(st, &e);
    }
    dvi_scene_errors_free(&e);
    return scene_wrap(s);
}

PyDoc_STRVAR(scene_parse_doc, "_scene_parse(text, base_dir=None) -> _Scene\n\n"
                              "Parses and validates a scene from its JSON text (dvi_scene_parse); base_dir\n"
                              "resolves relative file names (None: the current directory).");
static PyObject* py_scene_parse(PyObject* self, PyObject* args)
{
    (void)self;
    const char* text = NULL;
    Py_ssize_t len = 0;
    PyObject* base = Py_None;
    if (!PyArg_ParseTuple(args, "s#|O:_scene_parse", &text, &len, &base)) return NULL;
    PyObject* b = NULL;
    if (base != Py_None && !(b = pydvi_path(base, "base_dir"))) return NULL;
    dvi_scene* s = NULL;
    dvi_scene_errors e = {0};
    dvi_status st;
    Py_BEGIN_ALLOW_THREADS
    st = dvi_scene_parse(text, (size_t)len, b ? PyBytes_AS_STRING(b) : NULL, &s, &e);
    Py_END_ALLOW_THREADS
    Py_XDECREF(b);
    if (st < 0) return raise_scene_errors(st, &e);
    dvi_scene_errors_free(&e);
    return scene_wrap(s);
}

static void Scene_dealloc(SceneObject* self)
{
    dvi_scene_destroy(self->scene);
    PyObject_Free(self);
}

/* A string override: a str, or a TypeError naming the key. */
static int override_str(PyObject* v, const char* key, const char** out)
{
    if (!PyUnicode_Check(v)) {
        PyErr_Format(PyExc_TypeError, "overrides[\"%s\"]: must be a str (got %.100s)", key, Py_TYPE(v)->tp_name);
        return -1;
    }
    *out = PyUnicode_AsUTF8(v);
    return *out ? 0 : -1;
}

static int override_num(PyObject* v, const char* key, double* out)
{
    if (PyBool_Check(v) || !PyNumber_Check(v)) {
        PyErr_Format(PyExc_TypeError, "overrides[\"%s\"]: must be a number (got %.100s)", key, Py_TYPE(v)->tp_name);
        return -1;
    }
    *out = PyFloat_AsDouble(v);
    if (*out == -1.0 && PyErr_Occurred()) return -1;
    if (!isfinite(*out)) { /* the library reads 0 as "not given": say it here */
        pydvi_raisef(DVI_ERR_INVALID_ARG, "--%s: must be a finite number (got %g)", key, *out);
        return -1;
    }
    return 0;
}

PyDoc_STRVAR(scene_override_doc,
             "apply_overrides(overrides) -> None\n\n"
             "Applies `dvi run`'s overrides (dvi_scene_apply_overrides) from a dict whose keys are the\n"
             "options' names: dt, duration, solver, method, threads, young_modulus, probe_interval,\n"
             "friction, joint_solve, lemke_coulomb. InputError with the library's text (\"--dt: must\n"
             "be > 0\") or naming an unknown key.");
static PyObject* Scene_apply_overrides(SceneObject* self, PyObject* dict)
{
    if (!PyDict_Check(dict)) {
        PyErr_Format(PyExc_TypeError, "overrides: must be a dict (got %.100s)", Py_TYPE(dict)->tp_name);
        return NULL;
    }
    dvi_scene_overrides o;
    memset(&o, 0, sizeof o);
    PyObject *key, *v;
    Py_ssize_t pos = 0;
    while (PyDict_Next(dict, &pos, &key, &v)) {
        const char* k = PyUnicode_Check(key) ? PyUnicode_AsUTF8(key) : NULL;
        if (!k) {
            PyErr_Clear();
            PyErr_Format(PyExc_TypeError, "overrides: keys must be str (got %.100s)", Py_TYPE(key)->tp_name);
            return NULL;
        }
        double x = 0.0;
        int rc = 0;
        if (!strcmp(k, "dt")) rc = override_num(v, k, &o.dt);
        else if (!strcmp(k, "duration")) rc = override_num(v, k, &o.duration);
        else if (!strcmp(k, "young_modulus")) rc = override_num(v, k, &o.young_modulus);
        else if (!strcmp(k, "probe_interval")) rc = override_num(v, k, &o.probe_interval);
        else if (!strcmp(k, "solver")) rc = override_str(v, k, &o.solver);
        else if (!strcmp(k, "method")) rc = override_str(v, k, &o.method);
        else if (!strcmp(k, "friction")) rc = override_str(v, k, &o.friction);
        else if (!strcmp(k, "joint_solve")) rc = override_str(v, k, &o.joint_solve);
        else if (!strcmp(k, "lemke_coulomb")) {
            if (!PyBool_Check(v)) {
                PyErr_Format(PyExc_TypeError, "overrides[\"lemke_coulomb\"]: must be a bool (got %.100s)",
                             Py_TYPE(v)->tp_name);
                return NULL;
            }
            o.lemke_coulomb = v == Py_True;
        } else if (!strcmp(k, "threads")) {
            if ((rc = override_num(v, k, &x)) == 0) {
                if (x != floor(x) || x < 0 || x > 1024) {
                    pydvi_raisef(DVI_ERR_INVALID_ARG, "--threads: must be a whole number from 0 to 1024 (got %g)", x);
                    return NULL;
                }
                o.threads = (int32_t)x;
            }
        } else {
            pydvi_raisef(DVI_ERR_INVALID_ARG,
                         "overrides: unknown key \"%s\" (known: dt, duration, solver, method, threads, young_modulus, "
                         "probe_interval, friction, joint_solve, lemke_coulomb)",
                         k);
            return NULL;
        }
        if (rc < 0) return NULL;
        /* 0 means "not given" to the library: a zero or negative value must reach its check */
        if ((!strcmp(k, "dt") || !strcmp(k, "duration") || !strcmp(k, "young_modulus") ||
             !strcmp(k, "probe_interval")) &&
            PyFloat_AsDouble(v) == 0.0) {
            pydvi_raisef(DVI_ERR_INVALID_ARG, "--%s: must be > 0 (got 0)", k);
            return NULL;
        }
    }
    dvi_scene_errors e = {0};
    dvi_status st = dvi_scene_apply_overrides(self->scene, &o, &e);
    if (st < 0) return raise_scene_errors(st, &e);
    dvi_scene_errors_free(&e);
    Py_RETURN_NONE;
}

PyDoc_STRVAR(scene_settings_doc, "settings() -> dict\n\n"
                                 "The run settings after overrides (dvi_scene_get_settings): name, method, dt (s),\n"
                                 "duration (s), solver, threads, friction, coulomb_check, smallest_size (m),\n"
                                 "max_iterations, tolerance, block_tolerance.");
static PyObject* Scene_settings(SceneObject* self, PyObject* noargs)
{
    (void)noargs;
    const dvi_scene_settings s = dvi_scene_get_settings(self->scene);
    return Py_BuildValue("{s:s,s:s,s:d,s:d,s:s,s:i,s:s,s:s,s:d,s:i,s:d,s:d,s:O}", "name", s.name ? s.name : "", "method",
                         s.method ? s.method : "", "dt", s.dt, "duration", s.duration, "solver",
                         s.solver ? s.solver : "", "threads", (int)s.threads, "friction",
                         dvi_friction_law_string(s.friction), "coulomb_check", s.coulomb_check ? s.coulomb_check : "",
                         "smallest_size", s.smallest_size, "max_iterations", (int)s.solver_settings.max_iterations,
                         "tolerance", s.solver_settings.tolerance, "block_tolerance",
                         s.solver_settings.block_tolerance, "health", s.health.enabled ? Py_True : Py_False);
}

PyDoc_STRVAR(scene_warnings_doc, "warnings() -> str\n\n"
                                 "What the scene says that is accepted but should change (deprecated keys): lines\n"
                                 "\"path: message\", \"\" when there are none.");
static PyObject* Scene_warnings(SceneObject* self, PyObject* noargs)
{
    (void)noargs;
    const char* w = dvi_scene_warnings(self->scene);
    return PyUnicode_FromString(w ? w : "");
}

PyDoc_STRVAR(scene_body_count_doc, "body_count() -> int\n\nBodies a model of this scene creates.");
static PyObject* Scene_body_count(SceneObject* self, PyObject* noargs)
{
    (void)noargs;
    return PyLong_FromLongLong((long long)dvi_scene_body_count(self->scene));
}

static PyMethodDef Scene_methods[] = {
    {"apply_overrides", (PyCFunction)Scene_apply_overrides, METH_O, scene_override_doc},
    {"settings", (PyCFunction)Scene_settings, METH_NOARGS, scene_settings_doc},
    {"warnings", (PyCFunction)Scene_warnings, METH_NOARGS, scene_warnings_doc},
    {"body_count", (PyCFunction)Scene_body_count, METH_NOARGS, scene_body_count_doc},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject Scene_Type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "dvicontact._core._Scene",
    .tp_basicsize = sizeof(SceneObject),
    .tp_dealloc = (destructor)Scene_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A parsed scene (dvi_scene); use dvicontact.Scene.",
    .tp_methods = Scene_methods,
};

/* ---- models ------------------------------------------------------------------ */

typedef struct {
    PyObject_HEAD
    dvi_model* model;
    int32_t bodies;
    dvi_body_id* ids;     /* [bodies], creation order */
    int32_t probes;
    int32_t max_columns;
    double* row;          /* [max_columns]: one probe sample */
    PyObject** rec;       /* [probes]: rows recorded since the last take, float64 (capacity, columns) */
    npy_intp* rec_rows;   /* [probes] */
    long long not_converged;
} ModelObject;

static PyTypeObject Model_Type;

static void Model_dealloc(ModelObject* self)
{
    if (self->rec)
        for (int32_t i = 0; i < self->probes; i++) Py_XDECREF(self->rec[i]);
    free(self->rec);
    free(self->rec_rows);
    free(self->row);
    free(self->ids);
    dvi_model_destroy(self->model);
    PyObject_Free(self);
}

static PyObject* Model_new(PyTypeObject* type, PyObject* args, PyObject* kw)
{
    (void)type;
    static char* kwlist[] = {"scene", NULL};
    PyObject* sc = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O!:_Model", kwlist, &Scene_Type, &sc)) return NULL;
    dvi_model* m = NULL;
    char msg[1024] = "";
    dvi_status st;
    Py_BEGIN_ALLOW_THREADS
    st = dvi_model_create_with(((SceneObject*)sc)->scene, &pydvi_allocator, &m, msg, sizeof msg);
    if (st < 0 && !msg[0]) snprintf(msg, sizeof msg, "cannot build the model: %s", dvi_error_message());
    Py_END_ALLOW_THREADS
    if (st < 0) return pydvi_raise(st, msg);
    ModelObject* self = PyObject_New(ModelObject, &Model_Type);
    if (!self) {
        dvi_model_destroy(m);
        return NULL;
    }
    self->model = m;
    self->ids = NULL;
    self->row = NULL;
    self->rec = NULL;
    self->rec_rows = NULL;
    self->not_converged = 0;
    const dvi_world* w = dvi_model_world_const(m);
    self->bodies = dvi_world_body_count(w);
    self->probes = dvi_model_probe_count(m);
    self->max_columns = 1;
    for (int32_t i = 0; i < self->probes; i++) {
        dvi_probe_info info;
        if (dvi_model_probe_info(m, i, &info) == DVI_OK && info.columns > self->max_columns)
            self->max_columns = info.columns;
    }
    self->ids = malloc(sizeof(dvi_body_id) * (size_t)(self->bodies > 0 ? self->bodies : 1));
    self->row = malloc(sizeof(double) * (size_t)self->max_columns);
    self->rec = calloc((size_t)(self->probes > 0 ? self->probes : 1), sizeof(PyObject*));
    self->rec_rows = calloc((size_t)(self->probes > 0 ? self->probes : 1), sizeof(npy_intp));
    if (!self->ids || !self->row || !self->rec || !self->rec_rows) {
        Py_DECREF(self);
        return PyErr_NoMemory();
    }
    for (int32_t i = 0; i < self->bodies; i++)
        if (dvi_world_body_at(w, i, &self->ids[i]) != DVI_OK || self->ids[i].index1 != i + 1) {
            /* a model's bodies are never destroyed: slot i + 1 is body i (contacts rely on it) */
            Py_DECREF(self);
            return pydvi_raisef(DVI_ERR_INVALID_ARG, "model: body %d is not in slot %d", (int)i, (int)i + 1);
        }
    return (PyObject*)self;
}

/* Appends the probe's current sample to its recording (grown by doubling). */
static int record_row(ModelObject* self, int32_t p)
{
    dvi_probe_info info;
    dvi_status st = dvi_model_probe_info(self->model, p, &info);
    if (st == DVI_OK) st = dvi_model_probe_sample(self->model, p, self->row);
    if (st < 0) {
        pydvi_raise(st, NULL);
        return -1;
    }
    PyArrayObject* a = (PyArrayObject*)self->rec[p];
    const npy_intp n = self->rec_rows[p];
    if (!a || PyArray_DIM(a, 0) == n) {
        npy_intp dims[2] = {n ? 2 * n : 64, info.columns};
        if (!a) {
            a = pydvi_zeros(2, dims);
            if (!a) return -1;
            self->rec[p] = (PyObject*)a;
        } else {
            PyArray_Dims d = {dims, 2};
            PyObject* r = PyArray_Resize(a, &d, 0, NPY_CORDER);
            if (!r) return -1;
            Py_DECREF(r);
        }
    }
    memcpy((double*)PyArray_DATA(a) + n * info.columns, self->row, sizeof(double) * (size_t)info.columns);
    self->rec_rows[p] = n + 1;
    return 0;
}

/* The failure of a step as an exception: the health monitor's blow-up
 * (NumericError), or the step's status and message. */
static PyObject* step_error(ModelObject* self, dvi_status st, const char* why)
{
    dvi_health_report hr;
    if (dvi_model_health(self->model, &hr) == DVI_OK && (hr.raised & (1u << DVI_HEALTH_BLOWUP)))
        return pydvi_raise(st, hr.first[DVI_HEALTH_BLOWUP]);
    return pydvi_raisef(st, "step %lld (t = %.9g s) failed: %s%s%s", (long long)dvi_model_step_count(self->model) + 1,
                        dvi_model_time(self->model), dvi_status_string(st), why[0] ? ": " : "", why);
}

PyDoc_STRVAR(model_step_doc,
             "step(n=1, record=False) -> int\n\n"
             "Takes n steps of the scene's dt, the GIL released during each; returns the steps taken.\n"
             "record: after each step, the due probes' rows are appended to the recording\n"
             "(take_records). Ctrl-C (KeyboardInterrupt) stops after the current step; the model\n"
             "stays usable. A failed step raises (NumericError for a blow-up, with the health\n"
             "monitor's text); the steps before it are kept.");
static PyObject* Model_step(ModelObject* self, PyObject* args, PyObject* kw)
{
    static char* kwlist[] = {"n", "record", NULL};
    long long n = 1;
    int record = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|Lp:step", kwlist, &n, &record)) return NULL;
    if (n < 0) return pydvi_raisef(DVI_ERR_INVALID_ARG, "n: must be >= 0 (got %lld)", n);
    dvi_model* m = self->model;
    for (long long k = 0; k < n; k++) {
        dvi_status st;
        char why[1024];
        why[0] = '\0';
        Py_BEGIN_ALLOW_THREADS
        st = dvi_model_step(m);
        if (st < 0) snprintf(why, sizeof why, "%s", dvi_error_message()); /* on the thread that stepped */
        Py_END_ALLOW_THREADS
        if (st < 0) return step_error(self, st, why);
        if (st == DVI_NOT_CONVERGED) self->not_converged++;
        if (record)
            for (int32_t p = 0; p < self->probes; p++)
                if (dvi_model_probe_due(m, p) && record_row(self, p) < 0) return NULL;
        if (k + 1 < n && PyErr_CheckSignals() < 0) return NULL;
    }
    return PyLong_FromLongLong(n);
}

PyDoc_STRVAR(model_time_steps_doc,
             "_time_steps(n) -> float\n\n"
             "Takes n steps in one C loop (the GIL released once, no signal checks) and returns the\n"
             "wall seconds they took (bench/bench_python.py's reference for the per-step overhead).");
static PyObject* Model_time_steps(ModelObject* self, PyObject* arg)
{
    long long n = PyLong_AsLongLong(arg);
    if (n == -1 && PyErr_Occurred()) return NULL;
    dvi_status st = DVI_OK;
    char why[1024] = "";
    struct timespec t0, t1;
    Py_BEGIN_ALLOW_THREADS
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (long long k = 0; k < n && st >= 0; k++) {
        st = dvi_model_step(self->model);
        if (st < 0) snprintf(why, sizeof why, "%s", dvi_error_message());
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    Py_END_ALLOW_THREADS
    if (st < 0) return step_error(self, st, why);
    return PyFloat_FromDouble((double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec));
}

PyDoc_STRVAR(model_sample_doc, "sample(probe) -> ndarray\n\n"
                               "The probe's current values (time first), shape (columns,).");
static PyObject* Model_sample(ModelObject* self, PyObject* arg)
{
    long p = PyLong_AsLong(arg);
    if (p == -1 && PyErr_Occurred()) return NULL;
    dvi_probe_info info;
    if (p < 0 || p >= self->probes || dvi_model_probe_info(self->model, (int32_t)p, &info) != DVI_OK)
        return pydvi_raisef(DVI_ERR_INVALID_ARG, "probe: no probe %ld (the model has %d)", p, (int)self->probes);
    npy_intp d = info.columns;
    PyArrayObject* a = pydvi_zeros(1, &d);
    if (!a) return NULL;
    dvi_status st = dvi_model_probe_sample(self->model, (int32_t)p, (double*)PyArray_DATA(a));
    if (st < 0) {
        Py_DECREF(a);
        return pydvi_raise(st, NULL);
    }
    return (PyObject*)a;
}

PyDoc_STRVAR(model_record_all_doc, "record_all() -> None\n\n"
                                   "Appends every probe's current row to the recording (as `dvi run` does at t = 0).");
static PyObject* Model_record_all(ModelObject* self, PyObject* noargs)
{
    (void)noargs;
    for (int32_t p = 0; p < self->probes; p++)
        if (record_row(self, p) < 0) return NULL;
    Py_RETURN_NONE;
}

PyDoc_STRVAR(model_take_records_doc,
             "take_records() -> list of ndarray\n\n"
             "The rows recorded since the last call, one (rows, columns) float64 array per probe;\n"
             "the recording starts again empty.");
static PyObject* Model_take_records(ModelObject* self, PyObject* noargs)
{
    (void)noargs;
    PyObject* list = PyList_New(self->probes);
    if (!list) return NULL;
    for (int32_t p = 0; p < self->probes; p++) {
        dvi_probe_info info;
        dvi_model_probe_info(self->model, p, &info);
        npy_intp dims[2] = {self->rec_rows[p], info.columns};
        PyArrayObject* a = pydvi_zeros(2, dims);
        if (!a) {
            Py_DECREF(list);
            return NULL;
        }
        if (self->rec[p] && dims[0] > 0)
            memcpy(PyArray_DATA(a), PyArray_DATA((PyArrayObject*)self->rec[p]),
                   sizeof(double) * (size_t)(dims[0] * dims[1]));
        self->rec_rows[p] = 0;
        PyList_SET_ITEM(list, p, (PyObject*)a);
    }
    return list;
}

PyDoc_STRVAR(model_probe_info_doc,
             "probe_info() -> list of dict\n\n"
             "The probes in the scene's order: name, title, every (steps), interval (s; 0: by steps),\n"
             "columns (names, time first), units.");
static PyObject* Model_probe_info(ModelObject* self, PyObject* noargs)
{
    (void)noargs;
    PyObject* list = PyList_New(self->probes);
    if (!list) return NULL;
    for (int32_t p = 0; p < self->probes; p++) {
        dvi_probe_info in;
        dvi_status st = dvi_model_probe_info(self->model, p, &in);
        if (st < 0) {
            Py_DECREF(list);
            return pydvi_raise(st, NULL);
        }
        PyObject* names = PyList_New(in.columns);
        PyObject* units = PyList_New(in.columns);
        if (!names || !units) goto fail_lists;
        for (int32_t c = 0; c < in.columns; c++) {
            PyObject* a = PyUnicode_FromString(in.column_names[c] ? in.column_names[c] : "");
            PyObject* b = PyUnicode_FromString(in.units && in.units[c] ? in.units[c] : "");
            if (!a || !b) {
                Py_XDECREF(a);
                Py_XDECREF(b);
                goto fail_lists;
            }
            PyList_SET_ITEM(names, c, a);
            PyList_SET_ITEM(units, c, b);
        }
        PyObject* d = Py_BuildValue("{s:s,s:s,s:i,s:d,s:N,s:N}", "name", in.name ? in.name : "", "title",
                                    in.title ? in.title : "", "every", (int)in.every, "interval", in.interval,
                                    "columns", names, "units", units);
        if (!d) {
            Py_DECREF(list);
            return NULL;
        }
        PyList_SET_ITEM(list, p, d);
        continue;
    fail_lists:
        Py_XDECREF(names);
        Py_XDECREF(units);
        Py_DECREF(list);
        return NULL;
    }
    return list;
}

PyDoc_STRVAR(model_body_names_doc, "body_names() -> list of str\n\nThe scene's names of the bodies, in creation order.");
static PyObject* Model_body_names(ModelObject* self, PyObject* noargs)
{
    (void)noargs;
    PyObject* list = PyList_New(self->bodies);
    if (!list) return NULL;
    char name[256];
    for (int32_t i = 0; i < self->bodies; i++) {
        if (dvi_model_body_name(self->model, self->ids[i], name, sizeof name) != DVI_OK) name[0] = '\0';
        PyObject* s = PyUnicode_FromString(name);
        if (!s) {
            Py_DECREF(list);
            return NULL;
        }
        PyList_SET_ITEM(list, i, s);
    }
    return list;
}

PyDoc_STRVAR(model_state_doc,
             "state(kind) -> ndarray\n\n"
             "A copy of the bodies' state in creation order: kind 0 positions (n, 3) m, 1 orientations\n"
             "(n, 4) unit quaternions (w, x, y, z), 2 velocities (n, 3) m/s, 3 angular velocities (n, 3)\n"
             "rad/s, world frame.");
static PyObject* Model_state(ModelObject* self, PyObject* arg)
{
    long kind = PyLong_AsLong(arg);
    if (kind == -1 && PyErr_Occurred()) return NULL;
    if (kind < 0 || kind > 3) return pydvi_raisef(DVI_ERR_INVALID_ARG, "kind: 0 to 3 (got %ld)", kind);
    const int width = kind == 1 ? 4 : 3;
    npy_intp dims[2] = {self->bodies, width};
    PyArrayObject* a = pydvi_zeros(2, dims);
    if (!a) return NULL;
    double* out = PyArray_DATA(a);
    const dvi_world* w = dvi_model_world_const(self->model);
    for (int32_t i = 0; i < self->bodies; i++) {
        dvi_status st = kind == 0   ? dvi_body_get_position(w, self->ids[i], out + 3 * i)
                        : kind == 1 ? dvi_body_get_orientation(w, self->ids[i], out + 4 * i)
                        : kind == 2 ? dvi_body_get_velocity(w, self->ids[i], out + 3 * i)
                                    : dvi_body_get_angular_velocity(w, self->ids[i], out + 3 * i);
        if (st < 0) {
            Py_DECREF(a);
            return pydvi_raise(st, NULL);
        }
    }
    return (PyObject*)a;
}

PyDoc_STRVAR(model_contacts_doc,
             "contacts() -> dict\n\n"
             "The last step's contacts (dvi_world_get_contact), k of them: body_a, body_b (int32 (k,),\n"
             "body indices in creation order; the normal points from a to b), point (k, 3) m,\n"
             "normal (k, 3), distance (k,) m (signed gap at collision), force (k, 3) N on body_b\n"
             "(−force on body_a), world frame.");
static PyObject* Model_contacts(ModelObject* self, PyObject* noargs)
{
    (void)noargs;
    return pydvi_contacts(dvi_model_world_const(self->model));
}

PyDoc_STRVAR(model_stats_doc, "stats() -> dict\n\n"
                              "The last step's statistics (dvi_world_get_stats; docs/world.md): counts, the\n"
                              "solver's iterations, residual and status, penetrations, energies, stage times (s).");
static PyObject* Model_stats(ModelObject* self, PyObject* noargs)
{
    (void)noargs;
    const dvi_step_stats s = dvi_world_get_stats(dvi_model_world_const(self->model));
    return pydvi_step_stats(&s);
}

static const char* const HEALTH_KINDS[DVI_HEALTH_KINDS] = {"energy", "escape",  "penetration", "joint",
                                                            "blowup", "chatter", "audit",       "hover"};

PyDoc_STRVAR(model_health_doc,
             "health() -> dict\n\n"
             "The run health monitor's findings (dvi_model_health; docs/health.md): 'raised', a dict\n"
             "{kind: (first step, what was seen)} for the kinds found (energy, escape, penetration,\n"
             "joint, blowup, chatter, audit, hover), and the report's numbers (J, fractions).");
static PyObject* Model_health(ModelObject* self, PyObject* noargs)
{
    (void)noargs;
    dvi_health_report r;
    dvi_status st = dvi_model_health(self->model, &r);
    if (st < 0) return pydvi_raise(st, NULL);
    PyObject* raised = PyDict_New();
    if (!raised) return NULL;
    for (int k = 0; k < DVI_HEALTH_KINDS; k++) {
        if (!(r.raised & (1u << k))) continue;
        PyObject* v = Py_BuildValue("(Ls)", (long long)r.first_step[k], r.first[k]);
        if (!v || PyDict_SetItemString(raised, HEALTH_KINDS[k], v) < 0) {
            Py_XDECREF(v);
            Py_DECREF(raised);
            return NULL;
        }
        Py_DECREF(v);
    }
    return Py_BuildValue("{s:N,s:d,s:d,s:d,s:d,s:d,s:d,s:d,s:d,s:L,s:d,s:d,s:d,s:d}", "raised", raised,
                         "energy_scale", r.energy_scale, "energy_excess", r.energy_excess, "work_in", r.work_in,
                         "energy_change", r.energy_change, "dissipated_contacts", r.dissipated_contacts,
                         "dissipated_joints", r.dissipated_joints, "audit_error", r.audit_error, "audit_worst",
                         r.audit_worst, "escaped", (long long)r.escaped, "worst_penetration", r.worst_penetration,
                         "worst_joint", r.worst_joint, "hover_worst", r.hover_worst, "hover_work_worst",
                         r.hover_work_worst);
}

PyDoc_STRVAR(model_save_doc, "save_state() -> bytes\n\n"
                             "The model's complete dynamic state (dvi_model_save_state): the blob `dvi run` writes\n"
                             "as checkpoint/state-STEP.bin.");
static PyObject* Model_save_state(ModelObject* self, PyObject* noargs)
{
    (void)noargs;
    void* data = NULL;
    size_t size = 0;
    dvi_status st = dvi_model_save_state(self->model, &data, &size);
    if (st < 0) return pydvi_raise(st, NULL);
    PyObject* b = PyBytes_FromStringAndSize(data, (Py_ssize_t)size);
    free(data);
    return b;
}

PyDoc_STRVAR(model_load_doc, "load_state(blob) -> None\n\n"
                             "Restores a state saved by save_state (or by `dvi run`) into this model, built from the\n"
                             "same scene; InputError when it belongs to another structure or is damaged.");
static PyObject* Model_load_state(ModelObject* self, PyObject* arg)
{
    Py_buffer b;
    if (PyObject_GetBuffer(arg, &b, PyBUF_SIMPLE) < 0) return NULL;
    char msg[1024] = "";
    dvi_status st = dvi_model_load_state(self->model, b.buf, (size_t)b.len, msg, sizeof msg);
    PyBuffer_Release(&b);
    if (st < 0) return pydvi_raise(st, msg);
    Py_RETURN_NONE;
}

static PyObject* Model_get_time(ModelObject* self, void* c)
{
    (void)c;
    return PyFloat_FromDouble(dvi_model_time(self->model));
}

static PyObject* Model_get_steps(ModelObject* self, void* c)
{
    (void)c;
    return PyLong_FromLongLong((long long)dvi_model_step_count(self->model));
}

static PyObject* Model_get_not_converged(ModelObject* self, void* c)
{
    (void)c;
    return PyLong_FromLongLong(self->not_converged);
}

static PyGetSetDef Model_getset[] = {
    {"time", (getter)Model_get_time, NULL, "Simulated time (s): the step count times the scene's dt.", NULL},
    {"step_count", (getter)Model_get_steps, NULL, "Steps taken since creation (or since the restored state).", NULL},
    {"not_converged", (getter)Model_get_not_converged, NULL,
     "Steps of this object whose solver missed its tolerance (taken all the same).", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMethodDef Model_methods[] = {
    {"step", (PyCFunction)(void (*)(void))Model_step, METH_VARARGS | METH_KEYWORDS, model_step_doc},
    {"_time_steps", (PyCFunction)Model_time_steps, METH_O, model_time_steps_doc},
    {"sample", (PyCFunction)Model_sample, METH_O, model_sample_doc},
    {"record_all", (PyCFunction)Model_record_all, METH_NOARGS, model_record_all_doc},
    {"take_records", (PyCFunction)Model_take_records, METH_NOARGS, model_take_records_doc},
    {"probe_info", (PyCFunction)Model_probe_info, METH_NOARGS, model_probe_info_doc},
    {"body_names", (PyCFunction)Model_body_names, METH_NOARGS, model_body_names_doc},
    {"state", (PyCFunction)Model_state, METH_O, model_state_doc},
    {"contacts", (PyCFunction)Model_contacts, METH_NOARGS, model_contacts_doc},
    {"stats", (PyCFunction)Model_stats, METH_NOARGS, model_stats_doc},
    {"health", (PyCFunction)Model_health, METH_NOARGS, model_health_doc},
    {"save_state", (PyCFunction)Model_save_state, METH_NOARGS, model_save_doc},
    {"load_state", (PyCFunction)Model_load_state, METH_O, model_load_doc},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject Model_Type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "dvicontact._core._Model",
    .tp_basicsize = sizeof(ModelObject),
    .tp_dealloc = (destructor)Model_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "_Model(scene): a model built from a scene (dvi_model); use dvicontact.Model. Not thread-safe: "
              "one thread per object.",
    .tp_methods = Model_methods,
    .tp_getset = Model_getset,
    .tp_new = Model_new,
};

static PyMethodDef model_functions[] = {
    {"_scene_load", py_scene_load, METH_O, scene_load_doc},
    {"_scene_parse", py_scene_parse, METH_VARARGS, scene_parse_doc},
    {NULL, NULL, 0, NULL},
};

int pydvi_model_init(PyObject* m)
{
    dvi_status st = rover_register_probes(); /* the rover scenes' probe kinds, as `dvi` registers them */
    if (st < 0) {
        pydvi_raise(st, NULL);
        return -1;
    }
    if (PyType_Ready(&Scene_Type) < 0 || PyType_Ready(&Model_Type) < 0) return -1;
    if (PyModule_AddObjectRef(m, "_Scene", (PyObject*)&Scene_Type) < 0 ||
        PyModule_AddObjectRef(m, "_Model", (PyObject*)&Model_Type) < 0)
        return -1;
    return PyModule_AddFunctions(m, model_functions);
}
