/*
 * fs_compare_rec: simulated against recorded waits (fs_compare_rec.h).
 */
#include "fs_compare_rec.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

#include "../scenarios/fs_defaults.h"
#include "../scenarios/fs_scenario.h"
#include "../sim/fs_alloc.h"
#include "../sim/fs_time.h"
#include "../traces/fs_trace.h"
#include "fs_fmt.h"
#include "fs_h5read.h"

double fs_rec_ks_sorted(const double *a, size_t na, const double *b, size_t nb)
{
    if (!na || !nb)
        return 0;
    size_t i = 0, k = 0;
    double d = 0;
    while (i < na && k < nb) {
        double x = a[i] <= b[k] ? a[i] : b[k];
        while (i < na && a[i] <= x)
            i++;
        while (k < nb && b[k] <= x)
            k++;
        double g = fabs((double)i / (double)na - (double)k / (double)nb);
        if (g > d)
            d = g;
    }
    return d;
}

static void waits_of(const double *sorted, const double *raw, size_t n, fs_rec_waits_t *w)
{
    if (!n) {
        *w = (fs_rec_waits_t){NAN, NAN, NAN, NAN, NAN};
        return;
    }
    w->mean = gsl_stats_mean(raw, 1, n);
    w->p50 = gsl_stats_quantile_from_sorted_data(sorted, 1, n, 0.50);
    w->p90 = gsl_stats_quantile_from_sorted_data(sorted, 1, n, 0.90);
    w->p99 = gsl_stats_quantile_from_sorted_data(sorted, 1, n, 0.99);
    size_t waited = 0;
    for (size_t i = 0; i < n; i++)
        waited += raw[i] > FS_REC_WAITED_S;
    w->share_waited = (double)waited / (double)n;
}

int fs_rec_stats(const double *sim, const double *rec, size_t n, fs_rec_cmp_t *c)
{
    double *s = fs_malloc((n ? n : 1) * sizeof *s), *r = fs_malloc((n ? n : 1) * sizeof *r);
    double *work = fs_malloc((n ? 2 * n : 1) * sizeof *work);
    if (!s || !r || !work) {
        fs_free(s);
        fs_free(r);
        fs_free(work);
        return FS_ENOMEM;
    }
    if (n) {
        memcpy(s, sim, n * sizeof *s);
        memcpy(r, rec, n * sizeof *r);
        gsl_sort(s, 1, n);
        gsl_sort(r, 1, n);
    }
    waits_of(s, sim, n, &c->sim);
    waits_of(r, rec, n, &c->rec);
    c->ks = fs_rec_ks_sorted(s, n, r, n);
    /* gsl_stats_spearman ranks with ties averaged; constant data has no
     * correlation (NaN) */
    c->spearman = n >= 2 ? gsl_stats_spearman(sim, 1, rec, 1, n, work) : NAN;
    fs_free(s);
    fs_free(r);
    fs_free(work);
    return 0;
}

void fs_rec_cmp_release(fs_rec_cmp_t *c)
{
    if (!c)
        return;
    fs_free(c->util_sim);
    fs_free(c->util_rec);
    fs_free(c->wait_sim);
    fs_free(c->wait_rec);
    fs_free(c->submit);
    memset(c, 0, sizeof *c);
}

/* A job as the trace recorded it. */
typedef struct tjob {
    uint64_t id;
    double submit, rec_start, rec_end;   /* s; rec_* NaN unknown */
    double gpus;
    int withdraw;                        /* FS_JOB_WITHDRAW: cancelled before it started */
} tjob_t;

static int by_id(const void *a, const void *b)
{
    uint64_t x = ((const tjob_t *)a)->id, y = ((const tjob_t *)b)->id;
    return (x > y) - (x < y);
}

