/*
 * fs_costcfg: configuration of the cost model (scenario block `cost:`,
 * models/fs_cost.h) and of capacity planning (block `plan:`,
 * analysis/fs_plan.h).  Part of fs_config_t; every field is a row of
 * scenarios/fs_keys.c.
 */
#ifndef FS_COSTCFG_H
#define FS_COSTCFG_H

#include <stddef.h>
#include <stdint.h>

#include "../sim/fs_time.h"

/* How a pool is paid for (cost.pools[].billing). */
enum fs_billing {
    FS_BILL_OWNED = 0,        /* bought: depreciation, energy, colocation, operations */
    FS_BILL_ON_DEMAND = 1,    /* cloud, billed per busy GPU-s (elastic) */
    FS_BILL_RESERVED_1Y = 2,  /* cloud, 1-year commitment: billed per GPU-s in the fleet */
    FS_BILL_RESERVED_3Y = 3,  /* cloud, 3-year commitment: billed per GPU-s in the fleet */
    FS_BILL_SPOT = 4,         /* cloud, billed per busy GPU-s at the spot multiplier */
    FS_BILL_LEASE = 5         /* leased: lease_rate per GPU-month for every GPU-s in the fleet,
                                 committed for lease_term months, no residual */
};

/* Where an owned pool's energy comes from (cost.energy). */
enum fs_energy_kind {
    FS_ENERGY_FLAT = 0,       /* busy_fraction / idle_fraction of the peak per busy / idle GPU-s */
    FS_ENERGY_POWER = 1       /* the GPUs from the power model (models/fs_power.h), the host
                                 part from the flat fractions (docs/cost.md) */
};

/* One item of cost.pools: how one pool (by name) is paid for, per-pool
 * price overrides (0 = the GPU type's default, models/fs_cost.c), cloud
 * burst eligibility and the pool's own delivery/retirement dates. */
typedef struct fs_cost_pool_cfg {
    char *pool;             /* a cluster.pools name */
    int billing;            /* enum fs_billing */
    double gpu_price;       /* $ per GPU (owned); 0: the GPU type's default */
    double power_w;         /* peak server power per GPU incl. host, W; 0: catalog host_w */
    double price;           /* cloud $ per GPU-hour actually charged; 0: type default x billing */
    int burst;              /* bool: jobs may start here only after waiting burst_after */
    fs_time_t burst_after;  /* us */
    uint32_t burst_cap;     /* GPUs busy in this pool at most (0: the pool's size) */
    fs_time_t online;       /* the pool's nodes (outside purchase batches) arrive then, us */
    fs_time_t retire;       /* ... and leave then (0: never), us */
    double embodied_kgco2e; /* embodied carbon of one node (server), kg CO2e, amortised
                               over cost.depreciation like capex (owned); 0: none */
    double lease_rate;      /* billing lease: $ per GPU-month (730 h); required */
    uint32_t lease_term;    /* billing lease: months committed from delivery; required */
} fs_cost_pool_cfg_t;

/* One item of cost.purchases: a batch of `nodes` nodes of `pool` delivered
 * at `at` (and retired at `retire`, 0: never).  The batches of a pool are
 * its last nodes; the pool's `nodes` is the most it ever has. */
typedef struct fs_purchase_cfg {
    char *pool;
    uint32_t nodes;
    fs_time_t at;           /* us (when quarter is 0) */
    fs_time_t retire;       /* us; 0: never */
    uint32_t quarter;       /* instead of at: delivered at the start of quarter Q (1-based,
                               FS_COST_QUARTER_US each) of the run or of plan.years; 0: at */
} fs_purchase_cfg_t;

/* A quarter of the cost model and the plan's cash flow: 365.25 / 4 days, us. */
#define FS_COST_QUARTER_US ((fs_time_t)(365.25 / 4 * 86400) * 1000000)

