/* dvicontact — narrow phase: convex shapes (sphere, box, capsule, cylinder)
 * against static terrain: height fields and one-sided triangle meshes.
 *
 * Everything is computed in the terrain's local frame. The terrain is a set of
 * triangles with outward unit normals n (a height field's cells split along
 * the (i, j)–(i+1, j+1) diagonal, solid below; a mesh's triangles
 * counter-clockwise seen from outside). Contact normals point from the shape
 * into the terrain (≈ −n), Φ is the signed gap, `point` is midway between the
 * two surfaces. sd(x) denotes the shape's signed distance function: exact,
 * convex, with its gradient (the shape's outward normal).
 *
 * Algorithm, per pair:
 *  1. Candidate triangles: those under the shape's AABB inflated by the
 *     envelope — grid cells for a height field, a linear pass with an AABB
 *     reject for a mesh (no per-mesh acceleration structure yet). Since sd is
 *     convex, sd ≥ sd(c) − Σ|∂sd/∂x_i(c)|·half_i over a box of centre c: blocks
 *     of 8 × 8 cells, then cells, then mesh triangles are skipped when this
 *     bound over the region where their contacts could lie exceeds the
 *     envelope. So is a triangle whose plane the shape clears.
 *  2. Face contacts (F), normal −n, when the shape's centre is on the outer
 *     side of the plane (one-sided: nothing from behind a triangle): shape
 *     points projecting inside the triangle — sphere centre, capsule end
 *     centres, box corners, each cylinder cap's deepest rim point (plus 8 rim
 *     samples and the centre of a cap facing the plane within 45°); box edges
 *     clipped to the triangle's prism; cylinder rims crossing the prism when
 *     their deepest point falls outside (penetrating only). The last two are
 *     kept only at a terrain edge that is not flat: there sd has a kink (box
 *     edge, rim) and the edge minima below cannot see an edge lying across a
 *     face, nor a rim dipping across a crease.
 *  3. Terrain-feature contacts, normal ∇sd: each triangle vertex (V) and the
 *     minimum of sd along each strictly convex edge (E) — closed form for the
 *     sphere, otherwise Illinois regula falsi on the slope ∇sd·(b − a) (sd is
 *     convex along a segment: the minimum is global); an edge lying flat
 *     against the shape (e.g. a step edge parallel to a wheel's axle) gives
 *     both ends of the flat part; at a kink the normal is the subgradient
 *     perpendicular to the edge. A V/E point is kept only if the terrain is a
 *     local support point in the contact direction u = −∇sd (no neighbouring
 *     vertex above it along u, across the edge for E), u faces the outside of
 *     one of its triangles, and not all of them are parallel to the contact
 *     plane (flat interior: the face contacts cover it). This removes
 *     internal-edge contacts on flat or concave terrain and duplicates at
 *     shared edges and vertices. Edges whose outcome bounds settle (tangent
 *     lower bound, minimum at an end, passing under the shape's support set
 *     facing the plane) are not searched.
 *  4. Merge points with the same position and normal, then keep at most 8:
 *     the deepest, then farthest-point sampling (distance + normal change).
 *
 * Accuracy: when the shape is apart from the terrain, the smallest Φ is the
 * exact gap (checked against brute force to ~1e-15 m); a penetrating shape
 * always gets contacts.
 *
 * Cost: O(cells under the AABB) for a height field, most of them one bound
 * evaluation per block or cell; O(mesh triangles) for the pass over a mesh,
 * then work on the triangles near the shape (buffered: up to MESH_CAND, for
 * neighbour look-ups in O(buffer) instead of O(mesh)). An edge search takes a
 * few to ~50 evaluations of sd. Measured (5 cm grid, resting on bumpy terrain):
 * 5–15 µs per pair; a box lying flat on a fine grid is the worst case (every
 * triangle under it is in contact). Candidates per pair are capped at CAND_MAX
 * (deepest kept). Nothing is allocated.
 *
 * Features: face points 4·(64·triangle + k) (k: corner, end, rim point,
 * clipped box-edge or rim-crossing end); vertices 4·vertex + 2; edge points
 * 4·hash(vertex pair, end) + 1 (all modulo 2³²). Stable while the same pair
 * of features stays in contact.
 */
#include "math3.h"
#include "narrow.h"
#include "terrain.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>

enum {
    CAND_MAX = 128,   /* candidate points per pair before reduction */
    SEEN_SLOTS = 256, /* hash set of terrain vertices/edges already checked in a pair */
    MESH_CAND = 1024, /* mesh triangles near one shape kept for neighbour look-ups */
    PAIR_MAX = 8,     /* points reported per pair */
    FEAT_MAX = 16     /* face feature points of one shape */
};

#define TIE_EPS 1e-12     /* u·n ≥ 1 − TIE_EPS: contact plane parallel to the triangle */
#define SUPPORT_EPS 1e-9  /* slope tolerance of the local support test */
#define FLAT_DELTA 1e-5   /* flat part of an edge: sd within FLAT_DELTA·bound of its minimum … */
#define FLAT_LENGTH 0.02  /* … over at least FLAT_LENGTH·bound */
#define FLAT_SLOPE (FLAT_DELTA / FLAT_LENGTH)
#define EDGE_TOL 1e-9     /* bracket length (edge parameter) ending a search along an edge */

/* ---- small vector helpers ------------------------------------------------ */

static double dmin(double a, double b)
{
    return a < b ? a : b;
}

static double dmax(double a, double b)
{
    return a > b ? a : b;
}

static double clampd(double x, double lo, double hi)
{
    return x < lo ? lo : (x > hi ? hi : x);
}

/* Lexicographic order of points, to give shared edges one orientation. */
static bool point_less(const double a[3], const double b[3])
{
    if (a[0] != b[0]) return a[0] < b[0];
    if (a[1] != b[1]) return a[1] < b[1];
    return a[2] < b[2];
}

static bool same_point(const double a[3], const double b[3], double tol)
{
    return fabs(a[0] - b[0]) <= tol && fabs(a[1] - b[1]) <= tol && fabs(a[2] - b[2]) <= tol;
}

static bool box_contains(const double lo[3], const double hi[3], const double q[3], double slack)
{
    for (int k = 0; k < 3; k++)
        if (q[k] < lo[k] - slack || q[k] > hi[k] + slack) return false;
    return true;
}

/* ---- the convex shape, in terrain coordinates ------------------------------ */

typedef struct shape {
    dvi_shape_type type;
    double c[3];        /* centre */
    double ax[3][3];    /* unit local axes (columns of the rotation) */
    double r, hl, h[3];
    double bound;       /* bounding-sphere radius */
    double corner[8][3]; /* box: corner k has sign + along axis a when bit a of k is set */
} shape;

static void shape_make(shape* s, const col_geom* g, const col_geom* terrain)
{
    double d[3];
    v3_sub(d, g->pos, terrain->pos);
    m3_tmulv(s->c, terrain->rot, d);
    for (int k = 0; k < 3; k++) {
        double col[3] = {g->rot[k], g->rot[3 + k], g->rot[6 + k]};
        m3_tmulv(s->ax[k], terrain->rot, col);
    }
    s->type = g->type;
    s->r = g->radius;
    s->hl = g->half_length;
    memcpy(s->h, g->half, sizeof s->h);
    switch (g->type) {
    case DVI_SHAPE_SPHERE: s->bound = g->radius; break;
    case DVI_SHAPE_BOX: s->bound = v3_norm(g->half); break;
    case DVI_SHAPE_CAPSULE: s->bound = g->half_length + g->radius; break;
    default: s->bound = sqrt(g->half_length * g->half_length + g->radius * g->radius); break;
    }
    if (g->type == DVI_SHAPE_BOX)
        for (int k = 0; k < 8; k++) {
            memcpy(s->corner[k], s->c, sizeof s->corner[k]);
            for (int a = 0; a < 3; a++) v3_add_scaled(s->corner[k], s->corner[k], (k >> a & 1) ? s->h[a] : -s->h[a], s->ax[a]);
        }
}

/* min over the shape of n·x, minus n·c (≤ 0): the support offset along −n */
static double shape_support_offset(const shape* s, const double n[3])
{
    switch (s->type) {
    case DVI_SHAPE_SPHERE: return -s->r;
    case DVI_SHAPE_BOX:
        return -(s->h[0] * fabs(v3_dot(n, s->ax[0])) + s->h[1] * fabs(v3_dot(n, s->ax[1])) +
                 s->h[2] * fabs(v3_dot(n, s->ax[2])));
    case DVI_SHAPE_CAPSULE: return -(s->hl * fabs(v3_dot(n, s->ax[2])) + s->r);
    default: {
        double na = v3_dot(n, s->ax[2]);
        return -(s->hl * fabs(na) + s->r * sqrt(dmax(0.0, 1.0 - na * na)));
    }
    }
}

static void shape_aabb(const shape* s, double env, double lo[3], double hi[3])
{
    for (int k = 0; k < 3; k++) {
        double e[3] = {0, 0, 0};
        e[k] = 1.0;
        double ext = -shape_support_offset(s, e) + env;
        lo[k] = s->c[k] - ext;
        hi[k] = s->c[k] + ext;
    }
}

