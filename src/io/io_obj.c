/* dvicontact — Wavefront OBJ reader (io.h): vertices and faces only.
 *
 * Algorithm: one pass over the file, line by line. Each line is read into a
 * growing buffer (capped at OBJ_MAX_LINE bytes; control characters other than
 * tab, CR, VT and FF are refused as binary data), cut at '#', split into
 * whitespace-separated tokens and dispatched on its keyword. `v` appends a
 * vertex; `f` resolves its indices against the vertices defined so far
 * (negative = relative to the end) and appends the fan (0, k, k+1) of its
 * polygon. Numbers are checked against the OBJ syntax first and then converted
 * by strtod with the '.' replaced by the locale's decimal point, so the result
 * does not depend on the C locale. Arrays grow by doubling; every count is
 * checked against INT32_MAX / 3 before it grows.
 *
 * Cost: O(file size) time; memory O(vertices + triangles + longest line).
 * Errors leave `out` zeroed and free everything; messages name file and line.
 */
#include "dvi/io.h"

#include "error.h"
#include "regular_file.h"

#include <limits.h>
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OBJ_MAX_LINE ((size_t)1 << 20)       /* bytes per line, newline excluded */
#define OBJ_MAX_COUNT ((size_t)INT32_MAX / 3) /* vertices, triangles */
#define OBJ_MAX_NUMBER 400                    /* characters in one number */
#define OBJ_MAX_VALUES 7                      /* x y z [w] or x y z r g b [a] */

typedef struct obj_reader {
    const char* path;
    FILE* file;
    long long line;       /* current line number (1-based) */
    char* buf;            /* current line, NUL-terminated */
    size_t buf_cap;
    double* v;            /* [3 · nv] */
    size_t nv, v_cap;     /* v_cap in vertices */
    int32_t* t;           /* [3 · nt] */
    size_t nt, t_cap;     /* t_cap in triangles */
    int32_t* poly;        /* zero-based indices of the current face */
    size_t poly_cap;
    char* msg;
    size_t msg_size;
} obj_reader;

/* Writes "path:line: text" (line 0: "path: text") into the message buffer and
 * returns st. */
static dvi_status fail(obj_reader* r, dvi_status st, const char* fmt, ...)
{
    char where[1024];
    if (r->line > 0) snprintf(where, sizeof where, "%s:%lld", r->path, r->line);
    va_list ap;
    va_start(ap, fmt);
    base_error_vreport(r->msg, r->msg_size, st, r->line > 0 ? where : r->path, fmt, ap);
    va_end(ap);
    return st;
}

/* Copies at most 40 bytes of a token for a message, with an ellipsis. */
static const char* excerpt(const char* tok, char out[48])
{
    size_t n = strlen(tok);
    if (n <= 40) {
        memcpy(out, tok, n + 1);
    } else {
        memcpy(out, tok, 40);
        memcpy(out + 40, "...", 4);
    }
    return out;
}

/* Reads the next line into r->buf. Returns DVI_OK, DVI_ABORTED at end of file
 * (nothing read), or an error. */
static dvi_status read_line(obj_reader* r)
{
    size_t n = 0;
    int ch;
    bool any = false;
    r->line++;
    while ((ch = getc(r->file)) != EOF) {
        any = true;
        if (ch == '\n') break;
        if ((ch < 0x20 && ch != '\t' && ch != '\r' && ch != '\v' && ch != '\f') || ch == 0x7f)
            return fail(r, DVI_ERR_PARSE, "invalid byte 0x%02x (not a text OBJ file?)", (unsigned)ch);
        if (n == OBJ_MAX_LINE) return fail(r, DVI_ERR_PARSE, "line longer than %zu bytes", OBJ_MAX_LINE);
        if (n + 1 >= r->buf_cap) {
            size_t cap = r->buf_cap ? 2 * r->buf_cap : 256;
            if (cap > OBJ_MAX_LINE + 1) cap = OBJ_MAX_LINE + 1;
            char* nb = realloc(r->buf, cap);
            if (!nb) return fail(r, DVI_ERR_NOMEM, "out of memory reading a line");
            r->buf = nb;
            r->buf_cap = cap;
        }
        r->buf[n++] = (char)ch;
    }
    if (ferror(r->file)) return fail(r, DVI_ERR_IO, "read error");
    if (!any) return DVI_ABORTED;
    if (!r->buf) { /* an empty line as the first one */
        r->buf = malloc(256);
        if (!r->buf) return fail(r, DVI_ERR_NOMEM, "out of memory reading a line");
        r->buf_cap = 256;
    }
    r->buf[n] = '\0';
    return DVI_OK;
}

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

