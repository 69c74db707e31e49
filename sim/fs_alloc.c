#include "fs_alloc.h"
#include "fs_error.h"

#include <stdlib.h>
#include <string.h>

/* The header in front of every block: its context and its requested size.
 * Aligned as max_align_t, so the block after it keeps malloc's alignment. */
typedef struct hdr {
    _Alignas(max_align_t) fs_alloc_ctx_t *ctx;
    size_t size;
} hdr_t;
_Static_assert(sizeof(hdr_t) == FS_ALLOC_HEADER, "FS_ALLOC_HEADER is the header's size");
_Static_assert(FS_ALLOC_HEADER % _Alignof(max_align_t) == 0, "the header keeps max_align_t alignment");

/* The process default context (test configuration and counters, see the
 * header: not run state) and the calling thread's binding. */
static fs_alloc_ctx_t default_ctx;
static _Thread_local fs_alloc_ctx_t *bound;

static inline fs_alloc_ctx_t *current(void)
{
    fs_alloc_ctx_t *c = bound;
    return c ? c : &default_ctx;
}

static inline hdr_t *hdr_of(void *p) { return (hdr_t *)p - 1; }

/* Counts one request; 1 when it must fail (injection). */
static inline int should_fail(fs_alloc_ctx_t *c)
{
    uint64_t at = atomic_load_explicit(&c->fail_at, memory_order_relaxed);
    uint64_t k = atomic_fetch_add_explicit(&c->served, 1, memory_order_relaxed) + 1;
    return at != 0 && k >= at;
}

static void *refused(fs_alloc_ctx_t *c)
{
    atomic_fetch_add_explicit(&c->failed, 1, memory_order_relaxed);
    return NULL;
}

static inline void add_bytes(fs_alloc_ctx_t *c, int64_t d)
{
    int64_t now = atomic_fetch_add_explicit(&c->live_bytes, d, memory_order_relaxed) + d;
    int64_t pk = atomic_load_explicit(&c->peak_bytes, memory_order_relaxed);
    while (now > pk && !atomic_compare_exchange_weak_explicit(&c->peak_bytes, &pk, now, memory_order_relaxed,
                                                              memory_order_relaxed))
        ;
}

/* A new block of n bytes (zeroed when zero) in c. */
static void *alloc_in(fs_alloc_ctx_t *c, size_t n, int zero)
{
    if (should_fail(c) || n > SIZE_MAX - FS_ALLOC_HEADER)
        return refused(c);
    size_t total = FS_ALLOC_HEADER + n;
    hdr_t *h;
    if (!c->fn) {
        h = zero ? calloc(1, total) : malloc(total);
    } else {
        h = c->fn(c->ud, NULL, 0, total);
        if (h && zero)
            memset(h, 0, total);
    }
    if (!h)
        return refused(c);
    h->ctx = c;
    h->size = n;
    atomic_fetch_add_explicit(&c->live_blocks, 1, memory_order_relaxed);
    add_bytes(c, (int64_t)n);
    return h + 1;
}

void *fs_malloc(size_t n)
{
    return alloc_in(current(), n, 0);
}

void *fs_calloc(size_t count, size_t size)
{
    fs_alloc_ctx_t *c = current();
    if (size && count > SIZE_MAX / size) {
        (void)should_fail(c);   /* counted as a request, as before */
        return refused(c);
    }
    return alloc_in(c, count * size, 1);
}

void *fs_realloc(void *p, size_t n)
{
    if (!p)
        return fs_malloc(n);
    hdr_t *h = hdr_of(p);
    fs_alloc_ctx_t *c = h->ctx;     /* the block's own context */
    if (should_fail(c) || n > SIZE_MAX - FS_ALLOC_HEADER)
        return refused(c);
    size_t old = h->size, total = FS_ALLOC_HEADER + n;
    hdr_t *nh = c->fn ? c->fn(c->ud, h, FS_ALLOC_HEADER + old, total) : realloc(h, total);
    if (!nh)
        return refused(c);
    nh->size = n;
    add_bytes(c, (int64_t)n - (int64_t)old);
    return nh + 1;
}

void fs_free(void *p)
{
    if (!p)
        return;
    hdr_t *h = hdr_of(p);
    fs_alloc_ctx_t *c = h->ctx;
    atomic_fetch_sub_explicit(&c->live_blocks, 1, memory_order_relaxed);
    atomic_fetch_sub_explicit(&c->live_bytes, (int64_t)h->size, memory_order_relaxed);
    if (c->fn)
        c->fn(c->ud, h, FS_ALLOC_HEADER + h->size, 0);
    else
        free(h);
}

/* ---- contexts ---------------------------------------------------------------- */

void fs_alloc_ctx_init(fs_alloc_ctx_t *c, fs_alloc_fn fn, void *ud)
{
    c->fn = fn;
    c->ud = ud;
    atomic_init(&c->served, 0);
    atomic_init(&c->failed, 0);
    atomic_init(&c->fail_at, 0);
    atomic_init(&c->live_blocks, 0);
    atomic_init(&c->live_bytes, 0);
    atomic_init(&c->peak_bytes, 0);
}

int64_t fs_alloc_ctx_release(fs_alloc_ctx_t *c)
{
    return atomic_load(&c->live_blocks);
}

void fs_alloc_ctx_fail_after(fs_alloc_ctx_t *c, uint64_t n)
{
    uint64_t now = atomic_load(&c->served);
    atomic_store(&c->fail_at, n ? now + n : 0);
}

void fs_alloc_ctx_stats(const fs_alloc_ctx_t *c, fs_alloc_stats_t *out)
{
    fs_alloc_ctx_t *m = (fs_alloc_ctx_t *)c;    /* atomic loads take non-const pointers in C17 */
    out->served = atomic_load(&m->served);
    out->failed = atomic_load(&m->failed);
    out->live_blocks = atomic_load(&m->live_blocks);
    out->live_bytes = atomic_load(&m->live_bytes);
    out->peak_bytes = atomic_load(&m->peak_bytes);
}

void fs_alloc_ctx_reset_stats(fs_alloc_ctx_t *c)
{
    uint64_t served = atomic_exchange(&c->served, 0);
    uint64_t at = atomic_load(&c->fail_at);     /* keep an armed injection where it was */
    if (at)
        atomic_store(&c->fail_at, at > served ? at - served : 1);
    atomic_store(&c->failed, 0);
    atomic_store(&c->peak_bytes, atomic_load(&c->live_bytes));
}

fs_alloc_ctx_t *fs_alloc_bind(fs_alloc_ctx_t *c)
{
    fs_alloc_ctx_t *prev = bound;
    bound = c;
    return prev;
}

fs_alloc_ctx_t *fs_alloc_bound(void) { return bound; }

/* ---- the calling thread's context -------------------------------------------- */

void fs_alloc_fail_after(uint64_t n) { fs_alloc_ctx_fail_after(current(), n); }

uint64_t fs_alloc_count(void) { return atomic_load(&current()->served); }

int64_t fs_alloc_live(void) { return atomic_load(&current()->live_blocks); }

/* ---- helpers ------------------------------------------------------------------ */

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
