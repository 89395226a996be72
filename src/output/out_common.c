/* Output writers (dvi/output.h): the helpers they share, atomic file writes
 * and directory creation. */
#include "out_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

/* ==== small helpers ====================================================== */

dvi_status out_fail_st(dvi_status st, char* msg, size_t msg_size, const char* fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    base_error_vreport(msg, msg_size, st, NULL, fmt, ap);
    va_end(ap);
    return st;
}

dvi_status out_fail(char* msg, size_t msg_size, const char* fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    base_error_vreport(msg, msg_size, DVI_ERR_IO, NULL, fmt, ap);
    va_end(ap);
    return DVI_ERR_IO;
}

dvi_status out_sticky(dvi_status st, const char* err)
{
    base_error_set(st, err);
    return st;
}

char* out_strdup(const char* s)
{
    size_t n = strlen(s);
    char* d = malloc(n + 1);
    if (d) memcpy(d, s, n + 1);
    return d;
}

int out_sb_reserve(out_sbuf* b, size_t extra)
{
    if (b->failed) return -1;
    if (b->len + extra + 1 <= b->cap) return 0;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + extra + 1) {
        if (cap > SIZE_MAX / 2) {
            b->failed = 1;
            return -1;
        }
        cap *= 2;
    }
    char* d = realloc(b->data, cap);
    if (!d) {
        b->failed = 1;
        return -1;
    }
    b->data = d;
    b->cap = cap;
    return 0;
}

void out_sb_putn(out_sbuf* b, const char* s, size_t n)
{
    if (out_sb_reserve(b, n)) return;
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
}

void out_sb_puts(out_sbuf* b, const char* s) { out_sb_putn(b, s, strlen(s)); }

