/* dvicontact's Python extension: the solver layer (include/dvi/ccp.h,
 * include/dvi/io.h). Three types and a few functions:
 *
 *   _Problem  a CCP (dvi_ccp_problem) whose arrays the object owns: its own
 *             copies of the caller's arrays (filled by _set, which the
 *             pure-Python subclass dvicontact.Problem calls from __init__),
 *             or the dvi_ccp_file of a file it read (read_fclib, read_ccp);
 *   Solver    a dvi_solver with its settings, given as keywords;
 *   Result    what a solve gives: γ, the dvi_solve_result, and, computed
 *             when first asked for, u = N γ + r and dv = M⁻¹ D γ.
 *
 * Objects are not thread-safe; different objects may solve in different
 * threads at once (every solve and file read runs with the GIL released). */
#include "_common.h"

#include <math.h>
#include <stddef.h>
#include <string.h>
#include <time.h>

/* ---- kinds ---------------------------------------------------------------- */

static const char* const kind_names[] = {NULL, "bilateral", "frictionless", "friction", "friction_rolling"};

/* ---- Problem ---------------------------------------------------------------- */

enum {
    P_R, P_COMPLIANCE, P_D_COLPTR, P_D_ROWIND, P_D_VALUES, P_INV_MASS, P_INV_RIGID, P_W_COLPTR, P_W_ROWIND, P_W_VALUES,
    P_F_BLOCK, P_F_BODY, P_F_FRAME, P_F_ARM, P_F_ELL, P_ARRAYS
};

typedef struct {
    PyObject_HEAD
    dvi_ccp_problem p;
    dvi_csc D, W;
    dvi_ccp_frames frames;
    dvi_ccp_block* blocks;      /* PyMem, for problems built from arrays */
    PyObject* arrays[P_ARRAYS]; /* the owned copies the problem points into */
    dvi_ccp_file* file;         /* a problem read from a file owns its arrays */
    dvi_fclib_info info;        /* FCLIB files: what the reader found */
    bool has_info;
    bool ready;
} ProblemObject;

static PyTypeObject ProblemType;

static void problem_dealloc(ProblemObject* self)
{
    for (int i = 0; i < P_ARRAYS; i++) Py_CLEAR(self->arrays[i]);
    PyMem_Free(self->blocks);
    dvi_ccp_file_free(self->file);
    if (self->has_info) dvi_fclib_info_clear(&self->info);
    Py_TYPE(self)->tp_free((PyObject*)self);
}

static PyObject* problem_new(PyTypeObject* type, PyObject* args, PyObject* kw)
{
    (void)args;
    (void)kw;
    ProblemObject* self = (ProblemObject*)type->tp_alloc(type, 0);
    if (!self) return NULL;
    self->p = dvi_ccp_problem_empty();
    return (PyObject*)self;
}

/* A float64 array the object owns: a copy of obj (name for the errors). */
static PyObject* own_f64(PyObject* obj, const char* name, int ndim, const npy_intp* shape)
{
    PyArrayObject* a = pydvi_as_f64(obj, name, ndim, shape);
    if (!a) return NULL;
    PyObject* c = PyArray_NewCopy(a, NPY_CORDER);
    Py_DECREF(a);
    return c;
}

static PyObject* own_i32(PyObject* obj, const char* name, int ndim, const npy_intp* shape)
{
    PyArrayObject* a = pydvi_as_i32(obj, name, ndim, shape);
    if (!a) return NULL;
    PyObject* c = PyArray_NewCopy(a, NPY_CORDER);
    Py_DECREF(a);
    return c;
}

/* A CSC matrix given as (rows, cols, colptr, rowind, values) into csc, its
 * arrays owned at arrays[k0 .. k0+2]. */
static int take_csc(ProblemObject* self, PyObject* t, const char* name, int k0, dvi_csc* csc)
{
    long rows = 0, cols = 0;
    PyObject *colptr, *rowind, *values;
    if (!PyTuple_Check(t) || !PyArg_ParseTuple(t, "llOOO", &rows, &cols, &colptr, &rowind, &values)) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError, "%s: must be (rows, cols, colptr, rowind, values)", name);
        return -1;
    }
    if (rows < 0 || cols < 0 || rows > INT32_MAX || cols >= INT32_MAX) {
        pydvi_raisef(DVI_ERR_INVALID_ARG, "%s: shape (%ld, %ld) out of range", name, rows, cols);
        return -1;
    }
    char nm[64];
    const npy_intp ncol[1] = {cols + 1}, any[1] = {-1};
    snprintf(nm, sizeof nm, "%s.indptr", name);
    self->arrays[k0] = own_i32(colptr, nm, 1, ncol);
    if (!self->arrays[k0]) return -1;
    snprintf(nm, sizeof nm, "%s.indices", name);
    self->arrays[k0 + 1] = own_i32(rowind, nm, 1, any);
    if (!self->arrays[k0 + 1]) return -1;
    const npy_intp nnz[1] = {PyArray_DIM((PyArrayObject*)self->arrays[k0 + 1], 0)};
    snprintf(nm, sizeof nm, "%s.data", name);
    self->arrays[k0 + 2] = own_f64(values, nm, 1, nnz);
    if (!self->arrays[k0 + 2]) return -1;
    const int32_t* cp = (const int32_t*)PyArray_DATA((PyArrayObject*)self->arrays[k0]);
    if (cp[0] != 0 || cp[cols] != nnz[0]) {
        pydvi_raisef(DVI_ERR_INVALID_ARG, "%s.indptr: must run from 0 to nnz = %ld (got %d to %d)", name,
                     (long)nnz[0], (int)cp[0], (int)cp[cols]);
        return -1;
    }
    csc->rows = (int32_t)rows;
    csc->cols = (int32_t)cols;
    csc->colptr = cp;
    csc->rowind = (const int32_t*)PyArray_DATA((PyArrayObject*)self->arrays[k0 + 1]);
    csc->values = (const double*)PyArray_DATA((PyArrayObject*)self->arrays[k0 + 2]);
    return 0;
}

static int problem_validate(ProblemObject* self)
{
    char msg[512] = "";
    dvi_status st = dvi_ccp_validate(&self->p, msg, sizeof msg);
    if (st < 0) {
        pydvi_raise(st, msg);
        return -1;
    }
    self->ready = true;
    return 0;
}

/* Contact frames given as (block, body, frame, arm, ell or None). */
static int take_frames(ProblemObject* self, PyObject* t)
{
    PyObject *block, *body, *frame, *arm, *ell;
    if (!PyTuple_Check(t) || !PyArg_ParseTuple(t, "OOOOO", &block, &body, &frame, &arm, &ell)) {
        PyErr_Clear();
        PyErr_SetString(PyExc_TypeError, "frames: must be (block, body, frame, arm, ell)");
        return -1;
    }
    const npy_intp any[1] = {-1};
    if (!(self->arrays[P_F_BLOCK] = own_i32(block, "frames.block", 1, any))) return -1;
    const npy_intp n = PyArray_DIM((PyArrayObject*)self->arrays[P_F_BLOCK], 0);
    const npy_intp s_body[2] = {n, 2}, s_frame[3] = {n, 3, 3}, s_arm[3] = {n, 2, 3}, s_ell[1] = {n};
    if (n > INT32_MAX) return pydvi_raisef(DVI_ERR_INVALID_ARG, "frames.block: too many contacts"), -1;
    if (!(self->arrays[P_F_BODY] = own_i32(body, "frames.body", 2, s_body))) return -1;
    if (!(self->arrays[P_F_FRAME] = own_f64(frame, "frames.frame", 3, s_frame))) return -1;
    if (!(self->arrays[P_F_ARM] = own_f64(arm, "frames.arm", 3, s_arm))) return -1;
    if (ell != Py_None && !(self->arrays[P_F_ELL] = own_f64(ell, "frames.ell", 1, s_ell))) return -1;
    self->frames.count = (int32_t)n;
    self->frames.block = PyArray_DATA((PyArrayObject*)self->arrays[P_F_BLOCK]);
    self->frames.body = PyArray_DATA((PyArrayObject*)self->arrays[P_F_BODY]);
    self->frames.frame = PyArray_DATA((PyArrayObject*)self->arrays[P_F_FRAME]);
    self->frames.arm = PyArray_DATA((PyArrayObject*)self->arrays[P_F_ARM]);
    self->frames.ell = self->arrays[P_F_ELL] ? PyArray_DATA((PyArrayObject*)self->arrays[P_F_ELL]) : NULL;
    self->p.frames = &self->frames;
    return 0;
}

PyDoc_STRVAR(problem_set_doc,
             "_set(kinds, mu, mu_spin, mu_roll, r, compliance, body_count, D, inv_mass, inv_mass_rigid, W, frames)\n\n"
             "Fills an empty problem with copies of the arrays (called once, by Problem.__init__).\n"
             "kinds: int32 block kinds; mu, mu_spin, mu_roll: one per block; r: (rows,);\n"
             "compliance: (rows,) or None; D, W: (rows, cols, indptr, indices, data) or None;\n"
             "inv_mass: (body_count, 6, 6) or None; inv_mass_rigid: (body_count, 10) or None;\n"
             "frames: (block, body, frame, arm, ell) or None (with D).");
