/*
 * fs_rules: the rules between keys, checked on the converted configuration
 * and blamed on the offending key's node (FILE:LINE:COL or --set KEY), so
 * that `fleetsim validate` refuses what `run` would.
 */
#include "fs_scnint.h"
#include "fs_units.h"
#include "fs_kueue_yaml.h"
#include "../sim/fs_alloc.h"
#include "../traces/fs_carbon.h"
#include "../traces/fs_reqtrace.h"
#include "../models/fs_service.h"
#include "../models/fs_fleetcfg.h"
#include "../models/fs_failure.h"
#include "../models/fs_policy.h"
#include "../models/fs_cluster.h"
#include "../models/fs_mig.h"
#include "../models/fs_taint.h"
#include "../models/fs_catalog.h"
#include "../models/fs_power.h"
#include "../models/fs_autoscale.h"
#include "../models/fs_purchase.h"
#include "../models/fs_cost.h"
#include "../models/fs_llmperf.h"
#include "../models/fs_fabric.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define MAX_TOTAL_GPUS (UINT64_C(1) << 31)

/* ---- cross-field rules ------------------------------------------------------ */

static const fs_ynode_t *node_or(const fs_sctx_t *c, const char *path, const char *fallback)
{
    const fs_ynode_t *n = fs_yt_get(c->root, path);
    if (!n && fallback)
        n = fs_yt_get(c->root, fallback);
    return n ? n : fs_yt_nearest(c->root, path);
}

/* cost.carbon_*: one source of intensity, the series read now (so that
 * `fleetsim validate` sees its errors, at its own FILE:LINE:COL), and
 * embodied carbon only where capex is (owned pools). */
static int validate_carbon(fs_sctx_t *c)
{
    fs_cost_cfg_t *cc = &c->cfg->cost;
    char key[64];
    for (size_t i = 0; i < cc->n_pools; i++)
        if (cc->pools[i].embodied_kgco2e > 0 && cc->pools[i].billing != FS_BILL_OWNED) {
            snprintf(key, sizeof key, "cost.pools.%zu.embodied_kgco2e", i);
            return fs_yt_fail(c, node_or(c, key, "cost.pools"),
                              "%s: pool '%s' is not owned: embodied carbon is amortised like capex, "
                              "on owned pools only (a cloud price is the provider's)", key,
                              cc->pools[i].pool ? cc->pools[i].pool : "");
        }
    if (!cc->carbon_series)
        return 0;
    if (cc->carbon_intensity > 0)
        return fs_yt_fail(c, node_or(c, "cost.carbon_series", "cost"),
                          "cost.carbon_series: give carbon_intensity or carbon_series, not both "
                          "(carbon_intensity is %g)", cc->carbon_intensity);
    fs_error_t e;
    double *g = NULL;
    size_t n = 0;
    int rc = fs_carbon_load(cc->carbon_series, &g, &n, &e);
    if (rc == FS_ENOMEM)
        return fs_yt_nomem(c);
    if (rc == FS_EINVAL)    /* the message starts with the series' FILE:LINE:COL */
        return fs_error_set(c->err, FS_EINVAL, "%s (cost.carbon_series)", e.msg);
    if (rc)
        return fs_yt_fail(c, node_or(c, "cost.carbon_series", "cost"), "cost.carbon_series: %s", e.msg);
    fs_free(cc->carbon_hourly);
    cc->carbon_hourly = g;
    cc->n_carbon_hours = n;
    return 0;
}

/* cluster.pools[i].mig: the pool's GPU model has MIG, the layout parses
 * and fits (fs_mig_layout_parse), at most FS_CLUSTER_MIG_MAX_GPN GPUs per
 * node.  A token's error points at the token inside the value. */
