/*
 * The policy benchmarks of `fleetsim bench` (see bench_policy.h).
 *
 * Workloads are generated in memory (fs_memsrc) so that trace parsing is
 * not measured; no rows are written (NULL sink): what is timed is the event
 * loop, the model and the policy.  Sizes are the mix of the end-to-end
 * benchmark (1-128 GPUs), run times lognormal (median 30 min, sigma 1.2),
 * user estimates 1-3x the run time.
 *   easy   10,000 GPUs (1,250 x 8), FIFO order + exact EASY; 10,000 jobs
 *          queued at time 0, then Poisson arrivals at 105% offered load,
 *          so the queue stays about 10,000 deep (its mean depth is printed).
 *   slurm  10,000 GPUs, Slurm multifactor (age 1000, fair share 5000 over
 *          20 tenants, job size 100, QOS 10000), PriorityCalcPeriod 5 min;
 *          10,000 jobs queued at time 0, then 100% load (a deep queue);
 *          then the same with conservative backfill in Slurm's bounded mode.
 *   kueue  10,000 GPUs, 100 ClusterQueues of 100 GPUs in 10 cohorts, one
 *          per tenant (100 tenants); 10,000 jobs queued at time 0, then 80%
 *          load; borrowing only, then with withinClusterQueue and
 *          reclaimWithinCohort LowerPriority (5-minute checkpoints).
 *   volcano 10,000 GPUs, 20 tenants in 4 Volcano queues (weights 1-4), drf,
 *          reclaim, schedule-period 1 s, 80% load.
 *   las    10,000 GPUs, Tiresias 2D-LAS (preemptive; thresholds 3600 and
 *          36000 GPU-s: three queues; promote knob 8; work kept by 1 s
 *          checkpoints), the workload of easy at 95% load.
 *   bounded 10,000 GPUs, FIFO order + conservative backfill in Slurm's
 *          bounded mode (bf.mode slurm: bf_interval 30 s, bf_max_job_test
 *          100, bf_resolution 60 s, bf_window 1 day), the workload of easy
 *          (a queue 10,000 deep and more).
 * Offered load = rate x mean GPUs x mean run time (the lognormal's mean,
 * exp(sigma^2/2) x median) / GPUs.
 * FS_BENCH_ONLY=easy|slurm|volcano|kueue|las|bounded runs one of them;
 * FS_BENCH_ONLY=conservative (only on request) runs the bounded case's
 * queue under exact conservative backfill, whose cost grows with the
 * queue's depth (docs/performance.md: about 1,000 jobs/s at 2,000 jobs);
 * FS_BENCH_SLOW=1 runs the composable scheduler's slow paths (before/after).
 */
#include "bench_policy.h"
#include "../../models/fs_model.h"
#include "../../models/fs_policy.h"
#include "../../models/fs_sched.h"
#include "../../scenarios/fs_scenario.h"
#include "../../sim/fs_alloc.h"
#include "../../sim/fs_rng.h"
#include "../../traces/fs_memsrc.h"
#include "../fs_clock.h"

#include <gsl/gsl_randist.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* n jobs: the first `prefill` at time 0, then Poisson at `load` x the
 * fleet's capacity.  Returns an fs_malloc'd array or NULL. */
