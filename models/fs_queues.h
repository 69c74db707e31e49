/*
 * The queue kinds (scheduler.queue), one row each, in enum order: the enum
 * fs_queue_kind (fs_config.h), the YAML names (scenarios/fs_keys.c), the
 * order table (fs_order.c) and the policy table (fs_policy.c) are made from
 * this list.  A new queue order is one file (fs_order_NAME.c, defining
 * `const fs_order_ops_t fs_order_NAME`, fs_order.h) and one row here; a
 * queue kind that is a policy of its own (Kueue, Volcano) names its policy
 * table and NO_ORDER.
 *
 *   X(ENUM, "yaml name", policy table, ORDER(order table) or NO_ORDER)
 *
 * Rows are never reordered or removed: the enum values are the row numbers.
 */
#ifndef FS_QUEUES_H
#define FS_QUEUES_H

#define FS_QUEUE_KINDS(X)                                               \
    X(FIFO, "fifo", fs_policy_fifo, ORDER(fs_order_fifo))               \
    X(PRIORITY, "priority", fs_policy_sched, ORDER(fs_order_priority))  \
    X(SJF, "sjf", fs_policy_sched, ORDER(fs_order_sjf))                 \
    X(SRTF, "srtf", fs_policy_sched, ORDER(fs_order_srtf))              \
    X(LAS, "las", fs_policy_sched, ORDER(fs_order_las))                 \
    X(SLURM, "slurm", fs_policy_sched, ORDER(fs_order_slurm))           \
    X(KUEUE, "kueue", fs_policy_kueue, NO_ORDER)                        \
    X(VOLCANO, "volcano", fs_policy_volcano, NO_ORDER)                  \
    X(WFP, "wfp", fs_policy_sched, ORDER(fs_order_wfp))

#endif
