#include "fs_runner.h"
#include "../../models/fs_power.h"
#include "../../analysis/fs_fmt.h"
#include "../../analysis/fs_operator.h"
#include "../../analysis/fs_results.h"
#include "../../analysis/fs_results_linkbytes.h"
#include "../../models/fs_cost.h"
#include "../../models/fs_kueue.h"
#include "../../models/fs_model.h"
#include "../../models/fs_policy.h"
#include "../../scenarios/fs_scenario.h"
#include "../../traces/fs_synth.h"
#include "../../traces/fs_trace.h"
#include "../../traces/fs_tscale.h"
#include "../fs_alloc.h"
#include "../fs_clock.h"

#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

void fs_run_opts_init(fs_run_opts_t *o)
{
    memset(o, 0, sizeof *o);
}

typedef struct run_ctx {
    const fs_config_t *cfg;
    const fs_run_opts_t *opts;
    fs_stats_t *stats;
    fs_results_t *res;
    fs_error_t *err;
    double wall0;
    double last_print;
    fs_service_row_t *svc;  /* /services rows, written once the cost is known */
    size_t n_svc, cap_svc;
    fs_operator_t *op;      /* the serving figures of /summary (services only) */
} run_ctx_t;

static int sink_job(void *ud, const fs_job_row_t *row)
{
    run_ctx_t *c = ud;
    int rc = fs_stats_add_job(c->stats, row);
    if (rc)
        return rc;
    if (c->res && c->cfg->output.jobs) {
        rc = fs_results_add_job(c->res, row, c->err);
        if (rc)
            return rc;
    }
    if (c->opts->on_job)
        return c->opts->on_job(c->opts->on_job_ud, row);
    return 0;
}

static int sink_sample(void *ud, const fs_sample_row_t *row)
{
    run_ctx_t *c = ud;
    if (!c->res)
        return 0;
    return fs_results_add_sample(c->res, row, c->err);
}

static int sink_failure(void *ud, const fs_failure_row_t *row)
{
    run_ctx_t *c = ud;
    if (!c->res)
        return 0;
    return fs_results_add_failure(c->res, row, c->err);
}

static int sink_service(void *ud, const fs_service_row_t *row)
{
    run_ctx_t *c = ud;
    if (fs_grow((void **)&c->svc, &c->cap_svc, c->n_svc + 1, sizeof *c->svc))
        return fs_error_set(c->err, FS_ENOMEM, "services: out of memory");
    c->svc[c->n_svc++] = *row;
    return 0;
}

static int sink_svc_bucket(void *ud, const fs_svc_bucket_row_t *row)
{
    run_ctx_t *c = ud;
    if (c->op && fs_operator_add_bucket(c->op, row))
        return fs_error_set(c->err, FS_ENOMEM, "services: out of memory");
    return c->res ? fs_results_add_svc_bucket(c->res, row, c->err) : 0;
}

static int sink_mig_layout(void *ud, const fs_mig_layout_row_t *row)
{
    run_ctx_t *c = ud;
    return c->res ? fs_results_add_mig_layout(c->res, row, c->err) : 0;
}

static int sink_nodegroup(void *ud, const fs_nodegroup_row_t *row)
{
    run_ctx_t *c = ud;
    return c->res ? fs_results_add_nodegroup(c->res, row, c->err) : 0;
}

static int sink_fabric(void *ud, const fs_link_row_t *links, size_t n_links,
                       const fs_jobnet_row_t *jobs, size_t n_jobs)
{
    run_ctx_t *c = ud;
    return c->res ? fs_results_add_fabric(c->res, links, n_links, jobs, n_jobs, c->err) : 0;
}

static int sink_link_bytes(void *ud, const fs_link_bytes_row_t *rows, size_t n)
{
    run_ctx_t *c = ud;
    return c->res ? fs_results_add_link_bytes(c->res, rows, n, c->err) : 0;
}

static int sink_request(void *ud, const fs_request_row_t *row)
{
    run_ctx_t *c = ud;
    return c->res ? fs_results_add_request(c->res, row, c->err) : 0;
}

static int sink_interval(void *ud, const fs_interval_row_t *row)
{
    run_ctx_t *c = ud;
    if (!c->res)
        return 0;
    return fs_results_add_interval(c->res, row, c->err);
}

