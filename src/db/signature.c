/* Signatures (docs/FORMAT.md §3.5): slot alignment, shape
 * normalisation, MatMul canonicalisation (B stored either way round gives
 * one key), Index / Slice / Transpose input rewrites, DFC EP size. */
#include "opdb/signature.h"
#include "core/call.h"

#include <stdio.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "opdb/pystr.h"

#include "core/load_tail.h"

#define SEP '\x1f'
#define LOCAL_SLOTS 64

/* A cell's ';'-separated slots: on the stack, on the heap past LOCAL_SLOTS
 * (a grouped operator can take hundreds of tensors; none is dropped).
 * Never copied by value: v may point at local. */
typedef struct slots {
    opdb_span *v;
    int n, cap;
    opdb_span local[LOCAL_SLOTS];
} slots;

static void slots_init(slots *s) {
    s->v = s->local;
    s->n = 0;
    s->cap = LOCAL_SLOTS;
}

static void slots_push(slots *s, opdb_span x) {
    if (s->n == s->cap) {
        s->cap *= 2;
        if (s->v == s->local) {
            s->v = opdb_xmalloc((size_t)s->cap * sizeof *s->v);
            memcpy(s->v, s->local, sizeof s->local);
        } else {
            s->v = opdb_xrealloc(s->v, (size_t)s->cap * sizeof *s->v);
        }
    }
    s->v[s->n++] = x;
}

static void slots_free(slots *s) {
    if (s->v != s->local) free(s->v);
    slots_init(s);
}

static opdb_span strip_ws_quotes(opdb_span s) {
    s = opdb_py_strip(s);
    while (s.n && s.p[0] == '"') s.p++, s.n--;
    while (s.n && s.p[s.n - 1] == '"') s.n--;
    return s;
}

/* split_slots: strip; empty -> []; split on ';', strip each (empties kept). */
static void split_slots(opdb_span cell, slots *out) {
    slots_init(out);
    cell = strip_ws_quotes(cell);
    if (cell.n == 0) return;
    size_t start = 0;
    for (size_t i = 0; i <= cell.n; i++) {
        if (i < cell.n && cell.p[i] != ';') continue;
        slots_push(out, strip_ws_quotes(opdb_span_make(cell.p + start, i - start)));
        start = i + 1;
    }
}

/* The bytes norm_shape splits on: ',' and the ASCII whitespace of \s. */
static const unsigned char k_shape_sep[256] = {[','] = 1, [' '] = 1, ['\t'] = 1, ['\n'] = 1,
                                              ['\r'] = 1, ['\v'] = 1, ['\f'] = 1};

/* "()", "N/A", "NA", "NULL", "None", "none": shapes that mean "no tensor".
 * Tested by length first: nearly every shape is longer than four bytes. */
static bool is_placeholder(opdb_span s) {
    if (s.n < 2 || s.n > 4) return false;
    static const char *const empty[] = {"()", "N/A", "NA", "NULL", "None", "none"};
    for (size_t i = 0; i < sizeof empty / sizeof empty[0]; i++)
        if (strlen(empty[i]) == s.n && memcmp(s.p, empty[i], s.n) == 0) return true;
    return false;
}

/* norm_shape into buf: "" for placeholders, "(a, b)" -> "a,b". */
static size_t norm_shape(opdb_span s, char *buf, size_t cap) {
    s = strip_ws_quotes(s);
    if (is_placeholder(s)) return 0;
    if (s.n >= 2 && s.p[0] == '(' && s.p[s.n - 1] == ')') s = opdb_span_make(s.p + 1, s.n - 2);
    const unsigned char *u = (const unsigned char *)s.p;
    size_t o = 0;
    size_t i = 0;
    while (i < s.n) {
        while (i < s.n && k_shape_sep[u[i]]) i++;
        size_t st = i;
        while (i < s.n && !k_shape_sep[u[i]]) i++;
        if (i > st) {
            if (o && o < cap) buf[o++] = ',';
            size_t k = i - st < cap - o ? i - st : cap - o;
            memcpy(buf + o, s.p + st, k);
            o += k;
        }
    }
    return o;
}

typedef struct norm_slots {
    char *buf;      /* all normalised shapes back to back (heap only when big) */
    char local[512];
    size_t *off, *len; /* heap only past LOCAL_SLOTS */
    size_t local_off[LOCAL_SLOTS], local_len[LOCAL_SLOTS];
    int n;
} norm_slots;

