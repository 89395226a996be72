/* bench_mpi — the cost of a step spread over MPI ranks, DEM or DVI (docs/scale.md).
 *
 *   bench_mpi [--sizes N,...] [--ranks R,...] [--threads T] [--warmup W] [--steps K] [--json]
 *             [--scene FILE] [--mpirun PATH] [--slabs] [--reference]
 *
 * One row per (bed, ranks): the bed of bench_scale's DEM rows
 * (bench_scale --print-dem N, from the same directory) with its spheres
 * touching at the start (gap and jitter 0, so that every step has its
 * contacts from the first), or a scene file; W steps of warm-up, then K
 * measured. Each row runs `mpirun --oversubscribe -n R bench_mpi --child
 * ...`; on a machine with fewer cores than ranks the ranks share them, so
 * the times are those of an oversubscribed node and the volumes (bytes,
 * messages) are what the model of docs/scale.md scales.
 *
 * The ranks' grid is the library's choice (2 × 2 for 4 ranks on these
 * square beds); --slabs cuts the bed into R × 1 slabs instead (key "grid").
 *
 * --reference adds a first row per bed: one process stepping an ordinary
 * world (dvi_model_step, the scene's own sums; grid "none").
 *
 * Columns (--json: one object per row, these keys): method ("dem" or "dvi"),
 * iterations (DVI: the solver's mean per measured step), grid, ranks, threads, bodies,
 * contacts (the last step's, all ranks), ms_per_step (wall clock per step,
 * rank 0, communication included), ms_comm (per step, the mean over the
 * ranks of the time in halo exchange and reductions), bytes_halo and
 * bytes_reduce (per step, the mean over the ranks of the bytes a rank
 * sends), messages (per step, mean per rank), and ghosts (mean per rank),
 * owned_max (the largest owned count), bytes_rebuild (per step, the mean
 * over the ranks of the bytes sent while choosing ghosts), rebuilds.
 */
#include "dvi/dist.h"
#include "dvi/scene.h"
#include "dvi/world.h"
#include "rover_probes.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char* slurp(FILE* f, size_t* len)
{
    size_t cap = 1 << 16, n = 0;
    char* s = malloc(cap);
    if (!s) return NULL;
    for (;;) {
        size_t r = fread(s + n, 1, cap - n - 1, f);
        n += r;
        if (r == 0) break;
        if (n + 1 == cap) {
            char* t = realloc(s, cap *= 2);
            if (!t) {
                free(s);
                return NULL;
            }
            s = t;
        }
    }
    s[n] = '\0';
    *len = n;
    return s;
}

static void replace(char* s, const char* from, const char* to)
{
    char* p = strstr(s, from);
    if (!p) return;
    size_t a = strlen(from), b = strlen(to);
    memmove(p + b, p + a, strlen(p + a) + 1);
    memcpy(p, to, b);
}

/* The scene text: a file, or bench_scale's DEM bed of n spheres. */
static char* scene_text(const char* self, const char* file, long n, size_t* len)
{
    FILE* f;
    char cmd[4096];
    if (file) {
        f = fopen(file, "rb");
    } else {
        char dir[2048];
        snprintf(dir, sizeof dir, "%s", self);
        char* slash = strrchr(dir, '/');
        if (slash) *slash = '\0';
        else snprintf(dir, sizeof dir, ".");
        snprintf(cmd, sizeof cmd, "'%s/bench_scale' --print-dem %ld", dir, n);
        f = popen(cmd, "r");
    }
    if (!f) return NULL;
    char* s = slurp(f, len);
    if (file) fclose(f);
    else if (pclose(f) != 0) {
        free(s);
        return NULL;
    }
    if (s && !file) { /* spheres touching from the first step */
        replace(s, "\"gap\": 0.001", "\"gap\": 0");
        replace(s, "\"jitter\": 0.00025", "\"jitter\": 0");
        *len = strlen(s);
    }
    return s;
}

