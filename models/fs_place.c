#include "fs_place.h"
#include "fs_catalog.h"
#include "../sim/fs_alloc.h"
#include "../sim/fs_rng.h"
#include "../traces/fs_job.h"

#include <string.h>
#include <strings.h>

#define NONE UINT32_MAX
#define WHOLE FS_GPU_MILLI_WHOLE
#define PROBES 32

/* FGD per-pool shape weights and the tables derived from them. */
typedef struct fgd_pool {
    int64_t *wcnt;          /* gpn + 1: weight of whole shapes by GPU count (<= gpn) */
    int64_t *fcnt;          /* 1001: weight of fractional shapes by milli */
    int64_t *aw;            /* gpn + 1: aw[a] = weight of whole shapes with g <= a */
    int64_t *tail;          /* 1001: tail[f] = weight of fractional shapes with milli > f */
    int dirty;
} fgd_pool_t;

/* A node's GPU state: a fully free GPUs, ns open shared GPUs with sf[i]
 * milli free. */
typedef struct nstate {
    uint32_t a, ns;
    uint32_t sf[1024];
    int slot[1024];
} nstate_t;

struct fs_placer {
    int kind;
    uint32_t k;
    uint32_t n_pools;
    fs_rng_t rng;
    double *speed_default;  /* per pool */
    fs_speed_cfg_t *speed_rows;     /* copied from the config (gpu not kept) */
    uint8_t *speed_pool;    /* [row * n_pools + pool]: the row's GPU model is the pool's */
    size_t n_speed;
    struct nstate *st;      /* scratch node state */
    fgd_pool_t *fgd;        /* per pool (fgd only) */
    int64_t wtot;
    uint32_t *cand;         /* scratch */
    size_t cand_cap;
    uint32_t *podpools;     /* scratch: fs_placer_place_node's pools */
    size_t podpools_cap;
};

/* ---- lifecycle ------------------------------------------------------------- */

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
    pl->n_pools = c->n_pools;
    pl->speed_default = fs_malloc(c->n_pools * sizeof *pl->speed_default);
    if (!pl->speed_default)
        goto nomem;
    for (uint32_t i = 0; i < c->n_pools; i++) {
        int cat = c->pools[i].catalog;
        pl->speed_default[i] = cc && cc->speed_catalog && cat >= 0 ? fs_catalog_get((size_t)cat)->speed : 1.0;
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
                pl->speed_pool[i * c->n_pools + p] =
                    cc->speed[i].gpu && (strcasecmp(cc->speed[i].gpu, c->pools[p].gpu) == 0 ||
                                         strcasecmp(cc->speed[i].gpu, c->pools[p].name) == 0);
        }
    }
    pl->st = fs_malloc(sizeof *pl->st);
    if (!pl->st)
        goto nomem;
    if (pl->kind == FS_PLACE_RANDOM && fs_rng_init(&pl->rng, seed, replication, FS_RNG_PLACE, 0))
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
            fs_free(pl->fgd[i].wcnt);
            fs_free(pl->fgd[i].fcnt);
            fs_free(pl->fgd[i].aw);
            fs_free(pl->fgd[i].tail);
        }
    fs_free(pl->fgd);
    fs_free(pl->cand);
    fs_free(pl->podpools);
    fs_free(pl);
}

int fs_placer_learns(const fs_placer_t *pl) { return pl->kind == FS_PLACE_FGD; }
uint64_t fs_placer_total_weight(const fs_placer_t *pl) { return (uint64_t)pl->wtot; }

double fs_placer_speed(const fs_placer_t *pl, uint32_t pool, int32_t cls)
{
    for (size_t i = 0; i < pl->n_speed; i++)
        if ((int64_t)pl->speed_rows[i].job_class == cls && pl->speed_pool[i * pl->n_pools + pool])
            return pl->speed_rows[i].factor;
    return pl->speed_default[pool];
}

/* ---- FGD tables ---------------------------------------------------------------- */

static int fgd_pool_ensure(fgd_pool_t *t, uint32_t gpn)
{
    if (t->wcnt)
        return 0;
    t->wcnt = fs_calloc(gpn + 1, sizeof *t->wcnt);
    t->aw = fs_calloc(gpn + 1, sizeof *t->aw);
    t->fcnt = fs_calloc(WHOLE + 1, sizeof *t->fcnt);
    t->tail = fs_calloc(WHOLE + 1, sizeof *t->tail);
    if (!t->wcnt || !t->aw || !t->fcnt || !t->tail) {
        fs_free(t->wcnt);
        fs_free(t->aw);
        fs_free(t->fcnt);
        fs_free(t->tail);
        memset(t, 0, sizeof *t);
        return FS_ENOMEM;
    }
    return 0;
}

