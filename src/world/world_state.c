/* dvicontact — world state blobs (checkpoints): dvi_world_save_state and
 * dvi_world_load_state.
 *
 * What a step reads that an earlier step (or the caller) wrote — and thus
 * what a blob holds:
 *   - the time (motor ramps depend on it);
 *   - per body: x, q, v, ω, the applied force and torque, and the contact
 *     force and torque of the last step (public getters);
 *   - per joint: motor speed and torque (dvi_joint_set_motor), the row count,
 *     impulses (warm start of the joint rows), J_B of each row and the
 *     reaction of the last step;
 *   - the contacts of the last step (dvi_world_get_contact), and the
 *     warm-start history: the last step's points with their impulses and the
 *     open-addressing table from a shape pair to its first point, stored
 *     slot for slot;
 *   - DEM (dem.h): the number of DEM steps taken and the contact history,
 *     entry by entry (key, tangential displacement u, rolling rotation θ).
 *     The history's slots are not stored: the loader inserts the entries
 *     into an empty table and stamps them with the step count. Nothing
 *     depends on the layout: the step reads an entry only through its key,
 *     and the sweep drops exactly the entries a step did not renew. The
 *     dense order of the entries is kept (it decides only the order of
 *     later blobs). The rest of the DEM state is derived (radii and damping
 *     factors of the shapes, lists of terrains and sampled shapes) or
 *     structure (the sample points: in the shape hashes);
 *   - the stats of the last step, except the wall-clock timings (stored as 0).
 * Not state: the collision layer keeps only grow-only buffers and recomputes
 * its grid (levels, cell sizes, table kind) from the geoms on every call, so
 * its output depends on the geoms alone; the solver's workspace is rebuilt
 * on every solve and its initial guess comes from the warm start above; the
 * per-step buffers of the world (rows, D, γ, free velocities) are rewritten
 * before they are read. The solver and its settings are configuration, not
 * state: they are neither saved nor checked (a world that loads a blob and
 * uses the same solver continues bit-identically; dvi_world_set_solver may
 * change it on purpose).
 *
 *   - the force elements' own state (dvi_force_element_class.save), each
 *     under its class name.
 * Format (version 3; version 2 had no force elements' section and is read
 * by a world without force elements; version 1 had neither the DEM
 * section, nor the DEM stats, nor the method, DEM settings and DEM
 * material fields in the hashes). Every integer is little-endian, every double its raw
 * IEEE-754 binary64 bits in little-endian order (exact, portable).
 *   header, 64 bytes:
 *      0  magic "DVISTATE"          8 bytes
 *      8  u32 format version (2)
 *     12  u32 byte-order mark 0x01020304
 *     16  u32 header size (64)
 *     20  u32 reserved (0)
 *     24  u64 payload size (bytes after the header)
 *     32  u32 bodies, u32 shapes, u32 joints, u32 reserved (0)
 *     48  u64 fingerprint of the structure (FNV-1a 64 of the structure hashes)
 *     56  u64 checksum: FNV-1a 64 of bytes 0..55 and of the payload
 *   payload:
 *     structure: u64 world-settings hash (gravity, envelope, recovery speeds,
 *       bounce threshold, method and every DEM setting), then u64 per body,
 *       per shape and per joint: hashes of what cannot change after creation
 *       (types, masses, inertias, shape sizes, offsets, materials with their
 *       DEM fields, data and DEM sample points, joint bodies, frames and
 *       motor kind), so that a refusal can name the object;
 *     state: f64 time; the stats (DEM fields included); per body 25 f64; per
 *       joint 2 f64, i32 row count, 7 f64 impulses, 7×6 f64 J_B, 6 f64
 *       reaction; DEM: u64 step count, u32 history entry count and the
 *       entries (i32 shape_a, i32 shape_b, u32 feature, 3 f64 u, 3 f64 θ);
 *       u32 contact count and the records (DVI: row ≥ 0, nrows 3 or 6; DEM:
 *       row −1, nrows 0); u32 warm-point count and the points; u64 slot
 *       count and the slots (empty slots written as −1, −1, −1); u32
 *       force element count and per element u32 name length, the name,
 *       u64 state size and the state.
 * Loading checks, before touching the world: size, magic, version, byte
 * order, header fields, checksum, counts and hashes of the structure, then
 * every index and count in the payload (a blob with a valid checksum but
 * forged contents cannot make a later step read out of bounds). Doubles are
 * restored as they were, whatever their value.
 */
#include "dem.h"
#include "error.h"
#include "hash_rng.h"
#include "world_internal.h"
#include "math3.h"
#include "bytes_le.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(sizeof(double) == 8 && sizeof(uint64_t) == 8, "the state format stores doubles as 8 bytes");
_Static_assert(DVI_JOINT_MAX_ROWS == 7, "state format 2 stores 7 rows per joint: bump STATE_VERSION");

#define STATE_MAGIC "DVISTATE"
#define STATE_VERSION 3u
#define STATE_VERSION_OLDEST 2u /* without the force elements' section */
#define STATE_BOM 0x01020304u
#define HEADER_SIZE 64u
#define CHECKSUM_AT 56u

/* ---- hashing ------------------------------------------------------------------- */


