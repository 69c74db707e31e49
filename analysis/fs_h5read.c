/*
 * fs_h5read: column-by-name reading of results and sweep index files (see
 * fs_h5read.h).
 */
#include "fs_h5read.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <hdf5.h>

#include "../sim/fs_alloc.h"
#include "fs_h5len.h"
#include "fs_h5util.h"

struct fs_h5file {
    char *path;
    hid_t fid;
};

/* ---- HDF5 error plumbing: silence automatic printing during a call and
 * keep HDF5's innermost reason for the message. ---- */

/* (fs_h5_quiet_begin and _end, fs_h5util.h, switch the printing off and back on.) */

static herr_t innermost_cb(unsigned n, const H5E_error2_t *e, void *ud)
{
    char *buf = ud;
    if (n == 0) {
        const char *s = e->desc && *e->desc ? e->desc : e->func_name;
        snprintf(buf, 256, "%s", s ? s : "unknown error");
        for (char *p = buf; *p; p++)
            if (*p == '\n' || *p == '\r')
                *p = ' ';
    }
    return 0;
}

static int h5_fail(fs_error_t *err, const char *path, const char *step, const char *what)
{
    char detail[256] = "";
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, innermost_cb, detail);
    H5Eclear2(H5E_DEFAULT);
    return fs_error_set(err, FS_EIO, "%s: %s%s%s failed (HDF5: %s)", path, step, what ? " " : "",
                        what ? what : "", detail[0] ? detail : "no detail");
}

#define CLOSE(fn, id)           \
    do {                        \
        if ((id) >= 0)          \
            fn(id);             \
        (id) = H5I_INVALID_HID; \
    } while (0)

/* ---- files ---- */

int fs_h5read_open(const char *path, fs_h5file_t **out, fs_error_t *err)
{
    *out = NULL;
    fs_h5file_t *f = fs_calloc(1, sizeof *f);
    if (!f || !(f->path = fs_strdup(path))) {
        fs_free(f);
        return fs_error_set(err, FS_ENOMEM, "out of memory");
    }
    int trc = fs_h5_check_whole(path, err);   /* cut short: say so, not HDF5's error */
    if (trc) {
        fs_free(f->path);
        fs_free(f);
        return trc;
    }
    fs_h5_quiet_t c;
    fs_h5_quiet_begin(&c);
    htri_t is = H5Fis_hdf5(path);
    if (is <= 0) {
        H5Eclear2(H5E_DEFAULT);
        fs_h5_quiet_end(&c);
        fs_free(f->path);
        fs_free(f);
        FILE *fp = fopen(path, "rb");
        if (!fp)
            return fs_error_set(err, FS_EINVAL, "%s: cannot open: %s", path, strerror(errno));
        fclose(fp);
        return fs_error_set(err, FS_EINVAL, "%s: not an HDF5 file", path);
    }
    f->fid = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f->fid < 0) {
        int rc = h5_fail(err, path, "opening", NULL);
        fs_h5_quiet_end(&c);
        fs_free(f->path);
        fs_free(f);
        return rc;
    }
    fs_h5_quiet_end(&c);
    *out = f;
    return 0;
}

void fs_h5read_close(fs_h5file_t *f)
{
    if (!f)
        return;
    if (f->fid >= 0)
        H5Fclose(f->fid);
    fs_free(f->path);
    fs_free(f);
}

void fs_h5read_free_strings(char **s, size_t n)
{
    if (!s)
        return;
    for (size_t i = 0; i < n; i++)
        fs_free(s[i]);
    fs_free(s);
}

int fs_h5read_has(fs_h5file_t *f, const char *table)
{
    fs_h5_quiet_t c;
    fs_h5_quiet_begin(&c);
    int has = 0;
    if (H5Lexists(f->fid, table, H5P_DEFAULT) > 0 &&
        H5Oexists_by_name(f->fid, table, H5P_DEFAULT) > 0) {
        H5O_info_t info;
        if (H5Oget_info_by_name(f->fid, table, &info, H5P_DEFAULT) >= 0)
            has = info.type == H5O_TYPE_DATASET;
    }
    H5Eclear2(H5E_DEFAULT);
    fs_h5_quiet_end(&c);
    return has;
}

/* Opens a table; FS_EINVAL when absent. */
static int open_table(fs_h5file_t *f, const char *table, hid_t *did, fs_error_t *err)
{
    if (!fs_h5read_has(f, table))
        return fs_error_set(err, FS_EINVAL, "%s: no table /%s", f->path, table);
    *did = H5Dopen2(f->fid, table, H5P_DEFAULT);
    if (*did < 0)
        return h5_fail(err, f->path, "opening", table);
    return 0;
}