static void progress(void *ud, const fs_model_t *m)
{
    run_ctx_t *c = ud;
    if (c->opts->on_progress)
        c->opts->on_progress(c->opts->on_progress_ud, fs_time_to_s(fs_model_now(m)),
                             fs_time_to_s(c->cfg->horizon), fs_model_jobs_done(m),
                             fs_model_jobs_running(m), fs_model_jobs_queued(m));
    if (!c->opts->progress)
        return;
    double w = fs_clock_wall();
    if (c->opts->progress_every > 0) {
        /* a log line: whole lines at a low rate, with the wall time left
         * estimated from the simulated time done so far (to the horizon;
         * after it, the drain's end is not known) */
        if (w - (c->last_print > 0 ? c->last_print : c->wall0) < c->opts->progress_every)
            return;
        c->last_print = w;
        double t = fs_time_to_s(fs_model_now(m)), h = fs_time_to_s(c->cfg->horizon);
        double spent = w - c->wall0;
        char eta[64], left[32], wall[32];
        fs_fmt_duration(wall, sizeof wall, spent);
        if (t > 0 && t < h) {
            fs_fmt_duration(left, sizeof left, spent * (h - t) / t);
            snprintf(eta, sizeof eta, "ETA %s", left);
        } else {
            snprintf(eta, sizeof eta, "draining after the horizon, ETA unknown");
        }
        fprintf(stderr, "fleetsim: t=%.2f d of %.2f d (%.0f%%)  done %llu  running %llu  queued "
                "%llu  wall %s  %s\n", t / 86400.0, h / 86400.0, h > 0 ? 100 * t / h : 0.0,
                (unsigned long long)fs_model_jobs_done(m),
                (unsigned long long)fs_model_jobs_running(m),
                (unsigned long long)fs_model_jobs_queued(m), wall, eta);
        return;
    }
    if (w - c->last_print < 0.25)
        return;
    c->last_print = w;
    fprintf(stderr, "\rfleetsim: t=%.2f d of %.2f d  done %llu  running %llu  queued %llu   ",
            fs_time_to_s(fs_model_now(m)) / 86400.0, fs_time_to_s(fs_model_horizon(m)) / 86400.0,
            (unsigned long long)fs_model_jobs_done(m),
            (unsigned long long)fs_model_jobs_running(m),
            (unsigned long long)fs_model_jobs_queued(m));
}

static int open_source(const fs_config_t *cfg, fs_source_t **src, fs_error_t *err)
{
    const fs_workload_cfg_t *w = &cfg->workload;
    if (w->kind == FS_WORKLOAD_TRACE) {
        int rc = fs_trace_open(w->trace.format ? w->trace.format : "native", w->trace.path,
                               &w->trace.opts, src, err);
        return rc ? rc : fs_tscale_wrap(src, (const char *const *)w->tenant_scale_names,
                                        w->tenant_scale, w->n_tenant_scale, cfg->seed,
                                        cfg->replication, err);
    }
    fs_synth_cfg_t sc = w->synth;   /* shallow: the horizon (and a tenant scale) differ */
    sc.horizon = cfg->horizon;
    double *shares = NULL;
    int rc = fs_tscale_synth(&sc, (const char *const *)w->tenant_scale_names, w->tenant_scale,
                             w->n_tenant_scale, &shares, err);
    if (!rc)
        rc = fs_synth_create(&sc, cfg->seed, cfg->replication, src, err);
    fs_free(shares);
    return rc;
}

/* The source's skip reasons (lenient rows, option skips) into the results
 * file's root attribute rows_skipped_by_reason. */
static int store_skips(fs_results_t *res, const fs_source_t *src, fs_error_t *err)
{
    enum { MAX_REASONS = 64 };
    const char *why[MAX_REASONS];
    uint64_t count[MAX_REASONS];
    size_t n = 0;
    while (n < MAX_REASONS && (why[n] = fs_source_skip_reason(src, n, &count[n])) != NULL)
        n++;
    return fs_results_set_skipped(res, why, count, n, err);
}

/* Prices the finished run (models/fs_cost.h) into the summary's cost
 * and carbon figures and *cost.  rates: resolved before the run (NULL: no
 * cost). */
static int run_cost(const fs_cost_rate_t *rates, fs_model_t *model, fs_run_report_t *rep,
                    fs_cost_report_t *cost, fs_error_t *err)
{
    fs_summary_t *s = &rep->summary;
    rep->carbon_embodied_kg = NAN;
    if (!rates)
        return 0;
    int rc = fs_cost_report(rates, fs_model_usage(model), s->jobs_completed, cost);
    if (rc)
        return fs_error_set(err, rc, "cost: %s", fs_error_describe(rc));
    fs_summary_copy_cost(s, cost);   /* analysis/fs_summary.def rows from cost */
    rep->carbon_embodied_kg = cost->carbon_embodied_kg;
    fs_cost_cell_t w;
    fs_cost_window(rates, fs_model_usage(model), &w);
    s->cost_window = w.total;
    s->cost_per_gpu_hour_window = w.gpu_s_busy > 0 ? w.total / (w.gpu_s_busy / 3600.0) : NAN;
    return 0;
}

