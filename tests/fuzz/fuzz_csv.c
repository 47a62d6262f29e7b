/* libFuzzer target: the fast tokenizer must agree with the exact (Python
 * csv) tokenizer whenever it does not report an anomaly; batch cuts must be
 * in bounds, after a line end and outside quotes; cell parsing must not crash,
 * and repr of a parsed cell is the same as the printf-based reference's. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "csv/batch.h"
#include "opdb/csv.h"
#include "opdb/pystr.h"
#include "pycompat/pyshortest.h"

#define MAXF 64

/* Length-prefixed serialisation of records: unambiguous, binary safe. */
static void ser(opdb_strbuf *sb, const opdb_field *f, int n) {
    opdb_sb_addf(sb, "R%d:", n);
    for (int i = 0; i < n; i++) {
        opdb_sb_addf(sb, "%u:", f[i].n);
        opdb_sb_add(sb, f[i].p, f[i].n);
    }
}

static void poke_cells(const opdb_field *f, int n) {
    for (int i = 0; i < n; i++) {
        double d;
        long long v;
        (void)opdb_py_float(f[i].p, f[i].n, &d);
        (void)opdb_py_int(f[i].p, f[i].n, &v);
        opdb_span s = opdb_py_strip(opdb_span_make(f[i].p, f[i].n));
        if (s.n > f[i].n || s.p < f[i].p || s.p + s.n > f[i].p + f[i].n) abort();
        if (opdb_py_float(f[i].p, f[i].n, &d)) {
            char buf[512];
            opdb_py_fmt_fixed(buf, sizeof buf, d, 6);
            /* repr's integer digit search agrees with the printf reference */
            char ref[512];
            size_t n1 = opdb_py_fmt_repr(buf, sizeof buf, d), n2 = opdb_py_fmt_repr_slow(ref, sizeof ref, d);
            if (n1 != n2 || strcmp(buf, ref) != 0) abort();
        }
    }
}

/* Fast tokenizer over a private exact-size copy. Returns 0 or -1 (anomaly). */
static int run_fast(const uint8_t *data, size_t n, opdb_strbuf *out, bool poke, bool portable) {
    char *buf = malloc(n ? n : 1);
    if (!buf) abort();
    if (n) memcpy(buf, data, n);
    opdb_csv_fast t;
    opdb_csv_fast_init(&t, buf, n);
    if (portable) t.avx2 = false; /* the portable block scan whatever the CPU has */
    opdb_field f[MAXF];
    int nf, k;
    size_t off, last_off = 0;
    bool first = true;
    while ((k = opdb_csv_fast_next(&t, f, MAXF, &nf, &off)) == 1) {
        if (nf < 0 || nf > MAXF || off > n || (!first && off < last_off)) abort();
        for (int i = 0; i < nf; i++)
            if (f[i].p < buf || f[i].p + f[i].n > buf + n) abort();
        first = false;
        last_off = off;
        ser(out, f, nf);
        if (poke) poke_cells(f, nf);
    }
    free(buf);
    return k;
}

/* Skim over a private copy, serialised like `next`: the kept cells decoded,
 * the rest as empty cells, so it must equal next's output with every cell
 * past `keep` emptied.  The buffer must be left as it was. */
static int run_skim(const uint8_t *data, size_t n, int keep, opdb_strbuf *out) {
    char *buf = malloc(n ? n : 1), *dec = malloc(n ? n : 1);
    if (!buf || !dec) abort();
    if (n) memcpy(buf, data, n);
    opdb_csv_fast t;
    opdb_csv_fast_init(&t, buf, n);
    opdb_field f[MAXF], g[MAXF];
    int nf, k;
    size_t off;
    bool quote_after;
    while ((k = opdb_csv_fast_skim(&t, f, keep, &nf, &off, &quote_after)) == 1) {
        if (nf < 1 || off > n) abort();
        int shown = nf < MAXF ? nf : MAXF;
        size_t o = 0;
        for (int i = 0; i < shown; i++) {
            if (i < keep) {
                if (f[i].p < buf || f[i].p + f[i].n > buf + n) abort();
                g[i].p = dec + o;
                g[i].n = (uint32_t)opdb_csv_unquote(f[i].p, f[i].n, dec + o);
                o += g[i].n;
            } else {
                g[i].p = dec;
                g[i].n = 0;
            }
        }
        ser(out, g, shown);
    }
    if (n && memcmp(buf, data, n) != 0) abort();
    free(buf);
    free(dec);
    return k;
}

