/*
 * fs_h5util: small HDF5 write helpers shared by the sweep index
 * (fs_index.c) and plan (fs_plan.c) writers.
 */
#ifndef FS_H5UTIL_H
#define FS_H5UTIL_H

#include <stddef.h>
#include <stdint.h>

#include <hdf5.h>

/* HDF5's automatic error printing, saved by fs_h5_quiet_begin (which
 * switches it off) and restored by fs_h5_quiet_end. */
typedef struct fs_h5_quiet {
    H5E_auto2_t func;
    void *data;
} fs_h5_quiet_t;

void fs_h5_quiet_begin(fs_h5_quiet_t *q);
void fs_h5_quiet_end(const fs_h5_quiet_t *q);

/* A transfer property list whose type-conversion buffer holds n rows of
 * `row` bytes (the larger of the file's and the memory's row), at most
 * HDF5's default 1 MB: HDF5 otherwise allocates and zeroes 1 MB for every
 * converting H5Dread or H5Dwrite, however few its rows.  Close it with
 * H5Pclose; < 0 on failure. */
hid_t fs_h5_xfer_rows(size_t n, size_t row);

/* A scalar H5T_NATIVE_DOUBLE attribute; 0 or -1. */
int fs_h5_attr_f64(hid_t loc, const char *name, double v);

/* A scalar fixed-length UTF-8 string attribute; 0 or -1. */
int fs_h5_attr_str(hid_t loc, const char *name, const char *s);
/* A 1-D array of fixed-length UTF-8 strings (H5S_NULL when n == 0); 0 or -1. */
int fs_h5_attr_strs(hid_t loc, const char *name, const char *const *s, size_t n);
/* A scalar little-endian uint64 attribute; 0 or -1. */
int fs_h5_attr_u64(hid_t loc, const char *name, uint64_t v);

/* Tables written in one call: packed compound rows described by columns. */
enum fs_h5_col_kind { FS_H5_U32, FS_H5_U64, FS_H5_F64, FS_H5_STR };
typedef struct fs_h5_col {
    const char *name;
    int kind;               /* enum fs_h5_col_kind */
    size_t width;           /* FS_H5_STR: bytes */
    size_t off;             /* in the packed row (fs_h5_layout sets it) */
} fs_h5_col_t;

size_t fs_h5_col_size(const fs_h5_col_t *c);
/* Lays out cols packed; returns the row size. */
size_t fs_h5_layout(fs_h5_col_t *cols, size_t n);
/* Dataset `name` on loc with nrows packed rows of `row` bytes (little-endian
 * file types, no modification times) and a "columns" attribute; 0 or -1. */
int fs_h5_write_table(hid_t loc, const char *name, const fs_h5_col_t *cols, size_t ncols,
                      size_t row, const void *data, size_t nrows);

#endif
