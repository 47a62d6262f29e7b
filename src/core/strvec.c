/* opdb_strvec: a growable array of owned strings. */
#include <stdlib.h>
#include <string.h>
#include "opdb/core.h"

void opdb_strvec_push_owned(opdb_strvec *s, char *owned) {
    OPDB_ALLOC_GROW(s->v, s->n + 1, s->cap);
    s->v[s->n++] = owned;
}

void opdb_strvec_push(opdb_strvec *s, const char *str) { opdb_strvec_push_owned(s, opdb_xstrdup(str)); }

void opdb_strvec_insert_owned(opdb_strvec *s, size_t at, char *owned) {
    if (at > s->n) at = s->n;
    OPDB_ALLOC_GROW(s->v, s->n + 1, s->cap);
    memmove(s->v + at + 1, s->v + at, (s->n - at) * sizeof *s->v);
    s->v[at] = owned;
    s->n++;
}

long opdb_strvec_find(const opdb_strvec *s, const char *str) {
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->v[i], str) == 0) return (long)i;
    return -1;
}

void opdb_strvec_free(opdb_strvec *s) {
    for (size_t i = 0; i < s->n; i++) free(s->v[i]);
    free(s->v);
    s->v = NULL;
    s->n = s->cap = 0;
}
