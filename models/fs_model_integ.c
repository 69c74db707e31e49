/*
 * The model's integrals of piecewise-constant state, settled at every state
 * change (so exact): GPUs busy and up, jobs queued and in system, the
 * capacity states of #15 and the waiting split (docs/results.md); the queue
 * counts; the /timeline samples.  Prefix fs_integ_, state fs_integrals_t.
 */
#include "fs_model_int.h"

/* GPUs in service: those of up nodes, and those of drained or cordoned
 * nodes that still run a pod (out of service for placement only). */
static inline uint64_t in_service(const fs_model_t *m)
{
    return m->cluster.gpus_up + m->cluster.gpus_busy_down;
}

/* Adds dt seconds of the current state to the capacity-state integrals
 * (#15): GPUs in the fleet, out of service (total - up), and the free up
 * GPUs (up - busy) as waiting while jobs or replicas are queued, else idle.
 * Busy is int_busy.  Each state is integrated on its own, so none can go
 * below zero by rounding. */
static inline void capstates_add(const fs_model_t *m, double dt, double *total, double *down,
                                 double *waiting, double *idle, double *frag)
{
    double tot = (double)m->cluster.gpus_total, up = (double)in_service(m);
    double free_up = up - (double)m->cluster.gpus_busy;
    *total += dt * tot;
    *down += dt * (tot - up);
    if (m->queued > 0) {
        *waiting += dt * free_up;
        *frag += dt * m->integ.frag_now;     /* <= free_up: a part of it (tested on every run) */
    } else {
        *idle += dt * free_up;
    }
}

/* The free GPUs that no queued pod fits on (#15, docs/results.md "The
 * waiting split"): per pool, the up nodes with fewer free GPUs than the
 * smallest pod of a queued job that may use the pool (every free GPU of a
 * pool that no queued job may use); a MIG pool's free GPUs when no queued
 * MIG pod asks a profile of its layout.  Recomputed when a node or the
 * queue changed: O(pools x GPUs per node). */
static void frag_refresh(fs_model_t *m)
{
    if (!m->integ.frag_stale && m->integ.frag_cgen == m->cluster.gen)
        return;
    double frag = 0;
    for (uint32_t p = 0; p < m->cluster.n_pools; p++) {
        const fs_pool_t *pl = &m->cluster.pools[p];
        if (pl->mig) {
            if (!m->integ.qmig[p])
                frag += (double)(pl->gpus_up - pl->gpus_busy);
            continue;
        }
        const uint32_t *q = m->integ.qdem + m->integ.qdem_off[p];
        uint32_t dmin = 1;
        while (dmin <= pl->gpn && !q[dmin])
            dmin++;
        for (uint32_t k = 1; k < dmin && k <= pl->gpn; k++)
            frag += (double)k * pl->lvl_n[k];
    }
    m->integ.frag_now = frag;
    m->integ.frag_cgen = m->cluster.gen;
    m->integ.frag_stale = 0;
}

/* Waiting GPU-s that are not fragmented, held back by the policy: under
 * the label of its mechanism (quota for Kueue and Volcano, reserved with
 * backfill, blocked otherwise: a gang larger than what is free, or the
 * head of a strict order). */
void fs_integ_held_back_split(const fs_model_t *m, double held, double *quota, double *reserved,
                            double *blocked)
{
    *quota = m->integ.wait_label == FS_WAIT_QUOTA ? held : 0;
    *reserved = m->integ.wait_label == FS_WAIT_RESERVED ? held : 0;
    *blocked = m->integ.wait_label == FS_WAIT_BLOCKED ? held : 0;
}

