/*
 * fs_evq: the pending-event set.
 *
 * An array-backed 4-ary min-heap of 16-byte keys over a pool of event
 * records with inline payload.  Order is total: (time, priority, sequence),
 * where the sequence number is assigned at push, so equal-time,
 * equal-priority events pop in insertion order (like libuv timers) and ties
 * never fall to pointer or hash order.
 *
 * Key layout (why 16 bytes: four siblings fill one 64-byte cache line, and
 * the heap array is placed so that every sibling group starts on a line):
 *   time   int64, us
 *   lo     priority (8 bits) << 56 | sequence (30 bits) << 26 | slot (26 bits)
 * Sequence numbers run up to FS_EVQ_SEQ_LIMIT; when they run out, the live
 * keys are renumbered 0..n-1 in their current order (O(n log n), once per
 * ~10^9 pushes), which changes no comparison.  At most FS_EVQ_MAX_PENDING
 * events can be pending at once (the slot field); push refuses more with
 * FS_ELIMIT.
 *
 * Cancellation is lazy (Redis ae, ROSS): fs_evq_cancel bumps the slot's
 * generation and frees the slot at once; the heap key, now stale, is skipped
 * when it reaches the top.  A key is live iff its record still carries the
 * key's sequence number.  When stale keys outnumber live ones (and there are
 * more than FS_EVQ_COMPACT_MIN), the next push rebuilds the heap in O(n).
 *
 * Handles are (slot, generation).  Generations start at 1 and a slot whose
 * generation wraps is retired, so a handle can never cancel a later event
 * that reuses its slot, and the zero handle ({0, 0}) is never valid:
 * models may zero-initialise handle fields to mean "none".
 *
 * Complexity: push O(log4 n) (O(1) on average for random times), pop
 * O(4 log4 n), peek O(1) amortised, cancel O(1).  No allocation per event:
 * the pool and heap grow by doubling.
 * Ownership: the queue owns its arrays; events are copied in and out.
 * The struct fields are private to fs_evq.c (tests may read them, and may
 * set `seq` near FS_EVQ_SEQ_LIMIT to exercise renumbering).
 */
#ifndef FS_EVQ_H
#define FS_EVQ_H

#include <stddef.h>
#include <stdint.h>

#include "fs_time.h"

#define FS_EVQ_COMPACT_MIN 1024
#define FS_EVQ_SLOT_BITS 26
#define FS_EVQ_SEQ_BITS 30
#define FS_EVQ_MAX_PENDING ((size_t)1 << FS_EVQ_SLOT_BITS)   /* 67,108,864 */
#define FS_EVQ_SEQ_LIMIT ((uint64_t)1 << FS_EVQ_SEQ_BITS)

typedef struct fs_event {
    fs_time_t time;     /* when it fires, us */
    uint32_t type;      /* model-defined kind */
    uint32_t entity;    /* model-defined id (job slot, node, ...) */
    uint64_t data;      /* model-defined payload */
    uint8_t priority;   /* lower fires first at equal time */
} fs_event_t;

typedef struct fs_event_handle {
    uint32_t slot;
    uint32_t gen;       /* 0 = no event */
} fs_event_handle_t;

typedef struct fs_evq_key {
    fs_time_t time;     /* us */
    uint64_t lo;        /* priority << 56 | sequence << 26 | slot */
} fs_evq_key_t;

/* An event record: the payload (time and priority live in the key). */
typedef struct fs_evq_rec {
    uint64_t data;
    uint32_t type;
    uint32_t entity;
    uint32_t gen;       /* handle generation: bumped on free, never 0 when in use */
    uint32_t link;      /* live: the sequence number of its key (< 2^30);
                           free: bit 31 | next free slot (0x7fffffff = none) */
} fs_evq_rec_t;

typedef struct fs_evq {
    fs_evq_key_t *heap;     /* heap[1] is 64-byte aligned (inside heap_mem) */
    void *heap_mem;
    size_t n, cap;          /* heap keys, live + stale (+ hole); capacity */
    fs_evq_rec_t *pool;
    size_t pool_cap;
    uint32_t free_head;
    size_t live;            /* live (not cancelled) events */
    int hole;               /* heap[0] was popped and awaits the next push */
    uint64_t seq;           /* next sequence number (< FS_EVQ_SEQ_LIMIT) */
    uint64_t renumbers;     /* times the sequence numbers were renumbered */
    uint64_t compactions;   /* times the heap was rebuilt without stale keys */
    fs_event_t top;         /* what fs_evq_peek points to */
} fs_evq_t;

void fs_evq_init(fs_evq_t *q);
void fs_evq_release(fs_evq_t *q);

/* Copies *ev in.  Returns 0, FS_ENOMEM, or FS_ELIMIT when
 * FS_EVQ_MAX_PENDING events are pending (queue unchanged on error); the
 * handle, if h is non-NULL, can cancel the event until it fires. */
int fs_evq_push(fs_evq_t *q, const fs_event_t *ev, fs_event_handle_t *h);

/* Earliest live event, or NULL if none.  The pointer is valid until the next
 * push, pop or cancel. */
const fs_event_t *fs_evq_peek(fs_evq_t *q);

/* Removes the earliest live event into *out; returns 0, or -1 if empty. */
int fs_evq_pop(fs_evq_t *q, fs_event_t *out);

/* Cancels a pending event.  Returns 1 if it was pending, 0 if it had already
 * fired or been cancelled, or the handle is zero (harmless). */
int fs_evq_cancel(fs_evq_t *q, fs_event_handle_t h);

static inline size_t fs_evq_size(const fs_evq_t *q) { return q->live; }

#endif