static PyObject* problem_set(ProblemObject* self, PyObject* args)
{
    PyObject *kinds, *mu, *mu_spin, *mu_roll, *r, *compliance, *D, *inv_mass, *inv_rigid, *W, *frames;
    long body_count;
    if (!PyArg_ParseTuple(args, "OOOOOOlOOOOO", &kinds, &mu, &mu_spin, &mu_roll, &r, &compliance, &body_count, &D,
                          &inv_mass, &inv_rigid, &W, &frames))
        return NULL;
    if (self->ready || self->file || self->blocks) {
        PyErr_SetString(PyExc_RuntimeError, "Problem: already set (a problem is immutable)");
        return NULL;
    }
    const npy_intp any[1] = {-1};
    PyArrayObject* k = pydvi_as_i32(kinds, "kinds", 1, any);
    if (!k) return NULL;
    const npy_intp nb = PyArray_DIM(k, 0);
    const npy_intp shape_b[1] = {nb};
    PyArrayObject *m0 = pydvi_as_f64(mu, "mu", 1, shape_b), *m1 = m0 ? pydvi_as_f64(mu_spin, "mu_spin", 1, shape_b) : NULL,
                  *m2 = m1 ? pydvi_as_f64(mu_roll, "mu_roll", 1, shape_b) : NULL;
    PyObject* ret = NULL;
    if (!m2) goto done;
    self->blocks = PyMem_Calloc((size_t)(nb > 0 ? nb : 1), sizeof *self->blocks);
    if (!self->blocks) {
        PyErr_NoMemory();
        goto done;
    }
    npy_intp rows = 0;
    for (npy_intp b = 0; b < nb; b++) {
        const int32_t kind = ((const int32_t*)PyArray_DATA(k))[b];
        self->blocks[b] = (dvi_ccp_block){(dvi_block_kind)kind, ((const double*)PyArray_DATA(m0))[b],
                                          ((const double*)PyArray_DATA(m1))[b], ((const double*)PyArray_DATA(m2))[b]};
        rows += dvi_block_rows((dvi_block_kind)kind);
    }
    if (nb > INT32_MAX || rows > INT32_MAX) {
        pydvi_raisef(DVI_ERR_INVALID_ARG, "kinds: too many blocks or rows");
        goto done;
    }
    const npy_intp shape_r[1] = {rows};
    self->p.rows = (int32_t)rows;
    self->p.block_count = (int32_t)nb;
    self->p.blocks = self->blocks;
    if (!(self->arrays[P_R] = own_f64(r, "r", 1, shape_r))) goto done;
    self->p.r = PyArray_DATA((PyArrayObject*)self->arrays[P_R]);
    if (compliance != Py_None) {
        if (!(self->arrays[P_COMPLIANCE] = own_f64(compliance, "compliance", 1, shape_r))) goto done;
        self->p.compliance = PyArray_DATA((PyArrayObject*)self->arrays[P_COMPLIANCE]);
    }
    if (D != Py_None) {
        if (body_count < 0 || body_count > INT32_MAX / 6) {
            pydvi_raisef(DVI_ERR_INVALID_ARG, "body_count: out of range (got %ld)", body_count);
            goto done;
        }
        self->p.body_count = (int32_t)body_count;
        if (take_csc(self, D, "D", P_D_COLPTR, &self->D) < 0) goto done;
        self->p.D = &self->D;
        if (inv_mass != Py_None) {
            const npy_intp s[3] = {body_count, 6, 6};
            if (!(self->arrays[P_INV_MASS] = own_f64(inv_mass, "inv_mass", 3, s))) goto done;
            self->p.inv_mass = PyArray_DATA((PyArrayObject*)self->arrays[P_INV_MASS]);
        }
        if (inv_rigid != Py_None) {
            const npy_intp s[2] = {body_count, 10};
            if (!(self->arrays[P_INV_RIGID] = own_f64(inv_rigid, "inv_mass_rigid", 2, s))) goto done;
            self->p.inv_mass_rigid = PyArray_DATA((PyArrayObject*)self->arrays[P_INV_RIGID]);
        }
        if (frames != Py_None && take_frames(self, frames) < 0) goto done;
    }
    if (W != Py_None) {
        if (take_csc(self, W, "W", P_W_COLPTR, &self->W) < 0) goto done;
        self->p.W = &self->W;
    }
    if (problem_validate(self) < 0) goto done;
    ret = Py_NewRef(Py_None);
done:
    Py_DECREF(k);
    Py_XDECREF(m0);
    Py_XDECREF(m1);
    Py_XDECREF(m2);
    return ret;
}

static int problem_check(PyObject* o, const char* name)
{
    if (!PyObject_TypeCheck(o, &ProblemType)) {
        PyErr_Format(PyExc_TypeError, "%s: must be a dvicontact.Problem (got %.100s)", name, Py_TYPE(o)->tp_name);
        return -1;
    }
    if (!((ProblemObject*)o)->ready) {
        pydvi_raisef(DVI_ERR_INVALID_ARG, "%s: an empty Problem (not initialised)", name);
        return -1;
    }
    return 0;
}

/* A read-only array over memory self owns (NULL data: None). */
static PyObject* view(PyObject* owner, const void* data, int ndim, const npy_intp* shape, int type)
{
    if (!data) Py_RETURN_NONE;
    PyObject* a = PyArray_SimpleNewFromData(ndim, (npy_intp*)shape, type, (void*)data);
    if (!a) return NULL;
    if (PyArray_SetBaseObject((PyArrayObject*)a, Py_NewRef(owner)) < 0) {
        Py_DECREF(a);
        return NULL;
    }
    PyArray_CLEARFLAGS((PyArrayObject*)a, NPY_ARRAY_WRITEABLE);
    return a;
}

static PyObject* csc_tuple(PyObject* owner, const dvi_csc* c)
{
    if (!c) Py_RETURN_NONE;
    const npy_intp np1[1] = {(npy_intp)c->cols + 1}, nnz[1] = {c->colptr[c->cols]};
    PyObject* a = view(owner, c->colptr, 1, np1, NPY_INT32);
    PyObject* b = a ? view(owner, c->rowind ? (const void*)c->rowind : (const void*)c, 1, nnz, NPY_INT32) : NULL;
    PyObject* v = b ? view(owner, c->values ? (const void*)c->values : (const void*)c, 1, nnz, NPY_FLOAT64) : NULL;
    if (!v) {
        Py_XDECREF(a);
        Py_XDECREF(b);
        return NULL;
    }
    return Py_BuildValue("(iiNNN)", (int)c->rows, (int)c->cols, a, b, v);
}