/* Unit vector ⟂ a, as close as possible to hint (to fallback if hint ∥ a). */
static void perp_dir(double out[3], const double a[3], const double hint[3], const double fallback[3])
{
    double d[3];
    v3_add_scaled(d, hint, -v3_dot(hint, a), a);
    double len = v3_norm(d);
    if (!(len > 1e-12)) {
        v3_add_scaled(d, fallback, -v3_dot(fallback, a), a);
        len = v3_norm(d);
    }
    for (int k = 0; k < 3; k++) out[k] = d[k] / len;
}

/* Signed distance from x to the shape (negative inside) and its gradient: the
 * outward unit normal of the shape at its closest point (pointing at x). It
 * is convex in x. Where the gradient is not unique (x on the axis of a sphere
 * or capsule; inside, equally far from two faces) the choice closest to
 * `hint` is taken. */
static double shape_sd(const shape* s, const double x[3], const double hint[3], double grad[3])
{
    double d[3];
    v3_sub(d, x, s->c);
    switch (s->type) {
    case DVI_SHAPE_SPHERE:
    case DVI_SHAPE_CAPSULE: {
        if (s->type == DVI_SHAPE_CAPSULE) {
            double t = clampd(v3_dot(d, s->ax[2]), -s->hl, s->hl);
            v3_add_scaled(d, d, -t, s->ax[2]);
        }
        double len = v3_norm(d);
        if (len > 1e-300) {
            for (int k = 0; k < 3; k++) grad[k] = d[k] / len;
        } else if (s->type == DVI_SHAPE_CAPSULE) {
            perp_dir(grad, s->ax[2], hint, s->ax[0]);
        } else {
            memcpy(grad, hint, 3 * sizeof(double));
        }
        return len - s->r;
    }
    case DVI_SHAPE_BOX: {
        double q[3], e[3], o[3], on = 0.0;
        for (int k = 0; k < 3; k++) {
            q[k] = v3_dot(d, s->ax[k]);
            e[k] = fabs(q[k]) - s->h[k];
            o[k] = e[k] > 0.0 ? e[k] : 0.0;
            on += o[k] * o[k];
        }
        if (on > 0.0) {
            on = sqrt(on);
            for (int k = 0; k < 3; k++) grad[k] = 0.0;
            for (int k = 0; k < 3; k++)
                if (o[k] > 0.0) v3_add_scaled(grad, grad, (q[k] >= 0.0 ? o[k] : -o[k]) / on, s->ax[k]);
            return on;
        }
        /* inside: the nearest face; near-ties go to the face facing the hint */
        double emax = dmax(e[0], dmax(e[1], e[2])), tie = 1e-9 * s->bound, best_al = 0.0, best_sg = 1.0;
        int best = -1;
        for (int k = 0; k < 3; k++) {
            if (e[k] < emax - tie) continue;
            double hk = v3_dot(hint, s->ax[k]);
            double sg = q[k] > 0.0 ? 1.0 : (q[k] < 0.0 ? -1.0 : (hk >= 0.0 ? 1.0 : -1.0));
            if (best < 0 || sg * hk > best_al) {
                best = k;
                best_al = sg * hk;
                best_sg = sg;
            }
        }
        for (int k = 0; k < 3; k++) grad[k] = best_sg * s->ax[best][k];
        return emax;
    }
    default: { /* cylinder */
        const double* a = s->ax[2];
        double z = v3_dot(d, a), w[3], rd[3];
        v3_add_scaled(w, d, -z, a);
        double rho = v3_norm(w);
        if (rho > 1e-300) {
            for (int k = 0; k < 3; k++) rd[k] = w[k] / rho;
        } else {
            perp_dir(rd, a, hint, s->ax[0]);
        }
        double sz = z > 0.0 ? 1.0 : (z < 0.0 ? -1.0 : (v3_dot(hint, a) >= 0.0 ? 1.0 : -1.0));
        double dz = fabs(z) - s->hl, dr = rho - s->r;
        if (dz > 0.0 && dr > 0.0) {
            double len = sqrt(dz * dz + dr * dr);
            for (int k = 0; k < 3; k++) grad[k] = (dr * rd[k] + dz * sz * a[k]) / len;
            return len;
        }
        bool axial;
        if (dz > 0.0) axial = true;
        else if (dr > 0.0) axial = false;
        else if (fabs(dz - dr) <= 1e-9 * s->bound) axial = fabs(v3_dot(hint, a)) >= v3_dot(hint, rd);
        else axial = dz > dr;
        if (axial) {
            for (int k = 0; k < 3; k++) grad[k] = sz * a[k];
            return dz;
        }
        memcpy(grad, rd, sizeof rd);
        return dr;
    }
    }
}

/* Lower bound of the shape's signed distance over the box [lo, hi]. */
static double box_lower_bound(const shape* s, const double lo[3], const double hi[3])
{
    double c[3], g[3], up[3] = {0, 0, 1};
    for (int k = 0; k < 3; k++) c[k] = 0.5 * (lo[k] + hi[k]);
    double lb = shape_sd(s, c, up, g);
    for (int k = 0; k < 3; k++) lb -= fabs(g[k]) * 0.5 * (hi[k] - lo[k]);
    return lb;
}

/* The shape's support set facing a plane of outward normal n (its points of
 * smallest n·x), when it is more than a point: a segment (capsule or wheel
 * parallel to the plane, box edge), a quadrilateral (box face) or a disc
 * (cylinder cap). Returns the number of polygon corners written (2 or 4), or
 * −1 for a disc (centre p[0], radius *rad), or 0. */
static int support_set(const shape* s, const double n[3], double p[4][3], double* rad)
{
    const double par = 1e-7; /* |cos| below which an axis counts as parallel to the plane */
    switch (s->type) {
    case DVI_SHAPE_CAPSULE:
    case DVI_SHAPE_CYLINDER: {
        const double* a = s->ax[2];
        double na = v3_dot(n, a), dn[3];
        if (s->type == DVI_SHAPE_CYLINDER && fabs(na) > 1.0 - 1e-12) {
            v3_add_scaled(p[0], s->c, na > 0.0 ? -s->hl : s->hl, a);
            *rad = s->r;
            return -1;
        }
        if (fabs(na) > par) return 0;
        if (s->type == DVI_SHAPE_CAPSULE) {
            memcpy(dn, n, sizeof dn);
        } else {
            v3_add_scaled(dn, n, -na, a);
            double len = v3_norm(dn);
            for (int k = 0; k < 3; k++) dn[k] /= len;
        }
        for (int e = 0; e < 2; e++) {
            v3_add_scaled(p[e], s->c, e ? -s->hl : s->hl, a);
            v3_add_scaled(p[e], p[e], -s->r, dn);
        }
        return 2;
    }
    case DVI_SHAPE_BOX: {
        /* corner k0 is the deepest; axes nearly parallel to the plane are free */
        int k0 = 0, free[2], nfree = 0;
        for (int a = 0; a < 3; a++) {
            double na = v3_dot(n, s->ax[a]);
            if (na < 0.0) k0 |= 1 << a;
            if (fabs(na) * s->h[a] <= par * s->bound && nfree < 2) free[nfree++] = a;
        }
        if (nfree == 0) return 0;
        if (nfree == 1) {
            memcpy(p[0], s->corner[k0 & ~(1 << free[0])], sizeof p[0]);
            memcpy(p[1], s->corner[k0 | 1 << free[0]], sizeof p[1]);
            return 2;
        }
        int b0 = 1 << free[0], b1 = 1 << free[1], base = k0 & ~(b0 | b1);
        memcpy(p[0], s->corner[base], sizeof p[0]);
        memcpy(p[1], s->corner[base | b0], sizeof p[1]);
        memcpy(p[2], s->corner[base | b0 | b1], sizeof p[2]);
        memcpy(p[3], s->corner[base | b1], sizeof p[3]);
        return 4;
    }
    default: return 0;
    }
}

/* orientation of (a, b, c) seen along n */
static double orient(const double n[3], const double a[3], const double b[3], const double c[3])
{
    double u[3], v[3], w[3];
    v3_sub(u, b, a);
    v3_sub(v, c, a);
    v3_cross(w, u, v);
    return v3_dot(n, w);
}

/* Does segment a–b (in a plane of normal n) cross the projection onto that
 * plane of the support set sp[0..m) (m as returned by support_set), strictly
 * inside? Then the distance along a–b is smallest on the support set, where
 * the shape's normal is −n. */
