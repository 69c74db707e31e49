/*
 * fs_reqtrace: a streaming reader of LLM inference request traces in the
 * Azure LLM inference trace format (Azure/AzurePublicDataset 2023 and 2024:
 * a CSV with the header TIMESTAMP,ContextTokens,GeneratedTokens; the
 * timestamp "YYYY-MM-DD HH:MM:SS.fffffff", no time zone), plain or gzip.
 *
 * Also BurstGPT (HPMLL/BurstGPT, arXiv 2401.17644: Timestamp in seconds from
 * 0:00 of its first day, Model, Request tokens, Response tokens, Total
 * tokens, Log Type; columns found by name, times kept as they are so that
 * hours of the day line up; a failed request's 0 response tokens count as 1).
 *
 * Either format may add the columns PrefixId and PrefixTokens (by name, both
 * or neither): the id of a shared prompt prefix (0: none) and its tokens, at
 * most the prompt's (vLLM's prefix caching; docs/traces.md "Request traces").
 *
 * Azure requests come one at a time in file order with their time relative
 * to the first row (which is 0).  Rows must be in time order: a row earlier than
 * the one before it is an error.  Every error names the file, the line, the
 * column (FILE:LINE:COL, the field's first character) and the field and
 * what was expected (FS_EINVAL), and the caller stops the run
 * with it.  An empty file, or one with only its header, has no requests
 * (valid: fs_reqtrace_probe tells, for a warning).  With repeat the file is read again after its last row, its
 * times shifted by the period: its span plus its mean gap between requests,
 * so a one-hour trace tiles a day.  Memory: the CSV buffer (1 MiB), never
 * the length of the trace.
 */
#ifndef FS_REQTRACE_H
#define FS_REQTRACE_H

#include <stdint.h>

#include "../sim/fs_error.h"
#include "../sim/fs_time.h"

typedef struct fs_reqtrace fs_reqtrace_t;

typedef struct fs_request {
    fs_time_t at;           /* us after the first row (plus periods with repeat) */
    uint32_t input;         /* prompt tokens (ContextTokens) */
    uint32_t output;        /* generated tokens (GeneratedTokens, at least 1) */
    uint32_t prefix, prefix_len;    /* shared prefix id (0: none) and tokens (<= input):
                                       the optional PrefixId, PrefixTokens columns (else 0) */
} fs_request_t;

/* Opens path (its header checked).  0, FS_EINVAL (a directory, bad
 * header: message names the file and line), FS_EIO (cannot open or read)
 * or FS_ENOMEM. */
int fs_reqtrace_open(const char *path, int repeat, fs_reqtrace_t **out, fs_error_t *err);
/* The next request: 1 (*r set), 0 at the end (never with repeat), or an
 * error with err set. */
int fs_reqtrace_next(fs_reqtrace_t *t, fs_request_t *r, fs_error_t *err);
void fs_reqtrace_close(fs_reqtrace_t *t);

/* Reads all of path (once, without repeat) for a request a replica can
 * never serve: a prompt of more than max_prompt tokens (0: no limit), or
 * one whose prompt and output need more than max_kv tokens of KV in blocks
 * of 16 (0: no limit).  0 none; 1 with err "PATH:LINE:COL: field ...: ..." and
 * the limit named by what_prompt or what_kv; or the reader's errors. */
int fs_reqtrace_check_len(const char *path, uint64_t max_prompt, const char *what_prompt,
                          uint64_t max_kv, const char *what_kv, fs_error_t *err);

/* Prefix ids above max_id (0: no limit) become errors at the row that has
 * one (a table of max_id + 1 entries is indexed by them). */
void fs_reqtrace_limit_prefix(fs_reqtrace_t *t, uint32_t max_id);

/* Reads all of path (once) as a run with requests.prefix.ids max_id would:
 * 0, or FS_EINVAL when it has no prefix columns ("PATH:1:1: no columns
 * ...") or a row is bad (a prefix id above max_id, a prefix longer than
 * its prompt, ...: "PATH:LINE:COL: field ..."), or the reader's errors.
 * An empty file passes (fs_reqtrace_probe warns about it). */
int fs_reqtrace_check_prefix(const char *path, uint32_t max_id, fs_error_t *err);

/* What a run would first see of path (the scenario loader, so that
 * validate refuses what run would): opens it and reads its first request.
 * 0 (a request), 1 (no request, only the header: err holds the warning),
 * or fs_reqtrace_open's and fs_reqtrace_next's errors. */
int fs_reqtrace_probe(const char *path, fs_error_t *err);

#endif
