/*
 * fs_fabric_mod: the fabric in a run (cluster.fabric; fs_fabric.h).  A
 * module (fs_modules.c) that holds the network and the engine; the
 * attempts (fs_model_attempt.c) call it when a job starts and stops, and
 * multiply a running job's rate by its factor (fs_att_rate).  A job whose
 * factor changes has its work settled at the old rate and its completion
 * moved (fs_att_rerate), as a node's speed change does.
 */
#include "fs_fabric_mod.h"
#include "fs_fabric.h"

struct fs_fabmod {
    fs_fabric_net_t net;
    fs_fabric_t *eng;
    /* per slot: the job's GPUs, factor since, and its slowdown so far:
     * the integral of (1 - factor) over its running time, s */
    fs_time_t *since;
    double *slow_s;
    double *fac;            /* the factor in force (the rate the job runs at has it) */
    size_t cap_since, cap_slow, cap_fac;
    double lost_gpu_s;      /* sum over jobs of GPUs x slowdown: GPU-s lost to the network */
};

static void fab_destroy(void *ud)
{
    struct fs_fabmod *a = ud;
    if (!a)
        return;
    fs_fabric_net_release(&a->net);
    fs_fabric_free(a->eng);
    fs_free(a->since);
    fs_free(a->slow_s);
    fs_free(a->fac);
    fs_free(a);
}

static int fab_finish(void *ud, fs_model_t *m, fs_run_totals_t *t);
static const fs_module_ops_t fab_ops = {.name = "fabric", .destroy = fab_destroy,
                                        .finish = fab_finish};

int fs_fabric_attach(fs_model_t *m, fs_error_t *err)
{
    const fs_fabric_cfg_t *fc = &m->cfg->cluster.fabric;
    if (fc->kind == FS_FABRIC_OFF)
        return 0;
    struct fs_fabmod *a = fs_calloc(1, sizeof *a);
    if (!a)
        return fs_error_set(err, FS_ENOMEM, "fabric: out of memory");
    int rc = fs_fabric_net_init(&a->net, fc, &m->cluster, err);
    if (!rc && !(a->eng = fs_fabric_new(a->net.n_nodes + a->net.n_groups, a->net.cap)))
        rc = fs_error_set(err, FS_ENOMEM, "fabric: out of memory");
    uint32_t id;
    if (!rc && fs_model_add_module(m, &fab_ops, a, &id))
        rc = fs_error_set(err, FS_ENOMEM, "fabric: out of memory");
    if (rc) {
        fab_destroy(a);
        return rc;
    }
    m->fab = a;
    return 0;
}

double fs_fabric_slot_factor(const fs_model_t *m, uint32_t slot)
{
    return fs_fabric_factor(m->fab->eng, slot);
}

/* The slowdown of slot's job up to `now` at its factor so far. */
static void settle_at(fs_model_t *m, uint32_t slot, fs_time_t now)
{
    struct fs_fabmod *a = m->fab;
    double f = a->fac[slot];
    double dt = fs_time_to_s(now - a->since[slot]);
    if (f < 1.0 && dt > 0) {
        a->slow_s[slot] += (1.0 - f) * dt;
        a->lost_gpu_s += gpu_share(&m->js.slots[slot]) * (1.0 - f) * dt;
    }
    a->since[slot] = now;
}

static void settle(fs_model_t *m, uint32_t slot)
{
    settle_at(m, slot, m->sim.now);
}

/* The run's end: the running jobs' slowdown up to it; the totals. */
static int fab_finish(void *ud, fs_model_t *m, fs_run_totals_t *t)
{
    struct fs_fabmod *a = ud;
    fs_time_t end = m->integ.last_settle;
    for (size_t s = 0; s < m->js.n_slots && s < a->cap_since; s++)
        if (m->js.slots[s].state == FS_JOBRT_RUNNING && a->since[s] < end)
            settle_at(m, (uint32_t)s, end);
    fs_fabric_stats_t st = fs_fabric_stats(a->eng);
    t->gpu_s_network = a->lost_gpu_s;
    t->fabric_recomputes = st.recomputes;
    t->fabric_jobs_touched = st.flows_touched;
    return 0;
}

/* The jobs whose factor the last change moved: settled, re-rated. */
static int rerate_changed(fs_model_t *m, uint32_t skip)
{
    size_t n;
    const uint32_t *ch = fs_fabric_changed(m->fab->eng, &n);
    for (size_t i = 0; i < n; i++) {
        uint32_t s = ch[i];
        if (s == skip)
            continue;
        fs_jobrt_t *j = &m->js.slots[s];
        if (j->state != FS_JOBRT_RUNNING)
            continue;
        settle(m, s);
        m->fab->fac[s] = fs_fabric_factor(m->fab->eng, s);
        int rc = fs_att_rerate(m, s, fs_att_rate(m, j));
        if (rc)
            return rc;
    }
    return 0;
}

int fs_fabric_job_start(fs_model_t *m, uint32_t slot, double *factor)
{
    struct fs_fabmod *a = m->fab;
    fs_jobrt_t *j = &m->js.slots[slot];
    *factor = 1.0;
    if (fs_grow((void **)&a->since, &a->cap_since, (size_t)slot + 1, sizeof *a->since) ||
        fs_grow((void **)&a->slow_s, &a->cap_slow, (size_t)slot + 1, sizeof *a->slow_s) ||
        fs_grow((void **)&a->fac, &a->cap_fac, (size_t)slot + 1, sizeof *a->fac))
        return FS_ENOMEM;
    a->since[slot] = m->sim.now;
    a->fac[slot] = 1.0;
    if (j->r->first_start < 0)
        a->slow_s[slot] = 0;
    const fs_fabric_traffic_cfg_t *t = fs_fabric_traffic(&m->cfg->cluster.fabric,
                                                         (uint32_t)(int32_t)j->job.job_class);
    if (!t || j->r->place.n < 2 || j->job.mig)
        return 0;
    const uint32_t *links;
    const double *coef;
    fs_fabric_ring_t ring;
    int nl = fs_fabric_net_flow(&a->net, &m->cluster, &j->r->place, t, &links, &coef, &ring);
    if (nl < 0)
        return FS_ENOMEM;
    if (nl == 0)
        return 0;
    int rc = fs_fabric_add(a->eng, slot, links, coef, (uint32_t)nl, &ring);
    if (rc)
        return rc;
    *factor = a->fac[slot] = fs_fabric_factor(a->eng, slot);
    return 0;
}

int fs_fabric_after_start(fs_model_t *m, uint32_t slot)
{
    return rerate_changed(m, slot);
}

int fs_fabric_job_stop(fs_model_t *m, uint32_t slot)
{
    struct fs_fabmod *a = m->fab;
    if (slot >= a->cap_since)
        return 0;
    settle(m, slot);
    a->fac[slot] = 1.0;
    if (!fs_fabric_active(a->eng, slot))
        return 0;
    int rc = fs_fabric_remove(a->eng, slot);
    return rc ? rc : rerate_changed(m, slot);
}
