/* opdb update's fast path (lazy rows, patches, spliced and copied rows)
 * against its simple path (opts.eager: every row tokenized exactly, held
 * as a dict row and rendered): on generated databases and op_summary
 * profiles both must write the same bytes, report the same text and fail
 * the same way.  Seeded, small and deterministic. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "opdb/update.h"

enum { SEEDS = 40 };

/* ---- a small deterministic PRNG (splitmix64) */

static uint64_t rng_state;
static uint64_t rnd(void) {
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}
static unsigned pick(unsigned n) { return (unsigned)(rnd() % n); }
static int chance(unsigned percent) { return pick(100) < percent; }

/* ---- files */

static void mkdirs(const char *path) {
    char tmp[1024];
    snprintf(tmp, sizeof tmp, "%s", path);
    for (char *p = tmp + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            mkdir(tmp, 0755);
            *p = '/';
        }
    mkdir(tmp, 0755);
}

static void put_file(const char *path, const char *data, size_t n) {
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, n, f), n);
    fclose(f);
}

/* A growing text buffer. */
typedef struct text {
    char *p;
    size_t n, cap;
} text;

static void add(text *t, const char *s, size_t n) {
    if (t->n + n + 1 > t->cap) {
        t->cap = (t->n + n + 1) * 2;
        t->p = realloc(t->p, t->cap);
        assert_non_null(t->p);
    }
    memcpy(t->p + t->n, s, n);
    t->n += n;
    t->p[t->n] = '\0';
}
static void adds(text *t, const char *s) { add(t, s, strlen(s)); }

/* A CSV cell: quoted when it must be, and now and then when it need not
 * be (a row the fast path cannot copy as read). */
static void cell(text *t, const char *v, int first) {
    if (!first) adds(t, ",");
    int special = strpbrk(v, ",\"\r\n") != NULL;
    if (!special && !chance(4)) {
        adds(t, v);
        return;
    }
    adds(t, "\"");
    for (const char *c = v; *c; c++) add(t, *c == '"' ? "\"\"" : c, 1 + (*c == '"'));
    adds(t, "\"");
}

/* ---- the generated inputs */

static const char *const k_in_shapes[] = {"\"8,128;8,128\"", "\"16,128;16,128\"", "\"32,64;64,32\"",
                                          "\"4,4;4,4\"",     "\"1,8,128;1,8,128\"", "\"2,2;2,2\""};
static const char *const k_out_shapes[] = {"\"8,128\"", "\"16,128\"", "\"32,32\"", "\"4,4\"", "\"1,8,128\"", "\"2,2\""};
enum { NSHAPES = sizeof k_in_shapes / sizeof k_in_shapes[0] };
static const char *const k_dtypes[] = {"DT_BF16;DT_BF16", "DT_FLOAT;DT_FLOAT"};
static const char *const k_durations[] = {"", "", "1.000000", "2.5", " 3.000000", "0", "abc", "0.000000", "12.250000", "nan"};
enum { NDUR = sizeof k_durations / sizeof k_durations[0] };
static const char *const k_notes[] = {"", "ok", "a,b", "say \"hi\"", "two\nlines", "x"};

/* Database CSVs: the catalogue operators Add, MatMulV2/V3 (aliases),
 * DispatchFFNCombine (EP Size), and Cast (not in the catalogue). */
static const char *const k_db_ops[] = {"Add", "MatMulV2", "MatMulV3", "DispatchFFNCombine", "Cast"};
enum { NDBOPS = sizeof k_db_ops / sizeof k_db_ops[0] };

static const char *const k_db_cols[] = {"OP State",
                                        "Accelerator Core",
                                        "Input Shapes",
                                        "Input Data Types",
                                        "Input Formats",
                                        "Output Shapes",
                                        "Output Data Types",
                                        "Output Formats",
                                        "Average Duration(us)",
                                        "Profiling Average Duration(us)",
                                        "MicroBench aiv_time(us)",
                                        "Profiling Average aiv_time(us)",
                                        "Note",
                                        "EP Size"};
