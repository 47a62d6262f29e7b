/* Input detection by content (docs/ingest-formats.md §1): SQLite magic, gzip
 * magic, JSON's first byte, else CSV; and for a CSV that parse cannot use,
 * one line saying what it is and what to do instead. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ingest/detect.h"
#include "opdb/comm.h"
#include "opdb/csv.h"
#include "opdb/fs.h"
#include "opdb/ingest.h"
#include "opdb/schema.h"

int opdb_input_detect(const char *path, opdb_input_kind *kind, opdb_err *err) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return opdb_fail(err, OPDB_ERR_RUNTIME, "%s: cannot open: %s", path, strerror(errno));
    unsigned char b[64];
    ssize_t n = read(fd, b, sizeof b);
    close(fd);
    if (n < 0) return opdb_fail(err, OPDB_ERR_RUNTIME, "%s: read failed: %s", path, strerror(errno));
    *kind = OPDB_INPUT_CSV;
    if (n >= 16 && memcmp(b, "SQLite format 3", 16) == 0) {
        *kind = OPDB_INPUT_SQLITE;
        return 0;
    }
    if (n >= 2 && b[0] == 0x1f && b[1] == 0x8b) {
        *kind = OPDB_INPUT_JSON;
        return 0;
    }
    /* UTF-16/32 inputs are named by the CSV sniffer (opdb_csv_sniff) */
    ssize_t i = 0;
    if (n >= 3 && b[0] == 0xef && b[1] == 0xbb && b[2] == 0xbf) i = 3;
    while (i < n && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n')) i++;
    if (i < n && (b[i] == '{' || b[i] == '[')) *kind = OPDB_INPUT_JSON;
    return 0;
}

/* ---- CSV hints */

#define MAX_HDR 64

typedef struct hdr {
    char line[8192];
    const char *cell[MAX_HDR];
    int n;
} hdr;

/* The first line, split on commas (quotes and spaces around cells dropped). */
static void read_header(const char *path, hdr *h) {
    h->n = 0;
    FILE *f = fopen(path, "rb");
    if (!f) return;
    /* the first line that is not blank, as parse takes the first non-blank record as the header */
    char *p = h->line;
    bool first = true;
    do {
        if (!fgets(h->line, sizeof h->line, f)) h->line[0] = '\0';
        p = h->line;
        if (first && (unsigned char)p[0] == 0xef && (unsigned char)p[1] == 0xbb && (unsigned char)p[2] == 0xbf) p += 3;
        first = false;
    } while (h->line[0] && strspn(p, " \t\r\n") == strlen(p));
    fclose(f);
    while (*p && h->n < MAX_HDR) {
        char *end = strchr(p, ',');
        char *next = end ? end + 1 : p + strlen(p);
        if (end) *end = '\0';
        while (*p == ' ' || *p == '"' || *p == '\t') p++;
        size_t k = strlen(p);
        while (k && (p[k - 1] == ' ' || p[k - 1] == '"' || p[k - 1] == '\r' || p[k - 1] == '\n' || p[k - 1] == '\t'))
            p[--k] = '\0';
        h->cell[h->n++] = p;
        p = next;
    }
}

static bool has(const hdr *h, const char *name) {
    for (int i = 0; i < h->n; i++)
        if (strcmp(h->cell[i], name) == 0) return true;
    return false;
}

int kd_csv_kind(const char *path) {
    static hdr h;
    read_header(path, &h);
    if (has(&h, "Type") && has(&h, "Duration(us)")) return KD_CSV_KERNEL_DETAILS;
    if (has(&h, "OP Type") && has(&h, "Task Duration(us)")) return KD_CSV_OP_SUMMARY;
    return h.n > 1 || (h.n == 1 && h.cell[0][0]) ? KD_CSV_OTHER : KD_CSV_EMPTY;
}

#define LOG_HEAD (16u << 20) /* logs are small; their table can follow megabytes of launcher noise */

