/* dvicontact's Python extension: exceptions, status names, array and path
 * arguments (_common.h), and the module-level functions every part uses:
 * version() and solvers(). */
#include "_common.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <stdio.h>

PyObject* pydvi_Error;
PyObject* pydvi_InputError;
PyObject* pydvi_NumericError;
PyObject* pydvi_FileError;

const char* pydvi_status_name(dvi_status st)
{
    switch (st) {
    case DVI_OK: return "ok";
    case DVI_NOT_CONVERGED: return "not_converged";
    case DVI_ABORTED: return "aborted";
    case DVI_ERR_NOMEM: return "nomem";
    case DVI_ERR_INVALID_ARG: return "invalid_arg";
    case DVI_ERR_SINGULAR: return "singular";
    case DVI_ERR_NUMERIC: return "numeric";
    case DVI_ERR_UNSUPPORTED: return "unsupported";
    case DVI_ERR_PARSE: return "parse";
    case DVI_ERR_IO: return "io";
    }
    return "unknown";
}

static PyObject* class_of(dvi_status st)
{
    switch (st) {
    case DVI_ERR_NOMEM: return PyExc_MemoryError;
    case DVI_ERR_INVALID_ARG:
    case DVI_ERR_PARSE:
    case DVI_ERR_UNSUPPORTED: return pydvi_InputError;
    case DVI_ERR_SINGULAR:
    case DVI_ERR_NUMERIC: return pydvi_NumericError;
    case DVI_ERR_IO: return pydvi_FileError;
    default: return pydvi_Error;
    }
}

PyObject* pydvi_raise(dvi_status st, const char* msg)
{
    if (!msg || !msg[0]) msg = dvi_error_message();
    if (!msg || !msg[0]) msg = dvi_status_string(st);
    PyObject* cls = class_of(st);
    if (cls == PyExc_MemoryError) {
        PyErr_SetString(cls, msg);
        return NULL;
    }
    PyObject* e = PyObject_CallFunction(cls, "s", msg);
    if (!e) return NULL;
    PyObject* name = PyUnicode_FromString(pydvi_status_name(st));
    if (name) {
        PyObject_SetAttrString(e, "status", name);
        Py_DECREF(name);
    }
    PyErr_SetObject(cls, e);
    Py_DECREF(e);
    return NULL;
}

PyObject* pydvi_raisef(dvi_status st, const char* fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return pydvi_raise(st, buf);
}

/* "(3, 4)" or "(12,)" into buf */
static void shape_text(char* buf, size_t n, int ndim, const npy_intp* dims)
{
    size_t k = 0;
    k += (size_t)snprintf(buf + k, n - k, "(");
    for (int i = 0; i < ndim && k < n; i++)
        k += (size_t)snprintf(buf + k, n - k, i ? ", %ld" : "%ld", (long)dims[i]);
    if (k < n) k += (size_t)snprintf(buf + k, n - k, ndim == 1 ? ",)" : ")");
    if (k >= n) buf[n - 1] = '\0';
}

static PyArrayObject* as_typed(PyObject* obj, const char* name, int ndim, const npy_intp* shape, int type,
                               const char* kinds, const char* what)
{
    PyArrayObject* a = NULL;
    if (PyArray_Check(obj)) {
        Py_INCREF(obj);
        a = (PyArrayObject*)obj;
    } else {
        a = (PyArrayObject*)PyArray_FROM_OF(obj, NPY_ARRAY_DEFAULT & 0); /* any dtype, to check it */
        if (!a) {
            PyErr_Clear();
            PyErr_Format(PyExc_TypeError, "%s: must be an array of %s (got %.100s)", name, what,
                         Py_TYPE(obj)->tp_name);
            return NULL;
        }
    }
    const char kind = PyArray_DESCR(a)->kind;
    if (!strchr(kinds, kind) || PyArray_SIZE(a) < 0) {
        PyObject* d = PyObject_Str((PyObject*)PyArray_DESCR(a));
        PyErr_Format(PyExc_TypeError, "%s: must be an array of %s (got dtype %s)", name, what,
                     d ? PyUnicode_AsUTF8(d) : "?");
        Py_XDECREF(d);
        Py_DECREF(a);
        return NULL;
    }
    bool ok = PyArray_NDIM(a) == ndim;
    for (int i = 0; ok && i < ndim; i++) ok = shape[i] < 0 || PyArray_DIM(a, i) == shape[i];
    if (!ok) {
        char want[128], got[128];
        shape_text(want, sizeof want, ndim, shape);
        for (char* c = want; (c = strstr(c, "-1")) != NULL;) { /* "-1" reads as "n" */
            c[0] = 'n';
            memmove(c + 1, c + 2, strlen(c + 2) + 1);
        }
        shape_text(got, sizeof got, PyArray_NDIM(a), PyArray_DIMS(a));
        Py_DECREF(a);
        pydvi_raisef(DVI_ERR_INVALID_ARG, "%s: must have shape %s (got %s)", name, want, got);
        return NULL;
    }
    PyArrayObject* c = (PyArrayObject*)PyArray_FROM_OTF((PyObject*)a, type, NPY_ARRAY_IN_ARRAY | NPY_ARRAY_FORCECAST);
    Py_DECREF(a);
    return c;
}

