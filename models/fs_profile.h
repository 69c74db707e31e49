/*
 * fs_profile: the free-GPU profile of conservative backfill (fs_sched.c).
 *
 * A step function of time: steps (t_i, f_i) with t_0 < t_1 < ...; f_i GPUs
 * are free from t_i to t_{i+1} (the last step lasts forever; before t_0 the
 * profile reads 0).  A backfill pass resets it to (now, free now), appends
 * each running job's GPUs at its planned end (sorted), then plans the queue
 * in order: earliest() finds a start for a job, take() books it.
 *
 * Two implementations with exactly the same answers (tests/test_profile.c
 * checks it, and tests/test_sched_fast.c through the scheduler's fast and
 * slow paths):
 *   - flat: two sorted arrays, the reference (the scheduler's slow path).
 *     take: two binary searches, memmove insertions, an elementwise
 *     subtract, O(steps); earliest: a linear scan, O(steps).
 *   - blocked (fast path): an unrolled list of blocks of up to FS_PROF_BLK
 *     steps (their times, and their free counts less the block's lazy
 *     add), and a directory of the blocks in time order with each block's
 *     first and last times, lazy add and bounds of its counts (a lower and
 *     an upper bound: exact after a split, widened only where an update
 *     must), so that a walk over whole blocks reads only the directory.
 *     take: a binary search on the directory then in the block, a memmove
 *     of at most one block (a full block splits in two), elementwise on the
 *     two end blocks and the lazy add on the whole blocks between:
 *     O(log steps + block + blocks spanned).  earliest: skips blocks whose
 *     upper bound is below g while looking for a start, and blocks whose
 *     lower bound is at least g while checking the run [t, t + d); dip:
 *     skips blocks whose lower bound is at least g.
 *     The build fills blocks to three quarters.
 *
 * Ownership: the profile owns its arrays; an all-zero fs_profile_t is an
 * empty profile (no init needed); fs_prof_release frees everything.
 * Allocation failures return FS_ENOMEM and leave the profile usable for
 * release (its contents unspecified until the next reset).
 */
#ifndef FS_PROFILE_H
#define FS_PROFILE_H

#include <stddef.h>
#include <stdint.h>

#include "../sim/fs_time.h"

/* Steps per block of the blocked profile (chosen by measurement,
 * docs/performance.md). */
#ifndef FS_PROF_BLK
#define FS_PROF_BLK 32
#endif

typedef struct fs_prof_blk fs_prof_blk_t;     /* a block's steps (fs_profile.c) */
typedef struct fs_prof_dir fs_prof_dir_t;     /* its directory entry (fs_profile.c) */

typedef struct fs_profile {
    int blocked;            /* which implementation the last reset chose */
    /* flat */
    fs_time_t *pt;          /* step times, increasing */
    int64_t *pf;            /* free GPUs from pt[i] to pt[i + 1] */
    size_t np, cap_pt, cap_pf;
    /* blocked */
    fs_prof_blk_t *pool;    /* blocks' steps (reused from reset to reset) */
    size_t used, cap_pool;  /* blocks in use; allocated */
    fs_prof_dir_t *dir;     /* dir[j]: the j-th block in time order: its first and last
                               times, lazy add, bounds, pool index and size */
    size_t nb, cap_dir;
    size_t n;               /* steps (blocked) */
} fs_profile_t;

/* Empties the profile to one step (now, free_now); blocked: which
 * implementation to use until the next reset. */
int fs_prof_reset(fs_profile_t *p, int blocked, fs_time_t now, int64_t free_now);

/* Adds g GPUs from t on: t must be at least the last step's time; equal
 * times are summed into that step, else a step t is appended with the
 * last step's count + g.  The build from running jobs' planned ends. */
int fs_prof_append(fs_profile_t *p, fs_time_t t, int64_t g);

/* fs_prof_append of n (time, GPUs) pairs eg[2i], eg[2i + 1] in turn. */
int fs_prof_append_n(fs_profile_t *p, const fs_time_t *eg, size_t n);

/* Takes g GPUs (g < 0: gives them back) over [t, t + d), d >= 0; t + d
 * saturates at FS_TIME_NEVER.  Steps t and t + d are inserted if absent
 * (with the count of the step before, 0 before the first). */
int fs_prof_take(fs_profile_t *p, fs_time_t t, fs_time_t d, int64_t g);

/* The first step time t such that every step in [t, t + d) has at least g
 * free (the last step counting as lasting forever); FS_TIME_NEVER if none. */
fs_time_t fs_prof_earliest(const fs_profile_t *p, int64_t g, fs_time_t d);

/* Whether some step before `until` has fewer than g free (Slurm mode's
 * early end of a pass). */
int fs_prof_dip(const fs_profile_t *p, int64_t g, fs_time_t until);

/* The time of the first step with fewer than g free, FS_TIME_NEVER if
 * none: g GPUs are free over [t_0, reach), so a job of g GPUs and planned
 * time d fits at t_0 exactly when t_0 + d <= reach (fs_prof_dip(g, t_0 + d)
 * is then false).  EASY's pass past its reservation (fs_sched_cons.c). */
fs_time_t fs_prof_reach(const fs_profile_t *p, int64_t g);

/* The number of steps; with t and f non-NULL, also copies them out
 * (tests and instrumentation). */
size_t fs_prof_steps(const fs_profile_t *p, fs_time_t *t, int64_t *f);

void fs_prof_release(fs_profile_t *p);

#endif
