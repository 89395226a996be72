/* The `dvi` command: option parsing and small utilities. */
#include "dvi_cli.h"

#include <dvi/dvi.h>

/* the library's check of an input file (header-only, POSIX) */
#include "../src/base/regular_file.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

void cli_init(cli_parser* p, int argc, char** argv, const char* command)
{
    p->argc = argc;
    p->argv = argv;
    p->index = 1;
    p->command = command;
    p->only_positional = false;
}

int cli_usage_error(const char* command, const char* fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (command)
        fprintf(stderr, "dvi %s: ", command);
    else
        fputs("dvi: ", stderr);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    if (command)
        fprintf(stderr, "\nTry 'dvi help %s'.\n", command);
    else
        fputs("\nTry 'dvi --help'.\n", stderr);
    return DVI_EXIT_USAGE;
}

/* Edit distance (insertions, deletions, substitutions) between a[0..la)
 * and b, capped at 9 (option names are short). */
static int edit_distance(const char* a, size_t la, const char* b)
{
    const size_t lb = strlen(b);
    if (la > 40 || lb > 40) return 9;
    int row[41];
    for (size_t j = 0; j <= lb; j++) row[j] = (int)j;
    for (size_t i = 1; i <= la; i++) {
        int diag = row[0];
        row[0] = (int)i;
        for (size_t j = 1; j <= lb; j++) {
            const int up = row[j];
            int best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best) best = up + 1;
            if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[lb] < 9 ? row[lb] : 9;
}

/* The option a mistyped name most likely meant: the only one it begins, or
 * the nearest within two edits (one for names of four letters or fewer);
 * NULL when none or a tie. */
static const char* nearest_option(const cli_option* options, const char* name, size_t len)
{
    const char* prefix = NULL;
    int prefixes = 0;
    for (const cli_option* o = options; o && o->name; o++)
        if (len > 0 && strncmp(o->name, name, len) == 0) prefix = o->name, prefixes++;
    if (prefixes == 1) return prefix;
    const char* best = NULL;
    int best_d = len <= 4 ? 2 : 3, ties = 0;
    for (const cli_option* o = options; o && o->name; o++) {
        const int d = edit_distance(name, len, o->name);
        if (d < best_d) best = o->name, best_d = d, ties = 0;
        else if (d == best_d && best) ties++;
    }
    return ties == 0 ? best : NULL;
}

int cli_next(cli_parser* p, const cli_option* options, const char** arg)
{
    *arg = NULL;
    if (p->index >= p->argc) return CLI_END;
    const char* a = p->argv[p->index++];
    if (p->only_positional || a[0] != '-' || a[1] == '\0') { /* "-" alone is an argument */
        *arg = a;
        return CLI_POSITIONAL;
    }
    if (strcmp(a, "--") == 0) {
        p->only_positional = true;
        return cli_next(p, options, arg);
    }
    if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) return CLI_HELP;
    if (a[1] != '-') {
        cli_usage_error(p->command, "unknown option '%s'", a);
        return CLI_ERROR;
    }
    const char* name = a + 2;
    const char* eq = strchr(name, '=');
    size_t len = eq ? (size_t)(eq - name) : strlen(name);
    for (const cli_option* o = options; o && o->name; o++) {
        if (strlen(o->name) != len || strncmp(o->name, name, len) != 0) continue;
        if (!o->has_arg) {
            if (eq) {
                cli_usage_error(p->command, "option '--%s' takes no value", o->name);
                return CLI_ERROR;
            }
            return o->id;
        }
        if (eq) {
            *arg = eq + 1;
        } else {
            if (p->index >= p->argc) {
                cli_usage_error(p->command, "option '--%s' needs a value", o->name);
                return CLI_ERROR;
            }
            *arg = p->argv[p->index++];
        }
        return o->id;
    }
    const char* near = nearest_option(options, name, len);
    if (near)
        cli_usage_error(p->command, "unknown option '--%.*s' (did you mean '--%s'?)", (int)len, name, near);
    else
        cli_usage_error(p->command, "unknown option '--%.*s'", (int)len, name);
    return CLI_ERROR;
}

