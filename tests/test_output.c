/* The output writers (<dvi/output.h>, src/output/out_*.c), checked
 * structurally: CSV round trip and resume, SVG plots read back by a small
 * XML well-formedness checker, VTK frames read back by a VTK XML reader and
 * compared with the world, ParaView collections, atomic writes, and the JSON
 * writer parsed back with cJSON. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#ifdef DVI_HAVE_ZLIB
#include <zlib.h>
#endif

#include "dvi/world.h"
#include <dvi/output.h>
#include "test_util.h"

/* ==== temporary directory ================================================ */

static char tmp_dir[256];

static int setup_dir(void** state)
{
    (void)state;
    const char* base = getenv("TMPDIR");
    snprintf(tmp_dir, sizeof tmp_dir, "%s/dvi_test_output_XXXXXX", base && *base ? base : "/tmp");
    return mkdtemp(tmp_dir) ? 0 : -1;
}

static int teardown_dir(void** state)
{
    (void)state;
    if (!getenv("DVI_KEEP_TEST_FILES")) test_remove_tree(tmp_dir);
    return 0;
}

/* tmp_dir/name in a rotating set of static buffers */
static const char* tmp_path(const char* name)
{
    static char bufs[8][512];
    static int k;
    char* b = bufs[k++ % 8];
    snprintf(b, 512, "%s/%s", tmp_dir, name);
    return b;
}

