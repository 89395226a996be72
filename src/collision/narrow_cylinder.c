/* dvicontact — cylinder narrow phase: against planes, spheres, boxes,
 * capsules and other cylinders.
 *
 * What. A cylinder is the solid {ρ ≤ radius, |z| ≤ half_length} of its local
 * frame (axis = local z; a wheel rolls on its side). Routines:
 *   cylinder–plane   rim samples of both caps within the envelope: 4 per cap,
 *                    at the lowest rim point and at +90°, 180°, 270° from it
 *                    around the axis (body-fixed directions when the axis is
 *                    normal to the plane, to 1e-9). A wheel on its side gives
 *                    the 2 rim ends of the contact line, a tilted wheel the
 *                    lowest rim point exactly, a cylinder on its flat face 4
 *                    points on the face circle. At most 4 points are kept
 *                    (the deepest). Feature = 4·cap + sample (cap 0 = +z).
 *   sphere–cylinder  exact: the closest point of the solid cylinder to the
 *                    centre (side, caps, rims), or, for a centre inside, the
 *                    nearest surface (side or cap). Feature: 0 side, 1/2 cap
 *                    +z/−z, 3/4 rim +z/−z.
 *   box–, capsule–, cylinder–cylinder
 *                    one exact point from GJK/EPA (gjk.c, feature 0), then a
 *                    manifold along its normal n for the resting cases: the
 *                    feature of each shape facing the other is found — a box
 *                    face / edge / corner, a cylinder cap (as a body-fixed
 *                    octagon inscribed in the rim) / side line / rim point, a
 *                    capsule side line / point — where "facing" means within
 *                    SIN_TOL (0.05 rad ≈ 2.9°) of parallel to the contact
 *                    plane. If neither is a single point, the two features
 *                    are intersected in the plane ⊥ n (a polygon clips the
 *                    other feature: Sutherland–Hodgman for polygons, Cyrus–
 *                    Beck for a segment; two near-parallel collinear segments
 *                    give their overlap), and at each vertex of the
 *                    intersection the gap along n between the two feature
 *                    surfaces gives Φ. So a cylinder lying on a box face gets
 *                    the two rim extremes, a cylinder standing on a box face
 *                    or on another cylinder points on the rim, two parallel
 *                    lying cylinders the two ends of their common line. The
 *                    exact point is kept too when it is deeper than all of
 *                    them (a tilted cap), and ≤ 4 points are kept (deepest +
 *                    spread). Otherwise the exact point alone is reported.
 *                    Manifold feature = 2^28 + feature codes of both shapes
 *                    and the clip-vertex id.
 * Reference: Ericson 2005, "Real-Time Collision Detection", §5.1 (closest
 * points), §5.2 (clipping); Sutherland & Hodgman 1974; Cyrus & Beck 1978.
 *
 * Cost. Plane and sphere: constant, a few dozen flops. The others: one GJK/
 * EPA call plus a clip of ≤ 8 vertices against ≤ 8 lines. No allocation.
 */
#include "math3.h"
#include "narrow.h"

#include <float.h>
#include <math.h>

#define SIN_TOL 0.05      /* a face / side line counts as parallel to the contact plane within this */
#define UPRIGHT_SNAP 1e-9 /* below this sine of tilt, cylinder–plane uses body-fixed rim samples */

static double shape_size(const col_geom* g)
{
    return col_shape_class_of(g->type)->scale(g);
}

/* ---- cylinder–plane -------------------------------------------------------- */

