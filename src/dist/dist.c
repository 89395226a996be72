/* dvicontact — one scene over MPI ranks (include/dvi/dist.h; docs/scale.md).
 *
 * Decomposition. The generated bodies (the scene's beds) are cut into a grid
 * of px × py subdomains: px slabs along x at the quantiles of their initial
 * centres, each slab cut along y at the quantiles of its own bodies (plan();
 * drawn again from the current centres when the load drifts, rebalance());
 * a generated body belongs to the cell its centre is in when the ghosts are
 * chosen. Bodies the scene
 * lists one by one belong to rank 0 when they move (the rover and its
 * joints stay whole on one rank: its joint solve is rank 0's alone) and to
 * every rank when they are fixed (walls, terrain).
 *
 * Each rank steps an ordinary world (dvi_world_step, unchanged) holding its
 * owned bodies, the fixed ones and ghosts, created in the scene's order by
 * sc_model_create_subset. The world's collision sorts its points by shape
 * index, so the points of a body are those of the single process, in the
 * same order; its forces and its integration are then the same operations
 * on the same numbers, hence the same bits, provided that
 *   (1) every body that can touch an owned body is local: the level-1
 *       ghosts, the bodies whose box (centre ± (bounding radius + envelope +
 *       skin)) meets the union of the owned bodies' boxes;
 *   (2) every body that can touch a level-1 ghost is local too (level 2):
 *       the DEM force of a contact reads per-body sums over each body's
 *       contacts (the dashpot limits Λ and W, dem.c), complete only for a
 *       body all of whose partners are present;
 *   (3) the ghosts' states are the owners' at the start of every step: the
 *       owners send them after each step (the halo), overwriting whatever
 *       the receiving rank computed for them;
 *   (4) the contact history of a pair is the one the single process has:
 *       an entry rides with its carrier body (the body of shape_a unless
 *       that one is fixed, then the body of shape_b) whenever the ghosts
 *       are chosen, from the carrier's owner, whose copy is exact by (1)–(3).
 * The boxes hold while no body has moved more than skin/2 since they were
 * drawn: each step's reduction takes the largest displacement and the
 * ghosts are chosen again beyond it (a rebuild: the bodies that left their
 * slab move to their new owner at the same time). Ghosts and rebuilds
 * change which rank computes what, never a number, so the states are
 * bit-identical to the single process for any rank count, any thread count
 * and any skin.
 *
 * Communication per step: one halo exchange (13 doubles per ghost, one
 * message to each rank that has ghosts of ours), and two reductions of a
 * few numbers (a failure flag and the displacement, MAX; the contact count,
 * SUM: both exact in any order). Per rebuild: two all-gathers of one box
 * per rank and three all-to-all exchanges of body records.
 *
 * Cost per rank: the step of its world, O(owned + ghosts); a rebuild walks
 * the scene's generators (O(bodies) arithmetic, no memory) and tests each
 * owned body against each rank's box (O(owned × ranks)). Memory: the
 * world, the scene, and 24 bytes per scene body in the subset model's
 * tables (its body ids and masses).
 */
#include "dvi/dist.h"

#include "out_internal.h"

#include "dem.h"
#include "error.h"
#include "hash_rng.h"
#include "math3.h"
#include "ccp_work.h"
#include "registry.h"
#include "scene_internal.h"
#include "world_internal.h"

#include <math.h>
#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <errno.h>
#include <sys/stat.h>

#define OWNER_ALL (-1) /* fixed bodies: on every rank, owned by none */

/* What travels with a body when the ghosts are chosen. */
typedef struct dst_rec {
    int64_t gid;      /* scene body index */
    int32_t entries;  /* history entries following it in the buffer */
    int32_t level;    /* 0 owned, 1 or 2 ghost */
    double s[13];     /* x, q, v, ω */
    double cf[6];     /* contact force and torque of the last step */
    double radius;    /* bounding radius */
} dst_rec;

/* What a contact carries from step to step, with the scene's shape indices:
 * a DEM history entry, or (DVI) a warm-start point: its point in u, its
 * normal and tangential impulses in ft, its spin and rolling ones in roll
 * with reversals = 1 (0: none). */
typedef struct dst_entry {
    int64_t shape_a, shape_b;
    uint32_t feature;
    int32_t reversals;
    int32_t near_limit;
    int32_t pad;
    double u[3], roll[3], ft[3];
} dst_entry;

struct dvi_dist {
    MPI_Comm comm;
    int rank, size;
    bool dvi;          /* the DVI method: the step's CCP is shared (dvi_ccp_shared), contacts carry warm starts */
    dvi_ccp_shared share; /* its callbacks (ctx = this) */
    uint8_t* own8;     /* [local] 1: owned (the world's share_body_own) */
    MPI_Op op_max;     /* the largest, a NaN winning */
    const dvi_scene* scene;
    double dt, skin, envelope;
    double rebalance_at; /* > 0: rebalance past this imbalance; ≤ 0: never */
    int px, py;        /* the grid of subdomains: px along x, py along y (px · py = ranks) */
    double* xcuts;     /* [px − 1] */
    double* ycuts;     /* [px · (py − 1)]: each x slab's own cuts along y */
    int64_t nexp;      /* explicit bodies */
    int64_t* gshape0;  /* [nexp + 1] the scene's first shape index of each explicit body */
    int64_t steps, rebuilds;
    uint64_t fingerprint; /* of the scene: its body counts, step and initial positions (checkpoints) */

    dvi_model* model;  /* this rank's world */
    dvi_world* world;
    int64_t* ids;      /* [local] scene indices of the world's bodies, ascending */
    int32_t nlocal;
    int8_t* level;     /* [local] 0 owned, 1/2 ghost, 3 fixed */
    int32_t* owned;    /* [nowned] local indices of the owned bodies, ascending */
    int32_t nowned;
    double* x0;        /* [3 nowned] their centres at the last rebuild */
    int64_t* lshape_g; /* [world shapes] scene shape index of each local shape */

    /* halo: per rank, the local indices sent to it (owned) / received from it (ghosts) */
    int32_t* send_first; /* [size + 1] into send_idx */
    int32_t* send_idx;
    int32_t* recv_first; /* [size + 1] into recv_idx */
    int32_t* recv_idx;
    double* sbuf;
    double* rbuf;
    MPI_Request* req;

    bool rebuild_due;    /* the last step moved a body half the skin: rebuild before the next step (the
                          * world keeps its last step's contacts for the probes until then) */
    MPI_Op op_sum;       /* the sum in rank order (a non-commutative operation: the same order each time) */
    double* praw;        /* [3 · pcap] a probe's raw values: this rank's part, their sums, their maxima */
    int32_t pcap;

    dvi_dist_stats st;
    double t_comm;       /* accumulates during a step */
    char err[640];
};

/* ---- small helpers ---------------------------------------------------------------------- */

static double now(void)
{
    return MPI_Wtime();
}

static void set_err(dvi_dist* d, const char* fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d->err, sizeof d->err, fmt, ap);
    va_end(ap);
}

static void copy_msg(char* msg, size_t size, const char* text)
{
    if (msg && size > 0) snprintf(msg, size, "%s", text);
}

static int cmp_i64(const void* a, const void* b)
{
    int64_t x = *(const int64_t*)a, y = *(const int64_t*)b;
    return (x > y) - (x < y);
}

static int32_t local_of(const dvi_dist* d, int64_t gid)
{
    int32_t lo = 0, hi = d->nlocal;
    while (lo < hi) {
        int32_t mid = lo + (hi - lo) / 2;
        if (d->ids[mid] < gid) lo = mid + 1;
        else hi = mid;
    }
    return lo < d->nlocal && d->ids[lo] == gid ? lo : -1;
}

static bool is_fixed(const dvi_dist* d, int64_t gid)
{
    return gid < d->nexp && d->scene->bodies[gid].type == DVI_BODY_FIXED;
}

