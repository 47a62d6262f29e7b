/* Model presets (docs/GRID.md §6.1): the offline architecture table, name lookup
 * for HF ids and legacy short names, and the matmul (N,K) pairs. */
#include <stdlib.h>
#include <string.h>
#include "grid/grid_internal.h"

#define TPS5 {1, 2, 4, 8, 16}, {1, 2, 4, 8}, 5, 4
const grid_model grid_presets[] = {
    {"deepseekv3", "deepseek-ai/DeepSeek-V3", 7168, 18432, 128, 1, 128, 1536, 512, 128, 64, 256, 32, 2048, 8, TPS5},
    {"qwen332b", "Qwen/Qwen3-32B", 5120, 25600, 64, 8, 128, 0, 0, 0, 64, 0, 0, 0, 0, {1, 2, 4, 8, 16}, {1}, 5, 1},
    {"llama70b", "meta-llama/Meta-Llama-3-70B", 8192, 28672, 64, 8, 128, 0, 0, 0, 64, 0, 0, 0, 0, {1, 4, 8, 16}, {1}, 4, 1},
    {"glm51", "zai-org/GLM-5.1", 6144, 12288, 64, 64, 256, 2048, 512, 192, 64, 256, 32, 2048, 8, TPS5},
    {"glm52", "zai-org/GLM-5.2", 6144, 12288, 64, 64, 256, 2048, 512, 192, 64, 256, 32, 2048, 8, TPS5},
};
const size_t grid_npresets = sizeof grid_presets / sizeof grid_presets[0];

/* lower-case, without - _ . / and spaces */
static void normalise(const char *s, char *out, size_t cap) {
    size_t n = 0;
    for (; *s && n + 1 < cap; s++) {
        char c = *s;
        if (c == '-' || c == '_' || c == '.' || c == '/' || c == ' ') continue;
        out[n++] = (char)(c >= 'A' && c <= 'Z' ? c + 32 : c);
    }
    out[n] = '\0';
}

const grid_model *grid_model_find(const char *name) {
    static const char *const legacy[][2] = {{"dsv3", "deepseekv3"}, {"metallama370b", "llama70b"}};
    char key[256], id[256];
    normalise(name, key, sizeof key);
    for (size_t i = 0; i < 2; i++)
        if (!strcmp(key, legacy[i][0])) snprintf(key, sizeof key, "%s", legacy[i][1]);
    for (size_t i = 0; i < grid_npresets; i++) {
        normalise(grid_presets[i].hf, id, sizeof id);
        if (!strcmp(key, grid_presets[i].key) || !strcmp(key, id)) return &grid_presets[i];
    }
    return NULL;
}

const char *opdb_grid_model_name(size_t i) { return i < grid_npresets ? grid_presets[i].hf : NULL; }

bool opdb_grid_model_known(const char *name) { return grid_model_find(name) != NULL; }

bool grid_model_is_mla(const grid_model *m) { return m->q_lora > 0 || m->kv_lora > 0; }

static int cmp_pair(const void *a, const void *b) {
    const int64_t *x = a, *y = b;
    return x[0] != y[0] ? (x[0] < y[0] ? -1 : 1) : x[1] != y[1] ? (x[1] < y[1] ? -1 : 1) : 0;
}
static int64_t max1(int64_t v) { return v > 1 ? v : 1; }

int64_t *grid_nk_pairs(const grid_model *const *models, size_t n, size_t *npairs) {
    size_t cap = 64, k = 0;
    int64_t *p = opdb_xmalloc(cap * 2 * sizeof *p);
#define PUSH(a, b) do { if (k == cap) p = opdb_xrealloc(p, (cap *= 2) * 2 * sizeof *p); p[2 * k] = (a); p[2 * k + 1] = (b); k++; } while (0)
    for (size_t i = 0; i < n; i++) {
        const grid_model *m = models[i];
        int64_t h = m->hidden;
        for (int t = 0; t < m->ntp; t++) {
            int64_t tp = m->tp[t], ht = max1(h / tp);
            if (grid_model_is_mla(m)) {
                int64_t qup = max1(m->heads * m->head_dim / tp);
                PUSH(m->q_lora, h);
                PUSH(qup, m->q_lora);
                PUSH(m->kv_lora + m->qk_rope, h);
                PUSH(qup, m->kv_lora);
            } else {
                PUSH(ht, h);
                PUSH(h, ht);
            }
            if (m->inter > 0) {
                int64_t g = max1(m->inter / tp);
                PUSH(g, h);
                PUSH(h, g);
            }
        }
    }
#undef PUSH
    qsort(p, k, 2 * sizeof *p, cmp_pair);
    size_t u = 0;
    for (size_t i = 0; i < k; i++)
        if (u == 0 || cmp_pair(&p[2 * i], &p[2 * (u - 1)]) != 0) p[2 * u] = p[2 * i], p[2 * u + 1] = p[2 * i + 1], u++;
    *npairs = u;
    return p;
}
