/*
 * Small HDF5 write helpers shared by fs_index.c and fs_plan.c (see
 * fs_h5util.h).
 */
#include "fs_h5util.h"

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

int fs_h5_attr_write(hid_t loc, const char *name, hid_t type, hid_t space, const void *buf)
{
    hid_t a = H5Acreate2(loc, name, type, space, H5P_DEFAULT, H5P_DEFAULT);
    if (a < 0)
        return -1;
    herr_t st = H5Awrite(a, type, buf);
    H5Aclose(a);
    return st < 0 ? -1 : 0;
}

int fs_h5_attr_f64(hid_t loc, const char *name, double v)
{
    hid_t sp = H5Screate(H5S_SCALAR);
    int rc = sp < 0 ? -1 : fs_h5_attr_write(loc, name, H5T_NATIVE_DOUBLE, sp, &v);
    if (sp >= 0)
        H5Sclose(sp);
    return rc;
}
