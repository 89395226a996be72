/* dvicontact — general convex narrow phase: support functions, GJK distance,
 * EPA penetration depth.
 *
 * What. col_geom_support() returns the support point of a sphere, box,
 * capsule or cylinder in a world direction. col_collide_convex() returns one
 * contact point (signed gap Φ, unit normal from a to b, the point midway
 * between the two surfaces) for any two of those shapes.
 *
 * Algorithm. Every shape is treated as a core swept by a ball of radius
 * "margin": a sphere is a point ⊕ ball(r), a capsule a segment ⊕ ball(r), a
 * box and a cylinder are their own cores with margin 0. Let M = A − B be the
 * Minkowski difference of the two cores; its support in direction d is
 * s_A(d) − s_B(−d), and the closest point v of M to the origin gives the core
 * distance |v| and the witness points (pa − pb = v).
 *   1. GJK (Gilbert, Johnson & Keerthi 1988, IEEE J. Robotics Autom. 4(2))
 *      on the cores, with the termination tests of van den Bergen (1999,
 *      J. Graphics Tools 4(2)): stop when the support point w = s_M(−v)
 *      improves the bound by less than |v|² − v·w ≤ ε_rel |v|² + ε_abs |v|,
 *      when w is already in the simplex, or when |v| stops decreasing. The
 *      closest point of the simplex (1–4 points) is found by Voronoi-region
 *      tests (Ericson 2005, "Real-Time Collision Detection" §5.1) with
 *      explicit fallbacks for degenerate (collinear, coplanar) simplices: a
 *      flat triangle is replaced by its closest edge, a flat tetrahedron by
 *      its closest face. An early exit fires as soon as the lower bound
 *      v·w/|v| exceeds envelope + margins (no contact).
 *      Separated cores: Φ = |v| − r_a − r_b, normal = −v/|v|.
 *   2. Cores overlapping or closer than τ_touch: EPA (van den Bergen 2001,
 *      "Proximity queries and penetration depth computation on 3D game
 *      objects", GDC) on the full shapes (margins included in the support).
 *      The GJK simplex is blown up to a tetrahedron (supports along axes,
 *      around a segment, along a triangle's normal); then the face closest to
 *      the origin is repeatedly split by the support point along its normal:
 *      faces visible from that point are found by a flood fill over face
 *      adjacency, the horizon is re-triangulated to the new point. Stop when
 *      the support gain w·n − dist ≤ τ_epa, when the point is already a
 *      vertex, on a degenerate new face or any topological inconsistency
 *      (then the closest face so far is used), or after 96 iterations.
 *      Penetration: normal = that face's normal n (outward from A − B, i.e.
 *      from a to b), depth = w·n, the support of A − B along n (the exact
 *      overlap along n; the face distance is a lower bound), witnesses from
 *      the barycentric coordinates of the origin's projection on the face.
 *   3. If even the initial tetrahedron cannot be built (a flat Minkowski
 *      difference, e.g. a box of zero thickness), the normal is the centre
 *      line and Φ the overlap along it (a separating-axis estimate).
 *   4. Normal polish. GJK and EPA converge in distance much faster than in
 *      direction (the normal error is about the square root of the relative
 *      distance error), and where the optimal normal sits on a kink of a
 *      support function (a cylinder rim on a box face, a capsule lying on a
 *      cylinder) a normal error costs a first-order error in the separation
 *      along it. For a convex pair the signed distance is
 *      Φ = max over unit n of sep(n), sep(n) = −h_A(n) − h_B(−n) (h = support
 *      function), so candidates are scored by sep: n projected off the kink
 *      planes within 1e-3 of it (box axes, cylinder axis and cap, capsule
 *      axis), singly and together, then ≤ 8 steps of projected gradient
 *      ascent on the sphere (gradient −(s − (s·n) n), s = s_A(n) − s_B(−n);
 *      Newton-sized first step, doubled or quartered). A candidate is kept
 *      only if sep increases. The reported Φ is sep(n) for the final n, so
 *      the pair (n, Φ) is exactly consistent: translating b by −Φ n brings
 *      the shapes into touch. On random pairs of all ten type pairs no
 *      direction separates more than Φ + 1e-8 (tests/test_narrow_box.c);
 *      deep overlaps whose depth hardly depends on the direction (a ball
 *      centred near a cylinder's axis) have normals good to ~1e-2 rad and
 *      depths to ~1e-5 relative (the analytic sphere–cylinder routine is
 *      exact).
 * Tolerances, with s = size(a) + size(b) (half extent, radius + half length):
 *   ε_rel = 1e-12, ε_abs = 1e-12 s (GJK progress), τ_touch = 1e-9 s,
 *   τ_epa = 1e-10 s (EPA gain), visibility 1e-13 s, degenerate simplex:
 *   relative area / volume 1e-12. Iteration limits: GJK 64, EPA 96.
 * Everything is deterministic: fixed search orders, ties broken by index.
 *
 * Cost. GJK: a few support calls for boxes (it terminates exactly on
 * polytopes), ≤ 64 for curved shapes; EPA: ≤ 96 iterations of O(faces)
 * work; the polish typically 5–20 support calls (≤ 200). Measured (gcc -O2, one core): about
 * 1.5–3 µs per call for boxes and cylinders in contact. No allocation: the
 * EPA polytope (≤ 128 vertices, 256 faces) and its work arrays (~40 kB in
 * all) live on the stack.
 */
