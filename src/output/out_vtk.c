/* Output writers (dvi/output.h): VTK XML frames and ParaView collections. */
#include "out_internal.h"

#include "alloc.h"
#include "collision.h"
#include "dvi/terrain.h"

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

#ifdef DVI_HAVE_ZLIB
#include <zlib.h>
#endif

/* Compressed arrays: blocks of this many bytes, each deflated on its own
 * (VTK's vtkZLibDataCompressor). */
#define VTK_BLOCK 32768
#define VTK_ZLEVEL 1

/* Tessellation (documented in docs/outputs.md): each shape class draws its
 * own surface (col_shape_class.mesh, collision.h). */

/* One file being written: the text, the format, and scratch buffers reused
 * by every array of the file. */
typedef struct vtk_out {
    out_sbuf b;
    bool ascii, compress;
    unsigned char* raw;
    size_t raw_cap;
    unsigned char* z;
    size_t z_cap;
} vtk_out;

static void* vo_grow(vtk_out* o, unsigned char** p, size_t* cap, size_t bytes)
{
    void* t = *p;
    if (!base_mem_grow(NULL, &t, cap, bytes, 1, 4096)) {
        o->b.failed = 1;
        return NULL;
    }
    *p = t;
    return t;
}

static void vo_free(vtk_out* o)
{
    out_sb_free(&o->b);
    free(o->raw);
    free(o->z);
    memset(o, 0, sizeof *o);
}

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
    if (out_sb_reserve(b, (n + 2) / 3 * 4)) return;
    char* q = b->data + b->len;
    for (size_t i = 0; i < n; i += 3) {
        const unsigned v = (unsigned)d[i] << 16 | (i + 1 < n ? (unsigned)d[i + 1] << 8 : 0u) |
                           (i + 2 < n ? (unsigned)d[i + 2] : 0u);
        *q++ = tab[v >> 18 & 63];
        *q++ = tab[v >> 12 & 63];
        *q++ = i + 1 < n ? tab[v >> 6 & 63] : '=';
        *q++ = i + 2 < n ? tab[v & 63] : '=';
    }
    b->len = (size_t)(q - b->data);
    b->data[b->len] = '\0';
}

static void put_u64(unsigned char* p, uint64_t v)
{
    for (int k = 0; k < 8; k++) p[k] = (unsigned char)(v >> (8 * k));
}

/* The body of a binary DataArray holding `bytes` bytes at o->raw (the
 * machine is little-endian: byte_order in the file). Without compression:
 * base64 of a UInt64 byte count and the bytes. Compressed (vtkZLibDataCompressor,
 * header_type UInt64): base64 of the header [blocks, block size, size of the
 * last block (0: full), compressed size of each block], then base64 of the
 * deflated blocks one after another. */
static void vo_binary_body(vtk_out* o, size_t bytes)
{
    out_sb_puts(&o->b, "          ");
#ifdef DVI_HAVE_ZLIB
    if (o->compress) {
        const size_t nb = (bytes + VTK_BLOCK - 1) / VTK_BLOCK;
        const size_t bound = compressBound(VTK_BLOCK);
        unsigned char* z = vo_grow(o, &o->z, &o->z_cap, (3 + nb) * 8 + nb * bound + 1);
        if (!z) return;
        unsigned char* data = z + (3 + nb) * 8;
        size_t at = 0;
        put_u64(z, nb);
        put_u64(z + 8, VTK_BLOCK);
        put_u64(z + 16, bytes % VTK_BLOCK);
        for (size_t k = 0; k < nb; k++) {
            const size_t n = k + 1 < nb || bytes % VTK_BLOCK == 0 ? VTK_BLOCK : bytes % VTK_BLOCK;
            uLongf len = (uLongf)bound;
            if (compress2(data + at, &len, o->raw + k * VTK_BLOCK, (uLong)n, VTK_ZLEVEL) != Z_OK) {
                o->b.failed = 1;
                return;
            }
            put_u64(z + (3 + k) * 8, (uint64_t)len);
            at += len;
        }
        sb_base64(&o->b, z, (3 + nb) * 8);
        sb_base64(&o->b, data, at);
        out_sb_putn(&o->b, "\n", 1);
        return;
    }
#endif
    unsigned char h[8];
    put_u64(h, (uint64_t)bytes);
    /* one base64 stream: the count and the data, as VTK reads them */
    unsigned char* t = vo_grow(o, &o->z, &o->z_cap, bytes + 8);
    if (!t) return;
    memcpy(t, h, 8);
    memcpy(t + 8, o->raw, bytes);
    sb_base64(&o->b, t, bytes + 8);
    out_sb_putn(&o->b, "\n", 1);
}

static void vo_begin(vtk_out* o, const char* type, const char* name, int comps)
{
    out_sb_printf(&o->b, "        <DataArray type=\"%s\" Name=\"%s\"", type, name);
    if (comps > 1) out_sb_printf(&o->b, " NumberOfComponents=\"%d\"", comps);
    out_sb_printf(&o->b, " format=\"%s\">\n", o->ascii ? "ascii" : "binary");
}

static void vo_end(vtk_out* o) { out_sb_puts(&o->b, "        </DataArray>\n"); }

/* A Float64 DataArray of count tuples × comps from data[count*stride]
 * starting at offset (values at data[i*stride + offset + c]), as text (one
 * tuple a line, "%.10g") or binary (the doubles themselves). */
