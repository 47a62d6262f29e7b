/* The wrapper's shared machinery: regime keys, the per-table point indexes
 * (built once, cached on the table), the regime match, and the cell helpers
 * the point builders use. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opdb/json_writer.h"
#include "opdb/pystr.h"
#include "core/alloc.h"
#include "query/interp_internal.h"

/* ------------------------------------------------------------------ keys */
/* Field i is "\x1e" name "\x1f" value; numbers "#<%.17g>", strings "'<text>",
 * tuples "(" items each followed by "\x1d" ")". */
void ip_kb_init(ip_kb *k) {
    k->n = 0;
    k->over = false;
    k->nf = 0;
    k->depth = 0;
    k->s[0] = 0;
}

/* room for n more bytes (and the closing NUL) at the key's end: where they go, NULL when the
 * key overflows (then it stays over) */
static inline char *room(ip_kb *k, size_t n) {
    if (k->over || k->n + n + 1 > IP_KEYCAP) {
        k->over = true;
        return NULL;
    }
    return k->s + k->n;
}

/* n bytes from s to d: short runs (the usual names, dtypes and formats) as two overlapping
 * words, never a byte outside either run */
static inline void copy_small(char *d, const char *s, size_t n) {
    if (n >= 8 && n <= 16) {
        uint64_t a, b;
        memcpy(&a, s, 8);
        memcpy(&b, s + n - 8, 8);
        memcpy(d, &a, 8);
        memcpy(d + n - 8, &b, 8);
    } else if (n >= 4 && n < 8) {
        uint32_t a, b;
        memcpy(&a, s, 4);
        memcpy(&b, s + n - 4, 4);
        memcpy(d, &a, 4);
        memcpy(d + n - 4, &b, 4);
    } else if (n < 4) {
        for (size_t i = 0; i < n; i++) d[i] = s[i];
    } else {
        memcpy(d, s, n);
    }
}

/* n bytes were written at room's pointer */
static inline void grew(ip_kb *k, size_t n) {
    k->n += n;
    k->s[k->n] = 0;
}

/* put for bytes without parentheses (numbers, field names, separators) */
static void put_plain(ip_kb *k, const char *p, size_t n) {
    char *d = room(k, n);
    if (!d) return;
    copy_small(d, p, n);
    grew(k, n);
}

/* '(' minus ')' in p: eight bytes at a time, a byte by itself only in a word that holds one
 * ('(' and ')' differ in the low bit alone) */
static int paren_delta(const char *p, size_t n) {
    const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
    int d = 0;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        uint64_t x = (w | ones) ^ (ones * 0x29); /* a zero byte where the byte is 0x28 or 0x29 */
        if (!((x - ones) & ~x & highs)) continue;
        for (size_t j = i; j < i + 8; j++) d += p[j] == '(' ? 1 : p[j] == ')' ? -1 : 0;
    }
    for (; i < n; i++) d += p[i] == '(' ? 1 : p[i] == ')' ? -1 : 0;
    return d;
}

/* inside a tuple: more `(` than `)` in the current field's text (the whole key before the first field) */
static bool in_tuple(const ip_kb *k) { return k->depth > 0; }

void ip_kb_fieldn(ip_kb *k, const char *name, size_t l) {
    if (k->nf >= 32) {
        k->over = true;
        return;
    }
    k->fo[k->nf++] = (uint16_t)k->n;
    k->depth = 0;
    /* the names are the code's own literals, none with a parenthesis */
    char *d = room(k, l + 2);
    if (!d) return;
    d[0] = '\x1e';
    copy_small(d + 1, name, l);
    d[l + 1] = '\x1f';
    grew(k, l + 2);
}

static void item_end(ip_kb *k) {
    if (in_tuple(k)) put_plain(k, "\x1d", 1);
}

/* "#" and the decimal digits of v, then the item's end (|v| < 2^53: the digits %.17g prints);
 * the digits are counted first and written in place from the last, two a step */
static void put_int(ip_kb *k, int64_t v) {
    static const char d2[] = "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
                             "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
                             "8081828384858687888990919293949596979899";
    uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    size_t nd = 1;
    for (uint64_t p = 10; nd < 20 && u >= p; p *= 10) nd++;
    bool tup = in_tuple(k);
    size_t n = 1 + (v < 0) + nd + tup;
    char *d = room(k, n);
    if (!d) return;
    *d++ = '#';
    if (v < 0) *d++ = '-';
    char *e = d + nd;
    while (u >= 100) {
        unsigned r = (unsigned)(u % 100);
        u /= 100;
        e -= 2;
        e[0] = d2[2 * r];
        e[1] = d2[2 * r + 1];
    }
    if (u >= 10) {
        e -= 2;
        e[0] = d2[2 * u];
        e[1] = d2[2 * u + 1];
    } else {
        *--e = (char)('0' + u);
    }
    if (tup) d[nd] = '\x1d';
    grew(k, n);
}

