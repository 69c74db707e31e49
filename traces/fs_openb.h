/*
 * fs_openb: Alibaba GPU cluster trace v2023 ("openb") pod lists read as an
 * fs_source_t.  Header:
 *   name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,
 *   creation_time,deletion_time,scheduled_time
 * (the multigpuNN variants have only the first five columns: every pod is
 * then submitted at 0 and runs opts.default_duration, which must be set).
 * One pod = one job: gpus = num_gpu, gpu_milli = the share of one GPU when
 * num_gpu is 1; gpu_spec (allowed models separated by '|') is the job's GPU
 * type as written; qos is the tenant and sets the priority (Guaranteed 3,
 * LS 2, Burstable 1, BE 0); creation_time is the submission, scheduled_time
 * the recorded start, deletion_time the recorded end, the run time is
 * deletion - (scheduled or creation).  CPU-only pods (num_gpu 0) are
 * skipped and counted ("cpu_only") or refused (opts.cpu_only).
 * docs/traces.md ("openb") is the reference.
 */
#ifndef FS_OPENB_H
#define FS_OPENB_H

#include "fs_topts.h"
#include "fs_source.h"

int fs_openb_open(const char *path, const fs_trace_opts_t *opts, fs_source_t **out,
                  fs_error_t *err);

#endif
