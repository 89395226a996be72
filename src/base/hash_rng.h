/* dvicontact — internal: the library's one copy of its small deterministic
 * helpers: the splitmix64 generator (Steele, Lea & Flood 2014; the numbers
 * of a test vector, a jittered lattice) and the FNV-1a hash (checksums and
 * fingerprints of saved states). */
#ifndef DVI_HASH_RNG_H
#define DVI_HASH_RNG_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* The next number of the splitmix64 sequence of *state. */
static inline uint64_t base_splitmix64(uint64_t* state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Uniform in [0, 1): the top 53 bits of the next number. */
static inline double base_uniform01(uint64_t* state) { return (double)(base_splitmix64(state) >> 11) * 0x1.0p-53; }

/* Uniform in [−1, 1). */
static inline double base_uniform_sym(uint64_t* state) { return 2.0 * base_uniform01(state) - 1.0; }

/* FNV-1a over n bytes, continuing from h (start from DVI_FNV_OFFSET). */
#define DVI_FNV_OFFSET 0xcbf29ce484222325ull
#define DVI_FNV_PRIME 0x100000001b3ull
static inline uint64_t base_fnv1a(uint64_t h, const void* data, size_t n)
{
    const unsigned char* p = (const unsigned char*)data;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= DVI_FNV_PRIME;
    }
    return h;
}

/* FNV-1a over n doubles, each as its IEEE-754 bits in little-endian order
 * (the same hash on any host), continuing from h. */
static inline uint64_t base_fnv1a_f64(uint64_t h, const double* x, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t u;
        memcpy(&u, &x[i], sizeof u);
        for (int k = 0; k < 8; k++) {
            h ^= (unsigned char)(u >> (8 * k));
            h *= DVI_FNV_PRIME;
        }
    }
    return h;
}

#endif /* DVI_HASH_RNG_H */
