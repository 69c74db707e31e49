/*
 * A job's attempts: starting (placement, rate, phases), re-rating (node
 * speeds, shared GPUs), stopping (completion, preemption) and what an
 * attempt loses.  Prefix fs_att_ (and fs_model_start, _start_in,
 * _remaining, _preempt, _job_outlook of fs_model.h).
 */
#include "fs_model_int.h"
#include "fs_recovery.h"
#include "fs_catalog.h"
#include "fs_power.h"
#include "fs_sharing.h"
#include "fs_fabric_mod.h"

/* A job queued again asks what it asked before a shared GPU's replica
 * replaced its share (it may start next on a whole-GPU pool). */
void fs_att_unshare(fs_jobrt_t *j)
{
    if (j->r->milli_asked) {
        j->job.gpu_milli = (uint16_t)j->r->milli_asked;
        j->r->milli_asked = 0;
    }
}

static int share_rerate(fs_model_t *m, const fs_placement_t *pl, uint32_t skip);

/* The speed factor of the slowest node of a placement (synchronous jobs
 * run at the pace of their slowest member). */
static double slowest_node(const fs_model_t *m, const fs_placement_t *p)
{
    if (!m->fleet.node_speed)
        return 1.0;
    const fs_slice_t *s = fs_placement_slices(p);
    double f = 1.0;
    for (uint32_t i = 0; i < p->n; i++)
        if (m->fleet.node_speed[s[i].node] < f)
            f = m->fleet.node_speed[s[i].node];
    return f;
}

/* GPU sharing (cluster.pools[].sharing, models/fs_sharing.h): the speed
 * factor of a replica placement from the jobs on its GPU now; 1 for
 * anything else. */
static double share_speed(const fs_model_t *m, const fs_placement_t *pl)
{
    const fs_pool_t *p = &m->cluster.pools[pl->pool];
    if (!p->share_n || pl->milli >= FS_GPU_MILLI_WHOLE || pl->n != 1)
        return 1.0;
    uint32_t used = fs_cluster_slot_used(&m->cluster, p, pl->one.node, pl->gpu);
    return fs_sharing_speed(p->share_kind, p->share_n, fs_sharing_count(p->share_n, used));
}

/* A running job's rate: its base (pool, span, power cap) x its slowest
 * node x the sharing of its GPU x its fabric factor (cluster.fabric). */
double fs_att_rate(const fs_model_t *m, const fs_jobrt_t *j)
{
    double r = j->r->rate_base * slowest_node(m, &j->r->place);
    if (m->fab)
        r *= fs_fabric_slot_factor(m, (uint32_t)(j - m->js.slots));
    return m->fleet.shared ? r * share_speed(m, &j->r->place) : r;
}

/* Speed left to a job of this class by its pool's power cap
 * (cluster.pools[].power_cap_w) and thermal limit (telemetry.throttle_c at
 * the pool's ambient_c), the tighter of the two (models/fs_power.h); 1
 * without either.  The thermal limit binds from the attempt's start: the
 * minute or so a GPU takes to warm up to it is not modelled. */
static double cap_speed(const fs_model_t *m, uint32_t pool, const fs_jobq_t *job)
{
    if (pool >= m->cfg->cluster.n_pools)
        return 1.0;
    const fs_pool_cfg_t *pc = &m->cfg->cluster.pools[pool];
    double lim = fs_power_limit_w(pc->power_cap_w,
                                  fs_thermal_limit_w(m->cfg->telemetry.throttle_c, pc->ambient_c));
    if (!(lim > 0))
        return 1.0;
    int cat = m->cluster.pools[pool].catalog;   /* resolved once, at the cluster's start */
    double tdp = cat >= 0 ? fs_catalog_get((size_t)cat)->tdp_w : 0;
    return tdp > 0 ? fs_power_cap_speed(tdp, lim, fs_row_job_activity(m, job).sm,
                                        m->cfg->telemetry.cap_exponent)
                   : 1.0;
}

