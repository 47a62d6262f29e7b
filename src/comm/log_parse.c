/* nccl-tests and OSU log readers. nccl-tests rows are recognised by shape, so
 * any version's layout works: size count type [redop] [root] then one or two
 * (time algbw busbw #wrong) groups; the redop may be blank (old alltoall), the
 * root column absent (old versions) and the error column a float (old
 * versions, not a #wrong count). Launcher prefixes ("[1,0]<stdout>:" of
 * mpirun --tag-output, "0: " of srun --label) are stripped and any other line
 * (NCCL INFO of other ranks, device lines) is skipped. */
#include <ctype.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "opdb/comm.h"
#include "opdb/pystr.h"

#define MAXTOK 24

static size_t split(const char *p, const char *end, opdb_span *tok) {
    size_t n = 0;
    while (p < end && n < MAXTOK) {
        while (p < end && isspace((unsigned char)*p)) p++;
        if (p >= end) break;
        const char *s = p;
        while (p < end && !isspace((unsigned char)*p)) p++;
        tok[n++] = opdb_span_make(s, (size_t)(p - s));
    }
    return n;
}

static bool is_uint(opdb_span t) {
    if (!t.n || t.n > 18) return false;
    for (size_t i = 0; i < t.n; i++)
        if (!isdigit((unsigned char)t.p[i])) return false;
    return true;
}
static bool num(opdb_span t, double *v) { return t.n < 64 && opdb_py_float(t.p, t.n, v); }
static bool has(const char *p, const char *end, const char *needle) {
    size_t k = strlen(needle);
    for (; p + k <= end; p++)
        if (!memcmp(p, needle, k)) return true;
    return false;
}

/* Removes every "[1,0]<stdout>:" / "<stderr>:" tag (nccl-tests writes a row
 * in pieces, so mpirun --tag-output tags it mid-line too), then srun's
 * "  12: " label, into line. */
static void clean_line(const char *p, const char *end, opdb_strbuf *line) {
    opdb_sb_clear(line);
    while (p < end) {
        if (*p == '[') {
            const char *q = p + 1;
            while (q < end && (isdigit((unsigned char)*q) || *q == ',')) q++;
            if (q > p + 1 && q + 10 <= end && (!memcmp(q, "]<stdout>:", 10) || !memcmp(q, "]<stderr>:", 10))) {
                p = q + 10;
                continue;
            }
        }
        opdb_sb_addc(line, *p++);
    }
    opdb_sb_addc(line, '\0');
    line->n--;
    const char *q = line->p, *e = line->p + line->n;
    while (q < e && *q == ' ') q++;
    const char *d = q;
    while (q < e && isdigit((unsigned char)*q)) q++;
    if (q > d && q + 1 < e && q[0] == ':' && q[1] == ' ') {
        size_t k = (size_t)(q + 2 - line->p);
        memmove(line->p, line->p + k, line->n - k + 1);
        line->n -= k;
    }
}

static bool wrong_of(opdb_span t, long long *w) {
    if (is_uint(t)) {
        *w = atoll(t.p);
        return true;
    }
    double v;
    if ((t.n == 3 && !memcmp(t.p, "N/A", 3)) || num(t, &v)) {
        *w = -1;
        return true;
    }
    return false;
}

static bool half(const opdb_span *t, double *us, long long *wrong) {
    double a, b;
    return num(t[0], us) && num(t[1], &a) && num(t[2], &b) && wrong_of(t[3], wrong);
}

static bool nccl_row(const opdb_span *t, size_t n, opdb_comm_log *log) {
    if (n < 7 || !is_uint(t[0]) || !is_uint(t[1]) || !isalpha((unsigned char)t[2].p[0]) || t[2].n >= sizeof log->type)
        return false;
    size_t k = 3;
    double v;
    if (k < n && !num(t[k], &v)) k++; /* redop */
    size_t rest = n - k;
    if (rest == 9 || rest == 5) k++, rest--; /* root */
    if (rest != 8 && rest != 4) return false;
    opdb_comm_log_row r = {atoll(t[0].p), -1, -1, -1, -1};
    if (!half(t + k, &r.oop_us, &r.oop_wrong)) return false;
    if (rest == 8 && !half(t + k + 4, &r.ip_us, &r.ip_wrong)) return false;
    memcpy(log->type, t[2].p, t[2].n);
    log->type[t[2].n] = '\0';
    log->rows = opdb_xrealloc(log->rows, (log->n + 1) * sizeof *log->rows);
    log->rows[log->n++] = r;
    return true;
}

static int op_of_words(const char *p, const char *end) {
    char buf[256];
    size_t n = (size_t)(end - p) < sizeof buf - 1 ? (size_t)(end - p) : sizeof buf - 1;
    memcpy(buf, p, n);
    buf[n] = '\0';
    return opdb_comm_op_parse_loose(buf);
}

