/*
 * fleetsim calibrate: fits what a log does not record -- the capacity it
 * lost to outages (the threshold of `fleetsim trace outages`) and the
 * effective capacity share -- to the recorded waits of a training window,
 * and reports the fit's error on the later window it did not see
 * (docs/validation.md "Replays against recorded waits").
 *
 * Method: a grid over replays.  Every grid point replays the whole trace
 * once (no results file) with the scenario's settings, its pools' nodes
 * scaled by the share and, for a threshold, the outages the rule infers
 * from the log's recorded utilization (cluster.outages, a temporary file).
 * The objective, over the jobs submitted before the split only:
 *   J = KS + |ln((mean_sim + 60) / (mean_rec + 60))| / 2
 *          + |ln((p90_sim + 60) / (p90_rec + 60))| / 2
 * (waits in seconds; the 60 s keeps jobs that never waited from dominating
 * the ratios).  A scenario's own cluster.outages is replaced at every point
 * (threshold 0: none), so that the grid is the same with or without it.  A scenario that sets scheduler.limits.max_jobs_per_user = L
 * adds a third dimension, the per-user limit: none, 1, 2, 4, ... below L,
 * and L (models/fs_limits.h).  The point with the smallest J is the fit; its statistics on
 * the jobs submitted from the split on are the prediction error.
 *
 * The rule on capacity (--max-over F, default 0.05; off: none): a point
 * whose capacity the log's recorded schedule exceeds (more GPUs busy than
 * it has) more than the fraction F of the log's span is replayed and shown
 * but never chosen.  The log contradicts such a capacity: a share below
 * what the site ran stands in for something that is not capacity (per-user
 * limits, reservations), which is better modelled as what it is.
 */
#include "fs_cli.h"
#include "fs_json.h"
#include "cmd_trace_int.h"
#include "../../analysis/fs_compare_rec.h"
#include "../api/fs_runner.h"

#include <pthread.h>
#include <unistd.h>

static const double k_thresholds[] = {0, 0.05, 0.1, 0.2};
static const double k_shares[] = {1.0, 0.9, 0.8, 0.7, 0.6, 0.5, 0.4};
#define N_TH (sizeof k_thresholds / sizeof k_thresholds[0])
#define N_SH (sizeof k_shares / sizeof k_shares[0])
#define MAX_SETS 64
#define MAX_LIMS 34     /* none, 1, 2, 4, ..., 2^31, and L */

typedef struct srow {
    uint64_t id;
    double submit, wait;
} srow_t;

typedef struct rows {
    srow_t *r;
    size_t n, cap;
    size_t withdrawn;           /* /jobs state withdrawn: no recorded start, left out */
} rows_t;

static int on_job(void *ud, const fs_job_row_t *row)
{
    rows_t *rs = ud;
    if (row->state == FS_STATE_WITHDRAWN) {   /* cancelled before it started: no recorded wait */
        rs->withdrawn++;
        return 0;
    }
    if (isnan(row->wait))
        return 0;
    if (fs_grow((void **)&rs->r, &rs->cap, rs->n + 1, sizeof *rs->r))
        return FS_ENOMEM;
    /* a start overhead counts as wait (as in fleetsim compare --recorded) */
    rs->r[rs->n++] = (srow_t){row->id, row->submit, row->wait + row->startup_s};
    return 0;
}

static int by_id(const void *a, const void *b)
{
    uint64_t x = ((const trc_orec_t *)a)->id, y = ((const trc_orec_t *)b)->id;
    return (x > y) - (x < y);
}

typedef struct point {
    double threshold, share;
    uint32_t limit;             /* max_jobs_per_user, 0 none */
    fs_rec_cmp_t win[2];        /* [0] train, [1] test: statistics only */
    size_t n[2];
    size_t withdrawn;           /* jobs withdrawn at their cancel time in its replay */
    int stuck;                  /* its replay did not finish (FS_ESTUCK: the backlog outlived
                                   drain_limit, or a job can never start at this share) */
    int excluded;               /* over > the rule's fraction (--max-over): never chosen */
    double j;                   /* the objective; +inf for a stuck point */
    double over;                /* share of the log's span in which the recorded schedule had
                                   more GPUs busy than this point's capacity */
} point_t;

