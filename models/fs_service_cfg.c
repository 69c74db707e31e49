/*
 * fs_service_cfg: the services block (fs_service_int.h): its checks
 * (fs_service_cfg_check, also the scenario's) and each service's set-up at
 * attach: pools, week of rates, random streams, token moments.
 */
#include "fs_service_int.h"
#include "fs_mig.h"

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_sf_gamma.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

static int blame(char *key, size_t keylen, size_t i, const char *rest)
{
    if (key && keylen)
        snprintf(key, keylen, "services.%zu%s%s", i, *rest ? "." : "", rest);
    return FS_EINVAL;
}

/* requests.prefix.ids with a request trace: the trace gives each request's
 * prefix id and tokens (its PrefixId, PrefixTokens columns), so the drawn
 * lengths and popularity are refused; every row is read once so that a bad
 * one stops the load (FILE:LINE:COL of the trace), not the run halfway. */
static int check_trace_prefix(const fs_service_cfg_t *c, fs_error_t *err)
{
    if (c->prefix_tokens.kind != FS_DIST_NONE)
        return fs_error_set(err, FS_EINVAL, "requests.prefix.tokens draws each id's length: "
                            "with a request trace, each request's prefix tokens come from its "
                            "PrefixTokens column");
    if (c->prefix_s != 1.0)
        return fs_error_set(err, FS_EINVAL, "requests.prefix.s shapes the drawn ids: with a "
                            "request trace, each request's prefix id comes from its PrefixId "
                            "column");
    if (!c->trace)
        return 0;   /* refused below, at requests.trace */
    return fs_reqtrace_check_prefix(c->trace, c->prefix_ids, err);
}

/* The key check_trace_prefix's FS_EINVAL is about. */
static const char *prc_key(const fs_service_cfg_t *c)
{
    return c->prefix_tokens.kind != FS_DIST_NONE ? "requests.prefix.tokens"
           : c->prefix_s != 1.0                  ? "requests.prefix.s"
                                                 : "requests.trace";
}