int opdb_comm_log_parse(const char *text, size_t len, opdb_comm_log *log, opdb_err *err) {
    memset(log, 0, sizeof *log);
    log->op = -1;
    const char *p = text, *end = text + len;
    opdb_strbuf line;
    opdb_sb_init(&line);
    bool osu = false, osu_hdr = false;
    char hosts[8][64];
    int nhosts = 0;
    long long max_rank = -1;
    unsigned char *seen = NULL; /* ranks met in '#  Rank' lines, one bit each */
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end;
        clean_line(p, le, &line);
        const char *s = line.p, *lend = line.p + line.n;
        if (lend > s && lend[-1] == '\r') lend--;
        opdb_span t[MAXTOK];
        size_t n = split(s, lend, t);
        if (n >= 2 && t[0].n == 1 && t[0].p[0] == '#') {
            if (n >= 4 && t[1].n == 3 && !memcmp(t[1].p, "OSU", 3)) {
                osu = true;
                size_t tl = (size_t)(lend - t[1].p) < sizeof log->title ? (size_t)(lend - t[1].p) : sizeof log->title - 1;
                memcpy(log->title, t[1].p, tl);
                log->title[tl] = '\0';
                log->op = op_of_words(t[1].p, lend);
                log->osu_collective = log->op >= 0;
            } else if (osu && t[1].n == 4 && !memcmp(t[1].p, "Size", 4)) {
                osu_hdr = true;
                log->osu_bandwidth = has(s, lend, "MB/s");
            } else if (n >= 4 && t[1].n == 4 && !memcmp(t[1].p, "Rank", 4) && is_uint(t[2])) {
                long long r = t[2].n > 18 ? LLONG_MAX - 1 : atoll(t[2].p);
                if (r > max_rank) max_rank = r;
                if (r < OPDB_COMM_MAX_DEVICES) { /* a launcher may print a rank's line twice: count ranks, not lines */
                    if (!seen) seen = opdb_xcalloc(OPDB_COMM_MAX_DEVICES / 8, 1);
                    log->distinct_ranks += !(seen[r / 8] & (1u << (r % 8)));
                    seen[r / 8] |= (unsigned char)(1u << (r % 8));
                }
                for (size_t i = 3; i + 1 < n; i++)
                    if (t[i].n == 2 && !memcmp(t[i].p, "on", 2) && t[i + 1].n < 64) {
                        int h = 0;
                        while (h < nhosts && !(strlen(hosts[h]) == t[i + 1].n && !memcmp(hosts[h], t[i + 1].p, t[i + 1].n))) h++;
                        if (h == nhosts && nhosts < 8) {
                            memcpy(hosts[nhosts], t[i + 1].p, t[i + 1].n);
                            hosts[nhosts++][t[i + 1].n] = '\0';
                        } else if (h == nhosts) {
                            nhosts = 8; /* "many" */
                        }
                        break;
                    }
            } else if (has(s, lend, "Collective test starting:")) {
                log->op = op_of_words(s, lend);
            }
        } else if (osu && osu_hdr) {
            double sz, v;
            if (n >= 2 && is_uint(t[0]) && num(t[0], &sz) && num(t[1], &v)) {
                opdb_comm_log_row r = {(long long)sz, v, -1, -1, -1};
                log->rows = opdb_xrealloc(log->rows, (log->n + 1) * sizeof *log->rows);
                log->rows[log->n++] = r;
            }
        } else if (!nccl_row(t, n, log) && !log->failure[0] &&
                   (has(s, lend, "Test NCCL failure") || has(s, lend, "Test failure") || has(s, lend, "Test CUDA failure"))) {
            size_t fl = (size_t)(lend - s) < sizeof log->failure ? (size_t)(lend - s) : sizeof log->failure - 1;
            memcpy(log->failure, s, fl);
            log->failure[fl] = '\0';
        }
        p = nl ? nl + 1 : end;
    }
    opdb_sb_free(&line);
    free(seen);
    snprintf(log->format, sizeof log->format, "%s", osu ? "osu" : "nccl-tests");
    log->nranks = max_rank + 1;
    log->hosts = nhosts;
    if (!osu && log->n == 0 && !log->failure[0])
        return opdb_fail(err, OPDB_ERR_RUNTIME, "neither an nccl-tests table nor an OSU '# Size' table found");
    if (osu && !osu_hdr) return opdb_fail(err, OPDB_ERR_RUNTIME, "OSU log without a '# Size' header line");
    return 0;
}

void opdb_comm_log_free(opdb_comm_log *log) {
    free(log->rows);
    log->rows = NULL;
    log->n = 0;
}
