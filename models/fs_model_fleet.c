/*
 * The fleet: nodes out of service and back (failures, drains, cordons,
 * purchases), node speed factors, MIG re-cuts and evictions.  Prefix
 * fs_fleet_ (and the fs_model_node_* of fs_model.h), state fs_fleet_t.
 */
#include "fs_model_int.h"

/* The GPUs held by pods on the nodes cordoned for a MIG re-cut
 * (fs_model_node_cordon), and all their GPUs: the re-cut's drain cost
 * (gpu_s_mig_drain) is the rest.  O(cordoned nodes x GPUs per node). */
static double cordon_busy(const fs_model_t *m)
{
    double b = 0;
    for (size_t i = 0; i < m->fleet.n_cordon; i++)
        b += (double)fs_cluster_node_busy(&m->cluster, m->fleet.cordon[i]);
    return b;
}

static double cordon_gpus(const fs_model_t *m)
{
    double g = 0;
    for (size_t i = 0; i < m->fleet.n_cordon; i++)
        g += (double)m->cluster.pools[m->cluster.node_pool[m->fleet.cordon[i]]].gpn;
    return g;
}

/* GPUs of the cordoned nodes that hold no pod now (the rate of
 * fs_model_cordon_idle_gpu_s; fs_integ_settle integrates it). */
double fs_fleet_cordon_free(const fs_model_t *m) { return cordon_gpus(m) - cordon_busy(m); }

/* Insertion sort of slots by admission order (a handful per node): the
 * jobs a failure hits are handled in the same order however they were
 * found. */
static void sort_by_seq(const fs_model_t *m, uint32_t *v, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        uint32_t x = v[i];
        size_t k = i;
        for (; k > 0 && m->js.slots[v[k - 1]].seq > m->js.slots[x].seq; k--)
            v[k] = v[k - 1];
        v[k] = x;
    }
}

/* Every job holding GPUs on a failed node: running ones are interrupted,
 * recovering ones lose their share of it.  *hit = jobs interrupted. */
static int fail_node_jobs(fs_model_t *m, uint32_t node, uint32_t *hit)
{
    int rc = fs_nidx_ensure(m);
    size_t n = rc ? 0 : m->nodes.jobs[node].n;
    if (rc || fs_grow((void **)&m->nodes.scr, &m->nodes.scr_cap, n + 1, sizeof *m->nodes.scr)) {
        fs_mdl_fail(m, FS_ENOMEM, "interrupting jobs");
        return FS_ENOMEM;
    }
    if (n == 0)
        return 0;
    memcpy(m->nodes.scr, m->nodes.jobs[node].v, n * sizeof *m->nodes.scr);
    sort_by_seq(m, m->nodes.scr, n);
    for (size_t i = 0; i < n && !rc; i++) {
        uint32_t s = m->nodes.scr[i];
        if (m->js.slots[s].state == FS_JOBRT_RUNNING) {
            rc = fs_rcv_fail_job(m, s, node);
            (*hit)++;
        } else if (m->js.slots[s].state == FS_JOBRT_RECOVERING && m->js.slots[s].r->holding) {
            fs_rcv_drop_node(m, s, node);
        }
    }
    return rc;
}

int fs_model_node_down(fs_model_t *m, uint32_t node, int how, uint32_t *jobs_hit)
{
    if (jobs_hit)
        *jobs_hit = 0;
    if (node >= m->cluster.n_nodes)
        return FS_EINVAL;
    if (!m->fleet.node_holds) {
        m->fleet.node_holds = fs_calloc(m->cluster.n_nodes, sizeof *m->fleet.node_holds);
        if (!m->fleet.node_holds) {
            fs_mdl_fail(m, FS_ENOMEM, "taking a node out of service");
            return FS_ENOMEM;
        }
    }
    fs_integ_settle(m, m->sim.now);
    m->last_change = m->sim.now;
    if (m->fleet.node_holds[node]++ == 0) {
        fs_cluster_set_up(&m->cluster, node, 0);
        m->fleet.nodes_out++;
    }
    if (how != FS_DOWN_FAIL && how != FS_DOWN_FAIL_XID)
        return 0;
    uint32_t hit = 0;
    m->rec.fail_xid = how == FS_DOWN_FAIL_XID;
    int rc = fail_node_jobs(m, node, &hit);
    m->rec.fail_xid = 0;
    if (jobs_hit)
        *jobs_hit = hit;
    return rc;
}

int fs_model_node_up(fs_model_t *m, uint32_t node)
{
    if (node >= m->cluster.n_nodes || !m->fleet.node_holds || m->fleet.node_holds[node] == 0)
        return FS_EINVAL;
    fs_integ_settle(m, m->sim.now);
    m->last_change = m->sim.now;
    if (--m->fleet.node_holds[node] == 0) {
        fs_cluster_set_up(&m->cluster, node, 1);
        m->fleet.nodes_out--;
        m->pass_wanted = 1;     /* capacity came back (a quiet module's too) */
    }
    return 0;
}

int fs_model_node_in_service(const fs_model_t *m, uint32_t node)
{
    return node < m->cluster.n_nodes && (!m->fleet.node_holds || m->fleet.node_holds[node] == 0);
}

int fs_model_mig_recut(fs_model_t *m, uint32_t node, unsigned pr)
{
    if (node >= m->cluster.n_nodes)
        return FS_EINVAL;
    int n = fs_cluster_mig_recut(&m->cluster, node, pr);
    m->integ.frag_stale = 1;
    return n;
}

int fs_model_mig_set(fs_model_t *m, uint32_t node, const fs_mig_layout_t *lay)
{
    if (node >= m->cluster.n_nodes)
        return FS_EINVAL;
    int rc = fs_cluster_mig_set(&m->cluster, node, lay);
    m->integ.frag_stale = 1;
    return rc;
}

