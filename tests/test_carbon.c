/*
 * The hourly grid carbon-intensity series (traces/fs_carbon.h): bad files
 * are refused with FILE:LINE:COL and what was expected; comments, blank
 * lines, CRLF and exponents are read; a failed allocation anywhere in a
 * load is FS_ENOMEM with nothing leaked.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "fs_test_util.h"
#include "sim/fs_alloc.h"
#include "traces/fs_carbon.h"

typedef struct fx {
    int64_t live0;
    char *dir;
} fx_t;

static int setup(void **state)
{
    fx_t *f = calloc(1, sizeof *f);
    f->live0 = fs_alloc_live();
    f->dir = fs_test_tmpdir();
    *state = f;
    return f->dir ? 0 : -1;
}

static int teardown(void **state)
{
    fx_t *f = *state;
    fs_test_rmtree(f->dir);
    free(f->dir);
    assert_int_equal(fs_alloc_live(), f->live0);
    free(f);
    return 0;
}

static char *put(const fx_t *f, const char *name, const char *text)
{
    char *p = fs_test_path(f->dir, name);
    assert_int_equal(fs_test_write(p, text), 0);
    return p;
}

/* ---- bad input ---------------------------------------------------------------- */

/* fs_carbon_load on text: FS_EINVAL and "FILE:want" at the start of the
 * message (want = "LINE:COL: ..."). */
static void bad(const fx_t *f, const char *text, const char *want)
{
    char *p = put(f, "bad.csv", text);
    double *g = (double *)1;
    size_t n = 7;
    fs_error_t err;
    assert_int_equal(fs_carbon_load(p, &g, &n, &err), FS_EINVAL);
    assert_null(g);
    assert_int_equal(n, 0);
    char head[1024];
    snprintf(head, sizeof head, "%s:%s", p, want);
    printf("%s\n", err.msg);
    if (strncmp(err.msg, head, strlen(head)) != 0)
        fail_msg("expected '%s...', got '%s'", head, err.msg);
    free(p);
}

static void test_bad_series(void **state)
{
    fx_t *f = *state;
    bad(f, "", "1:1: empty file (expected the header hour_start_s,gco2e_per_kwh)");
    bad(f, "# only a comment\n", "2:1: empty file");
    bad(f, "hour,g\n0,1\n", "1:1: expected the header hour_start_s,gco2e_per_kwh (got 'hour,g')");
    bad(f, "hour_start_s,g\n0,1\n", "1:14: expected the header");
    bad(f, "hour_start_s\n0\n", "1:13: expected the header");
    bad(f, "hour_start_s,gco2e_per_kwh,zone\n", "1:27: expected the header");
    bad(f, "hour_start_s,gco2e_per_kwh\n", "2:1: expected a row after the header");
    bad(f, "hour_start_s,gco2e_per_kwh\n3600,5\n",
        "2:1: field hour_start_s: expected 0 (row 1 starts hour 0 of the run");
    bad(f, "hour_start_s,gco2e_per_kwh\n0,5\n7200,5\n",
        "3:1: field hour_start_s: expected 3600 (row 2 starts hour 1");
    bad(f, "hour_start_s,gco2e_per_kwh\n0,5\n  3600.5,5\n", "3:3: field hour_start_s: expected 3600");
    bad(f, "hour_start_s,gco2e_per_kwh\n0,5\n2023-01-01T01:00Z,5\n", "3:1: field hour_start_s");
    bad(f, "hour_start_s,gco2e_per_kwh\n0,-4\n",
        "2:3: field gco2e_per_kwh: expected g CO2e per kWh, a number >= 0, got '-4'");
    bad(f, "hour_start_s,gco2e_per_kwh\n0, abc\n", "2:4: field gco2e_per_kwh: expected");
    bad(f, "hour_start_s,gco2e_per_kwh\n0,nan\n", "2:3: field gco2e_per_kwh");
    bad(f, "hour_start_s,gco2e_per_kwh\n0,1e999\n", "2:3: field gco2e_per_kwh");
    bad(f, "hour_start_s,gco2e_per_kwh\n0,\n", "2:3: field gco2e_per_kwh");
    bad(f, "hour_start_s,gco2e_per_kwh\n0\n", "2:2: expected 2 fields (hour_start_s,gco2e_per_kwh), got 1");
    bad(f, "hour_start_s,gco2e_per_kwh\n0,1,2\n", "2:4: expected 2 fields");
    /* good: comments, blank lines, CRLF, exponents */
    char *p = put(f, "good.csv", "# DE 2023\r\nhour_start_s,gco2e_per_kwh\r\n\r\n0,4.5e2\r\n3600,0\r\n");
    double *g = NULL;
    size_t n = 0;
    fs_error_t err;
    assert_int_equal(fs_carbon_load(p, &g, &n, &err), 0);
    assert_int_equal(n, 2);
    assert_double_equal(g[0], 450, 0);
    assert_double_equal(g[1], 0, 0);
    fs_free(g);
    free(p);
}

/* Fault injection: the Nth allocation of a load fails for every N until
 * one succeeds; each failure is FS_ENOMEM with nothing left allocated. */
static void test_alloc_failures(void **state)
{
    fx_t *f = *state;
    char text[4096] = "hour_start_s,gco2e_per_kwh\n";
    for (int h = 0; h < 100; h++)   /* enough rows to grow the array several times */
        snprintf(text + strlen(text), sizeof text - strlen(text), "%d,%d\n", 3600 * h, h);
    char *p = put(f, "many.csv", text);
    int ok = 0;
    for (uint64_t nth = 1; nth < 1000 && !ok; nth++) {
        double *g = NULL;
        size_t n = 0;
        fs_error_t err;
        int64_t live = fs_alloc_live();
        fs_alloc_fail_after(nth);
        int rc = fs_carbon_load(p, &g, &n, &err);
        fs_alloc_fail_after(0);
        if (rc == 0) {
            ok = 1;
            assert_int_equal(n, 100);
            assert_true(g[99] == 99);
            fs_free(g);
        } else {
            assert_int_equal(rc, FS_ENOMEM);
            assert_null(g);
        }
        assert_int_equal(fs_alloc_live(), live);
    }
    assert_true(ok);
    free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_bad_series, setup, teardown),
        cmocka_unit_test_setup_teardown(test_alloc_failures, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