static int validate_mig(fs_sctx_t *c, size_t i)
{
    const fs_pool_cfg_t *p = &c->cfg->cluster.pools[i];
    char key[64], gkey[64];
    snprintf(key, sizeof key, "cluster.pools.%zu.mig", i);
    snprintf(gkey, sizeof gkey, "cluster.pools.%zu.gpu", i);
    fs_error_t e;
    const fs_mig_model_t *m = fs_mig_model_lookup(p->gpu, &e);
    if (!m)
        return fs_yt_fail(c, node_or(c, key, NULL), "%s: GPU model '%s' of the pool has no MIG (%s)", key,
                          p->gpu, e.msg);
    fs_mig_spec_t spec;
    size_t off = 0;
    if (fs_mig_layout_parse(m, p->mig, &spec, &off, &e)) {
        const fs_ynode_t *n = node_or(c, key, NULL);
        fs_ynode_t at;
        if (n && n->origin == 0 && n->kind == FS_YT_SCALAR && !strchr(n->s, '\n')) {
            at = *n;    /* the token's column: a quoted scalar starts after its quote */
            at.col += (unsigned)off + (n->plain ? 0u : 1u);
            n = &at;
        }
        return fs_yt_fail(c, n, "%s: %s", key, e.msg);
    }
    /* the policies that count GPUs rather than ask the cluster: quotas
     * (Kueue, Volcano), preemption plans and backfill shadows */
    const fs_sched_cfg_t *sc = &c->cfg->scheduler;
    if (spec.enabled && (sc->queue == FS_QUEUE_KUEUE || sc->queue == FS_QUEUE_VOLCANO ||
                         fs_policy_preemptor(c->cfg) || sc->backfill != FS_BACKFILL_NONE))
        return fs_yt_fail(c, node_or(c, key, NULL),
                          "%s: MIG pools work with the non-preemptive queues without backfill only "
                          "(fifo, priority, sjf, slurm; preemption: none; backfill: none): Kueue and "
                          "Volcano quotas, preemption plans and backfill shadows count whole GPUs "
                          "(docs/mig.md)", key);
    if (spec.enabled && p->gpus_per_node > FS_CLUSTER_MIG_MAX_GPN)
        return fs_yt_fail(c, node_or(c, key, NULL), "%s: a MIG pool has at most %u GPUs per node (%s is %u)",
                          key, FS_CLUSTER_MIG_MAX_GPN, gkey, p->gpus_per_node);
    return 0;
}

/* cluster.pools[i].mig_repartition (enabled): the pool has a MIG layout
 * (not all-disabled) to re-cut. */
static int validate_mig_recut(fs_sctx_t *c, size_t i)
{
    const fs_pool_cfg_t *p = &c->cfg->cluster.pools[i];
    char key[64];
    snprintf(key, sizeof key, "cluster.pools.%zu.mig_repartition", i);
    fs_error_t e;
    const fs_mig_model_t *m = p->mig ? fs_mig_model_lookup(p->gpu, &e) : NULL;
    fs_mig_spec_t spec;
    if (!m || fs_mig_layout_parse(m, p->mig, &spec, NULL, &e) || !spec.enabled)
        return fs_yt_fail(c, node_or(c, key, NULL),
                          "%s: expected a MIG pool to re-partition (a pool whose `mig` is a layout, "
                          "not all-disabled; docs/mig.md)", key);
    return 0;
}

/* The catalog's TDP of the pool's GPU, W; 0 when the catalog has none. */
static double pool_tdp(const fs_pool_cfg_t *p)
{
    int cat = fs_catalog_find(p->gpu);
    return cat >= 0 ? fs_catalog_get((size_t)cat)->tdp_w : 0;
}

/* Thermal throttling (telemetry.throttle_c) on pool i: the limit it sets,
 * (throttle_c - ambient_c) / 0.07 W, must leave the GPU above its floor (idle
 * + context), and must not bind on a MIG pool (not modelled, as power caps). */
