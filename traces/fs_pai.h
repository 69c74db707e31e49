/*
 * fs_pai: the Alibaba PAI 2020 task table (pai_task_table.csv, headerless)
 * read as an fs_source_t of jobs:
 *   job_name,task_name,inst_num,status,start_time,end_time,plan_cpu,plan_mem,
 *   plan_gpu,gpu_type
 * A job is a run of consecutive rows with the same job_name (the released
 * table lists a job's tasks together; a job whose tasks are split apart
 * becomes several jobs -- grouping them would need memory proportional to
 * the trace).  Per job: GPUs = sum of inst_num x plan_gpu / 100 (plan_gpu is
 * in percent of one GPU): below one GPU the job is fractional (gpus 1,
 * gpu_milli = percent x 10), above it is rounded up to whole GPUs; submit =
 * the earliest task start_time, rec_end = the latest end_time, run time =
 * their difference; gpu_type = the first task's GPU type (the constraint);
 * rec_state: any Failed task -> failed, else any Running -> running, else
 * all Terminated -> completed, else unknown.  Jobs without GPUs are skipped
 * and counted or refused (opts.cpu_only); jobs with a task that never
 * started or has not ended (empty times) or a zero run time are skipped
 * and counted.  Times are seconds (Unix).  docs/traces.md ("pai").
 *
 * A directory instead of a file: DIR/pai_task_table.csv (or .csv.gz) streams
 * as above, and the optional DIR/pai_job_table.csv
 *   job_name,inst_id,user,status,start_time,end_time
 * and DIR/pai_instance_table.csv
 *   job_name,task_name,inst_name,worker_name,inst_id,status,start_time,
 *   end_time,machine
 * are read first into hash tables keyed by job (and task) name: 32 bytes
 * per job and per task with instances, never the rows.  Job table: submit =
 * its start_time, tenant = user, rec_state = status, rec_start = when the
 * job really started; a task-table job missing from it is a row error
 * ("not in the job table").  Instance table: a task's instances = its
 * instance rows (else inst_num), so GPUs = sum of instances x plan_gpu; the
 * job's run = the span of its instances' times.  Side-table errors name
 * their own FILE:LINE; lenient skips count as "job table: REASON" /
 * "instance table: REASON".
 */
#ifndef FS_PAI_H
#define FS_PAI_H

#include "fs_topts.h"
#include "fs_source.h"

int fs_pai_open(const char *path, const fs_trace_opts_t *opts, fs_source_t **out,
                fs_error_t *err);

#endif
