/* dvicontact — FCLIB problem files (HDF5): reading local and global
 * problems as a CCP, writing a CCP as a local problem (docs/fclib.md).
 * What the files of that job share (fclib_*.c, one job each: fclib_hdf5.c
 * the checked reading of datasets, fclib_matrix.c the sparse matrices and
 * their symmetry, fclib_convert.c the conversions to and from the CCP,
 * fclib_read.c the reader, fclib_write.c the writer). Internal to the library.
 *
 * WHY libhdf5 AND NOT libfclib. Debian's libfclib-dev 3.1.0 reads and writes
 * the same layout, but it is unusable inside a library that must never end
 * the process or print: every failed HDF5 call (a missing dataset, a damaged
 * file) goes through its IO()/ASSERT() macros, which print to stderr and call
 * exit(1); it sizes its buffers from the m / n / nz / nzmax header datasets and
 * then reads whole datasets into them, so a dataset longer than its header
 * says overflows the heap; and it cannot say which dataset is at fault. Its
 * writer opens an existing file read-write and adds to it instead of
 * replacing it. The layout is small, so it is read here with the plain HDF5
 * C API, checking every dataset (tests/test_fclib.c still cross-checks files
 * with libfclib when it is installed).
 *
 * READING. Every dataset is opened by its full path and checked: present,
 * of the expected class (integer / floating point), one-dimensional (n, n×1,
 * 1×n or a scalar for length 1), of the expected length, indices in range,
 * values finite. Integers are read as 64-bit and range-checked (HDF5 would
 * otherwise clamp out-of-range values silently). Matrices (CSR nz = −2, CSC
 * nz = −1, triplet nz ≥ 0 with i = row and p = column, which is what the
 * files and libfclib do, whatever fclib.h's comment says) become CSC with
 * sorted rows and summed duplicates by two counting passes (O(nnz)). HDF5's
 * error printing is switched off for the duration of a call (H5Eset_auto2,
 * restored after) and the innermost message of its error stack is appended
 * to ours.
 *
 * GLOBAL → CCP. With B = [H G] (contacts, then equalities): the CCP operator
 * is Bᵀ M⁻¹ B and its right-hand side Bᵀ M⁻¹ f + [w; b]. If M is
 * block-diagonal with blocks of at most 6×6 (found from the profile of its
 * nonzero pattern in O(nnz)), consecutive blocks are packed greedily into
 * groups of at most 6 degrees of freedom and each group is one "body" of the
 * factor form: D = B with the rows of group g at 6g.., M⁻¹ inverted block by
 * block (Cholesky). Otherwise CHOLMOD factorises M = Pᵀ L Lᵀ P (simplicial,
 * AMD: deterministic, no threaded BLAS), Y = L⁻¹ P B and W = Yᵀ Y.
 *
 * NONSYMMETRIC OPERATORS. The library's CCP needs a symmetric operator
 * (dvi_ccp_validate tests it to 1e-9; the solvers minimise a quadratic).
 * Some FCLIB files are not symmetric: Siconos's Newton–Euler problems
 * (OneObject, Capsules) have W asymmetric by ~1e-4 in norm, and LMGC90's
 * CubeH8 stores a few entries of M on one side only (~1e-7). When the
 * file's W (local) or M (global) fails the library's test, the problem uses
 * its symmetric part; info->asymmetry says by how much. For local files the
 * file's own W is kept (info->file_operator): dvi_fclib_evaluate measures
 * residuals against it (ccp_evaluate_with), and dvi_fclib_solve solves
 * the file's problem by the splitting γ_{k+1} = CCP(W_s, q + (W − W_s) γ_k),
 * warm-started, which converges in a few outer steps when the asymmetry is
 * that small. The splitting is the solver layer's (ccp_solve_split,
 * src/ccp/ccp_split.c); the reader only hands it the file's W.
 *
 * THE OWNING OBJECT. The result must be freed by dvi_ccp_file_free, which
 * belongs to the JSON reader: it casts the dvi_ccp_file back to its private
 * owning struct (whose first member is the dvi_ccp_file), frees that
 * struct's array pointers and then the object. Everything here is therefore
 * packed into one allocation that starts with a zeroed header of
 * OWNER_HEADER bytes (the dvi_ccp_file at its start): the JSON reader's
 * pointer members fall in the zeroed part (free(NULL)), and its final free
 * releases the whole block. The header is far larger than that struct.
 *
 * WRITING. The problem is validated, W formed (factor form: Dᵀ M⁻¹ D by a
 * sparse product), frictionless blocks padded to 3-row contacts, and the
 * file written with object time stamps off, so equal problems give equal
 * files. An existing file is replaced; a failed write removes the file.
 */
