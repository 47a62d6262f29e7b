/* `opdb parse`: discover inputs, stream every file through the batch
 * pipeline (fast tokenizer + row decoding on workers, aggregation in file
 * order here), then write one table per operator type.  Nothing is written
 * unless every input was read successfully. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "csv/batch.h"
#include "core/call.h"
#include "ingest/ascend_db.h"
#include "ingest/detect.h"
#include "ingest/device_mix.h"
#include "ingest/discover.h"
#include "ingest/fia_runtime.h"
#include "ingest/kd_aggregate.h"
#include "ingest/kd_output.h"
#include "ingest/kineto.h"
#include "opdb/csv.h"
#include "opdb/fs.h"
#include "opdb/ingest.h"
#include "opdb/progress.h"

#define MAX_HEADER_CELLS 16384

typedef struct job {
    const opdb_parse_opts *o;
    kd_agg agg;
    fia_index fia;
    opdb_progress pg;
    uint64_t bytes_total, bytes_done;
    unsigned long long rows;
    opdb_strbuf deferred;       /* reference messages printed only on success */

    /* current file */
    const char *file;
    int fd;
    kd_colmap colmap;
    char *source_profile;
    fia_op_rows op_rows;
    size_t fia_seen;            /* FusedInferAttentionScore rows so far in this file */

    /* diagnostics over the whole run */
    unsigned long long bad_durations, bad_metric_rows;
    char *first_bad_file;
    uint64_t first_bad_off;
    uint32_t metrics_missing;   /* union over files */
    size_t files_missing_metrics;
    char *first_file_missing_metrics;
    unsigned long long fia_bad_tokens;
    int header_nf;              /* fields of the current file's header */
    bool folder;                /* the input was a folder: unusable files are skipped (warned) */
    size_t skipped;
    kn_agg kineto;              /* PyTorch profiler traces */
} job;

static char *where_of(job *J, uint64_t off) {
    char *w = opdb_xmalloc(strlen(J->file) + 32);
    if (J->fd < 0) strcpy(w, J->file); /* an SQLite export: no line numbers */
    else sprintf(w, "%s:%llu", J->file, (unsigned long long)opdb_csv_line_of_offset(J->fd, off));
    return w;
}

static int on_fia_row(job *J, const kd_row *r, opdb_err *err) {
    size_t i = J->fia_seen++;
    if (fia_index_has(&J->fia, r->in, r->out)) return 0;
    bool quirks = J->o->reference_quirks;
    /* Without quirks an N/A key gets no metadata: no group can ever look it up. */
    if (!quirks && (kd_is_na_shape(r->in) || kd_is_na_shape(r->out))) return 0;
    opdb_span src = r->in;
    if (i < J->op_rows.n && J->op_rows.in[i][0]) src = opdb_span_cstr(J->op_rows.in[i]);
    bool bad = false;
    opdb_err e;
    opdb_err_clear(&e);
    int rc = fia_index_add(&J->fia, r->in, r->out, src, J->source_profile, !quirks, &bad, &e);
    if (rc) {
        char *where = where_of(J, r->rec_off);
        opdb_fail(err, e.code, "%s: %s", where, e.msg);
        free(where);
    }
    if (bad) J->fia_bad_tokens++;
    return rc;
}

static int take_row(job *J, const kd_row *r, opdb_err *err) {
    J->rows++;
    if ((r->flags & KD_ROW_FIA) && on_fia_row(J, r, err)) return -1;
    if (r->flags & KD_ROW_NA_SHAPES) return 0;
    if (r->flags & KD_ROW_BAD_DURATION) {
        if (J->o->strict) {
            char *where = where_of(J, r->rec_off);
            opdb_fail(err, OPDB_ERR_RUNTIME, "%s: Duration(us) is not a finite, non-negative number: '%.*s'", where,
                      (int)(r->dur_text.n > 60 ? 60 : r->dur_text.n), r->dur_text.p);
            free(where);
            return -1;
        }
        if (J->bad_durations++ == 0) {
            J->first_bad_file = opdb_xstrdup(J->file);
            J->first_bad_off = r->rec_off;
        }
        return 0;
    }
    if (r->flags & KD_ROW_BAD_METRIC) J->bad_metric_rows++;
    kd_agg_add(&J->agg, r, J->colmap.metrics_present);
    return 0;
}

