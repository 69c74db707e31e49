/*
 * fs_fabric_fail: failures of the fabric's links and switches
 * (cluster.fabric.failures; docs/failures.md "Fabric links and switches").
 *
 * Each item is a process over its units: a leaf-to-spine link (an uplink
 * port of a rail's leaf switch) or a spine switch.  A unit fails after a
 * draw of tbf (counted from its return to service), is repaired after a
 * draw of repair, and meanwhile carries nothing (down) or `capacity` of its
 * bandwidth (degrade).  A leaf group's uplink bundle is one link of the
 * engine with traffic spread over its ports (fs_fabric_net.c), so a port
 * out reroutes its traffic over the others: the bundle's capacity is the
 * sum of its ports', each port times its own state and its spine's.  The
 * flows crossing it keep their idle rate (their trace time was measured on
 * the fabric as built) and slow down when the bundle binds
 * (fs_fabric_set_cap).  A failure that would leave a bundle with no
 * capacity at all (its every port out) is not applied: a leaf cut off from
 * every spine stops its jobs, which only the nodes' failures model; the
 * unit draws its next time to failure instead.
 */
#include "fs_fabric_mod_int.h"
#include "fs_fabric.h"

#include <math.h>
#include <string.h>

#include <gsl/gsl_rng.h>

/* The random stream purpose of these draws (sim/fs_rng.h: 64 and up are
 * free for later models). */
#define RNG_FABRIC 65u

/* Sourced defaults (docs/failures.md "Fabric links and switches"): Alibaba
 * HPN (Qian et al., SIGCOMM'24 section 2.3): 0.057% of NIC-ToR links and
 * 0.051% of ToR switches fail per month; applied to leaf-spine links and
 * spine switches.  A month: 30.44 days. */
#define MONTH_S (30.44 * 86400.0)
#define LINK_MTTF_S (MONTH_S / 0.00057)
#define SWITCH_MTTF_S (MONTH_S / 0.00051)
/* Repair absent: failures.repair.soft, else its default (models/fs_failspec.c). */
#define SOFT_MEDIAN_S 900.0
#define SOFT_SIGMA 0.5

typedef struct proc {
    const fs_fabric_fail_cfg_t *cfg;
    fs_dist_t tbf, repair;      /* prepared copies (defaults filled in) */
    uint32_t n_units;
    uint32_t pool;              /* the pool, UINT32_MAX: every pool */
    double *state;              /* per unit: 1 up, else its capacity share while out */
    uint32_t *seq;              /* per unit: draws so far (the stream's key) */
} proc_t;

struct fs_fabfail {
    proc_t *p;
    size_t n;
    fs_rng_t rng;               /* scratch generator, reseeded per draw */
};

void fs_fab_fail_free(struct fs_fabfail *ff)
{
    if (!ff)
        return;
    for (size_t i = 0; i < ff->n; i++) {
        fs_dist_release(&ff->p[i].tbf);
        fs_dist_release(&ff->p[i].repair);
        fs_free(ff->p[i].state);
        fs_free(ff->p[i].seq);
    }
    fs_rng_release(&ff->rng);
    fs_free(ff->p);
    fs_free(ff);
}

/* ---- units ---------------------------------------------------------------------- */

static uint32_t pool_groups(const struct fs_fabmod *a, const fs_model_t *m, uint32_t p)
{
    uint32_t end = p + 1 < m->cluster.n_pools ? a->net.pool_group0[p + 1] : a->net.n_groups;
    return end - a->net.pool_group0[p];
}

static uint32_t group_ports(const struct fs_fabmod *a, uint32_t p)
{
    return a->net.shape[p].rails * a->net.shape[p].up_ports;
}

static int in_pool(const proc_t *q, uint32_t p)
{
    return q->pool == UINT32_MAX || q->pool == p;
}