static double ratio_term(double s, double r)
{
    return fabs(log((s + 60) / (r + 60)));
}

static double objective(const fs_rec_cmp_t *c)
{
    return c->ks + ratio_term(c->sim.mean, c->rec.mean) / 2 + ratio_term(c->sim.p90, c->rec.p90) / 2;
}

typedef struct cal {
    const char *scenario;
    const char **sets;
    size_t n_sets;
    double split_s;
    fs_config_t base;
    trc_orec_t *rec;            /* sorted by id */
    size_t n_rec;
    double gpus;                /* the scenario's GPUs */
    unsigned gpn;               /* GPUs per node of pool 0 (outage files' nodes) */
    unsigned jobs;              /* replays at once (-j), each on its own thread */
    double max_over;            /* the rule: points with over > max_over are not chosen
                                   (--max-over; INFINITY: off) */
    int limits;                 /* the grid has the per-user limit dimension */
} cal_t;

typedef struct bevt {
    double t, d;                /* time, GPUs busy from then on (+ start, - end) */
} bevt_t;

static int by_time(const void *a, const void *b)
{
    const bevt_t *x = a, *y = b;
    return x->t < y->t ? -1 : x->t > y->t ? 1 : (x->d > y->d) - (x->d < y->d);
}

/* The share of the log's span (first start to last end) in which the
 * recorded schedule had more than cap[i] GPUs busy, into over[i], i < n: a
 * capacity the log itself exceeds that long could not have run it (a
 * capacity share then stands in for what is not capacity).  0 or FS_ENOMEM. */
static int recorded_over(const cal_t *c, const double *cap, size_t n, double *over)
{
    bevt_t *e = fs_malloc((2 * c->n_rec + 1) * sizeof *e);
    if (!e)
        return FS_ENOMEM;
    for (size_t i = 0; i < c->n_rec; i++) {
        e[2 * i] = (bevt_t){c->rec[i].start, c->rec[i].gpus};
        e[2 * i + 1] = (bevt_t){c->rec[i].end, -c->rec[i].gpus};
    }
    size_t ne = 2 * c->n_rec;
    qsort(e, ne, sizeof *e, by_time);
    for (size_t k = 0; k < n; k++)
        over[k] = 0;
    double busy = 0, span = ne ? e[ne - 1].t - e[0].t : 0;
    for (size_t i = 0; i + 1 < ne; i++) {
        busy += e[i].d;
        for (size_t k = 0; k < n; k++)
            if (busy > cap[k] + 1e-9)
                over[k] += e[i + 1].t - e[i].t;
    }
    for (size_t k = 0; k < n; k++)
        over[k] = span > 0 ? over[k] / span : 0;
    fs_free(e);
    return 0;
}

/* The GPUs of cfg's pools at capacity share `share` (each pool's nodes
 * rounded, at least one: as replay() scales them). */
static double scaled_gpus(const fs_config_t *cfg, double share)
{
    double gpus = 0;
    for (size_t i = 0; i < cfg->cluster.n_pools; i++) {
        const fs_pool_cfg_t *pc = &cfg->cluster.pools[i];
        gpus += fmax(1, round(pc->nodes * share)) * pc->gpus_per_node;
    }
    return gpus;
}

/* One replay of grid point p; fills its windows' statistics.  tmp: its
 * outage file's path; ws, wr: scratch of n_rec waits. */
