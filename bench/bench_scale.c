/* dvicontact — bench_scale: what a DVI step costs at scale, against what the
 * machine's memory can deliver.
 *
 * The target of the scale work: the thesis's full granular bed (53,728
 * spheres of r = 0.03 m on a 6 × 3.8 m footprint, with the rover) at
 * ≤ 0.3 s per step on 2 cores, 1 ms steps, APGD capped at 100 iterations.
 * This program measures whatever the library does, through the public API
 * only (dvi/scene.h, dvi/world.h), so that its rows show how far the library
 * is from that target and why. It prints:
 *
 *   - the machine's memory bandwidth: a STREAM triad a[i] = b[i] + s·c[i] on
 *     three arrays of 2^25 doubles (768 MiB in all, 24 times a 32 MiB
 *     last-level cache), best of 20 repetitions, with 1 and 2 OpenMP
 *     threads; 24 bytes counted per element (read b and c, write a; the
 *     write-allocate read of a is not counted, as in STREAM). It is measured
 *     at the start and again just before each row, with the row's threads:
 *     on a shared virtual machine it varies by ±30% from minute to minute;
 *   - per (scene, threads) one row: ms per step (mean over K steps after W
 *     warm-up steps) and its split into collide / assemble / solve /
 *     integrate (dvi_step_stats seconds_*) and the rest of dvi_model_step
 *     ("other": the scene's averaged probes), solver iterations (mean), CCP
 *     residual (max), contacts (mean), peak resident memory, bytes per body
 *     and per contact of it, the solver's memory traffic per contact and
 *     iteration (dvi_step_stats.solver_bytes_per_iteration / contacts), the
 *     triad bandwidth measured just before the row, and the ratio of the solve's
 *     wall time to its bandwidth floor Σ iterations × bytes per iteration /
 *     bandwidth (≥ 1 when the byte model is right; the goal is ≤ 2), and
 *     the rate the solve streams at by that count (solve_gbs);
 *   - DEM rows: the penalty back end on the 5,000-sphere bed of
 *     docs/dvi-vs-dem.md at its stable step, ms per step and ns per
 *     contact-step.
 *
 * The scenes:
 *   - bed_N: N spheres (r = 0.03 m, 2000 kg/m³, μ = 0.4) on a hexagonal
 *     close-packed lattice (gap 1 mm, jitter 0.25 mm: the granular strip
 *     scenes' generator) in a box (a fixed ground plane and four wall boxes),
 *     8 layers deep as the full bed (the top one partly filled), the
 *     footprint scaled from the thesis's 6 × 3.8 m; the formulation of the
 *     granular rover scenes: 1 ms steps, APGD, tolerance 1e-4, at most 100
 *     iterations, envelope 5 mm, contact recovery 0.1 m/s. Written as scene
 *     JSON (bed_scene_text) and read with dvi_scene_parse, like any scene;
 *   - rover_obstacle_granular_strip_hex.json (4,821 spheres and the rover)
 *     and rover_obstacle_granular_hex.json (the full bed: 53,728 spheres and
 *     the rover), from the data directory (tool/data_path.h);
 *   - any scene file given with --scene;
 *   - dem_bed_N: the study bed of docs/dvi-vs-dem.md (r = 0.02 m,
 *     2500 kg/m³, μ = 0.4, box 0.04·round(√(N/4)) m wide), DEM-Hertz with
 *     E = 1e9 Pa, ν = 0.3, restitution 0, at its largest acceptable step
 *     31.25 µs; hexagonal lattice (gap 1 mm), 4 layers for N = 5,000.
 *
 * Settled state. A bed generated on a lattice falls onto its contacts in the
 * first tens of milliseconds: its first steps converge in a few iterations
 * with a contact count that is not the bed's. Each scene is therefore
 * stepped once until its grains are at rest — the rms speed of the
 * generated bodies (every dynamic body when the scene has no generator)
 * below 5 mm/s for 20 ms, after at least 50 ms — or until a time cap (0.3 s
 * of simulated time; 0.12 s for beds above 100,000 spheres), and its state
 * (dvi_model_save_state) is cached in a file named by the scene, a hash of
 * the scene's bytes and of these settings, in the cache directory
 * (--cache-dir; default EXE_DIR/../bench-cache, i.e. the build tree's
 * bench-cache/). Later runs load it (dvi_model_load_state); a file that
 * does not load (another structure) is settled again. The settling time is
 * printed, also for a cached state (it is stored in the file). Measured
 * (docs/benchmarks.md): a bed lands on its lattice contacts by 0.05 s (the
 * solver at its 100-iteration cap), rings until about 0.1 s, and from then
 * on converges in 30–47 iterations; its rms speed falls below 5 mm/s near
 * 0.2 s and levels off at 2–4 mm/s (solves stopped at tolerance 1e-4), so a
 * 1 mm/s criterion would never be met. The settled state has the same bits
 * for any thread count; on a busy machine (the load average leaves no core
 * free) it is settled on one thread.
 *
 * Isolation: the triad, each settling and each (scene, threads) row run in
 * a child process of their own (this program run again with --child), so
 * the peak RSS of a row (VmHWM of /proc/self/status; getrusage when there
 * is no /proc) is that scene's alone, and no OpenMP runtime is forked. The
 * children run with OMP_NUM_THREADS = the row's threads and
 * OPENBLAS_NUM_THREADS = 1; the scene's solver gets the threads through
 * dvi_scene_apply_overrides.
 *
 * A shared core (--contended): each row is run twice, the second time
 * beside a competing load, a child process spinning on CPU 0 (pinned with
 * sched_setaffinity on Linux) for as long as the row's child runs; the
 * JSON rows say which ("contended") and how many measured steps the world
 * ran on one thread ("fallback_steps", dvi_world_def.thread_fallback).
 *
 * usage: bench_scale [--sizes N,N,...] [--steps K] [--warmup W] [--threads T,T,...]
 *                    [--scene FILE]... [--no-rover] [--dem-spheres N] [--dem-steps K]
 *                    [--settle-time S] [--settle-threads T] [--cache-dir DIR] [--no-cache]
 *                    [--settle-only] [--contended] [--no-fallback] [--quick] [--json] [--json-file FILE]
 *                    [--print-bed N] [--print-dem N] [--help]
 * Exit status: 0 when every row ran and its figures are finite, 1 otherwise,
 * 2 on bad usage. */
#ifdef __linux__
#define _GNU_SOURCE /* sched_setaffinity: the competing load's core */
#endif
#include "bench_cli.h"
#include "data_path.h"
#include "rover_probes.h"

#include <dvi/scene.h>
#include <dvi/world.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <signal.h>
#ifdef __linux__
#include <sched.h>
#include <sys/prctl.h>
#endif

#define PROG "bench_scale"
#define MAX_LIST 32

/* ---- the bed scenes --------------------------------------------------------- */

#define GRAIN_RADIUS 0.03
#define GRAIN_GAP 0.001
#define GRAIN_DENSITY 2000.0
#define GRAIN_FRICTION 0.4
#define BED_LAYERS 8 /* the full bed's depth: 53,728 spheres on 6 × 3.8 m take 8 hexagonal layers */
#define WALL_HALF 0.05 /* m, half the thickness of a wall box */

/* DEM: the study bed of docs/dvi-vs-dem.md at its largest acceptable step */
#define DEM_RADIUS 0.02
#define DEM_DENSITY 2500.0
#define DEM_YOUNG 1e9
#define DEM_DT 3.125e-5

/* Settling (the cache key includes these) */
#define SETTLE_SPEED 5e-3   /* m/s, rms speed of the grains below which the bed is at rest */
#define SETTLE_HOLD 0.02    /* s, for this long */
#define SETTLE_MIN 0.05     /* s, and not before */
#define SETTLE_CAP 0.3      /* s, the time cap */
#define SETTLE_CAP_LARGE 0.12 /* s, the cap for beds above LARGE_BED spheres */
#define LARGE_BED 100000

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* A growing string. */
typedef struct sbuf {
    char* s;
    size_t n, cap;
    bool failed;
} sbuf;

static void sb_printf(sbuf* b, const char* fmt, ...)
{
    if (b->failed) return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        size_t room = b->cap - b->n;
        int k = vsnprintf(b->s ? b->s + b->n : NULL, b->s ? room : 0, fmt, ap);
        va_end(ap);
        if (k < 0) {
            b->failed = true;
            return;
        }
        if (b->s && (size_t)k < room) {
            b->n += (size_t)k;
            return;
        }
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->n + (size_t)k + 1) cap *= 2;
        char* t = realloc(b->s, cap);
        if (!t) {
            b->failed = true;
            return;
        }
        b->s = t, b->cap = cap;
    }
}

/* Hexagonal lattice of docs/scene-format.md, spacing s: sites per axis for
 * region lengths L. */
static double hex_row(double s) { return s * sqrt(3.0) / 2.0; }
static double hex_layer(double s) { return s * sqrt(2.0 / 3.0); }
static double hex_y0(double s) { return (1.0 + 1.0 / (2.0 * sqrt(3.0))) * s; }

/* The region lengths (x, y) that hold exactly nx × ny hexagonal sites of
 * spacing s (a quarter of a row spare, so that rounding cannot lose one). */
static void hex_region(double s, long nx, long ny, double* lx, double* ly)
{
    *lx = 1.5 * s + (double)(nx - 1) * s + 0.25 * s;
    *ly = hex_y0(s) + (double)(ny - 1) * hex_row(s) + 0.25 * hex_row(s);
}

/* A box of inner size lx × ly (centred on the origin) from z = 0 to top: a
 * ground plane and four wall boxes. Bodies only (the caller opens and
 * closes "bodies"). */
static void box_bodies(sbuf* b, double lx, double ly, double top, const char* material)
{
    const double t = WALL_HALF, hz = 0.5 * top;
    sb_printf(b, "    {\"name\": \"ground\", \"type\": \"fixed\", \"shapes\": [{\"type\": \"plane\", \"material\": "
                 "\"%s\"}]}",
              material);
    const struct {
        const char* name;
        double c[3], h[3];
    } walls[4] = {
        {"wall_y0", {0, -0.5 * ly - t, hz}, {0.5 * lx + 2 * t, t, hz}},
        {"wall_y1", {0, 0.5 * ly + t, hz}, {0.5 * lx + 2 * t, t, hz}},
        {"wall_x0", {-0.5 * lx - t, 0, hz}, {t, 0.5 * ly, hz}},
        {"wall_x1", {0.5 * lx + t, 0, hz}, {t, 0.5 * ly, hz}},
    };
    for (int k = 0; k < 4; k++)
        sb_printf(b,
                  ",\n    {\"name\": \"%s\", \"type\": \"fixed\", \"position\": [%.9g, %.9g, %.9g], \"shapes\": "
                  "[{\"type\": \"box\", \"half_extents\": [%.9g, %.9g, %.9g], \"material\": \"%s\"}]}",
                  walls[k].name, walls[k].c[0], walls[k].c[1], walls[k].c[2], walls[k].h[0], walls[k].h[1],
                  walls[k].h[2], material);
}

