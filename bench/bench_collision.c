/* dvicontact — collision benchmark: a settled granular bed of spheres in a
 * container, at growing sizes; one table row per size.
 *
 * Scene: N spheres of radius uniform in [0.01, 0.02] m on a cubic lattice of
 * spacing 0.03 m with a small random jitter (volume fraction ≈ 0.58, about
 * 3 contacts per sphere, like a settled random bed), in a container made of a
 * floor plane and 4 static wall boxes. The bed is twice as wide as it is
 * high. Envelope 0.005 m.
 *
 * Timed: col_geom_update() on every geom plus col_collide() (broad + narrow
 * phase), fastest of several repeats after one warm-up call (which grows the
 * collision buffers). ns/shape divides that time by the number of geoms; a
 * broad phase whose cost is linear in the number of shapes shows a flat
 * column, and the requirement is ns/shape(100,000) / ns/shape(1,000) ≤ 2.
 *
 * --shuffle numbers the spheres in random order instead of lattice order
 * (no spatial coherence in memory: the worst case for caches).
 *
 * --threads 1,2 times each size with each of these OpenMP thread counts
 * (col_set_threads; the geom update runs on as many threads, as
 * in a world's step), checks that every count returns the same bytes as
 * the first, and gives the speed-up over the first. --spheres N times that
 * one size instead of the table's. */
#include "bench_cli.h"
#include "collision.h"
#include "hash_rng.h"

#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SPACING 0.03
#define R_MIN 0.01
#define R_MAX 0.02
#define JITTER 0.001
#define ENVELOPE 0.005
#define WALL 0.05 /* wall thickness */
#define SEED 20240601u
#define MIN_SECONDS 0.5
#define MIN_REPEATS 7
#define MAX_REPEATS 200

static const int32_t sizes[] = {1000, 3000, 10000, 30000, 100000};
#define NSIZES ((int)(sizeof sizes / sizeof sizes[0]))
#define MAX_THREAD_COUNTS 8

typedef struct row {
    int32_t spheres, shapes, contacts, pairs;
    int threads;
    double seconds; /* fastest repeat, wall clock */
    double cpu_seconds; /* fastest repeat, thread CPU time */
    int repeats;
    double ns_per_shape;
} row;

static double clock_seconds(clockid_t id)
{
    struct timespec t;
    clock_gettime(id, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}


static void identity(double R[9])
{
    memset(R, 0, 9 * sizeof(double));
    R[0] = R[4] = R[8] = 1.0;
}

static col_geom wall(int32_t owner, double x, double y, double z, double hx, double hy, double hz)
{
    col_geom g;
    memset(&g, 0, sizeof g);
    g.type = DVI_SHAPE_BOX;
    g.owner = owner;
    g.is_static = true;
    g.pos[0] = x;
    g.pos[1] = y;
    g.pos[2] = z;
    identity(g.rot);
    g.half[0] = hx;
    g.half[1] = hy;
    g.half[2] = hz;
    return g;
}

/* Fills g with n spheres and the container (n + 5 geoms). */
static void make_bed(col_geom* g, int32_t n, bool shuffle)
{
    /* layers nz, square footprint nx × nx with nx ≈ 2 nz */
    int32_t nz = 1;
    while (4 * (int64_t)(nz + 1) * (nz + 1) * (nz + 1) <= n) nz++;
    int32_t nx = 1;
    while ((int64_t)nx * nx * nz < n) nx++;
    uint64_t s = SEED;
    for (int32_t i = 0; i < n; i++) {
        int32_t ix = i % nx, iy = (i / nx) % nx, iz = i / (nx * nx);
        col_geom* q = &g[i];
        memset(q, 0, sizeof *q);
        q->type = DVI_SHAPE_SPHERE;
        q->owner = i;
        q->radius = R_MIN + (R_MAX - R_MIN) * base_uniform01(&s);
        q->pos[0] = (ix + 0.5) * SPACING + JITTER * (2 * base_uniform01(&s) - 1);
        q->pos[1] = (iy + 0.5) * SPACING + JITTER * (2 * base_uniform01(&s) - 1);
        q->pos[2] = (iz + 0.5) * SPACING + JITTER * (2 * base_uniform01(&s) - 1);
        identity(q->rot);
    }
    if (shuffle)
        for (int32_t i = n - 1; i > 0; i--) {
            int32_t j = (int32_t)(base_uniform01(&s) * (i + 1));
            col_geom t = g[i];
            g[i] = g[j];
            g[j] = t;
            g[i].owner = i;
            g[j].owner = j;
        }
    const double L = nx * SPACING, H = (nz + 2) * SPACING;
    memset(&g[n], 0, sizeof g[n]); /* floor: the plane z = 0 */
    g[n].type = DVI_SHAPE_PLANE;
    g[n].owner = n;
    g[n].is_static = true;
    identity(g[n].rot);
    g[n + 1] = wall(n + 1, -0.5 * WALL, 0.5 * L, 0.5 * H, 0.5 * WALL, 0.5 * L + WALL, 0.5 * H);
    g[n + 2] = wall(n + 2, L + 0.5 * WALL, 0.5 * L, 0.5 * H, 0.5 * WALL, 0.5 * L + WALL, 0.5 * H);
    g[n + 3] = wall(n + 3, 0.5 * L, -0.5 * WALL, 0.5 * H, 0.5 * L, 0.5 * WALL, 0.5 * H);
    g[n + 4] = wall(n + 4, 0.5 * L, L + 0.5 * WALL, 0.5 * H, 0.5 * L, 0.5 * WALL, 0.5 * H);
}

/* The geom update on nt threads, as wld_step_collide does it. */
static void update_geoms(col_geom* g, int32_t total, int nt)
{
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 512) num_threads(nt) if (nt > 1 && total >= DVI_COLLIDE_PAR_MIN)
#endif
    for (int32_t i = 0; i < total; i++) col_geom_update(&g[i]);
    (void)nt;
}