/* Kueue: each tenant's share of its ClusterQueue's borrowed and lent quota
 * GPU-hours, in proportion to the tenants' GPU-hours in that CQ (all of it
 * for a CQ of one tenant; equal shares when none ran).  Tenants mapped to
 * no CQ get 0. */
static int tenant_quota(fs_model_t *model, fs_stats_t *st, fs_error_t *err)
{
    void *ks = fs_model_policy_state(model);
    size_t n_cq = fs_kueue_n_cq(ks), n;
    const fs_tenant_row_t *tr = fs_stats_tenants(st, &n);
    double *gh = fs_calloc(n_cq + 1, sizeof *gh), *cnt = fs_calloc(n_cq + 1, sizeof *cnt);
    int32_t *cq = fs_calloc(n + 1, sizeof *cq);
    int rc = gh && cnt && cq ? 0 : fs_error_set(err, FS_ENOMEM, "statistics: out of memory");
    for (size_t i = 0; i < n && !rc; i++) {
        cq[i] = fs_kueue_tenant_cq(ks, model, tr[i].tenant);
        if (cq[i] >= 0) {
            gh[cq[i]] += tr[i].gpu_hours;
            cnt[cq[i]] += 1;
        }
    }
    for (size_t i = 0; i < n && !rc; i++) {
        double b = 0, l = 0, br[3] = {0, 0, 0}, lr[3] = {0, 0, 0};
        if (cq[i] >= 0) {
            fs_kueue_quota_hours(ks, model, (size_t)cq[i], &b, &l);
            double share = gh[cq[i]] > 0 ? tr[i].gpu_hours / gh[cq[i]] : 1.0 / cnt[cq[i]];
            b *= share;
            l *= share;
            for (int r = 0; r < 3; r++) {   /* cpu, memory, pods: NaN where none is quota'd */
                fs_kueue_quota_hours_res(ks, model, (size_t)cq[i], FS_KRES_CPU + r, &br[r], &lr[r]);
                br[r] *= share;
                lr[r] *= share;
            }
        } else
            for (int r = 0; r < 3; r++)     /* 0 where the run counts the resource, else NaN */
                if (!fs_kueue_counts(ks, FS_KRES_CPU + r))
                    br[r] = lr[r] = NAN;
        fs_stats_set_tenant_quota(st, i, b, l);
        fs_stats_set_tenant_quota_res(st, i, br, lr);
    }
    fs_free(gh);
    fs_free(cnt);
    fs_free(cq);
    return rc;
}

/* Opens the results file (opts->output): the canonical scenario and the
 * pools' table go in its metadata; *canon and *pools are the caller's to
 * free. */
static int open_results(run_ctx_t *c, int mig_recut, char **canon, fs_pool_info_t **pools,
                        fs_error_t *err)
{
    const fs_config_t *cfg = c->cfg;
    const fs_run_opts_t *opts = c->opts;
    *canon = fs_scenario_dump(cfg);
    *pools = fs_calloc(cfg->cluster.n_pools, sizeof **pools);
    if (!*canon || !*pools)
        return fs_error_set(err, FS_ENOMEM, "results: out of memory");
    for (size_t i = 0; i < cfg->cluster.n_pools; i++) {
        fs_pool_info_t *pi = &(*pools)[i];
        const fs_pool_cfg_t *pc = &cfg->cluster.pools[i];
        pi->name = pc->name;
        pi->gpu = pc->gpu;
        pi->nodes = pc->nodes;
        pi->gpus_per_node = pc->gpus_per_node;
        pi->mig = pc->mig;
        pi->power_cap_w = pc->power_cap_w;
        pi->ambient_c = pc->ambient_c;
        pi->throttle_w = fs_thermal_limit_w(cfg->telemetry.throttle_c, pc->ambient_c);
        pi->time_slicing = pc->time_slicing;
        pi->mps = pc->mps;
    }
    fs_results_meta_t meta = {
        .seed = cfg->seed, .replication = cfg->replication, .scenario = *canon,
        .scenario_source = cfg->source_text, .scenario_path = cfg->source_path,
        .pools = *pools, .n_pools = cfg->cluster.n_pools,
        .io_lock = opts->io_lock, .io_lock_ud = opts->io_lock_ud,   /* taken by fs_results */
        .writer_thread = opts->writer_thread,
        .in_sweep = opts->in_sweep, .sweep_digest = opts->sweep_digest,
        .sweep_point = opts->sweep_point,
        .services = cfg->services.n, .requests = cfg->services.requests,
        .nodegroups = cfg->cluster.autoscale.n_groups,
        .mig_layouts = mig_recut,
    };
    return fs_results_open(opts->output, &meta, &c->res, err);
}

