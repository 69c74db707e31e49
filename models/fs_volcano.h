/*
 * fs_volcano: the Volcano scheduler as a policy (fs_policy_volcano,
 * scheduler.queue: volcano; docs/policies.md "Volcano").
 *
 * A session (every scheduler.volcano.period, or at every change) runs the
 * actions allocate [, reclaim] [, preempt] with the plugins gang, priority,
 * drf, proportion; placement is the placer's (binpack = best_fit is the
 * Volcano default scoring).  Jobs are single gangs: all their GPUs start
 * together or not at all (minAvailable = all tasks).
 *
 * Data structures: per queue a list of classes, a class being the jobs of
 * one (tenant, shape) kept in a binary heap by (priority desc, admission);
 * all jobs of a class fit or not together, so only class heads are tried.
 * Queues are taken in order of share (allocated / deserved) from a binary
 * heap rebuilt per action.  Deserved shares are recomputed at a session
 * when demand or capacity changed: O(Q log Q) water-filling (or Volcano's
 * own iteration, O(Q^2), when a queue has a guarantee).  Per started job:
 * O(classes of its queue + log Q).
 *
 * This header also exposes the share computation and instrumentation, for
 * tests.
 */
#ifndef FS_VOLCANO_H
#define FS_VOLCANO_H

#include <stddef.h>
#include <stdint.h>

/* One queue's input to the proportion plugin, in GPUs. */
typedef struct fs_volcano_share_in {
    double weight;          /* > 0 */
    double request;         /* allocated + waiting; 0: the queue has no jobs (deserved 0) */
    double capability;      /* hard cap; <= 0: none */
    double guarantee;       /* reserved minimum; 0: none */
} fs_volcano_share_in_t;

typedef struct fs_volcano_sortkey {
    double key;
    size_t i;
} fs_volcano_sortkey_t;

/* Volcano's proportion loop as written in the plugin (rounds of
 * remaining x weight / total weight over unmet queues, clamped to the real
 * capability and the request, then raised to the guarantee).  The
 * reference; O(n^2) worst case.  total: cluster GPUs.  out: n deserved;
 * scratch: n entries. */
void fs_volcano_deserved_ref(const fs_volcano_share_in_t *q, size_t n, double total,
                             double *out, fs_volcano_sortkey_t *scratch);

/* The same shares in O(n log n) by sorting the queues by limit / weight
 * (weighted max-min water-filling), equal to the reference when no queue
 * has a guarantee (with guarantees it calls the reference).  scratch: n
 * entries.  Returns 0. */
int fs_volcano_deserved(const fs_volcano_share_in_t *q, size_t n, double total, double *out,
                        fs_volcano_sortkey_t *scratch);

/* Instrumentation of a model whose policy is fs_policy_volcano (state =
 * fs_model_policy_state). */
typedef struct fs_volcano_qstat {
    const char *name;
    double deserved;        /* GPUs, at the last session */
    double allocated;       /* GPUs held now */
    double request;         /* GPUs held or waiting */
    double peak;            /* most GPUs ever held */
    double capability;      /* 0: none */
} fs_volcano_qstat_t;

size_t fs_volcano_queue_count(const void *state);
void fs_volcano_queue_stat(const void *state, size_t q, fs_volcano_qstat_t *out);
/* Jobs evicted by reclaim, by preempt. */
uint64_t fs_volcano_reclaimed(const void *state);
uint64_t fs_volcano_preempted(const void *state);

#endif
