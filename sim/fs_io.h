/*
 * fs_io: the I/O fault-injection hook of fleetsim (the I/O twin of
 * fs_alloc's fail-after counter, after SQLite's test VFS).
 *
 * The trace readers (through fs_csv), the native trace writer and the
 * results writer make their file-system and zlib calls through these thin
 * wrappers, and the results writer asks fs_io_fault before each HDF5 call
 * it makes; so a test can make the Nth I/O operation from now fail and check
 * that every failure is clean: a clear FS_EIO message naming the file, no
 * leak, no file left at the target name that claims to be complete.
 *
 * An injected failure returns what the real call returns on failure, with
 * errno = EIO ("Input/output error").  The counter is process-wide test
 * configuration, not run state (like fs_alloc's): atomic, off by default,
 * set only by tests.  Counting is always on and costs one atomic add.
 */
#ifndef FS_IO_H
#define FS_IO_H

#include <stdint.h>
#include <stdio.h>
#include <zlib.h>

struct fs_error;

/* Counts one I/O operation; returns 1 (errno = EIO) when it must fail. */
int fs_io_fault(void);

/* Test hooks.  fail_after = N > 0: the Nth I/O operation from now
 * (1-based) and every later one fail until reset; 0 disables injection. */
void fs_io_fail_after(uint64_t n);
/* Number of I/O operations counted since process start. */
uint64_t fs_io_count(void);

/* The wrapped calls: each counts one operation, then fails (as documented
 * for the real call, errno = EIO) or calls through. */
FILE *fs_io_fopen(const char *path, const char *mode);
size_t fs_io_fwrite(const void *p, size_t size, size_t n, FILE *f);
int fs_io_rename(const char *from, const char *to);
gzFile fs_io_gzopen(const char *path, const char *mode);
/* fread as one operation: the bytes read (short only at the end of the
 * file), or -1 with errno set on a read error (real or injected). */
long fs_io_fread(void *p, size_t n, FILE *f);
int fs_io_gzwrite(gzFile f, const void *buf, unsigned len);
/* gzclose_w: on an injected failure the file is still closed (no leak),
 * and Z_ERRNO is returned. */
int fs_io_gzclose_w(gzFile f);

/* Largest scenario or manifest file fleetsim reads (bytes): 64 MiB
 * (docs/robustness.md).  A larger file, or a stream that goes on past it
 * (/dev/zero), is refused with FS_ELIMIT instead of being read for ever. */
#define FS_IO_TEXT_MAX ((size_t)64 << 20)

/* Reads a whole file of at most limit bytes into a NUL-terminated buffer
 * (fs_malloc'd; *len excludes the NUL).  what: "scenario", "manifest", for
 * messages.  Errors (err names path): FS_EINVAL when it cannot be opened or
 * read, FS_ELIMIT when it holds more than limit bytes, FS_ENOMEM.  Does not
 * count as an injected I/O operation. */
int fs_io_read_text(const char *path, const char *what, size_t limit, char **buf, size_t *len,
                    struct fs_error *err);

#endif
