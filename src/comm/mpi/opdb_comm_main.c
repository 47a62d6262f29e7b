/* opdb-comm: the only code linked with MPI. `opdb comm bench` execs it on
 * every rank (mpirun -np N opdb comm bench ...), so `opdb` itself never maps
 * libmpi. Timing as nccl-tests: warm-up iterations, a barrier, then N
 * iterations timed with CLOCK_MONOTONIC (one clock read per iteration);
 * each iteration's time is the maximum over the group's ranks. */
#include <limits.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/comm_bench_args.h"
#include "comm/mpi/bench_ranks.h"
#include "comm/mpi/nccl_api.h"
#include "opdb/comm.h"
#include "opdb/fs.h"
#include "opdb/json_writer.h"
#include "opdb/pyliteral.h"

typedef struct measured {
    opdb_comm_stats st;
    double total_us; /* max over ranks of the timed loop / iters: nccl-tests' time */
    long long wrong; /* -1: not checked */
    long iters;      /* timed iterations (-n, or what --time-budget allowed) */
} measured;

static double now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

/* ---- 16-bit float sums (MPI has no bf16/fp16 type) ---- */
static void bf16_sum(void *in, void *inout, int *len, MPI_Datatype *dt) {
    (void)dt;
    const uint16_t *a = in;
    uint16_t *b = inout;
    for (int i = 0; i < *len; i++) b[i] = opdb_float_to_bf16(opdb_bf16_to_float(a[i]) + opdb_bf16_to_float(b[i]));
}
static void fp16_sum(void *in, void *inout, int *len, MPI_Datatype *dt) {
    (void)dt;
    const uint16_t *a = in;
    uint16_t *b = inout;
    for (int i = 0; i < *len; i++) b[i] = opdb_float_to_fp16(opdb_fp16_to_float(a[i]) + opdb_fp16_to_float(b[i]));
}

typedef struct ctx {
    MPI_Datatype type;
    MPI_Op sum;
    const opdb_comm_dtype *dt;
    const opdb_comm_nccl_api *nccl; /* --backend nccl, else NULL */
    void *ncomm;                    /* the group's NCCL communicator */
    int ndt;                        /* OPDB_NCCL_* dtype */
} ctx;

static void put(const ctx *c, void *buf, long long i, int v) {
    switch (c->dt->size) {
    case 1: ((int8_t *)buf)[i] = (int8_t)v; break;
    case 4: ((float *)buf)[i] = (float)v; break;
    default:
        ((uint16_t *)buf)[i] = c->dt->label[3] == 'B' ? opdb_float_to_bf16((float)v) : opdb_float_to_fp16((float)v);
    }
}
static int get(const ctx *c, const void *buf, long long i) {
    switch (c->dt->size) {
    case 1: return ((const int8_t *)buf)[i];
    case 4: return (int)((const float *)buf)[i];
    default: {
        uint16_t h = ((const uint16_t *)buf)[i];
        return (int)(c->dt->label[3] == 'B' ? opdb_bf16_to_float(h) : opdb_fp16_to_float(h));
    }
    }
}
/* what rank r contributes at element i (small integers: exact in every dtype) */
static int val(opdb_comm_op op, int r, long long i) {
    return op == OPDB_COMM_ALL_REDUCE || op == OPDB_COMM_REDUCE_SCATTER ? (int)((r + i) % 2) : (int)((r * 7 + i) % 61);
}

typedef struct bufs {
    void *send, *recv;
    long long el, chunk; /* elements per rank input; all_to_all chunk */
    int nd, rank;
    long long sn, rn;    /* elements of send and recv */
    void *dsend, *drecv; /* --backend nccl: their device copies */
} bufs;

