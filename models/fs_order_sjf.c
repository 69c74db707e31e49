/*
 * Shortest job first and shortest remaining time first (DOMAIN.md 3.6).
 *   sjf   key = the planned run time (fs_order_plan: user estimate or
 *         oracle), fixed at queueing; non-preemptive by default.
 *   srtf  key = the planned remaining time: oracle -> remaining work;
 *         user -> estimate minus the work done (never below 0);
 *         preemptive by default (preemption: auto), as the Tiresias
 *         simulator's "shortest".
 *
 * SRTF's preemptive pass (fs_order.h plan; issue #41).  The slow path
 * (fs_sched_preempt.c fs_spre_pass) collects every active job at each pass,
 * takes its key afresh (a running job's remaining work, fs_model_remaining)
 * and sorts by (key, the previous pass's rank).  The plan gives the same
 * preemptions and starts, ties included, from a list kept between passes:
 *
 *   - ord: every active job in the previous pass's order (its ranks: a job
 *     queued since is at the end, in queueing order, as its rank says).
 *   - A running job is linear while its rate is exactly 1, it computes
 *     (no start-up, restore or checkpoint writes) and (user run times) its
 *     work left is at most its run time: its key is then max(0, A - now)
 *     for a fixed A.  Two linear keys never cross (equal keys stay equal),
 *     so a list of linear running jobs in order at one pass is in order at
 *     every later one: the stable sort would leave it as it is.
 *   - A pass whose list holds linear running jobs and jobs queued since
 *     the last pass only (the common case: the queue empties at each pass)
 *     places each new job by a binary search (after every equal key: its
 *     rank is the largest) and walks the list once for the greedy
 *     allocation; a pass with nothing queued does nothing at all.
 *   - Anything else (a job left queued, a preempted job, a job that is not
 *     linear, a key that moved at a start (restart_cost), a rate changed
 *     since (fs_model_rerates: span speed, stragglers, sharing, fabric))
 *     takes every key afresh and sorts the list stably, as the slow path.
 * Costs: O(log active) for a new job plus one walk of the list (contiguous
 * arrays) per pass with something queued; O(1) per pass with nothing
 * queued; a job's end marks its entry (removed at the next full pass or
 * when half the list is such).  tests/test_sched_fast.c proves the plan
 * equal to the slow path job by job.
 */
#include "fs_order.h"
#include "fs_recovery.h"
#include "../sim/fs_alloc.h"

#include <string.h>

static fs_okey_t sjf_key(void *state, fs_model_t *m, uint32_t slot)
{
    (void)state;
    return (fs_okey_t){(double)fs_order_plan(m, slot), 0};
}

/* The SRTF key of a job whose work left is `left` (as fs_model_remaining
 * gives it). */
static double srtf_key_left(const fs_model_t *m, uint32_t slot, fs_time_t left)
{
    const fs_sched_cfg_t *c = &fs_model_config(m)->scheduler;
    if (c->runtime == FS_RUNTIME_ORACLE)
        return (double)left;
    const fs_jobrt_t *j = fs_model_job((fs_model_t *)m, slot);
    fs_time_t done = j->job.duration - left;
    fs_time_t est = fs_order_plan(m, slot) - (done > 0 ? done : 0);
    return (double)(est > 0 ? est : 0);
}

static fs_okey_t srtf_key(void *state, fs_model_t *m, uint32_t slot)
{
    (void)state;
    return (fs_okey_t){srtf_key_left(m, slot, fs_model_remaining(m, slot)), 0};
}

const fs_order_ops_t fs_order_sjf = {.name = "sjf", .key = sjf_key};

/* ---- SRTF's plan ---------------------------------------------------------------------- */

#define NONE UINT32_MAX
#define LIN_MAX ((fs_time_t)1 << 52)   /* times below it convert to double exactly */

enum { E_QUEUED = 0, E_LIN = 1, E_NONLIN = 2, E_DEAD = 3 };

