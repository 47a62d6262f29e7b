/* CSV writer matching Python's csv.writer (excel dialect, QUOTE_MINIMAL,
 * lineterminator \r\n). */
#include <stdint.h>
#include <string.h>
#include "opdb/csv.h"

/* Whether any byte of p[0..n) is , " CR or LF: eight bytes at a time (a
 * byte equal to c makes (w ^ c) have a zero byte, which the classic
 * (v - 0x01..) & ~v & 0x80.. test finds exactly), then byte by byte. */
static bool needs_quotes(const char *p, size_t n) {
    static const unsigned char special[256] = {[','] = 1, ['"'] = 1, ['\r'] = 1, ['\n'] = 1};
    const uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        uint64_t a = w ^ (ones * ','), b = w ^ (ones * '"'), c = w ^ (ones * '\r'), d = w ^ (ones * '\n');
        uint64_t z = ((a - ones) & ~a) | ((b - ones) & ~b) | ((c - ones) & ~c) | ((d - ones) & ~d);
        if (z & highs) return true;
    }
    const unsigned char *u = (const unsigned char *)p;
    for (; i < n; i++)
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
    /* room for every unquoted cell, its comma and the CRLF is reserved; a
     * quoted cell reserves its own and whatever follows */
    for (size_t i = 0; i < ncells; i++) {
        if (i) out->p[out->n++] = ',';
        if (needs_quotes(cells[i].p, cells[i].n)) {
            opdb_csv_write_cell(out, cells[i].p, cells[i].n);
            opdb_sb_reserve(out, total);
        } else if (cells[i].n) {
            memcpy(out->p + out->n, cells[i].p, cells[i].n);
            out->n += cells[i].n;
        }
    }
    out->p[out->n++] = '\r';
    out->p[out->n++] = '\n';
    out->p[out->n] = '\0';
}
