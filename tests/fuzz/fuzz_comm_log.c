/* libFuzzer target: the nccl-tests / OSU log reader behind `opdb comm import`.
 * It must never crash or leak, and every row it returns must be well formed:
 * sizes from digit runs (non-negative), a time or -1, #wrong a count or -1. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "opdb/comm.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    opdb_comm_log log;
    opdb_err err;
    opdb_err_clear(&err);
    if (opdb_comm_log_parse((const char *)data, size, &log, &err) == 0) {
        for (size_t i = 0; i < log.n; i++) {
            const opdb_comm_log_row *r = &log.rows[i];
            if (r->size < 0 || r->oop_wrong < -1 || r->ip_wrong < -1) abort();
        }
        if (log.op < -1 || log.op >= OPDB_COMM_NOPS || strlen(log.type) >= sizeof log.type) abort();
    } else if (!err.msg[0]) {
        abort();
    }
    opdb_comm_log_free(&log);
    return 0;
}