typedef struct srtf {
    int on;                 /* kept (preemptive passes, fast path) */
    uint32_t *slot;         /* ord: the active jobs in rank order, as parallel arrays */
    double *kq;             /* ... queued: the key (fixed while queued) */
    fs_time_t *a;           /* ... E_LIN: the key is max(0, a - now) */
    uint32_t *g;            /* ... GPUs */
    uint8_t *kind;          /* ... E_* */
    size_t n, cap;
    size_t n_new;           /* the last n_new entries were queued since the last pass */
    size_t n_q;             /* queued entries (new ones included) */
    size_t n_nl;            /* E_NONLIN entries */
    size_t n_dead;
    size_t n_dead_q;        /* ... of them queued or not linear (no key to sort by) */
    uint64_t rg;            /* GPUs of the running entries */
    int dirty;              /* the next pass sorts */
    int rekey;              /* ... and takes every running job's key afresh (a rate changed) */
    int oom;                /* a hook could not grow the list: the next plan fails */
    uint64_t rerates;       /* fs_model_rerates at the last pass */
    uint32_t *pos;          /* pos[slot]: its entry, NONE */
    size_t cap_pos;
    double *kk;             /* scratch: keys of a full pass */
    size_t cap_kk;
    uint32_t *ix, *tmp;     /* scratch: the stable sort's indices */
    size_t cap_ix, cap_tmp;
    uint32_t *pre, *go;     /* the plan's lists */
    size_t cap_pre, cap_go;
} srtf_t;

static int srtf_create(fs_model_t *m, const fs_sched_cfg_t *cfg, void **state, fs_error_t *err)
{
    (void)m;
    srtf_t *s = fs_calloc(1, sizeof *s);
    if (!s)
        return fs_error_set(err, FS_ENOMEM, "scheduler: out of memory");
    /* the plan serves preemptive passes only (fs_sched.c: preemption auto
     * or order; srtf is preemptive) */
    s->on = cfg->preemption != FS_PREEMPT_NONE;
    *state = s;
    return 0;
}

static void srtf_destroy(void *state)
{
    srtf_t *s = state;
    if (!s)
        return;
    fs_free(s->slot);
    fs_free(s->kq);
    fs_free(s->a);
    fs_free(s->g);
    fs_free(s->kind);
    fs_free(s->pos);
    fs_free(s->kk);
    fs_free(s->ix);
    fs_free(s->tmp);
    fs_free(s->pre);
    fs_free(s->go);
    fs_free(s);
}

static void srtf_set_fast(void *state, int on)
{
    srtf_t *s = state;
    if (!on)
        s->on = 0;
}

/* Room for n entries in the list.  0 or FS_ENOMEM. */
static int room(srtf_t *s, size_t n)
{
    if (n <= s->cap)
        return 0;
    size_t c = s->cap;
    if (fs_grow((void **)&s->slot, &c, n, sizeof *s->slot))
        return FS_ENOMEM;
    size_t cc = s->cap;
    if (fs_grow((void **)&s->kq, &cc, c, sizeof *s->kq))
        return FS_ENOMEM;
    cc = s->cap;
    if (fs_grow((void **)&s->a, &cc, c, sizeof *s->a))
        return FS_ENOMEM;
    cc = s->cap;
    if (fs_grow((void **)&s->g, &cc, c, sizeof *s->g))
        return FS_ENOMEM;
    cc = s->cap;
    if (fs_grow((void **)&s->kind, &cc, c, sizeof *s->kind))
        return FS_ENOMEM;
    s->cap = c;
    return 0;
}

static int room_pos(srtf_t *s, uint32_t slot)
{
    size_t old = s->cap_pos;
    if ((size_t)slot < old)
        return 0;
    if (fs_grow((void **)&s->pos, &s->cap_pos, (size_t)slot + 1, sizeof *s->pos))
        return FS_ENOMEM;
    for (size_t i = old; i < s->cap_pos; i++)
        s->pos[i] = NONE;
    return 0;
}

