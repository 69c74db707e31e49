/*
 * fs_plugin_abi: the ABI of scheduling-policy plugins (scheduler.plugin):
 * the table a plugin fills and the host's calls it gets.  Part of the public
 * API: sim/api/fleetsim.h includes it, and the installed fleetsim.h has it
 * inlined (one installed header).  It lives here, beside the policy tables
 * (fs_policy.h) that models/fs_plugin.c adapts it to, so that the model
 * needs nothing from the API floor (docs/layering.md).  Types and one
 * macro only; plain C, no fleetsim includes.
 */
#ifndef FLEETSIM_PLUGIN_ABI_H
#define FLEETSIM_PLUGIN_ABI_H

#include <stddef.h>
#include <stdint.h>

/* ---- scheduling policies as plugins (scheduler.plugin; docs/library.md) ----
 * A shared object that exports
 *     const fleetsim_policy *fleetsim_policy_entry(void);
 * is a scheduling policy: `scheduler: {plugin: {path: ./p.so, options: {k: v}}}`.
 * It keeps its own queue of waiting jobs (by handle) and starts them through
 * the host's calls; the simulator places them (scheduler.placement) and does
 * everything else.  It links against nothing of fleetsim: the host's calls
 * come in the table given to create.
 * ABI 2 adds preemption and timers (the fields marked "ABI 2" below), ABI 3
 * the GPU types and placement: a job's speed on each type, the pools and
 * nodes, and starting a job in pools or on nodes the plugin chooses (the
 * fields marked "ABI 3").  A plugin built for
 * an older ABI still loads and is given the host of its own ABI. */
#define FLEETSIM_POLICY_ABI 3
/* The oldest ABI this header's host still loads. */
#define FLEETSIM_POLICY_ABI_MIN 1

typedef struct fleetsim_job_info {
    uint64_t id;
    double submit_s;        /* submission, s */
    double duration_s;      /* run time at speed 1 (what an oracle knows), s */
    double estimate_s;      /* the user's estimate (time limit), s; < 0 unknown */
    double remaining_s;     /* work left, s (less than duration_s after a restart) */
    uint32_t gpus, gpu_milli;
    int32_t tenant, priority, job_class;
    uint32_t restarts;
} fleetsim_job_info;

/* ABI 3: one pool of the cluster (cluster.pools, in order; index 0 ..
 * pools() - 1).  The strings live as long as the run.  Its nodes are the
 * global node ids first_node .. first_node + nodes - 1 (pools in order). */
typedef struct fleetsim_pool_info {
    const char *name;       /* the pool's name */
    const char *gpu;        /* its GPU model (catalog name) */
    uint32_t first_node;
    uint32_t nodes, gpus_per_node;
    uint64_t gpus_free;     /* whole GPUs free now, on nodes in service */
    uint64_t gpus_up;       /* whole GPUs in service */
} fleetsim_pool_info;

typedef struct fleetsim_host {
    uint32_t abi;           /* FLEETSIM_POLICY_ABI */
    void *sim;              /* the first argument of every call */
    double (*now)(void *sim);                                   /* simulated time, s */
    int (*job)(void *sim, uint32_t handle, fleetsim_job_info *out);  /* 0, or -1 no such job */
    /* Starts a waiting job where the placement puts it: 1 started, 0 it does
     * not fit now, < 0 an error (return it from pass). */
    int (*start)(void *sim, uint32_t handle);
    uint64_t (*free_gpus)(void *sim);                           /* whole GPUs free now */
    /* ABI 2.  Stops a running job (its GPUs are freed now; it keeps the work
     * a checkpoint kept: scheduler.checkpoint_interval, recovery.*).  The job
     * then waits again and stays the plugin's: no enqueue and no job_end
     * follow; start it again when it should run.  0, or < 0 it is not
     * running. */
    int (*preempt)(void *sim, uint32_t handle);
    /* ABI 2.  The policy's timer gets data at at_s (a time before now is
     * now); a pass follows at the end of that instant when jobs wait.
     * Timers are not cancelled: a plugin ignores the ones it no longer
     * wants (by their data).  0, or < 0 out of memory. */
    int (*timer)(void *sim, double at_s, uint64_t data);
    uint64_t (*gpus_up)(void *sim);     /* ABI 2: whole GPUs in service (up) */
    /* ABI 3.  The job's speed factor on pools of GPU model gpu_model (a
     * GPU model or a pool name, any case): the cluster.speed row of its
     * class for that model, else the catalog's relative speed under
     * cluster.speed_catalog, else 1.0 -- the factor its run time at speed 1
     * is divided by there (before span, straggler, power-cap and sharing
     * factors, which depend on the placement).  < 0: no such job, or no
     * pool has that model. */
    double (*speed)(void *sim, uint32_t handle, const char *gpu_model);
    uint32_t (*pools)(void *sim);       /* ABI 3: how many pools */
    /* ABI 3.  Pool i: 0, or -1 no such pool. */
    int (*pool)(void *sim, uint32_t i, fleetsim_pool_info *out);
    /* ABI 3.  Starts a waiting job as start does, placed only in the given
     * pools (indices; among them, scheduler.placement picks the pool, in
     * the order given, and the nodes).  Pools the job may not use (its GPU
     * type's, a cloud-burst rule) are skipped.  1 started, 0 it does not
     * fit there now, < 0 an error (not a waiting job, a bad pool index). */
    int (*start_in)(void *sim, uint32_t handle, const uint32_t *pools, size_t n_pools);
    /* ABI 3.  Starts a waiting job on the first of the given nodes (global
     * node ids, in the order given) where it fits now on that one node
     * (shared GPUs: the fullest open one that holds it); nodes of pools the
     * job may not use are skipped.  1 started, 0 it fits on none of them
     * now, < 0 an error (not a waiting job, a bad node id, a MIG pod, a job
     * larger than every node given: use start_in). */
    int (*place)(void *sim, uint32_t handle, const uint32_t *nodes, size_t n_nodes);
    /* ABI 3.  Whole GPUs free on a node now; -1: no such node, or it is out
     * of service. */
    int64_t (*node_free)(void *sim, uint32_t node);
} fleetsim_host;

typedef struct fleetsim_policy {
    uint32_t abi;           /* FLEETSIM_POLICY_ABI (FLEETSIM_POLICY_ABI_MIN and up load) */
    const char *name;
    /* options: the scenario's scheduler.plugin.options, n pairs.  0, or
     * non-zero with a message in err (errlen bytes): the scenario is refused. */
    int (*create)(const fleetsim_host *host, const char *const *keys, const char *const *values,
                  size_t n, void **state, char *err, size_t errlen);
    void (*destroy)(void *state);
    /* A job waits (new, or back after a failure).  0, or < 0 out of memory. */
    int (*enqueue)(void *state, uint32_t handle);
    /* Start what should start now (called once at the end of every instant
     * where something changed).  0, or the error of a start. */
    int (*pass)(void *state);
    /* The job stopped running (finished, or interrupted by a failure: it is
     * enqueued again when it is back); its handle may be reused after. */
    void (*job_end)(void *state, uint32_t handle);
    size_t (*queued)(const void *state);   /* jobs waiting */
    /* ABI 2, optional (NULL: none; read only when abi >= 2).  A timer set
     * with host->timer fired: data as given.  0, or < 0 an error. */
    int (*timer)(void *state, uint64_t data);
} fleetsim_policy;

typedef const fleetsim_policy *(*fleetsim_policy_entry_fn)(void);

#endif