/* Process q's leaf_uplink unit u: its group and port. */
static void uplink_unit(const struct fs_fabmod *a, const fs_model_t *m, const proc_t *q,
                        uint32_t u, uint32_t *g, uint32_t *port)
{
    for (uint32_t p = 0; p < m->cluster.n_pools; p++) {
        if (!in_pool(q, p))
            continue;
        uint32_t n = pool_groups(a, m, p) * group_ports(a, p);
        if (u < n) {
            *g = a->net.pool_group0[p] + u / group_ports(a, p);
            *port = u % group_ports(a, p);
            return;
        }
        u -= n;
    }
    *g = *port = UINT32_MAX;
}

/* The unit index of (group, port) in leaf_uplink process q, UINT32_MAX: none. */
static uint32_t uplink_index(const struct fs_fabmod *a, const fs_model_t *m, const proc_t *q,
                             uint32_t g, uint32_t port)
{
    uint32_t base = 0;
    for (uint32_t p = 0; p < m->cluster.n_pools; p++) {
        uint32_t ng = pool_groups(a, m, p);
        if (g >= a->net.pool_group0[p] && g < a->net.pool_group0[p] + ng)
            return in_pool(q, p) ? base + (g - a->net.pool_group0[p]) * group_ports(a, p) + port
                                 : UINT32_MAX;
        if (in_pool(q, p))
            base += ng * group_ports(a, p);
    }
    return UINT32_MAX;
}

/* Process q's spine unit u: its pool and spine. */
static void spine_unit(const struct fs_fabmod *a, const fs_model_t *m, const proc_t *q,
                       uint32_t u, uint32_t *pool, uint32_t *spine)
{
    for (uint32_t p = 0; p < m->cluster.n_pools; p++) {
        if (!in_pool(q, p))
            continue;
        if (u < a->net.shape[p].spines) {
            *pool = p;
            *spine = u;
            return;
        }
        u -= a->net.shape[p].spines;
    }
    *pool = *spine = UINT32_MAX;
}

static uint32_t spine_index(const struct fs_fabmod *a, const fs_model_t *m, const proc_t *q,
                            uint32_t pool, uint32_t spine)
{
    uint32_t base = 0;
    for (uint32_t p = 0; p < m->cluster.n_pools; p++) {
        if (p == pool)
            return in_pool(q, p) ? base + spine : UINT32_MAX;
        if (in_pool(q, p))
            base += a->net.shape[p].spines;
    }
    return UINT32_MAX;
}

/* Group g's uplink bundle now: its capacity (bytes/s) and its ports that
 * carry nothing.  Port k is rail k / up_ports's uplink k % up_ports, which
 * goes to spine (k % up_ports) / (up_ports / spines). */
static double bundle_cap(const struct fs_fabmod *a, const fs_model_t *m, uint32_t g,
                         double *ports_down)
{
    const struct fs_fabfail *ff = a->fail;
    uint32_t p = 0;
    while (p + 1 < m->cluster.n_pools && a->net.pool_group0[p + 1] <= g)
        p++;
    const fs_fabric_shape_t *s = &a->net.shape[p];
    uint32_t per_spine = s->up_ports / s->spines;
    double cap = 0, down = 0;
    for (uint32_t k = 0; k < s->rails * s->up_ports; k++) {
        double f = 1.0;
        uint32_t sp = (k % s->up_ports) / per_spine;
        for (size_t i = 0; i < ff->n; i++) {
            const proc_t *q = &ff->p[i];
            uint32_t u = q->cfg->unit == FS_FAB_UNIT_LEAF_UPLINK ? uplink_index(a, m, q, g, k)
                                                               : spine_index(a, m, q, p, sp);
            if (u != UINT32_MAX)
                f *= q->state[u];
        }
        cap += f * s->port_Bps;
        down += f == 0.0;
    }
    *ports_down = down;
    return cap;
}

/* ---- events ---------------------------------------------------------------------- */

#define EV_DATA(proc, unit, repair) (((uint64_t)(proc) << 40) | ((uint64_t)(unit) << 1) | (uint64_t)(repair))

/* A draw for unit u of process qi: its time to failure or its repair time,
 * from a stream keyed by (process, unit, draw), so that a unit's draws do
 * not depend on the other units'. */
