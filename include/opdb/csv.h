/* CSV reading and writing with Python csv-module semantics (excel dialect:
 * `,` delimiter, `"` quoting, `""` escape, \n, \r and \r\n record ends,
 * blank lines skipped) and an RFC-4180 writer (CRLF, minimal quoting). */
#ifndef OPDB_CSV_H
#define OPDB_CSV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "opdb/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One decoded cell: quotes removed, `""` collapsed. Points into a buffer
 * owned by the tokenizer (valid until the next call / batch reuse). */
typedef struct opdb_field {
    char *p;
    uint32_t n;
} opdb_field;

/* ---- Fast tokenizer: scans 64 bytes per step over a complete, record-aligned
 * buffer and decodes quoted cells in place.  It reports an "anomaly" when it
 * meets input whose meaning depends on the slow rules (a quote that does not
 * open or close a cell, an unterminated quote); callers then re-read the same
 * bytes with the exact tokenizer, so results never differ. */
typedef struct opdb_csv_fast {
    char *buf;
    size_t len;
    size_t blk;          /* offset of the next block to load */
    size_t cur;          /* offset of the block whose bits are pending */
    uint64_t bits;       /* pending structural bits of block `cur` */
    uint64_t eol;        /* the record ends among them */
    uint64_t inq;        /* all-ones when the previous block ended inside quotes */
    uint64_t prev_dq;    /* 1 if the previous byte is a delimiter or quote */
    int pending_close;   /* a closing quote ended the previous block */
    size_t field_start;
    bool anomaly;
    bool avx2;           /* the CPU has AVX2 and PCLMUL: 32-byte compares (tests clear it after
                            opdb_csv_fast_init to compare the portable block scan) */
} opdb_csv_fast;

OPDB_API void opdb_csv_fast_init(opdb_csv_fast *t, char *buf, size_t len);
/* 1: a record in fields[0..*nfields) (cells beyond max_fields are dropped),
 * *rec_off = offset of its first byte; 0: end of buffer; -1: anomaly. */
OPDB_API int opdb_csv_fast_next(opdb_csv_fast *t, opdb_field *fields, int max_fields,
                       int *nfields, size_t *rec_off);
/* Like opdb_csv_fast_next, but the buffer is left as it is: fields[] gets the
 * first `keep` (>= 1) cells as written (a quoted cell keeps its quotes), the
 * rest of the record is skipped a block at a time and only counted.
 * *nfields is the record's whole cell count; *quote_after tells whether a
 * '"' appears after the kept cells.  Anomalies as opdb_csv_fast_next. */
OPDB_API int opdb_csv_fast_skim(opdb_csv_fast *t, opdb_field *fields, int keep, int *nfields,
                       size_t *rec_off, bool *quote_after);
/* A cell as written -> its value: outer quotes dropped, `""` -> `"`,
 * written to out (room for raw.n bytes); returns the length. */
OPDB_API size_t opdb_csv_unquote(const char *raw, size_t n, char *out);
/* A canonical quoted cell's value where it lies inside the cell as written,
 * so no byte has to move: "x" -> x, and """x""" -> "x" (the form profilers
 * quote shapes in), x without quotes.  False for any other cell. */
OPDB_API bool opdb_csv_quoted_view(const char *raw, size_t n, const char **value, size_t *len);

/* ---- Buffered byte source over a file descriptor. */
typedef struct opdb_byte_reader {
    int fd;
    char *buf;
    size_t cap, pos, len;
    uint64_t file_off;   /* file offset of buf[0] */
    bool eof;
    int err;             /* errno of a failed read, else 0 */
} opdb_byte_reader;

OPDB_API void opdb_byte_reader_init(opdb_byte_reader *r, int fd, uint64_t start_off, size_t cap);
OPDB_API void opdb_byte_reader_free(opdb_byte_reader *r);

/* ---- Exact tokenizer: a byte-at-a-time port of the Python csv state machine.
 * Used for headers, small side files, and wherever the fast path gives up. */
