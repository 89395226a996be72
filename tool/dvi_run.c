/* `dvi run`: simulate a scene file, or continue a run from its checkpoint.
 *
 * Setup (fresh run): load the scene, apply the command-line overrides, build
 * the model, open one CSV per probe and write the t = 0 row, VTK frame 0.
 * Setup (--resume DIR): read DIR/checkpoint/run.json, load the same scene
 * with the same overrides, build the model, load the state blob, reopen the
 * CSVs truncated to the saved row counts (dvi_csv_open_resume).
 *
 * The loop: step; account the step's statistics; check the state is finite;
 * sample the due probes; VTK frame every K steps; checkpoint every N steps;
 * progress. Nothing in the loop allocates (row buffer, frame times and body
 * list are sized at setup). A signal sets a flag checked before each step.
 *
 * The end (finished or interrupted): checkpoint, SVG plots, .pvd index,
 * summary.json. On a failure the outputs are written the same way but no
 * checkpoint: the last one stays the last good state. */
#define _XOPEN_SOURCE 700 /* realpath */
#include "dvi_cli.h"
#include "dvi_run.h"
#include "../src/base/regular_file.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- signals --------------------------------------------------------------- */

static volatile sig_atomic_t g_stop_signal = 0;

static void on_stop_signal(int sig)
{
    g_stop_signal = sig;
}

/* SIGINT, SIGTERM and SIGHUP (a closed terminal or ssh session) set the
 * flag; SA_RESETHAND restores the default action, so a second Ctrl-C ends
 * the process at once. SIGXFSZ (a file reached the file-size limit, ulimit
 * -f) stops the run the same way: the write that crossed the limit fails
 * with EFBIG instead of the process dying with "running" in summary.json,
 * and the run ends "interrupted" with its checkpoint (a new file, written
 * while it fits). They are unblocked once the handlers are set: `dvi
 * study` starts its runs with them blocked, so that a stop sent before this
 * point waits here instead of killing the run before it can write anything. */
static void install_signal_handlers(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESETHAND | SA_RESTART;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    sa.sa_flags = SA_RESTART; /* every write past the limit raises it again: keep the handler */
    sigaction(SIGXFSZ, &sa, NULL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGHUP);
    sigaddset(&set, SIGXFSZ);
    sigprocmask(SIG_UNBLOCK, &set, NULL);
}

/* ---- options ----------------------------------------------------------------- */

enum {
    OPT_OUT = 1,
    OPT_DT,
    OPT_SOLVER,
    OPT_METHOD,
    OPT_DURATION,
    OPT_THREADS,
    OPT_VTK_EVERY,
    OPT_CHECKPOINT_EVERY,
    OPT_CHECKPOINT_MINUTES,
    OPT_CONTACTS_EVERY,
    OPT_VTK_ASCII,
    OPT_QUIET,
    OPT_STRICT,
    OPT_LOG_EVERY,
    OPT_RESUME,
    OPT_YOUNG_MODULUS,
    OPT_PROBE_INTERVAL,
    OPT_FRICTION,
    OPT_LEMKE_COULOMB,
    OPT_COUNT
};

static const cli_option run_options[] = {
    {"out", true, OPT_OUT},
    {"dt", true, OPT_DT},
    {"solver", true, OPT_SOLVER},
    {"method", true, OPT_METHOD},
    {"duration", true, OPT_DURATION},
    {"threads", true, OPT_THREADS},
    {"vtk-every", true, OPT_VTK_EVERY},
    {"checkpoint-every", true, OPT_CHECKPOINT_EVERY},
    {"checkpoint-minutes", true, OPT_CHECKPOINT_MINUTES},
    {"contacts-every", true, OPT_CONTACTS_EVERY},
    {"vtk-ascii", false, OPT_VTK_ASCII},
    {"quiet", false, OPT_QUIET},
    {"strict", false, OPT_STRICT},
    {"log-every", true, OPT_LOG_EVERY},
    {"resume", true, OPT_RESUME},
    {"young-modulus", true, OPT_YOUNG_MODULUS},
    {"probe-interval", true, OPT_PROBE_INTERVAL},
    {"friction", true, OPT_FRICTION},
    {"lemke-coulomb", false, OPT_LEMKE_COULOMB},
    {NULL, false, 0},
};

typedef struct run_args {
    const char* scene;
    const char* out;
    const char* resume;
    double dt, duration, young_modulus, probe_interval;
    const char* solver;
    const char* method;
    const char* friction;
    int64_t threads, vtk_every, checkpoint_every, log_every, contacts_every;
    double checkpoint_minutes;
    bool quiet, strict;
    bool given[OPT_COUNT];
} run_args;

static bool known_solver(const char* name)
{
    return dvi_solver_index(name) >= 0;
}

static void solver_list(char* out, size_t size)
{
    out[0] = '\0';
    size_t n = 0;
    for (int32_t i = 0; i < dvi_solver_count() && n < size; i++)
        n += (size_t)snprintf(out + n, size - n, "%s%s", i ? ", " : "", dvi_solver_name(i));
}

/* Returns -1 on success, else the exit status. */
static int parse_run_args(int argc, char** argv, run_args* a)
{
    memset(a, 0, sizeof *a);
    cli_parser p;
    cli_init(&p, argc, argv, "run");
    const char* arg;
    int id;
    while ((id = cli_next(&p, run_options, &arg)) != CLI_END) {
        if (id == CLI_ERROR) return DVI_EXIT_USAGE;
        if (id == CLI_HELP) {
            dvi_print_help("run");
            return DVI_EXIT_OK;
        }
        if (id == CLI_POSITIONAL) {
            if (a->scene) return cli_usage_error("run", "unexpected argument '%s' (one scene file only)", arg);
            a->scene = arg;
            continue;
        }
        a->given[id] = true;
        switch (id) {
        case OPT_OUT:
            if (!*arg) return cli_usage_error("run", "--out: empty directory name");
            a->out = arg;
            break;
        case OPT_RESUME:
            if (!*arg) return cli_usage_error("run", "--resume: empty directory name");
            a->resume = arg;
            break;
        case OPT_DT:
            if (!cli_parse_double("run", "dt", arg, &a->dt)) return DVI_EXIT_USAGE;
            if (!(a->dt > 0)) return cli_usage_error("run", "--dt: must be > 0 (got %s)", arg);
            break;
        case OPT_DURATION:
            if (!cli_parse_double("run", "duration", arg, &a->duration)) return DVI_EXIT_USAGE;
            if (!(a->duration > 0)) return cli_usage_error("run", "--duration: must be > 0 (got %s)", arg);
            break;
        case OPT_YOUNG_MODULUS:
            if (!cli_parse_double("run", "young-modulus", arg, &a->young_modulus)) return DVI_EXIT_USAGE;
            if (!(a->young_modulus > 0) || !isfinite(a->young_modulus))
                return cli_usage_error("run", "--young-modulus: must be > 0 (got %s)", arg);
            break;
        case OPT_PROBE_INTERVAL:
            if (!cli_parse_double("run", "probe-interval", arg, &a->probe_interval)) return DVI_EXIT_USAGE;
            if (!(a->probe_interval > 0) || !isfinite(a->probe_interval))
                return cli_usage_error("run", "--probe-interval: must be > 0 (got %s)", arg);
            break;
        case OPT_SOLVER:
            if (!known_solver(arg)) {
                char names[256];
                solver_list(names, sizeof names);
                return cli_usage_error("run", "--solver: unknown solver '%s' (solvers: %s)", arg, names);
            }
            a->solver = arg;
            break;
        case OPT_METHOD:
            if (strcmp(arg, "dvi") != 0 && strcmp(arg, "dem") != 0)
                return cli_usage_error("run", "--method: must be dvi or dem (got '%s')", arg);
            a->method = arg;
            break;
        case OPT_FRICTION:
            if (strcmp(arg, "ccp") != 0 && strcmp(arg, "coulomb") != 0)
                return cli_usage_error("run", "--friction: must be ccp or coulomb (got '%s')", arg);
            a->friction = arg;
            break;
        case OPT_THREADS:
            if (!cli_parse_int64("run", "threads", arg, 1, 4096, &a->threads)) return DVI_EXIT_USAGE;
            break;
        case OPT_VTK_EVERY:
            if (!cli_parse_int64("run", "vtk-every", arg, 1, INT32_MAX, &a->vtk_every)) return DVI_EXIT_USAGE;
            break;
        case OPT_CHECKPOINT_EVERY:
            if (!cli_parse_int64("run", "checkpoint-every", arg, 1, INT64_MAX, &a->checkpoint_every))
                return DVI_EXIT_USAGE;
            break;
        case OPT_VTK_ASCII: break;     /* a flag: a->given */
        case OPT_LEMKE_COULOMB: break; /* a flag: a->given */
        case OPT_CONTACTS_EVERY:
            if (!cli_parse_int64("run", "contacts-every", arg, 1, INT64_MAX, &a->contacts_every)) return DVI_EXIT_USAGE;
            break;
        case OPT_CHECKPOINT_MINUTES:
            if (!cli_parse_double("run", "checkpoint-minutes", arg, &a->checkpoint_minutes)) return DVI_EXIT_USAGE;
            if (!(a->checkpoint_minutes >= 0) || !isfinite(a->checkpoint_minutes))
                return cli_usage_error("run", "--checkpoint-minutes: must be >= 0 (got %s)", arg);
            break;
        case OPT_LOG_EVERY:
            if (!cli_parse_int64("run", "log-every", arg, 1, INT64_MAX, &a->log_every)) return DVI_EXIT_USAGE;
            break;
        case OPT_QUIET:
            a->quiet = true;
            break;
        case OPT_STRICT:
            a->strict = true;
            break;
        default:
            break;
        }
    }
    if (a->resume) {
        if (a->scene)
            return cli_usage_error("run", "--resume takes the scene from DIR/checkpoint/run.json: no SCENE argument");
        static const struct {
            int id;
            const char* name;
        } fixed[] = {{OPT_OUT, "out"},
                     {OPT_DT, "dt"},
                     {OPT_SOLVER, "solver"},
                     {OPT_METHOD, "method"},
                     {OPT_FRICTION, "friction"},
                     {OPT_LEMKE_COULOMB, "lemke-coulomb"},
                     {OPT_VTK_EVERY, "vtk-every"},
                     {OPT_YOUNG_MODULUS, "young-modulus"},
                     {OPT_PROBE_INTERVAL, "probe-interval"}};
        for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
            if (a->given[fixed[i].id])
                return cli_usage_error("run", "--%s cannot be changed when resuming (the run keeps its settings)",
                                       fixed[i].name);
    } else if (!a->scene) {
        return cli_usage_error("run", "missing SCENE (a scene file), or --resume DIR");
    }
    return -1;
}

