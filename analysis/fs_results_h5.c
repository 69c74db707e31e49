/*
 * fs_results_h5: the results writer's HDF5 plumbing.  HDF5's own error
 * printing is replaced, for the duration of each public call, by a handler
 * that records the first error (the caller's handler is restored after);
 * failures become FS_EIO naming the file, the step and HDF5's innermost
 * error description, on one line.  Tables are H5TB-conforming compound
 * datasets (fs_results.c's header comment).
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "fs_h5util.h"
#include "fs_results_int.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>


#include "../sim/fs_io.h"

static herr_t innermost_cb(unsigned n, const H5E_error2_t *e, void *ud)
{
    h5call_t *c = ud;
    if (n == 0) {
        const char *s = e->desc && *e->desc ? e->desc : e->func_name;
        snprintf(c->detail, sizeof c->detail, "%s", s ? s : "unknown error");
        for (char *p = c->detail; *p; p++)   /* one line: "time = ...\n, filename" */
            if (*p == '\n' || *p == '\r')
                *p = ' ';
    }
    return 0;
}

/* The automatic handler while a call runs: records instead of printing. */
static herr_t record_error(hid_t estack, void *ud)
{
    h5call_t *c = ud;
    if (!c->detail[0])
        H5Ewalk2(estack, H5E_WALK_UPWARD, innermost_cb, c);
    return 0;
}

void fs_rs_call_begin(h5call_t *c, const char *file)
{
    c->file = file;
    c->detail[0] = '\0';
    if (H5Eget_auto2(H5E_DEFAULT, &c->old_func, &c->old_data) < 0) {
        c->old_func = NULL;
        c->old_data = NULL;
    }
    H5Eset_auto2(H5E_DEFAULT, record_error, c);
}

void fs_rs_call_end(const h5call_t *c)
{
    H5Eset_auto2(H5E_DEFAULT, c->old_func, c->old_data);
}

/* Call right after the failing HDF5 call: FS_EIO naming the file, the step
 * and HDF5's innermost error description. */
int fs_rs_h5_fail(h5call_t *c, fs_error_t *err, const char *step)
{
    if (!c->detail[0])
        H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, innermost_cb, c);
    int rc = fs_error_set(err, FS_EIO, "%s: %s failed (HDF5: %s)", c->file, step,
                          c->detail[0] ? c->detail : "no detail");
    c->detail[0] = '\0';
    return rc;
}

/* The fault-injection hook (sim/fs_io.h): counts one HDF5 call and, when
 * it must fail, records why as HDF5's detail would be. */
int fs_rs_h5_injected(h5call_t *c)
{
    if (!fs_io_fault())
        return 0;
    snprintf(c->detail, sizeof c->detail, "injected I/O failure: %s", strerror(EIO));
    return 1;
}

/* ---- attributes ------------------------------------------------------- */

/* Scalar attribute of file type ftype written from memory type mtype. */
static herr_t attr_write(hid_t loc, const char *name, hid_t ftype, hid_t mtype, const void *val)
{
    herr_t st = -1;
    hid_t sid = H5Screate(H5S_SCALAR);
    hid_t aid = H5I_INVALID_HID;
    if (sid < 0)
        return -1;
    aid = H5Acreate2(loc, name, ftype, sid, H5P_DEFAULT, H5P_DEFAULT);
    if (aid >= 0)
        st = H5Awrite(aid, mtype, val);
    CLOSE(H5Aclose, aid);
    CLOSE(H5Sclose, sid);
    return st;
}

/* Variable-length UTF-8 string: h5py reads it as str. */
herr_t fs_rs_attr_str(hid_t loc, const char *name, const char *value)
{
    hid_t t = H5Tcopy(H5T_C_S1);
    if (t < 0)
        return -1;
    herr_t st = -1;
    if (H5Tset_size(t, H5T_VARIABLE) >= 0 && H5Tset_cset(t, H5T_CSET_UTF8) >= 0) {
        const char *v = value ? value : "";
        st = attr_write(loc, name, t, t, &v);
    }
    H5Tclose(t);
    return st;
}

/* A fixed-size, NUL-terminated ASCII string attribute, as H5LTset_attribute_string
 * writes it (the PyTables table attributes), on an object already open. */
