/* A safe evaluator for the grid's shape and constraint expressions: a Python
 * subset over named integers (docs/GRID.md §5.2).  No names other than the
 * variables and max/min/abs/align; no attribute access, no I/O.  Bounded:
 * 512 bytes of text, 64 levels of nesting, int64 with overflow = error. */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "opdb/core.h"
#include "opdb/grid.h"

#define EXPR_MAX_LEN 512
#define EXPR_MAX_DEPTH 64
#define EXPR_MAX_ARGS 16

enum { N_INT, N_VAR, N_NEG, N_POS, N_NOT, N_BIN, N_CMP, N_AND, N_OR, N_CALL };
enum { OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_FLOORDIV, OP_MOD, OP_POW, OP_LT, OP_LE, OP_GT, OP_GE, OP_EQ, OP_NE };
enum { F_MAX, F_MIN, F_ABS, F_ALIGN };

typedef struct node {
    int kind, op;
    int slot; /* N_VAR: the variable's index in the bound names (-1: look it up by name) */
    int64_t ival;
    char *name;
    struct node **kids;
    int nkids;
} node;

struct opdb_grid_expr {
    node *root;
    const char *const *bound; /* the names array the slots were bound to (NULL: none) */
    size_t bound_n;
};

typedef struct parser {
    const char *s;
    size_t pos;
    int depth;
    char *msg;
    size_t cap;
    bool failed;
} parser;

static node *mk(int kind) {
    node *n = opdb_xcalloc(1, sizeof *n);
    n->kind = kind;
    n->slot = -1;
    return n;
}
static void addkid(node *n, node *k) {
    n->kids = opdb_xrealloc(n->kids, (size_t)(n->nkids + 1) * sizeof *n->kids);
    n->kids[n->nkids++] = k;
}
static void node_free(node *n) {
    if (!n) return;
    for (int i = 0; i < n->nkids; i++) node_free(n->kids[i]);
    free(n->kids);
    free(n->name);
    free(n);
}

static node *perr(parser *p, const char *what) {
    if (!p->failed) snprintf(p->msg, p->cap, "%s at offset %zu", what, p->pos);
    p->failed = true;
    return NULL;
}
static void ws(parser *p) {
    while (p->s[p->pos] == ' ' || p->s[p->pos] == '\t') p->pos++;
}
static bool eat(parser *p, const char *tok) {
    ws(p);
    size_t n = strlen(tok);
    if (strncmp(p->s + p->pos, tok, n) != 0) return false;
    /* keywords must end at a word boundary; `*` must not be `**`, `/` not `//` ... */
    char next = p->s[p->pos + n];
    if (isalpha((unsigned char)tok[0]) && (isalnum((unsigned char)next) || next == '_')) return false;
    if ((!strcmp(tok, "*") && next == '*') || (!strcmp(tok, "/") && next == '/')) return false;
    if ((!strcmp(tok, "<") || !strcmp(tok, ">")) && next == '=') return false;
    p->pos += n;
    return true;
}

static node *p_or(parser *p);

