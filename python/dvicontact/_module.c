/* dvicontact._core: the C extension of the Python package dvicontact.
 *
 * One module made of parts; each part's init adds its types and functions
 * (_common.h). A new part is one row of this table and one file in
 * meson.build. */
#define PYDVI_IMPORT_ARRAY
#include "_common.h"

static int (*const parts[])(PyObject*) = {
    pydvi_common_init,
    pydvi_ccp_init,
    pydvi_model_init,
    pydvi_world_init,
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    "dvicontact._core",
    "The C extension of dvicontact: the library's solvers, scenes and worlds (use the package dvicontact).",
    -1,
    NULL,
    NULL,
    NULL,
    NULL,
    NULL,
};

PyMODINIT_FUNC PyInit__core(void); /* the one exported name */
PyMODINIT_FUNC PyInit__core(void)
{
    import_array();
    PyObject* m = PyModule_Create(&module_def);
    if (!m) return NULL;
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
        if (parts[i](m) < 0) {
            Py_DECREF(m);
            return NULL;
        }
    return m;
}