/* Every job of the run's trace (through its stored canonical scenario). */
static int read_trace(const char *path, fs_h5file_t *f, tjob_t **out, size_t *n, fs_error_t *err)
{
    char *text = NULL;
    int rc = fs_h5read_attr_str(f, "scenario", &text, err);
    if (rc)
        return rc;
    fs_config_t cfg;
    rc = fs_scenario_load_string(path, text, NULL, 0, &cfg, err);
    fs_free(text);
    if (rc)
        return rc;
    fs_source_t *src = NULL;
    tjob_t *t = NULL;
    size_t nt = 0, cap = 0;
    enum { BATCH = 4096 };
    fs_job_t *buf = NULL;
    if (cfg.workload.kind != FS_WORKLOAD_TRACE) {
        rc = fs_error_set(err, FS_EINVAL, "%s: the run replayed no trace (a synthetic workload "
                          "records no starts): --recorded needs a trace replay", path);
        goto out;
    }
    if ((rc = fs_trace_open(cfg.workload.trace.format ? cfg.workload.trace.format : "native",
                            cfg.workload.trace.path, &cfg.workload.trace.opts, &src, err)))
        goto out;
    if (!(buf = fs_malloc(BATCH * sizeof *buf))) {
        rc = fs_error_set(err, FS_ENOMEM, "out of memory");
        goto out;
    }
    for (;;) {
        size_t got = 0;
        if ((rc = fs_source_next(src, buf, BATCH, &got, err)))
            goto out;
        if (!got)
            break;
        if (fs_grow((void **)&t, &cap, nt + got, sizeof *t)) {
            rc = fs_error_set(err, FS_ENOMEM, "out of memory");
            goto out;
        }
        for (size_t i = 0; i < got; i++) {
            const fs_job_t *j = &buf[i];
            if (j->flags & FS_JOB_SERVICE)
                continue;
            if (j->rec_start >= 0 && j->rec_start < j->submit) {
                rc = fs_error_set(err, FS_EINVAL, "%s: job %llu: recorded start %.6g s before its "
                                  "submission (expected rec_start >= submit)",
                                  cfg.workload.trace.path, (unsigned long long)j->id,
                                  fs_time_to_s(j->submit - j->rec_start));
                goto out;
            }
            tjob_t *x = &t[nt++];
            x->id = j->id;
            x->submit = fs_time_to_s(j->submit);
            x->rec_start = j->rec_start >= 0 ? fs_time_to_s(j->rec_start) : NAN;
            x->rec_end = j->rec_end >= 0 ? fs_time_to_s(j->rec_end) : NAN;
            x->withdraw = (j->flags & FS_JOB_WITHDRAW) != 0;
            x->gpus = (double)j->gpus * (j->gpu_milli ? j->gpu_milli : 1000) / 1000.0;
        }
    }
    if (nt)
        qsort(t, nt, sizeof *t, by_id);
    *out = t;
    *n = nt;
    t = NULL;
out:
    fs_free(buf);
    fs_free(t);
    if (src)
        fs_source_destroy(src);
    fs_config_release(&cfg);
    return rc;
}

/* Adds gpus x the overlap of [a, b) with each day to busy[]. */
static void add_busy(double *busy, size_t days, double a, double b, double gpus)
{
    if (!(b > a) || !(a >= 0))
        return;
    for (size_t d = (size_t)(a / 86400.0); d < days && (double)d * 86400.0 < b; d++) {
        double lo = fmax(a, (double)d * 86400.0), hi = fmin(b, (double)(d + 1) * 86400.0);
        if (hi > lo)
            busy[d] += gpus * (hi - lo);
    }
}

static int capacity_of(fs_h5file_t *f, double *cap, fs_error_t *err)
{
    size_t n = 0;
    int rc = fs_h5read_rows(f, "pools", &n, err);
    if (rc)
        return rc;
    double *nodes = fs_malloc((n ? n : 1) * sizeof *nodes), *gpn = fs_malloc((n ? n : 1) * sizeof *gpn);
    if (!nodes || !gpn) {
        rc = fs_error_set(err, FS_ENOMEM, "out of memory");
    } else if (!(rc = fs_h5read_f64(f, "pools", "nodes", nodes, err)) &&
               !(rc = fs_h5read_f64(f, "pools", "gpus_per_node", gpn, err))) {
        *cap = 0;
        for (size_t i = 0; i < n; i++)
            *cap += nodes[i] * gpn[i];
    }
    fs_free(nodes);
    fs_free(gpn);
    return rc;
}

/* startup_s: a start overhead (startup.container, startup.load, image
 * pulls) counts as wait: the recorded start is when the job began to run */
