/*
 * fs_model: the event loop of one run and the glue of the public API
 * (fs_model.h): the engine's callbacks, the modules' registry, policy
 * timers, creation, the run and its end.  The model's concerns each have a
 * file of their own (fs_model_int.h's table).
 */
#include "fs_model_int.h"
#include "fs_recovery.h"

/* ---- accessors ----------------------------------------------------------- */

fs_time_t fs_model_now(const fs_model_t *m) { return m->sim.now; }
fs_jobrt_t *fs_model_job(fs_model_t *m, uint32_t slot) { return &m->js.slots[slot]; }
size_t fs_model_slots(const fs_model_t *m) { return m->js.n_slots; }
const fs_cluster_t *fs_model_cluster(const fs_model_t *m) { return &m->cluster; }
fs_placer_t *fs_model_placer(fs_model_t *m) { return m->placer; }
const fs_config_t *fs_model_config(const fs_model_t *m) { return m->cfg; }
uint64_t fs_model_jobs_done(const fs_model_t *m) { return m->done; }
uint64_t fs_model_jobs_queued(const fs_model_t *m) { return m->queued; }

int fs_model_pods(fs_model_t *m, const uint8_t **mark)
{
    *mark = NULL;
    if (!m->pol->with_pods)
        return 0;
    if (fs_grow((void **)&m->pods, &m->pods_cap, m->js.n_slots + 1, 1))
        return FS_ENOMEM;
    memset(m->pods, 0, m->js.n_slots);
    int rc = m->pol->with_pods(m->pol_state, m, m->pods);
    if (!rc)
        *mark = m->pods;
    return rc;
}
uint64_t fs_model_jobs_running(const fs_model_t *m) { return m->running; }
uint64_t fs_model_jobs_recovering(const fs_model_t *m) { return m->rec.recovering; }
const char *fs_model_tenant_name(const fs_model_t *m, int32_t i)
{
    return i < 0 ? NULL : fs_source_tenant_name(m->src, i);
}

void fs_mdl_fail(fs_model_t *m, int code, const char *what)
{
    if (m->err.code == 0)
        fs_error_set(&m->err, code, "%s: %s", what, fs_error_describe(code));
    fs_sim_fail(&m->sim, code);
}

/* The policy's pass or timer failed with code: the policy's own message
 * when it left one (the built-in scheduler, Kueue and plugins name the job
 * and what), else where, which policy and the code's meaning. */
static void fail_policy(fs_model_t *m, int code, const char *where)
{
    if (m->err.code == 0)
        fs_error_set(&m->err, code, "%s (policy %s): %s", where,
                     m->pol->name ? m->pol->name : "unnamed", fs_error_describe(code));
    fs_sim_fail(&m->sim, code);
}

/* A sink callback failed: its own message (the writer's, with the file and
 * the real errno) when it left one in sink.err, else a generic one. */
void fs_mdl_fail_sink(fs_model_t *m, int code, const char *what)
{
    if (m->err.code == 0 && m->sink.err && m->sink.err->code == code && m->sink.err->msg[0])
        m->err = *m->sink.err;
    fs_mdl_fail(m, code, what);
}

/* ---- policy timers ------------------------------------------------------------ */

int fs_model_timer(fs_model_t *m, fs_time_t at, uint64_t data, fs_event_handle_t *h)
{
    fs_event_t ev = {.time = at, .type = EV_POLICY, .data = data, .priority = FS_PRIO_TIMER};
    return fs_sim_schedule(&m->sim, &ev, h);
}

void fs_model_cancel(fs_model_t *m, fs_event_handle_t h) { fs_sim_cancel(&m->sim, h); }
void *fs_model_policy_state(fs_model_t *m) { return m->pol_state; }
const fs_source_t *fs_model_source(const fs_model_t *m) { return m->src; }

/* ---- modules ------------------------------------------------------------------ */

int fs_model_add_module(fs_model_t *m, const fs_module_ops_t *ops, void *ud, uint32_t *id)
{
    if ((ops->gate && m->mods.gate) || (ops->after_pass && m->mods.after_pass) ||
        (ops->pending && m->mods.pend))
        return FS_EINVAL;
    if (fs_grow((void **)&m->mods.v, &m->mods.cap, m->mods.n + 1, sizeof *m->mods.v))
        return FS_ENOMEM;
    m->mods.v[m->mods.n] = (module_t){ops, ud};
    *id = (uint32_t)m->mods.n++;
    if (ops->gate) {
        m->mods.gate = ops->gate;
        m->mods.gate_ud = ud;
    }
    if (ops->after_pass)
        m->mods.after_pass = m->mods.n;
    if (ops->pending) {
        m->mods.pend = ops;
        m->mods.pend_ud = ud;
    }
    m->mods.queue_hooks = m->mods.gate || m->mods.pend;
    return 0;
}

