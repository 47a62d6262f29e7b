/* The memory one replayed row may use for its buffers: --max-memory, else
 * three quarters of what the kernel reports available at start (the rest is
 * left to the page cache, the eviction buffer and other processes). A row
 * above it fails with its size instead of being killed by the OOM killer. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "opdb/bench.h"

static size_t available(void) {
    FILE *f = fopen("/proc/meminfo", "r");
    char line[256];
    unsigned long long kib = 0;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %llu kB", &kib) == 1) break;
    if (f) fclose(f);
    if (kib) return (size_t)kib << 10;
    long pages = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    return pages > 0 && page > 0 ? (size_t)pages * (size_t)page : 0;
}

size_t opdb_bench_memory_budget(const opdb_bench_opts *o) {
    if (o->max_memory) return o->max_memory;
    size_t a = available();
    return a ? a / 4 * 3 : SIZE_MAX; /* unknown: no limit */
}
