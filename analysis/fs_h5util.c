/*
 * Small HDF5 write helpers shared by fs_index.c and fs_plan.c (see
 * fs_h5util.h).
 */
#include "fs_h5util.h"
#include "../sim/fs_alloc.h"

#include <string.h>

void fs_h5_quiet_begin(fs_h5_quiet_t *q)
{
    if (H5Eget_auto2(H5E_DEFAULT, &q->func, &q->data) < 0) {
        q->func = NULL;
        q->data = NULL;
    }
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
}

void fs_h5_quiet_end(const fs_h5_quiet_t *q)
{
    H5Eset_auto2(H5E_DEFAULT, q->func, q->data);
}

/* Writes attribute `name` of file type ft and dataspace space from buf,
 * of memory type mt.  0 or -1. */
static int attr_write(hid_t loc, const char *name, hid_t ft, hid_t mt, hid_t space, const void *buf)
{
    hid_t a = H5Acreate2(loc, name, ft, space, H5P_DEFAULT, H5P_DEFAULT);
    if (a < 0)
        return -1;
    herr_t st = H5Awrite(a, mt, buf);
    H5Aclose(a);
    return st < 0 ? -1 : 0;
}

/* ---- attributes -------------------------------------------------------------- */

int fs_h5_attr_str(hid_t loc, const char *name, const char *s)
{
    size_t len = strlen(s);
    hid_t t = H5Tcopy(H5T_C_S1), sp = H5Screate(H5S_SCALAR);
    int rc = -1;
    if (t >= 0 && sp >= 0 && H5Tset_size(t, len ? len : 1) >= 0 &&
        H5Tset_strpad(t, H5T_STR_NULLPAD) >= 0 && H5Tset_cset(t, H5T_CSET_UTF8) >= 0)
        rc = attr_write(loc, name, t, t, sp, len ? s : "\0");
    if (t >= 0)
        H5Tclose(t);
    if (sp >= 0)
        H5Sclose(sp);
    return rc;
}

static int attr_scalar(hid_t loc, const char *name, hid_t ft, hid_t mt, const void *v)
{
    hid_t sp = H5Screate(H5S_SCALAR);
    int rc = sp < 0 ? -1 : attr_write(loc, name, ft, mt, sp, v);
    if (sp >= 0)
        H5Sclose(sp);
    return rc;
}

int fs_h5_attr_f64(hid_t loc, const char *name, double v)
{
    return attr_scalar(loc, name, H5T_NATIVE_DOUBLE, H5T_NATIVE_DOUBLE, &v);
}

hid_t fs_h5_xfer_rows(size_t n, size_t row)
{
    const size_t dflt = (size_t)1 << 20;
    size_t bytes = row == 0 ? 1 : n > dflt / row ? (row > dflt ? row : dflt) : n * row;
    hid_t dxpl = H5Pcreate(H5P_DATASET_XFER);
    if (dxpl >= 0 && H5Pset_buffer(dxpl, bytes ? bytes : 1, NULL, NULL) < 0) {
        H5Pclose(dxpl);
        return -1;
    }
    return dxpl;
}

int fs_h5_attr_u64(hid_t loc, const char *name, uint64_t v)
{
    return attr_scalar(loc, name, H5T_STD_U64LE, H5T_NATIVE_UINT64, &v);
}

/* A 1-D array of fixed-length strings (H5S_NULL when empty). */
int fs_h5_attr_strs(hid_t loc, const char *name, const char *const *s, size_t n)
{
    size_t w = 1;
    for (size_t i = 0; i < n; i++)
        if (strlen(s[i]) > w)
            w = strlen(s[i]);
    char *buf = n ? fs_calloc(n, w) : NULL;
    if (n && !buf)
        return -1;
    for (size_t i = 0; i < n; i++)
        memcpy(buf + i * w, s[i], strlen(s[i]));
    hsize_t dims[1] = {n};
    hid_t t = H5Tcopy(H5T_C_S1);
    hid_t sp = n ? H5Screate_simple(1, dims, NULL) : H5Screate(H5S_NULL);
    int rc = -1;
    if (t >= 0 && sp >= 0 && H5Tset_size(t, w) >= 0 && H5Tset_strpad(t, H5T_STR_NULLPAD) >= 0 &&
        H5Tset_cset(t, H5T_CSET_UTF8) >= 0)
        rc = attr_write(loc, name, t, t, sp, buf ? (const void *)buf : (const void *)"");
    if (t >= 0)
        H5Tclose(t);
    if (sp >= 0)
        H5Sclose(sp);
    fs_free(buf);
    return rc;
}

