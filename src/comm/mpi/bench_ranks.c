/* opdb-comm --bench-ranks OPDB bench ARGS...: what every rank of
 * `mpirun -np N opdb bench ARGS` runs once opdb handed itself over
 * (src/cli/cmd_bench.c), so that opdb itself never maps MPI.
 *
 * Each rank runs `OPDB bench ARGS` as a child process for its share of the
 * rows (row i belongs to rank i % N; OPDB_BENCH_SHARD=r/N), pinned to its
 * own slice of the node's CPUs and, for CUDA, its own device; the child
 * journals each row as it finishes. The rank then sends its journal to
 * rank 0 over MPI, and rank 0 runs `OPDB bench ARGS` once more to merge the
 * journals in row order and write them back through the locked, atomic
 * update path (OPDB_BENCH_SHARD=merge/N), as one process would. A child
 * that dies or fails is reported with its rank and host; the rows it
 * journaled are kept and its other rows stay unmeasured. While children
 * measure, nothing here spins in MPI: requests are polled with sleeps. */
#include "comm/mpi/bench_ranks.h"

#include <errno.h>
#include <fcntl.h>
#include <mpi.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "opdb/bench.h"
#include "opdb/core.h"
#include "opdb/fs.h"

extern char **environ;

enum { TAG_HEAD = 71, TAG_JOURNAL = 72 };

/* What a rank reports to rank 0. */
typedef struct report {
    int code;        /* the child's exit code, or -signal */
    long long bytes; /* journal bytes that follow */
    char host[64];
} report;

static void wait_req(MPI_Request *rq) {
    int done = 0;
    const struct timespec nap = {0, 5000000};
    while (MPI_Test(rq, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS && !done) nanosleep(&nap, NULL);
}

/* --backend cpu: ranks on one node share its CPUs in equal slices, unless
 * the launcher already bound them to different ones. */
static void pin_rank(MPI_Comm node) {
    int lrank, lsize;
    MPI_Comm_rank(node, &lrank);
    MPI_Comm_size(node, &lsize);
    cpu_set_t mask;
    if (sched_getaffinity(0, sizeof mask, &mask)) CPU_ZERO(&mask);
    int cpus[CPU_SETSIZE], n = 0;
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &mask)) cpus[n++] = c;
    int key[2] = {n ? cpus[0] : -1, n}, lo[2], hi[2];
    MPI_Allreduce(key, lo, 2, MPI_INT, MPI_MIN, node);
    MPI_Allreduce(key, hi, 2, MPI_INT, MPI_MAX, node);
    if (lsize <= 1 || n == 0 || lo[0] != hi[0] || lo[1] != hi[1]) return; /* alone, or bound already */
    cpu_set_t slice;
    CPU_ZERO(&slice);
    if (n >= lsize)
        for (int i = lrank * n / lsize; i < (lrank + 1) * n / lsize; i++) CPU_SET(cpus[i], &slice);
    else
        CPU_SET(cpus[lrank % n], &slice);
    sched_setaffinity(0, sizeof slice, &slice);
}

/* Runs argv[0] with argv; stdout to /dev/null when quiet. Returns the exit
 * code, -signal, or 127 when it could not start. */