void ip_kb_num(ip_kb *k, double v) {
    if (v == 0) v = 0; /* -0.0 == 0 */
    if (v == floor(v) && fabs(v) < 9007199254740992.0) {
        /* integral values (nearly all): the digits %.17g would print, without printf */
        put_int(k, (int64_t)v);
        return;
    }
    char b[40];
    int n = snprintf(b, sizeof b, "#%.17g", v);
    put_plain(k, b, (size_t)n); /* digits, sign, '.', 'e', "inf", "nan" */
    item_end(k);
}

void ip_kb_str(ip_kb *k, const char *s, size_t n) {
    char *d = room(k, n + 1);
    if (!d) return;
    *d = '\'';
    copy_small(d + 1, s, n);
    grew(k, n + 1);
    k->depth += paren_delta(s, n);
    item_end(k);
}

void ip_kb_open(ip_kb *k) {
    char *d = room(k, 1);
    if (!d) return;
    *d = '(';
    grew(k, 1);
    k->depth++;
}

void ip_kb_close(ip_kb *k) {
    char *d = room(k, 1);
    if (!d) return;
    *d = ')';
    grew(k, 1);
    k->depth--;
    item_end(k);
}

/* ip_kb_num of an integer, without the double: the same digits for |v| < 2^53 */
static void kb_int(ip_kb *k, int64_t v) {
    if (v <= -9007199254740992ll || v >= 9007199254740992ll) {
        ip_kb_num(k, (double)v);
        return;
    }
    put_int(k, v);
}

void ip_kb_shape(ip_kb *k, q_shape s) {
    ip_kb_open(k);
    for (uint32_t i = 0; i < s.rank; i++) kb_int(k, s.d[i]);
    ip_kb_close(k);
}

/* the next field of a key text: name and value spans; false at the end */
static bool next_field(const char **p, const char *end, opdb_span *name, opdb_span *val) {
    if (*p >= end || **p != '\x1e') return false;
    const char *q = *p + 1, *nm = q;
    while (q < end && *q != '\x1f') q++;
    *name = opdb_span_make(nm, (size_t)(q - nm));
    const char *v = q < end ? q + 1 : end;
    q = v;
    while (q < end && *q != '\x1e') q++;
    *val = opdb_span_make(v, (size_t)(q - v));
    *p = q;
    return true;
}

static bool find_field(const char *s, size_t n, opdb_span name, opdb_span *val) {
    const char *p = s, *end = s + n;
    opdb_span nm, v;
    while (next_field(&p, end, &nm, &v))
        if (nm.n == name.n && memcmp(nm.p, name.p, nm.n) == 0) {
            *val = v;
            return true;
        }
    return false;
}

const char *ip_kb_get(const ip_kb *k, const char *name, size_t *n) {
    opdb_span v;
    if (!find_field(k->s, k->n, opdb_span_make(name, strlen(name)), &v)) return NULL;
    *n = v.n;
    return v.p;
}

static bool listed(const char *const *set, opdb_span s) {
    for (; set && *set; set++)
        if (strlen(*set) == s.n && memcmp(*set, s.p, s.n) == 0) return true;
    return false;
}

bool ip_key_match(const ip_kb *T, const char *G, size_t gn, const char *const *required,
                  const char *const *allow_extra) {
    if (T->n == gn && memcmp(T->s, G, gn) == 0) {
        /* equal keys: only the required fields can still refuse */
        for (const char *const *r = required; r && *r; r++) {
            size_t n;
            if (!ip_kb_get(T, *r, &n)) return false;
        }
        return true;
    }
    const char *p = G, *end = G + gn, *tp = T->s, *tend = T->s + T->n;
    opdb_span nm, v, tv, tn;
    while (next_field(&p, end, &nm, &v)) {
        /* keys are written in one field order: look at T's next field first */
        const char *save = tp;
        if (next_field(&tp, tend, &tn, &tv) && tn.n == nm.n && memcmp(tn.p, nm.p, nm.n) == 0) {
            if (tv.n == v.n && memcmp(tv.p, v.p, v.n) == 0) continue;
        } else {
            tp = save;
            if (find_field(T->s, T->n, nm, &tv) && tv.n == v.n && memcmp(tv.p, v.p, v.n) == 0) continue;
        }
        if (listed(allow_extra, nm)) continue;
        return false;
    }
    for (const char *const *r = required; r && *r; r++) {
        opdb_span rn = opdb_span_make(*r, strlen(*r));
        if (!find_field(T->s, T->n, rn, &tv) || !find_field(G, gn, rn, &v)) return false;
    }
    return true;
}

/* one value of a key text at *p (up to end): a number, a string (up to the item's end: the next
 * field inside a tuple's `\x1d`, else the field's end) or a tuple */