static uint64_t f64_bits(double x)
{
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

static double bits_f64(uint64_t u)
{
    double x;
    memcpy(&x, &u, sizeof x);
    return x;
}

static uint64_t fnv_u64(uint64_t h, uint64_t v)
{
    for (int k = 0; k < 8; k++) {
        h ^= (uint8_t)(v >> (8 * k));
        h *= DVI_FNV_PRIME;
    }
    return h;
}

static uint64_t fnv_i32(uint64_t h, int32_t v)
{
    uint32_t u = (uint32_t)v;
    for (int k = 0; k < 4; k++) {
        h ^= (uint8_t)(u >> (8 * k));
        h *= DVI_FNV_PRIME;
    }
    return h;
}

static uint64_t fnv_f64s(uint64_t h, const double* a, size_t n)
{
    for (size_t i = 0; i < n; i++) h = fnv_u64(h, f64_bits(a[i]));
    return h;
}

static uint64_t settings_hash(const dvi_world* w)
{
    uint64_t h = DVI_FNV_OFFSET;
    h = fnv_f64s(h, w->def.gravity, 3);
    h = fnv_u64(h, f64_bits(w->def.collision_envelope));
    h = fnv_u64(h, f64_bits(w->def.contact_recovery_speed));
    h = fnv_u64(h, f64_bits(w->def.joint_recovery_speed));
    h = fnv_u64(h, f64_bits(w->def.bounce_threshold));
    const dvi_dem_settings* d = &w->def.dem;
    h = fnv_i32(h, (int32_t)w->def.method);
    h = fnv_i32(h, (int32_t)d->normal_model);
    h = fnv_i32(h, (int32_t)d->constants);
    double dem[8] = {d->k_n,
                     d->k_t,
                     d->gamma_n,
                     d->gamma_t,
                     d->characteristic_speed,
                     d->rolling_damping,
                     d->terrain_slip_speed,
                     d->max_speed};
    h = fnv_f64s(h, dem, 8);
    return h;
}

static uint64_t body_hash(const wld_body* b)
{
    uint64_t h = DVI_FNV_OFFSET;
    h = fnv_i32(h, (int32_t)b->type);
    h = fnv_u64(h, f64_bits(b->mass));
    h = fnv_f64s(h, b->inertia, 9);
    h = fnv_u64(h, f64_bits(b->gravity_scale));
    return h;
}

/* Shape i: its definition and its DEM sample points. */
static uint64_t shape_hash(const dvi_world* w, int32_t i)
{
    const wld_shape* s = &w->shapes[i];
    uint64_t h = DVI_FNV_OFFSET;
    h = fnv_i32(h, s->body);
    h = fnv_i32(h, (int32_t)s->type);
    h = fnv_u64(h, f64_bits(s->radius));
    h = fnv_u64(h, f64_bits(s->half_length));
    h = fnv_f64s(h, s->half, 3);
    h = fnv_f64s(h, s->lpos, 3);
    h = fnv_f64s(h, s->lrot, 9);
    const dvi_material* m = wld_shape_material(w, s);
    double mat[13] = {m->friction,      m->rolling_friction, m->spinning_friction, m->restitution,
                      m->compliance,    m->young_modulus,    m->poisson_ratio,     m->k_n,
                      m->k_t,           m->gamma_n,          m->gamma_t,           m->terrain_stiffness,
                      m->terrain_hysteresis};
    h = fnv_f64s(h, mat, 13);
    /* DEM samples (dvi_shape_set_dem_samples): count, then x, y, z, area each */
    const wld_dem* d = w->dem;
    int32_t ns = d && i < d->shape_cap ? d->shapes[i].sample_count : 0;
    h = fnv_i32(h, ns);
    if (ns > 0) h = fnv_f64s(h, d->samples + 4 * (size_t)d->shapes[i].sample_first, 4 * (size_t)ns);
    if (s->hfield) {
        const col_heightfield* f = s->hfield;
        h = fnv_i32(h, f->nx);
        h = fnv_i32(h, f->ny);
        h = fnv_u64(h, f64_bits(f->dx));
        h = fnv_u64(h, f64_bits(f->dy));
        h = fnv_f64s(h, f->heights, (size_t)f->nx * (size_t)f->ny);
    }
    if (s->mesh) {
        const col_trimesh* t = s->mesh;
        h = fnv_i32(h, t->vertex_count);
        h = fnv_i32(h, t->triangle_count);
        h = fnv_f64s(h, t->vertices, 3 * (size_t)t->vertex_count);
        for (size_t k = 0; k < 3 * (size_t)t->triangle_count; k++) h = fnv_i32(h, t->triangles[k]);
    }
    /* a collision filter other than the default (so default shapes hash as
     * before filters existed) */
    if (s->category != 1u || s->mask != 0xFFFFFFFFu) {
        h = fnv_i32(h, (int32_t)s->category);
        h = fnv_i32(h, (int32_t)s->mask);
    }
    return h;
}

static uint64_t joint_hash(const wld_joint* j)
{
    uint64_t h = DVI_FNV_OFFSET;
    h = fnv_i32(h, (int32_t)j->type);
    h = fnv_i32(h, j->a);
    h = fnv_i32(h, j->b);
    h = fnv_f64s(h, j->la, 3);
    h = fnv_f64s(h, j->lb, 3);
    h = fnv_f64s(h, j->axa, 3);
    h = fnv_f64s(h, j->pa, 3);
    h = fnv_f64s(h, j->qa, 3);
    h = fnv_f64s(h, j->pb, 3);
    h = fnv_f64s(h, j->qb, 3);
    h = fnv_f64s(h, j->q_rel0, 4);
    h = fnv_u64(h, f64_bits(j->length));
    h = fnv_i32(h, (int32_t)j->motor);
    h = fnv_u64(h, f64_bits(j->ramp));
    if (j->collide_connected) h = fnv_i32(h, 1);
    return h;
}

/* ---- writing --------------------------------------------------------------------- */

/* A writer; with p == NULL it only counts bytes. */
typedef struct wbuf {
    uint8_t* p;
    size_t pos;
} wbuf;

static void put_u32(wbuf* b, uint32_t v)
{
    if (b->p) le_put_u32(b->p + b->pos, v);
    b->pos += 4;
}

static void put_u64(wbuf* b, uint64_t v)
{
    if (b->p) le_put_u64(b->p + b->pos, v);
    b->pos += 8;
}

static void put_i32(wbuf* b, int32_t v)
{
    put_u32(b, (uint32_t)v);
}

static void put_f64(wbuf* b, double x)
{
    put_u64(b, f64_bits(x));
}

static void put_f64s(wbuf* b, const double* a, size_t n)
{
    for (size_t i = 0; i < n; i++) put_f64(b, a[i]);
}

/* A contact's key: its two shapes and the feature between them. */
static void put_key(wbuf* b, int32_t shape_a, int32_t shape_b, uint32_t feature)
{
    put_i32(b, shape_a);
    put_i32(b, shape_b);
    put_u32(b, feature);
}

/* The step's statistics and a body's state as saved, in their order: the
 * statistics' types name put_TYPE / get_TYPE (status: the solver's status
 * as an int32; clock: wall-clock timings, which are not state, saved as 0
 * so that equal states give equal blobs); a body's vectors, of n numbers. */
#define STATS_FIELDS(X)                                                                                            \
    X(i32, bodies) X(i32, contacts) X(i32, joint_rows) X(i32, rows) X(i32, iterations) X(f64, residual)          \
    X(status, solver_status) X(f64, max_penetration) X(f64, max_joint_violation) X(clock, seconds_collide)      \
    X(clock, seconds_assemble) X(clock, seconds_solve) X(clock, seconds_integrate) X(f64, max_overlap)          \
    X(i32, contact_history) X(f64, kinetic_energy)
#define BODY_FIELDS(X) X(x, 3) X(q, 4) X(v, 3) X(w, 3) X(force, 3) X(torque, 3) X(contact_force, 3) X(contact_torque, 3)

static void put_status(wbuf* b, dvi_solve_status s)
{
    put_i32(b, (int32_t)s);
}

static void put_clock(wbuf* b, double seconds)
{
    (void)seconds;
    put_f64(b, 0.0);
}

/* The payload (structure hashes and state). */
static void write_payload(const dvi_world* w, wbuf* b)
{
    /* (the counting pass skips the hashes: a height field's costs a pass over it) */
    put_u64(b, b->p ? settings_hash(w) : 0);
    for (int32_t i = 0; i < w->body_count; i++) put_u64(b, b->p ? body_hash(&w->bodies[i]) : 0);
    for (int32_t i = 0; i < w->shape_count; i++) put_u64(b, b->p ? shape_hash(w, i) : 0);
    for (int32_t i = 0; i < w->joint_count; i++) put_u64(b, b->p ? joint_hash(&w->joints[i]) : 0);

    put_f64(b, w->time);
    const dvi_step_stats* s = &w->stats;
#define PUT_STAT(type, field) put_##type(b, s->field);
    STATS_FIELDS(PUT_STAT)
#undef PUT_STAT

    for (int32_t i = 0; i < w->body_count; i++) {
        const wld_body* d = &w->bodies[i];
#define PUT_BODY(field, n) put_f64s(b, d->field, n);
        BODY_FIELDS(PUT_BODY)
#undef PUT_BODY
    }
    for (int32_t i = 0; i < w->joint_count; i++) {
        const wld_joint* j = &w->joints[i];
        put_f64(b, j->speed);
        put_f64(b, j->torque);
        put_i32(b, j->nrows);
        put_f64s(b, j->gamma, DVI_JOINT_MAX_ROWS);
        for (int q = 0; q < DVI_JOINT_MAX_ROWS; q++) put_f64s(b, j->jb[q], 6);
        put_f64s(b, j->reaction_force, 3);
        put_f64s(b, j->reaction_torque, 3);
    }
    /* DEM: step count and contact history (entries in their dense order) */
    const wld_dem* d = w->dem;
    put_u64(b, d ? d->steps : 0);
    put_u32(b, d ? (uint32_t)d->history.count : 0);
    for (int32_t k = 0; d && k < d->history.count; k++) {
        const wld_dem_entry* e = &d->history.entries[k];
        put_key(b, e->key.shape_a, e->key.shape_b, e->key.feature);
        put_f64s(b, e->u, 3);
        put_f64s(b, e->roll, 3);
    }
    put_u32(b, (uint32_t)w->contact_count);
    for (int32_t c = 0; c < w->contact_count; c++) {
        const wld_contact_rec* r = &w->contacts[c];
        put_i32(b, r->body_a);
        put_i32(b, r->body_b);
        put_key(b, r->shape_a, r->shape_b, r->feature);
        put_f64s(b, r->point, 3);
        double normal[3], arm[6];
        wld_f2d(w->fr_frame + 9 * (size_t)c, 3, normal);
        wld_f2d(w->fr_arm + 6 * (size_t)c, 6, arm);
        put_f64s(b, normal, 3);
        double t1[3], t2[3]; /* kept in the format; always the basis of the normal */
        basis_from_normal(normal, t1, t2);
        put_f64s(b, t1, 3);
        put_f64s(b, t2, 3);
        put_f64(b, r->distance);
        put_i32(b, r->row);
        put_i32(b, r->nrows);
        put_f64s(b, arm, 6); /* ρ_a, ρ_b */
        put_f64(b, w->fr_ell[c]);
        put_f64s(b, r->force, 3);
    }
    put_u32(b, (uint32_t)w->warm_count);
    for (int32_t k = 0; k < w->warm_count; k++) {
        const wld_warm_point* p = &w->warm[k];
        put_key(b, p->shape_a, p->shape_b, p->feature);
        put_f64s(b, p->point, 3);
        put_f64s(b, p->gamma, 3);
        static const double none[3] = {0.0, 0.0, 0.0};
        put_f64s(b, p->roll >= 0 ? w->warm_roll + 3 * (size_t)p->roll : none, 3);
    }
    put_u64(b, (uint64_t)w->slot_count);
    for (size_t k = 0; k < w->slot_count; k++) {
        const wld_warm_slot* s2 = &w->slots[k];
        bool used = s2->shape_a >= 0; /* the other fields of an empty slot are not initialised */
        put_i32(b, used ? s2->shape_a : -1);
        put_i32(b, used ? s2->shape_b : -1);
        put_i32(b, used ? s2->first : -1);
    }
    put_u32(b, (uint32_t)w->element_count);
    for (int32_t e = 0; e < w->element_count; e++) {
        const wld_force_element_rec* el = &w->elements[e];
        size_t len = strlen(el->cls->name);
        size_t n = el->cls->state_size ? el->cls->state_size(el->self) : 0;
        put_u32(b, (uint32_t)len);
        if (b->p) memcpy(b->p + b->pos, el->cls->name, len);
        b->pos += len;
        put_u64(b, (uint64_t)n);
        if (b->p && n) el->cls->save(el->self, b->p + b->pos);
        b->pos += n;
    }
}

dvi_status dvi_world_save_state(const dvi_world* w, void** data, size_t* size)
{
    if (data) *data = NULL;
    if (size) *size = 0;
    if (!w || !data || !size) return base_error_set(DVI_ERR_INVALID_ARG, "dvi_world_save_state: world, data or size is NULL");
    return wld_save_state_within(w, 0, 0, data, size);
}

dvi_status wld_save_state_within(const dvi_world* w, size_t before, size_t after, void** data, size_t* size)
{
    wbuf count = {NULL, 0};
    write_payload(w, &count);
    size_t payload = count.pos;
    if (payload > SIZE_MAX - HEADER_SIZE - before - after || before > SIZE_MAX / 2 || after > SIZE_MAX / 2)
        return base_error_set(DVI_ERR_NOMEM, "state: too large to save");
    uint8_t* base = malloc(before + HEADER_SIZE + payload + after);
    if (!base) return base_error_set(DVI_ERR_NOMEM, "out of memory saving the state");
    uint8_t* p = base + before;
    wbuf b = {p + HEADER_SIZE, 0};
    write_payload(w, &b);

    /* the fingerprint: hash of the structure hashes just written */
    size_t nobj = (size_t)w->body_count + (size_t)w->shape_count + (size_t)w->joint_count;
    uint64_t fp = fnv_u64(DVI_FNV_OFFSET, settings_hash(w));
    for (size_t i = 0; i < nobj; i++) {
        uint64_t v = 0;
        for (int k = 0; k < 8; k++) v |= (uint64_t)p[HEADER_SIZE + 8 + 8 * i + (size_t)k] << (8 * k);
        fp = fnv_u64(fp, v);
    }

    wbuf h = {p, 0};
    memcpy(p, STATE_MAGIC, 8);
    h.pos = 8;
    put_u32(&h, STATE_VERSION);
    put_u32(&h, STATE_BOM);
    put_u32(&h, HEADER_SIZE);
    put_u32(&h, 0);
    put_u64(&h, (uint64_t)payload);
    put_u32(&h, (uint32_t)w->body_count);
    put_u32(&h, (uint32_t)w->shape_count);
    put_u32(&h, (uint32_t)w->joint_count);
    put_u32(&h, 0);
    put_u64(&h, fp);
    uint64_t sum = base_fnv1a(base_fnv1a(DVI_FNV_OFFSET, p, CHECKSUM_AT), p + HEADER_SIZE, payload);
    put_u64(&h, sum);
    *data = base;
    *size = HEADER_SIZE + payload;
    return DVI_OK;
}

/* ---- reading ---------------------------------------------------------------------- */

/* Reads from [p, p + n); size checks are done by the caller per section, but
 * every read is bounds-checked as well (bad is set and 0 returned). */
typedef struct rbuf {
    const uint8_t* p;
    size_t n, pos;
    bool bad;
} rbuf;

static bool need(rbuf* r, size_t k)
{
    if (r->bad || r->n - r->pos < k) {
        r->bad = true;
        return false;
    }
    return true;
}

static uint32_t get_u32(rbuf* r)
{
    if (!need(r, 4)) return 0;
    uint32_t v = le_get_u32(r->p + r->pos);
    r->pos += 4;
    return v;
}

static uint64_t get_u64(rbuf* r)
{
    if (!need(r, 8)) return 0;
    uint64_t v = le_get_u64(r->p + r->pos);
    r->pos += 8;
    return v;
}

static int32_t get_i32(rbuf* r)
{
    uint32_t u = get_u32(r);
    int32_t v;
    memcpy(&v, &u, sizeof v);
    return v;
}

static double get_f64(rbuf* r)
{
    return bits_f64(get_u64(r));
}

static void get_f64s(rbuf* r, double* a, size_t n)
{
    for (size_t i = 0; i < n; i++) a[i] = get_f64(r);
}

static void get_key(rbuf* r, int32_t* shape_a, int32_t* shape_b, uint32_t* feature)
{
    *shape_a = get_i32(r);
    *shape_b = get_i32(r);
    *feature = get_u32(r);
}

static dvi_solve_status get_status(rbuf* r)
{
    return (dvi_solve_status)get_i32(r);
}

static double get_clock(rbuf* r)
{
    return get_f64(r);
}

/* Bytes of the fixed-size records of the payload. */
#define STATS_BYTES (7 * 4 + 9 * 8)
#define BODY_BYTES (25 * 8)
#define JOINT_BYTES (2 * 8 + 4 + DVI_JOINT_MAX_ROWS * 8 + DVI_JOINT_MAX_ROWS * 6 * 8 + 6 * 8)
#define CONTACT_BYTES (5 * 4 + 13 * 8 + 2 * 4 + 10 * 8)
#define WARM_BYTES (3 * 4 + 9 * 8)
#define SLOT_BYTES (3 * 4)
#define DEM_ENTRY_BYTES (3 * 4 + 6 * 8)

static dvi_status damaged(dvi_world* w, const char* what, long long index, const char* field)
{
    if (index >= 0)
        return wld_error(w, DVI_ERR_PARSE, "state: damaged data (%s[%lld].%s out of range)", what, index, field);
    return wld_error(w, DVI_ERR_PARSE, "state: damaged data (%s)", what);
}

#define RESERVE(w, field, n) DVI_RESERVE(w, field, n)

/* Reads the state part of the payload. With apply false it only validates
 * (and returns the counts), building the DEM contact history in
 * counts->history; with apply true it writes into the world, which must have
 * room (validated before, so nothing can fail then), and moves that history
 * into the world's DEM state (which must exist when the history is not
 * empty or the step count not 0). */
typedef struct state_counts {
    uint32_t contacts, warm;
    size_t warm_roll; /* warm-start points with spin and rolling impulses */
    uint64_t slots;
    uint64_t dem_steps;
    wld_dem_history history; /* owned until applied */
    uint32_t version;
    size_t elements_at; /* the force elements' section in the payload (version 3) */
} state_counts;

static dvi_status structure_differs(dvi_world* w, const char* what, uint32_t saved, int32_t here);

/* The force elements' section: the same elements, by name and in order,
 * each state of the size its element writes now; the states are loaded
 * by load_elements once the whole blob is known to be valid. */
static dvi_status read_elements(dvi_world* w, rbuf* r, state_counts* counts)
{
    if (counts->version == 2) {
        if (w->element_count > 0)
            return wld_error(w, DVI_ERR_INVALID_ARG,
                                   "state: structure differs from this world (the state has no force elements, "
                                   "this world has %d)",
                                   (int)w->element_count);
        return DVI_OK;
    }
    counts->elements_at = r->pos;
    uint32_t ne = get_u32(r);
    if (r->bad) return damaged(w, "payload too short for the force elements", -1, NULL);
    if (ne != (uint32_t)w->element_count) return structure_differs(w, "force elements", ne, w->element_count);
    for (uint32_t e = 0; e < ne; e++) {
        const wld_force_element_rec* el = &w->elements[e];
        uint32_t len = get_u32(r);
        if (r->bad || !need(r, len)) return damaged(w, "force elements", (long long)e, "name");
        const char* name = el->cls->name;
        if (len != strlen(name) || memcmp(r->p + r->pos, name, len) != 0)
            return wld_error(w, DVI_ERR_INVALID_ARG,
                                   "state: structure differs from this world (force element %u is '%.*s' in the "
                                   "state, '%s' here)",
                                   (unsigned)e, (int)(len < 64 ? len : 64), (const char*)(r->p + r->pos), name);
        r->pos += len;
        uint64_t n = get_u64(r);
        if (r->bad || n > r->n - r->pos) return damaged(w, "force elements", (long long)e, "state size");
        /* the size of a stateful element's state may vary with the state
         * (a soil's touched nodes): its load checks it */
        if (n != 0 && !el->cls->state_size)
            return wld_error(w, DVI_ERR_INVALID_ARG,
                                   "state: structure differs from this world (force element %u '%s': %llu bytes of "
                                   "state in the state, stateless here)",
                                   (unsigned)e, name, (unsigned long long)n);
        r->pos += (size_t)n;
    }
    return DVI_OK;
}

/* Loads each element's state from the section read_elements validated;
 * called before the world's own state is applied, so that a refusal leaves
 * the world's bodies as they were. */
static dvi_status load_elements(dvi_world* w, const rbuf* payload, const state_counts* counts)
{
    if (counts->version == 2 || w->element_count == 0) return DVI_OK;
    rbuf r = {payload->p, payload->n, counts->elements_at, false};
    (void)get_u32(&r);
    for (int32_t e = 0; e < w->element_count; e++) {
        const wld_force_element_rec* el = &w->elements[e];
        uint32_t len = get_u32(&r);
        r.pos += len;
        size_t n = (size_t)get_u64(&r);
        if (el->cls->state_size) {
            dvi_error_clear();
            dvi_status st = el->cls->load(el->self, r.p + r.pos, n);
            if (st != DVI_OK) {
                const char* why = dvi_error_message();
                return wld_error(w, st < 0 ? st : DVI_ERR_PARSE, "state: force element %d (%s): %s", (int)e,
                                       el->cls->name, why && why[0] ? why : dvi_status_string(st));
            }
        }
        r.pos += n;
    }
    return DVI_OK;
}

static dvi_status read_state(dvi_world* w, rbuf* r, bool apply, state_counts* counts)
{
    const int32_t nb = w->body_count, ns = w->shape_count, nj = w->joint_count;
    const bool dem = w->def.method == DVI_METHOD_DEM;
    if (!need(r, 8 + STATS_BYTES + (size_t)nb * BODY_BYTES + (size_t)nj * JOINT_BYTES + 12))
        return damaged(w, "payload too short for the bodies and joints", -1, NULL);
    double time = get_f64(r);
    dvi_step_stats st;
    memset(&st, 0, sizeof st);
#define GET_STAT(type, field) st.field = get_##type(r);
    STATS_FIELDS(GET_STAT)
#undef GET_STAT
    st.chattering_contact = -1; /* not state: the chatter count starts afresh */
    st.ccp_hover_contact = -1;
    st.coulomb_contact = -1;
    if (apply) {
        w->time = time;
        w->stats = st;
    }
    for (int32_t i = 0; i < nb; i++) {
        wld_body tmp;
        wld_body* d = apply ? &w->bodies[i] : &tmp;
#define GET_BODY(field, n) get_f64s(r, d->field, n);
        BODY_FIELDS(GET_BODY)
#undef GET_BODY
    }
    for (int32_t i = 0; i < nj; i++) {
        wld_joint tmp;
        wld_joint* j = apply ? &w->joints[i] : &tmp;
        j->speed = get_f64(r);
        j->torque = get_f64(r);
        int32_t nrows = get_i32(r);
        if (nrows < 0 || nrows > DVI_JOINT_MAX_ROWS) return damaged(w, "joints", i, "nrows");
        j->nrows = nrows;
        get_f64s(r, j->gamma, DVI_JOINT_MAX_ROWS);
        for (int q = 0; q < DVI_JOINT_MAX_ROWS; q++) get_f64s(r, j->jb[q], 6);
        get_f64s(r, j->reaction_force, 3);
        get_f64s(r, j->reaction_torque, 3);
    }

    /* DEM: step count and contact history */
    uint64_t dem_steps = get_u64(r);
    uint32_t nh = get_u32(r);
    if (nh > (uint32_t)INT32_MAX / 4 || !need(r, (size_t)nh * DEM_ENTRY_BYTES + 4))
        return damaged(w, "DEM history count does not fit the payload", -1, NULL);
    if (apply) {
        r->pos += (size_t)nh * DEM_ENTRY_BYTES; /* built in counts->history by the validation */
    } else {
        wld_dem_history* hist = &counts->history;
        if (nh > 0 && wld_dem_history_reserve(hist, (int32_t)nh) != DVI_OK)
            return wld_error(w, DVI_ERR_NOMEM, "state: out of memory");
        for (uint32_t k = 0; k < nh; k++) {
            wld_dem_key key;
            get_key(r, &key.shape_a, &key.shape_b, &key.feature);
            double u[3], roll[3];
            get_f64s(r, u, 3);
            get_f64s(r, roll, 3);
            if (key.shape_a < 0 || key.shape_a >= ns) return damaged(w, "dem_history", k, "shape_a");
            if (key.shape_b < 0 || key.shape_b >= ns || key.shape_b == key.shape_a)
                return damaged(w, "dem_history", k, "shape_b");
            if (wld_dem_history_find(hist, &key) >= 0)
                return wld_error(w, DVI_ERR_PARSE, "state: damaged data (dem_history[%u]: duplicate key)",
                                       (unsigned)k);
            int32_t e;
            if (wld_dem_history_insert(hist, &key, &e) != DVI_OK) /* reserved: cannot fail */
                return wld_error(w, DVI_ERR_NOMEM, "state: out of memory");
            wld_dem_entry* en = &hist->entries[e];
            en->stamp = dem_steps; /* as if renewed by the last step */
            memcpy(en->u, u, sizeof u);
            memcpy(en->roll, roll, sizeof roll);
        }
    }

    uint32_t nc = get_u32(r);
    if (nc > (uint32_t)INT32_MAX - 1 || !need(r, (size_t)nc * CONTACT_BYTES + 4))
        return damaged(w, "contact count does not fit the payload", -1, NULL);
    for (uint32_t c = 0; c < nc; c++) {
        wld_contact_rec rec;
        rec.body_a = get_i32(r);
        rec.body_b = get_i32(r);
        get_key(r, &rec.shape_a, &rec.shape_b, &rec.feature);
        get_f64s(r, rec.point, 3);
        double normal[3], tangents[6], arm[6]; /* the tangents: the basis of the normal, as written */
        get_f64s(r, normal, 3);
        get_f64s(r, tangents, 6);
        rec.distance = get_f64(r);
        rec.row = get_i32(r);
        rec.nrows = get_i32(r);
        get_f64s(r, arm, 6);
        double ell = get_f64(r);
        get_f64s(r, rec.force, 3);
        if (rec.body_a < 0 || rec.body_a >= nb) return damaged(w, "contacts", c, "body_a");
        if (rec.body_b < 0 || rec.body_b >= nb) return damaged(w, "contacts", c, "body_b");
        if (rec.shape_a < 0 || rec.shape_a >= ns || w->shapes[rec.shape_a].body != rec.body_a)
            return damaged(w, "contacts", c, "shape_a");
        if (rec.shape_b < 0 || rec.shape_b >= ns || w->shapes[rec.shape_b].body != rec.body_b)
            return damaged(w, "contacts", c, "shape_b");
        /* DVI: the contact's rows in the CCP; DEM: penalty contacts have none */
        if (dem ? rec.nrows != 0 : rec.nrows != 3 && rec.nrows != 6) return damaged(w, "contacts", c, "nrows");
        if (dem ? rec.row != -1 : rec.row < 0) return damaged(w, "contacts", c, "row");
        if (apply) {
            w->contacts[c] = rec;
            float* fr = w->fr_frame + 9 * (size_t)c;
            for (int k = 0; k < 3; k++) fr[k] = (float)normal[k];
            for (int k = 0; k < 6; k++) fr[3 + k] = (float)tangents[k];
            for (int k = 0; k < 6; k++) w->fr_arm[6 * (size_t)c + k] = (float)arm[k];
            w->fr_ell[c] = ell;
        }
    }

    uint32_t nw = get_u32(r);
    if (nw > (uint32_t)INT32_MAX - 1 || !need(r, (size_t)nw * WARM_BYTES + 8))
        return damaged(w, "warm-start point count does not fit the payload", -1, NULL);
    size_t nroll = 0; /* points with spin and rolling impulses */
    for (uint32_t k = 0; k < nw; k++) {
        wld_warm_point pt;
        double roll[3];
        get_key(r, &pt.shape_a, &pt.shape_b, &pt.feature);
        get_f64s(r, pt.point, 3);
        get_f64s(r, pt.gamma, 3);
        get_f64s(r, roll, 3);
        if (pt.shape_a < 0 || pt.shape_a >= ns) return damaged(w, "warm", k, "shape_a");
        if (pt.shape_b < 0 || pt.shape_b >= ns) return damaged(w, "warm", k, "shape_b");
        /* spin and rolling impulses that are all zero are kept as none: the
         * same numbers for the next step, the same bytes when saved again */
        pt.roll = -1;
        if (roll[0] != 0.0 || roll[1] != 0.0 || roll[2] != 0.0) {
            if (apply) {
                pt.roll = (int32_t)nroll;
                for (int q = 0; q < 3; q++) w->warm_roll[3 * nroll + (size_t)q] = roll[q];
            }
            nroll++;
        }
        if (apply) w->warm[k] = pt;
    }

    uint64_t nslot = get_u64(r);
    if (r->bad) return damaged(w, "payload too short for the warm-start table", -1, NULL);
    /* the table: empty (never stepped) or a power of two ≥ 16 with at least
     * one empty slot, since a look-up probes until it meets one */
    if (nslot != 0 && (nslot < 16 || (nslot & (nslot - 1)) != 0 || nslot > ((uint64_t)1 << 40)))
        return damaged(w, "warm-start table size is not a power of two >= 16", -1, NULL);
    if (r->n - r->pos < nslot * SLOT_BYTES || (counts->version == 2 && r->n - r->pos != nslot * SLOT_BYTES))
        return damaged(w, "payload size does not match its contents", -1, NULL);
    uint64_t empty = 0;
    for (uint64_t k = 0; k < nslot; k++) {
        wld_warm_slot s;
        s.shape_a = get_i32(r);
        s.shape_b = get_i32(r);
        s.first = get_i32(r);
        if (s.shape_a == -1) {
            if (s.shape_b != -1 || s.first != -1) return damaged(w, "slots", (long long)k, "shape_b/first");
            empty++;
        } else {
            if (s.shape_a < 0 || s.shape_a >= ns) return damaged(w, "slots", (long long)k, "shape_a");
            if (s.shape_b < 0 || s.shape_b >= ns) return damaged(w, "slots", (long long)k, "shape_b");
            if (s.first < 0 || (uint32_t)s.first >= nw) return damaged(w, "slots", (long long)k, "first");
        }
        if (apply) w->slots[k] = s;
    }
    if (nslot != 0 && empty == 0) return damaged(w, "warm-start table has no empty slot", -1, NULL);
    dvi_status est = read_elements(w, r, counts);
    if (est != DVI_OK) return est;
    if (r->bad || r->pos != r->n) return damaged(w, "payload size does not match its contents", -1, NULL);
    if (apply) {
        w->contact_count = (int32_t)nc;
        w->warm_count = (int32_t)nw;
        w->slot_count = (size_t)nslot;
        if (w->dem) {
            wld_dem_history_free(&w->dem->history);
            w->dem->history = counts->history;
            wld_dem_history_init(&counts->history, &w->alloc);
            w->dem->steps = dem_steps;
        }
    }
    counts->dem_steps = dem_steps;
    counts->contacts = nc;
    counts->warm = nw;
    counts->warm_roll = nroll;
    counts->slots = nslot;
    return DVI_OK;
}

static uint32_t rd_u32_at(const uint8_t* p, size_t at)
{
    uint32_t v = 0;
    for (int k = 0; k < 4; k++) v |= (uint32_t)p[at + (size_t)k] << (8 * k);
    return v;
}

static uint64_t rd_u64_at(const uint8_t* p, size_t at)
{
    uint64_t v = 0;
    for (int k = 0; k < 8; k++) v |= (uint64_t)p[at + (size_t)k] << (8 * k);
    return v;
}

static dvi_status structure_differs(dvi_world* w, const char* what, uint32_t saved, int32_t here)
{
    return wld_error(w, DVI_ERR_INVALID_ARG,
                           "state: structure differs from this world (%s %u in the state vs %d here)", what, saved,
                           (int)here);
}

/* Validates the blob against the world (everything dvi_world_load_state
 * checks) and, with apply, writes it into the world. *time (if given) gets
 * the state's time once the blob is known to be valid. */
static dvi_status load_or_check(dvi_world* w, const void* data, size_t size, bool apply, double* time)
{
    if (!w) return base_error_set(DVI_ERR_INVALID_ARG, "world: NULL");
    if (!data || size == 0) return wld_error(w, DVI_ERR_INVALID_ARG, "state: no data");
    const uint8_t* p = data;
    if (size < HEADER_SIZE)
        return wld_error(w, DVI_ERR_PARSE, "state: truncated (%zu bytes; the header alone has %u)", size,
                               HEADER_SIZE);
    if (memcmp(p, STATE_MAGIC, 8) != 0)
        return wld_error(w, DVI_ERR_PARSE, "state: not a world state (magic \"DVISTATE\" missing)");
    uint32_t version = rd_u32_at(p, 8);
    if (version < STATE_VERSION_OLDEST || version > STATE_VERSION)
        return wld_error(w, DVI_ERR_PARSE,
                               "state: format version %u not supported (this library reads %u to %u)", version,
                               STATE_VERSION_OLDEST, STATE_VERSION);
    uint32_t bom = rd_u32_at(p, 12);
    if (bom == 0x04030201u)
        return wld_error(w, DVI_ERR_PARSE, "state: written with the opposite byte order");
    if (bom != STATE_BOM || rd_u32_at(p, 16) != HEADER_SIZE || rd_u32_at(p, 20) != 0 || rd_u32_at(p, 44) != 0)
        return wld_error(w, DVI_ERR_PARSE, "state: damaged header");
    uint64_t payload = rd_u64_at(p, 24);
    if (payload != size - HEADER_SIZE) {
        if (payload > size - HEADER_SIZE)
            return wld_error(w, DVI_ERR_PARSE, "state: truncated (%zu bytes, the header announces %llu)", size,
                                   (unsigned long long)payload + HEADER_SIZE);
        return wld_error(w, DVI_ERR_PARSE, "state: %zu bytes, the header announces %llu", size,
                               (unsigned long long)payload + HEADER_SIZE);
    }
    uint64_t sum = base_fnv1a(base_fnv1a(DVI_FNV_OFFSET, p, CHECKSUM_AT), p + HEADER_SIZE, (size_t)payload);
    if (sum != rd_u64_at(p, CHECKSUM_AT))
        return wld_error(w, DVI_ERR_PARSE, "state: checksum mismatch (damaged data)");

    /* structure: counts, then the hashes, naming the first object that differs */
    uint32_t nb = rd_u32_at(p, 32), ns = rd_u32_at(p, 36), nj = rd_u32_at(p, 40);
    if (nb != (uint32_t)w->body_count) return structure_differs(w, "bodies", nb, w->body_count);
    if (ns != (uint32_t)w->shape_count) return structure_differs(w, "shapes", ns, w->shape_count);
    if (nj != (uint32_t)w->joint_count) return structure_differs(w, "joints", nj, w->joint_count);
    size_t nobj = (size_t)nb + ns + nj;
    rbuf r = {p + HEADER_SIZE, (size_t)payload, 0, false};
    if (!need(&r, 8 * (nobj + 1))) return damaged(w, "payload too short for the structure", -1, NULL);
    uint64_t saved_settings = get_u64(&r);
    uint64_t fp = fnv_u64(DVI_FNV_OFFSET, saved_settings);
    for (size_t i = 0; i < nobj; i++) fp = fnv_u64(fp, rd_u64_at(r.p, 8 + 8 * i));
    if (fp != rd_u64_at(p, 48)) return damaged(w, "fingerprint does not match the structure hashes", -1, NULL);
    if (saved_settings != settings_hash(w))
        return wld_error(w, DVI_ERR_INVALID_ARG,
                               "state: structure differs from this world (world settings: gravity, collision "
                               "envelope, recovery speeds, bounce threshold, method or DEM settings)");
    for (int32_t i = 0; i < w->body_count; i++)
        if (get_u64(&r) != body_hash(&w->bodies[i])) {
            char name[128];
            return wld_error(w, DVI_ERR_INVALID_ARG,
                                   "state: structure differs from this world (%s: type, mass, inertia or "
                                   "gravity scale)",
                                   wld_body_name(w, i, name, sizeof name));
        }
    for (int32_t i = 0; i < w->shape_count; i++)
        if (get_u64(&r) != shape_hash(w, i))
            return wld_error(w, DVI_ERR_INVALID_ARG,
                                   "state: structure differs from this world (shapes[%d]: body, type, size, offset, "
                                   "material, data or DEM samples)",
                                   (int)i);
    for (int32_t i = 0; i < w->joint_count; i++)
        if (get_u64(&r) != joint_hash(&w->joints[i]))
            return wld_error(w, DVI_ERR_INVALID_ARG,
                                   "state: structure differs from this world (joints[%d]: type, bodies, anchors, "
                                   "axes or motor kind)",
                                   (int)i);

    /* the state: validate everything, make room, then apply */
    size_t state_at = r.pos;
    state_counts counts;
    memset(&counts, 0, sizeof counts);
    wld_dem_history_init(&counts.history, &w->alloc);
    counts.version = version;
    dvi_status st = read_state(w, &r, false, &counts);
    if (st == DVI_OK && time) {
        uint64_t bits = rd_u64_at(r.p, state_at);
        memcpy(time, &bits, sizeof *time);
    }
    if (!apply) {
        wld_dem_history_free(&counts.history);
        return st;
    }
    if (st == DVI_OK &&
        (!RESERVE(w, contacts, (size_t)counts.contacts + 1) || !wld_step_reserve_frames(w, (int32_t)counts.contacts) ||
         !RESERVE(w, warm, (size_t)counts.warm + 1) || !RESERVE(w, warm_roll, 3 * counts.warm_roll + 3) ||
         (counts.slots > 0 && !RESERVE(w, slots, (size_t)counts.slots)) ||
         ((counts.dem_steps > 0 || counts.history.count > 0) && !wld_dem_get(w))))
        st = wld_error(w, DVI_ERR_NOMEM, "state: out of memory");
    if (st == DVI_OK) st = load_elements(w, &r, &counts);
    if (st == DVI_OK) {
        r.pos = state_at;
        r.bad = false;
        st = read_state(w, &r, true, &counts); /* DVI_OK: the same bytes were validated above */
    }
    wld_dem_history_free(&counts.history); /* empty when applied */
    return st;
}

dvi_status dvi_world_load_state(dvi_world* w, const void* data, size_t size)
{
    return load_or_check(w, data, size, true, NULL);
}

dvi_status wld_check_state(dvi_world* w, const void* data, size_t size, double* time)
{
    return load_or_check(w, data, size, false, time);
}
