/* dvicontact — the soil contact model (SCM, <dvi/terrain.h>): a deformable
 * soil grid acting on bodies as a force element.
 *
 * Each step (scm_apply):
 *   1. every shape of the bodies the soil acts on is put into the patch's
 *      frame; the nodes under the box of its part below the highest node
 *      (extent_below) cast a ray up along the soil normal, from below the
 *      shape, through the shape class's ray routine; a
 *      hit below the node's plastic surface (initial height − plastic
 *      sinkage) is a contact. A node hit by two shapes keeps the lower hit.
 *   2. the contact nodes are split into connected patches (4-neighbours);
 *      each patch's b = 2A/P, A and P the area and perimeter of the convex
 *      hull of its nodes' cells (Δ × Δ squares about the nodes): the width
 *      of a long strip, the radius of a disc, half the side of a square.
 *   3. each contact node: the Reuss–Prandtl update (Horvat 2024, eqs
 *      5.81–5.92): trial σ = k_e (s − s_p); above the yield pressure (and
 *      Bekker's) it flows plastically onto σ = (k_c/b + k_φ) sⁿ; damping
 *      σ + r·v_c (5.93, v_c the compression speed, σ kept ≥ 0); shear
 *      τ = (c + σ tan φ) q, q a vector in the soil's plane that loads along
 *      Janosi's 1 − e^(−j/K) while the body's surface slides over the node
 *      one way and unloads elastically when it slides back (shear_update),
 *      kept while the node stays in contact. The node's force: the
 *      pressure σ on the cell's projected area Δ² along the shape's
 *      surface normal m (into the body), scaled so that its component
 *      along the soil normal is σΔ² (f = σΔ² m/m_z,
 *      Bekker's pressure acting on the projected area; the horizontal part
 *      is the compaction resistance of a wheel; a face steeper than 60° is
 *      pressed along the soil normal), plus the shear τΔ² in the soil's
 *      plane against q.
 *   4. nodes in contact last step and not now spring back: their elastic
 *      sinkage and shear go to zero.
 *   5. optionally, bulldozing (bulldoze): the step's plastic flow heaped on
 *      each patch's rim, then eroded to the angle of repose.
 * Forces are summed per body in the order of the hits (bodies in world
 * order, shapes in order, nodes row by row), serially: results do not
 * depend on the thread count.
 *
 * Storage: the touched nodes in one array (first-touched order) and an
 * open-addressing hash table from (i, j) to the array index (the key held
 * in the slot); the step's hits have a table of their own for the patch
 * search. All of them only grow, so after warm-up a step allocates
 * nothing. */
#include "dvi/terrain.h"

#include "alloc.h"
#include "bytes_le.h"
#include "collision.h"
#include "math3.h"
#include "world_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SCM_NAME "scm"
#define PI 3.14159265358979323846
#define MIN_NORMAL_Z 0.5 /* cos 60°: a steeper surface is pressed along the soil normal */

typedef struct scm_node {
    int32_t i, j;
    double level_init, level, sp, se, sigma, sigma_yield, shear[2]; /* shear: τ/τ_max in the soil's plane */
    uint32_t stamp; /* the step in which hit is valid */
    int32_t hit;    /* index into the step's hits */
    uint32_t moved; /* the step in which bulldozing took it into its domain */
    uint8_t contact;
} scm_node;

typedef struct scm_slot {
    uint64_t key;
    int32_t index;
} scm_slot;

typedef struct scm_hit {
    int32_t node;
    int32_t slot;   /* the body's slot in the step's force sums */
    int32_t patch;
    double z;       /* patch frame */
    double m[3];    /* unit normal into the body, patch frame */
    double flow;    /* plastic sinkage added this step (bulldozing moves it); < 0: not a contact */
} scm_hit;

typedef struct scm_body {
    dvi_body_id id;
    double com[3], v[3], w[3];
    double f[3], t[3];
    double sink_max;
    int32_t hits;
} scm_body;

struct dvi_scm {
    dvi_world* world;
    dvi_scm_def def;      /* bodies and heights point to the copies below */
    dvi_body_id* bodies;
    double* heights;
    double hmax;
    int32_t nx, ny;
    double R[9];          /* patch frame → world, row-major */
    double tan_phi;
    /* nodes and the hash table */
    scm_node* nodes;
    size_t node_cap;
    int64_t node_count;
    scm_slot* table;      /* (i, j) → node index (−1: empty) */
    size_t table_cap;     /* power of two */
    scm_slot* hitmap;     /* (i, j) → the step's hit index, rebuilt every step */
    size_t hitmap_cap;
    /* the step's work arrays (grow only) */
    uint32_t stamp;
    scm_hit* hits;
    size_t hit_cap;
    int64_t hit_count;
    int32_t* contacts;    /* nodes in contact after the last step */
    size_t contact_cap;
    int64_t contact_count;
    int32_t* queue;
    size_t queue_cap;
    int32_t* pts;         /* hull candidates: 2 ints each, in Δ/2 units */
    size_t pts_cap;
    double* patch_b;
    size_t patch_cap;
    scm_body* slots;
    size_t slot_cap;
    int32_t slot_count;   /* slots of the last step */
    /* bulldozing: the step's rim and erosion domain (node, patch, ring) */
    int32_t* rim;
    size_t rim_cap;
    double* patch_flow;   /* per patch: the volume to move, then per rim node */
    size_t patch_flow_cap;
    int32_t* patch_rim;   /* per patch: its rim nodes */
    size_t patch_rim_cap;
    double tan_repose;
    dvi_scm_stats stats;
};

/* ---- the hash table ---- */

static uint64_t node_key(int32_t i, int32_t j)
{
    return ((uint64_t)(uint32_t)i << 32) | (uint32_t)j;
}

static size_t key_hash(uint64_t k, size_t mask)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    k *= 0xc4ceb9fe1a85ec53ull;
    k ^= k >> 33;
    return (size_t)k & mask;
}

static int32_t slot_find(const scm_slot* t, size_t cap, uint64_t k)
{
    if (!t) return -1;
    const size_t mask = cap - 1;
    for (size_t h = key_hash(k, mask);; h = (h + 1) & mask) {
        if (t[h].index < 0) return -1;
        if (t[h].key == k) return t[h].index;
    }
}

static void slot_put(scm_slot* t, size_t cap, uint64_t k, int32_t index)
{
    const size_t mask = cap - 1;
    size_t h = key_hash(k, mask);
    while (t[h].index >= 0) h = (h + 1) & mask;
    t[h].key = k;
    t[h].index = index;
}

static void slots_clear(scm_slot* t, size_t cap)
{
    for (size_t h = 0; h < cap; h++) t[h].index = -1;
}

static int32_t find_node(const dvi_scm* s, int32_t i, int32_t j)
{
    return slot_find(s->table, s->table_cap, node_key(i, j));
}

