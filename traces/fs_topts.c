#include "fs_topts.h"

#include <stddef.h>

void fs_trace_opts_init(fs_trace_opts_t *o)
{
    o->lenient = 0;
    o->time_scale = 1.0;
    o->load_scale = 1.0;
    o->sort_window = 65536;
    o->keep_origin = 0;
    o->procs_per_gpu = 1;
    o->cpu_only = 0;
    o->default_duration = 0;
    o->log = NULL;
    o->teams = NULL;
    o->team_users = NULL;
    o->team_of = NULL;
    o->n_team_map = 0;
    o->take_csv = NULL;
}
