/* dvicontact — the strings of a solve's status (<dvi/ccp.h>). The library's
 * status strings and its version are in base/status.c. */
#include "dvi/ccp.h"

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
