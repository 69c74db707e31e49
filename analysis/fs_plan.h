/*
 * fs_plan: the search of `fleetsim plan` (docs/plan.md): the cheapest fleet
 * that meets the SLOs with stated confidence.
 *
 * A plan spec (fs_plan_spec_t) is built from a scenario's `plan:` block:
 * SLOs (a metric, by its /summary name, and a bound), the objective metric
 * (minimised; cost_total by default), the confidence level, replications,
 * and the choices: per choice one pool whose node count varies over
 * from..to by step, with optional overrides (GPU model, GPUs per node, any
 * key).  A candidate is (choice, node count); it is evaluated by running
 * its replications (replication r of every candidate uses index r: common
 * random numbers) through an evaluator callback, which the CLI implements
 * with the sweep machinery (threads, MPI, shards) and the tests with
 * direct runs.
 *
 * The confidence rule: an SLO `metric <= bound` holds when the upper end of
 * the two-sided Student-t interval of the metric's mean over the
 * replications (analysis/fs_ci.h, at `confidence`) is <= bound; `>= bound`
 * uses the lower end.  A candidate meets the SLOs when all hold.
 *
 * The search (per choice, all choices advancing together in rounds so that
 * one round's runs can run in parallel): bisection over the node counts,
 * assuming that meeting the SLOs is monotone in nodes (more nodes never
 * hurt): the largest count first (if it fails, the choice has no feasible
 * fleet), then halving [lo, hi] until the smallest feasible count is found:
 * 1 + ceil(log2 n) evaluations for n counts.  Search "scan" evaluates every
 * count (for checking).  Evaluated candidates are cached: none is run twice.
 * The chosen plan is the feasible evaluated candidate with the smallest
 * objective mean (ties: fewer GPUs, then the earlier choice).  The frontier
 * is the set of evaluated candidates that no other candidate dominates in
 * (objective, every SLO metric).
 *
 * Ownership: the spec and the result own all they point to (destroy them).
 * Not thread-safe; the evaluator may use threads inside one call.
 */
#ifndef FS_PLAN_H
#define FS_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "fs_ci.h"
#include "../models/fs_config.h"
#include "../sim/fs_error.h"

#define FS_PLAN_FORMAT_VERSION 1

enum fs_plan_bound { FS_PLAN_LE = 0, FS_PLAN_GE = 1 };

typedef struct fs_plan_slo {
    char *metric;           /* a /summary column or a derived metric */
    int kind;               /* enum fs_plan_bound */
    double bound;           /* in the metric's unit (seconds for times) */
    char *text;             /* "wait_p95 <= 1h" as written */
} fs_plan_slo_t;

typedef struct fs_plan_choice {
    char *name;             /* label */
    char *pool;             /* the pool whose nodes vary */
    size_t pool_index;      /* its index in cluster.pools */
    char *gpu;              /* its GPU model (after the choice's override) */
    uint32_t gpus_per_node; /* likewise */
    uint32_t *nodes;        /* candidate counts, increasing */
    size_t n_nodes;
    char **sets;            /* the choice's overrides "KEY=VALUE" */
    size_t n_sets;
} fs_plan_choice_t;

typedef struct fs_plan_spec {
    double confidence;
    uint64_t replications;
    int search;             /* enum fs_plan_search_kind */
    int keep_jobs;
    fs_plan_slo_t *slo;
    size_t n_slo;
    fs_plan_choice_t *choices;
    size_t n_choices;
    /* metrics read from every run: [0] the objective, [1 + i] SLO i */
    char **metrics;
    size_t n_metrics;
    /* periods every SLO must hold in: 1, or with plan.years the 4 x years
     * quarters, each at its own demand and fleet (docs/plan.md "The search
     * over the quarters") */
    size_t n_periods;
} fs_plan_spec_t;

/* Builds the spec of cfg's plan block.  Errors (FS_EINVAL): no plan block,
 * a choice naming no pool of cluster.pools, to < from, a bound that is no
 * number or duration, an SLO with neither or both of min and max.
 * Messages start with cfg->source_path and name the key (plan.slo.0.max). */
int fs_plan_spec_create(const fs_config_t *cfg, fs_plan_spec_t **out, fs_error_t *err);
void fs_plan_spec_destroy(fs_plan_spec_t *s);

