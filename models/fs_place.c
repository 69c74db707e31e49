#include "fs_place.h"
#include "fs_catalog.h"
#include "../sim/fs_alloc.h"
#include "../sim/fs_rng.h"
#include "../traces/fs_job.h"

#include <math.h>
#include <string.h>
#include <strings.h>

#include "fs_place_int.h"

/* ---- lifecycle ------------------------------------------------------------- */

/* The speed rules (cluster.speed, cluster.speed_catalog), shared by the
 * placer's tables and fs_speed_factor. */
static int speed_row_matches(const fs_speed_cfg_t *row, const fs_pool_t *pool)
{
    return row->gpu && (strcasecmp(row->gpu, pool->gpu) == 0 || strcasecmp(row->gpu, pool->name) == 0);
}

static double speed_default(const fs_cluster_cfg_t *cc, int cat)
{
    return cc && cc->speed_catalog && cat >= 0 ? fs_catalog_get((size_t)cat)->speed : 1.0;
}

int fs_placer_create(const fs_cluster_t *c, int kind, uint32_t candidates,
                     const fs_cluster_cfg_t *cc, uint64_t seed, uint64_t replication,
                     fs_placer_t **out, fs_error_t *err)
{
    *out = NULL;
    fs_placer_t *pl = fs_calloc(1, sizeof *pl);
    if (!pl)
        return fs_error_set(err, FS_ENOMEM, "placement: out of memory");
    pl->kind = kind == FS_PLACE_BINPACK ? FS_PLACE_BEST_FIT : kind;
    pl->k = candidates;
    pl->wgpu = 1;
    for (uint32_t i = 0; i < c->n_pools; i++) {
        if (c->pools[i].cpu_milli > pl->spec_cpu)
            pl->spec_cpu = c->pools[i].cpu_milli;
        if (c->pools[i].gpn * 1000.0 > pl->spec_gpu)
            pl->spec_gpu = c->pools[i].gpn * 1000.0;
    }
    pl->n_pools = c->n_pools;
    pl->speed_default = fs_malloc(c->n_pools * sizeof *pl->speed_default);
    if (!pl->speed_default)
        goto nomem;
    for (uint32_t i = 0; i < c->n_pools; i++) {
        int cat = c->pools[i].catalog;
        pl->speed_default[i] = speed_default(cc, cat);
    }
    if (cc && cc->n_speed) {
        pl->speed_rows = fs_calloc(cc->n_speed, sizeof *pl->speed_rows);
        if (!pl->speed_rows)
            goto nomem;
        pl->speed_pool = fs_calloc(cc->n_speed * c->n_pools, 1);
        if (!pl->speed_pool)
            goto nomem;
        pl->n_speed = cc->n_speed;
        for (size_t i = 0; i < cc->n_speed; i++) {
            pl->speed_rows[i] = cc->speed[i];
            pl->speed_rows[i].gpu = NULL;
            for (uint32_t p = 0; p < c->n_pools; p++)
                pl->speed_pool[i * c->n_pools + p] = speed_row_matches(&cc->speed[i], &c->pools[p]);
        }
    }
    pl->st = fs_malloc(sizeof *pl->st);
    if (!pl->st)
        goto nomem;
    /* random placement, and random ties under node_score: kubernetes (set
     * later): the stream is made for every kind, drawn from only by those */
    if (fs_rng_init(&pl->rng, seed, replication, FS_RNG_PLACE, 0))
        goto nomem;
    if (pl->kind == FS_PLACE_FGD) {
        pl->fgd = fs_calloc(c->n_pools, sizeof *pl->fgd);
        if (!pl->fgd)
            goto nomem;
    }
    *out = pl;
    return 0;
nomem:
    fs_placer_destroy(pl);
    return fs_error_set(err, FS_ENOMEM, "placement: out of memory");
}

void fs_placer_destroy(fs_placer_t *pl)
{
    if (!pl)
        return;
    if (pl->rng.g)
        fs_rng_release(&pl->rng);
    fs_free(pl->speed_rows);
    fs_free(pl->speed_pool);
    fs_free(pl->st);
    fs_free(pl->speed_default);
    if (pl->fgd)
        for (uint32_t i = 0; i < pl->n_pools; i++) {
            fs_free(pl->fgd[i].sh);
            fs_free(pl->fgd[i].lev);
            fs_free(pl->fgd[i].aw);
            fs_free(pl->fgd[i].ct);
            fs_free(pl->fgd[i].mr);
        }
    fs_free(pl->fgd);
    fs_free(pl->cand);
    fs_free(pl->podpools);
    fs_free(pl->allowed);
    for (int l = 0; l < 3; l++)
        fs_free(pl->nu[l]);
    fs_free(pl->ord);
    fs_free(pl->heap);
    fs_free(pl->sl);
    fs_free(pl);
}

void fs_placer_set_net(fs_placer_t *pl, const fs_place_net_t *net) { pl->net = net; }

int fs_placer_learns(const fs_placer_t *pl) { return pl->kind == FS_PLACE_FGD; }

void fs_placer_set_scoring(fs_placer_t *pl, int node_score, double w_gpu, double w_cpu,
                           double w_mem)
{
    pl->node_score = node_score;
    pl->integer = node_score != FS_SCORE_EXACT;
    pl->wgpu = w_gpu;
    pl->wcpu = w_cpu;
    pl->wmem = w_mem;
}

void fs_placer_set_kube(fs_placer_t *pl, uint32_t percentage, double balanced_weight)
{
    pl->pct_score = percentage;
    pl->wbal = balanced_weight;
}

/* kubernetes/kubernetes pkg/scheduler/schedule_one.go numFeasibleNodesToFind
 * (minFeasibleNodesToFind 100, minFeasibleNodesPercentageToFind 5; read, not
 * copied). */
uint32_t fs_kube_nodes_to_find(uint32_t n_all, uint32_t percentage)
{
    if (n_all < 100)
        return n_all;
    int64_t pct = percentage;
    if (pct == 0) {
        pct = 50 - (int64_t)n_all / 125;
        if (pct < 5)
            pct = 5;
    }
    int64_t n = (int64_t)n_all * pct / 100;
    return n < 100 ? 100 : (uint32_t)n;
}

