/* Output writers: CSV time series, SVG plots of them, VTK frames for
 * ParaView, atomic file writes and a small JSON writer. The `dvi` command,
 * the examples and the benchmarks write their files with these; an embedder
 * who steps a world of its own gets the same files.
 *
 * They sit on top of the world API (<dvi/world.h>) and use libc/libm only. Conventions:
 *   - Writers return a dvi_status: DVI_OK (0) on success, else the failure's
 *     code (DVI_ERR_IO for a file that cannot be read or written, DVI_ERR_NOMEM,
 *     DVI_ERR_INVALID_ARG for a call the writer cannot take), with the
 *     thread's last error set (dvi_error_message). Those taking (msg,
 *     msg_size) also write a one-line English message into msg that names the
 *     file and the problem (msg may be NULL, msg_size 0).
 *   - Output is deterministic: no timestamps, no host names, no addresses.
 *   - Nothing here prints to stdout/stderr or exits.
 *
 * The files and their layout are described in docs/outputs.md. */
#ifndef DVI_OUTPUT_H
#define DVI_OUTPUT_H

#include "base.h"
#include "world.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ==== CSV time series ===================================================== */

/* A CSV file being written, one row of `columns` numbers at a time.
 *
 * Format: a header line of comma-separated column titles "name [unit]" (just
 * "name" when the unit is NULL or ""; a title containing a comma or a quote
 * is quoted as in RFC 4180; line breaks in titles are written as spaces),
 * then one line per row of numbers
 * printed with "%.10g"; non-finite values are written "nan", "inf", "-inf".
 * Lines end with '\n'. By convention the first column is time, "time [s]".
 *
 * Rows are formatted into a buffer allocated at open: writing a row does not
 * allocate. Writes are buffered; dvi_csv_flush pushes them to disk. */
typedef struct dvi_csv dvi_csv;

/* Creates (or truncates) path and writes the header. names[columns] are
 * required; units may be NULL (no units) or hold NULL/"" entries. */
DVI_API dvi_status dvi_csv_open(dvi_csv** out, const char* path, int columns, const char* const* names,
                                const char* const* units, char* msg, size_t msg_size);

/* Reopens an existing CSV for appending after a restart: keeps the header and
 * the first `rows` data rows, removes everything after them (rows written
 * after the checkpoint being resumed, or a partly written last line), and
 * positions the writer after them. Fails, leaving the file unchanged, if the
 * file is missing, its header does not have `columns` columns, or it holds
 * fewer than `rows` complete data rows. rows = 0 keeps just the header. */
DVI_API dvi_status dvi_csv_open_resume(dvi_csv** out, const char* path, long long rows, int columns, char* msg,
                                       size_t msg_size);

/* Appends one row: values[columns]. On an I/O error returns DVI_ERR_IO, and
 * dvi_csv_last_error says why; the error is sticky (later writes fail too). */
DVI_API dvi_status dvi_csv_write_row(dvi_csv* c, const double* values);

/* Data rows in the file (kept rows after a resume + rows written since). */
DVI_API long long dvi_csv_rows(const dvi_csv* c);
DVI_API int dvi_csv_columns(const dvi_csv* c);
DVI_API const char* dvi_csv_path(const dvi_csv* c);

/* Message of the first error on this writer ("" if none). */
DVI_API const char* dvi_csv_last_error(const dvi_csv* c);

/* Flushes buffered rows to the operating system and to disk (fsync). Meant
 * for checkpoints, not for every row. */
DVI_API dvi_status dvi_csv_flush(dvi_csv* c);

/* Flushes, closes and frees. Non-zero if this or any earlier write failed.
 * NULL is accepted (returns DVI_OK). */
DVI_API dvi_status dvi_csv_close(dvi_csv* c);

/* Counts the complete data rows (lines ending in '\n' after the header) and
 * the header's columns of an existing CSV file. Either output may be NULL. */
DVI_API dvi_status dvi_csv_count_rows(const char* path, long long* rows, int* columns, char* msg, size_t msg_size);

/* ==== SVG plots =========================================================== */

