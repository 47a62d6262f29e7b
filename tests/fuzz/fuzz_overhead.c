/* libFuzzer target: `opdb comm bench --overhead-table`'s reader
 * (opdb_comm_overheads_load).  A table it accepts holds only known ops and
 * finite, non-negative overheads; a refusal is one line naming the file. */
#include <math.h>

#include "fuzz_tmp.h"
#include "opdb/comm.h"

static char g_path[128];

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc, (void)argv;
    snprintf(g_path, sizeof g_path, "%s/ovh.csv", fuzz_root_make("overhead"));
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_write_file(g_path, data, size);
    opdb_comm_overheads t = {NULL, 0};
    opdb_err err;
    opdb_err_clear(&err);
    if (opdb_comm_overheads_load(&t, g_path, &err) == 0) {
        for (size_t i = 0; i < t.n; i++) {
            if (!isfinite(t.items[i].us) || t.items[i].us < 0) abort();
            if ((int)t.items[i].op < 0 || (int)t.items[i].op >= OPDB_COMM_NOPS) abort();
            (void)opdb_comm_overhead_of(&t, t.items[i].op, t.items[i].num_devices);
        }
        opdb_comm_overheads_free(&t);
    } else if (!err.msg[0] || strchr(err.msg, '\n') || !strstr(err.msg, g_path)) {
        abort();
    }
    return 0;
}
