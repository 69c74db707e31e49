/*
 * Helpers shared by the cmocka tests: temporary directories and files,
 * reading a whole file, and the zero-live-allocations teardown check.
 */
#ifndef FS_TEST_UTIL_H
#define FS_TEST_UTIL_H

#include <stddef.h>

/* A fresh directory under $TMPDIR (or /tmp); caller frees the string. */
char *fs_test_tmpdir(void);
/* dir/name; caller frees. */
char *fs_test_path(const char *dir, const char *name);
/* Writes text to path; returns 0 or -1. */
int fs_test_write(const char *path, const char *text);
/* Reads a whole file (NUL-terminated); caller frees; NULL on error. */
char *fs_test_read(const char *path, size_t *len);
/* Removes a directory tree (rm -rf); best effort. */
void fs_test_rmtree(const char *dir);

/* cmocka 1.1.5 (Debian 12) has no double comparison: |a - b| <= eps
 * (NaN equals NaN), failing with both values printed. */
void fs_test_assert_close(double a, double b, double eps, const char *expr, const char *file,
                          int line);
#ifndef assert_double_equal
#define assert_double_equal(a, b, eps) \
    fs_test_assert_close((double)(a), (double)(b), (double)(eps), #a, __FILE__, __LINE__)
#endif

#endif
