/* See opdb_parse_result_json in ingest.h. */
#include "opdb/ingest.h"
#include "opdb/json_writer.h"

static void key_int(opdb_json *j, const char *k, unsigned long long v) {
    opdb_json_key(j, k);
    opdb_json_int(j, (long long)v);
}

void opdb_parse_result_json(const opdb_parse_result *r, const char *database, const char *input, opdb_strbuf *out) {
    opdb_json j;
    opdb_json_init(&j, out);
    opdb_json_begin_object(&j);
    opdb_json_key(&j, "command");
    opdb_json_string(&j, "parse");
    opdb_json_key(&j, "input");
    opdb_json_string(&j, input);
    opdb_json_key(&j, "database");
    opdb_json_string(&j, database);
    key_int(&j, "input_files", r->input_files);
    key_int(&j, "inputs_skipped", r->inputs_skipped);
    key_int(&j, "rows_read", r->rows_read);
    key_int(&j, "shape_groups", r->groups);
    key_int(&j, "device_events_unattributed", r->device_unattributed);
    key_int(&j, "files_written", r->files_written);
    opdb_json_key(&j, "tables");
    opdb_json_begin_array(&j);
    for (size_t i = 0; i < r->ntables; i++) {
        const opdb_table_summary *t = &r->tables[i];
        opdb_json_begin_object(&j);
        opdb_json_key(&j, "file");
        opdb_json_string(&j, t->file);
        key_int(&j, "shapes", t->shapes);
        key_int(&j, "launches", t->launches);
        opdb_json_key(&j, "total_us");
        opdb_json_float(&j, t->total_us);
        opdb_json_end_object(&j);
    }
    opdb_json_end_array(&j);
    opdb_json_end_object(&j);
}
