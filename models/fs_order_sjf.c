/*
 * Shortest job first and shortest remaining time first (DOMAIN.md 3.6).
 *   sjf   key = the planned run time (fs_order_plan: user estimate or
 *         oracle), fixed at queueing; non-preemptive by default.
 *   srtf  key = the planned remaining time: oracle -> remaining work;
 *         user -> estimate minus the work done (never below 0);
 *         preemptive by default (preemption: auto), as the Tiresias
 *         simulator's "shortest".
 */
#include "fs_order.h"

static fs_okey_t sjf_key(void *state, fs_model_t *m, uint32_t slot)
{
    (void)state;
    return (fs_okey_t){(double)fs_order_plan(m, slot), 0};
}

static fs_okey_t srtf_key(void *state, fs_model_t *m, uint32_t slot)
{
    (void)state;
    const fs_sched_cfg_t *c = &fs_model_config(m)->scheduler;
    const fs_jobrt_t *j = fs_model_job(m, slot);
    fs_time_t left = fs_model_remaining(m, slot);
    if (c->runtime == FS_RUNTIME_ORACLE)
        return (fs_okey_t){(double)left, 0};
    fs_time_t done = j->job.duration - left;
    fs_time_t est = fs_order_plan(m, slot) - (done > 0 ? done : 0);
    return (fs_okey_t){(double)(est > 0 ? est : 0), 0};
}

const fs_order_ops_t fs_order_sjf = {.name = "sjf", .key = sjf_key};
const fs_order_ops_t fs_order_srtf = {.name = "srtf", .preemptive = 1, .key = srtf_key};