static void vtk_f64(vtk_out* o, const char* name, int comps, const double* data, size_t count, size_t stride,
                    size_t offset)
{
    vo_begin(o, "Float64", name, comps);
    if (!o->ascii) {
        const size_t nv = count * (size_t)comps;
        double* v = vo_grow(o, &o->raw, &o->raw_cap, nv * sizeof *v + 8);
        if (!v) return;
        for (size_t i = 0; i < count; i++)
            for (int c = 0; c < comps; c++) v[i * (size_t)comps + (size_t)c] = data[i * stride + offset + (size_t)c];
        vo_binary_body(o, nv * sizeof *v);
    } else {
        for (size_t i = 0; i < count; i++) {
            out_sb_puts(&o->b, "          ");
            for (int c = 0; c < comps; c++) {
                if (c) out_sb_putn(&o->b, " ", 1);
                sb_num(&o->b, data[i * stride + offset + (size_t)c]);
            }
            out_sb_putn(&o->b, "\n", 1);
        }
    }
    vo_end(o);
}

/* An Int32 DataArray of count values data[i*stride + offset], one a line as text. */
static void vtk_i32(vtk_out* o, const char* name, const int32_t* data, size_t count, size_t stride, size_t offset)
{
    vo_begin(o, "Int32", name, 1);
    if (!o->ascii) {
        int32_t* v = vo_grow(o, &o->raw, &o->raw_cap, count * sizeof *v + 8);
        if (!v) return;
        for (size_t i = 0; i < count; i++) v[i] = data[i * stride + offset];
        vo_binary_body(o, count * sizeof *v);
    } else {
        for (size_t i = 0; i < count; i++) out_sb_printf(&o->b, "          %d\n", (int)data[i * stride + offset]);
    }
    vo_end(o);
}

/* An Int64 DataArray: data[0..n) if data, else first + step·i (the vertices'
 * connectivity and offsets, the triangles' offsets); 16 values a line as text. */
static void vtk_i64(vtk_out* o, const char* name, const int64_t* data, size_t n, int64_t first, int64_t step)
{
    vo_begin(o, "Int64", name, 1);
    if (!o->ascii) {
        int64_t* v = vo_grow(o, &o->raw, &o->raw_cap, n * sizeof *v + 8);
        if (!v) return;
        for (size_t i = 0; i < n; i++) v[i] = data ? data[i] : first + step * (int64_t)i;
        vo_binary_body(o, n * sizeof *v);
    } else {
        for (size_t i = 0; i < n; i++)
            out_sb_printf(&o->b, "%s%lld", i % 16 == 0 ? (i ? "\n          " : "          ") : " ",
                          (long long)(data ? data[i] : first + step * (int64_t)i));
        if (n) out_sb_putn(&o->b, "\n", 1);
    }
    vo_end(o);
}

static void vtk_file_head(vtk_out* o)
{
    out_sb_puts(&o->b, "<?xml version=\"1.0\"?>\n"
                       "<VTKFile type=\"PolyData\" version=\"1.0\" byte_order=\"LittleEndian\" header_type=\"UInt64\"");
    if (!o->ascii && o->compress) out_sb_puts(&o->b, " compressor=\"vtkZLibDataCompressor\"");
    out_sb_puts(&o->b, ">\n  <PolyData>\n");
}

/* A file of n points with a vertex cell each. */
static void vtk_head(vtk_out* o, size_t n, const char* scalars, const char* vectors)
{
    vtk_file_head(o);
    out_sb_printf(&o->b,
                  "    <Piece NumberOfPoints=\"%zu\" NumberOfVerts=\"%zu\" NumberOfLines=\"0\" NumberOfStrips=\"0\" "
                  "NumberOfPolys=\"0\">\n",
                  n, n);
    out_sb_printf(&o->b, "      <PointData Scalars=\"%s\" Vectors=\"%s\">\n", scalars, vectors);
}

static void vtk_tail(vtk_out* o, size_t n, const double* pts, size_t stride)
{
    out_sb_puts(&o->b, "      </PointData>\n      <Points>\n");
    vtk_f64(o, "Points", 3, pts, n, stride, 0);
    out_sb_puts(&o->b, "      </Points>\n      <Verts>\n");
    vtk_i64(o, "connectivity", NULL, n, 0, 1);
    vtk_i64(o, "offsets", NULL, n, 1, 1);
    out_sb_puts(&o->b, "      </Verts>\n    </Piece>\n  </PolyData>\n</VTKFile>\n");
}

/* ---- surfaces of shapes ---------------------------------------------------- */

/* Triangles being collected: points (world), triangles (point indices) and
 * per triangle its shape type, body index, shape index and body speed. */
typedef struct vtk_mesh {
    double* p;
    size_t np, p_cap;
    int64_t* t;
    size_t nt, t_cap;
    int32_t* ci; /* 3 per triangle */
    size_t ci_cap;
    double* speed;
    size_t speed_cap;
    bool failed;
} vtk_mesh;

static bool grow(void** p, size_t* cap, size_t n, size_t elem)
{
    return base_mem_grow(NULL, p, cap, n, elem, 256);
}

static void mesh_free(vtk_mesh* m)
{
    free(m->p);
    free(m->t);
    free(m->ci);
    free(m->speed);
    memset(m, 0, sizeof *m);
}

/* A rigid transform: world = R·local + t, R row-major. */
typedef struct xform {
    double R[9], t[3];
} xform;

static void mesh_point(vtk_mesh* m, const xform* T, double x, double y, double z)
{
    if (m->failed || !grow((void**)&m->p, &m->p_cap, 3 * (m->np + 1), sizeof *m->p)) {
        m->failed = true;
        return;
    }
    double* q = m->p + 3 * m->np++;
    for (int k = 0; k < 3; k++) q[k] = T->R[3 * k] * x + T->R[3 * k + 1] * y + T->R[3 * k + 2] * z + T->t[k];
}

/* Triangle of points base+a, base+b, base+c (counter-clockwise seen from outside). */
static void mesh_tri(vtk_mesh* m, size_t base, size_t a, size_t b, size_t c)
{
    if (m->failed || !grow((void**)&m->t, &m->t_cap, 3 * (m->nt + 1), sizeof *m->t)) {
        m->failed = true;
        return;
    }
    int64_t* q = m->t + 3 * m->nt++;
    q[0] = (int64_t)(base + a), q[1] = (int64_t)(base + b), q[2] = (int64_t)(base + c);
}

