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
 * mig_repartition.layout: mixed (docs/mig.md "Mixed layouts"): a re-cut
 * changes only the GPUs the waiting pods of p need (fs_migrecut_plan
 * below), their free slots carry other profiles pods of the walk wait for,
 * the node's other GPUs keep their layout; the node is out as a whole as
 * above; the pods the plan serves are promised to the node and its credit
 * counts the plan's instances of every profile; /mig_layouts gets the
 * changed GPUs only.
 *
 * Owned by the model once attached (a module).
 */
#ifndef FS_MIGRECUT_H
#define FS_MIGRECUT_H

#include "fs_mig.h"
#include "fs_model.h"

/* One waiting pod for fs_migrecut_plan: k instances of a profile (an index
 * of the pool's MIG model), all on one node. */
typedef struct fs_migrecut_demand {
    uint8_t profile;
    uint32_t k;
} fs_migrecut_demand_t;

/*
 * The mixed re-cut of one node (mig_repartition.layout: mixed; docs/mig.md
 * "Mixed layouts").  cur: the node's gpn current layouts; dem[0]: the pod
 * the re-cut is for (profile p), dem[1..n-1]: the other pods of the walk
 * that no other node covers, in queue order.  out gets the new layouts:
 *   1. the pods of p (dem order) are served one by one: more of p is placed
 *      on the GPUs already re-cut (each at fs_mig_find's lowest free start),
 *      and when none has room, one more GPU is re-cut (all its instances
 *      destroyed): the one with the fewest instances of p now, ties to the
 *      lowest index, among those that hold fewer than an empty GPU would;
 *      a pod that cannot be served whole is skipped (changes undone);
 *   2. the pods of other profiles (dem order) are served, each whole or not
 *      at all, by instances placed the same way in the free slots of the
 *      re-cut GPUs only;
 *   3. the re-cut GPUs' slots still free take more of p, lowest first (as
 *      all-<p> would);
 * the other GPUs keep cur.  A re-cut GPU's layout is then rebuilt from its
 * counts by fs_mig_layout_build (as the loader and the exporter build a
 * layout from its text), so the instances are where they would be.  A pod counts instances of its profile on the
 * whole node, kept GPUs included, less those promised to earlier pods.
 * take[j] = 1 for the pods the new layouts serve (dem[0] always, or the
 * call fails).  Returns the GPUs whose layout changed (<= gpn, and only
 * GPUs whose fs_mig_recut for p would change too), or FS_EINVAL when
 * dem[0] cannot be served (out then holds a partial plan).  Every out[g]
 * passes fs_mig_layout_check.  O(n x gpn x 8); no allocation.
 */
int fs_migrecut_plan(const fs_mig_model_t *m, uint32_t gpn, const fs_mig_layout_t *cur,
                     const fs_migrecut_demand_t *dem, size_t n, fs_mig_layout_t *out, uint8_t *take);

/* Registers the module when some pool has mig_repartition enabled; nothing
 * otherwise.  0, FS_ENOMEM or FS_EINVAL (another after_pass module). */
int fs_migrecut_attach(fs_model_t *m, fs_error_t *err);

#endif