/* An nccl-tests or OSU log: what it is, pointing to `opdb comm import`; false when it is not one. */
static bool collective_log(const char *path, char *buf, size_t cap) {
    FILE *f = fopen(path, "rb");
    if (!f) return false;
    opdb_strbuf text;
    opdb_sb_init(&text);
    char chunk[1 << 16];
    size_t k;
    while (text.n < LOG_HEAD && (k = fread(chunk, 1, sizeof chunk, f)) > 0) opdb_sb_add(&text, chunk, k);
    fclose(f);
    opdb_comm_log log;
    opdb_err e;
    opdb_err_clear(&e);
    /* a log without a result table (a failed run) still has its header lines */
    int rc = opdb_comm_log_parse(text.p ? text.p : "", text.n, &log, &e);
    bool osu = strcmp(log.format, "osu") == 0 && log.title[0];
    bool hit = osu || log.n > 0 || log.nranks > 0 || (rc == 0 && log.failure[0]);
    opdb_sb_free(&text);
    if (hit) {
        char what[200];
        int op = log.op >= 0 ? log.op : opdb_comm_op_parse_loose(opdb_path_basename(path));
        if (osu) snprintf(what, sizeof what, "an OSU benchmark log: %s", log.title);
        else if (op >= 0) snprintf(what, sizeof what, "an nccl-tests log of %s", opdb_comm_op_name((opdb_comm_op)op));
        else snprintf(what, sizeof what, "an nccl-tests log");
        if (osu && !log.osu_collective) /* point-to-point: no hcom table takes it */
            snprintf(buf, cap,
                     "%s, point-to-point timings rather than a per-kernel profile (opdb comm import reads collective "
                     "logs: nccl-tests, OSU collectives)",
                     what);
        else
            snprintf(buf, cap,
                     "%s, collective timings rather than a per-kernel profile; import it into the hcom_*.csv tables "
                     "with opdb comm import --logs %s --output-dir DATABASE",
                     what, path);
    }
    opdb_comm_log_free(&log);
    return hit;
}

#define WHAT_TO_DO "give opdb parse a kernel_details.csv, an op_summary_*.csv, a profiler .db export or a PyTorch profiler trace"

bool kd_csv_foreign(const char *path, char *buf, size_t cap) {
    char why[256];
    if (opdb_csv_sniff(path, why, sizeof why)) { /* UTF-16, binary, gzip: the header says nothing */
        snprintf(buf, cap, "%s", why);
        return true;
    }
    return collective_log(path, buf, cap);
}

void opdb_csv_profile_hint(const char *path, char *buf, size_t cap) {
    static hdr h;
    buf[0] = '\0';
    if (kd_csv_foreign(path, buf, cap)) return;
    read_header(path, &h);
    bool kd = has(&h, "Type") && has(&h, "Duration(us)");
    bool os = has(&h, "OP Type") && has(&h, "Task Duration(us)");
    if (kd || os) {
        if (!has(&h, OPDB_COL_INPUT_SHAPES) || !has(&h, OPDB_COL_OUTPUT_SHAPES))
            snprintf(buf, cap,
                     "profiled without shapes (Level0): re-profile with Level1 (torch_npu "
                     "experimental_config profiler_level=Level1, or record_shapes=True) so kernel shapes are recorded");
        return;
    }
    const char *kind = "a CSV without Type + Duration(us) (kernel_details) or OP Type + Task Duration(us) "
                       "(op_summary) columns";
    if (has(&h, "Core Type") && has(&h, "Count")) kind = "op_statistic: per-type totals, no shapes";
    else if (has(&h, "API Name")) kind = "api_statistic: host API totals";
    else if (has(&h, "Step") && has(&h, "Computing")) kind = "step_trace_time: per-step times";
    else if (has(&h, "Hit Rate")) kind = "l2_cache: cache hit rates";
    else if (has(&h, "Call Stack") || has(&h, "Host Self Duration(us)"))
        kind = "operator_details: host operators (read only beside a kernel_details.csv)";
    else if (has(&h, OPDB_COL_MB_DUR) || has(&h, OPDB_COL_PROF_AVG_DUR))
        kind = "an already aggregated database table: copy it into the database folder instead";
    else if (has(&h, "task_time(us)")) kind = "msprof task_time: no shapes";
    else if (has(&h, "Op Type") && has(&h, "Task Duration(us)")) kind = "msopprof OpBasicInfo: one operator, no shapes";
    else if (has(&h, "kernel_type") || has(&h, "full_kernel_time") || has(&h, "step_num"))
        kind = "legacy MindSpore profiler intermediate file";
    snprintf(buf, cap, "not a per-kernel profile (%s); " WHAT_TO_DO, kind);
}