static bool table_rebuild(dvi_scm* s, size_t cap)
{
    scm_slot* t = malloc(cap * sizeof *t);
    if (!t) return false;
    slots_clear(t, cap);
    for (int64_t n = 0; n < s->node_count; n++)
        slot_put(t, cap, node_key(s->nodes[n].i, s->nodes[n].j), (int32_t)n);
    free(s->table);
    s->table = t;
    s->table_cap = cap;
    return true;
}

static double initial_height(const dvi_scm* s, int32_t i, int32_t j)
{
    return s->heights ? s->heights[(size_t)j * (size_t)(s->nx + 1) + (size_t)i] : 0.0;
}

/* The node (i, j), added if new; −1 (message set) when the store is full or
 * out of memory. */
static int32_t add_node(dvi_scm* s, int32_t i, int32_t j)
{
    if (s->node_count >= s->def.max_nodes) {
        dvi_error_report(DVI_ERR_INVALID_ARG,
                         "SCM soil: more than max_nodes = %lld touched nodes (node (%d, %d) would be one more); "
                         "raise max_nodes or coarsen the grid",
                         (long long)s->def.max_nodes, (int)i, (int)j);
        return -1;
    }
    if ((size_t)(s->node_count + 1) * 2 > s->table_cap &&
        !table_rebuild(s, s->table_cap ? 2 * s->table_cap : 1024)) {
        dvi_error_report(DVI_ERR_NOMEM, "SCM soil: out of memory for the node table");
        return -1;
    }
    if (!base_mem_grow(NULL, (void**)&s->nodes, &s->node_cap, (size_t)s->node_count + 1, sizeof *s->nodes, 256)) {
        dvi_error_report(DVI_ERR_NOMEM, "SCM soil: out of memory for the nodes");
        return -1;
    }
    int32_t n = (int32_t)s->node_count++;
    scm_node* d = &s->nodes[n];
    memset(d, 0, sizeof *d);
    d->i = i, d->j = j;
    d->level_init = d->level = initial_height(s, i, j);
    d->hit = -1;
    slot_put(s->table, s->table_cap, node_key(i, j), n);
    return n;
}

/* ---- the convex hull of a patch's cells (Andrew's monotone chain, exact
 * in integers) ---- */

static int cmp_pt(const void* a, const void* b)
{
    const int32_t *p = a, *q = b;
    if (p[0] != q[0]) return p[0] < q[0] ? -1 : 1;
    return (p[1] > q[1]) - (p[1] < q[1]);
}

static int64_t cross3(const int32_t* o, const int32_t* a, const int32_t* b)
{
    return (int64_t)(a[0] - o[0]) * (b[1] - o[1]) - (int64_t)(a[1] - o[1]) * (b[0] - o[0]);
}

/* pts[0..2n) sorted and compacted in place into the hull (counter-clockwise);
 * area (in units²) and perimeter (in units) of it. */
static void hull(int32_t* pts, int64_t n, int32_t* h, double* area, double* perimeter)
{
    qsort(pts, (size_t)n, 2 * sizeof(int32_t), cmp_pt);
    int64_t k = 0;
    for (int64_t i = 0; i < n; i++) {
        while (k >= 2 && cross3(&h[2 * (k - 2)], &h[2 * (k - 1)], &pts[2 * i]) <= 0) k--;
        h[2 * k] = pts[2 * i], h[2 * k + 1] = pts[2 * i + 1], k++;
    }
    for (int64_t i = n - 2, lo = k + 1; i >= 0; i--) {
        while (k >= lo && cross3(&h[2 * (k - 2)], &h[2 * (k - 1)], &pts[2 * i]) <= 0) k--;
        h[2 * k] = pts[2 * i], h[2 * k + 1] = pts[2 * i + 1], k++;
    }
    k--; /* the last point repeats the first */
    int64_t a2 = 0;
    double p = 0.0;
    for (int64_t i = 0; i < k; i++) {
        const int32_t* a = &h[2 * i];
        const int32_t* b = &h[2 * ((i + 1) % k)];
        a2 += (int64_t)a[0] * b[1] - (int64_t)b[0] * a[1];
        p += hypot((double)(b[0] - a[0]), (double)(b[1] - a[1]));
    }
    *area = 0.5 * (double)a2;
    *perimeter = p;
}

/* ---- the step ---- */

static bool grow(void** p, size_t* cap, size_t n, size_t elem)
{
    return base_mem_grow(NULL, p, cap, n, elem, 64);
}

static dvi_status nomem(void)
{
    return dvi_error_report(DVI_ERR_NOMEM, "SCM soil: out of memory");
}

static double seconds_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The geom of shape k of a body, in the patch frame. */
static bool shape_geom(const dvi_scm* s, const dvi_shape_info* si, const double bp[3], const double bR[9], col_geom* g)
{
    memset(g, 0, sizeof *g);
    g->type = si->type;
    g->radius = si->radius;
    g->half_length = si->half_length;
    for (int k = 0; k < 3; k++) g->half[k] = si->half_extents[k];
    double Rw[9], pw[3], d[3];
    m3_mul(Rw, bR, si->offset_rotation);
    m3_mulv(pw, bR, si->offset_position);
    v3_add(pw, pw, bp);
    v3_sub(d, pw, s->def.origin);
    m3_tmulv(g->pos, s->R, d);
    /* rot = Rᵀ Rw */
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++)
            g->rot[3 * r + c] = s->R[r] * Rw[c] + s->R[3 + r] * Rw[3 + c] + s->R[6 + r] * Rw[6 + c];
    col_geom_update(g);
    return true;
}

static const char* body_label(char* buf, size_t n, int32_t index)
{
    snprintf(buf, n, "bodies[%d]", (int)index);
    return buf;
}

/* The support value max_{p ∈ shape} d·p (d need not be unit). */
static double support(const col_geom* g, const col_shape_class* cls, const double d[3])
{
    double p[3];
    cls->core_support(g, d, p);
    return v3_dot(d, p) + cls->margin(g) * v3_norm(d);
}

/* An upper bound of max {e·p : p in the shape, p_z ≤ h} (e horizontal,
 * unit), by weak duality: for every λ ≥ 0 it is at most
 * support(e − λ z) + λh; the smallest of these over a golden-section
 * search in the angle of (e − λ z). Every value tried is a bound, so the
 * result is one whatever the search's accuracy. */
