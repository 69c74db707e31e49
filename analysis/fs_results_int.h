/*
 * fs_results_int: what the parts of the results writer share (for
 * analysis/fs_results*.c only; the contract is fs_results.h).
 *
 *   fs_results.c         the lifecycle: open, buffered adds, flushes, commit, abort
 *   fs_results_cols.c    the columns of every table and the streamed tables' specs
 *   fs_results_h5.c      HDF5 plumbing: errors, attributes, tables (create, append)
 *   fs_results_zip.c     whole chunks packed, shuffled and compressed outside the lock
 *   fs_results_thread.c  the writer thread (fs_results_meta_t.writer_thread)
 *   fs_results_small.c   the tables written in one call: /pools, /tenants, skip reasons
 *   fs_results_cost.c    the cost tables: /cost, /cost_pools, /cost_tenants
 */
#ifndef FS_RESULTS_INT_H
#define FS_RESULTS_INT_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include <hdf5.h>

#include "../sim/fs_alloc.h"
#include "../sim/fs_out.h"
#include "fs_results.h"

/* Rows per chunk of /jobs and /timeline.  Why 4,096 and not 16,384: the
 * same instructions (callgrind, 10^5-job benchmark: 618.5 M against 619.1
 * M), a 1 M-job file 7% smaller (26.7 against 28.7 MB: each chunk's
 * dictionary is fresh, and small chunks compress better), peak memory 11 MB
 * lower (the row buffers in flight, the compressor's two buffers) and 3,100
 * fewer page faults a run; 2,048 costs 85 more instructions a job (HDF5's
 * cost per chunk) for 5% fewer bytes (docs/performance.md). */
#define CHUNK_ROWS 4096
#define SMALL_CHUNK_ROWS 64  /* rows per chunk of the small tables */
#define DEFLATE_LEVEL 1
#define MAX_COLS 128
#define N_OF(a) (sizeof(a) / sizeof((a)[0]))
#define N_STATES ((size_t)FS_STATE_WITHDRAWN + 1)

/* ---- columns and tables (fs_results_cols.c, fs_results_h5.c) ---------- */

enum col_kind { K_U64, K_I32, K_U32, K_F64, K_STATE, K_STR, K_COMPONENT, K_REPAIR };

typedef struct col {
    const char *name;
    enum col_kind kind;
    size_t off;          /* offset in the memory row */
    const char *unit;    /* for the "columns" attribute */
} col_t;

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

/* The streamed tables: rows arrive one by one during the run and are
 * written every FS_RESULTS_BATCH rows and at the commit. */
enum streamed_table { T_JOBS, T_TIMELINE, T_FAILURES, T_INTERVALS, T_SERVICES, T_BUCKETS,
                      T_REQUESTS, T_NODEGROUPS, T_MIG_LAYOUTS, N_STREAMED };
typedef struct fs_rs_streamed {
    const table_spec_t *spec;
    size_t row_size;
} fs_rs_streamed_t;
extern const fs_rs_streamed_t fs_rs_streamed[N_STREAMED];
/* the tables' specs (fs_results_cols.c) */
extern const table_spec_t fs_rs_jobs_spec, fs_rs_timeline_spec, fs_rs_failures_spec,
    fs_rs_intervals_spec, fs_rs_services_spec, fs_rs_buckets_spec, fs_rs_requests_spec,
    fs_rs_nodegroups_spec, fs_rs_mig_layouts_spec, fs_rs_summary_spec;

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

void fs_rs_call_begin(h5call_t *c, const char *file);
void fs_rs_call_end(const h5call_t *c);
/* Call right after the failing HDF5 call: FS_EIO naming the file, the step
 * and HDF5's innermost error description. */
int fs_rs_h5_fail(h5call_t *c, fs_error_t *err, const char *step);
/* The fault-injection hook (sim/fs_io.h): counts one HDF5 call and, when
 * it must fail, records why as HDF5's detail would be. */
int fs_rs_h5_injected(h5call_t *c);

#define H5TRY(expr, step)                              \
    do {                                               \
        if (fs_rs_h5_injected(c) || (expr) < 0) {      \
            rc = fs_rs_h5_fail(c, err, step);          \
            goto out;                                  \
        }                                              \
    } while (0)

#define CLOSE(fn, id)             \
    do {                          \
        if ((id) >= 0)            \
            fn(id);               \
        (id) = H5I_INVALID_HID;   \
    } while (0)

herr_t fs_rs_attr_str(hid_t loc, const char *name, const char *value);
herr_t fs_rs_attr_i32(hid_t loc, const char *name, int32_t v);
herr_t fs_rs_attr_u64(hid_t loc, const char *name, uint64_t v);
herr_t fs_rs_attr_f64(hid_t loc, const char *name, double v);
/* The file type of one column (a fresh id the caller closes). */
hid_t fs_rs_kind_file_type(enum col_kind k, size_t strsz);
size_t fs_rs_kind_mem_size(enum col_kind k, size_t strsz);
size_t fs_rs_col_strsz(const table_spec_t *t, size_t i);
/* Creates an empty, extendible, chunked and compressed table with the
 * H5TB attributes (so that H5TB* and PyTables treat it as a table). */