static herr_t attr_fixed_str(hid_t loc, const char *name, const char *value)
{
    hid_t t = H5Tcopy(H5T_C_S1);
    if (t < 0)
        return -1;
    herr_t st = -1;
    if (H5Tset_size(t, strlen(value) + 1) >= 0 && H5Tset_strpad(t, H5T_STR_NULLTERM) >= 0)
        st = attr_write(loc, name, t, t, value);
    H5Tclose(t);
    return st;
}

herr_t fs_rs_attr_i32(hid_t loc, const char *name, int32_t v)
{
    return attr_write(loc, name, H5T_STD_I32LE, H5T_NATIVE_INT32, &v);
}

herr_t fs_rs_attr_u64(hid_t loc, const char *name, uint64_t v)
{
    return attr_write(loc, name, H5T_STD_U64LE, H5T_NATIVE_UINT64, &v);
}

herr_t fs_rs_attr_f64(hid_t loc, const char *name, double v)
{
    return attr_write(loc, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &v);
}

/* ---- tables ------------------------------------------------------------ */

/* The file type of one column (a fresh id the caller closes). */
hid_t fs_rs_kind_file_type(enum col_kind k, size_t strsz)
{
    hid_t t = H5I_INVALID_HID;
    switch (k) {
    case K_U64: return H5Tcopy(H5T_STD_U64LE);
    case K_I32: return H5Tcopy(H5T_STD_I32LE);
    case K_U32: return H5Tcopy(H5T_STD_U32LE);
    case K_F64: return H5Tcopy(H5T_IEEE_F64LE);
    case K_STATE:
        if ((t = H5Tenum_create(H5T_NATIVE_INT32)) < 0)
            return t;
        for (int32_t v = 0; v < (int32_t)N_STATES; v++) {
            if (H5Tenum_insert(t, fs_job_state_name(v), &v) < 0) {
                H5Tclose(t);
                return H5I_INVALID_HID;
            }
        }
        return t;
    case K_COMPONENT:
    case K_REPAIR: {
        const char *(*name)(int) = k == K_COMPONENT ? fs_failure_component_name : fs_repair_path_name;
        if ((t = H5Tenum_create(H5T_NATIVE_INT32)) < 0)
            return t;
        for (int32_t v = 0; strcmp(name(v), "?") != 0; v++) {
            if (H5Tenum_insert(t, name(v), &v) < 0) {
                H5Tclose(t);
                return H5I_INVALID_HID;
            }
        }
        return t;
    }
    case K_STR:
        if ((t = H5Tcopy(H5T_C_S1)) < 0)
            return t;
        if (H5Tset_size(t, strsz) < 0 || H5Tset_strpad(t, H5T_STR_NULLPAD) < 0 ||
            H5Tset_cset(t, H5T_CSET_UTF8) < 0) {
            H5Tclose(t);
            return H5I_INVALID_HID;
        }
        return t;
    }
    return H5I_INVALID_HID;
}

size_t fs_rs_kind_mem_size(enum col_kind k, size_t strsz)
{
    switch (k) {
    case K_U64: return sizeof(uint64_t);
    case K_I32: return sizeof(int32_t);
    case K_U32: return sizeof(uint32_t);
    case K_F64: return sizeof(double);
    case K_STATE: return sizeof(int32_t);
    case K_COMPONENT:
    case K_REPAIR: return sizeof(int32_t);
    case K_STR: return strsz;
    }
    return 0;
}

size_t fs_rs_col_strsz(const table_spec_t *t, size_t i)
{
    return t->strsz ? t->strsz[i] : 0;
}

/* The packed compound file type of a table. */
static hid_t table_file_type(const table_spec_t *t)
{
    size_t total = 0;
    for (size_t i = 0; i < t->ncols; i++)
        total += fs_rs_kind_mem_size(t->cols[i].kind, fs_rs_col_strsz(t, i));
    hid_t ct = H5Tcreate(H5T_COMPOUND, total);
    if (ct < 0)
        return ct;
    size_t off = 0;
    for (size_t i = 0; i < t->ncols; i++) {
        hid_t ft = fs_rs_kind_file_type(t->cols[i].kind, fs_rs_col_strsz(t, i));
        herr_t st = ft < 0 ? -1 : H5Tinsert(ct, t->cols[i].name, off, ft);
        if (ft >= 0)
            H5Tclose(ft);
        if (st < 0) {
            H5Tclose(ct);
            return H5I_INVALID_HID;
        }
        off += fs_rs_kind_mem_size(t->cols[i].kind, fs_rs_col_strsz(t, i));
    }
    return ct;
}

