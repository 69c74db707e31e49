/*
 * fs_service: inference services on the fleet (fs_service.h; docs/services.md).
 * This file is the module: its events, the replicas' lifecycle (pending,
 * starting, ready, retired) and the set-up; fs_service_int.h lists the
 * files of the serving engine, fluid mode, the HPA, metrics and checks.
 */
#include "fs_service_int.h"
#include "fs_mig.h"

#include <string.h>

/* ---- Erlang C ----------------------------------------------------------------- */

double fs_erlang_c(double a, unsigned c)
{
    if (c == 0 || a >= (double)c)
        return 1.0;
    if (a <= 0)
        return 0.0;
    /* Erlang B by its recursion (stable), then C = B / (1 - rho (1 - B)) */
    double b = 1.0;
    for (unsigned k = 1; k <= c; k++)
        b = a * b / ((double)k + a * b);
    double rho = a / (double)c;
    return b / (1.0 - rho * (1.0 - b));
}


/* ---- ring buffers --------------------------------------------------------------- */

int fs_svc_ring_grow(void **buf, size_t *cap, size_t head, size_t n, size_t elem)
{
    size_t old = *cap;
    if (fs_grow(buf, cap, n + 1, elem))
        return FS_ENOMEM;
    if (head + n > old)     /* new cap >= 2 old: the wrapped part fits after the old end */
        memcpy((char *)*buf + old * elem, *buf, (head + n - old) * elem);
    return 0;
}

/* ---- replicas ------------------------------------------------------------------- */

/* A replica's service time per batch slot (the fluid queue's S: its
 * max_batch slots serve 1/S requests/s each) and the decode iteration time
 * at saturation (*step, s), at the service's mean prompt and output.
 * engine v1 / v0: from the iteration model, the replica saturated: b
 * sequences decode in every iteration, b = max_batch, or fewer when the
 * token budget binds (v1: the budget holds b decodes and the prefill of
 * the b / (out - 1) prompts that replace them, b = T (out - 1) / (in + out
 * - 1)); each request costs in / prefill of prefill time and (out - 1)
 * shares 1/b of a decode step, so the replica completes
 * X = 1 / (in / prefill + (out - 1) step(b) / b) requests/s (v0 pauses
 * decode for prefill: the same sum with b = max_batch).  slots: its own
 * prefill plus (out - 1) full-batch steps per slot (issue 16's model). */
static double slot_service(const svc_t *s, const replica_t *r, double *step, double *bsat)
{
    double in = s->mean_in, out = s->mean_out, B = r->batch;
    *bsat = B;
    if (s->cfg->engine_sched == FS_SVC_SLOTS || out <= 1) {
        *step = r->stepb * 1e-6;
        return in / r->prefill_tps + (out - 1) * r->stepb * 1e-6;
    }
    double b = B;
    if (s->cfg->engine_sched == FS_SVC_V1) {
        double bt = (double)s->cfg->max_tokens * (out - 1) / (in + out - 1);
        if (bt < b)
            b = bt > 1 ? bt : 1;
    }
    double st = (B > 1 ? r->step1 + (r->stepb - r->step1) * (b - 1) / (B - 1) : r->stepb) * 1e-6;
    /* the saturated iteration: b decodes and the prefill of b / (out - 1) prompts (v1) */
    *step = s->cfg->engine_sched == FS_SVC_V1 ? b * in / ((out - 1) * r->prefill_tps) + st : st;
    *bsat = b;
    return B * (in / r->prefill_tps + (out - 1) * st / b);
}

void fs_svc_serving_set(svc_t *s, const replica_t *r, int sign)
{
    double step, bsat;
    double sv = slot_service(s, r, &step, &bsat);
    double w = sign * (double)r->batch;
    s->agg_s1 += w * r->step1 * 1e-6;
    s->agg_sb += w * r->stepb * 1e-6;
    s->agg_bm += w * r->batch;
    s->agg_bs += w * bsat;
    s->agg_ip += w / r->prefill_tps;
    if (sign > 0) {
        s->slots_ready += r->batch;
        s->ready_live++;
    } else {
        s->slots_ready -= r->batch;
        s->ready_live--;
    }
    s->agg_rate += sign * (double)r->batch / (sv > 0 ? sv : 1e-9);
    s->agg_pre += sign * (double)r->batch * (s->mean_in / r->prefill_tps);
    s->agg_step += sign * (double)r->batch * step;
    if (s->ready_live == 0)     /* no drift */
        s->agg_rate = s->agg_pre = s->agg_step = s->agg_s1 = s->agg_sb = s->agg_bm =
            s->agg_bs = s->agg_ip = 0;
}