/* ---- batch callbacks */

static void *rows_new(void *ctx) {
    (void)ctx;
    return opdb_xcalloc(1, sizeof(kd_rows));
}

static void rows_free(void *out, void *ctx) {
    (void)ctx;
    kd_rows *rs = out;
    free(rs->v);
    free(rs);
}

static void rows_work(opdb_batch *b, void *ctx) {
    job *J = ctx;
    kd_rows *rs = b->out;
    rs->n = 0;
    opdb_csv_fast t;
    opdb_csv_fast_init(&t, b->data, b->len);
    int maxf = J->colmap.max_col + 1;
    opdb_field f[KD_NROLES > 64 ? KD_NROLES : 64];
    opdb_field *fields = maxf <= (int)(sizeof f / sizeof f[0]) ? f : opdb_xmalloc((size_t)maxf * sizeof *fields);
    int nf, rc;
    size_t off;
    while ((rc = opdb_csv_fast_next(&t, fields, maxf, &nf, &off)) > 0) {
        OPDB_ALLOC_GROW(rs->v, rs->n + 1, rs->cap);
        kd_row *r = &rs->v[rs->n++];
        kd_row_extract(r, &J->colmap, fields, nf, J->o->reference_quirks);
        r->rec_off = b->file_off + off;
        if (!(r->flags & (KD_ROW_NA_SHAPES | KD_ROW_BAD_DURATION))) r->group = kd_agg_probe(&J->agg, r);
    }
    if (rc < 0) b->anomaly = true;
    if (fields != f) free(fields);
}

static int rows_consume(opdb_batch *b, void *ctx, opdb_err *err) {
    job *J = ctx;
    kd_rows *rs = b->out;
    for (size_t i = 0; i < rs->n; i++)
        if (take_row(J, &rs->v[i], err)) return -1;
    J->bytes_done += b->len;
    opdb_progress_update(&J->pg, J->bytes_done, opdb_path_basename(J->file));
    return 0;
}

/* The exact tokenizer from `off` to EOF: used after a fast-path anomaly. */
static int read_exact_from(job *J, uint64_t off, opdb_err *err) {
    opdb_byte_reader br;
    opdb_byte_reader_init(&br, J->fd, off, 1 << 18);
    opdb_csv_exact x;
    opdb_csv_exact_init(&x, &br, 1);
    int maxf = J->colmap.max_col + 1;
    opdb_field *fields = opdb_xmalloc((size_t)(maxf > 0 ? maxf : 1) * sizeof *fields);
    int nf, rc;
    kd_row row;
    while ((rc = opdb_csv_exact_next(&x, fields, maxf, &nf, false)) > 0) {
        if (x.unterminated && !J->o->reference_quirks) {
            opdb_fail(err, OPDB_ERR_RUNTIME, "%s:%llu: unterminated quoted field (the quote never closes before the end of the file)",
                      J->file, (unsigned long long)opdb_csv_line_of_offset(J->fd, x.rec_off));
            rc = -1;
            break;
        }
        kd_row_extract(&row, &J->colmap, fields, nf, J->o->reference_quirks);
        row.rec_off = x.rec_off;
        if (take_row(J, &row, err)) {
            rc = -1;
            break;
        }
    }
    if (rc < 0 && br.err) opdb_fail(err, OPDB_ERR_RUNTIME, "%s: read failed: %s", J->file, strerror(br.err));
    J->bytes_done += (br.file_off + br.len) - off;
    free(fields);
    opdb_csv_exact_free(&x);
    opdb_byte_reader_free(&br);
    return rc < 0 ? -1 : 0;
}

