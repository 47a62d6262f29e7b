/* Up to 16 bytes of a string into an SSE register without reading past its
 * end (a cell can be the last bytes of a buffer). */
#ifndef OPDB_CORE_LOAD_TAIL_H
#define OPDB_CORE_LOAD_TAIL_H

#if defined(__SSE2__)
#include <emmintrin.h>
#include <stdint.h>
#include <string.h>

/* Bytes p[0..len) (0 < len <= 16) in the low lanes, zeros above, read in
 * fixed-size pieces that stay inside the string (x86 is little-endian). */
static inline __m128i opdb_load_tail16(const char *p, size_t len) {
    if (len == 16) return _mm_loadu_si128((const __m128i *)(const void *)p);
    uint64_t lo = 0, hi = 0;
    if (len >= 8) {
        memcpy(&lo, p, 8);
        if (len > 8) {
            uint64_t t;
            memcpy(&t, p + len - 8, 8);
            hi = t >> (8 * (16 - len));
        }
    } else if (len >= 4) {
        uint32_t a, b;
        memcpy(&a, p, 4);
        memcpy(&b, p + len - 4, 4);
        lo = a | (((uint64_t)b >> (8 * (8 - len))) << 32);
    } else {
        const unsigned char *u = (const unsigned char *)p;
        lo = u[0] | (len > 1 ? (uint64_t)u[1] << 8 : 0) | (len > 2 ? (uint64_t)u[2] << 16 : 0);
    }
    return _mm_set_epi64x((long long)hi, (long long)lo);
}
#endif

#endif
