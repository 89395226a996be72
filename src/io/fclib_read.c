/* dvicontact — FCLIB files, the reader: local and global problems read into
 * a CCP (read_local, read_global, read_file) and the public calls on them:
 * dvi_fclib_read_ex, dvi_fclib_evaluate, dvi_fclib_file_W, dvi_fclib_solve
 * (fclib_internal.h: the whole job). */
#include "fclib_internal.h"
#include "error.h"

#include "ccp_split.h"
#include "ccp_work.h"
#include "regular_file.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- reading the two kinds -------------------------------------------------------------- */

/* Optional vector of `len` reals at path into *out (NULL when absent). */
static dvi_status read_optional(const io_msg* c, hid_t file, const char* path, int32_t len, double** out)
{
    *out = NULL;
    if (!fclib_link_exists(file, path)) return DVI_OK;
    return fclib_read_reals(c, file, path, len, NULL, out);
}

/* [r; l] of a solution or guess group ("/solution", "/guesses/1"), or NULL. */
static dvi_status read_rl(const io_msg* c, hid_t file, const char* group, int32_t contacts, int32_t equalities,
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
        return io_fail(c, DVI_ERR_NOMEM, "out of memory");
    }
    memcpy(v, r, (size_t)3 * contacts * sizeof(double));
    if (equalities > 0) memcpy(v + 3 * contacts, l, (size_t)equalities * sizeof(double));
    free(r);
    free(l);
    *out = v;
    return DVI_OK;
}

static dvi_status read_spacedim(const io_msg* c, hid_t file, const char* path)
{
    int32_t d = 0;
    dvi_status st = fclib_read_scalar_int(c, file, path, &d);
    if (st != DVI_OK) return st;
    if (d == 2) return io_fail(c, DVI_ERR_UNSUPPORTED, "%s: 2 (two-dimensional contact) is not supported", path);
    if (d != 3) return io_fail(c, DVI_ERR_INVALID_ARG, "%s: %d, expected 3", path, d);
    return DVI_OK;
}

/* The vectors in group `vectors` of a problem's rows: `u` (n, 3 per
 * contact), mu (one per contact) and with equalities `e` (its count said by
 * e_what); then b's blocks (fclib_make_blocks). */
static dvi_status read_vectors(const io_msg* c, hid_t file, built* b, const char* vectors, const char* u, int32_t n,
                               const char* e, const char* e_what, double** uv, double** mu, double** ev)
{
    char path[PATH_MAX_LEN], mu_path[PATH_MAX_LEN];
    snprintf(mu_path, sizeof mu_path, "%smu", vectors);
    snprintf(path, sizeof path, "%s%s", vectors, u);
    dvi_status st = fclib_read_reals(c, file, path, n, " (3 per contact)", uv);
    if (st == DVI_OK) st = fclib_read_reals(c, file, mu_path, b->contacts, " (one per contact)", mu);
    if (st == DVI_OK && b->equalities > 0) {
        snprintf(path, sizeof path, "%s%s", vectors, e);
        st = fclib_read_reals(c, file, path, b->equalities, e_what, ev);
    }
    return st == DVI_OK ? fclib_make_blocks(c, b, *mu, mu_path) : st;
}

/* The square matrix group g, its size the length of the vector at vec. */
static dvi_status read_square(const io_msg* c, hid_t file, const char* g, const char* vec, csc* out)
{
    int32_t n = 0;
    dvi_status st = fclib_dataset_length(c, file, vec, &n);
    if (st != DVI_OK) return st;
    char from[PATH_MAX_LEN + 16];
    snprintf(from, sizeof from, "the length of %s", vec);
    if ((st = fclib_read_matrix(c, file, g, n, from, n, from, out)) != DVI_OK) return st;
    if (out->rows != out->cols)
        return io_fail(c, DVI_ERR_INVALID_ARG, "%s: %d x %d, expected a square matrix", g, out->rows, out->cols);
    return DVI_OK;
}

