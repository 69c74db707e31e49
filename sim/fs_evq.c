#include "fs_evq.h"
#include "fs_alloc.h"
#include "fs_error.h"

#include <stdlib.h>
#include <string.h>

#define D 4
#define NIL UINT32_C(0x7fffffff)  /* end of the free list (no slot is this big) */
#define FREE_BIT UINT32_C(0x80000000)  /* link of a free record */
#define SLOT_MASK ((UINT64_C(1) << FS_EVQ_SLOT_BITS) - 1)
#define SEQ_MASK ((UINT64_C(1) << FS_EVQ_SEQ_BITS) - 1)
#define LINE 64
#define PREFETCH_MIN 32768 /* keys (512 KiB): below this the heap stays in L2 */

static inline uint32_t key_slot(const fs_evq_key_t *k) { return (uint32_t)(k->lo & SLOT_MASK); }
static inline uint32_t key_seq(const fs_evq_key_t *k)
{
    return (uint32_t)((k->lo >> FS_EVQ_SLOT_BITS) & SEQ_MASK);
}
static inline uint8_t key_prio(const fs_evq_key_t *k) { return (uint8_t)(k->lo >> 56); }

/* Branch-free so that the compiler can select children with cmov: the
 * outcome of a comparison between random times is a coin flip, and a
 * mispredicted branch per level was most of the cost of a pop. */
__extension__ typedef unsigned __int128 u128;

static inline u128 key_word(const fs_evq_key_t *k)
{
    /* flipping the sign bit maps signed order onto unsigned order */
    return ((u128)((uint64_t)k->time ^ (UINT64_C(1) << 63)) << 64) | k->lo;
}

static inline int key_less(const fs_evq_key_t *a, const fs_evq_key_t *b)
{
    return key_word(a) < key_word(b);
}

static inline int key_live(const fs_evq_t *q, const fs_evq_key_t *k)
{
    return q->pool[key_slot(k)].link == key_seq(k);
}

/* Index of the least of the children c .. min(c + D, n) - 1 (c < n). */
static inline size_t min_child(const fs_evq_key_t *h, size_t n, size_t c)
{
    if (c + D <= n) {
        size_t a = c + (size_t)key_less(&h[c + 1], &h[c]);
        size_t b = c + 2 + (size_t)key_less(&h[c + 3], &h[c + 2]);
        return key_less(&h[b], &h[a]) ? b : a;
    }
    size_t best = c;
    for (size_t j = c + 1; j < n; j++)
        if (key_less(&h[j], &h[best]))
            best = j;
    return best;
}

static void sift_up(fs_evq_key_t *h, size_t i, fs_evq_key_t k)
{
    while (i > 0) {
        size_t p = (i - 1) / D;
        if (!key_less(&k, &h[p]))
            break;
        h[i] = h[p];
        i = p;
    }
    h[i] = k;
}

/* The grandchildren of a node whose first child is c are four consecutive
 * cache lines: fetch them while the children are compared (this pays off
 * once the heap no longer fits in L2).  A macro, not a function: GCC finds a
 * function made only of prefetches "pure" and deletes the calls. */
#define PREFETCH_GRANDCHILDREN(h, n, c)                 \
    do {                                                \
        size_t g_ = (c) * D + 1;                        \
        if ((n) > PREFETCH_MIN && g_ < (n)) {          \
            __builtin_prefetch(&(h)[g_]);               \
            __builtin_prefetch(&(h)[g_ + D]);           \
            __builtin_prefetch(&(h)[g_ + 2 * D]);       \
            __builtin_prefetch(&(h)[g_ + 3 * D]);       \
        }                                               \
    } while (0)

static void sift_down(fs_evq_key_t *h, size_t n, size_t i)
{
    fs_evq_key_t k = h[i];
    for (;;) {
        size_t c = i * D + 1;
        if (c >= n)
            break;
        PREFETCH_GRANDCHILDREN(h, n, c);
        size_t best = min_child(h, n, c);
        if (!key_less(&h[best], &k))
            break;
        h[i] = h[best];
        i = best;
    }
    h[i] = k;
}

/* Removes h[0].  Why bottom-up (Floyd): the last key, which refills the
 * hole, is usually among the largest, so instead of comparing it at every
 * level on the way down we walk the hole to a leaf along the least children
 * and sift the last key up from there, usually zero or one step. */
