/* Opening CSV files (BOM handling), mapping byte offsets to line numbers,
 * and telling a file cut mid-row. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <string.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include "opdb/csv.h"

int opdb_csv_open(const char *path, uint64_t *body_off, opdb_err *err) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return opdb_fail(err, OPDB_ERR_RUNTIME, "%s: cannot open: %s", path, strerror(errno));
    unsigned char bom[3];
    ssize_t k = pread(fd, bom, 3, 0);
    if (k < 0) {
        int e = errno;
        close(fd);
        return opdb_fail(err, OPDB_ERR_RUNTIME, "%s: cannot read: %s", path, strerror(e));
    }
    *body_off = (k == 3 && bom[0] == 0xef && bom[1] == 0xbb && bom[2] == 0xbf) ? 3 : 0;
    return fd;
}

uint64_t opdb_csv_line_of_offset(int fd, uint64_t off) {
    char buf[1 << 16];
    uint64_t line = 1, pos = 0;
    bool prev_cr = false;
    while (pos < off) {
        size_t want = off - pos < sizeof buf ? (size_t)(off - pos) : sizeof buf;
        ssize_t k = pread(fd, buf, want, (off_t)pos);
        if (k <= 0) break;
        for (ssize_t i = 0; i < k; i++) {
            /* A line ends at \n, or at a \r not followed by \n. */
            if (buf[i] == '\n') line++;
            else if (prev_cr) line++;
            prev_cr = buf[i] == '\r';
        }
        pos += (uint64_t)k;
    }
    return line;
}

int opdb_csv_file_open(opdb_csv_file *c, const char *path, int maxf, opdb_err *err) {
    memset(c, 0, sizeof *c);
    uint64_t body;
    c->fd = opdb_csv_open(path, &body, err);
    if (c->fd < 0) return -1;
    c->maxf = maxf > 0 ? maxf : 1;
    c->f = opdb_xmalloc((size_t)c->maxf * sizeof *c->f);
    opdb_byte_reader_init(&c->br, c->fd, body, 1 << 18);
    opdb_csv_exact_init(&c->x, &c->br, 1);
    return 0;
}

int opdb_csv_file_next(opdb_csv_file *c, bool keep_blank) {
    return opdb_csv_exact_next(&c->x, c->f, c->maxf, &c->nf, keep_blank);
}

uint64_t opdb_csv_file_offset(const opdb_csv_file *c) { return c->br.file_off + c->br.pos; }

void opdb_csv_file_close(opdb_csv_file *c) {
    if (c->fd < 0 && !c->f) return;
    free(c->f);
    c->f = NULL;
    opdb_csv_exact_free(&c->x);
    opdb_byte_reader_free(&c->br);
    if (c->fd >= 0) close(c->fd);
    c->fd = -1;
}

int opdb_csv_col(const opdb_field *hdr, int n, const char *name) {
    size_t k = strlen(name);
    int at = -1;
    for (int i = 0; i < n; i++)
        if (hdr[i].n == k && memcmp(hdr[i].p, name, k) == 0) at = i;
    return at;
}

#define TAIL_MAX (1u << 16)

int opdb_csv_cut_tail(int fd, uint64_t body_off, int header_nf, uint64_t *line) {
    struct stat st;
    if (fstat(fd, &st) || (uint64_t)st.st_size <= body_off) return 0;
    uint64_t size = (uint64_t)st.st_size, from = size - body_off > TAIL_MAX ? size - TAIL_MAX : body_off;
    char *b = opdb_xmalloc(TAIL_MAX);
    ssize_t k = pread(fd, b, (size_t)(size - from), (off_t)from);
    int short_nf = 0;
    if (k == (ssize_t)(size - from) && b[k - 1] != '\n' && b[k - 1] != '\r') {
        ssize_t i = k;
        while (i > 0 && b[i - 1] != '\n' && b[i - 1] != '\r') i--;
        int quotes = 0, nf = 1;
        bool in_q = false;
        for (ssize_t j = i; j < k; j++) {
            if (b[j] == '"') quotes++, in_q = !in_q;
            else if (b[j] == ',' && !in_q) nf++;
        }
        if ((i > 0 || from == body_off) && quotes % 2 == 0 && nf < header_nf) {
            short_nf = nf;
            *line = opdb_csv_line_of_offset(fd, from + (uint64_t)i);
        }
    }
    free(b);
    return short_nf;
}