int col_collide_cylinder_plane(const col_geom* a, const col_geom* b, double envelope, col_contact_point* out,
                               int max)
{
    double np[3], ex[3], ey[3], u[3];
    col_rot_column(b->rot, 2, np);
    col_rot_column(a->rot, 0, ex);
    col_rot_column(a->rot, 1, ey);
    col_rot_column(a->rot, 2, u);
    /* w: lowest direction in the cap plane; w2 = u × w */
    double cu = v3_dot(np, u), w[3], w2[3];
    v3_copy(w, np);
    v3_axpy(w, -cu, u);
    double pl = v3_norm(w);
    if (pl > UPRIGHT_SNAP) {
        v3_scale(w, -1.0 / pl, w);
        v3_cross(w2, u, w);
    } else {
        v3_copy(w, ex);
        v3_copy(w2, ey);
    }
    const double dirs[4][2] = {{1, 0}, {0, 1}, {-1, 0}, {0, -1}};
    col_contact_point pts[8];
    int m = 0;
    for (int cap = 0; cap < 2; cap++) {
        double cc[3];
        v3_copy(cc, a->pos);
        v3_axpy(cc, cap == 0 ? a->half_length : -a->half_length, u);
        for (int k = 0; k < 4; k++) {
            double x[3], r[3];
            v3_copy(x, cc);
            v3_axpy(x, a->radius * dirs[k][0], w);
            v3_axpy(x, a->radius * dirs[k][1], w2);
            v3_sub(r, x, b->pos);
            double phi = v3_dot(r, np);
            if (phi > envelope) continue;
            col_contact_point* o = &pts[m++];
            for (int i = 0; i < 3; i++) {
                o->point[i] = x[i] - 0.5 * phi * np[i];
                o->normal[i] = -np[i];
            }
            o->distance = phi;
            o->feature = (uint32_t)(4 * cap + k);
        }
    }
    int limit = max < 4 ? max : 4;
    while (m > limit) { /* drop the shallowest (the last one on ties) */
        int worst = 0;
        for (int i = 1; i < m; i++)
            if (pts[i].distance >= pts[worst].distance) worst = i;
        for (int i = worst; i + 1 < m; i++) pts[i] = pts[i + 1];
        m--;
    }
    for (int i = 0; i < m; i++) col_put_point(&out[i], &pts[i]);
    return m;
}

/* ---- sphere–cylinder --------------------------------------------------------- */

int col_collide_sphere_cylinder(const col_geom* a, const col_geom* b, double envelope, col_contact_point* out,
                                int max)
{
    if (max < 1) return 0;
    double e[3][3], r[3], l[3];
    for (int i = 0; i < 3; i++) col_rot_column(b->rot, i, e[i]);
    v3_sub(r, a->pos, b->pos);
    for (int i = 0; i < 3; i++) l[i] = v3_dot(r, e[i]);
    const double R = b->radius, H = b->half_length;
    double rho = sqrt(l[0] * l[0] + l[1] * l[1]);
    double q[3], nout[3], gap; /* local closest surface point, outward normal there, signed gap */
    uint32_t feature;
    if (rho > R || fabs(l[2]) > H) {
        double sc = rho > R ? R / rho : 1.0;
        q[0] = l[0] * sc;
        q[1] = l[1] * sc;
        q[2] = fmax(-H, fmin(H, l[2]));
        v3_sub(nout, l, q);
        gap = v3_norm(nout);
        v3_scale(nout, 1.0 / gap, nout);
        if (rho > R && fabs(l[2]) > H) feature = l[2] > 0.0 ? 3u : 4u;
        else if (rho > R) feature = 0u;
        else feature = l[2] > 0.0 ? 1u : 2u;
    } else {
        double side = R - rho, cap = H - fabs(l[2]);
        if (side < cap) {
            if (rho > 0.0) v3_set(nout, l[0] / rho, l[1] / rho, 0.0);
            else v3_set(nout, 1.0, 0.0, 0.0);
            v3_set(q, R * nout[0], R * nout[1], l[2]);
            gap = -side;
            feature = 0u;
        } else {
            double sz = l[2] >= 0.0 ? 1.0 : -1.0;
            v3_set(nout, 0.0, 0.0, sz);
            v3_set(q, l[0], l[1], sz * H);
            gap = -cap;
            feature = sz > 0.0 ? 1u : 2u;
        }
    }
    double phi = gap - a->radius;
    if (phi > envelope) return 0;
    double nw[3], qw[3], pa[3];
    m3_mulv(nw, b->rot, nout);
    m3_mulv(qw, b->rot, q);
    v3_add(qw, qw, b->pos);
    v3_copy(pa, a->pos);
    v3_axpy(pa, -a->radius, nw);
    for (int i = 0; i < 3; i++) {
        out[0].point[i] = 0.5 * (pa[i] + qw[i]);
        out[0].normal[i] = -nw[i];
    }
    out[0].distance = phi;
    out[0].feature = feature;
    return 1;
}