typedef struct opdb_csv_exact {
    opdb_byte_reader *in;
    opdb_strbuf cell;     /* decoded bytes of the current record */
    uint32_t *ends;       /* end offset of each cell in `cell` */
    int nends, cap;
    uint64_t line;        /* 1-based line number of the next byte */
    uint64_t rec_line;    /* line where the last returned record started */
    uint64_t rec_off;     /* file offset where the last returned record started */
    bool unterminated;    /* the last record hit EOF inside a quoted cell */
    uint64_t open_quote_line; /* line of the quote that was never closed */
} opdb_csv_exact;

OPDB_API void opdb_csv_exact_init(opdb_csv_exact *x, opdb_byte_reader *in, uint64_t first_line);
OPDB_API void opdb_csv_exact_free(opdb_csv_exact *x);
/* 1: a record (blank lines are skipped); 0: EOF; -1: read error (errno in in->err).
 * With keep_blank, a blank line is returned as a record of 0 cells. */
OPDB_API int opdb_csv_exact_next(opdb_csv_exact *x, opdb_field *fields, int max_fields,
                        int *nfields, bool keep_blank);
/* Number of cells the last record really had (may exceed max_fields). */
OPDB_API int opdb_csv_exact_ncells(const opdb_csv_exact *x);

/* ---- A whole CSV file read record by record with the exact tokenizer. */
typedef struct opdb_csv_file {
    int fd;
    opdb_byte_reader br;
    opdb_csv_exact x;
    opdb_field *f;      /* cells of the last record */
    int nf, maxf;
} opdb_csv_file;

/* Opens path (a UTF-8 BOM is skipped) for records of up to maxf cells. */
OPDB_API int opdb_csv_file_open(opdb_csv_file *c, const char *path, int maxf, opdb_err *err);
/* Next record into c->f / c->nf: 1, 0 at EOF, -1 on a read error. */
OPDB_API int opdb_csv_file_next(opdb_csv_file *c, bool keep_blank);
/* File offset just past the last record read. */
OPDB_API uint64_t opdb_csv_file_offset(const opdb_csv_file *c);
OPDB_API void opdb_csv_file_close(opdb_csv_file *c);
/* Index of the last cell of hdr equal to name (DictReader: last wins), or -1. */
OPDB_API int opdb_csv_col(const opdb_field *hdr, int n, const char *name);
/* The cell at index i of a record, "" when the record is shorter. */
static inline opdb_span opdb_csv_cell(const opdb_field *f, int nf, int i) {
    return i >= 0 && i < nf ? opdb_span_make(f[i].p, f[i].n) : opdb_span_make("", 0);
}

/* ---- Whole-file helpers. */
/* Opens `path`, skips a UTF-8 BOM; returns fd or -1 (err set). *body_off is
 * the offset after the BOM. */
OPDB_API int opdb_csv_open(const char *path, uint64_t *body_off, opdb_err *err);
/* Line number (1-based) of byte offset `off` in the file (counts '\n'). */
OPDB_API uint64_t opdb_csv_line_of_offset(int fd, uint64_t off);
/* A file cut while being written: its last record (after body_off) has no
 * final newline and fewer than header_nf fields.  Returns that record's field
 * count with *line set to its line, or 0 when the end looks whole (or cannot
 * be judged: a quote left open, which the tokenizer reports, or a last line
 * over 64 KiB). */
OPDB_API int opdb_csv_cut_tail(int fd, uint64_t body_off, int header_nf, uint64_t *line);

/* ---- Writer: delimiter `,`, CRLF, quote iff the cell has , " \r or \n;
 * a record of exactly one empty cell is written as "". */
OPDB_API void opdb_csv_write_cell(opdb_strbuf *out, const char *p, size_t n);
OPDB_API void opdb_csv_write_record(opdb_strbuf *out, const opdb_span *cells, size_t ncells);

/* Why the start of the file at path cannot be a UTF-8 CSV table, as one short
 * phrase written into why (binary data, UTF-16, gzip, a header that is not
 * UTF-8 text), or NULL when it can (an empty file, an unreadable one or a
 * pipe: the reader decides).  Reads at most 4 KiB of a regular file. */
OPDB_API const char *opdb_csv_sniff(const char *path, char *why, size_t cap);

#ifdef __cplusplus
}
#endif
#endif
