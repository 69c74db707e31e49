/*
 * fs_stats: headline figures of one run (see fs_stats.h).
 *
 * Owns two growable arrays of doubles (waits of jobs in statistics, JCTs of
 * completed jobs in statistics) and a small array of per-tenant accumulators
 * kept sorted by tenant index.  Job counts and the Little's-law sum are
 * plain running totals, so memory is one double per job that counts in
 * statistics (two for completed ones; three once a job was queued again,
 * fs_job_row_t.queued_s), whatever the number of rows.
 */
#include "fs_stats.h"

#include <float.h>
#include <math.h>
#include <string.h>

#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

#include "../sim/fs_alloc.h"

/* Per-tenant sums beside the public rows (parallel array, same order). */
typedef struct tenant_acc {
    double wait_sum;   /* s, over started jobs in statistics */
    uint64_t wait_n;
    double queued_sum; /* s, same jobs */
    double *waits;     /* waits of its started jobs in statistics (owned) */
    size_t cap_waits;
    double *jcts;      /* JCTs of its completed jobs in statistics (owned) */
    size_t n_jcts, cap_jcts;
} tenant_acc_t;

struct fs_stats {
    double warmup;           /* s */

    double *waits;           /* waits of started jobs in statistics, s (fs_stats_finish
                              * uses the array as scratch once it has their figures) */
    size_t n_waits, cap_waits;
    double *jcts;            /* end - submit of completed jobs in statistics, s */
    size_t n_jcts, cap_jcts;
    double *queued;          /* queued_s of the jobs in waits, s; kept only once requeued
                              * (until then each equals its wait: 8 bytes per job saved) */
    size_t cap_queued;
    int requeued;            /* some job's queued_s differs from its wait */
    uint64_t waited;         /* jobs in statistics with wait > 0 */

    uint64_t rows;           /* job rows seen */
    uint64_t by_state[6];    /* rows per enum fs_job_state */
    uint64_t bad_state;      /* rows with a state outside the enum */
    double sojourn_sum;      /* sum over started jobs of end - submit, job-s */
    double ettr_sum;         /* ETTR of completed jobs in statistics */
    uint64_t ettr_n;
    /* ML Productivity Goodput over the jobs in statistics (GPU-s): held,
     * GPUs x (end - submit), useful, useful x MFU */
    double gp_held, gp_span, gp_useful, gp_program;

    fs_tenant_row_t *trows;  /* sorted by tenant, unique */
    tenant_acc_t *tacc;      /* parallel to trows */
    size_t n_tenants, cap_trows, cap_tacc;
};

int fs_stats_create(double warmup_s, fs_stats_t **out)
{
    *out = NULL;
    fs_stats_t *st = fs_calloc(1, sizeof *st);
    if (!st)
        return FS_ENOMEM;
    st->warmup = warmup_s;
    *out = st;
    return 0;
}

void fs_stats_destroy(fs_stats_t *st)
{
    if (!st)
        return;
    fs_free(st->waits);
    fs_free(st->jcts);
    fs_free(st->queued);
    for (size_t i = 0; i < st->n_tenants; i++) {
        fs_free(st->tacc[i].waits);
        fs_free(st->tacc[i].jcts);
    }
    fs_free(st->trows);
    fs_free(st->tacc);
    fs_free(st);
}

/* The accumulator slot of tenant t, inserted in order when new.  Binary
 * search: O(log T) per job, O(T) per new tenant; tenant indices may be
 * sparse without costing memory. */
static int tenant_slot(fs_stats_t *st, int32_t t, size_t *slot)
{
    size_t lo = 0, hi = st->n_tenants;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (st->trows[mid].tenant < t)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < st->n_tenants && st->trows[lo].tenant == t) {
        *slot = lo;
        return 0;
    }
    size_t need = st->n_tenants + 1;
    if (fs_grow((void **)&st->trows, &st->cap_trows, need, sizeof *st->trows) != 0 ||
        fs_grow((void **)&st->tacc, &st->cap_tacc, need, sizeof *st->tacc) != 0)
        return FS_ENOMEM;
    size_t tail = st->n_tenants - lo;
    memmove(&st->trows[lo + 1], &st->trows[lo], tail * sizeof *st->trows);
    memmove(&st->tacc[lo + 1], &st->tacc[lo], tail * sizeof *st->tacc);
    st->trows[lo] = (fs_tenant_row_t){.tenant = t, .wait_mean = NAN,
                                      .borrowed_gpu_hours = NAN, .lent_gpu_hours = NAN,
                                      .borrowed_cpu_core_hours = NAN, .lent_cpu_core_hours = NAN,
                                      .borrowed_memory_gib_hours = NAN,
                                      .lent_memory_gib_hours = NAN, .borrowed_pod_hours = NAN,
                                      .lent_pod_hours = NAN};
    st->tacc[lo] = (tenant_acc_t){0};
    st->n_tenants = need;
    *slot = lo;
    return 0;
}

