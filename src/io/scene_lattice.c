/* dvicontact — the lattice of a granular bed (a scene's "granular_bed"
 * generator; docs/scene-format.md): its sites per axis, where each site
 * lies, and which cells the bed's exclusions leave empty. Reading and
 * checking the generator's fields is scene_schema.c's; laying out its
 * bodies, scene_model.c's.
 */
#include "scene_internal.h"

#include <math.h>

double sc_generator_lattice(sc_generator* g)
{
    /* the lattice: cubic cells of side s = 2 r_max + gap, or hexagonal close
     * packing with nearest neighbours s apart (rows s·√3/2, layers s·√(2/3)) */
    const double sp = 2.0 * g->rmax + g->gap;
    g->spacing = sp;
    double sites = 1.0;
    for (int k = 0; k < 3; k++) {
        double L = g->hi[k] - g->lo[k], n;
        if (g->packing == SC_PACKING_HEXAGONAL) {
            static const double PITCH[3] = {1.0, 0.8660254037844386, 0.816496580927726};
            static const double EXTRA[3] = {1.5, 1.0 + 1.0 / (2.0 * SC_SQRT3), 1.0}; /* s + the largest offset */
            g->pitch[k] = PITCH[k] * sp;
            n = L >= EXTRA[k] * sp * (1.0 - 1e-12) ? floor((L - EXTRA[k] * sp) / g->pitch[k] + 1e-9) + 1.0 : 0.0;
        } else {
            g->pitch[k] = sp;
            n = floor(L / sp + 1e-9); /* 0.2 / 0.2 is one cell */
        }
        if (n > 2147483647.0) n = 2147483647.0;
        g->n[k] = (int32_t)n;
        sites *= n;
    }
    return sites;
}

/* Offsets of a hexagonal (ABAB…) site from its row and layer: rows of a
 * layer alternate by s/2 in x; layer B sits over the centroids of layer A's
 * triangles, (s/2, s/(2√3)) further. x offsets are taken modulo s, so they
 * are 0 or s/2. */
static void hex_offset(const sc_generator* g, int64_t iy, int64_t iz, double* ox, double* oy)
{
    const double s = g->spacing;
    *ox = (double)(((iy & 1) + (iz & 1)) & 1) * 0.5 * s;
    *oy = (double)(iz & 1) * s / (2.0 * SC_SQRT3);
}

void sc_generator_origin(const sc_generator* g, double origin[3])
{
    const double s = g->spacing;
    if (g->packing == SC_PACKING_HEXAGONAL) { /* extents: (n−1)·pitch + the largest offset + s */
        double ex = (g->n[0] - 1) * g->pitch[0] + 0.5 * s + s;
        double ey = (g->n[1] - 1) * g->pitch[1] + s / (2.0 * SC_SQRT3) + s;
        origin[0] = g->lo[0] + 0.5 * (g->hi[0] - g->lo[0] - ex) + 0.5 * s;
        origin[1] = g->lo[1] + 0.5 * (g->hi[1] - g->lo[1] - ey) + 0.5 * s;
        origin[2] = g->lo[2] + 0.5 * s;
        return;
    }
    for (int k = 0; k < 2; k++) origin[k] = g->lo[k] + 0.5 * (g->hi[k] - g->lo[k] - g->n[k] * s) + 0.5 * s;
    origin[2] = g->lo[2] + 0.5 * s;
}

void sc_generator_site(const sc_generator* g, const double origin[3], int64_t ix, int64_t iy, int64_t iz,
                       double p[3])
{
    double ox = 0.0, oy = 0.0;
    if (g->packing == SC_PACKING_HEXAGONAL) hex_offset(g, iy, iz, &ox, &oy);
    p[0] = origin[0] + (double)ix * g->pitch[0] + ox;
    p[1] = origin[1] + (double)iy * g->pitch[1] + oy;
    p[2] = origin[2] + (double)iz * g->pitch[2];
}

/* Distance below which a cell centre is excluded by exclusion e. */
static double exclusion_reach(const sc_generator* g, const double* e)
{
    return e[3] + g->rmax + 1.7320508075688772 * g->jitter;
}

bool sc_generator_excluded(const sc_generator* g, const double p[3])
{
    for (int32_t i = 0; i < g->exclude_count; i++) {
        const double* e = g->exclude + 4 * (size_t)i;
        double d[3] = {p[0] - e[0], p[1] - e[1], p[2] - e[2]}, r = exclusion_reach(g, e);
        if (d[0] * d[0] + d[1] * d[1] + d[2] * d[2] < r * r) return true;
    }
    return false;
}

/* Cells of the lattice that exclusions empty (each counted once), or −1 when
 * an exclusion's bounding box covers more than SC_MAX_EXCLUDE_CELLS cells
 * (index of that exclusion in *bad). */
int64_t sc_generator_excluded_cells(const sc_generator* g, int32_t* bad)
{
    double o[3];
    sc_generator_origin(g, o);
    int64_t total = 0;
    /* a hexagonal site lies up to s/2 (x) and s/(2√3) (y) beyond its index's
     * row: widen the index box by one on the low side */
    const int widen = g->packing == SC_PACKING_HEXAGONAL;
    for (int32_t i = 0; i < g->exclude_count; i++) {
        const double* e = g->exclude + 4 * (size_t)i;
        double r = exclusion_reach(g, e), cells = 1.0;
        int64_t lo[3], hi[3];
        for (int k = 0; k < 3; k++) {
            double a = ceil((e[k] - r - o[k]) / g->pitch[k]) - (k < 2 ? widen : 0),
                   b = floor((e[k] + r - o[k]) / g->pitch[k]);
            a = fmax(a, 0.0);
            b = fmin(b, (double)g->n[k] - 1.0);
            if (b < a) cells = 0.0;
            else cells *= b - a + 1.0;
            lo[k] = (int64_t)fmax(a, 0.0);
            hi[k] = b < a ? lo[k] - 1 : (int64_t)b;
        }
        if (cells > SC_MAX_EXCLUDE_CELLS) {
            *bad = i;
            return -1;
        }
        if (cells == 0.0) continue;
        for (int64_t iz = lo[2]; iz <= hi[2]; iz++)
            for (int64_t iy = lo[1]; iy <= hi[1]; iy++)
                for (int64_t ix = lo[0]; ix <= hi[0]; ix++) {
                    double p[3];
                    sc_generator_site(g, o, ix, iy, iz, p);
                    double d[3] = {p[0] - e[0], p[1] - e[1], p[2] - e[2]};
                    if (!(d[0] * d[0] + d[1] * d[1] + d[2] * d[2] < r * r)) continue;
                    bool earlier = false; /* already counted by an earlier exclusion */
                    for (int32_t j = 0; j < i && !earlier; j++) {
                        const double* f = g->exclude + 4 * (size_t)j;
                        double dj[3] = {p[0] - f[0], p[1] - f[1], p[2] - f[2]}, rj = exclusion_reach(g, f);
                        earlier = dj[0] * dj[0] + dj[1] * dj[1] + dj[2] * dj[2] < rj * rj;
                    }
                    total += !earlier;
                }
    }
    return total;
}
