/* dvicontact — a scene stepped on one process or over MPI ranks, its final
 * state hash printed (tests/test_mpi.py compares them; docs/scale.md).
 *
 *   mpi_hash SCENE STEPS --single            one process, dvi_model_step (no MPI call)
 *   mpirun -n N mpi_hash SCENE STEPS [--skin S] [--die RANK:STEP]
 *                                            over N ranks, dvi_dist_step
 *   --threads T   the scene's threads (formulation threads override)
 *   --load DIR    (ranks) continue from the checkpoint in DIR (dvi_dist_load), then STEPS steps
 *   --save DIR    (ranks) write a checkpoint into DIR after the steps (dvi_dist_save)
 *   --grid PXxPY  (ranks) the subdomains along x and y (default: chosen from the bed)
 *   --rebalance R (ranks) dvi_dist_settings.rebalance (default 0: 1.2)
 *
 * Prints on stdout (rank 0): "hash HEX steps K time T", then, over ranks,
 * one line per rank "rank R owned O ghosts G local L rebuilds B contacts C
 * rebalances N imbalance F"; a failure:
 * "error: MESSAGE" on stderr and exit status 1 on every rank. --die makes
 * rank RANK exit abruptly (status 9, no MPI call) before step STEP: the
 * other ranks must not hang.
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

static int single(dvi_scene* scene, long steps)
{
    char msg[1024];
    dvi_model* m = NULL;
    if (dvi_model_create(scene, &m, msg, sizeof msg) != DVI_OK) {
        fprintf(stderr, "error: %s\n", msg);
        return 1;
    }
    for (long k = 0; k < steps; k++) {
        dvi_status st = dvi_model_step(m);
        if (st < 0) {
            fprintf(stderr, "error: step %ld: %s\n", k + 1, dvi_world_last_error(dvi_model_world(m)));
            dvi_model_destroy(m);
            return 1;
        }
    }
    uint64_t h = 0;
    dvi_world_state_hash(dvi_model_world(m), &h);
    printf("hash %016llx steps %ld time %.17g\n", (unsigned long long)h, steps, dvi_model_time(m));
    dvi_model_destroy(m);
    return 0;
}

static int spread(dvi_scene* scene, long steps, double skin, int die_rank, long die_step, const char* load,
                  const char* save, const int grid[2], double rebalance)
{
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    dvi_dist_settings set = dvi_default_dist_settings();
    set.skin = skin;
    set.grid[0] = grid[0];
    set.grid[1] = grid[1];
    set.rebalance = rebalance;
    char msg[1024];
    dvi_dist* d = NULL;
    dvi_status st = dvi_dist_create(scene, &set, &d, msg, sizeof msg);
    if (st != DVI_OK) {
        if (rank == 0) fprintf(stderr, "error: %s\n", msg);
        return 1;
    }
    if (load && (st = dvi_dist_load(d, load)) != DVI_OK) {
        if (rank == 0) fprintf(stderr, "error: %s\n", dvi_dist_last_error(d));
        dvi_dist_destroy(d);
        return 1;
    }
    for (long k = 0; k < steps; k++) {
        if (rank == die_rank && k + 1 == die_step) {
            fprintf(stderr, "mpi_hash: rank %d exits abruptly before step %ld (--die)\n", rank, k + 1);
            fflush(stderr);
            _exit(9);
        }
        st = dvi_dist_step(d);
        if (st < 0) {
            if (rank == 0) fprintf(stderr, "error: step %ld: %s\n", k + 1, dvi_dist_last_error(d));
            dvi_dist_destroy(d);
            return 1;
        }
    }
    if (save && (st = dvi_dist_save(d, save)) != DVI_OK) {
        if (rank == 0) fprintf(stderr, "error: %s\n", dvi_dist_last_error(d));
        dvi_dist_destroy(d);
        return 1;
    }
    uint64_t h = 0;
    st = dvi_dist_state_hash(d, &h);
    if (st != DVI_OK) {
        if (rank == 0) fprintf(stderr, "error: %s\n", dvi_dist_last_error(d));
        dvi_dist_destroy(d);
        return 1;
    }
    dvi_dist_stats s;
    dvi_dist_get_stats(d, &s);
    if (rank == 0)
        printf("hash %016llx steps %lld time %.17g\n", (unsigned long long)h, (long long)dvi_dist_step_count(d),
               dvi_dist_time(d));
    fflush(stdout);
    for (int r = 0; r < size; r++) { /* one line per rank, in rank order */
        MPI_Barrier(MPI_COMM_WORLD);
        if (r == rank) {
            printf("rank %d owned %d ghosts %d local %d rebuilds %lld contacts %lld rebalances %lld imbalance %.3f\n",
                   rank, s.owned, s.ghosts, s.local, (long long)s.rebuilds, (long long)s.contacts,
                   (long long)s.rebalances, s.imbalance);
            fflush(stdout);
        }
    }
    dvi_dist_destroy(d);
    return 0;
}

