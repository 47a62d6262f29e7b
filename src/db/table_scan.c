/* See table_scan.h: a table's records from bit masks of 64-byte blocks.
 *
 * Reading an eager open's tables, this scan replaces the exact one (a
 * byte-by-byte state machine that also noted every cell's start): the
 * records and their field counts are all an open needs; where each cell
 * starts is found from the same masks by the table's first typed column
 * (db_scan_cells). */
#include "db/table_scan.h"

#include <stdlib.h>
#include <string.h>

#include "opdb/core.h"

#include "csv/block64.h"
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang_analyzer__)
#define SCAN_AVX2 1
#include <immintrin.h>
#else
#define SCAN_AVX2 0
#endif


db_block_masks db_block_masks_portable(const char *p) {
    db_block_masks m = {0, 0, 0, 0, false};
    unsigned char any = 0;
    for (int i = 0; i < 64; i++) {
        uint64_t bit = 1ULL << i;
        char c = p[i];
        any |= (unsigned char)c;
        if (c == '"') m.quote |= bit;
        else if (c == ',') m.comma |= bit;
        else if (c == '\n') m.lf |= bit;
        else if (c == '\r') m.cr |= bit;
    }
    m.high = any >= 0x80;
    return m;
}

#if defined(__SSE2__)
static inline db_block_masks masks_sse2(const char *p) {
    const opdb_block64 b = opdb_block64_load(p);
    db_block_masks m;
    m.quote = opdb_block64_eq(&b, _mm_set1_epi8('"'));
    m.comma = opdb_block64_eq(&b, _mm_set1_epi8(','));
    m.lf = opdb_block64_eq(&b, _mm_set1_epi8('\n'));
    m.cr = opdb_block64_eq(&b, _mm_set1_epi8('\r'));
    m.high = _mm_movemask_epi8(_mm_or_si128(_mm_or_si128(b.v[0], b.v[1]), _mm_or_si128(b.v[2], b.v[3]))) != 0;
    return m;
}
#endif

#if SCAN_AVX2
__attribute__((target("avx2"))) static inline db_block_masks masks_avx2(const char *p) {
    const __m256i lo = _mm256_loadu_si256((const __m256i *)(const void *)p);
    const __m256i hi = _mm256_loadu_si256((const __m256i *)(const void *)(p + 32));
#define EQ2(k)                                                                \
    ((uint64_t)(uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(lo, k)) | \
     ((uint64_t)(uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(hi, k)) << 32))
    const __m256i kq = _mm256_set1_epi8('"'), kc = _mm256_set1_epi8(','), kn = _mm256_set1_epi8('\n'),
                  kr = _mm256_set1_epi8('\r');
    db_block_masks m;
    m.quote = EQ2(kq);
    m.comma = EQ2(kc);
    m.lf = EQ2(kn);
    m.cr = EQ2(kr);
#undef EQ2
    m.high = _mm256_movemask_epi8(_mm256_or_si256(lo, hi)) != 0;
    return m;
}
#endif

static inline db_block_masks masks_default(const char *p) {
#if defined(__SSE2__)
    return masks_sse2(p);
#else
    return db_block_masks_portable(p);
#endif
}

db_block_masks db_block_masks_vec(const char *p, bool avx2) {
#if SCAN_AVX2
    if (avx2 && __builtin_cpu_supports("avx2")) return masks_avx2(p);
#endif
    (void)avx2;
    return masks_default(p);
}

/* Set bits of x (baseline x86-64 has no popcnt instruction). */
static inline uint64_t popcount64(uint64_t x) {
    x = x - ((x >> 1) & 0x5555555555555555ULL);
    x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
    x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0FULL;
    return (x * 0x0101010101010101ULL) >> 56;
}

static bool blank(const char *p, size_t a, size_t b) {
    for (; a < b; a++)
        if (p[a] != ' ' && p[a] != '\t') return false;
    return true;
}

/* The scan's state between blocks. */
typedef struct scan_state {
    uint64_t inq;        /* all ones: the previous block ended inside quotes */
    uint64_t prev_dq;    /* 1: the byte before the block is a delimiter or quote */
    uint64_t pend_close; /* 1: the previous block ended with a closing quote */
    uint64_t prev_cr;    /* 1: the previous block ended with '\r' */
    uint64_t commas;     /* commas outside quotes before the block */
    uint64_t at_start;   /* ... before the current record's start */
    size_t start;        /* the current record's start */
    uint32_t line;       /* its line */
    bool high;
} scan_state;