/* The scene's extent, for sizing planes: centre and half diagonal. */
typedef struct scene_box {
    double c[3], half;
} scene_box;

/* A shape class's surface into a vtk_mesh at transform T. */
typedef struct vtk_sink {
    col_mesh_sink sink;
    vtk_mesh* m;
    const xform* T;
    size_t base;
} vtk_sink;

static void sink_point(col_mesh_sink* s, double x, double y, double z)
{
    vtk_sink* k = (vtk_sink*)s;
    mesh_point(k->m, k->T, x, y, z);
}

static void sink_triangle(col_mesh_sink* s, size_t a, size_t b, size_t c)
{
    vtk_sink* k = (vtk_sink*)s;
    mesh_tri(k->m, k->base, a, b, c);
}

/* Appends the triangles of one shape at transform T, as its class draws it
 * (a plane: a square about the foot of the scene's centre). */
static void mesh_shape(vtk_mesh* m, const dvi_shape_info* s, const xform* T, const scene_box* box)
{
    const col_shape_class* c = col_shape_class_of(s->type);
    if (!c || !c->mesh) return;
    col_heightfield hf = {s->nx, s->ny, s->dx, s->dy, (double*)s->heights, 0.0, 0.0};
    col_trimesh tm = {s->vertex_count, s->triangle_count, (double*)s->vertices, (int32_t*)s->triangles};
    col_geom g = {.type = s->type, .radius = s->radius, .half_length = s->half_length};
    for (int k = 0; k < 3; k++) g.half[k] = s->half_extents[k];
    g.hfield = s->heights ? &hf : NULL;
    g.mesh = s->vertices ? &tm : NULL;
    vtk_sink k = {.sink = {.point = sink_point, .triangle = sink_triangle}, .m = m, .T = T, .base = m->np};
    double d[3];
    for (int i = 0; i < 3; i++) d[i] = box->c[i] - T->t[i];
    for (int i = 0; i < 3; i++) k.sink.centre[i] = T->R[i] * d[0] + T->R[3 + i] * d[1] + T->R[6 + i] * d[2];
    k.sink.half = box->half;
    c->mesh(&g, &k.sink);
}

/* Row-major rotation of a unit quaternion (w, x, y, z) (normalised here). */
static void quat_matrix(const double* q0, double* R)
{
    const double n = sqrt(q0[0] * q0[0] + q0[1] * q0[1] + q0[2] * q0[2] + q0[3] * q0[3]);
    double w = 1, x = 0, y = 0, z = 0;
    if (n > 0 && isfinite(n)) w = q0[0] / n, x = q0[1] / n, y = q0[2] / n, z = q0[3] / n;
    R[0] = 1 - 2 * (y * y + z * z), R[1] = 2 * (x * y - w * z), R[2] = 2 * (x * z + w * y);
    R[3] = 2 * (x * y + w * z), R[4] = 1 - 2 * (x * x + z * z), R[5] = 2 * (y * z - w * x);
    R[6] = 2 * (x * z - w * y), R[7] = 2 * (y * z + w * x), R[8] = 1 - 2 * (x * x + y * y);
}

/* The body's pose composed with the shape's offset. */
static void shape_xform(const double* x, const double* Rb, const dvi_shape_info* s, xform* T)
{
    for (int i = 0; i < 3; i++) {
        for (int j = 0; j < 3; j++)
            T->R[3 * i + j] = Rb[3 * i] * s->offset_rotation[j] + Rb[3 * i + 1] * s->offset_rotation[3 + j] +
                              Rb[3 * i + 2] * s->offset_rotation[6 + j];
        T->t[i] = x[i] + Rb[3 * i] * s->offset_position[0] + Rb[3 * i + 1] * s->offset_position[1] +
                  Rb[3 * i + 2] * s->offset_position[2];
    }
}

/* A body drawn as a glyph: exactly one shape, a sphere at its centre of mass. */
static bool glyph_body(const dvi_world* w, dvi_body_id id, const dvi_body_info* info, double* radius)
{
    dvi_shape_info s;
    *radius = 0;
    if (info->shape_count != 1 || info->shape_type != DVI_SHAPE_SPHERE) return false;
    if (dvi_body_get_shape(w, id, 0, &s) != DVI_OK) return false;
    if (s.offset_position[0] != 0 || s.offset_position[1] != 0 || s.offset_position[2] != 0) return false;
    *radius = s.radius;
    return true;
}

/* Collects the surfaces of the shapes of fixed bodies (fixed = true) or of
 * the moving ones, except glyph bodies. */
