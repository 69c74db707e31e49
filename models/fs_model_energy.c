/*
 * Energy from the power model (cost.energy: power; docs/cost.md "Energy
 * from the power model"): each hold's draw above idle into the usage, as
 * fleetsim metrics reads it from /gpu_intervals.  Prefix fs_energy_, state
 * fs_energy_t.
 */
#include "fs_model_int.h"
#include "fs_catalog.h"
#include "fs_power.h"

/* Per pool: TDP, the tighter of the power cap and the thermal limit (as
 * cap_speed), idle draw; the first GPU's index in a fleet-wide numbering.
 * 0 or FS_ENOMEM. */
int fs_energy_init(fs_model_t *m)
{
    const fs_config_t *cfg = m->cfg;
    m->energy.pool = fs_calloc(m->cluster.n_pools ? m->cluster.n_pools : 1, sizeof *m->energy.pool);
    if (!m->energy.pool)
        return FS_ENOMEM;
    uint64_t gpu0 = 0;
    for (uint32_t p = 0; p < m->cluster.n_pools; p++) {
        const fs_pool_cfg_t *pc = &cfg->cluster.pools[p];
        int cat = m->cluster.pools[p].catalog;
        double tdp = cat >= 0 ? fs_catalog_get((size_t)cat)->tdp_w : 0;
        m->energy.pool[p] = (struct epool){
            .tdp = tdp,
            .lim = fs_power_limit_w(pc->power_cap_w,
                                    fs_thermal_limit_w(cfg->telemetry.throttle_c, pc->ambient_c)),
            .idle = fs_power_w(tdp, 0, 0), .gpu0 = gpu0};
        gpu0 += m->cluster.pools[p].gpus_total;
    }
    return 0;
}

/* The draw of a GPU of pool ep above its idle draw, W: computing or not,
 * with SM activity sm summed over its jobs (at most 1), clipped at the
 * pool's limit -- as fleetsim metrics writes DCGM_FI_DEV_POWER_USAGE
 * (analysis/fs_metrics.c power_w). */
static double energy_above(const struct epool *ep, int computing, double sm)
{
    double p = fs_power_w(ep->tdp, computing, sm < 1 ? sm : 1);
    if (ep->lim > 0 && p > ep->lim)
        p = ep->lim;
    return p - ep->idle;
}

/* Hold x's weight on GPU `gpu` of its node: share x SM activity, summed
 * over the MIG instances it holds there (fleetsim metrics counts each
 * /gpu_intervals row, one per instance, by gpu_milli / 1000); 0 if it holds
 * nothing there. */
static double energy_weight(const fs_model_t *m, const fs_jobrt_t *x, uint32_t gpu)
{
    const fs_placement_t *pl = &x->r->place;
    double k = pl->mig ? (double)__builtin_popcount((unsigned)(uint8_t)(pl->mig_bits >> (8 * gpu)))
                       : pl->gpu == gpu;
    return k * (double)pl->milli / 1000.0 * fs_row_job_activity(m, &x->job).sm;
}

static int cmp_ehold(const void *a, const void *b)
{
    const struct ehold *x = a, *y = b;
    return x->ready < y->ready ? -1 : x->ready > y->ready;
}

/* A shared GPU (slot `gpu` of node, or MIG GPU `gpu`) whose hold by job j
 * ends at `end`: its draw above idle from where it was last added up to
 * `end`, with every hold on it over that span -- j's and the ones on it
 * now (a hold that ended since was added up then) -- summed as fleetsim
 * metrics sums the rows of one GPU: SM activity x share summed, the CUDA
 * context once while any computes, the limit on the sum.  O(holds on the
 * node). */
