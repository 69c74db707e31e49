#include "fs_trace.h"

#include <string.h>

static const fs_trace_format_t formats[] = {
    {"native", "fleetsim native CSV (docs/traces.md), plain or gzip", fs_native_open},
};

const fs_trace_format_t *fs_trace_formats(size_t *n)
{
    *n = sizeof formats / sizeof formats[0];
    return formats;
}

const fs_trace_format_t *fs_trace_format_find(const char *name)
{
    for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++)
        if (strcmp(formats[i].name, name) == 0)
            return &formats[i];
    return NULL;
}

int fs_trace_open(const char *format, const char *path, const fs_trace_opts_t *opts,
                  fs_source_t **out, fs_error_t *err)
{
    const fs_trace_format_t *f = fs_trace_format_find(format);
    if (!f) {
        char known[512] = "";
        for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++) {
            if (i)
                strncat(known, ", ", sizeof known - strlen(known) - 1);
            strncat(known, formats[i].name, sizeof known - strlen(known) - 1);
        }
        return fs_error_set(err, FS_EINVAL, "unknown trace format '%s' (known: %s)", format, known);
    }
    return f->open(path, opts, out, err);
}
