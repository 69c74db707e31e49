/*
 * fs_service_disagg: disaggregated serving's configuration (fs_service_int.h;
 * docs/services.md "Disaggregated serving"): the checks of a service's
 * disaggregated block, the KV bytes per token, and the transfer bandwidth
 * of each (prefill pool, decode pool) pair.  The engine's part (hand-off,
 * transfer, decode group) is in fs_service_engine.c.
 */
#include "fs_service_int.h"
#include "fs_llmperf.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

static int blame(char *key, size_t keylen, size_t i, const char *rest)
{
    if (key && keylen)
        snprintf(key, keylen, "services.%zu.%s", i, rest);
    return FS_EINVAL;
}

/* The performance row of GPU model gpu (NULL: the first row), or NULL. */
static const fs_svc_perf_cfg_t *row_of(const fs_service_cfg_t *c, const char *gpu)
{
    if (!gpu)
        return c->n_perf ? &c->perf[0] : NULL;
    for (size_t k = 0; k < c->n_perf; k++)
        if (strcasecmp(c->perf[k].gpu, gpu) == 0)
            return &c->perf[k];
    return NULL;
}

/* The most tokens a draw of d can have, or 0 when it is unbounded. */
static double dist_max(const fs_dist_t *d)
{
    switch (d->kind) {
    case FS_DIST_CONSTANT: return d->value;
    case FS_DIST_UNIFORM: return d->hi;
    case FS_DIST_EMPIRICAL: {
        double mx = 0;
        for (size_t k = 0; k < d->n_values; k++)
            if (d->values[k] > mx)
                mx = d->values[k];
        return mx;
    }
    default: return 0;
    }
}

/* KV bytes per token: the key's, else the preset's (NaN: neither). */
static double fs_svdis_kv_bytes(const fs_service_cfg_t *c)
{
    if (c->pd_kv_bytes > 0)
        return c->pd_kv_bytes;
    const char *gpus[2] = {c->pd_prefill_gpu, c->pd_decode_gpu};
    for (int g = 0; g < 2; g++) {
        const fs_svc_perf_cfg_t *p = row_of(c, gpus[g]);
        const fs_llm_model_t *lm = p && p->model ? fs_llm_model_find(p->model) : NULL;
        if (lm)     /* the whole model's KV of a token: every KV head once */
            return fs_llm_kv_bytes_gpu(lm, 1);
    }
    for (size_t k = 0; k < c->n_perf; k++) {
        const fs_llm_model_t *lm = c->perf[k].model ? fs_llm_model_find(c->perf[k].model) : NULL;
        if (lm)
            return fs_llm_kv_bytes_gpu(lm, 1);
    }
    return NAN;
}