#include "math3.h"
#include "narrow.h"

#include <float.h>
#include <math.h>
#include <stdbool.h>

#define GJK_MAX_ITER 64
#define GJK_EPS_REL 1e-12
#define GJK_EPS_ABS 1e-12
#define GJK_TOUCH 1e-9
#define EPA_MAX_ITER 96
#define EPA_MAX_V 128
#define EPA_MAX_F 256
#define EPA_TOL 1e-10
#define EPA_VIS 1e-13
#define DEGENERATE 1e-12

/* ---- support functions ----------------------------------------------------- */

/* The shape's class when it is convex (it has a support function). */
static const col_shape_class* convex_class(const col_geom* g)
{
    const col_shape_class* c = col_shape_class_of(g->type);
    return c && c->core_support ? c : NULL;
}

static bool is_convex(const col_geom* g)
{
    return convex_class(g) != NULL;
}

static double margin(const col_geom* g)
{
    const col_shape_class* c = convex_class(g);
    return c ? c->margin(g) : 0.0;
}

static double size(const col_geom* g)
{
    const col_shape_class* c = convex_class(g);
    return c ? c->scale(g) : 0.0;
}

/* Support point of the core (margin excluded) in direction d. */
static void core_support(const col_geom* g, const double d[3], double out[3])
{
    const col_shape_class* c = convex_class(g);
    if (c)
        c->core_support(g, d, out);
    else
        v3_copy(out, g->pos);
}

void col_geom_support(const col_geom* g, const double d[3], double out[3])
{
    core_support(g, d, out);
    double m = margin(g), len = v3_norm(d);
    if (m > 0.0 && len > 0.0) v3_axpy(out, m / len, d);
}

/* ---- simplex --------------------------------------------------------------- */

typedef struct svert {
    double w[3]; /* a − b */
    double a[3], b[3];
} svert;

typedef struct simplex {
    svert v[4];
    double lam[4];
    int n;
} simplex;

/* Support of M = A − B in direction d; `full` includes the margins. */
static void support_pair(const col_geom* a, const col_geom* b, const double d[3], bool full, svert* out)
{
    double nd[3] = {-d[0], -d[1], -d[2]};
    if (full) {
        col_geom_support(a, d, out->a);
        col_geom_support(b, nd, out->b);
    } else {
        core_support(a, d, out->a);
        core_support(b, nd, out->b);
    }
    v3_sub(out->w, out->a, out->b);
}

/* Keeps the vertices idx[0..m) of s with weights lam. */
static void simplex_keep(simplex* s, const int* idx, const double* lam, int m)
{
    svert tmp[4];
    for (int i = 0; i < m; i++) tmp[i] = s->v[idx[i]];
    for (int i = 0; i < m; i++) {
        s->v[i] = tmp[i];
        s->lam[i] = lam[i];
    }
    s->n = m;
}

/* Closest point to the origin on segment [A, B]: weights of A and B. Returns
 * the squared distance. */
static double closest_segment(const double* A, const double* B, double* la, double* lb)
{
    double ab[3];
    v3_sub(ab, B, A);
    double den = v3_dot(ab, ab), t = -v3_dot(A, ab);
    if (t <= 0.0 || den <= 0.0) {
        *la = 1.0;
        *lb = 0.0;
        return v3_dot(A, A);
    }
    if (t >= den) {
        *la = 0.0;
        *lb = 1.0;
        return v3_dot(B, B);
    }
    t /= den;
    *la = 1.0 - t;
    *lb = t;
    double p[3];
    v3_copy(p, A);
    v3_axpy(p, t, ab);
    return v3_dot(p, p);
}

/* The sub-simplex of one vertex i; of the edge (i, j) at parameter t from
 * i. Return its size. */
static int vertex_of(int i, int* idx, double* lam)
{
    idx[0] = i;
    lam[0] = 1.0;
    return 1;
}
static int edge_of(int i, int j, double t, int* idx, double* lam)
{
    idx[0] = i;
    lam[0] = 1.0 - t;
    idx[1] = j;
    lam[1] = t;
    return 2;
}

/* Closest point to the origin on triangle (i0, i1, i2) of s. Writes the
 * supporting sub-simplex (indices into s and weights); returns its size. */
