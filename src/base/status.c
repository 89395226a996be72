/* dvicontact — the status strings and the version (<dvi/base.h>). In the
 * base layer, below every layer that reports a status (error.c uses them). */
#include "dvi/base.h"

const char* dvi_status_string(dvi_status s)
{
    switch (s) {
    case DVI_OK: return "ok";
    case DVI_NOT_CONVERGED: return "not converged";
    case DVI_ABORTED: return "aborted";
    case DVI_ERR_NOMEM: return "out of memory";
    case DVI_ERR_INVALID_ARG: return "invalid argument";
    case DVI_ERR_SINGULAR: return "singular matrix";
    case DVI_ERR_NUMERIC: return "non-finite number in a computation";
    case DVI_ERR_UNSUPPORTED: return "unsupported";
    case DVI_ERR_PARSE: return "parse error";
    case DVI_ERR_IO: return "input/output error";
    }
    return "unknown status";
}

const char* dvi_version_string(void)
{
    return DVI_VERSION_STRING;
}
