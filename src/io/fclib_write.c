/* dvicontact — FCLIB files, the writer: a CCP written as a local problem:
 * validated, W formed, frictionless blocks padded to 3-row contacts, time
 * stamps off so that equal problems give equal files (fclib_internal.h: the
 * whole job). */
#include "fclib_internal.h"
#include "error.h"

#include "alloc.h"
#include "ccp_work.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    BASE_FREE_ALL(w->p, w->i, w->x, w->q, w->mu, w->r, w->u);
    memset(w, 0, sizeof *w);
}

static dvi_status build_local(const io_msg* c, const dvi_ccp_problem* p, const double* solution, wlocal* out)
{
    memset(out, 0, sizeof *out);
    const int32_t m = p->rows;
    int32_t contacts = 0;
    for (int32_t k = 0; k < p->block_count; k++) {
        dvi_block_kind kind = p->blocks[k].kind;
        if (kind == DVI_BLOCK_BILATERAL)
            return io_fail(c, DVI_ERR_UNSUPPORTED,
                        "blocks[%d]: bilateral rows cannot be written as a local FCLIB problem (its free rows, V "
                        "and R, are ignored by common readers such as Siconos'); eliminate them first",
                        k);
        if (kind == DVI_BLOCK_FRICTION_ROLLING)
            return io_fail(c, DVI_ERR_UNSUPPORTED,
                        "blocks[%d]: friction_rolling blocks (6 rows) have no FCLIB equivalent; only friction and "
                        "frictionless blocks can be written",
                        k);
        contacts++;
    }
    if ((int64_t)contacts * 3 > INT32_MAX) return io_fail(c, DVI_ERR_INVALID_ARG, "too many contacts");
    const int32_t n = 3 * contacts;
    int32_t* map = malloc(((size_t)m + 1) * sizeof(int32_t)); /* our row -> FCLIB row */
    out->m = n;
    out->contacts = contacts;
    out->q = calloc((size_t)n + 1, sizeof(double));
    out->mu = calloc((size_t)contacts + 1, sizeof(double));
    if (!map || !out->q || !out->mu) {
        free(map);
        wlocal_free(out);
        return io_fail(c, DVI_ERR_NOMEM, "out of memory");
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
        st = fclib_factor_to_w(p, &A);
        own = true;
    } else if (comp) { /* W + diag(compliance), canonical */
        fclib_triplets t;
        if (fclib_triplets_init(&t, (int64_t)src->colptr[m] + m)) {
            for (int32_t j = 0; j < m; j++)
                for (int32_t k = src->colptr[j]; k < src->colptr[j + 1]; k++)
                    fclib_triplets_add(&t, src->rowind[k], j, src->values[k]);
            for (int32_t j = 0; j < m; j++) fclib_triplets_add(&t, j, j, p->compliance[j]);
            st = fclib_triplets_build(&t, m, m, &A);
            own = true;
            fclib_triplets_free(&t);
        } else {
            st = DVI_ERR_NOMEM;
        }
    }
    if (st != DVI_OK) {
        free(map);
        wlocal_free(out);
        return io_fail(c, st, "out of memory forming W");
    }
    const int32_t* cp = own ? A.p : src->colptr;
    const int32_t* ri = own ? A.i : src->rowind;
    const double* cx = own ? A.x : src->values;
    const int32_t nnz = cp[m];
    out->p = calloc((size_t)n + 1, sizeof(int32_t));
    out->i = malloc(((size_t)nnz + 1) * sizeof(int32_t));
    out->x = malloc(((size_t)nnz + 1) * sizeof(double));
    if (!out->p || !out->i || !out->x) {
        fclib_csc_free(&A);
        free(map);
        wlocal_free(out);
        return io_fail(c, DVI_ERR_NOMEM, "out of memory");
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
    fclib_csc_free(&A);
    if (solution) {
        out->r = calloc((size_t)n + 1, sizeof(double));
        out->u = malloc(((size_t)n + 1) * sizeof(double));
        if (!out->r || !out->u) {
            free(map);
            wlocal_free(out);
            return io_fail(c, DVI_ERR_NOMEM, "out of memory");
        }
        for (int32_t i = 0; i < m; i++) out->r[map[i]] = solution[i];
        csc Wl = {n, n, out->p, out->i, out->x};
        fclib_csc_mul(&Wl, out->r, out->u);
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
    io_msg c = {msg, msg_size, path};
    if (msg && msg_size) msg[0] = '\0';
    if (!p || !path) {
        c.prefix = NULL;
        return io_fail(&c, DVI_ERR_INVALID_ARG, "NULL argument");
    }
    if (p->G) /* FCLIB's local problem is W = H M⁻¹ Hᵀ: a low-rank term would be lost */
        return io_fail(&c, DVI_ERR_UNSUPPORTED, "G: FCLIB has no low-rank term (give the problem as W)");
    if (p->frames) { /* written from D: the frames become its columns */
        ccp_expanded e;
        char emsg[256];
        dvi_status est = ccp_expand(p, &e, emsg, sizeof emsg);
        if (est == DVI_OK) est = dvi_fclib_write_local(&e.problem, solution, path, msg, msg_size);
        else io_fail(&c, est, "%s", emsg);
        ccp_expanded_free(&e);
        return est;
    }
    char vmsg[256];
    dvi_status st = dvi_ccp_validate(p, vmsg, sizeof vmsg);
    if (st != DVI_OK) return io_fail(&c, st, "%s", vmsg);
    if (solution)
        for (int32_t i = 0; i < p->rows; i++)
            if (!isfinite(solution[i])) return io_fail(&c, DVI_ERR_INVALID_ARG, "solution[%d]: not finite", i);
    wlocal w;
    if ((st = build_local(&c, p, solution, &w)) != DVI_OK) return st;

    h5quiet q;
    fclib_quiet_begin(&q);
    char detail[192] = "";
    hid_t gcpl = -1, dcpl = -1, file = -1;
    gcpl = H5Pcreate(H5P_GROUP_CREATE);
    dcpl = H5Pcreate(H5P_DATASET_CREATE);
    bool ok = gcpl >= 0 && dcpl >= 0 && H5Pset_obj_track_times(gcpl, 0) >= 0 &&
              H5Pset_obj_track_times(dcpl, 0) >= 0;
    if (ok) {
        file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
        if (file < 0) {
            fclib_hdf5_detail(detail);
            st = io_fail(&c, DVI_ERR_IO, "cannot create the file%s", detail);
        } else {
            ok = write_local_file(file, &w, gcpl, dcpl);
            if (!ok) fclib_hdf5_detail(detail);
            if (H5Fclose(file) < 0 && ok) {
                ok = false;
                fclib_hdf5_detail(detail);
            }
            if (!ok) {
                st = io_fail(&c, DVI_ERR_IO, "write error%s", detail);
                remove(path);
            }
        }
    } else {
        st = io_fail(&c, DVI_ERR_NOMEM, "cannot set up HDF5 properties");
    }
    if (dcpl >= 0) H5Pclose(dcpl);
    if (gcpl >= 0) H5Pclose(gcpl);
    fclib_quiet_end(&q);
    wlocal_free(&w);
    return st;
}