static int validate_throttle(fs_sctx_t *c, size_t i)
{
    const fs_pool_cfg_t *p = &c->cfg->cluster.pools[i];
    char key[64];
    snprintf(key, sizeof key, "cluster.pools.%zu.ambient_c", i);
    double tdp = pool_tdp(p);
    if (!(tdp > 0))
        return 0;   /* no TDP: the power model does not apply (nor throttling) */
    double lim = fs_thermal_limit_w(c->cfg->telemetry.throttle_c, p->ambient_c);
    if (lim <= fs_power_floor_w(tdp))
        return fs_yt_fail(c, node_or(c, key, "telemetry.throttle_c"),
                          "%s: at %g C the %s would pass telemetry.throttle_c (%g C) even at its idle + "
                          "context draw (%g W: the limit is (%g - %g) / %g = %g W); expected a cooler "
                          "pool or a higher slowdown temperature", key, p->ambient_c, p->gpu,
                          c->cfg->telemetry.throttle_c, fs_power_floor_w(tdp),
                          c->cfg->telemetry.throttle_c, p->ambient_c, FS_THERMAL_C_PER_W, lim);
    if (p->mig && lim < tdp)
        return fs_yt_fail(c, node_or(c, key, "telemetry.throttle_c"),
                          "%s: thermal throttling of MIG pools is not modelled (the instances share "
                          "one GPU's clock): at %g C the %s would throttle above %g W; cool the pool "
                          "or raise telemetry.throttle_c above %g C", key, p->ambient_c, p->gpu, lim,
                          p->ambient_c + FS_THERMAL_C_PER_W * tdp);
    return 0;
}

/* cluster.pools[i].power_cap_w: above the GPU's floor (idle + context), and
 * not on a MIG pool (whose instances share one GPU's limit: not modelled). */
static int validate_power_cap(fs_sctx_t *c, size_t i)
{
    const fs_pool_cfg_t *p = &c->cfg->cluster.pools[i];
    char key[64];
    snprintf(key, sizeof key, "cluster.pools.%zu.power_cap_w", i);
    double tdp = pool_tdp(p);
    if (!(tdp > 0))
        return fs_yt_fail(c, node_or(c, key, NULL), "%s: the catalog has no TDP for GPU '%s'", key, p->gpu);
    if (p->power_cap_w <= fs_power_floor_w(tdp))
        return fs_yt_fail(c, node_or(c, key, NULL),
                          "%s: %g W is not above the %s's idle + context draw (%g W: 10%% of its %g W "
                          "TDP + %g W); expected more, or 0 for no cap", key, p->power_cap_w, p->gpu,
                          fs_power_floor_w(tdp), tdp, FS_POWER_CONTEXT_W);
    if (p->mig)
        return fs_yt_fail(c, node_or(c, key, NULL),
                          "%s: power caps on MIG pools are not modelled (the instances share one "
                          "GPU's limit); remove the cap or the pool's mig", key);
    return 0;
}

/* cluster.pools[i].sharing: exactly one of time_slicing and mps; not on a
 * MIG pool; only with the placements that go through the cluster's
 * request calls (pack, first_fit, topology) and the queues that place in a
 * job's own pools (Kueue and Volcano quotas count whole GPUs). */
static int validate_sharing(fs_sctx_t *c, size_t i)
{
    const fs_pool_cfg_t *p = &c->cfg->cluster.pools[i];
    const fs_sched_cfg_t *sc = &c->cfg->scheduler;
    char key[64];
    snprintf(key, sizeof key, "cluster.pools.%zu.sharing", i);
    const fs_ynode_t *at = node_or(c, key, NULL);
    if ((p->time_slicing != 0) == (p->mps != 0))
        return fs_yt_fail(c, at, "%s: expected exactly one of time_slicing: N and mps: N (N in 2..32)", key);
    if (p->mig)
        return fs_yt_fail(c, at, "%s: a MIG pool cannot also be shared (remove mig or sharing)", key);
    if (sc->placement != FS_PLACE_PACK && sc->placement != FS_PLACE_FIRST_FIT &&
        sc->placement != FS_PLACE_TOPOLOGY)
        return fs_yt_fail(c, node_or(c, "scheduler.placement", key),
                          "%s: shared pools work with scheduler.placement pack, first_fit or topology "
                          "(the scored placements do not know replicas yet; docs/models.md)", key);
    if (sc->queue == FS_QUEUE_KUEUE || sc->queue == FS_QUEUE_VOLCANO)
        return fs_yt_fail(c, at, "%s: shared pools work with the queues that place in a job's own pools "
                          "(fifo, priority, sjf, srtf, las, slurm and plugins): Kueue and Volcano "
                          "quotas count whole GPUs", key);
    return 0;
}

