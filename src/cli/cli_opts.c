/* See cli_opts.h. */
#include "cli/cli_opts.h"
#include "opdb/core.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "cli/cli_warn.h"
#include "cli/suggest.h"
#include "opdb/db.h"
#include "opdb/replay.h"
#include "opdb/signature.h"
#include "opdb/update.h"

static char *dupn(const char *s, size_t n) {
    char *d = opdb_xmalloc(n + 1);
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

size_t cli_help_width(void) {
    struct winsize ws;
    if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 40) return ws.ws_col;
    return 80;
}

void cli_put_wrapped(FILE *f, const char *text, size_t col, size_t indent, size_t width) {
    /* a word is never broken, except a path wider than a whole line at its '/' */
    if (col + strlen(text) <= width) { /* fits: printed as written, inner spacing kept */
        fprintf(f, "%s\n", text);
        return;
    }
    bool line_empty = true;
    for (const char *p = text; *p;) {
        while (*p == ' ') p++;
        const char *w = p;
        while (*p && *p != ' ') p++;
        size_t wl = (size_t)(p - w);
        if (!wl) break;
        if (!line_empty && col + 1 + wl > width) {
            fprintf(f, "\n%*s", (int)indent, "");
            col = indent;
            line_empty = true;
        }
        if (!line_empty) fputc(' ', f), col++;
        while (col + wl > width) { /* a path wider than a whole line: cut after the last '/' that fits */
            size_t cut = 0;
            for (size_t k = 0; k < wl && col + k < width; k++)
                if (w[k] == '/') cut = k + 1;
            if (!cut) break;
            fwrite(w, 1, cut, f);
            fprintf(f, "\n%*s", (int)indent, "");
            col = indent;
            w += cut;
            wl -= cut;
        }
        fwrite(w, 1, wl, f);
        col += wl;
        line_empty = false;
    }
    fputc('\n', f);
}

/* Text as paragraphs: lines run on into one paragraph, except that an
 * indented line, a line after one ending in ':' and a line after an empty
 * one start their own; a continuation keeps the paragraph's indentation
 * (two more after a "- " bullet). */
static void put_lines(FILE *f, const char *text, size_t width) {
    opdb_strbuf para = {0};
    for (const char *e = text; e && *e;) {
        const char *nl = strchr(e, '\n'), *ln = e;
        size_t len = nl ? (size_t)(nl - e) : strlen(e);
        opdb_sb_addf(&para, "%s%.*s", para.n ? " " : "", (int)len, ln);
        e = nl ? nl + 1 : e + len;
        bool ends = !*e || *e == ' ' || *e == '\n' || !strncmp(e, "- ", 2) || !strncmp(e, "* ", 2) || len == 0 ||
                    ln[0] == ' ' || ln[len - 1] == ':';
        if (!ends) continue;
        const char *line = para.n ? para.p : "";
        size_t lead = strspn(line, " ");
        size_t indent = lead + (strncmp(line + lead, "- ", 2) == 0 || strncmp(line + lead, "* ", 2) == 0 ? 2 : 0);
        fprintf(f, "%.*s", (int)lead, line);
        cli_put_wrapped(f, line + lead, lead, indent, width);
        para.n = 0;
        if (para.p) para.p[0] = '\0';
    }
    opdb_sb_free(&para);
}

/* A command line too long for the width goes on with " \" lines. */
static void put_command(FILE *f, const char *cmd, size_t width) {
    size_t col = 2;
    fputs("  ", f);
    for (const char *p = cmd; *p;) {
        while (*p == ' ') p++;
        const char *w = p;
        while (*p && *p != ' ') p++;
        size_t wl = (size_t)(p - w);
        if (!wl) break;
        if (col > 2 && col + 1 + wl + 2 > width) {
            fputs(" \\\n      ", f);
            col = 6;
        } else if (col > 2) {
            fputc(' ', f), col++;
        }
        fwrite(w, 1, wl, f);
        col += wl;
    }
    fputc('\n', f);
}

