/* Fast CSV tokenizer.  Each 64-byte block becomes bit masks of quotes,
 * commas and line ends; a prefix-XOR of the quote mask marks quoted regions,
 * so every structural byte is found without a per-byte state machine.
 *
 * The masks also prove the quoting is canonical: every opening quote must
 * follow a delimiter (a cell start) or a closing quote (`""` escape), and
 * every closing quote must precede a delimiter, a quote or the end.  Input
 * that breaks this (e.g. `ab"c`, which Python reads literally) is reported
 * as an anomaly and re-read by the exact tokenizer. */
#include <stdint.h>
#include <string.h>
#include "csv/block64.h"
#include "opdb/csv.h"

#if defined(__x86_64__) && defined(__GNUC__)
#define OPDB_FAST_AVX2 1
#include <immintrin.h>
#else
#define OPDB_FAST_AVX2 0
#endif

typedef struct {
    uint64_t quote, comma, eol;
} block_masks;

#if defined(__SSE2__)
static inline block_masks scan_block(const char *p) {
    const opdb_block64 b = opdb_block64_load(p);
    const __m128i kn = _mm_set1_epi8('\n'), kr = _mm_set1_epi8('\r');
    block_masks m;
    m.quote = opdb_block64_eq(&b, _mm_set1_epi8('"'));
    m.comma = opdb_block64_eq(&b, _mm_set1_epi8(','));
    m.eol = opdb_movemask4(_mm_or_si128(_mm_cmpeq_epi8(b.v[0], kn), _mm_cmpeq_epi8(b.v[0], kr)),
                           _mm_or_si128(_mm_cmpeq_epi8(b.v[1], kn), _mm_cmpeq_epi8(b.v[1], kr)),
                           _mm_or_si128(_mm_cmpeq_epi8(b.v[2], kn), _mm_cmpeq_epi8(b.v[2], kr)),
                           _mm_or_si128(_mm_cmpeq_epi8(b.v[3], kn), _mm_cmpeq_epi8(b.v[3], kr)));
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
#if OPDB_FAST_AVX2
    t->avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("pclmul") &&
              __builtin_cpu_supports("popcnt");
#endif
    t->buf = buf;
    t->len = len;
    t->prev_dq = 1; /* the buffer starts at a record start */
}

/* The block at t->blk: in place, or padded with NULs near the end of the
 * input, where the end acts as a delimiter (*end_bit). */
static inline const char *block_at(const opdb_csv_fast *t, char tmp[64], uint64_t *end_bit) {
    size_t avail = t->len - t->blk;
    const char *p = t->buf + t->blk;
    *end_bit = 0;
    if (avail < 64) {
        memset(tmp, 0, 64);
        memcpy(tmp, p, avail);
        p = tmp;
        *end_bit = 1ULL << avail;
    }
    return p;
}

/* Quote state, anomaly checks and the structural bits of one block, given
 * its masks and the prefix-XOR of its quote mask. */
static inline __attribute__((always_inline)) void take_block(opdb_csv_fast *t, block_masks m, uint64_t quote_pxor,
                                                             uint64_t end_bit) {
    uint64_t dq = m.comma | m.eol | m.quote;
    if (t->pending_close && !(dq & 1)) t->anomaly = true;
    uint64_t inside = quote_pxor ^ t->inq;
    t->inq = (uint64_t)((int64_t)inside >> 63);
    uint64_t open = m.quote & inside;
    uint64_t close = m.quote & ~inside;
    if (open & ~((dq << 1) | t->prev_dq)) t->anomaly = true;
    if (close & ~((dq | end_bit) >> 1) & ~(1ULL << 63)) t->anomaly = true;
    t->pending_close = (int)(close >> 63);
    t->prev_dq = dq >> 63;
    t->bits = (m.comma | m.eol) & ~inside;
    t->eol = m.eol & ~inside;
    t->cur = t->blk;
    t->blk += 64;
}

static void load_block_portable(opdb_csv_fast *t) {
    char tmp[64];
    uint64_t end_bit;
    block_masks m = scan_block(block_at(t, tmp, &end_bit));
    take_block(t, m, opdb_prefix_xor(m.quote), end_bit);
}

#if OPDB_FAST_AVX2
/* The same with 32-byte compares and a carry-less multiply for the prefix
 * XOR (as simdjson does), on CPUs that have them. */