/* The model's sink: the rows it hands over, to the statistics and (when
 * there is a results file) to the tables the scenario writes. */
static fs_sink_t make_sink(run_ctx_t *c, int mig_recut, fs_error_t *err)
{
    const fs_config_t *cfg = c->cfg;
    fs_sink_t sink = {.job = sink_job, .sample = sink_sample, .ud = c, .failure = sink_failure,
                      .err = err};
    if (cfg->output.gpu_intervals && c->res)
        sink.interval = sink_interval;
    if (cfg->cluster.autoscale.n_groups && c->res)
        sink.nodegroup = sink_nodegroup;
    if (mig_recut && c->res)
        sink.mig_layout = sink_mig_layout;
    if (cfg->cluster.fabric.kind != FS_FABRIC_OFF && c->res)
        sink.fabric = sink_fabric;
    if (cfg->cluster.fabric.kind != FS_FABRIC_OFF && c->res && cfg->output.timeline_interval > 0)
        sink.link_bytes = sink_link_bytes;   /* /link_bytes: at the /timeline samples */
    if (cfg->services.n) {
        sink.service = sink_service;
        sink.svc_bucket = sink_svc_bucket;  /* the serving figures, and /service_buckets */
    }
    if (cfg->services.n && c->res && cfg->services.requests)
        sink.request = sink_request;
    return sink;
}

/* A run stopped before its end with a results file -- interrupted
 * (FS_EINTR), or a drain that cannot end (FS_ESTUCK: drain_limit reached,
 * or jobs nothing can ever start) -- commits what ran as partial results
 * (complete = 0, the unfinished jobs counted); rc stays as it was unless
 * that fails. */
static int commit_interrupted(run_ctx_t *c, fs_source_t *src, fs_model_t *model,
                              fs_run_report_t *rep, int rc, fs_error_t *err)
{
    int sig = c->opts->interrupt ? (int)*c->opts->interrupt : 0;
    char reason[64];
    if (rc == FS_ESTUCK)
        snprintf(reason, sizeof reason, "%s", fs_model_drain_stop(model) == FS_DRAIN_LIMIT
                                                  ? "drain_limit reached"
                                                  : "no queued job can ever start");
    else
        snprintf(reason, sizeof reason, "interrupted by %s",
                 sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "a stop request");
    uint64_t unfinished = fs_model_jobs_queued(model) + fs_model_jobs_running(model) +
                          fs_model_jobs_recovering(model);
    fs_error_t perr;
    fs_error_clear(&perr);
    int prc = store_skips(c->res, src, &perr);
    if (prc)
        fs_results_abort(c->res);
    else
        prc = fs_results_commit_partial(c->res, reason, fs_time_to_s(fs_model_now(model)),
                                        (int64_t)unfinished, &perr);
    c->res = NULL;   /* freed by commit_partial (or abort) either way */
    if (prc) {
        fs_error_prefix(&perr, "%s; partial results not written", err->msg);
        *err = perr;
        return prc;
    }
    rep->partial = 1;
    return rc;
}

/* Services: their cost per million tokens at the run's cost per delivered
 * GPU-hour, into the report and /services. */
static int finish_services(run_ctx_t *c, fs_run_report_t *rep, fs_error_t *err)
{
    rep->n_services = c->n_svc;
    for (size_t i = 0; i < c->n_svc; i++) {
        fs_service_row_t *r = &c->svc[i];
        r->cost_per_mtok = r->tokens_out > 0 && isfinite(rep->summary.cost_per_gpu_hour)
                               ? rep->summary.cost_per_gpu_hour * r->gpu_hours / (r->tokens_out / 1e6)
                               : NAN;
        if (i < FS_RUN_SERVICES)
            rep->services[i] = *r;
        int rc = c->res ? fs_results_add_service(c->res, r, err) : 0;
        if (rc)
            return rc;
    }
    return 0;
}

/* The end of the results file: /cost, the skipped rows, /summary and
 * /tenants, then the commit (the file renamed into place). */