int fs_h5read_rows(fs_h5file_t *f, const char *table, size_t *n, fs_error_t *err)
{
    fs_h5_quiet_t c;
    fs_h5_quiet_begin(&c);
    hid_t did = H5I_INVALID_HID, sid = H5I_INVALID_HID;
    int rc = open_table(f, table, &did, err);
    if (!rc) {
        hsize_t dims[1] = {0};
        sid = H5Dget_space(did);
        if (sid < 0 || H5Sget_simple_extent_ndims(sid) != 1 ||
            H5Sget_simple_extent_dims(sid, dims, NULL) < 0)
            rc = fs_error_set(err, FS_EINVAL, "%s: /%s is not a one-dimensional table", f->path,
                              table);
        else
            *n = (size_t)dims[0];
    }
    CLOSE(H5Sclose, sid);
    CLOSE(H5Dclose, did);
    H5Eclear2(H5E_DEFAULT);
    fs_h5_quiet_end(&c);
    return rc;
}

static int member_kind(hid_t mt)
{
    switch (H5Tget_class(mt)) {
    case H5T_INTEGER:
    case H5T_FLOAT: return FS_H5COL_NUM;
    case H5T_STRING: return FS_H5COL_STR;
    case H5T_ENUM: return FS_H5COL_ENUM;
    default: return FS_H5COL_OTHER;
    }
}

int fs_h5read_columns(fs_h5file_t *f, const char *table, char ***names, int **kinds, size_t *n,
                      fs_error_t *err)
{
    *names = NULL;
    *kinds = NULL;
    *n = 0;
    fs_h5_quiet_t c;
    fs_h5_quiet_begin(&c);
    hid_t did = H5I_INVALID_HID, tid = H5I_INVALID_HID;
    int rc = open_table(f, table, &did, err);
    if (rc)
        goto out;
    tid = H5Dget_type(did);
    if (tid < 0 || H5Tget_class(tid) != H5T_COMPOUND) {
        rc = fs_error_set(err, FS_EINVAL, "%s: /%s is not a table of named columns", f->path,
                          table);
        goto out;
    }
    int nm = H5Tget_nmembers(tid);
    if (nm < 0) {
        rc = h5_fail(err, f->path, "reading the columns of", table);
        goto out;
    }
    char **nn = fs_calloc((size_t)nm + 1, sizeof *nn);
    int *kk = fs_calloc((size_t)nm + 1, sizeof *kk);
    if (!nn || !kk) {
        fs_free(nn);
        fs_free(kk);
        rc = fs_error_set(err, FS_ENOMEM, "out of memory");
        goto out;
    }
    for (int i = 0; i < nm; i++) {
        char *name = H5Tget_member_name(tid, (unsigned)i);
        hid_t mt = H5Tget_member_type(tid, (unsigned)i);
        nn[i] = name ? fs_strdup(name) : NULL;
        if (name)
            H5free_memory(name);
        kk[i] = mt >= 0 ? member_kind(mt) : FS_H5COL_OTHER;
        CLOSE(H5Tclose, mt);
        if (!nn[i]) {
            fs_h5read_free_strings(nn, (size_t)nm);
            fs_free(kk);
            rc = fs_error_set(err, FS_ENOMEM, "out of memory");
            goto out;
        }
    }
    *names = nn;
    *kinds = kk;
    *n = (size_t)nm;
out:
    CLOSE(H5Tclose, tid);
    CLOSE(H5Dclose, did);
    H5Eclear2(H5E_DEFAULT);
    fs_h5_quiet_end(&c);
    return rc;
}

/* The file type of column `column` of an open table (caller closes), or a
 * negative id with err set. */
static hid_t column_type(fs_h5file_t *f, hid_t did, const char *table, const char *column,
                         fs_error_t *err)
{
    hid_t tid = H5Dget_type(did);
    if (tid < 0) {
        h5_fail(err, f->path, "reading the type of", table);
        return H5I_INVALID_HID;
    }
    int idx = H5Tget_class(tid) == H5T_COMPOUND ? H5Tget_member_index(tid, column) : -1;
    hid_t mt = idx >= 0 ? H5Tget_member_type(tid, (unsigned)idx) : H5I_INVALID_HID;
    H5Tclose(tid);
    if (mt < 0)
        fs_error_set(err, FS_EINVAL, "%s: table /%s has no column '%s'", f->path, table, column);
    return mt;
}