int fs_svdis_check(const fs_service_cfg_t *c, size_t i, char *key, size_t keylen,
                   fs_error_t *err)
{
    if (!fs_svc_disagg(c))
        return 0;
    if (c->pd_prefill == 0) {
        fs_error_set(err, FS_EINVAL, "a disaggregated service needs a prefill group "
                     "(disaggregated.prefill.replicas >= 1)");
        return blame(key, keylen, i, "disaggregated.prefill.replicas");
    }
    if (c->pd_decode == 0) {
        fs_error_set(err, FS_EINVAL, "a disaggregated service needs a decode group "
                     "(disaggregated.decode.replicas >= 1)");
        return blame(key, keylen, i, "disaggregated.decode.replicas");
    }
    if (c->pd_prefill > MAX_REPLICAS / 2 || c->pd_decode > MAX_REPLICAS / 2) {
        fs_error_set(err, FS_EINVAL, "at most %u replicas in a group", MAX_REPLICAS / 2);
        return blame(key, keylen, i, c->pd_prefill > MAX_REPLICAS / 2
                                         ? "disaggregated.prefill.replicas"
                                         : "disaggregated.decode.replicas");
    }
    if (!(c->pd_bw > 0)) {
        fs_error_set(err, FS_EINVAL, "a disaggregated service needs "
                     "disaggregated.kv_transfer.bandwidth (bytes/s, > 0)");
        return blame(key, keylen, i, "disaggregated.kv_transfer.bandwidth");
    }
    if (c->mode != FS_SVC_REQUEST) {
        fs_error_set(err, FS_EINVAL, "disaggregated serving runs in request mode (the fluid "
                     "queue has no prefill and decode groups)");
        return blame(key, keylen, i, "mode");
    }
    if (c->engine_sched == FS_SVC_SLOTS) {
        fs_error_set(err, FS_EINVAL, "disaggregated serving needs engine.scheduler v1 or v0 "
                     "(slots has no iterations to split)");
        return blame(key, keylen, i, "engine.scheduler");
    }
    if (c->metric != FS_HPA_NONE) {
        fs_error_set(err, FS_EINVAL, "a disaggregated service has fixed group sizes "
                     "(disaggregated.*.replicas): autoscale.metric must be none");
        return blame(key, keylen, i, "autoscale.metric");
    }
    const char *gpus[2] = {c->pd_prefill_gpu, c->pd_decode_gpu};
    const char *gkey[2] = {"disaggregated.prefill.gpu", "disaggregated.decode.gpu"};
    for (int g = 0; g < 2; g++)
        if (gpus[g] && !row_of(c, gpus[g])) {
            fs_error_set(err, FS_EINVAL, "the performance table has no row for GPU model %s "
                         "(add one, or pick a GPU model of its rows)", gpus[g]);
            return blame(key, keylen, i, gkey[g]);
        }
    double kvb = fs_svdis_kv_bytes(c);
    if (!(kvb > 0)) {
        fs_error_set(err, FS_EINVAL, "the KV bytes per token are needed for the transfer: "
                     "write disaggregated.kv_transfer.bytes_per_token, or use a preset "
                     "(performance row with model)");
        return blame(key, keylen, i, "disaggregated.kv_transfer.bytes_per_token");
    }
    /* one request's KV must fit a decode replica: its longest prompt (when
     * bounded) and its longest output (when bounded, else 1 token) */
    double in = dist_max(&c->input), out = dist_max(&c->output);
    if (!(out > 0))
        out = 1;
    for (size_t k = 0; k < c->n_perf && in > 0; k++) {
        const fs_svc_perf_cfg_t *p = &c->perf[k];
        if (gpus[1] && strcasecmp(p->gpu, gpus[1]) != 0)
            continue;
        uint64_t need = ((uint64_t)llround(in) + (uint64_t)llround(out) + 15) / 16;
        if (p->kv_tokens && need > p->kv_tokens / 16) {
            fs_error_set(err, FS_EINVAL, "a decode replica on %s holds %llu KV tokens (%llu "
                         "blocks of 16), but a request of up to %.0f prompt and %.0f output "
                         "tokens needs %llu blocks: raise its kv_tokens or shorten requests",
                         p->gpu, (unsigned long long)p->kv_tokens,
                         (unsigned long long)(p->kv_tokens / 16), in, out,
                         (unsigned long long)need);
            return blame(key, keylen, i, gpus[1] ? "disaggregated.decode.gpu"
                                                  : "disaggregated.decode.replicas");
        }
    }
    return 0;
}

