/* Bump allocator (the checked allocation helpers are in alloc.c). */
#include <stdlib.h>
#include <string.h>
#include "opdb/core.h"

struct opdb_arena_chunk {
    opdb_arena_chunk *next;
    size_t used, cap;
    bool big;   /* from opdb_big_alloc: arenas of big chunks fill huge pages */
    _Alignas(16) unsigned char data[];
};

void opdb_arena_init(opdb_arena *a, size_t chunk_size) {
    a->head = NULL;
    a->chunk_size = chunk_size ? chunk_size : 64 * 1024;
}

void *opdb_arena_alloc(opdb_arena *a, size_t n) {
    n = (n + 7) & ~(size_t)7;
    opdb_arena_chunk *c = a->head;
    if (!c || c->cap - c->used < n) {
        bool big = a->chunk_size >= OPDB_BIG_ALLOC_MIN;
        /* a big chunk, header included, is chunk_size: whole huge pages, none
         * populated for a few bytes past them */
        size_t room = big ? a->chunk_size - sizeof *c : a->chunk_size;
        size_t cap = n > room ? n : room;
        c = big ? opdb_big_alloc(sizeof *c + cap) : opdb_xmalloc(sizeof *c + cap);
        c->used = 0;
        c->cap = cap;
        c->big = big;
        c->next = a->head;
        a->head = c;
    }
    void *p = c->data + c->used;
    c->used += n;
    return p;
}

char *opdb_arena_strndup(opdb_arena *a, const char *p, size_t n) {
    char *q = opdb_arena_alloc(a, n + 1);
    if (n) memcpy(q, p, n);
    q[n] = '\0';
    return q;
}

void opdb_arena_free(opdb_arena *a) {
    opdb_arena_chunk *c = a->head;
    while (c) {
        opdb_arena_chunk *next = c->next;
        if (c->big) opdb_big_free(c, sizeof *c + c->cap);
        else free(c);
        c = next;
    }
    a->head = NULL;
}

void opdb_arena_reset(opdb_arena *a) {
    /* the oldest chunk stays (allocated at the arena's chunk size): a reused arena allocates nothing
     * while its contents fit in it */
    opdb_arena_chunk *c = a->head, *keep = NULL;
    while (c) {
        opdb_arena_chunk *next = c->next;
        if (!next) {
            keep = c;
        } else if (c->big) {
            opdb_big_free(c, sizeof *c + c->cap);
        } else {
            free(c);
        }
        c = next;
    }
    if (keep) keep->used = 0;
    a->head = keep;
}