enum { NDBCOLS = sizeof k_db_cols / sizeof k_db_cols[0] };

static const char *db_value(const char *col, unsigned shape, unsigned dt) {
    static char buf[64];
    if (!strcmp(col, "OP State")) return chance(90) ? "dynamic" : "static";
    if (!strcmp(col, "Accelerator Core")) return "AI_VECTOR_CORE";
    if (!strcmp(col, "Input Shapes")) return k_in_shapes[shape];
    if (!strcmp(col, "Input Data Types")) return k_dtypes[dt];
    if (!strcmp(col, "Input Formats")) return "ND;ND";
    if (!strcmp(col, "Output Shapes")) return k_out_shapes[shape];
    if (!strcmp(col, "Output Data Types")) return dt ? "DT_FLOAT" : "DT_BF16";
    if (!strcmp(col, "Output Formats")) return "ND";
    if (!strcmp(col, "Note")) return k_notes[pick(6)];
    if (!strcmp(col, "EP Size")) return chance(80) ? "16" : "8";
    if (chance(10)) return k_durations[pick(NDUR)];
    snprintf(buf, sizeof buf, "%u.%06u", pick(20), pick(1000000));
    return buf;
}

static void gen_db_csv(const char *dir, const char *op) {
    const char *cols[NDBCOLS + 2];
    int nc = 0;
    int legacy = chance(8), dfc = !strcmp(op, "DispatchFFNCombine");
    for (int i = 0; i < NDBCOLS; i++) {
        const char *c = k_db_cols[i];
        if (!strcmp(c, "EP Size") && !(dfc && chance(60))) continue;
        if (!strcmp(c, "Note") && chance(40)) continue;
        if (!strcmp(c, "MicroBench aiv_time(us)") && chance(30)) continue;
        if (!strcmp(c, "Average Duration(us)") && legacy) c = "MicroBench Duration(us)";
        cols[nc++] = c;
    }
    if (chance(5)) cols[nc++] = "Note"; /* a name twice: the last one wins */
    if (chance(20)) { /* another column order */
        unsigned a = pick((unsigned)nc), b = pick((unsigned)nc);
        const char *x = cols[a];
        cols[a] = cols[b];
        cols[b] = x;
    }
    const char *eol = chance(85) ? "\r\n" : "\n";
    text t = {0};
    for (int i = 0; i < nc; i++) cell(&t, cols[i], i == 0);
    adds(&t, eol);
    unsigned rows = pick(30);
    for (unsigned r = 0; r < rows; r++) {
        unsigned shape = pick(NSHAPES), dt = pick(2);
        int ncells = chance(5) ? (int)pick((unsigned)nc) + 1 : nc;
        for (int i = 0; i < ncells; i++) cell(&t, db_value(cols[i], shape, dt), i == 0);
        if (chance(3)) adds(&t, ",extra");
        if (r + 1 < rows || chance(80)) adds(&t, chance(95) ? eol : "\n");
        if (chance(3)) adds(&t, eol); /* a blank line */
    }
    char path[2048];
    snprintf(path, sizeof path, "%s/%s.csv", dir, op);
    put_file(path, t.p, t.n);
    free(t.p);
}

static const char k_summary_header[] =
    "Device_id,Model ID,Task ID,Stream ID,Op Name,OP Type,OP State,Task Type,Task Start Time(us),"
    "Task Duration(us),Task Wait Time(us),Block Dim,Mix Block Dim,HF32 Eligible,Input Shapes,Input Data Types,"
    "Input Formats,Output Shapes,Output Data Types,Output Formats,Context ID,aicore_time(us),aic_total_cycles,"
    "aiv_time(us),aiv_total_cycles,cube_utilization(%)";

static const char *const k_prof_ops[] = {"Add", "MatMulV2", "MatMulV3", "MatMulCommon", "DispatchFFNCombine",
                                         "Cast", "Sort"};
enum { NPROFOPS = sizeof k_prof_ops / sizeof k_prof_ops[0] };