double fs_speed_factor(const fs_cluster_t *c, const fs_cluster_cfg_t *cc, uint32_t pool, int32_t cls)
{
    for (size_t i = 0; cc && i < cc->n_speed; i++)
        if ((int64_t)cc->speed[i].job_class == cls && speed_row_matches(&cc->speed[i], &c->pools[pool]))
            return cc->speed[i].factor;
    return speed_default(cc, c->pools[pool].catalog);
}

double fs_placer_speed(const fs_placer_t *pl, uint32_t pool, int32_t cls)
{
    for (size_t i = 0; i < pl->n_speed; i++)
        if ((int64_t)pl->speed_rows[i].job_class == cls && pl->speed_pool[i * pl->n_pools + pool])
            return pl->speed_rows[i].factor;
    return pl->speed_default[pool];
}

/* ---- FGD tables ---------------------------------------------------------------- */

int fs_placer_observe(fs_placer_t *pl, const fs_cluster_t *c, uint32_t g, uint32_t milli,
                      const uint32_t *pools, size_t n_pools, uint64_t weight)
{
    fs_podreq_t q = {g, milli, 0, 0};
    return fs_placer_observe_pod(pl, c, &q, pools, n_pools, weight);
}

/* Adds w to a known shape x in built tables (its level and milli rank
 * exist): the levels at or above its CPU, whole counts from x->g up or
 * fractional ranks up to its own.  O(levels x (gpn or ranks)); the same
 * sums as fgd_rebuild. */
static void fgd_add(fgd_pool_t *t, uint32_t gpn, const fgd_shape_t *x, int64_t w)
{
    size_t lo = 0, hi = t->n_lev;   /* the first level with lev >= x->cpu (== it) */
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (t->lev[mid] < x->cpu)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t k = lo; k < t->n_lev; k++) {
        if (x->milli < WHOLE) {
            int64_t *f = t->ct + k * (t->n_m + 1);
            for (uint32_t r = 0; r < t->mr[x->milli]; r++)
                f[r] += w;
        } else {
            int64_t *a = t->aw + k * (gpn + 1);
            for (uint32_t g = x->g; g <= gpn; g++)
                a[g] += w;
        }
    }
}

int fs_placer_observe_pod(fs_placer_t *pl, const fs_cluster_t *c, const fs_podreq_t *q,
                          const uint32_t *pools, size_t n_pools, uint64_t weight)
{
    if (!pl->fgd || weight == 0)
        return 0;
    size_t n = pools ? n_pools : c->n_pools;
    /* a CPU-only shape uses no GPU: all free GPU capacity is a fragment to
     * it on every node (it is in wtot only) */
    for (size_t i = 0; i < n && q->g > 0; i++) {
        uint32_t p = pools ? pools[i] : (uint32_t)i;
        const fs_pool_t *pp = &c->pools[p];
        fgd_pool_t *t = &pl->fgd[p];
        if (q->milli >= WHOLE && q->g > pp->gpn)
            continue;   /* never fits one node of this pool: counts as infeasible */
        uint32_t cpu = pp->cpu_milli ? q->cpu : 0;
        if (pp->cpu_milli && cpu > pp->cpu_milli)
            continue;   /* never fits a node's CPU: infeasible everywhere */
        size_t k = 0;
        while (k < t->n_sh && !(t->sh[k].g == q->g && t->sh[k].milli == q->milli &&
                                t->sh[k].cpu == cpu))
            k++;
        if (k == t->n_sh) {
            if (fs_grow((void **)&t->sh, &t->cap_sh, t->n_sh + 1, sizeof *t->sh))
                return FS_ENOMEM;
            t->sh[t->n_sh++] = (fgd_shape_t){q->g, q->milli, cpu, 0};
            t->dirty = 1;   /* a new shape may add a level or a milli rank */
        }
        t->sh[k].w += (int64_t)weight;
        if (!t->dirty)
            fgd_add(t, pp->gpn, &t->sh[k], (int64_t)weight);
    }
    pl->wtot += (int64_t)weight;
    return 0;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}



/* Rebuilds a dirty pool's levels: O(shapes x levels + levels x (gpn + ranks) + 1001). */
static int fgd_rebuild(fgd_pool_t *t, uint32_t gpn)
{
    size_t nl = 0;
    if (fs_grow((void **)&t->lev, &t->cap_lev, t->n_sh + 1, sizeof *t->lev))
        return FS_ENOMEM;
    for (size_t i = 0; i < t->n_sh; i++)
        t->lev[nl++] = t->sh[i].cpu;
    qsort(t->lev, nl, sizeof *t->lev, cmp_u32);
    size_t u = 0;
    for (size_t i = 0; i < nl; i++)
        if (u == 0 || t->lev[u - 1] != t->lev[i])
            t->lev[u++] = t->lev[i];
    if (!t->mr && !(t->mr = fs_malloc((WHOLE + 1) * sizeof *t->mr)))
        return FS_ENOMEM;
    memset(t->mr, 0, (WHOLE + 1) * sizeof *t->mr);
    for (size_t i = 0; i < t->n_sh; i++)
        if (t->sh[i].milli < WHOLE)
            t->mr[t->sh[i].milli] = 1;
    for (uint32_t f = 1; f <= WHOLE; f++)   /* distinct fractional milli <= f */
        t->mr[f] = (uint16_t)(t->mr[f] + t->mr[f - 1]);
    size_t nm = t->mr[WHOLE];
    int64_t *aw = fs_realloc(t->aw, (u ? u : 1) * (gpn + 1) * sizeof *aw);
    if (aw)
        t->aw = aw;
    int64_t *ct = aw ? fs_realloc(t->ct, (u ? u : 1) * (nm + 1) * sizeof *ct) : NULL;
    if (ct)
        t->ct = ct;
    if (!aw || !ct)
        return FS_ENOMEM;
    t->n_lev = u;
    t->n_m = nm;
    for (size_t k = 0; k < u; k++) {
        int64_t *a = t->aw + k * (gpn + 1), *f = t->ct + k * (nm + 1);
        memset(a, 0, (gpn + 1) * sizeof *a);
        memset(f, 0, (nm + 1) * sizeof *f);
        for (size_t i = 0; i < t->n_sh; i++) {
            const fgd_shape_t *x = &t->sh[i];
            if (x->cpu > t->lev[k])
                continue;
            if (x->milli < WHOLE)
                f[t->mr[x->milli] - 1] += x->w;   /* by rank first, summed below */
            else
                a[x->g] += x->w;
        }
        for (uint32_t g = 1; g <= gpn; g++)
            a[g] += a[g - 1];
        for (size_t r = nm; r-- > 0;)   /* f[r]: weight of ranks >= r; f[nm] = 0 */
            f[r] += f[r + 1];
    }
    t->dirty = 0;
    return 0;
}

