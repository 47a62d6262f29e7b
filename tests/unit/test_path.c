/* pathlib-style path text, component ordering and atomic file replacement. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "opdb/fs.h"

static void expect_norm(const char *in, const char *want) {
    char *o = opdb_path_normalize(in);
    if (strcmp(o, want) != 0) print_error("normalize(\"%s\")\n", in);
    assert_string_equal(o, want);
    free(o);
}

static void test_normalize_collapses_double_slash(void **s) {
    (void)s;
    expect_norm("a//b", "a/b");
    expect_norm("a///b////c", "a/b/c");
}

static void test_normalize_drops_dot_components(void **s) {
    (void)s;
    expect_norm("./a", "a");
    expect_norm("a/./b/.", "a/b");
    expect_norm("/.", "/");
    expect_norm("./", ".");
    expect_norm(".", ".");
}

static void test_normalize_drops_trailing_slash(void **s) {
    (void)s;
    expect_norm("a/", "a");
    expect_norm("a/b//", "a/b");
}

static void test_normalize_empty_is_dot(void **s) {
    (void)s;
    expect_norm("", ".");
}

static void test_normalize_leading_slashes(void **s) {
    (void)s;
    expect_norm("/a", "/a");
    expect_norm("//a", "//a");   /* POSIX: exactly two leading slashes are kept */
    expect_norm("///a", "/a");
    expect_norm("////a//b", "/a/b");
    expect_norm("/", "/");
    expect_norm("//", "//");
    expect_norm("///", "/");
}

static void test_normalize_keeps_dotdot(void **s) {
    (void)s;
    expect_norm("a/../b", "a/../b");
    expect_norm("../a", "../a");
    expect_norm("a/..", "a/..");
}

static void test_join(void **s) {
    (void)s;
    char *j = opdb_path_join("a/", "./b");
    assert_string_equal(j, "a/b");
    free(j);
    j = opdb_path_join("a", "/abs");
    assert_string_equal(j, "/abs");
    free(j);
}

static void test_cmp_is_component_wise(void **s) {
    (void)s;
    /* bytewise strcmp would order '-' (0x2d) before '/' (0x2f) */
    assert_true(opdb_path_cmp("a/b.csv", "a-b/c.csv") < 0);
    assert_true(opdb_path_cmp("a-b/c.csv", "a/b.csv") > 0);
    assert_true(opdb_path_cmp("a/x", "a.b/x") < 0);
}

static void test_cmp_prefix_and_equal(void **s) {
    (void)s;
    assert_int_equal(opdb_path_cmp("a/b", "a/b"), 0);
    assert_true(opdb_path_cmp("a/b", "a/b/c") < 0);
    assert_true(opdb_path_cmp("a/b/c", "a/b") > 0);
    assert_true(opdb_path_cmp("/a", "a") < 0); /* parts ['/', 'a'] vs ['a'] */
}

static void test_cmp_code_point_order(void **s) {
    (void)s;
    assert_true(opdb_path_cmp("Z/a", "a/a") < 0);            /* uppercase first */
    assert_true(opdb_path_cmp("z/a", "\xc3\xa9/a") < 0);     /* é (U+00E9) after z */
    assert_true(opdb_path_cmp("x/kernel_details.csv", "x/KERNEL_DETAILS.csv") > 0);
}

static int cmp_wrap(const void *a, const void *b) { return opdb_path_cmp(*(char *const *)a, *(char *const *)b); }

static void test_cmp_sorts_like_pathlib(void **s) {
    (void)s;
    const char *v[] = {"z/k.csv", "a.b/k.csv", "a-b/k.csv", "a/k.csv", "a/b/k.csv", "KERNEL.csv"};
    qsort(v, 6, sizeof *v, cmp_wrap);
    /* sorted(Path(p) for p in ...) in CPython */
    const char *want[] = {"KERNEL.csv", "a/b/k.csv", "a/k.csv", "a-b/k.csv", "a.b/k.csv", "z/k.csv"};
    for (int i = 0; i < 6; i++) assert_string_equal(v[i], want[i]);
}

static void expect_parent_name(const char *p, const char *want) {
    char *o = opdb_path_parent_name(p);
    assert_string_equal(o, want);
    free(o);
}

static void test_parent_name(void **s) {
    (void)s;
    expect_parent_name("a/b/c.csv", "b");
    expect_parent_name("/x/c.csv", "x");
    expect_parent_name("a//b/./c.csv", "b");
    expect_parent_name("./a/c", "a");
}

static void test_parent_name_at_top_is_empty(void **s) {
    (void)s;
    expect_parent_name("c.csv", "");
    expect_parent_name("/c.csv", "");
    expect_parent_name("./c.csv", "");
}

