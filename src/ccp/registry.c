/* dvicontact — the table of built-in solvers. A new solver is one file in
 * src/ccp/ defining a const dvi_solver_impl, plus one line here. */
#include "ccp_work.h"

#include <string.h>

static const dvi_solver_impl* const registry[] = {
    &dvi_solver_apgd,
    &dvi_solver_pgs,
    &dvi_solver_jacobi,
    &dvi_solver_lemke,
    &dvi_solver_nsgs,
    &dvi_solver_newton,
    &dvi_solver_desaxce,
};

#define REGISTRY_COUNT ((int32_t)(sizeof registry / sizeof registry[0]))

int32_t dvi_solver_count(void)
{
    return REGISTRY_COUNT;
}

const char* dvi_solver_name(int32_t index)
{
    return index >= 0 && index < REGISTRY_COUNT ? registry[index]->name : NULL;
}

const char* dvi_solver_summary(int32_t index)
{
    return index >= 0 && index < REGISTRY_COUNT ? registry[index]->summary : NULL;
}

dvi_friction_law dvi_solver_law(int32_t index)
{
    return index >= 0 && index < REGISTRY_COUNT ? registry[index]->law : DVI_LAW_CCP;
}

const char* dvi_friction_law_string(dvi_friction_law law)
{
    switch (law) {
    case DVI_LAW_CCP: return "ccp";
    case DVI_LAW_COULOMB: return "coulomb";
    }
    return NULL;
}

const dvi_solver_impl* dvi_solver_find(const char* name)
{
    if (!name) return NULL;
    for (int32_t i = 0; i < REGISTRY_COUNT; i++)
        if (strcmp(registry[i]->name, name) == 0) return registry[i];
    return NULL;
}
