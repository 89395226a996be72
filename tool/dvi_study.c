/* `dvi study SCENE`: runs a scene over a ladder of steps for each method
 * (and a list of Young's moduli for DEM), each run a child `dvi run` in a
 * directory of its own (one per core at a time; --resume skips the finished
 * ones), judges the runs (study.h) and writes the table (CSV + JSON) and the
 * plots. docs/study.md is the guide, docs/cli.md the manual.
 *
 * Settings: the scene's optional "study" object, overridden by the command
 * line. Errors name the place: `study.dts.dem[2]: must be > 0`, `--dts-dvi: ...`. */
#ifndef _XOPEN_SOURCE
#define _XOPEN_SOURCE 700
#endif
#include "dvi_cli.h"
#include "study.h"
#include "../src/base/regular_file.h"

#include <dvi/dvi.h>
#include <dvi/output.h>

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_LADDER 32
#define MAX_MODULI 16
/* Default ladders (docs/study.md): DVI, the scene's step × 2^k, at most this
 * many rungs and steps up to a quarter of the duration, each run only while
 * the one below it is acceptable; DEM, the stiffest contact's critical step
 * (rounded down to two digits) and its halves, this many rungs. */
#define DEFAULT_DVI_RUNGS 6
/* The fewest probe samples an observable is taken from: in its window, or
 * over the run for an observable at one time. */
#define STUDY_MIN_SAMPLES 5
#define DEFAULT_DEM_RUNGS 4
enum { M_DVI = 0, M_DEM = 1, M_COUNT = 2 };
static const char* const METHOD_NAMES[M_COUNT] = {"dvi", "dem"};

typedef struct study_settings {
    bool method_on[M_COUNT];
    bool methods_given;
    double dts[M_COUNT][MAX_LADDER];
    int dt_count[M_COUNT];
    bool auto_ladder[M_COUNT]; /* none given: chosen from the scene (check_settings, default_dem_ladder) */
    char ladder_origin[M_COUNT][256];
    double moduli[MAX_MODULI];
    int modulus_count;
    double duration;          /* 0: the scene's */
    char probe[128], column[128]; /* observable; probe[0] == 0: none */
    bool have_at, have_window;
    double at, t0, t1;
    double tolerance;
    bool relative;
    double overlap_fraction;
    double probe_interval;    /* 0: duration / 300 */
    int64_t jobs;             /* 0: cores */
    int64_t threads;          /* per run */
    const char* solver;
    const char* out;
    bool resume;
    bool quiet;
} study_settings;

/* ---- errors naming the place ------------------------------------------------ */

typedef struct errs {
    int count;
    const char* scene;
} errs;

static void err(errs* e, const char* place, const char* fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static void err(errs* e, const char* place, const char* fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (e->scene && strncmp(place, "--", 2) != 0) fprintf(stderr, "%s: ", e->scene);
    else fputs("dvi study: ", stderr);
    fprintf(stderr, "%s: ", place);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    e->count++;
}

/* A list of positive steps or moduli from a JSON array. */
static int json_positive_list(errs* e, const cJSON* a, const char* place, double* out, int max)
{
    if (!cJSON_IsArray(a)) {
        err(e, place, "must be an array of numbers");
        return 0;
    }
    int n = 0;
    const cJSON* it;
    cJSON_ArrayForEach(it, a)
    {
        char p[256];
        snprintf(p, sizeof p, "%s[%d]", place, n);
        if (n == max) {
            err(e, place, "at most %d entries", max);
            break;
        }
        if (!cJSON_IsNumber(it) || !isfinite(it->valuedouble)) err(e, p, "must be a number");
        else if (!(it->valuedouble > 0)) err(e, p, "must be > 0 (got %g)", it->valuedouble);
        else out[n] = it->valuedouble;
        n++;
    }
    if (n == 0) err(e, place, "must not be empty");
    return n;
}

/* A list from the command line: "1e-3,2e-3,4e-3". */
static int text_positive_list(errs* e, const char* text, const char* option, double* out, int max)
{
    int n = 0;
    const char* p = text;
    while (*p) {
        char* end;
        errno = 0;
        double v = strtod(p, &end);
        char place[128];
        snprintf(place, sizeof place, "--%s[%d]", option, n);
        if (end == p || (*end && *end != ',') || errno == ERANGE || !isfinite(v)) {
            err(e, place, "not a number");
            return 0;
        }
        if (!(v > 0)) err(e, place, "must be > 0 (got %g)", v);
        if (n == max) {
            err(e, place, "at most %d entries", max);
            return n;
        }
        out[n++] = v;
        p = *end ? end + 1 : end;
    }
    if (n == 0) {
        char place[128];
        snprintf(place, sizeof place, "--%s", option);
        err(e, place, "must not be empty");
    }
    return n;
}

static bool json_number_field(errs* e, const cJSON* o, const char* key, const char* owner, double* out, bool positive)
{
    const cJSON* v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!v) return false;
    char p[256];
    snprintf(p, sizeof p, "%s.%s", owner, key);
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble)) {
        err(e, p, "must be a number");
        return false;
    }
    if (positive && !(v->valuedouble > 0)) {
        err(e, p, "must be > 0 (got %g)", v->valuedouble);
        return false;
    }
    *out = v->valuedouble;
    return true;
}

static void check_keys(errs* e, const cJSON* o, const char* owner, const char* const* keys)
{
    for (const cJSON* it = o->child; it; it = it->next) {
        bool ok = strcmp(it->string, "comment") == 0;
        for (int k = 0; keys[k] && !ok; k++) ok = strcmp(it->string, keys[k]) == 0;
        if (!ok) {
            char p[256];
            snprintf(p, sizeof p, "%s.%s", owner, it->string);
            err(e, p, "unknown key");
        }
    }
}

/* "probe.column": the probe is the part before the first dot. */
static bool split_observable(errs* e, const char* place, const char* text, study_settings* s)
{
    const char* dot = strchr(text, '.');
    if (!dot || dot == text || !dot[1]) {
        err(e, place, "must be PROBE.COLUMN (e.g. bin_load.bin.f_dir), got \"%s\"", text);
        return false;
    }
    if ((size_t)(dot - text) >= sizeof s->probe || strlen(dot + 1) >= sizeof s->column) {
        err(e, place, "too long");
        return false;
    }
    memcpy(s->probe, text, (size_t)(dot - text));
    s->probe[dot - text] = '\0';
    snprintf(s->column, sizeof s->column, "%s", dot + 1);
    return true;
}

