/*
 * fs_results: the HDF5 results file of one run (see fs_results.h and
 * docs/results.md for the contract): its lifecycle.
 *
 * Owns the temporary file (TARGET.tmp.PID) from open until commit or abort,
 * and a row buffer per streamed table (jobs, timeline samples, ...) of at
 * most FS_RESULTS_BATCH rows, grown geometrically and appended to the file
 * one batch at a time, as whole chunks compressed outside the caller's HDF5
 * lock (fs_results_zip.c), on the caller's thread or on the writer thread
 * (fs_results_thread.c).
 *
 * Tables are H5TB tables (CLASS/VERSION/TITLE attributes; not FIELD_i_NAME)
 * compound datasets with a packed, little-endian file type in the documented
 * column order (fs_results_cols.c); the memory side is the C row struct
 * itself, matched by column name through H5TB.  The datasets are created by
 * fs_results_h5.c rather than by H5TBmake_table because its compress flag
 * is fixed at deflate level 6; ours carry chunk = CHUNK_ROWS rows, shuffle
 * and deflate level 1 (the fastest: results are written once, and level 4
 * cost 15% more time for 3% smaller files on the 1M-job benchmark).
 *
 * HDF5's own error printing is replaced, for the duration of each public
 * call, by a handler that records the first error (fs_results_h5.c);
 * failures become FS_EIO naming the file, the step and HDF5's innermost
 * error description, on one line.  The parts: fs_results_int.h.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "fs_results_int.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../sim/fs_alloc.h"
#include "../sim/fs_io.h"
#include "../sim/fs_out.h"

#ifndef FLEETSIM_VERSION
#define FLEETSIM_VERSION "unknown"
#endif

static void results_free(fs_results_t *r)
{
    if (!r)
        return;
    fs_rs_writer_end(r, 1);
    fs_rs_zctx_release(&r->zx);
    for (size_t k = 0; k < N_OF(r->pend); k++)
        fs_free(r->pend[k].rows);
    fs_free(r->tmp);
    fs_free(r->path);
    fs_out_release(&r->out);
    fs_free(r);
}

/*
 * Closes (if open) and deletes the temporary file, frees r.
 *
 * Known limit: after a write failure that persists (disk still full, file
 * size limit), HDF5 1.10 fails to close the file, keeps a dangling file ID
 * and crashes in its exit handler (HDFFV-11052 / CVE-2020-10812, fixed in
 * 1.14).  The error has been reported by then and the temporary is gone;
 * nothing here can release the ID through the public API.
 */
static void discard(fs_results_t *r)
{
    fs_rs_writer_end(r, 1);   /* before the file goes: the thread may hold chunks of it */
    if (r->fid >= 0) {
        /* The file is thrown away: empty it first, so that the flush H5Fclose
         * does cannot fail for want of space (a full disk), which would leave
         * HDF5 holding the file's objects (~0.4 MB per failed run of a sweep). */
        void *h = NULL;
        if (H5Fget_vfd_handle(r->fid, H5P_DEFAULT, &h) >= 0 && h) {
            if (ftruncate(*(int *)h, 0) != 0) {
                /* nothing more to do: the close below may then fail */
            }
        }
        H5Fclose(r->fid);
        r->fid = H5I_INVALID_HID;
    }
    if (r->tmp)
        unlink(r->tmp);
    results_free(r);
}

