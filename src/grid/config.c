/* The grid configuration (docs/GRID.md §4) read from YAML with libyaml: named
 * grids, patterns (templates or generator functions) and assignments.  Every
 * expression is compiled here, so a bad one is reported before any file is
 * touched, as one line "<config>:<line>: ...". */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>
#include "opdb/limits.h"
#include "opdb/schema.h"
#include "grid/grid_internal.h"

const char *const grid_override_cols[4] = {OPDB_COL_INPUT_DTYPES, OPDB_COL_INPUT_FORMATS, OPDB_COL_OUTPUT_DTYPES,
                                           OPDB_COL_OUTPUT_FORMATS};
static const char *const k_override_keys[4] = {"input_dtypes", "input_formats", "output_dtypes", "output_formats"};

typedef struct loader {
    yaml_document_t doc;
    opdb_grid_config *c;
    opdb_err *err;
} loader;

static int line_of(const yaml_node_t *n) { return n ? (int)n->start_mark.line + 1 : 0; }

static int lfail(loader *L, const yaml_node_t *n, const char *what, const char *detail) {
    return opdb_fail(L->err, OPDB_ERR_USAGE, "%s:%d: %s%s%s", L->c->name, line_of(n), what, detail ? ": " : "",
                     detail ? detail : "");
}

static const char *scalar(const yaml_node_t *n) {
    return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

static yaml_node_t *map_get(loader *L, const yaml_node_t *m, const char *key) {
    if (!m || m->type != YAML_MAPPING_NODE) return NULL;
    for (yaml_node_pair_t *p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top; p++) {
        const char *k = scalar(yaml_document_get_node(&L->doc, p->key));
        if (k && !strcmp(k, key)) return yaml_document_get_node(&L->doc, p->value);
    }
    return NULL;
}

static bool parse_int(const char *s, int64_t *out) {
    if (!s || !*s) return false;
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (*end || errno) return false;
    *out = v;
    return true;
}

static int int_list(loader *L, const yaml_node_t *n, int64_t **vals, size_t *len) {
    if (!n || n->type != YAML_SEQUENCE_NODE) return lfail(L, n, "expected a list of integers", NULL);
    size_t cnt = (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
    if (cnt == 0 || cnt > 1000000) return lfail(L, n, "a grid needs 1 to 1000000 values", NULL);
    *vals = opdb_xmalloc(cnt * sizeof **vals);
    *len = cnt;
    size_t i = 0;
    for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top; it++, i++) {
        yaml_node_t *v = yaml_document_get_node(&L->doc, *it);
        if (!parse_int(scalar(v), &(*vals)[i])) return lfail(L, v, "not an integer", scalar(v));
    }
    return 0;
}

static int iterators(loader *L, const yaml_node_t *n, grid_iter **out, size_t *nout) {
    if (!n) return 0;
    if (n->type != YAML_MAPPING_NODE) return lfail(L, n, "iterators must be a mapping var -> grid", NULL);
    size_t cnt = (size_t)(n->data.mapping.pairs.top - n->data.mapping.pairs.start);
    *out = opdb_xcalloc(cnt ? cnt : 1, sizeof **out);
    for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
        yaml_node_t *k = yaml_document_get_node(&L->doc, p->key), *v = yaml_document_get_node(&L->doc, p->value);
        grid_iter *it = &(*out)[(*nout)++];
        if (!scalar(k)) return lfail(L, k, "iterator name must be a string", NULL);
        it->var = opdb_xstrdup(scalar(k));
        if (v && v->type == YAML_SCALAR_NODE) {
            size_t gn;
            const int64_t *g = grid_config_grid(L->c, scalar(v), &gn);
            if (!g) return lfail(L, v, "unknown grid", scalar(v));
            it->vals = opdb_xmalloc(gn * sizeof *it->vals);
            memcpy(it->vals, g, gn * sizeof *g);
            it->n = gn;
        } else if (int_list(L, v, &it->vals, &it->n)) {
            return -1;
        }
    }
    return 0;
}

