/* dvicontact — AABBs and the broad phase (see the design note in collision.h).
 *
 * What. col_geom_update() computes a geom's world AABB from its pose and
 * parameters. col_collide() finds every pair of geoms whose AABBs, each
 * inflated by the envelope, overlap, runs the narrow phase on those pairs and
 * returns the contact points sorted by (geom_a, geom_b).
 *
 * Algorithm: a hierarchical uniform grid, cells found by index or by hash.
 *   Why not sort-and-sweep: a sweep along one axis tests every pair whose
 *   intervals overlap on that axis. In a granular bed of n grains with a
 *   cross-section of about n^(2/3) grains, a grain's interval overlaps those
 *   of about n^(2/3) others whatever the axis, so the sweep costs O(n^(5/3)).
 *   A grid looks only at a grain's neighbourhood: O(1) per grain.
 *   Why levels: one cell size cannot serve a 1 cm grain and a 1 m wall. Each
 *   bounded geom goes to level l, cell size c_l = s·2^l, the smallest level
 *   with c_l ≥ its extent e (largest side of its inflated AABB). s is a
 *   hair (0.1%) more than the largest extent among the "typical" geoms
 *   (e ≤ 4 × the mean extent), so a population of similar grains shares
 *   level 0, its cells fit them, and 2·H_0 < c_0 strictly.
 *   Build: each geom is stored once, in the cell of its level holding its
 *   AABB centre. When the cells spanned by the geoms' centres, summed over
 *   the levels, are few (≤ 8 per geom), the cell table is dense (a cell's
 *   slot is its linear index in its level's box: neighbours are close in
 *   memory and a look-up is one read); otherwise it is an open-addressed
 *   hash table keyed by (level, ix, iy, iz). A counting sort then lays the
 *   geoms of each cell out contiguously, in increasing index order, with
 *   their AABBs beside them.
 *   Query, cell by cell (neighbour cells are looked up once per cell, not
 *   once per geom). H_l is the largest AABB half-side on level l.
 *     same level: overlapping geoms have centres at most 2·H_l ≤ c_l apart
 *       (up to rounding), i.e. in neighbouring cells; a cell is paired with
 *       itself (i < j) and with the forward half of its 3×3×3 neighbourhood
 *       (13 cells; wider if rounding requires), so each pair is seen once;
 *     higher level m: the level-m cells that can hold the centre of a geom
 *       overlapping one of this cell's geoms are those meeting the cell's box
 *       grown by H_l + H_m: at most 3 per axis, as c_m ≥ 2·c_l. A pair of
 *       different levels is thus found once, from the lower level.
 *   Unbounded geoms (planes) are not in the grid: each is tested against
 *   every bounded geom by the signed distance from the plane to the AABB's
 *   lowest corner (linear in n). Geoms with a non-finite AABB or too large
 *   for the levels are tested against every geom by AABB overlap (linear per
 *   such geom; they do not occur in sane scenes).
 *   Pairs are sorted by (a, b): a counting sort by a, then each bucket by b
 *   (insertion sort for the usual short ones, radix sort for the long bucket
 *   of a large geom with many grains); the narrow phase writes straight
 *   into the output array.
 *
 * Determinism: cells are visited in slot order (dense table: a spatial
 * order) or in order of first use by increasing geom index (hash table,
 * which is probed, never iterated), and the pair list is sorted, so the
 * output depends only on the input.
 *
 * Threads (col_set_threads; calls with fewer than
 * DVI_COLLIDE_PAR_MIN geoms, or one thread, take the serial path above).
 * The split, the levels and the grid build stay serial (2.5 of the 18 ms
 * of a call on a bed of 53,728 grains); the rest runs in one OpenMP
 * region, see collide_parallel():
 *   pairs   tasks of QUERY_CHUNK cells go to whichever thread asks, tasks
 *           of SPECIAL_CHUNK geoms against one special geom in contiguous
 *           blocks; each thread appends the candidate pairs it finds to its
 *           own list;
 *   sort    each thread counts its pairs per part (SORT_PART consecutive
 *           values of a) and scatters them into a common array, part by
 *           part; then each part is sorted by (a, b) as in the serial sort;
 *   narrow  tasks of NARROW_CHUNK consecutive sorted pairs write their points
 *           into their thread's buffer; a prefix sum over the tasks, in pair
 *           order, gives each task's place in the output, where its points
 *           are copied.
 * Bit for bit the serial output, for any thread count and any hand-out of
 * the tasks: the candidate pairs form a set whichever thread finds them;
 * distinct pairs have one sorted order; a pair's points depend on the two
 * geoms alone; and points are placed by pair order. The padding of each
 * point is zeroed, so outputs compare equal with memcmp (test_collision).
 * Memory: per thread, its pairs and points (grow-only, as the rest).
 *
 * Cost: O(n + pairs + points) time per call for n geoms, plus O(n) per plane.
 * Degenerate inputs (many geoms with one centre, coordinates beyond 2^40
 * cells) put many geoms in one cell and cost up to the square of that number.
 * Memory: O(n + pairs + points) in grow-only buffers owned by col_collision;
 * a call with no more geoms, pairs and points than an earlier one allocates
 * nothing.
 */
#include "collision.h"

#include <float.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#define OMP_PRAGMA(x) _Pragma(#x)
#define OMP(...) OMP_PRAGMA(omp __VA_ARGS__)
#define THREAD_NUM() omp_get_thread_num()
#define TEAM_SIZE() omp_get_num_threads()
#else
#define OMP(...)
#define THREAD_NUM() 0
#define TEAM_SIZE() 1
#endif

#define LEVEL_MIN (-200)           /* smaller geoms share this level (still correct) */
#define LEVEL_MAX 200              /* larger ones go to the brute-force list */
#define CELL_LIMIT 1099511627776.0 /* 2^40: cell coordinates are clamped to ±this */
#define DENSE_CELLS_PER_GEOM 8     /* dense cell table while cells ≤ this × geoms (+64) */
#define NARROW_MAX 16              /* room given to one narrow-phase call */
#define PREFETCH_AHEAD 6           /* narrow phase: pairs ahead whose geoms are prefetched */
#define QUERY_CHUNK 128            /* parallel path: cells per task of the query */
#define SPECIAL_CHUNK 4096         /* parallel path: geoms per task of a special geom's scan */
#define RADIX_BITS 11              /* digit of the radix sort of long buckets */
#define SORT_PART 2048             /* parallel path: values of geom a per part of the sort */
#define NARROW_CHUNK 256           /* parallel path: pairs per task of the narrow phase */

#if defined(__GNUC__)
#define PREFETCH(p) __builtin_prefetch(p)
#else
#define PREFETCH(p) ((void)0)
#endif

/* A bounded geom in the grid, as stored in its cell: the AABB beside the
 * index so that a cell's candidates are read from contiguous memory (64
 * bytes, one cache line). */