static int collect_shapes(const dvi_world* w, bool fixed, const scene_box* box, const out_vtk_part* part,
                          vtk_mesh* m, const char* what, char* msg, size_t msg_size)
{
    const int32_t n = dvi_world_body_count(w);
    for (int32_t i = 0; i < n; i++) {
        dvi_body_id id;
        dvi_body_info info;
        double x[4], q[4], v[3], Rb[9], gr;
        if (part && !part->keep[i]) continue;
        if (dvi_world_body_at(w, i, &id) != DVI_OK || dvi_body_get_info(w, id, &info) != DVI_OK)
            return out_fail(msg, msg_size, "%s: cannot query body %d: %s", what, (int)i, dvi_world_last_error(w));
        if ((info.type == DVI_BODY_FIXED) != fixed || info.shape_count == 0 || glyph_body(w, id, &info, &gr)) continue;
        if (dvi_body_get_position(w, id, x) != DVI_OK || dvi_body_get_orientation(w, id, q) != DVI_OK ||
            dvi_body_get_velocity(w, id, v) != DVI_OK)
            return out_fail(msg, msg_size, "%s: cannot query body %d: %s", what, (int)i, dvi_world_last_error(w));
        quat_matrix(q, Rb);
        const double speed = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
        for (int32_t k = 0; k < info.shape_count; k++) {
            dvi_shape_info s;
            if (dvi_body_get_shape(w, id, k, &s) != DVI_OK)
                return out_fail(msg, msg_size, "%s: cannot query shape %d of body %d: %s", what, (int)k, (int)i,
                                dvi_world_last_error(w));
            xform T;
            shape_xform(x, Rb, &s, &T);
            const size_t t0 = m->nt;
            mesh_shape(m, &s, &T, box);
            if (m->failed || !grow((void**)&m->ci, &m->ci_cap, 3 * m->nt, sizeof *m->ci) ||
                !grow((void**)&m->speed, &m->speed_cap, m->nt, sizeof *m->speed))
                return out_fail(msg, msg_size, "%s: out of memory", what);
            for (size_t t = t0; t < m->nt; t++) {
                m->ci[3 * t] = (int32_t)s.type;
                m->ci[3 * t + 1] = part ? (int32_t)part->ids[i] : i;
                m->ci[3 * t + 2] = k;
                m->speed[t] = speed;
            }
        }
    }
    return 0;
}

/* The scene's bounding box: bodies with bounded shapes (centre ± bounding
 * radius) and the points of fixed height fields and meshes. Planes are
 * drawn as squares of half side 0.75 × its diagonal (at least 1 m) about
 * its centre. */
static int scene_extent(const dvi_world* w, scene_box* box, char* msg, size_t msg_size)
{
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    const int32_t n = dvi_world_body_count(w);
    for (int32_t i = 0; i < n; i++) {
        dvi_body_id id;
        dvi_body_info info;
        double x[3], q[4], Rb[9];
        if (dvi_world_body_at(w, i, &id) != DVI_OK || dvi_body_get_info(w, id, &info) != DVI_OK ||
            dvi_body_get_position(w, id, x) != DVI_OK || dvi_body_get_orientation(w, id, q) != DVI_OK)
            return out_fail(msg, msg_size, "static geometry: cannot query body %d: %s", (int)i, dvi_world_last_error(w));
        if (info.bounding_radius > 0)
            for (int k = 0; k < 3; k++) {
                lo[k] = fmin(lo[k], x[k] - info.bounding_radius);
                hi[k] = fmax(hi[k], x[k] + info.bounding_radius);
            }
        quat_matrix(q, Rb);
        for (int32_t k = 0; k < info.shape_count; k++) {
            dvi_shape_info s;
            if (dvi_body_get_shape(w, id, k, &s) != DVI_OK) continue;
            if (s.type != DVI_SHAPE_HEIGHTFIELD && s.type != DVI_SHAPE_MESH) continue;
            xform T;
            shape_xform(x, Rb, &s, &T);
            const size_t np = s.type == DVI_SHAPE_MESH ? (size_t)s.vertex_count : (size_t)s.nx * (size_t)s.ny;
            for (size_t p = 0; p < np; p++) {
                double l[3];
                if (s.type == DVI_SHAPE_MESH) memcpy(l, s.vertices + 3 * p, sizeof l);
                else l[0] = (double)(p % (size_t)s.nx) * s.dx, l[1] = (double)(p / (size_t)s.nx) * s.dy, l[2] = s.heights[p];
                for (int r = 0; r < 3; r++) {
                    const double c = T.R[3 * r] * l[0] + T.R[3 * r + 1] * l[1] + T.R[3 * r + 2] * l[2] + T.t[r];
                    lo[r] = fmin(lo[r], c);
                    hi[r] = fmax(hi[r], c);
                }
            }
        }
    }
    if (!(lo[0] <= hi[0])) {
        memset(box, 0, sizeof *box);
        box->half = 1;
        return 0;
    }
    double d2 = 0;
    for (int k = 0; k < 3; k++) {
        box->c[k] = 0.5 * (lo[k] + hi[k]);
        d2 += (hi[k] - lo[k]) * (hi[k] - lo[k]);
    }
    box->half = fmax(1.0, 0.75 * sqrt(d2));
    return 0;
}

/* A file of triangles: cell data shape_type, body, shape (and speed). */
static void vtk_surface(vtk_out* o, const vtk_mesh* m, bool with_speed)
{
    vtk_file_head(o);
    out_sb_printf(&o->b,
                  "    <Piece NumberOfPoints=\"%zu\" NumberOfVerts=\"0\" NumberOfLines=\"0\" NumberOfStrips=\"0\" "
                  "NumberOfPolys=\"%zu\">\n",
                  m->np, m->nt);
    out_sb_puts(&o->b, "      <CellData Scalars=\"shape_type\">\n");
    vtk_i32(o, "shape_type", m->ci, m->nt, 3, 0);
    vtk_i32(o, "body", m->ci, m->nt, 3, 1);
    vtk_i32(o, "shape", m->ci, m->nt, 3, 2);
    if (with_speed) vtk_f64(o, "speed", 1, m->speed, m->nt, 1, 0);
    out_sb_puts(&o->b, "      </CellData>\n      <Points>\n");
    vtk_f64(o, "Points", 3, m->p, m->np, 3, 0);
    out_sb_puts(&o->b, "      </Points>\n      <Polys>\n");
    vtk_i64(o, "connectivity", m->t, 3 * m->nt, 0, 0);
    vtk_i64(o, "offsets", NULL, m->nt, 3, 3);
    out_sb_puts(&o->b, "      </Polys>\n    </Piece>\n  </PolyData>\n</VTKFile>\n");
}

static bool little_endian(void)
{
    const uint16_t one = 1;
    return *(const unsigned char*)&one == 1;
}

