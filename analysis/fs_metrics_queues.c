#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "fs_metrics_queues.h"
#include "fs_h5read.h"
#include "../models/fs_kueue.h"
#include "../scenarios/fs_defaults.h"
#include "../scenarios/fs_kueue_yaml.h"
#include "../traces/fs_trace.h"
#include "../scenarios/fs_scenario.h"
#include "../sim/fs_alloc.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    V_RUNNING, V_WAITING, V_KV, V_TTFT, V_TPOT, V_E2E, V_QUEUE, V_PROMPT, V_GEN,
    K_PENDING, K_ADMITTED, K_WAIT, L_PENDING, L_ADMITTED, L_WAIT, C_COST, C_CARBON, N_FAM
};

/* Bucket upper bounds and their "le" label values as each exporter's client
 * library writes them (Python's prometheus_client: "1.0"; Go's: "1"). */
typedef struct buckets { const double *le; const char *const *text; size_t n; } buckets_t;

/* vllm/v1/metrics/loggers.py (PrometheusStatLogger): time to first token */
static const double ttft_le[] = {0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75,
                                 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0};
static const char *const ttft_text[] = {"0.001", "0.005", "0.01", "0.02", "0.04", "0.06", "0.08",
                                        "0.1", "0.25", "0.5", "0.75", "1.0", "2.5", "5.0", "7.5",
                                        "10.0", "20.0", "40.0", "80.0", "160.0", "640.0", "2560.0"};
/* ... time per output token (and inter-token latency) */
static const double tpot_le[] = {0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5,
                                 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0};
static const char *const tpot_text[] = {"0.01", "0.025", "0.05", "0.075", "0.1", "0.15", "0.2",
                                        "0.3", "0.4", "0.5", "0.75", "1.0", "2.5", "5.0", "7.5",
                                        "10.0", "20.0", "40.0", "80.0"};
/* ... request_latency_buckets (end-to-end, queue time) */
static const double lat_le[] = {0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0,
                                30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0};
static const char *const lat_text[] = {"0.3", "0.5", "0.8", "1.0", "1.5", "2.0", "2.5",
                                       "5.0", "10.0", "15.0", "20.0", "30.0", "40.0", "50.0",
                                       "60.0", "120.0", "240.0", "480.0", "960.0", "1920.0",
                                       "7680.0"};
/* kueue pkg/metrics/metrics.go: generateExponentialBuckets(16), 1 then 2.5 x 2^i */
static const double kq_le[] = {1, 2.5, 5, 10, 20, 40, 80, 160, 320, 640, 1280, 2560, 5120,
                               10240, 20480, 40960};
static const char *const kq_text[] = {"1", "2.5", "5", "10", "20", "40", "80", "160", "320",
                                      "640", "1280", "2560", "5120", "10240", "20480", "40960"};

#define BK(a) {a##_le, a##_text, sizeof a##_le / sizeof a##_le[0]}

static const struct {
    const char *name;       /* the series' name (--families); histograms: the family's */
    const char *type, *help;
    buckets_t b;
} fams[N_FAM] = {
    {"vllm:num_requests_running", "gauge", "Number of requests in model execution batches.", {0}},
    {"vllm:num_requests_waiting", "gauge", "Number of requests waiting to be processed.", {0}},
    {"vllm:kv_cache_usage_perc", "gauge", "KV-cache usage. 1 means 100 percent usage.", {0}},
    {"vllm:time_to_first_token_seconds", "histogram",
     "Histogram of time to first token in seconds.", BK(ttft)},
    {"vllm:request_time_per_output_token_seconds", "histogram",
     "Histogram of time_per_output_token_seconds per request.", BK(tpot)},
    {"vllm:e2e_request_latency_seconds", "histogram",
     "Histogram of e2e request latency in seconds.", BK(lat)},
    {"vllm:request_queue_time_seconds", "histogram",
     "Histogram of time spent in WAITING phase for request.", BK(lat)},
    {"vllm:prompt_tokens_total", "counter", "Number of prefill tokens processed.", {0}},
    {"vllm:generation_tokens_total", "counter", "Number of generation tokens processed.", {0}},
    {"kueue_pending_workloads", "gauge",
     "The number of pending workloads, per 'cluster_queue' and 'status'.", {0}},
    {"kueue_admitted_workloads_total", "counter",
     "The total number of admitted workloads per 'cluster_queue'", {0}},
    {"kueue_admission_wait_time_seconds", "histogram",
     "The time between a workload was created or requeued until admission, per 'cluster_queue'",
     BK(kq)},
    /* ... and per LocalQueue (a tenant's: name and namespace the tenant) */
    {"kueue_local_queue_pending_workloads", "gauge",
     "The number of pending workloads, per 'local_queue' and 'status'.", {0}},
    {"kueue_local_queue_admitted_workloads_total", "counter",
     "The total number of admitted workloads per 'local_queue'", {0}},
    {"kueue_local_queue_admission_wait_time_seconds", "histogram",
     "The time between a workload was created or requeued until admission, per 'local_queue'",
     BK(kq)},
    {"fleetsim_cost_dollars_per_hour", "gauge",
     "The pool's cost over the current day of simulated time (capex, energy, colocation, ops, "
     "cloud), in USD per hour.", {0}},
    {"fleetsim_carbon_kg_per_hour", "gauge",
     "The pool's carbon over the current day of simulated time, in kg CO2e per hour (scope: "
     "operational, from its energy; embodied, amortized).", {0}},
};