static int replay(const cal_t *c, point_t *p, const char *tmp, double *ws, double *wr,
                  fs_error_t *err)
{
    const char *sets[MAX_SETS + 40];
    char buf[40][96];
    size_t ns = 0, nb = 0;
    for (size_t i = 0; i < c->n_sets; i++)
        sets[ns++] = c->sets[i];
    double gpus = 0;
    for (size_t i = 0; i < c->base.cluster.n_pools && nb < 39; i++) {
        const fs_pool_cfg_t *pc = &c->base.cluster.pools[i];
        double nodes = fmax(1, round(pc->nodes * p->share));
        gpus += nodes * pc->gpus_per_node;
        snprintf(buf[nb], sizeof buf[nb], "cluster.pools.%zu.nodes=%.0f", i, nodes);
        sets[ns++] = buf[nb++];
    }
    if (c->limits) {
        snprintf(buf[nb], sizeof buf[nb], "scheduler.limits.max_jobs_per_user=%u", p->limit);
        sets[ns++] = buf[nb++];
    }
    int rc = 0;
    /* threshold 0 is no outage: a scenario's own cluster.outages gives way
     * to the rule's file at every point (at 0, one with no row) */
    if (p->threshold > 0 || c->base.cluster.outages) {
        size_t no, ho, hours;
        if ((rc = trc_outages_write(c->scenario, c->rec, c->n_rec, gpus, p->threshold, c->gpn,
                                    tmp, &no, &ho, &hours, err)))
            return rc;
        snprintf(buf[nb], sizeof buf[nb], "cluster.outages=%s", tmp);
        sets[ns++] = buf[nb++];
    }
    fs_config_t cfg;
    if ((rc = fs_scenario_load_file(c->scenario, sets, ns, &cfg, err)))
        return rc;
    rows_t rows = {0};
    fs_run_opts_t opts = {.on_job = on_job, .on_job_ud = &rows};
    fs_run_report_t rep;
    rc = fs_run_config(&cfg, &opts, &rep, err);
    fs_config_release(&cfg);
    if (rc == FS_ESTUCK) {
        /* a capacity that cannot finish the log is no fit: the point is
         * kept in the table, marked, and never chosen */
        fs_error_clear(err);
        fs_free(rows.r);
        p->stuck = 1;
        p->j = INFINITY;
        return 0;
    }
    for (int w = 0; w < 2 && !rc; w++) {
        size_t m = 0;
        for (size_t i = 0; i < rows.n; i++) {
            if ((rows.r[i].submit < c->split_s) != (w == 0))
                continue;
            trc_orec_t key = {.id = rows.r[i].id};
            const trc_orec_t *x = bsearch(&key, c->rec, c->n_rec, sizeof key, by_id);
            if (!x)
                continue;
            ws[m] = rows.r[i].wait;
            wr[m] = x->start - x->submit;
            m++;
        }
        p->n[w] = m;
        if (fs_rec_stats(ws, wr, m, &p->win[w]))
            rc = fs_error_set(err, FS_ENOMEM, "out of memory");
    }
    fs_free(rows.r);
    p->withdrawn = rows.withdrawn;
    if (!rc)
        p->j = objective(&p->win[0]);
    return rc;
}

static void print_window(const char *name, const point_t *p, int w)
{
    const fs_rec_cmp_t *c = &p->win[w];
    printf("%-6s %7zu  %6.2f / %6.2f h  %6.2f / %6.2f h  %6.2f / %6.2f h  %5.3f  %6.3f\n", name,
           p->n[w], c->sim.mean / 3600, c->rec.mean / 3600, c->sim.p50 / 3600, c->rec.p50 / 3600,
           c->sim.p90 / 3600, c->rec.p90 / 3600, c->ks, c->spearman);
}

static int within(double s, double r)
{
    return r > 0 && fabs(s / r - 1) <= 0.2;
}

static void json_window(fs_json_t *j, const char *key, const point_t *p, int w)
{
    const fs_rec_cmp_t *c = &p->win[w];
    fs_json_key(j, key);
    fs_json_begin_object(j);
    fs_json_key(j, "jobs");
    fs_json_uint(j, p->n[w]);
    const char *names[] = {"mean", "p50", "p90", "p99"};
    const double sv[] = {c->sim.mean, c->sim.p50, c->sim.p90, c->sim.p99};
    const double rv[] = {c->rec.mean, c->rec.p50, c->rec.p90, c->rec.p99};
    for (int k = 0; k < 4; k++) {
        char nm[32];
        snprintf(nm, sizeof nm, "%s_sim_s", names[k]);
        fs_json_key(j, nm);
        fs_json_num(j, sv[k]);
        snprintf(nm, sizeof nm, "%s_rec_s", names[k]);
        fs_json_key(j, nm);
        fs_json_num(j, rv[k]);
    }
    fs_json_key(j, "ks");
    fs_json_num(j, c->ks);
    fs_json_key(j, "spearman");
    fs_json_num(j, c->spearman);
    fs_json_end_object(j);
}