typedef struct grid_item {
    double lo[3], hi[3];  /* AABB inflated by the envelope */
    int32_t index;        /* into the caller's geoms */
    int32_t owner;
    int32_t level;        /* position in col_collision.levels */
    int32_t is_static;
} grid_item;

typedef struct cell_slot {
    int64_t ix, iy, iz;
    int32_t level;        /* position in col_collision.levels */
    int32_t start;        /* first item of the cell in col_collision.sorted */
    int32_t count;
    uint32_t stamp;       /* == col_collision.stamp when the slot is in use */
} cell_slot;

typedef struct grid_level {
    int32_t exponent;     /* cell size = scale · 2^exponent */
    int32_t reach;        /* same-level partners are ≤ reach cells apart per axis */
    double cell, inv_cell;
    double half_max;      /* largest AABB half-side among the level's geoms */
    double max_abs;       /* largest |centre coordinate| among them */
    double slack;         /* allowance for rounding in centres and cell indices */
    int64_t cmin[3], cmax[3]; /* box of the cells holding the level's geoms */
    size_t offset;        /* dense table: first slot of the level */
} grid_level;

typedef struct geom_pair {
    int32_t a, b;
} geom_pair;

/* A growing list of pairs. */
typedef struct pair_buf {
    geom_pair* p;
    size_t cap, n;
    const dvi_allocator* alloc; /* the collision object's */
} pair_buf;

/* One thread's buffers on the parallel path (grow-only; the slot of a
 * thread is its number in the team). */
typedef struct work_slot {
    pair_buf pairs;                          /* candidate pairs the thread found, in no set order */
    int32_t* counts; size_t counts_cap;      /* [SORT_PART + 1] scratch of sort_part */
    col_contact_point* points; size_t points_cap; size_t npts; /* its narrow-phase chunks, one after another */
    char pad[64];                            /* keeps the slots' hot fields on different cache lines */
} work_slot;

/* A chunk of NARROW_CHUNK pairs of the parallel narrow phase: where its
 * points were written and where they go in the output. */
typedef struct narrow_chunk {
    int32_t slot, count;
    size_t offset, dest;
} narrow_chunk;

struct col_collision {
    const uint64_t* excluded; int32_t excluded_count; /* owner pairs that never touch (sorted keys) */
    grid_item* items;     size_t items_cap;  /* grid geoms in index order (64-byte aligned) */
    grid_item* sorted;    size_t sorted_cap; /* the same, grouped by cell (64-byte aligned) */
    void* items_raw; void* sorted_raw;       /* the blocks that hold them (alignment by hand) */
    dvi_allocator alloc;                     /* where every buffer comes from */
    int32_t* item_slot;   size_t item_slot_cap;
    int32_t* special;     size_t special_cap; /* unbounded, non-finite or oversized geoms */
    unsigned char* special_flag; size_t special_flag_cap; /* [n] 1 for special geoms */
    cell_slot* table;     size_t table_cap;  /* allocated slots */
    size_t table_used;                       /* slots used by this call */
    bool dense;                              /* this call's table is indexed, not hashed */
    int32_t* cells;       size_t cells_cap;  /* used slots: in slot order (dense), of first use (hashed) */
    geom_pair* pairs;     size_t pairs_cap;
    geom_pair* pairs_tmp; size_t pairs_tmp_cap;
    int32_t* counts;      size_t counts_cap;
    col_contact_point* points; size_t points_cap;
    grid_level levels[LEVEL_MAX - LEVEL_MIN + 1];
    int32_t level_count;
    uint32_t stamp;
    int threads;                             /* col_set_threads */
    int32_t par_min;                         /* col_set_parallel_min */
    work_slot* slots;     int slot_count;    /* [threads] */
    size_t* part_pos;     size_t part_pos_cap;   /* [threads × parts] where a slot's pairs of a part go */
    size_t* part_start;   size_t part_start_cap; /* [parts + 1] first pair of each part */
    narrow_chunk* chunks; size_t chunks_cap;
};

/* ---- AABBs ----------------------------------------------------------------- */

void col_geom_update(col_geom* g)
{
    if (!g) return;
    g->unbounded = false;
    const col_shape_class* c = col_shape_class_of(g->type);
    if (c && c->bounds(g)) return;
    /* unknown type or empty terrain: a point at the geom's origin */
    for (int k = 0; k < 3; k++) g->aabb_min[k] = g->aabb_max[k] = g->pos[k];
}

/* ---- state ----------------------------------------------------------------- */

dvi_status col_create(const dvi_allocator* alloc, col_collision** out)
{
    if (!out) return DVI_ERR_INVALID_ARG;
    col_collision* c = base_mem_calloc(alloc, 1, sizeof(col_collision));
    *out = c;
    if (!c) return DVI_ERR_NOMEM;
    if (alloc) c->alloc = *alloc;
    c->threads = 1;
    c->par_min = DVI_COLLIDE_PAR_MIN;
    return DVI_OK;
}

void col_set_excluded(col_collision* c, const uint64_t* keys, int32_t n)
{
    if (!c) return;
    c->excluded = n > 0 ? keys : NULL;
    c->excluded_count = n > 0 ? n : 0;
}

/* May geoms a and b touch, by their filters and the excluded owner pairs? */
static bool filters_pass(const col_collision* c, const col_geom* a, const col_geom* b)
{
    if (a->filtered || b->filtered) {
        uint32_t ca = a->filtered ? a->category : 1u, ma = a->filtered ? a->mask : 0xFFFFFFFFu;
        uint32_t cb = b->filtered ? b->category : 1u, mb = b->filtered ? b->mask : 0xFFFFFFFFu;
        if (!(ca & mb) || !(cb & ma)) return false;
    }
    if (a->linked && b->linked && c->excluded_count > 0) {
        uint64_t lo = (uint64_t)(uint32_t)(a->owner < b->owner ? a->owner : b->owner);
        uint64_t hi = (uint64_t)(uint32_t)(a->owner < b->owner ? b->owner : a->owner);
        uint64_t key = lo << 32 | hi;
        int32_t l = 0, r = c->excluded_count;
        while (l < r) {
            int32_t m = l + (r - l) / 2;
            if (c->excluded[m] < key) l = m + 1;
            else r = m;
        }
        if (l < c->excluded_count && c->excluded[l] == key) return false;
    }
    return true;
}

void col_set_threads(col_collision* c, int threads)
{
    if (c) c->threads = threads > 1 ? threads : 1;
}

void col_set_parallel_min(col_collision* c, int32_t geoms)
{
    if (c) c->par_min = geoms > 0 ? geoms : 0;
}