/* bed_N: N spheres, BED_LAYERS hexagonal layers, the footprint the
 * thesis's 97 × 71 sites per layer (6 × 3.8 m) scaled to N. */
static char* bed_scene_text(long n, size_t* len)
{
    const double s = 2.0 * GRAIN_RADIUS + GRAIN_GAP;
    const long per_layer = (n + BED_LAYERS - 1) / BED_LAYERS;
    const double f = sqrt((double)per_layer / (97.0 * 71.0));
    long nx = (long)ceil(97.0 * f), ny = (long)ceil(71.0 * f);
    if (nx < 2) nx = 2;
    if (ny < 2) ny = 2;
    while (nx * ny < per_layer) {
        if ((double)nx / 97.0 <= (double)ny / 71.0)
            nx++;
        else
            ny++;
    }
    double lx, ly;
    hex_region(s, nx, ny, &lx, &ly);
    const double depth = s + (BED_LAYERS - 1) * hex_layer(s) + 0.25 * hex_layer(s);
    sbuf b = {0};
    sb_printf(&b,
              "{\n  \"name\": \"bed_%ld\",\n"
              "  \"description\": \"bench_scale: %ld spheres (radius %g m, density %g, friction %g) in %d layers of "
              "hexagonal close packing (%ld x %ld sites a layer, the top layer partly filled) in a %.3f x %.3f m box; "
              "the formulation of the granular rover scenes.\",\n"
              "  \"units\": \"SI\",\n  \"gravity\": [0, 0, -9.81],\n"
              "  \"materials\": {\"grain\": {\"friction\": %g}, \"wall\": {\"friction\": %g}},\n"
              "  \"bodies\": [\n",
              n, n, GRAIN_RADIUS, GRAIN_DENSITY, GRAIN_FRICTION, BED_LAYERS, nx, ny, lx, ly, GRAIN_FRICTION,
              GRAIN_FRICTION);
    box_bodies(&b, lx, ly, depth + 0.1, "wall");
    sb_printf(&b,
              "\n  ],\n  \"generators\": [\n"
              "    {\"type\": \"granular_bed\", \"name\": \"bed\", \"region\": {\"min\": [%.9g, %.9g, 0], \"max\": "
              "[%.9g, %.9g, %.9g]},\n"
              "     \"radius\": %g, \"gap\": %g, \"packing\": \"hexagonal\", \"jitter\": 0.00025, \"seed\": 1, "
              "\"density\": %g, \"material\": \"grain\", \"max_count\": %ld}\n  ],\n",
              -0.5 * lx, -0.5 * ly, 0.5 * lx, 0.5 * ly, depth, GRAIN_RADIUS, GRAIN_GAP, GRAIN_DENSITY, n);
    sb_printf(&b, "  \"formulation\": {\"method\": \"dvi\", \"dt\": 0.001, \"solver\": \"apgd\", \"tolerance\": 1e-4, "
                  "\"max_iterations\": 100,\n"
                  "                  \"collision_envelope\": 0.005, \"contact_recovery_speed\": 0.1},\n"
                  "  \"duration\": 1\n}\n");
    if (b.failed) {
        free(b.s);
        return NULL;
    }
    *len = b.n;
    return b.s;
}

/* dem_bed_N: the study bed of docs/dvi-vs-dem.md on a hexagonal lattice. */
static char* dem_scene_text(long n, size_t* len)
{
    const double s = 2.0 * DEM_RADIUS + GRAIN_GAP;
    double side = 2.0 * DEM_RADIUS * round(sqrt((double)n / 4.0));
    if (side < 4.0 * s) side = 4.0 * s;
    const long nx = (long)floor((side - 1.5 * s) / s + 1e-9) + 1;
    const long ny = (long)floor((side - hex_y0(s)) / hex_row(s) + 1e-9) + 1;
    const long layers = (n + nx * ny - 1) / (nx * ny);
    const double depth = s + (double)(layers - 1) * hex_layer(s) + 0.25 * hex_layer(s);
    sbuf b = {0};
    sb_printf(&b,
              "{\n  \"name\": \"dem_bed_%ld\",\n"
              "  \"description\": \"bench_scale: the 5,000-sphere study bed of docs/dvi-vs-dem.md (radius %g m, "
              "density %g, friction 0.4, a %.2f m box), %ld spheres on a hexagonal lattice (%ld layers), DEM-Hertz "
              "with E = %g Pa at its largest acceptable step, %g s.\",\n"
              "  \"units\": \"SI\",\n  \"gravity\": [0, 0, -9.81],\n"
              "  \"materials\": {\"grain\": {\"friction\": 0.4, \"restitution\": 0, \"young_modulus\": %g, "
              "\"poisson_ratio\": 0.3}},\n"
              "  \"bodies\": [\n",
              n, DEM_RADIUS, DEM_DENSITY, side, n, layers, DEM_YOUNG, DEM_DT, DEM_YOUNG);
    box_bodies(&b, side, side, depth + 0.1, "grain");
    sb_printf(&b,
              "\n  ],\n  \"generators\": [\n"
              "    {\"type\": \"granular_bed\", \"name\": \"bed\", \"region\": {\"min\": [%.9g, %.9g, 0], \"max\": "
              "[%.9g, %.9g, %.9g]},\n"
              "     \"radius\": %g, \"gap\": %g, \"packing\": \"hexagonal\", \"jitter\": 0.00025, \"seed\": 1, "
              "\"density\": %g, \"material\": \"grain\", \"max_count\": %ld}\n  ],\n",
              -0.5 * side, -0.5 * side, 0.5 * side, 0.5 * side, depth, DEM_RADIUS, GRAIN_GAP, DEM_DENSITY, n);
    sb_printf(&b, "  \"formulation\": {\"method\": \"dem\", \"dt\": %g, \"dem\": {\"normal_model\": \"hertz\"}},\n"
                  "  \"duration\": 1\n}\n",
              DEM_DT);
    if (b.failed) {
        free(b.s);
        return NULL;
    }
    *len = b.n;
    return b.s;
}

static char* read_file(const char* path, size_t* len)
{
    FILE* f = fopen(path, "rb");
    if (!f) return NULL;
    sbuf b = {0};
    char chunk[65536];
    size_t k;
    while ((k = fread(chunk, 1, sizeof chunk, f)) > 0) {
        if (b.n + k + 1 > b.cap) {
            size_t cap = b.cap ? b.cap : 65536;
            while (cap < b.n + k + 1) cap *= 2;
            char* t = realloc(b.s, cap);
            if (!t) {
                free(b.s);
                fclose(f);
                return NULL;
            }
            b.s = t, b.cap = cap;
        }
        memcpy(b.s + b.n, chunk, k);
        b.n += k;
    }
    bool err = ferror(f) != 0;
    fclose(f);
    if (err || !b.s) {
        free(b.s);
        return NULL;
    }
    b.s[b.n] = '\0';
    *len = b.n;
    return b.s;
}

/* ---- what is measured ---------------------------------------------------------- */

typedef enum spec_kind { SPEC_BED = 0, SPEC_FILE = 1, SPEC_DEM = 2 } spec_kind;

typedef struct spec {
    spec_kind kind;
    long spheres;       /* BED, DEM */
    char path[PATH_MAX]; /* FILE */
    char name[128];
} spec;

static void spec_name(spec* sp)
{
    if (sp->kind == SPEC_BED)
        snprintf(sp->name, sizeof sp->name, "bed_%ld", sp->spheres);
    else if (sp->kind == SPEC_DEM)
        snprintf(sp->name, sizeof sp->name, "dem_bed_%ld", sp->spheres);
    else {
        const char* b = strrchr(sp->path, '/');
        b = b ? b + 1 : sp->path;
        size_t n = strlen(b);
        if (n > 5 && strcmp(b + n - 5, ".json") == 0) n -= 5;
        if (n >= sizeof sp->name) n = sizeof sp->name - 1;
        memcpy(sp->name, b, n);
        sp->name[n] = '\0';
    }
}

static char* spec_text(const spec* sp, size_t* len)
{
    switch (sp->kind) {
    case SPEC_BED: return bed_scene_text(sp->spheres, len);
    case SPEC_DEM: return dem_scene_text(sp->spheres, len);
    case SPEC_FILE: return read_file(sp->path, len);
    }
    return NULL;
}

/* The settling settings of a scene: its time cap. */
static double settle_cap(const spec* sp, double cap_override)
{
    if (cap_override > 0) return cap_override;
    if (sp->kind == SPEC_BED && sp->spheres > LARGE_BED) return SETTLE_CAP_LARGE;
    return SETTLE_CAP;
}

/* FNV-1a, 64 bits. */
static uint64_t fnv1a(uint64_t h, const void* data, size_t n)
{
    const unsigned char* p = data;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 1099511628211ull;
    }
    return h;
}

static uint64_t cache_key(const char* text, size_t len, double cap)
{
    char settings[256];
    int k = snprintf(settings, sizeof settings, "bench_scale settle v1: speed %g hold %g min %g cap %g", SETTLE_SPEED,
                     SETTLE_HOLD, SETTLE_MIN, cap);
    uint64_t h = fnv1a(14695981039346656037ull, text, len);
    return fnv1a(h, settings, (size_t)k);
}

/* Results passed from a child to the parent through a pipe (the same
 * program, so the same layout). */
typedef struct settle_result {
    int ok, cached, reached;
    long steps;
    double sim_time, wall, v_rms, cap;
    double contacts, iterations;
    long long bodies;
    char msg[512];
} settle_result;

typedef struct row_result {
    int ok, dem, threads, steps, warmup, not_converged, step_errors;
    long long bodies;
    double build_s;
    double ms_step, ms_collide, ms_assemble, ms_solve, ms_integrate;
    double iterations, residual_max, contacts;
    double bytes_per_iter;           /* mean of solver_bytes_per_iteration (0: not estimated) */
    double bytes_per_contact_iter;   /* mean over steps of bytes_per_iteration / contacts */
    double traffic_bytes;            /* Σ iterations × bytes per iteration over the K steps */
    double solve_s;                  /* Σ seconds_solve over the K steps */
    double rss_bytes, rss_base_bytes;
    double load1;                    /* load average (1 min) when the row started */
    double cpu_per_wall;             /* CPU seconds (user + system, all threads) per wall second of the K steps */
    int fallback_steps;              /* of the K steps, those the world ran on fewer threads (its fallback) */
    char msg[512];
} row_result;