/* Integrates the state since the last change up to t. */
void fs_integ_settle(fs_model_t *m, fs_time_t t)
{
    double dt = fs_time_to_s(t - m->integ.last_settle);
    if (dt > 0) {
        if (m->fleet.n_cordon)
            m->fleet.int_cordon_idle += dt * fs_fleet_cordon_free(m);
        fs_usage_settle(m->usage, &m->cluster, m->integ.last_settle, t);
        m->integ.int_busy += dt * (double)m->cluster.gpus_busy;
        m->integ.int_up += dt * (double)in_service(m);
        m->integ.int_alloc += dt * ((double)m->cluster.milli_busy / 1000.0);
        if (m->queued > 0)
            frag_refresh(m);
        capstates_add(m, dt, &m->integ.int_total, &m->integ.int_down, &m->integ.int_waiting, &m->integ.int_idle,
                      &m->integ.int_frag);
        /* jobs only: replicas are not in the job statistics */
        m->integ.int_queued += dt * (double)(m->queued - m->svc.queued);
        m->integ.int_system += dt * (double)(m->queued + m->running + m->rec.recovering - m->svc.live);
        fs_time_t lo = m->integ.last_settle > m->integ.win_lo ? m->integ.last_settle : m->integ.win_lo;
        fs_time_t hi = t < m->integ.win_hi ? t : m->integ.win_hi;
        if (hi > lo) {
            double w = fs_time_to_s(hi - lo);
            m->integ.win_busy += w * (double)m->cluster.gpus_busy;
            m->integ.win_up += w * (double)in_service(m);
        }
        m->integ.last_settle = t;
    }
}

/* A queued job's pods in the waiting split's counts (frag_refresh): +1 as
 * it enters the queue, -1 (UINT32_MAX) as it leaves. */
void fs_integ_qdem_count(fs_model_t *m, const fs_jobrt_t *j, uint32_t dlt)
{
    m->integ.frag_stale = 1;
    if (!j->job.gpus)   /* a CPU-only pod uses no GPU */
        return;
    uint32_t p;
    FOR_POOLS(m, j->type_pools, p) {
        const fs_pool_t *pl = &m->cluster.pools[p];
        if (j->job.mig || pl->mig) {
            if (j->job.mig && pl->mig && fs_mig_profile_of_code(pl->mig, j->job.mig) >= 0)
                m->integ.qmig[p] += dlt;
            continue;
        }
        /* a pod needs its GPUs on one node; a gang that may spread, one;
         * a shared pool's replica, one (more never fits there) */
        uint32_t d = pl->share_n ? (j->job.gpus == 1 ? 1 : 0)
                     : j->job.flags & FS_JOB_SINGLE_NODE ? j->job.gpus : 1;
        if (d >= 1 && d <= pl->gpn)
            m->integ.qdem[m->integ.qdem_off[p] + d] += dlt;
    }
}

