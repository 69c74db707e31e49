/*
 * Tiresias 2D-LAS (Gu et al., NSDI'19; DOMAIN.md 3.6), following the
 * published simulator's dlas-gpu (SymbioticLab/Tiresias simulator/run_sim.py,
 * dlas_sim_jobs with gputime):
 *   - K queues; a job's attained service is GPUs x executed time; it moves
 *     from queue q to q + 1 when that reaches thresholds[q] (GPU-seconds;
 *     default one threshold, 3600: two queues);
 *   - new jobs join the end of queue 0, demoted and promoted jobs the end of
 *     their new queue; after every pass each queue keeps its running jobs
 *     ahead of its waiting ones (both in their previous order), so a queue
 *     is FIFO and never preempts within itself, while a job of a higher
 *     queue preempts jobs of lower ones (preemption: auto = order);
 *   - starvation: a waiting job of queue > 0 that has run in this queue
 *     cycle (executed > 0) and has waited, since it last ran, at least
 *     executed x promote_knob goes back to queue 0 with executed = 0.
 * Differences from the simulator (docs/validation.md): demotion and
 * promotion happen at the exact microsecond the threshold is crossed
 * (the simulator's next-jump time for multi-GPU jobs mixes seconds and
 * GPU-seconds, and can be late); times are microseconds, not whole seconds.
* Key = (queue, position).  The slow path (las_set_fast(0)) settles every
 * job at each update and sorts at each pass (O(active log active), like the
 * simulator); the fast path (the default) touches only the jobs whose state
 * or rank changes:
 *
 *   - Per-job settling.  Between two updates a job's executed and waiting
 *     times grow linearly, so each job is settled only when its state
 *     changes (started, stopped, queued again) and when its demotion or
 *     promotion falls due: a heap holds the time each job's condition first
 *     holds, and an update pops the due ones and handles them in admission
 *     order (the slow path's walk).  The slow path gives the time between
 *     two updates to the job's state at the later one; a job whose state
 *     changes between updates (a failure) is therefore settled with its old
 *     state up to the last update, not to now.  next_change is the heap's
 *     top, as the slow path's minimum over all jobs.
 *   - The order as a tree (preemptive scheduler only: fs_order.h plan).  A
 *     treap of all active jobs keyed by (queue, section, stamp): per queue,
 *     section R (running at the last pass), W (waiting at the last pass),
 *     N (given a new position since: admitted, demoted, promoted).  That is
 *     the slow path's order (per queue, the jobs of the last pass, running
 *     ahead, then the new positions in the order given), and after a pass
 *     only the jobs whose state changed and those of N move: R jobs not
 *     running to the front of W (a stamp below all others), W and N jobs
 *     running to the back of R, N jobs waiting to the back of W (stamps
 *     above all others).  A pass is the greedy allocation as blocks: the
 *     longest run of jobs from a rank that fits (a descent on GPU sums),
 *     then the next job that fits (a descent on minimum GPUs); only the
 *     queued jobs inside taken blocks (to start) and the running jobs
 *     inside skipped runs (to preempt) are listed.  Each block ends at a
 *     job that does not fit, so blocks are about as many as the starts,
 *     preemptions and queues.  Cost per pass: O((changes + N) log active).
 *
 * tests/test_sched_fast.c proves the two paths equal job by job.
 */
#include "fs_order.h"
#include "../sim/fs_alloc.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

enum { SEC_R = 0, SEC_W = 1, SEC_N = 2 };     /* sections of a queue in the tree */
enum { K_OTHER = 0, K_QUEUED = 1, K_RUNNING = 2 };
#define NONE UINT32_MAX

typedef struct las_job {
    uint64_t seq;           /* the job in this slot (slots are reused) */
    fs_time_t exec;         /* executed time in this cycle, us (reset by promotion) */
    fs_time_t total;        /* executed time, us */
    fs_time_t lastpend;     /* waiting time since it last ran (while exec > 0), us */
    fs_time_t last_check;   /* settled up to here (fast path: lazily) */
    uint32_t level;
    double pos;
    /* fast path */
    uint64_t adm;           /* admission number (update's order) */
    fs_time_t due;          /* its heap time: its condition holds at the first update >= due */
    int64_t st;             /* tree: its stamp in its section */
    uint32_t hi;            /* heap index (1-based), 0: not in the heap */
    uint8_t run;            /* running, as the hooks said */
    uint8_t sec;            /* tree: its section */
    uint8_t in_t;           /* in the tree */
    uint8_t tch;            /* in the touched list (kept when the slot is reused) */
} las_job_t;

typedef struct act {
    uint32_t slot;
    uint64_t seq;
} act_t;