int col_idle_buffers(const col_collision* c, void** data, size_t* bytes, int max)
{
    int n = 0;
    if (!c) return 0;
#define IDLE(ptr, cap, elem)                                                                                           \
    do {                                                                                                               \
        if ((ptr) && (cap) > 0 && n < max) {                                                                           \
            data[n] = (void*)(ptr);                                                                                    \
            bytes[n++] = (size_t)(cap) * (elem);                                                                       \
        }                                                                                                              \
    } while (0)
    IDLE(c->points, c->points_cap, sizeof *c->points);
    IDLE(c->pairs, c->pairs_cap, sizeof *c->pairs);
    IDLE(c->pairs_tmp, c->pairs_tmp_cap, sizeof *c->pairs_tmp);
    for (int t = 0; t < c->slot_count; t++) {
        IDLE(c->slots[t].points, c->slots[t].points_cap, sizeof *c->slots[t].points);
        IDLE(c->slots[t].pairs.p, c->slots[t].pairs.cap, sizeof *c->slots[t].pairs.p);
    }
#undef IDLE
    return n;
}

void col_destroy(col_collision* c)
{
    if (!c) return;
    const dvi_allocator a = c->alloc;
    base_mem_free(&a, c->items_raw);
    base_mem_free(&a, c->sorted_raw);
    base_mem_free(&a, c->item_slot);
    base_mem_free(&a, c->special);
    base_mem_free(&a, c->special_flag);
    base_mem_free(&a, c->table);
    base_mem_free(&a, c->cells);
    base_mem_free(&a, c->pairs);
    base_mem_free(&a, c->pairs_tmp);
    base_mem_free(&a, c->counts);
    base_mem_free(&a, c->points);
    for (int t = 0; t < c->slot_count; t++) {
        base_mem_free(&a, c->slots[t].pairs.p);
        base_mem_free(&a, c->slots[t].counts);
        base_mem_free(&a, c->slots[t].points);
    }
    base_mem_free(&a, c->slots);
    base_mem_free(&a, c->part_pos);
    base_mem_free(&a, c->part_start);
    base_mem_free(&a, c->chunks);
    base_mem_free(&a, c);
}

/* Makes *p hold at least `need` elements of `size` bytes, keeping its
 * contents (grow only, 50% slack). On failure nothing changes. */
static bool reserve(const dvi_allocator* a, void** p, size_t* cap, size_t need, size_t size)
{
    if (need <= *cap && *p) return true;
    size_t n = *cap + *cap / 2;
    if (n < need) n = need + need / 16; /* headroom, never touched unless used (the step lends it on) */
    if (n < 16) n = 16;
    if (n > SIZE_MAX / size) return false;
    void* q = base_mem_realloc(a, *p, n * size);
    if (!q) return false;
    *p = q;
    *cap = n;
    return true;
}

#define RESERVE(c, field, need) reserve(&(c)->alloc, (void**)&(c)->field, &(c)->field##_cap, (need), sizeof *(c)->field)

/* The same for grid items, 64-byte aligned, contents not kept. */
static bool reserve_items(const dvi_allocator* a, grid_item** p, void** raw, size_t* cap, size_t need)
{
    if (need <= *cap && *p) return true;
    size_t n = *cap + *cap / 2;
    if (n < need) n = need;
    if (n < 16) n = 16;
    if (n > (SIZE_MAX - 64) / sizeof(grid_item)) return false;
    /* 64 bytes more, to start at a 64-byte boundary whatever the allocator (64 | sizeof(grid_item)) */
    void* q = base_mem_alloc(a, n * sizeof(grid_item) + 64);
    if (!q) return false;
    base_mem_free(a, *raw);
    *raw = q;
    *p = (grid_item*)(void*)(((uintptr_t)q + 63) / 64 * 64);
    *cap = n;
    return true;
}

/* ---- grid ------------------------------------------------------------------ */

/* floor(x · inv) clamped to ±CELL_LIMIT; monotone in x. */
static int64_t cell_coord(double x, double inv)
{
    double t = floor(x * inv);
    if (!(t >= -CELL_LIMIT)) return -(int64_t)CELL_LIMIT;
    if (t > CELL_LIMIT) return (int64_t)CELL_LIMIT;
    return (int64_t)t;
}

static uint64_t cell_hash(int32_t level, int64_t ix, int64_t iy, int64_t iz)
{
    uint64_t h = (uint64_t)ix * 0x9E3779B97F4A7C15ull;
    h ^= (uint64_t)iy * 0xC2B2AE3D27D4EB4Full + (h << 6) + (h >> 2);
    h ^= (uint64_t)iz * 0x165667B19E3779F9ull + (h << 6) + (h >> 2);
    h ^= (uint64_t)(uint32_t)level * 0x27D4EB2F165667C5ull;
    h ^= h >> 29;
    h *= 0xBF58476D1CE4E5B9ull;
    h ^= h >> 32;
    return h;
}

/* Dense table: slot of a cell, or −1 when the cell is outside its level's box. */
static int64_t dense_slot(const col_collision* c, int32_t level, int64_t ix, int64_t iy, int64_t iz)
{
    const grid_level* L = &c->levels[level];
    if (ix < L->cmin[0] || ix > L->cmax[0] || iy < L->cmin[1] || iy > L->cmax[1] || iz < L->cmin[2] ||
        iz > L->cmax[2])
        return -1;
    const int64_t nx = L->cmax[0] - L->cmin[0] + 1, ny = L->cmax[1] - L->cmin[1] + 1;
    return (int64_t)L->offset + (ix - L->cmin[0]) + nx * ((iy - L->cmin[1]) + ny * (iz - L->cmin[2]));
}

static bool slot_is(const cell_slot* e, int32_t level, int64_t ix, int64_t iy, int64_t iz)
{
    return e->ix == ix && e->iy == iy && e->iz == iz && e->level == level;
}

/* Slot of a non-empty cell, or −1 when the cell is empty. */
static int32_t cell_find(const col_collision* c, int32_t level, int64_t ix, int64_t iy, int64_t iz)
{
    if (c->dense) {
        int64_t s = dense_slot(c, level, ix, iy, iz);
        return s >= 0 && c->table[s].stamp == c->stamp ? (int32_t)s : -1;
    }
    const size_t mask = c->table_used - 1;
    for (size_t s = cell_hash(level, ix, iy, iz) & mask;; s = (s + 1) & mask) {
        const cell_slot* e = &c->table[s];
        if (e->stamp != c->stamp) return -1;
        if (slot_is(e, level, ix, iy, iz)) return (int32_t)s;
    }
}

/* Slot of a cell, created if needed (the table always has room). */
static int32_t cell_insert(col_collision* c, int32_t level, int64_t ix, int64_t iy, int64_t iz, int32_t* ncells)
{
    size_t s;
    if (c->dense) {
        s = (size_t)dense_slot(c, level, ix, iy, iz); /* inside the box by construction */
    } else {
        const size_t mask = c->table_used - 1;
        for (s = cell_hash(level, ix, iy, iz) & mask;; s = (s + 1) & mask) {
            const cell_slot* e = &c->table[s];
            if (e->stamp != c->stamp || slot_is(e, level, ix, iy, iz)) break;
        }
    }
    cell_slot* e = &c->table[s];
    if (e->stamp != c->stamp) {
        e->stamp = c->stamp;
        e->ix = ix;
        e->iy = iy;
        e->iz = iz;
        e->level = level;
        e->count = 0;
        e->start = 0;
        c->cells[(*ncells)++] = (int32_t)s;
    }
    return (int32_t)s;
}