static void nccl_die(const char *msg) {
    fprintf(stderr, "opdb comm bench: --backend nccl: %s\n", msg);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

/* The same collective through NCCL on the device buffers (in place as
 * NCCL defines it: the rank's slice of recv is the input or the output). */
static void run_nccl(const ctx *c, opdb_comm_op op, const bufs *b, bool ip) {
    size_t es = (size_t)c->dt->size, count = (size_t)b->el;
    const char *snd = b->dsend;
    char *rcv = b->drecv, msg[512];
    if (op == OPDB_COMM_ALL_REDUCE && ip) snd = rcv;
    if (op == OPDB_COMM_ALL_GATHER && ip) snd = rcv + (size_t)b->rank * count * es;
    if (op == OPDB_COMM_REDUCE_SCATTER && ip) snd = rcv, rcv += (size_t)b->rank * count * es;
    if (op == OPDB_COMM_ALL_TO_ALL) count = (size_t)b->chunk;
    if (op == OPDB_COMM_BROADCAST) snd = rcv; /* the root's data is in recv, as for MPI_Bcast */
    if (c->nccl->run(c->ncomm, op, c->ndt, snd, rcv, count, msg, sizeof msg)) nccl_die(msg);
}

static void run_op(const ctx *c, opdb_comm_op op, const bufs *b, bool ip, MPI_Comm comm) {
    if (c->nccl) {
        run_nccl(c, op, b, ip);
        return;
    }
    int el = (int)b->el;
    switch (op) {
    case OPDB_COMM_ALL_REDUCE: MPI_Allreduce(ip ? MPI_IN_PLACE : b->send, b->recv, el, c->type, c->sum, comm); break;
    case OPDB_COMM_ALL_GATHER:
        if (ip) MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, b->recv, el, c->type, comm);
        else MPI_Allgather(b->send, el, c->type, b->recv, el, c->type, comm);
        break;
    case OPDB_COMM_REDUCE_SCATTER:
        MPI_Reduce_scatter_block(ip ? MPI_IN_PLACE : b->send, b->recv, el, c->type, c->sum, comm);
        break;
    case OPDB_COMM_ALL_TO_ALL:
        if (ip) MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, b->recv, (int)b->chunk, c->type, comm);
        else MPI_Alltoall(b->send, (int)b->chunk, c->type, b->recv, (int)b->chunk, c->type, comm);
        break;
    default: MPI_Bcast(b->recv, el, c->type, 0, comm); break;
    }
}

/* Inputs for one run: for in-place ops they live in recv. */
static void fill(const ctx *c, opdb_comm_op op, const bufs *b, bool ip) {
    long long in_n = op == OPDB_COMM_REDUCE_SCATTER ? b->el * b->nd : op == OPDB_COMM_ALL_TO_ALL ? b->chunk * b->nd : b->el;
    void *dst = ip ? b->recv : b->send;
    long long off = ip && op == OPDB_COMM_ALL_GATHER ? (long long)b->rank * b->el : 0;
    if (op == OPDB_COMM_BROADCAST) dst = b->recv;
    for (long long i = 0; i < in_n; i++)
        put(c, dst, off + i, op == OPDB_COMM_BROADCAST && b->rank != 0 ? 0 : val(op, b->rank, i));
    char msg[512];
    size_t es = (size_t)c->dt->size;
    if (c->nccl && (c->nccl->upload(b->dsend, b->send, (size_t)b->sn * es, msg, sizeof msg) ||
                    c->nccl->upload(b->drecv, b->recv, (size_t)b->rn * es, msg, sizeof msg)))
        nccl_die(msg);
}

/* --backend nccl: the result back on the host, where count_wrong reads it. */
static void nccl_result(const ctx *c, opdb_comm_op op, const bufs *b, bool ip) {
    char msg[512];
    size_t es = (size_t)c->dt->size;
    if (c->nccl->download(b->recv, b->drecv, (size_t)b->rn * es, msg, sizeof msg)) nccl_die(msg);
    if (op == OPDB_COMM_REDUCE_SCATTER && ip) /* NCCL leaves it in the rank's slice */
        memmove(b->recv, (char *)b->recv + (size_t)b->rank * (size_t)b->el * es, (size_t)b->el * es);
}