int fs_placer_observe(fs_placer_t *pl, const fs_cluster_t *c, uint32_t g, uint32_t milli,
                      const uint32_t *pools, size_t n_pools, uint64_t weight)
{
    if (!pl->fgd || weight == 0)
        return 0;
    size_t n = pools ? n_pools : c->n_pools;
    for (size_t i = 0; i < n; i++) {
        uint32_t p = pools ? pools[i] : (uint32_t)i;
        uint32_t gpn = c->pools[p].gpn;
        fgd_pool_t *t = &pl->fgd[p];
        if (milli >= WHOLE && g > gpn)
            continue;   /* never fits one node of this pool: counts as infeasible */
        if (fgd_pool_ensure(t, gpn))
            return FS_ENOMEM;
        if (milli < WHOLE)
            t->fcnt[milli] += (int64_t)weight;
        else
            t->wcnt[g] += (int64_t)weight;
        t->dirty = 1;
    }
    pl->wtot += (int64_t)weight;
    return 0;
}

static const fgd_pool_t *fgd_tables(fs_placer_t *pl, const fs_cluster_t *c, uint32_t p)
{
    fgd_pool_t *t = &pl->fgd[p];
    if (!t->wcnt)
        return NULL;
    if (t->dirty) {
        uint32_t gpn = c->pools[p].gpn;
        int64_t s = 0;
        for (uint32_t a = 0; a <= gpn; a++)
            t->aw[a] = s += t->wcnt[a];
        s = 0;
        for (uint32_t f = WHOLE + 1; f-- > 0;) {
            t->tail[f] = s;     /* weight of milli > f */
            s += t->fcnt[f];
        }
        t->dirty = 0;
    }
    return t;
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
static int64_t fgd_F(const fgd_pool_t *t, int64_t wtot, const uint32_t *sf, uint32_t ns, uint32_t a)
{
    int64_t T = (int64_t)a * WHOLE, S = 0;
    uint32_t b = 0;
    for (uint32_t i = 0; i < ns; i++) {
        S += sf[i];
        if (sf[i] > b)
            b = sf[i];
    }
    T += S;
    if (!t)
        return T * wtot;
    int64_t cut = a == 0 ? t->tail[b] : 0;
    int64_t feas = t->aw[a] + t->tail[0] - cut;
    int64_t F = T * (wtot - feas) + S * t->aw[a];
    for (uint32_t i = 0; i < ns; i++)
        F += (int64_t)sf[i] * (t->tail[sf[i]] - cut);
    return F;
}

int64_t fs_placer_fragmentation(fs_placer_t *pl, const fs_cluster_t *c, uint32_t node)
{
    node_state(c, node, pl->st);
    const fgd_pool_t *t = pl->fgd ? fgd_tables(pl, c, c->node_pool[node]) : NULL;
    return fgd_F(t, pl->wtot, pl->st->sf, pl->st->ns, pl->st->a);
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
    /* fgd: minimise the growth of F over the options */
    const fgd_pool_t *t = fgd_tables(pl, c, c->node_pool[node]);
    int64_t F0 = fgd_F(t, pl->wtot, st->sf, st->ns, st->a), bestd = INT64_MAX;
    if (!frac) {
        bestd = fgd_F(t, pl->wtot, st->sf, st->ns, st->a - g) - F0;
    } else {
        for (uint32_t i = 0; i < st->ns; i++) {
            if (st->sf[i] < milli)
                continue;
            st->sf[i] -= milli;
            int64_t d = fgd_F(t, pl->wtot, st->sf, st->ns, st->a) - F0;
            st->sf[i] += milli;
            if (d < bestd) {
                bestd = d;
                ch.slot = st->slot[i];
            }
        }
        if (st->a >= 1) {
            st->sf[st->ns] = WHOLE - milli;
            int64_t d = fgd_F(t, pl->wtot, st->sf, st->ns + 1, st->a - 1) - F0;
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

/* ---- entry ------------------------------------------------------------------------- */

int fs_placer_place(fs_placer_t *pl, fs_cluster_t *c, const uint32_t *pools, size_t n_pools,
                    uint32_t g, uint32_t milli, fs_placement_t *out)
{
    size_t np = pools ? n_pools : c->n_pools;
    if (milli > WHOLE)
        milli = WHOLE;
    int kind = pl->kind;
    if (kind == FS_PLACE_BEST_FIT || kind == FS_PLACE_SPREAD || kind == FS_PLACE_FGD ||
        kind == FS_PLACE_RANDOM) {
        int rc = kind == FS_PLACE_RANDOM ? place_random(pl, c, pools, np, g, milli, out)
                                         : place_scored(pl, c, pools, np, g, milli, out);
        if (rc != 0)
            return rc;
        kind = FS_PLACE_PACK;   /* larger than a node everywhere it fits: as pack */
    }
    for (size_t i = 0; i < np; i++) {
        uint32_t p = pools ? pools[i] : (uint32_t)i;
        if (!fs_cluster_fits_req(c, p, g, milli))
            continue;
        if (kind != pl->kind && g <= c->pools[p].gpn)
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