/* The entry i is no longer active. */
static void drop(srtf_t *s, size_t i)
{
    if (s->kind[i] == E_QUEUED) {
        s->n_q--;
        s->dirty = 1;       /* a queued key in the list's order, checked by no one */
    } else {
        s->rg -= s->g[i];
        if (s->kind[i] == E_NONLIN) {
            s->n_nl--;
            s->dirty = 1;   /* no linear key to keep the list's order by */
        }
    }
    if (s->kind[i] != E_LIN)
        s->n_dead_q++;
    s->pos[s->slot[i]] = NONE;
    s->kind[i] = E_DEAD;
    s->n_dead++;
}

/* Drops the dead entries (their order kept). */
static void compact(srtf_t *s)
{
    size_t w = 0, first_new = s->n - s->n_new, nn = 0;
    for (size_t i = 0; i < s->n; i++) {
        if (s->kind[i] == E_DEAD)
            continue;
        if (i >= first_new)
            nn++;
        s->slot[w] = s->slot[i];
        s->kq[w] = s->kq[i];
        s->a[w] = s->a[i];
        s->g[w] = s->g[i];
        s->kind[w] = s->kind[i];
        s->pos[s->slot[w]] = (uint32_t)w;
        w++;
    }
    s->n = w;
    s->n_new = nn;
    s->n_dead = s->n_dead_q = 0;
}

/* A job queued (admitted, or again after a failure or an eviction): last
 * in rank order. */
static int srtf_push(srtf_t *s, fs_model_t *m, uint32_t slot)
{
    if (room_pos(s, slot))
        return FS_ENOMEM;
    if (s->pos[slot] != NONE)
        drop(s, s->pos[slot]);
    if (room(s, s->n + 1))
        return FS_ENOMEM;
    size_t i = s->n++;
    s->slot[i] = slot;
    s->kq[i] = srtf_key(s, m, slot).k1;
    s->a[i] = 0;
    s->g[i] = fs_model_job(m, slot)->job.gpus;
    s->kind[i] = E_QUEUED;
    s->pos[slot] = (uint32_t)i;
    s->n_new++;
    s->n_q++;
    return 0;
}

static int srtf_admit(void *state, fs_model_t *m, uint32_t slot)
{
    srtf_t *s = state;
    return s->on ? srtf_push(s, m, slot) : 0;
}

static void srtf_requeued(void *state, fs_model_t *m, uint32_t slot)
{
    srtf_t *s = state;
    if (s->on && srtf_push(s, m, slot))
        s->oom = 1;
}

/* Running entry i as of now: linear (a set) or not; its key now in *key. */
static void classify(srtf_t *s, fs_model_t *m, size_t i, double *key)
{
    const fs_jobrt_t *j = fs_model_job(m, s->slot[i]);
    fs_jobrun_t c = *j->r;
    fs_time_t now = fs_model_now(m);
    fs_recov_advance(&c, now - c.settled_at, fs_model_config(m)->recovery.write_cost);
    *key = srtf_key_left(m, s->slot[i], c.remaining);
    int oracle = fs_model_config(m)->scheduler.runtime == FS_RUNTIME_ORACLE;
    int lin = c.phase == FS_PHASE_COMPUTE && c.rate == 1.0 && c.ckpt_every == 0 &&
              c.remaining > 0 && c.remaining < LIN_MAX && now < LIN_MAX &&
              (oracle || c.remaining <= j->job.duration);
    uint8_t k = lin ? E_LIN : E_NONLIN;
    if (lin) {
        fs_time_t a = now + c.remaining;
        if (!oracle) {
            fs_time_t plan = fs_order_plan(m, s->slot[i]);
            if (plan >= LIN_MAX || plan <= -LIN_MAX)
                k = E_NONLIN;
            a += plan - j->job.duration;
        }
        s->a[i] = a;
    }
    if (s->kind[i] == E_NONLIN)
        s->n_nl--;
    if (k == E_NONLIN)
        s->n_nl++;
    s->kind[i] = k;
}