static double extent_below(const col_geom* g, const col_shape_class* cls, const double e[2], double h)
{
    double best = INFINITY;
    double a = 0.0, b = 0.5 * PI * (1.0 - 1e-9);
    const double phi = 0.5 * (sqrt(5.0) - 1.0);
    double xs[2], fs[2];
    for (int k = 0; k < 2; k++) {
        xs[k] = k == 0 ? b - phi * (b - a) : a + phi * (b - a);
        double c = cos(xs[k]), sn = sin(xs[k]);
        double d[3] = {c * e[0], c * e[1], -sn};
        fs[k] = (support(g, cls, d) + sn * h) / c;
        if (fs[k] < best) best = fs[k];
    }
    for (int it = 0; it < 14; it++) {
        int k = fs[0] < fs[1] ? 0 : 1; /* keep the side of the smaller value */
        if (k == 0) {
            b = xs[1], xs[1] = xs[0], fs[1] = fs[0];
            xs[0] = b - phi * (b - a);
        } else {
            a = xs[0], xs[0] = xs[1], fs[0] = fs[1];
            xs[1] = a + phi * (b - a);
        }
        const int n = k == 0 ? 0 : 1;
        double c = cos(xs[n]), sn = sin(xs[n]);
        double d[3] = {c * e[0], c * e[1], -sn};
        fs[n] = (support(g, cls, d) + sn * h) / c;
        if (fs[n] < best) best = fs[n];
    }
    return best;
}

/* Casts the rays of one shape; hits into s->hits. */
static dvi_status cast_shape(dvi_scm* s, const col_geom* g, const col_shape_class* cls, int32_t slot)
{
    const double D = s->def.spacing;
    if (g->aabb_min[2] >= s->hmax) return DVI_OK; /* above every node */
    /* the box of the part of the shape below the highest node */
    double bx[4] = {g->aabb_min[0], g->aabb_max[0], g->aabb_min[1], g->aabb_max[1]};
    if (g->aabb_max[2] > s->hmax && cls->core_support) {
        static const double E[4][2] = {{-1, 0}, {1, 0}, {0, -1}, {0, 1}};
        for (int k = 0; k < 4; k++) {
            double x = extent_below(g, cls, E[k], s->hmax);
            if (k % 2 == 0 && -x > bx[k]) bx[k] = -x;
            if (k % 2 == 1 && x < bx[k]) bx[k] = x;
        }
    }
    double lo_x = ceil(bx[0] / D), hi_x = floor(bx[1] / D);
    double lo_y = ceil(bx[2] / D), hi_y = floor(bx[3] / D);
    if (lo_x < 0 || lo_y < 0 || hi_x > s->nx || hi_y > s->ny) s->stats.shapes_off_patch++;
    if (lo_x < 0) lo_x = 0;
    if (lo_y < 0) lo_y = 0;
    if (hi_x > s->nx) hi_x = s->nx;
    if (hi_y > s->ny) hi_y = s->ny;
    if (lo_x > hi_x || lo_y > hi_y) return DVI_OK;
    const double z0 = g->aabb_min[2] - 1e-3 * D;
    const double u[3] = {g->rot[6], g->rot[7], g->rot[8]}; /* the patch's z in the shape frame */
    for (int32_t j = (int32_t)lo_y; j <= (int32_t)hi_y; j++)
        for (int32_t i = (int32_t)lo_x; i <= (int32_t)hi_x; i++) {
            int32_t n = find_node(s, i, j);
            double top = n >= 0 ? s->nodes[n].level_init - s->nodes[n].sp : initial_height(s, i, j);
            double tmax = top - z0;
            if (tmax <= 0.0) continue;
            s->stats.rays++;
            double d[3] = {i * D - g->pos[0], j * D - g->pos[1], z0 - g->pos[2]}, o[3];
            m3_tmulv(o, g->rot, d);
            double t, nl[3];
            if (!cls->ray(g, o, u, tmax, &t, nl)) continue;
            double z = z0 + t;
            if (z >= top) continue;
            if (n < 0 && (n = add_node(s, i, j)) < 0) return dvi_error_status();
            scm_node* nd = &s->nodes[n];
            double ns[3];
            m3_mulv(ns, g->rot, nl);
            if (nd->stamp == s->stamp && nd->hit >= 0) { /* hit by another shape this step: keep the lower */
                scm_hit* h = &s->hits[nd->hit];
                if (z >= h->z) continue;
                s->slots[h->slot].hits--;
                h->z = z, h->slot = slot;
                v3_scale(h->m, -1.0, ns);
                s->slots[slot].hits++;
                continue;
            }
            if (!grow((void**)&s->hits, &s->hit_cap, (size_t)s->hit_count + 1, sizeof *s->hits)) return nomem();
            scm_hit* h = &s->hits[s->hit_count];
            h->node = n, h->slot = slot, h->patch = -1, h->z = z;
            v3_scale(h->m, -1.0, ns);
            nd->stamp = s->stamp, nd->hit = (int32_t)s->hit_count++;
            s->slots[slot].hits++;
        }
    return DVI_OK;
}

/* The hit at node (i, j) this step, or −1. */
static int32_t hit_at(const dvi_scm* s, int32_t i, int32_t j)
{
    return slot_find(s->hitmap, s->hitmap_cap, node_key(i, j));
}

/* Connected patches of the hits and their b. */
static dvi_status find_patches(dvi_scm* s)
{
    static const int DI[4] = {1, -1, 0, 0}, DJ[4] = {0, 0, 1, -1};
    int32_t patches = 0;
    s->stats.min_b = s->stats.max_b = 0.0;
    if (!grow((void**)&s->queue, &s->queue_cap, (size_t)s->hit_count, sizeof *s->queue)) return nomem();
    /* the step's hits by (i, j), for the neighbours */
    size_t cap = s->hitmap_cap ? s->hitmap_cap : 256;
    while (cap < 2 * (size_t)s->hit_count) cap *= 2;
    if (cap != s->hitmap_cap) {
        scm_slot* t = realloc(s->hitmap, cap * sizeof *t);
        if (!t) return nomem();
        s->hitmap = t, s->hitmap_cap = cap;
    }
    slots_clear(s->hitmap, s->hitmap_cap);
    for (int64_t k = 0; k < s->hit_count; k++) {
        const scm_node* nd = &s->nodes[s->hits[k].node];
        slot_put(s->hitmap, s->hitmap_cap, node_key(nd->i, nd->j), (int32_t)k);
    }
    for (int64_t h0 = 0; h0 < s->hit_count; h0++) {
        if (s->hits[h0].patch >= 0) continue;
        int32_t p = patches++;
        int64_t head = 0, tail = 0, npts = 0;
        s->queue[tail++] = (int32_t)h0;
        s->hits[h0].patch = p;
        while (head < tail) {
            const scm_hit* h = &s->hits[s->queue[head++]];
            const scm_node* nd = &s->nodes[h->node];
            bool open[2] = {false, false}; /* no neighbour at +x, −x */
            for (int k = 0; k < 4; k++) {
                int32_t q = hit_at(s, nd->i + DI[k], nd->j + DJ[k]);
                if (q < 0) {
                    if (k < 2) open[k] = true;
                    continue;
                }
                if (s->hits[q].patch >= 0) continue;
                s->hits[q].patch = p;
                s->queue[tail++] = q;
            }
            /* the hull of the cells is that of the row ends' outer corners */
            if (!open[0] && !open[1]) continue;
            if (!grow((void**)&s->pts, &s->pts_cap, 4 * (size_t)(npts + 8), sizeof *s->pts)) return nomem();
            for (int side = 0; side < 2; side++) {
                if (!open[side]) continue;
                for (int c = 0; c < 2; c++) {
                    s->pts[2 * npts] = 2 * nd->i + (side == 0 ? 1 : -1);
                    s->pts[2 * npts + 1] = 2 * nd->j + (c ? 1 : -1);
                    npts++;
                }
            }
        }
        double area, perim;
        /* the hull goes to the second half of pts */
        hull(s->pts, npts, s->pts + 2 * npts, &area, &perim);
        double b = 2.0 * area / perim * 0.5 * s->def.spacing; /* units of Δ/2 */
        if (!grow((void**)&s->patch_b, &s->patch_cap, (size_t)patches, sizeof *s->patch_b)) return nomem();
        s->patch_b[p] = b;
        if (p == 0 || b < s->stats.min_b) s->stats.min_b = b;
        if (b > s->stats.max_b) s->stats.max_b = b;
    }
    s->stats.patches = patches;
    return DVI_OK;
}