static int closest_triangle(const simplex* s, int i0, int i1, int i2, int* idx, double* lam)
{
    const double *A = s->v[i0].w, *B = s->v[i1].w, *C = s->v[i2].w;
    double ab[3], ac[3], nrm[3];
    v3_sub(ab, B, A);
    v3_sub(ac, C, A);
    v3_cross(nrm, ab, ac);
    if (v3_dot(nrm, nrm) <= DEGENERATE * DEGENERATE * v3_dot(ab, ab) * v3_dot(ac, ac)) {
        /* collinear (or repeated) points: the best of the three edges */
        const int e[3][2] = {{i0, i1}, {i0, i2}, {i1, i2}};
        double best = DBL_MAX;
        int m = 0;
        for (int k = 0; k < 3; k++) {
            double l0, l1, d2 = closest_segment(s->v[e[k][0]].w, s->v[e[k][1]].w, &l0, &l1);
            if (d2 < best) {
                best = d2;
                m = 0;
                if (l0 > 0.0) { idx[m] = e[k][0]; lam[m++] = l0; }
                if (l1 > 0.0) { idx[m] = e[k][1]; lam[m++] = l1; }
            }
        }
        return m;
    }
    double d1 = -v3_dot(ab, A), d2 = -v3_dot(ac, A);
    if (d1 <= 0.0 && d2 <= 0.0) return vertex_of(i0, idx, lam);
    double d3 = -v3_dot(ab, B), d4 = -v3_dot(ac, B);
    if (d3 >= 0.0 && d4 <= d3) return vertex_of(i1, idx, lam);
    double vc = d1 * d4 - d3 * d2;
    if (vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0) return edge_of(i0, i1, d1 / (d1 - d3), idx, lam);
    double d5 = -v3_dot(ab, C), d6 = -v3_dot(ac, C);
    if (d6 >= 0.0 && d5 <= d6) return vertex_of(i2, idx, lam);
    double vb = d5 * d2 - d1 * d6;
    if (vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0) return edge_of(i0, i2, d2 / (d2 - d6), idx, lam);
    double va = d3 * d6 - d5 * d4;
    if (va <= 0.0 && d4 - d3 >= 0.0 && d5 - d6 >= 0.0)
        return edge_of(i1, i2, (d4 - d3) / ((d4 - d3) + (d5 - d6)), idx, lam);
    double den = 1.0 / (va + vb + vc);
    idx[0] = i0; lam[0] = va * den;
    idx[1] = i1; lam[1] = vb * den;
    idx[2] = i2; lam[2] = vc * den;
    return 3;
}

static void simplex_point(const simplex* s, const int* idx, const double* lam, int m, double v[3])
{
    v3_set(v, 0.0, 0.0, 0.0);
    for (int i = 0; i < m; i++) v3_axpy(v, lam[i], s->v[idx[i]].w);
}

/* Replaces s by the sub-simplex supporting its closest point to the origin and
 * writes that point to v. Returns true when the origin is inside a
 * (non-degenerate) tetrahedron. */
static bool simplex_solve(simplex* s, double v[3])
{
    int idx[4];
    double lam[4];
    int m;
    if (s->n == 1) {
        s->lam[0] = 1.0;
        v3_copy(v, s->v[0].w);
        return false;
    }
    if (s->n == 2) {
        double l0, l1;
        closest_segment(s->v[0].w, s->v[1].w, &l0, &l1);
        m = 0;
        if (l0 > 0.0) { idx[m] = 0; lam[m++] = l0; }
        if (l1 > 0.0) { idx[m] = 1; lam[m++] = l1; }
    } else if (s->n == 3) {
        m = closest_triangle(s, 0, 1, 2, idx, lam);
    } else {
        /* tetrahedron: examine the faces the origin lies outside of (all of
         * them when the tetrahedron is flat) */
        static const int face[4][4] = {{0, 1, 2, 3}, {0, 2, 3, 1}, {0, 3, 1, 2}, {1, 3, 2, 0}};
        double best = DBL_MAX;
        m = 0;
        bool any = false;
        for (int f = 0; f < 4; f++) {
            const double *P = s->v[face[f][0]].w, *Q = s->v[face[f][1]].w, *R = s->v[face[f][2]].w,
                         *D = s->v[face[f][3]].w;
            double pq[3], pr[3], pd[3], nrm[3];
            v3_sub(pq, Q, P);
            v3_sub(pr, R, P);
            v3_sub(pd, D, P);
            v3_cross(nrm, pq, pr);
            double sp = -v3_dot(P, nrm), sd = v3_dot(pd, nrm);
            bool flat = fabs(sd) <= DEGENERATE * v3_norm(nrm) * v3_norm(pd);
            if (!flat && sp * sd >= 0.0) continue; /* origin on the inner side */
            any = true;
            int fi[3];
            double fl[3], p[3];
            int fm = closest_triangle(s, face[f][0], face[f][1], face[f][2], fi, fl);
            simplex_point(s, fi, fl, fm, p);
            double d2 = v3_dot(p, p);
            if (d2 < best) {
                best = d2;
                m = fm;
                for (int k = 0; k < fm; k++) { idx[k] = fi[k]; lam[k] = fl[k]; }
            }
        }
        if (!any) {
            v3_set(v, 0.0, 0.0, 0.0);
            return true;
        }
    }
    simplex_point(s, idx, lam, m, v);
    simplex_keep(s, idx, lam, m);
    return false;
}

