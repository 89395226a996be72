/* dvicontact — CCP problem: inverse-mass blocks, expansion of contact
 * frames, evaluation. Validation is in ccp_check.c. */
#include "ccp_work.h"
#include "error.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

dvi_ccp_problem dvi_ccp_problem_empty(void)
{
    dvi_ccp_problem p;
    memset(&p, 0, sizeof p);
    return p;
}

dvi_status dvi_inv_mass_block(double mass, const double inertia[9], double out[36])
{
    if (!out || !inertia) return base_error_set(DVI_ERR_INVALID_ARG, "dvi_inv_mass_block: inertia or out is NULL");
    memset(out, 0, 36 * sizeof(double));
    if (!isfinite(mass) || mass < 0.0)
        return base_error_setf(DVI_ERR_INVALID_ARG, "mass: must be finite and >= 0 (got %g)", mass);
    double s = 0.0;
    for (int k = 0; k < 9; k++) {
        if (!isfinite(inertia[k]))
            return base_error_setf(DVI_ERR_INVALID_ARG, "inertia[%d]: must be finite (got %g)", k, inertia[k]);
        if (fabs(inertia[k]) > s) s = fabs(inertia[k]);
    }
    if (mass == 0.0) /* fixed body */
        return s == 0.0 ? DVI_OK
                        : base_error_set(DVI_ERR_INVALID_ARG, "inertia: must be zero when mass is 0 (a fixed body)");
    const double* J = inertia;
    for (int i = 0; i < 3; i++)
        for (int j = i + 1; j < 3; j++)
            if (fabs(J[3 * i + j] - J[3 * j + i]) > 1e-12 * s)
                return base_error_setf(DVI_ERR_INVALID_ARG, "inertia: not symmetric ([%d][%d] = %g, [%d][%d] = %g)", i,
                                      j, J[3 * i + j], j, i, J[3 * j + i]);
    /* inverse by cofactors; reject singular or indefinite inertia */
    double c00 = J[4] * J[8] - J[5] * J[7], c01 = J[5] * J[6] - J[3] * J[8], c02 = J[3] * J[7] - J[4] * J[6];
    double det = J[0] * c00 + J[1] * c01 + J[2] * c02;
    if (!(det > 1e-12 * s * s * s) || J[0] <= 0.0 || J[0] * J[4] - J[1] * J[3] <= 0.0)
        return base_error_setf(DVI_ERR_SINGULAR, "inertia: singular or not positive definite (determinant %g)", det);
    double inv[9] = {c00 / det, (J[2] * J[7] - J[1] * J[8]) / det, (J[1] * J[5] - J[2] * J[4]) / det,
                     c01 / det, (J[0] * J[8] - J[2] * J[6]) / det, (J[2] * J[3] - J[0] * J[5]) / det,
                     c02 / det, (J[1] * J[6] - J[0] * J[7]) / det, (J[0] * J[4] - J[1] * J[3]) / det};
    for (int i = 0; i < 3; i++) {
        out[7 * i] = 1.0 / mass;
        for (int j = 0; j < 3; j++) out[6 * (3 + i) + 3 + j] = 0.5 * (inv[3 * i + j] + inv[3 * j + i]);
    }
    return DVI_OK;
}

void ccp_expanded_free(ccp_expanded* e)
{
    if (!e) return;
    free(e->colptr);
    free(e->rowind);
    free(e->values);
    memset(e, 0, sizeof *e);
}

