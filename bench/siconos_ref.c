/* siconos_ref — Siconos Numerics' fc3d solvers for bench_fclib (siconos_ref.h).
 *
 * Siconos's FCLIB reader turns W into a sparse-block matrix of 3×3 blocks
 * (SBM_from_csparse); the same is done here from a triplet copy of W, so its
 * solvers see the storage they see on FCLIB files. Every solve gets a fresh
 * problem: Siconos keeps factorisations and converted storages inside a
 * NumericsMatrix, and a repeated solve must not start from them. */
#include "siconos_ref.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <FrictionContactProblem.h>
#include <Friction_cst.h>
#include <NonSmoothDrivers.h>
#include <NumericsMatrix.h>
#include <NumericsVerbose.h>
#include <SolverOptions.h>
#include <SparseBlockMatrix.h>

static const struct {
    const char* name;
    int id;
} solvers[REF_SOLVER_COUNT] = {
    {"siconos:nsn_ac", SICONOS_FRICTION_3D_NSN_AC},
    {"siconos:prox", SICONOS_FRICTION_3D_PROX},
    {"siconos:nsgs", SICONOS_FRICTION_3D_NSGS},
};

const char* ref_solver_name(int k)
{
    return k >= 0 && k < REF_SOLVER_COUNT ? solvers[k].name : NULL;
}

int ref_solver_find(const char* name)
{
    for (int k = 0; name && k < REF_SOLVER_COUNT; k++)
        if (strcmp(solvers[k].name, name) == 0) return k;
    return -1;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Siconos's problem from W (CSC), q and μ (copied: the problem owns them). */
static FrictionContactProblem* make_problem(const dvi_csc* W, const double* q, const double* mu, int32_t nc)
{
    int m = 3 * nc;
    NumericsMatrix* T = NM_create(NM_SPARSE, m, m);
    if (!T) return NULL;
    NM_triplet_alloc(T, W->colptr[W->cols] > 0 ? W->colptr[W->cols] : 1);
    for (int32_t j = 0; j < W->cols; j++)
        for (int32_t k = W->colptr[j]; k < W->colptr[j + 1]; k++) NM_entry(T, W->rowind[k], j, W->values[k]);
    NumericsMatrix* M = NM_create(NM_SPARSE_BLOCK, m, m);
    double* qc = malloc((size_t)m * sizeof *qc);
    double* muc = malloc((size_t)nc * sizeof *muc);
    if (!M || !qc || !muc) {
        NM_free(T);
        if (M) NM_free(M);
        free(qc);
        free(muc);
        return NULL;
    }
    M->matrix1->block = NULL; /* as Siconos's own FCLIB reader does before the conversion */
    M->matrix1->index1_data = NULL;
    M->matrix1->index2_data = NULL;
    SBM_from_csparse(3, NM_triplet(T), M->matrix1);
    NM_free(T);
    memcpy(qc, q, (size_t)m * sizeof *qc);
    memcpy(muc, mu, (size_t)nc * sizeof *muc);
    return frictionContactProblem_new_with_data(3, nc, M, qc, muc);
}

bool ref_solve(int k, const dvi_csc* W, const double* q, const double* mu, int32_t nc, double tolerance,
               int32_t max_iterations, double* r, double* u, ref_result* out)
{
    if (k < 0 || k >= REF_SOLVER_COUNT || !W || !q || !mu || nc <= 0 || !r || !u || !out) return false;
    numerics_set_verbose(0);
    FrictionContactProblem* P = make_problem(W, q, mu, nc);
    SolverOptions* opt = P ? solver_options_create(solvers[k].id) : NULL;
    if (!P || !opt) {
        if (P) frictionContactProblem_free(P);
        return false;
    }
    opt->iparam[SICONOS_IPARAM_MAX_ITER] = max_iterations;
    opt->dparam[SICONOS_DPARAM_TOL] = tolerance;
    memset(r, 0, 3 * (size_t)nc * sizeof *r);
    memset(u, 0, 3 * (size_t)nc * sizeof *u);
    double t0 = now();
    int info = fc3d_driver(P, r, u, opt);
    out->seconds = now() - t0;
    out->info = info;
    out->iterations = opt->iparam[SICONOS_IPARAM_ITER_DONE];
    out->error = opt->dparam[SICONOS_DPARAM_RESIDU];
    solver_options_delete(opt);
    frictionContactProblem_free(P);
    return true;
}