static void value_json(const char **p, const char *end, bool in_tuple, opdb_strbuf *sb) {
    const char *q = *p;
    if (q >= end) {
        opdb_sb_adds(sb, "null");
        return;
    }
    if (*q == '(') {
        q++;
        opdb_sb_addc(sb, '[');
        bool first = true;
        while (q < end && *q != ')') {
            if (!first) opdb_sb_adds(sb, ", ");
            first = false;
            value_json(&q, end, true, sb);
        }
        if (q < end) q++; /* ) */
        opdb_sb_addc(sb, ']');
    } else {
        const char *v = q + 1;
        q = v;
        while (q < end && *q != '\x1e' && !(in_tuple && *q == '\x1d')) q++;
        if (**p == '#') {
            char buf[48];
            size_t n = (size_t)(q - v) < sizeof buf - 1 ? (size_t)(q - v) : sizeof buf - 1;
            memcpy(buf, v, n);
            buf[n] = 0;
            double x = strtod(buf, NULL);
            if (x == floor(x) && fabs(x) < 9007199254740992.0) opdb_sb_addf(sb, "%lld", (long long)x);
            else opdb_sb_add(sb, buf, opdb_py_fmt_repr(buf, sizeof buf, x));
        } else {
            char *s = opdb_xmalloc((size_t)(q - v) + 1);
            memcpy(s, v, (size_t)(q - v));
            s[q - v] = 0;
            if (strcmp(s, IP_KB_NONE) == 0) opdb_sb_adds(sb, "null");
            else opdb_json_quote(sb, s);
            free(s);
        }
    }
    if (in_tuple && q < end && *q == '\x1d') q++;
    *p = q;
}

void ip_key_json(const char *key, size_t n, opdb_strbuf *sb) {
    const char *p = key, *end = key + n;
    opdb_span nm, v;
    opdb_sb_addc(sb, '{');
    bool first = true;
    while (next_field(&p, end, &nm, &v)) {
        if (!first) opdb_sb_adds(sb, ", ");
        first = false;
        char *name = opdb_xmalloc(nm.n + 1);
        memcpy(name, nm.p, nm.n);
        name[nm.n] = 0;
        opdb_json_quote(sb, name);
        free(name);
        opdb_sb_adds(sb, ": ");
        const char *vp = v.p;
        value_json(&vp, v.p + v.n, false, sb);
    }
    opdb_sb_addc(sb, '}');
}

/* --------------------------------------------------------------- indexes */
/* An index being built keeps each point's 5 axes and group, and the groups' key texts (to tell
 * apart keys whose hashes meet); all of it is dropped once the build is done. A key's rebuild
 * keeps the key its one row gives. */
typedef struct ip_build {
    bool rebuild;
    ip_kb *out;          /* rebuild: the row's key */
    bool got;
    double *ax;          /* build: IP_MAXAX per point */
    uint32_t *pgrp;      /* build: the group of each point */
    opdb_strbuf ks;      /* build: the groups' key texts, one after another */
    uint32_t *koff;      /* build: group g's text is ks[koff[g], koff[g + 1]) */
    size_t capg, capk;
} ip_build;

static uint32_t key_hash(const ip_index *ix, const char *s, size_t n) {
    return (uint32_t)(opdb_hash_bytes(s, n, 9) & ix->hmask);
}

/* slot j: group index + 1, 0 when empty (16 bits a slot while the groups are fewer than 65,535) */
static uint32_t slot_at(const ip_index *ix, size_t j) {
    return ix->slot16 ? ((const uint16_t *)ix->slot)[j] : ((const uint32_t *)ix->slot)[j];
}

static void slot_put(ip_index *ix, uint32_t h, uint32_t gi) {
    size_t j = (size_t)h & ix->smask;
    while (slot_at(ix, j)) j = (j + 1) & ix->smask;
    if (ix->slot16) ((uint16_t *)ix->slot)[j] = (uint16_t)(gi + 1);
    else ((uint32_t *)ix->slot)[j] = gi + 1;
}

/* room for one more group at a load of at most 3/4 */
static void slots_grow(ip_index *ix) {
    size_t ns = ix->slot ? ix->smask + 1 : 0;
    if (ix->slot && (ix->ng + 1) * 4 <= ns * 3 && (!ix->slot16 || ix->ng + 1 < UINT16_MAX)) return;
    size_t nn = ns ? ns : 64;
    while ((ix->ng + 1) * 4 > nn * 3) nn *= 2;
    free(ix->slot);
    ix->slot16 = ix->ng + 1 < UINT16_MAX;
    ix->slot = opdb_xzeroed(nn, ix->slot16 ? sizeof(uint16_t) : sizeof(uint32_t));
    ix->smask = nn - 1;
    for (size_t i = 0; i < ix->ng; i++) slot_put(ix, ix->g[i].hash, (uint32_t)i);
}

