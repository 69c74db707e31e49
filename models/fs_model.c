#include "fs_model.h"
#include "fs_place.h"
#include "fs_policy.h"
#include "../sim/fs_alloc.h"
#include "../traces/fs_fleet.h"

#include <math.h>
#include <strings.h>
#include <string.h>

#define BATCH 4096
#define NO_SLOT UINT32_MAX

enum { EV_JOB_END = 1, EV_SAMPLE = 2, EV_POLICY = 3, EV_MODULE = 4 };

typedef struct module {
    const fs_module_ops_t *ops;
    void *ud;
} module_t;

struct fs_model {
    const fs_config_t *cfg;
    fs_sim_t sim;
    fs_cluster_t cluster;
    fs_placer_t *placer;    /* scheduler.placement (models/fs_place.h) */
    fs_source_t *src;
    fs_sink_t sink;
    const fs_policy_ops_t *pol;
    void *pol_state;

    /* the arrival stream, one batch at a time */
    fs_job_t *batch;
    size_t batch_n, batch_i;
    int src_done;
    int truncated;          /* the trace went on past the horizon */

    /* active jobs */
    fs_jobrt_t *slots;
    size_t n_slots, cap_slots;
    uint32_t *free_slots;
    size_t n_free, cap_free;
    uint64_t next_seq;

    /* pool sets: source GPU type t -> pools set_pool[set_off[t] .. set_off[t+1]) */
    uint32_t *set_pool;
    size_t set_pool_n, set_pool_cap;
    size_t *set_off;        /* n_sets + 1 entries */
    size_t n_sets, set_off_cap;

    /* counters and exact integrals of piecewise-constant state */
    uint64_t queued, running, done, submitted, rejected;
    uint64_t gpus_queued;   /* GPUs requested by queued jobs */
    fs_time_t last_settle;
    fs_time_t last_change;
    double int_busy, int_up, int_queued, int_system;   /* x-seconds */
    double win_busy, win_up;        /* the same over the measurement window */
    fs_time_t win_lo, win_hi;       /* [warmup, horizon] */
    double useful_gpu_s;
    uint64_t progress_mark;
    const fs_model_progress_t *progress;

    /* the fleet: reasons each node is out of service, speed factors */
    uint32_t *node_holds;   /* NULL until a node first goes down */
    double *node_speed;     /* NULL: every node at 1.0 */

    module_t *modules;
    size_t n_modules, cap_modules;

    fs_error_t err;
};

/* ---- accessors ----------------------------------------------------------- */

fs_time_t fs_model_now(const fs_model_t *m) { return m->sim.now; }
fs_jobrt_t *fs_model_job(fs_model_t *m, uint32_t slot) { return &m->slots[slot]; }
const fs_cluster_t *fs_model_cluster(const fs_model_t *m) { return &m->cluster; }
const fs_config_t *fs_model_config(const fs_model_t *m) { return m->cfg; }
uint64_t fs_model_jobs_done(const fs_model_t *m) { return m->done; }
uint64_t fs_model_jobs_queued(const fs_model_t *m) { return m->queued; }
uint64_t fs_model_jobs_running(const fs_model_t *m) { return m->running; }
const fs_sim_t *fs_model_sim(const fs_model_t *m) { return &m->sim; }

static void fail(fs_model_t *m, int code, const char *what)
{
    if (m->err.code == 0)
        fs_error_set(&m->err, code, "%s: %s", what, fs_error_describe(code));
    fs_sim_fail(&m->sim, code);
}

/* Integrates the state since the last change up to t. */
static void settle(fs_model_t *m, fs_time_t t)
{
    double dt = fs_time_to_s(t - m->last_settle);
    if (dt > 0) {
        m->int_busy += dt * (double)m->cluster.gpus_busy;
        m->int_up += dt * (double)m->cluster.gpus_up;
        m->int_queued += dt * (double)m->queued;
        m->int_system += dt * (double)(m->queued + m->running);
        fs_time_t lo = m->last_settle > m->win_lo ? m->last_settle : m->win_lo;
        fs_time_t hi = t < m->win_hi ? t : m->win_hi;
        if (hi > lo) {
            double w = fs_time_to_s(hi - lo);
            m->win_busy += w * (double)m->cluster.gpus_busy;
            m->win_up += w * (double)m->cluster.gpus_up;
        }
        m->last_settle = t;
    }
}

