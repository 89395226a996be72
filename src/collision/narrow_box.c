/* dvicontact — box narrow phase: box–plane and box–box with multi-point
 * manifolds.
 *
 * What. col_collide_box_plane() reports the box corners within the envelope
 * of the plane (at most 4: a box resting on a face gives its 4 bottom
 * corners, feature = corner index). col_collide_box_box() reports up to 4
 * points of a face contact or 1 point of an edge–edge contact, for
 * overlapping boxes and for separated boxes closer than the envelope.
 *
 * Corner index: bit 0, 1, 2 set ⇔ the corner is on the + side of local x, y,
 * z. Edge index: 4·(axis it is parallel to) + 2 bits giving the side along
 * the two other axes (in increasing axis order).
 *
 * Algorithm (box–box). Separating-axis test (Gottschalk, Lin & Manocha 1996,
 * "OBBTree") over the 15 axes: the 3 face normals of each box and the 9
 * cross products of their edge directions (cross products shorter than 1e-6,
 * i.e. nearly parallel edges, are skipped). The separation along unit axis L
 * is |d·L| − r_a(L) − r_b(L); any axis with separation > envelope ends the
 * test (no contact). The best axis is the one of largest separation, with a
 * bias for stability: a face of b replaces a face of a only if better by
 * 5e-4 s + 2 % |sep|, an edge axis replaces the best face only if better by
 * 1e-3 s + 5 % |sep| (s = the smaller box's largest half extent). The face
 * separations count corners outside the contact patch, so a slightly tilted
 * resting box can show an edge axis marginally "better" than the face it
 * rests on; the bias keeps such contacts on one reference face from step to
 * step (4 points, stable feature ids). Choosing a face when an edge axis was
 * better by less than the bias gives points whose Φ overestimates the depth
 * by at most that much.
 *   Face axis: the face of the other box most anti-parallel to the normal is
 *   the incident face. Its 4 corners, in the reference face's 2-D frame, are
 *   clipped against the reference rectangle (Sutherland & Hodgman 1974) —
 *   at most 8 vertices. Each surviving vertex gives a point with Φ = its
 *   height above the reference face. When more than 4 points have Φ within
 *   the envelope, 4 are kept: the deepest (depths equal to 1e-6 × the patch
 *   size count as equal: the first wins), the one farthest from it, then
 *   those adding most area (the manifold stays spread over the contact
 *   patch). Feature: bit 30 = reference face on b, bits 27–29 reference face
 *   (2·axis + 1 if on the − side), bits 24–26 incident face, low bits the
 *   clip-vertex id (0–3 an incident corner, else 16 + 4·line + side line:
 *   the two lines whose intersection it is).
 *   Edge axis: the supporting edges of the two boxes along L; their closest
 *   points (clamped to the edges) give one point, Φ = (q_b − q_a)·L.
 *   Feature: bit 31, edge index of a << 8, edge index of b.
 * If a face contact yields no point while the boxes overlap (a degenerate
 * configuration), the GJK/EPA routine supplies one.
 * Reference: Ericson 2005, "Real-Time Collision Detection", §4.4.1, §5.1.9;
 * Sutherland & Hodgman 1974, CACM 17(1).
 *
 * Cost. Box–plane: 8 corner evaluations. Box–box: 15 axes, one clip of ≤ 8
 * vertices against 4 lines; constant time (≈ 0.3 µs, gcc -O2), no
 * allocation.
 */
#include "math3.h"
#include "narrow.h"

#include <float.h>
#include <math.h>

#define FACE_BIAS_ABS 5e-4
#define FACE_BIAS_REL 0.02
#define EDGE_BIAS_ABS 1e-3
#define EDGE_BIAS_REL 0.05
#define EDGE_PARALLEL 1e-6

/* ---- box–plane ----------------------------------------------------------- */

