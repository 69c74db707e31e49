/*
 * Slurm priority/multifactor (DOMAIN.md 3.4; slurm.schedmd.com
 * priority_multifactor):
 *   priority = w_age x age + w_fairshare x fairshare + w_jobsize x size
 *              + w_partition x partition + w_qos x qos,
 * every factor in [0, 1], weights explicit (scheduler.slurm.weight_*,
 * default 0 as in current Slurm: all zero is FIFO by submission).
 *   age        min(1, waited / PriorityMaxAge)
 *   fairshare  classic 2^(-U/S) per association (the job's tenant; jobs
 *              without one form one association): U = the association's
 *              decayed GPU-second usage over all associations' usage,
 *              S = an equal share (1 / associations seen).  Usage decays
 *              with PriorityDecayHalfLife.
 *   jobsize    GPUs / cluster GPUs (favor_small: 1 minus that)
 *   partition  1 (one partition)
 *   qos        the job's priority field over the largest seen (0 if none > 0)
 * Priorities are recomputed every PriorityCalcPeriod, as a timer event
 * (next_change), not at every pass: a job's priority is taken at
 * submission and at each period boundary.  Usage is accumulated exactly
 * (GPU-seconds of running jobs) and added, decayed, at each boundary.
 * Differences from Slurm: classic fair share, not Fair Tree (Slurm's
 * default since 19.05); no TRES weights, nice or site factor.
 *
 * Bands (fs_order.h): a band is (association, QOS value).  Within a band and
 * a shape, the job size, fair-share, partition and QOS terms are equal, and
 * the age term does not increase with the submit time (admission order), so
 * priorities taken at one boundary never increase with admission sequence:
 * the scheduler keeps each band in admission order and a boundary costs it
 * O(bands), not O(queue).  update_key() computes a priority as of the last
 * boundary (its time and its largest QOS), exactly what a recomputation of
 * every queued job at that boundary gave.
 */
#include "fs_order.h"
#include "../sim/fs_alloc.h"

#include <math.h>
#include <string.h>

typedef struct assoc {
    double usage;           /* decayed GPU-seconds at the last boundary */
    double acc;             /* GPU-seconds since the last boundary */
    uint64_t run_gpus;      /* GPUs running now */
    fs_time_t last;         /* acc settled up to here */
    double fs;              /* fair-share factor as of the last boundary */
    int seen;
} assoc_t;

typedef struct slurm {
    const fs_slurm_cfg_t *c;
    assoc_t *as;            /* index tenant + 1 */
    size_t n_as, cap_as;
    size_t n_seen;
    double *prio;           /* per slot */
    uint64_t *stamp;        /* per slot: period of prio */
    size_t cap_prio, cap_stamp;
    uint64_t period_no;     /* increments at each boundary */
    fs_time_t next_calc;    /* the next boundary */
    fs_time_t last_calc;
    int32_t max_qos;
    int32_t calc_qos;       /* max_qos at the last boundary */
    double gpus_total;
    uint32_t *band;         /* per slot: its band */
    size_t cap_band;
    uint64_t *bkey;         /* band map (open addressing): key (tenant, qos) */
    uint32_t *bid;          /* ... and its band + 1 (0: empty entry) */
    size_t n_band, cap_bmap;
} slurm_t;

static void slurm_destroy(void *state)
{
    slurm_t *s = state;
    if (!s)
        return;
    fs_free(s->as);
    fs_free(s->prio);
    fs_free(s->stamp);
    fs_free(s->band);
    fs_free(s->bkey);
    fs_free(s->bid);
    fs_free(s);
}

static int slurm_create(fs_model_t *m, const fs_sched_cfg_t *cfg, void **state, fs_error_t *err)
{
    slurm_t *s = fs_calloc(1, sizeof *s);
    if (!s)
        return fs_error_set(err, FS_ENOMEM, "slurm: out of memory");
    s->c = &cfg->slurm;
    s->next_calc = cfg->slurm.calc_period;
    s->gpus_total = (double)fs_model_cluster(m)->gpus_total;
    *state = s;
    return 0;
}