/* Times size n on nt threads. ref/ref_count: the points of an earlier run of
 * the same size (NULL for the first), compared byte for byte; *keep receives
 * a copy of this run's points when keep is not NULL. */
static int run(int32_t n, bool shuffle, int nt, const col_contact_point* ref, int32_t ref_count,
               col_contact_point** keep, row* out)
{
    const int32_t total = n + 5;
    col_geom* g = malloc((size_t)total * sizeof *g);
    col_collision* c = NULL;
    if (!g || col_create(NULL, &c) != DVI_OK) {
        free(g);
        fprintf(stderr, "bench_collision: out of memory\n");
        return 1;
    }
    col_set_threads(c, nt);
    make_bed(g, n, shuffle);
    const col_contact_point* pts = NULL;
    int32_t count = 0;
    double best = HUGE_VAL, best_cpu = HUGE_VAL, spent = 0.0;
    int reps = 0;
    for (int r = -1; r < MAX_REPEATS; r++) { /* r = −1: warm-up */
        double t0 = clock_seconds(CLOCK_MONOTONIC), u0 = clock_seconds(CLOCK_THREAD_CPUTIME_ID);
        update_geoms(g, total, nt);
        dvi_status st = col_collide(c, g, total, ENVELOPE, &pts, &count);
        double t = clock_seconds(CLOCK_MONOTONIC) - t0, u = clock_seconds(CLOCK_THREAD_CPUTIME_ID) - u0;
        if (st != DVI_OK) {
            fprintf(stderr, "bench_collision: col_collide failed (%d)\n", (int)st);
            col_destroy(c);
            free(g);
            return 1;
        }
        if (r < 0) continue;
        reps++;
        spent += t;
        if (t < best) best = t;
        if (u < best_cpu) best_cpu = u;
        if (reps >= MIN_REPEATS && spent >= MIN_SECONDS) break;
    }
    int32_t pairs = 0;
    for (int32_t i = 0; i < count; i++)
        if (i == 0 || pts[i].geom_a != pts[i - 1].geom_a || pts[i].geom_b != pts[i - 1].geom_b) pairs++;
    if (ref && (count != ref_count || memcmp(pts, ref, (size_t)count * sizeof *pts) != 0)) {
        fprintf(stderr, "bench_collision: %d spheres, %d threads: the points differ from the first thread count's\n",
                (int)n, nt);
        col_destroy(c);
        free(g);
        return 1;
    }
    if (keep) {
        *keep = malloc((size_t)count * sizeof **keep + 1);
        if (*keep) memcpy(*keep, pts, (size_t)count * sizeof *pts);
    }
    out->spheres = n;
    out->threads = nt;
    out->shapes = total;
    out->contacts = count;
    out->pairs = pairs;
    out->seconds = best;
    out->cpu_seconds = best_cpu;
    out->repeats = reps;
    out->ns_per_shape = 1e9 * best / total;
    col_destroy(c);
    free(g);
    return 0;
}

static void usage(FILE* f)
{
    fprintf(f,
            "usage: bench_collision [--json] [--max-shapes N] [--spheres N] [--threads LIST] [--shuffle] [--help]\n"
            "  Times col_geom_update + col_collide on a granular bed of N spheres\n"
            "  (N = 1000, 3000, 10000, 30000, 100000) in a container.\n"
            "  --json          one JSON object per row (keys shapes, contacts, ns_per_shape, ...)\n"
            "  --max-shapes N  skip sizes with more than N spheres\n"
            "  --spheres N     time N spheres only\n"
            "  --threads LIST  thread counts, comma-separated (default 1): a row per size and count,\n"
            "                  the points checked identical to the first count's, speed-up over it\n"
            "  --shuffle       number the spheres in random order (no memory coherence)\n");
}