static void vo_init(vtk_out* o, bool ascii)
{
    memset(o, 0, sizeof *o);
    o->ascii = ascii || !little_endian(); /* the files say LittleEndian */
#ifdef DVI_HAVE_ZLIB
    o->compress = !o->ascii;
#endif
}

bool dvi_vtk_compressed(void)
{
#ifdef DVI_HAVE_ZLIB
    return true;
#else
    return false;
#endif
}

dvi_status dvi_vtk_write_static(const dvi_world* world, const char* dir, bool ascii, char* msg, size_t msg_size)
{
    if (!world) return out_fail_st(DVI_ERR_INVALID_ARG, msg, msg_size, "VTK static geometry: no world");
    if (!dir || !*dir) return out_fail_st(DVI_ERR_INVALID_ARG, msg, msg_size,
                                          "VTK static geometry: no output directory");
    if (dvi_make_dirs(dir, msg, msg_size)) return DVI_ERR_IO;
    size_t dl = strlen(dir) + 32;
    char* path = malloc(dl);
    if (!path) return out_fail(msg, msg_size, "%s: out of memory", dir);
    snprintf(path, dl, "%s/static.vtp", dir);
    vtk_out o;
    vo_init(&o, ascii);
    vtk_mesh m = {0};
    scene_box box;
    dvi_status rc = DVI_ERR_IO;
    if (scene_extent(world, &box, msg, msg_size) || collect_shapes(world, true, &box, NULL, &m, path, msg, msg_size))
        goto done;
    vtk_surface(&o, &m, false);
    if (o.b.failed) {
        out_fail(msg, msg_size, "%s: out of memory", path);
        goto done;
    }
    rc = dvi_write_file_atomic(path, o.b.data, o.b.len, msg, msg_size);
done:
    mesh_free(&m);
    vo_free(&o);
    free(path);
    return rc;
}

/* Body record: doubles laid out as below. */
enum { B_POS = 0, B_Q = 3, B_ROT = 7, B_AX = 16, B_AZ = 19, B_V = 22, B_W = 25, B_SPEED = 28, B_MASS = 29,
       B_RAD = 30, B_GLYPH = 31, B_STRIDE = 32 };
enum { C_POS = 0, C_F = 3, C_N = 6, C_FM = 9, C_FN = 10, C_D = 11, C_STRIDE = 12 };

/* The touched cells of the world's SCM soils into o: a quad per touched
 * node (the Δ × Δ cell about it at the node's height, its own four points),
 * with cell data. Returns the cells, −1 when out of memory. */
enum { S_SINK = 0, S_SP = 1, S_P = 2, S_STRIDE = 3 };

static int64_t soil_cells(const dvi_world* w, vtk_out* o)
{
    int64_t n = 0;
    for (int32_t e = 0; e < dvi_world_force_element_count(w); e++) {
        const dvi_scm* s = dvi_scm_of_element(w, e);
        if (s) n += dvi_scm_get_stats(s).nodes_touched;
    }
    double* pts = malloc(((size_t)n * 4 + 1) * 3 * sizeof *pts);
    double* cd = malloc(((size_t)n + 1) * S_STRIDE * sizeof *cd);
    int32_t* ci = malloc(((size_t)n + 1) * 2 * sizeof *ci);
    if (!pts || !cd || !ci) {
        free(pts), free(cd), free(ci);
        return -1;
    }
    int64_t c = 0;
    int32_t soil = 0;
    for (int32_t e = 0; e < dvi_world_force_element_count(w); e++) {
        const dvi_scm* s = dvi_scm_of_element(w, e);
        if (!s) continue;
        const dvi_scm_stats st = dvi_scm_get_stats(s);
        const double h = 0.5 * st.spacing, *R = st.rotation;
        for (int64_t k = 0; k < st.nodes_touched; k++, c++) {
            int32_t i, j;
            dvi_scm_node nd;
            dvi_scm_touched_node(s, k, &i, &j, &nd);
            static const double CX[4] = {-1, 1, 1, -1}, CY[4] = {-1, -1, 1, 1};
            for (int q = 0; q < 4; q++) {
                const double l[3] = {i * st.spacing + CX[q] * h, j * st.spacing + CY[q] * h, nd.level};
                for (int r = 0; r < 3; r++)
                    pts[3 * (4 * c + q) + r] = st.origin[r] + R[3 * r] * l[0] + R[3 * r + 1] * l[1] + R[3 * r + 2] * l[2];
            }
            cd[S_STRIDE * c + S_SINK] = nd.sinkage;
            cd[S_STRIDE * c + S_SP] = nd.sinkage_plastic;
            cd[S_STRIDE * c + S_P] = nd.pressure;
            ci[2 * c] = nd.contact ? 1 : 0;
            ci[2 * c + 1] = soil;
        }
        soil++;
    }
    vtk_file_head(o);
    out_sb_printf(&o->b,
                  "    <Piece NumberOfPoints=\"%lld\" NumberOfVerts=\"0\" NumberOfLines=\"0\" NumberOfStrips=\"0\" "
                  "NumberOfPolys=\"%lld\">\n",
                  (long long)(4 * n), (long long)n);
    out_sb_puts(&o->b, "      <CellData Scalars=\"sinkage\">\n");
    vtk_f64(o, "sinkage", 1, cd, (size_t)n, S_STRIDE, S_SINK);
    vtk_f64(o, "sinkage_plastic", 1, cd, (size_t)n, S_STRIDE, S_SP);
    vtk_f64(o, "pressure", 1, cd, (size_t)n, S_STRIDE, S_P);
    vtk_i32(o, "contact", ci, (size_t)n, 2, 0);
    vtk_i32(o, "soil", ci, (size_t)n, 2, 1);
    out_sb_puts(&o->b, "      </CellData>\n      <Points>\n");
    vtk_f64(o, "Points", 3, pts, 4 * (size_t)n, 3, 0);
    out_sb_puts(&o->b, "      </Points>\n      <Polys>\n");
    vtk_i64(o, "connectivity", NULL, 4 * (size_t)n, 0, 1);
    vtk_i64(o, "offsets", NULL, (size_t)n, 4, 4);
    out_sb_puts(&o->b, "      </Polys>\n    </Piece>\n  </PolyData>\n</VTKFile>\n");
    free(pts), free(cd), free(ci);
    return n;
}