int fs_h5read_f64(fs_h5file_t *f, const char *table, const char *column, double *out,
                  fs_error_t *err)
{
    fs_h5_quiet_t c;
    fs_h5_quiet_begin(&c);
    hid_t did = H5I_INVALID_HID, ft = H5I_INVALID_HID, mem = H5I_INVALID_HID;
    int rc = open_table(f, table, &did, err);
    if (rc)
        goto out;
    if ((ft = column_type(f, did, table, column, err)) < 0) {
        rc = err ? err->code : FS_EINVAL;
        goto out;
    }
    if (member_kind(ft) != FS_H5COL_NUM) {
        rc = fs_error_set(err, FS_EINVAL, "%s: column '%s' of /%s is not numeric", f->path,
                          column, table);
        goto out;
    }
    mem = H5Tcreate(H5T_COMPOUND, sizeof(double));
    if (mem < 0 || H5Tinsert(mem, column, 0, H5T_NATIVE_DOUBLE) < 0 ||
        H5Dread(did, mem, H5S_ALL, H5S_ALL, H5P_DEFAULT, out) < 0)
        rc = h5_fail(err, f->path, "reading column", column);
out:
    CLOSE(H5Tclose, mem);
    CLOSE(H5Tclose, ft);
    CLOSE(H5Dclose, did);
    H5Eclear2(H5E_DEFAULT);
    fs_h5_quiet_end(&c);
    return rc;
}

/* Copies a fixed-length string of size sz (null- or space-padded). */
static char *dup_fixed(const char *s, size_t sz)
{
    size_t len = 0;
    while (len < sz && s[len])
        len++;
    while (len > 0 && s[len - 1] == ' ')
        len--;
    return fs_strndup(s, len);
}

