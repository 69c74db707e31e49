/*
 * fs_failspec: the failures block resolved into a spec (see fs_failspec.h
 * and docs/failures.md).
 */
#include "fs_failspec.h"
#include "fs_xid.h"
#include "../sim/fs_alloc.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#define CAUSE_MAX (FS_FAILURE_CAUSE_MAX - 1)
#define MAX_COMPONENTS 4000u
#define MAX_LEMON 64u


/* ---- presets (docs/failures.md gives the sources) --------------------------- */

typedef struct pshare {
    const char *name;
    double w;               /* count or share; normalised */
} pshare_t;

typedef struct pcomp {
    int kind;
    double mean_days;       /* exponential time between failures of one unit */
    const pshare_t *causes;
    size_t n;
} pcomp_t;

typedef struct pcause {
    const char *name;
    int repair;
} pcause_t;

typedef struct preset {
    const pcomp_t *comps;
    size_t n_comps;
    const pcause_t *causes;
    size_t n_causes;
    double hard_median_s;   /* 0: the default hard repair */
    double spare_fraction;
} preset_t;

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

/* Llama 3 Table 5: 419 unexpected interruptions in 54 days of a 16,384-GPU
 * (2,048-node) job, split by the unit that fails. */
#define L3_DAYS 54.0
#define L3_GPUS 16384.0
#define L3_NODES 2048.0
static const pshare_t l3_gpu[] = {{"gpu", 148}, {"hbm", 72}, {"sram", 19}, {"gsp", 17},
                                  {"thermal", 6}, {"sdc", 6}};
static const pshare_t l3_link[] = {{"network", 35}, {"nic", 7}};
static const pshare_t l3_host[] = {{"host_maintenance", 32}, {"ssd", 3}, {"psu", 3},
                                   {"chassis", 2}, {"io_board", 2}, {"cpu", 2}, {"memory", 2}};
static const pshare_t l3_sw[] = {{"software", 54}, {"nccl", 7}, {"dependency", 2}};
static const pcomp_t l3_comps[] = {
    {FS_FAIL_GPU, L3_GPUS * L3_DAYS / 268.0, l3_gpu, N_OF(l3_gpu)},
    {FS_FAIL_LINK, L3_NODES * L3_DAYS / 42.0, l3_link, N_OF(l3_link)},
    {FS_FAIL_NODE, L3_NODES * L3_DAYS / 46.0, l3_host, N_OF(l3_host)},
    {FS_FAIL_NODE, L3_NODES * L3_DAYS / 63.0, l3_sw, N_OF(l3_sw)},
};
static const pcause_t l3_causes[] = {
    {"gpu", FS_REPAIR_HARD}, {"hbm", FS_REPAIR_SOFT}, {"sram", FS_REPAIR_SOFT},
    {"gsp", FS_REPAIR_SOFT}, {"thermal", FS_REPAIR_HARD}, {"sdc", FS_REPAIR_HARD},
    {"network", FS_REPAIR_SOFT}, {"nic", FS_REPAIR_HARD},
    {"host_maintenance", FS_REPAIR_SOFT}, {"ssd", FS_REPAIR_HARD}, {"psu", FS_REPAIR_HARD},
    {"chassis", FS_REPAIR_HARD}, {"io_board", FS_REPAIR_HARD}, {"cpu", FS_REPAIR_HARD},
    {"memory", FS_REPAIR_HARD}, {"software", FS_REPAIR_NONE}, {"nccl", FS_REPAIR_NONE},
    {"dependency", FS_REPAIR_NONE},
};

/* Meta RSC-1: 6.50 failures per 1,000 node-days; cause mix of DOMAIN.md
 * section 5 (GPU 0.6 of which 0.4 hardware replacement, network 0.15,
 * software 0.15, host 0.1). */
static const pshare_t rsc_node[] = {{"gpu", 0.40}, {"gpu_reset", 0.20}, {"network", 0.15},
                                    {"software", 0.15}, {"host", 0.10}};
