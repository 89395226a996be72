/* dvicontact — FCLIB files, reading HDF5 datasets: HDF5 error handling (its
 * printing off during a call, its innermost message kept) and the checked
 * reading of one dataset: present, of the expected class, one-dimensional,
 * of the expected length (fclib_internal.h: the whole job). */
#include "fclib_internal.h"
#include "error.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- HDF5 error handling -------------------------------------------------------- */

/* Switches off HDF5's automatic error printing, remembering the handler. */
void fclib_quiet_begin(h5quiet* q)
{
    q->func = NULL;
    q->data = NULL;
    q->saved = H5Eget_auto2(H5E_DEFAULT, &q->func, &q->data) >= 0;
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
}

void fclib_quiet_end(const h5quiet* q)
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
void fclib_hdf5_detail(char out[192])
{
    char d[160] = "";
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, innermost_cb, d);
    if (d[0]) snprintf(out, 192, " (HDF5: %s)", d);
    else out[0] = '\0';
}

/* H5Lexists fails on a missing intermediate group: check every prefix. */
bool fclib_link_exists(hid_t file, const char* path)
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

/* The number of values of dataset `ds` (`path` for messages): 1 for a
 * scalar, the product of the extents for a simple dataspace of at most one
 * extent above 1; an error for anything else or more than INT32_MAX values. */
