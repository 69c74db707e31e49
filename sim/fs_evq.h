/*
 * fs_evq: the pending-event set.
 *
 * An array-backed 4-ary min-heap of small keys (24 bytes: time, order word,
 * pool slot, generation) over a pool of event records with inline payload.
 * Order is total: (time, priority, sequence), where the sequence number is
 * assigned at push, so equal-time, equal-priority events pop in insertion
 * order (like libuv timers) and ties never fall to pointer or hash order.
 *
 * Cancellation is lazy (Redis ae, ROSS): fs_evq_cancel bumps the slot's
 * generation and frees the slot at once; the heap entry, now stale, is
 * skipped when it reaches the top.  When stale entries outnumber live ones
 * (and there are more than FS_EVQ_COMPACT_MIN), the heap is rebuilt in O(n).
 *
 * Complexity: push O(log4 n), pop O(4 log4 n), peek O(1) amortised, cancel
 * O(1).  No allocation per event: the pool and heap grow by doubling.
 * Ownership: the queue owns its arrays; events are copied in and out.
 */
#ifndef FS_EVQ_H
#define FS_EVQ_H

#include <stddef.h>
#include <stdint.h>

#include "fs_time.h"

#define FS_EVQ_COMPACT_MIN 1024

typedef struct fs_event {
    fs_time_t time;     /* when it fires, us */
    uint32_t type;      /* model-defined kind */
    uint32_t entity;    /* model-defined id (job slot, node, ...) */
    uint64_t data;      /* model-defined payload */
    uint8_t priority;   /* lower fires first at equal time */
} fs_event_t;

typedef struct fs_event_handle {
    uint32_t slot;
    uint32_t gen;
} fs_event_handle_t;

typedef struct fs_evq_key {
    fs_time_t time;
    uint64_t ord;       /* priority << 56 | sequence */
    uint32_t slot;
    uint32_t gen;
} fs_evq_key_t;

typedef struct fs_evq_rec {
    fs_event_t ev;
    uint32_t gen;       /* bumped on free; a key is live iff gens match */
    uint32_t next_free; /* free list link, UINT32_MAX = end */
} fs_evq_rec_t;

typedef struct fs_evq {
    fs_evq_key_t *heap;
    size_t n, cap;          /* heap entries, live + stale */
    fs_evq_rec_t *pool;
    size_t pool_cap;
    uint32_t free_head;
    size_t live;            /* live (not cancelled) events */
    uint64_t seq;           /* next sequence number */
} fs_evq_t;

void fs_evq_init(fs_evq_t *q);
void fs_evq_release(fs_evq_t *q);

/* Copies *ev in.  Returns 0 or FS_ENOMEM (queue unchanged); the handle, if
 * h is non-NULL, can cancel the event until it fires. */
int fs_evq_push(fs_evq_t *q, const fs_event_t *ev, fs_event_handle_t *h);

/* Earliest live event, or NULL if none.  The pointer is valid until the next
 * push, pop or cancel. */
const fs_event_t *fs_evq_peek(fs_evq_t *q);

/* Removes the earliest live event into *out; returns 0, or -1 if empty. */
int fs_evq_pop(fs_evq_t *q, fs_event_t *out);

/* Cancels a pending event.  Returns 1 if it was pending, 0 if it had already
 * fired or been cancelled (harmless). */
int fs_evq_cancel(fs_evq_t *q, fs_event_handle_t h);

static inline size_t fs_evq_size(const fs_evq_t *q) { return q->live; }

#endif