static bool crosses_support(const double n[3], const double a[3], const double b[3], double sp[4][3], int m,
                            double rad)
{
    if (m == -1) { /* disc: the segment passes closer than rad to its centre, in the plane */
        double d[3], w[3], q[3];
        v3_sub(d, b, a);
        v3_sub(w, sp[0], a);
        double dd = v3_dot(d, d), t = dd > 0.0 ? clampd(v3_dot(w, d) / dd, 0.0, 1.0) : 0.0;
        v3_add_scaled(q, a, t, d);
        v3_sub(w, sp[0], q);
        v3_add_scaled(w, w, -v3_dot(w, n), n);
        return v3_dot(w, w) < 0.999 * rad * rad;
    }
    if (m == 2) { /* segments cross properly */
        double o1 = orient(n, a, b, sp[0]), o2 = orient(n, a, b, sp[1]);
        double o3 = orient(n, sp[0], sp[1], a), o4 = orient(n, sp[0], sp[1], b);
        return ((o1 > 0.0 && o2 < 0.0) || (o1 < 0.0 && o2 > 0.0)) && ((o3 > 0.0 && o4 < 0.0) || (o3 < 0.0 && o4 > 0.0));
    }
    if (m == 4) { /* an end strictly inside the quadrilateral, or a proper crossing of a side */
        double sgn = orient(n, sp[0], sp[1], sp[2]) > 0.0 ? 1.0 : -1.0;
        for (int e = 0; e < 2; e++) {
            const double* q = e ? b : a;
            bool in = true;
            for (int k = 0; k < 4 && in; k++) in = sgn * orient(n, sp[k], sp[(k + 1) % 4], q) > 0.0;
            if (in) return true;
        }
        for (int k = 0; k < 4; k++) {
            double seg[4][3];
            memcpy(seg[0], sp[k], sizeof seg[0]);
            memcpy(seg[1], sp[(k + 1) % 4], sizeof seg[1]);
            if (crosses_support(n, a, b, seg, 2, 0.0)) return true;
        }
    }
    return false;
}

/* A point of the shape tested against a triangle's plane: the contact is at
 * distance n·(p − v0) − rr. */
typedef struct feat {
    double p[3];
    double rr;
    int sub;
} feat;

/* Feature points of the shape that can be deepest against a plane of
 * outward normal n. */
static int face_features(const shape* s, const double n[3], feat* f)
{
    int m = 0;
    switch (s->type) {
    case DVI_SHAPE_SPHERE:
        memcpy(f[0].p, s->c, sizeof f[0].p);
        f[0].rr = s->r;
        f[0].sub = 0;
        return 1;
    case DVI_SHAPE_CAPSULE:
        for (int e = 0; e < 2; e++) {
            v3_add_scaled(f[e].p, s->c, e ? -s->hl : s->hl, s->ax[2]);
            f[e].rr = s->r;
            f[e].sub = e;
        }
        return 2;
    case DVI_SHAPE_BOX:
        for (int k = 0; k < 8; k++) {
            memcpy(f[k].p, s->corner[k], sizeof f[k].p);
            f[k].rr = 0.0;
            f[k].sub = k;
        }
        return 8;
    default: { /* cylinder */
        const double* a = s->ax[2];
        double na = v3_dot(n, a), dn[3];
        v3_add_scaled(dn, n, -na, a); /* the deepest rim point lies along −dn */
        double len = v3_norm(dn);
        for (int cap = 0; cap < 2; cap++) {
            double cc[3];
            v3_add_scaled(cc, s->c, cap ? -s->hl : s->hl, a);
            if (len > 1e-9) {
                v3_add_scaled(f[m].p, cc, -s->r / len, dn);
                f[m].rr = 0.0;
                f[m].sub = cap;
                m++;
            }
            double sg = cap ? -1.0 : 1.0;
            if (sg * na < -0.7071) { /* this cap faces the plane within 45° */
                for (int j = 0; j < 8; j++) {
                    double th = (double)j * (3.14159265358979323846 / 4.0);
                    v3_add_scaled(f[m].p, cc, s->r * cos(th), s->ax[0]);
                    v3_add_scaled(f[m].p, f[m].p, s->r * sin(th), s->ax[1]);
                    f[m].rr = 0.0;
                    f[m].sub = 2 + 9 * cap + j;
                    m++;
                }
                memcpy(f[m].p, cc, sizeof cc);
                f[m].rr = 0.0;
                f[m].sub = 2 + 9 * cap + 8;
                m++;
            }
        }
        return m;
    }
    }
}

/* ---- terrain triangles ----------------------------------------------------- */

typedef struct tri {
    double v[3][3];      /* terrain-local vertices, counter-clockwise seen from outside */
    double n[3];         /* unit outward normal */
    double lo[3], hi[3]; /* bounding box */
    int32_t id;          /* triangle index (height field: 2·cell + half) */
    int32_t vid[3];      /* vertex indices */
} tri;

/* Normal and box of t; false if degenerate. */
static bool finish_tri(tri* t)
{
    for (int k = 0; k < 3; k++) {
        t->lo[k] = dmin(t->v[0][k], dmin(t->v[1][k], t->v[2][k]));
        t->hi[k] = dmax(t->v[0][k], dmax(t->v[1][k], t->v[2][k]));
    }
    double e1[3], e2[3];
    v3_sub(e1, t->v[1], t->v[0]);
    v3_sub(e2, t->v[2], t->v[0]);
    v3_cross(t->n, e1, e2);
    double len = v3_norm(t->n);
    if (!(len > 0.0) || !isfinite(len)) return false;
    for (int k = 0; k < 3; k++) t->n[k] /= len;
    return true;
}

/* Triangle `half` of height-field cell (i, j): half 0 is (i,j) (i+1,j)
 * (i+1,j+1), half 1 is (i,j) (i+1,j+1) (i,j+1). */
static bool hf_triangle(const col_heightfield* hf, int32_t i, int32_t j, int half, tri* t)
{
    int32_t k00 = j * hf->nx + i, k10 = k00 + 1, k01 = k00 + hf->nx, k11 = k01 + 1;
    int32_t ids[3] = {k00, half ? k11 : k10, half ? k01 : k11};
    for (int c = 0; c < 3; c++) {
        int32_t id = ids[c], vi = id % hf->nx, vj = id / hf->nx;
        t->v[c][0] = vi * hf->dx;
        t->v[c][1] = vj * hf->dy;
        t->v[c][2] = hf->heights[id];
        t->vid[c] = id;
    }
    t->id = 2 * (j * (hf->nx - 1) + i) + half;
    return finish_tri(t);
}

typedef bool cull_fn(const void* ctx, const double lo[3], const double hi[3]);

enum { HF_BLOCK = 8 }; /* height-field cells are culled by blocks of HF_BLOCK × HF_BLOCK, then one by one */

typedef struct tri_iter {
    const col_heightfield* hf;
    const col_trimesh* mesh;
    double lo[3], hi[3];
    cull_fn* cull; /* height field: skips blocks and cells whose column box it accepts */
    const void* cull_ctx;
    int32_t i0, i1, j0, j1;        /* height field: cell range */
    int32_t bi, bj;                /* next block (its first cell) */
    int32_t ci0, ci1, cj1, i, j, half; /* current block's cells and position; in_block when i ≥ 0 */
    int32_t m;                     /* mesh: next triangle */
} tri_iter;

static void iter_begin(tri_iter* it, const col_heightfield* hf, const col_trimesh* mesh, const double lo[3],
                       const double hi[3], cull_fn* cull, const void* cull_ctx)
{
    memset(it, 0, sizeof *it);
    it->hf = hf;
    it->mesh = mesh;
    it->cull = cull;
    it->cull_ctx = cull_ctx;
    memcpy(it->lo, lo, sizeof it->lo);
    memcpy(it->hi, hi, sizeof it->hi);
    it->i = -1;
    it->bj = 1; /* empty unless set below */
    it->j1 = 0;
    if (!hf) return;
    if (hf->nx < 2 || hf->ny < 2 || !(hf->dx > 0.0) || !(hf->dy > 0.0) || !hf->heights) return;
    double fx0 = lo[0] / hf->dx, fx1 = hi[0] / hf->dx, fy0 = lo[1] / hf->dy, fy1 = hi[1] / hf->dy;
    double cx = (double)(hf->nx - 1), cy = (double)(hf->ny - 1);
    /* written so that NaN bounds give an empty range */
    if (!(fx1 >= 0.0) || !(fx0 <= cx) || !(fy1 >= 0.0) || !(fy0 <= cy)) return;
    it->i0 = fx0 <= 0.0 ? 0 : (int32_t)fx0;
    it->i1 = fx1 >= cx - 1.0 ? hf->nx - 2 : (int32_t)fx1;
    it->j0 = fy0 <= 0.0 ? 0 : (int32_t)fy0;
    it->j1 = fy1 >= cy - 1.0 ? hf->ny - 2 : (int32_t)fy1;
    if (it->i0 > hf->nx - 2) it->i0 = hf->nx - 2;
    if (it->j0 > hf->ny - 2) it->j0 = hf->ny - 2;
    it->bi = it->i0;
    it->bj = it->j0;
}

/* Is the column over cells [i0, i1] × [j0, j1] (from the bottom of the query
 * box to their highest point) out of reach? */
