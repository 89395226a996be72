/* dvicontact — internal: what the world step asks of a solver beyond the
 * public API (src/ccp/driver.c). */
#ifndef DVI_CCP_DRIVER_H
#define DVI_CCP_DRIVER_H

#include "dvi/ccp.h"

/* The solver's later solves run on at most `limit` threads (≤ 0: on those
 * of its settings). The bits do not change: the solvers give the same bits
 * for any thread count. Ignores NULL. */
void ccp_solver_limit_threads(dvi_solver* solver, int limit);

#endif /* DVI_CCP_DRIVER_H */
