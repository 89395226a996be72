/* dvicontact — narrow phase for spheres and capsules (see narrow.h).
 *
 * What. Contact points for sphere–{sphere, box, capsule, plane},
 * capsule–{capsule, box, plane}. A sphere is a point grown by its radius and
 * a capsule a segment grown by its radius, so every routine finds the
 * closest points of a point or a segment to the other shape's core (point,
 * segment, box or plane) and subtracts the radii:
 *
 *   sphere–sphere, –capsule, –plane   closed form, one point.
 *   sphere–box       centre clamped to the box in box coordinates; a centre
 *                    inside the box leaves through the nearest face.
 *   capsule–capsule  closest points of two segments (clamped minimisation of
 *                    a 2-variable quadratic). Near-parallel axes (sin θ ≤
 *                    0.02) with overlapping projections give two points, at
 *                    the ends of the overlap, so that a capsule lying on
 *                    another is supported at two places; the closest pair is
 *                    added when it is strictly closer than both ends.
 *   capsule–box      segment–box distance in box coordinates: the squared
 *                    distance along the segment is convex and piecewise
 *                    quadratic between the parameters where the segment
 *                    crosses a face plane (≤ 6), so it is minimised exactly
 *                    piece by piece. When the closest box feature is a face,
 *                    the segment clipped to that face's side slabs gives up
 *                    to two points (its ends); otherwise one point. When the
 *                    segment enters the box, the separating-axis test over
 *                    the 3 face normals and the 3 edge directions × axis
 *                    picks the exit direction of least depth: a face gives the
 *                    clipped ends, an edge the closest points to that edge.
 *   capsule–plane    the two segment ends (one for a zero-length capsule).
 *
 * Conventions (narrow.h): Φ signed gap, normal unit from a to b, point midway
 * between the two surfaces (surface of a = point − Φ/2·n). Feature ids: 0 for
 * the single or closest point, endpoint index for capsule–plane, 1/2 for the
 * two ends of an overlap, 16 + 2·face + end for a capsule–box face manifold
 * (face = 2·axis + (side > 0)).
 *
 * Cost: O(1) per pair, no allocation.
 */
#include "math3.h"
#include "narrow.h"

#include <math.h>
#include <stdbool.h>

#define PARALLEL_SIN 0.02 /* axes closer to parallel than this give 2-point manifolds */

/* ---- small vector helpers -------------------------------------------------- */

static double clamp01(double t)
{
    return t < 0.0 ? 0.0 : (t > 1.0 ? 1.0 : t);
}

/* Column k of the geom rotation: local axis k in world. */
static void axis_of(const col_geom* g, int k, double out[3])
{
    out[0] = g->rot[k];
    out[1] = g->rot[3 + k];
    out[2] = g->rot[6 + k];
}

/* world = pos + R local */
static void to_world(const col_geom* g, const double l[3], double w[3])
{
    double d[3];
    m3_mulv(d, g->rot, l);
    v3_add(w, g->pos, d);
}

/* world direction = R local */
static void dir_to_world(const col_geom* g, const double l[3], double w[3])
{
    m3_mulv(w, g->rot, l);
}

/* local = Rᵀ (world − pos) */
static void to_local(const col_geom* g, const double w[3], double l[3])
{
    double d[3];
    v3_sub(d, w, g->pos);
    m3_tmulv(l, g->rot, d);
}

/* Capsule segment ends p0 = pos − half_length·z, p1 = pos + half_length·z. */
static void capsule_ends(const col_geom* g, double p0[3], double p1[3])
{
    double z[3];
    axis_of(g, 2, z);
    v3_add_scaled(p0, g->pos, -g->half_length, z);
    v3_add_scaled(p1, g->pos, g->half_length, z);
}

/* Some unit vector perpendicular to the unit (or zero) vector u. */
static void any_perpendicular(const double u[3], double out[3])
{
    double e[3] = {0.0, 0.0, 0.0};
    int k = 0; /* world axis least aligned with u */
    if (fabs(u[1]) < fabs(u[k])) k = 1;
    if (fabs(u[2]) < fabs(u[k])) k = 2;
    e[k] = 1.0;
    double c[3];
    v3_cross(c, u, e);
    double l = sqrt(v3_dot(c, c));
    if (l > 0.0) {
        for (int i = 0; i < 3; i++) out[i] = c[i] / l;
    } else {
        out[0] = 0.0;
        out[1] = 0.0;
        out[2] = 1.0;
    }
}

