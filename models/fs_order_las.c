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
    return 0;
}

static int live(const las_t *l, fs_model_t *m, const act_t *a)
{
    const fs_jobrt_t *j = fs_model_job(m, a->slot);
    return j->state != FS_JOBRT_FREE && j->seq == a->seq && l->js[a->slot].seq == a->seq;
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
static int las_after_pass(void *state, fs_model_t *m)
{
    las_t *l = state;
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
};