/* Submits a new replica of group role (ROLE_*; colocated: 0). */
static int new_replica_role(svc_t *s, fs_model_t *m, int role)
{
    uint32_t i;
    if (s->free_rep != UINT32_MAX) {
        i = s->free_rep;
        s->free_rep = s->rep[i].next;
    } else {
        if (s->n_rep >= MAX_REPLICAS)
            return FS_ENOMEM;
        if (fs_grow((void **)&s->rep, &s->cap_rep, s->n_rep + 1, sizeof *s->rep))
            return FS_ENOMEM;
        i = (uint32_t)s->n_rep++;
        memset(&s->rep[i], 0, sizeof s->rep[i]);
        if (s->cfg->mode == FS_SVC_REQUEST && s->cfg->engine_sched == FS_SVC_SLOTS) {
            if (!(s->rep[i].fl = fs_calloc(s->max_batch, sizeof *s->rep[i].fl)))
                return FS_ENOMEM;
        } else if (s->cfg->mode == FS_SVC_REQUEST) {
            eng_t *e = fs_calloc(1, sizeof *e);
            if (!e || !(e->run = fs_calloc(s->max_batch, sizeof *e->run)) ||
                (s->cfg->prefix_ids > 0 &&
                 !(e->pc = fs_calloc((size_t)s->cfg->prefix_ids + 1, sizeof *e->pc)))) {
                if (e)
                    fs_free(e->run);
                fs_free(e);
                return FS_ENOMEM;
            }
            e->n_pc = e->pc ? s->cfg->prefix_ids + 1 : 0;
            s->rep[i].e = e;
        }
    }
    replica_t *r = &s->rep[i];
    eng_t *e = r->e;
    inflight_t *fl = r->fl;
    uint32_t gen = r->gen;
    memset(r, 0, sizeof *r);
    r->e = e;
    r->fl = fl;
    r->gen = gen + 1;
    r->state = R_PENDING;
    r->role = (uint8_t)role;
    fs_job_t job;
    fs_job_init(&job);
    job.id = (uint64_t)1 << 63 | (uint64_t)s->idx << 32 | i;
    job.gpus = s->cfg->gpus;
    job.gpu_milli = s->mig ? fs_mig_code_milli(s->mig) : FS_GPU_MILLI_WHOLE;
    job.mig = s->mig;
    job.priority = s->cfg->priority;
    job.job_class = (int32_t)s->cfg->job_class;
    job.flags = FS_JOB_SINGLE_NODE;
    fs_svc_settle(s, fs_model_now(m));
    int rc = fs_model_submit(m, &job, role == ROLE_DECODE ? s->set_dec : s->set, &r->slot);
    if (rc) {
        r->state = R_FREE;
        r->next = s->free_rep;
        s->free_rep = i;
        return rc;
    }
    s->live++;
    return 0;
}

int fs_svc_new_replica(svc_t *s, fs_model_t *m) { return new_replica_role(s, m, 0); }

void fs_svc_free_replica(svc_t *s, uint32_t i)
{
    replica_t *r = &s->rep[i];
    r->state = R_FREE;
    r->gen++;
    r->next = s->free_rep;
    s->free_rep = i;
}

/* Marks the replica down (not starting, not ready) in the counts. */
static void unready(svc_t *s, replica_t *r)
{
    if (r->state == R_READY) {
        s->n_ready--;
        s->holding--;
        if (!r->doomed)
            fs_svc_serving_set(s, r, -1);
    } else if (r->state == R_STARTING) {
        s->n_starting--;
        s->holding--;
    }
}