void ip_add(ip_index *ix, const ip_kb *k, const double *ax, double lat, bool alt, uint32_t row) {
    ip_build *b = ix->b;
    if (k->over || row > 0x7fffffffu) return;
    if (b->rebuild) {
        if (!b->got) {
            ip_kb *o = b->out; /* the key's bytes only: a key buffer is 2 KiB */
            memcpy(o->s, k->s, k->n + 1);
            o->n = k->n;
            o->over = k->over;
            o->nf = k->nf;
            memcpy(o->fo, k->fo, sizeof o->fo);
            o->depth = k->depth;
            b->got = true;
        }
        return;
    }
    size_t np = ix->np;
    memcpy(b->ax + np * IP_MAXAX, ax, IP_MAXAX * sizeof *ax);
    ix->lat[np] = lat;
    ix->prow[np] = row | (alt ? 0x80000000u : 0);
    uint32_t h = key_hash(ix, k->s, k->n), gi = UINT32_MAX;
    for (size_t j = (size_t)h & ix->smask; ix->slot && slot_at(ix, j); j = (j + 1) & ix->smask) {
        uint32_t x = slot_at(ix, j) - 1;
        if (ix->g[x].hash == h && b->koff[x + 1] - b->koff[x] == k->n && memcmp(b->ks.p + b->koff[x], k->s, k->n) == 0) {
            gi = x;
            break;
        }
    }
    if (gi == UINT32_MAX) {
        slots_grow(ix);
        OPDB_ALLOC_GROW(ix->g, ix->ng + 2, b->capg);
        OPDB_ALLOC_GROW(b->koff, ix->ng + 2, b->capk);
        gi = (uint32_t)ix->ng++;
        ix->g[gi] = (ip_group){h, 0, 0};
        opdb_sb_add(&b->ks, k->s, k->n);
        b->koff[gi + 1] = (uint32_t)b->ks.n;
        slot_put(ix, h, gi);
    }
    /* off counts the group's points until the build lays them out */
    ix->g[gi].off++;
    ix->g[gi].n1 += alt;
    b->pgrp[np] = gi;
    ix->np++;
}

/* Every group's points in file order, the groups one after another in one block; a group with
 * both labels also has its points by label in lpts. */
static void lay_out_groups(ip_index *ix) {
    ip_build *b = ix->b;
    OPDB_ALLOC_GROW(ix->g, ix->ng + 1, b->capg);
    uint32_t off = 0;
    bool mixed = false;
    for (size_t i = 0; i < ix->ng; i++) {
        uint32_t n = ix->g[i].off;
        ix->g[i].off = off;
        off += n;
        mixed |= ix->g[i].n1 && ix->g[i].n1 != n;
    }
    ix->g[ix->ng] = (ip_group){0, off, 0};
    ix->g = opdb_xrealloc(ix->g, (ix->ng + 1) * sizeof *ix->g);
    ix->gpts = opdb_xmalloc((ix->np ? ix->np : 1) * sizeof *ix->gpts);
    uint32_t *fill = opdb_xcalloc(ix->ng ? ix->ng : 1, sizeof *fill);
    for (size_t p = 0; p < ix->np; p++) {
        uint32_t g = b->pgrp[p];
        ix->gpts[ix->g[g].off + fill[g]++] = (uint32_t)p;
    }
    if (mixed) {
        ix->lpts = opdb_xmalloc(ix->np * sizeof *ix->lpts);
        for (size_t g = 0; g < ix->ng; g++) {
            uint32_t n = ip_gn(ix, g), n1 = ix->g[g].n1, k0 = 0, k1 = n - n1;
            if (!n1 || n1 == n) continue;
            const uint32_t *pts = ip_gpts(ix, g);
            uint32_t *l = ix->lpts + ix->g[g].off;
            for (uint32_t i = 0; i < n; i++) l[ip_palt(ix, pts[i]) ? k1++ : k0++] = pts[i];
        }
    }
    free(fill);
}

/* The axes up to the last that some point has, nax per point; the columns cut to the points. */
static void pack_points(ip_index *ix) {
    const double *A = ix->b->ax;
    int nax = 0;
    for (size_t p = 0; p < ix->np; p++)
        for (int a = IP_MAXAX; a > nax; a--)
            if (!isnan(A[p * IP_MAXAX + (size_t)a - 1])) {
                nax = a;
                break;
            }
    ix->nax = nax;
    ix->axfull = (1u << IP_MAXAX) - 1;
    ix->latok = true;
    for (size_t p = 0; p < ix->np; p++) {
        for (int a = 0; a < IP_MAXAX; a++)
            if (isnan(A[p * IP_MAXAX + (size_t)a])) ix->axfull &= ~(1u << a);
        ix->latok &= isfinite(ix->lat[p]) && ix->lat[p] > 0;
    }
    size_t n = ix->np ? ix->np : 1;
    ix->ax = opdb_xmalloc((nax ? n * (size_t)nax : 1) * sizeof *ix->ax);
    for (size_t p = 0; p < ix->np; p++)
        for (int a = 0; a < nax; a++) ix->ax[p * (size_t)nax + (size_t)a] = A[p * IP_MAXAX + (size_t)a];
    ix->lat = opdb_xrealloc(ix->lat, n * sizeof *ix->lat);
    ix->prow = opdb_xrealloc(ix->prow, n * sizeof *ix->prow);
}

