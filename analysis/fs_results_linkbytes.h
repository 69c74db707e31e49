/*
 * fs_results_linkbytes: the fabric's /link_bytes table (cluster.fabric;
 * docs/results.md "/link_bytes"): every link's bytes carried from time 0,
 * at the /timeline samples where they changed.  What `fleetsim metrics`
 * turns into the links' byte counters (analysis/fs_metrics_links.c).
 */
#ifndef FS_RESULTS_LINKBYTES_H
#define FS_RESULTS_LINKBYTES_H

#include <stddef.h>

#include "fs_results.h"

/* Appends n rows (in time order, after those of earlier calls; n may be
 * 0) to /link_bytes, made at the first call.  0 or an FS_E* code (err
 * names the file). */
int fs_results_add_link_bytes(fs_results_t *r, const fs_link_bytes_row_t *rows, size_t n,
                              fs_error_t *err);

#endif