int fs_model_module_event(fs_model_t *m, uint32_t id, fs_time_t at, int priority,
                          uint64_t data, fs_event_handle_t *h)
{
    fs_event_t ev = {.time = at, .type = EV_MODULE, .entity = id, .data = data,
                     .priority = (uint8_t)priority};
    int rc = fs_sim_schedule(&m->sim, &ev, h);
    if (!rc && priority == FS_PRIO_FAILURE)
        m->inert.failures++;
    return rc;
}

const fs_sink_t *fs_model_sink(const fs_model_t *m) { return &m->sink; }
void fs_model_after_pass_idle(fs_model_t *m, int on) { m->mods.after_pass_idle = !!on; }

void fs_model_error(fs_model_t *m, const fs_error_t *e)
{
    if (m->err.code == 0 && e && e->code)
        m->err = *e;
}

static void on_event(fs_sim_t *sim, const fs_event_t *ev, void *vm)
{
    fs_model_t *m = vm;
    if (ev->type != EV_MODULE || ev->entity >= m->mods.n || !m->mods.v[ev->entity].ops->quiet)
        m->pass_wanted = 1;
    switch (ev->type) {
    case EV_JOB_END:
        fs_att_job_end(m, ev->entity);
        break;
    case EV_SAMPLE:
        m->inert.sample = 0;
        fs_integ_sample(m);
        break;
    case EV_DRAIN_CAP:
        m->inert.cap = 0;
        if (m->queued + m->running + m->rec.recovering > 0)
            fs_drain_cannot_go_on(m, 1);
        break;
    case EV_MODULE: {
        if (ev->entity >= m->mods.n)
            FS_BUG(sim, "event of unknown module %u", ev->entity);
        if (ev->priority == FS_PRIO_FAILURE)
            m->inert.failures--;
        const module_t *mod = &m->mods.v[ev->entity];
        int rc = mod->ops->on_event(mod->ud, m, ev->data);
        if (rc)
            fs_mdl_fail(m, rc, mod->ops->name);
        break;
    }
    case EV_RECOVER:
        fs_rcv_on_event(m, ev->entity, ev->data);
        break;
    case EV_WITHDRAW:
        fs_wd_event(m, ev->entity, ev->data);
        break;
    case EV_POLICY:
        if (m->pol->timer) {
            int rc = m->pol->timer(m->pol_state, m, ev->data);
            if (rc)
                fail_policy(m, rc, "policy timer");
        }
        break;
    default:
        FS_BUG(sim, "unknown event type %u", ev->type);
    }
}

static void on_instant_end(fs_sim_t *sim, void *vm)
{
    fs_model_t *m = vm;
    int want = m->pass_wanted;
    m->pass_wanted = 0;
    if (m->queued > 0 && want) {
        int rc = m->pol->pass(m->pol_state, m);
        if (rc)
            fail_policy(m, rc, "scheduling pass");
    }
    /* after a pass that left jobs queued; with after_pass_idle also after
     * an instant that leaves nothing queued */
    if (want && m->mods.after_pass && !m->err.code && (m->queued > 0 || m->mods.after_pass_idle)) {
        const module_t *mod = &m->mods.v[m->mods.after_pass - 1];
        int rc = mod->ops->after_pass(mod->ud, m);
        if (rc)
            fs_mdl_fail(m, rc, mod->ops->name);
    }
    if (m->arr.src_done && !m->err.code) {
        if (m->cfg->until == FS_UNTIL_DRAIN) {
            /* drained: the run ends with its last job (failure processes,
             * repairs and purchases after it do not keep it going) */
            if (m->queued + m->running + m->rec.recovering == 0) {
                fs_sim_stop(sim);
                return;
            }
            if (m->running == 0 && m->rec.recovering == 0 &&
                fs_evq_size(&sim->evq) == m->inert.sample + m->inert.cap + m->inert.failures) {
                fs_drain_cannot_go_on(m, 0);
                return;
            }
        } else if (m->cfg->horizon_auto && sim->now >= m->arr.horizon) {
            fs_sim_stop(sim);   /* until: horizon at the trace's last submission */
            return;
        }
    }
    uint64_t mark = (sim->events + sim->arrivals) >> 15;
    if (m->progress && mark != m->progress_mark) {
        m->progress_mark = mark;
        m->progress->fn(m->progress->ud, m);
    }
}

