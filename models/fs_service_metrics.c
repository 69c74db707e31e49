/*
 * fs_service_metrics: the services' figures (fs_service_int.h): each
 * bucket's row (percentiles of its completions, or of its fluid
 * components), the run's log-spaced histograms, and each service's row at
 * the end.
 */
#include "fs_service_int.h"

#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int fs_svmet_push_d(double **v, size_t *n, size_t *cap, double x)
{
    if (fs_grow((void **)v, cap, *n + 1, sizeof **v))
        return FS_ENOMEM;
    (*v)[(*n)++] = x;
    return 0;
}


/* Log-spaced histogram for the whole-run percentiles: 1e-4 s .. 1e5 s,
 * 2,000 bins a decade (0.12% wide). */
enum { HIST_DEC = 9, HIST_PER = 2000 };
#define HIST_LO (-4.0)  /* log10 of the first range */
gsl_histogram *fs_svmet_loghist(void)
{
    enum { DEC = HIST_DEC, PER = HIST_PER };
    gsl_histogram *h = gsl_histogram_alloc(DEC * PER);    /* bins not zeroed */
    if (!h)
        return NULL;
    gsl_histogram_reset(h);
    double *r = h->range;
    for (size_t i = 0; i <= DEC * PER; i++)
        r[i] = pow(10.0, HIST_LO + (double)i / PER);
    return h;
}

/* log10(x) within 1e-4 for a normal x > 0, without libm: x = m 2^e with m
 * in [1, 2) and ln m = 2 atanh((m-1)/(m+1)) to its third term (error below
 * 2 (1/3)^7 / 7).  It only says where hist_bin starts looking. */
static double log10_est(double x)
{
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    int e = (int)((u >> 52) & 0x7ff) - 1023;
    u = (u & 0x000fffffffffffffULL) | 0x3ff0000000000000ULL;
    double m;
    memcpy(&m, &u, sizeof m);
    double s = (m - 1) / (m + 1), s2 = s * s;
    double ln = 2 * s * (1 + s2 * (1.0 / 3 + s2 * 0.2));
    return (e * 0.69314718055994531 + ln) * 0.43429448190325183;
}

/* The bin of x in a log-spaced histogram (fs_svmet_loghist): the one with
 * range[i] <= x < range[i+1], or an end bin.  The estimate from log10_est
 * is at most a fraction of a bin off; the comparisons with the ranges fix
 * it, so the bin is the same as gsl_histogram_accumulate's. */
static size_t hist_bin(const gsl_histogram *h, double x)
{
    const double *r = h->range;
    size_t n = h->n, i;
    if (!(x > r[0]))
        return 0;
    if (!(x < r[n]))
        return n - 1;
    double f = (log10_est(x) - HIST_LO) * HIST_PER;
    i = f <= 0 ? 0 : f >= (double)n ? n - 1 : (size_t)f;
    while (i > 0 && x < r[i])
        i--;
    while (i + 1 < n && x >= r[i + 1])
        i++;
    return i;
}

void fs_svmet_hist_add(gsl_histogram *h, double x, double w)
{
    h->bin[hist_bin(h, x)] += w;
}

static double hist_quantile(const gsl_histogram *h, double q)
{
    double tot = gsl_histogram_sum(h);
    if (!(tot > 0))
        return NAN;
    double want = q * tot, cum = 0;
    for (size_t i = 0; i < h->n; i++) {
        double b = h->bin[i];
        if (cum + b >= want && b > 0) {
            double f = (want - cum) / b;
            return h->range[i] + f * (h->range[i + 1] - h->range[i]);
        }
        cum += b;
    }
    return h->range[h->n];
}


/* ---- buckets ------------------------------------------------------------------------ */

/* A mixture of fluid components at x: its CDF times its weight (summed in
 * the components' order: the bisection's predicate) and, if dens, its
 * density times its weight. */