static void test_basename_and_parent(void **s) {
    (void)s;
    assert_string_equal(opdb_path_basename("a/b/c.csv"), "c.csv");
    assert_string_equal(opdb_path_basename("c.csv"), "c.csv");
    char *p = opdb_path_parent("a/b/c.csv");
    assert_string_equal(p, "a/b");
    free(p);
    p = opdb_path_parent("c.csv");
    assert_string_equal(p, ".");
    free(p);
    p = opdb_path_parent("/c.csv");
    assert_string_equal(p, "/");
    free(p);
}

/* ---- atomic write ------------------------------------------------------------- */

typedef struct {
    char dir[256];
} tmpdir;

static int setup_dir(void **state) {
    tmpdir *t = malloc(sizeof *t);
    snprintf(t->dir, sizeof t->dir, "/tmp/opdb_test_path_XXXXXX");
    if (!mkdtemp(t->dir)) return -1;
    *state = t;
    return 0;
}

static int teardown_dir(void **state) {
    tmpdir *t = *state;
    DIR *d = opendir(t->dir);
    if (d) {
        struct dirent *e;
        char p[600];
        while ((e = readdir(d)) != NULL) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
            snprintf(p, sizeof p, "%s/%s", t->dir, e->d_name);
            if (unlink(p) != 0) rmdir(p);
        }
        closedir(d);
    }
    rmdir(t->dir);
    free(t);
    return 0;
}

static char *slurp(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *b = malloc(1 << 16);
    *n = fread(b, 1, 1 << 16, f);
    fclose(f);
    return b;
}

static int count_entries(const char *dir) {
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) n++;
    closedir(d);
    return n;
}

static void expect_content(const char *path, const char *want) {
    size_t n;
    char *b = slurp(path, &n);
    assert_non_null(b);
    assert_int_equal(n, strlen(want));
    assert_memory_equal(b, want, n);
    free(b);
}

static void test_atomic_write_creates_file(void **state) {
    tmpdir *t = *state;
    char p[512];
    snprintf(p, sizeof p, "%s/x.csv", t->dir);
    opdb_err err;
    opdb_err_clear(&err);
    assert_int_equal(opdb_atomic_write(p, "a,b\r\n", 5, &err), 0);
    expect_content(p, "a,b\r\n");
    assert_int_equal(count_entries(t->dir), 1); /* no temp file left */
}

static void test_atomic_write_replaces_file(void **state) {
    tmpdir *t = *state;
    char p[512];
    snprintf(p, sizeof p, "%s/x.csv", t->dir);
    opdb_err err;
    opdb_err_clear(&err);
    assert_int_equal(opdb_atomic_write(p, "old content that is longer", 26, &err), 0);
    assert_int_equal(opdb_atomic_write(p, "new", 3, &err), 0);
    expect_content(p, "new");
    assert_int_equal(opdb_atomic_write(p, "", 0, &err), 0);
    expect_content(p, "");
    assert_int_equal(count_entries(t->dir), 1);
}

