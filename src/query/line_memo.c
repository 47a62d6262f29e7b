/* The line memo: result lines by query line without its id.
 *
 * A key is the line's bytes with the id's value cut out, where that value
 * is written the way the result line writes it (a plain integer, a plain
 * ASCII string) and is surely the query's id; any other line is its own
 * key, whole. The key is always compared in full, with where the id was cut
 * and how it was written. Why the span is the query's id: either the line
 * ends with `"id" : VALUE }` after a `,` or `{` (in valid JSON that `}`
 * closes the top-level object, so "id" is its last member and wins over
 * any earlier one), or the line has no backslash and one `"id"` only, a
 * key, and the result echoes the value (else it would say null). Invalid
 * JSON gives an error result, which is never filed; every line sharing a
 * key has the same structure, so the first one's answer holds for them
 * all, and a put checks that the result line echoes the id's text before
 * filing it.
 *
 * Memory: one block of bytes entries are cut from, a slot table (a 32-bit
 * hash tag and the entry's place per slot, published once by CAS, read
 * without a lock) and two doorkeepers. Admission is first come until full,
 * a key only on its third sight, so that the bytes go to keys that repeat
 * most: on the generated 1M-line trace, at 2.5 MiB, 32.1% of the lines were
 * answered (second sight 30.4%, every key about 22%), and evicting (CLOCK) kept
 * fewer than first come at these sizes. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "query/line_memo.h"
#include "query/qline_fast.h"
#include "query/query_internal.h"

typedef struct lm_entry {
    uint32_t key_n;  /* the key's bytes: the line without the id's value */
    uint32_t at;     /* where the id's value was cut */
    uint32_t res_n;  /* the result's bytes: after the id (whole for Q_LM_FULL), newline included */
    uint8_t kind, cls;
    char data[];     /* key, then result */
} lm_entry;

/* what every lookup reads, then a cache line apart what puts write (as the exact-hit map) */
struct q_lmemo {
    _Atomic uint64_t *slot; /* tag << 32 | (entry offset / 8 + 1); 0: empty */
    size_t mask;
    size_t max_entries;     /* 3/4 of the slots: a probe always meets an empty one */
    char *heap;
    size_t heap_cap;
    q_door door, door2;     /* keys seen once, and twice */
    uint64_t hash_mask;     /* tests */
    atomic_bool full;       /* written once */
    char apart[Q_LINE];
    _Atomic size_t entries;
    _Atomic size_t used;
};

