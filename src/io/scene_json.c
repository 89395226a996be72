/* dvicontact — the scene reader's JSON toolkit (scene_parse.h): the error
 * lines, one "json.path: message" each with the exact path of the value at
 * fault (up to MAX_ERROR_LINES, then counted), and typed reads of JSON
 * values (numbers in a range, integers, vectors, unit quaternions, strings,
 * words of a list, arrays) that report what is wrong, with a suggestion for
 * a misspelt key or word.
 */
#include "scene_parse.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- small utilities ------------------------------------------------------------ */

int sc_cmp_i32(const void* a, const void* b)
{
    int32_t x = *(const int32_t*)a, y = *(const int32_t*)b;
    return (x > y) - (x < y);
}

bool sc_split_indexed(const char* name, char gen[SC_MAX_NAME + 1], int64_t* index)
{
    size_t n = name ? strlen(name) : 0;
    if (n < 4 || n > SC_MAX_NAME + 12 || name[n - 1] != ']') return false;
    const char* open = strchr(name, '[');
    if (!open || open == name || open[1] == ']') return false;
    size_t gl = (size_t)(open - name);
    if (gl > SC_MAX_NAME) return false;
    memcpy(gen, name, gl);
    gen[gl] = '\0';
    int64_t idx = 0;
    const char* d = open + 1;
    if (d[0] == '0' && d[1] != ']') return false; /* no leading zeros */
    for (; *d != ']'; d++) {
        if (*d < '0' || *d > '9' || idx > SC_MAX_BODIES) return false;
        idx = 10 * idx + (*d - '0');
    }
    if (d[1] != '\0') return false;
    *index = idx;
    return true;
}

/* A body name: an explicit body's, or "gen[i]" (scene_internal.h). Here, below
 * the sections and the terrain models that name bodies. */
int64_t sc_resolve_body(const dvi_scene* s, const sc_map* body_names, const sc_map* generator_names, const char* name)
{
    if (!name) return -1;
    int32_t b = sc_map_get(body_names, name);
    if (b >= 0) return b;
    char gen[SC_MAX_NAME + 1];
    int64_t idx;
    if (!sc_split_indexed(name, gen, &idx)) return -1;
    int32_t g = sc_map_get(generator_names, gen);
    if (g < 0 || idx >= s->generators[g].count) return -1;
    return s->generators[g].first_body + idx;
}

int64_t sc_body_ref(ctx* c, const cJSON* v, const char* path)
{
    if (!cJSON_IsString(v)) {
        sc_errf(c, path, "must be a body name (got %s)", sc_type_name(v));
        return -1;
    }
    int64_t b = sc_resolve_body(c->s, &c->body_map, &c->gen_map, v->valuestring);
    if (b < 0 && !c->bodies_unreadable && !(c->generator_failed && strchr(v->valuestring, '['))) {
        char q[128];
        sc_errf(c, path, "no body named %s", sc_quote(q, sizeof q, v->valuestring));
    }
    return b;
}