/* ---- pool sets ---------------------------------------------------------- */

/* Makes sure source GPU type t has its pool set (built from the type's name
 * the first time it is seen).  Returns 0 or FS_ENOMEM. */
static int ensure_set(fs_model_t *m, int32_t t)
{
    while (m->n_sets <= (size_t)t) {
        const char *name = fs_source_gpu_type_name(m->src, (int32_t)m->n_sets);
        if (fs_grow((void **)&m->set_off, &m->set_off_cap, m->n_sets + 2, sizeof *m->set_off))
            return FS_ENOMEM;
        if (m->n_sets == 0)
            m->set_off[0] = 0;
        for (uint32_t p = 0; name && p < m->cluster.n_pools; p++) {
            /* the pool's GPU model or name, or one of 'A|B|C' (openb gpu_spec);
             * "V100M32" also names machine-list pools "V100M32x8" */
            if (!fs_fleet_type_allows(name, m->cluster.pools[p].name, m->cluster.pools[p].gpu))
                continue;
            if (fs_grow((void **)&m->set_pool, &m->set_pool_cap, m->set_pool_n + 1,
                        sizeof *m->set_pool))
                return FS_ENOMEM;
            m->set_pool[m->set_pool_n++] = p;
        }
        m->set_off[++m->n_sets] = m->set_pool_n;
    }
    return 0;
}

/* Iterates the pools a job may use: any pool (set < 0) or its set. */
#define FOR_POOLS(m, set, p)                                                        \
    for (size_t i_ = (set) < 0 ? 0 : (m)->set_off[(set)],                           \
                e_ = (set) < 0 ? (m)->cluster.n_pools : (m)->set_off[(set) + 1];    \
         i_ < e_ && ((p) = (set) < 0 ? (uint32_t)i_ : (m)->set_pool[i_], 1); i_++)

int fs_model_fits(const fs_model_t *m, uint32_t slot)
{
    const fs_jobrt_t *j = &m->slots[slot];
    uint32_t p;
    FOR_POOLS(m, j->type_pools, p)
        if (fs_cluster_fits_req(&m->cluster, p, j->job.gpus, j->job.gpu_milli))
            return 1;
    return 0;
}

static int could_ever_fit(const fs_model_t *m, const fs_jobrt_t *j)
{
    uint32_t p;
    FOR_POOLS(m, j->type_pools, p)
        if (fs_cluster_could_fit(&m->cluster, p, j->job.gpus))
            return 1;
    return 0;
}

/* ---- rows ------------------------------------------------------------------ */

static int emit(fs_model_t *m, const fs_jobrt_t *j, int state)
{
    fs_job_row_t r;
    r.id = j->job.id;
    r.tenant = j->job.tenant;
    r.pool = j->first_start >= 0 ? (int32_t)j->place.pool : -1;
    r.gpus = j->job.gpus;
    r.gpu_milli = j->job.gpu_milli;
    r.nodes = j->first_start >= 0 ? j->place.n : 0;
    r.restarts = j->restarts;
    r.submit = fs_time_to_s(j->job.submit);
    r.start = j->first_start >= 0 ? fs_time_to_s(j->first_start) : NAN;
    r.end = (state == FS_STATE_COMPLETED || state == FS_STATE_FAILED) ? fs_time_to_s(m->sim.now) : NAN;
    r.wait = j->first_start >= 0 ? fs_time_to_s(j->first_start - j->job.submit) : NAN;
    r.run = j->run_s;
    r.lost_gpu_s = j->lost_gpu_s;
    r.state = state;
    int rc = m->sink.job ? m->sink.job(m->sink.ud, &r) : 0;
    if (rc)
        fail(m, rc, "writing a job row");
    return rc;
}