/* The placement's span factor (cluster.span_speed), or -1 out of memory. */
static double span_factor(const fs_model_t *m, const fs_jobrt_t *j)
{
    const fs_cluster_cfg_t *cc = &m->cfg->cluster;
    if (j->r->place.n < 2 || !fs_recov_span_row(cc, j->job.job_class))
        return 1.0;
    fs_span_t sp;
    if (fs_cluster_span(&m->cluster, &j->r->place, &sp))
        return -1.0;
    return fs_recov_span_factor(cc, j->job.job_class, &sp, m->cluster.topo != NULL);
}

/* A new attempt: restore first after a failure; the checkpoint interval
 * (compute seconds, recovery.checkpoint) turned into work at the rate it
 * starts with, so that a rate change later does not move the checkpoints
 * in the work (a training job checkpoints every N steps). */
/* The MTTF of a node of pool p, s (0: nothing fails), cached; -1 out of
 * memory. */
static double pool_mttf(fs_model_t *m, uint32_t p)
{
    if (!m->rec.pool_mttf) {
        m->rec.pool_mttf = fs_malloc(m->cluster.n_pools * sizeof *m->rec.pool_mttf);
        if (!m->rec.pool_mttf)
            return -1;
        for (uint32_t i = 0; i < m->cluster.n_pools; i++)
            m->rec.pool_mttf[i] = -1;
    }
    if (m->rec.pool_mttf[p] < 0) {
        const fs_pool_t *pp = &m->cluster.pools[p];
        m->rec.pool_mttf[p] = fs_recov_node_mttf_s(m->cfg, pp->name, pp->gpn);
    }
    return m->rec.pool_mttf[p];
}

/* startup: the attempt's pod start-up, us (0: none). */
static int attempt_begin(fs_model_t *m, fs_jobrt_t *j, fs_time_t startup)
{
    const fs_recovery_cfg_t *rc = &m->cfg->recovery;
    j->r->rem0 = j->r->remaining;
    j->r->since_ckpt = j->r->since_wall = 0;
    j->r->phase = FS_PHASE_COMPUTE;
    j->r->phase_left = 0;
    j->r->restore_after = 0;
    if (j->r->need_restore && rc->restore > 0) {
        j->r->phase = FS_PHASE_RESTORE;
        j->r->phase_left = rc->restore;
    }
    j->r->att_startup = startup;
    if (startup > 0) {      /* start-up first, then the restore */
        j->r->restore_after = j->r->phase == FS_PHASE_RESTORE ? j->r->phase_left : 0;
        j->r->phase = FS_PHASE_STARTING;
        j->r->phase_left = startup;
    }
    j->r->need_restore = 0;
    j->r->ckpt_every = 0;
    if (is_replica(j)) {    /* a replica restores nothing and never checkpoints */
        j->r->phase = startup > 0 ? FS_PHASE_STARTING : FS_PHASE_COMPUTE;
        j->r->phase_left = startup;
        j->r->restore_after = 0;
        return 0;
    }
    if (rc->checkpoint == FS_CKPT_NONE)
        return 0;
    double mttf = 0;
    if (rc->checkpoint == FS_CKPT_YOUNG || rc->checkpoint == FS_CKPT_DALY)
        mttf = pool_mttf(m, j->r->place.pool);
    if (mttf < 0)
        return FS_ENOMEM;
    double tau = fs_recov_interval_s(rc, mttf, j->r->place.n);
    if (tau > 0) {
        m->acct.ckpt_tau_min = m->acct.ckpt_taus && m->acct.ckpt_tau_min < tau ? m->acct.ckpt_tau_min
                                                                               : tau;
        m->acct.ckpt_tau_sum += tau;
        m->acct.ckpt_taus++;
        double w = tau * 1e6 * j->r->rate;
        j->r->ckpt_every = w < 1 ? 1 : w > 9e18 ? INT64_MAX / 4 : (fs_time_t)llround(w);
    }
    return 0;
}