static int rule_on(const cal_t *c)
{
    return c->max_over < INFINITY;
}

static void json_point_id(fs_json_t *j, const cal_t *c, const point_t *p)
{
    fs_json_key(j, "threshold");
    fs_json_num(j, p->threshold);
    fs_json_key(j, "share");
    fs_json_num(j, p->share);
    if (c->limits) {
        fs_json_key(j, "max_jobs_per_user");
        fs_json_uint(j, p->limit);
    }
}

/* best: the fit (the rule kept); any: the first of the least objective of
 * every finished point, excluded or not (== best when the rule changed
 * nothing). */
static void report(const cal_t *c, const point_t *pts, size_t np, size_t best, size_t any,
                   int json)
{
    const point_t *b = &pts[best];
    size_t n_excl = 0;
    for (size_t i = 0; i < np; i++)
        n_excl += pts[i].excluded;
    int t_ks = b->win[1].ks <= 0.15, t_sp = b->win[1].spearman >= 0.5;
    int t_mean = within(b->win[1].sim.mean, b->win[1].rec.mean);
    int t_p90 = within(b->win[1].sim.p90, b->win[1].rec.p90);
    if (json) {
        fs_json_t j;
        fs_json_init(&j, stdout);
        fs_json_begin_object(&j);
        fs_json_key(&j, "command");
        fs_json_str(&j, "calibrate");
        fs_json_key(&j, "scenario");
        fs_json_str(&j, c->scenario);
        fs_json_key(&j, "split_s");
        fs_json_num(&j, c->split_s);
        fs_json_key(&j, "max_over");        /* the rule's fraction; null: off */
        fs_json_num(&j, c->max_over);
        fs_json_key(&j, "grid");
        fs_json_begin_array(&j);
        for (size_t i = 0; i < np; i++) {
            fs_json_begin_object(&j);
            json_point_id(&j, c, &pts[i]);
            fs_json_key(&j, "objective");
            fs_json_num(&j, pts[i].j);
            fs_json_key(&j, "finished");
            fs_json_bool(&j, !pts[i].stuck);
            fs_json_key(&j, "recorded_over_capacity");
            fs_json_num(&j, pts[i].over);
            fs_json_key(&j, "excluded");    /* by the rule (--max-over): never chosen */
            fs_json_bool(&j, pts[i].excluded);
            fs_json_end_object(&j);
        }
        fs_json_end_array(&j);
        fs_json_key(&j, "best");
        fs_json_begin_object(&j);
        json_point_id(&j, c, b);
        fs_json_key(&j, "withdrawn");
        fs_json_uint(&j, b->withdrawn);
        json_window(&j, "train", b, 0);
        json_window(&j, "test", b, 1);
        fs_json_end_object(&j);
        /* the least objective of every finished point: the fit without the
         * rule (the same point as best when the rule changed nothing) */
        fs_json_key(&j, "best_without_rule");
        fs_json_begin_object(&j);
        json_point_id(&j, c, &pts[any]);
        fs_json_key(&j, "objective");
        fs_json_num(&j, pts[any].j);
        fs_json_key(&j, "recorded_over_capacity");
        fs_json_num(&j, pts[any].over);
        fs_json_end_object(&j);
        fs_json_key(&j, "targets_met");
        fs_json_begin_object(&j);
        fs_json_key(&j, "ks");
        fs_json_bool(&j, t_ks);
        fs_json_key(&j, "spearman");
        fs_json_bool(&j, t_sp);
        fs_json_key(&j, "mean");
        fs_json_bool(&j, t_mean);
        fs_json_key(&j, "p90");
        fs_json_bool(&j, t_p90);
        fs_json_end_object(&j);
        fs_json_end_object(&j);
        fs_json_finish(&j);
        return;
    }
    printf("calibrate %s: train = jobs submitted before %.1f d, test = from then on\n",
           c->scenario, c->split_s / 86400);
    printf("method: a grid of replays, outage threshold (0: none) x capacity share%s;\n"
           "objective on the training window: KS + |ln mean ratio|/2 + |ln p90 ratio|/2\n",
           c->limits ? " x jobs per user (0: no limit)" : "");
    printf("over: the share of the log's span in which the recorded schedule had more GPUs busy "
           "than the point's capacity\n");
    if (rule_on(c))
        printf("rule: a point with over > %.1f%% is not chosen: the log ran more than its "
               "capacity (--max-over %g; off: any point)\n", 100 * c->max_over, c->max_over);
    else
        printf("rule: off (--max-over off): any point may be chosen, whatever its over\n");
    if (c->limits)
        printf("%9s %6s %5s %9s %6s %8s %6s\n", "threshold", "share", "limit", "objective", "KS",
               "Spearman", "over");
    else
        printf("%9s %6s %9s %6s %8s %6s\n", "threshold", "share", "objective", "KS", "Spearman",
               "over");
    size_t n_stuck = 0;
    for (size_t i = 0; i < np; i++) {
        if (pts[i].stuck) {
            n_stuck++;
            if (c->limits)
                printf("%9.2f %6.2f %5u %9s  did not finish (drain_limit, or a job that never "
                       "starts)\n", pts[i].threshold, pts[i].share, pts[i].limit, "-");
            else
                printf("%9.2f %6.2f %9s  did not finish (drain_limit, or a job that never "
                       "starts)\n", pts[i].threshold, pts[i].share, "-");
            continue;
        }
        const char *mark = i == best ? "  <- fit"
                           : i == any ? "  excluded (over), the least objective"
                           : pts[i].excluded ? "  excluded (over)" : "";
        if (c->limits)
            printf("%9.2f %6.2f %5u %9.3f %6.3f %8.3f %5.1f%%%s\n", pts[i].threshold,
                   pts[i].share, pts[i].limit, pts[i].j, pts[i].win[0].ks, pts[i].win[0].spearman,
                   100 * pts[i].over, mark);
        else
            printf("%9.2f %6.2f %9.3f %6.3f %8.3f %5.1f%%%s\n", pts[i].threshold, pts[i].share,
                   pts[i].j, pts[i].win[0].ks, pts[i].win[0].spearman, 100 * pts[i].over, mark);
    }
    if (n_stuck)
        printf("%zu of %zu grid points did not finish their replay: never chosen\n", n_stuck, np);
    if (n_excl)
        printf("%zu of %zu grid points have over > %.1f%%: not chosen\n", n_excl, np,
               100 * c->max_over);
    if (any != best) {
        printf("without the rule the fit would be threshold %.2f, capacity share %.2f",
               pts[any].threshold, pts[any].share);
        if (c->limits)
            printf(", jobs per user %u", pts[any].limit);
        printf(" (objective %.3f, over %.1f%%): a capacity the log exceeds stands in for what is "
               "not capacity (per-user limits, reservations); model that instead "
               "(docs/validation.md)\n", pts[any].j, 100 * pts[any].over);
    }
    if (c->limits)
        printf("fit: threshold %.2f, capacity share %.2f, jobs per user %u (0: no limit)\n",
               b->threshold, b->share, b->limit);
    else
        printf("fit: threshold %.2f, capacity share %.2f\n", b->threshold, b->share);
    printf("%-6s %7s  %17s  %17s  %17s  %5s  %6s\n", "window", "jobs", "mean sim / rec",
           "p50 sim / rec", "p90 sim / rec", "KS", "Spear.");
    print_window("train", b, 0);
    print_window("test", b, 1);
    if (b->withdrawn)
        printf("withdrawn: %zu jobs cancelled before they started left the queue at their cancel "
               "time (workload.trace.cancelled: withdraw); no recorded start: not compared\n",
               b->withdrawn);
    printf("targets on the test window: KS <= 0.15 %s, Spearman >= 0.5 %s, mean within 20%% %s, "
           "p90 within 20%% %s\n", t_ks ? "met" : "NOT met", t_sp ? "met" : "NOT met",
           t_mean ? "met" : "NOT met", t_p90 ? "met" : "NOT met");
}

