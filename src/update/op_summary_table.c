/* The group table of op_summary aggregation (see op_summary_table.h). */
#include "update/op_summary_table.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* expect_groups: a guess that sizes the table, so it seldom grows (growing
 * places every key again, on the thread that accumulates). */
void gtable_init(gtable *t, opdb_arena *arena, size_t expect_groups) {
    memset(t, 0, sizeof *t);
    t->arena = arena;
    size_t slots = 1024;
    while (slots < 2 * expect_groups && slots < ((size_t)1 << 22)) slots *= 2; /* 32 MiB at most */
    t->cap = expect_groups > 256 ? expect_groups : 256;
    t->g = opdb_big_alloc(t->cap * sizeof *t->g);
    atomic_init(&t->table, opdb_pub_slots_new(slots));
    atomic_init(&t->cells, opdb_pub_slots_new(slots));
}

void gtable_free(gtable *t) {
    free(t->ops);
    free(t->opn);
    opdb_big_free(t->g, t->cap * sizeof *t->g);
    opdb_pub_slots_free(atomic_load(&t->table));
    opdb_pub_slots_free(atomic_load(&t->cells));
}

bool key_is(const gkey *k, const char *op, size_t opn, const char *sig, size_t sign, uint64_t h) {
    return k->hash == h && k->sign == sign && k->opn == opn && memcmp(k->sig, sig, sign) == 0 &&
           memcmp(k->op, op, opn) == 0;
}

/* Any thread: the group index + 1 of (op, sig) if already published, else 0. */
uint32_t gprobe(const gtable *t, const char *op, size_t opn, const char *sig, size_t sign, uint64_t h) {
    const opdb_pub_slots *s = atomic_load_explicit(&((gtable *)t)->table, memory_order_acquire);
    size_t mask = s->nslots - 1;
    for (size_t j = h & mask;; j = (j + 1) & mask) {
        const gkey *k = opdb_pub_slots_at(s, j);
        if (!k) return 0;
        if (key_is(k, op, opn, sig, sign, h)) return k->index + 1;
    }
}

/* Caller's thread: the id of op (hash hop), interned once. */
uint32_t op_id(gtable *t, const char *op, size_t opn, uint64_t hop) {
    uint32_t *slot = &t->recent[hop & 63];
    if (*slot && t->opn[*slot - 1] == opn && memcmp(t->ops[*slot - 1], op, opn) == 0) return *slot - 1;
    size_t i;
    for (i = 0; i < t->nops; i++)
        if (t->opn[i] == opn && memcmp(t->ops[i], op, opn) == 0) break;
    if (i == t->nops) {
        if (t->nops == t->capops) {
            t->capops = opdb_grow_cap(t->capops, t->nops + 1, sizeof *t->ops);
            t->ops = opdb_xrealloc(t->ops, t->capops * sizeof *t->ops);
            t->opn = opdb_xrealloc(t->opn, t->capops * sizeof *t->opn);
        }
        t->ops[i] = opdb_arena_strndup(t->arena, op, opn);
        t->opn[i] = opn;
        t->nops++;
    }
    *slot = (uint32_t)i + 1;
    return (uint32_t)i;
}

/* Caller's thread only. */
group *gfind(gtable *t, const char *op, size_t opn, uint64_t hop, const char *sig, size_t sign, uint64_t h) {
    uint32_t hit = gprobe(t, op, opn, sig, sign, h);
    if (hit) return &t->g[hit - 1];
    if (t->n == t->cap) {
        t->g = opdb_big_realloc(t->g, t->cap * sizeof *t->g, 2 * t->cap * sizeof *t->g);
        t->cap *= 2;
    }
    uint32_t opid = op_id(t, op, opn, hop);
    gkey *k = opdb_arena_alloc(t->arena, sizeof *k);
    k->op = t->ops[opid];
    k->opid = opid;
    k->opn = opn;
    k->sig = opdb_arena_strndup(t->arena, sig, sign);
    k->sign = sign;
    k->hash = h;
    k->cells = NULL; /* not in the cells table (take) */
    k->cells_hash = 0;
    k->index = (uint32_t)t->n;
    group *g = &t->g[t->n++];
    memset(g, 0, sizeof *g);
    g->key = k;
    g->opid = opid;
    opdb_pub_slots *s = atomic_load_explicit(&t->table, memory_order_relaxed);
    if (t->n * 2 > s->nslots) {
        opdb_pub_slots *ns = opdb_pub_slots_new(s->nslots * 2);
        opdb_pub_slots *oc = atomic_load_explicit(&t->cells, memory_order_relaxed);
        opdb_pub_slots *nc = opdb_pub_slots_new(s->nslots * 2); /* as many keys at most */
        for (size_t i = 0; i + 1 < t->n; i++) {
            const gkey *old = t->g[i].key;
            opdb_pub_slots_place(ns, old, old->hash);
            if (old->cells) opdb_pub_slots_place(nc, old, old->cells_hash);
        }
        ns->retired = s;
        nc->retired = oc;
        atomic_store_explicit(&t->table, ns, memory_order_release);
        atomic_store_explicit(&t->cells, nc, memory_order_release);
        s = ns;
    }
    opdb_pub_slots_place(s, k, k->hash);
    return g;
}
