/* dvicontact — internal: lists of solvers made from the registry
 * (src/ccp/registry.c), for the messages of the driver, the world step and
 * the scene reader. */
#ifndef DVI_CCP_REGISTRY_H
#define DVI_CCP_REGISTRY_H

#include "dvi/ccp.h"

#include <stdbool.h>
#include <stddef.h>

/* Writes into out the solvers that solve `law` on problems holding blocks of
 * every kind of `kinds` (bits 1 << dvi_block_kind), in registry order, those
 * whose law a setting picks last, named with it: "desaxce, or lemke with
 * lemke.coulomb" (as_option: "lemke with --lemke-coulomb", the setting as
 * the option of dvi run and dvi check). Returns how many. */
int32_t ccp_solver_names_for(dvi_friction_law law, uint32_t kinds, bool as_option, char* out, size_t size);

/* The names of the solvers that take a problem split over processes
 * (dvi_ccp_shared), ", " between them; returns how many. */
int32_t ccp_solver_shared_names(char* out, size_t size);
/* Short name of a block kind ("friction_rolling"), as CCP files spell it. */
const char* ccp_block_kind_name(dvi_block_kind kind);

#endif /* DVI_CCP_REGISTRY_H */