static dvi_status read_local(const io_msg* c, hid_t file, built* b, dvi_fclib_info* info)
{
    csc W = {0}, V = {0}, R = {0}, full = {0};
    double *q = NULL, *mu = NULL, *s = NULL;
    dvi_status st;
    if ((st = read_spacedim(c, file, "/fclib_local/spacedim")) != DVI_OK) goto done;
    if ((st = read_square(c, file, "/fclib_local/W", "/fclib_local/vectors/q", &W)) != DVI_OK) goto done;
    if (W.rows % 3 != 0 || W.rows == 0) {
        st = io_fail(c, DVI_ERR_INVALID_ARG, "/fclib_local/W: %d rows, expected a positive multiple of 3", W.rows);
        goto done;
    }
    b->contacts = W.rows / 3;
    bool has_v = fclib_link_exists(file, "/fclib_local/V"), has_r = fclib_link_exists(file, "/fclib_local/R");
    if (has_v != has_r) {
        st = io_fail(c, DVI_ERR_INVALID_ARG, "%s: missing (V and R come together)",
                  has_v ? "/fclib_local/R" : "/fclib_local/V");
        goto done;
    }
    if (has_r) {
        if ((st = read_square(c, file, "/fclib_local/R", "/fclib_local/vectors/s", &R)) != DVI_OK) goto done;
        if ((st = fclib_read_matrix(c, file, "/fclib_local/V", W.rows, "the size of W", R.rows, "the size of R", &V)) !=
            DVI_OK)
            goto done;
        b->equalities = R.rows;
    }
    if ((int64_t)3 * b->contacts + b->equalities > INT32_MAX) {
        st = io_fail(c, DVI_ERR_INVALID_ARG, "/fclib_local: too many rows");
        goto done;
    }
    if ((st = read_vectors(c, file, b, "/fclib_local/vectors/", "q", W.rows, "s", " (one per row of R)", &q, &mu, &s)) !=
        DVI_OK)
        goto done;
    b->r = malloc(((size_t)b->rows + 1) * sizeof(double));
    if (!b->r) {
        st = io_fail(c, DVI_ERR_NOMEM, "out of memory");
        goto done;
    }
    memcpy(b->r, q, (size_t)W.rows * sizeof(double));
    if (b->equalities > 0) {
        memcpy(b->r + W.rows, s, (size_t)b->equalities * sizeof(double));
        /* [[W V] [Vᵀ R]] from the entries of the three matrices */
        int64_t nnz = (int64_t)W.p[W.cols] + 2 * (int64_t)V.p[V.cols] + R.p[R.cols];
        if (nnz > INT32_MAX) {
            st = io_fail(c, DVI_ERR_INVALID_ARG, "/fclib_local: too many matrix entries");
            goto done;
        }
        fclib_triplets e;
        if (!fclib_triplets_init(&e, nnz)) {
            st = io_fail(c, DVI_ERR_NOMEM, "out of memory");
            goto done;
        }
        const csc* parts[3] = {&W, &V, &R};
        const int32_t roff[3] = {0, 0, W.rows}, coff[3] = {0, W.rows, W.rows};
        for (int t = 0; t < 3; t++)
            for (int32_t j = 0; j < parts[t]->cols; j++)
                for (int32_t k = parts[t]->p[j]; k < parts[t]->p[j + 1]; k++) {
                    fclib_triplets_add(&e, roff[t] + parts[t]->i[k], coff[t] + j, parts[t]->x[k]);
                    if (t == 1) fclib_triplets_add(&e, W.rows + j, parts[t]->i[k], parts[t]->x[k]); /* Vᵀ */
                }
        dvi_status bs = fclib_triplets_build(&e, b->rows, b->rows, &full);
        fclib_triplets_free(&e);
        if (bs != DVI_OK) {
            st = io_fail(c, DVI_ERR_NOMEM, "out of memory");
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
        if (fclib_complete_triangle(&b->op, &info->triangular) != DVI_OK ||
            fclib_symmetrize(&b->op, &info->asymmetry, &info->symmetrized, &original) != DVI_OK) {
            st = io_fail(c, DVI_ERR_NOMEM, "out of memory");
            goto done;
        }
        if (info->symmetrized) {
            info->file_operator = malloc(sizeof *info->file_operator);
            if (!info->file_operator) {
                fclib_csc_free(&original);
                st = io_fail(c, DVI_ERR_NOMEM, "out of memory");
                goto done;
            }
            info->file_operator->W = original;
        }
    }
    info->kind = DVI_FCLIB_LOCAL;
    fclib_read_title(file, "/fclib_local/info/title", info->title, sizeof info->title);
done:
    fclib_csc_free(&W);
    fclib_csc_free(&V);
    fclib_csc_free(&R);
    fclib_csc_free(&full);
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
        fclib_csc_mul(M, v, mv);
        fclib_csc_mul(B, rl, rhs);
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

static dvi_status read_global(const io_msg* c, hid_t file, uint32_t flags, built* b, dvi_fclib_info* info)
{
    csc M = {0}, H = {0}, G = {0}, B = {0};
    double *f = NULL, *w = NULL, *mu = NULL, *bb = NULL, *wb = NULL, *v = NULL;
    int32_t* starts = NULL;
    dvi_status st;
    if ((st = read_spacedim(c, file, "/fclib_global/spacedim")) != DVI_OK) goto done;
    int32_t nf = 0, nw = 0;
    if ((st = fclib_dataset_length(c, file, "/fclib_global/vectors/f", &nf)) != DVI_OK) goto done;
    if ((st = fclib_dataset_length(c, file, "/fclib_global/vectors/w", &nw)) != DVI_OK) goto done;
    if ((st = fclib_read_matrix(c, file, "/fclib_global/M", nf, "the length of /fclib_global/vectors/f", nf,
                          "the length of /fclib_global/vectors/f", &M)) != DVI_OK)
        goto done;
    if (M.rows != M.cols || M.rows == 0) {
        st = io_fail(c, DVI_ERR_INVALID_ARG, "/fclib_global/M: %d x %d, expected a non-empty square matrix", M.rows,
                  M.cols);
        goto done;
    }
    const int32_t n = M.rows;
    if ((st = fclib_read_matrix(c, file, "/fclib_global/H", n, "the size of M", nw, "the length of /fclib_global/vectors/w",
                          &H)) != DVI_OK)
        goto done;
    if (H.cols % 3 != 0 || H.cols == 0) {
        st = io_fail(c, DVI_ERR_INVALID_ARG, "/fclib_global/H/n: %d columns, expected a positive multiple of 3", H.cols);
        goto done;
    }
    b->contacts = H.cols / 3;
    if (fclib_link_exists(file, "/fclib_global/G")) {
        int32_t nb = 0;
        if ((st = fclib_dataset_length(c, file, "/fclib_global/vectors/b", &nb)) != DVI_OK) goto done;
        if ((st = fclib_read_matrix(c, file, "/fclib_global/G", n, "the size of M", nb,
                              "the length of /fclib_global/vectors/b", &G)) != DVI_OK)
            goto done;
        b->equalities = G.cols;
    }
    if ((int64_t)H.cols + G.cols > INT32_MAX) {
        st = io_fail(c, DVI_ERR_INVALID_ARG, "/fclib_global: too many rows");
        goto done;
    }
    if (fclib_complete_triangle(&M, &info->triangular) != DVI_OK ||
        fclib_symmetrize(&M, &info->asymmetry, &info->symmetrized, NULL) != DVI_OK) {
        st = io_fail(c, DVI_ERR_NOMEM, "out of memory");
        goto done;
    }
    if ((st = fclib_read_reals(c, file, "/fclib_global/vectors/f", n, " (the size of M)", &f)) != DVI_OK) goto done;
    if ((st = read_vectors(c, file, b, "/fclib_global/vectors/", "w", H.cols, "b", " (one per column of G)", &w, &mu,
                           &bb)) != DVI_OK)
        goto done;
    wb = malloc(((size_t)b->rows + 1) * sizeof(double));
    starts = malloc(((size_t)n + 2) * sizeof(int32_t));
    if (!wb || !starts) {
        st = io_fail(c, DVI_ERR_NOMEM, "out of memory");
        goto done;
    }
    memcpy(wb, w, (size_t)H.cols * sizeof(double));
    if (b->equalities > 0) memcpy(wb + H.cols, bb, (size_t)b->equalities * sizeof(double));
    if (fclib_csc_hcat(&H, &G, &B) != DVI_OK) {
        st = io_fail(c, DVI_ERR_NOMEM, "out of memory");
        goto done;
    }
    int32_t nblk = 0;
    int32_t largest = fclib_find_blocks(&M, starts, &nblk);
    if (largest < 0) {
        st = io_fail(c, DVI_ERR_NOMEM, "out of memory");
        goto done;
    }
    if (largest <= 6 && !(flags & DVI_FCLIB_DELASSUS))
        st = fclib_factor_form(c, &M, starts, nblk, &B, f, wb, b, &info->mass_blocks);
    else
        st = fclib_delassus_cholmod(c, &M, &B, f, wb, b);
    if (st != DVI_OK) goto done;
    info->kind = DVI_FCLIB_GLOBAL;
    info->dofs = n;
    fclib_read_title(file, "/fclib_global/info/title", info->title, sizeof info->title);
    /* stored solution: v, checked against M v = H r + G l + f */
    if ((st = read_optional(c, file, "/solution/v", n, &v)) != DVI_OK) goto done;
    if ((st = read_rl(c, file, "/solution", b->contacts, b->equalities, &b->solution)) != DVI_OK) goto done;
    if (v && b->solution) info->v_mismatch = v_mismatch(&M, &B, f, v, b->solution);
    info->v = v;
    v = NULL;
done:
    fclib_csc_free(&M);
    fclib_csc_free(&H);
    fclib_csc_free(&G);
    fclib_csc_free(&B);
    free(f);
    free(w);
    free(mu);
    free(bb);
    free(wb);
    free(v);
    free(starts);
    return st;
}

static dvi_status read_file(const io_msg* c, const char* path, uint32_t flags, built* b, dvi_fclib_info* info)
{
    char why[160];
    FILE* fp = base_open_regular(path, 0, NULL, why, sizeof why);
    if (!fp) return io_fail(c, DVI_ERR_IO, "%s", why);
    unsigned char sig[8] = {0};
    size_t got = fread(sig, 1, sizeof sig, fp);
    fclose(fp);
    static const unsigned char HDF5_SIGNATURE[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
    bool has_sig = got == sizeof sig && memcmp(sig, HDF5_SIGNATURE, sizeof sig) == 0;

    char detail[192];
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    if (fapl >= 0) H5Pset_fclose_degree(fapl, H5F_CLOSE_STRONG);
    hid_t file = H5Fopen(path, H5F_ACC_RDONLY, fapl >= 0 ? fapl : H5P_DEFAULT);
    if (file < 0) fclib_hdf5_detail(detail);
    if (fapl >= 0) H5Pclose(fapl);
    if (file < 0) {
        if (!has_sig && got < sizeof sig && got > 0)
            return io_fail(c, DVI_ERR_PARSE, "not an HDF5 file (%zu bytes, no HDF5 signature)", got);
        if (!has_sig) return io_fail(c, DVI_ERR_PARSE, "not an HDF5 file (no HDF5 signature at offset 0)");
        return io_fail(c, DVI_ERR_PARSE, "damaged or truncated HDF5 file: cannot open it%s", detail);
    }
    dvi_status st;
    bool global = fclib_link_exists(file, "/fclib_global");
    if (global) {
        st = read_global(c, file, flags, b, info);
    } else if (fclib_link_exists(file, "/fclib_local")) {
        st = read_local(c, file, b, info);
        if (st == DVI_OK && (st = read_rl(c, file, "/solution", b->contacts, b->equalities, &b->solution)) != DVI_OK)
            goto out;
    } else {
        st = io_fail(c, DVI_ERR_PARSE, "no /fclib_local or /fclib_global group: not an FCLIB problem");
        goto out;
    }
    if (st != DVI_OK) goto out;
    info->contacts = b->contacts;
    info->equalities = b->equalities;
    /* stored u, checked against W r + q */
    if ((st = read_optional(c, file, "/solution/u", 3 * b->contacts, &info->u)) != DVI_OK) goto out;
    if (info->u && b->solution) {
        double* u = malloc(((size_t)b->rows + 1) * sizeof(double));
        if (u && info->file_operator) fclib_csc_mul(&info->file_operator->W, b->solution, u); /* the file's own W */
        else if (u && fclib_built_apply(b, b->solution, u) != DVI_OK) {
            free(u);
            u = NULL;
        }
        if (!u) {
            free(u);
            st = io_fail(c, DVI_ERR_NOMEM, "out of memory");
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
    if (fclib_link_exists(file, "/guesses")) {
        int32_t count = 0;
        if (fclib_link_exists(file, "/guesses/number_of_guesses")) {
            if ((st = fclib_read_scalar_int(c, file, "/guesses/number_of_guesses", &count)) != DVI_OK) goto out;
            if (count < 0) {
                st = io_fail(c, DVI_ERR_INVALID_ARG, "/guesses/number_of_guesses: %d, expected >= 0", count);
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
        fclib_csc_free(&info->file_operator->W);
        free(info->file_operator);
    }
    memset(info, 0, sizeof *info);
}

dvi_status dvi_fclib_read_ex(const char* path, uint32_t flags, dvi_ccp_file** out, dvi_fclib_info* info,
                            char* msg, size_t msg_size)
{
    io_msg c = {msg, msg_size, path};
    if (msg && msg_size) msg[0] = '\0';
    if (out) *out = NULL;
    dvi_fclib_info local_info;
    dvi_fclib_info* inf = info ? info : &local_info;
    memset(inf, 0, sizeof *inf);
    inf->u_mismatch = NAN;
    inf->v_mismatch = NAN;
    if (!path || !out) {
        c.prefix = NULL;
        return io_fail(&c, DVI_ERR_INVALID_ARG, "NULL argument");
    }
    if (flags & ~DVI_FCLIB_DELASSUS) return io_fail(&c, DVI_ERR_INVALID_ARG, "unknown flags 0x%x", flags);
    built b;
    memset(&b, 0, sizeof b);
    h5quiet q;
    fclib_quiet_begin(&q);
    dvi_status st = read_file(&c, path, flags, &b, inf);
    fclib_quiet_end(&q);
    if (st == DVI_OK) {
        /* the problem as the solvers will see it */
        dvi_ccp_problem p = dvi_ccp_problem_empty();
        dvi_csc op = fclib_csc_view(&b.op);
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
        if (st != DVI_OK) st = io_fail(&c, st, "%s", vmsg);
    }
    if (st == DVI_OK) {
        *out = fclib_pack(&b);
        if (!*out) st = io_fail(&c, DVI_ERR_NOMEM, "out of memory");
    }
    fclib_built_free(&b);
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
    if (!p || !gamma || !out) return base_error_set(DVI_ERR_INVALID_ARG, "dvi_fclib_evaluate: invalid argument (!p || !gamma || !out)");
    if (!info || !info->file_operator) return ccp_evaluate_with(p, NULL, gamma, out);
    const dvi_csc W = fclib_csc_view(&info->file_operator->W);
    return ccp_evaluate_with(p, &W, gamma, out); /* the library's own residual code */
}

dvi_status dvi_fclib_file_W(const dvi_ccp_problem* p, const dvi_fclib_info* info, dvi_csc* out)
{
    if (!p || !out) return base_error_set(DVI_ERR_INVALID_ARG, "dvi_fclib_file_W: invalid argument (!p || !out)");
    memset(out, 0, sizeof *out);
    if (!p->W) /* the factor form: no W to lend */
        return base_error_set(DVI_ERR_UNSUPPORTED,
                             "dvi_fclib_file_W: the problem is in the factor form (read the file with DVI_FCLIB_DELASSUS)");
    if (info && info->file_operator) {
        if (info->file_operator->W.cols != p->rows)
            return base_error_set(DVI_ERR_INVALID_ARG, "dvi_fclib_file_W: the info does not belong to the problem");
        *out = fclib_csc_view(&info->file_operator->W);
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
    const dvi_csc W = fclib_csc_view(&info->file_operator->W);
    if ((!p->W || W.cols != p->rows) && ccp_solver_find(solver_name)) {
        memset(res, 0, sizeof *res);
        res->status = DVI_SOLVE_BAD_INPUT;
        snprintf(res->message, sizeof res->message, "%s", "the problem does not belong to this FCLIB info");
        return base_error_set(DVI_ERR_INVALID_ARG, res->message);
    }
    const dvi_status st = ccp_solve_split(solver_name, settings, p, &W, gamma, res);
    if (st != DVI_OK) base_error_set(st, res->message[0] ? res->message : NULL);
    return st;
}