/* ---- GJK ------------------------------------------------------------------- */

typedef enum gjk_status { GJK_FAR, GJK_SEPARATED, GJK_OVERLAP } gjk_status;

/* GJK on the cores. On GJK_SEPARATED, v is the closest point of A − B to the
 * origin and s its supporting simplex (with weights). On GJK_OVERLAP, s holds
 * the last simplex (which contains, or nearly touches, the origin). */
static gjk_status gjk(const col_geom* a, const col_geom* b, double max_dist, double scale, simplex* s, double v[3])
{
    double d[3];
    v3_sub(d, a->pos, b->pos); /* a point of A − B */
    if (v3_dot(d, d) == 0.0) v3_set(d, 1.0, 0.0, 0.0);
    double nd[3] = {-d[0], -d[1], -d[2]};
    s->n = 1;
    support_pair(a, b, nd, false, &s->v[0]);
    s->lam[0] = 1.0;
    v3_copy(v, s->v[0].w);
    double vv = v3_dot(v, v);
    const double touch2 = (GJK_TOUCH * scale) * (GJK_TOUCH * scale);
    if (vv <= touch2) return GJK_OVERLAP;
    for (int iter = 0; iter < GJK_MAX_ITER; iter++) {
        svert w;
        double dir[3] = {-v[0], -v[1], -v[2]};
        support_pair(a, b, dir, false, &w);
        double vw = v3_dot(v, w.w);
        if (vw > 0.0 && vw * vw > vv * max_dist * max_dist) return GJK_FAR;
        if (vv - vw <= GJK_EPS_REL * vv + GJK_EPS_ABS * scale * sqrt(vv)) break;
        bool dup = false;
        for (int i = 0; i < s->n; i++)
            if (w.w[0] == s->v[i].w[0] && w.w[1] == s->v[i].w[1] && w.w[2] == s->v[i].w[2]) dup = true;
        if (dup) break;
        simplex prev = *s;
        double vprev[3];
        v3_copy(vprev, v);
        s->v[s->n++] = w;
        if (simplex_solve(s, v)) return GJK_OVERLAP;
        double vv_new = v3_dot(v, v);
        if (vv_new <= touch2) return GJK_OVERLAP;
        if (vv_new >= vv) { /* no progress (rounding): keep the previous answer */
            *s = prev;
            v3_copy(v, vprev);
            break;
        }
        vv = vv_new;
    }
    return GJK_SEPARATED;
}

/* ---- EPA ------------------------------------------------------------------- */

typedef struct epa_face {
    int v[3];   /* vertex indices, counter-clockwise seen from outside */
    int adj[3]; /* face across edge (v[k], v[k+1]) */
    double n[3];
    double dist; /* n · v[0]: signed distance of the plane from the origin */
    bool alive;
} epa_face;

typedef struct polytope {
    svert v[EPA_MAX_V];
    epa_face f[EPA_MAX_F];
    int nv, nf;
} polytope;

/* Sets up face f = (i, j, k); false if it is degenerate. */
static bool face_make(polytope* P, int f, int i, int j, int k, double scale)
{
    epa_face* F = &P->f[f];
    F->v[0] = i;
    F->v[1] = j;
    F->v[2] = k;
    F->adj[0] = F->adj[1] = F->adj[2] = -1;
    F->alive = true;
    double e1[3], e2[3];
    v3_sub(e1, P->v[j].w, P->v[i].w);
    v3_sub(e2, P->v[k].w, P->v[i].w);
    v3_cross(F->n, e1, e2);
    double len = v3_norm(F->n);
    if (!(len > 1e-15 * scale * scale)) return false;
    v3_scale(F->n, 1.0 / len, F->n);
    F->dist = v3_dot(F->n, P->v[i].w);
    return true;
}

/* Index k of the edge (p → q) of face f, or −1. */
static int face_edge(const epa_face* F, int p, int q)
{
    for (int k = 0; k < 3; k++)
        if (F->v[k] == p && F->v[(k + 1) % 3] == q) return k;
    return -1;
}

static bool same_point(const double* a, const double* b, double tol)
{
    double d[3];
    v3_sub(d, a, b);
    return v3_dot(d, d) <= tol * tol;
}

/* Grows the GJK simplex into a tetrahedron of full-shape support points.
 * Returns false if A − B is flat. */