static double comp_cdf(const comp_t *c, size_t n, double x, double *dens)
{
    double f = 0, d = 0;
    for (size_t i = 0; i < n; i++) {
        const comp_t *k = &c[i];
        double p;
        if (k->theta >= 0) {
            double e = k->theta > 0 && !(x < k->a) ? exp(-(x - k->a) / k->theta) : 0;
            p = x < k->a ? 0 : 1 - k->pw * e;
            if (k->theta > 0)
                d += k->w * k->pw * e / k->theta;
        } else {
            p = x >= k->b ? 1 : x < k->a ? 0 : (x - k->a) / (k->b - k->a);
            if (x >= k->a && x < k->b)
                d += k->w / (k->b - k->a);
        }
        f += k->w * p;
    }
    if (dens)
        *dens = d;
    return f;
}

/* The q-quantile of a mixture of fluid components: a bisection on the CDF
 * from [0, 1.01 x the components' top], to its fixed point (where a step
 * changes neither end).  The predicate F(x)/tot >= q is monotone in x, so
 * its value is known without the sum wherever x is at or below a point L
 * where it fails, or at or above a point H where it holds.  A safeguarded
 * Newton iteration (about ten sums) first finds such L and H within about
 * 1e-13 of each other; the bisection then sums only between them (about
 * fifteen steps of its fifty-odd) and ends where it always did. */
double fs_svmet_comp_quantile(const comp_t *c, size_t n, double q)
{
    double tot = 0, top = 0;
    for (size_t i = 0; i < n; i++) {
        tot += c[i].w;
        double t = c[i].theta >= 0 ? c[i].a + 50 * c[i].theta : c[i].b;
        if (t > top)
            top = t;
    }
    if (!(tot > 0))
        return NAN;
    top = top * 1.01 + 1e-9;
    /* the bracket: pred(L) false (L = 0 is never summed), pred(H) true */
    double L = 0, H = top, x = 0.5 * top;
    for (int it = 0; it < 60 && H - L > 1e-13 * H; it++) {
        double dens, f = comp_cdf(c, n, x, &dens), g = f - q * tot;
        if (f / tot >= q)
            H = x;
        else
            L = x;
        double nx = dens > 0 ? x - g / dens : NAN;
        double step = fabs(nx - x);
        if (nx > L && nx < H && step > 1e-14 * x) {
            /* near the root, straddle it so that both ends move */
            x = step < 1e-9 * x ? nx + (g > 0 ? -2 : 2) * step : nx;
            if (!(x > L && x < H))
                x = nx;
        } else if (nx > L && nx < H) {
            double d = 1e-13 * x;
            x = g > 0 ? (x - d > L ? x - d : 0.5 * (L + x)) : (x + d < H ? x + d : 0.5 * (x + H));
        } else {
            x = 0.5 * (L + H);
        }
    }
    double lo = 0, hi = top;
    for (int it = 0; it < 100; it++) {
        double m = 0.5 * (lo + hi), lo0 = lo, hi0 = hi;
        int in;
        if (m <= L)
            in = 0;
        else if (m >= H)
            in = 1;
        else
            in = comp_cdf(c, n, m, NULL) / tot >= q;
        if (in)
            hi = m;
        else
            lo = m;
        if (lo == lo0 && hi == hi0)
            break;
    }
    return hi;
}

typedef struct brk { double x, slope, jump; } brk_t;

static int brk_cmp(const void *a, const void *b)
{
    double x = ((const brk_t *)a)->x, y = ((const brk_t *)b)->x;
    return (x > y) - (x < y);
}

/* The q[0..3)-quantiles of a mixture of uniform components (fluid's TPOT:
 * no exponential tails) into out[]: the CDF is piecewise linear between
 * the sorted ends, walked once (the smallest x with F(x) >= q).  0, or
 * FS_ENOMEM; NAN without weight. */