PyArrayObject* pydvi_as_f64(PyObject* obj, const char* name, int ndim, const npy_intp* shape)
{
    return as_typed(obj, name, ndim, shape, NPY_FLOAT64, "iuf", "real numbers");
}

PyArrayObject* pydvi_as_i32(PyObject* obj, const char* name, int ndim, const npy_intp* shape)
{
    PyArrayObject* a = as_typed(obj, name, ndim, shape, NPY_INT64, "iu", "integers");
    if (!a) return NULL;
    const npy_int64* v = (const npy_int64*)PyArray_DATA(a);
    const npy_intp n = PyArray_SIZE(a);
    for (npy_intp i = 0; i < n; i++)
        if (v[i] < INT32_MIN || v[i] > INT32_MAX) {
            Py_DECREF(a);
            pydvi_raisef(DVI_ERR_INVALID_ARG, "%s[%ld]: must fit in 32 bits (got %lld)", name, (long)i,
                         (long long)v[i]);
            return NULL;
        }
    PyArrayObject* c = (PyArrayObject*)PyArray_FROM_OTF((PyObject*)a, NPY_INT32, NPY_ARRAY_IN_ARRAY | NPY_ARRAY_FORCECAST);
    Py_DECREF(a);
    return c;
}

PyArrayObject* pydvi_zeros(int ndim, const npy_intp* shape)
{
    return (PyArrayObject*)PyArray_ZEROS(ndim, (npy_intp*)shape, NPY_FLOAT64, 0);
}

PyObject* pydvi_path(PyObject* obj, const char* name)
{
    PyObject* b = NULL;
    if (!PyUnicode_FSConverter(obj, &b)) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError, "%s: must be a path (str or os.PathLike; got %.100s)", name,
                     Py_TYPE(obj)->tp_name);
        return NULL;
    }
    return b;
}

/* Blocks held through pydvi_allocator (atomic: solves and steps run with
 * the GIL released, on any thread). */
static atomic_llong live_blocks;

static void* count_alloc(void* user, size_t size)
{
    (void)user;
    void* p = malloc(size ? size : 1);
    if (p) atomic_fetch_add(&live_blocks, 1);
    return p;
}

static void* count_realloc(void* user, void* ptr, size_t size)
{
    (void)user;
    void* p = realloc(ptr, size ? size : 1);
    if (p && !ptr) atomic_fetch_add(&live_blocks, 1);
    return p;
}

static void count_free(void* user, void* ptr)
{
    (void)user;
    if (ptr) atomic_fetch_sub(&live_blocks, 1);
    free(ptr);
}

const dvi_allocator pydvi_allocator = {count_alloc, count_realloc, count_free, NULL};

/* ---- what a model and a world both give (_common.h) ---- */