bool cli_parse_double(const char* command, const char* option, const char* text, double* out)
{
    char* end = NULL;
    errno = 0;
    double v = strtod(text, &end);
    if (end == text || *end != '\0' || errno == ERANGE || !isfinite(v)) {
        cli_usage_error(command, "--%s: not a finite number: '%s'", option, text);
        return false;
    }
    *out = v;
    return true;
}

bool cli_parse_int64(const char* command, const char* option, const char* text, int64_t min, int64_t max,
                     int64_t* out)
{
    char* end = NULL;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (end == text || *end != '\0' || errno == ERANGE) {
        cli_usage_error(command, "--%s: not an integer: '%s'", option, text);
        return false;
    }
    if (v < min || v > max) {
        cli_usage_error(command, "--%s: must be in [%" PRId64 ", %" PRId64 "] (got %lld)", option, min, max, v);
        return false;
    }
    *out = (int64_t)v;
    return true;
}

double cli_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

char* cli_read_file(const char* path, size_t* size, char* msg, size_t msg_size)
{
    char why[160];
    FILE* f = base_open_regular(path, (uint64_t)1 << 34, NULL, why, sizeof why);
    if (!f) {
        snprintf(msg, msg_size, "%s: %s", path, why);
        return NULL;
    }
    size_t cap = 4096, n = 0;
    char* buf = malloc(cap);
    if (!buf) {
        fclose(f);
        snprintf(msg, msg_size, "%s: out of memory", path);
        return NULL;
    }
    for (;;) {
        if (n + 1 >= cap) {
            char* nb = realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                fclose(f);
                snprintf(msg, msg_size, "%s: out of memory", path);
                return NULL;
            }
            buf = nb;
            cap *= 2;
        }
        size_t got = fread(buf + n, 1, cap - 1 - n, f);
        n += got;
        if (got == 0) break;
    }
    if (ferror(f)) {
        snprintf(msg, msg_size, "%s: read error", path);
        free(buf);
        fclose(f);
        return NULL;
    }
    fclose(f);
    buf[n] = '\0';
    if (size) *size = n;
    return buf;
}

uint64_t cli_hash64(const void* data, size_t size)
{
    const unsigned char* b = data;
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < size; i++) {
        h ^= b[i];
        h *= 1099511628211ULL;
    }
    return h;
}

void cli_hash_hex(uint64_t h, char out[17])
{
    snprintf(out, 17, "%016" PRIx64, h);
}

