/* dvicontact — internal: little-endian integers in byte arrays, the
 * layout of every state blob and checkpoint (world_state.c, the model's
 * probe and health sections), independent of the host's byte order. */
#ifndef DVI_BYTES_LE_H
#define DVI_BYTES_LE_H

#include <stdint.h>
#include <string.h>

static inline void le_put_u32(unsigned char* p, uint32_t v)
{
    for (int k = 0; k < 4; k++) p[k] = (unsigned char)(v >> (8 * k));
}

static inline void le_put_u64(unsigned char* p, uint64_t v)
{
    for (int k = 0; k < 8; k++) p[k] = (unsigned char)(v >> (8 * k));
}

static inline uint32_t le_get_u32(const unsigned char* p)
{
    uint32_t v = 0;
    for (int k = 0; k < 4; k++) v |= (uint32_t)p[k] << (8 * k);
    return v;
}

static inline uint64_t le_get_u64(const unsigned char* p)
{
    uint64_t v = 0;
    for (int k = 0; k < 8; k++) v |= (uint64_t)p[k] << (8 * k);
    return v;
}

/* A double's bits at *p, little-endian, and the cursor moved past them. */
static inline void le_put_f64_next(unsigned char** p, double x)
{
    uint64_t u;
    memcpy(&u, &x, 8);
    le_put_u64(*p, u);
    *p += 8;
}

static inline double le_get_f64_next(const unsigned char** p)
{
    uint64_t u = le_get_u64(*p);
    double x;
    memcpy(&x, &u, 8);
    *p += 8;
    return x;
}

#endif /* DVI_BYTES_LE_H */
