/*
 * fs_compare: the /summary metrics of two results side by side, their
 * differences and whether those are significant (`fleetsim compare`).
 *
 * A side is either
 *   - one run file (docs/results.md): its /summary row, one replication; or
 *   - one point of a sweep index file (docs/sweeps.md): the rows of /runs
 *     with that point and a finished status, one per replication, each with
 *     every /summary field.
 * Two run files give the difference only: one run each leaves no variance
 * to build an interval from.  Two sweep sides are paired by replication
 * index: replication r of both sides ran with the same random streams
 * (common random numbers), so the paired Student-t interval of the
 * per-replication differences B - A (fs_ci_paired) is the interval, and a
 * difference is "significant" when that interval excludes 0.  A run file
 * against a sweep side is refused (FS_EINVAL): compare a run file of the
 * sweep instead.
 *
 * Owns: each side owns its strings and value matrix (create/destroy); a
 * comparison owns its rows (release) and points into side A's metric names,
 * so side A must outlive it.
 */
#ifndef FS_COMPARE_H
#define FS_COMPARE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "../sim/fs_error.h"
#include "fs_ci.h"

typedef struct fs_compare_side {
    char *path;          /* the file as given */
    int is_index;        /* 1: a point of a sweep index; 0: a run file */
    long point;          /* the point (sweep), -1 for a run file */
    char *label;         /* "a.h5" or "index.h5 point 1 (rate=40/h, policy=fifo)" */
    size_t n_metrics;
    char **metrics;      /* numeric /summary fields, in file order */
    size_t n_reps;
    uint64_t *reps;      /* replication indexes, ascending */
    char **files;        /* run file of each replication (resolved against the
                            index's folder); NULL entries when unknown */
    double *values;      /* values[r * n_metrics + m] */
    double seed;         /* root attribute "seed" (NaN when absent) */
} fs_compare_side_t;

/* Number of points of a sweep index (rows of /points), or 0 and FS_EINVAL
 * for a file that is not a sweep index. */
int fs_compare_points(const char *path, size_t *n, fs_error_t *err);

/* 1 if path is a sweep index (has /runs), 0 if a run file (has /summary);
 * FS_EINVAL if neither, FS_EIO if unreadable. */
int fs_compare_is_index(const char *path, int *is_index, fs_error_t *err);

/* Loads a side.  point: for a sweep index, the point (-1: the only point,
 * FS_EINVAL when there are several); for a run file it must be -1. */
int fs_compare_side_load(const char *path, long point, fs_compare_side_t **out, fs_error_t *err);
void fs_compare_side_destroy(fs_compare_side_t *s);

/* Value of metric name in replication row r (NaN if no such metric). */
double fs_compare_side_value(const fs_compare_side_t *s, size_t r, const char *name);

typedef struct fs_compare_row {
    const char *metric;  /* points into side A's names */
    double a, b;         /* the values (run files) or means over the pairs */
    double diff;         /* b - a */
    double rel;          /* diff / |a|; NaN when a is 0 or NaN */
    fs_ci_t ci;          /* paired interval of b - a; ci.n = 0 and NaN when none */
    int significant;     /* 1 interval excludes 0, 0 it does not, -1 undefined (also
                            when constant: a zero-width interval says nothing) */
    int constant;        /* paired: B - A is the same in every pair (to rounding),
                            e.g. the replications of a deterministic trace replay
                            are identical; no interval, no significance */
} fs_compare_row_t;

typedef struct fs_compare {
    int paired;          /* 1: paired intervals over replications; 0: difference only */
    size_t n_pairs;      /* replications present on both sides (paired) */
    double level;        /* e.g. 0.95 */
    int seeds_differ;    /* the sides' seed attributes differ: not common random numbers */
    int identical_reps;  /* paired, 2+ pairs, and every replication of each side has the
                            same value of every metric: one replication is the answer */
    size_t n_rows;
    fs_compare_row_t *rows;   /* one per metric both sides have, in A's order */
} fs_compare_t;

/* Compares b against a (differences are b - a).  FS_EINVAL when one side
 * is a run file and the other a sweep point, or when the sweep sides share
 * no replication; FS_ENOMEM. */
int fs_compare_sides(const fs_compare_side_t *a, const fs_compare_side_t *b, double level,
                     fs_compare_t *out, fs_error_t *err);
void fs_compare_release(fs_compare_t *c);

/* 1 when metric m (by name) has the same value in every replication of s. */
int fs_compare_side_constant(const fs_compare_side_t *s, const char *metric);

/* Human table, in human units (analysis/fs_fmt.h): metric, A, B, B - A,
 * relative, and (paired) the interval and "significant at 95%" columns; a
 * note says why there is no interval for two run files, or for identical
 * replications. */
void fs_compare_print(FILE *out, const fs_compare_side_t *a, const fs_compare_side_t *b,
                      const fs_compare_t *c);

/* CSV: a header line (when header is nonzero), then one line per metric:
 * a,b,point_a,point_b,metric,value_a,value_b,diff,rel_diff,n,level,ci_lo,
 * ci_hi,significant (empty fields where undefined; significant 1 or 0). */
void fs_compare_print_csv(FILE *out, const fs_compare_side_t *a, const fs_compare_side_t *b,
                          const fs_compare_t *c, int header);

#endif
