/* dvicontact — internal: little-endian integers in byte arrays, the
 * layout of every state blob and checkpoint (world_state.c, the model's
 * probe and health sections), independent of the host's byte order. */
#ifndef DVI_BYTES_LE_H
#define DVI_BYTES_LE_H

#include <stdint.h>

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

#endif /* DVI_BYTES_LE_H */
