/* Large arrays filled once, far from each other: anonymous mappings with
 * transparent huge pages asked for (madvise), so filling them costs a page
 * fault per 2 MiB instead of per 4 KiB.  Where the kernel declines, they are
 * plain zeroed mappings. */
#include "opdb/core.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

static size_t round_up(size_t n) {
    const size_t huge = (size_t)2 << 20;
    return n ? (n + huge - 1) / huge * huge : huge;
}

/* Below this, a plain calloc: a mapping and a huge page would cost more
 * than they save (and small runs, like a fuzzer's, would pay it each time). */
static bool is_big(size_t n) { return n >= OPDB_BIG_ALLOC_MIN; }

void *opdb_big_alloc(size_t n) {
    if (!is_big(n)) return opdb_xcalloc(1, n);
    size_t len = round_up(n);
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) opdb_die_oom(n);
#ifdef MADV_HUGEPAGE
    (void)madvise(p, len, MADV_HUGEPAGE);
#endif
    opdb_prefault(p, n); /* while a prefault thread runs */
    return p;
}

void *opdb_big_realloc(void *p, size_t old_n, size_t n) {
    if (!p) return opdb_big_alloc(n);
    if (is_big(old_n) && round_up(n) <= round_up(old_n)) return p;
    if (!is_big(old_n) && !is_big(n)) {
        char *q = opdb_xrealloc(p, n);
        if (n > old_n) memset(q + old_n, 0, n - old_n);
        return q;
    }
    void *q = opdb_big_alloc(n);
    memcpy(q, p, old_n < n ? old_n : n);
    opdb_big_free(p, old_n);
    return q;
}

void opdb_big_free(void *p, size_t n) {
    if (!p) return;
    if (is_big(n)) munmap(p, round_up(n));
    else free(p);
}
