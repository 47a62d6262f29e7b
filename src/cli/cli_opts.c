/* See cli_opts.h. */
#include "cli/cli_opts.h"
#include "opdb/core.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/suggest.h"
#include "opdb/db.h"
#include "opdb/replay.h"
#include "opdb/signature.h"
#include "opdb/update.h"

static void print_usage(const cli_spec *s, FILE *f) {
    fprintf(f, "usage: %s [-h]", s->prog);
    for (size_t i = 0; i < s->nopts; i++) {
        const cli_opt *o = &s->opts[i];
        if (o->metavar)
            fprintf(f, o->required ? " %s %s" : " [%s %s]", o->name, o->metavar);
        else
            fprintf(f, " [%s]", o->name);
    }
    fputc('\n', f);
}

int cli_usage_error(const cli_spec *spec, const char *fmt, ...) {
    print_usage(spec, stderr);
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
    }
    for (const char *e = s->epilog; e && *e;) {
        const char *nl = strchr(e, '\n');
        int len = nl ? (int)(nl - e) : (int)strlen(e);
        printf("E\t%.*s\n", len, e);
        e = nl ? nl + 1 : e + len;
    }
    return true;
}

static void print_help(const cli_spec *s) {
    if (help_table(s)) return;
    print_usage(s, stdout);
    printf("\n%s\n\noptions:\n  -h, --help  show this help message and exit\n", s->summary);
    for (size_t i = 0; i < s->nopts; i++) {
        const cli_opt *o = &s->opts[i];
        char left[96];
        snprintf(left, sizeof left, "%s%s%s", o->name, o->metavar ? " " : "", o->metavar ? o->metavar : "");
        printf("  %-28s %s%s\n", left, o->required ? "[required] " : "", o->help);
    }
    if (s->epilog) printf("\n%s\n", s->epilog);
}

static cli_opt *lookup(const cli_spec *s, const char *name, size_t n, int *ambiguous) {
    cli_opt *hit = NULL;
    int count = 0;
    *ambiguous = 0;
    for (size_t i = 0; i < s->nopts; i++) {
        const char *on = s->opts[i].name;
        if (strlen(on) == n && strncmp(on, name, n) == 0) return &s->opts[i];
        if (strncmp(on, name, n) == 0) {
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

int cli_normalize_ops(const char *prog, const char *const *ops, size_t n, char ***norm) {
    *norm = opdb_xcalloc(n + 1, sizeof **norm);
    char **bad = opdb_xcalloc(n + 1, sizeof *bad);
    size_t nbad = 0;
    for (size_t i = 0; i < n; i++) {
        char buf[256];
        opdb_normalize_op_name(ops[i], strlen(ops[i]), buf, sizeof buf);
        (*norm)[i] = opdb_xstrdup(buf);
        if (!opdb_is_replay_op(buf)) bad[nbad++] = (*norm)[i];
    }
    if (nbad) {
        qsort(bad, nbad, sizeof *bad, cmp_cstr);
        fprintf(stderr, "%s: Unsupported --ops: ", prog);
        for (size_t i = 0; i < nbad; i++) fprintf(stderr, "%s%s", i ? ", " : "", bad[i]);
        fprintf(stderr, ". Available: ");
        for (size_t i = 0; i < opdb_op_registry_count; i++)
            fprintf(stderr, "%s%s", i ? ", " : "", opdb_op_registry[i]->name);
        fputc('\n', stderr);
    }
    free(bad);
    return nbad ? 1 : 0;
}

void cli_free_ops(char **norm, size_t n) {
    for (size_t i = 0; norm && i < n; i++) free(norm[i]);
    free(norm);
}

int cli_strict_rc(const char *prog, bool strict, int rc) {
    unsigned n = opdb_nothing_count();
    if (rc != 0 || !strict || n == 0) return rc;
    fprintf(stderr, "%s: --strict: %u warning(s) that the run produced nothing meaningful: exit 1\n", prog, n);
    return 1;
}
