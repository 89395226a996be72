/* dvicontact — FCLIB problem files (HDF5): reading local and global
 * problems as a CCP, writing a CCP as a local problem (docs/fclib.md).
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
 * residuals against it (dvi_ccp_evaluate_with), and dvi_fclib_solve solves
 * the file's problem by the splitting γ_{k+1} = CCP(W_s, q + (W − W_s) γ_k),
 * warm-started, which converges in a few outer steps when the asymmetry is
 * that small. The splitting is the solver layer's (dvi_ccp_solve_split,
 * src/ccp/ccp_split.c); this file only hands it the file's W.
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
#include "dvi/io.h"
#include "io_msg.h"
#include "error.h"

#include "ccp_split.h"
#include "ccp_work.h"
#include "regular_file.h"

#include <cholmod.h>
#include <hdf5.h>

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OWNER_HEADER 4096 /* zeroed bytes at the start of the owning block (see above) */
#define PATH_MAX_LEN 128  /* dataset paths built here are short */

/* ---- messages ------------------------------------------------------------------ */

/* (dvi_io_fail, io_msg.h: "FILE: text" into the caller's buffer) */

/* ---- HDF5 error handling -------------------------------------------------------- */

typedef struct h5quiet {
    H5E_auto2_t func;
    void* data;
    bool saved;
} h5quiet;

/* Switches off HDF5's automatic error printing, remembering the handler. */
static void quiet_begin(h5quiet* q)
{
    q->func = NULL;
    q->data = NULL;
    q->saved = H5Eget_auto2(H5E_DEFAULT, &q->func, &q->data) >= 0;
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
}

static void quiet_end(const h5quiet* q)
{
    if (q->saved) H5Eset_auto2(H5E_DEFAULT, q->func, q->data);
}

static herr_t innermost_cb(unsigned n, const H5E_error2_t* e, void* data)
{
    char* out = data;
    if (n == 0 && e && e->desc) snprintf(out, 160, "%s", e->desc);
    return 0;
}

/* " (HDF5: <innermost message of the error stack>)" or "" — call right
 * after the failing HDF5 call. */
static void hdf5_detail(char out[192])
{
    char d[160] = "";
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, innermost_cb, d);
    if (d[0]) snprintf(out, 192, " (HDF5: %s)", d);
    else out[0] = '\0';
}

/* H5Lexists fails on a missing intermediate group: check every prefix. */
static bool link_exists(hid_t file, const char* path)
{
    char buf[PATH_MAX_LEN];
    size_t len = strlen(path);
    if (len == 0 || len >= sizeof buf) return false;
    memcpy(buf, path, len + 1);
    for (size_t k = 1; k <= len; k++) {
        if (k < len && buf[k] != '/') continue;
        char save = buf[k];
        buf[k] = '\0';
        htri_t e = H5Lexists(file, buf, H5P_DEFAULT);
        buf[k] = save;
        if (e <= 0) return false;
    }
    return true;
}

/* ---- reading datasets ------------------------------------------------------------- */

typedef enum rd_kind { RD_INT, RD_REAL } rd_kind;

/* The number of values of dataset `ds` (`path` for messages): 1 for a
 * scalar, the product of the extents for a simple dataspace of at most one
 * extent above 1; an error for anything else or more than INT32_MAX values. */
static dvi_status dataset_count(const dvi_io_msg* c, hid_t ds, const char* path, int64_t* count)
{
    char detail[192];
    dvi_status st = DVI_OK;
    hid_t sp = H5Dget_space(ds);
    int64_t n = 0;
    if (sp < 0) {
        hdf5_detail(detail);
        return dvi_io_fail(c, DVI_ERR_PARSE, "%s: cannot read its shape%s", path, detail);
    }
    H5S_class_t sc = H5Sget_simple_extent_type(sp);
    if (sc == H5S_SCALAR) {
        n = 1;
    } else if (sc == H5S_NULL) {
        n = 0;
    } else if (sc == H5S_SIMPLE) {
        int rank = H5Sget_simple_extent_ndims(sp);
        hsize_t dims[H5S_MAX_RANK];
        if (rank < 0 || rank > H5S_MAX_RANK || H5Sget_simple_extent_dims(sp, dims, NULL) < 0) {
            st = dvi_io_fail(c, DVI_ERR_PARSE, "%s: cannot read its shape", path);
            goto done;
        }
        int long_dims = 0;
        n = 1;
        for (int d = 0; d < rank; d++) {
            if (dims[d] != 1) long_dims++;
            if (dims[d] > (hsize_t)INT32_MAX) {
                n = -1;
                break;
            }
            n *= (int64_t)dims[d];
            if (n > INT32_MAX) {
                n = -1;
                break;
            }
        }
        if (long_dims > 1) {
            st = dvi_io_fail(c, DVI_ERR_INVALID_ARG, "%s: expected a one-dimensional array, got a %d-dimensional one", path,
                      rank);
            goto done;
        }
        if (n < 0) {
            st = dvi_io_fail(c, DVI_ERR_INVALID_ARG, "%s: too many values (more than %d)", path, INT32_MAX);
            goto done;
        }
    } else {
        st = dvi_io_fail(c, DVI_ERR_PARSE, "%s: cannot read its shape", path);
    }
done:
    H5Sclose(sp);
    *count = n;
    return st;
}

/* The number of values of the one-dimensional dataset `path`, read from its
 * header without reading the values: the extent a matrix's header sizes are
 * checked against before anything of their size is allocated. */
/* Opens dataset `path` into *ds, or says why not (missing, or not a
 * readable dataset with HDF5's reason). */
static dvi_status open_dataset(const dvi_io_msg* c, hid_t file, const char* path, hid_t* ds)
{
    char detail[192];
    *ds = H5Dopen2(file, path, H5P_DEFAULT);
    if (*ds >= 0) return DVI_OK;
    hdf5_detail(detail);
    if (!link_exists(file, path)) return dvi_io_fail(c, DVI_ERR_INVALID_ARG, "%s: missing", path);
    return dvi_io_fail(c, DVI_ERR_INVALID_ARG, "%s: not a readable dataset%s", path, detail);
}

static dvi_status dataset_length(const dvi_io_msg* c, hid_t file, const char* path, int32_t* len)
{
    hid_t ds;
    dvi_status st0 = open_dataset(c, file, path, &ds);
    if (st0 != DVI_OK) return st0;
    int64_t n = 0;
    dvi_status st = dataset_count(c, ds, path, &n);
    H5Dclose(ds);
    *len = (int32_t)n;
    return st;
}

/* Reads the one-dimensional dataset `path` into a malloc'd array of int32_t
 * (RD_INT) or double (RD_REAL) of *count elements, with
 * len_min ≤ *count ≤ len_max (len_max < 0: no upper bound). `expect`
 * describes the expected length for messages (e.g. "69 (3 per contact)"). */
static dvi_status read_array(const dvi_io_msg* c, hid_t file, const char* path, rd_kind kind, int64_t len_min,
                             int64_t len_max, const char* expect, void** out, int64_t* count)
{
    *out = NULL;
    if (count) *count = 0;
    char detail[192];
    hid_t ds;
    dvi_status st = open_dataset(c, file, path, &ds);
    if (st != DVI_OK) return st;
    hid_t ty = H5Dget_type(ds);
    void* buf = NULL;
    int64_t n = 0;
    if (ty < 0) {
        hdf5_detail(detail);
        st = dvi_io_fail(c, DVI_ERR_PARSE, "%s: cannot read its type%s", path, detail);
        goto done;
    }
    if ((st = dataset_count(c, ds, path, &n)) != DVI_OK) goto done;
    H5T_class_t tc = H5Tget_class(ty);
    if (kind == RD_INT && tc != H5T_INTEGER) {
        st = dvi_io_fail(c, DVI_ERR_INVALID_ARG, "%s: expected integers, the dataset holds %s", path,
                  tc == H5T_FLOAT ? "floating-point numbers" : tc == H5T_STRING ? "a string" : "another type");
        goto done;
    }
    if (kind == RD_REAL && tc != H5T_FLOAT) {
        st = dvi_io_fail(c, DVI_ERR_INVALID_ARG, "%s: expected floating-point numbers, the dataset holds %s", path,
                  tc == H5T_INTEGER ? "integers" : tc == H5T_STRING ? "a string" : "another type");
        goto done;
    }
    if (n < len_min || (len_max >= 0 && n > len_max)) {
        st = dvi_io_fail(c, DVI_ERR_INVALID_ARG, "%s: %lld value%s, expected %s", path, (long long)n, n == 1 ? "" : "s",
                  expect);
        goto done;
    }
    size_t elem = kind == RD_INT ? sizeof(int64_t) : sizeof(double);
    buf = malloc(((size_t)n + 1) * elem);
    if (!buf) {
        st = dvi_io_fail(c, DVI_ERR_NOMEM, "%s: out of memory (%lld values)", path, (long long)n);
        goto done;
    }
    if (n > 0 && H5Dread(ds, kind == RD_INT ? H5T_NATIVE_INT64 : H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT,
                         buf) < 0) {
        hdf5_detail(detail);
        st = dvi_io_fail(c, DVI_ERR_PARSE, "%s: cannot read the values (damaged or truncated file?)%s", path, detail);
        goto done;
    }
    if (kind == RD_INT) {
        const int64_t* v64 = buf;
        int32_t* v32 = buf; /* narrowed in place, front to back */
        for (int64_t k = 0; k < n; k++) {
            int64_t v = v64[k];
            if (v < INT32_MIN || v > INT32_MAX) {
                st = dvi_io_fail(c, DVI_ERR_INVALID_ARG, "%s[%lld]: %lld does not fit in 32 bits", path, (long long)k,
                          (long long)v);
                goto done;
            }
            v32[k] = (int32_t)v;
        }
    } else {
        const double* v = buf;
        for (int64_t k = 0; k < n; k++)
            if (!isfinite(v[k])) {
                st = dvi_io_fail(c, DVI_ERR_INVALID_ARG, "%s[%lld]: not finite (%g)", path, (long long)k, v[k]);
                goto done;
            }
    }
done:
    if (ty >= 0) H5Tclose(ty);
    H5Dclose(ds);
    if (st != DVI_OK) {
        free(buf);
        return st;
    }
    *out = buf;
    if (count) *count = n;
    return DVI_OK;
}

static dvi_status read_scalar_int(const dvi_io_msg* c, hid_t file, const char* path, int32_t* v)
{
    void* a = NULL;
    dvi_status st = read_array(c, file, path, RD_INT, 1, 1, "1 (a scalar)", &a, NULL);
    if (st == DVI_OK) *v = *(int32_t*)a;
    free(a);
    return st;
}

/* Reads a vector of exactly `len` reals. */
static dvi_status read_reals(const dvi_io_msg* c, hid_t file, const char* path, int32_t len, const char* per,
                             double** out)
{
    char expect[96];
    snprintf(expect, sizeof expect, "%d%s", len, per ? per : "");
    void* a = NULL;
    dvi_status st = read_array(c, file, path, RD_REAL, len, len, expect, &a, NULL);
    *out = a;
    return st;
}

/* An optional string dataset (fixed or variable length) into out[size],
 * non-printable bytes as '?'; "" when absent or unreadable. */
