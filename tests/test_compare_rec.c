/* fs_compare_rec's statistics on hand-made waits: the two-sample KS
 * distance (ties, unequal sizes, empty sides), Spearman's rank correlation
 * (perfect, reversed, ties averaged), the type-7 quantiles, the mean and the
 * share that waited more than FS_REC_WAITED_S, checked against values
 * worked out by hand. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <math.h>
#include <string.h>
#include <cmocka.h>

#include "analysis/fs_compare_rec.h"

static void test_ks(void **state)
{
    (void)state;
    const double a[] = {0, 90, 170}, b[] = {0, 90, 200};
    assert_float_equal(fs_rec_ks_sorted(a, 3, b, 3), 1.0 / 3, 1e-12);
    /* identical samples: 0; disjoint: 1 */
    assert_float_equal(fs_rec_ks_sorted(a, 3, a, 3), 0, 0);
    const double lo[] = {1, 2}, hi[] = {3, 4, 5};
    assert_float_equal(fs_rec_ks_sorted(lo, 2, hi, 3), 1, 0);
    /* ties across the samples step together: F_a(1) = 1/2, F_b(1) = 1/4 */
    const double t1[] = {1, 2}, t2[] = {1, 3, 3, 3};
    assert_float_equal(fs_rec_ks_sorted(t1, 2, t2, 4), 0.75, 1e-12);
    assert_float_equal(fs_rec_ks_sorted(a, 0, b, 3), 0, 0);
}

static void test_stats(void **state)
{
    (void)state;
    const double sim[] = {0, 90, 170, 30}, rec[] = {10, 100, 200, 40};
    fs_rec_cmp_t c;
    memset(&c, 0, sizeof c);
    assert_int_equal(fs_rec_stats(sim, rec, 4, &c), 0);
    assert_float_equal(c.sim.mean, 72.5, 1e-12);
    assert_float_equal(c.rec.mean, 87.5, 1e-12);
    /* type 7: sorted 0 30 90 170, p50 = 60, p90 = 90 + 0.7 x 80 = 146 */
    assert_float_equal(c.sim.p50, 60, 1e-12);
    assert_float_equal(c.sim.p90, 146, 1e-12);
    assert_float_equal(c.sim.share_waited, 0.5, 0);    /* 90 and 170 > 60 s */
    assert_float_equal(c.rec.share_waited, 0.5, 0);
    assert_float_equal(c.spearman, 1, 1e-12);          /* same order */
    const double rev[] = {40, 10, 0, 20};
    assert_int_equal(fs_rec_stats(sim, rev, 4, &c), 0);
    assert_float_equal(c.spearman, -1, 1e-12);
    /* ties get the mean rank: sim ranks 1 3 4 2 against 1.5 1.5 3.5 3.5 */
    const double tie[] = {5, 5, 9, 9};
    assert_int_equal(fs_rec_stats(sim, tie, 4, &c), 0);
    double rs[] = {1, 3, 4, 2}, rt[] = {1.5, 1.5, 3.5, 3.5}, ms = 2.5, mt = 2.5, sxy = 0, sxx = 0,
           syy = 0;
    for (int i = 0; i < 4; i++) {
        sxy += (rs[i] - ms) * (rt[i] - mt);
        sxx += (rs[i] - ms) * (rs[i] - ms);
        syy += (rt[i] - mt) * (rt[i] - mt);
    }
    assert_float_equal(c.spearman, sxy / sqrt(sxx * syy), 1e-12);
    /* nothing compared: NaN statistics */
    assert_int_equal(fs_rec_stats(sim, rec, 0, &c), 0);
    assert_true(isnan(c.sim.mean) && isnan(c.spearman));
    assert_float_equal(c.ks, 0, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ks),
        cmocka_unit_test(test_stats),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
