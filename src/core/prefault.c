/* Memory faulted in ahead of its use, on CPU time nothing else wants.
 *
 * On the project's VMs the first write to a fresh page is slow (the guest
 * hands free pages back to its host, which must supply them again): 0.6 to
 * 4 ms per MiB, at times far more.  In `opdb update` the aggregating thread
 * touched ~130 MiB of new group tables and strings that way, on the one
 * thread the workers wait for.  A background thread at the lowest priority
 * (nice 19) faults in the regions queued by opdb_big_alloc, their contents
 * never changed (their owner may be writing them already), mostly on CPU
 * time nothing else wants.
 *
 * How: on x86-64, a locked add of 0 to one byte of each page, a write that
 * changes nothing and is atomic against the owner's own writes, faults the
 * page in through the fault path, which locks only that mapping.  The
 * portable MADV_POPULATE_WRITE holds the whole address-space lock for each
 * step (a 2 MiB huge page), and while the host was slow to supply memory
 * (6-60 ms a step) every thread that mapped or grew memory (mmap, brk, a
 * malloc arena's mprotect) waited behind it: the first 0.1 s of a
 * full-size update ran 40-80% idle. */
#include "opdb/core.h"

#include "core/alloc.h"
#include "core/call.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

enum { QUEUE = 64, STEP = 2 << 20 };

static struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct { uintptr_t from, to; } q[QUEUE];
    int head, len;
    bool running;
    atomic_bool stop; /* also read without the lock, between steps of a region */
    pthread_t th;
    uintptr_t page;   /* set before the thread starts */
} g = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, {{0, 0}}, 0, 0, false, false, 0, 4096};

/* Faults in [from, to) (whole pages) unless stopped; false where the
 * kernel cannot (nothing more to do then). */
static bool populate(uintptr_t from, uintptr_t to) {
#if defined(__x86_64__) && defined(__GNUC__)
    for (uintptr_t p = from; p < to && !atomic_load_explicit(&g.stop, memory_order_relaxed); p += g.page)
        opdb_touch_pages((void *)p, 1); /* the page's no-op write (core/alloc.h) */
    return true;
#elif defined(MADV_POPULATE_WRITE)
    for (uintptr_t p = from; p < to && !atomic_load_explicit(&g.stop, memory_order_relaxed); p += STEP) {
        size_t n = to - p < STEP ? to - p : STEP;
        if (madvise((void *)p, n, MADV_POPULATE_WRITE) != 0 && errno == EINVAL) return false;
    }
    return true;
#else
    (void)from;
    (void)to;
    return false;
#endif
}

static void *prefault_main(void *arg) {
    (void)arg;
    /* nice 19, not SCHED_IDLE: an idle-class thread starved while it holds
     * the address-space lock (populating takes it) stalled every thread that
     * maps memory; at nice 19 it still gets a slice now and then (paired
     * full-size runs: faster in 10 of 14, 1.887 -> 1.795 s) */
    (void)setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), 19);
    pthread_mutex_lock(&g.mu);
    for (;;) {
        while (!atomic_load(&g.stop) && g.len == 0) pthread_cond_wait(&g.cv, &g.mu);
        if (atomic_load(&g.stop)) break;
        uintptr_t from = g.q[g.head].from, to = g.q[g.head].to;
        g.head = (g.head + 1) % QUEUE;
        g.len--;
        pthread_mutex_unlock(&g.mu);
        bool unsupported = !populate(from, to);
        pthread_mutex_lock(&g.mu);
        if (unsupported) break; /* an older kernel: nothing more to do */
    }
    pthread_mutex_unlock(&g.mu);
    return NULL;
}

/* The thread is the starting call's: stopped if that call runs out of memory. */
static opdb_call_res g_held;
static void release_thread(opdb_call_res *r) {
    (void)r;
    opdb_prefault_end();
}

void opdb_prefault_begin(void) {
    pthread_mutex_lock(&g.mu);
    bool started = false;
    if (!g.running) {
        g.page = opdb_page_size();
        g.len = 0;
        atomic_store(&g.stop, false);
        g.running = started = pthread_create(&g.th, NULL, prefault_main, NULL) == 0;
    }
    pthread_mutex_unlock(&g.mu);
    if (started) opdb_call_hold(&g_held, release_thread, 0);
}

void opdb_prefault(void *p, size_t n) {
    uintptr_t ps = opdb_page_size();
    uintptr_t from = ((uintptr_t)p + ps - 1) / ps * ps, to = ((uintptr_t)p + n) / ps * ps; /* whole pages inside */
    if (to <= from) return;
    pthread_mutex_lock(&g.mu);
    if (g.running && g.len < QUEUE) { /* a hint: dropped when the queue is full */
        int i = (g.head + g.len) % QUEUE;
        g.q[i].from = from;
        g.q[i].to = to;
        g.len++;
        pthread_cond_signal(&g.cv);
    }
    pthread_mutex_unlock(&g.mu);
}

void opdb_prefault_end(void) {
    (void)opdb_call_drop(release_thread, 0);
    pthread_mutex_lock(&g.mu);
    bool running = g.running;
    atomic_store(&g.stop, true);
    pthread_cond_signal(&g.cv);
    pthread_mutex_unlock(&g.mu);
    if (running) pthread_join(g.th, NULL);
    pthread_mutex_lock(&g.mu);
    g.running = false;
    g.len = 0;
    pthread_mutex_unlock(&g.mu);
}