/* The field names of key text s in order into buf, each closed by \x1f: the length, or 0 when
 * a field has no value marker or the names do not fit (then the text is not simply its fields'
 * names and values side by side). */
static size_t key_names(const char *s, size_t n, char *buf, size_t cap) {
    const char *p = s, *end = s + n;
    opdb_span nm, v;
    size_t m = 0;
    while (next_field(&p, end, &nm, &v)) {
        if (nm.p + nm.n >= end || nm.p[nm.n] != '\x1f' || cap - m < nm.n + 1) return 0;
        memcpy(buf + m, nm.p, nm.n);
        m += nm.n;
        buf[m++] = '\x1f';
    }
    return p == end ? m : 0;
}

/* does the key text s have the names key_names wrote, in that order? a: those names, each
 * with its \x1f; len[i]: the i-th one's length with its \x1f; nl of them */
static bool names_are(const char *s, size_t n, const char *a, const uint16_t *len, size_t nl) {
    const char *p = s, *end = s + n, *q = a;
    size_t i = 0;
    while (p < end) {
        if (*p != '\x1e' || i == nl) return false;
        /* equal bytes up to the expected \x1f (a name holds none): the field's name is that one */
        const char *nm = p + 1;
        size_t l = len[i++];
        if ((size_t)(end - nm) < l || memcmp(q, nm, l) != 0) return false;
        q += l;
        const char *f = nm + l - 1;
        p = memchr(f + 1, '\x1e', (size_t)(end - f - 1));
        if (!p) p = end;
    }
    return i == nl;
}

/* When every group's key has the same field names in the same order, a target with those names
 * matches a group exactly when their texts are equal (no required or extra fields): then the
 * match is a probe of the groups by key hash. */
static void uniform_names(ip_index *ix) {
    const ip_build *b = ix->b;
    ix->names = NULL;
    if (!ix->ng) return;
    char a[IP_KEYCAP];
    size_t na = key_names(b->ks.p, b->koff[1], a, sizeof a);
    if (!na) return;
    uint16_t len[IP_KEYCAP / 2];
    size_t nl = 0;
    for (size_t i = 0, at = 0; i < na; i++)
        if (a[i] == '\x1f') {
            len[nl++] = (uint16_t)(i + 1 - at);
            at = i + 1;
        }
    for (size_t i = 1; i < ix->ng; i++)
        if (!names_are(b->ks.p + b->koff[i], b->koff[i + 1] - b->koff[i], a, len, nl)) return;
    char *names = opdb_xmalloc(na);
    memcpy(names, a, na);
    ix->names = names;
    ix->namesn = na;
}

void ip_add_fault(ip_index *ix, uint32_t row, const char *col, const char *what) {
    if (ix->b->rebuild) return;
    OPDB_ALLOC_GROW(ix->faults, ix->nfaults + 1, ix->capf);
    ix->faults[ix->nfaults].row = row;
    ix->faults[ix->nfaults].col = col;
    ix->faults[ix->nfaults++].what = what;
}

int ip_faults(q_ctx *c, ip_index *ix) {
    if (!ix || !ix->nfaults) return 0;
    if (c->cfg->quirks) return q_cell_fault(c, ix->tab, ix->faults[0].row, ix->faults[0].col, ix->faults[0].what);
    if (atomic_exchange(&ix->reported, true)) return 0;
    for (size_t i = 0; i < ix->nfaults; i++)
        q_cell_fault(c, ix->tab, ix->faults[i].row, ix->faults[i].col, ix->faults[i].what);
    return 0;
}

void ip_group_kb(const ip_index *ix, size_t g, ip_kb *k) {
    /* the builder over the group's first row alone, on a copy of what it reads */
    ip_index t;
    memset(&t, 0, sizeof t);
    t.tab = ix->tab;
    t.latcols = ix->latcols;
    t.hmask = ix->hmask;
    t.fn = ix->fn;
    memcpy(t.params, ix->params, sizeof t.params);
    t.r0 = ip_grow(ix, g);
    t.r1 = t.r0 + 1;
    ip_build b = {.rebuild = true, .out = k};
    t.b = &b;
    opdb_arena_init(&t.arena, 1024);
    t.fn(&t, t.params);
    opdb_arena_free(&t.arena);
    if (!b.got) { /* cannot happen: the row gave this key when the index was built */
        ip_kb_init(k);
        k->over = true;
    }
}