/* ---- contact manifold along a normal -------------------------------------------- */

/* The feature of a shape facing direction d: 1 vertex (a point), 2 (a
 * segment) or ≥ 3 (a convex planar polygon with outward normal fn). Vertices
 * are surface points. `code` identifies the feature within the shape. */
typedef struct feature {
    int n;
    double p[8][3];
    double fn[3];
    int code;
} feature;

/* The one-point feature `code`: the support point in direction d. */
static void support_feature(const col_geom* g, const double d[3], int code, feature* f)
{
    f->n = 1;
    col_geom_support(g, d, f->p[0]);
    f->code = code;
}

static void feature_box(const col_geom* g, const double d[3], feature* f)
{
    double c[3][3], dc[3];
    int imax = 0, imin = 0;
    for (int i = 0; i < 3; i++) {
        col_rot_column(g->rot, i, c[i]);
        dc[i] = v3_dot(c[i], d);
        if (fabs(dc[i]) > fabs(dc[imax])) imax = i;
        if (fabs(dc[i]) < fabs(dc[imin])) imin = i;
    }
    double cos_tol = sqrt(1.0 - SIN_TOL * SIN_TOL);
    double base[3];
    v3_copy(base, g->pos);
    if (fabs(dc[imax]) >= cos_tol) { /* face */
        double s = dc[imax] >= 0.0 ? 1.0 : -1.0;
        int j1 = (imax + 1) % 3, j2 = (imax + 2) % 3;
        static const double corner[4][2] = {{1, 1}, {-1, 1}, {-1, -1}, {1, -1}};
        v3_axpy(base, s * g->half[imax], c[imax]);
        f->n = 4;
        for (int k = 0; k < 4; k++) {
            v3_copy(f->p[k], base);
            v3_axpy(f->p[k], corner[k][0] * g->half[j1], c[j1]);
            v3_axpy(f->p[k], corner[k][1] * g->half[j2], c[j2]);
        }
        v3_scale(f->fn, s, c[imax]);
        f->code = 1 + 2 * imax + (s < 0.0);
        return;
    }
    if (fabs(dc[imin]) <= SIN_TOL) { /* edge along axis imin */
        int bits = 0, bit = 0;
        for (int k = 0; k < 3; k++) {
            if (k == imin) continue;
            int pos = dc[k] >= 0.0;
            v3_axpy(base, pos ? g->half[k] : -g->half[k], c[k]);
            bits |= pos << bit++;
        }
        f->n = 2;
        v3_copy(f->p[0], base);
        v3_axpy(f->p[0], -g->half[imin], c[imin]);
        v3_copy(f->p[1], base);
        v3_axpy(f->p[1], g->half[imin], c[imin]);
        f->code = 8 + 4 * imin + bits;
        return;
    }
    int corner = 0;
    for (int k = 0; k < 3; k++) {
        int pos = dc[k] >= 0.0;
        v3_axpy(base, pos ? g->half[k] : -g->half[k], c[k]);
        corner |= pos << k;
    }
    f->n = 1;
    v3_copy(f->p[0], base);
    f->code = 32 + corner;
}

static void feature_cylinder(const col_geom* g, const double d[3], feature* f)
{
    double ex[3], ey[3], u[3];
    col_rot_column(g->rot, 0, ex);
    col_rot_column(g->rot, 1, ey);
    col_rot_column(g->rot, 2, u);
    double cu = v3_dot(u, d);
    double cos_tol = sqrt(1.0 - SIN_TOL * SIN_TOL);
    if (fabs(cu) >= cos_tol) { /* cap: body-fixed octagon on the rim */
        double s = cu >= 0.0 ? 1.0 : -1.0, cc[3];
        v3_copy(cc, g->pos);
        v3_axpy(cc, s * g->half_length, u);
        const double h = sqrt(0.5);
        const double dir[8][2] = {{1, 0}, {h, h}, {0, 1}, {-h, h}, {-1, 0}, {-h, -h}, {0, -1}, {h, -h}};
        f->n = 8;
        for (int k = 0; k < 8; k++) {
            v3_copy(f->p[k], cc);
            v3_axpy(f->p[k], g->radius * dir[k][0], ex);
            v3_axpy(f->p[k], g->radius * dir[k][1], ey);
        }
        v3_scale(f->fn, s, u);
        f->code = s > 0.0 ? 1 : 2;
        return;
    }
    double w[3];
    v3_copy(w, d);
    v3_axpy(w, -cu, u);
    v3_scale(w, 1.0 / v3_norm(w), w);
    if (fabs(cu) <= SIN_TOL) { /* side line */
        f->n = 2;
        for (int k = 0; k < 2; k++) {
            v3_copy(f->p[k], g->pos);
            v3_axpy(f->p[k], g->radius, w);
            v3_axpy(f->p[k], k == 0 ? -g->half_length : g->half_length, u);
        }
        f->code = 3;
        return;
    }
    support_feature(g, d, 4, f);
}

