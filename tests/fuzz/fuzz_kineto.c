/* libFuzzer target: the input is a PyTorch profiler (Kineto) trace given to
 * `opdb parse` (src/ingest/kineto.c: one pass into record sorts, launch pairing, innermost
 * operator). */
#define FUZZ_FILE_NAME "trace.json"
#include "fuzz_parse_file.h"

/* Always JSON by content, so the input reaches the trace reader. */
static void fuzz_prefix(const uint8_t *data, size_t size, FILE *f) {
    if (size == 0 || (data[0] != '{' && data[0] != '[' && data[0] != 0x1f)) fputc('[', f);
}
