/*
 * fs_out: output paths and their temporaries (see fs_out.h).
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#ifndef _DEFAULT_SOURCE
#define _DEFAULT_SOURCE     /* readlink, realpath */
#endif

#include "fs_out.h"
#include "fs_alloc.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#ifndef NAME_MAX
#define NAME_MAX 255
#endif

#define MAX_LINKS 40            /* as the kernel's ELOOP limit */
#define PID_DIGITS 20           /* room reserved for ".tmp." + any pid */
#define TMP_TAG ".tmp."

static char *dup_n(const char *s, size_t n)
{
    char *p = fs_malloc(n + 1);
    if (p) {
        memcpy(p, s, n);
        p[n] = '\0';
    }
    return p;
}

/* Splits path into its directory ("." when none; "/" for the root) and
 * last component. */
static int split(const char *path, char **dir, const char **base)
{
    const char *slash = strrchr(path, '/');
    *base = slash ? slash + 1 : path;
    *dir = !slash ? dup_n(".", 1) : slash == path ? dup_n("/", 1)
                                                  : dup_n(path, (size_t)(slash - path));
    return *dir ? 0 : -1;
}

static uint32_t fnv1a(const char *s)
{
    uint32_t h = 2166136261u;
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 16777619u;
    }
    return h;
}

/* The temporary's last component without the pid: "BASE.tmp." when a pid
 * of PID_DIGITS digits still fits NAME_MAX, else "SHORT~HASH.tmp.".  The
 * prefix never depends on the pid, so every process computes the same one
 * (fs_out_remove_stale relies on it). */
static char *tmp_prefix(const char *base)
{
    size_t n = strlen(base), tag = strlen(TMP_TAG);
    if (n + tag + PID_DIGITS <= NAME_MAX) {
        char *p = fs_malloc(n + tag + 1);
        if (p)
            snprintf(p, n + tag + 1, "%s%s", base, TMP_TAG);
        return p;
    }
    size_t keep = NAME_MAX - tag - PID_DIGITS - 9;   /* "~" + 8 hex digits */
    char *p = fs_malloc(NAME_MAX + 1);
    if (p)
        snprintf(p, NAME_MAX + 1, "%.*s~%08x%s", (int)keep, base, (unsigned)fnv1a(base), TMP_TAG);
    return p;
}

char *fs_out_tmp_name(const char *target, long pid)
{
    char *dir = NULL;
    const char *base;
    if (split(target, &dir, &base))
        return NULL;
    char *pre = tmp_prefix(base);
    char *t = NULL;
    if (pre) {
        size_t n = strlen(target) + strlen(pre) + PID_DIGITS + 2;
        t = fs_malloc(n);
        if (t)
            snprintf(t, n, "%.*s%s%ld", (int)(base - target), target, pre, pid);
    }
    fs_free(pre);
    fs_free(dir);
    return t;
}

size_t fs_out_remove_stale(const char *target)
{
    char *dir = NULL;
    const char *base;
    if (split(target, &dir, &base))
        return 0;
    char *pre = tmp_prefix(base);
    DIR *d = pre ? opendir(dir) : NULL;
    size_t removed = 0, plen = pre ? strlen(pre) : 0;
    struct dirent *de;
    while (d && (de = readdir(d)) != NULL) {
        const char *name = de->d_name;
        if (strncmp(name, pre, plen) != 0)
            continue;
        const char *digits = name + plen;
        size_t nd = strspn(digits, "0123456789");
        if (nd == 0 || nd > 18 || digits[nd] != '\0' || digits[0] == '0')
            continue;
        long pid = strtol(digits, NULL, 10);
        if (pid <= 0 || pid == (long)getpid() || pid > (long)INT32_MAX)
            continue;
        /* Only a process that no longer exists: EPERM means alive (another
         * user's), and a live pid is never touched. */
        if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
            continue;
        size_t n = strlen(dir) + strlen(name) + 2;
        char *f = fs_malloc(n);
        struct stat st;
        if (f) {
            snprintf(f, n, "%s/%s", dir, name);
            if (lstat(f, &st) == 0 && S_ISREG(st.st_mode) && unlink(f) == 0)
                removed++;
        }
        fs_free(f);
    }
    if (d)
        closedir(d);
    fs_free(pre);
    fs_free(dir);
    return removed;
}

