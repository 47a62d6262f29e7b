/* Finding a table's records a block of 64 bytes at a time (table.c's fast
 * path). Each block becomes bit masks of quotes, commas and line ends; a
 * prefix-XOR of the quote mask marks the quoted runs, so records and their
 * field counts are found without a per-byte state machine. The scan only
 * handles input whose records mean the same under the table loader's exact
 * rules: every opening quote starts a cell (or follows a closing quote: a
 * `""` escape), every closing quote ends one, no line break inside quotes,
 * no record longer than the header. Anything else is left to the exact scan
 * (table.c), which also words the errors. */
#ifndef OPDB_DB_TABLE_SCAN_H
#define OPDB_DB_TABLE_SCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The records found: start offset and 1-based first line of each. */
typedef struct db_recs {
    size_t *rec;
    uint32_t *line;
    size_t n, cap;
} db_recs;

/* Scans p[from..n) (from: a record's start; line: its line) for records of
 * at most ncols fields, appending them to *out. 1: done; 0: the exact rules
 * are needed (*out then holds an unspecified prefix). *ascii: every byte of
 * p[from..n) is below 0x80 (set on 1 only). */
int db_scan_records(const char *p, size_t n, size_t from, uint32_t line, size_t ncols, bool portable, db_recs *out,
                    bool *ascii);

/* Where each cell of the nrows records at rec starts, for records
 * db_scan_records found in p[0..n): per record ncols offsets from its start
 * (at, nrows x ncols), DB_SCAN_AT_ABSENT past a short record's last cell,
 * DB_SCAN_AT_FAR for a cell too far into its record. */
#define DB_SCAN_AT_ABSENT 0xfffe
#define DB_SCAN_AT_FAR 0xffff
/* Record starts as a table keeps them: 32-bit offsets (r32) in a file under
 * 4 GiB, else r64. */
typedef struct db_rec_starts {
    const uint32_t *r32;
    const size_t *r64;
} db_rec_starts;
static inline size_t db_rec_start(db_rec_starts v, size_t r) { return v.r32 ? v.r32[r] : v.r64[r]; }
void db_scan_cells(const char *p, size_t n, db_rec_starts rec, size_t nrows, size_t ncols, bool portable,
                   uint16_t *at);

/* The masks of one 64-byte block, per bit: '"', ',', '\n', '\r'; and
 * whether any byte is 0x80 or above. */
typedef struct db_block_masks {
    uint64_t quote, comma, lf, cr;
    bool high;
} db_block_masks;

/* Tests: the vector forms against the portable one. db_block_masks_vec:
 * SSE2 (the portable form where there is none), or with avx2 AVX2 where the
 * CPU has it. */
db_block_masks db_block_masks_portable(const char *p);
db_block_masks db_block_masks_vec(const char *p, bool avx2);

#endif