int fs_svc_retire_now(svc_t *s, fs_model_t *m, uint32_t i)
{
    replica_t *r = fs_svc_rep(s, i);
    fs_svc_settle(s, fs_model_now(m));
    if (r->state == R_STARTING)
        s->startup_gpu_s += s->gpu_share * fs_time_to_s(fs_model_now(m) - r->since);
    unready(s, r);
    fs_sveng_stop(s, r);
    int rc = fs_model_retire(m, r->slot);
    fs_svc_free_replica(s, i);
    return rc;
}


/* ---- events --------------------------------------------------------------------------- */

static int ready(services_t *a, svc_t *s, fs_model_t *m, uint32_t i, uint32_t gen)
{
    replica_t *r = fs_svc_rep(s, i);
    if (i >= s->n_rep || r->gen != gen || r->state != R_STARTING)
        return 0;   /* stopped or retired since */
    int rc = fs_svfluid_advance_to(s, fs_model_now(m));
    if (rc)
        return rc;
    fs_svc_settle(s, fs_model_now(m));
    s->startup_gpu_s += s->gpu_share * fs_time_to_s(fs_model_now(m) - r->since);
    s->n_starting--;
    s->n_ready++;
    r->state = R_READY;
    if (!r->doomed)
        fs_svc_serving_set(s, r, 1);
    return fs_sveng_dispatch(a, s, m);
}

static int svc_event(void *ud, fs_model_t *m, uint64_t data)
{
    services_t *a = ud;
    uint32_t kind = data & 15, si = (uint32_t)(data >> 4) & 0xffff;
    uint32_t ri = (uint32_t)(data >> 20) & 0xffffff, arg = (uint32_t)(data >> 44);
    if (si >= a->n)
        return FS_EINTERNAL;
    svc_t *s = &a->s[si];
    switch (kind) {
    case EV_ARRIVAL: return fs_svarr_arrival(a, s, m);
    case EV_DONE: return fs_sveng_done(a, s, m, ri, arg);
    case EV_READY: return ready(a, s, m, ri, arg);
    case EV_SYNC: return fs_svhpa_sync(a, s, m);
    case EV_RATE: return fs_svarr_rate_change(a, s, m);
    case EV_KICK: return 0;     /* the first instant: the replicas submitted at attach start */
    case EV_XFER: return fs_sveng_xfer_end(a, s, m, ri);
    case EV_HANDOFF: return fs_sveng_handoff(a, s, m);
    case EV_REPREFILL: return fs_sveng_reprefill(a, s, m);
    case EV_BUCKET: {
        fs_time_t now = fs_model_now(m);
        int rc = fs_svmet_bucket(a, s, m, now);
        fs_time_t next = now + a->cfg->services.bucket;
        if (!rc && next < fs_model_horizon(m))
            rc = fs_model_module_event(m, a->id, next, FS_PRIO_SAMPLE,
                                       EVD(EV_BUCKET, s->idx, 0, 0), NULL);
        return rc;
    }
    case EV_RETIRE: {
        replica_t *r = fs_svc_rep(s, ri);
        if (ri >= s->n_rep || r->gen != arg || !r->doomed ||
            (r->state != R_STARTING && r->state != R_READY))
            return 0;
        if (r->busy == 0)
            return fs_svc_retire_now(s, m, ri);
        return 0;
    }
    default: return FS_EINTERNAL;
    }
}

