/* Output writers (dvi/output.h): CSV time series, written and read back. */
#include "out_internal.h"
#include "regular_file.h"

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
    base_error_set(DVI_ERR_IO, c->err);
}

static dvi_csv* csv_alloc(const char* path, int columns)
{
    dvi_csv* c = calloc(1, sizeof *c);
    if (!c) return NULL;
    c->path = out_strdup(path);
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

dvi_status dvi_csv_open(dvi_csv** out, const char* path, int columns, const char* const* names,
                        const char* const* units, char* msg, size_t msg_size)
{
    if (!out) return out_fail_st(DVI_ERR_INVALID_ARG, msg, msg_size, "CSV: no output pointer");
    *out = NULL;
    if (!path || !*path) return out_fail_st(DVI_ERR_INVALID_ARG, msg, msg_size, "CSV: empty path");
    if (columns < 1 || columns > 1000000) return out_fail_st(DVI_ERR_INVALID_ARG, msg, msg_size,
                                                             "%s: bad column count %d", path, columns);
    if (!names) return out_fail_st(DVI_ERR_INVALID_ARG, msg, msg_size, "%s: no column names", path);
    for (int i = 0; i < columns; i++)
        if (!names[i]) return out_fail_st(DVI_ERR_INVALID_ARG, msg, msg_size, "%s: column %d has no name", path, i + 1);
    dvi_csv* c = csv_alloc(path, columns);
    if (!c) return out_fail(msg, msg_size, "%s: out of memory", path);
    c->f = fopen(path, "wb");
    if (!c->f) {
        int e = errno;
        csv_free(c);
        return out_fail(msg, msg_size, "%s: cannot create: %s", path, strerror(e));
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
        return out_fail(msg, msg_size, "%s: cannot write the header: %s", path, strerror(e));
    }
    *out = c;
    return DVI_OK;
}

/* Number of fields of a CSV line (quote-aware; the line has no '\n'). */
int out_csv_count_fields(const char* s)
{
    int n = 1, inq = 0;
    for (; *s; s++) {
        if (*s == '"') inq = !inq;
        else if (*s == ',' && !inq) n++;
    }
    return n;
}

void out_chomp(char* line, ssize_t* len)
{
    while (*len > 0 && (line[*len - 1] == '\n' || line[*len - 1] == '\r')) line[--*len] = '\0';
}

/* Opens path (mode; `what` names the purpose in the message) and reads its
 * header line: the number of its fields in *columns, f left after it. */
static dvi_status open_with_header(const char* path, const char* mode, const char* what, FILE** out, int* columns,
                                   char* msg, size_t msg_size)
{
    *out = NULL;
    char why[160];
    FILE* f = base_open_regular_mode(path, mode[1] == '+' ? O_RDWR : O_RDONLY, mode, 0, NULL, why, sizeof why);
    if (!f) return out_fail(msg, msg_size, "%s%s: %s", path, what, why);
    char* line = NULL;
    size_t cap = 0;
    ssize_t len = getline(&line, &cap, f);
    if (len <= 0 || line[len - 1] != '\n') {
        free(line);
        fclose(f);
        return out_fail(msg, msg_size, "%s: no complete header line", path);
    }
    out_chomp(line, &len);
    *columns = out_csv_count_fields(line);
    free(line);
    *out = f;
    return DVI_OK;
}

dvi_status dvi_csv_open_resume(dvi_csv** out, const char* path, long long rows, int columns, char* msg,
                               size_t msg_size)
{
    if (!out) return out_fail_st(DVI_ERR_INVALID_ARG, msg, msg_size, "CSV: no output pointer");
    *out = NULL;
    if (!path || !*path) return out_fail_st(DVI_ERR_INVALID_ARG, msg, msg_size, "CSV: empty path");
    if (columns < 1 || columns > 1000000) return out_fail_st(DVI_ERR_INVALID_ARG, msg, msg_size,
                                                             "%s: bad column count %d", path, columns);
    if (rows < 0) return out_fail(msg, msg_size, "%s: cannot resume at row %lld", path, rows);
    FILE* f;
    int have;
    dvi_status st = open_with_header(path, "r+b", " to resume", &f, &have, msg, msg_size);
    if (st != DVI_OK) return st;
    if (have != columns) {
        fclose(f);
        return out_fail(msg, msg_size, "%s: header has %d columns, expected %d", path, have, columns);
    }
    /* Skip `rows` complete lines. */
    long long n = 0;
    int ch = 0;
    while (n < rows && (ch = getc(f)) != EOF)
        if (ch == '\n') n++;
    if (n < rows) {
        int bad = ferror(f);
        fclose(f);
        if (bad) return out_fail(msg, msg_size, "%s: read error while resuming", path);
        return out_fail(msg, msg_size, "%s: has only %lld complete data rows, cannot resume after row %lld", path, n,
                    rows);
    }
    off_t keep = ftello(f);
    if (keep < 0 || fflush(f) != 0 || ftruncate(fileno(f), keep) != 0 || fseeko(f, keep, SEEK_SET) != 0) {
        int e = errno;
        fclose(f);
        return out_fail(msg, msg_size, "%s: cannot truncate after row %lld: %s", path, rows, strerror(e));
    }
    dvi_csv* c = csv_alloc(path, columns);
    if (!c) {
        fclose(f);
        return out_fail(msg, msg_size, "%s: out of memory", path);
    }
    c->f = f;
    c->rows = rows;
    setvbuf(c->f, NULL, _IOFBF, 1 << 16);
    *out = c;
    return DVI_OK;
}

dvi_status dvi_csv_write_row(dvi_csv* c, const double* values)
{
    if (!c) return out_fail_st(DVI_ERR_INVALID_ARG, NULL, 0, "CSV writer: NULL");
    if (c->failed) return out_sticky(DVI_ERR_IO, c->err);
    if (!values) {
        csv_set_error(c, "no values for a row", 0);
        return DVI_ERR_IO;
    }
    char* p = c->line;
    for (int i = 0; i < c->columns; i++) {
        if (i) *p++ = ',';
        p += out_format_g10(p, values[i]);
    }
    *p++ = '\n';
    size_t n = (size_t)(p - c->line);
    if (fwrite(c->line, 1, n, c->f) != n) {
        csv_set_error(c, "cannot write a row", errno);
        return DVI_ERR_IO;
    }
    c->rows++;
    return DVI_OK;
}

long long dvi_csv_rows(const dvi_csv* c) { return c ? c->rows : 0; }
int dvi_csv_columns(const dvi_csv* c) { return c ? c->columns : 0; }
const char* dvi_csv_path(const dvi_csv* c) { return c ? c->path : ""; }
const char* dvi_csv_last_error(const dvi_csv* c) { return c ? c->err : ""; }

dvi_status dvi_csv_flush(dvi_csv* c)
{
    if (!c) return out_fail_st(DVI_ERR_INVALID_ARG, NULL, 0, "CSV writer: NULL");
    if (c->failed) return out_sticky(DVI_ERR_IO, c->err);
    if (fflush(c->f) != 0) {
        csv_set_error(c, "cannot flush", errno);
        return DVI_ERR_IO;
    }
    if (fsync(fileno(c->f)) != 0 && errno != EINVAL && errno != EROFS) {
        csv_set_error(c, "cannot sync", errno);
        return DVI_ERR_IO;
    }
    return DVI_OK;
}

dvi_status dvi_csv_close(dvi_csv* c)
{
    if (!c) return DVI_OK;
    int bad = fflush(c->f) != 0;
    if (fclose(c->f) != 0) bad = 1;
    dvi_status st = DVI_OK;
    if (c->failed) st = out_sticky(DVI_ERR_IO, c->err);
    else if (bad) st = out_fail(NULL, 0, "%s: cannot close", c->path);
    csv_free(c);
    return st;
}

dvi_status dvi_csv_count_rows(const char* path, long long* rows, int* columns, char* msg, size_t msg_size)
{
    if (rows) *rows = 0;
    if (columns) *columns = 0;
    if (!path || !*path) return out_fail_st(DVI_ERR_INVALID_ARG, msg, msg_size, "CSV: empty path");
    FILE* f;
    int have;
    dvi_status st = open_with_header(path, "rb", "", &f, &have, msg, msg_size);
    if (st != DVI_OK) return st;
    if (columns) *columns = have;
    long long n = 0;
    char buf[1 << 16];
    size_t got;
    while ((got = fread(buf, 1, sizeof buf, f)) > 0)
        for (size_t i = 0; i < got; i++) n += buf[i] == '\n';
    int bad = ferror(f);
    fclose(f);
    if (bad) return out_fail(msg, msg_size, "%s: read error", path);
    if (rows) *rows = n;
    return DVI_OK;
}

/* ==== CSV reading (for plots) ============================================= */

/* Splits a header line into malloc'd fields (RFC 4180 quoting). */
int out_csv_split_header(const char* s, char*** fields_out, int* count_out)
{
    int n = out_csv_count_fields(s);
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
void out_csv_parse_row(const char* p, double* vals, int ncols)
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