static bool iter_skip(const tri_iter* it, int32_t i0, int32_t i1, int32_t j0, int32_t j1)
{
    const col_heightfield* hf = it->hf;
    double mn = INFINITY, mx = -INFINITY;
    for (int32_t j = j0; j <= j1 + 1; j++) {
        const double* h = hf->heights + (size_t)j * (size_t)hf->nx;
        for (int32_t i = i0; i <= i1 + 1; i++) {
            mn = dmin(mn, h[i]);
            mx = dmax(mx, h[i]);
        }
    }
    if (!(mn <= it->hi[2]) || !(mx >= it->lo[2])) return true;
    if (!it->cull) return false;
    double clo[3] = {i0 * hf->dx, j0 * hf->dy, dmin(mn, it->lo[2])};
    double chi[3] = {(i1 + 1) * hf->dx, (j1 + 1) * hf->dy, mx};
    return it->cull(it->cull_ctx, clo, chi);
}

/* Mesh triangle k, if its indices are valid and it is not degenerate. */
static bool mesh_triangle(const col_trimesh* m, int32_t k, tri* t)
{
    const int32_t* idx = m->triangles + 3 * (size_t)k;
    for (int c = 0; c < 3; c++) {
        if (idx[c] < 0 || idx[c] >= m->vertex_count) return false;
        memcpy(t->v[c], m->vertices + 3 * (size_t)idx[c], sizeof t->v[c]);
        t->vid[c] = idx[c];
    }
    t->id = k;
    return finish_tri(t);
}

/* Whether mesh triangle idx (valid indices) lies wholly outside the box
 * lo..hi along one axis. */
static bool mesh_triangle_outside(const col_trimesh* m, const int32_t* idx, const double lo[3], const double hi[3])
{
    const double* v0 = m->vertices + 3 * (size_t)idx[0];
    const double* v1 = m->vertices + 3 * (size_t)idx[1];
    const double* v2 = m->vertices + 3 * (size_t)idx[2];
    for (int c = 0; c < 3; c++)
        if (dmin(v0[c], dmin(v1[c], v2[c])) > hi[c] || dmax(v0[c], dmax(v1[c], v2[c])) < lo[c]) return true;
    return false;
}

/* Next triangle overlapping the box [lo, hi]; false at the end. */
static bool iter_next(tri_iter* it, tri* t)
{
    if (it->hf) {
        const col_heightfield* hf = it->hf;
        for (;;) {
            if (it->i < 0) { /* enter the next block that is not culled */
                if (it->bj > it->j1) return false;
                int32_t bi0 = it->bi, bj0 = it->bj;
                int32_t bi1 = bi0 + HF_BLOCK - 1 < it->i1 ? bi0 + HF_BLOCK - 1 : it->i1;
                int32_t bj1 = bj0 + HF_BLOCK - 1 < it->j1 ? bj0 + HF_BLOCK - 1 : it->j1;
                it->bi += HF_BLOCK;
                if (it->bi > it->i1) {
                    it->bi = it->i0;
                    it->bj += HF_BLOCK;
                }
                if ((bi1 > bi0 || bj1 > bj0) && it->cull && iter_skip(it, bi0, bi1, bj0, bj1)) continue;
                it->ci0 = bi0;
                it->ci1 = bi1;
                it->cj1 = bj1;
                it->i = bi0;
                it->j = bj0;
                it->half = 0;
            }
            int32_t i = it->i, j = it->j, half = it->half;
            if (half == 0 ? iter_skip(it, i, i, j, j) : false) {
                half = 2; /* whole cell out of reach */
            }
            if (half >= 1) { /* advance to the next cell */
                if (++it->i > it->ci1) {
                    it->i = it->ci0;
                    if (++it->j > it->cj1) it->i = -1;
                }
                it->half = 0;
                if (half == 2) continue;
            } else {
                it->half = 1;
            }
            if (hf_triangle(hf, i, j, half, t) &&
                !(t->lo[0] > it->hi[0] || t->hi[0] < it->lo[0] || t->lo[1] > it->hi[1] || t->hi[1] < it->lo[1] ||
                  t->lo[2] > it->hi[2] || t->hi[2] < it->lo[2]))
                return true;
        }
    }
    if (it->mesh) {
        const col_trimesh* m = it->mesh;
        if (!m->vertices || !m->triangles) return false;
        while (it->m < m->triangle_count) {
            int32_t k = it->m++;
            const int32_t* idx = m->triangles + 3 * (size_t)k;
            if (idx[0] < 0 || idx[0] >= m->vertex_count || idx[1] < 0 || idx[1] >= m->vertex_count || idx[2] < 0 ||
                idx[2] >= m->vertex_count)
                continue; /* bad index: skipped */
            if (!mesh_triangle_outside(m, idx, it->lo, it->hi) && mesh_triangle(m, k, t)) return true;
        }
    }
    return false;
}

/* The prism of a triangle (its extrusion along n), slightly widened: q is
 * inside when m_k·q ≥ off_k for its three inward edge normals m_k. */
typedef struct prism {
    double m[3][3];
    double off[3];  /* widened sides, for inside tests */
    double side[3]; /* exact sides m_k·q = side_k, where crossings are computed */
} prism;

static void prism_make(prism* P, const tri* t, double tol)
{
    for (int k = 0; k < 3; k++) {
        double e[3];
        v3_sub(e, t->v[(k + 1) % 3], t->v[k]);
        v3_cross(P->m[k], t->n, e); /* |m| = |e| */
        P->side[k] = v3_dot(P->m[k], t->v[k]);
        P->off[k] = P->side[k] - tol * v3_norm(e);
    }
}

static bool prism_inside(const prism* P, const double q[3])
{
    return v3_dot(P->m[0], q) >= P->off[0] && v3_dot(P->m[1], q) >= P->off[1] && v3_dot(P->m[2], q) >= P->off[2];
}

/* ---- per-pair state ------------------------------------------------------ */

typedef struct cand {
    double p[3]; /* terrain-local midpoint */
    double n[3]; /* terrain-local normal, shape → terrain */
    double phi;
    uint32_t feature;
} cand;

typedef struct pair_ctx {
    const col_heightfield* hf;
    const col_trimesh* mesh;
    shape s;
    double env;
    double tol_pos;  /* same-point tolerance (merging, neighbour matching) */
    double tol_face; /* how far outside a triangle a projected point may fall */
    double delta;    /* flatness tolerance of an edge minimum */
    int count, nseen, nmesh; /* nmesh: buffered mesh triangles, −1 if they did not fit */
    cand c[CAND_MAX];
    int32_t seen[SEEN_SLOTS][3]; /* checked V/E features: vertex ids, tag (−1: empty slot) */
    int32_t mesh_tri[MESH_CAND]; /* mesh triangles overlapping the shape's inflated AABB */
} pair_ctx;

/* Triangles overlapping a small box [lo, hi] near the shape: the grid for a
 * height field, the pair's buffered mesh triangles (all of them if the buffer
 * overflowed) for a mesh. */
typedef struct near_iter {
    tri_iter it;
    const pair_ctx* x;
    double lo[3], hi[3];
    int k;
} near_iter;

static void near_begin(near_iter* n, const pair_ctx* x, const double lo[3], const double hi[3])
{
    n->x = x;
    n->k = 0;
    memcpy(n->lo, lo, sizeof n->lo);
    memcpy(n->hi, hi, sizeof n->hi);
    iter_begin(&n->it, x->hf, x->nmesh < 0 ? x->mesh : NULL, lo, hi, NULL, NULL);
}

static bool near_next(near_iter* n, tri* t)
{
    const pair_ctx* x = n->x;
    if (x->hf || x->nmesh < 0) return iter_next(&n->it, t);
    const col_trimesh* m = x->mesh;
    while (n->k < x->nmesh) {
        int32_t k = x->mesh_tri[n->k++];
        const int32_t* idx = m->triangles + 3 * (size_t)k; /* valid: checked when buffered */
        if (!mesh_triangle_outside(m, idx, n->lo, n->hi) && mesh_triangle(m, k, t)) return true;
    }
    return false;
}

static bool cull_cell(const void* ctx, const double lo[3], const double hi[3])
{
    const pair_ctx* x = ctx;
    return box_lower_bound(&x->s, lo, hi) > x->env;
}

static uint32_t feature_face(int32_t tri_id, int sub)
{
    return ((uint32_t)tri_id * 64u + (uint32_t)sub) << 2;
}

static uint32_t feature_vertex(int32_t vid)
{
    return ((uint32_t)vid << 2) | 2u;
}

static uint32_t feature_edge(int32_t va, int32_t vb, int end)
{
    uint32_t lo = (uint32_t)(va < vb ? va : vb), hi = (uint32_t)(va < vb ? vb : va);
    uint32_t h = lo * 0x9E3779B1u ^ (hi * 0x85EBCA77u + 0x165667B1u) ^ ((uint32_t)end * 0x27D4EB2Fu);
    h ^= h >> 15;
    return (h << 2) | 1u;
}

