/*
 * Kueue admission (fs_kueue.h, docs/policies.md "Kueue").  Sources: the
 * Kueue docs (kueue.sigs.k8s.io: ClusterQueue, Cohort, ResourceFlavor,
 * LocalQueue, Preemption, Fair Sharing) and DOMAIN.md 3.3.
 *
 * One pass: every active CQ offers its head (the best job of its classes
 * that are not blocked); the heads are ordered as Kueue's scheduler orders
 * a cycle's entries -- those that need no borrowing first, then (fair
 * sharing) lower dominant resource share, then higher priority, then
 * earlier admission -- and each is tried in turn: admitted in the first
 * flavor with quota, or after preempting victims in the first flavor where
 * preemption may help, or blocked.  A blocked head blocks its class
 * (BestEffortFIFO: later classes of the CQ go on) or the whole CQ
 * (StrictFIFO) until something is released in its cohort.  Rounds repeat
 * until no CQ is active.
 *
 * This file is the policy's ops and instrumentation; fs_kueue_int.h lists
 * the files of each concern.
 */
#include "fs_kueue_int.h"

#include <stdio.h>

static int kueue_enqueue(void *state, fs_model_t *m, uint32_t slot)
{
    kueue_t *k = state;
    if (fs_kqueue_grow_jobs(k, slot))
        return FS_ENOMEM;
    int oom = 0;
    int32_t c = fs_kqueue_tenant_cq(k, m, fs_model_job(m, slot)->job.tenant, &oom);
    if (oom)
        return FS_ENOMEM;
    if (c == NO_CQ) {   /* no LocalQueue: pending for good, as in Kueue */
        k->jobs[slot].in = J_UNMAPPED;
        k->jobs[slot].cq = NO_CQ;
        k->st.unmapped++;
        k->queued++;
        return 0;
    }
    return fs_kqueue_job(k, m, slot, c);
}

static void kueue_job_end(void *state, fs_model_t *m, uint32_t slot)
{
    kueue_t *k = state;
    (void)fs_kquota_release(k, m, slot);  /* FS_ENOMEM here only delays a wake-up */
    k->released = 1;
}

static size_t kueue_queued(const void *state) { return ((const kueue_t *)state)->queued; }

/* A pending workload is deleted (a retired replica): out of its class's
 * heap; its CQ is woken, since a blocked head may be the one that left. */
static int kueue_withdraw(void *state, fs_model_t *m, uint32_t slot)
{
    kueue_t *k = state;
    kjob_t *kj = slot < k->cap_jobs ? &k->jobs[slot] : NULL;
    if (kj && kj->in == J_UNMAPPED) {
        kj->in = J_NONE;
        k->queued--;
        return 0;
    }
    if (!kj || kj->in != J_QUEUED)
        return FS_EINVAL;
    kcq_t *q = &k->cq[kj->cq];
    kcls_t *h = &q->cls[kj->shape];
    size_t i = 0;
    while (i < h->n && h->a[i] != slot)
        i++;
    if (i == h->n)
        return FS_EINVAL;
    fs_kqueue_heap_remove_at(m, h, i);
    q->hok = 0;
    q->pending--;
    k->queued--;
    kj->in = J_NONE;
    return fs_kqueue_wake(k, (uint32_t)kj->cq);
}

/* The admission pass; a failure says which policy and what (the job and
 * what went wrong with it when known: k->why). */
static int kueue_pass(void *state, fs_model_t *m)
{
    kueue_t *k = state;
    int rc = fs_kadm_pass(k, m);
    if (rc) {
        fs_error_t e;
        fs_error_clear(&e);
        fs_error_set(&e, rc, "scheduling pass (policy kueue): %s",
                     k->why[0] ? k->why : fs_error_describe(rc));
        fs_model_error(m, &e);
    }
    return rc;
}

static int kueue_create(fs_model_t *m, const fs_sched_cfg_t *cfg, void **state, fs_error_t *err)
{
    return fs_kset_build(cfg, &fs_model_config(m)->cluster, state, err);
}

static int kueue_check(const fs_config_t *cfg, char *key, size_t keylen, fs_error_t *err)
{
    void *st = NULL;
    int rc = fs_kset_build(&cfg->scheduler, &cfg->cluster, &st, err);
    if (st)
        fs_kset_destroy(st);
    if (rc == FS_EINVAL && key && keylen)
        snprintf(key, keylen, "scheduler.kueue");
    return rc;
}

static int kueue_why(const void *state, const fs_model_t *m, uint32_t slot, char *buf, size_t n)
{
    const fs_jobrt_t *j = fs_model_job((fs_model_t *)m, slot);
    const char *tn = fs_model_tenant_name(m, j->job.tenant);
    char why[300];
    int64_t req[KR];
    int32_t c = fs_kset_probe_cq(state, tn, why, sizeof why);
    if (c != NO_CQ) {
        fs_kqueue_reqv(state, (fs_model_t *)m, slot, c, req);
        if (fs_kset_probe_req(state, c, req, why, sizeof why))
            return 0;
    }
    snprintf(buf, n, "%s", why);
    return 1;
}

static void kq_stats(const void *state, fs_policy_stats_t *out)
{
    const fs_kueue_stats_t *st = fs_kueue_stats(state);
    out->admissions = st->admitted;
    out->admissions_borrowing = st->borrowed;
    out->reclaims = st->reclaimed;
}

const fs_policy_ops_t fs_policy_kueue = {
    .name = "kueue",
    .check = kueue_check,
    .why_waiting = kueue_why,
    .probe_create = fs_kueue_probe_create,
    .probe = fs_kueue_probe,
    .probe_destroy = fs_kueue_probe_destroy,
    .create = kueue_create,
    .destroy = fs_kset_destroy,
    .enqueue = kueue_enqueue,
    .pass = kueue_pass,
    .queued = kueue_queued,
    .job_end = kueue_job_end,
    .job_interrupted = kueue_job_end,
    .stats = kq_stats,
    .withdraw = kueue_withdraw,
    .with_pods = fs_kpods_with_pods,
};

size_t fs_kueue_n_cq(const void *state) { return ((const kueue_t *)state)->n_cq; }

/* ---- instrumentation ------------------------------------------------------- */

int fs_kueue_log_id(uint64_t **a, size_t *n, size_t *cap, uint64_t id)
{
    if (fs_grow((void **)a, cap, *n + 1, sizeof **a))
        return FS_ENOMEM;
    (*a)[(*n)++] = id;
    return 0;
}

void fs_kueue_check_every(void *state, int on) { ((kueue_t *)state)->check_on = on; }
const fs_kueue_stats_t *fs_kueue_stats(const void *state) { return &((const kueue_t *)state)->st; }
void fs_kueue_record(void *state, int on) { ((kueue_t *)state)->record = on; }

const uint64_t *fs_kueue_admissions(const void *state, size_t *n)
{
    *n = ((const kueue_t *)state)->n_adm;
    return ((const kueue_t *)state)->adm;
}

const uint64_t *fs_kueue_victims(const void *state, size_t *n)
{
    *n = ((const kueue_t *)state)->n_vic;
    return ((const kueue_t *)state)->vic;
}

int32_t fs_kueue_tenant_cq(void *state, fs_model_t *m, int32_t tenant)
{
    int oom = 0;
    int32_t c = fs_kqueue_tenant_cq(state, m, tenant, &oom);
    return oom || c < 0 ? -1 : c;
}