static PyObject* get_rows(ProblemObject* self, void* c)
{
    (void)c;
    return PyLong_FromLong(self->p.rows);
}
static PyObject* get_block_count(ProblemObject* self, void* c)
{
    (void)c;
    return PyLong_FromLong(self->p.block_count);
}
static PyObject* get_body_count(ProblemObject* self, void* c)
{
    (void)c;
    return PyLong_FromLong(self->p.D ? self->p.body_count : 0);
}
static PyObject* get_r(ProblemObject* self, void* c)
{
    (void)c;
    const npy_intp n[1] = {self->p.rows};
    return view((PyObject*)self, self->p.r, 1, n, NPY_FLOAT64);
}
static PyObject* get_compliance(ProblemObject* self, void* c)
{
    (void)c;
    const npy_intp n[1] = {self->p.rows};
    return view((PyObject*)self, self->p.compliance, 1, n, NPY_FLOAT64);
}
static PyObject* block_field(ProblemObject* self, size_t offset)
{
    const npy_intp n[1] = {self->p.block_count};
    PyArrayObject* a = pydvi_zeros(1, n);
    if (!a) return NULL;
    double* d = PyArray_DATA(a);
    for (int32_t b = 0; b < self->p.block_count; b++) d[b] = *(const double*)((const char*)&self->p.blocks[b] + offset);
    return (PyObject*)a;
}
static PyObject* get_mu(ProblemObject* self, void* c)
{
    (void)c;
    return block_field(self, offsetof(dvi_ccp_block, mu));
}
static PyObject* get_mu_spin(ProblemObject* self, void* c)
{
    (void)c;
    return block_field(self, offsetof(dvi_ccp_block, mu_spin));
}
static PyObject* get_mu_roll(ProblemObject* self, void* c)
{
    (void)c;
    return block_field(self, offsetof(dvi_ccp_block, mu_roll));
}
static PyObject* get_kinds(ProblemObject* self, void* c)
{
    (void)c;
    PyObject* l = PyList_New(self->p.block_count);
    for (int32_t b = 0; l && b < self->p.block_count; b++) {
        const int k = (int)self->p.blocks[b].kind;
        PyObject* s = PyUnicode_FromString(k >= 1 && k <= 4 ? kind_names[k] : "?");
        if (!s) {
            Py_CLEAR(l);
            break;
        }
        PyList_SET_ITEM(l, b, s);
    }
    return l;
}
static PyObject* get_D_csc(ProblemObject* self, void* c)
{
    (void)c;
    return csc_tuple((PyObject*)self, self->p.D);
}
static PyObject* get_W_csc(ProblemObject* self, void* c)
{
    (void)c;
    return csc_tuple((PyObject*)self, self->p.W);
}
static PyObject* get_inv_mass(ProblemObject* self, void* c)
{
    (void)c;
    const npy_intp n[3] = {self->p.body_count, 6, 6};
    return view((PyObject*)self, self->p.D ? self->p.inv_mass : NULL, 3, n, NPY_FLOAT64);
}
static PyObject* get_inv_mass_rigid(ProblemObject* self, void* c)
{
    (void)c;
    const npy_intp n[2] = {self->p.body_count, 10};
    return view((PyObject*)self, self->p.D ? self->p.inv_mass_rigid : NULL, 2, n, NPY_FLOAT64);
}
static PyObject* get_frames(ProblemObject* self, void* c)
{
    (void)c;
    const dvi_ccp_frames* f = self->p.frames;
    if (!f || !f->frame) Py_RETURN_NONE;
    const npy_intp n = f->count, s1[1] = {n}, s2[2] = {n, 2}, s3[3] = {n, 3, 3}, s4[3] = {n, 2, 3};
    PyObject* o = (PyObject*)self;
    return Py_BuildValue("{s:N,s:N,s:N,s:N,s:N}", "block", view(o, f->block, 1, s1, NPY_INT32), "body",
                         view(o, f->body, 2, s2, NPY_INT32), "frame", view(o, f->frame, 3, s3, NPY_FLOAT64), "arm",
                         view(o, f->arm, 3, s4, NPY_FLOAT64), "ell", view(o, f->ell, 1, s1, NPY_FLOAT64));
}
static PyObject* get_gamma0(ProblemObject* self, void* c)
{
    (void)c;
    const npy_intp n[1] = {self->p.rows};
    return view((PyObject*)self, self->file ? self->file->gamma0 : NULL, 1, n, NPY_FLOAT64);
}
static PyObject* get_solution(ProblemObject* self, void* c)
{
    (void)c;
    const npy_intp n[1] = {self->p.rows};
    return view((PyObject*)self, self->file ? self->file->solution : NULL, 1, n, NPY_FLOAT64);
}
static PyObject* get_fclib(ProblemObject* self, void* c)
{
    (void)c;
    if (!self->has_info) Py_RETURN_NONE;
    const dvi_fclib_info* i = &self->info;
    return Py_BuildValue("{s:s,s:i,s:i,s:i,s:s,s:O,s:d,s:O}", "kind", i->kind == DVI_FCLIB_GLOBAL ? "global" : "local",
                         "contacts", (int)i->contacts, "equalities", (int)i->equalities, "dofs", (int)i->dofs, "title",
                         i->title, "triangular", i->triangular ? Py_True : Py_False, "asymmetry", i->asymmetry,
                         "symmetrized", i->symmetrized ? Py_True : Py_False);
}