/* The node's shear q = τ/τ_max (a vector in the soil's plane, |q| < 1)
 * after the body's surface slid d = (dx, dy) over it. Elastic predictor at
 * Janosi's initial slope, q + d/K; if that raises |q| the node loads along
 * Janosi's curve, |q| = 1 − (1 − |q|) e^(−Δ/K) for the rise Δ = K(|q + d/K|
 * − |q|), in the predictor's direction (sliding one way from q = 0 this
 * is 1 − e^(−j/K), j the path); otherwise it unloads along the elastic
 * line, so sliding back gives the shear back and the loop between them
 * dissipates. */
static void shear_update(double q[2], double dx, double dy, double K)
{
    const double t0 = q[0] + dx / K, t1 = q[1] + dy / K;
    const double qn = hypot(q[0], q[1]), tn = hypot(t0, t1);
    q[0] = t0, q[1] = t1;
    if (!(tn > qn)) return;
    const double m = qn - (1.0 - qn) * expm1(-(tn - qn)); /* 1 − (1 − |q|) e^(−Δ/K) */
    q[0] = t0 * (m / tn), q[1] = t1 * (m / tn);
}

static void release(scm_node* nd)
{
    nd->se = 0.0;
    nd->sigma = 0.0;
    nd->shear[0] = nd->shear[1] = 0.0;
    nd->level = nd->level_init - nd->sp;
    nd->contact = 0;
}

static void set_level(dvi_scm* s, scm_node* nd)
{
    nd->level = nd->level_init - nd->sp;
    if (nd->level > s->hmax) s->hmax = nd->level;
}

/* Adds node (i, j) to the step's bulldozing domain (ring r) unless it is
 * there, off the grid or under a shape; returns its index or −1 (error:
 * −2, message set). */
static int64_t domain_add(dvi_scm* s, int32_t i, int32_t j, int32_t patch, int32_t ring, int64_t* count)
{
    if (i < 0 || j < 0 || i > s->nx || j > s->ny || hit_at(s, i, j) >= 0) return -1;
    int32_t n = find_node(s, i, j);
    if (n < 0 && (n = add_node(s, i, j)) < 0) return -2;
    scm_node* nd = &s->nodes[n];
    if (nd->moved == s->stamp) return -1;
    nd->moved = s->stamp;
    if (!grow((void**)&s->rim, &s->rim_cap, 3 * (size_t)(*count + 1), sizeof *s->rim)) {
        nomem();
        return -2;
    }
    s->rim[3 * *count] = n, s->rim[3 * *count + 1] = patch, s->rim[3 * *count + 2] = ring;
    return (*count)++;
}

/* Bulldozing: the plastic flow of each patch's nodes this step is heaped
 * evenly on the patch's rim (the nodes next to it, 4-neighbours, not under
 * a shape), then the rim and the rings around it out to
 * erosion_propagations erode: wherever a node stands more than Δ tan(θ_r)
 * above a neighbour, a quarter of the excess moves down, erosion_iterations
 * sweeps a step. Soil volume is conserved (but for flow whose rim would lie
 * off the grid). */
static dvi_status bulldoze(dvi_scm* s)
{
    static const int DI[4] = {1, -1, 0, 0}, DJ[4] = {0, 0, 1, -1};
    const int32_t np = s->stats.patches;
    if (np == 0) return DVI_OK;
    if (!grow((void**)&s->patch_flow, &s->patch_flow_cap, (size_t)np, sizeof *s->patch_flow) ||
        !grow((void**)&s->patch_rim, &s->patch_rim_cap, (size_t)np, sizeof *s->patch_rim))
        return nomem();
    memset(s->patch_flow, 0, (size_t)np * sizeof *s->patch_flow);
    memset(s->patch_rim, 0, (size_t)np * sizeof *s->patch_rim);
    int64_t count = 0;
    for (int64_t k = 0; k < s->hit_count; k++) {
        const scm_hit* h = &s->hits[k];
        if (h->flow < 0.0) continue;
        s->patch_flow[h->patch] += h->flow;
        const int32_t i = s->nodes[h->node].i, j = s->nodes[h->node].j;
        for (int q = 0; q < 4; q++) {
            int64_t r = domain_add(s, i + DI[q], j + DJ[q], h->patch, 0, &count);
            if (r == -2) return dvi_error_status();
            if (r >= 0) s->patch_rim[h->patch]++;
        }
    }
    for (int64_t r = 0; r < count; r++) {
        const int32_t p = s->rim[3 * r + 1];
        scm_node* nd = &s->nodes[s->rim[3 * r]];
        nd->sp -= s->patch_flow[p] / s->patch_rim[p];
        set_level(s, nd);
    }
    /* erosion */
    const double max_step = s->def.spacing * s->tan_repose;
    for (int it = 0; it < s->def.erosion_iterations; it++) {
        for (int64_t r = 0; r < count; r++) {
            const int32_t n = s->rim[3 * r], ring = s->rim[3 * r + 2];
            for (int q = 0; q < 4; q++) {
                const int32_t i = s->nodes[n].i + DI[q], j = s->nodes[n].j + DJ[q];
                if (i < 0 || j < 0 || i > s->nx || j > s->ny || hit_at(s, i, j) >= 0) continue;
                int32_t m = find_node(s, i, j);
                const double lm = m >= 0 ? s->nodes[m].level : initial_height(s, i, j);
                const double excess = s->nodes[n].level - lm - max_step;
                if (excess <= 0.0) continue;
                if (m < 0 || s->nodes[m].moved != s->stamp) { /* a new node of the domain */
                    if (ring >= s->def.erosion_propagations) continue;
                    int64_t e = domain_add(s, i, j, -1, ring + 1, &count);
                    if (e == -2) return dvi_error_status();
                    m = find_node(s, i, j);
                }
                const double move = 0.25 * excess;
                s->nodes[n].sp += move;
                s->nodes[m].sp -= move;
                set_level(s, &s->nodes[n]);
                set_level(s, &s->nodes[m]);
            }
        }
    }
    return DVI_OK;
}

