/* bench_cli — see bench_cli.h. */
#include "bench_cli.h"

#include <dvi/ccp.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool cli_parse_int(const char* s, int64_t lo, int64_t hi, int64_t* out)
{
    if (!s || !*s) return false;
    char* end = NULL;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno != 0 || *end != '\0' || v < lo || v > hi) return false;
    *out = v;
    return true;
}

bool cli_int(const char* prog, const char* opt, const char* s, int64_t lo, int64_t hi, const char* what,
             int64_t* out)
{
    if (cli_parse_int(s, lo, hi, out)) return true;
    fprintf(stderr, "%s: %s: expected %s, got '%s'\n", prog, opt, what, s ? s : "");
    return false;
}

bool cli_double(const char* prog, const char* opt, const char* s, double min, bool min_open, double max,
                const char* what, double* out)
{
    char* end = NULL;
    double x = s && *s ? strtod(s, &end) : NAN;
    if (end && *end == '\0' && isfinite(x) && (min_open ? x > min : x >= min) && x <= max) {
        *out = x;
        return true;
    }
    fprintf(stderr, "%s: %s: expected %s, got '%s'\n", prog, opt, what, s ? s : "");
    return false;
}

int cli_int_list(const char* s, long* out, int max, long lo, long hi)
{
    int n = 0;
    if (strcmp(s, "none") == 0 || *s == '\0') return 0;
    while (*s) {
        char* end;
        errno = 0;
        long v = strtol(s, &end, 10);
        if (end == s || errno || v < lo || v > hi || n >= max) return -1;
        out[n++] = v;
        s = end;
        if (*s == ',')
            s++;
        else if (*s)
            return -1;
    }
    return n;
}

int cli_ints(const char* prog, const char* opt, const char* s, long* out, int min_count, int max, long lo, long hi)
{
    int n = cli_int_list(s, out, max, lo, hi);
    if (n >= min_count) return n;
    fprintf(stderr, "%s: %s: expected a comma-separated list of %d to %d integers from %ld to %ld, got '%s'\n", prog,
            opt, min_count, max, lo, hi, s);
    return -1;
}

int cli_split_names(const char* list, char items[][32], int max)
{
    int count = 0;
    const char* s = list;
    while (*s) {
        const char* comma = strchr(s, ',');
        size_t len = comma ? (size_t)(comma - s) : strlen(s);
        if (len == 0 || len >= 32 || count == max) return -1;
        memcpy(items[count], s, len);
        items[count][len] = '\0';
        count++;
        if (!comma) break;
        s = comma + 1;
        if (!*s) return -1;
    }
    return count;
}

int cli_all_solvers(char solvers[][32], int max)
{
    int n = 0;
    for (int32_t i = 0; i < dvi_solver_count() && n < max; ++i) snprintf(solvers[n++], 32, "%s", dvi_solver_name(i));
    return n;
}

static bool solver_known(const char* name)
{
    for (int32_t i = 0; i < dvi_solver_count(); ++i) {
        if (strcmp(dvi_solver_name(i), name) == 0) return true;
    }
    return false;
}

int cli_solver_option(const char* prog, const char* a, const char* val, char solvers[][32], int max_solvers,
                      int* solver_count, int32_t* max_iterations, int32_t* threads)
{
    int64_t v = 0;
    if (!val) return 0;
    if (strcmp(a, "--solvers") == 0) {
        int n = cli_solvers(prog, val, solvers, max_solvers);
        if (n < 0) return -1;
        *solver_count = n;
    } else if (strcmp(a, "--max-iterations") == 0) {
        if (!cli_int(prog, a, val, 1, INT32_MAX, "a positive integer", &v)) return -1;
        *max_iterations = (int32_t)v;
    } else if (strcmp(a, "--threads") == 0) {
        if (!cli_int(prog, a, val, 0, 4096, "an integer >= 0", &v)) return -1;
        *threads = (int32_t)v;
    } else {
        return 0;
    }
    return 1;
}

int cli_solvers(const char* prog, const char* list, char solvers[][32], int max)
{
    int n = cli_split_names(list, solvers, max);
    if (n <= 0) {
        fprintf(stderr, "%s: --solvers: bad list '%s'\n", prog, list);
        return -1;
    }
    for (int k = 0; k < n; ++k) {
        if (!solver_known(solvers[k])) {
            fprintf(stderr, "%s: --solvers: unknown solver '%s' (known:", prog, solvers[k]);
            for (int32_t s = 0; s < dvi_solver_count(); ++s) fprintf(stderr, " %s", dvi_solver_name(s));
            fprintf(stderr, ")\n");
            return -1;
        }
    }
    return n;
}

void cli_json_number(FILE* f, double x)
{
    if (isfinite(x))
        fprintf(f, "%.6e", x);
    else
        fprintf(f, "null");
}