static const pcomp_t rsc_comps[] = {{FS_FAIL_NODE, 1000.0 / 6.5, rsc_node, N_OF(rsc_node)}};
static const pcause_t rsc_causes[] = {{"gpu", FS_REPAIR_HARD}, {"gpu_reset", FS_REPAIR_SOFT},
                                      {"network", FS_REPAIR_SOFT}, {"software", FS_REPAIR_SOFT},
                                      {"host", FS_REPAIR_SOFT}};

/* BLOOM-176B: 416 A100 (52 nodes), 4 spare nodes, 1-2 GPU failures a week. */
static const pshare_t bloom_gpu[] = {{"gpu", 1}};
static const pcomp_t bloom_comps[] = {{FS_FAIL_GPU, 416.0 * 7.0 / 1.5, bloom_gpu, N_OF(bloom_gpu)}};
static const pcause_t bloom_causes[] = {{"gpu", FS_REPAIR_HARD}};

/* OPT-175B: 124 nodes, about 2 machines down a day, 12 spare nodes, cloud
 * replacement "can take hours". */
static const pshare_t opt_node[] = {{"host", 1}};
static const pcomp_t opt_comps[] = {{FS_FAIL_NODE, 124.0 / 2.0, opt_node, N_OF(opt_node)}};
static const pcause_t opt_causes[] = {{"host", FS_REPAIR_HARD}};

static const preset_t presets[] = {
    [FS_FAIL_PRESET_NONE] = {NULL, 0, NULL, 0, 0, 0},
    [FS_FAIL_PRESET_LLAMA3] = {l3_comps, N_OF(l3_comps), l3_causes, N_OF(l3_causes), 0, 0},
    [FS_FAIL_PRESET_META_RSC] = {rsc_comps, N_OF(rsc_comps), rsc_causes, N_OF(rsc_causes), 0, 0},
    [FS_FAIL_PRESET_BLOOM] = {bloom_comps, N_OF(bloom_comps), bloom_causes, N_OF(bloom_causes),
                              0, 4.0 / 52.0},
    [FS_FAIL_PRESET_OPT] = {opt_comps, N_OF(opt_comps), opt_causes, N_OF(opt_causes),
                            4.0 * 3600.0, 12.0 / 124.0},
};

/* Repair times when the scenario and the preset give none (DOMAIN.md 5). */
#define SOFT_MEDIAN_S 900.0
#define SOFT_SIGMA 0.5
#define HARD_MEDIAN_S (3.0 * 86400.0)
#define HARD_SIGMA 0.8



void fs_fail_spec_release(fs_fail_spec_t *sp)
{
    for (size_t i = 0; i < sp->n_comps; i++) {
        fs_fail_comp_t *c = &sp->comps[i];
        fs_dist_release(&c->tbf);
        fs_free(c->cum);
        fs_free(c->cause);
        fs_free(c->seq);
        fs_free(c->born);
    }
    fs_free(sp->comps);
    fs_free(sp->causes);
    fs_dist_release(&sp->soft);
    fs_dist_release(&sp->hard);
    memset(sp, 0, sizeof *sp);
}