static void read_title(hid_t file, const char* path, char* out, size_t size)
{
    out[0] = '\0';
    if (!link_exists(file, path)) return;
    hid_t ds = H5Dopen2(file, path, H5P_DEFAULT);
    if (ds < 0) return;
    hid_t ty = H5Dget_type(ds), sp = H5Dget_space(ds), mt = -1;
    char* s = NULL;
    char* vs = NULL;
    if (ty < 0 || sp < 0 || H5Tget_class(ty) != H5T_STRING || H5Sget_simple_extent_npoints(sp) != 1) goto done;
    mt = H5Tcopy(H5T_C_S1);
    if (mt < 0) goto done;
    if (H5Tis_variable_str(ty) > 0) {
        if (H5Tset_size(mt, H5T_VARIABLE) < 0 || H5Dread(ds, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, &vs) < 0) goto done;
        s = vs;
    } else {
        size_t len = H5Tget_size(ty);
        if (len == 0 || len > (1u << 20)) goto done;
        s = calloc(len + 1, 1);
        if (!s || H5Tset_size(mt, len + 1) < 0 || H5Dread(ds, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, s) < 0) goto done;
    }
    if (s) {
        size_t k = 0;
        for (; s[k] && k + 1 < size; k++) out[k] = (s[k] >= 32 && s[k] < 127) ? s[k] : '?';
        out[k] = '\0';
    }
done:
    if (vs) H5free_memory(vs);
    else free(s);
    if (mt >= 0) H5Tclose(mt);
    if (sp >= 0) H5Sclose(sp);
    if (ty >= 0) H5Tclose(ty);
    H5Dclose(ds);
}

/* ---- sparse matrices --------------------------------------------------------------- */

/* An owned CSC matrix: rows sorted within each column, no duplicates. */
typedef struct csc {
    int32_t rows, cols;
    int32_t* p; /* [cols + 1] */
    int32_t* i; /* [p[cols]] */
    double* x;  /* [p[cols]] */
} csc;

static void csc_free(csc* A)
{
    free(A->p);
    free(A->i);
    free(A->x);
    memset(A, 0, sizeof *A);
}

/* Builds the canonical CSC of `rows` × `cols` from nnz entries (ri[k], ci[k],
 * x[k]), indices already checked: counting sort by row, then by column over
 * the rows in order (so rows increase within a column and equal entries keep
 * their order), then duplicates summed in that order. */
static dvi_status csc_build(int32_t rows, int32_t cols, int64_t nnz, const int32_t* ri, const int32_t* ci,
                            const double* x, csc* out)
{
    memset(out, 0, sizeof *out);
    int32_t* rp = calloc((size_t)rows + 1, sizeof(int32_t));
    int32_t* rc = malloc(((size_t)nnz + 1) * sizeof(int32_t));
    double* rx = malloc(((size_t)nnz + 1) * sizeof(double));
    int32_t* next = malloc(((size_t)(rows > cols ? rows : cols) + 1) * sizeof(int32_t));
    out->p = calloc((size_t)cols + 1, sizeof(int32_t));
    out->i = malloc(((size_t)nnz + 1) * sizeof(int32_t));
    out->x = malloc(((size_t)nnz + 1) * sizeof(double));
    if (!rp || !rc || !rx || !next || !out->p || !out->i || !out->x) {
        free(rp);
        free(rc);
        free(rx);
        free(next);
        csc_free(out);
        return DVI_ERR_NOMEM;
    }
    for (int64_t k = 0; k < nnz; k++) rp[ri[k] + 1]++;
    for (int32_t r = 0; r < rows; r++) rp[r + 1] += rp[r];
    memcpy(next, rp, (size_t)rows * sizeof(int32_t));
    for (int64_t k = 0; k < nnz; k++) {
        int32_t e = next[ri[k]]++;
        rc[e] = ci[k];
        rx[e] = x[k];
    }
    int32_t* cp = out->p;
    for (int64_t e = 0; e < nnz; e++) cp[rc[e] + 1]++;
    for (int32_t j = 0; j < cols; j++) cp[j + 1] += cp[j];
    memcpy(next, cp, (size_t)cols * sizeof(int32_t));
    for (int32_t r = 0; r < rows; r++)
        for (int32_t e = rp[r]; e < rp[r + 1]; e++) {
            int32_t d = next[rc[e]]++;
            out->i[d] = r;
            out->x[d] = rx[e];
        }
    /* sum duplicates (adjacent within a column) */
    int32_t w = 0;
    for (int32_t j = 0; j < cols; j++) {
        int32_t start = cp[j], end = cp[j + 1];
        cp[j] = w;
        for (int32_t e = start; e < end; e++) {
            if (w > cp[j] && out->i[w - 1] == out->i[e]) {
                out->x[w - 1] += out->x[e];
            } else {
                out->i[w] = out->i[e];
                out->x[w] = out->x[e];
                w++;
            }
        }
    }
    cp[cols] = w;
    out->rows = rows;
    out->cols = cols;
    free(rp);
    free(rc);
    free(rx);
    free(next);
    return DVI_OK;
}

/* Reads the matrix group `g` ("/fclib_local/W") into canonical CSC.
 * rows / cols: required sizes, or −1 (any, ≥ 0); rows_from / cols_from name
 * where a required size comes from, for the message (or NULL). The header's
 * sizes are checked before anything of their size is allocated. */
static dvi_status read_matrix(const dvi_io_msg* c, hid_t file, const char* g, int32_t rows, const char* rows_from,
                              int32_t cols, const char* cols_from, csc* out)
{
    memset(out, 0, sizeof *out);
    char path[PATH_MAX_LEN];
    if (!link_exists(file, g)) return dvi_io_fail(c, DVI_ERR_INVALID_ARG, "%s: missing (matrix group)", g);
    int32_t m = 0, n = 0, nz = 0;
    dvi_status st;
    snprintf(path, sizeof path, "%s/m", g);
    if ((st = read_scalar_int(c, file, path, &m)) != DVI_OK) return st;
    snprintf(path, sizeof path, "%s/n", g);
    if ((st = read_scalar_int(c, file, path, &n)) != DVI_OK) return st;
    snprintf(path, sizeof path, "%s/nz", g);
    if ((st = read_scalar_int(c, file, path, &nz)) != DVI_OK) return st;
    if (m < 0 || n < 0) return dvi_io_fail(c, DVI_ERR_INVALID_ARG, "%s: negative size %d x %d (m x n)", g, m, n);
    if (rows >= 0 && m != rows)
        return dvi_io_fail(c, DVI_ERR_INVALID_ARG, "%s/m: %d rows, expected %d%s%s%s", g, m, rows, rows_from ? " (" : "",
                    rows_from ? rows_from : "", rows_from ? ")" : "");
    if (cols >= 0 && n != cols)
        return dvi_io_fail(c, DVI_ERR_INVALID_ARG, "%s/n: %d columns, expected %d%s%s%s", g, n, cols,
                    cols_from ? " (" : "", cols_from ? cols_from : "", cols_from ? ")" : "");
    if (nz < -2)
        return dvi_io_fail(c, DVI_ERR_INVALID_ARG, "%s/nz: %d (expected -2 for CSR, -1 for CSC or a triplet count >= 0)",
                    g, nz);
    int32_t* p = NULL;
    int32_t* ix = NULL;
    double* x = NULL;
    int32_t* ri = NULL;
    int32_t* ci = NULL;
    int64_t np = 0, ni = 0, nx = 0, nnz = 0;
    char expect[96];
    void* a = NULL;
    if (nz < 0) { /* compressed: p has (outer + 1) pointers */
        int32_t outer = nz == -1 ? n : m, inner = nz == -1 ? m : n;
        snprintf(path, sizeof path, "%s/p", g);
        snprintf(expect, sizeof expect, "%lld (%s + 1 pointers, %s)", (long long)outer + 1,
                 nz == -1 ? "columns" : "rows", nz == -1 ? "CSC" : "CSR");
        if ((st = read_array(c, file, path, RD_INT, (int64_t)outer + 1, (int64_t)outer + 1, expect, &a, &np)) !=
            DVI_OK)
            goto done;
        p = a;
        if (p[0] != 0) {
            st = dvi_io_fail(c, DVI_ERR_INVALID_ARG, "%s[0]: %d, expected 0", path, p[0]);
            goto done;
        }
        for (int32_t k = 0; k < outer; k++)
            if (p[k + 1] < p[k]) {
                st = dvi_io_fail(c, DVI_ERR_INVALID_ARG, "%s[%d]: %d, decreasing after %d", path, k + 1, p[k + 1], p[k]);
                goto done;
            }
        nnz = p[outer];
        snprintf(expect, sizeof expect, "at least %lld (the last pointer)", (long long)nnz);
        snprintf(path, sizeof path, "%s/i", g);
        if ((st = read_array(c, file, path, RD_INT, nnz, -1, expect, &a, &ni)) != DVI_OK) goto done;
        ix = a;
        for (int64_t k = 0; k < nnz; k++)
            if (ix[k] < 0 || ix[k] >= inner) {
                st = dvi_io_fail(c, DVI_ERR_INVALID_ARG, "%s[%lld]: %s index %d out of range [0, %d)", path, (long long)k,
                          nz == -1 ? "row" : "column", ix[k], inner);
                goto done;
            }
        snprintf(path, sizeof path, "%s/x", g);
        if ((st = read_array(c, file, path, RD_REAL, nnz, -1, expect, &a, &nx)) != DVI_OK) goto done;
        x = a;
        ri = malloc(((size_t)nnz + 1) * sizeof(int32_t));
        ci = malloc(((size_t)nnz + 1) * sizeof(int32_t));
        if (!ri || !ci) {
            st = dvi_io_fail(c, DVI_ERR_NOMEM, "%s: out of memory", g);
            goto done;
        }
        for (int32_t o = 0; o < outer; o++)
            for (int32_t k = p[o]; k < p[o + 1]; k++) {
                ri[k] = nz == -1 ? ix[k] : o;
                ci[k] = nz == -1 ? o : ix[k];
            }
    } else { /* triplet: i = row, p = column, nz entries */
        nnz = nz;
        snprintf(expect, sizeof expect, "at least %d (nz, triplet form)", nz);
        snprintf(path, sizeof path, "%s/i", g);
        if ((st = read_array(c, file, path, RD_INT, nnz, -1, expect, &a, &ni)) != DVI_OK) goto done;
        ri = a;
        for (int64_t k = 0; k < nnz; k++)
            if (ri[k] < 0 || ri[k] >= m) {
                st = dvi_io_fail(c, DVI_ERR_INVALID_ARG, "%s[%lld]: row index %d out of range [0, %d)", path, (long long)k,
                          ri[k], m);
                goto done;
            }
        snprintf(path, sizeof path, "%s/p", g);
        if ((st = read_array(c, file, path, RD_INT, nnz, -1, expect, &a, &np)) != DVI_OK) goto done;
        ci = a;
        for (int64_t k = 0; k < nnz; k++)
            if (ci[k] < 0 || ci[k] >= n) {
                st = dvi_io_fail(c, DVI_ERR_INVALID_ARG, "%s[%lld]: column index %d out of range [0, %d)", path,
                          (long long)k, ci[k], n);
                goto done;
            }
        snprintf(path, sizeof path, "%s/x", g);
        if ((st = read_array(c, file, path, RD_REAL, nnz, -1, expect, &a, &nx)) != DVI_OK) goto done;
        x = a;
    }
    if (csc_build(m, n, nnz, ri, ci, x, out) != DVI_OK) st = dvi_io_fail(c, DVI_ERR_NOMEM, "%s: out of memory", g);
done:
    free(p);
    free(ix);
    free(x);
    free(ri);
    free(ci);
    return st;
}

/* A borrowed view of A, the CCP layer's matrix type. */
static dvi_csc csc_view(const csc* A)
{
    return (dvi_csc){A->rows, A->cols, A->p, A->i, A->x};
}

/* y = A x (A rows × cols). */
static void csc_mul(const csc* A, const double* x, double* y)
{
    const dvi_csc v = csc_view(A);
    dvi_csc_mul(&v, x, y);
}

