/* See trace2csv.h. Streams: rows go out in 1 MiB pieces. */
#include "opdb/trace2csv.h"

#include <string.h>

#include "opdb/csv.h"
#include "opdb/error.h"
#include "opdb/fs.h"
#include "opdb/trace_reader.h"
#include "core/call.h"

static const char *const k_cols[] = {"op_name", "kernel_type", "simulation_shapes", "dur_us", "source", "confidence",
                                     "composite", "sub_kernel_durations", "kernel_shapes", "shape_match_rule",
                                     "sub_kernel_shapes"};
#define NCOLS (sizeof k_cols / sizeof k_cols[0])

typedef struct sink {
    opdb_atomic_file *file; /* or NULL: out */
    FILE *out;
    opdb_strbuf *buf;
    unsigned long long rows;
} sink;

static void flush(sink *s) {
    if (s->file) {
        opdb_atomic_flush(s->file);
    } else if (s->buf->n) {
        fwrite(s->buf->p, 1, s->buf->n, s->out);
        opdb_sb_clear(s->buf);
    }
}

static int on_event(const opdb_trace_event *ev, void *ctx) {
    sink *s = ctx;
    const opdb_trace_field *ph = opdb_trace_get(ev, "ph");
    if (!ph || ph->kind != OPDB_J_STRING || strcmp(ph->text, "X") != 0) return 0;
    opdb_span cells[NCOLS];
    const opdb_trace_field *name = opdb_trace_get(ev, "name"), *dur = opdb_trace_get(ev, "dur");
    cells[0] = opdb_span_cstr(name ? name->text : "");
    cells[3] = opdb_span_cstr(dur ? dur->text : "0");
    for (size_t c = 0; c < NCOLS; c++) {
        if (c == 0 || c == 3) continue;
        const opdb_trace_field *a = opdb_trace_arg(ev, k_cols[c]);
        cells[c] = opdb_span_cstr(a ? a->text : "");
    }
    opdb_csv_write_record(s->buf, cells, NCOLS);
    s->rows++;
    if (s->buf->n > (1u << 20)) flush(s);
    return 0;
}

static int trace2csv_run(const char *trace_path, const char *output_path, FILE *out, unsigned long long *rows,
                         opdb_err *err) {
    opdb_atomic_file af;
    opdb_strbuf local;
    opdb_sb_init(&local);
    sink s = {NULL, out, &local, 0};
    if (output_path) {
        if (opdb_atomic_open(&af, output_path, err)) return -1;
        s.file = &af;
        s.buf = &af.buf;
    }
    opdb_span hdr[NCOLS];
    for (size_t c = 0; c < NCOLS; c++) hdr[c] = opdb_span_cstr(k_cols[c]);
    opdb_csv_write_record(s.buf, hdr, NCOLS);
    int rc = opdb_trace_read(trace_path, on_event, &s, err);
    if (output_path) {
        if (rc == 0) rc = opdb_atomic_commit(&af, err);
        else opdb_atomic_abort(&af);
    } else {
        if (rc == 0) flush(&s);
    }
    opdb_sb_free(&local);
    *rows = s.rows;
    if (rc == 0 && !s.rows) opdb_warn_nothing("%s: no complete (ph \"X\") event: the CSV has its header only", trace_path);
    return rc;
}

static void trace2csv_defaults(opdb_trace2csv_opts *o) {
    memset(o, 0, sizeof *o);
    o->size = sizeof *o;
}

OPDB_OPTS_INIT_SIZED(opdb_trace2csv_opts, trace2csv_defaults)

int opdb_trace2csv_run(const opdb_trace2csv_opts *o, unsigned long long *rows, opdb_err *err) {
    if (opdb_opts_check(o, o ? o->size : 0, sizeof *o, "opdb_trace2csv_opts", err)) return -1;
    opdb_call_scope saved = opdb_call_enter(&o->log);
    OPDB_CALL_GUARD(saved, err);
    opdb_call_set_modes(&o->modes);
    int rc = trace2csv_run(o->trace_path, o->output_path, o->out, rows, err);
    opdb_call_leave(&saved);
    return rc;
}