/* A MIG pod: the first of its pools (in order) that has k free instances
 * of its profile on one node; fs_cluster_mig_take picks the node.  The
 * placer's kinds and scores do not apply (docs/mig.md). */
static int mig_place(fs_model_t *m, const uint32_t *pools, size_t n_pools, const fs_jobrt_t *j,
                     fs_placement_t *out)
{
    size_t n = pools ? n_pools : m->cluster.n_pools;
    for (size_t i = 0; i < n; i++) {
        uint32_t p = pools ? pools[i] : (uint32_t)i;
        if (fs_cluster_mig_take(&m->cluster, p, j->job.mig, j->job.gpus, out))
            return 1;
    }
    return 0;
}

int fs_model_start(fs_model_t *m, uint32_t slot)
{
    fs_jobrt_t *j = &m->js.slots[slot];
    /* the job's pools: all (NULL) or its type's set; the placer picks */
    const uint32_t *pools = j->type_pools < 0 ? NULL : m->psets.set_pool + m->psets.set_off[j->type_pools];
    size_t n_pools = j->type_pools < 0 ? 0 : m->psets.set_off[j->type_pools + 1] - m->psets.set_off[j->type_pools];
    if (m->start_pools) {   /* fs_model_start_in (a quota flavor's pools) */
        pools = m->start_pools;
        n_pools = m->start_n;
    }
    if (m->mods.gate && !m->mods.gate->pools(m->mods.gate_ud, &m->cluster, &j->job, m->sim.now, &pools, &n_pools))
        return 0;   /* cost.pools burst rules leave no pool now */
    fs_integ_settle(m, m->sim.now);
    {
        fs_podreq_t q = fs_jobq_podreq(&j->job);
        /* the first start takes the job's run record (given back if the
         * job does not fit after all) */
        int first = !j->r;
        if (first && !(j->r = fs_slot_run_take(m, j))) {
            fs_mdl_fail(m, FS_ENOMEM, "starting a job");
            return FS_ENOMEM;
        }
        int rc = j->job.mig
                     ? mig_place(m, pools, n_pools, j, &j->r->place)
                     : j->job.flags & FS_JOB_SINGLE_NODE
                     ? fs_placer_place_pod(m->placer, &m->cluster, pools, n_pools, &q, &j->r->place)
                     : fs_placer_place(m->placer, &m->cluster, pools, n_pools, j->job.gpus,
                                       j->job.gpu_milli, &j->r->place);
        if (rc <= 0 && first)
            fs_slot_run_give_back(m, j);
        if (rc < 0) {
            fs_mdl_fail(m, rc, "placing a job");
            return rc;
        }
        if (rc == 0)
            return 0;
        /* speed of the pool's GPU type for the job's class, times the
         * placement's span factor (cluster.span_speed), times the slowest
         * node's speed */
        double span = span_factor(m, j);
        if (span < 0) {
            fs_cluster_free(&m->cluster, &j->r->place);
            fs_placement_release(&j->r->place);
            fs_mdl_fail(m, FS_ENOMEM, "placing a job");
            return FS_ENOMEM;
        }
        j->r->rate_base = fs_placer_speed(m->placer, j->r->place.pool, j->job.job_class) * span;
        if (m->fleet.capped)
            j->r->rate_base *= cap_speed(m, j->r->place.pool, &j->job);
        j->r->rate = j->r->rate_base * slowest_node(m, &j->r->place);
        if (m->fleet.shared && m->cluster.pools[j->r->place.pool].share_n) {    /* one replica */
            if (!j->r->milli_asked)
                j->r->milli_asked = j->job.gpu_milli;
            j->job.gpu_milli = (uint16_t)j->r->place.milli;
            j->r->rate *= share_speed(m, &j->r->place);
        }
        if (m->fab) {       /* the network now (models/fs_fabric_mod.h) */
            double ff;
            if (fs_fabric_job_start(m, slot, &ff)) {
                fs_mdl_fail(m, FS_ENOMEM, "starting a job");
                return FS_ENOMEM;
            }
            j->r->rate *= ff;
        }
        j->state = FS_JOBRT_RUNNING;
        fs_acct_shares_open(j);
        if (j->r->first_start < 0)
            j->r->first_start = m->sim.now;
        j->r->queued_us += m->sim.now - j->r->queued_since;
        j->r->start = j->r->settled_at = m->sim.now;
        fs_time_t su = m->startup ? fs_startup_begin(m->startup, &j->r->place, j->job.job_class,
                                                      m->sim.now)
                                  : 0;
        if (su < 0 || attempt_begin(m, j, su) || (m->nodes.jobs && fs_nidx_add(m, slot)) ||
            fs_acct_run_add(m, j, slot)) {
            fs_mdl_fail(m, FS_ENOMEM, "starting a job");
            return FS_ENOMEM;
        }
        fs_integ_queue_leave(m, j);
        m->running++;
        m->last_change = m->sim.now;
        if (is_replica(j)) {    /* runs until its service retires it */
            m->svc.running++;
            fs_repl_event(m, slot, FS_REPLICA_STARTED, su);
            return m->err.code ? m->err.code : 1;
        }
        fs_time_t dt = fs_recov_finish_wall(j->r, m->cfg->recovery.write_cost);
        fs_event_t ev = {.time = m->sim.now + dt, .type = EV_JOB_END, .entity = slot,
                         .priority = FS_PRIO_COMPLETION};
        rc = fs_sim_schedule(&m->sim, &ev, &j->r->end_ev);
        if (rc) {
            fs_mdl_fail(m, rc, "scheduling a completion");
            return rc;
        }
        if (m->fleet.shared && (rc = share_rerate(m, &j->r->place, slot)))
            return rc;
        if (m->fab && (rc = fs_fabric_after_start(m, slot)))
            return rc;
        return 1;
    }
}

