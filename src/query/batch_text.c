/* A JSONL batch answered as one JSONL text, on several threads: the form a
 * binding wants (one call per batch, nothing called back per result). The
 * lines are split into contiguous runs, one per thread, and the runs' texts
 * are joined in input order, so the output is the same for any thread count. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "opdb/core.h"
#include "core/call.h"
#include "opdb/query.h"
#include "query/query_internal.h"

typedef struct batch_run {
    const opdb_qdb *db;
    const char *text;
    size_t begin, end; /* byte range of whole lines */
    bool explain;
    opdb_strbuf out;
    opdb_qstats stats;
    int rc;
} batch_run;

static bool blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v'; }

static void *run_lines(void *arg) {
    batch_run *r = arg;
    size_t i = r->begin;
    while (i < r->end) {
        size_t j = i;
        while (j < r->end && r->text[j] != '\n') j++;
        size_t a = i, b = j;
        while (a < b && blank(r->text[a])) a++;
        while (b > a && blank(r->text[b - 1])) b--;
        i = j + 1;
        if (a == b) continue;
        opdb_qresult res;
        if (opdb_query_json(r->db, r->text + a, b - a, r->explain, &res) != 0) {
            r->rc = -1;
            return NULL;
        }
        q_stats_add(&r->stats, &res);
        const char *line = NULL;
        size_t n = 0;
        if (q_qresult_line(&res, &line, &n) != 0) {
            opdb_qresult_free(&res);
            r->rc = -1;
            return NULL;
        }
        opdb_sb_add(&r->out, line, n);
        opdb_sb_addc(&r->out, '\n');
        opdb_qresult_free(&res);
    }
    return NULL;
}

/* Cut points at line starts, about n/parts bytes apart. */
static size_t cut_at_line(const char *t, size_t n, size_t pos) {
    if (pos >= n) return n;
    const char *nl = memchr(t + pos, '\n', n - pos);
    return nl ? (size_t)(nl - t) + 1 : n;
}

static int batch_text_call(const opdb_qdb *db, const char *jsonl, size_t n, unsigned threads, bool explain,
                           char **out, size_t *out_n, opdb_qstats *stats) {
    if (!db || (!jsonl && n) || !out) return -1;
    *out = NULL;
    if (out_n) *out_n = 0;
    unsigned parts = threads ? threads : 1;
    if (parts > 256) parts = 256;
    if (n < (size_t)parts * 4096) parts = 1; /* small batches are not worth a thread */
    batch_run *runs = opdb_xcalloc(parts, sizeof *runs);
    pthread_t *tids = opdb_xcalloc(parts, sizeof *tids);
    bool *started = opdb_xcalloc(parts, sizeof *started);
    size_t at = 0;
    for (unsigned k = 0; k < parts; k++) {
        batch_run *r = &runs[k];
        r->db = db;
        r->text = jsonl;
        r->explain = explain;
        r->begin = at;
        r->end = k + 1 == parts ? n : cut_at_line(jsonl, n, n / parts * (k + 1));
        if (r->end < r->begin) r->end = r->begin;
        at = r->end;
        opdb_sb_init(&r->out);
    }
    opdb_call_workers held; /* held first: running out while starting them joins those started */
    opdb_call_hold_workers(&held, tids, started, parts, NULL, NULL);
    for (unsigned k = 1; k < parts; k++)
        started[k] = opdb_thread_create(&tids[k], run_lines, &runs[k]) == 0;
    run_lines(&runs[0]);
    for (unsigned k = 1; k < parts; k++)
        if (!started[k]) run_lines(&runs[k]); /* no thread to be had: run it here */
    opdb_call_drop_workers(&held);
    for (unsigned k = 1; k < parts; k++)
        if (started[k]) pthread_join(tids[k], NULL);
    opdb_call_check();
    int rc = 0;
    opdb_strbuf all;
    opdb_sb_init(&all);
    if (stats) memset(stats, 0, sizeof *stats);
    for (unsigned k = 0; k < parts; k++) {
        if (runs[k].rc) rc = -1;
        opdb_sb_add(&all, runs[k].out.p, runs[k].out.n);
        opdb_sb_free(&runs[k].out);
        if (stats) {
            stats->queries += runs[k].stats.queries;
            stats->measured += runs[k].stats.measured;
            stats->interpolated += runs[k].stats.interpolated;
            stats->partial += runs[k].stats.partial;
            stats->miss += runs[k].stats.miss;
            stats->error += runs[k].stats.error;
            stats->unsupported += runs[k].stats.unsupported;
        }
    }
    free(runs);
    free(tids);
    free(started);
    if (rc) {
        opdb_sb_free(&all);
        return -1;
    }
    if (stats) opdb_qdb_skipped(db, &stats->skipped_rows, &stats->skipped_files);
    opdb_sb_reserve(&all, 1); /* an empty batch still gives an (empty) string */
    all.p[all.n] = 0;
    *out = all.p;
    if (out_n) *out_n = all.n;
    return 0;
}

int opdb_query_batch_text(const opdb_qdb *db, const char *jsonl, size_t n, unsigned threads, bool explain,
                          char **out, size_t *out_n, opdb_qstats *stats) {
    if (!db) return -1;
    Q_ENTRY(db, batch_text_call(db, jsonl, n, threads, explain, out, out_n, stats));
}

void opdb_query_free_text(char *text) { free(text); }
