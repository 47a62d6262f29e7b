/* "did you mean" for mistyped commands and options. */
#ifndef OPDB_CLI_SUGGEST_H
#define OPDB_CLI_SUGGEST_H

#include <stddef.h>

/* The candidate within a small edit distance of word (the closest), or NULL. */
const char *cli_suggest(const char *word, const char *const *cands, size_t n);

#endif