int fs_stats_add_job(fs_stats_t *st, const fs_job_row_t *row)
{
    int started = !isnan(row->wait);
    int in_stats = row->submit >= st->warmup;
    int completed = row->state == FS_STATE_COMPLETED;

    /* Everything that can fail comes first, so that a failed call leaves
     * the accumulator exactly as it was (spare capacity aside). */
    int add_wait = in_stats && started;
    int add_jct = in_stats && completed;  /* completed implies started in a sane model */
    double qv = isnan(row->queued_s) ? row->wait : row->queued_s;
    int add_queued = add_wait && (st->requeued || qv != row->wait);
    /* (the capacity tests inline: fs_grow's call per job and array was a
     * fifth of this function) */
    if (add_wait &&
        ((st->n_waits == st->cap_waits &&
          fs_grow((void **)&st->waits, &st->cap_waits, st->n_waits + 1, sizeof(double)) != 0) ||
         (add_queued && st->n_waits >= st->cap_queued &&
          fs_grow((void **)&st->queued, &st->cap_queued, st->n_waits + 1, sizeof(double)) != 0)))
        return FS_ENOMEM;
    if (add_jct && st->n_jcts == st->cap_jcts &&
        fs_grow((void **)&st->jcts, &st->cap_jcts, st->n_jcts + 1, sizeof(double)) != 0)
        return FS_ENOMEM;
    size_t slot = 0, n_before = st->n_tenants;
    if (row->tenant >= 0 && tenant_slot(st, row->tenant, &slot) != 0)
        return FS_ENOMEM;
    tenant_acc_t *ta = row->tenant >= 0 ? &st->tacc[slot] : NULL;
    if (ta && ((add_wait && fs_grow((void **)&ta->waits, &ta->cap_waits, ta->wait_n + 1,
                                    sizeof(double)) != 0) ||
               (add_jct && fs_grow((void **)&ta->jcts, &ta->cap_jcts, ta->n_jcts + 1,
                                   sizeof(double)) != 0))) {
        if (st->n_tenants > n_before) {   /* a tenant inserted by this call goes again */
            fs_free(ta->waits);
            fs_free(ta->jcts);
            size_t tail = st->n_tenants - slot - 1;
            memmove(&st->trows[slot], &st->trows[slot + 1], tail * sizeof *st->trows);
            memmove(&st->tacc[slot], &st->tacc[slot + 1], tail * sizeof *st->tacc);
            st->n_tenants--;
        }
        return FS_ENOMEM;
    }

    if (add_wait) {
        if (add_queued && !st->requeued) {   /* the first job queued again */
            memcpy(st->queued, st->waits, st->n_waits * sizeof *st->queued);
            st->requeued = 1;
        }
        if (st->requeued)
            st->queued[st->n_waits] = qv;
        st->waits[st->n_waits++] = row->wait;
        if (row->wait > 0)
            st->waited++;
    }
    if (add_jct)
        st->jcts[st->n_jcts++] = row->end - row->submit;
    if (add_jct && isfinite(row->ettr)) {
        st->ettr_sum += row->ettr;
        st->ettr_n++;
    }
    if (add_wait && row->held_gpu_s > 0 && isfinite(row->sched_goodput) && row->sched_goodput > 0) {
        double useful = row->goodput * row->held_gpu_s;
        st->gp_held += row->held_gpu_s;
        st->gp_span += row->held_gpu_s / row->sched_goodput;
        st->gp_useful += useful;
        st->gp_program += useful * row->program_goodput;
    }
    st->rows++;
    if (row->state >= 0 && row->state <= FS_STATE_WITHDRAWN)
        st->by_state[row->state]++;
    else
        st->bad_state++;
    if (started || row->state == FS_STATE_WITHDRAWN)  /* a withdrawn job was in the system
                                                         until its cancel time */
        st->sojourn_sum += row->end - row->submit;

    if (row->tenant >= 0) {
        fs_tenant_row_t *tr = &st->trows[slot];
        tr->jobs++;
        if (completed)
            tr->jobs_completed++;
        tr->gpu_hours += row->run * (double)row->gpus * ((double)row->gpu_milli / 1000.0) / 3600.0;
        tr->preemptions += row->preemptions;
        tr->preempt_lost_gpu_hours += row->preempt_lost_gpu_s / 3600.0;
        double share = (double)row->gpus * ((double)row->gpu_milli / 1000.0);
        double comp = share * row->compute_s, ck = share * row->ckpt_s,
               su = share * row->startup_s;
        tr->held_gpu_hours += row->held_gpu_s / 3600.0;
        tr->computing_gpu_hours += comp / 3600.0;
        tr->redo_gpu_hours += row->lost_gpu_s / 3600.0;
        tr->ckpt_gpu_hours += ck / 3600.0;
        tr->startup_gpu_hours += su / 3600.0;
        tr->recovering_gpu_hours += (row->held_gpu_s - comp - ck - su) / 3600.0;
        if (add_wait) {
            ta->wait_sum += row->wait;
            ta->queued_sum += isnan(row->queued_s) ? row->wait : row->queued_s;
            ta->waits[ta->wait_n++] = row->wait;
        }
        if (add_jct)
            ta->jcts[ta->n_jcts++] = row->end - row->submit;
    }
    return 0;
}