/* Writes one contact: a's surface point pa, unit normal n (a to b), gap phi.
 * The point is midway between the surfaces: pa + phi/2 · n. Returns 1, the
 * count of points written. */
static int emit(col_contact_point* out, const double pa[3], const double n[3], double phi, uint32_t feature)
{
    v3_add_scaled(out->point, pa, 0.5 * phi, n);
    for (int k = 0; k < 3; k++) out->normal[k] = n[k];
    out->distance = phi;
    out->feature = feature;
    out->geom_a = -1;
    out->geom_b = -1;
    return 1;
}

/* Contact between two balls: centres ca (radius ra) and cb (radius rb);
 * `fallback` is the normal used when the centres coincide. Returns 0 or 1. */
static int balls(const double ca[3], double ra, const double cb[3], double rb, const double fallback[3],
                 double envelope, uint32_t feature, col_contact_point* out)
{
    double d[3];
    v3_sub(d, cb, ca);
    const double d2 = v3_dot(d, d), reach = ra + rb + envelope;
    if (reach >= 0.0 && d2 > reach * reach * (1.0 + 1e-12)) return 0; /* clearly apart: no sqrt */
    double dist = sqrt(d2);
    double phi = dist - ra - rb;
    if (!(phi <= envelope)) return 0;
    double n[3];
    if (dist > 0.0) {
        const double inv = 1.0 / dist;
        for (int k = 0; k < 3; k++) n[k] = d[k] * inv;
    } else {
        for (int k = 0; k < 3; k++) n[k] = fallback[k];
    }
    double pa[3];
    v3_add_scaled(pa, ca, ra, n);
    return emit(out, pa, n, phi, feature);
}

/* Parameter of the point of segment p0 + t·d (t in [0, 1]) closest to x. */
static double segment_param(const double p0[3], const double d[3], const double x[3])
{
    double dd = v3_dot(d, d);
    if (!(dd > 0.0)) return 0.0;
    double r[3];
    v3_sub(r, x, p0);
    return clamp01(v3_dot(r, d) / dd);
}

/* Closest points of segments a0 + s·d1 and b0 + t·d2, s, t in [0, 1]. For
 * parallel segments one of the closest pairs (s = 0 if it is one). */
static void segments_closest(const double a0[3], const double d1[3], const double b0[3], const double d2[3],
                             double* s_out, double* t_out)
{
    double r[3];
    v3_sub(r, a0, b0);
    const double a = v3_dot(d1, d1), e = v3_dot(d2, d2), f = v3_dot(d2, r);
    double s, t;
    if (!(a > 0.0) && !(e > 0.0)) {
        s = t = 0.0;
    } else if (!(a > 0.0)) {
        s = 0.0;
        t = clamp01(f / e);
    } else {
        const double c = v3_dot(d1, r);
        if (!(e > 0.0)) {
            t = 0.0;
            s = clamp01(-c / a);
        } else {
            const double b = v3_dot(d1, d2);
            const double denom = a * e - b * b; /* = |d1 × d2|² ≥ 0 */
            s = denom > 1e-14 * a * e ? clamp01((b * f - c * e) / denom) : 0.0;
            t = (b * s + f) / e;
            if (t < 0.0) {
                t = 0.0;
                s = clamp01(-c / a);
            } else if (t > 1.0) {
                t = 1.0;
                s = clamp01((b - c) / a);
            }
        }
    }
    *s_out = s;
    *t_out = t;
}

/* ---- sphere ----------------------------------------------------------------- */

int col_collide_sphere_sphere(const col_geom* a, const col_geom* b, double envelope, col_contact_point* out,
                              int max)
{
    if (max < 1) return 0;
    const double up[3] = {0.0, 0.0, 1.0};
    return balls(a->pos, a->radius, b->pos, b->radius, up, envelope, 0, out);
}

int col_collide_sphere_capsule(const col_geom* a, const col_geom* b, double envelope, col_contact_point* out,
                               int max)
{
    if (max < 1) return 0;
    double p0[3], p1[3], d[3], q[3], fallback[3];
    capsule_ends(b, p0, p1);
    v3_sub(d, p1, p0);
    v3_add_scaled(q, p0, segment_param(p0, d, a->pos), d);
    axis_of(b, 0, fallback); /* perpendicular to the capsule axis */
    return balls(a->pos, a->radius, q, b->radius, fallback, envelope, 0, out);
}