static int compile(loader *L, const yaml_node_t *n, const char *text, opdb_grid_expr **out) {
    char msg[256];
    *out = opdb_grid_expr_compile(text, msg, sizeof msg);
    if (*out) return 0;
    return opdb_fail(L->err, OPDB_ERR_USAGE, "%s:%d: bad expression '%s': %s", L->c->name, line_of(n), text, msg);
}

/* §5.1: "()" -> empty; else strip all leading '(' and trailing ')', split at
 * commas outside parentheses, trim, drop empty parts. */
static int shape_template(loader *L, const yaml_node_t *n, grid_tmpl *t) {
    const char *s = scalar(n);
    if (!s) return lfail(L, n, "a shape template must be a string", NULL);
    t->text = opdb_xstrdup(s);
    t->line = line_of(n);
    opdb_span v = opdb_span_cstr(s);
    while (v.n && (*v.p == ' ' || *v.p == '\t')) v.p++, v.n--;
    while (v.n && (v.p[v.n - 1] == ' ' || v.p[v.n - 1] == '\t')) v.n--;
    if (v.n == 2 && v.p[0] == '(' && v.p[1] == ')') return 0;
    while (v.n && *v.p == '(') v.p++, v.n--;
    while (v.n && v.p[v.n - 1] == ')') v.n--;
    int depth = 0;
    size_t start = 0;
    for (size_t i = 0; i <= v.n; i++) {
        char c = i < v.n ? v.p[i] : ',';
        if (c == '(') depth++;
        else if (c == ')') depth--;
        if (i < v.n && (c != ',' || depth != 0)) continue;
        opdb_span part = opdb_span_make(v.p + start, i - start);
        start = i + 1;
        while (part.n && (*part.p == ' ' || *part.p == '\t')) part.p++, part.n--;
        while (part.n && (part.p[part.n - 1] == ' ' || part.p[part.n - 1] == '\t')) part.n--;
        if (!part.n) continue;
        if (t->ndims >= GRID_MAX_DIMS) return lfail(L, n, "too many dimensions", s);
        grid_dim *d = &t->dims[t->ndims++];
        char buf[600];
        if (part.n >= sizeof buf) return lfail(L, n, "dimension expression too long", s);
        memcpy(buf, part.p, part.n);
        buf[part.n] = '\0';
        bool digits = true;
        for (size_t k = 0; k < part.n; k++) digits &= buf[k] >= '0' && buf[k] <= '9';
        if (digits && parse_int(buf, &d->lit)) continue;
        if (compile(L, n, buf, &d->expr)) return -1;
    }
    return 0;
}

static int templates(loader *L, const yaml_node_t *n, grid_tmpl **out, size_t *nout) {
    if (!n || n->type != YAML_SEQUENCE_NODE) return lfail(L, n, "inputs/outputs must be lists of shape templates", NULL);
    size_t cnt = (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
    if (cnt > GRID_MAX_SLOTS) return lfail(L, n, "too many shape slots", NULL);
    *out = opdb_xcalloc(cnt ? cnt : 1, sizeof **out);
    for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top; it++)
        if (shape_template(L, yaml_document_get_node(&L->doc, *it), &(*out)[(*nout)++])) return -1;
    return 0;
}

