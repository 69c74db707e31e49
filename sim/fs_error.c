#include "fs_error.h"

#include <stdio.h>
#include <string.h>

void fs_error_clear(fs_error_t *err)
{
    if (!err)
        return;
    err->code = FS_OK;
    err->msg[0] = '\0';
}

int fs_error_vset(fs_error_t *err, int code, const char *fmt, va_list ap)
{
    if (err) {
        err->code = code;
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    }
    return code;
}

int fs_error_set(fs_error_t *err, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fs_error_vset(err, code, fmt, ap);
    va_end(ap);
    return code;
}

void fs_error_prefix(fs_error_t *err, const char *fmt, ...)
{
    if (!err)
        return;
    char pre[FS_ERROR_MSG_MAX];
    char old[FS_ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(pre, sizeof pre, fmt, ap);
    va_end(ap);
    memcpy(old, err->msg, sizeof old);
    snprintf(err->msg, sizeof err->msg, "%s: %s", pre, old);
}

const char *fs_error_name(int code)
{
    switch (code) {
#define FS_ERR_NAME_(name, val, ex, desc) case val: return #name;
        FS_ERRNO_MAP(FS_ERR_NAME_)
#undef FS_ERR_NAME_
    }
    return "FS_EUNKNOWN";
}

const char *fs_error_describe(int code)
{
    switch (code) {
#define FS_ERR_DESC_(name, val, ex, desc) case val: return desc;
        FS_ERRNO_MAP(FS_ERR_DESC_)
#undef FS_ERR_DESC_
    }
    return "unknown error";
}

int fs_error_exit_status(int code)
{
    switch (code) {
#define FS_ERR_EXIT_(name, val, ex, desc) case val: return ex;
        FS_ERRNO_MAP(FS_ERR_EXIT_)
#undef FS_ERR_EXIT_
    }
    return 1;
}
