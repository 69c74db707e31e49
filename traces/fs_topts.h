/*
 * fs_topts: the options every trace reader takes (fs_trace_opts_t), in a
 * header of their own: the shared reader core (fs_rdr.h), every reader and
 * the scenario config (models/fs_config.h) use them without depending on
 * any one reader.
 */
#ifndef FS_TOPTS_H
#define FS_TOPTS_H

#include <stddef.h>
#include <stdint.h>

#include "../sim/fs_time.h"

struct fs_csv;

/* Options of every trace reader (docs/traces.md says which format uses
 * which; the scenario keys are workload.trace.*).  The native reader uses
 * lenient and time_scale only (it never sorts and keeps its origin). */
/* workload.trace.cpu_only: rows without GPUs are skipped and counted, refused,
 * or (openb pod lists, which record CPU and memory) placed as CPU-only pods. */
enum fs_cpu_only { FS_CPU_ONLY_SKIP = 0, FS_CPU_ONLY_ERROR = 1, FS_CPU_ONLY_PLACE = 2 };
/* workload.trace.cancelled: jobs the trace records as cancelled (deleted)
 * before they started.  DEFAULT: each format as it always read them (openb
 * replays its pods deleted while Pending as running from creation to
 * deletion; swf and sacct skip and count them).  SKIP: skipped and counted.
 * WITHDRAW: kept with FS_JOB_WITHDRAW (traces/fs_job.h): they wait in the
 * queue until their recorded cancel time, then leave without running.  RUN
 * (openb only: the other formats record no run time for them): replayed as
 * running from submission to the cancel time. */
enum fs_cancelled { FS_CANCELLED_DEFAULT = 0, FS_CANCELLED_SKIP = 1, FS_CANCELLED_WITHDRAW = 2,
                    FS_CANCELLED_RUN = 3 };

typedef struct fs_trace_opts {
    int lenient;            /* skip bad rows (counted) instead of failing */
    double time_scale;      /* multiply durations by this (1.0 = as is) */
    uint32_t sort_window;   /* re-sort rows out of submission order within this many rows
                               (0: refuse every out-of-order row); default 65536 */
    int keep_origin;        /* 1: times as the trace states them; 0 (default): shifted so
                               that the first submission is at 0 */
    uint32_t procs_per_gpu; /* swf: processors per GPU (GPUs = ceil(procs / this)); 1 */
    int cpu_only;           /* rows without GPUs: enum fs_cpu_only */
    int cancelled;          /* jobs cancelled before they started: enum fs_cancelled */
    fs_time_t default_duration; /* run time for rows that record none (openb multigpu
                                   files without times), us; 0: such a file is an error */
    void *log;              /* FILE * for notes (format detected, rows re-sorted);
                               NULL: stderr */
    char *teams;            /* user,team CSV (traces/fs_remap.h); NULL: tenants as read.
                               Not owned by the readers (the config owns it) */
    char **team_users;      /* inline team map (workload.trace.team_map): user i -> */
    char **team_of;         /* team i; not owned by the readers (the config owns it) */
    size_t n_team_map;
    double load_scale;      /* arrival compression: submit times divided by this (1: as is) */
    /* The MIG profile names a trace may ask (native `mig_profile`): returns a
     * name's code (traces/fs_migname.h) or 0 for a name no GPU model has.
     * The scenario loader sets the model's table (models/fs_mig.h
     * fs_mig_code_find); NULL: every name of the form <C>g.<M>gb[+me]. */
    int32_t (*mig_profile)(const char *name, size_t len);
    struct fs_csv *take_csv;/* internal (format auto): a stream already open on the same
                               path, nothing consumed; the reader takes it over (and
                               zeroes it) instead of opening the path again */
} fs_trace_opts_t;

void fs_trace_opts_init(fs_trace_opts_t *o);

#endif