static const fs_model_ops_t model_ops = {
    .on_event = on_event,
    .on_instant_end = on_instant_end,
    .source_peek = fs_arr_peek,
    .source_take = fs_arr_take,
};

/* ---- lifecycle ---------------------------------------------------------------- */

/* The parts of the model that depend on cfg alone, before the policy and
 * the modules: cluster, placer, pod start-up, the waiting split's counts,
 * the usage integrals and energy.  0 or an FS_E* error with err set (the
 * caller destroys the model). */
static int create_parts(fs_model_t *m, const fs_config_t *cfg, fs_error_t *err)
{
    int rc = fs_placer_create(&m->cluster, cfg->scheduler.placement, cfg->scheduler.candidates,
                              &cfg->cluster, cfg->seed, cfg->replication, &m->placer, err);
    if (!rc)
        fs_placer_set_scoring(m->placer, cfg->scheduler.node_score,
                              cfg->scheduler.w_gpu, cfg->scheduler.w_cpu, cfg->scheduler.w_mem);
    if (!rc)
        fs_placer_set_kube(m->placer, cfg->scheduler.pct_nodes_to_score, cfg->scheduler.w_balanced);
    if (!rc)    /* pod start-up (docs/models.md); NULL when not modelled */
        rc = fs_startup_create(cfg, &m->cluster, &m->startup, err);
    if (!rc && fs_integ_init(m))
        rc = fs_error_set(err, FS_ENOMEM, "model: out of memory");
    if (rc)
        return rc;
    rc = m->pol->create(m, &cfg->scheduler, &m->pol_state, err);
    if (rc)
        return rc;
    m->arr.batch = fs_malloc(BATCH * sizeof *m->arr.batch);
    /* cost: usage integrals, cloud burst, purchase timeline (docs/cost.md) */
    if (!m->arr.batch || fs_usage_create(&m->cluster, &m->usage) ||
        (cfg->cost.n_carbon_hours &&   /* hourly grid intensity (docs/cost.md, "Carbon") */
         fs_usage_set_intensity(m->usage, cfg->cost.carbon_hourly, cfg->cost.n_carbon_hours)))
        return fs_error_set(err, FS_ENOMEM, "model: out of memory");
    fs_usage_set_window(m->usage, m->integ.win_lo, m->integ.win_hi);  /* the window's cost */
    if (cfg->cost.energy == FS_ENERGY_POWER && fs_energy_init(m))
        return fs_error_set(err, FS_ENOMEM, "model: out of memory");
    return 0;
}

int fs_model_create(const fs_config_t *cfg, const fs_policy_ops_t *pol, fs_source_t *src,
                    const fs_sink_t *sink, fs_model_t **out, fs_error_t *err)
{
    *out = NULL;
    if (!pol)
        return fs_error_set(err, FS_EINVAL, "scheduler.queue: no policy with index %d",
                            cfg->scheduler.queue);
    int wrc = fs_policy_withdraw_check(cfg, pol, err);
    if (wrc)
        return wrc;
    fs_model_t *m = fs_calloc(1, sizeof *m);
    if (!m)
        return fs_error_set(err, FS_ENOMEM, "model: out of memory");
    m->cfg = cfg;
    m->pol = pol;
    fs_fleet_init(m);
    m->src = src;
    for (size_t i = 0; i < cfg->cluster.n_pools; i++)
        if (cfg->cluster.pools[i].taints && cfg->cluster.pools[i].taints[0])
            m->psets.tainted = 1;
    m->integ.win_lo = cfg->warmup;
    m->integ.win_hi = cfg->horizon;
    m->arr.horizon = cfg->horizon;
    m->arr.last_arrival = -1;
    if (sink)
        m->sink = *sink;
    fs_sim_init(&m->sim, &model_ops, m);
    int rc = fs_cluster_init(&m->cluster, &cfg->cluster, err);
    if (rc) {
        fs_sim_release(&m->sim);
        fs_free(m);
        return rc;
    }
    rc = create_parts(m, cfg, err);
    /* the modules (fs_modules.c): cloud burst, purchase timeline, autoscaling,
     * component failures, inference services; each registers when cfg asks */
    for (size_t i = 0; !rc && i < fs_model_n_modules; i++)
        rc = fs_model_modules[i].attach(m, err);
    if (rc) {
        fs_model_destroy(m);
        return rc;
    }
    m->integ.last_sample = -1;
    m->acct.on = cfg->output.timeline_interval > 0;
    if (cfg->output.timeline_interval > 0) {
        fs_event_t ev = {.time = 0, .type = EV_SAMPLE, .priority = FS_PRIO_SAMPLE};
        if (fs_sim_schedule(&m->sim, &ev, NULL)) {
            fs_model_destroy(m);
            return fs_error_set(err, FS_ENOMEM, "model: out of memory");
        }
        m->inert.sample = 1;
    }
    *out = m;
    return 0;
}