/* A tree node; node x is slot x - 1, 0 is nil (all zeros but mg). */
typedef struct tn {
    uint32_t l, r, pri;
    uint32_t qs;            /* queue x 3 + section: the key's first part */
    int64_t st;             /* ... and its stamp */
    uint32_t g;             /* its GPUs */
    uint8_t kind;           /* K_QUEUED, K_RUNNING or K_OTHER (recovering) */
    uint32_t cnt;           /* subtree: nodes */
    uint32_t nq, nr;        /* ... queued and running nodes */
    uint32_t mg;            /* ... least GPUs of a queued or running node (NONE: none) */
    uint64_t sum;           /* ... GPUs of queued and running nodes */
} tn_t;

typedef struct skey {       /* a sort key and its slot */
    uint64_t a;
    int64_t b;
    uint32_t slot;
} skey_t;

typedef struct las {
    double *limit;          /* GPU-us per queue boundary, n_q - 1 of them */
    size_t n_q;
    double knob;
    las_job_t *js;
    size_t cap_js;
    act_t *act;             /* slow: active jobs in admission order */
    size_t n_act, cap_act;
    double next_pos;
    uint64_t promotions, demotions;
    struct lkey *kb;        /* slow after_pass scratch */
    size_t kb_cap;
    int fast;               /* per-job settling (the default) */
    int pre;                /* the scheduler preempts (the order's passes) */
    int tree;               /* fast and pre: the tree serves the passes */
    int in_pass;            /* tree: between plan and after_pass (nodes refreshed after) */
    fs_time_t last_upd;     /* fast: the time of the last update */
    uint64_t n_adm;
    /* per-slot arrays, grown at admission (hooks that cannot fail never grow) */
    tn_t *tn;               /* tn[slot + 1] */
    size_t cap_tn;
    uint32_t *hp;           /* heap of slots by due, hp[1] first */
    size_t n_hp, cap_hp;
    uint32_t *tch;          /* tree: slots whose state changed since the last pass */
    size_t n_tch, cap_tch;
    uint32_t *pl, *gl;      /* tree: plan's lists (to preempt, to start) */
    size_t n_pl, n_gl, cap_pl, cap_gl;
    skey_t *sk;             /* scratch: due jobs, moved jobs */
    size_t cap_sk;
    uint32_t root;
    int64_t front, back;    /* tree: next stamps below and above all others */
} las_t;

static void las_destroy(void *state)
{
    las_t *l = state;
    if (!l)
        return;
    fs_free(l->limit);
    fs_free(l->js);
    fs_free(l->act);
    fs_free(l->kb);
    fs_free(l->tn);
    fs_free(l->hp);
    fs_free(l->tch);
    fs_free(l->pl);
    fs_free(l->gl);
    fs_free(l->sk);
    fs_free(l);
}

static int las_create(fs_model_t *m, const fs_sched_cfg_t *cfg, void **state, fs_error_t *err)
{
    (void)m;
    las_t *l = fs_calloc(1, sizeof *l);
    if (!l)
        return fs_error_set(err, FS_ENOMEM, "las: out of memory");
    l->knob = cfg->tiresias.promote_knob;
    const char *p = cfg->tiresias.thresholds ? cfg->tiresias.thresholds : "";
    size_t cap = 0;
    double prev = 0;
    for (;;) {
        char *end;
        errno = 0;
        double v = strtod(p, &end);
        if (end == p || errno || !isfinite(v) || v <= prev) {
            las_destroy(l);
            return fs_error_set(err, FS_EINVAL,
                                "scheduler.tiresias.thresholds: expected increasing positive "
                                "GPU-second limits separated by commas (e.g. 3600,7200), got '%s'",
                                cfg->tiresias.thresholds ? cfg->tiresias.thresholds : "");
        }
        if (fs_grow((void **)&l->limit, &cap, l->n_q + 1, sizeof *l->limit)) {
            las_destroy(l);
            return fs_error_set(err, FS_ENOMEM, "las: out of memory");
        }
        l->limit[l->n_q++] = v * 1e6;
        prev = v;
        while (*end == ' ')
            end++;
        if (*end == '\0')
            break;
        if (*end != ',') {
            las_destroy(l);
            return fs_error_set(err, FS_EINVAL,
                                "scheduler.tiresias.thresholds: expected increasing positive "
                                "GPU-second limits separated by commas (e.g. 3600,7200), got '%s'",
                                cfg->tiresias.thresholds);
        }
        p = end + 1;
    }
    l->n_q++;   /* K limits: K + 1 queues */
    l->fast = 1;
    /* 2D-LAS preempts unless preemption is none (fs_sched.c's rule) */
    l->pre = cfg->preemption != FS_PREEMPT_NONE;
    l->tree = l->pre;
    l->last_upd = INT64_MIN;
    *state = l;
    return 0;
}

