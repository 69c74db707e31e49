#include "fs_evq.h"
#include "fs_alloc.h"
#include "fs_error.h"

#include <stdlib.h>
#include <string.h>

#define D 4
#define NIL UINT32_C(0x7fffffff)      /* end of a list (no slot is this big) */
#define FREE_BIT UINT32_C(0x80000000) /* link of a free record */
#define SLOT_MASK ((UINT64_C(1) << FS_EVQ_SLOT_BITS) - 1)
#define SEQ_MASK ((UINT64_C(1) << FS_EVQ_SEQ_BITS) - 1)
#define LINE 64
#define PREFETCH_MIN 32768 /* keys (512 KiB): below this the heap stays in L2 */
#define POOL_MIN 16
#ifndef AHEAD
#define AHEAD 8 /* buckets */
#endif
#ifndef BUCKETS_PER_EVENT
#define BUCKETS_PER_EVENT 4
#endif

/* ------------------------------------------------------------------ keys */

static inline uint32_t key_slot(const fs_evq_key_t *k) { return (uint32_t)(k->lo & SLOT_MASK); }
static inline uint32_t key_seq(const fs_evq_key_t *k)
{
    return (uint32_t)((k->lo >> FS_EVQ_SLOT_BITS) & SEQ_MASK);
}

static inline fs_evq_key_t make_key(const fs_evq_rec_t *r, uint32_t slot)
{
    fs_evq_key_t k = {
        .time = r->time,
        .lo = ((uint64_t)r->priority << 56) | ((uint64_t)r->link << FS_EVQ_SLOT_BITS) | slot,
    };
    return k;
}

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

/* ------------------------------------------------------------------ heap */

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

/* The grandchildren of a node whose first child is c are four consecutive
 * cache lines: fetch them while the children are compared (this pays off
 * once the heap no longer fits in L2).  A macro, not a function: GCC finds a
 * function made only of prefetches "pure" and deletes the calls. */
#define PREFETCH_GRANDCHILDREN(h, n, c)                  \
    do {                                                 \
        size_t g_ = (c) * D + 1;                         \
        if ((n) > PREFETCH_MIN && g_ < (n)) {            \
            __builtin_prefetch(&(h)[g_]);                \
            __builtin_prefetch(&(h)[g_ + D]);            \
            __builtin_prefetch(&(h)[g_ + 2 * D]);        \
            __builtin_prefetch(&(h)[g_ + 3 * D]);        \
        }                                                \
    } while (0)

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

/* Removes h[0] of n keys.  Why bottom-up (Floyd): the last key, which
 * refills the hole, is usually among the largest, so instead of comparing
 * it at every level on the way down we walk the hole to a leaf along the
 * least children and sift the last key up from there, usually zero or one
 * step. */
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

/* Builds a heap of the first n keys: O(n). */
static void heapify(fs_evq_key_t *h, size_t n)
{
    if (n > 1)
        for (size_t i = (n - 2) / D + 1; i-- > 0;)
            sift_down(h, n, i);
}

/* Why a hole: in a simulation nearly every pop is followed by a push (the
 * fired event schedules its successor).  Pop therefore leaves heap[0] empty
 * (q->hole) and the next key inserted into the heap drops there and sifts
 * down: one pass instead of a remove (root to leaf) plus an insert (leaf
 * upwards).  Anything else first settles the hole by removing it. */
static inline void settle(fs_evq_t *q)
{
    if (q->hole) {
        q->hole = 0;
        remove_top(q->heap, q->n--);
    }
}

static inline size_t stale_keys(const fs_evq_t *q) { return q->n - (size_t)q->hole - q->heap_live; }

/* Drops stale keys and re-heapifies: O(n). */
static void compact_heap(fs_evq_t *q)
{
    settle(q);
    size_t w = 0;
    for (size_t r = 0; r < q->n; r++)
        if (key_live(q, &q->heap[r]))
            q->heap[w++] = q->heap[r];
    q->n = w;
    heapify(q->heap, w);
}

