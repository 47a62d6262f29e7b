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
} rd;

static bool is_ws(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

static void ws(rd *r) {
    while (r->i < r->n && is_ws(r->s[r->i])) r->i++;
}

/* bytes a plain string holds as they are: printable ASCII but the quote and backslash */
#define QD_PLAIN(c) ((c) >= 0x20 && (c) < 0x80 && (c) != '"' && (c) != '\\')
#define QD_PLAIN4(b) QD_PLAIN(b), QD_PLAIN(b + 1), QD_PLAIN(b + 2), QD_PLAIN(b + 3)
#define QD_PLAIN16(b) QD_PLAIN4(b), QD_PLAIN4(b + 4), QD_PLAIN4(b + 8), QD_PLAIN4(b + 12)
static const bool k_plain[256] = {QD_PLAIN16(0x00), QD_PLAIN16(0x10), QD_PLAIN16(0x20), QD_PLAIN16(0x30),
                                  QD_PLAIN16(0x40), QD_PLAIN16(0x50), QD_PLAIN16(0x60), QD_PLAIN16(0x70)};

/* 8 bytes of a plain string, none of them its end: no quote, backslash,
 * control byte or non-ASCII byte (each test is exact about whether any byte
 * matches, which is all that is asked) */
static bool plain8(const char *p) {
    const uint64_t ones = 0x0101010101010101ULL, high = 0x8080808080808080ULL;
    uint64_t w;
    memcpy(&w, p, 8);
    uint64_t q = w ^ (ones * '"'), b = w ^ (ones * '\\');
    return ((((q - ones) & ~q) | ((b - ones) & ~b) | (w - ones * 0x20) | w) & high) == 0;
}

/* past the plain bytes from j */
static size_t plain_run(const char *s, size_t j, size_t n) {
    while (n - j >= 8 && plain8(s + j)) j += 8;
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

static qv *node(rd *r, qv_kind k) { return qv_new(r->a, k); }

/* n items of a stack array into a new block, 4 at a time: a copy of a length
 * known only at run time becomes `rep movs`, whose start-up costs more than
 * a query line's few items (the block and the array hold n rounded up to 4) */
static void *copy_out(opdb_arena *a, const void *src, size_t n, size_t size) {
    size_t m = (n + 3) & ~(size_t)3;
    char *d = opdb_arena_alloc(a, (m ? m : 4) * size);
    for (size_t k = 0; k < m; k += 4) memcpy(d + k * size, (const char *)src + k * size, 4 * size);
    return d;
}

/* JSON's number grammar; the value as the general reader makes it */
static qv *num(rd *r) {
    size_t j = r->i, n = r->n;
    const char *s = r->s;
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
                    size_t j = r->i;
                    int64_t x = 0;
                    while (j < r->n && r->s[j] >= '0' && r->s[j] <= '9' && j - r->i < 18) x = x * 10 + (r->s[j++] - '0');
                    size_t dl = j - r->i;
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
    v->shape.d = copy_out(r->a, dims, rank, sizeof *dims);
    v->shape.rank = rank;
    v->dtype = dtype;
    return v;
}

/* {"shape":[dims],"dtype":"name"} written without spaces, as json.dumps with
 * compact separators writes it: read as literal pieces, r->i at the '{'.
 * NULL, r untouched, for anything else (tensor() reads it then). */
static qv *tensor_compact(rd *r) {
    static const char open[] = "{\"shape\":[", mid[] = "],\"dtype\":\"";
    const char *s = r->s;
    size_t n = r->n, j = r->i;
    if (n - j < sizeof open - 1 || memcmp(s + j, open, sizeof open - 1) != 0) return NULL;
    j += sizeof open - 1;
    /* the dims read straight into their block (a copy of a run-time length costs more) */
    int64_t *dims = opdb_arena_alloc(r->a, QD_COMPACT_RANK * sizeof *dims);
    uint32_t rank = 0;
    if (j < n && s[j] != ']') {
        for (;;) {
            /* a dimension as tensor() reads it: 1 to 17 digits, no leading zero */
            size_t d0 = j;
            int64_t x = 0;
            while (j < n && (unsigned)(s[j] - '0') < 10 && j - d0 < 18) x = x * 10 + (s[j++] - '0');
            size_t dl = j - d0;
            if (dl == 0 || dl >= 18 || (dl > 1 && s[d0] == '0') || rank == QD_COMPACT_RANK) return NULL;
            dims[rank++] = x;
            if (j < n && s[j] == ',') {
                j++;
                continue;
            }
            break;
        }
    }
    if (n - j < sizeof mid - 1 || memcmp(s + j, mid, sizeof mid - 1) != 0) return NULL;
    j += sizeof mid - 1;
    int dtype;
    if (n - j >= 10 && memcmp(s + j, "bfloat16\"}", 10) == 0) {
        dtype = QDT_BF16;
        j += 10;
    } else {
        size_t d0 = j;
        j = plain_run(s, j, n);
        if (n - j < 2 || s[j] != '"' || s[j + 1] != '}') return NULL;
        dtype = q_dtype_parse(s + d0, j - d0);
        if (dtype < 0) return NULL;
        j += 2;
    }
    qv *v = node(r, QV_TENSOR);
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
                qv *x = value(r, depth + 1, tensors);
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
        if (k) v->items = copy_out(r->a, items, k, sizeof *items);
        v->n = v->cap = k;
        return v;
    }
    if (c == '"') {
        const char *p;
        size_t len;
        if (!str(r, &p, &len)) return NULL;
        qv *v = node(r, QV_STR);
        v->s = opdb_arena_strndup(r->a, p, len);
        v->n = len;
        return v;
    }
    if (lit(r, "true", 4) || lit(r, "false", 5)) {
        qv *v = node(r, QV_BOOL);
        v->b = c == 't';
        return v;
    }
    if (lit(r, "null", 4)) return node(r, QV_NULL);
    return num(r);
}

int q_line_direct(opdb_arena *a, const char *s, size_t n, q_query *q) {
    rd r = {s, 0, n, a};
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
        const char *k;
        size_t kl;
        if (r.i >= n || s[r.i] != '"' || !str(&r, &k, &kl)) return 0;
        ws(&r);
        if (r.i >= n || s[r.i] != ':') return 0;
        r.i++;
        ws(&r);
        unsigned m = kl == 2 && memcmp(k, "op", 2) == 0       ? M_OP
                     : kl == 2 && memcmp(k, "id", 2) == 0     ? M_ID
                     : kl == 4 && memcmp(k, "args", 4) == 0   ? M_ARGS
                     : kl == 3 && memcmp(k, "out", 3) == 0    ? M_OUT
                     : kl == 6 && memcmp(k, "kwargs", 6) == 0 ? M_KW
                                                              : 0;
        if (!m || (seen & m)) return 0; /* another member, or one given twice */
        seen |= m;
        if (m == M_OP) {
            const char *p;
            size_t len;
            if (r.i >= n || s[r.i] != '"' || !str(&r, &p, &len)) return 0;
            char *op = opdb_arena_strndup(a, p, len);
            q->op = len >= 10 && memcmp(op, "torch.ops.", 10) == 0 ? op + 10 : op;
        } else if (m == M_ID) {
            if (!(q->id = value(&r, 1, false))) return 0;
        } else if (m == M_ARGS) {
            if (r.i >= n || s[r.i] != '[') return 0;
            if (!(q->args = value(&r, 1, true))) return 0;
        } else if (m == M_OUT) {
            if (!(out = value(&r, 1, true))) return 0;
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

/* four independent lanes: a line hashes in a few cycles per word */
static uint64_t lanes(const unsigned char *p, size_t n, uint64_t seed) {
    const uint64_t K = 0xbf58476d1ce4e5b9ULL;
    uint64_t a = seed ^ 0x9e3779b97f4a7c15ULL, b = seed + n, c = ~seed, d = seed * K;
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
    for (size_t i = 0; i < n; i++) t |= (uint64_t)p[i] << (8 * i);
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
    uint64_t h = lanes((const unsigned char *)s, at, 0x6c696e65);
    h = lanes((const unsigned char *)s + end, n - end, h);
    return h ? h : 1;
}
