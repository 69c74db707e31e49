/*
 * fs_error: the one error vocabulary of fleetsim.
 *
 * Every fallible function returns an int status (0 on success, a negative
 * FS_E* code on failure) and, when given a non-NULL fs_error_t, fills it
 * with a human message.  Messages about input name the place:
 *   "FILE:LINE:COL: what was expected"  (scenario files)
 *   "FILE:LINE: field NAME: what was expected"  (trace rows)
 * Messages are always one line: control characters in a formatted message
 * (a newline inside a quoted input value) are replaced by '?'.
 * The code decides the process exit status (fs_error_exit_status):
 * bad input -> 2, everything else -> 1.
 *
 * The list below is an X-macro (after libuv's UV_ERRNO_MAP): it yields the
 * enum, fs_error_name() and the exit status, so they cannot drift apart.
 */
#ifndef FS_ERROR_H
#define FS_ERROR_H

#include <stdarg.h>
#include <stddef.h>

/*        name          value  exit  description */
#define FS_ERRNO_MAP(X)                                                   \
    X(FS_OK,            0,     0,   "success")                            \
    X(FS_EINVAL,       -1,     2,   "invalid input")                      \
    X(FS_EUSAGE,       -2,     2,   "bad usage")                          \
    X(FS_ENOMEM,       -3,     1,   "out of memory")                      \
    X(FS_EIO,          -4,     1,   "input/output error")                 \
    X(FS_ELIMIT,       -5,     2,   "value beyond a supported limit")     \
    X(FS_EINTERNAL,    -6,     1,   "internal error (a bug)")             \
    X(FS_EINTR,        -7,     1,   "interrupted")                        \
    X(FS_ESTUCK,       -8,     1,   "the run cannot go on (jobs can never start)")

enum fs_errno {
#define FS_ERR_ENUM_(name, val, ex, desc) name = val,
    FS_ERRNO_MAP(FS_ERR_ENUM_)
#undef FS_ERR_ENUM_
};

#define FS_ERROR_MSG_MAX 1024

typedef struct fs_error {
    int code;                    /* one of enum fs_errno */
    char msg[FS_ERROR_MSG_MAX];  /* human text, no trailing newline */
} fs_error_t;

/* Clears err (code FS_OK, empty message).  err may be NULL. */
void fs_error_clear(fs_error_t *err);

/* Sets err->code and formats the message; returns code so that callers can
 * write `return fs_error_set(err, FS_EINVAL, "...")`.  err may be NULL. */
int fs_error_set(fs_error_t *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int fs_error_vset(fs_error_t *err, int code, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));

/* Prepends "prefix: " to an already set message (context while unwinding). */
void fs_error_prefix(fs_error_t *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

const char *fs_error_name(int code);        /* "FS_EINVAL" */
const char *fs_error_describe(int code);    /* "invalid input" */
int fs_error_exit_status(int code);         /* 0, 1 or 2 */

#endif
