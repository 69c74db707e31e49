/* analysis/fs_fmt: figures in human units for the printed tables. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/fs_fmt.h"
#include "sim/cli/fs_json.h"

static void test_units_by_name(void **state)
{
    (void)state;
    assert_int_equal(fs_fmt_metric_unit("wait_mean"), FS_FMT_DURATION);
    assert_int_equal(fs_fmt_metric_unit("jct_p95"), FS_FMT_DURATION);
    assert_int_equal(fs_fmt_metric_unit("makespan"), FS_FMT_DURATION);
    assert_int_equal(fs_fmt_metric_unit("wait_prob"), FS_FMT_SHARE);
    assert_int_equal(fs_fmt_metric_unit("utilization_all"), FS_FMT_SHARE);
    assert_int_equal(fs_fmt_metric_unit("cost_total"), FS_FMT_MONEY);
    assert_int_equal(fs_fmt_metric_unit("arrival_rate"), FS_FMT_RATE);
    assert_int_equal(fs_fmt_metric_unit("jobs_completed"), FS_FMT_NUMBER);
}

static void test_values(void **state)
{
    (void)state;
    char b[64];
    fs_fmt_value(b, sizeof b, FS_FMT_DURATION, 1.8301e+05);
    assert_string_equal(b, "2.12 d");
    fs_fmt_value(b, sizeof b, FS_FMT_DURATION, 90);
    assert_string_equal(b, "90.0 s");       /* the run summary's own format */
    fs_fmt_value(b, sizeof b, FS_FMT_MONEY, 2.1978e+06);
    assert_string_equal(b, "$2,197,800");
    fs_fmt_value(b, sizeof b, FS_FMT_MONEY, 6.88);
    assert_string_equal(b, "$6.88");
    fs_fmt_value(b, sizeof b, FS_FMT_SHARE, 0.766);
    assert_string_equal(b, "76.6%");
    fs_fmt_value(b, sizeof b, FS_FMT_NUMBER, 3000);
    assert_string_equal(b, "3000");
    fs_fmt_value(b, sizeof b, FS_FMT_NUMBER, NAN);
    assert_string_equal(b, "-");
    fs_fmt_diff(b, sizeof b, FS_FMT_DURATION, -1830);
    assert_string_equal(b, "-30.5 min");
    fs_fmt_diff(b, sizeof b, FS_FMT_SHARE, 0.012);
    assert_string_equal(b, "+1.2 pts");
    fs_fmt_diff(b, sizeof b, FS_FMT_MONEY, -1234.4);
    assert_string_equal(b, "-$1,234");
}

/* A zero-variance interval is rounding noise, never printed (issue 13:
 * "cost_total 2.1978e+06 +- 5.44e-10"). */
static void test_interval(void **state)
{
    (void)state;
    char b[64];
    fs_fmt_interval(b, sizeof b, FS_FMT_MONEY, 2.1978e+06, 5.44e-10);
    assert_string_equal(b, "$2,197,800");
    assert_true(fs_fmt_is_constant(2.1978e+06, 5.44e-10));
    assert_false(fs_fmt_is_constant(2.1978e+06, 1));
    fs_fmt_interval(b, sizeof b, FS_FMT_DURATION, 3600, 600);
    assert_string_equal(b, "60.0 min +- 10.0 min");
    fs_fmt_interval(b, sizeof b, FS_FMT_SHARE, 0.5, NAN);
    assert_string_equal(b, "50.0%");
}

static void test_json(void **state)
{
    (void)state;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    fs_json_t j;
    fs_json_init(&j, f);
    fs_json_begin_object(&j);
    fs_json_key(&j, "a\"b");
    fs_json_num(&j, 0.1);
    fs_json_key(&j, "n");
    fs_json_num(&j, NAN);
    fs_json_key(&j, "l");
    fs_json_begin_array(&j);
    fs_json_uint(&j, 3);
    fs_json_str(&j, "x\n");
    fs_json_bool(&j, 1);
    fs_json_end_array(&j);
    fs_json_end_object(&j);
    fs_json_finish(&j);
    fclose(f);
    assert_string_equal(buf, "{\"a\\\"b\":0.10000000000000001,\"n\":null,\"l\":[3,\"x\\n\",true]}\n");
    free(buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_units_by_name),
        cmocka_unit_test(test_values),
        cmocka_unit_test(test_interval),
        cmocka_unit_test(test_json),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