static bool is_ws(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

q_lmemo *q_lmemo_new(size_t bytes) {
    if (!bytes) return NULL;
    q_lmemo *m = opdb_xcalloc(1, sizeof *m);
    size_t slots = 16;
    while (slots < bytes / 256) slots <<= 1;
    size_t fixed = slots * (sizeof *m->slot + 2 * sizeof *m->door.fp);
    m->slot = opdb_xzeroed(slots, sizeof *m->slot);
    m->mask = slots - 1;
    m->max_entries = slots / 4 * 3;
    q_door_init(&m->door, slots);
    q_door_init(&m->door2, slots);
    m->heap_cap = bytes > fixed ? bytes - fixed : 0;
    if (m->heap_cap > (size_t)UINT32_MAX * 8) m->heap_cap = (size_t)UINT32_MAX * 8;
    /* pages are touched only as entries are filed */
    m->heap = m->heap_cap ? opdb_xmalloc(m->heap_cap) : NULL;
    m->hash_mask = UINT64_MAX;
    return m;
}

void q_lmemo_free(q_lmemo *m) {
    if (!m) return;
    free(m->slot);
    free(m->heap);
    q_door_free(&m->door);
    q_door_free(&m->door2);
    free(m);
}

void q_lmemo_test_hash_mask(q_lmemo *m, uint64_t mask) { m->hash_mask = mask; }

size_t q_lmemo_entries(const q_lmemo *m) { return m ? atomic_load(&m->entries) : 0; }

/* the line reader's hash (nothing before p is read) */
static uint64_t hash_bytes(const unsigned char *p, size_t n, uint64_t h) { return q_lanes_hash(p, n, 0, h); }

/* [a, e) as the result line writes the id it reads: an integer of at most
 * 18 digits, no leading zero, not -0 (written as %lld: the same text), or a
 * string of printable ASCII without quote or backslash (json.dumps quotes it
 * as it is) */
static int id_kind(const char *s, size_t a, size_t e) {
    if (e - a >= 2 && s[a] == '"' && s[e - 1] == '"') {
        for (size_t i = a + 1; i < e - 1; i++)
            if (s[i] < 0x20 || s[i] > 0x7e || s[i] == '"' || s[i] == '\\') return Q_LM_FULL;
        return Q_LM_STR;
    }
    size_t d = a + (a < e && s[a] == '-');
    if (d >= e || e - d > 18) return Q_LM_FULL;
    for (size_t i = d; i < e; i++)
        if (s[i] < '0' || s[i] > '9') return Q_LM_FULL;
    if (s[d] == '0' && (e - d > 1 || d > a)) return Q_LM_FULL;
    return Q_LM_INT;
}

/* the span of the value of a last member "id": false when the line does not end that way */
static bool tail_id(const char *s, size_t n, size_t *at, size_t *end) {
    if (n < 8 || s[n - 1] != '}') return false;
    size_t j = n - 1;
    while (j > 0 && is_ws(s[j - 1])) j--;
    size_t e = j;
    if (j > 0 && s[j - 1] == '"') { /* a string: back to its opening quote over plain bytes */
        j--;
        while (j > 0 && s[j - 1] != '"' && s[j - 1] != '\\') j--;
        if (j == 0 || s[j - 1] != '"') return false;
        j--;
    } else {
        while (j > 0 && s[j - 1] >= '0' && s[j - 1] <= '9') j--;
        if (j > 0 && s[j - 1] == '-') j--;
    }
    size_t a = j;
    if (a == e) return false;
    while (j > 0 && is_ws(s[j - 1])) j--;
    if (j == 0 || s[j - 1] != ':') return false;
    j--;
    while (j > 0 && is_ws(s[j - 1])) j--;
    if (j < 5 || memcmp(s + j - 4, "\"id\"", 4) != 0) return false;
    j -= 4;
    while (j > 0 && is_ws(s[j - 1])) j--;
    if (j == 0 || (s[j - 1] != ',' && s[j - 1] != '{')) return false;
    *at = a;
    *end = e;
    return true;
}

/* The span of the value of the only member "id" of a line without a
 * backslash and with no other `"id"` in it (then no other key can read as
 * "id", and every quote delimits a string): false otherwise. Whether that
 * member is the top-level one the result's id says when the entry is filed
 * (a nested one leaves the query without an id: "null"). */
static bool only_id(const char *s, size_t n, size_t *at, size_t *end) {
    if (memchr(s, '\\', n)) return false;
    const char *q = memmem(s, n, "\"id\"", 4);
    if (!q || memmem(q + 4, (size_t)(s + n - q - 4), "\"id\"", 4)) return false;
    size_t k = (size_t)(q - s), j = k + 4;
    while (k > 0 && is_ws(s[k - 1])) k--;
    if (k == 0 || (s[k - 1] != ',' && s[k - 1] != '{')) return false;
    while (j < n && is_ws(s[j])) j++;
    if (j >= n || s[j] != ':') return false;
    j++;
    while (j < n && is_ws(s[j])) j++;
    size_t a = j;
    if (j < n && s[j] == '"') {
        const char *e = memchr(s + j + 1, '"', n - j - 1);
        if (!e) return false;
        j = (size_t)(e - s) + 1;
    } else {
        if (j < n && s[j] == '-') j++;
        while (j < n && s[j] >= '0' && s[j] <= '9') j++;
    }
    size_t e = j;
    while (j < n && is_ws(s[j])) j++;
    if (a == e || j >= n || (s[j] != ',' && s[j] != '}')) return false;
    *at = a;
    *end = e;
    return true;
}

void q_lmemo_key(const char *s, size_t n, q_lmemo_line *k) {
    k->s = s;
    k->n = n;
    size_t at, end;
    k->kind = Q_LM_FULL;
    bool tail = tail_id(s, n, &at, &end);
    if (tail || only_id(s, n, &at, &end)) k->kind = (uint8_t)id_kind(s, at, end);
    if (k->kind == Q_LM_FULL) at = end = n, tail = true;
    k->at = at;
    k->end = end;
    /* after a last member's id come blanks and the closing brace: their length stands for
     * them in the hash (the compare reads their bytes) */
    uint64_t h = hash_bytes((const unsigned char *)s, at,
                            0x6c6d656dULL ^ ((uint64_t)k->kind << 60) ^ ((uint64_t)(n - end) << 40) ^ at);
    k->h = tail ? h : hash_bytes((const unsigned char *)s + end, n - end, h);
}

static const lm_entry *entry_at(const q_lmemo *m, uint64_t v) {
    return (const lm_entry *)(m->heap + ((size_t)(uint32_t)v - 1) * 8);
}

static bool same_key(const lm_entry *e, const q_lmemo_line *k) {
    size_t tail = k->n - k->end;
    return e->key_n == k->at + tail && e->at == k->at && e->kind == k->kind && memcmp(e->data, k->s, k->at) == 0 &&
           memcmp(e->data + k->at, k->s + k->end, tail) == 0;
}

/* the id text of a result line, {"id": VALUE, ... */
#define LM_ID_OPEN "{\"id\": "
#define LM_ID_OPEN_N (sizeof LM_ID_OPEN - 1)

void q_lmemo_prefetch(const q_lmemo *m, const q_lmemo_line *k) {
    __builtin_prefetch(&m->slot[(size_t)(k->h & m->hash_mask) & m->mask]);
}

bool q_lmemo_prefetch_entry(const q_lmemo *m, const q_lmemo_line *k) {
    uint64_t h = k->h & m->hash_mask;
    uint64_t v = atomic_load_explicit(&m->slot[(size_t)h & m->mask], memory_order_relaxed);
    if (!v || (uint32_t)(v >> 32) != (uint32_t)(h >> 32)) return false;
    /* its head and the key's start (the lines after follow by themselves) */
    const char *e = (const char *)entry_at(m, v);
    __builtin_prefetch(e);
    __builtin_prefetch(e + 64);
    return true;
}

bool q_lmemo_get(q_lmemo *m, const q_lmemo_line *k, opdb_strbuf *out, uint8_t *cls, bool *admit) {
    uint64_t h = k->h & m->hash_mask;
    uint32_t tag = (uint32_t)(h >> 32);
    for (size_t i = (size_t)h & m->mask;; i = (i + 1) & m->mask) {
        uint64_t v = atomic_load_explicit(&m->slot[i], memory_order_acquire);
        if (!v) break;
        if ((uint32_t)(v >> 32) != tag) continue;
        const lm_entry *e = entry_at(m, v);
        if (!same_key(e, k)) continue;
        const char *res = e->data + e->key_n;
        if (k->kind == Q_LM_FULL) {
            opdb_sb_add(out, res, e->res_n);
        } else {
            size_t idn = k->end - k->at;
            opdb_sb_reserve(out, LM_ID_OPEN_N + idn + e->res_n);
            char *o = out->p + out->n;
            memcpy(o, LM_ID_OPEN, LM_ID_OPEN_N);
            memcpy(o + LM_ID_OPEN_N, k->s + k->at, idn);
            memcpy(o + LM_ID_OPEN_N + idn, res, e->res_n);
            out->n += LM_ID_OPEN_N + idn + e->res_n;
            out->p[out->n] = 0;
        }
        *cls = e->cls;
        return true;
    }
    /* the third sight: the second door notes the key's second sight under another slot and fingerprint */
    *admit = !atomic_load_explicit(&m->full, memory_order_relaxed) && q_door_pass(&m->door, h) &&
             q_door_pass(&m->door2, h * 0x9e3779b97f4a7c15ULL + 1);
    return false;
}

void q_lmemo_put(q_lmemo *m, const q_lmemo_line *k, const char *text, size_t n, uint8_t cls) {
    if (atomic_load_explicit(&m->full, memory_order_relaxed)) return;
    const char *res = text;
    size_t res_n = n;
    if (k->kind != Q_LM_FULL) {
        /* the result must echo the id's own text, then its next member */
        size_t idn = k->end - k->at;
        if (n < LM_ID_OPEN_N + idn + 1 || memcmp(text, LM_ID_OPEN, LM_ID_OPEN_N) != 0 ||
            memcmp(text + LM_ID_OPEN_N, k->s + k->at, idn) != 0 || text[LM_ID_OPEN_N + idn] != ',')
            return;
        res = text + LM_ID_OPEN_N + idn;
        res_n = n - LM_ID_OPEN_N - idn;
    }
    size_t key_n = k->at + (k->n - k->end);
    if (key_n > UINT32_MAX || res_n > UINT32_MAX || k->at > UINT32_MAX) return;
    size_t size = (sizeof(lm_entry) + key_n + res_n + 7) & ~(size_t)7;
    if (size > m->heap_cap) return;
    if (atomic_fetch_add(&m->entries, 1) >= m->max_entries) {
        atomic_store(&m->full, true);
        return;
    }
    size_t off = atomic_fetch_add(&m->used, size);
    if (off + size > m->heap_cap || off + size < off) {
        atomic_store(&m->full, true);
        return;
    }
    lm_entry *e = (lm_entry *)(m->heap + off);
    e->key_n = (uint32_t)key_n;
    e->at = (uint32_t)k->at;
    e->res_n = (uint32_t)res_n;
    e->kind = k->kind;
    e->cls = cls;
    memcpy(e->data, k->s, k->at);
    memcpy(e->data + k->at, k->s + k->end, k->n - k->end);
    memcpy(e->data + key_n, res, res_n);
    uint64_t h = k->h & m->hash_mask;
    uint64_t v = (h >> 32 << 32) | (uint64_t)(off / 8 + 1);
    /* published once: a slot another thread took first is passed over (a
     * copy of the same key filed twice only costs its bytes) */
    for (size_t i = (size_t)h & m->mask;; i = (i + 1) & m->mask) {
        uint64_t zero = 0;
        if (atomic_compare_exchange_strong_explicit(&m->slot[i], &zero, v, memory_order_release,
                                                    memory_order_relaxed))
            return;
    }
}
