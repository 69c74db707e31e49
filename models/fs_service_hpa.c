/*
 * fs_service_hpa: the services' Horizontal Pod Autoscaler
 * (fs_service_int.h): the replica calculator of a metric, the stabilisation
 * windows, the scale-up limit, and scaling (new replicas submitted, surplus
 * ones retired in the ReplicaSet's order).
 */
#include "fs_service_int.h"

#include <math.h>

static uint32_t ceil_u(double x)
{
    if (!(x > 0))
        return 0;
    return x >= 4e9 ? 4000000000u : (uint32_t)ceil(x - 1e-9);
}

/* The weight load of a replica's job class: the last part of its start-up
 * (the rule of fs_startup_begin: the class's image row, else startup.load). */
static fs_time_t class_load(const fs_startup_cfg_t *sc, uint32_t job_class)
{
    fs_time_t load = sc->load;
    for (size_t i = 0; i < sc->n_images; i++)
        if (sc->images[i].job_class == job_class)
            load = sc->images[i].load;
    return load;
}

/* The replicas the HPA's replica calculator asks for now, as
 * calcPlainMetricReplicas (pkg/controller/podautoscaler/replica_calculator.go)
 * does for a pods metric: 0 and nothing in *want when no replica is ready
 * (upstream fails the sync: "did not receive metrics for targeted pods").
 * groupPods sorts the replicas that are not retired: a ready one has the
 * metric; one in the policy's queue, pulling its image or starting its
 * container is a Pending pod (unready: left out, and counted at 0 only on a
 * scale-up); one loading its weights is a Running pod whose server does not
 * report yet (missing: at the target on a scale-down, at 0 on a scale-up).
 * Retired ones (deleted pods) are in neither live nor ready_live. */
static int hpa_calc(services_t *a, svc_t *s, fs_model_t *m, uint32_t *want)
{
    const fs_service_cfg_t *c = s->cfg;
    uint32_t cur = s->live;
    uint32_t ready = s->ready_live;
    if (ready == 0)
        return 0;
    uint32_t missing = 0;
    fs_time_t load = class_load(&a->cfg->startup, c->job_class);
    if (s->n_starting > 0 && load > 0) {
        fs_time_t now = fs_model_now(m);
        for (size_t i = 0; i < s->n_rep; i++) {
            const replica_t *r = &s->rep[i];
            if (r->state != R_STARTING || r->doomed)
                continue;
            const fs_jobrt_t *j = fs_model_job(m, r->slot);
            if (now >= j->r->start + j->r->att_startup - load)
                missing++;
        }
    }
    uint32_t unready = cur > ready + missing ? cur - ready - missing : 0;
    double total;       /* the metric summed over the ready replicas */
    double inserv = s->busy - s->busy_doomed, waiting = (double)s->q_n;
    if (c->mode == FS_SVC_FLUID)
        fs_svfluid_load(s, &inserv, &waiting);
    switch (c->metric) {
    case FS_HPA_CONCURRENCY: total = inserv + waiting; break;
    case FS_HPA_QUEUE: total = waiting; break;
    default:
        total = s->slots_ready > 0 ? inserv / s->slots_ready * ready : 0;
    }
    double ratio = total / ready / c->target;
    int up_unready = unready > 0 && ratio > 1;
    if (!up_unready && missing == 0) {
        *want = fabs(ratio - 1) <= c->tolerance ? cur : ceil_u(ratio * ready);
        return 1;
    }
    /* the metric re-averaged with the missing and, on a scale-up, the
     * unready replicas filled in */
    double t2 = total, n = ready;
    if (missing > 0 && ratio != 1) {
        n += missing;
        if (ratio < 1)
            t2 += c->target * missing;
    }
    if (up_unready)
        n += unready;
    double r2 = t2 / n / c->target;
    *want = cur;
    if (fabs(r2 - 1) <= c->tolerance || (ratio < 1 && r2 > 1) || (ratio > 1 && r2 < 1))
        return 1;
    uint32_t w = ceil_u(r2 * n);
    if ((r2 < 1 && w > cur) || (r2 > 1 && w < cur))
        return 1;
    *want = w;
    return 1;
}

