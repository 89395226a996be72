/* sphere_pile.h — the sphere-pile run shared by examples/sphere_pile.c,
 * tests/test_pile.c and tests/test_solvers.c (public API only; header-only,
 * static functions). The scene itself (the box, the lattice, the random
 * offsets, the materials) is built by bench/granular_bed.c (granular_bed.h;
 * the meson dependency sphere_pile_dep links it); this header adds the
 * settling run with its report, the bed-height bounds and the packing
 * statistics.
 *
 * Scene: N spheres of radius r = 0.02 m, density 2500 kg/m³ (glass;
 * m = 0.0838 kg, I = 0.4 m r²), friction 0.4, spinning friction 2e-5 m, no
 * rolling friction, restitution 0. They start at rest on a loose cubic lattice of spacing
 * 2.5 r (1 cm gaps) with deterministic random offsets of ±0.25 r per axis
 * (splitmix64), lowest layer 1.5 r above the floor, and fall into a square
 * box: a fixed ground body carrying a plane (z ≥ 0 is free) and four wall
 * boxes 0.1 m thick, 1 m high, whose inner faces are at x, y = ±L/2. The
 * default side is L = d·round(∛N) (d = 2r): 0.40 m for 1000 spheres, so a
 * simple-cubic packing would be exactly 10 layers.
 *
 * Bed height. With the centres spread evenly over a bed [0, H], their mean
 * height is H/2, so the bed height is estimated as H = 2·mean(z) (exact for
 * simple-cubic layers). Bounds, with V = N·(4/3)πr³ the spheres' volume:
 *   lower: no random packing is denser than random close packing, φ ≈ 0.64:
 *     H_rcp = V / (0.64·L²)                       (1000 spheres: 0.327 m)
 *   simple cubic (φ = π/6 = 0.524), H_sc = N·d³/L², is NOT an upper bound:
 *     the walls, the floor and the free surface loosen a bed in a box a few
 *     diameters wide (measured: 216 spheres, L = 6d, H = 0.259 m > H_sc =
 *     0.240 m; 1000 spheres, L = 10d, 0.402 m > 0.400 m), although the
 *     interior is denser than simple cubic (φ ≈ 0.55).
 *   upper: split the bed into its interior (farther than r from the walls,
 *     the floor and the top) and a boundary shell of thickness r. The
 *     interior of a mechanically stable random packing is at least as dense
 *     as random loose packing in the limit of infinite friction, φ_i = 0.536
 *     (Song, Wang & Makse, Nature 453, 629, 2008). The shell holds the halves
 *     of the spheres touching the wall (floor, top), a monolayer at least as
 *     dense as random sequential adsorption's jamming limit, areal coverage
 *     0.547, i.e. φ_s = (2/3)·0.547 = 0.365. Then V ≥ φ_s·L²·H +
 *     (φ_i − φ_s)·(L − 2r)²·(H − 2r), so
 *     H_loose = (V + (φ_i − φ_s)(L − 2r)²·2r) / (φ_s·L² + (φ_i − φ_s)(L − 2r)²)
 *     (216 spheres: 0.270 m; 1000 spheres: 0.427 m).
 *   interior: pile_bulk_fraction() samples the packing fraction away from
 *     the boundaries; it lies between 0.536 and 0.64.
 * The bounds assume a box several diameters wide (27 spheres in a 3d box
 * arch across it and pack looser).
 *
 * Free modes and spinning friction. Without spinning friction, a sphere
 * spinning about the line through its contacts (one support, or two
 * opposite ones) loses no energy, and the kinetic energy levels off instead
 * of decaying. Measured without it (APGD, tolerance 1e-6): of six
 * 216-sphere piles one levelled off at KE/peak 5.4e-6, with all of its
 * energy rotational and 65% of it in one sphere spinning on the floor; 1000
 * spheres sat at 1.02e-6 for 1.5 s before dropping below 1e-6. A pair's
 * spinning friction of 2e-5 m (a torque of at most 2e-5 m × the normal
 * force about the normal; the Hertz contact radius of 2 cm glass spheres
 * under a few newtons is of that order) removes the mode: the default. The
 * spin rows are scaled by the lever (docs/world.md), so the solver copes;
 * each contact then carries a 6-row block, which costs about 2× per
 * iteration. Rolling friction stays 0 (--rolling to set it).
 *
 * Solver settings. APGD to a CCP residual of 1e-6: the criterion is on
 * velocities (KE/peak 1e-6 is a velocity 1e-3 of the peak's), and a
 * residual of 1e-6 relative to the free velocities g·h is orders of
 * magnitude below it; at 1e-8 APGD needs its 2000-iteration cap on most
 * steps of a dense moving pile. Step 2 ms: the fastest sphere (1.4 m/s)
 * moves 2.8 mm per step, inside the 5 mm collision envelope.
 *
 * Settling. The run stops when KE/peak has stayed below the threshold
 * (1e-6) for hold seconds (0.2 s) with every solve in that window converged
 * (so that rest is certified by the solver, not left over by an inexact
 * solve), or at the time limit. */
