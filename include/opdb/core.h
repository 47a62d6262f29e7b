/* Core building blocks shared by every opdb module: errors, byte spans,
 * an arena allocator, a growable string buffer and a fast hash. */
#ifndef OPDB_CORE_H
#define OPDB_CORE_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "opdb/api.h"
#include "opdb/error.h"

#ifdef __cplusplus
extern "C" {
#endif

OPDB_API void opdb_warn(const char *fmt, ...) OPDB_PRINTF(1, 2);
/* A note to the program's note handler (error.h), the text as formatted. */
OPDB_API void opdb_note(const char *fmt, ...) OPDB_PRINTF(1, 2);
/* A warning that the run produced nothing meaningful (no rows, no matches,
 * less than asked): handed to the call's `nothing` sink (opdb_log), which
 * counts it (opdb's --strict turns any into exit status 1); without one, a
 * warning like opdb_warn's. */
OPDB_API void opdb_warn_nothing(const char *fmt, ...) OPDB_PRINTF(1, 2);
/* A path shown under another name in every error and warning (opdb_fail,
 * opdb_warn): the temporary file that holds stdin for '-' is "<stdin>",
 * not its /tmp name. At most 4 aliases; set them before any work starts. */
OPDB_API void opdb_path_alias(const char *path, const char *shown);
/* The name to show for path: its alias, or path itself. */
OPDB_API const char *opdb_path_shown(const char *path);

/* A view of bytes owned elsewhere. */
typedef struct opdb_span {
    const char *p;
    size_t n;
} opdb_span;

static inline opdb_span opdb_span_make(const char *p, size_t n) {
    opdb_span s = {p, n};
    return s;
}
OPDB_API opdb_span opdb_span_cstr(const char *s);
OPDB_API bool opdb_span_eq(opdb_span a, opdb_span b);
OPDB_API bool opdb_span_eq_cstr(opdb_span a, const char *s);

/* Bump allocator: many small allocations, one free. */
typedef struct opdb_arena_chunk opdb_arena_chunk;
typedef struct opdb_arena {
    opdb_arena_chunk *head;
    size_t chunk_size;
} opdb_arena;

/* chunk_size of OPDB_BIG_ALLOC_MIN or more: chunks are opdb_big_alloc'ed (huge pages), each
 * chunk_size bytes in all (header included) */
OPDB_API void opdb_arena_init(opdb_arena *a, size_t chunk_size);
OPDB_API void *opdb_arena_alloc(opdb_arena *a, size_t n);          /* 8-byte aligned, aborts on OOM */
OPDB_API char *opdb_arena_strndup(opdb_arena *a, const char *p, size_t n); /* NUL-terminated copy */
OPDB_API void opdb_arena_free(opdb_arena *a);
/* Empties the arena for reuse, keeping its first chunk (no allocation while a use fits in it). */
OPDB_API void opdb_arena_reset(opdb_arena *a);

/* Allocation helpers (src/core/alloc.c).  Out of memory anywhere in the
 * library calls the program's handler (opdb_set_oom_handler, error.h). */
OPDB_API OPDB_NORETURN void opdb_die_oom(size_t n);
/* The value of a named setting the program gave (opdb_set_settings), or NULL. */
OPDB_API const char *opdb_setting(const char *name);
OPDB_API void *opdb_xmalloc(size_t n);
OPDB_API void *opdb_xcalloc(size_t n, size_t size);
OPDB_API void *opdb_xrealloc(void *p, size_t n);
/* The capacity after growing one of cap entries (of elem bytes) to hold nr > cap:
 * doubled until it does (dies on overflow). */
OPDB_API size_t opdb_grow_cap(size_t cap, size_t nr, size_t elem);
/* Grow the array p (a pointer lvalue with capacity cap, an integer lvalue in
 * entries) to hold at least nr entries, as git's ALLOC_GROW:
 *   OPDB_ALLOC_GROW(v, n + 1, cap); v[n++] = x;                            */
#define OPDB_ALLOC_GROW(p, nr, cap)                                                     \
    do {                                                                                \
        if ((size_t)(nr) > (size_t)(cap)) {                                             \
            size_t opdb_grow_to_ = opdb_grow_cap((size_t)(cap), (size_t)(nr), sizeof *(p)); \
            (p) = opdb_xrealloc((p), opdb_grow_to_ * sizeof *(p));                      \
            (cap) = opdb_grow_to_;                                                      \
        }                                                                               \
    } while (0)
/* The virtual memory page size. */
OPDB_API size_t opdb_page_size(void);

/* From this size on a block is worth its own mapping on huge pages
 * (opdb_big_alloc, arena chunks); below it, malloc/calloc. */
#define OPDB_BIG_ALLOC_MIN ((size_t)4 << 20)
/* Big zeroed arrays (OPDB_BIG_ALLOC_MIN and more: own mappings with huge pages where the
 * kernel gives them; less: calloc); the caller
 * keeps the size for realloc/free.  Dies on OOM. */
OPDB_API void *opdb_big_alloc(size_t n);
OPDB_API void *opdb_big_realloc(void *p, size_t old_n, size_t n);
OPDB_API void opdb_big_free(void *p, size_t n);

/* Faulting memory in ahead of use on otherwise idle CPU time (a thread at
 * nice 19; see src/core/prefault.c).  Between begin and end,
 * every opdb_big_alloc'ed region, and any given to opdb_prefault, is
 * populated in the background; contents are never changed.  One at a time
 * per process. */
OPDB_API void opdb_prefault_begin(void);
OPDB_API void opdb_prefault(void *p, size_t n);
OPDB_API void opdb_prefault_end(void);
OPDB_API char *opdb_xstrdup(const char *s);

/* Growable byte buffer (always NUL-terminated). */
typedef struct opdb_strbuf {
    char *p;
    size_t n, cap;
} opdb_strbuf;

OPDB_API void opdb_sb_init(opdb_strbuf *sb);
OPDB_API void opdb_sb_free(opdb_strbuf *sb);
OPDB_API void opdb_sb_grow(opdb_strbuf *sb, size_t extra); /* the slow path of reserve */
/* Inline: these sit in every hot loop (signatures, CSV writing). */
static inline void opdb_sb_reserve(opdb_strbuf *sb, size_t extra) {
    if (sb->n + extra + 1 > sb->cap) opdb_sb_grow(sb, extra);
}
static inline void opdb_sb_add(opdb_strbuf *sb, const char *p, size_t n) {
    opdb_sb_reserve(sb, n);
    if (n) memcpy(sb->p + sb->n, p, n);
    sb->n += n;
    sb->p[sb->n] = '\0';
}
static inline void opdb_sb_addc(opdb_strbuf *sb, char c) {
    opdb_sb_reserve(sb, 1);
    sb->p[sb->n++] = c;
    sb->p[sb->n] = '\0';
}
OPDB_API void opdb_sb_adds(opdb_strbuf *sb, const char *s);
/* s with & < > " ' escaped for HTML text and attribute values */
OPDB_API void opdb_sb_add_html(opdb_strbuf *sb, const char *s);
OPDB_API void opdb_sb_addf(opdb_strbuf *sb, const char *fmt, ...) OPDB_PRINTF(2, 3);
OPDB_API void opdb_sb_clear(opdb_strbuf *sb);

/* A growable array of owned strings (git's strvec); {0} is empty. */
typedef struct opdb_strvec {
    char **v;
    size_t n, cap;
} opdb_strvec;

OPDB_API void opdb_strvec_push(opdb_strvec *s, const char *str);   /* a copy */
OPDB_API void opdb_strvec_push_owned(opdb_strvec *s, char *owned); /* takes a malloc'ed string */
OPDB_API void opdb_strvec_insert_owned(opdb_strvec *s, size_t at, char *owned);
OPDB_API long opdb_strvec_find(const opdb_strvec *s, const char *str); /* first index, or -1 */
OPDB_API void opdb_strvec_free(opdb_strvec *s);                      /* the strings too; then empty */

/* 64-bit hash of a byte string; `seed` chains several strings into one key. */
OPDB_API uint64_t opdb_hash_bytes(const void *p, size_t n, uint64_t seed);

/* A hash index over entries that live in the caller's array: it maps a key's
 * hash to the positions of entries with that hash; the caller compares keys.
 *   for (opdb_hprobe p = opdb_hindex_probe(&ix, h); opdb_hprobe_next(&p, &i);)
 *       if (equal(entries[i], key)) return &entries[i];
 *   opdb_hindex_add(&ix, h, new_index);                                      */
typedef struct opdb_hslot {
    uint64_t hash;
    uint32_t idx1;  /* entry index + 1; 0 = empty */
} opdb_hslot;

typedef struct opdb_hindex {
    opdb_hslot *slot;
    size_t nslots, n;
} opdb_hindex;

typedef struct opdb_hprobe {
    const opdb_hindex *ix;
    size_t j;
    uint64_t h;
} opdb_hprobe;

static inline opdb_hprobe opdb_hindex_probe(const opdb_hindex *ix, uint64_t h) {
    opdb_hprobe p = {ix, ix->nslots ? h & (ix->nslots - 1) : 0, h};
    return p;
}

/* Next entry index whose hash equals the probed one; false when none is left. */
static inline bool opdb_hprobe_next(opdb_hprobe *p, uint32_t *idx) {
    const opdb_hindex *ix = p->ix;
    while (ix->nslots && ix->slot[p->j].idx1) {
        const opdb_hslot *s = &ix->slot[p->j];
        p->j = (p->j + 1) & (ix->nslots - 1);
        if (s->hash == p->h) {
            *idx = s->idx1 - 1;
            return true;
        }
    }
    return false;
}

OPDB_API void opdb_hindex_add(opdb_hindex *ix, uint64_t hash, uint32_t idx);
/* Room for n entries without growing (each growth places every entry again). */
OPDB_API void opdb_hindex_reserve(opdb_hindex *ix, size_t n);
OPDB_API void opdb_hindex_free(opdb_hindex *ix);

#ifdef __cplusplus
}
#endif
#endif