static bool push(db_recs *o, size_t start, uint32_t line) {
    if (o->n == o->cap) {
        o->cap = o->cap ? 2 * o->cap : 256;
        o->rec = opdb_xrealloc(o->rec, o->cap * sizeof *o->rec);
        o->line = opdb_xrealloc(o->line, o->cap * sizeof *o->line);
    }
    o->rec[o->n] = start;
    o->line[o->n++] = line;
    return true;
}

/* One block at offset b (m: its masks; end_bit: the bit just past the input
 * when the block holds its end). False: the exact rules are needed. */
static inline __attribute__((always_inline)) bool take_block(scan_state *s, const char *p, size_t n, size_t b,
                                                             db_block_masks m, uint64_t end_bit, size_t ncols,
                                                             db_recs *out) {
    s->high |= m.high;
    uint64_t eol = m.lf | m.cr, dq = m.comma | eol | m.quote;
    uint64_t inside = opdb_prefix_xor(m.quote) ^ s->inq;
    s->inq = (uint64_t)((int64_t)inside >> 63);
    uint64_t open = m.quote & inside, close = m.quote & ~inside;
    /* a quote that neither opens nor closes a cell, or a line break in quotes */
    uint64_t bad = (open & ~((dq << 1) | s->prev_dq)) | (close & ~((dq | end_bit) >> 1) & ~(1ULL << 63)) |
                   (eol & inside) | (s->pend_close & ~dq & 1);
    if (bad) return false;
    s->pend_close = close >> 63;
    s->prev_dq = dq >> 63;
    uint64_t cs = m.comma & ~inside;
    uint64_t term = eol & ~(m.lf & ((m.cr << 1) | s->prev_cr)); /* "\r\n" ends a record once */
    s->prev_cr = m.cr >> 63;
    while (term) {
        unsigned bit = (unsigned)__builtin_ctzll(term);
        term &= term - 1;
        size_t pos = b + bit;
        uint64_t at = s->commas + popcount64(cs & ((1ULL << bit) - 1)), k = at - s->at_start;
        if (k || !blank(p, s->start, pos)) {
            if (k >= ncols) return false; /* longer than the header: the exact scan words it */
            push(out, s->start, s->line);
        }
        s->line++;
        s->start = pos + 1 + (p[pos] == '\r' && pos + 1 < n && p[pos + 1] == '\n');
        s->at_start = at;
    }
    s->commas += popcount64(cs);
    return true;
}

#define SCAN_LOOP(MASKS)                                                   \
    for (; b + 64 <= n; b += 64)                                           \
        if (!take_block(&s, p, n, b, MASKS(p + b), 0, ncols, out)) return 0; \
    if (b < n) {                                                           \
        char tmp[64];                                                      \
        memset(tmp, 0, sizeof tmp);                                        \
        memcpy(tmp, p + b, n - b);                                         \
        if (!take_block(&s, p, n, b, MASKS(tmp), 1ULL << (n - b), ncols, out)) return 0; \
    }

static int finish(scan_state *s, const char *p, size_t n, size_t ncols, db_recs *out, bool *ascii) {
    if (s->inq) return 0; /* a quote still open at the end */
    if (s->start < n && (s->commas > s->at_start || !blank(p, s->start, n))) {
        if (s->commas - s->at_start >= ncols) return 0;
        push(out, s->start, s->line);
    }
    *ascii = !s->high;
    return 1;
}

/* ---- where each cell starts, for records the block scan found */

typedef struct cells_state {
    uint64_t inq, prev_cr;
    size_t r, c;         /* the record and cell being read */
    size_t start;        /* where record r starts */
    db_rec_starts rec;
} cells_state;

static inline void end_record(cells_state *s, size_t nrows, size_t ncols, uint16_t *at) {
    for (size_t c = s->c + 1; c < ncols; c++) at[s->r * ncols + c] = DB_SCAN_AT_ABSENT;
    s->r++;
    s->c = 0;
    s->start = s->r < nrows ? db_rec_start(s->rec, s->r) : SIZE_MAX;
}

/* The state is read into locals for the block (and the record's row of at
 * kept as a pointer): most delimiters then cost a few instructions. */