void fs_model_destroy(fs_model_t *m)
{
    if (!m)
        return;
    for (size_t i = m->mods.n; i-- > 0;)
        if (m->mods.v[i].ops->destroy)
            m->mods.v[i].ops->destroy(m->mods.v[i].ud);
    fs_free(m->mods.v);
    fs_fleet_release(m);
    fs_nidx_release(m);
    fs_free(m->pods);
    fs_free(m->rec.pool_mttf);
    fs_usage_destroy(m->usage);
    fs_energy_release(m);
    fs_startup_destroy(m->startup);
    if (m->pol && m->pol_state)
        m->pol->destroy(m->pol_state);
    fs_slot_release(m);
    fs_free(m->acct.cx);
    fs_integ_release(m);
    fs_free(m->arr.batch);
    fs_pset_release(m);
    fs_placer_destroy(m->placer);
    fs_cluster_release(&m->cluster);
    fs_sim_release(&m->sim);
    fs_free(m);
}

int fs_model_run(fs_model_t *m, const volatile sig_atomic_t *interrupt,
                 const fs_model_progress_t *progress, fs_error_t *err)
{
    m->sim.interrupt = interrupt;
    m->progress = progress && progress->fn ? progress : NULL;
    fs_time_t until = m->cfg->until == FS_UNTIL_HORIZON ? m->cfg->horizon : FS_TIME_NEVER;
    int rc = fs_sim_run(&m->sim, until);
    if (rc == FS_EINTR)
        return fs_error_set(err, FS_EINTR, "interrupted at simulated time %.3f s",
                            fs_time_to_s(m->sim.now));
    if (rc) {
        if (err && m->err.code)
            *err = m->err;
        else
            fs_error_set(err, rc, "run failed: %s", fs_error_describe(rc));
        return rc;
    }
    return 0;
}