/* Looks for the same point (position and normal); keeps the smaller Φ. */
static bool merge_candidate(pair_ctx* x, const double p[3], const double n[3], double phi)
{
    for (int i = 0; i < x->count; i++) {
        cand* c = &x->c[i];
        if (same_point(c->p, p, x->tol_pos) && v3_dot(c->n, n) >= 1.0 - 1e-9) {
            if (phi < c->phi) c->phi = phi;
            return true;
        }
    }
    return false;
}

static void add_candidate(pair_ctx* x, const double p[3], const double n[3], double phi, uint32_t feature)
{
    if (merge_candidate(x, p, n, phi)) return;
    int slot = x->count;
    if (slot == CAND_MAX) { /* full: replace the shallowest if this one is deeper */
        slot = 0;
        for (int i = 1; i < CAND_MAX; i++)
            if (x->c[i].phi > x->c[slot].phi) slot = i;
        if (!(phi < x->c[slot].phi)) return;
    } else {
        x->count++;
    }
    cand* c = &x->c[slot];
    memcpy(c->p, p, sizeof c->p);
    memcpy(c->n, n, sizeof c->n);
    c->phi = phi;
    c->feature = feature;
}

/* Marks terrain feature (a, b, tag) as checked; true if it already was. When
 * the set is nearly full, features are simply checked again. */
static bool seen_before(pair_ctx* x, int32_t a, int32_t b, int32_t tag)
{
    uint32_t h = ((uint32_t)a * 0x9E3779B1u) ^ ((uint32_t)b * 0x85EBCA77u) ^ ((uint32_t)tag * 0xC2B2AE3Du);
    for (uint32_t i = 0; i < SEEN_SLOTS; i++) {
        int32_t* e = x->seen[(h + i) % SEEN_SLOTS];
        if (e[2] == -1) {
            if (4 * x->nseen >= 3 * SEEN_SLOTS) return false;
            e[0] = a;
            e[1] = b;
            e[2] = tag;
            x->nseen++;
            return false;
        }
        if (e[0] == a && e[1] == b && e[2] == tag) return true;
    }
    return false;
}

/* Is terrain vertex a (b == NULL) or the point of edge (a, b) a contact seen
 * from direction u (unit, from the terrain towards the shape)? True if, over
 * the triangles containing the feature, no neighbouring vertex lies above it
 * along u (for an edge: measured across the edge), u faces the outside of at
 * least one of them, and not all of them are parallel to the contact plane. */
static bool feature_valid(const pair_ctx* x, const double a[3], const double* b, const double u[3])
{
    double lo[3], hi[3], e[3] = {0, 0, 0};
    for (int k = 0; k < 3; k++) {
        lo[k] = (b ? dmin(a[k], b[k]) : a[k]) - x->tol_pos;
        hi[k] = (b ? dmax(a[k], b[k]) : a[k]) + x->tol_pos;
    }
    if (b) {
        v3_sub(e, b, a);
        double len = v3_norm(e);
        if (!(len > 0.0)) return false;
        for (int k = 0; k < 3; k++) e[k] /= len;
    }
    near_iter it;
    tri t;
    near_begin(&it, x, lo, hi);
    int found = 0;
    bool front = false, all_tied = true;
    while (near_next(&it, &t)) {
        int ma = -1, mb = -1;
        for (int k = 0; k < 3; k++) {
            if (ma < 0 && same_point(t.v[k], a, x->tol_pos)) ma = k;
            else if (b && mb < 0 && same_point(t.v[k], b, x->tol_pos)) mb = k;
        }
        if (ma < 0 || (b && mb < 0)) continue;
        found++;
        double un = v3_dot(u, t.n);
        if (un >= -SUPPORT_EPS) front = true;
        if (un < 1.0 - TIE_EPS) all_tied = false;
        for (int k = 0; k < 3; k++) {
            if (k == ma || k == mb) continue;
            double d[3];
            v3_sub(d, t.v[k], a);
            if (b) v3_add_scaled(d, d, -v3_dot(d, e), e);
            if (v3_dot(u, d) > SUPPORT_EPS * v3_norm(d)) return false;
        }
    }
    return found > 0 && front && !all_tied;
}

/* Height field, first part of the support test straight from the grid: is a
 * neighbour of vertex ia (edge ia–ib: the vertices across it) above the
 * feature along u? Then the feature is no contact. */
static bool hf_neighbour_above(const col_heightfield* hf, int32_t ia, int32_t ib, const double a[3], const double u[3])
{
    int32_t nx = hf->nx, i = ia % nx, j = ia / nx, nb[6][2], m = 0;
    double e[3] = {0, 0, 0};
    if (ib == ia) {
        static const int32_t off[6][2] = {{1, 0}, {-1, 0}, {0, 1}, {0, -1}, {1, 1}, {-1, -1}};
        for (int k = 0; k < 6; k++) {
            nb[m][0] = i + off[k][0];
            nb[m][1] = j + off[k][1];
            m++;
        }
    } else {
        int32_t di = ib % nx - i, dj = ib / nx - j; /* (1,0), (0,1) or (1,1): ia is the lower corner */
        if (di == 1 && dj == 0) {
            int32_t t[2][2] = {{i + 1, j + 1}, {i, j - 1}};
            memcpy(nb, t, sizeof t);
        } else if (di == 0 && dj == 1) {
            int32_t t[2][2] = {{i + 1, j + 1}, {i - 1, j}};
            memcpy(nb, t, sizeof t);
        } else if (di == 1 && dj == 1) {
            int32_t t[2][2] = {{i + 1, j}, {i, j + 1}};
            memcpy(nb, t, sizeof t);
        } else {
            return false; /* not a grid edge in this orientation: leave it to the full test */
        }
        m = 2;
        e[0] = di * hf->dx;
        e[1] = dj * hf->dy;
        e[2] = hf->heights[ib] - hf->heights[ia];
        double len = v3_norm(e);
        for (int k = 0; k < 3; k++) e[k] /= len;
    }
    for (int k = 0; k < m; k++) {
        int32_t wi = nb[k][0], wj = nb[k][1];
        if (wi < 0 || wj < 0 || wi >= nx || wj >= hf->ny) continue;
        double d[3] = {wi * hf->dx - a[0], wj * hf->dy - a[1], hf->heights[(size_t)wj * (size_t)nx + (size_t)wi] - a[2]};
        if (ib != ia) v3_add_scaled(d, d, -v3_dot(d, e), e);
        if (v3_dot(u, d) > SUPPORT_EPS * v3_norm(d)) return true;
    }
    return false;
}

/* A terrain point xp (vertex a, or a point of edge a–b; vertex ids ia, ib,
 * tag 0 for a vertex, 1 + end for an edge) at signed distance f from the
 * shape, shape normal g: validated once per pair, then recorded. */
static void terrain_point(pair_ctx* x, const double xp[3], double f, const double g[3], const double a[3],
                          const double* b, int32_t ia, int32_t ib, int32_t tag, uint32_t feature)
{
    if (!(f <= x->env)) return;
    double mid[3], u[3] = {-g[0], -g[1], -g[2]};
    v3_add_scaled(mid, xp, -0.5 * f, g);
    int32_t lo = ia < ib ? ia : ib, hi = ia < ib ? ib : ia;
    if (seen_before(x, lo, hi, tag)) return;
    if (x->hf && hf_neighbour_above(x->hf, lo, hi, b && lo != ia ? b : a, u)) return;
    if (!feature_valid(x, a, b, u)) return;
    add_candidate(x, mid, g, f, feature);
}

/* Cheap part of the support test, on the triangle being processed: its other
 * vertices must not lie above the feature (vertex ka, or edge ka–kb) along u. */
static bool locally_supported(const tri* t, int ka, int kb, const double u[3])
{
    double e[3] = {0, 0, 0};
    if (kb >= 0) {
        v3_sub(e, t->v[kb], t->v[ka]);
        double len = v3_norm(e);
        for (int k = 0; k < 3; k++) e[k] /= len;
    }
    for (int k = 0; k < 3; k++) {
        if (k == ka || k == kb) continue;
        double d[3];
        v3_sub(d, t->v[k], t->v[ka]);
        if (kb >= 0) v3_add_scaled(d, d, -v3_dot(d, e), e);
        if (v3_dot(u, d) > SUPPORT_EPS * v3_norm(d)) return false;
    }
    return true;
}

/* Bisection on the segment a + t·d between t = out (sd > level there) and
 * t = in (sd ≤ level) for where sd crosses level; returns the last t found
 * with sd ≤ level (p, g: scratch). */
static double level_crossing(const shape* s, const double a[3], const double d[3], const double hint[3], double level,
                             double out, double in, double p[3], double g[3])
{
    for (int it = 0; it < 60 && fabs(in - out) > EDGE_TOL; it++) {
        double m = 0.5 * (out + in);
        v3_add_scaled(p, a, m, d);
        if (shape_sd(s, p, hint, g) <= level) in = m;
        else out = m;
    }
    return in;
}