const ip_keys *ip_group_keys(const ip_index *cix) {
    ip_index *ix = (ip_index *)cix; /* the texts are made once under memo_mu */
    ip_keys *k = atomic_load_explicit(&ix->keys, memory_order_acquire);
    if (k) return k;
    opdb_call_lock(&ix->memo_mu);
    k = atomic_load_explicit(&ix->keys, memory_order_relaxed);
    if (!k) {
        k = opdb_xmalloc(sizeof *k);
        k->off = opdb_xmalloc((ix->ng + 1) * sizeof *k->off);
        opdb_strbuf sb;
        opdb_sb_init(&sb);
        ip_kb *kb = opdb_xmalloc(sizeof *kb);
        k->off[0] = 0;
        for (size_t g = 0; g < ix->ng; g++) {
            ip_group_kb(ix, g, kb);
            opdb_sb_add(&sb, kb->s, kb->n);
            k->off[g + 1] = (uint32_t)sb.n;
        }
        free(kb);
        k->s = opdb_xrealloc(sb.p, sb.n ? sb.n : 1);
        atomic_store_explicit(&ix->keys, k, memory_order_release);
    }
    opdb_call_unlock(&ix->memo_mu);
    return k;
}

const char *ip_group_key(const ip_index *ix, size_t g, opdb_arena *a, size_t *n) {
    const ip_keys *k = atomic_load_explicit(&((ip_index *)ix)->keys, memory_order_acquire);
    if (k) {
        *n = k->off[g + 1] - k->off[g];
        return k->s + k->off[g];
    }
    ip_kb kb;
    ip_group_kb(ix, g, &kb);
    *n = kb.n;
    return opdb_arena_strndup(a, kb.s, kb.n);
}

static void gmemo_free(struct ip_gmemo *m);

static void index_free(ip_index *ix) {
    ip_memo_free(ix);
    ip_keys *k = atomic_load_explicit(&ix->keys, memory_order_relaxed);
    if (k) {
        free(k->s);
        free(k->off);
        free(k);
    }
    free(ix->gpts);
    free(ix->lpts);
    free(ix->slot);
    gmemo_free(ix->gmemo);
    pthread_mutex_destroy(&ix->memo_mu);
    free(ix->g);
    free(ix->ax);
    free(ix->lat);
    free(ix->prow);
    free(ix->faults);
    free((char *)ix->names);
    free(ix->sig);
    free(ix);
}

void ip_index_free_all(void *p) {
    for (ip_index *ix = p, *nx; ix; ix = nx) {
        nx = ix->next;
        index_free(ix);
    }
}

static void build(ip_index *ix) {
    size_t cap = ix->tab->t.nrows ? ix->tab->t.nrows : 1; /* a point per row at most */
    ip_build b = {.rebuild = false};
    b.ax = opdb_xmalloc(cap * IP_MAXAX * sizeof *b.ax);
    b.pgrp = opdb_xmalloc(cap * sizeof *b.pgrp);
    opdb_sb_init(&b.ks);
    OPDB_ALLOC_GROW(b.koff, 1, b.capk);
    b.koff[0] = 0;
    ix->lat = opdb_xmalloc(cap * sizeof *ix->lat);
    ix->prow = opdb_xmalloc(cap * sizeof *ix->prow);
    ix->b = &b;
    ix->r0 = 0;
    ix->r1 = ix->tab->t.nrows;
    opdb_arena_init(&ix->arena, 4096);
    ix->fn(ix, ix->params);
    opdb_arena_free(&ix->arena);
    if (!ix->slot) slots_grow(ix);
    lay_out_groups(ix);
    pack_points(ix);
    uniform_names(ix);
    free(b.ax);
    free(b.pgrp);
    opdb_sb_free(&b.ks);
    free(b.koff);
    ix->b = NULL;
}

ip_index *ip_index_get(const opdb_qdb *db, q_ktable *t, const char *sig, ip_build_fn fn, const void *params,
                       size_t params_size) {
    if (!q_table_rows(t)) return NULL;
    /* built indexes are published whole at the list's head and never change: found without the lock */
    for (ip_index *ix = (ip_index *)__atomic_load_n(&t->ext[2], __ATOMIC_ACQUIRE); ix; ix = ix->next)
        if (strcmp(ix->sig, sig) == 0) return ix;
    opdb_call_lock(&t->ext_mu);
    ip_index *ix = t->ext[2];
    for (; ix; ix = ix->next)
        if (strcmp(ix->sig, sig) == 0) break;
    if (!ix) {
        ix = opdb_xcalloc(1, sizeof *ix);
        ix->sig = opdb_xmalloc(strlen(sig) + 1);
        strcpy(ix->sig, sig);
        ix->tab = t;
        ix->hmask = db->ip_hash_mask ? db->ip_hash_mask : UINT64_MAX;
        ix->fn = fn;
        if (params) memcpy(ix->params, params, params_size < sizeof ix->params ? params_size : sizeof ix->params);
        atomic_init(&ix->reported, false);
        atomic_init(&ix->fmaps, NULL);
        atomic_init(&ix->keys, NULL);
        opdb_mutex_init_brief(&ix->memo_mu);
        ip_latcols_of(t, &ix->latcols);
        build(ix);
        ix->next = t->ext[2];
        t->ext_free[2] = ip_index_free_all;
        __atomic_store_n(&t->ext[2], (void *)ix, __ATOMIC_RELEASE);
    }
    opdb_call_unlock(&t->ext_mu);
    return ix;
}