/* The overrides of candidate (choice, nodes): the choice's own, then
 * "cluster.pools.I.nodes=N".  *out is an array of *n strings (fs_free each
 * and the array). */
int fs_plan_candidate_sets(const fs_plan_spec_t *s, size_t choice, uint32_t nodes, char ***out,
                           size_t *n, fs_error_t *err);
void fs_plan_sets_free(char **sets, size_t n);

/* The value of `metric` from one run's /summary (names[i] = values[i]):
 * a column, or a derived metric: finished_share = jobs_completed /
 * jobs_submitted.  Returns 0, or -1 when the summary has no such metric. */
int fs_plan_metric(const char *const *names, const double *values, size_t n, const char *metric,
                   double *out);

typedef struct fs_plan_cand {
    size_t choice;
    uint32_t nodes;
} fs_plan_cand_t;

/* Evaluates n candidates: fills
 * out[((c * n_periods + q) * replications + r) * n_metrics + m] with metric
 * spec->metrics[m] of replication r of candidate c in period q (NaN when a
 * run has no value).  With periods, the evaluator may stop a candidate at
 * its first period that misses (fs_plan_period_meets): later periods are
 * not looked at.  Returns 0 or an FS_E* code with err set (FS_EINVAL for a
 * metric that the summary does not have). */
typedef int (*fs_plan_eval_fn)(void *ud, const fs_plan_spec_t *spec, const fs_plan_cand_t *cands,
                               size_t n, double *out, fs_error_t *err);

typedef struct fs_plan_point {
    size_t choice;
    uint32_t nodes;
    uint64_t gpus;          /* nodes x the choice's GPUs per node */
    uint32_t round;         /* the search round that evaluated it (0-based) */
    double *runs;           /* replications x n_metrics, as the evaluator gave them */
    fs_ci_t *ci;            /* n_metrics intervals at spec->confidence */
    int meets;              /* every SLO holds at its interval end (in every period) */
    int frontier;           /* not dominated by another point */
    /* with periods (spec->n_periods > 1): runs and ci above are the
     * reported figures: the objective per replication averaged over the
     * periods looked at; an SLO metric from its binding period (a meeting
     * point: the period with the worst interval end; a missing one: the
     * first period that misses) */
    long miss_period;       /* the first period that misses (0-based), -1: none */
    size_t n_periods;       /* periods looked at (up to the first miss) */
    fs_ci_t *period_ci;     /* n_periods x n_metrics (NULL without periods) */
    size_t *binding;        /* n_metrics: the period metric m is reported from */
} fs_plan_point_t;

typedef struct fs_plan_result {
    fs_plan_point_t *points; /* in evaluation order */
    size_t n_points;
    size_t cap_points;       /* allocated (fs_grow) */
    long *best;             /* per choice: index of its smallest feasible point, or -1 */
    long chosen;            /* index of the chosen point, or -1 (none feasible) */
    size_t rounds;          /* evaluator calls */
    size_t nonmonotone;     /* pairs (a < b nodes, same choice) where a meets and b does not */
} fs_plan_result_t;

/* Whether every SLO holds on runs (replications x n_metrics: one period
 * of one candidate), by the confidence rule.  1, 0, or -1 (out of memory). */
int fs_plan_period_meets(const fs_plan_spec_t *s, const double *runs);

/* "Y2Q3" for period q (0-based) of a plan with periods. */
void fs_plan_period_name(size_t q, char *buf, size_t n);

/* Runs the search.  Returns 0 (also when nothing is feasible: chosen = -1)
 * or the evaluator's error. */
int fs_plan_search(const fs_plan_spec_t *s, fs_plan_eval_fn eval, void *ud,
                   fs_plan_result_t **out, fs_error_t *err);
void fs_plan_result_destroy(fs_plan_result_t *r);

/* Prints the table of evaluated points, the frontier and the chosen plan. */
#include <stdio.h>
void fs_plan_print(FILE *f, const fs_plan_spec_t *s, const fs_plan_result_t *r);

/* The finance view of one fleet (computed by the CLI from the cost model,
 * docs/plan.md "Cash flow"): money in the results' currency. */