static node *p_atom(parser *p) {
    ws(p);
    char c = p->s[p->pos];
    if (isdigit((unsigned char)c)) {
        int64_t v = 0;
        while (isdigit((unsigned char)p->s[p->pos]) || p->s[p->pos] == '_') {
            if (p->s[p->pos] == '_') { p->pos++; continue; }
            if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, p->s[p->pos] - '0', &v))
                return perr(p, "integer literal too large");
            p->pos++;
        }
        if (isalpha((unsigned char)p->s[p->pos])) return perr(p, "invalid literal");
        node *n = mk(N_INT);
        n->ival = v;
        return n;
    }
    if (isalpha((unsigned char)c) || c == '_') {
        size_t b = p->pos;
        while (isalnum((unsigned char)p->s[p->pos]) || p->s[p->pos] == '_') p->pos++;
        size_t len = p->pos - b;
        if (len >= 2 && p->s[b] == '_' && p->s[b + 1] == '_') return perr(p, "dunder names are not allowed");
        char *name = opdb_xmalloc(len + 1);
        memcpy(name, p->s + b, len);
        name[len] = '\0';
        if (!strcmp(name, "and") || !strcmp(name, "or") || !strcmp(name, "not")) {
            free(name);
            return perr(p, "unexpected keyword");
        }
        ws(p);
        if (p->s[p->pos] == '(') {
            p->pos++;
            int f = !strcmp(name, "max") ? F_MAX : !strcmp(name, "min") ? F_MIN : !strcmp(name, "abs") ? F_ABS
                    : !strcmp(name, "align") ? F_ALIGN : -1;
            if (f < 0) {
                free(name);
                return perr(p, "unknown function");
            }
            node *n = mk(N_CALL);
            n->op = f;
            n->name = name;
            if (++p->depth > EXPR_MAX_DEPTH) { node_free(n); return perr(p, "expression nested too deeply"); }
            if (!eat(p, ")")) {
                for (;;) {
                    node *a = p_or(p);
                    if (!a) { node_free(n); return NULL; }
                    if (n->nkids >= EXPR_MAX_ARGS) { node_free(a); node_free(n); return perr(p, "too many arguments"); }
                    addkid(n, a);
                    if (eat(p, ")")) break;
                    if (!eat(p, ",")) { node_free(n); return perr(p, "expected ',' or ')'"); }
                    if (eat(p, ")")) break; /* trailing comma */
                }
            }
            p->depth--;
            if ((f == F_ABS && n->nkids != 1) || (f == F_ALIGN && n->nkids != 2) || n->nkids < 1) {
                node_free(n);
                return perr(p, "wrong number of arguments");
            }
            return n;
        }
        node *n = mk(N_VAR);
        n->name = name;
        return n;
    }
    if (c == '(') {
        p->pos++;
        if (++p->depth > EXPR_MAX_DEPTH) return perr(p, "expression nested too deeply");
        node *n = p_or(p);
        if (!n) return NULL;
        if (!eat(p, ")")) { node_free(n); return perr(p, "expected ')'"); }
        p->depth--;
        return n;
    }
    return perr(p, c ? "unexpected character" : "unexpected end of expression");
}