static void test_atomic_write_respects_umask(void **state) {
    tmpdir *t = *state;
    char p[512];
    snprintf(p, sizeof p, "%s/m.csv", t->dir);
    opdb_err err;
    opdb_err_clear(&err);
    mode_t old = umask(022);
    int rc = opdb_atomic_write(p, "x", 1, &err);
    umask(old);
    assert_int_equal(rc, 0);
    struct stat st;
    assert_int_equal(stat(p, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0644); /* not mkstemp's 0600 */
}

static void test_atomic_write_missing_folder_fails_cleanly(void **state) {
    tmpdir *t = *state;
    char p[512];
    snprintf(p, sizeof p, "%s/nope/x.csv", t->dir);
    opdb_err err;
    opdb_err_clear(&err);
    assert_int_equal(opdb_atomic_write(p, "a", 1, &err), -1);
    assert_int_equal(err.code, OPDB_ERR_RUNTIME);
    assert_non_null(strstr(err.msg, "x.csv"));
    assert_int_equal(count_entries(t->dir), 0);
}

static void test_atomic_write_failed_write_keeps_old_file(void **state) {
    tmpdir *t = *state;
    char p[512];
    snprintf(p, sizeof p, "%s/keep.csv", t->dir);
    opdb_err err;
    opdb_err_clear(&err);
    assert_int_equal(opdb_atomic_write(p, "old", 3, &err), 0);

    /* make the write itself fail (EFBIG) with a file-size limit */
    static char big[1 << 16];
    memset(big, 'x', sizeof big);
    struct rlimit old_lim, lim;
    assert_int_equal(getrlimit(RLIMIT_FSIZE, &old_lim), 0);
    void (*old_handler)(int) = signal(SIGXFSZ, SIG_IGN);
    lim = old_lim;
    lim.rlim_cur = 1024;
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
    opdb_err_clear(&err);
    int rc = opdb_atomic_write(p, big, sizeof big, &err);
    setrlimit(RLIMIT_FSIZE, &old_lim);
    signal(SIGXFSZ, old_handler);

    assert_int_equal(rc, -1);
    assert_int_equal(err.code, OPDB_ERR_RUNTIME);
    expect_content(p, "old");
    assert_int_equal(count_entries(t->dir), 1); /* the temp file was removed */
}

static void test_atomic_write_onto_folder_fails_and_keeps_it(void **state) {
    tmpdir *t = *state;
    char p[512], q[600];
    snprintf(p, sizeof p, "%s/sub", t->dir);
    assert_int_equal(mkdir(p, 0777), 0);
    snprintf(q, sizeof q, "%s/f", p);
    FILE *f = fopen(q, "w");
    assert_non_null(f);
    fclose(f);
    opdb_err err;
    opdb_err_clear(&err);
    assert_int_equal(opdb_atomic_write(p, "x", 1, &err), -1);
    assert_true(opdb_is_dir(p));
    assert_true(opdb_is_file(q));
    assert_int_equal(count_entries(t->dir), 1);
    unlink(q);
}

/* The folder lock's recovery notes go to the program's note handler, one
 * line each naming the folder; a program without one gets none (the
 * library prints nothing itself). */
static char g_note[4096];
static int g_notes;
static void take_note(void *ctx, const char *line) {
    (void)ctx;
    snprintf(g_note, sizeof g_note, "%s", line);
    g_notes++;
}

static void leave_temp_file(const char *dir) {
    char p[4200];
    snprintf(p, sizeof p, "%s/.t.csv.tmp.AbC123", dir);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fclose(f);
}

static void test_lock_recovery_notes_go_to_the_handler(void **s) {
    (void)s;
    char dir[] = "/tmp/opdb_note_XXXXXX";
    assert_non_null(mkdtemp(dir));
    opdb_err err;
    opdb_err_clear(&err);
    leave_temp_file(dir);
    opdb_set_note_handler(NULL, NULL);
    g_notes = 0;
    int fd = opdb_dir_lock(dir, &err);
    assert_true(fd >= 0);
    opdb_dir_unlock(fd);
    assert_int_equal(g_notes, 0);
    leave_temp_file(dir);
    opdb_set_note_handler(take_note, NULL);
    fd = opdb_dir_lock(dir, &err);
    assert_true(fd >= 0);
    opdb_dir_unlock(fd);
    opdb_set_note_handler(NULL, NULL);
    assert_int_equal(g_notes, 1);
    char want[4200];
    snprintf(want, sizeof want, "%s: removed 1 temp file(s) of killed runs", dir);
    assert_string_equal(g_note, want);
    assert_int_equal(rmdir(dir), 0); /* both temp files were removed */
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_normalize_collapses_double_slash),
        cmocka_unit_test(test_normalize_drops_dot_components),
        cmocka_unit_test(test_normalize_drops_trailing_slash),
        cmocka_unit_test(test_normalize_empty_is_dot),
        cmocka_unit_test(test_normalize_leading_slashes),
        cmocka_unit_test(test_normalize_keeps_dotdot),
        cmocka_unit_test(test_join),
        cmocka_unit_test(test_lock_recovery_notes_go_to_the_handler),
        cmocka_unit_test(test_cmp_is_component_wise),
        cmocka_unit_test(test_cmp_prefix_and_equal),
        cmocka_unit_test(test_cmp_code_point_order),
        cmocka_unit_test(test_cmp_sorts_like_pathlib),
        cmocka_unit_test(test_parent_name),
        cmocka_unit_test(test_parent_name_at_top_is_empty),
        cmocka_unit_test(test_basename_and_parent),
        cmocka_unit_test_setup_teardown(test_atomic_write_creates_file, setup_dir, teardown_dir),
        cmocka_unit_test_setup_teardown(test_atomic_write_replaces_file, setup_dir, teardown_dir),
        cmocka_unit_test_setup_teardown(test_atomic_write_respects_umask, setup_dir, teardown_dir),
        cmocka_unit_test_setup_teardown(test_atomic_write_missing_folder_fails_cleanly, setup_dir, teardown_dir),
        cmocka_unit_test_setup_teardown(test_atomic_write_failed_write_keeps_old_file, setup_dir, teardown_dir),
        cmocka_unit_test_setup_teardown(test_atomic_write_onto_folder_fails_and_keeps_it, setup_dir, teardown_dir),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