int main(int argc, char** argv)
{
    bool json = false, shuffle = false;
    long max_shapes = 100000, only = 0;
    int threads[MAX_THREAD_COUNTS] = {1}, nthreads = 1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(argv[i], "--json")) {
            json = true;
        } else if (!strcmp(argv[i], "--shuffle")) {
            shuffle = true;
        } else if (!strcmp(argv[i], "--spheres") && i + 1 < argc) {
            int64_t v;
            if (!cli_int("bench_collision", "--spheres", argv[++i], 1, 10000000, "an integer from 1 to 10000000", &v))
                return 2;
            only = (long)v;
        } else if (!strcmp(argv[i], "--threads") && i + 1 < argc) {
            long t[MAX_THREAD_COUNTS];
            nthreads = cli_ints("bench_collision", "--threads", argv[++i], t, 1, MAX_THREAD_COUNTS, 1, 256);
            if (nthreads < 0) return 2;
            for (int k = 0; k < nthreads; k++) threads[k] = (int)t[k];
        } else if (!strcmp(argv[i], "--max-shapes") && i + 1 < argc) {
            int64_t v;
            if (!cli_int("bench_collision", "--max-shapes", argv[++i], 1, LONG_MAX, "a positive integer", &v)) return 2;
            max_shapes = (long)v;
        } else {
            fprintf(stderr, "bench_collision: unknown argument '%s'\n", argv[i]);
            usage(stderr);
            return 2;
        }
    }

    row rows[NSIZES + 1]; /* first thread count only: the linearity check */
    int nrows = 0;
    if (!json) {
        printf("dvicontact collision benchmark: spheres r in [%.2f, %.2f] m on a jittered %.2f m lattice, "
               "floor plane + 4 wall boxes, envelope %.3f m%s\n",
               R_MIN, R_MAX, SPACING, ENVELOPE, shuffle ? ", shuffled order" : "");
        printf("time: col_geom_update (all) + col_collide, fastest of >= %d repeats (wall clock; cpu = CPU time of "
               "the calling thread)\n\n",
               MIN_REPEATS);
        printf("%9s %9s %9s %9s %7s %10s %8s %11s %11s %5s\n", "spheres", "shapes", "pairs", "contacts", "threads",
               "ms", "speed-up", "ns/shape", "cpu ns/sh", "reps");
        printf("--------- --------- --------- --------- ------- ---------- -------- ----------- ----------- -----\n");
    }
    for (int k = 0; k <= NSIZES; k++) {
        int32_t n = k < NSIZES ? sizes[k] : (int32_t)only;
        if ((only > 0) != (k == NSIZES) || (only == 0 && n > max_shapes)) continue;
        col_contact_point* ref = NULL;
        row first = {0};
        for (int t = 0; t < nthreads; t++) {
            row r;
            if (run(n, shuffle, threads[t], ref, first.contacts, t == 0 ? &ref : NULL, &r)) {
                free(ref);
                return 1;
            }
            if (t == 0) {
                first = r;
                rows[nrows++] = r;
            }
            const double speedup = first.seconds / r.seconds;
            if (json)
                printf("{\"shapes\": %d, \"contacts\": %d, \"ns_per_shape\": %.1f, \"spheres\": %d, \"pairs\": %d, "
                       "\"threads\": %d, \"ms\": %.4f, \"speedup\": %.3f, \"cpu_ns_per_shape\": %.1f, "
                       "\"repeats\": %d, \"shuffle\": %s}\n",
                       r.shapes, r.contacts, r.ns_per_shape, r.spheres, r.pairs, r.threads, 1e3 * r.seconds, speedup,
                       1e9 * r.cpu_seconds / r.shapes, r.repeats, shuffle ? "true" : "false");
            else
                printf("%9d %9d %9d %9d %7d %10.3f %8.2f %11.1f %11.1f %5d\n", r.spheres, r.shapes, r.pairs,
                       r.contacts, r.threads, 1e3 * r.seconds, speedup, r.ns_per_shape, 1e9 * r.cpu_seconds / r.shapes,
                       r.repeats);
            fflush(stdout);
        }
        free(ref);
    }

    /* linearity: ns/shape at 100,000 spheres over ns/shape at 1,000 */
    const row *lo = NULL, *hi = NULL;
    for (int k = 0; k < nrows; k++) {
        if (rows[k].spheres == 1000) lo = &rows[k];
        if (rows[k].spheres == 100000) hi = &rows[k];
    }
    FILE* f = json ? stderr : stdout; /* keep stdout one JSON row per line */
    if (lo && hi) {
        double ratio = hi->ns_per_shape / lo->ns_per_shape;
        double cpu_ratio = (hi->cpu_seconds / hi->shapes) / (lo->cpu_seconds / lo->shapes);
        fprintf(f, "\nns/shape at 100000 / at 1000 = %.2f (requirement <= 2): %s\n", ratio,
                ratio <= 2.0 ? "PASS" : "FAIL");
        fprintf(f, "same ratio in thread CPU time = %.2f (less sensitive to a busy machine)\n", cpu_ratio);
    } else {
        fprintf(f, "\nlinearity check needs the 1000 and 100000 rows (use --max-shapes >= 100000)\n");
    }
    return 0;
}
