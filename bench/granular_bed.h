/* granular_bed — spheres settling in a box, with the contact formulation
 * (DVI or DEM) as a parameter. Used by bench/bench_dvi_vs_dem.c,
 * examples/sphere_pile.h and the tests through the static library of
 * bench/meson.build (granular_bed_dep). Public API only (dvi/world.h).
 *
 * Scene: the sphere pile, the one copy of its builder: examples/sphere_pile.h
 * (the example and tests/test_pile.c, tests/test_solvers.c) builds its pile
 * with gbed_create and the gbed_default_config settings; here the
 * formulation, the DEM model and the material stiffness can be chosen too,
 * and a bed can be rebuilt from given positions (a packed state):
 *   - N spheres of radius r = 0.02 m, density 2500 kg/m³ (glass),
 *     friction 0.4, spinning friction 2e-5 m, no rolling friction;
 *   - on a loose cubic lattice of spacing 2.5 r with offsets ±0.25 r per
 *     axis, lowest layer 1.5 r above the floor;
 *   - a box: a fixed body with a plane (z ≥ 0 free) and four wall boxes
 *     0.1 m thick, inner faces at x, y = ±L/2, L = d·round(∛N) by default.
 * DEM materials add Young's modulus E, Poisson ratio 0.3 and the
 * restitution e; DEM has no spinning friction (docs/dem.md), so that
 * setting acts in DVI runs only. All shapes (spheres, floor, walls) carry
 * the same material.
 *
 * Bed height: 2·mean(z) of the sphere centres, as in sphere_pile.h. */
#ifndef GRANULAR_BED_H
#define GRANULAR_BED_H

#include <dvi/world.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct gbed_config {
    int spheres;               /* N */
    double radius;             /* m */
    double density;            /* kg/m³ */
    double friction;           /* μ of every shape */
    double spinning_friction;  /* m (DVI only) */
    double rolling_friction;   /* m (both; default 0, as sphere_pile.h) */
    double box_side;           /* L, inner side (m); 0: d·round(∛N) */
    double wall_height;        /* m */
    uint64_t seed;
    dvi_method method;         /* DVI_METHOD_DVI or DVI_METHOD_DEM */
    /* DVI */
    const char* solver;        /* CCP solver name */
    double tolerance;          /* 0: the world's default */
    int max_iterations;        /* 0: the world's default */
    double envelope;           /* collision envelope (m); 0: the world's default */
    /* DEM */
    dvi_dem_normal_model dem_model;
    double young_modulus;      /* Pa */
    double poisson_ratio;
    double restitution;        /* DEM restitution (DVI runs use 0, as sphere_pile.h) */
} gbed_config;

/* The sphere_pile.h defaults (pile_default_config): DVI, APGD, tolerance
 * 1e-6, spinning friction 2e-5 m; DEM fields E = 1e8 Pa, ν = 0.3, e = 0.2,
 * Hertz. */
gbed_config gbed_default_config(int spheres);

/* The box's inner side L: box_side, or d·round(∛N) when that is 0. */
double gbed_side(const gbed_config* c);

/* The bed-height comparison of DVI and DEM (bench_dvi_vs_dem --pile N,
 * tests/test_dvi_vs_dem.c). DVI: the sphere_pile.h settings (APGD, tolerance
 * 1e-6, step 2 ms, spinning friction 2e-5 m) with at most 500 iterations per
 * step, as tests/test_pile.c. DEM: Hertz, E = 1e8 Pa, ν = 0.3, restitution 0
 * as the DVI pile (the library takes it as 0.01), the same friction 0.4;
 * step 2e-5 s (docs/dvi-vs-dem.md: at 5e-5 s the overdamped contacts keep
 * the bed shaking and it creeps 3% lower). Settled: KE/peak below 1e-4 for
 * 0.1 s (DVI: with converged solves), or 3 s. */