/* The number of the n ascending cuts that are ≤ c. */
static int count_le(const double* cuts, int n, double c)
{
    int lo = 0, hi = n;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (cuts[mid] <= c) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* The rank a movable body belongs to, from its centre: its x slab, then its
 * cell of that slab along y. */
static int owner_of(const dvi_dist* d, int64_t gid, const double* x)
{
    if (gid < d->nexp) return 0;
    int i = count_le(d->xcuts, d->px - 1, x[0]);
    return i * d->py + count_le(d->ycuts + (size_t)i * (size_t)(d->py - 1), d->py - 1, x[1]);
}

/* The scene's index of the j-th shape of scene body gid. */
static int64_t gshape(const dvi_dist* d, int64_t gid, int32_t j)
{
    return gid < d->nexp ? d->gshape0[gid] + j : d->gshape0[d->nexp] + (gid - d->nexp);
}

/* The local shape index of the scene's shape g on local body k (−1: none). */
static int32_t lshape(const dvi_dist* d, int32_t k, int64_t g)
{
    const wld_body* b = &d->world->bodies[k];
    int64_t j = g - gshape(d, d->ids[k], 0);
    if (j < 0 || j >= b->shape_count) return -1;
    int32_t s = b->shape_head;
    for (int64_t i = 0; i < j; i++) s = d->world->shapes[s].next;
    return s;
}

/* Which scene body shape g belongs to. */
static int64_t body_of_gshape(const dvi_dist* d, int64_t g)
{
    if (g >= d->gshape0[d->nexp]) return d->nexp + (g - d->gshape0[d->nexp]);
    int64_t lo = 0, hi = d->nexp; /* last i with gshape0[i] ≤ g */
    while (hi - lo > 1) {
        int64_t mid = (lo + hi) / 2;
        if (d->gshape0[mid] <= g) lo = mid;
        else hi = mid;
    }
    return lo;
}

/* ---- collective status ---------------------------------------------------------------- */

/* The failing rank `root`'s status and message (d->err, prefixed with its
 * rank), on every rank. */
static dvi_status failure_from(dvi_dist* d, int root, dvi_status st)
{
    char text[sizeof d->err];
    if (d->rank == root) snprintf(text, sizeof text, "rank %d: %.600s", d->rank, d->err);
    MPI_Bcast(text, (int)sizeof text, MPI_CHAR, root, d->comm);
    memcpy(d->err, text, sizeof text);
    int sroot = d->rank == root ? (int)st : 0;
    MPI_Bcast(&sroot, 1, MPI_INT, root, d->comm);
    return (dvi_status)sroot;
}

/* Every rank's status → the same status on all; the message of the lowest
 * failing rank in d->err everywhere. */
static dvi_status agree(dvi_dist* d, dvi_status st)
{
    int mine = st < 0 ? d->size - d->rank : 0, worst = 0; /* the lowest failing rank gives the largest */
    MPI_Allreduce(&mine, &worst, 1, MPI_INT, MPI_MAX, d->comm);
    return worst == 0 ? DVI_OK : failure_from(d, d->size - worst, st);
}

/* ---- body records --------------------------------------------------------------------------- */

/* The record of local body k. */
static void make_rec(const dvi_dist* d, int32_t k, int level, dst_rec* r)
{
    const wld_body* b = &d->world->bodies[k];
    memset(r, 0, sizeof *r);
    r->gid = d->ids[k];
    r->level = level;
    wld_body_state13(b, r->s);
    v3_copy(r->cf, b->contact_force);
    v3_copy(r->cf + 3, b->contact_torque);
    r->radius = b->bounding_radius;
}

static void rec_box(const dvi_dist* d, const dst_rec* r, double* box)
{
    const double e = r->radius + d->envelope + d->skin;
    for (int k = 0; k < 3; k++) {
        box[k] = r->s[k] - e;
        box[3 + k] = r->s[k] + e;
    }
}

static bool box_meets(const double* a, const double* b)
{
    for (int k = 0; k < 3; k++)
        if (a[3 + k] < b[k] || b[3 + k] < a[k]) return false;
    return true;
}

static void box_grow(double* box, const double* b)
{
    for (int k = 0; k < 3; k++) {
        if (b[k] < box[k]) box[k] = b[k];
        if (b[3 + k] > box[3 + k]) box[3 + k] = b[3 + k];
    }
}

/* A growable byte buffer per destination rank. */
typedef struct dst_out {
    unsigned char** buf;
    size_t* len;
    size_t* cap;
    int n;
} dst_out;

static bool out_init(dst_out* o, int n)
{
    o->n = n;
    o->buf = calloc((size_t)n, sizeof *o->buf);
    o->len = calloc((size_t)n, sizeof *o->len);
    o->cap = calloc((size_t)n, sizeof *o->cap);
    return o->buf && o->len && o->cap;
}

static void out_free(dst_out* o)
{
    for (int i = 0; o->buf && i < o->n; i++) free(o->buf[i]);
    free(o->buf);
    free(o->len);
    free(o->cap);
}

static bool out_put(dst_out* o, int to, const void* p, size_t n)
{
    if (o->len[to] + n > o->cap[to]) {
        size_t c = o->cap[to] ? 2 * o->cap[to] : 4096;
        while (c < o->len[to] + n) c *= 2;
        unsigned char* q = realloc(o->buf[to], c);
        if (!q) return false;
        o->buf[to] = q;
        o->cap[to] = c;
    }
    memcpy(o->buf[to] + o->len[to], p, n);
    o->len[to] += n;
    return true;
}

/* All-to-all of the buffers; the received bytes in *in (*in_len). Returns
 * false when out of memory (on this rank; the caller agrees). */
static bool exchange(dvi_dist* d, dst_out* o, unsigned char** in, size_t* in_len)
{
    const int P = d->size;
    int* sc = calloc((size_t)P, sizeof *sc);
    int* rc = calloc((size_t)P, sizeof *rc);
    int* sd = calloc((size_t)P, sizeof *sd);
    int* rd = calloc((size_t)P, sizeof *rd);
    bool ok = sc && rc && sd && rd;
    size_t total = 0, rtotal = 0;
    for (int i = 0; ok && i < P; i++) total += o->len[i];
    unsigned char* sb = ok ? malloc(total + 1) : NULL;
    ok = ok && sb;
    int okflag = ok, all;
    MPI_Allreduce(&okflag, &all, 1, MPI_INT, MPI_MIN, d->comm);
    if (!all) {
        free(sb), free(sc), free(rc), free(sd), free(rd);
        return false;
    }
    size_t at = 0;
    for (int i = 0; i < P; i++) {
        sd[i] = (int)at;
        sc[i] = (int)o->len[i];
        if (o->len[i]) memcpy(sb + at, o->buf[i], o->len[i]);
        at += o->len[i];
    }
    double t0 = now();
    MPI_Alltoall(sc, 1, MPI_INT, rc, 1, MPI_INT, d->comm);
    for (int i = 0; i < P; i++) {
        rd[i] = (int)rtotal;
        rtotal += (size_t)rc[i];
    }
    unsigned char* rb = malloc(rtotal + 1);
    okflag = rb != NULL;
    MPI_Allreduce(&okflag, &all, 1, MPI_INT, MPI_MIN, d->comm);
    if (all) MPI_Alltoallv(sb, sc, sd, MPI_BYTE, rb, rc, rd, MPI_BYTE, d->comm);
    d->t_comm += now() - t0;
    d->st.bytes_rebuild_total += (int64_t)(total - o->len[d->rank]);
    free(sb), free(sc), free(rc), free(sd), free(rd);
    if (!all) {
        free(rb);
        return false;
    }
    *in = rb;
    *in_len = rtotal;
    return true;
}

/* ---- choosing the ghosts (a rebuild) -------------------------------------------------------- */

/* The history entries of the current world carried by its owned bodies,
 * grouped per owned body: first[k]..first[k+1] of the owned list's k-th. */
static dst_entry* carried_entries(dvi_dist* d, int32_t** first_out)
{
    int32_t* first = calloc((size_t)d->nowned + 2, sizeof *first);
    int32_t* slot = malloc(((size_t)d->nlocal + 1) * sizeof *slot); /* local body → owned position, or −1 */
    wld_dem* dem = d->world && !d->dvi ? wld_dem_get(d->world) : NULL;
    const int32_t ne = d->dvi ? (d->world ? d->world->warm_count : 0) : dem ? dem->history.count : 0;
    dst_entry* out = malloc(((size_t)ne + 1) * sizeof *out);
    int32_t* carrier = malloc(((size_t)ne + 1) * sizeof *carrier);
    if (!first || !slot || !out || !carrier || (d->world && !d->dvi && !dem)) {
        free(first), free(slot), free(out), free(carrier);
        return NULL;
    }
    for (int32_t k = 0; k < d->nlocal; k++) slot[k] = -1;
    for (int32_t k = 0; k < d->nowned; k++) slot[d->owned[k]] = k;
    for (int32_t e = 0; e < ne; e++) {
        const int32_t sa = d->dvi ? d->world->warm[e].shape_a : dem->history.entries[e].key.shape_a;
        const int32_t sb = d->dvi ? d->world->warm[e].shape_b : dem->history.entries[e].key.shape_b;
        int32_t ba = d->world->shapes[sa].body, bb = d->world->shapes[sb].body;
        int32_t c = d->level[ba] == 3 ? bb : ba;
        carrier[e] = slot[c];
        if (carrier[e] >= 0) first[carrier[e] + 1]++;
    }
    for (int32_t k = 0; k < d->nowned; k++) first[k + 1] += first[k];
    int32_t* fill = malloc(((size_t)d->nowned + 1) * sizeof *fill);
    if (!fill) {
        free(first), free(slot), free(out), free(carrier);
        return NULL;
    }
    memcpy(fill, first, ((size_t)d->nowned + 1) * sizeof *fill);
    for (int32_t e = 0; e < ne; e++) {
        if (carrier[e] < 0) continue;
        dst_entry* o = &out[fill[carrier[e]]++];
        memset(o, 0, sizeof *o);
        if (d->dvi) { /* in the warm points' order: a pair's points stay in order */
            const wld_warm_point* wp = &d->world->warm[e];
            o->shape_a = d->lshape_g[wp->shape_a];
            o->shape_b = d->lshape_g[wp->shape_b];
            o->feature = wp->feature;
            v3_copy(o->u, wp->point);
            v3_copy(o->ft, wp->gamma);
            if (wp->roll >= 0) {
                o->reversals = 1;
                v3_copy(o->roll, d->world->warm_roll + 3 * (size_t)wp->roll);
            }
            continue;
        }
        const wld_dem_entry* en = &dem->history.entries[e];
        o->shape_a = d->lshape_g[en->key.shape_a];
        o->shape_b = d->lshape_g[en->key.shape_b];
        o->feature = en->key.feature;
        o->reversals = en->reversals;
        o->near_limit = en->near_limit;
        v3_copy(o->u, en->u);
        v3_copy(o->roll, en->roll);
        v3_copy(o->ft, en->ft);
    }
    free(fill), free(slot), free(carrier);
    *first_out = first;
    return out;
}

/* A parsed set of records with their entries. */
typedef struct dst_set {
    dst_rec* rec;
    int64_t n, cap;
    dst_entry* ent;
    int64_t ne, ecap;
    int64_t* efirst; /* [n + 1], filled by set_index */
} dst_set;

static void set_free(dst_set* s)
{
    free(s->rec), free(s->ent), free(s->efirst);
    memset(s, 0, sizeof *s);
}

static bool set_add(dst_set* s, const dst_rec* r, const dst_entry* e)
{
    if (s->n == s->cap) {
        int64_t c = s->cap ? 2 * s->cap : 256;
        dst_rec* q = realloc(s->rec, (size_t)c * sizeof *q);
        if (!q) return false;
        s->rec = q, s->cap = c;
    }
    if (s->ne + r->entries > s->ecap) {
        int64_t c = s->ecap ? 2 * s->ecap : 256;
        while (c < s->ne + r->entries) c *= 2;
        dst_entry* q = realloc(s->ent, (size_t)c * sizeof *q);
        if (!q) return false;
        s->ent = q, s->ecap = c;
    }
    s->rec[s->n++] = *r;
    if (r->entries) memcpy(s->ent + s->ne, e, (size_t)r->entries * sizeof *e);
    s->ne += r->entries;
    return true;
}

static bool set_parse(dst_set* s, const unsigned char* p, size_t n)
{
    size_t at = 0;
    while (at < n) {
        dst_rec r;
        memcpy(&r, p + at, sizeof r);
        at += sizeof r;
        if (!set_add(s, &r, (const dst_entry*)(const void*)(p + at))) return false;
        at += (size_t)r.entries * sizeof(dst_entry);
    }
    return true;
}

/* Sorts the records by scene index, keeping each one's entries with it. */
static bool set_sort(dst_set* s)
{
    int64_t* ef = malloc(((size_t)s->n + 1) * sizeof *ef);
    if (!ef) return false;
    int64_t at = 0;
    for (int64_t i = 0; i < s->n; i++) { /* each record's first entry */
        ef[i] = at;
        at += s->rec[i].entries;
    }
    /* sort (scene index, position) pairs, then permute */
    dst_rec* r2 = malloc(((size_t)s->n + 1) * sizeof *r2);
    dst_entry* e2 = malloc(((size_t)s->ne + 1) * sizeof *e2);
    int64_t* key = malloc(2 * ((size_t)s->n + 1) * sizeof *key);
    if (!r2 || !e2 || !key) {
        free(ef), free(r2), free(e2), free(key);
        return false;
    }
    for (int64_t i = 0; i < s->n; i++) key[2 * i] = s->rec[i].gid, key[2 * i + 1] = i;
    qsort(key, (size_t)s->n, 2 * sizeof *key, cmp_i64); /* gids are distinct */
    int64_t* nf = malloc(((size_t)s->n + 1) * sizeof *nf);
    if (!nf) {
        free(ef), free(r2), free(e2), free(key);
        return false;
    }
    int64_t eat = 0;
    for (int64_t i = 0; i < s->n; i++) {
        int64_t j = key[2 * i + 1];
        r2[i] = s->rec[j];
        nf[i] = eat;
        if (s->rec[j].entries) memcpy(e2 + eat, s->ent + ef[j], (size_t)s->rec[j].entries * sizeof *e2);
        eat += s->rec[j].entries;
    }
    nf[s->n] = eat;
    free(s->rec), free(s->ent), free(s->efirst), free(ef), free(key);
    s->rec = r2, s->ent = e2, s->cap = s->n, s->ecap = s->ne, s->efirst = nf;
    return true;
}

static bool put_rec(dst_out* o, int to, const dst_rec* r, int level, const dst_entry* e)
{
    dst_rec c = *r;
    c.level = level;
    return out_put(o, to, &c, sizeof c) && (c.entries == 0 || out_put(o, to, e, (size_t)c.entries * sizeof *e));
}

/* What a joint carries from step to step (its motor, its warm start, its
 * last rows and reaction): moved from an old world to a new one at a
 * rebuild, and through checkpoints. */
typedef struct dst_joint_state {
    int32_t present, nrows;
    double speed, ramp, torque, damping;
    double gamma[DVI_JOINT_MAX_ROWS], jb[DVI_JOINT_MAX_ROWS][6], ja[DVI_JOINT_MAX_ROWS][6];
    double reaction_force[3], reaction_torque[3];
} dst_joint_state;

static void joint_state_get(const wld_joint* j, dst_joint_state* js)
{
    memset(js, 0, sizeof *js);
    js->present = 1, js->nrows = j->nrows;
    js->speed = j->speed, js->ramp = j->ramp, js->torque = j->torque, js->damping = j->damping;
    memcpy(js->gamma, j->gamma, sizeof js->gamma);
    memcpy(js->jb, j->jb, sizeof js->jb);
    memcpy(js->ja, j->ja, sizeof js->ja);
    v3_copy(js->reaction_force, j->reaction_force);
    v3_copy(js->reaction_torque, j->reaction_torque);
}

static void joint_state_put(const dst_joint_state* js, wld_joint* j)
{
    j->speed = js->speed, j->ramp = js->ramp, j->torque = js->torque, j->damping = js->damping;
    j->nrows = js->nrows;
    memcpy(j->gamma, js->gamma, sizeof j->gamma);
    memcpy(j->jb, js->jb, sizeof j->jb);
    memcpy(j->ja, js->ja, sizeof j->ja);
    v3_copy(j->reaction_force, js->reaction_force);
    v3_copy(j->reaction_torque, js->reaction_torque);
}

/* The local shapes of an entry's pair (false: not both in this world). */
static bool entry_shapes(const dvi_dist* d, const dst_entry* en, int32_t* sa, int32_t* sb)
{
    const int32_t ka = local_of(d, body_of_gshape(d, en->shape_a)), kb = local_of(d, body_of_gshape(d, en->shape_b));
    if (ka < 0 || kb < 0) return false;
    *sa = lshape(d, ka, en->shape_a);
    *sb = lshape(d, kb, en->shape_b);
    return *sa >= 0 && *sb >= 0;
}

/* A warm-start point being placed: its local shapes and where it came from. */
typedef struct dst_warm {
    int32_t shape_a, shape_b;
    int64_t at; /* its place among the entries received (owned, then ghosts) */
    const dst_entry* e;
} dst_warm;

static int cmp_warm(const void* a, const void* b)
{
    const dst_warm *x = a, *y = b;
    if (x->shape_a != y->shape_a) return x->shape_a < y->shape_a ? -1 : 1;
    if (x->shape_b != y->shape_b) return x->shape_b < y->shape_b ? -1 : 1;
    return x->at < y->at ? -1 : x->at > y->at;
}

/* The new world's warm-start points (DVI): the received entries of the
 * pairs whose shapes are both local, sorted by local shape pair (the
 * collision's order, warm_find's), each pair's points in the order its
 * carrier sent them (the single process's). */
static bool warm_points(dvi_dist* d, dst_set* const sets[2])
{
    dvi_world* w = d->world;
    const int64_t ne = sets[0]->ne + sets[1]->ne;
    dst_warm* t = malloc(((size_t)ne + 1) * sizeof *t);
    if (!t) return false;
    int64_t n = 0, at = 0;
    for (int q = 0; q < 2; q++)
        for (int64_t e = 0; e < sets[q]->ne; e++, at++) {
            const dst_entry* en = &sets[q]->ent[e];
            dst_warm x = {0, 0, at, en};
            if (entry_shapes(d, en, &x.shape_a, &x.shape_b)) t[n++] = x;
        }
    qsort(t, (size_t)n, sizeof *t, cmp_warm);
    int32_t nroll = 0;
    for (int64_t i = 0; i < n; i++) nroll += t[i].e->reversals != 0;
    bool ok = DVI_RESERVE(w, warm, n + 1) && DVI_RESERVE(w, slots, 16) && DVI_RESERVE(w, warm_roll, 3 * (size_t)nroll + 3);
    if (ok) {
        w->slot_count = 16;
        for (size_t i = 0; i < 16; i++) w->slots[i] = (wld_warm_slot){-1, -1, -1};
        int32_t k = 0;
        for (int64_t i = 0; i < n; i++) {
            wld_warm_point* p = &w->warm[i];
            const dst_entry* en = t[i].e;
            p->shape_a = t[i].shape_a;
            p->shape_b = t[i].shape_b;
            p->feature = en->feature;
            v3_copy(p->point, en->u);
            v3_copy(p->gamma, en->ft);
            p->roll = -1;
            if (en->reversals) {
                p->roll = k;
                v3_copy(w->warm_roll + 3 * (size_t)k, en->roll);
                k++;
            }
        }
        w->warm_count = (int32_t)n;
    }
    free(t);
    return ok;
}

/* Builds this rank's world from the records of its owned bodies and ghosts
 * (each set sorted by scene index), the fixed bodies, time t and the DEM
 * step count; moves the joints' state over from the old world (rank 0). */
static dvi_status build_world(dvi_dist* d, dst_set* own, dst_set* gh, const int* ghost_from, double t,
                              uint64_t dem_steps)
{
    int64_t n = 0, cap = own->n + gh->n + d->nexp + 1;
    int64_t* ids = malloc((size_t)cap * sizeof *ids);
    if (!ids) return set_err(d, "out of memory"), DVI_ERR_NOMEM;
    for (int64_t g = 0; g < d->nexp; g++)
        if (is_fixed(d, g)) ids[n++] = g;
    for (int64_t i = 0; i < own->n; i++) ids[n++] = own->rec[i].gid;
    for (int64_t i = 0; i < gh->n; i++) ids[n++] = gh->rec[i].gid;
    qsort(ids, (size_t)n, sizeof *ids, cmp_i64);
    for (int64_t i = 1; i < n; i++)
        if (ids[i] == ids[i - 1]) {
            long long twice = (long long)ids[i];
            free(ids);
            return set_err(d, "body %lld came twice (owned and ghost)", twice), DVI_ERR_NUMERIC;
        }
    dvi_model* m = NULL;
    char msg[512];
    dvi_status st = sc_model_create_subset(d->scene, ids, n, &m, msg, sizeof msg);
    if (st != DVI_OK) {
        free(ids);
        return set_err(d, "%s", msg), st;
    }
    dvi_world* w = dvi_model_world(m);
    /* keep the old world's joints' state (the joints' bodies are rank 0's for the whole run) */
    if (d->model) {
        for (int32_t j = 0; j < sc_model_joint_count(m); j++) {
            dvi_joint_id a = sc_model_joint(d->model, j), b = sc_model_joint(m, j);
            if (DVI_IS_NULL(a) || DVI_IS_NULL(b)) continue;
            dst_joint_state js;
            joint_state_get(&d->world->joints[a.index1 - 1], &js);
            joint_state_put(&js, &w->joints[b.index1 - 1]);
        }
    }
    int8_t* level = malloc((size_t)n + 1);
    int32_t* owned = malloc(((size_t)own->n + 1) * sizeof *owned);
    double* x0 = malloc((3 * (size_t)own->n + 3) * sizeof *x0);
    int64_t* lsg = malloc(((size_t)w->shape_count + 1) * sizeof *lsg);
    if (!level || !owned || !x0 || !lsg) {
        free(ids), free(level), free(owned), free(x0), free(lsg);
        dvi_model_destroy(m);
        return set_err(d, "out of memory"), DVI_ERR_NOMEM;
    }
    /* replace the old world; the probes' averaging windows carry on */
    if (d->model) sc_model_carry_windows(m, d->model);
    dvi_model_destroy(d->model);
    free(d->ids), free(d->level), free(d->owned), free(d->x0), free(d->lshape_g);
    d->model = m, d->world = w, d->ids = ids, d->nlocal = (int32_t)n, d->level = level, d->owned = owned;
    d->x0 = x0, d->lshape_g = lsg;
    for (int32_t k = 0; k < d->nlocal; k++) {
        level[k] = 3;
        const wld_body* b = &w->bodies[k];
        int32_t s = b->shape_head;
        for (int32_t j = 0; j < b->shape_count; j++, s = w->shapes[s].next) lsg[s] = gshape(d, ids[k], j);
    }
    w->time = t;
    /* states */
    dst_set* sets[2] = {own, gh};
    d->nowned = 0;
    for (int q = 0; q < 2; q++)
        for (int64_t i = 0; i < sets[q]->n; i++) {
            const dst_rec* r = &sets[q]->rec[i];
            int32_t k = local_of(d, r->gid);
            wld_body* b = &w->bodies[k];
            v3_copy(b->x, r->s);
            memcpy(b->q, r->s + 3, 4 * sizeof(double));
            v3_copy(b->v, r->s + 7);
            v3_copy(b->w, r->s + 10);
            v3_copy(b->contact_force, r->cf);
            v3_copy(b->contact_torque, r->cf + 3);
            level[k] = (int8_t)(q == 0 ? 0 : r->level);
        }
    sc_model_set_part(m, level, d->rank == 0);
    sc_model_set_steps(m, d->steps);
    for (int32_t k = 0; k < d->nlocal; k++)
        if (level[k] == 0) {
            owned[d->nowned] = k;
            int64_t i = d->nowned++;
            v3_copy(x0 + 3 * i, w->bodies[k].x);
        }
    if (d->dvi) { /* the world's owner mask for its shared CCP */
        free(d->own8);
        d->own8 = malloc((size_t)d->nlocal + 1);
        if (!d->own8) return set_err(d, "out of memory"), DVI_ERR_NOMEM;
        for (int32_t k = 0; k < d->nlocal; k++) d->own8[k] = level[k] == 0;
        wld_set_share(w, &d->share, d->own8);
        if (!warm_points(d, sets)) return set_err(d, "out of memory"), DVI_ERR_NOMEM;
    }
    /* the contact history */
    wld_dem* dem = wld_dem_get(w);
    if (!dem) return set_err(d, "out of memory"), DVI_ERR_NOMEM;
    dem->steps = dem_steps;
    for (int q = 0; q < 2 && !d->dvi; q++)
        for (int64_t e = 0; e < sets[q]->ne; e++) {
            const dst_entry* en = &sets[q]->ent[e];
            wld_dem_key key = {0, 0, en->feature};
            if (!entry_shapes(d, en, &key.shape_a, &key.shape_b)) continue;
            int32_t at;
            if (wld_dem_history_find(&dem->history, &key) >= 0) continue;
            if (wld_dem_history_insert(&dem->history, &key, &at) != DVI_OK)
                return set_err(d, "out of memory"), DVI_ERR_NOMEM;
            wld_dem_entry* h = &dem->history.entries[at];
            h->stamp = dem_steps;
            v3_copy(h->u, en->u);
            v3_copy(h->roll, en->roll);
            v3_copy(h->ft, en->ft);
            h->reversals = en->reversals;
            h->near_limit = en->near_limit != 0;
        }
    /* the halo's lists: ghosts by the rank they come from, in scene order */
    for (int i = 0; i <= d->size; i++) d->recv_first[i] = 0;
    for (int64_t i = 0; i < gh->n; i++) d->recv_first[ghost_from[i] + 1]++;
    for (int i = 0; i < d->size; i++) d->recv_first[i + 1] += d->recv_first[i];
    int32_t* ri = realloc(d->recv_idx, ((size_t)gh->n + 1) * sizeof *ri);
    if (!ri) return set_err(d, "out of memory"), DVI_ERR_NOMEM;
    d->recv_idx = ri;
    int32_t* fill = calloc((size_t)d->size + 1, sizeof *fill);
    if (!fill) return set_err(d, "out of memory"), DVI_ERR_NOMEM;
    for (int64_t i = 0; i < gh->n; i++) /* gh is sorted by scene index: each rank's run stays sorted */
        ri[d->recv_first[ghost_from[i]] + fill[ghost_from[i]]++] = local_of(d, gh->rec[i].gid);
    free(fill);
    return DVI_OK;
}

/* One level of ghosts: this rank's box (`mine`, grown by the records of
 * `grow` when given) to every rank, then each owned record whose box meets
 * another rank's box, and was not sent there yet, goes there as a ghost of
 * `level`; the records this rank receives are added to *gh. Collective. */
static dvi_status ghost_level(dvi_dist* d, const dst_set* own, const dst_set* grow, double* mine, double* boxes,
                              uint8_t* sent, int level, dst_out* o, dst_set* gh)
{
    const int P = d->size;
    dvi_status st = DVI_OK;
    for (int64_t i = 0; grow && i < grow->n; i++) {
        double b[6];
        rec_box(d, &grow->rec[i], b);
        box_grow(mine, b);
    }
    double t0 = now();
    MPI_Allgather(mine, 6, MPI_DOUBLE, boxes, 6, MPI_DOUBLE, d->comm);
    d->t_comm += now() - t0;
    for (int i = 0; i < P; i++) o->len[i] = 0;
    for (int64_t i = 0; i < own->n && st == DVI_OK; i++) {
        double b[6];
        rec_box(d, &own->rec[i], b);
        for (int s = 0; s < P; s++)
            if (s != d->rank && !sent[i * P + s] && box_meets(b, boxes + 6 * s)) {
                sent[i * P + s] = (uint8_t)level;
                if (!put_rec(o, s, &own->rec[i], level, own->ent + own->efirst[i]))
                    st = (set_err(d, "out of memory"), DVI_ERR_NOMEM);
            }
    }
    st = agree(d, st);
    if (st != DVI_OK) return st;
    unsigned char* in = NULL;
    size_t in_len = 0;
    if (!exchange(d, o, &in, &in_len) || !set_parse(gh, in, in_len)) st = (set_err(d, "out of memory"), DVI_ERR_NOMEM);
    free(in);
    return agree(d, st);
}

/* The ghosts of the owned records `own` (sorted by scene index, with their
 * entries), then this rank's new world at time t and DEM step count
 * dem_steps, and the halo's lists. Collective. */
static dvi_status place(dvi_dist* d, dst_set* own, double t, uint64_t dem_steps)
{
    const int P = d->size;
    dvi_status st = DVI_OK;
    dst_out o = {0};
    dst_set g1 = {0};
    int* from = NULL;
    uint8_t* sent = NULL;
    double* boxes = NULL;
    /* level-1 ghosts: owned bodies whose box meets another rank's owned box;
     * level 2: bodies that can touch a level-1 ghost */
    boxes = malloc(6 * (size_t)P * sizeof *boxes);
    sent = calloc((size_t)own->n * (size_t)P + 1, 1);
    if (!boxes || !sent || !out_init(&o, P)) st = (set_err(d, "out of memory"), DVI_ERR_NOMEM);
    st = agree(d, st);
    double mine[6] = {INFINITY, INFINITY, INFINITY, -INFINITY, -INFINITY, -INFINITY};
    if (st == DVI_OK) st = ghost_level(d, own, own, mine, boxes, sent, 1, &o, &g1);
    if (st == DVI_OK) st = ghost_level(d, own, &g1, mine, boxes, sent, 2, &o, &g1); /* g1: level 1 so far */
    if (st == DVI_OK && !set_sort(&g1)) st = (set_err(d, "out of memory"), DVI_ERR_NOMEM);
    st = agree(d, st);
    if (st != DVI_OK) goto done;

    /* which rank each ghost comes from: its owner, by the same rule the owner used */
    from = malloc(((size_t)g1.n + 1) * sizeof *from);
    if (!from) st = (set_err(d, "out of memory"), DVI_ERR_NOMEM);
    for (int64_t i = 0; from && i < g1.n; i++) from[i] = owner_of(d, g1.rec[i].gid, g1.rec[i].s);
    if (st == DVI_OK) st = build_world(d, own, &g1, from, t, dem_steps);
    /* the halo's send lists (scene order) */
    if (st == DVI_OK) {
        for (int i = 0; i <= P; i++) d->send_first[i] = 0;
        for (int64_t i = 0; i < own->n; i++)
            for (int s = 0; s < P; s++)
                if (sent[i * P + s]) d->send_first[s + 1]++;
        for (int s = 0; s < P; s++) d->send_first[s + 1] += d->send_first[s];
        int32_t* si = realloc(d->send_idx, ((size_t)d->send_first[P] + 1) * sizeof *si);
        int32_t* fill = calloc((size_t)P + 1, sizeof *fill);
        if (si) d->send_idx = si;
        if (!si || !fill) {
            st = (set_err(d, "out of memory"), DVI_ERR_NOMEM);
        } else {
            for (int64_t i = 0; i < own->n; i++)
                for (int s = 0; s < P; s++)
                    if (sent[i * P + s]) si[d->send_first[s] + fill[s]++] = local_of(d, own->rec[i].gid);
        }
        free(fill);
    }
    if (st == DVI_OK) {
        size_t ns = (size_t)d->send_first[P], nr = (size_t)d->recv_first[P];
        double* sb = realloc(d->sbuf, (13 * ns + 1) * sizeof *sb);
        if (sb) d->sbuf = sb;
        double* rb = realloc(d->rbuf, (13 * nr + 1) * sizeof *rb);
        if (rb) d->rbuf = rb;
        if (!sb || !rb) st = (set_err(d, "out of memory"), DVI_ERR_NOMEM);
    }
    st = agree(d, st);
    if (st == DVI_OK) {
        d->rebuilds++;
        d->st.owned = d->nowned;
        d->st.ghosts = d->recv_first[P];
        d->st.local = d->nlocal;
    }
done:
    out_free(&o);
    set_free(&g1);
    free(from), free(sent), free(boxes);
    return st;
}

/* The records of the owned bodies of the current world with the history
 * entries they carry, appended to *o's buffers: to their new owners
 * (to_owner) or all to buffer 0. */
static dvi_status owned_records(dvi_dist* d, dst_out* o, bool to_owner)
{
    int32_t* efirst = NULL;
    dst_entry* ent = carried_entries(d, &efirst);
    dvi_status st = ent ? DVI_OK : (set_err(d, "out of memory"), DVI_ERR_NOMEM);
    for (int32_t k = 0; k < d->nowned && st == DVI_OK; k++) {
        dst_rec r;
        make_rec(d, d->owned[k], 0, &r);
        r.entries = efirst[k + 1] - efirst[k];
        if (!put_rec(o, to_owner ? owner_of(d, r.gid, r.s) : 0, &r, 0, ent + efirst[k]))
            st = (set_err(d, "out of memory"), DVI_ERR_NOMEM);
    }
    free(ent), free(efirst);
    return st;
}

static void draw_cuts(dvi_dist* d, double* c, int64_t n, double* yy);

#define REBALANCE_AT 1.2       /* default: the largest cell's generated bodies over the mean */
#define REBALANCE_SAMPLE 65536 /* centres the new cuts are drawn from, at most */

/* Rebalancing (collective; at each rebuild, before the bodies move): when
 * the cell with the most generated bodies holds more than REBALANCE_AT
 * times the mean (a bed flowing to one side), the cuts are drawn again
 * at the quantiles of the current centres, as plan() drew them from the
 * initial ones. The centres are a sample chosen by scene index (every s-th
 * generated body, s = ⌈bodies / REBALANCE_SAMPLE⌉): the same set whichever
 * rank holds which body. Owners change, numbers do not (the states stay
 * the single process's bits). Costs two reductions a rebuild, and an
 * all-gather of the sample when it rebalances. */
static dvi_status rebalance(dvi_dist* d)
{
    if (d->size == 1) return DVI_OK;
    int64_t mine = 0;
    for (int32_t i = 0; i < d->nowned; i++) mine += d->ids[d->owned[i]] >= d->nexp;
    int64_t most = 0, all = 0;
    MPI_Allreduce(&mine, &most, 1, MPI_INT64_T, MPI_MAX, d->comm);
    MPI_Allreduce(&mine, &all, 1, MPI_INT64_T, MPI_SUM, d->comm);
    d->st.imbalance = all > 0 ? (double)most * d->size / (double)all : 1.0;
    if (!(d->rebalance_at > 0.0) || !((double)most * d->size > d->rebalance_at * (double)all)) return DVI_OK;
    const int64_t stride = (all + REBALANCE_SAMPLE - 1) / REBALANCE_SAMPLE;
    double* c = malloc((2 * (size_t)mine + 2) * sizeof *c);
    int* counts = malloc((size_t)d->size * sizeof *counts);
    int* displs = malloc((size_t)d->size * sizeof *displs);
    int n = 0;
    dvi_status st = c && counts && displs ? DVI_OK : (set_err(d, "out of memory"), DVI_ERR_NOMEM);
    for (int32_t i = 0; i < d->nowned && st == DVI_OK; i++) {
        const int64_t g = d->ids[d->owned[i]];
        if (g < d->nexp || (g - d->nexp) % stride != 0) continue;
        c[n++] = d->world->bodies[d->owned[i]].x[0];
        c[n++] = d->world->bodies[d->owned[i]].x[1];
    }
    st = agree(d, st);
    if (st != DVI_OK) {
        free(c), free(counts), free(displs);
        return st;
    }
    MPI_Allgather(&n, 1, MPI_INT, counts, 1, MPI_INT, d->comm);
    int total = 0;
    for (int r = 0; r < d->size; r++) displs[r] = total, total += counts[r];
    double* sample = malloc(((size_t)total + 2) * sizeof *sample);
    double* yy = malloc(((size_t)total / 2 + 1) * sizeof *yy);
    st = agree(d, sample && yy ? DVI_OK : (set_err(d, "out of memory"), DVI_ERR_NOMEM));
    if (st == DVI_OK) {
        MPI_Allgatherv(c, n, MPI_DOUBLE, sample, counts, displs, MPI_DOUBLE, d->comm);
        draw_cuts(d, sample, total / 2, yy);
        d->st.rebalances++;
        d->st.bytes_rebuild_total += 8 * (int64_t)total;
    }
    free(c), free(counts), free(displs), free(sample), free(yy);
    return st;
}

/* Chooses the owners and the ghosts again from the current world (or, the
 * first time, from a world of the owned bodies alone) and builds the new
 * world. Collective. */
static dvi_status rebuild(dvi_dist* d)
{
    dvi_status bst = rebalance(d);
    if (bst != DVI_OK) return bst;
    const double t = d->world->time;
    wld_dem* dem0 = wld_dem_get(d->world);
    if (!dem0) return agree(d, (set_err(d, "out of memory"), DVI_ERR_NOMEM));
    const uint64_t dem_steps = dem0->steps;
    dst_out o = {0};
    dst_set own = {0};
    unsigned char* in = NULL;
    size_t in_len = 0;
    dvi_status st = out_init(&o, d->size) ? owned_records(d, &o, true) : (set_err(d, "out of memory"), DVI_ERR_NOMEM);
    st = agree(d, st);
    /* the owned bodies to their owners (the ones that stay, to ourselves) */
    if (st == DVI_OK && (!exchange(d, &o, &in, &in_len) || !set_parse(&own, in, in_len) || !set_sort(&own)))
        st = (set_err(d, "out of memory"), DVI_ERR_NOMEM);
    free(in);
    out_free(&o);
    st = agree(d, st);
    if (st == DVI_OK) st = place(d, &own, t, dem_steps);
    set_free(&own);
    return st;
}

/* ---- the step -------------------------------------------------------------------------------- */

/* One exchange along the halo's lists: `width` numbers per body, packed by
 * the owner (pack: local body k into o) and unpacked by the receiver
 * (unpack: r into local body k). */
typedef void (*halo_pack)(dvi_dist* d, int32_t k, double* o, void* ctx);
typedef void (*halo_unpack)(dvi_dist* d, int32_t k, const double* r, void* ctx);

static void halo_run(dvi_dist* d, int width, int tag, halo_pack pack, halo_unpack unpack, void* ctx)
{
    const int P = d->size;
    int nreq = 0;
    const double t0 = now();
    int64_t bytes = 0, msgs = 0;
    for (int s = 0; s < P; s++) {
        int n = d->recv_first[s + 1] - d->recv_first[s];
        if (n > 0)
            MPI_Irecv(d->rbuf + (size_t)width * d->recv_first[s], width * n, MPI_DOUBLE, s, tag, d->comm,
                      &d->req[nreq++]);
    }
    for (int s = 0; s < P; s++) {
        int a = d->send_first[s], n = d->send_first[s + 1] - a;
        if (n == 0) continue;
        for (int i = 0; i < n; i++) pack(d, d->send_idx[a + i], d->sbuf + (size_t)width * (a + i), ctx);
        MPI_Isend(d->sbuf + (size_t)width * a, width * n, MPI_DOUBLE, s, tag, d->comm, &d->req[nreq++]);
        bytes += 8 * width * (int64_t)n;
        msgs++;
    }
    MPI_Waitall(nreq, d->req, MPI_STATUSES_IGNORE);
    for (int32_t i = 0; i < d->recv_first[P]; i++) unpack(d, d->recv_idx[i], d->rbuf + (size_t)width * i, ctx);
    d->t_comm += now() - t0;
    d->st.bytes_halo += bytes;
    d->st.messages += msgs;
}

static void pack_state(dvi_dist* d, int32_t k, double* o, void* ctx)
{
    (void)ctx;
    wld_body_state13(&d->world->bodies[k], o);
}

static void unpack_state(dvi_dist* d, int32_t k, const double* r, void* ctx)
{
    (void)ctx;
    wld_body* b = &d->world->bodies[k];
    v3_copy(b->x, r);
    memcpy(b->q, r + 3, 4 * sizeof(double));
    v3_copy(b->v, r + 7);
    v3_copy(b->w, r + 10);
}

/* After each step: the ghosts' states (13 numbers) from their owners. */
static void halo(dvi_dist* d)
{
    halo_run(d, 13, 7, pack_state, unpack_state, NULL);
}

/* ---- the shared CCP of the DVI step (dvi_ccp_shared) ------------------------------------------- */

static void pack_body6(dvi_dist* d, int32_t k, double* o, void* ctx)
{
    const int32_t j = d->world->dyn[k];
    if (j >= 0)
        memcpy(o, (const double*)ctx + 6 * (size_t)j, 6 * sizeof(double));
    else
        memset(o, 0, 6 * sizeof(double));
}

static void unpack_body6(dvi_dist* d, int32_t k, const double* r, void* ctx)
{
    const int32_t j = d->world->dyn[k];
    if (j >= 0) memcpy((double*)ctx + 6 * (size_t)j, r, 6 * sizeof(double));
}

/* v (6 numbers per dynamic body of the world, in its order): the ghosts'
 * entries from their owners. */
static void share_exchange(void* ctx, double* v)
{
    halo_run(ctx, 6, 8, pack_body6, unpack_body6, v);
}

static void share_sum(void* ctx, int64_t* x, int32_t n)
{
    dvi_dist* d = ctx;
    const double t0 = now();
    MPI_Allreduce(MPI_IN_PLACE, x, n, MPI_INT64_T, MPI_SUM, d->comm);
    d->t_comm += now() - t0;
    d->st.bytes_reduce += 8 * (int64_t)n;
    d->st.messages++;
}

/* The largest of each pair, a NaN winning (ccp's maxima): commutative. */
static void max_nan(void* in, void* inout, int* len, MPI_Datatype* type)
{
    (void)type;
    const double* a = in;
    double* b = inout;
    for (int i = 0; i < *len; i++)
        if (a[i] != a[i] || (b[i] == b[i] && a[i] > b[i])) b[i] = a[i];
}

/* inout = in + inout, element-wise; declared non-commutative so that MPI
 * adds the ranks' parts in rank order. */
static void sum_ordered(void* in, void* inout, int* len, MPI_Datatype* type)
{
    (void)type;
    const double* a = in;
    double* b = inout;
    for (int i = 0; i < *len; i++) b[i] = a[i] + b[i];
}

static void share_max(void* ctx, double* x, int32_t n)
{
    dvi_dist* d = ctx;
    const double t0 = now();
    MPI_Allreduce(MPI_IN_PLACE, x, n, MPI_DOUBLE, d->op_max, d->comm);
    d->t_comm += now() - t0;
    d->st.bytes_reduce += 8 * (int64_t)n;
    d->st.messages++;
}

dvi_status dvi_dist_step(dvi_dist* d)
{
    if (!d) return base_error_set(DVI_ERR_INVALID_ARG, "dvi_dist_step: dist is NULL");
    const double t0 = now();
    d->t_comm = 0.0;
    d->st.messages = 0;
    d->st.bytes_halo = 0;
    d->st.bytes_reduce = 0;
    if (d->rebuild_due) {
        d->rebuild_due = false;
        dvi_status rst = rebuild(d);
        if (rst != DVI_OK) return rst;
    }
    dvi_status st = dvi_world_step(d->world, d->dt);
    if (st < 0) set_err(d, "%s", dvi_world_last_error(d->world));
    if (st >= 0) { /* the probes' bookkeeping (dvi_model_step's) */
        dvi_status pst = sc_model_after_step(d->model);
        if (pst < 0) st = (set_err(d, "probes: out of memory"), pst);
    }
    const dvi_step_stats ws = dvi_world_get_stats(d->world);
    if (d->dvi) { /* the shared CCP's: the same on every rank */
        d->st.iterations = ws.iterations;
        d->st.residual = ws.residual;
    }
    /* one reduction: failure (the lowest failing rank), rank 0's convergence, the displacement, the
     * deepest penetration and the largest joint error */
    double disp = 0.0;
    for (int32_t i = 0; i < d->nowned && st >= 0; i++) {
        const wld_body* b = &d->world->bodies[d->owned[i]];
        double dx[3];
        v3_sub(dx, b->x, d->x0 + 3 * (size_t)i);
        double l = v3_norm(dx);
        if (!(l <= disp)) disp = l;
        if (!isfinite(l) || !isfinite(v3_norm(b->v)) || !isfinite(v3_norm(b->w))) {
            st = DVI_ERR_NUMERIC;
            set_err(d, "step %lld (t = %.9g s): body %lld (scene index) has a non-finite state: the simulation "
                       "blew up", (long long)d->steps + 1, d->world->time, (long long)d->ids[d->owned[i]]);
        }
    }
    double red[5] = {st < 0 ? (double)(d->size - d->rank) : 0.0, d->rank == 0 && st > 0 ? (double)st : 0.0, disp,
                     st >= 0 ? ws.max_penetration : 0.0, st >= 0 ? ws.max_joint_violation : 0.0},
           out[5];
    double tc = now();
    MPI_Allreduce(red, out, 5, MPI_DOUBLE, MPI_MAX, d->comm);
    d->t_comm += now() - tc;
    d->st.messages++;
    if (out[0] > 0.0) return failure_from(d, d->size - (int)out[0], st);
    halo(d);
    /* the contacts, each counted on the rank that owns its first movable body */
    int64_t mine = 0, all = 0;
    for (int32_t c = 0; c < d->world->contact_count; c++) {
        const wld_contact_rec* r = &d->world->contacts[c];
        int32_t k = d->level[r->body_a] == 3 ? r->body_b : r->body_a;
        mine += d->level[k] == 0;
    }
    tc = now();
    MPI_Allreduce(&mine, &all, 1, MPI_INT64_T, MPI_SUM, d->comm);
    d->t_comm += now() - tc;
    d->st.messages++;
    d->st.bytes_reduce += 5 * 8 + 8;
    d->st.contacts = all;
    d->st.max_penetration = out[3];
    d->st.max_joint_violation = out[4];
    d->steps++;
    d->rebuild_due = out[2] > 0.5 * d->skin;
    d->st.steps = d->steps;
    d->st.rebuilds = d->rebuilds;
    d->st.seconds_comm = d->t_comm;
    d->st.seconds_step = now() - t0;
    return out[1] > 0.0 ? (dvi_status)(int)out[1] : DVI_OK;
}


/* ---- checkpoints ----------------------------------------------------------------------------------
 *
 * A directory: manifest.bin (rank 0) and rank-R.bin per rank R. Each file:
 * a 48-byte header — magic (8 bytes: "DVIDSTMF" or "DVIDSTRK"), u32
 * version (2; 1 is read too), u32 byte-order mark 0x01020304 (a file from a host of the
 * other byte order is refused), u64 scene fingerprint, u64 payload bytes,
 * u64 FNV-1a 64 of the payload, u64 reserved — then the payload in the
 * host's order. manifest: i32 ranks, i32 joints, i64 steps, f64 time,
 * u64 DEM steps, i64 bodies, then per scene joint its state (absent joints
 * marked), then (version 2) i64 n and the probes' averaging windows, n f64
 * (sc_model_windows_get, the ranks' sums added). rank file: the owned bodies' records (dst_rec) each followed by
 * the history entries it carries (dst_entry). Any rank count reads it: each
 * rank reads every rank file and keeps the bodies its slab holds. */

#define CKPT_VERSION 2u
#define CKPT_BOM 0x01020304u

typedef struct dst_ckpt_head {
    char magic[8];
    uint32_t version, bom;
    uint64_t fingerprint, payload, checksum, reserved;
} dst_ckpt_head;

typedef struct dst_manifest {
    int32_t ranks, joints;
    int64_t steps;
    double time;
    uint64_t dem_steps;
    int64_t bodies;
} dst_manifest;

static dvi_status write_file(dvi_dist* d, const char* path, const char* magic, const void* payload, size_t n)
{
    dst_ckpt_head h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, magic, 8);
    h.version = CKPT_VERSION;
    h.bom = CKPT_BOM;
    h.fingerprint = d->fingerprint;
    h.payload = n;
    h.checksum = base_fnv1a(DVI_FNV_OFFSET, payload, n);
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE* f = fopen(tmp, "wb");
    if (!f) return set_err(d, "%s: cannot write (%s)", tmp, strerror(errno)), DVI_ERR_IO;
    bool ok = fwrite(&h, sizeof h, 1, f) == 1 && (n == 0 || fwrite(payload, n, 1, f) == 1);
    ok = (fclose(f) == 0) && ok;
    if (!ok || rename(tmp, path) != 0) {
        remove(tmp);
        return set_err(d, "%s: cannot write (%s)", path, strerror(errno)), DVI_ERR_IO;
    }
    return DVI_OK;
}