static dvi_status scm_apply(void* self, dvi_world* w, double h)
{
    dvi_scm* s = self;
    const double t_start = seconds_now();
    const dvi_scm_def* d = &s->def;
    s->stamp++;
    if (s->stamp == 0) { /* wrapped: clear every stamp */
        for (int64_t n = 0; n < s->node_count; n++) s->nodes[n].stamp = 0;
        s->stamp = 1;
    }
    s->hit_count = 0;
    s->stats.rays = 0;
    s->stats.shapes_off_patch = 0;
    s->stats.contacts = 0;
    s->stats.patches = 0;
    /* 1. the bodies and their rays */
    const int32_t nb = d->bodies ? d->body_count : dvi_world_body_count(w);
    if (!grow((void**)&s->slots, &s->slot_cap, (size_t)nb + 1, sizeof *s->slots)) return nomem();
    for (int32_t b = 0; b < nb; b++) {
        scm_body* sb = &s->slots[b];
        memset(sb, 0, sizeof *sb);
        dvi_status st = d->bodies ? DVI_OK : dvi_world_body_at(w, b, &sb->id);
        if (d->bodies) sb->id = d->bodies[b];
        dvi_body_info info;
        if (st == DVI_OK) st = dvi_body_get_info(w, sb->id, &info);
        if (st != DVI_OK) return dvi_error_report(st, "SCM soil: body %d of its list no longer exists", (int)b);
        if (info.type == DVI_BODY_FIXED || info.shape_count == 0) continue;
        double q[4], R[9];
        dvi_body_get_position(w, sb->id, sb->com);
        dvi_body_get_orientation(w, sb->id, q);
        dvi_body_get_velocity(w, sb->id, sb->v);
        dvi_body_get_angular_velocity(w, sb->id, sb->w);
        q_to_m3(R, q);
        for (int32_t k = 0; k < info.shape_count; k++) {
            dvi_shape_info si;
            if ((st = dvi_body_get_shape(w, sb->id, k, &si)) != DVI_OK) return st;
            const col_shape_class* cls = col_shape_class_of(si.type);
            if (!cls || !cls->ray) {
                char name[32];
                return dvi_error_report(DVI_ERR_UNSUPPORTED, "SCM soil: %s shape %d (%s) cannot be ray-cast",
                                        body_label(name, sizeof name, b), (int)k, cls ? cls->name : "unknown kind");
            }
            col_geom g;
            shape_geom(s, &si, sb->com, R, &g);
            bool finite = true;
            for (int c = 0; c < 3; c++) finite = finite && isfinite(g.aabb_min[c]) && isfinite(g.aabb_max[c]);
            if (!finite) {
                char name[32];
                return dvi_error_report(DVI_ERR_NUMERIC, "SCM soil: %s shape %d: pose not finite",
                                        body_label(name, sizeof name, b), (int)k);
            }
            if ((st = cast_shape(s, &g, cls, b)) != DVI_OK) return st;
        }
    }
    s->slot_count = nb;
    /* 2. patches */
    dvi_status st = find_patches(s);
    if (st != DVI_OK) return st;
    /* 3. the nodes' update and forces */
    const double D2 = d->spacing * d->spacing;
    int64_t nc = 0;
    if (!grow((void**)&s->queue, &s->queue_cap, (size_t)s->hit_count + (size_t)s->contact_count, sizeof *s->queue))
        return nomem();
    for (int64_t k = 0; k < s->hit_count; k++) {
        const scm_hit* ht = &s->hits[k];
        scm_node* nd = &s->nodes[ht->node];
        scm_body* sb = &s->slots[ht->slot];
        const double sink = nd->level_init - ht->z;
        double sigma = d->elastic_stiffness * (sink - nd->sp);
        s->hits[k].flow = -1.0;
        if (sigma <= 0.0) continue; /* not reached: rays stop at the plastic surface */
        const double sp_before = nd->sp;
        if (sigma > nd->sigma_yield) {
            const double b = s->patch_b[ht->patch];
            const double bekker = (b > 0.0 ? d->k_c / b : 0.0) + d->k_phi;
            /* soil heaped above its initial height (bulldozing) bears nothing */
            const double sb_ = sink <= 0.0 ? 0.0 : bekker * (d->n == 1.0 ? sink : pow(sink, d->n));
            if (sb_ < sigma) { /* plastic flow onto Bekker's curve */
                sigma = sb_;
                nd->sigma_yield = sigma;
                double sp = sink - sigma / d->elastic_stiffness;
                if (sp > nd->sp) nd->sp = sp;
            }
        }
        s->hits[k].flow = nd->sp - sp_before;
        nd->se = sink - nd->sp;
        nd->level = ht->z;
        if (sink > sb->sink_max) sb->sink_max = sink;
        /* the body's velocity at the node, in the patch frame */
        double pl[3] = {nd->i * d->spacing, nd->j * d->spacing, ht->z}, pw[3], r[3], vw[3], v[3];
        m3_mulv(pw, s->R, pl);
        v3_add(pw, pw, d->origin);
        v3_sub(r, pw, sb->com);
        v3_cross(vw, sb->w, r);
        v3_add(vw, vw, sb->v);
        m3_tmulv(v, s->R, vw);
        double sig = sigma + d->damping * (-v[2]);
        if (sig < 0.0) sig = 0.0;
        /* a face steeper than 60° (a wheel's flank, a cap met edge-on) is
         * pressed along the soil normal instead */
        static const double UP[3] = {0.0, 0.0, 1.0};
        const double* m = ht->m[2] >= MIN_NORMAL_Z ? ht->m : UP;
        shear_update(nd->shear, v[0] * h, v[1] * h, d->janosi_shear);
        const double tau_max = d->cohesion + sig * s->tan_phi;
        nd->sigma = sig;
        double fl[3], fw[3], tw[3];
        v3_scale(fl, sig / m[2], m); /* σ on the projected area: σ along the soil normal */
        fl[0] -= tau_max * nd->shear[0], fl[1] -= tau_max * nd->shear[1];
        v3_scale(fl, D2, fl);
        m3_mulv(fw, s->R, fl);
        v3_cross(tw, r, fw);
        v3_add(sb->f, sb->f, fw);
        v3_add(sb->t, sb->t, tw);
        nd->contact = 2; /* in contact now (1: in the last step's list) */
        s->queue[nc++] = ht->node;
    }
    /* 4. nodes that left contact spring back */
    for (int64_t k = 0; k < s->contact_count; k++) {
        scm_node* nd = &s->nodes[s->contacts[k]];
        if (nd->contact == 1) release(nd);
    }
    if (!grow((void**)&s->contacts, &s->contact_cap, (size_t)nc, sizeof *s->contacts)) return nomem();
    for (int64_t k = 0; k < nc; k++) {
        s->contacts[k] = s->queue[k];
        s->nodes[s->queue[k]].contact = 1;
    }
    s->contact_count = nc;
    s->stats.contacts = nc;
    if (d->bulldozing && (st = bulldoze(s)) != DVI_OK) return st;
    s->stats.nodes_touched = s->node_count;
    for (int32_t b = 0; b < nb; b++) {
        const scm_body* sb = &s->slots[b];
        if (sb->hits == 0) continue;
        if ((st = dvi_body_add_step_force(w, sb->id, sb->f, sb->t)) != DVI_OK) return st;
    }
    s->stats.seconds = seconds_now() - t_start;
    return DVI_OK;
}