/* Next whitespace-separated token of *s (NUL-terminated in place), or NULL. */
static char* next_token(char** s)
{
    char* p = *s;
    while (*p && is_space(*p)) p++;
    if (!*p) {
        *s = p;
        return NULL;
    }
    char* tok = p;
    while (*p && !is_space(*p)) p++;
    if (*p) *p++ = '\0';
    *s = p;
    return tok;
}

/* Does a start with the lower-case word b, ignoring case (whole: a ends there)? */
static bool istarts(const char* a, const char* b, bool whole)
{
    for (; *b; a++, b++) {
        char x = *a >= 'A' && *a <= 'Z' ? (char)(*a - 'A' + 'a') : *a;
        if (x != *b) return false;
    }
    return !whole || *a == '\0';
}

/* Parses a decimal number with the OBJ syntax [+-]digits[.digits][(e|E)[+-]digits]
 * (digits may be empty on one side of the point). */
static dvi_status parse_number(obj_reader* r, const char* tok, double* out)
{
    char ex[48];
    const char* p = tok;
    if (*p == '+' || *p == '-') p++;
    if (istarts(p, "nan", true) || istarts(p, "nan(", false) || istarts(p, "inf", true) ||
        istarts(p, "infinity", true))
        return fail(r, DVI_ERR_PARSE, "non-finite value '%s'", excerpt(tok, ex));
    size_t digits = 0;
    while (*p >= '0' && *p <= '9') p++, digits++;
    if (*p == '.') {
        p++;
        while (*p >= '0' && *p <= '9') p++, digits++;
    }
    bool ok = digits > 0;
    if (ok && (*p == 'e' || *p == 'E')) {
        p++;
        if (*p == '+' || *p == '-') p++;
        size_t ed = 0;
        while (*p >= '0' && *p <= '9') p++, ed++;
        ok = ed > 0;
    }
    if (!ok || *p) return fail(r, DVI_ERR_PARSE, "invalid number '%s'", excerpt(tok, ex));
    size_t len = strlen(tok);
    if (len > OBJ_MAX_NUMBER) return fail(r, DVI_ERR_PARSE, "number too long '%s'", excerpt(tok, ex));
    /* strtod follows the C locale's decimal point: substitute it for '.' */
    const char* dp = localeconv()->decimal_point;
    size_t dpl = dp && *dp ? strlen(dp) : 1;
    if (!dp || !*dp) dp = ".";
    if (dpl > 8) return fail(r, DVI_ERR_PARSE, "unsupported locale decimal point");
    char local[OBJ_MAX_NUMBER + 16];
    size_t k = 0;
    for (const char* q = tok; *q; q++) {
        if (*q == '.') {
            memcpy(local + k, dp, dpl);
            k += dpl;
        } else {
            local[k++] = *q;
        }
    }
    local[k] = '\0';
    char* end = NULL;
    double x = strtod(local, &end);
    if (end != local + k) return fail(r, DVI_ERR_PARSE, "invalid number '%s'", excerpt(tok, ex));
    if (!isfinite(x)) return fail(r, DVI_ERR_PARSE, "number out of range '%s'", excerpt(tok, ex));
    if (fabs(x) > 1e15) /* the bound of a scene file's numbers */
        return fail(r, DVI_ERR_PARSE, "number out of range '%s' (magnitude at most 1e15)", excerpt(tok, ex));
    *out = x;
    return DVI_OK;
}

/* Parses a signed decimal integer occupying [p, end); false on bad syntax.
 * Values beyond ±(INT32_MAX + 1) saturate (reported out of range later). */
static bool parse_int(const char* p, const char* end, long long* out)
{
    bool neg = false;
    if (p < end && (*p == '+' || *p == '-')) neg = *p++ == '-';
    if (p == end) return false;
    long long v = 0;
    for (; p < end; p++) {
        if (*p < '0' || *p > '9') return false;
        if (v <= (long long)INT32_MAX + 1) v = 10 * v + (*p - '0');
    }
    *out = neg ? -v : v;
    return true;
}

