/*
 * fs_h5len: is an HDF5 file whole?  A results file cut short (a copy or
 * download interrupted, a full disk, `truncate`) fails in HDF5 with an
 * address or "truncated file" error that names no cause a user knows; this
 * reads the superblock's end-of-file address and compares it with the
 * file's size, so that readers can say "truncated" instead (exit status 2).
 */
#ifndef FS_H5LEN_H
#define FS_H5LEN_H

#include "../sim/fs_error.h"

/* FS_EINVAL with "PATH: truncated: ..." (its size and the size its HDF5
 * superblock records) when path holds an HDF5 superblock and is shorter
 * than that superblock says, or ends inside it; 0 otherwise (a whole file,
 * no HDF5 signature, or a file that cannot be read: the caller's own error
 * applies).  Reads at most a few hundred bytes. */
int fs_h5_check_whole(const char *path, fs_error_t *err);

#endif
