/*
 * fs_failure: component failures and their repair, as a model module
 * (fs_model_add_module).  Configured by the scenario block `failures:`
 * (fs_failure_cfg_t in fs_failcfg.h; docs/failures.md).
 *
 * Each failure process (a `components` item) gives every unit of a kind --
 * a GPU, a node, a node's network link, or a topology unit (NVLink domain,
 * rack = power domain, leaf switch, spine) -- an alternating renewal
 * process: the unit is up for a draw of tbf, fails (every node below goes
 * down with FS_DOWN_FAIL: the jobs running there are interrupted), is
 * repaired (a soft, hard or no repair by its cause, possibly after waiting
 * for one of `crews`), and comes back.  On top: planned outages, infant
 * mortality, lemon nodes, stragglers found by health checks, the NVL72
 * rack cordon rule and hot spares.
 *
 * It acts on the fleet only through fs_model_node_down / _up / _speed, and
 * balances its own downs and ups (a node holds a count of reasons).
 *
 * Determinism: every draw comes from a stream keyed by (seed, replication,
 * FS_RNG_FAILURE | FS_RNG_REPAIR | FS_RNG_CAUSE, (component, unit, n-th
 * failure of the unit)), so a unit's failure history does not depend on
 * event order, on the policy, or on the other components.
 *
 * Cost: one pending event per unit (its next failure) plus one per
 * outage in progress; per unit 4 bytes (8 more with infant mortality);
 * nothing scans all nodes after the start.
 */
#ifndef FS_FAILURE_H
#define FS_FAILURE_H

#include <stddef.h>

#include "fs_config.h"
#include "fs_failspec.h"
#include "fs_model.h"

/* Registers the failure module of the model's cfg->failures with model m
 * (its row of fs_model_modules; nothing unless cfg->failures.given).
 * Schedules every unit's first failure.  Returns 0, FS_EINVAL (err names
 * the key, e.g. a planned outage's unit out of range) or FS_ENOMEM. */
int fs_failures_attach(fs_model_t *m, fs_error_t *err);

/* failures.planned[].unit against the units of cluster cl (built from
 * cfg->cluster): 0, or FS_EINVAL with key set to the item's unit key
 * (what fs_failures_attach refuses; the loader calls it through
 * fs_model_cfg_check), FS_ENOMEM. */
int fs_failure_planned_check(const fs_config_t *cfg, const fs_cluster_t *cl, char *key,
                             size_t keylen, fs_error_t *err);

#endif