/* Minimum of sd along a → b, an edge of a triangle of normal n whose plane
 * the shape clears by `floor`, given sd (fa, fb) and its slope ∇sd·(b − a)
 * (sa, sb) at both ends: the root of the slope, bracketed (sd is convex).
 * Writes 0, 1 or 2 points (parameters t[], values f[]) and one normal: 2
 * points are the ends of a flat minimum (within x->delta); 0 means the
 * minimum is at a vertex, or on the shape's side facing the plane (parallel
 * to the triangle: left to the face contacts). */
static int edge_minimum(const pair_ctx* x, const double a[3], const double b[3], double fa, double fb, double sa,
                        double sb, const double n[3], double floor, double t[2], double f[2], double grad[3])
{
    const shape* s = &x->s;
    const double hint[3] = {-n[0], -n[1], -n[2]}, reach = floor + 1e-9 * s->bound;
    double d[3], p[3], g[3];
    v3_sub(d, b, a);
    const double len = v3_norm(d);
    /* the minimum is where the slope s(t) = ∇sd·(b − a) changes sign: Illinois
     * regula falsi on s over a bracket [lo, hi] with s(lo) ≤ 0 ≤ s(hi) */
    double lo = 0.0, hi = 1.0, slo = sa, shi = sb, ts = 0.0, fs = fa;
    if (slo >= 0.0) {
        hi = 0.0; /* minimum at (or flat from) the start */
    } else if (shi <= 0.0) {
        lo = 1.0;
        ts = 1.0;
        fs = fb;
    }
    for (int it = 0, side = 0; it < 100 && hi - lo > EDGE_TOL; it++) {
        double tm = lo + (hi - lo) * slo / (slo - shi);
        if (!(tm > lo && tm < hi)) tm = 0.5 * (lo + hi);
        v3_add_scaled(p, a, tm, d);
        double fm = shape_sd(s, p, hint, g), sm = v3_dot(g, d);
        ts = tm;
        fs = fm;
        /* sd ≥ floor on the plane: reaching it, the minimum is on the side of
         * the shape facing the plane, where its normal is −n */
        if (fm <= reach && -v3_dot(g, n) >= 1.0 - TIE_EPS) return 0;
        if (fabs(sm) <= 1e-12 * len) break;
        base_illinois_step(tm, sm, &lo, &hi, &slo, &shi, &side);
    }
    if (fa <= fs) {
        ts = 0.0;
        fs = fa;
    }
    if (fb < fs) {
        ts = 1.0;
        fs = fb;
    }
    /* extent of the flat part {f ≤ fs + delta} (an interval: f is convex); a
     * part at least minflat long contains t* − h or t* + h */
    double minflat = dmax(1e3 * x->tol_pos, FLAT_LENGTH * s->bound), h = 0.5 * minflat / len;
    double level = fs + x->delta, tl = ts, th = ts;
    bool maybe_flat = false;
    for (int side = 0; side < 2 && !maybe_flat && h < 1.0; side++) {
        double tp = side ? ts + h : ts - h, fp;
        if (tp <= 0.0) {
            fp = fa;
        } else if (tp >= 1.0) {
            fp = fb;
        } else {
            v3_add_scaled(p, a, tp, d);
            fp = shape_sd(s, p, hint, g);
        }
        maybe_flat = fp <= level;
    }
    if (maybe_flat) {
        if (fa <= level) tl = 0.0;
        else if (ts > 0.0) tl = level_crossing(s, a, d, hint, level, 0.0, ts, p, g);
        if (fb <= level) th = 1.0;
        else if (ts < 1.0) th = level_crossing(s, a, d, hint, level, 1.0, ts, p, g);
    }
    if ((th - tl) * len > minflat) { /* flat, not merely a smooth minimum */
        v3_add_scaled(p, a, 0.5 * (tl + th), d); /* normal of the flat part: from its middle */
        shape_sd(s, p, hint, grad);
        if (fabs(v3_dot(grad, d)) > 1e-6 * len) return 0;
        t[0] = tl;
        t[1] = th;
        for (int k = 0; k < 2; k++) {
            v3_add_scaled(p, a, t[k], d);
            f[k] = shape_sd(s, p, hint, g);
        }
        return 2;
    }
    if (ts <= 1e-9 || ts >= 1.0 - 1e-9) return 0; /* at a vertex: handled as one */
    v3_add_scaled(p, a, ts, d);
    f[0] = shape_sd(s, p, hint, grad);
    t[0] = ts;
    /* at a kink of sd (inside a box near an edge, at a cylinder's rim) the
     * normal is the subgradient perpendicular to the edge: the combination of
     * the one-sided gradients that is level along it */
    double gl[3], gq[3], eps = 1e-6;
    v3_add_scaled(p, a, dmax(ts - eps, 0.0), d);
    shape_sd(s, p, hint, gl);
    v3_add_scaled(p, a, dmin(ts + eps, 1.0), d);
    shape_sd(s, p, hint, gq);
    double sl = v3_dot(gl, d), sr = v3_dot(gq, d);
    if (sl <= 0.0 && sr >= 0.0 && sr > sl && v3_dot(gl, gq) < 1.0 - 1e-9) {
        double lam = sr / (sr - sl), gg[3];
        for (int k = 0; k < 3; k++) gg[k] = lam * gl[k] + (1.0 - lam) * gq[k];
        double gn = v3_norm(gg);
        if (gn > 1e-6)
            for (int k = 0; k < 3; k++) grad[k] = gg[k] / gn;
    }
    /* a minimum's normal is level along the edge; anything else is a
     * degenerate kink (e.g. a box face containing the edge): not a contact */
    if (fabs(v3_dot(grad, d)) > 1e-6 * len) return 0;
    return 1;
}

enum { EDGE_CONVEX, EDGE_FLAT, EDGE_CONCAVE };

/* Shape of the terrain across edge k of t (from vertex k to k+1): convex
 * (also at a border), flat (the triangle across it is parallel to t) or
 * concave. O(1) for a height field, a pass over the buffered triangles for a
 * mesh. */
static int edge_kind(const pair_ctx* x, const tri* t, int k)
{
    int kb = (k + 1) % 3;
    tri o;
    bool found = false;
    if (x->hf) {
        const col_heightfield* hf = x->hf;
        int32_t cell = t->id / 2, half = t->id % 2, i = cell % (hf->nx - 1), j = cell / (hf->nx - 1);
        /* half 0: edges bottom, right, diagonal; half 1: diagonal, top, left */
        static const int di[2][3] = {{0, 1, 0}, {0, 0, -1}}, dj[2][3] = {{-1, 0, 0}, {0, 1, 0}};
        int32_t ni = i + di[half][k], nj = j + dj[half][k];
        found = ni >= 0 && nj >= 0 && ni <= hf->nx - 2 && nj <= hf->ny - 2 && hf_triangle(hf, ni, nj, 1 - half, &o);
    } else {
        const double *a = t->v[k], *b = t->v[kb];
        double lo[3], hi[3];
        for (int c = 0; c < 3; c++) {
            lo[c] = dmin(a[c], b[c]) - x->tol_pos;
            hi[c] = dmax(a[c], b[c]) + x->tol_pos;
        }
        near_iter it;
        near_begin(&it, x, lo, hi);
        while (!found && near_next(&it, &o)) {
            if (o.id == t->id) continue;
            int ma = 0, mb = 0;
            for (int c = 0; c < 3; c++) {
                ma += same_point(o.v[c], a, x->tol_pos);
                mb += same_point(o.v[c], b, x->tol_pos);
            }
            found = ma && mb;
        }
    }
    if (!found) return EDGE_CONVEX;
    if (v3_dot(o.n, t->n) >= 1.0 - TIE_EPS) return EDGE_FLAT;
    /* the far vertex of the other triangle below t's plane: convex */
    double far = 0.0; /* signed height over t's plane of o's vertex farthest from it */
    for (int c = 0; c < 3; c++) {
        double d[3];
        v3_sub(d, o.v[c], t->v[k]);
        double hgt = v3_dot(t->n, d);
        if (fabs(hgt) > fabs(far)) far = hgt;
    }
    return far < 0.0 ? EDGE_CONVEX : EDGE_CONCAVE;
}

/* Face contacts of box edge p0–p1 (sub: feature index of its p0 end): its
 * part over the triangle ends, where it crosses a terrain edge that is not
 * flat, in a contact against the face (its own ends are the corners). The
 * distance function has a kink along a box edge, so when the box penetrates
 * an edge lying across a face is not seen by the edge minima. */