static int write_root(fs_results_t *r, h5call_t *c, const fs_results_meta_t *meta,
                      fs_error_t *err)
{
    int rc = 0;
    hid_t f = r->fid;
    H5TRY(fs_rs_attr_i32(f, "format_version", FS_RESULTS_FORMAT_VERSION),
          "writing attribute format_version");
    H5TRY(fs_rs_attr_str(f, "fleetsim_version", FLEETSIM_VERSION), "writing attribute fleetsim_version");
    H5TRY(fs_rs_attr_u64(f, "seed", meta->seed), "writing attribute seed");
    H5TRY(fs_rs_attr_u64(f, "replication", meta->replication), "writing attribute replication");
    H5TRY(fs_rs_attr_str(f, "scenario", meta->scenario), "writing attribute scenario");
    H5TRY(fs_rs_attr_str(f, "scenario_source", meta->scenario_source),
          "writing attribute scenario_source");
    H5TRY(fs_rs_attr_str(f, "scenario_path", meta->scenario_path), "writing attribute scenario_path");
    H5TRY(fs_rs_attr_str(f, "currency", "USD"), "writing attribute currency");
    H5TRY(fs_rs_attr_str(f, "time_unit", "s"), "writing attribute time_unit");
    if (meta->in_sweep) {
        H5TRY(fs_rs_attr_u64(f, "sweep_digest", meta->sweep_digest), "writing attribute sweep_digest");
        H5TRY(fs_rs_attr_u64(f, "sweep_point", meta->sweep_point), "writing attribute sweep_point");
    }
    H5TRY(fs_rs_attr_i32(f, "complete", 0), "writing attribute complete");
out:
    return rc;
}