#ifndef SPHERE_PILE_H
#define SPHERE_PILE_H

#include "granular_bed.h"

#include <dvi/world.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PILE_PI 3.14159265358979323846

typedef struct pile_config {
    gbed_config bed;      /* the scene: N, r, materials, box, solver, seed (DVI) */
    double dt;            /* s */
    double seconds;       /* time limit (s) */
    double settle_ratio;  /* KE/peak threshold */
    double hold;          /* s below the threshold before stopping */
} pile_config;

/* The scene of gbed_default_config (APGD to 1e-6, spinning friction 2e-5 m,
 * restitution 0), 2 ms steps, at most 6 s, settled at KE/peak 1e-6 held for
 * 0.2 s. */
static pile_config pile_default_config(int spheres)
{
    pile_config c;
    memset(&c, 0, sizeof c);
    c.bed = gbed_default_config(spheres);
    c.dt = 2e-3;
    c.seconds = 6.0;
    c.settle_ratio = 1e-6;
    c.hold = 0.2;
    return c;
}

typedef struct pile {
    pile_config cfg;
    gbed bed;             /* world, ground, balls, mass, inertia, side */
} pile;

#define PILE_PHI_RCP 0.64       /* random close packing */
#define PILE_PHI_RLP 0.536      /* random loose packing, infinite friction */
#define PILE_PHI_SHELL 0.365    /* (2/3) × 0.547, a jammed random monolayer of hemispheres */

/* Bed heights (see the header comment): random close packing, simple
 * cubic, and the loosest bed (upper bound). */
static void pile_height_bounds(const gbed_config* c, double* h_rcp, double* h_sc, double* h_loose)
{
    double L = gbed_side(c), r = c->radius, V = c->spheres * 4.0 / 3.0 * PILE_PI * r * r * r;
    double Li = L - 2 * r > 0 ? L - 2 * r : 0.0, dphi = PILE_PHI_RLP - PILE_PHI_SHELL;
    *h_rcp = V / (PILE_PHI_RCP * L * L);
    *h_sc = c->spheres * 8.0 * r * r * r / (L * L);
    *h_loose = (V + dphi * Li * Li * 2 * r) / (PILE_PHI_SHELL * L * L + dphi * Li * Li);
}

static void pile_destroy(pile* p)
{
    gbed_destroy(&p->bed);
    memset(p, 0, sizeof *p);
}

/* Builds the scene; 0 on success, otherwise −1 with a message in err. */
static int pile_create(pile* p, const pile_config* c, char* err, size_t errlen)
{
    memset(p, 0, sizeof *p);
    p->cfg = *c;
    return gbed_create(&p->bed, &c->bed, NULL, err, errlen);
}

/* Where the kinetic energy sits: rotational share, and the share and height
 * of the sphere holding the most. */
static void pile_energy_split(const gbed* p, double* rot_fraction, double* top_fraction, double* top_z)
{
    double ke = 0.0, rot = 0.0, top = 0.0;
    int itop = 0;
    for (int i = 0; i < p->cfg.spheres; i++) {
        double v[3], om[3];
        dvi_body_get_velocity(p->world, p->balls[i], v);
        dvi_body_get_angular_velocity(p->world, p->balls[i], om);
        double kt = 0.5 * p->mass * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
        double kr = 0.5 * p->inertia * (om[0] * om[0] + om[1] * om[1] + om[2] * om[2]);
        ke += kt + kr;
        rot += kr;
        if (kt + kr > top) {
            top = kt + kr;
            itop = i;
        }
    }
    double x[3] = {0, 0, 0};
    if (p->cfg.spheres > 0) dvi_body_get_position(p->world, p->balls[itop], x);
    *rot_fraction = ke > 0 ? rot / ke : 0.0;
    *top_fraction = ke > 0 ? top / ke : 0.0;
    *top_z = x[2];
}

/* Packing fraction of the bed's interior, away from the walls, the floor
 * and the free surface: the box |x|, |y| ≤ L/2 − d, d ≤ z ≤ H − d for the
 * bed height H = 2·mean(z), sampled on a grid of spacing r/16 (fraction of
 * grid points inside a sphere). −1 when the interior is empty. */