static int commit_results(run_ctx_t *c, fs_source_t *src, const fs_cost_rate_t *rates,
                          const fs_cost_report_t *cost, fs_run_report_t *rep, fs_error_t *err)
{
    size_t n_tenants = (size_t)fs_source_tenant_count(src), n_rows = 0;
    const char **tenants = fs_calloc(n_tenants + 1, sizeof *tenants);
    if (!tenants)
        return fs_error_set(err, FS_ENOMEM, "results: out of memory");
    for (size_t i = 0; i < n_tenants; i++)
        tenants[i] = fs_source_tenant_name(src, (int32_t)i);
    const fs_tenant_row_t *trows = fs_stats_tenants(c->stats, &n_rows);
    int rc = rates ? fs_results_add_cost(c->res, cost, tenants, n_tenants, err) : 0;
    if (!rc)
        rc = store_skips(c->res, src, err);
    if (!rc) {
        rc = fs_results_commit(c->res, &rep->summary, trows, n_rows, tenants, n_tenants, err);
        c->res = NULL;   /* freed by commit either way */
    }
    fs_free(tenants);
    return rc;
}

/* The cost rates of the run's pools: *rates NULL when the run has no cost. */
static int make_rates(const fs_config_t *cfg, fs_cost_rate_t **rates, fs_error_t *err)
{
    *rates = fs_calloc(cfg->cluster.n_pools + 1, sizeof **rates);
    if (!*rates)
        return fs_error_set(err, FS_ENOMEM, "cost: out of memory");
    int rc = fs_cost_rates(cfg, *rates, err);
    if (rc == 1) {
        fs_free(*rates);
        *rates = NULL;
        rc = 0;
    }
    return rc;
}

int fs_run_config(const fs_config_t *cfg, const fs_run_opts_t *opts, fs_run_report_t *rep,
                  fs_error_t *err)
{
    run_ctx_t c = {.cfg = cfg, .opts = opts, .err = err, .wall0 = fs_clock_wall()};
    fs_source_t *src = NULL;
    fs_model_t *model = NULL;
    char *canon = NULL;
    fs_pool_info_t *pools = NULL;
    fs_cost_rate_t *rates = NULL;   /* NULL: the run has no cost */
    fs_cost_report_t cost = {0};
    memset(rep, 0, sizeof *rep);

    int mig_recut = 0;      /* a pool re-partitions: /mig_layouts */
    for (size_t i = 0; i < cfg->cluster.n_pools; i++)
        mig_recut |= cfg->cluster.pools[i].mig_recut_given && cfg->cluster.pools[i].mig_recut;
    int rc = open_source(cfg, &src, err);
    if (!rc)
        rc = make_rates(cfg, &rates, err);
    if (!rc && (rc = fs_stats_create(fs_time_to_s(cfg->warmup), &c.stats)))
        fs_error_set(err, rc, "statistics: out of memory");
    if (!rc && cfg->services.n &&
        fs_operator_create(fs_time_to_s(cfg->services.bucket), fs_time_to_s(cfg->warmup),
                           &c.op))
        rc = fs_error_set(err, FS_ENOMEM, "services: out of memory");
    if (!rc && opts->output)
        rc = open_results(&c, mig_recut, &canon, &pools, err);
    if (rc)
        goto out;
    fs_sink_t sink = make_sink(&c, mig_recut, err);
    if ((rc = fs_model_create(cfg, fs_policy_select(&cfg->scheduler), src, &sink, &model, err)))
        goto out;
    fs_model_progress_t prog = {.fn = progress, .ud = &c};
    rc = fs_model_run(model, opts->interrupt, opts->progress || opts->on_progress ? &prog : NULL,
                      err);
    if (opts->progress && !(opts->progress_every > 0))
        fputs("\r\033[K", stderr);
    if ((rc == FS_EINTR || (rc == FS_ESTUCK && fs_model_drain_stop(model))) && c.res)
        rc = commit_interrupted(&c, src, model, rep, rc, err);
    if (rc)
        goto out;
    if ((rc = fs_model_finish(model, &rep->totals, err)))
        goto out;
    rep->truncated = fs_model_truncated(model);
    if ((rc = fs_stats_finish(c.stats, &rep->totals, &rep->summary))) {
        fs_error_set(err, rc, "statistics: %s", fs_error_describe(rc));
        goto out;
    }
    if ((rc = run_cost(rates, model, rep, &cost, err)))
        goto out;
    if (cfg->scheduler.queue == FS_QUEUE_KUEUE && (rc = tenant_quota(model, c.stats, err)))
        goto out;
    rep->wall_s = fs_clock_wall() - c.wall0;
    if ((rc = finish_services(&c, rep, err)))
        goto out;
    fs_operator_finish(c.op, &rep->summary);
    if (c.res)
        rc = commit_results(&c, src, rates, &cost, rep, err);
out:
    if (c.res)
        fs_results_abort(c.res);
    fs_model_destroy(model);
    fs_stats_destroy(c.stats);
    if (src)
        fs_source_destroy(src);
    fs_free(canon);
    fs_free(pools);
    fs_free(rates);
    fs_free(c.svc);
    fs_operator_destroy(c.op);
    fs_cost_report_release(&cost);
    return rc;
}

