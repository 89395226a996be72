/* dvicontact — CCP problem files in JSON (docs/ccp-file.md).
 *
 * Reading: the text is parsed by cJSON; syntax errors are reported with the
 * line and column of the failure. The document is then walked strictly:
 * every field must be known, every array must have the length the problem
 * implies, indices must be integers, numbers finite. The arrays are copied
 * into one owning object (ccp_owned, whose first member is the public
 * dvi_ccp_file) and the problem is checked by dvi_ccp_validate, whose
 * messages name the place in the same terms as the file (blocks[4].mu,
 * D column 3, ...). Arrays are walked through the child lists (never by
 * index: cJSON_GetArrayItem is linear), so reading is linear in the size of
 * the file.
 *
 * Writing: each number with the fewest of 15, 16 or 17 significant digits
 * that reads back as the same bits (17 always do: "%.17g" identifies a
 * binary64 exactly, and strtod, which cJSON uses, rounds correctly), with
 * the decimal separator forced to '.' whatever the C locale.
 */
#include "dvi/io.h"
#include "io_msg.h"
#include "out_internal.h"

#include "alloc.h"
#include "ccp_work.h"
#include "regular_file.h"

#include <cjson/cJSON.h>

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CCP_FORMAT "dvicontact-ccp"
#define CCP_VERSION 1

typedef struct ccp_owned {
    dvi_ccp_file pub; /* first: dvi_ccp_file_free casts back */
    dvi_ccp_block* blocks;
    double* r;
    double* compliance;
    double* gamma0;
    double* solution;
    dvi_csc op; /* W or D */
    int32_t* colptr;
    int32_t* rowind;
    double* values;
    double* inv_mass;
} ccp_owned;

void dvi_ccp_file_free(dvi_ccp_file* f)
{
    if (!f) return;
    ccp_owned* o = (ccp_owned*)f;
    BASE_FREE_ALL(o->blocks, o->r, o->compliance, o->gamma0, o->solution, o->colptr, o->rowind, o->values, o->inv_mass,
                  o);
}

/* ---- messages --------------------------------------------------------------- */

/* (io_fail, io_msg.h: "FILE: text" into the caller's buffer) */

/* ---- reading: values ------------------------------------------------------------ */

static int32_t array_length(const cJSON* a)
{
    int64_t n = 0;
    for (const cJSON* e = a->child; e; e = e->next) n++;
    return n > INT32_MAX ? -1 : (int32_t)n;
}

/* A finite number at `path`. */
static dvi_status get_number(const io_msg* c, const cJSON* item, const char* path, double* out)
{
    if (!cJSON_IsNumber(item)) return io_fail(c, DVI_ERR_INVALID_ARG, "%s: expected a number", path);
    if (!isfinite(item->valuedouble)) return io_fail(c, DVI_ERR_INVALID_ARG, "%s: not a finite number", path);
    *out = item->valuedouble;
    return DVI_OK;
}

static bool is_int32(double x)
{
    return x == floor(x) && x >= (double)INT32_MIN && x <= (double)INT32_MAX;
}

static dvi_status get_int(const io_msg* c, const cJSON* item, const char* path, int32_t* out)
{
    if (!cJSON_IsNumber(item) || !is_int32(item->valuedouble))
        return io_fail(c, DVI_ERR_INVALID_ARG, "%s: expected an integer", path);
    *out = (int32_t)item->valuedouble;
    return DVI_OK;
}

/* An array of finite numbers (integers: of int32 values), malloc'd as
 * doubles (int32_t); expected < 0: any length (≥ 0). */
static dvi_status get_numbers(const io_msg* c, const cJSON* a, const char* path, int64_t expected, bool integers,
                              void** out, int32_t* count)
{
    const char* what = integers ? "integers" : "numbers";
    *out = NULL;
    if (!cJSON_IsArray(a)) return io_fail(c, DVI_ERR_INVALID_ARG, "%s: expected an array of %s", path, what);
    int32_t n = array_length(a);
    if (n < 0) return io_fail(c, DVI_ERR_INVALID_ARG, "%s: too many numbers", path);
    if (expected >= 0 && n != expected)
        return io_fail(c, DVI_ERR_INVALID_ARG, "%s: expected %lld %s, got %d", path, (long long)expected, what,
                           n);
    void* v = malloc(((size_t)n + 1) * (integers ? sizeof(int32_t) : sizeof(double)));
    if (!v) return io_fail(c, DVI_ERR_NOMEM, "%s: out of memory", path);
    int32_t i = 0;
    for (const cJSON* e = a->child; e; e = e->next, i++) {
        const char* bad = NULL;
        if (!cJSON_IsNumber(e) || (integers && !is_int32(e->valuedouble)))
            bad = integers ? "expected an integer" : "expected a number";
        else if (!integers && !isfinite(e->valuedouble))
            bad = "not a finite number";
        if (bad) {
            free(v);
            return io_fail(c, DVI_ERR_INVALID_ARG, "%s[%d]: %s", path, i, bad);
        }
        if (integers) ((int32_t*)v)[i] = (int32_t)e->valuedouble;
        else ((double*)v)[i] = e->valuedouble;
    }
    *out = v;
    if (count) *count = n;
    return DVI_OK;
}

