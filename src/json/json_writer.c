/* See json_writer.h. */
#include "opdb/json_writer.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include "opdb/pystr.h"

void opdb_json_init(opdb_json *j, opdb_strbuf *out) {
    memset(j, 0, sizeof *j);
    j->out = out;
}

static void indent(opdb_json *j, int depth) {
    opdb_sb_addc(j->out, '\n');
    for (int i = 0; i < depth; i++) opdb_sb_add(j->out, "  ", 2);
}

/* Separator and indentation before an item (a value in an array, or a key). */
static void before_value(opdb_json *j) {
    if (j->after_key) {
        j->after_key = false;
        return;
    }
    if (j->depth == 0) return;
    if (!j->empty[j->depth]) opdb_sb_addc(j->out, ',');
    j->empty[j->depth] = false;
    indent(j, j->depth);
}

static void begin(opdb_json *j, char c) {
    before_value(j);
    opdb_sb_addc(j->out, c);
    if (j->depth + 1 < OPDB_JSON_MAX_DEPTH) j->depth++;
    j->empty[j->depth] = true;
}

static void end(opdb_json *j, char c) {
    if (!j->empty[j->depth]) indent(j, j->depth - 1);
    opdb_sb_addc(j->out, c);
    if (j->depth > 0) j->depth--;
}

void opdb_json_begin_object(opdb_json *j) { begin(j, '{'); }
void opdb_json_end_object(opdb_json *j) { end(j, '}'); }
void opdb_json_begin_array(opdb_json *j) { begin(j, '['); }
void opdb_json_end_array(opdb_json *j) { end(j, ']'); }

void opdb_json_key(opdb_json *j, const char *key) {
    before_value(j);
    if (j->raw_utf8) opdb_json_quote_utf8(j->out, key);
    else opdb_json_quote(j->out, key);
    opdb_sb_add(j->out, ": ", 2);
    j->after_key = true;
}

/* Decodes one UTF-8 sequence; returns its length (1 for an invalid byte, taken as U+FFFD). */
static int utf8_decode(const unsigned char *s, unsigned *cp) {
    if (s[0] < 0x80) {
        *cp = s[0];
        return 1;
    }
    int n = s[0] >= 0xf0 ? 4 : s[0] >= 0xe0 ? 3 : s[0] >= 0xc0 ? 2 : 0;
    if (!n) {
        *cp = 0xfffd;
        return 1;
    }
    unsigned v = s[0] & (0x7f >> n);
    for (int i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80) {
            *cp = 0xfffd;
            return 1;
        }
        v = (v << 6) | (s[i] & 0x3f);
    }
    *cp = v;
    return n;
}

/* json.dumps string escaping; with ascii (ensure_ascii) DEL and every
 * non-ASCII character become \uXXXX, otherwise they stay raw. */
/* bytes written as they are: bit 1 with ensure_ascii, bit 2 without (NUL in neither) */
#define PLAIN(c) ((c) >= 0x20 && (c) != '"' && (c) != '\\' && (c) < 0x7f ? 3 : (c) >= 0x80 ? 2 : 0)
#define PLAIN4(b) PLAIN(b), PLAIN(b + 1), PLAIN(b + 2), PLAIN(b + 3)
#define PLAIN16(b) PLAIN4(b), PLAIN4(b + 4), PLAIN4(b + 8), PLAIN4(b + 12)
static const unsigned char k_plain[256] = {
    PLAIN16(0x00), PLAIN16(0x10), PLAIN16(0x20), PLAIN16(0x30), PLAIN16(0x40), PLAIN16(0x50),
    PLAIN16(0x60), PLAIN16(0x70), PLAIN16(0x80), PLAIN16(0x90), PLAIN16(0xa0), PLAIN16(0xb0),
    PLAIN16(0xc0), PLAIN16(0xd0), PLAIN16(0xe0), PLAIN16(0xf0)};

static void quote(opdb_strbuf *out, const char *s, bool ascii) {
    const unsigned char *p = (const unsigned char *)s;
    const unsigned char plain = ascii ? 1 : 2;
    {
        /* the usual string, with nothing to escape: its quotes and bytes in one go */
        const unsigned char *q = p;
        while (k_plain[*q] & plain) q++;
        if (!*q) {
            size_t n = (size_t)(q - p);
            opdb_sb_reserve(out, n + 2);
            char *o = out->p + out->n;
            o[0] = '"';
            memcpy(o + 1, s, n);
            o[n + 1] = '"';
            o[n + 2] = 0;
            out->n += n + 2;
            return;
        }
    }
    opdb_sb_addc(out, '"');
    while (*p) {
        /* a run of bytes that need no escape, at once */
        const unsigned char *q = p;
        while (k_plain[*q] & plain) q++;
        if (q > p) {
            opdb_sb_add(out, (const char *)p, (size_t)(q - p));
            p = q;
            continue;
        }
        unsigned c = *p;
        if (c == '"') opdb_sb_add(out, "\\\"", 2);
        else if (c == '\\') opdb_sb_add(out, "\\\\", 2);
        else if (c == '\n') opdb_sb_add(out, "\\n", 2);
        else if (c == '\r') opdb_sb_add(out, "\\r", 2);
        else if (c == '\t') opdb_sb_add(out, "\\t", 2);
        else if (c == '\b') opdb_sb_add(out, "\\b", 2);
        else if (c == '\f') opdb_sb_add(out, "\\f", 2);
        else if (c < 0x20 || (ascii && c == 0x7f)) opdb_sb_addf(out, "\\u%04x", c);
        else if (c < 0x80 || !ascii) opdb_sb_addc(out, (char)c);
        else {
            unsigned cp;
            p += utf8_decode(p, &cp) - 1;
            if (cp >= 0x10000) {
                cp -= 0x10000;
                opdb_sb_addf(out, "\\u%04x\\u%04x", 0xd800 + (cp >> 10), 0xdc00 + (cp & 0x3ff));
            } else {
                opdb_sb_addf(out, "\\u%04x", cp);
            }
        }
        p++;
    }
    opdb_sb_addc(out, '"');
}

void opdb_json_quote(opdb_strbuf *out, const char *s) { quote(out, s, true); }

void opdb_json_quote_utf8(opdb_strbuf *out, const char *s) { quote(out, s, false); }

void opdb_json_string(opdb_json *j, const char *s) {
    before_value(j);
    if (j->raw_utf8) opdb_json_quote_utf8(j->out, s);
    else opdb_json_quote(j->out, s);
}

void opdb_json_int(opdb_json *j, long long v) {
    before_value(j);
    opdb_sb_addf(j->out, "%lld", v);
}

void opdb_json_float(opdb_json *j, double v) {
    before_value(j);
    if (!isfinite(v) && !j->python_nan) {
        opdb_sb_adds(j->out, "null");
    } else if (isnan(v)) {
        opdb_sb_adds(j->out, "NaN");
    } else if (isinf(v)) {
        opdb_sb_adds(j->out, v > 0 ? "Infinity" : "-Infinity");
    } else {
        char buf[64];
        opdb_py_fmt_repr(buf, sizeof buf, v);
        opdb_sb_adds(j->out, buf);
    }
}

void opdb_json_bool(opdb_json *j, bool v) {
    before_value(j);
    opdb_sb_adds(j->out, v ? "true" : "false");
}

void opdb_json_null(opdb_json *j) {
    before_value(j);
    opdb_sb_adds(j->out, "null");
}

void opdb_json_raw(opdb_json *j, const char *text) {
    before_value(j);
    opdb_sb_adds(j->out, text);
}