static inline double lin_key(fs_time_t a, fs_time_t now)
{
    return a > now ? (double)(a - now) : 0.0;
}

static void srtf_started(void *state, fs_model_t *m, uint32_t slot)
{
    srtf_t *s = state;
    if (!s->on || slot >= s->cap_pos || s->pos[slot] == NONE)
        return;
    size_t i = s->pos[slot];
    double was = s->kq[i], key;
    s->n_q--;
    s->rg += s->g[i];
    if (i >= s->n - s->n_new)   /* started outside a pass: its place is the sort's */
        s->dirty = 1;
    classify(s, m, i, &key);
    if (key != was)             /* restart_cost: its place in the order moves */
        s->dirty = 1;
}

static void srtf_stopped(void *state, fs_model_t *m, uint32_t slot, int finished)
{
    srtf_t *s = state;
    if (!s->on || slot >= s->cap_pos || s->pos[slot] == NONE)
        return;
    size_t i = s->pos[slot];
    if (finished || fs_model_job(m, slot)->state != FS_JOBRT_QUEUED) {
        drop(s, i);     /* ended, or interrupted: queued again (a new rank) if at all */
        return;
    }
    /* preempted by the pass: queued at its rank with its key now (the lost
     * work added), so the next pass sorts */
    if (s->kind[i] == E_NONLIN)
        s->n_nl--;
    s->rg -= s->g[i];
    s->kind[i] = E_QUEUED;
    s->kq[i] = srtf_key(s, m, slot).k1;
    s->g[i] = fs_model_job(m, slot)->job.gpus;
    s->n_q++;
    s->dirty = 1;
}

static void srtf_withdrawn(void *state, fs_model_t *m, uint32_t slot)
{
    (void)m;
    srtf_t *s = state;
    if (s->on && slot < s->cap_pos && s->pos[slot] != NONE)
        drop(s, s->pos[slot]);
}

/* Entry i's key now (queued, linear or dead-linear; not E_NONLIN). */
static inline double key_at(const srtf_t *s, size_t i, fs_time_t now)
{
    return s->kind[i] == E_QUEUED ? s->kq[i] : lin_key(s->a[i], now);
}

/* Moves entry i to position p <= i (the ones between move up by one). */
static void move_to(srtf_t *s, size_t i, size_t p)
{
    if (p == i)
        return;
    uint32_t sl = s->slot[i], g = s->g[i];
    double kq = s->kq[i];
    fs_time_t a = s->a[i];
    uint8_t k = s->kind[i];
    size_t c = i - p;
    memmove(s->slot + p + 1, s->slot + p, c * sizeof *s->slot);
    memmove(s->kq + p + 1, s->kq + p, c * sizeof *s->kq);
    memmove(s->a + p + 1, s->a + p, c * sizeof *s->a);
    memmove(s->g + p + 1, s->g + p, c * sizeof *s->g);
    memmove(s->kind + p + 1, s->kind + p, c * sizeof *s->kind);
    s->slot[p] = sl;
    s->kq[p] = kq;
    s->a[p] = a;
    s->g[p] = g;
    s->kind[p] = k;
    for (size_t x = p; x <= i; x++)
        if (s->kind[x] != E_DEAD)   /* a dead entry's slot may be another job's now */
            s->pos[s->slot[x]] = (uint32_t)x;
}

/* Every key afresh and a stable sort of the list (the slow path's sort:
 * the list is in rank order).  0 or FS_ENOMEM. */