/* A taint list (models/fs_taint.h) at the key made from fmt and i: a bad
 * token's error points at the token inside the value.  Taints on pools
 * are refused with Kueue and Volcano, whose flavors and queues choose the
 * pools themselves. */
static int validate_taints(fs_sctx_t *c, const char *list, const char *key)
{
    char why[300];
    size_t off = 0;
    if (fs_taint_check(list, &off, why, sizeof why)) {
        const fs_ynode_t *n = node_or(c, key, NULL);
        fs_ynode_t at;
        if (n && n->origin == 0 && n->kind == FS_YT_SCALAR && !strchr(n->s, '\n')) {
            at = *n;
            at.col += (unsigned)off + (n->plain ? 0u : 1u);
            n = &at;
        }
        return fs_yt_fail(c, n, "%s: %s", key, why);
    }
    const fs_sched_cfg_t *sc = &c->cfg->scheduler;
    if (strncmp(key, "cluster.", 8) == 0 &&
        (sc->queue == FS_QUEUE_KUEUE || sc->queue == FS_QUEUE_VOLCANO))
        return fs_yt_fail(c, node_or(c, key, NULL), "%s: pool taints work with the queues that place "
                          "in a job's own pools (fifo, priority, sjf, srtf, las, slurm and plugins); "
                          "Kueue flavors and Volcano queues choose pools themselves (Kueue's "
                          "ResourceFlavor nodeTaints are not modelled)", key);
    return 0;
}

/* cluster.from (pools from a machine list, after the written ones; their
 * GPU models need not be in the catalog: unknown, speed 1.0), then each
 * pool's own rules; *largest: the GPUs of the largest pool. */
