/* siconos_dat_to_fclib — converts a 3D friction-contact problem in Siconos
 * Numerics' text format (the .dat files of its test data) to a local FCLIB
 * problem (HDF5), so that bench_fclib and the other FCLIB readers can use it.
 *
 *   siconos_dat_to_fclib IN.dat OUT.hdf5 [TITLE]
 *
 * The text format (what Siconos's frictionContact_printInFile writes):
 *
 *   d                      dimension of the contact space (only 3 is converted)
 *   nc                     number of contacts
 *   storage                0 = dense, 1 = sparse block (SBM)
 *   size0 size1            rows, columns (one per line)
 *   dense:   "size0 size1", then the size0·size1 values column by column
 *   SBM:     nbblocks; blocknumber0; blocknumber1;
 *            blocksize0[blocknumber0], blocksize1[blocknumber1]  (cumulative row / column ends)
 *            filled1; filled2; index1[filled1] (block-row pointers); index2[filled2] (block columns)
 *            then, block row by block row, each block: its number, then its values column by column
 *   q[size0], mu[nc]
 *
 * The output holds /fclib_local: spacedim = 3, W in compressed rows
 * (nz = −2; an SBM keeps every entry of its blocks, explicit zeros
 * included; a dense matrix keeps its nonzeros), vectors/q, vectors/mu, and
 * info/title, info/description, info/math_info. W is written as the file
 * gives it, symmetric or not. An existing OUT is replaced. Object time
 * stamps are off: the same input gives the same bytes. Exit status 0, or 1
 * with a message naming the input and what is wrong. */
#include <errno.h>
#include <hdf5.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct reader {
    FILE* f;
    const char* path;
    bool failed;
} reader;

static void fail(reader* rd, const char* what)
{
    if (!rd->failed) fprintf(stderr, "siconos_dat_to_fclib: %s: %s\n", rd->path, what);
    rd->failed = true;
}

static long read_long(reader* rd, const char* what, long lo, long hi)
{
    long v = 0;
    if (rd->failed) return 0;
    if (fscanf(rd->f, "%ld", &v) != 1 || v < lo || v > hi) {
        char m[160];
        snprintf(m, sizeof m, "%s: expected an integer in [%ld, %ld]", what, lo, hi);
        fail(rd, m);
        return 0;
    }
    return v;
}

static double read_double(reader* rd, const char* what)
{
    double v = 0.0;
    if (rd->failed) return 0.0;
    if (fscanf(rd->f, "%lf", &v) != 1 || !isfinite(v)) {
        char m[160];
        snprintf(m, sizeof m, "%s: expected a finite number", what);
        fail(rd, m);
        return 0.0;
    }
    return v;
}

/* The matrix as triplets, later sorted into rows. */
typedef struct entries {
    int32_t* row;
    int32_t* col;
    double* val;
    size_t n, cap;
} entries;

static bool push(entries* e, int32_t r, int32_t c, double v)
{
    if (e->n == e->cap) {
        size_t cap = e->cap ? 2 * e->cap : 1024;
        int32_t* nr = realloc(e->row, cap * sizeof *nr);
        if (nr) e->row = nr;
        int32_t* nc = realloc(e->col, cap * sizeof *nc);
        if (nc) e->col = nc;
        double* nv = realloc(e->val, cap * sizeof *nv);
        if (nv) e->val = nv;
        if (!nr || !nc || !nv) return false;
        e->cap = cap;
    }
    e->row[e->n] = r;
    e->col[e->n] = c;
    e->val[e->n] = v;
    e->n++;
    return true;
}

static void read_dense(reader* rd, long m, entries* e)
{
    long r0 = read_long(rd, "dense size0", m, m);
    long c0 = read_long(rd, "dense size1", m, m);
    (void)r0;
    (void)c0;
    for (long j = 0; j < m && !rd->failed; j++) {
        for (long i = 0; i < m && !rd->failed; i++) {
            double v = read_double(rd, "dense value");
            if (v != 0.0 && !push(e, (int32_t)i, (int32_t)j, v)) fail(rd, "out of memory");
        }
    }
}