/* Plot settings; start from dvi_svg_default_options(). */
typedef struct dvi_svg_options {
    int width;        /* px of the whole picture; default 900 (min 320) */
    int panel_height; /* px of one panel's plot area plus its gap; default 220 (min 100) */
    int log;          /* y axes: -1 (default) logarithmic where a panel's positive values span three
                       * decades or more and at most a tenth of its values are not positive; 1: every
                       * panel with a positive value; 0: none. Values ≤ 0 are not drawn on a log axis. */
    const char* columns; /* comma-separated names of the columns to draw (as in the header, without the
                          * unit); NULL or "": all */
} dvi_svg_options;

DVI_API dvi_svg_options dvi_svg_default_options(void);

/* Plots a CSV file (as written by dvi_csv) as an SVG picture.
 *
 * The first column is x (normally time); every other column is a series.
 * Series are grouped into one panel per unit (taken from "name [unit]"
 * headers; a column without a unit gets a panel of its own), panels stacked vertically
 * with a shared x axis. Each panel has a light grid, "nice" (1-2-5) ticks
 * with tick labels free of floating-point noise (large and small magnitudes
 * as m×10ⁿ), a y-axis label with the unit, and a legend outside the plot area
 * on the right. The x tick labels and the x-axis label sit under the bottom
 * panel; the title above the top panel (title NULL: the CSV file's name).
 *
 * Series of one panel differ in colour and in dash pattern, so that
 * series lying on each other both show. A panel whose positive values span
 * three decades or more (a residual) gets a logarithmic axis (opt->log).
 *
 * Each continuous run of finite values of a series is one <polyline> (a
 * series without NaN is exactly one polyline); a non-finite value breaks the
 * line. Long series are decimated per pixel column, keeping the first, the
 * minimum, the maximum and the last point of each column, so peaks survive.
 * Constant data get a range around the value; a series with no finite value
 * is drawn as nothing and marked "(no finite data)" in the legend.
 *
 * The CSV is streamed twice (ranges, then points), so memory does not grow
 * with the number of rows. Ragged rows (missing cells read as NaN, extra
 * cells are ignored) and non-numeric cells (NaN) are tolerated; rows whose x
 * is not finite are skipped. A header-only CSV yields a picture saying "no
 * data". Fails on a missing or empty file (no header line). The SVG is
 * written atomically (see dvi_write_file_atomic). */
DVI_API dvi_status dvi_svg_plot_csv(const char* csv_path, const char* svg_path, const char* title, char* msg,
                                    size_t msg_size);
/* Same, with settings (opt NULL: defaults). */
DVI_API dvi_status dvi_svg_plot_csv_ex(const char* csv_path, const char* svg_path, const char* title,
                                       const dvi_svg_options* opt, char* msg, size_t msg_size);
/* Overlays several CSV files (runs of one scene, say) in one picture: the
 * series of every file, drawn as dvi_svg_plot_csv_ex draws one file's, the
 * same column of every file in one panel (by unit, as above), each file's
 * told apart by colour and dash. The legend names each series by its file's
 * label (labels[k]; NULL or "": the path), followed by ": COLUMN" unless
 * opt->columns names exactly one column. Every column of opt->columns must be
 * in every file. The x axis spans all files; the title defaults to
 * "NAME: COLUMNS (N runs)", NAME the first file's name. Returns 0, or -1
 * with a message naming the file. */
DVI_API dvi_status dvi_svg_plot_csv_overlay(const char* const* csv_paths, const char* const* labels, int count,
                                            const char* svg_path, const char* title, const dvi_svg_options* opt,
                                            char* msg, size_t msg_size);

/* ==== XY (scatter) plots ================================================== */

/* A series of an XY plot: `count` points (x[i], y[i]), each a circle, filled
 * when filled is NULL or filled[i] is true (hollow otherwise: e.g. a run that
 * is not acceptable), joined in their order by a line when `lines` is true.
 * Points with a non-finite coordinate, or one ≤ 0 on a log axis, are not
 * drawn (and break the line). */
typedef struct dvi_svg_xy_series {
    const char* name;       /* legend */
    int count;
    const double* x;
    const double* y;
    const bool* filled;     /* NULL: all filled */
    bool lines;
} dvi_svg_xy_series;