static int live_seq(const las_t *l, fs_model_t *m, uint32_t slot, uint64_t seq)
{
    const fs_jobrt_t *j = fs_model_job(m, slot);
    return j->state != FS_JOBRT_FREE && j->seq == seq && l->js[slot].seq == seq;
}

static int live(const las_t *l, fs_model_t *m, const act_t *a)
{
    return live_seq(l, m, a->slot, a->seq);
}

static int live_slot(const las_t *l, fs_model_t *m, uint32_t slot)
{
    return live_seq(l, m, slot, l->js[slot].seq);
}

/* ---- fast path: the tree ------------------------------------------------------------- */

static int kless(const tn_t *a, const tn_t *b)
{
    return a->qs != b->qs ? a->qs < b->qs : a->st < b->st;
}

static void t_pull(tn_t *t, uint32_t x)
{
    tn_t *n = &t[x];
    const tn_t *a = &t[n->l], *b = &t[n->r];
    uint32_t own = n->kind != K_OTHER ? n->g : NONE;
    n->cnt = a->cnt + b->cnt + 1;
    n->nq = a->nq + b->nq + (n->kind == K_QUEUED);
    n->nr = a->nr + b->nr + (n->kind == K_RUNNING);
    n->sum = a->sum + b->sum + (n->kind != K_OTHER ? n->g : 0);
    uint32_t mg = a->mg < b->mg ? a->mg : b->mg;
    n->mg = own < mg ? own : mg;
}

/* Keys below (qs, st) into *a, the rest into *b. */
static void t_split(tn_t *t, uint32_t x, uint32_t qs, int64_t st, uint32_t *a, uint32_t *b)
{
    if (!x) {
        *a = *b = 0;
        return;
    }
    tn_t k = {.qs = qs, .st = st};
    if (kless(&t[x], &k)) {
        t_split(t, t[x].r, qs, st, &t[x].r, b);
        *a = x;
    } else {
        t_split(t, t[x].l, qs, st, a, &t[x].l);
        *b = x;
    }
    t_pull(t, x);
}

static uint32_t t_merge(tn_t *t, uint32_t a, uint32_t b)
{
    if (!a || !b)
        return a ? a : b;
    if (t[a].pri > t[b].pri) {
        t[a].r = t_merge(t, t[a].r, b);
        t_pull(t, a);
        return a;
    }
    t[b].l = t_merge(t, a, t[b].l);
    t_pull(t, b);
    return b;
}

/* Inserts node x (its key set, its children cleared) below t: down the
 * path while the nodes there have higher priority, then a split. */
static uint32_t t_ins(tn_t *t, uint32_t at, uint32_t x)
{
    if (!at) {
        t_pull(t, x);
        return x;
    }
    if (t[x].pri > t[at].pri) {
        t_split(t, at, t[x].qs, t[x].st, &t[x].l, &t[x].r);
        t_pull(t, x);
        return x;
    }
    if (kless(&t[x], &t[at]))
        t[at].l = t_ins(t, t[at].l, x);
    else
        t[at].r = t_ins(t, t[at].r, x);
    t_pull(t, at);
    return at;
}

/* Removes node x from below at: its children merged in its place. */
static uint32_t t_del(tn_t *t, uint32_t at, uint32_t x)
{
    if (at == x)
        return t_merge(t, t[x].l, t[x].r);
    if (kless(&t[x], &t[at]))
        t[at].l = t_del(t, t[at].l, x);
    else
        t[at].r = t_del(t, t[at].r, x);
    t_pull(t, at);
    return at;
}

static void t_insert(las_t *l, uint32_t slot)
{
    uint32_t x = slot + 1;
    l->tn[x].l = l->tn[x].r = 0;
    l->root = t_ins(l->tn, l->root, x);
    l->js[slot].in_t = 1;
}

static void t_remove(las_t *l, uint32_t slot)
{
    if (!l->js[slot].in_t)
        return;
    l->root = t_del(l->tn, l->root, slot + 1);
    l->js[slot].in_t = 0;
}

/* Recomputes the sums on the path to x (its kind changed, not its key). */
static void t_fix(tn_t *t, uint32_t at, uint32_t x)
{
    if (at != x)
        t_fix(t, kless(&t[x], &t[at]) ? t[at].l : t[at].r, x);
    t_pull(t, at);
}

static uint8_t kind_of(fs_model_t *m, uint32_t slot)
{
    uint8_t st = fs_model_job(m, slot)->state;
    return st == FS_JOBRT_QUEUED ? K_QUEUED : st == FS_JOBRT_RUNNING ? K_RUNNING : K_OTHER;
}

/* The job's state changed: its node's kind (and the sums above it). */
static void t_refresh(las_t *l, fs_model_t *m, uint32_t slot)
{
    if (!l->js[slot].in_t)
        return;
    l->tn[slot + 1].kind = kind_of(m, slot);
    t_fix(l->tn, l->root, slot + 1);
}

