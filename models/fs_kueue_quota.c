/*
 * fs_kueue_quota: ClusterQueue and cohort quota in Kueue (fs_kueue_int.h):
 * the dominant resource share of fair sharing, usage by priority (a bound
 * for preemption), borrowed and lent quota over time, the quota an
 * admission takes and a release gives back, and the invariants
 * (fs_kueue_check).
 */
#include "fs_kueue_int.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Dominant resource share of CQ c with req more in flavor f (Kueue's
 * fair sharing, one resource): borrowed / the cohort's lendable quota,
 * per mille, divided by the weight. */
int64_t fs_kquota_drs(const kueue_t *k, const kcq_t *c, int32_t f, int64_t req)
{
    if (c->cohort < 0)
        return 0;
    int64_t borrowed = 0;
    for (size_t i = 0; i < c->n_fl; i++) {
        const kres_t *r = &c->res[c->fl[i]];
        borrowed += fs_kquota_pos(r->usage + ((int32_t)c->fl[i] == f ? req : 0) - r->nominal);
    }
    int64_t lend = k->coh[c->cohort].lendable_total;
    if (borrowed == 0 || lend <= 0)
        return 0;
    if (c->weight_milli == 0)
        return INT64_MAX;
    return borrowed * 1000 / lend * 1000000 / c->weight_milli;
}

/* Usage by priority (a bound for preemption: what lower priorities hold). */
static int prio_add(kcq_t *q, int32_t prio, int64_t d)
{
    size_t i = 0;
    while (i < q->n_pv && q->pv[i] < prio)
        i++;
    if (i == q->n_pv || q->pv[i] != prio) {
        size_t cap = q->cap_pv;
        if (fs_grow((void **)&q->pv, &cap, q->n_pv + 1, sizeof *q->pv) ||
            fs_grow((void **)&q->pu, &q->cap_pv, q->n_pv + 1, sizeof *q->pu))
            return FS_ENOMEM;
        memmove(q->pv + i + 1, q->pv + i, (q->n_pv - i) * sizeof *q->pv);
        memmove(q->pu + i + 1, q->pu + i, (q->n_pv - i) * sizeof *q->pu);
        q->pv[i] = prio;
        q->pu[i] = 0;
        q->n_pv++;
    }
    q->pu[i] += d;
    return 0;
}

/* Usage of CQ q's jobs with priority < prio (<= prio when eq). */
int64_t fs_kquota_prio_below(const kcq_t *q, int32_t prio, int eq)
{
    int64_t u = 0;
    for (size_t i = 0; i < q->n_pv && (q->pv[i] < prio || (eq && q->pv[i] == prio)); i++)
        u += q->pu[i];
    return u;
}

/* Borrowed and lent quota integrated up to now (before every change of
 * usage).  Per cohort and flavor: a CQ borrows max(0, usage - nominal);
 * what the cohort borrows, B, is lent by the CQs with idle lendable quota
 * min(nominal - usage, nominal - guaranteed) > 0, in proportion to it.  So
 * the cohort's lent equals its borrowed at every instant.  O(CQs x flavors)
 * per admission or release. */
static void quota_settle(kueue_t *k, fs_time_t now)
{
    double dt = (double)(now - k->q_last);
    k->q_last = now;
    if (dt <= 0)
        return;
    for (size_t h = 0; h < k->n_coh; h++) {
        const kcoh_t *co = &k->coh[h];
        for (size_t f = 0; f < k->n_fl; f++) {
            int64_t b = 0, l = 0;
            for (size_t i = 0; i < co->n; i++) {
                const kres_t *r = &k->cq[co->cqs[i]].res[f];
                if (!r->has)
                    continue;
                int64_t idle = r->nominal - r->usage, lend = r->nominal - r->guaranteed;
                b += fs_kquota_pos(r->usage - r->nominal);
                l += fs_kquota_pos(idle < lend ? idle : lend);
            }
            if (b == 0)
                continue;
            for (size_t i = 0; i < co->n; i++) {
                kcq_t *q = &k->cq[co->cqs[i]];
                const kres_t *r = &q->res[f];
                if (!r->has)
                    continue;
                int64_t idle = r->nominal - r->usage, lend = r->nominal - r->guaranteed;
                q->borrowed_mus += (double)fs_kquota_pos(r->usage - r->nominal) * dt;
                if (l > 0)
                    q->lent_mus += (double)b * (double)fs_kquota_pos(idle < lend ? idle : lend) / (double)l * dt;
            }
        }
    }
}