static fs_job_t *make_jobs(size_t n, size_t prefill, double load, uint32_t gpus, int tenants)
{
    static const uint32_t sizes[] = {1, 2, 4, 8, 16, 32, 64, 128};
    static const double probs[] = {0.4, 0.1, 0.1, 0.2, 0.1, 0.05, 0.03, 0.02};
    const double mean_g = 10.28, mean_run_s = 1800 * exp(1.2 * 1.2 / 2); /* lognormal mean */
    double rate = load * gpus / (mean_g * mean_run_s);
    fs_job_t *j = fs_malloc(n * sizeof *j);
    fs_rng_t r;
    if (!j || fs_rng_init(&r, 42, 0, FS_RNG_TRACE, 0)) {
        fs_free(j);
        return NULL;
    }
    gsl_ran_discrete_t *mix = gsl_ran_discrete_preproc(8, probs);
    double t = 0;
    for (size_t i = 0; i < n; i++) {
        if (i >= prefill)
            t += gsl_ran_exponential(r.g, 1.0 / rate);
        fs_job_init(&j[i]);
        j[i].id = i + 1;
        j[i].submit = (fs_time_t)(t * 1e6);
        j[i].gpus = sizes[gsl_ran_discrete(r.g, mix)];
        double d = gsl_ran_lognormal(r.g, log(1800.0), 1.2);
        j[i].duration = (fs_time_t)(d * 1e6) + 1;
        j[i].estimate = (fs_time_t)(d * (1 + 2 * gsl_rng_uniform(r.g)) * 1e6) + 1;
        j[i].tenant = tenants ? (int32_t)gsl_rng_uniform_int(r.g, (unsigned long)tenants) : -1;
        j[i].priority = (int32_t)gsl_rng_uniform_int(r.g, 4);
    }
    gsl_ran_discrete_free(mix);
    fs_rng_release(&r);
    return j;
}

/* Runs one case; *us_job (may be NULL) gets its CPU us per job. */
static int bench_run(const char *label, const fs_config_t *cfg, const fs_job_t *jobs, size_t n,
                     const char *const *tenants, size_t n_tenants, double *us_job)
{
    fs_source_t *src;
    fs_model_t *m;
    fs_error_t err;
    fs_error_clear(&err);
    if (fs_memsrc_create(jobs, n, tenants, n_tenants, NULL, 0, &src, &err) ||
        fs_model_create(cfg, fs_policy_select(&cfg->scheduler), src, NULL, &m, &err)) {
        fprintf(stderr, "fleetsim bench: %s\n", err.msg);
        return 1;
    }
    /* FS_BENCH_SLOW=1: the scheduler's slow paths (the reference the fast
     * ones are proven equal to), for before/after figures */
    const char *slow = getenv("FS_BENCH_SLOW");
    if (slow && strcmp(slow, "1") == 0 && fs_policy_select(&cfg->scheduler) == &fs_policy_sched)
        fs_sched_set_fast(fs_model_policy_state(m), 0);
    double t0 = fs_clock_wall(), c0 = fs_clock_cpu();
    int rc = fs_model_run(m, NULL, NULL, &err);
    double dt = fs_clock_wall() - t0, dc = fs_clock_cpu() - c0;
    fs_run_totals_t t;
    if (!rc)
        rc = fs_model_finish(m, &t, &err);
    fs_model_destroy(m);
    fs_source_destroy(src);
    if (rc) {
        fprintf(stderr, "fleetsim bench: %s\n", err.msg);
        return 1;
    }
    if (us_job)
        *us_job = dc * 1e6 / (double)n;
    printf("  %-40s %9.0f jobs/s wall, %9.0f jobs/s CPU  (%.2f s; mean queue %.0f jobs)\n",
           label, (double)n / dt, (double)n / dc, dt, t.jobs_queued_integral / t.end_time);
    fflush(stdout);
    return 0;
}

static int bench_one(const char *label, const fs_config_t *cfg, const fs_job_t *jobs, size_t n,
                     const char *const *tenants, size_t n_tenants)
{
    return bench_run(label, cfg, jobs, n, tenants, n_tenants, NULL);
}

/* Kueue: 100 ClusterQueues t0..t99 (tenant = CQ name), 100 GPUs of nominal
 * quota each, in 10 cohorts of 10: borrowing only, then with preemption
 * (withinClusterQueue and reclaimWithinCohort LowerPriority; priorities
 * 0-3). */