static dvi_status get_doubles(const io_msg* c, const cJSON* a, const char* path, int64_t expected, double** out,
                              int32_t* count)
{
    void* v;
    dvi_status st = get_numbers(c, a, path, expected, false, &v, count);
    *out = v;
    return st;
}

static dvi_status get_ints(const io_msg* c, const cJSON* a, const char* path, int64_t expected, int32_t** out,
                           int32_t* count)
{
    void* v;
    dvi_status st = get_numbers(c, a, path, expected, true, &v, count);
    *out = v;
    return st;
}

/* Checks that every member of object `o` is in `known` (NULL-terminated) and
 * appears once. */
static dvi_status check_fields(const io_msg* c, const cJSON* o, const char* path, const char* const* known)
{
    for (const cJSON* e = o->child; e; e = e->next) {
        bool ok = false;
        for (int k = 0; known[k]; k++)
            if (strcmp(e->string, known[k]) == 0) ok = true;
        if (!ok) {
            if (path) return io_fail(c, DVI_ERR_INVALID_ARG, "%s.%s: unknown field", path, e->string);
            return io_fail(c, DVI_ERR_INVALID_ARG, "%s: unknown field", e->string);
        }
        for (const cJSON* f = o->child; f != e; f = f->next)
            if (strcmp(f->string, e->string) == 0) {
                if (path) return io_fail(c, DVI_ERR_INVALID_ARG, "%s.%s: given twice", path, e->string);
                return io_fail(c, DVI_ERR_INVALID_ARG, "%s: given twice", e->string);
            }
    }
    return DVI_OK;
}

/* ---- reading: the problem --------------------------------------------------------- */

static const struct {
    const char* name;
    dvi_block_kind kind;
} KINDS[] = {
    {"bilateral", DVI_BLOCK_BILATERAL},
    {"frictionless", DVI_BLOCK_FRICTIONLESS},
    {"friction", DVI_BLOCK_FRICTION},
    {"friction_rolling", DVI_BLOCK_FRICTION_ROLLING},
};
#define KIND_COUNT (int)(sizeof KINDS / sizeof KINDS[0])

static const char* kind_name(dvi_block_kind k)
{
    for (int i = 0; i < KIND_COUNT; i++)
        if (KINDS[i].kind == k) return KINDS[i].name;
    return NULL;
}

static dvi_status read_blocks(const io_msg* c, const cJSON* a, ccp_owned* o, int64_t* rows)
{
    if (!a) return io_fail(c, DVI_ERR_INVALID_ARG, "blocks: missing");
    if (!cJSON_IsArray(a)) return io_fail(c, DVI_ERR_INVALID_ARG, "blocks: expected an array of blocks");
    int32_t n = array_length(a);
    if (n <= 0) return io_fail(c, DVI_ERR_INVALID_ARG, "blocks: expected at least one block");
    o->blocks = calloc((size_t)n, sizeof *o->blocks);
    if (!o->blocks) return io_fail(c, DVI_ERR_NOMEM, "blocks: out of memory");
    int64_t sum = 0;
    int32_t b = 0;
    for (const cJSON* e = a->child; e; e = e->next, b++) {
        char path[64];
        snprintf(path, sizeof path, "blocks[%d]", b);
        if (!cJSON_IsObject(e)) return io_fail(c, DVI_ERR_INVALID_ARG, "%s: expected an object", path);
        const cJSON* k = cJSON_GetObjectItemCaseSensitive(e, "kind");
        if (!k) return io_fail(c, DVI_ERR_INVALID_ARG, "%s.kind: missing", path);
        if (!cJSON_IsString(k)) return io_fail(c, DVI_ERR_INVALID_ARG, "%s.kind: expected a string", path);
        int kind = -1;
        for (int i = 0; i < KIND_COUNT; i++)
            if (strcmp(k->valuestring, KINDS[i].name) == 0) kind = i;
        if (kind < 0)
            return io_fail(c, DVI_ERR_INVALID_ARG,
                        "%s.kind: unknown kind \"%.40s\" (bilateral, frictionless, friction, friction_rolling)", path,
                        k->valuestring);
        dvi_ccp_block* B = &o->blocks[b];
        B->kind = KINDS[kind].kind;
        static const char* const plain[] = {"kind", NULL};
        static const char* const friction[] = {"kind", "mu", NULL};
        static const char* const rolling[] = {"kind", "mu", "mu_spin", "mu_roll", NULL};
        const char* const* known = B->kind == DVI_BLOCK_FRICTION ? friction
                                   : B->kind == DVI_BLOCK_FRICTION_ROLLING ? rolling
                                                                           : plain;
        dvi_status st = check_fields(c, e, path, known);
        if (st != DVI_OK) return st;
        for (int f = 1; known[f]; f++) {
            char fp[96];
            snprintf(fp, sizeof fp, "%s.%s", path, known[f]);
            const cJSON* v = cJSON_GetObjectItemCaseSensitive(e, known[f]);
            if (!v) return io_fail(c, DVI_ERR_INVALID_ARG, "%s: missing", fp);
            double x = 0.0;
            st = get_number(c, v, fp, &x);
            if (st != DVI_OK) return st;
            if (f == 1) B->mu = x;
            else if (f == 2) B->mu_spin = x;
            else B->mu_roll = x;
        }
        sum += dvi_block_rows(B->kind);
    }
    if (sum > INT32_MAX) return io_fail(c, DVI_ERR_INVALID_ARG, "blocks: too many rows (%lld)", (long long)sum);
    o->pub.problem.blocks = o->blocks;
    o->pub.problem.block_count = n;
    *rows = sum;
    return DVI_OK;
}

