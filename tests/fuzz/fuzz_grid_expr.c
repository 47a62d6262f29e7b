/* libFuzzer target: the grid's expression evaluator (opdb grid shape and
 * constraint expressions).  Any input must compile or fail with a message,
 * evaluate or fail with a message, with no crash, overflow (UBSan) or leak. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "opdb/grid.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *text = malloc(size + 1);
    memcpy(text, data, size);
    text[size] = '\0';
    char msg[256] = "";
    opdb_grid_expr *e = opdb_grid_expr_compile(text, msg, sizeof msg);
    if (!e) {
        if (!msg[0]) abort();
        free(text);
        return 0;
    }
    static const char *const names[] = {"M", "N", "K", "tokens", "D", "block_w"};
    static const int64_t vals[] = {1, 9223372036854775807LL, -9223372036854775807LL - 1, 0, -3, 32};
    opdb_grid_vars v = {names, vals, 6};
    int64_t i;
    double f;
    bool fl;
    msg[0] = '\0';
    if (opdb_grid_expr_eval(e, &v, &i, &f, &fl, msg, sizeof msg) && !msg[0]) abort();
    opdb_grid_expr_free(e);
    free(text);
    return 0;
}
