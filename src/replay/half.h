/* bf16 / fp16 <-> fp32 bit conversions (round to nearest even, NaN kept
 * quiet, subnormals exact), inline so the CPU kernels' conversion loops
 * vectorise; replay_dtype.c exports them as opdb_bf16_to_f32() etc. */
#ifndef OPDB_REPLAY_HALF_H
#define OPDB_REPLAY_HALF_H

#include <stdint.h>
#include <string.h>

static inline uint32_t opdb_h_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static inline float opdb_h_float(uint32_t u) {
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static inline float opdb_h_bf16_to_f32(uint16_t h) { return opdb_h_float((uint32_t)h << 16); }

static inline uint16_t opdb_h_f32_to_bf16(float f) {
    uint32_t u = opdb_h_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x0040u); /* quiet NaN */
    u += 0x7fffu + ((u >> 16) & 1u); /* round to nearest even; overflow carries into Inf */
    return (uint16_t)(u >> 16);
}

static inline float opdb_h_f16_to_f32(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
    if (e == 0) { /* zero or subnormal: m * 2^-24, exact in f32 */
        float v = (float)m * 0x1p-24f;
        return sign ? -v : v;
    }
    if (e == 31) return opdb_h_float(sign | 0x7f800000u | (m << 13));
    return opdb_h_float(sign | ((e + 112u) << 23) | (m << 13));
}

static inline uint16_t opdb_h_f32_to_f16(float f) {
    uint32_t x = opdb_h_bits(f);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
    x &= 0x7fffffffu;
    if (x >= 0x7f800000u) /* Inf stays Inf, NaN stays a quiet NaN */
        return (uint16_t)(sign | (x > 0x7f800000u ? 0x7e00u | ((x >> 13) & 0x3ffu) : 0x7c00u));
    if (x >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u); /* >= 65520 rounds to Inf */
    if (x < 0x38800000u) {                                   /* below 2^-14: subnormal */
        if (x < 0x33000000u) return sign;                     /* < 2^-25 rounds to 0 */
        uint32_t e = x >> 23, mant = (x & 0x7fffffu) | 0x800000u;
        uint32_t shift = 126u - e; /* value / 2^-24 = mant * 2^(e-126) */
        uint32_t r = mant >> shift, rem = mant & ((1u << shift) - 1u), half = 1u << (shift - 1u);
        if (rem > half || (rem == half && (r & 1u))) r++;
        return (uint16_t)(sign | r);
    }
    uint32_t h = (x - 0x38000000u) >> 13, rem = x & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) h++;
    return (uint16_t)(sign | h);
}

#endif
