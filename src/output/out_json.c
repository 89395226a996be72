/* Output writers (dvi/output.h): a streaming JSON writer. */
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
    out_sbuf buf;
    int depth;
    int top_values;
    int finished;
    json_frame stack[JSON_MAX_DEPTH];
    char err[256];
    dvi_status st; /* the first error's code (sticky, like err) */
};

/* The writer's first error: a write error DVI_ERR_IO, out of memory
 * DVI_ERR_NOMEM, a call against the grammar DVI_ERR_INVALID_ARG. */
static dvi_status json_fail(dvi_json_writer* w, dvi_status st, const char* what)
{
    if (!w->err[0]) {
        snprintf(w->err, sizeof w->err, "JSON writer: %s", what);
        w->st = st;
        base_error_set(st, w->err);
    }
    return w->st;
}

static dvi_status json_error(dvi_json_writer* w, const char* what) { return json_fail(w, DVI_ERR_INVALID_ARG, what); }

static void json_out(dvi_json_writer* w, const char* s, size_t n)
{
    if (w->err[0]) return;
    if (w->f) {
        if (fwrite(s, 1, n, w->f) != n) json_fail(w, DVI_ERR_IO, "write error");
    } else {
        out_sb_putn(&w->buf, s, n);
        if (w->buf.failed) json_fail(w, DVI_ERR_NOMEM, "out of memory");
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
            len = out_utf8_len(s);
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
static dvi_status json_before_value(dvi_json_writer* w)
{
    if (w->err[0]) return out_sticky(w->st, w->err);
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
    return w->st;
}

static dvi_status json_begin(dvi_json_writer* w, char type, int inl)
{
    if (!w) return out_fail_st(DVI_ERR_INVALID_ARG, NULL, 0, "JSON writer: NULL");
    if (json_before_value(w)) return w->st;
    if (w->depth >= JSON_MAX_DEPTH) return json_error(w, "nesting too deep");
    json_frame* fr = &w->stack[w->depth++];
    fr->type = type;
    fr->inl = (char)(inl || (w->depth > 1 && w->stack[w->depth - 2].inl));
    fr->keyed = 0;
    fr->count = 0;
    json_out(w, type == '{' ? "{" : "[", 1);
    return w->st;
}

static dvi_status json_end(dvi_json_writer* w, char type)
{
    if (!w) return out_fail_st(DVI_ERR_INVALID_ARG, NULL, 0, "JSON writer: NULL");
    if (w->err[0]) return out_sticky(w->st, w->err);
    if (w->depth == 0) return json_error(w, type == '{' ? "end_object without an open object" : "end_array without an open array");
    json_frame* fr = &w->stack[w->depth - 1];
    if (fr->type != type) return json_error(w, type == '{' ? "end_object closes an array" : "end_array closes an object");
    if (fr->keyed) return json_error(w, "key without a value at the end of an object");
    w->depth--;
    if (fr->count > 0 && !fr->inl) json_indent(w, w->depth);
    json_out(w, type == '{' ? "}" : "]", 1);
    return w->st;
}

static dvi_json_writer* json_new(void)
{
    dvi_json_writer* w = calloc(1, sizeof *w);
    return w;
}

dvi_status dvi_json_writer_open_file(dvi_json_writer** out, FILE* f)
{
    if (!out || !f) {
        if (out) *out = NULL;
        return out_fail_st(DVI_ERR_INVALID_ARG, NULL, 0, "dvi_json_writer_open_file: invalid argument (%s)",
                           !out ? "!out" : "!f");
    }
    *out = NULL;
    dvi_json_writer* w = json_new();
    if (!w) return out_fail_st(DVI_ERR_NOMEM, NULL, 0, "dvi_json_writer_open_file: out of memory");
    w->f = f;
    *out = w;
    return DVI_OK;
}

dvi_status dvi_json_writer_open_buffer(dvi_json_writer** out)
{
    if (!out) return out_fail_st(DVI_ERR_INVALID_ARG, NULL, 0, "dvi_json_writer_open_buffer: invalid argument (!out)");
    *out = json_new();
    if (*out) out_sb_reserve(&(*out)->buf, 1024);
    if (!*out || (*out)->buf.failed) {
        free(*out);
        *out = NULL;
        return out_fail_st(DVI_ERR_NOMEM, NULL, 0, "dvi_json_writer_open_buffer: out of memory");
    }
    (*out)->buf.data[0] = '\0';
    return DVI_OK;
}

const char* dvi_json_writer_buffer(const dvi_json_writer* w, size_t* size)
{
    if (size) *size = 0;
    if (!w || w->f) return NULL;
    if (size) *size = w->buf.len;
    return w->buf.data ? w->buf.data : "";
}

dvi_status dvi_json_writer_finish(dvi_json_writer* w, char* msg, size_t msg_size)
{
    if (!w) return out_fail_st(DVI_ERR_INVALID_ARG, msg, msg_size, "JSON writer: none");
    if (!w->err[0] && !w->finished) {
        if (w->depth > 0) json_error(w, w->stack[w->depth - 1].type == '{' ? "unclosed object" : "unclosed array");
        else if (w->top_values == 0) json_error(w, "no value written");
        else {
            json_out(w, "\n", 1);
            if (w->f && fflush(w->f) != 0) json_fail(w, DVI_ERR_IO, "write error");
            w->finished = 1;
        }
    }
    if (w->err[0]) return out_fail_st(w->st, msg, msg_size, "%s", w->err);
    return DVI_OK;
}

const char* dvi_json_writer_error(const dvi_json_writer* w) { return w ? w->err : ""; }

void dvi_json_writer_free(dvi_json_writer* w)
{
    if (!w) return;
    out_sb_free(&w->buf);
    free(w);
}

dvi_status dvi_json_begin_object(dvi_json_writer* w) { return json_begin(w, '{', 0); }
dvi_status dvi_json_end_object(dvi_json_writer* w) { return json_end(w, '{'); }
dvi_status dvi_json_begin_array(dvi_json_writer* w) { return json_begin(w, '[', 0); }
dvi_status dvi_json_begin_array_inline(dvi_json_writer* w) { return json_begin(w, '[', 1); }
dvi_status dvi_json_end_array(dvi_json_writer* w) { return json_end(w, '['); }

dvi_status dvi_json_key(dvi_json_writer* w, const char* key)
{
    if (!w) return out_fail_st(DVI_ERR_INVALID_ARG, NULL, 0, "JSON writer: NULL");
    if (w->err[0]) return out_sticky(w->st, w->err);
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
    return w->st;
}

dvi_status dvi_json_string(dvi_json_writer* w, const char* s)
{
    if (!w) return out_fail_st(DVI_ERR_INVALID_ARG, NULL, 0, "JSON writer: NULL");
    if (json_before_value(w)) return w->st;
    if (s) json_escaped(w, s);
    else json_puts(w, "null");
    return w->st;
}

dvi_status dvi_json_number(dvi_json_writer* w, double v)
{
    if (!w) return out_fail_st(DVI_ERR_INVALID_ARG, NULL, 0, "JSON writer: NULL");
    if (json_before_value(w)) return w->st;
    if (!isfinite(v)) json_puts(w, "null");
    else {
        char t[32];
        int n = out_format_roundtrip(t, v);
        json_out(w, t, (size_t)n);
    }
    return w->st;
}

dvi_status dvi_json_int(dvi_json_writer* w, long long v)
{
    if (!w) return out_fail_st(DVI_ERR_INVALID_ARG, NULL, 0, "JSON writer: NULL");
    if (json_before_value(w)) return w->st;
    char t[32];
    int n = snprintf(t, sizeof t, "%lld", v);
    json_out(w, t, (size_t)n);
    return w->st;
}

dvi_status dvi_json_bool(dvi_json_writer* w, bool v)
{
    if (!w) return out_fail_st(DVI_ERR_INVALID_ARG, NULL, 0, "JSON writer: NULL");
    if (json_before_value(w)) return w->st;
    json_puts(w, v ? "true" : "false");
    return w->st;
}

dvi_status dvi_json_null(dvi_json_writer* w)
{
    if (!w) return out_fail_st(DVI_ERR_INVALID_ARG, NULL, 0, "JSON writer: NULL");
    if (json_before_value(w)) return w->st;
    json_puts(w, "null");
    return w->st;
}

dvi_status dvi_json_key_string(dvi_json_writer* w, const char* key, const char* s)
{
    dvi_status st = dvi_json_key(w, key);
    return st != DVI_OK ? st : dvi_json_string(w, s);
}

dvi_status dvi_json_key_number(dvi_json_writer* w, const char* key, double v)
{
    dvi_status st = dvi_json_key(w, key);
    return st != DVI_OK ? st : dvi_json_number(w, v);
}

dvi_status dvi_json_key_int(dvi_json_writer* w, const char* key, long long v)
{
    dvi_status st = dvi_json_key(w, key);
    return st != DVI_OK ? st : dvi_json_int(w, v);
}

dvi_status dvi_json_key_bool(dvi_json_writer* w, const char* key, bool v)
{
    dvi_status st = dvi_json_key(w, key);
    return st != DVI_OK ? st : dvi_json_bool(w, v);
}

dvi_status dvi_json_key_numbers(dvi_json_writer* w, const char* key, const double* v, int n)
{
    dvi_status st = dvi_json_key(w, key);
    if (st == DVI_OK) st = dvi_json_begin_array_inline(w);
    if (st != DVI_OK) return st;
    if (n > 0 && !v) return json_error(w, "NULL number array");
    for (int i = 0; i < n; i++)
        if ((st = dvi_json_number(w, v[i])) != DVI_OK) return st;
    return dvi_json_end_array(w);
}
