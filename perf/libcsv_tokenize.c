/*
 * libcsv_tokenize.c - "libcsv tokenize-only" floor for the opdb parse bench.
 *
 * Reads FILE in 1 MiB chunks and feeds it to libcsv (csv_init with default
 * options, i.e. CSV_APPEND_NULL off) with field/record callbacks that only
 * count.  Prints "records=N fields=M".
 *
 * Usage: libcsv_tokenize FILE
 */
#include <csv.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK (1u << 20)

struct counts {
    unsigned long long records;
    unsigned long long fields;
};

static void on_field(void *data, size_t len, void *ctx)
{
    (void)data;
    (void)len;
    ((struct counts *)ctx)->fields++;
}

static void on_record(int term, void *ctx)
{
    (void)term;
    ((struct counts *)ctx)->records++;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: libcsv_tokenize FILE\n");
        return 2;
    }
    FILE *f = fopen(argv[1], "rb");
    if (!f) {
        fprintf(stderr, "libcsv_tokenize: cannot open %s: %s\n", argv[1],
                strerror(errno));
        return 1;
    }
    struct csv_parser p;
    if (csv_init(&p, 0) != 0) {
        fprintf(stderr, "libcsv_tokenize: csv_init failed\n");
        fclose(f);
        return 1;
    }
    char *buf = malloc(CHUNK);
    if (!buf) {
        fprintf(stderr, "libcsv_tokenize: out of memory\n");
        fclose(f);
        return 1;
    }
    struct counts c = {0, 0};
    int rc = 0;
    size_t n;
    while ((n = fread(buf, 1, CHUNK, f)) > 0) {
        if (csv_parse(&p, buf, n, on_field, on_record, &c) != n) {
            fprintf(stderr, "libcsv_tokenize: %s: %s\n", argv[1],
                    csv_strerror(csv_error(&p)));
            rc = 1;
            break;
        }
    }
    if (ferror(f)) {
        fprintf(stderr, "libcsv_tokenize: read error on %s\n", argv[1]);
        rc = 1;
    }
    if (rc == 0)
        csv_fini(&p, on_field, on_record, &c);
    csv_free(&p);
    free(buf);
    fclose(f);
    printf("records=%llu fields=%llu\n", c.records, c.fields);
    return rc;
}