/* ---- helpers ------------------------------------------------------------------- */

/* "out/NAME": the scene's name, or the file's base name without extension;
 * characters other than [A-Za-z0-9._-] become '_'. */
static char* default_out_dir(const char* scene_name, const char* scene_path)
{
    char stem[256];
    if (scene_name && *scene_name) {
        snprintf(stem, sizeof stem, "%s", scene_name);
    } else {
        const char* base = strrchr(scene_path, '/');
        base = base ? base + 1 : scene_path;
        snprintf(stem, sizeof stem, "%s", base);
        char* dot = strrchr(stem, '.');
        if (dot && dot != stem) *dot = '\0';
    }
    for (char* c = stem; *c; c++) {
        bool ok = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '.' ||
                  *c == '_' || *c == '-';
        if (!ok) *c = '_';
    }
    if (stem[0] == '\0' || strcmp(stem, ".") == 0 || strcmp(stem, "..") == 0) snprintf(stem, sizeof stem, "scene");
    return cli_path_join("out", stem);
}

/* The run's time: the step count times dt (dvi_model_time). */
static double run_time(const run_state* rs)
{
    if (rs->dist) return (double)dvi_dist_step_count(rs->dist) * rs->settings.dt;
    return dvi_model_time(rs->model);
}

static void run_state_free(run_state* rs)
{
    for (int32_t i = 0; i < rs->probe_count; i++) {
        dvi_csv_close(rs->probes[i].csv);
        free(rs->probes[i].csv_path);
        free(rs->probes[i].svg_path);
        free(rs->probes[i].own_name);
        free(rs->probes[i].own_title);
    }
    dvi_dist_destroy(rs->dist);
    free(rs->probes);
    free(rs->row);
    free(rs->frame_times);
    free(rs->moving);
    free(rs->state_file);
    dvi_model_destroy(rs->model);
    dvi_scene_destroy(rs->scene);
    free(rs->scene_arg);
    free(rs->scene_path);
    free(rs->ov_solver);
    free(rs->ov_method);
    free(rs->ov_friction);
    free(rs->out_dir);
    free(rs->checkpoint_dir);
    free(rs->vtk_dir);
    if (rs->contacts) fclose(rs->contacts);
    free(rs->contacts_path);
    memset(rs, 0, sizeof *rs);
}

static bool valid_file_stem(const char* s)
{
    if (!s || !*s || s[0] == '.') return false;
    for (const char* c = s; *c; c++)
        if (*c == '/' || *c == '\\' || (unsigned char)*c < 32) return false;
    return true;
}

/* Loads the scene (rs->scene_arg / scene_path) and applies rs->overrides.
 * Prints errors; returns -1 or an exit status. */
static int load_scene(run_state* rs)
{
    rs->overrides.solver = rs->ov_solver;
    rs->overrides.method = rs->ov_method;
    rs->overrides.friction = rs->ov_friction;
    int rc = cli_load_scene(rs->scene_arg, &rs->overrides, &rs->scene, NULL);
    if (rc >= 0) return rc;
    rs->settings = dvi_scene_get_settings(rs->scene);
    if (!(rs->settings.dt > 0) || !(rs->settings.duration > 0)) {
        fprintf(stderr, "%s: the run needs dt > 0 and duration > 0 (dt = %g, duration = %g)\n", rs->scene_arg,
                rs->settings.dt, rs->settings.duration);
        return DVI_EXIT_USAGE;
    }
    rs->target_steps = cli_steps_for(rs->settings.duration, rs->settings.dt);
    return -1;
}

/* The probes' descriptions and files, of the model or (over ranks) of the
 * part, whose strings are copied: the part's model changes at rebuilds. */
static int setup_probes(run_state* rs)
{
    rs->probe_count = rs->dist ? dvi_dist_probe_count(rs->dist) : dvi_model_probe_count(rs->model);
    rs->probes = calloc((size_t)(rs->probe_count > 0 ? rs->probe_count : 1), sizeof(run_probe));
    if (!rs->probes) goto nomem;
    int32_t max_columns = 1;
    for (int32_t i = 0; i < rs->probe_count; i++) {
        run_probe* p = &rs->probes[i];
        dvi_status st = rs->dist ? dvi_dist_probe_info(rs->dist, i, &p->info)
                                 : dvi_model_probe_info(rs->model, i, &p->info);
        if (st != DVI_OK || p->info.columns < 1) {
            fprintf(stderr, "%s: probe %d: no description\n", rs->scene_arg, (int)i);
            return DVI_EXIT_USAGE;
        }
        if (!valid_file_stem(p->info.name)) {
            fprintf(stderr, "%s: probes[%d]: name '%s' cannot be used as a file name\n", rs->scene_arg, (int)i,
                    p->info.name ? p->info.name : "");
            return DVI_EXIT_USAGE;
        }
        if (rs->dist) {
            p->own_name = cli_strdup(p->info.name);
            p->own_title = cli_strdup(p->info.title ? p->info.title : p->info.name);
            if (!p->own_name || !p->own_title) goto nomem;
            p->info.name = p->own_name;
            p->info.title = p->own_title;
            p->off = !dvi_dist_probe_available(rs->dist, i);
            if (p->off && rs->rank == 0)
                fprintf(stderr, "dvi run: warning: probe '%s' is not written in a run over MPI ranks (its kind is "
                                "not sampled there: docs/scale.md)\n", p->info.name);
        }
        if (p->info.columns > max_columns) max_columns = p->info.columns;
        char file[300];
        snprintf(file, sizeof file, "%s.csv", p->info.name);
        p->csv_path = cli_path_join(rs->out_dir, file);
        snprintf(file, sizeof file, "%s.svg", p->info.name);
        p->svg_path = cli_path_join(rs->out_dir, file);
        if (!p->csv_path || !p->svg_path) goto nomem;
    }
    rs->row = malloc(sizeof(double) * (size_t)max_columns);
    if (!rs->row) goto nomem;
    return -1;
nomem:
    fprintf(stderr, "dvi run: out of memory\n");
    return DVI_EXIT_FAILED;
}

/* Builds the model (over ranks: this rank's part) and sizes every per-run buffer. */
static int build_model(run_state* rs)
{
    char msg[512] = "";
    if (rs->mpi) {
        dvi_dist_settings ds = dvi_default_dist_settings();
        dvi_status st = dvi_dist_create(rs->scene, &ds, &rs->dist, msg, sizeof msg);
        if (st < 0) {
            fprintf(stderr, "%s: cannot spread the scene over %d MPI ranks: %s\n", rs->scene_arg, rs->ranks,
                    msg[0] ? msg : dvi_status_string(st));
            return st == DVI_ERR_NOMEM ? DVI_EXIT_FAILED : DVI_EXIT_USAGE;
        }
        return setup_probes(rs);
    }
    dvi_status st = dvi_model_create(rs->scene, &rs->model, msg, sizeof msg);
    if (st < 0) {
        fprintf(stderr, "%s: cannot build the model: %s\n", rs->scene_arg, msg[0] ? msg : dvi_status_string(st));
        return st == DVI_ERR_NOMEM ? DVI_EXIT_FAILED : DVI_EXIT_USAGE;
    }
    const dvi_world* w = dvi_model_world_const(rs->model);

    int32_t nb = dvi_world_body_count(w);
    rs->moving = malloc(sizeof(dvi_body_id) * (size_t)(nb > 0 ? nb : 1));
    if (!rs->moving) {
        fprintf(stderr, "dvi run: out of memory\n");
        return DVI_EXIT_FAILED;
    }
    for (int32_t i = 0; i < nb; i++) {
        dvi_body_id id;
        dvi_body_info info;
        if (dvi_world_body_at(w, i, &id) != DVI_OK || dvi_body_get_info(w, id, &info) != DVI_OK) continue;
        if (info.type != DVI_BODY_FIXED) rs->moving[rs->moving_count++] = id;
    }
    return setup_probes(rs);
}

/* Frame storage for every frame the run can still produce. */
static int size_frames(run_state* rs, int32_t existing)
{
    if (rs->vtk_every <= 0) return -1;
    int64_t more = rs->target_steps > rs->step ? (rs->target_steps - rs->step) / rs->vtk_every + 2 : 2;
    int64_t cap = (int64_t)existing + more;
    if (cap > INT32_MAX) {
        fprintf(stderr, "dvi run: --vtk-every %" PRId64 " would write more than %d frames\n", rs->vtk_every,
                INT32_MAX);
        return DVI_EXIT_USAGE;
    }
    double* t = realloc(rs->frame_times, sizeof(double) * (size_t)cap);
    if (!t) {
        fprintf(stderr, "dvi run: out of memory\n");
        return DVI_EXIT_FAILED;
    }
    rs->frame_times = t;
    rs->frame_capacity = (int32_t)cap;
    return -1;
}