/* ------------------------------------------------------------ cell helpers */
static const char *const k_lat_order[5] = {"Profiling Average Duration(us)", "Profiling Median Duration(us)",
                                           "Average Duration(us)", "Median Duration(us)", "Duration(us)"};

void ip_latcols_of(const q_ktable *t, ip_latcols *lc) {
    int pref = t->c_pref >= 0 ? t->c_pref : db_table_col(&t->t, "Duration(us)");
    int cols[6] = {pref, -1, -1, -1, -1, -1};
    for (int k = 0; k < 5; k++) cols[k + 1] = db_table_col(&t->t, k_lat_order[k]);
    lc->pref = pref;
    lc->n = 0;
    for (int k = 0; k < 6; k++) {
        int col = cols[k];
        if (col < 0) continue;
        bool dup = false;
        for (int j = 0; j < k; j++) dup |= cols[j] == col;
        if (!dup) lc->c[lc->n++] = col;
    }
}

bool ip_row_latency_at(const q_ktable *t, const ip_latcols *lc, size_t row, double *lat, bool *alt) {
    int col;
    int known = q_row_lat_known(t, row, lc->c, lc->n, lat, &col);
    if (known >= 0) {
        if (known) *alt = col != lc->pref;
        return known;
    }
    for (int k = 0; k < lc->n; k++) {
        double v;
        if (!db_cell_num(db_table_cell(&t->t, row, lc->c[k]), &v)) continue;
        if (isfinite(v) && v > 0) {
            *lat = v;
            *alt = lc->c[k] != lc->pref;
            return true;
        }
    }
    return false;
}

bool ip_row_latency(const q_ktable *t, size_t row, double *lat, bool *alt) {
    ip_latcols lc;
    ip_latcols_of(t, &lc);
    return ip_row_latency_at(t, &lc, row, lat, alt);
}

void ip_list(opdb_arena *a, const q_ktable *t, size_t row, int col, opdb_span **items, uint32_t *n) {
    char buf[48];
    opdb_span s = col >= 0 ? db_cell_text(db_table_cell(&t->t, row, col), buf, sizeof buf) : opdb_span_make("", 0);
    s = opdb_py_strip_chars(opdb_py_strip(s), "\"");
    size_t parts = 1;
    for (size_t i = 0; i < s.n; i++) parts += s.p[i] == ';';
    *items = opdb_arena_alloc(a, parts * sizeof **items);
    uint32_t k = 0;
    size_t i = 0;
    while (i <= s.n) {
        size_t j = i;
        while (j < s.n && s.p[j] != ';') j++;
        opdb_span it = opdb_py_strip(opdb_span_make(s.p + i, j - i));
        i = j + 1;
        if (!it.n) continue;
        (*items)[k++] = opdb_span_make(opdb_arena_strndup(a, it.p, it.n), it.n);
    }
    *n = k;
}

bool ip_intcell(const db_cell *c, int64_t *out) {
    if (c->kind == DBC_NA) return false;
    double v;
    if (!db_cell_num(c, &v) || !isfinite(v) || v != floor(v) || fabs(v) > 9.2e18) return false;
    if (c->kind == DBC_INT) *out = c->v.i;
    else *out = (int64_t)v;
    return true;
}

bool ip_strcell(const db_cell *c, char *buf, size_t cap, opdb_span *out) {
    if (c->kind == DBC_NA) return false;
    opdb_span s = opdb_py_strip(db_cell_text(c, buf, cap));
    if (!s.n) return false;
    *out = s;
    return true;
}

const char *ip_reason(const ip_status *st, const char *def) {
    if (!st || !st->n) return def;
    for (size_t i = 0; i < st->n; i++)
        if (strcmp(st->s[i], "missing_target_axis") != 0) return st->s[i];
    return "missing_target_axis";
}

bool ip_in_matmul_plus(const char *kt) { return q_is_matmul(kt) || strcmp(kt, "BatchMatMulNd") == 0; }

/* max_interpolation_dim of OV_int[kt] (overlaid on OV_int[overlay] when given); INT64_MAX = none */
int64_t ip_maxdim(q_ctx *c, const char *kt, const char *overlay) {
    bool bad = false;
    int64_t m = INT64_MAX, v;
    if (overlay) {
        const qv *o = qv_get(q_override(c->db->map.ov_int, overlay, &bad), "max_interpolation_dim");
        if (qv_as_int(o, &v)) m = v;
    }
    const qv *o = q_override(c->db->map.ov_int, kt, &bad);
    const qv *x = qv_get(o, "max_interpolation_dim");
    if (qv_as_int(x, &v)) m = v;
    return m;
}

/* The groups a target key matches depend on the key text alone: kept per
 * index (up to GMEMO_MAX keys), so a repeated target skips the regime match
 * over every group. */
enum { GMEMO_MAX = 4096 };
typedef struct gm_entry {
    char *key;
    size_t keyn;
    uint32_t *gi;
    size_t ng;
} gm_entry;
struct ip_gmemo {
    gm_entry *e;
    size_t n, cap;
    opdb_hindex ix;
};