size_t fs_mqueue_n_families(void)
{
    return N_FAM;
}

const char *fs_mqueue_family_name(size_t i)
{
    return i < N_FAM ? fams[i].name : NULL;
}

/* ---- an export in progress ------------------------------------------------------------- */

typedef struct q {
    fs_msink_t *s;
    fs_msink_info_t in;
    const uint8_t *on;
    size_t base;
    size_t ns;              /* sample instants k_lo..k_hi */
    uint32_t *k;            /* k_lo..k_hi */
    double *v;              /* (buckets + 2) x ns values */
    size_t cap_v;
    struct ev { double t, x; } *ev;
    size_t cap_ev;
    uint64_t *cnt;          /* per bucket */
    size_t cap_cnt;
} q_t;

static int oom(q_t *q)
{
    return fs_error_set(q->in.err, FS_ENOMEM, "%s: out of memory", q->in.results);
}

static int cmp_ev(const void *a, const void *b)
{
    const struct ev *x = a, *y = b;
    return (x->t > y->t) - (x->t < y->t);
}

/* The family's header (text) once, before its first series. */
static int header(q_t *q, size_t f, int *done)
{
    if (*done)
        return 0;
    *done = 1;
    /* a counter's family is named with its _total, as its samples: what the
     * text format's parser (promtool check metrics) reads as one metric and
     * promtool's OpenMetrics backfill takes (the blocks carry no type) */
    return fs_msink_family(q->s, fams[f].name, fams[f].type, fams[f].help);
}

static int series(q_t *q, size_t f, const char *name, const char *const (*lab)[2], size_t nl,
                  size_t i0, size_t i1, const double *v)
{
    /* samples i0..i1 of the instants; NaN values are left out */
    size_t m = 0;
    uint32_t *kk = q->k + i0;
    for (size_t i = i0; i <= i1; i++)
        if (!isnan(v[i]))
            m++;
    if (m == i1 - i0 + 1)
        return fs_msink_series(q->s, q->base + f, name, lab, nl, kk, v + i0, m);
    uint32_t *k2 = fs_malloc((m ? m : 1) * sizeof *k2);
    double *v2 = fs_malloc((m ? m : 1) * sizeof *v2);
    int rc = 0;
    if (!k2 || !v2) {
        rc = oom(q);
    } else {
        m = 0;
        for (size_t i = i0; i <= i1; i++)
            if (!isnan(v[i])) {
                k2[m] = q->k[i];
                v2[m++] = v[i];
            }
        rc = fs_msink_series(q->s, q->base + f, name, lab, nl, k2, v2, m);
    }
    fs_free(k2);
    fs_free(v2);
    return rc;
}

static int need_v(q_t *q, size_t rows)
{
    if (fs_grow((void **)&q->v, &q->cap_v, rows * q->ns, sizeof *q->v))
        return oom(q);
    return 0;
}

/* Events n of q->ev (sorted by time): at each instant i0..i1, how many are
 * at or before it (out[i]). */
static void count_upto(const q_t *q, size_t n, size_t i0, size_t i1, double *out)
{
    size_t j = 0;
    for (size_t i = i0; i <= i1; i++) {
        double t = (double)q->k[i] * q->in.step;
        while (j < n && q->ev[j].t <= t)
            j++;
        out[i] = (double)j;
    }
}

/* A histogram (or, with b == NULL, a counter of the events' values) over
 * q->ev[0..n) sorted by time: cumulative buckets, _sum and _count at each
 * instant i0..i1, written as name_bucket{le}, name_sum, name_count with
 * labels lab (nl of them, and room for le after them). */
static int histogram(q_t *q, size_t f, const char *(*lab)[2], size_t nl, size_t n, size_t i0,
                     size_t i1)
{
    const buckets_t *b = &fams[f].b;
    size_t nb = b->n + 1;   /* + Inf */
    int rc = need_v(q, nb + 2);
    if (rc)
        return rc;
    if (fs_grow((void **)&q->cnt, &q->cap_cnt, nb, sizeof *q->cnt))
        return oom(q);
    memset(q->cnt, 0, nb * sizeof *q->cnt);
    double sum = 0;
    size_t j = 0;
    for (size_t i = i0; i <= i1; i++) {
        double t = (double)q->k[i] * q->in.step;
        for (; j < n && q->ev[j].t <= t; j++) {
            double x = q->ev[j].x;
            size_t at = 0;
            while (at < b->n && x > b->le[at])
                at++;
            q->cnt[at]++;
            sum += x;
        }
        uint64_t cum = 0;
        for (size_t e = 0; e < nb; e++) {
            cum += q->cnt[e];
            q->v[e * q->ns + i] = (double)cum;
        }
        q->v[nb * q->ns + i] = sum;
        q->v[(nb + 1) * q->ns + i] = (double)j;
    }
    char name[128];
    for (size_t e = 0; e < nb && !rc; e++) {
        snprintf(name, sizeof name, "%s_bucket", fams[f].name);
        lab[nl][0] = "le";
        lab[nl][1] = e < b->n ? b->text[e] : "+Inf";
        rc = series(q, f, name, (const char *const (*)[2])lab, nl + 1, i0, i1, q->v + e * q->ns);
    }
    if (!rc) {
        snprintf(name, sizeof name, "%s_sum", fams[f].name);
        rc = series(q, f, name, (const char *const (*)[2])lab, nl, i0, i1, q->v + nb * q->ns);
    }
    if (!rc) {
        snprintf(name, sizeof name, "%s_count", fams[f].name);
        rc = series(q, f, name, (const char *const (*)[2])lab, nl, i0, i1,
                    q->v + (nb + 1) * q->ns);
    }
    return rc;
}