__attribute__((target("avx2,pclmul"))) static void load_block_avx2(opdb_csv_fast *t) {
    char tmp[64];
    uint64_t end_bit;
    const char *p = block_at(t, tmp, &end_bit);
    const __m256i lo = _mm256_loadu_si256((const __m256i *)(const void *)p);
    const __m256i hi = _mm256_loadu_si256((const __m256i *)(const void *)(p + 32));
    const __m256i kq = _mm256_set1_epi8('"'), kc = _mm256_set1_epi8(','), kn = _mm256_set1_epi8('\n'),
                  kr = _mm256_set1_epi8('\r');
#define MASK64(expr_lo, expr_hi) \
    ((uint64_t)(uint32_t)_mm256_movemask_epi8(expr_lo) | ((uint64_t)(uint32_t)_mm256_movemask_epi8(expr_hi) << 32))
    block_masks m;
    m.quote = MASK64(_mm256_cmpeq_epi8(lo, kq), _mm256_cmpeq_epi8(hi, kq));
    m.comma = MASK64(_mm256_cmpeq_epi8(lo, kc), _mm256_cmpeq_epi8(hi, kc));
    m.eol = MASK64(_mm256_or_si256(_mm256_cmpeq_epi8(lo, kn), _mm256_cmpeq_epi8(lo, kr)),
                   _mm256_or_si256(_mm256_cmpeq_epi8(hi, kn), _mm256_cmpeq_epi8(hi, kr)));
#undef MASK64
    uint64_t pxor = (uint64_t)_mm_cvtsi128_si64(
        _mm_clmulepi64_si128(_mm_set_epi64x(0, (long long)m.quote), _mm_set1_epi8((char)0xFF), 0));
    take_block(t, m, pxor, end_bit);
}
#endif

static void load_block(opdb_csv_fast *t) {
#if OPDB_FAST_AVX2
    if (t->avx2) {
        load_block_avx2(t);
        return;
    }
#endif
    load_block_portable(t);
}

/* The next block's structural bits: 1; 0 at the end of the input; -1 on an
 * anomaly (seen in a block already loaded, or an unterminated quote). */