int fs_model_node_cordon(fs_model_t *m, uint32_t node, int on)
{
    if (node >= m->cluster.n_nodes)
        return FS_EINVAL;
    size_t i = 0;
    while (i < m->fleet.n_cordon && m->fleet.cordon[i] != node)
        i++;
    if (!!on == (i < m->fleet.n_cordon))
        return FS_EINVAL;
    if (on) {
        if (fs_grow((void **)&m->fleet.cordon, &m->fleet.cap_cordon, m->fleet.n_cordon + 1, sizeof *m->fleet.cordon)) {
            fs_mdl_fail(m, FS_ENOMEM, "cordoning a node");
            return FS_ENOMEM;
        }
        /* settled before the node leaves: the integrals up to now see it as it was */
        int rc = fs_model_node_down(m, node, FS_DOWN_DRAIN, NULL);
        if (rc)
            return rc;
        m->fleet.cordon[m->fleet.n_cordon++] = node;
        return 0;
    }
    fs_integ_settle(m, m->sim.now);
    m->fleet.cordon[i] = m->fleet.cordon[--m->fleet.n_cordon];
    return fs_model_node_up(m, node);
}

double fs_model_cordon_idle_gpu_s(const fs_model_t *m)
{
    /* not settled here: a settle would split the other integrals' sums */
    double dt = fs_time_to_s(m->sim.now - m->integ.last_settle);
    return m->fleet.int_cordon_idle + (m->fleet.n_cordon ? dt * fs_fleet_cordon_free(m) : 0);
}

int fs_model_evict_node(fs_model_t *m, uint32_t node, uint32_t below, uint32_t *n_evicted)
{
    *n_evicted = 0;
    if (node >= m->cluster.n_nodes)
        return FS_EINVAL;
    /* the jobs on the node (the node index, as a failure finds them),
     * copied: each preemption leaves the index */
    int rc0 = fs_nidx_ensure(m);
    size_t all = rc0 ? 0 : m->nodes.jobs[node].n, n = 0;
    if (rc0 || fs_grow((void **)&m->nodes.scr, &m->nodes.scr_cap, all + 1, sizeof *m->nodes.scr)) {
        fs_mdl_fail(m, FS_ENOMEM, "evicting jobs");
        return FS_ENOMEM;
    }
    for (size_t i = 0; i < all; i++) {
        uint32_t s = m->nodes.jobs[node].v[i];
        if (m->js.slots[s].state == FS_JOBRT_RUNNING && m->ending != s + 1 &&
            m->js.slots[s].r->preemptions < below)
            m->nodes.scr[n++] = s;
    }
    sort_by_seq(m, m->nodes.scr, n);
    for (size_t i = 0; i < n; i++) {
        uint32_t s = m->nodes.scr[i];
        /* the policy forgets it as running (as for a failure), the model
         * preempts it, and the policy gets it back */
        if (m->pol->job_interrupted)
            m->pol->job_interrupted(m->pol_state, m, s);
        else if (m->pol->job_end)
            m->pol->job_end(m->pol_state, m, s);
        int rc = fs_model_preempt(m, s);
        if (!rc)
            rc = m->pol->enqueue(m->pol_state, m, s);
        if (rc) {
            fs_mdl_fail(m, rc, "evicting a job");
            return rc;
        }
        (*n_evicted)++;
    }
    m->pass_wanted = 1;
    return 0;
}

int fs_model_node_speed(fs_model_t *m, uint32_t node, double factor)
{
    if (node >= m->cluster.n_nodes || !(factor > 0))
        return FS_EINVAL;
    if (!m->fleet.node_speed) {
        if (factor == 1.0)
            return 0;
        m->fleet.node_speed = fs_malloc(m->cluster.n_nodes * sizeof *m->fleet.node_speed);
        if (!m->fleet.node_speed) {
            fs_mdl_fail(m, FS_ENOMEM, "setting a node's speed");
            return FS_ENOMEM;
        }
        for (uint32_t i = 0; i < m->cluster.n_nodes; i++)
            m->fleet.node_speed[i] = 1.0;
    }
    m->fleet.node_speed[node] = factor;
    if (fs_nidx_ensure(m)) {
        fs_mdl_fail(m, FS_ENOMEM, "setting a node's speed");
        return FS_ENOMEM;
    }
    const nodevec_t *v = &m->nodes.jobs[node];
    for (size_t i = 0; i < v->n; i++) {
        fs_jobrt_t *j = &m->js.slots[v->v[i]];
        if (j->state != FS_JOBRT_RUNNING)
            continue;
        double r = fs_att_rate(m, j);
        if (r != j->r->rate) {
            int rc = fs_att_rerate(m, v->v[i], r);
            if (rc)
                return rc;
        }
    }
    return 0;
}

/* ---- lifecycle ------------------------------------------------------------------ */

void fs_fleet_init(fs_model_t *m)
{
    const fs_config_t *cfg = m->cfg;
    for (size_t p = 0; p < cfg->cluster.n_pools; p++)
        if (cfg->cluster.pools[p].power_cap_w > 0 || cfg->telemetry.throttle_c > 0)
            m->fleet.capped = 1;
    for (size_t p = 0; p < cfg->cluster.n_pools; p++)
        if (cfg->cluster.pools[p].time_slicing || cfg->cluster.pools[p].mps)
            m->fleet.shared = 1;
}

void fs_fleet_release(fs_model_t *m)
{
    fs_free(m->fleet.node_holds);
    fs_free(m->fleet.cordon);
    fs_free(m->fleet.node_speed);
}
