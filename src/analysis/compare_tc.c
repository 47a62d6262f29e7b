/* TC side of `compare` (docs/ANALYSIS.md §2.4), in one streaming pass. The
 * reference picks the profiling process first and then walks its events;
 * a stream may show events before the process_name record, so every
 * process is accumulated separately and the choice is made at the end.
 * Problems in an event are remembered per process and only reported if
 * that process is the one chosen (the reference never looks at others). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opdb/compare.h"
#include "core/call.h"
#include "opdb/pystr.h"
#include "opdb/shape_compare.h"
#include "opdb/trace_reader.h"

typedef struct pid_acc {
    char *key;          /* normalised for Python == (1 == 1.0 == True) */
    char *shown;        /* str(pid) as the reference prints it */
    opdb_cmp_stats st;
    char *problem;      /* first error in one of its events, if any */
} pid_acc;

typedef struct op_info {
    char *name;              /* the intern key: first */
    char *shortname;         /* every "torch.ops." removed */
    size_t shortlen;
    bool zero_cost, all_reduce;
    const char *map_kt;      /* resolve_kernel_type, or NULL */
} op_info;

/* kernel_type text split on ',' and stripped (empties dropped) */
typedef struct kt_split {
    char *raw;               /* the intern key: first */
    char **sub;
    size_t *sublen;
    size_t nsub;
    bool has_allreduce;      /* "hcom_allReduce_" is one of them */
} kt_split;

/* Entries of one size, each starting with its NUL-terminated key (char *),
 * found by key: the op-name and kernel_type caches. */
typedef struct intern_tab {
    char *v;
    size_t n, cap, elem;
    opdb_hindex ix;
} intern_tab;

/* The entry for key; a new zeroed one (key set) when *fresh comes back true. */
static void *intern(intern_tab *t, const char *key, bool *fresh) {
    size_t n = strlen(key);
    uint64_t h = opdb_hash_bytes(key, n, 7);
    uint32_t i;
    for (opdb_hprobe p = opdb_hindex_probe(&t->ix, h); opdb_hprobe_next(&p, &i);) {
        char *e = t->v + (size_t)i * t->elem;
        if (strcmp(*(char **)e, key) == 0) {
            *fresh = false;
            return e;
        }
    }
    if (t->n == t->cap) {
        t->cap = opdb_grow_cap(t->cap, t->n + 1, t->elem);
        t->v = opdb_xrealloc(t->v, t->cap * t->elem);
    }
    char *e = t->v + t->n * t->elem;
    memset(e, 0, t->elem);
    *(char **)e = opdb_xstrdup(key);
    opdb_hindex_add(&t->ix, h, (uint32_t)t->n++);
    *fresh = true;
    return e;
}

typedef struct tc_ctx {
    const char *path;
    const opdb_cmp_mapping *map;
    const opdb_cmp_opts *o;
    pid_acc *pids;
    size_t npids, cappids;
    pid_acc *last_pid;        /* the process of the previous event, if it had this text */
    opdb_jkind last_pid_kind;
    intern_tab ops;          /* of op_info */
    intern_tab kts;          /* of kt_split */
    char *named_pid;         /* key of the first process_name naming a profiling model */
    char *fatal;             /* an error the reference hits whatever the pid (metadata) */
    unsigned long long x_without_pid; /* 1 + index of the first X event without pid */
    unsigned long long nx_without_pid;
    opdb_skd skd;             /* sub_kernel_durations of the current event, reused */
} tc_ctx;

static bool is_number_kind(opdb_jkind k) { return k == OPDB_J_INT || k == OPDB_J_FLOAT || k == OPDB_J_BOOL; }

static double field_number(const opdb_trace_field *f) {
    if (f->kind == OPDB_J_BOOL) return strcmp(f->text, "True") == 0 ? 1.0 : 0.0;
    return strtod(f->text, NULL);
}