void cli_print_help_tail(FILE *f, const char *example, const char *exits, size_t width) {
    if (example) {
        fputs("\nexample:\n", f);
        for (const char *e = example; *e;) {
            const char *nl = strchr(e, '\n');
            size_t len = nl ? (size_t)(nl - e) : strlen(e);
            char *line = dupn(e, len);
            put_command(f, line, width);
            free(line);
            e = nl ? nl + 1 : e + len;
        }
    }
    fputs("\nexit status:\n  ", f);
    cli_put_wrapped(f, exits ? exits : CLI_EXITS, 2, 2, width);
}

static void print_usage(const cli_spec *s, FILE *f, size_t width) {
    size_t indent = strlen("usage: ") + strlen(s->prog) + 1, col = indent - 1;
    if (indent > width / 2) indent = 4;
    fprintf(f, "usage: %s", s->prog);
    char item[160];
    for (size_t i = 0; i <= s->nopts; i++) {
        const cli_opt *o = i ? &s->opts[i - 1] : NULL;
        if (!o) snprintf(item, sizeof item, "[-h]");
        else if (o->metavar) snprintf(item, sizeof item, o->required ? "%s %s" : "[%s %s]", o->name, o->metavar);
        else snprintf(item, sizeof item, "[%s]", o->name);
        size_t n = strlen(item);
        if (col + 1 + n > width) {
            fprintf(f, "\n%*s", (int)indent, "");
            col = indent;
        } else {
            fputc(' ', f), col++;
        }
        fputs(item, f);
        col += n;
    }
    fputc('\n', f);
}

int cli_usage_error(const cli_spec *spec, const char *fmt, ...) {
    print_usage(spec, stderr, 80);
    fprintf(stderr, "%s: error: ", spec->prog);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return CLI_USAGE;
}

/* OPDB_HELP_FORMAT=table: the same option table as tab-separated records,
 * read by scripts/gen_shell_docs.sh to write bash completion and man pages. */
static bool help_table(const cli_spec *s) {
    const char *fmt = getenv("OPDB_HELP_FORMAT");
    if (!fmt || strcmp(fmt, "table") != 0) return false;
    printf("S\t%s\n", s->summary);
    for (size_t i = 0; i < s->nopts; i++) {
        const cli_opt *o = &s->opts[i];
        printf("O\t%s\t%s\t%d\t%s\n", o->name, o->metavar ? o->metavar : "", o->required ? 1 : 0, o->help);
        if (o->alias) printf("O\t%s\t%s\t0\tolder spelling of %s, still accepted\n", o->alias, o->metavar ? o->metavar : "", o->name);
    }
    for (const char *e = s->epilog; e && *e;) {
        const char *nl = strchr(e, '\n');
        int len = nl ? (int)(nl - e) : (int)strlen(e);
        printf("E\t%.*s\n", len, e);
        e = nl ? nl + 1 : e + len;
    }
    for (const char *e = s->example; e && *e;) {
        const char *nl = strchr(e, '\n');
        int len = nl ? (int)(nl - e) : (int)strlen(e);
        printf("X\t%.*s\n", len, e);
        e = nl ? nl + 1 : e + len;
    }
    printf("C\t%s\n", s->exits ? s->exits : CLI_EXITS);
    return true;
}

enum { HELP_COL = 30 }; /* where option help starts, as argparse */

static void print_help(const cli_spec *s) {
    if (help_table(s)) return;
    size_t width = cli_help_width();
    print_usage(s, stdout, width);
    fputc('\n', stdout);
    put_lines(stdout, s->summary, width);
    printf("\noptions:\n  -h, --help%*s", HELP_COL - 12, "");
    cli_put_wrapped(stdout, "show this help message and exit", HELP_COL, HELP_COL, width);
    for (size_t i = 0; i < s->nopts; i++) {
        const cli_opt *o = &s->opts[i];
        char left[96], text[1024];
        snprintf(left, sizeof left, "  %s%s%s", o->name, o->metavar ? " " : "", o->metavar ? o->metavar : "");
        snprintf(text, sizeof text, "%s%s%s%s%s", o->required ? "[required] " : "", o->help, o->alias ? " (older spelling: " : "",
                 o->alias ? o->alias : "", o->alias ? ")" : "");
        fputs(left, stdout);
        if (strlen(left) + 1 > HELP_COL) printf("\n%*s", HELP_COL, "");
        else printf("%*s", (int)(HELP_COL - strlen(left)), "");
        cli_put_wrapped(stdout, text, HELP_COL, HELP_COL, width);
    }
    if (s->epilog) {
        fputc('\n', stdout);
        put_lines(stdout, s->epilog, width);
    }
    cli_print_help_tail(stdout, s->example, s->exits, width);
}