static void keyf(char *key, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void keyf(char *key, size_t n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (key && n)
        vsnprintf(key, n, fmt, ap);
    va_end(ap);
}

/* Index of cause `name`, added with `repair` if new.  FS_EINVAL: too long. */
static int cause_add(fs_fail_spec_t *sp, const char *name, int repair, uint32_t xid, const fs_dist_t *time,
                     uint32_t *idx)
{
    if (strlen(name) > CAUSE_MAX)
        return FS_EINVAL;
    for (size_t i = 0; i < sp->n_causes; i++)
        if (strcmp(sp->causes[i].name, name) == 0) {
            if (idx)
                *idx = (uint32_t)i;
            return 0;
        }
    if (fs_grow((void **)&sp->causes, &sp->cap_causes, sp->n_causes + 1, sizeof *sp->causes))
        return FS_ENOMEM;
    fs_fail_cause_t *c = &sp->causes[sp->n_causes];
    memset(c, 0, sizeof *c);
    memcpy(c->name, name, strlen(name));
    c->repair = repair;
    c->xid = xid;
    c->time = time;
    if (idx)
        *idx = (uint32_t)sp->n_causes;
    sp->n_causes++;
    return 0;
}

static int lognormal(fs_dist_t *d, double median, double sigma)
{
    fs_dist_init(d);
    d->kind = FS_DIST_LOGNORMAL;
    d->median = median;
    d->sigma = sigma;
    return fs_dist_prepare(d, NULL) ? FS_EINVAL : 0;
}

/* Cause shares of one component: cumulative shares and cause indexes. */
static int comp_causes(fs_fail_spec_t *sp, fs_fail_comp_t *c, const char *const *names, const double *w,
                       size_t n, int dflt)
{
    const char *kind_name = fs_failure_component_name(c->kind);
    size_t k = n ? n : 1;
    c->cum = fs_malloc(k * sizeof *c->cum);
    c->cause = fs_malloc(k * sizeof *c->cause);
    if (!c->cum || !c->cause)
        return FS_ENOMEM;
    c->n_causes = k;
    double total = 0, run = 0;
    for (size_t i = 0; i < n; i++)
        total += w[i];
    for (size_t i = 0; i < k; i++) {
        int rc = cause_add(sp, n ? names[i] : kind_name, dflt, 0, NULL, &c->cause[i]);
        if (rc)
            return rc;
        run += n ? w[i] : 1.0;
        c->cum[i] = n ? run / total : 1.0;
    }
    c->cum[k - 1] = 1.0;
    return 0;
}

static int pool_index(const fs_cluster_cfg_t *cl, const char *name)
{
    for (size_t i = 0; i < cl->n_pools; i++)
        if (strcmp(cl->pools[i].name, name) == 0)
            return (int)i;
    return -1;
}

/* Builds the spec of cfg->failures.  On FS_EINVAL, key names the key. */
int fs_fail_spec_resolve(const fs_config_t *cfg, fs_fail_spec_t *sp, char *key, size_t keylen, fs_error_t *err)
{
    const fs_failure_cfg_t *f = &cfg->failures;
    const preset_t *pr = &presets[f->preset >= 0 && (size_t)f->preset < N_OF(presets) ? f->preset : 0];
    int rc;
    memset(sp, 0, sizeof *sp);
    fs_dist_init(&sp->soft);
    fs_dist_init(&sp->hard);
    if (f->n_components > MAX_COMPONENTS) {
        keyf(key, keylen, "failures.components");
        return fs_error_set(err, FS_EINVAL, "failures.components: at most %u items", MAX_COMPONENTS);
    }
    /* causes: the scenario's, then the preset's */
    for (size_t i = 0; i < f->n_causes; i++) {
        const fs_fail_cause_cfg_t *c = &f->causes[i];
        for (size_t j = 0; j < i; j++)
            if (strcmp(f->causes[j].name, c->name) == 0) {
                keyf(key, keylen, "failures.causes.%zu.name", i);
                return fs_error_set(err, FS_EINVAL, "failures.causes.%zu.name: cause '%s' is "
                                    "already listed (item %zu)", i, c->name, j);
            }
        int repair = c->repair;
        if (c->xid || repair == FS_REPAIR_XID) {
            const fs_xid_t *x = c->xid ? fs_xid_find(c->xid) : NULL;
            if (!x) {
                char known[400];
                size_t len = 0;
                for (size_t k = 0; k < fs_xid_count() && len < sizeof known; k++)
                    len += (size_t)snprintf(known + len, sizeof known - len, "%s%u", k ? ", " : "",
                                            fs_xid_at(k)->code);
                keyf(key, keylen, c->xid ? "failures.causes.%zu.xid" : "failures.causes.%zu", i);
                if (c->xid)
                    return fs_error_set(err, FS_EINVAL, "failures.causes.%zu.xid: Xid %u is not in "
                                        "fleetsim's catalog (known: %s); use one of those, or xid: 0 "
                                        "with repair: soft, hard or none", i, c->xid, known);
                return fs_error_set(err, FS_EINVAL, "failures.causes.%zu: cause '%s' needs a repair "
                                    "path (repair: soft, hard or none) or an xid whose catalog "
                                    "action gives it (one of %s)", i, c->name, known);
            }
            if (repair == FS_REPAIR_XID)
                repair = fs_xid_repair_path(x->action);
        }
        rc = cause_add(sp, c->name, repair, c->xid, c->time.kind != FS_DIST_NONE ? &c->time : NULL,
                       NULL);
        if (rc == FS_EINVAL) {
            keyf(key, keylen, "failures.causes.%zu.name", i);
            return fs_error_set(err, rc, "failures.causes.%zu.name: '%s' is longer than %d "
                                "characters", i, c->name, CAUSE_MAX);
        }
        if (rc)
            return fs_error_set(err, rc, "failures: out of memory");
    }
    for (size_t i = 0; i < pr->n_causes; i++)
        if ((rc = cause_add(sp, pr->causes[i].name, pr->causes[i].repair, 0, NULL, NULL)))
            return fs_error_set(err, rc, "failures: out of memory");
    /* components: the scenario's, then the preset's */
    size_t n = f->n_components + pr->n_comps;
    sp->comps = n ? fs_calloc(n, sizeof *sp->comps) : NULL;
    if (n && !sp->comps)
        return fs_error_set(err, FS_ENOMEM, "failures: out of memory");
    sp->n_comps = n;
    for (size_t i = 0; i < n; i++) {
        fs_fail_comp_t *c = &sp->comps[i];
        fs_dist_init(&c->tbf);
        c->pool = -1;
        if (i < f->n_components) {
            const fs_fail_component_cfg_t *fc = &f->components[i];
            c->kind = fc->kind;
            if (fc->pool && (c->pool = pool_index(&cfg->cluster, fc->pool)) < 0) {
                keyf(key, keylen, "failures.components.%zu.pool", i);
                return fs_error_set(err, FS_EINVAL, "failures.components.%zu.pool: no pool named "
                                    "'%s'", i, fc->pool);
            }
            if (fs_dist_copy(&c->tbf, &fc->tbf))
                return fs_error_set(err, FS_ENOMEM, "failures: out of memory");
            if (!(fs_dist_mean(&c->tbf) > 0)) {
                keyf(key, keylen, "failures.components.%zu.tbf", i);
                return fs_error_set(err, FS_EINVAL, "failures.components.%zu.tbf: the mean time "
                                    "between failures must be > 0", i);
            }
            rc = comp_causes(sp, c, (const char *const *)fc->cause_names, fc->cause_shares,
                             fc->n_causes, f->repair_default);
            if (rc == FS_EINVAL) {
                keyf(key, keylen, "failures.components.%zu.causes", i);
                return fs_error_set(err, rc, "failures.components.%zu.causes: a cause name is "
                                    "longer than %d characters", i, CAUSE_MAX);
            }
        } else {
            const pcomp_t *pc = &pr->comps[i - f->n_components];
            const char *names[16];
            double w[16];
            c->kind = pc->kind;
            c->tbf.kind = FS_DIST_EXPONENTIAL;
            c->tbf.mean = pc->mean_days * 86400.0;
            if (fs_dist_prepare(&c->tbf, err))
                return FS_EINTERNAL;
            for (size_t j = 0; j < pc->n && j < 16; j++) {
                names[j] = pc->causes[j].name;
                w[j] = pc->causes[j].w;
            }
            rc = comp_causes(sp, c, names, w, pc->n, f->repair_default);
        }
        if (rc)
            return rc == FS_ENOMEM ? fs_error_set(err, rc, "failures: out of memory") : rc;
    }
    /* repair times */
    if (f->repair_soft.kind != FS_DIST_NONE)
        rc = fs_dist_copy(&sp->soft, &f->repair_soft);
    else
        rc = lognormal(&sp->soft, SOFT_MEDIAN_S, SOFT_SIGMA);
    if (!rc && f->repair_hard.kind != FS_DIST_NONE)
        rc = fs_dist_copy(&sp->hard, &f->repair_hard);
    else if (!rc)
        rc = lognormal(&sp->hard, pr->hard_median_s > 0 ? pr->hard_median_s : HARD_MEDIAN_S,
                       HARD_SIGMA);
    if (rc)
        return fs_error_set(err, FS_ENOMEM, "failures: out of memory");
    /* the rest */
    for (size_t i = 0; i < f->n_planned; i++)
        if (f->planned[i].cause && strlen(f->planned[i].cause) > CAUSE_MAX) {
            keyf(key, keylen, "failures.planned.%zu.cause", i);
            return fs_error_set(err, FS_EINVAL, "failures.planned.%zu.cause: '%s' is longer than "
                                "%d characters", i, f->planned[i].cause, CAUSE_MAX);
        }
    if (f->spare_nodes && f->spare_fraction > 0) {
        keyf(key, keylen, "failures.spares.fraction");
        return fs_error_set(err, FS_EINVAL, "failures.spares: give nodes or fraction, not both");
    }
    sp->spare_fraction = f->spare_nodes || f->spare_fraction > 0 ? f->spare_fraction
                                                                 : pr->spare_fraction;
    for (size_t i = 0; i < cfg->cluster.n_pools; i++) {
        const fs_pool_cfg_t *p = &cfg->cluster.pools[i];
        double k = f->spare_nodes ? (double)f->spare_nodes : floor(sp->spare_fraction * p->nodes + 0.5);
        if (k >= (double)p->nodes) {
            keyf(key, keylen, "%s", f->spare_nodes ? "failures.spares.nodes" : "failures.spares");
            return fs_error_set(err, FS_EINVAL, "failures.spares: %.0f spare nodes leave pool '%s' "
                                "(%u nodes) none in service", k, p->name, p->nodes);
        }
    }
    if (f->lemon_after > MAX_LEMON) {
        keyf(key, keylen, "failures.lemon.after");
        return fs_error_set(err, FS_EINVAL, "failures.lemon.after: at most %u", MAX_LEMON);
    }
    return 0;
}

int fs_failure_cfg_check(const fs_config_t *cfg, char *key, size_t keylen, fs_error_t *err)
{
    fs_fail_spec_t sp;
    if (key && keylen)
        key[0] = '\0';
    int rc = fs_fail_spec_resolve(cfg, &sp, key, keylen, err);
    fs_fail_spec_release(&sp);
    return rc;
}

double fs_failure_node_mttf_s(const fs_config_t *cfg, const char *pool, uint32_t gpn)
{
    fs_fail_spec_t sp;
    double rate = 0;    /* failures per second of one node */
    memset(&sp, 0, sizeof sp);
    int rc = cfg->failures.given ? fs_fail_spec_resolve(cfg, &sp, NULL, 0, NULL) : FS_EINVAL;
    if (rc == FS_ENOMEM) {  /* not "nothing fails": the caller reports it */
        fs_fail_spec_release(&sp);
        return -1;
    }
    if (rc == 0) {
        for (size_t i = 0; i < sp.n_comps; i++) {
            const fs_fail_comp_t *c = &sp.comps[i];
            const char *cp = c->pool >= 0 ? cfg->cluster.pools[c->pool].name : NULL;
            double mean = fs_dist_mean(&c->tbf);
            if ((cp && pool && strcmp(cp, pool) != 0) || !(mean > 0) || !isfinite(mean))
                continue;
            if (c->kind == FS_FAIL_GPU)
                rate += (double)gpn / mean;
            else if (fs_fail_node_scope(c->kind))
                rate += 1.0 / mean;
        }
    }
    fs_fail_spec_release(&sp);
    return rate > 0 ? 1.0 / rate : 0;
}
