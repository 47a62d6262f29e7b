/* op_mapping.yaml as the reference sees it through yaml.safe_load: entries
 * are looked up by name, must be non-empty mappings, and their kernel_type /
 * zero_cost values are judged by Python truthiness of PyYAML's YAML 1.1
 * implicit types (so `zero_cost: yes` is true and `zero_cost: 0` false). */
#include <errno.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "opdb/compare.h"
#include "opdb/fs.h"
#include "opdb/limits.h"

struct opdb_cmp_mapping {
    yaml_document_t doc;
    bool loaded;
    bool nested_too;
    regex_t re_int, re_float;
};

/* PyYAML's implicit resolvers (resolver.py) for the types truthiness needs. */
static const char *k_re_int =
    "^([-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+|[-+]?[1-9][0-9_]*(:[0-5]?[0-9])+)$";
static const char *k_re_float =
    "^([-+]?([0-9][0-9_]*)\\.[0-9_]*([eE][-+][0-9]+)?|\\.[0-9][0-9_]*([eE][-+][0-9]+)?"
    "|[-+]?[0-9][0-9_]*(:[0-5]?[0-9])+\\.[0-9_]*|[-+]?\\.(inf|Inf|INF)|\\.(nan|NaN|NAN))$";

typedef enum { Y_ABSENT, Y_NULL, Y_FALSE, Y_TRUE, Y_ZERO, Y_NUMBER, Y_STR, Y_SEQ, Y_MAP } ykind;

static bool one_of(const char *s, const char *const *words) {
    for (; *words; words++)
        if (strcmp(s, *words) == 0) return true;
    return false;
}

/* Python type/truthiness class of a node. */
static ykind node_kind(const opdb_cmp_mapping *m, yaml_node_t *n) {
    static const char *const nulls[] = {"~", "null", "Null", "NULL", "", NULL};
    static const char *const trues[] = {"yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON", NULL};
    static const char *const falses[] = {"no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF", NULL};
    if (!n) return Y_ABSENT;
    if (n->type == YAML_SEQUENCE_NODE) return Y_SEQ;
    if (n->type == YAML_MAPPING_NODE) return Y_MAP;
    if (n->type != YAML_SCALAR_NODE) return Y_NULL;
    const char *s = (const char *)n->data.scalar.value;
    if (n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE) return Y_STR;
    if (one_of(s, nulls)) return Y_NULL;
    if (one_of(s, trues)) return Y_TRUE;
    if (one_of(s, falses)) return Y_FALSE;
    bool is_int = regexec(&m->re_int, s, 0, NULL, 0) == 0;
    if (is_int || regexec(&m->re_float, s, 0, NULL, 0) == 0) {
        if (strpbrk(s, "nN")) return Y_NUMBER; /* inf / nan */
        const char *body = s + strspn(s, "+-");
        if (is_int && body[0] == '0' && body[1] && strchr("bxBX", body[1])) body += 2;
        size_t len = is_int ? strlen(body) : strcspn(body, "eE"); /* a zero mantissa is zero */
        for (size_t c = 0; c < len; c++) {
            char d = body[c];
            if ((d >= '1' && d <= '9') || (d >= 'a' && d <= 'f') || (d >= 'A' && d <= 'F')) return Y_NUMBER;
        }
        return Y_ZERO;
    }
    return Y_STR;
}

static bool truthy(const opdb_cmp_mapping *m, yaml_node_t *n) {
    switch (node_kind(m, n)) {
    case Y_TRUE:
    case Y_NUMBER: return true;
    case Y_STR: return n->data.scalar.length > 0;
    case Y_SEQ: return n->data.sequence.items.top > n->data.sequence.items.start;
    case Y_MAP: return n->data.mapping.pairs.top > n->data.mapping.pairs.start;
    default: return false;
    }
}

static yaml_node_t *node_at(const opdb_cmp_mapping *m, int idx) {
    return yaml_document_get_node((yaml_document_t *)&m->doc, idx);
}