/* A counter: the running sum of the events' values at each instant. */
static int counter(q_t *q, size_t f, const char *const (*lab)[2], size_t nl, size_t n, size_t i0,
                   size_t i1)
{
    int rc = need_v(q, 1);
    if (rc)
        return rc;
    double sum = 0;
    size_t j = 0;
    for (size_t i = i0; i <= i1; i++) {
        double t = (double)q->k[i] * q->in.step;
        for (; j < n && q->ev[j].t <= t; j++)
            sum += q->ev[j].x;
        q->v[i] = sum;
    }
    return series(q, f, fams[f].name, lab, nl, i0, i1, q->v);
}

/* The gauge #{a <= t} - #{b <= t}: events a in q->ev[0..na), b after them. */
static int level(q_t *q, size_t f, const char *const (*lab)[2], size_t nl, size_t na, size_t nb,
                 size_t i0, size_t i1)
{
    int rc = need_v(q, 2);
    if (rc)
        return rc;
    qsort(q->ev, na, sizeof *q->ev, cmp_ev);
    qsort(q->ev + na, nb, sizeof *q->ev, cmp_ev);
    count_upto(q, na, i0, i1, q->v);
    struct ev *save = q->ev;
    q->ev += na;
    count_upto(q, nb, i0, i1, q->v + q->ns);
    q->ev = save;
    for (size_t i = i0; i <= i1; i++)
        q->v[i] -= q->v[q->ns + i];
    return series(q, f, fams[f].name, lab, nl, i0, i1, q->v);
}

static int need_ev(q_t *q, size_t n)
{
    if (fs_grow((void **)&q->ev, &q->cap_ev, n ? n : 1, sizeof *q->ev))
        return oom(q);
    return 0;
}

/* The sample instants' indices of [t0, t1] (clipped to the export's). */
static int span(const q_t *q, double t0, double t1, size_t *i0, size_t *i1)
{
    double a = fmax(ceil(t0 / q->in.step), q->in.k_lo), b = fmin(ceil(t1 / q->in.step), q->in.k_hi);
    if (!(b >= a))
        return 0;
    *i0 = (size_t)(a - q->in.k_lo);
    *i1 = (size_t)(b - q->in.k_lo);
    return 1;
}

static int read_cols(q_t *q, const char *table, size_t n, const char *const *cols, double **out,
                     size_t nc)
{
    for (size_t c = 0; c < nc; c++) {
        if (!(out[c] = fs_malloc((n ? n : 1) * sizeof **out)))
            return oom(q);
        int rc = n ? fs_h5read_f64(q->in.f, table, cols[c], out[c], q->in.err) : 0;
        if (rc)
            return rc;
    }
    return 0;
}

/* ---- vLLM, per service replica, from /requests ---------------------------------------- */

enum { R_SVC, R_REP, R_ARR, R_ADM, R_TTFT, R_TPOT, R_END, R_IN, R_OUT, R_N };

typedef struct rq { double *c[R_N]; size_t n, *ord; } rq_t;

static int cmp_rep(const void *a, const void *b, const double *svc, const double *rep)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    if (svc[x] != svc[y])
        return svc[x] < svc[y] ? -1 : 1;
    if (rep[x] != rep[y])
        return rep[x] < rep[y] ? -1 : 1;
    return (x > y) - (x < y);
}

/* a stable merge sort of the row order by (service, replica) */
static void sort_rows(size_t *o, size_t *tmp, size_t n, const double *svc, const double *rep)
{
    if (n < 2)
        return;
    size_t h = n / 2;
    sort_rows(o, tmp, h, svc, rep);
    sort_rows(o + h, tmp, n - h, svc, rep);
    size_t i = 0, j = h, m = 0;
    while (i < h && j < n)
        tmp[m++] = cmp_rep(&o[i], &o[j], svc, rep) <= 0 ? o[i++] : o[j++];
    while (i < h)
        tmp[m++] = o[i++];
    while (j < n)
        tmp[m++] = o[j++];
    memcpy(o, tmp, n * sizeof *o);
}

