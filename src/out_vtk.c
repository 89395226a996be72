/* Output writers (dvi/output.h): VTK XML frames and ParaView collections. */
#include "out_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

/* ==== VTK ================================================================ */

static void sb_num(out_sbuf* b, double v)
{
    char t[32];
    int n = out_format_g10(t, v);
    out_sb_putn(b, t, (size_t)n);
}

/* Base64 of n bytes (RFC 4648, with padding). */
static void sb_base64(out_sbuf* b, const unsigned char* d, size_t n)
{
    static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    char q[4];
    for (size_t i = 0; i < n; i += 3) {
        const unsigned v = (unsigned)d[i] << 16 | (i + 1 < n ? (unsigned)d[i + 1] << 8 : 0u) |
                           (i + 2 < n ? (unsigned)d[i + 2] : 0u);
        q[0] = tab[v >> 18 & 63];
        q[1] = tab[v >> 12 & 63];
        q[2] = i + 1 < n ? tab[v >> 6 & 63] : '=';
        q[3] = i + 2 < n ? tab[v & 63] : '=';
        out_sb_putn(b, q, 4);
    }
}

/* The body of a binary DataArray: base64 of a UInt64 byte count (the
 * header_type of the file) and the values, little-endian, as VTK reads
 * format="binary" without a compressor. */
static void vtk_binary_body(out_sbuf* b, const void* data, size_t bytes)
{
    unsigned char* t = malloc(bytes + 8);
    if (!t) {
        b->failed = 1;
        return;
    }
    uint64_t h = (uint64_t)bytes;
    for (int k = 0; k < 8; k++) t[k] = (unsigned char)(h >> (8 * k));
    memcpy(t + 8, data, bytes); /* the machine is little-endian (byte_order in the file) */
    out_sb_puts(b, "          ");
    sb_base64(b, t, bytes + 8);
    out_sb_putn(b, "\n", 1);
    free(t);
}

/* Writes a Float64 DataArray of count tuples × comps from data[count*stride]
 * starting at offset (values at data[i*stride + offset + c]), as text
 * (ascii) or base64 of the doubles themselves. */
static void vtk_array(out_sbuf* b, const char* name, int comps, const double* data, int count, int stride, int offset,
                      bool ascii)
{
    out_sb_printf(b, "        <DataArray type=\"Float64\" Name=\"%s\"", name);
    if (comps > 1) out_sb_printf(b, " NumberOfComponents=\"%d\"", comps);
    out_sb_printf(b, " format=\"%s\">\n", ascii ? "ascii" : "binary");
    if (!ascii) {
        const size_t nv = (size_t)count * (size_t)comps;
        double* v = malloc((nv ? nv : 1) * sizeof *v);
        if (!v) {
            b->failed = 1;
            return;
        }
        for (int i = 0; i < count; i++)
            for (int c = 0; c < comps; c++)
                v[(size_t)i * comps + c] = data[(size_t)i * (size_t)stride + (size_t)offset + (size_t)c];
        vtk_binary_body(b, v, nv * sizeof *v);
        free(v);
    } else {
        for (int i = 0; i < count; i++) {
            out_sb_puts(b, "          ");
            for (int c = 0; c < comps; c++) {
                if (c) out_sb_putn(b, " ", 1);
                sb_num(b, data[(size_t)i * (size_t)stride + (size_t)offset + (size_t)c]);
            }
            out_sb_putn(b, "\n", 1);
        }
    }
    out_sb_puts(b, "        </DataArray>\n");
}

static void vtk_int_array(out_sbuf* b, const char* name, const int32_t* data, int count, int stride, int offset, bool ascii)
{
    out_sb_printf(b, "        <DataArray type=\"Int32\" Name=\"%s\" format=\"%s\">\n", name, ascii ? "ascii" : "binary");
    if (!ascii) {
        int32_t* v = malloc(((size_t)count + 1) * sizeof *v);
        if (!v) {
            b->failed = 1;
            return;
        }
        for (int i = 0; i < count; i++) v[i] = data[(size_t)i * (size_t)stride + (size_t)offset];
        vtk_binary_body(b, v, (size_t)count * sizeof *v);
        free(v);
    } else {
        for (int i = 0; i < count; i++) out_sb_printf(b, "          %d\n", (int)data[(size_t)i * (size_t)stride + (size_t)offset]);
    }
    out_sb_puts(b, "        </DataArray>\n");
}

