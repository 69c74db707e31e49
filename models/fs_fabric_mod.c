/*
 * fs_fabric_mod: the fabric in a run (cluster.fabric; fs_fabric.h).  A
 * module (fs_modules.c) that holds the network and the engine; the
 * attempts (fs_model_attempt.c) call it when a job starts and stops, and
 * multiply a running job's rate by its factor (fs_att_rate).  A job whose
 * factor changes has its work settled at the old rate and its completion
 * moved (fs_att_rerate), as a node's speed change does.
 *
 * It integrates, between changes, every link's figures (/links: bytes,
 * busy, saturated, degraded and down time, peak load) and every
 * communicating job's (/jobs_network: slowdown, exposed communication,
 * iterations and bytes), and hands the rows to the sink at the run's end.
 * Link and switch failures: fs_fabric_fail.c.
 */
#include "fs_fabric_mod_int.h"
#include "fs_fabric.h"

#include <math.h>
#include <string.h>

static void fab_destroy(void *ud)
{
    struct fs_fabmod *a = ud;
    if (!a)
        return;
    fs_fab_fail_free(a->fail);
    fs_fabric_net_release(&a->net);
    fs_fabric_free(a->eng);
    fs_free(a->sl);
    fs_free(a->lk);
    fs_free(a->rows);
    fs_free(a->lb);
    fs_free(a);
}

static int fab_finish(void *ud, fs_model_t *m, fs_run_totals_t *t);

static int fab_event(void *ud, fs_model_t *m, uint64_t data)
{
    return fs_fab_fail_event(m, ud, data);
}

/* A /timeline sample: every link's bytes carried up to now (its figures
 * are not settled here: the same sum as the settling at the run's end, so
 * the last row equals /links bytes), a /link_bytes row when they changed;
 * the rows to the sink FS_FAB_LB_BATCH at a time. */
static void fab_sample(void *ud, const fs_model_t *m, fs_sample_row_t *row)
{
    (void)row;
    struct fs_fabmod *a = ud;
    const fs_sink_t *sk = fs_model_sink(m);
    if (a->lb_rc || !sk->link_bytes)
        return;
    fs_time_t now = m->sim.now;
    for (uint32_t l = 0; l < a->n_links; l++) {
        const fab_link_t *k = &a->lk[l];
        double b = k->bytes;
        if (now != k->since) {
            double dt = fs_time_to_s(now - k->since);
            if (dt > 0)
                b += k->brate * dt;
        }
        if (b == k->rec)
            continue;
        if (a->n_lb == FS_FAB_LB_BATCH) {
            if ((a->lb_rc = sk->link_bytes(sk->ud, a->lb, a->n_lb)))
                return;
            a->n_lb = 0;
        }
        if (fs_grow((void **)&a->lb, &a->cap_lb, a->n_lb + 1, sizeof *a->lb)) {
            a->lb_rc = FS_ENOMEM;
            return;
        }
        a->lb[a->n_lb++] = (fs_link_bytes_row_t){fs_time_to_s(now), l, b};
        a->lk[l].rec = b;
    }
}

static const fs_module_ops_t fab_ops = {.name = "fabric", .destroy = fab_destroy,
                                        .finish = fab_finish, .on_event = fab_event,
                                        .sample = fab_sample};

/* ---- the placer's view (fs_place_net_t): ud is the model ------------------------- */

static void pn_shape(const void *ud, uint32_t pool, uint32_t *leaf_nodes, uint32_t *domain_nodes)
{
    const fs_model_t *m = ud;
    const fs_fabric_net_t *net = &m->fab->net;
    const fs_pool_t *p = &m->cluster.pools[pool];
    uint32_t d = 1;
    while (d < p->n_nodes && net->node_dom[p->first_node + d] == net->node_dom[p->first_node])
        d++;
    *leaf_nodes = net->shape[pool].nodes_per_leaf;
    *domain_nodes = d;
}

static void pn_uplinks(const void *ud, uint32_t node, double *cap, double *load, uint32_t *flows)
{
    const fs_model_t *m = ud;
    const struct fs_fabmod *a = m->fab;
    uint32_t l = a->net.n_nodes + fs_fabric_net_group(&a->net, &m->cluster, node);
    *cap = a->lk[l].cap;
    *load = a->lk[l].load;
    *flows = a->lk[l].flows;
}

static double pn_nic_cap(const void *ud, uint32_t node)
{
    const fs_model_t *m = ud;
    return m->fab->lk[node].cap;
}