static int rules_pools(fs_sctx_t *c, uint64_t *largest)
{
    fs_config_t *cfg = c->cfg;
    int rc;
    char p1[64], p2[64];
    cfg->cluster.n_from = 0;
    if (cfg->cluster.from.given) {
        size_t given = cfg->cluster.n_pools;
        fs_error_t e;
        int frc = fs_fleetcfg_load(cfg->cluster.from.format, cfg->cluster.from.path,
                                   cfg->cluster.from.gpu, &cfg->cluster.pools, &cfg->cluster.n_pools,
                                   NULL, &e);
        if (frc == FS_ENOMEM)
            return fs_yt_nomem(c);
        if (frc)
            return fs_yt_fail(c, node_or(c, "cluster.from.path", "cluster.from"), "cluster.from: %s", e.msg);
        cfg->cluster.n_from = cfg->cluster.n_pools - given;
    }
    if (cfg->cluster.n_pools == 0) {
        char exp[700];
        size_t ri;
        return fs_yt_fail(c, fs_yt_nearest(c->root, "cluster.pools"),
                          "missing key 'cluster.pools' (expected %s; or give cluster.from)",
                          fs_keys_expect(fs_conv_find_row(&fs_keys_config, "cluster.pools", &ri), exp, sizeof exp));
    }
    uint64_t total = 0;
    *largest = 0;
    for (size_t i = 0; i < cfg->cluster.n_pools; i++) {
        const fs_pool_cfg_t *p = &cfg->cluster.pools[i];
        for (size_t j = 0; j < i; j++)
            if (strcmp(cfg->cluster.pools[j].name, p->name) == 0) {
                snprintf(p1, sizeof p1, "cluster.pools.%zu.name", i);
                snprintf(p2, sizeof p2, "cluster.pools.%zu", j);
                return fs_yt_fail(c, node_or(c, p1, NULL), "%s: pool name '%s' is already used by %s", p1,
                                  p->name, p2);
            }
        if (p->mig && (rc = validate_mig(c, i)) != 0)
            return rc;
        if (p->mig_recut_given && p->mig_recut && (rc = validate_mig_recut(c, i)) != 0)
            return rc;
        if (p->power_cap_w > 0 && (rc = validate_power_cap(c, i)) != 0)
            return rc;
        if (c->cfg->telemetry.throttle_c > 0 && (rc = validate_throttle(c, i)) != 0)
            return rc;
        if (p->sharing && (rc = validate_sharing(c, i)) != 0)
            return rc;
        if (p->taints) {
            snprintf(p1, sizeof p1, "cluster.pools.%zu.taints", i);
            if ((rc = validate_taints(c, p->taints, p1)) != 0)
                return rc;
        }
        uint64_t g = (uint64_t)p->nodes * p->gpus_per_node;
        total += g;
        if (g > *largest)
            *largest = g;
    }
    if (total > MAX_TOTAL_GPUS)
        return fs_yt_fail(c, node_or(c, "cluster.pools", NULL),
                          "cluster.pools: %llu GPUs in all is more than the limit of 2^31",
                          (unsigned long long)total);
    return 0;
}

/* workload.synthetic: the MIG profile, job sizes that fit a pool of
 * `largest` GPUs, and the generator's own rules (profile names, size
 * classes, ...) blamed on the key the generator names. */
static int rules_synth(fs_sctx_t *c, uint64_t largest)
{
    fs_config_t *cfg = c->cfg;
    fs_synth_cfg_t *s = &cfg->workload.synth;
    const fs_ynode_t *mix = fs_yt_get(c->root, "workload.synthetic.gpus");
    s->mig = 0;
    if (cfg->workload.mig_profile) {  /* a profile some MIG model has */
        const char *n = cfg->workload.mig_profile;
        if (!(s->mig = fs_mig_code_find(n, strlen(n))))
            return fs_yt_fail(c, node_or(c, "workload.synthetic.mig_profile", "workload.synthetic"),
                              "workload.synthetic.mig_profile: unknown MIG profile '%s' (expected a "
                              "profile of a MIG GPU model such as 1g.10gb, 3g.40gb; docs/mig.md)", n);
        s->mig_milli = fs_mig_code_milli(s->mig);
    }
    for (size_t i = 0; i < s->n_sizes && !s->mig; i++)
        if (s->sizes[i] > largest)
            return fs_yt_fail(c, mix && mix->kind == FS_YT_MAP && i < mix->n ? mix->items[i].k : mix,
                              "workload.synthetic.gpus: job size %u is larger than any pool (largest: %llu GPUs)",
                              s->sizes[i], (unsigned long long)largest);
    s->horizon = cfg->horizon;
    fs_error_t se;
    char skey[128];
    int rc = fs_synth_cfg_check_key(s, skey, sizeof skey, &se);
    if (rc == FS_ENOMEM)
        return fs_yt_nomem(c);
    if (rc)
        return fs_yt_fail(c, node_or(c, skey[0] ? skey : "workload.synthetic", "workload.synthetic"),
                          "%s", se.msg);
    return 0;
}

/* The result of a model's configuration check (fs_*_cfg_check: 0,
 * FS_EINVAL with the key to blame, FS_ENOMEM) as the loader's error. */
static int keyed(fs_sctx_t *c, int rc, const char *key, const char *fallback, const fs_error_t *e)
{
    if (rc == FS_ENOMEM)
        return fs_yt_nomem(c);
    if (rc)
        return fs_yt_fail(c, node_or(c, *key ? key : fallback, fallback), "%s", e->msg);
    return 0;
}