static cli_opt *lookup(const cli_spec *s, const char *name, size_t n, int *ambiguous) {
    cli_opt *hit = NULL;
    int count = 0;
    *ambiguous = 0;
    for (size_t i = 0; i < s->nopts; i++) {
        const char *on = s->opts[i].name, *al = s->opts[i].alias;
        if ((strlen(on) == n && strncmp(on, name, n) == 0) || (al && strlen(al) == n && strncmp(al, name, n) == 0))
            return &s->opts[i];
        if (strncmp(on, name, n) == 0 || (al && strncmp(al, name, n) == 0)) {
            hit = &s->opts[i];
            count++;
        }
    }
    if (count > 1) *ambiguous = 1;
    return count == 1 ? hit : NULL;
}

/* --x-path, --x-dir: an empty value is refused rather than read as ".". */
static bool names_a_path(const char *name) {
    size_t n = strlen(name);
    return (n > 5 && strcmp(name + n - 5, "-path") == 0) || (n > 4 && strcmp(name + n - 4, "-dir") == 0);
}

int cli_parse(const cli_spec *spec, int argc, char **argv) {
    bool *seen = opdb_xcalloc(spec->nopts ? spec->nopts : 1, sizeof *seen);
    int rc = CLI_OK;
    for (int i = 1; i < argc && rc == CLI_OK; i++) {
        const char *a = argv[i];
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            print_help(spec);
            rc = CLI_HELP;
            break;
        }
        if (strncmp(a, "--", 2) != 0 || strlen(a) == 2) {
            rc = cli_usage_error(spec, "unrecognized arguments: %s", a);
            break;
        }
        const char *eq = strchr(a, '=');
        size_t n = eq ? (size_t)(eq - a) : strlen(a);
        int amb;
        cli_opt *o = lookup(spec, a, n, &amb);
        if (!o) {
            const char *names[128], *near = NULL;
            size_t k = 0;
            for (; k < spec->nopts && k < 127; k++) names[k] = spec->opts[k].name;
            names[k++] = "--help";
            char word[128];
            snprintf(word, sizeof word, "%.*s", (int)n, a);
            if (!amb) near = cli_suggest(word, names, k);
            rc = amb    ? cli_usage_error(spec, "ambiguous option: %.*s", (int)n, a)
                 : near ? cli_usage_error(spec, "unrecognized arguments: %s (did you mean %s?)", a, near)
                        : cli_usage_error(spec, "unrecognized arguments: %s", a);
            break;
        }
        seen[o - spec->opts] = true;
        if (!o->metavar) {
            if (eq) {
                rc = cli_usage_error(spec, "argument %s: ignored explicit argument '%s'", o->name, eq + 1);
                break;
            }
            *o->flag = true;
            continue;
        }
        if (eq) {
            *o->value = eq + 1;
        } else if (i + 1 < argc && !(argv[i + 1][0] == '-' && argv[i + 1][1] == '-' && argv[i + 1][2])) {
            *o->value = argv[++i];
        } else {
            rc = cli_usage_error(spec, "argument %s: expected one argument", o->name);
        }
        if (rc == CLI_OK && !**o->value && names_a_path(o->name))
            rc = cli_usage_error(spec, "argument %s: an empty path (it would mean the current folder)", o->name);
    }
    if (rc == CLI_OK) {
        for (size_t k = 0; k < spec->nopts; k++) {
            if (spec->opts[k].required && !seen[k]) {
                rc = cli_usage_error(spec, "the following arguments are required: %s", spec->opts[k].name);
                break;
            }
        }
    }
    free(seen);
    return rc;
}

bool cli_parse_uint(const char *s, unsigned long *out) {
    if (!s || !*s) return false;
    char *end;
    unsigned long v = strtoul(s, &end, 10);
    if (*end || s[0] == '-') return false;
    *out = v;
    return true;
}