/* Level exponent of an extent relative to the scale: the smallest l with
 * scale·2^l ≥ e (up to rounding), LEVEL_MIN for tiny or zero extents, and
 * LEVEL_MAX + 1 for extents too large to place. */
static int32_t level_exponent(double e, double scale)
{
    if (!(e > 0.0)) return LEVEL_MIN;
    double r = e / scale;
    if (!isfinite(r)) return LEVEL_MAX + 1;
    int ex;
    double f = frexp(r, &ex); /* r = f·2^ex, f in [0.5, 1) */
    int32_t l = (f == 0.5) ? ex - 1 : ex;
    if (l < LEVEL_MIN) l = LEVEL_MIN;
    if (l > LEVEL_MAX) l = LEVEL_MAX + 1;
    return l;
}

/* Closed boxes overlap. */
static bool aabb_overlap(const grid_item* a, const grid_item* b)
{
    return (a->lo[0] <= b->hi[0]) & (b->lo[0] <= a->hi[0]) & (a->lo[1] <= b->hi[1]) & (b->lo[1] <= a->hi[1]) &
           (a->lo[2] <= b->hi[2]) & (b->lo[2] <= a->hi[2]);
}

static bool finite_box(const double lo[3], const double hi[3])
{
    for (int k = 0; k < 3; k++)
        if (!isfinite(lo[k]) || !isfinite(hi[k]) || !(lo[k] <= hi[k])) return false;
    return true;
}

/* Room for `more` pairs after the out->n already there. */
static bool pairs_room(pair_buf* out, size_t more)
{
    return out->n + more <= out->cap || reserve(out->alloc, (void**)&out->p, &out->cap, out->n + more, sizeof *out->p);
}

/* Appends a pair (smaller index first). */
static bool add_pair(pair_buf* out, int32_t i, int32_t j)
{
    if (!pairs_room(out, 1)) return false;
    geom_pair* p = &out->p[out->n++];
    p->a = i < j ? i : j;
    p->b = i < j ? j : i;
    return true;
}

static bool may_pair(const col_geom* a, const col_geom* b)
{
    return a->owner != b->owner && !(a->is_static && b->is_static);
}

/* Signed distance from the plane of geom p (normal = third column of rot,
 * through pos) to the lowest corner of the box [lo, hi]. */
static double plane_aabb_distance(const col_geom* p, const double lo[3], const double hi[3])
{
    double d = 0.0;
    for (int k = 0; k < 3; k++) {
        double n = p->rot[3 * k + 2];
        double cen = 0.5 * (lo[k] + hi[k]), half = 0.5 * (hi[k] - lo[k]);
        d += n * (cen - p->pos[k]) - fabs(n) * half;
    }
    return d;
}

static void inflated_box(const col_geom* g, double pad, double lo[3], double hi[3])
{
    for (int k = 0; k < 3; k++) {
        lo[k] = g->aabb_min[k] - pad;
        hi[k] = g->aabb_max[k] + pad;
    }
}

static double item_extent(const grid_item* it)
{
    return fmax(it->hi[0] - it->lo[0], fmax(it->hi[1] - it->lo[1], it->hi[2] - it->lo[2]));
}

/* Assigns a level to every grid item and fills c->levels (cell sizes).
 * Items too large for any level move to the special list. Returns the new
 * item count. */
static int32_t assign_levels(col_collision* c, int32_t nitems, int32_t* nspecial)
{
    grid_item* items = c->items;
    c->level_count = 0;
    if (nitems == 0) return 0;

    /* scale: largest extent among items no larger than 4 × the mean */
    double mean = 0.0;
    for (int32_t i = 0; i < nitems; i++) mean += item_extent(&items[i]) / nitems;
    double scale = 0.0;
    for (int32_t i = 0; i < nitems; i++) {
        double e = item_extent(&items[i]);
        if (e <= 4.0 * mean && e > scale) scale = e;
    }
    if (!(scale > 0.0) || !isfinite(scale)) scale = 1.0;
    /* a little larger, so that 2·H_l < c_l holds with room for rounding and
     * the same-level neighbourhood stays 3×3×3 */
    scale *= 1.0 + 1.0 / 1024.0;

    /* exponents; populated levels in increasing order through a small map */
    int32_t map[LEVEL_MAX - LEVEL_MIN + 1];
    for (int32_t l = 0; l <= LEVEL_MAX - LEVEL_MIN; l++) map[l] = -1;
    int32_t kept = 0;
    for (int32_t i = 0; i < nitems; i++) {
        grid_item it = items[i];
        int32_t l = level_exponent(item_extent(&it), scale);
        if (l > LEVEL_MAX) {
            c->special_flag[it.index] = 1;
            c->special[(*nspecial)++] = it.index;
            continue;
        }
        it.level = l;
        map[l - LEVEL_MIN] = 0;
        items[kept++] = it;
    }
    for (int32_t l = 0; l <= LEVEL_MAX - LEVEL_MIN; l++) {
        if (map[l] < 0) continue;
        grid_level* L = &c->levels[c->level_count];
        memset(L, 0, sizeof *L);
        L->exponent = l + LEVEL_MIN;
        L->cell = ldexp(scale, L->exponent);
        L->inv_cell = 1.0 / L->cell;
        L->reach = 1;
        for (int k = 0; k < 3; k++) {
            L->cmin[k] = INT64_MAX;
            L->cmax[k] = INT64_MIN;
        }
        map[l] = c->level_count++;
    }
    for (int32_t i = 0; i < kept; i++) items[i].level = map[items[i].level - LEVEL_MIN];
    return kept;
}

static void item_cell(const grid_item* it, const grid_level* L, int64_t q[3])
{
    for (int k = 0; k < 3; k++) q[k] = cell_coord(0.5 * (it->lo[k] + it->hi[k]), L->inv_cell);
}

/* Level statistics (H_l, cell box, rounding slack, reach), then the cell
 * table for this call: dense when the levels' cell boxes hold few cells,
 * hashed otherwise; every slot is marked free by a new stamp (a full clear
 * only when the stamp wraps). */
