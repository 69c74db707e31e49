#include "fs_subkeys.h"
#include "../models/fs_costcfg.h"

#include <stddef.h>

/* Index = enum fs_billing. */
static const char *const billing_names[] = {
    [FS_BILL_OWNED] = "owned", [FS_BILL_ON_DEMAND] = "on_demand",
    [FS_BILL_RESERVED_1Y] = "reserved_1y", [FS_BILL_RESERVED_3Y] = "reserved_3y",
    [FS_BILL_SPOT] = "spot", [FS_BILL_LEASE] = "lease", NULL};

#define CP(f) offsetof(fs_cost_pool_cfg_t, f)
static const fs_key_t cost_pool_rows[] = {
    {.path = "pool", .type = FS_KT_STRING, .flags = FS_KF_REQUIRED, .off = CP(pool),
     .doc = "Name of a cluster pool (each pool at most once; pools not listed are owned at "
            "the defaults)."},
    {.path = "billing", .type = FS_KT_ENUM, .off = CP(billing), .names = billing_names,
     .def = "owned",
     .doc = "owned: bought (depreciation, energy, colocation, operations); on_demand, spot: "
            "cloud billed per busy GPU-hour; reserved_1y, reserved_3y: cloud billed per GPU-hour "
            "in the fleet; lease: lease_rate per GPU-month for every GPU in the fleet, committed for "
            "lease_term months, no residual."},
    {.path = "gpu_price", .type = FS_KT_DOUBLE, .flags = FS_KF_MIN, .off = CP(gpu_price),
     .min = 0, .def = "0", .unit = "$",
     .doc = "Price of one GPU (owned; the server and network shares are added); 0: the GPU "
            "type's default (docs/cost.md)."},
    {.path = "power_w", .type = FS_KT_DOUBLE, .flags = FS_KF_MIN, .off = CP(power_w), .min = 0,
     .def = "0", .unit = "W",
     .doc = "Peak server power per GPU including the host (owned); 0: the catalog's host_w."},
    {.path = "price", .type = FS_KT_DOUBLE, .flags = FS_KF_MIN, .off = CP(price), .min = 0,
     .def = "0", .unit = "$/GPU-h",
     .doc = "Cloud price per GPU-hour as charged; 0: the GPU type's on-demand price times the "
            "billing's discount or spot multiplier."},
    {.path = "burst", .type = FS_KT_BOOL, .off = CP(burst), .def = "false",
     .doc = "A burst pool: a job may start here only after waiting burst_after, and only while "
            "the pool's busy GPUs stay within burst_cap."},
    {.path = "burst_after", .type = FS_KT_DURATION, .flags = FS_KF_MIN, .off = CP(burst_after),
     .min = 0, .def = "0s", .unit = "s", .doc = "Wait before a job may burst to this pool."},
    {.path = "burst_cap", .type = FS_KT_UINT, .off = CP(burst_cap), .size = sizeof(uint32_t),
     .def = "0", .unit = "GPU", .doc = "Most GPUs busy in the burst pool at once (0: its size)."},
    {.path = "online", .type = FS_KT_DURATION, .flags = FS_KF_MIN, .off = CP(online), .min = 0,
     .def = "0s", .unit = "s",
     .doc = "Delivery date of the pool's nodes that are in no purchase batch (capex from then)."},
    {.path = "retire", .type = FS_KT_DURATION, .flags = FS_KF_MIN, .off = CP(retire), .min = 0,
     .def = "0s", .unit = "s",
     .doc = "Retirement date of those nodes (drained then; 0: never; must be after online)."},
    {.path = "lease_rate", .type = FS_KT_DOUBLE, .flags = FS_KF_MIN, .off = CP(lease_rate),
     .min = 0, .def = "0", .unit = "$/GPU-month",
     .doc = "billing lease: the monthly rate per GPU (a month of 730 h), energy and hosting "
            "included; required with lease."},
    {.path = "lease_term", .type = FS_KT_UINT, .off = CP(lease_term), .size = sizeof(uint32_t),
     .def = "0", .unit = "month",
     .doc = "billing lease: months committed from delivery (payments beyond plan.years are owed "
            "all the same); required with lease."},
    {.path = "embodied_kgco2e", .type = FS_KT_DOUBLE, .flags = FS_KF_MIN,
     .off = CP(embodied_kgco2e), .min = 0, .def = "0", .unit = "kgCO2e",
     .doc = "Embodied carbon of one node (server with its GPUs), amortised straight-line over "
            "cost.depreciation per owned GPU-second like capex (owned pools only); 0: none "
            "(no sourced default)."},
};

#define PU(f) offsetof(fs_purchase_cfg_t, f)
static const fs_key_t purchase_rows[] = {
    {.path = "pool", .type = FS_KT_STRING, .flags = FS_KF_REQUIRED, .off = PU(pool),
     .doc = "Name of a cluster pool."},
    {.path = "nodes", .type = FS_KT_UINT, .flags = FS_KF_REQUIRED | FS_KF_MIN, .off = PU(nodes),
     .size = sizeof(uint32_t), .min = 1,
     .doc = "Nodes in the batch (the batches of a pool are its last nodes, in list order)."},
    {.path = "at", .type = FS_KT_DURATION, .flags = FS_KF_MIN, .off = PU(at), .min = 0,
     .def = "0s", .unit = "s",
     .doc = "Delivery date (in service and capex from then); give at or quarter."},
    {.path = "quarter", .type = FS_KT_UINT, .off = PU(quarter), .size = sizeof(uint32_t),
     .def = "0",
     .doc = "Instead of at: delivered at the start of quarter Q (1, 2, ...; 91.3125 days each), "
            "the plan's quarterly cash flow pays it then (within plan.years)."},
    {.path = "retire", .type = FS_KT_DURATION, .flags = FS_KF_MIN, .off = PU(retire), .min = 0,
     .def = "0s", .unit = "s", .doc = "Retirement date (0: never; after `at`)."},
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))
const fs_keytab_t fs_keys_cost_pool = {"cost pool", cost_pool_rows, COUNT(cost_pool_rows),
                                       sizeof(fs_cost_pool_cfg_t)};
const fs_keytab_t fs_keys_purchase = {"purchase", purchase_rows, COUNT(purchase_rows),
                                      sizeof(fs_purchase_cfg_t)};
