/* Row building for theory candidates (docs/GRID.md §7, §9): template slot counts,
 * slot alignment, absent-slot clearing, the memory estimate, shape cells,
 * and the order of new rows. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include "grid/grid_rows.h"

static bool ieq(opdb_span s, const char *w) {
    size_t n = strlen(w);
    if (s.n != n) return false;
    for (size_t i = 0; i < n; i++)
        if (toupper((unsigned char)s.p[i]) != w[i]) return false;
    return true;
}
static opdb_span trim(opdb_span s) { return opdb_py_strip(s); }

int grid_slot_count(opdb_span cell) {
    opdb_span c = trim(cell);
    static const char *const absent[] = {"", "N/A", "NA", "NULL", "NONE", "UNDEFINED"};
    for (size_t i = 0; i < 6; i++)
        if (ieq(c, absent[i])) return 0;
    c = opdb_py_strip_chars(c, "\"");
    c = opdb_py_strip_chars(c, "'");
    if (!c.n) return 0;
    int depth = 0, n = 0;
    size_t start = 0; /* of the current part */
    for (size_t i = 0; i < c.n; i++) {
        if (c.p[i] == '(') depth++;
        else if (c.p[i] == ')') depth--;
        else if (c.p[i] == ';' && depth == 0) n++, start = i + 1;
    }
    return n + (start < c.n); /* a final ';' opens no slot: "128,4,128;" is one */
}

static bool absent_attr(opdb_span s) {
    s = trim(s);
    static const char *const absent[] = {"", "NULL", "NONE", "UNDEFINED", "DT_UNDEFINED"};
    for (size_t i = 0; i < 5; i++)
        if (ieq(s, absent[i])) return true;
    return false;
}

void grid_clear_absent(grid_shape *slots, int n, opdb_span attr) {
    size_t pos = 0;
    for (int i = 0; i < n; i++) {
        if (pos > attr.n) break;
        const char *semi = memchr(attr.p + pos, ';', attr.n - pos);
        size_t end = semi ? (size_t)(semi - attr.p) : attr.n;
        if (absent_attr(opdb_span_make(attr.p + pos, end - pos))) slots[i].nd = 0;
        pos = end + 1;
    }
}

/* ---- memory (§9) */
int grid_dtype_size(opdb_span d) {
    static const struct { const char *k; int v; } t[] = {
        {"DT_FLOAT", 4}, {"DT_FLOAT32", 4}, {"FLOAT", 4}, {"DT_FLOAT16", 2}, {"DT_BF16", 2}, {"DT_BFLOAT16", 2},
        {"DT_FLOAT64", 8}, {"DT_DOUBLE", 8}, {"DT_INT8", 1}, {"INT8", 1}, {"DT_UINT8", 1}, {"UINT8", 1},
        {"DT_BOOL", 1}, {"BOOL", 1}, {"DT_INT16", 2}, {"INT16", 2}, {"DT_UINT16", 2}, {"DT_INT32", 4},
        {"INT32", 4}, {"DT_UINT32", 4}, {"DT_INT64", 8}, {"INT64", 8}, {"DT_UINT64", 8}, {"DT_COMPLEX64", 8},
        {"DT_COMPLEX128", 16}, {"DT_FLOAT8_E4M3", 1}, {"DT_FLOAT8_E5M2", 1}, {"DT_FLOAT8", 1}};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (ieq(d, t[i].k)) return t[i].v;
    return 2;
}

/* Split on runs of ';' and whitespace, empties dropped: sizes into out. */
int grid_dtype_sizes(opdb_span cell, int *out, int cap) {
    int n = 0;
    size_t i = 0;
    while (i < cell.n && n < cap) {
        while (i < cell.n && (cell.p[i] == ';' || isspace((unsigned char)cell.p[i]))) i++;
        size_t b = i;
        while (i < cell.n && cell.p[i] != ';' && !isspace((unsigned char)cell.p[i])) i++;
        if (i > b) out[n++] = grid_dtype_size(opdb_span_make(cell.p + b, i - b));
    }
    return n;
}

uint64_t grid_row_bytes(const grid_shape *in, int nin, const grid_shape *out, int nout, const int *isz, int nisz,
                        const int *osz, int nosz) {
    uint64_t total = 0;
    for (int s = 0; s < nin + nout; s++) {
        const grid_shape *sh = s < nin ? &in[s] : &out[s - nin];
        int i = s < nin ? s : s - nin;
        if (sh->nd == 0) continue;
        uint64_t p = (uint64_t)(s < nin ? (i < nisz ? isz[i] : 2) : (i < nosz ? osz[i] : 2));
        for (int d = 0; d < sh->nd; d++) {
            uint64_t v = sh->d[d] < 0 ? 0 : (uint64_t)sh->d[d];
            if (v && p > UINT64_MAX / v) return UINT64_MAX;
            p *= v;
        }
        if (total > UINT64_MAX - p) return UINT64_MAX;
        total += p;
    }
    return total;
}