/* The cost model's rates (what every run computes first, fs_cost_rates):
 * pool names in cost.pools and cost.purchases, prices, the power model's
 * TDP.  Its messages start with the key they are about ("cost.pools.1.pool:
 * ...", "cost.energy: ...", "cost: ..."), which is blamed. */
static int rules_cost(fs_sctx_t *c)
{
    const fs_config_t *cfg = c->cfg;
    fs_cost_rate_t *r = fs_calloc(cfg->cluster.n_pools + 1, sizeof *r);
    if (!r)
        return fs_yt_nomem(c);
    fs_error_t e;
    int rc = fs_cost_rates(cfg, r, &e);
    fs_free(r);
    if (rc == 0 || rc == 1)     /* 1: a price is missing and no cost block asks for one */
        return 0;
    char key[128];
    size_t kl = strspn(e.msg, "abcdefghijklmnopqrstuvwxyz0123456789_.");
    snprintf(key, sizeof key, "%.*s", e.msg[kl] == ':' && kl < sizeof key ? (int)kl : 0, e.msg);
    return keyed(c, rc, key, "cost", &e);
}

/* services[i].requests.trace: opened and its first request read now, as
 * the run would (a missing file, a directory, a bad header or first row
 * are refused at the key); a trace with no request is valid but warned
 * about on stderr, since the service then gets no traffic. */
static int rules_request_traces(fs_sctx_t *c)
{
    const fs_services_cfg_t *sv = &c->cfg->services;
    for (size_t i = 0; i < sv->n; i++) {
        const fs_service_cfg_t *s = &sv->list[i];
        if (s->process != FS_SVC_TRACE || !s->trace)
            continue;
        char key[64], pos[512];
        snprintf(key, sizeof key, "services.%zu.requests.trace", i);
        fs_error_t e;
        int rc = fs_reqtrace_probe(s->trace, &e);
        if (rc == FS_ENOMEM)
            return fs_yt_nomem(c);
        if (rc == 1) {
            fs_yt_where(c, node_or(c, key, "services"), pos, sizeof pos);
            fprintf(stderr, "%s: warning: %s: %s\n", pos, key, e.msg);
        } else if (rc) {
            return fs_yt_fail(c, node_or(c, key, "services"), "%s: %s", key, e.msg);
        }
    }
    return 0;
}

/* services[].performance[]: which numbers each row wrote (a preset fills
 * the others), then the presets filled (models/fs_llmperf.h), before any
 * rule reads the rows. */
static int rules_presets(fs_sctx_t *c)
{
    static const struct {
        const char *key;
        unsigned bit;
    } keys[] = {{"prefill", FS_SVP_PREFILL}, {"decode", FS_SVP_DECODE},
                {"max_batch", FS_SVP_MAX_BATCH}, {"decode_single", FS_SVP_DECODE1},
                {"kv_tokens", FS_SVP_KV}, {"tp", FS_SVP_TP}, {"dtype", FS_SVP_DTYPE},
                {"gpu_memory_utilization", FS_SVP_UTIL}};
    fs_services_cfg_t *sc = &c->cfg->services;
    char key[200];
    fs_error_t e;
    for (size_t i = 0; i < sc->n; i++)
        for (size_t j = 0; j < sc->list[i].n_perf; j++) {
            fs_svc_perf_cfg_t *p = &sc->list[i].perf[j];
            p->given = 0;
            for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
                snprintf(key, sizeof key, "services.%zu.performance.%zu.%s", i, j, keys[k].key);
                if (fs_yt_get(c->root, key))
                    p->given |= keys[k].bit;
            }
        }
    return keyed(c, fs_llm_fill_services(sc, key, sizeof key, &e), key, "services", &e);
}

