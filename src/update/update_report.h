/* The write-back report (docs/UPDATE.md §3): Markdown text on
 * stdout, the same text and a full hotspot CSV under <db>/reports/. */
#ifndef OPDB_UPDATE_UPDATE_REPORT_H
#define OPDB_UPDATE_UPDATE_REPORT_H

#include "update/update_db.h"

/* Builds the report text (ends with "\n"). */
void update_report_text(const opdb_update_opts *o, const update_run *run, opdb_strbuf *out);
/* Writes reports/profile_update_report_<ts>.md and duration_gap_hotspots_full_<ts>.csv;
 * returns their paths (malloc'd). */
int update_report_files(const opdb_update_opts *o, const update_run *run, const char *text, char **md_path,
                        char **csv_path, opdb_err *err);
/* Machine-readable summary (JSON, 2-space indent). */
void update_report_json(const opdb_update_opts *o, const update_run *run, const char *md_path,
                        const char *csv_path, opdb_strbuf *out);

#endif