int col_collide_sphere_plane(const col_geom* a, const col_geom* b, double envelope, col_contact_point* out,
                             int max)
{
    if (max < 1) return 0;
    double np[3], r[3];
    axis_of(b, 2, np);
    v3_sub(r, a->pos, b->pos);
    const double s = v3_dot(np, r); /* height of the centre above the plane */
    const double phi = s - a->radius;
    if (!(phi <= envelope)) return 0;
    double n[3] = {-np[0], -np[1], -np[2]}, pa[3];
    v3_add_scaled(pa, a->pos, a->radius, n);
    return emit(out, pa, n, phi, 0);
}

int col_collide_sphere_box(const col_geom* a, const col_geom* b, double envelope, col_contact_point* out,
                           int max)
{
    if (max < 1) return 0;
    const double* h = b->half;
    double p[3], q[3], d[3];
    to_local(b, a->pos, p);
    for (int k = 0; k < 3; k++) {
        q[k] = p[k] < -h[k] ? -h[k] : (p[k] > h[k] ? h[k] : p[k]);
        d[k] = q[k] - p[k]; /* from the centre to the box */
    }
    const double dist = sqrt(v3_dot(d, d));
    double nl[3], phi;
    if (dist > 0.0) {
        phi = dist - a->radius;
        if (!(phi <= envelope)) return 0;
        for (int k = 0; k < 3; k++) nl[k] = d[k] / dist;
    } else {
        /* centre inside: leave through the nearest face (lowest axis on ties) */
        int k = 0;
        double best = h[0] - fabs(p[0]);
        for (int j = 1; j < 3; j++) {
            double depth = h[j] - fabs(p[j]);
            if (depth < best) {
                best = depth;
                k = j;
            }
        }
        const double side = p[k] >= 0.0 ? 1.0 : -1.0;
        phi = -best - a->radius;
        nl[0] = nl[1] = nl[2] = 0.0;
        nl[k] = -side; /* into the box through face (k, side) */
    }
    double n[3], pa[3];
    dir_to_world(b, nl, n);
    v3_add_scaled(pa, a->pos, a->radius, n);
    return emit(out, pa, n, phi, 0);
}

/* ---- capsule–plane ---------------------------------------------------------- */

int col_collide_capsule_plane(const col_geom* a, const col_geom* b, double envelope, col_contact_point* out,
                              int max)
{
    double np[3], ends[2][3];
    axis_of(b, 2, np);
    capsule_ends(a, ends[0], ends[1]);
    const double n[3] = {-np[0], -np[1], -np[2]};
    const int nends = a->half_length > 0.0 ? 2 : 1;
    int count = 0;
    for (int e = 0; e < nends && count < max; e++) {
        double r[3], pa[3];
        v3_sub(r, ends[e], b->pos);
        const double phi = v3_dot(np, r) - a->radius;
        if (!(phi <= envelope)) continue;
        v3_add_scaled(pa, ends[e], a->radius, n);
        emit(&out[count++], pa, n, phi, (uint32_t)e);
    }
    return count;
}

/* ---- capsule–capsule -------------------------------------------------------- */

/* Normal for two capsule axes that touch: perpendicular to both axes (or to
 * the first one), pointing from centre ca towards cb when that is defined. */
static void capsule_fallback_normal(const double d1[3], const double d2[3], const double ca[3], const double cb[3],
                                    double n[3])
{
    double c[3];
    v3_cross(c, d1, d2);
    double l = sqrt(v3_dot(c, c));
    if (l > 1e-12 * sqrt(v3_dot(d1, d1) * v3_dot(d2, d2)) && l > 0.0) {
        for (int k = 0; k < 3; k++) n[k] = c[k] / l;
    } else {
        const double* u = v3_dot(d1, d1) > 0.0 ? d1 : d2;
        double ul = sqrt(v3_dot(u, u)), un[3] = {0.0, 0.0, 0.0};
        if (ul > 0.0)
            for (int k = 0; k < 3; k++) un[k] = u[k] / ul;
        any_perpendicular(un, n);
    }
    double r[3];
    v3_sub(r, cb, ca);
    if (v3_dot(r, n) < 0.0)
        for (int k = 0; k < 3; k++) n[k] = -n[k];
}