static int pattern(loader *L, const char *name, const yaml_node_t *n, grid_pattern *p) {
    p->name = opdb_xstrdup(name);
    if (!n || n->type != YAML_MAPPING_NODE) return lfail(L, n, "a pattern must be a mapping", name);
    const char *gf = scalar(map_get(L, n, "generator_function"));
    if (gf) {
        static const char *const known[] = {"grouped_matmul", "dispatch_ffn_combine", "fused_attention",
                                            "split_qkv_rmsnorm_rope"};
        bool ok = false;
        for (size_t i = 0; i < 4; i++) ok |= !strcmp(gf, known[i]);
        if (!ok) return lfail(L, map_get(L, n, "generator_function"), "unknown generator_function", gf);
        p->generator = opdb_xstrdup(gf);
        return 0;
    }
    if (iterators(L, map_get(L, n, "iterators"), &p->iters, &p->niters)) return -1;
    if (p->niters == 0) return lfail(L, n, "a template pattern needs iterators", name);
    const char *nk = scalar(map_get(L, n, "model_nk_pairs"));
    p->model_nk_pairs = nk && (!strcmp(nk, "true") || !strcmp(nk, "True"));
    if (iterators(L, map_get(L, n, "fallback_iterators"), &p->fallback, &p->nfallback)) return -1;
    yaml_node_t *cs = map_get(L, n, "constants");
    if (cs) {
        if (cs->type != YAML_MAPPING_NODE) return lfail(L, cs, "constants must be a mapping", NULL);
        size_t cnt = (size_t)(cs->data.mapping.pairs.top - cs->data.mapping.pairs.start);
        p->const_names = opdb_xcalloc(cnt + 1, sizeof *p->const_names);
        p->const_vals = opdb_xcalloc(cnt + 1, sizeof *p->const_vals);
        for (yaml_node_pair_t *q = cs->data.mapping.pairs.start; q < cs->data.mapping.pairs.top; q++) {
            yaml_node_t *k = yaml_document_get_node(&L->doc, q->key), *v = yaml_document_get_node(&L->doc, q->value);
            if (!scalar(k) || !parse_int(scalar(v), &p->const_vals[p->nconsts]))
                return lfail(L, v, "a constant must be an integer", scalar(v));
            p->const_names[p->nconsts++] = opdb_xstrdup(scalar(k));
        }
    }
    if (p->niters + p->nfallback + p->nconsts + 2 > GRID_MAX_VARS) return lfail(L, n, "too many variables", name);
    yaml_node_t *cons = map_get(L, n, "constraints");
    if (cons) {
        if (cons->type != YAML_SEQUENCE_NODE) return lfail(L, cons, "constraints must be a list", NULL);
        size_t cnt = (size_t)(cons->data.sequence.items.top - cons->data.sequence.items.start);
        p->constraints = opdb_xcalloc(cnt + 1, sizeof *p->constraints);
        for (yaml_node_item_t *it = cons->data.sequence.items.start; it < cons->data.sequence.items.top; it++) {
            yaml_node_t *v = yaml_document_get_node(&L->doc, *it);
            grid_expr_src *e = &p->constraints[p->nconstraints++];
            if (!scalar(v)) return lfail(L, v, "a constraint must be a string", NULL);
            e->text = opdb_xstrdup(scalar(v));
            e->line = line_of(v);
            if (compile(L, v, e->text, &e->e)) return -1;
        }
    }
    if (templates(L, map_get(L, n, "inputs"), &p->inputs, &p->ninputs)) return -1;
    if (templates(L, map_get(L, n, "outputs"), &p->outputs, &p->noutputs)) return -1;
    for (int i = 0; i < 4; i++) {
        yaml_node_t *o = map_get(L, n, k_override_keys[i]);
        if (!o) continue;
        if (o->type != YAML_SEQUENCE_NODE) return lfail(L, o, "an override must be a list of strings", NULL);
        opdb_strbuf sb;
        opdb_sb_init(&sb);
        for (yaml_node_item_t *it = o->data.sequence.items.start; it < o->data.sequence.items.top; it++) {
            const char *s = scalar(yaml_document_get_node(&L->doc, *it));
            if (it != o->data.sequence.items.start) opdb_sb_addc(&sb, ';');
            opdb_sb_adds(&sb, s ? s : "");
        }
        p->over[i] = opdb_xstrdup(sb.p ? sb.p : "");
        opdb_sb_free(&sb);
    }
    return 0;
}