/* A CSC matrix object {rows, cols, colptr, rowind, values} of the given shape. */
static dvi_status read_csc(const io_msg* c, const cJSON* m, const char* name, int64_t rows, int64_t cols,
                           const char* rows_meaning, ccp_owned* o)
{
    static const char* const known[] = {"rows", "cols", "colptr", "rowind", "values", NULL};
    dvi_status st = check_fields(c, m, name, known);
    if (st != DVI_OK) return st;
    char path[64];
    const char* dims[2] = {"rows", "cols"};
    const int64_t want[2] = {rows, cols};
    for (int d = 0; d < 2; d++) {
        const cJSON* v = cJSON_GetObjectItemCaseSensitive(m, dims[d]);
        if (!v) continue;
        int32_t x = 0;
        snprintf(path, sizeof path, "%s.%s", name, dims[d]);
        st = get_int(c, v, path, &x);
        if (st != DVI_OK) return st;
        if (x != want[d])
            return io_fail(c, DVI_ERR_INVALID_ARG, "%s: expected %lld (%s), got %d", path, (long long)want[d],
                        d == 0 ? rows_meaning : "the rows of the blocks", x);
    }
    const cJSON* cp = cJSON_GetObjectItemCaseSensitive(m, "colptr");
    const cJSON* ri = cJSON_GetObjectItemCaseSensitive(m, "rowind");
    const cJSON* va = cJSON_GetObjectItemCaseSensitive(m, "values");
    const char* missing = !cp ? "colptr" : !ri ? "rowind" : !va ? "values" : NULL;
    if (missing) return io_fail(c, DVI_ERR_INVALID_ARG, "%s.%s: missing", name, missing);
    int32_t nnz = 0;
    snprintf(path, sizeof path, "%s.colptr", name);
    st = get_ints(c, cp, path, cols + 1, &o->colptr, NULL);
    if (st != DVI_OK) return st;
    snprintf(path, sizeof path, "%s.rowind", name);
    st = get_ints(c, ri, path, -1, &o->rowind, &nnz);
    if (st != DVI_OK) return st;
    snprintf(path, sizeof path, "%s.values", name);
    st = get_doubles(c, va, path, nnz, &o->values, NULL);
    if (st != DVI_OK) return st;
    if (o->colptr[cols] != nnz)
        return io_fail(c, DVI_ERR_INVALID_ARG, "%s.colptr[%lld]: must be the number of entries, %d (got %d)", name,
                    (long long)cols, nnz, o->colptr[cols]);
    o->op = (dvi_csc){(int32_t)rows, (int32_t)cols, o->colptr, o->rowind, o->values};
    return DVI_OK;
}

/* A dense m × m W (array of m rows of m numbers), stored as CSC without its
 * zero entries. Two passes over the rows: count per column, then fill (rows
 * arrive in increasing order, so each column's row indices increase). */