static int bench_kueue(fs_config_t *cfg, const fs_job_t *j, size_t n)
{
    enum { NQ = 100 };
    char names[NQ][8], cohorts[10][8];
    const char *tn[NQ];
    fs_kueue_cq_cfg_t cq[NQ];
    fs_kueue_quota_cfg_t quota[NQ];
    fs_sched_cfg_t keep = cfg->scheduler;
    int rc = 0;
    for (int preempt = 0; preempt <= 1 && !rc; preempt++) {
        for (int i = 0; i < NQ; i++) {
            snprintf(names[i], sizeof names[i], "t%d", i);
            snprintf(cohorts[i / 10], sizeof cohorts[i / 10], "c%d", i / 10);
            tn[i] = names[i];
            quota[i] = (fs_kueue_quota_cfg_t){"main", 100, -1, -1, FS_KRES_GPU};
            int p = preempt ? FS_KUEUE_LOWER_PRIORITY : FS_KUEUE_NEVER;
            cq[i] = (fs_kueue_cq_cfg_t){.name = names[i], .cohort = cohorts[i / 10],
                                        .quotas = &quota[i], .n_quotas = 1, .within_cq = p,
                                        .reclaim = p, .borrow_max_priority = NAN, .weight = 1};
        }
        cfg->scheduler.queue = FS_QUEUE_KUEUE;
        cfg->scheduler.backfill = FS_BACKFILL_NONE;
        cfg->scheduler.kueue.cqs = cq;
        cfg->scheduler.kueue.n_cqs = NQ;
        cfg->scheduler.checkpoint_interval = preempt ? 300 * FS_US_PER_S : 0; /* victims keep work */
        rc = bench_one(preempt ? "Kueue 100 CQs + preemption, 5 min ckpt"
                               : "Kueue 100 CQs in 10 cohorts, borrowing",
                       cfg, j, n, tn, NQ);
        cfg->scheduler = keep;  /* the config owns none of cq */
    }
    return rc;
}


/* One row of the table (FS_BENCH_ONLY=table): a queue order, backfill or
 * placement on the table's workload. */
typedef struct tcase {
    const char *label;
    int queue, backfill, bf_mode, placement, preemption;
} tcase_t;

/* FS_BENCH_ONLY=table: every queue order, backfill and placement on one
 * workload (10,000 GPUs, 90% load, no backlog, 20 tenants; checkpoints
 * every minute for the preemptive orders), CPU us per job.
 * docs/performance.md's policy table runs it at 10^5, 10^6 and 10^7 jobs;
 * FS_BENCH_TABLE=substring runs the rows whose label contains it. */
