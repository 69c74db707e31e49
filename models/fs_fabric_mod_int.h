/*
 * fs_fabric_mod_int: what the parts of the fabric module share
 * (fs_fabric_mod.c: jobs, links and their figures; fs_fabric_fail.c: link
 * and switch failures).  INTERNAL to those two files.
 */
#ifndef FS_FABRIC_MOD_INT_H
#define FS_FABRIC_MOD_INT_H

#include "fs_fabric_mod.h"
#include "../sim/fs_rng.h"
#include "fs_place.h"

/* A link's figures for /links, integrated between changes. */
typedef struct fab_link {
    fs_time_t since;        /* settled up to */
    double load;            /* sum coef x x of its flows now, bytes/s */
    double brate;           /* bytes/s carried now: sum coef x edge bytes x iterations/s */
    uint32_t flows;         /* flows on it now */
    double cap0;            /* capacity as built */
    double cap;             /* capacity now */
    double bytes, busy_s, sat_s, peak, down_s, degr_s;
    double rec;             /* bytes of its last /link_bytes row */
    double ports_down;      /* its ports carrying nothing now (down, or behind a spine down) */
    uint32_t ports;
    uint32_t failures;
} fab_link_t;

/* A slot's job: its ring on the network and its figures. */
typedef struct fab_slot {
    fs_time_t since;        /* settled up to */
    double fac;             /* the factor in force (the rate the job runs at has it) */
    double slow_s;          /* integral of 1 - factor over its running time, s */
    double t_idle;          /* its idle iteration time, s (0: no ring on the network now) */
    double compute_s;       /* compute per iteration, s */
    double sent_pi;         /* bytes its NICs send per iteration: 2(d-1) x gradient bytes */
    double edge_b;          /* bytes one ring edge moves per iteration */
    double xrec, irec;      /* the rate and iterations/s its links were given */
    double comm_s, net_s, iters, sent;
    uint64_t id;            /* its job */
    int net;                /* it had a ring on the network: a /jobs_network row is due */
} fab_slot_t;

struct fs_fabfail;

/* /link_bytes rows the module holds at most (24 B each) before it hands them to the sink */
#define FS_FAB_LB_BATCH 4096

struct fs_fabmod {
    fs_fabric_net_t net;
    fs_fabric_t *eng;
    uint32_t mod_id;        /* fs_model_add_module's id (its events) */
    fab_slot_t *sl;
    size_t cap_sl;
    fab_link_t *lk;         /* n_nodes + n_groups */
    uint32_t n_links;
    double lost_gpu_s;      /* sum over jobs of GPUs x slowdown: GPU-s lost to the network */
    fs_jobnet_row_t *rows;  /* /jobs_network rows of jobs that ended */
    size_t n_rows, cap_rows;
    struct fs_fabfail *fail;    /* cluster.fabric.failures, NULL: none */
    fs_place_net_t pnet;    /* the placer's view of the network (fs_placer_set_net) */
    fs_link_bytes_row_t *lb;    /* /link_bytes rows not yet handed to the sink (when it
                                   wants them: FS_FAB_LB_BATCH at a time, the rest at the end) */
    size_t n_lb, cap_lb;
    int lb_rc;                  /* a sample ran out of memory or the sink failed: the run
                                   fails with it at its end */
};

/* A link's figures up to now (before its load or capacity changes). */
void fs_fab_link_settle(struct fs_fabmod *a, uint32_t link, fs_time_t now);
/* The flows that the last engine change moved: their links' figures
 * updated, the jobs re-rated (skip: the slot the caller rates itself). */
int fs_fab_after_change(fs_model_t *m, uint32_t skip);

/* fs_fabric_fail.c: the failure processes.  0 or FS_E* (err set). */
int fs_fab_fail_init(fs_model_t *m, struct fs_fabmod *a, fs_error_t *err);
void fs_fab_fail_free(struct fs_fabfail *ff);
int fs_fab_fail_event(fs_model_t *m, struct fs_fabmod *a, uint64_t data);

#endif
