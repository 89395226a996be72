/* dvicontact — reproducible CCP problem generators (see problems.h for the
 * conventions). No dependency on the library itself: only its header types. */
#include "problems.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------------
 * Small deterministic PRNG: splitmix64.
 * ------------------------------------------------------------------------- */

typedef struct gen_rng {
    uint64_t state;
} gen_rng;

static uint64_t rng_next(gen_rng* g) {
    uint64_t z = (g->state += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

/* Uniform in [0, 1). */
static double rng_unit(gen_rng* g) {
    return (double)(rng_next(g) >> 11) * 0x1.0p-53;
}

/* Uniform in [lo, hi). */
static double rng_range(gen_rng* g, double lo, double hi) {
    return lo + (hi - lo) * rng_unit(g);
}

/* Uniform integer in [0, n), n >= 1 (the modulo bias is negligible here). */
static int32_t rng_index(gen_rng* g, int32_t n) {
    return (int32_t)(rng_next(g) % (uint64_t)n);
}

/* ---------------------------------------------------------------------------
 * Small vector helpers.
 * ------------------------------------------------------------------------- */

static void cross3(const double a[3], const double b[3], double out[3]) {
    out[0] = a[1] * b[2] - a[2] * b[1];
    out[1] = a[2] * b[0] - a[0] * b[2];
    out[2] = a[0] * b[1] - a[1] * b[0];
}

static double dot3(const double a[3], const double b[3]) {
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

/* t1, t2 such that (n, t1, t2) is orthonormal and right-handed (n unit). */
static void tangent_basis(const double n[3], double t1[3], double t2[3]) {
    /* the axis least aligned with n */
    double e[3] = {0.0, 0.0, 0.0};
    double ax = fabs(n[0]), ay = fabs(n[1]), az = fabs(n[2]);
    if (ax <= ay && ax <= az) {
        e[0] = 1.0;
    } else if (ay <= az) {
        e[1] = 1.0;
    } else {
        e[2] = 1.0;
    }
    cross3(e, n, t1); /* e × n is orthogonal to n */
    double len = sqrt(dot3(t1, t1));
    for (int k = 0; k < 3; ++k) t1[k] /= len;
    cross3(n, t1, t2);
}

/* ---------------------------------------------------------------------------
 * Problem storage and assembly.
 * ------------------------------------------------------------------------- */

void dvi_gen_free(dvi_gen_problem* g) {
    if (!g) return;
    free(g->colptr);
    free(g->rowind);
    free(g->values);
    free(g->inv_mass);
    free(g->r);
    free(g->blocks);
    free(g->fr_block);
    free(g->fr_body);
    free(g->fr_frame);
    free(g->fr_arm);
    memset(g, 0, sizeof *g);
}

/* One column's entries on at most two bodies; false otherwise. */
static bool column_bodies(const dvi_csc* D, int32_t j, int32_t body[2], double v[2][6], int* n)
{
    *n = 0;
    memset(v, 0, 12 * sizeof(double));
    for (int32_t k = D->colptr[j]; k < D->colptr[j + 1]; k++) {
        int32_t b = D->rowind[k] / 6;
        if (*n == 0 || body[*n - 1] != b) {
            if (*n == 2) return false;
            body[(*n)++] = b;
        }
        v[*n - 1][D->rowind[k] % 6] = D->values[k];
    }
    return *n > 0;
}

int32_t dvi_gen_use_frames(dvi_gen_problem* g)
{
    const dvi_ccp_problem* p = &g->p;
    const int32_t m = p->rows, nb = p->block_count;
    g->fr_block = malloc((size_t)nb * sizeof(int32_t));
    g->fr_body = malloc(2 * (size_t)nb * sizeof(int32_t));
    g->fr_frame = malloc(9 * (size_t)nb * sizeof(double));
    g->fr_arm = malloc(6 * (size_t)nb * sizeof(double));
    if (!g->fr_block || !g->fr_body || !g->fr_frame || !g->fr_arm) return -1;
    bool* empty = calloc((size_t)m, sizeof(bool));
    if (!empty) return -1;
    int32_t count = 0;
    for (int32_t b = 0, row = 0; b < nb; row += dvi_block_rows(p->blocks[b].kind), b++) {
        if (p->blocks[b].kind != DVI_BLOCK_FRICTION) continue;
        int32_t body[3][2];
        double v[3][2][6];
        int n[3];
        bool ok = true;
        for (int q = 0; q < 3 && ok; q++) ok = column_bodies(p->D, row + q, body[q], v[q], &n[q]);
        for (int q = 1; q < 3 && ok; q++) ok = n[q] == n[0] && body[q][0] == body[0][0] && (n[0] == 1 || body[q][1] == body[0][1]);
        if (!ok) continue;
        /* b (the + side) is the second body, or the only one; a the first, or none */
        int ib = n[0] - 1;
        double d[3][3], rho[2][3] = {{0}};
        for (int q = 0; q < 3; q++)
            for (int k = 0; k < 3; k++) d[q][k] = v[q][ib][k];
        for (int s = 0; s < n[0]; s++) {
            double sg = s == ib ? 1.0 : -1.0;
            for (int q = 0; q < 3; q++) { /* ρ += ½ d_q × w_q, w_q = sg·(ρ × d_q) */
                const double* w = v[q][s] + 3;
                rho[s][0] += 0.5 * sg * (d[q][1] * w[2] - d[q][2] * w[1]);
                rho[s][1] += 0.5 * sg * (d[q][2] * w[0] - d[q][0] * w[2]);
                rho[s][2] += 0.5 * sg * (d[q][0] * w[1] - d[q][1] * w[0]);
            }
        }
        /* rebuild and compare */
        double err = 0.0, mag = 0.0;
        for (int q = 0; q < 3; q++)
            for (int s = 0; s < n[0]; s++) {
                double sg = s == ib ? 1.0 : -1.0;
                const double* r = rho[s];
                double e[6] = {sg * d[q][0], sg * d[q][1], sg * d[q][2], sg * (r[1] * d[q][2] - r[2] * d[q][1]),
                               sg * (r[2] * d[q][0] - r[0] * d[q][2]), sg * (r[0] * d[q][1] - r[1] * d[q][0])};
                for (int k = 0; k < 6; k++) {
                    err = fmax(err, fabs(e[k] - v[q][s][k]));
                    mag = fmax(mag, fabs(v[q][s][k]));
                }
            }
        if (err > 1e-12 * (1.0 + mag)) continue;
        g->fr_block[count] = b;
        g->fr_body[2 * count] = n[0] == 2 ? body[0][0] : -1;
        g->fr_body[2 * count + 1] = body[0][ib];
        for (int q = 0; q < 3; q++)
            for (int k = 0; k < 3; k++) g->fr_frame[9 * (size_t)count + 3 * q + k] = d[q][k];
        for (int k = 0; k < 3; k++) {
            g->fr_arm[6 * (size_t)count + k] = n[0] == 2 ? rho[0][k] : 0.0;
            g->fr_arm[6 * (size_t)count + 3 + k] = rho[ib][k];
        }
        for (int q = 0; q < 3; q++) empty[row + q] = true;
        count++;
    }
    /* D with the converted columns emptied */
    int32_t* cp = malloc(((size_t)m + 1) * sizeof(int32_t));
    int32_t* ri = malloc(((size_t)p->D->colptr[m] + 1) * sizeof(int32_t));
    double* va = malloc(((size_t)p->D->colptr[m] + 1) * sizeof(double));
    if (!cp || !ri || !va) {
        free(cp);
        free(ri);
        free(va);
        free(empty);
        return -1;
    }
    int32_t nz = 0;
    for (int32_t j = 0; j < m; j++) {
        cp[j] = nz;
        if (empty[j]) continue;
        for (int32_t k = p->D->colptr[j]; k < p->D->colptr[j + 1]; k++) {
            ri[nz] = p->D->rowind[k];
            va[nz++] = p->D->values[k];
        }
    }
    cp[m] = nz;
    free(empty);
    /* the problem now owns the compacted entries */
    memcpy(g->rowind, ri, (size_t)nz * sizeof(int32_t));
    memcpy(g->values, va, (size_t)nz * sizeof(double));
    memcpy(g->colptr, cp, ((size_t)m + 1) * sizeof(int32_t));
    free(cp);
    free(ri);
    free(va);
    g->frames = (dvi_ccp_frames){.count = count, .block = g->fr_block, .body = g->fr_body, .frame = g->fr_frame,
                                 .arm = g->fr_arm};
    g->p.frames = &g->frames;
    return count;
}

/* Assembly state: columns are appended in row order; r first receives b
 * (the Φ/h part) and gets Dᵀw added by asm_finish(). */
typedef struct gen_asm {
    dvi_gen_problem* g;
    int32_t bodies;
    int32_t rows;      /* columns expected */
    int32_t nblocks;   /* blocks expected */
    int32_t col;       /* columns written */
    int32_t block;     /* blocks written */
    int32_t nnz;       /* entries written */
    int32_t cap_nnz;
} gen_asm;

#define GEN_MAX_INT32 2147483647LL
#define GEN_PI 3.14159265358979323846

static void* alloc_zeroed(size_t count, size_t size) {
    return calloc(count ? count : 1, size);
}

/* Checks the sizes and allocates every array of *out (zeroed first). */
static dvi_status asm_begin(gen_asm* a, dvi_gen_problem* out, const char* family, int64_t bodies, int64_t rows,
                            int64_t nblocks) {
    memset(out, 0, sizeof *out);
    memset(a, 0, sizeof *a);
    /* at most 12 entries per column (two bodies) */
    if (bodies < 0 || rows < 0 || nblocks < 0 || 6 * bodies > GEN_MAX_INT32 || 12 * rows > GEN_MAX_INT32 ||
        nblocks > GEN_MAX_INT32) {
        return DVI_ERR_INVALID_ARG;
    }
    out->colptr = alloc_zeroed((size_t)rows + 1, sizeof *out->colptr);
    out->rowind = alloc_zeroed((size_t)(12 * rows), sizeof *out->rowind);
    out->values = alloc_zeroed((size_t)(12 * rows), sizeof *out->values);
    out->inv_mass = alloc_zeroed((size_t)(36 * bodies), sizeof *out->inv_mass);
    out->r = alloc_zeroed((size_t)rows, sizeof *out->r);
    out->blocks = alloc_zeroed((size_t)nblocks, sizeof *out->blocks);
    if (!out->colptr || !out->rowind || !out->values || !out->inv_mass || !out->r || !out->blocks) {
        dvi_gen_free(out);
        return DVI_ERR_NOMEM;
    }
    strncpy(out->family, family, sizeof out->family - 1);
    a->g = out;
    a->bodies = (int32_t)bodies;
    a->rows = (int32_t)rows;
    a->nblocks = (int32_t)nblocks;
    a->cap_nnz = (int32_t)(12 * rows);
    return DVI_OK;
}

/* Appends the 6 entries of one body to the current column, skipping zeros. */
static void asm_put_body(gen_asm* a, int32_t body, const double e[6]) {
    for (int k = 0; k < 6; ++k) {
        if (e[k] != 0.0) {
            a->g->rowind[a->nnz] = 6 * body + k;
            a->g->values[a->nnz] = e[k];
            a->nnz++;
        }
    }
}

/* Appends one column from two 6-entry parts (body index −1 = fixed, skipped).
 * The lower body index is written first so row indices increase. */
static void asm_column2(gen_asm* a, int32_t body_a, const double ea[6], int32_t body_b, const double eb[6]) {
    if (body_a >= 0 && body_b >= 0 && body_b < body_a) {
        asm_put_body(a, body_b, eb);
        asm_put_body(a, body_a, ea);
    } else {
        if (body_a >= 0) asm_put_body(a, body_a, ea);
        if (body_b >= 0) asm_put_body(a, body_b, eb);
    }
    a->col++;
    a->g->colptr[a->col] = a->nnz;
}

/* Appends the column of direction d at point x between bodies A (−row) and
 * B (+row); ca / cb are their centres (ignored for a fixed body, index −1). */
static void asm_direction(gen_asm* a, int32_t body_a, const double ca[3], int32_t body_b, const double cb[3],
                          const double x[3], const double d[3]) {
    double ea[6] = {0}, eb[6] = {0};
    if (body_a >= 0) {
        double arm[3] = {x[0] - ca[0], x[1] - ca[1], x[2] - ca[2]}, ang[3];
        cross3(arm, d, ang);
        for (int k = 0; k < 3; ++k) {
            ea[k] = -d[k];
            ea[3 + k] = -ang[k];
        }
    }
    if (body_b >= 0) {
        double arm[3] = {x[0] - cb[0], x[1] - cb[1], x[2] - cb[2]}, ang[3];
        cross3(arm, d, ang);
        for (int k = 0; k < 3; ++k) {
            eb[k] = d[k];
            eb[3 + k] = ang[k];
        }
    }
    asm_column2(a, body_a, ea, body_b, eb);
}

/* Appends one FRICTION block (columns n, t1, t2) with b_n = phi_over_h. */
static void asm_contact(gen_asm* a, int32_t body_a, const double ca[3], int32_t body_b, const double cb[3],
                        const double x[3], const double n[3], const double t1[3], const double t2[3], double mu,
                        double phi_over_h) {
    a->g->r[a->col] = phi_over_h;
    asm_direction(a, body_a, ca, body_b, cb, x, n);
    asm_direction(a, body_a, ca, body_b, cb, x, t1);
    asm_direction(a, body_a, ca, body_b, cb, x, t2);
    dvi_ccp_block* blk = &a->g->blocks[a->block++];
    blk->kind = DVI_BLOCK_FRICTION;
    blk->mu = mu;
    blk->mu_spin = 0.0;
    blk->mu_roll = 0.0;
    a->g->contacts++;
}

/* Appends one 1-row BILATERAL block (b = 0). */
static void asm_bilateral(gen_asm* a, int32_t body_a, const double ea[6], int32_t body_b, const double eb[6]) {
    a->g->r[a->col] = 0.0;
    asm_column2(a, body_a, ea, body_b, eb);
    dvi_ccp_block* blk = &a->g->blocks[a->block++];
    blk->kind = DVI_BLOCK_BILATERAL;
    blk->mu = 0.0;
    blk->mu_spin = 0.0;
    blk->mu_roll = 0.0;
    a->g->bilateral++;
}

/* Writes body b's M⁻¹ block for mass m and a diagonal world inertia. */
static void set_inv_mass_diag(double* inv_mass, int32_t body, double mass, double ixx, double iyy, double izz) {
    double* blk = inv_mass + 36 * (size_t)body;
    memset(blk, 0, 36 * sizeof *blk);
    blk[0 * 6 + 0] = 1.0 / mass;
    blk[1 * 6 + 1] = 1.0 / mass;
    blk[2 * 6 + 2] = 1.0 / mass;
    blk[3 * 6 + 3] = 1.0 / ixx;
    blk[4 * 6 + 4] = 1.0 / iyy;
    blk[5 * 6 + 5] = 1.0 / izz;
}

/* Adds h M⁻¹ f to w, with f = gravity (0, 0, −m g) on body b. */
static void add_gravity_step(const double* inv_mass, int32_t bodies, const double* mass, double g, double h,
                             double* w) {
    for (int32_t b = 0; b < bodies; ++b) {
        const double* blk = inv_mass + 36 * (size_t)b;
        double fz = -mass[b] * g;
        for (int k = 0; k < 6; ++k) w[6 * (size_t)b + k] += h * blk[k * 6 + 2] * fz;
    }
}

/* Completes the problem: r += Dᵀw, shrinks the entry arrays, fills D and p. */
static void asm_finish(gen_asm* a, const double* w) {
    dvi_gen_problem* g = a->g;
    for (int32_t j = 0; j < a->rows; ++j) {
        double s = 0.0;
        for (int32_t q = g->colptr[j]; q < g->colptr[j + 1]; ++q) s += g->values[q] * w[g->rowind[q]];
        g->r[j] += s;
    }
    if (a->nnz < a->cap_nnz && a->nnz > 0) {
        int32_t* ri = realloc(g->rowind, (size_t)a->nnz * sizeof *ri);
        if (ri) g->rowind = ri;
        double* vx = realloc(g->values, (size_t)a->nnz * sizeof *vx);
        if (vx) g->values = vx;
    }
    g->D.rows = 6 * a->bodies;
    g->D.cols = a->rows;
    g->D.colptr = g->colptr;
    g->D.rowind = g->rowind;
    g->D.values = g->values;

    dvi_ccp_problem p = {0};
    p.rows = a->rows;
    p.block_count = a->nblocks;
    p.blocks = g->blocks;
    p.body_count = a->bodies;
    p.D = &g->D;
    p.inv_mass = g->inv_mass;
    p.W = NULL;
    p.r = g->r;
    p.compliance = NULL;
    g->p = p;
}

/* ---------------------------------------------------------------------------
 * sphere_stack
 * ------------------------------------------------------------------------- */

dvi_status dvi_gen_sphere_stack(int32_t n, double radius, double mass, double mu, double g, double h,
                                dvi_gen_problem* out) {
    if (!out) return DVI_ERR_INVALID_ARG;
    memset(out, 0, sizeof *out);
    if (n < 0 || !(radius > 0.0) || !(mass > 0.0) || !(mu >= 0.0) || !(g >= 0.0) || !(h > 0.0) ||
        !isfinite(radius) || !isfinite(mass) || !isfinite(mu) || !isfinite(g) || !isfinite(h)) {
        return DVI_ERR_INVALID_ARG;
    }
    gen_asm a;
    dvi_status st = asm_begin(&a, out, "sphere_stack", n, 3 * (int64_t)n, n);
    if (st != DVI_OK) return st;
    double* w = alloc_zeroed(6 * (size_t)n, sizeof *w);
    double* masses = alloc_zeroed((size_t)n, sizeof *masses);
    if (!w || !masses) {
        free(w);
        free(masses);
        dvi_gen_free(out);
        return DVI_ERR_NOMEM;
    }
    double inertia = 0.4 * mass * radius * radius;
    for (int32_t b = 0; b < n; ++b) {
        set_inv_mass_diag(out->inv_mass, b, mass, inertia, inertia, inertia);
        masses[b] = mass;
    }
    const double nz[3] = {0.0, 0.0, 1.0}, tx[3] = {1.0, 0.0, 0.0}, ty[3] = {0.0, 1.0, 0.0};
    for (int32_t k = 0; k < n; ++k) {
        double cb[3] = {0.0, 0.0, radius + 2.0 * radius * k};
        double ca[3] = {0.0, 0.0, radius + 2.0 * radius * (k - 1)};
        double x[3] = {0.0, 0.0, 2.0 * radius * k};
        asm_contact(&a, k - 1, ca, k, cb, x, nz, tx, ty, mu, 0.0);
    }
    add_gravity_step(out->inv_mass, n, masses, g, h, w); /* v = 0 */
    asm_finish(&a, w);
    free(w);
    free(masses);
    return DVI_OK;
}

/* ---------------------------------------------------------------------------
 * stack: columns of boxes
 * ------------------------------------------------------------------------- */

dvi_status dvi_gen_box_stacks(int32_t columns, int32_t height, double mu, double h, uint64_t seed,
                              dvi_gen_problem* out) {
    if (!out) return DVI_ERR_INVALID_ARG;
    memset(out, 0, sizeof *out);
    if (columns < 0 || height < 0 || !(mu >= 0.0) || !(h > 0.0) || !isfinite(mu) || !isfinite(h)) {
        return DVI_ERR_INVALID_ARG;
    }
    const double sx = 1.0, sy = 1.0, sz = 0.5; /* box size (m) */
    const double density = 1000.0, g = 9.81, spacing = 1.5, vmax = 0.01;
    const double mass = density * sx * sy * sz;
    const double ixx = mass / 12.0 * (sy * sy + sz * sz);
    const double iyy = mass / 12.0 * (sx * sx + sz * sz);
    const double izz = mass / 12.0 * (sx * sx + sy * sy);

    int64_t bodies = (int64_t)columns * height;
    int64_t contacts = 4 * bodies;
    if (6 * bodies > GEN_MAX_INT32 || 12 * 3 * contacts > GEN_MAX_INT32) return DVI_ERR_INVALID_ARG;
    gen_asm a;
    dvi_status st = asm_begin(&a, out, "stack", bodies, 3 * contacts, contacts);
    if (st != DVI_OK) return st;
    double* w = alloc_zeroed(6 * (size_t)bodies, sizeof *w);
    double* masses = alloc_zeroed((size_t)bodies, sizeof *masses);
    if (!w || !masses) {
        free(w);
        free(masses);
        dvi_gen_free(out);
        return DVI_ERR_NOMEM;
    }
    gen_rng rng = {seed};
    int32_t grid = 1;
    while ((int64_t)grid * grid < columns) grid++;

    const double nz[3] = {0.0, 0.0, 1.0}, tx[3] = {1.0, 0.0, 0.0}, ty[3] = {0.0, 1.0, 0.0};
    const double corner[4][2] = {{-0.5, -0.5}, {0.5, -0.5}, {-0.5, 0.5}, {0.5, 0.5}};
    for (int32_t c = 0; c < columns; ++c) {
        double px = spacing * (c % grid), py = spacing * (c / grid);
        for (int32_t j = 0; j < height; ++j) {
            int32_t b = c * height + j;
            set_inv_mass_diag(out->inv_mass, b, mass, ixx, iyy, izz);
            masses[b] = mass;
            w[6 * (size_t)b + 0] = rng_range(&rng, -vmax, vmax);
            w[6 * (size_t)b + 1] = rng_range(&rng, -vmax, vmax);
            double cb[3] = {px, py, 0.5 * sz + sz * j};
            double ca[3] = {px, py, 0.5 * sz + sz * (j - 1)};
            for (int q = 0; q < 4; ++q) {
                double x[3] = {px + corner[q][0] * sx, py + corner[q][1] * sy, sz * j};
                asm_contact(&a, j == 0 ? -1 : b - 1, ca, b, cb, x, nz, tx, ty, mu, 0.0);
            }
        }
    }
    add_gravity_step(out->inv_mass, (int32_t)bodies, masses, g, h, w);
    asm_finish(&a, w);
    free(w);
    free(masses);
    return DVI_OK;
}

/* ---------------------------------------------------------------------------
 * granular: FCC packing in a box
 * ------------------------------------------------------------------------- */

/* #{(i,j,k) in [0,a)×[0,b)×[0,c) : i+j+k+q even}. */
static int64_t parity_count(int64_t a, int64_t b, int64_t c, int64_t q) {
    if (a <= 0 || b <= 0 || c <= 0) return 0;
    int64_t total = a * b * c;
    if (total % 2 == 0) return total / 2;
    return (q % 2 == 0) ? (total + 1) / 2 : (total - 1) / 2;
}

/* Exact number of contacts of the FCC packing with nx × ny × nz lattice sites
 * (site (i,j,k) occupied iff i+j+k is even), floor and four walls. */
static int64_t fcc_contacts(int64_t nx, int64_t ny, int64_t nz) {
    static const int off[6][3] = {{1, 1, 0}, {1, -1, 0}, {1, 0, 1}, {1, 0, -1}, {0, 1, 1}, {0, 1, -1}};
    int64_t total = 0;
    for (int o = 0; o < 6; ++o) {
        int64_t len[3], start[3], dims[3] = {nx, ny, nz};
        for (int d = 0; d < 3; ++d) {
            len[d] = dims[d] - (off[o][d] != 0 ? 1 : 0);
            start[d] = off[o][d] < 0 ? 1 : 0;
        }
        total += parity_count(len[0], len[1], len[2], start[0] + start[1] + start[2]);
    }
    total += parity_count(nx, ny, 1, 0);      /* floor */
    total += parity_count(1, ny, nz, 0);      /* wall x− */
    total += parity_count(1, ny, nz, nx - 1); /* wall x+ */
    total += parity_count(nx, 1, nz, 0);      /* wall y− */
    total += parity_count(nx, 1, nz, ny - 1); /* wall y+ */
    return total;
}

/* Chooses nx = ny = l and nz in [ceil(l/2), 2l] (nz >= 1) with the contact
 * count closest to target; ties go to the more cubic box, then smaller. */
static void fcc_choose(int64_t target, int64_t* nx_out, int64_t* nz_out) {
    int64_t best_l = 1, best_z = 1, best_err = INT64_MAX, best_aspect = INT64_MAX;
    for (int64_t l = 1;; ++l) {
        int64_t zlo = (l + 1) / 2;
        if (zlo < 1) zlo = 1;
        if (fcc_contacts(l, l, zlo) > 2 * target + 16) break;
        for (int64_t z = zlo; z <= 2 * l; ++z) {
            int64_t cnt = fcc_contacts(l, l, z);
            int64_t err = cnt > target ? cnt - target : target - cnt;
            int64_t aspect = z > l ? z - l : l - z;
            if (err < best_err || (err == best_err && aspect < best_aspect)) {
                best_err = err;
                best_aspect = aspect;
                best_l = l;
                best_z = z;
            }
            if (cnt > 2 * target + 16) break;
        }
    }
    *nx_out = best_l;
    *nz_out = best_z;
}

/* Uniform grid over the sphere centres (counting sort by cell). */
typedef struct gen_grid {
    int32_t gx, gy, gz;
    double cell;
    double origin[3];
    int32_t* start; /* [cells + 1] */
    int32_t* items; /* [count] */
} gen_grid;

static int32_t grid_coord(const gen_grid* grid, double v, int axis, int32_t dim) {
    int32_t c = (int32_t)floor((v - grid->origin[axis]) / grid->cell);
    if (c < 0) c = 0;
    if (c >= dim) c = dim - 1;
    return c;
}

static int64_t grid_cell_of(const gen_grid* grid, const double* c) {
    int32_t ix = grid_coord(grid, c[0], 0, grid->gx);
    int32_t iy = grid_coord(grid, c[1], 1, grid->gy);
    int32_t iz = grid_coord(grid, c[2], 2, grid->gz);
    return ((int64_t)iz * grid->gy + iy) * grid->gx + ix;
}

static void grid_free(gen_grid* grid) {
    free(grid->start);
    free(grid->items);
    memset(grid, 0, sizeof *grid);
}

static dvi_status grid_build(gen_grid* grid, const double* centres, int32_t count, const double lo[3],
                             const double hi[3], double cell) {
    memset(grid, 0, sizeof *grid);
    grid->cell = cell;
    int32_t* dims[3] = {&grid->gx, &grid->gy, &grid->gz};
    for (int d = 0; d < 3; ++d) {
        grid->origin[d] = lo[d];
        double span = (hi[d] - lo[d]) / cell;
        int64_t n = (int64_t)ceil(span);
        if (n < 1) n = 1;
        if (n > 1 << 20) return DVI_ERR_INVALID_ARG;
        *dims[d] = (int32_t)n;
    }
    int64_t cells = (int64_t)grid->gx * grid->gy * grid->gz;
    if (cells > GEN_MAX_INT32 - 1) return DVI_ERR_INVALID_ARG;
    grid->start = alloc_zeroed((size_t)cells + 1, sizeof *grid->start);
    grid->items = alloc_zeroed((size_t)count, sizeof *grid->items);
    if (!grid->start || !grid->items) {
        grid_free(grid);
        return DVI_ERR_NOMEM;
    }
    for (int32_t i = 0; i < count; ++i) grid->start[grid_cell_of(grid, centres + 3 * (size_t)i) + 1]++;
    for (int64_t c = 0; c < cells; ++c) grid->start[c + 1] += grid->start[c];
    /* fill in body order, so each cell lists its bodies in increasing order */
    int32_t* fill = alloc_zeroed((size_t)cells, sizeof *fill);
    if (!fill) {
        grid_free(grid);
        return DVI_ERR_NOMEM;
    }
    for (int32_t i = 0; i < count; ++i) {
        int64_t c = grid_cell_of(grid, centres + 3 * (size_t)i);
        grid->items[grid->start[c] + fill[c]++] = i;
    }
    free(fill);
    return DVI_OK;
}

#define GEN_MAX_NEIGHBOURS 32

/* The touching spheres j > i of sphere i, in increasing order. Returns the
 * count, or −1 if more than GEN_MAX_NEIGHBOURS (impossible for equal
 * non-overlapping spheres, whose kissing number is 12). */
static int grid_neighbours(const gen_grid* grid, const double* centres, int32_t i, double touch2,
                           int32_t out[GEN_MAX_NEIGHBOURS]) {
    const double* ci = centres + 3 * (size_t)i;
    int32_t ix = grid_coord(grid, ci[0], 0, grid->gx);
    int32_t iy = grid_coord(grid, ci[1], 1, grid->gy);
    int32_t iz = grid_coord(grid, ci[2], 2, grid->gz);
    int count = 0;
    for (int32_t z = iz - 1; z <= iz + 1; ++z) {
        if (z < 0 || z >= grid->gz) continue;
        for (int32_t y = iy - 1; y <= iy + 1; ++y) {
            if (y < 0 || y >= grid->gy) continue;
            for (int32_t x = ix - 1; x <= ix + 1; ++x) {
                if (x < 0 || x >= grid->gx) continue;
                int64_t c = ((int64_t)z * grid->gy + y) * grid->gx + x;
                for (int32_t q = grid->start[c]; q < grid->start[c + 1]; ++q) {
                    int32_t j = grid->items[q];
                    if (j <= i) continue;
                    const double* cj = centres + 3 * (size_t)j;
                    double d[3] = {cj[0] - ci[0], cj[1] - ci[1], cj[2] - ci[2]};
                    if (dot3(d, d) > touch2) continue;
                    if (count == GEN_MAX_NEIGHBOURS) return -1;
                    /* insertion keeps the list sorted */
                    int p = count++;
                    while (p > 0 && out[p - 1] > j) {
                        out[p] = out[p - 1];
                        --p;
                    }
                    out[p] = j;
                }
            }
        }
    }
    return count;
}

/* Floor/wall contacts of a sphere: which of (floor, x−, x+, y−, y+) touch. */
static int wall_contacts(const double c[3], double radius, const double lo[3], const double hi[3], double tol,
                         bool touch[5]) {
    touch[0] = c[2] - radius - lo[2] <= tol;
    touch[1] = c[0] - radius - lo[0] <= tol;
    touch[2] = hi[0] - (c[0] + radius) <= tol;
    touch[3] = c[1] - radius - lo[1] <= tol;
    touch[4] = hi[1] - (c[1] + radius) <= tol;
    int n = 0;
    for (int k = 0; k < 5; ++k) n += touch[k] ? 1 : 0;
    return n;
}

dvi_status dvi_gen_granular(int32_t target_contacts, double mu, double h, uint64_t seed, dvi_gen_problem* out) {
    if (!out) return DVI_ERR_INVALID_ARG;
    memset(out, 0, sizeof *out);
    if (target_contacts < 1 || !(mu >= 0.0) || !(h > 0.0) || !isfinite(mu) || !isfinite(h)) {
        return DVI_ERR_INVALID_ARG;
    }
    const double radius = 0.01, density = 2500.0, g = 9.81;
    const double vmax = 0.01, wmax = 1.0;
    const double mass = density * 4.0 / 3.0 * GEN_PI * radius * radius * radius;
    const double inertia = 0.4 * mass * radius * radius;
    const double s = sqrt(2.0) * radius; /* cubic lattice spacing: neighbours at √2·s = 2R */
    const double tol = 1e-9 * radius;

    int64_t nx, nz;
    fcc_choose(target_contacts, &nx, &nz);
    int64_t ny = nx;
    int64_t bodies64 = parity_count(nx, ny, nz, 0);
    int64_t expected = fcc_contacts(nx, ny, nz);
    if (6 * bodies64 > GEN_MAX_INT32 || 36 * expected > GEN_MAX_INT32) return DVI_ERR_INVALID_ARG;
    int32_t bodies = (int32_t)bodies64;

    double* centres = alloc_zeroed(3 * (size_t)bodies, sizeof *centres);
    if (!centres) return DVI_ERR_NOMEM;
    int32_t b = 0;
    for (int64_t k = 0; k < nz; ++k) {
        for (int64_t j = 0; j < ny; ++j) {
            for (int64_t i = 0; i < nx; ++i) {
                if ((i + j + k) % 2 != 0) continue;
                centres[3 * (size_t)b + 0] = radius + s * (double)i;
                centres[3 * (size_t)b + 1] = radius + s * (double)j;
                centres[3 * (size_t)b + 2] = radius + s * (double)k;
                ++b;
            }
        }
    }
    const double lo[3] = {0.0, 0.0, 0.0};
    const double hi[3] = {2.0 * radius + s * (double)(nx - 1), 2.0 * radius + s * (double)(ny - 1),
                          2.0 * radius + s * (double)(nz - 1)};
    gen_grid grid;
    dvi_status st = grid_build(&grid, centres, bodies, lo, hi, 2.0 * radius * (1.0 + 1e-6));
    if (st != DVI_OK) {
        free(centres);
        return st;
    }
    const double touch = 2.0 * radius + tol, touch2 = touch * touch;

    /* pass 1: count contacts */
    int64_t contacts = 0;
    int32_t nb[GEN_MAX_NEIGHBOURS];
    bool walls[5];
    for (int32_t i = 0; i < bodies; ++i) {
        int cnt = grid_neighbours(&grid, centres, i, touch2, nb);
        if (cnt < 0) {
            grid_free(&grid);
            free(centres);
            return DVI_ERR_NUMERIC;
        }
        contacts += cnt + wall_contacts(centres + 3 * (size_t)i, radius, lo, hi, tol, walls);
    }
    /* the grid search must find exactly the lattice contacts */
    if (contacts != expected || 36 * contacts > GEN_MAX_INT32) {
        grid_free(&grid);
        free(centres);
        return DVI_ERR_NUMERIC;
    }

    gen_asm a;
    st = asm_begin(&a, out, "granular", bodies, 3 * contacts, contacts);
    double* w = st == DVI_OK ? alloc_zeroed(6 * (size_t)bodies, sizeof *w) : NULL;
    double* masses = st == DVI_OK ? alloc_zeroed((size_t)bodies, sizeof *masses) : NULL;
    if (st != DVI_OK || !w || !masses) {
        free(w);
        free(masses);
        grid_free(&grid);
        free(centres);
        dvi_gen_free(out);
        return st != DVI_OK ? st : DVI_ERR_NOMEM;
    }
    gen_rng rng = {seed};
    for (int32_t i = 0; i < bodies; ++i) {
        set_inv_mass_diag(out->inv_mass, i, mass, inertia, inertia, inertia);
        masses[i] = mass;
        for (int k = 0; k < 3; ++k) w[6 * (size_t)i + k] = rng_range(&rng, -vmax, vmax);
        for (int k = 3; k < 6; ++k) w[6 * (size_t)i + k] = rng_range(&rng, -wmax, wmax);
    }

    /* pass 2: assemble. Wall normals point from the wall into the box. */
    static const double wall_n[5][3] = {{0, 0, 1}, {1, 0, 0}, {-1, 0, 0}, {0, 1, 0}, {0, -1, 0}};
    for (int32_t i = 0; i < bodies; ++i) {
        const double* ci = centres + 3 * (size_t)i;
        wall_contacts(ci, radius, lo, hi, tol, walls);
        for (int q = 0; q < 5; ++q) {
            if (!walls[q]) continue;
            double t1[3], t2[3], x[3];
            tangent_basis(wall_n[q], t1, t2);
            for (int k = 0; k < 3; ++k) x[k] = ci[k] - radius * wall_n[q][k];
            asm_contact(&a, -1, ci, i, ci, x, wall_n[q], t1, t2, mu, 0.0);
        }
        int cnt = grid_neighbours(&grid, centres, i, touch2, nb);
        for (int q = 0; q < cnt; ++q) {
            const double* cj = centres + 3 * (size_t)nb[q];
            double n[3], t1[3], t2[3], x[3];
            double d[3] = {cj[0] - ci[0], cj[1] - ci[1], cj[2] - ci[2]};
            double len = sqrt(dot3(d, d));
            for (int k = 0; k < 3; ++k) n[k] = d[k] / len;
            tangent_basis(n, t1, t2);
            for (int k = 0; k < 3; ++k) x[k] = ci[k] + radius * n[k];
            asm_contact(&a, i, ci, nb[q], cj, x, n, t1, t2, mu, 0.0);
        }
    }
    add_gravity_step(out->inv_mass, bodies, masses, g, h, w);
    asm_finish(&a, w);
    free(w);
    free(masses);
    grid_free(&grid);
    free(centres);
    return DVI_OK;
}

/* ---------------------------------------------------------------------------
 * random
 * ------------------------------------------------------------------------- */

/* Random unit vector (rejection sampling in the unit ball). */
static void random_unit(gen_rng* rng, double v[3]) {
    for (;;) {
        for (int k = 0; k < 3; ++k) v[k] = rng_range(rng, -1.0, 1.0);
        double l2 = dot3(v, v);
        if (l2 > 1e-4 && l2 <= 1.0) {
            double l = sqrt(l2);
            for (int k = 0; k < 3; ++k) v[k] /= l;
            return;
        }
    }
}

/* Random SPD 6×6 block Q diag(λ) Qᵀ, λ in [0.5, 2], exactly symmetric. */
static void random_spd6(gen_rng* rng, double out[36]) {
    double q[6][6]; /* rows are orthonormal vectors */
    for (int i = 0; i < 6; ++i) {
        for (;;) {
            for (int k = 0; k < 6; ++k) q[i][k] = rng_range(rng, -1.0, 1.0);
            /* Gram–Schmidt twice against the previous rows */
            for (int pass = 0; pass < 2; ++pass) {
                for (int j = 0; j < i; ++j) {
                    double d = 0.0;
                    for (int k = 0; k < 6; ++k) d += q[i][k] * q[j][k];
                    for (int k = 0; k < 6; ++k) q[i][k] -= d * q[j][k];
                }
            }
            double l2 = 0.0;
            for (int k = 0; k < 6; ++k) l2 += q[i][k] * q[i][k];
            if (l2 > 1e-6) {
                double l = sqrt(l2);
                for (int k = 0; k < 6; ++k) q[i][k] /= l;
                break;
            }
        }
    }
    double lambda[6];
    for (int i = 0; i < 6; ++i) lambda[i] = rng_range(rng, 0.5, 2.0);
    for (int r = 0; r < 6; ++r) {
        for (int c = r; c < 6; ++c) {
            double s = 0.0;
            for (int i = 0; i < 6; ++i) s += q[i][r] * lambda[i] * q[i][c];
            out[r * 6 + c] = s;
            out[c * 6 + r] = s;
        }
    }
}

dvi_status dvi_gen_random(int32_t bodies, int32_t contacts, int32_t bilateral, uint64_t seed,
                          dvi_gen_problem* out) {
    if (!out) return DVI_ERR_INVALID_ARG;
    memset(out, 0, sizeof *out);
    if (bodies < 0 || contacts < 0 || bilateral < 0 || (int64_t)bilateral > 6 * (int64_t)bodies ||
        (contacts > 0 && bodies < 1)) {
        return DVI_ERR_INVALID_ARG;
    }
    int64_t rows = (int64_t)bilateral + 3 * (int64_t)contacts;
    int64_t nblocks = (int64_t)bilateral + contacts;
    gen_asm a;
    dvi_status st = asm_begin(&a, out, "random", bodies, rows, nblocks);
    if (st != DVI_OK) return st;
    double* w = alloc_zeroed(6 * (size_t)bodies, sizeof *w);
    double* centres = alloc_zeroed(3 * (size_t)bodies, sizeof *centres);
    if (!w || !centres) {
        free(w);
        free(centres);
        dvi_gen_free(out);
        return DVI_ERR_NOMEM;
    }
    gen_rng rng = {seed};
    for (int32_t b = 0; b < bodies; ++b) {
        random_spd6(&rng, out->inv_mass + 36 * (size_t)b);
        for (int k = 0; k < 3; ++k) centres[3 * (size_t)b + k] = rng_range(&rng, -1.0, 1.0);
        for (int k = 0; k < 6; ++k) w[6 * (size_t)b + k] = rng_range(&rng, -1.0, 1.0);
    }
    /* bilateral rows: row i acts on body i mod bodies (≤ 6 rows per body, so
     * the rows are independent with probability one), half of them also on a
     * second body */
    for (int32_t i = 0; i < bilateral; ++i) {
        int32_t pa = i % bodies, pb = -1;
        double ea[6], eb[6] = {0};
        for (int k = 0; k < 6; ++k) ea[k] = rng_range(&rng, -1.0, 1.0);
        if (bodies >= 2 && rng_unit(&rng) < 0.5) {
            pb = rng_index(&rng, bodies - 1);
            if (pb >= pa) pb++;
            for (int k = 0; k < 6; ++k) eb[k] = rng_range(&rng, -1.0, 1.0);
        }
        asm_bilateral(&a, pa, ea, pb, eb);
    }
    for (int32_t c = 0; c < contacts; ++c) {
        int32_t bb = rng_index(&rng, bodies), ba = -1;
        if (bodies >= 2 && rng_unit(&rng) >= 0.3) {
            ba = rng_index(&rng, bodies - 1);
            if (ba >= bb) ba++;
        }
        double n[3], t1[3], t2[3], u1[3], u2[3], x[3];
        random_unit(&rng, n);
        tangent_basis(n, u1, u2);
        double angle = rng_range(&rng, 0.0, 2.0 * GEN_PI), ca = cos(angle), sa = sin(angle);
        for (int k = 0; k < 3; ++k) {
            t1[k] = ca * u1[k] + sa * u2[k];
            t2[k] = -sa * u1[k] + ca * u2[k];
        }
        const double* cb = centres + 3 * (size_t)bb;
        for (int k = 0; k < 3; ++k) x[k] = cb[k] + rng_range(&rng, -0.5, 0.5);
        double mu = rng_range(&rng, 0.1, 1.0);
        double gap = rng_unit(&rng) < 1.0 / 3.0 ? rng_range(&rng, 0.0, 0.5) : 0.0;
        const double* cap = ba >= 0 ? centres + 3 * (size_t)ba : cb;
        asm_contact(&a, ba, cap, bb, cb, x, n, t1, t2, mu, gap);
    }
    asm_finish(&a, w);
    free(w);
    free(centres);
    return DVI_OK;
}
