/*
 * fs_h5read: reading results files (docs/results.md) and sweep index files
 * (docs/sweeps.md) back, column by column, with the HDF5 C API.
 *
 * Tables are read by column NAME, never by position or struct layout, so a
 * reader keeps working when a later format adds columns.  Numeric columns
 * (integers, floats) convert to double through HDF5's own type conversion;
 * string columns (fixed-length or variable-length) and enum columns (as
 * their member names) read as strings.
 *
 * Owns: one open HDF5 file (read-only) per fs_h5file_t, from open to close.
 * HDF5's automatic error printing is switched off for the duration of each
 * call and restored after; failures are FS_EIO ("FILE: step failed (HDF5:
 * innermost reason)") or FS_EINVAL for a missing file, table or column.
 */
#ifndef FS_H5READ_H
#define FS_H5READ_H

#include <stddef.h>
#include <stdint.h>

#include "../sim/fs_error.h"

typedef struct fs_h5file fs_h5file_t;

enum fs_h5col_kind {
    FS_H5COL_NUM = 0,   /* integer or float: readable with fs_h5read_f64 */
    FS_H5COL_STR = 1,   /* fixed or variable-length string */
    FS_H5COL_ENUM = 2,  /* enumeration: fs_h5read_str gives the names */
    FS_H5COL_OTHER = 3
};

/* Opens path read-only.  FS_EINVAL when it does not exist or is not an
 * HDF5 file (bad input), FS_EIO when HDF5 fails to open an HDF5 file. */
int fs_h5read_open(const char *path, fs_h5file_t **out, fs_error_t *err);
void fs_h5read_close(fs_h5file_t *f);

/* 1 if a dataset (or a link resolving to one) of that name exists at the
 * root, else 0. */
int fs_h5read_has(fs_h5file_t *f, const char *table);

/* Rows of a one-dimensional table. */
int fs_h5read_rows(fs_h5file_t *f, const char *table, size_t *n, fs_error_t *err);

/* Column names (fs_strdup'd, in file order) and kinds of a compound table.
 * Free with fs_h5read_free_strings(*names, *n) and fs_free(*kinds). */
int fs_h5read_columns(fs_h5file_t *f, const char *table, char ***names, int **kinds, size_t *n,
                      fs_error_t *err);

/* Reads a numeric column into out[0..rows).  FS_EINVAL if no such column
 * or it is not numeric. */
int fs_h5read_f64(fs_h5file_t *f, const char *table, const char *column, double *out,
                  fs_error_t *err);

/* Reads a string or enum column: out[0..rows) are fs_strdup'd strings. */
int fs_h5read_str(fs_h5file_t *f, const char *table, const char *column, char **out,
                  fs_error_t *err);

/* Root attributes.  FS_EINVAL when absent. */
int fs_h5read_attr_str(fs_h5file_t *f, const char *name, char **out, fs_error_t *err);
int fs_h5read_attr_f64(fs_h5file_t *f, const char *name, double *out, fs_error_t *err);

/* Frees n fs_strdup'd strings and the array. */
void fs_h5read_free_strings(char **s, size_t n);

#endif