static void remove_top(fs_evq_key_t *h, size_t n)
{
    fs_evq_key_t last = h[n - 1];
    n--;
    size_t i = 0;
    for (;;) {
        size_t c = i * D + 1;
        if (c >= n)
            break;
        PREFETCH_GRANDCHILDREN(h, n, c);
        size_t best = min_child(h, n, c);
        h[i] = h[best];
        i = best;
    }
    sift_up(h, i, last);
}

void fs_evq_init(fs_evq_t *q)
{
    memset(q, 0, sizeof *q);
    q->free_head = NIL;
}

void fs_evq_release(fs_evq_t *q)
{
    fs_free(q->heap_mem);
    fs_free(q->pool);
    fs_evq_init(q);
}

/* Why retire on wrap: after 2^32 reuses of one slot its generation would come
 * back to a value that an old handle holds, and that handle would cancel an
 * unrelated event.  A slot whose generation wraps to 0 is never reused (one
 * record per 2^32 events is lost); generation 0 is never handed out. */
static void free_slot(fs_evq_t *q, uint32_t slot)
{
    fs_evq_rec_t *r = &q->pool[slot];
    if (++r->gen == 0) {
        r->link = FREE_BIT | NIL; /* free, on no list */
        return;
    }
    r->link = FREE_BIT | q->free_head;
    q->free_head = slot;
}

/* Builds a heap of the first n keys: O(n). */
static void heapify(fs_evq_key_t *h, size_t n)
{
    if (n > 1)
        for (size_t i = (n - 2) / D + 1; i-- > 0;)
            sift_down(h, n, i);
}

/* Why a hole: in a simulation nearly every pop is followed by a push (the
 * fired event schedules its successor).  Pop therefore leaves heap[0] empty
 * (q->hole) and the next push drops its key there and sifts it down: one
 * pass instead of a remove (root to leaf) plus an insert (leaf upwards).
 * Any other operation first settles the hole by removing it properly. */
static inline void settle(fs_evq_t *q)
{
    if (q->hole) {
        q->hole = 0;
        remove_top(q->heap, q->n--);
    }
}

/* Keys in the heap that belong to cancelled events. */
static inline size_t stale_count(const fs_evq_t *q) { return q->n - q->hole - q->live; }

/* Drops stale keys and re-heapifies: O(n). */
static void compact(fs_evq_t *q)
{
    settle(q);
    size_t w = 0;
    for (size_t r = 0; r < q->n; r++)
        if (key_live(q, &q->heap[r]))
            q->heap[w++] = q->heap[r];
    q->n = w;
    heapify(q->heap, w);
    q->compactions++;
}

static int cmp_seq(const void *a, const void *b)
{
    uint32_t x = key_seq(a), y = key_seq(b);
    return (x > y) - (x < y);
}

/* Sequence numbers ran out: renumber the live keys 0..n-1 in the order of
 * their old numbers.  Every comparison between two keys gives the same
 * answer as before, so the queue's order is unchanged. */
static void renumber(fs_evq_t *q)
{
    compact(q);
    qsort(q->heap, q->n, sizeof *q->heap, cmp_seq);
    for (size_t i = 0; i < q->n; i++) {
        fs_evq_key_t *k = &q->heap[i];
        k->lo = (k->lo & ~(SEQ_MASK << FS_EVQ_SLOT_BITS)) | ((uint64_t)i << FS_EVQ_SLOT_BITS);
        q->pool[key_slot(k)].link = (uint32_t)i;
    }
    heapify(q->heap, q->n);
    q->seq = q->n;
    q->renumbers++;
}

/* Grows the heap so that it holds need keys, keeping heap[1] on a cache
 * line boundary (heap[4i+1 .. 4i+4], the children of i, share one line). */
static int grow_heap(fs_evq_t *q, size_t need)
{
    if (need <= q->cap)
        return 0;
    size_t ncap = q->cap ? q->cap * 2 : 64;
    while (ncap < need)
        ncap *= 2;
    if (ncap > (SIZE_MAX - LINE) / sizeof *q->heap)
        return FS_ENOMEM;
    void *mem = fs_malloc(ncap * sizeof *q->heap + LINE);
    if (!mem)
        return FS_ENOMEM;
    uintptr_t a = ((uintptr_t)mem + sizeof *q->heap + LINE - 1) & ~(uintptr_t)(LINE - 1);
    fs_evq_key_t *h = (fs_evq_key_t *)(void *)(a - sizeof *q->heap);
    if (q->n)
        memcpy(h, q->heap, q->n * sizeof *h);
    fs_free(q->heap_mem);
    q->heap_mem = mem;
    q->heap = h;
    q->cap = ncap;
    return 0;
}

