#include "fs_policy.h"
#include "fs_order.h"

#include <stdio.h>

/* The policy table: one row per scheduler.queue value (fs_queues.h). */
static const fs_policy_ops_t *const policies[FS_QUEUE_COUNT] = {
#define FS_POLICY_ROW(e, name, policy, order) [FS_QUEUE_##e] = &policy,
    FS_QUEUE_KINDS(FS_POLICY_ROW)
#undef FS_POLICY_ROW
};

const fs_policy_ops_t *fs_policy_get(int queue_kind)
{
    if (queue_kind < 0 || (size_t)queue_kind >= sizeof policies / sizeof policies[0])
        return NULL;
    return policies[queue_kind];
}

const fs_policy_ops_t *fs_policy_select(const fs_sched_cfg_t *cfg)
{
    if (cfg->plugin_path || cfg->plugin_table)
        return &fs_policy_plugin;
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
    if (cfg->scheduler.n_plugin_opts && !cfg->scheduler.plugin_path && !cfg->scheduler.plugin_table) {
        if (key && keylen)
            snprintf(key, keylen, "scheduler.plugin.options");
        return fs_error_set(err, FS_EINVAL, "scheduler.plugin.options: options for a plugin, but "
                            "there is no scheduler.plugin.path (nor a policy given through the "
                            "library): nothing would read them");
    }
    const fs_policy_ops_t *p = fs_policy_select(&cfg->scheduler);
    if (!p) {
        if (key && keylen)
            snprintf(key, keylen, "scheduler.queue");
        return fs_error_set(err, FS_EINVAL, "scheduler.queue: no policy with index %d",
                            cfg->scheduler.queue);
    }
    int rc = fs_policy_withdraw_check(cfg, p, err);
    if (rc && key && keylen)
        snprintf(key, keylen, "workload.trace.cancelled");
    if (!rc)
        rc = p->check ? p->check(cfg, key, keylen, err) : 0;
    if (rc == FS_EINVAL && key && keylen && !key[0])
        snprintf(key, keylen, "scheduler");
    return rc;
}

const char *fs_policy_preemptor(const fs_config_t *cfg)
{
    const fs_sched_cfg_t *s = &cfg->scheduler;
    if (s->queue == FS_QUEUE_KUEUE) {
        for (size_t i = 0; i < s->kueue.n_cqs; i++) {
            const fs_kueue_cq_cfg_t *q = &s->kueue.cqs[i];
            if (q->within_cq != FS_KUEUE_NEVER || q->reclaim != FS_KUEUE_NEVER ||
                q->borrow_within != FS_KUEUE_NEVER)
                return "Kueue preemption (cluster_queues' within_cluster_queue, "
                       "reclaim_within_cohort or borrow_within_cohort)";
        }
        return NULL;
    }
    if (s->queue == FS_QUEUE_VOLCANO)
        return s->volcano.reclaim || s->volcano.preempt ? "Volcano reclaim/preempt" : NULL;
    const fs_order_ops_t *o = fs_order_get(s->queue);
    if (!o || s->preemption == FS_PREEMPT_NONE)
        return NULL;
    if (s->preemption == FS_PREEMPT_ORDER || o->preemptive)
        return o->name;
    return NULL;
}

int fs_policy_work_loss(const fs_config_t *cfg, char *msg, size_t n)
{
    const char *who = fs_policy_preemptor(cfg);
    if (!who || cfg->scheduler.checkpoint_interval > 0 || cfg->recovery.checkpoint != FS_CKPT_NONE)
        return 0;
    snprintf(msg, n,
             "%s preempts, and a preempted job loses all the work of its attempt "
             "(scheduler.checkpoint_interval: 0, no recovery.checkpoint): set "
             "scheduler.checkpoint_interval (1us keeps all work)%s",
             who, cfg->scheduler.queue == FS_QUEUE_LAS ? ", or scheduler.preset: tiresias" : "");
    return 1;
}