static void feature_capsule(const col_geom* g, const double d[3], feature* f)
{
    double u[3];
    col_rot_column(g->rot, 2, u);
    if (fabs(v3_dot(u, d)) <= SIN_TOL) {
        f->n = 2;
        for (int k = 0; k < 2; k++) {
            v3_copy(f->p[k], g->pos);
            v3_axpy(f->p[k], k == 0 ? -g->half_length : g->half_length, u);
            v3_axpy(f->p[k], g->radius, d);
        }
        f->code = 1;
        return;
    }
    support_feature(g, d, 2, f);
}

static void feature_of(const col_geom* g, const double d[3], feature* f)
{
    switch (g->type) {
    case DVI_SHAPE_BOX: feature_box(g, d, f); break;
    case DVI_SHAPE_CYLINDER: feature_cylinder(g, d, f); break;
    case DVI_SHAPE_CAPSULE: feature_capsule(g, d, f); break;
    default: support_feature(g, d, 0, f); break;
    }
}

/* A vertex of a 2-D clip: position, the line carrying the edge that leaves
 * it (0–7 subject edges, 8–15 clip edges) and its id. */
typedef struct vtx2 {
    double x, y;
    int carrier, code;
} vtx2;

/* Sutherland–Hodgman step: keeps sx·x + sy·y ≤ off; clip edge `line`. */
static int clip_side(const vtx2* in, int n, double sx, double sy, double off, int line, vtx2* out)
{
    int m = 0;
    for (int i = 0; i < n; i++) {
        const vtx2 *c = &in[i], *d = &in[(i + 1) % n];
        double dc = sx * c->x + sy * c->y - off, dd = sx * d->x + sy * d->y - off;
        if (dc <= 0.0) out[m++] = *c;
        if ((dc < 0.0 && dd > 0.0) || (dc > 0.0 && dd < 0.0)) {
            double t = dc / (dc - dd);
            vtx2* p = &out[m++];
            p->x = c->x + t * (d->x - c->x);
            p->y = c->y + t * (d->y - c->y);
            p->code = 16 + 16 * c->carrier + line;
            p->carrier = dc < 0.0 ? 8 + line : c->carrier;
        }
    }
    return m;
}

/* Height along n (relative to O) of feature f above the point O + x t1 + y t2. */
static double feature_height(const feature* f, const double q2[][2], double x, double y, const double* O,
                             const double* t1, const double* t2, const double* n)
{
    if (f->n >= 3) {
        double r[3];
        v3_sub(r, f->p[0], O);
        v3_axpy(r, -x, t1);
        v3_axpy(r, -y, t2);
        return v3_dot(f->fn, r) / v3_dot(f->fn, n);
    }
    double r0[3], h0, h1 = 0.0, t = 0.0;
    v3_sub(r0, f->p[0], O);
    h0 = v3_dot(r0, n);
    if (f->n == 2) {
        double r1[3];
        v3_sub(r1, f->p[1], O);
        h1 = v3_dot(r1, n);
        double ex = q2[1][0] - q2[0][0], ey = q2[1][1] - q2[0][1], ee = ex * ex + ey * ey;
        if (ee > 0.0) t = fmax(0.0, fmin(1.0, ((x - q2[0][0]) * ex + (y - q2[0][1]) * ey) / ee));
    }
    return h0 + t * (h1 - h0);
}