/* Inserts the key of a live record.  Room: cap >= pool_cap, and a compacted
 * heap holds only live events other than this one. */
static void heap_insert(fs_evq_t *q, fs_evq_key_t k)
{
    if (q->hole) {
        q->hole = 0;
        q->heap[0] = k;
        sift_down(q->heap, q->n, 0);
        return;
    }
    if (q->n >= q->cap) {
        compact_heap(q);
        q->compactions++;
    }
    sift_up(q->heap, q->n, k);
    q->n++;
}

/* Pops stale keys off the top until a live one (or nothing) is there. */
static void skip_stale(fs_evq_t *q)
{
    settle(q);
    while (q->n > 0 && !key_live(q, &q->heap[0]))
        remove_top(q->heap, q->n--);
}

/* --------------------------------------------------------------- records */

/* Why retire on wrap: after 2^32 reuses of one slot its generation would come
 * back to a value that an old handle holds, and that handle would cancel an
 * unrelated event.  A slot whose generation wraps to 0 is never reused (one
 * record per 2^32 events is lost); generation 0 is never handed out. */
static inline void recycle(fs_evq_t *q, uint32_t slot)
{
    fs_evq_rec_t *r = &q->pool[slot];
    r->dead = 0;
    r->listed = 0;
    if (r->gen == 0) {
        r->link = FREE_BIT | NIL; /* retired: free, on no list */
        return;
    }
    r->link = FREE_BIT | q->free_head;
    q->free_head = slot;
}

/* ----------------------------------------------------------------- tiers */

/* Files a pending record (time, priority and sequence set) into its tier. */
static inline void place(fs_evq_t *q, uint32_t slot)
{
    fs_evq_rec_t *r = &q->pool[slot];
    fs_time_t t = r->time;
    if (q->nb) {
        if (t < q->rstart)
            goto heap;
        uint64_t b = ((uint64_t)t - (uint64_t)q->rstart) >> q->sh;
        if (b < q->cur)
            goto heap;
        if (b < q->nb) {
            r->listed = 1;
            r->next = q->bucket[b];
            q->bucket[b] = slot;
            return;
        }
    }
    r->listed = 1;
    r->next = q->top;
    q->top = slot;
    if (q->ntop == 0 || t < q->top_min)
        q->top_min = t;
    if (q->ntop == 0 || t > q->top_max)
        q->top_max = t;
    q->ntop++;
    return;
heap:
    r->listed = 0;
    heap_insert(q, make_key(r, slot));
    q->heap_live++;
}

/* Moves bucket b into the heap, freeing its dead records. */
static void move_bucket(fs_evq_t *q, size_t b)
{
    uint32_t x = q->bucket[b];
    q->bucket[b] = NIL;
    while (x != NIL) {
        fs_evq_rec_t *r = &q->pool[x];
        uint32_t nx = r->next;
        if (r->dead) {
            q->dead--;
            recycle(q, x);
        } else {
            r->listed = 0;
            heap_insert(q, make_key(r, x));
            q->heap_live++;
        }
        x = nx;
    }
}

/* The rung is used up and the heap holds no live event: spread the top list
 * over a new rung of about one bucket per event.  O(ntop) plus the buckets. */
static void rebuild(fs_evq_t *q)
{
    settle(q);
    q->n = 0; /* every key left is stale */
    uint64_t span = (uint64_t)q->top_max - (uint64_t)q->top_min;
    size_t nb = 2;
    while (nb < BUCKETS_PER_EVENT * q->ntop)
        nb *= 2; /* <= BUCKETS_PER_EVENT * pool_cap: the bucket array's capacity */
    int sh = 0;
    while ((span >> sh) >= nb)
        sh++;
    q->nb = nb;
    q->sh = sh;
    q->rstart = q->top_min;
    q->cur = 0;
    for (size_t b = 0; b < nb; b++)
        q->bucket[b] = NIL;
    uint32_t x = q->top;
    q->top = NIL;
    q->ntop = 0;
    while (x != NIL) {
        fs_evq_rec_t *r = &q->pool[x];
        uint32_t nx = r->next;
        if (r->dead) {
            q->dead--;
            recycle(q, x);
        } else {
            size_t b = (size_t)(((uint64_t)r->time - (uint64_t)q->rstart) >> sh);
            r->next = q->bucket[b];
            q->bucket[b] = x;
        }
        x = nx;
    }
    q->rebuilds++;
}

