/* siconos_ref — the reference library of bench_fclib: Siconos Numerics'
 * solvers of the local 3D frictional-contact problem (Coulomb's law), fed the
 * W, q and μ that dvi_fclib_read_ex gives, so that bench_fclib can judge both
 * libraries' answers with the same residual (dvi_fclib_evaluate).
 *
 * Built only when Siconos Numerics is found (bench/meson.build; Debian
 * libsiconos-numerics-dev); bench_fclib then defines DVI_HAVE_SICONOS. */
#ifndef SICONOS_REF_H
#define SICONOS_REF_H

#include "dvi/ccp.h"

#include <stdbool.h>
#include <stdint.h>

/* The reference solvers, in the order bench_fclib runs them. */
#define REF_SOLVER_COUNT 3

/* "siconos:nsn_ac" (semismooth Newton on Alart–Curnier), "siconos:prox"
 * (proximal point around NSN_AC), "siconos:nsgs" (nonsmooth Gauss–Seidel);
 * NULL outside [0, REF_SOLVER_COUNT). */
const char* ref_solver_name(int k);

/* The index of a name of ref_solver_name, or −1. */
int ref_solver_find(const char* name);

typedef struct ref_result {
    int32_t iterations; /* Siconos's count (iparam[SICONOS_IPARAM_ITER_DONE]) */
    double error;       /* Siconos's own error at the end (dparam[SICONOS_DPARAM_RESIDU]) */
    int info;           /* the driver's return: 0 when Siconos reports convergence */
    double seconds;     /* wall time of the driver call (its own setup included) */
} ref_result;

/* Solves the problem u = W r + q, r ∈ K_μ, Coulomb's law (nc contacts, W
 * 3nc × 3nc, FCLIB's row order n, t1, t2 per contact) with reference solver
 * k from r = 0, at most max_iterations iterations, tolerance on Siconos's
 * own error. Siconos's problem (its sparse-block matrix, as its FCLIB reader
 * builds it) is made before the clock starts and freed after it stops.
 * Writes r and u [3nc]. Returns false (with nothing written) when memory
 * runs out or k is out of range. */
bool ref_solve(int k, const dvi_csc* W, const double* q, const double* mu, int32_t nc, double tolerance,
               int32_t max_iterations, double* r, double* u, ref_result* out);

#endif
