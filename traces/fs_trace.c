#include "fs_trace.h"
#include "fs_detect.h"
#include "fs_helios.h"
#include "fs_openb.h"
#include "fs_pai.h"
#include "fs_remap.h"
#include "fs_philly.h"
#include "fs_swf.h"
#include "fs_tiresias.h"
#include "fs_native.h"

#include <string.h>

static const fs_trace_format_t formats[] = {
    {"native", "fleetsim native CSV (docs/traces.md), plain or gzip", fs_native_open},
    {"tiresias", "DL-scheduler research CSV job_id,num_gpu,submit_time,...,duration",
     fs_tiresias_open},
    {"openb", "Alibaba openb 2023 pod list (num_gpu, gpu_milli, gpu_spec, qos, times)",
     fs_openb_open},
    {"swf", "Standard Workload Format (Parallel Workloads Archive), 18 fields", fs_swf_open},
    {"helios", "SenseTime Helios cluster_log.csv (wall-clock times)", fs_helios_open},
    {"acme", "Shanghai AI Lab Acme trace_seren/kalos.csv (times with UTC offsets)",
     fs_helios_open_acme},
    {"pai", "Alibaba PAI 2020 task table (headerless; jobs from consecutive task rows)",
     fs_pai_open},
    {"philly", "Microsoft Philly cluster_job_log JSON (streamed one job at a time)",
     fs_philly_open},
    {"auto", "detected from the content (traces/fs_detect.h); the choice is written to stderr",
     fs_detect_open},
};

const fs_trace_format_t *fs_trace_formats(size_t *n)
{
    *n = sizeof formats / sizeof formats[0];
    return formats;
}

const fs_trace_format_t *fs_trace_format_find(const char *name)
{
    for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++)
        if (strcmp(formats[i].name, name) == 0)
            return &formats[i];
    return NULL;
}

int fs_trace_open(const char *format, const char *path, const fs_trace_opts_t *opts,
                  fs_source_t **out, fs_error_t *err)
{
    const fs_trace_format_t *f = fs_trace_format_find(format);
    if (!f) {
        char known[512] = "";
        for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++) {
            if (i)
                strncat(known, ", ", sizeof known - strlen(known) - 1);
            strncat(known, formats[i].name, sizeof known - strlen(known) - 1);
        }
        return fs_error_set(err, FS_EINVAL, "unknown trace format '%s' (known: %s)", format, known);
    }
    int rc = f->open(path, opts, out, err);
    if (rc || !opts || (!opts->teams && !opts->n_team_map && opts->load_scale == 1.0))
        return rc;
    /* destroys *out on failure */
    return fs_remap_wrap(out, opts->teams, (const char *const *)opts->team_users,
                         (const char *const *)opts->team_of, opts->n_team_map, opts->load_scale,
                         err);
}