enum { J_ID, J_SUBMIT, J_START, J_END, J_RUN, J_WAIT, J_GPUS, J_MILLI, J_STARTUP, N_JCOL };
static const char *const jcols[N_JCOL] = {"id", "submit", "start", "end", "run", "wait", "gpus",
                                          "gpu_milli", "startup_s"};

int fs_rec_compare(const char *path, double from_s, double to_s, fs_rec_cmp_t *out,
                   fs_error_t *err)
{
    memset(out, 0, sizeof *out);
    fs_h5file_t *f;
    int rc = fs_h5read_open(path, &f, err);
    if (rc)
        return rc;
    tjob_t *t = NULL;
    size_t nt = 0, rows = 0;
    double *col[N_JCOL] = {0};
    double *bs = NULL, *br = NULL;
    if ((rc = read_trace(path, f, &t, &nt, err)) || (rc = fs_h5read_rows(f, "jobs", &rows, err)) ||
        (rc = capacity_of(f, &out->capacity, err)))
        goto out;
    out->n_trace = nt;
    size_t with_rec = 0;
    for (size_t i = 0; i < nt; i++)
        with_rec += !isnan(t[i].rec_start);
    if (!with_rec) {
        rc = fs_error_set(err, FS_EINVAL, "%s: its trace records no start for any of its %zu "
                          "jobs: nothing to compare against", path, nt);
        goto out;
    }
    for (int k = 0; k < N_JCOL; k++) {
        if (!(col[k] = fs_malloc((rows ? rows : 1) * sizeof *col[k]))) {
            rc = fs_error_set(err, FS_ENOMEM, "out of memory");
            goto out;
        }
        if ((rc = fs_h5read_f64(f, "jobs", jcols[k], col[k], err)))
            goto out;
    }
    out->wait_sim = fs_malloc((rows ? rows : 1) * sizeof *out->wait_sim);
    out->wait_rec = fs_malloc((rows ? rows : 1) * sizeof *out->wait_rec);
    out->submit = fs_malloc((rows ? rows : 1) * sizeof *out->submit);
    if (!out->wait_sim || !out->wait_rec || !out->submit) {
        rc = fs_error_set(err, FS_ENOMEM, "out of memory");
        goto out;
    }
    /* the days both sides span */
    double last = 0;
    for (size_t i = 0; i < rows; i++) {
        double e = isfinite(col[J_END][i]) ? col[J_END][i] : col[J_START][i] + col[J_RUN][i];
        if (isfinite(e) && e > last)
            last = e;
    }
    for (size_t i = 0; i < nt; i++)
        if (isfinite(t[i].rec_end) && t[i].rec_end > last)
            last = t[i].rec_end;
    out->n_days = (size_t)ceil(last / 86400.0);
    if (out->n_days > 100000)
        out->n_days = 100000;
    bs = fs_calloc(out->n_days ? out->n_days : 1, sizeof *bs);
    br = fs_calloc(out->n_days ? out->n_days : 1, sizeof *br);
    if (!bs || !br) {
        rc = fs_error_set(err, FS_ENOMEM, "out of memory");
        goto out;
    }
    /* utilization: every job of either side, window or not */
    for (size_t i = 0; i < rows; i++) {
        double e = isfinite(col[J_END][i]) ? col[J_END][i] : col[J_START][i] + col[J_RUN][i];
        add_busy(bs, out->n_days, col[J_START][i], e, col[J_GPUS][i] * col[J_MILLI][i] / 1000.0);
    }
    for (size_t i = 0; i < nt; i++)
        add_busy(br, out->n_days, t[i].rec_start, t[i].rec_end, t[i].gpus);
    for (size_t d = 0; d < out->n_days; d++) {
        bs[d] = out->capacity > 0 ? bs[d] / (out->capacity * 86400.0) : NAN;
        br[d] = out->capacity > 0 ? br[d] / (out->capacity * 86400.0) : NAN;
    }
    out->util_sim = bs;
    out->util_rec = br;
    bs = br = NULL;
    size_t m = 0;
    for (size_t i = 0; i < rows; i++) {
        double sub = col[J_SUBMIT][i];
        if (!(sub >= from_s && sub < to_s))
            continue;
        out->n_jobs++;
        tjob_t key = {.id = (uint64_t)col[J_ID][i]};
        const tjob_t *x = nt ? bsearch(&key, t, nt, sizeof *t, by_id) : NULL;
        if (!x) {
            out->n_not_in_trace++;
        } else if (x->withdraw) {
            out->n_withdrawn++;
        } else if (isnan(x->rec_start)) {
            out->n_no_rec++;
        } else if (isnan(col[J_WAIT][i])) {
            out->n_not_started++;
        } else {
            out->wait_sim[m] = col[J_WAIT][i] + col[J_STARTUP][i];
            out->wait_rec[m] = x->rec_start - x->submit;
            out->submit[m] = sub;
            m++;
        }
    }
    out->n_matched = m;
    if (fs_rec_stats(out->wait_sim, out->wait_rec, m, out))
        rc = fs_error_set(err, FS_ENOMEM, "out of memory");
out:
    for (int k = 0; k < N_JCOL; k++)
        fs_free(col[k]);
    fs_free(bs);
    fs_free(br);
    fs_free(t);
    fs_h5read_close(f);
    if (rc)
        fs_rec_cmp_release(out);
    return rc;
}

