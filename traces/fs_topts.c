#include "fs_topts.h"

#include <stddef.h>
#include <string.h>

void fs_trace_opts_init(fs_trace_opts_t *o)
{
    memset(o, 0, sizeof *o);    /* every pointer NULL, every flag off */
    o->time_scale = 1.0;
    o->load_scale = 1.0;
    o->sort_window = 65536;
    o->procs_per_gpu = 1;
}
