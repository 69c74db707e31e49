/*
 * fs_kueue_setup: the Kueue policy's state from its configuration
 * (fs_kueue_int.h): resource flavors and the pools they match, ClusterQueues
 * with their quotas and tenants, cohorts and their lendable quota; and the
 * probe validate asks whether a job could ever be admitted.
 */
#include "fs_kueue_int.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

/* ---- flavors --------------------------------------------------------------- */

/* Does `item` name GPU model `gpu` as a word (separated by - _ space /)? */
static int has_word(const char *item, const char *gpu)
{
    size_t gl = strlen(gpu);
    if (gl == 0)
        return 0;
    for (const char *p = item; *p; p++) {
        if (strncasecmp(p, gpu, gl) != 0)
            continue;
        int lb = p == item || strchr("-_ /.", p[-1]);
        int rb = p[gl] == '\0' || strchr("-_ /.", p[gl]);
        if (lb && rb)
            return 1;
    }
    return 0;
}

size_t fs_kueue_match_pools(const char *name, const char *match, const fs_cluster_cfg_t *cl,
                            uint8_t *mask)
{
    const char *s = match ? match : name;
    size_t count = 0;
    while (s && *s) {
        const char *comma = strchr(s, ',');
        size_t len = comma ? (size_t)(comma - s) : strlen(s);
        char item[256];
        while (len && *s == ' ')
            s++, len--;
        while (len && s[len - 1] == ' ')
            len--;
        if (len >= sizeof item)
            len = sizeof item - 1;
        memcpy(item, s, len);
        item[len] = '\0';
        for (size_t p = 0; len && p < cl->n_pools; p++) {
            const fs_pool_cfg_t *pc = &cl->pools[p];
            if (strcasecmp(item, pc->name) == 0 || strcasecmp(item, pc->gpu) == 0 ||
                has_word(item, pc->gpu)) {
                count += !mask[p];
                mask[p] = 1;
            }
        }
        s = comma ? comma + 1 : NULL;
    }
    return count;
}

/* ---- lifecycle ------------------------------------------------------------- */

void fs_kset_destroy(void *state)
{
    kueue_t *k = state;
    if (!k)
        return;
    for (size_t i = 0; i < k->n_cq; i++) {
        kcq_t *q = &k->cq[i];
        for (size_t c = 0; c < q->n_cls; c++) {
            fs_free(q->cls[c].a);
            fs_free(q->cls[c].va);
        }
        fs_free(q->cls);
        fs_free(q->res);
        fs_free(q->fl);
        fs_free(q->run);
        fs_free(q->pv);
        fs_free(q->pu);
    }
    for (size_t i = 0; i < k->n_coh; i++) {
        fs_free(k->coh[i].quota);
        fs_free(k->coh[i].usage);
        fs_free(k->coh[i].cqs);
    }
    for (size_t i = 0; i < k->n_fl; i++) {
        fs_free(k->fl[i].mask);
        fs_free(k->fl[i].pools);
    }
    for (size_t i = 0; i < k->n_tm; i++)
        fs_free(k->tm[i].tenant);
    fs_free(k->cq);
    fs_free(k->coh);
    fs_free(k->fl);
    fs_free(k->tm);
    fs_free(k->tenant_cq);
    fs_shapemap_release(&k->shapes);
    fs_free(k->jobs);
    fs_free(k->act);
    fs_free(k->nb);
    fs_free(k->ent);
    fs_free(k->cand);
    fs_free(k->work);
    fs_free(k->taken);
    fs_free(k->pools);
    fs_free(k->vact);
    fs_free(k->vlog);
    fs_free(k->adm);
    fs_free(k->vic);
    fs_free(k);
}

static int64_t to_milli(double gpus) { return (int64_t)llround(gpus * 1000.0); }

int32_t fs_kset_flavor_index(const kueue_t *k, const char *name)
{
    for (size_t i = 0; i < k->n_fl; i++)
        if (strcmp(k->fl[i].name, name) == 0)
            return (int32_t)i;
    return -1;
}

