/* `opdb comm bench` flags (the reference's plus nccl-tests' timing flags)
 * into opdb_comm_bench_opts. Program code, not library: compiled into `opdb`
 * (usage errors, --help, no MPI) and into `opdb-comm`, which parses them
 * again. */
#include "cli/comm_bench_args.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opdb/pystr.h"

static int usage(const char *fmt, const char *arg) {
    fprintf(stderr, "usage: mpirun -np N opdb comm bench [options]\nopdb comm bench: error: ");
    fprintf(stderr, fmt, arg);
    fputc('\n', stderr);
    return 2;
}

static bool parse_ll(const char *s, long long *v) { return opdb_py_int(s, strlen(s), v); }

/* values after argv[*i] up to the next option */
static int take(int *i, int argc, char **argv) {
    int k = *i + 1;
    while (k < argc && !(argv[k][0] == '-' && argv[k][1] && (argv[k][1] < '0' || argv[k][1] > '9'))) k++;
    int n = k - (*i + 1);
    return n;
}

static int take_ll(int *i, int argc, char **argv, long long **out, size_t *n, long long min) {
    int k = take(i, argc, argv);
    if (k == 0) return usage("argument %s: expected at least one argument", argv[*i]);
    const char *flag = argv[*i];
    *out = opdb_xrealloc(*out, (size_t)k * sizeof **out);
    *n = 0;
    for (int j = 1; j <= k; j++) {
        long long v;
        if (!parse_ll(argv[*i + j], &v) || v < min) {
            fprintf(stderr, "usage: mpirun -np N opdb comm bench [options]\nopdb comm bench: error: argument %s: "
                            "invalid value: '%s'\n", flag, argv[*i + j]);
            return 2;
        }
        (*out)[(*n)++] = v;
    }
    *i += k;
    return 0;
}

static const char *value(int *i, int argc, char **argv) { return *i + 1 < argc ? argv[++*i] : NULL; }

