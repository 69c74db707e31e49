/*
 * The model's pool sets: the pools each job may use (its GPU type's, its
 * taints', single-node jobs' by node size, a service's), and the fit checks
 * over them.  Prefix fs_pset_ (and the fs_model_ fit and pool queries of
 * fs_model.h), state fs_poolsets_t.
 */
#include "fs_model_int.h"
#include "fs_taint.h"
#include "fs_fleetcfg.h"

/* ---- pool sets ---------------------------------------------------------- */

/* Makes sure source GPU type t has its pool set (built from the type's name
 * the first time it is seen).  Returns 0 or FS_ENOMEM. */
/* Opens a new set (its pools are appended with set_add, then set_end). */
static int set_begin(fs_model_t *m)
{
    if (m->psets.n_sets >= INT16_MAX)     /* fs_jobrt_t.type_pools is 16 bits */
        return FS_ELIMIT;
    if (fs_grow((void **)&m->psets.set_off, &m->psets.set_off_cap, m->psets.n_sets + 2, sizeof *m->psets.set_off))
        return FS_ENOMEM;
    if (m->psets.n_sets == 0)
        m->psets.set_off[0] = 0;
    return 0;
}

static int set_add(fs_model_t *m, uint32_t p)
{
    if (fs_grow((void **)&m->psets.set_pool, &m->psets.set_pool_cap, m->psets.set_pool_n + 1, sizeof *m->psets.set_pool))
        return FS_ENOMEM;
    m->psets.set_pool[m->psets.set_pool_n++] = p;
    return 0;
}

static int32_t set_end(fs_model_t *m)
{
    m->psets.set_off[++m->psets.n_sets] = m->psets.set_pool_n;
    return (int32_t)(m->psets.n_sets - 1);
}

int fs_pset_of_type(fs_model_t *m, int32_t t)
{
    while (m->psets.n_types <= (size_t)t) {
        const char *name = fs_source_gpu_type_name(m->src, (int32_t)m->psets.n_types);
        if (fs_grow((void **)&m->psets.type_set, &m->psets.cap_type_set, m->psets.n_types + 1, sizeof *m->psets.type_set))
            return FS_ENOMEM;
        int rc = set_begin(m);
        if (rc)
            return rc;
        for (uint32_t p = 0; name && p < m->cluster.n_pools; p++) {
            /* the pool's GPU model or name, or one of 'A|B|C' (openb gpu_spec);
             * "V100M32" also names machine-list pools "V100M32x8" */
            if (!fs_fleetcfg_type_allows(name, m->cluster.pools[p].name, m->cluster.pools[p].gpu))
                continue;
            if (set_add(m, p))
                return FS_ENOMEM;
        }
        m->psets.type_set[m->psets.n_types++] = set_end(m);
    }
    return 0;
}

/* The tolerations of tenant t (scheduler.tolerations' entry of its name), NULL none. */
static const char *tolerations_of(const fs_model_t *m, int32_t t)
{
    const fs_sched_cfg_t *sc = &m->cfg->scheduler;
    const char *name = t >= 0 ? fs_source_tenant_name(m->src, t) : NULL;
    for (size_t i = 0; name && i < sc->n_tolerations; i++)
        if (strcmp(sc->toleration_tenants[i], name) == 0)
            return sc->toleration_lists[i];
    return NULL;
}

/* Pool p stays in a derived set: single-node jobs of `key` GPUs need nodes
 * of >= key GPUs (Kubernetes places a pod on one node: openb, PAI pods;
 * traces set FS_JOB_SINGLE_NODE); tenant `key`'s jobs need its taints
 * tolerated. */
static int dset_keeps(const fs_model_t *m, uint32_t p, int kind, int64_t key)
{
    if (kind == DSET_NODE_GPUS)
        return (uint64_t)key <= m->cluster.pools[p].gpn;
    return fs_taint_tolerated(m->cfg->cluster.pools[p].taints, tolerations_of(m, (int32_t)key));
}

/* The pools of set `base` (-1: all) that dset_keeps(kind, key): base itself
 * when it keeps all of them, else a new set (possibly empty: the job can
 * never start), made once per (base, kind, key). */
int fs_pset_derived(fs_model_t *m, int32_t base, int kind, int64_t key, int32_t *out)
{
    for (size_t i = 0; i < m->psets.n_dsets; i++)
        if (m->psets.dsets[i].base == base && m->psets.dsets[i].kind == kind && m->psets.dsets[i].key == key) {
            *out = m->psets.dsets[i].set;
            return 0;
        }
    size_t b = base < 0 ? 0 : m->psets.set_off[base], e = base < 0 ? m->cluster.n_pools : m->psets.set_off[base + 1];
    int all = 1;
    for (size_t i = b; i < e && all; i++)
        all = dset_keeps(m, base < 0 ? (uint32_t)i : m->psets.set_pool[i], kind, key);
    int32_t set = base;
    if (!all) {
        int rc = set_begin(m);
        if (rc)
            return rc;
        for (size_t i = b; i < e; i++) {
            uint32_t p = base < 0 ? (uint32_t)i : m->psets.set_pool[i];
            if (dset_keeps(m, p, kind, key) && set_add(m, p))
                return FS_ENOMEM;
        }
        set = set_end(m);
    }
    if (fs_grow((void **)&m->psets.dsets, &m->psets.cap_dsets, m->psets.n_dsets + 1, sizeof *m->psets.dsets))
        return FS_ENOMEM;
    m->psets.dsets[m->psets.n_dsets++] = (struct dset){base, kind, key, set};
    *out = set;
    return 0;
}