static dvi_status read_dense_w(const io_msg* c, const cJSON* a, int32_t m, ccp_owned* o)
{
    int32_t n = array_length(a);
    if (n != m) return io_fail(c, DVI_ERR_INVALID_ARG, "W: expected %d rows (the rows of the blocks), got %d", m, n);
    o->colptr = calloc((size_t)m + 1, sizeof(int32_t));
    if (!o->colptr) return io_fail(c, DVI_ERR_NOMEM, "W: out of memory");
    int64_t nnz = 0;
    int32_t i = 0;
    for (const cJSON* row = a->child; row; row = row->next, i++) {
        char path[64];
        snprintf(path, sizeof path, "W[%d]", i);
        if (!cJSON_IsArray(row)) return io_fail(c, DVI_ERR_INVALID_ARG, "%s: expected an array of numbers", path);
        int32_t k = array_length(row);
        if (k != m) return io_fail(c, DVI_ERR_INVALID_ARG, "%s: expected %d numbers, got %d", path, m, k);
        int32_t j = 0;
        for (const cJSON* e = row->child; e; e = e->next, j++) {
            char ep[64];
            snprintf(ep, sizeof ep, "W[%d][%d]", i, j);
            double x = 0.0;
            dvi_status st = get_number(c, e, ep, &x);
            if (st != DVI_OK) return st;
            if (x != 0.0) {
                o->colptr[j + 1]++;
                nnz++;
            }
        }
    }
    if (nnz > INT32_MAX) return io_fail(c, DVI_ERR_INVALID_ARG, "W: too many entries");
    for (int32_t j = 0; j < m; j++) o->colptr[j + 1] += o->colptr[j];
    o->rowind = malloc(((size_t)nnz + 1) * sizeof(int32_t));
    o->values = malloc(((size_t)nnz + 1) * sizeof(double));
    int32_t* next = malloc(((size_t)m + 1) * sizeof(int32_t));
    if (!o->rowind || !o->values || !next) {
        free(next);
        return io_fail(c, DVI_ERR_NOMEM, "W: out of memory");
    }
    memcpy(next, o->colptr, (size_t)m * sizeof(int32_t));
    i = 0;
    for (const cJSON* row = a->child; row; row = row->next, i++) {
        int32_t j = 0;
        for (const cJSON* e = row->child; e; e = e->next, j++)
            if (e->valuedouble != 0.0) {
                o->rowind[next[j]] = i;
                o->values[next[j]++] = e->valuedouble;
            }
    }
    free(next);
    o->op = (dvi_csc){m, m, o->colptr, o->rowind, o->values};
    return DVI_OK;
}

/* inv_mass: an array of body_count arrays of 36 numbers. */
static dvi_status read_inv_mass(const io_msg* c, const cJSON* a, ccp_owned* o, int32_t* nbody)
{
    if (!cJSON_IsArray(a))
        return io_fail(c, DVI_ERR_INVALID_ARG, "inv_mass: expected an array of 6x6 blocks (36 numbers each)");
    int32_t n = array_length(a);
    if (n < 0 || n > INT32_MAX / 36) return io_fail(c, DVI_ERR_INVALID_ARG, "inv_mass: too many bodies");
    o->inv_mass = malloc((36 * (size_t)n + 1) * sizeof(double));
    if (!o->inv_mass) return io_fail(c, DVI_ERR_NOMEM, "inv_mass: out of memory");
    int32_t b = 0;
    for (const cJSON* e = a->child; e; e = e->next, b++) {
        char path[64];
        snprintf(path, sizeof path, "inv_mass[%d]", b);
        double* v = NULL;
        dvi_status st = get_doubles(c, e, path, 36, &v, NULL);
        if (st != DVI_OK) return st;
        memcpy(o->inv_mass + 36 * (size_t)b, v, 36 * sizeof(double));
        free(v);
    }
    *nbody = n;
    return DVI_OK;
}

/* Line and column (1-based) of byte `at` of text. */
static void line_column(const char* text, size_t at, long* line, long* col)
{
    *line = 1;
    *col = 1;
    for (size_t i = 0; i < at; i++) {
        if (text[i] == '\n') {
            ++*line;
            *col = 1;
        } else {
            ++*col;
        }
    }
}

static bool starts_with(const char* s, size_t n, const char* word)
{
    size_t k = strlen(word);
    return n >= k && memcmp(s, word, k) == 0;
}