int fs_fabric_attach(fs_model_t *m, fs_error_t *err)
{
    const fs_fabric_cfg_t *fc = &m->cfg->cluster.fabric;
    if (fc->kind == FS_FABRIC_OFF)
        return 0;
    struct fs_fabmod *a = fs_calloc(1, sizeof *a);
    if (!a)
        return fs_error_set(err, FS_ENOMEM, "fabric: out of memory");
    int rc = fs_fabric_net_init(&a->net, fc, &m->cluster, err);
    if (!rc) {
        a->n_links = a->net.n_nodes + a->net.n_groups;
        a->lk = fs_calloc(a->n_links ? a->n_links : 1, sizeof *a->lk);
        if (!a->lk || !(a->eng = fs_fabric_new(a->n_links, a->net.cap)))
            rc = fs_error_set(err, FS_ENOMEM, "fabric: out of memory");
    }
    for (uint32_t l = 0; !rc && l < a->n_links; l++) {
        fab_link_t *k = &a->lk[l];
        k->cap0 = k->cap = a->net.cap[l];
        const fs_fabric_shape_t *s;
        if (l < a->net.n_nodes) {
            s = &a->net.shape[m->cluster.node_pool[l]];
            k->ports = s->nics;
        } else {
            uint32_t p = 0;
            while (p + 1 < m->cluster.n_pools && a->net.pool_group0[p + 1] <= l - a->net.n_nodes)
                p++;
            s = &a->net.shape[p];
            k->ports = s->rails * s->up_ports;
        }
    }
    if (!rc && fs_model_add_module(m, &fab_ops, a, &a->mod_id))
        rc = fs_error_set(err, FS_ENOMEM, "fabric: out of memory");
    if (rc) {
        fab_destroy(a);
        return rc;
    }
    m->fab = a;
    a->pnet = (fs_place_net_t){m, pn_shape, pn_uplinks, pn_nic_cap};
    if (m->placer)
        fs_placer_set_net(m->placer, &a->pnet);
    if (fc->n_failures && (rc = fs_fab_fail_init(m, a, err)))
        return rc;      /* the module is registered: the model frees it */
    return 0;
}

double fs_fabric_slot_factor(const fs_model_t *m, uint32_t slot)
{
    return fs_fabric_factor(m->fab->eng, slot);
}

/* ---- links --------------------------------------------------------------------- */

void fs_fab_link_settle(struct fs_fabmod *a, uint32_t link, fs_time_t now)
{
    fab_link_t *k = &a->lk[link];
    if (now == k->since)
        return;
    double dt = fs_time_to_s(now - k->since);
    if (dt > 0) {
        k->bytes += k->brate * dt;
        if (k->flows) {
            k->busy_s += dt;
            if (k->load >= k->cap * (1.0 - 1e-9))
                k->sat_s += dt;
        }
        if (k->cap < k->cap0 * (1.0 - 1e-12))
            k->degr_s += dt;
        k->down_s += k->ports_down * dt;
    }
    k->since = now;
}

/* Slot's flow on its links as the engine has it now (rate x, iterations/s
 * factor / idle iteration time; 0 when it has ended): each link settled,
 * then the flow's old part replaced by the new. */
static void apply_links(struct fs_fabmod *a, uint32_t slot, fs_time_t now)
{
    fab_slot_t *s = &a->sl[slot];
    int on = fs_fabric_active(a->eng, slot);
    double x = on ? fs_fabric_x(a->eng, slot) : 0.0;
    double ir = on && s->t_idle > 0 ? fs_fabric_factor(a->eng, slot) / s->t_idle : 0.0;
    int was = s->xrec > 0 || s->irec > 0;
    const double *coef;
    uint32_t n;
    const uint32_t *links = fs_fabric_flow_links(a->eng, slot, &coef, &n);
    for (uint32_t i = 0; i < n; i++) {
        fab_link_t *k = &a->lk[links[i]];
        fs_fab_link_settle(a, links[i], now);
        k->load += coef[i] * (x - s->xrec);
        k->brate += coef[i] * s->edge_b * (ir - s->irec);
        if (on && !was)
            k->flows++;
        else if (!on && was && k->flows > 0 && --k->flows == 0)
            k->load = k->brate = 0;    /* no rounding left behind */
    }
    s->xrec = x;
    s->irec = ir;
}