char* cli_strdup(const char* s)
{
    size_t n = strlen(s) + 1;
    char* d = malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

char* cli_path_join(const char* a, const char* b)
{
    if (b[0] == '/' || a[0] == '\0') return cli_strdup(b);
    size_t na = strlen(a), nb = strlen(b);
    bool slash = a[na - 1] == '/';
    char* d = malloc(na + nb + 2);
    if (!d) return NULL;
    memcpy(d, a, na);
    if (!slash) d[na++] = '/';
    memcpy(d + na, b, nb + 1);
    return d;
}

void cli_print_prefixed_lines(const char* prefix, const char* text)
{
    if (!text) return;
    const char* p = text;
    while (*p) {
        const char* nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        size_t np = strlen(prefix);
        bool named = len > np && strncmp(p, prefix, np) == 0 && p[np] == ':'; /* "file:3:1: ..." */
        if (len > 0 && named)
            fprintf(stderr, "%.*s\n", (int)len, p);
        else if (len > 0)
            fprintf(stderr, "%s: %.*s\n", prefix, (int)len, p);
        p += len;
        if (*p == '\n') p++;
    }
}

void cli_format_seconds(double s, char* out, size_t size)
{
    if (!isfinite(s) || s < 0) {
        snprintf(out, size, "?");
    } else if (s < 60) {
        snprintf(out, size, "%.1f s", s);
    } else if (s < 3600) {
        long t = lround(s);
        snprintf(out, size, "%ld min %02ld s", t / 60, t % 60);
    } else {
        long t = lround(s / 60);
        snprintf(out, size, "%ld h %02ld min", t / 60, t % 60);
    }
}

void cli_format_step_time(double s, char* out, size_t size)
{
    if (!isfinite(s) || s < 0)
        snprintf(out, size, "?");
    else if (s < 1.0)
        snprintf(out, size, "%.3g ms", 1e3 * s); /* 0.371 ms, 2.45 ms, 167 ms */
    else if (s < 1000.0)
        snprintf(out, size, "%.3g s", s); /* 1.67 s, 12.3 s, 167 s */
    else
        snprintf(out, size, "%.0f s", s);
}

int64_t cli_steps_for(double duration, double dt)
{
    double n = duration / dt;
    if (!(n < 9e15)) return INT64_MAX / 2;
    double k = nearbyint(n);
    if (fabs(n - k) <= 1e-9 * fmax(1.0, n)) return (int64_t)k;
    return (int64_t)ceil(n);
}

void cli_remove_matching(const char* dir, bool (*match)(const char* name, const void* ctx), const void* ctx)
{
    DIR* d = opendir(dir);
    if (!d) return;
    /* collect first: whether readdir still sees every entry while the
     * directory changes is unspecified */
    char** names = NULL;
    size_t count = 0, cap = 0;
    struct dirent* e;
    while ((e = readdir(d)) != NULL) {
        if (!match(e->d_name, ctx)) continue;
        if (count == cap) {
            size_t nc = cap ? 2 * cap : 16;
            char** nn = realloc(names, nc * sizeof *nn);
            if (!nn) break;
            names = nn;
            cap = nc;
        }
        names[count] = cli_path_join(dir, e->d_name);
        if (names[count]) count++;
    }
    closedir(d);
    for (size_t i = 0; i < count; i++) {
        unlink(names[i]);
        free(names[i]);
    }
    free(names);
}

void cli_print_scene_warnings(const char* scene_arg, const dvi_scene* scene)
{
    char prefix[1024];
    snprintf(prefix, sizeof prefix, "%s: warning", scene_arg);
    cli_print_prefixed_lines(prefix, dvi_scene_warnings(scene));
}

int cli_load_scene(const char* scene_arg, const dvi_scene_overrides* overrides, dvi_scene** scene, int* problems)
{
    dvi_scene_errors errs = {0};
    /* by the name the user gave, so that messages naming the file match it */
    dvi_status st = dvi_scene_load(scene_arg, scene, &errs);
    if (st >= 0) {
        dvi_scene_errors_free(&errs);
        dvi_scene_overrides none;
        memset(&none, 0, sizeof none);
        st = dvi_scene_apply_overrides(*scene, overrides ? overrides : &none, &errs);
    }
    if (st < 0) {
        if (errs.count > 0)
            cli_print_prefixed_lines(scene_arg, errs.text);
        else
            fprintf(stderr, "%s: %s\n", scene_arg, dvi_status_string(st));
        if (problems) *problems = errs.count > 0 ? (int)errs.count : 1;
        dvi_scene_errors_free(&errs);
        dvi_scene_destroy(*scene);
        *scene = NULL;
        return st == DVI_ERR_NOMEM ? DVI_EXIT_FAILED : DVI_EXIT_USAGE;
    }
    dvi_scene_errors_free(&errs);
    cli_print_scene_warnings(scene_arg, *scene);
    return -1;
}

void cli_solver_list(const char* law, char* out, size_t size)
{
    dvi_friction_law want = strcmp(law, "coulomb") == 0 ? DVI_LAW_COULOMB : DVI_LAW_CCP;
    size_t n = 0;
    out[0] = '\0';
    for (int32_t k = 0; k < 2 * dvi_solver_count() && n < size; k++) {
        /* the solvers of the law first, then those whose setting picks it, with their option */
        const int32_t i = k % dvi_solver_count();
        const bool by_option = dvi_solver_law(i) != want;
        if (!dvi_solver_supports(i, want, DVI_BLOCK_FRICTION) || by_option != (k >= dvi_solver_count())) continue;
        char option[64] = ""; /* the setting as an option: "lemke.coulomb", --lemke-coulomb */
        const char* setting = dvi_solver_law_setting(i); /* set: dvi_solver_supports holds */
        if (by_option && setting) snprintf(option, sizeof option, " --%s", setting);
        for (char* c = option; *c; c++)
            if (*c == '.' || *c == '_') *c = '-';
        int w = snprintf(out + n, size - n, "%s%s%s", n ? ", " : "", dvi_solver_name(i), option);
        if (w < 0) break;
        n += (size_t)w;
    }
}