fs_time_t fs_model_remaining(const fs_model_t *m, uint32_t slot)
{
    const fs_jobrt_t *j = &m->js.slots[slot];
    if (j->state != FS_JOBRT_RUNNING)
        return fs_jobrt_remaining(j);
    fs_jobrun_t c = *j->r;
    fs_recov_advance(&c, m->sim.now - c.settled_at, m->cfg->recovery.write_cost);
    return c.remaining;
}

uint64_t fs_model_rerates(const fs_model_t *m) { return m->rerates; }

/* Work since the last checkpoint is lost: `lost` us of work (<= since_ckpt)
 * is redone. */
static fs_time_t lost_wall(const fs_jobrun_t *x, fs_time_t lost)
{
    return lost >= x->since_ckpt ? x->since_wall
                                 : (fs_time_t)((double)x->since_wall * (double)lost / (double)x->since_ckpt);
}

/* The work a preemption now loses: this attempt's work since the last
 * multiple of checkpoint_interval, or since the last recovery checkpoint,
 * whichever is less. */
static fs_time_t preempt_lost(const fs_model_t *m, const fs_jobrun_t *x)
{
    fs_time_t done = x->rem0 - x->remaining, ci = m->cfg->scheduler.checkpoint_interval;
    fs_time_t lost = ci > 0 ? done % ci : done;
    return lost > x->since_ckpt ? x->since_ckpt : lost;
}

void fs_att_lose_work(fs_model_t *m, fs_jobrt_t *j, fs_time_t lost)
{
    fs_time_t wall = lost_wall(j->r, lost);
    j->r->remaining += lost;
    j->r->w_lost += wall;
    double g = gpu_share(j) * fs_time_to_s(wall);
    j->r->lost_gpu_s += g;
    m->acct.lost_gpu_s += g;
    j->r->since_ckpt = j->r->since_wall = 0;
}

/* A running attempt stops at now: completion cancelled, wall and GPU-s
 * counted.  The placement is left to the caller. */