/* Reads and checks one checkpoint file; the payload in *out (malloc'd). */
static dvi_status read_file(dvi_dist* d, const char* path, const char* magic, unsigned char** out, size_t* n,
                            uint32_t* version)
{
    *out = NULL;
    FILE* f = fopen(path, "rb");
    if (!f) return set_err(d, "%s: cannot open (%s)", path, strerror(errno)), DVI_ERR_IO;
    dst_ckpt_head h;
    dvi_status st = DVI_OK;
    if (fread(&h, sizeof h, 1, f) != 1 || memcmp(h.magic, magic, 8) != 0)
        st = (set_err(d, "%s: not a checkpoint file of a spread run (%.8s expected)", path, magic), DVI_ERR_PARSE);
    else if (h.bom != CKPT_BOM || h.version < 1 || h.version > CKPT_VERSION)
        st = (set_err(d, "%s: version %u or byte order 0x%08x not readable here (version %u, 0x%08x)", path,
                      (unsigned)h.version, (unsigned)h.bom, CKPT_VERSION, CKPT_BOM),
              DVI_ERR_PARSE);
    else if (h.fingerprint != d->fingerprint)
        st = (set_err(d, "%s: written for another scene (fingerprint %016llx, this scene %016llx: other bodies, "
                         "step or initial positions)",
                      path, (unsigned long long)h.fingerprint, (unsigned long long)d->fingerprint),
              DVI_ERR_INVALID_ARG);
    else if (h.payload > ((uint64_t)1 << 40))
        st = (set_err(d, "%s: payload size %llu is not plausible", path, (unsigned long long)h.payload), DVI_ERR_PARSE);
    unsigned char* p = NULL;
    if (st == DVI_OK) {
        p = malloc((size_t)h.payload + 1);
        if (!p) st = (set_err(d, "out of memory"), DVI_ERR_NOMEM);
        else if (h.payload > 0 && fread(p, (size_t)h.payload, 1, f) != 1)
            st = (set_err(d, "%s: truncated (%llu payload bytes expected)", path, (unsigned long long)h.payload),
                  DVI_ERR_PARSE);
        else if (base_fnv1a(DVI_FNV_OFFSET, p, (size_t)h.payload) != h.checksum)
            st = (set_err(d, "%s: checksum mismatch (the file is damaged)", path), DVI_ERR_PARSE);
    }
    fclose(f);
    if (st != DVI_OK) {
        free(p);
        return st;
    }
    *out = p;
    *n = (size_t)h.payload;
    if (version) *version = h.version;
    return DVI_OK;
}