static bool has_soil(const dvi_world* w)
{
    for (int32_t e = 0; e < dvi_world_force_element_count(w); e++)
        if (dvi_scm_of_element(w, e)) return true;
    return false;
}

/* DIR/frames/KIND_NNNNNN.vtp, or a part's piece KIND_NNNNNN_pRRRR.vtp. */
static void piece_path(char* path, size_t size, const char* fdir, const char* kind, int frame, const out_vtk_part* part)
{
    if (part) snprintf(path, size, "%s/%s_%06d_p%04d.vtp", fdir, kind, frame, part->piece);
    else snprintf(path, size, "%s/%s_%06d.vtp", fdir, kind, frame);
}

dvi_status dvi_vtk_write_frame(const dvi_world* world, const char* dir, int frame, char* msg, size_t msg_size)
{
    return dvi_vtk_write_frame_ex(world, dir, frame, false, msg, msg_size);
}

dvi_status dvi_vtk_write_frame_ex(const dvi_world* world, const char* dir, int frame, bool ascii, char* msg,
                                  size_t msg_size)
{
    return out_vtk_frame(world, dir, frame, ascii, NULL, msg, msg_size);
}

/* The body that carries a contact in a part (a, unless it is none or fixed). */
static int32_t contact_carrier(const dvi_world* w, const dvi_contact_info* c)
{
    dvi_body_info info;
    if (DVI_IS_NULL(c->body_a)) return c->body_b.index1 - 1;
    if (dvi_body_get_info(w, c->body_a, &info) == DVI_OK && info.type == DVI_BODY_FIXED) return c->body_b.index1 - 1;
    return c->body_a.index1 - 1;
}