static dvi_status grow(obj_reader* r, void** arr, size_t* cap, size_t need, size_t elem, const char* what)
{
    if (need <= *cap) return DVI_OK;
    if (need > OBJ_MAX_COUNT) return fail(r, DVI_ERR_PARSE, "too many %s (more than %zu)", what, OBJ_MAX_COUNT);
    size_t c = *cap ? *cap : 64;
    while (c < need) c = c > OBJ_MAX_COUNT / 2 ? OBJ_MAX_COUNT : 2 * c;
    if (c > SIZE_MAX / elem) return fail(r, DVI_ERR_NOMEM, "out of memory (%s)", what);
    void* p = realloc(*arr, c * elem);
    if (!p) return fail(r, DVI_ERR_NOMEM, "out of memory (%s)", what);
    *arr = p;
    *cap = c;
    return DVI_OK;
}

static dvi_status parse_vertex(obj_reader* r, char* rest)
{
    double val[OBJ_MAX_VALUES];
    int n = 0;
    char* tok;
    while ((tok = next_token(&rest)) != NULL) {
        if (n == OBJ_MAX_VALUES) return fail(r, DVI_ERR_PARSE, "vertex with more than %d values", OBJ_MAX_VALUES);
        dvi_status st = parse_number(r, tok, &val[n]);
        if (st != DVI_OK) return st;
        n++;
    }
    if (n < 3) return fail(r, DVI_ERR_PARSE, "vertex with %d coordinate%s (3 needed)", n, n == 1 ? "" : "s");
    if (r->nv >= OBJ_MAX_COUNT) return fail(r, DVI_ERR_PARSE, "too many vertices (more than %zu)", OBJ_MAX_COUNT);
    dvi_status st = grow(r, (void**)&r->v, &r->v_cap, r->nv + 1, 3 * sizeof(double), "vertices");
    if (st != DVI_OK) return st;
    memcpy(r->v + 3 * r->nv, val, 3 * sizeof(double));
    r->nv++;
    return DVI_OK;
}

/* One face corner "v", "v/vt", "v//vn" or "v/vt/vn": the zero-based vertex. */
static dvi_status parse_corner(obj_reader* r, const char* tok, int32_t* out)
{
    char ex[48];
    const char* s1 = strchr(tok, '/');
    const char* end = tok + strlen(tok);
    const char* vend = s1 ? s1 : end;
    long long v;
    if (!parse_int(tok, vend, &v)) return fail(r, DVI_ERR_PARSE, "invalid face vertex '%s'", excerpt(tok, ex));
    if (s1) { /* texture and normal indices: syntax checked, values ignored */
        const char* s2 = strchr(s1 + 1, '/');
        long long dummy;
        const char* tend = s2 ? s2 : end;
        bool ok = (tend == s1 + 1) ? s2 != NULL : parse_int(s1 + 1, tend, &dummy) && dummy != 0;
        if (ok && s2) ok = !strchr(s2 + 1, '/') && parse_int(s2 + 1, end, &dummy) && dummy != 0;
        if (!ok) return fail(r, DVI_ERR_PARSE, "invalid face vertex '%s'", excerpt(tok, ex));
    }
    if (v == 0) return fail(r, DVI_ERR_PARSE, "face index 0 is invalid (indices start at 1)");
    long long nv = (long long)r->nv;
    long long k = v > 0 ? v - 1 : nv + v;
    if (k < 0 || k >= nv)
        return fail(r, DVI_ERR_PARSE, "face index %.*s out of range (%lld vertices)",
                    (int)(vend - tok > 40 ? 40 : vend - tok), tok, nv);
    *out = (int32_t)k;
    return DVI_OK;
}

static dvi_status parse_face(obj_reader* r, char* rest)
{
    size_t m = 0;
    char* tok;
    while ((tok = next_token(&rest)) != NULL) {
        dvi_status st = grow(r, (void**)&r->poly, &r->poly_cap, m + 1, sizeof(int32_t), "face");
        if (st != DVI_OK) return st;
        st = parse_corner(r, tok, &r->poly[m]);
        if (st != DVI_OK) return st;
        m++;
    }
    if (m < 3) return fail(r, DVI_ERR_PARSE, "face with %zu vertices (at least 3 needed)", m);
    size_t add = m - 2;
    if (add > OBJ_MAX_COUNT - r->nt)
        return fail(r, DVI_ERR_PARSE, "too many triangles (more than %zu)", OBJ_MAX_COUNT);
    dvi_status st = grow(r, (void**)&r->t, &r->t_cap, r->nt + add, 3 * sizeof(int32_t), "triangles");
    if (st != DVI_OK) return st;
    for (size_t k = 1; k + 1 < m; k++) {
        int32_t* t = r->t + 3 * r->nt++;
        t[0] = r->poly[0];
        t[1] = r->poly[k];
        t[2] = r->poly[k + 1];
    }
    return DVI_OK;
}

