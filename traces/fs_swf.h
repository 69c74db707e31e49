/*
 * fs_swf: the Standard Workload Format of the Parallel Workloads Archive,
 * read as an fs_source_t.  One job per line, 18 blank-separated fields
 * (job, submit, wait, run, allocated procs, avg cpu, used memory, requested
 * procs, requested time, requested memory, status, user, group, app, queue,
 * partition, preceding job, think time), -1 = unknown; ';' lines are header
 * comments (MaxProcs bounds the processor counts; UnixStartTime is the
 * origin that submit counts from).
 * Mapping: GPUs = ceil(procs / opts.procs_per_gpu) (requested procs, else
 * allocated); run time -> duration; requested time -> estimate; submit +
 * wait -> rec_start, + run -> rec_end; status 1/3 completed, 0/4 failed,
 * 5 killed; user -> tenant ("u<user>").  Jobs whose run time or processor
 * count is unknown (-1) or zero cannot be replayed: they are skipped and
 * counted under their reason in both modes.  docs/traces.md ("swf").
 */
#ifndef FS_SWF_H
#define FS_SWF_H

#include "fs_topts.h"
#include "fs_source.h"

int fs_swf_open(const char *path, const fs_trace_opts_t *opts, fs_source_t **out,
                fs_error_t *err);

#endif