static void box_edge_on_face(pair_ctx* x, const tri* t, const prism* P, const double p0[3], const double p1[3],
                             int sub)
{
    const double* n = t->n;
    double v0n = v3_dot(n, t->v[0]), hint[3] = {-n[0], -n[1], -n[2]};
    double d[3], t0 = 0.0, t1 = 1.0;
    int k0 = -1, k1 = -1;
    v3_sub(d, p1, p0);
    for (int k = 0; k < 3; k++) {
        double a = v3_dot(P->m[k], p0) - P->side[k], b = v3_dot(P->m[k], d); /* inside: a + b·t ≥ 0 */
        if (b == 0.0) {
            if (a < P->off[k] - P->side[k]) return;
            continue;
        }
        double tc = -a / b;
        if (b > 0.0 && tc > t0) {
            t0 = tc;
            k0 = k;
        } else if (b < 0.0 && tc < t1) {
            t1 = tc;
            k1 = k;
        }
        if (!(t0 <= t1)) return;
    }
    for (int end = 0; end < 2; end++) {
        int k = end ? k1 : k0;
        if (k < 0) continue;
        double p[3], mid[3];
        v3_add_scaled(p, p0, end ? t1 : t0, d);
        double sp = v3_dot(n, p) - v0n;
        if (!(sp <= x->env) || edge_kind(x, t, k) == EDGE_FLAT) continue;
        v3_add_scaled(mid, p, -0.5 * sp, n);
        add_candidate(x, mid, hint, sp, feature_face(t->id, sub + end));
    }
}

/* Face contact of a cylinder's rim over a triangle whose deepest rim point
 * for this plane (sp_point) falls outside it: the rim may still dip below
 * this face, deepest where it crosses a side of the prism. (At a crease each
 * triangle's deepest rim point can fall over the other triangle; inside the
 * cylinder the distance function has a kink along the rim, so when it
 * penetrates the edge minima miss it. When apart they are exact: only
 * penetrating points are kept here.) Kept only at a terrain edge that is not
 * flat. */
static void rim_on_face(pair_ctx* x, const tri* t, const prism* P, int cap, const double sp_point[3])
{
    const shape* s = &x->s;
    const double* n = t->n;
    const double v0n = v3_dot(n, t->v[0]), hint[3] = {-n[0], -n[1], -n[2]};
    double na = v3_dot(n, s->ax[2]), dn = sqrt(dmax(0.0, 1.0 - na * na));
    double phis = v3_dot(n, sp_point) - v0n;
    if (!(phis < 0.0)) return; /* no rim point below the plane */
    /* rim points below the plane lie within this chord of the deepest one */
    double reach = -phis / (s->r * dn) >= 2.0 ? 2.0 * s->r : sqrt(-2.0 * s->r * phis / dn);
    double gap2 = 0.0;
    for (int c = 0; c < 3; c++) {
        double e = dmax(t->lo[c] - sp_point[c], dmax(0.0, sp_point[c] - t->hi[c]));
        gap2 += e * e;
    }
    if (gap2 > reach * reach) return;
    double cc[3], best[3] = {0, 0, 0}, best_sp = 0.0; /* penetrating only: when apart, the edge minima are exact */
    int best_k = -1, best_w = 0;
    v3_add_scaled(cc, s->c, cap ? -s->hl : s->hl, s->ax[2]);
    for (int k = 0; k < 3; k++) {
        /* cc + r (cos θ u + sin θ v) on the side plane m·x = off: A cos θ + B sin θ = C */
        double A = s->r * v3_dot(P->m[k], s->ax[0]), B = s->r * v3_dot(P->m[k], s->ax[1]);
        double C = P->side[k] - v3_dot(P->m[k], cc), R0 = sqrt(A * A + B * B);
        if (!(R0 > 0.0) || fabs(C) > R0) continue;
        double base = atan2(B, A), half = acos(clampd(C / R0, -1.0, 1.0));
        for (int w = 0; w < 2; w++) {
            double th = base + (w ? -half : half), p[3];
            v3_add_scaled(p, cc, s->r * cos(th), s->ax[0]);
            v3_add_scaled(p, p, s->r * sin(th), s->ax[1]);
            double sp = v3_dot(n, p) - v0n;
            bool inside = sp < best_sp; /* within the other two sides (tolerance already in off) */
            for (int j = 0; j < 3 && inside; j++)
                if (j != k) inside = v3_dot(P->m[j], p) >= P->off[j];
            if (!inside) continue;
            memcpy(best, p, sizeof best);
            best_sp = sp;
            best_k = k;
            best_w = w;
        }
    }
    if (best_k < 0 || edge_kind(x, t, best_k) == EDGE_FLAT) return;
    double mid[3];
    v3_add_scaled(mid, best, -0.5 * best_sp, n);
    add_candidate(x, mid, hint, best_sp, feature_face(t->id, 32 + 8 * cap + 2 * best_k + best_w));
}

static void collide_triangle(pair_ctx* x, const tri* t)
{
    const shape* s = &x->s;
    const double* n = t->n;
    const double v0n = v3_dot(n, t->v[0]), sc = v3_dot(n, s->c) - v0n, floor = sc + shape_support_offset(s, n);
    if (floor > x->env) return; /* the shape clears the plane */
    const double hint[3] = {-n[0], -n[1], -n[2]};
    if (x->mesh) { /* (a height field culls whole columns as it enumerates) */
        /* every contact point of this triangle lies in its box swept along −n
         * by the shape's depth below the plane: skip it if sd > env there */
        double lo[3], hi[3], depth = floor < 0.0 ? -floor : 0.0;
        for (int c = 0; c < 3; c++) {
            lo[c] = t->lo[c] + dmin(0.0, -depth * n[c]);
            hi[c] = t->hi[c] + dmax(0.0, -depth * n[c]);
        }
        if (box_lower_bound(s, lo, hi) > x->env) return;
    }

    /* F: shape features against the face (shape centre outside only) */
    if (sc >= 0.0) {
        prism P;
        bool have_prism = false;
        feat fs[FEAT_MAX];
        int nf = face_features(s, n, fs);
        int outside[2] = {-1, -1}; /* cylinder: support point of cap 0/1 outside the triangle (feature index) */
        for (int i = 0; i < nf; i++) {
            double sp = v3_dot(n, fs[i].p) - v0n, phi = sp - fs[i].rr, q[3], mid[3];
            if (!(phi <= x->env)) continue;
            v3_add_scaled(q, fs[i].p, -sp, n);
            bool in = box_contains(t->lo, t->hi, q, x->tol_face);
            if (in && !have_prism) {
                prism_make(&P, t, x->tol_face);
                have_prism = true;
            }
            if (!in || !prism_inside(&P, q)) {
                if (s->type == DVI_SHAPE_CYLINDER && fs[i].sub < 2) outside[fs[i].sub] = i;
                continue;
            }
            v3_add_scaled(mid, fs[i].p, -0.5 * (sp + fs[i].rr), n);
            add_candidate(x, mid, hint, phi, feature_face(t->id, fs[i].sub));
        }
        if (s->type == DVI_SHAPE_BOX) {
            for (int a = 0, e = 0; a < 3; a++)
                for (int k = 0; k < 8; k++) {
                    if (k >> a & 1) continue;
                    const double *p0 = s->corner[k], *p1 = s->corner[k | 1 << a];
                    int sub = 8 + 2 * e++; /* subs 8 … 31 */
                    double s0 = v3_dot(n, p0) - v0n, s1 = v3_dot(n, p1) - v0n, q0[3], q1[3];
                    if (dmin(s0, s1) > x->env) continue; /* clears the plane */
                    v3_add_scaled(q0, p0, -s0, n);
                    v3_add_scaled(q1, p1, -s1, n);
                    bool apart = false;
                    for (int c = 0; c < 3 && !apart; c++)
                        apart = dmin(q0[c], q1[c]) > t->hi[c] + x->tol_face ||
                                dmax(q0[c], q1[c]) < t->lo[c] - x->tol_face;
                    if (apart) continue; /* its shadow misses the triangle's box */
                    if (!have_prism) {
                        prism_make(&P, t, x->tol_face);
                        have_prism = true;
                    }
                    box_edge_on_face(x, t, &P, p0, p1, sub);
                }
        } else if (s->type == DVI_SHAPE_CYLINDER) {
            for (int cap = 0; cap < 2; cap++) {
                if (outside[cap] < 0) continue;
                if (!have_prism) {
                    prism_make(&P, t, x->tol_face);
                    have_prism = true;
                }
                rim_on_face(x, t, &P, cap, fs[outside[cap]].p);
            }
        }
    }

    /* V and E look at terrain points only: skip the triangle if sd > env on its box */
    if (x->mesh && floor < 0.0 && box_lower_bound(s, t->lo, t->hi) > x->env) return;

    /* V: terrain vertices */
    double fv[3], gv[3][3];
    for (int k = 0; k < 3; k++) {
        fv[k] = shape_sd(s, t->v[k], hint, gv[k]);
        if (!(fv[k] <= x->env)) continue;
        double u[3] = {-gv[k][0], -gv[k][1], -gv[k][2]};
        /* parallel to this triangle: another, not parallel, one will check it (if none, it is flat) */
        if (v3_dot(u, n) >= 1.0 - TIE_EPS || !locally_supported(t, k, -1, u)) continue;
        terrain_point(x, t->v[k], fv[k], gv[k], t->v[k], NULL, t->vid[k], t->vid[k], 0, feature_vertex(t->vid[k]));
    }

    /* E: minimum of the distance along each edge */
    double sp[4][3], rad = 0.0;
    int nsp = s->type == DVI_SHAPE_SPHERE ? 0 : support_set(s, n, sp, &rad);
    for (int k = 0; k < 3; k++) {
        int ka = k, kb = (k + 1) % 3;
        if (point_less(t->v[kb], t->v[ka])) { /* one orientation per shared edge */
            ka = kb;
            kb = k;
        }
        const double *a = t->v[ka], *b = t->v[kb];
        double d[3];
        v3_sub(d, b, a);
        double len = v3_norm(d);
        if (0.5 * (fv[ka] + fv[kb] - len) > x->env) continue; /* 1-Lipschitz lower bound */
        double ts[2], fs[2], g[3], tt = 0.0, sa = 0.0, sb = 0.0;
        int np;
        if (s->type == DVI_SHAPE_SPHERE) {
            double cd[3];
            v3_sub(cd, s->c, a);
            tt = v3_dot(cd, d) / (len * len);
            if (!(tt > 1e-9 && tt < 1.0 - 1e-9)) continue;
        } else {
            sa = v3_dot(gv[ka], d);
            sb = v3_dot(gv[kb], d);
            /* sd is convex along the edge: a subgradient rising from an end puts
             * the minimum there (and, this steep, leaves no flat part) */
            if (sa > FLAT_SLOPE * len || sb < -FLAT_SLOPE * len) continue;
            /* the tangents at both ends bound the convex sd from below */
            if (sb - sa > 0.0) {
                double tc = clampd((fv[kb] - sb - fv[ka]) / (sa - sb), 0.0, 1.0);
                if (fv[ka] + tc * sa > x->env) continue;
            }
            /* both ends parallel to the triangle: sd is constant along the edge */
            if (-v3_dot(gv[ka], n) >= 1.0 - TIE_EPS && -v3_dot(gv[kb], n) >= 1.0 - TIE_EPS) continue;
            /* passing under the support set: the minimum is there, parallel to the triangle */
            if (nsp != 0 && crosses_support(n, a, b, sp, nsp, rad)) continue;
        }
        /* only a convex edge can be a contact (flat: parallel to its faces; concave: facing the solid) */
        if (edge_kind(x, t, k) != EDGE_CONVEX) continue;
        if (s->type == DVI_SHAPE_SPHERE) {
            double xp[3];
            v3_add_scaled(xp, a, tt, d);
            fs[0] = shape_sd(s, xp, hint, g);
            ts[0] = tt;
            np = 1;
        } else {
            np = edge_minimum(x, a, b, fv[ka], fv[kb], sa, sb, n, floor, ts, fs, g);
        }
        if (np == 0) continue;
        double u[3] = {-g[0], -g[1], -g[2]};
        if (v3_dot(u, n) >= 1.0 - TIE_EPS || !locally_supported(t, ka, kb, u)) continue;
        for (int i = 0; i < np; i++) {
            double xp[3];
            int end = np == 2 ? i + 1 : 0;
            v3_add_scaled(xp, a, ts[i], d);
            terrain_point(x, xp, fs[i], g, a, b, t->vid[ka], t->vid[kb], 1 + end,
                          feature_edge(t->vid[ka], t->vid[kb], end));
        }
    }
}

