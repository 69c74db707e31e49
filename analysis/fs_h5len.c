/*
 * fs_h5len: the superblock's end-of-file address against the file's size.
 *
 * The superblock (HDF5 File Format Specification, "Superblock") starts with
 * the 8-byte signature at offset 0, 512, 1024, 2048 ... (after a user
 * block).  Versions 0 and 1: version (byte 8), four version bytes, the size
 * of offsets (byte 13) and of lengths, then two B-tree K values, 4 bytes of
 * flags (and, version 1, 4 more bytes) before four addresses: base, free
 * space, end of file, driver information.  Versions 2 and 3: version, the
 * size of offsets (byte 9), of lengths, flags, then base, extension, end of
 * file and root addresses.  Addresses are little-endian, relative to the
 * base address; the file must reach base + end of file.  HDF5 itself
 * refuses such a file at open ("truncated file: eof = ..."), which is how a
 * truncated results file used to be reported.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "fs_h5len.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

static const unsigned char SIGNATURE[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};

/* A little-endian address of n bytes (n <= 8). */
static uint64_t le_addr(const unsigned char *p, unsigned n)
{
    uint64_t v = 0;
    for (unsigned i = n; i-- > 0;)
        v = v << 8 | p[i];
    return v;
}

/* want 0: the file ends inside its superblock (its recorded size unread). */
static int truncated(const char *path, fs_error_t *err, uint64_t size, uint64_t want)
{
    if (!want)
        return fs_error_set(err, FS_EINVAL,
                            "%s: truncated: the file has %llu bytes and ends inside its HDF5 "
                            "superblock (cut short by an interrupted copy or write, or a full "
                            "disk?)", path, (unsigned long long)size);
    return fs_error_set(err, FS_EINVAL,
                        "%s: truncated: the file has %llu bytes, its HDF5 superblock records "
                        "%llu (cut short by an interrupted copy or write, or a full disk?)",
                        path, (unsigned long long)size, (unsigned long long)want);
}

int fs_h5_check_whole(const char *path, fs_error_t *err)
{
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
        return 0;
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    uint64_t size = (uint64_t)st.st_size;
    int rc = 0;
    for (uint64_t at = 0; at < size; at = at ? at * 2 : 512) {
        unsigned char sb[128];
        size_t got;
        if (fseeko(f, (off_t)at, SEEK_SET) != 0 || (got = fread(sb, 1, sizeof sb, f)) < 8)
            break;
        if (memcmp(sb, SIGNATURE, 8) != 0)
            continue;
        if (got < 9) {
            rc = truncated(path, err, size, 0);
            break;
        }
        unsigned ver = sb[8], osz, first;
        if (ver <= 1) {
            osz = got > 13 ? sb[13] : 0;
            first = ver == 0 ? 24 : 28;
        } else if (ver <= 3) {
            osz = got > 9 ? sb[9] : 0;
            first = 12;
        } else {
            break;   /* a version this reader does not know: HDF5 will say */
        }
        if (osz == 0) {   /* the file ends before the size of offsets */
            rc = truncated(path, err, size, 0);
            break;
        }
        if (osz != 2 && osz != 4 && osz != 8)
            break;   /* not a superblock HDF5 writes: HDF5 will say */
        unsigned eof_at = first + 2 * osz;   /* base, then one address, then end of file */
        if (got < eof_at + osz) {
            rc = truncated(path, err, size, 0);
            break;
        }
        uint64_t base = le_addr(sb + first, osz), eof = le_addr(sb + eof_at, osz);
        uint64_t undef = osz == 8 ? UINT64_MAX : ((uint64_t)1 << (8 * osz)) - 1;
        if (eof != undef && base != undef && base + eof > size)
            rc = truncated(path, err, size, base + eof);
        break;
    }
    fclose(f);
    return rc;
}