PyObject* pydvi_contacts(const dvi_world* w)
{
    const int32_t k = dvi_world_contact_count(w);
    npy_intp d1 = k, d3[2] = {k, 3};
    PyArrayObject* ba = (PyArrayObject*)PyArray_ZEROS(1, &d1, NPY_INT32, 0);
    PyArrayObject* bb = (PyArrayObject*)PyArray_ZEROS(1, &d1, NPY_INT32, 0);
    PyArrayObject* pt = pydvi_zeros(2, d3);
    PyArrayObject* nr = pydvi_zeros(2, d3);
    PyArrayObject* ds = pydvi_zeros(1, &d1);
    PyArrayObject* fo = pydvi_zeros(2, d3);
    if (!ba || !bb || !pt || !nr || !ds || !fo) goto fail;
    for (int32_t i = 0; i < k; i++) {
        dvi_contact_info c;
        dvi_status st = dvi_world_get_contact(w, i, &c);
        if (st < 0) {
            pydvi_raise(st, NULL);
            goto fail;
        }
        ((npy_int32*)PyArray_DATA(ba))[i] = c.body_a.index1 - 1;
        ((npy_int32*)PyArray_DATA(bb))[i] = c.body_b.index1 - 1;
        memcpy((double*)PyArray_DATA(pt) + 3 * i, c.point, sizeof c.point);
        memcpy((double*)PyArray_DATA(nr) + 3 * i, c.normal, sizeof c.normal);
        ((double*)PyArray_DATA(ds))[i] = c.distance;
        memcpy((double*)PyArray_DATA(fo) + 3 * i, c.force, sizeof c.force);
    }
    return Py_BuildValue("{s:N,s:N,s:N,s:N,s:N,s:N}", "body_a", ba, "body_b", bb, "point", pt, "normal", nr,
                         "distance", ds, "force", fo);
fail:
    Py_XDECREF(ba);
    Py_XDECREF(bb);
    Py_XDECREF(pt);
    Py_XDECREF(nr);
    Py_XDECREF(ds);
    Py_XDECREF(fo);
    return NULL;
}

PyObject* pydvi_step_stats(const dvi_step_stats* sp)
{
    const dvi_step_stats s = *sp;
    PyObject* d = Py_BuildValue(
        "{s:i,s:i,s:i,s:i,s:i,s:d,s:s,s:d,s:d,s:d,s:i,s:d,s:d,s:d,s:d,s:d,s:d,s:i,s:d,s:O,s:d}", "bodies",
        (int)s.bodies, "contacts", (int)s.contacts, "joint_rows", (int)s.joint_rows, "rows", (int)s.rows,
        "iterations", (int)s.iterations, "residual", s.residual, "solver_status",
        dvi_solve_status_string(s.solver_status), "max_penetration", s.max_penetration, "max_joint_violation",
        s.max_joint_violation, "max_joint_violation_relative", s.max_joint_violation_relative, "worst_joint",
        (int)s.worst_joint, "seconds_collide", s.seconds_collide, "seconds_assemble", s.seconds_assemble,
        "seconds_solve", s.seconds_solve, "seconds_integrate", s.seconds_integrate, "seconds_report",
        s.seconds_report, "max_overlap", s.max_overlap, "contact_history", (int)s.contact_history, "kinetic_energy",
        s.kinetic_energy, "warm_start_rejected", s.warm_start_rejected ? Py_True : Py_False,
        "solver_bytes_per_iteration", s.solver_bytes_per_iteration);
    if (!d) return NULL;
    PyObject* more = Py_BuildValue(
        "{s:i,s:i,s:d,s:d,s:d,s:i,s:O,s:O,s:d,s:i,s:i,s:i,s:i,s:d,s:i,s:L}", "chattering_contacts", (int)s.chattering_contacts,
        "chattering_contact", (int)s.chattering_contact, "ccp_hover", s.ccp_hover, "ccp_hover_work", s.ccp_hover_work,
        "ccp_hover_friction", s.ccp_hover_friction, "ccp_hover_contact", (int)s.ccp_hover_contact, "coulomb_checked",
        s.coulomb_checked ? Py_True : Py_False, "coulomb_nonunique", s.coulomb_nonunique ? Py_True : Py_False,
        "coulomb_difference", s.coulomb_difference, "coulomb_kept", (int)s.coulomb_kept, "coulomb_contact",
        (int)s.coulomb_contact, "joint_rows_dropped", (int)s.joint_rows_dropped, "joint_rows_regularised",
        (int)s.joint_rows_regularised, "joint_residual", s.joint_residual, "threads", (int)s.threads,
        "fallback_steps", (long long)s.fallback_steps);
    if (!more || PyDict_Update(d, more) < 0) {
        Py_XDECREF(more);
        Py_DECREF(d);
        return NULL;
    }
    Py_DECREF(more);
    return d;
}