static double pile_bulk_fraction(const gbed* p, double bed_height)
{
    const int n = p->cfg.spheres;
    const double r = p->cfg.radius, d = 2 * r, half = p->side / 2 - d, z0 = d, z1 = bed_height - d;
    if (!(half > 0) || !(z1 > z0) || n < 1) return -1.0;
    /* spheres binned in cells of side d over the whole box */
    const double lo = -p->side / 2;
    const int nc = (int)ceil(p->side / d) + 1, nz = (int)ceil((bed_height + d) / d) + 1;
    int* head = malloc(sizeof(int) * (size_t)nc * nc * nz);
    int* next = malloc(sizeof(int) * (size_t)n);
    double* pos = malloc(sizeof(double) * 3 * (size_t)n);
    if (!head || !next || !pos) {
        free(head), free(next), free(pos);
        return -1.0;
    }
    for (int i = 0; i < nc * nc * nz; i++) head[i] = -1;
    for (int i = 0; i < n; i++) {
        double* x = pos + 3 * i;
        dvi_body_get_position(p->world, p->balls[i], x);
        int cx = (int)floor((x[0] - lo) / d), cy = (int)floor((x[1] - lo) / d), cz = (int)floor(x[2] / d);
        if (cx < 0 || cy < 0 || cz < 0 || cx >= nc || cy >= nc || cz >= nz) {
            next[i] = -1; /* outside the binned region: cannot reach the interior */
            continue;
        }
        int c = (cz * nc + cy) * nc + cx;
        next[i] = head[c];
        head[c] = i;
    }
    const double step = r / 16;
    long inside = 0, total = 0;
    for (double z = z0 + step / 2; z < z1; z += step)
        for (double y = -half + step / 2; y < half; y += step)
            for (double x = -half + step / 2; x < half; x += step) {
                total++;
                int cx = (int)floor((x - lo) / d), cy = (int)floor((y - lo) / d), cz = (int)floor(z / d);
                int hit = 0;
                for (int kz = cz - 1; kz <= cz + 1 && !hit; kz++)
                    for (int ky = cy - 1; ky <= cy + 1 && !hit; ky++)
                        for (int kx = cx - 1; kx <= cx + 1 && !hit; kx++) {
                            if (kx < 0 || ky < 0 || kz < 0 || kx >= nc || ky >= nc || kz >= nz) continue;
                            for (int i = head[(kz * nc + ky) * nc + kx]; i >= 0; i = next[i]) {
                                const double* q = pos + 3 * i;
                                double dx = x - q[0], dy = y - q[1], dz = z - q[2];
                                if (dx * dx + dy * dy + dz * dz <= r * r) {
                                    hit = 1;
                                    break;
                                }
                            }
                        }
                inside += hit;
            }
    free(head), free(next), free(pos);
    return total ? (double)inside / (double)total : -1.0;
}

/* Contacts of the last step carrying a force: per sphere (a sphere–sphere
 * contact counts for both), and the largest |gap| among them. */
static void pile_contact_stats(const gbed* p, double* coordination, double* gap_max)
{
    int loaded = 0;
    double g = 0.0;
    for (int32_t k = 0; k < dvi_world_contact_count(p->world); k++) {
        dvi_contact_info ci;
        dvi_world_get_contact(p->world, k, &ci);
        double f = sqrt(ci.force[0] * ci.force[0] + ci.force[1] * ci.force[1] + ci.force[2] * ci.force[2]);
        if (!(f > 1e-9)) continue;
        loaded += ci.body_a.index1 == p->ground.index1 || ci.body_b.index1 == p->ground.index1 ? 1 : 2;
        if (fabs(ci.distance) > g) g = fabs(ci.distance);
    }
    *coordination = p->cfg.spheres ? (double)loaded / p->cfg.spheres : 0.0;
    *gap_max = g;
}

/* One report interval (printed by the example every 0.1 s). */
typedef struct pile_sample {
    double time, ke, ratio;
    int contacts;
    double iterations_mean;  /* over the interval */
    int iterations_max;
    double residual_max;     /* over the interval */
    int not_converged;       /* steps whose solve missed the tolerance, over the interval */
    double penetration_max;  /* m, over the interval */
    double wall_per_step;    /* s */
    double rot_fraction;     /* rotational share of the kinetic energy */
    double top_fraction;     /* share of the sphere with the most kinetic energy */
    double top_z;            /* height of that sphere's centre (m) */
} pile_sample;