/* ---- memory ------------------------------------------------------------------------ */

/* A /proc/self/status field in bytes (-1 if absent). */
static double proc_status_bytes(const char* field)
{
    FILE* f = fopen("/proc/self/status", "r");
    if (!f) return -1;
    char line[256];
    size_t n = strlen(field);
    double v = -1;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, field, n) == 0 && line[n] == ':') {
            v = 1024.0 * strtod(line + n + 1, NULL);
            break;
        }
    fclose(f);
    return v;
}

static double peak_rss_bytes(void)
{
    double v = proc_status_bytes("VmHWM");
    if (v >= 0) return v;
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0) return NAN;
    return 1024.0 * (double)ru.ru_maxrss;
}

static double cpu_seconds(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0) return NAN;
    return (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_sec +
           1e-6 * (double)ru.ru_stime.tv_usec;
}

static double load_average(int which)
{
    double l[3] = {NAN, NAN, NAN};
    FILE* f = fopen("/proc/loadavg", "r");
    if (f) {
        if (fscanf(f, "%lf %lf %lf", &l[0], &l[1], &l[2]) != 3) l[0] = l[1] = l[2] = NAN;
        fclose(f);
    }
    return l[which];
}

/* ---- the triad ------------------------------------------------------------------------ */

static double triad_gbs(int threads, long n, int reps)
{
    double* a = malloc((size_t)n * sizeof *a);
    double* b = malloc((size_t)n * sizeof *b);
    double* c = malloc((size_t)n * sizeof *c);
    if (!a || !b || !c) {
        free(a), free(b), free(c);
        return NAN;
    }
    (void)threads;
    /* first touch by the threads that use the pages */
#pragma omp parallel for schedule(static) num_threads(threads)
    for (long i = 0; i < n; i++) {
        a[i] = 0.0;
        b[i] = 1.0;
        c[i] = 2.0;
    }
    const double s = 3.0;
    double best = INFINITY;
    for (int r = 0; r < reps; r++) {
        double t0 = now();
#pragma omp parallel for schedule(static) num_threads(threads)
        for (long i = 0; i < n; i++) a[i] = b[i] + s * c[i];
        double t = now() - t0;
        if (t < best) best = t;
    }
    double check = a[0] + a[n - 1];
    free(a), free(b), free(c);
    if (check != 14.0) return NAN;
    return 24.0 * (double)n / best / 1e9;
}

/* ---- a scene in a child process ----------------------------------------------------- */

static int load_scene(const spec* sp, int threads, dvi_scene** out, char* msg, size_t msg_size)
{
    size_t len = 0;
    char* text = spec_text(sp, &len);
    if (!text) {
        snprintf(msg, msg_size, "%s: cannot read or write the scene: %s", sp->name, strerror(errno));
        return -1;
    }
    char dir[PATH_MAX] = ".";
    if (sp->kind == SPEC_FILE) {
        snprintf(dir, sizeof dir, "%s", sp->path);
        char* slash = strrchr(dir, '/');
        if (slash)
            *slash = '\0';
        else
            strcpy(dir, ".");
    }
    dvi_scene_errors e = {0};
    dvi_scene* s = NULL;
    if (dvi_scene_parse(text, len, dir, &s, &e) != DVI_OK) {
        snprintf(msg, msg_size, "%s: %s", sp->name, e.text ? e.text : "does not parse");
        dvi_scene_errors_free(&e);
        free(text);
        return -1;
    }
    free(text);
    dvi_scene_overrides ov;
    memset(&ov, 0, sizeof ov);
    ov.threads = threads;
    if (dvi_scene_apply_overrides(s, &ov, &e) != DVI_OK) {
        snprintf(msg, msg_size, "%s: %s", sp->name, e.text ? e.text : "bad override");
        dvi_scene_errors_free(&e);
        dvi_scene_destroy(s);
        return -1;
    }
    *out = s;
    return 0;
}

/* The bodies whose motion says whether the scene is at rest: every
 * generated body, or every dynamic body when there is no generator. */
typedef struct grains {
    dvi_body_id* ids;
    double* mass;
    double* inertia; /* a sphere's 2/5 m r², 0 for other shapes (only translation then) */
    long n;
    double total_mass;
} grains;

static int grains_init(grains* g, const dvi_scene* s, const dvi_world* w)
{
    memset(g, 0, sizeof *g);
    const int32_t count = dvi_world_body_count(w);
    g->ids = malloc((size_t)(count > 0 ? count : 1) * sizeof *g->ids);
    g->mass = malloc((size_t)(count > 0 ? count : 1) * sizeof *g->mass);
    g->inertia = malloc((size_t)(count > 0 ? count : 1) * sizeof *g->inertia);
    if (!g->ids || !g->mass || !g->inertia) return -1;
    const int32_t ng = dvi_scene_generator_count(s);
    for (int32_t k = 0; k <= ng; k++) {
        int64_t first = 0, n = count;
        if (ng > 0) {
            if (k == ng) break;
            dvi_generator_info gi;
            if (dvi_scene_get_generator(s, k, &gi) != DVI_OK) return -1;
            first = gi.first_body, n = gi.count;
        }
        for (int64_t i = first; i < first + n && i < count; i++) {
            dvi_body_id id;
            dvi_body_info bi;
            if (dvi_world_body_at(w, (int32_t)i, &id) != DVI_OK || dvi_body_get_info(w, id, &bi) != DVI_OK) return -1;
            if (bi.type != DVI_BODY_DYNAMIC) continue;
            g->ids[g->n] = id;
            g->mass[g->n] = bi.mass;
            g->inertia[g->n] =
                bi.shape_type == DVI_SHAPE_SPHERE ? 0.4 * bi.mass * bi.bounding_radius * bi.bounding_radius : 0.0;
            g->total_mass += bi.mass;
            g->n++;
        }
    }
    return 0;
}

static void grains_free(grains* g)
{
    free(g->ids), free(g->mass), free(g->inertia);
    memset(g, 0, sizeof *g);
}

/* rms speed sqrt(2 KE / M) of the grains (rotation included for spheres). */
static double grains_v_rms(const grains* g, const dvi_world* w)
{
    if (g->n == 0 || g->total_mass <= 0) return 0.0;
    double ke = 0.0;
    for (long i = 0; i < g->n; i++) {
        double v[3], om[3];
        dvi_body_get_velocity(w, g->ids[i], v);
        dvi_body_get_angular_velocity(w, g->ids[i], om);
        ke += 0.5 * g->mass[i] * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]) +
              0.5 * g->inertia[i] * (om[0] * om[0] + om[1] * om[1] + om[2] * om[2]);
    }
    return sqrt(2.0 * ke / g->total_mass);
}

/* The cache file: one text line (magic, key, how the state was settled),
 * then the blob of dvi_model_save_state. */
#define CACHE_MAGIC "bench_scale-state v1"

static int cache_write(const char* path, uint64_t key, const settle_result* r, const void* blob, size_t size)
{
    char tmp[PATH_MAX + 16];
    snprintf(tmp, sizeof tmp, "%s.tmp%ld", path, (long)getpid());
    FILE* f = fopen(tmp, "wb");
    if (!f) return -1;
    fprintf(f, "%s key=%016llx steps=%ld sim=%.9g wall=%.6g v_rms=%.6g reached=%d cap=%.9g contacts=%.9g "
               "iterations=%.9g\n",
            CACHE_MAGIC, (unsigned long long)key, r->steps, r->sim_time, r->wall, r->v_rms, r->reached, r->cap,
            r->contacts, r->iterations);
    bool ok = fwrite(blob, 1, size, f) == size;
    ok = (fclose(f) == 0) && ok;
    if (!ok || rename(tmp, path) != 0) {
        remove(tmp);
        return -1;
    }
    return 0;
}

/* Reads the cache file: its settle record and the blob (malloc'd). */
static int cache_read(const char* path, uint64_t key, settle_result* r, void** blob, size_t* size)
{
    size_t len = 0;
    char* data = read_file(path, &len);
    if (!data) return -1;
    char* nl = memchr(data, '\n', len);
    unsigned long long k = 0;
    if (!nl || strncmp(data, CACHE_MAGIC " ", strlen(CACHE_MAGIC) + 1) != 0) {
        free(data);
        return -1;
    }
    *nl = '\0';
    if (sscanf(data + strlen(CACHE_MAGIC) + 1,
               "key=%llx steps=%ld sim=%lf wall=%lf v_rms=%lf reached=%d cap=%lf contacts=%lf iterations=%lf", &k,
               &r->steps, &r->sim_time, &r->wall, &r->v_rms, &r->reached, &r->cap, &r->contacts,
               &r->iterations) != 9 ||
        k != key) {
        free(data);
        return -1;
    }
    /* the state moves to the front of the file's buffer: no second copy
     * (100 MB on the full bed) to raise the row's peak */
    size_t head = (size_t)(nl + 1 - data);
    *size = len - head;
    memmove(data, data + head, *size);
    *blob = data;
    return 0;
}

/* Child: settles the scene (or finds it in the cache) and writes the state
 * file. fresh: do not read an existing file. */
