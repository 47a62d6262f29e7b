/* Fast CSV tokenizer.  Each 64-byte block becomes bit masks of quotes,
 * commas and line ends; a prefix-XOR of the quote mask marks quoted regions,
 * so every structural byte is found without a per-byte state machine.
 *
 * The masks also prove the quoting is canonical: every opening quote must
 * follow a delimiter (a cell start) or a closing quote (`""` escape), and
 * every closing quote must precede a delimiter, a quote or the end.  Input
 * that breaks this (e.g. `ab"c`, which Python reads literally) is reported
 * as an anomaly and re-read by the exact tokenizer. */
#include <string.h>
#include "opdb/csv.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

static inline uint64_t prefix_xor(uint64_t x) {
    x ^= x << 1;
    x ^= x << 2;
    x ^= x << 4;
    x ^= x << 8;
    x ^= x << 16;
    x ^= x << 32;
    return x;
}

typedef struct {
    uint64_t quote, comma, eol;
} block_masks;

#if defined(__SSE2__)
static inline uint64_t movemask4(__m128i a, __m128i b, __m128i c, __m128i d) {
    return (uint64_t)(uint32_t)_mm_movemask_epi8(a) | ((uint64_t)(uint32_t)_mm_movemask_epi8(b) << 16) |
           ((uint64_t)(uint32_t)_mm_movemask_epi8(c) << 32) | ((uint64_t)(uint32_t)_mm_movemask_epi8(d) << 48);
}

static inline block_masks scan_block(const char *p) {
    const __m128i v0 = _mm_loadu_si128((const __m128i *)(const void *)p);
    const __m128i v1 = _mm_loadu_si128((const __m128i *)(const void *)(p + 16));
    const __m128i v2 = _mm_loadu_si128((const __m128i *)(const void *)(p + 32));
    const __m128i v3 = _mm_loadu_si128((const __m128i *)(const void *)(p + 48));
    const __m128i kq = _mm_set1_epi8('"'), kc = _mm_set1_epi8(','), kn = _mm_set1_epi8('\n'),
                  kr = _mm_set1_epi8('\r');
    block_masks m;
    m.quote = movemask4(_mm_cmpeq_epi8(v0, kq), _mm_cmpeq_epi8(v1, kq), _mm_cmpeq_epi8(v2, kq),
                        _mm_cmpeq_epi8(v3, kq));
    m.comma = movemask4(_mm_cmpeq_epi8(v0, kc), _mm_cmpeq_epi8(v1, kc), _mm_cmpeq_epi8(v2, kc),
                        _mm_cmpeq_epi8(v3, kc));
    m.eol = movemask4(_mm_or_si128(_mm_cmpeq_epi8(v0, kn), _mm_cmpeq_epi8(v0, kr)),
                      _mm_or_si128(_mm_cmpeq_epi8(v1, kn), _mm_cmpeq_epi8(v1, kr)),
                      _mm_or_si128(_mm_cmpeq_epi8(v2, kn), _mm_cmpeq_epi8(v2, kr)),
                      _mm_or_si128(_mm_cmpeq_epi8(v3, kn), _mm_cmpeq_epi8(v3, kr)));
    return m;
}
#else
static inline block_masks scan_block(const char *p) {
    block_masks m = {0, 0, 0};
    for (int i = 0; i < 64; i++) {
        uint64_t bit = 1ULL << i;
        char c = p[i];
        if (c == '"') m.quote |= bit;
        else if (c == ',') m.comma |= bit;
        else if (c == '\n' || c == '\r') m.eol |= bit;
    }
    return m;
}
#endif

void opdb_csv_fast_init(opdb_csv_fast *t, char *buf, size_t len) {
    memset(t, 0, sizeof *t);
    t->buf = buf;
    t->len = len;
    t->prev_dq = 1; /* the buffer starts at a record start */
}