static inline __attribute__((always_inline)) void cells_block(cells_state *s, size_t b, db_block_masks m,
                                                              size_t nrows, size_t ncols, uint16_t *at) {
    uint64_t inside = opdb_prefix_xor(m.quote) ^ s->inq;
    s->inq = (uint64_t)((int64_t)inside >> 63);
    uint64_t term = (m.lf | m.cr) & ~(m.lf & ((m.cr << 1) | s->prev_cr));
    s->prev_cr = m.cr >> 63;
    uint64_t bits = (m.comma & ~inside) | term;
    size_t r = s->r, c = s->c, start = s->start;
    if (!bits || r >= nrows) return;
    uint16_t *row = at + r * ncols;
    while (bits) {
        unsigned bit = (unsigned)__builtin_ctzll(bits);
        bits &= bits - 1;
        size_t pos = b + bit;
        if (pos < start) continue; /* a blank line before the record */
        if (term >> bit & 1) {
            for (size_t k = c + 1; k < ncols; k++) row[k] = DB_SCAN_AT_ABSENT;
            c = 0;
            row += ncols;
            if (++r >= nrows) {
                start = SIZE_MAX;
                break;
            }
            start = db_rec_start(s->rec, r);
            continue;
        }
        size_t off = pos + 1 - start;
        row[++c] = off < DB_SCAN_AT_ABSENT ? (uint16_t)off : DB_SCAN_AT_FAR;
    }
    s->r = r;
    s->c = c;
    s->start = start;
}

#define CELLS_LOOP(MASKS)                                                    \
    cells_state s = {0, 0, 0, 0, db_rec_start(rec, 0), rec};                 \
    size_t b = s.start;                                                      \
    for (; b + 64 <= n && s.r < nrows; b += 64) cells_block(&s, b, MASKS(p + b), nrows, ncols, at); \
    if (b < n && s.r < nrows) {                                              \
        char tmp[64];                                                        \
        memset(tmp, 0, sizeof tmp);                                          \
        memcpy(tmp, p + b, n - b);                                           \
        cells_block(&s, b, MASKS(tmp), nrows, ncols, at);                    \
    }                                                                        \
    if (s.r < nrows) end_record(&s, nrows, ncols, at); /* the last one, without a line end */

#if SCAN_AVX2
__attribute__((target("avx2"))) static void cells_avx2(const char *p, size_t n, db_rec_starts rec, size_t nrows,
                                                       size_t ncols, uint16_t *at) {
    CELLS_LOOP(masks_avx2)
}
#endif

static void cells_default(const char *p, size_t n, db_rec_starts rec, size_t nrows, size_t ncols, uint16_t *at) {
    CELLS_LOOP(masks_default)
}

static void cells_portable(const char *p, size_t n, db_rec_starts rec, size_t nrows, size_t ncols, uint16_t *at) {
    CELLS_LOOP(db_block_masks_portable)
}

void db_scan_cells(const char *p, size_t n, db_rec_starts rec, size_t nrows, size_t ncols, bool portable,
                   uint16_t *at) {
    if (!nrows) return;
    for (size_t r = 0; r < nrows; r++) at[r * ncols] = 0;
    if (portable) {
        cells_portable(p, n, rec, nrows, ncols, at);
        return;
    }
#if SCAN_AVX2
    if (__builtin_cpu_supports("avx2")) {
        cells_avx2(p, n, rec, nrows, ncols, at);
        return;
    }
#endif
    cells_default(p, n, rec, nrows, ncols, at);
}

#if SCAN_AVX2
__attribute__((target("avx2"))) static int scan_avx2(const char *p, size_t n, size_t from, uint32_t line,
                                                     size_t ncols, db_recs *out, bool *ascii) {
    scan_state s = {0, 1, 0, 0, 0, 0, from, line, false};
    size_t b = from;
    SCAN_LOOP(masks_avx2)
    return finish(&s, p, n, ncols, out, ascii);
}
#endif

static int scan_default(const char *p, size_t n, size_t from, uint32_t line, size_t ncols, db_recs *out,
                        bool *ascii) {
    scan_state s = {0, 1, 0, 0, 0, 0, from, line, false};
    size_t b = from;
    SCAN_LOOP(masks_default)
    return finish(&s, p, n, ncols, out, ascii);
}

static int scan_portable(const char *p, size_t n, size_t from, uint32_t line, size_t ncols, db_recs *out,
                         bool *ascii) {
    scan_state s = {0, 1, 0, 0, 0, 0, from, line, false};
    size_t b = from;
    SCAN_LOOP(db_block_masks_portable)
    return finish(&s, p, n, ncols, out, ascii);
}

int db_scan_records(const char *p, size_t n, size_t from, uint32_t line, size_t ncols, bool portable, db_recs *out,
                    bool *ascii) {
    if (portable) return scan_portable(p, n, from, line, ncols, out, ascii);
#if SCAN_AVX2
    if (__builtin_cpu_supports("avx2")) return scan_avx2(p, n, from, line, ncols, out, ascii);
#endif
    return scan_default(p, n, from, line, ncols, out, ascii);
}