static bool epa_init(const col_geom* a, const col_geom* b, const simplex* s, double scale, polytope* P)
{
    static const double axes[6][3] = {{1, 0, 0}, {-1, 0, 0}, {0, 1, 0}, {0, -1, 0}, {0, 0, 1}, {0, 0, -1}};
    const double tol = 1e-9 * scale;
    svert t[4];
    int n = 0;
    /* re-evaluate the simplex points with the full shapes when margins exist:
     * the core simplex points are still points of the full A − B */
    for (int i = 0; i < s->n; i++) t[n++] = s->v[i];
    if (n == 0) {
        support_pair(a, b, axes[0], true, &t[0]);
        n = 1;
    }
    if (n == 1) {
        for (int k = 0; k < 6 && n == 1; k++) {
            support_pair(a, b, axes[k], true, &t[1]);
            if (!same_point(t[1].w, t[0].w, tol)) n = 2;
        }
        if (n == 1) return false;
    }
    if (n == 2) {
        double d[3], e[3] = {0, 0, 0}, u[3], w[3];
        v3_sub(d, t[1].w, t[0].w);
        int im = fabs(d[0]) <= fabs(d[1]) ? (fabs(d[0]) <= fabs(d[2]) ? 0 : 2) : (fabs(d[1]) <= fabs(d[2]) ? 1 : 2);
        e[im] = 1.0;
        v3_cross(u, d, e);
        v3_scale(u, 1.0 / v3_norm(u), u);
        v3_cross(w, d, u);
        v3_scale(w, 1.0 / v3_norm(w), w);
        double dl = v3_norm(d);
        for (int k = 0; k < 6 && n == 2; k++) {
            double ang = k * (3.14159265358979323846 / 3.0), dir[3];
            for (int c = 0; c < 3; c++) dir[c] = cos(ang) * u[c] + sin(ang) * w[c];
            support_pair(a, b, dir, true, &t[2]);
            double r[3], x[3];
            v3_sub(r, t[2].w, t[0].w);
            v3_cross(x, r, d);
            if (v3_norm(x) > tol * dl) n = 3;
        }
        if (n == 2) return false;
    }
    if (n == 3) {
        double e1[3], e2[3], nrm[3];
        v3_sub(e1, t[1].w, t[0].w);
        v3_sub(e2, t[2].w, t[0].w);
        v3_cross(nrm, e1, e2);
        double len = v3_norm(nrm);
        if (!(len > 0.0)) return false;
        v3_scale(nrm, 1.0 / len, nrm);
        svert p1, p2;
        double mn[3] = {-nrm[0], -nrm[1], -nrm[2]};
        support_pair(a, b, nrm, true, &p1);
        support_pair(a, b, mn, true, &p2);
        double h1 = v3_dot(nrm, p1.w) - v3_dot(nrm, t[0].w), h2 = v3_dot(nrm, t[0].w) - v3_dot(nrm, p2.w);
        /* the side the origin is on first (so that it lies inside), else the taller */
        double o = -v3_dot(nrm, t[0].w);
        bool use1 = (o > 0.0) ? (h1 > tol || !(h2 > tol)) : !(h2 > tol);
        if (use1 ? !(h1 > tol) : !(h2 > tol)) return false;
        t[3] = use1 ? p1 : p2;
        n = 4;
    }
    P->nv = 4;
    for (int i = 0; i < 4; i++) P->v[i] = t[i];
    double c[3] = {0, 0, 0};
    for (int i = 0; i < 4; i++) v3_axpy(c, 0.25, t[i].w);
    static const int fv[4][3] = {{0, 1, 2}, {0, 3, 1}, {0, 2, 3}, {1, 3, 2}};
    P->nf = 4;
    for (int f = 0; f < 4; f++) {
        if (!face_make(P, f, fv[f][0], fv[f][1], fv[f][2], scale)) return false;
        double oc[3];
        v3_sub(oc, c, P->v[fv[f][0]].w);
        if (v3_dot(oc, P->f[f].n) > 0.0) /* points inwards: flip */
            face_make(P, f, fv[f][0], fv[f][2], fv[f][1], scale);
    }
    for (int f = 0; f < 4; f++)
        for (int k = 0; k < 3; k++) {
            int p = P->f[f].v[k], q = P->f[f].v[(k + 1) % 3];
            for (int g = 0; g < 4; g++)
                if (g != f && face_edge(&P->f[g], q, p) >= 0) P->f[f].adj[k] = g;
            if (P->f[f].adj[k] < 0) return false;
        }
    return true;
}

typedef struct penetration {
    double depth;  /* > 0 when overlapping */
    double normal[3];
    double pa[3], pb[3];
} penetration;

static void epa_witness(const polytope* P, const epa_face* F, double depth, penetration* r)
{
    const double *A = P->v[F->v[0]].w, *B = P->v[F->v[1]].w, *C = P->v[F->v[2]].w;
    double p[3], x[3], y[3], z[3], lam[3];
    v3_scale(p, F->dist, F->n);
    const double* vert[3] = {A, B, C};
    double sum = 0.0;
    for (int k = 0; k < 3; k++) {
        v3_sub(x, vert[(k + 1) % 3], p);
        v3_sub(y, vert[(k + 2) % 3], p);
        v3_cross(z, x, y);
        lam[k] = fmax(0.0, v3_dot(z, F->n));
        sum += lam[k];
    }
    for (int k = 0; k < 3; k++) lam[k] = sum > 0.0 ? lam[k] / sum : 1.0 / 3.0;
    v3_set(r->pa, 0, 0, 0);
    v3_set(r->pb, 0, 0, 0);
    for (int k = 0; k < 3; k++) {
        v3_axpy(r->pa, lam[k], P->v[F->v[k]].a);
        v3_axpy(r->pb, lam[k], P->v[F->v[k]].b);
    }
    /* move the witnesses apart along n so that pa − pb = depth · n */
    v3_axpy(r->pa, 0.5 * (depth - F->dist), F->n);
    v3_axpy(r->pb, -0.5 * (depth - F->dist), F->n);
    r->depth = depth;
    v3_copy(r->normal, F->n);
}