static dvi_status parse_document(const io_msg* c, const char* text, size_t length, ccp_owned* o)
{
    if (length == 0) return io_fail(c, DVI_ERR_PARSE, "empty file");
    const char* end = NULL;
    cJSON* root = cJSON_ParseWithLengthOpts(text, length, &end, 0);
    if (!root) {
        size_t at = end && end >= text && end <= text + length ? (size_t)(end - text) : 0;
        const char* s = text + at;
        size_t rest = length - at;
        bool at_end = at + 1 >= length;
        size_t last = length; /* end of the text without trailing white space */
        while (last > 0 && (text[last - 1] == ' ' || text[last - 1] == '\n' || text[last - 1] == '\r' ||
                            text[last - 1] == '\t'))
            last--;
        if (at + 1 >= last) at_end = true;
        long line, col;
        if (starts_with(s, rest, "NaN") || starts_with(s, rest, "nan") || starts_with(s, rest, "Inf") ||
            starts_with(s, rest, "inf") || starts_with(s, rest, "-Inf") || starts_with(s, rest, "-inf")) {
            line_column(text, at, &line, &col);
            return io_fail(c, DVI_ERR_PARSE,
                        "line %ld, column %ld: malformed JSON (NaN and Infinity are not JSON numbers)", line, col);
        }
        if (at_end) {
            line_column(text, length, &line, &col);
            return io_fail(c, DVI_ERR_PARSE, "line %ld, column %ld: malformed JSON (unexpected end of input: truncated?)",
                        line, col);
        }
        line_column(text, at, &line, &col);
        return io_fail(c, DVI_ERR_PARSE, "line %ld, column %ld: malformed JSON", line, col);
    }
    dvi_status st = DVI_OK;
    if (end) { /* only white space may follow the value */
        size_t at = (size_t)(end - text);
        while (at < length && (text[at] == ' ' || text[at] == '\n' || text[at] == '\r' || text[at] == '\t')) at++;
        if (at < length && text[at] != '\0') {
            long line, col;
            line_column(text, at, &line, &col);
            st = io_fail(c, DVI_ERR_PARSE, "line %ld, column %ld: unexpected text after the JSON value", line, col);
            goto done;
        }
    }
    if (!cJSON_IsObject(root)) {
        st = io_fail(c, DVI_ERR_PARSE, "expected a JSON object at the top level");
        goto done;
    }
    const cJSON* fmt = cJSON_GetObjectItemCaseSensitive(root, "format");
    if (!cJSON_IsString(fmt) || strcmp(fmt->valuestring, CCP_FORMAT) != 0) {
        st = io_fail(c, DVI_ERR_PARSE, "format: expected \"" CCP_FORMAT "\"%s", fmt ? "" : " (missing)");
        goto done;
    }
    const cJSON* ver = cJSON_GetObjectItemCaseSensitive(root, "version");
    if (!ver || !cJSON_IsNumber(ver)) {
        st = io_fail(c, DVI_ERR_PARSE, "version: %s", ver ? "expected a number" : "missing");
        goto done;
    }
    if (ver->valuedouble != CCP_VERSION) {
        st = io_fail(c, DVI_ERR_PARSE, "version: %g not supported (this library reads version %d)", ver->valuedouble,
                  CCP_VERSION);
        goto done;
    }
    static const char* const known[] = {"format", "version", "description", "rows", "blocks", "r", "compliance",
                                        "W", "D", "body_count", "inv_mass", "gamma0", "solution", NULL};
    if ((st = check_fields(c, root, NULL, known)) != DVI_OK) goto done;
    const cJSON* desc = cJSON_GetObjectItemCaseSensitive(root, "description");
    if (desc && !cJSON_IsString(desc)) {
        st = io_fail(c, DVI_ERR_INVALID_ARG, "description: expected a string");
        goto done;
    }

    dvi_ccp_problem* p = &o->pub.problem;
    *p = dvi_ccp_problem_empty();
    int64_t rows64 = 0;
    if ((st = read_blocks(c, cJSON_GetObjectItemCaseSensitive(root, "blocks"), o, &rows64)) != DVI_OK) goto done;
    const int32_t m = (int32_t)rows64;
    p->rows = m;
    const cJSON* rows = cJSON_GetObjectItemCaseSensitive(root, "rows");
    if (rows) {
        int32_t x = 0;
        if ((st = get_int(c, rows, "rows", &x)) != DVI_OK) goto done;
        if (x != m) {
            st = io_fail(c, DVI_ERR_INVALID_ARG, "rows: %d, but the blocks have %d rows", x, m);
            goto done;
        }
    }
    const cJSON* r = cJSON_GetObjectItemCaseSensitive(root, "r");
    if (!r) {
        st = io_fail(c, DVI_ERR_INVALID_ARG, "r: missing");
        goto done;
    }
    if ((st = get_doubles(c, r, "r", m, &o->r, NULL)) != DVI_OK) goto done;
    p->r = o->r;
    const cJSON* comp = cJSON_GetObjectItemCaseSensitive(root, "compliance");
    if (comp) {
        if ((st = get_doubles(c, comp, "compliance", m, &o->compliance, NULL)) != DVI_OK) goto done;
        p->compliance = o->compliance;
    }

    const cJSON* W = cJSON_GetObjectItemCaseSensitive(root, "W");
    const cJSON* D = cJSON_GetObjectItemCaseSensitive(root, "D");
    const cJSON* im = cJSON_GetObjectItemCaseSensitive(root, "inv_mass");
    const cJSON* nb = cJSON_GetObjectItemCaseSensitive(root, "body_count");
    if (W && D) {
        st = io_fail(c, DVI_ERR_INVALID_ARG, "W, D: both given; give exactly one operator form (W, or D with inv_mass)");
        goto done;
    }
    if (!W && !D) {
        st = io_fail(c, DVI_ERR_INVALID_ARG, "W: missing (give W, or D with inv_mass)");
        goto done;
    }
    if (W) {
        if (im || nb) {
            st = io_fail(c, DVI_ERR_INVALID_ARG, "%s: only with D (the factor form), not with W", im ? "inv_mass" : "body_count");
            goto done;
        }
        if (cJSON_IsArray(W)) st = read_dense_w(c, W, m, o);
        else if (cJSON_IsObject(W)) st = read_csc(c, W, "W", m, m, "the rows of the blocks", o);
        else st = io_fail(c, DVI_ERR_INVALID_ARG, "W: expected a CSC object or an array of rows");
        if (st != DVI_OK) goto done;
        p->W = &o->op;
    } else {
        if (!cJSON_IsObject(D)) {
            st = io_fail(c, DVI_ERR_INVALID_ARG, "D: expected a CSC object");
            goto done;
        }
        if (!im) {
            st = io_fail(c, DVI_ERR_INVALID_ARG, "inv_mass: missing (required with D)");
            goto done;
        }
        int32_t nbody = 0;
        if ((st = read_inv_mass(c, im, o, &nbody)) != DVI_OK) goto done;
        if (nb) {
            int32_t x = 0;
            if ((st = get_int(c, nb, "body_count", &x)) != DVI_OK) goto done;
            if (x != nbody) {
                st = io_fail(c, DVI_ERR_INVALID_ARG, "body_count: %d, but inv_mass has %d blocks", x, nbody);
                goto done;
            }
        }
        if ((st = read_csc(c, D, "D", 6 * (int64_t)nbody, m, "6 x the blocks of inv_mass", o)) != DVI_OK) goto done;
        p->body_count = nbody;
        p->inv_mass = o->inv_mass;
        p->D = &o->op;
    }
    const char* vec_names[2] = {"gamma0", "solution"};
    double** vec_dst[2] = {&o->gamma0, &o->solution};
    for (int k = 0; k < 2; k++) {
        const cJSON* v = cJSON_GetObjectItemCaseSensitive(root, vec_names[k]);
        if (!v) continue;
        if ((st = get_doubles(c, v, vec_names[k], m, vec_dst[k], NULL)) != DVI_OK) goto done;
    }
    o->pub.gamma0 = o->gamma0;
    o->pub.solution = o->solution;

    char vmsg[256];
    st = dvi_ccp_validate(p, vmsg, sizeof vmsg);
    if (st != DVI_OK) st = io_fail(c, st, "%s", vmsg);
done:
    cJSON_Delete(root);
    return st;
}