/* The mappings one look-up has entered through `<<`: each is searched once,
 * so a merge cycle (`&r {<<: *r}`, which the reference's PyYAML never
 * finishes) ends and a chain of doubling merges stays linear. A mapping
 * searched once without a hit has none the second time. */
typedef struct merge_seen {
    unsigned char *seen; /* by node index; allocated at the first merge */
    size_t n;
} merge_seen;

static yaml_node_t *map_get_in(const opdb_cmp_mapping *m, yaml_node_t *map, const char *key, size_t keylen, int depth,
                               merge_seen *ms);

static yaml_node_t *merged_get(const opdb_cmp_mapping *m, yaml_node_t *map, const char *key, size_t keylen, int depth,
                               merge_seen *ms) {
    if (!ms->seen) {
        ms->n = (size_t)(m->doc.nodes.top - m->doc.nodes.start);
        ms->seen = opdb_xcalloc(ms->n ? ms->n : 1, 1);
    }
    size_t i = (size_t)(map - m->doc.nodes.start);
    if (i >= ms->n || ms->seen[i]) return NULL;
    ms->seen[i] = 1;
    return map_get_in(m, map, key, keylen, depth + 1, ms);
}

/* mapping[key] as a Python dict built by PyYAML: the last explicit key
 * wins; else the merged (`<<`) mappings, earlier ones first. */
static yaml_node_t *map_get_in(const opdb_cmp_mapping *m, yaml_node_t *map, const char *key, size_t keylen, int depth,
                               merge_seen *ms) {
    if (!map || map->type != YAML_MAPPING_NODE || depth > 32) return NULL;
    yaml_node_t *hit = NULL;
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
        yaml_node_t *k = node_at(m, p->key);
        if (node_kind(m, k) != Y_STR || k->data.scalar.length != keylen) continue;
        if (memcmp(k->data.scalar.value, key, keylen) == 0) hit = node_at(m, p->value);
    }
    if (hit) return hit;
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
        yaml_node_t *k = node_at(m, p->key);
        if (k->type != YAML_SCALAR_NODE || k->data.scalar.style != YAML_PLAIN_SCALAR_STYLE ||
            strcmp((const char *)k->data.scalar.value, "<<") != 0)
            continue;
        yaml_node_t *v = node_at(m, p->value);
        if (v->type == YAML_MAPPING_NODE) return merged_get(m, v, key, keylen, depth, ms);
        if (v->type == YAML_SEQUENCE_NODE)
            for (yaml_node_item_t *it = v->data.sequence.items.start; it < v->data.sequence.items.top; it++) {
                yaml_node_t *e = node_at(m, *it);
                if (e && e->type == YAML_MAPPING_NODE && (hit = merged_get(m, e, key, keylen, depth, ms))) return hit;
            }
    }
    return NULL;
}

static yaml_node_t *map_get(const opdb_cmp_mapping *m, yaml_node_t *map, const char *key, size_t keylen, int depth) {
    merge_seen ms = {NULL, 0};
    yaml_node_t *hit = map_get_in(m, map, key, keylen, depth, &ms);
    free(ms.seen);
    return hit;
}