static double draw(fs_model_t *m, struct fs_fabmod *a, size_t qi, uint32_t u, int repair)
{
    proc_t *q = &a->fail->p[qi];
    uint64_t e = ((uint64_t)qi << 52) ^ ((uint64_t)(q->seq[u]++ & 0xFFFFFu) << 32) ^ u;
    gsl_rng *g = fs_rng_gsl(&a->fail->rng);
    gsl_rng_set(g, (unsigned long)fs_rng_key(m->cfg->seed, m->cfg->replication, RNG_FABRIC, e));
    return fs_dist_sample(repair ? &q->repair : &q->tbf, g);
}

/* The unit's next failure (repair 0) or its repair, unless the run stops
 * first (until: horizon). */
static int schedule(fs_model_t *m, struct fs_fabmod *a, size_t qi, uint32_t u, int repair)
{
    double s = draw(m, a, qi, u, repair);
    fs_time_t now = m->sim.now;
    if (!(s < fs_time_to_s(FS_TIME_NEVER - now)))
        return 0;
    fs_time_t at = now + fs_time_from_s(s);
    if (at <= now)
        at = now + 1;
    if (m->cfg->until == FS_UNTIL_HORIZON && at > fs_model_horizon(m))
        return 0;
    return fs_model_module_event(m, a->mod_id, at, repair ? FS_PRIO_REPAIR : FS_PRIO_FAILURE,
                                 EV_DATA(qi, u, repair), NULL);
}

/* After the horizon of a drain run, once no job is left, nothing more
 * happens (as the failure model stops, models/fs_failure.c). */
static int stopped(const fs_model_t *m)
{
    return m->cfg->until == FS_UNTIL_DRAIN && fs_model_now(m) >= fs_model_horizon(m) &&
           fs_model_jobs_queued(m) == 0 && fs_model_jobs_running(m) == 0 &&
           fs_model_jobs_recovering(m) == 0;
}

/* The groups whose bundle unit u of process q touches: [*g0, *g1). */
static void unit_groups(const struct fs_fabmod *a, const fs_model_t *m, const proc_t *q,
                        uint32_t u, uint32_t *g0, uint32_t *g1)
{
    if (q->cfg->unit == FS_FAB_UNIT_LEAF_UPLINK) {
        uint32_t port;
        uplink_unit(a, m, q, u, g0, &port);
        *g1 = *g0 + 1;
    } else {
        uint32_t p, sp;
        spine_unit(a, m, q, u, &p, &sp);
        *g0 = a->net.pool_group0[p];
        *g1 = *g0 + pool_groups(a, m, p);
    }
}

int fs_fab_fail_event(fs_model_t *m, struct fs_fabmod *a, uint64_t data)
{
    if (stopped(m))
        return 0;
    size_t qi = (size_t)(data >> 40);
    uint32_t u = (uint32_t)((data >> 1) & 0x7FFFFFFFFFull);
    int repair = (int)(data & 1);
    proc_t *q = &a->fail->p[qi];
    double was = q->state[u];
    q->state[u] = repair ? 1.0 : q->cfg->effect == FS_FAB_DEGRADE ? q->cfg->capacity : 0.0;
    uint32_t g0, g1;
    unit_groups(a, m, q, u, &g0, &g1);
    if (!repair) {          /* a leaf would lose every uplink: not applied */
        for (uint32_t g = g0; g < g1; g++) {
            double pd;
            if (bundle_cap(a, m, g, &pd) <= 0) {
                q->state[u] = was;
                return schedule(m, a, qi, u, 0);
            }
        }
    }
    for (uint32_t g = g0; g < g1; g++) {
        uint32_t l = a->net.n_nodes + g;
        fab_link_t *k = &a->lk[l];
        double pd, cap = bundle_cap(a, m, g, &pd);
        fs_fab_link_settle(a, l, m->sim.now);
        k->ports_down = pd;
        if (!repair)
            k->failures++;
        if (cap == k->cap)
            continue;
        k->cap = cap;
        int rc = fs_fabric_set_cap(a->eng, l, cap);
        if (!rc)
            rc = fs_fab_after_change(m, UINT32_MAX);
        if (rc)
            return rc;
    }
    return schedule(m, a, qi, u, !repair);
}