dvi_status out_vtk_frame(const dvi_world* world, const char* dir, int frame, bool ascii, const out_vtk_part* part,
                         char* msg, size_t msg_size)
{
    if (!world) return out_fail_st(DVI_ERR_INVALID_ARG, msg, msg_size, "VTK frame: no world");
    if (!dir || !*dir) return out_fail_st(DVI_ERR_INVALID_ARG, msg, msg_size, "VTK frame: no output directory");
    if (frame < 0) return out_fail_st(DVI_ERR_INVALID_ARG, msg, msg_size, "VTK frame: bad frame number %d", frame);
    size_t dl = strlen(dir) + 64;
    char* fdir = malloc(dl);
    char* path = malloc(dl);
    double* bd = NULL;
    int32_t* bi = NULL;
    double* cd = NULL;
    int32_t* ci = NULL;
    vtk_out o;
    vo_init(&o, ascii);
    vtk_mesh m = {0};
    dvi_status rc = DVI_ERR_IO;
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
    int32_t nw = 0; /* bodies written */
    for (int32_t wi = 0; wi < n; wi++) {
        if (part && !part->keep[wi]) continue;
        const int32_t i = nw++;
        dvi_body_id id;
        dvi_body_info info;
        double* r = bd + (size_t)i * B_STRIDE;
        if (dvi_world_body_at(world, wi, &id) != DVI_OK || dvi_body_get_info(world, id, &info) != DVI_OK ||
            dvi_body_get_position(world, id, r + B_POS) != DVI_OK ||
            dvi_body_get_orientation(world, id, r + B_Q) != DVI_OK ||
            dvi_body_get_velocity(world, id, r + B_V) != DVI_OK ||
            dvi_body_get_angular_velocity(world, id, r + B_W) != DVI_OK) {
            out_fail(msg, msg_size, "%s: frame %d: cannot query body %d: %s", fdir, frame, (int)i,
                 dvi_world_last_error(world));
            goto done;
        }
        /* rotation matrix, stored column by column: the body's x, y and z axes
         * in world coordinates (what Tensor Glyph takes as the glyph's axes) */
        double Rm[9];
        quat_matrix(r + B_Q, Rm);
        double* R = r + B_ROT;
        for (int col = 0; col < 3; col++)
            for (int row = 0; row < 3; row++) R[3 * col + row] = Rm[3 * row + col];
        for (int k = 0; k < 3; k++) {
            r[B_AX + k] = R[k];
            r[B_AZ + k] = R[6 + k];
        }
        r[B_SPEED] = sqrt(r[B_V] * r[B_V] + r[B_V + 1] * r[B_V + 1] + r[B_V + 2] * r[B_V + 2]);
        r[B_MASS] = info.mass;
        r[B_RAD] = info.bounding_radius;
        glyph_body(world, id, &info, &r[B_GLYPH]);
        bi[3 * i + 0] = part ? (int32_t)part->ids[wi] : id.index1 - 1;
        bi[3 * i + 1] = (int32_t)info.type;
        bi[3 * i + 2] = info.shape_count > 0 ? (int32_t)info.shape_type : 0;
    }
    n = nw;
    vtk_head(&o, (size_t)n, "glyph_radius", "velocity");
    vtk_i32(&o, "id", bi, (size_t)n, 3, 0);
    vtk_i32(&o, "body_type", bi, (size_t)n, 3, 1);
    vtk_i32(&o, "shape_type", bi, (size_t)n, 3, 2);
    vtk_f64(&o, "mass", 1, bd, (size_t)n, B_STRIDE, B_MASS);
    vtk_f64(&o, "radius", 1, bd, (size_t)n, B_STRIDE, B_RAD);
    vtk_f64(&o, "glyph_radius", 1, bd, (size_t)n, B_STRIDE, B_GLYPH);
    vtk_f64(&o, "orientation", 4, bd, (size_t)n, B_STRIDE, B_Q);
    vtk_f64(&o, "rotation", 9, bd, (size_t)n, B_STRIDE, B_ROT);
    vtk_f64(&o, "axis_x", 3, bd, (size_t)n, B_STRIDE, B_AX);
    vtk_f64(&o, "axis_z", 3, bd, (size_t)n, B_STRIDE, B_AZ);
    vtk_f64(&o, "velocity", 3, bd, (size_t)n, B_STRIDE, B_V);
    vtk_f64(&o, "angular_velocity", 3, bd, (size_t)n, B_STRIDE, B_W);
    vtk_f64(&o, "speed", 1, bd, (size_t)n, B_STRIDE, B_SPEED);
    vtk_tail(&o, (size_t)n, bd, B_STRIDE);
    piece_path(path, dl, fdir, "bodies", frame, part);
    if (o.b.failed) {
        out_fail(msg, msg_size, "%s: out of memory", path);
        goto done;
    }
    if (dvi_write_file_atomic(path, o.b.data, o.b.len, msg, msg_size)) goto done;

    /* contacts */
    o.b.len = 0;
    int32_t mc = dvi_world_contact_count(world);
    if (mc < 0) mc = 0;
    cd = calloc(((size_t)mc + 1) * C_STRIDE, sizeof *cd);
    ci = calloc(((size_t)mc + 1) * 2, sizeof *ci);
    if (!cd || !ci) {
        out_fail(msg, msg_size, "%s: out of memory for %d contacts", fdir, (int)mc);
        goto done;
    }
    int32_t mw = 0; /* contacts written */
    for (int32_t ki = 0; ki < mc; ki++) {
        dvi_contact_info c;
        const int32_t i = mw;
        if (dvi_world_get_contact(world, ki, &c) != DVI_OK) {
            out_fail(msg, msg_size, "%s: frame %d: cannot query contact %d: %s", fdir, frame, (int)i,
                 dvi_world_last_error(world));
            goto done;
        }
        if (part) {
            const int32_t k = contact_carrier(world, &c);
            if (k < 0 || !part->keep[k]) continue;
        }
        mw++;
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
        for (int e = 0; part && e < 2; e++)
            if (ci[2 * i + e] >= 0) ci[2 * i + e] = (int32_t)part->ids[ci[2 * i + e]];
    }
    mc = mw;
    vtk_head(&o, (size_t)mc, "force_magnitude", "force");
    vtk_f64(&o, "force", 3, cd, (size_t)mc, C_STRIDE, C_F);
    vtk_f64(&o, "normal", 3, cd, (size_t)mc, C_STRIDE, C_N);
    vtk_f64(&o, "force_magnitude", 1, cd, (size_t)mc, C_STRIDE, C_FM);
    vtk_f64(&o, "normal_force", 1, cd, (size_t)mc, C_STRIDE, C_FN);
    vtk_f64(&o, "distance", 1, cd, (size_t)mc, C_STRIDE, C_D);
    vtk_i32(&o, "body_a", ci, (size_t)mc, 2, 0);
    vtk_i32(&o, "body_b", ci, (size_t)mc, 2, 1);
    vtk_tail(&o, (size_t)mc, cd, C_STRIDE);
    piece_path(path, dl, fdir, "contacts", frame, part);
    if (o.b.failed) {
        out_fail(msg, msg_size, "%s: out of memory", path);
        goto done;
    }
    if (dvi_write_file_atomic(path, o.b.data, o.b.len, msg, msg_size)) goto done;

    /* the surfaces of the moving bodies' shapes */
    o.b.len = 0;
    piece_path(path, dl, fdir, "shapes", frame, part);
    scene_box none = {{0, 0, 0}, 1}; /* planes belong to fixed bodies only */
    if (collect_shapes(world, false, &none, part, &m, path, msg, msg_size)) goto done;
    vtk_surface(&o, &m, true);
    if (o.b.failed) {
        out_fail(msg, msg_size, "%s: out of memory", path);
        goto done;
    }
    if (dvi_write_file_atomic(path, o.b.data, o.b.len, msg, msg_size)) goto done;

    /* the deformed surface of the SCM soils (terrain models), if any */
    if (!part && has_soil(world)) {
        o.b.len = 0;
        snprintf(path, dl, "%s/soil_%06d.vtp", fdir, frame);
        if (soil_cells(world, &o) < 0 || o.b.failed) {
            out_fail(msg, msg_size, "%s: out of memory", path);
            goto done;
        }
        if (dvi_write_file_atomic(path, o.b.data, o.b.len, msg, msg_size)) goto done;
    }

    /* the fixed bodies' shapes, once */
    if (frame == 0 && (!part || part->piece == 0) && dvi_vtk_write_static(world, dir, ascii, msg, msg_size))
        goto done;
    rc = DVI_OK;

done:
    free(fdir);
    free(path);
    free(bd);
    free(bi);
    free(cd);
    free(ci);
    mesh_free(&m);
    vo_free(&o);
    return rc;
}

/* ---- frames in pieces: the .pvtp files that join them ------------------------------------------ */

typedef struct pvtp_array {
    const char* name;
    const char* type;
    int comps;
} pvtp_array;

static const pvtp_array PVTP_BODIES[] = {
    {"id", "Int32", 1},           {"body_type", "Int32", 1},    {"shape_type", "Int32", 1},
    {"mass", "Float64", 1},       {"radius", "Float64", 1},     {"glyph_radius", "Float64", 1},
    {"orientation", "Float64", 4}, {"rotation", "Float64", 9},  {"axis_x", "Float64", 3},
    {"axis_z", "Float64", 3},     {"velocity", "Float64", 3},   {"angular_velocity", "Float64", 3},
    {"speed", "Float64", 1},      {NULL, NULL, 0}};
