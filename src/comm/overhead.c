/* The dispatch overhead added to every written row (docs/COMM.md §1, §3.6);
 * the reference's table is the default, a CSV file may replace it. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "opdb/comm.h"
#include "opdb/fs.h"
#include "opdb/pystr.h"

void opdb_comm_overheads_default(opdb_comm_overheads *t) {
    static const opdb_comm_overhead k_ref[] = {
        {OPDB_COMM_ALL_REDUCE, 16, 7.7},     {OPDB_COMM_ALL_GATHER, 16, 14.6}, {OPDB_COMM_ALL_GATHER, 8, 1.2},
        {OPDB_COMM_REDUCE_SCATTER, 16, 14.6}, {OPDB_COMM_REDUCE_SCATTER, 8, 2.0},
    };
    t->n = sizeof k_ref / sizeof k_ref[0];
    t->items = opdb_xmalloc(sizeof k_ref);
    memcpy(t->items, k_ref, sizeof k_ref);
}

int opdb_comm_overheads_load(opdb_comm_overheads *t, const char *path, opdb_err *err) {
    opdb_strbuf sb;
    opdb_sb_init(&sb);
    if (opdb_read_file(path, &sb, err)) {
        opdb_sb_free(&sb);
        return -1;
    }
    opdb_comm_overheads out = {NULL, 0};
    const char *p = sb.p, *end = sb.p + sb.n;
    for (long line = 1; p < end; line++) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end;
        const char *c1 = memchr(p, ',', (size_t)(le - p));
        const char *c2 = c1 ? memchr(c1 + 1, ',', (size_t)(le - c1 - 1)) : NULL;
        opdb_span name = opdb_py_strip(opdb_span_make(p, c1 ? (size_t)(c1 - p) : (size_t)(le - p)));
        long long nd;
        double us;
        char nm[64];
        bool blank = name.n == 0 && !c1;
        if (!blank) {
            int op = -1;
            if (name.n < sizeof nm) {
                memcpy(nm, name.p, name.n);
                nm[name.n] = '\0';
                op = opdb_comm_op_parse(nm);
            }
            bool ok = op >= 0 && c2 && opdb_py_int(c1 + 1, (size_t)(c2 - c1 - 1), &nd) &&
                      opdb_py_float(c2 + 1, (size_t)(le - c2 - 1), &us) && isfinite(us) && us >= 0;
            if (ok) {
                out.items = opdb_xrealloc(out.items, (out.n + 1) * sizeof *out.items);
                out.items[out.n++] = (opdb_comm_overhead){(opdb_comm_op)op, nd, us};
            } else if (!(line == 1 && name.n == 2 && memcmp(name.p, "op", 2) == 0)) {
                free(out.items);
                opdb_sb_free(&sb);
                return opdb_fail(err, OPDB_ERR_USAGE, "%s:%ld: expected 'op,num_devices,overhead_us' with a known op",
                                 path, line);
            }
        }
        p = nl ? nl + 1 : end;
    }
    opdb_sb_free(&sb);
    free(t->items);
    *t = out;
    return 0;
}

double opdb_comm_overhead_of(const opdb_comm_overheads *t, opdb_comm_op op, long long nd) {
    for (size_t i = 0; i < t->n; i++)
        if (t->items[i].op == op && t->items[i].num_devices == nd) return t->items[i].us;
    return 0.0;
}

void opdb_comm_overheads_free(opdb_comm_overheads *t) {
    free(t->items);
    t->items = NULL;
    t->n = 0;
}