/* ---- slots ------------------------------------------------------------------- */

static uint32_t slot_alloc(fs_model_t *m)
{
    if (m->n_free)
        return m->free_slots[--m->n_free];
    if (m->n_slots >= NO_SLOT - 1 ||
        fs_grow((void **)&m->slots, &m->cap_slots, m->n_slots + 1, sizeof *m->slots))
        return NO_SLOT;
    return (uint32_t)m->n_slots++;
}

static int slot_free(fs_model_t *m, uint32_t s)
{
    m->slots[s].state = FS_JOBRT_FREE;
    if (fs_grow((void **)&m->free_slots, &m->cap_free, m->n_free + 1, sizeof *m->free_slots))
        return FS_ENOMEM;
    m->free_slots[m->n_free++] = s;
    return 0;
}

/* ---- starting and ending jobs ------------------------------------------------ */

/* The speed factor of the slowest node of a placement (synchronous jobs
 * run at the pace of their slowest member). */
static double slowest_node(const fs_model_t *m, const fs_placement_t *p)
{
    if (!m->node_speed)
        return 1.0;
    const fs_slice_t *s = fs_placement_slices(p);
    double f = 1.0;
    for (uint32_t i = 0; i < p->n; i++)
        if (m->node_speed[s[i].node] < f)
            f = m->node_speed[s[i].node];
    return f;
}

static int on_node(const fs_jobrt_t *j, uint32_t node)
{
    const fs_slice_t *s = fs_placement_slices(&j->place);
    for (uint32_t i = 0; i < j->place.n; i++)
        if (s[i].node == node)
            return 1;
    return 0;
}

int fs_model_start(fs_model_t *m, uint32_t slot)
{
    fs_jobrt_t *j = &m->slots[slot];
    /* the job's pools: all (NULL) or its type's set; the placer picks */
    const uint32_t *pools = j->type_pools < 0 ? NULL : m->set_pool + m->set_off[j->type_pools];
    size_t n_pools = j->type_pools < 0 ? 0 : m->set_off[j->type_pools + 1] - m->set_off[j->type_pools];
    settle(m, m->sim.now);
    {
        int rc = fs_placer_place(m->placer, &m->cluster, pools, n_pools, j->job.gpus,
                                 j->job.gpu_milli, &j->place);
        if (rc < 0) {
            fail(m, rc, "placing a job");
            return rc;
        }
        if (rc == 0)
            return 0;
        /* speed of the pool's GPU type for the job's class; placement-
         * dependent slowdowns (issue 5) multiply in here, from
         * fs_cluster_span(&m->cluster, &j->place, ...) */
        j->rate = fs_placer_speed(m->placer, j->place.pool, j->job.job_class) *
                  slowest_node(m, &j->place);
        j->state = FS_JOBRT_RUNNING;
        if (j->first_start < 0)
            j->first_start = m->sim.now;
        j->start = j->settled_at = m->sim.now;
        m->queued--;
        m->gpus_queued -= j->job.gpus;
        m->running++;
        m->last_change = m->sim.now;
        fs_time_t dt = (fs_time_t)ceil((double)j->remaining / j->rate);
        fs_event_t ev = {.time = m->sim.now + dt, .type = EV_JOB_END, .entity = slot,
                         .priority = FS_PRIO_COMPLETION};
        rc = fs_sim_schedule(&m->sim, &ev, &j->end_ev);
        if (rc) {
            fail(m, rc, "scheduling a completion");
            return rc;
        }
        return 1;
    }
}

fs_time_t fs_model_remaining(const fs_model_t *m, uint32_t slot)
{
    const fs_jobrt_t *j = &m->slots[slot];
    if (j->state != FS_JOBRT_RUNNING)
        return j->remaining;
    fs_time_t done = (fs_time_t)((double)(m->sim.now - j->settled_at) * j->rate);
    return done >= j->remaining ? 0 : j->remaining - done;
}