/* Python truthiness of a JSON value as json.load gives it. */
static bool field_truthy(const opdb_trace_field *f) {
    if (!f) return false;
    switch (f->kind) {
    case OPDB_J_NULL: return false;
    case OPDB_J_BOOL: return strcmp(f->text, "True") == 0;
    case OPDB_J_INT:
    case OPDB_J_FLOAT: return strtod(f->text, NULL) != 0.0 || strstr(f->text, "nan");
    case OPDB_J_STRING: return f->text[0] != '\0';
    case OPDB_J_LIST: return strcmp(f->text, "[]") != 0;
    case OPDB_J_DICT: return strcmp(f->text, "{}") != 0;
    }
    return false;
}

/* A key under which Python-equal pids coincide. */
static char *pid_key(const opdb_trace_field *f) {
    opdb_strbuf sb;
    opdb_sb_init(&sb);
    if (is_number_kind(f->kind)) {
        double v = field_number(f);
        if (f->kind == OPDB_J_INT) opdb_sb_addf(&sb, "n%s", f->text);
        else if (v == (double)(long long)v && v > -9.2e18 && v < 9.2e18) opdb_sb_addf(&sb, "n%lld", (long long)v);
        else opdb_sb_addf(&sb, "n%s", f->text);
    } else {
        opdb_sb_addf(&sb, "%d:%s", (int)f->kind, f->text);
    }
    return sb.p;
}

static pid_acc *pid_get(tc_ctx *c, const opdb_trace_field *f) {
    /* consecutive events nearly always share a pid: skip building the key */
    if (c->last_pid && c->last_pid_kind == f->kind && strcmp(c->last_pid->shown, f->text) == 0) return c->last_pid;
    char *key = pid_key(f);
    for (size_t i = c->npids; i-- > 0;) /* few processes: a scan is enough */
        if (strcmp(c->pids[i].key, key) == 0) {
            free(key);
            c->last_pid = &c->pids[i];
            c->last_pid_kind = f->kind;
            return c->last_pid;
        }
    OPDB_ALLOC_GROW(c->pids, c->npids + 1, c->cappids);
    pid_acc *p = &c->pids[c->npids++];
    memset(p, 0, sizeof *p);
    p->key = key;
    p->shown = opdb_xstrdup(f->text);
    c->last_pid = NULL; /* the array may have moved */
    return p;
}

static const op_info *op_get(tc_ctx *c, const char *name) {
    bool fresh;
    op_info *op = intern(&c->ops, name, &fresh);
    if (!fresh) return op;
    op->shortname = opdb_cmp_short_name(name, &op->shortlen);
    /* op_name.lower(): only ASCII letters can lower-case into "all_reduce" */
    char *low = opdb_xstrdup(name);
    opdb_ascii_lower(low, strlen(low));
    op->all_reduce = strstr(low, "all_reduce") != NULL;
    free(low);
    opdb_cmp_mapping_lookup(c->map, name, &op->map_kt, &op->zero_cost);
    return op;
}

static const kt_split *kt_get(tc_ctx *c, const char *raw) {
    bool fresh;
    kt_split *k = intern(&c->kts, raw, &fresh);
    if (!fresh) return k;
    size_t cap = 0;
    for (const char *p = raw;;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        opdb_span s = opdb_py_strip(opdb_span_make(p, len));
        if (s.n) {
            if (k->nsub == cap) {
                cap = opdb_grow_cap(cap, k->nsub + 1, sizeof *k->sub);
                k->sub = opdb_xrealloc(k->sub, cap * sizeof *k->sub);
                k->sublen = opdb_xrealloc(k->sublen, cap * sizeof *k->sublen);
            }
            char *copy = opdb_xmalloc(s.n + 1);
            memcpy(copy, s.p, s.n);
            copy[s.n] = '\0';
            k->sub[k->nsub] = copy;
            k->sublen[k->nsub] = s.n;
            if (s.n == 15 && memcmp(s.p, "hcom_allReduce_", 15) == 0) k->has_allreduce = true;
            k->nsub++;
        }
        if (!e) break;
        p = e + 1;
    }
    return k;
}