/* Room for s's shapes, `bytes` in all. */
static void ns_alloc(norm_slots *ns, const slots *s, size_t bytes) {
    ns->buf = bytes + 1 <= sizeof ns->local ? ns->local : opdb_xmalloc(bytes + 1);
    ns->n = s->n;
    if (s->n <= LOCAL_SLOTS) {
        ns->off = ns->local_off;
        ns->len = ns->local_len;
    } else {
        ns->off = opdb_xmalloc((size_t)s->n * sizeof *ns->off);
        ns->len = opdb_xmalloc((size_t)s->n * sizeof *ns->len);
    }
}

static void normalise_shapes(const slots *s, norm_slots *ns) {
    size_t total = 0;
    for (int i = 0; i < s->n; i++) total += s->v[i].n + 1;
    ns_alloc(ns, s, total);
    size_t o = 0;
    for (int i = 0; i < s->n; i++) {
        ns->off[i] = o;
        ns->len[i] = norm_shape(s->v[i], ns->buf + o, s->v[i].n + 1);
        o += ns->len[i];
    }
}

/* ---- fast path
 * Nearly every cell a profiler or opdb writes is already in normal form:
 * printable ASCII without spaces, shapes of digits and commas, no empty
 * slots.  For those the general rules reduce to "shapes as they are, each
 * attribute cell cut to as many slots as its shapes have"; cells that are
 * not in that form (and the operators with rewrites) take the general path.
 * tests/unit/test_signature.c checks that both paths agree. */

enum { FC_BAD = 1, FC_SEMI = 2, FC_COMMA = 4, FC_DIGIT = 8, FC_PAREN = 16 };

/* FC_BAD: controls, space, '"', DEL and every non-ASCII byte. */
static const unsigned char k_fast_class[256] = {
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 0, 1, 0, 0, 0, 0, 0, 16, 16, 0, 0, 4, 0, 0, 0, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 0, 2, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
};

/* A cell in normal form: c->c is the cell without its surrounding quotes,
 * c->n its ';'-separated slot count (0 for an empty cell). Shapes: every
 * slot and every dimension starts with a digit, no parentheses. */
typedef struct cell_form {
    opdb_span c;
    int n;
    bool normal;
} cell_form;

/* The cell without its surrounding quotes; an empty one is in normal form. */
static cell_form unquoted(opdb_span c) {
    while (c.n && c.p[0] == '"') c.p++, c.n--;
    while (c.n && c.p[c.n - 1] == '"') c.n--;
    cell_form f = {c, 0, c.n == 0};
    return f;
}

static cell_form fast_cell_scalar(opdb_span c, bool shape) {
    cell_form f = unquoted(c);
    if (f.normal) return f;
    c = f.c;
    const unsigned char *u = (const unsigned char *)c.p;
    /* shapes: a slot or a dimension starts with a digit; attributes: a slot
     * starts with anything but ';' */
    const unsigned bad_mask = shape ? FC_BAD | FC_PAREN : FC_BAD;
    const unsigned sep_mask = shape ? FC_SEMI | FC_COMMA : FC_SEMI;
    const unsigned start_mask = shape ? FC_DIGIT : FC_SEMI, start_xor = shape ? FC_DIGIT : 0;
    unsigned bad = 0, at_start = 1;
    int n = 1;
    for (size_t i = 0; i < c.n; i++) {
        unsigned k = k_fast_class[u[i]];
        bad |= (k & bad_mask) | (at_start & (((k ^ start_xor) & start_mask) != 0));
        n += (k & FC_SEMI) != 0;
        at_start = (k & sep_mask) != 0;
    }
    f.n = n;
    f.normal = !bad && !at_start; /* no trailing ';' or ',' */
    return f;
}

#if defined(__SSE2__)
/* 16 bytes at a time: bit masks of the byte classes, as the CSV tokenizer. */
static inline uint32_t mask_of(__m128i eq) { return (uint32_t)_mm_movemask_epi8(eq); }

/* Set bits of a 16-bit mask (baseline x86-64 has no popcnt instruction). */
static inline int bits16(uint32_t x) {
    x = x - ((x >> 1) & 0x5555u);
    x = (x & 0x3333u) + ((x >> 2) & 0x3333u);
    x = (x + (x >> 4)) & 0x0F0Fu;
    return (int)((x + (x >> 8)) & 0x1Fu);
}

