/*
 * Cobalt's WFP utility order (ALCF's Cobalt scheduler on Theta, its default
 * "wfp" utility function; docs/policies.md):
 *   utility = (queued time / requested time)^exponent x size
 * largest first; queued time = now - submit, requested time = the planned
 * run time (fs_order_plan: the user's estimate, or the run time with
 * runtime: oracle or no estimate), size = GPUs (nodes on a one-GPU-per-node
 * cluster).  Utilities are recomputed every scheduler.wfp.period (Cobalt
 * evaluates them each scheduling iteration; the period bounds the cost): a
 * job queued since the last recomputation has utility 0 until the next, and
 * equal utilities go in admission order.
 */
#include "fs_order.h"

#include <math.h>

#include "../sim/fs_alloc.h"

typedef struct wfp {
    const fs_wfp_cfg_t *c;
    fs_time_t at;           /* time of the last recomputation */
    fs_time_t next;         /* the next */
} wfp_t;

static int wfp_create(fs_model_t *m, const fs_sched_cfg_t *cfg, void **state, fs_error_t *err)
{
    (void)m;
    wfp_t *s = fs_calloc(1, sizeof *s);
    if (!s)
        return fs_error_set(err, FS_ENOMEM, "wfp: out of memory");
    s->c = &cfg->wfp;
    s->next = cfg->wfp.period;
    *state = s;
    return 0;
}

static void wfp_destroy(void *state)
{
    fs_free(state);
}

static fs_okey_t wfp_key(void *state, fs_model_t *m, uint32_t slot)
{
    wfp_t *s = state;
    const fs_jobrt_t *j = fs_model_job(m, slot);
    fs_time_t queued = s->at - j->job.submit;
    fs_time_t req = fs_order_plan(m, slot);
    if (queued <= 0 || req <= 0)
        return (fs_okey_t){0, 0};
    double u = pow((double)queued / (double)req, s->c->exponent) * (double)j->job.gpus;
    return (fs_okey_t){-u, 0};
}

static int wfp_update(void *state, fs_model_t *m)
{
    wfp_t *s = state;
    fs_time_t now = fs_model_now(m);
    if (now < s->next)
        return 0;
    s->at = now;
    s->next = (now / s->c->period + 1) * s->c->period;
    return 1;
}

static fs_time_t wfp_next_change(void *state, fs_model_t *m)
{
    wfp_t *s = state;
    if (fs_model_jobs_queued(m) == 0)
        return FS_TIME_NEVER;
    fs_time_t now = fs_model_now(m);
    if (s->next <= now)
        s->next = (now / s->c->period + 1) * s->c->period;
    return s->next;
}

const fs_order_ops_t fs_order_wfp = {
    .name = "wfp",
    .create = wfp_create,
    .destroy = wfp_destroy,
    .key = wfp_key,
    .update = wfp_update,
    .next_change = wfp_next_change,
};