/* The tables a node with `cpu` milli-cores free sees in pool p: *tb, its
 * aw NULL when no shape is feasible there (or none observed).
 * cpu_modelled = 0: every level. */
static int fgd_level(fs_placer_t *pl, const fs_cluster_t *c, uint32_t p, uint32_t cpu,
                     int cpu_modelled, fgd_tab_t *tb)
{
    fgd_pool_t *t = &pl->fgd[p];
    uint32_t gpn = c->pools[p].gpn;
    *tb = (fgd_tab_t){NULL, NULL, NULL};
    if (t->dirty && fgd_rebuild(t, gpn))
        return FS_ENOMEM;
    if (t->n_lev == 0)
        return 0;
    size_t k = t->n_lev;
    if (cpu_modelled) {
        size_t lo = 0, hi = t->n_lev;   /* levels with lev <= cpu: [0, lo) */
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (t->lev[mid] <= cpu)
                lo = mid + 1;
            else
                hi = mid;
        }
        k = lo;
    }
    if (k == 0)
        return 0;
    *tb = (fgd_tab_t){t->aw + (k - 1) * (gpn + 1), t->ct + (k - 1) * (t->n_m + 1), t->mr};
    return 0;
}

static void node_state(const fs_cluster_t *c, uint32_t node, nstate_t *st)
{
    const fs_pool_t *p = &c->pools[c->node_pool[node]];
    st->a = c->node_free[node];
    st->ns = 0;
    if (!p->sused)
        return;
    for (uint32_t k = 0; k < p->gpn; k++) {
        uint32_t u = fs_cluster_slot_used(c, p, node, k);
        if (u) {
            st->sf[st->ns] = WHOLE - u;
            st->slot[st->ns++] = (int)k;
        }
    }
}

/*
 * F_n x W, from the definition (Weng et al. 2023, section 4): for a task
 * shape m the node's fragment is all its free GPU capacity T when m cannot
 * run on it, else the free capacity of the GPUs whose free part is below
 * min(demand, 1 GPU); F_n = sum_m w_m * fragment_m.  With a fully free
 * GPUs and shared GPUs of free s_i (b = max s_i):
 *   whole shapes of g <= a GPUs fit; their fragment is S = sum s_i;
 *   fractional shapes of d milli fit if a >= 1 or d <= b; their fragment is
 *   the sum of s_i < d;
 *   all other shapes (and those not allowed on the pool) see T.
 */
static int64_t fgd_F(const fgd_tab_t *tb, int64_t wtot, const uint32_t *sf, uint32_t ns,
                     uint32_t a)
{
    int64_t T = (int64_t)a * WHOLE, S = 0;
    uint32_t b = 0;
    for (uint32_t i = 0; i < ns; i++) {
        S += sf[i];
        if (sf[i] > b)
            b = sf[i];
    }
    T += S;
    if (!tb->aw)
        return T * wtot;
    const int64_t *aw = tb->aw, *ct = tb->ct;    /* weight of milli > f: ct[mr[f]] */
    const uint16_t *mr = tb->mr;
    int64_t cut = a == 0 ? ct[mr[b]] : 0;
    int64_t feas = aw[a] + ct[mr[0]] - cut;
    int64_t F = T * (wtot - feas) + S * aw[a];
    for (uint32_t i = 0; i < ns; i++)
        F += (int64_t)sf[i] * (ct[mr[sf[i]]] - cut);
    return F;
}

int64_t fs_placer_fragmentation(fs_placer_t *pl, const fs_cluster_t *c, uint32_t node)
{
    node_state(c, node, pl->st);
    fgd_tab_t tb = {NULL, NULL, NULL};
    uint32_t p = c->node_pool[node];
    if (pl->fgd && fgd_level(pl, c, p, c->pools[p].cpu_milli ? c->node_cpu[node] : 0,
                             c->pools[p].cpu_milli != 0, &tb))
        return -1;
    return fgd_F(&tb, pl->wtot, pl->st->sf, pl->st->ns, pl->st->a);
}

/* ---- scored placement ---------------------------------------------------------- */

typedef struct choice {
    uint32_t node;
    int slot;               /* share: open slot, -1 = a new shared GPU */
    int64_t num, den;       /* score num/den, higher is better */
} choice_t;

static int better(const choice_t *a, const choice_t *b)
{
    if (b->node == NONE)
        return 1;
    /* best_fit, spread: num, den <= 2^20; fgd: den == 1 -- no overflow */
    int64_t l = a->num * b->den, r = b->num * a->den;
    return l > r || (l == r && a->node < b->node);
}