static int child_settle(const spec* sp, int threads, const char* state_path, bool fresh, double cap_override,
                        settle_result* r)
{
    memset(r, 0, sizeof *r);
    dvi_scene* s = NULL;
    if (load_scene(sp, threads, &s, r->msg, sizeof r->msg) != 0) return -1;
    size_t len = 0;
    char* text = spec_text(sp, &len);
    const double cap = settle_cap(sp, cap_override);
    const uint64_t key = cache_key(text ? text : "", len, cap);
    free(text);
    dvi_model* m = NULL;
    if (dvi_model_create(s, &m, r->msg, sizeof r->msg) != DVI_OK) {
        dvi_scene_destroy(s);
        return -1;
    }
    r->bodies = dvi_scene_body_count(s);
    if (!fresh) {
        void* blob = NULL;
        size_t size = 0;
        settle_result c = *r;
        if (cache_read(state_path, key, &c, &blob, &size) == 0) {
            char msg[256];
            if (dvi_model_load_state(m, blob, size, msg, sizeof msg) == DVI_OK) {
                free(blob);
                *r = c;
                r->ok = 1, r->cached = 1;
                dvi_model_destroy(m);
                dvi_scene_destroy(s);
                return 0;
            }
            fprintf(stderr, PROG ": %s: the cached state does not load (%s); settling again\n", sp->name, msg);
            free(blob);
        }
    }
    dvi_world* w = dvi_model_world(m);
    grains g;
    if (grains_init(&g, s, w) != 0) {
        snprintf(r->msg, sizeof r->msg, "%s: cannot list the bodies", sp->name);
        grains_free(&g);
        dvi_model_destroy(m);
        dvi_scene_destroy(s);
        return -1;
    }
    const double dt = dvi_scene_get_settings(s).dt;
    const long check_every = dt < 1e-4 ? (long)ceil(1e-3 / dt) : 5; /* every 1 ms of DEM, 5 DVI steps */
    const long max_steps = (long)ceil(cap / dt - 1e-9);
    double below_since = -1.0, t0 = now(), last_report = t0;
    const char* tr = getenv("BENCH_SCALE_TRACE"); /* a line per check on stderr */
    const bool trace = tr && *tr && strcmp(tr, "0") != 0;
    r->cap = cap;
    for (long k = 1; k <= max_steps; k++) {
        dvi_status st = dvi_model_step(m);
        if (st < 0) {
            snprintf(r->msg, sizeof r->msg, "%s: settling step %ld: %s", sp->name, k, dvi_world_last_error(w));
            grains_free(&g);
            dvi_model_destroy(m);
            dvi_scene_destroy(s);
            return -1;
        }
        dvi_step_stats ss = dvi_world_get_stats(w);
        r->steps = k;
        r->sim_time = dvi_model_time(m);
        if (k % check_every == 0 || k == max_steps) {
            r->v_rms = grains_v_rms(&g, w);
            if (r->sim_time >= SETTLE_MIN - 1e-12 && r->v_rms < SETTLE_SPEED) {
                if (below_since < 0) below_since = r->sim_time;
                if (r->sim_time - below_since >= SETTLE_HOLD - 1e-12) {
                    r->reached = 1;
                    break;
                }
            } else {
                below_since = -1.0;
            }
            double t = now();
            if (trace)
                fprintf(stderr, PROG ": settling %s: t = %.4f s, rms speed %.4g m/s, %d contacts, %d iterations, "
                                "residual %.2e, max penetration %.2e m, %.2f s wall\n",
                        sp->name, r->sim_time, r->v_rms, ss.contacts, ss.iterations, ss.residual, ss.max_penetration,
                        t - t0);
            if (t - last_report > 30.0) {
                fprintf(stderr, PROG ": settling %s: t = %.3f s of at most %.3f, rms speed %.3g m/s, %d contacts, "
                                "%d iterations, %.0f s so far\n",
                        sp->name, r->sim_time, cap, r->v_rms, ss.contacts, ss.iterations, t - t0);
                last_report = t;
            }
        }
    }
    r->wall = now() - t0;
    /* the last step's figures, for the record */
    dvi_step_stats ss = dvi_world_get_stats(w);
    r->contacts = ss.contacts;
    r->iterations = ss.iterations;
    grains_free(&g);
    void* blob = NULL;
    size_t size = 0;
    if (dvi_model_save_state(m, &blob, &size) != DVI_OK || cache_write(state_path, key, r, blob, size) != 0) {
        snprintf(r->msg, sizeof r->msg, "%s: cannot write the state to %s: %s", sp->name, state_path,
                 strerror(errno));
        free(blob);
        dvi_model_destroy(m);
        dvi_scene_destroy(s);
        return -1;
    }
    free(blob);
    dvi_model_destroy(m);
    dvi_scene_destroy(s);
    r->ok = 1;
    return 0;
}

/* The scene of `sp` (with `threads`) and its model in the settled state of
 * the cache file `state_path`. On failure writes msg and returns −1 with
 * nothing left to free. */
static int load_settled(const spec* sp, int threads, const char* state_path, double cap_override, dvi_scene** out_s,
                        dvi_model** out_m, char* msg, size_t msg_size)
{
    dvi_scene* s = NULL;
    if (load_scene(sp, threads, &s, msg, msg_size) != 0) return -1;
    size_t len = 0;
    char* text = spec_text(sp, &len);
    const uint64_t key = cache_key(text ? text : "", len, settle_cap(sp, cap_override));
    free(text);
    dvi_model* m = NULL;
    if (dvi_model_create(s, &m, msg, msg_size) != DVI_OK) {
        dvi_scene_destroy(s);
        return -1;
    }
    settle_result c;
    void* blob = NULL;
    size_t size = 0;
    char why[256] = "";
    if (cache_read(state_path, key, &c, &blob, &size) != 0 ||
        dvi_model_load_state(m, blob, size, why, sizeof why) != DVI_OK) {
        snprintf(msg, msg_size, "%s: the settled state %s does not load %s", sp->name, state_path, why);
        free(blob);
        dvi_model_destroy(m);
        dvi_scene_destroy(s);
        return -1;
    }
    free(blob);
    *out_s = s;
    *out_m = m;
    return 0;
}

/* Child: the world's fallback to one thread off (--no-fallback). */
static bool child_no_fallback;

/* Child: one row. */
static int child_row(const spec* sp, int threads, const char* state_path, int steps, int warmup, double cap_override,
                     row_result* r)
{
    memset(r, 0, sizeof *r);
    r->threads = threads, r->steps = steps, r->warmup = warmup;
    r->load1 = load_average(0);
    r->rss_base_bytes = proc_status_bytes("VmRSS");
    double t0 = now();
    dvi_scene* s = NULL;
    dvi_model* m = NULL;
    if (load_settled(sp, threads, state_path, cap_override, &s, &m, r->msg, sizeof r->msg) != 0) return -1;
    r->dem = strcmp(dvi_scene_get_settings(s).method, "dem") == 0;
    r->bodies = dvi_scene_body_count(s);
    r->build_s = now() - t0;
    if (child_no_fallback) dvi_world_set_thread_fallback(dvi_model_world(m), false);
    const dvi_world* w = dvi_model_world_const(m);
    double wall = 0, col = 0, ass = 0, sol = 0, integ = 0, it = 0, con = 0, bpi = 0, bpci = 0;
    double cpu0 = 0, wall0 = 0;
    int bpci_n = 0;
    for (int k = 0; k < warmup + steps; k++) {
        if (k == warmup) cpu0 = cpu_seconds(), wall0 = now();
        double ts = now();
        dvi_status st = dvi_model_step(m);
        double te = now();
        if (st < 0) {
            snprintf(r->msg, sizeof r->msg, "%s: step %d: %s", sp->name, k + 1, dvi_world_last_error(w));
            dvi_model_destroy(m);
            dvi_scene_destroy(s);
            return -1;
        }
        if (k < warmup) continue;
        dvi_step_stats ss = dvi_world_get_stats(w);
        r->not_converged += st == DVI_NOT_CONVERGED;
        r->fallback_steps += ss.threads < threads;
        wall += te - ts;
        col += ss.seconds_collide, ass += ss.seconds_assemble, sol += ss.seconds_solve, integ += ss.seconds_integrate + ss.seconds_report;
        it += ss.iterations, con += ss.contacts;
        if (ss.residual > r->residual_max || !isfinite(ss.residual)) r->residual_max = ss.residual;
        bpi += ss.solver_bytes_per_iteration;
        r->traffic_bytes += (double)ss.iterations * ss.solver_bytes_per_iteration;
        if (ss.contacts > 0) {
            bpci += ss.solver_bytes_per_iteration / ss.contacts;
            bpci_n++;
        }
    }
    r->cpu_per_wall = (cpu_seconds() - cpu0) / (now() - wall0);
    const double n = steps;
    r->ms_step = 1e3 * wall / n;
    r->ms_collide = 1e3 * col / n;
    r->ms_assemble = 1e3 * ass / n;
    r->ms_solve = 1e3 * sol / n;
    r->ms_integrate = 1e3 * integ / n;
    r->iterations = it / n;
    r->contacts = con / n;
    r->bytes_per_iter = bpi / n;
    r->bytes_per_contact_iter = bpci_n > 0 ? bpci / bpci_n : 0.0;
    r->solve_s = sol;
    r->rss_bytes = peak_rss_bytes();
    dvi_model_destroy(m);
    dvi_scene_destroy(s);
    r->ok = 1;
    return 0;
}

/* ---- time to a residual: one step's CCP solved by each solver to each tolerance ---- */

#define CONV_MAX 16

typedef struct conv_config {
    const char* label;     /* as printed */
    const char* solver;    /* registry name */
    int precondition;      /* APGD: -1 = the scene's */
    int cold;              /* 1: no warm start (γ = 0) */
    double tolerance;
} conv_config;

static const conv_config conv_configs[] = {
    {"apgd", "apgd", -1, 0, 1e-4},           {"apgd", "apgd", -1, 0, 1e-6},
    {"apgd unscaled", "apgd", 0, 0, 1e-4},   {"apgd unscaled", "apgd", 0, 0, 1e-6},
    {"apgd cold", "apgd", -1, 1, 1e-4},      {"apgd cold", "apgd", -1, 1, 1e-6},
    {"pgs", "pgs", -1, 0, 1e-4},             {"pgs", "pgs", -1, 0, 1e-6},
    {"jacobi", "jacobi", -1, 0, 1e-4},       {"jacobi", "jacobi", -1, 0, 1e-6},
};
#define CONV_CONFIGS ((int)(sizeof conv_configs / sizeof conv_configs[0]))

typedef struct conv_result {
    int ok, threads, count, max_iterations;
    long long bodies;
    double contacts;
    struct {
        double ms_solve, residual;
        int iterations, status;
    } r[CONV_MAX];
    char msg[512];
} conv_result;

/* From the settled state and `warmup` steps with the scene's settings, the
 * next step once per configuration, each from the same state (so the same
 * contacts and the same warm start): its solve's wall time, iterations,
 * residual and status. */