static node *p_unary(parser *p);
static node *p_power(parser *p) {
    node *b = p_atom(p);
    if (!b) return NULL;
    if (eat(p, "**")) {
        if (++p->depth > EXPR_MAX_DEPTH) { node_free(b); return perr(p, "expression nested too deeply"); }
        node *e = p_unary(p); /* right associative, binds a unary minus on its right */
        p->depth--;
        if (!e) { node_free(b); return NULL; }
        node *n = mk(N_BIN);
        n->op = OP_POW;
        addkid(n, b);
        addkid(n, e);
        return n;
    }
    return b;
}
static node *p_unary(parser *p) {
    int kind = eat(p, "-") ? N_NEG : eat(p, "+") ? N_POS : -1;
    if (kind < 0) return p_power(p);
    if (++p->depth > EXPR_MAX_DEPTH) return perr(p, "expression nested too deeply");
    node *k = p_unary(p);
    p->depth--;
    if (!k) return NULL;
    node *n = mk(kind);
    addkid(n, k);
    return n;
}
static node *p_binary(parser *p, int level) {
    static const char *const ops[2][4] = {{"+", "-", NULL, NULL}, {"*", "//", "/", "%"}};
    static const int codes[2][4] = {{OP_ADD, OP_SUB, 0, 0}, {OP_MUL, OP_FLOORDIV, OP_DIV, OP_MOD}};
    node *l = level == 1 ? p_unary(p) : p_binary(p, level + 1);
    while (l) {
        int op = -1;
        for (int i = 0; i < 4 && ops[level][i]; i++)
            if (eat(p, ops[level][i])) { op = codes[level][i]; break; }
        if (op < 0) break;
        node *r = level == 1 ? p_unary(p) : p_binary(p, level + 1);
        if (!r) { node_free(l); return NULL; }
        node *n = mk(N_BIN);
        n->op = op;
        addkid(n, l);
        addkid(n, r);
        l = n;
    }
    return l;
}
static node *p_cmp(parser *p) {
    static const char *const ops[] = {"<=", ">=", "==", "!=", "<", ">"};
    static const int codes[] = {OP_LE, OP_GE, OP_EQ, OP_NE, OP_LT, OP_GT};
    node *first = p_binary(p, 0);
    if (!first) return NULL;
    node *chain = NULL;
    for (;;) {
        int op = -1;
        for (int i = 0; i < 6; i++)
            if (eat(p, ops[i])) { op = codes[i]; break; }
        if (op < 0) break;
        if (!chain) {
            chain = mk(N_CMP);
            addkid(chain, first);
        }
        node *r = p_binary(p, 0);
        if (!r) { node_free(chain); return NULL; }
        node *o = mk(N_INT);
        o->ival = op; /* operator codes ride between operands */
        addkid(chain, o);
        addkid(chain, r);
    }
    return chain ? chain : first;
}
static node *p_not(parser *p) {
    if (eat(p, "not")) {
        if (++p->depth > EXPR_MAX_DEPTH) return perr(p, "expression nested too deeply");
        node *k = p_not(p);
        p->depth--;
        if (!k) return NULL;
        node *n = mk(N_NOT);
        addkid(n, k);
        return n;
    }
    return p_cmp(p);
}
static node *p_andor(parser *p, int kind) {
    node *l = kind == N_OR ? p_andor(p, N_AND) : p_not(p);
    while (l && eat(p, kind == N_OR ? "or" : "and")) {
        node *r = kind == N_OR ? p_andor(p, N_AND) : p_not(p);
        if (!r) { node_free(l); return NULL; }
        node *n = mk(kind);
        addkid(n, l);
        addkid(n, r);
        l = n;
    }
    return l;
}
static node *p_or(parser *p) { return p_andor(p, N_OR); }

/* The rule of docs/GRID.md §5.2, checked before parsing: a '.' anywhere,
 * or "__" after the start, a non-word character or '_' (Python's
 * `(^|\b|[._ ])__`; bytes >= 0x80 count as word characters). */
static bool grid_expr_forbidden(const char *s) {
    if (strchr(s, '.')) return true;
    for (size_t i = 0; s[i]; i++) {
        if (s[i] != '_' || s[i + 1] != '_') continue;
        unsigned char prev = i ? (unsigned char)s[i - 1] : 0;
        if (!i || prev == '_' || !(isalnum(prev) || prev >= 0x80)) return true;
    }
    return false;
}

opdb_grid_expr *opdb_grid_expr_compile(const char *text, char *msg, size_t cap) {
    size_t len = strlen(text);
    if (len > EXPR_MAX_LEN) {
        snprintf(msg, cap, "expression longer than %d characters", EXPR_MAX_LEN);
        return NULL;
    }
    if (grid_expr_forbidden(text)) {
        snprintf(msg, cap, "%s", OPDB_GRID_EXPR_FORBIDDEN);
        return NULL;
    }
    parser p = {text, 0, 0, msg, cap, false};
    node *root = p_or(&p);
    if (root) {
        ws(&p);
        if (text[p.pos]) {
            node_free(root);
            root = perr(&p, "unexpected text");
        }
    }
    if (!root) return NULL;
    opdb_grid_expr *e = opdb_xcalloc(1, sizeof *e);
    e->root = root;
    return e;
}

/* Each variable's slot in v (the last binding of a name wins), or -1. */
static void bind_node(node *n, const opdb_grid_vars *v) {
    if (n->kind == N_VAR) {
        n->slot = -1;
        for (size_t i = v ? v->n : 0; i-- > 0;)
            if (!strcmp(v->names[i], n->name)) {
                n->slot = i <= INT32_MAX ? (int)i : -1;
                break;
            }
    }
    for (int i = 0; i < n->nkids; i++) bind_node(n->kids[i], v);
}