typedef struct horizon_edge {
    int p, q;      /* edge p → q of a removed face */
    int face, k;   /* the kept face across it and the edge index there */
    int made;      /* new face built on it */
} horizon_edge;

/* EPA. Returns false if the polytope could not be started. */
static bool epa(const col_geom* a, const col_geom* b, const simplex* s, double scale, penetration* r)
{
    polytope P;
    if (!epa_init(a, b, s, scale, &P)) return false;
    const double tol = EPA_TOL * scale, vis = EPA_VIS * scale;
    bool have = false;
    for (int iter = 0; iter < EPA_MAX_ITER; iter++) {
        int best = -1;
        for (int f = 0; f < P.nf; f++)
            if (P.f[f].alive && (best < 0 || P.f[f].dist < P.f[best].dist)) best = f;
        if (best < 0) break;
        /* the answer if we stop here: the face's normal and point, the depth
         * from the support along that normal (the exact translation that
         * separates the shapes along n; ≥ the face distance) */
        svert w;
        support_pair(a, b, P.f[best].n, true, &w);
        double h = v3_dot(w.w, P.f[best].n);
        epa_witness(&P, &P.f[best], h, r);
        have = true;
        if (h - P.f[best].dist <= tol) break;
        bool dup = false;
        for (int i = 0; i < P.nv; i++)
            if (same_point(w.w, P.v[i].w, 1e-12 * scale)) dup = true;
        if (dup || P.nv == EPA_MAX_V) break;

        /* flood fill of the faces visible from w, collecting the horizon */
        signed char state[EPA_MAX_F] = {0}; /* 0 unknown, 1 visible, 2 hidden, 3 new */
        int stack_f[3 * EPA_MAX_F], stack_k[3 * EPA_MAX_F], top = 0;
        horizon_edge hz[EPA_MAX_F];
        int nh = 0;
        bool ok = true;
        state[best] = 1;
        for (int k = 0; k < 3; k++) { stack_f[top] = best; stack_k[top++] = k; }
        while (top > 0 && ok) {
            top--;
            int f = stack_f[top], k = stack_k[top];
            int g = P.f[f].adj[k];
            if (state[g] == 0) {
                double d[3];
                v3_sub(d, w.w, P.v[P.f[g].v[0]].w);
                state[g] = v3_dot(P.f[g].n, d) > vis ? 1 : 2;
                if (state[g] == 1) {
                    if (top + 3 > 3 * EPA_MAX_F) { ok = false; break; }
                    for (int j = 0; j < 3; j++) { stack_f[top] = g; stack_k[top++] = j; }
                }
            }
            if (state[g] == 2) {
                int p = P.f[f].v[k], q = P.f[f].v[(k + 1) % 3];
                int j = face_edge(&P.f[g], q, p);
                if (j < 0 || nh == EPA_MAX_F) { ok = false; break; }
                hz[nh].p = p;
                hz[nh].q = q;
                hz[nh].face = g;
                hz[nh].k = j;
                hz[nh].made = -1;
                nh++;
            }
        }
        if (!ok || nh < 3) break;
        /* the horizon must be a simple cycle: each vertex starts exactly one edge */
        for (int i = 0; i < nh && ok; i++)
            for (int j = i + 1; j < nh; j++)
                if (hz[i].p == hz[j].p) { ok = false; break; }
        if (!ok) break;
        /* every new face must be sound before the polytope is touched */
        int wi = P.nv;
        P.v[P.nv++] = w;
        int nfree = 0;
        for (int f = 0; f < P.nf; f++) nfree += state[f] == 1;
        if (P.nf + (nh - nfree) > EPA_MAX_F) break;
        for (int i = 0; i < nh && ok; i++) {
            double e1[3], e2[3], c[3];
            v3_sub(e1, P.v[hz[i].q].w, P.v[hz[i].p].w);
            v3_sub(e2, w.w, P.v[hz[i].p].w);
            v3_cross(c, e1, e2);
            if (!(v3_norm(c) > 1e-15 * scale * scale)) ok = false;
        }
        if (!ok) break;
        /* new faces go into the slots of removed faces, then at the end */
        for (int f = 0; f < P.nf; f++)
            if (state[f] == 1) P.f[f].alive = false;
        int slot = 0;
        for (int i = 0; i < nh; i++) {
            while (slot < P.nf && state[slot] != 1) slot++;
            int f = slot < P.nf ? slot++ : P.nf++;
            face_make(&P, f, hz[i].p, hz[i].q, wi, scale);
            state[f] = 3;
            hz[i].made = f;
            P.f[f].adj[0] = hz[i].face;
            P.f[hz[i].face].adj[hz[i].k] = f;
        }
        /* edge q → w neighbours the new face starting at q; w → p the one ending at p */
        for (int i = 0; i < nh; i++) {
            int next = -1, prev = -1;
            for (int j = 0; j < nh; j++) {
                if (hz[j].p == hz[i].q) next = hz[j].made;
                if (hz[j].q == hz[i].p) prev = hz[j].made;
            }
            if (next < 0 || prev < 0) return have; /* cannot happen for a simple cycle */
            P.f[hz[i].made].adj[1] = next;
            P.f[hz[i].made].adj[2] = prev;
        }
    }
    return have;
}

