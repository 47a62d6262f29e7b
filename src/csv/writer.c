/* CSV writer matching Python's csv.writer (excel dialect, QUOTE_MINIMAL,
 * lineterminator \r\n). */
#include <string.h>
#include "opdb/csv.h"

static bool needs_quotes(const char *p, size_t n) {
    /* one table lookup per byte: , " \r \n */
    static const unsigned char special[256] = {[','] = 1, ['"'] = 1, ['\r'] = 1, ['\n'] = 1};
    const unsigned char *u = (const unsigned char *)p;
    for (size_t i = 0; i < n; i++)
        if (special[u[i]]) return true;
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
    size_t total = ncells + 2;
    for (size_t i = 0; i < ncells; i++) total += cells[i].n;
    opdb_sb_reserve(out, total);
    for (size_t i = 0; i < ncells; i++) {
        if (i) {
            opdb_sb_reserve(out, 1); /* a quoted cell may have used the room */
            out->p[out->n++] = ',';
        }
        if (needs_quotes(cells[i].p, cells[i].n)) {
            opdb_csv_write_cell(out, cells[i].p, cells[i].n);
        } else if (cells[i].n) {
            opdb_sb_reserve(out, cells[i].n + 2);
            memcpy(out->p + out->n, cells[i].p, cells[i].n);
            out->n += cells[i].n;
        }
    }
    opdb_sb_reserve(out, 2);
    out->p[out->n++] = '\r';
    out->p[out->n++] = '\n';
    out->p[out->n] = '\0';
}