static dvi_status parse_with(const io_msg* c, const char* text, size_t length, dvi_ccp_file** out)
{
    ccp_owned* o = calloc(1, sizeof *o);
    if (!o) return io_fail(c, DVI_ERR_NOMEM, "out of memory");
    dvi_status st = parse_document(c, text, length, o);
    if (st != DVI_OK) {
        dvi_ccp_file_free(&o->pub);
        return st;
    }
    if (c->msg && c->n) c->msg[0] = '\0';
    *out = &o->pub;
    return DVI_OK;
}

dvi_status dvi_ccp_problem_parse_json(const char* text, size_t length, dvi_ccp_file** out, char* msg,
                                      size_t msg_size)
{
    io_msg c = {msg, msg_size, NULL};
    if (msg && msg_size) msg[0] = '\0';
    if (out) *out = NULL;
    if (!out || (!text && length > 0)) return io_fail(&c, DVI_ERR_INVALID_ARG, "NULL argument");
    return parse_with(&c, text ? text : "", length, out);
}

dvi_status dvi_ccp_problem_read_json(const char* path, dvi_ccp_file** out, char* msg, size_t msg_size)
{
    io_msg c = {msg, msg_size, path};
    if (msg && msg_size) msg[0] = '\0';
    if (out) *out = NULL;
    if (!path || !out) {
        c.prefix = NULL;
        return io_fail(&c, DVI_ERR_INVALID_ARG, "NULL argument");
    }
    char why[160];
    char* buf = NULL;
    size_t len = 0;
    const int rc = base_read_regular(path, (uint64_t)1 << 30, &buf, &len, why, sizeof why);
    dvi_status st = DVI_OK;
    if (rc != 0) st = io_fail(&c, rc == -2 ? DVI_ERR_NOMEM : DVI_ERR_IO, "%s", why);
    if (st == DVI_OK) st = parse_with(&c, buf, len, out);
    free(buf);
    return st;
}

/* ---- writing ------------------------------------------------------------------------ */

