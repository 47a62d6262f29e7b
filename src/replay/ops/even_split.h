/* Even splits of a row count over groups/batches (docs/REPLAY-OPS.md §2.3 group
 * lists, §2.5 sequence lengths): base = total / parts, the first
 * total % parts parts get one more. */
#ifndef OPDB_REPLAY_EVEN_SPLIT_H
#define OPDB_REPLAY_EVEN_SPLIT_H

#include <stdbool.h>
#include <stdint.h>

/* out[i] = size of part i, or the running end when cumulative;
 * at_least_one raises empty parts to 1 (FIA sequence lengths). */
void opdb_even_split(int64_t total, int64_t parts, bool cumulative, bool at_least_one, int64_t *out);

#endif