void fs_integ_sample(fs_model_t *m)
{
    fs_sample_row_t r;
    memset(&r, 0, sizeof r);    /* padding too: rows are compared and copied whole */
    r.time = fs_time_to_s(m->sim.now);
    r.gpus_total = (uint32_t)m->cluster.gpus_total;
    r.gpus_up = (uint32_t)m->cluster.gpus_up;
    r.gpus_busy = (uint32_t)m->cluster.gpus_busy;
    r.jobs_running = (uint32_t)(m->running - m->svc.running);
    r.jobs_queued = (uint32_t)(m->queued - m->svc.queued);
    r.gpus_queued = m->gpus_queued;
    r.nodes_down = m->fleet.nodes_out;
    r.repair_queue = 0;
    r.nodes_provisioning = 0;
    r.nodes_autoscaled = 0;
    r.gpus_serving = 0;
    r.replicas = 0;
    r.mig_instances = r.mig_busy = r.mig_serving = 0;
    for (uint32_t p = 0; p < m->cluster.n_pools; p++) {    /* MIG pools (docs/mig.md) */
        r.mig_instances += (uint32_t)m->cluster.pools[p].mig_total;
        r.mig_busy += (uint32_t)m->cluster.pools[p].mig_busy;
    }
    {
        /* the integrals up to now without settling (settling here would
         * split the other integrals' sums and change their last bits) */
        double dt = fs_time_to_s(m->sim.now - m->integ.last_settle), total = 0;
        double busy = m->integ.int_busy + dt * (double)m->cluster.gpus_busy;
        double down = m->integ.int_down, waiting = m->integ.int_waiting, idle = m->integ.int_idle;
        double frag = m->integ.int_frag;
        if (m->queued > 0)
            frag_refresh(m);
        capstates_add(m, dt, &total, &down, &waiting, &idle, &frag);
        r.gpu_s_busy = busy - m->integ.smp_busy;
        r.gpu_s_down = down - m->integ.smp_down;
        r.gpu_s_waiting = waiting - m->integ.smp_waiting;
        r.gpu_s_idle = idle - m->integ.smp_idle;
        r.gpu_s_frag = frag - m->integ.smp_frag;
        fs_integ_held_back_split(m, r.gpu_s_waiting - r.gpu_s_frag, &r.gpu_s_quota, &r.gpu_s_reserved,
                        &r.gpu_s_blocked);
        m->integ.smp_frag = frag;
        m->integ.smp_busy = busy;
        m->integ.smp_down = down;
        m->integ.smp_waiting = waiting;
        m->integ.smp_idle = idle;
        double alloc = m->integ.int_alloc + dt * ((double)m->cluster.milli_busy / 1000.0);
        r.gpu_s_allocated = alloc - m->integ.smp_alloc;
        r.gpu_s_share_idle = r.gpu_s_busy - r.gpu_s_allocated;
        m->integ.smp_alloc = alloc;
        /* allocated = jobs' holds + serving; a hold = computing + ckpt +
         * startup + recovering (as /summary, per interval) */
        double acc[4];
        fs_acct_now(m, acc);
        r.gpu_s_held = acc[0] - m->acct.smp_held;
        r.gpu_s_computing = acc[1] - m->acct.smp_compute;
        r.gpu_s_ckpt = acc[2] - m->acct.smp_ckpt;
        r.gpu_s_startup = acc[3] - m->acct.smp_startup;
        r.gpu_s_recovering = r.gpu_s_held - r.gpu_s_computing - r.gpu_s_ckpt - r.gpu_s_startup;
        r.gpu_s_serving = r.gpu_s_allocated - r.gpu_s_held;
        m->acct.smp_held = acc[0];
        m->acct.smp_compute = acc[1];
        m->acct.smp_ckpt = acc[2];
        m->acct.smp_startup = acc[3];
    }
    for (size_t i = 0; i < m->mods.n; i++)
        if (m->mods.v[i].ops->sample)
            m->mods.v[i].ops->sample(m->mods.v[i].ud, m, &r);
    int rc = m->sink.sample ? m->sink.sample(m->sink.ud, &r) : 0;
    if (rc) {
        fs_mdl_fail_sink(m, rc, "writing a timeline sample");
        return;
    }
    m->integ.last_sample = m->sim.now;
    if (m->integ.sample_last)
        return;
    fs_time_t next = m->sim.now + m->cfg->output.timeline_interval;
    int more = m->cfg->until == FS_UNTIL_HORIZON ? next <= m->arr.horizon
                                                 : (!m->arr.src_done || m->queued + m->running + m->rec.recovering > 0);
    if (more) {
        fs_event_t ev = {.time = next, .type = EV_SAMPLE, .priority = FS_PRIO_SAMPLE};
        if (!fs_sim_schedule(&m->sim, &ev, NULL))
            m->inert.sample = 1;
    }
}

/* ---- lifecycle ------------------------------------------------------------------- */

/* The waiting split's counts (frag_refresh) and its label.  0 or FS_ENOMEM. */
int fs_integ_init(fs_model_t *m)
{
    fs_integrals_t *g = &m->integ;
    const fs_sched_cfg_t *sc = &m->cfg->scheduler;
    size_t cells = 0;
    g->qdem_off = fs_calloc(m->cluster.n_pools + 1, sizeof *g->qdem_off);
    g->qmig = fs_calloc(m->cluster.n_pools + 1, sizeof *g->qmig);
    for (uint32_t p = 0; g->qdem_off && p < m->cluster.n_pools; p++) {
        g->qdem_off[p] = (uint32_t)cells;
        cells += m->cluster.pools[p].gpn + 1;
    }
    g->qdem = fs_calloc(cells + 1, sizeof *g->qdem);
    g->frag_stale = 1;
    g->wait_label = sc->queue == FS_QUEUE_KUEUE || sc->queue == FS_QUEUE_VOLCANO ? FS_WAIT_QUOTA
                  : sc->backfill != FS_BACKFILL_NONE                            ? FS_WAIT_RESERVED
                                                                                 : FS_WAIT_BLOCKED;
    return g->qdem_off && g->qmig && g->qdem ? 0 : FS_ENOMEM;
}

void fs_integ_release(fs_model_t *m)
{
    fs_free(m->integ.qdem);
    fs_free(m->integ.qdem_off);
    fs_free(m->integ.qmig);
}