static int bench_table(fs_config_t *cfg, size_t n, const char *const *tn)
{
    static const tcase_t rows[] = {
        {"queue fifo (best effort)", FS_QUEUE_FIFO, FS_BACKFILL_NONE, 0, FS_PLACE_PACK, FS_PREEMPT_AUTO},
        {"queue priority", FS_QUEUE_PRIORITY, FS_BACKFILL_NONE, 0, FS_PLACE_PACK, FS_PREEMPT_AUTO},
        {"queue sjf", FS_QUEUE_SJF, FS_BACKFILL_NONE, 0, FS_PLACE_PACK, FS_PREEMPT_AUTO},
        {"queue srtf (preemptive)", FS_QUEUE_SRTF, FS_BACKFILL_NONE, 0, FS_PLACE_PACK, FS_PREEMPT_AUTO},
        {"queue las (2D-LAS, preemptive)", FS_QUEUE_LAS, FS_BACKFILL_NONE, 0, FS_PLACE_PACK, FS_PREEMPT_AUTO},
        {"queue slurm (multifactor)", FS_QUEUE_SLURM, FS_BACKFILL_NONE, 0, FS_PLACE_PACK, FS_PREEMPT_AUTO},
        {"queue wfp", FS_QUEUE_WFP, FS_BACKFILL_NONE, 0, FS_PLACE_PACK, FS_PREEMPT_AUTO},
        {"queue volcano (4 queues, drf)", FS_QUEUE_VOLCANO, FS_BACKFILL_NONE, 0, FS_PLACE_PACK, FS_PREEMPT_AUTO},
        {"queue kueue (20 CQs, 4 cohorts)", FS_QUEUE_KUEUE, FS_BACKFILL_NONE, 0, FS_PLACE_PACK, FS_PREEMPT_AUTO},
        {"backfill easy (fifo)", FS_QUEUE_FIFO, FS_BACKFILL_EASY, 0, FS_PLACE_PACK, FS_PREEMPT_AUTO},
        {"backfill conservative exact (fifo)", FS_QUEUE_FIFO, FS_BACKFILL_CONSERVATIVE, FS_BF_EXACT, FS_PLACE_PACK, FS_PREEMPT_AUTO},
        {"backfill conservative slurm (fifo)", FS_QUEUE_FIFO, FS_BACKFILL_CONSERVATIVE, FS_BF_SLURM, FS_PLACE_PACK, FS_PREEMPT_AUTO},
        {"backfill easy (sjf)", FS_QUEUE_SJF, FS_BACKFILL_EASY, 0, FS_PLACE_PACK, FS_PREEMPT_AUTO},
        {"placement first_fit", FS_QUEUE_FIFO, FS_BACKFILL_NONE, 0, FS_PLACE_FIRST_FIT, FS_PREEMPT_AUTO},
        {"placement best_fit", FS_QUEUE_FIFO, FS_BACKFILL_NONE, 0, FS_PLACE_BEST_FIT, FS_PREEMPT_AUTO},
        {"placement spread", FS_QUEUE_FIFO, FS_BACKFILL_NONE, 0, FS_PLACE_SPREAD, FS_PREEMPT_AUTO},
        {"placement random", FS_QUEUE_FIFO, FS_BACKFILL_NONE, 0, FS_PLACE_RANDOM, FS_PREEMPT_AUTO},
        {"placement fgd", FS_QUEUE_FIFO, FS_BACKFILL_NONE, 0, FS_PLACE_FGD, FS_PREEMPT_AUTO},
        {"placement atc_best_fit", FS_QUEUE_FIFO, FS_BACKFILL_NONE, 0, FS_PLACE_ATC_BEST_FIT, FS_PREEMPT_AUTO},
        {"placement gpu_packing", FS_QUEUE_FIFO, FS_BACKFILL_NONE, 0, FS_PLACE_GPU_PACKING, FS_PREEMPT_AUTO},
    };
    enum { NQ = 20 };
    char names[NQ][8], cohorts[4][8];
    fs_kueue_cq_cfg_t cq[NQ];
    fs_kueue_quota_cfg_t quota[NQ];
    for (int i = 0; i < NQ; i++) {
        snprintf(names[i], sizeof names[i], "t%d", i);
        snprintf(cohorts[i / 5], sizeof cohorts[i / 5], "c%d", i / 5);
        quota[i] = (fs_kueue_quota_cfg_t){"main", 500, -1, -1, FS_KRES_GPU};
        cq[i] = (fs_kueue_cq_cfg_t){.name = names[i], .cohort = cohorts[i / 5], .quotas = &quota[i],
                                    .n_quotas = 1, .within_cq = FS_KUEUE_NEVER,
                                    .reclaim = FS_KUEUE_NEVER, .borrow_max_priority = NAN,
                                    .weight = 1};
    }
    fs_volcano_queue_cfg_t vq[4] = {{"q0", 1, 0, 0, 1, "t0,t1,t2,t3,t4"},
                                    {"q1", 2, 0, 0, 1, "t5,t6,t7,t8,t9"},
                                    {"q2", 3, 0, 0, 1, "t10,t11,t12,t13,t14"},
                                    {"q3", 4, 0, 0, 1, "t15,t16,t17,t18,t19"}};
    fs_job_t *j = make_jobs(n, 0, 0.9, 10000, NQ);
    if (!j) {
        fprintf(stderr, "fleetsim bench: out of memory\n");
        return 1;
    }
    const char *sel = getenv("FS_BENCH_TABLE");
    fs_sched_cfg_t keep = cfg->scheduler;
    int rc = 0;
    printf("table: %zu jobs, 10,000 GPUs, 90%% load (CPU us per job)\n", n);
    for (size_t i = 0; i < sizeof rows / sizeof rows[0] && !rc; i++) {
        const tcase_t *r = &rows[i];
        if (sel && !strstr(r->label, sel))
            continue;
        cfg->scheduler.queue = r->queue;
        cfg->scheduler.backfill = r->backfill;
        cfg->scheduler.bf.mode = r->bf_mode;
        cfg->scheduler.placement = r->placement;
        cfg->scheduler.preemption = r->preemption;
        cfg->scheduler.checkpoint_interval = 60 * FS_US_PER_S;
        cfg->scheduler.slurm.weight_age = 1000;
        cfg->scheduler.slurm.weight_fairshare = 5000;
        cfg->scheduler.slurm.weight_jobsize = 100;
        cfg->scheduler.slurm.weight_qos = 10000;
        cfg->scheduler.tiresias.thresholds = (char *)"3600,36000";
        cfg->scheduler.tiresias.promote_knob = 8;
        cfg->scheduler.volcano.queues = vq;
        cfg->scheduler.volcano.n_queues = 4;
        cfg->scheduler.volcano.reclaim = 1;
        cfg->scheduler.kueue.cqs = cq;
        cfg->scheduler.kueue.n_cqs = NQ;
        double us = 0;
        rc = bench_run(r->label, cfg, j, n, tn, NQ, &us);
        if (!rc)
            printf("  | %s | %zu | %.2f us/job |\n", r->label, n, us);
        cfg->scheduler = keep;  /* the config owns none of the tables above */
    }
    fs_free(j);
    return rc;
}

