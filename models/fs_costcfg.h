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

/* cost: prices, power, depreciation, cloud and burst (docs/cost.md). */
typedef struct fs_cost_cfg {
    int given;
} fs_cost_cfg_t;

/* plan: SLOs and choices for `fleetsim plan` (docs/plan.md). */
typedef struct fs_plan_cfg {
    int given;
} fs_plan_cfg_t;

#endif