static double ratio(double num, double den)
{
    return den > 0 ? num / den : NAN;
}

/* Quantile f of sorted data (type 7), NaN when empty. */
static double quantile(const double *sorted, size_t n, double f)
{
    return n ? gsl_stats_quantile_from_sorted_data(sorted, 1, n, f) : NAN;
}

/* Quantile f of unsorted data (type 7, the same arithmetic as
 * gsl_stats_quantile_from_sorted_data) by selection: O(n) instead of a
 * sort; data is reordered.  NaN when empty. */
double fs_stats_quantile_select(double *data, size_t n, double f)
{
    if (n == 0)
        return NAN;
    double index = f * (double)(n - 1);
    size_t lhs = (size_t)index;
    double delta = index - (double)lhs;
    double a = gsl_stats_select(data, 1, n, lhs);
    if (lhs == n - 1)
        return a;
    double b = gsl_stats_select(data, 1, n, lhs + 1);
    return (1 - delta) * a + delta * b;
}

double fs_stats_mean(const double *x, size_t n)
{
    if (n == 0)
        return NAN;
    size_t i = 0;
    while (i < n && x[i] == 0)   /* mean 0: (0 - 0) / (i + 1) adds 0 (-0.0 too) */
        i++;
    long double mean = 0;
    for (; i < n; i++)
        mean += (x[i] - mean) / (i + 1);
    return (double)mean;
}

double fs_stats_sd_m(const double *x, size_t n, double mean)
{
    if (n < 2)
        return NAN;
    size_t i = 0;
    while (i < n && x[i] - mean == 0)   /* delta 0 leaves the variance 0 (not inf - inf) */
        i++;
    long double variance = 0;
    for (; i < n; i++) {
        const long double delta = (x[i] - mean);   /* a double difference, as GSL's */
        variance += (delta * delta - variance) / (i + 1);
    }
    return sqrt((double)variance * ((double)n / (double)(n - 1)));
}

/* The key of a double whose unsigned order is the numeric order. */
static inline uint64_t sort_key(double d)
{
    uint64_t k;
    memcpy(&k, &d, sizeof k);
    return (k >> 63) ? ~k : k ^ UINT64_C(0x8000000000000000);
}

#define RADIX_MIN 512   /* below this, gsl_sort is as fast */

/* fs_stats_sort with scratch: n doubles the caller lends (their contents
 * are lost), or NULL to allocate them. */