int col_collide_capsule_capsule(const col_geom* a, const col_geom* b, double envelope, col_contact_point* out,
                                int max)
{
    if (max < 1) return 0;
    double a0[3], a1[3], b0[3], b1[3], d1[3], d2[3], fallback[3];
    capsule_ends(a, a0, a1);
    capsule_ends(b, b0, b1);
    v3_sub(d1, a1, a0);
    v3_sub(d2, b1, b0);
    capsule_fallback_normal(d1, d2, a->pos, b->pos, fallback);
    const double ra = a->radius, rb = b->radius;

    double s, t, pa[3], pb[3];
    segments_closest(a0, d1, b0, d2, &s, &t);
    v3_add_scaled(pa, a0, s, d1);
    v3_add_scaled(pb, b0, t, d2);
    col_contact_point closest;
    if (!balls(pa, ra, pb, rb, fallback, envelope, 0, &closest)) return 0;

    /* near-parallel axes: the two ends of the overlap of b's projection on a */
    const double aa = v3_dot(d1, d1), ee = v3_dot(d2, d2);
    double c[3];
    v3_cross(c, d1, d2);
    int count = 0;
    if (aa > 0.0 && ee > 0.0 && v3_dot(c, c) <= PARALLEL_SIN * PARALLEL_SIN * aa * ee && max >= 3) {
        double r0[3], r1[3];
        v3_sub(r0, b0, a0);
        v3_sub(r1, b1, a0);
        double u0 = v3_dot(r0, d1) / aa, u1 = v3_dot(r1, d1) / aa;
        double lo = fmax(0.0, fmin(u0, u1)), hi = fmin(1.0, fmax(u0, u1));
        if ((hi - lo) * sqrt(aa) > 1e-9 * (ra + rb + sqrt(aa))) {
            double phi_min = HUGE_VAL;
            const double ends[2] = {lo, hi};
            for (int e = 0; e < 2; e++) {
                double qa[3], qb[3];
                v3_add_scaled(qa, a0, ends[e], d1);
                v3_add_scaled(qb, b0, segment_param(b0, d2, qa), d2);
                if (balls(qa, ra, qb, rb, fallback, envelope, (uint32_t)(1 + e), &out[count])) {
                    phi_min = fmin(phi_min, out[count].distance);
                    count++;
                }
            }
            if (count > 0 && closest.distance >= phi_min - 1e-9 * (ra + rb + sqrt(aa))) return count;
        }
    }
    out[count++] = closest;
    return count;
}

/* ---- capsule–box ------------------------------------------------------------ */

/* Squared distance from p0 + t·d (box coordinates) to the box [−h, h]. */
static double box_dist2(const double p0[3], const double d[3], double t, const double h[3])
{
    double s = 0.0;
    for (int k = 0; k < 3; k++) {
        double x = p0[k] + t * d[k];
        double e = x > h[k] ? x - h[k] : (x < -h[k] ? x + h[k] : 0.0);
        s += e * e;
    }
    return s;
}

/* Minimises the squared distance from the segment p0 + t·d, t in [0, 1], to
 * the box [−h, h] exactly: between consecutive face-plane crossings the set
 * of clamped coordinates is fixed and the squared distance is a quadratic in
 * t. Returns the minimum, *t_out its smallest minimiser. */
static double segment_box_closest(const double p0[3], const double d[3], const double h[3], double* t_out)
{
    double ts[8];
    int nt = 0;
    ts[nt++] = 0.0;
    for (int k = 0; k < 3; k++) {
        if (d[k] == 0.0) continue;
        for (int sgn = -1; sgn <= 1; sgn += 2) {
            double t = (sgn * h[k] - p0[k]) / d[k];
            if (t > 0.0 && t < 1.0) ts[nt++] = t;
        }
    }
    ts[nt++] = 1.0;
    for (int i = 1; i < nt; i++) /* insertion sort */
        for (int j = i; j > 0 && ts[j - 1] > ts[j]; j--) {
            double x = ts[j];
            ts[j] = ts[j - 1];
            ts[j - 1] = x;
        }
    double best = box_dist2(p0, d, 0.0, h), tbest = 0.0;
    for (int i = 0; i + 1 < nt; i++) {
        const double ta = ts[i], tb = ts[i + 1];
        if (!(tb > ta)) continue;
        const double tm = 0.5 * (ta + tb);
        double A = 0.0, B = 0.0;
        for (int k = 0; k < 3; k++) {
            double x = p0[k] + tm * d[k];
            double side = x > h[k] ? 1.0 : (x < -h[k] ? -1.0 : 0.0);
            if (side == 0.0) continue;
            A += d[k] * d[k];
            B += d[k] * (p0[k] - side * h[k]);
        }
        double t = A > 0.0 ? -B / A : ta;
        t = t < ta ? ta : (t > tb ? tb : t);
        double f = box_dist2(p0, d, t, h);
        if (f < best) {
            best = f;
            tbest = t;
        }
    }
    *t_out = tbest;
    return best;
}