dvi_status dvi_dist_save(dvi_dist* d, const char* dir)
{
    if (!d || !dir) return base_error_set(DVI_ERR_INVALID_ARG, "dvi_dist_save: dist or dir is NULL");
    dvi_status st = DVI_OK;
    if (d->rank == 0 && mkdir(dir, 0777) != 0 && errno != EEXIST)
        st = (set_err(d, "%s: cannot create the directory (%s)", dir, strerror(errno)), DVI_ERR_IO);
    st = agree(d, st);
    if (st != DVI_OK) return st;
    dst_out o = {0};
    char path[4096];
    st = out_init(&o, 1) ? owned_records(d, &o, false) : (set_err(d, "out of memory"), DVI_ERR_NOMEM);
    if (st == DVI_OK) {
        snprintf(path, sizeof path, "%s/rank-%d.bin", dir, d->rank);
        st = write_file(d, path, "DVIDSTRK", o.buf[0] ? o.buf[0] : (unsigned char*)"", o.len[0]);
    }
    out_free(&o);
    /* the probes' averaging windows: the ranks' sums added on rank 0 (the step counts are everyone's) */
    const int64_t nwin = sc_model_windows_size(d->model);
    double* win = malloc(2 * ((size_t)nwin + 1) * sizeof *win);
    if (!win && st == DVI_OK) st = (set_err(d, "out of memory"), DVI_ERR_NOMEM);
    st = agree(d, st);
    if (st != DVI_OK) {
        free(win);
        return st;
    }
    sc_model_windows_get(d->model, win);
    if (nwin > 0) MPI_Reduce(win, win + nwin, (int)nwin, MPI_DOUBLE, d->op_sum, 0, d->comm);
    if (d->rank == 0) /* the counts come first, one per averaged probe: rank 0's own, not their sum */
        for (int32_t k = 0; k < sc_model_windows_counts(d->model); k++) win[nwin + k] = win[k];
    if (st == DVI_OK && d->rank == 0) {
        const int32_t nj = sc_model_joint_count(d->model);
        size_t n = sizeof(dst_manifest) + (size_t)nj * sizeof(dst_joint_state) + sizeof(int64_t) +
                   (size_t)nwin * sizeof(double);
        unsigned char* p = calloc(1, n);
        if (!p) st = (set_err(d, "out of memory"), DVI_ERR_NOMEM);
        else {
            dst_manifest m = {d->size, nj, d->steps, d->world->time, wld_dem_get(d->world)->steps, d->st.bodies};
            memcpy(p, &m, sizeof m);
            for (int32_t j = 0; j < nj; j++) {
                dst_joint_state js;
                memset(&js, 0, sizeof js);
                dvi_joint_id id = sc_model_joint(d->model, j);
                if (!DVI_IS_NULL(id)) joint_state_get(&d->world->joints[id.index1 - 1], &js);
                memcpy(p + sizeof m + (size_t)j * sizeof js, &js, sizeof js);
            }
            unsigned char* at = p + sizeof m + (size_t)nj * sizeof(dst_joint_state);
            memcpy(at, &nwin, sizeof nwin);
            if (nwin > 0) memcpy(at + sizeof nwin, win + nwin, (size_t)nwin * sizeof(double));
            snprintf(path, sizeof path, "%s/manifest.bin", dir);
            st = write_file(d, path, "DVIDSTMF", p, n);
            free(p);
        }
    }
    free(win);
    return agree(d, st);
}