/* The peaks of slot's flow's links, once every flow a change moved has its
 * new rate on them (not in between, where a link holds a flow's new rate
 * beside another's old one). */
static void peak_links(struct fs_fabmod *a, uint32_t slot)
{
    const double *coef;
    uint32_t n;
    const uint32_t *links = fs_fabric_flow_links(a->eng, slot, &coef, &n);
    for (uint32_t i = 0; i < n; i++) {
        fab_link_t *k = &a->lk[links[i]];
        if (k->load > k->peak * k->cap0)
            k->peak = k->load / k->cap0;
    }
}

/* ---- jobs ---------------------------------------------------------------------- */

/* Slot's job figures up to `now` at its factor so far. */
static void settle_at(fs_model_t *m, uint32_t slot, fs_time_t now)
{
    struct fs_fabmod *a = m->fab;
    fab_slot_t *s = &a->sl[slot];
    double f = s->fac;
    double dt = fs_time_to_s(now - s->since);
    if (dt > 0) {
        if (f < 1.0) {
            s->slow_s += (1.0 - f) * dt;
            a->lost_gpu_s += gpu_share(&m->js.slots[slot]) * (1.0 - f) * dt;
        }
        if (s->t_idle > 0) {
            double it = f / s->t_idle * dt;
            s->net_s += dt;
            s->comm_s += (1.0 - f * s->compute_s / s->t_idle) * dt;
            s->iters += it;
            s->sent += it * s->sent_pi;
        }
    }
    s->since = now;
}

/* The job of slot gets its /jobs_network row (once it had a ring on the
 * network). */
static int push_row(struct fs_fabmod *a, uint32_t slot)
{
    fab_slot_t *s = &a->sl[slot];
    if (!s->net)
        return 0;
    if (fs_grow((void **)&a->rows, &a->cap_rows, a->n_rows + 1, sizeof *a->rows))
        return FS_ENOMEM;
    a->rows[a->n_rows++] = (fs_jobnet_row_t){
        .id = s->id, .network_slow_s = s->slow_s, .comm_s = s->comm_s,
        .comm_share = s->net_s > 0 ? s->comm_s / s->net_s : NAN, .net_run_s = s->net_s,
        .iterations = s->iters, .bytes_sent = s->sent};
    s->net = 0;
    return 0;
}

int fs_fabric_job_row(fs_model_t *m, uint32_t slot)
{
    struct fs_fabmod *a = m->fab;
    return slot < a->cap_sl ? push_row(a, slot) : 0;
}

/* The run's end: the running jobs' and every link's figures up to it; the
 * rows to the sink; the totals. */
static int fab_finish(void *ud, fs_model_t *m, fs_run_totals_t *t)
{
    struct fs_fabmod *a = ud;
    fs_time_t end = m->integ.last_settle;
    for (size_t s = 0; s < m->js.n_slots && s < a->cap_sl; s++) {
        if (m->js.slots[s].state == FS_JOBRT_RUNNING && a->sl[s].since < end)
            settle_at(m, (uint32_t)s, end);
        if (push_row(a, (uint32_t)s))
            return FS_ENOMEM;
    }
    fs_fabric_stats_t st = fs_fabric_stats(a->eng);
    t->gpu_s_network = a->lost_gpu_s;
    t->fabric_recomputes = st.recomputes;
    t->fabric_jobs_touched = st.flows_touched;
    /* every link settled to the end: the link counters of /summary */
    double len = fs_time_to_s(end);
    for (uint32_t l = 0; l < a->n_links; l++) {
        fab_link_t *k = &a->lk[l];
        fs_fab_link_settle(a, l, end);
        if (l < a->net.n_nodes) {
            t->fabric_nic_bytes += k->bytes;
        } else {
            t->fabric_uplink_bytes += k->bytes;
            double u = len > 0 ? k->bytes / (k->cap0 * len) : 0.0;
            if (u > t->fabric_uplink_util_max)
                t->fabric_uplink_util_max = u;
            t->fabric_uplink_saturated_s += k->sat_s;
        }
    }
    const fs_sink_t *sk = fs_model_sink(m);
    if (!sk->fabric)
        return 0;
    fs_link_row_t *lr = fs_calloc(a->n_links ? a->n_links : 1, sizeof *lr);
    if (!lr)
        return FS_ENOMEM;
    for (uint32_t l = 0; l < a->n_links; l++) {
        const fab_link_t *k = &a->lk[l];
        int nic = l < a->net.n_nodes;
        uint32_t g = nic ? fs_fabric_net_group(&a->net, &m->cluster, l) : l - a->net.n_nodes;
        uint32_t pool = 0;
        while (pool + 1 < m->cluster.n_pools && a->net.pool_group0[pool + 1] <= g)
            pool++;
        lr[l] = (fs_link_row_t){
            .link = l, .tier = nic ? FS_LINK_NIC : FS_LINK_LEAF_UPLINK, .pool = pool,
            .node = nic ? (int32_t)l : -1, .leaf = g, .ports = k->ports, .capacity = k->cap0,
            .bytes = k->bytes, .busy_s = k->busy_s, .peak_util = k->peak,
            .mean_util = len > 0 ? k->bytes / (k->cap0 * len) : 0.0, .saturated_s = k->sat_s,
            .failures = k->failures, .port_down_s = k->down_s, .degraded_s = k->degr_s,
            .rails = a->net.shape[pool].rails};
    }
    int rc = sk->fabric(sk->ud, lr, a->n_links, a->rows, a->n_rows);
    fs_free(lr);
    if (!rc)
        rc = a->lb_rc;
    if (!rc && sk->link_bytes)
        rc = sk->link_bytes(sk->ud, a->lb, a->n_lb);
    return rc;
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
        settle_at(m, s, m->sim.now);
        m->fab->sl[s].fac = fs_fabric_factor(m->fab->eng, s);
        int rc = fs_att_rerate(m, s, fs_att_rate(m, j));
        if (rc)
            return rc;
    }
    return 0;
}

