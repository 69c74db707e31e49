#include "fs_evq.h"
#include "fs_alloc.h"
#include "fs_error.h"

#include <string.h>

#define D 4
#define NIL UINT32_MAX

static inline int key_less(const fs_evq_key_t *a, const fs_evq_key_t *b)
{
    return a->time < b->time || (a->time == b->time && a->ord < b->ord);
}

static void sift_up(fs_evq_key_t *h, size_t i)
{
    fs_evq_key_t k = h[i];
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
        size_t best = c;
        size_t end = c + D < n ? c + D : n;
        for (size_t j = c + 1; j < end; j++)
            if (key_less(&h[j], &h[best]))
                best = j;
        if (!key_less(&h[best], &k))
            break;
        h[i] = h[best];
        i = best;
    }
    h[i] = k;
}

void fs_evq_init(fs_evq_t *q)
{
    memset(q, 0, sizeof *q);
    q->free_head = NIL;
}

void fs_evq_release(fs_evq_t *q)
{
    fs_free(q->heap);
    fs_free(q->pool);
    fs_evq_init(q);
}

static inline int key_live(const fs_evq_t *q, const fs_evq_key_t *k)
{
    return q->pool[k->slot].gen == k->gen;
}

static void free_slot(fs_evq_t *q, uint32_t slot)
{
    q->pool[slot].gen++;
    q->pool[slot].next_free = q->free_head;
    q->free_head = slot;
}

/* Drops stale keys and re-heapifies: O(n). */
static void compact(fs_evq_t *q)
{
    size_t w = 0;
    for (size_t r = 0; r < q->n; r++)
        if (key_live(q, &q->heap[r]))
            q->heap[w++] = q->heap[r];
    q->n = w;
    if (w > 1)
        for (size_t i = (w - 2) / D + 1; i-- > 0;)
            sift_down(q->heap, w, i);
}

int fs_evq_push(fs_evq_t *q, const fs_event_t *ev, fs_event_handle_t *h)
{
    if (q->n - q->live > FS_EVQ_COMPACT_MIN && q->n - q->live > q->live)
        compact(q);
    if (fs_grow((void **)&q->heap, &q->cap, q->n + 1, sizeof *q->heap))
        return FS_ENOMEM;
    uint32_t slot = q->free_head;
    if (slot == NIL) {
        size_t used = q->pool_cap;
        if (used >= NIL - 1)
            return FS_ENOMEM;
        size_t cap = q->pool_cap;
        if (fs_grow((void **)&q->pool, &cap, used + 1, sizeof *q->pool))
            return FS_ENOMEM;
        /* thread the new records onto the free list, lowest index first */
        for (size_t i = cap; i-- > used;) {
            q->pool[i].gen = 0;
            q->pool[i].next_free = q->free_head;
            q->free_head = (uint32_t)i;
        }
        q->pool_cap = cap;
        slot = q->free_head;
    }
    fs_evq_rec_t *rec = &q->pool[slot];
    q->free_head = rec->next_free;
    rec->ev = *ev;
    rec->next_free = NIL;

    fs_evq_key_t *k = &q->heap[q->n];
    k->time = ev->time;
    k->ord = ((uint64_t)ev->priority << 56) | (q->seq++ & ((UINT64_C(1) << 56) - 1));
    k->slot = slot;
    k->gen = rec->gen;
    sift_up(q->heap, q->n);
    q->n++;
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
    while (q->n > 0 && !key_live(q, &q->heap[0])) {
        q->heap[0] = q->heap[--q->n];
        if (q->n > 1)
            sift_down(q->heap, q->n, 0);
    }
}

const fs_event_t *fs_evq_peek(fs_evq_t *q)
{
    skip_stale(q);
    return q->n ? &q->pool[q->heap[0].slot].ev : NULL;
}

int fs_evq_pop(fs_evq_t *q, fs_event_t *out)
{
    skip_stale(q);
    if (q->n == 0)
        return -1;
    uint32_t slot = q->heap[0].slot;
    *out = q->pool[slot].ev;
    free_slot(q, slot);
    q->heap[0] = q->heap[--q->n];
    if (q->n > 1)
        sift_down(q->heap, q->n, 0);
    q->live--;
    return 0;
}

int fs_evq_cancel(fs_evq_t *q, fs_event_handle_t h)
{
    if (h.slot >= q->pool_cap || q->pool[h.slot].gen != h.gen ||
        q->pool[h.slot].next_free != NIL)
        return 0;
    /* a live record has next_free == NIL; a freed one is linked (or is the
     * tail with a bumped generation, caught by the gen check above) */
    free_slot(q, h.slot);
    q->live--;
    return 1;
}