static int open_file(fs_results_t *r, h5call_t *c, const fs_results_meta_t *meta,
                     fs_error_t *err)
{
    int rc = 0;
    /* Default access properties: a reader in the same process (tests, a
     * progress probe) can H5Fopen the temporary file with H5P_DEFAULT. */
    r->fid = fs_rs_h5_injected(c) ? H5I_INVALID_HID
                            : H5Fcreate(r->tmp, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    if (r->fid < 0) {
        c->file = r->path;
        return fs_rs_h5_fail(c, err, "creating the temporary file");
    }
    if ((rc = write_root(r, c, meta, err)) != 0 || (rc = fs_rs_write_pools(r->fid, c, meta, err)) != 0 ||
        (rc = fs_rs_make_table(r->fid, c, &fs_rs_jobs_spec, err)) != 0 ||
        (rc = fs_rs_make_table(r->fid, c, &fs_rs_timeline_spec, err)) != 0 ||
        (rc = fs_rs_make_table(r->fid, c, &fs_rs_failures_spec, err)) != 0 ||
        (rc = fs_rs_make_table(r->fid, c, &fs_rs_intervals_spec, err)) != 0 ||
        (meta->services && ((rc = fs_rs_make_table(r->fid, c, &fs_rs_services_spec, err)) != 0 ||
                            (rc = fs_rs_make_table(r->fid, c, &fs_rs_buckets_spec, err)) != 0)) ||
        (meta->services && meta->requests &&
         (rc = fs_rs_make_table(r->fid, c, &fs_rs_requests_spec, err)) != 0) ||
        (meta->nodegroups && (rc = fs_rs_make_table(r->fid, c, &fs_rs_nodegroups_spec, err)) != 0) ||
        (meta->mig_layouts && (rc = fs_rs_make_table(r->fid, c, &fs_rs_mig_layouts_spec, err)) != 0))
        goto out;
    /* A reader (or a crash) now finds a valid file that says complete = 0. */
    H5TRY(H5Fflush(r->fid, H5F_SCOPE_GLOBAL), "flushing");
out:
    return rc;
}

int fs_results_open(const char *path, const fs_results_meta_t *meta, fs_results_t **out,
                    fs_error_t *err)
{
    *out = NULL;
    if (!path || !*path || !meta)
        return fs_error_set(err, FS_EINVAL, "results file: no path or metadata given");
    if (meta->n_pools && !meta->pools)
        return fs_error_set(err, FS_EINVAL, "%s: %zu pools but no pool list", path,
                            meta->n_pools);

    /* the compressor first: without it nothing is created or removed */
    int lrc = fs_rs_isal_load(path, err);
    if (lrc)
        return lrc;

    fs_results_t *r = fs_calloc(1, sizeof *r);
    if (!r)
        return fs_error_set(err, FS_ENOMEM, "%s: out of memory", path);
    r->fid = H5I_INVALID_HID;
    /* The target's rules (a regular file or nothing, links followed, mode
     * kept, stale temporaries removed) and the temporary's name: fs_out. */
    int prc = fs_out_prepare(&r->out, path, err);
    if (prc) {
        results_free(r);
        return prc;
    }
    r->path = fs_strdup(path);
    r->tmp = r->path ? fs_strdup(r->out.tmp) : NULL;
    if (!r->tmp) {
        results_free(r);
        return fs_error_set(err, FS_ENOMEM, "%s: out of memory", path);
    }
    r->io_lock = meta->io_lock;
    r->io_lock_ud = meta->io_lock_ud;

    h5call_t c;
    h5lock_t l = lock_of(r);
    h5_enter(l, &c, r->tmp);
    int rc = open_file(r, &c, meta, err);
    if (rc != 0)
        discard(r);
    h5_leave(l, &c);
    if (rc == 0) {
        if (meta->writer_thread && fs_rs_host_is_le())
            fs_rs_writer_start(r);
        *out = r;
    }
    return rc;
}

/* Appends n buffered rows to table t (*written rows so far): compressed
 * outside the lock when the append starts on a chunk boundary, else one
 * fs_rs_append_rows under it.  Takes the lock itself: the caller must not
 * hold it. */
static int flush_table(fs_results_t *r, zctx_t *zx, const table_spec_t *t, size_t row_size,
                       size_t n, const void *buf, hsize_t *written, const zchunk_t *pre,
                       size_t npre, fs_error_t *err)
{
    if (n == 0 && npre == 0)
        return 0;
    zchunk_t *z = NULL;
    size_t nch = 0;
    int rc = 0;
    table_spec_t small;
    if (r->final && *written == 0 && npre == 0 && n < t->chunk) {
        /* A table that never filled a chunk is made again at the commit with
         * chunks of its rows rounded up to SMALL_CHUNK_ROWS: a small run
         * packs and compresses its rows, not a chunk of zero padding. */
        small = *t;
        small.chunk = (n + SMALL_CHUNK_ROWS - 1) / SMALL_CHUNK_ROWS * SMALL_CHUNK_ROWS;
        h5call_t c;
        h5lock_t l = lock_of(r);
        h5_enter(l, &c, r->tmp);
        if (fs_rs_h5_injected(&c) || H5Ldelete(r->fid, t->name, H5P_DEFAULT) < 0)
            rc = fs_rs_h5_fail(&c, err, "re-creating a small table");
        else
            rc = fs_rs_make_table(r->fid, &c, &small, err);
        h5_leave(l, &c);
        if (rc)
            return rc;
        t = &small;
    }
    /* chunks the writer thread compressed (npre whole chunks) come first:
     * they exist only where the direct path applies */
    int direct = npre > 0 || (fs_rs_host_is_le() && *written % t->chunk == 0);
    if (direct) {
        zchunk_t *own = NULL;
        size_t nown = 0;
        if (n > 0 && (rc = fs_rs_build_chunks(zx, t, row_size, n, buf, &own, &nown, r->tmp, err)))
            return rc;
        nch = npre + nown;
        if (npre == 0) {
            z = own;
        } else {
            if (!(z = fs_calloc(nch, sizeof *z))) {
                fs_rs_free_chunks(own, nown);
                return fs_error_set(err, FS_ENOMEM, "%s: out of memory writing /%s", r->tmp,
                                    t->name);
            }
            memcpy(z, pre, npre * sizeof *z);   /* borrowed: the caller frees them */
            memcpy(z + npre, own, nown * sizeof *z);
            fs_free(own);
        }
    }
    size_t rows = npre * (size_t)t->chunk + n;
    h5call_t c;
    h5lock_t l = lock_of(r);
    h5_enter(l, &c, r->tmp);
    rc = direct ? fs_rs_write_chunks(r->fid, &c, t, *written, rows, z, nch, err)
                : fs_rs_append_rows(r->fid, &c, t, row_size, n, buf, err);
    h5_leave(l, &c);
    if (z) {
        for (size_t i = npre; i < nch; i++)
            fs_free(z[i].data);
        fs_free(z);
    }
    if (rc == 0)
        *written += (hsize_t)rows;
    return rc;
}

static int flush_pending(fs_results_t *r, enum streamed_table k, fs_error_t *err)
{
    struct pending *p = &r->pend[k];
    wacc_t *a = r->w ? &r->w->acc[k] : NULL;
    /* the caller's scratch: with a thread, the one it compresses with when it helps */
    int rc = flush_table(r, r->w ? &r->w->zm : &r->zx, fs_rs_streamed[k].spec, fs_rs_streamed[k].row_size,
                         p->n, p->rows, &p->written, a ? a->z : NULL, a ? a->n : 0, err);
    if (rc == 0) {
        p->n = 0;
        if (a) {
            for (size_t i = 0; i < a->n; i++)
                fs_free(a->z[i].data);
            a->n = 0;
        }
    }
    return rc;
}

/* Every streamed table, in order (the commit's final flush); with a writer
 * thread, after it wrote all it was given: its compressed chunks that make
 * no whole batch go first. */
static int flush_all(fs_results_t *r, fs_error_t *err)
{
    int rc = fs_rs_writer_drain(r, err);
    for (int k = 0; k < N_STREAMED && rc == 0; k++)
        rc = flush_pending(r, (enum streamed_table)k, err);
    return rc;
}

static int add_pending(fs_results_t *r, enum streamed_table k, const void *row, fs_error_t *err)
{
    struct pending *p = &r->pend[k];
    size_t sz = fs_rs_streamed[k].row_size;
    if (r->w && p->n == CHUNK_ROWS) {
        int rc = fs_rs_writer_submit(r, k, err);
        if (rc != 0)
            return rc;
    } else if (!r->w && p->n == FS_RESULTS_BATCH) {
        int rc = flush_pending(r, k, err);
        if (rc != 0)
            return rc;
    }
    if (p->n == p->cap && fs_grow(&p->rows, &p->cap, p->n + 1, sz) != 0)   /* a call only to grow */
        return fs_error_set(err, FS_ENOMEM, "%s: out of memory buffering /%s", r->path,
                            fs_rs_streamed[k].spec->name);
    memcpy((char *)p->rows + p->n++ * sz, row, sz);
    return 0;
}

int fs_results_add_interval(fs_results_t *r, const fs_interval_row_t *row, fs_error_t *err)
{
    return add_pending(r, T_INTERVALS, row, err);
}

int fs_results_add_service(fs_results_t *r, const fs_service_row_t *row, fs_error_t *err)
{
    return add_pending(r, T_SERVICES, row, err);
}

int fs_results_add_svc_bucket(fs_results_t *r, const fs_svc_bucket_row_t *row, fs_error_t *err)
{
    return add_pending(r, T_BUCKETS, row, err);
}

int fs_results_add_request(fs_results_t *r, const fs_request_row_t *row, fs_error_t *err)
{
    return add_pending(r, T_REQUESTS, row, err);
}

int fs_results_add_nodegroup(fs_results_t *r, const fs_nodegroup_row_t *row, fs_error_t *err)
{
    return add_pending(r, T_NODEGROUPS, row, err);
}

int fs_results_add_mig_layout(fs_results_t *r, const fs_mig_layout_row_t *row, fs_error_t *err)
{
    return add_pending(r, T_MIG_LAYOUTS, row, err);
}

int fs_results_add_failure(fs_results_t *r, const fs_failure_row_t *row, fs_error_t *err)
{
    return add_pending(r, T_FAILURES, row, err);
}

int fs_results_add_job(fs_results_t *r, const fs_job_row_t *row, fs_error_t *err)
{
    if (row->state < 0 || (size_t)row->state >= N_STATES)
        return fs_error_set(err, FS_EINVAL, "%s: job %llu: state %d is not a job_state", r->path,
                            (unsigned long long)row->id, (int)row->state);
    return add_pending(r, T_JOBS, row, err);
}

int fs_results_add_sample(fs_results_t *r, const fs_sample_row_t *row, fs_error_t *err)
{
    return add_pending(r, T_TIMELINE, row, err);
}

static int commit_file(fs_results_t *r, h5call_t *c, const fs_summary_t *sum,
                       const fs_tenant_row_t *tenants, size_t n_tenant_rows,
                       const char *const *tenant_names, size_t n_tenants, fs_error_t *err)
{
    int rc = 0;
    hid_t aid = H5I_INVALID_HID;
    int32_t one = 1;

    if ((rc = fs_rs_make_table(r->fid, c, &fs_rs_summary_spec, err)) != 0 ||
        (rc = fs_rs_append_rows(r->fid, c, &fs_rs_summary_spec, sizeof *sum, 1, sum, err)) != 0 ||
        (rc = fs_rs_write_tenants(r->fid, c, tenants, n_tenant_rows, tenant_names, n_tenants, err)) !=
            0)
        goto out;
    H5TRY(aid = H5Aopen(r->fid, "complete", H5P_DEFAULT), "setting complete = 1");
    H5TRY(H5Awrite(aid, H5T_NATIVE_INT32, &one), "setting complete = 1");
    CLOSE(H5Aclose, aid);
    H5TRY(H5Fflush(r->fid, H5F_SCOPE_GLOBAL), "flushing");
    /* Everything is on disk: a failure to close now cannot lose data, and
     * the ID is gone either way. */
    herr_t st = H5Fclose(r->fid);
    r->fid = H5I_INVALID_HID;
    H5TRY(st, "closing");
    rc = fs_out_commit(&r->out, fs_io_rename, err);
out:
    CLOSE(H5Aclose, aid);
    return rc;
}

int fs_results_commit(fs_results_t *r, const fs_summary_t *sum, const fs_tenant_row_t *tenants,
                      size_t n_tenant_rows, const char *const *tenant_names, size_t n_tenants,
                      fs_error_t *err)
{
    if (!r)
        return fs_error_set(err, FS_EINVAL, "results file: commit without an open file");
    int rc;
    if (!sum || (n_tenant_rows && !tenants))
        rc = fs_error_set(err, FS_EINVAL, "%s: commit without a summary or tenant rows", r->path);
    else {
        r->final = 1;
        rc = flush_all(r, err);
    }
    h5call_t c;
    h5lock_t l = lock_of(r);
    h5_enter(l, &c, r->tmp);
    if (rc == 0)
        rc = commit_file(r, &c, sum, tenants, n_tenant_rows, tenant_names, n_tenants, err);
    if (rc != 0)
        discard(r);
    else
        results_free(r);
    h5_leave(l, &c);
    return rc;
}

/* The rows so far, the reason and the simulated time, complete left at 0;
 * then the same close and rename as a commit. */
static int commit_partial_file(fs_results_t *r, h5call_t *c, const char *reason,
                               double stopped_at_s, int64_t unfinished, fs_error_t *err)
{
    int rc = 0;
    H5TRY(fs_rs_attr_str(r->fid, "incomplete_reason", reason), "writing attribute incomplete_reason");
    H5TRY(fs_rs_attr_f64(r->fid, "stopped_at", stopped_at_s), "writing attribute stopped_at");
    if (unfinished >= 0)
        H5TRY(fs_rs_attr_u64(r->fid, "unfinished_jobs", (uint64_t)unfinished),
              "writing attribute unfinished_jobs");
    H5TRY(H5Fflush(r->fid, H5F_SCOPE_GLOBAL), "flushing");
    herr_t st = H5Fclose(r->fid);
    r->fid = H5I_INVALID_HID;
    H5TRY(st, "closing");
    rc = fs_out_commit(&r->out, fs_io_rename, err);
out:
    return rc;
}

int fs_results_commit_partial(fs_results_t *r, const char *reason, double stopped_at_s,
                              int64_t unfinished, fs_error_t *err)
{
    if (!r)
        return fs_error_set(err, FS_EINVAL, "results file: commit without an open file");
    int rc;
    if (!reason || !*reason)
        rc = fs_error_set(err, FS_EINVAL, "%s: a partial commit needs a reason", r->path);
    else {
        r->final = 1;
        rc = flush_all(r, err);
    }
    h5call_t c;
    h5lock_t l = lock_of(r);
    h5_enter(l, &c, r->tmp);
    if (rc == 0)
        rc = commit_partial_file(r, &c, reason, stopped_at_s, unfinished, err);
    if (rc != 0)
        discard(r);
    else
        results_free(r);
    h5_leave(l, &c);
    return rc;
}

void fs_results_abort(fs_results_t *r)
{
    if (!r)
        return;
    fs_rs_writer_end(r, 1);   /* without the lock: the thread may be waiting for it */
    h5call_t c;
    h5lock_t l = lock_of(r);
    h5_enter(l, &c, r->tmp);
    discard(r);
    h5_leave(l, &c);
}