/* The grid's replays on c->jobs threads: each takes the next point not
 * taken, with its own outage file and scratch.  The first error (in grid
 * order) ends the taking; the points are the same however the threads ran. */
typedef struct pool {
    const cal_t *c;
    point_t *pts;
    size_t n, next;
    pthread_mutex_t mu;
    int rc;                     /* the error of point err_at, 0 none */
    size_t err_at;
    fs_error_t err;
} pool_t;

typedef struct worker {
    pool_t *pl;
    unsigned k;
    int started;
} worker_t;

static void pool_fail(pool_t *pl, size_t i, int rc, const fs_error_t *e)
{
    pthread_mutex_lock(&pl->mu);
    if (!pl->rc || i < pl->err_at) {
        pl->rc = rc;
        pl->err_at = i;
        pl->err = *e;
    }
    pthread_mutex_unlock(&pl->mu);
}

static void *work(void *arg)
{
    worker_t *w = arg;
    pool_t *pl = w->pl;
    const cal_t *c = pl->c;
    char tmp[80];
    snprintf(tmp, sizeof tmp, "%s/fleetsim-calibrate-%ld-%u.csv",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (long)getpid(), w->k);
    if (strlen(tmp) >= sizeof tmp - 1)
        snprintf(tmp, sizeof tmp, "/tmp/fleetsim-calibrate-%ld-%u.csv", (long)getpid(), w->k);
    double *ws = fs_malloc((c->n_rec ? c->n_rec : 1) * sizeof *ws);
    double *wr = fs_malloc((c->n_rec ? c->n_rec : 1) * sizeof *wr);
    fs_error_t e;
    fs_error_clear(&e);
    if (!ws || !wr)
        pool_fail(pl, 0, fs_error_set(&e, FS_ENOMEM, "out of memory"), &e);
    for (;;) {
        pthread_mutex_lock(&pl->mu);
        size_t i = pl->next < pl->n && !pl->rc ? pl->next++ : pl->n;
        pthread_mutex_unlock(&pl->mu);
        if (i == pl->n)
            break;
        int rc = fs_cli_stop ? fs_error_set(&e, FS_EINTR, "interrupted")
                             : replay(c, &pl->pts[i], tmp, ws, wr, &e);
        if (rc)
            pool_fail(pl, i, rc, &e);
    }
    remove(tmp);
    fs_free(ws);
    fs_free(wr);
    return NULL;
}

