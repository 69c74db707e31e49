/*
 * fs_usage: exact time integrals of what the fleet held, per pool and per
 * day, and GPU time per tenant and pool -- the quantities the cost model
 * (models/fs_cost.h) prices.
 *
 * The model owns one (fs_model_create / fs_model_destroy) and feeds it from
 * its settle() with the piecewise-constant state of each interval, split at
 * day boundaries (day d = [d x 86400 s, (d+1) x 86400 s)), so the integrals
 * are exact: O(pools) per settle plus O(pools) per day crossed.  Per
 * (day, pool) it keeps, in GPU-seconds:
 *   owned  GPUs in the fleet: delivered and not retired (purchase timeline,
 *          models/fs_purchase.h, moves it with fs_usage_set_owned);
 *   up     GPUs in service (fs_pool_t.gpus_up);
 *   busy   GPUs holding a job (fs_pool_t.gpus_busy; a shared GPU counts 1);
 *   idle   max(0, owned - busy): owned GPUs drawing idle power (down nodes
 *          included: they stay powered).
 * With an hourly carbon-intensity series (fs_usage_set_intensity), also
 *   busy_g, idle_g  the busy and idle integrals weighted by the intensity
 *          of each instant, GPU-s x g CO2e/kWh: intervals are then split at
 *          hour boundaries as well as at day boundaries, and each piece is
 *          weighted by the intensity of its hour (hour h of the run: entry
 *          h mod n of the series), so the weighted integrals are as exact as
 *          the plain ones (docs/cost.md, "Carbon").
 * With cost.energy: power, the model also adds (fs_usage_energy) the GPUs'
 * draw above idle, W over an interval it knows in full (a hold, when it
 * ends), split at day and hour boundaries as the integrals above:
 *   gpu_j, gpu_jg  J (and J x g CO2e/kWh) drawn above the idle floor by
 *          the pool's GPUs (docs/cost.md "Energy from the power model").
 * Those come after the fact, so the measurement window takes them clipped
 * to [lo, hi) as they come, not from the snapshots.
 * Per tenant and pool (from each job row, at the job's end): GPU-seconds
 * held (run x gpus x gpu_milli / 1000) and GPU-seconds of work lost; a job
 * that ran in several pools is counted in its last one.
 *
 * Memory: 8 doubles per (day, pool), 2 per pool and 2 per (tenant, pool).  Growing can
 * fail inside settle (which cannot return an error): the error is sticky
 * (fs_usage_error) and the cost report refuses to use the usage then.
 */
#ifndef FS_USAGE_H
#define FS_USAGE_H

#include <stddef.h>
#include <stdint.h>

#include "../sim/fs_time.h"
#include "fs_cluster.h"
#include "fs_result.h"

typedef struct fs_usage fs_usage_t;

/* Integrals of one (day, pool), GPU-s; the _g ones GPU-s x g CO2e/kWh
 * (0 without an intensity series). */
typedef struct fs_usage_cell {
    double owned, up, busy, idle;
    double busy_g, idle_g;
    double gpu_j, gpu_jg;   /* cost.energy: power; J above the GPUs' idle draw (x g/kWh) */
} fs_usage_cell_t;

/* GPU time of one (tenant, pool), GPU-s. */
typedef struct fs_usage_held {
    double gpu_s, lost_gpu_s;
    double preempt_lost_gpu_s;  /* the part of lost_gpu_s lost to preemptions */
} fs_usage_held_t;

/* For the pools of c: every GPU owned at the start. */
int fs_usage_create(const fs_cluster_t *c, fs_usage_t **out);
void fs_usage_destroy(fs_usage_t *u);

/* Weights the busy and idle integrals from now on by the hourly series
 * g[0..n) (g CO2e per kWh; copied), repeated when the run is longer.  Call
 * before the first settle: FS_EINVAL after it; FS_ENOMEM. */
int fs_usage_set_intensity(fs_usage_t *u, const double *g, size_t n);
/* Integrates the cluster's state (constant over [from, to)) into the days
 * it covers.  A failure to grow is kept (fs_usage_error). */
void fs_usage_settle(fs_usage_t *u, const fs_cluster_t *c, fs_time_t from, fs_time_t to);
/* Adds `watts` drawn by pool's GPUs over [from, to) (from <= to, both at or
 * before the last settle) to gpu_j, gpu_jg of the days (hours) it covers
 * and to the window's.  A failure to grow is kept (fs_usage_error). */
void fs_usage_energy(fs_usage_t *u, uint32_t pool, fs_time_t from, fs_time_t to, double watts);
/* Changes a pool's owned GPUs from now on (call after the model settled). */
int fs_usage_set_owned(fs_usage_t *u, uint32_t pool, int64_t delta_gpus);
/* Adds a finished (or unfinished, at the end) job's GPU time. */
void fs_usage_job(fs_usage_t *u, const fs_job_row_t *row);
/* 0, or the first error (FS_ENOMEM) met while growing. */
int fs_usage_error(const fs_usage_t *u);

uint32_t fs_usage_pools(const fs_usage_t *u);
/* Days with any integral: day 0 .. fs_usage_days - 1. */
size_t fs_usage_days(const fs_usage_t *u);
const fs_usage_cell_t *fs_usage_cell(const fs_usage_t *u, size_t day, uint32_t pool);
/* The measurement window [lo, hi) (default: the whole run): settling
 * takes a snapshot of every pool's integrals when it reaches lo and hi, so
 * the window costs nothing per settle.  The model sets it at creation
 * ([warmup, horizon]) and may end it earlier (a horizon left to the trace)
 * when it has settled exactly up to the new end. */
void fs_usage_set_window(fs_usage_t *u, fs_time_t lo, fs_time_t hi);
/* *out = pool's integrals over the window (to the last settle if the run
 * ended inside it), GPU-s; zero if it has not begun or no such pool. */
void fs_usage_window(const fs_usage_t *u, uint32_t pool, fs_usage_cell_t *out);
/* Tenant slots: slot 0 = jobs without a tenant, slot t + 1 = tenant t. */
size_t fs_usage_tenant_slots(const fs_usage_t *u);
/* NULL when the slot has no job. */
const fs_usage_held_t *fs_usage_held(const fs_usage_t *u, size_t slot, uint32_t pool);

#endif
