/*
 * Tests of the request trace reader (traces/fs_reqtrace.c): the optional
 * prefix columns PrefixId and PrefixTokens (both formats, found by name,
 * both or neither), and their located errors (FILE:LINE: field ...).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fs_test_util.h"
#include "sim/fs_alloc.h"
#include "traces/fs_reqtrace.h"

static int64_t live0;

static int setup(void **state)
{
    (void)state;
    live0 = fs_alloc_live();
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    assert_int_equal(fs_alloc_live(), live0);
    return 0;
}

/* Writes text to DIR/name; the path (free with free). */
static char *put(const char *dir, const char *name, const char *text)
{
    char *p = fs_test_path(dir, name);
    assert_int_equal(fs_test_write(p, text), 0);
    return p;
}

/* Reads every request of path into r (at most n): their count, or -1 with
 * err set. */
static int read_all(const char *path, fs_request_t *r, int n, fs_error_t *err)
{
    fs_reqtrace_t *t;
    if (fs_reqtrace_open(path, 0, &t, err))
        return -1;
    int k = 0, rc;
    while (k < n && (rc = fs_reqtrace_next(t, &r[k], err)) == 1)
        k++;
    fs_reqtrace_close(t);
    return rc < 0 || rc > 1 ? -1 : k;
}

/* The columns carry each request's prefix id and tokens, in either order
 * and either format; without them every request has none. */
static void test_prefix_columns(void **state)
{
    (void)state;
    char *dir = fs_test_tmpdir();
    fs_request_t r[4];
    fs_error_t err;
    char *a = put(dir, "a.csv", "TIMESTAMP,ContextTokens,GeneratedTokens,PrefixId,PrefixTokens\n"
                                "2023-11-16 18:00:00.0,1000,10,7,512\n"
                                "2023-11-16 18:00:01.5,300,0,0,0\n"
                                "2023-11-16 18:00:02.0,600,5,7,600\n");
    assert_int_equal(read_all(a, r, 4, &err), 3);
    assert_int_equal(r[0].prefix, 7);
    assert_int_equal(r[0].prefix_len, 512);
    assert_int_equal(r[0].input, 1000);
    assert_int_equal(r[1].prefix, 0);
    assert_int_equal(r[1].prefix_len, 0);
    assert_int_equal(r[1].output, 1);
    assert_int_equal(r[1].at, 1500000);
    assert_int_equal(r[2].prefix_len, 600);     /* the whole prompt may be the prefix */
    /* BurstGPT, columns by name in any order */
    char *b = put(dir, "b.csv", "Timestamp,Model,PrefixTokens,Request tokens,Response tokens,"
                                "Total tokens,Log Type,prefixid\n"
                                "5,ChatGPT,100,472,18,490,Conversation log,3\n");
    assert_int_equal(read_all(b, r, 4, &err), 1);
    assert_int_equal(r[0].prefix, 3);
    assert_int_equal(r[0].prefix_len, 100);
    assert_int_equal(r[0].input, 472);
    /* no prefix columns: none */
    char *c = put(dir, "c.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n"
                                "2023-11-16 18:00:00.0,1000,10\n");
    assert_int_equal(read_all(c, r, 4, &err), 1);
    assert_int_equal(r[0].prefix, 0);
    assert_int_equal(r[0].prefix_len, 0);
    free(a);
    free(b);
    free(c);
    fs_test_rmtree(dir);
    free(dir);
}

static void expect(const char *dir, const char *text, const char *want_suffix)
{
    fs_request_t r[4];
    fs_error_t err;
    char *p = put(dir, "bad.csv", text);
    assert_int_equal(read_all(p, r, 4, &err), -1);
    char want[512];
    snprintf(want, sizeof want, "%s:%s", p, want_suffix);
    if (strcmp(err.msg, want) != 0)
        fail_msg("message\n  %s\nis not\n  %s", err.msg, want);
    free(p);
}