/* Makes the heap's top the earliest live event; returns 0 if there is none. */
static int refill(fs_evq_t *q)
{
    for (;;) {
        skip_stale(q);
        if (q->n > 0)
            return 1;
        if (q->live == 0)
            return 0;
        while (q->cur < q->nb && q->bucket[q->cur] == NIL)
            q->cur++;
        if (q->cur < q->nb) {
            size_t b = q->cur++;
            /* the records of a bucket are scattered over the pool: start
             * fetching the first one of a bucket a little ahead, so that
             * it is in cache when its turn comes (large queues) */
            if (b + AHEAD < q->nb && q->bucket[b + AHEAD] != NIL)
                __builtin_prefetch(&q->pool[q->bucket[b + AHEAD]]);
            move_bucket(q, b);
        } else {
            rebuild(q);
        }
    }
}

/* Frees the dead records of every list: O(ntop + buckets). */
static void reap_list(fs_evq_t *q, uint32_t *head, size_t *count)
{
    uint32_t *p = head;
    while (*p != NIL) {
        fs_evq_rec_t *r = &q->pool[*p];
        if (r->dead) {
            uint32_t x = *p;
            *p = r->next;
            q->dead--;
            if (count)
                (*count)--;
            recycle(q, x);
        } else {
            p = &r->next;
        }
    }
}

static void reap_lists(fs_evq_t *q)
{
    reap_list(q, &q->top, &q->ntop);
    for (size_t b = q->cur; b < q->nb; b++)
        reap_list(q, &q->bucket[b], NULL);
}

/* ------------------------------------------------------------- lifecycle */

void fs_evq_init(fs_evq_t *q)
{
    memset(q, 0, sizeof *q);
    q->free_head = NIL;
    q->top = NIL;
}