static void parse_study_object(errs* e, const cJSON* st, study_settings* s)
{
    static const char* const KEYS[] = {"methods", "dts",  "young_moduli", "duration",       "observable",
                                       "overlap_fraction", "probe_interval", NULL};
    check_keys(e, st, "study", KEYS);
    const cJSON* m = cJSON_GetObjectItemCaseSensitive(st, "methods");
    if (m) {
        if (!cJSON_IsArray(m) || cJSON_GetArraySize(m) == 0) err(e, "study.methods", "must be a non-empty array");
        else {
            s->methods_given = true;
            s->method_on[M_DVI] = s->method_on[M_DEM] = false;
            int i = 0;
            const cJSON* it;
            cJSON_ArrayForEach(it, m)
            {
                char p[64];
                snprintf(p, sizeof p, "study.methods[%d]", i++);
                if (!cJSON_IsString(it)) err(e, p, "must be \"dvi\" or \"dem\"");
                else if (strcmp(it->valuestring, "dvi") == 0) s->method_on[M_DVI] = true;
                else if (strcmp(it->valuestring, "dem") == 0) s->method_on[M_DEM] = true;
                else err(e, p, "unknown method \"%s\" (dvi or dem)", it->valuestring);
            }
        }
    }
    const cJSON* d = cJSON_GetObjectItemCaseSensitive(st, "dts");
    if (d) {
        if (!cJSON_IsObject(d)) err(e, "study.dts", "must be an object {\"dvi\": [...], \"dem\": [...]}");
        else {
            static const char* const DK[] = {"dvi", "dem", NULL};
            check_keys(e, d, "study.dts", DK);
            for (int k = 0; k < M_COUNT; k++) {
                const cJSON* a = cJSON_GetObjectItemCaseSensitive(d, METHOD_NAMES[k]);
                char p[64];
                snprintf(p, sizeof p, "study.dts.%s", METHOD_NAMES[k]);
                if (a) s->dt_count[k] = json_positive_list(e, a, p, s->dts[k], MAX_LADDER);
            }
        }
    }
    const cJSON* ym = cJSON_GetObjectItemCaseSensitive(st, "young_moduli");
    if (ym) s->modulus_count = json_positive_list(e, ym, "study.young_moduli", s->moduli, MAX_MODULI);
    json_number_field(e, st, "duration", "study", &s->duration, true);
    json_number_field(e, st, "overlap_fraction", "study", &s->overlap_fraction, true);
    json_number_field(e, st, "probe_interval", "study", &s->probe_interval, true);
    const cJSON* ob = cJSON_GetObjectItemCaseSensitive(st, "observable");
    if (ob) {
        static const char* const OK[] = {"column", "at", "window", "relative_tolerance", "absolute_tolerance", NULL};
        if (!cJSON_IsObject(ob)) {
            err(e, "study.observable", "must be an object");
            return;
        }
        check_keys(e, ob, "study.observable", OK);
        const cJSON* c = cJSON_GetObjectItemCaseSensitive(ob, "column");
        if (!cJSON_IsString(c)) err(e, "study.observable.column", "required: \"PROBE.COLUMN\"");
        else split_observable(e, "study.observable.column", c->valuestring, s);
        if (json_number_field(e, ob, "at", "study.observable", &s->at, false)) s->have_at = true;
        if (s->have_at && cJSON_GetObjectItemCaseSensitive(ob, "window"))
            err(e, "study.observable", "at or window, not both");
        const cJSON* w = cJSON_GetObjectItemCaseSensitive(ob, "window");
        if (w) {
            if (!cJSON_IsArray(w) || cJSON_GetArraySize(w) != 2 || !cJSON_IsNumber(cJSON_GetArrayItem(w, 0)) ||
                !cJSON_IsNumber(cJSON_GetArrayItem(w, 1)))
                err(e, "study.observable.window", "must be [t0, t1]");
            else {
                s->t0 = cJSON_GetArrayItem(w, 0)->valuedouble;
                s->t1 = cJSON_GetArrayItem(w, 1)->valuedouble;
                s->have_window = true;
            }
        }
        double tol;
        bool rel = json_number_field(e, ob, "relative_tolerance", "study.observable", &tol, true);
        if (rel) s->tolerance = tol, s->relative = true;
        if (json_number_field(e, ob, "absolute_tolerance", "study.observable", &tol, true)) {
            if (rel) err(e, "study.observable", "relative_tolerance or absolute_tolerance, not both");
            s->tolerance = tol, s->relative = false;
        }
    }
}

/* ---- the runs ------------------------------------------------------------------- */

typedef struct job {
    study_run r;
    char dir[1024];
    pid_t pid;
    bool skipped;   /* --resume: finished with the same settings */
    bool resumed;   /* started as `dvi run --resume` from its checkpoint */
    int after;      /* a default DVI ladder's rung: run only once this job's run is acceptable (-1: always) */
    int state;      /* JOB_WAITING, JOB_RUNNING, JOB_ENDED, JOB_DROPPED */
    int exit_status;
    double cpu_before; /* CPU seconds of an earlier, interrupted part of the run (--resume) */
} job;

enum { JOB_WAITING = 0, JOB_RUNNING, JOB_ENDED, JOB_DROPPED };

static volatile sig_atomic_t g_stop = 0;
static void on_stop(int sig) { g_stop = sig; }
static void on_child(int sig) { (void)sig; } /* wakes sigsuspend when a run ends */

/* The study waits for its runs with SIGINT, SIGTERM and SIGCHLD blocked,
 * except inside sigsuspend: a stop is seen at the top of the loop, never
 * between a check and a wait. The runs are forked with SIGINT and SIGTERM
 * still blocked, so a stop that reaches a run before `dvi run` has set its
 * handlers stays pending until it has (it then stops cleanly, with its
 * checkpoint and summary.json), instead of killing it with no summary. */
static void stop_signals(sigset_t* set)
{
    sigemptyset(set);
    sigaddset(set, SIGINT);
    sigaddset(set, SIGTERM);
}

/* DVI_STUDY_INTERRUPT: a test hook that stops the study at a chosen point,
 * so that tests of --resume do not depend on timing. "start": before the
 * first run starts; "spawn": right after the first run's process is made
 * (the stop reaches it in its setup); "step:N": when a run reaches step N
 * (the run, told by DVI_RUN_INTERRUPT_PARENT_AT_STEP, sends SIGINT to the
 * study and stops there, so that it cannot end before the study's SIGINT
 * reaches it); "ended:K": once K runs have ended. The study raises SIGINT
 * on itself, as a Ctrl-C would. */
typedef struct interrupt_hook {
    char point[16];
    long long n;
    bool fired;
} interrupt_hook;

static interrupt_hook read_interrupt_hook(void)
{
    interrupt_hook h;
    memset(&h, 0, sizeof h);
    const char* v = getenv("DVI_STUDY_INTERRUPT");
    if (!v || !*v) return h;
    const char* colon = strchr(v, ':');
    size_t n = colon ? (size_t)(colon - v) : strlen(v);
    if (n >= sizeof h.point) n = sizeof h.point - 1;
    memcpy(h.point, v, n);
    h.point[n] = '\0';
    if (colon) h.n = strtoll(colon + 1, NULL, 10);
    return h;
}

/* Raises SIGINT when the hook names this point; blocked signals are let through at once. */
static void hook_point(interrupt_hook* h, const char* point, long long count)
{
    if (h->fired || strcmp(h->point, point) != 0 || count < h->n) return;
    h->fired = true;
    raise(SIGINT);
    sigset_t stop, old;
    stop_signals(&stop);
    sigprocmask(SIG_UNBLOCK, &stop, &old);
    sigprocmask(SIG_SETMASK, &old, NULL);
}

/* The summary of a finished run, when its settings are this job's. */
static cJSON* read_summary(const char* dir)
{
    char path[1200], msg[256];
    snprintf(path, sizeof path, "%s/summary.json", dir);
    size_t n = 0;
    char* text = cli_read_file(path, &n, msg, sizeof msg);
    if (!text) return NULL;
    cJSON* j = cJSON_Parse(text);
    free(text);
    return j;
}

/* DIR/cpu_seconds: the CPU time of the run's processes, kept for --resume. */
static double read_cpu(const char* dir)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/cpu_seconds", dir);
    char why[160];
    FILE* f = base_open_regular(path, 0, NULL, why, sizeof why);
    double v = NAN;
    if (f) {
        if (fscanf(f, "%lf", &v) != 1) v = NAN;
        fclose(f);
    }
    return v;
}

static void write_cpu(const char* dir, double seconds)
{
    char path[1200], text[64], msg[256];
    snprintf(path, sizeof path, "%s/cpu_seconds", dir);
    int n = snprintf(text, sizeof text, "%.17g\n", seconds);
    dvi_write_file_atomic(path, text, (size_t)n, msg, sizeof msg); /* best effort: only the table's CPU column needs it */
}

