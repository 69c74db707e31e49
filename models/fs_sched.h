/*
 * fs_sched: the composable scheduler (policy "sched" of fs_policy.h).
 *
 * It composes four separate parts chosen by the scheduler block:
 *   order      which job goes first (fs_order.h: fifo, priority, sjf, srtf,
 *              las, slurm);
 *   mode       strict (the first job in order blocks the rest) or
 *              best_effort (jobs that fit start in order, skipping others);
 *   backfill   none, easy (a reservation for the first blocked job only)
 *              or conservative (a reservation for every queued job), exact
 *              or Slurm-bounded (scheduler.bf);
 *   preemption none or order (a waiting job preempts running jobs ranked
 *              below it; fs_model_preempt does the mechanics);
 * and the placement of fs_cluster (scheduler.placement).
 *
 * Data structures (why the pass is fast).  Queued jobs are split into
 * classes of identical shape (GPU count, pool set) as in fs_fifo.c: all
 * jobs of a class fit or not together, so only class heads are tested.
 * Each class is a treap ordered by (key, admission sequence) and augmented
 * with the minimum planned run time of its subtree, so "the first job of
 * the class that ends before the shadow time" is O(log n).  Running jobs
 * are a treap ordered by planned end, augmented with GPU sums, so the EASY
 * shadow time and extra GPUs are O(log n).  A non-preemptive pass costs
 * O(classes x log n) per started job; whether a shape fits is remembered
 * for the rest of the pass and while the cluster's generation is unchanged,
 * and a pass after arrivals alone is skipped when none of them can start
 * (fs_sched.c "settled queues").  Orders whose keys all change at once
 * (Slurm's PriorityCalcPeriod) keep each class as bands in admission order
 * under a tournament (fs_order.h band): an update of keys costs O(bands),
 * not O(queue log queue) (no backfill, no preemption; else the queue is
 * rebuilt).  fs_sched_set_fast(state, 0) turns these fast paths off; tests
 * prove the results equal (tests/test_sched_fast.c).  Conservative backfill builds a
 * profile (sorted array of steps) per pass: O(queue x steps), bounded by
 * bf.max_job_test in slurm mode.  EASY while an outage of cluster.outages
 * is ahead plans on that profile with one reservation, walking the classes
 * in order by a cursor (no sort of the queue); past the reservation it
 * jumps to the next job whose estimate fits before the profile's first dip
 * below its GPUs: O(classes x (steps + log n)) per job it starts or tries.
 * Preemptive passes sort all active jobs:
 * O(active log active) per pass; an order that keeps its own structure
 * (2D-LAS, fs_order.h plan) plans the pass instead: O(changes x log active).
 *
 * Reservations are counted in GPUs over the whole cluster (all pools
 * together); they are exact when no job is split by node fragmentation
 * (1-GPU nodes, or whole-node jobs) and only one pool serves the queue.
 *
 * Instrumentation: fs_sched_record(state, 1) logs each job's first
 * reservation (tests prove no start is later than it).
 */
#ifndef FS_SCHED_H
#define FS_SCHED_H

#include <stddef.h>
#include <stdint.h>

#include "../sim/fs_time.h"

typedef struct fs_sched_resv {
    uint64_t id;            /* job id */
    fs_time_t at;           /* the reserved start, us */
} fs_sched_resv_t;

/* Turns the reservation log on (state: fs_model_policy_state of a model
 * whose policy is fs_policy_sched). */
void fs_sched_record(void *state, int on);
/* Fast paths on (1, the default) or off (0): call before the run.  Off,
 * every update of keys rebuilds the queue and every fit is tested afresh;
 * tests prove that the results are the same. */
void fs_sched_set_fast(void *state, int on);
/* The log: first reservation of each job that got one, in the order made. */
const fs_sched_resv_t *fs_sched_reservations(const void *state, size_t *n);
/* Counters: preemptions made, backfill starts (jobs started past a blocked
 * job under a reservation rule). */
uint64_t fs_sched_preemptions(const void *state);
uint64_t fs_sched_backfilled(const void *state);
/* Bands (fast path): jobs queued outside their band (keys taken out of step). */
uint64_t fs_sched_loose(const void *state);
/* Bytes the scheduler keeps per job slot in this configuration (its treap
 * node and the per-node state the active modes need; issue #13). */
size_t fs_sched_slot_bytes(const void *state);

#endif
