/*
 * fleetsim.h: the public C API of libfleetsim (docs/library.md).
 *
 * Load a scenario (a file, a YAML string or the built-in default), override
 * keys as `fleetsim run --set` does, run it with an optional progress
 * callback that can cancel, read the summary, and write the results file.
 * Every call returns a code (FLEETSIM_OK = 0) and keeps a message in the
 * handle it was given; nothing exits the process, nothing is global, and
 * handles may be used on different threads at once (one thread per handle).
 *
 *   fleetsim_scenario *s;
 *   if (fleetsim_scenario_load_file("s.yaml", &s) != FLEETSIM_OK) {
 *       fprintf(stderr, "%s\n", fleetsim_scenario_error(s));   // s may be NULL: then "out of memory"
 *   }
 *   fleetsim_scenario_set(s, "cluster.pools.0.nodes=64");
 *   fleetsim_result *r;
 *   if (fleetsim_run(s, "out.h5", NULL, NULL, &r) == FLEETSIM_OK) {
 *       double u;
 *       fleetsim_result_get(r, "utilization", &u);
 *   }
 *   fleetsim_result_free(r);
 *   fleetsim_scenario_free(s);
 */
#ifndef FLEETSIM_H
#define FLEETSIM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define FLEETSIM_API __attribute__((visibility("default")))
#else
#define FLEETSIM_API
#endif

/* The API this header describes.  A library accepts callers of its own
 * major version; fleetsim_api_version() says which it is. */
#define FLEETSIM_API_VERSION_MAJOR 1
#define FLEETSIM_API_VERSION_MINOR 4
#define FLEETSIM_API_VERSION (FLEETSIM_API_VERSION_MAJOR * 1000 + FLEETSIM_API_VERSION_MINOR)

enum fleetsim_status {
    FLEETSIM_OK = 0,
    FLEETSIM_EINVAL = 1,    /* invalid input: a scenario, a key, a value (message: FILE:LINE:COL) */
    FLEETSIM_ENOMEM = 2,
    FLEETSIM_EIO = 3,       /* a file could not be read or written */
    FLEETSIM_ECANCELED = 4, /* the progress callback asked to stop */
    FLEETSIM_ESTUCK = 5,    /* queued jobs can never start (the message names them) */
    FLEETSIM_ELIMIT = 6,    /* a value beyond a supported limit */
    FLEETSIM_EINTERNAL = 7
};

typedef struct fleetsim_scenario fleetsim_scenario;
typedef struct fleetsim_result fleetsim_result;

/* Progress: called every few thousand events with the simulated time and
 * the horizon (s) and the job counts.  Return non-zero to cancel the run
 * (fleetsim_run then returns FLEETSIM_ECANCELED, and a results file asked
 * for holds the rows so far with complete = 0). */
typedef int (*fleetsim_progress_fn)(void *ud, double sim_time_s, double horizon_s,
                                    uint64_t jobs_done, uint64_t jobs_running,
                                    uint64_t jobs_queued);

/* FLEETSIM_API_VERSION of the library, and its release ("0.1.0"). */
FLEETSIM_API int fleetsim_api_version(void);
FLEETSIM_API const char *fleetsim_version(void);
/* A short description of a status code. */
FLEETSIM_API const char *fleetsim_strerror(int status);

/* Loading.  On any return but FLEETSIM_ENOMEM, *out is a handle to free
 * with fleetsim_scenario_free; on an error it holds the message
 * (fleetsim_scenario_error) and cannot be run. */
FLEETSIM_API int fleetsim_scenario_load_file(const char *path, fleetsim_scenario **out);
FLEETSIM_API int fleetsim_scenario_load_string(const char *name, const char *yaml,
                                               fleetsim_scenario **out);
FLEETSIM_API int fleetsim_scenario_load_default(fleetsim_scenario **out);
/* Overrides one key, "KEY=VALUE" as `--set` takes it (validated at once;
 * on an error the scenario keeps its previous overrides). */
FLEETSIM_API int fleetsim_scenario_set(fleetsim_scenario *s, const char *key_value);
/* Overrides n keys at once (API 1.4): all of them are applied, then the
 * scenario is checked once, so keys that are only valid together (a
 * horizon and a warmup that must stay below it) may come in any order.  On
 * an error none of them is kept.  key_values may be NULL when n is 0. */
FLEETSIM_API int fleetsim_scenario_set_many(fleetsim_scenario *s, const char *const *key_values,
                                            size_t n);