static PyGetSetDef problem_getset[] = {
    {"rows", (getter)get_rows, NULL, "Rows of the problem (the sum of the blocks' rows).", NULL},
    {"block_count", (getter)get_block_count, NULL, "Number of blocks.", NULL},
    {"body_count", (getter)get_body_count, NULL, "Bodies of the factor form (D has 6 body_count rows); 0 in the W form.", NULL},
    {"r", (getter)get_r, NULL, "The right-hand side, (rows,) read-only.", NULL},
    {"compliance", (getter)get_compliance, NULL, "The compliance added to the diagonal of N, (rows,) read-only, or None.", NULL},
    {"mu", (getter)get_mu, NULL, "The sliding friction coefficient of each block, (block_count,).", NULL},
    {"mu_spin", (getter)get_mu_spin, NULL, "The spinning coefficient of each block (m), (block_count,).", NULL},
    {"mu_roll", (getter)get_mu_roll, NULL, "The rolling coefficient of each block (m), (block_count,).", NULL},
    {"kinds", (getter)get_kinds, NULL, "The kind of each block: 'bilateral', 'frictionless', 'friction' or 'friction_rolling'.", NULL},
    {"_D_csc", (getter)get_D_csc, NULL, "D as (rows, cols, indptr, indices, data), read-only views, or None.", NULL},
    {"_W_csc", (getter)get_W_csc, NULL, "W as (rows, cols, indptr, indices, data), read-only views, or None.", NULL},
    {"inv_mass", (getter)get_inv_mass, NULL, "M^-1 as (body_count, 6, 6) blocks, read-only, or None.", NULL},
    {"inv_mass_rigid", (getter)get_inv_mass_rigid, NULL, "M^-1 in the rigid form (body_count, 10): 1/m, then the inverse inertia row-major; or None.", NULL},
    {"frames", (getter)get_frames, NULL, "The contacts given by frames, as a dict (block, body, frame, arm, ell; read-only), or None.", NULL},
    {"gamma0", (getter)get_gamma0, NULL, "The initial guess a file holds, (rows,) read-only, or None.", NULL},
    {"solution", (getter)get_solution, NULL, "The reference solution a file holds, (rows,) read-only, or None.", NULL},
    {"fclib", (getter)get_fclib, NULL, "For a problem read from an FCLIB file: a dict (kind, contacts, equalities, dofs, title, triangular, asymmetry, symmetrized); else None.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

/* ---- files ------------------------------------------------------------------ */

static PyObject* problem_from_file(PyObject* cls, dvi_ccp_file* f, const dvi_fclib_info* info)
{
    if (!PyType_Check(cls) || !PyType_IsSubtype((PyTypeObject*)cls, &ProblemType)) {
        dvi_ccp_file_free(f);
        if (info) dvi_fclib_info_clear((dvi_fclib_info*)info);
        PyErr_SetString(PyExc_TypeError, "cls: must be a subclass of _core._Problem");
        return NULL;
    }
    ProblemObject* self = (ProblemObject*)((PyTypeObject*)cls)->tp_alloc((PyTypeObject*)cls, 0);
    if (!self) {
        dvi_ccp_file_free(f);
        if (info) dvi_fclib_info_clear((dvi_fclib_info*)info);
        return NULL;
    }
    self->file = f;
    self->p = f->problem;
    if (info) {
        self->info = *info;
        self->has_info = true;
    }
    self->ready = true;
    return (PyObject*)self;
}

PyDoc_STRVAR(read_fclib_doc, "_read_fclib(cls, path, delassus) -> cls instance\n\n"
                             "An FCLIB file's problem (dvi_fclib_read_ex).");
static PyObject* py_read_fclib(PyObject* mod, PyObject* args)
{
    (void)mod;
    PyObject *cls, *path;
    int delassus = 0;
    if (!PyArg_ParseTuple(args, "OOp", &cls, &path, &delassus)) return NULL;
    PyObject* b = pydvi_path(path, "path");
    if (!b) return NULL;
    dvi_ccp_file* f = NULL;
    dvi_fclib_info info;
    char msg[1024] = "";
    dvi_status st;
    Py_BEGIN_ALLOW_THREADS
    st = dvi_fclib_read_ex(PyBytes_AS_STRING(b), delassus ? DVI_FCLIB_DELASSUS : 0u, &f, &info, msg, sizeof msg);
    Py_END_ALLOW_THREADS
    Py_DECREF(b);
    if (st < 0) return pydvi_raise(st, msg);
    return problem_from_file(cls, f, &info);
}

PyDoc_STRVAR(read_ccp_doc, "_read_ccp(cls, path) -> cls instance\n\n"
                           "A CCP JSON file's problem (dvi_ccp_problem_read_json).");
static PyObject* py_read_ccp(PyObject* mod, PyObject* args)
{
    (void)mod;
    PyObject *cls, *path;
    if (!PyArg_ParseTuple(args, "OO", &cls, &path)) return NULL;
    PyObject* b = pydvi_path(path, "path");
    if (!b) return NULL;
    dvi_ccp_file* f = NULL;
    char msg[1024] = "";
    dvi_status st;
    Py_BEGIN_ALLOW_THREADS
    st = dvi_ccp_problem_read_json(PyBytes_AS_STRING(b), &f, msg, sizeof msg);
    Py_END_ALLOW_THREADS
    Py_DECREF(b);
    if (st < 0) return pydvi_raise(st, msg);
    return problem_from_file(cls, f, NULL);
}

PyDoc_STRVAR(parse_ccp_doc, "_parse_ccp(cls, text) -> cls instance\n\n"
                            "A CCP problem from JSON text, str or bytes (dvi_ccp_problem_parse_json).");
static PyObject* py_parse_ccp(PyObject* mod, PyObject* args)
{
    (void)mod;
    PyObject* cls;
    const char* text;
    Py_ssize_t n;
    if (!PyArg_ParseTuple(args, "Os#", &cls, &text, &n)) return NULL;
    dvi_ccp_file* f = NULL;
    char msg[1024] = "";
    dvi_status st;
    Py_BEGIN_ALLOW_THREADS /* args holds the text */
    st = dvi_ccp_problem_parse_json(text, (size_t)n, &f, msg, sizeof msg);
    Py_END_ALLOW_THREADS
    if (st < 0) return pydvi_raise(st, msg);
    return problem_from_file(cls, f, NULL);
}

/* An optional (rows,) vector argument: NULL data for None. */
static int opt_vector(PyObject* o, const char* name, int32_t rows, PyArrayObject** out)
{
    *out = NULL;
    if (o == Py_None) return 0;
    const npy_intp n[1] = {rows};
    *out = pydvi_as_f64(o, name, 1, n);
    return *out ? 0 : -1;
}
#define DATA_OR_NULL(a) ((a) ? (const double*)PyArray_DATA(a) : NULL)

PyDoc_STRVAR(write_fclib_doc, "_write_fclib(path, solution=None)\n\n"
                              "Writes the problem as a local FCLIB problem (dvi_fclib_write_local).");
static PyObject* problem_write_fclib(ProblemObject* self, PyObject* args, PyObject* kw)
{
    static char* kwlist[] = {"path", "solution", NULL};
    PyObject *path, *solution = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|O", kwlist, &path, &solution)) return NULL;
    if (problem_check((PyObject*)self, "problem") < 0) return NULL;
    PyArrayObject* s;
    if (opt_vector(solution, "solution", self->p.rows, &s) < 0) return NULL;
    PyObject* b = pydvi_path(path, "path");
    if (!b) {
        Py_XDECREF(s);
        return NULL;
    }
    char msg[1024] = "";
    dvi_status st;
    Py_BEGIN_ALLOW_THREADS
    st = dvi_fclib_write_local(&self->p, DATA_OR_NULL(s), PyBytes_AS_STRING(b), msg, sizeof msg);
    Py_END_ALLOW_THREADS
    Py_DECREF(b);
    Py_XDECREF(s);
    if (st < 0) return pydvi_raise(st, msg);
    Py_RETURN_NONE;
}

PyDoc_STRVAR(write_ccp_doc, "_write_ccp(path, gamma0=None, solution=None)\n\n"
                            "Writes the problem as a CCP JSON file (dvi_ccp_problem_write_json).");
static PyObject* problem_write_ccp(ProblemObject* self, PyObject* args, PyObject* kw)
{
    static char* kwlist[] = {"path", "gamma0", "solution", NULL};
    PyObject *path, *gamma0 = Py_None, *solution = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|OO", kwlist, &path, &gamma0, &solution)) return NULL;
    if (problem_check((PyObject*)self, "problem") < 0) return NULL;
    PyArrayObject *g = NULL, *s = NULL;
    if (opt_vector(gamma0, "gamma0", self->p.rows, &g) < 0 || opt_vector(solution, "solution", self->p.rows, &s) < 0) {
        Py_XDECREF(g);
        return NULL;
    }
    char msg[1024] = "";
    dvi_status st;
    if (path == Py_None) { /* into a string */
        char* text = NULL;
        size_t len = 0;
        st = dvi_ccp_problem_format_json(&self->p, DATA_OR_NULL(g), DATA_OR_NULL(s), &text, &len, msg, sizeof msg);
        Py_XDECREF(g);
        Py_XDECREF(s);
        if (st < 0) return pydvi_raise(st, msg);
        PyObject* out = PyUnicode_FromStringAndSize(text, (Py_ssize_t)len);
        free(text);
        return out;
    }
    PyObject* b = pydvi_path(path, "path");
    if (!b) {
        Py_XDECREF(g);
        Py_XDECREF(s);
        return NULL;
    }
    Py_BEGIN_ALLOW_THREADS
    st = dvi_ccp_problem_write_json(&self->p, DATA_OR_NULL(g), DATA_OR_NULL(s), PyBytes_AS_STRING(b), msg, sizeof msg);
    Py_END_ALLOW_THREADS
    Py_DECREF(b);
    Py_XDECREF(g);
    Py_XDECREF(s);
    if (st < 0) return pydvi_raise(st, msg);
    Py_RETURN_NONE;
}

static PyMethodDef problem_methods[] = {
    {"_set", (PyCFunction)problem_set, METH_VARARGS, problem_set_doc},
    {"_write_fclib", (PyCFunction)(void (*)(void))problem_write_fclib, METH_VARARGS | METH_KEYWORDS, write_fclib_doc},
    {"_write_ccp", (PyCFunction)(void (*)(void))problem_write_ccp, METH_VARARGS | METH_KEYWORDS, write_ccp_doc},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject ProblemType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "dvicontact._core._Problem",
    .tp_basicsize = sizeof(ProblemObject),
    .tp_dealloc = (destructor)problem_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "The C side of dvicontact.Problem: a CCP whose arrays the object owns.",
    .tp_new = problem_new,
    .tp_methods = problem_methods,
    .tp_getset = problem_getset,
};

/* ---- settings --------------------------------------------------------------- */

typedef enum { S_DOUBLE, S_INT, S_BOOL, S_NAME } setting_type;

typedef struct {
    const char* group; /* NULL: top level */
    const char* name;
    setting_type type;
    size_t offset;
} setting_row;

#define ROW(g, f, t) {#g, #f, t, offsetof(dvi_solver_settings, g.f)}
static const setting_row settings_table[] = {
    {NULL, "max_iterations", S_INT, offsetof(dvi_solver_settings, max_iterations)},
    {NULL, "tolerance", S_DOUBLE, offsetof(dvi_solver_settings, tolerance)},
    {NULL, "block_tolerance", S_DOUBLE, offsetof(dvi_solver_settings, block_tolerance)},
    {NULL, "warm_start_scale", S_DOUBLE, offsetof(dvi_solver_settings, warm_start_scale)},
    {NULL, "threads", S_INT, offsetof(dvi_solver_settings, threads)},
    {NULL, "exact_sums", S_BOOL, offsetof(dvi_solver_settings, exact_sums)},
    ROW(apgd, restart, S_BOOL),
    ROW(apgd, grow, S_DOUBLE),
    ROW(apgd, shrink, S_DOUBLE),
    ROW(apgd, precondition, S_BOOL),
    ROW(pgs, omega, S_DOUBLE),
    ROW(pgs, symmetric, S_BOOL),
    ROW(pgs, block_iterations, S_INT),
    ROW(jacobi, omega, S_DOUBLE),
    ROW(lemke, friction_directions, S_INT),
    ROW(lemke, max_pivots, S_INT),
    ROW(lemke, max_lcp_size, S_INT),
    ROW(lemke, coulomb, S_BOOL),
    ROW(lemke, orient, S_BOOL),
    ROW(lemke, orient_grid, S_DOUBLE),
    ROW(nsgs, local_iterations, S_INT),
    ROW(nsgs, local_tolerance, S_DOUBLE),
    ROW(nsgs, omega, S_DOUBLE),
    ROW(newton, max_dense_rows, S_INT),
    ROW(newton, line_search, S_BOOL),
    ROW(newton, rho, S_DOUBLE),
    ROW(desaxce, inner, S_NAME),
    ROW(desaxce, inner_iterations, S_INT),
    ROW(desaxce, damping, S_DOUBLE),
};
#undef ROW
enum { SETTINGS_ROWS = sizeof settings_table / sizeof settings_table[0] };

static bool same(const char* a, const char* b)
{
    return (a == NULL && b == NULL) || (a && b && strcmp(a, b) == 0);
}

static bool is_group(const char* name)
{
    for (int i = 0; i < SETTINGS_ROWS; i++)
        if (settings_table[i].group && strcmp(settings_table[i].group, name) == 0) return true;
    return false;
}

/* "max_iterations, tolerance, ..., apgd={...}, ..." or a group's keys */
static void known_text(const char* group, char* buf, size_t n)
{
    size_t k = 0;
    buf[0] = '\0';
    const char* last_group = NULL;
    for (int i = 0; i < SETTINGS_ROWS && k < n; i++) {
        const setting_row* s = &settings_table[i];
        if (group) {
            if (!same(s->group, group)) continue;
            k += (size_t)snprintf(buf + k, n - k, "%s%s", k ? ", " : "", s->name);
        } else if (!s->group) {
            k += (size_t)snprintf(buf + k, n - k, "%s%s", k ? ", " : "", s->name);
        } else if (!same(s->group, last_group)) {
            k += (size_t)snprintf(buf + k, n - k, "%s%s={...}", k ? ", " : "", s->group);
            last_group = s->group;
        }
    }
    if (!group && k < n) snprintf(buf + k, n - k, ", law");
}

static int set_one(dvi_solver_settings* st, const setting_row* s, PyObject* v)
{
    char* at = (char*)st + s->offset;
    char where[64];
    snprintf(where, sizeof where, "settings.%s%s%s", s->group ? s->group : "", s->group ? "." : "", s->name);
    switch (s->type) {
    case S_BOOL:
        if (!PyBool_Check(v)) {
            PyErr_Format(PyExc_TypeError, "%s: must be True or False (got %.100s)", where, Py_TYPE(v)->tp_name);
            return -1;
        }
        *(bool*)at = v == Py_True;
        return 0;
    case S_INT: {
        if (!PyLong_Check(v) || PyBool_Check(v)) {
            PyErr_Format(PyExc_TypeError, "%s: must be an integer (got %.100s)", where, Py_TYPE(v)->tp_name);
            return -1;
        }
        long long x = PyLong_AsLongLong(v);
        if (x == -1 && PyErr_Occurred()) PyErr_Clear(), x = INT64_MAX;
        if (x < INT32_MIN || x > INT32_MAX) {
            pydvi_raisef(DVI_ERR_INVALID_ARG, "%s: must fit in 32 bits", where);
            return -1;
        }
        *(int32_t*)at = (int32_t)x;
        return 0;
    }
    case S_DOUBLE:
        if (!(PyFloat_Check(v) || PyLong_Check(v)) || PyBool_Check(v)) {
            PyErr_Format(PyExc_TypeError, "%s: must be a number (got %.100s)", where, Py_TYPE(v)->tp_name);
            return -1;
        }
        *(double*)at = PyFloat_AsDouble(v);
        return PyErr_Occurred() ? -1 : 0;
    case S_NAME: {
        const char* t = PyUnicode_Check(v) ? PyUnicode_AsUTF8(v) : NULL;
        if (!t) {
            PyErr_Clear();
            PyErr_Format(PyExc_TypeError, "%s: must be a str (got %.100s)", where, Py_TYPE(v)->tp_name);
            return -1;
        }
        if (strlen(t) >= 16) {
            pydvi_raisef(DVI_ERR_INVALID_ARG, "%s: too long (got \"%.40s\")", where, t);
            return -1;
        }
        memset(at, 0, 16);
        memcpy(at, t, strlen(t));
        return 0;
    }
    }
    return 0;
}

static int set_key(dvi_solver_settings* st, const char* group, PyObject* key, PyObject* v)
{
    const char* k = PyUnicode_Check(key) ? PyUnicode_AsUTF8(key) : NULL;
    if (!k) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError, "settings%s%s: keys must be str", group ? "." : "", group ? group : "");
        return -1;
    }
    for (int i = 0; i < SETTINGS_ROWS; i++)
        if (same(settings_table[i].group, group) && strcmp(settings_table[i].name, k) == 0)
            return set_one(st, &settings_table[i], v);
    if (!group && is_group(k)) {
        if (!PyDict_Check(v)) {
            PyErr_Format(PyExc_TypeError, "settings.%s: must be a dict of %s's settings (got %.100s)", k, k,
                         Py_TYPE(v)->tp_name);
            return -1;
        }
        PyObject *kk, *vv;
        Py_ssize_t pos = 0;
        while (PyDict_Next(v, &pos, &kk, &vv))
            if (set_key(st, k, kk, vv) < 0) return -1;
        return 0;
    }
    char known[512];
    known_text(group, known, sizeof known);
    pydvi_raisef(DVI_ERR_INVALID_ARG, "settings.%s%s%s: unknown setting (known: %s)", group ? group : "",
                 group ? "." : "", k, known);
    return -1;
}

