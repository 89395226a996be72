/* dvicontact — reading geometry files and CCP problem files.
 *
 * dvi_obj_read loads the vertices and faces of a Wavefront OBJ file into a
 * plain triangle mesh (dvi_mesh_data) that can be handed to a mesh shape
 * (dvi_shape_def.vertices / .triangles, which are copied by the world). The
 * reader is strict: anything it does not understand is reported with the file
 * name and line number instead of being skipped silently.
 *
 * dvi_ccp_problem_read_json / _write_json exchange a stand-alone CCP
 * (ccp.h) as a JSON file, format "dvicontact-ccp" (docs/ccp-file.md).
 */
#ifndef DVI_IO_H
#define DVI_IO_H

#include "base.h"
#include "ccp.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// A triangle mesh owned by the caller (free it with dvi_mesh_data_free).
typedef struct dvi_mesh_data {
    int32_t vertex_count;   ///< number of vertices
    int32_t triangle_count; ///< number of triangles
    double* vertices;       ///< [3 · vertex_count] x, y, z of each vertex, in the file's units
    int32_t* triangles;     ///< [3 · triangle_count] zero-based vertex indices, in the file's winding
                            ///< (counter-clockwise seen from outside for a mesh shape)
} dvi_mesh_data;

/// Reads a Wavefront OBJ file. Understood: `v x y z` (an optional w or an
/// r g b colour after the coordinates is ignored), `f` with 3 or more vertices
/// written `v`, `v/vt`, `v//vn` or `v/vt/vn` (polygons are fan-triangulated
/// from their first vertex: (0, k, k+1)), negative indices (relative: −1 is
/// the last vertex defined so far), `#` comments, blank lines, CRLF line
/// ends. Ignored: `vt`, `vn`, `vp`, `o`, `g`, `s`, `usemtl`, `mtllib`, `l`,
/// `p`. Positive face indices must refer to vertices already defined above the
/// face. Anything else is an error: an unknown keyword, a non-numeric or
/// non-finite (NaN, Inf, overflowing) number, a face with fewer than 3
/// vertices, an index of 0 or out of range, a line longer than 1 MiB, control
/// characters (binary data), counts that do not fit in int32_t / 3, or a file
/// with no face.
///
/// `out` receives the mesh (zeroed on failure; nothing to free then). `msg`,
/// if not NULL, receives a NUL-terminated message of at most msg_size bytes:
/// "" on success, else e.g. "mesh.obj:12: face index 9 out of range (8 vertices)".
/// Returns DVI_OK, DVI_ERR_IO (file cannot be opened or read), DVI_ERR_PARSE
/// (malformed content), DVI_ERR_NOMEM or DVI_ERR_INVALID_ARG (path or out
/// NULL). Allocates with malloc. No shared state: calls from several threads
/// are safe as long as no thread changes the C locale meanwhile (numbers are
/// read with '.' as the decimal point whatever the locale).
DVI_API dvi_status dvi_obj_read(const char* path, dvi_mesh_data* out, char* msg, size_t msg_size);

/// Frees the arrays of a mesh read by dvi_obj_read and zeroes it. NULL and
/// already-freed (zeroed) meshes are accepted.
DVI_API void dvi_mesh_data_free(dvi_mesh_data* m);

/* ---- CCP problem files (docs/ccp-file.md) -------------------------------- */

/// A CCP read from a file, with the optional vectors of the file. The object
/// owns every array the problem points to; free it with dvi_ccp_file_free.
typedef struct dvi_ccp_file {
    dvi_ccp_problem problem;  ///< a valid problem (dvi_ccp_validate passed)
    const double* gamma0;     ///< [problem.rows] "gamma0", initial guess, or NULL
    const double* solution;   ///< [problem.rows] "solution", reference γ, or NULL
} dvi_ccp_file;

/// Reads a CCP file: JSON with "format": "dvicontact-ccp", "version": 1, the
/// blocks, r, optional compliance, and either W (sparse CSC or dense) or the
/// factors D (CSC) and inv_mass (one 6×6 block per body); optional gamma0
/// and solution. The reader is strict: unknown fields, wrong lengths,
/// non-integral indices and non-finite numbers are errors, and the problem
/// must pass dvi_ccp_validate. `out` receives the problem (NULL on failure).
/// `msg` (may be NULL) receives "" or a message naming the place:
/// "stack.json: blocks[4].mu: must be finite and >= 0 (got -0.5)",
/// "stack.json: r: expected 12 numbers, got 11",
/// "stack.json: line 7, column 15: malformed JSON". Returns DVI_OK, DVI_ERR_IO (cannot
/// read), DVI_ERR_PARSE (not JSON, or not this format), DVI_ERR_INVALID_ARG
/// (a JSON value that is not a valid problem, NULL arguments) or
/// DVI_ERR_NOMEM. Numbers are read with '.' whatever the C locale.
DVI_API dvi_status dvi_ccp_problem_read_json(const char* path, dvi_ccp_file** out, char* msg, size_t msg_size);
/// Same from memory (text need not be NUL-terminated); messages have no
/// file name prefix.
DVI_API dvi_status dvi_ccp_problem_parse_json(const char* text, size_t length, dvi_ccp_file** out, char* msg,
                                              size_t msg_size);

/// Writes p (validated first: an invalid problem is refused) and the
/// optional vectors gamma0 and solution ([p->rows] each, may be NULL) as a
/// CCP file. Numbers are written with up to 17 significant digits (the
/// fewest that read back exactly), so reading the file back gives the same
/// bits. Errors: DVI_ERR_INVALID_ARG (invalid
/// problem, non-finite vector entry, NULL arguments), DVI_ERR_IO,
/// DVI_ERR_NOMEM; msg as above.
DVI_API dvi_status dvi_ccp_problem_write_json(const dvi_ccp_problem* p, const double* gamma0,
                                              const double* solution, const char* path, char* msg, size_t msg_size);
/// Same into memory: *text receives a NUL-terminated malloc'd string (free
/// with free()) of *length bytes.
DVI_API dvi_status dvi_ccp_problem_format_json(const dvi_ccp_problem* p, const double* gamma0,
                                               const double* solution, char** text, size_t* length, char* msg,
                                               size_t msg_size);

/// Frees a problem read by dvi_ccp_problem_read_json / _parse_json (NULL accepted).
DVI_API void dvi_ccp_file_free(dvi_ccp_file* f);

#ifdef __cplusplus
}
#endif
#endif /* DVI_IO_H */