static void read_sbm(reader* rd, long m, entries* e)
{
    long nbblocks = read_long(rd, "nbblocks", 0, 100000000);
    if (nbblocks == 0 || rd->failed) return;
    long bn0 = read_long(rd, "blocknumber0", 1, m);
    long bn1 = read_long(rd, "blocknumber1", 1, m);
    long* bs0 = calloc((size_t)bn0, sizeof *bs0);
    long* bs1 = calloc((size_t)bn1, sizeof *bs1);
    long* idx1 = NULL;
    long* idx2 = NULL;
    if (!bs0 || !bs1) fail(rd, "out of memory");
    for (long k = 0; k < bn0 && !rd->failed; k++) bs0[k] = read_long(rd, "blocksize0", k ? bs0[k - 1] + 1 : 1, m);
    for (long k = 0; k < bn1 && !rd->failed; k++) bs1[k] = read_long(rd, "blocksize1", k ? bs1[k - 1] + 1 : 1, m);
    if (!rd->failed && (bs0[bn0 - 1] != m || bs1[bn1 - 1] != m)) fail(rd, "block sizes do not add up to the matrix size");
    long filled1 = read_long(rd, "filled1", bn0 + 1, bn0 + 1);
    long filled2 = read_long(rd, "filled2", nbblocks, nbblocks);
    if (!rd->failed) {
        idx1 = calloc((size_t)filled1, sizeof *idx1);
        idx2 = calloc((size_t)filled2, sizeof *idx2);
        if (!idx1 || !idx2) fail(rd, "out of memory");
    }
    for (long k = 0; k < filled1 && !rd->failed; k++) idx1[k] = read_long(rd, "index1_data", k ? idx1[k - 1] : 0, filled2);
    if (!rd->failed && (idx1[0] != 0 || idx1[filled1 - 1] != filled2)) fail(rd, "index1_data does not span the blocks");
    for (long k = 0; k < filled2 && !rd->failed; k++) idx2[k] = read_long(rd, "index2_data", 0, bn1 - 1);
    for (long br = 0; br + 1 < filled1 && !rd->failed; br++) {
        long row0 = br ? bs0[br - 1] : 0, rows = bs0[br] - row0;
        for (long b = idx1[br]; b < idx1[br + 1] && !rd->failed; b++) {
            long num = read_long(rd, "block number", b, b);
            long bc = idx2[num];
            long col0 = bc ? bs1[bc - 1] : 0, cols = bs1[bc] - col0;
            for (long j = 0; j < cols && !rd->failed; j++) {
                for (long i = 0; i < rows && !rd->failed; i++) {
                    double v = read_double(rd, "block value");
                    if (!push(e, (int32_t)(row0 + i), (int32_t)(col0 + j), v)) fail(rd, "out of memory");
                }
            }
        }
    }
    free(bs0);
    free(bs1);
    free(idx1);
    free(idx2);
}

/* ---- writing ---------------------------------------------------------------------------- */

static hid_t g_gcpl = -1, g_dcpl = -1;

static bool write_array(hid_t loc, const char* name, hid_t mem_type, hid_t file_type, const void* data, size_t n)
{
    hsize_t dim = n;
    hid_t sp = H5Screate_simple(1, &dim, NULL);
    hid_t ds = sp >= 0 ? H5Dcreate2(loc, name, file_type, sp, H5P_DEFAULT, g_dcpl, H5P_DEFAULT) : -1;
    bool ok = ds >= 0 && (n == 0 || H5Dwrite(ds, mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) >= 0);
    if (ds >= 0) H5Dclose(ds);
    if (sp >= 0) H5Sclose(sp);
    return ok;
}

static bool write_int(hid_t loc, const char* name, int32_t v)
{
    return write_array(loc, name, H5T_NATIVE_INT32, H5T_STD_I32LE, &v, 1);
}