dvi_status dvi_dist_load(dvi_dist* d, const char* dir)
{
    if (!d || !dir) return base_error_set(DVI_ERR_INVALID_ARG, "dvi_dist_load: dist or dir is NULL");
    char path[4096];
    dst_manifest m;
    memset(&m, 0, sizeof m);
    unsigned char* man = NULL;
    size_t man_len = 0;
    dvi_status st = DVI_OK;
    const int64_t nwin = sc_model_windows_size(d->model);
    double* win = calloc((size_t)nwin + 1, sizeof *win); /* the probes' windows; empty from a version 1 file */
    if (!win) st = (set_err(d, "out of memory"), DVI_ERR_NOMEM);
    if (d->rank == 0 && st == DVI_OK) {
        snprintf(path, sizeof path, "%s/manifest.bin", dir);
        uint32_t version = 0;
        st = read_file(d, path, "DVIDSTMF", &man, &man_len, &version);
        if (st == DVI_OK) {
            if (man_len >= sizeof m) memcpy(&m, man, sizeof m);
            const size_t base = sizeof m + (size_t)(m.joints > 0 ? m.joints : 0) * sizeof(dst_joint_state);
            int64_t saved = 0;
            if (version >= 2 && man_len >= base + sizeof saved) memcpy(&saved, man + base, sizeof saved);
            const size_t want = version >= 2 ? base + sizeof saved + (size_t)(saved > 0 ? saved : 0) * sizeof(double)
                                             : base;
            if (man_len < sizeof m || m.ranks < 1 || m.joints != sc_model_joint_count(d->model) || man_len != want ||
                m.bodies != d->st.bodies || m.steps < 0)
                st = (set_err(d, "%s: the manifest does not fit this scene (%d ranks, %d joints, %lld bodies; the "
                                 "scene has %d joints, %lld bodies)",
                              path, m.ranks, m.joints, (long long)m.bodies, sc_model_joint_count(d->model),
                              (long long)d->st.bodies),
                      DVI_ERR_INVALID_ARG);
            else if (version >= 2 && saved != nwin)
                st = (set_err(d, "%s: the probes' averaging windows (%lld numbers) do not fit this scene's probes "
                                 "(%lld)", path, (long long)saved, (long long)nwin),
                      DVI_ERR_INVALID_ARG);
            else if (version >= 2 && nwin > 0)
                memcpy(win, man + base + sizeof saved, (size_t)nwin * sizeof(double));
        }
    }
    st = agree(d, st);
    if (st != DVI_OK) {
        free(man);
        free(win);
        return st;
    }
    MPI_Bcast(&m, (int)sizeof m, MPI_BYTE, 0, d->comm);
    if (nwin > 0) MPI_Bcast(win, (int)nwin, MPI_DOUBLE, 0, d->comm);
    /* every rank file; this rank keeps the bodies of its slab */
    dst_set own = {0};
    int64_t movable = 0;
    for (int r = 0; r < m.ranks && st == DVI_OK; r++) {
        unsigned char* p = NULL;
        size_t n = 0;
        snprintf(path, sizeof path, "%s/rank-%d.bin", dir, r);
        st = read_file(d, path, "DVIDSTRK", &p, &n, NULL);
        size_t at = 0;
        while (st == DVI_OK && at < n) {
            dst_rec rec;
            if (n - at < sizeof rec) {
                st = (set_err(d, "%s: a body record cut short at byte %zu", path, at), DVI_ERR_PARSE);
                break;
            }
            memcpy(&rec, p + at, sizeof rec);
            at += sizeof rec;
            if (rec.gid < 0 || rec.gid >= d->st.bodies || is_fixed(d, rec.gid) || rec.entries < 0 ||
                (size_t)rec.entries > (n - at) / sizeof(dst_entry)) {
                st = (set_err(d, "%s: body record at byte %zu is not valid for this scene (body %lld, %d entries)",
                              path, at - sizeof rec, (long long)rec.gid, rec.entries),
                      DVI_ERR_PARSE);
                break;
            }
            movable++;
            if (owner_of(d, rec.gid, rec.s) == d->rank && !set_add(&own, &rec, (const dst_entry*)(const void*)(p + at)))
                st = (set_err(d, "out of memory"), DVI_ERR_NOMEM);
            at += (size_t)rec.entries * sizeof(dst_entry);
        }
        free(p);
    }
    int64_t fixed = 0;
    for (int64_t g = 0; g < d->nexp; g++) fixed += is_fixed(d, g);
    if (st == DVI_OK && movable != d->st.bodies - fixed)
        st = (set_err(d, "%s: the rank files hold %lld bodies, the scene moves %lld", dir, (long long)movable,
                      (long long)(d->st.bodies - fixed)),
              DVI_ERR_PARSE);
    if (st == DVI_OK && !set_sort(&own)) st = (set_err(d, "out of memory"), DVI_ERR_NOMEM);
    for (int64_t i = 1; st == DVI_OK && i < own.n; i++)
        if (own.rec[i].gid == own.rec[i - 1].gid)
            st = (set_err(d, "%s: body %lld is in two rank files", dir, (long long)own.rec[i].gid), DVI_ERR_PARSE);
    st = agree(d, st);
    if (st == DVI_OK) st = place(d, &own, m.time, m.dem_steps);
    if (st == DVI_OK) {
        d->steps = m.steps;
        d->st.steps = m.steps;
        d->rebuild_due = false;
        sc_model_set_steps(d->model, m.steps);
        sc_model_windows_set(d->model, win, d->rank == 0); /* the sums on rank 0, the counts everywhere */
        if (d->rank == 0) /* the joints are rank 0's */
            for (int32_t j = 0; j < m.joints; j++) {
                dst_joint_state js;
                memcpy(&js, man + sizeof m + (size_t)j * sizeof js, sizeof js);
                dvi_joint_id id = sc_model_joint(d->model, j);
                if (!js.present || DVI_IS_NULL(id)) continue;
                joint_state_put(&js, &d->world->joints[id.index1 - 1]);
            }
    }
    set_free(&own);
    free(man);
    free(win);
    return st;
}