static long long count_wrong(const ctx *c, opdb_comm_op op, const bufs *b) {
    long long wrong = 0;
    int nd = b->nd;
    switch (op) {
    case OPDB_COMM_ALL_REDUCE:
    case OPDB_COMM_REDUCE_SCATTER:
        for (long long i = 0; i < b->el; i++) {
            long long gi = op == OPDB_COMM_REDUCE_SCATTER ? (long long)b->rank * b->el + i : i;
            int want = 0;
            for (int r = 0; r < nd; r++) want += val(op, r, gi);
            wrong += get(c, b->recv, i) != want;
        }
        break;
    case OPDB_COMM_ALL_GATHER:
        for (int r = 0; r < nd; r++)
            for (long long i = 0; i < b->el; i++) wrong += get(c, b->recv, r * b->el + i) != val(op, r, i);
        break;
    case OPDB_COMM_ALL_TO_ALL:
        for (int r = 0; r < nd; r++)
            for (long long i = 0; i < b->chunk; i++)
                wrong += get(c, b->recv, r * b->chunk + i) != val(op, r, (long long)b->rank * b->chunk + i);
        break;
    default:
        for (long long i = 0; i < b->el; i++) wrong += get(c, b->recv, i) != val(op, 0, i);
    }
    return wrong;
}

static void measure(const ctx *c, const opdb_comm_bench_opts *o, opdb_comm_op op, const bufs *b, bool ip,
                    MPI_Comm comm, double *t, double *dmax, measured *m) {
    int rank, nd;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &nd);
    if (c->nccl && op == OPDB_COMM_ALL_TO_ALL) ip = false; /* NCCL has no in-place all-to-all */
    fill(c, op, b, ip);
    for (long i = 0; i < o->warmup; i++) run_op(c, op, b, ip, comm);
    long iters = o->iters;
    if (o->time_budget_s > 0) { /* every rank must run as many: the slowest rank's calibration decides */
        enum { CALIBRATION = 3 };
        MPI_Barrier(comm);
        double c0 = now_us();
        for (int i = 0; i < CALIBRATION; i++) run_op(c, op, b, ip, comm);
        double per = (now_us() - c0) / CALIBRATION, slowest;
        MPI_Allreduce(&per, &slowest, 1, MPI_DOUBLE, MPI_MAX, comm);
        iters = opdb_comm_budget_iters(o->time_budget_s, slowest);
    }
    MPI_Barrier(comm);
    double t0 = now_us();
    for (long i = 0; i < iters; i++) {
        run_op(c, op, b, ip, comm);
        t[i] = now_us();
    }
    for (long i = iters - 1; i > 0; i--) t[i] -= t[i - 1];
    t[0] -= t0;
    MPI_Reduce(t, dmax, (int)iters, MPI_DOUBLE, MPI_MAX, 0, comm);
    double mine = 0;
    for (long i = 0; i < iters; i++) mine += t[i];
    mine /= (double)iters;
    m->iters = iters;
    double lo, hi;
    MPI_Reduce(&mine, &lo, 1, MPI_DOUBLE, MPI_MIN, 0, comm);
    MPI_Reduce(&mine, &hi, 1, MPI_DOUBLE, MPI_MAX, 0, comm);
    m->wrong = -1;
    if (o->check) {
        fill(c, op, b, ip);
        run_op(c, op, b, ip, comm);
        if (c->nccl) nccl_result(c, op, b, ip);
        long long w = count_wrong(c, op, b), sum = 0;
        MPI_Reduce(&w, &sum, 1, MPI_LONG_LONG, MPI_SUM, 0, comm);
        m->wrong = sum;
    }
    if (rank == 0) {
        opdb_comm_stats_of(dmax, (size_t)iters, &m->st);
        m->st.rank_min = lo;
        m->st.rank_max = hi;
        m->total_us = hi;
    }
}

static void json_half(opdb_json *j, const char *key, const measured *m, long long total, double factor) {
    opdb_json_key(j, key);
    opdb_json_begin_object(j);
    const char *names[] = {"time_us", "min_us", "median_us", "p90_us", "max_us", "rank_min_us", "rank_max_us"};
    double vals[] = {m->total_us, m->st.min, m->st.median, m->st.p90, m->st.max, m->st.rank_min, m->st.rank_max};
    for (int i = 0; i < 7; i++) {
        opdb_json_key(j, names[i]);
        opdb_json_float(j, vals[i]);
    }
    double algbw = m->total_us > 0 ? (double)total / 1e9 / (m->total_us / 1e6) : 0.0;
    opdb_json_key(j, "algbw_gbps");
    opdb_json_float(j, algbw);
    opdb_json_key(j, "busbw_gbps");
    opdb_json_float(j, algbw * factor);
    opdb_json_key(j, "wrong");
    if (m->wrong < 0) opdb_json_null(j);
    else opdb_json_int(j, m->wrong);
    opdb_json_key(j, "iters");
    opdb_json_int(j, m->iters);
    opdb_json_end_object(j);
}

