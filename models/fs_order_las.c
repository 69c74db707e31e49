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
 * Key = (queue, position).  State is per slot, settled lazily at each
 * update (O(active) per pass, like the simulator).
 *
 * Fast path (in_order, the default): the order of all active jobs is kept
 * from one after_pass to the next (ol: the order it left), and jobs given a
 * new position since (admitted, demoted, promoted: always the end of their
 * queue) are listed in the order they got it (pend).  The order now is, per
 * queue, ol's entries still at their position, then pend's: a merge in
 * O(active), with no sort and no key call; after_pass is a stable
 * partition of that list in O(active) instead of a sort.  Positions are
 * the same as on the slow path (las_set_fast(0): every pass sorts).
 */
#include "fs_order.h"
#include "../sim/fs_alloc.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

typedef struct las_job {
    uint64_t seq;           /* the job in this slot (slots are reused) */
    fs_time_t exec;         /* executed time in this cycle, us (reset by promotion) */
    fs_time_t total;        /* executed time, us */
    fs_time_t lastpend;     /* waiting time since it last ran (while exec > 0), us */
    fs_time_t last_check;
    uint32_t level;
    double pos;
} las_job_t;

typedef struct act {
    uint32_t slot;
    uint64_t seq;
} act_t;

typedef struct ent {        /* fast path: a job at a position */
    uint32_t slot;
    uint32_t level;         /* its queue then */
    uint64_t seq;
    double pos;             /* the entry is stale once the job's pos differs */
} ent_t;

typedef struct las {
    double *limit;          /* GPU-us per queue boundary, n_q - 1 of them */
    size_t n_q;
    double knob;
    las_job_t *js;
    size_t cap_js;
    act_t *act;             /* active jobs in admission order */
    size_t n_act, cap_act;
    double next_pos;
    uint64_t promotions, demotions;
    struct lkey *kb;        /* after_pass scratch */
    size_t kb_cap;
    int fast;               /* in_order and the partition (the default) */
    int oom;                /* fast: an update could not list a new position */
    int mg_ok;              /* fast: mg is the order now (in_order this pass, no new position since) */
    ent_t *ol;              /* fast: every active job in order, as after_pass left them */
    size_t n_ol, cap_ol;
    ent_t *pend;            /* fast: new positions since, in the order given */
    size_t n_pend, cap_pend;
    ent_t *mg;              /* fast: the merged order (scratch) */
    size_t n_mg, cap_mg;
    uint32_t *out;          /* fast: its slots (in_order's answer) */
    size_t cap_out;
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
    fs_free(l->ol);
    fs_free(l->pend);
    fs_free(l->mg);
    fs_free(l->out);
    fs_free(l);
}

/* Fast path: slot got position pos (the end of its queue). */
static int pend_add(las_t *l, uint32_t slot)
{
    if (!l->fast)
        return 0;
    l->mg_ok = 0;
    if (fs_grow((void **)&l->pend, &l->cap_pend, l->n_pend + 1, sizeof *l->pend))
        return FS_ENOMEM;
    l->pend[l->n_pend++] = (ent_t){slot, l->js[slot].level, l->js[slot].seq, l->js[slot].pos};
    return 0;
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
    *state = l;
    return 0;
}