/* The reference row: one process stepping an ordinary world (dvi_model_step), the scene's own sums. */
static int reference_row(dvi_scene* scene, int threads, int warmup, int steps)
{
    dvi_model* m = NULL;
    char msg[1024];
    if (dvi_model_create(scene, &m, msg, sizeof msg) != DVI_OK) {
        fprintf(stderr, "bench_mpi: %s\n", msg);
        return 1;
    }
    double t0 = 0.0, iters = 0.0;
    for (int k = 0; k < warmup + steps; k++) {
        if (k == warmup) t0 = MPI_Wtime();
        if (dvi_model_step(m) < 0) {
            fprintf(stderr, "bench_mpi: step %d: %s\n", k + 1, dvi_error_message());
            dvi_model_destroy(m);
            return 1;
        }
        if (k >= warmup) iters += dvi_world_get_stats(dvi_model_world_const(m)).iterations;
    }
    const double t = MPI_Wtime() - t0;
    const dvi_step_stats s = dvi_world_get_stats(dvi_model_world_const(m));
    printf("{\"method\": \"%s\", \"iterations\": %.1f, \"grid\": \"none\", \"ranks\": 1, \"threads\": %d, "
           "\"bodies\": %lld, \"contacts\": %lld, \"ms_per_step\": %.4g, \"ms_comm\": 0, \"bytes_halo\": 0, "
           "\"bytes_reduce\": 0, \"messages\": 0, \"ghosts\": 0, \"owned_max\": %lld, \"bytes_rebuild\": 0, "
           "\"rebuilds\": 0}\n",
           dvi_scene_get_settings(scene).method, iters / steps, threads > 0 ? threads : 1,
           (long long)dvi_world_body_count(dvi_model_world_const(m)), (long long)s.contacts, 1e3 * t / steps,
           (long long)dvi_world_body_count(dvi_model_world_const(m)));
    dvi_model_destroy(m);
    return 0;
}