static void add_hit(opdb_cmp_stats *st, const char *kt, size_t ktlen, double dur, const op_info *op) {
    opdb_cmp_stat *s = opdb_cmp_stats_get(st, kt, ktlen);
    s->hit++;
    s->total += dur;
    s->count++;
    opdb_cmp_stat_add_func(s, op->shortname, op->shortlen);
}

/* Records the first problem of a process; returns 0 so the read goes on. */
static int pid_problem(tc_ctx *c, pid_acc *p, const opdb_trace_event *ev, const char *what) {
    if (p->problem) return 0;
    opdb_strbuf sb;
    opdb_sb_init(&sb);
    opdb_sb_addf(&sb, "%s: event %llu (ending at byte %llu): %s", c->path, ev->index, ev->offset, what);
    p->problem = sb.p;
    return 0;
}

static int on_complete(tc_ctx *c, pid_acc *p, const opdb_trace_event *ev) {
    if (p->problem) return 0; /* this process is already unusable */
    const opdb_trace_field *nf = opdb_trace_get(ev, "name");
    if (!nf) return pid_problem(c, p, ev, "complete event without \"name\"");
    if (nf->kind != OPDB_J_STRING) return pid_problem(c, p, ev, "\"name\" is not a string");
    const op_info *op = op_get(c, nf->text);
    if (op->zero_cost) return 0;
    const opdb_trace_field *args = opdb_trace_get(ev, "args");
    if (args) return pid_problem(c, p, ev, "\"args\" is not an object");
    const opdb_trace_field *df = opdb_trace_get(ev, "dur");
    bool dur_ok = !df || is_number_kind(df->kind);
    double dur = df && dur_ok ? field_number(df) : 0.0;
    const opdb_trace_field *ktf = opdb_trace_arg(ev, "kernel_type");
    bool hit = field_truthy(ktf) && !(ktf->kind == OPDB_J_STRING && strcmp(ktf->text, "?") == 0);
    if (!hit) {
        const char *kt = op->map_kt ? op->map_kt : op->name;
        if (!dur_ok) return pid_problem(c, p, ev, "\"dur\" is not a number");
        opdb_cmp_stat *s = opdb_cmp_stats_get(&p->st, kt, strlen(kt));
        s->miss++;
        s->total += dur;
        s->count++;
        opdb_cmp_stat_add_func(s, op->shortname, op->shortlen);
        return 0;
    }
    const kt_split *ks = kt_get(c, ktf->text);
    opdb_skd *skd = &c->skd;
    if (opdb_skd_read(opdb_trace_arg(ev, "sub_kernel_durations"), skd)) {
        for (size_t k = 0; k < skd->n; k++) {
            if (!skd->p[k].name_is_str) return pid_problem(c, p, ev, "a sub_kernel_durations name is not a string");
            if (!skd->p[k].num) return pid_problem(c, p, ev, "a sub_kernel_durations duration is not a number");
        }
        for (size_t k = 0; k < skd->n; k++)
            add_hit(&p->st, opdb_skd_name(skd, k), skd->p[k].name_len, skd->p[k].f, op);
        return 0; /* counted through its sub-kernels alone (docs/ANALYSIS.md §2.4) */
    }
    if (ks->nsub) {
        if (!dur_ok) return pid_problem(c, p, ev, "\"dur\" is not a number");
        double per = dur / (double)ks->nsub;
        for (size_t k = 0; k < ks->nsub; k++) add_hit(&p->st, ks->sub[k], ks->sublen[k], per, op);
    }
    /* legacy MC2 handling, only without a valid sub_kernel_durations */
    if (op->all_reduce && !ks->has_allreduce) {
        opdb_cmp_stat *s = opdb_cmp_stats_get(&p->st, "hcom_allReduce_", 15);
        s->hit++;
        s->count++; /* the reference adds no duration here */
        opdb_cmp_stat_add_func(s, op->shortname, op->shortlen);
    }
    return 0;
}