static void load_block(opdb_csv_fast *t) {
    size_t avail = t->len - t->blk;
    const char *p = t->buf + t->blk;
    char tmp[64];
    uint64_t end_bit = 0;
    if (avail < 64) {
        memset(tmp, 0, sizeof tmp);
        memcpy(tmp, p, avail);
        p = tmp;
        end_bit = 1ULL << avail; /* the end of input acts as a delimiter */
    }
    block_masks m = scan_block(p);
    uint64_t dq = m.comma | m.eol | m.quote;
    if (t->pending_close && !(dq & 1)) t->anomaly = true;
    uint64_t inside = prefix_xor(m.quote) ^ t->inq;
    t->inq = (uint64_t)((int64_t)inside >> 63);
    uint64_t open = m.quote & inside;
    uint64_t close = m.quote & ~inside;
    if (open & ~((dq << 1) | t->prev_dq)) t->anomaly = true;
    if (close & ~((dq | end_bit) >> 1) & ~(1ULL << 63)) t->anomaly = true;
    t->pending_close = (int)(close >> 63);
    t->prev_dq = dq >> 63;
    t->bits = (m.comma | m.eol) & ~inside;
    t->cur = t->blk;
    t->blk += 64;
}

/* Decodes a canonical quoted cell in place: drop the outer quotes, `""` -> `"`. */
static uint32_t unquote_in_place(char *s, size_t n) {
    char *src = s + 1, *end = s + n - 1, *dst = s;
    while (src < end) {
        char *q = memchr(src, '"', (size_t)(end - src));
        if (!q) {
            size_t k = (size_t)(end - src);
            memmove(dst, src, k);
            dst += k;
            break;
        }
        size_t k = (size_t)(q - src) + 1;
        memmove(dst, src, k);
        dst += k;
        src = q + 2;
    }
    return (uint32_t)(dst - s);
}

static inline void emit(char *buf, size_t start, size_t end, opdb_field *fields, int max_fields, int *n) {
    if (*n < max_fields) {
        char *p = buf + start;
        size_t len = end - start;
        if (len && *p == '"') len = unquote_in_place(p, len);
        fields[*n].p = p;
        fields[*n].n = (uint32_t)len;
    }
    (*n)++;
}

int opdb_csv_fast_next(opdb_csv_fast *t, opdb_field *fields, int max_fields, int *nfields,
                       size_t *rec_off) {
    /* Locals, not t->..., so the compiler keeps them in registers across
     * the stores into fields[] (which may alias through char *). */
    char *const buf = t->buf;
    uint64_t bits = t->bits;
    size_t cur = t->cur, field_start = t->field_start;
    size_t rec_start = field_start;
    int n = 0, rc;
    for (;;) {
        while (bits == 0) {
            if (t->anomaly) {
                rc = -1;
                goto out;
            }
            if (t->blk >= t->len) {
                if (t->inq) {
                    t->anomaly = true;
                    rc = -1;
                    goto out;
                }
                if (field_start < t->len || n > 0) {
                    emit(buf, field_start, t->len, fields, max_fields, &n);
                    field_start = t->len;
                    rc = 1;
                    goto record;
                }
                rc = 0;
                goto out;
            }
            load_block(t);
            bits = t->bits;
            cur = t->cur;
        }
        size_t pos = cur + (size_t)__builtin_ctzll(bits);
        bits &= bits - 1;
        if (buf[pos] == ',') {
            emit(buf, field_start, pos, fields, max_fields, &n);
            field_start = pos + 1;
            continue;
        }
        if (n == 0 && pos == field_start) { /* blank line */
            field_start = rec_start = pos + 1;
            continue;
        }
        emit(buf, field_start, pos, fields, max_fields, &n);
        field_start = pos + 1;
        rc = 1;
        goto record;
    }
record:
    *nfields = n < max_fields ? n : max_fields;
    *rec_off = rec_start;
out:
    t->bits = bits;
    t->cur = cur;
    t->field_start = field_start;
    return rc;
}
