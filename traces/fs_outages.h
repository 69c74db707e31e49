/*
 * fs_outages: a file of capacity outages -- planned maintenance, drains,
 * reservations, or stretches inferred from a log's recorded utilization
 * (`fleetsim trace outages`) -- read for cluster.outages (docs/traces.md
 * "Outage files").
 *
 * CSV, '#' comment lines and blank lines ignored, a header line first:
 *
 *   start,end,nodes[,cause]
 *   0,43200,all,maintenance
 *   86400,90000,0-99
 *   172800,180000,theta,drain
 *
 * start, end: seconds of the run (the time frame of the results: the trace's
 * first submission is 0), start >= 0, end > start.  nodes: `all`, a pool's
 * name, a node index `I` or an inclusive range `I-J` (nodes numbered from 0
 * in pool order).  cause: free text (at most 31 bytes), default "outage".
 * The reader checks the syntax; which nodes exist is the model's check
 * (fs_outages_resolve), which also refuses two outages of one node that
 * overlap in time.  Every error names FILE:LINE:COL.
 *
 * Owns: an fs_outages_t owns its rows (fs_outages_free).
 */
#ifndef FS_OUTAGES_H
#define FS_OUTAGES_H

#include <stddef.h>
#include <stdint.h>

#include "../sim/fs_error.h"
#include "../sim/fs_time.h"

enum fs_outage_nodes { FS_OUT_ALL = 0, FS_OUT_POOL = 1, FS_OUT_RANGE = 2 };
#define FS_OUTAGE_NAME_MAX 64
#define FS_OUTAGE_CAUSE_MAX 32

typedef struct fs_outage {
    fs_time_t start, end;       /* us */
    int kind;                   /* enum fs_outage_nodes */
    uint32_t lo, hi;            /* FS_OUT_RANGE: nodes [lo, hi]; after fs_outages_resolve,
                                   every kind: [lo, hi) */
    char pool[FS_OUTAGE_NAME_MAX];   /* FS_OUT_POOL */
    char cause[FS_OUTAGE_CAUSE_MAX];
    uint32_t line, col_nodes;   /* where the row and its nodes field are */
} fs_outage_t;

typedef struct fs_outages {
    char *path;
    fs_outage_t *rows;
    size_t n;
} fs_outages_t;

/* Reads path.  0, FS_EINVAL (FILE:LINE:COL: what was expected), FS_EIO,
 * FS_ENOMEM; on failure *out is empty. */
int fs_outages_read(const char *path, fs_outages_t *out, fs_error_t *err);
void fs_outages_free(fs_outages_t *o);

/* Resolves every row to nodes [lo, hi) of a cluster of n_nodes nodes whose
 * pools are named names[0..n_pools) with nodes [first[p], first[p] + count[p]);
 * FS_EINVAL for a node or pool that does not exist, or two rows sharing a
 * node whose times overlap (FILE:LINE:COL, naming the other line). */
int fs_outages_resolve(fs_outages_t *o, uint32_t n_nodes, const char *const *names,
                       const uint32_t *first, const uint32_t *count, size_t n_pools,
                       fs_error_t *err);

#endif