int cli_check_db_flags(const cli_spec *spec, const char *device, const char *vllm, const char *torch, const char *cann) {
    if (device && !opdb_device_valid(device)) {
        char list[1024] = "";
        for (size_t i = 0; i < opdb_ndevices; i++) {
            strcat(list, i ? ", '" : "'");
            strcat(list, opdb_devices[i]);
            strcat(list, "'");
        }
        const char *near = cli_suggest(device, opdb_devices, opdb_ndevices);
        if (near) return cli_usage_error(spec, "argument --device: invalid choice: '%s' (did you mean '%s'?)", device, near);
        return cli_usage_error(spec, "argument --device: invalid choice: '%s' (choose from %s)", device, list);
    }
    const char *flags[3][2] = {{"--vllm-version", vllm}, {"--torch-version", torch}, {"--cann-version", cann}};
    for (int i = 0; i < 3; i++)
        if (flags[i][1] && !opdb_version_valid(flags[i][1]))
            return cli_usage_error(spec, "argument %s: %s", flags[i][0], opdb_version_hint);
    return CLI_OK;
}

int cli_take_list(int *i, int argc, char **argv, const char ***out, size_t *n) {
    int k = *i + 1;
    while (k < argc && strncmp(argv[k], "--", 2) != 0) {
        *out = opdb_xrealloc((void *)*out, (*n + 1) * sizeof **out);
        (*out)[(*n)++] = argv[k++];
    }
    int took = k - (*i + 1);
    *i = k - 1;
    return took;
}

static int cmp_cstr(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The reference's message (and its exit 1) under --reference-quirks; else a
 * usage error naming the closest operator of each unknown name, the
 * catalogue when one of them has none close. */
static int unknown_ops(const char *prog, bool quirks, char **bad, size_t nbad) {
    qsort(bad, nbad, sizeof *bad, cmp_cstr);
    const char **names = opdb_xcalloc(opdb_op_registry_count + 1, sizeof *names);
    for (size_t i = 0; i < opdb_op_registry_count; i++) names[i] = opdb_op_registry[i]->name;
    bool all_near = !quirks;
    for (size_t i = 0; i < nbad && all_near; i++) all_near = cli_suggest(bad[i], names, opdb_op_registry_count) != NULL;
    if (!all_near) {
        fprintf(stderr, "%s: %sUnsupported --ops: ", prog, quirks ? "" : "error: argument --ops: ");
        for (size_t i = 0; i < nbad; i++) fprintf(stderr, "%s%s", i ? ", " : "", bad[i]);
        fprintf(stderr, ". Available: ");
        for (size_t i = 0; i < opdb_op_registry_count; i++) fprintf(stderr, "%s%s", i ? ", " : "", names[i]);
        fputc('\n', stderr);
    } else {
        fprintf(stderr, "%s: error: argument --ops: ", prog);
        for (size_t i = 0; i < nbad; i++)
            fprintf(stderr, "%sunknown operator '%s' (did you mean '%s'?)", i ? "; " : "", bad[i],
                    cli_suggest(bad[i], names, opdb_op_registry_count));
        fputc('\n', stderr);
    }
    free(names);
    return quirks ? 1 : 2;
}

int cli_normalize_ops(const char *prog, bool quirks, const char *const *ops, size_t n, char ***norm) {
    *norm = opdb_xcalloc(n + 1, sizeof **norm);
    char **bad = opdb_xcalloc(n + 1, sizeof *bad);
    size_t nbad = 0;
    for (size_t i = 0; i < n; i++) {
        char buf[256];
        opdb_normalize_op_name(ops[i], strlen(ops[i]), buf, sizeof buf);
        (*norm)[i] = opdb_xstrdup(buf);
        if (!opdb_is_replay_op(buf)) bad[nbad++] = (*norm)[i];
    }
    int rc = nbad ? unknown_ops(prog, quirks, bad, nbad) : 0;
    free(bad);
    return rc;
}

void cli_free_ops(char **norm, size_t n) {
    for (size_t i = 0; norm && i < n; i++) free(norm[i]);
    free(norm);
}

int cli_strict_rc(const char *prog, bool strict, int rc) {
    unsigned n = cli_nothing_count();
    if (rc != 0 || !strict || n == 0) return rc;
    fprintf(stderr, "%s: --strict: %u warning(s) that the run produced nothing meaningful: exit 1\n", prog, n);
    return 1;
}