static int uniform_quantiles(const comp_t *c, size_t n, const double q[3], double out[3])
{
    brk_t *e = fs_malloc((2 * n + 1) * sizeof *e);
    if (!e)
        return FS_ENOMEM;
    size_t m = 0;
    double tot = 0;
    for (size_t i = 0; i < n; i++) {
        if (!(c[i].w > 0))
            continue;
        tot += c[i].w;
        if (c[i].b > c[i].a) {
            double sl = c[i].w / (c[i].b - c[i].a);
            e[m++] = (brk_t){c[i].a, sl, 0};
            e[m++] = (brk_t){c[i].b, -sl, 0};
        } else {
            e[m++] = (brk_t){c[i].a, 0, c[i].w};
        }
    }
    qsort(e, m, sizeof *e, brk_cmp);
    int k = 0;
    double f = 0, slope = 0, x0 = m ? e[0].x : 0;
    for (size_t i = 0; i < m && k < 3 && tot > 0;) {
        double x = e[i].x, g = f + slope * (x - x0);
        while (k < 3 && g >= q[k] * tot) {     /* crossed on the slope before x */
            out[k] = slope > 0 ? x0 + (q[k] * tot - f) / slope : x;
            if (out[k] > x)
                out[k] = x;
            k++;
        }
        f = g;
        for (; i < m && e[i].x == x; i++) {
            f += e[i].jump;
            slope += e[i].slope;
        }
        if (slope < 0)
            slope = 0;
        while (k < 3 && f >= q[k] * tot * (1 - 1e-12))    /* a point mass at x */
            out[k++] = x;
        x0 = x;
    }
    for (; k < 3; k++)
        out[k] = tot > 0 ? (m ? e[m - 1].x : NAN) : NAN;
    fs_free(e);
    return 0;
}

/* The q-quantile of v[0..n) as gsl_stats_quantile_from_sorted_data gives
 * it on the sorted data (interpolating between order statistics), from two
 * selections (gsl_stats_select: O(n), v is reordered) instead of a sort. */
static double select_quantile(double *v, size_t n, double q)
{
    double f = q * (double)(n - 1);
    size_t lhs = (size_t)f;
    double d = f - (double)lhs, lo = gsl_stats_select(v, 1, n, lhs);
    if (lhs + 1 >= n || d == 0)
        return lo;
    return (1 - d) * lo + d * gsl_stats_select(v, 1, n, lhs + 1);
}

static void sorted_q(double *v, size_t n, double *p50, double *p95, double *p99)
{
    if (n == 0) {
        *p50 = *p95 = *p99 = NAN;
        return;
    }
    *p99 = select_quantile(v, n, 0.99);
    *p95 = select_quantile(v, n, 0.95);
    *p50 = select_quantile(v, n, 0.50);
}

/* A bucket's fluid components into the run's histograms: each in per
 * (<= 64) quantile slices, at u_j = (j + 1/2)/per.  An exponential tail's
 * slice sits at x = a - theta log((1 - u_j)/pw); its bin is found from
 * a - theta (log(1 - u_j) - log pw) (a table of the u_j and one logarithm a
 * piece), which is within 1e-15 relative of x; only where that is within
 * 1e-9 of a bin's edge is x itself computed, so every slice lands in the
 * bin it did with a logarithm each. */
void fs_svmet_comps_to_hist(gsl_histogram *h, const comp_t *c, size_t n, int per)
{
    double lu[64];
    if (per > 64)
        per = 64;
    for (int j = 0; j < per; j++)
        lu[j] = log(1 - (j + 0.5) / per);
    const double *r = h->range;
    for (size_t i = 0; i < n; i++) {
        const comp_t *k = &c[i];
        if (k->theta < 0 && k->a == k->b) {     /* a point */
            fs_svmet_hist_add(h, k->a, k->w);
            continue;
        }
        double wj = k->w / per;
        if (k->theta < 0) {
            for (int j = 0; j < per; j++)
                fs_svmet_hist_add(h, k->a + (j + 0.5) / per * (k->b - k->a), wj);
            continue;
        }
        int tail = k->theta > 0 && k->pw > 0;
        double lpw = tail ? log(k->pw) : 0,
               tol = 1e-9 * (fabs(k->a) + k->theta * (fabs(lpw) + 8));
        for (int j = 0; j < per; j++) {
            double u = (j + 0.5) / per;
            if (u <= 1 - k->pw || !tail) {
                fs_svmet_hist_add(h, k->a, wj);
                continue;
            }
            double x = k->a - k->theta * (lu[j] - lpw);
            size_t b = hist_bin(h, x);
            if (x - r[b] < tol || r[b + 1] - x < tol)
                b = hist_bin(h, k->a - k->theta * log((1 - u) / k->pw));
            h->bin[b] += wj;
        }
    }
}

/* A bucket's per-group columns: NaN unless s is disaggregated (its groups'
 * integrals over the bucket, fs_svdis_settle, over its length len s). */