/* y = Aᵀ x + add (add may be NULL). */
static void csc_tmul(const csc* A, const double* x, const double* add, double* y)
{
    for (int32_t j = 0; j < A->cols; j++) {
        double s = 0.0;
        for (int32_t k = A->p[j]; k < A->p[j + 1]; k++) s += A->x[k] * x[A->i[k]];
        y[j] = s + (add ? add[j] : 0.0);
    }
}

/* The library's symmetry test (dvi_csc_symmetric, dvi_ccp_validate's for
 * W) on the square A. -1 when out of memory, else 1 (symmetric) or 0. */
static int passes_symmetry_test(const csc* A)
{
    int32_t n = A->cols;
    double* y = calloc((size_t)n + 1, sizeof(double));
    double* ay = calloc((size_t)n + 1, sizeof(double));
    int sym = -1;
    if (y && ay) {
        const dvi_csc v = csc_view(A);
        sym = dvi_csc_symmetric(&v, y, ay, NULL, NULL) ? 1 : 0;
    }
    free(y);
    free(ay);
    return sym;
}

/* Measures the asymmetry ‖A − Aᵀ‖_F / (2‖A‖_F) of the square canonical A
 * and, when A fails the library's symmetry test, replaces A by (A + Aᵀ)/2
 * (exactly symmetric: each entry is the sum of the same two halves),
 * handing the original to *original (or freeing it when original is NULL). */
/* A symmetric matrix stored as one triangle: every off-diagonal entry in
 * the strict upper triangle, or every one in the strict lower, and at least
 * one of them. LMGC90's dumps store M so (CubeH8: 3,006 off-diagonal
 * entries, all above the diagonal). Such an A becomes A + Aᵀ − diag(A), in
 * place; *completed tells. Reading it as it stands would make its symmetric
 * part (A + Aᵀ)/2 the operator, halving every off-diagonal entry. */
static dvi_status complete_triangle(csc* A, bool* completed)
{
    *completed = false;
    const int32_t n = A->cols;
    int64_t upper = 0, lower = 0;
    for (int32_t j = 0; j < n; j++)
        for (int32_t k = A->p[j]; k < A->p[j + 1]; k++) {
            if (A->i[k] < j) upper++;
            else if (A->i[k] > j) lower++;
        }
    if (A->rows != A->cols || (upper > 0) == (lower > 0)) return DVI_OK;
    const int64_t nnz = A->p[n], e_max = nnz + upper + lower;
    if (e_max > INT32_MAX) return DVI_ERR_NOMEM;
    int32_t* ri = malloc(((size_t)e_max + 1) * sizeof(int32_t));
    int32_t* ci = malloc(((size_t)e_max + 1) * sizeof(int32_t));
    double* x = malloc(((size_t)e_max + 1) * sizeof(double));
    csc S = {0};
    dvi_status st = DVI_ERR_NOMEM;
    if (ri && ci && x) {
        int64_t e = 0;
        for (int32_t j = 0; j < n; j++)
            for (int32_t k = A->p[j]; k < A->p[j + 1]; k++) {
                ri[e] = A->i[k];
                ci[e] = j;
                x[e++] = A->x[k];
                if (A->i[k] == j) continue;
                ri[e] = j;
                ci[e] = A->i[k];
                x[e++] = A->x[k];
            }
        if (csc_build(n, n, e, ri, ci, x, &S) == DVI_OK) {
            csc_free(A);
            *A = S;
            *completed = true;
            st = DVI_OK;
        }
    }
    free(ri);
    free(ci);
    free(x);
    return st;
}

static dvi_status symmetrize(csc* A, double* asymmetry, bool* changed, csc* original)
{
    *changed = false;
    *asymmetry = 0.0;
    if (original) memset(original, 0, sizeof *original);
    const int32_t n = A->cols;
    const int32_t nnz = A->p[n];
    int32_t* ri = calloc((size_t)2 * nnz + 1, sizeof(int32_t));
    int32_t* ci = calloc((size_t)2 * nnz + 1, sizeof(int32_t));
    double* x = calloc((size_t)2 * nnz + 1, sizeof(double));
    csc T = {0}, S = {0};
    dvi_status st = DVI_ERR_NOMEM;
    if (!ri || !ci || !x) goto done;
    for (int32_t j = 0; j < n; j++)
        for (int32_t k = A->p[j]; k < A->p[j + 1]; k++) { /* Aᵀ */
            ri[k] = j;
            ci[k] = A->i[k];
            x[k] = A->x[k];
        }
    if (csc_build(n, n, nnz, ri, ci, x, &T) != DVI_OK) goto done;
    double d2 = 0.0, a2 = 0.0;
    for (int32_t j = 0; j < n; j++) { /* merge column j of A and of Aᵀ (both sorted) */
        int32_t a = A->p[j], t = T.p[j];
        while (a < A->p[j + 1] || t < T.p[j + 1]) {
            int32_t ra = a < A->p[j + 1] ? A->i[a] : n, rt = t < T.p[j + 1] ? T.i[t] : n;
            double va = 0.0, vt = 0.0;
            if (ra <= rt) va = A->x[a++];
            if (rt <= ra) vt = T.x[t++];
            d2 += (va - vt) * (va - vt);
            a2 += va * va;
        }
    }
    *asymmetry = a2 > 0.0 ? 0.5 * sqrt(d2) / sqrt(a2) : 0.0;
    int sym = passes_symmetry_test(A);
    if (sym < 0) goto done;
    if (sym == 1) {
        st = DVI_OK;
        goto done;
    }
    int64_t e = 0;
    for (int32_t j = 0; j < n; j++)
        for (int32_t k = A->p[j]; k < A->p[j + 1]; k++) {
            ri[e] = A->i[k];
            ci[e] = j;
            x[e++] = 0.5 * A->x[k];
            ri[e] = j;
            ci[e] = A->i[k];
            x[e++] = 0.5 * A->x[k];
        }
    if (csc_build(n, n, e, ri, ci, x, &S) != DVI_OK) goto done;
    if (original) *original = *A;
    else csc_free(A);
    *A = S;
    *changed = true;
    st = DVI_OK;
done:
    free(ri);
    free(ci);
    free(x);
    csc_free(&T);
    return st;
}

/* The file's own W, kept when the problem uses its symmetric part. */
struct dvi_fclib_operator {
    csc W;
};

/* ---- the problem being built ------------------------------------------------------------ */

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

static void built_free(built* b)
{
    free(b->blk);
    free(b->r);
    csc_free(&b->op);
    free(b->inv_mass);
    free(b->gamma0);
    free(b->solution);
    memset(b, 0, sizeof *b);
}

static size_t align16(size_t x)
{
    return (x + 15u) & ~(size_t)15u;
}

/* Packs b into one owning block (see THE OWNING OBJECT); frees b's arrays. */
static dvi_ccp_file* pack(built* b)
{
    const int32_t m = b->rows, cols = b->op.cols;
    const size_t nnz = (size_t)b->op.p[cols];
    size_t off = OWNER_HEADER;
    size_t o_csc = off;
    off = align16(off + sizeof(dvi_csc));
    size_t o_blk = off;
    off = align16(off + (size_t)b->blocks * sizeof(dvi_ccp_block));
    size_t o_r = off;
    off = align16(off + (size_t)m * sizeof(double));
    size_t o_p = off;
    off = align16(off + ((size_t)cols + 1) * sizeof(int32_t));
    size_t o_i = off;
    off = align16(off + nnz * sizeof(int32_t));
    size_t o_x = off;
    off = align16(off + nnz * sizeof(double));
    size_t o_im = off;
    off = align16(off + (b->factor ? 36 * (size_t)b->bodies * sizeof(double) : 0));
    size_t o_g0 = off;
    off = align16(off + (b->gamma0 ? (size_t)m * sizeof(double) : 0));
    size_t o_sol = off;
    off = align16(off + (b->solution ? (size_t)m * sizeof(double) : 0));
    char* block = calloc(1, off);
    if (!block) return NULL;
    dvi_ccp_file* f = (dvi_ccp_file*)block;
    dvi_csc* op = (dvi_csc*)(block + o_csc);
    memcpy(block + o_blk, b->blk, (size_t)b->blocks * sizeof(dvi_ccp_block));
    memcpy(block + o_r, b->r, (size_t)m * sizeof(double));
    memcpy(block + o_p, b->op.p, ((size_t)cols + 1) * sizeof(int32_t));
    if (nnz) {
        memcpy(block + o_i, b->op.i, nnz * sizeof(int32_t));
        memcpy(block + o_x, b->op.x, nnz * sizeof(double));
    }
    *op = (dvi_csc){b->op.rows, cols, (const int32_t*)(block + o_p), (const int32_t*)(block + o_i),
                    (const double*)(block + o_x)};
    dvi_ccp_problem* p = &f->problem;
    *p = dvi_ccp_problem_empty();
    p->rows = m;
    p->block_count = b->blocks;
    p->blocks = (const dvi_ccp_block*)(block + o_blk);
    p->r = (const double*)(block + o_r);
    if (b->factor) {
        memcpy(block + o_im, b->inv_mass, 36 * (size_t)b->bodies * sizeof(double));
        p->body_count = b->bodies;
        p->inv_mass = (const double*)(block + o_im);
        p->D = op;
    } else {
        p->W = op;
    }
    if (b->gamma0) {
        memcpy(block + o_g0, b->gamma0, (size_t)m * sizeof(double));
        f->gamma0 = (const double*)(block + o_g0);
    }
    if (b->solution) {
        memcpy(block + o_sol, b->solution, (size_t)m * sizeof(double));
        f->solution = (const double*)(block + o_sol);
    }
    built_free(b);
    return f;
}

/* Blocks (contacts friction blocks, then bilateral rows) and μ. */
static dvi_status make_blocks(const dvi_io_msg* c, built* b, const double* mu, const char* mu_path)
{
    b->blocks = b->contacts + b->equalities;
    b->rows = 3 * b->contacts + b->equalities;
    b->blk = calloc((size_t)b->blocks + 1, sizeof(dvi_ccp_block));
    if (!b->blk) return dvi_io_fail(c, DVI_ERR_NOMEM, "out of memory");
    for (int32_t a = 0; a < b->contacts; a++) {
        if (!(mu[a] >= 0.0))
            return dvi_io_fail(c, DVI_ERR_INVALID_ARG, "%s[%d]: friction coefficient must be >= 0 (got %g)", mu_path, a,
                        mu[a]);
        b->blk[a].kind = DVI_BLOCK_FRICTION;
        b->blk[a].mu = mu[a];
    }
    for (int32_t k = 0; k < b->equalities; k++) b->blk[b->contacts + k].kind = DVI_BLOCK_BILATERAL;
    return DVI_OK;
}

/* Concatenates the columns of A and B (same rows); B may be empty (cols 0). */
static dvi_status csc_hcat(const csc* A, const csc* B, csc* out)
{
    memset(out, 0, sizeof *out);
    int32_t na = A->p[A->cols], nb = B->cols ? B->p[B->cols] : 0;
    out->rows = A->rows;
    out->cols = A->cols + B->cols;
    out->p = malloc(((size_t)out->cols + 1) * sizeof(int32_t));
    out->i = malloc(((size_t)na + nb + 1) * sizeof(int32_t));
    out->x = malloc(((size_t)na + nb + 1) * sizeof(double));
    if (!out->p || !out->i || !out->x) {
        csc_free(out);
        return DVI_ERR_NOMEM;
    }
    memcpy(out->p, A->p, ((size_t)A->cols + 1) * sizeof(int32_t));
    for (int32_t j = 0; j < B->cols; j++) out->p[A->cols + 1 + j] = na + B->p[j + 1];
    memcpy(out->i, A->i, (size_t)na * sizeof(int32_t));
    memcpy(out->x, A->x, (size_t)na * sizeof(double));
    if (nb) {
        memcpy(out->i + na, B->i, (size_t)nb * sizeof(int32_t));
        memcpy(out->x + na, B->x, (size_t)nb * sizeof(double));
    }
    return DVI_OK;
}

