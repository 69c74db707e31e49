/*
 * fs_cost: the cost arithmetic -- pure functions from the cost
 * configuration (models/fs_costcfg.h), the GPU catalog and the usage
 * integrals (models/fs_usage.h) to dollars.  No state, no events.
 *
 * Per pool, the configuration resolves to rates per GPU-second
 * (fs_cost_rates):
 *   owned   capex per GPU  K = gpu_price x server_multiplier / (1 - network_share)
 *           depreciation   K x (1 - residual) / depreciation period   per owned GPU-s
 *           operations     K x ops_share / year (8,760 h)            per owned GPU-s
 *           colocation     peak kW per GPU x $/kW-month / 730 h      per owned GPU-s
 *           energy         (busy GPU-s x busy_fraction + idle GPU-s x idle_fraction)
 *                          x peak kW per GPU x PUE / 3600 s/h        kWh, x $/kWh
 *                          (cost.energy: flat); with cost.energy: power
 *                          (GPU idle kW x (busy + idle GPU-s) + the usage's
 *                          draw above idle (gpu_j) + host kW (peak - TDP) x
 *                          (busy_fraction x busy + idle_fraction x idle GPU-s))
 *                          x PUE                                      kWh
 *   cloud   on_demand, spot: price per GPU-hour x busy GPU-s / 3600 (elastic)
 *           reserved_1y/3y:  price per GPU-hour x owned GPU-s / 3600 (committed)
 *           lease:           lease_rate / 730 h x owned GPU-s / 3600 (committed)
 * and carbon, kg CO2e (owned pools; a cloud pool's energy and hardware are
 * in its price, as for money):
 *   operational  the energy above x grid intensity: a constant (g CO2e/kWh),
 *                or with an hourly series the usage's intensity-weighted
 *                busy and idle integrals in place of busy and idle GPU-s
 *   embodied     embodied kg per node / GPUs per node / depreciation period
 *                                                                 per owned GPU-s
 * The formulas, defaults and their sources are in docs/cost.md.
 *
 * A report (fs_cost_report) prices every (day, pool) cell of a usage, sums
 * them per pool and in all, and splits the cost over tenants: showback =
 * a tenant's GPU-hours at the pool's cost per billed GPU-hour; chargeback =
 * the pool's whole cost shared in proportion to GPU-hours held (idle cost
 * included, so chargeback sums to the total).
 */
#ifndef FS_COST_H
#define FS_COST_H

#include <stddef.h>
#include <stdint.h>

#include "../sim/fs_error.h"
#include "fs_config.h"
#include "fs_usage.h"

#define FS_COST_HOURS_PER_YEAR 8760.0   /* 365 d, as DOMAIN.md 4.5 */
#define FS_COST_HOURS_PER_MONTH 730.0   /* colocation month, as DOMAIN.md 4.5 */

/* Default prices of a GPU type (docs/cost.md gives source and date). */
typedef struct fs_cost_price {
    const char *gpu;        /* catalog name */
    double gpu_price;       /* $ per GPU, 0: none known */
    double on_demand;       /* cloud $ per GPU-hour, 0: none known */
    const char *source;
} fs_cost_price_t;

/* One pool's resolved rates. */
typedef struct fs_cost_rate {
    int billing;            /* enum fs_billing */
    double capex_per_gpu;   /* $ (owned) */
    double peak_kw;         /* peak IT power per GPU incl. host, kW (owned) */
    double dep_per_s;       /* $ per owned GPU-s */
    double ops_per_s;       /* $ per owned GPU-s */
    double colo_per_s;      /* $ per owned GPU-s */
    double busy_kw, idle_kw;/* IT draw per busy / idle GPU, kW */
    double pue;
    double kwh_price;       /* $ per facility kWh */
    double cloud_per_s;     /* $ per billed GPU-s (cloud) */
    int per_busy;           /* cloud billed per busy GPU-s (1) or per owned GPU-s (0) */
    double g_per_kwh;       /* constant grid intensity, g CO2e per facility kWh (owned) */
    int carbon_hourly;      /* intensity from the usage's hourly series instead (owned) */
    double embodied_per_s;  /* embodied kg CO2e per owned GPU-s (owned) */
    /* cost.energy: power (owned): the GPU's idle draw on every busy or idle
     * GPU-s, the usage's gpu_j above it, and the host's part of the peak
     * (peak - TDP) at busy_fraction / idle_fraction */
    int power;
    double gpu_idle_kw;     /* FS_POWER_IDLE_SHARE x TDP */
    double host_busy_kw, host_idle_kw;
} fs_cost_rate_t;