/* The last error's message ("" when none; "out of memory" for NULL). */
FLEETSIM_API const char *fleetsim_scenario_error(const fleetsim_scenario *s);
/* The scenario's canonical YAML (every key with its value), owned by s,
 * valid until the next call on s; NULL on an error. */
FLEETSIM_API const char *fleetsim_scenario_dump(fleetsim_scenario *s);
FLEETSIM_API void fleetsim_scenario_free(fleetsim_scenario *s);

/* Runs s.  output: the HDF5 results file (written atomically), or NULL for
 * none.  progress may be NULL.  On FLEETSIM_OK *out is the result (free
 * with fleetsim_result_free); otherwise *out is NULL and the message is in
 * fleetsim_scenario_error(s). */
FLEETSIM_API int fleetsim_run(fleetsim_scenario *s, const char *output, fleetsim_progress_fn progress,
                              void *progress_ud, fleetsim_result **out);

/* Sweeps (API 1.1; docs/sweeps.md).  A named variant: n "KEY=VALUE"
 * overrides of the scenario, as `fleetsim versus -p NAME=K=V,...`; once
 * variants are added, a sweep of s runs one point per variant (in the order
 * added) instead of the scenario's sweep parameters.  Checked when the
 * sweep is made (errors name "-p NAME"). */
FLEETSIM_API int fleetsim_scenario_add_variant(fleetsim_scenario *s, const char *name,
                                               const char *const *key_values, size_t n);
/* Runs the sweep of s into the directory dir, as `fleetsim sweep -o DIR -j
 * THREADS` (or `fleetsim versus` with variants): one results file per run,
 * DIR/runs/p<P>-r<R>.h5, then DIR/index.h5 (/points, /runs, /stats: the
 * Student-t 95% interval of every /summary column per point).  threads 0:
 * one per CPU.  replications 0: the scenario's sweep.replications (10 with
 * variants, as versus); else that many.  The run files' bytes depend only
 * on the scenario and the run, not on threads.  Not with a policy table
 * (fleetsim_scenario_set_policy): FLEETSIM_EINVAL. */
FLEETSIM_API int fleetsim_sweep(fleetsim_scenario *s, const char *dir, unsigned threads,
                                unsigned replications);

/* Capacity plans (API 1.3; docs/plan.md).  Runs the plan: block of s as
 * `fleetsim plan -o DIR -j THREADS`: the cheapest fleet that meets the
 * SLOs, each candidate fleet a one-point sweep in DIR/evals/<choice>-n<N>/
 * (a finished one is reused, so calling it again after a cancel or an
 * error continues), every evaluated point in DIR/plan.h5.  threads 0: one
 * per CPU.  *out (may be NULL) receives the answer, freed with
 * fleetsim_plan_free.  Returns FLEETSIM_OK also when no fleet meets the
 * SLOs (fleetsim_plan_chosen is then -1).  Not with a policy table. */
typedef struct fleetsim_plan_result fleetsim_plan_result;
FLEETSIM_API int fleetsim_plan(fleetsim_scenario *s, const char *dir, unsigned threads,
                               fleetsim_plan_result **out);
/* The evaluated points, in evaluation order; the index of the chosen one
 * (-1: none meets the SLOs); point i's choice (plan.choices[].name). */
FLEETSIM_API size_t fleetsim_plan_count(const fleetsim_plan_result *p);
FLEETSIM_API long fleetsim_plan_chosen(const fleetsim_plan_result *p);
FLEETSIM_API const char *fleetsim_plan_choice(const fleetsim_plan_result *p, size_t i);
/* A figure of point i by name: "nodes", "gpus", "round", "meets",
 * "frontier", "best" (the smallest feasible fleet of its choice), "chosen"
 * (0/1 flags), for each metric M of the plan (the objective, then each
 * SLO's) "M_mean", "M_sd", "M_lo", "M_hi" (the interval at
 * plan.confidence), and for each choice's best point the cash-flow view
 * "purchase", "depreciation", "depreciation_share", "opex_per_year",
 * "residual", "npv" (NaN elsewhere).  The j-th name (NULL past the end)
 * lists them.  FLEETSIM_EINVAL for an unknown name or i. */
FLEETSIM_API int fleetsim_plan_get(const fleetsim_plan_result *p, size_t i, const char *name,
                                   double *value);
