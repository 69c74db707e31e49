/*
 * fs_results_zip: whole chunks of a streamed table, packed, shuffled and
 * compressed outside the HDF5 lock, then written under it.
 *
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
 * hosts, and flushes that start inside a chunk, take fs_rs_append_rows
 * (one H5Dwrite of the rows).
 *
 * ISA-L is loaded with dlopen when a results file is opened
 * (fs_rs_isal_load), not linked: Debian links libisal with BIND_NOW, and
 * as a NEEDED library its 194 PLT slots were resolved at every start of
 * every command, 155,000 of the 200,000 instructions `fleetsim version`
 * spent above an empty C program (docs/performance.md, "Start-up").
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "fs_results_int.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include <isa-l/igzip_lib.h>

#include "../sim/fs_alloc.h"

#ifndef FS_ISAL_SONAME
#define FS_ISAL_SONAME "libisal.so.2"
#endif

/* The two igzip calls, resolved once per process.  Not run state: the
 * library's entry points, the same for every run, written once under
 * pthread_once and only read after. */
static struct {
    void (*deflate_init)(struct isal_zstream *);
    int (*deflate)(struct isal_zstream *);
    char why[512];   /* empty when both resolved */
} isal;
static pthread_once_t isal_once = PTHREAD_ONCE_INIT;

static void isal_resolve(void)
{
    void *h = dlopen(FS_ISAL_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        snprintf(isal.why, sizeof isal.why, "%s", e ? e : "dlopen failed");
        return;
    }
    /* through a union: ISO C has no conversion from void * to a function
     * pointer, POSIX guarantees the representation */
    union {
        void *p;
        void (*init)(struct isal_zstream *);
        int (*run)(struct isal_zstream *);
    } a, b;
    a.p = dlsym(h, "isal_deflate_init");
    b.p = dlsym(h, "isal_deflate");
    if (!a.p || !b.p) {
        snprintf(isal.why, sizeof isal.why, "%s has no %s", FS_ISAL_SONAME,
                 !a.p ? "isal_deflate_init" : "isal_deflate");
        dlclose(h);
        return;
    }
    isal.deflate_init = a.init;
    isal.deflate = b.run;   /* the handle stays open for the process */
}

int fs_rs_isal_load(const char *file, fs_error_t *err)
{
    pthread_once(&isal_once, isal_resolve);
    if (isal.deflate)
        return 0;
    return fs_error_set(err, FS_EINVAL,
                        "%s: cannot write results: ISA-L, the compressor, cannot be loaded (%s); "
                        "install it (Debian: libisal2) or run with --no-output",
                        file, isal.why);
}

int fs_rs_host_is_le(void)
{
    const uint16_t one = 1;
    unsigned char b;
    memcpy(&b, &one, 1);
    return b == 1;
}

void fs_rs_free_chunks(zchunk_t *z, size_t n)
{
    for (size_t i = 0; z && i < n; i++)
        fs_free(z[i].data);
    fs_free(z);
}