static dvi_status table_begin(col_collision* c, int32_t nitems)
{
    for (int32_t i = 0; i < nitems; i++) {
        const grid_item* it = &c->items[i];
        grid_level* L = &c->levels[it->level];
        int64_t q[3];
        item_cell(it, L, q);
        for (int k = 0; k < 3; k++) {
            double cen = 0.5 * (it->lo[k] + it->hi[k]);
            double h = fmax(it->hi[k] - cen, cen - it->lo[k]);
            if (h > L->half_max) L->half_max = h;
            if (fabs(cen) > L->max_abs) L->max_abs = fabs(cen);
            if (q[k] < L->cmin[k]) L->cmin[k] = q[k];
            if (q[k] > L->cmax[k]) L->cmax[k] = q[k];
        }
    }
    double dense_cells = 0.0;
    for (int32_t m = 0; m < c->level_count; m++) {
        grid_level* L = &c->levels[m];
        L->slack = 8.0 * DBL_EPSILON * (L->max_abs + L->half_max + L->cell);
        double r = floor((2.0 * L->half_max + 2.0 * L->slack) * L->inv_cell) + 1.0;
        L->reach = r > 1.0 ? (r < 4.0 ? (int32_t)r : 4) : 1; /* 1, or 2 by rounding */
        L->offset = (size_t)dense_cells;
        dense_cells += ((double)(L->cmax[0] - L->cmin[0]) + 1.0) * ((double)(L->cmax[1] - L->cmin[1]) + 1.0) *
                       ((double)(L->cmax[2] - L->cmin[2]) + 1.0);
    }
    c->dense = dense_cells <= (double)DENSE_CELLS_PER_GEOM * nitems + 64.0;
    size_t used;
    if (c->dense) {
        used = (size_t)dense_cells;
    } else {
        used = 16;
        while (used < 2 * (size_t)nitems) used *= 2;
    }
    if (used > c->table_cap || !c->table) {
        size_t n = used + used / 4;
        base_mem_free(&c->alloc, c->table);
        c->table = NULL;
        c->table_cap = 0;
        if (n > SIZE_MAX / sizeof(cell_slot)) return DVI_ERR_NOMEM;
        c->table = base_mem_calloc(&c->alloc, n, sizeof(cell_slot));
        if (!c->table) return DVI_ERR_NOMEM;
        c->table_cap = n;
        c->stamp = 0;
    }
    /* slots past `used` keep older stamps and are never read by this call */
    c->table_used = used;
    if (++c->stamp == 0) {
        memset(c->table, 0, c->table_cap * sizeof *c->table);
        c->stamp = 1;
    }
    return DVI_OK;
}

/* Candidate test without unpredictable branches: the pair is always
 * written and kept (np advanced) only if it may collide: AABBs overlapping,
 * different owners, not both static. Most candidates fail, on an axis that
 * varies from one to the next, so this beats early exits. The caller has
 * made room for the write. */
static inline size_t keep_pair(geom_pair* out, size_t np, const grid_item* a, const grid_item* b)
{
    const int keep = (a->lo[0] <= b->hi[0]) & (b->lo[0] <= a->hi[0]) & (a->lo[1] <= b->hi[1]) &
                     (b->lo[1] <= a->hi[1]) & (a->lo[2] <= b->hi[2]) & (b->lo[2] <= a->hi[2]) &
                     (a->owner != b->owner) & !(a->is_static & b->is_static);
    const int32_t i = a->index, j = b->index;
    out[np].a = i < j ? i : j;
    out[np].b = i < j ? j : i;
    return np + (size_t)keep;
}

/* Every item of cell slot s against every item of A[0..na), into out. */
static bool cell_against(const col_collision* c, pair_buf* out, const grid_item* A, int32_t na, int32_t s)
{
    const grid_item* B = c->sorted + c->table[s].start;
    const int32_t nb = c->table[s].count;
    if (!pairs_room(out, (size_t)na * (size_t)nb)) return false;
    geom_pair* p = out->p;
    size_t k = out->n;
    for (int32_t i = 0; i < na; i++)
        for (int32_t j = 0; j < nb; j++) k = keep_pair(p, k, &A[i], &B[j]);
    out->n = k;
    return true;
}

/* Every pair of items within A[0..na), into out. */
static bool cell_itself(pair_buf* out, const grid_item* A, int32_t na)
{
    if (!pairs_room(out, (size_t)na * (size_t)na / 2 + 1)) return false;
    geom_pair* p = out->p;
    size_t k = out->n;
    for (int32_t i = 0; i < na; i++)
        for (int32_t j = i + 1; j < na; j++) k = keep_pair(p, k, &A[i], &A[j]);
    out->n = k;
    return true;
}

/* Query of cell c->cells[k]: its own pairs, the forward half of its
 * same-level neighbourhood and the cells of higher levels, appended to out
 * (see the file comment). Reads the grid only. */
static bool query_cell(const col_collision* c, int32_t k, pair_buf* out)
{
    const cell_slot C = c->table[c->cells[k]];
    const grid_item* A = c->sorted + C.start;
    const int32_t na = C.count;
    const grid_level* L = &c->levels[C.level];
    if (!cell_itself(out, A, na)) return false; /* own cell */
    const int32_t R = L->reach; /* forward half of the neighbourhood */
    for (int32_t dz = 0; dz <= R; dz++)
        for (int32_t dy = dz > 0 ? -R : 0; dy <= R; dy++)
            for (int32_t dx = (dz > 0 || dy > 0) ? -R : 1; dx <= R; dx++) {
                int32_t s = cell_find(c, C.level, C.ix + dx, C.iy + dy, C.iz + dz);
                if (s >= 0 && !cell_against(c, out, A, na, s)) return false;
            }
    const double cmin[3] = {(double)C.ix * L->cell, (double)C.iy * L->cell, (double)C.iz * L->cell};
    for (int32_t m = C.level + 1; m < c->level_count; m++) { /* higher levels */
        const grid_level* M = &c->levels[m];
        const double grow = L->half_max + M->half_max + L->slack + M->slack;
        int64_t q0[3], q1[3];
        for (int d = 0; d < 3; d++) {
            q0[d] = cell_coord(cmin[d] - grow, M->inv_cell);
            q1[d] = cell_coord(cmin[d] + L->cell + grow, M->inv_cell);
            if (q0[d] < M->cmin[d]) q0[d] = M->cmin[d];
            if (q1[d] > M->cmax[d]) q1[d] = M->cmax[d];
        }
        for (int64_t z = q0[2]; z <= q1[2]; z++)
            for (int64_t y = q0[1]; y <= q1[1]; y++)
                for (int64_t x = q0[0]; x <= q1[0]; x++) {
                    int32_t s = cell_find(c, m, x, y, z);
                    if (s >= 0 && !cell_against(c, out, A, na, s)) return false;
                }
    }
    return true;
}

/* Builds the grid of this call (see the file comment): the cell table, the
 * items laid out by cell, and c->cells, the ncells used slots in visiting
 * order. */