static PyObject* settings_dict(const dvi_solver_settings* st)
{
    PyObject* d = PyDict_New();
    for (int i = 0; d && i < SETTINGS_ROWS; i++) {
        const setting_row* s = &settings_table[i];
        const char* at = (const char*)st + s->offset;
        PyObject* v = s->type == S_BOOL     ? PyBool_FromLong(*(const bool*)at)
                      : s->type == S_INT    ? PyLong_FromLong(*(const int32_t*)at)
                      : s->type == S_DOUBLE ? PyFloat_FromDouble(*(const double*)at)
                                            : PyUnicode_FromString(at);
        PyObject* into = d;
        if (v && s->group) {
            into = PyDict_GetItemString(d, s->group);
            if (!into) {
                into = PyDict_New();
                if (!into || PyDict_SetItemString(d, s->group, into) < 0) {
                    Py_XDECREF(into);
                    Py_DECREF(v);
                    Py_CLEAR(d);
                    break;
                }
                Py_DECREF(into); /* d holds it */
            }
        }
        if (!v || PyDict_SetItemString(into, s->name, v) < 0) Py_CLEAR(d);
        Py_XDECREF(v);
    }
    return d;
}

/* ---- Solver ----------------------------------------------------------------- */

typedef struct {
    PyObject_HEAD
    dvi_solver* solver;
    dvi_solver_settings settings; /* as given (warm_start off) */
    bool warm;                    /* the solver's settings have warm_start on */
    bool busy;                    /* a solve runs (in another thread) */
    unsigned long long serial;    /* solves so far */
} SolverObject;

static PyTypeObject SolverType;
static PyTypeObject ResultType;

static void solver_dealloc(SolverObject* self)
{
    dvi_solver_destroy(self->solver);
    Py_TYPE(self)->tp_free((PyObject*)self);
}

/* law="ccp" or "coulomb": the solver's own law, or the setting that makes it
 * solve the other one (dvi_solver_law_setting: "lemke.coulomb"). */
static int set_law(dvi_solver_settings* s, const char* name, PyObject* law)
{
    const char* want = PyUnicode_Check(law) ? PyUnicode_AsUTF8(law) : NULL;
    if (!want) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError, "settings.law: must be \"ccp\" or \"coulomb\" (got %.100s)", Py_TYPE(law)->tp_name);
        return -1;
    }
    dvi_friction_law w;
    if (strcmp(want, dvi_friction_law_string(DVI_LAW_CCP)) == 0)
        w = DVI_LAW_CCP;
    else if (strcmp(want, dvi_friction_law_string(DVI_LAW_COULOMB)) == 0)
        w = DVI_LAW_COULOMB;
    else {
        pydvi_raisef(DVI_ERR_INVALID_ARG, "settings.law: must be \"ccp\" or \"coulomb\" (got \"%.40s\")", want);
        return -1;
    }
    const int32_t i = dvi_solver_index(name);
    const char* setting = dvi_solver_law_setting(i);
    if (setting) { /* "group.field", a bool of the table: true for the other law */
        const char* dot = strchr(setting, '.');
        for (int k = 0; dot && k < SETTINGS_ROWS; k++) {
            const setting_row* r = &settings_table[k];
            if (r->group && r->type == S_BOOL && strlen(r->group) == (size_t)(dot - setting) &&
                strncmp(r->group, setting, (size_t)(dot - setting)) == 0 && strcmp(r->name, dot + 1) == 0)
                *(bool*)((char*)s + r->offset) = w != dvi_solver_law(i);
        }
    }
    if (dvi_solver_law_with(i, s) != w) {
        char names[256] = "";
        size_t n = 0;
        for (int32_t j = 0; j < dvi_solver_count() && n < sizeof names; j++)
            if (dvi_solver_supports(j, w, DVI_BLOCK_FRICTION))
                n += (size_t)snprintf(names + n, sizeof names - n, "%s%s", n ? ", " : "", dvi_solver_name(j));
        pydvi_raisef(DVI_ERR_INVALID_ARG, "settings.law: solver \"%s\" does not solve \"%s\" (solvers that do: %s)",
                     name, want, names);
        return -1;
    }
    return 0;
}

static PyObject* solver_new(PyTypeObject* type, PyObject* args, PyObject* kw)
{
    const char* name = "apgd";
    if (!PyArg_ParseTuple(args, "|s:Solver", &name)) return NULL;
    PyObject* law = NULL; /* borrowed from kw */
    if (kw && PyDict_Size(kw) > 0) {
        PyObject* given = PyDict_GetItemString(kw, "name");
        if (given) {
            if (PyTuple_GET_SIZE(args) > 0) {
                PyErr_SetString(PyExc_TypeError, "Solver: name given twice");
                return NULL;
            }
            name = PyUnicode_Check(given) ? PyUnicode_AsUTF8(given) : NULL;
            if (!name) {
                PyErr_Clear();
                PyErr_Format(PyExc_TypeError, "name: must be a str (got %.100s)", Py_TYPE(given)->tp_name);
                return NULL;
            }
        }
        law = PyDict_GetItemString(kw, "law");
    }
    if (dvi_solver_index(name) < 0) {
        char names[256] = "";
        size_t n = 0;
        for (int32_t i = 0; i < dvi_solver_count() && n < sizeof names; i++)
            n += (size_t)snprintf(names + n, sizeof names - n, "%s%s", i ? ", " : "", dvi_solver_name(i));
        return pydvi_raisef(DVI_ERR_INVALID_ARG, "solver: unknown name \"%s\" (solvers: %s)", name, names);
    }
    dvi_solver_settings s = dvi_default_solver_settings();
    if (kw) {
        PyObject *k, *v;
        Py_ssize_t pos = 0;
        while (PyDict_Next(kw, &pos, &k, &v)) {
            const char* key = PyUnicode_Check(k) ? PyUnicode_AsUTF8(k) : NULL;
            if (key && (strcmp(key, "name") == 0 || strcmp(key, "law") == 0)) continue;
            if (set_key(&s, NULL, k, v) < 0) return NULL;
        }
    }
    if (law && set_law(&s, name, law) < 0) return NULL;
    s.allocator = pydvi_allocator;
    s.warm_start = false;
    dvi_solver* sv = NULL;
    dvi_status st = dvi_solver_create(name, &s, &sv);
    if (st < 0) return pydvi_raise(st, NULL);
    SolverObject* self = (SolverObject*)type->tp_alloc(type, 0);
    if (!self) {
        dvi_solver_destroy(sv);
        return NULL;
    }
    self->solver = sv;
    self->settings = s;
    return (PyObject*)self;
}