/* (the text goes into an out_sbuf, out_internal.h) */
static void sb_int(out_sbuf* b, long long v)
{
    out_sb_printf(b, "%lld", v);
}

/* The shortest of "%.15g", "%.16g", "%.17g" that reads back as the same
 * bits (17 digits always do), with '.' as the decimal separator whatever the
 * locale: any run of characters other than digits, signs and exponent
 * letters (the locale's separator) becomes one '.'. The read-back uses
 * strtod on the locale's own text, so the test is consistent. */
static void sb_num(out_sbuf* b, double x)
{
    char t[64], o[64];
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(t, sizeof t, "%.*g", prec, x);
        double y = strtod(t, NULL);
        if (prec == 17 || memcmp(&x, &y, sizeof x) == 0) break;
    }
    size_t k = 0;
    bool in_sep = false;
    for (size_t i = 0; t[i] && k + 1 < sizeof o; i++) {
        char ch = t[i];
        bool plain = (ch >= '0' && ch <= '9') || ch == '-' || ch == '+' || ch == 'e' || ch == 'E';
        if (plain) {
            o[k++] = ch;
            in_sep = false;
        } else if (!in_sep) {
            o[k++] = '.';
            in_sep = true;
        }
    }
    out_sb_putn(b, o, k);
}

/* [numbers] (dv, or the integers iv when dv is NULL), `per_line` to a line,
 * continuation lines indented. */
static void sb_array(out_sbuf* b, const char* indent, const double* dv, const int32_t* iv, size_t n, size_t per_line)
{
    out_sb_puts(b, "[");
    for (size_t i = 0; i < n; i++) {
        if (i > 0) {
            out_sb_puts(b, ",");
            if (i % per_line == 0) {
                out_sb_puts(b, "\n");
                out_sb_puts(b, indent);
            } else {
                out_sb_puts(b, " ");
            }
        }
        if (dv) sb_num(b, dv[i]);
        else sb_int(b, iv[i]);
    }
    out_sb_puts(b, "]");
}

static void sb_csc(out_sbuf* b, const char* name, const dvi_csc* A)
{
    out_sb_puts(b, ",\n  \"");
    out_sb_puts(b, name);
    out_sb_puts(b, "\": {\n    \"rows\": ");
    sb_int(b, A->rows);
    out_sb_puts(b, ", \"cols\": ");
    sb_int(b, A->cols);
    int32_t nnz = A->colptr[A->cols];
    out_sb_puts(b, ",\n    \"colptr\": ");
    sb_array(b, "      ", NULL, A->colptr, (size_t)A->cols + 1, 16);
    out_sb_puts(b, ",\n    \"rowind\": ");
    sb_array(b, "      ", NULL, A->rowind, (size_t)nnz, 16);
    out_sb_puts(b, ",\n    \"values\": ");
    sb_array(b, "      ", A->values, NULL, (size_t)nnz, 6);
    out_sb_puts(b, "\n  }");
}

static dvi_status check_vector(const io_msg* c, const double* v, int32_t m, const char* name)
{
    if (!v) return DVI_OK;
    for (int32_t i = 0; i < m; i++)
        if (!isfinite(v[i])) return io_fail(c, DVI_ERR_INVALID_ARG, "%s[%d]: not finite", name, i);
    return DVI_OK;
}

