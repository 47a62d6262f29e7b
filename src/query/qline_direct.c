/* The query line read straight into the query: the common op-level form
 * (members op, id, args, out and kwargs, each once; tensors written as
 * {"shape": [...], "dtype": ...}) in the plain JSON subset the fast reader
 * takes, tensors built as they are read instead of as a dict converted
 * afterwards. It gives the query the general reader would (same kinds,
 * values and dtypes), or hands the line over before anything is trusted:
 * any other member, an object that is not a plain tensor, an integer that
 * is not a plain dimension, an unknown dtype, a syntax error. The general
 * reader then takes it and words what is wrong. */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "query/qline_fast.h"

#define QD_MAX_DEPTH 32
#define QD_MAX_RANK 32
#define QD_MAX_ITEMS 64
#define QD_COMPACT_RANK 8 /* the compact tensor's most dims (tensor() takes more) */

typedef struct rd {
    const char *s;
    size_t i, n;
    opdb_arena *a;
    char *bp, *be; /* a block of the arena the line's values are cut from */
} rd;

#define QD_BLOCK 1024 /* a common line's values take about 800 bytes */

/* n bytes (a multiple of 8) from the line's block: one arena call per block
 * instead of one per value */
static void *ralloc(rd *r, size_t n) {
    if ((size_t)(r->be - r->bp) < n) {
        if (n > QD_BLOCK / 4) return opdb_arena_alloc(r->a, n);
        r->bp = opdb_arena_alloc(r->a, QD_BLOCK);
        r->be = r->bp + QD_BLOCK;
    }
    void *p = r->bp;
    r->bp += n;
    return p;
}

/* a value node from the block */
static qv *node(rd *r, qv_kind k) {
    qv *v = ralloc(r, (sizeof(qv) + 7) & ~(size_t)7);
    qv_init(v, k);
    return v;
}

/* 8 bytes at p as one word, the first byte lowest */
static uint64_t load8(const char *p) {
    uint64_t w;
    memcpy(&w, p, 8);
    return w;
}

/* a literal's first len bytes (len <= 8) as load8 reads them, and their mask */
static inline uint64_t lit8(const char *t, size_t len) {
    uint64_t v = 0;
    memcpy(&v, t, len);
    return v;
}
static inline uint64_t mask8(size_t len) { return len >= 8 ? ~0ULL : (1ULL << (8 * len)) - 1; }
/* the word's first bytes are the literal t's (at most 8 bytes) */
#define QD_WORD_IS(w, t) (((w) & mask8(sizeof(t) - 1)) == lit8(t, sizeof(t) - 1))

