/* See ascend_db.h.  Counter-to-column mapping derived from the real CSV +
 * SQLite pair of one run (shared/data/real/ascend/msinsight_l1_rank0_*):
 * `*_time` counters are in ns (the CSV's `(us)` columns = value / 1000),
 * aic_total_time / aiv_total_time are aicore_time(us) / aiv_time(us), the
 * rest keep their names; cube_utilization(%) has no counter (column empty). */
#include "ingest/ascend_db.h"

#include <math.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opdb/core.h"

static const struct {
    const char *counter;
    double div; /* ns counters: / 1000 for the CSV's (us) columns */
} k_counter[OPDB_NMETRICS] = {
    {"aic_total_time", 1000},   {"aic_total_cycles", 1},   {"aic_mac_time", 1000},     {"aic_mac_ratio", 1},
    {"aic_scalar_time", 1000},  {"aic_scalar_ratio", 1},   {"aic_mte1_time", 1000},    {"aic_mte1_ratio", 1},
    {"aic_mte2_time", 1000},    {"aic_mte2_ratio", 1},     {"aic_fixpipe_time", 1000}, {"aic_fixpipe_ratio", 1},
    {"aic_icache_miss_rate", 1}, {"aiv_total_time", 1000}, {"aiv_total_cycles", 1},    {"aiv_vec_time", 1000},
    {"aiv_vec_ratio", 1},       {"aiv_scalar_time", 1000}, {"aiv_scalar_ratio", 1},    {"aiv_mte2_time", 1000},
    {"aiv_mte2_ratio", 1},      {"aiv_mte3_time", 1000},   {"aiv_mte3_ratio", 1},      {"aiv_icache_miss_rate", 1},
    {NULL, 1},                  /* cube_utilization(%): not exported */
};

/* Cells of the CSV-like record: type, 2 shapes, duration, 6 descriptive, 25 metrics. */
enum { C_TYPE, C_IN, C_OUT, C_DUR, C_DESC0, C_METRIC0 = C_DESC0 + KD_NDESC, C_N = C_METRIC0 + OPDB_NMETRICS };

static int db_fail_wal(opdb_err *err, const char *path, sqlite3 *db, const char *what, bool wal) {
    if (wal)
        return opdb_fail(err, OPDB_ERR_RUNTIME, "%s: cannot read this SQLite export with its write-ahead log (%s-wal, "
                         "committed rows not yet in the file) (%s): %s; SQLite needs write access to the folder to "
                         "read the log: copy both files to a writable folder, or checkpoint the log into the file",
                         path, path, what, db ? sqlite3_errmsg(db) : "out of memory");
    return opdb_fail(err, OPDB_ERR_RUNTIME, "%s: malformed SQLite profiler export (%s): %s", path, what,
                     db ? sqlite3_errmsg(db) : "out of memory");
}

static bool table_exists(sqlite3 *db, const char *name, int *rc) {
    sqlite3_stmt *st = NULL;
    *rc = sqlite3_prepare_v2(db, "SELECT 1 FROM sqlite_master WHERE type='table' AND name=?1", -1, &st, NULL);
    bool hit = false;
    if (*rc == SQLITE_OK) {
        sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
        int s = sqlite3_step(st);
        hit = s == SQLITE_ROW;
        if (s != SQLITE_ROW && s != SQLITE_DONE) *rc = s;
    }
    sqlite3_finalize(st);
    return hit;
}

/* A non-empty write-ahead log beside the file holds committed rows the
 * main file does not have yet: it must be read, so the file cannot be opened
 * as immutable then. */