/* The model's news of a replica. */
static int on_replica(void *ud, fs_model_t *m, uint32_t slot, int event, fs_time_t startup)
{
    services_t *a = ud;
    const fs_jobrt_t *j = fs_model_job(m, slot);
    uint32_t si = (uint32_t)(j->job.id >> 32) & 0x7fffffff, ri = (uint32_t)j->job.id;
    if (si >= a->n || ri >= a->s[si].n_rep || a->s[si].rep[ri].slot != slot)
        return FS_EINTERNAL;
    svc_t *s = &a->s[si];
    replica_t *r = &s->rep[ri];
    int rc = fs_svfluid_advance_to(s, fs_model_now(m));
    if (rc)
        return rc;
    fs_svc_settle(s, fs_model_now(m));
    if (event == FS_REPLICA_STARTED) {
        const fs_svc_perf_cfg_t *p = &s->cfg->perf[s->pool_row[j->r->place.pool] - 1];
        r->batch = p->max_batch;
        r->pool = j->r->place.pool;
        r->prefill_tps = p->prefill_tps;
        r->stepb = (double)p->max_batch / p->decode_tps * 1e6;
        r->step1 = p->decode1_tps > 0 ? 1e6 / p->decode1_tps : r->stepb;
        if ((rc = fs_sveng_start(s, r, p)))
            return rc;
        r->gen++;
        r->since = fs_model_now(m);
        s->holding++;
        /* surplus (it waited in the queue while the service scaled down):
         * retired in this instant, once the policy has it as running */
        if (!r->doomed && s->live > s->desired && s->cfg->metric != FS_HPA_NONE) {
            r->doomed = 1;
            s->live--;
        }
        if (!r->doomed) {
            s->cold_starts++;
            s->bk.cold++;
        }
        if (r->doomed) {
            r->state = R_STARTING;
            s->n_starting++;
            return fs_model_module_event(m, a->id, fs_model_now(m), FS_PRIO_COMPLETION,
                                         EVD(EV_RETIRE, si, ri, r->gen), NULL);
        }
        if (startup > 0) {
            r->state = R_STARTING;
            s->n_starting++;
            return fs_model_module_event(m, a->id, fs_model_now(m) + startup, FS_PRIO_REPAIR,
                                         EVD(EV_READY, si, ri, r->gen), NULL);
        }
        r->state = R_READY;
        s->n_ready++;
        fs_svc_serving_set(s, r, 1);
        return fs_sveng_dispatch(a, s, m);
    }
    /* stopped: its requests are retried, it waits again */
    if (r->state == R_STARTING)
        s->startup_gpu_s += s->gpu_share * fs_time_to_s(fs_model_now(m) - r->since);
    unready(s, r);
    r->state = R_PENDING;
    r->gen++;
    if ((rc = fs_sveng_requeue(m, s, r)))
        return rc;
    if (r->doomed && j->state == FS_JOBRT_RECOVERING) {
        rc = fs_model_retire(m, slot);  /* ends at its requeue */
        fs_svc_free_replica(s, ri);
        if (rc)
            return rc;
    }
    return fs_sveng_dispatch(a, s, m);
}


/* ---- the end ----------------------------------------------------------------------------- */

static void svc_sample(void *ud, const fs_model_t *m, fs_sample_row_t *row)
{
    const services_t *a = ud;
    (void)m;
    uint32_t g = 0, n = 0, mig = 0;
    for (size_t k = 0; k < a->n; k++) {
        if (a->s[k].mig)
            mig += a->s[k].holding * a->s[k].cfg->gpus;
        else
            g += a->s[k].holding * a->s[k].cfg->gpus;
        for (uint32_t i = 0; i < a->s[k].n_rep; i++)
            n += a->s[k].rep[i].state != R_FREE;
    }
    row->gpus_serving = g;
    row->mig_serving = mig;
    row->replicas = n;
}

static void svc_destroy(void *ud)
{
    services_t *a = ud;
    if (!a)
        return;
    for (size_t k = 0; k < a->n; k++) {
        svc_t *s = &a->s[k];
        for (size_t i = 0; i < s->n_rep; i++) {
            fs_free(s->rep[i].fl);
            if (s->rep[i].e) {
                fs_free(s->rep[i].e->run);
                fs_free(s->rep[i].e->wq);
                fs_free(s->rep[i].e->pc);
                fs_free(s->rep[i].e->kq);
                fs_free(s->rep[i].e->xf);
                fs_free(s->rep[i].e);
            }
        }
        fs_free(s->rep);
        fs_free(s->pool_row);
        fs_free(s->pd_bw);
        fs_free(s->dq);
        fs_free(s->ho);
        fs_free(s->rp);
        fs_free(s->q);
        fs_free(s->recs);
        fs_free(s->co);
        fs_free(s->bk.ttft);
        fs_free(s->bk.tpot);
        fs_free(s->bk.cttft);
        fs_free(s->bk.ctpot);
        if (s->h_ttft)
            gsl_histogram_free(s->h_ttft);
        if (s->h_tpot)
            gsl_histogram_free(s->h_tpot);
        fs_rng_release(&s->rng_arr);
        fs_rng_release(&s->rng_tok);
        fs_rng_release(&s->rng_pre);
        fs_free(s->pre_len);
        fs_free(s->pre_cdf);
        fs_reqtrace_close(s->trace);
        fs_sveng_free_profiles(s);
    }
    fs_free(a->s);
    fs_free(a);
}