typedef struct pile_result {
    int steps;
    double time, peak_ke, peak_time, final_ke, final_ratio;
    int settled;             /* KE/peak stayed below the threshold for hold seconds, all solves converged */
    double settle_time;      /* start of that window (s), or −1 */
    int escaped;
    double bed_height, top, h_rcp, h_sc, h_loose;
    int max_contacts;
    int not_converged;       /* steps, whole run */
    double residual_max, penetration_max;
    double wall_seconds, wall_per_step;
    int step_error;          /* a step returned an error (not DVI_NOT_CONVERGED) */
    double phi_bulk;         /* packing fraction of the interior (pile_bulk_fraction) */
    double coordination;     /* force-carrying contacts per sphere (sphere–sphere counted twice) */
    double loaded_gap_max;   /* m, largest |gap| of a contact carrying force at the end */
} pile_result;

typedef void pile_report_fn(void* user, const pile_sample* s);

/* Steps until settled or the time limit; calls report every 0.1 s of
 * simulated time (report may be NULL). */
static void pile_run(pile* p, pile_report_fn* report, void* user, pile_result* res)
{
    const pile_config* c = &p->cfg;
    memset(res, 0, sizeof *res);
    res->settle_time = -1.0;
    const int max_steps = (int)ceil(c->seconds / c->dt - 1e-9);
    const int hold_steps = (int)ceil(c->hold / c->dt - 1e-9);
    const int report_every = (int)lround(0.1 / c->dt) > 0 ? (int)lround(0.1 / c->dt) : 1;
    pile_sample acc;
    memset(&acc, 0, sizeof acc);
    int acc_steps = 0, below = 0;
    double t_start = gbed_now(), t_acc = t_start;
    for (int k = 1; k <= max_steps; k++) {
        dvi_status st = dvi_world_step(p->bed.world, c->dt);
        if (st != DVI_OK && st != DVI_NOT_CONVERGED) {
            res->step_error = 1;
            break;
        }
        res->steps = k;
        dvi_step_stats ss = dvi_world_get_stats(p->bed.world);
        double ke = gbed_kinetic_energy(&p->bed);
        double t = dvi_world_time(p->bed.world);
        if (ke > res->peak_ke) {
            res->peak_ke = ke;
            res->peak_time = t;
        }
        double ratio = res->peak_ke > 0 ? ke / res->peak_ke : 0.0;
        if (ss.contacts > res->max_contacts) res->max_contacts = ss.contacts;
        if (st == DVI_NOT_CONVERGED) res->not_converged++, acc.not_converged++;
        if (ss.residual > res->residual_max) res->residual_max = ss.residual;
        if (ss.max_penetration > res->penetration_max) res->penetration_max = ss.max_penetration;
        acc_steps++;
        acc.iterations_mean += ss.iterations;
        if (ss.iterations > acc.iterations_max) acc.iterations_max = ss.iterations;
        if (ss.residual > acc.residual_max) acc.residual_max = ss.residual;
        if (ss.max_penetration > acc.penetration_max) acc.penetration_max = ss.max_penetration;
        if (k % report_every == 0 || k == max_steps) {
            double tn = gbed_now();
            acc.time = t;
            acc.ke = ke;
            acc.ratio = ratio;
            acc.contacts = ss.contacts;
            acc.iterations_mean /= acc_steps;
            acc.wall_per_step = (tn - t_acc) / acc_steps;
            pile_energy_split(&p->bed, &acc.rot_fraction, &acc.top_fraction, &acc.top_z);
            if (report) report(user, &acc);
            memset(&acc, 0, sizeof acc);
            acc_steps = 0;
            t_acc = gbed_now();
        }
        res->final_ke = ke;
        res->final_ratio = ratio;
        res->time = t;
        if (gbed_hold(&below, &res->settle_time, res->peak_ke > 0 && ratio < c->settle_ratio && st == DVI_OK, t,
                      hold_steps)) {
            res->settled = 1;
            break;
        }
    }
    res->wall_seconds = gbed_now() - t_start;
    res->wall_per_step = res->steps ? res->wall_seconds / res->steps : 0.0;
    res->escaped = gbed_escaped(&p->bed);
    gbed_bed(&p->bed, &res->bed_height, &res->top);
    pile_height_bounds(&c->bed, &res->h_rcp, &res->h_sc, &res->h_loose);
    res->phi_bulk = pile_bulk_fraction(&p->bed, res->bed_height);
    pile_contact_stats(&p->bed, &res->coordination, &res->loaded_gap_max);
}

#endif