/* Adds flavor name (match: its pools) unless known; its index or an error. */
static int add_flavor(kueue_t *k, const fs_cluster_cfg_t *cl, const char *name, const char *match,
                      int32_t *out, fs_error_t *err)
{
    if ((*out = fs_kset_flavor_index(k, name)) >= 0)
        return 0;
    kflavor_t *f = &k->fl[k->n_fl];
    memset(f, 0, sizeof *f);
    f->name = (char *)name;     /* borrowed from the config */
    f->mask = fs_calloc(cl->n_pools ? cl->n_pools : 1, 1);
    f->pools = fs_malloc((cl->n_pools ? cl->n_pools : 1) * sizeof *f->pools);
    k->n_fl++;
    if (!f->mask || !f->pools)
        return fs_error_set(err, FS_ENOMEM, "kueue: out of memory");
    fs_kueue_match_pools(name, match, cl, f->mask);
    for (size_t p = 0; p < cl->n_pools; p++)
        if (f->mask[p])
            f->pools[f->n_pools++] = (uint32_t)p;
    if (f->n_pools == 0)
        return fs_error_set(err, FS_EINVAL, "scheduler.kueue: flavor '%s' stands for no pool "
                            "(name a pool or a GPU model)", name);
    *out = (int32_t)(k->n_fl - 1);
    return 0;
}

static int32_t cohort_of(kueue_t *k, const char *name, size_t n_cq)
{
    if (!name)
        return -1;
    for (size_t i = 0; i < k->n_coh; i++)
        if (strcmp(k->coh[i].name, name) == 0)
            return (int32_t)i;
    kcoh_t *h = &k->coh[k->n_coh];
    memset(h, 0, sizeof *h);
    h->name = (char *)name;
    h->cqs = fs_malloc(n_cq * sizeof *h->cqs);
    return h->cqs ? (int32_t)k->n_coh++ : -2;
}

static int add_tenants(kueue_t *k, const char *list, int32_t c)
{
    const char *s = list;
    while (s && *s) {
        const char *comma = strchr(s, ',');
        size_t len = comma ? (size_t)(comma - s) : strlen(s);
        while (len && *s == ' ')
            s++, len--;
        while (len && s[len - 1] == ' ')
            len--;
        if (len) {
            size_t cap = k->n_tm;
            if (fs_grow((void **)&k->tm, &cap, k->n_tm + 1, sizeof *k->tm))
                return FS_ENOMEM;
            char *t = fs_malloc(len + 1);
            if (!t)
                return FS_ENOMEM;
            memcpy(t, s, len);
            t[len] = '\0';
            k->tm[k->n_tm++] = (tmap_t){t, c};
        }
        s = comma ? comma + 1 : NULL;
    }
    return 0;
}

static const char *const res_name[KR] = {"nvidia.com/gpu", "cpu", "memory", "pods"};
/* Model units per quota unit (GPUs, cores, MiB, pods -> milli-GPUs,
 * milli-cores, bytes, milli-pods). */
static const double res_scale[KR] = {1000.0, 1000.0, 1048576.0, 1000.0};
#define UNITS_MAX 9007199254740992.0    /* 2^53: held exactly through a double */

static int to_units(const fs_kueue_cq_cfg_t *cc, const fs_kueue_quota_cfg_t *qc, double x, int64_t *out,
                    fs_error_t *err)
{
    double u = x * res_scale[qc->resource];
    if (u > UNITS_MAX)
        return fs_error_set(err, FS_EINVAL, "scheduler.kueue: ClusterQueue '%s' flavor '%s': a %s "
                            "quota of %.17g is more than 2^53 %s (not held exactly)", cc->name,
                            qc->flavor, res_name[qc->resource], x,
                            qc->resource == FS_KRES_MEMORY ? "bytes" : "thousandths");
    *out = (int64_t)llround(u);
    return 0;
}