/* The changed flows' links take their new rates. */
static void apply_changed(struct fs_fabmod *a, fs_time_t now)
{
    size_t n;
    const uint32_t *ch = fs_fabric_changed(a->eng, &n);
    for (size_t i = 0; i < n; i++)
        apply_links(a, ch[i], now);
    for (size_t i = 0; i < n; i++)
        peak_links(a, ch[i]);
}

int fs_fab_after_change(fs_model_t *m, uint32_t skip)
{
    apply_changed(m->fab, m->sim.now);
    return rerate_changed(m, skip);
}

int fs_fabric_job_start(fs_model_t *m, uint32_t slot, double *factor)
{
    struct fs_fabmod *a = m->fab;
    fs_jobrt_t *j = &m->js.slots[slot];
    *factor = 1.0;
    if (slot >= a->cap_sl) {
        size_t old = a->cap_sl;
        if (fs_grow((void **)&a->sl, &a->cap_sl, (size_t)slot + 1, sizeof *a->sl))
            return FS_ENOMEM;
        memset(a->sl + old, 0, (a->cap_sl - old) * sizeof *a->sl);
    }
    fab_slot_t *s = &a->sl[slot];
    if (j->r->first_start < 0 || s->id != j->job.id) {   /* a new job in the slot */
        if (push_row(a, slot))
            return FS_ENOMEM;
        memset(s, 0, sizeof *s);
        s->id = j->job.id;
    }
    s->since = m->sim.now;
    s->fac = 1.0;
    s->t_idle = 0;
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
    s->t_idle = fs_fabric_iter_s(&ring, fs_fabric_x_idle(a->eng, slot));
    s->compute_s = ring.compute_s;
    s->edge_b = fs_fabric_edge_bytes(&ring);
    s->sent_pi = s->edge_b * ring.domains;
    s->xrec = s->irec = 0;
    s->net = 1;
    apply_links(a, slot, m->sim.now);
    apply_changed(a, m->sim.now);
    peak_links(a, slot);
    *factor = s->fac = fs_fabric_factor(a->eng, slot);
    return 0;
}

int fs_fabric_after_start(fs_model_t *m, uint32_t slot)
{
    return rerate_changed(m, slot);
}

int fs_fabric_job_stop(fs_model_t *m, uint32_t slot)
{
    struct fs_fabmod *a = m->fab;
    if (slot >= a->cap_sl)
        return 0;
    settle_at(m, slot, m->sim.now);
    fab_slot_t *s = &a->sl[slot];
    s->fac = 1.0;
    s->t_idle = 0;
    if (!fs_fabric_active(a->eng, slot))
        return 0;
    int rc = fs_fabric_remove(a->eng, slot);
    if (rc)
        return rc;
    apply_links(a, slot, m->sim.now);
    return fs_fab_after_change(m, slot);
}