static int file_exists(const char* path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* Number of lines and a copy of line i (0-based), '\n'-terminated lines. */
static int count_lines(const char* s)
{
    int n = 0;
    for (; *s; s++) n += *s == '\n';
    return n;
}

static const char* line_at(const char* s, int i, size_t* len)
{
    for (; i > 0 && *s; s++)
        if (*s == '\n') i--;
    const char* e = strchr(s, '\n');
    *len = e ? (size_t)(e - s) : strlen(s);
    return s;
}

/* Fails unless no "*.tmp" file is in dir. */
static void assert_no_tmp_files(const char* dir)
{
    DIR* d = opendir(dir);
    assert_non_null(d);
    struct dirent* e;
    while ((e = readdir(d)) != NULL) {
        size_t n = strlen(e->d_name);
        if (n >= 4 && strcmp(e->d_name + n - 4, ".tmp") == 0) {
            print_error("leftover temporary file %s/%s\n", dir, e->d_name);
            fail();
        }
    }
    closedir(d);
}

/* ==== a small XML reader that checks well-formedness ====================== */

typedef struct xnode {
    char* name;
    int nattr;
    char** an;
    char** av;
    struct xnode** kids;
    int nkids;
    char* text; /* direct character data, entities decoded */
    size_t textlen;
    struct xnode* parent;
} xnode;

typedef struct xparser {
    const char* p;
    char err[256];
    int depth;
} xparser;

static int xerr(xparser* x, const char* what)
{
    if (!x->err[0]) snprintf(x->err, sizeof x->err, "%s near \"%.40s\"", what, x->p);
    return -1;
}

static void xnode_free(xnode* n)
{
    if (!n) return;
    free(n->name);
    for (int i = 0; i < n->nattr; i++) {
        free(n->an[i]);
        free(n->av[i]);
    }
    free(n->an);
    free(n->av);
    for (int i = 0; i < n->nkids; i++) xnode_free(n->kids[i]);
    free(n->kids);
    free(n->text);
    free(n);
}

static int is_name_start(int c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_' || c == ':'; }
static int is_name_char(int c) { return is_name_start(c) || (c >= '0' && c <= '9') || c == '-' || c == '.'; }
static int is_ws(int c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

static void put_utf8(char** out, unsigned long cp)
{
    char* o = *out;
    if (cp < 0x80) *o++ = (char)cp;
    else if (cp < 0x800) {
        *o++ = (char)(0xC0 | (cp >> 6));
        *o++ = (char)(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        *o++ = (char)(0xE0 | (cp >> 12));
        *o++ = (char)(0x80 | ((cp >> 6) & 0x3F));
        *o++ = (char)(0x80 | (cp & 0x3F));
    } else {
        *o++ = (char)(0xF0 | (cp >> 18));
        *o++ = (char)(0x80 | ((cp >> 12) & 0x3F));
        *o++ = (char)(0x80 | ((cp >> 6) & 0x3F));
        *o++ = (char)(0x80 | (cp & 0x3F));
    }
    *out = o;
}

/* Decodes character data up to (not including) one of the stop characters;
 * checks entities and that no '<' occurs. Returns malloc'd text. */
static char* xdecode(xparser* x, char stop, size_t* len_out)
{
    const char* s = x->p;
    const char* e = s;
    while (*e && *e != stop && *e != '<') e++;
    if (stop != '<' && *e != stop) {
        xerr(x, *e == '<' ? "'<' inside an attribute value" : "unterminated attribute value");
        return NULL;
    }
    char* out = malloc((size_t)(e - s) + 1);
    char* o = out;
    while (s < e) {
        if (*s != '&') {
            *o++ = *s++;
            continue;
        }
        const char* semi = memchr(s, ';', (size_t)(e - s));
        if (!semi || semi - s > 12) {
            x->p = s;
            xerr(x, "'&' not starting an entity");
            free(out);
            return NULL;
        }
        size_t n = (size_t)(semi - s - 1);
        const char* name = s + 1;
        unsigned long cp = 0;
        if (n == 3 && strncmp(name, "amp", 3) == 0) cp = '&';
        else if (n == 2 && strncmp(name, "lt", 2) == 0) cp = '<';
        else if (n == 2 && strncmp(name, "gt", 2) == 0) cp = '>';
        else if (n == 4 && strncmp(name, "quot", 4) == 0) cp = '"';
        else if (n == 4 && strncmp(name, "apos", 4) == 0) cp = '\'';
        else if (n >= 2 && name[0] == '#') {
            char* end;
            if (name[1] == 'x') cp = strtoul(name + 2, &end, 16);
            else cp = strtoul(name + 1, &end, 10);
            if (end != semi || cp == 0 || cp > 0x10FFFF || (cp < 0x20 && cp != 9 && cp != 10 && cp != 13)) cp = 0;
        }
        if (cp == 0) {
            x->p = s;
            xerr(x, "unknown or invalid entity");
            free(out);
            return NULL;
        }
        put_utf8(&o, cp);
        s = semi + 1;
    }
    *o = '\0';
    if (len_out) *len_out = (size_t)(o - out);
    x->p = e;
    return out;
}

static int xskip_misc(xparser* x)
{
    for (;;) {
        while (is_ws(*x->p)) x->p++;
        if (strncmp(x->p, "<!--", 4) == 0) {
            const char* e = strstr(x->p + 4, "-->");
            if (!e) return xerr(x, "unterminated comment");
            x->p = e + 3;
        } else if (strncmp(x->p, "<?", 2) == 0) {
            const char* e = strstr(x->p + 2, "?>");
            if (!e) return xerr(x, "unterminated processing instruction");
            x->p = e + 2;
        } else return 0;
    }
}

static char* xname(xparser* x)
{
    const char* s = x->p;
    if (!is_name_start((unsigned char)*s)) {
        xerr(x, "expected a name");
        return NULL;
    }
    while (is_name_char((unsigned char)*x->p)) x->p++;
    char* n = malloc((size_t)(x->p - s) + 1);
    memcpy(n, s, (size_t)(x->p - s));
    n[x->p - s] = '\0';
    return n;
}

static xnode* xelement(xparser* x, xnode* parent)
{
    if (++x->depth > 200) {
        xerr(x, "nesting too deep");
        return NULL;
    }
    if (*x->p != '<') {
        xerr(x, "expected '<'");
        return NULL;
    }
    x->p++;
    xnode* n = calloc(1, sizeof *n);
    n->parent = parent;
    n->text = calloc(1, 1);
    n->name = xname(x);
    if (!n->name) goto bad;
    for (;;) {
        int had_ws = is_ws(*x->p);
        while (is_ws(*x->p)) x->p++;
        if (*x->p == '/' || *x->p == '>') break;
        if (!had_ws) {
            xerr(x, "attributes must be separated by white space");
            goto bad;
        }
        char* an = xname(x);
        if (!an) goto bad;
        for (int i = 0; i < n->nattr; i++)
            if (strcmp(n->an[i], an) == 0) {
                free(an);
                xerr(x, "duplicate attribute");
                goto bad;
            }
        n->an = realloc(n->an, (size_t)(n->nattr + 1) * sizeof *n->an);
        n->av = realloc(n->av, (size_t)(n->nattr + 1) * sizeof *n->av);
        n->an[n->nattr] = an;
        n->av[n->nattr] = NULL;
        n->nattr++;
        while (is_ws(*x->p)) x->p++;
        if (*x->p != '=') {
            xerr(x, "attribute without '='");
            goto bad;
        }
        x->p++;
        while (is_ws(*x->p)) x->p++;
        char q = *x->p;
        if (q != '"' && q != '\'') {
            xerr(x, "unquoted attribute value");
            goto bad;
        }
        x->p++;
        char* v = xdecode(x, q, NULL);
        if (!v) goto bad;
        n->av[n->nattr - 1] = v;
        x->p++; /* closing quote */
    }
    if (*x->p == '/') {
        if (x->p[1] != '>') {
            xerr(x, "expected '/>'");
            goto bad;
        }
        x->p += 2;
        x->depth--;
        return n;
    }
    x->p++; /* '>' */
    for (;;) {
        if (*x->p == '\0') {
            xerr(x, "unexpected end: unclosed element");
            goto bad;
        }
        if (strncmp(x->p, "</", 2) == 0) {
            x->p += 2;
            char* cn = xname(x);
            if (!cn) goto bad;
            int same = strcmp(cn, n->name) == 0;
            free(cn);
            if (!same) {
                xerr(x, "closing tag does not match");
                goto bad;
            }
            while (is_ws(*x->p)) x->p++;
            if (*x->p != '>') {
                xerr(x, "expected '>'");
                goto bad;
            }
            x->p++;
            x->depth--;
            return n;
        }
        if (strncmp(x->p, "<!--", 4) == 0 || strncmp(x->p, "<?", 2) == 0) {
            if (xskip_misc(x)) goto bad;
            continue;
        }
        if (strncmp(x->p, "<![CDATA[", 9) == 0) {
            const char* e = strstr(x->p, "]]>");
            if (!e) {
                xerr(x, "unterminated CDATA");
                goto bad;
            }
            x->p = e + 3;
            continue;
        }
        if (*x->p == '<') {
            xnode* k = xelement(x, n);
            if (!k) goto bad;
            n->kids = realloc(n->kids, (size_t)(n->nkids + 1) * sizeof *n->kids);
            n->kids[n->nkids++] = k;
            continue;
        }
        size_t len;
        char* t = xdecode(x, '<', &len);
        if (!t) goto bad;
        n->text = realloc(n->text, n->textlen + len + 1);
        memcpy(n->text + n->textlen, t, len + 1);
        n->textlen += len;
        free(t);
    }
bad:
    xnode_free(n);
    return NULL;
}

static int utf8_valid(const unsigned char* s)
{
    while (*s) {
        if (*s < 0x80) {
            if (*s < 0x20 && *s != '\t' && *s != '\n' && *s != '\r') return 0;
            s++;
            continue;
        }
        int n = (*s & 0xE0) == 0xC0 ? 2 : (*s & 0xF0) == 0xE0 ? 3 : (*s & 0xF8) == 0xF0 ? 4 : 0;
        if (n == 0) return 0;
        for (int i = 1; i < n; i++)
            if ((s[i] & 0xC0) != 0x80) return 0;
        s += n;
    }
    return 1;
}

/* Parses a whole document; fails the test with the reason if malformed. */
static xnode* xml_parse_or_fail(const char* text, const char* what)
{
    xparser x = {text, "", 0};
    if (!utf8_valid((const unsigned char*)text)) {
        print_error("%s: not valid UTF-8 / has control characters\n", what);
        fail();
    }
    xnode* root = NULL;
    if (xskip_misc(&x) == 0) root = xelement(&x, NULL);
    if (root && xskip_misc(&x) == 0 && *x.p != '\0') {
        xerr(&x, "content after the root element");
        xnode_free(root);
        root = NULL;
    }
    if (!root) {
        print_error("%s: malformed XML: %s\n", what, x.err);
        fail();
    }
    return root;
}

static const char* xattr(const xnode* n, const char* name)
{
    for (int i = 0; i < n->nattr; i++)
        if (strcmp(n->an[i], name) == 0) return n->av[i];
    return NULL;
}

static double xattr_num(const xnode* n, const char* name)
{
    const char* v = xattr(n, name);
    assert_non_null(v);
    char* end;
    double d = strtod(v, &end);
    assert_true(end != v && *end == '\0');
    return d;
}

static int has_class(const xnode* n, const char* cls)
{
    const char* c = xattr(n, "class");
    return c && strcmp(c, cls) == 0;
}

typedef struct xlist {
    xnode** v;
    int n;
} xlist;

/* All descendants of n (not n) with the element name (NULL: any) and class
 * (NULL: any), in document order. */
static void xcollect(const xnode* n, const char* name, const char* cls, xlist* out)
{
    for (int i = 0; i < n->nkids; i++) {
        xnode* k = n->kids[i];
        if ((!name || strcmp(k->name, name) == 0) && (!cls || has_class(k, cls))) {
            out->v = realloc(out->v, (size_t)(out->n + 1) * sizeof *out->v);
            out->v[out->n++] = k;
        }
        xcollect(k, name, cls, out);
    }
}

static xlist xfind(const xnode* n, const char* name, const char* cls)
{
    xlist l = {NULL, 0};
    xcollect(n, name, cls, &l);
    return l;
}

static xnode* xfirst(const xnode* n, const char* name, const char* cls)
{
    xlist l = xfind(n, name, cls);
    xnode* r = l.n ? l.v[0] : NULL;
    free(l.v);
    return r;
}

/* ==== CSV ================================================================= */

static void test_csv_roundtrip(void** state)
{
    (void)state;
    const char* path = tmp_path("roundtrip.csv");
    const char* names[] = {"t", "x", "count", "a,b \"q\"\n"};
    const char* units[] = {"s", "m", NULL, "N"};
    char msg[512];
    dvi_csv* c = NULL;
    assert_int_equal(dvi_csv_open(&c, path, 4, names, units, msg, sizeof msg), 0);
    assert_int_equal(dvi_csv_columns(c), 4);
    double special[] = {NAN, INFINITY, -INFINITY, -0.0, 1e-300, 0.1 + 0.2, 123456789.123};
    for (int i = 0; i < 100; i++) {
        double v[4] = {0.01 * i, sin(0.1 * i) * 1e3, (double)i, special[i % 7]};
        assert_int_equal(dvi_csv_write_row(c, v), 0);
    }
    assert_int_equal(dvi_csv_rows(c), 100);
    assert_int_equal(dvi_csv_flush(c), 0);
    assert_int_equal(dvi_csv_close(c), 0);

    char* text = test_read_text(path, NULL);
    assert_non_null(text);
    assert_int_equal(count_lines(text), 101);
    size_t len;
    const char* h = line_at(text, 0, &len);
    assert_true(len == strlen("t [s],x [m],count,\"a,b \"\"q\"\"  [N]\""));
    assert_memory_equal(h, "t [s],x [m],count,\"a,b \"\"q\"\"  [N]\"", len);
    assert_null(strchr(text, '\r'));
    for (int i = 0; i < 100; i++) {
        const char* l = line_at(text, i + 1, &len);
        char buf[256];
        memcpy(buf, l, len);
        buf[len] = '\0';
        double v[4];
        char* p = buf;
        for (int k = 0; k < 4; k++) {
            v[k] = strtod(p, &p);
            assert_true(*p == (k < 3 ? ',' : '\0'));
            p++;
        }
        assert_near(v[0], 0.01 * i, 1e-12);
        assert_near(v[1], sin(0.1 * i) * 1e3, 1e-9 * 1e3);
        assert_true(v[2] == (double)i);
        double e = special[i % 7];
        if (isnan(e)) {
            assert_true(isnan(v[3]));
            assert_non_null(strstr(buf, ",nan"));
            assert_null(strstr(buf, "-nan"));
        } else if (isinf(e)) assert_true(v[3] == e);
        else assert_near(v[3], e, fabs(e) * 1e-9);
    }
    free(text);

    long long rows = -1;
    int cols = -1;
    assert_int_equal(dvi_csv_count_rows(path, &rows, &cols, msg, sizeof msg), 0);
    assert_int_equal(rows, 100);
    assert_int_equal(cols, 4);
}

static void test_csv_resume(void** state)
{
    (void)state;
    const char* path = tmp_path("resume.csv");
    const char* names[] = {"t", "z", "v"};
    const char* units[] = {"s", "m", "m/s"};
    char msg[512];
    dvi_csv* c = NULL;
    assert_int_equal(dvi_csv_open(&c, path, 3, names, units, msg, sizeof msg), 0);
    for (int i = 0; i < 100; i++) {
        double v[3] = {0.001 * i, cos(i * 0.3), -sin(i * 0.3)};
        assert_int_equal(dvi_csv_write_row(c, v), 0);
    }
    assert_int_equal(dvi_csv_close(c), 0);
    char* before = test_read_text(path, NULL);

    /* resume at 40, append 10 (different values) */
    assert_int_equal(dvi_csv_open_resume(&c, path, 40, 3, msg, sizeof msg), 0);
    assert_int_equal(dvi_csv_rows(c), 40);
    for (int i = 0; i < 10; i++) {
        double v[3] = {1000.0 + i, 7.0, 8.0};
        assert_int_equal(dvi_csv_write_row(c, v), 0);
    }
    assert_int_equal(dvi_csv_rows(c), 50);
    assert_int_equal(dvi_csv_close(c), 0);
    char* after = test_read_text(path, NULL);
    assert_int_equal(count_lines(after), 51);
    size_t lb, la;
    const char* end_b = line_at(before, 41, &lb);
    const char* end_a = line_at(after, 41, &la);
    assert_int_equal(end_b - before, end_a - after);
    assert_memory_equal(before, after, (size_t)(end_a - after)); /* header + first 40 rows */
    assert_true(strncmp(end_a, "1000,7,8\n", 9) == 0);
    assert_true(strcmp(after + strlen(after) - 9, "1009,7,8\n") == 0);
    free(before);

    /* refused: more rows than the file holds, wrong column count; file unchanged */
    assert_int_not_equal(dvi_csv_open_resume(&c, path, 51, 3, msg, sizeof msg), 0);
    assert_null(c);
    assert_non_null(strstr(msg, path));
    assert_non_null(strstr(msg, "50"));
    assert_int_not_equal(dvi_csv_open_resume(&c, path, 10, 4, msg, sizeof msg), 0);
    assert_non_null(strstr(msg, "columns"));
    char* same = test_read_text(path, NULL);
    assert_string_equal(same, after);
    free(same);

    /* a partly written last line is not a row and is cut on resume */
    FILE* f = fopen(path, "ab");
    fputs("2000,1.2", f);
    fclose(f);
    long long rows = 0;
    assert_int_equal(dvi_csv_count_rows(path, &rows, NULL, msg, sizeof msg), 0);
    assert_int_equal(rows, 50);
    assert_int_equal(dvi_csv_open_resume(&c, path, 50, 3, msg, sizeof msg), 0);
    double v[3] = {3000, 1, 2};
    assert_int_equal(dvi_csv_write_row(c, v), 0);
    assert_int_equal(dvi_csv_close(c), 0);
    char* last = test_read_text(path, NULL);
    assert_int_equal(count_lines(last), 52);
    assert_memory_equal(last, after, strlen(after));
    assert_string_equal(last + strlen(after), "3000,1,2\n");
    free(last);
    free(after);

    /* resume at 0 keeps only the header */
    assert_int_equal(dvi_csv_open_resume(&c, path, 0, 3, msg, sizeof msg), 0);
    assert_int_equal(dvi_csv_close(c), 0);
    char* hdr = test_read_text(path, NULL);
    assert_string_equal(hdr, "t [s],z [m],v [m/s]\n");
    free(hdr);
}

static void test_csv_errors(void** state)
{
    (void)state;
    char msg[512] = "";
    dvi_csv* c = (dvi_csv*)&c;
    const char* names[] = {"t"};
    const char* bad = tmp_path("no/such/dir/x.csv");
    assert_int_not_equal(dvi_csv_open(&c, bad, 1, names, NULL, msg, sizeof msg), 0);
    assert_null(c);
    assert_non_null(strstr(msg, bad));
    assert_int_equal(dvi_csv_open(&c, tmp_path("x.csv"), 0, names, NULL, msg, sizeof msg), DVI_ERR_INVALID_ARG);
    assert_int_not_equal(dvi_csv_open_resume(&c, tmp_path("missing.csv"), 0, 1, msg, sizeof msg), 0);
    assert_non_null(strstr(msg, "missing.csv"));
    test_write_text(tmp_path("empty.csv"), "");
    assert_int_not_equal(dvi_csv_open_resume(&c, tmp_path("empty.csv"), 0, 1, msg, sizeof msg), 0);
    assert_int_not_equal(dvi_csv_count_rows(tmp_path("missing.csv"), NULL, NULL, msg, sizeof msg), 0);
    assert_int_equal(dvi_csv_close(NULL), 0);
    /* no message buffer: still no crash */
    assert_int_not_equal(dvi_csv_open(&c, bad, 1, names, NULL, NULL, 0), 0);
}

/* ==== SVG ================================================================= */

/* Tick label back to a number: "−1.5×10⁻⁶", "0.25", "12000". */
static int parse_tick_label(const char* s, double* out)
{
    int neg = 0;
    if (strncmp(s, "\xE2\x88\x92", 3) == 0) neg = 1, s += 3;
    else if (*s == '-') neg = 1, s++;
    char* end;
    double m = strtod(s, &end);
    if (end == s) return -1;
    s = end;
    if (*s == '\0') {
        *out = neg ? -m : m;
        return 0;
    }
    if (strncmp(s, "\xC3\x97" "10", 4) != 0) return -1;
    s += 4;
    int eneg = 0, e = 0, digits = 0;
    while (*s) {
        if (strncmp(s, "\xE2\x81\xBB", 3) == 0) eneg = 1, s += 3;
        else if (strncmp(s, "\xE2\x81\xB0", 3) == 0) e = e * 10 + 0, s += 3, digits++;
        else if (strncmp(s, "\xC2\xB9", 2) == 0) e = e * 10 + 1, s += 2, digits++;
        else if (strncmp(s, "\xC2\xB2", 2) == 0) e = e * 10 + 2, s += 2, digits++;
        else if (strncmp(s, "\xC2\xB3", 2) == 0) e = e * 10 + 3, s += 2, digits++;
        else if (strncmp(s, "\xE2\x81", 2) == 0 && (unsigned char)s[2] >= 0xB4 && (unsigned char)s[2] <= 0xB9)
            e = e * 10 + ((unsigned char)s[2] - 0xB0), s += 3, digits++;
        else return -1;
    }
    if (!digits) return -1;
    *out = (neg ? -m : m) * pow(10.0, eneg ? -e : e);
    return 0;
}

typedef struct parsed_svg {
    char* text;
    xnode* root;
} parsed_svg;

static parsed_svg plot_csv_text(const char* name, const char* csv, const char* title, const dvi_svg_options* opt)
{
    char csvn[128], svgn[128], msg[512];
    snprintf(csvn, sizeof csvn, "%s.csv", name);
    snprintf(svgn, sizeof svgn, "%s.svg", name);
    const char* cp = tmp_path(csvn);
    const char* sp = tmp_path(svgn);
    if (csv) test_write_text(cp, csv);
    dvi_status rc = dvi_svg_plot_csv_ex(cp, sp, title, opt, msg, sizeof msg);
    if (rc != 0) {
        print_error("plot of %s failed: %s\n", cp, msg);
        fail();
    }
    parsed_svg r;
    r.text = test_read_text(sp, NULL);
    assert_non_null(r.text);
    r.root = xml_parse_or_fail(r.text, sp);
    assert_string_equal(r.root->name, "svg");
    assert_string_equal(xattr(r.root, "xmlns"), "http://www.w3.org/2000/svg");
    assert_false(file_exists(tmp_path("x.svg.tmp")));
    return r;
}

static void parsed_free(parsed_svg* p)
{
    xnode_free(p->root);
    free(p->text);
}

typedef struct rect {
    double x, y, w, h;
} rect;

static rect plot_area(const xnode* panel)
{
    xnode* r = xfirst(panel, "rect", "plot-area");
    assert_non_null(r);
    rect a = {xattr_num(r, "x"), xattr_num(r, "y"), xattr_num(r, "width"), xattr_num(r, "height")};
    return a;
}

/* Points of a polyline; returns the count, *pts malloc'd (x, y pairs). */
static int polyline_points(const xnode* pl, double** pts)
{
    const char* s = xattr(pl, "points");
    assert_non_null(s);
    int n = 0, cap = 64;
    double* v = malloc((size_t)cap * 2 * sizeof *v);
    char* p = (char*)s;
    for (;;) {
        while (*p == ' ') p++;
        if (!*p) break;
        char* e;
        double x = strtod(p, &e);
        assert_true(e != p && *e == ',');
        p = e + 1;
        double y = strtod(p, &e);
        assert_true(e != p);
        p = e;
        if (n == cap) v = realloc(v, (size_t)(cap *= 2) * 2 * sizeof *v);
        v[2 * n] = x;
        v[2 * n + 1] = y;
        n++;
    }
    *pts = v;
    return n;
}

/* Checks a panel: polylines inside the plot area, y tick labels parse, are
 * increasing upwards and span [lo, hi]; returns the number of polylines. */
static int check_panel(const xnode* panel, double lo, double hi)
{
    rect a = plot_area(panel);
    xlist pls = xfind(panel, "polyline", NULL);
    for (int i = 0; i < pls.n; i++) {
        double* pts;
        int n = polyline_points(pls.v[i], &pts);
        assert_true(n >= 2);
        for (int k = 0; k < n; k++) {
            assert_true(pts[2 * k] >= a.x - 1e-9 && pts[2 * k] <= a.x + a.w + 1e-9);
            assert_true(pts[2 * k + 1] >= a.y - 1e-9 && pts[2 * k + 1] <= a.y + a.h + 1e-9);
        }
        free(pts);
    }
    int count = pls.n;
    free(pls.v);

    xlist ticks = xfind(panel, "text", "ytick");
    assert_true(ticks.n >= 2 && ticks.n <= 12);
    double tmin = INFINITY, tmax = -INFINITY, prev_y = INFINITY, prev_v = -INFINITY;
    for (int i = 0; i < ticks.n; i++) {
        double v;
        const char* lab = ticks.v[i]->text;
        if (parse_tick_label(lab, &v) != 0) {
            print_error("tick label \"%s\" does not parse\n", lab);
            fail();
        }
        /* no floating-point noise in labels */
        assert_null(strstr(lab, "0000000"));
        assert_null(strstr(lab, "9999999"));
        assert_true(strlen(lab) <= 16);
        double y = xattr_num(ticks.v[i], "y");
        assert_true(y < prev_y); /* first tick at the bottom, going up */
        assert_true(v > prev_v);
        prev_y = y;
        prev_v = v;
        tmin = fmin(tmin, v);
        tmax = fmax(tmax, v);
        assert_true(y >= a.y - 1e-6 && y <= a.y + a.h + 1e-6);
    }
    free(ticks.v);
    if (isfinite(lo)) {
        double slack = 1e-9 * (tmax - tmin); /* labels are read back in other arithmetic */
        assert_true(tmin <= lo + slack);
        assert_true(tmax >= hi - slack);
    }
    /* the axis range is the tick range */
    assert_near(xattr_num(panel, "data-ymin"), tmin, 1e-12 * fmax(1, fabs(tmin)) + fabs(tmin) * 1e-9);
    assert_near(xattr_num(panel, "data-ymax"), tmax, 1e-12 * fmax(1, fabs(tmax)) + fabs(tmax) * 1e-9);
    return count;
}

static void test_svg_structure(void** state)
{
    (void)state;
    /* 2 series in m, 1 in m/s, 1 without unit (its own panel) */
    char* csv = malloc(1 << 20);
    size_t n = (size_t)sprintf(csv, "t [s],z1 [m],z2 [m],v [m/s],iterations\n");
    double lo[4] = {INFINITY, INFINITY, INFINITY, INFINITY}, hi[4] = {-INFINITY, -INFINITY, -INFINITY, -INFINITY};
    for (int i = 0; i <= 500; i++) {
        double t = 0.004 * i;
        double v[4] = {0.3 + 0.2 * sin(5 * t), 0.1 * cos(3 * t), -2.5 * t + 0.7, (double)(10 + i % 17)};
        n += (size_t)sprintf(csv + n, "%.10g", t);
        for (int k = 0; k < 4; k++) {
            char cell[32];
            snprintf(cell, sizeof cell, "%.10g", v[k]);
            n += (size_t)sprintf(csv + n, ",%s", cell);
            lo[k] = fmin(lo[k], strtod(cell, NULL));
            hi[k] = fmax(hi[k], strtod(cell, NULL));
        }
        n += (size_t)sprintf(csv + n, "\n");
    }
    parsed_svg s = plot_csv_text("structure", csv, "Two <bodies> & \"friends\"", NULL);
    free(csv);

    /* title (escaped) */
    xnode* title = xfirst(s.root, "text", "title");
    assert_non_null(title);
    assert_string_equal(title->text, "Two <bodies> & \"friends\"");
    assert_non_null(strstr(s.text, "Two &lt;bodies&gt; &amp; &quot;friends&quot;"));
    assert_int_equal((int)xattr_num(s.root, "width"), 900);

    xlist panels = xfind(s.root, "g", "panel");
    assert_int_equal(panels.n, 3);
    assert_string_equal(xattr(panels.v[0], "data-unit"), "m");
    assert_string_equal(xattr(panels.v[1], "data-unit"), "m/s");
    assert_string_equal(xattr(panels.v[2], "data-unit"), "");
    assert_int_equal(check_panel(panels.v[0], fmin(lo[0], lo[1]), fmax(hi[0], hi[1])), 2);
    assert_int_equal(check_panel(panels.v[1], lo[2], hi[2]), 1);
    assert_int_equal(check_panel(panels.v[2], lo[3], hi[3]), 1);
    /* exactly one polyline per series, in a group named after it */
    xlist lines = xfind(s.root, "g", "line");
    assert_int_equal(lines.n, 4);
    const char* expect[] = {"z1", "z2", "v", "iterations"};
    for (int i = 0; i < 4; i++) {
        assert_string_equal(xattr(lines.v[i], "data-name"), expect[i]);
        xlist pl = xfind(lines.v[i], "polyline", NULL);
        assert_int_equal(pl.n, 1);
        /* the series' colours differ within a panel */
        if (i == 1) {
            xlist pl0 = xfind(lines.v[0], "polyline", NULL);
            assert_string_not_equal(xattr(pl0.v[0], "stroke"), xattr(pl.v[0], "stroke"));
            free(pl0.v);
        }
        free(pl.v);
    }
    free(lines.v);
    /* panels do not overlap and are stacked downwards */
    for (int i = 1; i < panels.n; i++) {
        rect a = plot_area(panels.v[i - 1]), b = plot_area(panels.v[i]);
        assert_true(b.y >= a.y + a.h + 10);
        assert_true(a.h >= 150 && a.h <= 220);
    }
    /* legend entries outside the plot area (to the right) */
    xlist entries = xfind(s.root, "g", "entry");
    assert_int_equal(entries.n, 4);
    rect a0 = plot_area(panels.v[0]);
    for (int i = 0; i < entries.n; i++) {
        xnode* t = xfirst(entries.v[i], "text", NULL);
        assert_non_null(t);
        assert_true(xattr_num(t, "x") > a0.x + a0.w);
    }
    free(entries.v);
    /* x ticks inside the data range, the axis label with its unit */
    xlist xt = xfind(s.root, "text", "xtick");
    assert_true(xt.n >= 3);
    for (int i = 0; i < xt.n; i++) {
        double v;
        assert_int_equal(parse_tick_label(xt.v[i]->text, &v), 0);
        assert_true(v >= 0 && v <= 2.0 + 1e-12);
        double px = xattr_num(xt.v[i], "x");
        assert_near(px, a0.x + v / 2.0 * a0.w, 0.06);
    }
    free(xt.v);
    xnode* xl = xfirst(s.root, "text", "xlabel");
    assert_string_equal(xl->text, "t [s]");
    xnode* yl = xfirst(panels.v[1], "text", "ylabel");
    assert_string_equal(yl->text, "v [m/s]");
    free(panels.v);
    /* deterministic */
    char* again_path = (char*)tmp_path("structure2.svg");
    char msg[256];
    assert_int_equal(dvi_svg_plot_csv(tmp_path("structure.csv"), again_path, "Two <bodies> & \"friends\"", msg, sizeof msg), 0);
    char* again = test_read_text(again_path, NULL);
    assert_string_equal(again, s.text);
    free(again);
    parsed_free(&s);
}

/* A residual falling over eight decades (and 0 in its first row, as a
 * solver probe writes before the first solve) gets a log axis: ticks at
 * whole decades labelled 10ⁿ, an axis range of powers of ten around the
 * data, the zero row not drawn; a force in N beside it keeps a linear axis.
 * Two series of one panel differ in dash pattern (lying on each other, both
 * show). opt.log = 0 turns the log axis off; opt.columns draws the listed
 * columns alone and names a missing one. */
static void test_svg_log_axis(void** state)
{
    (void)state;
    char* csv = malloc(1 << 16);
    size_t n = (size_t)sprintf(csv, "time [s],residual [1],a.f_up [N],b.f_up [N]\n");
    for (int k = 0; k <= 100; k++)
        n += (size_t)sprintf(csv + n, "%g,%.6g,%.6g,%.6g\n", 0.01 * k, k == 0 ? 0.0 : pow(10.0, -1.0 - 0.08 * k),
                             10.0 + sin(0.1 * k), 10.0 + sin(0.1 * k));
    parsed_svg s = plot_csv_text("logaxis", csv, NULL, NULL);
    xlist panels = xfind(s.root, "g", "panel");
    assert_int_equal(panels.n, 2);
    assert_string_equal(xattr(panels.v[0], "data-log"), "1");
    assert_null(xattr(panels.v[1], "data-log"));
    /* the data lie in [1e-9, 1e-1.08]: the axis spans whole decades around them */
    const double ymin = xattr_num(panels.v[0], "data-ymin"), ymax = xattr_num(panels.v[0], "data-ymax");
    assert_true(ymin <= 1e-9 && ymin >= 1e-11);
    assert_true(ymax >= 1e-1 && ymax <= 1.0);
    assert_true(fabs(log10(ymin) - nearbyint(log10(ymin))) < 1e-12);
    xlist ticks = xfind(panels.v[0], "text", "ytick");
    assert_true(ticks.n >= 3);
    for (int i = 0; i < ticks.n; i++) assert_non_null(strstr(ticks.v[i]->text, "10")); /* 10⁻⁹ … */
    assert_null(strstr(ticks.v[0]->text, "\xC3\x97")); /* no 1× */
    /* one polyline, from the second row on (0 is not drawn on a log axis) */
    xlist lines = xfind(panels.v[0], "polyline", NULL);
    assert_int_equal(lines.n, 1);
    /* the two forces: the second dashed */
    xlist flines = xfind(panels.v[1], "polyline", NULL);
    assert_int_equal(flines.n, 2);
    assert_null(xattr(flines.v[0], "stroke-dasharray"));
    assert_non_null(xattr(flines.v[1], "stroke-dasharray"));
    free(ticks.v);
    free(lines.v);
    free(flines.v);
    free(panels.v);
    parsed_free(&s);

    dvi_svg_options o = dvi_svg_default_options();
    o.log = 0;
    s = plot_csv_text("logaxis_off", csv, NULL, &o);
    panels = xfind(s.root, "g", "panel");
    assert_null(xattr(panels.v[0], "data-log"));
    assert_true(xattr_num(panels.v[0], "data-ymin") == 0.0);
    free(panels.v);
    parsed_free(&s);

    o = dvi_svg_default_options();
    o.columns = "b.f_up,residual";
    s = plot_csv_text("columns", csv, NULL, &o);
    panels = xfind(s.root, "g", "panel");
    assert_int_equal(panels.n, 2);
    xlist all = xfind(s.root, "g", "line");
    assert_int_equal(all.n, 2);
    assert_string_equal(xattr(all.v[0], "data-name"), "residual");
    assert_string_equal(xattr(all.v[1], "data-name"), "b.f_up");
    free(all.v);
    free(panels.v);
    parsed_free(&s);

    o.columns = "residual,c.f_up";
    char msg[512];
    assert_int_equal(dvi_svg_plot_csv_ex(tmp_path("columns.csv"), tmp_path("columns2.svg"), NULL, &o, msg, sizeof msg),
                     DVI_ERR_INVALID_ARG);
    assert_non_null(strstr(msg, "no column 'c.f_up'"));
    free(csv);
}

static void test_svg_decimation(void** state)
{
    (void)state;
    const int rows = 200000;
    const char* path = tmp_path("big.csv");
    FILE* f = fopen(path, "wb");
    fputs("t [s],signal [N]\n", f);
    unsigned long long r = 12345;
    const int imax = 123457, imin = 54321;
    for (int i = 0; i < rows; i++) {
        r = r * 6364136223846793005ULL + 1442695040888963407ULL;
        double noise = (double)(r >> 11) / 9007199254740992.0 - 0.5;
        double y = sin(i * 1e-4) + 0.3 * noise;
        if (i == imax) y = 10.0;
        if (i == imin) y = -7.0;
        fprintf(f, "%.10g,%.10g\n", i * 1e-3, y);
    }
    fclose(f);
    parsed_svg s = plot_csv_text("big", NULL, NULL, NULL);
    xlist panels = xfind(s.root, "g", "panel");
    assert_int_equal(panels.n, 1);
    assert_int_equal(check_panel(panels.v[0], -7.0, 10.0), 1);
    rect a = plot_area(panels.v[0]);
    double ymin = xattr_num(panels.v[0], "data-ymin"), ymax = xattr_num(panels.v[0], "data-ymax");
    xnode* pl = xfirst(s.root, "polyline", NULL);
    double* pts;
    int n = polyline_points(pl, &pts);
    /* decimated: at most 4 points per pixel column */
    assert_true(n <= 4 * (int)ceil(a.w) + 4);
    assert_true(n >= (int)a.w);
    double top = INFINITY, bottom = -INFINITY;
    for (int k = 0; k < n; k++) {
        top = fmin(top, pts[2 * k + 1]);
        bottom = fmax(bottom, pts[2 * k + 1]);
        if (k) assert_true(pts[2 * k] >= pts[2 * k - 2]); /* time order kept */
    }
    free(pts);
    /* the global max and min survive */
    assert_near(top, a.y + (ymax - 10.0) / (ymax - ymin) * a.h, 0.051);
    assert_near(bottom, a.y + (ymax - (-7.0)) / (ymax - ymin) * a.h, 0.051);
    /* title defaults to the file name */
    assert_string_equal(xfirst(s.root, "text", "title")->text, "big.csv");
    free(panels.v);
    parsed_free(&s);
    /* the SVG stays small */
    size_t size;
    char* t = test_read_text(tmp_path("big.svg"), &size);
    free(t);
    assert_true(size < 200000);
}

static void test_svg_magnitudes(void** state)
{
    (void)state;
    /* tiny, huge, noisy-decimal and negative ranges: labels parse and are clean */
    static const double ranges[][2] = {{1e-6, 3.3e-6}, {0.1, 0.3}, {-2.2e7, 4.1e8}, {-0.7, -0.2}, {1e-300, 5e-300},
                                       {1234.5, 1234.75}, {0, 1e-12}};
    for (size_t k = 0; k < sizeof ranges / sizeof ranges[0]; k++) {
        char csv[4096];
        size_t n = (size_t)sprintf(csv, "t [s],y [u]\n");
        for (int i = 0; i <= 20; i++) {
            double y = ranges[k][0] + (ranges[k][1] - ranges[k][0]) * i / 20.0;
            n += (size_t)sprintf(csv + n, "%d,%.10g\n", i, y);
        }
        char name[32];
        snprintf(name, sizeof name, "mag%zu", k);
        parsed_svg s = plot_csv_text(name, csv, NULL, NULL);
        xnode* panel = xfirst(s.root, "g", "panel");
        double lo = strtod(strchr(strchr(csv, '\n') + 1, ',') + 1, NULL);
        assert_int_equal(check_panel(panel, fmin(lo, ranges[k][1]), ranges[k][1]), 1);
        parsed_free(&s);
    }
}

static void test_svg_nan_constant_empty(void** state)
{
    (void)state;
    /* gap, constant, all-NaN, ragged rows and junk cells */
    char csv[8192];
    size_t n = (size_t)sprintf(csv, "t [s],gap [m],const [m/s],none [N]\r\n");
    for (int i = 0; i < 40; i++) {
        if (i >= 15 && i < 20) n += (size_t)sprintf(csv + n, "%d,nan,2.5,nan\r\n", i);
        else if (i == 25) n += (size_t)sprintf(csv + n, "%d,junk,2.5\r\n", i);       /* short row, junk */
        else if (i == 30) n += (size_t)sprintf(csv + n, "%d,%d,2.5,,7,8,9\r\n", i, i); /* long row */
        else n += (size_t)sprintf(csv + n, "%d,%d,2.5,\r\n", i, i);
    }
    n += (size_t)sprintf(csv + n, "oops,1,2,3\r\n"); /* x not a number: skipped */
    parsed_svg s = plot_csv_text("gaps", csv, NULL, NULL);
    xlist lines = xfind(s.root, "g", "line");
    assert_int_equal(lines.n, 3);
    xlist pl0 = xfind(lines.v[0], "polyline", NULL);
    assert_int_equal(pl0.n, 3); /* broken at rows 15–19 and at row 25 */
    free(pl0.v);
    xlist pl1 = xfind(lines.v[1], "polyline", NULL);
    assert_int_equal(pl1.n, 1);
    free(pl1.v);
    xlist pl2 = xfind(lines.v[2], "polyline", NULL);
    assert_int_equal(pl2.n, 0);
    free(pl2.v);
    free(lines.v);
    xlist panels = xfind(s.root, "g", "panel");
    assert_int_equal(panels.n, 3);
    check_panel(panels.v[0], 0, 39);
    check_panel(panels.v[1], 2.5, 2.5);
    assert_true(xattr_num(panels.v[1], "data-ymin") < 2.5 && xattr_num(panels.v[1], "data-ymax") > 2.5);
    check_panel(panels.v[2], NAN, NAN);
    xnode* legend = xfirst(panels.v[2], "g", "legend");
    assert_non_null(legend);
    assert_non_null(strstr(xfirst(legend, "text", NULL)->text, "(no finite data)"));
    assert_string_equal(xfirst(panels.v[2], "text", "note")->text, "no finite data");
    assert_null(xfirst(panels.v[0], "text", "note"));
    free(panels.v);
    parsed_free(&s);

    /* header only: a picture saying so */
    s = plot_csv_text("header_only", "t [s],a [m],b [m]\n", NULL, NULL);
    assert_int_equal(xfind(s.root, "polyline", NULL).n, 0);
    xnode* note = xfirst(s.root, "text", "note");
    assert_non_null(note);
    assert_string_equal(note->text, "no data");
    parsed_free(&s);

    /* only an x column; names needing escapes; a lone point */
    s = plot_csv_text("xonly", "t [s]\n1\n2\n", NULL, NULL);
    assert_non_null(xfirst(s.root, "text", "note"));
    parsed_free(&s);
    s = plot_csv_text("escapes", "\"t, time [s]\",\"a<b>&\"\"c\"\" [N·m]\",\xff\xfe bad\n0,1,2\n", NULL, NULL);
    assert_string_equal(xfirst(s.root, "g", "line")->kids[0]->text, "a<b>&\"c\"");
    assert_string_equal(xfirst(s.root, "text", "xlabel")->text, "t, time [s]");
    xlist pls = xfind(s.root, "polyline", NULL);
    assert_int_equal(pls.n, 2); /* one point each: drawn as dots */
    free(pls.v);
    parsed_free(&s);

    /* small picture settings */
    dvi_svg_options o = dvi_svg_default_options();
    o.width = 400;
    o.panel_height = 120;
    s = plot_csv_text("small", "t [s],a [m]\n0,1\n1,2\n2,0\n", NULL, &o);
    assert_int_equal((int)xattr_num(s.root, "width"), 400);
    check_panel(xfirst(s.root, "g", "panel"), 0, 2);
    parsed_free(&s);

    /* failures: missing file, empty file */
    char msg[512];
    const char* missing = tmp_path("missing.csv");
    assert_int_equal(dvi_svg_plot_csv(missing, tmp_path("m.svg"), NULL, msg, sizeof msg), DVI_ERR_IO);
    assert_non_null(strstr(msg, missing));
    assert_false(file_exists(tmp_path("m.svg")));
    test_write_text(tmp_path("empty.csv"), "");
    assert_int_equal(dvi_svg_plot_csv(tmp_path("empty.csv"), tmp_path("e.svg"), NULL, msg, sizeof msg), DVI_ERR_IO);
    assert_non_null(strstr(msg, "empty.csv"));
    assert_int_equal(dvi_svg_plot_csv(tmp_path("small.csv"), tmp_path("no/dir/x.svg"), NULL, msg, sizeof msg), DVI_ERR_IO);
    assert_non_null(strstr(msg, "no/dir/x.svg"));
    assert_no_tmp_files(tmp_dir);
}

/* Values at the edge of what a plot draws: ±1e300 are drawn and labelled
 * by their powers; 1e308 (whose axis would need a tick of 10³⁰⁹, beyond the
 * doubles), 1e400 (an overflow, not an infinity) and a hexadecimal number
 * are refused with the file, line and column; a log axis from a subnormal
 * 1e-320 up to 1e300 labels every decade tick by its power. */
static void test_svg_extreme_values(void** state)
{
    (void)state;
    parsed_svg s = plot_csv_text("huge", "t [s],y [m]\n0,1e300\n1,-1e300\n2,0\n", NULL, NULL);
    xnode* panel = xfirst(s.root, "g", "panel");
    assert_true(xattr_num(panel, "data-ymin") <= -1e300);
    assert_true(xattr_num(panel, "data-ymax") >= 1e300);
    xlist ticks = xfind(panel, "text", "ytick");
    assert_true(ticks.n >= 3);
    int top = 0;
    for (int i = 0; i < ticks.n; i++) {
        assert_non_null(ticks.v[i]->text);
        assert_true(ticks.v[i]->textlen > 0);
        if (strcmp(ticks.v[i]->text, "1\xC3\x97" "10\xC2\xB3\xE2\x81\xB0\xE2\x81\xB0") == 0) top++; /* 1×10³⁰⁰ */
    }
    assert_int_equal(top, 1);
    free(ticks.v);
    parsed_free(&s);

    dvi_svg_options o = dvi_svg_default_options();
    o.log = 1;
    s = plot_csv_text("hugelog", "t [s],y [m]\n0,1e-320\n1,1e300\n2,1\n", NULL, &o);
    panel = xfirst(s.root, "g", "panel");
    assert_string_equal(xattr(panel, "data-log"), "1");
    ticks = xfind(panel, "text", "ytick");
    assert_true(ticks.n >= 3);
    for (int i = 0; i < ticks.n; i++) { /* 10ⁿ: "10", then superscript digits (with a superscript minus) */
        assert_non_null(ticks.v[i]->text);
        assert_int_equal(strncmp(ticks.v[i]->text, "10", 2), 0);
        assert_true(ticks.v[i]->textlen > 2);
        assert_null(strchr(ticks.v[i]->text, 'e')); /* never "inf" or "1e+309" */
    }
    free(ticks.v);
    parsed_free(&s);

    static const struct {
        const char* csv;
        const char* where;
        const char* what;
    } bad[] = {
        {"t [s],y [m]\n0,1\n1,1e308\n", "bad.csv:3:2:", "beyond the range"},
        {"t [s],y [m]\n0,-1e301\n", "bad.csv:2:2:", "beyond the range"},
        {"t [s],y [m]\n0,1\n1,1e400\n", "bad.csv:3:2:", "beyond the range"},
        {"t [s],y [m],z\n0,1,0x10\n", "bad.csv:2:3:", "'0x10' is a hexadecimal number"},
        {"t [s],y [m]\n0,1\n\"-0X1p3\",2\n", "bad.csv:3:1:", "'-0X1p3' is a hexadecimal number"},
    };
    char msg[512];
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        test_write_text(tmp_path("bad.csv"), bad[k].csv);
        unlink(tmp_path("bad.svg"));
        assert_int_equal(dvi_svg_plot_csv(tmp_path("bad.csv"), tmp_path("bad.svg"), NULL, msg, sizeof msg), DVI_ERR_PARSE);
        if (!strstr(msg, bad[k].where) || !strstr(msg, bad[k].what)) {
            print_error("case %zu: '%s' lacks '%s' or '%s'\n", k, msg, bad[k].where, bad[k].what);
            fail();
        }
        assert_false(file_exists(tmp_path("bad.svg")));
    }
    /* non-numbers stay gaps, as before */
    s = plot_csv_text("gapsok", "t [s],y [m]\n0,1\n1,inf\n2,nan\n3,\n4,2\n", NULL, NULL);
    parsed_free(&s);
}

/* Random CSV-like input: the plotter never crashes, and whatever it accepts
 * gives a well-formed SVG; the CSV readers of resume and count agree. */
static void test_svg_fuzz(void** state)
{
    (void)state;
    static const char alphabet[] = "0123456789,,,,\n\n\n..--+eE nanif\"[]\r\t\xC3\xA9\xff<>&x";
    unsigned long long r = 42;
    char msg[512];
    for (int iter = 0; iter < 300; iter++) {
        size_t len = (size_t)(iter * 7 % 900);
        char* text = malloc(len + 1);
        for (size_t i = 0; i < len; i++) {
            r = r * 6364136223846793005ULL + 1442695040888963407ULL;
            unsigned k = (unsigned)(r >> 33);
            text[i] = (k % 16 == 0) ? (char)(k >> 8) : alphabet[(k >> 4) % (sizeof alphabet - 1)];
            if (text[i] == '\0') text[i] = '1';
        }
        text[len] = '\0';
        if (iter % 3 == 0 && len > 20) memcpy(text, "t [s],a [m],b,c [m]\n", 20);
        const char* cp = tmp_path("fuzz.csv");
        test_write_text(cp, text);
        const char* sp = tmp_path("fuzz.svg");
        unlink(sp);
        dvi_status rc = dvi_svg_plot_csv(cp, sp, iter % 2 ? "fuzz <&>" : NULL, msg, sizeof msg);
        if (rc == 0) {
            char* svg = test_read_text(sp, NULL);
            assert_non_null(svg);
            xnode* root = xml_parse_or_fail(svg, "fuzz.svg");
            xlist pls = xfind(root, "polyline", NULL);
            for (int i = 0; i < pls.n; i++) {
                double* pts;
                polyline_points(pls.v[i], &pts);
                free(pts);
            }
            free(pls.v);
            xnode_free(root);
            free(svg);
        } else {
            assert_true(strlen(msg) > 0);
        }
        long long rows = 0;
        int cols = 0;
        if (dvi_csv_count_rows(cp, &rows, &cols, msg, sizeof msg) == 0) {
            dvi_csv* c = NULL;
            assert_int_equal(dvi_csv_open_resume(&c, cp, rows, cols, msg, sizeof msg), 0);
            assert_int_equal(dvi_csv_close(c), 0);
            assert_int_not_equal(dvi_csv_open_resume(&c, cp, rows + 1, cols, msg, sizeof msg), 0);
        }
        free(text);
    }
}

/* ==== VTK ================================================================= */

static dvi_body_id add_body(dvi_world* w, dvi_body_type type, dvi_shape_type shape, double size, const double pos[3],
                            const double q[4], const double v[3], const double om[3])
{
    dvi_body_def bd = dvi_default_body_def();
    bd.type = type;
    if (type == DVI_BODY_DYNAMIC) {
        bd.mass = shape == DVI_SHAPE_SPHERE ? 2.0 : 3.0;
        double I = 0.4 * bd.mass * size * size;
        bd.inertia[0] = bd.inertia[4] = bd.inertia[8] = I;
    }
    if (pos) memcpy(bd.position, pos, sizeof bd.position);
    if (q) memcpy(bd.orientation, q, sizeof bd.orientation);
    if (v) memcpy(bd.velocity, v, sizeof bd.velocity);
    if (om) memcpy(bd.angular_velocity, om, sizeof bd.angular_velocity);
    dvi_body_id b;
    assert_int_equal(dvi_body_create(w, &bd, &b), DVI_OK);
    dvi_shape_def sd = dvi_default_shape_def();
    sd.type = shape;
    sd.radius = size;
    sd.half_extents[0] = size;
    sd.half_extents[1] = 0.5 * size;
    sd.half_extents[2] = 0.75 * size;
    dvi_shape_id s;
    assert_int_equal(dvi_shape_create(w, b, &sd, &s), DVI_OK);
    return b;
}

static dvi_world* make_scene(void)
{
    dvi_world_def wd = dvi_default_world_def();
    dvi_world* w = NULL;
    assert_int_equal(dvi_world_create(&wd, &w), DVI_OK);
    add_body(w, DVI_BODY_FIXED, DVI_SHAPE_PLANE, 1, NULL, NULL, NULL, NULL);
    const double s = sin(0.3), c = cos(0.3);
    const double p1[3] = {0, 0, 0.199}, p2[3] = {1, 0.5, 0.6}, p3[3] = {-1, 0, 0.1};
    const double p4[3] = {2, 0, 0.149}, p5[3] = {0, 2, 0.8};
    const double q4[4] = {c, 0, 0, s}, q5[4] = {c, s * 0.6, 0, s * 0.8};
    const double v1[3] = {0.5, 0, 0}, v5[3] = {0, -0.2, 0.1}, w5[3] = {1, 2, -0.5};
    add_body(w, DVI_BODY_DYNAMIC, DVI_SHAPE_SPHERE, 0.2, p1, NULL, v1, NULL);
    add_body(w, DVI_BODY_DYNAMIC, DVI_SHAPE_SPHERE, 0.15, p2, NULL, NULL, NULL);
    add_body(w, DVI_BODY_DYNAMIC, DVI_SHAPE_SPHERE, 0.1, p3, NULL, NULL, NULL);
    add_body(w, DVI_BODY_DYNAMIC, DVI_SHAPE_BOX, 0.2, p4, q4, NULL, NULL);
    add_body(w, DVI_BODY_DYNAMIC, DVI_SHAPE_BOX, 0.3, p5, q5, v5, w5);
    return w;
}

typedef struct vtk_array_data {
    double* v;
    int comps;
    int tuples;
    const char* type;
} vtk_array_data;

/* Base64 (RFC 4648) of text, white space skipped; NULL on a bad character. */
static unsigned char* base64_decode(const char* text, size_t* n)
{
    const size_t len = strlen(text);
    unsigned char* out = malloc(len / 4 * 3 + 3);
    unsigned v = 0;
    int bits = 0;
    size_t o = 0;
    for (const char* p = text; *p; p++) {
        const char c = *p;
        int x;
        if (c >= 'A' && c <= 'Z') x = c - 'A';
        else if (c >= 'a' && c <= 'z') x = c - 'a' + 26;
        else if (c >= '0' && c <= '9') x = c - '0' + 52;
        else if (c == '+') x = 62;
        else if (c == '/') x = 63;
        else if (c == '=' || is_ws(c)) continue;
        else {
            free(out);
            return NULL;
        }
        v = v << 6 | (unsigned)x;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[o++] = (unsigned char)(v >> bits & 0xFF);
        }
    }
    *n = o;
    return out;
}

static uint64_t le64(const unsigned char* p)
{
    uint64_t v = 0;
    for (int k = 0; k < 8; k++) v |= (uint64_t)p[k] << (8 * k);
    return v;
}

/* The bytes of a binary DataArray, as 8 bytes of header then the data (the
 * layout of an uncompressed one): uncompressed, base64 of a UInt64 byte count
 * and the bytes; compressed (vtkZLibDataCompressor), base64 of the header
 * [blocks, block size, last block size, compressed sizes…] and then base64
 * of the deflated blocks. *bytes: the data's length; *nb: 8 + *bytes. */
static unsigned char* vtk_binary_decode(const char* text, bool compressed, size_t* nb, uint64_t* bytes)
{
    if (!compressed) {
        unsigned char* raw = base64_decode(text, nb);
        assert_non_null(raw);
        assert_true(*nb >= 8);
        *bytes = le64(raw);
        assert_true(*bytes == *nb - 8);
        return raw;
    }
#ifndef DVI_HAVE_ZLIB
    fail_msg("compressed VTK array, but the test was built without zlib");
    return NULL;
#else
    while (is_ws(*text)) text++;
    /* the header's first three words are 24 bytes: 32 base64 characters */
    char first[33];
    memcpy(first, text, 32);
    first[32] = '\0';
    size_t n0 = 0;
    unsigned char* h0 = base64_decode(first, &n0);
    assert_int_equal(n0, 24);
    const uint64_t blocks = le64(h0), block = le64(h0 + 8), last = le64(h0 + 16);
    free(h0);
    assert_true(block > 0 && blocks < 1000000 && last < block);
    const size_t hlen = (size_t)((24 + 8 * blocks + 2) / 3 * 4);
    char* htext = malloc(hlen + 1);
    memcpy(htext, text, hlen);
    htext[hlen] = '\0';
    size_t hn = 0;
    unsigned char* hdr = base64_decode(htext, &hn);
    free(htext);
    assert_int_equal(hn, 24 + 8 * blocks);
    size_t zn = 0;
    unsigned char* z = base64_decode(text + hlen, &zn);
    assert_non_null(z);
    const uint64_t total = blocks == 0 ? 0 : (last ? (blocks - 1) * block + last : blocks * block);
    unsigned char* out = malloc((size_t)total + 8);
    for (int k = 0; k < 8; k++) out[k] = (unsigned char)(total >> (8 * k));
    size_t at = 0, o = 8;
    for (uint64_t k = 0; k < blocks; k++) {
        const uint64_t csize = le64(hdr + 24 + 8 * k);
        const uint64_t want = k + 1 == blocks && last ? last : block;
        assert_true(at + csize <= zn);
        uLongf got = (uLongf)want;
        assert_int_equal(uncompress(out + o, &got, z + at, (uLong)csize), Z_OK);
        assert_true(got == want);
        at += csize;
        o += want;
    }
    assert_true(at == zn);
    free(z);
    free(hdr);
    *bytes = total;
    *nb = (size_t)total + 8;
    return out;
#endif
}

/* Reads a DataArray named `name` under section (PointData, Points, Verts) of
 * the Piece; fails if missing or if its values do not parse. */
static vtk_array_data vtk_get(const xnode* piece, const char* section, const char* name)
{
    xnode* sec = xfirst(piece, section, NULL);
    assert_non_null(sec);
    xlist arrays = xfind(sec, "DataArray", NULL);
    vtk_array_data d = {NULL, 0, 0, NULL};
    for (int i = 0; i < arrays.n; i++) {
        if (strcmp(xattr(arrays.v[i], "Name"), name) != 0) continue;
        xnode* a = arrays.v[i];
        d.type = xattr(a, "type");
        d.comps = xattr(a, "NumberOfComponents") ? (int)xattr_num(a, "NumberOfComponents") : 1;
        if (strcmp(xattr(a, "format"), "binary") == 0) {
            const xnode* root = a;
            while (root->parent) root = root->parent;
            assert_string_equal(xattr(root, "header_type"), "UInt64");
            size_t nb = 0;
            uint64_t bytes = 0;
            unsigned char* raw = vtk_binary_decode(a->text, xattr(root, "compressor") != NULL, &nb, &bytes);
            const size_t w = strcmp(d.type, "Int32") == 0 ? 4 : 8;
            assert_int_equal(bytes % w, 0);
            const int n = (int)(bytes / w);
            d.v = malloc((size_t)(n + 1) * sizeof *d.v);
            for (int k = 0; k < n; k++) {
                const unsigned char* q = raw + 8 + (size_t)k * w;
                if (strcmp(d.type, "Float64") == 0) memcpy(&d.v[k], q, 8);
                else if (w == 4) {
                    int32_t x;
                    memcpy(&x, q, 4);
                    d.v[k] = x;
                } else {
                    int64_t x;
                    memcpy(&x, q, 8);
                    d.v[k] = (double)x;
                }
            }
            free(raw);
            assert_int_equal(n % d.comps, 0);
            d.tuples = n / d.comps;
            break;
        }
        assert_string_equal(xattr(a, "format"), "ascii");
        int cap = 16, n = 0;
        d.v = malloc((size_t)cap * sizeof *d.v);
        char* p = a->text;
        for (;;) {
            while (is_ws(*p)) p++;
            if (!*p) break;
            char* e;
            double v = strtod(p, &e);
            if (e == p || !(is_ws(*e) || *e == '\0')) {
                print_error("DataArray %s: bad value \"%.20s\"\n", name, p);
                fail();
            }
            if (n == cap) d.v = realloc(d.v, (size_t)(cap *= 2) * sizeof *d.v);
            d.v[n++] = v;
            p = e;
        }
        assert_int_equal(n % d.comps, 0);
        d.tuples = n / d.comps;
        break;
    }
    free(arrays.v);
    if (!d.v) {
        print_error("DataArray %s not found in %s\n", name, section);
        fail();
    }
    return d;
}

/* Parses a .vtp file, checks the VTK structure and the tuple counts of all
 * arrays; returns the root and the Piece. */
static xnode* vtk_read(const char* path, xnode** piece_out, char** text_out)
{
    char* text = test_read_text(path, NULL);
    if (!text) {
        print_error("cannot read %s\n", path);
        fail();
    }
    xnode* root = xml_parse_or_fail(text, path);
    assert_string_equal(root->name, "VTKFile");
    assert_string_equal(xattr(root, "type"), "PolyData");
    xnode* pd = xfirst(root, "PolyData", NULL);
    assert_non_null(pd);
    xlist pieces = xfind(pd, "Piece", NULL);
    assert_int_equal(pieces.n, 1);
    xnode* piece = pieces.v[0];
    free(pieces.v);
    int np = (int)xattr_num(piece, "NumberOfPoints");
    int nv = (int)xattr_num(piece, "NumberOfVerts");
    assert_int_equal(nv, np);
    /* every point-data array has NumberOfPoints tuples */
    xlist arrays = xfind(xfirst(piece, "PointData", NULL), "DataArray", NULL);
    assert_true(arrays.n >= 5);
    for (int i = 0; i < arrays.n; i++) {
        vtk_array_data d = vtk_get(piece, "PointData", xattr(arrays.v[i], "Name"));
        if (d.tuples != np) {
            print_error("%s: array %s has %d tuples, %d points\n", path, xattr(arrays.v[i], "Name"), d.tuples, np);
            fail();
        }
        free(d.v);
    }
    free(arrays.v);
    vtk_array_data pts = vtk_get(piece, "Points", "Points");
    assert_int_equal(pts.comps, 3);
    assert_int_equal(pts.tuples, np);
    free(pts.v);
    vtk_array_data con = vtk_get(piece, "Verts", "connectivity");
    vtk_array_data off = vtk_get(piece, "Verts", "offsets");
    assert_int_equal(con.tuples, nv);
    assert_int_equal(off.tuples, nv);
    for (int i = 0; i < nv; i++) {
        assert_true(con.v[i] == i);
        assert_true(off.v[i] == i + 1);
    }
    free(con.v);
    free(off.v);
    *piece_out = piece;
    *text_out = text;
    return root;
}

#define REL(a, b) assert_near((a), (b), 1e-9 * fmax(1.0, fabs(b)))

static void rotate(const double q[4], const double v[3], double out[3])
{
    /* v' = v + 2w(u×v) + 2u×(u×v), u = (x, y, z) */
    double u[3] = {q[1], q[2], q[3]}, w = q[0];
    double t[3] = {2 * (u[1] * v[2] - u[2] * v[1]), 2 * (u[2] * v[0] - u[0] * v[2]), 2 * (u[0] * v[1] - u[1] * v[0])};
    out[0] = v[0] + w * t[0] + (u[1] * t[2] - u[2] * t[1]);
    out[1] = v[1] + w * t[1] + (u[2] * t[0] - u[0] * t[2]);
    out[2] = v[2] + w * t[2] + (u[0] * t[1] - u[1] * t[0]);
}

static void check_bodies_file(const dvi_world* w, const char* path)
{
    xnode* piece;
    char* text;
    xnode* root = vtk_read(path, &piece, &text);
    int n = dvi_world_body_count(w);
    assert_int_equal(n, 6);
    assert_int_equal((int)xattr_num(piece, "NumberOfPoints"), n);
    vtk_array_data P = vtk_get(piece, "Points", "Points");
    vtk_array_data id = vtk_get(piece, "PointData", "id");
    vtk_array_data bt = vtk_get(piece, "PointData", "body_type");
    vtk_array_data st = vtk_get(piece, "PointData", "shape_type");
    vtk_array_data mass = vtk_get(piece, "PointData", "mass");
    vtk_array_data rad = vtk_get(piece, "PointData", "radius");
    vtk_array_data q = vtk_get(piece, "PointData", "orientation");
    vtk_array_data R = vtk_get(piece, "PointData", "rotation");
    vtk_array_data ax = vtk_get(piece, "PointData", "axis_x");
    vtk_array_data az = vtk_get(piece, "PointData", "axis_z");
    vtk_array_data v = vtk_get(piece, "PointData", "velocity");
    vtk_array_data om = vtk_get(piece, "PointData", "angular_velocity");
    vtk_array_data sp = vtk_get(piece, "PointData", "speed");
    assert_int_equal(q.comps, 4);
    assert_int_equal(R.comps, 9);
    assert_int_equal(v.comps, 3);
    assert_int_equal(om.comps, 3);
    assert_int_equal(rad.comps, 1);
    assert_string_equal(id.type, "Int32");
    assert_string_equal(rad.type, "Float64");
    for (int i = 0; i < n; i++) {
        dvi_body_id b;
        assert_int_equal(dvi_world_body_at(w, i, &b), DVI_OK);
        dvi_body_info info;
        assert_int_equal(dvi_body_get_info(w, b, &info), DVI_OK);
        double pos[3], qq[4], vel[3], angv[3];
        assert_int_equal(dvi_body_get_position(w, b, pos), DVI_OK);
        assert_int_equal(dvi_body_get_orientation(w, b, qq), DVI_OK);
        assert_int_equal(dvi_body_get_velocity(w, b, vel), DVI_OK);
        assert_int_equal(dvi_body_get_angular_velocity(w, b, angv), DVI_OK);
        assert_true(id.v[i] == b.index1 - 1);
        assert_true(bt.v[i] == (double)info.type);
        assert_true(st.v[i] == (double)info.shape_type);
        REL(mass.v[i], info.mass);
        REL(rad.v[i], info.bounding_radius);
        double speed = 0;
        for (int k = 0; k < 3; k++) {
            REL(P.v[3 * i + k], pos[k]);
            REL(v.v[3 * i + k], vel[k]);
            REL(om.v[3 * i + k], angv[k]);
            speed += vel[k] * vel[k];
        }
        REL(sp.v[i], sqrt(speed));
        for (int k = 0; k < 4; k++) REL(q.v[4 * i + k], qq[k]);
        /* rotation, column by column: the body axes rotated by the quaternion */
        for (int col = 0; col < 3; col++) {
            double e[3] = {col == 0, col == 1, col == 2}, r[3];
            rotate(qq, e, r);
            for (int row = 0; row < 3; row++) assert_near(R.v[9 * i + 3 * col + row], r[row], 1e-8);
            if (col == 0)
                for (int k = 0; k < 3; k++) assert_near(ax.v[3 * i + k], r[k], 1e-8);
            if (col == 2)
                for (int k = 0; k < 3; k++) assert_near(az.v[3 * i + k], r[k], 1e-8);
        }
    }
    /* the scene as built: ground, three spheres, two boxes */
    assert_true(bt.v[0] == DVI_BODY_FIXED && st.v[0] == DVI_SHAPE_PLANE);
    assert_true(st.v[1] == DVI_SHAPE_SPHERE && st.v[4] == DVI_SHAPE_BOX);
    REL(rad.v[1], 0.2);
    REL(rad.v[3], 0.1);
    REL(rad.v[4], sqrt(0.2 * 0.2 + 0.1 * 0.1 + 0.15 * 0.15));
    REL(mass.v[1], 2.0);
    vtk_array_data* all[] = {&P, &id, &bt, &st, &mass, &rad, &q, &R, &ax, &az, &v, &om, &sp};
    for (size_t k = 0; k < sizeof all / sizeof all[0]; k++) free(all[k]->v);
    xnode_free(root);
    free(text);
}

static void check_contacts_file(const dvi_world* w, const char* path)
{
    xnode* piece;
    char* text;
    xnode* root = vtk_read(path, &piece, &text);
    int m = dvi_world_contact_count(w);
    assert_int_equal((int)xattr_num(piece, "NumberOfPoints"), m);
    vtk_array_data P = vtk_get(piece, "Points", "Points");
    vtk_array_data F = vtk_get(piece, "PointData", "force");
    vtk_array_data N = vtk_get(piece, "PointData", "normal");
    vtk_array_data FM = vtk_get(piece, "PointData", "force_magnitude");
    vtk_array_data FN = vtk_get(piece, "PointData", "normal_force");
    vtk_array_data D = vtk_get(piece, "PointData", "distance");
    vtk_array_data A = vtk_get(piece, "PointData", "body_a");
    vtk_array_data B = vtk_get(piece, "PointData", "body_b");
    assert_int_equal(F.comps, 3);
    assert_int_equal(N.comps, 3);
    for (int i = 0; i < m; i++) {
        dvi_contact_info c;
        assert_int_equal(dvi_world_get_contact(w, i, &c), DVI_OK);
        double fm = 0, fn = 0;
        for (int k = 0; k < 3; k++) {
            REL(P.v[3 * i + k], c.point[k]);
            REL(F.v[3 * i + k], c.force[k]);
            REL(N.v[3 * i + k], c.normal[k]);
            fm += c.force[k] * c.force[k];
            fn += c.force[k] * c.normal[k];
        }
        REL(FM.v[i], sqrt(fm));
        REL(FN.v[i], fn);
        REL(D.v[i], c.distance);
        assert_true(A.v[i] == c.body_a.index1 - 1);
        assert_true(B.v[i] == c.body_b.index1 - 1);
    }
    vtk_array_data* all[] = {&P, &F, &N, &FM, &FN, &D, &A, &B};
    for (size_t k = 0; k < sizeof all / sizeof all[0]; k++) free(all[k]->v);
    xnode_free(root);
    free(text);
}

/* Every array of piece a equals the same array of piece b: integers
 * exactly, Float64 within 1e-9 relative (ASCII holds ten digits). */
static int compare_pieces(const xnode* pa, const xnode* pb)
{
    static const char* const sections[] = {"PointData", "CellData", "Points", "Verts", "Polys"};
    int arrays = 0;
    for (int sec = 0; sec < 5; sec++) {
        xnode* sa = xfirst(pa, sections[sec], NULL);
        xnode* sb = xfirst(pb, sections[sec], NULL);
        assert_true((sa == NULL) == (sb == NULL));
        if (!sa) continue;
        xlist la = xfind(sa, "DataArray", NULL), lb = xfind(sb, "DataArray", NULL);
        assert_int_equal(la.n, lb.n);
        for (int i = 0; i < la.n; i++) {
            const char* name = xattr(la.v[i], "Name");
            assert_string_equal(name, xattr(lb.v[i], "Name"));
            vtk_array_data da = vtk_get(pa, sections[sec], name), db = vtk_get(pb, sections[sec], name);
            assert_string_equal(da.type, db.type);
            assert_int_equal(da.tuples * da.comps, db.tuples * db.comps);
            for (int k = 0; k < da.tuples * da.comps; k++) {
                if (strcmp(da.type, "Float64") != 0) assert_true(da.v[k] == db.v[k]);
                else assert_true(fabs(da.v[k] - db.v[k]) <= 1e-9 * fabs(db.v[k]) + 1e-300);
            }
            free(da.v);
            free(db.v);
            arrays++;
        }
        free(la.v);
        free(lb.v);
    }
    return arrays;
}

static void test_vtk_frames(void** state)
{
    (void)state;
    dvi_world* w = make_scene();
    char msg[512];
    const char* dir = tmp_path("vtk/run"); /* created by the writer */
    double times[3];
    for (int frame = 0; frame < 3; frame++) {
        for (int s = 0; s < 10; s++) assert_true(dvi_world_step(w, 0.005) >= 0);
        times[frame] = dvi_world_time(w);
        assert_int_equal(dvi_vtk_write_frame(w, dir, frame, msg, sizeof msg), 0);
        char p[600];
        snprintf(p, sizeof p, "%s/frames/bodies_%06d.vtp", dir, frame);
        check_bodies_file(w, p);
        snprintf(p, sizeof p, "%s/frames/contacts_%06d.vtp", dir, frame);
        check_contacts_file(w, p);
    }
    assert_true(dvi_world_contact_count(w) >= 2); /* resting sphere and box */

    /* the same frame as text: the same arrays, the integers equal, the
     * numbers to the ten digits of the text (binary holds them exactly) */
    {
        const char* adir = tmp_path("vtk/ascii");
        assert_int_equal(dvi_vtk_write_frame_ex(w, adir, 2, true, msg, sizeof msg), 0);
        static const char* const files[] = {"bodies", "contacts"};
        for (int f = 0; f < 2; f++) {
            char pa[600], pb[600];
            snprintf(pa, sizeof pa, "%s/frames/%s_%06d.vtp", adir, files[f], 2);
            snprintf(pb, sizeof pb, "%s/frames/%s_%06d.vtp", dir, files[f], 2);
            xnode *piece_a, *piece_b;
            char *ta, *tb;
            xnode* ra = vtk_read(pa, &piece_a, &ta);
            xnode* rb = vtk_read(pb, &piece_b, &tb);
            static const char* const sections[] = {"PointData", "Points", "Verts"};
            for (int sec = 0; sec < 3; sec++) {
                xlist la = xfind(xfirst(piece_a, sections[sec], NULL), "DataArray", NULL);
                xlist lb = xfind(xfirst(piece_b, sections[sec], NULL), "DataArray", NULL);
                assert_int_equal(la.n, lb.n);
                for (int i = 0; i < la.n; i++) {
                    assert_string_equal(xattr(la.v[i], "format"), "ascii");
                    assert_string_equal(xattr(lb.v[i], "format"), "binary");
                }
                free(la.v);
                free(lb.v);
            }
            assert_true(compare_pieces(piece_a, piece_b) >= 8);
            xnode_free(ra);
            xnode_free(rb);
            free(ta);
            free(tb);
        }
    }

    assert_int_equal(dvi_vtk_write_pvd(dir, 3, times, msg, sizeof msg), 0);
    static const char* const kinds[] = {"bodies", "contacts"};
    for (int k = 0; k < 2; k++) {
        char p[600];
        snprintf(p, sizeof p, "%s/%s.pvd", dir, kinds[k]);
        char* text = test_read_text(p, NULL);
        assert_non_null(text);
        xnode* root = xml_parse_or_fail(text, p);
        assert_string_equal(root->name, "VTKFile");
        assert_string_equal(xattr(root, "type"), "Collection");
        xlist ds = xfind(root, "DataSet", NULL);
        assert_int_equal(ds.n, 3);
        double prev = -INFINITY;
        for (int i = 0; i < ds.n; i++) {
            double t = xattr_num(ds.v[i], "timestep");
            assert_true(t > prev);
            assert_true(t == times[i]);
            prev = t;
            char f[700], expect[64];
            snprintf(expect, sizeof expect, "frames/%s_%06d.vtp", kinds[k], i);
            assert_string_equal(xattr(ds.v[i], "file"), expect);
            snprintf(f, sizeof f, "%s/%s", dir, xattr(ds.v[i], "file"));
            assert_true(file_exists(f));
        }
        free(ds.v);
        xnode_free(root);
        free(text);
    }
    assert_no_tmp_files(dir);
    char frames[600];
    snprintf(frames, sizeof frames, "%s/frames", dir);
    assert_no_tmp_files(frames);

    /* zero frames: empty collections; bad input refused */
    assert_int_equal(dvi_vtk_write_pvd(tmp_path("vtk/empty"), 0, NULL, msg, sizeof msg), 0);
    char* e = test_read_text(tmp_path("vtk/empty/bodies.pvd"), NULL);
    xnode* er = xml_parse_or_fail(e, "empty pvd");
    assert_int_equal(xfind(er, "DataSet", NULL).n, 0);
    xnode_free(er);
    free(e);
    double bad[2] = {0, NAN};
    assert_int_equal(dvi_vtk_write_pvd(dir, 2, bad, msg, sizeof msg), DVI_ERR_INVALID_ARG);
    assert_int_equal(dvi_vtk_write_frame(w, dir, -1, msg, sizeof msg), DVI_ERR_INVALID_ARG);
    assert_int_equal(dvi_vtk_write_frame(NULL, dir, 0, msg, sizeof msg), DVI_ERR_INVALID_ARG);
    test_write_text(tmp_path("vtk/file"), "x");
    assert_int_equal(dvi_vtk_write_frame(w, tmp_path("vtk/file"), 0, msg, sizeof msg), DVI_ERR_IO);
    assert_non_null(strstr(msg, "vtk/file"));

    /* an empty world: zero points, still valid */
    dvi_world_def wd = dvi_default_world_def();
    dvi_world* w0 = NULL;
    assert_int_equal(dvi_world_create(&wd, &w0), DVI_OK);
    assert_int_equal(dvi_vtk_write_frame(w0, tmp_path("vtk/none"), 7, msg, sizeof msg), 0);
    xnode* piece;
    char* text;
    xnode* root = vtk_read(tmp_path("vtk/none/frames/bodies_000007.vtp"), &piece, &text);
    assert_int_equal((int)xattr_num(piece, "NumberOfPoints"), 0);
    xnode_free(root);
    free(text);
    root = vtk_read(tmp_path("vtk/none/frames/contacts_000007.vtp"), &piece, &text);
    xnode_free(root);
    free(text);
    dvi_world_destroy(w0);
    dvi_world_destroy(w);
}

/* ==== VTK shape geometry ================================================== */

/* Triangles per shape as documented in <dvi/output.h> and docs/outputs.md:
 * 24 segments around, 15° steps from pole to pole. */
enum { TRI_BOX = 12, TRI_CYLINDER = 96, TRI_CAPSULE = 576, TRI_SPHERE = 528, TRI_PLANE = 2 };

/* Parses a surface file (triangles with cell data), checks its structure
 * and returns the root and the Piece. */
static xnode* vtk_read_surface(const char* path, xnode** piece_out, char** text_out)
{
    char* text = test_read_text(path, NULL);
    if (!text) {
        print_error("cannot read %s\n", path);
        fail();
    }
    xnode* root = xml_parse_or_fail(text, path);
    assert_string_equal(xattr(root, "type"), "PolyData");
    xnode* piece = xfirst(xfirst(root, "PolyData", NULL), "Piece", NULL);
    assert_non_null(piece);
    const int np = (int)xattr_num(piece, "NumberOfPoints"), nt = (int)xattr_num(piece, "NumberOfPolys");
    assert_int_equal((int)xattr_num(piece, "NumberOfVerts"), 0);
    xlist arrays = xfind(xfirst(piece, "CellData", NULL), "DataArray", NULL);
    assert_true(arrays.n >= 3);
    for (int i = 0; i < arrays.n; i++) {
        vtk_array_data d = vtk_get(piece, "CellData", xattr(arrays.v[i], "Name"));
        assert_int_equal(d.tuples, nt);
        free(d.v);
    }
    free(arrays.v);
    vtk_array_data P = vtk_get(piece, "Points", "Points");
    assert_int_equal(P.comps, 3);
    assert_int_equal(P.tuples, np);
    vtk_array_data con = vtk_get(piece, "Polys", "connectivity");
    vtk_array_data off = vtk_get(piece, "Polys", "offsets");
    assert_int_equal(con.tuples, 3 * nt);
    assert_int_equal(off.tuples, nt);
    for (int i = 0; i < nt; i++) assert_true(off.v[i] == 3.0 * (i + 1));
    for (int i = 0; i < 3 * nt; i++) assert_true(con.v[i] >= 0 && con.v[i] < np);
    free(P.v);
    free(con.v);
    free(off.v);
    *piece_out = piece;
    *text_out = text;
    return root;
}

/* Number of cells of each shape type (index 0..7) in a surface file. */
static void count_cells(const xnode* piece, int counts[8])
{
    vtk_array_data st = vtk_get(piece, "CellData", "shape_type");
    memset(counts, 0, 8 * sizeof *counts);
    for (int i = 0; i < st.tuples; i++) {
        assert_true(st.v[i] >= 1 && st.v[i] <= 7);
        counts[(int)st.v[i]]++;
    }
    free(st.v);
}

static dvi_body_id shape_body(dvi_world* w, dvi_body_type type, const double pos[3], const double q[4])
{
    dvi_body_def bd = dvi_default_body_def();
    bd.type = type;
    if (pos) memcpy(bd.position, pos, sizeof bd.position);
    if (q) memcpy(bd.orientation, q, sizeof bd.orientation);
    dvi_body_id b;
    assert_int_equal(dvi_body_create(w, &bd, &b), DVI_OK);
    return b;
}

/* An ellipsoid is drawn by the VTK writer as its class draws it: the
 * sphere's 528 triangles on 266 points, stretched by the semi-axes; every
 * point lies on the ellipsoid at the body's pose. */
static void test_vtk_ellipsoid(void** state)
{
    (void)state;
    dvi_world_def wd = dvi_default_world_def();
    dvi_world* w;
    assert_int_equal(dvi_world_create(&wd, &w), DVI_OK);
    const double pos[3] = {1.0, -2.0, 0.5}, q[4] = {cos(0.3), 0, 0, sin(0.3)}; /* 0.6 rad about z */
    const dvi_body_id b = shape_body(w, DVI_BODY_DYNAMIC, pos, q);
    dvi_shape_def sd = dvi_default_shape_def();
    const dvi_ellipsoid e = {{0.3, 0.2, 0.1}};
    dvi_shape_id id;
    assert_int_equal(dvi_world_add_ellipsoid(w, b, &sd, &e, &id), DVI_OK);
    char msg[512], path[600];
    const char* dir = tmp_path("vtk/ellipsoid");
    assert_int_equal(dvi_vtk_write_frame(w, dir, 0, msg, sizeof msg), 0);
    snprintf(path, sizeof path, "%s/frames/shapes_000000.vtp", dir);
    xnode* piece;
    char* text;
    xnode* root = vtk_read_surface(path, &piece, &text);
    assert_int_equal((int)xattr_num(piece, "NumberOfPolys"), TRI_SPHERE);
    assert_int_equal((int)xattr_num(piece, "NumberOfPoints"), 266);
    vtk_array_data st = vtk_get(piece, "CellData", "shape_type");
    for (int i = 0; i < st.tuples; i++) assert_true(st.v[i] == DVI_SHAPE_ELLIPSOID);
    vtk_array_data P = vtk_get(piece, "Points", "Points");
    double worst = 0.0;
    const double c = cos(0.6), s = sin(0.6);
    for (int i = 0; i < P.tuples; i++) {
        const double d[3] = {P.v[3 * i] - pos[0], P.v[3 * i + 1] - pos[1], P.v[3 * i + 2] - pos[2]};
        const double l[3] = {c * d[0] + s * d[1], -s * d[0] + c * d[1], d[2]}; /* Rᵀ d */
        const double f = l[0] * l[0] / 0.09 + l[1] * l[1] / 0.04 + l[2] * l[2] / 0.01;
        worst = fmax(worst, fabs(f - 1.0));
    }
    print_message("VTK ellipsoid: %d points, worst |x^2/a^2 + y^2/b^2 + z^2/c^2 - 1| = %.1e\n", P.tuples, worst);
    assert_true(worst < 1e-12);
    free(st.v);
    free(P.v);
    xnode_free(root);
    free(text);
    dvi_world_destroy(w);
}

/* One shape of each type: a sphere (a glyph), a box, a capsule, a cylinder
 * and a sphere off the centre with a box on dynamic bodies; a plane, a box, a
 * height field and a mesh on fixed ones. The moved and rotated box's corners
 * are checked against its pose, the cells of each type against the
 * documented tessellation, and the binary (compressed when built with zlib)
 * and ASCII frames against each other. */
static void test_vtk_shapes(void** state)
{
    (void)state;
    dvi_world_def wd = dvi_default_world_def();
    dvi_world* w = NULL;
    assert_int_equal(dvi_world_create(&wd, &w), DVI_OK);
    dvi_shape_def sd = dvi_default_shape_def();
    /* fixed: plane, box, 4 × 3 height field, tetrahedron */
    sd.type = DVI_SHAPE_PLANE;
    test_add_shape(w, shape_body(w, DVI_BODY_FIXED, NULL, NULL), &sd);
    const double pb[3] = {3, 0, 0.3};
    sd = dvi_default_shape_def();
    sd.type = DVI_SHAPE_BOX;
    sd.half_extents[0] = 0.5, sd.half_extents[1] = 0.4, sd.half_extents[2] = 0.3;
    test_add_shape(w, shape_body(w, DVI_BODY_FIXED, pb, NULL), &sd);
    const double heights[12] = {0, 0.1, 0.2, 0.1, 0, 0.05, 0.1, 0, 0.02, 0.03, 0, 0.01};
    const double ph[3] = {-3, -1, 0};
    sd = dvi_default_shape_def();
    sd.type = DVI_SHAPE_HEIGHTFIELD;
    sd.nx = 4, sd.ny = 3, sd.dx = 0.5, sd.dy = 0.5, sd.heights = heights;
    test_add_shape(w, shape_body(w, DVI_BODY_FIXED, ph, NULL), &sd);
    const double verts[12] = {0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1};
    const int32_t tris[12] = {0, 2, 1, 0, 1, 3, 0, 3, 2, 1, 2, 3};
    const double pm[3] = {0, -3, 0};
    sd = dvi_default_shape_def();
    sd.type = DVI_SHAPE_MESH;
    sd.vertex_count = 4, sd.triangle_count = 4, sd.vertices = verts, sd.triangles = tris;
    test_add_shape(w, shape_body(w, DVI_BODY_FIXED, pm, NULL), &sd);
    /* dynamic: sphere (glyph), rotated box, capsule, cylinder, sphere + box */
    const double p1[3] = {0, 0, 1}, p2[3] = {1, 2, 0.5}, p3[3] = {-1, 1, 0.4}, p4[3] = {1, -1, 0.3}, p5[3] = {2, 2, 1};
    const double c = cos(0.4), s = sin(0.4);
    const double q2[4] = {c, 0.6 * s, 0, 0.8 * s};
    sd = dvi_default_shape_def();
    sd.type = DVI_SHAPE_SPHERE;
    sd.radius = 0.1;
    const dvi_body_id ball = shape_body(w, DVI_BODY_DYNAMIC, p1, NULL);
    test_add_shape(w, ball, &sd);
    sd = dvi_default_shape_def();
    sd.type = DVI_SHAPE_BOX;
    sd.half_extents[0] = 0.2, sd.half_extents[1] = 0.1, sd.half_extents[2] = 0.15;
    const dvi_body_id box = shape_body(w, DVI_BODY_DYNAMIC, p2, q2);
    test_add_shape(w, box, &sd);
    sd = dvi_default_shape_def();
    sd.type = DVI_SHAPE_CAPSULE;
    sd.radius = 0.1, sd.half_length = 0.2;
    test_add_shape(w, shape_body(w, DVI_BODY_DYNAMIC, p3, NULL), &sd);
    sd.type = DVI_SHAPE_CYLINDER;
    sd.radius = 0.2, sd.half_length = 0.05;
    test_add_shape(w, shape_body(w, DVI_BODY_DYNAMIC, p4, NULL), &sd);
    const dvi_body_id compound = shape_body(w, DVI_BODY_DYNAMIC, p5, NULL);
    sd = dvi_default_shape_def();
    sd.type = DVI_SHAPE_SPHERE;
    sd.radius = 0.1;
    sd.offset_position[0] = 0.3;
    test_add_shape(w, compound, &sd);
    sd = dvi_default_shape_def();
    sd.type = DVI_SHAPE_BOX;
    sd.half_extents[0] = sd.half_extents[1] = sd.half_extents[2] = 0.1;
    const double qo[4] = {cos(0.25), 0, sin(0.25), 0};
    memcpy(sd.offset_orientation, qo, sizeof qo);
    test_add_shape(w, compound, &sd);

    /* dvi_body_get_shape */
    dvi_shape_info si;
    assert_int_equal(dvi_body_get_shape(w, compound, 0, &si), DVI_OK);
    assert_int_equal(si.type, DVI_SHAPE_SPHERE);
    assert_true(si.radius == 0.1 && si.offset_position[0] == 0.3);
    assert_int_equal(dvi_body_get_shape(w, compound, 1, &si), DVI_OK);
    assert_int_equal(si.type, DVI_SHAPE_BOX);
    for (int k = 0; k < 4; k++) assert_near(si.offset_orientation[k], qo[k], 1e-15);
    assert_near(si.offset_rotation[2], sin(0.5), 1e-15); /* R[0][2] of a turn of 0.5 rad about y */
    assert_int_equal(dvi_body_get_shape(w, compound, 2, &si), DVI_ERR_INVALID_ARG);
    assert_int_equal(si.type, 0);
    assert_int_equal(dvi_body_get_shape(w, compound, -1, &si), DVI_ERR_INVALID_ARG);
    assert_int_equal(dvi_body_get_shape(w, compound, 0, NULL), DVI_ERR_INVALID_ARG);
    dvi_body_id stale = compound;
    stale.generation++;
    assert_int_equal(dvi_body_get_shape(w, stale, 0, &si), DVI_ERR_INVALID_ARG);
    dvi_body_id hb;
    assert_int_equal(dvi_world_body_at(w, 2, &hb), DVI_OK);
    assert_int_equal(dvi_body_get_shape(w, hb, 0, &si), DVI_OK);
    assert_true(si.nx == 4 && si.ny == 3 && si.dx == 0.5 && si.heights && si.heights[5] == 0.05);
    assert_int_equal(dvi_world_body_at(w, 3, &hb), DVI_OK);
    assert_int_equal(dvi_body_get_shape(w, hb, 0, &si), DVI_OK);
    assert_true(si.vertex_count == 4 && si.triangle_count == 4 && si.triangles[1] == 2 && si.vertices[11] == 1);

    char msg[512];
    const char* bdir = tmp_path("vtk/shapes_bin");
    const char* adir = tmp_path("vtk/shapes_ascii");
    assert_int_equal(dvi_vtk_write_frame(w, bdir, 0, msg, sizeof msg), 0);
    assert_int_equal(dvi_vtk_write_frame_ex(w, adir, 0, true, msg, sizeof msg), 0);
    char path[600];
    snprintf(path, sizeof path, "%s/frames/shapes_000000.vtp", bdir);
    char* raw = test_read_text(path, NULL);
#ifdef DVI_HAVE_ZLIB
    assert_true(dvi_vtk_compressed());
    assert_non_null(strstr(raw, "compressor=\"vtkZLibDataCompressor\""));
#else
    assert_false(dvi_vtk_compressed());
    assert_null(strstr(raw, "compressor="));
#endif
    free(raw);

    for (int f = 0; f < 2; f++) {
        const char* dir = f ? adir : bdir;
        xnode* piece;
        char* text;
        int n[8];
        /* moving shapes: the rotated box (12), the compound's box (12) and
         * sphere (528), the capsule (576), the cylinder (96); no glyph sphere */
        snprintf(path, sizeof path, "%s/frames/shapes_%06d.vtp", dir, 0);
        xnode* root = vtk_read_surface(path, &piece, &text);
        count_cells(piece, n);
        assert_int_equal(n[DVI_SHAPE_BOX], 2 * TRI_BOX);
        assert_int_equal(n[DVI_SHAPE_CAPSULE], TRI_CAPSULE);
        assert_int_equal(n[DVI_SHAPE_CYLINDER], TRI_CYLINDER);
        assert_int_equal(n[DVI_SHAPE_SPHERE], TRI_SPHERE);
        assert_int_equal(n[DVI_SHAPE_PLANE] + n[DVI_SHAPE_HEIGHTFIELD] + n[DVI_SHAPE_MESH], 0);
        assert_int_equal((int)xattr_num(piece, "NumberOfPolys"), 1224);
        assert_int_equal((int)xattr_num(piece, "NumberOfPoints"), 8 + 8 + 266 + 290 + 50);
        /* the rotated box's corners: x + R (±hx, ±hy, ±hz), each once */
        vtk_array_data P = vtk_get(piece, "Points", "Points");
        vtk_array_data body = vtk_get(piece, "CellData", "body");
        vtk_array_data con = vtk_get(piece, "Polys", "connectivity");
        const double h[3] = {0.2, 0.1, 0.15};
        int found = 0, box_cells = 0;
        for (int corner = 0; corner < 8; corner++) {
            double l[3] = {corner & 1 ? h[0] : -h[0], corner & 2 ? h[1] : -h[1], corner & 4 ? h[2] : -h[2]}, r[3];
            rotate(q2, l, r);
            for (int i = 0; i < P.tuples; i++) {
                double d = 0;
                for (int k = 0; k < 3; k++) d = fmax(d, fabs(P.v[3 * i + k] - (p2[k] + r[k])));
                if (d < (f ? 1e-9 : 1e-14)) {
                    found++;
                    break;
                }
            }
        }
        assert_int_equal(found, 8);
        for (int t = 0; t < body.tuples; t++) {
            if (body.v[t] != box.index1 - 1) continue;
            box_cells++;
            /* every vertex of the box's triangles is one of its corners: at half-extent distance along each axis */
            for (int k = 0; k < 3; k++) {
                const int pi = (int)con.v[3 * t + k];
                double d[3] = {P.v[3 * pi] - p2[0], P.v[3 * pi + 1] - p2[1], P.v[3 * pi + 2] - p2[2]}, l[3];
                const double qi[4] = {q2[0], -q2[1], -q2[2], -q2[3]};
                rotate(qi, d, l);
                for (int a = 0; a < 3; a++) assert_near(fabs(l[a]), h[a], 1e-9);
            }
        }
        assert_int_equal(box_cells, TRI_BOX);
        /* triangles counter-clockwise seen from outside: each closed surface
         * encloses a positive volume Σ p0 · (p1 × p2) / 6 (by body: the box
         * exactly, the capsule, the cylinder, the compound's sphere and box
         * within the tessellation's error) */
        double vol[9] = {0};
        for (int t = 0; t < body.tuples; t++) {
            const double* a = P.v + 3 * (int)con.v[3 * t];
            const double* b = P.v + 3 * (int)con.v[3 * t + 1];
            const double* e = P.v + 3 * (int)con.v[3 * t + 2];
            vol[(int)body.v[t]] += (a[0] * (b[1] * e[2] - b[2] * e[1]) + a[1] * (b[2] * e[0] - b[0] * e[2]) +
                                    a[2] * (b[0] * e[1] - b[1] * e[0])) / 6.0;
        }
        const double pi = 3.14159265358979;
        assert_near(vol[box.index1 - 1], 8 * h[0] * h[1] * h[2], 1e-9);
        const double v_caps = pi * 0.01 * 0.4 + 4.0 / 3.0 * pi * 0.001, v_cyl = pi * 0.04 * 0.1;
        const double v_comp = 4.0 / 3.0 * pi * 0.001 + 0.008;
        assert_true(vol[6] > 0.97 * v_caps && vol[6] < v_caps);
        assert_true(vol[7] > 0.98 * v_cyl && vol[7] < v_cyl);
        assert_true(vol[8] > 0.97 * v_comp && vol[8] < v_comp);
        vtk_array_data sp = vtk_get(piece, "CellData", "speed");
        for (int t = 0; t < sp.tuples; t++) assert_true(sp.v[t] == 0);
        free(sp.v);
        free(P.v);
        free(body.v);
        free(con.v);
        xnode_free(root);
        free(text);

        /* static geometry: plane 2, box 12, height field 2·3·2 = 12, mesh 4 */
        snprintf(path, sizeof path, "%s/static.vtp", dir);
        root = vtk_read_surface(path, &piece, &text);
        count_cells(piece, n);
        assert_int_equal(n[DVI_SHAPE_PLANE], TRI_PLANE);
        assert_int_equal(n[DVI_SHAPE_BOX], TRI_BOX);
        assert_int_equal(n[DVI_SHAPE_HEIGHTFIELD], 12);
        assert_int_equal(n[DVI_SHAPE_MESH], 4);
        assert_int_equal((int)xattr_num(piece, "NumberOfPoints"), 4 + 8 + 12 + 4);
        /* the plane's square holds every body (half side ≥ 0.75 × the scene's diagonal) */
        P = vtk_get(piece, "Points", "Points");
        for (int i = 0; i < 4; i++) {
            assert_true(P.v[3 * i + 2] == 0);
            assert_true(fabs(P.v[3 * i]) > 3.5 && fabs(P.v[3 * i + 1]) > 3.0);
        }
        free(P.v);
        xnode_free(root);
        free(text);

        /* bodies: glyph_radius is the lone sphere's, 0 for the others */
        snprintf(path, sizeof path, "%s/frames/bodies_%06d.vtp", dir, 0);
        root = vtk_read(path, &piece, &text);
        vtk_array_data gr = vtk_get(piece, "PointData", "glyph_radius");
        assert_int_equal(gr.tuples, 9);
        for (int i = 0; i < 9; i++) assert_true(gr.v[i] == (i == ball.index1 - 1 ? 0.1 : 0.0));
        free(gr.v);
        xnode_free(root);
        free(text);
    }

    /* binary and ASCII hold the same numbers */
    static const char* const files[] = {"frames/bodies_000000.vtp", "frames/shapes_000000.vtp", "static.vtp",
                                        "frames/contacts_000000.vtp"};
    for (int f = 0; f < 4; f++) {
        char pa[600], pbin[600];
        snprintf(pa, sizeof pa, "%s/%s", adir, files[f]);
        snprintf(pbin, sizeof pbin, "%s/%s", bdir, files[f]);
        char *ta, *tb;
        xnode* ra = xml_parse_or_fail(ta = test_read_text(pa, NULL), pa);
        xnode* rb = xml_parse_or_fail(tb = test_read_text(pbin, NULL), pbin);
        const xnode* pca = xfirst(xfirst(ra, "PolyData", NULL), "Piece", NULL);
        const xnode* pcb = xfirst(xfirst(rb, "PolyData", NULL), "Piece", NULL);
        assert_int_equal(compare_pieces(pca, pcb), f == 0 ? 16 : f == 3 ? 10 : 6 + (f == 1));
        xnode_free(ra);
        xnode_free(rb);
        free(ta);
        free(tb);
    }

    /* the collections list the shapes too */
    const double times[1] = {0};
    assert_int_equal(dvi_vtk_write_pvd(bdir, 1, times, msg, sizeof msg), 0);
    snprintf(path, sizeof path, "%s/shapes.pvd", bdir);
    char* pvd = test_read_text(path, NULL);
    assert_non_null(pvd);
    assert_non_null(strstr(pvd, "file=\"frames/shapes_000000.vtp\""));
    free(pvd);
    /* frame 1 does not rewrite the static geometry */
    snprintf(path, sizeof path, "%s/static.vtp", bdir);
    assert_int_equal(unlink(path), 0);
    assert_int_equal(dvi_vtk_write_frame(w, bdir, 1, msg, sizeof msg), 0);
    assert_false(file_exists(path));
    assert_int_equal(dvi_vtk_write_static(w, bdir, false, msg, sizeof msg), 0);
    assert_true(file_exists(path));
    assert_int_equal(dvi_vtk_write_static(NULL, bdir, false, msg, sizeof msg), DVI_ERR_INVALID_ARG);
    dvi_world_destroy(w);
}

/* ==== atomic write ======================================================== */

static void test_atomic_write(void** state)
{
    (void)state;
    char msg[512];
    const char* p = tmp_path("atomic.txt");
    assert_int_equal(dvi_write_file_atomic(p, "first\n", 6, msg, sizeof msg), 0);
    assert_int_equal(dvi_write_file_atomic(p, "second\n", 7, msg, sizeof msg), 0);
    char* t = test_read_text(p, NULL);
    assert_string_equal(t, "second\n");
    free(t);
    assert_false(file_exists(tmp_path("atomic.txt.tmp")));
    assert_int_equal(dvi_write_file_atomic(tmp_path("atomic_empty"), NULL, 0, msg, sizeof msg), 0);
    size_t n = 1;
    t = test_read_text(tmp_path("atomic_empty"), &n);
    assert_int_equal(n, 0);
    free(t);
    const char* bad = tmp_path("no/such/dir/f.txt");
    assert_int_equal(dvi_write_file_atomic(bad, "x", 1, msg, sizeof msg), DVI_ERR_IO);
    assert_non_null(strstr(msg, "no/such/dir/f.txt"));
    /* a directory in the way of the rename: fails, no temporary left */
    assert_int_equal(dvi_make_dirs(tmp_path("adir/sub"), msg, sizeof msg), 0);
    assert_int_equal(dvi_write_file_atomic(tmp_path("adir"), "x", 1, msg, sizeof msg), DVI_ERR_IO);
    assert_false(file_exists(tmp_path("adir.tmp")));
    assert_int_equal(dvi_make_dirs(tmp_path("adir/sub"), msg, sizeof msg), 0); /* exists: fine */
    assert_int_equal(dvi_make_dirs(tmp_path("atomic.txt/sub"), msg, sizeof msg), DVI_ERR_IO);
    assert_no_tmp_files(tmp_dir);
}

/* ==== JSON ================================================================ */

static void write_sample_json(dvi_json_writer* w)
{
    assert_int_equal(dvi_json_begin_object(w), 0);
    assert_int_equal(dvi_json_key_string(w, "quote", "say \"hi\" \\ and /slash"), 0);
    assert_int_equal(dvi_json_key_string(w, "controls", "a\x01\x1f\n\t\r\b\f\x7fz"), 0);
    assert_int_equal(dvi_json_key_string(w, "utf8", "\xC2\xB5 \xC3\x97 10\xE2\x81\xBB\xE2\x81\xB6 \xF0\x9F\x98\x80"), 0);
    assert_int_equal(dvi_json_key_string(w, "bad_utf8", "a\xff" "b\xC3"), 0);
    assert_int_equal(dvi_json_key_string(w, "ke\"y\n", "v"), 0);
    assert_int_equal(dvi_json_key(w, "numbers"), 0);
    assert_int_equal(dvi_json_begin_array(w), 0);
    const double nums[] = {0.1, -0.0, 1e300, 5e-324, 1.0 / 3.0, 123456789012345678.0, -2.5e-17, 1.0};
    for (size_t i = 0; i < sizeof nums / sizeof nums[0]; i++) assert_int_equal(dvi_json_number(w, nums[i]), 0);
    assert_int_equal(dvi_json_number(w, NAN), 0);
    assert_int_equal(dvi_json_number(w, -INFINITY), 0);
    assert_int_equal(dvi_json_end_array(w), 0);
    assert_int_equal(dvi_json_key_int(w, "big", LLONG_MAX), 0);
    assert_int_equal(dvi_json_key_int(w, "small", LLONG_MIN), 0);
    assert_int_equal(dvi_json_key_bool(w, "yes", true), 0);
    assert_int_equal(dvi_json_key_bool(w, "no", false), 0);
    assert_int_equal(dvi_json_key(w, "nothing"), 0);
    assert_int_equal(dvi_json_null(w), 0);
    assert_int_equal(dvi_json_key_string(w, "null_string", NULL), 0);
    assert_int_equal(dvi_json_key(w, "empty_object"), 0);
    assert_int_equal(dvi_json_begin_object(w), 0);
    assert_int_equal(dvi_json_end_object(w), 0);
    assert_int_equal(dvi_json_key(w, "empty_array"), 0);
    assert_int_equal(dvi_json_begin_array(w), 0);
    assert_int_equal(dvi_json_end_array(w), 0);
    double pos[3] = {0.5, 0, -1.25};
    assert_int_equal(dvi_json_key_numbers(w, "position", pos, 3), 0);
    assert_int_equal(dvi_json_key(w, "nested"), 0);
    assert_int_equal(dvi_json_begin_object(w), 0);
    assert_int_equal(dvi_json_key(w, "a"), 0);
    assert_int_equal(dvi_json_begin_array(w), 0);
    assert_int_equal(dvi_json_int(w, 1), 0);
    assert_int_equal(dvi_json_begin_array_inline(w), 0);
    assert_int_equal(dvi_json_int(w, 2), 0);
    assert_int_equal(dvi_json_begin_object(w), 0);
    assert_int_equal(dvi_json_key_string(w, "b", "c"), 0);
    assert_int_equal(dvi_json_key_number(w, "d", 2.75), 0);
    assert_int_equal(dvi_json_end_object(w), 0);
    assert_int_equal(dvi_json_end_array(w), 0);
    assert_int_equal(dvi_json_end_array(w), 0);
    assert_int_equal(dvi_json_end_object(w), 0);
    assert_int_equal(dvi_json_end_object(w), 0);
}

static void test_json_writer(void** state)
{
    (void)state;
    dvi_json_writer* w = NULL;
    char msg[256];
    assert_int_equal(dvi_json_writer_open_buffer(&w), 0);
    write_sample_json(w);
    assert_int_equal(dvi_json_writer_finish(w, msg, sizeof msg), 0);
    size_t size;
    const char* text = dvi_json_writer_buffer(w, &size);
    assert_int_equal(strlen(text), size);
    assert_true(size > 0 && text[size - 1] == '\n');

    /* strict: cJSON accepts raw control characters in strings, JSON does not */
    int in_string = 0;
    for (const char* c = text; *c; c++) {
        if (in_string && (unsigned char)*c < 0x20) {
            print_error("raw control character 0x%02x inside a JSON string\n", (unsigned char)*c);
            fail();
        }
        if (!in_string && (unsigned char)*c < 0x20) assert_true(*c == '\n');
        if (*c == '\\' && in_string) c++;
        else if (*c == '"') in_string = !in_string;
    }
    assert_false(in_string);
    assert_non_null(strstr(text, "a\\u0001\\u001f\\n\\t\\r\\b\\f"));

    cJSON* j = cJSON_Parse(text);
    if (!j) {
        print_error("cJSON cannot parse:\n%s\n", text);
        fail();
    }
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(j, "quote")->valuestring, "say \"hi\" \\ and /slash");
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(j, "controls")->valuestring, "a\x01\x1f\n\t\r\b\f\x7fz");
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(j, "utf8")->valuestring,
                        "\xC2\xB5 \xC3\x97 10\xE2\x81\xBB\xE2\x81\xB6 \xF0\x9F\x98\x80");
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(j, "bad_utf8")->valuestring,
                        "a\xEF\xBF\xBD" "b\xEF\xBF\xBD");
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(j, "ke\"y\n")->valuestring, "v");
    cJSON* nums = cJSON_GetObjectItemCaseSensitive(j, "numbers");
    assert_true(cJSON_IsArray(nums));
    assert_int_equal(cJSON_GetArraySize(nums), 10);
    const double expect[] = {0.1, -0.0, 1e300, 5e-324, 1.0 / 3.0, 123456789012345678.0, -2.5e-17, 1.0};
    for (int i = 0; i < 8; i++) {
        cJSON* it = cJSON_GetArrayItem(nums, i);
        assert_true(cJSON_IsNumber(it));
        assert_true(it->valuedouble == expect[i]); /* exact */
    }
    assert_true(signbit(cJSON_GetArrayItem(nums, 1)->valuedouble));
    assert_true(cJSON_IsNull(cJSON_GetArrayItem(nums, 8)));
    assert_true(cJSON_IsNull(cJSON_GetArrayItem(nums, 9)));
    assert_non_null(strstr(text, "0.1,"));        /* shortest form, not 0.10000000000000001 */
    assert_non_null(strstr(text, "9223372036854775807"));
    assert_non_null(strstr(text, "-9223372036854775808"));
    assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "yes")));
    assert_true(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(j, "no")));
    assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(j, "nothing")));
    assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(j, "null_string")));
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(j, "empty_object")), 0);
    assert_true(cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(j, "empty_object")));
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(j, "empty_array")), 0);
    cJSON* pos = cJSON_GetObjectItemCaseSensitive(j, "position");
    assert_int_equal(cJSON_GetArraySize(pos), 3);
    assert_true(cJSON_GetArrayItem(pos, 2)->valuedouble == -1.25);
    assert_non_null(strstr(text, "\"position\": [0.5, 0, -1.25]"));
    cJSON* a = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(j, "nested"), "a");
    assert_int_equal(cJSON_GetArraySize(a), 2);
    cJSON* inner = cJSON_GetArrayItem(a, 1);
    assert_true(cJSON_GetArrayItem(inner, 0)->valuedouble == 2);
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(inner, 1), "b")->valuestring, "c");
    assert_non_null(strstr(text, "[2, {\"b\": \"c\", \"d\": 2.75}]"));
    assert_non_null(strstr(text, "\n  \"quote\": \"say \\\"hi\\\" \\\\ and /slash\",\n"));
    /* the same document, as written by cJSON from the parse, compares equal */
    cJSON_Delete(j);

    /* to a FILE*: identical text */
    FILE* f = fopen(tmp_path("sample.json"), "wb");
    dvi_json_writer* wf = NULL;
    assert_int_equal(dvi_json_writer_open_file(&wf, f), 0);
    write_sample_json(wf);
    assert_int_equal(dvi_json_writer_finish(wf, msg, sizeof msg), 0);
    assert_null(dvi_json_writer_buffer(wf, NULL));
    dvi_json_writer_free(wf);
    fclose(f);
    char* ftext = test_read_text(tmp_path("sample.json"), NULL);
    assert_string_equal(ftext, text);
    free(ftext);
    dvi_json_writer_free(w);

    /* exact layout of a small document */
    assert_int_equal(dvi_json_writer_open_buffer(&w), 0);
    dvi_json_begin_object(w);
    dvi_json_key_int(w, "a", 1);
    dvi_json_key(w, "b");
    dvi_json_begin_array(w);
    dvi_json_bool(w, true);
    dvi_json_null(w);
    dvi_json_end_array(w);
    dvi_json_end_object(w);
    assert_int_equal(dvi_json_writer_finish(w, msg, sizeof msg), 0);
    assert_string_equal(dvi_json_writer_buffer(w, NULL), "{\n  \"a\": 1,\n  \"b\": [\n    true,\n    null\n  ]\n}\n");
    dvi_json_writer_free(w);

    /* misuse is refused, sticky, and reported */
    assert_int_equal(dvi_json_writer_open_buffer(&w), 0);
    dvi_json_begin_object(w);
    assert_int_equal(dvi_json_int(w, 1), DVI_ERR_INVALID_ARG); /* no key */
    assert_int_equal(dvi_json_key(w, "k"), DVI_ERR_INVALID_ARG); /* sticky */
    assert_int_equal(dvi_json_writer_finish(w, msg, sizeof msg), DVI_ERR_INVALID_ARG);
    assert_non_null(strstr(msg, "without a key"));
    dvi_json_writer_free(w);

    assert_int_equal(dvi_json_writer_open_buffer(&w), 0);
    dvi_json_begin_array(w);
    assert_int_equal(dvi_json_key(w, "k"), DVI_ERR_INVALID_ARG);
    dvi_json_writer_free(w);

    assert_int_equal(dvi_json_writer_open_buffer(&w), 0);
    dvi_json_begin_object(w);
    assert_int_equal(dvi_json_end_array(w), DVI_ERR_INVALID_ARG);
    dvi_json_writer_free(w);

    assert_int_equal(dvi_json_writer_open_buffer(&w), 0);
    dvi_json_begin_array(w);
    assert_int_equal(dvi_json_writer_finish(w, msg, sizeof msg), DVI_ERR_INVALID_ARG);
    assert_non_null(strstr(msg, "unclosed"));
    dvi_json_writer_free(w);

    assert_int_equal(dvi_json_writer_open_buffer(&w), 0);
    assert_int_equal(dvi_json_int(w, 1), 0);
    assert_int_equal(dvi_json_int(w, 2), DVI_ERR_INVALID_ARG);
    assert_non_null(strstr(dvi_json_writer_error(w), "second top-level"));
    dvi_json_writer_free(w);

    assert_int_equal(dvi_json_writer_open_buffer(&w), 0);
    assert_int_equal(dvi_json_writer_finish(w, msg, sizeof msg), DVI_ERR_INVALID_ARG);
    dvi_json_writer_free(w);
    assert_int_equal(dvi_json_end_object(NULL), DVI_ERR_INVALID_ARG);
    dvi_json_writer_free(NULL);

    /* deep nesting is refused, not a crash */
    assert_int_equal(dvi_json_writer_open_buffer(&w), 0);
    int rc = 0;
    for (int i = 0; i < 1000 && rc == 0; i++) rc = dvi_json_begin_array(w);
    assert_int_not_equal(rc, 0);
    dvi_json_writer_free(w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_csv_roundtrip),
        cmocka_unit_test(test_csv_resume),
        cmocka_unit_test(test_csv_errors),
        cmocka_unit_test(test_svg_structure),
        cmocka_unit_test(test_svg_log_axis),
        cmocka_unit_test(test_svg_decimation),
        cmocka_unit_test(test_svg_magnitudes),
        cmocka_unit_test(test_svg_nan_constant_empty),
        cmocka_unit_test(test_svg_extreme_values),
        cmocka_unit_test(test_svg_fuzz),
        cmocka_unit_test(test_vtk_frames),
        cmocka_unit_test(test_vtk_shapes),
        cmocka_unit_test(test_vtk_ellipsoid),
        cmocka_unit_test(test_atomic_write),
        cmocka_unit_test(test_json_writer),
    };
    return cmocka_run_group_tests(tests, setup_dir, teardown_dir);
}