static int child_conv(const spec* sp, int threads, const char* state_path, int warmup, int max_iterations,
                      double cap_override, conv_result* r)
{
    memset(r, 0, sizeof *r);
    r->threads = threads, r->max_iterations = max_iterations;
    dvi_scene* s = NULL;
    dvi_model* m = NULL;
    if (load_settled(sp, threads, state_path, cap_override, &s, &m, r->msg, sizeof r->msg) != 0) return -1;
    const dvi_scene_settings set = dvi_scene_get_settings(s);
    r->bodies = dvi_scene_body_count(s);
    void* blob = NULL;
    size_t size = 0;
    char msg[256] = "";
    int rc = -1;
    dvi_world* w = dvi_model_world(m);
    for (int k = 0; k < warmup; k++)
        if (dvi_model_step(m) < 0) {
            snprintf(r->msg, sizeof r->msg, "%s: warm-up step %d: %s", sp->name, k + 1, dvi_world_last_error(w));
            goto done;
        }
    if (dvi_model_save_state(m, &blob, &size) != DVI_OK) {
        snprintf(r->msg, sizeof r->msg, "%s: cannot save the state", sp->name);
        goto done;
    }
    for (int i = 0; i < CONV_CONFIGS; i++) {
        const conv_config* cc = &conv_configs[i];
        dvi_solver_settings ss = set.solver_settings;
        ss.tolerance = cc->tolerance;
        ss.max_iterations = max_iterations;
        ss.threads = threads;
        if (cc->precondition >= 0) ss.apgd.precondition = cc->precondition != 0;
        if (cc->cold) ss.warm_start = false;
        if (dvi_model_load_state(m, blob, size, msg, sizeof msg) != DVI_OK ||
            dvi_world_set_solver(w, cc->solver, &ss) != DVI_OK) {
            snprintf(r->msg, sizeof r->msg, "%s: %s: %s", sp->name, cc->label, msg[0] ? msg : dvi_world_last_error(w));
            goto done;
        }
        if (dvi_model_step(m) < 0) {
            snprintf(r->msg, sizeof r->msg, "%s: %s: %s", sp->name, cc->label, dvi_world_last_error(w));
            goto done;
        }
        dvi_step_stats st = dvi_world_get_stats(w);
        r->r[i].ms_solve = 1e3 * st.seconds_solve;
        r->r[i].residual = st.residual;
        r->r[i].iterations = st.iterations;
        r->r[i].status = (int)st.solver_status;
        r->contacts = st.contacts;
    }
    r->count = CONV_CONFIGS;
    r->ok = 1;
    rc = 0;
done:
    free(blob);
    dvi_model_destroy(m);
    dvi_scene_destroy(s);
    return rc;
}

/* ---- the parent: children, output ---------------------------------------------------- */

static char self_exe[PATH_MAX];

/* Runs this program with args (NULL-terminated) in a child with `threads`
 * OpenMP threads; reads `size` bytes of result from its stdout. 0 on
 * success. */
static int run_child(char* const args[], int threads, void* out, size_t size)
{
    int fd[2];
    if (pipe(fd) != 0) return -1;
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        close(fd[0]), close(fd[1]);
        return -1;
    }
    if (pid == 0) {
#ifdef __linux__
        prctl(PR_SET_PDEATHSIG, SIGTERM); /* the child ends with the parent */
#endif
        dup2(fd[1], STDOUT_FILENO);
        close(fd[0]), close(fd[1]);
        char t[16];
        snprintf(t, sizeof t, "%d", threads);
        setenv("OMP_NUM_THREADS", t, 1);
        setenv("OPENBLAS_NUM_THREADS", "1", 1);
        execv(self_exe, args);
        fprintf(stderr, PROG ": cannot run %s: %s\n", self_exe, strerror(errno));
        _exit(127);
    }
    close(fd[1]);
    size_t got = 0;
    while (got < size) {
        ssize_t k = read(fd[0], (char*)out + got, size - got);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) break;
        got += (size_t)k;
    }
    close(fd[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (got != size) return -1;
    if (!WIFEXITED(status)) return -1;
    return WEXITSTATUS(status) == 0 ? 0 : 1; /* 1: the child ran and reports a failure in its result */
}

static int run_child(char* const args[], int threads, void* out, size_t size);

/* The competing load of --contended: a child process that spins on CPU 0
 * (pinned where sched_setaffinity exists; else where the OS puts it) until
 * spin_stop. Returns its pid, or −1. */
static pid_t spin_start(void)
{
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
#ifdef __linux__
        prctl(PR_SET_PDEATHSIG, SIGKILL); /* it ends with the parent */
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(0, &set);
        (void)sched_setaffinity(0, sizeof set, &set);
#endif
        volatile unsigned long spin = 0;
        for (;;) spin = spin + 1;
    }
    return pid;
}

static void spin_stop(pid_t pid)
{
    if (pid <= 0) return;
    kill(pid, SIGKILL);
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {
    }
}

/* The triad in a child with `threads` threads (NAN on failure). */
static double run_triad(int threads, long n, int reps)
{
    char t[16], ns[32], rs[16];
    snprintf(t, sizeof t, "%d", threads);
    snprintf(ns, sizeof ns, "%ld", n);
    snprintf(rs, sizeof rs, "%d", reps);
    char* args[] = {self_exe, "--child", "triad", "--child-threads", t, "--child-n", ns, "--child-reps", rs, NULL};
    double g = NAN;
    if (run_child(args, threads, &g, sizeof g) != 0 || !isfinite(g)) return NAN;
    return g;
}

/* The child's arguments for a spec. */
typedef struct argv_buf {
    char* v[40];
    char store[40][PATH_MAX];
    int n;
} argv_buf;

static void av_add(argv_buf* a, const char* fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(a->store[a->n], PATH_MAX, fmt, ap);
    va_end(ap);
    a->v[a->n] = a->store[a->n];
    a->n++;
    a->v[a->n] = NULL;
}

static void av_spec(argv_buf* a, const spec* sp)
{
    av_add(a, "--child-kind");
    av_add(a, "%d", (int)sp->kind);
    if (sp->kind == SPEC_FILE) {
        av_add(a, "--child-path");
        av_add(a, "%s", sp->path);
    } else {
        av_add(a, "--child-spheres");
        av_add(a, "%ld", sp->spheres);
    }
}

static FILE* jout; /* where the JSON lines go (NULL: none) */

static void json_string(const char* s)
{
    fputc('"', jout);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            fprintf(jout, "\\%c", *s);
        else if ((unsigned char)*s < 0x20)
            fprintf(jout, "\\u%04x", *s);
        else
            fputc(*s, jout);
    }
    fputc('"', jout);
}

/* A number, or null when it is not finite. */
static void json_num(const char* key, double v, const char* fmt, bool last)
{
    fprintf(jout, "\"%s\": ", key);
    if (isfinite(v))
        fprintf(jout, fmt, v);
    else
        fprintf(jout, "null");
    fprintf(jout, last ? "}\n" : ", ");
    if (last) fflush(jout);
}

static void usage(FILE* f)
{
    fprintf(f,
            "usage: bench_scale [options]\n"
            "  the cost of a DVI step at scale: granular beds, the rover scenes, a DEM bed; one row per\n"
            "  (scene, threads), each in a child process, on settled (cached) states; docs/benchmarks.md\n"
            "  --sizes N,N,...     bed sizes in spheres (default 10000,54000,200000; none: no beds)\n"
            "  --steps K           steps measured per row, after the warm-up (default 10)\n"
            "  --warmup W          steps taken before measuring (default 2)\n"
            "  --threads T,T,...   thread counts (default 1,2)\n"
            "  --scene FILE        a scene file to measure (repeatable); replaces the default rover scenes\n"
            "                      (rover_obstacle_granular_strip_hex.json, rover_obstacle_granular_hex.json)\n"
            "  --no-rover          leave out the default rover scenes\n"
            "  --dem-spheres N     the DEM bed's spheres (default 5000; 0: no DEM rows)\n"
            "  --dem-steps K       DEM steps measured per row (default 200; warm-up 20)\n"
            "  --settle-time S     cap on the settling time, s simulated (default 0.3; 0.12 for beds above\n"
            "                      100,000 spheres)\n"
            "  --settle-threads T  threads of the settling runs (default: the largest of --threads, or 1\n"
            "                      when the load average leaves no core free for them; the settled state\n"
            "                      has the same bits for any thread count)\n"
            "  --cache-dir DIR     where settled states are kept (default EXE_DIR/../bench-cache)\n"
            "  --no-cache          settle every scene afresh and keep nothing\n"
            "  --settle-only       settle (or find in the cache) every scene, measure nothing\n"
            "  --no-fallback       the rows' worlds without the fallback to one thread (thread_fallback off)\n"
            "  --contended         each row twice: on an idle machine, then beside a competing load (a\n"
            "                      process spinning on CPU 0 while the row's steps run)\n"
            "  --convergence       instead of the step rows: the time to a residual (1e-4, 1e-6) of each\n"
            "                      solver (APGD with and without block scaling, from the warm start and\n"
            "                      from zero, PGS, Jacobi) on one step's CCP of each DVI scene, all from\n"
            "                      the same state\n"
            "  --max-iterations N  the iteration cap of --convergence (default 5000)\n"
            "  --print-bed N       print the scene of the N-sphere bed (--print-dem N: the DEM bed) and exit\n"
            "  --quick             a small run for the test suite: a 2,000-sphere bed, 3 steps, a 500-sphere\n"
            "                      DEM bed, a small triad, no rover scenes, no cache\n"
            "  --json              one JSON object per line instead of the table (\"kind\": machine,\n"
            "                      bandwidth, settle, dvi, dem, convergence)\n"
            "  --json-file FILE    the table on stdout and the JSON lines into FILE\n"
            "  --help              this text\n");
}

typedef struct options {
    long sizes[MAX_LIST];
    int nsizes;
    long threads[MAX_LIST];
    int nthreads;
    int steps, warmup, dem_steps, dem_warmup;
    long dem_spheres;
    const char* scenes[MAX_LIST];
    int nscenes;
    bool no_rover, no_cache, quick, json, settle_only, convergence, contended, no_fallback;
    int conv_max;
    double settle_time;
    int settle_threads;
    const char* cache_dir;
    const char* json_file;
    long triad_n;
    int triad_reps;
} options;

/* The child side: --child settle|row|triad with the spec and settings. */
static int child_main(int argc, char** argv)
{
    const char* mode = NULL;
    spec sp;
    memset(&sp, 0, sizeof sp);
    int threads = 1, steps = 1, warmup = 0, fresh = 0, reps = 1, max_it = 1000;
    long n = 0;
    double cap = 0;
    const char* state = "";
    for (int i = 1; i + 1 < argc; i += 2) {
        const char *k = argv[i], *v = argv[i + 1];
        if (strcmp(k, "--child") == 0) mode = v;
        else if (strcmp(k, "--child-kind") == 0) sp.kind = (spec_kind)atoi(v);
        else if (strcmp(k, "--child-spheres") == 0) sp.spheres = atol(v);
        else if (strcmp(k, "--child-path") == 0) snprintf(sp.path, sizeof sp.path, "%s", v);
        else if (strcmp(k, "--child-threads") == 0) threads = atoi(v);
        else if (strcmp(k, "--child-steps") == 0) steps = atoi(v);
        else if (strcmp(k, "--child-warmup") == 0) warmup = atoi(v);
        else if (strcmp(k, "--child-state") == 0) state = v;
        else if (strcmp(k, "--child-fresh") == 0) fresh = atoi(v);
        else if (strcmp(k, "--child-cap") == 0) cap = atof(v);
        else if (strcmp(k, "--child-no-fallback") == 0) child_no_fallback = atoi(v) != 0;
        else if (strcmp(k, "--child-n") == 0) n = atol(v);
        else if (strcmp(k, "--child-reps") == 0) reps = atoi(v);
        else if (strcmp(k, "--child-max-iterations") == 0) max_it = atoi(v);
    }
    if (!mode) return 2;
    spec_name(&sp);
    if (strcmp(mode, "triad") == 0) {
        double g = triad_gbs(threads, n, reps);
        return fwrite(&g, sizeof g, 1, stdout) == 1 && isfinite(g) ? 0 : 1;
    }
    if (strcmp(mode, "settle") == 0) {
        settle_result r;
        int rc = child_settle(&sp, threads, state, fresh != 0, cap, &r);
        fwrite(&r, sizeof r, 1, stdout);
        return rc == 0 ? 0 : 1;
    }
    if (strcmp(mode, "conv") == 0) {
        conv_result r;
        int rc = child_conv(&sp, threads, state, warmup, max_it, cap, &r);
        fwrite(&r, sizeof r, 1, stdout);
        return rc == 0 ? 0 : 1;
    }
    if (strcmp(mode, "row") == 0) {
        row_result r;
        int rc = child_row(&sp, threads, state, steps, warmup, cap, &r);
        fwrite(&r, sizeof r, 1, stdout);
        return rc == 0 ? 0 : 1;
    }
    return 2;
}