int fs_svdis_pools_check(const fs_service_cfg_t *c, const fs_cluster_t *cl, size_t i,
                         char *key, size_t keylen, fs_error_t *err)
{
    if (!fs_svc_disagg(c))
        return 0;
    const char *gpus[2] = {c->pd_prefill_gpu, c->pd_decode_gpu};
    const char *gkey[2] = {"disaggregated.prefill.gpu", "disaggregated.decode.gpu"};
    for (int g = 0; g < 2; g++) {
        if (!gpus[g])
            continue;
        int any = 0;
        for (uint32_t p = 0; p < cl->n_pools && !any; p++)
            any = strcasecmp(cl->pools[p].gpu, gpus[g]) == 0 && !cl->pools[p].mig &&
                  cl->pools[p].gpn >= c->gpus;
        if (!any) {
            fs_error_set(err, FS_EINVAL, "no pool of GPU model %s without MIG with nodes of %u "
                         "GPUs for this group", gpus[g], c->gpus);
            return blame(key, keylen, i, gkey[g]);
        }
    }
    for (size_t l = 0; l < c->n_pd_links; l++) {
        const fs_svc_link_cfg_t *lk = &c->pd_links[l];
        const char *names[2] = {lk->prefill_pool, lk->decode_pool};
        const char *sub[2] = {"prefill_pool", "decode_pool"};
        for (int g = 0; g < 2; g++) {
            int any = 0;
            for (uint32_t p = 0; p < cl->n_pools && !any; p++)
                any = strcmp(cl->pools[p].name, names[g]) == 0;
            if (!any) {
                char rest[96];
                snprintf(rest, sizeof rest, "disaggregated.kv_transfer.links.%zu.%s", l, sub[g]);
                fs_error_set(err, FS_EINVAL, "no pool named '%s' in cluster.pools", names[g]);
                return blame(key, keylen, i, rest);
            }
        }
    }
    return 0;
}

/* The transfer bandwidth of every (prefill pool, decode pool) pair into
 * s->pd_bw (n_pools x n_pools).  0 or FS_ENOMEM. */
int fs_svdis_build(svc_t *s, const fs_cluster_t *cl)
{
    const fs_service_cfg_t *c = s->cfg;
    s->disagg = (uint8_t)fs_svc_disagg(c);
    if (!s->disagg)
        return 0;
    size_t n = cl->n_pools ? cl->n_pools : 1;
    if (!(s->pd_bw = fs_malloc(n * n * sizeof *s->pd_bw)))
        return FS_ENOMEM;
    for (size_t k = 0; k < n * n; k++)
        s->pd_bw[k] = c->pd_bw;
    for (size_t l = 0; l < c->n_pd_links; l++)
        for (uint32_t p = 0; p < cl->n_pools; p++)
            for (uint32_t d = 0; d < cl->n_pools; d++)
                if (strcmp(cl->pools[p].name, c->pd_links[l].prefill_pool) == 0 &&
                    strcmp(cl->pools[d].name, c->pd_links[l].decode_pool) == 0)
                    s->pd_bw[p * n + d] = c->pd_links[l].bandwidth;
    s->n_bw = n;
    s->kv_bytes = fs_svdis_kv_bytes(c);
    return 0;
}

void fs_svdis_settle(svc_t *s, double dt)
{
    /* per group: replicas alive, busy, running, waiting, KV blocks used and
     * counted (integers: the sums stay in registers), then KV transfers */
    uint64_t live[2] = {0, 0}, busy[2] = {0, 0}, run[2] = {0, 0}, wait[2] = {s->q_n, s->dq_n};
    uint64_t kvu[2] = {0, 0}, kvt[2] = {0, 0}, xfer = 0;
    const replica_t *r = s->rep, *end = s->rep + s->n_rep;
    for (; r < end; r++) {
        if (r->state == R_FREE)
            continue;
        unsigned g = r->role == ROLE_DECODE;
        live[g] += !r->doomed;
        busy[g] += r->busy > 0;
        const eng_t *e = r->e;
        if (!e)
            continue;
        run[g] += e->n_run;
        wait[g] += g ? e->kq_n : e->wq_n;
        kvu[g] += e->used_rep;
        kvt[g] += e->counted ? e->kv_blocks : 0;
        for (size_t k = 0; k < e->n_xf; k++)
            xfer += !e->xf[k].done;
    }
    bucket_t *b = &s->bk;
    for (int g = 0; g < 2; g++) {
        b->g_live_s[g] += (double)live[g] * dt;
        b->g_busy_s[g] += (double)busy[g] * dt;
        b->g_run_s[g] += (double)run[g] * dt;
        b->g_wait_s[g] += (double)wait[g] * dt;
        b->g_kv_used_s[g] += (double)kvu[g] * dt;
        b->g_kv_total_s[g] += (double)kvt[g] * dt;
    }
    b->xfer_s += (double)xfer * dt;
}