static bool write_string(hid_t loc, const char* name, const char* s)
{
    hid_t ty = H5Tcopy(H5T_C_S1);
    bool ok = ty >= 0 && H5Tset_size(ty, strlen(s) + 1) >= 0 && H5Tset_strpad(ty, H5T_STR_NULLTERM) >= 0;
    hid_t sp = H5Screate(H5S_SCALAR);
    hid_t ds = ok && sp >= 0 ? H5Dcreate2(loc, name, ty, sp, H5P_DEFAULT, g_dcpl, H5P_DEFAULT) : -1;
    ok = ds >= 0 && H5Dwrite(ds, ty, H5S_ALL, H5S_ALL, H5P_DEFAULT, s) >= 0;
    if (ds >= 0) H5Dclose(ds);
    if (sp >= 0) H5Sclose(sp);
    if (ty >= 0) H5Tclose(ty);
    return ok;
}

static bool write_file(const char* path, int32_t m, const int32_t* p, const int32_t* ci, const double* x,
                       const double* q, const double* mu, int32_t nc, const char* title, const char* description)
{
    g_gcpl = H5Pcreate(H5P_GROUP_CREATE);
    g_dcpl = H5Pcreate(H5P_DATASET_CREATE);
    bool ok = g_gcpl >= 0 && g_dcpl >= 0 && H5Pset_obj_track_times(g_gcpl, 0) >= 0 &&
              H5Pset_obj_track_times(g_dcpl, 0) >= 0;
    hid_t file = ok ? H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT) : -1;
    hid_t top = file >= 0 ? H5Gcreate2(file, "fclib_local", H5P_DEFAULT, g_gcpl, H5P_DEFAULT) : -1;
    hid_t w = top >= 0 ? H5Gcreate2(top, "W", H5P_DEFAULT, g_gcpl, H5P_DEFAULT) : -1;
    hid_t vec = top >= 0 ? H5Gcreate2(top, "vectors", H5P_DEFAULT, g_gcpl, H5P_DEFAULT) : -1;
    hid_t info = top >= 0 ? H5Gcreate2(top, "info", H5P_DEFAULT, g_gcpl, H5P_DEFAULT) : -1;
    int32_t nnz = p[m];
    ok = w >= 0 && vec >= 0 && info >= 0 && write_int(top, "spacedim", 3) && write_int(w, "m", m) &&
         write_int(w, "n", m) && write_int(w, "nz", -2) && write_int(w, "nzmax", nnz) &&
         write_array(w, "p", H5T_NATIVE_INT32, H5T_STD_I32LE, p, (size_t)m + 1) &&
         write_array(w, "i", H5T_NATIVE_INT32, H5T_STD_I32LE, ci, (size_t)nnz) &&
         write_array(w, "x", H5T_NATIVE_DOUBLE, H5T_IEEE_F64LE, x, (size_t)nnz) &&
         write_array(vec, "q", H5T_NATIVE_DOUBLE, H5T_IEEE_F64LE, q, (size_t)m) &&
         write_array(vec, "mu", H5T_NATIVE_DOUBLE, H5T_IEEE_F64LE, mu, (size_t)nc) &&
         write_string(info, "title", title) && write_string(info, "description", description) &&
         write_string(info, "math_info", "");
    if (info >= 0) H5Gclose(info);
    if (vec >= 0) H5Gclose(vec);
    if (w >= 0) H5Gclose(w);
    if (top >= 0) H5Gclose(top);
    if (file >= 0 && H5Fclose(file) < 0) ok = false;
    if (g_gcpl >= 0) H5Pclose(g_gcpl);
    if (g_dcpl >= 0) H5Pclose(g_dcpl);
    if (!ok) remove(path);
    return ok;
}