static int full_sort(srtf_t *s, fs_model_t *m)
{
    /* a dead linear entry keeps its key (and its place) */
    if (s->n_dead_q || 4 * s->n_dead > s->n)
        compact(s);
    size_t n = s->n;
    if (fs_grow((void **)&s->kk, &s->cap_kk, n + 1, sizeof *s->kk))
        return FS_ENOMEM;
    int sorted = 1;
    fs_time_t now = fs_model_now(m);
    for (size_t i = 0; i < n; i++) {
        if (s->kind[i] == E_QUEUED)
            s->kk[i] = s->kq[i];
        else if (s->kind[i] == E_DEAD || (s->kind[i] == E_LIN && !s->rekey))
            s->kk[i] = lin_key(s->a[i], now);
        else
            classify(s, m, i, &s->kk[i]);
        if (i > 0 && s->kk[i] < s->kk[i - 1])
            sorted = 0;
    }
    if (!sorted) {
        if (fs_grow((void **)&s->ix, &s->cap_ix, n + 1, sizeof *s->ix) ||
            fs_grow((void **)&s->tmp, &s->cap_tmp, n + 1, sizeof *s->tmp))
            return FS_ENOMEM;
        uint32_t *ix = s->ix, *tmp = s->tmp;
        const double *kk = s->kk;
        for (size_t i = 0; i < n; i++)
            ix[i] = (uint32_t)i;
        for (size_t w = 1; w < n; w *= 2) {
            for (size_t lo = 0; lo < n; lo += 2 * w) {
                size_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
                size_t i = lo, j = mid, k = lo;
                while (i < mid && j < hi)
                    tmp[k++] = kk[ix[j]] < kk[ix[i]] ? ix[j++] : ix[i++];
                while (i < mid)
                    tmp[k++] = ix[i++];
                while (j < hi)
                    tmp[k++] = ix[j++];
            }
            memcpy(ix, tmp, n * sizeof *ix);
        }
        /* permute the parallel arrays by ix (through kk and tmp as scratch) */
        uint32_t *sl = tmp;
        for (size_t i = 0; i < n; i++)
            sl[i] = s->slot[ix[i]];
        memcpy(s->slot, sl, n * sizeof *sl);
        for (size_t i = 0; i < n; i++)
            sl[i] = s->g[ix[i]];
        memcpy(s->g, sl, n * sizeof *sl);
        for (size_t i = 0; i < n; i++)
            sl[i] = s->kind[ix[i]];
        for (size_t i = 0; i < n; i++)
            s->kind[i] = (uint8_t)sl[i];
        double *dk = s->kk;     /* kk is done with: reused for kq, then for a */
        for (size_t i = 0; i < n; i++)
            dk[i] = s->kq[ix[i]];
        memcpy(s->kq, dk, n * sizeof *dk);
        fs_time_t *ta = (fs_time_t *)(void *)dk;
        _Static_assert(sizeof(fs_time_t) == sizeof(double), "kk holds a's");
        for (size_t i = 0; i < n; i++)
            ta[i] = s->a[ix[i]];
        memcpy(s->a, ta, n * sizeof *ta);
        for (size_t i = 0; i < n; i++)
            if (s->kind[i] != E_DEAD)
                s->pos[s->slot[i]] = (uint32_t)i;
    }
    s->n_new = 0;
    s->dirty = s->rekey = 0;
    return 0;
}

/* The new entries (the last n_new) placed in a list of linear running jobs
 * in order: each after every equal key (its rank is the largest). */
static void place_new(srtf_t *s, fs_time_t now)
{
    size_t first = s->n - s->n_new;
    for (size_t i = first; i < s->n; i++) {
        double k = s->kq[i];
        size_t lo = 0, hi = i;  /* the first entry in [0, i) with a key above k */
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (key_at(s, mid, now) <= k)
                lo = mid + 1;
            else
                hi = mid;
        }
        move_to(s, i, lo);
    }
    s->n_new = 0;
}

static int push_list(uint32_t **a, size_t *cap, size_t *n, uint32_t v)
{
    if (fs_grow((void **)a, cap, *n + 1, sizeof **a))
        return FS_ENOMEM;
    (*a)[(*n)++] = v;
    return 0;
}

