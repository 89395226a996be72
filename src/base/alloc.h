/* dvicontact — the allocator hook (dvi_allocator, base.h) as the layers
 * call it: base_mem_alloc, _calloc, _realloc, _free take the object's copy
 * of its allocator, or NULL, and fall back on libc when its functions are
 * unset. Header-only so that the solver library and the full library share
 * one definition. */
#ifndef DVI_ALLOC_H
#define DVI_ALLOC_H

#include "dvi/base.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Either all three functions set or none. */
static inline bool base_allocator_valid(const dvi_allocator* a)
{
    return (!a->alloc && !a->realloc && !a->free) || (a->alloc && a->realloc && a->free);
}

static inline void* base_mem_alloc(const dvi_allocator* a, size_t size)
{
    if (a && a->alloc) return a->alloc(a->user, size);
    return malloc(size);
}

/* n × size bytes, zeroed; NULL also when n × size overflows. */
static inline void* base_mem_calloc(const dvi_allocator* a, size_t n, size_t size)
{
    if (!(a && a->alloc)) return calloc(n, size);
    if (size != 0 && n > SIZE_MAX / size) return NULL;
    void* p = a->alloc(a->user, n * size);
    if (p) memset(p, 0, n * size);
    return p;
}

static inline void* base_mem_realloc(const dvi_allocator* a, void* ptr, size_t size)
{
    if (a && a->realloc) return a->realloc(a->user, ptr, size);
    return realloc(ptr, size);
}

/* Frees each of the n libc buffers p[0..n) (NULL ones too). */
static inline void base_free_each(void* const* p, size_t n)
{
    for (size_t k = 0; k < n; k++) free(p[k]);
}
/* base_free_each over its arguments: BASE_FREE_ALL(o->a, o->b, …). */
#define BASE_FREE_ALL(...)                                                                                           \
    base_free_each((void* const[]){__VA_ARGS__}, sizeof((void* const[]){__VA_ARGS__}) / sizeof(void*))

static inline void base_mem_free(const dvi_allocator* a, void* ptr)
{
    if (!ptr) return;
    if (a && a->free) a->free(a->user, ptr);
    else free(ptr);
}
/* base_mem_free of each of the n buffers p[0..n) from allocator a. */
static inline void base_mem_free_each(const dvi_allocator* a, void* const* p, size_t n)
{
    for (size_t k = 0; k < n; k++) base_mem_free(a, p[k]);
}
/* base_mem_free_each over its arguments: BASE_MEM_FREE_ALL(a, o->x, o->y, …). */
#define BASE_MEM_FREE_ALL(a, ...)                                                                                    \
    base_mem_free_each((a), (void* const[]){__VA_ARGS__}, sizeof((void* const[]){__VA_ARGS__}) / sizeof(void*))

/* Grows *p, an array of *cap elements of elem bytes, to hold n (contents
 * kept; a NULL *p is allocated even for n = 0): the capacity doubles from
 * `first`. Returns false, *p and *cap unchanged, when out of memory or
 * when the size would overflow. The one array grower of the layers. */
static inline bool base_mem_grow(const dvi_allocator* a, void** p, size_t* cap, size_t n, size_t elem, size_t first)
{
    if (n <= *cap && *p) return true;
    size_t c = *cap > 0 ? *cap : first;
    while (c < n) {
        if (c > SIZE_MAX / 2 / elem) return false;
        c *= 2;
    }
    void* q = base_mem_realloc(a, *p, c * elem);
    if (!q) return false;
    *p = q;
    *cap = c;
    return true;
}

/* Arrays carved out of one block, each aligned to `align` (a power of
 * two): with base NULL only measures (off: the bytes needed from an
 * aligned start; overflow: too large for size_t). */
typedef struct base_carver {
    unsigned char* base; /* NULL: measure only */
    size_t off;
    bool overflow;
} base_carver;

static inline void* base_carve(base_carver* c, size_t count, size_t elem, size_t align)
{
    size_t off = (c->off + (align - 1u)) & ~(align - 1u);
    if (off < c->off || (elem != 0 && count > (SIZE_MAX - off) / elem)) {
        c->overflow = true;
        return NULL;
    }
    c->off = off + count * elem;
    return c->base ? (void*)(c->base + off) : NULL;
}

#endif /* DVI_ALLOC_H */
