/*
 * Jobs the trace records as cancelled before they started
 * (FS_JOB_WITHDRAW, workload.trace.cancelled: withdraw; docs/traces.md).
 * Such a job's duration is the time it was pending in production: at its
 * admission a withdraw event is set at submit + duration, its recorded
 * cancel time.  Until then it waits like any job (it holds its place in the
 * order, and the backfill reservations plan around it); when the event
 * fires:
 *   - still queued: it leaves the queue (the policy forgets it through
 *     fs_policy_ops_t.withdraw, the same path as a retired replica, which
 *     drops every cached conclusion of the last pass: the EASY shadow, the
 *     conservative plan; a job held back by a per-user limit leaves its
 *     user's held list) and is written to /jobs as `withdrawn`, never
 *     started;
 *   - running (it started earlier in the simulation than it would have in
 *     production): it is stopped at its cancel time, as the real one was
 *     cancelled then, and written as `withdrawn` with its start, wait and
 *     run; the work done is counted as a running job's at the end of a run;
 *   - recovering from a failure: the event does nothing; the job goes on as
 *     an ordinary job (it ran, so its cancel time no longer applies).
 * An event whose job has ended (its slot free or reused) does nothing.
 * Prefix fs_wd_.
 */
#include "fs_model_int.h"

/* At completion priority, pushed at admission: a job started at its
 * submission would complete at its cancel time too, and the withdrawal,
 * pushed first, comes first. */
int fs_wd_schedule(fs_model_t *m, uint32_t slot)
{
    const fs_jobrt_t *j = &m->js.slots[slot];
    fs_time_t at = j->job.duration > FS_TIME_NEVER - 1 - j->job.submit
                       ? FS_TIME_NEVER - 1 : j->job.submit + j->job.duration;
    fs_event_t ev = {.time = at < m->sim.now ? m->sim.now : at, .type = EV_WITHDRAW,
                     .entity = slot, .data = j->seq, .priority = FS_PRIO_COMPLETION};
    return fs_sim_schedule(&m->sim, &ev, NULL);
}

/* A queued job leaves the queue now, never having run. */
static void leave_queue(fs_model_t *m, uint32_t slot)
{
    fs_jobrt_t *j = &m->js.slots[slot];
    int held = m->lim ? fs_lim_unhold(m, slot) : 0;
    if (held < 0) {
        fs_mdl_fail(m, held, "handing over the jobs held behind a cancelled job");
        return;
    }
    if (!held) {
        if (!m->pol->withdraw) {
            fs_error_set(&m->err, FS_EINVAL, "workload.trace.cancelled: withdraw: policy '%s' "
                         "cannot take a queued job back", m->pol->name);
            fs_sim_fail(&m->sim, FS_EINVAL);
            return;
        }
        int rc = m->pol->withdraw(m->pol_state, m, slot);
        if (rc) {
            fs_mdl_fail(m, rc, "taking a cancelled job out of the queue");
            return;
        }
    }
    if (fs_row_emit(m, j, FS_STATE_WITHDRAWN))
        return;
    fs_integ_queue_leave(m, j);
    if (fs_slot_free(m, slot))
        fs_mdl_fail(m, FS_ENOMEM, "freeing a job slot");
}

/* A running job is stopped now (its cancel time) and ends. */
static void stop_running(fs_model_t *m, uint32_t slot)
{
    fs_jobrt_t *j = &m->js.slots[slot];
    fs_att_stop(m, j);
    fs_att_release(m, slot);      /* the row reads only the pool and node count it keeps */
    m->acct.useful_gpu_s += fs_acct_useful_gpu_s(j, j->job.duration - j->r->remaining);
    fs_att_end_callback(m, slot);
    fs_row_emit(m, j, FS_STATE_WITHDRAWN);
    if (fs_slot_free(m, slot))
        fs_mdl_fail(m, FS_ENOMEM, "freeing a job slot");
}

void fs_wd_event(fs_model_t *m, uint32_t slot, uint64_t seq)
{
    if (slot >= m->js.n_slots)
        return;
    fs_jobrt_t *j = &m->js.slots[slot];
    if (j->state == FS_JOBRT_FREE || j->seq != seq || !(j->job.flags & FS_JOB_WITHDRAW))
        return;     /* it has ended; the slot may hold another job */
    fs_integ_settle(m, m->sim.now);
    if (j->state == FS_JOBRT_QUEUED)
        leave_queue(m, slot);
    else if (j->state == FS_JOBRT_RUNNING)
        stop_running(m, slot);
    else
        return;     /* recovering: it goes on */
    m->last_change = m->sim.now;
}