/* ---- the narrow-phase routine ------------------------------------------------ */

/* Fallback for a flat Minkowski difference: the centre line as the axis. */
static void axis_estimate(const col_geom* a, const col_geom* b, penetration* r)
{
    double n[3], nn[3];
    v3_sub(n, b->pos, a->pos);
    double len = v3_norm(n);
    if (len > 0.0) v3_scale(n, 1.0 / len, n);
    else v3_set(n, 0.0, 0.0, 1.0);
    v3_scale(nn, -1.0, n);
    col_geom_support(a, n, r->pa);
    col_geom_support(b, nn, r->pb);
    double d[3];
    v3_sub(d, r->pa, r->pb);
    r->depth = v3_dot(d, n);
    v3_copy(r->normal, n);
}

/* Separation of a and b along unit n: −h_A(n) − h_B(−n). It is ≤ the signed
 * distance for every n, with equality at the optimal normal. */
static double separation(const col_geom* a, const col_geom* b, const double n[3])
{
    double sa[3], sb[3], mn[3] = {-n[0], -n[1], -n[2]}, d[3];
    col_geom_support(a, n, sa);
    col_geom_support(b, mn, sb);
    v3_sub(d, sb, sa);
    return v3_dot(d, n);
}

/* Normals of the planes across which the support function of g has a kink
 * (a box face or edge, a cylinder's or capsule's side line, a cap). */
static int kink_planes(const col_geom* g, double k[3][3])
{
    const col_shape_class* c = convex_class(g);
    return c && c->kinks ? c->kinks(g, k) : 0;
}

/* Removes from v its components along the normals k[use[0..m)] (an
 * orthonormal basis of their span is built; dependent normals skipped). */
static void remove_planes(double v[3], double k[][3], const int* use, int m)
{
    double basis[3][3];
    int nb = 0;
    for (int i = 0; i < m && nb < 3; i++) {
        double e[3];
        v3_copy(e, k[use[i]]);
        for (int j = 0; j < nb; j++) v3_axpy(e, -v3_dot(e, basis[j]), basis[j]);
        double l = v3_norm(e);
        if (l < 1e-6) continue;
        v3_scale(basis[nb++], 1.0 / l, e);
    }
    for (int j = 0; j < nb; j++) v3_axpy(v, -v3_dot(v, basis[j]), basis[j]);
}

/* Rank of the normals k[use[0..m)]. */
static int rank_of(double k[][3], const int* use, int m)
{
    double v[3] = {0, 0, 0};
    int r = 0;
    double basis[3][3];
    for (int i = 0; i < m && r < 3; i++) {
        v3_copy(v, k[use[i]]);
        for (int j = 0; j < r; j++) v3_axpy(v, -v3_dot(v, basis[j]), basis[j]);
        double l = v3_norm(v);
        if (l < 1e-6) continue;
        v3_scale(basis[r++], 1.0 / l, v);
    }
    return r;
}

/* Unit n projected off the kink planes k[use[0..m)]; false if little is left. */
static bool project_off(const double n[3], double k[][3], const int* use, int m, double out[3])
{
    v3_copy(out, n);
    remove_planes(out, k, use, m);
    double l = v3_norm(out);
    if (!(l > 0.5)) return false;
    v3_scale(out, 1.0 / l, out);
    return true;
}

/* Polishes the normal n: GJK and EPA give it to about the square root of
 * their relative tolerance, which costs a first-order error in Φ where the
 * optimal normal sits on a kink of a support function (a rim on a face).
 * Candidates: n projected off the nearby kink planes (|k·n| < 1e-3), singly
 * and all together, then up to 8 steps of projected gradient ascent (for
 * curved supports), staying on the kink planes chosen; a candidate is kept
 * only if it increases the separation. Returns the separation along the
 * final n. */
