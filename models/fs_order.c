/*
 * The table of queue orders (made from fs_queues.h's rows) and the
 * planning run time shared by SJF/SRTF and backfill.
 */
#include "fs_order.h"

static const fs_order_ops_t *const orders[FS_QUEUE_COUNT] = {
#define ORDER(o) &o
#define NO_ORDER NULL
#define FS_ORDER_ROW(e, name, policy, order) [FS_QUEUE_##e] = order,
    FS_QUEUE_KINDS(FS_ORDER_ROW)
#undef FS_ORDER_ROW
#undef NO_ORDER
#undef ORDER
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
        return fs_jobrt_remaining(j);
    if (j->job.estimate >= 0)
        return j->job.estimate;
    return c->unknown_estimate == FS_UNKNOWN_EST_ORACLE ? j->job.duration : c->default_limit;
}
