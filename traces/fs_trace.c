#include "fs_trace.h"
#include "fs_detect.h"
#include "fs_helios.h"
#include "fs_openb.h"
#include "fs_pai.h"
#include "fs_remap.h"
#include "fs_philly.h"
#include "fs_sacct.h"
#include "fs_swf.h"
#include "fs_tiresias.h"
#include "fs_native.h"
#include "fs_csv.h"

#include <stdio.h>
#include <string.h>

static int open_auto(const char *path, const fs_trace_opts_t *opts, fs_source_t **out,
                     fs_error_t *err);

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
    {"sacct", "Slurm accounting: sacct -P -X --format=JobID,User,Account,Partition,QOS,Submit,"
              "Start,End,Timelimit,AllocTRES,State ('|'-separated, GPUs from gres/gpu)",
     fs_sacct_open},
    {"auto", "detected from the content (traces/fs_detect.h); the choice is written to stderr",
     open_auto},
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

/* format auto: detects (fs_detect.h), notes the choice, and opens the trace
 * with the chosen reader, which goes on from the same stream. */
static int open_auto(const char *path, const fs_trace_opts_t *opts, fs_source_t **out,
                     fs_error_t *err)
{
    *out = NULL;
    const char *format = NULL;
    char why[160];
    fs_csv_t c;
    int rc = fs_csv_open(&c, path, 0, err);
    if (rc)
        return rc;
    if ((rc = fs_detect_csv(&c, &format, why, sizeof why, err)) != 0) {
        fs_csv_close(&c);
        return rc;
    }
    FILE *log = opts && opts->log ? (FILE *)opts->log : stderr;
    fprintf(log, "%s: format auto: detected %s (%s)\n", path, format, why);
    fs_trace_opts_t o;
    if (opts)
        o = *opts;
    else
        fs_trace_opts_init(&o);
    o.take_csv = &c;        /* the reader goes on from the same stream */
    /* the team map and load scale are applied once, by the fs_trace_open
     * that called us for "auto" (applied here too, load_scale was squared) */
    o.teams = NULL;
    o.n_team_map = 0;
    o.load_scale = 1.0;
    rc = fs_trace_open(format, path, &o, out, err);
    fs_csv_close(&c);       /* when the reader did not take it (nothing if it did) */
    return rc;
}