int main(int argc, char** argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: mpi_hash SCENE STEPS [--single] [--skin S] [--threads T] [--die RANK:STEP] [--load DIR] [--save DIR] [--grid PXxPY] [--rebalance R]\n");
        return 2;
    }
    const char* path = argv[1];
    long steps = strtol(argv[2], NULL, 10);
    bool one = false;
    double skin = 0.0;
    int threads = 0, die_rank = -1;
    const char* load = NULL;
    const char* save = NULL;
    int grid[2] = {0, 0};
    double rebalance = 0.0;
    long die_step = -1;
    for (int i = 3; i < argc; i++) {
        if (strcmp(argv[i], "--single") == 0) one = true;
        else if (strcmp(argv[i], "--skin") == 0 && i + 1 < argc) skin = strtod(argv[++i], NULL);
        else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc) threads = atoi(argv[++i]);
        else if (strcmp(argv[i], "--load") == 0 && i + 1 < argc) load = argv[++i];
        else if (strcmp(argv[i], "--save") == 0 && i + 1 < argc) save = argv[++i];
        else if (strcmp(argv[i], "--rebalance") == 0 && i + 1 < argc) rebalance = strtod(argv[++i], NULL);
        else if (strcmp(argv[i], "--grid") == 0 && i + 1 < argc) {
            if (sscanf(argv[++i], "%dx%d", &grid[0], &grid[1]) != 2) return 2;
        }
        else if (strcmp(argv[i], "--die") == 0 && i + 1 < argc) {
            if (sscanf(argv[++i], "%d:%ld", &die_rank, &die_step) != 2) return 2;
        } else {
            fprintf(stderr, "mpi_hash: unknown argument %s\n", argv[i]);
            return 2;
        }
    }
    rover_register_probes(); /* the rover scenes' probe kinds, as the dvi command registers them */
    dvi_scene* scene = NULL;
    dvi_scene_errors errs = {0};
    if (dvi_scene_load(path, &scene, &errs) != DVI_OK) {
        fprintf(stderr, "error: %s: %s", path, errs.text ? errs.text : "cannot load\n");
        dvi_scene_errors_free(&errs);
        return 1;
    }
    if (threads > 0) {
        dvi_scene_overrides o;
        memset(&o, 0, sizeof o);
        o.threads = threads;
        if (dvi_scene_apply_overrides(scene, &o, &errs) != DVI_OK) {
            fprintf(stderr, "error: %s", errs.text ? errs.text : "overrides refused\n");
            dvi_scene_errors_free(&errs);
            dvi_scene_destroy(scene);
            return 1;
        }
    }
    int rc;
    if (one) {
        rc = single(scene, steps);
    } else {
        int provided;
        MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
        rc = spread(scene, steps, skin, die_rank, die_step, load, save, grid, rebalance);
        MPI_Finalize();
    }
    dvi_scene_destroy(scene);
    return rc;
}