/* Grows the pool (free list empty) and threads the new records onto the
 * free list, lowest index first. */
static int grow_pool(fs_evq_t *q)
{
    size_t used = q->pool_cap;
    if (used >= FS_EVQ_MAX_PENDING)
        return FS_ELIMIT;
    size_t cap = q->pool_cap;
    if (fs_grow((void **)&q->pool, &cap, used + 1, sizeof *q->pool))
        return FS_ENOMEM;
    if (cap > FS_EVQ_MAX_PENDING)
        cap = FS_EVQ_MAX_PENDING;
    for (size_t i = cap; i-- > used;) {
        q->pool[i].gen = 1;
        q->pool[i].link = FREE_BIT | q->free_head;
        q->free_head = (uint32_t)i;
    }
    q->pool_cap = cap;
    return 0;
}

int fs_evq_push(fs_evq_t *q, const fs_event_t *ev, fs_event_handle_t *h)
{
    if (stale_count(q) > FS_EVQ_COMPACT_MIN && stale_count(q) > q->live)
        compact(q);
    if (q->seq >= FS_EVQ_SEQ_LIMIT)
        renumber(q);
    int rc;
    if (!q->hole && (rc = grow_heap(q, q->n + 1)))
        return rc;
    if (q->free_head == NIL && (rc = grow_pool(q)))
        return rc;
    uint32_t slot = q->free_head;
    fs_evq_rec_t *rec = &q->pool[slot];
    q->free_head = rec->link & ~FREE_BIT;
    uint32_t seq = (uint32_t)q->seq++;
    rec->data = ev->data;
    rec->type = ev->type;
    rec->entity = ev->entity;
    rec->link = seq;

    fs_evq_key_t k = {
        .time = ev->time,
        .lo = ((uint64_t)ev->priority << 56) | ((uint64_t)seq << FS_EVQ_SLOT_BITS) | slot,
    };
    if (q->hole) {
        q->hole = 0;
        q->heap[0] = k;
        sift_down(q->heap, q->n, 0);
        /* the next pop reads the new top's record: start fetching it */
        __builtin_prefetch(&q->pool[key_slot(&q->heap[0])]);
    } else {
        sift_up(q->heap, q->n, k);
        q->n++;
    }
    q->live++;
    if (h) {
        h->slot = slot;
        h->gen = rec->gen;
    }
    return 0;
}

/* Pops stale keys off the top until a live one (or nothing) is there. */
static void skip_stale(fs_evq_t *q)
{
    settle(q);
    while (q->n > 0 && !key_live(q, &q->heap[0]))
        remove_top(q->heap, q->n--);
}

static inline void load_event(const fs_evq_t *q, const fs_evq_key_t *k, fs_event_t *out)
{
    const fs_evq_rec_t *r = &q->pool[key_slot(k)];
    out->time = k->time;
    out->type = r->type;
    out->entity = r->entity;
    out->data = r->data;
    out->priority = key_prio(k);
}

const fs_event_t *fs_evq_peek(fs_evq_t *q)
{
    skip_stale(q);
    if (q->n == 0)
        return NULL;
    load_event(q, &q->heap[0], &q->top);
    return &q->top;
}

int fs_evq_pop(fs_evq_t *q, fs_event_t *out)
{
    skip_stale(q);
    if (q->n == 0)
        return -1;
    load_event(q, &q->heap[0], out);
    free_slot(q, key_slot(&q->heap[0]));
    q->hole = 1; /* removed by the next push, or settled */
    q->live--;
    return 0;
}

int fs_evq_cancel(fs_evq_t *q, fs_event_handle_t h)
{
    if (h.gen == 0 || h.slot >= q->pool_cap)
        return 0;
    const fs_evq_rec_t *r = &q->pool[h.slot];
    if (r->gen != h.gen || (r->link & FREE_BIT))
        return 0;
    free_slot(q, h.slot);
    q->live--;
    return 1;
}
