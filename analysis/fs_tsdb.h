/*
 * fs_tsdb: Prometheus TSDB blocks written directly (`fleetsim metrics
 * --tsdb DIR`; docs/observability.md "TSDB blocks").
 *
 * The on-disk format is Prometheus' documented one (tsdb/docs/format in
 * the Prometheus repository): per block a directory named by a ULID with
 *   chunks/000001...  segment files (magic 0x85BD40DD, version 1) of XOR
 *                     (Gorilla) chunks of at most FS_TSDB_CHUNK_SAMPLES
 *                     samples, each with its CRC32-Castagnoli;
 *   index             (magic 0xBAAAD700, version 2) symbol table, series
 *                     (16-byte aligned, sorted by label set), label indices
 *                     and their offset table, postings (the all-series list
 *                     first) and the postings offset table, TOC;
 *   tombstones        empty (magic 0x0130BA30, version 1);
 *   meta.json         ULID, minTime, maxTime (exclusive), stats, compaction
 *                     level 1.
 * Blocks cover the aligned windows [k x range, (k + 1) x range) of the
 * block range (ms; 2 h x 3^n as Prometheus' compactor plans them) that
 * hold samples.
 *
 * Writing: fs_tsdb_open makes a staging directory DIR/fleetsim-PID.tmp-
 * for-creation (Prometheus removes such directories at start-up); series
 * are added in any order, their chunks spooled there; fs_tsdb_close sorts
 * the series, writes every block in the staging directory and renames the
 * blocks into DIR.  fs_tsdb_abort (and a failed close) removes everything
 * written, DIR too when open created it.
 */
#ifndef FS_TSDB_H
#define FS_TSDB_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "../sim/fs_error.h"

#define FS_TSDB_CHUNK_SAMPLES 120   /* as Prometheus' head cuts chunks */
#define FS_TSDB_STALE_NAN 0x7ff0000000000002ull    /* the staleness marker's bits */
#define FS_TSDB_RANGE_2H ((int64_t)2 * 3600 * 1000)

typedef struct fs_tsdb_label {
    const char *name, *value;
} fs_tsdb_label_t;

typedef struct fs_tsdb_stats {
    uint64_t blocks, series, samples, chunks, bytes;
} fs_tsdb_stats_t;

typedef struct fs_tsdb fs_tsdb_t;

/* The staleness marker as a double. */
double fs_tsdb_stale(void);
int fs_tsdb_is_stale(double v);

/* CRC32 with the Castagnoli polynomial (CRC-32C), continuing crc (0 first). */
uint32_t fs_tsdb_crc32c(uint32_t crc, const void *p, size_t n);

/* One XOR chunk's data (without the segment's length, encoding byte and
 * CRC) of n samples (1 .. 65535; t increasing) into out (cap bytes).
 * Returns the bytes written, 0 when out is too small or n is out of range. */
size_t fs_tsdb_xor_encode(const int64_t *t, const double *v, size_t n, uint8_t *out, size_t cap);
/* Bytes a chunk of n samples needs at most. */
size_t fs_tsdb_xor_bound(size_t n);
/* Decodes a chunk's data into t, v (cap samples); *n its sample count.
 * 0, or FS_EINVAL (truncated, malformed, more than cap samples). */
int fs_tsdb_xor_decode(const uint8_t *p, size_t len, int64_t *t, double *v, size_t cap,
                       size_t *n);

/* A 26-character ULID (Crockford base32) of ms and 80 bits of entropy. */
void fs_tsdb_ulid(uint64_t ms, const uint8_t entropy[10], char out[27]);

/* Starts writing blocks of range_ms (a multiple of 2 h) into dir, which
 * must be absent, empty, or hold only Prometheus' own entries (block
 * directories: a ULID with meta.json; wal, chunks_head, lock; staging
 * directories, those of fleetsim processes that no longer exist removed):
 * otherwise FS_EUSAGE naming the first other entry. */
int fs_tsdb_open(fs_tsdb_t **w, const char *dir, int64_t range_ms, fs_error_t *err);

/* Adds a series: nl labels (names unique, values non-empty; any order),
 * n samples at increasing ms timestamps t (values may be the staleness
 * marker).  A label set added twice is refused (FS_EINVAL). */
int fs_tsdb_add(fs_tsdb_t *w, const fs_tsdb_label_t *lab, size_t nl, const int64_t *t,
                const double *v, size_t n, fs_error_t *err);

/* A flag that stops fs_tsdb_close between series when it turns nonzero (a
 * signal's number: FS_EINTR, everything written removed). */
void fs_tsdb_set_interrupt(fs_tsdb_t *w, const volatile sig_atomic_t *flag);

/* Bytes spooled so far (chunk data). */
uint64_t fs_tsdb_spooled(const fs_tsdb_t *w);

/* Writes the blocks and moves them into dir; frees w (also on failure,
 * after removing what it wrote). */
int fs_tsdb_close(fs_tsdb_t *w, fs_tsdb_stats_t *st, fs_error_t *err);

/* Removes everything written and frees w (NULL: nothing). */
void fs_tsdb_abort(fs_tsdb_t *w);

/* The code of an output error (errno e): a full disk or quota (ENOSPC,
 * EDQUOT) is FS_EUSAGE (exit 2, as an export refused for its expected size
 * or the free space), any other FS_EIO. */
int fs_tsdb_io_code(int e);

#endif