PyDoc_STRVAR(live_blocks_doc, "_live_blocks() -> int\n\n"
                              "Memory blocks the library holds through the package's allocator (for leak tests).");
static PyObject* py_live_blocks(PyObject* self, PyObject* noargs)
{
    (void)self;
    (void)noargs;
    return PyLong_FromLongLong(atomic_load(&live_blocks));
}

PyDoc_STRVAR(version_doc, "version() -> str\n\n"
                          "The version of the dvicontact library the package runs on (\"MAJOR.MINOR.PATCH\").");
static PyObject* py_version(PyObject* self, PyObject* noargs)
{
    (void)self;
    (void)noargs;
    return PyUnicode_FromString(dvi_version_string());
}

PyDoc_STRVAR(solvers_doc,
             "solvers() -> list of dict\n\n"
             "The solver registry: one dict per built-in solver, in the registry's order, with\n"
             "'name' (what solve(..., solver=NAME) takes), 'summary' (one line) and 'law'\n"
             "('ccp' for the cone complementarity problem, 'coulomb' for Coulomb's law).");
static PyObject* py_solvers(PyObject* self, PyObject* noargs)
{
    (void)self;
    (void)noargs;
    const int32_t n = dvi_solver_count();
    PyObject* list = PyList_New(n);
    if (!list) return NULL;
    for (int32_t i = 0; i < n; i++) {
        PyObject* d = Py_BuildValue("{s:s,s:s,s:s}", "name", dvi_solver_name(i), "summary", dvi_solver_summary(i),
                                    "law", dvi_friction_law_string(dvi_solver_law(i)));
        if (!d) {
            Py_DECREF(list);
            return NULL;
        }
        PyList_SET_ITEM(list, i, d);
    }
    return list;
}

static PyMethodDef common_methods[] = {
    {"version", py_version, METH_NOARGS, version_doc},
    {"solvers", py_solvers, METH_NOARGS, solvers_doc},
    {"_live_blocks", py_live_blocks, METH_NOARGS, live_blocks_doc},
    {NULL, NULL, 0, NULL},
};

static PyObject* new_class(PyObject* m, const char* name, const char* doc, PyObject* bases)
{
    char full[64];
    snprintf(full, sizeof full, "dvicontact.%s", name);
    PyObject* c = PyErr_NewExceptionWithDoc(full, doc, bases, NULL);
    if (!c) return NULL;
    if (PyModule_AddObjectRef(m, name, c) < 0) {
        Py_DECREF(c);
        return NULL;
    }
    return c;
}

int pydvi_common_init(PyObject* m)
{
    pydvi_Error = new_class(m, "Error",
                            "The base of dvicontact's exceptions: the library's message, and .status, the "
                            "status's name (\"invalid_arg\", \"numeric\", ...).",
                            PyExc_Exception);
    if (!pydvi_Error) return -1;
    PyObject* b = PyTuple_Pack(2, pydvi_Error, PyExc_ValueError);
    pydvi_InputError = b ? new_class(m, "InputError",
                                     "Bad input: a value, key, file or array the library refuses; the message "
                                     "names the place (\"bodies[3].mass: must be > 0\").",
                                     b)
                         : NULL;
    Py_XDECREF(b);
    b = PyTuple_Pack(2, pydvi_Error, PyExc_ArithmeticError);
    pydvi_NumericError = b ? new_class(m, "NumericError",
                                       "A numeric failure: NaN or Inf in a computation, or a matrix that must be "
                                       "invertible and is not.",
                                       b)
                           : NULL;
    Py_XDECREF(b);
    b = PyTuple_Pack(2, pydvi_Error, PyExc_OSError);
    pydvi_FileError = b ? new_class(m, "FileError", "A file that could not be read or written.", b) : NULL;
    Py_XDECREF(b);
    if (!pydvi_InputError || !pydvi_NumericError || !pydvi_FileError) return -1;
    return PyModule_AddFunctions(m, common_methods);
}
