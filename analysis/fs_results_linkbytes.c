/*
 * fs_results_linkbytes: /link_bytes, (time, link, bytes) rows, bytes
 * carried from time 0, appended in the batches the fabric hands over
 * during the run and at its end (beside /links, fs_results_links.c) when
 * the fabric is on and /timeline is sampled.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "fs_results_linkbytes.h"
#include "fs_results_int.h"

#define LB(name, kind, unit) {#name, kind, offsetof(fs_link_bytes_row_t, name), unit}
static const col_t lb_cols[] = {
    LB(time, K_F64, "s"), LB(link, K_U32, "-"), LB(bytes, K_F64, "B"),
};
#undef LB

int fs_results_add_link_bytes(fs_results_t *r, const fs_link_bytes_row_t *rows, size_t n,
                              fs_error_t *err)
{
    if (!r)
        return fs_error_set(err, FS_EINVAL, "results file: /link_bytes without an open file");
    int rc = fs_rs_writer_drain(r, err);
    if (rc)
        return rc;
    hsize_t chunk = n >= CHUNK_ROWS ? CHUNK_ROWS
                    : n ? (hsize_t)((n + SMALL_CHUNK_ROWS - 1) / SMALL_CHUNK_ROWS * SMALL_CHUNK_ROWS)
                        : SMALL_CHUNK_ROWS;
    table_spec_t t = {"link_bytes", "fleetsim fabric links' bytes from time 0", lb_cols,
                      N_OF(lb_cols), NULL, NULL, chunk};
    h5call_t c;
    h5lock_t l = lock_of(r);
    h5_enter(l, &c, r->tmp);
    htri_t made = H5Lexists(r->fid, t.name, H5P_DEFAULT);
    if (made < 0)
        rc = fs_error_set(err, FS_EIO, "%s: HDF5 error looking for /link_bytes", c.file);
    else if (!made)
        rc = fs_rs_make_table(r->fid, &c, &t, err);
    if (!rc && n)
        rc = fs_rs_append_rows(r->fid, &c, &t, sizeof *rows, n, rows, err);
    h5_leave(l, &c);
    return rc;
}
