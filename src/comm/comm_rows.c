/* hcom_*.csv rows (docs/COMM.md §3.5-3.6): round to 2 decimals, add the
 * dispatch overhead, recompute the bandwidth; appended under the folder lock
 * through a temp file so a failed run leaves the previous table. */
#include <stdlib.h>
#include <string.h>

#include "opdb/comm.h"
#include "opdb/fs.h"
#include "opdb/pyround.h"
#include "opdb/pystr.h"

opdb_comm_row opdb_comm_make_row(long long bytes, long long nd, const char *label, int tier, double value_us,
                                 double overhead_us) {
    double rounded = opdb_py_roundn(value_us, 2);
    double dur = opdb_py_roundn(rounded + overhead_us, 2);
    double bw = dur > 0 ? opdb_py_roundn((double)bytes / (dur * 1e-6) / 1e9, 2) : 0.0;
    return (opdb_comm_row){bytes, nd, label, tier, dur, bw};
}

void opdb_comm_row_format(opdb_strbuf *sb, const opdb_comm_row *r) {
    char a[64], b[64];
    opdb_py_fmt_repr(a, sizeof a, r->duration_us);
    opdb_py_fmt_repr(b, sizeof b, r->bandwidth_gbps);
    opdb_sb_addf(sb, "%lld,%lld,%s,%d,%s,%s\r\n", r->message_bytes, r->num_devices, r->dtype_label, r->tier, a, b);
}

int opdb_comm_csv_append(const char *path, const opdb_comm_row *rows, size_t n, opdb_err *err) {
    char *dir = opdb_path_parent(path);
    if (opdb_mkdirs(dir, err)) {
        free(dir);
        return -1;
    }
    int lock = opdb_dir_lock(dir, err);
    if (lock < 0) return free(dir), -1;
    /* staged, journaled and replaced only if still the file read, like every writer */
    opdb_txn_begin(dir);
    free(dir);
    opdb_file_id id;
    opdb_file_id_take(path, &id);
    opdb_strbuf sb;
    opdb_sb_init(&sb);
    int rc = 0;
    if (opdb_path_exists(path)) {
        rc = opdb_read_file(path, &sb, err);
    } else {
        opdb_sb_adds(&sb, OPDB_COMM_CSV_HEADER "\r\n");
    }
    if (rc == 0) {
        for (size_t i = 0; i < n; i++) opdb_comm_row_format(&sb, &rows[i]);
        opdb_atomic_file af;
        rc = opdb_atomic_open(&af, path, err);
        if (rc == 0) {
            opdb_atomic_expect(&af, &id);
            opdb_atomic_append_direct(&af, sb.p, sb.n);
            rc = opdb_atomic_commit(&af, err);
        }
    }
    if (opdb_txn_end(rc == 0, err)) rc = -1;
    opdb_sb_free(&sb);
    opdb_dir_unlock(lock);
    return rc;
}
