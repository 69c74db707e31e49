/*
 * fs_costkeys: the element tables of the cost block's lists (cost.pools,
 * cost.purchases; models/fs_costcfg.h), kept beside the key table of
 * scenarios/fs_keys.c, whose `cost.*` rows refer to them.
 */
#ifndef FS_COSTKEYS_H
#define FS_COSTKEYS_H

#include "fs_keys.h"

extern const fs_keytab_t fs_keys_cost_pool;  /* one item of cost.pools */
extern const fs_keytab_t fs_keys_purchase;   /* one item of cost.purchases */

#endif