/* The summary's times in the units every printed table uses (analysis/fs_fmt.h). */
static void fmt_duration(char *buf, size_t n, double s)
{
    fs_fmt_duration(buf, n, s);
}

/* A time of the run: "day D" for runs of two days or more, else hours. */
static void fmt_when(char *buf, size_t n, double s, int days)
{
    if (days)
        snprintf(buf, n, "day %.2f", s / 86400);
    else
        snprintf(buf, n, "%.2f h", s / 3600);
}

/* Which stretch of the run every figure covers, in one line: the
 * measurement window (after warm-up, to the end of the arrivals) for
 * utilization, wait, completion and the window's cost; the whole run,
 * drain included, for what is marked so. */
static void print_window(FILE *f, const fs_config_t *cfg, const fs_run_report_t *rep)
{
    const fs_summary_t *s = &rep->summary;
    double end = rep->totals.end_time;
    int days = end >= 172800;
    char a[32], b[32], c[32], w[32];
    fmt_when(a, sizeof a, s->window_start, days);
    fmt_when(b, sizeof b, s->window_end, days);
    fmt_when(c, sizeof c, end, days);
    fmt_duration(w, sizeof w, s->window_start);
    fprintf(f, "window       %s to %s: the arrivals%s%s%s; figures cover it unless marked "
            "\"whole run\"", a, b, s->window_start > 0 ? " after " : "",
            s->window_start > 0 ? w : "", s->window_start > 0 ? " of warm-up" : "");
    if (end > s->window_end + 1e-6)
        fprintf(f, " (to %s, %s)\n", c, cfg->until == FS_UNTIL_DRAIN ? "the drain included" : "the horizon");
    else
        fprintf(f, " (the run ended there)\n");
}

/* x as a percentage of whole; the held split's states are differences of
 * sums, so a state that is empty can come out as -1e-12: shown as 0. */
static double share_of(double x, double whole)
{
    double p = 100 * x / whole;
    return fabs(x) <= 1e-9 * whole ? 0 : p;
}
static int differ(double a, double b)
{
    return isnan(a) ? !isnan(b) : isnan(b) || a != b;
}

int fs_run_queued_differs(const fs_summary_t *s)
{
    return differ(s->queued_mean, s->wait_mean) || differ(s->queued_p50, s->wait_p50) ||
           differ(s->queued_p95, s->wait_p95) || differ(s->queued_p99, s->wait_p99);
}