static void disagg_cols(const svc_t *s, double len, fs_svc_bucket_row_t *r)
{
    const bucket_t *b = &s->bk;
    double v[2][5];
    for (int g = 0; g < 2; g++) {
        int on = s->disagg && len > 0;
        v[g][0] = on ? b->g_live_s[g] / len : NAN;
        v[g][1] = on ? b->g_busy_s[g] / len : NAN;
        v[g][2] = on ? b->g_run_s[g] / len : NAN;
        v[g][3] = on ? b->g_wait_s[g] / len : NAN;
        v[g][4] = on && b->g_kv_total_s[g] > 0 ? b->g_kv_used_s[g] / b->g_kv_total_s[g] : NAN;
    }
    r->prefill_replicas = v[0][0];
    r->prefill_busy = v[0][1];
    r->prefill_running = v[0][2];
    r->prefill_waiting = v[0][3];
    r->prefill_kv_usage = v[0][4];
    r->decode_replicas = v[1][0];
    r->decode_busy = v[1][1];
    r->decode_running = v[1][2];
    r->decode_waiting = v[1][3];
    r->decode_kv_usage = v[1][4];
    r->kv_transfers = s->disagg && len > 0 ? b->xfer_s / len : NAN;
}

int fs_svmet_bucket(services_t *a, svc_t *s, fs_model_t *m, fs_time_t end)
{
    int rc = fs_svfluid_advance_to(s, end);
    if (rc)
        return rc;
    if (s->bk.start >= s->warmup) {
        /* TPOT's pieces are already quantile slices of its law (OQ x GQ a
         * state, fs_service_fluid.c): a few points each do */
        fs_svmet_comps_to_hist(s->h_ttft, s->bk.cttft, s->bk.n_cttft, 64);
        fs_svmet_comps_to_hist(s->h_tpot, s->bk.ctpot, s->bk.n_ctpot, 4);
    }
    fs_svc_settle(s, end);
    bucket_t *b = &s->bk;
    double len = fs_time_to_s(end - b->start);
    fs_svc_bucket_row_t r = {.service = s->idx, .start = fs_time_to_s(b->start),
                             .end = fs_time_to_s(end), .cold_starts = b->cold,
                             .preemptions = (uint32_t)b->preemptions,
                             .prefix_hits = (uint32_t)b->prefix_hits,
                             .prefix_tokens = b->prefix_tokens,
                             .kv_usage = b->kv_total_s > 0 ? b->kv_used_s / b->kv_total_s : NAN};
    if (s->cfg->mode == FS_SVC_FLUID) {
        r.requests = (uint64_t)llround(b->f_arrivals);
        r.completed = (uint64_t)llround(b->f_completed);
        r.ttft_p50 = fs_svmet_comp_quantile(b->cttft, b->n_cttft, 0.50);
        r.ttft_p95 = fs_svmet_comp_quantile(b->cttft, b->n_cttft, 0.95);
        r.ttft_p99 = fs_svmet_comp_quantile(b->cttft, b->n_cttft, 0.99);
        static const double tq[3] = {0.50, 0.95, 0.99};
        double tv[3];
        if (uniform_quantiles(b->ctpot, b->n_ctpot, tq, tv))
            return FS_ENOMEM;
        r.tpot_p50 = tv[0];
        r.tpot_p95 = tv[1];
        r.tpot_p99 = tv[2];
        r.slo_attainment = b->f_completed > 0 ? b->f_met / b->f_completed : NAN;
    } else {
        r.requests = b->arrivals;
        r.completed = b->completed;
        sorted_q(b->ttft, b->n_ttft, &r.ttft_p50, &r.ttft_p95, &r.ttft_p99);
        sorted_q(b->tpot, b->n_tpot, &r.tpot_p50, &r.tpot_p95, &r.tpot_p99);
        r.slo_attainment = b->completed ? (double)b->met / (double)b->completed : NAN;
    }
    if (len > 0) {
        r.replicas = b->live_s / len;
        r.ready = b->ready_s / len;
        r.gpus = b->gpu_s / len;
        r.tokens_per_s = b->tokens / len;
        r.waiting = b->wait_s / len;
        r.running = b->run_s / len;
        r.tokens_in_per_s = b->tokens_in / len;
        r.goodput = (s->cfg->mode == FS_SVC_FLUID ? b->f_met : (double)b->met) / len;
    }
    disagg_cols(s, len, &r);
    if (b->start >= s->warmup &&
        (r.completed > 0 || (s->cfg->mode == FS_SVC_FLUID && b->f_completed > 0))) {
        s->buckets_with++;
        s->buckets_met += r.ttft_p99 <= fs_time_to_s(s->cfg->slo_ttft) + 1e-9;
    }
    const fs_sink_t *sk = fs_model_sink(m);
    if (sk->svc_bucket && len > 0 && (rc = sk->svc_bucket(sk->ud, &r))) {
        fs_model_error(m, sk->err);
        return rc;
    }
    /* the next bucket: keep the buffers */
    double *t1 = b->ttft, *t2 = b->tpot;
    comp_t *c1 = b->cttft, *c2 = b->ctpot;
    size_t k1 = b->cap_ttft, k2 = b->cap_tpot, k3 = b->cap_cttft, k4 = b->cap_ctpot;
    memset(b, 0, sizeof *b);
    b->ttft = t1;
    b->tpot = t2;
    b->cttft = c1;
    b->ctpot = c2;
    b->cap_ttft = k1;
    b->cap_tpot = k2;
    b->cap_cttft = k3;
    b->cap_ctpot = k4;
    b->start = end;
    return 0;
}