FLEETSIM_API const char *fleetsim_plan_name(const fleetsim_plan_result *p, size_t j);
/* DIR/plan.h5. */
FLEETSIM_API const char *fleetsim_plan_file(const fleetsim_plan_result *p);
FLEETSIM_API void fleetsim_plan_free(fleetsim_plan_result *p);

/* The summary (the /summary columns of docs/results.md): how many values,
 * the i-th name (NULL past the end), and a value by name. */
FLEETSIM_API size_t fleetsim_result_count(const fleetsim_result *r);
FLEETSIM_API const char *fleetsim_result_name(const fleetsim_result *r, size_t i);
FLEETSIM_API int fleetsim_result_get(const fleetsim_result *r, const char *name, double *value);
/* Wall-clock seconds the run took. */
FLEETSIM_API double fleetsim_result_wall_seconds(const fleetsim_result *r);
FLEETSIM_API void fleetsim_result_free(fleetsim_result *r);

/* ---- memory (API 1.2; docs/library.md, "Memory") ----
 * Every call on a scenario allocates the memory of its work (the run, the
 * sweep with all its threads, the checks of a load or an override) in the
 * scenario's own allocation context: its allocator and its counters, apart
 * from every other scenario's, on any thread.  What outlives a call (the
 * handle, a result, the dump) is not counted there.
 *
 * A Lua-style allocator: ptr NULL and nsize > 0 allocates nsize bytes;
 * ptr and nsize > 0 resizes the block ptr of osize bytes to nsize; nsize 0
 * frees ptr (osize: its size) and returns NULL.  Blocks must be aligned as
 * malloc's (max_align_t).  Returning NULL fails the allocation: the call
 * then returns FLEETSIM_ENOMEM (fault injection from the caller's side).
 * The sizes include a small header fleetsim puts in front of each block.
 * Called from fleetsim's threads too during fleetsim_sweep and a run that
 * writes a results file: it must be thread-safe then. */
typedef void *(*fleetsim_alloc_fn)(void *ud, void *ptr, size_t osize, size_t nsize);

/* The counters of the last call on a scenario (API 1.2).  They start at
 * zero at every call; live_blocks and live_bytes are 0 again when it
 * returns (non-zero: a leak in fleetsim). */
typedef struct fleetsim_memory {
    uint64_t allocations;   /* requests served: allocations and resizes (failed ones too) */
    uint64_t failed;        /* requests that were refused (the allocator returned NULL) */
    int64_t live_blocks;    /* blocks allocated and not freed */
    int64_t live_bytes;     /* their sizes as fleetsim asked (headers not counted) */
    int64_t peak_bytes;     /* the most live_bytes reached during the call */
} fleetsim_memory;

/* The allocator of the calls on s from now on (NULL: the C library's
 * malloc, realloc and free); ud is passed to it.  FLEETSIM_EINTERNAL if
 * blocks of the previous allocator are still live (a leak). */
FLEETSIM_API int fleetsim_scenario_set_allocator(fleetsim_scenario *s, fleetsim_alloc_fn fn, void *ud);
/* The memory counters of the last call on s (fleetsim_run, fleetsim_sweep,
 * a load, fleetsim_scenario_set or _dump). */
FLEETSIM_API int fleetsim_scenario_memory(const fleetsim_scenario *s, fleetsim_memory *out);

/* ---- scheduling policies as plugins (scheduler.plugin; docs/library.md) ----
 * The plugin ABI (fleetsim_policy, fleetsim_host, fleetsim_job_info) is
 * written in models/fs_plugin_abi.h, beside the policy tables it adapts to;
 * the installed fleetsim.h has it inlined here (cmake/inline_header.cmake),
 * so a plugin needs this one header. */
#include "../../models/fs_plugin_abi.h"

/* The same policy given as a table in the caller's process instead of a
 * shared object (the Python package's policy hook uses this): every run of
 * s uses it in place of the scenario's scheduler (scheduler.plugin.path,
 * if any, is not loaded; scheduler.plugin.options are passed to create).
 * The table and what its functions use must outlive the runs; NULL goes
 * back to the scenario's own scheduler.  FLEETSIM_EINVAL if the table is
 * not a policy of ABI FLEETSIM_POLICY_ABI_MIN to FLEETSIM_POLICY_ABI.  API 1.1. */
FLEETSIM_API int fleetsim_scenario_set_policy(fleetsim_scenario *s, const fleetsim_policy *policy);

#ifdef __cplusplus
}
#endif

#endif