static int srtf_plan(void *state, fs_model_t *m, uint64_t gpus, int strict, const uint32_t **pre,
                     size_t *n_pre, const uint32_t **go, size_t *n_go)
{
    srtf_t *s = state;
    *n_pre = *n_go = 0;
    *pre = s->pre;
    *go = s->go;
    if (s->oom)
        return FS_ENOMEM;
    fs_time_t now = fs_model_now(m);
    uint64_t rr = fs_model_rerates(m);
    uint32_t one = NONE;
    uint64_t one_g = 0;
    if (rr != s->rerates) {
        s->rerates = rr;
        s->dirty = s->rekey = 1;
    }
    if (s->dirty || s->n_nl > 0 || s->n_q > s->n_new) {
        int rc = full_sort(s, m);
        if (rc)
            return rc;
    } else {
        if (s->n_q == 0)
            return 0;           /* nothing queued: nothing starts or is preempted */
        if (s->n_dead > 64 && 2 * s->n_dead > s->n)
            compact(s);
        if (s->n_q == 1) {      /* one job queued (since the last pass) */
            one = s->slot[s->n - 1];
            one_g = s->g[s->n - 1];
        }
        place_new(s, now);
    }
    if (s->n_q == 0)
        return 0;
    if (one != NONE && s->rg + one_g <= gpus) {
        /* every job fits: each is let in in turn, none is left out */
        if (push_list(&s->go, &s->cap_go, n_go, one))
            return FS_ENOMEM;
        *go = s->go;
        return 0;
    }
    /* the greedy allocation of fs_spre_pass over the list; the running jobs
     * it leaves out are listed (pre) and kept if their key is strictly
     * above the best start's.  Past the last queued job, the walk stops
     * when the rest (running only) fits. */
    uint64_t left = gpus, run_rest = s->rg;
    int blocked = 0, any = 0;
    double b = 0;
    size_t q_seen = 0;
    for (size_t i = 0; i < s->n; i++) {
        uint8_t k = s->kind[i];
        if (k == E_DEAD)
            continue;
        uint64_t g = s->g[i];
        int want = 0;
        if (!blocked && g <= left) {
            want = 1;
            left -= g;
        } else if (strict) {
            blocked = 1;
        }
        if (k != E_QUEUED) {
            run_rest -= g;
            if (!want && push_list(&s->pre, &s->cap_pre, n_pre, (uint32_t)i))
                return FS_ENOMEM;
        } else {
            q_seen++;
            if (want) {
                if (!any) {
                    any = 1;
                    b = s->kq[i];
                }
                if (push_list(&s->go, &s->cap_go, n_go, s->slot[i]))
                    return FS_ENOMEM;
            }
        }
        if (q_seen == s->n_q && (!any || (!blocked && run_rest <= left)))
            break;      /* nothing starts, or every running job left fits */
    }
    if (!any) {
        *n_pre = *n_go = 0;
        return 0;
    }
    /* running jobs left out with a key strictly above the best start's */
    size_t np = 0;
    for (size_t r = 0; r < *n_pre; r++) {
        size_t i = s->pre[r];
        double key = s->kind[i] == E_LIN ? lin_key(s->a[i], now) : srtf_key(s, m, s->slot[i]).k1;
        if (key > b)
            s->pre[np++] = s->slot[i];
    }
    *n_pre = np;
    *pre = s->pre;
    *go = s->go;
    return 0;
}

const fs_order_ops_t fs_order_srtf = {.name = "srtf",
                                      .preemptive = 1,
                                      .create = srtf_create,
                                      .destroy = srtf_destroy,
                                      .key = srtf_key,
                                      .admit = srtf_admit,
                                      .requeued = srtf_requeued,
                                      .started = srtf_started,
                                      .stopped = srtf_stopped,
                                      .withdrawn = srtf_withdrawn,
                                      .plan = srtf_plan,
                                      .set_fast = srtf_set_fast};
