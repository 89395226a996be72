/* What the output writers (src/output/out_*.c, public in <dvi/output.h>) share:
 * error messages, a growing text buffer, number formatting and the CSV
 * reading that the plots use. Internal to the library. */
#ifndef DVI_OUT_INTERNAL_H
#define DVI_OUT_INTERNAL_H

#include <dvi/output.h>

#include "error.h"

#include <stddef.h>
#include <sys/types.h>

#if defined(__GNUC__)
#define DVI_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define DVI_PRINTF(a, b)
#endif

/* Writes a printf-style message into msg (if msg_size > 0) and sets it as
 * the thread's last error with code st; returns st. out_fail: DVI_ERR_IO. */
dvi_status out_fail_st(dvi_status st, char* msg, size_t msg_size, const char* fmt, ...) DVI_PRINTF(4, 5);
dvi_status out_fail(char* msg, size_t msg_size, const char* fmt, ...) DVI_PRINTF(3, 4);
/* A writer's sticky error st, set again as the thread's last error; returns st. */
dvi_status out_sticky(dvi_status st, const char* err);
/* malloc'd copy of s (NULL when out of memory). */
char* out_strdup(const char* s);

/* Growing text buffer, always NUL-terminated once written to; `failed` is
 * sticky (an allocation failed: later writes do nothing). */
typedef struct out_sbuf {
    char* data;
    size_t len, cap;
    int failed;
} out_sbuf;

int out_sb_reserve(out_sbuf* b, size_t extra);
void out_sb_putn(out_sbuf* b, const char* s, size_t n);
void out_sb_puts(out_sbuf* b, const char* s);
void out_sb_printf(out_sbuf* b, const char* fmt, ...) DVI_PRINTF(2, 3);
void out_sb_free(out_sbuf* b);
/* XML text/attribute escaping; characters XML 1.0 cannot hold become U+FFFD. */
void out_sb_xml(out_sbuf* b, const char* text);

/* "%.10g", non-finite as nan / inf / -inf; out holds 32 bytes. Returns the length. */
int out_format_g10(char* out, double v);
/* Shortest of %.15g/%.16g/%.17g that reads back to v (finite v). */
int out_format_roundtrip(char* out, double v);
/* Length of the valid UTF-8 sequence at s (1..4), or 0 if it is not valid. */
int out_utf8_len(const unsigned char* s);

/* CSV reading: fields of a header line (RFC 4180 quoting), malloc'd; the
 * numbers of a data row (missing or non-numeric cells NaN); the number of
 * fields of a line; a line's trailing "\n" / "\r\n" removed. */
int out_csv_split_header(const char* s, char*** fields_out, int* count_out);
void out_csv_parse_row(const char* p, double* vals, int ncols);
int out_csv_count_fields(const char* s);
void out_chomp(char* line, ssize_t* len);

#endif /* DVI_OUT_INTERNAL_H */