/* ---- creation --------------------------------------------------------------------------------- */

dvi_dist_settings dvi_default_dist_settings(void)
{
    dvi_dist_settings s;
    memset(&s, 0, sizeof s);
    return s;
}

bool dvi_dist_available(void)
{
    return true;
}

static int cmp_f64(const void* a, const void* b)
{
    double x = *(const double*)a, y = *(const double*)b;
    return (x > y) - (x < y);
}

/* The cuts at the quantiles of the centres c (n (x, y) pairs; sorted here,
 * yy scratch of n): the x slabs hold equal counts, and each slab's cells
 * along y too. The cuts are values, so the order c comes in does not
 * matter. */
static void draw_cuts(dvi_dist* d, double* c, int64_t n, double* yy)
{
    qsort(c, (size_t)n, 2 * sizeof *c, cmp_f64); /* (x, y) pairs by x */
    for (int i = 1; i < d->px; i++) d->xcuts[i - 1] = c[2 * ((int64_t)i * n / d->px)];
    int64_t at = 0;
    for (int i = 0; i < d->px; i++) { /* slab i: the bodies owner_of puts there, contiguous in x order */
        int64_t m = 0;
        while (at < n && count_le(d->xcuts, d->px - 1, c[2 * at]) == i) yy[m++] = c[2 * at++ + 1];
        qsort(yy, (size_t)m, sizeof *yy, cmp_f64);
        for (int j = 1; j < d->py; j++)
            d->ycuts[(size_t)i * (size_t)(d->py - 1) + (size_t)(j - 1)] = m > 0 ? yy[(int64_t)j * m / d->py] : 0.0;
    }
}