/* One exact point c0 (from GJK/EPA) → the manifold described in the header. */
static int manifold(const col_geom* a, const col_geom* b, const col_contact_point* c0, double envelope,
                    col_contact_point* out, int max)
{
    const double* n = c0->normal;
    double mn[3] = {-n[0], -n[1], -n[2]};
    feature fa, fb;
    feature_of(a, n, &fa);
    feature_of(b, mn, &fb);
    col_put_point(&out[0], c0);
    if (fa.n == 1 || fb.n == 1) return 1;
    const double scale = shape_size(a) + shape_size(b);
    const double* O = c0->point;
    double t1[3], t2[3];
    if (fabs(n[0]) < 0.57735) v3_set(t1, 0.0, -n[2], n[1]);
    else v3_set(t1, -n[1], n[0], 0.0);
    v3_scale(t1, 1.0 / v3_norm(t1), t1);
    v3_cross(t2, n, t1);
    double qa[8][2], qb[8][2];
    for (int k = 0; k < fa.n; k++) {
        double r[3];
        v3_sub(r, fa.p[k], O);
        qa[k][0] = v3_dot(r, t1);
        qa[k][1] = v3_dot(r, t2);
    }
    for (int k = 0; k < fb.n; k++) {
        double r[3];
        v3_sub(r, fb.p[k], O);
        qb[k][0] = v3_dot(r, t1);
        qb[k][1] = v3_dot(r, t2);
    }
    vtx2 res[2][32];
    int nres = 0;
    if (fa.n == 2 && fb.n == 2) {
        /* two segments: only when nearly parallel and collinear in the plane */
        double ux = qa[1][0] - qa[0][0], uy = qa[1][1] - qa[0][1], la = sqrt(ux * ux + uy * uy);
        double vx = qb[1][0] - qb[0][0], vy = qb[1][1] - qb[0][1], lb = sqrt(vx * vx + vy * vy);
        if (!(la > 1e-9 * scale) || !(lb > 1e-9 * scale)) return 1;
        ux /= la;
        uy /= la;
        if (fabs(ux * vy - uy * vx) > SIN_TOL * lb) return 1;
        double off0 = ux * (qb[0][1] - qa[0][1]) - uy * (qb[0][0] - qa[0][0]);
        double off1 = ux * (qb[1][1] - qa[0][1]) - uy * (qb[1][0] - qa[0][0]);
        if (fabs(off0) > SIN_TOL * lb || fabs(off1) > SIN_TOL * lb) return 1;
        double s0 = ux * (qb[0][0] - qa[0][0]) + uy * (qb[0][1] - qa[0][1]);
        double s1 = ux * (qb[1][0] - qa[0][0]) + uy * (qb[1][1] - qa[0][1]);
        double lo = fmax(0.0, fmin(s0, s1)), hi = fmin(la, fmax(s0, s1));
        if (!(hi - lo > 1e-9 * scale)) return 1;
        for (int k = 0; k < 2; k++) {
            double s = k == 0 ? lo : hi;
            res[0][k].x = qa[0][0] + s * ux;
            res[0][k].y = qa[0][1] + s * uy;
            res[0][k].code = k;
        }
        nres = 2;
    } else {
        /* a polygon clips the other feature: ref = the polygon with fewer sides */
        bool ref_a = fa.n >= 3 && (fb.n < 3 || fa.n <= fb.n);
        const feature *fr = ref_a ? &fa : &fb, *fi = ref_a ? &fb : &fa;
        double(*qr)[2] = ref_a ? qa : qb;
        double(*qi)[2] = ref_a ? qb : qa;
        double area = 0.0;
        for (int k = 0; k < fr->n; k++) {
            int k1 = (k + 1) % fr->n;
            area += qr[k][0] * qr[k1][1] - qr[k1][0] * qr[k][1];
        }
        const int nr = fr->n;
        if (fi->n == 2) { /* Cyrus–Beck */
            double tlo = 0.0, thi = 1.0;
            int clo = 0, chi = 1;
            for (int k = 0; k < nr; k++) {
                int p0 = area >= 0.0 ? k : (nr - k) % nr, p1 = area >= 0.0 ? (k + 1) % nr : (nr - k - 1 + nr) % nr;
                double sx = qr[p1][1] - qr[p0][1], sy = -(qr[p1][0] - qr[p0][0]);
                double off = sx * qr[p0][0] + sy * qr[p0][1];
                double f0 = sx * qi[0][0] + sy * qi[0][1] - off, f1 = sx * qi[1][0] + sy * qi[1][1] - off;
                if (f0 > 0.0 && f1 > 0.0) return 1;
                if (f0 > 0.0) {
                    double t = f0 / (f0 - f1);
                    if (t > tlo) { tlo = t; clo = 8 + k; }
                } else if (f1 > 0.0) {
                    double t = f0 / (f0 - f1);
                    if (t < thi) { thi = t; chi = 16 + k; }
                }
            }
            if (!(thi - tlo > 1e-12)) return 1;
            for (int k = 0; k < 2; k++) {
                double t = k == 0 ? tlo : thi;
                res[0][k].x = qi[0][0] + t * (qi[1][0] - qi[0][0]);
                res[0][k].y = qi[0][1] + t * (qi[1][1] - qi[0][1]);
                res[0][k].code = k == 0 ? clo : chi;
            }
            nres = 2;
        } else { /* Sutherland–Hodgman */
            nres = fi->n;
            for (int k = 0; k < fi->n; k++) {
                res[0][k].x = qi[k][0];
                res[0][k].y = qi[k][1];
                res[0][k].carrier = k;
                res[0][k].code = k;
            }
            int cur = 0;
            for (int k = 0; k < nr && nres > 0; k++) {
                int p0 = area >= 0.0 ? k : (nr - k) % nr, p1 = area >= 0.0 ? (k + 1) % nr : (nr - k - 1 + nr) % nr;
                double sx = qr[p1][1] - qr[p0][1], sy = -(qr[p1][0] - qr[p0][0]);
                double off = sx * qr[p0][0] + sy * qr[p0][1];
                nres = clip_side(res[cur], nres, sx, sy, off, k, res[1 - cur]);
                cur = 1 - cur;
            }
            if (cur == 1)
                for (int k = 0; k < nres; k++) res[0][k] = res[1][k];
        }
    }
    /* heights → points */
    col_contact_point pts[33];
    int m = 0;
    double phimin = DBL_MAX;
    uint32_t fid = 1u << 28 | (uint32_t)fa.code << 20 | (uint32_t)fb.code << 12;
    for (int k = 0; k < nres; k++) {
        double x = res[0][k].x, y = res[0][k].y;
        double hA = feature_height(&fa, (const double(*)[2])qa, x, y, O, t1, t2, n);
        double hB = feature_height(&fb, (const double(*)[2])qb, x, y, O, t1, t2, n);
        double phi = hB - hA;
        if (phi > envelope) continue;
        col_contact_point* o = &pts[m++];
        for (int i = 0; i < 3; i++) {
            o->point[i] = O[i] + x * t1[i] + y * t2[i] + 0.5 * (hA + hB) * n[i];
            o->normal[i] = n[i];
        }
        o->distance = phi;
        o->feature = fid | (uint32_t)res[0][k].code;
        phimin = fmin(phimin, phi);
    }
    if (m == 0) return 1;
    if (c0->distance < phimin - 1e-8 * scale) col_put_point(&pts[m++], c0);
    m = col_reduce_to_4(pts, m, n);
    if (m > max) m = max;
    for (int k = 0; k < m; k++) col_put_point(&out[k], &pts[k]);
    return m;
}

static int convex_with_manifold(const col_geom* a, const col_geom* b, double envelope, col_contact_point* out,
                                int max)
{
    col_contact_point c0;
    if (max < 1 || col_collide_convex(a, b, envelope, &c0, 1) == 0) return 0;
    return manifold(a, b, &c0, envelope, out, max);
}

int col_collide_box_cylinder(const col_geom* a, const col_geom* b, double envelope, col_contact_point* out, int max)
{
    return convex_with_manifold(a, b, envelope, out, max);
}

int col_collide_capsule_cylinder(const col_geom* a, const col_geom* b, double envelope, col_contact_point* out,
                                 int max)
{
    return convex_with_manifold(a, b, envelope, out, max);
}

int col_collide_cylinder_cylinder(const col_geom* a, const col_geom* b, double envelope, col_contact_point* out,
                                  int max)
{
    return convex_with_manifold(a, b, envelope, out, max);
}
