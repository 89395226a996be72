/* dvicontact — fuzz harness: the CCP JSON reader
 * (dvi_ccp_problem_parse_json), and for small valid problems a short solve
 * by APGD and by PGS. */
#include "fuzz_common.h"

#include "dvi/io.h"

#include <math.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    dvi_ccp_file* f = NULL;
    char msg[512] = "";
    dvi_status st = dvi_ccp_problem_parse_json((const char*)data, size, &f, msg, sizeof msg);
    FUZZ_CHECK((st == DVI_OK) == (f != NULL));
    FUZZ_CHECK(st == DVI_OK || msg[0] != '\0');
    if (!f) return 0;
    const dvi_ccp_problem* p = &f->problem;
    if (p->rows <= 300) {
        double* g = calloc((size_t)p->rows + 1, sizeof(double));
        FUZZ_CHECK(g != NULL);
        static const char* const solvers[2] = {"apgd", "pgs"};
        for (int k = 0; k < 2; k++) {
            dvi_solver_settings s = dvi_default_solver_settings();
            s.max_iterations = 50;
            dvi_solve_result res;
            memset(&res, 0, sizeof res);
            memset(g, 0, ((size_t)p->rows + 1) * sizeof(double));
            dvi_status ss = dvi_ccp_solve(p, solvers[k], &s, g, &res);
            /* a converged solve has a residual within the tolerance */
            FUZZ_CHECK(ss != DVI_OK || (res.status == DVI_SOLVE_CONVERGED && res.target_residual <= s.tolerance));
        }
        free(g);
    }
    dvi_ccp_file_free(f);
    return 0;
}
