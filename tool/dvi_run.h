/* The `dvi run` command: the state of a run, shared by dvi_run.c (setup,
 * the step loop, outputs) and dvi_checkpoint.c (checkpoints and resume). */
#ifndef DVI_TOOL_RUN_H
#define DVI_TOOL_RUN_H

#include <dvi/output.h>

#include <dvi/dvi.h>

#include <stdbool.h>
#include <stdint.h>

/* Statistics accumulated over all steps since t = 0 (kept across resumes in
 * checkpoint/run.json). */
typedef struct run_stats {
    int64_t steps;                 /* steps accounted for */
    int64_t iterations_sum;
    int64_t iterations_max;
    double residual_max;
    int64_t not_converged;         /* steps whose solve missed its tolerance */
    int64_t first_not_converged;   /* step number (1-based), or 0 */
    int64_t joint_dropped_steps;   /* steps whose direct joint solve dropped redundant rows */
    int64_t joint_dropped_max;     /* the most rows one step dropped */
    int64_t joint_residual_steps;  /* steps whose direct joint solve left a residual above the tolerance */
    double joint_residual_max;     /* the largest such relative residual (dvi_step_stats.joint_residual) */
    int64_t warm_starts_rejected;  /* steps whose solver started from 0 (dvi_step_stats) */
    int64_t coulomb_checked;       /* steps solved twice by the Coulomb check (dvi_step_stats) */
    int64_t nonunique;             /* steps the check found with several solutions */
    int64_t first_nonunique;       /* step number (1-based), or 0 */
    double seconds_collide, seconds_assemble, seconds_solve, seconds_integrate, seconds_report;
    double seconds_step;           /* wall time inside dvi_model_step */
    double max_penetration;        /* m */
    int64_t max_penetration_step;
    double max_joint_violation;    /* m or rad */
    int64_t max_joint_violation_step;
    double max_ccp_hover;          /* m: the CCP's largest opening of a pushing contact in a step */
    int64_t max_ccp_hover_step;
    double ccp_hover_work;         /* J: the sum over the steps of dvi_step_stats.ccp_hover_work */
    int64_t contacts_max;
    double wall_seconds;           /* wall time of the earlier invocations */
    int64_t invocations;           /* 1 + number of resumes */
} run_stats;

typedef struct run_probe {
    dvi_probe_info info;           /* over ranks: name and title copied (own_name, own_title), no column names */
    char* own_name;
    char* own_title;
    bool off;                      /* over ranks: a kind that is not sampled there (no CSV) */
    char* csv_path;
    char* svg_path;
    dvi_csv* csv;
} run_probe;

