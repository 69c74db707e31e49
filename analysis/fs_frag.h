/*
 * fs_frag: the GPU fragmentation experiment of Weng et al., "Beware of
 * Fragmentation: Scheduling GPU-Sharing Workloads with Fragmentation
 * Gradient Descent" (USENIX ATC'23, section 6), run by `fleetsim frag`
 * (sim/cli/cmd_frag.c parses its options and prints the table).
 *
 * Pods never leave: pods of the scenario's trace are drawn uniformly with
 * replacement (stream FS_RNG_TRACE keyed by (seed, replication r)), or
 * (draw_list) the whole list plus uniform draws, shuffled, as the ATC'23
 * simulator tunes its workload, and placed one at a time on the scenario's
 * cluster (GPUs, and CPU and memory where pools model them; CPU-only pods
 * hold CPU and add no GPU demand) until the GPUs requested reach
 * demand x capacity; a pod that does not fit is left out (counted).  Each
 * placement sees the same pods in the same order (common random numbers).
 * The allocation ratio (allocated milli-GPUs / capacity) is recorded each
 * time the demand passes a multiple of FS_FRAG_STEP of capacity.
 * docs/validation.md has the openb results; analysis/frag_openb.sh makes
 * the table.
 *
 * Ownership: the result owns its arrays (fs_frag_result_release); the
 * config and the options are only read.  The (placement, seed) runs go on
 * threads, each with its own cluster, placer and random stream; the CSV
 * rows are written in task order, so the file does not depend on the
 * number of threads.
 */
#ifndef FS_FRAG_H
#define FS_FRAG_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "../models/fs_config.h"
#include "../sim/fs_error.h"

#define FS_FRAG_STEP 0.05   /* demand step, a share of the capacity */

typedef struct fs_frag_opts {
    const int *kinds;           /* placements to compare (FS_PLACE_*) */
    const char *const *names;   /* their names, for the CSV and --pools lines */
    size_t n_kinds;
    uint64_t seeds;             /* replications per placement (>= 1) */
    double demand;              /* up to demand x capacity (>= FS_FRAG_STEP) */
    int learned;                /* FGD learns the shapes as pods come (else given: the list's) */
    int draw_list;              /* the list plus uniform draws, shuffled (else uniform draws) */
    double typical;             /* (0, 1]: the shapes given to FGD cover this share of pods */
    int show_pools;             /* per-pool leftovers on stderr (runs on one thread) */
    unsigned threads;           /* 0: one per CPU */
    FILE *csv;                  /* a row per placement, seed and demand step (NULL: none) */
    const char *csv_name;       /* for messages */
} fs_frag_opts_t;

typedef struct fs_frag_result {
    size_t n_pods;              /* pods of the trace */
    uint64_t gpus;              /* GPUs of the cluster */
    uint32_t n_pools;
    size_t n_steps;             /* demand steps recorded */
    int reached_100;            /* demand >= 1: the ratio at 100% exists */
    /* per placement (n_kinds): mean and sd over the seeds of the allocation
     * ratio at 100% of capacity asked (NaN when not reached) and at the last
     * step, and the mean number of pods that did not fit */
    double *at100_mean, *at100_sd, *atend_mean, *atend_sd, *failed_mean;
} fs_frag_result_t;

/* Runs the experiment on cfg's trace and cluster.  0, FS_EINVAL (the
 * workload is not a trace, the trace is bad or empty: message names it),
 * FS_ENOMEM, FS_EIO (writing the CSV), or a run's error. */
int fs_frag_run(const fs_config_t *cfg, const fs_frag_opts_t *o, fs_frag_result_t *res,
                fs_error_t *err);
void fs_frag_result_release(fs_frag_result_t *res);

#endif
