/*
 * fs_results: the HDF5 results file of one run (see fs_results.h and
 * docs/results.md for the contract).
 *
 * Owns the temporary file (TARGET.tmp.PID) from open until commit or abort,
 * and two row buffers (jobs, timeline samples) of at most FS_RESULTS_BATCH
 * rows each, grown geometrically and appended to the file one batch at a
 * time, as whole chunks compressed outside the caller's HDF5 lock (see
 * "whole chunks" below).
 *
 * Tables are H5TB-conforming (CLASS/VERSION/TITLE/FIELD_i_NAME attributes)
 * compound datasets with a packed, little-endian file type in the documented
 * column order; the memory side is the C row struct itself, matched by
 * column name through H5TB.  The datasets are created here rather than by
 * H5TBmake_table because its compress flag is fixed at deflate level 6;
 * ours carry chunk = CHUNK_ROWS rows, shuffle and deflate level 1 (the
 * fastest: results are written once, and level 4 cost 15% more time for 3%
 * smaller files on the 1M-job benchmark).
 *
 * HDF5's own error printing is replaced, for the duration of each public
 * call, by a handler that records the first error (the caller's handler is
 * restored after); failures become FS_EIO naming the file, the step and
 * HDF5's innermost error description, on one line.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "fs_results.h"

#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <hdf5.h>
#include <hdf5_hl.h>
#include <isa-l/igzip_lib.h>

#include "../sim/fs_alloc.h"
#include "../sim/fs_io.h"
#include "../sim/fs_out.h"

#ifndef FLEETSIM_VERSION
#define FLEETSIM_VERSION "unknown"
#endif

#define CHUNK_ROWS 16384     /* rows per chunk of /jobs and /timeline */
#define SMALL_CHUNK_ROWS 64  /* rows per chunk of the small tables */
#define DEFLATE_LEVEL 1
#define MAX_COLS 96

/* What compressing chunks needs, kept from chunk to chunk: the compressor
 * and two buffers of one chunk each (the packed and shuffled bytes, the
 * compressed stream).  Why kept: a 16,384-row chunk of /jobs is 2.4 MB,
 * which malloc takes from mmap; allocated per chunk, every page of them
 * faulted in again (a tenth of a 1 M-job run's CPU in the kernel). */
typedef struct zctx {
    struct isal_zstream *zs;    /* ISA-L's stream state (80 KB) */
    unsigned char *lvbuf;       /* its level-1 buffer (ISAL_DEF_LVL1_DEFAULT) */
    unsigned char *shuf, *out;
    size_t nbytes, bound;       /* capacity of shuf, of out */
} zctx_t;

struct fs_results {
    char *path;                 /* target name */
    char *tmp;                  /* TARGET.tmp.PID, written until commit */
    hid_t fid;                  /* open file, or H5I_INVALID_HID */
    struct pending {            /* a streamed table (enum streamed_table): rows buffered */
        void *rows;
        size_t n, cap;
        hsize_t written;        /* rows in the file */
    } pend[9];
    int final;                  /* the commit's flushes: a table never flushed gets small chunks */
    zctx_t zx;                  /* compressing on the caller's thread */
    struct writer *w;           /* the writer thread (fs_results_meta_t.writer_thread), or NULL */
    fs_out_t out;               /* the target (links followed) and its temporary */
    void (*io_lock)(void *ud, int lock);   /* fs_results_meta_t.io_lock */
    void *io_lock_ud;
};

/* ---- column descriptions -------------------------------------------- */

enum col_kind { K_U64, K_I32, K_U32, K_F64, K_STATE, K_STR, K_COMPONENT, K_REPAIR };

typedef struct col {
    const char *name;
    enum col_kind kind;
    size_t off;          /* offset in the memory row */
    const char *unit;    /* for the "columns" attribute */
} col_t;

#define N_STATES ((size_t)FS_STATE_REJECTED + 1)

#define JOB_COL(name, kind, unit) {#name, kind, offsetof(fs_job_row_t, name), unit}
static const col_t job_cols[] = {
    JOB_COL(id, K_U64, "-"),
    JOB_COL(tenant, K_I32, "-"),
    JOB_COL(pool, K_I32, "-"),
    JOB_COL(gpus, K_U32, "GPU"),
    JOB_COL(gpu_milli, K_U32, "milliGPU"),
    JOB_COL(nodes, K_U32, "node"),
    JOB_COL(restarts, K_U32, "count"),
    JOB_COL(submit, K_F64, "s"),
    JOB_COL(start, K_F64, "s"),
    JOB_COL(end, K_F64, "s"),
    JOB_COL(wait, K_F64, "s"),
    JOB_COL(run, K_F64, "s"),
    JOB_COL(lost_gpu_s, K_F64, "GPU-s"),
    JOB_COL(state, K_STATE, "job_state"),
    JOB_COL(ckpt_s, K_F64, "s"),
    JOB_COL(recovery_s, K_F64, "s"),
    JOB_COL(ettr, K_F64, "fraction"),
    JOB_COL(goodput, K_F64, "fraction"),
    JOB_COL(queued_s, K_F64, "s"),
    JOB_COL(preemptions, K_U32, "count"),
    JOB_COL(preempt_lost_gpu_s, K_F64, "GPU-s"),
    JOB_COL(startup_s, K_F64, "s"),
    JOB_COL(sched_goodput, K_F64, "fraction"),
    JOB_COL(program_goodput, K_F64, "fraction"),
};

#define SAMPLE_COL(name, kind, unit) {#name, kind, offsetof(fs_sample_row_t, name), unit}
static const col_t sample_cols[] = {
    SAMPLE_COL(time, K_F64, "s"),
    SAMPLE_COL(gpus_total, K_U32, "GPU"),
    SAMPLE_COL(gpus_up, K_U32, "GPU"),
    SAMPLE_COL(gpus_busy, K_U32, "GPU"),
    SAMPLE_COL(jobs_running, K_U32, "job"),
    SAMPLE_COL(jobs_queued, K_U32, "job"),
    SAMPLE_COL(gpus_queued, K_U64, "GPU"),
    SAMPLE_COL(nodes_down, K_U32, "node"),
    SAMPLE_COL(repair_queue, K_U32, "count"),
    SAMPLE_COL(nodes_provisioning, K_U32, "node"),
    SAMPLE_COL(nodes_autoscaled, K_U32, "node"),
    SAMPLE_COL(gpus_serving, K_U32, "GPU"),
    SAMPLE_COL(replicas, K_U32, "replica"),
    SAMPLE_COL(mig_instances, K_U32, "instance"),
    SAMPLE_COL(mig_busy, K_U32, "instance"),
    SAMPLE_COL(mig_serving, K_U32, "instance"),
    SAMPLE_COL(gpu_s_busy, K_F64, "GPU-s"),
    SAMPLE_COL(gpu_s_down, K_F64, "GPU-s"),
    SAMPLE_COL(gpu_s_waiting, K_F64, "GPU-s"),
    SAMPLE_COL(gpu_s_idle, K_F64, "GPU-s"),
    SAMPLE_COL(gpu_s_allocated, K_F64, "GPU-s"),
    SAMPLE_COL(gpu_s_share_idle, K_F64, "GPU-s"),
    SAMPLE_COL(gpu_s_held, K_F64, "GPU-s"),
    SAMPLE_COL(gpu_s_computing, K_F64, "GPU-s"),
    SAMPLE_COL(gpu_s_ckpt, K_F64, "GPU-s"),
    SAMPLE_COL(gpu_s_startup, K_F64, "GPU-s"),
    SAMPLE_COL(gpu_s_recovering, K_F64, "GPU-s"),
    SAMPLE_COL(gpu_s_serving, K_F64, "GPU-s"),
    SAMPLE_COL(gpu_s_frag, K_F64, "GPU-s"),
    SAMPLE_COL(gpu_s_quota, K_F64, "GPU-s"),
    SAMPLE_COL(gpu_s_reserved, K_F64, "GPU-s"),
    SAMPLE_COL(gpu_s_blocked, K_F64, "GPU-s"),
};

#define FAIL_COL(name, kind, unit) {#name, kind, offsetof(fs_failure_row_t, name), unit}
static const col_t failure_cols[] = {
    FAIL_COL(time, K_F64, "s"),
    FAIL_COL(component, K_COMPONENT, "component"),
    FAIL_COL(unit, K_U32, "-"),
    FAIL_COL(nodes, K_U32, "node"),
    FAIL_COL(cause, K_STR, "-"),
    FAIL_COL(repair, K_REPAIR, "repair"),
    FAIL_COL(repair_time, K_F64, "s"),
    FAIL_COL(jobs_hit, K_U32, "job"),
    FAIL_COL(xid, K_U32, "-"),
};

#define IVAL_COL(name, kind, unit) {#name, kind, offsetof(fs_interval_row_t, name), unit}
static const col_t interval_cols[] = {
    IVAL_COL(job, K_U64, "-"),         IVAL_COL(tenant, K_I32, "-"),
    IVAL_COL(job_class, K_U32, "-"),   IVAL_COL(node, K_U32, "-"),
    IVAL_COL(gpus, K_U32, "GPU"),      IVAL_COL(gpu_milli, K_U32, "milliGPU"),
    IVAL_COL(gpu, K_U32, "-"),         IVAL_COL(start, K_F64, "s"),
    IVAL_COL(ready, K_F64, "s"),       IVAL_COL(end, K_F64, "s"),
    IVAL_COL(duty, K_F64, "fraction"), IVAL_COL(sm, K_F64, "fraction"),
    IVAL_COL(tensor, K_F64, "fraction"), IVAL_COL(dram, K_F64, "fraction"),
    IVAL_COL(fb, K_F64, "fraction"),   IVAL_COL(gpu_instance, K_I32, "-"),
};