int col_collide_box_plane(const col_geom* a, const col_geom* b, double envelope, col_contact_point* out, int max)
{
    double n[3], cols[3][3];
    col_rot_column(b->rot, 2, n);
    for (int i = 0; i < 3; i++) col_rot_column(a->rot, i, cols[i]);
    double x[8][3], phi[8];
    int idx[8], m = 0;
    for (int c = 0; c < 8; c++) {
        v3_copy(x[c], a->pos);
        for (int i = 0; i < 3; i++) v3_axpy(x[c], (c >> i & 1) ? a->half[i] : -a->half[i], cols[i]);
        double r[3];
        v3_sub(r, x[c], b->pos);
        phi[c] = v3_dot(r, n);
        if (phi[c] <= envelope) idx[m++] = c;
    }
    int limit = max < 4 ? max : 4;
    if (m > limit) { /* keep the deepest (ties: lower corner index), in corner order */
        int keep[8], nk = 0;
        for (int k = 0; k < limit; k++) {
            int best = -1;
            for (int j = 0; j < m; j++) {
                int used = 0;
                for (int u = 0; u < nk; u++) used |= keep[u] == idx[j];
                if (!used && (best < 0 || phi[idx[j]] < phi[best])) best = idx[j];
            }
            keep[nk++] = best;
        }
        m = 0;
        for (int c = 0; c < 8; c++)
            for (int u = 0; u < nk; u++)
                if (keep[u] == c) idx[m++] = c;
    }
    for (int k = 0; k < m; k++) {
        int c = idx[k];
        col_contact_point* o = &out[k];
        for (int i = 0; i < 3; i++) {
            o->point[i] = x[c][i] - 0.5 * phi[c] * n[i];
            o->normal[i] = -n[i];
        }
        o->distance = phi[c];
        o->feature = (uint32_t)c;
    }
    return m;
}

/* ---- box–box ------------------------------------------------------------- */

/* A vertex of the clipped incident face, in the reference face's frame:
 * (x, y) in the face, h the height above it. `carrier` names the line that
 * carries the edge leaving this vertex (0–3 incident edges, 4–7 reference
 * side lines); `code` identifies the vertex (0–3 incident corner, else
 * 16 + 4·carrier + side line of the intersection). */
typedef struct clip_vertex {
    double x, y, h;
    int carrier, code;
} clip_vertex;

/* Sutherland–Hodgman step: keeps the part of polygon in[0..n) where
 * sx·x + sy·y ≤ off; `line` (0–3) names the clip line. */
static int clip_side(const clip_vertex* in, int n, double sx, double sy, double off, int line, clip_vertex* out)
{
    int m = 0;
    for (int i = 0; i < n; i++) {
        const clip_vertex *c = &in[i], *d = &in[(i + 1) % n];
        double dc = sx * c->x + sy * c->y - off, dd = sx * d->x + sy * d->y - off;
        if (dc <= 0.0) out[m++] = *c;
        if ((dc < 0.0 && dd > 0.0) || (dc > 0.0 && dd < 0.0)) {
            double t = dc / (dc - dd);
            clip_vertex* p = &out[m++];
            p->x = c->x + t * (d->x - c->x);
            p->y = c->y + t * (d->y - c->y);
            p->h = c->h + t * (d->h - c->h);
            p->code = 16 + 4 * c->carrier + line;
            p->carrier = dc < 0.0 ? 4 + line : c->carrier;
        }
    }
    return m;
}

/* Closest points of segments ca + s·ua (|s| ≤ ha) and cb + t·ub (|t| ≤ hb),
 * unit directions. */
static void closest_edges(const double* ca, const double* ua, double ha, const double* cb, const double* ub,
                          double hb, double* qa, double* qb)
{
    double r[3];
    v3_sub(r, ca, cb);
    double e = v3_dot(ua, ub), f = v3_dot(ua, r), g = v3_dot(ub, r);
    double den = 1.0 - e * e;
    double s = den > 1e-12 ? (e * g - f) / den : 0.0;
    s = fmax(-ha, fmin(ha, s));
    double t = fmax(-hb, fmin(hb, g + s * e));
    s = fmax(-ha, fmin(ha, t * e - f));
    v3_copy(qa, ca);
    v3_axpy(qa, s, ua);
    v3_copy(qb, cb);
    v3_axpy(qb, t, ub);
}