/* Runs every point of pts[0..n) (c->jobs at once).  0 or the first error. */
static int run_grid(const cal_t *c, point_t *pts, size_t n, fs_error_t *err)
{
    pool_t pl = {.c = c, .pts = pts, .n = n};
    if (pthread_mutex_init(&pl.mu, NULL))
        return fs_error_set(err, FS_ENOMEM, "cannot create a mutex");
    unsigned nt = c->jobs < n ? c->jobs : (unsigned)n;
    worker_t *ws = fs_calloc(nt ? nt : 1, sizeof *ws);
    pthread_t *th = fs_calloc(nt ? nt : 1, sizeof *th);
    int rc = 0;
    if (!ws || !th) {
        rc = fs_error_set(err, FS_ENOMEM, "out of memory");
        nt = 0;
    }
    for (unsigned k = 0; k < nt; k++) {
        ws[k] = (worker_t){&pl, k, 0};
        if (k + 1 < nt)
            ws[k].started = pthread_create(&th[k], NULL, work, &ws[k]) == 0;
    }
    if (nt)
        work(&ws[nt - 1]);      /* the last on this thread (with -j 1, the only one) */
    for (unsigned k = 0; k + 1 < nt; k++)
        if (ws[k].started)
            pthread_join(th[k], NULL);
    pthread_mutex_destroy(&pl.mu);
    fs_free(ws);
    fs_free(th);
    if (!rc && pl.rc) {
        *err = pl.err;
        rc = pl.rc;
    }
    return rc;
}