#define GBED_PILE_DVI_DT 2e-3
#define GBED_PILE_DEM_DT 2e-5
#define GBED_PILE_RATIO 1e-4
#define GBED_PILE_HOLD 0.1
#define GBED_PILE_SECONDS 3.0
gbed_config gbed_pile_dvi_config(int spheres);
gbed_config gbed_pile_dem_config(int spheres);

typedef struct gbed {
    gbed_config cfg;
    dvi_world* world;
    dvi_body_id ground;
    dvi_body_id* balls;
    double mass, inertia, side;
    int has_heavy;
    dvi_body_id heavy;         /* the dropped sphere, if any */
    double heavy_radius, heavy_mass;
} gbed;

/* Builds the box and the spheres: on the lattice (positions NULL) or at
 * positions[3 i ..] (a packed state), at rest. 0 on success, otherwise −1
 * with a message in err. */
int gbed_create(gbed* b, const gbed_config* c, const double* positions, char* err, size_t errlen);

/* Adds a dynamic sphere (radius, density; the bed's material) at pos, at
 * rest. Call before the first step. Its weight is cancelled by an applied
 * force until gbed_drop_heavy, so it hovers. */
int gbed_add_heavy(gbed* b, double radius, double density, const double pos[3], char* err, size_t errlen);

/* Releases the heavy sphere with downward speed v (m/s): gravity acts again. */
void gbed_drop_heavy(gbed* b, double v);

void gbed_destroy(gbed* b);

/* Kinetic and potential (m g z) energy of the dynamic bodies (J). */
double gbed_kinetic_energy(const gbed* b);
double gbed_potential_energy(const gbed* b);

/* Kinetic energy of the bed spheres without the fraction `trim` of them that
 * hold the most (the bed's typical motion, blind to a few rattlers). buf
 * holds at least N doubles (scratch). */
double gbed_kinetic_energy_trimmed(const gbed* b, double trim, double* buf);

/* Bed height 2·mean(z) of the bed spheres, and the top of the highest one. */
void gbed_bed(const gbed* b, double* height, double* top);

/* Bed spheres outside the box (beyond a wall's inner face, below the floor
 * by more than r, above the walls, or not finite). */
int gbed_escaped(const gbed* b);

/* The centres of the bed spheres, 3 per sphere (malloc'd; NULL on failure). */
double* gbed_positions(const gbed* b);

typedef struct gbed_settle_result {
    int steps;
    double time, peak_ke, final_ke, final_ratio;
    int settled;               /* KE/peak below the threshold for hold seconds (DVI: converged solves) */
    double settle_time;        /* start of that window (s), or −1 */
    int escaped;
    double bed_height, top;
    double penetration_max;    /* m, largest overlap seen (DVI: max_penetration; DEM: max_overlap) */
    int not_converged;         /* DVI steps whose solve missed the tolerance */
    int step_error;            /* a step failed (the message is on the world) */
    double wall_seconds;
} gbed_settle_result;

/* Steps with h until the kinetic energy has stayed below ratio × its peak for
 * hold seconds (for DVI, with every solve in that window converged), or
 * until seconds have passed. The criterion of sphere_pile.h's pile_run. */
void gbed_settle(gbed* b, double h, double seconds, double ratio, double hold, gbed_settle_result* res);

/* The settling window of gbed_settle and sphere_pile.h's pile_run, one step:
 * quiet (KE/peak below the threshold, with a converged solve for DVI) at
 * time t extends the window (*below steps, started at *settle_time), a step
 * that is not ends it (*settle_time = −1). True once it has lasted
 * hold_steps steps. */
bool gbed_hold(int* below, double* settle_time, bool quiet, double t, int hold_steps);

/* Steps n times with h, setting every velocity to zero after each step (a
 * quench: the bed creeps into a static packing without kinetic energy).
 * Returns the number of failed steps (0 on success). */
int gbed_quench(gbed* b, double h, int n);

/* Monotonic wall clock (s). */
double gbed_now(void);

#endif
