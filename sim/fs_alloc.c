#include "fs_alloc.h"
#include "fs_error.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* Test configuration and counters (see header): not run state. */
static _Atomic uint64_t alloc_served;
static _Atomic uint64_t alloc_fail_at;  /* 0 = off; else fail when served+1 >= it */
static _Atomic int64_t alloc_live;

static int should_fail(void)
{
    uint64_t at = atomic_load_explicit(&alloc_fail_at, memory_order_relaxed);
    uint64_t k = atomic_fetch_add_explicit(&alloc_served, 1, memory_order_relaxed) + 1;
    return at != 0 && k >= at;
}

void fs_alloc_fail_after(uint64_t n)
{
    uint64_t now = atomic_load(&alloc_served);
    atomic_store(&alloc_fail_at, n ? now + n : 0);
}

uint64_t fs_alloc_count(void) { return atomic_load(&alloc_served); }
int64_t fs_alloc_live(void) { return atomic_load(&alloc_live); }

void *fs_malloc(size_t n)
{
    if (should_fail())
        return NULL;
    void *p = malloc(n ? n : 1);
    if (p)
        atomic_fetch_add_explicit(&alloc_live, 1, memory_order_relaxed);
    return p;
}

void *fs_calloc(size_t count, size_t size)
{
    if (should_fail())
        return NULL;
    void *p = calloc(count ? count : 1, size ? size : 1);
    if (p)
        atomic_fetch_add_explicit(&alloc_live, 1, memory_order_relaxed);
    return p;
}

void *fs_realloc(void *p, size_t n)
{
    if (!p)
        return fs_malloc(n);
    if (should_fail())
        return NULL;
    return realloc(p, n ? n : 1);
}

void fs_free(void *p)
{
    if (!p)
        return;
    atomic_fetch_sub_explicit(&alloc_live, 1, memory_order_relaxed);
    free(p);
}

char *fs_strndup(const char *s, size_t n)
{
    char *d = fs_malloc(n + 1);
    if (!d)
        return NULL;
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

char *fs_strdup(const char *s)
{
    return fs_strndup(s, strlen(s));
}

int fs_grow(void **arr, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return 0;
    size_t ncap = *cap ? *cap : 16;
    while (ncap < need) {
        if (ncap > SIZE_MAX / 2)
            return FS_ENOMEM;
        ncap *= 2;
    }
    if (elem && ncap > SIZE_MAX / elem)
        return FS_ENOMEM;
    void *p = fs_realloc(*arr, ncap * elem);
    if (!p)
        return FS_ENOMEM;
    *arr = p;
    *cap = ncap;
    return 0;
}