/* ---- the end ----------------------------------------------------------------------------- */

int fs_svmet_finish(void *ud, fs_model_t *m, fs_run_totals_t *t)
{
    services_t *a = ud;
    (void)t;
    const fs_sink_t *sk = fs_model_sink(m);
    fs_time_t end = fs_model_horizon(m);  /* services run until the horizon (the check) */
    for (size_t k = 0; k < a->n; k++) {
        svc_t *s = &a->s[k];
        int rc = 0;
        if (end > s->bk.start)
            rc = fs_svmet_bucket(a, s, m, end);
        if (rc)
            return rc;
        for (uint32_t i = 0; i < s->n_rep; i++)     /* start-ups still going at the end */
            if (s->rep[i].state == R_STARTING)
                s->startup_gpu_s += s->gpu_share * fs_time_to_s(end - s->rep[i].since);
        fs_service_row_t r;
        memset(&r, 0, sizeof r);
        snprintf(r.name, sizeof r.name, "%s", s->cfg->name);
        r.mode = (uint32_t)s->cfg->mode;
        int fl = s->cfg->mode == FS_SVC_FLUID;
        r.requests = fl ? (uint64_t)llround(s->f_requests) : s->requests;
        r.completed = fl ? (uint64_t)llround(s->f_completed) : s->completed;
        r.retried = s->retried;
        double done_n = s->win_n;
        r.ttft_p50 = hist_quantile(s->h_ttft, 0.50);
        r.ttft_p95 = hist_quantile(s->h_ttft, 0.95);
        r.ttft_p99 = hist_quantile(s->h_ttft, 0.99);
        r.ttft_mean = done_n > 0 ? s->ttft_sum / done_n : NAN;
        r.tpot_p50 = hist_quantile(s->h_tpot, 0.50);
        r.tpot_p95 = hist_quantile(s->h_tpot, 0.95);
        r.tpot_p99 = hist_quantile(s->h_tpot, 0.99);
        r.slo_attainment = done_n > 0 ? s->win_met / done_n : NAN;
        r.buckets_met = s->buckets_with ? (double)s->buckets_met / (double)s->buckets_with : NAN;
        r.replica_hours = s->live_s / 3600.0;
        r.ready_hours = s->ready_s / 3600.0;
        r.gpu_hours = s->gpu_s / 3600.0;
        r.cold_starts = s->cold_starts;
        r.startup_gpu_hours = s->startup_gpu_s / 3600.0;
        r.tokens_out = s->tokens;
        r.tokens_per_gpu_s = s->gpu_s > 0 ? s->tokens / s->gpu_s : NAN;
        r.prefix_hits = s->prefix_hits;
        r.prefix_tokens = s->prefix_tokens;
        if (sk->service && (rc = sk->service(sk->ud, &r))) {
            fs_model_error(m, sk->err);
            return rc;
        }
    }
    return 0;
}