/* ---- state ---- */

#define STATE_MAGIC 0x324d4353u /* "SCM2" */
#define NODE_BYTES (4 + 4 + 8 * 8 + 1)

static size_t scm_state_size(const void* self)
{
    const dvi_scm* s = self;
    return 4 + 8 + (size_t)s->node_count * NODE_BYTES;
}

static void scm_save(const void* self, void* out)
{
    const dvi_scm* s = self;
    unsigned char* p = out;
    le_put_u32(p, STATE_MAGIC), p += 4;
    le_put_u64(p, (uint64_t)s->node_count), p += 8;
    for (int64_t n = 0; n < s->node_count; n++) {
        const scm_node* nd = &s->nodes[n];
        le_put_u32(p, (uint32_t)nd->i), p += 4;
        le_put_u32(p, (uint32_t)nd->j), p += 4;
        le_put_f64_next(&p, nd->level_init);
        le_put_f64_next(&p, nd->level);
        le_put_f64_next(&p, nd->sp);
        le_put_f64_next(&p, nd->se);
        le_put_f64_next(&p, nd->sigma);
        le_put_f64_next(&p, nd->sigma_yield);
        le_put_f64_next(&p, nd->shear[0]);
        le_put_f64_next(&p, nd->shear[1]);
        *p++ = nd->contact;
    }
}

static dvi_status scm_load(void* self, const void* data, size_t size)
{
    dvi_scm* s = self;
    const unsigned char* p = data;
    if (size < 12 || le_get_u32(p) != STATE_MAGIC)
        return dvi_error_report(DVI_ERR_PARSE, "SCM soil: the state is not an SCM state");
    uint64_t count = le_get_u64(p + 4);
    p += 12;
    if (count > (uint64_t)s->def.max_nodes || size != 12 + count * NODE_BYTES)
        return dvi_error_report(DVI_ERR_PARSE, "SCM soil: state of %zu bytes does not hold %llu nodes (max_nodes %lld)",
                                size, (unsigned long long)count, (long long)s->def.max_nodes);
    /* read into a new soil, swapped in only when all of it is good */
    dvi_scm t = {.def = s->def, .nx = s->nx, .ny = s->ny, .heights = s->heights};
    t.def.max_nodes = (int64_t)count;
    int64_t ncontact = 0;
    dvi_status st = DVI_OK;
    for (uint64_t k = 0; k < count && st == DVI_OK; k++) {
        int32_t i = (int32_t)le_get_u32(p), j = (int32_t)le_get_u32(p + 4);
        p += 8;
        if (i < 0 || j < 0 || i > s->nx || j > s->ny || find_node(&t, i, j) >= 0) {
            st = dvi_error_report(DVI_ERR_PARSE, "SCM soil: state node %llu at (%d, %d): off the grid or repeated",
                                  (unsigned long long)k, (int)i, (int)j);
            break;
        }
        int32_t n = add_node(&t, i, j);
        if (n < 0) {
            st = DVI_ERR_NOMEM;
            break;
        }
        scm_node* nd = &t.nodes[n];
        nd->level_init = le_get_f64_next(&p);
        nd->level = le_get_f64_next(&p);
        nd->sp = le_get_f64_next(&p);
        nd->se = le_get_f64_next(&p);
        nd->sigma = le_get_f64_next(&p);
        nd->sigma_yield = le_get_f64_next(&p);
        nd->shear[0] = le_get_f64_next(&p);
        nd->shear[1] = le_get_f64_next(&p);
        nd->contact = *p++;
        const double v[8] = {nd->level_init, nd->level,       nd->sp,       nd->se,
                             nd->sigma,      nd->sigma_yield, nd->shear[0], nd->shear[1]};
        bool ok = nd->contact <= 1 && hypot(nd->shear[0], nd->shear[1]) <= 1.0 + 1e-12;
        for (int q = 0; q < 8; q++) ok = ok && isfinite(v[q]);
        if (!ok) {
            st = dvi_error_report(DVI_ERR_PARSE, "SCM soil: state node %llu at (%d, %d): a value is not finite or out of range",
                                  (unsigned long long)k, (int)i, (int)j);
            break;
        }
        ncontact += nd->contact;
    }
    if (st == DVI_OK && !grow((void**)&t.contacts, &t.contact_cap, (size_t)ncontact + 1, sizeof *t.contacts))
        st = nomem();
    if (st != DVI_OK) {
        free(t.nodes);
        free(t.table);
        free(t.contacts);
        return st;
    }
    t.contact_count = 0;
    for (int64_t n = 0; n < t.node_count; n++)
        if (t.nodes[n].contact) t.contacts[t.contact_count++] = (int32_t)n;
    free(s->nodes);
    free(s->table);
    free(s->contacts);
    s->nodes = t.nodes, s->node_cap = t.node_cap, s->node_count = t.node_count;
    s->table = t.table, s->table_cap = t.table_cap;
    s->contacts = t.contacts, s->contact_cap = t.contact_cap, s->contact_count = t.contact_count;
    s->stats.nodes_touched = s->node_count;
    for (int64_t n = 0; n < s->node_count; n++)
        if (s->nodes[n].level > s->hmax) s->hmax = s->nodes[n].level;
    return DVI_OK;
}

