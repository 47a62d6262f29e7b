/* opdb_file_view: a mapped file reads as the file, with a NUL after it,
 * whatever its size against the page size and wherever the view starts;
 * read and mapped views agree; a mapped file shrunk by another program
 * ends the process, under the CLI's SIGBUS handler, with a one-line error
 * naming it and removes the temp files of writers in flight. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/cli_process.h"
#include "opdb/fs.h"

static char g_dir[] = "/tmp/opdb_file_view_XXXXXX";

static char *write_file(const char *name, size_t n) {
    char *path = opdb_path_join(g_dir, name);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    for (size_t i = 0; i < n; i++) fputc('a' + (int)(i * 7 % 26), f);
    fclose(f);
    return path;
}

static void test_views_read_the_file(void **s) {
    (void)s;
    long page = sysconf(_SC_PAGESIZE);
    const size_t sizes[] = {0, 1, 3, 100, (size_t)page - 1, (size_t)page, (size_t)page + 1, 2 * (size_t)page,
                            3 * (size_t)page + 17};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        char *path = write_file("f.csv", sizes[i]);
        for (uint64_t from = 0; from <= 3; from += 3) {
            opdb_file_view v[2];
            for (int map = 0; map < 2; map++) {
                int fd = open(path, O_RDONLY);
                assert_true(fd >= 0);
                opdb_err err = {0};
                assert_int_equal(opdb_file_view_open(&v[map], fd, path, from, sizes[i], map, &err), 0);
                close(fd);
                size_t want = sizes[i] > from ? sizes[i] - from : 0;
                assert_int_equal(v[map].len, want);
                for (size_t k = 0; k < want; k++) assert_int_equal(v[map].data[k], 'a' + (int)((k + from) * 7 % 26));
                assert_int_equal(v[map].data[want], '\0');
            }
            assert_true(v[0].map == NULL); /* allow_map false: read */
            if (v[1].len) {
                assert_non_null(v[1].map);
                for (size_t k = 0; k < OPDB_VIEW_PAD; k++) assert_int_equal(v[1].data[v[1].len + k], '\0');
            }
            opdb_file_view_close(&v[0]);
            opdb_file_view_close(&v[1]);
        }
        unlink(path);
        free(path);
    }
}

static const char *g_touch;
static void *touch_in_thread(void *arg) {
    (void)arg;
    volatile char c = *g_touch;
    (void)c;
    return NULL;
}

/* The mapping is read past its new end by the thread that mapped it, or
 * by another (as a batch pipeline's workers read the reader's mapping). */
static void shrunk_file_is_a_clear_error(bool other_thread) {
    long page = sysconf(_SC_PAGESIZE);
    char *path = write_file("db.csv", 4 * (size_t)page);
    char *out = opdb_path_join(g_dir, "new.csv");
    char *errpath = opdb_path_join(g_dir, "stderr.txt");
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int efd = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        dup2(efd, STDERR_FILENO);
        cli_install_signal_handlers(); /* the CLI's: the library installs none */
        opdb_atomic_file af; /* a writer in flight: its temp file must go */
        opdb_err err = {0};
        if (opdb_atomic_open(&af, out, &err)) _exit(3);
        int fd = open(path, O_RDONLY);
        opdb_file_view v;
        if (opdb_file_view_open(&v, fd, path, 0, 4 * (uint64_t)page, true, &err) || !v.map) _exit(4);
        if (truncate(path, 0) != 0) _exit(5);
        g_touch = v.data + 2 * page; /* past the new end: SIGBUS */
        if (other_thread) {
            pthread_t th;
            if (pthread_create(&th, NULL, touch_in_thread, NULL) == 0) pthread_join(th, NULL);
        } else {
            touch_in_thread(NULL);
        }
        _exit(6);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 1);
    opdb_strbuf msg = {0};
    opdb_err err = {0};
    assert_int_equal(opdb_read_file(errpath, &msg, &err), 0);
    assert_non_null(strstr(msg.p, path));
    assert_non_null(strstr(msg.p, "shrank while it was read"));
    assert_int_equal(strchr(msg.p, '\n') - msg.p + 1, (long)msg.n); /* one line */
    opdb_sb_free(&msg);
    /* no temp file left beside new.csv, and new.csv never created */
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "test -z \"$(ls -A %s | grep -v -x -e db.csv -e stderr.txt)\"", g_dir);
    assert_int_equal(system(cmd), 0);
    unlink(path);
    unlink(errpath);
    free(path);
    free(out);
    free(errpath);
}

static void test_shrunk_file_is_a_clear_error(void **s) {
    (void)s;
    shrunk_file_is_a_clear_error(false);
    shrunk_file_is_a_clear_error(true);
}

int main(void) {
    if (!mkdtemp(g_dir)) return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_views_read_the_file),
        cmocka_unit_test(test_shrunk_file_is_a_clear_error),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    rmdir(g_dir);
    return rc;
}
