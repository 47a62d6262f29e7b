/* A small, fast 64-bit string hash (8 bytes per step, multiply-xorshift mix).
 * Quality is enough for open addressing; it is not for adversarial input. */
#include <stdlib.h>
#include <string.h>
#include "opdb/core.h"

static inline uint64_t mix64(uint64_t x) {
    x ^= x >> 32;
    x *= 0xd6e8feb86659fd93ULL;
    x ^= x >> 32;
    x *= 0xd6e8feb86659fd93ULL;
    x ^= x >> 32;
    return x;
}

/* The last 1..7 bytes as one word, without a variable-length copy: with 8
 * or more bytes in all, the (overlapping) last 8; else two 4-byte or
 * single-byte reads. */
static inline uint64_t tail_word(const unsigned char *p, size_t n, size_t total) {
    uint64_t w;
    if (total >= 8) {
        memcpy(&w, p + n - 8, 8);
        return w;
    }
    if (n >= 4) {
        uint32_t lo, hi;
        memcpy(&lo, p, 4);
        memcpy(&hi, p + n - 4, 4);
        return (uint64_t)lo | (uint64_t)hi << 32;
    }
    w = p[0];
    w |= (uint64_t)p[n / 2] << 8;
    w |= (uint64_t)p[n - 1] << 16;
    return w;
}

uint64_t opdb_hash_bytes(const void *data, size_t n, uint64_t seed) {
    const unsigned char *p = data;
    const size_t total = n;
    uint64_t h = seed ^ (0x9e3779b97f4a7c15ULL * (n + 1));
    while (n >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        h = (h ^ w) * 0xbf58476d1ce4e5b9ULL;
        h ^= h >> 29;
        p += 8;
        n -= 8;
    }
    if (n) h = (h ^ tail_word(p, n, total)) * 0x94d049bb133111ebULL;
    return mix64(h);
}

static void place(opdb_hslot *slot, size_t nslots, opdb_hslot s) {
    size_t j = s.hash & (nslots - 1);
    while (slot[j].idx1) j = (j + 1) & (nslots - 1);
    slot[j] = s;
}

static void rehash(opdb_hindex *ix, size_t ns) {
    opdb_hslot *s = opdb_xcalloc(ns, sizeof *s);
    for (size_t i = 0; i < ix->nslots; i++)
        if (ix->slot[i].idx1) place(s, ns, ix->slot[i]);
    free(ix->slot);
    ix->slot = s;
    ix->nslots = ns;
}

void opdb_hindex_reserve(opdb_hindex *ix, size_t n) {
    size_t ns = ix->nslots ? ix->nslots : 64;
    while (n * 2 > ns) ns *= 2;
    if (ns > ix->nslots) rehash(ix, ns);
}

void opdb_hindex_add(opdb_hindex *ix, uint64_t hash, uint32_t idx) {
    if ((ix->n + 1) * 2 > ix->nslots) rehash(ix, ix->nslots ? ix->nslots * 2 : 64); /* load at most 1/2 */
    opdb_hslot s = {hash, idx + 1};
    place(ix->slot, ix->nslots, s);
    ix->n++;
}

void opdb_hindex_free(opdb_hindex *ix) {
    free(ix->slot);
    ix->slot = NULL;
    ix->nslots = ix->n = 0;
}
