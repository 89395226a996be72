/* dvicontact — manifold helpers shared by the narrow-phase routines. */
#include "narrow.h"

#include "math3.h"

#include <math.h>

/* Copies what a narrow-phase routine owns (geom_a/geom_b are the caller's). */
void col_put_point(col_contact_point* dst, const col_contact_point* src)
{
    for (int k = 0; k < 3; k++) {
        dst->point[k] = src->point[k];
        dst->normal[k] = src->normal[k];
    }
    dst->distance = src->distance;
    dst->feature = src->feature;
}

/* Keeps at most 4 of the n points p[0..n): the deepest, the farthest from it,
 * then the two that give the largest area (measured in the plane ⊥ normal).
 * The kept points stay in their original order. Returns the count. */
int col_reduce_to_4(col_contact_point* p, int n, const double normal[3])
{
    if (n <= 4) return n;
    /* the deepest: the first one within 1e-6 × the patch size of the
     * minimum, so that numerically equal depths keep the same choice */
    double phimin = p[0].distance, size = 0.0;
    for (int i = 1; i < n; i++) {
        double d[3];
        v3_sub(d, p[i].point, p[0].point);
        size = fmax(size, v3_norm(d));
        phimin = fmin(phimin, p[i].distance);
    }
    int keep[4];
    keep[0] = 0;
    while (keep[0] < n - 1 && p[keep[0]].distance > phimin + 1e-6 * size) keep[0]++;
    const double* p0 = p[keep[0]].point;
    double best = -1.0;
    keep[1] = keep[0] == 0 ? 1 : 0;
    for (int i = 0; i < n; i++) {
        if (i == keep[0]) continue;
        double d[3];
        v3_sub(d, p[i].point, p0);
        double dd = v3_dot(d, d) - v3_dot(d, normal) * v3_dot(d, normal);
        if (dd > best) { best = dd; keep[1] = i; }
    }
    double e1[3];
    v3_sub(e1, p[keep[1]].point, p0);
    best = -1.0;
    keep[2] = -1;
    for (int i = 0; i < n; i++) {
        if (i == keep[0] || i == keep[1]) continue;
        double e2[3], c[3];
        v3_sub(e2, p[i].point, p0);
        v3_cross(c, e1, e2);
        double area = fabs(v3_dot(c, normal));
        if (area > best) { best = area; keep[2] = i; }
    }
    /* fourth: largest area of the hull of {p0, p1, p2, p} (quadrilateral area
     * by the diagonals, best of the three orderings) */
    best = -1.0;
    keep[3] = -1;
    const double *q1 = p[keep[1]].point, *q2 = p[keep[2]].point;
    for (int i = 0; i < n; i++) {
        if (i == keep[0] || i == keep[1] || i == keep[2]) continue;
        const double* q = p[i].point;
        const double* order[3][4] = {{p0, q1, q2, q}, {p0, q1, q, q2}, {p0, q, q1, q2}};
        double area = 0.0;
        for (int o = 0; o < 3; o++) {
            double d1[3], d2[3], c[3];
            v3_sub(d1, order[o][2], order[o][0]);
            v3_sub(d2, order[o][3], order[o][1]);
            v3_cross(c, d1, d2);
            area = fmax(area, fabs(v3_dot(c, normal)));
        }
        if (area > best) { best = area; keep[3] = i; }
    }
    /* sort the kept indices, then compact */
    for (int i = 1; i < 4; i++)
        for (int j = i; j > 0 && keep[j - 1] > keep[j]; j--) {
            int t = keep[j];
            keep[j] = keep[j - 1];
            keep[j - 1] = t;
        }
    for (int i = 0; i < 4; i++) p[i] = p[keep[i]];
    return 4;
}