/* One panel: axes, labels, series, and an optional dashed horizontal line
 * (a tolerance, a limit). Start from dvi_svg_xy_default_panel(). */
typedef struct dvi_svg_xy_panel {
    const char* title;
    const char* x_label;
    const char* y_label;
    bool log_x, log_y;      /* default true, true (whole decades as ticks) */
    int series_count;
    const dvi_svg_xy_series* series;
    double hline;           /* y of the dashed line; NaN (default): none */
    const char* hline_label;
    const char* legend_note; /* a line under the legend (NULL: none) */
    bool zero_at_bottom;    /* log y axis: a y of exactly 0 is drawn as a downward triangle on the
                             * bottom edge (e.g. the error of a reference run); default false */
} dvi_svg_xy_panel;

DVI_API dvi_svg_xy_panel dvi_svg_xy_default_panel(void);

/* Draws panels of points (error against cost, step against stiffness, ...)
 * into one SVG picture, `columns` panels a row, each with its own axes (log
 * or linear, 1-2-5 or whole-decade ticks), a light grid, the series told
 * apart by colour and dash pattern with a legend on the panel's right, the
 * title above and `note` (may be NULL) under everything. Written atomically
 * (dvi_write_file_atomic). Returns 0, or -1 with a message. */
DVI_API dvi_status dvi_svg_xy_plot(const char* svg_path, const char* title, const char* note, int panel_count,
                                   const dvi_svg_xy_panel* panels, int columns, char* msg, size_t msg_size);

/* ==== VTK frames for ParaView ============================================= */

/* Writes frame `frame` (>= 0) of the world as three VTK XML PolyData files,
 * creating DIR and DIR/frames if needed (frame 0 also writes DIR/static.vtp,
 * see dvi_vtk_write_static):
 *
 *   DIR/frames/bodies_NNNNNN.vtp   one point per live body (centre of mass),
 *       in creation order, with a vertex cell each, and point data
 *         "id"               Int32    body index (id.index1 − 1)
 *         "body_type"        Int32    dvi_body_type (0 dynamic, 1 fixed, 2 kinematic)
 *         "shape_type"       Int32    dvi_shape_type of the first shape (0 none)
 *         "mass"             Float64  kg (0 for fixed and kinematic bodies)
 *         "radius"           Float64  m, bounding radius (0 if only unbounded shapes)
 *         "glyph_radius"     Float64  m, the sphere's radius for a body whose only shape
 *                                     is a sphere at its centre of mass (drawn as a
 *                                     sphere glyph), else 0 (drawn in the shapes files)
 *         "orientation"      Float64 ×4  unit quaternion (w, x, y, z)
 *         "rotation"         Float64 ×9  rotation matrix (body → world) stored column
 *                                        by column: the body's x, y, z axes in world
 *                                        coordinates (Tensor Glyph-ready)
 *         "axis_x", "axis_z" Float64 ×3  the body's x and z axes in the world frame
 *         "velocity"         Float64 ×3  m/s
 *         "angular_velocity" Float64 ×3  rad/s, world frame
 *         "speed"            Float64  |velocity|, m/s
 *   DIR/frames/contacts_NNNNNN.vtp   one point per contact of the last step
 *       (at the contact point), with point data
 *         "force"            Float64 ×3  N, force on body b (world)
 *         "normal"           Float64 ×3  unit, from body a to body b
 *         "force_magnitude"  Float64  N
 *         "normal_force"     Float64  N, force · normal
 *         "distance"         Float64  m, signed gap at collision time
 *         "body_a", "body_b" Int32    body indices (−1 for none)
 *   DIR/frames/shapes_NNNNNN.vtp   the surfaces (triangles, world coordinates)
 *       of the shapes of the dynamic and kinematic bodies that are not sphere
 *       glyphs, with cell data
 *         "shape_type"       Int32    dvi_shape_type
 *         "body"             Int32    body index (as "id")
 *         "shape"            Int32    shape index in the body (dvi_body_get_shape)
 *         "speed"            Float64  m/s, the body's |velocity|
 *       Triangles per shape: box 12; cylinder 96 (24 segments around: 48 on
 *       the side, 24 in each cap); capsule 576 and sphere 528 (24 segments
 *       around, 15° steps from pole to pole); plane 2; height field
 *       2 (nx − 1)(ny − 1); mesh its triangles.
 *   DIR/frames/soil_NNNNNN.vtp   only when the world has SCM soils
 *       (<dvi/terrain.h>): their deformed surface, a quad per touched node
 *       (the Δ × Δ cell about it at its current height, world coordinates),
 *       with cell data
 *         "sinkage"          Float64  m, plastic + elastic
 *         "sinkage_plastic"  Float64  m
 *         "pressure"         Float64  Pa, of the last step
 *         "contact"          Int32    1: under a shape in the last step
 *         "soil"             Int32    which soil (force element order among the soils)
 *
 * NNNNNN is the frame number in six or more digits. The arrays are
 * format="binary", little-endian, exact: if the library was built with zlib
 * (dvi_vtk_compressed()), compressed in 32 KiB blocks (VTK's
 * vtkZLibDataCompressor, header_type UInt64), else base64 of a UInt64 byte
 * count and the numbers themselves. dvi_vtk_write_frame_ex writes them as
 * text instead ("%.10g", non-finite as nan/inf). Each file is written
 * atomically. */