static void scm_destroy(void* self)
{
    dvi_scm* s = self;
    if (!s) return;
    BASE_FREE_ALL(s->bodies, s->heights, s->nodes, s->table, s->hitmap, s->hits, s->contacts, s->queue, s->pts,
                  s->patch_b, s->slots, s->rim, s->patch_flow, s->patch_rim, s);
}

/* name, apply, state_size, save, load, destroy */
static const dvi_force_element_class scm_class = {SCM_NAME, scm_apply, scm_state_size, scm_save, scm_load, scm_destroy};

/* ---- creation and queries ---- */

dvi_scm_def dvi_default_scm_def(void)
{
    dvi_scm_def d;
    memset(&d, 0, sizeof d);
    d.orientation[0] = 1.0;
    d.size[0] = d.size[1] = 1.0;
    d.spacing = 0.02;
    d.k_phi = 0.82e6;
    d.k_c = 0.14e6;
    d.n = 1.0;
    d.cohesion = 0.0;
    d.friction_angle = PI / 6.0;
    d.janosi_shear = 0.01;
    d.elastic_stiffness = 4e7;
    d.damping = 3e4;
    d.max_nodes = DVI_SCM_DEFAULT_MAX_NODES;
    d.bulldozing = false;
    d.erosion_angle = 40.0 * PI / 180.0;
    d.erosion_iterations = 3;
    d.erosion_propagations = 10;
    return d;
}

#define BAD(...) dvi_error_report(DVI_ERR_INVALID_ARG, "dvi_scm_create: " __VA_ARGS__)

static dvi_status check_def(const dvi_scm_def* d, int32_t* nx, int32_t* ny)
{
    for (int k = 0; k < 3; k++)
        if (!isfinite(d->origin[k])) return BAD("origin[%d] is not finite", k);
    double qn = 0.0;
    for (int k = 0; k < 4; k++) {
        if (!isfinite(d->orientation[k])) return BAD("orientation[%d] is not finite", k);
        qn += d->orientation[k] * d->orientation[k];
    }
    if (fabs(qn - 1.0) > 1e-6) return BAD("orientation must be a unit quaternion (|q|² = %g)", qn);
    if (!(d->spacing > 0.0) || !isfinite(d->spacing)) return BAD("spacing must be > 0 (%g m)", d->spacing);
    for (int k = 0; k < 2; k++) {
        if (!(d->size[k] > 0.0) || !isfinite(d->size[k])) return BAD("size[%d] must be > 0 (%g m)", k, d->size[k]);
        double cells = floor(d->size[k] / d->spacing + 0.5);
        if (cells < 1.0) return BAD("size[%d] (%g m) is less than one spacing (%g m)", k, d->size[k], d->spacing);
        if (cells + 1.0 > DVI_SCM_MAX_SIDE)
            return BAD("size[%d]/spacing gives %.0f nodes a side, more than %d", k, cells + 1.0, DVI_SCM_MAX_SIDE);
        *(k == 0 ? nx : ny) = (int32_t)cells;
    }
    if (!(d->k_phi > 0.0) || !isfinite(d->k_phi)) return BAD("k_phi must be > 0 (%g Pa/m^n)", d->k_phi);
    if (!(d->k_c >= 0.0) || !isfinite(d->k_c)) return BAD("k_c must be >= 0 (%g Pa/m^(n-1))", d->k_c);
    if (!(d->n > 0.0 && d->n <= 3.0)) return BAD("n must be in (0, 3] (%g)", d->n);
    if (!(d->cohesion >= 0.0) || !isfinite(d->cohesion)) return BAD("cohesion must be >= 0 (%g Pa)", d->cohesion);
    if (!(d->friction_angle >= 0.0 && d->friction_angle < 0.5 * PI))
        return BAD("friction_angle must be in [0, pi/2) rad (%g)", d->friction_angle);
    if (!(d->janosi_shear > 0.0) || !isfinite(d->janosi_shear))
        return BAD("janosi_shear must be > 0 (%g m)", d->janosi_shear);
    if (!(d->elastic_stiffness > d->k_phi) || !isfinite(d->elastic_stiffness))
        return BAD("elastic_stiffness (%g Pa/m) must exceed k_phi (%g Pa/m^n)", d->elastic_stiffness, d->k_phi);
    if (!(d->damping >= 0.0) || !isfinite(d->damping)) return BAD("damping must be >= 0 (%g Pa s/m)", d->damping);
    if (!(d->erosion_angle > 0.0 && d->erosion_angle < 0.5 * PI))
        return BAD("erosion_angle must be in (0, pi/2) rad (%g)", d->erosion_angle);
    if (d->erosion_iterations < 0 || d->erosion_iterations > 100)
        return BAD("erosion_iterations must be in [0, 100] (%d)", (int)d->erosion_iterations);
    if (d->erosion_propagations < 0 || d->erosion_propagations > 1000)
        return BAD("erosion_propagations must be in [0, 1000] (%d)", (int)d->erosion_propagations);
    if (d->max_nodes < 1 || d->max_nodes > DVI_SCM_MAX_NODES_LIMIT)
        return BAD("max_nodes must be in [1, %d] (%lld)", DVI_SCM_MAX_NODES_LIMIT, (long long)d->max_nodes);
    if (d->body_count < 0 || (d->body_count > 0 && !d->bodies))
        return BAD("bodies: %d bodies listed but no array", (int)d->body_count);
    return DVI_OK;
}

static dvi_status check_body(dvi_world* w, dvi_body_id id, int32_t k, bool listed)
{
    dvi_body_info info;
    if (dvi_body_get_info(w, id, &info) != DVI_OK) return BAD("bodies[%d]: not a body of the world", (int)k);
    if (listed && info.type == DVI_BODY_FIXED)
        return BAD("bodies[%d]: a fixed body (the soil acts on dynamic and kinematic bodies)", (int)k);
    if (info.type == DVI_BODY_FIXED) return DVI_OK;
    for (int32_t s = 0; s < info.shape_count; s++) {
        dvi_shape_info si;
        if (dvi_body_get_shape(w, id, s, &si) != DVI_OK) return BAD("bodies[%d]: shape %d unreadable", (int)k, (int)s);
        const col_shape_class* cls = col_shape_class_of(si.type);
        if (!cls || !cls->ray)
            return dvi_error_report(DVI_ERR_UNSUPPORTED,
                                    "dvi_scm_create: bodies[%d] shape %d: %s cannot be ray-cast against the soil",
                                    (int)k, (int)s, cls ? cls->article : "a shape of unknown kind");
    }
    return DVI_OK;
}