void fs_att_stop(fs_model_t *m, fs_jobrt_t *j)
{
    fs_acct_progress(m, j);
    fs_acct_shares_close(j);
    fs_sim_cancel(&m->sim, j->r->end_ev);
    j->r->end_ev = (fs_event_handle_t){0, 0};
    double ran = fs_time_to_s(m->sim.now - j->r->start);
    j->r->run_s += ran;
    j->r->held_gpu_s += gpu_share(j) * ran;
    if (j->r->ac_share >= 0) {
        m->acct.ac_held += gpu_share(j) * ran;
        fs_acct_run_sub(m, j);
    }
    m->running--;
    if (is_replica(j))
        m->svc.running--;
    if (m->fab && fs_fabric_job_stop(m, (uint32_t)(j - m->js.slots)))
        fs_mdl_fail(m, FS_ENOMEM, "re-rating the jobs on a job's links");
}

/* Gives a job's GPUs back and forgets its placement (the pool and the node
 * count stay: all its /jobs row reads).  Completion, preemption, failure,
 * withdrawal and a replica's retirement. */
void fs_att_release(fs_model_t *m, uint32_t slot)
{
    fs_jobrt_t *j = &m->js.slots[slot];
    fs_row_intervals(m, j, m->sim.now);
    fs_cluster_free(&m->cluster, &j->r->place);
    if (m->nodes.jobs)
        fs_nidx_del(m, slot);
    uint32_t pool = j->r->place.pool, n = j->r->place.n;
    fs_placement_t was = j->r->place;
    fs_placement_release(&j->r->place);
    j->r->place.pool = pool;
    j->r->place.n = n;
    if (m->fleet.shared && n == 1)    /* its GPU's neighbours speed up */
        share_rerate(m, &was, slot);
}

int fs_model_preempt(fs_model_t *m, uint32_t slot)
{
    fs_jobrt_t *j = &m->js.slots[slot];
    if (j->state != FS_JOBRT_RUNNING || m->ending == slot + 1)
        return FS_EINVAL;
    const fs_sched_cfg_t *sc = &m->cfg->scheduler;
    fs_integ_settle(m, m->sim.now);
    fs_att_stop(m, j);
    if (j->r->phase == FS_PHASE_RESTORE ||   /* a restore cut short is done again */
        (j->r->phase == FS_PHASE_STARTING && j->r->restore_after > 0))
        j->r->need_restore = 1;
    /* kept: up to the last multiple of checkpoint_interval in this attempt,
     * or the last recovery checkpoint, whichever is later */
    double lost0 = j->r->lost_gpu_s;
    fs_att_lose_work(m, j, preempt_lost(m, j->r));
    j->r->preempt_lost_gpu_s += j->r->lost_gpu_s - lost0;
    m->acct.lost_preempt_gpu_s += j->r->lost_gpu_s - lost0;
    j->r->preemptions++;
    m->preemptions++;
    fs_acct_useful_mark(j);
    j->r->remaining += sc->restart_cost;
    j->r->restarts++;
    j->state = FS_JOBRT_QUEUED;
    j->r->queued_since = m->sim.now;
    fs_att_release(m, slot);
    fs_att_unshare(j);
    fs_integ_queue_enter(m, j);
    m->last_change = m->sim.now;
    if (is_replica(j)) {
        fs_repl_event(m, slot, FS_REPLICA_STOPPED, 0);
    }
    if (m->mods.pend) {
        int rc = fs_arr_queue_entered(m, slot, 0);
        if (rc)
            fs_mdl_fail(m, rc, "queueing a preempted job");
    }
    return m->err.code;
}

int fs_model_start_in(fs_model_t *m, uint32_t slot, const uint32_t *pools, size_t n_pools)
{
    if (!pools || n_pools == 0)
        return 0;
    m->start_pools = pools;
    m->start_n = n_pools;
    int rc = fs_model_start(m, slot);
    m->start_pools = NULL;
    m->start_n = 0;
    return rc;
}

/* Settles a running job's work at now and sets a new rate: its one
 * completion event moves. */