/* A process's distributions: as given, else the sourced defaults. */
static int dists(const fs_config_t *cfg, const fs_fabric_fail_cfg_t *fc, proc_t *q)
{
    fs_dist_init(&q->tbf);
    fs_dist_init(&q->repair);
    int rc = 0;
    if (fc->tbf.kind != FS_DIST_NONE) {
        rc = fs_dist_copy(&q->tbf, &fc->tbf);
    } else {
        q->tbf.kind = FS_DIST_EXPONENTIAL;
        q->tbf.mean = fc->unit == FS_FAB_UNIT_SPINE ? SWITCH_MTTF_S : LINK_MTTF_S;
        rc = fs_dist_prepare(&q->tbf, NULL) ? FS_EINVAL : 0;
    }
    if (rc)
        return rc;
    const fs_dist_t *soft = &cfg->failures.repair_soft;
    if (fc->repair.kind != FS_DIST_NONE)
        return fs_dist_copy(&q->repair, &fc->repair);
    if (cfg->failures.given && soft->kind != FS_DIST_NONE)
        return fs_dist_copy(&q->repair, soft);
    q->repair.kind = FS_DIST_LOGNORMAL;
    q->repair.median = SOFT_MEDIAN_S;
    q->repair.sigma = SOFT_SIGMA;
    return fs_dist_prepare(&q->repair, NULL) ? FS_EINVAL : 0;
}

int fs_fab_fail_init(fs_model_t *m, struct fs_fabmod *a, fs_error_t *err)
{
    const fs_fabric_cfg_t *fc = &m->cfg->cluster.fabric;
    struct fs_fabfail *ff = fs_calloc(1, sizeof *ff);
    if (!ff || !(ff->p = fs_calloc(fc->n_failures, sizeof *ff->p)))
        goto oom;
    a->fail = ff;
    if (fs_rng_init(&ff->rng, m->cfg->seed, m->cfg->replication, RNG_FABRIC, 0))
        goto oom;
    for (size_t i = 0; i < fc->n_failures; i++) {
        proc_t *q = &ff->p[i];
        ff->n++;
        q->cfg = &fc->failures[i];
        q->pool = UINT32_MAX;
        if (q->cfg->pool)
            for (uint32_t p = 0; p < m->cluster.n_pools; p++)
                if (strcmp(m->cfg->cluster.pools[p].name, q->cfg->pool) == 0)
                    q->pool = p;
        if (q->cfg->pool && q->pool == UINT32_MAX)
            return fs_error_set(err, FS_EINVAL, "cluster.fabric.failures.%zu.pool: no pool is "
                                "named \"%s\"", i, q->cfg->pool);
        if (dists(m->cfg, q->cfg, q))
            goto oom;
        for (uint32_t p = 0; p < m->cluster.n_pools; p++)
            if (in_pool(q, p))
                q->n_units += q->cfg->unit == FS_FAB_UNIT_SPINE
                                  ? a->net.shape[p].spines
                                  : pool_groups(a, m, p) * group_ports(a, p);
        q->state = fs_malloc((q->n_units ? q->n_units : 1) * sizeof *q->state);
        q->seq = fs_calloc(q->n_units ? q->n_units : 1, sizeof *q->seq);
        if (!q->state || !q->seq)
            goto oom;
        for (uint32_t u = 0; u < q->n_units; u++)
            q->state[u] = 1.0;
    }
    for (size_t i = 0; i < ff->n; i++)
        for (uint32_t u = 0; u < ff->p[i].n_units; u++)
            if (schedule(m, a, i, u, 0))
                goto oom;
    return 0;
oom:
    if (!a->fail)
        fs_free(ff);
    return fs_error_set(err, FS_ENOMEM, "fabric failures: out of memory");
}

#undef EV_DATA