#define NG_COL(name, kind, unit) {#name, kind, offsetof(fs_nodegroup_row_t, name), unit}
static const col_t nodegroup_cols[] = {
    NG_COL(time, K_F64, "s"),                 NG_COL(group, K_U32, "-"),
    NG_COL(pool, K_U32, "-"),                 NG_COL(nodes_provisioning, K_U32, "node"),
    NG_COL(nodes_ready, K_U32, "node"),       NG_COL(nodes_added, K_U64, "node"),
    NG_COL(nodes_removed, K_U64, "node"),     NG_COL(node_s_provisioning, K_F64, "node-s"),
    NG_COL(node_s_ready, K_F64, "node-s"),
};

#define ML_COL(name, kind, unit) {#name, kind, offsetof(fs_mig_layout_row_t, name), unit}
static const col_t mig_layout_cols[] = {
    ML_COL(time, K_F64, "s"),   ML_COL(ready, K_F64, "s"), ML_COL(pool, K_U32, "-"),
    ML_COL(node, K_U32, "-"),   ML_COL(gpu, K_U32, "-"),   ML_COL(layout, K_STR, "-"),
    ML_COL(cordoned, K_F64, "s"),
};

#define SVC_COL(name, kind, unit) {#name, kind, offsetof(fs_service_row_t, name), unit}
static const col_t service_cols[] = {
    SVC_COL(name, K_STR, "-"),          SVC_COL(mode, K_U32, "-"),
    SVC_COL(requests, K_U64, "count"),  SVC_COL(completed, K_U64, "count"),
    SVC_COL(retried, K_U64, "count"),   SVC_COL(ttft_p50, K_F64, "s"),
    SVC_COL(ttft_p95, K_F64, "s"),      SVC_COL(ttft_p99, K_F64, "s"),
    SVC_COL(ttft_mean, K_F64, "s"),     SVC_COL(tpot_p50, K_F64, "s"),
    SVC_COL(tpot_p95, K_F64, "s"),      SVC_COL(tpot_p99, K_F64, "s"),
    SVC_COL(slo_attainment, K_F64, "fraction"), SVC_COL(buckets_met, K_F64, "fraction"),
    SVC_COL(replica_hours, K_F64, "replica-h"), SVC_COL(ready_hours, K_F64, "replica-h"),
    SVC_COL(gpu_hours, K_F64, "GPU-h"), SVC_COL(cold_starts, K_U64, "count"),
    SVC_COL(startup_gpu_hours, K_F64, "GPU-h"), SVC_COL(tokens_out, K_F64, "tokens"),
    SVC_COL(tokens_per_gpu_s, K_F64, "tokens/GPU-s"), SVC_COL(cost_per_mtok, K_F64, "USD/Mtoken"),
};

#define BKT_COL(name, kind, unit) {#name, kind, offsetof(fs_svc_bucket_row_t, name), unit}
static const col_t bucket_cols[] = {
    BKT_COL(service, K_U32, "-"),       BKT_COL(start, K_F64, "s"),
    BKT_COL(end, K_F64, "s"),           BKT_COL(requests, K_U64, "count"),
    BKT_COL(completed, K_U64, "count"), BKT_COL(ttft_p50, K_F64, "s"),
    BKT_COL(ttft_p95, K_F64, "s"),      BKT_COL(ttft_p99, K_F64, "s"),
    BKT_COL(tpot_p50, K_F64, "s"),      BKT_COL(tpot_p95, K_F64, "s"),
    BKT_COL(tpot_p99, K_F64, "s"),      BKT_COL(slo_attainment, K_F64, "fraction"),
    BKT_COL(replicas, K_F64, "replica"), BKT_COL(ready, K_F64, "replica"),
    BKT_COL(gpus, K_F64, "GPU"),        BKT_COL(cold_starts, K_U32, "count"),
    BKT_COL(tokens_per_s, K_F64, "tokens/s"), BKT_COL(waiting, K_F64, "request"),
};

#define REQ_COL(name, kind, unit) {#name, kind, offsetof(fs_request_row_t, name), unit}
static const col_t request_cols[] = {
    REQ_COL(service, K_U32, "-"),   REQ_COL(input, K_U32, "tokens"),
    REQ_COL(output, K_U32, "tokens"), REQ_COL(retries, K_U32, "count"),
    REQ_COL(arrival, K_F64, "s"),   REQ_COL(ttft, K_F64, "s"),
    REQ_COL(tpot, K_F64, "s"),      REQ_COL(end, K_F64, "s"),
};

/* Every field of fs_summary_t, in declaration order: one per row of
 * fs_summary.def (u64 columns for uint64_t, f64 for double). */