void fs_rec_print(FILE *out, const char *path, const fs_rec_cmp_t *c)
{
    fprintf(out, "%s against the waits its trace recorded\n", path);
    fprintf(out, "jobs %zu in /jobs: %zu compared, %zu with no recorded start, %zu never started "
                 "in the run, %zu not in the trace\n",
            c->n_jobs, c->n_matched, c->n_no_rec, c->n_not_started, c->n_not_in_trace);
    if (c->n_withdrawn)
        fprintf(out, "withdrawn: %zu jobs cancelled before they started (workload.trace.cancelled: "
                     "withdraw), not compared: they have no recorded start\n", c->n_withdrawn);
    fprintf(out, "%-22s %14s %14s %10s\n", "wait", "simulated", "recorded", "sim/rec");
    const char *names[] = {"mean", "p50", "p90", "p99"};
    const double sv[] = {c->sim.mean, c->sim.p50, c->sim.p90, c->sim.p99};
    const double rv[] = {c->rec.mean, c->rec.p50, c->rec.p90, c->rec.p99};
    for (int k = 0; k < 4; k++) {
        char a[32], b[32];
        fs_fmt_duration(a, sizeof a, sv[k]);
        fs_fmt_duration(b, sizeof b, rv[k]);
        if (rv[k] > 0)
            fprintf(out, "%-22s %14s %14s %10.2f\n", names[k], a, b, sv[k] / rv[k]);
        else
            fprintf(out, "%-22s %14s %14s %10s\n", names[k], a, b, "-");
    }
    fprintf(out, "%-22s %13.1f%% %13.1f%%\n", "waited > 1 min", 100 * c->sim.share_waited,
            100 * c->rec.share_waited);
    fprintf(out, "KS distance of the wait CDFs  %.3f\n", c->ks);
    fprintf(out, "Spearman per job              %.3f\n", c->spearman);
    size_t step = c->n_days > 60 ? 7 : 1;
    double ms = 0, mr = 0;
    for (size_t d = 0; d < c->n_days; d++) {
        ms += c->util_sim[d];
        mr += c->util_rec[d];
    }
    if (c->n_days)
        fprintf(out, "utilization (of %.0f GPUs) simulated %.1f%%, recorded %.1f%%; per %s:\n",
                c->capacity, 100 * ms / (double)c->n_days, 100 * mr / (double)c->n_days,
                step == 7 ? "week" : "day");
    for (size_t d = 0; d < c->n_days; d += step) {
        double s = 0, r = 0;
        size_t k = 0;
        for (; k < step && d + k < c->n_days; k++) {
            s += c->util_sim[d + k];
            r += c->util_rec[d + k];
        }
        fprintf(out, "  %s %4zu  sim %5.1f%%  rec %5.1f%%\n", step == 7 ? "week" : "day ",
                d / step, 100 * s / (double)k, 100 * r / (double)k);
    }
}
