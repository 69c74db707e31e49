/*
 * fs_failcfg: configuration of failures (scenario block `failures:`,
 * models/fs_failure.h) and of recovery (block `recovery:`, fs_model.c).
 * Part of fs_config_t; every field is a row of scenarios/fs_keys.c.
 */
#ifndef FS_FAILCFG_H
#define FS_FAILCFG_H

#include <stddef.h>
#include <stdint.h>

#include "../sim/fs_dist.h"
#include "../sim/fs_time.h"
#include "../traces/fs_synth.h"

/* failures: component failure processes, causes, repair (docs/failures.md). */
typedef struct fs_failure_cfg {
    int given;              /* the block was given (0: no failures at all) */
} fs_failure_cfg_t;

/* recovery: checkpoint/restart, retries, detection (docs/recovery.md). */
typedef struct fs_recovery_cfg {
    int given;
} fs_recovery_cfg_t;

#endif