static int vllm_family(q_t *q, size_t f, const rq_t *r)
{
    int rc = 0, hdr = 0;
    const double *const *c = (const double *const *)r->c;
    for (size_t g0 = 0; g0 < r->n && !rc;) {
        size_t g1 = g0;
        size_t first = r->ord[g0];
        while (g1 < r->n && c[R_SVC][r->ord[g1]] == c[R_SVC][first] &&
               c[R_REP][r->ord[g1]] == c[R_REP][first])
            g1++;
        double t0 = INFINITY, t1 = -INFINITY;
        for (size_t i = g0; i < g1; i++) {
            t0 = fmin(t0, c[R_ARR][r->ord[i]]);
            t1 = fmax(t1, c[R_END][r->ord[i]]);
        }
        size_t i0, i1;
        if (!span(q, t0, t1, &i0, &i1)) {
            g0 = g1;
            continue;
        }
        const char *svc = fs_msink_service(q->s, (uint32_t)c[R_SVC][first]);
        char pod[96], inst[112];
        snprintf(pod, sizeof pod, "%s-%.0f", svc, c[R_REP][first]);
        snprintf(inst, sizeof inst, "%s:8000", pod);
        const char *lab[8][2] = {{"model_name", svc}, {"engine", "0"}, {"namespace", svc},
                                 {"pod", pod}, {"instance", inst}, {"job", "vllm"}};
        size_t nl = 6, m = g1 - g0;
        if ((rc = need_ev(q, 2 * m)) || (rc = header(q, f, &hdr)))
            break;
        size_t n = 0;
        for (size_t i = g0; i < g1; i++) {
            size_t w = r->ord[i];
            double arr = c[R_ARR][w], adm = c[R_ADM][w], end = c[R_END][w];
            double ttft = c[R_TTFT][w], tpot = c[R_TPOT][w];
            switch (f) {
            case V_RUNNING: /* admitted .. end: entries, then exits after them */
                q->ev[n] = (struct ev){adm, 1};
                q->ev[m + n++] = (struct ev){end, 1};
                break;
            case V_WAITING:
                q->ev[n] = (struct ev){arr, 1};
                q->ev[m + n++] = (struct ev){adm, 1};
                break;
            case V_TTFT:    /* observed at the first token */
                q->ev[n++] = (struct ev){arr + ttft, ttft};
                break;
            case V_TPOT:    /* at the end, requests of 2+ tokens */
                if (!isnan(tpot))
                    q->ev[n++] = (struct ev){end, tpot};
                break;
            case V_E2E:
                q->ev[n++] = (struct ev){end, end - arr};
                break;
            case V_QUEUE:
                q->ev[n++] = (struct ev){end, adm - arr};
                break;
            case V_PROMPT:  /* the prompt is processed by the first token */
                q->ev[n++] = (struct ev){arr + ttft, c[R_IN][w]};
                break;
            default:        /* V_GEN */
                q->ev[n++] = (struct ev){end, c[R_OUT][w]};
                break;
            }
        }
        if (f == V_RUNNING || f == V_WAITING) {
            memmove(q->ev + n, q->ev + m, n * sizeof *q->ev);
            rc = level(q, f, (const char *const (*)[2])lab, nl, n, n, i0, i1);
        } else {
            qsort(q->ev, n, sizeof *q->ev, cmp_ev);
            rc = fams[f].b.n ? histogram(q, f, lab, nl, n, i0, i1)
                             : counter(q, f, (const char *const (*)[2])lab, nl, n, i0, i1);
        }
        g0 = g1;
    }
    return rc;
}

/* vllm:kv_cache_usage_perc per service: the /service_buckets row holding
 * the instant (its time-average over the service's engines). */
static int vllm_kv(q_t *q)
{
    size_t n = 0;
    int rc = fs_h5read_rows(q->in.f, "service_buckets", &n, q->in.err), hdr = 0;
    if (rc || n == 0)
        return rc;
    static const char *const cols[] = {"service", "start", "end", "kv_usage"};
    double *c[4] = {0};
    if (!(rc = read_cols(q, "service_buckets", n, cols, c, 4)) && !(rc = need_v(q, 1))) {
        for (size_t r0 = 0; r0 < n && !rc;) {
            size_t r1 = r0;
            while (r1 < n && c[0][r1] == c[0][r0])
                r1++;
            size_t i0, i1, any = 0;
            if (span(q, c[1][r0], c[2][r1 - 1], &i0, &i1)) {
                size_t r = r0;
                for (size_t i = i0; i <= i1; i++) {
                    double t = (double)q->k[i] * q->in.step;
                    while (r + 1 < r1 && c[2][r] <= t)
                        r++;
                    q->v[i] = c[1][r] <= t && t <= c[2][r] ? c[3][r] : NAN;
                    any |= !isnan(q->v[i]);
                }
                if (any) {
                    const char *svc = fs_msink_service(q->s, (uint32_t)c[0][r0]);
                    const char *lab[3][2] = {{"model_name", svc}, {"namespace", svc},
                                             {"job", "vllm"}};
                    if (!(rc = header(q, V_KV, &hdr)))
                        rc = series(q, V_KV, fams[V_KV].name, (const char *const (*)[2])lab, 3,
                                    i0, i1, q->v);
                }
            }
            r0 = r1;
        }
    }
    for (size_t i = 0; i < 4; i++)
        fs_free(c[i]);
    return rc;
}