static const fs_module_ops_t svc_ops = {.name = "services", .on_event = svc_event,
                                        .finish = fs_svmet_finish, .destroy = svc_destroy,
                                        .sample = svc_sample, .quiet = 1};


int fs_service_attach(fs_model_t *m, fs_error_t *err)
{
    const fs_config_t *cfg = fs_model_config(m);
    if (cfg->services.n == 0)
        return 0;
    char key[160];
    int rc = fs_service_cfg_check(cfg, key, sizeof key, err);
    if (rc) {
        fs_error_prefix(err, "%s", key);
        return rc;
    }
    services_t *a = fs_calloc(1, sizeof *a);
    if (!a || !(a->s = fs_calloc(cfg->services.n, sizeof *a->s))) {
        fs_free(a);
        return fs_error_set(err, FS_ENOMEM, "services: out of memory");
    }
    a->cfg = cfg;
    a->n = cfg->services.n;
    a->want_requests = cfg->services.requests;
    for (size_t k = 0; k < a->n; k++)
        if ((rc = fs_svcfg_build(a, m, k, err))) {
            svc_destroy(a);
            return rc;
        }
    if (fs_model_add_module(m, &svc_ops, a, &a->id)) {
        svc_destroy(a);
        return fs_error_set(err, FS_ENOMEM, "services: out of memory");
    }
    fs_replica_hook_t hook = {.fn = on_replica, .ud = a};
    fs_model_set_replica_hook(m, &hook);
    /* min replicas now, the first arrivals, syncs, buckets */
    for (size_t k = 0; k < a->n && !rc; k++) {
        svc_t *s = &a->s[k];
        const fs_service_cfg_t *c = s->cfg;
        if (s->disagg) {    /* the two groups, prefill first: replicas 0.. then decode */
            s->desired = c->pd_prefill + c->pd_decode;
            for (uint32_t g = 0; g < c->pd_prefill + c->pd_decode && !rc; g++)
                rc = new_replica_role(s, m, g < c->pd_prefill ? ROLE_PREFILL
                                                                     : ROLE_DECODE);
        } else {
            rc = fs_svhpa_scale_to(a, s, m, c->min_replicas);
        }
        if (rc == FS_EINVAL)
            return fs_error_set(err, rc, "services.%zu: a replica of service '%s' (%u GPUs on "
                                "one node) can never fit its pools", k, c->name, c->gpus);
        if (!rc && c->mode == FS_SVC_REQUEST)
            rc = fs_svarr_schedule(a, s, m, 0, err);
        if (!rc && c->mode == FS_SVC_FLUID)
            rc = fs_svarr_rate_change(a, s, m);
        if (!rc && c->metric != FS_HPA_NONE)
            rc = fs_model_module_event(m, a->id, c->sync, FS_PRIO_TIMER, EVD(EV_SYNC, k, 0, 0),
                                       NULL);
        if (!rc)
            rc = fs_model_module_event(m, a->id, cfg->services.bucket, FS_PRIO_SAMPLE,
                                       EVD(EV_BUCKET, k, 0, 0), NULL);
    }
    if (!rc)    /* an instant at 0, so that a pass starts the first replicas then */
        rc = fs_model_module_event(m, a->id, 0, FS_PRIO_TIMER, EVD(EV_KICK, 0, 0, 0), NULL);
    if (rc && !err->code)
        fs_error_set(err, rc, "services: %s", fs_error_describe(rc));
    return rc;
}
