/*
 * fs_h5util: small HDF5 write helpers shared by the sweep index
 * (fs_index.c) and plan (fs_plan.c) writers.
 */
#ifndef FS_H5UTIL_H
#define FS_H5UTIL_H

#include <hdf5.h>

/* HDF5's automatic error printing, saved by fs_h5_quiet_begin (which
 * switches it off) and restored by fs_h5_quiet_end. */
typedef struct fs_h5_quiet {
    H5E_auto2_t func;
    void *data;
} fs_h5_quiet_t;

void fs_h5_quiet_begin(fs_h5_quiet_t *q);
void fs_h5_quiet_end(const fs_h5_quiet_t *q);

/* Creates attribute name on loc of type over space and writes buf (memory
 * type = type); 0 or -1. */
int fs_h5_attr_write(hid_t loc, const char *name, hid_t type, hid_t space, const void *buf);

/* A scalar H5T_NATIVE_DOUBLE attribute; 0 or -1. */
int fs_h5_attr_f64(hid_t loc, const char *name, double v);

#endif
