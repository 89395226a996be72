/* dvicontact — reading geometry files.
 *
 * dvi_obj_read loads the vertices and faces of a Wavefront OBJ file into a
 * plain triangle mesh (dvi_mesh_data) that can be handed to a mesh shape
 * (dvi_shape_def.vertices / .triangles, which are copied by the world). The
 * reader is strict: anything it does not understand is reported with the file
 * name and line number instead of being skipped silently.
 */
#ifndef DVI_IO_H
#define DVI_IO_H

#include "base.h"

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

#ifdef __cplusplus
}
#endif
#endif /* DVI_IO_H */