/* ---- tables ------------------------------------------------------------------ */


size_t fs_h5_col_size(const fs_h5_col_t *c)
{
    return c->kind == FS_H5_U32 ? 4 : c->kind == FS_H5_STR ? c->width : 8;
}

/* Lays out cols packed; returns the row size. */
size_t fs_h5_layout(fs_h5_col_t *cols, size_t n)
{
    size_t off = 0;
    for (size_t i = 0; i < n; i++) {
        cols[i].off = off;
        off += fs_h5_col_size(&cols[i]);
    }
    return off;
}

/* One compound type for file and memory: packed, little-endian (the
 * buffer is filled in host order; fleetsim builds on little-endian hosts
 * and HDF5 converts otherwise via the native types below). */
static hid_t row_type(const fs_h5_col_t *cols, size_t n, size_t row, int native)
{
    hid_t t = H5Tcreate(H5T_COMPOUND, row);
    if (t < 0)
        return -1;
    for (size_t i = 0; i < n; i++) {
        hid_t m;
        if (cols[i].kind == FS_H5_STR) {
            m = H5Tcopy(H5T_C_S1);
            H5Tset_size(m, cols[i].width);
            H5Tset_strpad(m, H5T_STR_NULLPAD);
        } else if (cols[i].kind == FS_H5_U32) {
            m = H5Tcopy(native ? H5T_NATIVE_UINT32 : H5T_STD_U32LE);
        } else if (cols[i].kind == FS_H5_U64) {
            m = H5Tcopy(native ? H5T_NATIVE_UINT64 : H5T_STD_U64LE);
        } else {
            m = H5Tcopy(native ? H5T_NATIVE_DOUBLE : H5T_IEEE_F64LE);
        }
        herr_t st = m < 0 ? -1 : H5Tinsert(t, cols[i].name, cols[i].off, m);
        if (m >= 0)
            H5Tclose(m);
        if (st < 0) {
            H5Tclose(t);
            return -1;
        }
    }
    return t;
}

int fs_h5_write_table(hid_t loc, const char *name, const fs_h5_col_t *cols, size_t ncols, size_t row,
                       const void *data, size_t nrows)
{
    hid_t ft = row_type(cols, ncols, row, 0), mt = row_type(cols, ncols, row, 1);
    hsize_t dims[1] = {nrows};
    hid_t sp = H5Screate_simple(1, dims, NULL), dcpl = H5Pcreate(H5P_DATASET_CREATE), d = -1;
    int rc = -1;
    if (ft >= 0 && mt >= 0 && sp >= 0 && dcpl >= 0 && H5Pset_obj_track_times(dcpl, 0) >= 0 &&
        (d = H5Dcreate2(loc, name, ft, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT)) >= 0 &&
        (nrows == 0 || H5Dwrite(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) >= 0))
        rc = 0;
    if (rc == 0) { /* column names for readers that want them without h5py */
        const char **names = fs_calloc(ncols ? ncols : 1, sizeof *names);
        if (!names)
            rc = -1;
        for (size_t i = 0; names && i < ncols; i++)
            names[i] = cols[i].name;
        if (names && fs_h5_attr_strs(d, "columns", names, ncols) < 0)
            rc = -1;
        fs_free(names);
    }
    if (d >= 0)
        H5Dclose(d);
    if (dcpl >= 0)
        H5Pclose(dcpl);
    if (sp >= 0)
        H5Sclose(sp);
    if (ft >= 0)
        H5Tclose(ft);
    if (mt >= 0)
        H5Tclose(mt);
    return rc;
}
