/* The shape map: dense indexes in order of first appearance, shapes that
 * differ only in milli-GPU share or pool set are distinct, growth past the
 * first table keeps every index, and a failed allocation changes nothing. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "fs_test_util.h"
#include "models/fs_shape.h"
#include "sim/fs_alloc.h"

static void test_dense_and_distinct(void **s)
{
    (void)s;
    int64_t live0 = fs_alloc_live();
    fs_shapemap_t m;
    int added;
    assert_int_equal(fs_shapemap_init(&m), 0);
    assert_int_equal(fs_shapemap_get(&m, 1, 1000, 0, -1, &added), 0);
    assert_int_equal(added, 1);
    assert_int_equal(fs_shapemap_get(&m, 1, 500, 0, -1, &added), 1);   /* fractional share */
    assert_int_equal(fs_shapemap_get(&m, 1, 1000, 0, 0, &added), 2);   /* other pool set */
    assert_int_equal(fs_shapemap_get(&m, 1, 1000, 0, -1, &added), 0);
    assert_int_equal(added, 0);
    /* a pod asking CPU is another class; the same request finds it again */
    uint64_t res = ((uint64_t)4000 << 32) | 8192;
    assert_int_equal(fs_shapemap_get(&m, 1, 1000, res, -1, &added), 3);
    assert_int_equal(added, 1);
    assert_int_equal(fs_shapemap_get(&m, 1, 1000, res, -1, &added), 3);
    assert_int_equal(added, 0);
    /* many shapes: several rehashes, every index stable */
    for (uint32_t g = 2; g < 1002; g++)
        assert_int_equal(fs_shapemap_get(&m, g, 1000, 0, -1, &added), (long)g + 2);
    for (uint32_t g = 2; g < 1002; g++) {
        assert_int_equal(fs_shapemap_get(&m, g, 1000, 0, -1, &added), (long)g + 2);
        assert_int_equal(added, 0);
        assert_int_equal(m.shapes[g + 2].gpus, g);
    }
    assert_int_equal(m.n, 1004);
    fs_shapemap_release(&m);
    assert_int_equal(fs_alloc_live(), live0);
}

static void test_out_of_memory_changes_nothing(void **s)
{
    (void)s;
    int64_t live0 = fs_alloc_live();
    fs_shapemap_t m;
    int added;
    assert_int_equal(fs_shapemap_init(&m), 0);
    uint32_t g = 1;
    size_t failures = 0;
    while (g <= 200) {
        fs_alloc_fail_after(1);
        long c = fs_shapemap_get(&m, g, 1000, 0, -1, &added);
        fs_alloc_fail_after(0);
        if (c < 0) {
            failures++;
            assert_int_equal(m.n, g - 1);   /* nothing added */
            c = fs_shapemap_get(&m, g, 1000, 0, -1, &added);
        }
        assert_int_equal(c, (long)g - 1);
        g++;
    }
    assert_true(failures > 0);              /* growth was really exercised */
    for (g = 1; g <= 200; g++)
        assert_int_equal(fs_shapemap_get(&m, g, 1000, 0, -1, &added), (long)g - 1);
    fs_shapemap_release(&m);
    assert_int_equal(fs_alloc_live(), live0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dense_and_distinct),
        cmocka_unit_test(test_out_of_memory_changes_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
