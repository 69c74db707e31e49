/*
 * fs_tiresias: the job CSV of the DL-scheduler research simulators
 * (Tiresias, Muri, Pollux, Sia) read as an fs_source_t:
 *   job_id,num_gpu,submit_time,iterations,model_name,duration,interval
 * Columns are found by name in the header (any order; iterations and
 * interval are not needed and may be absent; other columns are ignored).
 * submit_time and duration are seconds.  model_name becomes the job's
 * tenant (interned in order of first appearance) and its job_class is the
 * same index, so that results can be grouped per model.  Plain or gzip;
 * streamed; strict or lenient; see docs/traces.md ("tiresias").
 */
#ifndef FS_TIRESIAS_H
#define FS_TIRESIAS_H

#include "fs_topts.h"
#include "fs_source.h"

int fs_tiresias_open(const char *path, const fs_trace_opts_t *opts, fs_source_t **out,
                     fs_error_t *err);

#endif