static dvi_status grid_build(col_collision* c, int32_t nitems, int32_t* ncells_out)
{
    *ncells_out = 0;
    if (nitems == 0) return DVI_OK;
    dvi_status st = table_begin(c, nitems);
    if (st != DVI_OK) return st;
    const grid_item* items = c->items;

    /* build: count the items of each cell, then lay them out by cell */
    int32_t ncells = 0;
    for (int32_t i = 0; i < nitems; i++) {
        int64_t q[3];
        item_cell(&items[i], &c->levels[items[i].level], q);
        int32_t s = cell_insert(c, items[i].level, q[0], q[1], q[2], &ncells);
        c->table[s].count++;
        c->item_slot[i] = s;
    }
    if (c->dense) { /* visit cells in slot order: spatially coherent, whatever the numbering */
        ncells = 0;
        for (size_t s = 0; s < c->table_used; s++)
            if (c->table[s].stamp == c->stamp) c->cells[ncells++] = (int32_t)s;
    }
    int32_t start = 0;
    for (int32_t k = 0; k < ncells; k++) {
        cell_slot* e = &c->table[c->cells[k]];
        e->start = start;
        start += e->count;
    }
    for (int32_t i = 0; i < nitems; i++) c->sorted[c->table[c->item_slot[i]].start++] = items[i];
    for (int32_t k = 0; k < ncells; k++) {
        cell_slot* e = &c->table[c->cells[k]];
        e->start -= e->count;
    }
    *ncells_out = ncells;
    return DVI_OK;
}

/* Candidate pairs of special geom i with geoms j in [j0, j1), into out: a
 * plane against every bounded geom (AABB reaching below the plane),
 * anything else by AABB overlap. A pair of two special geoms is taken from
 * the lower index only; planes never pair with planes. */
static bool special_pairs(const col_collision* c, const col_geom* geoms, int32_t j0, int32_t j1, int32_t i,
                          double pad, pair_buf* out)
{
    const col_geom* gi = &geoms[i];
    const bool plane_i = gi->unbounded;
    grid_item a;
    inflated_box(gi, pad, a.lo, a.hi);
    for (int32_t j = j0; j < j1; j++) {
        if (j == i || (c->special_flag[j] && j < i)) continue;
        const col_geom* gj = &geoms[j];
        if (!may_pair(gi, gj)) continue;
        const bool plane_j = gj->unbounded;
        if (plane_i && plane_j) continue;
        grid_item b;
        inflated_box(gj, pad, b.lo, b.hi);
        if (plane_i) {
            if (!(plane_aabb_distance(gi, b.lo, b.hi) <= 0.0)) continue;
        } else if (plane_j) {
            if (!(plane_aabb_distance(gj, a.lo, a.hi) <= 0.0)) continue;
        } else if (!aabb_overlap(&a, &b)) {
            continue;
        }
        if (!add_pair(out, i, j)) return false;
    }
    return true;
}

/* Sorts x[0..k) by b (values in [0, n)) with tmp[0..k) as scratch: a
 * least-significant-digit radix sort, RADIX_BITS bits per pass, as many
 * passes as n needs (two up to 4 million geoms). */
static void radix_by_b(geom_pair* x, geom_pair* tmp, size_t k, int32_t n)
{
    int32_t cnt[1 << RADIX_BITS];
    geom_pair *src = x, *dst = tmp;
    for (int shift = 0; shift < 32 && ((uint32_t)n - 1u) >> shift; shift += RADIX_BITS) {
        memset(cnt, 0, sizeof cnt);
        for (size_t i = 0; i < k; i++) cnt[((uint32_t)src[i].b >> shift) & ((1u << RADIX_BITS) - 1)]++;
        int32_t run = 0;
        for (int d = 0; d < 1 << RADIX_BITS; d++) {
            const int32_t m = cnt[d];
            cnt[d] = run;
            run += m;
        }
        for (size_t i = 0; i < k; i++) dst[cnt[((uint32_t)src[i].b >> shift) & ((1u << RADIX_BITS) - 1)]++] = src[i];
        geom_pair* t = src;
        src = dst;
        dst = t;
    }
    if (src != x) memcpy(x, src, k * sizeof *x);
}

/* Sorts the bucket dst[begin..end) (pairs of one geom a, so distinct b) by
 * b: insertion sort for short buckets (a geom has few partners), a radix
 * sort for long ones (a large static geom with many grains) unless already
 * in order (a plane's partners arrive in order). scratch[begin..end) is free
 * memory. */
static void sort_bucket(geom_pair* dst, size_t begin, size_t end, geom_pair* scratch, int32_t n)
{
    if (end - begin > 32) {
        bool sorted = true;
        for (size_t k = begin + 1; k < end && sorted; k++) sorted = dst[k - 1].b < dst[k].b;
        if (!sorted) radix_by_b(dst + begin, scratch + begin, end - begin, n);
    } else {
        for (size_t k = begin + 1; k < end; k++) {
            geom_pair x = dst[k];
            size_t j = k;
            for (; j > begin && dst[j - 1].b > x.b; j--) dst[j] = dst[j - 1];
            dst[j] = x;
        }
    }
}

/* Sorts c->pairs[0..np) by (a, b): a counting sort by a (one scatter pass),
 * then each bucket by b. Pairs are distinct, so the order is total and the
 * result unique: it does not depend on the order the pairs were found in. */
static dvi_status sort_pairs(col_collision* c, size_t np, int32_t n)
{
    if (np < 2) return DVI_OK;
    if (np > (size_t)INT32_MAX) return DVI_ERR_NOMEM;
    if (!RESERVE(c, pairs_tmp, np) || !RESERVE(c, counts, (size_t)n + 1)) return DVI_ERR_NOMEM;
    int32_t* cnt = c->counts;
    memset(cnt, 0, ((size_t)n + 1) * sizeof *cnt);
    for (size_t k = 0; k < np; k++) cnt[c->pairs[k].a + 1]++;
    for (int32_t i = 0; i < n; i++) cnt[i + 1] += cnt[i];
    geom_pair* dst = c->pairs_tmp;
    for (size_t k = 0; k < np; k++) dst[cnt[c->pairs[k].a]++] = c->pairs[k]; /* cnt[i]: end of bucket i */
    size_t begin = 0;
    for (int32_t i = 0; i < n && begin < np; i++) {
        const size_t end = (size_t)cnt[i];
        sort_bucket(dst, begin, end, c->pairs, n); /* c->pairs: scattered, free */
        begin = end;
    }
    geom_pair* t = c->pairs; /* the sorted list becomes c->pairs */
    size_t tcap = c->pairs_cap;
    c->pairs = c->pairs_tmp;
    c->pairs_cap = c->pairs_tmp_cap;
    c->pairs_tmp = t;
    c->pairs_tmp_cap = tcap;
    return DVI_OK;
}

/* col_contact_point has no hole before its last member; past it, padding. */
#define POINT_END (offsetof(col_contact_point, feature) + sizeof(uint32_t))
_Static_assert(offsetof(col_contact_point, point) == 2 * sizeof(int32_t) &&
                   offsetof(col_contact_point, normal) == offsetof(col_contact_point, point) + 3 * sizeof(double) &&
                   offsetof(col_contact_point, distance) == offsetof(col_contact_point, normal) + 3 * sizeof(double) &&
                   offsetof(col_contact_point, feature) == offsetof(col_contact_point, distance) + sizeof(double),
               "col_contact_point: members packed up to feature");

/* The narrow phase of pair k, its points written at out (room for
 * NARROW_MAX); returns how many. */