static int hpa_record(svc_t *s, fs_time_t now, uint32_t n)
{
    const fs_service_cfg_t *c = s->cfg;
    fs_time_t keep = c->down_window > c->up_window ? c->down_window : c->up_window;
    size_t w = 0;
    for (size_t i = 0; i < s->n_recs; i++)
        if (now - s->recs[i].at < keep)
            s->recs[w++] = s->recs[i];
    s->n_recs = w;
    if (fs_grow((void **)&s->recs, &s->cap_recs, s->n_recs + 1, sizeof *s->recs))
        return FS_ENOMEM;
    s->recs[s->n_recs++] = (struct rec){now, n};
    return 0;
}

/* Scales to n replicas: new ones are submitted; surplus ones are retired
 * in the ReplicaSet's order: pending ones first (deleted from the queue),
 * then starting ones, then ready ones with the fewest requests, newest
 * first. */
int fs_svhpa_scale_to(services_t *a, svc_t *s, fs_model_t *m, uint32_t n)
{
    /* the count a replica placed later is checked against (on_replica: a
     * surplus one is retired as it starts); the activator's one from zero
     * included */
    s->desired = n;
    while (s->live < n) {
        int rc = fs_svc_new_replica(s, m);
        if (rc)
            return rc;
    }
    while (s->live > n) {
        int pick = -1, best_rank = 99;
        uint32_t best_busy = UINT32_MAX;
        for (uint32_t i = s->n_rep; i-- > 0;) {
            const replica_t *r = &s->rep[i];
            if (r->doomed || r->state == R_FREE)
                continue;
            int rank = r->state == R_PENDING ? 0 : r->state == R_STARTING ? 1 : 2;
            if (rank < best_rank || (rank == best_rank && r->busy < best_busy)) {
                pick = (int)i;
                best_rank = rank;
                best_busy = r->busy;
            }
        }
        if (pick < 0)
            break;
        replica_t *r = &s->rep[pick];
        int rc = fs_svfluid_advance_to(s, fs_model_now(m));
        if (rc)
            return rc;
        fs_svc_settle(s, fs_model_now(m));
        if (r->state == R_READY)
            fs_svc_serving_set(s, r, -1);
        r->doomed = 1;
        s->busy_doomed += r->busy;
        s->live--;
        if (r->state == R_PENDING) {
            /* waiting in the policy's queue: taken out of it now (a policy
             * that cannot give it back starts it, and it is retired in
             * that instant: on_replica), or recovering after a failure
             * (it ends at its requeue) */
            rc = fs_model_retire(m, r->slot);
            if (rc == 0)
                fs_svc_free_replica(s, (uint32_t)pick);
            if (rc < 0)
                return rc;
            continue;
        }
        if (r->busy == 0 && (rc = fs_svc_retire_now(s, m, (uint32_t)pick)))
            return rc;
    }
    return 0;
}

int fs_svhpa_sync(services_t *a, svc_t *s, fs_model_t *m)
{
    const fs_service_cfg_t *c = s->cfg;
    fs_time_t now = fs_model_now(m);
    int rc;
    uint32_t cur = s->live, want = cur, n = cur;
    if (hpa_calc(a, s, m, &want)) {
        /* stabilisation (stabilizeRecommendationWithBehaviors in
         * pkg/controller/podautoscaler/horizontal.go): up = the smallest
         * recommendation of the up window, down = the largest of the down
         * window, a record counting while it is younger than the window
         * (rec.timestamp.After(now - window)); then this one is recorded */
        uint32_t up = want, down = want;
        for (size_t i = 0; i < s->n_recs; i++) {
            if (now - s->recs[i].at < c->up_window && s->recs[i].n < up)
                up = s->recs[i].n;
            if (now - s->recs[i].at < c->down_window && s->recs[i].n > down)
                down = s->recs[i].n;
        }
        if ((rc = hpa_record(s, now, want)))
            return rc;
        if (n < up)
            n = up;
        if (n > down)
            n = down;
        /* the default scale-up limit: max(+100%, +4) per period */
        uint32_t lim = cur * 2 > cur + 4 ? cur * 2 : cur + 4;
        if (n > lim)
            n = lim;
    }
    /* no ready replica: the sync fails upstream, recording nothing and
     * leaving the scale as it is (within the bounds) */
    uint32_t maxr = c->max_replicas ? c->max_replicas : c->min_replicas;
    if (n > maxr)
        n = maxr;
    if (n < c->min_replicas)
        n = c->min_replicas;
    if ((rc = fs_svhpa_scale_to(a, s, m, n)))
        return rc;
    return fs_model_module_event(m, a->id, now + c->sync, FS_PRIO_TIMER,
                                 EVD(EV_SYNC, s->idx, 0, 0), NULL);
}
