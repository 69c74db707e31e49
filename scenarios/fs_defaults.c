#include "fs_defaults.h"
#include "fs_keys.h"
#include "../sim/fs_alloc.h"
#include "../models/fs_mig.h"

#include <string.h>

/* Defaults come from the key table (scenarios/fs_keys.c), the one place
 * where each key's default is written. */
void fs_config_init(fs_config_t *c)
{
    memset(c, 0, sizeof *c);
    fs_synth_cfg_init(&c->workload.synth);
    fs_trace_opts_init(&c->workload.trace.opts);
    c->workload.trace.opts.mig_profile = fs_mig_code_find;  /* the names the model knows */
    c->workload.kind = FS_WORKLOAD_SYNTHETIC;
    c->workload.arrival_process = FS_ARRIVAL_POISSON;
    /* Best effort: a string default that cannot be allocated stays NULL (the
     * scenario loader runs fs_keys_defaults itself and reports FS_ENOMEM). */
    (void)fs_keys_defaults(&fs_keys_config, c, NULL);
}

void fs_config_release(fs_config_t *c)
{
    for (size_t i = 0; c->cluster.pools && i < c->cluster.n_pools; i++)
        fs_free(c->cluster.pools[i].node_rank);     /* not a key: cluster.from sets it */
    fs_keys_release(&fs_keys_config, c);
    /* Whatever the synthetic config owns beyond the table's fields. */
    fs_synth_cfg_release(&c->workload.synth);
    fs_free(c->cost.carbon_hourly);    /* read from cost.carbon_series by the loader */
    fs_free(c->source_path);
    fs_free(c->source_text);
    memset(c, 0, sizeof *c);
    fs_synth_cfg_init(&c->workload.synth);
}