static assoc_t *assoc(slurm_t *s, int32_t tenant)
{
    size_t i = (size_t)(tenant + 1);
    if (i >= s->n_as) {
        if (fs_grow((void **)&s->as, &s->cap_as, i + 1, sizeof *s->as))
            return NULL;
        memset(s->as + s->n_as, 0, (i + 1 - s->n_as) * sizeof *s->as);
        s->n_as = i + 1;
    }
    return &s->as[i];
}

static void settle(assoc_t *a, fs_time_t now)
{
    a->acc += (double)a->run_gpus * fs_time_to_s(now - a->last);
    a->last = now;
}

/* The priority of a queued job at time `now` with largest QOS `max_qos`. */
static double prio_at(const slurm_t *s, fs_model_t *m, uint32_t slot, fs_time_t now, int32_t max_qos)
{
    const fs_slurm_cfg_t *c = s->c;
    const fs_jobrt_t *j = fs_model_job(m, slot);
    double age = (double)(now - j->job.submit) / (double)c->max_age;
    if (age > 1)
        age = 1;
    double fs = s->as[j->job.tenant + 1].fs;
    double size = s->gpus_total > 0 ? (double)j->job.gpus / s->gpus_total : 0;
    if (c->favor_small)
        size = 1 - size;
    double qos = max_qos > 0 && j->job.priority > 0 ? (double)j->job.priority / max_qos : 0;
    return c->weight_age * age + c->weight_fairshare * fs + c->weight_jobsize * size +
           c->weight_partition * 1.0 + c->weight_qos * qos;
}

static double prio_of(const slurm_t *s, fs_model_t *m, uint32_t slot)
{
    return prio_at(s, m, slot, fs_model_now(m), s->max_qos);
}

static int bmap_grow(slurm_t *s);

/* The band of (tenant, QOS value), added on first use.  -1: out of memory. */
static int64_t band_of(slurm_t *s, int32_t tenant, int32_t qos)
{
    if ((s->n_band + 1) * 2 > s->cap_bmap && bmap_grow(s))
        return -1;
    uint64_t k = (uint64_t)(uint32_t)tenant << 32 | (uint32_t)qos;
    size_t mask = s->cap_bmap - 1, i = (size_t)((k * UINT64_C(0x9e3779b97f4a7c15)) >> 20) & mask;
    while (s->bid[i] && s->bkey[i] != k)
        i = (i + 1) & mask;
    if (!s->bid[i]) {
        s->bkey[i] = k;
        s->bid[i] = (uint32_t)++s->n_band;
    }
    return s->bid[i] - 1;
}

static int bmap_grow(slurm_t *s)
{
    size_t cap = s->cap_bmap ? 2 * s->cap_bmap : 64;
    uint64_t *ok = s->bkey, *k = fs_calloc(cap, sizeof *k);
    uint32_t *ob = s->bid, *b = fs_calloc(cap, sizeof *b);
    if (!k || !b) {
        fs_free(k);
        fs_free(b);
        return FS_ENOMEM;
    }
    size_t old = s->cap_bmap;
    s->bkey = k;
    s->bid = b;
    s->cap_bmap = cap;
    for (size_t i = 0; i < old; i++) {
        if (!ob[i])
            continue;
        size_t j = (size_t)((ok[i] * UINT64_C(0x9e3779b97f4a7c15)) >> 20) & (cap - 1);
        while (b[j])
            j = (j + 1) & (cap - 1);
        k[j] = ok[i];
        b[j] = ob[i];
    }
    fs_free(ok);
    fs_free(ob);
    return 0;
}

static int slurm_admit(void *state, fs_model_t *m, uint32_t slot)
{
    slurm_t *s = state;
    const fs_jobrt_t *j = fs_model_job(m, slot);
    assoc_t *a = assoc(s, j->job.tenant);
    if (!a || fs_grow((void **)&s->prio, &s->cap_prio, (size_t)slot + 1, sizeof *s->prio) ||
        fs_grow((void **)&s->stamp, &s->cap_stamp, (size_t)slot + 1, sizeof *s->stamp) ||
        fs_grow((void **)&s->band, &s->cap_band, (size_t)slot + 1, sizeof *s->band))
        return FS_ENOMEM;
    /* the QOS term is 0 for every job without a QOS weight: one band per
     * association then */
    int64_t b = band_of(s, j->job.tenant, s->c->weight_qos ? j->job.priority : 0);
    if (b < 0)
        return FS_ENOMEM;
    s->band[slot] = (uint32_t)b;
    if (!a->seen) {
        a->seen = 1;
        a->fs = 1;      /* no usage yet; recomputed at the next boundary */
        a->last = fs_model_now(m);
        s->n_seen++;
    }
    if (j->job.priority > s->max_qos)
        s->max_qos = j->job.priority;
    s->prio[slot] = prio_of(s, m, slot);
    s->stamp[slot] = s->period_no;
    return 0;
}