/* The best option on one node for the placer's kind. */
static choice_t score_node(fs_placer_t *pl, const fs_cluster_t *c, uint32_t node, uint32_t g,
                           uint32_t milli, nstate_t *st)
{
    const fs_pool_t *p = &c->pools[c->node_pool[node]];
    choice_t ch = {node, -1, 0, 1};
    node_state(c, node, st);
    int64_t cap = (int64_t)p->gpn * WHOLE, T = (int64_t)st->a * WHOLE;
    for (uint32_t i = 0; i < st->ns; i++)
        T += st->sf[i];
    int frac = milli < WHOLE;
    int64_t req = frac ? milli : (int64_t)g * WHOLE;
    if (pl->kind == FS_PLACE_BEST_FIT || pl->kind == FS_PLACE_SPREAD) {
        int best = pl->kind == FS_PLACE_BEST_FIT;
        ch.num = best ? cap - (T - req) : T - req;
        ch.den = cap;
        if (frac) {     /* the GPU: best_fit packs (fewest free), spread opens a new one */
            int s = -1;
            uint32_t sv = best ? UINT32_MAX : 0;
            for (uint32_t i = 0; i < st->ns; i++)
                if (st->sf[i] >= milli && (best ? st->sf[i] < sv : st->sf[i] > sv)) {
                    s = st->slot[i];
                    sv = st->sf[i];
                }
            ch.slot = (best || st->a == 0) ? s : -1;
        }
        return ch;
    }
    /* fgd: minimise the growth of F over the options (GPU-only requests:
     * the node's CPU is unchanged, so one level serves before and after) */
    fgd_tab_t tb;
    uint32_t pi = c->node_pool[node];
    if (fgd_level(pl, c, pi, c->pools[pi].cpu_milli ? c->node_cpu[node] : 0,
                  c->pools[pi].cpu_milli != 0, &tb)) {
        ch.node = NONE;     /* out of memory: reported by the caller */
        return ch;
    }
    int64_t F0 = fgd_F(&tb, pl->wtot, st->sf, st->ns, st->a), bestd = INT64_MAX;
    if (!frac) {
        bestd = fgd_F(&tb, pl->wtot, st->sf, st->ns, st->a - g) - F0;
    } else {
        for (uint32_t i = 0; i < st->ns; i++) {
            if (st->sf[i] < milli)
                continue;
            st->sf[i] -= milli;
            int64_t d = fgd_F(&tb, pl->wtot, st->sf, st->ns, st->a) - F0;
            st->sf[i] += milli;
            if (d < bestd) {
                bestd = d;
                ch.slot = st->slot[i];
            }
        }
        if (st->a >= 1) {
            st->sf[st->ns] = WHOLE - milli;
            int64_t d = fgd_F(&tb, pl->wtot, st->sf, st->ns + 1, st->a - 1) - F0;
            if (d < bestd) {
                bestd = d;
                ch.slot = -1;
            }
        }
    }
    ch.num = -bestd;
    ch.den = 1;
    return ch;
}

static int ensure_cand(fs_placer_t *pl, size_t need)
{
    if (need <= pl->cand_cap)
        return 0;
    uint32_t *c = fs_realloc(pl->cand, need * sizeof *c);
    if (!c)
        return FS_ENOMEM;
    pl->cand = c;
    pl->cand_cap = need;
    return 0;
}

static int place_scored(fs_placer_t *pl, fs_cluster_t *c, const uint32_t *pools, size_t np,
                        uint32_t g, uint32_t milli, fs_placement_t *out)
{
    nstate_t *st = pl->st;
    choice_t best = {NONE, -1, 0, 1};
    for (size_t i = 0; i < np; i++) {
        uint32_t p = pools ? pools[i] : (uint32_t)i;
        const fs_pool_t *pp = &c->pools[p];
        if (g > pp->gpn || !fs_cluster_fits_req(c, p, g, milli))
            continue;
        /* no shared GPU in the pool: nodes of one level are alike, one each */
        uint32_t k = pp->n_shared == 0 ? 1 : pl->k;
        if (ensure_cand(pl, fs_cluster_candidates_cap(c, p, k)))
            return FS_ENOMEM;
        size_t n = fs_cluster_candidates(c, p, g, milli, k, pl->cand);
        for (size_t j = 0; j < n; j++) {
            choice_t ch = score_node(pl, c, pl->cand[j], g, milli, st);
            if (ch.node == NONE)
                return FS_ENOMEM;
            if (better(&ch, &best))
                best = ch;
        }
    }
    if (best.node == NONE)
        return 0;
    return fs_cluster_take(c, best.node, g, milli, best.slot, out);
}

/* ---- random ------------------------------------------------------------------------ */

/* A uniformly random GPU option on node: an open shared GPU that fits or
 * one of the fully free GPUs. */
static int random_slot(fs_placer_t *pl, const fs_cluster_t *c, uint32_t node, uint32_t milli)
{
    nstate_t *st = pl->st;
    node_state(c, node, st);
    uint32_t fit = 0;
    for (uint32_t i = 0; i < st->ns; i++)
        fit += st->sf[i] >= milli;
    uint64_t r = gsl_rng_uniform_int(fs_rng_gsl(&pl->rng), fit + st->a);
    for (uint32_t i = 0; i < st->ns; i++)
        if (st->sf[i] >= milli && r-- == 0)
            return st->slot[i];
    return -1;
}

/*
 * Uniform over the feasible nodes of the allowed pools: up to PROBES
 * uniform draws over all their nodes, the first feasible one wins; if all
 * miss, one draw over the list of every feasible node.  Both stages are
 * uniform over the feasible set, so the mixture is too; the list is only
 * built when feasible nodes are rare (then it is short).
 */
static int place_random(fs_placer_t *pl, fs_cluster_t *c, const uint32_t *pools, size_t np,
                        uint32_t g, uint32_t milli, fs_placement_t *out)
{
    uint64_t total = 0;
    int any = 0;
    for (size_t i = 0; i < np; i++) {
        uint32_t p = pools ? pools[i] : (uint32_t)i;
        if (g > c->pools[p].gpn)
            continue;
        total += c->pools[p].n_nodes;
        any |= fs_cluster_fits_req(c, p, g, milli);
    }
    if (!any)
        return 0;
    gsl_rng *r = fs_rng_gsl(&pl->rng);
    uint32_t node = NONE;
    for (int t = 0; t < PROBES && node == NONE; t++) {
        uint64_t x = (uint64_t)(fs_rng_uniform(&pl->rng) * (double)total);
        for (size_t i = 0; i < np; i++) {
            uint32_t p = pools ? pools[i] : (uint32_t)i;
            if (g > c->pools[p].gpn)
                continue;
            if (x < c->pools[p].n_nodes) {
                uint32_t v = c->pools[p].first_node + (uint32_t)x;
                if (fs_cluster_node_fits(c, v, g, milli))
                    node = v;
                break;
            }
            x -= c->pools[p].n_nodes;
        }
    }
    if (node == NONE) {
        size_t n = 0;
        for (size_t i = 0; i < np; i++) {
            uint32_t p = pools ? pools[i] : (uint32_t)i;
            if (g > c->pools[p].gpn || !fs_cluster_fits_req(c, p, g, milli))
                continue;
            if (ensure_cand(pl, n + fs_cluster_candidates_cap(c, p, 0)))
                return FS_ENOMEM;
            n += fs_cluster_candidates(c, p, g, milli, 0, pl->cand + n);
        }
        if (n == 0)
            return 0;
        node = pl->cand[gsl_rng_uniform_int(r, n)];
    }
    int slot = milli < WHOLE ? random_slot(pl, c, node, milli) : -1;
    return fs_cluster_take(c, node, g, milli, slot, out);
}