static int calibrate(cal_t *c, int json, fs_error_t *err)
{
    int rc = fs_scenario_load_file(c->scenario, c->sets, c->n_sets, &c->base, err);
    if (rc)
        return rc;
    uint32_t lims[MAX_LIMS] = {0};
    size_t nl = 1;
    uint32_t lmax = c->base.scheduler.limits.max_jobs_per_user;
    c->limits = lmax > 0;
    for (uint64_t v = 1; c->limits && v < lmax; v *= 2)
        lims[nl++] = (uint32_t)v;
    if (c->limits)
        lims[nl++] = lmax;
    point_t *pts = fs_calloc(N_TH * N_SH * nl, sizeof *pts);
    size_t np = 0, best = 0;
    if (!pts) {
        rc = fs_error_set(err, FS_ENOMEM, "out of memory");
        goto out;
    }
    if (c->base.workload.kind != FS_WORKLOAD_TRACE) {
        rc = fs_error_set(err, FS_EINVAL, "%s: workload: calibrate needs a trace replay "
                          "(workload.trace) whose trace records starts", c->scenario);
        goto out;
    }
    fs_source_t *src = NULL;
    size_t no_rec = 0;
    if ((rc = fs_trace_open(c->base.workload.trace.format ? c->base.workload.trace.format : "native",
                            c->base.workload.trace.path, &c->base.workload.trace.opts, &src, err)))
        goto out;
    rc = trc_outage_records(src, c->base.workload.trace.path, &c->rec, &c->n_rec, &no_rec, err);
    fs_source_destroy(src);
    if (rc)
        goto out;
    qsort(c->rec, c->n_rec, sizeof *c->rec, by_id);
    double first = INFINITY, last = -INFINITY;
    for (size_t i = 0; i < c->n_rec; i++) {
        first = fmin(first, c->rec[i].submit);
        last = fmax(last, c->rec[i].submit);
    }
    if (isnan(c->split_s))
        c->split_s = (first + last) / 2;
    c->gpn = c->base.cluster.pools[0].gpus_per_node;
    for (size_t i = 1; i < c->base.cluster.n_pools; i++)
        if (c->base.cluster.pools[i].gpus_per_node != c->gpn) {
            rc = fs_error_set(err, FS_EINVAL, "%s: cluster.pools: calibrate needs pools of one "
                              "gpus_per_node (the outage file counts nodes)", c->scenario);
            goto out;
        }
    if (no_rec)
        fprintf(stderr, "fleetsim calibrate: %zu jobs record no start or end: left out of the fit\n",
                no_rec);
    if (c->limits) {
        size_t named = 0;
        for (size_t i = 0; i < c->n_rec; i++)
            named += c->rec[i].tenant >= 0;
        if (!named)
            fprintf(stderr, "fleetsim calibrate: no job of the trace names a user: the per-user "
                            "limit cannot act (every limit gives the same replay)\n");
    }
    double caps[N_SH], over[N_SH];
    for (size_t s = 0; s < N_SH; s++)
        caps[s] = scaled_gpus(&c->base, k_shares[s]);
    if (recorded_over(c, caps, N_SH, over)) {
        rc = fs_error_set(err, FS_ENOMEM, "out of memory");
        goto out;
    }
    for (size_t t = 0; t < N_TH; t++)
        for (size_t s = 0; s < N_SH * nl; s++) {
            point_t *p = &pts[np++];
            p->threshold = k_thresholds[t];
            p->share = k_shares[s / nl];
            p->limit = lims[s % nl];
            p->over = over[s / nl];
            p->excluded = p->over > c->max_over;
        }
    rc = run_grid(c, pts, np, err);
    /* the first of the least objective: of the points the rule keeps (the
     * fit, best), and of all (any) */
    size_t any = 0;
    int have = 0;
    for (size_t i = 0; i < np && !rc; i++) {
        if (pts[i].j < pts[any].j)
            any = i;
        if (!pts[i].excluded && !pts[i].stuck && (!have || pts[i].j < pts[best].j)) {
            best = i;
            have = 1;
        }
    }
    if (!rc && np && pts[any].stuck)
        rc = fs_error_set(err, FS_ESTUCK, "%s: none of the %zu grid points finished its replay "
                          "(the backlog outlived drain_limit, or a job can never start): raise "
                          "drain_limit, or check the trace against the cluster",
                          c->scenario, np);
    else if (!rc && np && !have)
        rc = fs_error_set(err, FS_EINVAL, "%s: cluster: the recorded schedule had more GPUs busy "
                          "than every grid point's capacity more than %.1f%% of the time (the "
                          "whole cluster: %.1f%%): the log ran on a larger machine than the "
                          "scenario's; check cluster.pools, or give --max-over off",
                          c->scenario, 100 * c->max_over, 100 * over[0]);
    if (!rc)
        report(c, pts, np, best, any, json);
out:
    fs_free(pts);
    fs_free(c->rec);
    fs_config_release(&c->base);
    return rc;
}