void out_sb_printf(out_sbuf* b, const char* fmt, ...)
{
    if (b->failed) return;
    char tmp[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0) {
        b->failed = 1;
        return;
    }
    if ((size_t)n < sizeof tmp) {
        out_sb_putn(b, tmp, (size_t)n);
        return;
    }
    if (out_sb_reserve(b, (size_t)n)) return;
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

void out_sb_free(out_sbuf* b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

/* "%.10g", non-finite as nan / inf / -inf (never "-nan"). Returns length;
 * out must hold 32 bytes. */
int out_format_g10(char* out, double v)
{
    if (isnan(v)) {
        memcpy(out, "nan", 4);
        return 3;
    }
    if (isinf(v)) {
        if (v > 0) {
            memcpy(out, "inf", 4);
            return 3;
        }
        memcpy(out, "-inf", 5);
        return 4;
    }
    return snprintf(out, 32, "%.10g", v);
}

/* Shortest of %.15g/%.16g/%.17g that reads back to v (finite v). */
int out_format_roundtrip(char* out, double v)
{
    int n = 0;
    for (int p = 15; p <= 17; p++) {
        n = snprintf(out, 32, "%.*g", p, v);
        if (strtod(out, NULL) == v) break;
    }
    return n;
}

/* Length of the valid UTF-8 sequence at s (1..4), or 0 if it is not valid. */
int out_utf8_len(const unsigned char* s)
{
    unsigned c = s[0];
    if (c < 0x80) return 1;
    if (c >= 0xC2 && c <= 0xDF) return (s[1] & 0xC0) == 0x80 ? 2 : 0;
    if (c >= 0xE0 && c <= 0xEF) {
        unsigned lo = 0x80, hi = 0xBF;
        if (c == 0xE0) lo = 0xA0;
        if (c == 0xED) hi = 0x9F;
        if (s[1] < lo || s[1] > hi) return 0;
        return (s[2] & 0xC0) == 0x80 ? 3 : 0;
    }
    if (c >= 0xF0 && c <= 0xF4) {
        unsigned lo = 0x80, hi = 0xBF;
        if (c == 0xF0) lo = 0x90;
        if (c == 0xF4) hi = 0x8F;
        if (s[1] < lo || s[1] > hi) return 0;
        if ((s[2] & 0xC0) != 0x80 || (s[3] & 0xC0) != 0x80) return 0;
        return 4;
    }
    return 0;
}

/* XML text/attribute escaping; drops nothing silently: characters XML 1.0
 * cannot hold (controls, invalid UTF-8, U+FFFE/FFFF) become U+FFFD. */
void out_sb_xml(out_sbuf* b, const char* text)
{
    const unsigned char* s = (const unsigned char*)text;
    while (*s) {
        unsigned c = *s;
        if (c == '&') out_sb_puts(b, "&amp;"), s++;
        else if (c == '<') out_sb_puts(b, "&lt;"), s++;
        else if (c == '>') out_sb_puts(b, "&gt;"), s++;
        else if (c == '"') out_sb_puts(b, "&quot;"), s++;
        else if (c == '\'') out_sb_puts(b, "&apos;"), s++;
        else if (c < 0x20 && c != '\t' && c != '\n' && c != '\r') out_sb_puts(b, "\xEF\xBF\xBD"), s++;
        else {
            int n = out_utf8_len(s);
            if (n == 0 || (n == 3 && s[0] == 0xEF && s[1] == 0xBF && s[2] >= 0xBE)) {
                out_sb_puts(b, "\xEF\xBF\xBD");
                s++;
            } else {
                out_sb_putn(b, (const char*)s, (size_t)n);
                s += n;
            }
        }
    }
}

/* ==== files ============================================================== */

static int write_all(int fd, const void* data, size_t size)
{
    const char* p = data;
    while (size > 0) {
        ssize_t n = write(fd, p, size);
        if (n < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        p += n;
        size -= (size_t)n;
    }
    return 0;
}

dvi_status dvi_write_file_atomic(const char* path, const void* data, size_t size, char* msg, size_t msg_size)
{
    if (!path || !*path) return out_fail_st(DVI_ERR_INVALID_ARG, msg, msg_size, "atomic write: empty path");
    if (!data && size > 0) return out_fail(msg, msg_size, "%s: no data to write", path);
    size_t n = strlen(path);
    char* tmp = malloc(n + 5);
    if (!tmp) return out_fail(msg, msg_size, "%s: out of memory", path);
    memcpy(tmp, path, n);
    memcpy(tmp + n, ".tmp", 5);

    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        int e = errno;
        out_fail(msg, msg_size, "%s: cannot create: %s", tmp, strerror(e));
        free(tmp);
        return DVI_ERR_IO;
    }
    const char* what = NULL;
    const char* who = tmp;
    int e = 0;
    if (write_all(fd, data, size)) what = "cannot write", e = errno;
    else if (fsync(fd)) what = "cannot sync", e = errno;
    if (close(fd) && !what) what = "cannot close", e = errno;
    if (!what && rename(tmp, path)) what = "cannot rename the temporary file over it", who = path, e = errno;
    if (what) {
        out_fail(msg, msg_size, "%s: %s: %s", who, what, strerror(e));
        unlink(tmp);
        free(tmp);
        return DVI_ERR_IO;
    }
    free(tmp);

    /* Make the rename durable (best effort). */
    const char* slash = strrchr(path, '/');
    char* dir = NULL;
    if (slash == path) dir = out_strdup("/");
    else if (slash) {
        dir = malloc((size_t)(slash - path) + 1);
        if (dir) {
            memcpy(dir, path, (size_t)(slash - path));
            dir[slash - path] = '\0';
        }
    } else dir = out_strdup(".");
    if (dir) {
        int dfd = open(dir, O_RDONLY);
        if (dfd >= 0) {
            (void)fsync(dfd);
            close(dfd);
        }
        free(dir);
    }
    return DVI_OK;
}

dvi_status dvi_make_dirs(const char* path, char* msg, size_t msg_size)
{
    if (!path || !*path) return out_fail_st(DVI_ERR_INVALID_ARG, msg, msg_size, "mkdir: empty path");
    char* p = out_strdup(path);
    if (!p) return out_fail(msg, msg_size, "%s: out of memory", path);
    size_t n = strlen(p);
    while (n > 1 && p[n - 1] == '/') p[--n] = '\0';
    for (size_t i = 1; i <= n; i++) {
        if (p[i] != '/' && p[i] != '\0') continue;
        char c = p[i];
        p[i] = '\0';
        if (mkdir(p, 0755) != 0 && errno != EEXIST) {
            int e = errno;
            out_fail(msg, msg_size, "%s: cannot create directory: %s", p, strerror(e));
            free(p);
            return DVI_ERR_IO;
        }
        p[i] = c;
    }
    struct stat st;
    if (stat(p, &st) != 0 || !S_ISDIR(st.st_mode)) {
        out_fail(msg, msg_size, "%s: exists and is not a directory", p);
        free(p);
        return DVI_ERR_IO;
    }
    free(p);
    return DVI_OK;
}