int fs_service_cfg_check(const fs_config_t *cfg, char *key, size_t keylen, fs_error_t *err)
{
    const fs_services_cfg_t *sc = &cfg->services;
    if (key && keylen)
        key[0] = '\0';
    if (sc->n == 0)
        return 0;
    if (sc->n > MAX_SERVICES)
        return fs_error_set(err, FS_EINVAL, "at most %u services", MAX_SERVICES),
               blame(key, keylen, MAX_SERVICES, "");
    if (cfg->until != FS_UNTIL_HORIZON) {
        if (key && keylen)
            snprintf(key, keylen, "services");
        return fs_error_set(err, FS_EINVAL, "services run until the horizon: set until: horizon "
                                            "(replicas never finish, so the queue never drains)");
    }
    for (size_t i = 0; i < sc->n; i++) {
        const fs_service_cfg_t *c = &sc->list[i];
        for (size_t k = 0; k < i; k++)
            if (strcmp(sc->list[k].name, c->name) == 0) {
                fs_error_set(err, FS_EINVAL, "service '%s' is already defined (item %zu)",
                             c->name, k);
                return blame(key, keylen, i, "name");
            }
        if (strlen(c->name) >= FS_SERVICE_NAME_MAX) {
            fs_error_set(err, FS_EINVAL, "a service name has at most %d bytes",
                         FS_SERVICE_NAME_MAX - 1);
            return blame(key, keylen, i, "name");
        }
        if (c->mig && !fs_mig_code_find(c->mig, strlen(c->mig))) {
            fs_error_set(err, FS_EINVAL, "unknown MIG profile '%s' (expected a profile of a "
                         "MIG GPU model such as 1g.10gb, 3g.40gb; docs/mig.md)", c->mig);
            return blame(key, keylen, i, "mig");
        }
        if (c->n_perf == 0) {
            fs_error_set(err, FS_EINVAL, "service '%s' needs a performance table (a row per GPU "
                         "model: gpu, prefill, decode, max_batch)", c->name);
            return blame(key, keylen, i, "performance");
        }
        for (size_t k = 0; k < c->n_perf; k++) {
            for (size_t q = 0; q < k; q++)
                if (strcasecmp(c->perf[q].gpu, c->perf[k].gpu) == 0) {
                    char sub[64];
                    snprintf(sub, sizeof sub, "performance.%zu.gpu", k);
                    fs_error_set(err, FS_EINVAL, "GPU model %s already has a row (item %zu)",
                                 c->perf[k].gpu, q);
                    return blame(key, keylen, i, sub);
                }
            if (c->perf[k].max_batch > MAX_BATCH) {
                char sub[64];
                snprintf(sub, sizeof sub, "performance.%zu.max_batch", k);
                fs_error_set(err, FS_EINVAL, "max_batch is at most %u", MAX_BATCH);
                return blame(key, keylen, i, sub);
            }
            if (c->engine_sched == FS_SVC_V1 && c->perf[k].max_batch > c->max_tokens) {
                /* vLLM: max_num_batched_tokens must be >= max_num_seqs */
                fs_error_set(err, FS_EINVAL, "max_num_batched_tokens %llu is below performance "
                             "row %zu's max_batch %u (every running sequence decodes a token "
                             "each iteration)", (unsigned long long)c->max_tokens, k,
                             c->perf[k].max_batch);
                return blame(key, keylen, i, "engine.max_num_batched_tokens");
            }
        }
        uint32_t maxr = c->max_replicas ? c->max_replicas : c->min_replicas;
        if (c->max_replicas && c->max_replicas < c->min_replicas) {
            fs_error_set(err, FS_EINVAL, "max_replicas %u is below min_replicas %u",
                         c->max_replicas, c->min_replicas);
            return blame(key, keylen, i, "max_replicas");
        }
        if (maxr == 0) {
            fs_error_set(err, FS_EINVAL, "service '%s' can have no replica (min_replicas and "
                         "max_replicas are 0)", c->name);
            return blame(key, keylen, i, "max_replicas");
        }
        if (c->metric != FS_HPA_NONE && !(c->target > 0)) {
            fs_error_set(err, FS_EINVAL, "autoscale.metric %s needs autoscale.target (per "
                         "replica)", c->metric == FS_HPA_CONCURRENCY ? "concurrency"
                         : c->metric == FS_HPA_QUEUE ? "queue" : "utilization");
            return blame(key, keylen, i, "autoscale.target");
        }
        if (c->metric == FS_HPA_UTILIZATION && c->target > 1) {
            fs_error_set(err, FS_EINVAL, "utilization is a fraction: target %g is above 1",
                         c->target);
            return blame(key, keylen, i, "autoscale.target");
        }
        if (c->metric == FS_HPA_NONE && c->min_replicas == 0) {
            fs_error_set(err, FS_EINVAL, "min_replicas 0 (scale to zero) needs an autoscale.metric");
            return blame(key, keylen, i, "min_replicas");
        }
        if (c->prefix_ids > 0) {
            if (c->prefix_ids > 1000000u) {
                fs_error_set(err, FS_EINVAL, "requests.prefix.ids %u: at most 1000000",
                             c->prefix_ids);
                return blame(key, keylen, i, "requests.prefix.ids");
            }
            int trace = c->process == FS_SVC_TRACE, prc = trace ? check_trace_prefix(c, err) : 0;
            if (prc)    /* out of memory as it is; bad or unreadable: at the key */
                return prc == FS_ENOMEM ? prc : blame(key, keylen, i, prc_key(c));
            if (!trace && c->prefix_tokens.kind == FS_DIST_NONE) {
                fs_error_set(err, FS_EINVAL, "requests.prefix.ids needs requests.prefix.tokens "
                             "(each prefix's length)");
                return blame(key, keylen, i, "requests.prefix.tokens");
            }
        }
        int drc = fs_svdis_check(c, i, key, keylen, err);
        if (drc)
            return drc;
        if (c->router == FS_ROUTE_PREFIX && c->prefix_ids == 0) {
            fs_error_set(err, FS_EINVAL, "router prefix_affinity needs requests.prefix.ids");
            return blame(key, keylen, i, "router");
        }
        if (c->process == FS_SVC_TRACE) {
            if (!c->trace) {
                fs_error_set(err, FS_EINVAL, "requests.process trace needs requests.trace (a "
                             "CSV file)");
                return blame(key, keylen, i, "requests.trace");
            }
            if (c->mode == FS_SVC_FLUID) {
                fs_error_set(err, FS_EINVAL, "fluid mode needs a rate (requests.process poisson "
                             "or gamma), not a request trace");
                return blame(key, keylen, i, "mode");
            }
        } else {
            if (!(c->rate > 0)) {
                fs_error_set(err, FS_EINVAL, "requests.process %s needs requests.rate",
                             c->process == FS_SVC_GAMMA ? "gamma" : "poisson");
                return blame(key, keylen, i, "requests.rate");
            }
            if (c->input.kind == FS_DIST_NONE || c->output.kind == FS_DIST_NONE) {
                fs_error_set(err, FS_EINVAL, "requests.%s: the token count distribution is "
                             "needed with a rate", c->input.kind == FS_DIST_NONE ? "input"
                                                                                   : "output");
                return blame(key, keylen, i, c->input.kind == FS_DIST_NONE ? "requests.input"
                                                                            : "requests.output");
            }
            fs_error_t e;
            if (fs_synth_profile(c->n_hourly, c->hourly_names, c->hourly, FS_SYNTH_HOURS,
                                 "hourly", NULL, &e)) {
                fs_error_set(err, FS_EINVAL, "%s", e.msg);
                return blame(key, keylen, i, "requests.profile.hourly");
            }
            if (fs_synth_profile(c->n_weekly, c->weekly_names, c->weekly, FS_SYNTH_DAYS, "weekly",
                                 NULL, &e)) {
                fs_error_set(err, FS_EINVAL, "%s", e.msg);
                return blame(key, keylen, i, "requests.profile.weekly");
            }
        }
    }
    return 0;
}