/* ---- global problems: the factor form --------------------------------------------- */

/* Diagonal blocks of M from the profile of its nonzeros (explicit zeros
 * ignored): a block ends after index k when no nonzero of columns 0..k lies
 * below row k and no nonzero of columns k+1.. lies above row k+1 (both
 * tested, so a pattern that is symmetric only up to rounding still splits
 * correctly). O(n + nnz). starts[0..count] (starts[count] = n); returns the
 * largest block size, or −1 when out of memory. */
static int32_t find_blocks(const csc* M, int32_t* starts, int32_t* count)
{
    const int32_t n = M->cols;
    int32_t* lo = malloc(((size_t)n + 1) * sizeof(int32_t)); /* suffix minimum of the top rows */
    if (!lo) return -1;
    for (int32_t j = 0; j < n; j++) {
        lo[j] = j;
        for (int32_t k = M->p[j]; k < M->p[j + 1]; k++)
            if (M->x[k] != 0.0 && M->i[k] < lo[j]) lo[j] = M->i[k];
    }
    lo[n] = n;
    for (int32_t j = n - 1; j >= 0; j--)
        if (lo[j + 1] < lo[j]) lo[j] = lo[j + 1];
    int32_t nb = 0, largest = 0, reach = -1;
    starts[nb++] = 0;
    for (int32_t j = 0; j < n; j++) {
        for (int32_t k = M->p[j]; k < M->p[j + 1]; k++)
            if (M->x[k] != 0.0 && M->i[k] > reach) reach = M->i[k];
        if (j > reach) reach = j;
        if (reach <= j && lo[j + 1] > j) { /* boundary after j */
            if (j + 1 - starts[nb - 1] > largest) largest = j + 1 - starts[nb - 1];
            starts[nb++] = j + 1;
        }
    }
    free(lo);
    *count = nb - 1; /* the last start is n */
    return largest;
}

/* Inverts the symmetric positive definite k×k A (row-major, k ≤ 6) into
 * inv (row-major, k×k), symmetrised. false if not positive definite. */
static bool spd_inverse(const double* A, int k, double* inv)
{
    double L[36] = {0};
    for (int j = 0; j < k; j++) {
        double d = A[k * j + j];
        for (int q = 0; q < j; q++) d -= L[6 * j + q] * L[6 * j + q];
        if (!(d > 0.0) || !isfinite(d)) return false;
        L[6 * j + j] = sqrt(d);
        for (int i = j + 1; i < k; i++) {
            double s = A[k * i + j];
            for (int q = 0; q < j; q++) s -= L[6 * i + q] * L[6 * j + q];
            L[6 * i + j] = s / L[6 * j + j];
        }
    }
    double X[36];
    for (int col = 0; col < k; col++) { /* solve L Lᵀ x = e_col */
        double y[6];
        for (int i = 0; i < k; i++) {
            double s = i == col ? 1.0 : 0.0;
            for (int q = 0; q < i; q++) s -= L[6 * i + q] * y[q];
            y[i] = s / L[6 * i + i];
        }
        for (int i = k - 1; i >= 0; i--) {
            double s = y[i];
            for (int q = i + 1; q < k; q++) s -= L[6 * q + i] * X[6 * q + col];
            X[6 * i + col] = s / L[6 * i + i];
        }
    }
    for (int i = 0; i < k; i++)
        for (int j = 0; j < k; j++) inv[k * i + j] = 0.5 * (X[6 * i + j] + X[6 * j + i]);
    for (int i = 0; i < k * k; i++)
        if (!isfinite(inv[i])) return false;
    return true;
}

/* Factor form from a block-diagonal M (blocks ≤ 6): groups, M⁻¹ blocks, D,
 * and r = Bᵀ M⁻¹ f + wb. */
static dvi_status factor_form(const dvi_io_msg* c, const csc* M, const int32_t* starts, int32_t nblk, const csc* B,
                              const double* f, const double* wb, built* b, int32_t* mass_blocks)
{
    int32_t n = M->cols;
    /* greedy groups of whole blocks, at most 6 degrees of freedom each */
    int32_t* gstart = malloc(((size_t)nblk + 2) * sizeof(int32_t));
    int32_t* row_of = malloc(((size_t)n + 1) * sizeof(int32_t)); /* dof -> row of D */
    double* y = malloc(((size_t)n + 1) * sizeof(double));        /* M⁻¹ f */
    if (!gstart || !row_of || !y) {
        free(gstart);
        free(row_of);
        free(y);
        return dvi_io_fail(c, DVI_ERR_NOMEM, "out of memory");
    }
    int32_t ng = 0;
    for (int32_t k = 0; k < nblk; k++)
        if (ng == 0 || starts[k + 1] - gstart[ng - 1] > 6) gstart[ng++] = starts[k];
    gstart[ng] = n;
    dvi_status st = DVI_OK;
    if (6 * (int64_t)ng > INT32_MAX) {
        st = dvi_io_fail(c, DVI_ERR_INVALID_ARG, "/fclib_global/M: too many degrees of freedom");
        goto done;
    }
    b->bodies = ng;
    b->inv_mass = calloc(36 * (size_t)ng + 1, sizeof(double));
    if (!b->inv_mass) {
        st = dvi_io_fail(c, DVI_ERR_NOMEM, "out of memory");
        goto done;
    }
    for (int32_t g = 0, k = 0; g < ng; g++) {
        for (int32_t d = gstart[g]; d < gstart[g + 1]; d++) row_of[d] = 6 * g + (d - gstart[g]);
        for (; k < nblk && starts[k] < gstart[g + 1]; k++) { /* blocks of group g */
            int32_t s0 = starts[k], sz = starts[k + 1] - s0;
            double A[36] = {0}, inv[36];
            for (int32_t j = s0; j < s0 + sz; j++)
                for (int32_t e = M->p[j]; e < M->p[j + 1]; e++) {
                    int32_t i = M->i[e];
                    if (i >= s0 && i < s0 + sz) A[sz * (i - s0) + (j - s0)] = M->x[e];
                }
            if (!spd_inverse(A, sz, inv)) {
                st = dvi_io_fail(c, DVI_ERR_SINGULAR,
                          "/fclib_global/M: diagonal block of rows %d..%d is not positive definite", s0,
                          s0 + sz - 1);
                goto done;
            }
            int32_t o = s0 - gstart[g];
            double* IM = b->inv_mass + 36 * (size_t)g;
            for (int32_t i = 0; i < sz; i++)
                for (int32_t j = 0; j < sz; j++) IM[6 * (o + i) + (o + j)] = inv[sz * i + j];
            for (int32_t i = 0; i < sz; i++) {
                double s = 0.0;
                for (int32_t j = 0; j < sz; j++) s += inv[sz * i + j] * f[s0 + j];
                y[s0 + i] = s;
            }
        }
    }
    /* D = B with rows renumbered (monotone: rows stay sorted) */
    int32_t nnz = B->p[B->cols];
    b->op.rows = 6 * ng;
    b->op.cols = B->cols;
    b->op.p = malloc(((size_t)B->cols + 1) * sizeof(int32_t));
    b->op.i = malloc(((size_t)nnz + 1) * sizeof(int32_t));
    b->op.x = malloc(((size_t)nnz + 1) * sizeof(double));
    b->r = malloc(((size_t)B->cols + 1) * sizeof(double));
    if (!b->op.p || !b->op.i || !b->op.x || !b->r) {
        st = dvi_io_fail(c, DVI_ERR_NOMEM, "out of memory");
        goto done;
    }
    memcpy(b->op.p, B->p, ((size_t)B->cols + 1) * sizeof(int32_t));
    for (int32_t e = 0; e < nnz; e++) {
        b->op.i[e] = row_of[B->i[e]];
        b->op.x[e] = B->x[e];
    }
    csc_tmul(B, y, wb, b->r);
    b->factor = true;
    *mass_blocks = nblk;
done:
    free(gstart);
    free(row_of);
    free(y);
    return st;
}

/* ---- global problems: W by CHOLMOD --------------------------------------------------- */

static cholmod_sparse* to_cholmod(const csc* A, int stype, cholmod_common* cc)
{
    size_t nnz = (size_t)A->p[A->cols];
    cholmod_sparse* S =
        cholmod_allocate_sparse((size_t)A->rows, (size_t)A->cols, nnz, 1, 1, stype, CHOLMOD_REAL, cc);
    if (!S) return NULL;
    int* sp = S->p;
    int* si = S->i;
    double* sx = S->x;
    for (int32_t j = 0; j <= A->cols; j++) sp[j] = A->p[j];
    for (size_t k = 0; k < nnz; k++) {
        si[k] = A->i[k];
        sx[k] = A->x[k];
    }
    return S;
}

static dvi_status delassus_cholmod(const dvi_io_msg* c, const csc* M, const csc* B, const double* f, const double* wb,
                                   built* b)
{
    cholmod_common cc;
    cholmod_start(&cc);
    cc.print = 0;
    cc.error_handler = NULL;
    cc.supernodal = CHOLMOD_SIMPLICIAL;
    cc.final_ll = 1;
    cc.nmethods = 1;
    cc.method[0].ordering = CHOLMOD_AMD;
    dvi_status st = DVI_OK;
    cholmod_sparse *Ms = NULL, *Bs = NULL, *PB = NULL, *Y = NULL, *Yt = NULL, *Ws = NULL;
    cholmod_factor* L = NULL;
    cholmod_dense *fd = NULL, *x = NULL;
    const int32_t n = M->cols, m = B->cols;
    Ms = to_cholmod(M, 1, &cc);
    Bs = to_cholmod(B, 0, &cc);
    if (!Ms || !Bs) goto nomem;
    L = cholmod_analyze(Ms, &cc);
    if (!L) goto fail;
    if (!cholmod_factorize(Ms, L, &cc)) goto fail;
    if (cc.status == CHOLMOD_NOT_POSDEF || L->minor < (size_t)n) {
        st = dvi_io_fail(c, DVI_ERR_SINGULAR, "/fclib_global/M: not positive definite (CHOLMOD: leading minor %zu of %d)",
                  (size_t)L->minor + 1, n);
        goto done;
    }
    if (!L->is_ll) goto fail;
    PB = cholmod_spsolve(CHOLMOD_P, L, Bs, &cc);
    if (!PB) goto fail;
    Y = cholmod_spsolve(CHOLMOD_L, L, PB, &cc);
    if (!Y) goto fail;
    Yt = cholmod_transpose(Y, 1, &cc);
    if (!Yt) goto fail;
    Ws = cholmod_ssmult(Yt, Y, 0, 1, 1, &cc);
    if (!Ws) goto fail;
    fd = cholmod_allocate_dense((size_t)n, 1, (size_t)n, CHOLMOD_REAL, &cc);
    if (!fd) goto nomem;
    memcpy(fd->x, f, (size_t)n * sizeof(double));
    x = cholmod_solve(CHOLMOD_A, L, fd, &cc);
    if (!x) goto fail;
    {
        size_t nnz = cholmod_nnz(Ws, &cc);
        if (nnz > (size_t)INT32_MAX) {
            st = dvi_io_fail(c, DVI_ERR_NOMEM, "W = H' M^-1 H: too many entries (%zu)", nnz);
            goto done;
        }
        b->op.rows = m;
        b->op.cols = m;
        b->op.p = malloc(((size_t)m + 1) * sizeof(int32_t));
        b->op.i = malloc((nnz + 1) * sizeof(int32_t));
        b->op.x = malloc((nnz + 1) * sizeof(double));
        b->r = malloc(((size_t)m + 1) * sizeof(double));
        if (!b->op.p || !b->op.i || !b->op.x || !b->r) goto nomem;
        const int* wp = Ws->p;
        const int* wi = Ws->i;
        const double* wx = Ws->x;
        for (int32_t j = 0; j <= m; j++) b->op.p[j] = wp[j];
        for (size_t k = 0; k < nnz; k++) {
            b->op.i[k] = wi[k];
            b->op.x[k] = wx[k];
        }
        csc_tmul(B, (const double*)x->x, wb, b->r);
        b->factor = false;
    }
    goto done;
nomem:
    st = dvi_io_fail(c, DVI_ERR_NOMEM, "out of memory forming W = H' M^-1 H");
    goto done;
fail:
    st = dvi_io_fail(c, cc.status == CHOLMOD_OUT_OF_MEMORY ? DVI_ERR_NOMEM : DVI_ERR_NUMERIC,
              "forming W = H' M^-1 H with CHOLMOD failed (status %d)", cc.status);
done:
    cholmod_free_dense(&x, &cc);
    cholmod_free_dense(&fd, &cc);
    cholmod_free_sparse(&Ws, &cc);
    cholmod_free_sparse(&Yt, &cc);
    cholmod_free_sparse(&Y, &cc);
    cholmod_free_sparse(&PB, &cc);
    cholmod_free_factor(&L, &cc);
    cholmod_free_sparse(&Bs, &cc);
    cholmod_free_sparse(&Ms, &cc);
    cholmod_finish(&cc);
    return st;
}

