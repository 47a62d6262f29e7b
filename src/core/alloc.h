/* Allocation helpers the library keeps to itself. */
#ifndef OPDB_CORE_ALLOC_H
#define OPDB_CORE_ALLOC_H

#include <pthread.h>
#include <stddef.h>

/* n * size zeroed bytes, written now (dies on OOM as opdb_xcalloc). For a
 * hash table that is probed before it is written: fresh calloc'ed pages are
 * mapped to the shared zero page by the first probe and faulted again, with
 * a TLB flush on every CPU the process runs on, by the first write. */
void *opdb_xzeroed(size_t n, size_t size);

/* Writes nothing but faults in, for writing, every page of [p, p + n) that
 * is not yet: a no-op atomic add per page, safe beside the owner's own
 * atomic writes. For a table read and written by several threads. */
void opdb_touch_pages(void *p, size_t n);

/* A mutex held for a few hundred instructions at a time by threads on other
 * CPUs: a waiter spins a while before it sleeps (each sleep costs a system
 * call, and so does the wake that ends it). */
void opdb_mutex_init_brief(pthread_mutex_t *mu);

#endif