static void sort_with(double *x, size_t n, double *scratch)
{
    /* Already in order (the waits of a run where no job waited: all 0)?
     * A descent stops the scan at once in unordered data. */
    size_t i = 1;
    while (i < n && sort_key(x[i - 1]) <= sort_key(x[i]))
        i++;
    if (i >= n)
        return;
    /* Many +0.0 and nothing below it (no sign bit: the waits of a run where
     * few jobs waited)?  The sorted array is the zeros, then the others
     * sorted: only those go through the radix passes and the scratch, which
     * is then 8 bytes per nonzero element instead of per element. */
    size_t zeros = 0, neg = 0;
    for (i = 0; i < n; i++) {
        uint64_t b;
        memcpy(&b, &x[i], sizeof b);
        zeros += b == 0;
        neg |= b >> 63;
    }
    if (!neg && zeros > 0 && zeros < n) {
        size_t k = 0;
        for (i = 0; i < n; i++)
            if (x[i] != 0)   /* no -0.0 here: no sign bit */
                x[k++] = x[i];
        sort_with(x, k, scratch);
        memmove(x + zeros, x, k * sizeof *x);
        memset(x, 0, zeros * sizeof *x);   /* all bits 0: +0.0 */
        return;
    }
    double *own = n >= RADIX_MIN && !scratch ? fs_malloc(n * sizeof *own) : NULL;
    double *tmp = n >= RADIX_MIN ? (scratch ? scratch : own) : NULL;
    if (!tmp) {
        if (n > 1)
            gsl_sort(x, 1, n);
        return;
    }
    /* one counting pass for all eight digits */
    static const size_t R = 256;
    size_t (*count)[256] = fs_calloc(8, sizeof *count);
    if (!count) {
        fs_free(own);
        gsl_sort(x, 1, n);
        return;
    }
    for (i = 0; i < n; i++) {
        uint64_t k = sort_key(x[i]);
        for (int d = 0; d < 8; d++)
            count[d][(k >> (8 * d)) & 0xff]++;
    }
    double *src = x, *dst = tmp;
    for (int d = 0; d < 8; d++) {
        size_t *c = count[d];
        int trivial = 0;
        for (size_t b = 0; b < R; b++)
            if (c[b] == n) {
                trivial = 1;
                break;
            }
        if (trivial)
            continue;   /* every key has the same digit here */
        size_t sum = 0;
        for (size_t b = 0; b < R; b++) {
            size_t t = c[b];
            c[b] = sum;
            sum += t;
        }
        for (i = 0; i < n; i++)
            dst[c[(sort_key(src[i]) >> (8 * d)) & 0xff]++] = src[i];
        double *t = src;
        src = dst;
        dst = t;
    }
    if (src != x)
        memcpy(x, src, n * sizeof *x);
    fs_free(count);
    fs_free(own);
}

void fs_stats_sort(double *x, size_t n)
{
    sort_with(x, n, NULL);
}