void opdb_grid_expr_bind(opdb_grid_expr *e, const opdb_grid_vars *v) {
    bind_node(e->root, v);
    e->bound = v ? v->names : NULL;
    e->bound_n = v ? v->n : 0;
}

void opdb_grid_expr_free(opdb_grid_expr *e) {
    if (!e) return;
    node_free(e->root);
    free(e);
}

/* ---- evaluation: a value is an int64 or a float (from `/` or a negative power) */
typedef struct val {
    bool fl;
    int64_t i;
    double f;
} val;

typedef struct evalctx {
    const opdb_grid_vars *v;
    bool bound; /* N_VAR slots index v */
    char *msg;
    size_t cap;
} evalctx;

static double asf(val a) { return a.fl ? a.f : (double)a.i; }
static bool truthy(val a) { return a.fl ? a.f != 0.0 : a.i != 0; }
static val vi(int64_t i) { val r = {false, i, 0}; return r; }
static val vf(double f) { val r = {true, 0, f}; return r; }
static int fail(evalctx *c, const char *m) {
    snprintf(c->msg, c->cap, "%s", m);
    return -1;
}

static int eval(const node *n, evalctx *c, val *out);

static int binop(int op, val a, val b, evalctx *c, val *out) {
    if (op >= OP_LT) {
        bool r;
        if (!a.fl && !b.fl) {
            int64_t x = a.i, y = b.i;
            r = op == OP_LT ? x < y : op == OP_LE ? x <= y : op == OP_GT ? x > y : op == OP_GE ? x >= y : op == OP_EQ ? x == y : x != y;
        } else {
            double x = asf(a), y = asf(b);
            r = op == OP_LT ? x < y : op == OP_LE ? x <= y : op == OP_GT ? x > y : op == OP_GE ? x >= y : op == OP_EQ ? x == y : x != y;
        }
        *out = vi(r);
        return 0;
    }
    if (op == OP_DIV) {
        if (asf(b) == 0.0) return fail(c, "division by zero");
        *out = vf(asf(a) / asf(b));
        return 0;
    }
    if (a.fl || b.fl) {
        double x = asf(a), y = asf(b), r;
        switch (op) {
        case OP_ADD: r = x + y; break;
        case OP_SUB: r = x - y; break;
        case OP_MUL: r = x * y; break;
        case OP_FLOORDIV:
            if (y == 0.0) return fail(c, "float floor division by zero");
            r = floor(x / y);
            break;
        case OP_MOD:
            if (y == 0.0) return fail(c, "float modulo");
            r = fmod(x, y);
            if (r != 0.0 && ((r < 0) != (y < 0))) r += y;
            break;
        default: r = pow(x, y);
        }
        if (!isfinite(r)) return fail(c, "float overflow");
        *out = vf(r);
        return 0;
    }
    int64_t x = a.i, y = b.i, r = 0;
    switch (op) {
    case OP_ADD: if (__builtin_add_overflow(x, y, &r)) return fail(c, "integer overflow"); break;
    case OP_SUB: if (__builtin_sub_overflow(x, y, &r)) return fail(c, "integer overflow"); break;
    case OP_MUL: if (__builtin_mul_overflow(x, y, &r)) return fail(c, "integer overflow"); break;
    case OP_FLOORDIV:
    case OP_MOD:
        if (y == 0) return fail(c, op == OP_MOD ? "integer modulo by zero" : "integer division or modulo by zero");
        if (x == INT64_MIN && y == -1) return fail(c, "integer overflow");
        r = op == OP_FLOORDIV ? x / y : x % y;
        if (op == OP_FLOORDIV && (x % y != 0) && ((x < 0) != (y < 0))) r--;
        if (op == OP_MOD && r != 0 && ((r < 0) != (y < 0))) r += y;
        break;
    default: /* ** */
        if (y < 0) {
            if (x == 0) return fail(c, "0.0 cannot be raised to a negative power");
            *out = vf(pow((double)x, (double)y));
            return 0;
        }
        r = 1;
        for (int64_t base = x, e = y; e; e >>= 1) {
            if ((e & 1) && __builtin_mul_overflow(r, base, &r)) return fail(c, "integer overflow");
            if ((e >> 1) && __builtin_mul_overflow(base, base, &base)) return fail(c, "integer overflow");
        }
    }
    *out = vi(r);
    return 0;
}