static int mkdir_p(const char* dir)
{
    char buf[PATH_MAX];
    snprintf(buf, sizeof buf, "%s", dir);
    for (char* p = buf + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            if (mkdir(buf, 0777) != 0 && errno != EEXIST) return -1;
            *p = '/';
        }
    if (mkdir(buf, 0777) != 0 && errno != EEXIST) return -1;
    return 0;
}

static bool finite_row(const row_result* r, double gbs)
{
    const double v[] = {r->ms_step, r->ms_collide, r->ms_assemble, r->ms_solve, r->ms_integrate,
                        r->iterations, r->residual_max, r->contacts, r->rss_bytes, gbs};
    for (size_t k = 0; k < sizeof v / sizeof v[0]; k++)
        if (!isfinite(v[k])) return false;
    return r->ms_step > 0 && r->rss_bytes > 0;
}

int main(int argc, char** argv)
{
    if (rover_register_probes() != DVI_OK) return 1; /* the rover scenes' probe kinds */
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--child") == 0) return child_main(argc, argv);

    options o;
    memset(&o, 0, sizeof o);
    o.sizes[0] = 10000, o.sizes[1] = 54000, o.sizes[2] = 200000, o.nsizes = 3;
    o.threads[0] = 1, o.threads[1] = 2, o.nthreads = 2;
    o.steps = 10, o.warmup = 2, o.dem_steps = 200, o.dem_warmup = 20, o.dem_spheres = 5000;
    o.triad_n = 1L << 25, o.triad_reps = 20;
    o.conv_max = 5000;
    bool sizes_given = false, steps_given = false, dem_given = false;
    for (int i = 1; i < argc; i++) {
        const char* a = argv[i];
        const char* v = i + 1 < argc ? argv[i + 1] : NULL;
        long tmp[MAX_LIST];
        int64_t n = 0;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(a, "--json") == 0) {
            o.json = true;
        } else if (v && strcmp(a, "--json-file") == 0) {
            o.json_file = v, i++;
        } else if (strcmp(a, "--quick") == 0) {
            o.quick = true;
        } else if (strcmp(a, "--no-cache") == 0) {
            o.no_cache = true;
        } else if (strcmp(a, "--no-rover") == 0) {
            o.no_rover = true;
        } else if (strcmp(a, "--no-fallback") == 0) {
            o.no_fallback = true;
        } else if (strcmp(a, "--contended") == 0) {
            o.contended = true;
        } else if (strcmp(a, "--settle-only") == 0) {
            o.settle_only = true;
        } else if (strcmp(a, "--convergence") == 0) {
            o.convergence = true;
        } else if (v && strcmp(a, "--max-iterations") == 0) {
            if (!cli_int(PROG, a, v, 1, INT_MAX, "an integer >= 1", &n)) goto invalid;
            o.conv_max = (int)n, i++;
        } else if (v && (strcmp(a, "--print-bed") == 0 || strcmp(a, "--print-dem") == 0)) {
            size_t len = 0;
            if (!cli_int(PROG, a, v, 1, LONG_MAX, "an integer >= 1", &n)) goto invalid;
            char* text = a[8] == 'b' ? bed_scene_text((long)n, &len) : dem_scene_text((long)n, &len);
            if (!text) goto bad;
            fwrite(text, 1, len, stdout);
            free(text);
            return 0;
        } else if (v && strcmp(a, "--sizes") == 0) {
            int k = cli_ints(PROG, a, v, tmp, 0, MAX_LIST, 8, 10000000);
            if (k < 0) goto invalid;
            memcpy(o.sizes, tmp, (size_t)k * sizeof tmp[0]);
            o.nsizes = k, sizes_given = true, i++;
        } else if (v && strcmp(a, "--threads") == 0) {
            int k = cli_ints(PROG, a, v, tmp, 1, MAX_LIST, 1, 1024);
            if (k < 0) goto invalid;
            memcpy(o.threads, tmp, (size_t)k * sizeof tmp[0]);
            o.nthreads = k, i++;
        } else if (v && strcmp(a, "--steps") == 0) {
            if (!cli_int(PROG, a, v, 1, INT_MAX, "an integer >= 1", &n)) goto invalid;
            o.steps = (int)n, steps_given = true, i++;
        } else if (v && strcmp(a, "--warmup") == 0) {
            if (!cli_int(PROG, a, v, 0, INT_MAX, "an integer >= 0", &n)) goto invalid;
            o.warmup = (int)n, i++;
        } else if (v && strcmp(a, "--dem-spheres") == 0) {
            if (!cli_int(PROG, a, v, 0, LONG_MAX, "an integer >= 0", &n)) goto invalid;
            o.dem_spheres = (long)n, dem_given = true, i++;
        } else if (v && strcmp(a, "--dem-steps") == 0) {
            if (!cli_int(PROG, a, v, 1, INT_MAX, "an integer >= 1", &n)) goto invalid;
            o.dem_steps = (int)n, i++;
        } else if (v && strcmp(a, "--settle-time") == 0) {
            if (!cli_double(PROG, a, v, 0.0, true, INFINITY, "a number > 0", &o.settle_time)) goto invalid;
            i++;
        } else if (v && strcmp(a, "--settle-threads") == 0) {
            if (!cli_int(PROG, a, v, 1, 1024, "an integer from 1 to 1024", &n)) goto invalid;
            o.settle_threads = (int)n, i++;
        } else if (v && strcmp(a, "--cache-dir") == 0) {
            o.cache_dir = v, i++;
        } else if (v && strcmp(a, "--scene") == 0) {
            if (o.nscenes >= MAX_LIST) goto bad;
            o.scenes[o.nscenes++] = v, i++;
        } else {
            goto bad;
        }
        continue;
    bad:
        fprintf(stderr, PROG ": bad argument %s%s%s\n", a, v ? " " : "", v ? v : "");
    invalid:
        usage(stderr);
        return 2;
    }
    if (o.quick) {
        if (!sizes_given) o.sizes[0] = 2000, o.nsizes = 1;
        if (!steps_given) o.steps = 3;
        o.warmup = o.warmup > 1 ? 1 : o.warmup;
        if (!dem_given) o.dem_spheres = 500;
        o.dem_steps = o.dem_steps > 20 ? 20 : o.dem_steps, o.dem_warmup = 5;
        if (o.settle_time <= 0) o.settle_time = 0.02;
        o.no_cache = true;
        o.no_rover = true;
        o.triad_n = 1L << 21, o.triad_reps = 3;
    }
    /* the children run this very program, even if the file is rebuilt meanwhile */
    if (access("/proc/self/exe", X_OK) == 0)
        snprintf(self_exe, sizeof self_exe, "/proc/self/exe");
    else
        snprintf(self_exe, sizeof self_exe, "%s", argv[0]);

    if (o.json)
        jout = stdout;
    else if (o.json_file && !(jout = fopen(o.json_file, "w"))) {
        fprintf(stderr, PROG ": cannot write %s: %s\n", o.json_file, strerror(errno));
        return 2;
    }

    /* the scenes */
    spec* specs = calloc(MAX_LIST * 2 + 4, sizeof *specs);
    if (!specs) return 1;
    int nspec = 0;
    for (int k = 0; k < o.nsizes; k++) {
        specs[nspec].kind = SPEC_BED, specs[nspec].spheres = o.sizes[k];
        spec_name(&specs[nspec++]);
    }
    if (o.nscenes > 0) {
        for (int k = 0; k < o.nscenes; k++) {
            specs[nspec].kind = SPEC_FILE;
            snprintf(specs[nspec].path, sizeof specs[nspec].path, "%s", o.scenes[k]);
            spec_name(&specs[nspec++]);
        }
    } else if (!o.no_rover) {
        static const char* const rel[2] = {"scenes/rover_obstacle_granular_strip_hex.json",
                                           "scenes/rover_obstacle_granular_hex.json"};
        for (int k = 0; k < 2; k++) {
            char buf[PATH_MAX];
            const char* p = data_path_or(NULL, rel[k], buf, sizeof buf, PROG);
            if (!p) return 2;
            specs[nspec].kind = SPEC_FILE;
            snprintf(specs[nspec].path, sizeof specs[nspec].path, "%s", p);
            spec_name(&specs[nspec++]);
        }
    }
    if (o.dem_spheres > 0) {
        specs[nspec].kind = SPEC_DEM, specs[nspec].spheres = o.dem_spheres;
        spec_name(&specs[nspec++]);
    }

    /* the cache */
    char cache_dir[PATH_MAX];
    char tmp_dir[PATH_MAX] = "";
    if (o.no_cache) {
        const char* t = getenv("TMPDIR");
        snprintf(tmp_dir, sizeof tmp_dir, "%s/bench_scale.XXXXXX", t && *t ? t : "/tmp");
        if (!mkdtemp(tmp_dir)) {
            fprintf(stderr, PROG ": cannot make a scratch directory %s: %s\n", tmp_dir, strerror(errno));
            return 1;
        }
        snprintf(cache_dir, sizeof cache_dir, "%s", tmp_dir);
    } else if (o.cache_dir) {
        snprintf(cache_dir, sizeof cache_dir, "%s", o.cache_dir);
    } else {
        char exe[PATH_MAX];
        if (data_path_exe_dir(exe, sizeof exe) != 0) {
            fprintf(stderr, PROG ": cannot find the program's directory; give --cache-dir\n");
            return 2;
        }
        char* slash = strrchr(exe, '/'); /* EXE_DIR/.., written without the ".." */
        if (slash && slash != exe) *slash = '\0';
        if ((size_t)snprintf(cache_dir, sizeof cache_dir, "%s/bench-cache", exe) >= sizeof cache_dir) {
            fprintf(stderr, PROG ": the program's directory is too long; give --cache-dir\n");
            return 2;
        }
    }
    if (mkdir_p(cache_dir) != 0) {
        fprintf(stderr, PROG ": cannot make the cache directory %s: %s\n", cache_dir, strerror(errno));
        return 1;
    }

    int rc = 0;
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    int max_threads = 1;
    for (int k = 0; k < o.nthreads; k++)
        if (o.threads[k] > max_threads) max_threads = (int)o.threads[k];
    /* Settling: the state has the same bits for any thread count, so on a
     * busy machine it runs on one thread: there a team of threads waits for
     * a descheduled member at every parallel region (measured: 45 times
     * slower at a load average of 4.8 on 2 cores). */
    const double load_start = load_average(0);
    const bool busy = !(load_start < (double)(ncpu - max_threads) + 0.5);
    const int settle_threads = o.settle_threads > 0 ? o.settle_threads : busy ? 1 : max_threads;
    if (jout) {
        fprintf(jout, "{\"kind\": \"machine\", \"library\": ");
        json_string(dvi_version_string());
        fprintf(jout, ", \"cpus_online\": %ld, ", ncpu);
        json_num("load1", load_average(0), "%.2f", false);
        json_num("load5", load_average(1), "%.2f", false);
#ifdef _OPENMP
        fprintf(jout, "\"openmp\": true, ");
#else
        fprintf(jout, "\"openmp\": false, ");
#endif
        fprintf(jout, "\"cache_dir\": ");
        json_string(o.no_cache ? "" : cache_dir);
        fprintf(jout, "}\n");
    }
    if (!o.json) {
        printf("bench_scale: dvicontact %s, %ld CPUs online, load average %.2f %.2f %.2f at the start%s\n",
               dvi_version_string(), ncpu, load_average(0), load_average(1), load_average(2),
#ifdef _OPENMP
               ""
#else
               " (built without OpenMP: every thread count runs on one thread)"
#endif
        );
    }

    /* bandwidth */
    double gbs[MAX_LIST];
    if (!o.json)
        printf("\nmemory bandwidth: STREAM triad a[i] = b[i] + s*c[i], 3 arrays of %ld doubles (%.0f MiB in all), "
               "24 bytes counted per element, best of %d\n",
               o.triad_n, 3.0 * 8.0 * (double)o.triad_n / 1048576.0, o.triad_reps);
    for (int k = 0; k < o.nthreads; k++) {
        gbs[k] = run_triad((int)o.threads[k], o.triad_n, o.triad_reps);
        if (!isfinite(gbs[k])) {
            fprintf(stderr, PROG ": the triad with %ld threads failed\n", o.threads[k]);
            gbs[k] = NAN;
            rc = 1;
        }
        if (jout) {
            fprintf(jout, "{\"kind\": \"bandwidth\", \"threads\": %ld, \"elements\": %ld, \"bytes_per_element\": 24, "
                   "\"repetitions\": %d, ",
                   o.threads[k], o.triad_n, o.triad_reps);
            json_num("bandwidth_gbs", gbs[k], "%.3f", true);
        }
        if (!o.json) {
            printf("  %ld thread%s: %6.2f GB/s\n", o.threads[k], o.threads[k] == 1 ? " " : "s", gbs[k]);
        }
        fflush(stdout);
    }

    /* settling */
    char (*state)[PATH_MAX] = calloc((size_t)nspec, sizeof *state);
    bool* settled = calloc((size_t)nspec, sizeof *settled);
    if (!state || !settled) return 1;
    if (!o.json)
        printf("\nsettled states (%s): the grains' rms speed below %g m/s for %g s after at least %g s, or the "
               "time cap\n",
               o.no_cache ? "settled afresh, not kept" : cache_dir, SETTLE_SPEED, SETTLE_HOLD, SETTLE_MIN);
    for (int i = 0; i < nspec; i++) {
        size_t len = 0;
        char* text = spec_text(&specs[i], &len);
        if (!text) {
            fprintf(stderr, PROG ": %s: cannot read %s\n", specs[i].name, specs[i].path);
            rc = 1;
            continue;
        }
        const double cap = settle_cap(&specs[i], o.settle_time);
        int sl = snprintf(state[i], PATH_MAX, "%s/%s-%016llx.state", cache_dir, specs[i].name,
                          (unsigned long long)cache_key(text, len, cap));
        free(text);
        if (sl < 0 || sl >= PATH_MAX) {
            fprintf(stderr, PROG ": %s: the cache path is too long\n", specs[i].name);
            rc = 1;
            continue;
        }
        argv_buf a = {.n = 0};
        av_add(&a, "%s", self_exe);
        av_add(&a, "--child"), av_add(&a, "settle");
        av_spec(&a, &specs[i]);
        av_add(&a, "--child-threads"), av_add(&a, "%d", settle_threads);
        av_add(&a, "--child-state"), av_add(&a, "%s", state[i]);
        av_add(&a, "--child-fresh"), av_add(&a, "%d", o.no_cache ? 1 : 0);
        av_add(&a, "--child-cap"), av_add(&a, "%.17g", o.settle_time);
        settle_result r;
        memset(&r, 0, sizeof r);
        int st = run_child(a.v, settle_threads, &r, sizeof r);
        if (st != 0 || !r.ok) {
            if (!o.json) printf("  %-36s failed\n", specs[i].name);
            fprintf(stderr, PROG ": settling %s failed: %s\n", specs[i].name, st < 0 ? "the child died" : r.msg);
            rc = 1;
            continue;
        }
        settled[i] = true;
        if (jout) {
            fprintf(jout, "{\"kind\": \"settle\", \"scene\": ");
            json_string(specs[i].name);
            fprintf(jout, ", \"bodies\": %lld, \"cached\": %s, \"at_rest\": %s, \"steps\": %ld, \"threads\": %d, ", r.bodies,
                   r.cached ? "true" : "false", r.reached ? "true" : "false", r.steps, settle_threads);
            json_num("simulated_s", r.sim_time, "%.6g", false);
            json_num("cap_s", r.cap, "%.6g", false);
            json_num("wall_s", r.wall, "%.2f", false);
            json_num("rms_speed", r.v_rms, "%.4g", false);
            json_num("contacts", r.contacts, "%.0f", false);
            json_num("iterations", r.iterations, "%.0f", true);
        }
        if (!o.json) {
            printf("  %-36s %lld bodies: %s at t = %.3f s (%ld steps; %s), rms speed %.2g m/s, %.0f contacts, %.0f "
                   "iterations; %.1f s wall on %d thread%s%s\n",
                   specs[i].name, r.bodies, r.reached ? "at rest" : "time cap", r.sim_time, r.steps,
                   r.reached ? "criterion met" : "cap reached", r.v_rms, r.contacts, r.iterations, r.wall,
                   settle_threads, settle_threads == 1 ? "" : "s", r.cached ? " (earlier; loaded from the cache)" : "");
        }
        fflush(stdout);
    }

    /* time to a residual */
    if (o.convergence && !o.settle_only) {
        if (!o.json) {
            printf("\ntime to a residual: from the settled state and %d warm-up step%s, the next step's CCP solved by "
                   "each solver to each tolerance (at most %d iterations), each from the same state and warm start\n",
                   o.warmup, o.warmup == 1 ? "" : "s", o.conv_max);
            printf("  apgd: the scene's settings (block scaling on); unscaled: without it; cold: from zero, not "
                   "the warm start; pgs, jacobi: their defaults\n\n");
            printf("%-36s %7s %8s %3s %-14s %7s %7s %9s %-10s %10s\n", "scene", "bodies", "contacts", "thr", "solver",
                   "tol", "iter", "residual", "status", "ms solve");
        }
        for (int i = 0; i < nspec; i++) {
            if (!settled[i] || specs[i].kind == SPEC_DEM) continue;
            for (int k = 0; k < o.nthreads; k++) {
                argv_buf a = {.n = 0};
                av_add(&a, "%s", self_exe);
                av_add(&a, "--child"), av_add(&a, "conv");
                av_spec(&a, &specs[i]);
                av_add(&a, "--child-threads"), av_add(&a, "%ld", o.threads[k]);
                av_add(&a, "--child-state"), av_add(&a, "%s", state[i]);
                av_add(&a, "--child-warmup"), av_add(&a, "%d", o.warmup);
                av_add(&a, "--child-max-iterations"), av_add(&a, "%d", o.conv_max);
                av_add(&a, "--child-cap"), av_add(&a, "%.17g", o.settle_time);
                conv_result r;
                memset(&r, 0, sizeof r);
                int st = run_child(a.v, (int)o.threads[k], &r, sizeof r);
                if (st != 0 || !r.ok) {
                    fprintf(stderr, PROG ": %s, %ld threads failed: %s\n", specs[i].name, o.threads[k],
                            st < 0 ? "the child died" : r.msg);
                    rc = 1;
                    continue;
                }
                for (int c = 0; c < r.count; c++) {
                    const conv_config* cc = &conv_configs[c];
                    const char* status = r.r[c].status == DVI_SOLVE_CONVERGED        ? "converged"
                                         : r.r[c].status == DVI_SOLVE_MAX_ITERATIONS ? "max_iter"
                                                                                     : "failed";
                    if (r.r[c].status != DVI_SOLVE_CONVERGED && r.r[c].status != DVI_SOLVE_MAX_ITERATIONS) rc = 1;
                    if (jout) {
                        fprintf(jout, "{\"kind\": \"convergence\", \"scene\": ");
                        json_string(specs[i].name);
                        fprintf(jout, ", \"bodies\": %lld, ", r.bodies);
                        json_num("contacts", r.contacts, "%.0f", false);
                        fprintf(jout, "\"threads\": %d, \"solver\": ", r.threads);
                        json_string(cc->label);
                        fprintf(jout, ", ");
                        json_num("tolerance", cc->tolerance, "%g", false);
                        fprintf(jout, "\"max_iterations\": %d, \"iterations\": %d, ", r.max_iterations,
                                r.r[c].iterations);
                        json_num("residual", r.r[c].residual, "%.4e", false);
                        fprintf(jout, "\"status\": \"%s\", ", status);
                        json_num("ms_solve", r.r[c].ms_solve, "%.3f", true);
                    }
                    if (!o.json)
                        printf("%-36s %7lld %8.0f %3d %-14s %7.0e %7d %9.2e %-10s %10.1f\n", specs[i].name, r.bodies,
                               r.contacts, r.threads, cc->label, cc->tolerance, r.r[c].iterations, r.r[c].residual,
                               status, r.r[c].ms_solve);
                }
                fflush(stdout);
            }
        }
        nspec = 0; /* no step rows */
    }

    /* rows */
    if (o.settle_only) nspec = 0;
    if (!o.json && nspec > 0) {
        printf("\nDVI steps: mean over %d steps after %d warm-up steps from the settled state, each row in a child "
               "process\n",
               o.steps, o.warmup);
        printf("  collide .. integr.: the world step's phases (dvi_step_stats); other: the rest of dvi_model_step "
               "(the scene's probe windows)\n");
        printf("  RSS: peak resident memory (VmHWM), MB = 1e6 bytes; B/body, B/contact: RSS above the child's "
               "start, per body and per contact\n");
        printf("  B/c/it: solver bytes moved per contact and iteration (dvi_step_stats.solver_bytes_per_iteration "
               "/ contacts)\n");
        printf("  s/flr: the solve's wall time over its floor, iterations x bytes per iteration / triad bandwidth (>= 1; "
               "the goal is <= 2)\n");
        printf("  GB/s: the triad just before the row, with its threads; solveGB: the solve's bytes (by the library's "
               "count) per second of solve\n");
        printf("  load: load average when the row started; cpu: CPU seconds per wall second of the measured steps "
               "(\"cpu short\": below 0.8 x threads)\n");
        if (o.contended)
            printf("  contended: the row ran beside a competing load, a process spinning on CPU 0; fallback: its "
                   "steps the world ran on one thread\n");
        printf("\n");
        printf("%-36s %7s %8s %3s %9s %8s %8s %9s %8s %7s %6s %8s %8s %7s %7s %7s %6s %6s %7s %5s %5s\n", "scene",
               "bodies", "contacts", "thr", "ms/step", "collide", "assemble", "solve", "integr.", "other", "iter", "max res", "RSS MB",
               "B/body", "B/cont.", "B/c/it", "GB/s", "s/flr", "solveGB", "load", "cpu");
    }
    bool dem_header = false;
    for (int i = 0; i < nspec; i++) {
        if (!settled[i]) continue;
        for (int rk = 0; rk < o.nthreads * (o.contended ? 2 : 1); rk++) {
            const int k = o.contended ? rk / 2 : rk;
            const bool load = o.contended && rk % 2 == 1; /* beside the competing load */
            const bool dem = specs[i].kind == SPEC_DEM;
            const int steps = dem ? o.dem_steps : o.steps, warmup = dem ? o.dem_warmup : o.warmup;
            argv_buf a = {.n = 0};
            av_add(&a, "%s", self_exe);
            av_add(&a, "--child"), av_add(&a, "row");
            av_spec(&a, &specs[i]);
            av_add(&a, "--child-threads"), av_add(&a, "%ld", o.threads[k]);
            av_add(&a, "--child-state"), av_add(&a, "%s", state[i]);
            av_add(&a, "--child-steps"), av_add(&a, "%d", steps);
            av_add(&a, "--child-warmup"), av_add(&a, "%d", warmup);
            av_add(&a, "--child-cap"), av_add(&a, "%.17g", o.settle_time);
            av_add(&a, "--child-no-fallback"), av_add(&a, "%d", o.no_fallback ? 1 : 0);
            /* the bandwidth now, with the row's threads: the machine's varies by ±20% over minutes */
            const double bw = run_triad((int)o.threads[k], o.triad_n, o.triad_reps);
            row_result r;
            memset(&r, 0, sizeof r);
            const pid_t spinner = load ? spin_start() : -1;
            if (load && spinner < 0) {
                fprintf(stderr, PROG ": %s, %ld threads: cannot start the competing load\n", specs[i].name,
                        o.threads[k]);
                rc = 1;
                continue;
            }
            int st = run_child(a.v, (int)o.threads[k], &r, sizeof r);
            spin_stop(spinner);
            if (st != 0 || !r.ok) {
                fprintf(stderr, PROG ": %s, %ld threads failed: %s\n", specs[i].name, o.threads[k],
                        st < 0 ? "the child died" : r.msg);
                rc = 1;
                continue;
            }
            const double floor_s = r.traffic_bytes / (bw * 1e9);
            const double ratio = r.traffic_bytes > 0 ? r.solve_s / floor_s : NAN;
            const double solve_gbs = r.traffic_bytes > 0 && r.solve_s > 0 ? r.traffic_bytes / r.solve_s / 1e9 : NAN;
            const double bpci = r.bytes_per_iter > 0 ? r.bytes_per_contact_iter : NAN;
            const double above = r.rss_bytes - (r.rss_base_bytes > 0 ? r.rss_base_bytes : 0);
            const double per_body = r.bodies > 0 ? above / (double)r.bodies : NAN;
            const double per_contact = r.contacts > 0 ? above / r.contacts : NAN;
            const double ns_contact = r.contacts > 0 ? 1e6 * r.ms_step / r.contacts : NAN;
            /* the row's threads did not all run: other work shared the cores (a DEM step's forces are serial) */
            const bool cpu_short = !r.dem && r.cpu_per_wall < 0.8 * r.threads;
            if (!finite_row(&r, bw)) {
                fprintf(stderr, PROG ": %s, %ld threads: a figure is not finite\n", specs[i].name, o.threads[k]);
                rc = 1;
            }
            if (!r.dem && !(r.bytes_per_iter > 0))
                fprintf(stderr, PROG ": %s: the solver gives no byte count (solver_bytes_per_iteration = 0)\n",
                        specs[i].name);
            if (jout) {
                fprintf(jout, "{\"kind\": \"%s\", \"scene\": ", r.dem ? "dem" : "dvi");
                json_string(specs[i].name);
                fprintf(jout, ", \"bodies\": %lld, ", r.bodies);
                json_num("contacts", r.contacts, "%.1f", false);
                fprintf(jout, "\"threads\": %d, \"steps\": %d, \"warmup\": %d, ", r.threads, r.steps, r.warmup);
                json_num("ms_per_step", r.ms_step, "%.4f", false);
                json_num("ms_collide", r.ms_collide, "%.4f", false);
                json_num("ms_assemble", r.ms_assemble, "%.4f", false);
                json_num("ms_solve", r.ms_solve, "%.4f", false);
                json_num("ms_integrate", r.ms_integrate, "%.4f", false);
                json_num("ms_other", r.ms_step - r.ms_collide - r.ms_assemble - r.ms_solve - r.ms_integrate, "%.4f",
                         false);
                json_num("iterations", r.iterations, "%.2f", false);
                json_num("residual", r.residual_max, "%.4e", false);
                fprintf(jout, "\"not_converged\": %d, ", r.not_converged);
                json_num("rss_mb", r.rss_bytes / 1e6, "%.1f", false);
                json_num("rss_start_mb", r.rss_base_bytes / 1e6, "%.1f", false);
                json_num("bytes_per_body", per_body, "%.0f", false);
                json_num("bytes_per_contact", per_contact, "%.0f", false);
                json_num("bytes_per_iteration", r.bytes_per_iter > 0 ? r.bytes_per_iter : NAN, "%.6g", false);
                json_num("bytes_per_contact_iter", bpci, "%.2f", false);
                json_num("bandwidth_gbs", bw, "%.3f", false);
                json_num("bandwidth_ratio", r.dem ? NAN : ratio, "%.3f", false);
                json_num("solve_gbs", r.dem ? NAN : solve_gbs, "%.3f", false);
                if (r.dem) json_num("ns_per_contact_step", ns_contact, "%.2f", false);
                json_num("build_s", r.build_s, "%.2f", false);
                json_num("cpu_per_wall", r.cpu_per_wall, "%.2f", false);
                if (!r.dem) fprintf(jout, "\"cpu_short\": %s, ", cpu_short ? "true" : "false");
                fprintf(jout, "\"contended\": %s, \"fallback_steps\": %d, ", load ? "true" : "false", r.fallback_steps);
                json_num("load1", r.load1, "%.2f", true);
            }
            if (o.json) {
            } else if (!r.dem) {
                char flags[64];
                snprintf(flags, sizeof flags, "%s%s", load ? " contended" : cpu_short ? " cpu short" : "",
                         r.fallback_steps > 0 ? " fallback" : "");
                if (r.fallback_steps > 0)
                    snprintf(flags + strlen(flags), sizeof flags - strlen(flags), " %d", r.fallback_steps);
                printf("%-36s %7lld %8.0f %3d %9.2f %8.2f %8.2f %9.2f %8.2f %7.2f %6.1f %8.1e %8.1f %7.0f %7.0f "
                       "%7.1f %6.2f %6.2f %7.2f %5.2f %5.2f%s\n",
                       specs[i].name, r.bodies, r.contacts, r.threads, r.ms_step, r.ms_collide, r.ms_assemble,
                       r.ms_solve, r.ms_integrate,
                       r.ms_step - r.ms_collide - r.ms_assemble - r.ms_solve - r.ms_integrate, r.iterations, r.residual_max, r.rss_bytes / 1e6, per_body,
                       per_contact, bpci, bw, ratio, solve_gbs, r.load1, r.cpu_per_wall, flags);
            } else {
                if (!dem_header) {
                    printf("\nDEM steps (the penalty back end; mean over %d steps after %d warm-up steps from the "
                           "settled state)\n",
                           o.dem_steps, o.dem_warmup);
                    printf("%-36s %7s %8s %3s %9s %8s %8s %8s %8s %10s %8s %5s %5s\n", "scene", "bodies", "contacts",
                           "thr", "ms/step", "collide", "forces", "joints", "integr.", "ns/c-step", "RSS MB",
                           "load", "cpu");
                    dem_header = true;
                }
                printf("%-36s %7lld %8.0f %3d %9.3f %8.3f %8.3f %8.3f %8.3f %10.1f %8.1f %5.2f %5.2f\n", specs[i].name,
                       r.bodies, r.contacts, r.threads, r.ms_step, r.ms_collide, r.ms_assemble, r.ms_solve,
                       r.ms_integrate, ns_contact, r.rss_bytes / 1e6, r.load1, r.cpu_per_wall);
            }
            fflush(stdout);
        }
    }
    if (!o.json) printf("\nload average at the end: %.2f %.2f %.2f\n", load_average(0), load_average(1), load_average(2));
    if (o.no_cache) {
        for (int i = 0; i < nspec; i++)
            if (state[i][0]) remove(state[i]);
        rmdir(tmp_dir);
    }
    free(state);
    free(settled);
    free(specs);
    if (jout && jout != stdout && fclose(jout) != 0) rc = 1;
    return rc;
}
