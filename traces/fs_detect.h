/*
 * fs_detect: `format: auto` -- the trace format detected from the content.
 *
 * Reads the first line that is neither blank nor a '#' comment (plain or
 * gzip) and decides, in this order:
 *   1. it starts with ';'                               -> swf (header comment)
 *   2. it starts with '[' or '{'                        -> philly (JSON)
 *   3. a comma-separated header holding
 *        id, submit, gpus, duration                     -> native
 *        job_id, num_gpu, submit_time, duration         -> tiresias
 *        name, num_gpu, gpu_milli                       -> openb
 *        job_id, gpu_num, state, submit_time and vc     -> helios
 *        job_id, gpu_num, state, submit_time, no vc     -> acme
 *      10 fields, the 3rd an integer, the 4th a task status
 *        (Terminated, Failed, Running, Waiting, Interrupted) -> pai (headerless)
 *   4. 18 blank-separated numbers                       -> swf
 * Anything else is FS_EINVAL naming the line and asking for
 * workload.trace.format.  The choice is never silent: "FILE: format auto:
 * detected NAME (WHY)" is written to opts->log (stderr when NULL) before the
 * chosen reader opens the file.
 */
#ifndef FS_DETECT_H
#define FS_DETECT_H

#include <stddef.h>

#include "fs_topts.h"
#include "fs_source.h"

/* The detected format's name (a static string) and why, or FS_EINVAL /
 * FS_EIO / FS_ENOMEM.  why may be NULL. */
int fs_detect_format(const char *path, const char **format, char *why, size_t why_len,
                     fs_error_t *err);

/* Detects, notes the choice, and opens the trace with the chosen reader. */
int fs_detect_open(const char *path, const fs_trace_opts_t *opts, fs_source_t **out,
                   fs_error_t *err);

#endif
