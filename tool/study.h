/* Step-size studies: the judging, the table (CSV + JSON), the "largest
 * acceptable step and its cost" summary and the plots that `dvi study`
 * (tool/dvi_study.c) writes for any scene, and that bench/bench_dvi_vs_dem.c
 * uses for its own built-in scenes. docs/study.md describes the criteria. */
#ifndef DVI_TOOL_STUDY_H
#define DVI_TOOL_STUDY_H

#include <dvi/base.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* A run's outcome before judging. */
typedef enum study_status {
    STUDY_STABLE = 0,   /* finished, and the health monitor raised nothing that makes it unstable */
    STUDY_UNSTABLE = 1, /* failed (blow-up, error) or raised energy / escape / joint */
    STUDY_NOT_RUN = 2   /* could not be started or read (the reason says why) */
} study_status;

/* One run of a study: a method (and Young's modulus) at one step. */
typedef struct study_run {
    char method[32];          /* "dvi", "dem" (the bench: "dvi-apgd", "dem-hertz", ...) */
    double dt;                /* s */
    double young_modulus;     /* Pa; NaN: not applicable (DVI) or the scene's own */
    study_status status;
    char reason[512];         /* why unstable, not run, or not acceptable; "" when acceptable */
    double max_penetration;   /* m: largest penetration (DEM: overlap) of any contact */
    double penetration_fraction; /* of the smallest shape's size */
    long long not_converged_steps; /* steps whose solve did not converge (summary.json); 0 for DEM */
    double observable;        /* NaN: none named or not available */
    double error;             /* |observable − reference| (relative: / |reference|); NaN: none */
    double wall_seconds;      /* of the run */
    double cpu_seconds;       /* CPU time of the run's process (user + system); NaN: not measured */
    double simulated_seconds;
    bool acceptable;
    bool reference;           /* the finest stable run of its series: the observable's reference */
} study_run;

/* What makes a run acceptable. */
typedef struct study_criteria {
    double overlap_fraction;  /* penetration / overlap below this fraction of the smallest shape */
    bool have_observable;
    double tolerance;         /* on the observable's difference to the finest run of the series */
    bool relative;            /* tolerance relative to |reference| (else absolute) */
} study_criteria;

/* Runs of one method and Young's modulus are a series. */
bool study_same_series(const study_run* a, const study_run* b);
/* "dvi", "dem E=1e+08 Pa" */
void study_series_name(const study_run* r, char* out, size_t size);

/* Judges every run: stable, every step's solve converged, penetration_fraction
 * < overlap_fraction, and (with an observable) |observable − reference|
 * within the tolerance, the reference being the observable of the finest
 * (smallest dt) stable run of the same series whose steps all converged
 * (marked `reference`). Sets error, acceptable and reason. */
void study_judge(const study_criteria* c, study_run* runs, int n);

/* Index of the largest acceptable step of a ladder: the largest dt whose run
 * is acceptable and every run of a smaller dt in the ladder is too (a
 * ladder that passes at dt but fails below it has not converged there).
 * dt[i], ok[i]: the ladder's runs in any order. -1: none. */
int study_largest_acceptable(const double* dt, const bool* ok, int n);

/* The summary row of a series: its largest acceptable step (index into runs, -1: none). */
typedef struct study_best {
    int first;                /* a run of the series (its method and E) */
    int best;                 /* -1: no acceptable step */
} study_best;
/* Fills best[] (one per series, in the order the series first appear);
 * returns the number of series. best has room for n entries. */
int study_summarise(const study_run* runs, int n, study_best* best);

/* A method's ladder of steps as the study chose it. */
typedef struct study_ladder {
    const char* method;
    const double* dts;        /* s, largest first */
    int count;
    const char* origin;       /* where it comes from: "study.dts.dvi", "--dts-dem", "default: ..." */
} study_ladder;

/* Context of the table: what was studied and how. */
typedef struct study_table_info {
    const char* scene;        /* the scene file */
    const char* scene_name;
    const char* observable;   /* "probe.column at 1.5 s", "... mean over [1, 1.5] s" or NULL */
    const study_criteria* criteria;
    double duration;          /* s */
    const study_ladder* ladders; /* may be NULL: no "ladders" in the JSON */
    int ladder_count;
} study_table_info;

/* The table, one row per run: method, dt, young_modulus, status, reason,
 * max_penetration, penetration_fraction, observable, error, wall_seconds,
 * wall_per_simulated_second, cpu_seconds, cpu_per_simulated_second,
 * acceptable. Written atomically. 0 or -1 (msg). */
dvi_status study_write_csv(const char* path, const study_run* runs, int n, char* msg, size_t msg_size);
/* {"scene", "criteria", "ladders": [{"method", "dts", "origin"}] (when given), "runs": [rows as the
 * CSV], "largest_acceptable": [one per series]} */
dvi_status study_write_json(const char* path, const study_table_info* info, const study_run* runs, int n, char* msg,
                            size_t msg_size);
/* Error against wall time per simulated second (log axes), one series per
 * method / E, the tolerance dashed; the same against CPU time; and the
 * penetration fraction against dt. Filled markers: acceptable runs. */
dvi_status study_write_svg(const char* path, const study_table_info* info, const study_run* runs, int n, char* msg,
                           size_t msg_size);
/* The summary as text lines on f ("dvi: largest acceptable step 4e-03 s, 12.3 s per simulated second"). */
void study_print_summary(FILE* f, const study_run* runs, int n);

#endif /* DVI_TOOL_STUDY_H */