int fs_h5read_str(fs_h5file_t *f, const char *table, const char *column, char **out,
                  fs_error_t *err)
{
    size_t rows = 0;
    int rc = fs_h5read_rows(f, table, &rows, err);
    if (rc)
        return rc;
    for (size_t i = 0; i < rows; i++)
        out[i] = NULL;
    fs_h5_quiet_t c;
    fs_h5_quiet_begin(&c);
    hid_t did = H5I_INVALID_HID, ft = H5I_INVALID_HID, mt = H5I_INVALID_HID,
          mem = H5I_INVALID_HID;
    char *buf = NULL;
    if ((rc = open_table(f, table, &did, err)))
        goto out;
    if ((ft = column_type(f, did, table, column, err)) < 0) {
        rc = err ? err->code : FS_EINVAL;
        goto out;
    }
    int kind = member_kind(ft);
    size_t width;
    if (kind == FS_H5COL_STR && H5Tis_variable_str(ft) > 0) {
        mt = H5Tcopy(H5T_C_S1);
        if (mt >= 0 && (H5Tset_size(mt, H5T_VARIABLE) < 0 || H5Tset_cset(mt, H5Tget_cset(ft)) < 0))
            CLOSE(H5Tclose, mt);
        width = sizeof(char *);
    } else if (kind == FS_H5COL_STR) {
        width = H5Tget_size(ft);
        mt = H5Tcopy(H5T_C_S1);
        /* NULLPAD like the file: a NULLTERM memory type of the same width
         * would cut a string that fills its field ("fifo" in 4 bytes) */
        if (mt >= 0 && (H5Tset_size(mt, width) < 0 || H5Tset_cset(mt, H5Tget_cset(ft)) < 0 ||
                        H5Tset_strpad(mt, H5T_STR_NULLPAD) < 0))
            CLOSE(H5Tclose, mt);
    } else if (kind == FS_H5COL_ENUM) {
        mt = H5Tget_native_type(ft, H5T_DIR_ASCEND);
        width = mt >= 0 ? H5Tget_size(mt) : 0;
    } else {
        rc = fs_error_set(err, FS_EINVAL, "%s: column '%s' of /%s is not a string", f->path,
                          column, table);
        goto out;
    }
    if (mt < 0 || !width) {
        rc = h5_fail(err, f->path, "reading the type of column", column);
        goto out;
    }
    mem = H5Tcreate(H5T_COMPOUND, width);
    buf = fs_calloc(rows ? rows : 1, width);
    if (!buf) {
        rc = fs_error_set(err, FS_ENOMEM, "out of memory");
        goto out;
    }
    if (mem < 0 || H5Tinsert(mem, column, 0, mt) < 0 ||
        H5Dread(did, mem, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0) {
        rc = h5_fail(err, f->path, "reading column", column);
        goto out;
    }
    for (size_t i = 0; i < rows && !rc; i++) {
        const char *cell = buf + i * width;
        if (kind == FS_H5COL_STR && width == sizeof(char *) && H5Tis_variable_str(ft) > 0) {
            const char *s;
            memcpy(&s, cell, sizeof s);
            out[i] = fs_strdup(s ? s : "");
        } else if (kind == FS_H5COL_STR) {
            out[i] = dup_fixed(cell, width);
        } else {
            char name[128];
            if (H5Tenum_nameof(mt, cell, name, sizeof name) < 0) {
                H5Eclear2(H5E_DEFAULT);
                snprintf(name, sizeof name, "?");
            }
            out[i] = fs_strdup(name);
        }
        if (!out[i])
            rc = fs_error_set(err, FS_ENOMEM, "out of memory");
    }
    if (kind == FS_H5COL_STR && H5Tis_variable_str(ft) > 0) {
        hid_t sid = H5Dget_space(did);
        H5Dvlen_reclaim(mem, sid, H5P_DEFAULT, buf);
        CLOSE(H5Sclose, sid);
    }
    if (rc) {
        for (size_t i = 0; i < rows; i++) {
            fs_free(out[i]);
            out[i] = NULL;
        }
    }
out:
    fs_free(buf);
    CLOSE(H5Tclose, mem);
    CLOSE(H5Tclose, mt);
    CLOSE(H5Tclose, ft);
    CLOSE(H5Dclose, did);
    H5Eclear2(H5E_DEFAULT);
    fs_h5_quiet_end(&c);
    return rc;
}

/* ---- attributes ---- */

static hid_t open_attr(fs_h5file_t *f, const char *name, fs_error_t *err)
{
    if (H5Aexists(f->fid, name) <= 0) {
        H5Eclear2(H5E_DEFAULT);
        fs_error_set(err, FS_EINVAL, "%s: no root attribute '%s'", f->path, name);
        return H5I_INVALID_HID;
    }
    hid_t aid = H5Aopen(f->fid, name, H5P_DEFAULT);
    if (aid < 0)
        h5_fail(err, f->path, "opening attribute", name);
    return aid;
}

int fs_h5read_attr_str(fs_h5file_t *f, const char *name, char **out, fs_error_t *err)
{
    *out = NULL;
    fs_h5_quiet_t c;
    fs_h5_quiet_begin(&c);
    int rc = 0;
    hid_t aid = open_attr(f, name, err), ft = H5I_INVALID_HID, mt = H5I_INVALID_HID;
    if (aid < 0) {
        rc = err ? err->code : FS_EINVAL;
        goto out;
    }
    ft = H5Aget_type(aid);
    if (ft < 0 || H5Tget_class(ft) != H5T_STRING) {
        rc = fs_error_set(err, FS_EINVAL, "%s: attribute '%s' is not a string", f->path, name);
        goto out;
    }
    mt = H5Tcopy(H5T_C_S1);
    if (mt < 0 || H5Tset_cset(mt, H5Tget_cset(ft)) < 0) {
        rc = h5_fail(err, f->path, "reading attribute", name);
        goto out;
    }
    if (H5Tis_variable_str(ft) > 0) {
        char *s = NULL;
        H5Tset_size(mt, H5T_VARIABLE);
        if (H5Aread(aid, mt, &s) < 0) {
            rc = h5_fail(err, f->path, "reading attribute", name);
            goto out;
        }
        *out = fs_strdup(s ? s : "");
        H5free_memory(s);
    } else {
        size_t sz = H5Tget_size(ft);
        char *buf = fs_calloc(sz + 1, 1);
        if (!buf) {
            rc = fs_error_set(err, FS_ENOMEM, "out of memory");
            goto out;
        }
        H5Tset_size(mt, sz);
        if (H5Aread(aid, mt, buf) < 0) {
            fs_free(buf);
            rc = h5_fail(err, f->path, "reading attribute", name);
            goto out;
        }
        *out = dup_fixed(buf, sz);
        fs_free(buf);
    }
    if (!*out)
        rc = fs_error_set(err, FS_ENOMEM, "out of memory");
out:
    CLOSE(H5Tclose, mt);
    CLOSE(H5Tclose, ft);
    CLOSE(H5Aclose, aid);
    H5Eclear2(H5E_DEFAULT);
    fs_h5_quiet_end(&c);
    return rc;
}

int fs_h5read_attr_f64(fs_h5file_t *f, const char *name, double *out, fs_error_t *err)
{
    fs_h5_quiet_t c;
    fs_h5_quiet_begin(&c);
    int rc = 0;
    hid_t aid = open_attr(f, name, err), ft = H5I_INVALID_HID;
    if (aid < 0) {
        rc = err ? err->code : FS_EINVAL;
        goto out;
    }
    ft = H5Aget_type(aid);
    if (ft < 0 || member_kind(ft) != FS_H5COL_NUM) {
        rc = fs_error_set(err, FS_EINVAL, "%s: attribute '%s' is not a number", f->path, name);
        goto out;
    }
    if (H5Aread(aid, H5T_NATIVE_DOUBLE, out) < 0)
        rc = h5_fail(err, f->path, "reading attribute", name);
out:
    CLOSE(H5Tclose, ft);
    CLOSE(H5Aclose, aid);
    H5Eclear2(H5E_DEFAULT);
    fs_h5_quiet_end(&c);
    return rc;
}
