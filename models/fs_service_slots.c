/*
 * fs_service_slots: engine.scheduler: slots, the request-level model of
 * issue 16 (fs_service_int.h), kept as the default until the fluid mode and
 * the shipped serving scenarios move to the iteration engine
 * (fs_service_engine.c; docs/services.md).  A replica is max_batch
 * independent slots fed from the service's queue: a request's time is its
 * own prefill at the full prefill rate, in parallel with the others, plus
 * (out - 1) decode steps at the step of the batch it joined.  It overstates
 * a replica's prefill capacity max_batch times (docs/validation.md).
 */
#include "fs_service_int.h"

#include <math.h>

static fs_time_t prefill_us(const replica_t *r, uint32_t in)
{
    fs_time_t d = (fs_time_t)llround((double)in / r->prefill_tps * 1e6);
    return d > 0 ? d : 0;
}

/* Starts request q on replica i (a free batch slot). */
static int serve(services_t *a, svc_t *s, fs_model_t *m, uint32_t i, const req_t *q)
{
    replica_t *r = fs_svc_rep(s, i);
    uint32_t pos = 0;
    while (r->fl[pos].used)
        pos++;
    inflight_t *f = &r->fl[pos];
    fs_time_t now = fs_model_now(m);
    r->busy++;
    s->running++;
    s->busy++;
    double stepd = r->batch > 1 ? r->step1 + (r->stepb - r->step1) * (double)(r->busy - 1) /
                                                 (double)(r->batch - 1)
                                : r->stepb;
    f->r = *q;
    f->start = now;
    f->step = (fs_time_t)llround(stepd);
    f->used = 1;
    fs_time_t end = now + prefill_us(r, q->in) + (fs_time_t)(q->out - 1) * f->step;
    return fs_model_module_event(m, a->id, end, FS_PRIO_COMPLETION, EVD(EV_DONE, s->idx, i, pos),
                                 &f->ev);
}

/* Sends waiting requests to ready replicas with free slots: the one with the
 * fewest in flight first (lowest index on ties). */
int fs_svslot_dispatch(services_t *a, svc_t *s, fs_model_t *m)
{
    while (s->q_n > 0 && s->busy - s->busy_doomed < s->slots_ready) {
        uint32_t best = UINT32_MAX, bb = UINT32_MAX;
        for (uint32_t i = 0; i < s->n_rep; i++) {
            const replica_t *r = &s->rep[i];
            if (r->state == R_READY && !r->doomed && r->busy < r->batch && r->busy < bb) {
                best = i;
                bb = r->busy;
            }
        }
        if (best == UINT32_MAX)
            break;
        fs_svc_settle(s, fs_model_now(m));
        req_t q = fs_sveng_pop(s);
        int rc = serve(a, s, m, best, &q);
        if (rc)
            return rc;
    }
    return 0;
}

int fs_svslot_done(services_t *a, svc_t *s, fs_model_t *m, uint32_t i, uint32_t pos)
{
    replica_t *r = fs_svc_rep(s, i);
    if (i >= s->n_rep || pos >= s->max_batch || !r->fl[pos].used)
        return FS_EINTERNAL;
    inflight_t *f = &r->fl[pos];
    fs_time_t now = fs_model_now(m);
    double pre = fs_time_to_s(prefill_us(r, f->r.in));
    fs_request_row_t row = {.service = s->idx, .input = f->r.in, .output = f->r.out,
                            .retries = f->r.retries, .replica = i, .decode_replica = i,
                            .arrival = fs_time_to_s(f->r.arrival),
                            .admitted = fs_time_to_s(f->start),
                            .ttft = fs_time_to_s(f->start - f->r.arrival) + pre,
                            .tpot = f->r.out > 1 ? fs_time_to_s(f->step) : NAN,
                            .end = fs_time_to_s(now)};
    int rc = fs_sveng_record(a, s, m, &row);
    if (rc)
        return rc;
    f->used = 0;
    f->ev = (fs_event_handle_t){0, 0};
    r->busy--;
    s->running--;
    s->busy--;
    s->busy_doomed -= r->doomed;
    if (r->doomed && r->busy == 0)
        return fs_svc_retire_now(s, m, i);
    return fs_svslot_dispatch(a, s, m);
}

/* Every request in flight on replica i goes back to the head of the queue
 * (in their arrival order). */
int fs_svslot_requeue(fs_model_t *m, svc_t *s, replica_t *r)
{
    fs_svc_settle(s, fs_model_now(m));
    for (;;) {      /* latest arrival first, each pushed at the front */
        int k = -1;
        for (uint32_t p = 0; p < s->max_batch && r->fl; p++)
            if (r->fl[p].used && (k < 0 || r->fl[p].r.arrival > r->fl[k].r.arrival))
                k = (int)p;
        if (k < 0)
            break;
        inflight_t *f = &r->fl[k];
        fs_model_cancel(m, f->ev);
        f->used = 0;
        f->r.retries++;
        s->retried++;
        r->busy--;
        s->running--;
        s->busy--;
        s->busy_doomed -= r->doomed;
        int rc = fs_sveng_push(s, &f->r, 1);
        if (rc)
            return rc;
    }
    return 0;
}

