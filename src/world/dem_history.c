/* dvicontact — the DEM contact history: an open-addressing table from
 * (shape_a, shape_b, feature) to a dense array of entries (see dem.h).
 *
 *   slots    power-of-two array of entry indices (−1 = empty), linear
 *            probing from hash(key); load ≤ 1/2, so a probe sequence is
 *            short (expected < 2 slots for a hit, < 2.5 for a miss).
 *   entries  dense array; removal moves the last entry into the hole and
 *            repoints its slot, so live entries stay contiguous.
 *   delete   backward-shift deletion (no tombstones): after emptying slot i
 *            the following run of the cluster is moved back when its home
 *            slot does not lie cyclically in (i, j]. The table never fills
 *            with dead slots, so a system whose contact count is steady never
 *            grows it (tested over 1e5 steps of a settled pile).
 * All three operations are O(1) expected. Growth doubles both arrays and
 * reinserts the entries in dense order (deterministic). The table is never
 * iterated into results: the step reads an entry by its key only.
 */
#include "dem.h"

#include <stdlib.h>
#include <string.h>

static uint64_t key_hash(const wld_dem_key* k)
{
    uint64_t z = (uint64_t)(uint32_t)k->shape_a << 32 | (uint32_t)k->shape_b;
    z ^= (uint64_t)k->feature * 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static bool key_equal(const wld_dem_key* a, const wld_dem_key* b)
{
    return a->shape_a == b->shape_a && a->shape_b == b->shape_b && a->feature == b->feature;
}

void wld_dem_history_init(wld_dem_history* h, const dvi_allocator* alloc)
{
    memset(h, 0, sizeof *h);
    h->alloc = *alloc;
}

void wld_dem_history_free(wld_dem_history* h)
{
    const dvi_allocator a = h->alloc;
    base_mem_free(&a, h->entries);
    base_mem_free(&a, h->slots);
    memset(h, 0, sizeof *h);
    h->alloc = a;
}

int32_t wld_dem_history_find(const wld_dem_history* h, const wld_dem_key* k)
{
    if (h->slot_count == 0) return -1;
    uint32_t mask = (uint32_t)h->slot_count - 1u;
    for (uint32_t i = (uint32_t)key_hash(k) & mask;; i = (i + 1u) & mask) {
        int32_t e = h->slots[i];
        if (e < 0) return -1;
        if (key_equal(&h->entries[e].key, k)) return e;
    }
}

/* Puts entry e (whose key is absent from the slots) into its slot. */
static void place(wld_dem_history* h, int32_t e)
{
    uint32_t mask = (uint32_t)h->slot_count - 1u;
    uint32_t i = (uint32_t)key_hash(&h->entries[e].key) & mask;
    while (h->slots[i] >= 0) i = (i + 1u) & mask;
    h->slots[i] = e;
}

dvi_status wld_dem_history_reserve(wld_dem_history* h, int32_t n)
{
    if (n < 0 || n > INT32_MAX / 4) return DVI_ERR_NOMEM;
    if (n > h->cap) {
        size_t c = (size_t)h->cap;
        void* p = h->entries;
        if (!base_mem_grow(&h->alloc, &p, &c, (size_t)n, sizeof *h->entries, 64)) return DVI_ERR_NOMEM;
        h->entries = p;
        h->cap = (int32_t)c;
    }
    int32_t need = 16;
    while (need < 2 * n) need *= 2;
    if (need > h->slot_count) {
        int32_t* s = base_mem_alloc(&h->alloc, (size_t)need * sizeof *s);
        if (!s) return DVI_ERR_NOMEM;
        base_mem_free(&h->alloc, h->slots);
        h->slots = s;
        h->slot_count = need;
        for (int32_t i = 0; i < need; i++) s[i] = -1;
        for (int32_t e = 0; e < h->count; e++) place(h, e);
    }
    return DVI_OK;
}

dvi_status wld_dem_history_insert(wld_dem_history* h, const wld_dem_key* k, int32_t* index)
{
    if (h->count + 1 > h->cap || 2 * (h->count + 1) > h->slot_count) {
        dvi_status st = wld_dem_history_reserve(h, h->count + 1);
        if (st != DVI_OK) return st;
    }
    int32_t e = h->count++;
    wld_dem_entry* en = &h->entries[e];
    memset(en, 0, sizeof *en);
    en->key = *k;
    place(h, e);
    *index = e;
    return DVI_OK;
}

/* Slot holding entry e. */
static uint32_t slot_of(const wld_dem_history* h, int32_t e)
{
    uint32_t mask = (uint32_t)h->slot_count - 1u;
    uint32_t i = (uint32_t)key_hash(&h->entries[e].key) & mask;
    while (h->slots[i] != e) i = (i + 1u) & mask;
    return i;
}

void wld_dem_history_remove(wld_dem_history* h, int32_t index)
{
    if (index < 0 || index >= h->count) return;
    uint32_t mask = (uint32_t)h->slot_count - 1u;
    /* backward-shift deletion of the slot of `index` */
    uint32_t i = slot_of(h, index);
    h->slots[i] = -1;
    for (uint32_t j = (i + 1u) & mask; h->slots[j] >= 0; j = (j + 1u) & mask) {
        uint32_t home = (uint32_t)key_hash(&h->entries[h->slots[j]].key) & mask;
        /* stays if home lies cyclically in (i, j] */
        bool stays = i <= j ? (i < home && home <= j) : (i < home || home <= j);
        if (stays) continue;
        h->slots[i] = h->slots[j];
        h->slots[j] = -1;
        i = j;
    }
    /* keep the entries dense: the last one moves into the hole */
    int32_t last = h->count - 1;
    if (index != last) {
        h->slots[slot_of(h, last)] = index;
        h->entries[index] = h->entries[last];
    }
    h->count--;
}

int32_t wld_dem_history_sweep(wld_dem_history* h, uint64_t stamp)
{
    int32_t removed = 0;
    for (int32_t e = 0; e < h->count;) {
        if (h->entries[e].stamp != stamp) {
            wld_dem_history_remove(h, e); /* the last entry moved into e: look at e again */
            removed++;
        } else {
            e++;
        }
    }
    return removed;
}