int fs_out_is_null(const char *path)
{
    struct stat a, b;
    return path && stat(path, &a) == 0 && S_ISCHR(a.st_mode) && stat("/dev/null", &b) == 0 &&
           S_ISCHR(b.st_mode) && a.st_rdev == b.st_rdev;
}

static const char *kind_of(mode_t m)
{
    return S_ISDIR(m) ? "a directory" : S_ISCHR(m) ? "a character device"
         : S_ISBLK(m) ? "a block device" : S_ISFIFO(m) ? "a FIFO" : S_ISSOCK(m) ? "a socket"
                                                                 : "not a regular file";
}

/* Follows the symbolic links of path to the name of the file they end at
 * (which may not exist).  Returns a malloc'd path, or NULL with err set. */
static char *follow_links(const char *path, fs_error_t *err)
{
    char *cur = fs_strdup(path);
    if (!cur) {
        fs_error_set(err, FS_ENOMEM, "%s: out of memory", path);
        return NULL;
    }
    for (int hops = 0;; hops++) {
        struct stat st;
        if (lstat(cur, &st) != 0 || !S_ISLNK(st.st_mode))
            return cur;
        if (hops == MAX_LINKS) {
            fs_error_set(err, FS_EUSAGE, "%s: too many levels of symbolic links", path);
            break;
        }
        char link[PATH_MAX];
        ssize_t k = readlink(cur, link, sizeof link - 1);
        if (k < 0) {
            fs_error_set(err, FS_EIO, "%s: cannot read the symbolic link %s: %s", path, cur,
                         strerror(errno));
            break;
        }
        link[k] = '\0';
        char *next;
        if (link[0] == '/') {
            next = fs_strdup(link);
        } else {    /* relative to the link's directory */
            const char *slash = strrchr(cur, '/');
            size_t dl = slash ? (size_t)(slash - cur) + 1 : 0, n = dl + (size_t)k + 1;
            next = fs_malloc(n);
            if (next)
                snprintf(next, n, "%.*s%s", (int)dl, cur, link);
        }
        if (!next) {
            fs_error_set(err, FS_ENOMEM, "%s: out of memory", path);
            break;
        }
        fs_free(cur);
        cur = next;
    }
    fs_free(cur);
    return NULL;
}

int fs_out_prepare(fs_out_t *o, const char *path, fs_error_t *err)
{
    memset(o, 0, sizeof *o);
    if (!path || !*path)
        return fs_error_set(err, FS_EUSAGE, "no output file name given");
    char *target = follow_links(path, err);
    if (!target)
        return err ? err->code : FS_EIO;
    struct stat st;
    int rc = 0;
    if (stat(target, &st) == 0) {
        if (!S_ISREG(st.st_mode)) {
            rc = fs_error_set(err, FS_EUSAGE, "%s: %s; fleetsim writes its output only to a "
                              "regular file (or a new name)%s", path, kind_of(st.st_mode),
                              fs_out_is_null(target) ? " (to write nothing, use --no-output)"
                                                     : "");
        } else if ((st.st_mode & 0222) == 0 || access(target, W_OK) != 0) {
            rc = fs_error_set(err, FS_EUSAGE, "%s: the file is read-only; fleetsim does not "
                              "replace it (make it writable, or choose another name)", path);
        } else {
            o->exists = 1;
            o->mode = (unsigned)(st.st_mode & 07777);
        }
    } else if (errno != ENOENT) {
        rc = fs_error_set(err, FS_EIO, "%s: cannot write there: %s", path, strerror(errno));
    }
    if (rc) {
        fs_free(target);
        return rc;
    }
    o->target = target;
    o->tmp = fs_out_tmp_name(target, (long)getpid());
    if (!o->tmp) {
        fs_out_release(o);
        return fs_error_set(err, FS_ENOMEM, "%s: out of memory", path);
    }
    fs_out_remove_stale(target);
    return 0;
}