static inline int narrow_pair(const col_collision* c, const col_geom* geoms, size_t k, size_t np, double envelope,
                              col_contact_point* out)
{
    if (k + PREFETCH_AHEAD < np) { /* geom b of a later pair: rarely in cache */
        const char* g = (const char*)&geoms[c->pairs[k + PREFETCH_AHEAD].b];
        PREFETCH(g);
        PREFETCH(g + 64);
        PREFETCH(g + 128);
    }
    const int32_t a = c->pairs[k].a, b = c->pairs[k].b;
    if (!filters_pass(c, &geoms[a], &geoms[b])) return 0;
    int m = col_narrow_phase(&geoms[a], &geoms[b], envelope, out, NARROW_MAX);
    if (m < 0) m = 0;
    if (m > NARROW_MAX) m = NARROW_MAX;
    for (int q = 0; q < m; q++) {
        out[q].geom_a = a;
        out[q].geom_b = b;
        /* the padding after the feature is zeroed: points compare equal byte for byte */
        memset((char*)&out[q] + POINT_END, 0, sizeof *out - POINT_END);
    }
    return m;
}

/* ---- the parallel path (see the file comment) ------------------------------- */

/* Makes c->slots hold nt slots and c->part_pos the positions of nparts
 * sort parts for each. */
static bool slots_reserve(col_collision* c, int nt, size_t nparts)
{
    if (nt > c->slot_count) {
        work_slot* q = base_mem_realloc(&c->alloc, c->slots, (size_t)nt * sizeof *q);
        if (!q) return false;
        memset(q + c->slot_count, 0, (size_t)(nt - c->slot_count) * sizeof *q);
        c->slots = q;
        c->slot_count = nt;
    }
    for (int t = 0; t < nt; t++) c->slots[t].pairs.alloc = &c->alloc;
    for (int t = 0; t < nt; t++)
        if (!reserve(&c->alloc, (void**)&c->slots[t].counts, &c->slots[t].counts_cap, SORT_PART + 1, sizeof(int32_t)))
            return false;
    return RESERVE(c, part_pos, (size_t)nt * nparts) && RESERVE(c, part_start, nparts + 1);
}

/* Sorts the pairs of part q, src[start[q]..start[q + 1]) (a in
 * [q·SORT_PART, ...)), by (a, b) into the same range of dst: a counting sort
 * by a, then each bucket by b. cnt: room for SORT_PART + 1. */
static void sort_part(geom_pair* src, geom_pair* dst, const size_t* start, size_t q, int32_t n, int32_t* cnt)
{
    const size_t begin = start[q], end = start[q + 1];
    const int32_t a0 = (int32_t)q * SORT_PART, len = n - a0 < SORT_PART ? n - a0 : SORT_PART;
    memset(cnt, 0, ((size_t)len + 1) * sizeof *cnt);
    for (size_t k = begin; k < end; k++) cnt[src[k].a - a0 + 1]++;
    for (int32_t i = 0; i < len; i++) cnt[i + 1] += cnt[i];
    for (size_t k = begin; k < end; k++) dst[begin + (size_t)cnt[src[k].a - a0]++] = src[k];
    size_t b0 = begin; /* cnt[i]: end of bucket i, relative to begin */
    for (int32_t i = 0; i < len && b0 < end; i++) {
        const size_t b1 = begin + (size_t)cnt[i];
        sort_bucket(dst, b0, b1, src, n); /* src: scattered, free */
        b0 = b1;
    }
}

/* The pairs and the narrow phase on nt threads, in one parallel region
 * (the grid is built; c->special holds the nspecial special geoms):
 *   1. candidate pairs: tasks of QUERY_CHUNK cells, handed out as the
 *      threads ask, and tasks of SPECIAL_CHUNK geoms against one special
 *      geom, in contiguous blocks; each thread appends to its slot's list;
 *   2. sort: each thread counts its pairs per part (SORT_PART values of a);
 *      the positions put part 0 first, within it slot 0's pairs first, ...;
 *      each thread scatters its pairs to them (c->pairs_tmp); then each part
 *      is sorted by (a, b) into c->pairs;
 *   3. narrow phase: tasks of NARROW_CHUNK pairs, each writing its points to
 *      its thread's slot; then each chunk's points are copied to their place
 *      in c->points, chunks in pair order.
 * The candidate pairs are a set, whoever finds them; sorted, their order is
 * the unique one; each pair's points depend on the pair alone; so c->points
 * is the serial path's, byte for byte. */
