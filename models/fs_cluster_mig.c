/*
 * fs_cluster_mig: MIG pools of the cluster (fs_cluster_int.h): each GPU's
 * layout of instances, instances taken and freed, and re-cuts.
 */
#include "fs_cluster_int.h"

#include <string.h>

/* A MIG pool: every GPU gets the layout; the nodes are filed at level 0
 * (no whole GPU is ever free).  "all-disabled" leaves the pool whole. */
int fs_clmig_init(fs_cluster_t *c, fs_pool_t *p, const char *text, int per_gpu, fs_error_t *err)
{
    fs_error_t e;
    const fs_mig_model_t *m = fs_mig_model_lookup(p->gpu, &e);
    fs_mig_spec_t spec;
    if (!m || fs_mig_layout_parse(m, text, &spec, NULL, &e))
        return fs_error_set(err, FS_EINVAL, "cluster: pool '%s': mig: %s", p->name, e.msg);
    if (!spec.enabled)
        return 0;
    if (p->gpn > FS_CLUSTER_MIG_MAX_GPN)
        return fs_error_set(err, FS_EINVAL, "cluster: pool '%s': mig: %u GPUs per node (at most %u)",
                            p->name, p->gpn, FS_CLUSTER_MIG_MAX_GPN);
    if (fs_mig_layout_build(m, &spec, &p->mig_layout, &e))
        return fs_error_set(err, FS_EINVAL, "cluster: pool '%s': mig: %s", p->name, e.msg);
    if (!(p->mig_used = fs_calloc((size_t)p->n_nodes * p->gpn, 1)))
        return fs_error_set(err, FS_ENOMEM, "cluster: out of memory");
    p->mig = m;
    for (unsigned i = 0; i < p->mig_layout.ninst; i++) {
        unsigned pr = p->mig_layout.inst[i].profile;
        p->mig_pmask[pr] |= (uint8_t)(1u << i);
        p->mig_free[pr] += (uint64_t)p->n_nodes * p->gpn;
    }
    p->mig_total = (uint64_t)p->n_nodes * p->gpn * p->mig_layout.ninst;
    if (per_gpu) {  /* re-partitioning: every GPU its own layout, the static one at first */
        size_t ng = (size_t)p->n_nodes * p->gpn;
        if (!(p->mig_glay = fs_malloc(ng * sizeof *p->mig_glay)) ||
            !(p->mig_gpm = fs_malloc(ng * FS_MIG_MAX_PROFILES)))
            return fs_error_set(err, FS_ENOMEM, "cluster: out of memory");
        for (size_t g = 0; g < ng; g++) {
            p->mig_glay[g] = p->mig_layout;
            memcpy(p->mig_gpm + g * FS_MIG_MAX_PROFILES, p->mig_pmask, FS_MIG_MAX_PROFILES);
        }
        fs_mig_layout_t empty;
        memset(&empty, 0, sizeof empty);
        for (unsigned pr = 0; pr < m->nprofiles; pr++)
            p->mig_cap[pr] = (uint8_t)fs_mig_fits(m, &empty, pr);
    }
    p->gpus_free = 0;
    for (uint32_t n = p->first_node; n < p->first_node + p->n_nodes; n++) {
        c->node_free[n] = 0;
        fs_clidx_update(c, n);
    }
    return 0;
}

/* Free instances of profile pr on node (up or not). */
static uint32_t mig_node_free(const fs_pool_t *p, uint32_t node, unsigned pr)
{
    size_t g0 = (size_t)(node - p->first_node) * p->gpn;
    const uint8_t *u = p->mig_used + g0;
    uint32_t f = 0;
    for (uint32_t g = 0; g < p->gpn; g++)
        f += (uint32_t)__builtin_popcount(fs_clmig_mask(p, g0 + g, pr) & ~u[g] & 0xffu);
    return f;
}

int fs_cluster_mig_node_held(const fs_cluster_t *c, uint32_t node)
{
    const fs_pool_t *p = &c->pools[c->node_pool[node]];
    if (!p->mig)
        return 0;
    const uint8_t *u = p->mig_used + (size_t)(node - p->first_node) * p->gpn;
    for (uint32_t g = 0; g < p->gpn; g++)
        if (u[g])
            return 1;
    return 0;
}

uint32_t fs_cluster_node_busy(const fs_cluster_t *c, uint32_t node)
{
    const fs_pool_t *p = &c->pools[c->node_pool[node]];
    if (!p->mig)
        return p->gpn - c->node_free[node];
    const uint8_t *u = p->mig_used + (size_t)(node - p->first_node) * p->gpn;
    uint32_t b = 0;
    for (uint32_t g = 0; g < p->gpn; g++)
        b += u[g] != 0;
    return b;
}

/* GPU gi (pool-wide index) of a re-partitioning pool takes layout l: the
 * pool's instance total and the GPU's per-profile instance masks follow. */
static void mig_set_gpu(fs_pool_t *p, size_t gi, const fs_mig_layout_t *l)
{
    fs_mig_layout_t *cur = &p->mig_glay[gi];
    p->mig_total = p->mig_total - cur->ninst + l->ninst;
    *cur = *l;
    uint8_t *mk = p->mig_gpm + gi * FS_MIG_MAX_PROFILES;
    memset(mk, 0, FS_MIG_MAX_PROFILES);
    for (unsigned i = 0; i < l->ninst; i++)
        mk[l->inst[i].profile] |= (uint8_t)(1u << i);
}