/* The grid and its cuts from the generated bodies' initial centres (the
 * grid px × py that minimises a subdomain's half perimeter Lx/px + Ly/py
 * over the footprint Lx × Ly, unless the settings give it; cuts at the
 * quantiles: the x slabs hold equal counts, and each slab's cells along y
 * too); the default skin. Same on every rank (same scene). The initial
 * positions (3 a body) in *xyz_out, for the caller to free. */
static dvi_status plan(dvi_dist* d, char* msg, size_t msg_size, double** xyz_out)
{
    const dvi_scene* s = d->scene;
    const int64_t n = s->total_bodies, ng = n - d->nexp;
    double* xyz = malloc((3 * (size_t)n + 3) * sizeof *xyz);
    double* c = malloc((2 * (size_t)ng + 2) * sizeof *c); /* (x, y) pairs */
    double* yy = malloc(((size_t)ng + 1) * sizeof *yy);
    if (!xyz || !c || !yy) {
        free(xyz), free(c), free(yy);
        copy_msg(msg, msg_size, "out of memory");
        return DVI_ERR_NOMEM;
    }
    sc_scene_positions(s, xyz);
    int64_t counts[2] = {n, d->nexp};
    d->fingerprint = base_fnv1a(DVI_FNV_OFFSET, counts, sizeof counts);
    d->fingerprint = base_fnv1a_f64(d->fingerprint, &s->dt, 1);
    d->fingerprint = base_fnv1a_f64(d->fingerprint, xyz, 3 * (size_t)n);
    double lo[2] = {INFINITY, INFINITY}, hi[2] = {-INFINITY, -INFINITY};
    for (int64_t i = d->nexp; i < n; i++)
        for (int k = 0; k < 2; k++) {
            lo[k] = fmin(lo[k], xyz[3 * i + k]);
            hi[k] = fmax(hi[k], xyz[3 * i + k]);
        }
    const double lx = ng > 0 ? hi[0] - lo[0] : 1.0, ly = ng > 0 ? hi[1] - lo[1] : 1.0;
    if (d->px == 0) { /* the grid: smallest half perimeter, more ranks along x on a tie */
        double best = INFINITY;
        for (int px = d->size; px >= 1; px--) {
            if (d->size % px) continue;
            double cost = lx / px + ly / (d->size / px);
            if (cost < best * (1.0 - 1e-12)) best = cost, d->px = px;
        }
        d->py = d->size / d->px;
    }
    for (int64_t i = 0; i < ng; i++) {
        c[2 * i] = xyz[3 * (d->nexp + i)];
        c[2 * i + 1] = xyz[3 * (d->nexp + i) + 1];
    }
    draw_cuts(d, c, ng, yy);
    free(c), free(yy);
    *xyz_out = xyz;
    if (!(d->skin > 0.0)) {
        double rsum = 0.0;
        int64_t cnt = 0;
        for (int32_t g = 0; g < s->generator_count; g++) {
            rsum += 0.5 * (s->generators[g].rmin + s->generators[g].rmax) * (double)s->generators[g].count;
            cnt += s->generators[g].count;
        }
        d->skin = cnt > 0 ? 0.2 * rsum / (double)cnt : 1e-3;
    }
    return DVI_OK;
}

static dvi_status refuse(const dvi_dist* d, char* msg, size_t msg_size)
{
    const dvi_scene* s = d->scene;
    const int64_t ng = s->total_bodies - d->nexp;
    if (d->dvi) { /* the shared CCP (dvi_ccp_shared): no joints, a solver that takes it, the CCP's law */
        char names[160];
        ccp_solver_shared_names(names, sizeof names);
        const int32_t si = dvi_solver_index(s->solver);
        char why[320] = "";
        if (s->joint_count > 0)
            snprintf(why, sizeof why, "takes no joints yet (%d in the scene: their rows are not split)", (int)s->joint_count);
        else if (si < 0 || !ccp_solver_row(si)->shared)
            snprintf(why, sizeof why, "needs a solver that takes a shared problem (%s), not \"%s\"", names, s->solver);
        else if (s->friction != DVI_LAW_CCP)
            snprintf(why, sizeof why, "needs the CCP's friction law (formulation.friction_law: \"ccp\")");
        if (why[0]) {
            snprintf(msg, msg_size, "formulation: the DVI method over ranks %s; run it on one rank, or as DEM", why);
            return DVI_ERR_INVALID_ARG;
        }
    }
    if (s->terrain_count > 0) {
        snprintf(msg, msg_size, "terrains: scenes with terrain models cannot be spread over ranks (%d ranks)", d->size);
        return DVI_ERR_INVALID_ARG;
    }
    if (ng < d->size) {
        snprintf(msg, msg_size,
                 "the scene cannot be split over %d ranks: it has %lld generated bodies (generators[]), at least one "
                 "per rank is needed; bodies listed one by one (%lld) stay on rank 0",
                 d->size, (long long)ng, (long long)d->nexp);
        return DVI_ERR_INVALID_ARG;
    }
    return DVI_OK;
}

dvi_status dvi_dist_create(const dvi_scene* scene, const dvi_dist_settings* settings, dvi_dist** out, char* msg,
                           size_t msg_size)
{
    char tmp[1];
    if (!msg || msg_size == 0) msg = tmp, msg_size = sizeof tmp;
    msg[0] = '\0';
    if (!out || !scene) {
        copy_msg(msg, msg_size, "dvi_dist_create: scene or out is NULL");
        return base_error_set(DVI_ERR_INVALID_ARG, "dvi_dist_create: scene or out is NULL");
    }
    *out = NULL;
    int inited = 0;
    MPI_Initialized(&inited);
    if (!inited) {
        copy_msg(msg, msg_size, "dvi_dist_create: MPI is not initialised (call MPI_Init first)");
        return base_error_set(DVI_ERR_INVALID_ARG, "dvi_dist_create: MPI is not initialised (call MPI_Init first)");
    }
    dvi_dist_settings set = settings ? *settings : dvi_default_dist_settings();
    if (!(set.skin >= 0.0) || !isfinite(set.skin)) {
        copy_msg(msg, msg_size, "settings.skin: must be >= 0 and finite");
        return DVI_ERR_INVALID_ARG;
    }
    if (isnan(set.rebalance) || (set.rebalance > 0.0 && set.rebalance < 1.0)) {
        copy_msg(msg, msg_size, "settings.rebalance: must be >= 1 (the largest cell over the mean), 0 (1.2) or < 0 "
                                "(never)");
        return DVI_ERR_INVALID_ARG;
    }
    dvi_dist* d = calloc(1, sizeof *d);
    if (!d) {
        copy_msg(msg, msg_size, "out of memory");
        return DVI_ERR_NOMEM;
    }
    MPI_Comm base = set.comm ? *(const MPI_Comm*)set.comm : MPI_COMM_WORLD;
    MPI_Comm_dup(base, &d->comm);
    MPI_Comm_rank(d->comm, &d->rank);
    MPI_Comm_size(d->comm, &d->size);
    d->scene = scene;
    d->dt = scene->dt;
    d->skin = set.skin;
    d->rebalance_at = set.rebalance == 0.0 ? REBALANCE_AT : set.rebalance;
    d->envelope = scene->collision_envelope;
    d->nexp = scene->body_count;
    d->dvi = strcmp(scene->method, "dem") != 0;
    d->share = (dvi_ccp_shared){.ctx = d, .exchange = share_exchange, .sum = share_sum, .max = share_max};
    MPI_Op_create(max_nan, 1, &d->op_max);
    MPI_Op_create(sum_ordered, 0, &d->op_sum);
    d->st.ranks = d->size;
    d->st.rank = d->rank;
    d->st.bodies = scene->total_bodies;
    dvi_status st = refuse(d, msg, msg_size);
    if (st != DVI_OK) {
        dvi_dist_destroy(d);
        return st;
    }
    d->px = set.grid[0], d->py = set.grid[1];
    if ((d->px != 0 || d->py != 0) && (d->px < 1 || d->py < 1 || d->px * d->py != d->size)) {
        snprintf(msg, msg_size, "settings.grid: %d x %d subdomains for %d ranks (their product must be the ranks, or "
                 "both 0: chosen from the bed)", (int)set.grid[0], (int)set.grid[1], d->size);
        dvi_dist_destroy(d);
        return DVI_ERR_INVALID_ARG;
    }
    d->xcuts = calloc((size_t)d->size, sizeof *d->xcuts);
    d->ycuts = calloc((size_t)d->size, sizeof *d->ycuts);
    d->gshape0 = calloc((size_t)d->nexp + 1, sizeof *d->gshape0);
    d->send_first = calloc((size_t)d->size + 1, sizeof *d->send_first);
    d->recv_first = calloc((size_t)d->size + 1, sizeof *d->recv_first);
    d->req = calloc(2 * (size_t)d->size + 1, sizeof *d->req);
    if (!d->xcuts || !d->ycuts || !d->gshape0 || !d->send_first || !d->recv_first || !d->req) st = DVI_ERR_NOMEM;
    for (int64_t i = 0; st == DVI_OK && i < d->nexp; i++) d->gshape0[i + 1] = d->gshape0[i] + scene->bodies[i].shape_count;
    double* xyz = NULL;
    if (st == DVI_OK) st = plan(d, msg, msg_size, &xyz);
    else copy_msg(msg, msg_size, "out of memory");
    /* the first world: the bodies this rank owns at the start, and the fixed ones */
    int64_t* ids = NULL;
    if (st == DVI_OK) {
        ids = malloc(((size_t)scene->total_bodies + 1) * sizeof *ids);
        if (!ids) {
            st = DVI_ERR_NOMEM;
            copy_msg(msg, msg_size, "out of memory");
        } else {
            int64_t n = 0;
            for (int64_t g = 0; g < scene->total_bodies; g++)
                if (is_fixed(d, g) || owner_of(d, g, xyz + 3 * g) == d->rank) ids[n++] = g;
            st = sc_model_create_subset(scene, ids, n, &d->model, msg, msg_size);
            if (st == DVI_OK) {
                d->world = dvi_model_world(d->model);
                d->ids = ids, ids = NULL;
                d->nlocal = (int32_t)n;
                d->level = malloc((size_t)n + 1);
                d->owned = malloc(((size_t)n + 1) * sizeof *d->owned);
                d->lshape_g = malloc(((size_t)d->world->shape_count + 1) * sizeof *d->lshape_g);
                if (!d->level || !d->owned || !d->lshape_g) {
                    st = DVI_ERR_NOMEM;
                    copy_msg(msg, msg_size, "out of memory");
                } else {
                    for (int32_t k = 0; k < d->nlocal; k++) {
                        d->level[k] = is_fixed(d, d->ids[k]) ? 3 : 0;
                        if (d->level[k] == 0) d->owned[d->nowned++] = k;
                    }
                }
            }
        }
    }
    free(ids), free(xyz);
    if (st != DVI_OK) snprintf(d->err, sizeof d->err, "%s", msg);
    st = agree(d, st);
    if (st == DVI_OK) st = rebuild(d);
    if (st != DVI_OK) {
        copy_msg(msg, msg_size, d->err);
        dvi_dist_destroy(d);
        return st;
    }
    d->st.rebuilds = d->rebuilds;
    *out = d;
    return DVI_OK;
}

void dvi_dist_destroy(dvi_dist* d)
{
    if (!d) return;
    dvi_model_destroy(d->model);
    free(d->xcuts), free(d->ycuts), free(d->gshape0), free(d->ids), free(d->level), free(d->owned), free(d->x0), free(d->lshape_g);
    free(d->send_first), free(d->send_idx), free(d->recv_first), free(d->recv_idx), free(d->sbuf), free(d->rbuf);
    free(d->req), free(d->own8), free(d->praw);
    int fin = 0;
    MPI_Finalized(&fin);
    if (!fin && d->comm != MPI_COMM_NULL && d->comm != 0) MPI_Comm_free(&d->comm);
    if (!fin && d->op_max != MPI_OP_NULL && d->op_max != 0) MPI_Op_free(&d->op_max);
    if (!fin && d->op_sum != MPI_OP_NULL && d->op_sum != 0) MPI_Op_free(&d->op_sum);
    free(d);
}

