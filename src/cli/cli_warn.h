/* The one warning format of every command: "opdb <command>: warning:
 * <message>" on stderr, for the CLI's own warnings and the library's (the
 * handler installed here, or a warn callback in a command's options). */
#ifndef OPDB_CLI_WARN_H
#define OPDB_CLI_WARN_H

#include "opdb/error.h"

/* Names the running command ("opdb parse", "opdb comm import") and installs
 * the library's warning handler. */
void cli_warn_begin(const char *prog);
/* The command named by cli_warn_begin ("opdb" before it). */
const char *cli_prog(void);
void cli_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A warn callback for options that take one (ctx unused). */
void cli_warn_line(void *ctx, const char *line);
/* The logger every command puts in its call's options: warnings as above,
 * notes as "opdb: <line>" on stderr, the progress line drawn on stderr when
 * it is a terminal (the library's default), and warnings that the run
 * produced nothing meaningful printed as warnings and counted for --strict. */
opdb_log cli_log(void);
/* Such a warning of the CLI's own (printed and counted as cli_log's). */
void cli_warn_nothing(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* How many such warnings the command's calls gave so far. */
unsigned cli_nothing_count(void);

#endif
