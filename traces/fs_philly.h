/*
 * fs_philly: the Microsoft Philly cluster_job_log (JSON) read as an
 * fs_source_t.  The file is a JSON array of job objects (or a sequence of
 * objects, one job each: JSON Lines):
 *   {"status": "Pass"|"Killed"|"Failed", "vc": ..., "jobid": ..., "user": ...,
 *    "submitted_time": "YYYY-MM-DD HH:MM:SS",
 *    "attempts": [{"start_time": ..., "end_time": ...,
 *                  "detail": [{"ip": ..., "gpus": ["gpu0", ...]}, ...]}, ...]}
 * A small streaming tokenizer reads one job object at a time (memory: the
 * read buffer and one job's few fields; strings longer than 255 bytes are
 * skipped unless the reader needs them, which is then an error).  Unknown
 * keys are skipped.  Mapping: id = the job's ordinal in the file; submit =
 * submitted_time (UTC); tenant = vc; GPUs = the first attempt's GPUs (the
 * sum over its detail of the gpus lists); run time = the sum of the
 * attempts' end - start; rec_start = the first attempt's start, rec_end =
 * the last attempt's end; status Pass -> completed, Killed -> killed,
 * Failed -> failed.  Jobs that never ran (no attempt with a start) or whose
 * attempt has no end ("None"/null) are skipped and counted.  JSON syntax
 * errors are fatal in both modes (the stream cannot be resynchronised);
 * bad values skip the job in lenient mode.  docs/traces.md ("philly").
 */
#ifndef FS_PHILLY_H
#define FS_PHILLY_H

#include "fs_topts.h"
#include "fs_source.h"

int fs_philly_open(const char *path, const fs_trace_opts_t *opts, fs_source_t **out,
                   fs_error_t *err);

#endif