static int vllm(q_t *q)
{
    int any = 0, rc = 0;
    for (size_t f = V_RUNNING; f <= V_GEN; f++)
        any |= q->on[q->base + f];
    if (!any)
        return 0;
    static const char *const cols[R_N] = {"service", "replica", "arrival", "admitted", "ttft",
                                          "tpot", "end", "input", "output"};
    rq_t r = {0};
    size_t *tmp = NULL;
    if (fs_h5read_has(q->in.f, "requests") &&
        !(rc = fs_h5read_rows(q->in.f, "requests", &r.n, q->in.err)) && r.n &&
        !(rc = read_cols(q, "requests", r.n, cols, r.c, R_N))) {
        r.ord = fs_malloc(r.n * sizeof *r.ord);
        tmp = fs_malloc(r.n * sizeof *tmp);
        if (!r.ord || !tmp) {
            rc = oom(q);
        } else {
            for (size_t i = 0; i < r.n; i++)
                r.ord[i] = i;
            sort_rows(r.ord, tmp, r.n, r.c[R_SVC], r.c[R_REP]);
        }
    }
    for (size_t f = V_RUNNING; f <= V_GEN && !rc; f++) {
        if (!q->on[q->base + f])
            continue;
        if (f == V_KV)
            rc = fs_h5read_has(q->in.f, "service_buckets") ? vllm_kv(q) : 0;
        else if (r.n && r.ord)
            rc = vllm_family(q, f, &r);
    }
    for (size_t i = 0; i < R_N; i++)
        fs_free(r.c[i]);
    fs_free(r.ord);
    fs_free(tmp);
    return rc;
}

/* ---- Kueue, per ClusterQueue, from /jobs ----------------------------------------------- */

/* A run under scheduler.queue kueue: its ClusterQueues, from the scenario
 * stored in the file (its manifests read again; *cfg loaded, *kueue_run 1).
 * Other runs: *kueue_run 0. */
static int run_cqs(q_t *q, fs_config_t *cfg, int *kueue_run)
{
    *kueue_run = 0;
    char *text = NULL;
    int rc = fs_h5read_attr_str(q->in.f, "scenario", &text, q->in.err);
    if (rc)
        return rc;
    /* the canonical dump (fs_scenario_dump) writes the key on its own line:
     * any other policy's file is not parsed again */
    if (!strstr(text, "\nscheduler:\n  queue: kueue\n")) {
        fs_free(text);
        return 0;
    }
    fs_error_t e;
    rc = fs_scenario_load_string(q->in.results, text, NULL, 0, cfg, &e);
    fs_free(text);
    if (rc == FS_ENOMEM)
        return oom(q);
    if (rc)
        return fs_error_set(q->in.err, FS_EINVAL, "%s: the run's Kueue ClusterQueues cannot be "
                            "read from its stored scenario (%s); --families without "
                            "the kueue_ families (ClusterQueues and LocalQueues) writes the "
                            "rest",
                            q->in.results, e.msg);
    if (cfg->scheduler.queue != FS_QUEUE_KUEUE) {
        fs_config_release(cfg);
        return 0;
    }
    *kueue_run = 1;
    return 0;
}

/* (id, priority) of a trace's jobs, by id */
typedef struct jprio { double id; int32_t prio; } jprio_t;

static int cmp_jprio(const void *a, const void *b)
{
    const jprio_t *x = a, *y = b;
    return x->id < y->id ? -1 : x->id > y->id;
}

/* Each /jobs row's WorkloadPriorityClass, as slot[i]: 1 + its index in
 * wpc (the first class whose value is the job's priority), 0 for none.
 * The job's priority is the run's: 0 for a synthetic workload's jobs
 * (they have none), a trace's `priority` as the trace gives it (read again,
 * by job id; a job not found there has none). */
static int priority_slots(q_t *q, const fs_config_t *cfg, const fs_kueue_wpc_t *wpc,
                          size_t n_wpc, size_t n, double *slot)
{
    for (size_t i = 0; i < n; i++)
        slot[i] = 0;
    if (!n_wpc)
        return 0;
    int32_t zero = 0;
    size_t z = 0;
    while (z < n_wpc && wpc[z].value != zero)
        z++;
    if (cfg->workload.kind != FS_WORKLOAD_TRACE) {
        for (size_t i = 0; i < n; i++)
            slot[i] = z < n_wpc ? (double)(z + 1) : 0;
        return 0;
    }
    double *id = fs_malloc(n * sizeof *id);
    enum { BATCH = 4096 };
    fs_job_t *buf = fs_malloc(BATCH * sizeof *buf);
    jprio_t *jp = NULL;
    size_t nj = 0, cap = 0;
    fs_source_t *src = NULL;
    fs_error_t e;
    int rc = !id || !buf ? oom(q) : fs_h5read_f64(q->in.f, "jobs", "id", id, q->in.err);
    if (!rc && (rc = fs_trace_open(cfg->workload.trace.format ? cfg->workload.trace.format
                                                              : "native",
                                   cfg->workload.trace.path, &cfg->workload.trace.opts, &src,
                                   &e)))
        rc = rc == FS_ENOMEM ? oom(q)
                             : fs_error_set(q->in.err, FS_EINVAL, "%s: the run's trace cannot be "
                                            "read again for its jobs' priorities (%s); --families "
                                            "without the kueue_ admitted and wait families "
                                            "writes the rest", q->in.results, e.msg);
    while (!rc) {
        size_t got = 0;
        if ((rc = fs_source_next(src, buf, BATCH, &got, &e))) {
            rc = fs_error_set(q->in.err, rc == FS_ENOMEM ? FS_ENOMEM : FS_EINVAL, "%s: %s",
                              q->in.results, e.msg);
            break;
        }
        if (!got)
            break;
        if (fs_grow((void **)&jp, &cap, nj + got, sizeof *jp)) {
            rc = oom(q);
            break;
        }
        for (size_t i = 0; i < got; i++)
            if (!(buf[i].flags & FS_JOB_SERVICE))
                jp[nj++] = (jprio_t){(double)buf[i].id, buf[i].priority};
    }
    if (!rc) {
        if (nj)
            qsort(jp, nj, sizeof *jp, cmp_jprio);
        for (size_t i = 0; i < n; i++) {
            jprio_t key = {id[i], 0};
            const jprio_t *hit = nj ? bsearch(&key, jp, nj, sizeof *jp, cmp_jprio) : NULL;
            for (size_t w = 0; hit && w < n_wpc && !slot[i]; w++)
                if (wpc[w].value == hit->prio)
                    slot[i] = (double)(w + 1);
        }
    }
    if (src)
        fs_source_destroy(src);
    fs_free(jp);
    fs_free(buf);
    fs_free(id);
    return rc;
}