int fs_att_rerate(fs_model_t *m, uint32_t slot, double rate)
{
    fs_jobrt_t *j = &m->js.slots[slot];
    fs_acct_progress(m, j);
    j->r->rate = rate;
    m->rerates++;
    if (is_replica(j))      /* no completion to move */
        return 0;
    fs_sim_cancel(&m->sim, j->r->end_ev);
    fs_time_t dt = fs_recov_finish_wall(j->r, m->cfg->recovery.write_cost);
    fs_event_t ev = {.time = m->sim.now + dt, .type = EV_JOB_END, .entity = slot,
                     .priority = FS_PRIO_COMPLETION};
    int rc = fs_sim_schedule(&m->sim, &ev, &j->r->end_ev);
    if (rc)
        fs_mdl_fail(m, rc, "rescheduling a completion");
    return rc;
}

/* Time-slicing: the running jobs on the GPU of replica placement pl (but
 * `skip`) take the speed its jobs give now, their work settled at the old
 * one.  In the node index's order (slot ids, insertion order): no
 * addresses.  MPS speeds do not depend on the neighbours. */
static int share_rerate(fs_model_t *m, const fs_placement_t *pl, uint32_t skip)
{
    const fs_pool_t *p = &m->cluster.pools[pl->pool];
    if (p->share_kind != FS_SHARING_TIME_SLICING || pl->milli >= FS_GPU_MILLI_WHOLE || pl->n != 1)
        return 0;
    if (fs_nidx_ensure(m)) {
        fs_mdl_fail(m, FS_ENOMEM, "sharing a GPU");
        return FS_ENOMEM;
    }
    const nodevec_t *v = &m->nodes.jobs[pl->one.node];
    for (size_t i = 0; i < v->n; i++) {
        uint32_t s = v->v[i];
        fs_jobrt_t *j = &m->js.slots[s];
        if (s == skip || j->state != FS_JOBRT_RUNNING || j->r->place.pool != pl->pool ||
            j->r->place.milli >= FS_GPU_MILLI_WHOLE || j->r->place.gpu != pl->gpu)
            continue;
        double r = fs_att_rate(m, j);
        if (r != j->r->rate) {
            int rc = fs_att_rerate(m, s, r);
            if (rc)
                return rc;
        }
    }
    return 0;
}

int fs_model_job_outlook(const fs_model_t *m, uint32_t slot, fs_time_t *end, double *lost_gpu_s)
{
    if (slot >= m->js.n_slots || m->js.slots[slot].state != FS_JOBRT_RUNNING)
        return FS_EINVAL;
    const fs_jobrt_t *j = &m->js.slots[slot];
    fs_jobrun_t c = *j->r;
    fs_recov_advance(&c, m->sim.now - c.settled_at, m->cfg->recovery.write_cost);
    *end = is_replica(j) ? INT64_MAX
                         : m->sim.now + fs_recov_finish_wall(&c, m->cfg->recovery.write_cost);
    /* as fs_model_preempt would count it (fs_att_lose_work) */
    *lost_gpu_s = gpu_share(j) * fs_time_to_s(lost_wall(&c, preempt_lost(m, &c)));
    return 0;
}

void fs_att_job_end(fs_model_t *m, uint32_t slot)
{
    fs_jobrt_t *j = &m->js.slots[slot];
    fs_integ_settle(m, m->sim.now);
    j->r->end_ev = (fs_event_handle_t){0, 0};  /* fired */
    fs_att_stop(m, j);
    j->r->remaining = 0;
    fs_att_release(m, slot);
    m->acct.useful_gpu_s += fs_acct_useful_gpu_s(j, j->job.duration);
    m->done++;
    m->last_change = m->sim.now;
    fs_att_end_callback(m, slot);
    fs_row_emit(m, j, FS_STATE_COMPLETED);
    if (fs_slot_free(m, slot))
        fs_mdl_fail(m, FS_ENOMEM, "freeing a job slot");
}