static void group_repr(char *buf, size_t cap, long long base, long long nd) {
    size_t k = (size_t)snprintf(buf, cap, "[");
    for (long long r = 0; r < nd && k + 24 < cap; r++) k += (size_t)snprintf(buf + k, cap - k, "%s%lld", r ? ", " : "", base + r);
    snprintf(buf + k, cap - k, "]");
}

static char *csv_path_of(const opdb_comm_bench_opts *o, opdb_comm_op op) {
    if (o->output_csv) return opdb_xstrdup(o->output_csv);
    if (!o->output_dir) return NULL;
    char name[128];
    snprintf(name, sizeof name, "%s.csv", opdb_comm_op_kernel(op));
    return opdb_path_join(o->output_dir, name);
}

/* --backend nccl: the plugin and a GPU on every rank (device = node-local
 * rank modulo the node's devices), or one line from rank 0 and 1 for all. */
static int nccl_open(ctx *c, int *device, int rank) {
    char msg[600] = "", why[512] = "no CUDA device found";
    int n = 0, ok = 1;
    c->nccl = opdb_comm_nccl_load(msg, sizeof msg);
    if (!c->nccl) {
        ok = 0;
    } else if (c->nccl->devices(&n, why, sizeof why) || n < 1) {
        ok = 0;
        snprintf(msg, sizeof msg, "--backend nccl needs a CUDA GPU on each rank: %s", why);
    }
    int all;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (all) {
        MPI_Comm node;
        int lrank;
        MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
        MPI_Comm_rank(node, &lrank);
        MPI_Comm_free(&node);
        *device = lrank % n;
        return 0;
    }
    if (rank == 0) fprintf(stderr, "opdb comm bench: %s\n", ok ? "--backend nccl: a rank has no usable CUDA GPU" : msg);
    return -1;
}

/* One NCCL communicator per MPI group: its first rank's unique id, sent over MPI. */
static void *nccl_group(const ctx *c, MPI_Comm g, int device) {
    int grank, gsize;
    MPI_Comm_rank(g, &grank);
    MPI_Comm_size(g, &gsize);
    char id[OPDB_COMM_NCCL_ID_BYTES], msg[512];
    if (grank == 0 && c->nccl->unique_id(id, msg, sizeof msg)) nccl_die(msg);
    MPI_Bcast(id, sizeof id, MPI_BYTE, 0, g);
    void *comm = NULL;
    if (c->nccl->comm_init(&comm, id, gsize, grank, device, msg, sizeof msg)) nccl_die(msg);
    return comm;
}

/* What each rank was asked to run; compared over all ranks before the first collective. */
typedef struct agreement {
    long long prc, ncfg;
    uint64_t fingerprint;
} agreement;

/* One small collective: every rank learns whether all ranks parsed the same
 * configuration; on a mismatch each says so in one line (no rank goes on to a
 * collective the others will not join, which would hang or overrun a buffer). */
static bool ranks_disagree(int rank, int world, const agreement *mine) {
    agreement *all = opdb_xmalloc((size_t)world * sizeof *all);
    MPI_Allgather(mine, (int)sizeof *mine, MPI_BYTE, all, (int)sizeof *mine, MPI_BYTE, MPI_COMM_WORLD);
    int bad = 0;
    for (int r = 1; r < world && !bad; r++)
        if (memcmp(&all[r], &all[0], sizeof *all)) bad = r;
    if (bad) {
        char why[128];
        if (all[bad].prc != all[0].prc)
            snprintf(why, sizeof why, "its command line %s", all[bad].prc ? "did not parse" : "parsed where rank 0's did not");
        else if (all[bad].ncfg != all[0].ncfg)
            snprintf(why, sizeof why, "%lld benchmark configurations against rank 0's %lld", all[bad].ncfg, all[0].ncfg);
        else
            snprintf(why, sizeof why, "another op, size, group, dtype, iteration count, --check or backend");
        fprintf(stderr, "opdb comm bench: rank %d: the MPI ranks were not given the same options: rank %d differs from "
                        "rank 0 (%s); every rank must run the same command\n", rank, bad, why);
    }
    free(all);
    return bad != 0;
}

