/* dvicontact — status strings and version. */
#include "dvi/base.h"
#include "dvi/ccp.h"

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

const char* dvi_solve_status_string(dvi_solve_status s)
{
    switch (s) {
    case DVI_SOLVE_CONVERGED: return "converged";
    case DVI_SOLVE_MAX_ITERATIONS: return "max_iterations";
    case DVI_SOLVE_DIVERGED: return "diverged";
    case DVI_SOLVE_INFEASIBLE: return "infeasible";
    case DVI_SOLVE_BAD_INPUT: return "bad_input";
    case DVI_SOLVE_RAY: return "ray";
    case DVI_SOLVE_PIVOT_LIMIT: return "pivot_limit";
    }
    return "unknown";
}

const char* dvi_version_string(void)
{
    return DVI_VERSION_STRING;
}