static bool is_ws(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

static void ws_run(rd *r) {
    while (r->i < r->n && is_ws(r->s[r->i])) r->i++;
}

/* past any whitespace: inline, one compare for the usual byte, which is none */
static inline __attribute__((always_inline)) void ws(rd *r) {
    if (r->i < r->n && (unsigned char)r->s[r->i] <= ' ') ws_run(r);
}

/* A run of up to 17 decimal digits from s[j] (n the line's end): its value
 * in *x; returns the run's length, 0 for none. Eight bytes are tested at
 * once when eight are there to read; a run of 18 digits or more returns 18
 * (the caller refuses it). */
static inline __attribute__((always_inline)) size_t digits(const char *s, size_t j, size_t n, int64_t *x) {
    if (n >= 8 && j < n) {
        /* the 8 bytes from j, or the line's last 8 moved down to start at j
         * (zero bytes past its end: not digits) */
        uint64_t w = n - j >= 8 ? load8(s + j) : load8(s + n - 8) >> (8 * (8 - (n - j)));
        uint64_t t = w ^ 0x3030303030303030ULL; /* a digit byte becomes its value */
        /* a byte's top bit: it is not a digit (t >= 10; no carry leaves a byte) */
        uint64_t nd = (((t & 0x7f7f7f7f7f7f7f7fULL) + 0x7676767676767676ULL) | t) & 0x8080808080808080ULL;
        if (nd) {
            size_t len = (size_t)__builtin_ctzll(nd) >> 3;
            if (!len) return 0;
            /* the digits moved to the word's top (leading zero bytes below), then
             * combined pairwise: 2, 4 and 8 digits at a time */
            uint64_t v = t << (8 * (8 - len));
            v = (v * 10) + (v >> 8);
            v = (((v & 0x000000FF000000FFULL) * (100 + (1000000ULL << 32))) +
                 (((v >> 16) & 0x000000FF000000FFULL) * (1 + (10000ULL << 32)))) >> 32;
            *x = (int64_t)(uint32_t)v;
            return len;
        }
    }
    size_t d0 = j;
    int64_t v = 0;
    while (j < n && (unsigned)(s[j] - '0') < 10 && j - d0 < 18) v = v * 10 + (s[j++] - '0');
    *x = v;
    return j - d0;
}

/* bytes a plain string holds as they are: printable ASCII but the quote and backslash */
#define QD_PLAIN(c) ((c) >= 0x20 && (c) < 0x80 && (c) != '"' && (c) != '\\')
#define QD_PLAIN4(b) QD_PLAIN(b), QD_PLAIN(b + 1), QD_PLAIN(b + 2), QD_PLAIN(b + 3)
#define QD_PLAIN16(b) QD_PLAIN4(b), QD_PLAIN4(b + 4), QD_PLAIN4(b + 8), QD_PLAIN4(b + 12)
static const bool k_plain[256] = {QD_PLAIN16(0x00), QD_PLAIN16(0x10), QD_PLAIN16(0x20), QD_PLAIN16(0x30),
                                  QD_PLAIN16(0x40), QD_PLAIN16(0x50), QD_PLAIN16(0x60), QD_PLAIN16(0x70)};

/* The top bit of each byte of w that ends a plain string: a quote,
 * backslash, control byte or non-ASCII byte. A borrow can mark bytes above
 * a marked one, never below it, so the lowest mark is exact. */
static uint64_t nonplain8(uint64_t w) {
    const uint64_t ones = 0x0101010101010101ULL, high = 0x8080808080808080ULL;
    uint64_t q = w ^ (ones * '"'), b = w ^ (ones * '\\');
    return (((q - ones) & ~q) | ((b - ones) & ~b) | (w - ones * 0x20) | w) & high;
}

/* past the plain bytes from j */
static size_t plain_run(const char *s, size_t j, size_t n) {
    while (n - j >= 8) {
        uint64_t m = nonplain8(load8(s + j));
        if (m) return j + ((size_t)__builtin_ctzll(m) >> 3);
        j += 8;
    }
    while (j < n && k_plain[(unsigned char)s[j]]) j++;
    return j;
}

/* at the opening quote: the bytes between the quotes (plain ASCII, no escapes) */
static bool str(rd *r, const char **p, size_t *len) {
    size_t j = plain_run(r->s, r->i + 1, r->n);
    if (j >= r->n || r->s[j] != '"') return false;
    *p = r->s + r->i + 1;
    *len = j - r->i - 1;
    r->i = j + 1;
    return true;
}

static bool lit(rd *r, const char *w, size_t wl) {
    if (r->n - r->i < wl || memcmp(r->s + r->i, w, wl) != 0) return false;
    r->i += wl;
    return true;
}

/* n items of a stack array into a new block, 4 at a time: a copy of a length
 * known only at run time becomes `rep movs`, whose start-up costs more than
 * a query line's few items (the block and the array hold n rounded up to 4) */
static void *copy_out(rd *r, const void *src, size_t n, size_t size) {
    size_t m = (n + 3) & ~(size_t)3;
    char *d = ralloc(r, (m ? m : 4) * size);
    for (size_t k = 0; k < m; k += 4) memcpy(d + k * size, (const char *)src + k * size, 4 * size);
    return d;
}

/* JSON's number grammar; the value as the general reader makes it */
static qv *num(rd *r) {
    size_t j = r->i, n = r->n;
    const char *s = r->s;
    {
        /* the usual integer (an id, a list's item): at most 17 digits, no
         * leading zero, neither fraction nor exponent after it; the value
         * q_json_number gives it */
        size_t neg = j < n && s[j] == '-';
        int64_t x;
        size_t dl = j + neg < n ? digits(s, j + neg, n, &x) : 0, e = j + neg + dl;
        if (dl && dl < 18 && (dl == 1 || s[j + neg] != '0') &&
            (e == n || (s[e] != '.' && s[e] != 'e' && s[e] != 'E'))) {
            qv *v = node(r, QV_INT);
            v->i = neg ? -x : x;
            r->i = e;
            return v;
        }
    }
    if (j < n && s[j] == '-') j++;
    if (j >= n) return NULL;
    if (s[j] == '0') j++;
    else if (s[j] >= '1' && s[j] <= '9')
        while (j < n && s[j] >= '0' && s[j] <= '9') j++;
    else return NULL;
    if (j < n && s[j] == '.') {
        size_t d = ++j;
        while (j < n && s[j] >= '0' && s[j] <= '9') j++;
        if (j == d) return NULL;
    }
    if (j < n && (s[j] == 'e' || s[j] == 'E')) {
        j++;
        if (j < n && (s[j] == '+' || s[j] == '-')) j++;
        size_t d = j;
        while (j < n && s[j] >= '0' && s[j] <= '9') j++;
        if (j == d) return NULL;
    }
    qv *v = q_json_number(r->a, s + r->i, j - r->i);
    r->i = j;
    return v;
}

/* {"shape": [dims], "dtype": name-or-null} in either order, dtype optional;
 * r->i just past the '{' */
static qv *tensor(rd *r) {
    int64_t dims[QD_MAX_RANK];
    uint32_t rank = 0;
    bool have_shape = false, have_dtype = false;
    int dtype = QDT_BF16;
    ws(r);
    if (r->i < r->n && r->s[r->i] == '}') return NULL; /* {} is a dict */
    for (;;) {
        const char *k;
        size_t kl;
        if (r->i >= r->n || r->s[r->i] != '"' || !str(r, &k, &kl)) return NULL;
        ws(r);
        if (r->i >= r->n || r->s[r->i] != ':') return NULL;
        r->i++;
        ws(r);
        if (kl == 5 && memcmp(k, "shape", 5) == 0 && !have_shape) {
            have_shape = true;
            if (r->i >= r->n || r->s[r->i] != '[') return NULL;
            r->i++;
            ws(r);
            if (r->i < r->n && r->s[r->i] == ']') {
                r->i++;
            } else {
                for (;;) {
                    /* a dimension: a non-negative integer read as the general reader reads it */
                    int64_t x;
                    size_t dl = digits(r->s, r->i, r->n, &x), j = r->i + dl;
                    if (dl == 0 || dl >= 18 || (dl > 1 && r->s[r->i] == '0') || rank == QD_MAX_RANK) return NULL;
                    if (j < r->n && (r->s[j] == '.' || r->s[j] == 'e' || r->s[j] == 'E')) return NULL;
                    r->i = j;
                    dims[rank++] = x;
                    ws(r);
                    if (r->i < r->n && r->s[r->i] == ',') {
                        r->i++;
                        ws(r);
                        continue;
                    }
                    if (r->i < r->n && r->s[r->i] == ']') {
                        r->i++;
                        break;
                    }
                    return NULL;
                }
            }
        } else if (kl == 5 && memcmp(k, "dtype", 5) == 0 && !have_dtype) {
            have_dtype = true;
            if (r->i < r->n && r->s[r->i] == '"') {
                const char *d;
                size_t dl;
                if (!str(r, &d, &dl)) return NULL;
                dtype = q_dtype_parse(d, dl);
                if (dtype < 0) return NULL;
            } else if (!lit(r, "null", 4)) {
                return NULL;
            }
        } else {
            return NULL;
        }
        ws(r);
        if (r->i < r->n && r->s[r->i] == ',') {
            r->i++;
            ws(r);
            continue;
        }
        if (r->i < r->n && r->s[r->i] == '}') {
            r->i++;
            break;
        }
        return NULL;
    }
    if (!have_shape) return NULL;
    qv *v = node(r, QV_TENSOR);
    v->shape.d = copy_out(r, dims, rank, sizeof *dims);
    v->shape.rank = rank;
    v->dtype = dtype;
    return v;
}

/* {"shape":[dims],"dtype":"name"} written without spaces, as json.dumps with
 * compact separators writes it: read as literal pieces, r->i at the '{'.
 * NULL, r untouched, for anything else (tensor() reads it then). The pieces
 * are compared a word at a time where the line has the bytes to read. */
static qv *tensor_compact(rd *r) {
    const char *s = r->s;
    size_t n = r->n, j = r->i;
    if (n - j < 16 || !QD_WORD_IS(load8(s + j), "{\"shape\"") || !QD_WORD_IS(load8(s + j + 8), ":[")) return NULL;
    j += 10;
    /* the node and its dims in one piece */
    qv *v = ralloc(r, ((sizeof(qv) + 7) & ~(size_t)7) + QD_COMPACT_RANK * sizeof(int64_t));
    int64_t *dims = (int64_t *)((char *)v + ((sizeof(qv) + 7) & ~(size_t)7));
    uint32_t rank = 0;
    if (j < n && s[j] != ']') {
        for (;;) {
            /* a dimension as tensor() reads it: 1 to 17 digits, no leading zero */
            int64_t x;
            size_t dl = digits(s, j, n, &x);
            if (dl == 0 || dl >= 18 || (dl > 1 && s[j] == '0') || rank == QD_COMPACT_RANK) return NULL;
            j += dl;
            dims[rank++] = x;
            if (j < n && s[j] == ',') {
                j++;
                continue;
            }
            break;
        }
    }
    int dtype;
    if (n - j >= 21 && QD_WORD_IS(load8(s + j), "],\"dtype") && QD_WORD_IS(load8(s + j + 8), "\":\"bfloa") &&
        QD_WORD_IS(load8(s + j + 11), "bfloat16") && s[j + 19] == '"' && s[j + 20] == '}') {
        /* the usual dtype: the piece's 21 bytes at once */
        j += 21;
        dtype = QDT_BF16;
    } else {
        static const char mid[] = "],\"dtype\":\"";
        if (n - j < sizeof mid - 1 || memcmp(s + j, mid, sizeof mid - 1) != 0) return NULL;
        j += sizeof mid - 1;
        size_t d0 = j;
        j = plain_run(s, j, n);
        if (n - j < 2 || s[j] != '"' || s[j + 1] != '}') return NULL;
        dtype = q_dtype_parse(s + d0, j - d0);
        if (dtype < 0) return NULL;
        j += 2;
    }
    qv_init(v, QV_TENSOR);
    v->shape.d = dims;
    v->shape.rank = rank;
    v->dtype = dtype;
    r->i = j;
    return v;
}

/* Any value; objects only as tensors (tensors: inside args, out and kwargs). */
static qv *value(rd *r, int depth, bool tensors) {
    if (r->i >= r->n || depth > QD_MAX_DEPTH) return NULL;
    char c = r->s[r->i];
    if (c == '{') {
        if (!tensors) return NULL;
        qv *t = tensor_compact(r);
        if (t) return t;
        r->i++;
        return tensor(r);
    }
    if (c == '[') {
        qv *items[QD_MAX_ITEMS];
        size_t k = 0;
        r->i++;
        ws(r);
        if (r->i < r->n && r->s[r->i] == ']') {
            r->i++;
        } else {
            for (;;) {
                if (k == QD_MAX_ITEMS) return NULL;
                /* a compact tensor read here, without the call */
                qv *x = tensors && depth < QD_MAX_DEPTH && r->i < r->n && r->s[r->i] == '{' ? tensor_compact(r) : NULL;
                if (!x) x = value(r, depth + 1, tensors);
                if (!x) return NULL;
                items[k++] = x;
                ws(r);
                if (r->i < r->n && r->s[r->i] == ',') {
                    r->i++;
                    ws(r);
                    continue;
                }
                if (r->i < r->n && r->s[r->i] == ']') {
                    r->i++;
                    break;
                }
                return NULL;
            }
        }
        qv *v = node(r, QV_LIST);
        if (k) v->items = copy_out(r, items, k, sizeof *items);
        v->n = v->cap = k;
        return v;
    }
    if (c == '"') {
        const char *p;
        size_t len;
        if (!str(r, &p, &len)) return NULL;
        qv *v = node(r, QV_STR);
        char *t = ralloc(r, (len + 8) & ~(size_t)7);
        memcpy(t, p, len);
        t[len] = 0;
        v->s = t;
        v->n = len;
        return v;
    }
    if ((unsigned)(c - '0') < 10 || c == '-') return num(r);
    if (lit(r, "true", 4) || lit(r, "false", 5)) {
        qv *v = node(r, QV_BOOL);
        v->b = c == 't';
        return v;
    }
    if (lit(r, "null", 4)) return node(r, QV_NULL);
    return num(r);
}

int q_line_direct(opdb_arena *a, const char *s, size_t n, q_query *q) {
    rd r = {s, 0, n, a, NULL, NULL};
    enum { M_OP = 1, M_ID = 2, M_ARGS = 4, M_OUT = 8, M_KW = 16 };
    unsigned seen = 0;
    memset(q, 0, sizeof *q);
    ws(&r);
    if (r.i >= n || s[r.i] != '{') return 0;
    r.i++;
    ws(&r);
    if (r.i < n && s[r.i] == '}') return 0; /* no op: the general reader says so */
    qv *out = NULL;
    for (;;) {
        unsigned m = 0;
        if (n - r.i >= 8) {
            /* the key and its colon as compact JSON writes them, a word at once */
            uint64_t w = load8(s + r.i);
            size_t kl = QD_WORD_IS(w, "\"op\":") ? (m = M_OP, 5)
                        : QD_WORD_IS(w, "\"args\":") ? (m = M_ARGS, 7)
                        : QD_WORD_IS(w, "\"out\":") ? (m = M_OUT, 6)
                        : QD_WORD_IS(w, "\"id\":") ? (m = M_ID, 5)
                                                    : 0;
            r.i += kl;
        }
        if (!m) {
            const char *k;
            size_t kl;
            if (r.i >= n || s[r.i] != '"' || !str(&r, &k, &kl)) return 0;
            ws(&r);
            if (r.i >= n || s[r.i] != ':') return 0;
            r.i++;
            m = kl == 2 && memcmp(k, "op", 2) == 0       ? M_OP
                : kl == 2 && memcmp(k, "id", 2) == 0     ? M_ID
                : kl == 4 && memcmp(k, "args", 4) == 0   ? M_ARGS
                : kl == 3 && memcmp(k, "out", 3) == 0    ? M_OUT
                : kl == 6 && memcmp(k, "kwargs", 6) == 0 ? M_KW
                                                         : 0;
        }
        ws(&r);
        if (!m || (seen & m)) return 0; /* another member, or one given twice */
        seen |= m;
        if (m == M_OP) {
            const char *p;
            size_t len;
            if (r.i >= n || s[r.i] != '"' || !str(&r, &p, &len)) return 0;
            char *op = ralloc(&r, (len + 8) & ~(size_t)7);
            memcpy(op, p, len);
            op[len] = 0;
            q->op = len >= 10 && memcmp(op, "torch.ops.", 10) == 0 ? op + 10 : op;
        } else if (m == M_ID) {
            size_t at = r.i;
            if (!(q->id = r.i < n && (unsigned)(s[r.i] - '0') < 10 ? num(&r) : value(&r, 1, false))) return 0;
            /* an integer's text is already as Python writes it back, but -0 */
            if (q->id->kind == QV_INT && r.i - at <= 18 && !(r.i - at == 2 && s[at] == '-')) {
                q->id_text = s + at;
                q->id_len = (uint32_t)(r.i - at);
            }
        } else if (m == M_ARGS) {
            if (r.i >= n || s[r.i] != '[') return 0;
            if (!(q->args = value(&r, 1, true))) return 0;
        } else if (m == M_OUT) {
            if (!(r.i < n && s[r.i] == '{' && (out = tensor_compact(&r))) && !(out = value(&r, 1, true))) return 0;
        } else {
            /* an empty object only: anything else goes through the general reader */
            if (!lit(&r, "{", 1)) return 0;
            ws(&r);
            if (!lit(&r, "}", 1)) return 0;
            q->kwargs = node(&r, QV_DICT);
        }
        ws(&r);
        if (r.i < n && s[r.i] == ',') {
            r.i++;
            ws(&r);
            continue;
        }
        if (r.i < n && s[r.i] == '}') {
            r.i++;
            break;
        }
        return 0;
    }
    ws(&r);
    if (r.i != n || !(seen & M_OP)) return 0;
    static const qv empty_list = {.kind = QV_LIST, .dtype = -1};
    static const qv empty_dict = {.kind = QV_DICT, .dtype = -1};
    if (!q->args) q->args = &empty_list;
    if (!q->kwargs) q->kwargs = &empty_dict;
    q->out = out && out->kind != QV_NULL ? out : NULL;
    return 1;
}

/* ---- the line's hash without its id */

/* four independent lanes: a line hashes in a few cycles per word; back:
 * how many bytes before p may be read */
uint64_t q_lanes_hash(const unsigned char *p, size_t n, size_t back, uint64_t seed) {
    const uint64_t K = 0xbf58476d1ce4e5b9ULL;
    uint64_t a = seed ^ 0x9e3779b97f4a7c15ULL, b = seed + n, c = ~seed, d = seed * K;
    const size_t n0 = n;
    while (n >= 32) {
        uint64_t w[4];
        memcpy(w, p, 32);
        a = (a ^ w[0]) * K, a ^= a >> 29;
        b = (b ^ w[1]) * K, b ^= b >> 29;
        c = (c ^ w[2]) * K, c ^= c >> 29;
        d = (d ^ w[3]) * K, d ^= d >> 29;
        p += 32;
        n -= 32;
    }
    while (n >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        a = (a ^ w) * K, a ^= a >> 29;
        p += 8;
        n -= 8;
    }
    uint64_t t = 0;
    if (n && back + (n0 - n) >= 8 - n) {
        /* the last n bytes from the word that ends with them (bytes before p are there to read) */
        uint64_t w;
        memcpy(&w, p + n - 8, 8);
        t = w >> (8 * (8 - n));
    } else {
        for (size_t i = 0; i < n; i++) t |= (uint64_t)p[i] << (8 * i);
    }
    b = (b ^ t ^ ((uint64_t)n << 56)) * K;
    uint64_t h = a ^ (b * 0x94d049bb133111ebULL) ^ (c >> 7) ^ (d << 11) ^ (c * 31) ^ (d * 0x2545f4914f6cdd1dULL);
    h ^= h >> 31;
    h *= 0x94d049bb133111ebULL;
    return h ^ (h >> 29);
}

uint64_t q_line_hash(const char *s, size_t n) {
    /* the id's value: after the last "id" key (in the plain form a string
     * cannot hold a quote, so this is the member's key; lines usually end
     * with their id) up to the end of a number, a string or a literal; any
     * other value is hashed with the rest */
    size_t at = 0, end = 0;
    for (size_t k = n >= 4 ? n - 4 : 0; k-- > 0;) {
        if (s[k] != '"' || s[k + 1] != 'i' || s[k + 2] != 'd' || s[k + 3] != '"') continue;
        size_t i = k + 4;
        while (i < n && is_ws(s[i])) i++;
        if (i >= n || s[i] != ':') continue;
        i++;
        while (i < n && is_ws(s[i])) i++;
        size_t j = i;
        if (j < n && s[j] == '"') {
            const char *q = memchr(s + j + 1, '"', n - j - 1);
            j = q ? (size_t)(q - s) + 1 : j;
        } else {
            while (j < n && ((s[j] >= '0' && s[j] <= '9') || s[j] == '-' || s[j] == '+' || s[j] == '.' ||
                             (s[j] >= 'a' && s[j] <= 'z') || s[j] == 'E'))
                j++;
        }
        at = i, end = j;
        break;
    }
    uint64_t h = q_lanes_hash((const unsigned char *)s, at, 0, 0x6c696e65);
    h = q_lanes_hash((const unsigned char *)s + end, n - end, end, h);
    return h ? h : 1;
}
