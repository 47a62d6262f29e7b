/* libFuzzer target: the input is a Chrome trace (plain or gzip); the
 * streaming reader behind `opdb trace2csv` must never crash, leak, or fail
 * without an error message. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "opdb/trace2csv.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char path[] = "/tmp/opdb_fuzz_trace.XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) abort();
    if (size && write(fd, data, size) != (ssize_t)size) abort();
    close(fd);
    FILE *devnull = fopen("/dev/null", "w");
    opdb_err err;
    opdb_err_clear(&err);
    unsigned long long rows;
    if (opdb_trace2csv_run(path, NULL, devnull, &rows, &err) != 0 && err.msg[0] == '\0') abort();
    fclose(devnull);
    unlink(path);
    return 0;
}
