/*
 * fs_subkeys: the element tables of lists whose blocks live in their own files, which
 * rows of scenarios/fs_keys.c refer to: cost.pools and cost.purchases (fs_costkeys.c;
 * models/fs_costcfg.h), scheduler.kueue.cluster_queues and .flavors (fs_kueue_yaml.c).
 */
#ifndef FS_SUBKEYS_H
#define FS_SUBKEYS_H

#include "fs_keytab.h"

extern const fs_keytab_t fs_keys_cost_pool;     /* one item of cost.pools */
extern const fs_keytab_t fs_keys_purchase;      /* one item of cost.purchases */
extern const fs_keytab_t fs_keys_kueue_cq;      /* one scheduler.kueue.cluster_queues item */
extern const fs_keytab_t fs_keys_kueue_flavor;  /* one scheduler.kueue.flavors item */

#endif