/* The mean and variance of a prepared distribution (token counts; their
 * rounding to whole tokens is left out). */
static double dist_moments(const fs_dist_t *d, double *var)
{
    double m = fs_dist_mean(d), v = 0;
    if (d->kind == FS_DIST_EMPIRICAL && !isfinite(m))
        m = d->n_values ? gsl_stats_mean(d->values, 1, d->n_values) : 1;
    switch (d->kind) {
    case FS_DIST_EXPONENTIAL: v = m * m; break;
    case FS_DIST_LOGNORMAL: v = (exp(d->sigma * d->sigma) - 1) * m * m; break;
    case FS_DIST_GAMMA: v = d->shape * d->scale * d->scale; break;
    case FS_DIST_WEIBULL: {
        double g1 = gsl_sf_gamma(1 + 1 / d->shape), g2 = gsl_sf_gamma(1 + 2 / d->shape);
        v = d->scale * d->scale * (g2 - g1 * g1);
        break;
    }
    case FS_DIST_UNIFORM: v = (d->hi - d->lo) * (d->hi - d->lo) / 12; break;
    case FS_DIST_EMPIRICAL:
        v = d->n_values > 1 ? gsl_stats_variance_m(d->values, 1, d->n_values, m) : 0;
        break;
    default: v = 0;
    }
    *var = v;
    return m < 1 ? 1 : m;
}

/* The u-quantile of a prepared token distribution (`sorted`: an empirical
 * law's values, sorted; `mean` where there is none); +inf past a bound. */
static double dist_quantile(const fs_dist_t *d, const double *sorted, double mean, double u)
{
    switch (d->kind) {
    case FS_DIST_CONSTANT: return d->value;
    case FS_DIST_EXPONENTIAL: return gsl_cdf_exponential_Pinv(u, d->mean);
    case FS_DIST_LOGNORMAL: return gsl_cdf_lognormal_Pinv(u, d->mu, d->sigma);
    case FS_DIST_GAMMA: return gsl_cdf_gamma_Pinv(u, d->shape, d->scale);
    case FS_DIST_WEIBULL: return gsl_cdf_weibull_Pinv(u, d->scale, d->shape);
    case FS_DIST_UNIFORM: return d->lo + u * (d->hi - d->lo);
    case FS_DIST_EMPIRICAL:
        return sorted ? gsl_stats_quantile_from_sorted_data(sorted, 1, d->n_values, u) : mean;
    default: return mean;
    }
}