/* Any pool of the job's type (out of line: the loop's register saves
 * would otherwise be paid by the common case below). */
__attribute__((noinline)) static int fits_pools(const fs_model_t *m, const fs_jobrt_t *j)
{
    uint32_t p;
    if (j->job.mig) {   /* MIG pods: only MIG pools with the profile (docs/mig.md) */
        FOR_POOLS(m, j->type_pools, p)
            if (fs_cluster_mig_fits(&m->cluster, p, j->job.mig, j->job.gpus) &&
                (!m->mods.gate || m->mods.gate->allows(m->mods.gate_ud, &m->cluster, p, &j->job, m->sim.now)))
                return 1;
        return 0;
    }
    fs_podreq_t q = fs_jobq_podreq(&j->job);
    FOR_POOLS(m, j->type_pools, p)
        if ((j->job.flags & FS_JOB_SINGLE_NODE ? fs_cluster_fits_pod(&m->cluster, p, &q)
                                               : fs_cluster_fits_req(&m->cluster, p, j->job.gpus,
                                                                     j->job.gpu_milli)) &&
            (!m->mods.gate || m->mods.gate->allows(m->mods.gate_ud, &m->cluster, p, &j->job, m->sim.now)))
            return 1;
    return 0;
}

const fs_cluster_t *fs_model_one_pool(const fs_model_t *m)
{
    return m->cluster.one_whole && !m->mods.gate ? &m->cluster : NULL;
}

int fs_model_fits(const fs_model_t *m, uint32_t slot)
{
    const fs_jobrt_t *j = &m->js.slots[slot];
    /* the common case: whole GPUs of any type on a one-pool fleet */
    const fs_cluster_t *one = fs_model_one_pool(m);
    if (one && j->type_pools < 0 && j->job.gpu_milli >= FS_GPU_MILLI_WHOLE && j->job.gpus &&
        !(j->job.flags & FS_JOB_SINGLE_NODE && (j->job.cpu_milli || j->job.mem_mib)))
        return fs_cluster_fits(one, 0, j->job.gpus);
    return fits_pools(m, j);
}

size_t fs_model_pool_set(const fs_model_t *m, int32_t set, const uint32_t **pools)
{
    if (set < 0) {
        *pools = NULL;
        return m->cluster.n_pools;
    }
    *pools = m->psets.set_pool + m->psets.set_off[set];
    return m->psets.set_off[set + 1] - m->psets.set_off[set];
}

int fs_pset_could_ever_fit(const fs_model_t *m, const fs_jobrt_t *j)
{
    uint32_t p;
    if (j->job.mig) {
        FOR_POOLS(m, j->type_pools, p)
            if (fs_cluster_mig_could_fit(&m->cluster, p, j->job.mig, j->job.gpus))
                return 1;
        return 0;
    }
    fs_podreq_t q = fs_jobq_podreq(&j->job);
    FOR_POOLS(m, j->type_pools, p)
        if (j->job.flags & FS_JOB_SINGLE_NODE ? fs_cluster_could_fit_pod(&m->cluster, p, &q)
                                              : fs_cluster_could_fit(&m->cluster, p, j->job.gpus))
            return 1;
    return 0;
}

size_t fs_model_job_pools(fs_model_t *m, uint32_t slot, const uint32_t **pools)
{
    const fs_jobrt_t *j = &m->js.slots[slot];
    if (j->type_pools < 0) {
        *pools = NULL;
        return 0;
    }
    *pools = m->psets.set_pool + m->psets.set_off[j->type_pools];
    return m->psets.set_off[j->type_pools + 1] - m->psets.set_off[j->type_pools];
}

int fs_model_make_pool_set(fs_model_t *m, const uint32_t *pools, size_t n, int32_t *set)
{
    if (n == 0) {
        *set = -1;
        return 0;
    }
    int rc = set_begin(m);
    if (rc)
        return rc;
    for (size_t i = 0; i < n; i++)
        if (set_add(m, pools[i]))
            return FS_ENOMEM;
    *set = set_end(m);
    return 0;
}

void fs_pset_release(fs_model_t *m)
{
    fs_free(m->psets.set_pool);
    fs_free(m->psets.set_off);
    fs_free(m->psets.type_set);
    fs_free(m->psets.dsets);
}
