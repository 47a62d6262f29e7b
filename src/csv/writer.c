/* CSV writer matching Python's csv.writer (excel dialect, QUOTE_MINIMAL,
 * lineterminator \r\n). */
#include <string.h>
#include "opdb/csv.h"

static bool needs_quotes(const char *p, size_t n) {
    for (size_t i = 0; i < n; i++) {
        char c = p[i];
        if (c == ',' || c == '"' || c == '\r' || c == '\n') return true;
    }
    return false;
}

void opdb_csv_write_cell(opdb_strbuf *out, const char *p, size_t n) {
    if (!needs_quotes(p, n)) {
        opdb_sb_add(out, p, n);
        return;
    }
    opdb_sb_reserve(out, n + 2 + n / 4);
    opdb_sb_addc(out, '"');
    size_t s = 0;
    for (size_t i = 0; i < n; i++) {
        if (p[i] == '"') {
            opdb_sb_add(out, p + s, i - s + 1);
            opdb_sb_addc(out, '"');
            s = i + 1;
        }
    }
    opdb_sb_add(out, p + s, n - s);
    opdb_sb_addc(out, '"');
}

void opdb_csv_write_record(opdb_strbuf *out, const opdb_span *cells, size_t ncells) {
    if (ncells == 1 && cells[0].n == 0) {
        opdb_sb_add(out, "\"\"\r\n", 4);
        return;
    }
    for (size_t i = 0; i < ncells; i++) {
        if (i) opdb_sb_addc(out, ',');
        opdb_csv_write_cell(out, cells[i].p, cells[i].n);
    }
    opdb_sb_add(out, "\r\n", 2);
}
