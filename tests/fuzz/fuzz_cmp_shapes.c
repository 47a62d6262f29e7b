/* libFuzzer target: the input is the per-shape CSV of `opdb compare
 * --shapes`; reading it must never crash or leak, fail only with an error
 * message, and a CSV that reads renders into the HTML drill-down (every
 * cell escaped) without a crash. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "opdb/compare.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char path[] = "/tmp/opdb_fuzz_shapes.XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) abort();
    if (size && write(fd, data, size) != (ssize_t)size) abort();
    close(fd);
    opdb_cmp_shapes sh = {0};
    opdb_err err;
    opdb_err_clear(&err);
    if (opdb_cmp_read_shapes(path, &sh, &err) != 0) {
        if (err.msg[0] == '\0') abort();
    } else {
        /* one compared kernel type, named like the first shape row when there is one */
        opdb_cmp_row row = {0};
        row.kt = sh.n ? sh.v[0].kt : (char *)"MatMulV2";
        row.funcs = (char *)"";
        row.status = "HIT";
        row.tc_total.v = 1.0;
        row.prof_per_fwd.v = 2.0;
        opdb_cmp_scenario sc = {(char *)"fuzz", &row, 1, &sh};
        opdb_strbuf html;
        opdb_sb_init(&html);
        opdb_cmp_html(&html, &sc, 1);
        if (!strstr(html.p, "</html>")) abort();
        opdb_sb_free(&html);
    }
    opdb_cmp_shapes_free(&sh);
    unlink(path);
    return 0;
}
