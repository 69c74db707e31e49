/*
 * fs_defaults: a config (models/fs_config.h) with every key at its default,
 * and its release, both driven by the key table (scenarios/fs_keys.c, the
 * one place where each key's default and ownership are written).  They live
 * here, one floor above the type, because the key table is the scenario
 * language's; the model never creates or frees a config.
 */
#ifndef FS_DEFAULTS_H
#define FS_DEFAULTS_H

#include "../models/fs_config.h"

/* Defaults for every key (the key table's defaults).  c need not be
 * initialised.  Should allocating a string default fail, that field stays
 * NULL (the scenario loader checks and reports FS_ENOMEM). */
void fs_config_init(fs_config_t *c);
/* Frees everything; c is left released-but-valid (releasing it again is a
 * no-op). */
void fs_config_release(fs_config_t *c);

#endif