/* Is carbon modelled (an intensity, a series or embodied carbon given)? */
int fs_cost_carbon_modelled(const fs_cost_cfg_t *cc);

/* Rates for owned hardware from explicit figures (tests, plan); the grid
 * intensity comes from cc, embodied carbon is 0 (resolved per pool by
 * fs_cost_rates). */
void fs_cost_rate_owned(const fs_cost_cfg_t *cc, double gpu_price, double peak_w,
                        fs_cost_rate_t *out);
/* Rates for a cloud pool at price $/GPU-hour. */
void fs_cost_rate_cloud(int billing, double price_per_hour, fs_cost_rate_t *out);

/* Resolves the rates of every pool of cfg (out: cfg->cluster.n_pools).
 * A pool whose price is neither given nor a default: FS_EINVAL (message
 * names the key to give) when the cost block was given, else 1 (no cost
 * for this run, *out untouched beyond that).  Unknown pool names in
 * cost.pools / cost.purchases: FS_EINVAL.  0: all resolved. */
int fs_cost_rates(const fs_config_t *cfg, fs_cost_rate_t *out, fs_error_t *err);

/* Cost of one cell, $ (and facility kWh, kg CO2e). */
typedef struct fs_cost_cell {
    double capex, energy, colocation, ops, cloud, total;
    double energy_kwh;
    double carbon_kg;       /* operational + embodied */
    double carbon_embodied_kg;
    double idle;            /* the share of total paid for idle capacity */
    double gpu_s_owned, gpu_s_busy;
} fs_cost_cell_t;
void fs_cost_cell(const fs_cost_rate_t *r, const fs_usage_cell_t *u, fs_cost_cell_t *out);

typedef struct fs_cost_tenant {
    int32_t tenant;         /* -1: jobs without a tenant */
    double gpu_hours;       /* held */
    double lost_gpu_hours;  /* to failures and preemptions */
    double preempt_lost_gpu_hours; /* the part lost to preemptions */
    double showback;        /* $ */
    double chargeback;      /* $ */
    double carbon_kg;       /* the pools' carbon shared as chargeback is */
} fs_cost_tenant_t;

typedef struct fs_cost_report {
    size_t n_days;
    uint32_t n_pools;
    fs_cost_cell_t *cells;  /* n_days x n_pools, day-major (owned) */
    fs_cost_cell_t *pools;  /* n_pools totals (owned) */
    fs_cost_cell_t total;
    double *unit;           /* n_pools: $ per billed GPU-hour of the pool (owned) */
    double *lost_gpu_hours; /* n_pools (owned): to failures and preemptions */
    double *preempt_lost_gpu_hours; /* n_pools (owned): the part lost to preemptions */
    fs_cost_tenant_t *tenants; /* owned; only tenants that held GPUs */
    size_t n_tenants;
    /* headline figures (NaN when undefined) */
    double cost_total;
    double cost_per_gpu_hour; /* total / busy GPU-hours (delivered) */
    double cost_per_job;    /* total / completed jobs */
    double cost_idle;
    double cost_failures;   /* GPU-hours lost to failures x the pool's cost per billed GPU-hour */
    double cost_preemptions; /* GPU-hours lost to preemptions x the same (not failures) */
    double energy_kwh;
    double carbon_kg;       /* operational + embodied, whole run */
    double carbon_embodied_kg;
    double carbon_per_gpu_hour_g; /* carbon_kg x 1000 / busy GPU-hours */
    double carbon_per_job_kg;     /* carbon_kg / completed jobs */
} fs_cost_report_t;

/* Prices usage u with rates (u's pool count).  0, FS_ENOMEM, or the usage's
 * sticky error.  Release with fs_cost_report_release. */
int fs_cost_report(const fs_cost_rate_t *rates, const fs_usage_t *u, uint64_t jobs_completed,
                   fs_cost_report_t *out);
void fs_cost_report_release(fs_cost_report_t *r);
/* Prices the usage's measurement window (fs_usage_set_window) with rates:
 * *out sums the pools' cells over the window. */
void fs_cost_window(const fs_cost_rate_t *rates, const fs_usage_t *u, fs_cost_cell_t *out);

#endif
