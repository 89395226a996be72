/* dvicontact — one scene stepped over MPI ranks (docs/scale.md).
 *
 * Every rank loads the same scene and calls dvi_dist_create with it; the
 * generated bodies (the scene's granular beds) are split over a grid of
 * px × py subdomains in x and y (slabs when py = 1), each rank owning one;
 * the bodies
 * the scene lists one by one (walls, the rover and its joints) are owned by
 * rank 0, fixed ones are on every rank. Each rank steps a world of its
 * owned bodies and the ghosts their contacts need; after each step the
 * owners send the ghosts' new states. The states are bit-identical to
 * dvi_model_step's on one process, for any rank and thread count.
 *
 * Every function taking a dvi_dist* is collective: all ranks of the
 * communicator call it, in the same order. MPI must be initialised by the
 * caller (MPI_Init or MPI_Init_thread with at least MPI_THREAD_FUNNELED)
 * and only the calling thread uses MPI.
 *
 * Without MPI at build time (meson option mpi=disabled, or no MPI found),
 * dvi_dist_available() is false and dvi_dist_create returns
 * DVI_ERR_UNSUPPORTED.
 */
#ifndef DVI_DIST_H
#define DVI_DIST_H

#include "dvi/base.h"
#include "dvi/scene.h"

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dvi_dist dvi_dist;

typedef struct dvi_dist_settings {
    /// A pointer to the MPI_Comm to run on; NULL: MPI_COMM_WORLD.
    const void* comm;
    /// m: ghosts are chosen this much beyond the contact range and chosen
    /// again once a body has moved half of it; 0: a fifth of the mean
    /// radius of the generated spheres.
    double skin;
    /// Subdomains along x and y (their product the rank count); {0, 0}: the
    /// grid whose subdomains have the smallest half perimeter on the bed's
    /// footprint (slabs along a strip, 2 × 2 on a square bed of 4 ranks).
    int32_t grid[2];
    /// The cuts are drawn at the quantiles of the initial centres, and again
    /// at a rebuild when a rank owns more than `rebalance` times the mean
    /// of the generated bodies; 0: 1.2; a negative value: never.
    double rebalance;
} dvi_dist_settings;

/// Per rank, and summed over the ranks where named so; the last step's
/// communication unless named "total".
typedef struct dvi_dist_stats {
    int32_t ranks, rank;
    int64_t bodies;            /* the scene's, all ranks */
    int32_t owned;             /* bodies this rank steps and sends */
    int32_t ghosts;            /* bodies this rank receives each step */
    int32_t local;             /* bodies in this rank's world (owned, ghosts, fixed) */
    int64_t contacts;          /* the step's contacts, all ranks, each once */
    int64_t steps;             /* steps taken */
    int64_t rebuilds;          /* times the ghosts were chosen again (the first included) */
    double seconds_step;       /* this rank's last step, wall clock, communication included */
    double seconds_comm;       /* of which sending, receiving and waiting */
    int64_t bytes_halo;        /* this rank's last step: ghost states sent (and, DVI, the bodies' entries
                                * of every product of the shared CCP) */
    int64_t bytes_reduce;      /* this rank's last step: sent in reductions */
    int64_t messages;          /* this rank's last step: messages sent (reductions counted once each) */
    int64_t bytes_rebuild_total; /* this rank: sent while choosing ghosts, over the run */
    int32_t iterations;        /* DVI: the last step's solver iterations (the same on every rank); 0 for DEM */
    double residual;           /* DVI: the last step's solver residual (the same on every rank) */
    double max_penetration;    /* the last step's deepest contact, all ranks (m) */
    double max_joint_violation; /* the last step's largest joint error, all ranks */
    int64_t rebalances;        /* times the cuts were drawn again (the load drifted), over the run */
    double imbalance;          /* at the last rebuild: the most generated bodies a rank owned over the mean */
} dvi_dist_stats;

DVI_API dvi_dist_settings dvi_default_dist_settings(void);
/// True when the library was built with MPI.
DVI_API bool dvi_dist_available(void);
/// Builds this rank's part of the scene's model. A scene that cannot be
/// split (fewer generated spheres than ranks, terrain models; with the DVI
/// method: joints, a solver other than apgd and jacobi, Coulomb's law) is
/// refused with DVI_ERR_INVALID_ARG on every rank, the reason in msg. The
/// DVI method's CCP is shared by the ranks (dvi_ccp_shared) and sums
/// exactly: the same bits as one process with formulation.exact_sums.
DVI_API dvi_status dvi_dist_create(const dvi_scene* scene, const dvi_dist_settings* settings, dvi_dist** out,
                                   char* msg, size_t msg_size);
