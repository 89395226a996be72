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

/* ---- FCLIB problem files (HDF5; docs/fclib.md) ----------------------------- */

/// The kind of FCLIB problem a file holds.
typedef enum dvi_fclib_kind {
    DVI_FCLIB_LOCAL = 1,  ///< /fclib_local: u = W r + q (+ V λ), the Delassus form
    DVI_FCLIB_GLOBAL = 2  ///< /fclib_global: M v = H r + G λ + f, u = Hᵀ v + w, Gᵀ v + b = 0
} dvi_fclib_kind;

/// Flag of dvi_fclib_read_ex: give global problems in the Delassus form
/// W = Hᵀ M⁻¹ H (M factorised by CHOLMOD) even when M is block-diagonal.
#define DVI_FCLIB_DELASSUS 1u

/// Internal: the file's own operator when the problem uses its symmetric part.
struct dvi_fclib_operator;

/// What dvi_fclib_read_ex found besides the problem. The arrays are owned:
/// release them with dvi_fclib_info_clear.
typedef struct dvi_fclib_info {
    dvi_fclib_kind kind;
    int32_t contacts;       ///< contacts: friction blocks 0 .. contacts−1, rows 3a (normal), 3a+1, 3a+2 (tangents)
    int32_t equalities;     ///< bilateral rows after the contacts (global: columns of G; local: rows of R)
    int32_t dofs;           ///< global: n, the size of M; local: 0
    int32_t mass_blocks;    ///< global in the factor form: diagonal blocks of M (≤ 6×6); else 0
    int32_t guesses;        ///< initial guesses in /guesses (the first one's r is gamma0)
    char title[128];        ///< info/title, non-printable bytes as '?', truncated; "" when absent
    double* u;              ///< [3·contacts] /solution/u, or NULL
    double* v;              ///< [dofs] /solution/v (global), or NULL
    double u_mismatch;      ///< ‖u − (W r + q)‖ / max of the two norms for the stored r, u; NaN without both
    double v_mismatch;      ///< global: ‖M v − H r − G l − f‖ / max(‖M v‖, ‖H r + G l + f‖); NaN without r, v (and l)
    bool triangular;        ///< the file stores A (W or M) as one triangle (every off-diagonal entry above the
                            ///< diagonal, or every one below); A is read as that triangle plus its transpose
    double asymmetry;       ///< ‖A − Aᵀ‖_F / (2‖A‖_F) for the file's A = W (local) or M (global), after the
                            ///< completion of a triangle; 0 if symmetric
    bool symmetrized;       ///< A failed the library's symmetry test (1e-9, as dvi_ccp_validate) and the problem
                            ///< uses its symmetric part (A + Aᵀ)/2
    struct dvi_fclib_operator* file_operator; ///< internal: the file's own W (local, symmetrized), for
                                              ///< dvi_fclib_evaluate; NULL otherwise
} dvi_fclib_info;

/// Reads an FCLIB file (HDF5, spacedim 3) as a CCP: the owning type of the
/// JSON reader, freed with dvi_ccp_file_free. Contact a of the file is
/// friction block a (rows 3a, 3a+1, 3a+2 = n, t1, t2; μ from vectors/mu),
/// r = q; equality rows (global G, local R/V) follow as bilateral blocks.
/// Local problems give W directly (its symmetric part when it is not
/// symmetric: see info->symmetrized). Global ones give the factor form D = [H G]
/// and M⁻¹ when M is block-diagonal with blocks of at most 6×6 (each group of
/// at most 6 consecutive degrees of freedom is one "body"), and otherwise
/// W = Bᵀ M⁻¹ B, B = [H G], with M factorised by CHOLMOD; r = Bᵀ M⁻¹ f + [w; b].
/// The stored /solution r (and l) becomes `solution`, /guesses/1 r `gamma0`.
/// Matrices in CSR, CSC or triplet form (triplet: i = row, p = column) are
/// read into CSC with rows sorted and duplicates summed; explicit zeros are
/// kept. Every dataset is checked (presence, type, shape, index ranges,
/// finiteness) and errors name it: "box.hdf5: /fclib_local/vectors/q: 68
/// values, expected 69 (3 per contact)". HDF5's own error printing is
/// switched off during the call and restored after. Returns DVI_OK,
/// DVI_ERR_IO (cannot open), DVI_ERR_PARSE (not HDF5, damaged or truncated
/// HDF5, no FCLIB problem in it), DVI_ERR_UNSUPPORTED (spacedim 2),
/// DVI_ERR_INVALID_ARG (a bad dataset, or a problem failing
/// dvi_ccp_validate), DVI_ERR_SINGULAR (M not positive definite),
/// DVI_ERR_NOMEM. Calls from several threads are safe when HDF5 is built
/// thread-safe (Debian's is; HDF5 then serialises them), not otherwise.
DVI_API dvi_status dvi_fclib_read(const char* path, dvi_ccp_file** out, char* msg, size_t msg_size);
/// Same with flags (0 or DVI_FCLIB_DELASSUS) and an optional info (may be
/// NULL; zeroed first, and on failure left with no arrays to release).
DVI_API dvi_status dvi_fclib_read_ex(const char* path, uint32_t flags, dvi_ccp_file** out, dvi_fclib_info* info,
                                     char* msg, size_t msg_size);