/* Clips t in [0, 1] to the slabs |p0_j + t·d_j| ≤ h_j for j ≠ k. Returns
 * false when nothing is left. */
static bool clip_to_face(const double p0[3], const double d[3], const double h[3], int k, double* t0, double* t1)
{
    double lo = 0.0, hi = 1.0;
    for (int j = 0; j < 3; j++) {
        if (j == k) continue;
        if (d[j] == 0.0) {
            if (fabs(p0[j]) > h[j]) return false;
            continue;
        }
        double ta = (-h[j] - p0[j]) / d[j], tb = (h[j] - p0[j]) / d[j];
        if (ta > tb) {
            double x = ta;
            ta = tb;
            tb = x;
        }
        lo = fmax(lo, ta);
        hi = fmin(hi, tb);
    }
    *t0 = lo;
    *t1 = hi;
    return lo <= hi;
}

/* Points of the segment p0 + t·d, t in [t0, t1] (box coordinates), against
 * box face (k, side): gap Φ(t) = side·x_k(t) − h_k − r at both ends (one end
 * if the clipped piece is a point). Normal from the capsule into the box. */
static int face_points(const col_geom* box, const double p0[3], const double d[3], double t0, double t1, int k,
                       double side, double r, double envelope, col_contact_point* out, int max)
{
    const double* h = box->half;
    double nl[3] = {0.0, 0.0, 0.0}, n[3];
    nl[k] = -side;
    dir_to_world(box, nl, n);
    const double len = sqrt(v3_dot(d, d));
    const int nends = (t1 - t0) * len > 1e-9 * (r + len + h[0] + h[1] + h[2]) ? 2 : 1;
    const double ends[2] = {t0, t1};
    const uint32_t face = (uint32_t)(2 * k + (side > 0.0));
    int count = 0;
    for (int e = 0; e < nends && count < max; e++) {
        double x[3], pb[3], pa[3];
        v3_add_scaled(x, p0, ends[e], d);
        const double phi = side * x[k] - h[k] - r;
        if (!(phi <= envelope)) continue;
        for (int j = 0; j < 3; j++) x[j] = j == k ? side * h[k] : fmin(h[j], fmax(-h[j], x[j]));
        to_world(box, x, pb);
        v3_add_scaled(pa, pb, -phi, n); /* a's surface = b's surface − Φ n */
        emit(&out[count++], pa, n, phi, 16u + 2u * face + (uint32_t)e);
    }
    return count;
}

/* The segment enters the box: separating-axis test over the face normals and
 * edge × axis directions; exit along the axis of least depth. */