int cli_comm_bench_parse(int argc, char **argv, opdb_comm_bench_opts *o) {
    opdb_comm_bench_opts_init(o);
    bool ops_given = false, iters_given = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int rc = 0;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            return 1; /* the caller prints the help: opdb's option table */
        } else if (!strcmp(a, "--ops")) {
            int k = take(&i, argc, argv);
            if (k == 0) return usage("argument %s: expected at least one argument", a);
            o->nops = 0;
            for (int j = 1; j <= k; j++) {
                int op = opdb_comm_op_parse(argv[i + j]);
                if (op < 0)
                    return usage("argument --ops: invalid choice: '%s' (choose from 'all_reduce', 'all_gather', "
                                 "'reduce_scatter', 'all_to_all', 'broadcast')", argv[i + j]);
                if (o->nops < OPDB_COMM_NOPS) o->ops[o->nops++] = (opdb_comm_op)op;
            }
            i += k;
            ops_given = true;
        } else if (!strcmp(a, "--num-devices")) {
            rc = take_ll(&i, argc, argv, &o->num_devices, &o->nnum_devices, 1);
        } else if (!strcmp(a, "--bytes-grid")) {
            rc = take_ll(&i, argc, argv, &o->bytes, &o->nbytes, 0);
        } else if (!strcmp(a, "--grid-shape")) {
            long long *g = NULL;
            size_t n = 0;
            rc = take_ll(&i, argc, argv, &g, &n, 1);
            if (!rc && n > OPDB_COMM_MAX_DIMS) rc = usage("argument %s: at most 8 dimensions", a);
            if (!rc) {
                o->grid.ndim = (int)n;
                memcpy(o->grid.dims, g, n * sizeof *g);
            }
            free(g);
        } else if (!strcmp(a, "--topology-tier")) {
            long long *t = NULL;
            size_t n = 0;
            rc = take_ll(&i, argc, argv, &t, &n, 0);
            if (!rc) {
                o->tiers = opdb_xmalloc(n * sizeof *o->tiers);
                o->ntiers = n;
                for (size_t j = 0; j < n; j++) {
                    if (t[j] > 2) {
                        free(t);
                        return usage("argument --topology-tier: invalid choice: %s (choose from 0, 1, 2)",
                                     argv[i - (int)n + 1 + (int)j]);
                    }
                    o->tiers[j] = (int)t[j];
                }
            }
            free(t);
        } else if (!strcmp(a, "--dtype")) {
            const char *v = value(&i, argc, argv);
            if (!v) return usage("argument %s: expected one argument", a);
            if (!(o->dtype = opdb_comm_dtype_find(v)))
                return usage("argument --dtype: invalid choice: '%s' (choose from 'torch.bfloat16', "
                             "'torch.float16', 'torch.float32', 'torch.int8')", v);
        } else if (!strcmp(a, "--output-dir") || !strcmp(a, "--database-path")) {
            if (!(o->output_dir = value(&i, argc, argv))) return usage("argument %s: expected one argument", a);
        } else if (!strcmp(a, "--output-csv")) {
            if (!(o->output_csv = value(&i, argc, argv))) return usage("argument %s: expected one argument", a);
        } else if (!strcmp(a, "--json")) {
            /* alone, as on every other command: the JSON on stdout; with a file (the reference's form): into it */
            bool has_file = i + 1 < argc && !(argv[i + 1][0] == '-' && argv[i + 1][1]);
            o->json_path = has_file ? argv[++i] : "-";
        } else if (!strcmp(a, "--overhead-table")) {
            if (!(o->overhead_path = value(&i, argc, argv))) return usage("argument %s: expected one argument", a);
        } else if (!strcmp(a, "--backend")) {
            if (!(o->backend = value(&i, argc, argv))) return usage("argument %s: expected one argument", a);
            if (strcmp(o->backend, "mpi") && strcmp(o->backend, "nccl"))
                return usage("argument --backend: invalid choice: '%s' (choose from 'mpi', 'nccl')", o->backend);
        } else if (!strcmp(a, "-w") || !strcmp(a, "--warmup-iters") || !strcmp(a, "-n") || !strcmp(a, "--iters")) {
            const char *v = value(&i, argc, argv);
            long long n;
            if (!v || !parse_ll(v, &n) || n < 0 || n > 1000000000LL)
                return usage("argument %s: expected a non-negative integer", a);
            bool warm = a[1] == 'w' || a[2] == 'w';
            if (!warm && n < 1) return usage("argument %s: expected at least 1 iteration", a);
            *(warm ? &o->warmup : &o->iters) = (long)n;
            iters_given |= !warm;
        } else if (!strcmp(a, "--time-budget")) {
            const char *v = value(&i, argc, argv);
            if (!v || !opdb_py_float(v, strlen(v), &o->time_budget_s) || !(o->time_budget_s > 0) ||
                o->time_budget_s > 3600)
                return usage("argument --time-budget: expected seconds in (0, 3600], got '%s'", v ? v : "");
        } else if (!strcmp(a, "--check")) {
            o->check = true;
        } else if (!strcmp(a, "--reference-quirks")) {
            o->reference_quirks = true;
        } else {
            return usage("unrecognized arguments: %s", a);
        }
        if (rc) return rc;
    }
    if (iters_given && o->time_budget_s > 0) return usage("argument --time-budget: not allowed with %s", "-n/--iters");
    if (!ops_given) {
        for (int k = 0; k < 4; k++) o->ops[k] = (opdb_comm_op)k;
        o->nops = 4;
    }
    if (!o->num_devices) { /* the reference's 16; else the MPI world, known once MPI runs */
        o->num_devices = opdb_xmalloc(sizeof *o->num_devices);
        o->num_devices[0] = 16;
        o->nnum_devices = 1;
        o->num_devices_auto = !o->reference_quirks;
    }
    if (!o->bytes) {
        o->nbytes = 20;
        o->bytes = opdb_xmalloc(20 * sizeof *o->bytes);
        for (int k = 0; k < 20; k++) o->bytes[k] = 1024LL << k;
    }
    /* a size that is no whole number of elements moves fewer bytes than its
     * row would record (1 byte of bfloat16 moves nothing); the reference
     * records it anyway */
    for (size_t k = 0; k < o->nbytes && !o->reference_quirks; k++)
        if (o->bytes[k] < o->dtype->size || o->bytes[k] % o->dtype->size) {
            fprintf(stderr, "usage: mpirun -np N opdb comm bench [options]\nopdb comm bench: error: argument "
                            "--bytes-grid: %lld is not a whole number of %s elements (%d bytes each); a size must be a "
                            "positive multiple of %d\n", o->bytes[k], o->dtype->torch_name, o->dtype->size,
                    o->dtype->size);
            return 2;
        }
    if (o->output_csv && o->nops != 1) {
        fprintf(stderr, "ERROR: --output-csv only supports a single --ops value. Use --output-dir for multiple ops.\n");
        return 2;
    }
    return 0;
}