/// Frees the arrays of an info and zeroes it (NULL accepted).
DVI_API void dvi_fclib_info_clear(dvi_fclib_info* info);

/// The metrics of γ (the CCP residual and FCLIB's Coulomb residual, see
/// dvi_ccp_metrics) for the problem exactly as the file states it: with
/// u = W γ + q for the file's own W even when the problem handed to the
/// solvers uses its symmetric part (info->symmetrized, local problems).
/// Otherwise, or with info NULL, the same as dvi_ccp_evaluate(p, ...).
/// Global problems whose M was symmetrized are evaluated with the
/// symmetric part of M (info->asymmetry says how far that is).
DVI_API dvi_status dvi_fclib_evaluate(const dvi_ccp_problem* p, const dvi_fclib_info* info, const double* gamma,
                                      dvi_ccp_metrics* out);

/// Solves the problem of an FCLIB file as the file states it, with the
/// built-in solver `solver_name` and `settings` (NULL: the defaults); gamma
/// as in dvi_ccp_solve. Without info, or when the file's operator is
/// symmetric, this is one dvi_ccp_solve. When the problem holds the
/// symmetric part W_s of a nonsymmetric W (info->symmetrized) the solvers,
/// which need a symmetric operator, are applied to the splitting
///     γ_{k+1} = the solution of the CCP (W_s, q + (W − W_s) γ_k),
/// each solve warm-started from γ_k, until the CCP residual against the
/// file's W is at most settings.tolerance (CCP solvers), the Coulomb
/// residual against it (the solvers of Coulomb's law, nsgs and desaxce), or,
/// for Lemke (whose target is its pyramid LCP), the step ‖γ_{k+1} − γ_k‖ is
/// at most tolerance·‖γ_{k+1}‖. settings.max_iterations bounds the iterations
/// of all the solves together; a CCP or Coulomb solver gets a quarter of what is left
/// (at least 100) per solve and the splitting goes on after a solve that
/// ran out of it (Lemke: its own pivot budget per solve, at most 100
/// solves, and it stops when a solve does not converge). result (may be NULL): status, iterations (the total),
/// target_residual, metrics (dvi_fclib_evaluate on the returned γ), seconds
/// (the whole call); no history (history_length 0). Returns as
/// dvi_ccp_solve.
DVI_API dvi_status dvi_fclib_solve(const char* solver_name, const dvi_solver_settings* settings,
                                   const dvi_ccp_problem* p, const dvi_fclib_info* info, double* gamma,
                                   dvi_solve_result* result);

/// The Delassus matrix of the problem exactly as the file states it, for
/// handing the file's problem to another code: the file's own W when p
/// holds its symmetric part (info->symmetrized, local files), else p->W
/// (rows and order as in p). *out is a view, valid until
/// dvi_fclib_info_clear or dvi_ccp_file_free. Errors: p in the factor form
/// (a global file read without DVI_FCLIB_DELASSUS; DVI_ERR_UNSUPPORTED),
/// p or out NULL, or an info that does not belong to p
/// (DVI_ERR_INVALID_ARG).
DVI_API dvi_status dvi_fclib_file_W(const dvi_ccp_problem* p, const dvi_fclib_info* info, dvi_csc* out);

/// Writes p (validated first) as a local FCLIB problem (/fclib_local:
/// spacedim 3, W in CSC form, vectors q and mu, info) that other codes can
/// solve. Friction blocks become contacts as they are; a frictionless block
/// becomes a contact with μ = 0 whose tangent rows are empty (zero rows and
/// columns of W, q = 0). The factor form is multiplied out, W = Dᵀ M⁻¹ D,
/// and compliance is added to the diagonal of W. Bilateral and
/// friction_rolling blocks are refused (DVI_ERR_UNSUPPORTED, naming the
/// block): FCLIB's local problem has no free rows that its solvers honour,
/// and no rolling friction. solution ([p->rows], may be NULL) is written as
/// /solution/r with /solution/u = W r + q. An existing file is replaced; on
/// failure no file is left. A problem of friction blocks in the W form with
/// no compliance reads back with the same W, q and μ bit for bit. The file
/// does not depend on the time of writing. Errors: DVI_ERR_INVALID_ARG,
/// DVI_ERR_UNSUPPORTED, DVI_ERR_IO, DVI_ERR_NOMEM; msg as above.
DVI_API dvi_status dvi_fclib_write_local(const dvi_ccp_problem* p, const double* solution, const char* path,
                                         char* msg, size_t msg_size);

#ifdef __cplusplus
}
#endif
#endif /* DVI_IO_H */