#define SUMMARY_KIND_uint64_t K_U64
#define SUMMARY_KIND_double K_F64
#define FS_SUMMARY(name, ctype, unit, from, probe, desc)                                    \
    {#name, SUMMARY_KIND_##ctype, offsetof(fs_summary_t, name), unit},
static const col_t summary_cols[] = {
#include "fs_summary.def"
};
#undef FS_SUMMARY
_Static_assert(sizeof summary_cols / sizeof summary_cols[0] <= MAX_COLS, "MAX_COLS too small");
_Static_assert(sizeof summary_cols / sizeof summary_cols[0] * 8 == sizeof(fs_summary_t),
               "every fs_summary_t field (all 8 bytes wide) has a /summary column");

/* /tenants memory row: this struct, then the name (fixed length). */
typedef struct tenant_mem {
    int32_t tenant;
    uint64_t jobs;
    uint64_t jobs_completed;
    double gpu_hours;
    double wait_mean;
    double wait_p50, wait_p95, wait_p99;
    double jct_mean, jct_p95;
    double queued_mean;
    uint64_t preemptions;
    double preempt_lost_gpu_hours;
    double borrowed_gpu_hours, lent_gpu_hours;
    double held_gpu_hours, computing_gpu_hours, redo_gpu_hours, ckpt_gpu_hours,
        startup_gpu_hours, recovering_gpu_hours;
} tenant_mem_t;

#define TENANT_NAME_OFF sizeof(tenant_mem_t)
static const col_t tenant_cols[] = {
    {"tenant", K_I32, offsetof(tenant_mem_t, tenant), "-"},
    {"name", K_STR, TENANT_NAME_OFF, "-"},
    {"jobs", K_U64, offsetof(tenant_mem_t, jobs), "count"},
    {"jobs_completed", K_U64, offsetof(tenant_mem_t, jobs_completed), "count"},
    {"gpu_hours", K_F64, offsetof(tenant_mem_t, gpu_hours), "GPU-h"},
    {"wait_mean", K_F64, offsetof(tenant_mem_t, wait_mean), "s"},
    {"wait_p50", K_F64, offsetof(tenant_mem_t, wait_p50), "s"},
    {"wait_p95", K_F64, offsetof(tenant_mem_t, wait_p95), "s"},
    {"wait_p99", K_F64, offsetof(tenant_mem_t, wait_p99), "s"},
    {"jct_mean", K_F64, offsetof(tenant_mem_t, jct_mean), "s"},
    {"jct_p95", K_F64, offsetof(tenant_mem_t, jct_p95), "s"},
    {"queued_mean", K_F64, offsetof(tenant_mem_t, queued_mean), "s"},
    {"preemptions", K_U64, offsetof(tenant_mem_t, preemptions), "count"},
    {"preempt_lost_gpu_hours", K_F64, offsetof(tenant_mem_t, preempt_lost_gpu_hours), "GPU-h"},
    {"borrowed_gpu_hours", K_F64, offsetof(tenant_mem_t, borrowed_gpu_hours), "GPU-h"},
    {"lent_gpu_hours", K_F64, offsetof(tenant_mem_t, lent_gpu_hours), "GPU-h"},
    {"held_gpu_hours", K_F64, offsetof(tenant_mem_t, held_gpu_hours), "GPU-h"},
    {"computing_gpu_hours", K_F64, offsetof(tenant_mem_t, computing_gpu_hours), "GPU-h"},
    {"redo_gpu_hours", K_F64, offsetof(tenant_mem_t, redo_gpu_hours), "GPU-h"},
    {"ckpt_gpu_hours", K_F64, offsetof(tenant_mem_t, ckpt_gpu_hours), "GPU-h"},
    {"startup_gpu_hours", K_F64, offsetof(tenant_mem_t, startup_gpu_hours), "GPU-h"},
    {"recovering_gpu_hours", K_F64, offsetof(tenant_mem_t, recovering_gpu_hours), "GPU-h"},
};

/* /pools memory row: this struct, then name and gpu (fixed lengths); the
 * string offsets depend on the lengths and are set at write time. */
typedef struct pool_mem {
    uint32_t index;
    uint32_t nodes;
    uint32_t gpus_per_node;
    double power_cap_w;
    uint32_t time_slicing;
    uint32_t mps;
    double ambient_c;
    double throttle_w;
} pool_mem_t;

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

/* ---- HDF5 error plumbing --------------------------------------------- */

/* One public call's dealings with HDF5: the file named in messages, the
 * caller's automatic error handler (restored at the end) and the first
 * error HDF5 reported since the last failure was turned into a message.
 * Recording through the handler matters: the H5TB and H5LT helpers make
 * more API calls while cleaning up after a failure, which clear the error
 * stack before control returns here. */
typedef struct h5call {
    const char *file;
    H5E_auto2_t old_func;
    void *old_data;
    char detail[512];
} h5call_t;

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

static void call_begin(h5call_t *c, const char *file)
{
    c->file = file;
    c->detail[0] = '\0';
    if (H5Eget_auto2(H5E_DEFAULT, &c->old_func, &c->old_data) < 0) {
        c->old_func = NULL;
        c->old_data = NULL;
    }
    H5Eset_auto2(H5E_DEFAULT, record_error, c);
}

static void call_end(const h5call_t *c)
{
    H5Eset_auto2(H5E_DEFAULT, c->old_func, c->old_data);
}

/* Call right after the failing HDF5 call: FS_EIO naming the file, the step
 * and HDF5's innermost error description. */
static int h5_fail(h5call_t *c, fs_error_t *err, const char *step)
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
static int h5_injected(h5call_t *c)
{
    if (!fs_io_fault())
        return 0;
    snprintf(c->detail, sizeof c->detail, "injected I/O failure: %s", strerror(EIO));
    return 1;
}

#define H5TRY(expr, step)                              \
    do {                                               \
        if (h5_injected(c) || (expr) < 0) {            \
            rc = h5_fail(c, err, step);                \
            goto out;                                  \
        }                                              \
    } while (0)

#define CLOSE(fn, id)             \
    do {                          \
        if ((id) >= 0)            \
            fn(id);               \
        (id) = H5I_INVALID_HID;   \
    } while (0)

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
static herr_t attr_str(hid_t loc, const char *name, const char *value)
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

static herr_t attr_i32(hid_t loc, const char *name, int32_t v)
{
    return attr_write(loc, name, H5T_STD_I32LE, H5T_NATIVE_INT32, &v);
}

static herr_t attr_u64(hid_t loc, const char *name, uint64_t v)
{
    return attr_write(loc, name, H5T_STD_U64LE, H5T_NATIVE_UINT64, &v);
}

static herr_t attr_f64(hid_t loc, const char *name, double v)
{
    return attr_write(loc, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &v);
}

/* ---- tables ------------------------------------------------------------ */

/* The file type of one column (a fresh id the caller closes). */
static hid_t kind_file_type(enum col_kind k, size_t strsz)
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

static size_t kind_mem_size(enum col_kind k, size_t strsz)
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

/* A table: its dataset name, title, columns and, for string columns, the
 * fixed sizes (strsz[i], used only where cols[i].kind == K_STR) and memory
 * offsets overriding cols[i].off (stroff[i], when stroff is non-NULL). */
typedef struct table_spec {
    const char *name;
    const char *title;
    const col_t *cols;
    size_t ncols;
    const size_t *strsz;
    const size_t *stroff;
    hsize_t chunk;
} table_spec_t;

static size_t col_strsz(const table_spec_t *t, size_t i)
{
    return t->strsz ? t->strsz[i] : 0;
}

/* The packed compound file type of a table. */
static hid_t table_file_type(const table_spec_t *t)
{
    size_t total = 0;
    for (size_t i = 0; i < t->ncols; i++)
        total += kind_mem_size(t->cols[i].kind, col_strsz(t, i));
    hid_t ct = H5Tcreate(H5T_COMPOUND, total);
    if (ct < 0)
        return ct;
    size_t off = 0;
    for (size_t i = 0; i < t->ncols; i++) {
        hid_t ft = kind_file_type(t->cols[i].kind, col_strsz(t, i));
        herr_t st = ft < 0 ? -1 : H5Tinsert(ct, t->cols[i].name, off, ft);
        if (ft >= 0)
            H5Tclose(ft);
        if (st < 0) {
            H5Tclose(ct);
            return H5I_INVALID_HID;
        }
        off += kind_mem_size(t->cols[i].kind, col_strsz(t, i));
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
static int make_table(hid_t fid, h5call_t *c, const table_spec_t *t, fs_error_t *err)
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
    H5TRY(attr_str(did, "columns", note), step);
    /* the H5TB/PyTables table attributes, on the open dataset (not one
     * open by name per attribute, as H5LTset_attribute_string does) */
    H5TRY(attr_fixed_str(did, "CLASS", "TABLE"), step);
    H5TRY(attr_fixed_str(did, "VERSION", "3.0"), step);
    H5TRY(attr_fixed_str(did, "TITLE", t->title), step);
    for (size_t i = 0; i < t->ncols; i++) {
        char an[32];
        snprintf(an, sizeof an, "FIELD_%zu_NAME", i);
        H5TRY(attr_fixed_str(did, an, t->cols[i].name), step);
    }
out:
    CLOSE(H5Dclose, did);
    CLOSE(H5Pclose, dcpl);
    CLOSE(H5Sclose, sid);
    CLOSE(H5Tclose, ct);
    return rc;
}

/* Appends n memory rows of row_size bytes: one HDF5 call for the batch. */
static int append_rows(hid_t fid, h5call_t *c, const table_spec_t *t, size_t row_size,
                       size_t n, const void *buf, fs_error_t *err)
{
    int rc = 0;
    size_t offs[MAX_COLS], sizes[MAX_COLS];
    char step[128];
    if (n == 0)
        return 0;
    for (size_t i = 0; i < t->ncols; i++) {
        offs[i] = t->stroff && t->cols[i].kind == K_STR ? t->stroff[i] : t->cols[i].off;
        sizes[i] = kind_mem_size(t->cols[i].kind, col_strsz(t, i));
    }
    snprintf(step, sizeof step, "appending %zu rows to /%s", n, t->name);
    H5TRY(H5TBappend_records(fid, t->name, (hsize_t)n, row_size, offs, sizes, buf), step);
out:
    return rc;
}

/* ---- whole chunks, compressed outside the HDF5 lock -------------------- */

/*
 * Why: a sweep's worker threads share one HDF5 lock, and deflate inside
 * H5TBappend_records held it for most of a flush (1.81x on 2 threads with a
 * 5-minute /timeline).  Instead a flush that starts on a chunk boundary
 * (every flush but a commit's last one does: FS_RESULTS_BATCH is a multiple
 * of CHUNK_ROWS) packs its rows into the file's compound layout, applies
 * the dataset's own filters by hand (shuffle by the row size, then a zlib
 * stream, as HDF5's deflate filter writes it, made by ISA-L's igzip at its
 * level 1: the same format, so any HDF5 reader inflates it with no plugin,
 * 7x faster than libdeflate's level 1 on these chunks and 4% larger) and
 * only the
 * H5Dset_extent and H5Dwrite_chunk calls run under the lock.  The last
 * chunk is padded with zeros (the fill value), as HDF5 stores an edge
 * chunk.  The dataset, its chunk size and its filter pipeline are the ones
 * make_table created, so H5TB, h5py and h5dump read the table as before.
 * The packing assumes a little-endian host (the file types are LE); other
 * hosts, and flushes that start inside a chunk, take H5TBappend_records.
 */
typedef struct zchunk {
    unsigned char *data;
    size_t size;
} zchunk_t;

static int host_is_le(void)
{
    const uint16_t one = 1;
    unsigned char b;
    memcpy(&b, &one, 1);
    return b == 1;
}

static void free_chunks(zchunk_t *z, size_t n)
{
    for (size_t i = 0; z && i < n; i++)
        fs_free(z[i].data);
    fs_free(z);
}

/* The file's packed row: its columns, each a run of bytes (first file
 * byte, first memory byte, size). */
#define MAX_ROW_BYTES 1024
typedef struct layout {
    size_t fsize;                /* the packed row's size */
    struct lcol {
        uint16_t fo, mo, size;   /* size 4 and 8: numbers, moved 8 rows at a time */
    } col[MAX_COLS];
    size_t ncols;
} layout_t;

static void layout_of(const table_spec_t *t, layout_t *lay)
{
    lay->fsize = 0;
    lay->ncols = 0;
    for (size_t i = 0; i < t->ncols; i++) {
        size_t moff = t->stroff && t->cols[i].kind == K_STR ? t->stroff[i] : t->cols[i].off;
        size_t sz = kind_mem_size(t->cols[i].kind, col_strsz(t, i));
        if (lay->fsize + sz > MAX_ROW_BYTES || moff + sz > UINT16_MAX || i >= MAX_COLS) {
            lay->fsize = 0;   /* no table is: build_chunk refuses it */
            return;
        }
        lay->col[lay->ncols++] = (struct lcol){(uint16_t)lay->fsize, (uint16_t)moff, (uint16_t)sz};
        lay->fsize += sz;
    }
}
_Static_assert(MAX_ROW_BYTES <= UINT16_MAX, "file offsets fit struct lcol");

/* Packing and HDF5's shuffle filter in one pass: byte j of the packed row
 * of element i goes to j * n + i, for the first `used` of n elements; the
 * planes' tails (elements used..n-1, the zero padding of an edge chunk)
 * must already be zero in dst.  The bytes are those of packing the rows
 * (the columns' bytes in file order) and then shuffling.
 * Why blocked: element by element, every store lands n bytes (a 16,384-row
 * plane) after the previous one and misses the TLB (36% of a 1 M-job run's
 * CPU); a block of SHUF_BLOCK elements is read from L1 once per byte
 * plane and stored as one run of SHUF_BLOCK bytes.  Why one pass: packing
 * first was a memcpy call per column and row (22 M calls for 1 M jobs,
 * 5% of the run) and one more 2.4 MB buffer per chunk.  Why transposed: a
 * 4- or 8-byte column of 8 rows is an 8 x 8 byte matrix whose transpose is
 * 8 bytes of each of its planes, three rounds of masked swaps on 64-bit
 * words (Warren, Hacker's Delight, 7-3), where moving byte by byte made
 * this the largest part of writing a results file (20% of a 1 M-job run
 * with output once compression was fast).  Hosts here are little-endian
 * (build_chunks' caller checks), so byte k of a word is its k-th byte in
 * memory. */
#define SHUF_BLOCK 64

static inline void transpose8(uint64_t x[8])
{
    for (int r = 0; r < 4; r++) {
        uint64_t t = ((x[r] >> 32) ^ x[r + 4]) & 0x00000000FFFFFFFFull;
        x[r] ^= t << 32;
        x[r + 4] ^= t;
    }
    for (int r = 0; r < 8; r += 4)
        for (int q = r; q < r + 2; q++) {
            uint64_t t = ((x[q] >> 16) ^ x[q + 2]) & 0x0000FFFF0000FFFFull;
            x[q] ^= t << 16;
            x[q + 2] ^= t;
        }
    for (int r = 0; r < 8; r += 2) {
        uint64_t t = ((x[r] >> 8) ^ x[r + 1]) & 0x00FF00FF00FF00FFull;
        x[r] ^= t << 8;
        x[r + 1] ^= t;
    }
}

static void pack_shuffle(const unsigned char *src, size_t row_size, const layout_t *lay,
                         unsigned char *dst, size_t n, size_t used)
{
    for (size_t i0 = 0; i0 < used; i0 += SHUF_BLOCK) {
        size_t b = used - i0 < SHUF_BLOCK ? used - i0 : SHUF_BLOCK;
        size_t b8 = b & ~(size_t)7;
        const unsigned char *s = src + i0 * row_size;
        for (size_t c = 0; c < lay->ncols; c++) {
            const struct lcol *col = &lay->col[c];
            size_t done = 0;
            if (col->size == 8 || col->size == 4) {
                for (; done < b8; done += 8) {
                    uint64_t x[8];
                    for (int r = 0; r < 8; r++) {
                        const unsigned char *e = s + (done + (size_t)r) * row_size + col->mo;
                        if (col->size == 8) {
                            memcpy(&x[r], e, 8);
                        } else {
                            uint32_t v;
                            memcpy(&v, e, 4);
                            x[r] = v;
                        }
                    }
                    transpose8(x);
                    for (size_t k = 0; k < col->size; k++)
                        memcpy(dst + (col->fo + k) * n + i0 + done, &x[k], 8);
                }
            }
            for (size_t k = 0; k < col->size; k++) {   /* the rest byte by byte */
                unsigned char *d = dst + (col->fo + k) * n + i0;
                const unsigned char *e = s + col->mo + k;
                for (size_t i = done; i < b; i++)
                    d[i] = e[i * row_size];
            }
        }
    }
}

static void zctx_release(zctx_t *x)
{
    fs_free(x->zs);
    fs_free(x->lvbuf);
    fs_free(x->shuf);
    fs_free(x->out);
    memset(x, 0, sizeof *x);
}

/* Makes x hold chunks of nbytes; FS_ENOMEM leaves it usable as it was. */
static int zctx_reserve(zctx_t *x, size_t nbytes)
{
    if (!x->zs) {
        struct isal_zstream *zs = fs_malloc(sizeof *zs);
        unsigned char *lv = fs_malloc(ISAL_DEF_LVL1_DEFAULT);
        if (!zs || !lv) {
            fs_free(zs);
            fs_free(lv);
            return FS_ENOMEM;
        }
        x->zs = zs;
        x->lvbuf = lv;
    }
    if (nbytes <= x->nbytes)
        return 0;
    /* igzip writes incompressible data as stored blocks (5 bytes per 64 KB
     * block, plus the zlib header and trailer): this is ample */
    size_t bound = nbytes + nbytes / 64 + 4096;
    unsigned char *q = fs_malloc(nbytes), *o = fs_malloc(bound);
    if (!q || !o) {
        fs_free(q);
        fs_free(o);
        return FS_ENOMEM;
    }
    fs_free(x->shuf);
    fs_free(x->out);
    x->shuf = q;
    x->out = o;
    x->nbytes = nbytes;
    x->bound = bound;
    return 0;
}

/* x->shuf's first nbytes as one zlib stream in x->out: its size, 0 if
 * igzip failed.  Level 1 with the default level buffer, always the same
 * parameters: the stream is a function of the bytes alone (the AVX-512 and
 * AVX2 code paths give the same stream: docs/results.md). */
static size_t zlib_stream(zctx_t *x, size_t nbytes)
{
    struct isal_zstream *st = x->zs;
    if (x->bound > UINT32_MAX)   /* igzip counts in 32 bits; no chunk is near 4 GB */
        return 0;
    isal_deflate_init(st);
    st->level = DEFLATE_LEVEL;
    st->level_buf = x->lvbuf;
    st->level_buf_size = ISAL_DEF_LVL1_DEFAULT;
    st->gzip_flag = IGZIP_ZLIB;
    st->end_of_stream = 1;
    st->flush = NO_FLUSH;
    st->next_in = x->shuf;
    st->avail_in = (uint32_t)nbytes;
    st->next_out = x->out;
    st->avail_out = (uint32_t)x->bound;
    if (isal_deflate(st) != COMP_OK || st->internal_state.state != ZSTATE_END || st->avail_in)
        return 0;
    return st->total_out;
}

/* One chunk of `rows` rows from the cnt rows at src (cnt <= rows; the rest
 * is the edge chunk's zero padding): packed, shuffled and compressed into
 * z->data (fs_malloc'd, exactly z->size bytes).  No HDF5 call. */
static int build_chunk(zctx_t *x, const layout_t *lay, size_t rows, const void *src,
                       size_t row_size, size_t cnt, zchunk_t *z, const char *file,
                       const char *table, fs_error_t *err)
{
    size_t nbytes = rows * lay->fsize;
    if (lay->fsize == 0)
        return fs_error_set(err, FS_EINVAL, "%s: a row of /%s is wider than %d bytes", file,
                            table, MAX_ROW_BYTES);
    if (zctx_reserve(x, nbytes))
        return fs_error_set(err, FS_ENOMEM, "%s: out of memory compressing /%s", file, table);
    if (cnt < rows)   /* the edge chunk's zero padding, shuffled, is zeros */
        memset(x->shuf, 0, nbytes);
    pack_shuffle(src, row_size, lay, x->shuf, rows, cnt);
    size_t zn = zlib_stream(x, nbytes);
    if (zn == 0)
        return fs_error_set(err, FS_EIO, "%s: compressing /%s failed (igzip)", file, table);
    if (!(z->data = fs_malloc(zn)))
        return fs_error_set(err, FS_ENOMEM, "%s: out of memory compressing /%s", file, table);
    memcpy(z->data, x->out, zn);
    z->size = zn;
    return 0;
}

/* Packs rows [0, n) of buf into ceil(n / chunk) filtered chunks.  No HDF5
 * call: runs without the lock. */
static int build_chunks(zctx_t *x, const table_spec_t *t, size_t row_size, size_t n,
                        const void *buf, zchunk_t **out, size_t *n_out, const char *file,
                        fs_error_t *err)
{
    layout_t lay;
    layout_of(t, &lay);
    size_t rows = (size_t)t->chunk, nch = (n + rows - 1) / rows;
    zchunk_t *z = fs_calloc(nch, sizeof *z);
    if (!z)
        return fs_error_set(err, FS_ENOMEM, "%s: out of memory compressing /%s", file, t->name);
    for (size_t k = 0; k < nch; k++) {
        size_t first = k * rows, cnt = n - first < rows ? n - first : rows;
        int rc = build_chunk(x, &lay, rows, (const char *)buf + first * row_size, row_size, cnt,
                             &z[k], file, t->name, err);
        if (rc) {
            free_chunks(z, nch);
            return rc;
        }
    }
    *out = z;
    *n_out = nch;
    return 0;
}

/* Under the lock: grows the table to written + n rows and writes the
 * chunks that build_chunks made. */
static int write_chunks(hid_t fid, h5call_t *c, const table_spec_t *t, hsize_t written, size_t n,
                        const zchunk_t *z, size_t nch, fs_error_t *err)
{
    int rc = 0;
    hid_t did = H5I_INVALID_HID;
    hsize_t size[1] = {written + (hsize_t)n};
    char step[128];
    snprintf(step, sizeof step, "appending %zu rows to /%s", n, t->name);
    H5TRY(did = H5Dopen2(fid, t->name, H5P_DEFAULT), step);
    H5TRY(H5Dset_extent(did, size), step);
    for (size_t k = 0; k < nch; k++) {
        hsize_t off[1] = {written + (hsize_t)k * t->chunk};
        H5TRY(H5Dwrite_chunk(did, H5P_DEFAULT, 0, off, z[k].size, z[k].data), step);
    }
out:
    CLOSE(H5Dclose, did);
    return rc;
}

static const table_spec_t jobs_spec = {"jobs", "fleetsim jobs", job_cols, N_OF(job_cols),
                                       NULL, NULL, CHUNK_ROWS};
static const table_spec_t timeline_spec = {"timeline", "fleetsim timeline", sample_cols,
                                           N_OF(sample_cols), NULL, NULL, CHUNK_ROWS};
static const size_t failure_strsz[N_OF(failure_cols)] = {[4] = FS_FAILURE_CAUSE_MAX};
static const table_spec_t failures_spec = {"failures", "fleetsim failures", failure_cols,
                                           N_OF(failure_cols), failure_strsz, NULL, CHUNK_ROWS};
static const table_spec_t intervals_spec = {"gpu_intervals", "fleetsim GPU intervals",
                                            interval_cols, N_OF(interval_cols), NULL, NULL,
                                            CHUNK_ROWS};
static const size_t service_strsz[N_OF(service_cols)] = {[0] = FS_SERVICE_NAME_MAX};
static const table_spec_t services_spec = {"services", "fleetsim services", service_cols,
                                           N_OF(service_cols), service_strsz, NULL, CHUNK_ROWS};
static const table_spec_t buckets_spec = {"service_buckets", "fleetsim service buckets",
                                          bucket_cols, N_OF(bucket_cols), NULL, NULL, CHUNK_ROWS};
static const table_spec_t requests_spec = {"requests", "fleetsim requests", request_cols,
                                           N_OF(request_cols), NULL, NULL, CHUNK_ROWS};
static const table_spec_t nodegroups_spec = {"nodegroups", "fleetsim node groups", nodegroup_cols,
                                             N_OF(nodegroup_cols), NULL, NULL, CHUNK_ROWS};
static const size_t mig_layout_strsz[N_OF(mig_layout_cols)] = {[5] = FS_MIG_LAYOUT_TEXT};
static const table_spec_t mig_layouts_spec = {"mig_layouts", "fleetsim MIG layouts",
                                              mig_layout_cols, N_OF(mig_layout_cols),
                                              mig_layout_strsz, NULL, CHUNK_ROWS};
static const table_spec_t summary_spec = {"summary", "fleetsim summary", summary_cols,
                                          N_OF(summary_cols), NULL, NULL, 1};

static size_t max_len(size_t cur, const char *s)
{
    size_t n = s ? strlen(s) : 0;
    return n > cur ? n : cur;
}

static size_t round_up8(size_t n)
{
    return (n + 7) / 8 * 8;
}

static int write_pools(hid_t fid, h5call_t *c, const fs_results_meta_t *meta, fs_error_t *err)
{
    static const col_t cols[] = {
        {"index", K_U32, offsetof(pool_mem_t, index), "-"},
        {"name", K_STR, 0, "-"},
        {"gpu", K_STR, 0, "-"},
        {"nodes", K_U32, offsetof(pool_mem_t, nodes), "node"},
        {"gpus_per_node", K_U32, offsetof(pool_mem_t, gpus_per_node), "GPU"},
        {"mig", K_STR, 0, "-"},
        {"power_cap_w", K_F64, offsetof(pool_mem_t, power_cap_w), "W"},
        {"time_slicing", K_U32, offsetof(pool_mem_t, time_slicing), "replica"},
        {"mps", K_U32, offsetof(pool_mem_t, mps), "client"},
        {"ambient_c", K_F64, offsetof(pool_mem_t, ambient_c), "C"},
        {"throttle_w", K_F64, offsetof(pool_mem_t, throttle_w), "W"},
    };
    size_t ln = 1, lg = 1, lm = 1;
    for (size_t i = 0; i < meta->n_pools; i++) {
        ln = max_len(ln, meta->pools[i].name);
        lg = max_len(lg, meta->pools[i].gpu);
        lm = max_len(lm, meta->pools[i].mig);
    }
    size_t strsz[] = {0, ln, lg, 0, 0, lm, 0, 0, 0, 0, 0};
    size_t stroff[] = {0, sizeof(pool_mem_t), sizeof(pool_mem_t) + ln, 0, 0,
                       sizeof(pool_mem_t) + ln + lg, 0, 0, 0, 0, 0};
    _Static_assert(N_OF(strsz) == N_OF(cols) && N_OF(stroff) == N_OF(cols), "one per column");
    table_spec_t t = {"pools", "fleetsim pools", cols, N_OF(cols), strsz, stroff,
                      SMALL_CHUNK_ROWS};
    int rc = make_table(fid, c, &t, err);
    if (rc != 0 || meta->n_pools == 0)
        return rc;

    size_t stride = round_up8(sizeof(pool_mem_t) + ln + lg + lm);
    unsigned char *buf = fs_calloc(meta->n_pools, stride);
    if (!buf)
        return fs_error_set(err, FS_ENOMEM, "%s: out of memory writing /pools", c->file);
    for (size_t i = 0; i < meta->n_pools; i++) {
        const fs_pool_info_t *p = &meta->pools[i];
        pool_mem_t m = {(uint32_t)i, p->nodes, p->gpus_per_node, p->power_cap_w,
                        p->time_slicing, p->mps, p->ambient_c, p->throttle_w};
        unsigned char *row = buf + i * stride;
        memcpy(row, &m, sizeof m);
        if (p->name)
            memcpy(row + stroff[1], p->name, strlen(p->name));
        if (p->gpu)
            memcpy(row + stroff[2], p->gpu, strlen(p->gpu));
        if (p->mig)
            memcpy(row + stroff[5], p->mig, strlen(p->mig));
    }
    rc = append_rows(fid, c, &t, stride, meta->n_pools, buf, err);
    fs_free(buf);
    return rc;
}

static int write_tenants(hid_t fid, h5call_t *c, const fs_tenant_row_t *rows, size_t n,
                         const char *const *names, size_t n_names, fs_error_t *err)
{
    size_t ln = 1;
    for (size_t i = 0; i < n; i++) {
        int32_t t = rows[i].tenant;
        if (names && t >= 0 && (size_t)t < n_names)
            ln = max_len(ln, names[t]);
    }
    size_t strsz[N_OF(tenant_cols)] = {0, ln};
    table_spec_t t = {"tenants", "fleetsim tenants", tenant_cols, N_OF(tenant_cols), strsz,
                      NULL, SMALL_CHUNK_ROWS};
    int rc = make_table(fid, c, &t, err);
    if (rc != 0 || n == 0)
        return rc;

    size_t stride = round_up8(TENANT_NAME_OFF + ln);
    unsigned char *buf = fs_calloc(n, stride);
    if (!buf)
        return fs_error_set(err, FS_ENOMEM, "%s: out of memory writing /tenants", c->file);
    for (size_t i = 0; i < n; i++) {
        const fs_tenant_row_t *r = &rows[i];
        tenant_mem_t m = {r->tenant, r->jobs, r->jobs_completed, r->gpu_hours, r->wait_mean,
                          r->wait_p50, r->wait_p95, r->wait_p99, r->jct_mean, r->jct_p95,
                          r->queued_mean, r->preemptions, r->preempt_lost_gpu_hours,
                          r->borrowed_gpu_hours, r->lent_gpu_hours, r->held_gpu_hours,
                          r->computing_gpu_hours, r->redo_gpu_hours, r->ckpt_gpu_hours,
                          r->startup_gpu_hours, r->recovering_gpu_hours};
        unsigned char *row = buf + i * stride;
        memcpy(row, &m, sizeof m);
        const char *name = names && r->tenant >= 0 && (size_t)r->tenant < n_names
                               ? names[r->tenant] : NULL;
        if (name)
            memcpy(row + TENANT_NAME_OFF, name, strlen(name));
    }
    rc = append_rows(fid, c, &t, stride, n, buf, err);
    fs_free(buf);
    return rc;
}

/* ---- lifecycle --------------------------------------------------------- */

/* The caller's HDF5 lock (fs_results_meta_t.io_lock), copied so that it
 * outlives r when a call frees r. */
typedef struct h5lock {
    void (*fn)(void *ud, int lock);
    void *ud;
} h5lock_t;

static h5lock_t lock_of(const fs_results_t *r)
{
    h5lock_t l = {r->io_lock, r->io_lock_ud};
    return l;
}

/* Takes the lock, then HDF5's error handler (both are process state). */
static void h5_enter(h5lock_t l, h5call_t *c, const char *file)
{
    if (l.fn)
        l.fn(l.ud, 1);
    call_begin(c, file);
}

static void h5_leave(h5lock_t l, const h5call_t *c)
{
    call_end(c);
    if (l.fn)
        l.fn(l.ud, 0);
}

static void writer_start(fs_results_t *r);
static void writer_end(fs_results_t *r, int cancel);

static void results_free(fs_results_t *r)
{
    if (!r)
        return;
    writer_end(r, 1);
    zctx_release(&r->zx);
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
    writer_end(r, 1);   /* before the file goes: the thread may hold chunks of it */
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
    H5TRY(attr_i32(f, "format_version", FS_RESULTS_FORMAT_VERSION),
          "writing attribute format_version");
    H5TRY(attr_str(f, "fleetsim_version", FLEETSIM_VERSION), "writing attribute fleetsim_version");
    H5TRY(attr_u64(f, "seed", meta->seed), "writing attribute seed");
    H5TRY(attr_u64(f, "replication", meta->replication), "writing attribute replication");
    H5TRY(attr_str(f, "scenario", meta->scenario), "writing attribute scenario");
    H5TRY(attr_str(f, "scenario_source", meta->scenario_source),
          "writing attribute scenario_source");
    H5TRY(attr_str(f, "scenario_path", meta->scenario_path), "writing attribute scenario_path");
    H5TRY(attr_str(f, "currency", "USD"), "writing attribute currency");
    H5TRY(attr_str(f, "time_unit", "s"), "writing attribute time_unit");
    if (meta->in_sweep) {
        H5TRY(attr_u64(f, "sweep_digest", meta->sweep_digest), "writing attribute sweep_digest");
        H5TRY(attr_u64(f, "sweep_point", meta->sweep_point), "writing attribute sweep_point");
    }
    H5TRY(attr_i32(f, "complete", 0), "writing attribute complete");
out:
    return rc;
}

static int open_file(fs_results_t *r, h5call_t *c, const fs_results_meta_t *meta,
                     fs_error_t *err)
{
    int rc = 0;
    /* Default access properties: a reader in the same process (tests, a
     * progress probe) can H5Fopen the temporary file with H5P_DEFAULT. */
    r->fid = h5_injected(c) ? H5I_INVALID_HID
                            : H5Fcreate(r->tmp, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    if (r->fid < 0) {
        c->file = r->path;
        return h5_fail(c, err, "creating the temporary file");
    }
    if ((rc = write_root(r, c, meta, err)) != 0 || (rc = write_pools(r->fid, c, meta, err)) != 0 ||
        (rc = make_table(r->fid, c, &jobs_spec, err)) != 0 ||
        (rc = make_table(r->fid, c, &timeline_spec, err)) != 0 ||
        (rc = make_table(r->fid, c, &failures_spec, err)) != 0 ||
        (rc = make_table(r->fid, c, &intervals_spec, err)) != 0 ||
        (meta->services && ((rc = make_table(r->fid, c, &services_spec, err)) != 0 ||
                            (rc = make_table(r->fid, c, &buckets_spec, err)) != 0)) ||
        (meta->services && meta->requests &&
         (rc = make_table(r->fid, c, &requests_spec, err)) != 0) ||
        (meta->nodegroups && (rc = make_table(r->fid, c, &nodegroups_spec, err)) != 0) ||
        (meta->mig_layouts && (rc = make_table(r->fid, c, &mig_layouts_spec, err)) != 0))
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
        if (meta->writer_thread && host_is_le())
            writer_start(r);
        *out = r;
    }
    return rc;
}

/* Appends n buffered rows to table t (*written rows so far): compressed
 * outside the lock when the append starts on a chunk boundary, else one
 * H5TBappend_records under it.  Takes the lock itself: the caller must not
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
        if (h5_injected(&c) || H5Ldelete(r->fid, t->name, H5P_DEFAULT) < 0)
            rc = h5_fail(&c, err, "re-creating a small table");
        else
            rc = make_table(r->fid, &c, &small, err);
        h5_leave(l, &c);
        if (rc)
            return rc;
        t = &small;
    }
    /* chunks the writer thread compressed (npre whole chunks) come first:
     * they exist only where the direct path applies */
    int direct = npre > 0 || (host_is_le() && *written % t->chunk == 0);
    if (direct) {
        zchunk_t *own = NULL;
        size_t nown = 0;
        if (n > 0 && (rc = build_chunks(zx, t, row_size, n, buf, &own, &nown, r->tmp, err)))
            return rc;
        nch = npre + nown;
        if (npre == 0) {
            z = own;
        } else {
            if (!(z = fs_calloc(nch, sizeof *z))) {
                free_chunks(own, nown);
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
    rc = direct ? write_chunks(r->fid, &c, t, *written, rows, z, nch, err)
                : append_rows(r->fid, &c, t, row_size, n, buf, err);
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

/* The streamed tables: rows arrive one by one during the run and are
 * written every FS_RESULTS_BATCH rows and at the commit. */
enum streamed_table { T_JOBS, T_TIMELINE, T_FAILURES, T_INTERVALS, T_SERVICES, T_BUCKETS,
                      T_REQUESTS, T_NODEGROUPS, T_MIG_LAYOUTS, N_STREAMED };
static const struct {
    const table_spec_t *spec;
    size_t row_size;
} streamed[N_STREAMED] = {
    [T_JOBS] = {&jobs_spec, sizeof(fs_job_row_t)},
    [T_TIMELINE] = {&timeline_spec, sizeof(fs_sample_row_t)},
    [T_FAILURES] = {&failures_spec, sizeof(fs_failure_row_t)},
    [T_INTERVALS] = {&intervals_spec, sizeof(fs_interval_row_t)},
    [T_SERVICES] = {&services_spec, sizeof(fs_service_row_t)},
    [T_BUCKETS] = {&buckets_spec, sizeof(fs_svc_bucket_row_t)},
    [T_REQUESTS] = {&requests_spec, sizeof(fs_request_row_t)},
    [T_NODEGROUPS] = {&nodegroups_spec, sizeof(fs_nodegroup_row_t)},
    [T_MIG_LAYOUTS] = {&mig_layouts_spec, sizeof(fs_mig_layout_row_t)},
};
_Static_assert(N_STREAMED == sizeof ((fs_results_t *)0)->pend / sizeof ((fs_results_t *)0)->pend[0],
               "one pending buffer per streamed table");

/* ---- the writer thread (fs_results_meta_t.writer_thread) ------------------ */

/*
 * Why: compressing /jobs was about half of a large run's CPU (1 M jobs:
 * libdeflate 43%, packing and shuffling 7%; with igzip and the transposing
 * pack, a quarter), and it does not depend on the simulation.  With a writer thread the caller hands over each full chunk
 * of rows (CHUNK_ROWS) and goes on simulating; the thread packs, shuffles
 * and compresses it, and every FS_RESULTS_BATCH rows of a table writes the
 * batch's chunks with the same HDF5 calls, in the same order, as the
 * caller's thread would have (a batch is written when its last chunk, the
 * one handed over at the add that finds a full batch without a thread, is
 * taken from the ring): the file is byte for byte the same.  When the ring
 * is full, or at the commit, the caller compresses queued chunks itself
 * (newest first) instead of waiting, so that both cores compress when the
 * simulation is done or is waiting.
 *
 * Only the thread calls HDF5 while items are in flight: every public call
 * that calls HDF5 itself first waits until the ring is empty (drain).  A
 * failure on the thread (a write, or memory for a compressed chunk) is
 * kept and returned by the next add, drain or commit; the file is then
 * discarded as after any failure.
 */
#define WQ_CHUNKS 4     /* chunks handed over and not yet written, at most */
#define BATCH_CHUNKS (FS_RESULTS_BATCH / CHUNK_ROWS)
_Static_assert(FS_RESULTS_BATCH % CHUNK_ROWS == 0, "a batch is whole chunks");

enum { W_QUEUED, W_CLAIMED, W_DONE };

typedef struct witem {
    int k;                  /* enum streamed_table */
    void *rows;             /* CHUNK_ROWS rows of that table (owned) */
    size_t cap;             /* rows' capacity in bytes */
    int state;              /* W_QUEUED, W_CLAIMED (being compressed), W_DONE */
    zchunk_t z;             /* W_DONE: its compressed chunk */
    int rc;                 /* compressing it failed (err says why) */
    fs_error_t err;
} witem_t;

typedef struct wacc {       /* a table's compressed chunks not yet written */
    zchunk_t *z;
    size_t n, cap;
} wacc_t;

typedef struct writer {
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t cv;      /* any change of the ring or of an item: broadcast */
    witem_t it[WQ_CHUNKS];
    size_t head, n;         /* the ring: it[head] and the n - 1 after it, in order */
    int stop;               /* exit once the ring is empty */
    int cancel;             /* drop what is queued (abort) */
    zctx_t zw, zm;          /* scratch of the thread, of the caller when it helps */
    wacc_t acc[N_STREAMED]; /* the thread's, until it exits */
    struct {
        void *p;
        size_t cap;         /* bytes */
    } spare[WQ_CHUNKS + 1]; /* row buffers given back */
    size_t n_spare;
    int rc;                 /* the first failure (sticky) */
    fs_error_t err;
    fs_alloc_ctx_t *mem;    /* the allocation context of the run (the starter's), bound by the thread */
} writer_t;

/* Compresses item x (the lock not held). */
static void writer_build(const fs_results_t *r, zctx_t *zx, witem_t *x)
{
    const table_spec_t *t = streamed[x->k].spec;
    layout_t lay;
    layout_of(t, &lay);
    fs_error_clear(&x->err);
    x->rc = build_chunk(zx, &lay, (size_t)t->chunk, x->rows, streamed[x->k].row_size, CHUNK_ROWS,
                        &x->z, r->tmp, t->name, &x->err);
}

/* The caller compresses the newest queued item, if any (lock held; it is
 * released while compressing).  1 if it did. */
static int writer_help(fs_results_t *r)
{
    writer_t *w = r->w;
    if (w->rc || w->cancel)
        return 0;
    for (size_t i = w->n; i-- > 0;) {
        witem_t *x = &w->it[(w->head + i) % WQ_CHUNKS];
        if (x->state != W_QUEUED)
            continue;
        x->state = W_CLAIMED;
        pthread_mutex_unlock(&w->mu);
        writer_build(r, &w->zm, x);
        pthread_mutex_lock(&w->mu);
        x->state = W_DONE;
        pthread_cond_broadcast(&w->cv);
        return 1;
    }
    return 0;
}

/* The thread: writes a table's batch of chunks (lock not held). */
static int writer_write(fs_results_t *r, int k, fs_error_t *err)
{
    wacc_t *a = &r->w->acc[k];
    const table_spec_t *t = streamed[k].spec;
    struct pending *p = &r->pend[k];
    size_t rows = a->n * (size_t)t->chunk;
    h5call_t c;
    h5lock_t l = lock_of(r);
    h5_enter(l, &c, r->tmp);
    int rc = write_chunks(r->fid, &c, t, p->written, rows, a->z, a->n, err);
    h5_leave(l, &c);
    for (size_t i = 0; i < a->n; i++)
        fs_free(a->z[i].data);
    a->n = 0;
    if (rc == 0)
        p->written += (hsize_t)rows;
    return rc;
}

static void *writer_main(void *arg)
{
    fs_results_t *r = arg;
    writer_t *w = r->w;
    fs_alloc_bind(w->mem);     /* a new thread: nothing to restore */
    pthread_mutex_lock(&w->mu);
    for (;;) {
        while (w->n == 0 && !w->stop)
            pthread_cond_wait(&w->cv, &w->mu);
        if (w->n == 0)
            break;
        witem_t *x = &w->it[w->head];
        int live = !w->rc && !w->cancel;
        if (live && x->state == W_QUEUED) {
            x->state = W_CLAIMED;
            pthread_mutex_unlock(&w->mu);
            writer_build(r, &w->zw, x);
            pthread_mutex_lock(&w->mu);
            x->state = W_DONE;
        }
        while (x->state == W_CLAIMED)   /* the caller is compressing it */
            pthread_cond_wait(&w->cv, &w->mu);
        live = !w->rc && !w->cancel;
        int rc = 0;
        fs_error_t e;
        fs_error_clear(&e);
        if (live && x->rc) {
            rc = x->rc;
            e = x->err;
        } else if (live) {
            wacc_t *a = &w->acc[x->k];
            if (fs_grow((void **)&a->z, &a->cap, a->n + 1, sizeof *a->z)) {
                rc = fs_error_set(&e, FS_ENOMEM, "%s: out of memory writing /%s", r->tmp,
                                  streamed[x->k].spec->name);
            } else {
                a->z[a->n++] = x->z;
                x->z.data = NULL;
                if (a->n == BATCH_CHUNKS) {
                    pthread_mutex_unlock(&w->mu);
                    rc = writer_write(r, x->k, &e);
                    pthread_mutex_lock(&w->mu);
                }
            }
        }
        if (rc && !w->rc) {
            w->rc = rc;
            w->err = e;
        }
        fs_free(x->z.data);
        x->z.data = NULL;
        if (w->n_spare < N_OF(w->spare)) {
            w->spare[w->n_spare].p = x->rows;
            w->spare[w->n_spare++].cap = x->cap;
        } else {
            fs_free(x->rows);
        }
        x->rows = NULL;
        w->head = (w->head + 1) % WQ_CHUNKS;
        w->n--;
        pthread_cond_broadcast(&w->cv);
    }
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

/* Starts the thread; no thread (and no error) when it cannot be had: the
 * caller's thread then writes, as without the option. */
static void writer_start(fs_results_t *r)
{
    writer_t *w = fs_calloc(1, sizeof *w);
    if (!w)
        return;
    if (pthread_mutex_init(&w->mu, NULL) != 0) {
        fs_free(w);
        return;
    }
    if (pthread_cond_init(&w->cv, NULL) != 0) {
        pthread_mutex_destroy(&w->mu);
        fs_free(w);
        return;
    }
    r->w = w;
    w->mem = fs_alloc_bound();
    if (pthread_create(&w->th, NULL, writer_main, r) != 0) {
        pthread_cond_destroy(&w->cv);
        pthread_mutex_destroy(&w->mu);
        fs_free(w);
        r->w = NULL;
    }
}

/* Waits until the ring is empty, compressing queued chunks meanwhile; the
 * thread's failure if any.  The thread then calls no HDF5 until the next
 * hand-over. */
static int writer_drain(fs_results_t *r, fs_error_t *err)
{
    writer_t *w = r->w;
    if (!w)
        return 0;
    pthread_mutex_lock(&w->mu);
    while (w->n > 0)
        if (!writer_help(r))
            pthread_cond_wait(&w->cv, &w->mu);
    int rc = w->rc;
    if (rc)
        *err = w->err;
    pthread_mutex_unlock(&w->mu);
    return rc;
}

/* Ends the thread (cancel: dropping what is queued) and frees it, with
 * the chunks it compressed and did not write. */
static void writer_end(fs_results_t *r, int cancel)
{
    writer_t *w = r->w;
    if (!w)
        return;
    pthread_mutex_lock(&w->mu);
    w->stop = 1;
    w->cancel |= cancel;
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
    pthread_join(w->th, NULL);
    for (size_t k = 0; k < N_STREAMED; k++)
        free_chunks(w->acc[k].z, w->acc[k].n);
    for (size_t i = 0; i < w->n_spare; i++)
        fs_free(w->spare[i].p);
    zctx_release(&w->zw);
    zctx_release(&w->zm);
    pthread_cond_destroy(&w->cv);
    pthread_mutex_destroy(&w->mu);
    fs_free(w);
    r->w = NULL;
}

/* Hands over table k's full chunk of rows.  A buffer for the rows to come
 * is had first: FS_ENOMEM leaves everything as it was. */
static int writer_submit(fs_results_t *r, enum streamed_table k, fs_error_t *err)
{
    writer_t *w = r->w;
    struct pending *p = &r->pend[k];
    size_t sz = streamed[k].row_size, need = (size_t)CHUNK_ROWS * sz;
    int rc = 0;
    pthread_mutex_lock(&w->mu);
    while (!w->rc && w->n == WQ_CHUNKS)
        if (!writer_help(r))
            pthread_cond_wait(&w->cv, &w->mu);
    if ((rc = w->rc) != 0) {
        *err = w->err;
        goto out;
    }
    void *next = NULL;
    size_t next_cap = 0;
    for (size_t i = 0; i < w->n_spare && !next; i++)
        if (w->spare[i].cap >= need) {
            next = w->spare[i].p;
            next_cap = w->spare[i].cap;
            w->spare[i] = w->spare[--w->n_spare];
        }
    if (!next) {
        if (!(next = fs_malloc(need))) {
            rc = fs_error_set(err, FS_ENOMEM, "%s: out of memory buffering /%s", r->path,
                              streamed[k].spec->name);
            goto out;
        }
        next_cap = need;
    }
    witem_t *x = &w->it[(w->head + w->n) % WQ_CHUNKS];
    memset(x, 0, sizeof *x);
    x->k = (int)k;
    x->rows = p->rows;
    x->cap = p->cap * sz;
    x->state = W_QUEUED;
    w->n++;
    p->rows = next;
    p->cap = next_cap / sz;
    p->n = 0;
    pthread_cond_broadcast(&w->cv);
out:
    pthread_mutex_unlock(&w->mu);
    return rc;
}

static int flush_pending(fs_results_t *r, enum streamed_table k, fs_error_t *err)
{
    struct pending *p = &r->pend[k];
    wacc_t *a = r->w ? &r->w->acc[k] : NULL;
    /* the caller's scratch: with a thread, the one it compresses with when it helps */
    int rc = flush_table(r, r->w ? &r->w->zm : &r->zx, streamed[k].spec, streamed[k].row_size,
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
    int rc = writer_drain(r, err);
    for (int k = 0; k < N_STREAMED && rc == 0; k++)
        rc = flush_pending(r, (enum streamed_table)k, err);
    return rc;
}

static int add_pending(fs_results_t *r, enum streamed_table k, const void *row, fs_error_t *err)
{
    struct pending *p = &r->pend[k];
    size_t sz = streamed[k].row_size;
    if (r->w && p->n == CHUNK_ROWS) {
        int rc = writer_submit(r, k, err);
        if (rc != 0)
            return rc;
    } else if (!r->w && p->n == FS_RESULTS_BATCH) {
        int rc = flush_pending(r, k, err);
        if (rc != 0)
            return rc;
    }
    if (fs_grow(&p->rows, &p->cap, p->n + 1, sz) != 0)
        return fs_error_set(err, FS_ENOMEM, "%s: out of memory buffering /%s", r->path,
                            streamed[k].spec->name);
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

    if ((rc = make_table(r->fid, c, &summary_spec, err)) != 0 ||
        (rc = append_rows(r->fid, c, &summary_spec, sizeof *sum, 1, sum, err)) != 0 ||
        (rc = write_tenants(r->fid, c, tenants, n_tenant_rows, tenant_names, n_tenants, err)) !=
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
                               double stopped_at_s, fs_error_t *err)
{
    int rc = 0;
    H5TRY(attr_str(r->fid, "incomplete_reason", reason), "writing attribute incomplete_reason");
    H5TRY(attr_f64(r->fid, "stopped_at", stopped_at_s), "writing attribute stopped_at");
    H5TRY(H5Fflush(r->fid, H5F_SCOPE_GLOBAL), "flushing");
    herr_t st = H5Fclose(r->fid);
    r->fid = H5I_INVALID_HID;
    H5TRY(st, "closing");
    rc = fs_out_commit(&r->out, fs_io_rename, err);
out:
    return rc;
}

int fs_results_commit_partial(fs_results_t *r, const char *reason, double stopped_at_s,
                              fs_error_t *err)
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
        rc = commit_partial_file(r, &c, reason, stopped_at_s, err);
    if (rc != 0)
        discard(r);
    else
        results_free(r);
    h5_leave(l, &c);
    return rc;
}

/* ---- skipped trace rows -------------------------------------------------- */

/* The memory (= file) row of rows_skipped_by_reason: the reason padded to
 * SKIP_REASON_LEN bytes, then the count (8-byte aligned). */
#define SKIP_REASON_LEN 64
typedef struct skip_mem {
    char reason[SKIP_REASON_LEN];
    uint64_t count;
} skip_mem_t;

static int write_skipped(fs_results_t *r, h5call_t *c, const skip_mem_t *rows, size_t n,
                         fs_error_t *err)
{
    int rc = 0;
    const char *step = "writing attribute rows_skipped_by_reason";
    hid_t st = H5I_INVALID_HID, ct = H5I_INVALID_HID, sid = H5I_INVALID_HID;
    hid_t aid = H5I_INVALID_HID;
    hsize_t dims[1] = {n};
    H5TRY(st = kind_file_type(K_STR, SKIP_REASON_LEN), step);
    H5TRY(ct = H5Tcreate(H5T_COMPOUND, sizeof(skip_mem_t)), step);
    H5TRY(H5Tinsert(ct, "reason", offsetof(skip_mem_t, reason), st), step);
    H5TRY(H5Tinsert(ct, "count", offsetof(skip_mem_t, count), H5T_STD_U64LE), step);
    H5TRY(sid = H5Screate_simple(1, dims, NULL), step);
    H5TRY(aid = H5Acreate2(r->fid, "rows_skipped_by_reason", ct, sid, H5P_DEFAULT, H5P_DEFAULT),
          step);
    H5TRY(H5Awrite(aid, ct, rows), step);
out:
    CLOSE(H5Aclose, aid);
    CLOSE(H5Sclose, sid);
    CLOSE(H5Tclose, ct);
    CLOSE(H5Tclose, st);
    return rc;
}

int fs_results_set_skipped(fs_results_t *r, const char *const *reasons, const uint64_t *counts,
                           size_t n, fs_error_t *err)
{
    if (!r || (n && (!reasons || !counts)))
        return fs_error_set(err, FS_EINVAL, "results file: skipped rows without a file or reasons");
    if (n == 0)
        return 0;
    int rc = writer_drain(r, err);
    if (rc)
        return rc;
    skip_mem_t *rows = fs_calloc(n, sizeof *rows);
    if (!rows)
        return fs_error_set(err, FS_ENOMEM, "%s: out of memory writing skip reasons", r->path);
    for (size_t i = 0; i < n; i++) {
        const char *s = reasons[i] ? reasons[i] : "";
        size_t len = strlen(s);
        memcpy(rows[i].reason, s, len < SKIP_REASON_LEN ? len : SKIP_REASON_LEN);
        rows[i].count = counts[i];
    }
    h5call_t c;
    h5lock_t l = lock_of(r);
    h5_enter(l, &c, r->tmp);
    rc = write_skipped(r, &c, rows, n, err);
    h5_leave(l, &c);
    fs_free(rows);
    return rc;
}

void fs_results_abort(fs_results_t *r)
{
    if (!r)
        return;
    writer_end(r, 1);   /* without the lock: the thread may be waiting for it */
    h5call_t c;
    h5lock_t l = lock_of(r);
    h5_enter(l, &c, r->tmp);
    discard(r);
    h5_leave(l, &c);
}

/* ---- cost (models/fs_cost.h; docs/cost.md) ------------------------------ */

/* /cost and /cost_pools memory row. */
typedef struct cost_mem {
    int32_t day;            /* -1 in /cost_pools */
    uint32_t pool;
    double capex, energy, colocation, ops, cloud, total, energy_kwh, idle;
    double gpu_hours_owned, gpu_hours_busy;
    double carbon_kg, carbon_embodied_kg;
    double unit_cost, lost_gpu_hours, failures;   /* /cost_pools only */
    double preempt_lost_gpu_hours, preemptions;   /* /cost_pools only */
} cost_mem_t;

#define COST_COL(name, kind, unit) {#name, kind, offsetof(cost_mem_t, name), unit}
#define COST_COMMON                                                                          \
    COST_COL(pool, K_U32, "-"), COST_COL(capex, K_F64, "USD"), COST_COL(energy, K_F64, "USD"), \
    COST_COL(colocation, K_F64, "USD"), COST_COL(ops, K_F64, "USD"),                          \
    COST_COL(cloud, K_F64, "USD"), COST_COL(total, K_F64, "USD"),                             \
    COST_COL(energy_kwh, K_F64, "kWh"), COST_COL(idle, K_F64, "USD"),                         \
    COST_COL(gpu_hours_owned, K_F64, "GPU-h"), COST_COL(gpu_hours_busy, K_F64, "GPU-h"),     \
    COST_COL(carbon_kg, K_F64, "kgCO2e"), COST_COL(carbon_embodied_kg, K_F64, "kgCO2e")
static const col_t cost_cols[] = {COST_COL(day, K_I32, "d"), COST_COMMON};
static const col_t cost_pool_cols[] = {
    COST_COMMON, COST_COL(unit_cost, K_F64, "USD/GPU-h"), COST_COL(lost_gpu_hours, K_F64, "GPU-h"),
    COST_COL(failures, K_F64, "USD"), COST_COL(preempt_lost_gpu_hours, K_F64, "GPU-h"),
    COST_COL(preemptions, K_F64, "USD")};

static cost_mem_t cost_row(int32_t day, uint32_t pool, const fs_cost_cell_t *c)
{
    return (cost_mem_t){.day = day, .pool = pool, .capex = c->capex, .energy = c->energy,
                        .colocation = c->colocation, .ops = c->ops, .cloud = c->cloud,
                        .total = c->total, .energy_kwh = c->energy_kwh, .idle = c->idle,
                        .gpu_hours_owned = c->gpu_s_owned / 3600.0,
                        .gpu_hours_busy = c->gpu_s_busy / 3600.0, .carbon_kg = c->carbon_kg,
                        .carbon_embodied_kg = c->carbon_embodied_kg};
}

static int write_cost_cells(hid_t fid, h5call_t *c, const fs_cost_report_t *k, fs_error_t *err)
{
    size_t n = k->n_days * k->n_pools;
    /* written once: chunks of its rows (rounded up), not 16,384 padded rows */
    hsize_t chunk = n >= CHUNK_ROWS ? CHUNK_ROWS
                                    : (hsize_t)((n + SMALL_CHUNK_ROWS - 1) / SMALL_CHUNK_ROWS * SMALL_CHUNK_ROWS);
    table_spec_t t = {"cost", "fleetsim cost per day and pool", cost_cols, N_OF(cost_cols),
                      NULL, NULL, chunk ? chunk : SMALL_CHUNK_ROWS};
    table_spec_t tp = {"cost_pools", "fleetsim cost per pool", cost_pool_cols,
                       N_OF(cost_pool_cols), NULL, NULL, SMALL_CHUNK_ROWS};
    cost_mem_t *buf = fs_calloc(n > k->n_pools ? n : k->n_pools + 1, sizeof *buf);
    if (!buf)
        return fs_error_set(err, FS_ENOMEM, "%s: out of memory writing /cost", c->file);
    int rc = make_table(fid, c, &t, err);
    for (size_t i = 0; i < n; i++)
        buf[i] = cost_row((int32_t)(i / k->n_pools), (uint32_t)(i % k->n_pools), &k->cells[i]);
    if (!rc)
        rc = append_rows(fid, c, &t, sizeof *buf, n, buf, err);
    if (!rc)
        rc = make_table(fid, c, &tp, err);
    for (uint32_t p = 0; !rc && p < k->n_pools; p++) {
        buf[p] = cost_row(-1, p, &k->pools[p]);
        buf[p].unit_cost = k->unit[p];
        buf[p].lost_gpu_hours = k->lost_gpu_hours[p];
        double pre = k->preempt_lost_gpu_hours[p], fail = k->lost_gpu_hours[p] - pre;
        buf[p].failures = fail > 1e-9 * k->lost_gpu_hours[p] ? fail * k->unit[p] : 0.0;
        buf[p].preempt_lost_gpu_hours = pre;
        buf[p].preemptions = pre > 0 ? pre * k->unit[p] : 0.0;
    }
    if (!rc)
        rc = append_rows(fid, c, &tp, sizeof *buf, k->n_pools, buf, err);
    fs_free(buf);
    return rc;
}

/* /cost_tenants memory row: this struct, then the name (fixed length). */
typedef struct cost_tenant_mem {
    int32_t tenant;
    double gpu_hours, lost_gpu_hours, showback, chargeback;
    double preempt_lost_gpu_hours;
    double carbon_kg;
} cost_tenant_mem_t;

static int write_cost_tenants(hid_t fid, h5call_t *c, const fs_cost_report_t *k,
                              const char *const *names, size_t n_names, fs_error_t *err)
{
    static const col_t cols[] = {
        {"tenant", K_I32, offsetof(cost_tenant_mem_t, tenant), "-"},
        {"name", K_STR, sizeof(cost_tenant_mem_t), "-"},
        {"gpu_hours", K_F64, offsetof(cost_tenant_mem_t, gpu_hours), "GPU-h"},
        {"lost_gpu_hours", K_F64, offsetof(cost_tenant_mem_t, lost_gpu_hours), "GPU-h"},
        {"showback", K_F64, offsetof(cost_tenant_mem_t, showback), "USD"},
        {"chargeback", K_F64, offsetof(cost_tenant_mem_t, chargeback), "USD"},
        {"preempt_lost_gpu_hours", K_F64, offsetof(cost_tenant_mem_t, preempt_lost_gpu_hours),
         "GPU-h"},
        {"carbon_kg", K_F64, offsetof(cost_tenant_mem_t, carbon_kg), "kgCO2e"},
    };
    size_t ln = 1;
    for (size_t i = 0; i < k->n_tenants; i++) {
        int32_t t = k->tenants[i].tenant;
        if (names && t >= 0 && (size_t)t < n_names)
            ln = max_len(ln, names[t]);
    }
    size_t strsz[N_OF(cols)] = {0, ln};
    table_spec_t t = {"cost_tenants", "fleetsim cost per tenant", cols, N_OF(cols), strsz, NULL,
                      SMALL_CHUNK_ROWS};
    int rc = make_table(fid, c, &t, err);
    if (rc || k->n_tenants == 0)
        return rc;
    size_t stride = round_up8(sizeof(cost_tenant_mem_t) + ln);
    unsigned char *buf = fs_calloc(k->n_tenants, stride);
    if (!buf)
        return fs_error_set(err, FS_ENOMEM, "%s: out of memory writing /cost_tenants", c->file);
    for (size_t i = 0; i < k->n_tenants; i++) {
        const fs_cost_tenant_t *r = &k->tenants[i];
        cost_tenant_mem_t m = {r->tenant, r->gpu_hours, r->lost_gpu_hours, r->showback,
                               r->chargeback, r->preempt_lost_gpu_hours, r->carbon_kg};
        memcpy(buf + i * stride, &m, sizeof m);
        const char *name = names && r->tenant >= 0 && (size_t)r->tenant < n_names
                               ? names[r->tenant] : NULL;
        if (name)
            memcpy(buf + i * stride + sizeof m, name, strlen(name));
    }
    rc = append_rows(fid, c, &t, stride, k->n_tenants, buf, err);
    fs_free(buf);
    return rc;
}

int fs_results_add_cost(fs_results_t *r, const fs_cost_report_t *cost,
                        const char *const *tenant_names, size_t n_tenants, fs_error_t *err)
{
    if (!r || !cost)
        return fs_error_set(err, FS_EINVAL, "results file: cost without an open file");
    int rc = writer_drain(r, err);
    if (rc)
        return rc;
    /* under the caller's HDF5 lock like every other call (a sweep's threads) */
    h5call_t c;
    h5lock_t l = lock_of(r);
    h5_enter(l, &c, r->tmp);
    rc = write_cost_cells(r->fid, &c, cost, err);
    if (!rc)
        rc = write_cost_tenants(r->fid, &c, cost, tenant_names, n_tenants, err);
    h5_leave(l, &c);
    return rc;
}

const char *fs_results_summary_field(size_t i, const fs_summary_t *sum, double *value,
                                     int *is_count, const char **unit)
{
    if (i >= N_OF(summary_cols))
        return NULL;
    const col_t *c = &summary_cols[i];
    const char *p = (const char *)sum + c->off;
    *is_count = c->kind == K_U64;
    if (c->kind == K_U64) {
        uint64_t u;
        memcpy(&u, p, sizeof u);
        *value = (double)u;
    } else {
        memcpy(value, p, sizeof *value);
    }
    if (unit)
        *unit = c->unit;
    return c->name;
}
