/*
 * Jobs hit by a failure (docs/recovery.md): interrupted, holding their
 * healthy nodes until the failure is noticed, then requeued after the
 * retry delays or failed for good.  Prefix fs_rcv_, state fs_recovering_t.
 */
#include "fs_model_int.h"
#include "fs_recovery.h"

/* A recovering job's share of failed `node` is freed now (the node is
 * gone); the rest it holds until the failure is noticed. */
void fs_rcv_drop_node(fs_model_t *m, uint32_t slot, uint32_t node)
{
    fs_jobrt_t *j = &m->js.slots[slot];
    fs_acct_hold_until(m, j, m->sim.now);
    fs_acct_hold_sub(m, j);
    if (j->r->place.n <= 1) {
        fs_att_release(m, slot);
        j->r->holding = 0;
        return;
    }
    for (uint32_t i = 0; i < j->r->place.n; i++) {
        fs_slice_t *s = &j->r->place.many[i];
        if (s->node != node || s->gpus == 0)
            continue;
        fs_placement_t one = {.pool = j->r->place.pool, .n = 1, .one = *s,
                              .milli = FS_GPU_MILLI_WHOLE};
        fs_cluster_free(&m->cluster, &one);
        s->gpus = 0;
    }
    fs_nidx_drop(&m->nodes.jobs[node], slot);
    fs_acct_hold_add(m, j);
}

static int recover_at(fs_model_t *m, uint32_t slot, fs_time_t at, uint64_t step)
{
    fs_event_t ev = {.time = at, .type = EV_RECOVER, .entity = slot, .data = step,
                     .priority = FS_PRIO_TIMER};
    int rc = fs_sim_schedule(&m->sim, &ev, NULL);
    if (rc)
        fs_mdl_fail(m, rc, "scheduling a recovery step");
    return rc;
}

/* Back in the queue after a failure (the next start restores first). */

static int requeue(fs_model_t *m, uint32_t slot)
{
    fs_jobrt_t *j = &m->js.slots[slot];
    if (j->r->retiring) {      /* its service retired it while it recovered */
        m->rec.recovering--;
        return fs_repl_end(m, slot);
    }
    j->r->w_recovery += m->sim.now - j->r->start;
    j->state = FS_JOBRT_QUEUED;
    j->r->queued_since = m->sim.now;
    j->r->restarts++;
    m->rec.recovering--;
    fs_acct_useful_mark(j);
    fs_att_unshare(j);
    fs_integ_queue_enter(m, j);
    m->last_change = m->sim.now;
    int rc = m->pol->enqueue(m->pol_state, m, slot);
    if (!rc && m->mods.pend)
        rc = fs_arr_queue_entered(m, slot, 0);
    if (rc)
        fs_mdl_fail(m, rc, "requeueing a job");
    return rc;
}

/* Retries exhausted: the job ends FAILED. */
static int give_up(fs_model_t *m, uint32_t slot)
{
    fs_jobrt_t *j = &m->js.slots[slot];
    j->r->w_recovery += m->sim.now - j->r->start;
    m->rec.recovering--;
    m->last_change = m->sim.now;
    int rc = fs_row_emit(m, j, FS_STATE_FAILED);
    fs_placement_release(&j->r->place);
    if (!rc && fs_slot_free(m, slot)) {
        fs_mdl_fail(m, FS_ENOMEM, "freeing a job slot");
        rc = FS_ENOMEM;
    }
    return rc;
}

/* The failure is noticed: the job lets go of what it still holds; it is
 * retried after the requeue and backoff delay, or fails for good. */
static int detected(fs_model_t *m, uint32_t slot)
{
    fs_jobrt_t *j = &m->js.slots[slot];
    fs_acct_hold_until(m, j, m->sim.now);
    fs_acct_hold_sub(m, j);
    if (j->r->holding) {
        fs_att_release(m, slot);
        j->r->holding = 0;
    }
    m->last_change = m->sim.now;
    if (is_replica(j))      /* the ReplicaSet makes a new pod at once, retries unlimited */
        return requeue(m, slot);
    fs_time_t delay;
    if (!fs_recov_retry(&m->cfg->recovery, j->r->failures, &delay))
        return give_up(m, slot);
    if (delay > 0)
        return recover_at(m, slot, m->sim.now + delay, RC_REQUEUE);
    return requeue(m, slot);
}

void fs_rcv_on_event(fs_model_t *m, uint32_t slot, uint64_t step)
{
    if (slot >= m->js.n_slots || m->js.slots[slot].state != FS_JOBRT_RECOVERING)
        FS_BUG(&m->sim, "recovery step %llu of slot %u, which is not recovering",
               (unsigned long long)step, slot);
    fs_integ_settle(m, m->sim.now);
    if (step == RC_DETECTED)
        detected(m, slot);
    else
        requeue(m, slot);
}

/* From a failure now until its jobs notice it: the heartbeat timeout
 * (recovery.detection), or, for a failure with an Xid, the next health check
 * (recovery.health_check: at multiples of the period, strictly after now)
 * when it comes first (docs/recovery.md "Health checks"). */
static fs_time_t detection_delay(const fs_model_t *m)
{
    fs_time_t det = m->cfg->recovery.detection, hc = m->cfg->recovery.health_check;
    if (m->rec.fail_xid && hc > 0 && det > 0) {
        fs_time_t next = (m->sim.now / hc + 1) * hc - m->sim.now;
        if (next < det)
            det = next;
    }
    return det;
}

/* A running job loses a node to a failure: work since its last checkpoint
 * is lost, the policy forgets it as running, it keeps its healthy nodes
 * until the failure is noticed (recovery.detection), then follows the
 * retry rules (docs/recovery.md). */
int fs_rcv_fail_job(fs_model_t *m, uint32_t slot, uint32_t node)
{
    fs_jobrt_t *j = &m->js.slots[slot];
    /* the attempt's hold up to the failure: its rows now, before the hold
     * clock restarts for the GPUs it keeps until the failure is noticed */
    fs_row_intervals(m, j, m->sim.now);
    fs_att_stop(m, j);
    fs_att_lose_work(m, j, j->r->since_ckpt);
    j->r->failures++;
    j->state = FS_JOBRT_RECOVERING;
    j->r->holding = 1;
    j->r->need_restore = 1;
    j->r->start = j->r->settled_at = m->sim.now;  /* recovery and hold clocks */
    fs_acct_hold_add(m, j);
    m->rec.interruptions++;
    m->rec.recovering++;
    m->last_change = m->sim.now;
    if (m->pol->job_interrupted)
        m->pol->job_interrupted(m->pol_state, m, slot);
    else if (m->pol->job_end)
        m->pol->job_end(m->pol_state, m, slot);
    fs_rcv_drop_node(m, slot, node);
    if (is_replica(j))
        fs_repl_event(m, slot, FS_REPLICA_STOPPED, 0);
    fs_time_t det = detection_delay(m);
    if (det > 0)
        return recover_at(m, slot, m->sim.now + det, RC_DETECTED);
    return detected(m, slot);
}
