/*
 * fs_trace: the table of trace formats.  One row per format: its name (the
 * scenario's workload.trace.format) and its reader.  Adding a format is one
 * new reader file plus one row in fs_trace.c.
 */
#ifndef FS_TRACE_H
#define FS_TRACE_H

#include <stddef.h>

#include "fs_topts.h"
#include "fs_source.h"

typedef struct fs_trace_format {
    const char *name;
    const char *doc;
    int (*open)(const char *path, const fs_trace_opts_t *opts, fs_source_t **out, fs_error_t *err);
} fs_trace_format_t;

const fs_trace_format_t *fs_trace_formats(size_t *n);
const fs_trace_format_t *fs_trace_format_find(const char *name);

/* Opens a trace of the named format.  Unknown format: FS_EINVAL naming the
 * known ones. */
int fs_trace_open(const char *format, const char *path, const fs_trace_opts_t *opts,
                  fs_source_t **out, fs_error_t *err);

#endif