#ifndef DVI_FCLIB_INTERNAL_H
#define DVI_FCLIB_INTERNAL_H

#include "dvi/io.h"
#include "io_msg.h"

#include <hdf5.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define OWNER_HEADER 4096 /* zeroed bytes at the start of the owning block (see above) */
#define PATH_MAX_LEN 128  /* dataset paths built here are short */

typedef struct h5quiet {
    H5E_auto2_t func;
    void* data;
    bool saved;
} h5quiet;

typedef enum rd_kind { RD_INT, RD_REAL } rd_kind;

/* An owned CSC matrix: rows sorted within each column, no duplicates. */
typedef struct csc {
    int32_t rows, cols;
    int32_t* p; /* [cols + 1] */
    int32_t* i; /* [p[cols]] */
    double* x;  /* [p[cols]] */
} csc;

/* The file's own W, kept when the problem uses its symmetric part. */
struct dvi_fclib_operator {
    csc W;
};

/* The problem being built from a file, before it is packed (fclib_pack). */
typedef struct built {
    int32_t rows, blocks, contacts, equalities;
    dvi_ccp_block* blk;
    double* r;
    csc op;            /* W (rows × rows), or D (6·bodies × rows) */
    bool factor;       /* op is D */
    int32_t bodies;
    double* inv_mass;  /* [36·bodies] */
    double* gamma0;    /* [rows] or NULL */
    double* solution;  /* [rows] or NULL */
} built;

/* ---- fclib_hdf5.c (reading HDF5 datasets) ---- */

/* Switches off HDF5's automatic error printing, remembering the handler. */
void fclib_quiet_begin(h5quiet* q);

void fclib_quiet_end(const h5quiet* q);

/* " (HDF5: <innermost message of the error stack>)" or "" — call right
 * after the failing HDF5 call. */
void fclib_hdf5_detail(char out[192]);

/* H5Lexists fails on a missing intermediate group: check every prefix. */
bool fclib_link_exists(hid_t file, const char* path);

dvi_status fclib_dataset_length(const io_msg* c, hid_t file, const char* path, int32_t* len);

/* Reads the one-dimensional dataset `path` into a malloc'd array of int32_t
 * (RD_INT) or double (RD_REAL) of *count elements, with
 * len_min ≤ *count ≤ len_max (len_max < 0: no upper bound). `expect`
 * describes the expected length for messages (e.g. "69 (3 per contact)"). */
dvi_status fclib_read_array(const io_msg* c, hid_t file, const char* path, rd_kind kind, int64_t len_min,
                            int64_t len_max, const char* expect, void** out, int64_t* count);
/* The same reading only the first `take` values (take < 0: all) of a
 * dataset of len_min ≤ extent ≤ len_max: a matrix's i and x may be longer
 * than its nnz entries (nzmax), and only those are allocated. Before
 * allocating, both read the dataset's extent from its header and check that
 * the file stores the bytes of the values read (a dataspace of 2^31 values
 * that were never written is refused at once). */
dvi_status fclib_read_array_head(const io_msg* c, hid_t file, const char* path, rd_kind kind, int64_t len_min,
                                 int64_t len_max, int64_t take, const char* expect, void** out, int64_t* count);

dvi_status fclib_read_scalar_int(const io_msg* c, hid_t file, const char* path, int32_t* v);

/* Reads a vector of exactly `len` reals. */
dvi_status fclib_read_reals(const io_msg* c, hid_t file, const char* path, int32_t len, const char* per,
                            double** out);

/* An optional string dataset (fixed or variable length) into out[size],
 * non-printable bytes as '?'; "" when absent or unreadable. */
void fclib_read_title(hid_t file, const char* path, char* out, size_t size);

/* ---- fclib_matrix.c (sparse matrices) ---- */

void fclib_csc_free(csc* A);

/* Builds the canonical CSC of `rows` × `cols` from nnz entries (ri[k], ci[k],
 * x[k]), indices already checked: counting sort by row, then by column over
 * the rows in order (so rows increase within a column and equal entries keep
 * their order), then duplicates summed in that order. */
dvi_status fclib_csc_build(int32_t rows, int32_t cols, int64_t nnz, const int32_t* ri, const int32_t* ci,
                           const double* x, csc* out);

/* Entries gathered one at a time for fclib_csc_build: rows ri, columns ci,
 * values x, n of them. */