static cell_form fast_cell_simd(opdb_span c, bool shape) {
    cell_form f = unquoted(c);
    if (f.normal) return f;
    c = f.c;
    uint32_t bad = 0, carry = 1, last_sep = 0; /* carry: the next byte starts a slot */
    int semis = 0;
    for (size_t i = 0; i < c.n; i += 16) {
        size_t len = c.n - i < 16 ? c.n - i : 16;
        __m128i v = opdb_load_tail16(c.p + i, len);
        uint32_t valid = len == 16 ? 0xFFFFu : (1u << len) - 1;
        /* signed compare: bytes >= 0x80 are negative, so "< 0x21" takes them too */
        uint32_t junk = mask_of(_mm_cmplt_epi8(v, _mm_set1_epi8(0x21))) | mask_of(_mm_cmpeq_epi8(v, _mm_set1_epi8(0x7f))) |
                        mask_of(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')));
        if (shape)
            junk |= mask_of(_mm_cmpeq_epi8(v, _mm_set1_epi8('('))) | mask_of(_mm_cmpeq_epi8(v, _mm_set1_epi8(')')));
        uint32_t semi = mask_of(_mm_cmpeq_epi8(v, _mm_set1_epi8(';')));
        uint32_t sep = shape ? semi | mask_of(_mm_cmpeq_epi8(v, _mm_set1_epi8(','))) : semi;
        uint32_t digit = mask_of(_mm_andnot_si128(_mm_cmplt_epi8(v, _mm_set1_epi8('0')), _mm_cmplt_epi8(v, _mm_set1_epi8(':'))));
        uint32_t starts = ((sep << 1) | carry) & valid;
        bad |= (junk & valid) | (shape ? starts & ~digit : starts & semi);
        semis += bits16(semi & valid);
        carry = (sep >> 15) & 1;
        last_sep = (sep >> (len - 1)) & 1;
    }
    f.n = semis + 1;
    f.normal = !bad && !last_sep; /* no trailing ';' or ',' */
    return f;
}
#define fast_cell fast_cell_simd
#else
#define fast_cell fast_cell_scalar
#endif

int opdb_sig_cell_slots(opdb_span c, bool shape, bool simd) {
    cell_form f = simd ? fast_cell(c, shape) : fast_cell_scalar(c, shape);
    return f.normal ? f.n : -1;
}

/* split_slots; for a cell in normal form (f, when given, says) a plain
 * split on ';'. */
static void split_cell(opdb_span cell, const cell_form *f, slots *out, bool *normal) {
    *normal = f && f->normal;
    if (!*normal) {
        split_slots(cell, out);
        return;
    }
    opdb_span c = f->c;
    slots_init(out);
    for (int k = 0; k < f->n; k++) {
        const char *semi = k + 1 < f->n ? memchr(c.p, ';', c.n) : NULL;
        size_t len = semi ? (size_t)(semi - c.p) : c.n;
        slots_push(out, opdb_span_make(c.p, len));
        c.p += len + (semi != NULL);
        c.n -= len + (semi != NULL);
    }
}

/* normalise_shapes for slots in normal form: the shapes as they are. */
static void copy_shapes(const slots *s, norm_slots *ns) {
    size_t total = 0;
    for (int i = 0; i < s->n; i++) total += s->v[i].n;
    ns_alloc(ns, s, total);
    size_t o = 0;
    for (int i = 0; i < s->n; i++) {
        ns->off[i] = o;
        ns->len[i] = s->v[i].n;
        memcpy(ns->buf + o, s->v[i].p, s->v[i].n);
        o += s->v[i].n;
    }
}

static void shapes_of(const slots *s, bool normal, norm_slots *ns) {
    if (normal) copy_shapes(s, ns);
    else normalise_shapes(s, ns);
}

static void ns_free(norm_slots *ns) {
    if (ns->buf != ns->local) free(ns->buf);
    if (ns->off != ns->local_off) free(ns->off);
    if (ns->len != ns->local_len) free(ns->len);
}

/* align(shapes, attrs): appends "<shapes>" SEP "<attrs>" pieces as asked. */
static void align(const norm_slots *sh, const slots *at, opdb_strbuf *shape_out, opdb_strbuf *attr_out) {
    int n = sh->n > at->n ? sh->n : at->n;
    if (shape_out) {
        int last = -1;
        for (int i = 0; i < sh->n; i++)
            if (sh->len[i]) last = i;
        for (int i = 0; i <= last; i++) {
            if (i) opdb_sb_addc(shape_out, ';');
            opdb_sb_add(shape_out, sh->buf + sh->off[i], sh->len[i]);
        }
    }
    if (attr_out) {
        int last = -1;
        for (int i = 0; i < n; i++) {
            bool shape_present = i < sh->n && sh->len[i];
            if (shape_present && i < at->n && at->v[i].n) last = i;
        }
        for (int i = 0; i <= last; i++) {
            if (i) opdb_sb_addc(attr_out, ';');
            bool shape_present = i < sh->n && sh->len[i];
            if (shape_present && i < at->n) opdb_sb_add(attr_out, at->v[i].p, at->v[i].n);
        }
    }
}

size_t opdb_normalize_op_name(const char *name, size_t n, char *out, size_t cap) {
    opdb_span s = opdb_py_strip(opdb_span_make(name, n));
    static const char *const suffixes[] = {"_run.py", "_run", ".csv"};
    for (size_t i = 0; i < 3; i++) {
        size_t k = strlen(suffixes[i]);
        if (s.n >= k && memcmp(s.p + s.n - k, suffixes[i], k) == 0) {
            s.n -= k;
            break;
        }
    }
    size_t m = s.n < cap - 1 ? s.n : cap - 1;
    memcpy(out, s.p, m);
    out[m] = '\0';
    return m;
}

int opdb_is_matmul_family(const char *op) {
#define MATMUL_IS(name) strcmp(op, name) == 0 ||
    return OPDB_MATMUL_FAMILY_LIST(MATMUL_IS) 0;
#undef MATMUL_IS
}

/* A normalised 2-D shape "a,b" of integers. */
static bool dims2(const char *p, size_t n, long long d[2]) {
    const char *comma = memchr(p, ',', n);
    if (!comma || memchr(comma + 1, ',', n - (size_t)(comma - p) - 1)) return false;
    return opdb_py_int(p, (size_t)(comma - p), &d[0]) && opdb_py_int(comma + 1, n - (size_t)(comma - p) - 1, &d[1]);
}

/* Appends the decimal form of v (what "%lld" prints). */
static void add_ll(opdb_strbuf *out, long long v) {
    char tmp[24];
    int i = (int)sizeof tmp;
    unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
    do {
        tmp[--i] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0) tmp[--i] = '-';
    opdb_sb_add(out, tmp + i, sizeof tmp - (size_t)i);
}

/* Appends "a,b". */
static void add_pair(opdb_strbuf *out, long long a, long long b) {
    add_ll(out, a);
    opdb_sb_addc(out, ',');
    add_ll(out, b);
}

static void join_first_two(const slots *s, opdb_strbuf *out) {
    for (int i = 0; i < s->n && i < 2; i++) {
        if (i) opdb_sb_addc(out, ';');
        opdb_sb_add(out, s->v[i].p, s->v[i].n);
    }
}

/* The reduction dimension k of A x B -> O (m, n): the one the two inputs
 * share, as the reference picks it; false when it cannot tell. */
static bool matmul_k(const long long A[2], const long long B[2], const long long O[2], long long *k) {
    long long m = O[0], n = O[1];
    if (A[0] == m && ((B[0] == n && A[1] == B[1]) || (B[1] == n && A[1] == B[0]))) {
        *k = A[1];
        return true;
    }
    /* common = set(A) & set(B); candidates = common - {m, n} */
    long long common[2];
    int nc = 0;
    for (int i = 0; i < 2; i++) {
        if (i == 1 && A[1] == A[0]) break;
        if ((A[i] == B[0] || A[i] == B[1])) common[nc++] = A[i];
    }
    long long cand[2];
    int ncand = 0;
    for (int i = 0; i < nc; i++)
        if (common[i] != m && common[i] != n) cand[ncand++] = common[i];
    if (ncand == 1) {
        *k = cand[0];
        return true;
    }
    if (nc == 1) {
        *k = common[0];
        return true;
    }
    return false;
}

static bool matmul_signature(const opdb_sig_cells *c, const cell_form *f, opdb_strbuf *out) {
    slots in, out_s;
    bool in_normal, out_normal, unused;
    split_cell(c->in_shapes, f ? &f[0] : NULL, &in, &in_normal);
    split_cell(c->out_shapes, f ? &f[3] : NULL, &out_s, &out_normal);
    if (in.n < 2 || out_s.n < 1) {
        slots_free(&in);
        slots_free(&out_s);
        return false;
    }
    norm_slots ni, no;
    shapes_of(&in, in_normal, &ni);
    shapes_of(&out_s, out_normal, &no);
    long long A[2], B[2], O[2];
    bool ok = dims2(ni.buf + ni.off[0], ni.len[0], A) && dims2(ni.buf + ni.off[1], ni.len[1], B) &&
              dims2(no.buf + no.off[0], no.len[0], O);
    long long k = 0;
    bool have_k = ok && matmul_k(A, B, O, &k);
    if (ok) {
        long long m = O[0], n = O[1];
        if (have_k) {
            slots dt, fm, odt;
            split_cell(c->in_dtypes, f ? &f[1] : NULL, &dt, &unused);
            split_cell(c->in_formats, f ? &f[2] : NULL, &fm, &unused);
            split_cell(c->out_dtypes, f ? &f[4] : NULL, &odt, &unused);
            add_pair(out, m, k);
            opdb_sb_addc(out, ';');
            add_pair(out, n, k);
            opdb_sb_addc(out, SEP);
            join_first_two(&dt, out);
            opdb_sb_addc(out, SEP);
            join_first_two(&fm, out);
            opdb_sb_addc(out, SEP);
            add_pair(out, m, n);
            opdb_sb_addc(out, SEP);
            align(&no, &odt, NULL, out);
            slots_free(&dt);
            slots_free(&fm);
            slots_free(&odt);
        }
    }
    ns_free(&ni);
    ns_free(&no);
    slots_free(&in);
    slots_free(&out_s);
    return have_k;
}

/* The rules; with f (the forms of in_shapes, in_dtypes, in_formats,
 * out_shapes, out_dtypes), cells in normal form skip stripping and
 * normalising, which would leave them as they are. */
static void signature_rules(const opdb_sig_cells *c, const char *op, const cell_form *f, opdb_strbuf *out) {
    opdb_sb_clear(out);
    if (opdb_is_matmul_family(op) && matmul_signature(c, f, out)) return;
    opdb_sb_clear(out);

    slots in, dt, fm, osh, odt;
    bool in_normal, out_normal, unused;
    split_cell(c->in_shapes, f ? &f[0] : NULL, &in, &in_normal);
    split_cell(c->in_dtypes, f ? &f[1] : NULL, &dt, &unused);
    split_cell(c->in_formats, f ? &f[2] : NULL, &fm, &unused);
    split_cell(c->out_shapes, f ? &f[3] : NULL, &osh, &out_normal);
    split_cell(c->out_dtypes, f ? &f[4] : NULL, &odt, &unused);
    norm_slots no;
    shapes_of(&osh, out_normal, &no);
    char index_slot[64];
    if (strcmp(op, "Index") == 0) {
        /* inputs become [slot0, first output dim], dtypes/formats [first, last] */
        const char *o0 = no.n ? no.buf + no.off[0] : "";
        size_t o0n = no.n ? no.len[0] : 0;
        if (o0n && in.n) {
            const char *comma = memchr(o0, ',', o0n);
            size_t dn = comma ? (size_t)(comma - o0) : o0n;
            snprintf(index_slot, sizeof index_slot, "%.*s", (int)dn, o0);
            in.v[1] = opdb_span_cstr(index_slot);
            in_normal = false; /* the new slot comes from the output shape */
            in.n = 2;
            if (dt.n) {
                dt.v[1] = dt.v[dt.n - 1];
                dt.n = 2;
            }
            if (fm.n) {
                fm.v[1] = fm.v[fm.n - 1];
                fm.n = 2;
            }
        }
    } else if (strcmp(op, "Slice") == 0 || strcmp(op, "SliceAiCore") == 0 || strcmp(op, "Transpose") == 0 ||
               strcmp(op, "TransposeAiCore") == 0) {
        if (in.n > 1) in.n = 1;
        if (dt.n > 1) dt.n = 1;
        fm.n = 1;
        fm.v[0] = opdb_span_cstr("ND");
    }
    norm_slots ni;
    shapes_of(&in, in_normal, &ni);
    align(&ni, &dt, out, NULL);
    opdb_sb_addc(out, SEP);
    align(&ni, &dt, NULL, out);
    opdb_sb_addc(out, SEP);
    align(&ni, &fm, NULL, out);
    opdb_sb_addc(out, SEP);
    align(&no, &odt, out, NULL);
    opdb_sb_addc(out, SEP);
    align(&no, &odt, NULL, out);
    if (strcmp(op, "DispatchFFNCombine") == 0) {
        opdb_span ep = opdb_py_strip(c->ep_size);
        opdb_sb_addc(out, SEP);
        opdb_sb_add(out, ep.p, ep.n);
    }
    ns_free(&ni);
    ns_free(&no);
    slots_free(&in);
    slots_free(&dt);
    slots_free(&fm);
    slots_free(&osh);
    slots_free(&odt);
}

/* The reference's rules (a MatMul signature keeps two inputs) or opdb's: a
 * mode of the call in force (opdb_update_opts.reference_signatures, bench's
 * quirks), carried into its worker threads. */
static void append_matmul_extras(const opdb_sig_cells *c, opdb_strbuf *out);

void opdb_signature_general(const opdb_sig_cells *c, const char *op_raw, opdb_strbuf *out) {
    char op[256];
    opdb_span o = strip_ws_quotes(opdb_span_cstr(op_raw));
    opdb_normalize_op_name(o.p, o.n, op, sizeof op);
    signature_rules(c, op, NULL, out);
    if (!opdb_call_reference_signatures() && opdb_is_matmul_family(op)) append_matmul_extras(c, out);
}

/* The first k ';'-separated slots of an attribute cell. */
static void add_slots(opdb_strbuf *out, opdb_span attrs, int nattr, int k) {
    if (k >= nattr) {
        opdb_sb_add(out, attrs.p, attrs.n);
        return;
    }
    size_t i = 0;
    for (int seen = 0; i < attrs.n; i++)
        if (attrs.p[i] == ';' && ++seen == k) break;
    opdb_sb_add(out, attrs.p, k > 0 ? i : 0);
}


/* Slot k (< f->n) of a cell in normal form. */
static opdb_span slot_at(const cell_form *f, int k) {
    opdb_span c = f->c;
    for (int i = 0; i < k; i++) {
        size_t skip = (size_t)((const char *)memchr(c.p, ';', c.n) - c.p) + 1;
        c.p += skip;
        c.n -= skip;
    }
    const char *semi = memchr(c.p, ';', c.n);
    if (semi) c.n = (size_t)(semi - c.p);
    return c;
}

/* A shape "a,b" of plain digits (at most 18 each): what dims2 reads from it.
 * False for any other form, which the general rules then judge. */
static bool dims2_digits(opdb_span s, long long d[2]) {
    int k = 0, nd = 0;
    long long v = 0;
    for (size_t i = 0; i < s.n; i++) {
        unsigned dig = (unsigned)(unsigned char)s.p[i] - '0';
        if (s.p[i] == ',') {
            if (k == 1 || nd == 0) return false;
            d[k++] = v;
            v = 0;
            nd = 0;
        } else if (dig > 9 || ++nd > 18) {
            return false;
        } else {
            v = v * 10 + (long long)dig;
        }
    }
    if (k != 1 || nd == 0) return false;
    d[1] = v;
    return true;
}

/* Index's attribute cells: the first slot and the last one. */
static void add_first_last(opdb_strbuf *out, const cell_form *f) {
    if (f->n == 0) return;
    opdb_span last = slot_at(f, f->n - 1);
    opdb_sb_add(out, f->c.p, slot_at(f, 0).n);
    opdb_sb_addc(out, ';');
    opdb_sb_add(out, last.p, last.n);
}

/* signature_rules' rewrites for cells in normal form (every slot present,
 * shapes as they are), without splitting or copying them: MatMul family,
 * Index, Slice and Transpose.  False where the general rules must decide
 * (a MatMul shape that is not two plain integers, no k, empty inputs). */
static bool signature_fast_rewrites(const char *op, const cell_form *f, opdb_strbuf *out) {
    opdb_sb_clear(out);
    if (opdb_is_matmul_family(op)) {
        long long A[2], B[2], O[2], k;
        if (f[0].n < 2 || f[3].n < 1 || !dims2_digits(slot_at(&f[0], 0), A) || !dims2_digits(slot_at(&f[0], 1), B) ||
            !dims2_digits(slot_at(&f[3], 0), O) || !matmul_k(A, B, O, &k))
            return false;
        add_pair(out, O[0], k);
        opdb_sb_addc(out, ';');
        add_pair(out, O[1], k);
        opdb_sb_addc(out, SEP);
        add_slots(out, f[1].c, f[1].n, 2);
        opdb_sb_addc(out, SEP);
        add_slots(out, f[2].c, f[2].n, 2);
        opdb_sb_addc(out, SEP);
        add_pair(out, O[0], O[1]);
        opdb_sb_addc(out, SEP);
        add_slots(out, f[4].c, f[4].n, f[3].n);
        return true;
    }
    if (strcmp(op, "Index") == 0) {
        /* inputs become [slot 0, first output dim], dtypes/formats [first, last] */
        if (f[0].n == 0 || f[3].n == 0) return false;
        opdb_span o0 = slot_at(&f[3], 0);
        const char *comma = memchr(o0.p, ',', o0.n);
        size_t dn = comma ? (size_t)(comma - o0.p) : o0.n;
        if (dn > 63) return false; /* the general rules cut it to 63 bytes */
        opdb_sb_add(out, f[0].c.p, slot_at(&f[0], 0).n);
        opdb_sb_addc(out, ';');
        opdb_sb_add(out, o0.p, dn);
        opdb_sb_addc(out, SEP);
        add_first_last(out, &f[1]);
        opdb_sb_addc(out, SEP);
        add_first_last(out, &f[2]);
    } else { /* Slice, Transpose (has_rewrites): the first input only, format ND */
        int nin = f[0].n > 0;
        opdb_sb_add(out, f[0].c.p, nin ? slot_at(&f[0], 0).n : 0);
        opdb_sb_addc(out, SEP);
        add_slots(out, f[1].c, f[1].n, nin);
        opdb_sb_addc(out, SEP);
        if (nin) opdb_sb_add(out, "ND", 2);
    }
    opdb_sb_addc(out, SEP);
    opdb_sb_add(out, f[3].c.p, f[3].c.n);
    opdb_sb_addc(out, SEP);
    add_slots(out, f[4].c, f[4].n, f[3].n);
    return true;
}

/* A shape cell (outer quotes dropped) that is not in normal form only for
 * its empty slots (inputs or outputs left out: "a;;b", "a;b;"): each other
 * slot in normal form, as it is. */
static bool shapes_with_gaps(opdb_span c) {
    for (;;) {
        const char *semi = memchr(c.p, ';', c.n);
        size_t len = semi ? (size_t)(semi - c.p) : c.n;
        if (len) {
            cell_form f = fast_cell(opdb_span_make(c.p, len), true);
            if (!f.normal || f.n != 1 || f.c.n != len) return false;
        }
        if (!semi) return true;
        c.p += len + 1;
        c.n -= len + 1;
    }
}

/* align()'s shapes: up to the last non-empty slot. */
static opdb_span trailing_gaps_dropped(opdb_span c) {
    while (c.n && c.p[c.n - 1] == ';') c.n--;
    return c;
}

/* align()'s attributes for shapes that may have empty slots: slot i of an
 * attribute cell in normal form where shape i is present, "" where not,
 * up to the last slot that has both. */
static void add_aligned_attrs(opdb_strbuf *out, opdb_span shapes, opdb_span attrs) {
    if (!attrs.n || !shapes.n) return;
    const char *sp = shapes.p, *se = shapes.p + shapes.n, *ap = attrs.p, *ae = attrs.p + attrs.n;
    size_t keep = out->n; /* the output up to the last slot written */
    for (bool first = true; sp <= se && ap <= ae; first = false) {
        const char *s_end = memchr(sp, ';', (size_t)(se - sp)), *a_end = memchr(ap, ';', (size_t)(ae - ap));
        if (!s_end) s_end = se;
        if (!a_end) a_end = ae;
        if (!first) opdb_sb_addc(out, ';');
        if (s_end > sp) {
            opdb_sb_add(out, ap, (size_t)(a_end - ap));
            keep = out->n;
        }
        sp = s_end + 1;
        ap = a_end + 1;
    }
    out->n = keep;
    if (out->p) out->p[keep] = '\0';
}

/* The attribute cell a aligned with the shape cell sh (both as classified). */
static void add_attrs(opdb_strbuf *out, const cell_form *sh, const cell_form *a, bool gaps) {
    if (gaps) add_aligned_attrs(out, sh->c, a->c);
    else add_slots(out, a->c, a->n, sh->n);
}

/* No rewrites, attribute cells in normal form, shape cells in normal form
 * (gaps: or with empty slots): the shapes as they are (trailing empty slots
 * dropped), each attribute cell cut to the slots its shapes have. */
static void signature_fast(const opdb_sig_cells *c, const char *op, const cell_form *f, bool gaps, opdb_strbuf *out) {
    opdb_span in = trailing_gaps_dropped(f[0].c), os = trailing_gaps_dropped(f[3].c);
    opdb_sb_clear(out);
    opdb_sb_add(out, in.p, in.n);
    opdb_sb_addc(out, SEP);
    add_attrs(out, &f[0], &f[1], gaps);
    opdb_sb_addc(out, SEP);
    add_attrs(out, &f[0], &f[2], gaps);
    opdb_sb_addc(out, SEP);
    opdb_sb_add(out, os.p, os.n);
    opdb_sb_addc(out, SEP);
    add_attrs(out, &f[3], &f[4], gaps);
    if (strcmp(op, "DispatchFFNCombine") == 0) {
        opdb_span ep = opdb_py_strip(c->ep_size);
        opdb_sb_addc(out, SEP);
        opdb_sb_add(out, ep.p, ep.n);
    }
}

/* Operators whose signature rewrites cells: always the general path. */
static bool has_rewrites(const char *op) {
    return opdb_is_matmul_family(op) || strcmp(op, "Index") == 0 || strcmp(op, "Slice") == 0 ||
           strcmp(op, "SliceAiCore") == 0 || strcmp(op, "Transpose") == 0 || strcmp(op, "TransposeAiCore") == 0;
}

/* An operator name as the rules see it: normalised, and whether it has
 * rewrites.  Signatures are taken row after row for a few dozen names, so
 * each thread keeps the last ones (keyed by the name's text). */
typedef struct op_rules {
    char raw[48];
    char op[256];
    bool rewrites;
} op_rules;

static const op_rules *rules_for(const char *op_raw) {
    static _Thread_local op_rules cache[32];
    size_t n = strlen(op_raw);
    op_rules *e = &cache[(n * 31 + (n ? (unsigned char)op_raw[0] * 7u + (unsigned char)op_raw[n - 1] : 0u)) & 31];
    if (n < sizeof e->raw && e->op[0] && memcmp(e->raw, op_raw, n + 1) == 0) return e;
    static _Thread_local op_rules one; /* names too long to cache */
    op_rules *r = n < sizeof e->raw ? e : &one;
    opdb_span o = strip_ws_quotes(opdb_span_make(op_raw, n));
    opdb_normalize_op_name(o.p, o.n, r->op, sizeof r->op);
    r->rewrites = has_rewrites(r->op);
    if (r == e) memcpy(e->raw, op_raw, n + 1);
    if (!r->op[0]) { /* an empty name: not a cache entry (op[0] marks one) */
        one = *r;
        memset(e, 0, sizeof *e);
        return &one;
    }
    return r;
}

int opdb_signature_class(const char *op_raw) {
    const char *op = rules_for(op_raw)->op;
    if (opdb_is_matmul_family(op)) return 1;
    if (strcmp(op, "Index") == 0) return 2;
    if (has_rewrites(op)) return 3; /* Slice, SliceAiCore, Transpose, TransposeAiCore */
    if (strcmp(op, "DispatchFFNCombine") == 0) return 4;
    return 0;
}


/* opdb's rule: a MatMul-family row's inputs past the first two (a bias) are
 * part of its identity -- the consumer compares every input
 * (docs/ROW-IDENTITY.md). Appended as one more element only when such an
 * input exists, so two-input signatures are the reference's. Equal cells give equal extras. */
static void append_matmul_extras(const opdb_sig_cells *c, opdb_strbuf *out) {
    slots in, dt;
    bool unused;
    split_cell(c->in_shapes, NULL, &in, &unused);
    if (in.n > 2) {
        norm_slots ni;
        shapes_of(&in, false, &ni);
        split_cell(c->in_dtypes, NULL, &dt, &unused);
        int last = -1;
        for (int i = 2; i < ni.n; i++)
            if (ni.len[i]) last = i;
        if (last >= 2) {
            opdb_sb_addc(out, SEP);
            opdb_sb_adds(out, "extra inputs ");
            for (int i = 2; i <= last; i++) {
                if (i > 2) opdb_sb_addc(out, ';');
                opdb_sb_add(out, ni.buf + ni.off[i], ni.len[i]);
                if (ni.len[i] && i < dt.n) {
                    opdb_sb_addc(out, ' ');
                    opdb_sb_add(out, dt.v[i].p, dt.v[i].n);
                }
            }
        }
        slots_free(&dt);
        ns_free(&ni);
    }
    slots_free(&in);
}

static void signature_dispatch(const opdb_sig_cells *c, const char *op_raw, opdb_strbuf *out) {
    const op_rules *rules = rules_for(op_raw);
    const char *op = rules->op;
    cell_form f[5] = {fast_cell(c->in_shapes, true), fast_cell(c->in_dtypes, false), fast_cell(c->in_formats, false),
                      fast_cell(c->out_shapes, true), fast_cell(c->out_dtypes, false)};
    bool attrs = f[1].normal && f[2].normal && f[4].normal, normal = attrs && f[0].normal && f[3].normal;
    if (normal && !rules->rewrites) signature_fast(c, op, f, false, out);
    else if (normal && signature_fast_rewrites(op, f, out)) return;
    else if (attrs && !rules->rewrites && (f[0].normal || shapes_with_gaps(f[0].c)) &&
             (f[3].normal || shapes_with_gaps(f[3].c)))
        signature_fast(c, op, f, true, out);
    else signature_rules(c, op, f, out);
}

void opdb_signature(const opdb_sig_cells *c, const char *op_raw, opdb_strbuf *out) {
    signature_dispatch(c, op_raw, out);
    if (!opdb_call_reference_signatures() && opdb_is_matmul_family(rules_for(op_raw)->op)) append_matmul_extras(c, out);
}

void opdb_signature_display(const opdb_sig_cells *c, opdb_strbuf *out) {
    opdb_sb_clear(out);
    if (c->in_shapes.n) opdb_sb_add(out, c->in_shapes.p, c->in_shapes.n);
    else opdb_sb_adds(out, "N/A");
    opdb_sb_adds(out, " -> ");
    if (c->out_shapes.n) opdb_sb_add(out, c->out_shapes.p, c->out_shapes.n);
    else opdb_sb_adds(out, "N/A");
}