static int capsule_box_deep(const col_geom* box, const double p0[3], const double d[3], double r, double envelope,
                            col_contact_point* out, int max)
{
    const double* h = box->half;
    const double p1[3] = {p0[0] + d[0], p0[1] + d[1], p0[2] + d[2]};
    double best_face = HUGE_VAL, best_edge = HUGE_VAL, face_side = 1.0, edge_dir[3] = {0.0, 0.0, 0.0};
    int face_k = 0, edge_k = -1;
    const double len = sqrt(v3_dot(d, d));
    for (int k = 0; k < 6; k++) {
        double L[3] = {0.0, 0.0, 0.0};
        if (k < 3) {
            L[k] = 1.0;
        } else {
            double e[3] = {0.0, 0.0, 0.0};
            e[k - 3] = 1.0;
            v3_cross(L, e, d);
            double l = sqrt(v3_dot(L, L));
            if (!(l > 1e-6 * len)) continue; /* axis parallel to the edge */
            for (int j = 0; j < 3; j++) L[j] /= l;
        }
        const double x0 = v3_dot(L, p0), x1 = v3_dot(L, p1);
        const double rb = h[0] * fabs(L[0]) + h[1] * fabs(L[1]) + h[2] * fabs(L[2]);
        const double up = rb - fmin(x0, x1), down = fmax(x0, x1) + rb; /* exit along +L, −L */
        const double depth = fmin(up, down), dir = up <= down ? 1.0 : -1.0;
        if (k < 3 && depth < best_face) {
            best_face = depth;
            face_k = k;
            face_side = dir;
        } else if (k >= 3 && depth < best_edge) {
            best_edge = depth;
            edge_k = k - 3;
            for (int j = 0; j < 3; j++) edge_dir[j] = dir * L[j];
        }
    }
    const double scale = h[0] + h[1] + h[2] + len;
    if (edge_k < 0 || !(best_edge < 0.95 * best_face - 1e-9 * scale)) {
        double t0, t1;
        if (!clip_to_face(p0, d, h, face_k, &t0, &t1)) { /* only by rounding: use the deepest end */
            t0 = t1 = face_side * (p1[face_k] - p0[face_k]) < 0.0 ? 1.0 : 0.0;
        }
        return face_points(box, p0, d, t0, t1, face_k, face_side, r, envelope, out, max);
    }
    /* edge: the box edge along axis edge_k on the side the capsule exits to */
    double q0[3], q1[3], e[3] = {0.0, 0.0, 0.0};
    for (int j = 0; j < 3; j++) q0[j] = j == edge_k ? -h[j] : (edge_dir[j] >= 0.0 ? h[j] : -h[j]);
    for (int j = 0; j < 3; j++) q1[j] = j == edge_k ? h[j] : q0[j];
    v3_sub(e, q1, q0);
    double s, t, qb[3], pb[3], pa[3], n[3], nl[3] = {-edge_dir[0], -edge_dir[1], -edge_dir[2]};
    segments_closest(p0, d, q0, e, &s, &t);
    v3_add_scaled(qb, q0, t, e);
    const double phi = -best_edge - r;
    if (!(phi <= envelope)) return 0;
    dir_to_world(box, nl, n);
    to_world(box, qb, pb);
    v3_add_scaled(pa, pb, -phi, n);
    return emit(out, pa, n, phi, 0);
}

int col_collide_capsule_box(const col_geom* a, const col_geom* b, double envelope, col_contact_point* out,
                            int max)
{
    if (max < 1) return 0;
    const double* h = b->half;
    const double r = a->radius;
    double w0[3], w1[3], p0[3], p1[3], d[3];
    capsule_ends(a, w0, w1);
    to_local(b, w0, p0);
    to_local(b, w1, p1);
    v3_sub(d, p1, p0);
    double t;
    const double dist2 = segment_box_closest(p0, d, h, &t);
    const double scale = h[0] + h[1] + h[2] + sqrt(v3_dot(d, d)) + sqrt(v3_dot(p0, p0));
    const double tiny = 1e-12 * scale;
    if (!(dist2 > tiny * tiny)) return capsule_box_deep(b, p0, d, r, envelope, out, max);

    const double dist = sqrt(dist2);
    if (!(dist - r <= envelope)) return 0;
    double x[3], q[3];
    v3_add_scaled(x, p0, t, d);
    int outside = 0, k_out = 0;
    for (int k = 0; k < 3; k++) {
        q[k] = fmin(h[k], fmax(-h[k], x[k]));
        if (q[k] != x[k]) {
            outside++;
            k_out = k;
        }
    }
    if (outside == 1) { /* closest feature is a face: clip to the face region */
        double t0, t1;
        if (!clip_to_face(p0, d, h, k_out, &t0, &t1)) t0 = t1 = t;
        t0 = fmin(t0, t);
        t1 = fmax(t1, t);
        return face_points(b, p0, d, t0, t1, k_out, x[k_out] > 0.0 ? 1.0 : -1.0, r, envelope, out, max);
    }
    /* edge or corner: one point */
    double nl[3], n[3], pa_l[3], pa[3];
    for (int k = 0; k < 3; k++) nl[k] = (q[k] - x[k]) / dist;
    v3_add_scaled(pa_l, x, r, nl);
    dir_to_world(b, nl, n);
    to_world(b, pa_l, pa);
    return emit(out, pa, n, dist - r, 0);
}
