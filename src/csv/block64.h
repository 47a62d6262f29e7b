/* 64 bytes at a time with SSE2, for the scanners that turn a block of text
 * into bit masks (one bit per byte): the CSV tokenizer (tokenize_fast.c)
 * and the query table's record scan (db/table_scan.c). */
#ifndef OPDB_CSV_BLOCK64_H
#define OPDB_CSV_BLOCK64_H

#include <stdint.h>

/* bit i set when an odd number of bits 0..i of x are: the bytes inside
 * quotes, from the mask of the quotes */
static inline uint64_t opdb_prefix_xor(uint64_t x) {
    x ^= x << 1;
    x ^= x << 2;
    x ^= x << 4;
    x ^= x << 8;
    x ^= x << 16;
    x ^= x << 32;
    return x;
}

#if defined(__SSE2__)
#include <emmintrin.h>

/* a 64-byte block as four 16-byte vectors */
typedef struct opdb_block64 {
    __m128i v[4];
} opdb_block64;

static inline opdb_block64 opdb_block64_load(const char *p) {
    opdb_block64 b;
    for (int i = 0; i < 4; i++) b.v[i] = _mm_loadu_si128((const __m128i *)(const void *)(p + 16 * i));
    return b;
}

/* the byte masks of four 16-byte vectors as one 64-bit mask, a first */
static inline uint64_t opdb_movemask4(__m128i a, __m128i b, __m128i c, __m128i d) {
    return (uint64_t)(uint32_t)_mm_movemask_epi8(a) | ((uint64_t)(uint32_t)_mm_movemask_epi8(b) << 16) |
           ((uint64_t)(uint32_t)_mm_movemask_epi8(c) << 32) | ((uint64_t)(uint32_t)_mm_movemask_epi8(d) << 48);
}

/* the bytes of the block equal to every byte of k */
static inline uint64_t opdb_block64_eq(const opdb_block64 *b, __m128i k) {
    return opdb_movemask4(_mm_cmpeq_epi8(b->v[0], k), _mm_cmpeq_epi8(b->v[1], k), _mm_cmpeq_epi8(b->v[2], k),
                          _mm_cmpeq_epi8(b->v[3], k));
}
#endif

#endif