/* Keeps at most `keep` candidates (the deepest, then farthest-point sampling)
 * and writes them in world coordinates, in candidate order. */
static int emit(const pair_ctx* x, const col_geom* terrain, col_contact_point* out, int keep)
{
    int n = x->count;
    bool sel[CAND_MAX];
    for (int i = 0; i < n; i++) sel[i] = n <= keep;
    if (n > keep) {
        double score[CAND_MAX], L2 = x->s.bound * x->s.bound;
        int best = 0;
        for (int i = 1; i < n; i++)
            if (x->c[i].phi < x->c[best].phi) best = i;
        sel[best] = true;
        for (int i = 0; i < n; i++) score[i] = INFINITY;
        for (int chosen = 1, last = best; chosen < keep; chosen++) {
            int pick = -1;
            for (int i = 0; i < n; i++) {
                if (sel[i]) continue;
                double d[3];
                v3_sub(d, x->c[i].p, x->c[last].p);
                double sc = v3_dot(d, d) + L2 * (1.0 - v3_dot(x->c[i].n, x->c[last].n));
                if (sc < score[i]) score[i] = sc;
                if (pick < 0 || score[i] > score[pick] || (score[i] == score[pick] && x->c[i].phi < x->c[pick].phi))
                    pick = i;
            }
            sel[pick] = true;
            last = pick;
        }
    }
    int m = 0;
    for (int i = 0; i < n; i++) {
        if (!sel[i]) continue;
        const cand* c = &x->c[i];
        col_contact_point* o = &out[m++];
        o->geom_a = 0;
        o->geom_b = 0;
        m3_mulv(o->point, terrain->rot, c->p);
        for (int k = 0; k < 3; k++) o->point[k] += terrain->pos[k];
        m3_mulv(o->normal, terrain->rot, c->n);
        o->distance = c->phi;
        o->feature = c->feature;
    }
    return m;
}

static int collide_terrain(const col_geom* a, const col_geom* b, double envelope, col_contact_point* out, int max)
{
    int keep = max < PAIR_MAX ? max : PAIR_MAX;
    if (keep <= 0 || !out) return 0;
    pair_ctx x;
    x.hf = b->type == DVI_SHAPE_HEIGHTFIELD ? b->hfield : NULL;
    x.mesh = b->type == DVI_SHAPE_MESH ? b->mesh : NULL;
    if (!x.hf && !x.mesh) return 0;
    shape_make(&x.s, a, b);
    x.env = envelope;
    double cmax = dmax(fabs(x.s.c[0]), dmax(fabs(x.s.c[1]), fabs(x.s.c[2])));
    if (!isfinite(cmax) || !isfinite(x.s.bound) || !(envelope >= 0.0) || !isfinite(envelope)) return 0;
    x.tol_pos = 1e-9 * x.s.bound + 1e-13 * cmax + 1e-300;
    x.tol_face = 1e-6 * x.s.bound;
    x.delta = FLAT_DELTA * x.s.bound;
    x.count = 0;
    x.nseen = 0;
    x.nmesh = 0;
    memset(x.seen, 0xff, sizeof x.seen);
    double lo[3], hi[3];
    shape_aabb(&x.s, envelope, lo, hi);
    tri_iter it;
    tri t;
    if (x.mesh) { /* buffer the triangles near the shape: neighbour look-ups then stay local */
        iter_begin(&it, NULL, x.mesh, lo, hi, NULL, NULL);
        while (x.nmesh >= 0 && iter_next(&it, &t)) {
            if (x.nmesh == MESH_CAND) x.nmesh = -1;
            else x.mesh_tri[x.nmesh++] = t.id;
        }
        if (x.nmesh >= 0) {
            for (int k = 0; k < x.nmesh; k++)
                if (mesh_triangle(x.mesh, x.mesh_tri[k], &t)) collide_triangle(&x, &t);
            return emit(&x, b, out, keep);
        }
    }
    iter_begin(&it, x.hf, x.mesh, lo, hi, cull_cell, &x);
    while (iter_next(&it, &t)) collide_triangle(&x, &t);
    return emit(&x, b, out, keep);
}

/* ---- public routine (narrow.h) -------------------------------------------- */

int col_collide_terrain(const col_geom* a, const col_geom* b, double envelope, col_contact_point* out, int max)
{
    const dvi_shape_type ta = a->type, tb = b->type;
    const bool convex =
        ta == DVI_SHAPE_SPHERE || ta == DVI_SHAPE_BOX || ta == DVI_SHAPE_CAPSULE || ta == DVI_SHAPE_CYLINDER;
    if (!convex || (tb != DVI_SHAPE_HEIGHTFIELD && tb != DVI_SHAPE_MESH)) return 0;
    return collide_terrain(a, b, envelope, out, max);
}

/* ---- terrain.h helpers -------------------------------------------------------- */

void col_heightfield_init_range(col_heightfield* hf)
{
    hf->hmin = 0.0;
    hf->hmax = 0.0;
    if (!hf->heights || hf->nx <= 0 || hf->ny <= 0) return;
    size_t n = (size_t)hf->nx * (size_t)hf->ny;
    double lo = hf->heights[0], hi = hf->heights[0];
    for (size_t k = 1; k < n; k++) {
        lo = dmin(lo, hf->heights[k]);
        hi = dmax(hi, hf->heights[k]);
    }
    hf->hmin = lo;
    hf->hmax = hi;
}

void col_trimesh_bounds(const col_trimesh* m, double lo[3], double hi[3])
{
    for (int k = 0; k < 3; k++) lo[k] = hi[k] = 0.0;
    if (!m->vertices || m->vertex_count <= 0) return;
    for (int k = 0; k < 3; k++) lo[k] = hi[k] = m->vertices[k];
    for (int32_t v = 1; v < m->vertex_count; v++)
        for (int k = 0; k < 3; k++) {
            lo[k] = dmin(lo[k], m->vertices[3 * (size_t)v + k]);
            hi[k] = dmax(hi[k], m->vertices[3 * (size_t)v + k]);
        }
}
