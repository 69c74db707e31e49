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

/* Dominant resource share of CQ c with assignment a more (Kueue's fair
 * sharing, pkg/cache/scheduler/fair_sharing.go dominantResourceShare): per
 * resource, what it borrows over all flavors (max(0, usage + request -
 * nominal) in each) per mille of the cohort's lendable quota of that
 * resource (calculateLendable); the largest, divided by the weight. */
/* x * k / d for x >= 0, k > 0, d > 0: Kueue's int64 arithmetic where x * k
 * fits (every realistic quota), else the quotient in long double (exact to
 * 1 in 2^64), clamped: a memory quota of petabytes must not overflow. */
static int64_t scaled_div(int64_t x, int64_t k, int64_t d)
{
    if (x <= INT64_MAX / k)
        return x * k / d;
    long double q = (long double)x * (long double)k / (long double)d;
    return q >= (long double)INT64_MAX ? INT64_MAX : (int64_t)q;
}

int64_t fs_kquota_drs(const kueue_t *k, const kcq_t *c, const kasg_t *a)
{
    if (c->cohort < 0)
        return 0;
    int64_t share = 0;
    for (int r = 0; r < KR; r++) {
        if (!(c->cover & KR_BIT(r)))
            continue;
        int64_t borrowed = 0;
        for (size_t i = 0; i < c->n_fl; i++) {
            const kres_t *q = fs_kquota_res(c, c->fl[i], r);
            if (q->has)
                borrowed += fs_kquota_pos(q->usage + (a->fl[r] == (int32_t)c->fl[i] ? a->req[r] : 0) -
                                          q->nominal);
        }
        int64_t lend = k->coh[c->cohort].lendable_total[r];
        if (borrowed == 0 || lend <= 0)
            continue;
        int64_t ratio = scaled_div(borrowed, 1000, lend);
        if (ratio > share)
            share = ratio;
    }
    if (share == 0)
        return 0;
    if (c->weight_milli == 0)
        return INT64_MAX;
    return scaled_div(share, 1000000, c->weight_milli);
}

/* Usage by priority (a bound for preemption: what lower priorities hold). */
static int prio_add(kcq_t *q, int32_t prio, const kasg_t *a, int sign)
{
    size_t i = 0;
    while (i < q->n_pv && q->pv[i] < prio)
        i++;
    if (i == q->n_pv || q->pv[i] != prio) {
        if (fs_grow((void **)&q->pv, &q->cap_pv, q->n_pv + 1, sizeof *q->pv) ||
            fs_grow((void **)&q->pu, &q->cap_pu, (q->n_pv + 1) * KR, sizeof *q->pu))
            return FS_ENOMEM;
        memmove(q->pv + i + 1, q->pv + i, (q->n_pv - i) * sizeof *q->pv);
        memmove(q->pu + (i + 1) * KR, q->pu + i * KR, (q->n_pv - i) * KR * sizeof *q->pu);
        q->pv[i] = prio;
        for (int r = 0; r < KR; r++)
            q->pu[i * KR + (size_t)r] = 0;
        q->n_pv++;
    }
    for (int r = 0; r < KR; r++)
        if (a->fl[r] >= 0)
            q->pu[i * KR + (size_t)r] += sign * a->req[r];
    return 0;
}

/* Usage of resource r of CQ q's jobs with priority < prio (<= prio when eq). */
int64_t fs_kquota_prio_below(const kcq_t *q, int32_t prio, int eq, int r)
{
    int64_t u = 0;
    for (size_t i = 0; i < q->n_pv && (q->pv[i] < prio || (eq && q->pv[i] == prio)); i++)
        u += q->pu[i * KR + (size_t)r];
    return u;
}

/* Borrowed and lent quota integrated up to now (before every change of
 * usage).  Per cohort, flavor and resource counted (k->used): a CQ borrows
 * max(0, usage - nominal); what the cohort borrows, B, is lent by the CQs
 * with idle lendable quota min(nominal - usage, nominal - guaranteed) > 0,
 * in proportion to it.  So the cohort's lent equals its borrowed at every
 * instant.  O(CQs x flavors x resources counted) per admission or release. */
static void quota_settle(kueue_t *k, fs_time_t now)
{
    double dt = (double)(now - k->q_last);
    k->q_last = now;
    if (dt <= 0)
        return;
    for (size_t h = 0; h < k->n_coh; h++) {
        const kcoh_t *co = &k->coh[h];
        for (size_t f = 0; f < k->n_fl; f++)
            for (int x = 0; x < KR; x++) {
                if (!(k->used & KR_BIT(x)))
                    continue;
                int64_t b = 0, l = 0;
                for (size_t i = 0; i < co->n; i++) {
                    const kres_t *r = fs_kquota_res(&k->cq[co->cqs[i]], (uint32_t)f, x);
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
                    const kres_t *r = fs_kquota_res(q, (uint32_t)f, x);
                    if (!r->has)
                        continue;
                    int64_t idle = r->nominal - r->usage, lend = r->nominal - r->guaranteed;
                    q->borrowed_us[x] += (double)fs_kquota_pos(r->usage - r->nominal) * dt;
                    if (l > 0)
                        q->lent_us[x] += (double)b * (double)fs_kquota_pos(idle < lend ? idle : lend) /
                                         (double)l * dt;
                }
            }
    }
}

