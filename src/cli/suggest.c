/* "did you mean": the candidate closest to a mistyped word, by edit
 * distance (insert, delete, substitute, swap of neighbours). */
#include "cli/suggest.h"

#include <ctype.h>
#include <stdbool.h>
#include <string.h>

#define MAXW 64

static size_t min3(size_t a, size_t b, size_t c) { return a < b ? (a < c ? a : c) : (b < c ? b : c); }

/* case is not a typo worth a full edit: Matmulv2 is one step from MatMulV2 */
static bool same(char x, char y) { return tolower((unsigned char)x) == tolower((unsigned char)y); }

static size_t distance(const char *a, const char *b) {
    size_t n = strlen(a), m = strlen(b);
    if (n >= MAXW || m >= MAXW) return (size_t)-1;
    size_t d[MAXW][MAXW];
    for (size_t i = 0; i <= n; i++) d[i][0] = i;
    for (size_t j = 0; j <= m; j++) d[0][j] = j;
    for (size_t i = 1; i <= n; i++)
        for (size_t j = 1; j <= m; j++) {
            d[i][j] = min3(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + !same(a[i - 1], b[j - 1]));
            if (i > 1 && j > 1 && same(a[i - 1], b[j - 2]) && same(a[i - 2], b[j - 1]) && d[i - 2][j - 2] + 1 < d[i][j])
                d[i][j] = d[i - 2][j - 2] + 1;
        }
    return d[n][m];
}

const char *cli_suggest(const char *word, const char *const *cands, size_t n) {
    size_t len = strlen(word), limit = len <= 3 ? 1 : len / 3 > 2 ? len / 3 : 2, best = (size_t)-1;
    const char *hit = NULL;
    for (size_t i = 0; i < n; i++) {
        size_t dd = distance(word, cands[i]);
        if (dd <= limit && dd < best) {
            best = dd;
            hit = cands[i];
        }
    }
    return hit;
}