int fs_bench_policy(unsigned long long jobs)
{
    size_t n = jobs ? (size_t)jobs : 1000000;
    static const char *const tn[] = {"t0", "t1", "t2", "t3", "t4", "t5", "t6", "t7", "t8", "t9",
                                     "t10", "t11", "t12", "t13", "t14", "t15", "t16", "t17",
                                     "t18", "t19"};
    fs_config_t cfg;
    fs_error_t err;
    fs_error_clear(&err);
    /* the built-in default gives every key its default; then the bench's */
    if (fs_scenario_load_string("<bench>", "cluster: {pools: [{name: main, gpu: H100, nodes: 1250, "
                                "gpus_per_node: 8}]}\nworkload: {synthetic: {arrivals: {rate: 1/h}, "
                                "gpus: {1: 1}, duration: {dist: constant, value: 1h}}}\n"
                                "output: {timeline_interval: 0s}\n",
                                NULL, 0, &cfg, &err)) {
        fprintf(stderr, "fleetsim bench: %s\n", err.msg);
        return 1;
    }
    cfg.horizon = FS_TIME_MAX_INPUT;
    printf("\nscheduling policies, %zu jobs each on 10,000 GPUs (simulated jobs per wall second):\n", n);
    const char *only = getenv("FS_BENCH_ONLY");
    if (only && strcmp(only, "table") == 0) {
        int trc = bench_table(&cfg, n, tn);
        fs_config_release(&cfg);
        return trc;
    }
    int skip_easy = only && strcmp(only, "easy") != 0;
    fs_job_t *j = skip_easy ? NULL : make_jobs(n, 10000, 1.05, 10000, 0);
    int rc = skip_easy ? 0 : 1;
    if (j) {
        cfg.scheduler.queue = FS_QUEUE_FIFO;
        cfg.scheduler.backfill = FS_BACKFILL_EASY;
        rc = bench_one("FIFO + EASY backfill (exact)", &cfg, j, n, NULL, 0);
        fs_free(j);
    }
    j = rc || (only && strcmp(only, "slurm") != 0) ? NULL : make_jobs(n, 10000, 1.0, 10000, 20);
    if (j) {
        cfg.scheduler.queue = FS_QUEUE_SLURM;
        cfg.scheduler.backfill = FS_BACKFILL_NONE;
        cfg.scheduler.slurm.weight_age = 1000;
        cfg.scheduler.slurm.weight_fairshare = 5000;
        cfg.scheduler.slurm.weight_jobsize = 100;
        cfg.scheduler.slurm.weight_qos = 10000;
        rc = bench_one("Slurm multifactor (calc period 5 min)", &cfg, j, n, tn, 20);
        if (!rc) {
            cfg.scheduler.backfill = FS_BACKFILL_CONSERVATIVE;
            cfg.scheduler.bf.mode = FS_BF_SLURM;
            rc = bench_one("Slurm multifactor + bounded backfill", &cfg, j, n, tn, 20);
        }
        fs_free(j);
    }
    j = rc || (only && strcmp(only, "volcano") != 0) ? NULL : make_jobs(n, 0, 0.8, 10000, 20);
    if (j) {    /* Volcano: 20 tenants in 4 queues of weights 1-4, drf, reclaim */
        fs_volcano_queue_cfg_t vq[4] = {{"q0", 1, 0, 0, 1, "t0,t1,t2,t3,t4"},
                                        {"q1", 2, 0, 0, 1, "t5,t6,t7,t8,t9"},
                                        {"q2", 3, 0, 0, 1, "t10,t11,t12,t13,t14"},
                                        {"q3", 4, 0, 0, 1, "t15,t16,t17,t18,t19"}};
        fs_sched_cfg_t keep = cfg.scheduler;
        cfg.scheduler.queue = FS_QUEUE_VOLCANO;
        cfg.scheduler.backfill = FS_BACKFILL_NONE;
        cfg.scheduler.volcano.queues = vq;
        cfg.scheduler.volcano.n_queues = 4;
        cfg.scheduler.volcano.reclaim = 1;
        rc = bench_one("Volcano (4 queues, drf, reclaim, 1 s period)", &cfg, j, n, tn, 20);
        cfg.scheduler = keep;   /* the config owns none of vq */
        fs_free(j);
    }
    j = rc || (only && strcmp(only, "kueue") != 0) ? NULL : make_jobs(n, 10000, 0.8, 10000, 100);
    if (j) {    /* Kueue: 100 CQs of 100 GPUs in 10 cohorts of 10, one per tenant */
        rc = bench_kueue(&cfg, j, n);
        fs_free(j);
    }
    j = rc || (only && strcmp(only, "las") != 0) ? NULL : make_jobs(n, 10000, 0.95, 10000, 0);
    if (j) {    /* Tiresias 2D-LAS: three queues, promotion, work kept */
        fs_sched_cfg_t keep = cfg.scheduler;
        cfg.scheduler.queue = FS_QUEUE_LAS;
        cfg.scheduler.backfill = FS_BACKFILL_NONE;
        cfg.scheduler.preemption = FS_PREEMPT_AUTO;
        cfg.scheduler.tiresias.thresholds = getenv("FS_LAS_THR") ? getenv("FS_LAS_THR") : (char *)"3600,36000";
        cfg.scheduler.tiresias.promote_knob = getenv("FS_LAS_KNOB") ? atof(getenv("FS_LAS_KNOB")) : 8;
        cfg.scheduler.checkpoint_interval = FS_US_PER_S;
        rc = bench_one("Tiresias 2D-LAS (3 queues, knob 8)", &cfg, j, n, NULL, 0);
        cfg.scheduler = keep;   /* the config owns no thresholds string */
        fs_free(j);
    }
    /* conservative backfill in Slurm's bounded mode (the default, and
     * "bounded"); exact (on request only, "conservative": its cost grows
     * with the queue's depth, docs/performance.md) */
    int exact = only && strcmp(only, "conservative") == 0;
    int bounded = !exact;
    j = rc || (only && strcmp(only, "bounded") != 0 && !exact)
            ? NULL : make_jobs(n, 10000, 1.05, 10000, 0);
    if (j) {
        fs_sched_cfg_t keep = cfg.scheduler;
        cfg.scheduler.queue = FS_QUEUE_FIFO;
        cfg.scheduler.backfill = FS_BACKFILL_CONSERVATIVE;
        cfg.scheduler.bf.mode = bounded ? FS_BF_SLURM : FS_BF_EXACT;
        rc = bench_one(bounded ? "FIFO + conservative backfill (Slurm bounded)"
                               : "FIFO + conservative backfill (exact)",
                       &cfg, j, n, NULL, 0);
        cfg.scheduler = keep;
        fs_free(j);
    }
    printf("(targets: EASY >= 1,000,000 jobs/s; Slurm multifactor >= 500,000 jobs/s; Volcano: "
           "reported; Kueue 100 CQs >= 200,000 jobs/s; 2D-LAS and conservative backfill in "
           "Slurm's bounded mode >= 200,000 jobs/s; exact conservative: reported, see "
           "docs/performance.md)\n");
    fs_config_release(&cfg);
    return rc;
}