static int eval(const node *n, evalctx *c, val *out) {
    val a, b;
    switch (n->kind) {
    case N_INT: *out = vi(n->ival); return 0;
    case N_VAR:
        if (c->bound && n->slot >= 0) {
            *out = vi(c->v->values[n->slot]);
            return 0;
        }
        for (size_t i = c->v->n; i-- > 0;) /* the last binding of a name wins */
            if (c->v->names[i][0] == n->name[0] && !strcmp(c->v->names[i], n->name)) { *out = vi(c->v->values[i]); return 0; }
        snprintf(c->msg, c->cap, "name '%s' is not defined", n->name);
        return -1;
    case N_NEG:
        if (eval(n->kids[0], c, &a)) return -1;
        if (a.fl) *out = vf(-a.f);
        else if (a.i == INT64_MIN) return fail(c, "integer overflow");
        else *out = vi(-a.i);
        return 0;
    case N_POS: return eval(n->kids[0], c, out);
    case N_NOT:
        if (eval(n->kids[0], c, &a)) return -1;
        *out = vi(!truthy(a));
        return 0;
    case N_AND:
    case N_OR: /* Python returns the deciding operand */
        if (eval(n->kids[0], c, &a)) return -1;
        if (truthy(a) == (n->kind == N_OR)) { *out = a; return 0; }
        return eval(n->kids[1], c, out);
    case N_BIN:
        if (eval(n->kids[0], c, &a) || eval(n->kids[1], c, &b)) return -1;
        return binop(n->op, a, b, c, out);
    case N_CMP:
        if (eval(n->kids[0], c, &a)) return -1;
        for (int i = 1; i + 1 < n->nkids; i += 2) {
            val r;
            if (eval(n->kids[i + 1], c, &b) || binop((int)n->kids[i]->ival, a, b, c, &r)) return -1;
            if (!r.i) { *out = vi(0); return 0; }
            a = b;
        }
        *out = vi(1);
        return 0;
    default: /* N_CALL */
        if (eval(n->kids[0], c, &a)) return -1;
        if (n->op == F_ABS) {
            if (a.fl) *out = vf(fabs(a.f));
            else if (a.i == INT64_MIN) return fail(c, "integer overflow");
            else *out = vi(a.i < 0 ? -a.i : a.i);
            return 0;
        }
        if (n->op == F_ALIGN) { /* ((x + a - 1) // a) * a */
            val t;
            if (eval(n->kids[1], c, &b) || binop(OP_ADD, a, b, c, &t) || binop(OP_SUB, t, vi(1), c, &t) ||
                binop(OP_FLOORDIV, t, b, c, &t) || binop(OP_MUL, t, b, c, out))
                return -1;
            return 0;
        }
        if (n->nkids == 1) return fail(c, "max/min of one integer: argument is not iterable");
        for (int i = 1; i < n->nkids; i++) {
            val r;
            if (eval(n->kids[i], c, &b) || binop(n->op == F_MAX ? OP_GT : OP_LT, b, a, c, &r)) return -1;
            if (r.i) a = b;
        }
        *out = a;
        return 0;
    }
}

int opdb_grid_expr_eval(const opdb_grid_expr *e, const opdb_grid_vars *v, int64_t *i, double *f, bool *is_float,
                        char *msg, size_t cap) {
    evalctx c = {v, e->bound && e->bound == v->names && e->bound_n == v->n, msg, cap};
    val r;
    if (eval(e->root, &c, &r)) return -1;
    *is_float = r.fl;
    if (r.fl) {
        if (!(r.f > -9.2e18 && r.f < 9.2e18)) return fail(&c, "float result out of integer range");
        *f = r.f;
        *i = (int64_t)r.f; /* int() truncates toward zero */
    } else {
        *f = (double)r.i;
        *i = r.i;
    }
    return 0;
}