/* Reads the header; returns 1 if the file has one, 0 if it is empty, -1 on error. */
static int read_header(job *J, uint64_t start, uint64_t *body_off, opdb_err *err) {
    opdb_byte_reader br;
    opdb_byte_reader_init(&br, J->fd, start, 1 << 16);
    opdb_csv_exact x;
    opdb_csv_exact_init(&x, &br, 1);
    opdb_field *hdr = opdb_xmalloc(MAX_HEADER_CELLS * sizeof *hdr);
    int nf = 0;
    bool quirks = J->o->reference_quirks;
    /* The reference takes the first record as the header even when blank. */
    int rc = opdb_csv_exact_next(&x, hdr, MAX_HEADER_CELLS, &nf, quirks);
    if (rc < 0) {
        opdb_fail(err, OPDB_ERR_RUNTIME, "%s: read failed: %s", J->file, strerror(br.err));
    } else if (rc == 0 && !quirks) {
        *body_off = start;
    } else {
        if (rc == 0) nf = 0;
        kd_colmap_build(&J->colmap, hdr, nf, !quirks);
        J->header_nf = nf;
        char missing[2048];
        if (kd_colmap_missing(&J->colmap, quirks, missing, sizeof missing)) {
            char hint[512] = "";
            if (!quirks && kd_csv_foreign(J->file, hint, sizeof hint)) { /* not a table of columns at all */
                opdb_fail(err, OPDB_ERR_RUNTIME, "%s: %s", J->file, hint);
            } else {
                if (!quirks) opdb_csv_profile_hint(J->file, hint, sizeof hint);
                opdb_fail(err, OPDB_ERR_RUNTIME, "%s is missing required columns: %s%s%s%s", J->file, missing,
                          hint[0] ? " (" : "", hint, hint[0] ? ")" : "");
            }
            rc = -2;
        } else {
            rc = 1;
            *body_off = br.file_off + br.pos;
        }
    }
    free(hdr);
    opdb_csv_exact_free(&x);
    opdb_byte_reader_free(&br);
    return rc;
}

/* A last row shorter than the header with no final newline: the file was cut
 * while being written (a profiler killed mid-write).  The reference reads the
 * missing cells as empty; opdb refuses it as it refuses an unterminated quote. */
static int check_cut_tail(job *J, uint64_t body, opdb_err *err) {
    uint64_t line = 0;
    int nf = opdb_csv_cut_tail(J->fd, body, J->header_nf, &line);
    if (!nf) return 0;
    return opdb_fail(err, OPDB_ERR_RUNTIME,
                     "%s:%llu: the last row has %d of the header's %d fields and no final newline (the file was cut "
                     "while being written)",
                     J->file, (unsigned long long)line, nf, J->header_nf);
}

static int process_file(job *J, const kd_inputs *in, const char *file, opdb_err *err) {
    J->file = file;
    J->fia_seen = 0;
    char why[256];
    if (!J->o->reference_quirks && opdb_csv_sniff(file, why, sizeof why)) { /* UTF-16/32, binary: one line */
        if (J->folder && !J->o->strict) {
            opdb_warn("%s: %s; skipped (--strict makes this an error)", file, why);
            J->skipped++;
            return 0;
        }
        return opdb_fail(err, OPDB_ERR_RUNTIME, "%s: %s", file, why);
    }
    uint64_t start;
    J->fd = opdb_csv_open(file, &start, err);
    if (J->fd < 0) return -1;
    uint64_t body = 0;
    int rc = read_header(J, start, &body, err);
    if (rc == 0) {
        opdb_warn("%s: empty file (no header), skipped", file);
        close(J->fd);
        return 0;
    }
    if (rc == -2 && J->folder && !J->o->strict) { /* recognised but unusable: warn, parse the rest */
        opdb_warn("%s; skipped (--strict makes this an error)", err->msg);
        opdb_err_clear(err);
        J->skipped++;
        close(J->fd);
        return 0;
    }
    if (rc == 1 && !J->o->reference_quirks) rc = check_cut_tail(J, body, err) ? -1 : 1;
    if (rc < 0) {
        close(J->fd);
        return -1;
    }
    uint32_t all = (1u << OPDB_NMETRICS) - 1;
    if ((J->colmap.metrics_present & all) != all) {
        J->metrics_missing |= all & ~J->colmap.metrics_present;
        if (J->files_missing_metrics++ == 0) J->first_file_missing_metrics = opdb_xstrdup(file);
    }
    J->source_profile = opdb_path_parent_name(file);
    const char *opd = kd_operator_details_for(in, file);
    rc = opd ? fia_load_operator_rows(opd, &J->op_rows, err) : 0;
    if (rc == 0) {
        opdb_batch_ops ops = {rows_new, rows_free, rows_work, rows_consume, J};
        uint64_t resume = 0;
        rc = opdb_batch_run(J->fd, file, body, J->o->threads, 2u << 20, &ops, &resume, err);
        if (rc == 1) rc = read_exact_from(J, resume, err);
    }
    if (rc == 0 && J->op_rows.n && J->fia_seen != J->op_rows.n) {
        char *dir = opdb_path_parent(file);
        if (J->o->reference_quirks)
            opdb_sb_addf(&J->deferred,
                         "Warning: FIA kernel/operator row count mismatch under %s: kernel_rows=%zu, "
                         "operator_rows=%zu. Pairing uses row order for the shared prefix only.\n",
                         dir, J->fia_seen, J->op_rows.n);
        else
            opdb_warn("FIA kernel/operator row count mismatch under %s: kernel_rows=%zu, operator_rows=%zu; "
                      "runtime metadata pairs rows by order for the shared prefix only",
                      dir, J->fia_seen, J->op_rows.n);
        free(dir);
    }
    fia_op_rows_free(&J->op_rows);
    free(J->source_profile);
    J->source_profile = NULL;
    close(J->fd);
    J->fd = -1;
    return rc;
}