/* ---- reading the two kinds -------------------------------------------------------------- */

/* Optional vector of `len` reals at path into *out (NULL when absent). */
static dvi_status read_optional(const dvi_io_msg* c, hid_t file, const char* path, int32_t len, double** out)
{
    *out = NULL;
    if (!link_exists(file, path)) return DVI_OK;
    return read_reals(c, file, path, len, NULL, out);
}

/* [r; l] of a solution or guess group ("/solution", "/guesses/1"), or NULL. */
static dvi_status read_rl(const dvi_io_msg* c, hid_t file, const char* group, int32_t contacts, int32_t equalities,
                          double** out)
{
    *out = NULL;
    char path[PATH_MAX_LEN];
    double *r = NULL, *l = NULL;
    snprintf(path, sizeof path, "%s/r", group);
    dvi_status st = read_optional(c, file, path, 3 * contacts, &r);
    if (st != DVI_OK || !r) return st;
    if (equalities > 0) {
        snprintf(path, sizeof path, "%s/l", group);
        st = read_optional(c, file, path, equalities, &l);
        if (st != DVI_OK || !l) { /* no multipliers: no complete vector */
            free(r);
            return st;
        }
    }
    double* v = malloc(((size_t)3 * contacts + equalities + 1) * sizeof(double));
    if (!v) {
        free(r);
        free(l);
        return dvi_io_fail(c, DVI_ERR_NOMEM, "out of memory");
    }
    memcpy(v, r, (size_t)3 * contacts * sizeof(double));
    if (equalities > 0) memcpy(v + 3 * contacts, l, (size_t)equalities * sizeof(double));
    free(r);
    free(l);
    *out = v;
    return DVI_OK;
}

static dvi_status read_spacedim(const dvi_io_msg* c, hid_t file, const char* path)
{
    int32_t d = 0;
    dvi_status st = read_scalar_int(c, file, path, &d);
    if (st != DVI_OK) return st;
    if (d == 2) return dvi_io_fail(c, DVI_ERR_UNSUPPORTED, "%s: 2 (two-dimensional contact) is not supported", path);
    if (d != 3) return dvi_io_fail(c, DVI_ERR_INVALID_ARG, "%s: %d, expected 3", path, d);
    return DVI_OK;
}

static dvi_status read_local(const dvi_io_msg* c, hid_t file, built* b, dvi_fclib_info* info)
{
    csc W = {0}, V = {0}, R = {0}, full = {0};
    double *q = NULL, *mu = NULL, *s = NULL;
    dvi_status st;
    if ((st = read_spacedim(c, file, "/fclib_local/spacedim")) != DVI_OK) goto done;
    int32_t nq = 0;
    if ((st = dataset_length(c, file, "/fclib_local/vectors/q", &nq)) != DVI_OK) goto done;
    if ((st = read_matrix(c, file, "/fclib_local/W", nq, "the length of /fclib_local/vectors/q", nq,
                          "the length of /fclib_local/vectors/q", &W)) != DVI_OK)
        goto done;
    if (W.rows != W.cols) {
        st = dvi_io_fail(c, DVI_ERR_INVALID_ARG, "/fclib_local/W: %d x %d, expected a square matrix", W.rows, W.cols);
        goto done;
    }
    if (W.rows % 3 != 0 || W.rows == 0) {
        st = dvi_io_fail(c, DVI_ERR_INVALID_ARG, "/fclib_local/W: %d rows, expected a positive multiple of 3", W.rows);
        goto done;
    }
    b->contacts = W.rows / 3;
    bool has_v = link_exists(file, "/fclib_local/V"), has_r = link_exists(file, "/fclib_local/R");
    if (has_v != has_r) {
        st = dvi_io_fail(c, DVI_ERR_INVALID_ARG, "%s: missing (V and R come together)",
                  has_v ? "/fclib_local/R" : "/fclib_local/V");
        goto done;
    }
    if (has_r) {
        int32_t ns = 0;
        if ((st = dataset_length(c, file, "/fclib_local/vectors/s", &ns)) != DVI_OK) goto done;
        if ((st = read_matrix(c, file, "/fclib_local/R", ns, "the length of /fclib_local/vectors/s", ns,
                              "the length of /fclib_local/vectors/s", &R)) != DVI_OK)
            goto done;
        if (R.rows != R.cols) {
            st = dvi_io_fail(c, DVI_ERR_INVALID_ARG, "/fclib_local/R: %d x %d, expected a square matrix", R.rows, R.cols);
            goto done;
        }
        if ((st = read_matrix(c, file, "/fclib_local/V", W.rows, "the size of W", R.rows, "the size of R", &V)) !=
            DVI_OK)
            goto done;
        b->equalities = R.rows;
    }
    if ((int64_t)3 * b->contacts + b->equalities > INT32_MAX) {
        st = dvi_io_fail(c, DVI_ERR_INVALID_ARG, "/fclib_local: too many rows");
        goto done;
    }
    if ((st = read_reals(c, file, "/fclib_local/vectors/q", W.rows, " (3 per contact)", &q)) != DVI_OK) goto done;
    if ((st = read_reals(c, file, "/fclib_local/vectors/mu", b->contacts, " (one per contact)", &mu)) != DVI_OK)
        goto done;
    if (b->equalities > 0 && (st = read_reals(c, file, "/fclib_local/vectors/s", b->equalities,
                                              " (one per row of R)", &s)) != DVI_OK)
        goto done;
    if ((st = make_blocks(c, b, mu, "/fclib_local/vectors/mu")) != DVI_OK) goto done;
    b->r = malloc(((size_t)b->rows + 1) * sizeof(double));
    if (!b->r) {
        st = dvi_io_fail(c, DVI_ERR_NOMEM, "out of memory");
        goto done;
    }
    memcpy(b->r, q, (size_t)W.rows * sizeof(double));
    if (b->equalities > 0) {
        memcpy(b->r + W.rows, s, (size_t)b->equalities * sizeof(double));
        /* [[W V] [Vᵀ R]] from the entries of the three matrices */
        int64_t nnz = (int64_t)W.p[W.cols] + 2 * (int64_t)V.p[V.cols] + R.p[R.cols];
        if (nnz > INT32_MAX) {
            st = dvi_io_fail(c, DVI_ERR_INVALID_ARG, "/fclib_local: too many matrix entries");
            goto done;
        }
        int32_t* ri = malloc(((size_t)nnz + 1) * sizeof(int32_t));
        int32_t* ci = malloc(((size_t)nnz + 1) * sizeof(int32_t));
        double* x = malloc(((size_t)nnz + 1) * sizeof(double));
        if (!ri || !ci || !x) {
            free(ri);
            free(ci);
            free(x);
            st = dvi_io_fail(c, DVI_ERR_NOMEM, "out of memory");
            goto done;
        }
        int64_t e = 0;
        const csc* parts[3] = {&W, &V, &R};
        const int32_t roff[3] = {0, 0, W.rows}, coff[3] = {0, W.rows, W.rows};
        for (int t = 0; t < 3; t++)
            for (int32_t j = 0; j < parts[t]->cols; j++)
                for (int32_t k = parts[t]->p[j]; k < parts[t]->p[j + 1]; k++) {
                    ri[e] = roff[t] + parts[t]->i[k];
                    ci[e] = coff[t] + j;
                    x[e++] = parts[t]->x[k];
                    if (t == 1) { /* Vᵀ */
                        ri[e] = W.rows + j;
                        ci[e] = parts[t]->i[k];
                        x[e++] = parts[t]->x[k];
                    }
                }
        dvi_status bs = csc_build(b->rows, b->rows, e, ri, ci, x, &full);
        free(ri);
        free(ci);
        free(x);
        if (bs != DVI_OK) {
            st = dvi_io_fail(c, DVI_ERR_NOMEM, "out of memory");
            goto done;
        }
        b->op = full;
        memset(&full, 0, sizeof full);
    } else {
        b->op = W;
        memset(&W, 0, sizeof W);
    }
    b->factor = false;
    {
        csc original;
        if (complete_triangle(&b->op, &info->triangular) != DVI_OK ||
            symmetrize(&b->op, &info->asymmetry, &info->symmetrized, &original) != DVI_OK) {
            st = dvi_io_fail(c, DVI_ERR_NOMEM, "out of memory");
            goto done;
        }
        if (info->symmetrized) {
            info->file_operator = malloc(sizeof *info->file_operator);
            if (!info->file_operator) {
                csc_free(&original);
                st = dvi_io_fail(c, DVI_ERR_NOMEM, "out of memory");
                goto done;
            }
            info->file_operator->W = original;
        }
    }
    info->kind = DVI_FCLIB_LOCAL;
    read_title(file, "/fclib_local/info/title", info->title, sizeof info->title);
done:
    csc_free(&W);
    csc_free(&V);
    csc_free(&R);
    csc_free(&full);
    free(q);
    free(mu);
    free(s);
    return st;
}

/* ‖M v − B [r; l] − f‖ / max(‖M v‖, ‖B[r; l] + f‖) for the stored solution. */
static double v_mismatch(const csc* M, const csc* B, const double* f, const double* v, const double* rl)
{
    int32_t n = M->cols;
    double* mv = malloc(((size_t)n + 1) * sizeof(double));
    double* rhs = malloc(((size_t)n + 1) * sizeof(double));
    double out = NAN;
    if (mv && rhs) {
        csc_mul(M, v, mv);
        csc_mul(B, rl, rhs);
        double d = 0.0, a = 0.0, c = 0.0;
        for (int32_t k = 0; k < n; k++) {
            rhs[k] += f[k];
            d += (mv[k] - rhs[k]) * (mv[k] - rhs[k]);
            a += mv[k] * mv[k];
            c += rhs[k] * rhs[k];
        }
        double s = sqrt(a > c ? a : c);
        out = s > 1e-300 ? sqrt(d) / s : sqrt(d);
    }
    free(mv);
    free(rhs);
    return out;
}

