/* dvicontact — the table of built-in solvers. A new solver is one file in
 * src/ccp/ defining a const ccp_solver_impl, plus its row here (its extern
 * and its line in the table); what it solves (its law, the law its setting
 * picks, the block kinds it refuses), whether it sweeps the blocks in
 * order, its own state and the solver it nests are in that one definition.
 * Every list of solvers for a law — the messages of the scene reader, of
 * the world step and of the driver, the help of `dvi` — is made from it,
 * and the layers above ask these queries, never a solver's name. */
#include "ccp_work.h"
#include "registry.h"

#include <stdio.h>
#include <string.h>

/* each defined in its own file, src/ccp/NAME.c */
extern const ccp_solver_impl ccp_solver_apgd;
extern const ccp_solver_impl ccp_solver_pgs;
extern const ccp_solver_impl ccp_solver_jacobi;
extern const ccp_solver_impl ccp_solver_lemke;
extern const ccp_solver_impl ccp_solver_nsgs;
extern const ccp_solver_impl ccp_solver_newton;
extern const ccp_solver_impl ccp_solver_desaxce;

static const ccp_solver_impl* const registry[] = {
    &ccp_solver_apgd,
    &ccp_solver_pgs,
    &ccp_solver_jacobi,
    &ccp_solver_lemke,
    &ccp_solver_nsgs,
    &ccp_solver_newton,
    &ccp_solver_desaxce,
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

int32_t dvi_solver_index(const char* name)
{
    for (int32_t i = 0; name && i < REGISTRY_COUNT; i++)
        if (strcmp(registry[i]->name, name) == 0) return i;
    return -1;
}

dvi_friction_law dvi_solver_law_with(int32_t index, const dvi_solver_settings* settings)
{
    if (index < 0 || index >= REGISTRY_COUNT) return DVI_LAW_CCP;
    const ccp_solver_impl* s = registry[index];
    return s->law_under && settings ? s->law_under(settings) : s->law;
}

const char* dvi_solver_law_setting(int32_t index)
{
    return index >= 0 && index < REGISTRY_COUNT ? registry[index]->law_setting : NULL;
}

bool dvi_solver_sweeps_in_order(int32_t index)
{
    return index >= 0 && index < REGISTRY_COUNT && registry[index]->sweeps_in_order;
}

bool dvi_solver_supports(int32_t index, dvi_friction_law law, dvi_block_kind kind)
{
    if (index < 0 || index >= REGISTRY_COUNT || !dvi_friction_law_string(law) || dvi_block_rows(kind) == 0)
        return false;
    const ccp_solver_impl* s = registry[index];
    if (s->law != law && !s->law_setting) return false;
    return (s->refused_kinds & (1u << kind)) == 0;
}

const char* dvi_friction_law_string(dvi_friction_law law)
{
    switch (law) {
    case DVI_LAW_CCP: return "ccp";
    case DVI_LAW_COULOMB: return "coulomb";
    }
    return NULL;
}

const char* ccp_block_kind_name(dvi_block_kind kind)
{
    switch (kind) {
    case DVI_BLOCK_BILATERAL: return "bilateral";
    case DVI_BLOCK_FRICTIONLESS: return "frictionless";
    case DVI_BLOCK_FRICTION: return "friction";
    case DVI_BLOCK_FRICTION_ROLLING: return "friction_rolling";
    }
    return "unknown";
}

static bool solves_all(const ccp_solver_impl* s, dvi_friction_law law, uint32_t kinds)
{
    return (s->law == law || s->law_setting) && (s->refused_kinds & kinds) == 0;
}

int32_t ccp_solver_names_for(dvi_friction_law law, uint32_t kinds, bool as_option, char* out, size_t size)
{
    int32_t pick[REGISTRY_COUNT], n = 0;
    for (int pass = 0; pass < 2; pass++) /* the solvers of the law without a setting first */
        for (int32_t i = 0; i < REGISTRY_COUNT; i++)
            if ((registry[i]->law_setting != NULL) == (pass == 1) && solves_all(registry[i], law, kinds)) pick[n++] = i;
    size_t len = 0;
    if (size > 0) out[0] = '\0';
    for (int32_t j = 0; j < n && len < size; j++) {
        const ccp_solver_impl* s = registry[pick[j]];
        const char* sep = j == 0 ? "" : j + 1 < n ? ", " : n == 2 ? " or " : ", or ";
        int w;
        if (!s->law_setting) {
            w = snprintf(out + len, size - len, "%s%s", sep, s->name);
        } else {
            /* "lemke.coulomb" as an option of dvi run: "--lemke-coulomb" */
            char option[64];
            snprintf(option, sizeof option, "--%s", s->law_setting);
            for (char* c = option + 2; *c; c++)
                if (*c == '.' || *c == '_') *c = '-';
            w = snprintf(out + len, size - len, "%s%s %s %s", sep, s->name, s->law == law ? "without" : "with",
                         as_option && s->law != law ? option : s->law_setting);
        }
        if (w < 0) break;
        len += (size_t)w;
    }
    return n;
}

int32_t ccp_solver_shared_names(char* out, size_t size)
{
    int32_t n = 0;
    size_t len = 0;
    if (size > 0) out[0] = '\0';
    for (int32_t i = 0; i < REGISTRY_COUNT; i++) {
        if (!registry[i]->shared) continue;
        int w = len < size ? snprintf(out + len, size - len, "%s%s", n ? ", " : "", registry[i]->name) : -1;
        if (w > 0) len += (size_t)w;
        n++;
    }
    return n;
}

const ccp_solver_impl* ccp_solver_find(const char* name)
{
    const int32_t i = dvi_solver_index(name);
    return i >= 0 ? registry[i] : NULL;
}

const ccp_solver_impl* ccp_solver_row(int32_t index)
{
    return index >= 0 && index < REGISTRY_COUNT ? registry[index] : NULL;
}
