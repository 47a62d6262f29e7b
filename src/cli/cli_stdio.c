/* See cli_stdio.h. */
#include "cli/cli_stdio.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "opdb/core.h"

static int make_dir(cli_stdio *s, const char *prog) {
    if (s->dir[0]) return 0;
    const char *t = getenv("TMPDIR");
    snprintf(s->dir, sizeof s->dir, "%s/opdb-stdio-XXXXXX", t && *t ? t : "/tmp");
    if (!mkdtemp(s->dir)) {
        fprintf(stderr, "%s: cannot make a temporary folder for '-': %s\n", prog, strerror(errno));
        s->dir[0] = '\0';
        return 1;
    }
    return 0;
}

static int copy(FILE *from, FILE *to) {
    char buf[1 << 16];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, from)) > 0)
        if (fwrite(buf, 1, n, to) != n) return -1;
    return ferror(from) ? -1 : 0;
}

int cli_stdio_input(cli_stdio *s, const char *prog, const char **opt, const char *name) {
    if (!*opt || strcmp(*opt, "-") != 0) return 0;
    if (s->used_in) {
        fprintf(stderr, "%s: only one input can be read from stdin ('-')\n", prog);
        return 1;
    }
    if (make_dir(s, prog)) return 1;
    snprintf(s->in, sizeof s->in, "%s/%s", s->dir, name);
    FILE *f = fopen(s->in, "wb");
    int rc = f ? copy(stdin, f) : -1;
    if (f && fclose(f)) rc = -1;
    if (rc) {
        fprintf(stderr, "%s: <stdin>: cannot copy to %s: %s\n", prog, s->in, strerror(errno));
        return 1;
    }
    s->used_in = true;
    opdb_path_alias(s->in, "<stdin>");
    *opt = s->in;
    return 0;
}

bool cli_stdio_output(cli_stdio *s, const char *prog, const char **opt, const char *name) {
    if (!*opt || strcmp(*opt, "-") != 0 || make_dir(s, prog)) return false;
    snprintf(s->out, sizeof s->out, "%s/%s", s->dir, name);
    s->used_out = true;
    opdb_path_alias(s->out, "<stdout>");
    *opt = s->out;
    return true;
}

int cli_stdio_finish(cli_stdio *s, const char *prog, int rc) {
    if (rc == 0 && s->used_out) {
        fflush(stdout);
        FILE *f = fopen(s->out, "rb");
        if (!f || copy(f, stdout) || fflush(stdout)) {
            fprintf(stderr, "%s: <stdout>: write failed\n", prog);
            rc = 1;
        }
        if (f) fclose(f);
    }
    if (s->used_in) unlink(s->in);
    if (s->used_out) unlink(s->out);
    if (s->dir[0]) rmdir(s->dir);
    return rc;
}