/* ---- SQLite exports and PyTorch traces (docs/ingest-formats.md) */

static int db_row(void *ctx, const kd_colmap *L, const opdb_field *f, int nf, opdb_err *err) {
    job *J = ctx;
    kd_row r;
    J->colmap = *L;
    kd_row_extract(&r, L, f, nf, false);
    r.rec_off = UINT64_MAX; /* no line numbers in an SQLite file */
    return take_row(J, &r, err);
}

/* A kernel_details CSV in the same folder holds the same kernels: the export is not read twice. */
static bool csv_beside(const kd_inputs *in, const char *file) {
    char *dir = opdb_path_parent(file);
    bool hit = false;
    for (size_t i = 0; i < in->nfiles && !hit && !in->from_op_summary; i++) {
        char *d = opdb_path_parent(in->files[i]);
        hit = strcmp(d, dir) == 0;
        free(d);
    }
    free(dir);
    return hit;
}

static int process_extra(job *J, const kd_inputs *in, const char *file, opdb_err *err) {
    opdb_input_kind kind;
    if (opdb_input_detect(file, &kind, err)) return -1;
    char why[512] = "";
    int rc;
    J->file = file;
    J->fd = -1;
    if (kind == OPDB_INPUT_SQLITE) {
        if (csv_beside(in, file)) {
            opdb_warn("%s: an Ascend SQLite export beside a kernel_details CSV of the same run; the CSV is used", file);
            return 0;
        }
        J->source_profile = opdb_path_parent_name(file);
        rc = ascend_db_read(file, db_row, J, why, sizeof why, err);
        free(J->source_profile);
        J->source_profile = NULL;
    } else if (kind == OPDB_INPUT_JSON) {
        rc = kn_read(&J->kineto, file, why, sizeof why, err);
    } else {
        return 0; /* a text file named *.json / *.db in a folder: not a candidate */
    }
    if (rc != 1) return rc;
    if (kind == OPDB_INPUT_JSON) kd_csv_foreign(file, why, sizeof why); /* a log's "[1,0]<stdout>:" prefix looks like JSON */
    if (J->folder && !J->o->strict) {
        opdb_warn("%s: %s; skipped (--strict makes this an error)", file, why);
        J->skipped++;
        return 0;
    }
    return opdb_fail(err, OPDB_ERR_RUNTIME, "%s: %s", file, why);
}

/* A folder's CSV that is neither kernel_details nor op_summary: one line (docs/ingest-formats.md §1). */
static int report_unusable(job *J, const char *file, opdb_err *err) {
    char hint[512];
    opdb_csv_profile_hint(file, hint, sizeof hint);
    if (J->o->strict) return opdb_fail(err, OPDB_ERR_RUNTIME, "%s: %s", file, hint);
    opdb_warn("%s: %s; skipped (--strict makes this an error)", file, hint);
    J->skipped++;
    return 0;
}