/* An Int64 DataArray of i + first, i = 0 … n−1 (the vertices' connectivity and offsets). */
static void vtk_index_array(out_sbuf* b, const char* name, int n, int first, bool ascii)
{
    out_sb_printf(b, "        <DataArray type=\"Int64\" Name=\"%s\" format=\"%s\">\n", name, ascii ? "ascii" : "binary");
    if (!ascii) {
        int64_t* v = malloc(((size_t)n + 1) * sizeof *v);
        if (!v) {
            b->failed = 1;
            return;
        }
        for (int i = 0; i < n; i++) v[i] = (int64_t)i + first;
        vtk_binary_body(b, v, (size_t)n * sizeof *v);
        free(v);
    } else {
        for (int i = 0; i < n; i++) out_sb_printf(b, "%s%d", i % 16 == 0 ? (i ? "\n          " : "          ") : " ", i + first);
        if (n) out_sb_putn(b, "\n", 1);
    }
    out_sb_puts(b, "        </DataArray>\n");
}

static void vtk_head(out_sbuf* b, int n, const char* scalars, const char* vectors)
{
    out_sb_puts(b, "<?xml version=\"1.0\"?>\n"
               "<VTKFile type=\"PolyData\" version=\"1.0\" byte_order=\"LittleEndian\" header_type=\"UInt64\">\n"
               "  <PolyData>\n");
    out_sb_printf(b,
              "    <Piece NumberOfPoints=\"%d\" NumberOfVerts=\"%d\" NumberOfLines=\"0\" NumberOfStrips=\"0\" "
              "NumberOfPolys=\"0\">\n",
              n, n);
    out_sb_printf(b, "      <PointData Scalars=\"%s\" Vectors=\"%s\">\n", scalars, vectors);
}

static void vtk_tail(out_sbuf* b, int n, const double* pts, int stride, bool ascii)
{
    out_sb_puts(b, "      </PointData>\n      <Points>\n");
    vtk_array(b, "Points", 3, pts, n, stride, 0, ascii);
    out_sb_puts(b, "      </Points>\n      <Verts>\n");
    vtk_index_array(b, "connectivity", n, 0, ascii);
    vtk_index_array(b, "offsets", n, 1, ascii);
    out_sb_puts(b, "      </Verts>\n    </Piece>\n  </PolyData>\n</VTKFile>\n");
}

/* Body record: doubles laid out as below. */
enum { B_POS = 0, B_Q = 3, B_ROT = 7, B_AX = 16, B_AZ = 19, B_V = 22, B_W = 25, B_SPEED = 28, B_MASS = 29,
       B_RAD = 30, B_STRIDE = 31 };
enum { C_POS = 0, C_F = 3, C_N = 6, C_FM = 9, C_FN = 10, C_D = 11, C_STRIDE = 12 };

int dvi_vtk_write_frame(const dvi_world* world, const char* dir, int frame, char* msg, size_t msg_size)
{
    return dvi_vtk_write_frame_ex(world, dir, frame, false, msg, msg_size);
}