typedef struct {
    PyObject_HEAD
    dvi_solve_result res;
    PyObject* gamma;     /* ndarray (rows,) */
    PyObject* problem;   /* the Problem solved */
    PyObject* solver;    /* the Solver, or NULL */
    unsigned long long serial;
    PyObject* u;         /* computed when first asked for */
    PyObject* velocity;
    PyObject* metrics;
} ResultObject;

/* One solve of problem p into gamma (rows, initial guess when warm) and
 * res, with the GIL released; the caller holds the solver (busy). */
static dvi_status run_solve(SolverObject* self, ProblemObject* prob, double* gamma, dvi_solve_result* res)
{
    dvi_status st;
    if (prob->has_info && prob->info.symmetrized) { /* the file's own W, by the splitting of dvi_fclib_solve */
        dvi_solver_settings s = self->settings;
        s.warm_start = self->warm;
        const char* name = dvi_solver_get_name(self->solver);
        Py_BEGIN_ALLOW_THREADS
        st = dvi_fclib_solve(name, &s, &prob->p, &prob->info, gamma, res);
        Py_END_ALLOW_THREADS
    } else {
        Py_BEGIN_ALLOW_THREADS
        st = dvi_solver_solve(self->solver, &prob->p, gamma, res);
        Py_END_ALLOW_THREADS
    }
    return st;
}

/* Turns warm starting on or off (a settings copy: cheap). */
static int set_warm(SolverObject* self, bool warm)
{
    if (self->warm == warm) return 0;
    dvi_solver_settings s = self->settings;
    s.warm_start = warm;
    dvi_status st = dvi_solver_set_settings(self->solver, &s);
    if (st < 0) {
        pydvi_raise(st, NULL);
        return -1;
    }
    self->warm = warm;
    return 0;
}

static int acquire(SolverObject* self)
{
    if (self->busy) {
        PyErr_SetString(PyExc_RuntimeError, "Solver: in use by another thread (a Solver is not thread-safe: use one per thread)");
        return -1;
    }
    self->busy = true;
    return 0;
}

PyDoc_STRVAR(solver_solve_doc,
             "solve(problem, gamma0=None) -> Result\n\n"
             "Solves problem (a dvicontact.Problem) and returns a Result. gamma0, (rows,)\n"
             "floats, is the initial guess (a warm start; the iterative solvers drop a guess\n"
             "worse than zero, Result.warm_start_rejected); None starts from zero. A solve that\n"
             "does not converge is not an error: see Result.status. Raises InputError for a\n"
             "problem the solver refuses (e.g. friction_rolling blocks for nsgs or newton) or a\n"
             "gamma0 of the wrong shape, NumericError for a numeric failure. The GIL is released\n"
             "during the solve; a Solver is not thread-safe (one per thread).");
static PyObject* solver_solve(SolverObject* self, PyObject* args, PyObject* kw)
{
    static char* kwlist[] = {"problem", "gamma0", NULL};
    PyObject *problem, *gamma0 = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|O:solve", kwlist, &problem, &gamma0)) return NULL;
    if (problem_check(problem, "problem") < 0) return NULL;
    ProblemObject* prob = (ProblemObject*)problem;
    const npy_intp n[1] = {prob->p.rows};
    PyArrayObject* g;
    if (gamma0 != Py_None) {
        PyArrayObject* g0 = pydvi_as_f64(gamma0, "gamma0", 1, n);
        if (!g0) return NULL;
        g = (PyArrayObject*)PyArray_NewCopy(g0, NPY_CORDER);
        Py_DECREF(g0);
    } else {
        g = (PyArrayObject*)PyArray_SimpleNew(1, (npy_intp*)n, NPY_FLOAT64);
    }
    if (!g) return NULL;
    ResultObject* r = (ResultObject*)ResultType.tp_alloc(&ResultType, 0);
    if (!r) {
        Py_DECREF(g);
        return NULL;
    }
    r->gamma = (PyObject*)g;
    r->problem = Py_NewRef(problem);
    if (acquire(self) < 0) {
        Py_DECREF(r);
        return NULL;
    }
    if (set_warm(self, gamma0 != Py_None) < 0) {
        self->busy = false;
        Py_DECREF(r);
        return NULL;
    }
    dvi_status st = run_solve(self, prob, PyArray_DATA(g), &r->res);
    self->busy = false;
    self->serial++;
    if (st < 0) {
        pydvi_raise(st, r->res.message);
        Py_DECREF(r);
        return NULL;
    }
    r->solver = Py_NewRef((PyObject*)self);
    r->serial = self->serial;
    return (PyObject*)r;
}

static PyObject* solver_get_name(SolverObject* self, void* c)
{
    (void)c;
    return PyUnicode_FromString(dvi_solver_get_name(self->solver));
}
static PyObject* solver_get_law(SolverObject* self, void* c)
{
    (void)c;
    return PyUnicode_FromString(dvi_friction_law_string(dvi_solver_get_law(self->solver)));
}
static PyObject* solver_get_settings(SolverObject* self, void* c)
{
    (void)c;
    return settings_dict(&self->settings);
}

static PyObject* solver_repr(SolverObject* self)
{
    return PyUnicode_FromFormat("<dvicontact.Solver %s>", dvi_solver_get_name(self->solver));
}