/* "name:unit; name:unit; ..." */
static void columns_note(const table_spec_t *t, char *buf, size_t cap)
{
    size_t len = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < t->ncols && len < cap; i++) {
        int k = snprintf(buf + len, cap - len, "%s%s:%s", i ? "; " : "", t->cols[i].name,
                         t->cols[i].unit);
        if (k < 0)
            break;
        len += (size_t)k;
    }
}

/* Creates an empty, extendible, chunked and compressed table with the
 * H5TB attributes (so that H5TB* and PyTables treat it as a table). */
int fs_rs_make_table(hid_t fid, h5call_t *c, const table_spec_t *t, fs_error_t *err)
{
    int rc = 0;
    hid_t ct = H5I_INVALID_HID, sid = H5I_INVALID_HID, dcpl = H5I_INVALID_HID;
    hid_t did = H5I_INVALID_HID;
    hsize_t dims[1] = {0}, maxdims[1] = {H5S_UNLIMITED}, chunk[1] = {t->chunk};
    char step[128];
    char note[4096];

    snprintf(step, sizeof step, "creating /%s", t->name);
    H5TRY(ct = table_file_type(t), step);
    H5TRY(sid = H5Screate_simple(1, dims, maxdims), step);
    H5TRY(dcpl = H5Pcreate(H5P_DATASET_CREATE), step);
    /* no modification times in object headers: the same run gives a
     * byte-identical file */
    H5TRY(H5Pset_obj_track_times(dcpl, 0), step);
    H5TRY(H5Pset_chunk(dcpl, 1, chunk), step);
    H5TRY(H5Pset_shuffle(dcpl), step);
    H5TRY(H5Pset_deflate(dcpl, DEFLATE_LEVEL), step);
    H5TRY(did = H5Dcreate2(fid, t->name, ct, sid, H5P_DEFAULT, dcpl, H5P_DEFAULT), step);
    columns_note(t, note, sizeof note);
    H5TRY(fs_rs_attr_str(did, "columns", note), step);
    /* the H5TB/PyTables table attributes, on the open dataset (not one
     * open by name per attribute, as H5LTset_attribute_string does).  Not
     * the FIELD_i_NAME attributes H5TBmake_table adds, one per column: no
     * reader reads them (H5TBread_table, H5TBget_field_info and PyTables
     * take the names from the compound type, as h5py and pandas do; the
     * "columns" attribute lists them with their units), and at about
     * 30,000 instructions each (an object-header message created, then
     * written) they were a third of a small run's (docs/performance.md,
     * "Start-up, third pass") */
    H5TRY(attr_fixed_str(did, "CLASS", "TABLE"), step);
    H5TRY(attr_fixed_str(did, "VERSION", "3.0"), step);
    H5TRY(attr_fixed_str(did, "TITLE", t->title), step);
out:
    CLOSE(H5Dclose, did);
    CLOSE(H5Pclose, dcpl);
    CLOSE(H5Sclose, sid);
    CLOSE(H5Tclose, ct);
    return rc;
}

/* The memory type of rows of row_size bytes whose columns sit at offs[]:
 * each column the native type of its file column (as H5TB makes it). */
static hid_t table_mem_type(hid_t ftype, const table_spec_t *t, size_t row_size,
                            const size_t *offs)
{
    hid_t mt = H5Tcreate(H5T_COMPOUND, row_size);
    if (mt < 0)
        return mt;
    for (size_t i = 0; i < t->ncols; i++) {
        hid_t fm = H5Tget_member_type(ftype, (unsigned)i);
        hid_t nm = fm < 0 ? H5I_INVALID_HID : H5Tget_native_type(fm, H5T_DIR_DEFAULT);
        herr_t st = nm < 0 ? -1 : H5Tinsert(mt, t->cols[i].name, offs[i], nm);
        if (nm >= 0)
            H5Tclose(nm);
        if (fm >= 0)
            H5Tclose(fm);
        if (st < 0) {
            H5Tclose(mt);
            return H5I_INVALID_HID;
        }
    }
    return mt;
}

