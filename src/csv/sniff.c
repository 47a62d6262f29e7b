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
    if (n >= 2 && ((b[0] == 0xff && b[1] == 0xfe) || (b[0] == 0xfe && b[1] == 0xff))) {
        snprintf(why, cap, "UTF-16 text (byte-order mark %02X %02X); opdb reads UTF-8 CSV", b[0], b[1]);
        return why;
    }
    const unsigned char *nul = memchr(b, 0, n);
    if (nul) {
        /* ASCII text in UTF-16 without a mark: every other byte is 0 */
        size_t zeros_odd = 0, zeros_even = 0, m = n < 64 ? n : 64;
        for (size_t i = 0; i < m; i++) (i & 1 ? &zeros_odd : &zeros_even)[0] += b[i] == 0;
        if (m >= 8 && (zeros_odd * 2 >= m - 2 || zeros_even * 2 >= m - 2))
            snprintf(why, cap, "UTF-16 text without a byte-order mark; opdb reads UTF-8 CSV");
        else
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