static int run_child(const char *exe, char **argv, bool quiet) {
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    if (quiet) posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
    fflush(NULL);
    pid_t pid;
    int e = posix_spawn(&pid, exe, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (e) {
        fprintf(stderr, "opdb bench: cannot run %s: %s\n", exe, strerror(e));
        return 127;
    }
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
    return WIFSIGNALED(st) ? -WTERMSIG(st) : WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}

static char *slurp(const char *path, long long *n) {
    opdb_strbuf sb;
    opdb_sb_init(&sb);
    opdb_err e;
    opdb_err_clear(&e);
    *n = 0;
    if (!opdb_path_exists(path) || opdb_read_file(path, &sb, &e)) {
        opdb_sb_free(&sb);
        return NULL;
    }
    *n = (long long)sb.n;
    return sb.p;
}

static void say_failed(int r, const report *rep) {
    if (rep->code < 0)
        fprintf(stderr, "opdb bench: rank %d (host %s) died on signal %d (%s); the rows it journaled are kept, its "
                        "other rows stay unmeasured\n", r, rep->host, -rep->code, strsignal(-rep->code));
    else
        fprintf(stderr, "opdb bench: rank %d (host %s) failed (exit %d; its error is above); the rows it journaled "
                        "are kept, its other rows stay unmeasured\n", r, rep->host, rep->code);
}

/* One small collective before any rank starts measuring: every rank must
 * have been given the same `bench` arguments (which rows, which stop rule,
 * which database), or their shares would not add up to the database's rows.
 * A mismatch is one line on every rank. */
static bool ranks_disagree(int argc, char **argv, int rank, int world) {
    uint64_t h = opdb_hash_bytes(&argc, sizeof argc, 23);
    for (int i = 3; i < argc; i++) h = opdb_hash_bytes(argv[i], strlen(argv[i]) + 1, h);
    uint64_t *all = opdb_xmalloc((size_t)world * sizeof *all);
    MPI_Allgather(&h, 1, MPI_UINT64_T, all, 1, MPI_UINT64_T, MPI_COMM_WORLD);
    int bad = 0;
    for (int r = 1; r < world && !bad; r++)
        if (all[r] != all[0]) bad = r;
    free(all);
    if (bad)
        fprintf(stderr, "opdb bench: rank %d: the MPI ranks were not given the same options: rank %d's `opdb bench` "
                        "arguments differ from rank 0's; every rank must run the same command\n", rank, bad);
    return bad != 0;
}

int opdb_comm_bench_ranks(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: opdb-comm --bench-ranks OPDB bench ARGS... (run by `mpirun -np N opdb bench`)\n");
        return 2;
    }
    int provided, rank, world;
    if (MPI_Init_thread(&argc, &argv, MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS) {
        fprintf(stderr, "opdb bench: MPI_Init failed under mpirun\n");
        return 1;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world);
    if (ranks_disagree(argc, argv, rank, world)) {
        MPI_Finalize();
        return 1;
    }
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
    pin_rank(node);
    int lrank;
    MPI_Comm_rank(node, &lrank);
    char dev[16];
    snprintf(dev, sizeof dev, "%d", lrank);
    setenv("CUDA_VISIBLE_DEVICES", dev, 0); /* one device per rank unless the user chose */
    int lsize;
    MPI_Comm_size(node, &lsize);
    snprintf(dev, sizeof dev, "%d", lsize);
    setenv("OPDB_BENCH_NODE_RANKS", dev, 1); /* the ranks of one node share its memory budget */

    const char *tmp = getenv("TMPDIR");
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/opdb-bench-rank%d-XXXXXX", tmp && *tmp ? tmp : "/tmp", rank);
    report rep = {0, 0, ""};
    gethostname(rep.host, sizeof rep.host - 1);
    char *journal = NULL;
    if (!mkdtemp(dir)) {
        fprintf(stderr, "opdb bench: rank %d: cannot create %s: %s\n", rank, dir, strerror(errno));
        rep.code = 1;
    } else {
        char name[64], share[32];
        snprintf(name, sizeof name, OPDB_BENCH_SHARD_FILE, rank);
        journal = opdb_path_join(dir, name);
        snprintf(share, sizeof share, "%d/%d", rank, world);
        setenv("OPDB_BENCH_SHARD", share, 1);
        setenv("OPDB_BENCH_SHARD_PATH", journal, 1);
        const char *worker = getenv("OPDB_BENCH_WORKER"); /* a wrapper that ends by running opdb */
        rep.code = run_child(worker && *worker ? worker : argv[2], argv + 2, true);
    }
    char *data = journal ? slurp(journal, &rep.bytes) : NULL;
    int status = 0;
    if (rank != 0) {
        MPI_Request rq;
        MPI_Isend(&rep, (int)sizeof rep, MPI_BYTE, 0, TAG_HEAD, MPI_COMM_WORLD, &rq);
        wait_req(&rq);
        if (rep.bytes) {
            MPI_Isend(data, (int)rep.bytes, MPI_BYTE, 0, TAG_JOURNAL, MPI_COMM_WORLD, &rq);
            wait_req(&rq);
        }
    } else {
        bool failed = rep.code != 0;
        if (failed) say_failed(0, &rep);
        for (int r = 1; r < world && journal; r++) {
            report got;
            MPI_Request rq;
            MPI_Irecv(&got, (int)sizeof got, MPI_BYTE, r, TAG_HEAD, MPI_COMM_WORLD, &rq);
            wait_req(&rq);
            got.host[sizeof got.host - 1] = '\0';
            if (got.bytes > 0) {
                char *buf = opdb_xmalloc((size_t)got.bytes);
                MPI_Irecv(buf, (int)got.bytes, MPI_BYTE, r, TAG_JOURNAL, MPI_COMM_WORLD, &rq);
                wait_req(&rq);
                char name[64];
                snprintf(name, sizeof name, OPDB_BENCH_SHARD_FILE, r);
                char *p = opdb_path_join(dir, name);
                opdb_err e;
                opdb_err_clear(&e);
                if (opdb_atomic_write(p, buf, (size_t)got.bytes, &e)) {
                    fprintf(stderr, "opdb bench: rank %d's journal: %s\n", r, e.msg);
                    got.code = got.code ? got.code : 1;
                }
                free(p);
                free(buf);
            }
            if (got.code) {
                say_failed(r, &got);
                failed = true;
            }
        }
        if (!journal) {
            status = 1; /* nowhere to merge: the database is left as it was */
        } else {
            char merge[32];
            snprintf(merge, sizeof merge, "merge/%d", world);
            setenv("OPDB_BENCH_SHARD", merge, 1);
            setenv("OPDB_BENCH_SHARD_PATH", dir, 1);
            status = run_child(argv[2], argv + 2, false);
            if (status < 0) {
                fprintf(stderr, "opdb bench: the write-back died on signal %d (%s); the database is as it was\n",
                        -status, strsignal(-status));
                status = 1;
            }
            if (failed && status == 0) status = 1;
        }
    }
    MPI_Request rq;
    MPI_Ibcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD, &rq); /* ranks wait for the write-back without spinning */
    wait_req(&rq);
    free(data);
    if (journal) {
        for (int r = 0; r < world; r++) {
            char name[64];
            snprintf(name, sizeof name, OPDB_BENCH_SHARD_FILE, r);
            char *p = opdb_path_join(dir, name);
            unlink(p);
            free(p);
        }
        rmdir(dir);
        free(journal);
    }
    MPI_Comm_free(&node);
    MPI_Finalize();
    return rank == 0 ? status : 0;
}