static dvi_status format_json(const io_msg* c, const dvi_ccp_problem* p, const double* gamma0, const double* solution,
                              out_sbuf* b)
{
    char vmsg[256];
    dvi_status st = dvi_ccp_validate(p, vmsg, sizeof vmsg);
    if (st != DVI_OK) return io_fail(c, st, "%s", vmsg);
    if ((st = check_vector(c, gamma0, p->rows, "gamma0")) != DVI_OK) return st;
    if ((st = check_vector(c, solution, p->rows, "solution")) != DVI_OK) return st;
    const int32_t m = p->rows;
    out_sb_puts(b, "{\n  \"format\": \"" CCP_FORMAT "\",\n  \"version\": ");
    sb_int(b, CCP_VERSION);
    out_sb_puts(b, ",\n  \"rows\": ");
    sb_int(b, m);
    out_sb_puts(b, ",\n  \"blocks\": [");
    for (int32_t k = 0; k < p->block_count; k++) {
        const dvi_ccp_block* B = &p->blocks[k];
        out_sb_puts(b, k ? ",\n    {\"kind\": \"" : "\n    {\"kind\": \"");
        out_sb_puts(b, kind_name(B->kind));
        out_sb_puts(b, "\"");
        if (B->kind == DVI_BLOCK_FRICTION || B->kind == DVI_BLOCK_FRICTION_ROLLING) {
            out_sb_puts(b, ", \"mu\": ");
            sb_num(b, B->mu);
        }
        if (B->kind == DVI_BLOCK_FRICTION_ROLLING) {
            out_sb_puts(b, ", \"mu_spin\": ");
            sb_num(b, B->mu_spin);
            out_sb_puts(b, ", \"mu_roll\": ");
            sb_num(b, B->mu_roll);
        }
        out_sb_puts(b, "}");
    }
    out_sb_puts(b, "\n  ],\n  \"r\": ");
    sb_array(b, "    ", p->r, NULL, (size_t)m, 6);
    if (p->compliance) {
        out_sb_puts(b, ",\n  \"compliance\": ");
        sb_array(b, "    ", p->compliance, NULL, (size_t)m, 6);
    }
    if (p->W) {
        sb_csc(b, "W", p->W);
    } else {
        out_sb_puts(b, ",\n  \"body_count\": ");
        sb_int(b, p->body_count);
        sb_csc(b, "D", p->D);
        out_sb_puts(b, ",\n  \"inv_mass\": [");
        for (int32_t k = 0; k < p->body_count; k++) {
            out_sb_puts(b, k ? ",\n    " : "\n    ");
            double tmp[36];
            sb_array(b, "     ", ccp_minv_block(p, k, tmp), NULL, 36, 6);
        }
        out_sb_puts(b, p->body_count ? "\n  ]" : "]");
    }
    if (gamma0) {
        out_sb_puts(b, ",\n  \"gamma0\": ");
        sb_array(b, "    ", gamma0, NULL, (size_t)m, 6);
    }
    if (solution) {
        out_sb_puts(b, ",\n  \"solution\": ");
        sb_array(b, "    ", solution, NULL, (size_t)m, 6);
    }
    out_sb_puts(b, "\n}\n");
    if (b->failed) return io_fail(c, DVI_ERR_NOMEM, "out of memory");
    return DVI_OK;
}

/* The file's text into b (freed on failure): the problem, or its frames
 * expanded as D's columns; a low-rank term G is refused. */
static dvi_status build_text(const io_msg* c, const dvi_ccp_problem* p, const double* gamma0,
                             const double* solution, out_sbuf* b)
{
    if (p->G) /* the format holds D and M⁻¹ or W: a low-rank term would be lost */
        return io_fail(c, DVI_ERR_UNSUPPORTED, "G: the file format has no low-rank term (give the problem as W)");
    if (p->frames) { /* the file holds D: write the frames as its columns */
        ccp_expanded e;
        dvi_status est = ccp_expand(p, &e, c->msg, c->n);
        if (est == DVI_OK) est = build_text(c, &e.problem, gamma0, solution, b);
        ccp_expanded_free(&e);
        return est;
    }
    dvi_status st = format_json(c, p, gamma0, solution, b);
    if (st != DVI_OK) {
        out_sb_free(b);
        return st;
    }
    return DVI_OK;
}

dvi_status dvi_ccp_problem_format_json(const dvi_ccp_problem* p, const double* gamma0, const double* solution,
                                       char** text, size_t* length, char* msg, size_t msg_size)
{
    io_msg c = {msg, msg_size, NULL};
    if (msg && msg_size) msg[0] = '\0';
    if (text) *text = NULL;
    if (length) *length = 0;
    if (!p || !text || !length) return io_fail(&c, DVI_ERR_INVALID_ARG, "NULL argument");
    out_sbuf b = {NULL, 0, 0, 0};
    dvi_status st = build_text(&c, p, gamma0, solution, &b);
    if (st != DVI_OK) return st;
    *text = b.data;
    *length = b.len;
    return DVI_OK;
}

dvi_status dvi_ccp_problem_write_json(const dvi_ccp_problem* p, const double* gamma0, const double* solution,
                                      const char* path, char* msg, size_t msg_size)
{
    io_msg c = {msg, msg_size, path};
    if (msg && msg_size) msg[0] = '\0';
    if (!p || !path) {
        c.prefix = NULL;
        return io_fail(&c, DVI_ERR_INVALID_ARG, "NULL argument");
    }
    out_sbuf b = {NULL, 0, 0, 0};
    dvi_status st = build_text(&c, p, gamma0, solution, &b);
    if (st != DVI_OK) return st;
    FILE* f = fopen(path, "wb");
    if (!f) {
        st = io_fail(&c, DVI_ERR_IO, "cannot open for writing: %s", strerror(errno));
    } else {
        size_t k = fwrite(b.data, 1, b.len, f);
        int e = k == b.len ? 0 : errno;
        if (fclose(f) != 0 && e == 0) e = errno ? errno : EIO;
        if (k != b.len || e) st = io_fail(&c, DVI_ERR_IO, "write error: %s", strerror(e ? e : EIO));
    }
    free(b.data);
    return st;
}
