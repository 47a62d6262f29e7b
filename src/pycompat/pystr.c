/* Python str.strip() and str.lower() semantics on UTF-8 bytes. */
#include <string.h>
#include "opdb/pystr.h"

static inline bool ascii_space(unsigned char c) {
    return (c >= 0x09 && c <= 0x0d) || (c >= 0x1c && c <= 0x20);
}

/* Length of a Unicode White_Space sequence (non-ASCII) starting at p, or 0. */
static size_t uspace_at(const unsigned char *p, size_t n) {
    if (n >= 2 && p[0] == 0xc2 && (p[1] == 0x85 || p[1] == 0xa0)) return 2;
    if (n >= 3) {
        if (p[0] == 0xe1 && p[1] == 0x9a && p[2] == 0x80) return 3;
        if (p[0] == 0xe2 && p[1] == 0x80 &&
            ((p[2] >= 0x80 && p[2] <= 0x8a) || p[2] == 0xa8 || p[2] == 0xa9 || p[2] == 0xaf))
            return 3;
        if (p[0] == 0xe2 && p[1] == 0x81 && p[2] == 0x9f) return 3;
        if (p[0] == 0xe3 && p[1] == 0x80 && p[2] == 0x80) return 3;
    }
    return 0;
}

/* Length of a White_Space sequence ending at p+n, or 0. */
static size_t uspace_before(const unsigned char *p, size_t n) {
    if (n >= 2 && uspace_at(p + n - 2, 2) == 2) return 2;
    if (n >= 3 && uspace_at(p + n - 3, 3) == 3) return 3;
    return 0;
}

/* Shared by str.strip() (with_seps) and float()/int() (without): Python's
 * number parsing maps only non-ASCII whitespace to ' ', so the ASCII
 * separators \x1c-\x1f are stripped by str.strip() but refused by float(). */
static opdb_span strip_impl(opdb_span s, bool with_seps);

opdb_span opdb_py_strip_any(opdb_span s) { return strip_impl(s, true); }
opdb_span opdb_py_strip_number(opdb_span s) { return strip_impl(s, false); }

static opdb_span strip_impl(opdb_span s, bool with_seps) {
    /* Most cells start and end with a printable ASCII byte. */
    if (s.n && (unsigned char)s.p[0] > 0x20 && (unsigned char)s.p[0] < 0x80 &&
        (unsigned char)s.p[s.n - 1] > 0x20 && (unsigned char)s.p[s.n - 1] < 0x80)
        return s;
    const unsigned char *p = (const unsigned char *)s.p;
    size_t n = s.n;
    for (;;) {
        if (n && ascii_space(*p) && (with_seps || *p < 0x1c || *p == 0x20)) {
            p++;
            n--;
        } else if (n && *p >= 0x80) {
            size_t k = uspace_at(p, n);
            if (!k) break;
            p += k;
            n -= k;
        } else {
            break;
        }
    }
    for (;;) {
        if (n && ascii_space(p[n - 1]) && (with_seps || p[n - 1] < 0x1c || p[n - 1] == 0x20)) {
            n--;
        } else if (n && p[n - 1] >= 0x80) {
            size_t k = uspace_before(p, n);
            if (!k) break;
            n -= k;
        } else {
            break;
        }
    }
    return opdb_span_make((const char *)p, n);
}

opdb_span opdb_py_strip_chars(opdb_span s, const char *chars) {
    const char *p = s.p;
    size_t n = s.n;
    while (n && strchr(chars, *p) && *p) {
        p++;
        n--;
    }
    while (n && strchr(chars, p[n - 1]) && p[n - 1]) n--;
    return opdb_span_make(p, n);
}

void opdb_ascii_lower(char *p, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (p[i] >= 'A' && p[i] <= 'Z') p[i] = (char)(p[i] - 'A' + 'a');
}