static void set_error(run_state* rs, const char* fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static void set_error(run_state* rs, const char* fmt, ...)
{
    if (rs->failed) return; /* keep the first */
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(rs->error, sizeof rs->error, fmt, ap);
    va_end(ap);
    rs->failed = true;
}

/* ---- per-step work -------------------------------------------------------------- */

/* Over ranks: every rank takes part in each due probe's sample (the same
 * probes are due on every rank), rank 0 writes the row. */
static int sample_probes_dist(run_state* rs, bool all)
{
    for (int32_t i = 0; i < rs->probe_count; i++) {
        run_probe* p = &rs->probes[i];
        if (p->off || (!all && !dvi_dist_probe_due(rs->dist, i))) continue;
        dvi_status st = dvi_dist_probe_sample(rs->dist, i, rs->row);
        if (st < 0) {
            set_error(rs, "probe '%s' at step %" PRId64 ": %s", p->info.name, rs->step, dvi_dist_last_error(rs->dist));
            return 1;
        }
        if (p->csv && dvi_csv_write_row(p->csv, rs->row) != 0) set_error(rs, "%s", dvi_csv_last_error(p->csv));
    }
    /* a rank's failed write stops every rank at the same step */
    return dvi_dist_agree_max(rs->failed ? 1 : 0) ? (set_error(rs, "a probe's CSV could not be written"), 1) : 0;
}

static int sample_probes(run_state* rs, bool all)
{
    if (rs->dist) return sample_probes_dist(rs, all);
    for (int32_t i = 0; i < rs->probe_count; i++) {
        if (!all && !dvi_model_probe_due(rs->model, i)) continue;
        run_probe* p = &rs->probes[i];
        dvi_status st = dvi_model_probe_sample(rs->model, i, rs->row);
        if (st < 0) {
            set_error(rs, "probe '%s' at step %" PRId64 ": %s", p->info.name, rs->step, dvi_status_string(st));
            return 1;
        }
        if (dvi_csv_write_row(p->csv, rs->row) != 0) {
            set_error(rs, "%s", dvi_csv_last_error(p->csv));
            return 1;
        }
    }
    return 0;
}

static int write_pvd(run_state* rs)
{
    if (rs->vtk_every <= 0) return 0;
    char msg[512];
    if (rs->dist ? rs->rank == 0 && dvi_dist_write_pvd(rs->vtk_dir, rs->frame_count, rs->frame_times, msg, sizeof msg)
                 : dvi_vtk_write_pvd(rs->vtk_dir, rs->frame_count, rs->frame_times, msg, sizeof msg) != 0) {
        set_error(rs, "%s", msg);
        return 1;
    }
    rs->pvd_frames = rs->frame_count;
    return 0;
}

static int write_frame(run_state* rs)
{
    char msg[512];
    if (rs->frame_count >= rs->frame_capacity) { /* cannot happen: sized at setup */
        set_error(rs, "internal: VTK frame storage exhausted");
        return 1;
    }
    if (rs->dist) {
        if (dvi_dist_write_vtk(rs->dist, rs->vtk_dir, rs->frame_count, rs->vtk_ascii) != DVI_OK) {
            set_error(rs, "%s", dvi_dist_last_error(rs->dist));
            return 1;
        }
    } else if (dvi_vtk_write_frame_ex(dvi_model_world_const(rs->model), rs->vtk_dir, rs->frame_count, rs->vtk_ascii,
                                      msg, sizeof msg) != 0) {
        set_error(rs, "%s", msg);
        return 1;
    }
    rs->frame_times[rs->frame_count++] = run_time(rs);
    /* The index lists every frame, so rewriting it after each frame would cost
     * O(frames²) over a run: rewrite it when the frame count has grown by 1/8
     * (and at checkpoints and at the end). */
    if ((int64_t)(rs->frame_count - rs->pvd_frames) * 8 >= rs->pvd_frames) return write_pvd(rs);
    return 0;
}

static bool state_finite(const run_state* rs, int32_t* bad)
{
    const dvi_world* w = dvi_model_world_const(rs->model);
    for (int32_t i = 0; i < rs->moving_count; i++) {
        double x[3], v[3], om[3];
        if (dvi_body_get_position(w, rs->moving[i], x) != DVI_OK ||
            dvi_body_get_velocity(w, rs->moving[i], v) != DVI_OK ||
            dvi_body_get_angular_velocity(w, rs->moving[i], om) != DVI_OK)
            continue;
        for (int k = 0; k < 3; k++) {
            if (!isfinite(x[k]) || !isfinite(v[k]) || !isfinite(om[k])) {
                *bad = rs->moving[i].index1 - 1;
                return false;
            }
        }
    }
    return isfinite(run_time(rs));
}

static void account_step(run_state* rs, dvi_status st, const dvi_step_stats* s, double seconds)
{
    run_stats* a = &rs->stats;
    a->steps++;
    a->iterations_sum += s->iterations;
    if (s->iterations > a->iterations_max) a->iterations_max = s->iterations;
    if (!(s->residual <= a->residual_max)) a->residual_max = s->residual; /* NaN sticks */
    if (st == DVI_NOT_CONVERGED) {
        a->not_converged++;
        if (a->first_not_converged == 0) a->first_not_converged = rs->step;
    }
    if (s->warm_start_rejected) a->warm_starts_rejected++;
    if (s->coulomb_checked) a->coulomb_checked++;
    if (s->coulomb_nonunique) {
        a->nonunique++;
        if (a->first_nonunique == 0) a->first_nonunique = rs->step;
    }
    if (s->joint_rows_dropped > 0) a->joint_dropped_steps++;
    if (s->joint_rows_dropped > a->joint_dropped_max) a->joint_dropped_max = s->joint_rows_dropped;
    if (s->joint_residual > rs->settings.solver_settings.tolerance) a->joint_residual_steps++;
    if (s->joint_residual > a->joint_residual_max) a->joint_residual_max = s->joint_residual;
    a->seconds_collide += s->seconds_collide;
    a->seconds_assemble += s->seconds_assemble;
    a->seconds_solve += s->seconds_solve;
    a->seconds_integrate += s->seconds_integrate;
    a->seconds_report += s->seconds_report;
    a->seconds_step += seconds;
    if (s->max_penetration > a->max_penetration) {
        a->max_penetration = s->max_penetration;
        a->max_penetration_step = rs->step;
    }
    if (s->max_joint_violation > a->max_joint_violation) {
        a->max_joint_violation = s->max_joint_violation;
        a->max_joint_violation_step = rs->step;
    }
    if (s->ccp_hover > a->max_ccp_hover) {
        a->max_ccp_hover = s->ccp_hover;
        a->max_ccp_hover_step = rs->step;
    }
    a->ccp_hover_work += s->ccp_hover_work;
    if (s->contacts > a->contacts_max) a->contacts_max = s->contacts;
}

/* ---- progress -------------------------------------------------------------------- */

#define RECENT_EVERY 0.25 /* s of wall time between samples of the rate */
#define RECENT_WINDOW 60.0 /* s of wall time the rate is taken over */

/* Keeps (now, step, step seconds so far), at most every RECENT_EVERY s. */
static void recent_sample(run_state* rs, double now)
{
    if (rs->recent_count > 0) {
        const int last = (rs->recent_next + RUN_RECENT - 1) % RUN_RECENT;
        if (now - rs->recent_wall[last] < RECENT_EVERY || rs->recent_step[last] == rs->step) return;
    }
    rs->recent_wall[rs->recent_next] = now;
    rs->recent_step[rs->recent_next] = rs->step;
    rs->recent_step_s[rs->recent_next] = rs->stats.seconds_step;
    rs->recent_next = (rs->recent_next + 1) % RUN_RECENT;
    if (rs->recent_count < RUN_RECENT) rs->recent_count++;
}

/* The oldest sample of the last RECENT_WINDOW s (else the newest older
 * one), or -1: the rate of the recent steps, so that the ETA follows steps
 * that get dearer (a pile as it fills) instead of the mean since the start. */
static int recent_base(const run_state* rs, double now)
{
    int base = -1;
    for (int k = 0; k < rs->recent_count; k++) {
        const int i = (rs->recent_next + RUN_RECENT - 1 - k) % RUN_RECENT; /* newest first */
        if (rs->recent_step[i] >= rs->step) continue;
        base = i;
        if (now - rs->recent_wall[i] > RECENT_WINDOW) break;
    }
    return base;
}

static void format_progress(const run_state* rs, double now, char* line, size_t size)
{
    double elapsed = now - rs->wall_start;
    int64_t done = rs->step - rs->start_step;
    int64_t left = rs->target_steps > rs->step ? rs->target_steps - rs->step : 0;
    char wall[32], eta[32], per_step[32];
    cli_format_seconds(elapsed, wall, sizeof wall);
    /* the recent steps' wall time (outputs included) for the ETA, their step
     * time (outputs not included) for the line; the run's means until a
     * sample is RECENT_EVERY s old */
    const int base = recent_base(rs, now);
    double wall_per_step = done > 0 ? elapsed / (double)done : NAN;
    double step_s = done > 0 ? (rs->stats.seconds_step - rs->stats_seconds_at_start) / (double)done : 0.0;
    if (base >= 0) {
        const double n = (double)(rs->step - rs->recent_step[base]);
        wall_per_step = (now - rs->recent_wall[base]) / n;
        step_s = (rs->stats.seconds_step - rs->recent_step_s[base]) / n;
    }
    if (done > 0)
        cli_format_seconds(wall_per_step * (double)left, eta, sizeof eta);
    else
        snprintf(eta, sizeof eta, "?");
    cli_format_step_time(step_s, per_step, sizeof per_step);
    int warned = 0;
    for (int k = 0; k < DVI_HEALTH_KINDS; k++)
        if (rs->health_seen & (1u << k)) warned++;
    char health[48] = "";
    if (warned > 0) snprintf(health, sizeof health, "  health: %d warning%s", warned, warned == 1 ? "" : "s");
    snprintf(line, size,
             "step %" PRId64 "/%" PRId64 "  t %.6g/%.6g s  wall %s  ETA %s  contacts %d  iter %d  residual %.2e"
             "  %s/step%s",
             rs->step, rs->target_steps, run_time(rs), rs->settings.duration, wall, eta,
             (int)rs->last.contacts, (int)rs->last.iterations, rs->last.residual, per_step, health);
}

static void progress(run_state* rs, bool final)
{
    if (rs->quiet) return;
    double now = cli_now();
    recent_sample(rs, now);
    char line[512];
    if (rs->tty) {
        if (!final && now - rs->last_print < 0.1) return;
        format_progress(rs, now, line, sizeof line);
        fprintf(stderr, "\r%s\033[K", line);
        if (final) {
            fputc('\n', stderr);
            rs->progress_shown = false;
        } else {
            rs->progress_shown = true;
        }
        fflush(stderr);
    } else {
        if (!final && rs->step % rs->log_every != 0) return;
        if (final && rs->last_print_step == rs->step) return;
        format_progress(rs, now, line, sizeof line);
        fprintf(stderr, "%s\n", line);
    }
    rs->last_print = now;
    rs->last_print_step = rs->step;
}

/* Ends a \r progress line before other messages. */
static void progress_break(run_state* rs)
{
    if (rs->progress_shown) {
        fputc('\n', stderr);
        rs->progress_shown = false;
    }
}

/* ---- outputs ---------------------------------------------------------------------- */

int run_plot_all(run_state* rs, char* msg, size_t msg_size)
{
    int rc = 0;
    for (int32_t i = 0; i < rs->probe_count; i++) {
        run_probe* p = &rs->probes[i];
        if (p->off) continue;
        char m[512];
        const char* title = p->info.title && *p->info.title ? p->info.title : p->info.name;
        if (dvi_svg_plot_csv(p->csv_path, p->svg_path, title, m, sizeof m) != 0 && rc == 0) {
            snprintf(msg, msg_size, "%s", m);
            rc = 1;
        }
    }
    return rc;
}

static void json_overrides(dvi_json_writer* w, const dvi_scene_overrides* o)
{
    dvi_json_begin_object(w);
    if (o->dt > 0) dvi_json_key_number(w, "dt", o->dt);
    if (o->duration > 0) dvi_json_key_number(w, "duration", o->duration);
    if (o->solver) dvi_json_key_string(w, "solver", o->solver);
    if (o->method) dvi_json_key_string(w, "method", o->method);
    if (o->friction) dvi_json_key_string(w, "friction", o->friction);
    if (o->threads > 0) dvi_json_key_int(w, "threads", o->threads);
    if (o->young_modulus > 0) dvi_json_key_number(w, "young_modulus", o->young_modulus);
    if (o->probe_interval > 0) dvi_json_key_number(w, "probe_interval", o->probe_interval);
    dvi_json_end_object(w);
}

int run_write_summary(run_state* rs, const char* status, char* msg, size_t msg_size)
{
    const run_stats* a = &rs->stats;
    double now = cli_now();
    dvi_json_writer* w = NULL;
    if (dvi_json_writer_open_buffer(&w) != 0) {
        snprintf(msg, msg_size, "summary.json: out of memory");
        return 1;
    }
    dvi_json_begin_object(w);
    dvi_json_key_string(w, "dvi_version", dvi_version_string());
    dvi_json_key_string(w, "scene", rs->scene_path);
    dvi_json_key_string(w, "scene_name", rs->settings.name ? rs->settings.name : "");
    dvi_json_key_string(w, "status", status);
    dvi_json_key_bool(w, "interrupted", strcmp(status, "interrupted") == 0);
    dvi_json_key_string(w, "error", rs->failed ? rs->error : NULL);

    dvi_json_key(w, "settings");
    dvi_json_begin_object(w);
    dvi_json_key_string(w, "method", rs->settings.method);
    dvi_json_key_string(w, "solver", rs->settings.solver);
    dvi_json_key_number(w, "dt", rs->settings.dt);
    dvi_json_key_number(w, "duration", rs->settings.duration);
    dvi_json_key_int(w, "steps", rs->target_steps);
    dvi_json_key_number(w, "tolerance", rs->settings.solver_settings.tolerance);
    dvi_json_key_number(w, "block_tolerance", rs->settings.solver_settings.block_tolerance);
    dvi_json_key_int(w, "max_iterations", rs->settings.solver_settings.max_iterations);
    dvi_json_key_int(w, "threads", rs->settings.threads);
    dvi_json_key_int(w, "vtk_every", rs->vtk_every);
    dvi_json_key_int(w, "checkpoint_every", rs->checkpoint_every);
    dvi_json_key_number(w, "checkpoint_minutes", rs->checkpoint_minutes);
    dvi_json_key_int(w, "contacts_every", rs->contacts_every);
    dvi_json_end_object(w);
    dvi_json_key(w, "overrides");
    json_overrides(w, &rs->overrides);

    dvi_json_key_int(w, "steps", rs->step);
    dvi_json_key_number(w, "simulated_time", run_time(rs));
    dvi_json_key_number(w, "wall_seconds", a->wall_seconds + (now - rs->wall_start));
    dvi_json_key_number(w, "wall_seconds_this_run", now - rs->wall_start);
    dvi_json_key_int(w, "runs", a->invocations);
    if (rs->state_hash) { /* at the end: dvi_world_state_hash, the same over any number of ranks */
        char hex[24];
        snprintf(hex, sizeof hex, "%016" PRIx64, rs->state_hash);
        dvi_json_key_string(w, "state_hash", hex);
    }
    if (rs->dist) {
        dvi_json_key(w, "mpi");
        dvi_json_begin_object(w);
        dvi_json_key_int(w, "ranks", rs->ranks);
        dvi_json_key_int(w, "bodies", rs->dist_stats.bodies);
        dvi_json_key_int(w, "rank0_owned", rs->dist_stats.owned);
        dvi_json_key_int(w, "rank0_ghosts", rs->dist_stats.ghosts);
        dvi_json_key_int(w, "rebuilds", rs->dist_stats.rebuilds);
        dvi_json_key_int(w, "rebalances", rs->dist_stats.rebalances);
        dvi_json_key_number(w, "imbalance", rs->dist_stats.imbalance);
        dvi_json_key_number(w, "rank0_seconds_comm_last_step", rs->dist_stats.seconds_comm);
        dvi_json_end_object(w);
    }
    if (rs->resumed)
        dvi_json_key_int(w, "resumed_from_step", rs->start_step);
    else {
        dvi_json_key(w, "resumed_from_step");
        dvi_json_null(w);
    }

    dvi_json_key(w, "timings");
    dvi_json_begin_object(w);
    dvi_json_key_number(w, "collide", a->seconds_collide);
    dvi_json_key_number(w, "assemble", a->seconds_assemble);
    dvi_json_key_number(w, "solve", a->seconds_solve);
    dvi_json_key_number(w, "integrate", a->seconds_integrate);
    dvi_json_key_number(w, "report", a->seconds_report);
    dvi_json_key_number(w, "step", a->seconds_step);
    dvi_json_end_object(w);

    dvi_json_key(w, "solver");
    dvi_json_begin_object(w);
    dvi_json_key_number(w, "iterations_mean", a->steps > 0 ? (double)a->iterations_sum / (double)a->steps : 0.0);
    dvi_json_key_int(w, "iterations_max", a->iterations_max);
    dvi_json_key_number(w, "residual_max", a->residual_max);
    dvi_json_key_int(w, "not_converged_steps", a->not_converged);
    dvi_json_key_int(w, "warm_starts_rejected", a->warm_starts_rejected);
    dvi_json_key_int(w, "coulomb_checked_steps", a->coulomb_checked);
    dvi_json_key_int(w, "nonunique_steps", a->nonunique);
    dvi_json_key_int(w, "joint_rows_dropped_steps", a->joint_dropped_steps);
    dvi_json_key_int(w, "joint_rows_dropped_max", a->joint_dropped_max);
    dvi_json_key_int(w, "joint_residual_steps", a->joint_residual_steps);
    dvi_json_key_number(w, "joint_residual_max", a->joint_residual_max);
    if (a->first_not_converged > 0)
        dvi_json_key_int(w, "first_not_converged_step", a->first_not_converged);
    else {
        dvi_json_key(w, "first_not_converged_step");
        dvi_json_null(w);
    }
    dvi_json_end_object(w);

    dvi_json_key_int(w, "contacts_max", a->contacts_max);
    dvi_json_key_number(w, "max_penetration", a->max_penetration);
    dvi_json_key_int(w, "max_penetration_step", a->max_penetration_step);
    dvi_json_key_number(w, "max_joint_violation", a->max_joint_violation);
    dvi_json_key_int(w, "max_joint_violation_step", a->max_joint_violation_step);
    dvi_json_key_number(w, "max_ccp_hover", a->max_ccp_hover);
    dvi_json_key_int(w, "max_ccp_hover_step", a->max_ccp_hover_step);
    dvi_json_key_number(w, "ccp_hover_work", a->ccp_hover_work);

    dvi_json_key(w, "probes");
    dvi_json_begin_array(w);
    for (int32_t i = 0; i < rs->probe_count; i++) {
        const run_probe* p = &rs->probes[i];
        if (p->off) continue;
        dvi_json_begin_object(w);
        dvi_json_key_string(w, "name", p->info.name);
        dvi_json_key_string(w, "title", p->info.title);
        char file[300];
        snprintf(file, sizeof file, "%s.csv", p->info.name);
        dvi_json_key_string(w, "csv", file);
        snprintf(file, sizeof file, "%s.svg", p->info.name);
        dvi_json_key_string(w, "svg", file);
        dvi_json_key_int(w, "every", p->info.every);
        dvi_json_key_number(w, "interval", p->info.interval > 0 ? p->info.interval : NAN); /* null: by steps */
        dvi_json_key_int(w, "columns", p->info.columns);
        dvi_json_key_int(w, "rows", p->csv ? dvi_csv_rows(p->csv) : 0);
        dvi_json_end_object(w);
    }
    dvi_json_end_array(w);

    dvi_json_key(w, "vtk");
    if (rs->vtk_every > 0) {
        dvi_json_begin_object(w);
        dvi_json_key_int(w, "every", rs->vtk_every);
        dvi_json_key_int(w, "frames", rs->frame_count);
        dvi_json_key_string(w, "bodies", "vtk/bodies.pvd");
        dvi_json_key_string(w, "contacts", "vtk/contacts.pvd");
        dvi_json_key_string(w, "shapes", "vtk/shapes.pvd");
        dvi_json_key_string(w, "static", "vtk/static.vtp");
        dvi_json_end_object(w);
    } else {
        dvi_json_null(w);
    }

    dvi_json_key(w, "checkpoint");
    if (rs->state_file) {
        dvi_json_begin_object(w);
        dvi_json_key_string(w, "run", "checkpoint/run.json");
        char file[300];
        snprintf(file, sizeof file, "checkpoint/%s", rs->state_file);
        dvi_json_key_string(w, "state", file);
        dvi_json_end_object(w);
    } else {
        dvi_json_null(w);
    }

    static const char* const HEALTH_NAMES[DVI_HEALTH_KINDS] = {"energy", "escape", "penetration", "joint",
                                                                "blowup", "chatter", "audit",  "hover"};
    dvi_health_report hr;
    memset(&hr, 0, sizeof hr);
    dvi_model_health(rs->model, &hr);
    dvi_health_settings hs = rs->settings.health;
    dvi_json_key(w, "health");
    dvi_json_begin_object(w);
    dvi_json_key_bool(w, "enabled", hs.enabled && rs->model != NULL); /* over ranks: not run */
    dvi_json_key(w, "raised");
    dvi_json_begin_array(w);
    for (int k = 0; k < DVI_HEALTH_KINDS; k++)
        if (hr.raised & (1u << k)) dvi_json_string(w, HEALTH_NAMES[k]);
    dvi_json_end_array(w);
    dvi_json_key_number(w, "energy_excess", hr.energy_excess);
    dvi_json_key_number(w, "energy_scale_j", hr.energy_scale);
    dvi_json_key_number(w, "work_in_j", hr.work_in);
    dvi_json_key(w, "audit");
    dvi_json_begin_object(w);
    dvi_json_key_number(w, "energy_change_j", hr.energy_change);
    dvi_json_key_number(w, "work_in_j", hr.work_in);
    dvi_json_key_number(w, "dissipated_contacts_j", hr.dissipated_contacts);
    dvi_json_key_number(w, "dissipated_joints_j", hr.dissipated_joints);
    dvi_json_key_number(w, "error_j", hr.audit_error);
    dvi_json_key_number(w, "error_relative", hr.audit_error / (hr.energy_scale > 1e-300 ? hr.energy_scale : 1e-300));
    dvi_json_key_number(w, "worst_relative", hr.audit_worst);
    dvi_json_end_object(w);
    dvi_json_key_int(w, "escaped_bodies", hr.escaped);
    dvi_json_key_number(w, "worst_penetration", hr.worst_penetration);
    dvi_json_key_number(w, "worst_joint", hr.worst_joint);
    dvi_json_key_number(w, "hover_worst_envelope", hr.hover_worst);
    dvi_json_key_number(w, "hover_work_worst", hr.hover_work_worst);
    dvi_json_key(w, "thresholds");
    dvi_json_begin_object(w);
    dvi_json_key_number(w, "energy_growth", hs.energy_growth);
    dvi_json_key_number(w, "blowup_factor", hs.blowup_factor);
    dvi_json_key_number(w, "region_margin", hs.region_margin);
    dvi_json_key_number(w, "penetration_fraction", hs.penetration_fraction);
    dvi_json_key_number(w, "joint_fraction", hs.joint_fraction);
    dvi_json_key_number(w, "audit_fraction", hs.audit_fraction);
    dvi_json_key_number(w, "hover_envelope_fraction", hs.hover_envelope_fraction);
    dvi_json_key_number(w, "hover_work_fraction", hs.hover_work_fraction);
    dvi_json_end_object(w);
    dvi_json_key(w, "first");
    dvi_json_begin_object(w);
    for (int k = 0; k < DVI_HEALTH_KINDS; k++) {
        if (!(hr.raised & (1u << k))) continue;
        dvi_json_key(w, HEALTH_NAMES[k]);
        dvi_json_begin_object(w);
        dvi_json_key_int(w, "step", hr.first_step[k]);
        dvi_json_key_string(w, "message", hr.first[k]);
        dvi_json_end_object(w);
    }
    dvi_json_end_object(w);
    dvi_json_end_object(w);

    dvi_json_key(w, "warnings");
    dvi_json_begin_array(w);
    for (int k = 0; k < DVI_HEALTH_KINDS; k++)
        if (hr.raised & (1u << k)) dvi_json_string(w, hr.first[k]);
    char text[512];
    if (a->not_converged > 0) {
        snprintf(text, sizeof text,
                 "%" PRId64 " of %" PRId64 " steps did not converge (largest CCP residual %.3g, tolerance %.3g; "
                 "first at step %" PRId64 ")",
                 a->not_converged, a->steps, a->residual_max, rs->settings.solver_settings.tolerance,
                 a->first_not_converged);
        dvi_json_string(w, text);
    }
    if (a->joint_residual_steps > 0) {
        snprintf(text, sizeof text,
                 "%" PRId64 " of %" PRId64 " steps: the direct joint solve left a joint residual above the tolerance "
                 "(largest %.3g relative, tolerance %.3g; nearly singular rows, docs/world.md)",
                 a->joint_residual_steps, a->steps, a->joint_residual_max, rs->settings.solver_settings.tolerance);
        dvi_json_string(w, text);
    }
    if (a->nonunique > 0) {
        snprintf(text, sizeof text, "%" PRId64 " of %" PRId64 " steps had several solutions under Coulomb's law%s%s",
                 a->nonunique, a->steps, rs->nonunique_text[0] ? "; the first: " : "", rs->nonunique_text);
        dvi_json_string(w, text);
    }
    if (rs->probe_count == 0) dvi_json_string(w, "the scene has no probes: no CSV time series were written");
    if (strcmp(status, "interrupted") == 0) {
        snprintf(text, sizeof text, "interrupted at step %" PRId64 " of %" PRId64 "; continue with: dvi run --resume %s",
                 rs->step, rs->target_steps, rs->out_dir);
        dvi_json_string(w, text);
    }
    if (rs->failed) {
        snprintf(text, sizeof text, "the run stopped early: %.480s", rs->error);
        dvi_json_string(w, text);
    }
    dvi_json_end_array(w);
    dvi_json_end_object(w);

    int rc = 0;
    char m[512];
    if (dvi_json_writer_finish(w, m, sizeof m) != 0) {
        snprintf(msg, msg_size, "summary.json: %s", m);
        rc = 1;
    } else {
        size_t n = 0;
        const char* text_out = dvi_json_writer_buffer(w, &n);
        char* path = cli_path_join(rs->out_dir, "summary.json");
        if (!path || dvi_write_file_atomic(path, text_out, n, m, sizeof m) != 0) {
            snprintf(msg, msg_size, "%s", path ? m : "summary.json: out of memory");
            rc = 1;
        }
        free(path);
    }
    dvi_json_writer_free(w);
    return rc;
}

/* ---- contacts.csv: every contact of the step, every contacts_every steps ---- */

static const char CONTACTS_HEADER[] = "step,time [s],body_a,body_b,x [m],y [m],z [m],nx [1],ny [1],nz [1],gap [m],"
                                      "f_n [N],f_t [N],fx [N],fy [N],fz [N]\n";

/* A CSV cell: the text, quoted when it holds a comma, a quote or a line break. */
static void csv_text_cell(FILE* f, const char* s)
{
    if (!strpbrk(s, ",\"\n\r")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"') fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

/* The rows of the last step's contacts: the two bodies by the scene's names,
 * the point, the normal (from a to b), the gap at collision time, and the
 * force on body b: its normal component f_n (≥ 0: b pushed away from a), the
 * size of the rest f_t, and its components. */
static int contacts_write(run_state* rs)
{
    const dvi_world* w = dvi_model_world_const(rs->model);
    const int32_t n = dvi_world_contact_count(w);
    const double t = run_time(rs);
    for (int32_t i = 0; i < n; i++) {
        dvi_contact_info c;
        if (dvi_world_get_contact(w, i, &c) != DVI_OK) continue;
        char a[128], b[128];
        dvi_model_body_name(rs->model, c.body_a, a, sizeof a);
        dvi_model_body_name(rs->model, c.body_b, b, sizeof b);
        const double fn = c.force[0] * c.normal[0] + c.force[1] * c.normal[1] + c.force[2] * c.normal[2];
        double ft2 = 0.0;
        for (int k = 0; k < 3; k++) ft2 += (c.force[k] - fn * c.normal[k]) * (c.force[k] - fn * c.normal[k]);
        fprintf(rs->contacts, "%" PRId64 ",%.10g,", rs->step, t);
        csv_text_cell(rs->contacts, a);
        fputc(',', rs->contacts);
        csv_text_cell(rs->contacts, b);
        fprintf(rs->contacts, ",%.10g,%.10g,%.10g,%.10g,%.10g,%.10g,%.10g,%.10g,%.10g,%.10g,%.10g,%.10g\n", c.point[0],
                c.point[1], c.point[2], c.normal[0], c.normal[1], c.normal[2], c.distance, fn, sqrt(ft2), c.force[0],
                c.force[1], c.force[2]);
    }
    if (fflush(rs->contacts) != 0 || ferror(rs->contacts)) {
        set_error(rs, "%s: write error: %s", rs->contacts_path, strerror(errno));
        return 1;
    }
    return 0;
}

/* Opens contacts.csv: afresh with its header, or on resume cut back to the
 * rows of the checkpoint's step and before (a killed run may have written
 * more) and continued. */
static int contacts_open(run_state* rs, bool resume, int64_t step)
{
    if (!rs->contacts_path) rs->contacts_path = cli_path_join(rs->out_dir, "contacts.csv");
    if (!resume) {
        rs->contacts = fopen(rs->contacts_path, "w");
        if (!rs->contacts || fputs(CONTACTS_HEADER, rs->contacts) < 0) {
            fprintf(stderr, "dvi run: %s: cannot write: %s\n", rs->contacts_path, strerror(errno));
            return DVI_EXIT_FAILED;
        }
        return -1;
    }
    struct stat st;
    if (stat(rs->contacts_path, &st) != 0 && errno == ENOENT) return contacts_open(rs, false, step); /* newly asked */
    /* streamed, not read whole: the table of a long run may be large */
    char why[160];
    rs->contacts = base_open_regular_mode(rs->contacts_path, O_RDWR, "r+", 0, NULL, why, sizeof why);
    if (!rs->contacts) {
        fprintf(stderr, "dvi run: the run's contacts table %s: %s\n", rs->contacts_path, why);
        return DVI_EXIT_USAGE;
    }
    char* line = NULL;
    size_t cap = 0;
    off_t keep = 0; /* bytes of the header and the rows up to `step` */
    for (ssize_t len; (len = getline(&line, &cap, rs->contacts)) > 0;) {
        if (line[len - 1] != '\n' || (keep > 0 && strtoll(line, NULL, 10) > step)) break;
        keep += (off_t)len;
    }
    free(line);
    if (ftruncate(fileno(rs->contacts), keep) != 0 || fseeko(rs->contacts, keep, SEEK_SET) != 0) {
        fprintf(stderr, "dvi run: %s: cannot write: %s\n", rs->contacts_path, strerror(errno));
        return DVI_EXIT_FAILED;
    }
    return -1;
}

/* Periodic checkpoint: state, run.json, plots, index, summary. */
static int periodic_checkpoint(run_state* rs)
{
    char msg[1024] = "";
    int rc = run_write_checkpoint(rs, msg, sizeof msg) != 0; /* over ranks: collective, agreed */
    if (!rc && rs->rank == 0 &&
        (write_pvd(rs) != 0 || run_plot_all(rs, msg, sizeof msg) != 0 ||
         run_write_summary(rs, "running", msg, sizeof msg) != 0))
        rc = 1;
    if (rs->mpi && dvi_dist_agree_max(rc) && !rc) { /* rank 0's outputs failed: every rank stops */
        snprintf(msg, sizeof msg, "rank 0 could not write the run's outputs");
        rc = 1;
    }
    if (rc) set_error(rs, "%s", msg); /* (keeps an error already set) */
    return rc;
}

/* ---- the loop and its end ----------------------------------------------------------- */

/* An output that could not be written: the run fails (1), unless the
 * write crossed the file-size limit (SIGXFSZ), which stops the run as
 * SIGTERM would (0; the reason kept for the closing message). */
static int output_stop(run_state* rs)
{
    if (g_stop_signal != SIGXFSZ) return 1;
    snprintf(rs->size_limit, sizeof rs->size_limit, "%s", rs->error);
    rs->error[0] = '\0';
    rs->failed = false;
    return 0;
}

/* The Coulomb check's first finding (dvi_step_stats.coulomb_*) in words,
 * into rs->nonunique_text: the contact's bodies and the answer kept. */
static void note_nonunique(run_state* rs, const dvi_world* world)
{
    const dvi_step_stats* s = &rs->last;
    char a[64] = "?", b[64] = "?";
    dvi_contact_info ci;
    if (dvi_world_get_contact(world, s->coulomb_contact, &ci) == DVI_OK) {
        dvi_model_body_name(rs->model, ci.body_a, a, sizeof a);
        dvi_model_body_name(rs->model, ci.body_b, b, sizeof b);
    }
    snprintf(rs->nonunique_text, sizeof rs->nonunique_text,
             "step %" PRId64 " (t = %.6g s): the step's Coulomb problem has several solutions: at the contact of %s "
             "and %s the answers of %s and of the check (%s) differ by %.2g of the step's velocities; kept %s's, "
             "the one with the smaller sum of squared normal impulses (formulation.md, Several solutions)",
             rs->step, run_time(rs), a, b, rs->settings.solver, rs->settings.coulomb_check,
             s->coulomb_difference, s->coulomb_kept == 2 ? "the check" : rs->settings.solver);
}

/* Over ranks: the same loop, every rank stepping its part; a stop (a
 * signal to any rank) and a failure are agreed, so that every rank ends at
 * the same step. */
static int run_loop_dist(run_state* rs)
{
    while (rs->step < rs->target_steps) {
        /* one agreement a step: a stop signal on any rank (its number, doubled) and rank 0's wall clock
         * asking for a checkpoint (+1) */
        const bool by_wall = rs->rank == 0 && rs->checkpoint_minutes > 0 && rs->step > rs->start_step &&
                             cli_now() - rs->last_checkpoint >= 60.0 * rs->checkpoint_minutes;
        const int agreed = dvi_dist_agree_max(2 * (int)g_stop_signal + (by_wall ? 1 : 0));
        if (agreed >= 2) {
            g_stop_signal = agreed / 2;
            break;
        }
        if (agreed == 1) {
            if (periodic_checkpoint(rs) != 0) return 1;
            rs->last_checkpoint = cli_now();
        }
        double t0 = cli_now();
        dvi_status st = dvi_dist_step(rs->dist);
        double t1 = cli_now();
        if (st < 0) {
            set_error(rs, "step %" PRId64 " (t = %.9g s) failed: %s: %s", rs->step + 1, run_time(rs),
                      dvi_status_string(st), dvi_dist_last_error(rs->dist));
            return 1;
        }
        rs->step++;
        dvi_dist_get_stats(rs->dist, &rs->dist_stats);
        memset(&rs->last, 0, sizeof rs->last);
        rs->last.iterations = rs->dist_stats.iterations;
        rs->last.residual = rs->dist_stats.residual;
        rs->last.contacts = (int32_t)(rs->dist_stats.contacts < INT32_MAX ? rs->dist_stats.contacts : INT32_MAX);
        rs->last.max_penetration = rs->dist_stats.max_penetration;
        rs->last.max_joint_violation = rs->dist_stats.max_joint_violation;
        account_step(rs, st, &rs->last, t1 - t0);
        if (sample_probes(rs, false) != 0) return 1;
        if (rs->vtk_every > 0 && rs->step % rs->vtk_every == 0 && write_frame(rs) != 0) return 1;
        if (rs->checkpoint_every > 0 && rs->step % rs->checkpoint_every == 0 && rs->step < rs->target_steps) {
            progress_break(rs);
            if (periodic_checkpoint(rs) != 0) return 1;
            rs->last_checkpoint = cli_now();
        }
        progress(rs, false);
    }
    return 0;
}

static int run_loop(run_state* rs)
{
    if (rs->dist) return run_loop_dist(rs);
    dvi_world* world = dvi_model_world(rs->model);
    while (rs->step < rs->target_steps && !g_stop_signal) {
        double t0 = cli_now();
        dvi_status st = dvi_model_step(rs->model);
        double t1 = cli_now();
        dvi_health_report hr;
        dvi_model_health(rs->model, &hr);
        if (st < 0 && (hr.raised & (1u << DVI_HEALTH_BLOWUP))) {
            rs->step++; /* the model keeps the step that blew up */
            set_error(rs, "%s", hr.first[DVI_HEALTH_BLOWUP]);
            return 1;
        }
        if (st < 0) {
            const char* why = dvi_error_message();
            set_error(rs, "step %" PRId64 " (t = %.9g s) failed: %s%s%s", rs->step + 1, run_time(rs),
                      dvi_status_string(st), why && *why ? ": " : "", why ? why : "");
            return 1;
        }
        if (hr.raised & ~rs->health_seen) { /* a new kind of trouble: say it once */
            progress_break(rs);
            for (int k = 0; k < DVI_HEALTH_KINDS; k++)
                if ((hr.raised & ~rs->health_seen) & (1u << k)) fprintf(stderr, "dvi run: warning: %s\n", hr.first[k]);
            rs->health_seen = hr.raised;
        }
        rs->step++;
        rs->last = dvi_world_get_stats(world);
        account_step(rs, st, &rs->last, t1 - t0);
        if (rs->last.coulomb_nonunique && rs->stats.first_nonunique == rs->step) { /* say it once */
            note_nonunique(rs, world);
            progress_break(rs);
            fprintf(stderr, "dvi run: warning: %s\n", rs->nonunique_text);
        }
        int32_t bad = -1;
        if (!state_finite(rs, &bad)) {
            set_error(rs, "step %" PRId64 " (t = %.9g s): non-finite state (body %d): the simulation blew up",
                      rs->step, run_time(rs), (int)bad);
            return 1;
        }
        if (sample_probes(rs, false) != 0) return output_stop(rs);
        if (rs->step == rs->interrupt_parent_step) { /* and stop here, as the study's SIGINT would stop it */
            kill(getppid(), SIGINT);
            g_stop_signal = SIGINT;
        }
        if (rs->vtk_every > 0 && rs->step % rs->vtk_every == 0 && write_frame(rs) != 0) return output_stop(rs);
        if (rs->contacts && rs->step % rs->contacts_every == 0 && contacts_write(rs) != 0) return output_stop(rs);
        const bool by_steps = rs->checkpoint_every > 0 && rs->step % rs->checkpoint_every == 0;
        const bool by_wall = rs->checkpoint_minutes > 0 && t1 - rs->last_checkpoint >= 60.0 * rs->checkpoint_minutes;
        if ((by_steps || by_wall) && rs->step < rs->target_steps) {
            progress_break(rs);
            if (periodic_checkpoint(rs) != 0) return output_stop(rs);
            rs->last_checkpoint = cli_now();
        }
        progress(rs, false);
    }
    return 0;
}

static int finish_run(run_state* rs)
{
    bool interrupted = !rs->failed && rs->step < rs->target_steps && g_stop_signal;
    const char* status = rs->failed ? "failed" : interrupted ? "interrupted" : "finished";
    progress(rs, true);
    char msg[1024];
    if (rs->dist) { /* the checkpoint and the final state's hash (collective) */
        if (!rs->failed && run_write_checkpoint(rs, msg, sizeof msg) != 0) {
            set_error(rs, "%s", msg);
            status = "failed";
        }
        if (dvi_dist_state_hash(rs->dist, &rs->state_hash) != DVI_OK) rs->state_hash = 0;
        for (int32_t i = 0; i < rs->probe_count; i++)
            if (rs->probes[i].csv) dvi_csv_flush(rs->probes[i].csv);
    } else if (dvi_world_state_hash(dvi_model_world_const(rs->model), &rs->state_hash) != DVI_OK) {
        rs->state_hash = 0;
    }
    if (rs->dist) {
        if (rs->rank != 0) { /* rank 0 writes the outputs and says how it went */
            int rc = rs->failed ? DVI_EXIT_FAILED : interrupted ? DVI_EXIT_INTERRUPTED : DVI_EXIT_OK;
            for (int32_t i = 0; i < rs->probe_count; i++) rs->probes[i].csv = NULL;
            return rc;
        }
    } else if (!rs->failed) {
        if (run_write_checkpoint(rs, msg, sizeof msg) != 0) {
            set_error(rs, "%s", msg);
            status = "failed";
        }
    } else {
        for (int32_t i = 0; i < rs->probe_count; i++)
            if (rs->probes[i].csv) dvi_csv_flush(rs->probes[i].csv);
    }
    if (!rs->failed && rs->strict && rs->model) { /* after the checkpoint: a --strict failure can be resumed or inspected */
        dvi_health_report hr;
        dvi_model_health(rs->model, &hr);
        if (hr.raised) {
            int n = 0;
            for (int k = 0; k < DVI_HEALTH_KINDS; k++)
                if (hr.raised & (1u << k)) n++;
            set_error(rs, "--strict: the health monitor raised %d warning%s (summary.json, \"health\")", n,
                      n == 1 ? "" : "s");
            status = "failed";
        }
    }
    if (rs->vtk_every > 0 && rs->frame_count > 0 && rs->pvd_frames != rs->frame_count && write_pvd(rs) != 0)
        status = "failed";
    if (run_plot_all(rs, msg, sizeof msg) != 0) {
        if (rs->size_limit[0]) { /* past the file-size limit: the plots are extras, the run stays interrupted */
            progress_break(rs);
            fprintf(stderr, "dvi run: warning: %s\n", msg);
        } else {
            set_error(rs, "%s", msg);
            status = "failed";
        }
    }
    if (run_write_summary(rs, status, msg, sizeof msg) != 0) set_error(rs, "%s", msg);
    for (int32_t i = 0; i < rs->probe_count; i++) {
        if (dvi_csv_close(rs->probes[i].csv) != 0 && !rs->size_limit[0])
            set_error(rs, "%s: write error", rs->probes[i].csv_path);
        rs->probes[i].csv = NULL;
    }

    char wall[32];
    cli_format_seconds(cli_now() - rs->wall_start, wall, sizeof wall);
    if (rs->failed) {
        fprintf(stderr, "dvi run: %s\n", rs->error);
        fprintf(stderr, "dvi run: outputs up to step %" PRId64 " are in %s\n", rs->step, rs->out_dir);
        return DVI_EXIT_FAILED;
    }
    if (interrupted && g_stop_signal == SIGXFSZ)
        fprintf(stderr, "dvi run: a file reached the file-size limit (SIGXFSZ, ulimit -f)%s%s; stopping\n",
                rs->size_limit[0] ? ": " : "", rs->size_limit);
    if (interrupted && rs->dist) {
        fprintf(stderr,
                "dvi run: interrupted at step %" PRId64 " of %" PRId64 " (t = %.6g s); outputs and checkpoint in %s\n"
                "dvi run: continue with: mpirun -n N dvi run --resume %s (N any number of ranks)\n",
                rs->step, rs->target_steps, run_time(rs), rs->out_dir, rs->out_dir);
        return DVI_EXIT_INTERRUPTED;
    }
    if (interrupted) {
        fprintf(stderr,
                "dvi run: interrupted at step %" PRId64 " of %" PRId64 " (t = %.6g s); outputs and checkpoint in %s\n"
                "dvi run: continue with: dvi run --resume %s\n",
                rs->step, rs->target_steps, run_time(rs), rs->out_dir, rs->out_dir);
        return DVI_EXIT_INTERRUPTED;
    }
    if (!rs->quiet)
        fprintf(stderr, "dvi run: finished: %" PRId64 " steps, t = %.6g s, wall %s; outputs in %s\n", rs->step,
                run_time(rs), wall, rs->out_dir);
    return DVI_EXIT_OK;
}

/* ---- setup ---------------------------------------------------------------------------- */

static int setup_dirs(run_state* rs)
{
    char msg[512];
    rs->checkpoint_dir = cli_path_join(rs->out_dir, "checkpoint");
    rs->vtk_dir = cli_path_join(rs->out_dir, "vtk");
    if (!rs->checkpoint_dir || !rs->vtk_dir) {
        fprintf(stderr, "dvi run: out of memory\n");
        return DVI_EXIT_FAILED;
    }
    if (dvi_make_dirs(rs->out_dir, msg, sizeof msg) != 0 || dvi_make_dirs(rs->checkpoint_dir, msg, sizeof msg) != 0) {
        fprintf(stderr, "dvi run: %s\n", msg);
        return DVI_EXIT_FAILED;
    }
    return -1;
}

/* Frames and collections of an earlier run in the same directory. */
static bool match_vtk_file(const char* name, const void* ctx)
{
    (void)ctx;
    const char* rest = NULL;
    if (strcmp(name, "static.vtp") == 0 || strcmp(name, "static.vtp.tmp") == 0) return true;
    if (strncmp(name, "bodies", 6) == 0)
        rest = name + 6;
    else if (strncmp(name, "contacts", 8) == 0)
        rest = name + 8;
    else if (strncmp(name, "shapes", 6) == 0)
        rest = name + 6;
    else
        return false;
    if (strcmp(rest, ".pvd") == 0 || strcmp(rest, ".pvd.tmp") == 0) return true;
    if (*rest++ != '_') return false;
    if (*rest < '0' || *rest > '9') return false;
    while (*rest >= '0' && *rest <= '9') rest++;
    if (strcmp(rest, ".pvtp") == 0 || strcmp(rest, ".pvtp.tmp") == 0) return true; /* a run over ranks: */
    if (strncmp(rest, "_p", 2) == 0 && rest[2] >= '0' && rest[2] <= '9') {          /* its pieces */
        rest += 2;
        while (*rest >= '0' && *rest <= '9') rest++;
    }
    return strcmp(rest, ".vtp") == 0 || strcmp(rest, ".vtp.tmp") == 0;
}

static void remove_stale_vtk(const run_state* rs)
{
    char* frames = cli_path_join(rs->vtk_dir, "frames");
    cli_remove_matching(rs->vtk_dir, match_vtk_file, NULL);
    if (frames) cli_remove_matching(frames, match_vtk_file, NULL);
    free(frames);
}

/* Over ranks: the largest exit status of any rank (-1: all went on), so
 * that every rank stops or goes on together. */
static int agree_exit(const run_state* rs, int rc)
{
    if (!rs->mpi) return rc;
    return dvi_dist_agree_max(rc >= 0 ? rc + 1 : 0) - 1;
}

static int setup_fresh(run_state* rs, const run_args* a)
{
    rs->scene_arg = cli_strdup(a->scene);
    char resolved[PATH_MAX];
    if (!realpath(a->scene, resolved)) {
        fprintf(stderr, "%s: cannot open: %s\n", a->scene, strerror(errno));
        return DVI_EXIT_USAGE;
    }
    rs->scene_path = cli_strdup(resolved);
    char msg[512];
    size_t n = 0;
    char* text = cli_read_file(rs->scene_path, &n, msg, sizeof msg);
    if (!text) {
        fprintf(stderr, "%s\n", msg);
        return DVI_EXIT_USAGE;
    }
    rs->scene_hash = cli_hash64(text, n);
    free(text);

    rs->overrides.dt = a->dt;
    rs->overrides.duration = a->duration;
    rs->overrides.threads = (int32_t)a->threads;
    rs->overrides.young_modulus = a->young_modulus;
    rs->overrides.probe_interval = a->probe_interval;
    if (a->solver) rs->ov_solver = cli_strdup(a->solver);
    if (a->method) rs->ov_method = cli_strdup(a->method);
    if (a->friction) rs->ov_friction = cli_strdup(a->friction);
    rs->overrides.lemke_coulomb = a->given[OPT_LEMKE_COULOMB];
    int rc = load_scene(rs);
    if ((rc = agree_exit(rs, rc)) >= 0) return rc;

    const bool root = rs->rank == 0; /* over ranks, rank 0 alone writes files */
    rs->out_dir = a->out ? cli_strdup(a->out) : default_out_dir(rs->settings.name, a->scene);
    if (root) rc = setup_dirs(rs);
    else if (!(rs->checkpoint_dir = cli_path_join(rs->out_dir, "checkpoint")) ||
             !(rs->vtk_dir = cli_path_join(rs->out_dir, "vtk")))
        rc = DVI_EXIT_FAILED;
    if ((rc = agree_exit(rs, rc)) >= 0) return rc;
    if ((rc = build_model(rs)) >= 0) return rc;
    /* a stale checkpoint of an earlier run in the same directory must not
     * pair with the new CSVs */
    if (root) {
        run_remove_checkpoint_files(rs->checkpoint_dir, NULL, true);
        remove_stale_vtk(rs);
    }
    rs->step = 0;
    rs->stats.invocations = 1;
    for (int32_t i = 0; i < rs->probe_count && root && rc < 0; i++) {
        run_probe* p = &rs->probes[i];
        if (p->off) continue;
        if (dvi_csv_open(&p->csv, p->csv_path, p->info.columns, p->info.column_names, p->info.units, msg,
                         sizeof msg) != 0) {
            fprintf(stderr, "dvi run: %s\n", msg);
            rc = DVI_EXIT_FAILED;
        }
    }
    for (int32_t i = 0; i < rs->probe_count && rs->dist; i++) { /* the part's strings change at rebuilds */
        rs->probes[i].info.column_names = NULL;
        rs->probes[i].info.units = NULL;
    }
    if ((rc = agree_exit(rs, rc)) >= 0) return rc;
    if (rs->contacts_every > 0 && (rc = contacts_open(rs, false, 0)) >= 0) return rc;
    if ((rc = size_frames(rs, 0)) >= 0) return rc;
    /* t = 0: the initial state is the first row of every CSV and frame 0 */
    if (sample_probes(rs, true) != 0 || (rs->vtk_every > 0 && write_frame(rs) != 0)) {
        fprintf(stderr, "dvi run: %s\n", rs->error);
        return DVI_EXIT_FAILED;
    }
    return -1;
}

static int setup_resume(run_state* rs, const run_args* a)
{
    char msg[1024];
    rs->resumed = true;
    rs->out_dir = cli_strdup(a->resume);
    rs->checkpoint_dir = cli_path_join(rs->out_dir, "checkpoint");
    rs->vtk_dir = cli_path_join(rs->out_dir, "vtk");
    run_resume_info info;
    memset(&info, 0, sizeof info);
    int rc = -1;
    if (run_read_checkpoint(rs, &info, msg, sizeof msg) != 0) {
        fprintf(stderr, "dvi run: %s\n", msg);
        rc = DVI_EXIT_USAGE;
    } else if (rs->mpi && info.state_ranks == 0) {
        fprintf(stderr, "dvi run: %s was written by one process (state %s): resume it without mpirun\n",
                rs->out_dir, info.state_file);
        rc = DVI_EXIT_USAGE;
    }
    if ((rc = agree_exit(rs, rc)) >= 0) {
        run_resume_info_free(&info);
        return rc;
    }
    char* text = NULL;
    void* blob = NULL;
    /* the new end time and thread count; everything else as saved */
    if (a->duration > 0) rs->overrides.duration = a->duration;
    if (a->threads > 0) rs->overrides.threads = (int32_t)a->threads;
    if (a->given[OPT_CHECKPOINT_EVERY]) rs->checkpoint_every = a->checkpoint_every;
    if (a->given[OPT_CONTACTS_EVERY]) rs->contacts_every = a->contacts_every;

    size_t n = 0;
    text = cli_read_file(rs->scene_path, &n, msg, sizeof msg);
    if (!text) {
        fprintf(stderr, "dvi run: the run's scene file: %s\n", msg);
        rc = DVI_EXIT_USAGE;
        goto done_agree;
    }
    if (cli_hash64(text, n) != rs->scene_hash) {
        fprintf(stderr, "dvi run: %s has changed since the checkpoint was written; cannot resume\n", rs->scene_path);
        rc = DVI_EXIT_USAGE;
        goto done_agree;
    }
    rc = load_scene(rs);
done_agree:
    if ((rc = agree_exit(rs, rc)) >= 0) goto done;
    if ((rc = build_model(rs)) >= 0) goto done;
    if (rs->dist) { /* over ranks: every rank reads the rank files it needs (dvi_dist_load) */
        char* dir = cli_path_join(rs->checkpoint_dir, info.state_file);
        dvi_status dst = dvi_dist_load(rs->dist, dir ? dir : ""); /* collective: every rank calls it */
        if (dst != DVI_OK) {
            fprintf(stderr, "dvi run: checkpoint state: %s\n", dvi_dist_last_error(rs->dist));
            free(dir);
            rc = DVI_EXIT_USAGE;
            goto done;
        }
        free(dir);
        if (dvi_dist_step_count(rs->dist) != info.step) {
            fprintf(stderr, "dvi run: the state is at step %" PRId64 ", run.json says %" PRId64 "; cannot resume\n",
                    dvi_dist_step_count(rs->dist), info.step);
            rc = DVI_EXIT_USAGE;
            goto done;
        }
        goto state_loaded;
    }

    /* the state blob */
    char* blob_path = cli_path_join(rs->checkpoint_dir, info.state_file);
    size_t blob_size = 0;
    blob = blob_path ? cli_read_file(blob_path, &blob_size, msg, sizeof msg) : NULL;
    if (!blob) {
        fprintf(stderr, "dvi run: checkpoint state: %s\n", blob_path ? msg : "out of memory");
        free(blob_path);
        rc = DVI_EXIT_USAGE;
        goto done;
    }
    if ((long long)blob_size != info.state_size || cli_hash64(blob, blob_size) != info.state_hash) {
        fprintf(stderr, "dvi run: %s: damaged (size or checksum differs from run.json)\n", blob_path);
        free(blob_path);
        rc = DVI_EXIT_USAGE;
        goto done;
    }
    dvi_status st = dvi_model_load_state(rs->model, blob, blob_size, msg, sizeof msg);
    if (st < 0) {
        fprintf(stderr, "dvi run: %s: %s\n", blob_path, msg[0] ? msg : dvi_status_string(st));
        free(blob_path);
        rc = DVI_EXIT_USAGE;
        goto done;
    }
    if (dvi_model_step_count(rs->model) != info.step) {
        fprintf(stderr, "dvi run: %s: the state is at step %" PRId64 ", run.json says %" PRId64 "; cannot resume\n",
                blob_path, dvi_model_step_count(rs->model), info.step);
        free(blob_path);
        rc = DVI_EXIT_USAGE;
        goto done;
    }
    free(blob_path);
state_loaded:
    rs->step = info.step;
    rs->state_file = cli_strdup(info.state_file);
    if (a->duration > 0 && rs->target_steps < rs->step) {
        fprintf(stderr,
                "dvi run: --duration %g: the run is already at step %" PRId64 " (t = %.6g s); a resumed run can only "
                "go further\n",
                a->duration, rs->step, run_time(rs));
        rc = DVI_EXIT_USAGE;
        goto done;
    }

    /* probes: same names, same order; CSVs cut back to the saved rows */
    if (info.probe_count != rs->probe_count) {
        fprintf(stderr, "dvi run: the checkpoint has %d probes, the scene %d\n", (int)info.probe_count,
                (int)rs->probe_count);
        rc = DVI_EXIT_USAGE;
        goto done;
    }
    for (int32_t i = 0; i < rs->probe_count; i++) {
        run_probe* p = &rs->probes[i];
        if (strcmp(info.probe_names[i], p->info.name) != 0 || info.probe_columns[i] != p->info.columns) {
            fprintf(stderr, "dvi run: probe %d of the checkpoint ('%s') does not match the scene's ('%s')\n", (int)i,
                    info.probe_names[i], p->info.name);
            rc = DVI_EXIT_USAGE;
            goto done;
        }
        if (p->off || rs->rank != 0) continue; /* over ranks: rank 0 writes the CSVs */
        if (dvi_csv_open_resume(&p->csv, p->csv_path, info.probe_rows[i], p->info.columns, msg, sizeof msg) != 0) {
            fprintf(stderr, "dvi run: %s\n", msg);
            rc = DVI_EXIT_USAGE;
            break;
        }
    }
    if ((rc = agree_exit(rs, rc)) >= 0) goto done;
    if (rs->contacts_every > 0 && (rc = contacts_open(rs, true, info.step)) >= 0) goto done;
    if (rs->vtk_every > 0) {
        /* frame_times were read into rs->frame_times; make room for the rest */
        int32_t have = rs->frame_count;
        if ((rc = size_frames(rs, have)) >= 0) goto done;
        rs->pvd_frames = 0;
    }
    rs->stats.invocations++;
    rc = -1;
done:
    free(text);
    free(blob);
    run_resume_info_free(&info);
    return rc;
}

/* The size of the MPI job this process was started in (Open MPI's, or the
 * PMI/PMIx variables other launchers set), 1 when none. */
static long mpi_job_size(void)
{
    const char* vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE", "MPI_LOCALNRANKS"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char* v = getenv(vars[i]);
        if (v && strtol(v, NULL, 10) > 1) return strtol(v, NULL, 10);
    }
    return 1;
}

static int run_over_ranks(const run_args* a, long job);
static int run_main(const run_args* a, int rank, int ranks, bool mpi);

int dvi_cmd_run(int argc, char** argv)
{
    run_args a;
    int rc = parse_run_args(argc, argv, &a);
    if (rc >= 0) return rc;
    long ranks = mpi_job_size();
    /* a run over ranks, or the resume of one (on any number of processes, one included) */
    if (ranks > 1 || (a.resume && run_checkpoint_over_ranks(a.resume))) return run_over_ranks(&a, ranks);
    return run_main(&a, 0, 1, false);
}

/* Under mpirun: every rank runs the same command on its part of the scene
 * (<dvi/dist.h>); rank 0 writes the outputs and speaks. */
static int run_over_ranks(const run_args* a, long job)
{
    if (!dvi_dist_available()) { /* N copies of the same run would write the same files at once */
        if (job > 1)
            fprintf(stderr,
                    "dvi run: started as one of %ld MPI ranks, but this build of dvicontact has no MPI (meson "
                    "option mpi; Debian: libopenmpi-dev). Run it without mpirun, or build with MPI.\n",
                    job);
        else
            fprintf(stderr,
                    "dvi run: %s holds the checkpoint of a run over MPI ranks, but this build of dvicontact has no "
                    "MPI (meson option mpi; Debian: libopenmpi-dev)\n",
                    a->resume);
        return DVI_EXIT_USAGE;
    }
    if (dvi_dist_init() != DVI_OK) {
        fprintf(stderr, "dvi run: cannot start MPI: %s\n", dvi_error_message());
        return DVI_EXIT_FAILED;
    }
    int rank = 0, size = 1;
    dvi_dist_world(&rank, &size);
    static const struct {
        int id;
        const char* name;
    } single[] = {{OPT_CONTACTS_EVERY, "contacts-every"}, {OPT_STRICT, "strict"}};
    for (size_t i = 0; i < sizeof single / sizeof single[0]; i++)
        if (a->given[single[i].id]) {
            if (rank == 0)
                fprintf(stderr,
                        "dvi run: --%s is not available in a run over MPI ranks (%s; docs/scale.md)\n",
                        single[i].name, single[i].id == OPT_STRICT ? "the health monitor is each process's own"
                                                                   : "each rank holds its own contacts");
            dvi_dist_finalize();
            return DVI_EXIT_USAGE;
        }
    /* the other ranks are silent: every one of them would print the same */
    if (rank != 0 && !freopen("/dev/null", "w", stderr)) return DVI_EXIT_FAILED;
    int rc = run_main(a, rank, size, true);
    dvi_dist_finalize();
    return rc;
}

static int run_main(const run_args* a, int rank, int ranks, bool mpi)
{
    int rc;
    install_signal_handlers();

    run_state rs;
    memset(&rs, 0, sizeof rs);
    rs.rank = rank;
    rs.ranks = ranks;
    rs.mpi = mpi;
    rs.quiet = a->quiet || rank != 0;
    rs.strict = a->strict;
    rs.vtk_every = a->vtk_every;
    rs.checkpoint_every = a->checkpoint_every;
    rs.contacts_every = a->contacts_every;
    rs.vtk_ascii = a->given[OPT_VTK_ASCII];
    rs.checkpoint_minutes = a->given[OPT_CHECKPOINT_MINUTES] ? a->checkpoint_minutes : RUN_CHECKPOINT_MINUTES;
    rs.tty = isatty(STDERR_FILENO) != 0;
    rs.wall_start = cli_now();
    rs.last_checkpoint = rs.wall_start;
    const char* hook = getenv("DVI_RUN_INTERRUPT_PARENT_AT_STEP"); /* for the tests of `dvi study` */
    if (hook) rs.interrupt_parent_step = strtoll(hook, NULL, 10);

    rc = a->resume ? setup_resume(&rs, a) : setup_fresh(&rs, a);
    if (rc >= 0) {
        run_state_free(&rs);
        return rc;
    }
    rs.start_step = rs.step;
    rs.stats_seconds_at_start = rs.stats.seconds_step;
    if (rs.model) { /* a resumed run has reported what its checkpoint's monitor holds */
        dvi_health_report hr;
        if (dvi_model_health(rs.model, &hr) == DVI_OK) rs.health_seen = hr.raised;
    }
    rs.log_every = a->log_every > 0 ? a->log_every : 0;
    if (rs.log_every == 0) {
        int64_t left = rs.target_steps > rs.step ? rs.target_steps - rs.step : 0;
        rs.log_every = left / 100 > 0 ? left / 100 : 1;
    }
    rs.last_print_step = -1;
    if (!rs.quiet) {
        if (rs.resumed)
            fprintf(stderr, "dvi run: resuming %s at step %" PRId64 " (t = %.6g s) to t = %.6g s (%" PRId64 " steps)\n",
                    rs.scene_path, rs.step, dvi_model_time(rs.model), rs.settings.duration, rs.target_steps);
        else
            fprintf(stderr, "dvi run: %s: %" PRId64 " steps of %.6g s with %s; outputs in %s\n", rs.scene_arg,
                    rs.target_steps, rs.settings.dt,
                    strcmp(rs.settings.method, "dem") == 0 ? "DEM penalty contacts" : rs.settings.solver, rs.out_dir);
    }
    if (rs.resumed && rs.step >= rs.target_steps && !rs.quiet)
        fprintf(stderr, "dvi run: nothing to do: the run is at step %" PRId64 ", its end is step %" PRId64 "\n",
                rs.step, rs.target_steps);

    run_loop(&rs);
    rc = finish_run(&rs);
    run_state_free(&rs);
    return rc;
}
