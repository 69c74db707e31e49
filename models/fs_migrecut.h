/*
 * fs_migrecut: dynamic MIG re-partitioning (cluster.pools[].mig_repartition;
 * docs/mig.md "Re-partitioning in the run").
 *
 * After every scheduling pass that leaves jobs queued (the model's
 * after_pass hook), the queued MIG pods that cannot start now are taken in
 * slot order.  A pod asking k instances of profile p, for the first of its
 * pools that re-partitions and whose re-cut node would hold k of p:
 *   - is covered by a node of that pool already being re-cut for p whose
 *     instances are not yet promised to other pods (>= k left), or else
 *   - the lowest node of the pool that is in service, holds no instance
 *     and offers fewer than k of p is re-cut: it is cordoned
 *     (fs_model_node_down, drain: nothing runs there), out of service for
 *     reconfigure + gpu_ready, and comes back (a module event at repair
 *     priority) with every GPU cut by fs_mig_recut(keep = 0) for p
 *     (mig-parted's all-<profile>).  The layout changes at the decision:
 *     the reset destroys the old instances and no pod holds either.
 * With mig_repartition.drain wait or evict (docs/mig.md "Draining a busy
 * node"), a pod that neither finds a node being re-cut nor an idle one is
 *   - covered by a node of the pool draining for p with >= k unpromised
 *     future instances, or else
 *   - when no node in service offers k of p in its layout, the busy node
 *     whose drain costs least (wait: the earliest planned end of its last
 *     pod; evict: the least GPU-s its pods would lose) is cordoned
 *     (fs_model_node_cordon): nothing new starts there, its pods run on;
 *     its re-cut phase starts when its last pod ends, or with evict at
 *     cordon + drain_timeout after its pods were preempted
 *     (fs_model_evict_node; a pod preempted before is waited for).
 * A drain no queued pod is covered by any more is cancelled (uncordoned).
 * /summary gets mig_drains and gpu_s_mig_drain (the cordoned node's GPUs
 * that held no pod meanwhile), /mig_layouts.cordoned the cordon.
 * Anti-thrashing: two re-cut decisions of one node are at least
 * min_interval apart; a pod that only such a node could serve makes the
 * module wake at the end of the interval (a timer event).
 * A node with running pods is never re-cut (their instances cannot move and
 * a reset destroys them all): drains wait for them, or evict them first.  The phase counts as capacity `down`; its
 * GPU-seconds and the re-cuts go to /summary (mig_recuts,
 * gpu_s_mig_reconfig), each decision's new layouts to /mig_layouts.
 *
 * Owned by the model once attached (a module).
 */
#ifndef FS_MIGRECUT_H
#define FS_MIGRECUT_H

#include "fs_model.h"

/* Registers the module when some pool has mig_repartition enabled; nothing
 * otherwise.  0, FS_ENOMEM or FS_EINVAL (another after_pass module). */
int fs_migrecut_attach(fs_model_t *m, fs_error_t *err);

#endif
