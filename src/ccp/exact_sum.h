/* dvicontact — internal: exact sums of doubles, whatever the order of the terms.
 *
 * A sum of doubles rounds at every addition, so its bits depend on the order
 * of the terms; a problem split over processes (dvi_ccp_shared) holds its
 * terms in another order on every split. ccp_xsum holds a sum exactly, as a
 * fixed-point number in base 2^32 from 2^-1074 (the smallest subnormal) up:
 * a term's 53-bit significand lands in three digits. Integer additions are
 * associative, so the digits do not depend on the order of the terms, on the
 * threads or on how the terms were spread over processes (the digits of
 * several accumulators are summed as integers, then carried), and the one
 * rounding at the end (ccp_xsum_value) gives the same bits every time.
 * Non-finite terms are counted apart: any NaN, or +inf with -inf, gives NaN.
 * Cost: about 3 ns a term (the measured factor in docs/scale.md).
 */
#ifndef DVI_EXACT_SUM_H
#define DVI_EXACT_SUM_H

#include <math.h>
#include <stdint.h>
#include <string.h>

/* digit i weighs 2^(32 i − 1074); a term's top digit is at most 65, a carry
 * goes one further */
#define CCP_XSUM_DIGITS 67
#define CCP_XSUM_WORDS (CCP_XSUM_DIGITS + 3) /* then the counts of NaN, +inf and -inf */

typedef struct ccp_xsum {
    int64_t d[CCP_XSUM_WORDS];
    int32_t adds; /* additions since the last carry (a digit takes 2^31 of them) */
} ccp_xsum;

static inline void ccp_xsum_init(ccp_xsum* s)
{
    memset(s, 0, sizeof *s);
}

/* Every digit but the top one into [0, 2^32); the value is unchanged. */
static inline void ccp_xsum_carry(ccp_xsum* s)
{
    for (int i = 0; i < CCP_XSUM_DIGITS - 1; i++) {
        const int64_t low = (int64_t)((uint64_t)s->d[i] & 0xffffffffu);
        const int64_t c = (s->d[i] - low) / 4294967296LL; /* exact */
        s->d[i] = low;
        s->d[i + 1] += c;
    }
    s->adds = 0;
}

static inline void ccp_xsum_add(ccp_xsum* s, double x)
{
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    const int e = (int)((u >> 52) & 0x7ff);
    uint64_t mant = u & ((1ull << 52) - 1);
    if (e == 0x7ff) {
        s->d[CCP_XSUM_DIGITS + (mant ? 0 : (u >> 63) ? 2 : 1)]++;
        return;
    }
    int p = 0; /* x = mant · 2^(p − 1074) */
    if (e) {
        mant |= 1ull << 52;
        p = e - 1;
    }
    if (!mant) return;
    const unsigned __int128 v = (unsigned __int128)mant << (p & 31);
    const int64_t neg = -(int64_t)(u >> 63); /* 0 or −1: the sign without a branch */
    const int64_t d0 = (int64_t)(uint64_t)(v & 0xffffffffu), d1 = (int64_t)(uint64_t)((v >> 32) & 0xffffffffu),
                  d2 = (int64_t)(uint64_t)(v >> 64);
    int64_t* d = s->d + (p >> 5);
    d[0] += (d0 ^ neg) - neg;
    d[1] += (d1 ^ neg) - neg;
    d[2] += (d2 ^ neg) - neg;
    if (++s->adds == (1 << 30)) ccp_xsum_carry(s);
}

/* s += o (both stay valid sums). */
static inline void ccp_xsum_merge(ccp_xsum* s, ccp_xsum* o)
{
    ccp_xsum_carry(s);
    ccp_xsum_carry(o);
    for (int i = 0; i < CCP_XSUM_WORDS; i++) s->d[i] += o->d[i];
    ccp_xsum_carry(s);
}

/* The sum, rounded from its top three digits (the same bits for the same
 * digits). */
static inline double ccp_xsum_value(ccp_xsum* s)
{
    const int64_t* sp = s->d + CCP_XSUM_DIGITS;
    if (sp[0] > 0 || (sp[1] > 0 && sp[2] > 0)) return NAN;
    if (sp[1] > 0) return INFINITY;
    if (sp[2] > 0) return -INFINITY;
    ccp_xsum_carry(s);
    int64_t d[CCP_XSUM_DIGITS];
    memcpy(d, s->d, sizeof d);
    double sign = 1.0;
    if (d[CCP_XSUM_DIGITS - 1] < 0) { /* negative: take the digits of −sum */
        sign = -1.0;
        for (int i = 0; i < CCP_XSUM_DIGITS; i++) d[i] = -d[i];
        for (int i = 0; i < CCP_XSUM_DIGITS - 1; i++) {
            const int64_t low = (int64_t)((uint64_t)d[i] & 0xffffffffu);
            d[i + 1] += (d[i] - low) / 4294967296LL;
            d[i] = low;
        }
    }
    int h = CCP_XSUM_DIGITS - 1;
    while (h >= 0 && d[h] == 0) h--;
    if (h < 0) return 0.0;
    double v = 0.0;
    for (int i = h - 2; i <= h; i++)
        if (i >= 0) v += ldexp((double)d[i], 32 * i - 1074);
    return sign * v;
}

#endif