int fs_model_finish(fs_model_t *m, fs_run_totals_t *t, fs_error_t *err)
{
    fs_time_t end = m->cfg->until == FS_UNTIL_HORIZON ? m->arr.horizon : m->last_change;
    if (end < m->integ.last_settle)
        end = m->integ.last_settle;
    fs_integ_settle(m, end);
    /* the closing /timeline row: the rows cover the run to its end (a
     * drained run ends between two samples), so that they add up to the
     * /summary integrals; before the modules finish and the active jobs'
     * rows are written (the row reads both) */
    if (m->cfg->output.timeline_interval > 0 && m->integ.last_sample >= 0 && m->integ.last_sample < end &&
        !m->err.code) {
        fs_time_t now = m->sim.now;
        m->sim.now = end;
        m->integ.sample_last = 1;
        fs_integ_sample(m);
        m->sim.now = now;
    }
    memset(t, 0, sizeof *t);    /* before the modules add their totals */
    for (size_t i = 0; i < m->mods.n && !m->err.code; i++)
        if (m->mods.v[i].ops->finish) {
            int rc = m->mods.v[i].ops->finish(m->mods.v[i].ud, m, t);
            if (rc)
                fs_mdl_fail(m, rc, m->mods.v[i].ops->name);
        }
    /* jobs still active: rows with what they did so far (a recovering job
     * is waiting to be requeued: QUEUED) */
    m->finishing = 1;
    m->end_at = end;
    for (size_t i = 0; i < m->js.n_slots; i++) {
        fs_jobrt_t *j = &m->js.slots[i];
        if (is_replica(j) && j->state != FS_JOBRT_FREE) {  /* their holds end at the end */
            if (j->state == FS_JOBRT_RUNNING || (j->state == FS_JOBRT_RECOVERING && j->r->holding))
                fs_row_intervals(m, j, end);
            if (m->err.code)
                break;
            continue;
        }
        if (j->state == FS_JOBRT_RUNNING) {
            fs_recov_advance(j->r, end - j->r->settled_at, m->cfg->recovery.write_cost);
            j->r->settled_at = end;
            double ran = fs_time_to_s(end - j->r->start);
            j->r->run_s += ran;
            j->r->held_gpu_s += gpu_share(j) * ran;
            fs_time_t kept = j->job.duration - j->r->remaining;
            m->acct.useful_gpu_s += fs_acct_useful_gpu_s(j, kept);
            fs_row_intervals(m, j, end);
            if (m->err.code || fs_row_emit(m, j, FS_STATE_RUNNING))
                break;
        } else if (j->state == FS_JOBRT_QUEUED) {
            if (fs_row_emit(m, j, FS_STATE_QUEUED))
                break;
        } else if (j->state == FS_JOBRT_RECOVERING) {
            if (j->r->holding)
                fs_row_intervals(m, j, end);
            fs_acct_hold_until(m, j, end);
            j->r->w_recovery += end - j->r->start;
            if (fs_row_emit(m, j, FS_STATE_QUEUED))
                break;
        }
    }
    if (m->err.code) {
        if (err)
            *err = m->err;
        return m->err.code;
    }
    if (m->pol->stats) {
        fs_policy_stats_t ps = {0};
        m->pol->stats(m->pol_state, &ps);
        t->backfilled = ps.backfilled;
        t->admissions = ps.admissions;
        t->admissions_borrowing = ps.admissions_borrowing;
        t->reclaims = ps.reclaims;
    }
    t->end_time = fs_time_to_s(end);
    t->makespan = fs_time_to_s(m->last_change);
    t->gpus_total = m->cluster.gpus_total;
    t->gpu_s_capacity = m->integ.int_up;
    t->gpu_s_busy = m->integ.int_busy;
    t->gpu_s_useful = m->acct.useful_gpu_s;
    t->window_start = fs_time_to_s(m->integ.win_lo);
    t->window_end = fs_time_to_s(end < m->integ.win_hi ? end : m->integ.win_hi);
    t->gpu_s_capacity_window = m->integ.win_up;
    t->gpu_s_busy_window = m->integ.win_busy;
    t->jobs_queued_integral = m->integ.int_queued;
    t->jobs_system_integral = m->integ.int_system;
    t->jobs_submitted = m->arr.submitted;
    t->events = m->sim.events + m->sim.arrivals;
    t->passes = m->sim.passes;
    t->rows_skipped = fs_source_skipped(m->src);
    t->interruptions = m->rec.interruptions;
    t->gpu_s_lost = m->acct.lost_gpu_s;
    t->gpu_s_ckpt = m->acct.ckpt_gpu_s;
    t->ckpt_interval_mean = m->acct.ckpt_taus ? m->acct.ckpt_tau_sum / (double)m->acct.ckpt_taus : NAN;
    t->ckpt_interval_min = m->acct.ckpt_taus ? m->acct.ckpt_tau_min : NAN;
    t->preemptions = m->preemptions;
    t->gpu_s_lost_preempt = m->acct.lost_preempt_gpu_s;
    t->gpu_s_startup = m->acct.startup_gpu_s;
    t->gpu_s_total = m->integ.int_total;
    t->gpu_s_down = m->integ.int_down;
    t->gpu_s_waiting = m->integ.int_waiting;
    t->gpu_s_idle = m->integ.int_idle;
    /* busy = allocated + share_idle; allocated = jobs' holds + serving;
     * a job's hold = computing + ckpt + startup + recovering (restore and
     * the holds while a failure is detected) */
    t->gpu_s_allocated = m->integ.int_alloc;
    t->gpu_s_share_idle = m->integ.int_busy - m->integ.int_alloc;
    t->gpu_s_held = m->acct.job_held_gpu_s;
    t->gpu_s_serving = m->integ.int_alloc - m->acct.job_held_gpu_s;
    t->gpu_s_computing = m->acct.job_compute_gpu_s;
    t->gpu_s_redo = m->acct.job_lost_gpu_s;
    t->gpu_s_recovering = m->acct.job_held_gpu_s - m->acct.job_compute_gpu_s - m->acct.ckpt_gpu_s - m->acct.startup_gpu_s;
    t->gpu_s_held_idle = m->acct.job_idle_gpu_s;
    t->gpu_s_frag = m->integ.int_frag;
    fs_integ_held_back_split(m, m->integ.int_waiting - m->integ.int_frag, &t->gpu_s_quota, &t->gpu_s_reserved,
                    &t->gpu_s_blocked);
    return 0;
}

int fs_model_truncated(const fs_model_t *m) { return m->arr.truncated; }
fs_time_t fs_model_horizon(const fs_model_t *m) { return m->arr.horizon; }
fs_usage_t *fs_model_usage(fs_model_t *m) { return m->usage; }