static dvi_status read_global(const dvi_io_msg* c, hid_t file, uint32_t flags, built* b, dvi_fclib_info* info)
{
    csc M = {0}, H = {0}, G = {0}, B = {0};
    double *f = NULL, *w = NULL, *mu = NULL, *bb = NULL, *wb = NULL, *v = NULL;
    int32_t* starts = NULL;
    dvi_status st;
    if ((st = read_spacedim(c, file, "/fclib_global/spacedim")) != DVI_OK) goto done;
    int32_t nf = 0, nw = 0;
    if ((st = dataset_length(c, file, "/fclib_global/vectors/f", &nf)) != DVI_OK) goto done;
    if ((st = dataset_length(c, file, "/fclib_global/vectors/w", &nw)) != DVI_OK) goto done;
    if ((st = read_matrix(c, file, "/fclib_global/M", nf, "the length of /fclib_global/vectors/f", nf,
                          "the length of /fclib_global/vectors/f", &M)) != DVI_OK)
        goto done;
    if (M.rows != M.cols || M.rows == 0) {
        st = dvi_io_fail(c, DVI_ERR_INVALID_ARG, "/fclib_global/M: %d x %d, expected a non-empty square matrix", M.rows,
                  M.cols);
        goto done;
    }
    const int32_t n = M.rows;
    if ((st = read_matrix(c, file, "/fclib_global/H", n, "the size of M", nw, "the length of /fclib_global/vectors/w",
                          &H)) != DVI_OK)
        goto done;
    if (H.cols % 3 != 0 || H.cols == 0) {
        st = dvi_io_fail(c, DVI_ERR_INVALID_ARG, "/fclib_global/H/n: %d columns, expected a positive multiple of 3", H.cols);
        goto done;
    }
    b->contacts = H.cols / 3;
    if (link_exists(file, "/fclib_global/G")) {
        int32_t nb = 0;
        if ((st = dataset_length(c, file, "/fclib_global/vectors/b", &nb)) != DVI_OK) goto done;
        if ((st = read_matrix(c, file, "/fclib_global/G", n, "the size of M", nb,
                              "the length of /fclib_global/vectors/b", &G)) != DVI_OK)
            goto done;
        b->equalities = G.cols;
    }
    if ((int64_t)H.cols + G.cols > INT32_MAX) {
        st = dvi_io_fail(c, DVI_ERR_INVALID_ARG, "/fclib_global: too many rows");
        goto done;
    }
    if (complete_triangle(&M, &info->triangular) != DVI_OK ||
        symmetrize(&M, &info->asymmetry, &info->symmetrized, NULL) != DVI_OK) {
        st = dvi_io_fail(c, DVI_ERR_NOMEM, "out of memory");
        goto done;
    }
    if ((st = read_reals(c, file, "/fclib_global/vectors/f", n, " (the size of M)", &f)) != DVI_OK) goto done;
    if ((st = read_reals(c, file, "/fclib_global/vectors/w", H.cols, " (3 per contact)", &w)) != DVI_OK) goto done;
    if ((st = read_reals(c, file, "/fclib_global/vectors/mu", b->contacts, " (one per contact)", &mu)) != DVI_OK)
        goto done;
    if (b->equalities > 0 && (st = read_reals(c, file, "/fclib_global/vectors/b", b->equalities,
                                              " (one per column of G)", &bb)) != DVI_OK)
        goto done;
    if ((st = make_blocks(c, b, mu, "/fclib_global/vectors/mu")) != DVI_OK) goto done;
    wb = malloc(((size_t)b->rows + 1) * sizeof(double));
    starts = malloc(((size_t)n + 2) * sizeof(int32_t));
    if (!wb || !starts) {
        st = dvi_io_fail(c, DVI_ERR_NOMEM, "out of memory");
        goto done;
    }
    memcpy(wb, w, (size_t)H.cols * sizeof(double));
    if (b->equalities > 0) memcpy(wb + H.cols, bb, (size_t)b->equalities * sizeof(double));
    if (csc_hcat(&H, &G, &B) != DVI_OK) {
        st = dvi_io_fail(c, DVI_ERR_NOMEM, "out of memory");
        goto done;
    }
    int32_t nblk = 0;
    int32_t largest = find_blocks(&M, starts, &nblk);
    if (largest < 0) {
        st = dvi_io_fail(c, DVI_ERR_NOMEM, "out of memory");
        goto done;
    }
    if (largest <= 6 && !(flags & DVI_FCLIB_DELASSUS))
        st = factor_form(c, &M, starts, nblk, &B, f, wb, b, &info->mass_blocks);
    else
        st = delassus_cholmod(c, &M, &B, f, wb, b);
    if (st != DVI_OK) goto done;
    info->kind = DVI_FCLIB_GLOBAL;
    info->dofs = n;
    read_title(file, "/fclib_global/info/title", info->title, sizeof info->title);
    /* stored solution: v, checked against M v = H r + G l + f */
    if ((st = read_optional(c, file, "/solution/v", n, &v)) != DVI_OK) goto done;
    if ((st = read_rl(c, file, "/solution", b->contacts, b->equalities, &b->solution)) != DVI_OK) goto done;
    if (v && b->solution) info->v_mismatch = v_mismatch(&M, &B, f, v, b->solution);
    info->v = v;
    v = NULL;
done:
    csc_free(&M);
    csc_free(&H);
    csc_free(&G);
    csc_free(&B);
    free(f);
    free(w);
    free(mu);
    free(bb);
    free(wb);
    free(v);
    free(starts);
    return st;
}

/* y = N x for the problem being built (either form; no compliance). */
static dvi_status built_apply(const built* b, const double* x, double* y)
{
    if (!b->factor) {
        csc_mul(&b->op, x, y);
        return DVI_OK;
    }
    double* v = calloc(6 * (size_t)b->bodies + 1, sizeof(double));
    double* mv = malloc((6 * (size_t)b->bodies + 1) * sizeof(double));
    if (!v || !mv) {
        free(v);
        free(mv);
        return DVI_ERR_NOMEM;
    }
    csc_mul(&b->op, x, v);
    for (int32_t g = 0; g < b->bodies; g++)
        for (int i = 0; i < 6; i++) {
            double s = 0.0;
            for (int j = 0; j < 6; j++) s += b->inv_mass[36 * (size_t)g + 6 * i + j] * v[6 * g + j];
            mv[6 * g + i] = s;
        }
    csc_tmul(&b->op, mv, NULL, y);
    free(v);
    free(mv);
    return DVI_OK;
}

