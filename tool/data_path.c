/* Finding the project's data files (data_path.h). */
#ifndef _XOPEN_SOURCE
#define _XOPEN_SOURCE 700 /* realpath */
#endif
#include "data_path.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The installed data directory relative to the installed programs' directory
 * (meson: bindir -> datadir/dvicontact), e.g. "../share/dvicontact". */
#ifndef DVI_DATA_FROM_BINDIR
#define DVI_DATA_FROM_BINDIR "../share/dvicontact"
#endif

enum { CANDIDATES = 4 };

int data_path_exe_dir(char* out, size_t n)
{
    if (!out || n == 0) return -1;
    char buf[PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", buf, sizeof buf - 1);
    if (len <= 0 || (size_t)len >= sizeof buf - 1) return -1;
    buf[len] = '\0';
    char* slash = strrchr(buf, '/');
    if (!slash) return -1;
    *slash = '\0';
    if (slash == buf) strcpy(buf, "/");
    if (strlen(buf) >= n) return -1;
    strcpy(out, buf);
    return 0;
}

static int is_dir(const char* p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static int is_file(const char* p)
{
    struct stat st;
    return stat(p, &st) == 0 && !S_ISDIR(st.st_mode);
}

/* The candidate data directories, in order; returns how many were made. */
static int candidates(char dirs[CANDIDATES][PATH_MAX])
{
    int k = 0;
    const char* env = getenv("DVICONTACT_DATA");
    if (env && *env && strlen(env) < PATH_MAX) strcpy(dirs[k++], env);
    char exe[PATH_MAX];
    if (data_path_exe_dir(exe, sizeof exe) == 0) {
        const char* up = DVI_DATA_FROM_BINDIR;
        if ((size_t)snprintf(dirs[k], PATH_MAX, "%s/../data", exe) < PATH_MAX) k++;
        if (up[0] == '/') {
            if (strlen(up) < PATH_MAX) strcpy(dirs[k++], up);
        } else if ((size_t)snprintf(dirs[k], PATH_MAX, "%s/%s", exe, up) < PATH_MAX) {
            k++;
        }
        /* the build tree again, for the programs two folders down in it
         * (studies/rover/); after the installed copy, so that an installed
         * program never looks above its prefix first */
        if ((size_t)snprintf(dirs[k], PATH_MAX, "%s/../../data", exe) < PATH_MAX) k++;
    }
    return k;
}

/* Writes "tried A, B and C" style text of the candidates into out. */
static void tried(char dirs[CANDIDATES][PATH_MAX], int k, const char* what, char* out, size_t n)
{
    size_t used = 0;
    int w = snprintf(out, n, "%s not found in ", what);
    if (w < 0 || (size_t)w >= n) return;
    used = (size_t)w;
    if (k == 0) {
        w = snprintf(out + used, n - used, "any data directory");
        if (w < 0 || (size_t)w >= n - used) return;
        used += (size_t)w;
    }
    for (int i = 0; i < k; i++) {
        char real[PATH_MAX];
        const char* shown = realpath(dirs[i], real) ? real : dirs[i];
        w = snprintf(out + used, n - used, "%s%s", i == 0 ? "" : (i == k - 1 ? " or " : ", "), shown);
        if (w < 0 || (size_t)w >= n - used) return;
        used += (size_t)w;
    }
    snprintf(out + used, n - used,
             " (set DVICONTACT_DATA to a directory that holds it, or give the file's path on the command line)");
}

int data_path_find(const char* rel, char* out, size_t n)
{
    if (!rel || !out || n == 0) return -1;
    char dirs[CANDIDATES][PATH_MAX];
    int k = candidates(dirs);
    for (int i = 0; i < k; i++) {
        char p[PATH_MAX], real[PATH_MAX];
        if ((size_t)snprintf(p, sizeof p, "%s/%s", dirs[i], rel) >= sizeof p) continue;
        if (!is_file(p)) continue;
        const char* shown = realpath(p, real) ? real : p;
        if (strlen(shown) >= n) return -1;
        strcpy(out, shown);
        return 0;
    }
    tried(dirs, k, rel, out, n);
    return -1;
}

const char* data_path_or(const char* given, const char* rel, char* buf, size_t n, const char* prog)
{
    if (given) return given;
    if (data_path_find(rel, buf, n) == 0) return buf;
    fprintf(stderr, "%s: %s\n", prog, buf);
    return NULL;
}

int data_path_dir(char* out, size_t n)
{
    if (!out || n == 0) return -1;
    char dirs[CANDIDATES][PATH_MAX];
    int k = candidates(dirs);
    for (int i = 0; i < k; i++) {
        if (!is_dir(dirs[i])) continue;
        char real[PATH_MAX];
        const char* shown = realpath(dirs[i], real) ? real : dirs[i];
        if (strlen(shown) >= n) return -1;
        strcpy(out, shown);
        return 0;
    }
    tried(dirs, k, "the data directory", out, n);
    return -1;
}