static void report_kineto(const kn_agg *a) {
    if (a->bad_ops)
        opdb_warn("skipped %llu CPU operator event(s) whose ts is not a finite number or whose dur is negative or "
                  "not a finite number (kernels they launched count as not attributed)", a->bad_ops);
    if (a->bad_durations)
        opdb_warn("skipped %llu GPU device event(s) or call(s) whose duration is negative, not a finite number or too "
                  "large to add up", a->bad_durations);
    if (a->no_launch || a->no_operator)
        opdb_warn("%llu of %llu GPU device event(s) not attributed to an operator: %llu without a launch (runtime "
                  "event of the same correlation id), %llu whose launch no CPU operator encloses",
                  a->no_launch + a->no_operator, a->device_events, a->no_launch, a->no_operator);
    if (a->calls_without_dims)
        opdb_warn("%llu of %llu operator call(s) have no Input Dims (traced without record_shapes=True): "
                  "they are grouped with empty shapes",
                  a->calls_without_dims, a->calls);
}

static void aggregate_tick(void *ctx, size_t done) { opdb_progress_update(ctx, done, NULL); }

static void report_warnings(job *J) {
    if (J->bad_durations) {
        int fd = J->first_bad_off == UINT64_MAX ? -1 : open(J->first_bad_file, O_RDONLY | O_CLOEXEC);
        unsigned long long line = fd >= 0 ? opdb_csv_line_of_offset(fd, J->first_bad_off) : 0;
        if (fd >= 0) close(fd);
        if (J->first_bad_off == UINT64_MAX) /* an SQLite export: no line numbers */
            opdb_warn("skipped %llu row(s) whose Duration(us) is not a finite, non-negative number (NULL, negative or "
                      "overflowing times; first in %s); use --strict to make this an error",
                      J->bad_durations, J->first_bad_file);
        else
            opdb_warn("skipped %llu row(s) whose Duration(us) is not a finite, non-negative number (first at %s:%llu); "
                      "use --strict to make this an error",
                      J->bad_durations, J->first_bad_file, line);
    }
    if (J->bad_metric_rows)
        opdb_warn("%llu row(s) with a non-finite or negative metric: those cells counted as 0", J->bad_metric_rows);
    if (J->files_missing_metrics) {
        opdb_strbuf names;
        opdb_sb_init(&names);
        bool all = J->metrics_missing == (1u << OPDB_NMETRICS) - 1;
        if (all) opdb_sb_adds(&names, "all 25 metrics");
        for (int m = 0; m < OPDB_NMETRICS && !all; m++)
            if (J->metrics_missing & (1u << m)) opdb_sb_addf(&names, "%s%s", names.n ? ", " : "", opdb_metric_names[m]);
        opdb_warn("%zu file(s) lack metric columns (first: %s): %s; their Profiling Average cells stay empty "
                  "for rows from those files",
                  J->files_missing_metrics, J->first_file_missing_metrics, names.p);
        opdb_sb_free(&names);
    }
    if (J->fia_bad_tokens)
        opdb_warn("%llu FusedInferAttentionScore row(s) have non-integer input dimensions; those slots were left empty",
                  J->fia_bad_tokens);
}

/* Whether the run writes tables: groups with a type (Ascend), calls (PyTorch traces). */
static bool writes_ascend(const kd_agg *a) {
    for (size_t i = 0; i < a->n; i++)
        if (a->g[i].key->type.n) return true;
    return false;
}

static bool writes_gpu(const kn_agg *a) {
    for (size_t i = 0; i < a->n; i++)
        if (a->g[i].count > 0) return true;
    return false;
}