void fs_rs_layout_of(const table_spec_t *t, layout_t *lay)
{
    lay->fsize = 0;
    lay->ncols = 0;
    for (size_t i = 0; i < t->ncols; i++) {
        size_t moff = t->stroff && t->cols[i].kind == K_STR ? t->stroff[i] : t->cols[i].off;
        size_t sz = fs_rs_kind_mem_size(t->cols[i].kind, fs_rs_col_strsz(t, i));
        if (lay->fsize + sz > MAX_ROW_BYTES || moff + sz > UINT16_MAX || i >= MAX_COLS) {
            lay->fsize = 0;   /* no table is: fs_rs_build_chunk refuses it */
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
 * Why blocked: element by element, every store lands n bytes (a chunk's
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
 * (fs_rs_build_chunks' caller checks), so byte k of a word is its k-th byte in
 * memory. */
#define SHUF_BLOCK 64

/* One masked swap of the 8 x 8 byte transpose: the bits of m in b's lanes move up by
 * sh into a's, a's bits of m << sh down into b's. */
#define TSWAP(a, b, sh, m)                           \
    do {                                             \
        uint64_t t_ = (((a) >> (sh)) ^ (b)) & (m);   \
        (a) ^= t_ << (sh);                           \
        (b) ^= t_;                                   \
    } while (0)


static inline uint64_t load_w(const unsigned char *e, size_t w)
{
    if (w == 8) {
        uint64_t v;
        memcpy(&v, e, 8);
        return v;
    }
    uint32_t v;
    memcpy(&v, e, 4);
    return v;
}

/* Eight rows' values of one column of W bytes (4 or 8) at s + mo, row
 * stride row_size, as the W byte planes of their packed, shuffled bytes:
 * plane k gets 8 bytes at dst + k * n.  W is a constant at every call, so
 * that the loads, the stores and the transpose unroll into straight code
 * (inlined by force: left to itself the compiler called it with w a variable)
 * (looping on the column's size per row and in the transpose cost 861
 * instructions per 160-byte /jobs row at -O2). */
static inline __attribute__((always_inline)) void
group8(const unsigned char *s, size_t row_size, size_t mo, unsigned char *dst, size_t n, size_t w)
{
    const unsigned char *e = s + mo;
    uint64_t x[8] = {load_w(e, w),                load_w(e + row_size, w),
                     load_w(e + 2 * row_size, w), load_w(e + 3 * row_size, w),
                     load_w(e + 4 * row_size, w), load_w(e + 5 * row_size, w),
                     load_w(e + 6 * row_size, w), load_w(e + 7 * row_size, w)};
    /* the transpose, written out (at -O2 the compiler kept its three
     * rounds' loops, or a call) */
    const uint64_t m32 = 0x00000000FFFFFFFFull, m16 = 0x0000FFFF0000FFFFull,
                   m8 = 0x00FF00FF00FF00FFull;
    TSWAP(x[0], x[4], 32, m32);
    TSWAP(x[1], x[5], 32, m32);
    TSWAP(x[2], x[6], 32, m32);
    TSWAP(x[3], x[7], 32, m32);
    TSWAP(x[0], x[2], 16, m16);
    TSWAP(x[1], x[3], 16, m16);
    TSWAP(x[4], x[6], 16, m16);
    TSWAP(x[5], x[7], 16, m16);
    TSWAP(x[0], x[1], 8, m8);
    TSWAP(x[2], x[3], 8, m8);
    TSWAP(x[4], x[5], 8, m8);
    TSWAP(x[6], x[7], 8, m8);
    memcpy(dst, &x[0], 8);
    memcpy(dst + n, &x[1], 8);
    memcpy(dst + 2 * n, &x[2], 8);
    memcpy(dst + 3 * n, &x[3], 8);
    if (w == 8) {
        memcpy(dst + 4 * n, &x[4], 8);
        memcpy(dst + 5 * n, &x[5], 8);
        memcpy(dst + 6 * n, &x[6], 8);
        memcpy(dst + 7 * n, &x[7], 8);
    }
}
#undef TSWAP

/* Whether the W-byte column at s + mo holds the same value in all of a
 * whole block's SHUF_BLOCK rows (stride row_size): compared 8 rows at a
 * time, so that a column that varies stops after its first 8 rows. */
static inline __attribute__((always_inline)) int
block_const(const unsigned char *s, size_t row_size, size_t mo, size_t w)
{
    const unsigned char *e = s + mo;
    uint64_t v = load_w(e, w);
    for (size_t i = 0; i < SHUF_BLOCK; i += 8) {
        const unsigned char *r = e + i * row_size;
        uint64_t d = (load_w(r, w) ^ v) | (load_w(r + row_size, w) ^ v) |
                     (load_w(r + 2 * row_size, w) ^ v) | (load_w(r + 3 * row_size, w) ^ v) |
                     (load_w(r + 4 * row_size, w) ^ v) | (load_w(r + 5 * row_size, w) ^ v) |
                     (load_w(r + 6 * row_size, w) ^ v) | (load_w(r + 7 * row_size, w) ^ v);
        if (d)
            return 0;
    }
    return 1;
}

/* A whole block of a column that holds one value v of W bytes: byte plane k
 * is SHUF_BLOCK copies of v's byte k (what the transpose gives for equal
 * rows), stored as words. */
static inline __attribute__((always_inline)) void
block_fill(uint64_t v, unsigned char *d0, size_t n, size_t w)
{
    for (size_t k = 0; k < w; k++) {
        uint64_t pat = ((v >> (8 * k)) & 0xff) * UINT64_C(0x0101010101010101);
        unsigned char *d = d0 + k * n;
        for (size_t j = 0; j < SHUF_BLOCK; j += 8)
            memcpy(d + j, &pat, 8);
    }
}

/* Why the constant blocks: in most runs half of /jobs' columns hold one
 * value for long stretches (no restarts, no checkpoints, no preemption,
 * ETTR 1, one tenant), and filling their planes costs a scan instead of
 * eight transposes: 450 -> 241 instructions per /jobs row of the 10^5-job benchmark
 * (docs/performance.md). */
static void pack_shuffle(const unsigned char *src, size_t row_size, const layout_t *lay,
                         unsigned char *dst, size_t n, size_t used)
{
    for (size_t i0 = 0; i0 < used; i0 += SHUF_BLOCK) {
        size_t b = used - i0 < SHUF_BLOCK ? used - i0 : SHUF_BLOCK;
        size_t b8 = b & ~(size_t)7;
        const unsigned char *s = src + i0 * row_size;
        for (size_t c = 0; c < lay->ncols; c++) {
            const struct lcol *col = &lay->col[c];
            unsigned char *d0 = dst + (size_t)col->fo * n + i0;
            size_t done = 0;
            if (b == SHUF_BLOCK && col->size == 8 && block_const(s, row_size, col->mo, 8)) {
                block_fill(load_w(s + col->mo, 8), d0, n, 8);
                continue;
            }
            if (b == SHUF_BLOCK && col->size == 4 && block_const(s, row_size, col->mo, 4)) {
                block_fill(load_w(s + col->mo, 4), d0, n, 4);
                continue;
            }
            if (col->size == 8) {
                for (; done < b8; done += 8)
                    group8(s + done * row_size, row_size, col->mo, d0 + done, n, 8);
            } else if (col->size == 4) {
                for (; done < b8; done += 8)
                    group8(s + done * row_size, row_size, col->mo, d0 + done, n, 4);
            }
            for (size_t k = 0; k < col->size; k++) {   /* the rest byte by byte */
                unsigned char *d = d0 + k * n;
                const unsigned char *e = s + col->mo + k;
                for (size_t i = done; i < b; i++)
                    d[i] = e[i * row_size];
            }
        }
    }
}

void fs_rs_zctx_release(zctx_t *x)
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
    if (!isal.deflate)   /* fs_rs_build_chunk loaded it */
        return 0;
    isal.deflate_init(st);
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
    if (isal.deflate(st) != COMP_OK || st->internal_state.state != ZSTATE_END || st->avail_in)
        return 0;
    return st->total_out;
}

/* One chunk of `rows` rows from the cnt rows at src (cnt <= rows; the rest
 * is the edge chunk's zero padding): packed, shuffled and compressed into
 * z->data (fs_malloc'd, exactly z->size bytes).  No HDF5 call. */
int fs_rs_build_chunk(zctx_t *x, const layout_t *lay, size_t rows, const void *src,
                       size_t row_size, size_t cnt, zchunk_t *z, const char *file,
                       const char *table, fs_error_t *err)
{
    size_t nbytes = rows * lay->fsize;
    int lrc = fs_rs_isal_load(file, err);
    if (lrc)
        return lrc;
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
int fs_rs_build_chunks(zctx_t *x, const table_spec_t *t, size_t row_size, size_t n,
                        const void *buf, zchunk_t **out, size_t *n_out, const char *file,
                        fs_error_t *err)
{
    layout_t lay;
    fs_rs_layout_of(t, &lay);
    size_t rows = (size_t)t->chunk, nch = (n + rows - 1) / rows;
    zchunk_t *z = fs_calloc(nch, sizeof *z);
    if (!z)
        return fs_error_set(err, FS_ENOMEM, "%s: out of memory compressing /%s", file, t->name);
    for (size_t k = 0; k < nch; k++) {
        size_t first = k * rows, cnt = n - first < rows ? n - first : rows;
        int rc = fs_rs_build_chunk(x, &lay, rows, (const char *)buf + first * row_size, row_size, cnt,
                             &z[k], file, t->name, err);
        if (rc) {
            fs_rs_free_chunks(z, nch);
            return rc;
        }
    }
    *out = z;
    *n_out = nch;
    return 0;
}

/* Under the lock: grows the table to written + n rows and writes the
 * chunks that fs_rs_build_chunks made. */
int fs_rs_write_chunks(hid_t fid, h5call_t *c, const table_spec_t *t, hsize_t written, size_t n,
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