static int load_doc(loader *L) {
    yaml_node_t *root = yaml_document_get_root_node(&L->doc);
    if (!root || root->type != YAML_MAPPING_NODE) return lfail(L, root, "the configuration must be a mapping", NULL);
    opdb_grid_config *c = L->c;
    yaml_node_t *g = map_get(L, root, "grids");
    if (g) {
        if (g->type != YAML_MAPPING_NODE) return lfail(L, g, "grids must be a mapping", NULL);
        size_t cnt = (size_t)(g->data.mapping.pairs.top - g->data.mapping.pairs.start);
        c->grid_names = opdb_xcalloc(cnt + 1, sizeof *c->grid_names);
        c->grid_vals = opdb_xcalloc(cnt + 1, sizeof *c->grid_vals);
        c->grid_lens = opdb_xcalloc(cnt + 1, sizeof *c->grid_lens);
        for (yaml_node_pair_t *p = g->data.mapping.pairs.start; p < g->data.mapping.pairs.top; p++) {
            yaml_node_t *k = yaml_document_get_node(&L->doc, p->key);
            if (!scalar(k)) return lfail(L, k, "grid name must be a string", NULL);
            size_t g_i = c->ngrids++; /* counted before filling: a failure frees what was made */
            c->grid_names[g_i] = opdb_xstrdup(scalar(k));
            if (int_list(L, yaml_document_get_node(&L->doc, p->value), &c->grid_vals[g_i], &c->grid_lens[g_i])) return -1;
        }
    }
    yaml_node_t *ps = map_get(L, root, "patterns");
    if (!ps || ps->type != YAML_MAPPING_NODE) return lfail(L, ps ? ps : root, "missing 'patterns' mapping", NULL);
    size_t cnt = (size_t)(ps->data.mapping.pairs.top - ps->data.mapping.pairs.start);
    c->patterns = opdb_xcalloc(cnt + 1, sizeof *c->patterns);
    for (yaml_node_pair_t *p = ps->data.mapping.pairs.start; p < ps->data.mapping.pairs.top; p++) {
        yaml_node_t *k = yaml_document_get_node(&L->doc, p->key);
        if (!scalar(k)) return lfail(L, k, "pattern name must be a string", NULL);
        if (pattern(L, scalar(k), yaml_document_get_node(&L->doc, p->value), &c->patterns[c->npatterns++])) return -1;
    }
    yaml_node_t *as = map_get(L, root, "assignments");
    if (!as || as->type != YAML_MAPPING_NODE) return lfail(L, as ? as : root, "missing 'assignments' mapping", NULL);
    for (yaml_node_pair_t *p = as->data.mapping.pairs.start; p < as->data.mapping.pairs.top; p++) {
        yaml_node_t *k = yaml_document_get_node(&L->doc, p->key), *v = yaml_document_get_node(&L->doc, p->value);
        if (!scalar(k)) return lfail(L, k, "pattern name must be a string", NULL);
        if (!v || v->type != YAML_SEQUENCE_NODE) return lfail(L, v, "assignments map a pattern to a list of kernel types", NULL);
        for (yaml_node_item_t *it = v->data.sequence.items.start; it < v->data.sequence.items.top; it++) {
            yaml_node_t *kt = yaml_document_get_node(&L->doc, *it);
            if (!scalar(kt)) return lfail(L, kt, "a kernel type must be a string", NULL);
            c->assigns = opdb_xrealloc(c->assigns, (c->nassigns + 1) * sizeof *c->assigns);
            c->assigns[c->nassigns].kernel_type = opdb_xstrdup(scalar(kt));
            c->assigns[c->nassigns++].pattern = opdb_xstrdup(scalar(k));
        }
    }
    return 0;
}

