/* dvicontact's Python extension: what its parts share.
 *
 * The extension is one module, dvicontact._core, made of parts: each part
 * is a .c file with an init function that adds its types and functions to
 * the module (the table in _module.c). Every part includes this header; it
 * imports NumPy's C API once, in _module.c (PY_ARRAY_UNIQUE_SYMBOL). */
#ifndef PYDVI_COMMON_H
#define PYDVI_COMMON_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#define PY_ARRAY_UNIQUE_SYMBOL pydvi_ARRAY_API
#ifndef PYDVI_IMPORT_ARRAY
#define NO_IMPORT_ARRAY
#endif
#include <numpy/arrayobject.h>

#include <dvi/dvi.h>

/* The module's exception classes (created by pydvi_common_init):
 *   dvicontact.Error        the base of all; carries .status (the status's
 *                           name, e.g. "invalid_arg") and the library's text
 *   dvicontact.InputError   (Error, ValueError): bad input (DVI_ERR_INVALID_ARG,
 *                           DVI_ERR_PARSE, DVI_ERR_UNSUPPORTED)
 *   dvicontact.NumericError (Error, ArithmeticError): DVI_ERR_SINGULAR,
 *                           DVI_ERR_NUMERIC
 *   dvicontact.FileError    (Error, OSError): DVI_ERR_IO
 * DVI_ERR_NOMEM raises MemoryError. */
extern PyObject* pydvi_Error;
extern PyObject* pydvi_InputError;
extern PyObject* pydvi_NumericError;
extern PyObject* pydvi_FileError;

/* Raises the exception of status st (< 0) with message msg (NULL or "":
 * the calling thread's dvi_error_message(), else the status's string) and
 * returns NULL. Call it on the thread that made the failing call, with the
 * GIL held. */
PyObject* pydvi_raise(dvi_status st, const char* msg);

/* The same, with a message formatted here (for errors the extension finds
 * itself, such as an array of the wrong shape). */
PyObject* pydvi_raisef(dvi_status st, const char* fmt, ...);

/* The short name of a status ("ok", "not_converged", "invalid_arg", ...). */
const char* pydvi_status_name(dvi_status st);

/* obj as a C-contiguous, aligned float64 array of ndim dimensions whose
 * extents match shape (an extent < 0 matches any), converted (copied) when
 * it is not one already. name names the argument in the errors: TypeError
 * for a dtype that is not real numbers (bool, complex, object, strings),
 * dvicontact.InputError for a wrong number of dimensions or extent
 * ("b: must have shape (12,) (got (3, 4))"). A new reference, or NULL with
 * the exception set. */
PyArrayObject* pydvi_as_f64(PyObject* obj, const char* name, int ndim, const npy_intp* shape);

/* The same for int32 indices (integer dtypes only; values out of int32's
 * range are an InputError). */
PyArrayObject* pydvi_as_i32(PyObject* obj, const char* name, int ndim, const npy_intp* shape);

/* A new float64 array of the given shape, zero-filled (NULL and MemoryError
 * on failure). */
PyArrayObject* pydvi_zeros(int ndim, const npy_intp* shape);

/* A path argument (str or os.PathLike) as UTF-8 bytes (a new reference; use
 * PyBytes_AS_STRING), or NULL with TypeError set. */
PyObject* pydvi_path(PyObject* obj, const char* name);

/* The allocator every object the extension creates is given (where the C
 * API takes one: dvi_solver_settings.allocator, dvi_world_def.allocator):
 * libc's, counting the blocks it holds, so that a test can see that a
 * create/destroy cycle gives back every block (_core._live_blocks()). */
extern const dvi_allocator pydvi_allocator;

/* The last step's contacts of world w as a dict of new arrays: body_a,
 * body_b (int32 (k,), body indices in creation order; the normal points
 * from a to b), point (k, 3), normal (k, 3), distance (k,), force (k, 3) on
 * body_b (dvi_world_get_contact). NULL with the exception set. */
PyObject* pydvi_contacts(const dvi_world* w);

/* A step's statistics (dvi_world_get_stats) as a dict, every field of
 * dvi_step_stats under its own name (solver_status as its string). */
PyObject* pydvi_step_stats(const dvi_step_stats* s);

/* Part initialisers: each adds its types and functions to module m and
 * returns 0, or -1 with an exception set (the table in _module.c). */
int pydvi_common_init(PyObject* m);
int pydvi_ccp_init(PyObject* m); /* _ccp.c: problems and solvers */
int pydvi_model_init(PyObject* m); /* _model.c: scenes and models */
int pydvi_world_init(PyObject* m); /* _world.c: World, Body, Joint */

#endif /* PYDVI_COMMON_H */