dvi_status dvi_scm_create(dvi_world* w, const dvi_scm_def* def, dvi_scm** out)
{
    if (out) *out = NULL;
    if (!w || !def) return dvi_error_report(DVI_ERR_INVALID_ARG, "dvi_scm_create: world or definition is NULL");
    int32_t nx = 0, ny = 0;
    dvi_status st = check_def(def, &nx, &ny);
    if (st != DVI_OK) return st;
    if (def->heights) {
        size_t count = (size_t)(nx + 1) * (size_t)(ny + 1);
        for (size_t k = 0; k < count; k++)
            if (!isfinite(def->heights[k]))
                return BAD("heights[%zu] (node %zu, %zu) is not finite", k, k % (size_t)(nx + 1), k / (size_t)(nx + 1));
    }
    if (def->bodies) {
        for (int32_t k = 0; k < def->body_count; k++)
            if ((st = check_body(w, def->bodies[k], k, true)) != DVI_OK) return st;
    } else {
        for (int32_t k = 0; k < dvi_world_body_count(w); k++) {
            dvi_body_id id;
            dvi_world_body_at(w, k, &id);
            if ((st = check_body(w, id, k, false)) != DVI_OK) return st;
        }
    }
    dvi_scm* s = calloc(1, sizeof *s);
    if (!s) return nomem();
    s->world = w;
    s->def = *def;
    s->nx = nx, s->ny = ny;
    s->def.bodies = NULL;
    s->def.heights = NULL;
    if (def->body_count > 0) {
        s->bodies = malloc((size_t)def->body_count * sizeof *s->bodies);
        if (!s->bodies) return scm_destroy(s), nomem();
        memcpy(s->bodies, def->bodies, (size_t)def->body_count * sizeof *s->bodies);
        s->def.bodies = s->bodies;
    }
    s->hmax = 0.0;
    if (def->heights) {
        size_t count = (size_t)(nx + 1) * (size_t)(ny + 1);
        s->heights = malloc(count * sizeof *s->heights);
        if (!s->heights) return scm_destroy(s), nomem();
        memcpy(s->heights, def->heights, count * sizeof *s->heights);
        s->def.heights = s->heights;
        s->hmax = s->heights[0];
        for (size_t k = 1; k < count; k++)
            if (s->heights[k] > s->hmax) s->hmax = s->heights[k];
    }
    double q[4] = {def->orientation[0], def->orientation[1], def->orientation[2], def->orientation[3]};
    q_normalize(q);
    q_to_m3(s->R, q);
    s->tan_phi = tan(def->friction_angle);
    s->tan_repose = tan(def->erosion_angle);
    s->stats.nx = nx, s->stats.ny = ny, s->stats.spacing = def->spacing;
    memcpy(s->stats.origin, def->origin, sizeof s->stats.origin);
    memcpy(s->stats.rotation, s->R, sizeof s->stats.rotation);
    if ((st = dvi_world_add_force_element(w, &scm_class, s, NULL)) != DVI_OK) {
        scm_destroy(s);
        return st;
    }
    if (out) *out = s;
    return DVI_OK;
}

static void node_out(const dvi_scm* s, const scm_node* nd, int32_t i, int32_t j, dvi_scm_node* o)
{
    memset(o, 0, sizeof *o);
    if (!nd) {
        o->level_initial = o->level = initial_height(s, i, j);
        return;
    }
    o->touched = true;
    o->contact = nd->contact != 0;
    o->level_initial = nd->level_init;
    o->level = nd->level;
    o->sinkage_plastic = nd->sp;
    o->sinkage_elastic = nd->se;
    o->sinkage = nd->sp + nd->se;
    o->pressure = nd->sigma;
    o->yield_pressure = nd->sigma_yield;
    const double qn = fmin(hypot(nd->shear[0], nd->shear[1]), 1.0 - 0x1p-53); /* saturated: j = 36.7 K */
    o->shear_displacement = -s->def.janosi_shear * log1p(-qn);
}

dvi_status dvi_scm_get_node(const dvi_scm* s, int32_t i, int32_t j, dvi_scm_node* out)
{
    if (!s || !out) return dvi_error_report(DVI_ERR_INVALID_ARG, "dvi_scm_get_node: NULL soil or output");
    if (i < 0 || j < 0 || i > s->nx || j > s->ny)
        return dvi_error_report(DVI_ERR_INVALID_ARG, "dvi_scm_get_node: node (%d, %d) off the grid (0..%d, 0..%d)",
                                (int)i, (int)j, (int)s->nx, (int)s->ny);
    int32_t n = find_node(s, i, j);
    node_out(s, n >= 0 ? &s->nodes[n] : NULL, i, j, out);
    return DVI_OK;
}

dvi_status dvi_scm_touched_node(const dvi_scm* s, int64_t k, int32_t* i, int32_t* j, dvi_scm_node* out)
{
    if (!s) return dvi_error_report(DVI_ERR_INVALID_ARG, "dvi_scm_touched_node: NULL soil");
    if (k < 0 || k >= s->node_count)
        return dvi_error_report(DVI_ERR_INVALID_ARG, "dvi_scm_touched_node: %lld not in [0, %lld)", (long long)k,
                                (long long)s->node_count);
    const scm_node* nd = &s->nodes[k];
    if (i) *i = nd->i;
    if (j) *j = nd->j;
    if (out) node_out(s, nd, nd->i, nd->j, out);
    return DVI_OK;
}

dvi_scm_stats dvi_scm_get_stats(const dvi_scm* s)
{
    dvi_scm_stats z;
    memset(&z, 0, sizeof z);
    return s ? s->stats : z;
}

const dvi_scm* dvi_scm_of_element(const dvi_world* w, int32_t element)
{
    const dvi_force_element_class* cls = NULL;
    void* self = dvi_world_force_element(w, element, &cls);
    return cls == &scm_class ? self : NULL;
}

dvi_status dvi_scm_get_body_contact(const dvi_scm* s, dvi_body_id body, dvi_scm_body_contact* out)
{
    if (!s || !out) return dvi_error_report(DVI_ERR_INVALID_ARG, "dvi_scm_get_body_contact: NULL soil or output");
    memset(out, 0, sizeof *out);
    int32_t slot = -1;
    if (s->def.bodies) {
        for (int32_t k = 0; k < s->def.body_count && slot < 0; k++)
            if (s->def.bodies[k].index1 == body.index1 && s->def.bodies[k].generation == body.generation &&
                s->def.bodies[k].world == body.world)
                slot = k;
    } else {
        slot = wld_body_index(s->world, body);
        if (slot < 0) return dvi_error_report(DVI_ERR_INVALID_ARG, "dvi_scm_get_body_contact: invalid body id");
    }
    if (slot < 0 || slot >= s->slot_count || s->slots[slot].hits == 0) return DVI_OK;
    const scm_body* sb = &s->slots[slot];
    out->contacts = sb->hits;
    out->sinkage_max = sb->sink_max;
    memcpy(out->force, sb->f, sizeof out->force);
    memcpy(out->torque, sb->t, sizeof out->torque);
    return DVI_OK;
}