/* Moves a job to section sec of its queue with stamp st. */
static void t_move(las_t *l, fs_model_t *m, uint32_t slot, uint8_t sec, int64_t st)
{
    t_remove(l, slot);
    tn_t *n = &l->tn[slot + 1];
    l->js[slot].sec = sec;
    l->js[slot].st = st;
    n->qs = l->js[slot].level * 3 + sec;
    n->st = st;
    n->kind = kind_of(m, slot);
    t_insert(l, slot);
}

/* The rank r0 such that the GPU sum of ranks < r0 is the largest <= lim
 * (ranks of no GPUs included); *ps is that sum. */
static uint32_t t_prefix(const tn_t *t, uint32_t x, uint64_t lim, uint64_t *ps)
{
    uint32_t base = 0;
    uint64_t acc = 0;
    while (x) {
        const tn_t *a = &t[t[x].l];
        if (acc + a->sum > lim) {
            x = t[x].l;
            continue;
        }
        acc += a->sum;
        base += a->cnt;
        uint64_t g = t[x].kind != K_OTHER ? t[x].g : 0;
        if (acc + g > lim)
            break;
        acc += g;
        base++;
        x = t[x].r;
    }
    *ps = acc;
    return base;
}

/* The GPU sum of ranks < r. */
static uint64_t t_psum(const tn_t *t, uint32_t x, uint32_t r)
{
    uint64_t acc = 0;
    while (x) {
        const tn_t *a = &t[t[x].l];
        if (r <= a->cnt) {
            x = t[x].l;
            continue;
        }
        acc += a->sum + (t[x].kind != K_OTHER ? t[x].g : 0);
        r -= a->cnt + 1;
        x = t[x].r;
    }
    return acc;
}

/* The first rank >= r of a queued or running job of at most lim GPUs, or
 * NONE.  Subtrees wholly before r or with no such job are not entered. */
static uint32_t t_first_fit(const tn_t *t, uint32_t x, uint32_t base, uint32_t r, uint64_t lim)
{
    if (!x || t[x].mg > lim || base + t[x].cnt <= r)
        return NONE;
    uint32_t got = t_first_fit(t, t[x].l, base, r, lim);
    if (got != NONE)
        return got;
    uint32_t at = base + t[t[x].l].cnt;
    if (at >= r && t[x].kind != K_OTHER && t[x].g <= lim)
        return at;
    return t_first_fit(t, t[x].r, at + 1, r, lim);
}

/* Appends the slots of kind k with ranks in [a, b), in order, to out;
 * *first gets the rank of the first one if it is NONE. */
static void t_list(const tn_t *t, uint32_t x, uint32_t base, uint32_t a, uint32_t b, uint8_t k,
                   uint32_t *out, size_t *n, uint32_t *first)
{
    if (!x || base >= b || base + t[x].cnt <= a || (k == K_QUEUED ? t[x].nq : t[x].nr) == 0)
        return;
    t_list(t, t[x].l, base, a, b, k, out, n, first);
    uint32_t at = base + t[t[x].l].cnt;
    if (at >= a && at < b && t[x].kind == k) {
        if (*first == NONE)
            *first = at;
        out[(*n)++] = x - 1;
    }
    t_list(t, t[x].r, at + 1, a, b, k, out, n, first);
}

/* The jobs of section qs, in order, appended to l->sk. */
static void t_section(las_t *l, uint32_t x, uint32_t qs, size_t *n)
{
    if (!x)
        return;
    const tn_t *t = l->tn;
    if (t[x].qs >= qs)
        t_section(l, t[x].l, qs, n);
    if (t[x].qs == qs && !l->js[x - 1].tch)
        l->sk[(*n)++] = (skey_t){t[x].qs, t[x].st, x - 1};
    if (t[x].qs <= qs)
        t_section(l, t[x].r, qs, n);
}

/* ---- fast path: per-job settling --------------------------------------------------- */

static void h_swap(las_t *l, size_t i, size_t j)
{
    uint32_t a = l->hp[i], b = l->hp[j];
    l->hp[i] = b;
    l->hp[j] = a;
    l->js[b].hi = (uint32_t)i;
    l->js[a].hi = (uint32_t)j;
}

static void h_up(las_t *l, size_t i)
{
    while (i > 1 && l->js[l->hp[i / 2]].due > l->js[l->hp[i]].due) {
        h_swap(l, i, i / 2);
        i /= 2;
    }
}

