/*
 * Helpers shared by the cmocka tests: temporary directories and files,
 * reading a whole file, the zero-live-allocations teardown check, a job-row
 * collector for model runs and a base one-pool configuration.
 */
#ifndef FS_TEST_UTIL_H
#define FS_TEST_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "models/fs_model.h"

/* A fresh directory under $TMPDIR (or /tmp); caller frees the string. */
char *fs_test_tmpdir(void);
/* dir/name; caller frees. */
char *fs_test_path(const char *dir, const char *name);
/* Writes text to path; returns 0 or -1. */
int fs_test_write(const char *path, const char *text);
/* An Azure LLM inference request trace (TIMESTAMP,ContextTokens,
 * GeneratedTokens) with the given rows, as req.csv in a fresh *dir; caller
 * frees both (and removes *dir). */
char *fs_test_request_trace(char **dir, const char *rows);
/* Reads a whole file (NUL-terminated); caller frees; NULL on error. */
char *fs_test_read(const char *path, size_t *len);
/* Removes a directory tree (rm -rf); best effort. */
void fs_test_rmtree(const char *dir);

/* cmocka 1.1.5 (Debian 12) has no double comparison: |a - b| <= eps
 * (NaN equals NaN), failing with both values printed. */
void fs_test_assert_close(double a, double b, double eps, const char *expr, const char *file,
                          int line);
#ifndef assert_double_equal
#define assert_double_equal(a, b, eps) \
    fs_test_assert_close((double)(a), (double)(b), (double)(eps), #a, __FILE__, __LINE__)
#endif

/* Job rows collected from a model run, in arrival order at the sink.  The
 * array grows as needed (plain malloc, outside fs_alloc_live()); a run
 * resets n and reuses the buffer.  Zero-initialise; fs_test_rows_free. */
typedef struct fs_test_rows {
    fs_job_row_t *r;
    size_t n, cap;
} fs_test_rows_t;

/* Sink job callback: appends *row to the fs_test_rows_t at ud; FS_ENOMEM. */
int fs_test_collect(void *ud, const fs_job_row_t *row);
/* The row of job id, or NULL. */
const fs_job_row_t *fs_test_find(const fs_test_rows_t *rs, uint64_t id);
/* Frees the array and zeroes *rs. */
void fs_test_rows_free(fs_test_rows_t *rs);

/* Zeroes *c and sets one pool p of nodes x gpn H100 GPUs, horizon
 * FS_TIME_MAX_INPUT, until drain, no timeline, and scheduler: the given
 * queue, best effort, first-fit placement, no backfill, preemption auto,
 * user run times, oracle estimates for unknown limits, default limit 1 d,
 * exact EASY settings (100 jobs, 60 s, 30 s, 1 d), Slurm max age and decay
 * half-life 7 d with a 300 s calc period, Tiresias thresholds "3600".
 * Tests set the fields they need differently after the call. */
void fs_test_base_cfg(fs_config_t *c, fs_pool_cfg_t *pool, uint32_t nodes, uint32_t gpn,
                      int queue);
/* After fs_test_base_cfg(c, &pools[0], ...): a second pool "a" of nodes_a
 * A100 nodes of the same size, pools[0..1] as the fleet. */
void fs_test_add_a100(fs_config_t *c, fs_pool_cfg_t pools[2], uint32_t nodes_a);

/* The allocation-failure sweep of a whole run: runs cfg over jobs[0..n)
 * (GPU type names gpu_types[0..n_types)) with allocation k failing, for
 * k = 1, 2, ... until a run succeeds.  Every failed run must return
 * FS_ENOMEM and leave no live allocation; the successful one must emit all
 * n rows into *rs.  Returns the number of failed runs. */
int fs_test_alloc_sweep(const fs_config_t *cfg, const fs_job_t *jobs, size_t n,
                        const char *const *gpu_types, size_t n_types, fs_test_rows_t *rs);

/* Sample callback: appends *row to the fs_test_samples_t at ud; FS_ENOMEM. */
typedef struct fs_test_samples {
    fs_sample_row_t *r;
    size_t n, cap;
} fs_test_samples_t;
int fs_test_collect_sample(void *ud, const fs_sample_row_t *row);

/* Loads `yaml` (named "t.yaml") and creates the model on no jobs, as a run
 * would, then destroys it: 0, or the error of the load or the creation (err
 * set).  For tests of errors found when the model is built. */
int fs_test_create(const char *yaml, fs_error_t *err);
/* Fails the test unless fs_test_create(yaml) fails with FS_EINVAL and a
 * message that contains both `where` (e.g. "t.yaml:5:") and `what`. */
void fs_test_expect_error(const char *yaml, const char *where, const char *what);
/* A job record: id, submission and work in seconds, GPUs; the rest at the
 * fs_job_init defaults. */
fs_job_t fs_test_job(uint64_t id, double submit_s, uint32_t gpus, double work_s);

/* Runs the scenario `yaml` (named "t.yaml") over jobs[0..n) (no tenant or
 * GPU-type names) into sink, filling *totals (may be NULL); fails the test
 * on any error. */
/* Fails the test unless the run's capacity states (#15) partition its
 * GPU-time: busy + down + waiting + idle == total (relative 1e-9), none
 * negative, and down == total - capacity (GPUs up). */
void fs_test_check_capstates(const fs_run_totals_t *t);
/* Fails the test unless a /timeline row's capacity states sum to
 * gpus_total x (row->time - prev->time) (relative 1e-9), none negative;
 * skipped when gpus_total differs between the two rows.  The sample
 * collector below applies it to every row after the first. */
void fs_test_check_capstate_row(const fs_sample_row_t *prev, const fs_sample_row_t *row);
void fs_test_run_yaml(const char *yaml, const fs_job_t *jobs, size_t n, const fs_sink_t *sink,
                      fs_run_totals_t *totals);
/* The same for a loaded configuration over jobs[0..n), and for any source
 * (taken: destroyed after the run).  Each checks the capacity states. */
void fs_test_run_cfg(const fs_config_t *cfg, const fs_job_t *jobs, size_t n, const fs_sink_t *sink,
                     fs_run_totals_t *totals);
void fs_test_run_src(const fs_config_t *cfg, fs_source_t *src, const fs_sink_t *sink,
                     fs_run_totals_t *totals);

#endif