static int on_event(const opdb_trace_event *ev, void *ctx) {
    tc_ctx *c = ctx;
    const opdb_trace_field *ph = opdb_trace_get(ev, "ph");
    if (!ph || ph->kind != OPDB_J_STRING) return 0;
    if (strcmp(ph->text, "M") == 0 && !c->named_pid && !c->fatal) {
        const opdb_trace_field *nm = opdb_trace_get(ev, "name");
        if (!nm || nm->kind != OPDB_J_STRING || strcmp(nm->text, "process_name") != 0) return 0;
        opdb_strbuf sb;
        opdb_sb_init(&sb);
        const opdb_trace_field *pn = opdb_trace_arg(ev, "name");
        if (opdb_trace_get(ev, "args")) {
            opdb_sb_addf(&sb, "%s: process_name event %llu (ending at byte %llu): \"args\" is not an object", c->path,
                         ev->index, ev->offset);
        } else if (pn && pn->kind != OPDB_J_STRING) {
            opdb_sb_addf(&sb, "%s: process_name event %llu (ending at byte %llu): args.name is not a string", c->path,
                         ev->index, ev->offset);
        } else if (pn) {
            char *low = opdb_xstrdup(pn->text);
            opdb_ascii_lower(low, strlen(low));
            bool match = strstr(low, "profiling") || strstr(low, "empirical");
            free(low);
            if (match) {
                const opdb_trace_field *pid = opdb_trace_get(ev, "pid");
                if (pid) c->named_pid = pid_key(pid);
                else
                    opdb_sb_addf(&sb, "%s: process_name event %llu (ending at byte %llu) has no \"pid\"", c->path,
                                 ev->index, ev->offset);
            }
        }
        if (sb.n) c->fatal = sb.p;
        else opdb_sb_free(&sb);
        return 0;
    }
    if (strcmp(ph->text, "X") != 0) return 0;
    const opdb_trace_field *pid = opdb_trace_get(ev, "pid");
    if (!pid) {
        if (!c->x_without_pid) c->x_without_pid = ev->index + 1;
        c->nx_without_pid++;
        return 0;
    }
    return on_complete(c, pid_get(c, pid), ev);
}

/* The reference's choice of process (or --pid): 0 with *pick set (NULL for
 * a named process without complete events), or -1. */
static int choose_pid(tc_ctx *c, pid_acc **pick, opdb_err *err) {
    *pick = NULL;
    if (c->o->pid) {
        opdb_trace_field f = {NULL, c->o->pid_is_text ? OPDB_J_STRING : OPDB_J_INT, (char *)c->o->pid};
        char *key = pid_key(&f);
        pid_acc *hit = NULL;
        for (size_t i = 0; i < c->npids; i++)
            if (strcmp(c->pids[i].key, key) == 0) hit = &c->pids[i];
        free(key);
        if (!hit) return opdb_fail(err, OPDB_ERR_RUNTIME, "%s: no complete event has pid %s (--pid)", c->path, c->o->pid);
        *pick = hit;
        return 0;
    }
    if (c->fatal) return opdb_fail(err, OPDB_ERR_RUNTIME, "%s", c->fatal);
    if (c->named_pid) {
        for (size_t i = 0; i < c->npids; i++)
            if (strcmp(c->pids[i].key, c->named_pid) == 0) *pick = &c->pids[i];
        return 0;
    }
    if (c->x_without_pid)
        return opdb_fail(err, OPDB_ERR_RUNTIME,
                         "%s: no process_name names a profiling or empirical model, and complete event %llu has no \"pid\"",
                         c->path, c->x_without_pid - 1);
    if (c->npids == 1) {
        opdb_warn("profiling PID not found by name in %s, using sole PID %s", opdb_path_shown(c->path), c->pids[0].shown);
        *pick = &c->pids[0];
        return 0;
    }
    opdb_strbuf sb;
    opdb_sb_init(&sb);
    for (size_t i = 0; i < c->npids; i++) opdb_sb_addf(&sb, "%s%s", i ? ", " : "", c->pids[i].shown);
    if (c->npids == 0)
        opdb_fail(err, OPDB_ERR_RUNTIME, "%s: cannot identify the profiling process: the trace has no complete (\"X\") events",
                  c->path);
    else
        opdb_fail(err, OPDB_ERR_RUNTIME,
                  "%s: cannot identify the profiling process: no process_name names a profiling or empirical model "
                  "and complete events come from %zu processes (pids %s); pick one with --pid N",
                  c->path, c->npids, sb.p);
    opdb_sb_free(&sb);
    return -1;
}