int fs_model_preempt(fs_model_t *m, uint32_t slot)
{
    fs_jobrt_t *j = &m->slots[slot];
    if (j->state != FS_JOBRT_RUNNING)
        return FS_EINVAL;
    const fs_sched_cfg_t *sc = &m->cfg->scheduler;
    settle(m, m->sim.now);
    fs_sim_cancel(&m->sim, j->end_ev);
    j->end_ev = (fs_event_handle_t){0, 0};
    fs_cluster_free(&m->cluster, &j->place);
    fs_time_t left = fs_model_remaining(m, slot);
    /* work done in this attempt (settled_at is the attempt's start until
     * rates change mid-run) */
    fs_time_t done = j->remaining - left;
    fs_time_t kept = sc->checkpoint_interval > 0 ? done / sc->checkpoint_interval * sc->checkpoint_interval : 0;
    fs_time_t lost = done - kept;
    j->remaining = left + lost + sc->restart_cost;
    j->settled_at = m->sim.now;
    j->lost_gpu_s += (double)j->job.gpus * j->job.gpu_milli / 1000.0 * fs_time_to_s(lost);
    j->run_s += fs_time_to_s(m->sim.now - j->start);
    j->restarts++;
    j->state = FS_JOBRT_QUEUED;
    uint32_t pool = j->place.pool;
    fs_placement_release(&j->place);
    j->place.pool = pool;
    m->running--;
    m->queued++;
    m->gpus_queued += j->job.gpus;
    m->last_change = m->sim.now;
    return 0;
}

int fs_model_timer(fs_model_t *m, fs_time_t at, uint64_t data, fs_event_handle_t *h)
{
    fs_event_t ev = {.time = at, .type = EV_POLICY, .data = data, .priority = FS_PRIO_TIMER};
    return fs_sim_schedule(&m->sim, &ev, h);
}

void fs_model_cancel(fs_model_t *m, fs_event_handle_t h) { fs_sim_cancel(&m->sim, h); }
void *fs_model_policy_state(fs_model_t *m) { return m->pol_state; }

/* ---- the fleet ------------------------------------------------------------------ */

/* Settles a running job's work at now and sets a new rate: its one
 * completion event moves. */
static int rerate(fs_model_t *m, uint32_t slot, double rate)
{
    fs_jobrt_t *j = &m->slots[slot];
    fs_time_t left = fs_model_remaining(m, slot);
    j->remaining = left;
    j->settled_at = m->sim.now;
    j->rate = rate;
    fs_sim_cancel(&m->sim, j->end_ev);
    fs_time_t dt = (fs_time_t)ceil((double)left / rate);
    fs_event_t ev = {.time = m->sim.now + dt, .type = EV_JOB_END, .entity = slot,
                     .priority = FS_PRIO_COMPLETION};
    int rc = fs_sim_schedule(&m->sim, &ev, &j->end_ev);
    if (rc)
        fail(m, rc, "rescheduling a completion");
    return rc;
}

/* A running job loses its node: the policy forgets it as running, the
 * mechanics of fs_model_preempt apply, and it queues again. */
static int interrupt_job(fs_model_t *m, uint32_t slot)
{
    if (m->pol->job_interrupted)
        m->pol->job_interrupted(m->pol_state, m, slot);
    else if (m->pol->job_end)
        m->pol->job_end(m->pol_state, m, slot);
    int rc = fs_model_preempt(m, slot);
    if (!rc)
        rc = m->pol->enqueue(m->pol_state, m, slot);
    if (rc)
        fail(m, rc, "interrupting a job");
    return rc;
}