/* n memory rows of row_size bytes at src in the file's packed layout at
 * dst (n * lay->fsize bytes): each column's bytes moved as they are, which
 * on a little-endian host is what HDF5's conversion to the file type gives
 * (the same sizes, LE numbers, enums of the same values, strings of the
 * same width), as fs_rs_build_chunk writes them. */
static void pack_rows(const layout_t *lay, const void *src, size_t row_size, size_t n,
                      unsigned char *dst)
{
    const unsigned char *s = src;
    for (size_t i = 0; i < n; i++, s += row_size, dst += lay->fsize)
        for (size_t c = 0; c < lay->ncols; c++)
            memcpy(dst + lay->col[c].fo, s + lay->col[c].mo, lay->col[c].size);
}

/* Appends n memory rows of row_size bytes: one write for the batch.
 * H5TBappend_records did the same with the default transfer list, whose
 * type-conversion buffer is 1 MB, zeroed at every call: 5 such calls were
 * 9 M instructions per results file (a third of a small run's HDF5 time).
 * Here the buffers are sized to the rows written (at most HDF5's 1 MB).
 * On a little-endian host the rows are packed into the file's layout first
 * and written with the file type as the memory type: HDF5 converts
 * nothing, and no memory type is built member by member (for the few rows
 * of the small tables, the type and its conversion path were most of the
 * write: 1.2 M of a small run's 13.6 M fixed instructions). */
int fs_rs_append_rows(hid_t fid, h5call_t *c, const table_spec_t *t, size_t row_size,
                      size_t n, const void *buf, fs_error_t *err)
{
    int rc = 0;
    size_t offs[MAX_COLS];
    char step[128];
    hid_t did = H5I_INVALID_HID, ft = H5I_INVALID_HID, mt = H5I_INVALID_HID;
    hid_t fsp = H5I_INVALID_HID, msp = H5I_INVALID_HID, dxpl = H5I_INVALID_HID;
    unsigned char *packed = NULL;
    if (n == 0)
        return 0;
    for (size_t i = 0; i < t->ncols; i++)
        offs[i] = t->stroff && t->cols[i].kind == K_STR ? t->stroff[i] : t->cols[i].off;
    snprintf(step, sizeof step, "appending %zu rows to /%s", n, t->name);
    H5TRY(did = H5Dopen2(fid, t->name, H5P_DEFAULT), step);
    H5TRY(ft = H5Dget_type(did), step);
    if (fs_rs_host_is_le()) {
        layout_t lay;
        fs_rs_layout_of(t, &lay);
        if (lay.fsize > 0 && lay.fsize == H5Tget_size(ft) && n <= SIZE_MAX / lay.fsize) {
            if (!(packed = fs_malloc(n * lay.fsize))) {
                rc = fs_error_set(err, FS_ENOMEM, "%s: out of memory %s", c->file, step);
                goto out;
            }
            pack_rows(&lay, buf, row_size, n, packed);
        }
    }
    if (!packed)
        H5TRY(mt = table_mem_type(ft, t, row_size, offs), step);
    H5TRY(fsp = H5Dget_space(did), step);
    hsize_t old = 0;
    H5TRY(H5Sget_simple_extent_dims(fsp, &old, NULL), step);
    CLOSE(H5Sclose, fsp);
    hsize_t size[1] = {old + (hsize_t)n}, start[1] = {old}, count[1] = {(hsize_t)n};
    H5TRY(H5Dset_extent(did, size), step);
    H5TRY(fsp = H5Dget_space(did), step);
    H5TRY(H5Sselect_hyperslab(fsp, H5S_SELECT_SET, start, NULL, count, NULL), step);
    H5TRY(msp = H5Screate_simple(1, count, NULL), step);
    if (packed) {
        H5TRY(H5Dwrite(did, ft, msp, fsp, H5P_DEFAULT, packed), step);
    } else {
        size_t fsz = H5Tget_size(ft);
        H5TRY(dxpl = fs_h5_xfer_rows(n, fsz > row_size ? fsz : row_size), step);
        H5TRY(H5Dwrite(did, mt, msp, fsp, dxpl, buf), step);
    }
out:
    fs_free(packed);
    CLOSE(H5Pclose, dxpl);
    CLOSE(H5Sclose, msp);
    CLOSE(H5Sclose, fsp);
    CLOSE(H5Tclose, mt);
    CLOSE(H5Tclose, ft);
    CLOSE(H5Dclose, did);
    return rc;
}