static void gen_op_summary(const char *path) {
    text t = {0};
    adds(&t, k_summary_header);
    adds(&t, "\n");
    unsigned rows = pick(60);
    for (unsigned r = 0; r < rows; r++) {
        const char *op = k_prof_ops[pick(NPROFOPS)];
        unsigned shape = pick(NSHAPES), dt = pick(2);
        char b[128];
        snprintf(b, sizeof b, "0,4294967295,%u,2,%s_%u,%s,dynamic,AI_VECTOR_CORE,1780676244%06u.000\t", r, op, r, op, r);
        adds(&t, b);
        if (chance(5)) snprintf(b, sizeof b, ",N/A");
        else snprintf(b, sizeof b, ",%u.%u", pick(40), pick(10));
        adds(&t, b);
        adds(&t, ",0,8,0,NO");
        cell(&t, k_in_shapes[shape], 0);
        cell(&t, k_dtypes[dt], 0);
        cell(&t, "ND;ND", 0);
        cell(&t, k_out_shapes[shape], 0);
        cell(&t, dt ? "DT_FLOAT" : "DT_BF16", 0);
        cell(&t, "ND", 0);
        snprintf(b, sizeof b, ",N/A,%u.%u,%u,%u.%u,%u,0\n", pick(9), pick(10), pick(1000), pick(9), pick(10), pick(1000));
        adds(&t, b);
    }
    put_file(path, t.p, t.n);
    free(t.p);
}

/* The inputs of one seed under root (db/ and prof/). */
static void gen_inputs(const char *root, uint64_t seed) {
    rng_state = seed;
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/db", root);
    mkdirs(dir);
    for (int i = 0; i < NDBOPS; i++)
        if (chance(75)) gen_db_csv(dir, k_db_ops[i]);
    unsigned nprof = 1 + pick(2);
    for (unsigned p = 0; p < nprof; p++) {
        snprintf(dir, sizeof dir, "%s/prof/PROF_00000%u_x/mindstudio_profiler_output", root, p + 1);
        mkdirs(dir);
        char path[2048];
        snprintf(path, sizeof path, "%s/op_summary_2026010%u.csv", dir, p + 1);
        gen_op_summary(path);
    }
}

/* ---- runs and comparison */

typedef struct outcome {
    int rc;
    char msg[1024];
    char *report; /* what went to opts.out */
    size_t nreport;
} outcome;

static void run_update(const char *root, opdb_update_opts o, bool eager, outcome *out) {
    char cwd[1024];
    assert_non_null(getcwd(cwd, sizeof cwd));
    assert_int_equal(chdir(root), 0);
    const char *prof[] = {"prof"};
    o.db_dir = "db";
    o.prof_paths = prof;
    o.nprof = 1;
    o.timestamp = "20260101_000000";
    o.eager = eager;
    o.out = tmpfile();
    assert_non_null(o.out);
    opdb_err err;
    opdb_err_clear(&err);
    out->rc = opdb_update_run(&o, &err);
    snprintf(out->msg, sizeof out->msg, "%s", out->rc ? err.msg : "");
    fflush(o.out);
    long n = ftell(o.out);
    rewind(o.out);
    out->report = malloc((size_t)n + 1);
    out->nreport = fread(out->report, 1, (size_t)n, o.out);
    out->report[out->nreport] = '\0';
    fclose(o.out);
    assert_int_equal(chdir(cwd), 0);
}

static char *slurp(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    rewind(f);
    char *p = malloc((size_t)len + 1);
    *n = fread(p, 1, (size_t)len, f);
    fclose(f);
    return p;
}