static dvi_status collide_parallel(col_collision* c, int nt, const col_geom* geoms, int32_t n, int32_t ncells,
                                   int32_t nspecial, double pad, double envelope, size_t* npts_out)
{
    const int32_t qtasks = (ncells + QUERY_CHUNK - 1) / QUERY_CHUNK;
    const int32_t schunks = (n + SPECIAL_CHUNK - 1) / SPECIAL_CHUNK;
    const int64_t stasks = (int64_t)nspecial * schunks;
    const size_t nparts = ((size_t)n + SORT_PART - 1) / SORT_PART;
    if (!slots_reserve(c, nt, nparts)) return DVI_ERR_NOMEM;
    size_t* start = c->part_start;
    int failed = 0;
    size_t np = 0, nchunks = 0, total = 0;
    OMP(parallel num_threads(nt))
    {
        const int tn = THREAD_NUM();
        work_slot* S = &c->slots[tn];
        size_t* pos = c->part_pos + (size_t)tn * nparts;
        S->pairs.n = 0;
        S->npts = 0;

        /* 1. candidate pairs */
        OMP(for schedule(dynamic, 1) nowait)
        for (int32_t t = 0; t < qtasks; t++) {
            const int32_t k1 = t < qtasks - 1 ? (t + 1) * QUERY_CHUNK : ncells;
            for (int32_t k = t * QUERY_CHUNK; k < k1; k++)
                if (!query_cell(c, k, &S->pairs)) {
                    OMP(atomic write)
                    failed = 1;
                    break;
                }
        }
        /* contiguous blocks of tasks in thread order: a special geom's pairs
         * (its bucket, if it has the lower index) arrive sorted by b */
        OMP(for schedule(static) nowait)
        for (int64_t t = 0; t < stasks; t++) {
            const int32_t j0 = (int32_t)(t % schunks) * SPECIAL_CHUNK;
            const int32_t j1 = n - j0 > SPECIAL_CHUNK ? j0 + SPECIAL_CHUNK : n;
            if (!special_pairs(c, geoms, j0, j1, c->special[t / schunks], pad, &S->pairs)) {
                OMP(atomic write)
                failed = 1;
            }
        }

        /* 2. sort */
        memset(pos, 0, nparts * sizeof *pos);
        for (size_t k = 0; k < S->pairs.n; k++) pos[(size_t)S->pairs.p[k].a / SORT_PART]++;
        OMP(barrier)
        OMP(single)
        {
            const int team = TEAM_SIZE();
            size_t run = 0;
            for (size_t q = 0; q < nparts; q++) {
                start[q] = run;
                for (int t = 0; t < team; t++) {
                    size_t* x = c->part_pos + (size_t)t * nparts + q;
                    const size_t m = *x;
                    *x = run;
                    run += m;
                }
            }
            start[nparts] = run;
            np = run;
            nchunks = (np + NARROW_CHUNK - 1) / NARROW_CHUNK;
            if (!failed && (np > (size_t)INT32_MAX || !RESERVE(c, pairs, np + 1) || !RESERVE(c, pairs_tmp, np + 1) ||
                            !RESERVE(c, chunks, nchunks + 1)))
                failed = 1;
        }
        if (!failed) { /* read after a barrier and before any write: the same for every thread */
            for (size_t k = 0; k < S->pairs.n; k++) {
                const geom_pair x = S->pairs.p[k];
                c->pairs_tmp[pos[(size_t)x.a / SORT_PART]++] = x;
            }
            OMP(barrier)
            OMP(for schedule(dynamic, 1))
            for (size_t q = 0; q < nparts; q++) sort_part(c->pairs_tmp, c->pairs, start, q, n, S->counts);

            /* 3. narrow phase: each thread takes one contiguous run of chunks,
             * in thread order, so the first thread's points are the first of
             * the output: it writes them there itself, and only the others'
             * are copied (their slots hold (team − 1)/team of the points,
             * not all of them) */
            col_contact_point** buf = tn == 0 ? &c->points : &S->points;
            size_t* cap = tn == 0 ? &c->points_cap : &S->points_cap;
            OMP(for schedule(static))
            for (size_t ch = 0; ch < nchunks; ch++) {
                const size_t k0 = ch * NARROW_CHUNK, k1 = k0 + NARROW_CHUNK < np ? k0 + NARROW_CHUNK : np;
                const size_t first = S->npts;
                size_t m = first;
                for (size_t k = k0; k < k1; k++) {
                    if (m + NARROW_MAX > *cap && !reserve(&c->alloc, (void**)buf, cap, m + NARROW_MAX, sizeof **buf)) {
                        OMP(atomic write)
                        failed = 1;
                        break;
                    }
                    m += (size_t)narrow_pair(c, geoms, k, np, envelope, *buf + m);
                }
                S->npts = m;
                c->chunks[ch] = (narrow_chunk){tn, (int32_t)(m - first), first, 0};
            }
            OMP(single)
            {
                for (size_t ch = 0; ch < nchunks; ch++) {
                    c->chunks[ch].dest = total;
                    total += (size_t)c->chunks[ch].count;
                    /* the first thread's chunks are where they belong (an invariant of the static
                     * schedule: were it broken, the call fails rather than return points out of order) */
                    if (c->chunks[ch].slot == 0 && c->chunks[ch].dest != c->chunks[ch].offset) failed = 1;
                }
                if (!failed && (total > (size_t)INT32_MAX || !RESERVE(c, points, total + 1))) failed = 1;
            }
            if (!failed) {
                OMP(for schedule(static) nowait) /* the region's end waits */
                for (size_t ch = 0; ch < nchunks; ch++) {
                    const narrow_chunk* q = &c->chunks[ch];
                    if (q->slot != 0 && q->count > 0)
                        memcpy(c->points + q->dest, c->slots[q->slot].points + q->offset,
                               (size_t)q->count * sizeof *c->points);
                }
            }
        }
    }
    if (failed) return DVI_ERR_NOMEM;
    *npts_out = total;
    return DVI_OK;
}

dvi_status col_collide(col_collision* c, const col_geom* geoms, int32_t n, double envelope,
                       const col_contact_point** points, int32_t* count)
{
    if (!c || !points || !count || n < 0 || (n > 0 && !geoms) || isnan(envelope)) return DVI_ERR_INVALID_ARG;
    *points = c->points;
    *count = 0;
    const double pad = envelope > 0.0 ? envelope : 0.0;
    const int nt = c->threads > 1 && n >= c->par_min ? c->threads : 1;

    const size_t n1 = (size_t)n + 1;
    if (!reserve_items(&c->alloc, &c->items, &c->items_raw, &c->items_cap, n1) ||
        !reserve_items(&c->alloc, &c->sorted, &c->sorted_raw, &c->sorted_cap, n1) ||
        !RESERVE(c, item_slot, n1) || !RESERVE(c, special, n1) || !RESERVE(c, special_flag, n1) ||
        !RESERVE(c, cells, n1))
        return DVI_ERR_NOMEM;

    /* split: grid items (bounded, finite AABB) and special geoms */
    int32_t nitems = 0, nspecial = 0;
    for (int32_t i = 0; i < n; i++) {
        const col_geom* g = &geoms[i];
        grid_item* it = &c->items[nitems];
        inflated_box(g, pad, it->lo, it->hi);
        c->special_flag[i] = 0;
        if (g->unbounded || !finite_box(it->lo, it->hi)) {
            c->special_flag[i] = 1;
            c->special[nspecial++] = i;
            continue;
        }
        it->index = i;
        it->owner = g->owner;
        it->is_static = g->is_static;
        it->level = 0;
        nitems++;
    }
    nitems = assign_levels(c, nitems, &nspecial);
    int32_t ncells = 0;
    dvi_status st = grid_build(c, nitems, &ncells);
    if (st != DVI_OK) return st;

    size_t np = 0, npts = 0;
    if (nt > 1) {
        st = collide_parallel(c, nt, geoms, n, ncells, nspecial, pad, envelope, &npts);
        if (st != DVI_OK) return st;
        *points = c->points;
        *count = (int32_t)npts;
        return DVI_OK;
    }

    /* serial: pairs straight into c->pairs */
    pair_buf out = {c->pairs, c->pairs_cap, 0, &c->alloc};
    for (int32_t k = 0; k < ncells && st == DVI_OK; k++)
        if (!query_cell(c, k, &out)) st = DVI_ERR_NOMEM;
    for (int32_t s = 0; s < nspecial && st == DVI_OK; s++)
        if (!special_pairs(c, geoms, 0, n, c->special[s], pad, &out)) st = DVI_ERR_NOMEM;
    c->pairs = out.p;
    c->pairs_cap = out.cap;
    np = out.n;
    if (st == DVI_OK) st = sort_pairs(c, np, n);
    if (st != DVI_OK) return st;

    /* narrow phase, in pair order, straight into the output */
    for (size_t k = 0; k < np; k++) {
        if (npts > (size_t)INT32_MAX - NARROW_MAX) return DVI_ERR_NOMEM;
        if (npts + NARROW_MAX > c->points_cap && !RESERVE(c, points, npts + NARROW_MAX)) return DVI_ERR_NOMEM;
        npts += (size_t)narrow_pair(c, geoms, k, np, envelope, c->points + npts);
    }
    *points = c->points;
    *count = (int32_t)npts;
    return DVI_OK;
}
