/* Shapes parsed with a table's dims memo (each distinct dims array kept
 * once) equal the shapes parsed without it, cell for cell, and equal dims
 * share one array; cells that do not parse fail the same way. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "query/query_internal.h"

static void test_memo_equals_plain(void **state) {
    (void)state;
    static const char *const cells[] = {
        "\"1351,128;1351,128\"", "1351,128", "4096,18432;18432,4096", "  \"1,2,3;()\" ", "()", "",
        "1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18", "1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18;5",
        "-1,0;9223372036854775807", "1,x", "1,,2", ";;7;", "1351,128;128", "128;1351,128",
    };
    enum { N = sizeof cells / sizeof cells[0] };
    opdb_arena a;
    opdb_arena_init(&a, 1 << 12);
    q_dims_memo *m = q_dims_memo_new();
    q_shape *got[N];
    uint32_t ng[N];
    for (int pass = 0; pass < 2; pass++) /* the second pass finds every dims array already kept */
        for (size_t i = 0; i < N; i++) {
            q_shape *p, *q;
            uint32_t np, nq;
            int rp = q_parse_shapes(&a, cells[i], strlen(cells[i]), &p, &np);
            int rq = q_parse_shapes_memo(&a, m, cells[i], strlen(cells[i]), &q, &nq);
            assert_int_equal(rp, rq);
            if (rp != 0) continue;
            assert_int_equal(np, nq);
            for (uint32_t k = 0; k < np; k++) {
                assert_int_equal(p[k].rank, q[k].rank);
                if (p[k].rank) assert_memory_equal(p[k].d, q[k].d, p[k].rank * sizeof *p[k].d);
            }
            if (pass == 0) {
                got[i] = q;
                ng[i] = nq;
            } else {
                for (uint32_t k = 0; k < nq; k++)
                    if (q[k].rank && q[k].rank <= 16) assert_ptr_equal(q[k].d, got[i][k].d);
                assert_int_equal(nq, ng[i]);
            }
        }
    /* equal dims in one cell and across cells share one array */
    q_shape *x, *y;
    uint32_t nx, ny;
    assert_int_equal(q_parse_shapes_memo(&a, m, "7,9;7,9", 7, &x, &nx), 0);
    assert_int_equal(q_parse_shapes_memo(&a, m, "7,9", 3, &y, &ny), 0);
    assert_ptr_equal(x[0].d, x[1].d);
    assert_ptr_equal(x[0].d, y[0].d);
    q_dims_memo_free(m);
    opdb_arena_free(&a);
}

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_memo_equals_plain)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