static int cmp_names(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The sorted entries of a folder (malloc'ed). */
static char **list_dir(const char *dir, size_t *n) {
    DIR *d = opendir(dir);
    assert_non_null(d);
    char **v = NULL;
    *n = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        v = realloc(v, (*n + 1) * sizeof *v);
        v[(*n)++] = strdup(e->d_name);
    }
    closedir(d);
    if (*n) qsort(v, *n, sizeof *v, cmp_names);
    return v;
}

/* Fails the test where the two trees differ (names, kinds or bytes). */
static void same_tree(const char *a, const char *b, uint64_t seed) {
    size_t na, nb;
    char **la = list_dir(a, &na), **lb = list_dir(b, &nb);
    if (na != nb) fail_msg("seed %llu: %s has %zu entries, %s has %zu", (unsigned long long)seed, a, na, b, nb);
    for (size_t i = 0; i < na; i++) {
        if (strcmp(la[i], lb[i])) fail_msg("seed %llu: %s/%s vs %s/%s", (unsigned long long)seed, a, la[i], b, lb[i]);
        char pa[2048], pb[2048];
        snprintf(pa, sizeof pa, "%s/%s", a, la[i]);
        snprintf(pb, sizeof pb, "%s/%s", b, lb[i]);
        struct stat sa, sb;
        assert_int_equal(stat(pa, &sa), 0);
        assert_int_equal(stat(pb, &sb), 0);
        assert_int_equal(S_ISDIR(sa.st_mode), S_ISDIR(sb.st_mode));
        if (S_ISDIR(sa.st_mode)) {
            same_tree(pa, pb, seed);
        } else {
            size_t xa, xb;
            char *da = slurp(pa, &xa), *db = slurp(pb, &xb);
            if (xa != xb || memcmp(da, db, xa))
                fail_msg("seed %llu: %s and %s differ (fast path vs simple path)", (unsigned long long)seed, pa, pb);
            free(da);
            free(db);
        }
        free(la[i]);
        free(lb[i]);
    }
    free(la);
    free(lb);
}

static void rm_tree(const char *dir) {
    size_t n;
    char **l = list_dir(dir, &n);
    for (size_t i = 0; i < n; i++) {
        char p[2048];
        snprintf(p, sizeof p, "%s/%s", dir, l[i]);
        struct stat st;
        if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode)) rm_tree(p);
        else unlink(p);
        free(l[i]);
    }
    free(l);
    rmdir(dir);
}

static void test_fast_and_simple_paths_agree(void **state) {
    (void)state;
    char tmpl[] = "/tmp/opdb_update_paths_XXXXXX";
    char *top = mkdtemp(tmpl);
    assert_non_null(top);
    int merged = 0; /* seeds whose run updated rows */
    for (uint64_t seed = 1; seed <= SEEDS; seed++) {
        char fast[1100], ref[1100];
        snprintf(fast, sizeof fast, "%s/fast", top);
        snprintf(ref, sizeof ref, "%s/ref", top);
        gen_inputs(fast, seed * 7919);
        gen_inputs(ref, seed * 7919);
        rng_state = seed ^ 0xabcdef;
        opdb_update_opts o;
        opdb_update_opts_init(&o);
        o.quirks = chance(35);
        o.missing_only = chance(25);
        o.prune = chance(35);
        o.add_new_ops = !o.quirks && chance(40);
        o.ep_size = chance(50) ? 16 : 0;
        outcome a, b;
        run_update(fast, o, false, &a);
        run_update(ref, o, true, &b);
        if (a.rc != b.rc || strcmp(a.msg, b.msg))
            fail_msg("seed %llu: fast rc %d (%s), simple rc %d (%s)", (unsigned long long)seed, a.rc, a.msg, b.rc,
                     b.msg);
        if (a.nreport != b.nreport || memcmp(a.report, b.report, a.nreport))
            fail_msg("seed %llu: the reports differ:\n%.*s\n----\n%.*s", (unsigned long long)seed, (int)a.nreport,
                     a.report, (int)b.nreport, b.report);
        const char *upd = a.rc == 0 ? strstr(a.report, "| Rows updated") : NULL;
        long nupd = 0;
        if (upd && sscanf(upd, "| Rows updated | %ld", &nupd) == 1 && nupd > 0) merged++;
        free(a.report);
        free(b.report);
        same_tree(fast, ref, seed);
        rm_tree(fast);
        rm_tree(ref);
    }
    rm_tree(top);
    /* the generated inputs do exercise the merge (not only error paths) */
    assert_true(merged >= SEEDS / 2);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fast_and_simple_paths_agree),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
