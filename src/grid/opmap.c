/* Operator metadata from <root>/op_mapping.yaml (docs/GRID.md §3) and generator
 * resolution for a kernel type.  `operator_mappings` maps a framework op name
 * to an entry, as in every real op_mapping.yaml; its entries are read in file
 * order. */
#include <stdlib.h>
#include <string.h>
#include <yaml.h>
#include "grid/grid_opmap.h"
#include "opdb/core.h"
#include "opdb/limits.h"

/* Python truthiness of a YAML 1.1 scalar as PyYAML loads it. */
static bool truthy(const yaml_node_t *n) {
    if (!n) return false;
    if (n->type != YAML_SCALAR_NODE) return n->type == YAML_MAPPING_NODE ? n->data.mapping.pairs.top != n->data.mapping.pairs.start
                                                                        : n->data.sequence.items.top != n->data.sequence.items.start;
    const char *s = (const char *)n->data.scalar.value;
    if (n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE) return *s != '\0';
    static const char *const falsy[] = {"", "~", "null", "Null", "NULL", "false", "False", "FALSE", "no", "No", "NO",
                                        "off", "Off", "OFF", "0", "0.0", "-0", "+0", "0x0", "0o0"};
    for (size_t i = 0; i < sizeof falsy / sizeof falsy[0]; i++)
        if (!strcmp(s, falsy[i])) return false;
    return true;
}

static const yaml_node_t *get(yaml_document_t *d, const yaml_node_t *m, const char *key) {
    for (yaml_node_pair_t *p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top; p++) {
        yaml_node_t *k = yaml_document_get_node(d, p->key);
        if (k && k->type == YAML_SCALAR_NODE && !strcmp((const char *)k->data.scalar.value, key))
            return yaml_document_get_node(d, p->value);
    }
    return NULL;
}
static const char *str(const yaml_node_t *n) {
    return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

static void add(grid_opmap *m, const char *kt, const grid_opmeta *meta) {
    for (size_t i = 0; i < m->n; i++)
        if (!strcmp(m->e[i].kernel_type, kt)) return; /* first entry wins */
    m->e = opdb_xrealloc(m->e, (m->n + 1) * sizeof *m->e);
    m->e[m->n] = *meta;
    m->e[m->n].kernel_type = opdb_xstrdup(kt);
    m->e[m->n].alternates_of = meta->alternates_of ? opdb_xstrdup(meta->alternates_of) : NULL;
    m->e[m->n].query_mode = meta->query_mode ? opdb_xstrdup(meta->query_mode) : NULL;
    m->n++;
}

/* A kernel type given as a non-empty string or number; NULL for a null,
 * an empty string or anything that is not a scalar. */
static const char *kernel_name(const yaml_node_t *n) {
    const char *s = str(n);
    if (!s || !*s) return NULL;
    if (n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE && (!strcmp(s, "~") || !strcmp(s, "null") ||
                                                           !strcmp(s, "Null") || !strcmp(s, "NULL")))
        return NULL;
    return s;
}

/* One operator_mappings entry: the flags for its kernel type, then for each
 * alternate kernel type (first entry wins for each name). */
static void add_entry(yaml_document_t *d, const yaml_node_t *e, grid_opmap *m) {
    if (!e || e->type != YAML_MAPPING_NODE) return;
    const char *kt = kernel_name(get(d, e, "kernel_type"));
    if (!kt) return;
    const char *cat = str(get(d, e, "category"));
    grid_opmeta meta = {NULL, truthy(get(d, e, "zero_cost")), truthy(get(d, e, "composite")),
                        cat && !strcmp(cat, "communication"), (char *)str(get(d, e, "query_mode")), NULL};
    add(m, kt, &meta);
    const yaml_node_t *alts = get(d, e, "alternate_kernel_types");
    if (!alts || alts->type != YAML_SEQUENCE_NODE) return;
    meta.alternates_of = (char *)kt;
    for (yaml_node_item_t *a = alts->data.sequence.items.start; a < alts->data.sequence.items.top; a++) {
        const char *an = kernel_name(yaml_document_get_node(d, *a));
        if (an) add(m, an, &meta);
    }
}

/* The value nodes of mapping n in the order a Python dict built from it
 * iterates them: a key given twice keeps its first place and takes its last
 * value.  Returns how many were written to val. */
static size_t dict_values(yaml_document_t *d, const yaml_node_t *n, int *val) {
    size_t nval = 0;
    const char **key = opdb_xmalloc(((size_t)(n->data.mapping.pairs.top - n->data.mapping.pairs.start) + 1) * sizeof *key);
    opdb_hindex ix = {0};
    for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
        const char *k = str(yaml_document_get_node(d, p->key));
        if (k) {
            uint64_t h = opdb_hash_bytes(k, strlen(k), 0);
            bool seen = false;
            uint32_t j;
            for (opdb_hprobe pr = opdb_hindex_probe(&ix, h); !seen && opdb_hprobe_next(&pr, &j);)
                if (!strcmp(key[j], k)) val[j] = p->value, seen = true;
            if (seen) continue;
            opdb_hindex_add(&ix, h, (uint32_t)nval);
        }
        key[nval] = k ? k : "";
        val[nval++] = p->value;
    }
    opdb_hindex_free(&ix);
    free(key);
    return nval;
}

