/* Even splits (see even_split.h). */
#include "replay/ops/even_split.h"

void opdb_even_split(int64_t total, int64_t parts, bool cumulative, bool at_least_one, int64_t *out) {
    if (parts <= 0) return;
    const int64_t base = total / parts, extra = total % parts;
    int64_t run = 0;
    for (int64_t i = 0; i < parts; i++) {
        int64_t v = base + (i < extra ? 1 : 0);
        if (at_least_one && v < 1) v = 1;
        run += v;
        out[i] = cumulative ? run : v;
    }
}