/* ---- pods: every feasible node scored ------------------------------------------- */

/* The open shared GPU that fits `milli` with the fewest (least = 1) or most
 * (least = 0) milli free, lowest slot first; -1 if none. */
static int shared_pick(const nstate_t *st, uint32_t milli, int least, uint32_t *free_out)
{
    int s = -1;
    uint32_t sv = 0;
    for (uint32_t i = 0; i < st->ns; i++)
        if (st->sf[i] >= milli && (s < 0 || (least ? st->sf[i] < sv : st->sf[i] > sv))) {
            s = (int)i;
            sv = st->sf[i];
        }
    if (free_out)
        *free_out = sv;
    return s;
}

/* The lowest slot index that is not an open shared GPU: where a new shared
 * GPU opens (fs_cluster.c share_take). */
static int new_slot_index(const nstate_t *st)
{
    int k = 0;
    for (;;) {
        int open = 0;
        for (uint32_t i = 0; i < st->ns; i++)
            open |= st->slot[i] == k;
        if (!open)
            return k;
        k++;
    }
}

static double sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }

/* FGD for a pod: F before and after each GPU option, at the node's CPU level
 * before and after.  Sets *score (exact: -dF; kubernetes: the ATC'23
 * simulator's int(100 sigmoid(-dF / W / 1000)), dF in milli-GPU x weight)
 * and *slot. */
static int fgd_pod(fs_placer_t *pl, const fs_cluster_t *c, uint32_t node, const fs_podreq_t *q,
                   nstate_t *st, double *score, int *slot)
{
    uint32_t p = c->node_pool[node];
    const fs_pool_t *pp = &c->pools[p];
    int cm = pp->cpu_milli != 0;
    uint32_t cpu0 = cm ? c->node_cpu[node] : 0, cpu1 = cm ? cpu0 - (q->cpu <= cpu0 ? q->cpu : cpu0) : 0;
    fgd_tab_t t0, t1;
    if (fgd_level(pl, c, p, cpu0, cm, &t0))
        return FS_ENOMEM;
    if (cpu1 == cpu0)
        t1 = t0;
    else if (fgd_level(pl, c, p, cpu1, cm, &t1))
        return FS_ENOMEM;
    int64_t F0 = fgd_F(&t0, pl->wtot, st->sf, st->ns, st->a);
    double W = pl->wtot > 0 ? (double)pl->wtot : 1.0;
    int64_t bestd = INT64_MAX;
    double bests = -1;
    int bestidx = INT32_MAX;
    *slot = -1;
#define FGD_OPTION(dF, sl, idx)                                                          \
    do {                                                                                 \
        int64_t d_ = (dF);                                                               \
        if (pl->integer) {                                                                  \
            double s_ = (double)(int64_t)(sigmoid(-(double)d_ / W / 1000.0) * 100.0);    \
            if (s_ > bests || (s_ == bests && (idx) < bestidx)) {                        \
                bests = s_;                                                              \
                bestidx = (idx);                                                         \
                *slot = (sl);                                                            \
            }                                                                            \
        } else if (d_ < bestd) {                                                         \
            bestd = d_;                                                                  \
            *slot = (sl);                                                                \
        }                                                                                \
    } while (0)
    if (q->g == 0) {
        FGD_OPTION(fgd_F(&t1, pl->wtot, st->sf, st->ns, st->a) - F0, -1, 0);
    } else if (q->milli >= WHOLE) {
        FGD_OPTION(fgd_F(&t1, pl->wtot, st->sf, st->ns, st->a - q->g) - F0, -1, 0);
    } else {
        for (uint32_t i = 0; i < st->ns; i++) {
            if (st->sf[i] < q->milli)
                continue;
            st->sf[i] -= q->milli;
            int64_t d = fgd_F(&t1, pl->wtot, st->sf, st->ns, st->a) - F0;
            st->sf[i] += q->milli;
            FGD_OPTION(d, st->slot[i], st->slot[i]);
        }
        if (st->a >= 1) {
            st->sf[st->ns] = WHOLE - q->milli;
            int64_t d = fgd_F(&t1, pl->wtot, st->sf, st->ns + 1, st->a - 1) - F0;
            FGD_OPTION(d, -1, new_slot_index(st));
        }
    }
#undef FGD_OPTION
    *score = pl->integer ? bests : -(double)bestd;
    return 0;
}

/* The ATC'23 simulator's GPU packing score (gpu_packing_score.go): a node
 * whose GPUs are all free scores max(33 - free, free); one that needs fully
 * free GPUs max(50 - those used, 33); one that fits in shared GPUs
 * max(100 - sum of their free percent / 10, 50).  CPU-only pods: 0. */
static double gpu_packing_score(const nstate_t *st, uint32_t gpn, const fs_podreq_t *q)
{
    if (q->g == 0)
        return 0;
    if (st->a == gpn && st->ns == 0) {
        int64_t sc = 100 / 3 - (int64_t)st->a;
        return (double)(sc > (int64_t)st->a ? sc : (int64_t)st->a);
    }
    if (q->milli >= WHOLE) {    /* only fully free GPUs fit a whole GPU */
        int64_t sc = 100 / 2 - (int64_t)q->g;
        return (double)(sc > 100 / 3 ? sc : 100 / 3);
    }
    uint32_t f;
    if (shared_pick(st, q->milli, 1, &f) < 0) {   /* a fully free GPU */
        int64_t sc = 100 / 2 - 1;
        return (double)(sc > 100 / 3 ? sc : 100 / 3);
    }
    int64_t sc = 100 - ((int64_t)f * 100 / WHOLE) / 10;
    return (double)(sc > 100 / 2 ? sc : 100 / 2);
}