static void energy_unit(fs_model_t *m, const fs_jobrt_t *j, uint32_t node, uint32_t gpu,
                        fs_time_t end)
{
    const fs_placement_t *pl = &j->r->place;
    const fs_pool_t *p = &m->cluster.pools[pl->pool];
    const struct epool *ep = &m->energy.pool[pl->pool];
    fs_time_t *at = &m->energy.unit[ep->gpu0 + (uint64_t)(node - p->first_node) * p->gpn + gpu];
    fs_time_t from = *at;
    if (end <= from)
        return;
    *at = end;
    const nodevec_t *v = &m->nodes.jobs[node];
    if (fs_grow((void **)&m->energy.scr, &m->energy.scr_cap, v->n + 1, sizeof *m->energy.scr)) {
        fs_mdl_fail(m, FS_ENOMEM, "adding up the energy");
        return;
    }
    size_t n = 0;
    m->energy.scr[n++] = (struct ehold){fs_row_hold_ready(j, end), energy_weight(m, j, gpu)};
    for (size_t i = 0; i < v->n; i++) {
        const fs_jobrt_t *x = &m->js.slots[v->v[i]];
        const fs_placement_t *xp = x != j && x->state == FS_JOBRT_RUNNING ? &x->r->place : NULL;
        if (!xp || xp->pool != pl->pool || xp->one.node != node || xp->n != 1 ||
            (xp->milli >= FS_GPU_MILLI_WHOLE && !xp->mig) ||
            (xp->mig ? !(xp->mig_bits >> (8 * gpu) & 0xff) : xp->gpu != gpu))
            continue;
        m->energy.scr[n++] = (struct ehold){x->r->start + x->r->att_startup, energy_weight(m, x, gpu)};
    }
    qsort(m->energy.scr, n, sizeof *m->energy.scr, cmp_ehold);
    double sm = 0;
    size_t k = 0, computing = 0;
    fs_time_t t = from;
    while (t < end) {
        for (; k < n && m->energy.scr[k].ready <= t; k++, computing++)
            sm += m->energy.scr[k].w;
        fs_time_t nx = k < n && m->energy.scr[k].ready < end ? m->energy.scr[k].ready : end;
        if (computing)
            fs_usage_energy(m->usage, pl->pool, t, nx, energy_above(ep, 1, sm));
        t = nx;
    }
}

/* cost.energy: power (docs/cost.md "Energy from the power model"): the draw
 * above idle of job j's hold ending at `end`, from the figures of its
 * /gpu_intervals rows (fs_row_intervals), into the usage.  Whole GPUs: each
 * draws the same from ready to end, one product.  Shared GPUs: energy_unit
 * per GPU.  The idle draw of every GPU is the cost model's (busy + idle
 * GPU-s). */
__attribute__((cold, noinline)) void fs_energy_hold(fs_model_t *m, const fs_jobrt_t *j,
                                                        fs_time_t end)
{
    const fs_placement_t *pl = &j->r->place;
    if (pl->pool >= m->cluster.n_pools || !(m->energy.pool[pl->pool].tdp > 0) || pl->n == 0)
        return;
    const struct epool *ep = &m->energy.pool[pl->pool];
    if (pl->milli >= FS_GPU_MILLI_WHOLE && !pl->mig) {
        fs_time_t ready = fs_row_hold_ready(j, end);
        if (ready >= end)
            return;
        const fs_slice_t *sl = fs_placement_slices(pl);
        uint64_t gpus = 0;
        for (uint32_t k = 0; k < pl->n; k++)
            gpus += sl[k].gpus;
        fs_usage_energy(m->usage, pl->pool, ready, end,
                        (double)gpus * energy_above(ep, 1, fs_row_job_activity(m, &j->job).sm));
        return;
    }
    if (!m->energy.unit) {
        uint64_t n = ep->gpu0;
        for (uint32_t p = pl->pool; p < m->cluster.n_pools; p++)
            n += m->cluster.pools[p].gpus_total;
        m->energy.unit = fs_calloc(n ? n : 1, sizeof *m->energy.unit);  /* every GPU: added up to 0 */
    }
    if (!m->energy.unit || fs_nidx_ensure(m)) {
        fs_mdl_fail(m, FS_ENOMEM, "adding up the energy");
        return;
    }
    uint32_t node = pl->one.node;
    if (!pl->mig) {
        energy_unit(m, j, node, pl->gpu, end);
        return;
    }
    for (uint32_t g = 0; g < m->cluster.pools[pl->pool].gpn && !m->err.code; g++)
        if (pl->mig_bits >> (8 * g) & 0xff)
            energy_unit(m, j, node, g, end);
}

void fs_energy_release(fs_model_t *m)
{
    fs_free(m->energy.pool);
    fs_free(m->energy.unit);
    fs_free(m->energy.scr);
}