/* The LocalQueue of a manifest that tenant `tenant` (its jobs going to
 * ClusterQueue `cq`) stands for: the scenario loader makes a LocalQueue's
 * name and namespace tenants of its ClusterQueue (scenarios/fs_kueue_yaml.h),
 * so the first LocalQueue of that CQ named like the tenant, else the first
 * in the tenant's namespace; -1: none. */
static int32_t lq_of(const fs_kueue_lq_t *l, size_t n, const char *tenant, const char *cq)
{
    for (int by_ns = 0; tenant && cq && by_ns < 2; by_ns++)
        for (size_t i = 0; i < n; i++)
            if (strcmp(l[i].cq, cq) == 0 && strcmp(by_ns ? l[i].ns : l[i].name, tenant) == 0)
                return (int32_t)i;
    return -1;
}

/* Per ClusterQueue (kueue_*: the run's own CQs under scheduler.queue
 * kueue; under any other policy a CQ per tenant, named after it) and per
 * LocalQueue (kueue_local_queue_*: under scheduler.queue kueue the
 * manifest's LocalQueue a tenant maps to, with its name and namespace;
 * else, and for a tenant no manifest LocalQueue stands for, one per
 * tenant, name and namespace the tenant), from /jobs.  Labels as Kueue
 * v0.19 writes them (pkg/metrics/metrics.go), priority_class on the
 * admitted and wait families. */