static inline int next_block(opdb_csv_fast *t, uint64_t *bits, size_t *cur) {
    if (t->anomaly) return -1;
    if (t->blk >= t->len) {
        if (!t->inq) return 0;
        t->anomaly = true;
        return -1;
    }
    load_block(t);
    *bits = t->bits;
    *cur = t->cur;
    return 1;
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

/* A canonical quoted cell's value: where it can be read without moving
 * bytes, the span inside the quotes ("x" -> x, and """x""" -> "x", the form
 * profilers quote shapes in, when x has no quote); else decoded in place. */
static inline bool quoted_view(const char *s, size_t n, const char **value, size_t *len) {
    const char *in = s + 1;
    size_t m = n - 2;
    const char *q = memchr(in, '"', m);
    if (!q) {
        *value = in;
        *len = m;
        return true;
    }
    if (q == in && m >= 4 && in[1] == '"' && in[m - 2] == '"' && in[m - 1] == '"' && !memchr(in + 2, '"', m - 4)) {
        *value = s + 2;
        *len = n - 4;
        return true;
    }
    return false;
}

bool opdb_csv_quoted_view(const char *raw, size_t n, const char **value, size_t *len) {
    return n >= 2 && raw[0] == '"' && raw[n - 1] == '"' && quoted_view(raw, n, value, len);
}

static inline opdb_field unquote_cell(char *s, size_t n) {
    const char *v;
    size_t len;
    if (quoted_view(s, n, &v, &len)) return (opdb_field){(char *)v, (uint32_t)len};
    return (opdb_field){s, unquote_in_place(s, n)};
}

static inline void emit(char *buf, size_t start, size_t end, opdb_field *fields, int max_fields, int *n) {
    if (*n < max_fields) {
        char *p = buf + start;
        size_t len = end - start;
        fields[*n] = len && *p == '"' ? unquote_cell(p, len) : (opdb_field){p, (uint32_t)len};
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
            int more = next_block(t, &bits, &cur);
            if (more < 0) {
                rc = -1;
                goto out;
            }
            if (!more) {
                if (field_start < t->len || n > 0) {
                    emit(buf, field_start, t->len, fields, max_fields, &n);
                    field_start = t->len;
                    rc = 1;
                    goto record;
                }
                rc = 0;
                goto out;
            }
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

size_t opdb_csv_unquote(const char *raw, size_t n, char *out) {
    if (n < 2 || raw[0] != '"') {
        memcpy(out, raw, n);
        return n;
    }
    size_t o = 0;
    for (size_t i = 1; i + 1 < n; i++) {
        out[o++] = raw[i];
        if (raw[i] == '"') i++; /* canonical: a quote inside is doubled */
    }
    return o;
}

/* Set bits of x (baseline x86-64 has no popcnt instruction). */
static inline int popcount64(uint64_t x) {
    x = x - ((x >> 1) & 0x5555555555555555ULL);
    x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
    x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0FULL;
    return (int)((x * 0x0101010101010101ULL) >> 56);
}

#if OPDB_FAST_AVX2
/* From p: the offset of the first '"', '\n' or '\r' (len if none), and
 * the commas before it. */
__attribute__((target("avx2,popcnt"))) static size_t find_quote_or_eol_avx2(const char *p, size_t len, int *commas) {
    const __m256i kq = _mm256_set1_epi8('"'), kc = _mm256_set1_epi8(','), kn = _mm256_set1_epi8('\n'),
                  kr = _mm256_set1_epi8('\r');
    int c = 0;
    size_t i = 0;
    for (; i + 32 <= len; i += 32) {
        const __m256i v = _mm256_loadu_si256((const __m256i *)(const void *)(p + i));
        uint32_t stop = (uint32_t)_mm256_movemask_epi8(_mm256_or_si256(
            _mm256_cmpeq_epi8(v, kq), _mm256_or_si256(_mm256_cmpeq_epi8(v, kn), _mm256_cmpeq_epi8(v, kr))));
        uint32_t comma = (uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(v, kc));
        if (stop) {
            uint32_t before = (stop & (0u - stop)) - 1;
            *commas = c + __builtin_popcount(comma & before);
            return i + (size_t)__builtin_ctz(stop);
        }
        c += __builtin_popcount(comma);
    }
    for (; i < len; i++) {
        char ch = p[i];
        if (ch == '"' || ch == '\n' || ch == '\r') break;
        c += ch == ',';
    }
    *commas = c;
    return i;
}
#endif

/* The rest of a skimmed record, past the current block, when no quote comes
 * before its end: no quote means no quoting state and nothing the block scan
 * could find wrong, so a search for the first quote or line end (and a count
 * of the commas before it) stands in for the block scan.  Adds the cells to
 * *n and sets *eol to the record's terminator (the caller restarts the block
 * scan after it).  False (nothing changed) when a quote, or the end of the input, comes
 * first, or the scan is inside quotes: the block scan goes on as before. */
static inline bool skip_ahead(opdb_csv_fast *t, int *n, size_t *eol) {
#if OPDB_FAST_AVX2
    if (!t->avx2 || t->inq || t->pending_close || t->anomaly || t->blk >= t->len) return false;
    int commas;
    size_t k = find_quote_or_eol_avx2(t->buf + t->blk, t->len - t->blk, &commas);
    if (t->blk + k >= t->len || t->buf[t->blk + k] == '"') return false;
    *n += commas + 1;
    *eol = t->blk + k;
    t->bits = 0;
    t->eol = 0;
    t->prev_dq = 1; /* a line end: a quote may open the next cell */
    return true;
#else
    (void)t;
    (void)n;
    (void)eol;
    return false;
#endif
}

int opdb_csv_fast_skim(opdb_csv_fast *t, opdb_field *fields, int keep, int *nfields, size_t *rec_off,
                       bool *quote_after) {
    char *const buf = t->buf;
    uint64_t bits = t->bits;
    size_t cur = t->cur, field_start = t->field_start;
    size_t rec_start = field_start, skip_from = 0, quote_from = SIZE_MAX;
    int n = 0, rc;
    bool skipping = false;
    for (;;) {
        while (bits == 0) {
            int more = next_block(t, &bits, &cur);
            if (more < 0) {
                rc = -1;
                goto out;
            }
            if (!more) {
                if (field_start < t->len || n > 0) {
                    if (n < keep) fields[n] = (opdb_field){buf + field_start, (uint32_t)(t->len - field_start)};
                    n++;
                    field_start = t->len;
                    rc = 1;
                    goto record;
                }
                rc = 0;
                goto out;
            }
        }
        if (skipping) { /* count the cells up to the record's end */
            uint64_t e = bits & t->eol;
            if (!e) {
                n += popcount64(bits);
                bits = 0;
                size_t eol;
                if (skip_ahead(t, &n, &eol)) {
                    quote_from = t->blk; /* nothing to look for after it */
                    field_start = eol + 1;
                    t->blk = cur = field_start;
                    rc = 1;
                    goto record;
                }
                continue;
            }
            uint64_t first = e & (0 - e);
            n += popcount64(bits & (first - 1)) + 1;
            bits &= ~((first - 1) | first);
            field_start = cur + (size_t)__builtin_ctzll(first) + 1;
            rc = 1;
            goto record;
        }
        size_t pos = cur + (size_t)__builtin_ctzll(bits);
        bits &= bits - 1;
        bool comma = buf[pos] == ',';
        if (!comma && n == 0 && pos == field_start) { /* blank line */
            field_start = rec_start = pos + 1;
            continue;
        }
        fields[n++] = (opdb_field){buf + field_start, (uint32_t)(pos - field_start)};
        field_start = pos + 1;
        if (!comma) {
            rc = 1;
            goto record;
        }
        if (n == keep) {
            skipping = true;
            skip_from = field_start;
        }
    }
record:
    *nfields = n;
    *rec_off = rec_start;
    if (quote_from > field_start) quote_from = field_start;
    *quote_after = skipping && memchr(buf + skip_from, '"', quote_from - skip_from) != NULL;
out:
    t->bits = bits;
    t->cur = cur;
    t->field_start = field_start;
    return rc;
}