int dvi_vtk_write_frame_ex(const dvi_world* world, const char* dir, int frame, bool ascii, char* msg,
                           size_t msg_size)
{
    const uint16_t one = 1;
    if (*(const unsigned char*)&one != 1) ascii = true; /* the files say LittleEndian */
    if (!world) return out_fail(msg, msg_size, "VTK frame: no world");
    if (!dir || !*dir) return out_fail(msg, msg_size, "VTK frame: no output directory");
    if (frame < 0) return out_fail(msg, msg_size, "VTK frame: bad frame number %d", frame);
    size_t dl = strlen(dir) + 64;
    char* fdir = malloc(dl);
    char* path = malloc(dl);
    double* bd = NULL;
    int32_t* bi = NULL;
    double* cd = NULL;
    int32_t* ci = NULL;
    out_sbuf b = {0};
    int rc = -1;
    if (!fdir || !path) {
        out_fail(msg, msg_size, "%s: out of memory", dir);
        goto done;
    }
    snprintf(fdir, dl, "%s/frames", dir);
    if (dvi_make_dirs(fdir, msg, msg_size)) goto done;

    /* bodies */
    int32_t n = dvi_world_body_count(world);
    if (n < 0) n = 0;
    bd = calloc(((size_t)n + 1) * B_STRIDE, sizeof *bd);
    bi = calloc(((size_t)n + 1) * 3, sizeof *bi);
    if (!bd || !bi) {
        out_fail(msg, msg_size, "%s: out of memory for %d bodies", fdir, (int)n);
        goto done;
    }
    for (int32_t i = 0; i < n; i++) {
        dvi_body_id id;
        dvi_body_info info;
        double* r = bd + (size_t)i * B_STRIDE;
        if (dvi_world_body_at(world, i, &id) != DVI_OK || dvi_body_get_info(world, id, &info) != DVI_OK ||
            dvi_body_get_position(world, id, r + B_POS) != DVI_OK ||
            dvi_body_get_orientation(world, id, r + B_Q) != DVI_OK ||
            dvi_body_get_velocity(world, id, r + B_V) != DVI_OK ||
            dvi_body_get_angular_velocity(world, id, r + B_W) != DVI_OK) {
            out_fail(msg, msg_size, "%s: frame %d: cannot query body %d: %s", fdir, frame, (int)i,
                 dvi_world_last_error(world));
            goto done;
        }
        const double* q = r + B_Q;
        double qn = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
        double w = 1, x = 0, y = 0, z = 0;
        if (qn > 0 && isfinite(qn)) w = q[0] / qn, x = q[1] / qn, y = q[2] / qn, z = q[3] / qn;
        /* rotation matrix, stored column by column: the body's x, y and z axes
         * in world coordinates (what Tensor Glyph takes as the glyph's axes) */
        double* R = r + B_ROT;
        R[0] = 1 - 2 * (y * y + z * z), R[1] = 2 * (x * y + w * z), R[2] = 2 * (x * z - w * y);
        R[3] = 2 * (x * y - w * z), R[4] = 1 - 2 * (x * x + z * z), R[5] = 2 * (y * z + w * x);
        R[6] = 2 * (x * z + w * y), R[7] = 2 * (y * z - w * x), R[8] = 1 - 2 * (x * x + y * y);
        for (int k = 0; k < 3; k++) {
            r[B_AX + k] = R[k];
            r[B_AZ + k] = R[6 + k];
        }
        r[B_SPEED] = sqrt(r[B_V] * r[B_V] + r[B_V + 1] * r[B_V + 1] + r[B_V + 2] * r[B_V + 2]);
        r[B_MASS] = info.mass;
        r[B_RAD] = info.bounding_radius;
        bi[3 * i + 0] = id.index1 - 1;
        bi[3 * i + 1] = (int32_t)info.type;
        bi[3 * i + 2] = info.shape_count > 0 ? (int32_t)info.shape_type : 0;
    }
    vtk_head(&b, n, "radius", "velocity");
    vtk_int_array(&b, "id", bi, n, 3, 0, ascii);
    vtk_int_array(&b, "body_type", bi, n, 3, 1, ascii);
    vtk_int_array(&b, "shape_type", bi, n, 3, 2, ascii);
    vtk_array(&b, "mass", 1, bd, n, B_STRIDE, B_MASS, ascii);
    vtk_array(&b, "radius", 1, bd, n, B_STRIDE, B_RAD, ascii);
    vtk_array(&b, "orientation", 4, bd, n, B_STRIDE, B_Q, ascii);
    vtk_array(&b, "rotation", 9, bd, n, B_STRIDE, B_ROT, ascii);
    vtk_array(&b, "axis_x", 3, bd, n, B_STRIDE, B_AX, ascii);
    vtk_array(&b, "axis_z", 3, bd, n, B_STRIDE, B_AZ, ascii);
    vtk_array(&b, "velocity", 3, bd, n, B_STRIDE, B_V, ascii);
    vtk_array(&b, "angular_velocity", 3, bd, n, B_STRIDE, B_W, ascii);
    vtk_array(&b, "speed", 1, bd, n, B_STRIDE, B_SPEED, ascii);
    vtk_tail(&b, n, bd, B_STRIDE, ascii);
    snprintf(path, dl, "%s/bodies_%06d.vtp", fdir, frame);
    if (b.failed) {
        out_fail(msg, msg_size, "%s: out of memory", path);
        goto done;
    }
    if (dvi_write_file_atomic(path, b.data, b.len, msg, msg_size)) goto done;

    /* contacts */
    b.len = 0;
    int32_t m = dvi_world_contact_count(world);
    if (m < 0) m = 0;
    cd = calloc(((size_t)m + 1) * C_STRIDE, sizeof *cd);
    ci = calloc(((size_t)m + 1) * 2, sizeof *ci);
    if (!cd || !ci) {
        out_fail(msg, msg_size, "%s: out of memory for %d contacts", fdir, (int)m);
        goto done;
    }
    for (int32_t i = 0; i < m; i++) {
        dvi_contact_info c;
        if (dvi_world_get_contact(world, i, &c) != DVI_OK) {
            out_fail(msg, msg_size, "%s: frame %d: cannot query contact %d: %s", fdir, frame, (int)i,
                 dvi_world_last_error(world));
            goto done;
        }
        double* r = cd + (size_t)i * C_STRIDE;
        for (int k = 0; k < 3; k++) {
            r[C_POS + k] = c.point[k];
            r[C_F + k] = c.force[k];
            r[C_N + k] = c.normal[k];
        }
        r[C_FM] = sqrt(c.force[0] * c.force[0] + c.force[1] * c.force[1] + c.force[2] * c.force[2]);
        r[C_FN] = c.force[0] * c.normal[0] + c.force[1] * c.normal[1] + c.force[2] * c.normal[2];
        r[C_D] = c.distance;
        ci[2 * i + 0] = c.body_a.index1 - 1;
        ci[2 * i + 1] = c.body_b.index1 - 1;
    }
    vtk_head(&b, m, "force_magnitude", "force");
    vtk_array(&b, "force", 3, cd, m, C_STRIDE, C_F, ascii);
    vtk_array(&b, "normal", 3, cd, m, C_STRIDE, C_N, ascii);
    vtk_array(&b, "force_magnitude", 1, cd, m, C_STRIDE, C_FM, ascii);
    vtk_array(&b, "normal_force", 1, cd, m, C_STRIDE, C_FN, ascii);
    vtk_array(&b, "distance", 1, cd, m, C_STRIDE, C_D, ascii);
    vtk_int_array(&b, "body_a", ci, m, 2, 0, ascii);
    vtk_int_array(&b, "body_b", ci, m, 2, 1, ascii);
    vtk_tail(&b, m, cd, C_STRIDE, ascii);
    snprintf(path, dl, "%s/contacts_%06d.vtp", fdir, frame);
    if (b.failed) {
        out_fail(msg, msg_size, "%s: out of memory", path);
        goto done;
    }
    if (dvi_write_file_atomic(path, b.data, b.len, msg, msg_size)) goto done;
    rc = 0;

done:
    free(fdir);
    free(path);
    free(bd);
    free(bi);
    free(cd);
    free(ci);
    out_sb_free(&b);
    return rc;
}

