/* `opdb comm import`: one nccl-tests or OSU log -> rows appended to
 * <output-dir>/hcom_<op>_.csv. What the log does not say (op, device count,
 * dtype, tier) comes from the command line; a log that cannot be imported is
 * refused with one line. message_bytes follows the reference's meaning
 * (docs/COMM.md §3.3): nccl-tests' all_gather / reduce_scatter size is the
 * total over ranks, so it is divided by the device count; OSU's all-to-all
 * size is per peer, so it is multiplied by it. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "opdb/comm.h"
#include "core/call.h"
#include "opdb/db.h"
#include "opdb/fs.h"

static int comm_import_file(const opdb_comm_import_opts *o, const char *path, opdb_comm_import_result *res, opdb_err *err) {
    memset(res, 0, sizeof *res);
    opdb_strbuf sb;
    opdb_sb_init(&sb);
    if (opdb_read_file(path, &sb, err)) {
        opdb_sb_free(&sb);
        return -1;
    }
    opdb_comm_log log;
    int rc = opdb_comm_log_parse(sb.p, sb.n, &log, err);
    opdb_sb_free(&sb);
    if (rc) {
        opdb_err e = *err;
        opdb_err_clear(err);
        return opdb_fail(err, OPDB_ERR_RUNTIME, "%s: %s", path, e.msg);
    }
    opdb_comm_row *rows = NULL;
    int op = o->op >= 0 ? o->op : log.op;
    if (op < 0) op = opdb_comm_op_parse_loose(opdb_path_basename(path));
    long long nd = o->num_devices ? o->num_devices : log.nranks;
    const opdb_comm_dtype *dt = o->dtype;
    bool osu = !strcmp(log.format, "osu");
    if (!dt && !osu && log.type[0]) dt = opdb_comm_dtype_find(log.type);
    if (!dt && osu) dt = opdb_comm_dtype_default();
    int tier = o->tier >= 0 ? o->tier : log.hosts > 1 ? 0 : 1;
    if (log.failure[0] && log.n == 0) {
        rc = opdb_fail(err, OPDB_ERR_RUNTIME, "%s: the run failed before any result (%s)", path, log.failure);
    } else if (osu && !log.osu_collective && o->op < 0) {
        rc = opdb_fail(err, OPDB_ERR_RUNTIME, "%s: '%s' is a point-to-point test, not a collective; pass --op to "
                       "import it as one", path, log.title);
    } else if (op < 0) {
        rc = opdb_fail(err, OPDB_ERR_RUNTIME, "%s: cannot tell the collective from the log or its file name; pass --op",
                       path);
    } else if (!o->num_devices && log.nranks > 0 && (log.nranks != log.distinct_ranks || log.nranks > OPDB_COMM_MAX_DEVICES)) {
        rc = opdb_fail(err, OPDB_ERR_RUNTIME, "%s: the log's '#  Rank' lines go up to rank %lld but name %lld distinct "
                       "rank(s) below %d, so %lld is no device count; pass --num-devices", path, log.nranks - 1,
                       log.distinct_ranks, OPDB_COMM_MAX_DEVICES, log.nranks);
    } else if (nd > OPDB_COMM_MAX_DEVICES) {
        rc = opdb_fail(err, OPDB_ERR_RUNTIME, "%s: %lld devices is more than %d", path, nd, OPDB_COMM_MAX_DEVICES);
    } else if (nd < 1) {
        rc = opdb_fail(err, OPDB_ERR_RUNTIME, "%s: the log does not give the device count (no '#  Rank' lines); pass "
                       "--num-devices", path);
    } else if (!dt) {
        rc = opdb_fail(err, OPDB_ERR_RUNTIME, "%s: nccl-tests type '%s' has no hcom dtype; pass --dtype", path, log.type);
    } else if (log.n == 0) {
        rc = opdb_fail(err, OPDB_ERR_RUNTIME, "%s: the %s table has no rows", path, log.format);
    }
    if (rc) {
        opdb_comm_log_free(&log);
        return -1;
    }
    rows = opdb_xmalloc(log.n * sizeof *rows);
    bool ip = o->time_half == 2 || (o->time_half == 0 && op == OPDB_COMM_ALL_REDUCE);
    for (size_t i = 0; i < log.n; i++) {
        const opdb_comm_log_row *r = &log.rows[i];
        long long bytes = r->size;
        double us = ip && r->ip_us >= 0 ? r->ip_us : r->oop_us;
        if (osu && log.osu_bandwidth) us = r->oop_us > 0 ? (double)r->size / r->oop_us : -1; /* MB/s -> µs */
        if (!osu && (op == OPDB_COMM_ALL_GATHER || op == OPDB_COMM_REDUCE_SCATTER)) bytes /= nd;
        bool overflow = osu && op == OPDB_COMM_ALL_TO_ALL && __builtin_mul_overflow(bytes, nd, &bytes);
        if (r->oop_wrong > 0 || r->ip_wrong > 0) res->wrong_rows++;
        if (overflow || bytes <= 0 || !(us > 0) || !isfinite(us)) { /* inf, nan, 0 or negative: no time */
            res->skipped++;
            continue;
        }
        double ov = o->overheads ? opdb_comm_overhead_of(o->overheads, (opdb_comm_op)op, nd) : 0.0;
        rows[res->rows++] = opdb_comm_make_row(bytes, nd, dt->label, tier, us, ov);
    }
    const char *kernel = opdb_comm_op_kernel((opdb_comm_op)op);
    char *name = opdb_table_file_name(NULL, 0, kernel, strlen(kernel)); /* the one path policy */
    char *out = opdb_path_in_dir(o->output_dir, name, err);
    free(name);
    if (!out) {
        rc = -1;
    } else if (res->rows == 0) {
        rc = opdb_fail(err, OPDB_ERR_RUNTIME, "%s: no row with a positive size and time", path);
    } else {
        rc = opdb_comm_csv_append(out, rows, res->rows, err);
    }
    if (rc == 0)
        snprintf(res->summary, sizeof res->summary, "%s: %s %s, %lld devices, %s, tier %d: %zu rows -> %s", opdb_path_shown(path),
                 log.format, opdb_comm_op_name((opdb_comm_op)op), nd, dt->torch_name, tier, res->rows, out);
    free(out);
    free(rows);
    opdb_comm_log_free(&log);
    return rc;
}

static void comm_import_defaults(opdb_comm_import_opts *o) {
    memset(o, 0, sizeof *o);
    o->size = sizeof *o;
    o->op = -1;
    o->tier = -1;
}

OPDB_OPTS_INIT_SIZED(opdb_comm_import_opts, comm_import_defaults)

int opdb_comm_import_file(const opdb_comm_import_opts *o, const char *path, opdb_comm_import_result *res, opdb_err *err) {
    if (opdb_opts_check(o, o ? o->size : 0, sizeof *o, "opdb_comm_import_opts", err)) return -1;
    opdb_call_scope saved = opdb_call_enter(&o->log);
    OPDB_CALL_GUARD(saved, err);
    opdb_call_set_modes(&o->modes);
    int rc = comm_import_file(o, path, res, err);
    opdb_call_leave(&saved);
    return rc;
}