/* The n slice midpoints of a prepared token distribution between the
 * given quantile edges (n + 1), over `mean` (tokens below 1 count as 1, as
 * drawn), and (eq not NULL) the quantiles at the n + 1 edges themselves,
 * the last one at 1 - 2^-16 where the law has no upper bound.  0 or
 * FS_ENOMEM. */
static int dist_slices_at(const fs_dist_t *d, double mean, const double *edge, int n, double *out,
                          double *w, double *eq)
{
    double *sorted = NULL, over = mean > 0 ? mean : 1;
    if (d->kind == FS_DIST_EMPIRICAL && d->n_values) {
        if (!(sorted = fs_malloc(d->n_values * sizeof *sorted)))
            return FS_ENOMEM;
        memcpy(sorted, d->values, d->n_values * sizeof *sorted);
        gsl_sort(sorted, 1, d->n_values);
    }
    for (int k = 0; k < n; k++) {
        double q = dist_quantile(d, sorted, mean, 0.5 * (edge[k] + edge[k + 1]));
        w[k] = edge[k + 1] - edge[k];
        out[k] = (q < 1 ? 1 : q) / over;
    }
    for (int k = 0; eq && k <= n; k++) {
        double q = dist_quantile(d, sorted, mean, edge[k]);
        if (!isfinite(q))
            q = dist_quantile(d, sorted, mean, 1 - ldexp(1.0, -16));
        eq[k] = (q < 1 ? 1 : q) / over;
    }
    fs_free(sorted);
    return 0;
}

/* The PQ prompt slices (fs_service_int.h), over the mean: midpoints, edges. */
static int dist_slices(const fs_dist_t *d, double mean, double *out, double *w, double *eq)
{
    _Static_assert(PQ + 1 == 29 + 11 + 2 + 1, "the edges below fill edge[]");
    double edge[PQ + 1];
    int n = 0;
    for (int k = 0; k <= 28; k++)
        edge[n++] = k / 32.0;
    for (int k = 4; k <= 14; k++) {     /* 1 - 2^-4 .. 1 - 2^-14, and the reported 0.95, 0.99 */
        double e = 1 - ldexp(1.0, -k);
        if (k == 5 || k == 7)
            edge[n++] = k == 5 ? 0.95 : 0.99;
        edge[n++] = e;
    }
    edge[n] = 1;
    return dist_slices_at(d, mean, edge, PQ, out, w, eq);
}

/* The OQ output slices (fs_service_int.h), in tokens: halving towards
 * short outputs, whose TPOT spreads most. */
static int out_slices(const fs_dist_t *d, double *out, double *w)
{
    static const double edge[OQ + 1] = {0, 1.0 / 128, 1.0 / 32, 1.0 / 16, 1.0 / 8, 0.25, 0.5,
                                         0.75, 1};
    return dist_slices_at(d, 1, edge, OQ, out, w, NULL);
}

/* The pools service c can run on (GPU models of its table, replicas that
 * fit a node, MIG or not as it asks) into pools[] (cl->n_pools room), and
 * per pool its performance row + 1 (0: none) into pool_row (may be NULL).
 * Returns how many. */
static size_t service_pools(const fs_cluster_t *cl, const fs_service_cfg_t *c, int32_t mig,
                            uint32_t *pools, uint32_t *pool_row)
{
    size_t np = 0;
    for (uint32_t p = 0; p < cl->n_pools; p++) {
        /* a MIG replica fits only a MIG pool whose layout has its instances
         * on one node; a whole-GPU one only a pool without MIG */
        int holds = mig ? fs_cluster_mig_could_fit(cl, p, mig, c->gpus)
                        : !cl->pools[p].mig && cl->pools[p].gpn >= c->gpus;
        for (size_t r = 0; r < c->n_perf && holds; r++)
            if (strcasecmp(cl->pools[p].gpu, c->perf[r].gpu) == 0) {
                if (pool_row)
                    pool_row[p] = (uint32_t)r + 1;
                pools[np++] = p;
                break;
            }
    }
    return np;
}

