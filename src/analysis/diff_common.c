/* The names and cell text opdb diff's run and its three reports share: apart
 * from them, so that the run calls the reports and no report calls back. */
#include <stdio.h>

#include "analysis/diff_internal.h"

static const char *const k_names[OPDB_DIFF_NVERDICTS] = {"REGRESSION", "GAIN",    "DRIFT",   "SAME",
                                                         "UNKNOWN",    "ADDED",   "REMOVED", "STATUS_CHANGE"};

const char *opdb_diff_verdict_name(opdb_diff_verdict v) {
    return (unsigned)v < OPDB_DIFF_NVERDICTS ? k_names[v] : "?";
}

const char *diff_status_name(dstatus s) {
    static const char *const n[] = {"visible", "zero", "invisible", "conflict"};
    return n[s];
}

/* A side of a change as the tables show it: the latency, or why there is none. */
void diff_fmt_side(const dgroup *g, char *buf, size_t cap) {
    if (!g) snprintf(buf, cap, "-");
    else if (g->status == DS_VISIBLE) snprintf(buf, cap, "%.3f", g->lat);
    else snprintf(buf, cap, "%s", diff_status_name(g->status));
}