typedef struct fclib_triplets {
    int32_t* ri;
    int32_t* ci;
    double* x;
    int64_t n;
} fclib_triplets;

/* Room for cap entries (zeroed), n = 0; false, nothing held, when out of
 * memory. */
bool fclib_triplets_init(fclib_triplets* t, int64_t cap);
void fclib_triplets_free(fclib_triplets* t);
static inline void fclib_triplets_add(fclib_triplets* t, int32_t i, int32_t j, double x)
{
    t->ri[t->n] = i;
    t->ci[t->n] = j;
    t->x[t->n++] = x;
}
/* fclib_csc_build of the entries held. */
static inline dvi_status fclib_triplets_build(const fclib_triplets* t, int32_t rows, int32_t cols, csc* out)
{
    return fclib_csc_build(rows, cols, t->n, t->ri, t->ci, t->x, out);
}

/* Reads the matrix group `g` ("/fclib_local/W") into canonical CSC.
 * rows / cols: required sizes, or −1 (any, ≥ 0); rows_from / cols_from name
 * where a required size comes from, for the message (or NULL). The header's
 * sizes are checked before anything of their size is allocated. */
dvi_status fclib_read_matrix(const io_msg* c, hid_t file, const char* g, int32_t rows, const char* rows_from,
                             int32_t cols, const char* cols_from, csc* out);

/* A borrowed view of A, the CCP layer's matrix type. */
dvi_csc fclib_csc_view(const csc* A);

/* y = A x (A rows × cols). */
void fclib_csc_mul(const csc* A, const double* x, double* y);

/* y = Aᵀ x + add (add may be NULL). */
void fclib_csc_tmul(const csc* A, const double* x, const double* add, double* y);

/* A symmetric matrix stored as one triangle: every off-diagonal entry in
 * the strict upper triangle, or every one in the strict lower, and at least
 * one of them. LMGC90's dumps store M so (CubeH8: 3,006 off-diagonal
 * entries, all above the diagonal). Such an A becomes A + Aᵀ − diag(A), in
 * place; *completed tells. Reading it as it stands would make its symmetric
 * part (A + Aᵀ)/2 the operator, halving every off-diagonal entry. */
dvi_status fclib_complete_triangle(csc* A, bool* completed);

dvi_status fclib_symmetrize(csc* A, double* asymmetry, bool* changed, csc* original);

/* Concatenates the columns of A and B (same rows); B may be empty (cols 0). */
dvi_status fclib_csc_hcat(const csc* A, const csc* B, csc* out);

/* ---- fclib_convert.c (the conversions to and from the CCP) ---- */

void fclib_built_free(built* b);

/* Packs b into one owning block (see THE OWNING OBJECT); frees b's arrays. */
dvi_ccp_file* fclib_pack(built* b);

/* Blocks (contacts friction blocks, then bilateral rows) and μ. */
dvi_status fclib_make_blocks(const io_msg* c, built* b, const double* mu, const char* mu_path);

/* Diagonal blocks of M from the profile of its nonzeros (explicit zeros
 * ignored): a block ends after index k when no nonzero of columns 0..k lies
 * below row k and no nonzero of columns k+1.. lies above row k+1 (both
 * tested, so a pattern that is symmetric only up to rounding still splits
 * correctly). O(n + nnz). starts[0..count] (starts[count] = n); returns the
 * largest block size, or −1 when out of memory. */
int32_t fclib_find_blocks(const csc* M, int32_t* starts, int32_t* count);

/* Factor form from a block-diagonal M (blocks ≤ 6): groups, M⁻¹ blocks, D,
 * and r = Bᵀ M⁻¹ f + wb. */
dvi_status fclib_factor_form(const io_msg* c, const csc* M, const int32_t* starts, int32_t nblk, const csc* B,
                             const double* f, const double* wb, built* b, int32_t* mass_blocks);

dvi_status fclib_delassus_cholmod(const io_msg* c, const csc* M, const csc* B, const double* f, const double* wb,
                                  built* b);

/* y = N x for the problem being built (either form; no compliance). */
dvi_status fclib_built_apply(const built* b, const double* x, double* y);

/* W = Dᵀ M⁻¹ D (+ compliance on the diagonal) of a factor-form problem, in
 * canonical CSC: E = M⁻¹ D body by body, then W(:, j) = Σ_k E(k, j) D(k, :)
 * over the rows of D (a row-wise copy of D), accumulated in a dense column
 * with a marker; each column's rows are sorted. */
dvi_status fclib_factor_to_w(const dvi_ccp_problem* p, csc* W);

#endif /* DVI_FCLIB_INTERNAL_H */
