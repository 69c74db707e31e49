#include "fs_io.h"
#include "fs_alloc.h"
#include "fs_error.h"

#include <errno.h>
#include <string.h>
#include <stdatomic.h>

/* Test configuration and counter (see header): not run state. */
static _Atomic uint64_t io_served;
static _Atomic uint64_t io_fail_at;     /* 0 = off; else fail when served+1 >= it */

int fs_io_fault(void)
{
    uint64_t at = atomic_load_explicit(&io_fail_at, memory_order_relaxed);
    uint64_t k = atomic_fetch_add_explicit(&io_served, 1, memory_order_relaxed) + 1;
    if (at != 0 && k >= at) {
        errno = EIO;
        return 1;
    }
    return 0;
}

void fs_io_fail_after(uint64_t n)
{
    uint64_t now = atomic_load(&io_served);
    atomic_store(&io_fail_at, n ? now + n : 0);
}

uint64_t fs_io_count(void) { return atomic_load(&io_served); }

FILE *fs_io_fopen(const char *path, const char *mode)
{
    return fs_io_fault() ? NULL : fopen(path, mode);
}

size_t fs_io_fwrite(const void *p, size_t size, size_t n, FILE *f)
{
    return fs_io_fault() ? 0 : fwrite(p, size, n, f);
}

int fs_io_rename(const char *from, const char *to)
{
    return fs_io_fault() ? -1 : rename(from, to);
}

long fs_io_fread(void *p, size_t n, FILE *f)
{
    if (fs_io_fault())
        return -1;
    size_t k = fread(p, 1, n, f);
    if (k < n && ferror(f)) {
        if (errno == 0)
            errno = EIO;
        return -1;
    }
    return (long)k;
}

gzFile fs_io_gzopen(const char *path, const char *mode)
{
    return fs_io_fault() ? NULL : gzopen(path, mode);
}

int fs_io_gzwrite(gzFile f, const void *buf, unsigned len)
{
    return fs_io_fault() ? 0 : gzwrite(f, buf, len);
}

int fs_io_gzclose_w(gzFile f)
{
    if (fs_io_fault()) {
        int e = errno;
        gzclose_w(f);
        errno = e;
        return Z_ERRNO;
    }
    return gzclose_w(f);
}

int fs_io_read_text(const char *path, const char *what, size_t limit, char **out, size_t *len,
                    fs_error_t *err)
{
    *out = NULL;
    *len = 0;
    FILE *f = fopen(path, "rb");
    if (!f)
        return fs_error_set(err, FS_EINVAL, "%s: cannot read the %s: %s", path, what,
                            strerror(errno));
    char *buf = NULL;
    size_t n = 0, cap = 0;
    int rc = 0;
    for (;;) {
        /* grow in steps of at most 1 MiB past what is held, never past limit + 1 */
        size_t want = n + (n < 4096 ? 4096 : n > ((size_t)1 << 20) ? (size_t)1 << 20 : n);
        if (want > limit + 1)
            want = limit + 1;
        if (fs_grow((void **)&buf, &cap, want + 1, 1)) {
            rc = fs_error_set(err, FS_ENOMEM, "%s: out of memory", path);
            break;
        }
        size_t k = fread(buf + n, 1, want - n, f);
        n += k;
        if (n > limit) {
            rc = fs_error_set(err, FS_ELIMIT, "%s: the %s is larger than %zu bytes, the most "
                              "fleetsim reads (docs/robustness.md)", path, what, limit);
            break;
        }
        if (n < want) {   /* short read: end of file or error */
            if (ferror(f))
                rc = fs_error_set(err, FS_EINVAL, "%s: cannot read the %s: %s", path, what,
                                  strerror(errno));
            break;
        }
    }
    fclose(f);
    if (rc) {
        fs_free(buf);
        return rc;
    }
    buf[n] = '\0';
    *out = buf;
    *len = n;
    return 0;
}