static double polish_normal(const col_geom* a, const col_geom* b, double n[3])
{
    double best = separation(a, b, n);
    double k[6][3], cand[3];
    int nk = kink_planes(a, k);
    nk += kink_planes(b, k + nk);
    int near[6], nn = 0;
    for (int i = 0; i < nk; i++)
        if (fabs(v3_dot(k[i], n)) < 1e-3) near[nn++] = i;
    double n0[3];
    v3_copy(n0, n);
    const int* act = NULL; /* the kink planes the best normal lies on */
    int nact = 0;
    for (int i = 0; i <= nn; i++) {
        /* i < nn: plane near[i] alone; i == nn: all of them */
        if (i == nn && nn < 2) break;
        const int* use = i < nn ? &near[i] : near;
        int nuse = i < nn ? 1 : nn;
        if (!project_off(n0, k, use, nuse, cand)) continue;
        double sc = separation(a, b, cand);
        if (sc > best) {
            best = sc;
            v3_copy(n, cand);
            act = use;
            nact = nuse;
        }
    }
    /* projected gradient ascent of the separation −h_M(n) on the unit
     * sphere, unless the kink planes already fix n: its gradient is
     * −(s − (s·n) n), s = s_A(n) − s_B(−n); the first step |g| / |s·n| is
     * Newton's for a polyhedral M; it is doubled while the separation keeps
     * increasing, else halved until it does */
    if (rank_of(k, act, nact) >= 2) return best;
    for (int it = 0; it < 8; it++) {
        double sa[3], sb[3], mn[3] = {-n[0], -n[1], -n[2]}, g[3], t[3];
        col_geom_support(a, n, sa);
        col_geom_support(b, mn, sb);
        v3_sub(g, sa, sb);
        double sn = v3_dot(g, n);
        v3_axpy(g, -sn, n);
        v3_scale(t, -1.0, g);
        remove_planes(t, k, act, nact); /* supports are not unique across them */
        double gl = v3_norm(t);
        if (!(gl > 1e-14 * (fabs(sn) + gl))) break;
        v3_scale(t, 1.0 / gl, t);
        double beta = fmin(0.25, gl / fmax(fabs(sn), 1e-300)), step_best = 0.0;
        for (int h = 0; h < 12; h++) {
            for (int j = 0; j < 3; j++) cand[j] = n[j] + beta * t[j];
            v3_scale(cand, 1.0 / v3_norm(cand), cand);
            double sc = separation(a, b, cand);
            if (sc > best) {
                best = sc;
                step_best = beta;
                if (h >= 4 || beta >= 0.25) break;
                beta *= 2.0; /* expanding */
            } else {
                if (step_best > 0.0) break;
                beta *= 0.25;
            }
        }
        if (step_best == 0.0) break;
        for (int j = 0; j < 3; j++) n[j] += step_best * t[j];
        v3_scale(n, 1.0 / v3_norm(n), n);
    }
    return best;
}

int col_collide_convex(const col_geom* a, const col_geom* b, double envelope, col_contact_point* out, int max)
{
    if (max < 1 || !is_convex(a) || !is_convex(b)) return 0;
    double ma = margin(a), mb = margin(b);
    double scale = size(a) + size(b);
    if (!(scale > 0.0)) scale = 1.0;
    simplex s;
    double v[3];
    double n[3], pa[3], pb[3];
    gjk_status st = gjk(a, b, envelope + ma + mb, scale, &s, v);
    if (st == GJK_FAR) return 0;
    if (st == GJK_SEPARATED) {
        double d = v3_norm(v);
        if (d - ma - mb > envelope) return 0;
        v3_scale(n, -1.0 / d, v);
        v3_set(pa, 0, 0, 0);
        v3_set(pb, 0, 0, 0);
        for (int i = 0; i < s.n; i++) {
            v3_axpy(pa, s.lam[i], s.v[i].a);
            v3_axpy(pb, s.lam[i], s.v[i].b);
        }
        v3_axpy(pa, ma, n);
        v3_axpy(pb, -mb, n);
    } else {
        penetration r;
        if (!epa(a, b, &s, scale, &r)) axis_estimate(a, b, &r);
        v3_copy(n, r.normal);
        v3_copy(pa, r.pa);
        v3_copy(pb, r.pb);
    }
    /* Φ: the separation along the (polished) normal — translating b by −Φ n
     * brings the shapes exactly into touch */
    double phi = polish_normal(a, b, n);
    if (phi > envelope) return 0;
    col_contact_point* c = &out[0];
    for (int k = 0; k < 3; k++) {
        c->point[k] = 0.5 * (pa[k] + pb[k]);
        c->normal[k] = n[k];
    }
    c->distance = phi;
    c->feature = 0;
    return 1;
}

/* A convex shape a and a plane b (solid below its local z = 0): one point,
 * a's deepest point along the plane's normal (its support point along the
 * inward normal), exact for any convex kind. */
int col_collide_convex_plane(const col_geom* a, const col_geom* b, double envelope, col_contact_point* out, int max)
{
    if (max < 1 || !is_convex(a)) return 0;
    const double np[3] = {b->rot[2], b->rot[5], b->rot[8]}, n[3] = {-np[0], -np[1], -np[2]};
    double pa[3], r[3];
    col_geom_support(a, n, pa);
    v3_sub(r, pa, b->pos);
    const double phi = v3_dot(np, r);
    if (!(phi <= envelope)) return 0;
    v3_add_scaled(out->point, pa, 0.5 * phi, n);
    v3_copy(out->normal, n);
    out->distance = phi;
    out->feature = 0;
    out->geom_a = -1;
    out->geom_b = -1;
    return 1;
}
