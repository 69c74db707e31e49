/*
 * Tests of the event set (sim/fs_evq) and of its benchmark routines
 * (sim/fs_bench): random operation sequences against a reference (a sorted
 * array in (time, priority, sequence) order), insertion order of ties,
 * cancellation and handles, compaction, renumbering of sequence numbers,
 * generation wrap, fault injection on push, and no leaks.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <gsl/gsl_cdf.h>
#include <gsl/gsl_rng.h>

#include "fs_test_util.h"
#include "sim/fs_alloc.h"
#include "sim/fs_bench.h"
#include "sim/fs_error.h"
#include "sim/fs_evq.h"
#include "sim/fs_rng.h"
#include "sim/fs_sim.h"

/* ---- a small deterministic generator for the test's own choices ---- */

static uint64_t tr_next(uint64_t *s)
{
    uint64_t z = (*s += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

static uint64_t tr_below(uint64_t *s, uint64_t n) { return tr_next(s) % n; }

/* ---- the reference: live events sorted by (time, priority, seq), largest
 * first, so that the earliest is at the end ---- */

typedef struct ref_ev {
    fs_time_t time;
    uint8_t prio;
    uint64_t seq;
    uint32_t id;
} ref_ev_t;

typedef struct ref {
    ref_ev_t *a;
    size_t n, cap;
    uint64_t seq;
} ref_t;

static int ref_less(const ref_ev_t *x, const ref_ev_t *y)
{
    if (x->time != y->time)
        return x->time < y->time;
    if (x->prio != y->prio)
        return x->prio < y->prio;
    return x->seq < y->seq;
}

static void ref_push(ref_t *r, fs_time_t t, uint8_t prio, uint32_t id)
{
    if (r->n == r->cap) {
        r->cap = r->cap ? 2 * r->cap : 256;
        r->a = realloc(r->a, r->cap * sizeof *r->a);
        assert_non_null(r->a);
    }
    ref_ev_t e = {t, prio, r->seq++, id};
    /* first position whose element is less than e (descending order) */
    size_t lo = 0, hi = r->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (ref_less(&r->a[mid], &e))
            hi = mid;
        else
            lo = mid + 1;
    }
    /* element by element: ASan's memmove interceptor copies byte by byte */
    for (size_t i = r->n; i > lo; i--)
        r->a[i] = r->a[i - 1];
    r->a[lo] = e;
    r->n++;
}

static int ref_remove_id(ref_t *r, uint32_t id)
{
    for (size_t i = 0; i < r->n; i++)
        if (r->a[i].id == id) {
            for (size_t j = i; j + 1 < r->n; j++)
                r->a[j] = r->a[j + 1];
            r->n--;
            return 1;
        }
    return 0;
}

/* The payload of event id, so that a pop proves it carried the right one. */
static fs_event_t make_ev(fs_time_t t, uint8_t prio, uint32_t id)
{
    fs_event_t ev = {.time = t, .type = id % 7, .entity = id * 3u + 1,
                     .data = (uint64_t)id * UINT64_C(0x100000001) ^ UINT64_C(0xabcdef),
                     .priority = prio};
    return ev;
}

static void assert_ev_is(const fs_event_t *ev, const ref_ev_t *r)
{
    fs_event_t want = make_ev(r->time, r->prio, r->id);
    assert_int_equal(ev->time, want.time);
    assert_int_equal(ev->priority, want.priority);
    assert_int_equal(ev->type, want.type);
    assert_int_equal(ev->entity, want.entity);
    assert_int_equal(ev->data, want.data);
}

/* Pops everything from q and checks it against r (emptying both). */
static void drain_and_compare(fs_evq_t *q, ref_t *r)
{
    fs_event_t ev;
    while (r->n > 0) {
        assert_int_equal(fs_evq_size(q), r->n);
        assert_int_equal(fs_evq_pop(q, &ev), 0);
        assert_ev_is(&ev, &r->a[r->n - 1]);
        r->n--;
    }
    assert_int_equal(fs_evq_size(q), 0);
    assert_null(fs_evq_peek(q));
    assert_int_equal(fs_evq_pop(q, &ev), -1);
}

/* ---- random sequences against the reference ---- */

enum { ST_PENDING = 1, ST_DONE = 2 };

enum time_mode {
    TM_MONOTONE, /* last popped + [0, 64): as in a simulation, many ties */
    TM_ANY,      /* [-100, 100): before the last popped too, negative */
    TM_MIXTURE   /* last popped + [0, 64) | [0, 10^6) | [0, 10^12): dense
                    buckets next to sparse ones and a far-away top */
};

static fs_time_t random_time(uint64_t *s, int mode, fs_time_t last)
{
    switch (mode) {
    case TM_MONOTONE:
        return last + (fs_time_t)tr_below(s, 64);
    case TM_ANY:
        return (fs_time_t)tr_below(s, 200) - 100;
    default: {
        unsigned u = (unsigned)tr_below(s, 10);
        uint64_t range = u < 7 ? 64 : u < 9 ? 1000000 : UINT64_C(1000000000000);
        return last + (fs_time_t)tr_below(s, range);
    }
    }
}

/* Runs `ops` random operations with times drawn as `mode` says. */
static void run_random(uint64_t seed, size_t ops, int mode)
{
    int64_t live0 = fs_alloc_live();
    uint64_t s = seed;
    fs_evq_t q;
    fs_evq_init(&q);
    ref_t r = {0};
    fs_event_handle_t *h = NULL;
    unsigned char *state = NULL;
    size_t nid = 0, capid = 0;
    fs_time_t last = 0;
    static const uint8_t prios[] = {10, 20, 30, 40, 50, 90};
    uint64_t cancels_ok = 0;

    for (size_t i = 0; i < ops; i++) {
        /* the queue fills and drains in waves of 10,000 operations, up to
         * 1,500 events (growth and stale keys happen), and the last tenth
         * drains it */
        unsigned push_pct = (i / 5000) % 2 == 0 ? 62 : 30;
        if (r.n > 1500)
            push_pct = 20;
        if (i >= ops - ops / 10)
            push_pct = 10;
        unsigned u = (unsigned)tr_below(&s, 100);
        if (u < push_pct) {
            fs_time_t t = random_time(&s, mode, last);
            uint8_t prio = prios[tr_below(&s, 6)];
            if (nid == capid) {
                capid = capid ? 2 * capid : 1024;
                h = realloc(h, capid * sizeof *h);
                state = realloc(state, capid);
                assert_true(h && state);
            }
            uint32_t id = (uint32_t)nid++;
            fs_event_t ev = make_ev(t, prio, id);
            assert_int_equal(fs_evq_push(&q, &ev, &h[id]), 0);
            assert_int_not_equal(h[id].gen, 0);
            state[id] = ST_PENDING;
            ref_push(&r, t, prio, id);
        } else if (u < push_pct + 20 && nid > 0) {
            /* cancel a random event ever pushed: pending, fired or cancelled */
            uint32_t id = (uint32_t)tr_below(&s, nid);
            int want = state[id] == ST_PENDING;
            assert_int_equal(fs_evq_cancel(&q, h[id]), want);
            if (want) {
                assert_true(ref_remove_id(&r, id));
                state[id] = ST_DONE;
                cancels_ok++;
            }
            /* a second cancel is always harmless */
            assert_int_equal(fs_evq_cancel(&q, h[id]), 0);
        } else if (u < push_pct + 25) {
            const fs_event_t *p = fs_evq_peek(&q);
            if (r.n == 0) {
                assert_null(p);
            } else {
                assert_non_null(p);
                assert_ev_is(p, &r.a[r.n - 1]);
            }
        } else {
            fs_event_t ev;
            if (r.n == 0) {
                assert_int_equal(fs_evq_pop(&q, &ev), -1);
            } else {
                assert_int_equal(fs_evq_pop(&q, &ev), 0);
                const ref_ev_t *want = &r.a[r.n - 1];
                assert_ev_is(&ev, want);
                state[want->id] = ST_DONE;
                last = ev.time;
                r.n--;
            }
        }
        assert_int_equal(fs_evq_size(&q), r.n);
    }
    assert_true(cancels_ok > ops / 50); /* the mix really cancelled */
    drain_and_compare(&q, &r);
    fs_evq_release(&q);
    free(r.a);
    free(h);
    free(state);
    assert_int_equal(fs_alloc_live(), live0);
}

static void test_random_vs_reference(void **st)
{
    (void)st;
    for (uint64_t seed = 1; seed <= 4; seed++)
        run_random(seed, 100000, TM_MONOTONE);
}

static void test_random_any_time_vs_reference(void **st)
{
    (void)st;
    for (uint64_t seed = 11; seed <= 12; seed++)
        run_random(seed, 100000, TM_ANY);
}

static void test_random_mixture_vs_reference(void **st)
{
    (void)st;
    for (uint64_t seed = 21; seed <= 22; seed++)
        run_random(seed, 100000, TM_MIXTURE);
}

/* ---- ties ---- */

static void test_equal_time_fifo(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    fs_evq_t q;
    fs_evq_init(&q);
    /* 3000 events at one time and priority: insertion order */
    for (uint32_t i = 0; i < 3000; i++) {
        fs_event_t ev = make_ev(500, 40, i);
        assert_int_equal(fs_evq_push(&q, &ev, NULL), 0);
    }
    for (uint32_t i = 0; i < 3000; i++) {
        fs_event_t ev;
        assert_int_equal(fs_evq_pop(&q, &ev), 0);
        assert_int_equal(ev.entity, i * 3u + 1);
    }
    /* one time, priorities interleaved: by priority, then insertion */
    static const uint8_t pr[] = {50, 10, 90, 10, 50, 30, 10, 90, 30, 50};
    for (uint32_t i = 0; i < 10; i++) {
        fs_event_t ev = make_ev(7, pr[i], i);
        assert_int_equal(fs_evq_push(&q, &ev, NULL), 0);
    }
    static const uint32_t order[] = {1, 3, 6, 5, 8, 0, 4, 9, 2, 7};
    for (int i = 0; i < 10; i++) {
        fs_event_t ev;
        assert_int_equal(fs_evq_pop(&q, &ev), 0);
        assert_int_equal(ev.entity, order[i] * 3u + 1);
        assert_int_equal(ev.priority, pr[order[i]]);
    }
    /* time beats priority; negative and extreme times order correctly */
    fs_time_t times[] = {5, -3, INT64_MAX, 0, INT64_MIN, 5};
    uint8_t prs[] = {90, 10, 0, 255, 255, 0};
    for (uint32_t i = 0; i < 6; i++) {
        fs_event_t ev = make_ev(times[i], prs[i], i);
        assert_int_equal(fs_evq_push(&q, &ev, NULL), 0);
    }
    static const uint32_t order2[] = {4, 1, 3, 5, 0, 2};
    for (int i = 0; i < 6; i++) {
        fs_event_t ev;
        assert_int_equal(fs_evq_pop(&q, &ev), 0);
        assert_int_equal(ev.time, times[order2[i]]);
        assert_int_equal(ev.entity, order2[i] * 3u + 1);
    }
    fs_evq_release(&q);
    assert_int_equal(fs_alloc_live(), live0);
}

/* ---- cancellation and handles ---- */

static void test_cancel_semantics(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    fs_evq_t q;
    fs_evq_init(&q);
    fs_event_handle_t zero = {0, 0};
    assert_int_equal(fs_evq_cancel(&q, zero), 0); /* empty queue */

    fs_event_handle_t a, b, c;
    fs_event_t ea = make_ev(10, 10, 1), eb = make_ev(20, 10, 2), ec = make_ev(30, 10, 3);
    assert_int_equal(fs_evq_push(&q, &ea, &a), 0);
    assert_int_equal(fs_evq_push(&q, &eb, &b), 0);
    assert_int_equal(fs_evq_push(&q, &ec, &c), 0);
    assert_int_equal(fs_evq_cancel(&q, zero), 0); /* the zero handle is never valid */
    assert_int_equal(fs_evq_size(&q), 3);

    /* cancel returns 1 once, then 0 */
    assert_int_equal(fs_evq_cancel(&q, b), 1);
    assert_int_equal(fs_evq_cancel(&q, b), 0);
    assert_int_equal(fs_evq_size(&q), 2);

    /* cancel after fire returns 0 */
    fs_event_t ev;
    assert_int_equal(fs_evq_pop(&q, &ev), 0);
    assert_int_equal(ev.entity, 4u);
    assert_int_equal(fs_evq_cancel(&q, a), 0);

    /* a new event reuses a freed slot: the old handles must not touch it */
    fs_event_handle_t d;
    fs_event_t ed = make_ev(15, 10, 4);
    assert_int_equal(fs_evq_push(&q, &ed, &d), 0);
    assert_true(d.slot == a.slot || d.slot == b.slot);
    assert_int_equal(fs_evq_cancel(&q, a), 0);
    assert_int_equal(fs_evq_cancel(&q, b), 0);
    assert_int_equal(fs_evq_size(&q), 2);

    /* out-of-range and forged handles are refused */
    fs_event_handle_t far = {100000, 1}, forged = {d.slot, d.gen + 1};
    assert_int_equal(fs_evq_cancel(&q, far), 0);
    assert_int_equal(fs_evq_cancel(&q, forged), 0);

    assert_int_equal(fs_evq_pop(&q, &ev), 0);
    assert_int_equal(ev.entity, 13u); /* d */
    assert_int_equal(fs_evq_cancel(&q, d), 0);
    assert_int_equal(fs_evq_cancel(&q, c), 1);
    assert_int_equal(fs_evq_size(&q), 0);
    assert_null(fs_evq_peek(&q));
    assert_int_equal(fs_evq_pop(&q, &ev), -1);
    fs_evq_release(&q);
    assert_int_equal(fs_alloc_live(), live0);
}

static void test_handles_across_growth(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    fs_evq_t q;
    fs_evq_init(&q);
    enum { EARLY = 10, MORE = 200000 };
    fs_event_handle_t h[EARLY];
    for (uint32_t i = 0; i < EARLY; i++) {
        fs_event_t ev = make_ev(1000 + i, 20, i);
        assert_int_equal(fs_evq_push(&q, &ev, &h[i]), 0);
    }
    size_t cap0 = q.pool_cap;
    for (uint32_t i = 0; i < MORE; i++) {
        fs_event_t ev = make_ev((fs_time_t)(i % 5000), 20, EARLY + i);
        assert_int_equal(fs_evq_push(&q, &ev, NULL), 0);
    }
    assert_true(q.pool_cap >= MORE + EARLY && q.pool_cap > 1000 * cap0);
    /* cancel the even early ones: the handles survived every reallocation */
    for (uint32_t i = 0; i < EARLY; i += 2)
        assert_int_equal(fs_evq_cancel(&q, h[i]), 1);
    /* early ids 0..9 have entities 1..28; every later one is above */
    size_t seen_odd = 0;
    fs_event_t ev, prev = {.time = INT64_MIN};
    while (fs_evq_pop(&q, &ev) == 0) {
        assert_true(ev.time >= prev.time);
        if (ev.entity < EARLY * 3u) {
            uint32_t id = (ev.entity - 1) / 3;
            assert_int_equal(ev.time, 1000 + id);
            assert_true(id % 2 == 1); /* cancelled ones never fire */
            seen_odd++;
        }
        prev = ev;
    }
    assert_int_equal(seen_odd, EARLY / 2);
    for (uint32_t i = 1; i < EARLY; i += 2)
        assert_int_equal(fs_evq_cancel(&q, h[i]), 0); /* fired */
    fs_evq_release(&q);
    assert_int_equal(fs_alloc_live(), live0);
}

/* ---- compaction ---- */

/* Cancelled events ahead of the heap are listed (in the rung or the top
 * list): they are marked dead, and reaped when they outnumber the live
 * ones. */
static void test_dead_records_are_reaped(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    uint64_t s = 99;
    fs_evq_t q;
    fs_evq_init(&q);
    ref_t r = {0};
    enum { N = 20000 };
    fs_event_handle_t *h = malloc(N * sizeof *h);
    assert_non_null(h);
    ref_ev_t first = {.time = INT64_MAX};
    for (uint32_t i = 0; i < N; i++) {
        fs_time_t t = (fs_time_t)tr_below(&s, 3000000);
        uint8_t prio = (uint8_t)(10 * (1 + tr_below(&s, 5)));
        fs_event_t ev = make_ev(t, prio, i);
        assert_int_equal(fs_evq_push(&q, &ev, &h[i]), 0);
        ref_ev_t e = {t, prio, r.seq, i};
        if (i < N / 2 && ref_less(&e, &first))
            first = e;
        if (i % 10 == 3) /* the survivors below */
            ref_push(&r, t, prio, i);
        else
            r.seq++; /* the reference numbers every push, as the queue does */
        if (i == N / 2 - 1) {
            /* one pop builds a rung: later pushes go to its buckets, the
             * heap or the top list */
            fs_event_t out;
            assert_int_equal(fs_evq_pop(&q, &out), 0);
            assert_ev_is(&out, &first);
            if (first.id % 10 == 3)
                assert_true(ref_remove_id(&r, first.id));
            assert_int_equal(q.rebuilds, 1);
        }
    }
    for (uint32_t i = 0; i < N; i++)
        if (i % 10 != 3)
            assert_int_equal(fs_evq_cancel(&q, h[i]), i != first.id);
    assert_int_equal(q.compactions, 0);
    assert_true(q.dead > N / 2); /* lazy: most are still listed */
    assert_int_equal(fs_evq_size(&q), r.n);
    /* the next push reaps them all */
    fs_event_t ev = make_ev(1500, 30, N);
    assert_int_equal(fs_evq_push(&q, &ev, NULL), 0);
    ref_push(&r, 1500, 30, N);
    assert_int_equal(q.compactions, 1);
    assert_int_equal(q.dead, 0);
    drain_and_compare(&q, &r);
    fs_evq_release(&q);
    free(r.a);
    free(h);
    assert_int_equal(fs_alloc_live(), live0);
}

/* Near events are in the heap: cancelled ones leave stale keys, which a
 * push compacts away when they outnumber the live ones. */
static void test_stale_keys_are_compacted(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    fs_evq_t q;
    fs_evq_init(&q);
    ref_t r = {0};
    enum { N = 6000 };
    fs_event_handle_t *h = malloc(N * sizeof *h);
    assert_non_null(h);
    /* one time: one bucket, all of it moved into the heap by the first pop */
    for (uint32_t i = 0; i < N; i++) {
        uint8_t prio = (uint8_t)(10 * (1 + i % 5));
        fs_event_t ev = make_ev(50, prio, i);
        assert_int_equal(fs_evq_push(&q, &ev, &h[i]), 0);
        ref_push(&r, 50, prio, i);
    }
    fs_event_t out;
    assert_int_equal(fs_evq_pop(&q, &out), 0);
    assert_ev_is(&out, &r.a[--r.n]);
    assert_int_equal(q.heap_live, N - 1);
    for (uint32_t i = 0; i < N; i++)
        if (i % 10 != 3) {
            int want = ref_remove_id(&r, i);
            assert_int_equal(fs_evq_cancel(&q, h[i]), want);
        }
    assert_int_equal(q.compactions, 0);
    assert_int_equal(q.n, N); /* lazy: the keys are still there (and the hole) */
    /* the next push compacts: the heap holds only live keys afterwards */
    fs_event_t ev = make_ev(50, 30, N);
    assert_int_equal(fs_evq_push(&q, &ev, NULL), 0);
    ref_push(&r, 50, 30, N);
    assert_int_equal(q.compactions, 1);
    assert_int_equal(q.n, q.heap_live);
    assert_int_equal(q.n, N / 10 + 1);
    /* more pushes with equal keys after compaction still come after the
     * older ones (sequence numbers were kept) */
    for (uint32_t i = 0; i < 50; i++) {
        fs_event_t e2 = make_ev(50, 30, N + 1 + i);
        assert_int_equal(fs_evq_push(&q, &e2, NULL), 0);
        ref_push(&r, 50, 30, N + 1 + i);
    }
    drain_and_compare(&q, &r);
    fs_evq_release(&q);
    free(r.a);
    free(h);
    assert_int_equal(fs_alloc_live(), live0);
}

static void test_no_compaction_below_minimum(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    fs_evq_t q;
    fs_evq_init(&q);
    fs_event_handle_t h[FS_EVQ_COMPACT_MIN];
    for (uint32_t i = 0; i < FS_EVQ_COMPACT_MIN; i++) {
        fs_event_t ev = make_ev(i, 10, i);
        assert_int_equal(fs_evq_push(&q, &ev, &h[i]), 0);
    }
    /* cancel all but the last: stale >> live, but not above the minimum */
    for (uint32_t i = 0; i + 1 < FS_EVQ_COMPACT_MIN; i++)
        assert_int_equal(fs_evq_cancel(&q, h[i]), 1);
    fs_event_t ev = make_ev(5, 10, 9999);
    assert_int_equal(fs_evq_push(&q, &ev, NULL), 0);
    assert_int_equal(q.compactions, 0);
    /* stale keys are skipped at the top instead */
    assert_int_equal(fs_evq_pop(&q, &ev), 0);
    assert_int_equal(ev.time, 5);
    assert_int_equal(fs_evq_pop(&q, &ev), 0);
    assert_int_equal(ev.time, FS_EVQ_COMPACT_MIN - 1);
    assert_int_equal(fs_evq_pop(&q, &ev), -1);
    assert_int_equal(q.n, 0);
    fs_evq_release(&q);
    assert_int_equal(fs_alloc_live(), live0);
}

/* ---- sequence renumbering ---- */

static void test_sequence_renumbering(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    uint64_t s = 5;
    fs_evq_t q;
    fs_evq_init(&q);
    ref_t r = {0};
    enum { N = 3000 };
    fs_event_handle_t h[N];
    /* start near the limit: the pushes below cross it */
    q.seq = FS_EVQ_SEQ_LIMIT - 1000;
    for (uint32_t i = 0; i < N; i++) {
        fs_time_t t = (fs_time_t)tr_below(&s, 20); /* many exact ties */
        uint8_t prio = (uint8_t)(10 + 10 * tr_below(&s, 2));
        fs_event_t ev = make_ev(t, prio, i);
        assert_int_equal(fs_evq_push(&q, &ev, &h[i]), 0);
        ref_push(&r, t, prio, i);
        if (i % 7 == 0 && i > 0) {
            uint32_t victim = (uint32_t)tr_below(&s, i);
            int want = ref_remove_id(&r, victim);
            assert_int_equal(fs_evq_cancel(&q, h[victim]), want);
        }
    }
    assert_int_equal(q.renumbers, 1);
    assert_true(q.seq < 3000);
    /* handles taken before the renumbering still cancel */
    for (uint32_t i = 0; i < 100; i++) {
        int want = ref_remove_id(&r, i);
        assert_int_equal(fs_evq_cancel(&q, h[i]), want);
    }
    drain_and_compare(&q, &r);
    fs_evq_release(&q);
    free(r.a);
    assert_int_equal(fs_alloc_live(), live0);
}

/* ---- generation wrap: a slot is retired, never reused ---- */

static void test_generation_wrap_retires_slot(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    fs_evq_t q;
    fs_evq_init(&q);
    fs_event_t ev = make_ev(1, 10, 1), out;
    fs_event_handle_t h1, h2, h3;
    assert_int_equal(fs_evq_push(&q, &ev, &h1), 0);
    assert_int_equal(fs_evq_pop(&q, &out), 0);
    /* white box: pretend slot h1.slot has been used 2^32 - 2 more times */
    q.pool[h1.slot].gen = UINT32_MAX;
    assert_int_equal(fs_evq_push(&q, &ev, &h2), 0);
    assert_int_equal(h2.slot, h1.slot); /* LIFO free list */
    assert_int_equal(h2.gen, UINT32_MAX);
    assert_int_equal(fs_evq_pop(&q, &out), 0);
    assert_int_equal(q.pool[h1.slot].gen, 0); /* wrapped: retired */
    for (uint32_t i = 0; i < 100; i++) {
        assert_int_equal(fs_evq_push(&q, &ev, &h3), 0);
        assert_int_not_equal(h3.slot, h1.slot);
    }
    fs_event_handle_t z = {h1.slot, 0};
    assert_int_equal(fs_evq_cancel(&q, z), 0);
    assert_int_equal(fs_evq_cancel(&q, h2), 0);
    assert_int_equal(fs_evq_size(&q), 100);
    fs_evq_release(&q);
    assert_int_equal(fs_alloc_live(), live0);
}

/* ---- fault injection ---- */

static void test_push_enomem_leaves_queue_usable(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    uint64_t s = 3;
    fs_evq_t q;
    fs_evq_init(&q);
    ref_t r = {0};
    /* every push with the next allocation failing: the pushes that need to
     * grow the heap or the pool fail cleanly, the others succeed */
    int fails[5] = {0};
    for (uint32_t i = 0; i < 5000; i++) {
        fs_time_t t = (fs_time_t)tr_below(&s, 1000);
        fs_event_t ev = make_ev(t, 50, i);
        /* fail the first, then the second, ... allocation of this push:
         * the queue must be unchanged after each failure */
        int pushed = 0;
        for (uint64_t k = 1; k <= 4 && !pushed; k++) {
            size_t size0 = fs_evq_size(&q), n0 = q.n, cap0 = q.pool_cap;
            fs_alloc_fail_after(k);
            int rc = fs_evq_push(&q, &ev, NULL);
            fs_alloc_fail_after(0);
            if (rc == 0) {
                pushed = 1;
                break;
            }
            assert_int_equal(rc, FS_ENOMEM);
            assert_int_equal(fs_evq_size(&q), size0);
            assert_int_equal(q.n, n0);
            assert_int_equal(q.pool_cap, cap0);
            fails[k]++;
        }
        if (!pushed)
            assert_int_equal(fs_evq_push(&q, &ev, NULL), 0); /* then it works */
        ref_push(&r, t, 50, i);
        if (i % 3 == 0) { /* pops in between, checked */
            fs_event_t out;
            assert_int_equal(fs_evq_pop(&q, &out), 0);
            assert_ev_is(&out, &r.a[r.n - 1]);
            r.n--;
        }
    }
    /* the pool grows 16 -> 4096 (9 times), each time after the bucket
     * array and, 7 of those times, the heap (whose capacity follows the
     * pool's from 64): the first allocation fails 9 times, the second
     * (one array grown, the next one not) 9 times; by the third attempt
     * the arrays that grew need no more and the push succeeds */
    assert_int_equal(fails[1], 9);
    assert_int_equal(fails[2], 9);
    assert_int_equal(fails[3], 0);
    assert_int_equal(fails[4], 0);
    drain_and_compare(&q, &r);
    fs_evq_release(&q);
    free(r.a);
    assert_int_equal(fs_alloc_live(), live0);
}

/* ---- benchmarks: deterministic, and the same hold as the reference ---- */

/* The hold model of fs_bench.h on the reference queue. */
static uint64_t ref_mix(uint64_t h, fs_time_t t, uint32_t entity)
{
    h ^= (uint64_t)t + UINT64_C(0x9e3779b97f4a7c15) + (h << 6) + (h >> 2);
    return (h ^ entity) * UINT64_C(0x100000001b3);
}

static fs_time_t ref_increment(const fs_bench_exp_t *z, gsl_rng *g)
{
    return (fs_time_t)fs_bench_exp_draw(z, g);
}

/* The benchmarks' sampler is exponential: mean, tail probabilities on both
 * sides of the ziggurat's tail start (7.697 means) and a chi-square test of
 * the probability transform 1 - exp(-x / mean) on 64 bins. */
static void test_bench_exponential_sampler(void **st)
{
    (void)st;
    enum { N = 1000000, BINS = 64 };
    fs_bench_exp_t z;
    fs_bench_exp_init(&z, 2.5);
    fs_rng_t rng;
    assert_int_equal(fs_rng_init(&rng, 8, 0, FS_RNG_ARRIVAL, 0), 0);
    gsl_rng *g = fs_rng_gsl(&rng);
    unsigned long bins[BINS] = {0};
    double sum = 0;
    unsigned long over3 = 0, over9 = 0;
    for (int i = 0; i < N; i++) {
        double x = fs_bench_exp_draw(&z, g);
        assert_true(x >= 0 && isfinite(x));
        sum += x;
        over3 += x > 3 * 2.5;
        over9 += x > 9 * 2.5;
        int b = (int)((1 - exp(-x / 2.5)) * BINS);
        bins[b < BINS ? b : BINS - 1]++;
    }
    fs_rng_release(&rng);
    /* mean 2.5, variance 2.5^2 */
    assert_true(fabs(sum / N - 2.5) < 5 * 2.5 / sqrt(N));
    /* P(X > 3 mean) = e^-3, P(X > 9 mean) = e^-9 (the tail algorithm) */
    double p3 = exp(-3.0), p9 = exp(-9.0);
    assert_true(fabs((double)over3 - N * p3) < 5 * sqrt(N * p3 * (1 - p3)));
    assert_true(fabs((double)over9 - N * p9) < 5 * sqrt(N * p9 * (1 - p9)));
    double chi2 = 0, e = (double)N / BINS;
    for (int b = 0; b < BINS; b++)
        chi2 += (bins[b] - e) * (bins[b] - e) / e;
    assert_true(gsl_cdf_chisq_Q(chi2, BINS - 1) > 1e-4);
}

static void test_bench_hold_matches_reference(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    enum { PENDING = 300, OPS = 20000 };
    fs_rng_t rng;
    assert_int_equal(fs_rng_init(&rng, 77, 0, FS_RNG_ARRIVAL, 0), 0);
    fs_bench_exp_t z;
    fs_bench_exp_init(&z, 1e6); /* mean 1 s */
    ref_t r = {0};
    for (uint32_t i = 0; i < PENDING; i++)
        ref_push(&r, ref_increment(&z, fs_rng_gsl(&rng)), FS_PRIO_TIMER, i);
    uint64_t sum = 0;
    fs_time_t last = 0;
    for (int i = 0; i < OPS; i++) {
        ref_ev_t e = r.a[--r.n];
        sum = ref_mix(sum, e.time, e.id);
        last = e.time;
        ref_push(&r, e.time + ref_increment(&z, fs_rng_gsl(&rng)), FS_PRIO_TIMER, e.id);
    }
    fs_rng_release(&rng);
    free(r.a);

    fs_bench_result_t a, b, c;
    assert_int_equal(fs_bench_hold(PENDING, OPS, 77, &a), 0);
    assert_string_equal(a.name, "hold");
    assert_int_equal(a.pending, PENDING);
    assert_int_equal(a.ops, OPS);
    assert_int_equal(a.checksum, sum);
    assert_int_equal(a.end_time, last);
    assert_true(a.seconds > 0 && a.ns_per_op > 0 && a.ops_per_s > 0);
    assert_double_equal(a.ns_per_op, a.seconds * 1e9 / OPS, 1e-6 * a.ns_per_op);
    assert_true(a.cpu_seconds > 0 && a.cpu_seconds <= a.seconds * 1.01 + 1e-3);
    assert_double_equal(a.cpu_ns_per_op, a.cpu_seconds * 1e9 / OPS, 1e-6 * a.cpu_ns_per_op);
    /* the run loop drives the same model to the same trajectory */
    assert_int_equal(fs_bench_loop(PENDING, OPS, 77, &b), 0);
    assert_string_equal(b.name, "loop");
    assert_int_equal(b.checksum, sum);
    assert_int_equal(b.end_time, last);
    /* same seed, same work; another seed, other work */
    assert_int_equal(fs_bench_reschedule(PENDING, OPS, 77, &b), 0);
    assert_int_equal(fs_bench_reschedule(PENDING, OPS, 77, &c), 0);
    assert_int_equal(b.checksum, c.checksum);
    assert_int_equal(b.end_time, c.end_time);
    assert_int_equal(fs_bench_reschedule(PENDING, OPS, 78, &c), 0);
    assert_int_not_equal(b.checksum, c.checksum);
    assert_int_equal(fs_alloc_live(), live0);
}

/* The reschedule model on the reference queue. */
static void test_bench_reschedule_matches_reference(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    enum { PENDING = 200, OPS = 10000 };
    fs_rng_t rng;
    assert_int_equal(fs_rng_init(&rng, 5, 0, FS_RNG_ARRIVAL, 0), 0);
    gsl_rng *g = fs_rng_gsl(&rng);
    fs_bench_exp_t z;
    fs_bench_exp_init(&z, 1e6);
    ref_t r = {0};
    for (uint32_t i = 0; i < PENDING; i++)
        ref_push(&r, ref_increment(&z, g), FS_PRIO_TIMER, i);
    uint64_t sum = 0;
    fs_time_t last = 0;
    for (int i = 0; i < OPS; i++) {
        ref_ev_t e = r.a[--r.n];
        sum = ref_mix(sum, e.time, e.id);
        last = e.time;
        ref_push(&r, e.time + ref_increment(&z, g), FS_PRIO_TIMER, e.id);
        uint32_t k = (uint32_t)gsl_rng_uniform_int(g, PENDING);
        assert_true(ref_remove_id(&r, k));
        ref_push(&r, last + ref_increment(&z, g), FS_PRIO_TIMER, k);
    }
    fs_rng_release(&rng);
    free(r.a);
    fs_bench_result_t a;
    assert_int_equal(fs_bench_reschedule(PENDING, OPS, 5, &a), 0);
    assert_string_equal(a.name, "reschedule");
    assert_int_equal(a.checksum, sum);
    assert_int_equal(a.end_time, last);
    assert_int_equal(fs_alloc_live(), live0);
}

static void test_bench_arguments_and_table(void **st)
{
    (void)st;
    int64_t live0 = fs_alloc_live();
    fs_bench_result_t a;
    assert_int_equal(fs_bench_hold(0, 10, 1, &a), FS_EINVAL);
    assert_int_equal(fs_bench_hold(10, 0, 1, &a), FS_EINVAL);
    assert_int_equal(fs_bench_hold(FS_EVQ_MAX_PENDING + 1, 10, 1, &a), FS_EINVAL);
    assert_int_equal(fs_bench_loop(0, 10, 1, &a), FS_EINVAL);
    assert_int_equal(fs_bench_reschedule(10, 0, 1, &a), FS_EINVAL);
    /* out of memory during the fill: reported, nothing leaked */
    fs_alloc_fail_after(3);
    assert_int_equal(fs_bench_hold(5000, 10, 1, &a), FS_ENOMEM);
    fs_alloc_fail_after(3);
    assert_int_equal(fs_bench_reschedule(5000, 10, 1, &a), FS_ENOMEM);
    fs_alloc_fail_after(3);
    assert_int_equal(fs_bench_loop(5000, 10, 1, &a), FS_ENOMEM);
    fs_alloc_fail_after(0);
    size_t n;
    const fs_bench_entry_t *t = fs_bench_table(&n);
    assert_int_equal(n, 3);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(t[i].fn(50, 100, 1, &a), 0);
        assert_string_equal(a.name, t[i].name);
        assert_non_null(t[i].doc);
    }
    assert_int_equal(fs_alloc_live(), live0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_vs_reference),
        cmocka_unit_test(test_random_any_time_vs_reference),
        cmocka_unit_test(test_random_mixture_vs_reference),
        cmocka_unit_test(test_equal_time_fifo),
        cmocka_unit_test(test_cancel_semantics),
        cmocka_unit_test(test_handles_across_growth),
        cmocka_unit_test(test_dead_records_are_reaped),
        cmocka_unit_test(test_stale_keys_are_compacted),
        cmocka_unit_test(test_no_compaction_below_minimum),
        cmocka_unit_test(test_sequence_renumbering),
        cmocka_unit_test(test_generation_wrap_retires_slot),
        cmocka_unit_test(test_push_enomem_leaves_queue_usable),
        cmocka_unit_test(test_bench_exponential_sampler),
        cmocka_unit_test(test_bench_hold_matches_reference),
        cmocka_unit_test(test_bench_reschedule_matches_reference),
        cmocka_unit_test(test_bench_arguments_and_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