static void h_down(las_t *l, size_t i)
{
    for (;;) {
        size_t c = 2 * i;
        if (c > l->n_hp)
            return;
        if (c + 1 <= l->n_hp && l->js[l->hp[c + 1]].due < l->js[l->hp[c]].due)
            c++;
        if (l->js[l->hp[c]].due >= l->js[l->hp[i]].due)
            return;
        h_swap(l, i, c);
        i = c;
    }
}

static void h_del(las_t *l, uint32_t slot)
{
    size_t i = l->js[slot].hi;
    if (!i)
        return;
    l->js[slot].hi = 0;
    uint32_t last = l->hp[l->n_hp--];
    if (last != slot) {     /* the last entry fills the hole, then finds its place */
        l->hp[i] = last;
        l->js[last].hi = (uint32_t)i;
        h_up(l, i);
        h_down(l, l->js[last].hi);
    }
}

/* Settles a job's times up to t with its state as the hooks last said. */
static void settle(las_t *l, uint32_t slot, fs_time_t t)
{
    las_job_t *lj = &l->js[slot];
    if (t <= lj->last_check)
        return;
    fs_time_t dt = t - lj->last_check;
    lj->last_check = t;
    if (lj->run) {
        lj->exec += dt;
        lj->total += dt;
    } else if (lj->exec > 0) {
        lj->lastpend += dt;
    }
}

/* Puts the job in the heap at the time its demotion (running) or promotion
 * (waiting) condition first holds, as the slow path's next_change computes
 * it (a time <= last_check: due at the next update); out of it if none. */
static void arm(las_t *l, fs_model_t *m, uint32_t slot)
{
    las_job_t *lj = &l->js[slot];
    fs_time_t t = FS_TIME_NEVER;
    if (lj->run) {
        if (lj->level + 1 < l->n_q) {
            uint32_t g = fs_model_job(m, slot)->job.gpus;
            double need = l->limit[lj->level] - (double)lj->exec * g;
            t = lj->last_check + (need <= 0 ? 0 : (fs_time_t)ceil(need / g));
        }
    } else if (l->knob > 0 && lj->level > 0 && lj->total > 0 && lj->exec > 0) {
        t = lj->last_check + (fs_time_t)((double)lj->exec * l->knob) - lj->lastpend;
    }
    if (t == FS_TIME_NEVER) {
        h_del(l, slot);
        return;
    }
    lj->due = t;
    if (!lj->hi) {
        l->hp[++l->n_hp] = slot;
        lj->hi = (uint32_t)l->n_hp;
    }
    h_up(l, lj->hi);
    h_down(l, lj->hi);
}

/* A job the order no longer tracks (finished, or gone while recovering). */
static void forget(las_t *l, uint32_t slot)
{
    h_del(l, slot);
    t_remove(l, slot);
}

static void touch(las_t *l, uint32_t slot)
{
    if (l->tree && !l->js[slot].tch) {
        l->js[slot].tch = 1;
        l->tch[l->n_tch++] = slot;
    }
}

/* The job's state changed now (a start or preemption in a pass, or a
 * failure or requeue between passes): the time since the last update is
 * the new state's (the slow path gives it to the state at the next one). */
static void state_changed(las_t *l, fs_model_t *m, uint32_t slot)
{
    las_job_t *lj = &l->js[slot];
    settle(l, slot, l->last_upd);
    lj->run = fs_model_job(m, slot)->state == FS_JOBRT_RUNNING;
    arm(l, m, slot);
    if (!l->in_pass)        /* else after_pass moves or refreshes it */
        t_refresh(l, m, slot);
    touch(l, slot);
}

static void las_started(void *state, fs_model_t *m, uint32_t slot)
{
    las_t *l = state;
    if (l->fast)
        state_changed(l, m, slot);
}

static void las_stopped(void *state, fs_model_t *m, uint32_t slot, int finished)
{
    las_t *l = state;
    if (!l->fast)
        return;
    if (finished)
        forget(l, slot);
    else
        state_changed(l, m, slot);
}

static void las_requeued(void *state, fs_model_t *m, uint32_t slot)
{
    las_stopped(state, m, slot, 0);
}

/* The slow path drops the slot by itself (live() fails once it is free). */
static void las_withdrawn(void *state, fs_model_t *m, uint32_t slot)
{
    (void)m;
    las_t *l = state;
    if (l->fast)
        forget(l, slot);
}