int fs_cluster_mig_recut(fs_cluster_t *c, uint32_t node, unsigned pr)
{
    fs_pool_t *p = &c->pools[c->node_pool[node]];
    if (!p->mig_glay || c->node_up[node] || pr >= p->mig->nprofiles ||
        fs_cluster_mig_node_held(c, node))
        return FS_EINVAL;
    size_t g0 = (size_t)(node - p->first_node) * p->gpn;
    int n = 0;
    for (uint32_t g = 0; g < p->gpn; g++) {
        fs_mig_layout_t cut;
        n += (int)fs_mig_recut(p->mig, &p->mig_glay[g0 + g], 0, pr, &cut);
        mig_set_gpu(p, g0 + g, &cut);
    }
    c->gen++;
    return n;
}

int fs_cluster_mig_set(fs_cluster_t *c, uint32_t node, const fs_mig_layout_t *lay)
{
    fs_pool_t *p = &c->pools[c->node_pool[node]];
    if (!p->mig_glay || c->node_up[node] || fs_cluster_mig_node_held(c, node))
        return FS_EINVAL;
    for (uint32_t g = 0; g < p->gpn; g++)
        if (fs_mig_layout_check(p->mig, &lay[g], NULL))
            return FS_EINVAL;
    size_t g0 = (size_t)(node - p->first_node) * p->gpn;
    for (uint32_t g = 0; g < p->gpn; g++)
        mig_set_gpu(p, g0 + g, &lay[g]);
    c->gen++;
    return 0;
}

int fs_cluster_mig_fits(const fs_cluster_t *c, uint32_t pool, int32_t code, uint32_t k)
{
    const fs_pool_t *p = &c->pools[pool];
    int pr = p->mig ? fs_mig_profile_of_code(p->mig, code) : -1;
    if (pr < 0 || k == 0 || p->mig_free[pr] < k)
        return 0;
    if (k == 1)
        return 1;
    for (uint32_t n = p->first_node; n < p->first_node + p->n_nodes; n++)
        if (c->node_up[n] && mig_node_free(p, n, (unsigned)pr) >= k)
            return 1;
    return 0;
}

int fs_cluster_mig_could_fit(const fs_cluster_t *c, uint32_t pool, int32_t code, uint32_t k)
{
    const fs_pool_t *p = &c->pools[pool];
    int pr = p->mig ? fs_mig_profile_of_code(p->mig, code) : -1;
    if (pr >= 0 && p->mig_glay)  /* re-partitioning: what a re-cut node would hold */
        return k >= 1 && k <= (uint64_t)p->gpn * p->mig_cap[pr];
    return pr >= 0 && k >= 1 &&
           k <= (uint64_t)p->gpn * (uint32_t)__builtin_popcount(p->mig_pmask[pr]);
}

int fs_cluster_mig_take(fs_cluster_t *c, uint32_t pool, int32_t code, uint32_t k, fs_placement_t *out)
{
    fs_pool_t *p = &c->pools[pool];
    memset(out, 0, sizeof *out);
    out->pool = pool;
    if (!fs_cluster_mig_fits(c, pool, code, k))
        return 0;
    unsigned pr = (unsigned)fs_mig_profile_of_code(p->mig, code);
    uint32_t best = FS_CL_NONE, best_free = UINT32_MAX;
    for (uint32_t n = p->first_node; n < p->first_node + p->n_nodes; n++) {
        if (!c->node_up[n])
            continue;
        uint32_t f = mig_node_free(p, n, pr);
        if (f >= k && f < best_free) {
            best = n;
            best_free = f;
        }
    }
    if (best == FS_CL_NONE)
        return 0;
    size_t g0 = (size_t)(best - p->first_node) * p->gpn;
    uint8_t *u = p->mig_used + g0;
    uint32_t need = k;
    for (uint32_t g = 0; g < p->gpn && need; g++) {
        uint8_t was = u[g], mk = fs_clmig_mask(p, g0 + g, pr);
        for (unsigned i = 0; i < FS_MIG_MAX_INSTANCES && need; i++)
            if ((mk >> i & 1u) && !(u[g] >> i & 1u)) {
                u[g] |= (uint8_t)(1u << i);
                out->mig_bits |= UINT64_C(1) << (8 * g + i);
                need--;
            }
        if (!was && u[g]) {
            c->gpus_busy++;
            p->gpus_busy++;
        }
    }
    out->gpu = (uint32_t)__builtin_ctzll(out->mig_bits) / 8;
    out->n = 1;
    out->one = (fs_slice_t){best, k};
    out->mig = code;
    out->milli = p->mig->profile[pr].gpu_milli;
    p->mig_free[pr] -= k;
    p->mig_busy += k;
    c->milli_busy += (uint64_t)k * out->milli;
    c->gen++;
    return 1;
}

void fs_clmig_free(fs_cluster_t *c, fs_pool_t *p, const fs_placement_t *pl)
{
    unsigned pr = (unsigned)fs_mig_profile_of_code(p->mig, pl->mig);
    uint8_t *u = p->mig_used + (size_t)(pl->one.node - p->first_node) * p->gpn;
    for (uint32_t g = 0; g < p->gpn; g++) {
        uint8_t bits = (uint8_t)(pl->mig_bits >> (8 * g));
        if (!bits)
            continue;
        u[g] &= (uint8_t)~bits;
        if (!u[g]) {
            c->gpus_busy--;
            p->gpus_busy--;
            c->gpus_busy_down -= !c->node_up[pl->one.node];
        }
    }
    if (c->node_up[pl->one.node])
        p->mig_free[pr] += pl->one.gpus;
    p->mig_busy -= pl->one.gpus;
    c->milli_busy -= (uint64_t)pl->one.gpus * pl->milli;
    c->gen++;
}