int dvi_vtk_write_pvd(const char* dir, int frames, const double* times, char* msg, size_t msg_size)
{
    if (!dir || !*dir) return out_fail(msg, msg_size, "VTK collection: no output directory");
    if (frames < 0) return out_fail(msg, msg_size, "%s: bad frame count %d", dir, frames);
    if (frames > 0 && !times) return out_fail(msg, msg_size, "%s: no frame times", dir);
    for (int i = 0; i < frames; i++)
        if (!isfinite(times[i])) return out_fail(msg, msg_size, "%s: time of frame %d is not finite", dir, i);
    if (dvi_make_dirs(dir, msg, msg_size)) return -1;
    static const char* const kinds[2] = {"bodies", "contacts"};
    size_t dl = strlen(dir) + 32;
    char* path = malloc(dl);
    if (!path) return out_fail(msg, msg_size, "%s: out of memory", dir);
    int rc = 0;
    for (int k = 0; k < 2 && rc == 0; k++) {
        out_sbuf b = {0};
        out_sb_puts(&b, "<?xml version=\"1.0\"?>\n"
                    "<VTKFile type=\"Collection\" version=\"1.0\" byte_order=\"LittleEndian\">\n"
                    "  <Collection>\n");
        for (int i = 0; i < frames; i++) {
            char t[32];
            out_format_roundtrip(t, times[i]);
            out_sb_printf(&b, "    <DataSet timestep=\"%s\" group=\"\" part=\"0\" file=\"frames/%s_%06d.vtp\"/>\n", t,
                      kinds[k], i);
        }
        out_sb_puts(&b, "  </Collection>\n</VTKFile>\n");
        snprintf(path, dl, "%s/%s.pvd", dir, kinds[k]);
        if (b.failed) rc = out_fail(msg, msg_size, "%s: out of memory", path);
        else rc = dvi_write_file_atomic(path, b.data, b.len, msg, msg_size);
        out_sb_free(&b);
    }
    free(path);
    return rc;
}