int opdb_cmp_mapping_load(opdb_cmp_mapping **out, const char *data_dir, bool nested_too, opdb_err *err) {
    opdb_cmp_mapping *m = opdb_xcalloc(1, sizeof *m);
    m->nested_too = nested_too;
    if (regcomp(&m->re_int, k_re_int, REG_EXTENDED | REG_NOSUB) ||
        regcomp(&m->re_float, k_re_float, REG_EXTENDED | REG_NOSUB))
        abort(); /* constant patterns */
    *out = m;
    if (!data_dir) return 0; /* no --data-dir (default mode): an empty mapping */
    char *path = opdb_path_join(data_dir, "op_mapping.yaml");
    if (!opdb_path_exists(path)) {
        if (nested_too) /* default mode: a data folder given for nothing is said (the reference is silent) */
            opdb_warn_nothing("%s: %s, so no operator mapping is applied (zero-cost, communication and alias "
                              "entries come from op_mapping.yaml)",
                              data_dir, opdb_is_dir(data_dir) ? "no op_mapping.yaml in this folder" : "no such folder");
        free(path);
        return 0;
    }
    opdb_strbuf text;
    opdb_sb_init(&text);
    FILE *f = fopen(path, "rb");
    if (!f) {
        int rc = opdb_fail(err, OPDB_ERR_RUNTIME, "%s: cannot open: %s", path, strerror(errno));
        free(path);
        return rc;
    }
    fclose(f);
    /* nesting checked in one linear pass before libyaml (quadratic on deep input), as grid does */
    if (opdb_read_file(path, &text, err) || opdb_yaml_depth_check(text.p, text.n, OPDB_YAML_MAX_DEPTH, path, err)) {
        opdb_sb_free(&text);
        free(path);
        return -1;
    }
    yaml_parser_t parser;
    yaml_parser_initialize(&parser);
    yaml_parser_set_input_string(&parser, (const unsigned char *)(text.p ? text.p : ""), text.n);
    int rc = 0;
    if (!yaml_parser_load(&parser, &m->doc)) {
        rc = opdb_fail(err, OPDB_ERR_RUNTIME, "%s: invalid YAML at line %zu column %zu: %s", path,
                       parser.problem_mark.line + 1, parser.problem_mark.column + 1,
                       parser.problem ? parser.problem : "parse error");
    } else {
        m->loaded = true;
        yaml_node_t *root = yaml_document_get_root_node(&m->doc);
        /* safe_load(f) or {}: a falsy document is an empty mapping, a truthy
         * non-mapping one makes the reference fail on .get() */
        if (root && root->type != YAML_MAPPING_NODE && truthy(m, root))
            rc = opdb_fail(err, OPDB_ERR_RUNTIME, "%s: the document is not a mapping of op names", path);
    }
    yaml_parser_delete(&parser);
    opdb_sb_free(&text);
    free(path);
    return rc;
}

void opdb_cmp_mapping_free(opdb_cmp_mapping *m) {
    if (!m) return;
    if (m->loaded) yaml_document_delete(&m->doc);
    regfree(&m->re_int);
    regfree(&m->re_float);
    free(m);
}

char *opdb_cmp_short_name(const char *op, size_t *len) {
    opdb_strbuf sb;
    opdb_sb_init(&sb);
    for (const char *p = op; *p;) {
        if (strncmp(p, "torch.ops.", 10) == 0) p += 10;
        else opdb_sb_addc(&sb, *p++);
    }
    opdb_sb_addc(&sb, '\0');
    *len = sb.n - 1;
    return sb.p;
}

/* _get_op_entry against one mapping node. */
static yaml_node_t *op_entry(const opdb_cmp_mapping *m, yaml_node_t *map, const char *shortname, const char *op) {
    yaml_node_t *e = map_get(m, map, shortname, strlen(shortname), 0);
    if (!truthy(m, e)) e = map_get(m, map, op, strlen(op), 0);
    return truthy(m, e) && e->type == YAML_MAPPING_NODE ? e : NULL;
}

void opdb_cmp_mapping_lookup(const opdb_cmp_mapping *m, const char *op, const char **kt, bool *zero_cost) {
    *kt = NULL;
    *zero_cost = false;
    if (!m->loaded) return;
    yaml_node_t *root = yaml_document_get_root_node((yaml_document_t *)&m->doc);
    if (!root || root->type != YAML_MAPPING_NODE) return;
    size_t n;
    char *shortname = opdb_cmp_short_name(op, &n);
    yaml_node_t *e = op_entry(m, root, shortname, op);
    if (!e && m->nested_too) e = op_entry(m, map_get(m, root, "operator_mappings", 17, 0), shortname, op);
    free(shortname);
    if (!e) return;
    yaml_node_t *k = map_get(m, e, "kernel_type", 11, 0);
    if (truthy(m, k) && k->type == YAML_SCALAR_NODE) *kt = (const char *)k->data.scalar.value;
    *zero_cost = truthy(m, map_get(m, e, "zero_cost", 9, 0));
}