/* cost: prices, power, depreciation, cloud and burst (docs/cost.md). */
typedef struct fs_cost_cfg {
    int given;              /* the block was given (prices must then exist for every pool) */
    double pue;             /* facility energy / IT energy */
    double electricity;     /* $ per kWh */
    double colocation;      /* $ per kW-month of peak IT power (730 h a month) */
    fs_time_t depreciation; /* straight-line period, us */
    double residual;        /* share of capex recovered at the end of depreciation */
    double ops_share;       /* operations per year, share of capex */
    double server_multiplier; /* server cost per GPU / GPU price */
    double network_share;   /* interconnect share of total cluster hardware cost */
    double busy_fraction;   /* draw of a busy GPU's server share / peak */
    double idle_fraction;   /* draw of an idle (or down) owned GPU's server share / peak */
    int energy;             /* enum fs_energy_kind */
    double reserved_1y_discount; /* off on-demand */
    double reserved_3y_discount;
    double spot_multiplier; /* spot price / on-demand */
    double carbon_intensity; /* grid intensity, g CO2e per facility kWh, constant; 0: none */
    char *carbon_series;    /* hourly intensity CSV (traces/fs_carbon.h); NULL: none */
    double *carbon_hourly;  /* that series as read by the scenario loader: g CO2e / kWh of
                               hour k of the run, repeated (owned; fs_config_release) */
    size_t n_carbon_hours;
    fs_cost_pool_cfg_t *pools; /* owned */
    size_t n_pools;
    fs_purchase_cfg_t *purchases; /* owned */
    size_t n_purchases;
} fs_cost_cfg_t;

/* One item of plan.slo: a summary metric (by name) and its bound.  Bounds
 * are kept as written ("1h", "0.9") and read by analysis/fs_plan.c: a
 * number, or a duration for time metrics (seconds). */
typedef struct fs_plan_slo_cfg {
    char *metric;           /* a /summary column, or a derived metric (docs/plan.md) */
    char *max;              /* the metric must be <= this (NULL: no upper bound) */
    char *min;              /* the metric must be >= this (NULL: no lower bound) */
} fs_plan_slo_cfg_t;

/* One item of plan.choices[].set: an extra override of the choice. */
typedef struct fs_plan_set_cfg {
    char *key;              /* dotted path */
    char *value;            /* as written for the key */
} fs_plan_set_cfg_t;

/* One item of plan.choices: one alternative (a GPU type, a billing, ...)
 * whose node count is searched. */
typedef struct fs_plan_choice_cfg {
    char *name;             /* label (NULL: POOL or POOL/GPU) */
    char *pool;             /* a cluster.pools name: the pool whose nodes vary */
    char *gpu;              /* GPU model given to that pool (NULL: as in the scenario) */
    uint32_t gpus_per_node; /* 0: as in the scenario */
    uint32_t from, to, step; /* node counts from, from + step, ..., <= to */
    fs_plan_set_cfg_t *sets; /* owned: overrides applied for this choice */
    size_t n_sets;
} fs_plan_choice_cfg_t;

/* plan: SLOs and choices for `fleetsim plan` (docs/plan.md). */
typedef struct fs_plan_cfg {
    int given;
    char *objective;        /* summary metric minimised (default cost_total) */
    double confidence;      /* level of the t-interval the SLOs must hold at, (0, 1) */
    uint64_t replications;  /* runs per candidate (>= 2), replication indices 0..n-1 */
    int search;             /* enum fs_plan_search_kind */
    int keep_jobs;          /* bool: candidate runs write /jobs and /timeline */
    double discount_rate;   /* per year, for the cash-flow view and NPV (plan.discount_rate) */
    double years;           /* the analysis period (a whole number of quarters); 0: the
                               one-year view over cost.depreciation (docs/plan.md) */
    double demand_growth;   /* arrival-rate growth per year, quarter q at (1 + g)^(q / 4) */
    double electricity_growth; /* electricity price change per year, likewise */
    double gpu_price_decline;  /* GPU price fall per year for purchases after quarter 1 */
    double sensitivity;     /* +-X of the sensitivity block (0: none) */
    char *baseline;         /* the choice payback is measured against (NULL: least capex) */
    fs_plan_slo_cfg_t *slo; /* owned */
    size_t n_slo;
    fs_plan_choice_cfg_t *choices; /* owned, >= 1 when given */
    size_t n_choices;
} fs_plan_cfg_t;

enum fs_plan_search_kind { FS_PLAN_BISECT = 0, FS_PLAN_SCAN = 1 };

#endif