/* next's records with the cells past `keep` emptied (the skim's view). */
static int run_fast_cut(const uint8_t *data, size_t n, int keep, opdb_strbuf *out) {
    char *buf = malloc(n ? n : 1);
    if (!buf) abort();
    if (n) memcpy(buf, data, n);
    opdb_csv_fast t;
    opdb_csv_fast_init(&t, buf, n);
    opdb_field f[MAXF];
    int nf, k;
    size_t off;
    while ((k = opdb_csv_fast_next(&t, f, MAXF, &nf, &off)) == 1) {
        for (int i = keep; i < nf; i++) f[i].n = 0;
        ser(out, f, nf);
    }
    free(buf);
    return k;
}

static int run_exact(const uint8_t *data, size_t n, opdb_strbuf *out) {
    int fd = memfd_create("fuzz_csv", 0);
    if (fd < 0) abort();
    size_t w = 0;
    while (w < n) {
        ssize_t k = write(fd, data + w, n - w);
        if (k <= 0) abort();
        w += (size_t)k;
    }
    opdb_byte_reader br;
    /* a small odd buffer size puts refills inside records and CRLF pairs */
    opdb_byte_reader_init(&br, fd, 0, 37);
    opdb_csv_exact x;
    opdb_csv_exact_init(&x, &br, 1);
    opdb_field f[MAXF];
    int nf, k;
    while ((k = opdb_csv_exact_next(&x, f, MAXF, &nf, false)) == 1) {
        if (nf < 0 || nf > MAXF || nf > opdb_csv_exact_ncells(&x) || nf == 0) abort();
        ser(out, f, nf);
        poke_cells(f, nf);
    }
    opdb_csv_exact_free(&x);
    opdb_byte_reader_free(&br);
    close(fd);
    return k;
}

static void report(const char *what, const opdb_strbuf *a, const opdb_strbuf *b) {
    fprintf(stderr, "MISMATCH (%s)\n fast : %.*s\n exact: %.*s\n", what, (int)a->n, a->p ? a->p : "",
            (int)b->n, b->p ? b->p : "");
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size > (1u << 20)) return 0;
    opdb_strbuf fa, ex;
    opdb_sb_init(&fa);
    opdb_sb_init(&ex);
    opdb_sb_add(&fa, "", 0);
    opdb_sb_add(&ex, "", 0);

    int rf = run_fast(data, size, &fa, true, false);
    {
        /* the portable block scan must give what the CPU's does */
        opdb_strbuf po;
        opdb_sb_init(&po);
        opdb_sb_add(&po, "", 0);
        int rp = run_fast(data, size, &po, false, true);
        if (rp != rf || po.n != fa.n || memcmp(po.p, fa.p, fa.n) != 0) report("portable scan vs CPU scan", &po, &fa);
        opdb_sb_free(&po);
        /* skim keeps what next decodes, counts the rest */
        int keep = size ? 1 + data[0] % 4 : 1;
        opdb_strbuf sk, fc;
        opdb_sb_init(&sk);
        opdb_sb_init(&fc);
        opdb_sb_add(&sk, "", 0);
        opdb_sb_add(&fc, "", 0);
        int rs = run_skim(data, size, keep, &sk);
        int rc = run_fast_cut(data, size, keep, &fc);
        if (rs != rc || (rs == 0 && (sk.n != fc.n || memcmp(sk.p, fc.p, fc.n) != 0))) report("skim vs next", &sk, &fc);
        opdb_sb_free(&sk);
        opdb_sb_free(&fc);
    }
    int re = run_exact(data, size, &ex);
    if (re != 0) abort(); /* memfd reads cannot fail */
    if (rf == 0 && (fa.n != ex.n || memcmp(fa.p, ex.p, fa.n) != 0)) report("whole input", &fa, &ex);

    /* batch cut: in bounds, right after a line end, with an even number of
     * quotes before it (outside quotes) */
    size_t cut = opdb_batch_cut((const char *)data, size);
    if (cut > size) abort();
    if (cut) {
        if (data[cut - 1] != '\n' && data[cut - 1] != '\r') abort();
        size_t q = 0;
        for (size_t i = 0; i < cut; i++) q += data[i] == '"';
        if (q % 2) abort();
        /* no later line end outside quotes */
        for (size_t i = cut; i < size; i++) {
            if (data[i] == '"') q++;
            else if ((data[i] == '\n' || data[i] == '\r') && q % 2 == 0) abort();
        }
        /* tokenizing the two batches separately gives the same records */
        if (rf == 0) {
            opdb_strbuf p1;
            opdb_sb_init(&p1);
            opdb_sb_add(&p1, "", 0);
            int r1 = run_fast(data, cut, &p1, false, false);
            int r2 = r1 == 0 ? run_fast(data + cut, size - cut, &p1, false, false) : -1;
            if (r1 == 0 && r2 == 0 && (p1.n != fa.n || memcmp(p1.p, fa.p, fa.n) != 0))
                report("split at batch cut vs whole", &p1, &fa);
            opdb_sb_free(&p1);
        }
    }

    opdb_sb_free(&fa);
    opdb_sb_free(&ex);
    return 0;
}