#define RUN_RECENT 256 /* samples of the progress rate kept */
#define RUN_CHECKPOINT_MINUTES 10.0 /* default of --checkpoint-minutes */
typedef struct run_state {
    /* what was asked */
    char* scene_arg;               /* as given (messages) */
    char* scene_path;              /* absolute */
    uint64_t scene_hash;
    dvi_scene_overrides overrides; /* solver/method point into ov_solver/ov_method */
    char* ov_solver;
    char* ov_method;
    char* ov_friction;
    char nonunique_text[400];      /* the Coulomb check's first finding, for the warnings ("" after a resume) */
    char* out_dir;
    char* checkpoint_dir;
    char* vtk_dir;
    int64_t vtk_every;             /* 0: no frames */
    int64_t checkpoint_every;      /* 0: none by steps */
    double checkpoint_minutes;     /* a checkpoint after this much wall time since the last (0: none) */
    int64_t contacts_every;        /* contacts.csv: every contact every K steps (0: none) */
    bool vtk_ascii;                /* VTK arrays as text (--vtk-ascii), else base64 binary */
    FILE* contacts;
    char* contacts_path;
    double last_checkpoint;        /* wall time of the last checkpoint (or the start) */
    int64_t log_every;             /* 0: automatic */
    bool quiet;
    bool strict;                   /* --strict: health warnings fail the run */
    bool resumed;
    uint32_t health_seen;          /* health kinds already reported on stderr */

    /* the model */
    dvi_scene* scene;
    dvi_model* model;              /* one process */
    dvi_dist* dist;                /* over MPI ranks (mpirun -n N dvi run): this rank's part; model NULL */
    int rank, ranks;               /* 0 and 1 on one process */
    bool mpi;                      /* over MPI ranks (dist; one rank included, when resuming such a run) */
    dvi_dist_stats dist_stats;     /* over ranks: of the last step */
    uint64_t state_hash;           /* at the end: dvi_world_state_hash (or dvi_dist_state_hash); 0 before */
    dvi_scene_settings settings;
    int64_t step;                  /* steps since t = 0 */
    int64_t start_step;            /* step at the start of this invocation */
    int64_t target_steps;          /* the run ends after this step */
    int64_t interrupt_parent_step; /* test hook (DVI_RUN_INTERRUPT_PARENT_AT_STEP): at this step,
                                    * SIGINT to the parent process (`dvi study`, as from a Ctrl-C)
                                    * and a stop, as the study's SIGINT would make; 0: none */

    /* probes */
    int32_t probe_count;
    run_probe* probes;
    double* row;                   /* [max columns] */

    /* VTK frames: frame i at step i·vtk_every */
    int32_t frame_count, frame_capacity;
    double* frame_times;
    int32_t pvd_frames;            /* frames listed in the last .pvd written */

    /* checkpoint */
    char* state_file;              /* base name of the blob run.json refers to */

    /* bodies checked for non-finite values after each step */
    dvi_body_id* moving;
    int32_t moving_count;

    run_stats stats;
    dvi_step_stats last;           /* of the last step */

    /* progress */
    bool tty;
    double wall_start;
    double last_print;
    int64_t last_print_step;
    bool progress_shown;           /* a \r line is on the terminal */
    double stats_seconds_at_start; /* stats.seconds_step when this invocation started */
    /* (wall time, step, step seconds) at most every RECENT_EVERY s: the ETA and the
     * step time of the progress line come from the last RECENT_WINDOW s of them */
    double recent_wall[RUN_RECENT], recent_step_s[RUN_RECENT];
    int64_t recent_step[RUN_RECENT];
    int recent_count, recent_next;

    /* outcome */
    bool failed;
    char error[1024];
    char size_limit[1024]; /* the write that crossed the file-size limit (SIGXFSZ), or "" */
} run_state;

/* dvi_checkpoint.c */
/* Flushes the CSVs, writes the state blob and checkpoint/run.json
 * atomically (blob first, then run.json naming it), removes older blobs.
 * Non-zero on failure (message in msg). */
int run_write_checkpoint(run_state* rs, char* msg, size_t msg_size);
/* Reads DIR/checkpoint/run.json into rs (scene path, overrides, options,
 * step, probe rows, frames, statistics). rows[] receives the saved row count
 * of each probe, in the order of names[] (both malloc'd, probe_count long).
 * Returns 0, or non-zero with the message in msg. */
typedef struct run_resume_info {
    int32_t probe_count;
    char** probe_names;
    long long* probe_rows;
    int32_t* probe_columns;
    char* state_file;
    uint64_t state_hash;
    long long state_size;
    int64_t step;
    double duration;               /* the run's end time when saved */
    int32_t state_ranks;           /* > 0: written over this many MPI ranks (state_file a ranks-STEP directory) */
} run_resume_info;
/* Whether DIR/checkpoint/run.json is of a run over MPI ranks (false when
 * absent or unreadable: the resume then says why). */
bool run_checkpoint_over_ranks(const char* out_dir);
int run_read_checkpoint(run_state* rs, run_resume_info* info, char* msg, size_t msg_size);
void run_resume_info_free(run_resume_info* info);
/* Removes DIR/checkpoint/run.json and every state-*.bin in it except `keep`
 * (NULL: all). */
void run_remove_checkpoint_files(const char* checkpoint_dir, const char* keep, bool run_json);

/* dvi_run.c */
/* Writes DIR/summary.json. status: "running", "finished", "interrupted", "failed". */
int run_write_summary(run_state* rs, const char* status, char* msg, size_t msg_size);
/* Re-plots every probe's SVG from its CSV. */
int run_plot_all(run_state* rs, char* msg, size_t msg_size);

#endif /* DVI_TOOL_RUN_H */
