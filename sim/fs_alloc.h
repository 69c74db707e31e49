/*
 * fs_alloc: the one allocation hook of fleetsim.
 *
 * All fleetsim code allocates through fs_malloc/fs_calloc/fs_realloc/fs_free
 * (never malloc directly), so that tests can fail the Nth allocation
 * (SQLite-style fault injection) and count live allocations at teardown.
 *
 * The fault-injection state is process-wide test configuration, not run
 * state (like sqlite3_config): it is atomic, off by default, and only the
 * test harness sets it.  Counting is always on and costs one atomic add.
 */
#ifndef FS_ALLOC_H
#define FS_ALLOC_H

#include <stddef.h>
#include <stdint.h>

void *fs_malloc(size_t n);
void *fs_calloc(size_t count, size_t size);
void *fs_realloc(void *p, size_t n);
void fs_free(void *p);
char *fs_strdup(const char *s);
char *fs_strndup(const char *s, size_t n);

/* Grows *arr (element size elem) so that it holds at least need elements;
 * *cap is updated.  Returns 0, or FS_ENOMEM with *arr unchanged.
 * Overflow-checked. */
int fs_grow(void **arr, size_t *cap, size_t need, size_t elem);

/* Test hooks.  fail_after = N > 0: the Nth allocation from now (1-based)
 * and every later one fail until reset; 0 disables injection. */
void fs_alloc_fail_after(uint64_t n);
/* Number of allocations that fs_alloc has served since process start. */
uint64_t fs_alloc_count(void);
/* Number of blocks currently live (allocated and not freed). */
int64_t fs_alloc_live(void);

#endif