int fs_kquota_admit(kueue_t *k, fs_model_t *m, uint32_t slot, const kasg_t *a)
{
    kjob_t *kj = &k->jobs[slot];
    kcq_t *q = &k->cq[kj->cq];
    if (fs_grow((void **)&q->run, &q->cap_run, q->n_run + 1, sizeof *q->run))
        return FS_ENOMEM;
    int borrows = 0;
    for (int r = 0; r < KR; r++)
        if (a->fl[r] >= 0) {
            const kres_t *x = fs_kquota_res(q, (uint32_t)a->fl[r], r);
            borrows |= x->usage + a->req[r] > x->nominal;
        }
    k->st.borrowed += borrows;
    quota_settle(k, fs_model_now(m));
    fs_kquota_add_asg(k, q, a, 1);
    kj->a = *a;
    kj->run_idx = (uint32_t)q->n_run;
    q->run[q->n_run++] = slot;
    kj->admit_seq = k->admit_seq++;
    kj->admit_pass = k->pass_no;
    kj->in = J_ADMITTED;
    k->st.admitted++;
    return prio_add(q, fs_model_job(m, slot)->job.priority, a, 1);
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
    fs_kquota_add_asg(k, q, &kj->a, -1);
    (void)prio_add(q, fs_model_job(m, slot)->job.priority, &kj->a, -1); /* the entry exists */
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
    return (double)fs_kquota_res(&k->cq[c], (uint32_t)f, FS_KRES_GPU)->usage / 1000.0;
}

static const char *const res_names[KR] = {"nvidia.com/gpu", "cpu", "memory", "pods"};

int fs_kueue_check(const void *state, char *msg, size_t n)
{
    const kueue_t *k = state;
    for (size_t c = 0; c < k->n_cq; c++) {
        const kcq_t *q = &k->cq[c];
        for (size_t i = 0; i < k->n_fl; i++)
            for (int x = 0; x < KR; x++) {
                const kres_t *r = fs_kquota_res(q, (uint32_t)i, x);
                const char *rn = res_names[x];
                int64_t sum = 0;    /* the usage, recomputed from the admitted jobs */
                for (size_t j = 0; j < q->n_run; j++)
                    if (k->jobs[q->run[j]].a.fl[x] == (int32_t)i)
                        sum += k->jobs[q->run[j]].a.req[x];
                if (sum != r->usage) {
                    snprintf(msg, n, "CQ %s flavor %s %s: usage %lld but admitted jobs hold %lld",
                             q->name, k->fl[i].name, rn, (long long)r->usage, (long long)sum);
                    return -1;
                }
                if (r->usage < 0 || (!r->has && r->usage != 0)) {
                    snprintf(msg, n, "CQ %s flavor %s %s: usage %lld without quota", q->name,
                             k->fl[i].name, rn, (long long)r->usage);
                    return -1;
                }
                if (q->cohort < 0 && r->usage > r->nominal) {
                    snprintf(msg, n, "CQ %s flavor %s %s: usage %lld > nominal %lld without a cohort",
                             q->name, k->fl[i].name, rn, (long long)r->usage, (long long)r->nominal);
                    return -1;
                }
                if (r->blimit != NONE && r->usage > r->nominal + r->blimit) {
                    snprintf(msg, n, "CQ %s flavor %s %s: usage %lld > nominal %lld + borrowingLimit "
                             "%lld", q->name, k->fl[i].name, rn, (long long)r->usage,
                             (long long)r->nominal, (long long)r->blimit);
                    return -1;
                }
            }
    }
    for (size_t h = 0; h < k->n_coh; h++) {
        const kcoh_t *co = &k->coh[h];
        for (size_t f = 0; f < k->n_fl; f++)
            for (int x = 0; x < KR; x++) {
                int64_t used = 0;
                size_t i = f * KR + (size_t)x;
                for (size_t c = 0; c < co->n; c++) {
                    const kres_t *r = fs_kquota_res(&k->cq[co->cqs[c]], (uint32_t)f, x);
                    used += fs_kquota_pos(r->usage - r->guaranteed);
                }
                if (used != co->usage[i] || used > co->quota[i]) {
                    snprintf(msg, n, "cohort %s flavor %s %s: borrowed usage %lld (kept %lld) > "
                             "lendable %lld", co->name, k->fl[f].name, res_names[x], (long long)used,
                             (long long)co->usage[i], (long long)co->quota[i]);
                    return -1;
                }
            }
    }
    return 0;
}

int fs_kueue_quota_hours(void *state, fs_model_t *m, size_t cq, double *borrowed, double *lent)
{
    return fs_kueue_quota_hours_res(state, m, cq, FS_KRES_GPU, borrowed, lent);
}

int fs_kueue_counts(const void *state, int res)
{
    const kueue_t *k = state;
    return res >= 0 && res < KR && (k->used & KR_BIT(res)) != 0;
}

int fs_kueue_quota_hours_res(void *state, fs_model_t *m, size_t cq, int res, double *borrowed,
                             double *lent)
{
    /* per unit: milli-GPUs, milli-cores, bytes (GiB) and milli-pods */
    static const double per[KR] = {1000.0, 1000.0, 1073741824.0, 1000.0};
    kueue_t *k = state;
    if (cq >= k->n_cq || res < 0 || res >= KR)
        return FS_EINVAL;
    if (!(k->used & KR_BIT(res))) {
        *borrowed = *lent = NAN;
        return 0;
    }
    quota_settle(k, fs_model_now(m));
    *borrowed = k->cq[cq].borrowed_us[res] / per[res] / 1e6 / 3600.0;
    *lent = k->cq[cq].lent_us[res] / per[res] / 1e6 / 3600.0;
    return 0;
}