/* Sorts the entries into compressed rows (columns ascending, duplicates summed). */
static bool to_csr(const entries* e, int32_t m, int32_t** p_out, int32_t** ci_out, double** x_out)
{
    int32_t* p = calloc((size_t)m + 1, sizeof *p);
    int32_t* next = calloc((size_t)m + 1, sizeof *next);
    int32_t* ci = malloc((e->n + 1) * sizeof *ci);
    double* x = malloc((e->n + 1) * sizeof *x);
    if (!p || !next || !ci || !x) {
        free(p), free(next), free(ci), free(x);
        return false;
    }
    for (size_t k = 0; k < e->n; k++) p[e->row[k] + 1]++;
    for (int32_t r = 0; r < m; r++) p[r + 1] += p[r];
    memcpy(next, p, ((size_t)m + 1) * sizeof *p);
    for (size_t k = 0; k < e->n; k++) {
        int32_t at = next[e->row[k]]++;
        ci[at] = e->col[k];
        x[at] = e->val[k];
    }
    /* insertion sort within each row (rows are short), then sum duplicates */
    int32_t out = 0;
    for (int32_t r = 0; r < m; r++) {
        int32_t a = p[r], b = p[r + 1];
        for (int32_t k = a + 1; k < b; k++) {
            int32_t c = ci[k];
            double v = x[k];
            int32_t j = k - 1;
            for (; j >= a && ci[j] > c; j--) {
                ci[j + 1] = ci[j];
                x[j + 1] = x[j];
            }
            ci[j + 1] = c;
            x[j + 1] = v;
        }
        p[r] = out;
        for (int32_t k = a; k < b; k++) {
            if (out > p[r] && ci[out - 1] == ci[k]) {
                x[out - 1] += x[k];
            } else {
                ci[out] = ci[k];
                x[out] = x[k];
                out++;
            }
        }
    }
    p[m] = out;
    free(next);
    *p_out = p;
    *ci_out = ci;
    *x_out = x;
    return true;
}

int main(int argc, char** argv)
{
    if (argc < 3 || argc > 4) {
        fprintf(stderr, "usage: %s IN.dat OUT.hdf5 [TITLE]\n"
                        "Converts a 3D friction-contact problem in Siconos's text format to a local FCLIB problem.\n",
                argv[0]);
        return 1;
    }
    reader rd = {fopen(argv[1], "r"), argv[1], false};
    if (!rd.f) {
        fprintf(stderr, "siconos_dat_to_fclib: %s: %s\n", argv[1], strerror(errno));
        return 1;
    }
    long d = read_long(&rd, "dimension", 1, 3);
    if (!rd.failed && d != 3) fail(&rd, "only 3D problems (dimension 3) are converted");
    long nc = read_long(&rd, "number of contacts", 1, 10000000);
    long storage = read_long(&rd, "storage type", 0, 2);
    if (!rd.failed && storage == 2) fail(&rd, "storage type 2 (sparse) is not converted");
    long m = read_long(&rd, "size0", 3 * nc, 3 * nc);
    read_long(&rd, "size1", 3 * nc, 3 * nc);
    entries e = {0};
    if (!rd.failed) {
        if (storage == 0)
            read_dense(&rd, m, &e);
        else
            read_sbm(&rd, m, &e);
    }
    double* q = calloc((size_t)m + 1, sizeof *q);
    double* mu = calloc((size_t)nc + 1, sizeof *mu);
    if (!q || !mu) fail(&rd, "out of memory");
    for (long k = 0; k < m && !rd.failed; k++) q[k] = read_double(&rd, "q");
    for (long k = 0; k < nc && !rd.failed; k++) {
        mu[k] = read_double(&rd, "mu");
        if (!rd.failed && mu[k] < 0.0) fail(&rd, "mu: negative friction coefficient");
    }
    fclose(rd.f);
    int status = 1;
    int32_t *p = NULL, *ci = NULL;
    double* x = NULL;
    if (!rd.failed) {
        if (!to_csr(&e, (int32_t)m, &p, &ci, &x)) {
            fail(&rd, "out of memory");
        } else {
            const char* base = strrchr(argv[1], '/');
            base = base ? base + 1 : argv[1];
            char description[512];
            snprintf(description, sizeof description,
                     "%ld contacts; converted from Siconos Numerics' text format (%s) by tools/siconos_dat_to_fclib",
                     nc, base);
            if (write_file(argv[2], (int32_t)m, p, ci, x, q, mu, (int32_t)nc, argc > 3 ? argv[3] : base,
                           description)) {
                status = 0;
            } else {
                fprintf(stderr, "siconos_dat_to_fclib: %s: cannot write the file\n", argv[2]);
            }
        }
    }
    free(p);
    free(ci);
    free(x);
    free(q);
    free(mu);
    free(e.row);
    free(e.col);
    free(e.val);
    return status;
}
