/*
 * The arrival stream: jobs pulled from the source in batches, merged into
 * the event loop as a sorted stream, cut at the horizon, and admitted (a
 * slot, a pool set, the policy's queue).  Prefix fs_arr_, state
 * fs_arrivals_t.
 */
#include "fs_model_int.h"

/* ---- the arrival stream -------------------------------------------------------- */

/* The stream has no more jobs (at now, the last one's submission or the
 * first one cut by the horizon).  A horizon left to the trace
 * (cfg->horizon_auto) becomes its last submission: the measurement window
 * ends there.  A drain gets its cap (drain_limit after the last arrival). */
static void source_ended(fs_model_t *m)
{
    m->arr.src_done = 1;
    if (m->cfg->horizon_auto) {
        m->arr.horizon = m->arr.last_arrival > 0 ? m->arr.last_arrival : 0;
        /* (arrivals all at or before the warm-up leave no arrival window:
         * the window is then the run after the warm-up) */
        if (m->arr.horizon > m->integ.win_lo) {
            m->integ.win_hi = m->arr.horizon;
            fs_usage_set_window(m->usage, m->integ.win_lo, m->integ.win_hi);
        }
    }
    if (m->cfg->until == FS_UNTIL_DRAIN && m->cfg->drain_limit > 0) {
        fs_time_t from = m->arr.last_arrival > 0 ? m->arr.last_arrival : 0;
        fs_time_t at = m->cfg->drain_limit > FS_TIME_NEVER - 1 - from ? FS_TIME_NEVER - 1
                                                                       : from + m->cfg->drain_limit;
        fs_event_t ev = {.time = at < m->sim.now ? m->sim.now : at, .type = EV_DRAIN_CAP,
                         .priority = PRIO_DRAIN_CAP};
        if (fs_sim_schedule(&m->sim, &ev, NULL))
            fs_mdl_fail(m, FS_ENOMEM, "scheduling the drain cap");
        else
            m->inert.cap = 1;
    }
}

fs_time_t fs_arr_peek(void *vm)
{
    fs_model_t *m = vm;
    if (m->arr.batch_i < m->arr.batch_n)
        return m->arr.batch[m->arr.batch_i].submit;
    if (m->arr.src_done)
        return FS_TIME_NEVER;
    m->arr.batch_i = m->arr.batch_n = 0;
    int rc = fs_source_next(m->src, m->arr.batch, BATCH, &m->arr.batch_n, &m->err);
    if (rc) {
        m->arr.src_done = 1;
        fs_sim_fail(&m->sim, rc);
        return FS_TIME_NEVER;
    }
    if (m->arr.batch_n == 0) {
        source_ended(m);
        return FS_TIME_NEVER;
    }
    /* arrivals at or after the horizon are not replayed; the stream is
     * sorted, so nothing after them is either */
    if (m->arr.batch[0].submit >= m->arr.horizon) {
        m->arr.truncated = 1;
        m->arr.batch_n = 0;
        source_ended(m);
        return FS_TIME_NEVER;
    }
    for (size_t i = 1; i < m->arr.batch_n; i++)
        if (m->arr.batch[i].submit >= m->arr.horizon) {
            m->arr.truncated = 1;
            m->arr.batch_n = i;
            break;
        }
    if (m->arr.batch[0].submit < m->sim.now) {
        fs_error_set(&m->err, FS_EINVAL, "workload '%s': job %llu submitted at %.6f s, before "
                     "the previous job (the stream must be sorted by submission time)",
                     m->src->ops->name, (unsigned long long)m->arr.batch[0].id,
                     fs_time_to_s(m->arr.batch[0].submit));
        m->arr.src_done = 1;
        fs_sim_fail(&m->sim, FS_EINVAL);
        return FS_TIME_NEVER;
    }
    return m->arr.batch[0].submit;
}

/* A job entered the queue (admitted: the gate hears of it too): the
 * modules that asked to know.  Out of line: fs_arr_admit() without hooks pays one
 * test, as it did for the gate alone. */
__attribute__((noinline)) int fs_arr_queue_entered(fs_model_t *m, uint32_t slot, int admitted)
{
    int rc = admitted && m->mods.gate ? m->mods.gate->admitted(m->mods.gate_ud, m, &m->js.slots[slot].job) : 0;
    if (!rc && m->mods.pend)
        rc = m->mods.pend->pending(m->mods.pend_ud, m, slot);
    return rc;
}

/* Admits job now into pool set `set` (INT32_MIN: the set of its GPU type):
 * a slot, the policy's queue.  *slot: NO_SLOT when it was rejected (it can
 * never fit) or on an error (m->err set). */