static int las_admit(void *state, fs_model_t *m, uint32_t slot)
{
    las_t *l = state;
    size_t old = l->cap_js;
    if (slot >= old) {
        if (fs_grow((void **)&l->js, &l->cap_js, (size_t)slot + 1, sizeof *l->js))
            return FS_ENOMEM;
        memset(l->js + old, 0, (l->cap_js - old) * sizeof *l->js);
    }
    if (fs_grow((void **)&l->act, &l->cap_act, l->n_act + 1, sizeof *l->act))
        return FS_ENOMEM;
    const fs_jobrt_t *j = fs_model_job(m, slot);
    las_job_t *lj = &l->js[slot];
    memset(lj, 0, sizeof *lj);
    lj->seq = j->seq;
    lj->last_check = fs_model_now(m);
    lj->pos = l->next_pos++;
    l->act[l->n_act++] = (act_t){slot, j->seq};
    return pend_add(l, slot);
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

/* An entry still names a live job at its position. */
static int ent_ok(const las_t *l, fs_model_t *m, const ent_t *e)
{
    return live_seq(l, m, e->slot, e->seq) && l->js[e->slot].pos == e->pos;
}

/* Fast path: every active job in (queue, position) order into mg: per
 * queue, ol's entries still valid (ol is in that order), then pend's of
 * that queue (positions given later, in increasing order).  O(active +
 * pend x queues). */
static int merge_order(las_t *l, fs_model_t *m)
{
    if (fs_grow((void **)&l->mg, &l->cap_mg, l->n_ol + l->n_pend + 1, sizeof *l->mg))
        return FS_ENOMEM;
    size_t n = 0, i = 0;
    for (uint32_t q = 0; q < l->n_q; q++) {
        for (; i < l->n_ol && l->ol[i].level == q; i++)
            if (ent_ok(l, m, &l->ol[i]))
                l->mg[n++] = l->ol[i];
        for (size_t k = 0; k < l->n_pend; k++)
            if (l->pend[k].level == q && ent_ok(l, m, &l->pend[k]))
                l->mg[n++] = l->pend[k];
    }
    l->n_mg = n;
    return 0;
}

static int las_in_order(void *state, fs_model_t *m, const uint32_t **slots, size_t *n)
{
    las_t *l = state;
    if (l->oom || merge_order(l, m) ||
        fs_grow((void **)&l->out, &l->cap_out, l->n_mg + 1, sizeof *l->out))
        return FS_ENOMEM;
    for (size_t i = 0; i < l->n_mg; i++)
        l->out[i] = l->mg[i].slot;
    l->mg_ok = 1;   /* a pass starts and stops jobs: no position changes */
    *slots = l->out;
    *n = l->n_mg;
    return 0;
}

static void las_set_fast(void *state, int on)
{
    las_t *l = state;
    l->fast = on != 0;
    l->n_pend = l->n_ol = 0;
}

static fs_okey_t las_key(void *state, fs_model_t *m, uint32_t slot)
{
    (void)m;
    const las_t *l = state;
    return (fs_okey_t){(double)l->js[slot].level, l->js[slot].pos};
}

/* Settles executed and waiting times up to now; demotes and promotes in
 * admission order (the simulator walks its runnable list in that order). */
static int las_update(void *state, fs_model_t *m)
{
    las_t *l = state;
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
                if (pend_add(l, a.slot))
                    l->oom = 1;
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
                if (pend_add(l, a.slot))
                    l->oom = 1;
            }
        }
    }
    l->n_act = w;
    return changed;
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

/* Keeps running jobs ahead of waiting ones within each queue, each group
 * in its previous order (the simulator's per-pass reordering). */
static int las_after_pass_fast(las_t *l, fs_model_t *m);

static int las_after_pass(void *state, fs_model_t *m)
{
    las_t *l = state;
    if (l->fast)
        return las_after_pass_fast(l, m);
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

/* The same partition without a sort: per queue (mg is in queue order),
 * running jobs then the others, each in their order; every job renumbered
 * as the slow path does.  The result is the new ol; pend is emptied.
 * (The admission list is left to update's compaction: its readers skip
 * dead entries.) */
static int las_after_pass_fast(las_t *l, fs_model_t *m)
{
    if (l->oom)
        return FS_ENOMEM;
    if ((!l->mg_ok && merge_order(l, m)) ||
        fs_grow((void **)&l->ol, &l->cap_ol, l->n_mg + 1, sizeof *l->ol))
        return FS_ENOMEM;
    l->mg_ok = 0;
    size_t n = 0;
    for (size_t a = 0; a < l->n_mg;) {
        uint32_t q = l->js[l->mg[a].slot].level;
        size_t b = a;
        while (b < l->n_mg && l->js[l->mg[b].slot].level == q)
            b++;
        for (int pass = 0; pass < 2; pass++)
            for (size_t i = a; i < b; i++) {
                uint32_t s = l->mg[i].slot;
                int waiting = fs_model_job(m, s)->state != FS_JOBRT_RUNNING;
                if (waiting != pass || !ent_ok(l, m, &l->mg[i]))
                    continue;
                l->js[s].pos = l->next_pos++;
                l->ol[n++] = (ent_t){s, q, l->mg[i].seq, l->js[s].pos};
            }
        a = b;
    }
    l->n_ol = n;
    l->n_pend = 0;
    return 0;
}

static fs_time_t las_next_change(void *state, fs_model_t *m)
{
    las_t *l = state;
    fs_time_t now = fs_model_now(m), best = FS_TIME_NEVER;
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
    .create = las_create,
    .destroy = las_destroy,
    .key = las_key,
    .admit = las_admit,
    .update = las_update,
    .after_pass = las_after_pass,
    .next_change = las_next_change,
    .in_order = las_in_order,
    .set_fast = las_set_fast,
};
