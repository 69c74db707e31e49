/*
 * fs_helios: Slurm-style cluster logs with wall-clock times, read as an
 * fs_source_t:
 *   helios  SenseTime Helios cluster_log.csv: job_id,user,vc,gpu_num,cpu_num,
 *           node_num,state,submit_time,start_time,end_time,duration,queue
 *           (times "YYYY-MM-DD HH:MM:SS", no offset: taken as UTC)
 *   acme    Shanghai AI Lab Acme trace_seren.csv / trace_kalos.csv:
 *           job_id,user,node_num,gpu_num,cpu_num,type,state,submit_time,
 *           start_time,end_time,duration,queue,gpu_time (times with a UTC offset
 *           such as "2023-06-01 08:00:00+08:00", converted to UTC)
 * Columns are found by name.  Times become seconds from the first
 * submission (opts.keep_origin: seconds since 1970-01-01 UTC).  The run time
 * is `duration` when present, else end_time - start_time; start_time and
 * end_time are kept as rec_start / rec_end, state as rec_state (COMPLETED,
 * CANCELLED, FAILED, TIMEOUT, NODE_FAIL, OUT_OF_MEMORY, RUNNING; any case).
 * helios: tenant = vc; acme: tenant = user.  Jobs without GPUs are skipped
 * and counted or refused (opts.cpu_only); jobs with a zero run time are
 * skipped and counted.  docs/traces.md ("helios", "acme").
 */
#ifndef FS_HELIOS_H
#define FS_HELIOS_H

#include "fs_topts.h"
#include "fs_source.h"

int fs_helios_open(const char *path, const fs_trace_opts_t *opts, fs_source_t **out,
                   fs_error_t *err);
int fs_helios_open_acme(const char *path, const fs_trace_opts_t *opts, fs_source_t **out,
                        fs_error_t *err);

#endif
