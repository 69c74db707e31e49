/*
 * fs_modules: the table of the model's modules (fs_model.h,
 * fs_module_def_t).  A new module is its file plus one row here; the model
 * (fs_model.c) knows modules only through this table and the ops they
 * register.  Rows are attached in this order.
 */
#include "fs_model.h"
#include "fs_autoscale.h"
#include "fs_burst.h"
#include "fs_capacity.h"
#include "fs_fabric_mod.h"
#include "fs_limits.h"
#include "fs_failure.h"
#include "fs_migrecut.h"
#include "fs_purchase.h"
#include "fs_service.h"

#include <stdio.h>
#include <string.h>

const fs_module_def_t fs_model_modules[] = {
    {"cloud burst", fs_burst_attach},          /* cost.pools[].burst (docs/cost.md) */
    {"purchase timeline", fs_purchase_attach}, /* cost.purchases, pools' online/retire */
    {"autoscale", fs_autoscale_attach},        /* cluster.autoscale */
    {"failures", fs_failures_attach},          /* failures (docs/failures.md) */
    {"services", fs_service_attach},           /* services (docs/services.md) */
    {"MIG re-partitioning", fs_migrecut_attach}, /* cluster.pools[].mig_repartition */
    {"outages", fs_capacity_attach},           /* cluster.outages (docs/traces.md) */
    {"fabric", fs_fabric_attach},              /* cluster.fabric (docs/models.md "Fabric") */
    {"user limits", fs_limits_attach},         /* scheduler.limits (docs/policies.md) */
};
const size_t fs_model_n_modules = sizeof fs_model_modules / sizeof fs_model_modules[0];

/* The message's leading key ("cluster.topology.nodes_per_rack: ..."). */
static void key_of(const char *msg, char *key, size_t keylen)
{
    size_t kl = strspn(msg, "abcdefghijklmnopqrstuvwxyz0123456789_.");
    snprintf(key, keylen, "%.*s", msg[kl] == ':' && kl < keylen ? (int)kl : 0, msg);
}

int fs_model_cfg_check(const fs_config_t *cfg, char *key, size_t keylen, fs_error_t *err)
{
    if (key && keylen)
        key[0] = '\0';
    fs_cluster_t cl;
    int rc = fs_cluster_init(&cl, &cfg->cluster, err);
    if (rc) {
        if (key && keylen && rc != FS_ENOMEM)
            key_of(err->msg, key, keylen);
        return rc;
    }
    rc = fs_failure_planned_check(cfg, &cl, key, keylen, err);
    if (!rc)
        rc = fs_capacity_cfg_check(cfg, &cl, key, keylen, err);
    if (!rc && cfg->services.n)
        rc = fs_service_pools_check(cfg, &cl, key, keylen, err);
    fs_cluster_release(&cl);
    return rc;
}
