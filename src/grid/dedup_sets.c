/* The dedup sets of `opdb grid` (see dedup_sets.h): the set of signature
 * strings, and the allocation and growth of the set of hashes. */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "grid/dedup_sets.h"

void grid_sigset_init(grid_sigset *s) {
    memset(s, 0, sizeof *s);
    opdb_sb_init(&s->bytes);
}

void grid_sigset_clear(grid_sigset *s) {
    if (s->ix.nslots) memset(s->ix.slot, 0, s->ix.nslots * sizeof *s->ix.slot);
    s->ix.n = 0;
    opdb_sb_clear(&s->bytes);
    s->n = 0;
}

void grid_sigset_free(grid_sigset *s) {
    opdb_hindex_free(&s->ix);
    opdb_sb_free(&s->bytes);
    free(s->off);
    free(s->len);
}

static bool sigset_has_h(const grid_sigset *s, const opdb_strbuf *k, uint64_t h) {
    uint32_t idx;
    for (opdb_hprobe p = opdb_hindex_probe(&s->ix, h); opdb_hprobe_next(&p, &idx);)
        if (s->len[idx] == k->n && !memcmp(s->bytes.p + s->off[idx], k->p, k->n)) return true;
    return false;
}

bool grid_sigset_has(const grid_sigset *s, const opdb_strbuf *k) {
    return s->n && sigset_has_h(s, k, opdb_hash_bytes(k->p, k->n, 0));
}

bool grid_sigset_add(grid_sigset *s, const opdb_strbuf *k) {
    uint64_t h = opdb_hash_bytes(k->p, k->n, 0);
    if (sigset_has_h(s, k, h)) return false;
    if (s->n == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 1024;
        s->off = opdb_xrealloc(s->off, s->cap * sizeof *s->off);
        s->len = opdb_xrealloc(s->len, s->cap * sizeof *s->len);
    }
    s->off[s->n] = s->bytes.n;
    s->len[s->n] = (uint32_t)k->n;
    opdb_sb_add(&s->bytes, k->p, k->n);
    opdb_hindex_add(&s->ix, h, (uint32_t)s->n);
    s->n++;
    return true;
}

/* From 512 KiB (65,536 slots) a table is a mapping with huge pages: one
 * fault instead of 128 or more (each about 20 us on the project's VMs). */
#define HSET_HUGE_SLOTS ((size_t)1 << 16)

static grid_hslot *hset_alloc_slots(size_t ns) {
    if (ns < HSET_HUGE_SLOTS) return opdb_xcalloc(ns, sizeof(grid_hslot));
    size_t huge = (size_t)2 << 20, len = (ns * sizeof(grid_hslot) + huge - 1) / huge * huge;
    char *p = mmap(NULL, len + huge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) opdb_die_oom(len);
    size_t head = (huge - (uintptr_t)p % huge) % huge; /* aligned, so that it can be one huge page */
    if (head) munmap(p, head);
    munmap(p + head + len, huge - head);
#ifdef MADV_HUGEPAGE
    (void)madvise(p + head, len, MADV_HUGEPAGE);
#endif
    return (grid_hslot *)(void *)(p + head);
}

void grid_hset_free_slots(grid_hset *s) {
    if (!s->s) return;
    size_t huge = (size_t)2 << 20;
    if (s->cap < HSET_HUGE_SLOTS) free(s->s);
    else munmap(s->s, (s->cap * sizeof *s->s + huge - 1) / huge * huge);
    s->s = NULL;
}

void grid_hset_resize(grid_hset *s, int bits) {
    size_t ns = (size_t)1 << bits, nlive = 0;
    grid_hslot *live = s->n ? opdb_xmalloc(s->n * sizeof *live) : NULL;
    for (size_t i = 0; i < s->nslots && nlive < s->n; i++)
        if (s->s[i].ref1) live[nlive++] = s->s[i];
    if (ns > s->cap) {
        grid_hset_free_slots(s);
        s->s = hset_alloc_slots(ns);
        s->cap = ns;
    }
    memset(s->s, 0, ns * sizeof *s->s);
    s->nslots = ns;
    s->bits = bits;
    for (size_t i = 0; i < nlive; i++) grid_hset_place(s, live[i].tag, live[i].ref1);
    free(live);
}

void grid_hset_clear(grid_hset *s) {
    s->n = 0;
    grid_hset_resize(s, 12);
}
