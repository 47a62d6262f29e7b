/* How far ahead `opdb update` asks for memory it will read soon, in one
 * place.  The merge is a pipeline over the aggregated rows: row i is asked
 * for at step i, and each stage at step i + distance reads what the stage
 * before asked for and asks for what the next one reads (a DRAM access takes
 * several rows' worth of work).  The distances change only speed, never
 * output: the simple path (OPDB_UPDATE_EAGER=1) and the differential test
 * hold the bytes equal. */
#ifndef OPDB_UPDATE_PREFETCH_H
#define OPDB_UPDATE_PREFETCH_H

/* merge_list (csv_merge.c): stage distances in rows behind the lead row */
#define MERGE_PF_RING 64      /* per-row state kept for the stages (> MERGE_PF_TO_MERGE) */
#define MERGE_PF_TO_SIG 8     /* the aggregated row -> its signature bytes */
#define MERGE_PF_TO_SLOT 16   /* the signature -> its index slot */
#define MERGE_PF_TO_ENTRY 24  /* the slot -> the index entry */
#define MERGE_PF_TO_ROW 32    /* the entry -> its signature and database row */
#define MERGE_PF_TO_CELL 40   /* the row -> its first cells in the file */
#define MERGE_PF_TO_MERGE 48  /* merge_row itself */

/* write_rows (csv_write.c): a patched row's aggregated row is asked for
 * 2 * WRITE_PF_AHEAD rows ahead, the metric sums it points at WRITE_PF_AHEAD */
#define WRITE_PF_AHEAD 32

/* op_summary aggregation (op_summary.c, op_summary_read.c): groups and keys
 * lie in tables far bigger than the caches; rows ask for them this far ahead */
#define OS_PF_AHEAD 8

#endif