static fs_okey_t slurm_key(void *state, fs_model_t *m, uint32_t slot)
{
    slurm_t *s = state;
    if (s->stamp[slot] != s->period_no) {
        s->prio[slot] = prio_of(s, m, slot);
        s->stamp[slot] = s->period_no;
    }
    return (fs_okey_t){-s->prio[slot], 0};
}

static uint32_t slurm_band(void *state, fs_model_t *m, uint32_t slot)
{
    (void)m;
    return ((slurm_t *)state)->band[slot];
}

/* A queued job's key as of the last boundary (see the top of the file). */
static fs_okey_t slurm_update_key(void *state, fs_model_t *m, uint32_t slot)
{
    slurm_t *s = state;
    if (s->stamp[slot] != s->period_no) {
        s->prio[slot] = prio_at(s, m, slot, s->last_calc, s->calc_qos);
        s->stamp[slot] = s->period_no;
    }
    return (fs_okey_t){-s->prio[slot], 0};
}

static void slurm_started(void *state, fs_model_t *m, uint32_t slot)
{
    slurm_t *s = state;
    const fs_jobrt_t *j = fs_model_job(m, slot);
    assoc_t *a = &s->as[j->job.tenant + 1];
    settle(a, fs_model_now(m));
    a->run_gpus += j->job.gpus;
}

static void slurm_stopped(void *state, fs_model_t *m, uint32_t slot, int finished)
{
    (void)finished;
    slurm_t *s = state;
    const fs_jobrt_t *j = fs_model_job(m, slot);
    assoc_t *a = &s->as[j->job.tenant + 1];
    settle(a, fs_model_now(m));
    a->run_gpus -= j->job.gpus;
}

/* At a PriorityCalcPeriod boundary: decay usage, add the period's usage,
 * and mark every priority stale (recomputed as keys are read: the
 * scheduler rebuilds its queue at once). */
static int slurm_update(void *state, fs_model_t *m)
{
    slurm_t *s = state;
    fs_time_t now = fs_model_now(m);
    if (now < s->next_calc)
        return 0;
    double dt = fs_time_to_s(now - s->last_calc);
    double hl = fs_time_to_s(s->c->decay_half_life);
    double d = hl > 0 ? pow(2.0, -dt / hl) : 1.0;
    for (size_t i = 0; i < s->n_as; i++) {
        settle(&s->as[i], now);
        s->as[i].usage = s->as[i].usage * d + s->as[i].acc;
        s->as[i].acc = 0;
    }
    double total = 0;
    for (size_t i = 0; i < s->n_as; i++)
        total += s->as[i].usage;
    for (size_t i = 0; i < s->n_as; i++) {
        double u = total > 0 ? s->as[i].usage / total : 0;
        s->as[i].fs = s->n_seen > 0 ? pow(2.0, -u * (double)s->n_seen) : 1;
    }
    s->last_calc = now;
    s->calc_qos = s->max_qos;
    s->period_no++;
    s->next_calc = (now / s->c->calc_period + 1) * s->c->calc_period;
    return 1;
}

static fs_time_t slurm_next_change(void *state, fs_model_t *m)
{
    slurm_t *s = state;
    if (fs_model_jobs_queued(m) == 0)
        return FS_TIME_NEVER;
    fs_time_t now = fs_model_now(m);
    if (s->next_calc <= now)
        s->next_calc = (now / s->c->calc_period + 1) * s->c->calc_period;
    return s->next_calc;
}

const fs_order_ops_t fs_order_slurm = {
    .name = "slurm",
    .create = slurm_create,
    .destroy = slurm_destroy,
    .key = slurm_key,
    .admit = slurm_admit,
    .started = slurm_started,
    .stopped = slurm_stopped,
    .update = slurm_update,
    .next_change = slurm_next_change,
    .band = slurm_band,
    .update_key = slurm_update_key,
};
