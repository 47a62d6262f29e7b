/* Operator metadata from <root>/op_mapping.yaml (grid.md §3) and generator
 * resolution for a kernel type. */
#include <stdlib.h>
#include <string.h>
#include <yaml.h>
#include "grid/grid_opmap.h"
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
    const yaml_node_t *list = root && root->type == YAML_MAPPING_NODE ? get(&doc, root, "operator_mappings") : NULL;
    if (list && list->type == YAML_SEQUENCE_NODE) {
        for (yaml_node_item_t *it = list->data.sequence.items.start; it < list->data.sequence.items.top; it++) {
            yaml_node_t *e = yaml_document_get_node(&doc, *it);
            if (!e || e->type != YAML_MAPPING_NODE) continue;
            const char *kt = str(get(&doc, e, "kernel_type"));
            if (!kt) continue;
            const char *cat = str(get(&doc, e, "category"));
            grid_opmeta meta = {NULL, truthy(get(&doc, e, "zero_cost")), truthy(get(&doc, e, "composite")),
                                cat && !strcmp(cat, "communication"), (char *)str(get(&doc, e, "query_mode")), NULL};
            add(m, kt, &meta);
            const yaml_node_t *alts = get(&doc, e, "alternate_kernel_types");
            if (!alts || alts->type != YAML_SEQUENCE_NODE) continue;
            meta.alternates_of = (char *)kt;
            for (yaml_node_item_t *a = alts->data.sequence.items.start; a < alts->data.sequence.items.top; a++) {
                const char *an = str(yaml_document_get_node(&doc, *a));
                if (an) add(m, an, &meta);
            }
        }
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
