#include "fs_policy.h"

#include <stdio.h>

/* The policy table: one row per scheduler.queue value (enum fs_queue_kind). */
static const fs_policy_ops_t *const policies[] = {
    [FS_QUEUE_FIFO] = &fs_policy_fifo,
    [FS_QUEUE_PRIORITY] = &fs_policy_sched,
    [FS_QUEUE_SJF] = &fs_policy_sched,
    [FS_QUEUE_SRTF] = &fs_policy_sched,
    [FS_QUEUE_LAS] = &fs_policy_sched,
    [FS_QUEUE_SLURM] = &fs_policy_sched,
    [FS_QUEUE_KUEUE] = &fs_policy_kueue,
    [FS_QUEUE_VOLCANO] = &fs_policy_volcano,
};

const fs_policy_ops_t *fs_policy_get(int queue_kind)
{
    if (queue_kind < 0 || (size_t)queue_kind >= sizeof policies / sizeof policies[0])
        return NULL;
    return policies[queue_kind];
}

const fs_policy_ops_t *fs_policy_select(const fs_sched_cfg_t *cfg)
{
    if (cfg->queue == FS_QUEUE_FIFO && cfg->backfill == FS_BACKFILL_NONE &&
        cfg->preemption != FS_PREEMPT_ORDER)
        return &fs_policy_fifo;
    if (cfg->queue == FS_QUEUE_FIFO)
        return &fs_policy_sched;
    /* rows of the table: sched for the composable orders, or a policy of
     * its own (kueue, volcano) */
    return fs_policy_get(cfg->queue);
}

int fs_policy_check(const fs_config_t *cfg, char *key, size_t keylen, fs_error_t *err)
{
    if (key && keylen)
        key[0] = '\0';
    const fs_policy_ops_t *p = fs_policy_select(&cfg->scheduler);
    if (!p) {
        if (key && keylen)
            snprintf(key, keylen, "scheduler.queue");
        return fs_error_set(err, FS_EINVAL, "scheduler.queue: no policy with index %d",
                            cfg->scheduler.queue);
    }
    int rc = p->check ? p->check(cfg, key, keylen, err) : 0;
    if (rc == FS_EINVAL && key && keylen && !key[0])
        snprintf(key, keylen, "scheduler");
    return rc;
}