/* Bad prefix columns: located at the file, line and field. */
static void test_prefix_errors(void **state)
{
    (void)state;
    char *dir = fs_test_tmpdir();
    const char *h = "TIMESTAMP,ContextTokens,GeneratedTokens,PrefixId,PrefixTokens\n";
    char text[512];
    snprintf(text, sizeof text, "%s2023-11-16 18:00:00.0,100,10,1,101\n", h);
    expect(dir, text, "2:32: field PrefixTokens: a prefix of 101 tokens is longer than the "
                      "prompt's 100 (ContextTokens)");
    snprintf(text, sizeof text, "%s2023-11-16 18:00:00.0,100,10,-1,50\n", h);
    expect(dir, text, "2:30: field PrefixId: expected a prefix id (a whole number from 0 to "
                      "4294967295), got '-1'");
    snprintf(text, sizeof text, "%s2023-11-16 18:00:00.0,100,10,2,\n", h);
    expect(dir, text, "2:32: field PrefixTokens: expected a token count (a whole number from 0 "
                      "to 4294967295), got ''");
    snprintf(text, sizeof text, "%s2023-11-16 18:00:00.0,100,10,0,16\n", h);
    expect(dir, text, "2:32: field PrefixTokens: 16 prefix tokens with prefix id 0 (0: no "
                      "shared prefix; give it an id from 1)");
    expect(dir, "TIMESTAMP,ContextTokens,GeneratedTokens,PrefixId\n2023-11-16 18:00:00.0,1,1,1\n",
           "1:41: column PrefixId without PrefixTokens (a prefix needs its id and its tokens)");
    expect(dir, "TIMESTAMP,ContextTokens,GeneratedTokens,PrefixTokens,PrefixTokens,PrefixId\n",
           "1:54: column PrefixTokens appears twice");
    fs_test_rmtree(dir);
    free(dir);
}

/* fs_reqtrace_check_prefix (requests.prefix.ids with a trace): an id above
 * the number of ids, at its line and column; no prefix columns, at the
 * header; a good file passes whole, and the limit also holds in
 * fs_reqtrace_next after fs_reqtrace_limit_prefix. */
static void test_prefix_limit(void **state)
{
    (void)state;
    char *dir = fs_test_tmpdir();
    const char *h = "TIMESTAMP,ContextTokens,GeneratedTokens,PrefixId,PrefixTokens\n";
    char text[512], want[512];
    fs_error_t err;
    snprintf(text, sizeof text, "%s2023-11-16 18:00:00.0,100,10,4,64\n"
             "2023-11-16 18:00:01.0,100,10,5,64\n", h);
    char *p = put(dir, "ids.csv", text);
    assert_int_equal(fs_reqtrace_check_prefix(p, 5, &err), 0);
    assert_int_equal(fs_reqtrace_check_prefix(p, 4, &err), FS_EINVAL);
    snprintf(want, sizeof want, "%s:3:30: field PrefixId: prefix id 5 is above 4, the number of "
             "ids (requests.prefix.ids: ids run from 1 to it)", p);
    assert_string_equal(err.msg, want);
    fs_reqtrace_t *t;
    fs_request_t r;
    assert_int_equal(fs_reqtrace_open(p, 0, &t, &err), 0);
    fs_reqtrace_limit_prefix(t, 4);
    assert_int_equal(fs_reqtrace_next(t, &r, &err), 1);
    assert_int_equal(r.prefix, 4);
    assert_int_equal(fs_reqtrace_next(t, &r, &err), FS_EINVAL);
    assert_string_equal(err.msg, want);
    fs_reqtrace_close(t);
    free(p);
    p = put(dir, "plain.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n"
                              "2023-11-16 18:00:00.0,100,10\n");
    assert_int_equal(fs_reqtrace_check_prefix(p, 4, &err), FS_EINVAL);
    snprintf(want, sizeof want, "%s:1:1: no columns PrefixId and PrefixTokens "
             "(requests.prefix.ids takes each request's prefix id and tokens from them)", p);
    assert_string_equal(err.msg, want);
    free(p);
    /* a bad row the run would stop at is found by the whole read */
    snprintf(text, sizeof text, "%s2023-11-16 18:00:00.0,100,10,1,64\n"
             "2023-11-16 18:00:01.0,30,10,1,64\n", h);
    p = put(dir, "long.csv", text);
    assert_int_equal(fs_reqtrace_check_prefix(p, 4, &err), FS_EINVAL);
    snprintf(want, sizeof want, "%s:3:31: field PrefixTokens: a prefix of 64 tokens is longer "
             "than the prompt's 30 (ContextTokens)", p);
    assert_string_equal(err.msg, want);
    free(p);
    fs_test_rmtree(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_prefix_columns, setup, teardown),
        cmocka_unit_test_setup_teardown(test_prefix_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_prefix_limit, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