int fs_cmd_calibrate(int argc, char **argv)
{
    const char *sets[MAX_SETS];
    cal_t c = {.sets = sets, .split_s = NAN, .jobs = 1, .max_over = 0.05};
    int json = 0;
    fs_cli_getopt_t g;
    fs_cli_getopt_init(&g, "calibrate", argc, argv, fs_cli_find("calibrate")->opts);
    for (int id; (id = fs_cli_getopt(&g)) != FS_CLI_END;) {
        const char *a = g.opt ? g.opt : g.arg, *v = g.arg;
        if (id == 'h') {
            fs_cli_print_usage(stdout, fs_cli_find("calibrate"));
            return 0;
        } else if (id == FS_OPT_SET) {
            if (!v || !strchr(v, '='))
                return fs_cli_usage_error("calibrate", "--set needs KEY=VALUE");
            if (c.n_sets == MAX_SETS)
                return fs_cli_usage_error("calibrate", "at most %d --set", MAX_SETS);
            sets[c.n_sets++] = v;
        } else if (id == FS_OPT_SPLIT) {
            char *end = NULL;
            double d = v ? strtod(v, &end) : NAN;
            if (!v || *end || !(d >= 0 && d < 1e6))
                return fs_cli_usage_error("calibrate", "--split needs a number of days >= 0 "
                                                       "(from the trace's first submission)");
            c.split_s = d * 86400;
        } else if (id == FS_OPT_MAX_OVER) {
            char *end = NULL;
            double f = !v ? NAN : strcmp(v, "off") == 0 ? INFINITY : strtod(v, &end);
            if (!v || (end && *end) || !(f >= 0 && (f <= 1 || f == INFINITY)))
                return fs_cli_usage_error("calibrate", "--max-over needs a fraction from 0 to 1 "
                                                       "or 'off'");
            c.max_over = f;
        } else if (id == FS_OPT_JSON) {
            json = 1;
        } else if (id == 'j') {
            char *end = NULL;
            long n = v ? strtol(v, &end, 10) : 0;
            if (!v || *end || n < 1 || n > 256)
                return fs_cli_usage_error("calibrate", "-j needs a number of threads from 1 to "
                                                       "256");
            c.jobs = (unsigned)n;
        } else if (id == FS_CLI_BAD) {
            return g.status;
        } else if (!c.scenario) {
            c.scenario = a;
        } else {
            return fs_cli_usage_error("calibrate", "only one scenario file may be given");
        }
    }
    if (!c.scenario)
        return fs_cli_usage_error("calibrate", "give a scenario that replays a trace with "
                                               "recorded starts");
    fs_cli_catch_stop(1);
    fs_error_t err;
    fs_error_clear(&err);
    int rc = calibrate(&c, json, &err);
    if (rc) {
        fprintf(stderr, "fleetsim calibrate: %s\n", err.msg);
        return fs_error_exit_status(rc);
    }
    return 0;
}