int grid_opmap_load(const char *path, grid_opmap *m, opdb_err *err) {
    memset(m, 0, sizeof *m);
    opdb_strbuf text;
    opdb_sb_init(&text);
    if (opdb_read_file(path, &text, err)) return -1;
    m->present = true;
    if (opdb_yaml_depth_check(text.p, text.n, OPDB_YAML_MAX_DEPTH, path, err)) { /* before libyaml: linear */
        opdb_sb_free(&text);
        return -1;
    }
    yaml_parser_t parser;
    yaml_document_t doc;
    yaml_parser_initialize(&parser);
    yaml_parser_set_input_string(&parser, (const unsigned char *)text.p, text.n);
    if (!yaml_parser_load(&parser, &doc)) {
        opdb_fail(err, OPDB_ERR_RUNTIME, "%s:%zu: YAML error: %s", path, parser.problem_mark.line + 1,
                  parser.problem ? parser.problem : "malformed");
        yaml_parser_delete(&parser);
        opdb_sb_free(&text);
        return -1;
    }
    yaml_parser_delete(&parser);
    opdb_sb_free(&text);
    yaml_node_t *root = yaml_document_get_root_node(&doc);
    const yaml_node_t *ops = root && root->type == YAML_MAPPING_NODE ? get(&doc, root, "operator_mappings") : NULL;
    if (ops && ops->type == YAML_MAPPING_NODE) { /* op name -> entry; a list or a scalar gives nothing */
        size_t n = (size_t)(ops->data.mapping.pairs.top - ops->data.mapping.pairs.start);
        int *val = opdb_xmalloc((n ? n : 1) * sizeof *val);
        size_t nval = dict_values(&doc, ops, val);
        for (size_t i = 0; i < nval; i++) add_entry(&doc, yaml_document_get_node(&doc, val[i]), m);
        free(val);
    }
    yaml_document_delete(&doc);
    return 0;
}

void grid_opmap_free(grid_opmap *m) {
    for (size_t i = 0; i < m->n; i++) free(m->e[i].kernel_type), free(m->e[i].alternates_of), free(m->e[i].query_mode);
    free(m->e);
    memset(m, 0, sizeof *m);
}

const grid_pattern *grid_resolve(const opdb_grid_config *cfg, const grid_opmap *m, const char *kt) {
    const grid_opmeta *meta = NULL;
    for (size_t i = 0; i < m->n && !meta; i++)
        if (!strcmp(m->e[i].kernel_type, kt)) meta = &m->e[i];
    if (meta && (meta->zero_cost || meta->composite || meta->communication)) return NULL;
    const char *pat = grid_config_assignment(cfg, kt);
    if (!pat && meta && meta->alternates_of) pat = grid_config_assignment(cfg, meta->alternates_of);
    if (!pat && meta && meta->query_mode && !strcmp(meta->query_mode, "elementwise")) pat = "elementwise_binary";
    return pat ? grid_config_pattern(cfg, pat) : NULL;
}
