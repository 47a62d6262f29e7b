/* What the consuming performance model can tell apart (spec consumer.md
 * §3.1 and §4), on top of the row signature: the signature of a MatMul-family
 * row keeps only its first two inputs, but the consumer compares every input
 * (a bias is a third one); FusedInferAttentionScore rows are told apart by
 * their runtime columns. See docs/ROW-IDENTITY.md. */
#include "opdb/signature.h"

#include <string.h>

#define SEP '\x1f'

int opdb_is_attention_kernel(const char *op) { return strcmp(op, "FusedInferAttentionScore") == 0; }

bool opdb_is_runtime_column(opdb_span name) {
    return (name.n > 8 && memcmp(name.p, "Runtime ", 8) == 0) || opdb_span_eq_cstr(name, "avg_seq_len");
}

void opdb_row_identity(const opdb_sig_cells *c, const char *op, const opdb_span *runtime, size_t nruntime,
                       opdb_strbuf *out) {
    opdb_signature(c, op, out);
    if (opdb_is_matmul_family(op)) {
        /* The generic rules (an operator name without rewrites) align every
         * input; the slots past the first two are what canonicalisation dropped. */
        opdb_strbuf g;
        opdb_sb_init(&g);
        opdb_signature(c, "_", &g);
        const char *end = g.p ? memchr(g.p, SEP, g.n) : NULL;
        size_t n = end ? (size_t)(end - g.p) : g.n;
        const char *s = g.p;
        for (int slot = 0; slot < 2 && s; slot++) {
            const char *semi = memchr(s, ';', n - (size_t)(s - g.p));
            s = semi ? semi + 1 : NULL;
        }
        opdb_sb_addc(out, SEP);
        opdb_sb_adds(out, "extra inputs=");
        if (s) opdb_sb_add(out, s, n - (size_t)(s - g.p));
        opdb_sb_free(&g);
    }
    if (opdb_is_attention_kernel(op))
        for (size_t i = 0; i < nruntime; i++) {
            opdb_sb_addc(out, SEP);
            opdb_sb_add(out, runtime[i].p, runtime[i].n);
        }
}