static int kueue(q_t *q)
{
    int any = 0, rc = 0;
    for (size_t f = K_PENDING; f <= L_WAIT; f++)
        any |= q->on[q->base + f];
    size_t n = 0;
    if (!any || !fs_h5read_has(q->in.f, "jobs") ||
        (rc = fs_h5read_rows(q->in.f, "jobs", &n, q->in.err)) || n == 0)
        return rc;
    static const char *const cols[] = {"tenant", "submit", "start", "end"};
    double *c[4] = {0};
    size_t *ord = NULL, *tmp = NULL;
    double *zero = NULL, *cqk = NULL;   /* per job: its CQ (index in the config; -1 none) */
    double *lqk = NULL;     /* per job: its LocalQueue series: a manifest LocalQueue's
                               index, or n_lq + 1 + its tenant (-1: none; named after
                               the tenant) */
    int32_t *t_lq = NULL;   /* per tenant index + 1: its manifest LocalQueue (-2 not yet) */
    size_t n_t = 0;
    const double *sorted_by = NULL;     /* ord: the jobs in the order of this key */
    fs_config_t cfg;
    void *probe = NULL;   /* the run's Kueue set-up: its tenant -> CQ rule (fs_kueue_cq_of) */
    int mapped = 0;
    fs_kueue_objs_t ob = {0};   /* the manifest's LocalQueues and WorkloadPriorityClasses */
    double *pcs = NULL;     /* per job: its priority class (1 + index in ob.wpc; 0 none) */
    double *cqpk = NULL, *lqpk = NULL;  /* per job: its CQ's, LocalQueue's key x classes + class */
    if (!(rc = read_cols(q, "jobs", n, cols, c, 4))) {
        ord = fs_malloc(n * sizeof *ord);
        tmp = fs_malloc(n * sizeof *tmp);
        zero = fs_calloc(n, sizeof *zero);
        cqk = fs_malloc(n * sizeof *cqk);
        lqk = fs_malloc(n * sizeof *lqk);
        pcs = fs_malloc(n * sizeof *pcs);
        cqpk = fs_malloc(n * sizeof *cqpk);
        lqpk = fs_malloc(n * sizeof *lqpk);
        if (!ord || !tmp || !zero || !cqk || !lqk || !pcs || !cqpk || !lqpk)
            rc = oom(q);
    }
    if (!rc)
        rc = run_cqs(q, &cfg, &mapped);
    if (!rc && mapped) {
        fs_error_t e;
        if ((rc = fs_kueue_probe_create(&cfg, &probe, &e)))
            rc = rc == FS_ENOMEM ? oom(q)
                                 : fs_error_set(q->in.err, FS_EINVAL, "%s: the run's Kueue set-up "
                                                "cannot be built again (%s)", q->in.results, e.msg);
    }
    fs_error_t e_lq;
    if (!rc && mapped && cfg.scheduler.kueue.manifests &&
        (rc = fs_kueue_manifest_objs(cfg.scheduler.kueue.manifests, &ob, &e_lq)))
        rc = rc == FS_ENOMEM ? oom(q)
                             : fs_error_set(q->in.err, FS_EINVAL, "%s: the run's Kueue LocalQueues "
                                            "cannot be read from its manifest (%s)", q->in.results,
                                            e_lq.msg);
    const fs_kueue_lq_t *lqs = ob.lq;
    size_t n_lq = ob.n_lq;
    int any_pc = 0;     /* the admitted or wait families (priority_class) asked for */
    for (size_t f = K_ADMITTED; f <= L_WAIT; f++)
        any_pc |= f != L_PENDING && q->on[q->base + f];
    if (!rc && any_pc)
        rc = priority_slots(q, &cfg, ob.wpc, ob.n_wpc, n, pcs);
    double max_t = -1;
    for (size_t i = 0; i < n && !rc; i++)
        max_t = fmax(max_t, c[0][i]);
    n_t = (size_t)(max_t + 2);
    if (!rc && !(t_lq = fs_malloc(n_t * sizeof *t_lq)))
        rc = oom(q);
    for (size_t i = 0; i < n_t && !rc; i++)
        t_lq[i] = -2;
    for (size_t i = 0; i < n && !rc; i++) {
        int32_t t = (int32_t)c[0][i];
        const char *tn = t < 0 ? NULL : fs_msink_tenant(q->s, t);
        int32_t cq = mapped ? fs_kueue_cq_of(probe, tn) : -1;
        cqk[i] = !mapped ? c[0][i] : (double)cq;
        int32_t *lq = &t_lq[t < 0 ? 0 : t + 1];
        if (*lq == -2)
            *lq = lq_of(lqs, n_lq, tn, cq >= 0 ? cfg.scheduler.kueue.cqs[cq].name : NULL);
        lqk[i] = *lq >= 0 ? (double)*lq : (double)n_lq + 1 + c[0][i];   /* tenant >= -1 */
        double np = (double)ob.n_wpc + 1;
        cqpk[i] = cqk[i] * np + (any_pc ? pcs[i] : 0);
        lqpk[i] = lqk[i] * np + (any_pc ? pcs[i] : 0);
    }
    size_t i0, i1;
    int whole = span(q, 0, q->in.end_time, &i0, &i1);
    for (size_t f = K_PENDING; f <= L_WAIT && !rc && whole; f++) {
        if (!q->on[q->base + f])
            continue;
        int local = f >= L_PENDING;     /* per LocalQueue: labels name, namespace */
        size_t kind = local ? f - L_PENDING + K_PENDING : f;
        /* the series' jobs: a LocalQueue's or a CQ's, and (admitted, wait) of one priority class */
        const double *key = kind == K_PENDING ? (local ? lqk : cqk) : (local ? lqpk : cqpk);
        if (key != sorted_by) {
            for (size_t i = 0; i < n; i++)
                ord[i] = i;
            sort_rows(ord, tmp, n, key, zero);
            sorted_by = key;
        }
        int hdr = 0;
        for (size_t g0 = 0, g1; g0 < n && !rc; g0 = g1) {
            g1 = g0;
            while (g1 < n && key[ord[g1]] == key[ord[g0]])
                g1++;
            if (!local && mapped && key[ord[g0]] < 0)
                continue;   /* in no ClusterQueue */
            double kv = key[ord[g0]], np = (double)ob.n_wpc + 1, pc = 0;
            if (kind != K_PENDING) {    /* queue key x classes + class */
                double base = floor(kv / np);
                pc = kv - base * np;
                kv = base;
            }
            const char *cq = NULL, *lq_name = NULL, *lq_ns = NULL;
            if (!local)
                cq = mapped ? cfg.scheduler.kueue.cqs[(size_t)kv].name
                            : fs_msink_tenant(q->s, (int32_t)kv);
            else if (kv < (double)n_lq)
                lq_name = lqs[(size_t)kv].name, lq_ns = lqs[(size_t)kv].ns;
            else
                lq_name = lq_ns = fs_msink_tenant(q->s, (int32_t)(kv - (double)n_lq) - 1);
            /* Kueue's label order; priority_class (v0.14+) on the admitted and wait
             * families: the workload's WorkloadPriorityClass; Kueue's "" for none is
             * no label once Prometheus ingests it, and is not written */
            const char *l[8][2];
            size_t nl = 0;
            if (local) {
                l[nl][0] = "name", l[nl++][1] = lq_name;
                l[nl][0] = "namespace", l[nl++][1] = lq_ns;
            } else {
                l[nl][0] = "cluster_queue", l[nl++][1] = cq;
            }
            if (kind != K_PENDING && pc > 0)
                l[nl][0] = "priority_class", l[nl++][1] = ob.wpc[(size_t)pc - 1].name;
            l[nl][0] = "replica_role", l[nl++][1] = "leader";
            l[nl][0] = "job", l[nl++][1] = "kueue";
            l[nl][0] = "status", l[nl][1] = "active";   /* pending only: nl + 1 */
            size_t m = g1 - g0, ne = 0, nx = 0;
            if ((rc = need_ev(q, 2 * m)) || (rc = header(q, f, &hdr)))
                break;
            for (size_t i = g0; i < g1; i++) {
                double sub = c[1][ord[i]], st = c[2][ord[i]], end = c[3][ord[i]];
                if (kind == K_PENDING) {    /* pending from submission to admission (or its end) */
                    q->ev[ne++] = (struct ev){sub, 1};
                    double out = !isnan(st) ? st : end;
                    if (!isnan(out))
                        q->ev[m + nx++] = (struct ev){out, 1};
                } else if (!isnan(st)) {
                    q->ev[ne++] = (struct ev){st, kind == K_ADMITTED ? 1 : st - sub};
                }
            }
            if (kind == K_PENDING) {
                memmove(q->ev + ne, q->ev + m, nx * sizeof *q->ev);
                rc = level(q, f, (const char *const (*)[2])l, nl + 1, ne, nx, i0, i1);
            } else {
                qsort(q->ev, ne, sizeof *q->ev, cmp_ev);
                rc = kind == K_WAIT ? histogram(q, f, l, nl, ne, i0, i1)
                                    : counter(q, f, (const char *const (*)[2])l, nl, ne, i0, i1);
            }
        }
    }
    if (probe)
        fs_kueue_probe_destroy(probe);
    if (mapped)
        fs_config_release(&cfg);
    fs_kueue_objs_free(&ob);
    for (size_t i = 0; i < 4; i++)
        fs_free(c[i]);
    fs_free(ord);
    fs_free(tmp);
    fs_free(zero);
    fs_free(cqk);
    fs_free(lqk);
    fs_free(pcs);
    fs_free(cqpk);
    fs_free(lqpk);
    fs_free(t_lq);
    return rc;
}