int fs_rs_make_table(hid_t fid, h5call_t *c, const table_spec_t *t, fs_error_t *err);
/* Appends n memory rows of row_size bytes: one HDF5 call for the batch. */
int fs_rs_append_rows(hid_t fid, h5call_t *c, const table_spec_t *t, size_t row_size, size_t n,
                      const void *buf, fs_error_t *err);

/* ---- whole chunks (fs_results_zip.c) ---------------------------------- */

/* What compressing chunks needs, kept from chunk to chunk: the compressor
 * and two buffers of one chunk each (the packed and shuffled bytes, the
 * compressed stream).  Why kept: a 4,096-row chunk of /jobs is 688 KB,
 * which malloc takes from mmap; allocated per chunk, every page of them
 * faulted in again (a tenth of a 1 M-job run's CPU in the kernel). */
typedef struct zctx {
    struct isal_zstream *zs;    /* ISA-L's stream state (80 KB) */
    unsigned char *lvbuf;       /* its level-1 buffer (ISAL_DEF_LVL1_DEFAULT) */
    unsigned char *shuf, *out;
    size_t nbytes, bound;       /* capacity of shuf, of out */
} zctx_t;

typedef struct zchunk {
    unsigned char *data;
    size_t size;
} zchunk_t;

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

_Static_assert(MAX_ROW_BYTES <= UINT16_MAX, "file offsets fit struct lcol");

int fs_rs_host_is_le(void);
/* Loads ISA-L (dlopen, once per process) for the chunk compressor:
 * FS_EINVAL naming file and the loader's reason when it cannot be. */
int fs_rs_isal_load(const char *file, fs_error_t *err);
void fs_rs_free_chunks(zchunk_t *z, size_t n);
void fs_rs_layout_of(const table_spec_t *t, layout_t *lay);
void fs_rs_zctx_release(zctx_t *x);
/* One chunk of `rows` rows from the cnt rows at src (cnt <= rows; the rest
 * is the edge chunk's zero padding): packed, shuffled and compressed into
 * z->data (fs_malloc'd, exactly z->size bytes).  No HDF5 call. */
int fs_rs_build_chunk(zctx_t *x, const layout_t *lay, size_t rows, const void *src,
                      size_t row_size, size_t cnt, zchunk_t *z, const char *file,
                      const char *table, fs_error_t *err);
/* Packs rows [0, n) of buf into ceil(n / chunk) filtered chunks.  No HDF5
 * call: runs without the lock. */
int fs_rs_build_chunks(zctx_t *x, const table_spec_t *t, size_t row_size, size_t n,
                       const void *buf, zchunk_t **out, size_t *n_out, const char *file,
                       fs_error_t *err);
/* Under the lock: grows the table to written + n rows and writes the
 * chunks that build_chunks made. */
int fs_rs_write_chunks(hid_t fid, h5call_t *c, const table_spec_t *t, hsize_t written, size_t n,
                       const zchunk_t *z, size_t nch, fs_error_t *err);

/* ---- the writer thread (fs_results_thread.c) --------------------------- */

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

/* ---- the open file (fs_results.c) -------------------------------------- */

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

_Static_assert(N_STREAMED == sizeof ((fs_results_t *)0)->pend / sizeof ((fs_results_t *)0)->pend[0],
               "one pending buffer per streamed table");

/* The caller's HDF5 lock (fs_results_meta_t.io_lock), copied so that it
 * outlives r when a call frees r. */
typedef struct h5lock {
    void (*fn)(void *ud, int lock);
    void *ud;
} h5lock_t;

static inline h5lock_t lock_of(const fs_results_t *r)
{
    h5lock_t l = {r->io_lock, r->io_lock_ud};
    return l;
}

/* Takes the lock, then HDF5's error handler (both are process state). */
static inline void h5_enter(h5lock_t l, h5call_t *c, const char *file)
{
    if (l.fn)
        l.fn(l.ud, 1);
    fs_rs_call_begin(c, file);
}

static inline void h5_leave(h5lock_t l, const h5call_t *c)
{
    fs_rs_call_end(c);
    if (l.fn)
        l.fn(l.ud, 0);
}

/* Starts the thread; no thread (and no error) when it cannot be had: the
 * caller's thread then writes, as without the option. */
void fs_rs_writer_start(fs_results_t *r);
/* Ends the thread (cancel: dropping what is queued) and frees it, with
 * the chunks it compressed and did not write. */
void fs_rs_writer_end(fs_results_t *r, int cancel);
/* Waits until the ring is empty, compressing queued chunks meanwhile; the
 * thread's failure if any. */
int fs_rs_writer_drain(fs_results_t *r, fs_error_t *err);
/* Hands over table k's full chunk of rows. */
int fs_rs_writer_submit(fs_results_t *r, enum streamed_table k, fs_error_t *err);

/* ---- small tables (fs_results_small.c) --------------------------------- */

size_t fs_rs_max_len(size_t cur, const char *s);
size_t fs_rs_round_up8(size_t n);
int fs_rs_write_pools(hid_t fid, h5call_t *c, const fs_results_meta_t *meta, fs_error_t *err);
int fs_rs_write_tenants(hid_t fid, h5call_t *c, const fs_tenant_row_t *rows, size_t n,
                        const char *const *names, size_t n_names, fs_error_t *err);

#endif