int fs_out_commit(const fs_out_t *o, int (*rename_fn)(const char *, const char *),
                  fs_error_t *err)
{
    if (o->exists && chmod(o->tmp, (mode_t)o->mode) != 0) {
        int e = errno;
        unlink(o->tmp);
        return fs_error_set(err, FS_EIO, "%s: cannot keep the mode of the file replaced: %s",
                            o->target, strerror(e));
    }
    if ((rename_fn ? rename_fn : rename)(o->tmp, o->target) != 0) {
        int e = errno;
        unlink(o->tmp);
        return fs_error_set(err, FS_EIO, "%s: renaming %s into place failed: %s", o->target,
                            o->tmp, strerror(e));
    }
    return 0;
}

void fs_out_release(fs_out_t *o)
{
    fs_free(o->target);
    fs_free(o->tmp);
    memset(o, 0, sizeof *o);
}

int fs_out_check_inputs(const char *what, const char *out, const char *const *inputs, size_t n,
                        fs_error_t *err)
{
    (void)what;
    struct stat so, si;
    if (!out || stat(out, &so) != 0)
        return 0;
    for (size_t i = 0; i < n; i++) {
        if (!inputs[i] || stat(inputs[i], &si) != 0)
            continue;
        if (si.st_dev == so.st_dev && si.st_ino == so.st_ino)
            return fs_error_set(err, FS_EUSAGE, "the output %s is the input %s (the same "
                                "file): refusing to overwrite an input; choose another output",
                                out, inputs[i]);
    }
    return 0;
}

/* 1 when name is a run file name "pP-rR.h5". */
static int is_run_file(const char *name)
{
    unsigned long long p, r;
    int used = 0;
    return sscanf(name, "p%llu-r%llu.h5%n", &p, &r, &used) == 2 && used && name[used] == '\0';
}

int fs_out_check_dir_inputs(const char *what, const char *dir, const char *const *names,
                            size_t n_names, const char *const *inputs, size_t n,
                            fs_error_t *err)
{
    if (!dir)
        return 0;
    int rc = 0;
    for (size_t j = 0; !rc && j < n_names; j++) {
        size_t len = strlen(dir) + strlen(names[j]) + 2;
        char *p = fs_malloc(len);
        if (!p)
            return fs_error_set(err, FS_ENOMEM, "%s: out of memory", what);
        snprintf(p, len, "%s/%s", dir, names[j]);
        rc = fs_out_check_inputs(what, p, inputs, n, err);
        fs_free(p);
    }
    size_t len = strlen(dir) + 6;
    char *runs = fs_malloc(len);
    if (!runs)
        return fs_error_set(err, FS_ENOMEM, "%s: out of memory", what);
    snprintf(runs, len, "%s/runs", dir);
    struct stat sr, sd;
    if (!rc && stat(runs, &sr) == 0) {
        for (size_t i = 0; !rc && i < n; i++) {
            char *dn = NULL;
            const char *base;
            if (!inputs[i] || split(inputs[i], &dn, &base))
                continue;
            if (is_run_file(base) && stat(dn, &sd) == 0 && sd.st_dev == sr.st_dev &&
                sd.st_ino == sr.st_ino)
                rc = fs_error_set(err, FS_EUSAGE, "the input %s is a run file of the output "
                                  "directory %s: refusing to overwrite an input; choose another "
                                  "output", inputs[i], dir);
            fs_free(dn);
        }
    }
    fs_free(runs);
    return rc;
}

char *fs_out_join(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = fs_malloc(n);
    if (p)
        snprintf(p, n, "%s/%s", dir, name);
    return p;
}