static int setup_cq(kueue_t *k, const fs_kueue_cq_cfg_t *cc, const fs_cluster_cfg_t *cl, size_t nf_max,
                    uint32_t idx, fs_error_t *err)
{
    kcq_t *q = &k->cq[idx];
    q->name = cc->name;
    q->strict = cc->strategy == FS_KUEUE_STRICT_FIFO;
    q->within = cc->within_cq;
    q->reclaim = cc->reclaim;
    q->bwc = cc->borrow_within;
    q->has_thr = !isnan(cc->borrow_max_priority);
    q->thr = q->has_thr ? (int64_t)floor(cc->borrow_max_priority) : 0;
    q->weight_milli = to_milli(cc->weight);
    q->res = fs_calloc(nf_max * KR, sizeof *q->res);
    q->fl = fs_malloc((cc->n_quotas ? cc->n_quotas : 1) * sizeof *q->fl);
    uint32_t *ord = fs_malloc((cc->n_quotas ? cc->n_quotas : 1) * sizeof *ord);
    uint8_t *fmask = fs_calloc(nf_max, 1);
    int rc = 0;
    if (!q->res || !q->fl || !ord || !fmask || add_tenants(k, cc->tenants, (int32_t)idx))
        rc = fs_error_set(err, FS_ENOMEM, "kueue: out of memory");
    if (!rc && (q->cohort = cohort_of(k, cc->cohort, k->n_cq)) == -2)
        rc = fs_error_set(err, FS_ENOMEM, "kueue: out of memory");
    if (!rc && q->cohort >= 0) {
        kcoh_t *h = &k->coh[q->cohort];
        h->cqs[h->n++] = idx;
    }
    size_t n_ord = 0;
    for (size_t i = 0; !rc && i < cc->n_quotas; i++) {
        const fs_kueue_quota_cfg_t *qc = &cc->quotas[i];
        int32_t f;
        if ((rc = add_flavor(k, cl, qc->flavor, NULL, &f, err)) != 0)
            break;
        int res = qc->resource;
        kres_t *r = fs_kquota_res(q, (uint32_t)f, res);
        if (r->has) {
            if (res == FS_KRES_GPU)
                rc = fs_error_set(err, FS_EINVAL, "scheduler.kueue: ClusterQueue '%s' lists "
                                  "flavor '%s' twice", cc->name, qc->flavor);
            else
                rc = fs_error_set(err, FS_EINVAL, "scheduler.kueue: ClusterQueue '%s' lists "
                                  "flavor '%s' twice for %s", cc->name, qc->flavor, res_name[res]);
            break;
        }
        int64_t bl = 0, ll = 0;
        if ((rc = to_units(cc, qc, qc->nominal, &r->nominal, err)) != 0 ||
            (qc->borrowing_limit >= 0 && (rc = to_units(cc, qc, qc->borrowing_limit, &bl, err)) != 0) ||
            (qc->lending_limit >= 0 && (rc = to_units(cc, qc, qc->lending_limit, &ll, err)) != 0))
            break;
        r->has = 1;
        r->blimit = qc->borrowing_limit < 0 ? NONE : bl;
        r->guaranteed = qc->lending_limit < 0 ? 0 : fs_kquota_pos(r->nominal - ll);
        if (!fmask[f])
            ord[n_ord++] = (uint32_t)f;
        fmask[f] |= (uint8_t)KR_BIT(res);
    }
    /* resource groups: the resources that share a flavor are one group */
    for (size_t i = 0; !rc && i < n_ord; i++) {
        unsigned mk = fmask[ord[i]];
        unsigned g = 0;
        while (g < q->ng && !(q->gmask[g] & mk))
            g++;
        if (g == q->ng)
            q->gmask[q->ng++] = (uint8_t)mk;
        else
            q->gmask[g] |= (uint8_t)mk;
        for (unsigned h = g + 1; h < q->ng;)   /* merge the groups it now overlaps */
            if (q->gmask[h] & q->gmask[g]) {
                q->gmask[g] |= q->gmask[h];
                memmove(q->gmask + h, q->gmask + h + 1, (size_t)(q->ng - h - 1));
                q->ng--;
            } else
                h++;
    }
    /* Kueue: every flavor of a resource group quotas each of its coveredResources */
    for (size_t i = 0; !rc && i < n_ord; i++) {
        unsigned g = 0;
        while (!(q->gmask[g] & fmask[ord[i]]))
            g++;
        unsigned miss = q->gmask[g] & ~(unsigned)fmask[ord[i]];
        if (!miss)
            continue;
        int r = 0;
        while (!(miss & KR_BIT(r)))
            r++;
        size_t j = 0;
        while (!(fmask[ord[j]] & KR_BIT(r)))
            j++;
        rc = fs_error_set(err, FS_EINVAL, "scheduler.kueue: ClusterQueue '%s': flavor '%s' has "
                          "no %s quota, which flavor '%s' of its resource group has (every flavor "
                          "of a resource group must quota all of the group's resources)", cc->name,
                          k->fl[ord[i]].name, res_name[r], k->fl[ord[j]].name);
    }
    for (unsigned g = 0; !rc && g < q->ng; g++) {
        for (size_t i = 0; i < n_ord; i++)
            if (fmask[ord[i]] & q->gmask[g])
                q->fl[q->n_fl++] = ord[i];
        q->gend[g] = (uint32_t)q->n_fl;
        q->cover |= q->gmask[g];
    }
    for (size_t i = 0; !rc && i < q->n_fl; i++) {  /* a gang's pods: one per node */
        const kflavor_t *f = &k->fl[q->fl[i]];
        for (size_t j = 0; j < f->n_pools; j++)
            if (cl->pools[f->pools[j]].gpus_per_node > q->node_gpus)
                q->node_gpus = cl->pools[f->pools[j]].gpus_per_node;
    }
    fs_free(ord);
    fs_free(fmask);
    return rc;
}