int fs_model_node_down(fs_model_t *m, uint32_t node, int how, uint32_t *jobs_hit)
{
    if (jobs_hit)
        *jobs_hit = 0;
    if (node >= m->cluster.n_nodes)
        return FS_EINVAL;
    if (!m->node_holds) {
        m->node_holds = fs_calloc(m->cluster.n_nodes, sizeof *m->node_holds);
        if (!m->node_holds) {
            fail(m, FS_ENOMEM, "taking a node out of service");
            return FS_ENOMEM;
        }
    }
    settle(m, m->sim.now);
    m->last_change = m->sim.now;
    if (m->node_holds[node]++ == 0)
        fs_cluster_set_up(&m->cluster, node, 0);
    if (how != FS_DOWN_FAIL)
        return 0;
    uint32_t hit = 0;
    for (size_t i = 0; i < m->n_slots; i++) {
        if (m->slots[i].state != FS_JOBRT_RUNNING || !on_node(&m->slots[i], node))
            continue;
        int rc = interrupt_job(m, (uint32_t)i);
        if (rc)
            return rc;
        hit++;
    }
    if (jobs_hit)
        *jobs_hit = hit;
    return 0;
}

int fs_model_node_up(fs_model_t *m, uint32_t node)
{
    if (node >= m->cluster.n_nodes || !m->node_holds || m->node_holds[node] == 0)
        return FS_EINVAL;
    settle(m, m->sim.now);
    m->last_change = m->sim.now;
    if (--m->node_holds[node] == 0)
        fs_cluster_set_up(&m->cluster, node, 1);
    return 0;
}

int fs_model_node_in_service(const fs_model_t *m, uint32_t node)
{
    return node < m->cluster.n_nodes && (!m->node_holds || m->node_holds[node] == 0);
}

uint32_t fs_model_node_jobs(const fs_model_t *m, uint32_t node)
{
    uint32_t n = 0;
    for (size_t i = 0; i < m->n_slots; i++)
        if (m->slots[i].state == FS_JOBRT_RUNNING && on_node(&m->slots[i], node))
            n++;
    return n;
}

int fs_model_node_speed(fs_model_t *m, uint32_t node, double factor)
{
    if (node >= m->cluster.n_nodes || !(factor > 0))
        return FS_EINVAL;
    if (!m->node_speed) {
        if (factor == 1.0)
            return 0;
        m->node_speed = fs_malloc(m->cluster.n_nodes * sizeof *m->node_speed);
        if (!m->node_speed) {
            fail(m, FS_ENOMEM, "setting a node's speed");
            return FS_ENOMEM;
        }
        for (uint32_t i = 0; i < m->cluster.n_nodes; i++)
            m->node_speed[i] = 1.0;
    }
    m->node_speed[node] = factor;
    for (size_t i = 0; i < m->n_slots; i++) {
        fs_jobrt_t *j = &m->slots[i];
        if (j->state != FS_JOBRT_RUNNING || !on_node(j, node))
            continue;
        double r = fs_placer_speed(m->placer, j->place.pool, j->job.job_class) *
                   slowest_node(m, &j->place);
        if (r != j->rate) {
            int rc = rerate(m, (uint32_t)i, r);
            if (rc)
                return rc;
        }
    }
    return 0;
}

/* ---- modules ------------------------------------------------------------------ */

int fs_model_add_module(fs_model_t *m, const fs_module_ops_t *ops, void *ud, uint32_t *id)
{
    if (fs_grow((void **)&m->modules, &m->cap_modules, m->n_modules + 1, sizeof *m->modules))
        return FS_ENOMEM;
    m->modules[m->n_modules] = (module_t){ops, ud};
    *id = (uint32_t)m->n_modules++;
    return 0;
}

int fs_model_module_event(fs_model_t *m, uint32_t id, fs_time_t at, int priority,
                          uint64_t data, fs_event_handle_t *h)
{
    fs_event_t ev = {.time = at, .type = EV_MODULE, .entity = id, .data = data,
                     .priority = (uint8_t)priority};
    return fs_sim_schedule(&m->sim, &ev, h);
}

const fs_sink_t *fs_model_sink(const fs_model_t *m) { return &m->sink; }

