/* Output writers of the `dvi` command (output.h): CSV, SVG plots, VTK frames,
 * atomic writes, JSON. Only the public API and libc/libm. */
#include "output.h"

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

#if defined(__GNUC__)
#define DVI_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define DVI_PRINTF(a, b)
#endif

static int fail(char* msg, size_t msg_size, const char* fmt, ...) DVI_PRINTF(3, 4);
static int fail(char* msg, size_t msg_size, const char* fmt, ...)
{
    if (msg && msg_size > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, msg_size, fmt, ap);
        va_end(ap);
    }
    return -1;
}

static char* dup_string(const char* s)
{
    size_t n = strlen(s);
    char* d = malloc(n + 1);
    if (d) memcpy(d, s, n + 1);
    return d;
}

/* Growing text buffer; `failed` is sticky (allocation failure). */
typedef struct sbuf {
    char* data;
    size_t len, cap;
    int failed;
} sbuf;

static int sb_reserve(sbuf* b, size_t extra)
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

static void sb_putn(sbuf* b, const char* s, size_t n)
{
    if (sb_reserve(b, n)) return;
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
}

static void sb_puts(sbuf* b, const char* s) { sb_putn(b, s, strlen(s)); }

static void sb_printf(sbuf* b, const char* fmt, ...) DVI_PRINTF(2, 3);
static void sb_printf(sbuf* b, const char* fmt, ...)
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
        sb_putn(b, tmp, (size_t)n);
        return;
    }
    if (sb_reserve(b, (size_t)n)) return;
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