static double children_cpu(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_CHILDREN, &ru) != 0) return NAN;
    return (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_sec +
           1e-6 * (double)ru.ru_stime.tv_usec;
}

static double jnum(const cJSON* o, const char* key)
{
    const cJSON* v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static bool close_to(double a, double b) { return fabs(a - b) <= 1e-12 * fmax(fabs(a), fabs(b)); }

/* Whether the run in dir was made with this job's settings (and how far it got). */
static bool summary_matches(const cJSON* s, const job* j, double duration, double probe_interval, const char* scene)
{
    const cJSON* ov = cJSON_GetObjectItemCaseSensitive(s, "overrides");
    const cJSON* sc = cJSON_GetObjectItemCaseSensitive(s, "scene");
    const cJSON* m = cJSON_GetObjectItemCaseSensitive(ov, "method");
    if (!cJSON_IsString(sc) || strcmp(sc->valuestring, scene) != 0) return false;
    if (!cJSON_IsString(m) || strcmp(m->valuestring, j->r.method) != 0) return false;
    if (!close_to(jnum(ov, "dt"), j->r.dt) || !close_to(jnum(ov, "duration"), duration) ||
        !close_to(jnum(ov, "probe_interval"), probe_interval))
        return false;
    double E = jnum(ov, "young_modulus");
    if (isnan(j->r.young_modulus) ? !isnan(E) : !close_to(E, j->r.young_modulus)) return false;
    return true;
}

static const char* jstr(const cJSON* o, const char* key)
{
    const cJSON* v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* Whether DIR/summary.json says the run ended for good (finished or failed). */
static bool summary_final(const char* dir)
{
    cJSON* sum = read_summary(dir);
    const char* status = jstr(sum, "status");
    bool final = status && (!strcmp(status, "finished") || !strcmp(status, "failed"));
    cJSON_Delete(sum);
    return final;
}

static int start_job(job* j, const char* exe, const char* scene, const study_settings* s, bool resume_it,
                     long long stop_at_step)
{
    char msg[512];
    if (dvi_make_dirs(j->dir, msg, sizeof msg) != 0) {
        snprintf(j->r.reason, sizeof j->r.reason, "%s", msg);
        return -1;
    }
    char dt[64], dur[64], E[64], pi[64], th[32];
    snprintf(dt, sizeof dt, "%.17g", j->r.dt);
    snprintf(dur, sizeof dur, "%.17g", s->duration);
    snprintf(E, sizeof E, "%.17g", j->r.young_modulus);
    snprintf(pi, sizeof pi, "%.17g", s->probe_interval);
    snprintf(th, sizeof th, "%lld", (long long)s->threads);
    const char* argv[32];
    int a = 0;
    argv[a++] = exe;
    argv[a++] = "run";
    if (resume_it) {
        argv[a++] = "--resume";
        argv[a++] = j->dir;
    } else {
        argv[a++] = scene;
        argv[a++] = "--out";
        argv[a++] = j->dir;
        argv[a++] = "--method";
        argv[a++] = j->r.method;
        argv[a++] = "--dt";
        argv[a++] = dt;
        argv[a++] = "--duration";
        argv[a++] = dur;
        argv[a++] = "--probe-interval";
        argv[a++] = pi;
        if (!isnan(j->r.young_modulus)) {
            argv[a++] = "--young-modulus";
            argv[a++] = E;
        }
        if (s->solver) {
            argv[a++] = "--solver";
            argv[a++] = s->solver;
        }
    }
    argv[a++] = "--threads";
    argv[a++] = th;
    argv[a++] = "--quiet";
    argv[a] = NULL;
    char log[1200];
    j->cpu_before = 0;
    if (!resume_it) { /* a summary left by an earlier study must not pass for this run's */
        snprintf(log, sizeof log, "%s/summary.json", j->dir);
        unlink(log);
        snprintf(log, sizeof log, "%s/cpu_seconds", j->dir);
        unlink(log);
    } else {
        double c = read_cpu(j->dir);
        if (isfinite(c)) j->cpu_before = c;
    }
    snprintf(log, sizeof log, "%s/log.txt", j->dir);
    fflush(NULL);
    j->resumed = resume_it;
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(j->r.reason, sizeof j->r.reason, "fork: %s", strerror(errno));
        return -1;
    }
    if (pid == 0) {
        /* a process group of its own: a Ctrl-C on the terminal reaches the study alone, which passes
         * one SIGINT on to each run (a second one would end a run without its checkpoint). SIGINT and
         * SIGTERM stay blocked (the study's mask) through exec: `dvi run` unblocks them once its
         * handlers are set */
        setpgid(0, 0);
        sigset_t chld;
        sigemptyset(&chld);
        sigaddset(&chld, SIGCHLD);
        sigprocmask(SIG_UNBLOCK, &chld, NULL);
        signal(SIGCHLD, SIG_DFL);
        if (stop_at_step > 0) {
            char n[32];
            snprintf(n, sizeof n, "%lld", stop_at_step);
            setenv("DVI_RUN_INTERRUPT_PARENT_AT_STEP", n, 1);
        } else {
            unsetenv("DVI_RUN_INTERRUPT_PARENT_AT_STEP");
        }
        int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
            close(fd);
        }
        if (strchr(exe, '/')) execv(exe, (char* const*)argv);
        else execvp(exe, (char* const*)argv);
        fprintf(stderr, "dvi study: cannot run %s: %s\n", exe, strerror(errno));
        _exit(127);
    }
    j->pid = pid;
    return 0;
}

/* The observable from the run's probe CSV: the sample nearest `at`, or the
 * mean of the samples in [t0, t1]. */
static double read_observable(const char* dir, const study_settings* s, char* why, size_t why_size)
{
    char path[1400], msg[256];
    snprintf(path, sizeof path, "%s/%s.csv", dir, s->probe);
    size_t n = 0;
    char* text = cli_read_file(path, &n, msg, sizeof msg);
    if (!text) {
        snprintf(why, why_size, "%.400s", msg);
        return NAN;
    }
    /* the header: find the column "name [unit]" or "name" */
    char* line = text;
    char* nl = strchr(line, '\n');
    if (!nl) {
        free(text);
        snprintf(why, why_size, "%.400s: no rows", path);
        return NAN;
    }
    *nl = '\0';
    int col = -1, k = 0;
    for (char* p = line; p; k++) {
        char* c = strchr(p, ',');
        if (c) *c = '\0';
        size_t len = strlen(s->column);
        if (strncmp(p, s->column, len) == 0 && (p[len] == '\0' || p[len] == ' ')) col = k;
        p = c ? c + 1 : NULL;
    }
    double best_dt = INFINITY, value = NAN, sum = 0;
    long long count = 0;
    for (char* row = nl + 1; col >= 0 && *row;) {
        char* end = strchr(row, '\n');
        if (end) *end = '\0';
        char* p = row;
        double t = strtod(p, &p), v = NAN;
        for (int c = 1; c <= col && p; c++) {
            p = strchr(p, ',');
            if (p) v = strtod(++p, NULL);
        }
        if (s->have_window) {
            if (t >= s->t0 - 1e-9 && t <= s->t1 + 1e-9 && isfinite(v)) sum += v, count++;
        } else if (fabs(t - s->at) < best_dt) {
            best_dt = fabs(t - s->at);
            value = v;
        }
        row = end ? end + 1 : row + strlen(row);
    }
    free(text);
    if (col < 0) {
        snprintf(why, why_size, "%.300s: no column \"%.100s\"", path, s->column);
        return NAN;
    }
    if (s->have_window) {
        if (count == 0) snprintf(why, why_size, "%.400s: no sample in [%g, %g] s", path, s->t0, s->t1);
        return count ? sum / (double)count : NAN;
    }
    return value;
}

