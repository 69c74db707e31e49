/*
 * The wiring of a capacity plan (docs/plan.md): the scenario's plan: block
 * loaded and checked, each candidate fleet evaluated as a one-point sweep
 * of plan.replications runs in DIR/evals/<choice>-n<N>/ (fs_sweeprun.h: on
 * threads, MPI ranks or as one shard), the search of analysis/fs_plan.c,
 * the cash-flow view of each choice's smallest fleet, and DIR/plan.h5.
 * `fleetsim plan` (sim/cli/cmd_plan.c) and fleetsim_plan (the public API)
 * both call it; what is printed is theirs.
 */
#ifndef FS_PLANRUN_H
#define FS_PLANRUN_H

#include "fs_sweeprun.h"
#include "../../analysis/fs_plan.h"
#include "../../models/fs_config.h"
#include "../fs_error.h"

#include <stddef.h>
#include <stdint.h>

/* How a plan runs.  The scenario is a file (path) or text (name, text). */
typedef struct fs_planrun_opts {
    const char *path;               /* the scenario file, or NULL: text */
    const char *name, *text;        /* the scenario's text and its name in messages */
    const char *const *sets;        /* "KEY=VALUE" overrides of every candidate */
    size_t n_sets;
    const char *dir;                /* DIR: evals/ and plan.h5 */
    fs_sweep_opts_t o;              /* threads, shard, MPI, interrupt (o.dir is set per candidate) */
    int rank;                       /* MPI rank (0 without MPI): rank 0 writes */
    int scan;                       /* plan.search = scan, whatever the scenario says */
    /* Called before each candidate is evaluated (rank 0 only), may be NULL. */
    void (*on_candidate)(void *ud, const char *choice, uint32_t nodes);
    void *ud;
} fs_planrun_opts_t;

/* A plan's state and answer. */
typedef struct fs_planrun {
    fs_config_t cfg;                /* the scenario as loaded (with the overrides) */
    fs_plan_spec_t *spec;
    fs_plan_result_t *res;          /* after fs_planrun_execute */
    fs_plan_cash_t *cash;           /* per point (res->n_points): valid where have[k] */
    int *have;
    size_t runs_done;               /* runs executed now (the others were reused) */
    double wall_s;
    char *plan_file;                /* DIR/plan.h5 (written by rank 0 of shard 0) */
    fs_plan_fin_t *fin;             /* the quarterly cash flow (plan.years > 0), or NULL */
    int loaded;
} fs_planrun_t;

void fs_planrun_opts_init(fs_planrun_opts_t *o);

/* Loads the scenario and builds the spec; every metric the plan names is
 * checked against the /summary columns (located at its key).  On failure p
 * holds nothing. */
int fs_planrun_load(const fs_planrun_opts_t *o, fs_planrun_t *p, fs_error_t *err);

/* Runs the loaded plan: refuses a DIR whose plan.h5 would overwrite an input
 * of the scenario, makes DIR/evals, searches (resuming from the finished
 * candidates), prices each choice's smallest fleet and, on rank 0 of shard
 * 0, writes DIR/plan.h5.  FS_EINTR when o->o.interrupt was raised (run it
 * again to continue). */
int fs_planrun_execute(const fs_planrun_opts_t *o, fs_planrun_t *p, fs_error_t *err);

void fs_planrun_release(fs_planrun_t *p);

#endif