void fs_arr_admit(fs_model_t *m, const fs_job_t *job, int32_t set, uint32_t *slot)
{
    *slot = NO_SLOT;
    fs_integ_settle(m, m->sim.now);
    m->last_change = m->sim.now;
    m->pass_wanted = 1;
    int32_t t = set;
    int rc;
    if (t == INT32_MIN) {
        if (job->gpu_type >= 0 && (rc = fs_pset_of_type(m, job->gpu_type))) {
            fs_mdl_fail(m, rc, "admitting a job");
            return;
        }
        t = job->gpu_type >= 0 ? m->psets.type_set[job->gpu_type] : -1;   /* its pool set */
    }
    if (m->psets.tainted && (rc = fs_pset_derived(m, t, DSET_TENANT, job->tenant, &t))) {
        fs_mdl_fail(m, rc, "admitting a job");
        return;
    }
    if ((job->flags & FS_JOB_SINGLE_NODE) &&
        (rc = fs_pset_derived(m, t, DSET_NODE_GPUS, job->gpus, &t))) {
        fs_mdl_fail(m, rc, "admitting a job");
        return;
    }
    if (m->js.next_seq > UINT32_MAX) {     /* fs_jobrt_t.seq is 32 bits */
        fs_mdl_fail(m, FS_ELIMIT, "admitting a job: more than 2^32 admissions in one run");
        return;
    }
    if (!fs_jobq_fits(job)) {           /* fs_jobq_t: 16-bit class and share */
        fs_mdl_fail(m, FS_ELIMIT, "admitting a job: job_class or gpu_milli beyond 16 bits");
        return;
    }
    if (fs_placer_learns(m->placer) && !job->mig) {  /* FGD learns the task shapes online */
        fs_podreq_t q = fs_podreq_of(job);
        if (fs_placer_observe_pod(m->placer, &m->cluster, &q,
                                  t < 0 ? NULL : m->psets.set_pool + m->psets.set_off[t],
                                  t < 0 ? 0 : m->psets.set_off[t + 1] - m->psets.set_off[t], 1)) {
            fs_mdl_fail(m, FS_ENOMEM, "admitting a job");
            return;
        }
    }
    uint32_t s = fs_slot_alloc(m);
    if (s == NO_SLOT) {
        fs_mdl_fail(m, FS_ENOMEM, "admitting a job");
        return;
    }
    fs_jobrt_t *j = &m->js.slots[s];
    memset(j, 0, sizeof *j);
    if (fs_slot_rec_set(m, s, job->flags & FS_JOB_SERVICE ? -1 : job->rec_start)) {
        fs_mdl_fail(m, FS_ENOMEM, "admitting a job");
        return;
    }
    j->job = fs_jobq_of(job);
    j->seq = (uint32_t)m->js.next_seq++;
    j->type_pools = (int16_t)t;
    j->state = FS_JOBRT_QUEUED;
    /* no run record until it starts: a job is admitted at its submission
     * (the stream is in submission order; a replica's is now), so that is
     * when it entered the queue */
    if (!fs_pset_could_ever_fit(m, j)) {
        if (is_replica(j)) {    /* the caller says why */
            if (fs_slot_free(m, s))
                fs_mdl_fail(m, FS_ENOMEM, "freeing a job slot");
            return;
        }
        m->rejected++;
        fs_row_emit(m, j, FS_STATE_REJECTED);
        if (fs_slot_free(m, s))
            fs_mdl_fail(m, FS_ENOMEM, "freeing a job slot");
        return;
    }
    fs_integ_queue_enter(m, j);
    m->svc.live += is_replica(j);
    *slot = s;
    rc = m->lim ? fs_lim_admit(m, s) : m->pol->enqueue(m->pol_state, m, s);
    if (!rc && (job->flags & FS_JOB_WITHDRAW) && !is_replica(j))
        rc = fs_wd_schedule(m, s);
    if (!rc && m->mods.queue_hooks)
        rc = fs_arr_queue_entered(m, s, 1);
    if (rc)
        fs_mdl_fail(m, rc, "queueing a job");
}

void fs_arr_take(fs_sim_t *sim, void *vm)
{
    fs_model_t *m = vm;
    const fs_job_t *job = &m->arr.batch[m->arr.batch_i++];
    m->arr.submitted++;
    m->arr.last_arrival = sim->now;
    uint32_t slot;
    fs_arr_admit(m, job, INT32_MIN, &slot);
}
