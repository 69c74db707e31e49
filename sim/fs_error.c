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

/* Messages are one line: control characters (a newline inside a value the
 * message quotes back, found by fuzzing the units parser) become '?'. */
static void one_line(char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f)
            *s = '?';
}

int fs_error_vset(fs_error_t *err, int code, const char *fmt, va_list ap)
{
    if (err) {
        err->code = code;
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        one_line(err->msg);
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
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(pre, sizeof pre, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    size_t pl = strlen(pre), cap = sizeof err->msg;
    if (pl + 3 >= cap)
        pl = cap - 3;
    size_t ml = strlen(err->msg);
    if (pl + 2 + ml >= cap)
        ml = cap - pl - 3;
    memmove(err->msg + pl + 2, err->msg, ml);
    err->msg[pl + 2 + ml] = '\0';
    memcpy(err->msg, pre, pl);
    err->msg[pl] = ':';
    err->msg[pl + 1] = ' ';
    one_line(err->msg);
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