/* Cohort quotas: the sum of what each member lends, per flavor and resource. */
static int setup_cohorts(kueue_t *k, fs_error_t *err)
{
    size_t nfr = (k->n_fl ? k->n_fl : 1) * KR;
    for (size_t i = 0; i < k->n_coh; i++) {
        kcoh_t *h = &k->coh[i];
        h->quota = fs_calloc(nfr, sizeof *h->quota);
        h->usage = fs_calloc(nfr, sizeof *h->usage);
        if (!h->quota || !h->usage)
            return fs_error_set(err, FS_ENOMEM, "kueue: out of memory");
        for (size_t c = 0; c < h->n; c++) {
            const kcq_t *q = &k->cq[h->cqs[c]];
            for (size_t f = 0; f < q->n_fl; f++)
                for (int r = 0; r < KR; r++) {
                    const kres_t *x = fs_kquota_res(q, q->fl[f], r);
                    if (!x->has)
                        continue;
                    h->quota[(size_t)q->fl[f] * KR + (size_t)r] += x->nominal - x->guaranteed;
                    h->lendable_total[r] += x->nominal - x->guaranteed;
                }
        }
    }
    return 0;
}

/* The policy's state for a configuration and a fleet (create() with no
 * model: the check hook builds it too, so that validate enforces the same
 * rules). */
int fs_kset_build(const fs_sched_cfg_t *cfg, const fs_cluster_cfg_t *cl, void **state,
                       fs_error_t *err)
{
    const fs_kueue_cfg_t *kc = &cfg->kueue;
    *state = NULL;
    if (kc->n_cqs == 0)
        return fs_error_set(err, FS_EINVAL, "scheduler.queue kueue needs at least one ClusterQueue "
                            "(scheduler.kueue.cluster_queues or scheduler.kueue.manifests)");
    kueue_t *k = fs_calloc(1, sizeof *k);
    if (!k || fs_shapemap_init(&k->shapes)) {
        fs_free(k);
        return fs_error_set(err, FS_ENOMEM, "kueue: out of memory");
    }
    *state = k;
    size_t nf_max = kc->n_flavors;
    for (size_t i = 0; i < kc->n_cqs; i++)
        nf_max += kc->cqs[i].n_quotas;
    k->fair = kc->fair_sharing;
    k->n_pools = cl->n_pools;
    k->cq = fs_calloc(kc->n_cqs, sizeof *k->cq);
    k->coh = fs_calloc(kc->n_cqs, sizeof *k->coh);
    k->fl = fs_calloc(nf_max ? nf_max : 1, sizeof *k->fl);
    k->pools = fs_malloc((cl->n_pools ? cl->n_pools : 1) * sizeof *k->pools);
    int rc = 0;
    if (!k->cq || !k->coh || !k->fl || !k->pools)
        rc = fs_error_set(err, FS_ENOMEM, "kueue: out of memory");
    for (size_t i = 0; !rc && i < kc->n_flavors; i++) {
        int32_t f;
        if (fs_kset_flavor_index(k, kc->flavors[i].name) >= 0)
            rc = fs_error_set(err, FS_EINVAL, "scheduler.kueue: flavor '%s' is defined twice",
                              kc->flavors[i].name);
        else
            rc = add_flavor(k, cl, kc->flavors[i].name, kc->flavors[i].match, &f, err);
    }
    k->n_cq = k->cq ? kc->n_cqs : 0;   /* destroy walks n_cq of them */
    for (size_t i = 0; !rc && i < kc->n_cqs; i++) {
        for (size_t j = 0; j < i && !rc; j++)
            if (strcmp(kc->cqs[j].name, kc->cqs[i].name) == 0)
                rc = fs_error_set(err, FS_EINVAL, "scheduler.kueue: ClusterQueue '%s' is defined "
                                  "twice", kc->cqs[i].name);
        if (!rc)
            rc = setup_cq(k, &kc->cqs[i], cl, nf_max ? nf_max : 1, (uint32_t)i, err);
    }
    if (!rc)
        rc = setup_cohorts(k, err);
    k->used = KR_BIT(FS_KRES_GPU);  /* the others where some CQ covers them */
    for (size_t i = 0; !rc && i < k->n_cq; i++)
        k->used |= k->cq[i].cover;
    k->default_cq = NO_CQ;
    if (!rc && kc->default_queue && (k->default_cq = fs_kqueue_cq_by_name(k, kc->default_queue)) == NO_CQ)
        rc = fs_error_set(err, FS_EINVAL, "scheduler.kueue.default_queue: no ClusterQueue '%s'",
                          kc->default_queue);
    if (rc) {
        fs_kset_destroy(k);
        *state = NULL;
    }
    return rc;
}

