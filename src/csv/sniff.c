/* opdb_csv_sniff: what the first bytes of a file say about whether it can be
 * a CSV table at all, so that a reader stops with one clear line instead of
 * reporting every missing column and garbage row of random bytes. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "opdb/csv.h"

/* Length of the valid UTF-8 sequence at p (n bytes left), 0 if invalid;
 * a sequence cut by the end of the buffer counts as valid. */
static size_t utf8_len(const unsigned char *p, size_t n) {
    unsigned c = p[0];
    size_t k = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 && c >= 0xc2 ? 2 : (c & 0xf0) == 0xe0 ? 3 : (c & 0xf8) == 0xf0 && c <= 0xf4 ? 4 : 0;
    for (size_t i = 1; i < k; i++) {
        if (i >= n) return n; /* cut by the buffer's end */
        if ((p[i] & 0xc0) != 0x80) return 0;
    }
    return k;
}

/* UTF-16 / UTF-32 text, with a byte-order mark or without one (ASCII text
 * then has a zero byte in every other, or three of every four, positions):
 * writes e.g. "UTF-16 text (little-endian, with a byte-order mark; a JSON document)". */
static bool wide_text(const unsigned char *b, size_t n, char *out, size_t cap) {
    int unit = 0, big = 0, bom = 0;
    if (n >= 4 && b[0] == 0xff && b[1] == 0xfe && b[2] == 0 && b[3] == 0) unit = 4, bom = 4;
    else if (n >= 4 && b[0] == 0 && b[1] == 0 && b[2] == 0xfe && b[3] == 0xff) unit = 4, big = 1, bom = 4;
    else if (n >= 2 && b[0] == 0xff && b[1] == 0xfe) unit = 2, bom = 2;
    else if (n >= 2 && b[0] == 0xfe && b[1] == 0xff) unit = 2, big = 1, bom = 2;
    else {
        size_t m = n < 256 ? n & ~(size_t)3 : 256, z[4] = {0, 0, 0, 0};
        for (size_t i = 0; i < m; i++) z[i & 3] += b[i] == 0;
        size_t q = m / 4; /* characters per position */
        if (q < 2) return false;
        if (z[1] == q && z[2] == q && z[3] == q && z[0] < q) unit = 4;
        else if (z[0] == q && z[1] == q && z[2] == q && z[3] < q) unit = 4, big = 1;
        else if (z[1] + z[3] >= 2 * q - 1 && z[0] + z[2] < q) unit = 2;
        else if (z[0] + z[2] >= 2 * q - 1 && z[1] + z[3] < q) unit = 2, big = 1;
        else return false;
    }
    /* the first character that is not white space, read as ASCII */
    char first = 0;
    for (size_t i = (size_t)bom; i + (size_t)unit <= n && !first; i += (size_t)unit) {
        unsigned c = big ? b[i + (size_t)unit - 1] : b[i];
        bool ascii = true;
        for (int k = 1; k < unit; k++) ascii = ascii && b[big ? i + (size_t)k - 1 : i + (size_t)k] == 0;
        if (!ascii) break;
        if (c != ' ' && c != '\t' && c != '\r' && c != '\n') first = (char)c;
    }
    snprintf(out, cap, "UTF-%d text (%s-endian, %s byte-order mark%s)", unit * 8, big ? "big" : "little",
             bom ? "with a" : "no", first == '{' || first == '[' ? "; a JSON document" : "");
    return true;
}

const char *opdb_csv_sniff(const char *path, char *why, size_t cap) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return NULL; /* the reader says why it cannot open it */
    struct stat st;
    unsigned char b[4096];
    ssize_t got = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? read(fd, b, sizeof b) : 0; /* never consume a pipe */
    close(fd);
    size_t n = got > 0 ? (size_t)got : 0;
    if (n >= 2 && b[0] == 0x1f && b[1] == 0x8b) {
        snprintf(why, cap, "gzip-compressed data, not CSV text (decompress it first)");
        return why;
    }
    char enc[160];
    if (wide_text(b, n, enc, sizeof enc)) {
        snprintf(why, cap, "%s; opdb reads UTF-8: convert it first (iconv -t UTF-8)", enc);
        return why;
    }
    const unsigned char *nul = memchr(b, 0, n);
    if (nul) {
        snprintf(why, cap, "binary data (a NUL byte at offset %zu), not CSV text", (size_t)(nul - b));
        return why;
    }
    /* the header line: column names are text */
    size_t i = n >= 3 && b[0] == 0xef && b[1] == 0xbb && b[2] == 0xbf ? 3 : 0;
    while (i < n && b[i] != '\n' && b[i] != '\r') {
        size_t k = b[i] < 0x20 && b[i] != '\t' ? 0 : utf8_len(b + i, n - i);
        if (k == 0) {
            snprintf(why, cap, "binary data or not UTF-8 text (byte 0x%02X at offset %zu of the header), not a CSV table", b[i], i);
            return why;
        }
        i += k;
    }
    return NULL;
}