static PyMethodDef solver_methods[] = {
    {"solve", (PyCFunction)(void (*)(void))solver_solve, METH_VARARGS | METH_KEYWORDS, solver_solve_doc},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef solver_getset[] = {
    {"name", (getter)solver_get_name, NULL, "The solver's name (\"apgd\", ...).", NULL},
    {"law", (getter)solver_get_law, NULL, "The law its answers satisfy: \"ccp\" or \"coulomb\".", NULL},
    {"settings", (getter)solver_get_settings, NULL, "Every setting, as a dict (solver-specific ones as nested dicts).", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyDoc_STRVAR(solver_doc,
             "Solver(name=\"apgd\", **settings)\n\n"
             "One of the library's solvers (dvicontact.solvers() lists them) with its settings\n"
             "and workspace, reused from solve to solve. Settings are keywords: the shared ones\n"
             "(tolerance, max_iterations, warm_start_scale, threads) directly, a solver's own as\n"
             "a dict under its name, e.g. Solver(\"pgs\", tolerance=1e-10, pgs={\"omega\": 1.2});\n"
             "law=\"ccp\" or \"coulomb\" picks the law where a setting does (lemke).\n"
             "Raises InputError for an unknown name or setting, or a value out of range (the\n"
             "library's text, \"settings.pgs.omega: must be in (0, 2) (got 2)\"), TypeError for\n"
             "a value of the wrong type. Not thread-safe: one Solver per thread.");

static PyTypeObject SolverType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "dvicontact.Solver",
    .tp_basicsize = sizeof(SolverObject),
    .tp_dealloc = (destructor)solver_dealloc,
    .tp_repr = (reprfunc)solver_repr,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = solver_doc,
    .tp_new = solver_new,
    .tp_methods = solver_methods,
    .tp_getset = solver_getset,
};

/* ---- Result ----------------------------------------------------------------- */

static void result_dealloc(ResultObject* self)
{
    Py_XDECREF(self->gamma);
    Py_XDECREF(self->problem);
    Py_XDECREF(self->solver);
    Py_XDECREF(self->u);
    Py_XDECREF(self->velocity);
    Py_XDECREF(self->metrics);
    Py_TYPE(self)->tp_free((PyObject*)self);
}

static PyObject* metrics_dict(const dvi_ccp_metrics* m)
{
    return Py_BuildValue("{s:d,s:d,s:d,s:d,s:d,s:d,s:d,s:d,s:d,s:d}", "residual", m->residual, "residual_coulomb",
                         m->residual_coulomb, "residual_velocity", m->residual_velocity, "residual_feasibility",
                         m->residual_feasibility, "residual_block", m->residual_block, "residual_block_coulomb",
                         m->residual_block_coulomb, "cone_violation", m->cone_violation, "dual_violation",
                         m->dual_violation, "complementarity", m->complementarity, "objective", m->objective);
}

static PyObject* res_pyramid_edges(ResultObject* s, void* c)
{
    (void)c;
    return PyLong_FromLong((long)s->res.pyramid_edges);
}

static PyObject* res_gamma(ResultObject* s, void* c)
{
    (void)c;
    return Py_NewRef(s->gamma);
}
static PyObject* res_status(ResultObject* s, void* c)
{
    (void)c;
    return PyUnicode_FromString(dvi_solve_status_string(s->res.status));
}
static PyObject* res_converged(ResultObject* s, void* c)
{
    (void)c;
    return PyBool_FromLong(s->res.status == DVI_SOLVE_CONVERGED);
}
static PyObject* res_iterations(ResultObject* s, void* c)
{
    (void)c;
    return PyLong_FromLong(s->res.iterations);
}
static PyObject* res_warm_rejected(ResultObject* s, void* c)
{
    (void)c;
    return PyBool_FromLong(s->res.warm_start_rejected);
}
static PyObject* res_message(ResultObject* s, void* c)
{
    (void)c;
    return PyUnicode_FromString(s->res.message);
}
static PyObject* res_metrics(ResultObject* s, void* c)
{
    (void)c;
    if (!s->metrics) s->metrics = metrics_dict(&s->res.metrics);
    return Py_XNewRef(s->metrics);
}
static PyObject* res_double(ResultObject* s, void* c)
{
    return PyFloat_FromDouble(*(const double*)((const char*)&s->res + (size_t)c));
}

/* dv = M⁻¹ D γ: from the solver's operator while it is the last solve's,
 * else from the problem. */
static int velocity_into(ResultObject* s, double* dv)
{
    ProblemObject* p = (ProblemObject*)s->problem;
    const double* g = PyArray_DATA((PyArrayObject*)s->gamma);
    const SolverObject* sv = (const SolverObject*)s->solver;
    dvi_status st;
    if (sv && !sv->busy && sv->serial == s->serial && !(p->has_info && p->info.symmetrized))
        st = dvi_solver_velocity(sv->solver, g, dv);
    else
        st = dvi_ccp_velocity(&p->p, g, dv);
    if (st < 0) {
        pydvi_raise(st, NULL);
        return -1;
    }
    return 0;
}

static PyObject* res_velocity(ResultObject* s, void* c)
{
    (void)c;
    if (s->velocity) return Py_NewRef(s->velocity);
    ProblemObject* p = (ProblemObject*)s->problem;
    if (!p->p.D) Py_RETURN_NONE;
    const npy_intp n[2] = {p->p.body_count, 6};
    PyArrayObject* a = pydvi_zeros(2, n);
    if (!a) return NULL;
    if (velocity_into(s, PyArray_DATA(a)) < 0) {
        Py_DECREF(a);
        return NULL;
    }
    s->velocity = (PyObject*)a;
    return Py_NewRef(s->velocity);
}

/* u += J dv for the rows of the contacts given by frames (ccp.h,
 * dvi_ccp_frames): rows q < 3 [d_q, ρ × d_q], rows 3..5 ℓ [0, d_(q-3)],
 * plus for body b, minus for body a. */
static void frame_rows(const dvi_ccp_problem* p, const double* dv, double* u)
{
    const dvi_ccp_frames* f = p->frames;
    int32_t b = 0, row = 0;
    for (int32_t c = 0; c < f->count; c++) {
        for (; b < f->block[c]; b++) row += dvi_block_rows(p->blocks[b].kind);
        const int32_t k = dvi_block_rows(p->blocks[b].kind);
        const double ell = f->ell ? f->ell[c] : 1.0;
        for (int side = 0; side < 2; side++) {
            const int32_t body = f->body[2 * c + side];
            if (body < 0) continue;
            const double sign = side ? 1.0 : -1.0, *rho = f->arm + 6 * c + 3 * side, *v = dv + 6 * body;
            for (int32_t q = 0; q < k; q++) {
                const double* d = f->frame + 9 * c + 3 * (q % 3);
                double x;
                if (q < 3) {
                    const double rd[3] = {rho[1] * d[2] - rho[2] * d[1], rho[2] * d[0] - rho[0] * d[2],
                                          rho[0] * d[1] - rho[1] * d[0]};
                    x = d[0] * v[0] + d[1] * v[1] + d[2] * v[2] + rd[0] * v[3] + rd[1] * v[4] + rd[2] * v[5];
                } else {
                    x = ell * (d[0] * v[3] + d[1] * v[4] + d[2] * v[5]);
                }
                u[row + q] += sign * x;
            }
        }
    }
}

static PyObject* res_u(ResultObject* s, void* c)
{
    (void)c;
    if (s->u) return Py_NewRef(s->u);
    const dvi_ccp_problem* p = &((ProblemObject*)s->problem)->p;
    if (p->G || (p->frames && !p->frames->frame)) { /* neither comes from Python or a file */
        PyErr_SetString(PyExc_NotImplementedError, "Result.u: not for problems with G or single-precision frames");
        return NULL;
    }
    const npy_intp n[1] = {p->rows};
    PyArrayObject* a = pydvi_zeros(1, n);
    if (!a) return NULL;
    double* u = PyArray_DATA(a);
    const double* g = PyArray_DATA((PyArrayObject*)s->gamma);
    if (p->D) {
        PyObject* v = res_velocity(s, NULL);
        if (!v) {
            Py_DECREF(a);
            return NULL;
        }
        const double* dv = PyArray_DATA((PyArrayObject*)v);
        for (int32_t j = 0; j < p->D->cols; j++) {
            double x = 0.0;
            for (int32_t q = p->D->colptr[j]; q < p->D->colptr[j + 1]; q++) x += p->D->values[q] * dv[p->D->rowind[q]];
            u[j] = x;
        }
        if (p->frames) frame_rows(p, dv, u);
        Py_DECREF(v);
    } else {
        for (int32_t j = 0; j < p->W->cols; j++)
            for (int32_t q = p->W->colptr[j]; q < p->W->colptr[j + 1]; q++) u[p->W->rowind[q]] += p->W->values[q] * g[j];
    }
    for (int32_t i = 0; i < p->rows; i++) u[i] += (p->compliance ? p->compliance[i] * g[i] : 0.0) + p->r[i];
    s->u = (PyObject*)a;
    return Py_NewRef(s->u);
}

static PyObject* res_solver(ResultObject* s, void* c)
{
    (void)c;
    return s->solver ? PyUnicode_FromString(dvi_solver_get_name(((SolverObject*)s->solver)->solver)) : Py_NewRef(Py_None);
}

#define RES_D(name, field, doc) {name, (getter)res_double, NULL, doc, (void*)offsetof(dvi_solve_result, field)}
static PyGetSetDef result_getset[] = {
    {"gamma", (getter)res_gamma, NULL, "The impulses, (rows,) (N s for the rows of contacts and joints).", NULL},
    {"u", (getter)res_u, NULL, "The constraint velocities u = N gamma + r, (rows,) (m/s); for an FCLIB file whose W is not symmetric, with its symmetric part.", NULL},
    {"velocity", (getter)res_velocity, NULL, "The bodies' velocity change M^-1 D gamma, (body_count, 6) (linear m/s, angular rad/s); None in the W form.", NULL},
    {"status", (getter)res_status, NULL, "How the solve ended: \"converged\", \"max_iterations\", \"diverged\", \"ray\", \"pivot_limit\", \"infeasible\".", NULL},
    {"converged", (getter)res_converged, NULL, "status == \"converged\".", NULL},
    {"iterations", (getter)res_iterations, NULL, "Iterations, sweeps or pivots (lemke) performed.", NULL},
    {"warm_start_rejected", (getter)res_warm_rejected, NULL, "gamma0 was worse than zero and the solve started from zero.", NULL},
    {"message", (getter)res_message, NULL, "Why the solve stopped when it did not converge; \"\" when converged.", NULL},
    {"metrics", (getter)res_metrics, NULL, "Every measure of dvi_ccp_metrics, as a dict.", NULL},
    {"solver", (getter)res_solver, NULL, "The name of the solver that produced it.", NULL},
    RES_D("time", seconds, "Wall time of the solve (s), setup included."),
    RES_D("target_residual", target_residual, "Residual of the problem the solver targets (compared with the tolerance)."),
    RES_D("residual", metrics.residual, "The CCP residual (dimensionless)."),
    RES_D("residual_coulomb", metrics.residual_coulomb, "The Coulomb residual (dimensionless)."),
    RES_D("residual_velocity", metrics.residual_velocity, "The velocity residual (dimensionless)."),
    RES_D("residual_feasibility", metrics.residual_feasibility, "The feasibility residual (dimensionless)."),
    RES_D("block_tolerance", block_tolerance, "The block tolerance the status was judged by: settings' block_tolerance, or its automatic value for this problem, 100 sqrt(blocks) tolerance within [1e-6, 0.1]."),
    {"pyramid_edges", (getter)res_pyramid_edges, NULL, "Which cones the answer is for: 0, the friction cones; k for lemke, whose k-sided pyramids replace them.", NULL},
    RES_D("residual_block", metrics.residual_block, "The block residual: the largest block's own CCP error over its own scale (dimensionless; converged asks it within block_tolerance)."),
    RES_D("residual_block_coulomb", metrics.residual_block_coulomb, "The same with Coulomb's law (the De Saxce velocity)."),
    RES_D("cone_violation", metrics.cone_violation, "max over blocks of |gamma_a - P_K(gamma_a)| (N s)."),
    RES_D("dual_violation", metrics.dual_violation, "max over blocks of |u_a - P_K*(u_a)| (m/s)."),
    RES_D("complementarity", metrics.complementarity, "max over blocks of |<gamma_a, u_a>|."),
    RES_D("objective", metrics.objective, "1/2 gamma' N gamma + r' gamma."),
    {NULL, NULL, NULL, NULL, NULL},
};
#undef RES_D

static PyObject* result_repr(ResultObject* s)
{
    char text[160];
    snprintf(text, sizeof text, "<dvicontact.Result %s, %d iterations, residual %.3e>",
             dvi_solve_status_string(s->res.status), (int)s->res.iterations, s->res.metrics.residual);
    return PyUnicode_FromString(text);
}

static PyTypeObject ResultType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "dvicontact.Result",
    .tp_basicsize = sizeof(ResultObject),
    .tp_dealloc = (destructor)result_dealloc,
    .tp_repr = (reprfunc)result_repr,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Result: what Solver.solve gives (gamma, status, iterations, residuals, u, velocity).\n\n"
              "Its attributes are read-only; u and velocity are computed when first read.",
    .tp_getset = result_getset,
};

/* ---- functions -------------------------------------------------------------- */

PyDoc_STRVAR(evaluate_doc,
             "evaluate(problem, gamma) -> dict\n\n"
             "The measures of a candidate gamma, (rows,), the same for every solver\n"
             "(dvi_ccp_evaluate; for an FCLIB file, against the file's own W): residual,\n"
             "residual_coulomb, residual_velocity, residual_feasibility (dimensionless),\n"
             "cone_violation, dual_violation, complementarity, objective. InputError for a\n"
             "gamma of the wrong shape or not finite.");
static PyObject* py_evaluate(PyObject* mod, PyObject* args)
{
    (void)mod;
    PyObject *problem, *gamma;
    if (!PyArg_ParseTuple(args, "OO:evaluate", &problem, &gamma)) return NULL;
    if (problem_check(problem, "problem") < 0) return NULL;
    ProblemObject* p = (ProblemObject*)problem;
    const npy_intp n[1] = {p->p.rows};
    PyArrayObject* g = pydvi_as_f64(gamma, "gamma", 1, n);
    if (!g) return NULL;
    const double* gd = PyArray_DATA(g);
    for (int32_t i = 0; i < p->p.rows; i++)
        if (!isfinite(gd[i])) {
            Py_DECREF(g);
            return pydvi_raisef(DVI_ERR_INVALID_ARG, "gamma[%d]: must be finite (got %g)", (int)i, gd[i]);
        }
    dvi_ccp_metrics m;
    dvi_status st;
    Py_BEGIN_ALLOW_THREADS
    st = p->has_info ? dvi_fclib_evaluate(&p->p, &p->info, gd, &m) : dvi_ccp_evaluate(&p->p, gd, &m);
    Py_END_ALLOW_THREADS
    Py_DECREF(g);
    if (st < 0) return pydvi_raise(st, NULL);
    return metrics_dict(&m);
}

PyDoc_STRVAR(time_solve_doc,
             "_time_solve(solver, problem, n) -> float\n\n"
             "Seconds per solve of n solves of problem from zero, in a C loop (the overhead\n"
             "benchmark's reference). Ctrl-C stops it after the current solve.");
static PyObject* py_time_solve(PyObject* mod, PyObject* args)
{
    (void)mod;
    PyObject *solver, *problem;
    long n;
    if (!PyArg_ParseTuple(args, "O!Ol:_time_solve", &SolverType, &solver, &problem, &n)) return NULL;
    if (problem_check(problem, "problem") < 0) return NULL;
    if (n < 1) return pydvi_raisef(DVI_ERR_INVALID_ARG, "n: must be >= 1 (got %ld)", n);
    SolverObject* s = (SolverObject*)solver;
    ProblemObject* p = (ProblemObject*)problem;
    const npy_intp m[1] = {p->p.rows};
    PyArrayObject* g = pydvi_zeros(1, m);
    if (!g) return NULL;
    if (acquire(s) < 0) {
        Py_DECREF(g);
        return NULL;
    }
    if (set_warm(s, false) < 0) {
        s->busy = false;
        Py_DECREF(g);
        return NULL;
    }
    dvi_solve_result res;
    struct timespec t0, t1;
    double seconds = 0.0;
    dvi_status st = DVI_OK;
    for (long k = 0; k < n && st >= 0; k++) {
        clock_gettime(CLOCK_MONOTONIC, &t0);
        st = run_solve(s, p, PyArray_DATA(g), &res);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        seconds += (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
        s->serial++;
        if (PyErr_CheckSignals() < 0) {
            s->busy = false;
            Py_DECREF(g);
            return NULL;
        }
    }
    s->busy = false;
    Py_DECREF(g);
    if (st < 0) return pydvi_raise(st, res.message);
    return PyFloat_FromDouble(seconds / (double)n);
}

PyDoc_STRVAR(inv_mass_rigid_doc,
             "_inv_mass_rigid(mass, inertia) -> ndarray (n, 10)\n\n"
             "Rigid bodies' M^-1 blocks in the rigid form (1/m, then the inverse inertia\n"
             "row-major) from mass (n,) (kg) and world-frame inertia (n, 3, 3) (kg m^2),\n"
             "by dvi_inv_mass_block: InputError naming the body for a negative mass or a\n"
             "non-symmetric or singular inertia.");
static PyObject* py_inv_mass_rigid(PyObject* mod, PyObject* args)
{
    (void)mod;
    PyObject *mass, *inertia;
    if (!PyArg_ParseTuple(args, "OO", &mass, &inertia)) return NULL;
    const npy_intp any[1] = {-1};
    PyArrayObject* m = pydvi_as_f64(mass, "mass", 1, any);
    if (!m) return NULL;
    const npy_intp n = PyArray_DIM(m, 0), s3[3] = {n, 3, 3}, s10[2] = {n, 10};
    PyArrayObject* I = pydvi_as_f64(inertia, "inertia", 3, s3);
    PyArrayObject* out = I ? pydvi_zeros(2, s10) : NULL;
    if (!out) {
        Py_DECREF(m);
        Py_XDECREF(I);
        return NULL;
    }
    double* o = PyArray_DATA(out);
    for (npy_intp b = 0; b < n; b++) {
        double blk[36];
        dvi_status st = dvi_inv_mass_block(((const double*)PyArray_DATA(m))[b], (const double*)PyArray_DATA(I) + 9 * b, blk);
        if (st < 0) {
            const char* why = dvi_error_message();
            Py_DECREF(m);
            Py_DECREF(I);
            Py_DECREF(out);
            return pydvi_raisef(st, "bodies[%ld]: %s", (long)b, why && why[0] ? why : dvi_status_string(st));
        }
        o[10 * b] = blk[0];
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) o[10 * b + 1 + 3 * i + j] = blk[6 * (3 + i) + 3 + j];
    }
    Py_DECREF(m);
    Py_DECREF(I);
    return (PyObject*)out;
}

PyDoc_STRVAR(block_rows_doc, "_block_rows() -> dict\n\n"
                             "The block kinds: name -> (value, rows).");
static PyObject* py_block_rows(PyObject* mod, PyObject* noargs)
{
    (void)mod;
    (void)noargs;
    PyObject* d = PyDict_New();
    for (int k = 1; d && k <= 4; k++) {
        PyObject* v = Py_BuildValue("(ii)", k, (int)dvi_block_rows((dvi_block_kind)k));
        if (!v || PyDict_SetItemString(d, kind_names[k], v) < 0) Py_CLEAR(d);
        Py_XDECREF(v);
    }
    return d;
}

static PyMethodDef ccp_methods[] = {
    {"evaluate", py_evaluate, METH_VARARGS, evaluate_doc},
    {"_read_fclib", py_read_fclib, METH_VARARGS, read_fclib_doc},
    {"_read_ccp", py_read_ccp, METH_VARARGS, read_ccp_doc},
    {"_parse_ccp", py_parse_ccp, METH_VARARGS, parse_ccp_doc},
    {"_time_solve", py_time_solve, METH_VARARGS, time_solve_doc},
    {"_inv_mass_rigid", py_inv_mass_rigid, METH_VARARGS, inv_mass_rigid_doc},
    {"_block_rows", py_block_rows, METH_NOARGS, block_rows_doc},
    {NULL, NULL, 0, NULL},
};

int pydvi_ccp_init(PyObject* m)
{
    if (PyType_Ready(&ProblemType) < 0 || PyType_Ready(&SolverType) < 0 || PyType_Ready(&ResultType) < 0) return -1;
    if (PyModule_AddObjectRef(m, "_Problem", (PyObject*)&ProblemType) < 0 ||
        PyModule_AddObjectRef(m, "Solver", (PyObject*)&SolverType) < 0 ||
        PyModule_AddObjectRef(m, "Result", (PyObject*)&ResultType) < 0)
        return -1;
    return PyModule_AddFunctions(m, ccp_methods);
}
