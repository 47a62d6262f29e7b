/* Python's random module, to the bit: MT19937 with init_by_array seeding,
 * getrandbits, _randbelow and sample()'s pool/set algorithms (docs/GRID.md §8). */
#include <math.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include "opdb/core.h"
#include "opdb/grid.h"

#define MT_N 624
#define MT_M 397

static void init_genrand(opdb_pyrandom *r, uint32_t s) {
    r->mt[0] = s;
    for (int i = 1; i < MT_N; i++) r->mt[i] = 1812433253u * (r->mt[i - 1] ^ (r->mt[i - 1] >> 30)) + (uint32_t)i;
    r->mti = MT_N;
}

static void init_by_array(opdb_pyrandom *r, const uint32_t *key, size_t klen) {
    init_genrand(r, 19650218u);
    size_t i = 1, j = 0;
    for (size_t k = MT_N > klen ? MT_N : klen; k; k--) {
        r->mt[i] = (r->mt[i] ^ ((r->mt[i - 1] ^ (r->mt[i - 1] >> 30)) * 1664525u)) + key[j] + (uint32_t)j;
        i++, j++;
        if (i >= MT_N) r->mt[0] = r->mt[MT_N - 1], i = 1;
        if (j >= klen) j = 0;
    }
    for (size_t k = MT_N - 1; k; k--) {
        r->mt[i] = (r->mt[i] ^ ((r->mt[i - 1] ^ (r->mt[i - 1] >> 30)) * 1566083941u)) - (uint32_t)i;
        i++;
        if (i >= MT_N) r->mt[0] = r->mt[MT_N - 1], i = 1;
    }
    r->mt[0] = 0x80000000u;
    r->mti = MT_N;
}

void opdb_pyrandom_seed(opdb_pyrandom *r, long long seed) {
    unsigned long long a = seed < 0 ? 0ull - (unsigned long long)seed : (unsigned long long)seed;
    uint32_t key[2] = {(uint32_t)a, (uint32_t)(a >> 32)};
    init_by_array(r, key, key[1] ? 2 : 1); /* one word 0 for seed 0 */
}

void opdb_pyrandom_seed_entropy(opdb_pyrandom *r) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    opdb_pyrandom_seed(r, (long long)(ts.tv_nsec ^ (ts.tv_sec << 20) ^ ((long long)getpid() << 40)));
}

static uint32_t genrand(opdb_pyrandom *r) {
    static const uint32_t mag[2] = {0u, 0x9908b0dfu};
    if (r->mti >= MT_N) {
        int k;
        uint32_t y;
        for (k = 0; k < MT_N - MT_M; k++) {
            y = (r->mt[k] & 0x80000000u) | (r->mt[k + 1] & 0x7fffffffu);
            r->mt[k] = r->mt[k + MT_M] ^ (y >> 1) ^ mag[y & 1u];
        }
        for (; k < MT_N - 1; k++) {
            y = (r->mt[k] & 0x80000000u) | (r->mt[k + 1] & 0x7fffffffu);
            r->mt[k] = r->mt[k + (MT_M - MT_N)] ^ (y >> 1) ^ mag[y & 1u];
        }
        y = (r->mt[MT_N - 1] & 0x80000000u) | (r->mt[0] & 0x7fffffffu);
        r->mt[MT_N - 1] = r->mt[MT_M - 1] ^ (y >> 1) ^ mag[y & 1u];
        r->mti = 0;
    }
    uint32_t y = r->mt[r->mti++];
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    y ^= y >> 18;
    return y;
}

uint32_t opdb_pyrandom_getrandbits(opdb_pyrandom *r, int k) { return genrand(r) >> (32 - k); }

uint32_t opdb_pyrandom_randbelow(opdb_pyrandom *r, uint32_t n) {
    int k = 0;
    while (k < 32 && (n >> k)) k++;
    uint32_t x = opdb_pyrandom_getrandbits(r, k);
    while (x >= n) x = opdb_pyrandom_getrandbits(r, k);
    return x;
}

void opdb_pyrandom_sample(opdb_pyrandom *r, size_t n, size_t k, size_t *out) {
    size_t setsize = 21;
    if (k > 5) setsize += (size_t)pow(4.0, ceil(log((double)(k * 3)) / log(4.0)));
    if (n <= setsize) {
        size_t *pool = opdb_xmalloc((n ? n : 1) * sizeof *pool);
        for (size_t i = 0; i < n; i++) pool[i] = i;
        for (size_t i = 0; i < k; i++) {
            size_t j = opdb_pyrandom_randbelow(r, (uint32_t)(n - i));
            out[i] = pool[j];
            pool[j] = pool[n - i - 1];
        }
        free(pool);
        return;
    }
    /* selected set: a bitmap over range(n) */
    unsigned char *sel = opdb_xcalloc(n / 8 + 1, 1);
    for (size_t i = 0; i < k; i++) {
        size_t j = opdb_pyrandom_randbelow(r, (uint32_t)n);
        while (sel[j >> 3] & (1u << (j & 7))) j = opdb_pyrandom_randbelow(r, (uint32_t)n);
        sel[j >> 3] |= (unsigned char)(1u << (j & 7));
        out[i] = j;
    }
    free(sel);
}
