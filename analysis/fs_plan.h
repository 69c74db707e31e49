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

/* Evaluates n candidates: fills out[(c * replications + r) * n_metrics + m]
 * with metric spec->metrics[m] of replication r of candidate c (NaN when a
 * run has no value).  Returns 0 or an FS_E* code with err set (FS_EINVAL
 * for a metric that the summary does not have). */
typedef int (*fs_plan_eval_fn)(void *ud, const fs_plan_spec_t *spec, const fs_plan_cand_t *cands,
                               size_t n, double *out, fs_error_t *err);

typedef struct fs_plan_point {
    size_t choice;
    uint32_t nodes;
    uint64_t gpus;          /* nodes x the choice's GPUs per node */
    uint32_t round;         /* the search round that evaluated it (0-based) */
    double *runs;           /* replications x n_metrics, as the evaluator gave them */
    fs_ci_t *ci;            /* n_metrics intervals at spec->confidence */
    int meets;              /* every SLO holds at its interval end */
    int frontier;           /* not dominated by another point */
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

/* What plan.h5 records about where the plan came from (borrowed). */
typedef struct fs_plan_meta {
    const char *name;           /* scenario name */
    const char *scenario_text;
    const char *scenario_path;
    const char *const *sets;    /* --set list */
    size_t n_sets;
    const fs_plan_cash_t *cash; /* the chosen fleet's cash flow, or NULL */
} fs_plan_meta_t;

/* Writes PATH (temp name, renamed into place): /plan (one row per evaluated
 * point), /plan_runs (one row per run) and root attributes for the choice
 * (docs/plan.md), complete = 1 last.  Not thread-safe (HDF5). */
int fs_plan_write(const char *path, const fs_plan_spec_t *s, const fs_plan_result_t *r,
                  const fs_plan_meta_t *meta, fs_error_t *err);

#endif
