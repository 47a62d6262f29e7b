/* A small argparse-like option parser shared by every command:
 * --name VALUE, --name=VALUE, unambiguous prefixes, -h/--help. */
#ifndef OPDB_CLI_OPTS_H
#define OPDB_CLI_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

typedef struct cli_opt {
    const char *name;     /* "--profiling-path" */
    const char *metavar;  /* NULL for a flag */
    const char *help;
    bool required;
    const char **value;   /* for options with a value */
    bool *flag;           /* for flags */
    const char *alias;    /* an older spelling still accepted, or NULL */
} cli_opt;

typedef struct cli_spec {
    const char *prog;     /* "opdb parse" */
    const char *summary;  /* one line */
    const char *epilog;   /* may be NULL */
    cli_opt *opts;
    size_t nopts;
    const char *example;  /* command lines, one a line; every help has one */
    const char *exits;    /* exit statuses; NULL: CLI_EXITS */
} cli_spec;

#define CLI_EXITS "0 ok, 1 failure, 2 usage error"


enum { CLI_OK = 0, CLI_HELP = 1, CLI_USAGE = 2 };

/* The columns help is wrapped to: the terminal's width when stdout is one,
 * else 80. */
size_t cli_help_width(void);
/* Prints text at column col of f, words wrapped at width (never broken, but
 * a path wider than the line is cut after a '/'), continuation lines
 * starting at column indent; ends the line. */
void cli_put_wrapped(FILE *f, const char *text, size_t col, size_t indent, size_t width);
/* Prints the example and exit-status sections every help ends with. */
void cli_print_help_tail(FILE *f, const char *example, const char *exits, size_t width);
/* Parses argv[1..argc). Prints help to stdout (CLI_HELP) or a usage error to
 * stderr (CLI_USAGE). */
int cli_parse(const cli_spec *spec, int argc, char **argv);
/* Prints "usage: ..." and "PROG: error: MSG" to stderr; returns CLI_USAGE. */
int cli_usage_error(const cli_spec *spec, const char *fmt, ...);
/* The database-location flags shared by several commands: --device must be
 * one of the devices, version flags must look like versions. CLI_OK or a
 * printed usage error (CLI_USAGE). */
int cli_check_db_flags(const cli_spec *spec, const char *device, const char *vllm, const char *torch, const char *cann);
/* Collects the values after a multi-value flag at argv[*i] (--ops A B) into
 * *out (realloc'd); *i is left on the last value. Returns how many. */
int cli_take_list(int *i, int argc, char **argv, const char ***out, size_t *n);
/* Normalises operator names into *norm (malloc'd strings). Unknown names:
 * with quirks the reference's "PROG: Unsupported --ops: <sorted>.
 * Available: <catalogue>" and 1; else a usage error with the closest name
 * (the catalogue when none is close) and 2. */
int cli_normalize_ops(const char *prog, bool quirks, const char *const *ops, size_t n, char ***norm);
void cli_free_ops(char **norm, size_t n);
/* The end of a command with --strict: rc unchanged unless the run was ok,
 * strict is set and something warned that nothing meaningful came out
 * (the nothing sink of cli_log, or cli_warn_nothing); then one line on
 * stderr and 1. */
int cli_strict_rc(const char *prog, bool strict, int rc);
#define CLI_STRICT_HELP "exit 1 when the run produced nothing meaningful (no rows, no matches, less than asked)"
/* Parses a non-negative integer option value. */
bool cli_parse_uint(const char *s, unsigned long *out);

#endif