/* Score of placing q on node (higher is better) and the GPU slot for a
 * share; FS_ENOMEM possible (FGD tables). */
static int pod_score(fs_placer_t *pl, const fs_cluster_t *c, uint32_t node, const fs_podreq_t *q,
                     nstate_t *st, double *score, int *slot)
{
    const fs_pool_t *p = &c->pools[c->node_pool[node]];
    node_state(c, node, st);
    int frac = q->g == 1 && q->milli < WHOLE;
    int64_t T = (int64_t)st->a * WHOLE, req = q->g == 0 ? 0 : frac ? q->milli : (int64_t)q->g * WHOLE;
    for (uint32_t i = 0; i < st->ns; i++)
        T += st->sf[i];
    int s;
    uint32_t f;
    *slot = -1;
    *score = 0;
    switch (pl->kind) {
    case FS_PLACE_FGD:
        return fgd_pod(pl, c, node, q, st, score, slot);
    case FS_PLACE_FIRST_FIT:
        if (frac)
            for (uint32_t i = 0; i < st->ns && *slot < 0; i++)
                if (st->sf[i] >= q->milli && (*slot < 0 || st->slot[i] < *slot))
                    *slot = st->slot[i];
        return 0;
    case FS_PLACE_BEST_FIT:
    case FS_PLACE_SPREAD: {
        /* kube-scheduler NodeResourcesFit MostAllocated / LeastAllocated:
         * per resource (requested after / allocatable) x 100, weighted mean */
        int most = pl->kind == FS_PLACE_BEST_FIT;
        double sum = 0, wsum = 0;
        const double cap[3] = {(double)p->gpn * WHOLE, p->cpu_milli, p->mem_mib};
        const double fr[3] = {(double)T, p->cpu_milli ? c->node_cpu[node] : 0,
                              p->mem_mib ? c->node_mem[node] : 0};
        const double rq[3] = {(double)req, q->cpu, q->mem};
        const double w[3] = {pl->wgpu, pl->wcpu, pl->wmem};
        for (int r = 0; r < 3; r++) {
            if (w[r] <= 0 || cap[r] <= 0)
                continue;
            double used = cap[r] - fr[r] + rq[r], sc;
            if (pl->integer)
                sc = (double)((int64_t)(most ? used : cap[r] - used) * 100 / (int64_t)cap[r]);
            else
                sc = (most ? used : cap[r] - used) * 100.0 / cap[r];
            sum += sc * w[r];
            wsum += w[r];
        }
        *score = wsum > 0 ? (pl->integer ? (double)((int64_t)sum / (int64_t)wsum) : sum / wsum) : 0;
        if (pl->wbal > 0) {
            /* NodeResourcesBalancedAllocation (balanced_allocation.go): the
             * requested share of each resource after placement (at most 1),
             * score (1 - their population standard deviation) x 100 */
            double share[3], mean = 0, var = 0;
            int nf = 0;
            for (int r = 0; r < 3; r++) {
                if (w[r] <= 0 || cap[r] <= 0)
                    continue;
                double x = (cap[r] - fr[r] + rq[r]) / cap[r];
                share[nf] = x > 1 ? 1 : x;
                mean += share[nf++];
            }
            if (nf > 0)
                mean /= nf;
            for (int r = 0; r < nf; r++)
                var += (share[r] - mean) * (share[r] - mean);
            double bal = (1 - (nf > 0 ? sqrt(var / nf) : 0)) * 100;
            if (pl->integer)
                bal = (double)(int64_t)bal;
            *score += pl->wbal * bal;
        }
        if (frac) {
            s = shared_pick(st, q->milli, most, NULL);
            *slot = (most || st->a == 0) && s >= 0 ? st->slot[s] : -1;
        }
        return 0;
    }
    case FS_PLACE_ATC_BEST_FIT: {
        /* best_fit_score.go: 100 (1 - sum over CPU and GPU of 0.5 (free -
         * request) / the largest node's), higher is better */
        double x = 0;
        if (pl->spec_cpu > 0 && p->cpu_milli)
            x += 0.5 * ((double)c->node_cpu[node] - q->cpu) / pl->spec_cpu;
        x += 0.5 * (double)(T - req) / pl->spec_gpu;
        *score = (1.0 - x) * 100.0;
        if (pl->integer)
            *score = (double)(int64_t)*score;
        break;
    }
    case FS_PLACE_GPU_PACKING:
        *score = gpu_packing_score(st, p->gpn, q);
        break;
    default:    /* pack, topology (one node): GPU packing, fullest node */
        if (q->g == 0)
            *score = 0;
        else if (frac && (s = shared_pick(st, q->milli, 1, &f)) >= 0)
            *score = 3e6 - f;
        else
            *score = 2e6 - (double)st->a;
        break;
    }
    /* the GPU of a share: the fitting shared GPU with the least free (the
     * simulator's "best" GPU selection), else a fully free one */
    if (frac && (s = shared_pick(st, q->milli, 1, NULL)) >= 0)
        *slot = st->slot[s];
    return 0;
}

/* node_score kubernetes with fewer nodes to find than the cluster has
 * (kube-scheduler's findNodesThatFitPod and selectHost): nodes are filtered
 * from the round-robin start index over every node of the cluster, in
 * global id order, until `want` feasible ones are found; those are scored
 * and the best taken, ties uniformly (random: one of the found nodes
 * uniformly); the next search starts after the last node checked.  *best
 * NONE when none fits.  0 or FS_ENOMEM. */