static int no_pool(size_t k, const fs_service_cfg_t *c, int32_t mig, fs_error_t *err)
{
    if (mig)
        return fs_error_set(err, FS_EINVAL, "services.%zu.performance: service '%s' has no "
                            "pool to run on (no pool of its GPU models whose MIG layout has "
                            "%u instances of %s on one node)", k, c->name, c->gpus, c->mig);
    return fs_error_set(err, FS_EINVAL, "services.%zu.performance: service '%s' has no pool "
                        "to run on (no pool of its GPU models without MIG with nodes of %u "
                        "GPUs)", k, c->name, c->gpus);
}

int fs_service_pools_check(const fs_config_t *cfg, const fs_cluster_t *cl, char *key,
                           size_t keylen, fs_error_t *err)
{
    if (key && keylen)
        key[0] = '\0';
    uint32_t *pools = fs_malloc((cl->n_pools ? cl->n_pools : 1) * sizeof *pools);
    if (!pools)
        return fs_error_set(err, FS_ENOMEM, "services: out of memory");
    int rc = 0;
    for (size_t k = 0; k < cfg->services.n && !rc; k++) {
        const fs_service_cfg_t *c = &cfg->services.list[k];
        int32_t mig = c->mig ? fs_mig_code_find(c->mig, strlen(c->mig)) : 0;
        if (service_pools(cl, c, mig, pools, NULL) == 0) {
            rc = no_pool(k, c, mig, err);
            if (key && keylen)
                snprintf(key, keylen, "services.%zu.performance", k);
        } else {
            rc = fs_svdis_pools_check(c, cl, k, key, keylen, err);
        }
    }
    fs_free(pools);
    return rc;
}