/* Fills j->r from the run's summary and probe (after it ended, or when skipped). */
static void collect(job* j, const study_settings* s, double min_size)
{
    study_run* r = &j->r;
    r->status = STUDY_NOT_RUN;
    if (j->exit_status < 0) return; /* not started: the reason says why */
    cJSON* sum = read_summary(j->dir);
    if (!sum) {
        if (!r->reason[0])
            snprintf(r->reason, sizeof r->reason, "no summary.json (exit status %d; see %.400s/log.txt)", j->exit_status,
                     j->dir);
        return;
    }
    const char* status = jstr(sum, "status");
    const char* error = jstr(sum, "error");
    r->max_penetration = jnum(sum, "max_penetration");
    r->penetration_fraction = isfinite(min_size) ? r->max_penetration / min_size : NAN;
    r->wall_seconds = jnum(sum, "wall_seconds");
    r->cpu_seconds = read_cpu(j->dir);
    r->simulated_seconds = jnum(sum, "simulated_time");
    const double nc = jnum(cJSON_GetObjectItemCaseSensitive(sum, "solver"), "not_converged_steps");
    r->not_converged_steps = isfinite(nc) && nc > 0 ? (long long)nc : 0;
    const cJSON* raised = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(sum, "health"), "raised");
    char kinds[128] = "";
    const cJSON* it;
    cJSON_ArrayForEach(it, raised)
    {
        if (!cJSON_IsString(it) || strcmp(it->valuestring, "penetration") == 0) continue; /* judged below */
        size_t l = strlen(kinds);
        snprintf(kinds + l, sizeof kinds - l, "%s%s", l ? ", " : "", it->valuestring);
    }
    if (status && strcmp(status, "failed") == 0) {
        r->status = STUDY_UNSTABLE;
        snprintf(r->reason, sizeof r->reason, "failed: %s", error ? error : "(no message)");
    } else if (!status || strcmp(status, "finished") != 0) {
        snprintf(r->reason, sizeof r->reason, "not finished (%s)", status ? status : "no status");
    } else if (kinds[0]) {
        r->status = STUDY_UNSTABLE;
        snprintf(r->reason, sizeof r->reason, "health: %s", kinds);
    } else {
        r->status = STUDY_STABLE;
        r->reason[0] = '\0';
    }
    r->observable = NAN;
    if (s->probe[0] && r->status == STUDY_STABLE) {
        char why[512] = "";
        r->observable = read_observable(j->dir, s, why, sizeof why);
        if (!isfinite(r->observable) && why[0]) snprintf(r->reason, sizeof r->reason, "%.500s", why);
    }
    cJSON_Delete(sum);
}

/* Whether the run of jobs[idx] is acceptable, judged with the ended runs of
 * its series (the finest stable one its reference), as the table will judge it. */
static bool rung_acceptable(job* jobs, int nj, int idx, const study_settings* s, const study_criteria* c,
                            double min_size)
{
    study_run* rs = malloc((size_t)nj * sizeof *rs);
    if (!rs) return false;
    int n = 0, at = -1;
    for (int i = 0; i < nj; i++) {
        if (jobs[i].state != JOB_ENDED || !study_same_series(&jobs[i].r, &jobs[idx].r)) continue;
        collect(&jobs[i], s, min_size);
        if (i == idx) at = n;
        rs[n++] = jobs[i].r;
    }
    study_judge(c, rs, n);
    const bool ok = at >= 0 && rs[at].acceptable;
    if (at >= 0) snprintf(jobs[idx].r.reason, sizeof jobs[idx].r.reason, "%s", rs[at].reason);
    free(rs);
    return ok;
}

/* Completes the settings from the scene (duration, probe interval, the
 * observable's default time) and checks them against it: a ladder for every
 * method, the observable's times within the run, its probe and column in the
 * model (built here when model is NULL). Problems are counted in e. */
static void check_settings(errs* e, study_settings* s, const dvi_scene* scene, const dvi_model* model,
                           bool observable_from_cli, bool probe_interval_from_cli)
{
    dvi_scene_settings ss = dvi_scene_get_settings(scene);
    if (s->duration == 0) s->duration = ss.duration;
    if (s->probe_interval == 0) s->probe_interval = s->duration / 300.0;
    for (int k = 0; k < M_COUNT; k++) s->auto_ladder[k] = s->method_on[k] && s->dt_count[k] == 0;
    if (s->auto_ladder[M_DVI]) { /* the scene's step × 2^k (the DEM ladder needs a model: default_dem_ladder) */
        for (int i = 0; i < DEFAULT_DVI_RUNGS; i++) {
            const double h = ss.dt * ldexp(1.0, i);
            if (i > 0 && h > s->duration / 4) break;
            s->dts[M_DVI][s->dt_count[M_DVI]++] = h;
        }
        snprintf(s->ladder_origin[M_DVI], sizeof s->ladder_origin[M_DVI],
                 "default: the scene's step %g s x 2^k, while the run below is acceptable, at most %d steps and "
                 "a quarter of the duration",
                 ss.dt, DEFAULT_DVI_RUNGS);
    }
    if (!s->probe[0]) return;
    if (!s->have_at && !s->have_window) s->have_at = true, s->at = s->duration;
    if (s->have_at && !(s->at >= 0 && s->at <= s->duration + 1e-12))
        err(e, "study.observable.at", "%g s is outside the run [0, %g] s", s->at, s->duration);
    if (s->have_window && !(s->t0 >= 0 && s->t0 <= s->t1 && s->t1 <= s->duration + 1e-12))
        err(e, "study.observable.window", "[%g, %g] s must satisfy 0 <= t0 <= t1 <= the duration %g s", s->t0, s->t1,
            s->duration);
    /* enough samples for the observable: STUDY_MIN_SAMPLES in its window, or
     * over the run for one at a time (an interval longer than the run left
     * the sample at t = 0 alone, and every run "agreed") */
    const double span = s->have_window ? s->t1 - s->t0 : s->duration;
    const double samples = floor(span / s->probe_interval * (1.0 + 1e-9)) + 1.0;
    if (samples < STUDY_MIN_SAMPLES)
        err(e, probe_interval_from_cli ? "--probe-interval" : "study.probe_interval",
            "%g s leaves %.0f sample%s %s; at least %d are needed (at most %g s)", s->probe_interval, samples,
            samples == 1 ? "" : "s",
            s->have_window ? "in the observable's window" : "over the run", STUDY_MIN_SAMPLES,
            span / (STUDY_MIN_SAMPLES - 1));
    /* the observable's probe and column must exist */
    dvi_model* own = NULL;
    char msg[512];
    if (!model) {
        if (dvi_model_create(scene, &own, msg, sizeof msg) != DVI_OK) {
            err(e, "scene", "cannot build the model: %s", msg);
            return;
        }
        model = own;
    }
    int found_probe = -1, found_col = -1;
    char list[1024] = "";
    for (int32_t i = 0; i < dvi_model_probe_count(model); i++) {
        dvi_probe_info pi;
        dvi_model_probe_info(model, i, &pi);
        if (strcmp(pi.name, s->probe) != 0) continue;
        found_probe = i;
        size_t l = 0;
        for (int32_t c = 1; c < pi.columns; c++) {
            if (strcmp(pi.column_names[c], s->column) == 0) found_col = c;
            l += (size_t)snprintf(list + l, l < sizeof list ? sizeof list - l : 0, "%s%s", c > 1 ? ", " : "",
                                  pi.column_names[c]);
            if (l >= sizeof list) l = sizeof list - 1;
        }
    }
    const char* place = observable_from_cli ? "--observable" : "study.observable.column";
    if (found_probe < 0) err(e, place, "no probe named \"%s\" in the scene", s->probe);
    else if (found_col < 0) err(e, place, "probe \"%s\" has no column \"%s\" (columns: %s)", s->probe, s->column, list);
    dvi_model_destroy(own);
}