DVI_API dvi_status dvi_vtk_write_frame(const dvi_world* world, const char* dir, int frame, char* msg, size_t msg_size);
/* The same, the arrays as text (ascii) or binary as dvi_vtk_write_frame does. */
DVI_API dvi_status dvi_vtk_write_frame_ex(const dvi_world* world, const char* dir, int frame, bool ascii, char* msg,
                                          size_t msg_size);

/* Writes DIR/static.vtp: the surfaces of the fixed bodies' shapes (cell data
 * "shape_type", "body", "shape"; triangles as in the shapes files), once per
 * run since they do not move (dvi_vtk_write_frame calls it for frame 0). A
 * plane is drawn as a square about the foot of the centre of the scene's
 * bounding box (bodies' bounding spheres, height fields and meshes), of half
 * side 0.75 × that box's diagonal, at least 1 m. */
DVI_API dvi_status dvi_vtk_write_static(const dvi_world* world, const char* dir, bool ascii, char* msg,
                                        size_t msg_size);

/* True when binary VTK arrays are zlib-compressed (the library was built with zlib). */
DVI_API bool dvi_vtk_compressed(void);

/* Writes DIR/bodies.pvd, DIR/contacts.pvd and DIR/shapes.pvd (and
 * DIR/soil.pvd when DIR/frames/soil_000000.vtp exists), ParaView
 * collections listing the frames 0 … frames−1 (files frames/bodies_NNNNNN.vtp, relative to DIR)
 * with timestep = times[i]. It is written atomically, so it can be rewritten
 * while a run goes on and a partly finished run opens in ParaView (`dvi run`
 * rewrites it whenever the frame count has grown by an eighth, at each
 * checkpoint and at the end: rewriting after every frame would cost time
 * quadratic in the number of frames). times must be
 * finite; frames = 0 writes empty collections. */
DVI_API dvi_status dvi_vtk_write_pvd(const char* dir, int frames, const double* times, char* msg, size_t msg_size);

/* ==== files =============================================================== */

/* Writes data to path atomically: to "path.tmp", fsync, then rename over
 * path (and fsync of the directory, best effort). On failure the temporary
 * file is removed and path is left as it was. */
DVI_API dvi_status dvi_write_file_atomic(const char* path, const void* data, size_t size, char* msg, size_t msg_size);

/* Creates a directory and its missing parents (like mkdir -p). Succeeds if
 * it already exists. */
DVI_API dvi_status dvi_make_dirs(const char* path, char* msg, size_t msg_size);

/* ==== JSON writer ========================================================= */