opdb_grid_config *opdb_grid_config_load(const char *text, size_t len, const char *name, opdb_err *err) {
    if (opdb_yaml_depth_check(text, len, OPDB_YAML_MAX_DEPTH, name, err)) { /* before libyaml: linear */
        err->code = OPDB_ERR_USAGE;
        return NULL;
    }
    loader L = {.err = err};
    L.c = opdb_xcalloc(1, sizeof *L.c);
    L.c->name = opdb_xstrdup(name);
    yaml_parser_t parser;
    yaml_parser_initialize(&parser);
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    if (!yaml_parser_load(&parser, &L.doc)) {
        opdb_fail(err, OPDB_ERR_USAGE, "%s:%zu: YAML error: %s", name, parser.problem_mark.line + 1,
                  parser.problem ? parser.problem : "malformed");
        yaml_parser_delete(&parser);
        opdb_grid_config_free(L.c);
        return NULL;
    }
    yaml_parser_delete(&parser);
    int rc = load_doc(&L);
    yaml_document_delete(&L.doc);
    if (rc) { /* one line: quoted text from the config may hold line breaks */
        for (char *m = err->msg; *m; m++)
            if ((unsigned char)*m < 0x20) *m = ' ';
        opdb_grid_config_free(L.c);
        return NULL;
    }
    return L.c;
}

static void free_iters(grid_iter *it, size_t n) {
    for (size_t i = 0; i < n; i++) free(it[i].var), free(it[i].vals);
    free(it);
}
static void free_tmpls(grid_tmpl *t, size_t n) {
    for (size_t i = 0; i < n; i++) {
        free(t[i].text);
        for (int d = 0; d < t[i].ndims; d++) opdb_grid_expr_free(t[i].dims[d].expr);
    }
    free(t);
}

void opdb_grid_config_free(opdb_grid_config *c) {
    if (!c) return;
    for (size_t i = 0; i < c->ngrids; i++) free(c->grid_names[i]), free(c->grid_vals[i]);
    free(c->grid_names), free(c->grid_vals), free(c->grid_lens);
    for (size_t i = 0; i < c->npatterns; i++) {
        grid_pattern *p = &c->patterns[i];
        free(p->name), free(p->generator);
        free_iters(p->iters, p->niters);
        free_iters(p->fallback, p->nfallback);
        for (size_t k = 0; k < p->nconsts; k++) free(p->const_names[k]);
        free(p->const_names), free(p->const_vals);
        for (size_t k = 0; k < p->nconstraints; k++) free(p->constraints[k].text), opdb_grid_expr_free(p->constraints[k].e);
        free(p->constraints);
        free_tmpls(p->inputs, p->ninputs);
        free_tmpls(p->outputs, p->noutputs);
        for (int k = 0; k < 4; k++) free(p->over[k]);
    }
    free(c->patterns);
    for (size_t i = 0; i < c->nassigns; i++) free(c->assigns[i].kernel_type), free(c->assigns[i].pattern);
    free(c->assigns);
    free(c->name);
    free(c);
}

const grid_pattern *grid_config_pattern(const opdb_grid_config *c, const char *name) {
    for (size_t i = 0; i < c->npatterns; i++)
        if (!strcmp(c->patterns[i].name, name)) return &c->patterns[i];
    return NULL;
}
const char *grid_config_assignment(const opdb_grid_config *c, const char *kt) {
    const char *r = NULL; /* a kernel type named twice: the last wins, as a dict would */
    for (size_t i = 0; i < c->nassigns; i++)
        if (!strcmp(c->assigns[i].kernel_type, kt)) r = c->assigns[i].pattern;
    return r;
}
const int64_t *grid_config_grid(const opdb_grid_config *c, const char *name, size_t *n) {
    for (size_t i = 0; i < c->ngrids; i++)
        if (!strcmp(c->grid_names[i], name)) {
            *n = c->grid_lens[i];
            return c->grid_vals[i];
        }
    return NULL;
}