/* The rules that the models check again when a run builds them: failures,
 * services, node groups, the purchase timeline, cost, carbon, taints,
 * Kueue, the policy; each refused here at the key it names. */
static int rules_models(fs_sctx_t *c)
{
    fs_config_t *cfg = c->cfg;
    char key[200];
    fs_error_t e;
    int rc;
    if (cfg->failures.given &&  /* failures.*: pools, causes, spares, presets */
        (rc = keyed(c, fs_failure_cfg_check(cfg, key, sizeof key, &e), key, "failures", &e)) != 0)
        return rc;
    if (cfg->services.n &&
        ((rc = rules_presets(c)) != 0 ||
         (rc = keyed(c, fs_service_cfg_check(cfg, key, sizeof key, &e), key, "services", &e)) != 0 ||
         (rc = rules_request_traces(c)) != 0))
        return rc;
    /* the rules that need the fleet built: topology, planned units, a pool
     * for every service */
    if ((rc = keyed(c, fs_model_cfg_check(cfg, key, sizeof key, &e), key, "cluster", &e)) != 0 ||
        (rc = keyed(c, fs_fabric_cfg_check(cfg, key, sizeof key, &e), key, "cluster.fabric",
                    &e)) != 0)
        return rc;
    if ((rc = keyed(c, fs_autoscale_cfg_check(cfg, key, sizeof key, &e), key,
                    "cluster.autoscale", &e)) != 0 ||
        (rc = keyed(c, fs_purchase_cfg_check(cfg, key, sizeof key, &e), key, "cost", &e)) != 0 ||
        (rc = rules_cost(c)) != 0 || (rc = validate_carbon(c)) != 0)
        return rc;
    for (size_t i = 0; i < cfg->scheduler.n_tolerations; i++) {
        snprintf(key, sizeof key, "scheduler.tolerations.%s", cfg->scheduler.toleration_tenants[i]);
        if ((rc = validate_taints(c, cfg->scheduler.toleration_lists[i], key)) != 0)
            return rc;
    }
    if (cfg->scheduler.queue == FS_QUEUE_KUEUE) {  /* scheduler.kueue.*, manifests */
        int krc = fs_kueue_cfg_resolve(&cfg->scheduler.kueue, &cfg->cluster, key, sizeof key, &e);
        if (krc && !*key && krc != FS_ENOMEM)   /* a manifest error: it names its FILE:LINE:COL */
            return fs_error_set(c->err, krc, "%s", e.msg);
        if ((rc = keyed(c, krc, key, "scheduler", &e)) != 0)
            return rc;
    }
    /* the policy's own rules (fs_policy_ops_t.check): what creating it
     * would refuse */
    return keyed(c, fs_policy_check(cfg, key, sizeof key, &e), key, "scheduler", &e);
}

int fs_rules_check(fs_sctx_t *c)
{
    fs_config_t *cfg = c->cfg;
    int rc;
    char a[FS_UNITS_BUF], b[FS_UNITS_BUF];
    uint64_t largest = 0;
    if ((rc = rules_pools(c, &largest)) != 0)
        return rc;
    /* a trace without a horizon is replayed whole: the model ends the
     * arrival window at its last submission */
    cfg->horizon_auto = cfg->workload.kind == FS_WORKLOAD_TRACE && !fs_yt_get(c->root, "horizon");
    if (cfg->horizon_auto)
        cfg->horizon = FS_TIME_MAX_INPUT;
    if (cfg->warmup >= cfg->horizon)
        return fs_yt_fail(c, node_or(c, "warmup", "horizon"), "warmup: %s is not shorter than the horizon (%s)",
                          fs_units_format_duration(cfg->warmup, a, sizeof a),
                          fs_units_format_duration(cfg->horizon, b, sizeof b));
    if (cfg->workload.kind == FS_WORKLOAD_SYNTHETIC && (rc = rules_synth(c, largest)) != 0)
        return rc;
    return rules_models(c);
}