dvi_status ccp_expand(const dvi_ccp_problem* p, ccp_expanded* e, char* msg, size_t msg_size)
{
    memset(e, 0, sizeof *e);
    dvi_status st = dvi_ccp_validate(p, msg, msg_size);
    if (st != DVI_OK) return st;
    e->problem = *p;
    if (!p->frames || p->frames->count == 0) {
        e->problem.frames = NULL;
        return DVI_OK;
    }
    /* the work holds the frames compactly and gives each row's 6-vectors */
    ccp_work w;
    memset(&w, 0, sizeof w);
    st = ccp_work_prepare(&w, p, 1, msg, msg_size);
    if (st != DVI_OK) {
        ccp_work_free(&w);
        return st;
    }
    const dvi_csc* D = p->D;
    const int32_t m = p->rows;
    size_t nnz = (size_t)D->colptr[m] + 12 * (size_t)m;
    e->colptr = malloc(((size_t)m + 1) * sizeof(int32_t));
    e->rowind = malloc(nnz * sizeof(int32_t));
    e->values = malloc(nnz * sizeof(double));
    if (!e->colptr || !e->rowind || !e->values) {
        ccp_work_free(&w);
        ccp_expanded_free(e);
        if (msg && msg_size) snprintf(msg, msg_size, "out of memory expanding the contact frames");
        return DVI_ERR_NOMEM;
    }
    size_t nz = 0;
    for (int32_t j = 0; j < m; j++) {
        e->colptr[j] = (int32_t)nz;
        int32_t c = w.block_fc[ccp_work_row_block(&w, j)];
        if (c < 0) {
            for (int32_t k = D->colptr[j]; k < D->colptr[j + 1]; k++) {
                e->rowind[nz] = D->rowind[k];
                e->values[nz++] = D->values[k];
            }
            continue;
        }
        /* the two 6-vectors of the row, lower body first (one body twice: summed) */
        double ja[6], jb[6];
        ccp_work_frame_row(&w, c, j - w.fc_row[c], 0, ja);
        ccp_work_frame_row(&w, c, j - w.fc_row[c], 1, jb);
        int32_t b1 = w.fc_body[2 * (size_t)c], b2 = w.fc_body[2 * (size_t)c + 1];
        const double* v1 = ja;
        const double* v2 = jb;
        if (b1 == b2 && b1 >= 0) {
            for (int k = 0; k < 6; k++) ja[k] += jb[k];
            b2 = -1;
        } else if (b2 >= 0 && (b1 < 0 || b2 < b1)) {
            int32_t t = b1;
            b1 = b2;
            b2 = t;
            v1 = jb;
            v2 = ja;
        }
        for (int side = 0; side < 2; side++) {
            int32_t b = side ? b2 : b1;
            if (b < 0) continue;
            for (int k = 0; k < 6; k++) {
                e->rowind[nz] = 6 * b + k;
                e->values[nz++] = (side ? v2 : v1)[k];
            }
        }
    }
    e->colptr[m] = (int32_t)nz;
    ccp_work_free(&w);
    e->D = (dvi_csc){D->rows, D->cols, e->colptr, e->rowind, e->values};
    e->problem.D = &e->D;
    e->problem.frames = NULL;
    return DVI_OK;
}

dvi_status ccp_evaluate_with(const dvi_ccp_problem* p, const dvi_csc* W, const double* gamma,
                                 dvi_ccp_metrics* out)
{
    if (!p || !gamma || !out) return base_error_set(DVI_ERR_INVALID_ARG, "dvi_ccp_evaluate: p, gamma or out is NULL");
    if (W && (W->rows != p->rows || W->cols != p->rows))
        return base_error_setf(DVI_ERR_INVALID_ARG, "W: must be %d x %d (got %d x %d)", (int)p->rows, (int)p->rows,
                              (int)W->rows, (int)W->cols);
    ccp_work w;
    memset(&w, 0, sizeof w);
    char text[512] = "";
    dvi_status st = ccp_work_prepare(&w, p, 1, text, sizeof text);
    if (st != DVI_OK) base_error_set(st, text);
    if (st == DVI_OK) {
        double* u = w.vec[0];
        if (W) ccp_csc_mul(W, gamma, u);
        else ccp_work_apply(&w, gamma, u);
        for (int32_t i = 0; i < w.m; i++) u[i] += p->r[i];
        ccp_work_metrics(&w, gamma, u, out, NULL);
    }
    ccp_work_free(&w);
    return st;
}

dvi_status dvi_ccp_evaluate(const dvi_ccp_problem* p, const double* gamma, dvi_ccp_metrics* out)
{
    return ccp_evaluate_with(p, NULL, gamma, out);
}

dvi_status dvi_ccp_velocity(const dvi_ccp_problem* p, const double* gamma, double* dv)
{
    if (!p || !gamma || !dv) return base_error_set(DVI_ERR_INVALID_ARG, "dvi_ccp_velocity: p, gamma or dv is NULL");
    if (!p->D) return base_error_set(DVI_ERR_UNSUPPORTED, "D: NULL (dvi_ccp_velocity needs the factor form)");
    ccp_work w;
    memset(&w, 0, sizeof w);
    char text[512] = "";
    dvi_status st = ccp_work_prepare(&w, p, 1, text, sizeof text);
    if (st != DVI_OK) base_error_set(st, text);
    if (st == DVI_OK) ccp_work_minv_d(&w, gamma, dv);
    ccp_work_free(&w);
    return st;
}