/* ---- admissibility (validate) ---------------------------------------------------- */

int fs_kueue_probe_create(const fs_config_t *cfg, void **probe, fs_error_t *err)
{
    return fs_kset_build(&cfg->scheduler, &cfg->cluster, probe, err);
}

int32_t fs_kueue_cq_of(const void *probe, const char *tenant)
{
    return fs_kqueue_cq_of_name(probe, tenant);
}

void fs_kueue_probe_destroy(void *probe)
{
    if (probe)
        fs_kset_destroy(probe);
}

/* The CQ of tenant, or NO_CQ with why set. */
int32_t fs_kset_probe_cq(const kueue_t *k, const char *tenant, char *why, size_t n)
{
    int32_t c = fs_kqueue_cq_of_name(k, tenant);
    if (c != NO_CQ)
        return c;
    if (tenant)
        snprintf(why, n, "tenant '%s' has no LocalQueue, no ClusterQueue of its name and no "
                 "scheduler.kueue.default_queue", tenant);
    else
        snprintf(why, n, "jobs without a tenant go to scheduler.kueue.default_queue, which "
                 "is not set");
    return NO_CQ;
}

/* A quantity of resource r in model units, in words ("4 GPUs", "2.5 cores"). */
static void amount(char *buf, size_t n, int r, int64_t v)
{
    static const char *const unit[KR] = {"GPUs", "cores", "MiB of memory", "pods"};
    snprintf(buf, n, "%.6g %s", (double)v / res_scale[r], unit[r]);
}

int fs_kset_probe_req(const kueue_t *k, int32_t c, const int64_t *req, char *why, size_t n)
{
    const kcq_t *q = &k->cq[c];
    unsigned asked = 0;
    for (int r = 0; r < KR; r++)
        asked |= req[r] > 0 ? KR_BIT(r) : 0;
    if (asked & ~(unsigned)q->cover) {
        int r = 0;
        while (!(asked & ~(unsigned)q->cover & KR_BIT(r)))
            r++;
        if (r == FS_KRES_GPU && q->ng > 0) { /* as Kueue's CPU-only queues: no GPUs at all */
            char a[64];
            amount(a, sizeof a, r, req[r]);
            snprintf(why, n, "ClusterQueue '%s' can hold at most 0 GPUs in any flavor (it has no "
                     "nvidia.com/gpu quota), less than the %s asked", q->name, a);
        } else
            snprintf(why, n, "ClusterQueue '%s' has no %s quota (no resource group of it covers "
                     "%s), which the job asks", q->name, res_name[r], res_name[r]);
        return 0;
    }
    for (unsigned g = 0; g < q->ng; g++) {
        unsigned want = q->gmask[g] & asked;
        if (!want && g == 0 && !asked)
            want = q->gmask[0];
        if (!want)
            continue;
        int64_t most[KR] = {0};
        int one = 0;    /* some flavor holds all of them */
        for (size_t i = g ? q->gend[g - 1] : 0; i < q->gend[g]; i++) {
            int all = 1;
            for (int r = 0; r < KR; r++) {
                if (!(want & KR_BIT(r)))
                    continue;
                int64_t p = fs_kquota_potential(k, q, q->fl[i], r);
                if (p > most[r])
                    most[r] = p;
                all &= req[r] <= p;
            }
            one |= all;
        }
        if (one)
            continue;
        for (int r = 0; r < KR; r++)
            if ((want & KR_BIT(r)) && req[r] > most[r]) {
                char a[64], b[64];
                amount(a, sizeof a, r, most[r]);
                amount(b, sizeof b, r, req[r]);
                snprintf(why, n, "ClusterQueue '%s' can hold at most %s in any flavor (its nominal "
                         "quota and what its cohort may lend), less than the %s asked", q->name, a, b);
                return 0;
            }
        snprintf(why, n, "no flavor of ClusterQueue '%s' can hold all of the job's requests of "
                 "one resource group together (each fits alone in some flavor)", q->name);
        return 0;
    }
    return 1;
}

int fs_kueue_probe(const void *probe, const char *tenant, const fs_job_t *j, char *why, size_t n)
{
    const kueue_t *k = probe;
    int32_t c = fs_kset_probe_cq(k, tenant, why, n);
    if (c == NO_CQ)
        return 0;
    int64_t req[KR];
    fs_kqueue_reqv_of(k, c, j->gpus, fs_job_milli(j), j->flags, j->mig, j->cpu_milli, j->mem_mib, req);
    return fs_kset_probe_req(k, c, req, why, n);
}