/* Per-slot arrays for slot (all lists hold each slot at most once). */
static int grow_slots(las_t *l, uint32_t slot)
{
    size_t need = (size_t)slot + 2, old = l->cap_js;
    if (slot >= old) {
        if (fs_grow((void **)&l->js, &l->cap_js, (size_t)slot + 1, sizeof *l->js))
            return FS_ENOMEM;
        memset(l->js + old, 0, (l->cap_js - old) * sizeof *l->js);
    }
    if (!l->fast)
        return 0;
    size_t old_tn = l->cap_tn;
    if (fs_grow((void **)&l->tn, &l->cap_tn, need, sizeof *l->tn))
        return FS_ENOMEM;
    if (old_tn == 0)
        l->tn[0] = (tn_t){.mg = NONE};  /* nil */
    if (fs_grow((void **)&l->hp, &l->cap_hp, need, sizeof *l->hp) ||
        fs_grow((void **)&l->sk, &l->cap_sk, need, sizeof *l->sk))
        return FS_ENOMEM;
    if (l->tree && (fs_grow((void **)&l->tch, &l->cap_tch, need, sizeof *l->tch) ||
                    fs_grow((void **)&l->pl, &l->cap_pl, need, sizeof *l->pl) ||
                    fs_grow((void **)&l->gl, &l->cap_gl, need, sizeof *l->gl)))
        return FS_ENOMEM;
    return 0;
}

static int las_admit(void *state, fs_model_t *m, uint32_t slot)
{
    las_t *l = state;
    if (grow_slots(l, slot))
        return FS_ENOMEM;
    if (!l->fast && fs_grow((void **)&l->act, &l->cap_act, l->n_act + 1, sizeof *l->act))
        return FS_ENOMEM;
    const fs_jobrt_t *j = fs_model_job(m, slot);
    las_job_t *lj = &l->js[slot];
    if (l->fast)
        forget(l, slot);    /* a job that left without a word (gave up while recovering) */
    uint8_t tch = lj->tch;  /* the touched list may still name the slot */
    memset(lj, 0, sizeof *lj);
    lj->tch = tch;
    lj->seq = j->seq;
    lj->last_check = fs_model_now(m);
    lj->pos = l->next_pos++;
    if (!l->fast) {
        l->act[l->n_act++] = (act_t){slot, j->seq};
        return 0;
    }
    lj->adm = l->n_adm++;
    if (l->tree) {
        tn_t *n = &l->tn[slot + 1];
        *n = (tn_t){.pri = (uint32_t)((j->seq * 0x9E3779B97F4A7C15ull) >> 32), .g = j->job.gpus};
        n->qs = SEC_N;
        n->st = lj->st = l->back++;
        n->kind = kind_of(m, slot);
        lj->sec = SEC_N;
        t_insert(l, slot);
    }
    return 0;
}

static void las_set_fast(void *state, int on)
{
    /* before the first job: the two paths keep different state */
    las_t *l = state;
    l->fast = on != 0;
    l->tree = l->fast && l->pre;
}

static fs_okey_t las_key(void *state, fs_model_t *m, uint32_t slot)
{
    (void)m;
    const las_t *l = state;
    return (fs_okey_t){(double)l->js[slot].level, l->js[slot].pos};
}

static int skey_cmp(const void *pa, const void *pb)
{
    const skey_t *a = pa, *b = pb;
    if (a->a != b->a)
        return a->a < b->a ? -1 : 1;
    return a->b < b->b ? -1 : a->b > b->b;
}

/* Fast update: only the jobs whose demotion or promotion is due, in
 * admission order, with the slow path's tests on their settled times. */
static int las_update_fast(las_t *l, fs_model_t *m)
{
    fs_time_t now = fs_model_now(m);
    l->last_upd = now;
    size_t n = 0;
    while (l->n_hp && l->js[l->hp[1]].due <= now) {
        uint32_t s = l->hp[1];
        h_del(l, s);
        if (!live_slot(l, m, s))
            forget(l, s);
        else
            l->sk[n++] = (skey_t){l->js[s].adm, 0, s};
    }
    if (n > 1)
        qsort(l->sk, n, sizeof *l->sk, skey_cmp);
    int changed = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t s = l->sk[i].slot;
        las_job_t *lj = &l->js[s];
        settle(l, s, now);
        int moved = 0;
        if (lj->run) {
            uint32_t g = fs_model_job(m, s)->job.gpus;
            if (lj->level + 1 < l->n_q && (double)lj->exec * g >= l->limit[lj->level]) {
                lj->level++;
                l->demotions++;
                moved = 1;
            }
        } else if (l->knob > 0 && lj->level > 0 && lj->total > 0 && lj->exec > 0 &&
                   lj->lastpend >= (fs_time_t)((double)lj->exec * l->knob)) {
            lj->exec = 0;
            lj->lastpend = 0;
            lj->level = 0;
            l->promotions++;
            moved = 1;
        }
        if (moved) {
            lj->pos = l->next_pos++;
            changed = 1;
            if (l->tree)
                t_move(l, m, s, SEC_N, l->back++);
        }
    }
    for (size_t i = 0; i < n; i++)
        arm(l, m, l->sk[i].slot);
    return changed;
}

/* Settles executed and waiting times up to now; demotes and promotes in
 * admission order (the simulator walks its runnable list in that order). */