typedef struct fs_plan_cash {
    double purchase;        /* owned GPUs' capex, paid at year 0 */
    double run_s;           /* the priced span of a run (mean end_time), s */
    double run_cost;        /* mean cost_total of the runs */
    double depreciation;    /* the part of run_cost that is depreciation */
    double depreciation_share; /* depreciation / purchase: the share of the purchase
                               that the run's span uses up (NaN: nothing owned) */
    double opex_per_year;   /* run_cost - depreciation, per year of 365.25 d */
    double years;           /* the cash-flow horizon: cost.depreciation, years */
    double residual;        /* purchase x cost.residual, recovered at the end */
    double rate;            /* plan.discount_rate, per year */
    double npv;             /* purchase + discounted yearly opex - discounted residual */
} fs_plan_cash_t;

/* Fills c->npv from the other fields: purchase at year 0, opex_per_year at
 * the end of each year (a fractional last year pro rata), residual at
 * `years`, all discounted at `rate` per year. */
void fs_plan_cash_npv(fs_plan_cash_t *c);

/* ---- the quarterly cash flow (plan.years > 0; docs/plan.md "Quarterly cash flow") ---------
 *
 * Quarter q (0-based) of the analysis period is priced from its own
 * representative run: the fleet delivered by then (purchase batches of
 * quarters <= q + 1) under the demand of quarter q (the arrival rate x
 * (1 + demand_growth)^(q / 4)), R replications with indices 0..R-1.  Its
 * cost split by what drives it is scaled from the run's span to the quarter
 * (91.3125 d).  Cash: capex of the owned GPUs bought in quarter q at the
 * start of the quarter at the GPU price x (1 - gpu_price_decline)^(q / 4);
 * the quarter's operating cost (operations, colocation, electricity x
 * (1 + electricity_growth)^(q / 4), cloud, reserved and lease bills) at its
 * end; lease payments committed beyond the period in the quarters after
 * it; the residual (book value after straight-line depreciation over
 * cost.depreciation to cost.residual) recovered at the end.  Discounted at
 * the nominal plan.discount_rate per year: a flow at t years counts
 * x (1 + rate)^-t. */
#define FS_PLAN_QUARTER_S (365.25 * 86400 / 4)
#define FS_PLAN_MIX 6       /* fleet GPUs per enum fs_billing (owned .. lease) */

/* One quarter's representative run (one replication): $ over its span. */
typedef struct fs_plan_qrun {
    double span_s;          /* the priced span (end_time), s */
    double dep;             /* depreciation (no cash: capex is paid when bought) */
    double ops;             /* operations, a share of capex (scales with the GPU price) */
    double energy;          /* electricity */
    double colo;            /* colocation */
    double rent;            /* cloud, reserved and lease bills (scale with the GPU price) */
    double gpu_h;           /* delivered (busy) GPU-hours */
} fs_plan_qrun_t;

typedef struct fs_plan_fin_in {
    size_t n_q;             /* quarters in the period */
    double rate;            /* nominal discount rate per year */
    double elec_growth;     /* electricity price change per year */
    double price_decline;   /* GPU price fall per year */
    double elec_mult, price_mult; /* sensitivity factors (1: as given) */
    double dep_years;       /* cost.depreciation, years */
    double residual_share;  /* cost.residual */
    const double *buy;      /* n_q: capex bought at the start of quarter q, at today's price */
    const double *tail;     /* n_tail: lease payments committed in the quarters after the period */
    size_t n_tail;
} fs_plan_fin_in_t;

typedef struct fs_plan_fin_out {
    double capex, opex, tail, residual; /* undiscounted totals, $ */
    double npv;             /* capex + opex + tail - residual, discounted */
    double gpu_h;           /* delivered GPU-hours over the period */
    double cost_per_gpu_hour; /* (capex + opex + tail - residual) / gpu_h (undiscounted) */
} fs_plan_fin_out_t;

/* The cash flow of one fleet and replication (runs: n_q quarters); q_capex
 * and q_opex (n_q each, may be NULL) get each quarter's flows. */
void fs_plan_fin_compute(const fs_plan_fin_in_t *in, const fs_plan_qrun_t *runs,
                         fs_plan_fin_out_t *out, double *q_capex, double *q_opex);

