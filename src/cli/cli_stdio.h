/* "-" for stdin / stdout where a command takes one input or output file:
 * the readers and writers work on paths (gzip detection, atomic rename),
 * so stdin is first copied to a private temporary file and an output file
 * is written to one, then copied to stdout. */
#ifndef OPDB_CLI_STDIO_H
#define OPDB_CLI_STDIO_H

#include <stdbool.h>

typedef struct cli_stdio {
    char dir[256];   /* the temporary folder, "" until needed */
    char in[320], out[320];
    bool used_in, used_out;
} cli_stdio;

/* If *opt is "-", copies stdin to a temporary file called name and points
 * *opt at it. Only one input may be "-". 0, or 1 after printing an error. */
int cli_stdio_input(cli_stdio *s, const char *prog, const char **opt, const char *name);
/* If *opt is "-", points *opt at a temporary file called name, copied to
 * stdout by cli_stdio_finish. Returns true when *opt was "-". */
bool cli_stdio_output(cli_stdio *s, const char *prog, const char **opt, const char *name);
/* Copies the output to stdout when rc is 0, removes the temporary files;
 * returns rc (1 if the copy failed). */
int cli_stdio_finish(cli_stdio *s, const char *prog, int rc);

#endif