void fs_run_print_summary(FILE *f, const fs_config_t *cfg, const fs_run_report_t *rep,
                          const char *output)
{
    const fs_summary_t *s = &rep->summary;
    char a[32], b[32], c[32], d[32], e[32];
    fprintf(f, "scenario     %s (seed %llu)\n", cfg->name ? cfg->name : "?",
            (unsigned long long)cfg->seed);
    fprintf(f, "fleet        %llu GPUs in %zu pool%s\n", (unsigned long long)rep->totals.gpus_total,
            cfg->cluster.n_pools, cfg->cluster.n_pools == 1 ? "" : "s");
    print_window(f, cfg, rep);
    char wd[48] = "";   /* cancelled before they started (workload.trace.cancelled: withdraw) */
    if (s->jobs_withdrawn)
        snprintf(wd, sizeof wd, ", %llu withdrawn", (unsigned long long)s->jobs_withdrawn);
    fprintf(f, "jobs         %llu submitted, %llu completed, %llu unfinished, %llu rejected%s "
            "(whole run); %llu submitted in the window and started\n",
            (unsigned long long)s->jobs_submitted, (unsigned long long)s->jobs_completed,
            (unsigned long long)s->jobs_unfinished, (unsigned long long)s->jobs_rejected, wd,
            (unsigned long long)s->jobs_in_stats);
    fprintf(f, "utilization  %.1f%%   (whole run: %.1f%%, goodput %.1f%%)\n",
            100 * s->utilization, 100 * s->utilization_all, 100 * s->goodput);
    if (s->gpu_s_total > 0)   /* capacity states (#15): whole run, they sum to 100% */
        fprintf(f, "capacity     busy %.1f%%   waiting %.1f%%   idle %.1f%%   down %.1f%%   "
                "(GPU-time, whole run)\n", 100 * s->gpu_s_busy / s->gpu_s_total,
                100 * s->gpu_s_waiting / s->gpu_s_total, 100 * s->gpu_s_idle / s->gpu_s_total,
                100 * s->gpu_s_down / s->gpu_s_total);
    if (s->gpu_s_total > 0 && s->gpu_s_waiting >= 0.01 * s->gpu_s_total) {
        /* the waiting split (#15), when waiting is at least 1% of the GPU-time */
        const char *why = s->gpu_s_quota > 0 ? "for quota" : s->gpu_s_reserved > 0 ? "reserved"
                                                                                     : "blocked";
        fprintf(f, "waiting is   fragmented %.1f%%   held back (%s) %.1f%%   (no queued pod fits "
                "on the fragmented GPUs' nodes)\n", share_of(s->gpu_s_frag, s->gpu_s_waiting), why,
                share_of(s->gpu_s_waiting - s->gpu_s_frag, s->gpu_s_waiting));
    }
    double other = s->gpu_s_busy - s->gpu_s_computing + s->gpu_s_redo;
    if (s->gpu_s_busy > 0 && other > 1e-9 * s->gpu_s_busy)   /* busy is not all useful compute */
        fprintf(f, "busy is      computing %.1f%% (work later lost %.1f%%)   checkpointing %.1f%%   "
                "starting %.1f%%   recovering %.1f%%   serving %.1f%%   unallocated shares %.1f%%\n",
                share_of(s->gpu_s_computing, s->gpu_s_busy), share_of(s->gpu_s_redo, s->gpu_s_busy),
                share_of(s->gpu_s_ckpt, s->gpu_s_busy), share_of(s->gpu_s_startup, s->gpu_s_busy),
                share_of(s->gpu_s_recovering, s->gpu_s_busy),
                share_of(s->gpu_s_serving, s->gpu_s_busy),
                share_of(s->gpu_s_share_idle, s->gpu_s_busy));
    if (s->gpu_s_held_idle > 0)     /* telemetry.activity with duty 0 */
        fprintf(f, "held idle    %.1f%% of busy: computing of jobs whose activity is zero "
                "(telemetry duty 0)\n", share_of(s->gpu_s_held_idle, s->gpu_s_busy));
    fmt_duration(a, sizeof a, s->wait_mean);
    fmt_duration(b, sizeof b, s->wait_p50);
    fmt_duration(c, sizeof c, s->wait_p95);
    fmt_duration(d, sizeof d, s->wait_p99);
    char waited[48];    /* a service-only run has no job: no share (not "nan%") */
    if (isnan(s->wait_prob))
        snprintf(waited, sizeof waited, "no jobs");
    else
        snprintf(waited, sizeof waited, "%.1f%% of jobs waited", 100 * s->wait_prob);
    fprintf(f, "wait         mean %s   p50 %s   p95 %s   p99 %s   (%s)\n", a, b, c, d, waited);
    if (fs_run_queued_differs(s)) {   /* preemptions/requeues: queued after the first start */
        fmt_duration(a, sizeof a, s->queued_mean);
        fmt_duration(b, sizeof b, s->queued_p50);
        fmt_duration(c, sizeof c, s->queued_p95);
        fmt_duration(d, sizeof d, s->queued_p99);
        fprintf(f, "queued       mean %s   p50 %s   p95 %s   p99 %s   (all time queued, "
                "requeues included)\n", a, b, c, d);
    }
    fmt_duration(a, sizeof a, s->jct_mean);
    fmt_duration(b, sizeof b, s->jct_p50);
    fmt_duration(e, sizeof e, s->jct_p95);
    fprintf(f, "completion   mean %s   p50 %s   p95 %s\n", a, b, e);
    fmt_duration(a, sizeof a, s->makespan);
    fprintf(f, "makespan     %s\n", a);
    if (cfg->failures.given)
        fprintf(f, "failures     %llu, %llu jobs interrupted; availability %.2f%% (whole run)\n",
                (unsigned long long)s->failures, (unsigned long long)s->interruptions,
                100 * s->availability);
    if (s->interruptions > 0 || s->gpu_s_ckpt > 0 || s->gpu_s_lost > 0)
        fprintf(f, "recovery     lost %.1f GPU-h, checkpoints %.1f GPU-h (whole run); mean ETTR %.1f%%\n",
                s->gpu_s_lost / 3600.0, s->gpu_s_ckpt / 3600.0, 100 * s->ettr_mean);
    if (isfinite(s->ckpt_interval_mean)) {
        fmt_duration(a, sizeof a, s->ckpt_interval_mean);
        fmt_duration(b, sizeof b, s->ckpt_interval_min);
        static const char *const rule[] = {[FS_CKPT_FIXED] = "fixed interval",
                                           [FS_CKPT_YOUNG] = "Young's rule",
                                           [FS_CKPT_DALY] = "Daly's rule"};
        int k = cfg->recovery.checkpoint;
        fprintf(f, "checkpoints  every %s of compute on average (%s), every %s for the largest "
                "job\n", a, k >= FS_CKPT_FIXED && k <= FS_CKPT_DALY ? rule[k] : "?", b);
    }
    if (s->preemptions > 0) {
        fprintf(f, "preemption   %llu preemption%s (not failures), %.1f GPU-h of work lost to them",
                (unsigned long long)s->preemptions, s->preemptions == 1 ? "" : "s",
                s->gpu_s_lost_preempt / 3600.0);
        if (!isnan(s->cost_preemptions))
            fprintf(f, " ($%.0f)", s->cost_preemptions);
        fputc('\n', f);
    }
    if (!isnan(s->cost_total))
        fprintf(f, "cost         $%.0f in the window: $%.2f per delivered GPU-hour; whole run $%.0f "
                "(idle $%.0f, failures $%.0f; %.1f MWh)\n", s->cost_window,
                s->cost_per_gpu_hour_window, s->cost_total, s->cost_idle, s->cost_failures,
                s->energy_kwh / 1000.0);
    if (!isnan(s->carbon_kg) && fs_cost_carbon_modelled(&cfg->cost)) {
        char grid[96];
        if (cfg->cost.n_carbon_hours)
            snprintf(grid, sizeof grid, "hourly series of %zu h%s", cfg->cost.n_carbon_hours,
                     rep->totals.end_time > 3600.0 * (double)cfg->cost.n_carbon_hours
                         ? ", repeated" : "");
        else
            snprintf(grid, sizeof grid, "%g g/kWh", cfg->cost.carbon_intensity);
        fprintf(f, "carbon       %.3f t CO2e (whole run): %.1f g per delivered GPU-hour; "
                "embodied %.3f t; grid %s\n", s->carbon_kg / 1000.0, s->carbon_per_gpu_hour_g,
                rep->carbon_embodied_kg / 1000.0, grid);
    }
    for (size_t i = 0; i < rep->n_services && i < FS_RUN_SERVICES; i++) {
        const fs_service_row_t *v = &rep->services[i];
        fmt_duration(a, sizeof a, v->ttft_p50);
        fmt_duration(b, sizeof b, v->ttft_p99);
        char met[16], bk[16];   /* no request or bucket in the window: "-", not "nan%" */
        snprintf(met, sizeof met, isnan(v->slo_attainment) ? "-" : "%.2f%%", 100 * v->slo_attainment);
        snprintf(bk, sizeof bk, isnan(v->buckets_met) ? "-" : "%.1f%%", 100 * v->buckets_met);
        fprintf(f, "service      %s: %llu requests, TTFT p50 %s p99 %s, SLO met by %s of "
                "requests and %s of buckets; %.0f GPU-h (%.1f replicas on average, %llu "
                "cold starts)", v->name, (unsigned long long)v->requests, a, b, met, bk, v->gpu_hours,
                rep->totals.end_time > 0 ? v->replica_hours * 3600 / rep->totals.end_time : 0.0,
                (unsigned long long)v->cold_starts);
        if (!isnan(v->cost_per_mtok))
            fprintf(f, "; $%.3f per million tokens", v->cost_per_mtok);
        fputc('\n', f);
    }
    if (rep->n_services > FS_RUN_SERVICES)
        fprintf(f, "service      ... and %zu more (/services)\n", rep->n_services - FS_RUN_SERVICES);
    if (isfinite(s->serving_gpus_peak)) {
        double bk = fs_time_to_s(cfg->services.bucket);
        fmt_duration(b, sizeof b, bk);
        snprintf(a, sizeof a, bk == 3600 ? "hour" : "%s bucket", b);
        fprintf(f, "serving      busiest %s: %.1f replicas holding %.1f GPUs", a,
                s->serving_replicas_peak, s->serving_gpus_peak);
        if (isfinite(s->serving_gpus_daily_peak))
            fprintf(f, "; daily peak %.1f GPUs, %.1f taken from training against the quietest %s",
                    s->serving_gpus_daily_peak, s->serving_gpus_daily_swing, a);
        fputc('\n', f);
    }
    fprintf(f, "engine       %llu events in %.2f s (%.2f M events/s)\n",
            (unsigned long long)s->events, rep->wall_s,
            rep->wall_s > 0 ? (double)s->events / rep->wall_s / 1e6 : 0.0);
    if (rep->totals.rows_skipped)
        fprintf(f, "skipped      %llu trace rows (bad rows in lenient mode, or dropped by an "
                "option; reasons on stderr)\n",
                (unsigned long long)rep->totals.rows_skipped);
    if (output)
        fprintf(f, "results      %s\n", output);
}