char* sc_dup_string(const char* s)
{
    if (!s) return NULL;
    size_t n = strlen(s) + 1;
    char* d = malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

/* ---- error lines and JSON paths ----------------------------------------------------- */

void sc_append_text(ctx* c, const char* s, size_t n)
{
    out_sb_putn(&c->text, s, n);
    if (c->text.failed) c->nomem = true;
}

static bool quiet(const ctx* c)
{
    return c->lines >= MAX_ERROR_LINES;
}

/* One "path: message\n" line into line[size] (cut to fit, still ending in
 * a newline); returns its length, or -1. */
static int format_line(char* line, size_t size, const char* path, const char* fmt, va_list ap)
{
    char msg[768];
    vsnprintf(msg, sizeof msg, fmt, ap);
    int n = snprintf(line, size, "%s: %s\n", path && path[0] ? path : "scene", msg);
    if (n < 0) return -1;
    if ((size_t)n >= size) {
        n = (int)size - 1;
        line[n - 1] = '\n';
    }
    return n;
}

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
void sc_errf(ctx* c, const char* path, const char* fmt, ...)
{
    c->problems++;
    if (quiet(c)) {
        c->hidden++;
        return;
    }
    char line[1200];
    va_list ap;
    va_start(ap, fmt);
    int n = format_line(line, sizeof line, path, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    sc_append_text(c, line, (size_t)n);
    c->lines++;
}

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
void sc_warnf(ctx* c, const char* path, const char* fmt, ...)
{
    char line[1200];
    va_list ap;
    va_start(ap, fmt);
    int n = format_line(line, sizeof line, path, fmt, ap);
    va_end(ap);
    if (n < 0 || !c->s) return;
    out_sb_putn(&c->s->warnings, line, (size_t)n);
    if (c->s->warnings.failed) c->nomem = true;
}

/* A user string for a message: quoted, at most 48 bytes, control and
 * non-ASCII bytes as \xNN. */
const char* sc_quote(char* buf, size_t size, const char* s)
{
    size_t o = 0;
    if (size < 16) return "";
    buf[o++] = '"';
    for (size_t i = 0; s && s[i] && o + 8 < size; i++) {
        if (i >= 48) {
            memcpy(buf + o, "...", 3);
            o += 3;
            break;
        }
        unsigned char ch = (unsigned char)s[i];
        if (ch < 0x20 || ch >= 0x7f || ch == '"' || ch == '\\')
            o += (size_t)snprintf(buf + o, size - o, "\\x%02x", ch);
        else
            buf[o++] = (char)ch;
    }
    buf[o++] = '"';
    buf[o] = '\0';
    return buf;
}

/* parent.key and parent[i]; keys from the file are cleaned as in sc_quote(). */
const char* sc_path_key(char* buf, const char* parent, const char* key)
{
    char k[80];
    size_t o = 0;
    for (size_t i = 0; key && key[i] && o + 5 < sizeof k; i++) {
        unsigned char ch = (unsigned char)key[i];
        if (i >= 48) {
            memcpy(k + o, "...", 3);
            o += 3;
            break;
        }
        if (ch < 0x20 || ch >= 0x7f)
            o += (size_t)snprintf(k + o, sizeof k - o, "\\x%02x", ch);
        else
            k[o++] = (char)ch;
    }
    k[o] = '\0';
    int n = snprintf(buf, PATH_LEN, "%s%s%s", parent, parent[0] ? "." : "", k);
    if (n < 0 || n >= PATH_LEN) memcpy(buf + PATH_LEN - 4, "...", 4); /* truncated */
    return buf;
}

const char* sc_path_index(char* buf, const char* parent, long long i)
{
    int n = snprintf(buf, PATH_LEN, "%s[%lld]", parent, i);
    if (n < 0 || n >= PATH_LEN) memcpy(buf + PATH_LEN - 4, "...", 4); /* truncated */
    return buf;
}

const char* sc_type_name(const cJSON* v)
{
    if (!v) return "nothing";
    if (cJSON_IsNumber(v)) return "a number";
    if (cJSON_IsString(v)) return "a string";
    if (cJSON_IsArray(v)) return "an array";
    if (cJSON_IsObject(v)) return "an object";
    if (cJSON_IsBool(v)) return "a boolean";
    if (cJSON_IsNull(v)) return "null";
    return "an invalid value";
}

const cJSON* sc_member(const cJSON* obj, const char* key)
{
    return obj ? cJSON_GetObjectItemCaseSensitive(obj, key) : NULL;
}

int64_t sc_array_size(const cJSON* a)
{
    int64_t n = 0;
    for (const cJSON* it = a ? a->child : NULL; it; it = it->next) n++;
    return n;
}

int sc_index_of(const char* const* list, const char* s)
{
    for (int i = 0; list && list[i]; i++)
        if (strcmp(list[i], s) == 0) return i;
    return -1;
}

/* Edit distance, ignoring case, of two short strings (≤ 32 bytes). */
static int edit_distance(const char* a, const char* b)
{
    size_t na = strlen(a), nb = strlen(b);
    if (na > 32 || nb > 32) return 99;
    int row[33];
    for (size_t j = 0; j <= nb; j++) row[j] = (int)j;
    for (size_t i = 1; i <= na; i++) {
        int diag = row[0];
        row[0] = (int)i;
        for (size_t j = 1; j <= nb; j++) {
            int ca = a[i - 1] >= 'A' && a[i - 1] <= 'Z' ? a[i - 1] + 32 : a[i - 1];
            int cb = b[j - 1] >= 'A' && b[j - 1] <= 'Z' ? b[j - 1] + 32 : b[j - 1];
            int best = diag + (ca != cb);
            if (row[j] + 1 < best) best = row[j] + 1;
            if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
            diag = row[j];
            row[j] = best;
        }
    }
    return row[nb];
}

const char* sc_suggest(const char* key, const char* const* list)
{
    const char* best = NULL;
    int bd = 99;
    for (int i = 0; list && list[i]; i++) {
        int d = edit_distance(key, list[i]);
        int limit = (int)strlen(list[i]) / 3;
        if (limit < 1) limit = 1;
        if (d <= limit && d < bd) {
            bd = d;
            best = list[i];
        }
    }
    return best;
}

/* Reports keys of obj not in `allowed`: "not used by <owner>" when they are
 * in `known` (keys of the same object kind for another type), else "unknown
 * key" with a suggestion; also duplicate keys. "comment" (a string) is
 * allowed everywhere. */
void sc_check_keys(ctx* c, const cJSON* obj, const char* path, const char* const* allowed,
                   const char* const* known, const char* owner)
{
    int counts[32] = {0};
    for (const cJSON* it = obj->child; it; it = it->next) {
        const char* k = it->string ? it->string : "";
        int ai = sc_index_of(allowed, k);
        if (ai >= 0 && ai < 32) {
            char q[128];
            if (++counts[ai] == 2) sc_errf(c, path, "duplicate key %s", sc_quote(q, sizeof q, k));
            continue;
        }
        char p[PATH_LEN];
        sc_path_key(p, path, k);
        if (strcmp(k, "comment") == 0) {
            if (!cJSON_IsString(it)) sc_errf(c, p, "must be a string (got %s)", sc_type_name(it));
            continue;
        }
        if (known && sc_index_of(known, k) >= 0) {
            sc_errf(c, p, "not used by %s", owner);
            continue;
        }
        if (quiet(c)) { /* counted only: no suggestion to compute */
            sc_errf(c, p, "unknown key");
            continue;
        }
        const char* near = sc_suggest(k, allowed);
        if (near)
            sc_errf(c, p, "unknown key (did you mean \"%s\"?)", near);
        else
            sc_errf(c, p, "unknown key");
    }
}

/* ---- typed values ---------------------------------------------------------------------- */

bool sc_as_number(ctx* c, const cJSON* v, const char* path, double* out)
{
    if (!cJSON_IsNumber(v)) {
        sc_errf(c, path, "must be a number (got %s)", sc_type_name(v));
        return false;
    }
    double x = v->valuedouble;
    if (isnan(x)) {
        sc_errf(c, path, "must be a finite number (got NaN)");
        return false;
    }
    if (isinf(x)) {
        sc_errf(c, path, "must be a finite number (got %s: the number overflows a double)", x > 0 ? "+inf" : "-inf");
        return false;
    }
    if (fabs(x) > SC_MAX_NUMBER) {
        sc_errf(c, path, "%.6g is out of range (magnitude at most 1e15)", x);
        return false;
    }
    *out = x;
    return true;
}

/* The shortest decimal text that reads back as x (for messages: -0.1, not
 * -0.10000000000000001). */
const char* sc_num_text(char buf[32], double x)
{
    for (int p = 6; p <= 17; p++) {
        snprintf(buf, 32, "%.*g", p, x);
        if (strtod(buf, NULL) == x) break;
    }
    return buf;
}

bool sc_check_range(ctx* c, const char* path, double x, range r)
{
    char t[32];
    switch (r) {
    case R_POS:
        if (!(x > 0.0)) {
            sc_errf(c, path, "must be > 0 (got %s)", sc_num_text(t, x));
            return false;
        }
        break;
    case R_NONNEG:
        if (!(x >= 0.0)) {
            sc_errf(c, path, "must be >= 0 (got %s)", sc_num_text(t, x));
            return false;
        }
        break;
    case R_UNIT:
        if (!(x >= 0.0 && x <= 1.0)) {
            sc_errf(c, path, "must be in [0, 1] (got %s)", sc_num_text(t, x));
            return false;
        }
        break;
    default:
        break;
    }
    return true;
}

/* obj[key], its path written into p; NULL when it is missing (an error
 * only when required). */
static const cJSON* field(ctx* c, const cJSON* obj, const char* path, const char* key, bool required, char* p)
{
    sc_path_key(p, path, key);
    const cJSON* v = sc_member(obj, key);
    if (!v && required) sc_errf(c, p, "missing");
    return v;
}

/* obj[key] as a number in range r. Returns true when a valid value was
 * stored; a missing key is an error only when required. */
bool sc_num_field(ctx* c, const cJSON* obj, const char* path, const char* key, bool required, range r,
                  double* out)
{
    char p[PATH_LEN];
    const cJSON* v = field(c, obj, path, key, required, p);
    if (!v) return false;
    double x;
    if (!sc_as_number(c, v, p, &x) || !sc_check_range(c, p, x, r)) return false;
    *out = x;
    return true;
}

static bool as_integer(ctx* c, const cJSON* v, const char* path, double lo, double hi, int64_t* out)
{
    double x;
    if (!sc_as_number(c, v, path, &x)) return false;
    if (x != floor(x)) {
        char t[32];
        sc_errf(c, path, "must be an integer (got %s)", sc_num_text(t, x));
        return false;
    }
    if (x < lo || x > hi) {
        sc_errf(c, path, "must be in [%.0f, %.0f] (got %.0f)", lo, hi, x);
        return false;
    }
    *out = (int64_t)x;
    return true;
}

bool sc_int_field(ctx* c, const cJSON* obj, const char* path, const char* key, bool required, double lo,
                  double hi, int64_t* out)
{
    char p[PATH_LEN];
    const cJSON* v = field(c, obj, path, key, required, p);
    if (!v) return false;
    return as_integer(c, v, p, lo, hi, out);
}

bool sc_bool_field(ctx* c, const cJSON* obj, const char* path, const char* key, bool* out)
{
    const cJSON* v = sc_member(obj, key);
    if (!v) return false;
    if (!cJSON_IsBool(v)) {
        char p[PATH_LEN];
        sc_errf(c, sc_path_key(p, path, key), "must be true or false (got %s)", sc_type_name(v));
        return false;
    }
    *out = cJSON_IsTrue(v);
    return true;
}

/* An array of exactly n numbers. */
bool sc_as_vec(ctx* c, const cJSON* v, const char* path, int n, double* out)
{
    if (!cJSON_IsArray(v)) {
        sc_errf(c, path, "must be an array of %d numbers (got %s)", n, sc_type_name(v));
        return false;
    }
    int64_t count = sc_array_size(v);
    if (count != n) {
        sc_errf(c, path, "must have %d elements (got %lld)", n, (long long)count);
        return false;
    }
    bool ok = true;
    int i = 0;
    for (const cJSON* it = v->child; it; it = it->next, i++) {
        char p[PATH_LEN];
        ok = sc_as_number(c, it, sc_path_index(p, path, i), &out[i]) && ok;
    }
    return ok;
}

bool sc_as_number_array(ctx* c, const cJSON* v, const char* path, int64_t n, double** out)
{
    *out = malloc((size_t)n * sizeof(double));
    if (!*out) {
        c->nomem = true;
        return false;
    }
    int64_t i = 0;
    for (const cJSON* it = v->child; it; it = it->next, i++) {
        char p[PATH_LEN];
        if (!sc_as_number(c, it, sc_path_index(p, path, i), &(*out)[i])) return false; /* the first bad one only */
    }
    return true;
}

bool sc_vec_field(ctx* c, const cJSON* obj, const char* path, const char* key, bool required, int n,
                  double* out)
{
    char p[PATH_LEN];
    const cJSON* v = field(c, obj, path, key, required, p);
    if (!v) return false;
    double tmp[4];
    if (!sc_as_vec(c, v, p, n, tmp)) return false;
    memcpy(out, tmp, (size_t)n * sizeof(double));
    return true;
}

/* A unit quaternion (w, x, y, z): normalised when its norm is within 1e-6
 * of 1, refused otherwise. */
bool sc_quat_field(ctx* c, const cJSON* obj, const char* path, const char* key, double q[4])
{
    double t[4];
    if (!sc_vec_field(c, obj, path, key, false, 4, t)) return false;
    double n = sqrt(t[0] * t[0] + t[1] * t[1] + t[2] * t[2] + t[3] * t[3]);
    if (!(fabs(n - 1.0) <= 1e-6)) {
        char p[PATH_LEN];
        sc_errf(c, sc_path_key(p, path, key), "must be a unit quaternion (w, x, y, z) (norm %.9g)", n);
        return false;
    }
    for (int k = 0; k < 4; k++) q[k] = t[k] / n;
    return true;
}

/* obj[key] as a string; NULL if absent (error when required) or not a string. */
const char* sc_str_field(ctx* c, const cJSON* obj, const char* path, const char* key, bool required)
{
    char p[PATH_LEN];
    const cJSON* v = sc_member(obj, key);
    if (!v) {
        if (required) sc_errf(c, sc_path_key(p, path, key), "missing");
        return NULL;
    }
    if (!cJSON_IsString(v) || !v->valuestring) {
        sc_errf(c, sc_path_key(p, path, key), "must be a string (got %s)", sc_type_name(v));
        return NULL;
    }
    return v->valuestring;
}

/* One of a list of words; -1 when absent or wrong (reported). */
int sc_enum_field(ctx* c, const cJSON* obj, const char* path, const char* key, bool required,
                  const char* const* words)
{
    const char* s = sc_str_field(c, obj, path, key, required);
    if (!s) return -1;
    int i = sc_index_of(words, s);
    if (i >= 0) return i;
    char list[256] = "", q[128], p[PATH_LEN];
    for (int k = 0; words[k]; k++) {
        size_t o = strlen(list);
        snprintf(list + o, sizeof list - o, "%s\"%s\"", k ? ", " : "", words[k]);
    }
    const char* near = sc_suggest(s, words);
    if (near)
        sc_errf(c, sc_path_key(p, path, key), "unknown value %s (did you mean \"%s\"? one of %s)",
                sc_quote(q, sizeof q, s), near, list);
    else
        sc_errf(c, sc_path_key(p, path, key), "unknown value %s (one of %s)", sc_quote(q, sizeof q, s), list);
    return -1;
}

bool sc_is_object(ctx* c, const cJSON* v, const char* path)
{
    if (cJSON_IsObject(v)) return true;
    sc_errf(c, path, "must be an object (got %s)", sc_type_name(v));
    return false;
}

/* An array of at most `limit` elements, or NULL (reported). */
const cJSON* sc_array_field(ctx* c, const cJSON* obj, const char* path, const char* key, int64_t limit,
                            const char* hint, int64_t* count)
{
    char p[PATH_LEN];
    sc_path_key(p, path, key);
    const cJSON* v = sc_member(obj, key);
    *count = 0;
    if (!v) return NULL;
    if (!cJSON_IsArray(v)) {
        sc_errf(c, p, "must be an array (got %s)", sc_type_name(v));
        return NULL;
    }
    int64_t n = sc_array_size(v);
    if (n > limit) {
        sc_errf(c, p, "%lld entries, more than the limit of %lld%s", (long long)n, (long long)limit, hint ? hint : "");
        return NULL;
    }
    *count = n;
    return v;
}

