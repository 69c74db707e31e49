/*
 * The table of queue orders (one row per enum fs_queue_kind) and the
 * planning run time shared by SJF/SRTF and backfill.
 */
#include "fs_order.h"

static const fs_order_ops_t *const orders[] = {
    [FS_QUEUE_FIFO] = &fs_order_fifo,
    [FS_QUEUE_PRIORITY] = &fs_order_priority,
    [FS_QUEUE_SJF] = &fs_order_sjf,
    [FS_QUEUE_SRTF] = &fs_order_srtf,
    [FS_QUEUE_LAS] = &fs_order_las,
    [FS_QUEUE_SLURM] = &fs_order_slurm,
};

const fs_order_ops_t *fs_order_get(int queue_kind)
{
    if (queue_kind < 0 || (size_t)queue_kind >= sizeof orders / sizeof orders[0])
        return NULL;
    return orders[queue_kind];
}

fs_time_t fs_order_plan(const fs_model_t *m, uint32_t slot)
{
    fs_model_t *mm = (fs_model_t *)m;
    const fs_sched_cfg_t *c = &fs_model_config(m)->scheduler;
    const fs_jobrt_t *j = fs_model_job(mm, slot);
    if (c->runtime == FS_RUNTIME_ORACLE)
        return j->remaining;
    if (j->job.estimate >= 0)
        return j->job.estimate;
    return c->unknown_estimate == FS_UNKNOWN_EST_ORACLE ? j->job.duration : c->default_limit;
}
