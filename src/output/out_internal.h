/* What the output writers (src/output/out_*.c, public in <dvi/output.h>) share:
 * error messages, a growing text buffer, number formatting and the CSV
 * reading that the plots use. Internal to the library. */
#ifndef DVI_OUT_INTERNAL_H
#define DVI_OUT_INTERNAL_H

#include <dvi/output.h>

#include "error.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
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

/* ---- VTK frames in pieces (one per rank of a scene spread over ranks) ---- */

/* Which of the world's bodies a piece holds (keep[k] != 0) and the ids it
 * writes for them (ids[k], the scene's index); a contact goes with its body
 * a, or b when a is fixed or none. Piece 0 writes static.vtp at frame 0. */
typedef struct out_vtk_part {
    const uint8_t* keep;
    const int64_t* ids;
    int piece;
} out_vtk_part;

/* dvi_vtk_write_frame_ex, of the part's bodies and contacts only, into
 * DIR/frames/KIND_NNNNNN_pRRRR.vtp (part NULL: the whole world as
 * dvi_vtk_write_frame_ex writes it). */
dvi_status out_vtk_frame(const dvi_world* world, const char* dir, int frame, bool ascii, const out_vtk_part* part,
                         char* msg, size_t msg_size);
/* DIR/frames/{bodies,contacts,shapes}_NNNNNN.pvtp joining `pieces` pieces. */
dvi_status out_vtk_write_pvtp(const char* dir, int frame, int pieces, char* msg, size_t msg_size);
/* dvi_vtk_write_pvd with the frames' files named .EXT ("vtp", or "pvtp" for pieces). */
dvi_status out_vtk_write_pvd(const char* dir, int frames, const double* times, const char* ext, char* msg,
                             size_t msg_size);

#endif /* DVI_OUT_INTERNAL_H */
