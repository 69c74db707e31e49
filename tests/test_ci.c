/* Confidence intervals against values computed by hand from published
 * t-table quantiles (t_{0.975,4} = 2.776445, t_{0.975,9} = 2.262157). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <math.h>
#include <cmocka.h>

#include "fs_test_util.h"
#include "analysis/fs_ci.h"
#include "sim/fs_alloc.h"
#include "sim/fs_error.h"

static void test_t_interval(void **s)
{
    (void)s;
    int64_t live0 = fs_alloc_live();
    /* 1..5: mean 3, sd sqrt(2.5), half = 2.776445 * sqrt(2.5)/sqrt(5) */
    double x[] = {1, 2, NAN, 3, 4, 5};
    fs_ci_t ci;
    assert_int_equal(fs_ci_t_interval(x, 6, 0.95, &ci), 0);
    assert_int_equal(ci.n, 5);
    assert_double_equal(ci.mean, 3, 1e-12);
    assert_double_equal(ci.sd, sqrt(2.5), 1e-12);
    assert_double_equal(ci.half, 2.776445 * sqrt(0.5), 1e-5);
    assert_double_equal(ci.lo, 3 - ci.half, 1e-12);
    assert_int_equal(fs_ci_significant(&ci), 1);
    assert_int_equal(fs_ci_t_interval(x, 1, 0.95, &ci), 0);
    assert_true(isnan(ci.half));
    assert_int_equal(fs_ci_significant(&ci), -1);
    assert_int_equal(fs_ci_t_interval(x, 6, 1.0, &ci), FS_EINVAL);
    assert_int_equal(fs_alloc_live(), live0);
}

static void test_paired(void **s)
{
    (void)s;
    /* differences 0.1 +- noise: common random numbers make a small
     * difference significant that unpaired intervals would not */
    double a[10], b[10];
    for (int i = 0; i < 10; i++) {
        b[i] = 100 + 10 * i;           /* large spread across replications */
        a[i] = b[i] + 0.1 + (i % 2 ? 0.01 : -0.01);
    }
    fs_ci_t d, ua, ub;
    assert_int_equal(fs_ci_paired(a, b, 10, 0.95, &d), 0);
    assert_double_equal(d.mean, 0.1, 1e-9);
    assert_int_equal(fs_ci_significant(&d), 1);
    assert_int_equal(fs_ci_t_interval(a, 10, 0.95, &ua), 0);
    assert_int_equal(fs_ci_t_interval(b, 10, 0.95, &ub), 0);
    assert_true(ua.lo < ub.hi);       /* unpaired intervals overlap */
    /* sd of +-0.01 alternating: sqrt(10 * 0.0001 / 9) */
    assert_double_equal(d.half, 2.262157 * sqrt(0.001 / 9) / sqrt(10), 1e-6);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_t_interval),
        cmocka_unit_test(test_paired),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