static void gmemo_free(struct ip_gmemo *m) {
    if (!m) return;
    for (size_t i = 0; i < m->n; i++) {
        free(m->e[i].key);
        free(m->e[i].gi);
    }
    free(m->e);
    opdb_hindex_free(&m->ix);
    free(m);
}

static const gm_entry *gmemo_find(const struct ip_gmemo *m, uint64_t h, const char *k, size_t kn) {
    uint32_t idx;
    if (!m) return NULL;
    for (opdb_hprobe p = opdb_hindex_probe(&m->ix, h); opdb_hprobe_next(&p, &idx);)
        if (m->e[idx].keyn == kn && memcmp(m->e[idx].key, k, kn) == 0) return &m->e[idx];
    return NULL;
}

bool ip_gmemo_get(const ip_index *cix, const char *k, size_t kn, uint32_t *gi, size_t *ng) {
    ip_index *ix = (ip_index *)cix; /* the kept matches are guarded by memo_mu */
    uint64_t h = opdb_hash_bytes(k, kn, 5);
    opdb_call_lock(&ix->memo_mu);
    const gm_entry *e = gmemo_find(ix->gmemo, h, k, kn);
    if (e) {
        memcpy(gi, e->gi, e->ng * sizeof *gi);
        *ng = e->ng;
    }
    opdb_call_unlock(&ix->memo_mu);
    return e != NULL;
}

void ip_gmemo_put(const ip_index *cix, const char *k, size_t kn, const uint32_t *gi, size_t ng) {
    ip_index *ix = (ip_index *)cix;
    uint64_t h = opdb_hash_bytes(k, kn, 5);
    opdb_call_lock(&ix->memo_mu);
    if (!ix->gmemo) ix->gmemo = opdb_xcalloc(1, sizeof *ix->gmemo);
    struct ip_gmemo *m = ix->gmemo;
    if (m->n < GMEMO_MAX && !gmemo_find(m, h, k, kn)) {
        OPDB_ALLOC_GROW(m->e, m->n + 1, m->cap);
        gm_entry *e = &m->e[m->n];
        e->key = opdb_xmalloc(kn ? kn : 1);
        memcpy(e->key, k, kn);
        e->keyn = kn;
        e->gi = opdb_xmalloc((ng ? ng : 1) * sizeof *e->gi);
        memcpy(e->gi, gi, ng * sizeof *e->gi);
        e->ng = ng;
        opdb_hindex_add(&m->ix, h, (uint32_t)m->n++);
    }
    opdb_call_unlock(&ix->memo_mu);
}

size_t ip_groups_matching(q_ctx *c, const ip_index *cix, const ip_kb *T, uint32_t **gi) {
    ip_index *ix = (ip_index *)cix; /* the kept matches are guarded by memo_mu */
    *gi = opdb_arena_alloc(c->a, (ix->ng ? ix->ng : 1) * sizeof **gi);
    /* the plain reference (no_index) matches every group */
    if (ix->names && !T->over && !c->db->no_index) {
        char nb[IP_KEYCAP];
        size_t nn = key_names(T->s, T->n, nb, sizeof nb);
        if (nn == ix->namesn && memcmp(nb, ix->names, nn) == 0) {
            /* groups whose hash is T's: the one whose first row gives T's key again */
            uint32_t h = key_hash(ix, T->s, T->n);
            ip_kb G;
            uint32_t found = UINT32_MAX;
            for (size_t j = (size_t)h & ix->smask; slot_at(ix, j); j = (j + 1) & ix->smask) {
                uint32_t x = slot_at(ix, j) - 1;
                if (ix->g[x].hash != h) continue;
                ip_group_kb(ix, x, &G);
                if (G.n == T->n && memcmp(G.s, T->s, T->n) == 0) {
                    found = x;
                    break;
                }
            }
            if (found == UINT32_MAX) return 0;
            (*gi)[0] = found;
            return 1;
        }
    }
    bool keep = !T->over && !c->db->no_index;
    size_t ng = 0;
    if (keep && ip_gmemo_get(ix, T->s, T->n, *gi, &ng)) return ng;
    const ip_keys *K = ip_group_keys(ix);
    for (size_t g = 0; g < ix->ng; g++)
        if (ip_key_match(T, K->s + K->off[g], K->off[g + 1] - K->off[g], NULL, NULL)) (*gi)[ng++] = (uint32_t)g;
    if (keep) ip_gmemo_put(ix, T->s, T->n, *gi, ng);
    return ng;
}

void ip_task_init(ip_task *tk, const ip_index *ix, const double *t, int nax, const uint8_t (*groups)[4],
                  size_t ngroups, int64_t maxdim) {
    memset(tk, 0, sizeof *tk);
    tk->ix = ix;
    tk->t = t;
    tk->nax = nax;
    tk->groups = groups;
    tk->ngroups = ngroups;
    tk->maxdim = maxdim;
    tk->sqrt_axis = -1;
}