/* The DEM ladder when none is given: the critical step of the scene's
 * stiffest contact (dvi_world_dem_stable_step, docs/dem.md "Stable step"),
 * at the stiffest modulus studied, rounded down to two digits, then halved.
 * The contacts are those of the scene's first steps (at most 64 of 1 us:
 * bodies that start touching). 0, or -1 with a message in why. */
static int default_dem_ladder(const char* scene_path, study_settings* s, char* why, size_t why_size)
{
    why[0] = '\0';
    dvi_scene* sc = NULL;
    dvi_scene_errors se;
    if (dvi_scene_load(scene_path, &sc, &se) != DVI_OK) {
        snprintf(why, why_size, "cannot load the scene: %s", se.text ? se.text : "");
        dvi_scene_errors_free(&se);
        return -1;
    }
    dvi_scene_overrides o;
    memset(&o, 0, sizeof o);
    o.method = "dem";
    o.dt = 1e-6;
    o.duration = 64e-6;
    double E = 0;
    for (int i = 0; i < s->modulus_count; i++) E = fmax(E, s->moduli[i]);
    o.young_modulus = E;
    dvi_model* m = NULL;
    char msg[512] = "";
    double h = INFINITY;
    if (dvi_scene_apply_overrides(sc, &o, &se) != DVI_OK) {
        snprintf(why, why_size, "%s", se.text ? se.text : "the DEM overrides were refused");
        dvi_scene_errors_free(&se);
    } else if (dvi_model_create(sc, &m, msg, sizeof msg) != DVI_OK) {
        snprintf(why, why_size, "cannot build the model: %s", msg);
    } else {
        for (int step = 0; step < 64 && !isfinite(h); step++) {
            if (dvi_model_step(m) < 0) {
                const char* w = dvi_error_message();
                snprintf(why, why_size, "its DEM step failed: %s", w ? w : "");
                break;
            }
            dvi_world_dem_stable_step(dvi_model_world_const(m), &h);
        }
        if (!isfinite(h) && !why[0])
            snprintf(why, why_size, "no contact in its first 64 steps of 1 us to take the stiffest contact's "
                                    "critical step from (bodies that start apart)");
    }
    dvi_model_destroy(m);
    dvi_scene_destroy(sc);
    if (!isfinite(h)) return -1;
    const double p = pow(10.0, floor(log10(h)) - 1.0); /* two digits, rounded down */
    const double h0 = floor(h / p) * p;
    s->dt_count[M_DEM] = 0;
    for (int i = 0; i < DEFAULT_DEM_RUNGS; i++) s->dts[M_DEM][s->dt_count[M_DEM]++] = ldexp(h0, -i);
    char at[64] = "the scene's materials";
    if (E > 0) snprintf(at, sizeof at, "E = %g Pa", E);
    snprintf(s->ladder_origin[M_DEM], sizeof s->ladder_origin[M_DEM],
             "default: the stiffest contact's critical step %.4g s (%s; docs/dem.md), to two digits, and its halves",
             h, at);
    return 0;
}

static void study_defaults(study_settings* s)
{
    memset(s, 0, sizeof *s);
    s->method_on[M_DVI] = s->method_on[M_DEM] = true;
    s->overlap_fraction = 0.01;
    s->tolerance = 0.02;
    s->relative = true;
    s->threads = 1;
}

int dvi_study_check_scene(const char* scene_arg, const void* json_root, const dvi_scene* scene,
                          const dvi_model* model, char* line, size_t line_size)
{
    line[0] = '\0';
    const cJSON* sto = cJSON_GetObjectItemCaseSensitive((const cJSON*)json_root, "study");
    if (!sto) return 0;
    study_settings s;
    study_defaults(&s);
    errs e = {0, scene_arg};
    parse_study_object(&e, sto, &s);
    check_settings(&e, &s, scene, model, false, false);
    if (e.count > 0) return e.count;
    size_t l = 0;
    int runs = 0;
    for (int k = 0; k < M_COUNT; k++) {
        if (!s.method_on[k]) continue;
        if (s.auto_ladder[k] && k == M_DEM) {
            int nE = s.modulus_count > 0 ? s.modulus_count : 1;
            runs += DEFAULT_DEM_RUNGS * nE;
            l += (size_t)snprintf(line + l, l < line_size ? line_size - l : 0,
                                  "%sdem %d steps (default: the stiffest contact's critical step and its halves)",
                                  l ? ", " : "", DEFAULT_DEM_RUNGS);
            if (s.modulus_count > 0)
                l += (size_t)snprintf(line + l, l < line_size ? line_size - l : 0, " x %d modul%s", nE,
                                      nE == 1 ? "us" : "i");
            continue;
        }
        double lo = INFINITY, hi = 0;
        for (int i = 0; i < s.dt_count[k]; i++) lo = fmin(lo, s.dts[k][i]), hi = fmax(hi, s.dts[k][i]);
        int nE = k == M_DEM && s.modulus_count > 0 ? s.modulus_count : 1;
        runs += s.dt_count[k] * nE;
        l += (size_t)snprintf(line + l, l < line_size ? line_size - l : 0, "%s%s %d step%s (%g to %g s%s)",
                              l ? ", " : "", METHOD_NAMES[k], s.dt_count[k], s.dt_count[k] == 1 ? "" : "s", lo, hi,
                              s.auto_ladder[k] ? "; default: the scene's step x 2^k" : "");
        if (k == M_DEM && s.modulus_count > 0)
            l += (size_t)snprintf(line + l, l < line_size ? line_size - l : 0, " x %d modul%s", nE, nE == 1 ? "us" : "i");
    }
    char head[64];
    snprintf(head, sizeof head, "%d runs: ", runs);
    char tail[512];
    if (s.probe[0] && s.have_window)
        snprintf(tail, sizeof tail, "; %s.%s mean over [%g, %g] s within %g%s", s.probe, s.column, s.t0, s.t1,
                 s.tolerance, s.relative ? " (relative)" : "");
    else if (s.probe[0])
        snprintf(tail, sizeof tail, "; %s.%s at %g s within %g%s", s.probe, s.column, s.at, s.tolerance,
                 s.relative ? " (relative)" : "");
    else
        snprintf(tail, sizeof tail, "; no observable");
    char body[1024];
    snprintf(body, sizeof body, "%s", line);
    snprintf(line, line_size, "%s%s%s; overlap below %g of the smallest shape", head, body, tail, s.overlap_fraction);
    return 0;
}

/* ---- the command ------------------------------------------------------------------ */

enum {
    O_METHODS = 1, O_DTS_DVI, O_DTS_DEM, O_MODULI, O_DURATION, O_OBSERVABLE, O_AT, O_WINDOW, O_RTOL, O_ATOL,
    O_OVERLAP, O_PROBE_INTERVAL, O_JOBS, O_THREADS, O_SOLVER, O_OUT, O_RESUME, O_QUIET
};
static const cli_option study_options[] = {
    {"methods", true, O_METHODS},       {"dts-dvi", true, O_DTS_DVI},
    {"dts-dem", true, O_DTS_DEM},       {"young-moduli", true, O_MODULI},
    {"duration", true, O_DURATION},     {"observable", true, O_OBSERVABLE},
    {"at", true, O_AT},                 {"window", true, O_WINDOW},
    {"rtol", true, O_RTOL},             {"atol", true, O_ATOL},
    {"overlap", true, O_OVERLAP},       {"probe-interval", true, O_PROBE_INTERVAL},
    {"jobs", true, O_JOBS},             {"threads", true, O_THREADS},
    {"solver", true, O_SOLVER},         {"out", true, O_OUT},
    {"resume", false, O_RESUME},        {"quiet", false, O_QUIET},
    {NULL, false, 0}};