void grid_fmt_budget(uint64_t b, char *out, size_t cap) {
    double g = 1024.0 * 1024.0 * 1024.0;
    if (b >= 1073741824ull) snprintf(out, cap, "%.2f GiB", (double)b / g);
    else if (b >= 1048576ull) snprintf(out, cap, "%.2f MiB", (double)b / 1048576.0);
    else if (b >= 1024ull) snprintf(out, cap, "%.2f KiB", (double)b / 1024.0);
    else snprintf(out, cap, "%llu B", (unsigned long long)b);
}

void grid_shape_cell(opdb_strbuf *sb, const grid_shape *s, int n) {
    if (n == 0) return;
    opdb_sb_addc(sb, '"');
    for (int i = 0; i < n; i++) {
        if (i) opdb_sb_addc(sb, ';');
        for (int d = 0; d < s[i].nd; d++) { /* "%lld" without printf: this runs for every row */
            char buf[24];
            int k = (int)sizeof buf;
            int64_t v = s[i].d[d];
            uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
            do buf[--k] = (char)('0' + u % 10);
            while (u /= 10);
            if (v < 0) buf[--k] = '-';
            if (d) opdb_sb_addc(sb, ',');
            opdb_sb_add(sb, buf + k, sizeof buf - (size_t)k);
        }
    }
    opdb_sb_addc(sb, '"');
}

/* The integer at *pp in a cell grid_shape_cell wrote ('-' and digits, an
 * int64); *pp moves past it. */
static inline int64_t cell_int(const char **pp) {
    const char *p = *pp;
    bool neg = *p == '-';
    p += neg;
    uint64_t u = 0;
    while ((unsigned)(*p - '0') < 10) u = u * 10 + (uint64_t)(*p++ - '0');
    *pp = p;
    return neg ? (int64_t)(0 - u) : (int64_t)u;
}

/* The comparison from p and q, each at a dim or at the ';' or '"' after a
 * slot's last dim, the dims before them equal. */
static int cmp_cells_from(const char *p, const char *q) {
    for (;;) {
        for (;;) { /* the dims of one slot */
            bool pe = *p == ';' || *p == '"', qe = *q == ';' || *q == '"';
            if (pe || qe) {
                if (pe != qe) return pe ? -1 : 1; /* fewer dims first */
                break;
            }
            int64_t x = cell_int(&p), y = cell_int(&q);
            if (x != y) return x < y ? -1 : 1;
            p += *p == ',';
            q += *q == ',';
        }
        bool pend = *p == '"', qend = *q == '"';
        if (pend || qend) return pend == qend ? 0 : pend ? -1 : 1; /* fewer slots first */
        p++, q++;
    }
}

int grid_cmp_shape_cells(const char *a, size_t na, const char *b, size_t nb) {
    if (!na || !nb) return na ? 1 : nb ? -1 : 0; /* no slot */
    return cmp_cells_from(a + 1, b + 1);         /* past the opening quote */
}

const char *grid_shape_cell_lead2(const char *c, size_t n, int64_t lead[2]) {
    if (!n || c[1] == ';' || c[1] == '"') return NULL;
    const char *p = c + 1;
    lead[0] = cell_int(&p);
    if (*p != ',') return NULL;
    p++;
    lead[1] = cell_int(&p);
    return p;
}

int grid_cmp_shape_cells_rest(const char *p, const char *q) { return cmp_cells_from(p + (*p == ','), q + (*q == ',')); }

int grid_cmp_inputs(const grid_shape *a, int na, const grid_shape *b, int nb) {
    for (int i = 0; i < na && i < nb; i++) {
        for (int d = 0; d < a[i].nd && d < b[i].nd; d++)
            if (a[i].d[d] != b[i].d[d]) return a[i].d[d] < b[i].d[d] ? -1 : 1;
        if (a[i].nd != b[i].nd) return a[i].nd < b[i].nd ? -1 : 1;
    }
    return na < nb ? -1 : na > nb;
}

bool grid_zero_column(const char *name) {
    static const char *const words[] = {"duration", "latency", "time", "cycles", "ratio", "miss", "utilization"};
    char low[512];
    size_t n = strlen(name);
    if (n >= sizeof low) n = sizeof low - 1;
    for (size_t i = 0; i < n; i++) low[i] = (char)tolower((unsigned char)name[i]);
    low[n] = '\0';
    for (size_t i = 0; i < 7; i++)
        if (strstr(low, words[i])) return true;
    return false;
}