static dvi_status read_file(const dvi_io_msg* c, const char* path, uint32_t flags, built* b, dvi_fclib_info* info)
{
    char why[160];
    FILE* fp = dvi_open_regular(path, 0, NULL, why, sizeof why);
    if (!fp) return dvi_io_fail(c, DVI_ERR_IO, "%s", why);
    unsigned char sig[8] = {0};
    size_t got = fread(sig, 1, sizeof sig, fp);
    fclose(fp);
    static const unsigned char HDF5_SIGNATURE[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
    bool has_sig = got == sizeof sig && memcmp(sig, HDF5_SIGNATURE, sizeof sig) == 0;

    char detail[192];
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    if (fapl >= 0) H5Pset_fclose_degree(fapl, H5F_CLOSE_STRONG);
    hid_t file = H5Fopen(path, H5F_ACC_RDONLY, fapl >= 0 ? fapl : H5P_DEFAULT);
    if (file < 0) hdf5_detail(detail);
    if (fapl >= 0) H5Pclose(fapl);
    if (file < 0) {
        if (!has_sig && got < sizeof sig && got > 0)
            return dvi_io_fail(c, DVI_ERR_PARSE, "not an HDF5 file (%zu bytes, no HDF5 signature)", got);
        if (!has_sig) return dvi_io_fail(c, DVI_ERR_PARSE, "not an HDF5 file (no HDF5 signature at offset 0)");
        return dvi_io_fail(c, DVI_ERR_PARSE, "damaged or truncated HDF5 file: cannot open it%s", detail);
    }
    dvi_status st;
    bool global = link_exists(file, "/fclib_global");
    if (global) {
        st = read_global(c, file, flags, b, info);
    } else if (link_exists(file, "/fclib_local")) {
        st = read_local(c, file, b, info);
        if (st == DVI_OK && (st = read_rl(c, file, "/solution", b->contacts, b->equalities, &b->solution)) != DVI_OK)
            goto out;
    } else {
        st = dvi_io_fail(c, DVI_ERR_PARSE, "no /fclib_local or /fclib_global group: not an FCLIB problem");
        goto out;
    }
    if (st != DVI_OK) goto out;
    info->contacts = b->contacts;
    info->equalities = b->equalities;
    /* stored u, checked against W r + q */
    if ((st = read_optional(c, file, "/solution/u", 3 * b->contacts, &info->u)) != DVI_OK) goto out;
    if (info->u && b->solution) {
        double* u = malloc(((size_t)b->rows + 1) * sizeof(double));
        if (u && info->file_operator) csc_mul(&info->file_operator->W, b->solution, u); /* the file's own W */
        else if (u && built_apply(b, b->solution, u) != DVI_OK) {
            free(u);
            u = NULL;
        }
        if (!u) {
            free(u);
            st = dvi_io_fail(c, DVI_ERR_NOMEM, "out of memory");
            goto out;
        }
        double d = 0.0, a = 0.0, e = 0.0;
        for (int32_t k = 0; k < 3 * b->contacts; k++) {
            u[k] += b->r[k];
            d += (u[k] - info->u[k]) * (u[k] - info->u[k]);
            a += u[k] * u[k];
            e += info->u[k] * info->u[k];
        }
        double s = sqrt(a > e ? a : e);
        info->u_mismatch = s > 1e-300 ? sqrt(d) / s : sqrt(d);
        free(u);
    }
    /* guesses: the first one's [r; l] is gamma0 */
    if (link_exists(file, "/guesses")) {
        int32_t count = 0;
        if (link_exists(file, "/guesses/number_of_guesses")) {
            if ((st = read_scalar_int(c, file, "/guesses/number_of_guesses", &count)) != DVI_OK) goto out;
            if (count < 0) {
                st = dvi_io_fail(c, DVI_ERR_INVALID_ARG, "/guesses/number_of_guesses: %d, expected >= 0", count);
                goto out;
            }
        }
        if ((st = read_rl(c, file, "/guesses/1", b->contacts, b->equalities, &b->gamma0)) != DVI_OK) goto out;
        info->guesses = count > 0 ? count : b->gamma0 ? 1 : 0;
    }
out:
    H5Fclose(file);
    return st;
}

/* ---- public: reading --------------------------------------------------------------------- */

void dvi_fclib_info_clear(dvi_fclib_info* info)
{
    if (!info) return;
    free(info->u);
    free(info->v);
    if (info->file_operator) {
        csc_free(&info->file_operator->W);
        free(info->file_operator);
    }
    memset(info, 0, sizeof *info);
}

dvi_status dvi_fclib_read_ex(const char* path, uint32_t flags, dvi_ccp_file** out, dvi_fclib_info* info,
                             char* msg, size_t msg_size)
{
    dvi_io_msg c = {msg, msg_size, path};
    if (msg && msg_size) msg[0] = '\0';
    if (out) *out = NULL;
    dvi_fclib_info local_info;
    dvi_fclib_info* inf = info ? info : &local_info;
    memset(inf, 0, sizeof *inf);
    inf->u_mismatch = NAN;
    inf->v_mismatch = NAN;
    if (!path || !out) {
        c.prefix = NULL;
        return dvi_io_fail(&c, DVI_ERR_INVALID_ARG, "NULL argument");
    }
    if (flags & ~DVI_FCLIB_DELASSUS) return dvi_io_fail(&c, DVI_ERR_INVALID_ARG, "unknown flags 0x%x", flags);
    built b;
    memset(&b, 0, sizeof b);
    h5quiet q;
    quiet_begin(&q);
    dvi_status st = read_file(&c, path, flags, &b, inf);
    quiet_end(&q);
    if (st == DVI_OK) {
        /* the problem as the solvers will see it */
        dvi_ccp_problem p = dvi_ccp_problem_empty();
        dvi_csc op = csc_view(&b.op);
        p.rows = b.rows;
        p.block_count = b.blocks;
        p.blocks = b.blk;
        p.r = b.r;
        if (b.factor) {
            p.body_count = b.bodies;
            p.inv_mass = b.inv_mass;
            p.D = &op;
        } else {
            p.W = &op;
        }
        char vmsg[256];
        st = dvi_ccp_validate(&p, vmsg, sizeof vmsg);
        if (st != DVI_OK) st = dvi_io_fail(&c, st, "%s", vmsg);
    }
    if (st == DVI_OK) {
        *out = pack(&b);
        if (!*out) st = dvi_io_fail(&c, DVI_ERR_NOMEM, "out of memory");
    }
    built_free(&b);
    if (st != DVI_OK || !info) {
        dvi_fclib_info_clear(inf);
        if (info) {
            info->u_mismatch = NAN;
            info->v_mismatch = NAN;
        }
    }
    if (st == DVI_OK && msg && msg_size) msg[0] = '\0';
    return st;
}

dvi_status dvi_fclib_read(const char* path, dvi_ccp_file** out, char* msg, size_t msg_size)
{
    return dvi_fclib_read_ex(path, 0, out, NULL, msg, msg_size);
}

dvi_status dvi_fclib_evaluate(const dvi_ccp_problem* p, const dvi_fclib_info* info, const double* gamma,
                              dvi_ccp_metrics* out)
{
    if (!p || !gamma || !out) return dvi_error_set(DVI_ERR_INVALID_ARG, "dvi_fclib_evaluate: invalid argument (!p || !gamma || !out)");
    if (!info || !info->file_operator) return dvi_ccp_evaluate_with(p, NULL, gamma, out);
    const dvi_csc W = csc_view(&info->file_operator->W);
    return dvi_ccp_evaluate_with(p, &W, gamma, out); /* the library's own residual code */
}

dvi_status dvi_fclib_file_W(const dvi_ccp_problem* p, const dvi_fclib_info* info, dvi_csc* out)
{
    if (!p || !out) return dvi_error_set(DVI_ERR_INVALID_ARG, "dvi_fclib_file_W: invalid argument (!p || !out)");
    memset(out, 0, sizeof *out);
    if (!p->W) /* the factor form: no W to lend */
        return dvi_error_set(DVI_ERR_UNSUPPORTED,
                             "dvi_fclib_file_W: the problem is in the factor form (read the file with DVI_FCLIB_DELASSUS)");
    if (info && info->file_operator) {
        if (info->file_operator->W.cols != p->rows)
            return dvi_error_set(DVI_ERR_INVALID_ARG, "dvi_fclib_file_W: the info does not belong to the problem");
        *out = csc_view(&info->file_operator->W);
    } else {
        *out = *p->W;
    }
    return DVI_OK;
}

/* The splitting itself is the CCP layer's (src/ccp/ccp_split.c): here only
 * the file's own W is handed to it. */
dvi_status dvi_fclib_solve(const char* solver_name, const dvi_solver_settings* settings, const dvi_ccp_problem* p,
                           const dvi_fclib_info* info, double* gamma, dvi_solve_result* result)
{
    dvi_solve_result local;
    dvi_solve_result* res = result ? result : &local;
    if (!result) memset(&local, 0, sizeof local);
    if (!info || !info->file_operator || !p || !gamma) return dvi_ccp_solve(p, solver_name, settings, gamma, res);
    const dvi_csc W = csc_view(&info->file_operator->W);
    if ((!p->W || W.cols != p->rows) && dvi_solver_find(solver_name)) {
        memset(res, 0, sizeof *res);
        res->status = DVI_SOLVE_BAD_INPUT;
        snprintf(res->message, sizeof res->message, "%s", "the problem does not belong to this FCLIB info");
        return dvi_error_set(DVI_ERR_INVALID_ARG, res->message);
    }
    const dvi_status st = dvi_ccp_solve_split(solver_name, settings, p, &W, gamma, res);
    if (st != DVI_OK) dvi_error_set(st, res->message[0] ? res->message : NULL);
    return st;
}

/* ---- writing ------------------------------------------------------------------------------ */

static int cmp_int32(const void* a, const void* b)
{
    int32_t x = *(const int32_t*)a, y = *(const int32_t*)b;
    return (x > y) - (x < y);
}

/* W = Dᵀ M⁻¹ D (+ compliance on the diagonal) of a factor-form problem, in
 * canonical CSC: E = M⁻¹ D body by body, then W(:, j) = Σ_k E(k, j) D(k, :)
 * over the rows of D (a row-wise copy of D), accumulated in a dense column
 * with a marker; each column's rows are sorted. */
static dvi_status factor_to_w(const dvi_ccp_problem* p, csc* W)
{
    memset(W, 0, sizeof *W);
    const dvi_csc* D = p->D;
    const int32_t m = p->rows, nd = D->rows;
    const int32_t nnz = D->colptr[m];
    /* D by rows */
    int32_t* rp = calloc((size_t)nd + 1, sizeof(int32_t));
    int32_t* rc = malloc(((size_t)nnz + 1) * sizeof(int32_t));
    double* rx = malloc(((size_t)nnz + 1) * sizeof(double));
    int32_t* next = malloc(((size_t)nd + 1) * sizeof(int32_t));
    double* acc = calloc((size_t)m + 1, sizeof(double));
    int32_t* mark = malloc(((size_t)m + 1) * sizeof(int32_t));
    int32_t* list = malloc(((size_t)m + 1) * sizeof(int32_t));
    double e[6];
    size_t cap = (size_t)nnz * 4 + 16, used = 0;
    W->p = malloc(((size_t)m + 1) * sizeof(int32_t));
    W->i = malloc(cap * sizeof(int32_t));
    W->x = malloc(cap * sizeof(double));
    dvi_status st = DVI_OK;
    if (!rp || !rc || !rx || !next || !acc || !mark || !list || !W->p || !W->i || !W->x) {
        st = DVI_ERR_NOMEM;
        goto done;
    }
    for (int32_t k = 0; k < nnz; k++) rp[D->rowind[k] + 1]++;
    for (int32_t r = 0; r < nd; r++) rp[r + 1] += rp[r];
    memcpy(next, rp, (size_t)nd * sizeof(int32_t));
    for (int32_t j = 0; j < m; j++)
        for (int32_t k = D->colptr[j]; k < D->colptr[j + 1]; k++) {
            int32_t d = next[D->rowind[k]]++;
            rc[d] = j;
            rx[d] = D->values[k];
        }
    for (int32_t j = 0; j < m; j++) mark[j] = -1;
    W->p[0] = 0;
    for (int32_t j = 0; j < m; j++) {
        int32_t cnt = 0;
        int32_t k = D->colptr[j];
        while (k < D->colptr[j + 1]) { /* one run per body (rows strictly increase) */
            int32_t body = D->rowind[k] / 6;
            double dcol[6] = {0};
            for (; k < D->colptr[j + 1] && D->rowind[k] / 6 == body; k++) dcol[D->rowind[k] - 6 * body] = D->values[k];
            double tmp[36];
            const double* Mi = dvi_ccp_minv_block(p, body, tmp);
            for (int a = 0; a < 6; a++) {
                double s = 0.0;
                for (int b2 = 0; b2 < 6; b2++) s += Mi[6 * a + b2] * dcol[b2];
                e[a] = s;
            }
            for (int a = 0; a < 6; a++) {
                if (e[a] == 0.0) continue;
                int32_t row = 6 * body + a;
                for (int32_t t = rp[row]; t < rp[row + 1]; t++) {
                    int32_t i = rc[t];
                    if (mark[i] != j) {
                        mark[i] = j;
                        acc[i] = 0.0;
                        list[cnt++] = i;
                    }
                    acc[i] += rx[t] * e[a];
                }
            }
        }
        if (p->compliance && p->compliance[j] != 0.0) {
            if (mark[j] != j) {
                mark[j] = j;
                acc[j] = 0.0;
                list[cnt++] = j;
            }
            acc[j] += p->compliance[j];
        }
        qsort(list, (size_t)cnt, sizeof(int32_t), cmp_int32);
        if (used + (size_t)cnt > cap) {
            size_t nc = cap * 2 > used + (size_t)cnt ? cap * 2 : used + (size_t)cnt;
            if (nc > (size_t)INT32_MAX) {
                st = DVI_ERR_NOMEM;
                goto done;
            }
            int32_t* ni = realloc(W->i, nc * sizeof(int32_t));
            if (ni) W->i = ni;
            double* nx = realloc(W->x, nc * sizeof(double));
            if (nx) W->x = nx;
            if (!ni || !nx) {
                st = DVI_ERR_NOMEM;
                goto done;
            }
            cap = nc;
        }
        for (int32_t a = 0; a < cnt; a++) {
            W->i[used] = list[a];
            W->x[used++] = acc[list[a]];
        }
        W->p[j + 1] = (int32_t)used;
    }
    W->rows = m;
    W->cols = m;
done:
    free(rp);
    free(rc);
    free(rx);
    free(next);
    free(acc);
    free(mark);
    free(list);
    if (st != DVI_OK) csc_free(W);
    return st;
}

static hid_t make_group(hid_t loc, const char* name, hid_t gcpl)
{
    return H5Gcreate2(loc, name, H5P_DEFAULT, gcpl, H5P_DEFAULT);
}

static bool write_data(hid_t loc, const char* name, hid_t file_type, hid_t mem_type, const void* v, size_t n,
                       hid_t dcpl)
{
    hsize_t dim = (hsize_t)n;
    hid_t sp = H5Screate_simple(1, &dim, NULL);
    if (sp < 0) return false;
    hid_t ds = H5Dcreate2(loc, name, file_type, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    bool ok = ds >= 0 && (n == 0 || H5Dwrite(ds, mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0);
    if (ds >= 0) ok = H5Dclose(ds) >= 0 && ok;
    H5Sclose(sp);
    return ok;
}

static bool write_ints(hid_t loc, const char* name, const int32_t* v, size_t n, hid_t dcpl)
{
    return write_data(loc, name, H5T_STD_I32LE, H5T_NATIVE_INT32, v, n, dcpl);
}

static bool write_int(hid_t loc, const char* name, int32_t v, hid_t dcpl)
{
    return write_ints(loc, name, &v, 1, dcpl);
}

static bool write_reals(hid_t loc, const char* name, const double* v, size_t n, hid_t dcpl)
{
    return write_data(loc, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, v, n, dcpl);
}

/* A scalar fixed-length, NUL-terminated string (as libfclib writes them). */
static bool write_string(hid_t loc, const char* name, const char* s, hid_t dcpl)
{
    hid_t ty = H5Tcopy(H5T_C_S1);
    if (ty < 0) return false;
    bool ok = H5Tset_size(ty, strlen(s) + 1) >= 0 && H5Tset_strpad(ty, H5T_STR_NULLTERM) >= 0;
    hid_t sp = H5Screate(H5S_SCALAR);
    hid_t ds = ok && sp >= 0 ? H5Dcreate2(loc, name, ty, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT) : -1;
    ok = ds >= 0 && H5Dwrite(ds, ty, H5S_ALL, H5S_ALL, H5P_DEFAULT, s) >= 0;
    if (ds >= 0) ok = H5Dclose(ds) >= 0 && ok;
    if (sp >= 0) H5Sclose(sp);
    H5Tclose(ty);
    return ok;
}

/* The local problem to write: W (canonical or remapped), q, μ, r, u. */
typedef struct wlocal {
    int32_t m, contacts;
    int32_t* p;
    int32_t* i;
    double* x;
    double* q;
    double* mu;
    double* r; /* solution or NULL */
    double* u;
} wlocal;

static void wlocal_free(wlocal* w)
{
    free(w->p);
    free(w->i);
    free(w->x);
    free(w->q);
    free(w->mu);
    free(w->r);
    free(w->u);
    memset(w, 0, sizeof *w);
}

static dvi_status build_local(const dvi_io_msg* c, const dvi_ccp_problem* p, const double* solution, wlocal* out)
{
    memset(out, 0, sizeof *out);
    const int32_t m = p->rows;
    int32_t contacts = 0;
    for (int32_t k = 0; k < p->block_count; k++) {
        dvi_block_kind kind = p->blocks[k].kind;
        if (kind == DVI_BLOCK_BILATERAL)
            return dvi_io_fail(c, DVI_ERR_UNSUPPORTED,
                        "blocks[%d]: bilateral rows cannot be written as a local FCLIB problem (its free rows, V "
                        "and R, are ignored by common readers such as Siconos'); eliminate them first",
                        k);
        if (kind == DVI_BLOCK_FRICTION_ROLLING)
            return dvi_io_fail(c, DVI_ERR_UNSUPPORTED,
                        "blocks[%d]: friction_rolling blocks (6 rows) have no FCLIB equivalent; only friction and "
                        "frictionless blocks can be written",
                        k);
        contacts++;
    }
    if ((int64_t)contacts * 3 > INT32_MAX) return dvi_io_fail(c, DVI_ERR_INVALID_ARG, "too many contacts");
    const int32_t n = 3 * contacts;
    int32_t* map = malloc(((size_t)m + 1) * sizeof(int32_t)); /* our row -> FCLIB row */
    out->m = n;
    out->contacts = contacts;
    out->q = calloc((size_t)n + 1, sizeof(double));
    out->mu = calloc((size_t)contacts + 1, sizeof(double));
    if (!map || !out->q || !out->mu) {
        free(map);
        wlocal_free(out);
        return dvi_io_fail(c, DVI_ERR_NOMEM, "out of memory");
    }
    for (int32_t k = 0, row = 0; k < p->block_count; k++) {
        const dvi_ccp_block* B = &p->blocks[k];
        int32_t rows = dvi_block_rows(B->kind);
        for (int32_t a = 0; a < rows; a++) map[row + a] = 3 * k + a;
        out->mu[k] = B->kind == DVI_BLOCK_FRICTION ? B->mu : 0.0;
        row += rows;
    }
    for (int32_t i = 0; i < m; i++) out->q[map[i]] = p->r[i];
    /* W in CSC over the FCLIB rows */
    csc A = {0};
    const dvi_csc* src = p->W;
    bool own = false;
    bool comp = false;
    if (p->compliance)
        for (int32_t i = 0; i < m; i++) comp = comp || p->compliance[i] != 0.0;
    dvi_status st = DVI_OK;
    if (p->D) {
        st = factor_to_w(p, &A);
        own = true;
    } else if (comp) { /* W + diag(compliance), canonical */
        int64_t nnz = (int64_t)src->colptr[m] + m;
        int32_t* ri = malloc(((size_t)nnz + 1) * sizeof(int32_t));
        int32_t* ci = malloc(((size_t)nnz + 1) * sizeof(int32_t));
        double* x = malloc(((size_t)nnz + 1) * sizeof(double));
        if (ri && ci && x) {
            int64_t e = 0;
            for (int32_t j = 0; j < m; j++)
                for (int32_t k = src->colptr[j]; k < src->colptr[j + 1]; k++) {
                    ri[e] = src->rowind[k];
                    ci[e] = j;
                    x[e++] = src->values[k];
                }
            for (int32_t j = 0; j < m; j++) {
                ri[e] = j;
                ci[e] = j;
                x[e++] = p->compliance[j];
            }
            st = csc_build(m, m, e, ri, ci, x, &A);
            own = true;
        } else {
            st = DVI_ERR_NOMEM;
        }
        free(ri);
        free(ci);
        free(x);
    }
    if (st != DVI_OK) {
        free(map);
        wlocal_free(out);
        return dvi_io_fail(c, st, "out of memory forming W");
    }
    const int32_t* cp = own ? A.p : src->colptr;
    const int32_t* ri = own ? A.i : src->rowind;
    const double* cx = own ? A.x : src->values;
    const int32_t nnz = cp[m];
    out->p = calloc((size_t)n + 1, sizeof(int32_t));
    out->i = malloc(((size_t)nnz + 1) * sizeof(int32_t));
    out->x = malloc(((size_t)nnz + 1) * sizeof(double));
    if (!out->p || !out->i || !out->x) {
        csc_free(&A);
        free(map);
        wlocal_free(out);
        return dvi_io_fail(c, DVI_ERR_NOMEM, "out of memory");
    }
    /* columns in FCLIB order: the map is increasing, so columns and rows keep their order */
    for (int32_t j = 0; j < m; j++) out->p[map[j] + 1] = cp[j + 1] - cp[j];
    for (int32_t j = 0; j < n; j++) out->p[j + 1] += out->p[j];
    for (int32_t j = 0; j < m; j++) {
        int32_t d = out->p[map[j]];
        for (int32_t k = cp[j]; k < cp[j + 1]; k++, d++) {
            out->i[d] = map[ri[k]];
            out->x[d] = cx[k];
        }
    }
    csc_free(&A);
    if (solution) {
        out->r = calloc((size_t)n + 1, sizeof(double));
        out->u = malloc(((size_t)n + 1) * sizeof(double));
        if (!out->r || !out->u) {
            free(map);
            wlocal_free(out);
            return dvi_io_fail(c, DVI_ERR_NOMEM, "out of memory");
        }
        for (int32_t i = 0; i < m; i++) out->r[map[i]] = solution[i];
        csc Wl = {n, n, out->p, out->i, out->x};
        csc_mul(&Wl, out->r, out->u);
        for (int32_t i = 0; i < n; i++) out->u[i] += out->q[i];
    }
    free(map);
    return DVI_OK;
}

static bool write_local_file(hid_t file, const wlocal* w, hid_t gcpl, hid_t dcpl)
{
    bool ok = true;
    hid_t root = make_group(file, "/fclib_local", gcpl);
    if (root < 0) return false;
    ok = ok && write_int(root, "spacedim", 3, dcpl);
    hid_t W = make_group(root, "W", gcpl);
    ok = ok && W >= 0;
    if (W >= 0) {
        int32_t nnz = w->p[w->m];
        ok = ok && write_int(W, "nzmax", nnz, dcpl) && write_int(W, "m", w->m, dcpl) &&
             write_int(W, "n", w->m, dcpl) && write_int(W, "nz", -1, dcpl) &&
             write_ints(W, "p", w->p, (size_t)w->m + 1, dcpl) && write_ints(W, "i", w->i, (size_t)nnz, dcpl) &&
             write_reals(W, "x", w->x, (size_t)nnz, dcpl);
        ok = H5Gclose(W) >= 0 && ok;
    }
    hid_t vec = make_group(root, "vectors", gcpl);
    ok = ok && vec >= 0;
    if (vec >= 0) {
        ok = ok && write_reals(vec, "q", w->q, (size_t)w->m, dcpl) &&
             write_reals(vec, "mu", w->mu, (size_t)w->contacts, dcpl);
        ok = H5Gclose(vec) >= 0 && ok;
    }
    hid_t inf = make_group(root, "info", gcpl);
    ok = ok && inf >= 0;
    if (inf >= 0) {
        ok = ok && write_string(inf, "title", "dvicontact CCP", dcpl) &&
             write_string(inf, "description", "written by dvicontact " DVI_VERSION_STRING, dcpl) &&
             write_string(inf, "math_info", "", dcpl);
        ok = H5Gclose(inf) >= 0 && ok;
    }
    ok = H5Gclose(root) >= 0 && ok;
    if (ok && w->r) {
        hid_t sol = make_group(file, "/solution", gcpl);
        ok = sol >= 0;
        if (sol >= 0) {
            ok = write_reals(sol, "r", w->r, (size_t)w->m, dcpl) && write_reals(sol, "u", w->u, (size_t)w->m, dcpl);
            ok = H5Gclose(sol) >= 0 && ok;
        }
    }
    return ok;
}

dvi_status dvi_fclib_write_local(const dvi_ccp_problem* p, const double* solution, const char* path, char* msg,
                                 size_t msg_size)
{
    dvi_io_msg c = {msg, msg_size, path};
    if (msg && msg_size) msg[0] = '\0';
    if (!p || !path) {
        c.prefix = NULL;
        return dvi_io_fail(&c, DVI_ERR_INVALID_ARG, "NULL argument");
    }
    if (p->G) /* FCLIB's local problem is W = H M⁻¹ Hᵀ: a low-rank term would be lost */
        return dvi_io_fail(&c, DVI_ERR_UNSUPPORTED, "G: FCLIB has no low-rank term (give the problem as W)");
    if (p->frames) { /* written from D: the frames become its columns */
        dvi_ccp_expanded e;
        char emsg[256];
        dvi_status est = dvi_ccp_expand(p, &e, emsg, sizeof emsg);
        if (est == DVI_OK) est = dvi_fclib_write_local(&e.problem, solution, path, msg, msg_size);
        else dvi_io_fail(&c, est, "%s", emsg);
        dvi_ccp_expanded_free(&e);
        return est;
    }
    char vmsg[256];
    dvi_status st = dvi_ccp_validate(p, vmsg, sizeof vmsg);
    if (st != DVI_OK) return dvi_io_fail(&c, st, "%s", vmsg);
    if (solution)
        for (int32_t i = 0; i < p->rows; i++)
            if (!isfinite(solution[i])) return dvi_io_fail(&c, DVI_ERR_INVALID_ARG, "solution[%d]: not finite", i);
    wlocal w;
    if ((st = build_local(&c, p, solution, &w)) != DVI_OK) return st;

    h5quiet q;
    quiet_begin(&q);
    char detail[192] = "";
    hid_t gcpl = -1, dcpl = -1, file = -1;
    gcpl = H5Pcreate(H5P_GROUP_CREATE);
    dcpl = H5Pcreate(H5P_DATASET_CREATE);
    bool ok = gcpl >= 0 && dcpl >= 0 && H5Pset_obj_track_times(gcpl, 0) >= 0 &&
              H5Pset_obj_track_times(dcpl, 0) >= 0;
    if (ok) {
        file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
        if (file < 0) {
            hdf5_detail(detail);
            st = dvi_io_fail(&c, DVI_ERR_IO, "cannot create the file%s", detail);
        } else {
            ok = write_local_file(file, &w, gcpl, dcpl);
            if (!ok) hdf5_detail(detail);
            if (H5Fclose(file) < 0 && ok) {
                ok = false;
                hdf5_detail(detail);
            }
            if (!ok) {
                st = dvi_io_fail(&c, DVI_ERR_IO, "write error%s", detail);
                remove(path);
            }
        }
    } else {
        st = dvi_io_fail(&c, DVI_ERR_NOMEM, "cannot set up HDF5 properties");
    }
    if (dcpl >= 0) H5Pclose(dcpl);
    if (gcpl >= 0) H5Pclose(gcpl);
    quiet_end(&q);
    wlocal_free(&w);
    return st;
}