static int las_update(void *state, fs_model_t *m)
{
    las_t *l = state;
    if (l->fast)
        return las_update_fast(l, m);
    fs_time_t now = fs_model_now(m);
    int changed = 0;
    size_t w = 0;
    for (size_t i = 0; i < l->n_act; i++) {
        act_t a = l->act[i];
        if (!live(l, m, &a))
            continue;
        l->act[w++] = a;
        const fs_jobrt_t *j = fs_model_job(m, a.slot);
        las_job_t *lj = &l->js[a.slot];
        fs_time_t dt = now - lj->last_check;
        lj->last_check = now;
        if (j->state == FS_JOBRT_RUNNING) {
            lj->exec += dt;
            lj->total += dt;
            if (lj->level + 1 < l->n_q && (double)lj->exec * j->job.gpus >= l->limit[lj->level]) {
                lj->level++;
                lj->pos = l->next_pos++;
                l->demotions++;
                changed = 1;
            }
        } else {
            if (lj->exec > 0)
                lj->lastpend += dt;
            if (l->knob > 0 && lj->level > 0 && lj->total > 0 && lj->exec > 0 &&
                lj->lastpend >= (fs_time_t)((double)lj->exec * l->knob)) {
                lj->exec = 0;
                lj->lastpend = 0;
                lj->level = 0;
                lj->pos = l->next_pos++;
                l->promotions++;
                changed = 1;
            }
        }
    }
    l->n_act = w;
    return changed;
}

/* The greedy allocation of a preemptive pass on the tree (fs_order.h plan):
 * blocks of consecutive jobs that fit, runs of jobs skipped; queued jobs
 * inside blocks start, running jobs inside runs after the first queued
 * job let in are preempted (ppass in fs_sched.c: the same want[]). */
static int las_plan(void *state, fs_model_t *m, uint64_t gpus, int strict, const uint32_t **pre,
                    size_t *n_pre, const uint32_t **go, size_t *n_go)
{
    (void)m;
    las_t *l = state;
    if (!l->tree)
        return FS_EINVAL;
    const tn_t *t = l->tn;
    uint32_t n = t[l->root].cnt, a = 0, first_in = NONE;
    uint64_t left = gpus, cur = 0;   /* cur: the GPU sum of ranks < a */
    l->n_pl = l->n_gl = 0;
    l->in_pass = 1;
    while (a < n) {
        uint64_t ps;
        uint32_t b = t_prefix(t, l->root, cur + left, &ps);
        t_list(t, l->root, 0, a, b, K_QUEUED, l->gl, &l->n_gl, &first_in);
        left -= ps - cur;
        if (b >= n)
            break;
        /* rank b does not fit; skip to the next job that does */
        uint32_t j = strict ? NONE : t_first_fit(t, l->root, 0, b + 1, left);
        uint32_t e = j == NONE ? n : j, from = first_in == NONE ? e : first_in + 1;
        uint32_t unused = NONE;
        if (from < b)
            from = b;
        t_list(t, l->root, 0, from, e, K_RUNNING, l->pl, &l->n_pl, &unused);
        if (j == NONE)
            break;
        a = j;
        cur = t_psum(t, l->root, j);
    }
    *pre = l->pl;
    *n_pre = l->n_pl;
    *go = l->gl;
    *n_go = l->n_gl;
    return 0;
}

typedef struct lkey {
    uint32_t level, waiting;
    double pos;
    uint32_t slot;
} lkey_t;

static int lkey_cmp(const void *pa, const void *pb)
{
    const lkey_t *a = pa, *b = pb;
    if (a->level != b->level)
        return a->level < b->level ? -1 : 1;
    if (a->waiting != b->waiting)
        return a->waiting < b->waiting ? -1 : 1;
    return a->pos < b->pos ? -1 : a->pos > b->pos;
}

/* After a pass on the tree: the jobs whose state changed and those of the
 * N sections take their places; the others stay. */