static int place_pod_sampled(fs_placer_t *pl, const fs_cluster_t *c, const uint32_t *pools,
                             size_t np, const fs_podreq_t *q, uint32_t want, uint32_t *best,
                             int *best_slot)
{
    gsl_rng *r = fs_rng_gsl(&pl->rng);
    if (!pl->allowed && !(pl->allowed = fs_calloc(c->n_pools, 1)))
        return FS_ENOMEM;
    memset(pl->allowed, 0, c->n_pools);
    for (size_t i = 0; i < np; i++) {
        uint32_t p = pools ? pools[i] : (uint32_t)i;
        pl->allowed[p] = !(q->g > c->pools[p].gpn || (q->g && !fs_cluster_fits_req(c, p, q->g, q->milli)));
    }
    uint32_t n = c->n_nodes, start = pl->next_start % n, found = 0, i = 0;
    double best_score = 0;
    uint64_t ties = 0;
    *best = NONE;
    *best_slot = -1;
    for (; i < n && found < want; i++) {
        uint32_t v = (start + i) % n;
        uint32_t p = c->node_pool[v];
        const fs_pool_t *pp = &c->pools[p];
        if (!pl->allowed[p] || (q->milli >= WHOLE && c->node_free[v] < q->g) ||
            (q->cpu && pp->cpu_milli && c->node_cpu[v] < q->cpu) ||
            (q->mem && pp->mem_mib && c->node_mem[v] < q->mem) || !fs_cluster_node_fits_pod(c, v, q))
            continue;
        found++;
        if (pl->kind == FS_PLACE_RANDOM) {      /* uniform over the nodes found */
            if (gsl_rng_uniform_int(r, found) == 0)
                *best = v;
            continue;
        }
        double sc;
        int slot;
        if (pod_score(pl, c, v, q, pl->st, &sc, &slot))
            return FS_ENOMEM;
        if (*best == NONE || sc > best_score) {
            *best = v;
            *best_slot = slot;
            best_score = sc;
            ties = 1;
        } else if (sc == best_score && gsl_rng_uniform_int(r, ++ties) == 0) {
            *best = v;
            *best_slot = slot;
        }
    }
    pl->next_start = (start + i) % n;
    return 0;
}

static int place_pod(fs_placer_t *pl, fs_cluster_t *c, const uint32_t *pools, size_t np,
                     const fs_podreq_t *q, fs_placement_t *out)
{
    nstate_t *st = pl->st;
    gsl_rng *r = fs_rng_gsl(&pl->rng);
    uint32_t best = NONE, best_rank = 0;
    int best_slot = -1;
    double best_score = 0;
    uint64_t ties = 0;
    uint32_t want = pl->node_score == FS_SCORE_KUBE ? fs_kube_nodes_to_find(c->n_nodes, pl->pct_score)
                                                    : c->n_nodes;
    if (want < c->n_nodes) {
        int rc = place_pod_sampled(pl, c, pools, np, q, want, &best, &best_slot);
        if (rc)
            return rc;
        np = 0;     /* the scan below is done */
    }
    for (size_t i = 0; i < np; i++) {
        uint32_t p = pools ? pools[i] : (uint32_t)i;
        const fs_pool_t *pp = &c->pools[p];
        if (q->g > pp->gpn || (q->g && !fs_cluster_fits_req(c, p, q->g, q->milli)))
            continue;
        for (uint32_t v = pp->first_node; v < pp->first_node + pp->n_nodes; v++) {
            /* the common rejections inline: too few whole GPUs, CPU, memory */
            if ((q->milli >= WHOLE && c->node_free[v] < q->g) ||
                (q->cpu && pp->cpu_milli && c->node_cpu[v] < q->cpu) ||
                (q->mem && pp->mem_mib && c->node_mem[v] < q->mem) ||
                !fs_cluster_node_fits_pod(c, v, q))
                continue;
            if (pl->kind == FS_PLACE_RANDOM) {     /* counted; one draw below */
                ties++;
                continue;
            }
            double sc;
            int slot;
            if (pod_score(pl, c, v, q, st, &sc, &slot))
                return FS_ENOMEM;
            uint32_t rank = c->node_rank ? c->node_rank[v] : v;
            if (best == NONE || sc > best_score ||
                (sc == best_score && pl->node_score == FS_SCORE_KUBE_NAME && rank < best_rank)) {
                best = v;   /* kubernetes_name: the first name among the best */
                best_rank = rank;
                best_slot = slot;
                best_score = sc;
                ties = 1;
            } else if (sc == best_score && pl->node_score == FS_SCORE_KUBE && gsl_rng_uniform_int(r, ++ties) == 0) {
                best = v;   /* kube-scheduler selectHost: uniform among the best */
                best_slot = slot;
            }
        }
    }
    if (pl->kind == FS_PLACE_RANDOM && ties > 0 && want >= c->n_nodes) {   /* uniform over the feasible nodes */
        uint64_t k = gsl_rng_uniform_int(r, ties);
        for (size_t i = 0; i < np && best == NONE; i++) {
            uint32_t p = pools ? pools[i] : (uint32_t)i;
            const fs_pool_t *pp = &c->pools[p];
            if (q->g > pp->gpn || (q->g && !fs_cluster_fits_req(c, p, q->g, q->milli)))
                continue;
            for (uint32_t v = pp->first_node; v < pp->first_node + pp->n_nodes; v++)
                if (fs_cluster_node_fits_pod(c, v, q) && k-- == 0) {
                    best = v;
                    break;
                }
        }
    }
    if (best == NONE) {
        memset(out, 0, sizeof *out);
        return 0;
    }
    if (pl->kind == FS_PLACE_RANDOM)
        best_slot = q->g == 1 && q->milli < WHOLE ? random_slot(pl, c, best, q->milli) : -1;
    return fs_cluster_take_pod(c, best, q, best_slot, out);
}