static void sb_free(sbuf* b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

/* "%.10g", non-finite as nan / inf / -inf (never "-nan"). Returns length;
 * out must hold 32 bytes. */
static int format_g10(char* out, double v)
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
static int format_roundtrip(char* out, double v)
{
    int n = 0;
    for (int p = 15; p <= 17; p++) {
        n = snprintf(out, 32, "%.*g", p, v);
        if (strtod(out, NULL) == v) break;
    }
    return n;
}

/* Length of the valid UTF-8 sequence at s (1..4), or 0 if it is not valid. */
static int utf8_len(const unsigned char* s)
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
static void sb_xml(sbuf* b, const char* text)
{
    const unsigned char* s = (const unsigned char*)text;
    while (*s) {
        unsigned c = *s;
        if (c == '&') sb_puts(b, "&amp;"), s++;
        else if (c == '<') sb_puts(b, "&lt;"), s++;
        else if (c == '>') sb_puts(b, "&gt;"), s++;
        else if (c == '"') sb_puts(b, "&quot;"), s++;
        else if (c == '\'') sb_puts(b, "&apos;"), s++;
        else if (c < 0x20 && c != '\t' && c != '\n' && c != '\r') sb_puts(b, "\xEF\xBF\xBD"), s++;
        else {
            int n = utf8_len(s);
            if (n == 0 || (n == 3 && s[0] == 0xEF && s[1] == 0xBF && s[2] >= 0xBE)) {
                sb_puts(b, "\xEF\xBF\xBD");
                s++;
            } else {
                sb_putn(b, (const char*)s, (size_t)n);
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

int dvi_write_file_atomic(const char* path, const void* data, size_t size, char* msg, size_t msg_size)
{
    if (!path || !*path) return fail(msg, msg_size, "atomic write: empty path");
    if (!data && size > 0) return fail(msg, msg_size, "%s: no data to write", path);
    size_t n = strlen(path);
    char* tmp = malloc(n + 5);
    if (!tmp) return fail(msg, msg_size, "%s: out of memory", path);
    memcpy(tmp, path, n);
    memcpy(tmp + n, ".tmp", 5);

    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        int e = errno;
        fail(msg, msg_size, "%s: cannot create: %s", tmp, strerror(e));
        free(tmp);
        return -1;
    }
    const char* what = NULL;
    const char* who = tmp;
    int e = 0;
    if (write_all(fd, data, size)) what = "cannot write", e = errno;
    else if (fsync(fd)) what = "cannot sync", e = errno;
    if (close(fd) && !what) what = "cannot close", e = errno;
    if (!what && rename(tmp, path)) what = "cannot rename the temporary file over it", who = path, e = errno;
    if (what) {
        fail(msg, msg_size, "%s: %s: %s", who, what, strerror(e));
        unlink(tmp);
        free(tmp);
        return -1;
    }
    free(tmp);

    /* Make the rename durable (best effort). */
    const char* slash = strrchr(path, '/');
    char* dir = NULL;
    if (slash == path) dir = dup_string("/");
    else if (slash) {
        dir = malloc((size_t)(slash - path) + 1);
        if (dir) {
            memcpy(dir, path, (size_t)(slash - path));
            dir[slash - path] = '\0';
        }
    } else dir = dup_string(".");
    if (dir) {
        int dfd = open(dir, O_RDONLY);
        if (dfd >= 0) {
            (void)fsync(dfd);
            close(dfd);
        }
        free(dir);
    }
    return 0;
}

int dvi_make_dirs(const char* path, char* msg, size_t msg_size)
{
    if (!path || !*path) return fail(msg, msg_size, "mkdir: empty path");
    char* p = dup_string(path);
    if (!p) return fail(msg, msg_size, "%s: out of memory", path);
    size_t n = strlen(p);
    while (n > 1 && p[n - 1] == '/') p[--n] = '\0';
    for (size_t i = 1; i <= n; i++) {
        if (p[i] != '/' && p[i] != '\0') continue;
        char c = p[i];
        p[i] = '\0';
        if (mkdir(p, 0755) != 0 && errno != EEXIST) {
            int e = errno;
            fail(msg, msg_size, "%s: cannot create directory: %s", p, strerror(e));
            free(p);
            return -1;
        }
        p[i] = c;
    }
    struct stat st;
    if (stat(p, &st) != 0 || !S_ISDIR(st.st_mode)) {
        fail(msg, msg_size, "%s: exists and is not a directory", p);
        free(p);
        return -1;
    }
    free(p);
    return 0;
}

/* ==== CSV writing ========================================================= */

#define CSV_CELL 32 /* bytes reserved per value in the row buffer */

struct dvi_csv {
    FILE* f;
    char* path;
    int columns;
    long long rows;
    char* line; /* columns * CSV_CELL + 2 bytes */
    int failed;
    char err[320];
};

static void csv_set_error(dvi_csv* c, const char* what, int e)
{
    if (c->failed) return;
    c->failed = 1;
    if (e) snprintf(c->err, sizeof c->err, "%s: %s: %s", c->path, what, strerror(e));
    else snprintf(c->err, sizeof c->err, "%s: %s", c->path, what);
}

static dvi_csv* csv_alloc(const char* path, int columns)
{
    dvi_csv* c = calloc(1, sizeof *c);
    if (!c) return NULL;
    c->path = dup_string(path);
    c->columns = columns;
    c->line = malloc((size_t)columns * CSV_CELL + 2);
    if (!c->path || !c->line) {
        free(c->path);
        free(c->line);
        free(c);
        return NULL;
    }
    return c;
}

static void csv_free(dvi_csv* c)
{
    if (!c) return;
    free(c->path);
    free(c->line);
    free(c);
}

/* Writes text with line breaks as spaces (the header stays one line). */
static void csv_put_flat(FILE* f, const char* s)
{
    for (; *s; s++) fputc(*s == '\n' || *s == '\r' ? ' ' : *s, f);
}

/* Writes one header field, quoted if it needs to be. */
static void csv_put_title(FILE* f, const char* name, const char* unit)
{
    int has_unit = unit && *unit;
    int quote = strpbrk(name, ",\"") != NULL || (has_unit && strpbrk(unit, ",\"") != NULL);
    if (!quote) {
        csv_put_flat(f, name);
        if (has_unit) {
            fputs(" [", f);
            csv_put_flat(f, unit);
            fputc(']', f);
        }
        return;
    }
    fputc('"', f);
    for (int part = 0; part < 2; part++) {
        const char* s = part == 0 ? name : unit;
        if (part == 1) {
            if (!has_unit) break;
            fputs(" [", f);
        }
        for (; *s; s++) {
            if (*s == '"') fputc('"', f);
            fputc(*s == '\n' || *s == '\r' ? ' ' : *s, f);
        }
        if (part == 1) fputc(']', f);
    }
    fputc('"', f);
}

int dvi_csv_open(dvi_csv** out, const char* path, int columns, const char* const* names,
                 const char* const* units, char* msg, size_t msg_size)
{
    if (!out) return fail(msg, msg_size, "CSV: no output pointer");
    *out = NULL;
    if (!path || !*path) return fail(msg, msg_size, "CSV: empty path");
    if (columns < 1 || columns > 1000000) return fail(msg, msg_size, "%s: bad column count %d", path, columns);
    if (!names) return fail(msg, msg_size, "%s: no column names", path);
    for (int i = 0; i < columns; i++)
        if (!names[i]) return fail(msg, msg_size, "%s: column %d has no name", path, i + 1);
    dvi_csv* c = csv_alloc(path, columns);
    if (!c) return fail(msg, msg_size, "%s: out of memory", path);
    c->f = fopen(path, "wb");
    if (!c->f) {
        int e = errno;
        csv_free(c);
        return fail(msg, msg_size, "%s: cannot create: %s", path, strerror(e));
    }
    setvbuf(c->f, NULL, _IOFBF, 1 << 16);
    for (int i = 0; i < columns; i++) {
        if (i) fputc(',', c->f);
        csv_put_title(c->f, names[i], units ? units[i] : NULL);
    }
    fputc('\n', c->f);
    if (ferror(c->f)) {
        int e = errno;
        fclose(c->f);
        csv_free(c);
        return fail(msg, msg_size, "%s: cannot write the header: %s", path, strerror(e));
    }
    *out = c;
    return 0;
}

/* Number of fields of a CSV line (quote-aware; the line has no '\n'). */
static int csv_count_fields(const char* s)
{
    int n = 1, inq = 0;
    for (; *s; s++) {
        if (*s == '"') inq = !inq;
        else if (*s == ',' && !inq) n++;
    }
    return n;
}

static void chomp(char* line, ssize_t* len)
{
    while (*len > 0 && (line[*len - 1] == '\n' || line[*len - 1] == '\r')) line[--*len] = '\0';
}

int dvi_csv_open_resume(dvi_csv** out, const char* path, long long rows, int columns, char* msg,
                        size_t msg_size)
{
    if (!out) return fail(msg, msg_size, "CSV: no output pointer");
    *out = NULL;
    if (!path || !*path) return fail(msg, msg_size, "CSV: empty path");
    if (columns < 1 || columns > 1000000) return fail(msg, msg_size, "%s: bad column count %d", path, columns);
    if (rows < 0) return fail(msg, msg_size, "%s: cannot resume at row %lld", path, rows);
    FILE* f = fopen(path, "r+b");
    if (!f) {
        int e = errno;
        return fail(msg, msg_size, "%s: cannot open to resume: %s", path, strerror(e));
    }
    char* line = NULL;
    size_t cap = 0;
    ssize_t len = getline(&line, &cap, f);
    if (len <= 0 || line[len - 1] != '\n') {
        free(line);
        fclose(f);
        return fail(msg, msg_size, "%s: no complete header line", path);
    }
    chomp(line, &len);
    int have = csv_count_fields(line);
    free(line);
    if (have != columns) {
        fclose(f);
        return fail(msg, msg_size, "%s: header has %d columns, expected %d", path, have, columns);
    }
    /* Skip `rows` complete lines. */
    long long n = 0;
    int ch = 0;
    while (n < rows && (ch = getc(f)) != EOF)
        if (ch == '\n') n++;
    if (n < rows) {
        int bad = ferror(f);
        fclose(f);
        if (bad) return fail(msg, msg_size, "%s: read error while resuming", path);
        return fail(msg, msg_size, "%s: has only %lld complete data rows, cannot resume after row %lld", path, n,
                    rows);
    }
    off_t keep = ftello(f);
    if (keep < 0 || fflush(f) != 0 || ftruncate(fileno(f), keep) != 0 || fseeko(f, keep, SEEK_SET) != 0) {
        int e = errno;
        fclose(f);
        return fail(msg, msg_size, "%s: cannot truncate after row %lld: %s", path, rows, strerror(e));
    }
    dvi_csv* c = csv_alloc(path, columns);
    if (!c) {
        fclose(f);
        return fail(msg, msg_size, "%s: out of memory", path);
    }
    c->f = f;
    c->rows = rows;
    setvbuf(c->f, NULL, _IOFBF, 1 << 16);
    *out = c;
    return 0;
}

int dvi_csv_write_row(dvi_csv* c, const double* values)
{
    if (!c) return -1;
    if (c->failed) return -1;
    if (!values) {
        csv_set_error(c, "no values for a row", 0);
        return -1;
    }
    char* p = c->line;
    for (int i = 0; i < c->columns; i++) {
        if (i) *p++ = ',';
        p += format_g10(p, values[i]);
    }
    *p++ = '\n';
    size_t n = (size_t)(p - c->line);
    if (fwrite(c->line, 1, n, c->f) != n) {
        csv_set_error(c, "cannot write a row", errno);
        return -1;
    }
    c->rows++;
    return 0;
}

long long dvi_csv_rows(const dvi_csv* c) { return c ? c->rows : 0; }
int dvi_csv_columns(const dvi_csv* c) { return c ? c->columns : 0; }
const char* dvi_csv_path(const dvi_csv* c) { return c ? c->path : ""; }
const char* dvi_csv_last_error(const dvi_csv* c) { return c ? c->err : ""; }

int dvi_csv_flush(dvi_csv* c)
{
    if (!c) return -1;
    if (c->failed) return -1;
    if (fflush(c->f) != 0) {
        csv_set_error(c, "cannot flush", errno);
        return -1;
    }
    if (fsync(fileno(c->f)) != 0 && errno != EINVAL && errno != EROFS) {
        csv_set_error(c, "cannot sync", errno);
        return -1;
    }
    return 0;
}

int dvi_csv_close(dvi_csv* c)
{
    if (!c) return 0;
    int bad = c->failed;
    if (fflush(c->f) != 0) bad = 1;
    if (fclose(c->f) != 0) bad = 1;
    csv_free(c);
    return bad ? -1 : 0;
}

int dvi_csv_count_rows(const char* path, long long* rows, int* columns, char* msg, size_t msg_size)
{
    if (rows) *rows = 0;
    if (columns) *columns = 0;
    if (!path || !*path) return fail(msg, msg_size, "CSV: empty path");
    FILE* f = fopen(path, "rb");
    if (!f) {
        int e = errno;
        return fail(msg, msg_size, "%s: cannot open: %s", path, strerror(e));
    }
    char* line = NULL;
    size_t cap = 0;
    ssize_t len = getline(&line, &cap, f);
    if (len <= 0 || line[len - 1] != '\n') {
        free(line);
        fclose(f);
        return fail(msg, msg_size, "%s: no complete header line", path);
    }
    chomp(line, &len);
    if (columns) *columns = csv_count_fields(line);
    free(line);
    long long n = 0;
    char buf[1 << 16];
    size_t got;
    while ((got = fread(buf, 1, sizeof buf, f)) > 0)
        for (size_t i = 0; i < got; i++) n += buf[i] == '\n';
    int bad = ferror(f);
    fclose(f);
    if (bad) return fail(msg, msg_size, "%s: read error", path);
    if (rows) *rows = n;
    return 0;
}

/* ==== CSV reading (for plots) ============================================= */

/* Splits a header line into malloc'd fields (RFC 4180 quoting). */
static int csv_split_header(const char* s, char*** fields_out, int* count_out)
{
    int n = csv_count_fields(s);
    char** fields = calloc((size_t)n, sizeof *fields);
    if (!fields) return -1;
    size_t len = strlen(s);
    for (int i = 0; i < n; i++) {
        char* f = malloc(len + 1);
        if (!f) {
            for (int j = 0; j < i; j++) free(fields[j]);
            free(fields);
            return -1;
        }
        size_t k = 0;
        while (*s == ' ') s++;
        if (*s == '"') {
            s++;
            for (; *s; s++) {
                if (*s == '"') {
                    if (s[1] == '"') f[k++] = '"', s++;
                    else {
                        s++;
                        break;
                    }
                } else f[k++] = *s;
            }
            while (*s && *s != ',') s++;
        } else {
            while (*s && *s != ',') f[k++] = *s++;
            while (k > 0 && (f[k - 1] == ' ' || f[k - 1] == '\t')) k--;
        }
        f[k] = '\0';
        fields[i] = f;
        if (*s == ',') s++;
    }
    *fields_out = fields;
    *count_out = n;
    return 0;
}

/* Parses a data line into vals[ncols]: missing cells and non-numbers are NaN,
 * extra cells ignored. */
static void csv_parse_row(const char* p, double* vals, int ncols)
{
    int i = 0;
    for (;;) {
        double v = NAN;
        const char* q;
        if (*p == '"') {
            char tmp[64];
            size_t k = 0;
            int overflow = 0;
            for (p++; *p; p++) {
                if (*p == '"') {
                    if (p[1] == '"') p++;
                    else {
                        p++;
                        break;
                    }
                }
                if (k + 1 < sizeof tmp) tmp[k++] = *p;
                else overflow = 1;
            }
            tmp[k] = '\0';
            char* end;
            double t = strtod(tmp, &end);
            while (*end == ' ' || *end == '\t') end++;
            if (!overflow && end != tmp && *end == '\0') v = t;
            q = p;
            while (*q && *q != ',') q++;
        } else {
            char* end;
            double t = strtod(p, &end);
            q = end;
            while (*q == ' ' || *q == '\t') q++;
            if (end != p && (*q == ',' || *q == '\0')) v = t;
            while (*q && *q != ',') q++;
        }
        if (i < ncols) vals[i] = v;
        i++;
        if (*q != ',') break;
        p = q + 1;
    }
    for (; i < ncols; i++) vals[i] = NAN;
}

/* ==== SVG plots ========================================================== */

dvi_svg_options dvi_svg_default_options(void)
{
    dvi_svg_options o;
    o.width = 900;
    o.panel_height = 220;
    o.log = -1;
    o.columns = NULL;
    return o;
}

/* Okabe–Ito palette, most distinct first (yellow last: weak on white). */
static const char* const palette[] = {"#0072B2", "#D55E00", "#009E73", "#E69F00",
                                      "#CC79A7", "#56B4E9", "#000000", "#F0E442"};
static const char* const dashes[] = {NULL, "7 3", "2 2.5", "9 3 2 3"};

/* Series j of a panel: colour j mod 8 and a dash pattern that changes with
 * j too, so that two series on each other both show (solid under dashed). */
static const char* series_dash(int style) { return dashes[(style + style / 8) % 4]; }

#define FONT_FAMILY "system-ui, -apple-system, &apos;Segoe UI&apos;, Helvetica, Arial, &apos;DejaVu Sans&apos;, sans-serif"

typedef struct pt {
    float x, y; /* pixels; x = NaN marks a break */
} pt;

typedef struct sample {
    long long row;
    double x, y;
} sample;

typedef struct series {
    char* name;
    char* unit;
    int col;   /* column in the CSV */
    int panel;
    int style; /* index within its panel: colour and dash */
    double lo, hi;
    double pos_lo;      /* smallest positive value */
    long long finite, nonfinite, positive;
    int drawn;          /* in opt->columns (or all are) */
    /* decimation state (pass 2) */
    int bucket;
    int agg_n;
    sample first, mn, mx, last;
    int breaks_in_bucket;
    int last_was_nan;
    pt* pts;
    size_t npts, cappts;
    int oom;
} series;

typedef struct panel {
    char* unit;
    int* members;
    int n;
    double lo, hi;                 /* finite data range */
    int has_data;
    double axis_lo, axis_hi;       /* axis range (multiples of the tick step) */
    int tick_m, tick_k;            /* step = m × 10^k */
    long long tick_i0, tick_i1;    /* ticks i·step, i in [i0, i1] */
    double top, height;            /* plot area, px */
    int log;                       /* axis in log10 of the values (ranges and ticks too) */
} panel;

static double pow10i(int k)
{
    /* exact for |k| <= 22 */
    return pow(10.0, (double)k);
}

/* A tick value i·m·10^k, computed so that it is the double nearest the
 * decimal number (no accumulated noise). */
static double tick_value(long long i, int m, int k)
{
    double im = (double)(i * m);
    if (k >= 0) return im * pow10i(k);
    if (k >= -300) return im / pow10i(-k);
    return im * pow10i(k);
}

/* Chooses a 1-2-5 step giving about `target` intervals over [lo, hi]. */
static void nice_step(double lo, double hi, int target, int* m_out, int* k_out)
{
    double span = hi - lo;
    double raw = span / (double)target;
    if (!(raw > 0) || !isfinite(raw)) raw = 1;
    int k = (int)floor(log10(raw));
    double norm = raw / pow10i(k);
    int m;
    if (norm <= 1.0 + 1e-9) m = 1;
    else if (norm <= 2.0 + 1e-9) m = 2;
    else if (norm <= 5.0 + 1e-9) m = 5;
    else {
        m = 1;
        k++;
    }
    *m_out = m;
    *k_out = k;
}

/* Widens [lo, hi] to something drawable: finite, clamped, not degenerate. */
static void sane_range(double* lo, double* hi)
{
    const double big = 1e300;
    if (!isfinite(*lo) || !isfinite(*hi) || *lo > *hi) {
        *lo = 0;
        *hi = 1;
    }
    if (*lo < -big) *lo = -big;
    if (*hi > big) *hi = big;
    double mag = fmax(fabs(*lo), fabs(*hi));
    double min_span = mag * 1e-9;
    if (*hi - *lo <= min_span || *hi - *lo < 1e-300) {
        double mid = 0.5 * (*lo + *hi);
        double d = mag > 0 ? fmax(0.1 * mag, 1e-300) : 1.0;
        *lo = mid - d;
        *hi = mid + d;
    }
}

static void axis_ticks(panel* p, double lo, double hi, int target)
{
    sane_range(&lo, &hi);
    nice_step(lo, hi, target, &p->tick_m, &p->tick_k);
    double step = tick_value(1, p->tick_m, p->tick_k);
    p->tick_i0 = (long long)floor(lo / step);
    p->tick_i1 = (long long)ceil(hi / step);
    /* guard against rounding in the divisions */
    while (tick_value(p->tick_i0, p->tick_m, p->tick_k) > lo) p->tick_i0--;
    while (tick_value(p->tick_i1, p->tick_m, p->tick_k) < hi) p->tick_i1++;
    if (p->tick_i1 <= p->tick_i0) p->tick_i1 = p->tick_i0 + 1;
    p->axis_lo = tick_value(p->tick_i0, p->tick_m, p->tick_k);
    p->axis_hi = tick_value(p->tick_i1, p->tick_m, p->tick_k);
}

/* Tick label: fixed notation for moderate magnitudes, m×10ⁿ otherwise, with
 * just the digits the step needs; a true minus sign. */
static void format_tick(char* out, size_t size, double v, int k, double maxabs)
{
    if (v == 0) {
        snprintf(out, size, "0");
        return;
    }
    char num[64];
    const char* minus = v < 0 ? "\xE2\x88\x92" : "";
    double a = fabs(v);
    if (maxabs >= 1e-3 && maxabs < 1e5) {
        int dec = k < 0 ? -k : 0;
        snprintf(num, sizeof num, "%.*f", dec, a);
        snprintf(out, size, "%s%s", minus, num);
        return;
    }
    snprintf(num, sizeof num, "%.6e", a);
    int e = atoi(strchr(num, 'e') + 1);
    int digits = e - k;
    if (digits < 0) digits = 0;
    if (digits > 15) digits = 15;
    snprintf(num, sizeof num, "%.*e", digits, a);
    char* ep = strchr(num, 'e');
    e = atoi(ep + 1);
    *ep = '\0';
    if (strchr(num, '.')) {
        size_t n = strlen(num);
        while (n > 0 && num[n - 1] == '0') num[--n] = '\0';
        if (n > 0 && num[n - 1] == '.') num[--n] = '\0';
    }
    static const char* const sup[] = {"\xE2\x81\xB0", "\xC2\xB9", "\xC2\xB2", "\xC2\xB3", "\xE2\x81\xB4",
                                      "\xE2\x81\xB5", "\xE2\x81\xB6", "\xE2\x81\xB7", "\xE2\x81\xB8", "\xE2\x81\xB9"};
    char exp[64] = "";
    size_t el = 0;
    if (e < 0) {
        el += (size_t)snprintf(exp + el, sizeof exp - el, "\xE2\x81\xBB"); /* superscript minus */
        e = -e;
    }
    char ed[16];
    snprintf(ed, sizeof ed, "%d", e);
    for (const char* d = ed; *d && el + 4 < sizeof exp; d++) el += (size_t)snprintf(exp + el, sizeof exp - el, "%s", sup[*d - '0']);
    snprintf(out, size, "%s%s\xC3\x97" "10%s", minus, num, exp);
}

/* Ticks of a log axis over [lo, hi] (log10 of the values): whole decades,
 * one or more apart. */
static void axis_ticks_log(panel* p, double lo, double hi, int target)
{
    double l = floor(lo), h = ceil(hi);
    if (!isfinite(l) || !isfinite(h)) l = 0, h = 1;
    if (h <= l) h = l + 1;
    const long long step = (long long)ceil((h - l) / (double)target);
    p->tick_m = (int)(step > 0 ? step : 1);
    p->tick_k = 0;
    p->tick_i0 = (long long)floor(l / p->tick_m);
    p->tick_i1 = (long long)ceil(h / p->tick_m);
    if (p->tick_i1 <= p->tick_i0) p->tick_i1 = p->tick_i0 + 1;
    p->axis_lo = tick_value(p->tick_i0, p->tick_m, 0);
    p->axis_hi = tick_value(p->tick_i1, p->tick_m, 0);
}

/* The label of tick i of panel p: its value, or on a log axis the power of
 * ten (1×10⁻⁶; 0.01 … 1000 when every tick lies in [1e-3, 1e5)). */
static void y_tick_label(char* out, size_t size, const panel* p, long long i, double maxabs)
{
    const double v = tick_value(i, p->tick_m, p->tick_k);
    if (!p->log) {
        format_tick(out, size, v, p->tick_k, maxabs);
        return;
    }
    const int e = (int)v;
    const bool fixed = p->axis_lo >= -3 && p->axis_hi <= 4;
    format_tick(out, size, pow(10.0, e), e, fixed ? pow(10.0, p->axis_hi) : 1e6);
    if (strncmp(out, "1\xC3\x97", 3) == 0) memmove(out, out + 3, strlen(out + 3) + 1); /* 10⁻⁶, not 1×10⁻⁶ */
}

/* Whether name is one of the comma-separated names of list. */
static int column_listed(const char* list, const char* name)
{
    const size_t n = strlen(name);
    for (const char* c = list; *c;) {
        const char* e = strchr(c, ',');
        const size_t len = e ? (size_t)(e - c) : strlen(c);
        if (len == n && strncmp(c, name, n) == 0) return 1;
        c += len + (e != NULL);
    }
    return 0;
}

/* Splits "name [unit]" into malloc'd name and unit ("" if none). */
static int split_title(const char* field, char** name, char** unit)
{
    size_t n = strlen(field);
    const char* open = NULL;
    if (n >= 2 && field[n - 1] == ']') open = strrchr(field, '[');
    if (open) {
        size_t nl = (size_t)(open - field);
        while (nl > 0 && field[nl - 1] == ' ') nl--;
        *name = malloc(nl + 1);
        size_t ul = (size_t)(field + n - 1 - (open + 1));
        *unit = malloc(ul + 1);
        if (!*name || !*unit) return -1;
        memcpy(*name, field, nl);
        (*name)[nl] = '\0';
        memcpy(*unit, open + 1, ul);
        (*unit)[ul] = '\0';
        if (nl == 0) {
            free(*name);
            *name = dup_string(field);
            if (!*name) return -1;
        }
    } else {
        *name = dup_string(field);
        *unit = dup_string("");
        if (!*name || !*unit) return -1;
    }
    return 0;
}

static void series_push(series* s, float x, float y)
{
    if (s->oom) return;
    if (s->npts == s->cappts) {
        size_t cap = s->cappts ? 2 * s->cappts : 256;
        pt* p = realloc(s->pts, cap * sizeof *p);
        if (!p) {
            s->oom = 1;
            return;
        }
        s->pts = p;
        s->cappts = cap;
    }
    s->pts[s->npts].x = x;
    s->pts[s->npts].y = y;
    s->npts++;
}

static void series_break(series* s)
{
    if (s->npts > 0 && !isnan(s->pts[s->npts - 1].x)) series_push(s, NAN, NAN);
}

typedef struct mapping {
    double x0, x1, px0, pw; /* x axis */
} mapping;

static float map_x(const mapping* m, double x)
{
    double t = (x - m->x0) / (m->x1 - m->x0);
    if (!(t >= 0)) t = 0;
    if (t > 1) t = 1;
    return (float)(m->px0 + t * m->pw);
}

static float map_y(const panel* p, double y)
{
    double t = (p->axis_hi - y) / (p->axis_hi - p->axis_lo);
    if (!(t >= 0)) t = 0;
    if (t > 1) t = 1;
    return (float)(p->top + t * p->height);
}

/* Emits the aggregated samples of the current pixel column in row order. */
static void series_flush(series* s, const mapping* m, const panel* p)
{
    if (s->agg_n > 0) {
        sample c[4] = {s->first, s->mn, s->mx, s->last};
        /* sort 4 by row (insertion) */
        for (int i = 1; i < 4; i++)
            for (int j = i; j > 0 && c[j].row < c[j - 1].row; j--) {
                sample t = c[j];
                c[j] = c[j - 1];
                c[j - 1] = t;
            }
        for (int i = 0; i < 4; i++) {
            if (i > 0 && c[i].row == c[i - 1].row) continue;
            series_push(s, map_x(m, c[i].x), map_y(p, c[i].y));
        }
        s->agg_n = 0;
    }
    if (s->last_was_nan) series_break(s);
}

static void series_add(series* s, const mapping* m, const panel* p, int bucket, long long row, double x, double y)
{
    if (bucket != s->bucket) {
        series_flush(s, m, p);
        s->bucket = bucket;
        s->breaks_in_bucket = 0;
    }
    if (!isfinite(y)) {
        /* At most one break per pixel column: narrower gaps would not show. */
        if (s->breaks_in_bucket == 0) {
            s->last_was_nan = 0;
            series_flush(s, m, p);
            series_break(s);
            s->breaks_in_bucket = 1;
        }
        s->last_was_nan = 1;
        return;
    }
    s->last_was_nan = 0;
    sample c = {row, x, y};
    if (s->agg_n == 0) s->first = s->mn = s->mx = c;
    else {
        if (y < s->mn.y) s->mn = c;
        if (y > s->mx.y) s->mx = c;
    }
    s->last = c;
    s->agg_n++;
}

/* Counts code points of a UTF-8 string. */
static size_t utf8_chars(const char* s)
{
    size_t n = 0;
    for (; *s; s++) n += ((unsigned char)*s & 0xC0) != 0x80;
    return n;
}

/* Copies at most max_chars code points, with an ellipsis if cut. */
static void truncate_utf8(char* out, size_t size, const char* s, size_t max_chars)
{
    if (utf8_chars(s) <= max_chars) {
        snprintf(out, size, "%s", s);
        return;
    }
    size_t k = 0, chars = 0;
    const char* p = s;
    while (*p && k + 8 < size) {
        if (((unsigned char)*p & 0xC0) != 0x80) {
            if (chars == max_chars - 1) break;
            chars++;
        }
        out[k++] = *p++;
    }
    memcpy(out + k, "\xE2\x80\xA6", 4); /* … */
}

static const char* base_name(const char* path)
{
    const char* s = strrchr(path, '/');
    return s ? s + 1 : path;
}

typedef struct plot {
    int ncols;
    char** fields;
    series* ser;
    int nser;
    panel* pan;
    int npan;
    double* vals;
    char* line;
    size_t cap;
} plot;

static void plot_free(plot* P)
{
    for (int i = 0; i < P->ncols; i++) free(P->fields ? P->fields[i] : NULL);
    free(P->fields);
    for (int i = 0; i < P->nser; i++) {
        free(P->ser[i].name);
        free(P->ser[i].unit);
        free(P->ser[i].pts);
    }
    free(P->ser);
    for (int i = 0; i < P->npan; i++) {
        free(P->pan[i].unit);
        free(P->pan[i].members);
    }
    free(P->pan);
    free(P->vals);
    free(P->line);
}

/* Writes the polylines of one series: one per run of finite points. */
static void emit_series(sbuf* b, const series* s, const char* color, const char* dash)
{
    size_t i = 0;
    while (i < s->npts) {
        while (i < s->npts && isnan(s->pts[i].x)) i++;
        size_t j = i;
        while (j < s->npts && !isnan(s->pts[j].x)) j++;
        if (j > i) {
            sb_printf(b, "<polyline fill=\"none\" stroke=\"%s\"%s%s%s points=\"", color, dash ? " stroke-dasharray=\"" : "",
                      dash ? dash : "", dash ? "\"" : "");
            for (size_t k = i; k < j; k++) sb_printf(b, "%s%.1f,%.1f", k > i ? " " : "", s->pts[k].x, s->pts[k].y);
            if (j == i + 1) sb_printf(b, " %.1f,%.1f", s->pts[i].x, s->pts[i].y); /* a lone point: a dot */
            sb_puts(b, "\"/>\n");
        }
        i = j;
    }
}

int dvi_svg_plot_csv(const char* csv_path, const char* svg_path, const char* title, char* msg, size_t msg_size)
{
    return dvi_svg_plot_csv_ex(csv_path, svg_path, title, NULL, msg, msg_size);
}

int dvi_svg_plot_csv_ex(const char* csv_path, const char* svg_path, const char* title, const dvi_svg_options* opt,
                        char* msg, size_t msg_size)
{
    if (!csv_path || !*csv_path) return fail(msg, msg_size, "plot: no CSV path");
    if (!svg_path || !*svg_path) return fail(msg, msg_size, "plot: no SVG path");
    dvi_svg_options o = opt ? *opt : dvi_svg_default_options();
    if (o.width < 320) o.width = 320;
    if (o.width > 20000) o.width = 20000;
    if (o.panel_height < 100) o.panel_height = 100;
    if (o.panel_height > 5000) o.panel_height = 5000;

    FILE* f = fopen(csv_path, "rb");
    if (!f) {
        int e = errno;
        return fail(msg, msg_size, "%s: cannot open: %s", csv_path, strerror(e));
    }
    plot P;
    memset(&P, 0, sizeof P);
    int rc = -1;
    sbuf b = {0};

    ssize_t len = getline(&P.line, &P.cap, f);
    if (len <= 0) {
        fail(msg, msg_size, "%s: empty file (no header line)", csv_path);
        goto done;
    }
    chomp(P.line, &len);
    if (len == 0) {
        fail(msg, msg_size, "%s: empty header line", csv_path);
        goto done;
    }
    if (csv_split_header(P.line, &P.fields, &P.ncols)) {
        fail(msg, msg_size, "%s: out of memory", csv_path);
        goto done;
    }
    P.nser = P.ncols - 1;
    P.vals = malloc((size_t)P.ncols * sizeof *P.vals);
    P.ser = calloc(P.nser > 0 ? (size_t)P.nser : 1, sizeof *P.ser);
    P.pan = calloc(P.nser > 0 ? (size_t)P.nser : 1, sizeof *P.pan);
    if (!P.vals || !P.ser || !P.pan) {
        fail(msg, msg_size, "%s: out of memory", csv_path);
        goto done;
    }
    char *xname = NULL, *xunit = NULL;
    if (split_title(P.fields[0], &xname, &xunit)) {
        free(xname);
        free(xunit);
        fail(msg, msg_size, "%s: out of memory", csv_path);
        goto done;
    }
    char xlabel[512];
    if (*xunit) snprintf(xlabel, sizeof xlabel, "%s [%s]", xname, xunit);
    else snprintf(xlabel, sizeof xlabel, "%s", xname);
    free(xname);
    free(xunit);

    /* series and panels (one per unit, in order of first appearance) */
    for (int i = 0; i < P.nser; i++) {
        series* s = &P.ser[i];
        s->col = i + 1;
        s->lo = INFINITY;
        s->hi = -INFINITY;
        s->pos_lo = INFINITY;
        s->bucket = -1;
        s->panel = -1;
        if (split_title(P.fields[i + 1], &s->name, &s->unit)) {
            fail(msg, msg_size, "%s: out of memory", csv_path);
            goto done;
        }
        s->drawn = !o.columns || !*o.columns || column_listed(o.columns, s->name);
        if (!s->drawn) continue;
        /* one panel per unit; a column without a unit gets its own panel, as
         * nothing says its values compare with those of other columns */
        int pi = 0;
        if (*s->unit)
            while (pi < P.npan && strcmp(P.pan[pi].unit, s->unit) != 0) pi++;
        else pi = P.npan;
        if (pi == P.npan) {
            P.pan[pi].unit = dup_string(s->unit);
            P.pan[pi].members = malloc((size_t)P.nser * sizeof(int));
            if (!P.pan[pi].unit || !P.pan[pi].members) {
                fail(msg, msg_size, "%s: out of memory", csv_path);
                goto done;
            }
            P.npan++;
        }
        s->panel = pi;
        s->style = P.pan[pi].n;
        P.pan[pi].members[P.pan[pi].n++] = i;
    }
    if (o.columns && *o.columns) { /* every listed column must exist */
        const char* c = o.columns;
        while (*c) {
            const char* e = strchr(c, ',');
            size_t n = e ? (size_t)(e - c) : strlen(c);
            int found = n == 0;
            for (int i = 0; i < P.nser && !found; i++)
                found = strlen(P.ser[i].name) == n && strncmp(P.ser[i].name, c, n) == 0;
            if (!found) {
                fail(msg, msg_size, "%s: no column '%.*s' (its columns: %s)", csv_path, (int)n, c, P.line);
                goto done;
            }
            c += n + (e != NULL);
        }
    }

    /* pass 1: ranges */
    long long rows = 0, skipped = 0;
    double xlo = INFINITY, xhi = -INFINITY;
    while ((len = getline(&P.line, &P.cap, f)) >= 0) {
        chomp(P.line, &len);
        csv_parse_row(P.line, P.vals, P.ncols);
        double x = P.vals[0];
        if (!isfinite(x)) {
            skipped++;
            continue;
        }
        rows++;
        if (x < xlo) xlo = x;
        if (x > xhi) xhi = x;
        for (int i = 0; i < P.nser; i++) {
            series* s = &P.ser[i];
            double y = P.vals[i + 1];
            if (isfinite(y)) {
                s->finite++;
                if (y < s->lo) s->lo = y;
                if (y > s->hi) s->hi = y;
                if (y > 0) {
                    s->positive++;
                    if (y < s->pos_lo) s->pos_lo = y;
                }
            } else s->nonfinite++;
        }
    }
    if (ferror(f)) {
        fail(msg, msg_size, "%s: read error", csv_path);
        goto done;
    }

    /* layout */
    const double W = o.width;
    const double left = 88, legend_w = 190;
    const double right = W - legend_w;
    const double plot_w = right - left;
    const double title_h = 48, gap = 30, bottom_h = 62, entry_h = 18;
    int npanels_drawn = P.npan > 0 ? P.npan : 1;
    /* logarithmic axes: the series' ranges become ranges of log10 */
    for (int pi = 0; pi < P.npan; pi++) {
        panel* p = &P.pan[pi];
        double pos_lo = INFINITY, hi = -INFINITY;
        long long finite = 0, positive = 0;
        for (int j = 0; j < p->n; j++) {
            const series* s = &P.ser[p->members[j]];
            pos_lo = fmin(pos_lo, s->pos_lo);
            if (s->positive) hi = fmax(hi, s->hi);
            finite += s->finite;
            positive += s->positive;
        }
        if (o.log == 0 || positive == 0) continue;
        if (o.log < 0 && !(hi >= 1e3 * pos_lo && 10 * (finite - positive) <= finite)) continue;
        p->log = 1;
        for (int j = 0; j < p->n; j++) {
            series* s = &P.ser[p->members[j]];
            s->finite = s->positive; /* what a log axis draws */
            if (s->positive) {
                s->lo = log10(s->pos_lo);
                s->hi = log10(s->hi);
            }
        }
    }
    double y = title_h;
    for (int pi = 0; pi < P.npan; pi++) {
        panel* p = &P.pan[pi];
        p->lo = INFINITY;
        p->hi = -INFINITY;
        for (int j = 0; j < p->n; j++) {
            series* s = &P.ser[p->members[j]];
            if (s->finite) {
                p->has_data = 1;
                p->lo = fmin(p->lo, s->lo);
                p->hi = fmax(p->hi, s->hi);
            }
        }
        double h = o.panel_height - gap;
        double need = 10 + entry_h * p->n;
        if (need > h) h = need;
        p->top = y;
        p->height = h;
        if (p->log) axis_ticks_log(p, p->lo, p->hi, h >= 150 ? 5 : 3);
        else axis_ticks(p, p->has_data ? p->lo : 0, p->has_data ? p->hi : 1, h >= 150 ? 5 : 3);
        y += h + gap;
    }
    if (P.npan == 0) y += o.panel_height; /* only an x column: one empty frame */
    const double H = y - gap + bottom_h;
    const double last_bottom = y - gap;

    panel xp; /* x axis: exact data range, ticks inside */
    memset(&xp, 0, sizeof xp);
    double x0 = rows > 0 ? xlo : 0, x1 = rows > 0 ? xhi : 1;
    sane_range(&x0, &x1);
    {
        int target = (int)(plot_w / 90);
        if (target < 2) target = 2;
        nice_step(x0, x1, target, &xp.tick_m, &xp.tick_k);
        double step = tick_value(1, xp.tick_m, xp.tick_k);
        xp.tick_i0 = (long long)ceil(x0 / step);
        xp.tick_i1 = (long long)floor(x1 / step);
        while (xp.tick_i0 > LLONG_MIN / 2 && tick_value(xp.tick_i0 - 1, xp.tick_m, xp.tick_k) >= x0) xp.tick_i0--;
        while (tick_value(xp.tick_i0, xp.tick_m, xp.tick_k) < x0) xp.tick_i0++;
        while (tick_value(xp.tick_i1 + 1, xp.tick_m, xp.tick_k) <= x1) xp.tick_i1++;
        while (tick_value(xp.tick_i1, xp.tick_m, xp.tick_k) > x1) xp.tick_i1--;
    }
    mapping M = {x0, x1, left, plot_w};

    /* pass 2: points, decimated per pixel column */
    if (rows > 0 && P.nser > 0) {
        rewind(f);
        len = getline(&P.line, &P.cap, f); /* header */
        long long row = 0;
        int ncolumns = (int)plot_w;
        while ((len = getline(&P.line, &P.cap, f)) >= 0) {
            chomp(P.line, &len);
            csv_parse_row(P.line, P.vals, P.ncols);
            double x = P.vals[0];
            if (!isfinite(x)) continue;
            double t = (x - x0) / (x1 - x0);
            int bucket = (int)floor(t * ncolumns);
            if (bucket < 0) bucket = 0;
            if (bucket >= ncolumns) bucket = ncolumns - 1;
            for (int i = 0; i < P.nser; i++) {
                series* s = &P.ser[i];
                if (s->panel < 0) continue;
                const panel* p = &P.pan[s->panel];
                double v = P.vals[i + 1];
                if (p->log) v = v > 0 ? log10(v) : NAN;
                series_add(s, &M, p, bucket, row, x, v);
            }
            row++;
        }
        for (int i = 0; i < P.nser; i++) {
            series* s = &P.ser[i];
            if (s->panel < 0) continue;
            series_flush(s, &M, &P.pan[s->panel]);
            if (s->oom) {
                fail(msg, msg_size, "%s: out of memory", csv_path);
                goto done;
            }
        }
    }

    /* ---- SVG ---- */
    sb_puts(&b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    sb_printf(&b,
              "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
              "font-family=\"" FONT_FAMILY "\" font-size=\"12\">\n",
              (int)W, (int)ceil(H), (int)W, (int)ceil(H));
    const char* ttl = title && *title ? title : base_name(csv_path);
    sb_puts(&b, "<title>");
    sb_xml(&b, ttl);
    sb_puts(&b, "</title>\n<desc>");
    sb_xml(&b, base_name(csv_path));
    int drawn = 0;
    for (int i = 0; i < P.nser; i++) drawn += P.ser[i].panel >= 0;
    sb_printf(&b, ": %lld rows, %d series in %d panels", rows, drawn, P.npan);
    if (skipped) sb_printf(&b, "; %lld rows without a finite x skipped", skipped);
    sb_puts(&b, "</desc>\n");
    sb_puts(&b, "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n");
    sb_printf(&b, "<text class=\"title\" x=\"%.0f\" y=\"28\" font-size=\"16\" font-weight=\"600\" fill=\"#222222\">", left);
    sb_xml(&b, ttl);
    sb_puts(&b, "</text>\n");

    for (int pi = 0; pi < npanels_drawn; pi++) {
        panel empty;
        panel* p = &empty;
        if (P.npan > 0) p = &P.pan[pi];
        else {
            memset(&empty, 0, sizeof empty);
            empty.top = title_h;
            empty.height = o.panel_height - gap;
            axis_ticks(&empty, 0, 1, 5);
        }
        const double top = p->top, h = p->height;
        char a[64], c2[64];
        format_roundtrip(a, p->log ? pow(10.0, p->axis_lo) : p->axis_lo);
        format_roundtrip(c2, p->log ? pow(10.0, p->axis_hi) : p->axis_hi);
        sb_printf(&b, "<g class=\"panel\" data-unit=\"");
        sb_xml(&b, p->unit ? p->unit : "");
        sb_printf(&b, "\" data-ymin=\"%s\" data-ymax=\"%s\"%s", a, c2, p->log ? " data-log=\"1\"" : "");
        format_roundtrip(a, x0);
        format_roundtrip(c2, x1);
        sb_printf(&b, " data-xmin=\"%s\" data-xmax=\"%s\">\n", a, c2);
        sb_printf(&b, "<rect class=\"plot-area\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#ffffff\"/>\n",
                  left, top, plot_w, h);
        /* grid */
        sb_puts(&b, "<g class=\"grid\" stroke=\"#e8e8e8\" stroke-width=\"1\" shape-rendering=\"crispEdges\">\n");
        for (long long i = xp.tick_i0; i <= xp.tick_i1; i++) {
            double px = map_x(&M, tick_value(i, xp.tick_m, xp.tick_k));
            sb_printf(&b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", px, top, px, top + h);
        }
        for (long long i = p->tick_i0; i <= p->tick_i1; i++) {
            double py = map_y(p, tick_value(i, p->tick_m, p->tick_k));
            sb_printf(&b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", left, py, right, py);
        }
        sb_puts(&b, "</g>\n");
        if (!p->log && p->axis_lo < 0 && p->axis_hi > 0) {
            double py = map_y(p, 0);
            sb_printf(&b,
                      "<line class=\"zero\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#b0b0b0\" "
                      "stroke-width=\"1\" shape-rendering=\"crispEdges\"/>\n",
                      left, py, right, py);
        }
        sb_printf(&b,
                  "<rect class=\"frame\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" "
                  "stroke=\"#9a9a9a\" stroke-width=\"1\" shape-rendering=\"crispEdges\"/>\n",
                  left, top, plot_w, h);
        /* y ticks and labels */
        double maxabs = fmax(fabs(p->axis_lo), fabs(p->axis_hi));
        size_t widest = 1;
        for (long long i = p->tick_i0; i <= p->tick_i1; i++) {
            char lab[96];
            y_tick_label(lab, sizeof lab, p, i, maxabs);
            size_t wch = utf8_chars(lab);
            if (wch > widest) widest = wch;
        }
        sb_puts(&b, "<g class=\"yaxis\" fill=\"#444444\" font-size=\"11\" text-anchor=\"end\">\n");
        for (long long i = p->tick_i0; i <= p->tick_i1; i++) {
            double v = tick_value(i, p->tick_m, p->tick_k);
            double py = map_y(p, v);
            char lab[96];
            y_tick_label(lab, sizeof lab, p, i, maxabs);
            sb_printf(&b,
                      "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#9a9a9a\" "
                      "shape-rendering=\"crispEdges\"/>\n",
                      left - 4, py, left, py);
            sb_printf(&b, "<text class=\"ytick\" x=\"%.1f\" y=\"%.1f\" dy=\"0.35em\">%s</text>\n", left - 7, py, lab);
        }
        sb_puts(&b, "</g>\n");
        /* y label */
        {
            char lab[600];
            const char* unit = p->unit ? p->unit : "";
            if (p->n == 1) {
                const series* s = &P.ser[p->members[0]];
                if (*unit) snprintf(lab, sizeof lab, "%s [%s]", s->name, unit);
                else snprintf(lab, sizeof lab, "%s", s->name);
            } else if (*unit) snprintf(lab, sizeof lab, "[%s]", unit);
            else snprintf(lab, sizeof lab, "%s", P.npan > 0 ? "value" : "");
            char cut[600];
            truncate_utf8(cut, sizeof cut, lab, (size_t)(h / 7.5));
            double cy = top + h / 2;
            double lx = left - 7 - 6.4 * (double)widest - 14; /* clear of the tick labels */
            if (lx < 14) lx = 14;
            sb_printf(&b,
                      "<text class=\"ylabel\" x=\"%.1f\" y=\"%.1f\" transform=\"rotate(-90 %.1f %.1f)\" "
                      "text-anchor=\"middle\" dy=\"0.35em\" fill=\"#222222\">",
                      lx, cy, lx, cy);
            sb_xml(&b, cut);
            sb_puts(&b, "</text>\n");
        }
        /* series */
        sb_puts(&b, "<g class=\"series\" stroke-width=\"1.6\" stroke-linejoin=\"round\" stroke-linecap=\"round\">\n");
        for (int j = 0; j < p->n; j++) {
            const series* s = &P.ser[p->members[j]];
            sb_printf(&b, "<g class=\"line\" data-name=\"");
            sb_xml(&b, s->name);
            sb_puts(&b, "\"><title>");
            sb_xml(&b, s->name);
            sb_puts(&b, "</title>\n");
            emit_series(&b, s, palette[s->style % 8], series_dash(s->style));
            sb_puts(&b, "</g>\n");
        }
        sb_puts(&b, "</g>\n");
        if (rows == 0 || P.nser == 0 || !p->has_data) {
            sb_printf(&b,
                      "<text class=\"note\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" fill=\"#888888\" "
                      "font-size=\"14\">%s</text>\n",
                      left + plot_w / 2, top + h / 2,
                      P.nser == 0 ? "no series (only an x column)" : rows == 0 ? "no data" : "no finite data");
        }
        /* legend, right of the plot area */
        if (p->n > 0) {
            sb_puts(&b, "<g class=\"legend\" font-size=\"12\" fill=\"#222222\">\n");
            for (int j = 0; j < p->n; j++) {
                const series* s = &P.ser[p->members[j]];
                double ly = top + 8 + entry_h * j + entry_h / 2;
                double lx = right + 14;
                const char* dash = series_dash(s->style);
                int none = s->finite == 0;
                sb_puts(&b, "<g class=\"entry\"><title>");
                sb_xml(&b, s->name);
                if (none) sb_puts(&b, " (no finite data)");
                sb_puts(&b, "</title>");
                sb_printf(&b,
                          "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"2.5\"%s%s%s/>",
                          lx, ly, lx + 22, ly, none ? "#bbbbbb" : palette[s->style % 8],
                          dash ? " stroke-dasharray=\"" : "", dash ? dash : "", dash ? "\"" : "");
                char cut[400];
                truncate_utf8(cut, sizeof cut, s->name, none ? 12 : 22);
                sb_printf(&b, "<text x=\"%.1f\" y=\"%.1f\" dy=\"0.35em\"%s>", lx + 28, ly,
                          none ? " fill=\"#888888\" font-style=\"italic\"" : "");
                sb_xml(&b, cut);
                if (none) sb_puts(&b, " (no finite data)");
                sb_puts(&b, "</text></g>\n");
            }
            sb_puts(&b, "</g>\n");
        }
        sb_puts(&b, "</g>\n");
    }
    /* x axis under the bottom panel */
    {
        double xmaxabs = fmax(fabs(tick_value(xp.tick_i0, xp.tick_m, xp.tick_k)),
                              fabs(tick_value(xp.tick_i1, xp.tick_m, xp.tick_k)));
        sb_puts(&b, "<g class=\"xaxis\" fill=\"#444444\" font-size=\"11\" text-anchor=\"middle\">\n");
        for (long long i = xp.tick_i0; i <= xp.tick_i1; i++) {
            double v = tick_value(i, xp.tick_m, xp.tick_k);
            double px = map_x(&M, v);
            char lab[96];
            format_tick(lab, sizeof lab, v, xp.tick_k, xmaxabs);
            sb_printf(&b,
                      "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#9a9a9a\" "
                      "shape-rendering=\"crispEdges\"/>\n",
                      px, last_bottom, px, last_bottom + 4);
            sb_printf(&b, "<text class=\"xtick\" x=\"%.1f\" y=\"%.1f\">%s</text>\n", px, last_bottom + 18, lab);
        }
        sb_puts(&b, "</g>\n");
        sb_printf(&b, "<text class=\"xlabel\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" fill=\"#222222\">",
                  left + plot_w / 2, last_bottom + 42);
        sb_xml(&b, xlabel);
        sb_puts(&b, "</text>\n");
    }
    sb_puts(&b, "</svg>\n");
    if (b.failed) {
        fail(msg, msg_size, "%s: out of memory", svg_path);
        goto done;
    }
    rc = dvi_write_file_atomic(svg_path, b.data, b.len, msg, msg_size);

done:
    fclose(f);
    sb_free(&b);
    plot_free(&P);
    return rc;
}

/* ==== VTK ================================================================ */

static void sb_num(sbuf* b, double v)
{
    char t[32];
    int n = format_g10(t, v);
    sb_putn(b, t, (size_t)n);
}

/* Base64 of n bytes (RFC 4648, with padding). */
static void sb_base64(sbuf* b, const unsigned char* d, size_t n)
{
    static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    char q[4];
    for (size_t i = 0; i < n; i += 3) {
        const unsigned v = (unsigned)d[i] << 16 | (i + 1 < n ? (unsigned)d[i + 1] << 8 : 0u) |
                           (i + 2 < n ? (unsigned)d[i + 2] : 0u);
        q[0] = tab[v >> 18 & 63];
        q[1] = tab[v >> 12 & 63];
        q[2] = i + 1 < n ? tab[v >> 6 & 63] : '=';
        q[3] = i + 2 < n ? tab[v & 63] : '=';
        sb_putn(b, q, 4);
    }
}

/* The body of a binary DataArray: base64 of a UInt64 byte count (the
 * header_type of the file) and the values, little-endian, as VTK reads
 * format="binary" without a compressor. */
static void vtk_binary_body(sbuf* b, const void* data, size_t bytes)
{
    unsigned char* t = malloc(bytes + 8);
    if (!t) {
        b->failed = 1;
        return;
    }
    uint64_t h = (uint64_t)bytes;
    for (int k = 0; k < 8; k++) t[k] = (unsigned char)(h >> (8 * k));
    memcpy(t + 8, data, bytes); /* the machine is little-endian (byte_order in the file) */
    sb_puts(b, "          ");
    sb_base64(b, t, bytes + 8);
    sb_putn(b, "\n", 1);
    free(t);
}

/* Writes a Float64 DataArray of count tuples × comps from data[count*stride]
 * starting at offset (values at data[i*stride + offset + c]), as text
 * (ascii) or base64 of the doubles themselves. */
static void vtk_array(sbuf* b, const char* name, int comps, const double* data, int count, int stride, int offset,
                      bool ascii)
{
    sb_printf(b, "        <DataArray type=\"Float64\" Name=\"%s\"", name);
    if (comps > 1) sb_printf(b, " NumberOfComponents=\"%d\"", comps);
    sb_printf(b, " format=\"%s\">\n", ascii ? "ascii" : "binary");
    if (!ascii) {
        const size_t nv = (size_t)count * (size_t)comps;
        double* v = malloc((nv ? nv : 1) * sizeof *v);
        if (!v) {
            b->failed = 1;
            return;
        }
        for (int i = 0; i < count; i++)
            for (int c = 0; c < comps; c++)
                v[(size_t)i * comps + c] = data[(size_t)i * (size_t)stride + (size_t)offset + (size_t)c];
        vtk_binary_body(b, v, nv * sizeof *v);
        free(v);
    } else {
        for (int i = 0; i < count; i++) {
            sb_puts(b, "          ");
            for (int c = 0; c < comps; c++) {
                if (c) sb_putn(b, " ", 1);
                sb_num(b, data[(size_t)i * (size_t)stride + (size_t)offset + (size_t)c]);
            }
            sb_putn(b, "\n", 1);
        }
    }
    sb_puts(b, "        </DataArray>\n");
}

static void vtk_int_array(sbuf* b, const char* name, const int32_t* data, int count, int stride, int offset, bool ascii)
{
    sb_printf(b, "        <DataArray type=\"Int32\" Name=\"%s\" format=\"%s\">\n", name, ascii ? "ascii" : "binary");
    if (!ascii) {
        int32_t* v = malloc(((size_t)count + 1) * sizeof *v);
        if (!v) {
            b->failed = 1;
            return;
        }
        for (int i = 0; i < count; i++) v[i] = data[(size_t)i * (size_t)stride + (size_t)offset];
        vtk_binary_body(b, v, (size_t)count * sizeof *v);
        free(v);
    } else {
        for (int i = 0; i < count; i++) sb_printf(b, "          %d\n", (int)data[(size_t)i * (size_t)stride + (size_t)offset]);
    }
    sb_puts(b, "        </DataArray>\n");
}

/* An Int64 DataArray of i + first, i = 0 … n−1 (the vertices' connectivity and offsets). */
static void vtk_index_array(sbuf* b, const char* name, int n, int first, bool ascii)
{
    sb_printf(b, "        <DataArray type=\"Int64\" Name=\"%s\" format=\"%s\">\n", name, ascii ? "ascii" : "binary");
    if (!ascii) {
        int64_t* v = malloc(((size_t)n + 1) * sizeof *v);
        if (!v) {
            b->failed = 1;
            return;
        }
        for (int i = 0; i < n; i++) v[i] = (int64_t)i + first;
        vtk_binary_body(b, v, (size_t)n * sizeof *v);
        free(v);
    } else {
        for (int i = 0; i < n; i++) sb_printf(b, "%s%d", i % 16 == 0 ? (i ? "\n          " : "          ") : " ", i + first);
        if (n) sb_putn(b, "\n", 1);
    }
    sb_puts(b, "        </DataArray>\n");
}

static void vtk_head(sbuf* b, int n, const char* scalars, const char* vectors)
{
    sb_puts(b, "<?xml version=\"1.0\"?>\n"
               "<VTKFile type=\"PolyData\" version=\"1.0\" byte_order=\"LittleEndian\" header_type=\"UInt64\">\n"
               "  <PolyData>\n");
    sb_printf(b,
              "    <Piece NumberOfPoints=\"%d\" NumberOfVerts=\"%d\" NumberOfLines=\"0\" NumberOfStrips=\"0\" "
              "NumberOfPolys=\"0\">\n",
              n, n);
    sb_printf(b, "      <PointData Scalars=\"%s\" Vectors=\"%s\">\n", scalars, vectors);
}

static void vtk_tail(sbuf* b, int n, const double* pts, int stride, bool ascii)
{
    sb_puts(b, "      </PointData>\n      <Points>\n");
    vtk_array(b, "Points", 3, pts, n, stride, 0, ascii);
    sb_puts(b, "      </Points>\n      <Verts>\n");
    vtk_index_array(b, "connectivity", n, 0, ascii);
    vtk_index_array(b, "offsets", n, 1, ascii);
    sb_puts(b, "      </Verts>\n    </Piece>\n  </PolyData>\n</VTKFile>\n");
}

/* Body record: doubles laid out as below. */
enum { B_POS = 0, B_Q = 3, B_ROT = 7, B_AX = 16, B_AZ = 19, B_V = 22, B_W = 25, B_SPEED = 28, B_MASS = 29,
       B_RAD = 30, B_STRIDE = 31 };
enum { C_POS = 0, C_F = 3, C_N = 6, C_FM = 9, C_FN = 10, C_D = 11, C_STRIDE = 12 };

int dvi_vtk_write_frame(const dvi_world* world, const char* dir, int frame, char* msg, size_t msg_size)
{
    return dvi_vtk_write_frame_ex(world, dir, frame, false, msg, msg_size);
}

int dvi_vtk_write_frame_ex(const dvi_world* world, const char* dir, int frame, bool ascii, char* msg,
                           size_t msg_size)
{
    const uint16_t one = 1;
    if (*(const unsigned char*)&one != 1) ascii = true; /* the files say LittleEndian */
    if (!world) return fail(msg, msg_size, "VTK frame: no world");
    if (!dir || !*dir) return fail(msg, msg_size, "VTK frame: no output directory");
    if (frame < 0) return fail(msg, msg_size, "VTK frame: bad frame number %d", frame);
    size_t dl = strlen(dir) + 64;
    char* fdir = malloc(dl);
    char* path = malloc(dl);
    double* bd = NULL;
    int32_t* bi = NULL;
    double* cd = NULL;
    int32_t* ci = NULL;
    sbuf b = {0};
    int rc = -1;
    if (!fdir || !path) {
        fail(msg, msg_size, "%s: out of memory", dir);
        goto done;
    }
    snprintf(fdir, dl, "%s/frames", dir);
    if (dvi_make_dirs(fdir, msg, msg_size)) goto done;

    /* bodies */
    int32_t n = dvi_world_body_count(world);
    if (n < 0) n = 0;
    bd = calloc(((size_t)n + 1) * B_STRIDE, sizeof *bd);
    bi = calloc(((size_t)n + 1) * 3, sizeof *bi);
    if (!bd || !bi) {
        fail(msg, msg_size, "%s: out of memory for %d bodies", fdir, (int)n);
        goto done;
    }
    for (int32_t i = 0; i < n; i++) {
        dvi_body_id id;
        dvi_body_info info;
        double* r = bd + (size_t)i * B_STRIDE;
        if (dvi_world_body_at(world, i, &id) != DVI_OK || dvi_body_get_info(world, id, &info) != DVI_OK ||
            dvi_body_get_position(world, id, r + B_POS) != DVI_OK ||
            dvi_body_get_orientation(world, id, r + B_Q) != DVI_OK ||
            dvi_body_get_velocity(world, id, r + B_V) != DVI_OK ||
            dvi_body_get_angular_velocity(world, id, r + B_W) != DVI_OK) {
            fail(msg, msg_size, "%s: frame %d: cannot query body %d: %s", fdir, frame, (int)i,
                 dvi_world_last_error(world));
            goto done;
        }
        const double* q = r + B_Q;
        double qn = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
        double w = 1, x = 0, y = 0, z = 0;
        if (qn > 0 && isfinite(qn)) w = q[0] / qn, x = q[1] / qn, y = q[2] / qn, z = q[3] / qn;
        /* rotation matrix, stored column by column: the body's x, y and z axes
         * in world coordinates (what Tensor Glyph takes as the glyph's axes) */
        double* R = r + B_ROT;
        R[0] = 1 - 2 * (y * y + z * z), R[1] = 2 * (x * y + w * z), R[2] = 2 * (x * z - w * y);
        R[3] = 2 * (x * y - w * z), R[4] = 1 - 2 * (x * x + z * z), R[5] = 2 * (y * z + w * x);
        R[6] = 2 * (x * z + w * y), R[7] = 2 * (y * z - w * x), R[8] = 1 - 2 * (x * x + y * y);
        for (int k = 0; k < 3; k++) {
            r[B_AX + k] = R[k];
            r[B_AZ + k] = R[6 + k];
        }
        r[B_SPEED] = sqrt(r[B_V] * r[B_V] + r[B_V + 1] * r[B_V + 1] + r[B_V + 2] * r[B_V + 2]);
        r[B_MASS] = info.mass;
        r[B_RAD] = info.bounding_radius;
        bi[3 * i + 0] = id.index1 - 1;
        bi[3 * i + 1] = (int32_t)info.type;
        bi[3 * i + 2] = info.shape_count > 0 ? (int32_t)info.shape_type : 0;
    }
    vtk_head(&b, n, "radius", "velocity");
    vtk_int_array(&b, "id", bi, n, 3, 0, ascii);
    vtk_int_array(&b, "body_type", bi, n, 3, 1, ascii);
    vtk_int_array(&b, "shape_type", bi, n, 3, 2, ascii);
    vtk_array(&b, "mass", 1, bd, n, B_STRIDE, B_MASS, ascii);
    vtk_array(&b, "radius", 1, bd, n, B_STRIDE, B_RAD, ascii);
    vtk_array(&b, "orientation", 4, bd, n, B_STRIDE, B_Q, ascii);
    vtk_array(&b, "rotation", 9, bd, n, B_STRIDE, B_ROT, ascii);
    vtk_array(&b, "axis_x", 3, bd, n, B_STRIDE, B_AX, ascii);
    vtk_array(&b, "axis_z", 3, bd, n, B_STRIDE, B_AZ, ascii);
    vtk_array(&b, "velocity", 3, bd, n, B_STRIDE, B_V, ascii);
    vtk_array(&b, "angular_velocity", 3, bd, n, B_STRIDE, B_W, ascii);
    vtk_array(&b, "speed", 1, bd, n, B_STRIDE, B_SPEED, ascii);
    vtk_tail(&b, n, bd, B_STRIDE, ascii);
    snprintf(path, dl, "%s/bodies_%06d.vtp", fdir, frame);
    if (b.failed) {
        fail(msg, msg_size, "%s: out of memory", path);
        goto done;
    }
    if (dvi_write_file_atomic(path, b.data, b.len, msg, msg_size)) goto done;

    /* contacts */
    b.len = 0;
    int32_t m = dvi_world_contact_count(world);
    if (m < 0) m = 0;
    cd = calloc(((size_t)m + 1) * C_STRIDE, sizeof *cd);
    ci = calloc(((size_t)m + 1) * 2, sizeof *ci);
    if (!cd || !ci) {
        fail(msg, msg_size, "%s: out of memory for %d contacts", fdir, (int)m);
        goto done;
    }
    for (int32_t i = 0; i < m; i++) {
        dvi_contact_info c;
        if (dvi_world_get_contact(world, i, &c) != DVI_OK) {
            fail(msg, msg_size, "%s: frame %d: cannot query contact %d: %s", fdir, frame, (int)i,
                 dvi_world_last_error(world));
            goto done;
        }
        double* r = cd + (size_t)i * C_STRIDE;
        for (int k = 0; k < 3; k++) {
            r[C_POS + k] = c.point[k];
            r[C_F + k] = c.force[k];
            r[C_N + k] = c.normal[k];
        }
        r[C_FM] = sqrt(c.force[0] * c.force[0] + c.force[1] * c.force[1] + c.force[2] * c.force[2]);
        r[C_FN] = c.force[0] * c.normal[0] + c.force[1] * c.normal[1] + c.force[2] * c.normal[2];
        r[C_D] = c.distance;
        ci[2 * i + 0] = c.body_a.index1 - 1;
        ci[2 * i + 1] = c.body_b.index1 - 1;
    }
    vtk_head(&b, m, "force_magnitude", "force");
    vtk_array(&b, "force", 3, cd, m, C_STRIDE, C_F, ascii);
    vtk_array(&b, "normal", 3, cd, m, C_STRIDE, C_N, ascii);
    vtk_array(&b, "force_magnitude", 1, cd, m, C_STRIDE, C_FM, ascii);
    vtk_array(&b, "normal_force", 1, cd, m, C_STRIDE, C_FN, ascii);
    vtk_array(&b, "distance", 1, cd, m, C_STRIDE, C_D, ascii);
    vtk_int_array(&b, "body_a", ci, m, 2, 0, ascii);
    vtk_int_array(&b, "body_b", ci, m, 2, 1, ascii);
    vtk_tail(&b, m, cd, C_STRIDE, ascii);
    snprintf(path, dl, "%s/contacts_%06d.vtp", fdir, frame);
    if (b.failed) {
        fail(msg, msg_size, "%s: out of memory", path);
        goto done;
    }
    if (dvi_write_file_atomic(path, b.data, b.len, msg, msg_size)) goto done;
    rc = 0;

done:
    free(fdir);
    free(path);
    free(bd);
    free(bi);
    free(cd);
    free(ci);
    sb_free(&b);
    return rc;
}

int dvi_vtk_write_pvd(const char* dir, int frames, const double* times, char* msg, size_t msg_size)
{
    if (!dir || !*dir) return fail(msg, msg_size, "VTK collection: no output directory");
    if (frames < 0) return fail(msg, msg_size, "%s: bad frame count %d", dir, frames);
    if (frames > 0 && !times) return fail(msg, msg_size, "%s: no frame times", dir);
    for (int i = 0; i < frames; i++)
        if (!isfinite(times[i])) return fail(msg, msg_size, "%s: time of frame %d is not finite", dir, i);
    if (dvi_make_dirs(dir, msg, msg_size)) return -1;
    static const char* const kinds[2] = {"bodies", "contacts"};
    size_t dl = strlen(dir) + 32;
    char* path = malloc(dl);
    if (!path) return fail(msg, msg_size, "%s: out of memory", dir);
    int rc = 0;
    for (int k = 0; k < 2 && rc == 0; k++) {
        sbuf b = {0};
        sb_puts(&b, "<?xml version=\"1.0\"?>\n"
                    "<VTKFile type=\"Collection\" version=\"1.0\" byte_order=\"LittleEndian\">\n"
                    "  <Collection>\n");
        for (int i = 0; i < frames; i++) {
            char t[32];
            format_roundtrip(t, times[i]);
            sb_printf(&b, "    <DataSet timestep=\"%s\" group=\"\" part=\"0\" file=\"frames/%s_%06d.vtp\"/>\n", t,
                      kinds[k], i);
        }
        sb_puts(&b, "  </Collection>\n</VTKFile>\n");
        snprintf(path, dl, "%s/%s.pvd", dir, kinds[k]);
        if (b.failed) rc = fail(msg, msg_size, "%s: out of memory", path);
        else rc = dvi_write_file_atomic(path, b.data, b.len, msg, msg_size);
        sb_free(&b);
    }
    free(path);
    return rc;
}

/* ==== JSON writer ======================================================== */

#define JSON_MAX_DEPTH 128

typedef struct json_frame {
    char type;   /* '{' or '[' */
    char inl;    /* inline (one line) */
    char keyed;  /* a key is waiting for its value */
    int count;   /* members/elements so far */
} json_frame;

struct dvi_json_writer {
    FILE* f;
    sbuf buf;
    int depth;
    int top_values;
    int finished;
    json_frame stack[JSON_MAX_DEPTH];
    char err[256];
};

static int json_error(dvi_json_writer* w, const char* what)
{
    if (!w->err[0]) snprintf(w->err, sizeof w->err, "JSON writer: %s", what);
    return -1;
}

static void json_out(dvi_json_writer* w, const char* s, size_t n)
{
    if (w->err[0]) return;
    if (w->f) {
        if (fwrite(s, 1, n, w->f) != n) json_error(w, "write error");
    } else {
        sb_putn(&w->buf, s, n);
        if (w->buf.failed) json_error(w, "out of memory");
    }
}

static void json_puts(dvi_json_writer* w, const char* s) { json_out(w, s, strlen(s)); }

static void json_indent(dvi_json_writer* w, int depth)
{
    static const char spaces[] = "                                ";
    json_out(w, "\n", 1);
    for (int n = 2 * depth; n > 0; n -= 32) json_out(w, spaces, (size_t)(n < 32 ? n : 32));
}

static void json_escaped(dvi_json_writer* w, const char* text)
{
    const unsigned char* s = (const unsigned char*)text;
    json_out(w, "\"", 1);
    const unsigned char* run = s;
    while (*s) {
        unsigned c = *s;
        const char* rep = NULL;
        char u[8];
        int len = 1;
        if (c == '"') rep = "\\\"";
        else if (c == '\\') rep = "\\\\";
        else if (c == '\n') rep = "\\n";
        else if (c == '\r') rep = "\\r";
        else if (c == '\t') rep = "\\t";
        else if (c == '\b') rep = "\\b";
        else if (c == '\f') rep = "\\f";
        else if (c < 0x20) {
            snprintf(u, sizeof u, "\\u%04x", c);
            rep = u;
        } else if (c >= 0x80) {
            len = utf8_len(s);
            if (len == 0) {
                rep = "\\ufffd";
                len = 1;
            }
        }
        if (rep) {
            json_out(w, (const char*)run, (size_t)(s - run));
            json_puts(w, rep);
            s += len;
            run = s;
        } else s += len;
    }
    json_out(w, (const char*)run, (size_t)(s - run));
    json_out(w, "\"", 1);
}

/* Separator and indentation before a value; checks the grammar. */
static int json_before_value(dvi_json_writer* w)
{
    if (w->err[0]) return -1;
    if (w->finished) return json_error(w, "value after finish");
    if (w->depth == 0) {
        if (w->top_values > 0) return json_error(w, "second top-level value");
        w->top_values++;
        return 0;
    }
    json_frame* fr = &w->stack[w->depth - 1];
    if (fr->type == '{') {
        if (!fr->keyed) return json_error(w, "value without a key inside an object");
        fr->keyed = 0;
        return 0;
    }
    if (fr->count > 0) json_out(w, fr->inl ? ", " : ",", fr->inl ? 2 : 1);
    if (!fr->inl) json_indent(w, w->depth);
    fr->count++;
    return w->err[0] ? -1 : 0;
}

static int json_begin(dvi_json_writer* w, char type, int inl)
{
    if (!w) return -1;
    if (json_before_value(w)) return -1;
    if (w->depth >= JSON_MAX_DEPTH) return json_error(w, "nesting too deep");
    json_frame* fr = &w->stack[w->depth++];
    fr->type = type;
    fr->inl = (char)(inl || (w->depth > 1 && w->stack[w->depth - 2].inl));
    fr->keyed = 0;
    fr->count = 0;
    json_out(w, type == '{' ? "{" : "[", 1);
    return w->err[0] ? -1 : 0;
}

static int json_end(dvi_json_writer* w, char type)
{
    if (!w) return -1;
    if (w->err[0]) return -1;
    if (w->depth == 0) return json_error(w, type == '{' ? "end_object without an open object" : "end_array without an open array");
    json_frame* fr = &w->stack[w->depth - 1];
    if (fr->type != type) return json_error(w, type == '{' ? "end_object closes an array" : "end_array closes an object");
    if (fr->keyed) return json_error(w, "key without a value at the end of an object");
    w->depth--;
    if (fr->count > 0 && !fr->inl) json_indent(w, w->depth);
    json_out(w, type == '{' ? "}" : "]", 1);
    return w->err[0] ? -1 : 0;
}

static dvi_json_writer* json_new(void)
{
    dvi_json_writer* w = calloc(1, sizeof *w);
    return w;
}

int dvi_json_writer_open_file(dvi_json_writer** out, FILE* f)
{
    if (!out) return -1;
    *out = NULL;
    if (!f) return -1;
    dvi_json_writer* w = json_new();
    if (!w) return -1;
    w->f = f;
    *out = w;
    return 0;
}

int dvi_json_writer_open_buffer(dvi_json_writer** out)
{
    if (!out) return -1;
    *out = json_new();
    if (!*out) return -1;
    sb_reserve(&(*out)->buf, 1024);
    if ((*out)->buf.failed) {
        free(*out);
        *out = NULL;
        return -1;
    }
    (*out)->buf.data[0] = '\0';
    return 0;
}

const char* dvi_json_writer_buffer(const dvi_json_writer* w, size_t* size)
{
    if (size) *size = 0;
    if (!w || w->f) return NULL;
    if (size) *size = w->buf.len;
    return w->buf.data ? w->buf.data : "";
}

int dvi_json_writer_finish(dvi_json_writer* w, char* msg, size_t msg_size)
{
    if (!w) return fail(msg, msg_size, "JSON writer: none");
    if (!w->err[0] && !w->finished) {
        if (w->depth > 0) json_error(w, w->stack[w->depth - 1].type == '{' ? "unclosed object" : "unclosed array");
        else if (w->top_values == 0) json_error(w, "no value written");
        else {
            json_out(w, "\n", 1);
            if (w->f && fflush(w->f) != 0) json_error(w, "write error");
            w->finished = 1;
        }
    }
    if (w->err[0]) return fail(msg, msg_size, "%s", w->err);
    return 0;
}

const char* dvi_json_writer_error(const dvi_json_writer* w) { return w ? w->err : ""; }

void dvi_json_writer_free(dvi_json_writer* w)
{
    if (!w) return;
    sb_free(&w->buf);
    free(w);
}

int dvi_json_begin_object(dvi_json_writer* w) { return json_begin(w, '{', 0); }
int dvi_json_end_object(dvi_json_writer* w) { return json_end(w, '{'); }
int dvi_json_begin_array(dvi_json_writer* w) { return json_begin(w, '[', 0); }
int dvi_json_begin_array_inline(dvi_json_writer* w) { return json_begin(w, '[', 1); }
int dvi_json_end_array(dvi_json_writer* w) { return json_end(w, '['); }

int dvi_json_key(dvi_json_writer* w, const char* key)
{
    if (!w) return -1;
    if (w->err[0]) return -1;
    if (w->finished) return json_error(w, "key after finish");
    if (!key) return json_error(w, "NULL key");
    if (w->depth == 0 || w->stack[w->depth - 1].type != '{') return json_error(w, "key outside an object");
    json_frame* fr = &w->stack[w->depth - 1];
    if (fr->keyed) return json_error(w, "two keys in a row");
    if (fr->count > 0) json_out(w, fr->inl ? ", " : ",", fr->inl ? 2 : 1);
    if (!fr->inl) json_indent(w, w->depth);
    json_escaped(w, key);
    json_out(w, ": ", 2);
    fr->keyed = 1;
    fr->count++;
    return w->err[0] ? -1 : 0;
}

int dvi_json_string(dvi_json_writer* w, const char* s)
{
    if (!w || json_before_value(w)) return -1;
    if (s) json_escaped(w, s);
    else json_puts(w, "null");
    return w->err[0] ? -1 : 0;
}

int dvi_json_number(dvi_json_writer* w, double v)
{
    if (!w || json_before_value(w)) return -1;
    if (!isfinite(v)) json_puts(w, "null");
    else {
        char t[32];
        int n = format_roundtrip(t, v);
        json_out(w, t, (size_t)n);
    }
    return w->err[0] ? -1 : 0;
}

int dvi_json_int(dvi_json_writer* w, long long v)
{
    if (!w || json_before_value(w)) return -1;
    char t[32];
    int n = snprintf(t, sizeof t, "%lld", v);
    json_out(w, t, (size_t)n);
    return w->err[0] ? -1 : 0;
}

int dvi_json_bool(dvi_json_writer* w, bool v)
{
    if (!w || json_before_value(w)) return -1;
    json_puts(w, v ? "true" : "false");
    return w->err[0] ? -1 : 0;
}

int dvi_json_null(dvi_json_writer* w)
{
    if (!w || json_before_value(w)) return -1;
    json_puts(w, "null");
    return w->err[0] ? -1 : 0;
}

int dvi_json_key_string(dvi_json_writer* w, const char* key, const char* s)
{
    return dvi_json_key(w, key) ? -1 : dvi_json_string(w, s);
}

int dvi_json_key_number(dvi_json_writer* w, const char* key, double v)
{
    return dvi_json_key(w, key) ? -1 : dvi_json_number(w, v);
}

int dvi_json_key_int(dvi_json_writer* w, const char* key, long long v)
{
    return dvi_json_key(w, key) ? -1 : dvi_json_int(w, v);
}

int dvi_json_key_bool(dvi_json_writer* w, const char* key, bool v)
{
    return dvi_json_key(w, key) ? -1 : dvi_json_bool(w, v);
}

int dvi_json_key_numbers(dvi_json_writer* w, const char* key, const double* v, int n)
{
    if (dvi_json_key(w, key) || dvi_json_begin_array_inline(w)) return -1;
    if (n > 0 && !v) return json_error(w, "NULL number array");
    for (int i = 0; i < n; i++)
        if (dvi_json_number(w, v[i])) return -1;
    return dvi_json_end_array(w);
}