static int las_after_pass_tree(las_t *l, fs_model_t *m)
{
    size_t n = 0;
    l->in_pass = 0;
    for (size_t i = 0; i < l->n_tch; i++) {
        uint32_t s = l->tch[i];
        if (!l->js[s].in_t)
            l->js[s].tch = 0;   /* finished since */
        else if (!live_slot(l, m, s)) {
            forget(l, s);
            l->js[s].tch = 0;
        } else {
            l->sk[n++] = (skey_t){l->tn[s + 1].qs, l->tn[s + 1].st, s};
        }
    }
    l->n_tch = 0;
    for (uint32_t q = 0; q < l->n_q; q++)
        t_section(l, l->root, q * 3 + SEC_N, &n);
    qsort(l->sk, n, sizeof *l->sk, skey_cmp);
    /* R jobs not running go to the front of W, in order: stamps below all */
    size_t nf = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t s = l->sk[i].slot;
        l->js[s].tch = 0;
        if (!live_slot(l, m, s)) {
            forget(l, s);
            continue;
        }
        int running = fs_model_job(m, s)->state == FS_JOBRT_RUNNING;
        uint8_t sec = l->js[s].sec;
        if (sec == SEC_R && !running)
            l->sk[nf++].slot = s;   /* nf <= i: read ahead of it */
        else if (sec != SEC_R && running)
            t_move(l, m, s, SEC_R, l->back++);
        else if (sec == SEC_N)
            t_move(l, m, s, SEC_W, l->back++);
        else if (l->tn[s + 1].kind != kind_of(m, s))
            t_refresh(l, m, s);     /* queued again, or started in place */
    }
    for (size_t i = 0; i < nf; i++)
        t_move(l, m, l->sk[i].slot, SEC_W, l->front - (int64_t)nf + (int64_t)i);
    l->front -= (int64_t)nf;
    return 0;
}

/* Keeps running jobs ahead of waiting ones within each queue, each group
 * in its previous order (the simulator's per-pass reordering). */
static int las_after_pass(void *state, fs_model_t *m)
{
    las_t *l = state;
    if (l->tree)
        return las_after_pass_tree(l, m);
    size_t w = 0;
    for (size_t i = 0; i < l->n_act; i++)
        if (live(l, m, &l->act[i]))
            l->act[w++] = l->act[i];
    l->n_act = w;
    if (fs_grow((void **)&l->kb, &l->kb_cap, w + 1, sizeof *l->kb))
        return FS_ENOMEM;
    lkey_t *k = l->kb;
    for (size_t i = 0; i < w; i++) {
        uint32_t s = l->act[i].slot;
        k[i] = (lkey_t){l->js[s].level, fs_model_job(m, s)->state != FS_JOBRT_RUNNING,
                        l->js[s].pos, s};
    }
    qsort(k, w, sizeof *k, lkey_cmp);
    for (size_t i = 0; i < w; i++)
        l->js[k[i].slot].pos = l->next_pos++;
    return 0;
}

static fs_time_t las_next_change(void *state, fs_model_t *m)
{
    las_t *l = state;
    fs_time_t now = fs_model_now(m), best = FS_TIME_NEVER;
    if (l->fast) {
        while (l->n_hp && !live_slot(l, m, l->hp[1]))
            forget(l, l->hp[1]);
        if (l->n_hp)
            best = l->js[l->hp[1]].due > now ? l->js[l->hp[1]].due : now + 1;
        return best;
    }
    for (size_t i = 0; i < l->n_act; i++) {
        act_t a = l->act[i];
        if (!live(l, m, &a))
            continue;
        const fs_jobrt_t *j = fs_model_job(m, a.slot);
        const las_job_t *lj = &l->js[a.slot];
        fs_time_t t = FS_TIME_NEVER;
        if (j->state == FS_JOBRT_RUNNING) {
            if (lj->level + 1 < l->n_q) {
                fs_time_t exec = lj->exec + (now - lj->last_check);
                double need = l->limit[lj->level] - (double)exec * j->job.gpus;
                fs_time_t dt = need <= 0 ? 1 : (fs_time_t)ceil(need / j->job.gpus);
                t = now + dt;
            }
        } else if (l->knob > 0 && lj->level > 0 && lj->total > 0 && lj->exec > 0) {
            fs_time_t dt = (fs_time_t)((double)lj->exec * l->knob) - lj->lastpend -
                           (now - lj->last_check);
            t = now + (dt > 0 ? dt : 1);
        }
        if (t < best)
            best = t;
    }
    return best;
}

/* The thresholds parse as create() parses them (a create without a model). */
static int las_check(const fs_sched_cfg_t *cfg, char *key, size_t keylen, fs_error_t *err)
{
    void *st = NULL;
    int rc = las_create(NULL, cfg, &st, err);
    if (!rc)
        las_destroy(st);
    else if (rc == FS_EINVAL && key && keylen)
        snprintf(key, keylen, "scheduler.tiresias.thresholds");
    return rc;
}

const fs_order_ops_t fs_order_las = {
    .name = "las",
    .check = las_check,
    .preemptive = 1,
    .k2 = 1,                /* its position within a level */
    .create = las_create,
    .destroy = las_destroy,
    .key = las_key,
    .admit = las_admit,
    .update = las_update,
    .after_pass = las_after_pass,
    .next_change = las_next_change,
    .started = las_started,
    .stopped = las_stopped,
    .requeued = las_requeued,
    .withdrawn = las_withdrawn,
    .plan = las_plan,
    .set_fast = las_set_fast,
};