/* Does this request go through place_pod? */
static int pod_path(const fs_placer_t *pl, const fs_cluster_t *c, const uint32_t *pools,
                    size_t np, const fs_podreq_t *q)
{
    if (pl->kind == FS_PLACE_ATC_BEST_FIT || pl->kind == FS_PLACE_GPU_PACKING || q->g == 0)
        return 1;
    if (pl->integer && (pl->kind == FS_PLACE_BEST_FIT || pl->kind == FS_PLACE_SPREAD ||
                     pl->kind == FS_PLACE_FGD || pl->kind == FS_PLACE_RANDOM))
        return 1;
    if ((pl->wcpu > 0 || pl->wmem > 0 || pl->wbal > 0) &&
        (pl->kind == FS_PLACE_BEST_FIT || pl->kind == FS_PLACE_SPREAD))
        return 1;
    for (size_t i = 0; i < np; i++)
        if (fs_cluster_pod_res(c, pools ? pools[i] : (uint32_t)i, q))
            return 1;
    return 0;
}

/* ---- a node pin (fs_placer_pin) ----------------------------------------------------- */

const fs_place_pin_t *fs_placer_pin(fs_placer_t *pl, const fs_place_pin_t *pin)
{
    const fs_place_pin_t *prev = pl->pin;
    pl->pin = pin;
    return prev;
}

/* q on the first pinned node of the pools (NULL: all) where it fits; a
 * share goes to the fullest open shared GPU that holds it, else a new one
 * (bin packing, as best_fit).  1, 0 or FS_ENOMEM. */
static int place_pinned(fs_placer_t *pl, fs_cluster_t *c, const uint32_t *pools, size_t np,
                        const fs_podreq_t *q, fs_placement_t *out)
{
    const fs_place_pin_t *pin = pl->pin;
    for (size_t i = 0; i < pin->n; i++) {
        uint32_t v = pin->nodes[i];
        if (v >= c->n_nodes)
            continue;
        uint32_t p = c->node_pool[v];
        int allowed = !pools;
        for (size_t k = 0; pools && k < np && !allowed; k++)
            allowed = pools[k] == p;
        if (!allowed || q->g > c->pools[p].gpn || !fs_cluster_node_fits_pod(c, v, q))
            continue;
        int slot = -1;
        if (q->g == 1 && q->milli < WHOLE) {
            node_state(c, v, pl->st);
            int s = shared_pick(pl->st, q->milli, 0, NULL);
            slot = s >= 0 ? pl->st->slot[s] : -1;
        }
        return fs_cluster_take_pod(c, v, q, slot, out);
    }
    memset(out, 0, sizeof *out);
    return 0;
}

/* ---- entry ------------------------------------------------------------------------- */

int fs_placer_place(fs_placer_t *pl, fs_cluster_t *c, const uint32_t *pools, size_t n_pools,
                    uint32_t g, uint32_t milli, fs_placement_t *out)
{
    size_t np = pools ? n_pools : c->n_pools;
    if (milli > WHOLE)
        milli = WHOLE;
    int kind = pl->kind;
    fs_podreq_t q = {g, milli, 0, 0};
    if (pl->pin)
        return place_pinned(pl, c, pools, np, &q, out);
    if (pl->net && (kind == FS_PLACE_TOPOLOGY || kind == FS_PLACE_FABRIC_AWARE))
        return fs_place_with_net(pl, c, pools, np, g, milli, out);
    if (kind == FS_PLACE_FABRIC_AWARE)
        kind = FS_PLACE_TOPOLOGY;   /* without a fabric (refused in a scenario) */
    int scored = 0;
    if (kind == FS_PLACE_BEST_FIT || kind == FS_PLACE_SPREAD || kind == FS_PLACE_FGD ||
        kind == FS_PLACE_RANDOM || kind == FS_PLACE_ATC_BEST_FIT || kind == FS_PLACE_GPU_PACKING) {
        int rc = g > 0 && pod_path(pl, c, pools, np, &q) ? place_pod(pl, c, pools, np, &q, out)
                 : kind == FS_PLACE_RANDOM ? place_random(pl, c, pools, np, g, milli, out)
                                           : place_scored(pl, c, pools, np, g, milli, out);
        if (rc != 0)
            return rc;
        kind = FS_PLACE_PACK;   /* larger than a node everywhere it fits: as pack */
        scored = 1;
    }
    for (size_t i = 0; i < np; i++) {
        uint32_t p = pools ? pools[i] : (uint32_t)i;
        if (!fs_cluster_fits_req(c, p, g, milli))
            continue;
        if (scored && g <= c->pools[p].gpn)
            continue;   /* scored above */
        int rc = fs_cluster_alloc_req(c, p, g, milli, kind, out);
        if (rc != 0)
            return rc;
    }
    memset(out, 0, sizeof *out);
    return 0;
}

/* A pod: only pools whose nodes hold all g GPUs, where every placement is
 * single-node (the cluster places g <= gpus_per_node on one node). */
int fs_placer_place_node(fs_placer_t *pl, fs_cluster_t *c, const uint32_t *pools, size_t n_pools,
                         uint32_t g, uint32_t milli, fs_placement_t *out)
{
    size_t np = pools ? n_pools : c->n_pools, n = 0;
    if (fs_grow((void **)&pl->podpools, &pl->podpools_cap, np + 1, sizeof *pl->podpools))
        return FS_ENOMEM;
    for (size_t i = 0; i < np; i++) {
        uint32_t p = pools ? pools[i] : (uint32_t)i;
        if (g <= c->pools[p].gpn)
            pl->podpools[n++] = p;
    }
    if (n == 0) {
        memset(out, 0, sizeof *out);
        return 0;
    }
    if (n == np)   /* every pool qualifies: the same call (and RNG draws) as fs_placer_place */
        return fs_placer_place(pl, c, pools, n_pools, g, milli, out);
    return fs_placer_place(pl, c, pl->podpools, n, g, milli, out);
}

int fs_placer_place_pod(fs_placer_t *pl, fs_cluster_t *c, const uint32_t *pools, size_t n_pools,
                        const fs_podreq_t *q, fs_placement_t *out)
{
    size_t np = pools ? n_pools : c->n_pools;
    fs_podreq_t r = *q;
    if (r.milli > WHOLE)
        r.milli = WHOLE;
    if (pl->pin)
        return place_pinned(pl, c, pools, np, &r, out);
    if (!pod_path(pl, c, pools, np, &r))
        return fs_placer_place_node(pl, c, pools, n_pools, r.g, r.milli, out);
    return place_pod(pl, c, pools, np, &r, out);
}
