/* The one line every command ends a successful run with, on stderr:
 * "opdb <command>: <what was done>" (e.g. "opdb trace2csv: wrote 1,234 rows
 * to out.csv"), so that a run whose stdout is data, JSON or a report still
 * says what it did; stdout is never touched. */
#ifndef OPDB_CLI_SUMMARY_H
#define OPDB_CLI_SUMMARY_H

#include <stddef.h>

#if defined(__GNUC__)
#define CLI_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define CLI_PRINTF(a, b)
#endif

void cli_summary(const char *prog, const char *fmt, ...) CLI_PRINTF(2, 3);
/* --json of a command whose stdout is otherwise its data file: one JSON
 * object on stdout, the n string fields keys[i]: vals[i] (NULL: null), then
 * count_key: count. 0, or 1 when stdout fails. */
int cli_json_summary(const char *const *keys, const char *const *vals, size_t n, const char *count_key,
                     unsigned long long count);
/* n with a comma every three digits ("1,234"), in buf; returns buf. */
const char *cli_count(char *buf, size_t cap, unsigned long long n);
/* "s" unless n is 1. */
const char *cli_plural(unsigned long long n);

#endif