/* ---- cost and carbon rates per pool, from /cost ----------------------------------------- */

static int cost(q_t *q)
{
    int rc = 0;
    size_t n = 0;
    if (!(q->on[q->base + C_COST] || q->on[q->base + C_CARBON]) || !fs_h5read_has(q->in.f, "cost") ||
        (rc = fs_h5read_rows(q->in.f, "cost", &n, q->in.err)) || n == 0)
        return rc;
    static const char *const cols[] = {"day", "pool", "total", "carbon_kg", "carbon_embodied_kg"};
    double *c[5] = {0};
    char **pool = NULL;
    size_t np = 0;
    if (!(rc = read_cols(q, "cost", n, cols, c, 5)) &&
        !(rc = fs_h5read_rows(q->in.f, "pools", &np, q->in.err))) {
        if (!(pool = fs_calloc(np + 1, sizeof *pool)))
            rc = oom(q);
        else if (np)
            rc = fs_h5read_str(q->in.f, "pools", "name", pool, q->in.err);
    }
    size_t i0, i1;
    if (!rc && (rc = need_v(q, 1)) == 0 && span(q, 0, q->in.end_time, &i0, &i1)) {
        for (size_t f = C_COST; f <= C_CARBON && !rc; f++) {
            if (!q->on[q->base + f])
                continue;
            int hdr = 0;
            for (size_t p = 0; p < np && !rc; p++)
                for (size_t sc = 0; sc < (f == C_COST ? 1u : 2u) && !rc; sc++) {
                    const double *x = f == C_COST ? c[2] : c[3 + sc];
                    int any = 0;
                    size_t r = 0;   /* rows are in day order */
                    for (size_t i = i0; i <= i1; i++) {
                        double t = (double)q->k[i] * q->in.step, day = floor(t / 86400);
                        if (t >= q->in.end_time && day > 0 && t == day * 86400)
                            day -= 1;   /* the run's last instant closes the day before */
                        while (r < n && (c[0][r] < day || (c[0][r] == day && c[1][r] < (double)p)))
                            r++;
                        q->v[i] = NAN;
                        if (r < n && c[0][r] == day && c[1][r] == (double)p) {
                            double len = fmin(86400, q->in.end_time - day * 86400);
                            q->v[i] = len > 0 ? x[r] / (len / 3600) : NAN;
                            any |= len > 0;
                        }
                    }
                    if (!any)
                        continue;
                    const char *lab[3][2] = {{"pool", pool[p]}, {"job", "fleetsim"},
                                             {"scope", sc ? "embodied" : "operational"}};
                    if (!(rc = header(q, f, &hdr)))
                        rc = series(q, f, fams[f].name, (const char *const (*)[2])lab,
                                    f == C_COST ? 2 : 3, i0, i1, q->v);
                }
        }
    }
    for (size_t i = 0; i < 5; i++)
        fs_free(c[i]);
    if (pool)
        fs_h5read_free_strings(pool, np);
    return rc;
}

int fs_mqueue_emit(fs_msink_t *s, const uint8_t *fam_on, size_t fam_base)
{
    q_t q = {.s = s, .on = fam_on, .base = fam_base};
    fs_msink_info(s, &q.in);
    q.ns = (size_t)(q.in.k_hi - q.in.k_lo) + 1;
    if (!(q.k = fs_malloc(q.ns * sizeof *q.k)))
        return oom(&q);
    for (size_t i = 0; i < q.ns; i++)
        q.k[i] = q.in.k_lo + (uint32_t)i;
    int rc = vllm(&q);
    if (!rc)
        rc = kueue(&q);
    if (!rc)
        rc = cost(&q);
    fs_free(q.k);
    fs_free(q.v);
    fs_free(q.ev);
    fs_free(q.cnt);
    return rc;
}