DVI_API void dvi_dist_destroy(dvi_dist* dist);
/// One step of the scene's dt on every rank. A failure on any rank is a
/// failure on all: every rank returns the same status and
/// dvi_dist_last_error gives the failing rank's message.
DVI_API dvi_status dvi_dist_step(dvi_dist* dist);
DVI_API const char* dvi_dist_last_error(const dvi_dist* dist);
DVI_API double dvi_dist_time(const dvi_dist* dist);
DVI_API int64_t dvi_dist_step_count(const dvi_dist* dist);
/// This rank's figures (not collective).
DVI_API dvi_status dvi_dist_get_stats(const dvi_dist* dist, dvi_dist_stats* out);
/// Gathers every body's state on rank 0: 13 doubles per body (x, q, v, ω),
/// in the scene's body order, into states[13 × bodies]; states may be NULL
/// on the other ranks.
DVI_API dvi_status dvi_dist_gather_states(dvi_dist* dist, double* states);
/// Writes a checkpoint of the run into directory dir (created if absent):
/// manifest.bin (rank 0) and rank-R.bin per rank, each checked by its
/// FNV-1a checksum and the scene's fingerprint.
DVI_API dvi_status dvi_dist_save(dvi_dist* dist, const char* dir);
/// Continues from a checkpoint of dvi_dist_save, written on any number of
/// ranks, with the same bits as the run that wrote it. A checkpoint of
/// another scene, a damaged or missing file is refused (on every rank,
/// the failing file named) and the run is left as it was.
DVI_API dvi_status dvi_dist_load(dvi_dist* dist, const char* dir);
/// FNV-1a 64 of the time and every body's 13 state doubles in the scene's
/// order (their IEEE-754 bits, little-endian), on every rank: equal to
/// dvi_world_state_hash of the same scene stepped on one process.
DVI_API dvi_status dvi_dist_state_hash(dvi_dist* dist, uint64_t* out);


/* ---- probes and frames: the scene's outputs, written once ------------------ */

/// The scene's probes (dvi_model_probe_count, _info, _due of the same scene
/// on one process). The strings of the info stay valid until the next
/// dvi_dist_step or dvi_dist_load.
DVI_API int32_t dvi_dist_probe_count(const dvi_dist* dist);
DVI_API dvi_status dvi_dist_probe_info(const dvi_dist* dist, int32_t probe, dvi_probe_info* out);
DVI_API bool dvi_dist_probe_due(const dvi_dist* dist, int32_t probe);
/// False for kinds that cannot be sampled over ranks: energy_audit (the
/// health monitor is each process's own) and a program's kinds without a
/// per-body sample.
DVI_API bool dvi_dist_probe_available(const dvi_dist* dist, int32_t probe);
/// Collective: the probe's row (info.columns numbers, the time first) on
/// rank 0, into values (NULL allowed on the other ranks). Each body's
/// numbers come from the rank that owns it: the same bits as
/// dvi_model_probe_sample on one process. Sums over ranks (a fixed body's
/// contact force, the kinetic energy of many bodies, the solver's contacts)
/// are added in rank order: equal to the single process's to rounding. Over
/// ranks a fixed body's contact torque leaves out rolling and spin couples,
/// and the solver's largest-of columns (max_penetration, ccp_hover, the
/// wall times) are the largest rank's.
DVI_API dvi_status dvi_dist_probe_sample(dvi_dist* dist, int32_t probe, double* values);
/// Collective: VTK frame `frame` as a parallel set (dvi_vtk_write_frame_ex's
/// arrays): each rank writes DIR/frames/{bodies,contacts,shapes}_NNNNNN_pRRRR.vtp
/// with the bodies it owns (rank 0 the fixed ones too; "id" is the scene's
/// body index) and their contacts, rank 0 the .pvtp files that join them
/// (and, at frame 0, static.vtp).
DVI_API dvi_status dvi_dist_write_vtk(dvi_dist* dist, const char* dir, int frame, bool ascii);
/// Rank 0: DIR/{bodies,contacts,shapes}.pvd over the first `frames` frames
/// of dvi_dist_write_vtk (not collective).
DVI_API dvi_status dvi_dist_write_pvd(const char* dir, int frames, const double* times, char* msg, size_t msg_size);

/* ---- for programs that do not call MPI themselves (the dvi command) ------- */

/// Starts MPI (MPI_Init_thread, MPI_THREAD_FUNNELED) unless it is running.
/// DVI_ERR_UNSUPPORTED without MPI.
DVI_API dvi_status dvi_dist_init(void);
/// Ends MPI if dvi_dist_init started it.
DVI_API void dvi_dist_finalize(void);
/// This process's rank in MPI_COMM_WORLD and their count (0 and 1 when MPI
/// is not running).
DVI_API void dvi_dist_world(int* rank, int* size);
/// Collective over MPI_COMM_WORLD: the largest of every process's value
/// (to agree on a failure or a stop before or between steps).
DVI_API int dvi_dist_agree_max(int value);

#ifdef __cplusplus
}
#endif
#endif