int fs_stats_finish(fs_stats_t *st, const fs_run_totals_t *totals, fs_summary_t *out)
{
    if (!st || !totals || !out)
        return FS_EINVAL;
    memset(out, 0, sizeof *out);

    /* the figures the model counts (fs_summary.def rows from totals), and NaN
     * for the cost figures until the runner prices the run */
    fs_summary_from_totals(out, totals);
    out->jobs_completed = st->by_state[FS_STATE_COMPLETED];
    out->jobs_failed = st->by_state[FS_STATE_FAILED];
    out->jobs_unfinished = st->by_state[FS_STATE_RUNNING] + st->by_state[FS_STATE_QUEUED];
    out->jobs_rejected = st->by_state[FS_STATE_REJECTED];
    out->jobs_withdrawn = st->by_state[FS_STATE_WITHDRAWN];
    out->jobs_in_stats = st->n_waits;

    size_t n = st->n_waits;
    double *w = st->waits;
    fs_stats_sort(w, n);
    out->wait_mean = fs_stats_mean(w, n);
    /* gsl_stats_sd would compute the mean again (a division per element) */
    out->wait_sd = fs_stats_sd_m(w, n, out->wait_mean);
    out->wait_p50 = quantile(w, n, 0.50);
    out->wait_p95 = quantile(w, n, 0.95);
    out->wait_p99 = quantile(w, n, 0.99);
    out->wait_max = n ? w[n - 1] : NAN;
    out->wait_prob = n ? (double)st->waited / (double)n : NAN;

    /* The waits are not read again (the tenants keep their own): their
     * array, its pages already touched, is the JCT sort's scratch, which saves
     * 8 bytes per job of fresh memory and its page faults. */
    size_t m = st->n_jcts;
    double *j = st->jcts;
    sort_with(j, m, st->cap_waits >= m ? st->waits : NULL);
    out->jct_mean = fs_stats_mean(j, m);
    out->jct_p50 = quantile(j, m, 0.50);
    out->jct_p95 = quantile(j, m, 0.95);
    out->jct_p99 = quantile(j, m, 0.99);

    out->utilization = ratio(totals->gpu_s_busy_window, totals->gpu_s_capacity_window);
    out->utilization_all = ratio(totals->gpu_s_busy, totals->gpu_s_capacity);
    out->goodput = ratio(totals->gpu_s_useful, totals->gpu_s_capacity);
    out->gpu_hours_capacity = totals->gpu_s_capacity / 3600.0;
    out->gpu_hours_busy = totals->gpu_s_busy / 3600.0;
    out->queue_len_mean = ratio(totals->jobs_queued_integral, totals->end_time);
    out->system_len_mean = ratio(totals->jobs_system_integral, totals->end_time);
    out->arrival_rate = ratio((double)totals->jobs_submitted, totals->end_time);

    /* Little's law over the whole run, L*T = sum of sojourn times, holds
     * exactly only when every submitted job has left the system. */
    int drained = out->jobs_unfinished == 0 && st->bad_state == 0 &&
                  st->rows == totals->jobs_submitted;
    if (drained) {
        double integral = totals->jobs_system_integral;
        out->little_rel_err = fabs(integral - st->sojourn_sum) / fmax(integral, DBL_MIN);
    } else {
        out->little_rel_err = NAN;
    }

    out->ettr_mean = st->ettr_n ? st->ettr_sum / (double)st->ettr_n : NAN;
    out->goodput_scheduling = st->gp_span > 0 ? st->gp_held / st->gp_span : NAN;
    out->goodput_runtime = st->gp_held > 0 ? st->gp_useful / st->gp_held : NAN;
    out->goodput_program = st->gp_useful > 0 ? st->gp_program / st->gp_useful : NAN;
    out->goodput_ml = st->gp_span > 0 ? st->gp_program / st->gp_span : NAN;
    double *q = st->queued;
    if (st->requeued) {
        out->queued_mean = fs_stats_mean(q, n);
        out->queued_p50 = fs_stats_quantile_select(q, n, 0.50);
        out->queued_p95 = fs_stats_quantile_select(q, n, 0.95);
        out->queued_p99 = fs_stats_quantile_select(q, n, 0.99);
    } else {   /* no job was queued again: queued = wait job by job */
        out->queued_mean = out->wait_mean;
        out->queued_p50 = out->wait_p50;
        out->queued_p95 = out->wait_p95;
        out->queued_p99 = out->wait_p99;
    }
    out->availability = ratio(totals->gpu_s_capacity, (double)totals->gpus_total * totals->end_time);

    for (size_t i = 0; i < st->n_tenants; i++) {
        tenant_acc_t *a = &st->tacc[i];
        fs_tenant_row_t *r = &st->trows[i];
        size_t k = a->wait_n, c = a->n_jcts;
        r->wait_mean = k ? a->wait_sum / (double)k : NAN;
        r->queued_mean = k ? a->queued_sum / (double)k : NAN;
        r->wait_p50 = fs_stats_quantile_select(a->waits, k, 0.50);
        r->wait_p95 = fs_stats_quantile_select(a->waits, k, 0.95);
        r->wait_p99 = fs_stats_quantile_select(a->waits, k, 0.99);
        r->jct_mean = fs_stats_mean(a->jcts, c);
        r->jct_p95 = fs_stats_quantile_select(a->jcts, c, 0.95);
    }
    return 0;
}

const fs_tenant_row_t *fs_stats_tenants(const fs_stats_t *st, size_t *n)
{
    *n = st->n_tenants;
    return st->trows;
}

int fs_stats_set_tenant_quota(fs_stats_t *st, size_t i, double borrowed, double lent)
{
    if (!st || i >= st->n_tenants)
        return FS_EINVAL;
    st->trows[i].borrowed_gpu_hours = borrowed;
    st->trows[i].lent_gpu_hours = lent;
    return 0;
}

int fs_stats_set_tenant_quota_res(fs_stats_t *st, size_t i, const double borrowed[3],
                                  const double lent[3])
{
    if (!st || i >= st->n_tenants)
        return FS_EINVAL;
    fs_tenant_row_t *r = &st->trows[i];
    r->borrowed_cpu_core_hours = borrowed[0];
    r->lent_cpu_core_hours = lent[0];
    r->borrowed_memory_gib_hours = borrowed[1];
    r->lent_memory_gib_hours = lent[1];
    r->borrowed_pod_hours = borrowed[2];
    r->lent_pod_hours = lent[2];
    return 0;
}