static void job_end(fs_model_t *m, uint32_t slot)
{
    fs_jobrt_t *j = &m->slots[slot];
    settle(m, m->sim.now);
    fs_cluster_free(&m->cluster, &j->place);
    j->run_s += fs_time_to_s(m->sim.now - j->start);
    m->useful_gpu_s += (double)j->job.gpus * j->job.gpu_milli / 1000.0 * fs_time_to_s(j->job.duration);
    m->running--;
    m->done++;
    m->last_change = m->sim.now;
    if (m->pol->job_end)
        m->pol->job_end(m->pol_state, m, slot);
    emit(m, j, FS_STATE_COMPLETED);
    fs_placement_release(&j->place);
    if (slot_free(m, slot))
        fail(m, FS_ENOMEM, "freeing a job slot");
}

/* ---- the arrival stream -------------------------------------------------------- */

static fs_time_t src_peek(void *vm)
{
    fs_model_t *m = vm;
    if (m->batch_i < m->batch_n)
        return m->batch[m->batch_i].submit;
    if (m->src_done)
        return FS_TIME_NEVER;
    m->batch_i = m->batch_n = 0;
    int rc = fs_source_next(m->src, m->batch, BATCH, &m->batch_n, &m->err);
    if (rc) {
        m->src_done = 1;
        fs_sim_fail(&m->sim, rc);
        return FS_TIME_NEVER;
    }
    if (m->batch_n == 0) {
        m->src_done = 1;
        return FS_TIME_NEVER;
    }
    /* arrivals at or after the horizon are not replayed; the stream is
     * sorted, so nothing after them is either */
    if (m->batch[0].submit >= m->cfg->horizon) {
        m->truncated = 1;
        m->src_done = 1;
        m->batch_n = 0;
        return FS_TIME_NEVER;
    }
    for (size_t i = 1; i < m->batch_n; i++)
        if (m->batch[i].submit >= m->cfg->horizon) {
            m->truncated = 1;
            m->batch_n = i;
            break;
        }
    if (m->batch[0].submit < m->sim.now) {
        fs_error_set(&m->err, FS_EINVAL, "workload '%s': job %llu submitted at %.6f s, before "
                     "the previous job (the stream must be sorted by submission time)",
                     m->src->ops->name, (unsigned long long)m->batch[0].id,
                     fs_time_to_s(m->batch[0].submit));
        m->src_done = 1;
        fs_sim_fail(&m->sim, FS_EINVAL);
        return FS_TIME_NEVER;
    }
    return m->batch[0].submit;
}

static void src_take(fs_sim_t *sim, void *vm)
{
    fs_model_t *m = vm;
    const fs_job_t *job = &m->batch[m->batch_i++];
    settle(m, sim->now);
    m->submitted++;
    m->last_change = sim->now;
    if (job->gpu_type >= 0 && ensure_set(m, job->gpu_type)) {
        fail(m, FS_ENOMEM, "admitting a job");
        return;
    }
    if (fs_placer_learns(m->placer)) {  /* FGD learns the task shapes online */
        int32_t t = job->gpu_type;
        if (fs_placer_observe(m->placer, &m->cluster, job->gpus, job->gpu_milli,
                              t < 0 ? NULL : m->set_pool + m->set_off[t],
                              t < 0 ? 0 : m->set_off[t + 1] - m->set_off[t], 1)) {
            fail(m, FS_ENOMEM, "admitting a job");
            return;
        }
    }
    uint32_t s = slot_alloc(m);
    if (s == NO_SLOT) {
        fail(m, FS_ENOMEM, "admitting a job");
        return;
    }
    fs_jobrt_t *j = &m->slots[s];
    memset(j, 0, sizeof *j);
    j->job = *job;
    j->seq = m->next_seq++;
    j->first_start = -1;
    j->start = -1;
    j->remaining = job->duration;
    j->rate = 1.0;
    j->type_pools = job->gpu_type;
    j->state = FS_JOBRT_QUEUED;
    if (!could_ever_fit(m, j)) {
        m->rejected++;
        emit(m, j, FS_STATE_REJECTED);
        if (slot_free(m, s))
            fail(m, FS_ENOMEM, "freeing a job slot");
        return;
    }
    m->queued++;
    m->gpus_queued += j->job.gpus;
    int rc = m->pol->enqueue(m->pol_state, m, s);
    if (rc)
        fail(m, rc, "queueing a job");
}

