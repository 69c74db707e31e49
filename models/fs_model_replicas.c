/*
 * Service replicas (FS_JOB_SERVICE, models/fs_service.h): admitted, told of
 * their starts and stops, and retired by their service.  Prefix fs_repl_,
 * state fs_replicas_t.
 */
#include "fs_model_int.h"

/* ---- service replicas ----------------------------------------------------------- */

void fs_model_set_replica_hook(fs_model_t *m, const fs_replica_hook_t *hook)
{
    m->svc.hook = *hook;
}

/* A replica's event to its service (a hook error stops the run). */
void fs_repl_event(fs_model_t *m, uint32_t slot, int event, fs_time_t startup)
{
    if (!m->svc.hook.fn || m->err.code)
        return;
    int rc = m->svc.hook.fn(m->svc.hook.ud, m, slot, event, startup);
    if (rc)
        fs_mdl_fail(m, rc, "service replica");
}

int fs_model_submit(fs_model_t *m, const fs_job_t *job, int32_t set, uint32_t *slot)
{
    fs_job_t r = *job;
    r.flags |= FS_JOB_SERVICE;
    r.submit = m->sim.now;
    r.duration = FS_TIME_MAX_INPUT;     /* never completes: no end event is scheduled */
    fs_arr_admit(m, &r, set, slot);
    if (m->err.code)
        return m->err.code;
    return *slot == NO_SLOT ? FS_EINVAL : 0;
}

/* A replica ends now (retired, or retired while recovering): the slot is
 * freed; the GPUs were given back by the caller. */
int fs_repl_end(fs_model_t *m, uint32_t slot)
{
    if (m->js.slots[slot].r)   /* none: withdrawn before it ever ran */
        fs_placement_release(&m->js.slots[slot].r->place);
    m->svc.live--;
    m->last_change = m->sim.now;
    if (fs_slot_free(m, slot)) {
        fs_mdl_fail(m, FS_ENOMEM, "freeing a job slot");
        return FS_ENOMEM;
    }
    return 0;
}

int fs_model_retire(fs_model_t *m, uint32_t slot)
{
    if (slot >= m->js.n_slots || !is_replica(&m->js.slots[slot]))
        return FS_EINVAL;
    fs_jobrt_t *j = &m->js.slots[slot];
    fs_integ_settle(m, m->sim.now);
    m->pass_wanted = 1;
    switch (j->state) {
    case FS_JOBRT_RUNNING:
        fs_att_stop(m, j);
        fs_att_release(m, slot);
        fs_att_end_callback(m, slot);
        return fs_repl_end(m, slot);
    case FS_JOBRT_RECOVERING:
        j->r->retiring = 1;
        return 0;
    case FS_JOBRT_QUEUED: {
        if (!m->pol->withdraw)
            return 1;   /* the policy's until it starts it */
        int rc = m->pol->withdraw(m->pol_state, m, slot);
        if (rc) {
            fs_mdl_fail(m, rc, "taking a replica out of the queue");
            return rc;
        }
        fs_integ_queue_leave(m, j);
        return fs_repl_end(m, slot);
    }
    default:
        return FS_EINVAL;
    }
}
