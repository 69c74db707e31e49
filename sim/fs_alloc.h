/*
 * fs_alloc: the one allocation hook of fleetsim, with allocation contexts.
 *
 * All fleetsim code allocates through fs_malloc/fs_calloc/fs_realloc/fs_free
 * (never malloc directly), so that tests can fail the Nth allocation
 * (SQLite-style fault injection), count live allocations at teardown, and a
 * library caller can give a run its own allocator and read what the run
 * used (docs/library.md, "Memory").
 *
 * Contexts.  An allocation context (fs_alloc_ctx_t) is an optional user
 * allocator (a Lua-style function and its pointer), its own fault-injection
 * knob and its own counters.  A thread works in one context at a time: the
 * one it bound with fs_alloc_bind, else the process default.  Binding is
 * explicit and scoped, like errno or a Python thread state: the API layer
 * binds a scenario's context for the duration of a call on it and restores
 * the previous one on return; a thread fleetsim starts (sweep workers, the
 * results writer, frag workers) binds the context of the thread that
 * started it.  The bound pointer is the only per-thread state; it holds no
 * run state, only which context is in charge (docs/library.md says why the
 * context is not passed through the ~420 call sites).
 *
 * Ownership.  Every block carries a small header (FS_ALLOC_HEADER bytes,
 * keeping max_align_t alignment) naming its context and its size: a block
 * belongs to the context it was allocated in for its whole life, and
 * fs_realloc and fs_free go to that context from any thread.  A context
 * must therefore outlive its blocks (fs_alloc_ctx_live_blocks() == 0
 * before it goes away).  Never pass a block of fs_malloc to free(), nor a
 * block of malloc (or of a library: open_memstream, H5...) to fs_free.
 *
 * Counters are atomic (relaxed): a run's context is used by its writer
 * thread too, and a block may be freed on another thread.  The default
 * context's knobs are process-wide test configuration (like
 * sqlite3_config), not run state: off by default, set by test harnesses.
 */
#ifndef FS_ALLOC_H
#define FS_ALLOC_H

#include <stdatomic.h>
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

/* ---- contexts ------------------------------------------------------------ */

/* A user allocator, as Lua's lua_Alloc: ptr NULL and nsize > 0 allocates;
 * ptr and nsize > 0 resizes (osize: the block's size); nsize 0 frees ptr
 * (returns NULL).  Blocks must be aligned for max_align_t, as malloc's.
 * The sizes include fleetsim's block header.  May be called from several
 * threads at once when the context is shared (a sweep, a run's writer). */
typedef void *(*fs_alloc_fn)(void *ud, void *ptr, size_t osize, size_t nsize);

/* Bytes in front of every block (a multiple of _Alignof(max_align_t)). */
#define FS_ALLOC_HEADER 16

typedef struct fs_alloc_stats {
    uint64_t served;        /* malloc, calloc and realloc requests (failed ones too) */
    uint64_t failed;        /* requests that returned NULL (injected or not) */
    int64_t live_blocks;    /* allocated and not freed */
    int64_t live_bytes;     /* their requested sizes, bytes (headers not counted) */
    int64_t peak_bytes;     /* the most live_bytes reached since init or the last reset */
} fs_alloc_stats_t;

/* Embedded by its owner (init/release); fields private to fs_alloc.c. */
typedef struct fs_alloc_ctx {
    fs_alloc_fn fn;         /* NULL: the C library's malloc family */
    void *ud;
    _Atomic uint64_t served, failed;
    _Atomic uint64_t fail_at;   /* 0 off; else requests number fail_at and later fail */
    _Atomic int64_t live_blocks, live_bytes, peak_bytes;
} fs_alloc_ctx_t;

/* fn NULL: the C library.  Counters zero, no injection. */
void fs_alloc_ctx_init(fs_alloc_ctx_t *c, fs_alloc_fn fn, void *ud);
/* Returns the number of blocks still live (a leak when non-zero: they can
 * no longer be freed safely once c is gone). */
int64_t fs_alloc_ctx_release(fs_alloc_ctx_t *c);
/* Requests served from now: the Nth (1-based) and every later one fail
 * until reset; 0 disables.  Only c's requests count. */
void fs_alloc_ctx_fail_after(fs_alloc_ctx_t *c, uint64_t n);
void fs_alloc_ctx_stats(const fs_alloc_ctx_t *c, fs_alloc_stats_t *out);
/* served = failed = 0, peak_bytes = live_bytes (a new measuring period). */
void fs_alloc_ctx_reset_stats(fs_alloc_ctx_t *c);

/* Binds c to the calling thread (NULL: back to the process default) and
 * returns the previous binding, to restore with a second call. */
fs_alloc_ctx_t *fs_alloc_bind(fs_alloc_ctx_t *c);
/* The calling thread's binding (NULL: the process default); a thread that
 * starts threads gives this to them to bind. */
fs_alloc_ctx_t *fs_alloc_bound(void);

/* ---- the calling thread's context (the default one unless bound) -------- */

/* Test hooks.  fail_after = N > 0: the Nth allocation from now (1-based)
 * and every later one fail until reset; 0 disables injection. */
void fs_alloc_fail_after(uint64_t n);
/* Number of allocations the context has served (since process start for
 * the default context). */
uint64_t fs_alloc_count(void);
/* Number of blocks currently live (allocated and not freed). */
int64_t fs_alloc_live(void);

#endif