const char* dvi_dist_last_error(const dvi_dist* d)
{
    return d ? d->err : "dvi_dist_last_error: dist is NULL";
}

double dvi_dist_time(const dvi_dist* d)
{
    return d && d->world ? d->world->time : NAN;
}

int64_t dvi_dist_step_count(const dvi_dist* d)
{
    return d ? d->steps : -1;
}

dvi_status dvi_dist_get_stats(const dvi_dist* d, dvi_dist_stats* out)
{
    if (!d || !out) return base_error_set(DVI_ERR_INVALID_ARG, "dvi_dist_get_stats: dist or out is NULL");
    *out = d->st;
    return DVI_OK;
}

dvi_status dvi_dist_gather_states(dvi_dist* d, double* states)
{
    if (!d) return base_error_set(DVI_ERR_INVALID_ARG, "dvi_dist_gather_states: dist is NULL");
    const int P = d->size;
    const size_t rec = 14; /* scene index (as a double: exact below 2^53), then 13 doubles */
    double* mine = malloc((rec * (size_t)d->nowned + 1) * sizeof *mine);
    int* counts = d->rank == 0 ? calloc((size_t)P, sizeof *counts) : NULL;
    int* displs = d->rank == 0 ? calloc((size_t)P, sizeof *displs) : NULL;
    dvi_status st = mine && (d->rank != 0 || (counts && displs && states)) ? DVI_OK : DVI_ERR_NOMEM;
    if (st != DVI_OK) set_err(d, d->rank == 0 && !states ? "dvi_dist_gather_states: states is NULL on rank 0" : "out of memory");
    if (st != DVI_OK && d->rank == 0 && !states) st = DVI_ERR_INVALID_ARG;
    st = agree(d, st);
    if (st != DVI_OK) {
        free(mine), free(counts), free(displs);
        return st;
    }
    for (int32_t i = 0; i < d->nowned; i++) {
        int32_t k = d->owned[i];
        mine[rec * i] = (double)d->ids[k];
        wld_body_state13(&d->world->bodies[k], mine + rec * i + 1);
    }
    int n = (int)(rec * (size_t)d->nowned);
    MPI_Gather(&n, 1, MPI_INT, counts, 1, MPI_INT, 0, d->comm);
    double* all = NULL;
    int total = 0;
    if (d->rank == 0) {
        for (int i = 0; i < P; i++) {
            displs[i] = total;
            total += counts[i];
        }
        all = malloc(((size_t)total + 1) * sizeof *all);
    }
    int ok = d->rank != 0 || all, allok;
    MPI_Allreduce(&ok, &allok, 1, MPI_INT, MPI_MIN, d->comm);
    if (!allok) {
        free(mine), free(counts), free(displs), free(all);
        set_err(d, "out of memory");
        return DVI_ERR_NOMEM;
    }
    MPI_Gatherv(mine, n, MPI_DOUBLE, all, counts, displs, MPI_DOUBLE, 0, d->comm);
    if (d->rank == 0) {
        for (int32_t k = 0; k < d->nlocal; k++) /* fixed bodies: rank 0 has them all */
            if (d->level[k] == 3) wld_body_state13(&d->world->bodies[k], states + 13 * (size_t)d->ids[k]);
        for (int i = 0; i < total; i += (int)rec) {
            int64_t g = (int64_t)all[i];
            memcpy(states + 13 * (size_t)g, all + i + 1, 13 * sizeof(double));
        }
    }
    free(mine), free(counts), free(displs), free(all);
    return DVI_OK;
}

dvi_status dvi_dist_state_hash(dvi_dist* d, uint64_t* out)
{
    if (!d || !out) return base_error_set(DVI_ERR_INVALID_ARG, "dvi_dist_state_hash: dist or out is NULL");
    double* states = NULL;
    if (d->rank == 0) states = malloc((13 * (size_t)d->st.bodies + 1) * sizeof *states);
    int ok = d->rank != 0 || states, allok;
    MPI_Allreduce(&ok, &allok, 1, MPI_INT, MPI_MIN, d->comm);
    if (!allok) {
        free(states);
        set_err(d, "out of memory");
        return DVI_ERR_NOMEM;
    }
    dvi_status st = dvi_dist_gather_states(d, states);
    if (st != DVI_OK) {
        free(states);
        return st;
    }
    uint64_t h = 0;
    if (d->rank == 0) {
        double t = d->world->time;
        h = base_fnv1a_f64(DVI_FNV_OFFSET, &t, 1);
        h = base_fnv1a_f64(h, states, 13 * (size_t)d->st.bodies);
    }
    free(states);
    MPI_Bcast(&h, 1, MPI_UINT64_T, 0, d->comm);
    *out = h;
    return DVI_OK;
}

/* ---- probes ------------------------------------------------------------------------------------ */

int32_t dvi_dist_probe_count(const dvi_dist* d)
{
    return d ? dvi_model_probe_count(d->model) : 0;
}

dvi_status dvi_dist_probe_info(const dvi_dist* d, int32_t probe, dvi_probe_info* out)
{
    if (!d || !out) return base_error_set(DVI_ERR_INVALID_ARG, "dvi_dist_probe_info: dist or out is NULL");
    return dvi_model_probe_info(d->model, probe, out);
}

bool dvi_dist_probe_available(const dvi_dist* d, int32_t probe)
{
    return d && probe >= 0 && probe < dvi_model_probe_count(d->model) && sc_model_probe_parts_supported(d->model, probe);
}

bool dvi_dist_probe_due(const dvi_dist* d, int32_t probe)
{
    return d && dvi_model_probe_due(d->model, probe);
}

dvi_status dvi_dist_probe_sample(dvi_dist* d, int32_t probe, double* values)
{
    if (!d) return base_error_set(DVI_ERR_INVALID_ARG, "dvi_dist_probe_sample: dist is NULL");
    dvi_status st = DVI_OK;
    if (probe < 0 || probe >= dvi_model_probe_count(d->model)) {
        st = DVI_ERR_INVALID_ARG;
        set_err(d, "dvi_dist_probe_sample: no probe %d (the scene has %d)", (int)probe,
                (int)dvi_model_probe_count(d->model));
    } else if (!sc_model_probe_parts_supported(d->model, probe)) {
        dvi_probe_info pi;
        dvi_model_probe_info(d->model, probe, &pi);
        st = DVI_ERR_UNSUPPORTED;
        set_err(d, "probe \"%s\": its kind is not sampled over ranks (the energy audit is each process's own)",
                pi.name);
    } else if (d->rank == 0 && !values) {
        st = DVI_ERR_INVALID_ARG;
        set_err(d, "dvi_dist_probe_sample: values is NULL on rank 0");
    }
    int32_t n = st == DVI_OK ? sc_model_probe_raw_count(d->model, probe) : 0;
    if (st == DVI_OK && n > d->pcap) {
        double* q = realloc(d->praw, 3 * (size_t)n * sizeof *q);
        if (q) d->praw = q, d->pcap = n;
        else st = (set_err(d, "out of memory"), DVI_ERR_NOMEM);
    }
    if (st == DVI_OK) {
        st = sc_model_probe_part(d->model, probe, d->praw);
        if (st != DVI_OK) set_err(d, "probe %d: %s", (int)probe, dvi_error_message());
    }
    st = agree(d, st);
    if (st != DVI_OK) return st;
    double* part = d->praw;
    double* sum = d->praw + n;
    double* max = d->praw + 2 * (size_t)n;
    bool any_max = false;
    for (int32_t k = 0; k < n && !any_max; k++) any_max = sc_model_probe_raw_max(d->model, probe, k);
    const double tc = now();
    MPI_Reduce(part, sum, n, MPI_DOUBLE, d->op_sum, 0, d->comm);
    if (any_max) MPI_Reduce(part, max, n, MPI_DOUBLE, d->op_max, 0, d->comm);
    d->t_comm += now() - tc;
    if (d->rank == 0) {
        for (int32_t k = 0; any_max && k < n; k++)
            if (sc_model_probe_raw_max(d->model, probe, k)) sum[k] = max[k];
        sc_model_probe_finish(d->model, probe, sum, values);
    }
    return DVI_OK;
}

/* ---- VTK frames -------------------------------------------------------------------------------- */

dvi_status dvi_dist_write_vtk(dvi_dist* d, const char* dir, int frame, bool ascii)
{
    if (!d || !dir) return base_error_set(DVI_ERR_INVALID_ARG, "dvi_dist_write_vtk: dist or dir is NULL");
    dvi_status st = DVI_OK;
    char msg[512] = "";
    uint8_t* keep = malloc((size_t)d->nlocal + 1);
    if (!keep) st = (set_err(d, "out of memory"), DVI_ERR_NOMEM);
    if (st == DVI_OK && d->rank == 0) { /* the directory first, so that no rank races to make it */
        size_t n = strlen(dir) + 16;
        char* fdir = malloc(n);
        if (!fdir) st = (set_err(d, "out of memory"), DVI_ERR_NOMEM);
        else {
            snprintf(fdir, n, "%s/frames", dir);
            if (dvi_make_dirs(fdir, msg, sizeof msg)) st = (set_err(d, "%s", msg), DVI_ERR_IO);
            free(fdir);
        }
    }
    st = agree(d, st);
    if (st == DVI_OK) {
        for (int32_t k = 0; k < d->nlocal; k++)
            keep[k] = d->level[k] == 0 || (d->level[k] == 3 && d->rank == 0);
        const out_vtk_part part = {keep, d->ids, d->rank};
        st = out_vtk_frame(d->world, dir, frame, ascii, &part, msg, sizeof msg);
        if (st != DVI_OK) set_err(d, "%s", msg);
        if (st == DVI_OK && d->rank == 0) {
            st = out_vtk_write_pvtp(dir, frame, d->size, msg, sizeof msg);
            if (st != DVI_OK) set_err(d, "%s", msg);
        }
    }
    free(keep);
    return agree(d, st);
}

dvi_status dvi_dist_write_pvd(const char* dir, int frames, const double* times, char* msg, size_t msg_size)
{
    return out_vtk_write_pvd(dir, frames, times, "pvtp", msg, msg_size);
}

/* ---- MPI for programs that do not call it themselves ------------------------------------------- */

static bool g_started; /* dvi_dist_init started MPI */

dvi_status dvi_dist_init(void)
{
    int on = 0, provided = 0;
    MPI_Initialized(&on);
    if (on) return DVI_OK;
    if (MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
        return base_error_set(DVI_ERR_UNSUPPORTED, "MPI_Init_thread failed");
    g_started = true;
    return DVI_OK;
}

void dvi_dist_finalize(void)
{
    int fin = 0;
    MPI_Finalized(&fin);
    if (g_started && !fin) MPI_Finalize();
    g_started = false;
}

void dvi_dist_world(int* rank, int* size)
{
    int on = 0, fin = 0, r = 0, n = 1;
    MPI_Initialized(&on);
    MPI_Finalized(&fin);
    if (on && !fin) {
        MPI_Comm_rank(MPI_COMM_WORLD, &r);
        MPI_Comm_size(MPI_COMM_WORLD, &n);
    }
    if (rank) *rank = r;
    if (size) *size = n;
}

int dvi_dist_agree_max(int value)
{
    int on = 0, fin = 0, out = value;
    MPI_Initialized(&on);
    MPI_Finalized(&fin);
    if (on && !fin) MPI_Allreduce(&value, &out, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    return out;
}
