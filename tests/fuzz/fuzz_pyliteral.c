/* libFuzzer target: the Python-literal parser behind sub_kernel_durations and
 * shape lists. It must never crash or leak, must give every failure an
 * offset inside the input, and what it renders (Python repr) must read back
 * to the same rendering. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "opdb/pyliteral.h"

static char *render(const opdb_pylit *v) {
    opdb_strbuf sb;
    opdb_sb_init(&sb);
    opdb_pylit_repr(&sb, v);
    return sb.p;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    size_t off = 0;
    const char *msg = NULL;
    opdb_pylit *v = opdb_pylit_parse((const char *)data, size, &off, &msg);
    if (!v) {
        if (!msg || off > size) abort();
        return 0;
    }
    char *a = render(v);
    /* inf and nan have no literal form; other renderings must round-trip */
    if (!strstr(a, "inf") && !strstr(a, "nan")) {
        opdb_pylit *w = opdb_pylit_parse(a, strlen(a), NULL, NULL);
        if (!w) abort();
        char *b = render(w);
        if (strcmp(a, b) != 0) abort();
        free(b);
        opdb_pylit_free(w);
    }
    free(a);
    opdb_pylit_free(v);
    return 0;
}