int main(int argc, char **argv) {
    if (argc > 1 && !strcmp(argv[1], "--bench-ranks")) return opdb_comm_bench_ranks(argc, argv);
    int provided;
    if (MPI_Init_thread(&argc, &argv, MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS) {
        fprintf(stderr, "ERROR: Failed to initialize distributed: MPI_Init failed\n"
                        "Hint: launch with mpirun -np N opdb comm bench ...\n");
        return 1;
    }
    int rank, world;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world);
    opdb_comm_bench_opts o;
    int prc = cli_comm_bench_parse(argc, argv, &o);
    if (!prc && o.num_devices_auto) o.num_devices[0] = world; /* one group of every rank */
    size_t ncfg = 0;
    opdb_err cerr;
    opdb_err_clear(&cerr);
    opdb_comm_config *all = prc ? NULL : opdb_comm_configs(&o, &ncfg, rank == 0 ? stderr : NULL, &cerr);
    if (cerr.code) {
        if (rank == 0) fprintf(stderr, "opdb comm bench: %s\n", cerr.msg);
        opdb_comm_bench_opts_free(&o);
        prc = 2;
    }
    agreement mine = {prc, (long long)ncfg, prc ? 0 : opdb_comm_bench_fingerprint(&o, all, ncfg)};
    bool disagree = ranks_disagree(rank, world, &mine); /* always: every rank joins it */
    if (prc || disagree) {
        free(all);
        if (!prc) opdb_comm_bench_opts_free(&o);
        MPI_Finalize();
        return disagree ? 1 : prc == 1 ? 0 : prc;
    }
    ctx c = {MPI_FLOAT, MPI_SUM, o.dtype, NULL, NULL, OPDB_NCCL_FP32};
    int device = 0;
    if (!strcmp(o.backend, "nccl") && nccl_open(&c, &device, rank)) {
        free(all);
        opdb_comm_bench_opts_free(&o);
        MPI_Finalize();
        return 1;
    }
    opdb_comm_overheads ovh;
    opdb_comm_overheads_default(&ovh);
    opdb_err err;
    opdb_err_clear(&err);
    if (o.overhead_path && opdb_comm_overheads_load(&ovh, o.overhead_path, &err)) {
        if (rank == 0) fprintf(stderr, "opdb comm bench: %s\n", err.msg);
        free(all);
        MPI_Finalize();
        return err.code;
    }
    /* groups larger than the world cannot run */
    size_t n = 0;
    long long warned = 0;
    for (size_t i = 0; i < ncfg; i++) {
        if (all[i].base + all[i].nd > world) {
            if (rank == 0 && warned != all[i].nd)
                fprintf(stderr, "opdb comm bench: warning: skipping num_devices=%lld: exceeds the MPI world size %d\n",
                        all[i].nd, world);
            warned = all[i].nd;
            continue;
        }
        long long recv_count = all[i].bytes / o.dtype->size;
        if (all[i].op != OPDB_COMM_ALL_REDUCE && all[i].op != OPDB_COMM_BROADCAST) recv_count *= all[i].nd;
        if (recv_count > INT_MAX) { /* MPI counts are int */
            if (rank == 0)
                fprintf(stderr, "opdb comm bench: warning: skipping %s bytes=%lld devices=%lld: %lld elements exceed MPI's int count\n",
                        opdb_comm_op_name(all[i].op), all[i].bytes, all[i].nd, recv_count);
            continue;
        }
        all[n++] = all[i];
    }
    /* one communicator per distinct member list, first-seen order */
    long long *gnd = opdb_xmalloc((n + 1) * sizeof *gnd);
    MPI_Comm *gcomm = opdb_xmalloc((n + 1) * sizeof *gcomm);
    size_t ng = 0;
    for (size_t i = 0; i < n; i++) {
        size_t g = 0;
        while (g < ng && gnd[g] != all[i].nd) g++;
        if (g == ng) {
            gnd[ng] = all[i].nd;
            MPI_Comm_split(MPI_COMM_WORLD, rank < all[i].nd ? 0 : MPI_UNDEFINED, rank, &gcomm[ng]);
            ng++;
        }
    }
    if (o.dtype->size == 1) c.type = MPI_INT8_T;
    c.ndt = o.dtype->size == 1 ? OPDB_NCCL_INT8 : o.dtype->size == 4 ? OPDB_NCCL_FP32
            : o.dtype->label[3] == 'B' ? OPDB_NCCL_BF16 : OPDB_NCCL_FP16;
    void **ncomm = opdb_xcalloc(ng + 1, sizeof *ncomm);
    for (size_t g = 0; g < ng && c.nccl; g++)
        if (gcomm[g] != MPI_COMM_NULL) ncomm[g] = nccl_group(&c, gcomm[g], device);
    if (o.dtype->size == 2) {
        c.type = MPI_UINT16_T;
        MPI_Op_create(o.dtype->label[3] == 'B' ? bf16_sum : fp16_sum, 1, &c.sum);
    }
    size_t tcap = (size_t)(o.time_budget_s > 0 ? OPDB_COMM_BUDGET_MAX_ITERS : o.iters);
    double *t = opdb_xmalloc(tcap * sizeof *t), *dmax = opdb_xmalloc(tcap * sizeof *dmax);
    opdb_strbuf out, js;
    opdb_sb_init(&out);
    opdb_sb_init(&js);
    opdb_json j;
    opdb_json_init(&j, &js);
    opdb_json_begin_object(&j);
    opdb_json_key(&j, "nranks");
    opdb_json_int(&j, world);
    opdb_json_key(&j, "dtype");
    opdb_json_string(&j, o.dtype->torch_name);
    opdb_json_key(&j, "warmup_iters");
    opdb_json_int(&j, o.warmup);
    opdb_json_key(&j, "iters");
    if (o.time_budget_s > 0) opdb_json_null(&j); /* per result under --time-budget */
    else opdb_json_int(&j, o.iters);
    opdb_json_key(&j, "time_budget_s");
    if (o.time_budget_s > 0) opdb_json_float(&j, o.time_budget_s);
    else opdb_json_null(&j);
    /* JSON on stdout (--json alone or --json -): the console lines go to stderr, as on every command */
    FILE *con = o.json_path && !strcmp(o.json_path, "-") ? stderr : stdout;
    opdb_json_key(&j, "results");
    opdb_json_begin_array(&j);
    if (rank == 0 && !o.reference_quirks) {
        char iters[64];
        if (o.time_budget_s > 0) snprintf(iters, sizeof iters, "time budget %g s per size", o.time_budget_s);
        else snprintf(iters, sizeof iters, "%ld", o.iters);
        fprintf(con, "# opdb comm bench: nranks %d  dtype %s  warmup iters: %ld iters: %s validation: %d\n", world,
               o.dtype->nccl_name, o.warmup, iters, o.check ? 1 : 0);
        fprintf(con, "# time: the median iteration (each the slowest rank's), us; the CSV's Duration(us) is the in-place\n"
               "# time for all_reduce, the out-of-place time for the others, plus the dispatch overhead shown per op\n#\n");
    }
    double bw_sum = 0;
    long long bw_count = 0, wrong_total = 0;
    int status = 0;
    bool write_failed = false; /* a CSV or JSON write failed: nothing is "saved" */
    int passes = o.reference_quirks ? 2 : 1;
    if (rank == 0 && o.reference_quirks)
        fprintf(con, "Running global warmup to trigger HCCL JIT compilation (%zu configs)...\n", n);
    for (int pass = 0; pass < passes; pass++) {
        bool warm = pass == 0 && passes == 2;
        for (size_t i = 0; i < n; i++) {
            const opdb_comm_config *cf = &all[i];
            if (warm) { /* distinct (op, bytes, group) only */
                bool seen = false;
                for (size_t k = 0; k < i && !seen; k++)
                    seen = all[k].op == cf->op && all[k].bytes == cf->bytes && all[k].nd == cf->nd;
                if (seen) continue;
            }
            size_t g = 0;
            while (gnd[g] != cf->nd) g++;
            bool header = !warm && (i == 0 || all[i - 1].op != cf->op || all[i - 1].nd != cf->nd ||
                                    all[i - 1].tier != cf->tier);
            if (rank == 0 && header && !o.reference_quirks) {
                fprintf(con, "# op %s  devices %lld  tier %d  dispatch overhead %.2f us\n", opdb_comm_op_name(cf->op), cf->nd,
                       cf->tier, opdb_comm_overhead_of(&ovh, cf->op, cf->nd));
                opdb_sb_clear(&out);
                opdb_comm_nccl_header(&out);
                fputs(out.p, con);
            }
            if (gcomm[g] == MPI_COMM_NULL) continue;
            bufs b = {NULL, NULL, cf->bytes / o.dtype->size, 0, (int)cf->nd, 0, 0, 0, NULL, NULL};
            MPI_Comm_rank(gcomm[g], &b.rank);
            b.chunk = opdb_comm_count(OPDB_COMM_ALL_TO_ALL, cf->bytes, o.dtype, cf->nd);
            long long sn = b.el, rn = b.el;
            if (cf->op == OPDB_COMM_ALL_GATHER) rn = b.el * cf->nd;
            if (cf->op == OPDB_COMM_REDUCE_SCATTER) sn = rn = b.el * cf->nd;
            if (cf->op == OPDB_COMM_ALL_TO_ALL) sn = rn = b.chunk * cf->nd;
            b.send = opdb_xcalloc((size_t)sn + 1, (size_t)o.dtype->size);
            b.recv = opdb_xcalloc((size_t)rn + 1, (size_t)o.dtype->size);
            b.sn = sn, b.rn = rn;
            if (c.nccl) {
                c.ncomm = ncomm[g];
                b.dsend = c.nccl->alloc(((size_t)sn + 1) * (size_t)o.dtype->size);
                b.drecv = c.nccl->alloc(((size_t)rn + 1) * (size_t)o.dtype->size);
                if (!b.dsend || !b.drecv) nccl_die("out of device memory");
            }
            measured oop = {0}, ip = {0};
            measure(&c, &o, cf->op, &b, false, gcomm[g], t, dmax, &oop);
            if (!warm) measure(&c, &o, cf->op, &b, true, gcomm[g], t, dmax, &ip);
            free(b.send);
            free(b.recv);
            if (c.nccl) c.nccl->release(b.dsend), c.nccl->release(b.drecv);
            if (rank != 0) continue;
            /* the reference measures all_reduce in place, the others out of place */
            const measured *used = cf->op == OPDB_COMM_ALL_REDUCE && !warm ? &ip : &oop;
            double value = used->st.median;
            if (o.reference_quirks) {
                char grp[4096];
                group_repr(grp, sizeof grp, cf->base, cf->nd);
                int tier = warm ? opdb_comm_tier_of_range(&o.grid, cf->base, cf->nd) : cf->tier;
                fprintf(con, "op=%s  bytes=%lld  devices=%lld  tier=%d  rank=0  group=%s  duration=%.2fus  bw=%.2fGB/s\n",
                       opdb_comm_op_name(cf->op), cf->bytes, cf->nd, tier, grp, value,
                       value > 0 ? (double)cf->bytes / (value * 1e-6) / 1e9 : 0.0);
            }
            if (warm) continue;
            opdb_sb_clear(&out);
            /* the console shows the figure the CSV gets (the median), not nccl-tests' mean */
            opdb_comm_nccl_line(&out, cf->op, o.dtype, cf->bytes, (int)cf->nd, oop.st.median, oop.wrong, ip.st.median,
                                ip.wrong);
            if (!o.reference_quirks) fputs(out.p, con);
            long long total = opdb_comm_count(cf->op, cf->bytes, o.dtype, cf->nd) * o.dtype->size;
            if (cf->op == OPDB_COMM_ALL_GATHER || cf->op == OPDB_COMM_REDUCE_SCATTER || cf->op == OPDB_COMM_ALL_TO_ALL)
                total *= cf->nd;
            double f = opdb_comm_busbw_factor(cf->op, (int)cf->nd);
            for (int h = 0; h < 2; h++) {
                const measured *m = h ? &ip : &oop;
                if (m->st.median > 0) bw_sum += (double)total / 1e9 / (m->st.median / 1e6) * f;
                bw_count++;
                if (m->wrong > 0) wrong_total += m->wrong;
            }
            opdb_json_begin_object(&j);
            opdb_json_key(&j, "op");
            opdb_json_string(&j, opdb_comm_op_name(cf->op));
            opdb_json_key(&j, "message_bytes");
            opdb_json_int(&j, cf->bytes);
            opdb_json_key(&j, "num_devices");
            opdb_json_int(&j, cf->nd);
            opdb_json_key(&j, "topology_tier");
            opdb_json_int(&j, cf->tier);
            json_half(&j, "out_of_place", &oop, total, f);
            json_half(&j, "in_place", &ip, total, f);
            opdb_json_end_object(&j);
            char *path = csv_path_of(&o, cf->op);
            if (path) {
                opdb_comm_row row = opdb_comm_make_row(cf->bytes, cf->nd, o.dtype->label, cf->tier, value,
                                                       opdb_comm_overhead_of(&ovh, cf->op, cf->nd));
                if (opdb_comm_csv_append(path, &row, 1, &err)) {
                    fprintf(stderr, "opdb comm bench: %s\n", err.msg);
                    opdb_err_clear(&err);
                    status = 1;
                    write_failed = true;
                }
                free(path);
            }
        }
        if (warm && rank == 0) fprintf(con, "Global warmup done. Starting benchmarks...\n\n");
    }
    opdb_json_end_array(&j);
    opdb_json_end_object(&j);
    if (rank == 0) {
        if (!o.reference_quirks && n > 0)
            fprintf(con, "# Out of bounds values : %lld %s\n# Avg bus bandwidth    : %g \n#\n", wrong_total,
                   wrong_total ? "FAILED" : "OK", bw_count ? bw_sum / (double)bw_count : 0.0);
        const char *where = o.output_csv ? o.output_csv : o.output_dir ? o.output_dir : "(no output)";
        if (o.json_path && strcmp(o.json_path, "-")) {
            opdb_sb_addc(&js, '\n');
            if (opdb_atomic_write(o.json_path, js.p, js.n, &err)) {
                fprintf(stderr, "opdb comm bench: %s\n", err.msg);
                status = 1;
                write_failed = true;
            }
        }
        /* "saved" only when every write succeeded (a full disk used to get it next to the error) */
        if ((n > 0 || o.reference_quirks) && !write_failed)
            fprintf(con, "\nCompleted %zu benchmarks. Results saved to %s\n", n, where);
        if (write_failed)
            fprintf(stderr, "opdb comm bench: not every result was saved to %s (see the errors above)\n", where);
        if (o.json_path && !strcmp(o.json_path, "-")) {
            opdb_sb_addc(&js, '\n');
            fwrite(js.p, 1, js.n, stdout);
        }
        if (wrong_total) status = 1;
        if (status == 0 && n > 0) { /* the one success line every command ends with, on stderr */
            fflush(stdout);
            fprintf(stderr, "opdb comm bench: measured %zu configuration%s over %d rank%s; results saved to %s\n", n,
                    n == 1 ? "" : "s", world, world == 1 ? "" : "s", where);
        }
        if (n == 0) {
            fprintf(stderr, "opdb comm bench: nothing measured, nothing written: no configuration fits the MPI world of %d "
                            "rank(s) (see the skipped lines above; --num-devices defaults to the world size)\n", world);
            status = 1;
        }
    }
    fflush(stdout);
    for (size_t g = 0; g < ng; g++) {
        if (c.nccl && ncomm[g]) c.nccl->comm_free(ncomm[g]);
        if (gcomm[g] != MPI_COMM_NULL) MPI_Comm_free(&gcomm[g]);
    }
    free(ncomm);
    if (o.dtype->size == 2) MPI_Op_free(&c.sum);
    MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
    free(t), free(dmax), free(all), free(gnd), free(gcomm);
    opdb_sb_free(&out), opdb_sb_free(&js);
    opdb_comm_overheads_free(&ovh);
    opdb_comm_bench_opts_free(&o);
    MPI_Finalize();
    return status;
}