static int parse_run(const opdb_parse_opts *o, opdb_parse_result *res, opdb_err *err) {
    memset(res, 0, sizeof *res);
    kd_inputs in;
    if (kd_discover(o->profiling_path, o->reference_quirks, &in, err)) return -1;
    job J;
    memset(&J, 0, sizeof J);
    J.o = o;
    J.fd = -1;
    J.folder = !in.single;
    kn_agg_init(&J.kineto);
    J.kineto.read_simple = o->kineto_simple;
    if (o->kineto_sort_bytes) J.kineto.sort_budget = o->kineto_sort_bytes;
    kd_agg_init(&J.agg);
    fia_index_init(&J.fia);
    opdb_sb_init(&J.deferred);
    opdb_progress_init(&J.pg, o->no_progress);
    for (size_t i = 0; i < in.nfiles; i++) {
        struct stat st;
        if (stat(in.files[i], &st) == 0) J.bytes_total += (uint64_t)st.st_size;
    }
    opdb_progress_stage_bytes(&J.pg, "Load", J.bytes_total);
    int rc = 0;
    for (size_t i = 0; i < in.nunusable && rc == 0; i++) rc = report_unusable(&J, in.unusable[i], err);
    for (size_t i = 0; i < in.nfiles && rc == 0; i++) rc = process_file(&J, &in, in.files[i], err);
    for (size_t i = 0; i < in.nextra && rc == 0; i++) rc = process_extra(&J, &in, in.extra[i], err);
    opdb_progress_clear(&J.pg);
    if (rc == 0) {
        opdb_progress_stage(&J.pg, "Aggregate", J.agg.n);
        kd_agg_finish(&J.agg, aggregate_tick, &J.pg);
        opdb_progress_clear(&J.pg);
    }
    if (rc == 0) rc = opdb_mkdirs(o->output_dir, err);
    int lock = rc == 0 ? opdb_dir_lock(o->output_dir, err) : -1;
    if (lock < 0) rc = -1;
    if (rc == 0) {
        if (!o->reference_quirks) /* only groups that become tables count (an empty type is dropped) */
            rc = device_mix_check(o->output_dir, writes_ascend(&J.agg), writes_gpu(&J.kineto), o->strict, err);
    }
    if (rc == 0) {
        if (J.deferred.n && o->reference_stdout) fputs(J.deferred.p, o->reference_stdout);
        report_warnings(&J);
        report_kineto(&J.kineto);
        opdb_txn_begin(o->output_dir); /* all tables or none */
        /* the reference overwrites whatever was there */
        tbl_writer w = {.merge = o->merge, .replace = o->replace || o->reference_quirks};
        opdb_sb_init(&w.losses);
        rc = kd_write_tables(&J.agg, &J.fia, o->output_dir, o->reference_quirks, &w, &J.pg, res, err);
        if (rc == 0 && J.kineto.n) rc = kn_write_tables(&J.kineto, o->output_dir, &w, res, err);
        if (rc == 0) rc = tbl_writer_check(&w, o->output_dir, err);
        if (opdb_txn_end(rc == 0, err)) rc = -1;
        if (rc) w.replaced = 0; /* rolled back */
        tbl_writer_finish(&w, o->output_dir);
        opdb_progress_clear(&J.pg);
    }
    opdb_dir_unlock(lock);
    res->rows_read = J.rows;
    res->groups = J.agg.n;
    for (size_t i = 0; i < J.kineto.n; i++) res->groups += J.kineto.g[i].count > 0;
    res->device_unattributed = J.kineto.no_launch + J.kineto.no_operator;
    res->inputs_skipped = J.skipped;
    res->input_files = in.nfiles + in.nextra;
    kn_agg_free(&J.kineto);
    free(J.first_bad_file);
    free(J.first_file_missing_metrics);
    opdb_sb_free(&J.deferred);
    fia_index_free(&J.fia);
    kd_agg_free(&J.agg);
    kd_inputs_free(&in);
    return rc;
}

void opdb_parse_result_free(opdb_parse_result *res) {
    for (size_t i = 0; i < res->ntables; i++) free(res->tables[i].file);
    free(res->tables);
    res->tables = NULL;
    res->ntables = 0;
}

static void parse_defaults(opdb_parse_opts *o) {
    memset(o, 0, sizeof *o);
    o->size = sizeof *o;
}

OPDB_OPTS_INIT_SIZED(opdb_parse_opts, parse_defaults)

int opdb_parse_run(const opdb_parse_opts *o, opdb_parse_result *res, opdb_err *err) {
    if (opdb_opts_check(o, o ? o->size : 0, sizeof *o, "opdb_parse_opts", err)) return -1;
    opdb_call_scope saved = opdb_call_enter(&o->log);
    OPDB_CALL_GUARD(saved, err);
    opdb_call_set_modes(&o->modes);
    int rc = parse_run(o, res, err);
    opdb_call_leave(&saved);
    return rc;
}