/* A streaming writer of one JSON document (for summary.json and the like),
 * pretty-printed with two-space indentation:
 *
 *   dvi_json_writer* w;
 *   dvi_json_writer_open_buffer(&w);
 *   dvi_json_begin_object(w);
 *     dvi_json_key_string(w, "scene", "pile.json");
 *     dvi_json_key(w, "steps"); dvi_json_int(w, 1000);
 *     dvi_json_key(w, "position"); dvi_json_begin_array_inline(w);
 *       dvi_json_number(w, 0.5); dvi_json_number(w, 0); dvi_json_number(w, 1.25);
 *     dvi_json_end_array(w);
 *   dvi_json_end_object(w);
 *   if (dvi_json_writer_finish(w, msg, sizeof msg) == 0) {
 *       size_t n; const char* text = dvi_json_writer_buffer(w, &n);
 *       dvi_write_file_atomic("summary.json", text, n, msg, sizeof msg);
 *   }
 *   dvi_json_writer_free(w);
 *
 * Strings are escaped (quote, backslash, control characters; invalid UTF-8
 * becomes U+FFFD). Numbers are written exactly, as the shortest of "%.15g",
 * "%.16g", "%.17g" that reads back to the same double; NaN and infinities
 * are written as null. Misuse (a value without a key inside an object, a key
 * inside an array, unbalanced ends, a second top-level value) makes the call
 * fail; errors are sticky: later calls do nothing and fail, and
 * dvi_json_writer_error / dvi_json_writer_finish report the first one. */
typedef struct dvi_json_writer dvi_json_writer;

/* Writes to f as it goes (f is not closed by the writer). */
DVI_API dvi_status dvi_json_writer_open_file(dvi_json_writer** out, FILE* f);
/* Writes to a growing, NUL-terminated memory buffer. */
DVI_API dvi_status dvi_json_writer_open_buffer(dvi_json_writer** out);
/* The buffer's text so far (NULL for a file writer); size may be NULL. The
 * pointer is valid until the next call on w. */
DVI_API const char* dvi_json_writer_buffer(const dvi_json_writer* w, size_t* size);
/* Checks that exactly one complete value was written, ends it with '\n' and
 * flushes a file writer. Non-zero (message in msg) on any error. */
DVI_API dvi_status dvi_json_writer_finish(dvi_json_writer* w, char* msg, size_t msg_size);
/* First error ("" if none). */
DVI_API const char* dvi_json_writer_error(const dvi_json_writer* w);
DVI_API void dvi_json_writer_free(dvi_json_writer* w);  /* NULL ok */

DVI_API dvi_status dvi_json_begin_object(dvi_json_writer* w);
DVI_API dvi_status dvi_json_end_object(dvi_json_writer* w);
/* Arrays with one element per line... */
DVI_API dvi_status dvi_json_begin_array(dvi_json_writer* w);
/* ...or on one line: [1, 2, 3] (containers nested inside are inline too). */
DVI_API dvi_status dvi_json_begin_array_inline(dvi_json_writer* w);
DVI_API dvi_status dvi_json_end_array(dvi_json_writer* w);
/* Key of the next value inside an object (escaped like strings). */
DVI_API dvi_status dvi_json_key(dvi_json_writer* w, const char* key);
DVI_API dvi_status dvi_json_string(dvi_json_writer* w, const char* s);   /* NULL writes null */
DVI_API dvi_status dvi_json_number(dvi_json_writer* w, double v);        /* non-finite: null */
DVI_API dvi_status dvi_json_int(dvi_json_writer* w, long long v);
DVI_API dvi_status dvi_json_bool(dvi_json_writer* w, bool v);
DVI_API dvi_status dvi_json_null(dvi_json_writer* w);
/* key + value in one call. */
DVI_API dvi_status dvi_json_key_string(dvi_json_writer* w, const char* key, const char* s);
DVI_API dvi_status dvi_json_key_number(dvi_json_writer* w, const char* key, double v);
DVI_API dvi_status dvi_json_key_int(dvi_json_writer* w, const char* key, long long v);
DVI_API dvi_status dvi_json_key_bool(dvi_json_writer* w, const char* key, bool v);
/* key + inline array of n numbers, e.g. a position [x, y, z]. */
DVI_API dvi_status dvi_json_key_numbers(dvi_json_writer* w, const char* key, const double* v, int n);

#ifdef __cplusplus
}
#endif
#endif /* DVI_OUTPUT_H */