/* Simple (undiscounted) payback, years: the first time at which a's
 * cumulative cash (capex at the start of each quarter, opex spread over it)
 * is no more than b's, interpolated within the quarter; 0 when a never
 * costs more; NaN when a still costs more at the end of n_q quarters. */
double fs_plan_payback(const double *a_capex, const double *a_opex, const double *b_capex,
                       const double *b_opex, size_t n_q);

/* One fleet's quarterly cash flow (each choice's smallest feasible fleet). */
typedef struct fs_plan_fleet {
    long point;             /* index in the result's points; -1: none */
    double *scale;          /* n_q: the demand scale each quarter ran at */
    double *mix;            /* n_q x FS_PLAN_MIX: GPUs in the fleet per billing */
    double *buy;            /* n_q: capex bought in quarter q at today's price */
    double *tail;           /* n_tail: lease payments committed after the period */
    size_t n_tail;
    fs_plan_qrun_t *runs;   /* reps x n_q */
    fs_plan_fin_out_t *out; /* reps */
    double *q_capex, *q_opex; /* reps x n_q */
    double *npv, *payback, *cpgh; /* reps */
    fs_ci_t npv_ci, payback_ci, cpgh_ci;
} fs_plan_fleet_t;

/* One row of the sensitivity block: the chosen fleet's NPV with one
 * parameter x (1 - X) and x (1 + X). */
typedef struct fs_plan_sens {
    const char *param;      /* electricity, gpu_price, demand_growth, arrival_rate */
    int rerun;              /* 1: demand (re-run), 0: recomputed from the same runs */
    double lo_factor, hi_factor;
    fs_plan_qrun_t *runs_lo, *runs_hi; /* rerun: reps x n_q (owned) */
    double *npv_lo, *npv_hi; /* reps */
    fs_ci_t lo, hi;
} fs_plan_sens_t;

typedef struct fs_plan_fin {
    double years;
    size_t n_q, reps;
    double rate, demand_growth, elec_growth, price_decline, sensitivity;
    double dep_years, residual_share;
    fs_plan_fleet_t *fleets; /* per choice */
    size_t n_fleets;
    long baseline;          /* the choice payback is measured against, -1: none */
    long sens_choice;       /* the fleet of the sensitivity block (the chosen), -1: none */
    fs_plan_sens_t sens[4];
    size_t n_sens;
    size_t runs;            /* quarter runs executed now (the others reused) */
    size_t quarter_runs;    /* the quarters' runs: fleets x n_q x reps */
    size_t sens_runs;       /* the sensitivity's re-runs (those not at a base quarter's demand) */
} fs_plan_fin_t;

/* Fills every fleet's per-replication figures (out, q_capex, q_opex, npv,
 * cpgh, payback against the baseline) and their t-intervals at confidence,
 * and the sensitivity rows.  0 or FS_ENOMEM. */
int fs_plan_fin_finish(fs_plan_fin_t *f, double confidence);
void fs_plan_fin_destroy(fs_plan_fin_t *f);
/* The quarterly table of each fleet, the NPV/payback/cost per GPU-hour
 * intervals and the sensitivity block. */
void fs_plan_fin_print(FILE *out, const fs_plan_spec_t *s, const fs_plan_result_t *r,
                       const fs_plan_fin_t *f);

/* What plan.h5 records about where the plan came from (borrowed). */
typedef struct fs_plan_meta {
    const char *name;           /* scenario name */
    const char *scenario_text;
    const char *scenario_path;
    const char *const *sets;    /* --set list */
    size_t n_sets;
    const fs_plan_cash_t *cash; /* the chosen fleet's cash flow, or NULL */
    const fs_plan_fin_t *fin;   /* the quarterly cash flow (plan.years), or NULL */
} fs_plan_meta_t;

/* Writes PATH (temp name, renamed into place): /plan (one row per evaluated
 * point), /plan_runs (one row per run) and root attributes for the choice
 * (docs/plan.md), complete = 1 last.  Not thread-safe (HDF5). */
int fs_plan_write(const char *path, const fs_plan_spec_t *s, const fs_plan_result_t *r,
                  const fs_plan_meta_t *meta, fs_error_t *err);

#endif
