/*
 * fs_sacct: a Slurm site's own job history, the output of
 *
 *   sacct -P -X --format=JobID,User,Account,Partition,QOS,Submit,Start,End,Timelimit,AllocTRES,State
 *
 * read as an fs_source_t (docs/traces.md, "sacct").  -P: '|'-separated
 * fields under a header line naming them (any order; other columns are
 * ignored; JobID, Submit, Start, End, AllocTRES and State are needed); -X:
 * one row per job allocation (no .batch/.extern step rows).
 * Mapping: GPUs = the `gres/gpu=N` entry of AllocTRES (a typed
 * `gres/gpu:TYPE=N` alone also gives the count, and TYPE is the job's GPU
 * type as the trace wrote it); run time = End - Start; Timelimit ->
 * estimate (UNLIMITED, Partition_Limit: none); Start and End are kept as the
 * recorded start and end (rec_start/rec_end, as the SWF reader does);
 * State's first word -> rec_state; the tenant is the Account (the User when
 * the account is empty or absent); JobID -> id when it is a plain number,
 * else (arrays 123_4, heterogeneous jobs 123+0) the row number.  Times are
 * sacct's local times without a zone, read as UTC (differences are right
 * except across a daylight-saving change).  Rows that cannot be replayed are
 * skipped and counted under their reason in both modes: never started
 * (Start Unknown/None: pending, or cancelled while pending), still running
 * (End Unknown), run time 0, and jobs without GPUs (workload.trace.cpu_only
 * skip; error refuses them).
 */
#ifndef FS_SACCT_H
#define FS_SACCT_H

#include "fs_topts.h"
#include "fs_source.h"

int fs_sacct_open(const char *path, const fs_trace_opts_t *opts, fs_source_t **out,
                  fs_error_t *err);

/* A Slurm time string as sacct's Timelimit and slurm.conf write them:
 * "M", "M:S", "H:M:S", "D-H", "D-H:M", "D-H:M:S" (the field counts that
 * each form allows; values need not be normalised: "90" is 90 minutes).
 * -> microseconds.  0, or -1 on anything else (UNLIMITED and the like are
 * the caller's). */
int fs_slurm_time(const char *s, size_t n, fs_time_t *out);

#endif