/* ---- events ------------------------------------------------------------------- */

static void sample(fs_model_t *m)
{
    fs_sample_row_t r;
    r.time = fs_time_to_s(m->sim.now);
    r.gpus_total = (uint32_t)m->cluster.gpus_total;
    r.gpus_up = (uint32_t)m->cluster.gpus_up;
    r.gpus_busy = (uint32_t)m->cluster.gpus_busy;
    r.jobs_running = (uint32_t)m->running;
    r.jobs_queued = (uint32_t)m->queued;
    r.gpus_queued = m->gpus_queued;
    int rc = m->sink.sample ? m->sink.sample(m->sink.ud, &r) : 0;
    if (rc) {
        fail(m, rc, "writing a timeline sample");
        return;
    }
    fs_time_t next = m->sim.now + m->cfg->output.timeline_interval;
    int more = m->cfg->until == FS_UNTIL_HORIZON ? next <= m->cfg->horizon
                                                 : (!m->src_done || m->queued + m->running > 0);
    if (more) {
        fs_event_t ev = {.time = next, .type = EV_SAMPLE, .priority = FS_PRIO_SAMPLE};
        fs_sim_schedule(&m->sim, &ev, NULL);
    }
}

static void on_event(fs_sim_t *sim, const fs_event_t *ev, void *vm)
{
    fs_model_t *m = vm;
    switch (ev->type) {
    case EV_JOB_END:
        job_end(m, ev->entity);
        break;
    case EV_SAMPLE:
        sample(m);
        break;
    case EV_MODULE: {
        if (ev->entity >= m->n_modules)
            FS_BUG(sim, "event of unknown module %u", ev->entity);
        const module_t *mod = &m->modules[ev->entity];
        int rc = mod->ops->on_event(mod->ud, m, ev->data);
        if (rc)
            fail(m, rc, mod->ops->name);
        break;
    }
    case EV_POLICY:
        if (m->pol->timer) {
            int rc = m->pol->timer(m->pol_state, m, ev->data);
            if (rc)
                fail(m, rc, "policy timer");
        }
        break;
    default:
        FS_BUG(sim, "unknown event type %u", ev->type);
    }
}