static int child(const char* self, const char* file, long n, int threads, int warmup, int steps, bool slabs,
                 bool reference)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    size_t len = 0;
    char* text = scene_text(self, file, n, &len);
    int ok = text != NULL, all;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all) {
        if (rank == 0) fprintf(stderr, "bench_mpi: cannot get the scene (%s)\n", file ? file : "bench_scale --print-dem");
        free(text);
        return 1;
    }
    dvi_scene* scene = NULL;
    dvi_scene_errors errs = {0};
    dvi_status st = dvi_scene_parse(text, len, ".", &scene, &errs);
    free(text);
    if (st == DVI_OK && threads > 0) {
        dvi_scene_overrides o;
        memset(&o, 0, sizeof o);
        o.threads = threads;
        st = dvi_scene_apply_overrides(scene, &o, &errs);
    }
    if (st != DVI_OK) {
        if (rank == 0) fprintf(stderr, "bench_mpi: the scene: %s", errs.text ? errs.text : "refused\n");
        dvi_scene_errors_free(&errs);
        dvi_scene_destroy(scene);
        return 1;
    }
    if (reference) {
        int rc = reference_row(scene, threads, warmup, steps);
        dvi_scene_destroy(scene);
        return rc;
    }
    char msg[1024];
    dvi_dist* d = NULL;
    dvi_dist_settings set = dvi_default_dist_settings();
    if (slabs) set.grid[0] = size, set.grid[1] = 1;
    st = dvi_dist_create(scene, &set, &d, msg, sizeof msg);
    if (st != DVI_OK) {
        if (rank == 0) fprintf(stderr, "bench_mpi: %s\n", msg);
        dvi_scene_destroy(scene);
        return 1;
    }
    double sum[6] = {0}, t_all = 0.0, iters = 0.0;
    int64_t rebuild0 = 0;
    for (int k = 0; k < warmup + steps; k++) {
        if (k == warmup) {
            dvi_dist_stats s;
            dvi_dist_get_stats(d, &s);
            rebuild0 = s.bytes_rebuild_total;
            MPI_Barrier(MPI_COMM_WORLD);
            t_all = MPI_Wtime();
        }
        st = dvi_dist_step(d);
        if (st < 0) {
            if (rank == 0) fprintf(stderr, "bench_mpi: step %d: %s\n", k + 1, dvi_dist_last_error(d));
            dvi_dist_destroy(d);
            dvi_scene_destroy(scene);
            return 1;
        }
        if (k >= warmup) {
            dvi_dist_stats s;
            dvi_dist_get_stats(d, &s);
            sum[0] += s.seconds_comm;
            sum[1] += (double)s.bytes_halo;
            sum[2] += (double)s.bytes_reduce;
            sum[3] += (double)s.messages;
            iters += s.iterations;
        }
    }
    t_all = MPI_Wtime() - t_all;
    dvi_dist_stats s;
    dvi_dist_get_stats(d, &s);
    double mine[8] = {sum[0] / steps, sum[1] / steps, sum[2] / steps, sum[3] / steps, (double)s.ghosts,
                      (double)(s.bytes_rebuild_total - rebuild0) / steps, 0, 0};
    double tot[8];
    MPI_Reduce(mine, tot, 8, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    int owned_max = 0;
    MPI_Reduce(&s.owned, &owned_max, 1, MPI_INT, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("{\"method\": \"%s\", \"iterations\": %.1f, \"grid\": \"%s\", \"ranks\": %d, \"threads\": %d, \"bodies\": %lld, \"contacts\": %lld, \"ms_per_step\": %.4g, "
               "\"ms_comm\": %.4g, \"bytes_halo\": %.0f, \"bytes_reduce\": %.0f, \"messages\": %.2f, \"ghosts\": %.0f, "
               "\"owned_max\": %d, \"bytes_rebuild\": %.0f, \"rebuilds\": %lld}\n",
               dvi_scene_get_settings(scene).method, iters / steps, slabs ? "slabs" : "auto", size, threads > 0 ? threads : 1, (long long)s.bodies, (long long)s.contacts, 1e3 * t_all / steps,
               1e3 * tot[0] / size, tot[1] / size, tot[2] / size, tot[3] / size, tot[4] / size, owned_max,
               tot[5] / size, (long long)s.rebuilds);
    dvi_dist_destroy(d);
    dvi_scene_destroy(scene);
    return 0;
}

static int parse_list(const char* s, long* out, int max)
{
    int n = 0;
    while (*s && n < max) {
        char* end;
        long v = strtol(s, &end, 10);
        if (end == s || v <= 0) return -1;
        out[n++] = v;
        s = *end == ',' ? end + 1 : end;
        if (*end && *end != ',') return -1;
    }
    return n;
}

int main(int argc, char** argv)
{
    long sizes[16] = {54000, 200000}, ranks[16] = {1, 2, 4};
    int nsizes = 2, nranks = 3, threads = 1, warmup = 20, steps = 20;
    bool json = false, is_child = false, slabs = false, reference = false;
    const char* scene = NULL;
    const char* mpirun = "mpirun";
    for (int i = 1; i < argc; i++) {
        const char* a = argv[i];
        const char* v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--json") == 0) json = true;
        else if (strcmp(a, "--child") == 0) is_child = true;
        else if (strcmp(a, "--slabs") == 0) slabs = true;
        else if (strcmp(a, "--reference") == 0) reference = true;
        else if (strcmp(a, "--sizes") == 0 && v && (nsizes = parse_list(v, sizes, 16)) > 0) i++;
        else if (strcmp(a, "--ranks") == 0 && v && (nranks = parse_list(v, ranks, 16)) > 0) i++;
        else if (strcmp(a, "--threads") == 0 && v && (threads = atoi(v)) > 0) i++;
        else if (strcmp(a, "--warmup") == 0 && v && (warmup = atoi(v)) >= 0) i++;
        else if (strcmp(a, "--steps") == 0 && v && (steps = atoi(v)) > 0) i++;
        else if (strcmp(a, "--scene") == 0 && v) scene = argv[++i];
        else if (strcmp(a, "--mpirun") == 0 && v) mpirun = argv[++i];
        else {
            fprintf(stderr,
                    "usage: bench_mpi [--sizes N,...] [--ranks R,...] [--threads T] [--warmup W] [--steps K] "
                    "[--scene FILE] [--mpirun PATH] [--slabs] [--reference] [--json]\n  (bad or unknown argument: %s)\n",
                    a);
            return 2;
        }
    }
    if (is_child) {
        rover_register_probes(); /* the rover scenes' probe kinds (--scene), as the dvi command registers them */
        int provided;
        MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
        int rc = child(argv[0], scene, sizes[0], threads, warmup, steps, slabs, reference);
        MPI_Finalize();
        return rc;
    }
    if (!dvi_dist_available()) {
        fprintf(stderr, "bench_mpi: this build has no MPI\n");
        return 1;
    }
    char self[4096];
    ssize_t sl = readlink("/proc/self/exe", self, sizeof self - 1);
    if (sl <= 0) snprintf(self, sizeof self, "%s", argv[0]);
    else self[sl] = '\0';
    if (!json)
        printf("%-8s %5s %7s %-6s %9s %9s %11s %9s %12s %12s %9s %8s %6s\n", "bodies", "ranks", "threads", "grid",
               "contacts", "ms/step", "ms comm", "ghosts", "halo B/step", "reduce B", "messages", "rebuilds", "iter");
    int rc = 0;
    for (int si = 0; si < (scene ? 1 : nsizes); si++)
        for (int ri = reference ? -1 : 0; ri < nranks; ri++) { /* −1: the reference row, one ordinary process */
            char cmd[8192];
            snprintf(cmd, sizeof cmd,
                     "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 "
                     "OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_hwloc_base_binding_policy=none "
                     "OMP_WAIT_POLICY=passive OMP_NUM_THREADS=%d "
                     "'%s' --oversubscribe -n %ld '%s' --child --sizes %ld --threads %d --warmup %d --steps %d%s%s%s%s%s",
                     threads, mpirun, ri < 0 ? 1L : ranks[ri], self, sizes[si], threads, warmup, steps,
                     scene ? " --scene '" : "", scene ? scene : "", scene ? "'" : "", slabs ? " --slabs" : "",
                     ri < 0 ? " --reference" : "");
            FILE* p = popen(cmd, "r");
            if (!p) {
                fprintf(stderr, "bench_mpi: cannot run %s\n", mpirun);
                return 1;
            }
            char line[4096] = "";
            bool got = false;
            while (fgets(line, sizeof line, p))
                if (line[0] == '{') {
                    got = true;
                    break;
                }
            char rest[256];
            while (fgets(rest, sizeof rest, p)) {
            }
            int st = pclose(p);
            if (!got || st != 0) {
                fprintf(stderr, "bench_mpi: the row of %ld bodies on %ld ranks failed (status %d)\n", sizes[si],
                        ri < 0 ? 1L : ranks[ri], st);
                rc = 1;
                continue;
            }
            if (json) {
                fputs(line, stdout);
            } else {
                long long bodies, contacts, rebuilds;
                int rk, th, owned;
                double ms, comm, halo, red, msgs, ghosts, rb, its;
                char grid[16];
                if (sscanf(line,
                           "{\"method\": \"%*[a-z]\", \"iterations\": %lf, \"grid\": \"%15[a-z]\", \"ranks\": %d, \"threads\": %d, \"bodies\": %lld, \"contacts\": %lld, \"ms_per_step\": "
                           "%lf, \"ms_comm\": %lf, \"bytes_halo\": %lf, \"bytes_reduce\": %lf, \"messages\": %lf, "
                           "\"ghosts\": %lf, \"owned_max\": %d, \"bytes_rebuild\": %lf, \"rebuilds\": %lld",
                           &its, grid, &rk, &th, &bodies, &contacts, &ms, &comm, &halo, &red, &msgs, &ghosts, &owned,
                           &rb, &rebuilds) == 15)
                    printf("%-8lld %5d %7d %-6s %9lld %9.2f %11.3f %9.0f %12.0f %12.0f %9.2f %8lld %6.1f\n", bodies,
                           rk, th, grid, contacts, ms, comm, ghosts, halo, red, msgs, rebuilds, its);
                else
                    fputs(line, stdout);
            }
            fflush(stdout);
        }
    return rc;
}
