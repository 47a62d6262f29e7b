/* Exact tokenizer: a port of CPython's Modules/_csv.c reader state machine
 * (excel dialect, strict=False) fed by lines split like io's newline=''
 * (\n, \r\n or a lone \r end a line).  Slow but authoritative. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "opdb/csv.h"

enum state { START_RECORD, START_FIELD, IN_FIELD, IN_QUOTED_FIELD, QUOTE_IN_QUOTED_FIELD, EAT_CRNL };
#define EOL (-2)
#define END (-1)

static bool refill(opdb_byte_reader *r) {
    if (r->eof || r->err) return false;
    r->file_off += r->len;
    r->pos = r->len = 0;
    for (;;) {
        ssize_t k = pread(r->fd, r->buf, r->cap, (off_t)r->file_off);
        if (k < 0) {
            if (errno == EINTR) continue;
            r->err = errno;
            return false;
        }
        if (k == 0) {
            r->eof = true;
            return false;
        }
        r->len = (size_t)k;
        return true;
    }
}

static inline int getb(opdb_byte_reader *r) {
    if (r->pos >= r->len && !refill(r)) return END;
    return (unsigned char)r->buf[r->pos++];
}

static inline int peekb(opdb_byte_reader *r) {
    if (r->pos >= r->len && !refill(r)) return END;
    return (unsigned char)r->buf[r->pos];
}

void opdb_byte_reader_init(opdb_byte_reader *r, int fd, uint64_t start_off, size_t cap) {
    memset(r, 0, sizeof *r);
    r->fd = fd;
    r->cap = cap ? cap : 1 << 16;
    r->buf = opdb_xmalloc(r->cap);
    r->file_off = start_off;
}

void opdb_byte_reader_free(opdb_byte_reader *r) {
    free(r->buf);
    r->buf = NULL;
}

void opdb_csv_exact_init(opdb_csv_exact *x, opdb_byte_reader *in, uint64_t first_line) {
    memset(x, 0, sizeof *x);
    x->in = in;
    opdb_sb_init(&x->cell);
    x->line = first_line ? first_line : 1;
}

void opdb_csv_exact_free(opdb_csv_exact *x) {
    opdb_sb_free(&x->cell);
    free(x->ends);
    x->ends = NULL;
}

static void save_field(opdb_csv_exact *x) {
    OPDB_ALLOC_GROW(x->ends, x->nends + 1, x->cap);
    x->ends[x->nends++] = (uint32_t)x->cell.n;
}

typedef struct {
    opdb_csv_exact *x;
    enum state st;
    size_t field_len;
} machine;

/* The hot path of this tokenizer: one byte per call, so the common case
 * (room left) stays inline. */
static inline void add_char(machine *m, int c) {
    opdb_strbuf *cell = &m->x->cell;
    if (cell->n + 2 > cell->cap) opdb_sb_reserve(cell, 1);
    cell->p[cell->n++] = (char)c;
    cell->p[cell->n] = '\0';
    m->field_len++;
}

static void end_field(machine *m) {
    save_field(m->x);
    m->field_len = 0;
}

static void process(machine *m, int c) {
    switch (m->st) {
    case START_RECORD:
        if (c == EOL) break;
        if (c == '\n' || c == '\r') {
            m->st = EAT_CRNL;
            break;
        }
        m->st = START_FIELD;
        /* fall through */
    case START_FIELD:
        if (c == '\n' || c == '\r' || c == EOL) {
            end_field(m);
            m->st = c == EOL ? START_RECORD : EAT_CRNL;
        } else if (c == '"') {
            m->st = IN_QUOTED_FIELD;
            m->x->open_quote_line = m->x->line;
        } else if (c == ',') {
            end_field(m);
        } else {
            add_char(m, c);
            m->st = IN_FIELD;
        }
        break;
    case IN_FIELD:
        if (c == '\n' || c == '\r' || c == EOL) {
            end_field(m);
            m->st = c == EOL ? START_RECORD : EAT_CRNL;
        } else if (c == ',') {
            end_field(m);
            m->st = START_FIELD;
        } else {
            add_char(m, c);
        }
        break;
    case IN_QUOTED_FIELD:
        if (c == EOL) {
        } else if (c == '"') {
            m->st = QUOTE_IN_QUOTED_FIELD;
        } else {
            add_char(m, c);
        }
        break;
    case QUOTE_IN_QUOTED_FIELD:
        if (c == '"') {
            add_char(m, c);
            m->st = IN_QUOTED_FIELD;
        } else if (c == ',') {
            end_field(m);
            m->st = START_FIELD;
        } else if (c == '\n' || c == '\r' || c == EOL) {
            end_field(m);
            m->st = c == EOL ? START_RECORD : EAT_CRNL;
        } else {
            add_char(m, c);
            m->st = IN_FIELD;
        }
        break;
    case EAT_CRNL:
        if (c == EOL) m->st = START_RECORD;
        break;
    }
}

static int finish(opdb_csv_exact *x, opdb_field *fields, int max_fields, int *nfields) {
    int n = x->nends < max_fields ? x->nends : max_fields;
    uint32_t start = 0;
    for (int i = 0; i < x->nends; i++) {
        if (i < n) {
            fields[i].p = x->cell.p + start;
            fields[i].n = x->ends[i] - start;
        }
        start = x->ends[i];
    }
    *nfields = n;
    return 1;
}

int opdb_csv_exact_next(opdb_csv_exact *x, opdb_field *fields, int max_fields, int *nfields,
                        bool keep_blank) {
    opdb_byte_reader *r = x->in;
    machine m = {x, START_RECORD, 0};
    for (;;) {
        opdb_sb_clear(&x->cell);
        if (!x->cell.p) opdb_sb_reserve(&x->cell, 64);
        x->nends = 0;
        x->unterminated = false;
        m.st = START_RECORD;
        m.field_len = 0;
        x->rec_line = x->line;
        x->rec_off = r->file_off + r->pos;
        bool line_open = false;
        for (;;) {
            int c = getb(r);
            if (c == END) {
                if (r->err) return -1;
                if (line_open) {
                    process(&m, EOL);
                    line_open = false;
                    if (m.st == START_RECORD) break;
                }
                if (m.field_len != 0 || m.st == IN_QUOTED_FIELD) {
                    x->unterminated = m.st == IN_QUOTED_FIELD;
                    end_field(&m);
                    return finish(x, fields, max_fields, nfields);
                }
                return 0;
            }
            line_open = true;
            process(&m, c);
            if (c == '\n' || (c == '\r' && peekb(r) != '\n')) {
                if (r->err) return -1;
                process(&m, EOL);
                x->line++;
                line_open = false;
                if (m.st == START_RECORD) break;
            }
        }
        if (x->nends > 0 || keep_blank) return finish(x, fields, max_fields, nfields);
    }
}

int opdb_csv_exact_ncells(const opdb_csv_exact *x) { return x->nends; }