static int compare_desc(const void* a, const void* b)
{
    double x = *(const double*)a, y = *(const double*)b;
    return x < y ? 1 : x > y ? -1 : 0;
}

int dvi_cmd_study(int argc, char** argv)
{
    study_settings s;
    study_defaults(&s);
    const char* scene_arg = NULL;
    /* the command line first (kept aside), then the scene's study object, then the line over it */
    cli_parser p;
    cli_init(&p, argc, argv, "study");
    const char* arg;
    int id;
    const char* given[O_QUIET + 1] = {0};
    while ((id = cli_next(&p, study_options, &arg)) != CLI_END) {
        if (id == CLI_ERROR) return DVI_EXIT_USAGE;
        if (id == CLI_HELP) {
            dvi_print_help("study");
            return DVI_EXIT_OK;
        }
        if (id == CLI_POSITIONAL) {
            if (scene_arg) return cli_usage_error("study", "unexpected argument '%s' (one scene file only)", arg);
            scene_arg = arg;
            continue;
        }
        given[id] = arg ? arg : "";
    }
    if (!scene_arg) return cli_usage_error("study", "missing SCENE (a scene file)");

    /* the scene: the library's checks, then its study object */
    dvi_scene* scene = NULL;
    dvi_scene_errors se;
    dvi_status st = dvi_scene_load(scene_arg, &scene, &se);
    if (st != DVI_OK) {
        if (se.text) cli_print_prefixed_lines(scene_arg, se.text);
        else fprintf(stderr, "%s: %s\n", scene_arg, dvi_status_string(st));
        dvi_scene_errors_free(&se);
        return DVI_EXIT_USAGE;
    }
    cli_print_scene_warnings(scene_arg, scene);
    char msg[1024];
    size_t n = 0;
    char* text = cli_read_file(scene_arg, &n, msg, sizeof msg);
    cJSON* root = text ? cJSON_Parse(text) : NULL;
    free(text);
    if (!root) {
        fprintf(stderr, "%s: %s\n", scene_arg, text ? "cannot parse" : msg);
        dvi_scene_destroy(scene);
        return DVI_EXIT_USAGE;
    }
    errs e = {0, scene_arg};
    const cJSON* sto = cJSON_GetObjectItemCaseSensitive(root, "study");
    if (sto) parse_study_object(&e, sto, &s);
    if (given[O_METHODS]) {
        s.method_on[M_DVI] = s.method_on[M_DEM] = false;
        char buf[256];
        snprintf(buf, sizeof buf, "%s", given[O_METHODS]);
        int i = 0;
        for (char* tok = strtok(buf, ","); tok; tok = strtok(NULL, ","), i++) {
            char place[64];
            snprintf(place, sizeof place, "--methods[%d]", i);
            if (!strcmp(tok, "dvi")) s.method_on[M_DVI] = true;
            else if (!strcmp(tok, "dem")) s.method_on[M_DEM] = true;
            else err(&e, place, "unknown method \"%s\" (dvi or dem)", tok);
        }
        if (i == 0) err(&e, "--methods", "must not be empty");
    }
    if (given[O_DTS_DVI]) s.dt_count[M_DVI] = text_positive_list(&e, given[O_DTS_DVI], "dts-dvi", s.dts[M_DVI], MAX_LADDER);
    if (given[O_DTS_DEM]) s.dt_count[M_DEM] = text_positive_list(&e, given[O_DTS_DEM], "dts-dem", s.dts[M_DEM], MAX_LADDER);
    if (given[O_MODULI]) s.modulus_count = text_positive_list(&e, given[O_MODULI], "young-moduli", s.moduli, MAX_MODULI);
    if (given[O_DURATION] &&
        (!cli_parse_double("study", "duration", given[O_DURATION], &s.duration) || !(s.duration > 0)))
        err(&e, "--duration", "must be > 0");
    if (given[O_OBSERVABLE]) {
        s.have_at = s.have_window = false;
        split_observable(&e, "--observable", given[O_OBSERVABLE], &s);
    }
    if (given[O_AT]) {
        if (!cli_parse_double("study", "at", given[O_AT], &s.at)) e.count++;
        s.have_at = true, s.have_window = false;
    }
    if (given[O_WINDOW]) {
        char* end;
        s.t0 = strtod(given[O_WINDOW], &end);
        if (*end != ',') err(&e, "--window", "must be T0,T1");
        else {
            s.t1 = strtod(end + 1, &end);
            if (*end) err(&e, "--window", "must be T0,T1");
        }
        s.have_window = true, s.have_at = false;
    }
    if (given[O_RTOL]) {
        if (!cli_parse_double("study", "rtol", given[O_RTOL], &s.tolerance) || !(s.tolerance > 0))
            err(&e, "--rtol", "must be > 0");
        s.relative = true;
    }
    if (given[O_ATOL]) {
        if (given[O_RTOL]) err(&e, "--atol", "--rtol or --atol, not both");
        if (!cli_parse_double("study", "atol", given[O_ATOL], &s.tolerance) || !(s.tolerance > 0))
            err(&e, "--atol", "must be > 0");
        s.relative = false;
    }
    if (given[O_OVERLAP] &&
        (!cli_parse_double("study", "overlap", given[O_OVERLAP], &s.overlap_fraction) || !(s.overlap_fraction > 0)))
        err(&e, "--overlap", "must be > 0");
    if (given[O_PROBE_INTERVAL] &&
        (!cli_parse_double("study", "probe-interval", given[O_PROBE_INTERVAL], &s.probe_interval) ||
         !(s.probe_interval > 0)))
        err(&e, "--probe-interval", "must be > 0");
    if (given[O_JOBS] && !cli_parse_int64("study", "jobs", given[O_JOBS], 1, 1024, &s.jobs)) e.count++;
    if (given[O_THREADS] && !cli_parse_int64("study", "threads", given[O_THREADS], 1, 1024, &s.threads)) e.count++;
    if (given[O_SOLVER]) {
        if (dvi_solver_index(given[O_SOLVER]) < 0) err(&e, "--solver", "unknown solver \"%s\"", given[O_SOLVER]);
        s.solver = given[O_SOLVER];
    }
    s.out = given[O_OUT];
    s.resume = given[O_RESUME] != NULL;
    s.quiet = given[O_QUIET] != NULL;

    /* what follows from the scene */
    dvi_scene_settings ss = dvi_scene_get_settings(scene);
    if (s.jobs == 0) {
        long c = sysconf(_SC_NPROCESSORS_ONLN);
        s.jobs = c > 0 ? c : 1;
    }
    check_settings(&e, &s, scene, NULL, given[O_OBSERVABLE] != NULL, given[O_PROBE_INTERVAL] != NULL);
    for (int k = 0; k < M_COUNT; k++)
        if (!s.auto_ladder[k])
            snprintf(s.ladder_origin[k], sizeof s.ladder_origin[k], "%s%s",
                     given[k == M_DVI ? O_DTS_DVI : O_DTS_DEM] ? "--dts-" : "study.dts.", METHOD_NAMES[k]);
    if (e.count == 0 && s.auto_ladder[M_DEM]) {
        char why[1024];
        if (default_dem_ladder(scene_arg, &s, why, sizeof why) != 0)
            err(&e, "study.dts.dem", "no ladder given, and none can be chosen: %s; give one (study.dts.dem or --dts-dem)",
                why);
    }
    const bool have_obs = s.probe[0] != '\0';
    double min_size = ss.smallest_size; /* as the health monitor measures shapes (docs/health.md) */
    char scene_abs[4096];
    if (!realpath(scene_arg, scene_abs)) snprintf(scene_abs, sizeof scene_abs, "%s", scene_arg);
    char scene_name[256];
    snprintf(scene_name, sizeof scene_name, "%s", ss.name && *ss.name ? ss.name : "scene");
    cJSON_Delete(root);
    dvi_scene_destroy(scene);
    if (e.count > 0) {
        fprintf(stderr, "dvi study: %d problem%s; nothing run\n", e.count, e.count == 1 ? "" : "s");
        return DVI_EXIT_USAGE;
    }
    /* the runs are this program: /proc/self/exe (Linux), else argv[0] as a path, else dvi on the PATH */
    char exe[4096];
    ssize_t el = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (el > 0) exe[el] = '\0';
    else if (!strchr(dvi_argv0, '/') || !realpath(dvi_argv0, exe)) snprintf(exe, sizeof exe, "%s", dvi_argv0);

    /* the runs: each method's ladder (largest step first); DEM once per modulus */
    char out_dir[900];
    if (s.out) snprintf(out_dir, sizeof out_dir, "%s", s.out);
    else snprintf(out_dir, sizeof out_dir, "out/%s_study", scene_name);
    int max_jobs = MAX_LADDER * (1 + (s.modulus_count > 0 ? s.modulus_count : 1));
    job* jobs = calloc((size_t)max_jobs, sizeof *jobs);
    study_run* runs = calloc((size_t)max_jobs, sizeof *runs);
    if (!jobs || !runs) {
        free(jobs);
        free(runs);
        fprintf(stderr, "dvi study: out of memory\n");
        return DVI_EXIT_FAILED;
    }
    int nj = 0;
    /* the ladders as chosen (a default DVI ladder from the scene's step up, a default DEM one from the
     * critical step down, a given one as given), one line each and in study.json */
    static double ladder_dts[M_COUNT][MAX_LADDER];
    study_ladder ladders[M_COUNT];
    int nl = 0;
    for (int k = 0; k < M_COUNT; k++) {
        if (!s.method_on[k]) continue;
        memcpy(ladder_dts[k], s.dts[k], (size_t)s.dt_count[k] * sizeof(double));
        ladders[nl++] = (study_ladder){METHOD_NAMES[k], ladder_dts[k], s.dt_count[k], s.ladder_origin[k]};
        printf("ladder %s:", METHOD_NAMES[k]);
        for (int i = 0; i < s.dt_count[k]; i++) printf("%s %.6g", i ? "," : "", s.dts[k][i]);
        printf(" s (%s)\n", s.ladder_origin[k]);
    }
    fflush(stdout);
    for (int k = 0; k < M_COUNT; k++) {
        if (!s.method_on[k]) continue;
        qsort(s.dts[k], (size_t)s.dt_count[k], sizeof(double), compare_desc);
        int nE = k == M_DEM && s.modulus_count > 0 ? s.modulus_count : 1;
        for (int m = 0; m < nE; m++)
            for (int i = 0; i < s.dt_count[k]; i++) {
                if (i > 0 && close_to(s.dts[k][i], s.dts[k][i - 1])) continue;
                job* j = &jobs[nj];
                /* a default DVI ladder climbs: each step only once the step below it is acceptable */
                j->after = k == M_DVI && s.auto_ladder[k] && i + 1 < s.dt_count[k] ? nj + 1 : -1;
                j->state = JOB_WAITING;
                nj++;
                snprintf(j->r.method, sizeof j->r.method, "%s", METHOD_NAMES[k]);
                j->r.dt = s.dts[k][i];
                j->r.young_modulus = k == M_DEM && s.modulus_count > 0 ? s.moduli[m] : NAN;
                if (isnan(j->r.young_modulus))
                    snprintf(j->dir, sizeof j->dir, "%s/runs/%s_dt%.6g", out_dir, j->r.method, j->r.dt);
                else
                    snprintf(j->dir, sizeof j->dir, "%s/runs/%s_E%.6g_dt%.6g", out_dir, j->r.method,
                             j->r.young_modulus, j->r.dt);
                j->r.observable = j->r.error = j->r.max_penetration = j->r.penetration_fraction = NAN;
                j->r.wall_seconds = j->r.simulated_seconds = j->r.cpu_seconds = NAN;
                j->pid = -1;
            }
    }
    /* two runs in one directory: steps or moduli that differ only beyond the names' six digits */
    for (int i = 0; i < nj; i++)
        for (int k = 0; k < i; k++)
            if (strcmp(jobs[i].dir, jobs[k].dir) == 0) {
                fprintf(stderr, "dvi study: %s: two runs would share this directory (a step or a modulus given "
                                "twice, or two that agree to six digits)\n",
                        jobs[i].dir);
                free(jobs);
                free(runs);
                return DVI_EXIT_USAGE;
            }
    if (dvi_make_dirs(out_dir, msg, sizeof msg) != 0) {
        fprintf(stderr, "dvi study: %s\n", msg);
        free(jobs);
        free(runs);
        return DVI_EXIT_FAILED;
    }
    if (!s.quiet)
        fprintf(stderr, "dvi study: %s: %d runs%s of %g s into %s/runs, %lld at a time\n", scene_arg, nj,
                s.auto_ladder[M_DVI] && s.method_on[M_DVI] ? " at most" : "", s.duration, out_dir, (long long)s.jobs);
    const study_criteria c = {s.overlap_fraction, have_obs, s.tolerance, s.relative};

    /* --resume: skip the finished runs made with the same settings; continue the interrupted ones */
    bool* resume_it = calloc((size_t)nj + 1, sizeof *resume_it);
    int skipped = 0;
    for (int i = 0; s.resume && i < nj; i++) {
        cJSON* sum = read_summary(jobs[i].dir);
        if (sum && summary_matches(sum, &jobs[i], s.duration, s.probe_interval, scene_abs)) {
            const char* status = jstr(sum, "status");
            if (status && (!strcmp(status, "finished") || !strcmp(status, "failed"))) {
                jobs[i].skipped = true;
                jobs[i].state = JOB_ENDED;
                skipped++;
            } else if (status && (!strcmp(status, "interrupted") || !strcmp(status, "running"))) {
                char cp[1200];
                struct stat st_cp;
                snprintf(cp, sizeof cp, "%s/checkpoint/run.json", jobs[i].dir);
                resume_it[i] = stat(cp, &st_cp) == 0; /* else (killed before its first checkpoint): afresh */
            }
        }
        cJSON_Delete(sum);
    }
    if (s.resume && !s.quiet) fprintf(stderr, "dvi study: --resume: %d of %d runs already done\n", skipped, nj);

    struct sigaction sa, sc, old_int, old_term, old_chld;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    memset(&sc, 0, sizeof sc);
    sc.sa_handler = on_child;
    sigemptyset(&sc.sa_mask);
    sc.sa_flags = SA_NOCLDSTOP;
    sigaction(SIGCHLD, &sc, &old_chld);
    interrupt_hook hook = read_interrupt_hook();
    hook_point(&hook, "start", 0);
    sigset_t blocked, old_mask, wait_mask;
    stop_signals(&blocked);
    sigaddset(&blocked, SIGCHLD);
    sigprocmask(SIG_BLOCK, &blocked, &old_mask);
    wait_mask = old_mask;
    sigdelset(&wait_mask, SIGINT);
    sigdelset(&wait_mask, SIGTERM);
    sigdelset(&wait_mask, SIGCHLD);
    const long long stop_at_step = strcmp(hook.point, "step") == 0 ? hook.n : 0;
    /* the longest runs (the smallest steps) first, so that the last ones to end are short */
    int* order = malloc((size_t)(nj > 0 ? nj : 1) * sizeof *order);
    if (!order) {
        fprintf(stderr, "dvi study: out of memory\n");
        free(jobs);
        free(runs);
        free(resume_it);
        return DVI_EXIT_FAILED;
    }
    for (int i = 0; i < nj; i++) {
        int k = i;
        while (k > 0 && jobs[order[k - 1]].r.dt > jobs[i].r.dt) {
            order[k] = order[k - 1];
            k--;
        }
        order[k] = i;
    }
    int running = 0, done = skipped, ended = 0, started = 0;
    bool forwarded = false;
    const double t_start = cli_now();
    for (;;) {
        if (g_stop && !forwarded) { /* pass the stop on, once: the runs write their checkpoints and end */
            for (int i = 0; i < nj; i++)
                if (jobs[i].pid > 0) kill(jobs[i].pid, SIGINT);
            forwarded = true;
        }
        for (int q = 0; !g_stop && running < s.jobs && q < nj; q++) {
            const int ji = order[q];
            job* j = &jobs[ji];
            if (j->state != JOB_WAITING) continue;
            if (j->after >= 0) { /* a rung of a default DVI ladder: only above an acceptable one */
                const job* below = &jobs[j->after];
                if (below->state == JOB_WAITING || below->state == JOB_RUNNING) continue;
                if (below->state == JOB_DROPPED || !rung_acceptable(jobs, nj, j->after, &s, &c, min_size)) {
                    j->state = JOB_DROPPED;
                    if (!s.quiet && below->state != JOB_DROPPED)
                        fprintf(stderr, "dvi study: the %s ladder stops at %g s, not acceptable (%s): %g s and above "
                                        "not run\n",
                                j->r.method, below->r.dt, below->r.reason, j->r.dt);
                    continue;
                }
            }
            if (start_job(j, exe, scene_abs, &s, resume_it[ji], stop_at_step) == 0) {
                j->state = JOB_RUNNING;
                running++;
                hook_point(&hook, "spawn", ++started);
            } else {
                j->state = JOB_ENDED;
                j->exit_status = -1;
            }
        }
        if (running == 0) break;
        int status = 0;
        const double cpu0 = children_cpu();
        pid_t pid = waitpid(-1, &status, WNOHANG);
        const double cpu1 = children_cpu(); /* the difference is the child just waited for */
        if (pid == 0) { /* none ended yet: wait for a run to end or a stop, signals let through only here */
            if (g_stop && !forwarded) continue; /* raised by the hook while starting: pass it on first */
            sigsuspend(&wait_mask);
            continue;
        }
        if (pid < 0) {
            if (errno == EINTR) continue;
            break;
        }
        for (int i = 0; i < nj; i++)
            if (jobs[i].pid == pid) {
                job* j = &jobs[i];
                j->pid = -1;
                j->state = JOB_ENDED;
                j->exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
                write_cpu(j->dir, j->cpu_before + (cpu1 - cpu0));
                running--;
                if (j->resumed && !g_stop && j->exit_status != DVI_EXIT_OK &&
                    j->exit_status != DVI_EXIT_INTERRUPTED && !summary_final(j->dir)) {
                    /* its checkpoint could not be continued (damaged, or from another version): afresh */
                    if (!s.quiet)
                        fprintf(stderr, "dvi study: %s: could not continue from its checkpoint (exit %d; see "
                                        "log.txt); running it afresh\n",
                                j->dir, j->exit_status);
                    if (start_job(j, exe, scene_abs, &s, false, stop_at_step) == 0) {
                        j->state = JOB_RUNNING;
                        running++;
                        continue;
                    }
                    j->exit_status = -1;
                }
                done++;
                if (!s.quiet) {
                    char el_s[64];
                    cli_format_seconds(cli_now() - t_start, el_s, sizeof el_s);
                    fprintf(stderr, "dvi study: [%d/%d] %s done (exit %d), %s elapsed\n", done, nj, j->dir,
                            j->exit_status, el_s);
                }
                hook_point(&hook, "ended", ++ended);
            }
    }
    sigprocmask(SIG_SETMASK, &old_mask, NULL);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    sigaction(SIGCHLD, &old_chld, NULL);
    free(resume_it);
    free(order);
    if (g_stop) {
        fprintf(stderr, "dvi study: interrupted; `dvi study %s --resume%s%s` continues (same options)\n", scene_arg,
                s.out ? " --out " : "", s.out ? s.out : "");
        free(jobs);
        free(runs);
        return DVI_EXIT_INTERRUPTED;
    }

    /* judge, write (the rungs of a default ladder above its first unacceptable run were not run) */
    int nr = 0;
    for (int i = 0; i < nj; i++) {
        if (jobs[i].state == JOB_DROPPED) continue;
        collect(&jobs[i], &s, min_size);
        runs[nr++] = jobs[i].r;
    }
    study_judge(&c, runs, nr);
    char obs[512] = "";
    if (have_obs) {
        if (s.have_window) snprintf(obs, sizeof obs, "%s.%s mean over [%g, %g] s", s.probe, s.column, s.t0, s.t1);
        else snprintf(obs, sizeof obs, "%s.%s at %g s", s.probe, s.column, s.at);
    }
    study_table_info info = {scene_arg, scene_name, have_obs ? obs : NULL, &c, s.duration, ladders, nl};
    char csv[2100], json[2100], svg[2100];
    snprintf(csv, sizeof csv, "%s/study.csv", out_dir);
    snprintf(json, sizeof json, "%s/study.json", out_dir);
    snprintf(svg, sizeof svg, "%s/study.svg", out_dir);
    int rc = DVI_EXIT_OK;
    if (study_write_csv(csv, runs, nr, msg, sizeof msg) != 0 || study_write_json(json, &info, runs, nr, msg, sizeof msg) != 0 ||
        study_write_svg(svg, &info, runs, nr, msg, sizeof msg) != 0) {
        fprintf(stderr, "dvi study: %s\n", msg);
        rc = DVI_EXIT_FAILED;
    }
    printf("%s: %s; overlap below %g of the smallest shape (%g m)", scene_name, have_obs ? obs : "no observable",
           s.overlap_fraction, min_size);
    if (have_obs) printf("; %s tolerance %g", s.relative ? "relative" : "absolute", s.tolerance);
    printf("\n%-5s %10s %9s %-8s %11s %12s %11s %9s %9s %4s  %s\n", "meth.", "dt (s)", "E (Pa)", "status",
           "overlap/size", "observable", "error", "wall s/s", "CPU s/s", "ok", "reason");
    for (int i = 0; i < nr; i++) {
        const study_run* r = &runs[i];
        char E[32] = "-";
        if (!isnan(r->young_modulus)) snprintf(E, sizeof E, "%.3g", r->young_modulus);
        printf("%-5s %10.4g %9s %-8s %11.3g %12.6g %11.3g %9.4g %9.4g %4s  %s%s\n", r->method, r->dt, E,
               r->status == STUDY_STABLE ? "stable" : r->status == STUDY_UNSTABLE ? "unstable" : "not run",
               r->penetration_fraction, r->observable, r->error, r->wall_seconds / r->simulated_seconds,
               r->cpu_seconds / r->simulated_seconds, r->acceptable ? "yes" : "no", r->reference ? "(reference) " : "",
               r->reason);
    }
    printf("largest acceptable step and its cost:\n");
    study_print_summary(stdout, runs, nr);
    printf("table: %s, %s; plot: %s\n", csv, json, svg);
    free(jobs);
    free(runs);
    return rc;
}