/* The service's pools (GPU models of its table) and its week of rates. */
int fs_svcfg_build(services_t *a, fs_model_t *m, size_t k, fs_error_t *err)
{
    svc_t *s = &a->s[k];
    const fs_service_cfg_t *c = &a->cfg->services.list[k];
    const fs_cluster_t *cl = fs_model_cluster(m);
    s->cfg = c;
    s->idx = (uint32_t)k;
    s->free_rep = UINT32_MAX;
    s->desired = c->min_replicas;
    s->warmup = a->cfg->warmup;
    s->ec_a = -1;
    if (!(s->pool_row = fs_calloc(cl->n_pools ? cl->n_pools : 1, sizeof *s->pool_row)) ||
        !(s->h_ttft = fs_svmet_loghist()) || !(s->h_tpot = fs_svmet_loghist()))
        return fs_error_set(err, FS_ENOMEM, "services: out of memory");
    uint32_t *pools = fs_malloc((cl->n_pools ? cl->n_pools : 1) * sizeof *pools);
    if (!pools)
        return fs_error_set(err, FS_ENOMEM, "services: out of memory");
    s->mig = c->mig ? fs_mig_code_find(c->mig, strlen(c->mig)) : 0;
    s->gpu_share = s->mig ? c->gpus * (fs_mig_code_milli(s->mig) / 1000.0) : c->gpus;
    size_t np = service_pools(cl, c, s->mig, pools, s->pool_row);
    for (size_t r = 0; r < c->n_perf; r++)
        if (c->perf[r].max_batch > s->max_batch)
            s->max_batch = c->perf[r].max_batch;
    if (np == 0) {
        fs_free(pools);
        return no_pool(k, c, s->mig, err);
    }
    int rc = 0;
    if (fs_svc_disagg(c)) {  /* each group's pools: those of its GPU model */
        uint32_t *sub = fs_malloc(np * sizeof *sub);
        const char *gpus[2] = {c->pd_prefill_gpu, c->pd_decode_gpu};
        int32_t *sets[2] = {&s->set, &s->set_dec};
        for (int g = 0; g < 2 && sub && !rc; g++) {
            size_t ns = 0;
            for (size_t q = 0; q < np; q++)
                if (!gpus[g] || strcasecmp(cl->pools[pools[q]].gpu, gpus[g]) == 0)
                    sub[ns++] = pools[q];
            if (ns == 0) {
                fs_free(sub);
                fs_free(pools);
                return fs_error_set(err, FS_EINVAL, "services.%zu.disaggregated.%s.gpu: no "
                                    "pool of GPU model %s for service '%s'", k,
                                    g ? "decode" : "prefill", gpus[g], c->name);
            }
            rc = fs_model_make_pool_set(m, sub, ns, sets[g]);
        }
        if (!sub)
            rc = FS_ENOMEM;
        fs_free(sub);
        if (!rc)
            rc = fs_svdis_build(s, cl);
    } else {
        rc = fs_model_make_pool_set(m, pools, np, &s->set);
    }
    fs_free(pools);
    if (rc)
        return fs_error_set(err, FS_ENOMEM, "services: out of memory");
    double hourly[FS_SYNTH_HOURS], weekly[FS_SYNTH_DAYS];
    fs_synth_profile(c->n_hourly, c->hourly_names, c->hourly, FS_SYNTH_HOURS, "hourly", hourly,
                     NULL);
    fs_synth_profile(c->n_weekly, c->weekly_names, c->weekly, FS_SYNTH_DAYS, "weekly", weekly,
                     NULL);
    for (int d = 0; d < FS_SYNTH_DAYS; d++)
        for (int h = 0; h < FS_SYNTH_HOURS; h++)
            s->week_rate += s->mult[d * FS_SYNTH_HOURS + h] = c->rate * hourly[h] * weekly[d];
    const fs_config_t *cfg = a->cfg;
    if (fs_rng_init(&s->rng_arr, cfg->seed, cfg->replication, RNG_REQUEST, k) ||
        fs_rng_init(&s->rng_tok, cfg->seed, cfg->replication, RNG_TOKENS, k))
        return fs_error_set(err, FS_ENOMEM, "services: out of memory");
    if (c->prefix_ids > 0 && c->process != FS_SVC_TRACE) { /* each id's length, then the CDF */
        uint32_t n = c->prefix_ids;
        if (fs_rng_init(&s->rng_pre, cfg->seed, cfg->replication, RNG_PREFIX, k) ||
            !(s->pre_len = fs_calloc((size_t)n + 1, sizeof *s->pre_len)) ||
            !(s->pre_cdf = fs_calloc(n, sizeof *s->pre_cdf)))
            return fs_error_set(err, FS_ENOMEM, "services: out of memory");
        gsl_rng *g = fs_rng_gsl(&s->rng_pre);
        for (uint32_t id = 1; id <= n; id++) {
            double v = fs_dist_sample(&c->prefix_tokens, g);
            s->pre_len[id] = !(v >= 0) ? 0 : v > 4e9 ? 4000000000u : (uint32_t)llround(v);
        }
        double sum = 0;
        for (uint32_t id = 1; id <= n; id++)
            s->pre_cdf[id - 1] = sum += pow((double)id, -c->prefix_s);
        for (uint32_t id = 1; id <= n; id++)
            s->pre_cdf[id - 1] /= sum;
        s->pre_cdf[n - 1] = 1;
    }
    if (c->process == FS_SVC_TRACE) {
        if ((rc = fs_reqtrace_open(c->trace, c->repeat, &s->trace, err)))
            return rc;
        fs_reqtrace_limit_prefix(s->trace, c->prefix_ids);  /* the caches' size (fs_service.c) */
    } else {    /* token moments for the fluid mode */
        double vi, vo;
        s->mean_in = dist_moments(&c->input, &vi);
        s->mean_out = dist_moments(&c->output, &vo);
        if ((rc = dist_slices(&c->input, s->mean_in, s->pq, s->pqw, s->pqe)) ||
            (rc = out_slices(&c->output, s->oq, s->oqw)))
            return fs_error_set(err, rc, "services: out of memory");
        s->in2 = vi + s->mean_in * s->mean_in;
        /* service time of the first row's replica: prefill + (out - 1) steps */
        const fs_svc_perf_cfg_t *p = &c->perf[0];
        double step = p->max_batch / p->decode_tps;
        double mean = s->mean_in / p->prefill_tps + (s->mean_out - 1) * step;
        double var = vi / (p->prefill_tps * p->prefill_tps) + vo * step * step;
        s->cs2 = mean > 0 ? var / (mean * mean) : 0;
    }
    return 0;
}