static void on_instant_end(fs_sim_t *sim, void *vm)
{
    fs_model_t *m = vm;
    if (m->queued > 0) {
        int rc = m->pol->pass(m->pol_state, m);
        if (rc)
            fail(m, rc, "scheduling pass");
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
    .source_peek = src_peek,
    .source_take = src_take,
};

/* ---- lifecycle ---------------------------------------------------------------- */

int fs_model_create(const fs_config_t *cfg, fs_source_t *src, const fs_sink_t *sink,
                    fs_model_t **out, fs_error_t *err)
{
    *out = NULL;
    fs_model_t *m = fs_calloc(1, sizeof *m);
    if (!m)
        return fs_error_set(err, FS_ENOMEM, "model: out of memory");
    m->cfg = cfg;
    m->src = src;
    m->win_lo = cfg->warmup;
    m->win_hi = cfg->horizon;
    if (sink)
        m->sink = *sink;
    fs_sim_init(&m->sim, &model_ops, m);
    int rc = fs_cluster_init(&m->cluster, &cfg->cluster, err);
    if (rc) {
        fs_sim_release(&m->sim);
        fs_free(m);
        return rc;
    }
    rc = fs_placer_create(&m->cluster, cfg->scheduler.placement, cfg->scheduler.candidates,
                          &cfg->cluster, cfg->seed, cfg->replication, &m->placer, err);
    if (rc) {
        fs_model_destroy(m);
        return rc;
    }
    m->pol = fs_policy_select(&cfg->scheduler);
    if (!m->pol) {
        fs_model_destroy(m);
        return fs_error_set(err, FS_EINVAL, "scheduler.queue: no policy with index %d",
                            cfg->scheduler.queue);
    }
    rc = m->pol->create(m, &cfg->scheduler, &m->pol_state, err);
    if (rc) {
        fs_model_destroy(m);
        return rc;
    }
    m->batch = fs_malloc(BATCH * sizeof *m->batch);
    if (!m->batch) {
        fs_model_destroy(m);
        return fs_error_set(err, FS_ENOMEM, "model: out of memory");
    }
    if (cfg->output.timeline_interval > 0) {
        fs_event_t ev = {.time = 0, .type = EV_SAMPLE, .priority = FS_PRIO_SAMPLE};
        if (fs_sim_schedule(&m->sim, &ev, NULL)) {
            fs_model_destroy(m);
            return fs_error_set(err, FS_ENOMEM, "model: out of memory");
        }
    }
    *out = m;
    return 0;
}

void fs_model_destroy(fs_model_t *m)
{
    if (!m)
        return;
    for (size_t i = m->n_modules; i-- > 0;)
        if (m->modules[i].ops->destroy)
            m->modules[i].ops->destroy(m->modules[i].ud);
    fs_free(m->modules);
    fs_free(m->node_holds);
    fs_free(m->node_speed);
    if (m->pol && m->pol_state)
        m->pol->destroy(m->pol_state);
    for (size_t i = 0; i < m->n_slots; i++)
        if (m->slots[i].state == FS_JOBRT_RUNNING)
            fs_placement_release(&m->slots[i].place);
    fs_free(m->slots);
    fs_free(m->free_slots);
    fs_free(m->batch);
    fs_free(m->set_pool);
    fs_free(m->set_off);
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
    fs_time_t end = m->cfg->until == FS_UNTIL_HORIZON ? m->cfg->horizon : m->last_change;
    if (end < m->last_settle)
        end = m->last_settle;
    settle(m, end);
    for (size_t i = 0; i < m->n_modules && !m->err.code; i++)
        if (m->modules[i].ops->finish) {
            int rc = m->modules[i].ops->finish(m->modules[i].ud, m, t);
            if (rc)
                fail(m, rc, m->modules[i].ops->name);
        }
    /* jobs still active: rows with what they did so far */
    for (size_t i = 0; i < m->n_slots; i++) {
        fs_jobrt_t *j = &m->slots[i];
        if (j->state == FS_JOBRT_RUNNING) {
            double ran = fs_time_to_s(end - j->start);
            j->run_s += ran;
            m->useful_gpu_s += (double)j->job.gpus * j->job.gpu_milli / 1000.0 * ran;
            if (emit(m, j, FS_STATE_RUNNING))
                break;
        } else if (j->state == FS_JOBRT_QUEUED) {
            if (emit(m, j, FS_STATE_QUEUED))
                break;
        }
    }
    if (m->err.code) {
        if (err)
            *err = m->err;
        return m->err.code;
    }
    memset(t, 0, sizeof *t);
    t->end_time = fs_time_to_s(end);
    t->makespan = fs_time_to_s(m->last_change);
    t->gpus_total = m->cluster.gpus_total;
    t->gpu_s_capacity = m->int_up;
    t->gpu_s_busy = m->int_busy;
    t->gpu_s_useful = m->useful_gpu_s;
    t->window_start = fs_time_to_s(m->win_lo);
    t->window_end = fs_time_to_s(end < m->win_hi ? end : m->win_hi);
    t->gpu_s_capacity_window = m->win_up;
    t->gpu_s_busy_window = m->win_busy;
    t->jobs_queued_integral = m->int_queued;
    t->jobs_system_integral = m->int_system;
    t->jobs_submitted = m->submitted;
    t->events = m->sim.events + m->sim.arrivals;
    t->passes = m->sim.passes;
    t->rows_skipped = fs_source_skipped(m->src);
    return 0;
}

int fs_model_truncated(const fs_model_t *m) { return m->truncated; }