int col_collide_box_box(const col_geom* a, const col_geom* b, double envelope, col_contact_point* out, int max)
{
    double A[3][3], B[3][3], d[3], da[3], db[3], absC[3][3];
    for (int i = 0; i < 3; i++) {
        col_rot_column(a->rot, i, A[i]);
        col_rot_column(b->rot, i, B[i]);
    }
    v3_sub(d, b->pos, a->pos);
    const double *ha = a->half, *hb = b->half;
    double sa = 0.0, sb = 0.0;
    for (int i = 0; i < 3; i++) {
        da[i] = v3_dot(d, A[i]);
        db[i] = v3_dot(d, B[i]);
        sa = fmax(sa, ha[i]);
        sb = fmax(sb, hb[i]);
        for (int j = 0; j < 3; j++) absC[i][j] = fabs(v3_dot(A[i], B[j]));
    }
    const double s = fmin(sa, sb); /* size of the smaller box: scale of the biases */
    /* face axes of a, then of b */
    double face_sep = -DBL_MAX;
    int face_box = 0, face_axis = 0;
    for (int i = 0; i < 3; i++) {
        double sep = fabs(da[i]) - (ha[i] + hb[0] * absC[i][0] + hb[1] * absC[i][1] + hb[2] * absC[i][2]);
        if (sep > envelope) return 0;
        if (sep > face_sep) { face_sep = sep; face_axis = i; }
    }
    double sep_a = face_sep;
    for (int j = 0; j < 3; j++) {
        double sep = fabs(db[j]) - (hb[j] + ha[0] * absC[0][j] + ha[1] * absC[1][j] + ha[2] * absC[2][j]);
        if (sep > envelope) return 0;
        double need = face_box == 0 ? sep_a + FACE_BIAS_ABS * s + FACE_BIAS_REL * fabs(sep_a) : face_sep;
        if (sep > need) { face_sep = sep; face_box = 1; face_axis = j; }
    }
    /* edge axes a_i × b_j */
    double edge_sep = -DBL_MAX, edge_L[3] = {0, 0, 0};
    int edge_i = -1, edge_j = -1;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            double L[3];
            v3_cross(L, A[i], B[j]);
            double len = v3_norm(L);
            if (len < EDGE_PARALLEL) continue;
            v3_scale(L, 1.0 / len, L);
            double ra = 0.0, rb = 0.0;
            for (int k = 0; k < 3; k++) {
                ra += ha[k] * fabs(v3_dot(A[k], L));
                rb += hb[k] * fabs(v3_dot(B[k], L));
            }
            double dl = v3_dot(d, L);
            double sep = fabs(dl) - ra - rb;
            if (sep > envelope) return 0;
            if (sep > edge_sep) {
                edge_sep = sep;
                edge_i = i;
                edge_j = j;
                v3_scale(edge_L, dl >= 0.0 ? 1.0 : -1.0, L);
            }
        }

    if (edge_i >= 0 && edge_sep > face_sep + EDGE_BIAS_ABS * s + EDGE_BIAS_REL * fabs(face_sep)) {
        /* edge–edge: supporting edge of a along L, of b along −L */
        if (max < 1) return 0;
        double ca[3], cb[3], qa[3], qb[3];
        uint32_t ida = (uint32_t)(4 * edge_i), idb = (uint32_t)(4 * edge_j);
        v3_copy(ca, a->pos);
        v3_copy(cb, b->pos);
        for (int k = 0, bit = 0; k < 3; k++) {
            if (k == edge_i) continue;
            int pos = v3_dot(A[k], edge_L) >= 0.0;
            v3_axpy(ca, pos ? ha[k] : -ha[k], A[k]);
            ida |= (uint32_t)pos << bit++;
        }
        for (int k = 0, bit = 0; k < 3; k++) {
            if (k == edge_j) continue;
            int pos = v3_dot(B[k], edge_L) <= 0.0;
            v3_axpy(cb, pos ? hb[k] : -hb[k], B[k]);
            idb |= (uint32_t)pos << bit++;
        }
        closest_edges(ca, A[edge_i], ha[edge_i], cb, B[edge_j], hb[edge_j], qa, qb);
        double r[3];
        v3_sub(r, qb, qa);
        double phi = v3_dot(r, edge_L);
        if (phi > envelope) return 0;
        for (int k = 0; k < 3; k++) {
            out[0].point[k] = 0.5 * (qa[k] + qb[k]);
            out[0].normal[k] = edge_L[k];
        }
        out[0].distance = phi;
        out[0].feature = 0x80000000u | ida << 8 | idb;
        return 1;
    }

    /* face contact: reference box R (face `face_axis`), incident box I */
    const col_geom *R = face_box == 0 ? a : b, *I = face_box == 0 ? b : a;
    double(*Rc)[3] = face_box == 0 ? A : B;
    double(*Ic)[3] = face_box == 0 ? B : A;
    const int i = face_axis;
    double dir = face_box == 0 ? (da[i] >= 0.0 ? 1.0 : -1.0) : (db[i] >= 0.0 ? -1.0 : 1.0);
    double n[3], c[3];
    v3_scale(n, dir, Rc[i]); /* reference normal, pointing from R towards I */
    v3_copy(c, R->pos);
    v3_axpy(c, R->half[i], n);
    const int j1 = (i + 1) % 3, j2 = (i + 2) % 3;
    const double e1 = R->half[j1], e2 = R->half[j2];
    /* incident face: most anti-parallel to n */
    int m = 0;
    double best = -1.0;
    for (int k = 0; k < 3; k++) {
        double v = fabs(v3_dot(Ic[k], n));
        if (v > best) { best = v; m = k; }
    }
    double t = v3_dot(Ic[m], n) > 0.0 ? -1.0 : 1.0;
    const int m1 = (m + 1) % 3, m2 = (m + 2) % 3;
    static const double corner[4][2] = {{1, 1}, {-1, 1}, {-1, -1}, {1, -1}};
    clip_vertex poly[2][16];
    int np = 4;
    for (int k = 0; k < 4; k++) {
        double v[3], r[3];
        v3_copy(v, I->pos);
        v3_axpy(v, t * I->half[m], Ic[m]);
        v3_axpy(v, corner[k][0] * I->half[m1], Ic[m1]);
        v3_axpy(v, corner[k][1] * I->half[m2], Ic[m2]);
        v3_sub(r, v, c);
        poly[0][k].x = v3_dot(r, Rc[j1]);
        poly[0][k].y = v3_dot(r, Rc[j2]);
        poly[0][k].h = v3_dot(r, n);
        poly[0][k].carrier = k;
        poly[0][k].code = k;
    }
    np = clip_side(poly[0], np, 1.0, 0.0, e1, 0, poly[1]);
    np = clip_side(poly[1], np, -1.0, 0.0, e1, 1, poly[0]);
    np = clip_side(poly[0], np, 0.0, 1.0, e2, 2, poly[1]);
    np = clip_side(poly[1], np, 0.0, -1.0, e2, 3, poly[0]);

    double normal[3];
    v3_scale(normal, face_box == 0 ? 1.0 : -1.0, n);
    uint32_t fid = (uint32_t)face_box << 30 | (uint32_t)(2 * i + (dir < 0.0)) << 27 |
                   (uint32_t)(2 * m + (t < 0.0)) << 24;
    col_contact_point pts[16];
    int count = 0;
    for (int k = 0; k < np; k++) {
        const clip_vertex* v = &poly[0][k];
        if (v->h > envelope) continue;
        col_contact_point* o = &pts[count++];
        for (int q = 0; q < 3; q++) {
            o->point[q] = c[q] + v->x * Rc[j1][q] + v->y * Rc[j2][q] + 0.5 * v->h * n[q];
            o->normal[q] = normal[q];
        }
        o->distance = v->h;
        o->feature = fid | (uint32_t)v->code;
    }
    if (count == 0) return face_sep < 0.0 ? col_collide_convex(a, b, envelope, out, max) : 0;
    count = col_reduce_to_4(pts, count, normal);
    if (count > max) count = max;
    for (int k = 0; k < count; k++) col_put_point(&out[k], &pts[k]);
    return count;
}