void fs_evq_release(fs_evq_t *q)
{
    fs_free(q->heap_mem);
    fs_free(q->bucket);
    fs_free(q->pool);
    fs_evq_init(q);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Sequence numbers ran out: renumber the pending events 0..live-1 in the
 * order of their old numbers.  Every comparison between two events gives
 * the same answer as before, so the queue's order is unchanged.  Stale keys
 * go first: with new numbers one might match a record again. */
static int renumber(fs_evq_t *q)
{
    uint64_t *tmp = fs_malloc((q->live ? q->live : 1) * sizeof *tmp);
    if (!tmp)
        return FS_ENOMEM;
    compact_heap(q);
    size_t k = 0;
    for (size_t s = 0; s < q->pool_cap; s++) {
        const fs_evq_rec_t *r = &q->pool[s];
        if (!(r->link & FREE_BIT) && !r->dead)
            tmp[k++] = ((uint64_t)r->link << 32) | s;
    }
    qsort(tmp, k, sizeof *tmp, cmp_u64);
    for (size_t i = 0; i < k; i++)
        q->pool[(uint32_t)tmp[i]].link = (uint32_t)i;
    for (size_t i = 0; i < q->n; i++) {
        fs_evq_key_t *key = &q->heap[i];
        key->lo = make_key(&q->pool[key_slot(key)], key_slot(key)).lo;
    }
    fs_free(tmp);
    q->seq = k;
    q->renumbers++;
    return 0;
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

/* The free list is empty: doubles the pool, and the heap and the bucket
 * array with it, then threads the new records onto the free list, lowest
 * index first.  On failure the queue is unchanged (an array may be
 * bigger). */
static int grow_pool(fs_evq_t *q)
{
    size_t used = q->pool_cap;
    if (used >= FS_EVQ_MAX_PENDING)
        return FS_ELIMIT;
    size_t cap = used ? 2 * used : POOL_MIN;
    int rc = grow_heap(q, cap);
    if (rc)
        return rc;
    uint32_t *b = fs_realloc(q->bucket, BUCKETS_PER_EVENT * cap * sizeof *b);
    if (!b)
        return FS_ENOMEM;
    q->bucket = b;
    fs_evq_rec_t *p = fs_realloc(q->pool, cap * sizeof *p);
    if (!p)
        return FS_ENOMEM;
    q->pool = p;
    for (size_t i = cap; i-- > used;) {
        memset(&p[i], 0, sizeof p[i]);
        p[i].gen = 1;
        p[i].link = FREE_BIT | q->free_head;
        q->free_head = (uint32_t)i;
    }
    q->pool_cap = cap;
    return 0;
}

/* ------------------------------------------------------------ operations */

int fs_evq_push(fs_evq_t *q, const fs_event_t *ev, fs_event_handle_t *h)
{
    q->peek_ok = 0;
    if (stale_keys(q) > FS_EVQ_COMPACT_MIN && stale_keys(q) > q->heap_live) {
        compact_heap(q);
        q->compactions++;
    }
    if (q->dead > FS_EVQ_COMPACT_MIN && q->dead > q->live) {
        reap_lists(q);
        q->compactions++;
    }
    int rc;
    if (q->seq >= FS_EVQ_SEQ_LIMIT && (rc = renumber(q)))
        return rc;
    if (q->free_head == NIL && (rc = grow_pool(q)))
        return rc;
    uint32_t slot = q->free_head;
    fs_evq_rec_t *r = &q->pool[slot];
    q->free_head = r->link & ~FREE_BIT;
    r->time = ev->time;
    r->data = ev->data;
    r->type = ev->type;
    r->entity = ev->entity;
    r->priority = ev->priority;
    r->dead = 0;
    r->link = (uint32_t)q->seq++;
    place(q, slot);
    q->live++;
    if (h) {
        h->slot = slot;
        h->gen = r->gen;
    }
    return 0;
}

static inline void load_event(const fs_evq_t *q, const fs_evq_key_t *k, fs_event_t *out)
{
    const fs_evq_rec_t *r = &q->pool[key_slot(k)];
    out->time = r->time;
    out->type = r->type;
    out->entity = r->entity;
    out->data = r->data;
    out->priority = r->priority;
}

/* The loop asks for the next event several times per instant: the answer
 * is kept until the queue changes. */
const fs_event_t *fs_evq_peek(fs_evq_t *q)
{
    if (q->peek_ok)
        return &q->peeked;
    if (!refill(q))
        return NULL;
    load_event(q, &q->heap[0], &q->peeked);
    q->peek_ok = 1;
    return &q->peeked;
}

int fs_evq_pop(fs_evq_t *q, fs_event_t *out)
{
    q->peek_ok = 0;
    if (!refill(q))
        return -1;
    uint32_t slot = key_slot(&q->heap[0]);
    load_event(q, &q->heap[0], out);
    q->pool[slot].gen++;
    recycle(q, slot);
    q->hole = 1; /* filled by the next heap insert, or settled */
    q->heap_live--;
    q->live--;
    return 0;
}

int fs_evq_cancel(fs_evq_t *q, fs_event_handle_t h)
{
    q->peek_ok = 0;
    if (h.gen == 0 || h.slot >= q->pool_cap)
        return 0;
    fs_evq_rec_t *r = &q->pool[h.slot];
    if (r->gen != h.gen || (r->link & FREE_BIT) || r->dead)
        return 0;
    r->gen++;
    q->live--;
    if (r->listed) {
        r->dead = 1;
        q->dead++;
    } else {
        q->heap_live--;
        recycle(q, h.slot);
    }
    return 1;
}