static dvi_status parse_line(obj_reader* r)
{
    char* s = r->buf;
    char* hash = strchr(s, '#');
    if (hash) *hash = '\0';
    char* key = next_token(&s);
    if (!key) return DVI_OK;
    if (strcmp(key, "v") == 0) return parse_vertex(r, s);
    if (strcmp(key, "f") == 0) return parse_face(r, s);
    static const char* const ignored[] = {"vt", "vn", "vp", "o", "g", "s", "usemtl", "mtllib", "l", "p"};
    for (size_t k = 0; k < sizeof ignored / sizeof ignored[0]; k++)
        if (strcmp(key, ignored[k]) == 0) return DVI_OK;
    char ex[48];
    return fail(r, DVI_ERR_PARSE, "unknown keyword '%s'", excerpt(key, ex));
}

/* At least one triangle with an area above 1e-14 of its longest edge
 * squared (a mesh of only degenerate triangles has no surface to collide
 * with). */
static bool any_proper_triangle(const obj_reader* r)
{
    for (size_t t = 0; t < (size_t)r->nt; t++) {
        const double* a = r->v + 3 * (size_t)r->t[3 * t];
        const double* b = r->v + 3 * (size_t)r->t[3 * t + 1];
        const double* c = r->v + 3 * (size_t)r->t[3 * t + 2];
        double e1[3], e2[3], e3[3], n[3];
        for (int k = 0; k < 3; k++) {
            e1[k] = b[k] - a[k];
            e2[k] = c[k] - a[k];
            e3[k] = c[k] - b[k];
        }
        n[0] = e1[1] * e2[2] - e1[2] * e2[1];
        n[1] = e1[2] * e2[0] - e1[0] * e2[2];
        n[2] = e1[0] * e2[1] - e1[1] * e2[0];
        double l = fmax(e1[0] * e1[0] + e1[1] * e1[1] + e1[2] * e1[2],
                        fmax(e2[0] * e2[0] + e2[1] * e2[1] + e2[2] * e2[2], e3[0] * e3[0] + e3[1] * e3[1] + e3[2] * e3[2]));
        if (sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]) > 1e-14 * l) return true;
    }
    return false;
}

dvi_status dvi_obj_read(const char* path, dvi_mesh_data* out, char* msg, size_t msg_size)
{
    if (msg && msg_size) msg[0] = '\0';
    if (out) memset(out, 0, sizeof *out);
    if (!path || !out) {
        const char* text = path ? "dvi_obj_read: out is NULL" : "dvi_obj_read: path is NULL";
        if (msg && msg_size) snprintf(msg, msg_size, "%s", text);
        return base_error_set(DVI_ERR_INVALID_ARG, text);
    }
    obj_reader r;
    memset(&r, 0, sizeof r);
    r.path = path;
    r.msg = msg;
    r.msg_size = msg_size;
    char why[160];
    r.file = base_open_regular(path, (uint64_t)1 << 30, NULL, why, sizeof why);
    if (!r.file) return fail(&r, DVI_ERR_IO, "%s", why);
    dvi_status st;
    while ((st = read_line(&r)) == DVI_OK) {
        st = parse_line(&r);
        if (st != DVI_OK) break;
    }
    if (st == DVI_ABORTED) { /* end of file */
        r.line = 0;
        st = r.nt > 0 ? DVI_OK : fail(&r, DVI_ERR_PARSE, "no faces");
        if (st == DVI_OK && !any_proper_triangle(&r))
            st = fail(&r, DVI_ERR_PARSE, "all %zu triangles are degenerate (zero area: collinear or repeated vertices)",
                      (size_t)r.nt);
    }
    fclose(r.file);
    free(r.buf);
    free(r.poly);
    if (st != DVI_OK) {
        free(r.v);
        free(r.t);
        return st;
    }
    out->vertex_count = (int32_t)r.nv;
    out->triangle_count = (int32_t)r.nt;
    out->vertices = r.v;
    out->triangles = r.t;
    return DVI_OK;
}

void dvi_mesh_data_free(dvi_mesh_data* m)
{
    if (!m) return;
    free(m->vertices);
    free(m->triangles);
    memset(m, 0, sizeof *m);
}