int fs_kquota_admit(kueue_t *k, fs_model_t *m, uint32_t slot, uint32_t f)
{
    kjob_t *kj = &k->jobs[slot];
    kcq_t *q = &k->cq[kj->cq];
    int64_t r = fs_kqueue_req(m, slot);
    if (fs_grow((void **)&q->run, &q->cap_run, q->n_run + 1, sizeof *q->run))
        return FS_ENOMEM;
    if (q->res[f].usage + r > q->res[f].nominal)
        k->st.borrowed++;
    quota_settle(k, fs_model_now(m));
    fs_kquota_add(k, q, f, r);
    kj->req = r;
    kj->flavor = (int32_t)f;
    kj->run_idx = (uint32_t)q->n_run;
    q->run[q->n_run++] = slot;
    kj->admit_seq = k->admit_seq++;
    kj->admit_pass = k->pass_no;
    kj->in = J_ADMITTED;
    k->st.admitted++;
    return prio_add(q, fs_model_job(m, slot)->job.priority, r);
}

/* Releases an admitted job's quota (it ended, was preempted or lost its
 * node). */
int fs_kquota_release(kueue_t *k, fs_model_t *m, uint32_t slot)
{
    kjob_t *kj = &k->jobs[slot];
    if (slot >= k->cap_jobs || kj->in != J_ADMITTED)
        return 0;
    kcq_t *q = &k->cq[kj->cq];
    quota_settle(k, fs_model_now(m));
    fs_kquota_add(k, q, (uint32_t)kj->flavor, -kj->req);
    (void)prio_add(q, fs_model_job(m, slot)->job.priority, -kj->req); /* the entry exists */
    uint32_t last = q->run[--q->n_run];
    q->run[kj->run_idx] = last;
    k->jobs[last].run_idx = kj->run_idx;
    kj->in = J_NONE;
    k->released = 1;
    return fs_kqueue_wake_cohort(k, (uint32_t)kj->cq);
}

double fs_kueue_usage(const void *state, const char *cq, const char *flavor)
{
    const kueue_t *k = state;
    int32_t c = fs_kqueue_cq_by_name(k, cq), f = fs_kset_flavor_index(k, flavor);
    if (c < 0 || f < 0)
        return NAN;
    return (double)k->cq[c].res[f].usage / 1000.0;
}

int fs_kueue_check(const void *state, char *msg, size_t n)
{
    const kueue_t *k = state;
    for (size_t c = 0; c < k->n_cq; c++) {
        const kcq_t *q = &k->cq[c];
        for (size_t i = 0; i < k->n_fl; i++) {
            const kres_t *r = &q->res[i];
            int64_t sum = 0;    /* the usage, recomputed from the admitted jobs */
            for (size_t j = 0; j < q->n_run; j++)
                if (k->jobs[q->run[j]].flavor == (int32_t)i)
                    sum += k->jobs[q->run[j]].req;
            if (sum != r->usage) {
                snprintf(msg, n, "CQ %s flavor %s: usage %lld but admitted jobs hold %lld", q->name,
                         k->fl[i].name, (long long)r->usage, (long long)sum);
                return -1;
            }
            if (r->usage < 0 || (!r->has && r->usage != 0)) {
                snprintf(msg, n, "CQ %s flavor %s: usage %lld without quota", q->name, k->fl[i].name,
                         (long long)r->usage);
                return -1;
            }
            if (q->cohort < 0 && r->usage > r->nominal) {
                snprintf(msg, n, "CQ %s flavor %s: usage %lld > nominal %lld without a cohort",
                         q->name, k->fl[i].name, (long long)r->usage, (long long)r->nominal);
                return -1;
            }
            if (r->blimit != NONE && r->usage > r->nominal + r->blimit) {
                snprintf(msg, n, "CQ %s flavor %s: usage %lld > nominal %lld + borrowingLimit %lld",
                         q->name, k->fl[i].name, (long long)r->usage, (long long)r->nominal,
                         (long long)r->blimit);
                return -1;
            }
        }
    }
    for (size_t h = 0; h < k->n_coh; h++) {
        const kcoh_t *co = &k->coh[h];
        for (size_t f = 0; f < k->n_fl; f++) {
            int64_t used = 0;
            for (size_t c = 0; c < co->n; c++) {
                const kres_t *r = &k->cq[co->cqs[c]].res[f];
                used += fs_kquota_pos(r->usage - r->guaranteed);
            }
            if (used != co->usage[f] || used > co->quota[f]) {
                snprintf(msg, n, "cohort %s flavor %s: borrowed usage %lld (kept %lld) > lendable %lld",
                         co->name, k->fl[f].name, (long long)used, (long long)co->usage[f],
                         (long long)co->quota[f]);
                return -1;
            }
        }
    }
    return 0;
}

int fs_kueue_quota_hours(void *state, fs_model_t *m, size_t cq, double *borrowed, double *lent)
{
    kueue_t *k = state;
    if (cq >= k->n_cq)
        return FS_EINVAL;
    quota_settle(k, fs_model_now(m));
    *borrowed = k->cq[cq].borrowed_mus / 1000.0 / 1e6 / 3600.0;
    *lent = k->cq[cq].lent_mus / 1000.0 / 1e6 / 3600.0;
    return 0;
}
