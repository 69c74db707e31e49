/*
 * fs_evq: the pending-event set.
 *
 * Order is total: (time, priority, sequence), where the sequence number is
 * assigned at push, so equal-time, equal-priority events pop in insertion
 * order (like libuv timers) and ties never fall to pointer or hash order.
 *
 * Structure (docs/engine.md has the measurements behind it).  Events live
 * in a pool of records with inline payload; each pending event is in one of
 * three tiers, split by time:
 *   heap   an array-backed 4-ary min-heap of 16-byte keys: every event
 *          before the current bucket (the near future), in full order;
 *   rung   nb buckets of width 2^sh us from rstart: unsorted lists threaded
 *          through the records; bucket `cur` is the next to be moved into
 *          the heap, buckets before it are already there;
 *   top    an unsorted list of the events beyond the rung.
 * A push is O(1) into a bucket or the top, or O(log4 h) into the heap of the
 * near events.  When the heap has no live event, the next bucket is moved
 * into it; when the rung is used up, it is rebuilt from the top with about
 * four buckets per event (a calendar of one rung, after the ladder queue of
 * Tang, Goh and Thng, 2005).  Each event is touched O(1) times outside the
 * heap, and the heap holds only the near events, so a simulation's
 * pop + push ("hold") costs O(1) amortised for the usual time
 * distributions, and never more than a plain heap's O(log n) when many
 * events share a bucket (they then all go to the heap).
 *
 * Key layout (why 16 bytes: four siblings fill one 64-byte cache line, and
 * the heap array is placed so that every sibling group starts on a line):
 *   time   int64, us
 *   lo     priority (8 bits) << 56 | sequence (30 bits) << 26 | slot (26 bits)
 * Sequence numbers run up to FS_EVQ_SEQ_LIMIT; when they run out, the live
 * events are renumbered 0..n-1 in their current order (O(n log n), once per
 * ~10^9 pushes), which changes no comparison.  At most FS_EVQ_MAX_PENDING
 * events can be pending at once (the slot field); push refuses more with
 * FS_ELIMIT.
 *
 * Cancellation is lazy (Redis ae, ROSS): fs_evq_cancel bumps the record's
 * generation at once.  A heap event's record is freed at once and its key,
 * now stale (a key is live iff its record still carries the key's sequence
 * number), is skipped when it reaches the top; a listed event is marked dead
 * and freed when its list is next walked.  When stale keys outnumber the
 * heap's live ones, or dead records the live events (and there are more
 * than FS_EVQ_COMPACT_MIN), the next push cleans up in O(n).
 *
 * Handles are (slot, generation).  Generations start at 1 and a slot whose
 * generation wraps is retired, so a handle can never cancel a later event
 * that reuses its slot, and the zero handle ({0, 0}) is never valid:
 * models may zero-initialise handle fields to mean "none".
 *
 * No allocation per event: the pool, the heap and the bucket array grow by
 * doubling in push; pop, peek and cancel never allocate.
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

/* An event record (40 bytes). */
typedef struct fs_evq_rec {
    fs_time_t time;     /* us */
    uint64_t data;
    uint32_t type;
    uint32_t entity;
    uint32_t gen;       /* handle generation: bumped when the event ends */
    uint32_t link;      /* pending: its sequence number (< 2^30);
                           free: bit 31 | next free slot (0x7fffffff = none) */
    uint32_t next;      /* next record of its bucket or top list */
    uint8_t priority;
    uint8_t listed;     /* 1: in a bucket or the top list; 0: in the heap */
    uint8_t dead;       /* listed and cancelled: freed when its list is walked */
} fs_evq_rec_t;

typedef struct fs_evq {
    /* heap tier */
    fs_evq_key_t *heap;     /* heap[1] is 64-byte aligned (inside heap_mem) */
    void *heap_mem;
    size_t n, cap;          /* keys (live + stale + hole); capacity (>= pool_cap) */
    int hole;               /* heap[0] was popped and awaits the next insert */
    size_t heap_live;       /* live events in the heap tier */
    /* rung and top tiers */
    uint32_t *bucket;       /* list heads of the rung, capacity pool_cap */
    size_t nb, cur;         /* buckets in the rung; next bucket to move (nb = 0: no rung) */
    int sh;                 /* bucket width is 2^sh us */
    fs_time_t rstart;       /* start of bucket 0, us */
    uint32_t top;           /* list of the events beyond the rung */
    size_t ntop;            /* records in the top list (dead included) */
    fs_time_t top_min, top_max;
    /* records */
    fs_evq_rec_t *pool;
    size_t pool_cap;        /* a power of two, or 0 */
    uint32_t free_head;
    size_t live;            /* pending (not cancelled) events */
    size_t dead;            /* cancelled events still in a list */
    uint64_t seq;           /* next sequence number (< FS_EVQ_SEQ_LIMIT) */
    /* counters, for tests and benchmarks */
    uint64_t renumbers;     /* sequence renumberings */
    uint64_t compactions;   /* clean-ups of stale keys or dead records */
    uint64_t rebuilds;      /* rungs built from the top list */
    fs_event_t peeked;      /* what fs_evq_peek points to */
    int peek_ok;            /* peeked is the earliest live event (no push, pop or cancel since) */
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