static bool has_wal(const char *path) {
    size_t n = strlen(path);
    char *wal = opdb_xmalloc(n + 5);
    memcpy(wal, path, n);
    memcpy(wal + n, "-wal", 5);
    struct stat sb;
    bool hit = stat(wal, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size > 0;
    free(wal);
    return hit;
}

/* file: URI with the characters a URI path cannot hold escaped. */
static char *uri_of(const char *path, bool wal) {
    size_t n = strlen(path);
    char *u = opdb_xmalloc(n * 3 + 32);
    char *o = u + sprintf(u, "file:");
    for (const char *p = path; *p; p++) {
        unsigned char c = (unsigned char)*p;
        if (c == '%' || c == '?' || c == '#' || c <= 0x20 || c >= 0x7f) o += sprintf(o, "%%%02X", c);
        else *o++ = (char)c;
    }
    strcpy(o, wal ? "?mode=ro" : "?immutable=1");
    return u;
}

/* Ids of the counter names in STRING_IDS (0 when absent). */
static int counter_ids(sqlite3 *db, sqlite3_int64 ids[OPDB_NMETRICS]) {
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(db, "SELECT id FROM STRING_IDS WHERE value=?1", -1, &st, NULL);
    for (int m = 0; m < OPDB_NMETRICS && rc == SQLITE_OK; m++) {
        ids[m] = 0;
        if (!k_counter[m].counter) continue;
        sqlite3_reset(st);
        sqlite3_bind_text(st, 1, k_counter[m].counter, -1, SQLITE_STATIC);
        int s = sqlite3_step(st);
        if (s == SQLITE_ROW) ids[m] = sqlite3_column_int64(st, 0);
        else if (s != SQLITE_DONE) rc = s;
    }
    sqlite3_finalize(st);
    return rc;
}

static const char *k_desc_cols[KD_NDESC] = {NULL, "taskType", "inputDataTypes", "inputFormats", "outputDataTypes",
                                            "outputFormats"};

static char *build_query(const sqlite3_int64 ids[OPDB_NMETRICS], bool pmu) {
    opdb_strbuf q;
    opdb_sb_init(&q);
    opdb_sb_adds(&q, "SELECT t.endNs - t.startNs, (SELECT value FROM STRING_IDS WHERE id=c.opType), "
                     "(SELECT value FROM STRING_IDS WHERE id=c.inputShapes), "
                     "(SELECT value FROM STRING_IDS WHERE id=c.outputShapes)");
    for (int i = 1; i < KD_NDESC; i++)
        opdb_sb_addf(&q, ", (SELECT value FROM STRING_IDS WHERE id=c.%s)", k_desc_cols[i]);
    for (int m = 0; m < OPDB_NMETRICS; m++)
        if (pmu && ids[m]) opdb_sb_addf(&q, ", pm.m%d", m);
    opdb_sb_adds(&q, " FROM COMPUTE_TASK_INFO c JOIN TASK t ON t.globalTaskId = c.globalTaskId");
    if (pmu) {
        opdb_sb_adds(&q, " LEFT JOIN (SELECT globalTaskId");
        for (int m = 0; m < OPDB_NMETRICS; m++)
            if (ids[m]) opdb_sb_addf(&q, ", MAX(CASE WHEN name=%lld THEN value END) AS m%d", (long long)ids[m], m);
        opdb_sb_adds(&q, " FROM TASK_PMU_INFO GROUP BY globalTaskId) pm ON pm.globalTaskId = c.globalTaskId");
    }
    opdb_sb_adds(&q, " ORDER BY t.startNs, c.globalTaskId");
    return q.p;
}

/* endNs - startNs in µs as a cell. A NULL time, text, or a difference that
 * overflowed 64-bit nanoseconds (SQLite then computes in floating point)
 * gives a cell that is not a finite number, so the row is skipped and counted
 * like a bad Duration(us) in a CSV, never read as 0 or as 2^63 ns. */
static int duration_cell(sqlite3_stmt *st, char *buf, size_t cap) {
    switch (sqlite3_column_type(st, 0)) {
    case SQLITE_INTEGER: return snprintf(buf, cap, "%.17g", (double)sqlite3_column_int64(st, 0) / 1000.0);
    case SQLITE_FLOAT: {
        double ns = sqlite3_column_double(st, 0);
        if (isfinite(ns) && fabs(ns) < 9223372036854775807.0) return snprintf(buf, cap, "%.17g", ns / 1000.0);
        return snprintf(buf, cap, "overflow");
    }
    case SQLITE_NULL: return snprintf(buf, cap, "NULL");
    default: return snprintf(buf, cap, "not a number");
    }
}

int ascend_db_read(const char *path, ascend_db_row_cb cb, void *ctx, char *why, size_t cap, opdb_err *err) {
    bool wal = has_wal(path);
    char *uri = uri_of(path, wal);
    sqlite3 *db = NULL;
    int rc = sqlite3_open_v2(uri, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, NULL);
    free(uri);
    if (rc != SQLITE_OK) {
        db_fail_wal(err, path, db, "cannot open", wal);
        sqlite3_close(db);
        return -1;
    }
    sqlite3_stmt *st = NULL;
    char *sql = NULL;
    int ret = -1;
    bool cti = table_exists(db, "COMPUTE_TASK_INFO", &rc);
    bool task = rc == SQLITE_OK && table_exists(db, "TASK", &rc);
    bool strs = rc == SQLITE_OK && table_exists(db, "STRING_IDS", &rc);
    bool pmu = rc == SQLITE_OK && table_exists(db, "TASK_PMU_INFO", &rc);
    if (rc != SQLITE_OK) {
        db_fail_wal(err, path, db, "reading its table list", wal);
        goto out;
    }
    if (!cti || !task || !strs) {
        snprintf(why, cap, "an SQLite database without the COMPUTE_TASK_INFO, TASK and STRING_IDS tables of an "
                           "Ascend profiler export; give opdb parse an ascend_pytorch_profiler_*.db or msprof_*.db");
        ret = 1;
        goto out;
    }
    sqlite3_int64 ids[OPDB_NMETRICS] = {0};
    if (pmu && counter_ids(db, ids) != SQLITE_OK) {
        db_fail_wal(err, path, db, "reading STRING_IDS", wal);
        goto out;
    }
    sql = build_query(ids, pmu);
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
        db_fail_wal(err, path, db, "COMPUTE_TASK_INFO/TASK columns", wal);
        goto out;
    }
    kd_colmap L;
    for (int r = 0; r < KD_NROLES; r++) L.col[r] = -1;
    L.col[KD_TYPE] = C_TYPE;
    L.col[KD_IN_SHAPES] = C_IN;
    L.col[KD_OUT_SHAPES] = C_OUT;
    L.col[KD_DURATION] = C_DUR;
    for (int i = 1; i < KD_NDESC; i++) L.col[KD_OP_STATE + i] = C_DESC0 + i; /* OP State is not exported */
    L.metrics_present = 0;
    int qcol[OPDB_NMETRICS];
    int next = 4 + KD_NDESC - 1;
    for (int m = 0; m < OPDB_NMETRICS; m++) {
        qcol[m] = pmu && ids[m] ? next++ : -1;
        if (qcol[m] >= 0) {
            L.col[KD_METRIC0 + m] = C_METRIC0 + m;
            L.metrics_present |= 1u << m;
        }
    }
    L.max_col = C_N - 1;
    char num[C_N][40];
    opdb_field f[C_N];
    int s;
    ret = 0;
    while (ret == 0 && (s = sqlite3_step(st)) == SQLITE_ROW) {
        for (int i = 0; i < C_N; i++) f[i] = (opdb_field){num[i], 0};
        f[C_DUR].n = (uint32_t)duration_cell(st, num[C_DUR], sizeof num[C_DUR]);
        static const int strcols[] = {C_TYPE, C_IN, C_OUT};
        for (int k = 0; k < 3; k++) {
            const unsigned char *t = sqlite3_column_text(st, 1 + k);
            f[strcols[k]] = (opdb_field){t ? (char *)t : num[strcols[k]], t ? (uint32_t)sqlite3_column_bytes(st, 1 + k) : 0};
        }
        for (int i = 1; i < KD_NDESC; i++) {
            const unsigned char *t = sqlite3_column_text(st, 3 + i);
            if (t) f[C_DESC0 + i] = (opdb_field){(char *)t, (uint32_t)sqlite3_column_bytes(st, 3 + i)};
        }
        for (int m = 0; m < OPDB_NMETRICS; m++) {
            if (qcol[m] < 0 || sqlite3_column_type(st, qcol[m]) == SQLITE_NULL) continue;
            double v = sqlite3_column_double(st, qcol[m]) / k_counter[m].div;
            f[C_METRIC0 + m].n = (uint32_t)snprintf(num[C_METRIC0 + m], sizeof num[C_METRIC0 + m], "%.17g", v);
        }
        ret = cb(ctx, &L, f, C_N, err);
    }
    if (ret == 0 && s != SQLITE_DONE) ret = db_fail_wal(err, path, db, "reading kernels", wal);
out:
    sqlite3_finalize(st);
    free(sql);
    sqlite3_close(db);
    return ret;
}
