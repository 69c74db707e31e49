/*
 * fs_quotacfg: configuration of the quota-based schedulers, Kueue
 * (scheduler.kueue, models/fs_kueue.c) and Volcano (scheduler.volcano,
 * models/fs_volcano.c).  Part of fs_sched_cfg_t; every field is a row of
 * scenarios/fs_keys.c.
 */
#ifndef FS_QUOTACFG_H
#define FS_QUOTACFG_H

#include <stddef.h>
#include <stdint.h>

#include "../sim/fs_time.h"

typedef struct fs_kueue_cfg {
    int given;
} fs_kueue_cfg_t;

typedef struct fs_volcano_cfg {
    int given;
} fs_volcano_cfg_t;

#endif