static int cmp_read_tc(const char *path, const opdb_cmp_mapping *map, const opdb_cmp_opts *o, opdb_cmp_stats *out, opdb_err *err) {
    tc_ctx c;
    memset(&c, 0, sizeof c);
    c.path = path;
    c.map = map;
    c.o = o;
    c.ops.elem = sizeof(op_info);
    c.kts.elem = sizeof(kt_split);
    opdb_skd_init(&c.skd);
    /* only the keys the reference reads are copied out of each event */
    static const char *const fields[] = {"ph", "name", "pid", "dur", "args", NULL};
    static const char *const args[] = {"kernel_type", "sub_kernel_durations", "name", NULL};
    int rc = opdb_trace_read_some(path, fields, args, on_event, &c, err);
    if (rc == 0) {
        pid_acc *p;
        if (choose_pid(&c, &p, err)) {
            rc = -1;
        } else if (p && p->problem) {
            rc = opdb_fail(err, OPDB_ERR_RUNTIME, "%s", p->problem);
        } else if (p) {
            *out = p->st; /* hand the chosen table over */
            memset(&p->st, 0, sizeof p->st);
        }
    }
    for (size_t i = 0; i < c.npids; i++) {
        free(c.pids[i].key);
        free(c.pids[i].shown);
        free(c.pids[i].problem);
        opdb_cmp_stats_free(&c.pids[i].st);
    }
    free(c.pids);
    for (size_t i = 0; i < c.ops.n; i++) {
        op_info *op = (op_info *)(void *)(c.ops.v + i * c.ops.elem);
        free(op->name);
        free(op->shortname);
    }
    for (size_t i = 0; i < c.kts.n; i++) {
        kt_split *k = (kt_split *)(void *)(c.kts.v + i * c.kts.elem);
        for (size_t j = 0; j < k->nsub; j++) free(k->sub[j]);
        free(k->sub);
        free(k->sublen);
        free(k->raw);
    }
    free(c.ops.v);
    free(c.kts.v);
    opdb_hindex_free(&c.ops.ix);
    opdb_hindex_free(&c.kts.ix);
    free(c.named_pid);
    free(c.fatal);
    opdb_skd_free(&c.skd);
    return rc;
}

static void cmp_defaults(opdb_cmp_opts *o) {
    memset(o, 0, sizeof *o);
    o->size = sizeof *o;
}

OPDB_OPTS_INIT_SIZED(opdb_cmp_opts, cmp_defaults)

int opdb_cmp_read_tc(const char *path, const opdb_cmp_mapping *map, const opdb_cmp_opts *o, opdb_cmp_stats *out, opdb_err *err) {
    if (opdb_opts_check(o, o ? o->size : 0, sizeof *o, "opdb_cmp_opts", err)) return -1;
    opdb_call_scope saved = opdb_call_enter(&o->log);
    OPDB_CALL_GUARD(saved, err);
    opdb_call_set_modes(&o->modes);
    int rc = cmp_read_tc(path, map, o, out, err);
    opdb_call_leave(&saved);
    return rc;
}
