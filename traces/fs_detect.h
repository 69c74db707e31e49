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
 * workload.trace.format.
 *
 * The detector only decides; the format table (fs_trace.c, row "auto") opens
 * the stream, asks fs_detect_csv, writes the choice ("FILE: format auto:
 * detected NAME (WHY)" to opts->log, stderr when NULL; it is never silent)
 * and hands the same stream to the chosen reader.  So fs_trace includes
 * fs_detect and not the other way round (docs/layering.md: no include
 * circles).
 */
#ifndef FS_DETECT_H
#define FS_DETECT_H

#include <stddef.h>

#include "fs_csv.h"

/* The detected format's name (a static string) and why, or FS_EINVAL /
 * FS_EIO / FS_ENOMEM.  why may be NULL. */
int fs_detect_format(const char *path, const char **format, char *why, size_t why_len,
                     fs_error_t *err);

/* Decides the format of the stream c holds, from the chunk fs_csv_prefetch
 * reads, without consuming c: a reader can take c over and start at line 1
 * of the same stream (a FIFO or a pipe cannot be opened twice).  Returns as
 * fs_detect_format. */
int fs_detect_csv(fs_csv_t *c, const char **format, char *why, size_t why_len,
                  fs_error_t *err);

#endif