static const pvtp_array PVTP_CONTACTS[] = {
    {"force", "Float64", 3},    {"normal", "Float64", 3},   {"force_magnitude", "Float64", 1},
    {"normal_force", "Float64", 1}, {"distance", "Float64", 1}, {"body_a", "Int32", 1},
    {"body_b", "Int32", 1},     {NULL, NULL, 0}};
static const pvtp_array PVTP_SHAPES[] = {
    {"shape_type", "Int32", 1}, {"body", "Int32", 1}, {"shape", "Int32", 1}, {"speed", "Float64", 1}, {NULL, NULL, 0}};

dvi_status out_vtk_write_pvtp(const char* dir, int frame, int pieces, char* msg, size_t msg_size)
{
    static const struct {
        const char* kind;
        const char* data; /* PPointData or PCellData */
        const char* attrs;
        const pvtp_array* arrays;
    } files[] = {{"bodies", "PPointData", " Scalars=\"glyph_radius\" Vectors=\"velocity\"", PVTP_BODIES},
                 {"contacts", "PPointData", " Scalars=\"force_magnitude\" Vectors=\"force\"", PVTP_CONTACTS},
                 {"shapes", "PCellData", " Scalars=\"shape_type\"", PVTP_SHAPES}};
    size_t dl = strlen(dir) + 64;
    char* path = malloc(dl);
    if (!path) return out_fail(msg, msg_size, "%s: out of memory", dir);
    dvi_status rc = DVI_OK;
    for (size_t f = 0; f < sizeof files / sizeof files[0] && rc == DVI_OK; f++) {
        out_sbuf b = {0};
        out_sb_puts(&b, "<?xml version=\"1.0\"?>\n"
                        "<VTKFile type=\"PPolyData\" version=\"1.0\" byte_order=\"LittleEndian\" "
                        "header_type=\"UInt64\">\n  <PPolyData GhostLevel=\"0\">\n");
        out_sb_printf(&b, "    <%s%s>\n", files[f].data, files[f].attrs);
        for (const pvtp_array* a = files[f].arrays; a->name; a++)
            out_sb_printf(&b, "      <PDataArray type=\"%s\" Name=\"%s\" NumberOfComponents=\"%d\"/>\n", a->type,
                          a->name, a->comps);
        out_sb_printf(&b, "    </%s>\n    <PPoints>\n"
                          "      <PDataArray type=\"Float64\" Name=\"Points\" NumberOfComponents=\"3\"/>\n"
                          "    </PPoints>\n",
                      files[f].data);
        for (int r = 0; r < pieces; r++)
            out_sb_printf(&b, "    <Piece Source=\"%s_%06d_p%04d.vtp\"/>\n", files[f].kind, frame, r);
        out_sb_puts(&b, "  </PPolyData>\n</VTKFile>\n");
        snprintf(path, dl, "%s/frames/%s_%06d.pvtp", dir, files[f].kind, frame);
        if (b.failed) rc = out_fail(msg, msg_size, "%s: out of memory", path);
        else rc = dvi_write_file_atomic(path, b.data, b.len, msg, msg_size);
        out_sb_free(&b);
    }
    free(path);
    return rc;
}

dvi_status dvi_vtk_write_pvd(const char* dir, int frames, const double* times, char* msg, size_t msg_size)
{
    return out_vtk_write_pvd(dir, frames, times, "vtp", msg, msg_size);
}

dvi_status out_vtk_write_pvd(const char* dir, int frames, const double* times, const char* ext, char* msg,
                             size_t msg_size)
{
    if (!dir || !*dir) return out_fail_st(DVI_ERR_INVALID_ARG, msg, msg_size, "VTK collection: no output directory");
    if (frames < 0) return out_fail_st(DVI_ERR_INVALID_ARG, msg, msg_size, "%s: bad frame count %d", dir, frames);
    if (frames > 0 && !times) return out_fail_st(DVI_ERR_INVALID_ARG, msg, msg_size, "%s: no frame times", dir);
    for (int i = 0; i < frames; i++)
        if (!isfinite(times[i])) return out_fail_st(DVI_ERR_INVALID_ARG, msg, msg_size,
                                                    "%s: time of frame %d is not finite", dir, i);
    if (dvi_make_dirs(dir, msg, msg_size)) return DVI_ERR_IO;
    static const char* const kinds[4] = {"bodies", "contacts", "shapes", "soil"};
    size_t dl = strlen(dir) + 32;
    char* path = malloc(dl);
    if (!path) return out_fail(msg, msg_size, "%s: out of memory", dir);
    dvi_status rc = DVI_OK;
    /* soil.pvd only for a run whose frames have the soil's surface */
    snprintf(path, dl, "%s/frames/soil_000000.vtp", dir);
    struct stat sst;
    const int nkinds = frames > 0 && stat(path, &sst) == 0 ? 4 : 3;
    for (int k = 0; k < nkinds && rc == DVI_OK; k++) {
        out_sbuf b = {0};
        out_sb_puts(&b, "<?xml version=\"1.0\"?>\n"
                    "<VTKFile type=\"Collection\" version=\"1.0\" byte_order=\"LittleEndian\">\n"
                    "  <Collection>\n");
        for (int i = 0; i < frames; i++) {
            char t[32];
            out_format_roundtrip(t, times[i]);
            out_sb_printf(&b, "    <DataSet timestep=\"%s\" group=\"\" part=\"0\" file=\"frames/%s_%06d.%s\"/>\n", t,
                      kinds[k], i, k == 3 ? "vtp" : ext);
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