static dvi_status dataset_count(const io_msg* c, hid_t ds, const char* path, int64_t* count)
{
    char detail[192];
    dvi_status st = DVI_OK;
    hid_t sp = H5Dget_space(ds);
    int64_t n = 0;
    if (sp < 0) {
        fclib_hdf5_detail(detail);
        return io_fail(c, DVI_ERR_PARSE, "%s: cannot read its shape%s", path, detail);
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
            st = io_fail(c, DVI_ERR_PARSE, "%s: cannot read its shape", path);
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
            st = io_fail(c, DVI_ERR_INVALID_ARG, "%s: expected a one-dimensional array, got a %d-dimensional one", path,
                      rank);
            goto done;
        }
        if (n < 0) {
            st = io_fail(c, DVI_ERR_INVALID_ARG, "%s: too many values (more than %d)", path, INT32_MAX);
            goto done;
        }
    } else {
        st = io_fail(c, DVI_ERR_PARSE, "%s: cannot read its shape", path);
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
static dvi_status open_dataset(const io_msg* c, hid_t file, const char* path, hid_t* ds)
{
    char detail[192];
    *ds = H5Dopen2(file, path, H5P_DEFAULT);
    if (*ds >= 0) return DVI_OK;
    fclib_hdf5_detail(detail);
    if (!fclib_link_exists(file, path)) return io_fail(c, DVI_ERR_INVALID_ARG, "%s: missing", path);
    return io_fail(c, DVI_ERR_INVALID_ARG, "%s: not a readable dataset%s", path, detail);
}

dvi_status fclib_dataset_length(const io_msg* c, hid_t file, const char* path, int32_t* len)
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

/* Whether the file holds the bytes of `values` values of dataset ds (of
 * file type ty), not just a dataspace claiming them: a 12 KB file can
 * declare a chunked dataset of 2^31 values and write none (HDF5 would read
 * fill values, after allocating for all of them). Without filters the
 * stored bytes must cover the values; with filters (compression) a ratio
 * of 1100:1, above deflate's limit of about 1032:1. Datasets of up to
 * UNSTORED_MAX values may be unwritten: published files have such (the
 * zero /solution/r of local_problem_test.hdf5), and reading their fill
 * values costs little. */
#define UNSTORED_MAX ((int64_t)1 << 20)
static dvi_status check_storage(const io_msg* c, hid_t ds, hid_t ty, const char* path, int64_t values)
{
    if (values <= UNSTORED_MAX) return DVI_OK;
    const size_t elem = H5Tget_size(ty);
    const double need = (double)values * (double)(elem > 0 ? elem : 1);
    const double have = (double)H5Dget_storage_size(ds);
    int filters = 0;
    hid_t dcpl = H5Dget_create_plist(ds);
    if (dcpl >= 0) {
        filters = H5Pget_nfilters(dcpl);
        H5Pclose(dcpl);
    }
    const double ratio = filters > 0 ? 1100.0 : 1.0;
    if (have * ratio < need)
        return io_fail(c, DVI_ERR_PARSE, "%s: %lld values declared, but the file stores %.0f bytes of them (%s)",
                           path, (long long)values, have, filters > 0 ? "compressed" : "unwritten or truncated");
    return DVI_OK;
}

dvi_status fclib_read_array(const io_msg* c, hid_t file, const char* path, rd_kind kind, int64_t len_min,
                            int64_t len_max, const char* expect, void** out, int64_t* count)
{
    return fclib_read_array_head(c, file, path, kind, len_min, len_max, -1, expect, out, count);
}

dvi_status fclib_read_array_head(const io_msg* c, hid_t file, const char* path, rd_kind kind, int64_t len_min,
                                 int64_t len_max, int64_t take, const char* expect, void** out, int64_t* count)
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
        fclib_hdf5_detail(detail);
        st = io_fail(c, DVI_ERR_PARSE, "%s: cannot read its type%s", path, detail);
        goto done;
    }
    if ((st = dataset_count(c, ds, path, &n)) != DVI_OK) goto done;
    H5T_class_t tc = H5Tget_class(ty);
    if (kind == RD_INT && tc != H5T_INTEGER) {
        st = io_fail(c, DVI_ERR_INVALID_ARG, "%s: expected integers, the dataset holds %s", path,
                  tc == H5T_FLOAT ? "floating-point numbers" : tc == H5T_STRING ? "a string" : "another type");
        goto done;
    }
    if (kind == RD_REAL && tc != H5T_FLOAT) {
        st = io_fail(c, DVI_ERR_INVALID_ARG, "%s: expected floating-point numbers, the dataset holds %s", path,
                  tc == H5T_INTEGER ? "integers" : tc == H5T_STRING ? "a string" : "another type");
        goto done;
    }
    if (n < len_min || (len_max >= 0 && n > len_max)) {
        st = io_fail(c, DVI_ERR_INVALID_ARG, "%s: %lld value%s, expected %s", path, (long long)n, n == 1 ? "" : "s",
                  expect);
        goto done;
    }
    const int64_t whole = n; /* the dataset's extent; n: the values read */
    if (take >= 0 && take < n) n = take;
    if ((st = check_storage(c, ds, ty, path, n)) != DVI_OK) goto done;
    size_t elem = kind == RD_INT ? sizeof(int64_t) : sizeof(double);
    buf = malloc(((size_t)n + 1) * elem);
    if (!buf) {
        st = io_fail(c, DVI_ERR_NOMEM, "%s: out of memory (%lld values)", path, (long long)n);
        goto done;
    }
    hid_t mem_type = kind == RD_INT ? H5T_NATIVE_INT64 : H5T_NATIVE_DOUBLE;
    herr_t rd = 0;
    if (n > 0 && n == whole) {
        rd = H5Dread(ds, mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf);
    } else if (n > 0) { /* the first n values: a hyperslab of the dataset's values in storage order */
        hid_t fsp = H5Dget_space(ds);
        hsize_t mdim = (hsize_t)n;
        hid_t msp = H5Screate_simple(1, &mdim, NULL);
        rd = -1;
        if (fsp >= 0 && msp >= 0) {
            int rank = H5Sget_simple_extent_ndims(fsp);
            hsize_t dims[H5S_MAX_RANK], start[H5S_MAX_RANK] = {0}, cnt[H5S_MAX_RANK];
            if (rank >= 1 && rank <= H5S_MAX_RANK && H5Sget_simple_extent_dims(fsp, dims, NULL) >= 0) {
                for (int d = 0; d < rank; d++) cnt[d] = dims[d] > 1 ? (hsize_t)n : 1; /* one long extent at most */
                if (H5Sselect_hyperslab(fsp, H5S_SELECT_SET, start, NULL, cnt, NULL) >= 0)
                    rd = H5Dread(ds, mem_type, msp, fsp, H5P_DEFAULT, buf);
            }
        }
        if (msp >= 0) H5Sclose(msp);
        if (fsp >= 0) H5Sclose(fsp);
    }
    if (rd < 0) {
        fclib_hdf5_detail(detail);
        st = io_fail(c, DVI_ERR_PARSE, "%s: cannot read the values (damaged or truncated file?)%s", path, detail);
        goto done;
    }
    if (kind == RD_INT) {
        const int64_t* v64 = buf;
        int32_t* v32 = buf; /* narrowed in place, front to back */
        for (int64_t k = 0; k < n; k++) {
            int64_t v = v64[k];
            if (v < INT32_MIN || v > INT32_MAX) {
                st = io_fail(c, DVI_ERR_INVALID_ARG, "%s[%lld]: %lld does not fit in 32 bits", path, (long long)k,
                          (long long)v);
                goto done;
            }
            v32[k] = (int32_t)v;
        }
    } else {
        const double* v = buf;
        for (int64_t k = 0; k < n; k++)
            if (!isfinite(v[k])) {
                st = io_fail(c, DVI_ERR_INVALID_ARG, "%s[%lld]: not finite (%g)", path, (long long)k, v[k]);
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

dvi_status fclib_read_scalar_int(const io_msg* c, hid_t file, const char* path, int32_t* v)
{
    void* a = NULL;
    dvi_status st = fclib_read_array(c, file, path, RD_INT, 1, 1, "1 (a scalar)", &a, NULL);
    if (st == DVI_OK) *v = *(int32_t*)a;
    free(a);
    return st;
}

/* Reads a vector of exactly `len` reals. */
dvi_status fclib_read_reals(const io_msg* c, hid_t file, const char* path, int32_t len, const char* per,
                            double** out)
{
    char expect[96];
    snprintf(expect, sizeof expect, "%d%s", len, per ? per : "");
    void* a = NULL;
    dvi_status st = fclib_read_array(c, file, path, RD_REAL, len, len, expect, &a, NULL);
    *out = a;
    return st;
}

/* An optional string dataset (fixed or variable length) into out[size],
 * non-printable bytes as '?'; "" when absent or unreadable. */
void fclib_read_title(hid_t file, const char* path, char* out, size_t size)
{
    out[0] = '\0';
    if (!fclib_link_exists(file, path)) return;
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
