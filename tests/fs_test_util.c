#include "fs_test_util.h"

#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim/fs_alloc.h"
#include "traces/fs_memsrc.h"
#include "models/fs_policy.h"
#include "scenarios/fs_scenario.h"

char *fs_test_tmpdir(void)
{
    const char *base = getenv("TMPDIR");
    char tmpl[4096];
    snprintf(tmpl, sizeof tmpl, "%s/fleetsim-test-XXXXXX", base && *base ? base : "/tmp");
    char *d = mkdtemp(tmpl);
    return d ? strdup(d) : NULL;
}

char *fs_test_path(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = malloc(n);
    if (p)
        snprintf(p, n, "%s/%s", dir, name);
    return p;
}

int fs_test_write(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    size_t n = strlen(text);
    int ok = fwrite(text, 1, n, f) == n;
    return (fclose(f) == 0 && ok) ? 0 : -1;
}

char *fs_test_request_trace(char **dir, const char *rows)
{
    *dir = fs_test_tmpdir();
    char *p = fs_test_path(*dir, "req.csv");
    size_t n = strlen(rows) + 64;
    char *text = malloc(n);
    assert_non_null(text);
    snprintf(text, n, "TIMESTAMP,ContextTokens,GeneratedTokens\n%s", rows);
    assert_int_equal(fs_test_write(p, text), 0);
    free(text);
    return p;
}

char *fs_test_read(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    size_t k;
    while (buf && (k = fread(buf + n, 1, cap - n - 1, f)) > 0) {
        n += k;
        if (cap - n - 1 == 0) {
            char *nb = realloc(buf, cap *= 2);
            if (!nb) {
                free(buf);
                buf = NULL;
            } else {
                buf = nb;
            }
        }
    }
    fclose(f);
    if (buf) {
        buf[n] = '\0';
        if (len)
            *len = n;
    }
    return buf;
}

void fs_test_rmtree(const char *dir)
{
    char cmd[4200];
    if (!dir || !*dir || strcmp(dir, "/") == 0)
        return;
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "warning: could not remove %s\n", dir);
}

void fs_test_assert_close(double a, double b, double eps, const char *expr, const char *file,
                          int line)
{
    if ((isnan(a) && isnan(b)) || fabs(a - b) <= eps)
        return;
    print_error("%s = %.17g, expected %.17g (tolerance %g)\n", expr, a, b, eps);
    _fail(file, line);
}

int fs_test_collect(void *ud, const fs_job_row_t *row)
{
    fs_test_rows_t *rs = ud;
    if (rs->n == rs->cap) {
        size_t cap = rs->cap ? 2 * rs->cap : 64;
        fs_job_row_t *r = realloc(rs->r, cap * sizeof *r);
        if (!r)
            return FS_ENOMEM;
        rs->r = r;
        rs->cap = cap;
    }
    rs->r[rs->n++] = *row;
    return 0;
}

const fs_job_row_t *fs_test_find(const fs_test_rows_t *rs, uint64_t id)
{
    for (size_t i = 0; i < rs->n; i++)
        if (rs->r[i].id == id)
            return &rs->r[i];
    return NULL;
}

void fs_test_rows_free(fs_test_rows_t *rs)
{
    free(rs->r);
    *rs = (fs_test_rows_t){0};
}

void fs_test_base_cfg(fs_config_t *c, fs_pool_cfg_t *pool, uint32_t nodes, uint32_t gpn,
                      int queue)
{
    memset(c, 0, sizeof *c);
    memset(pool, 0, sizeof *pool);
    pool->name = "p";
    pool->gpu = "H100";
    pool->nodes = nodes;
    pool->gpus_per_node = gpn;
    c->cluster.pools = pool;
    c->cluster.n_pools = 1;
    c->horizon = FS_TIME_MAX_INPUT;
    c->until = FS_UNTIL_DRAIN;
    fs_sched_cfg_t *s = &c->scheduler;
    s->queue = queue;
    s->mode = FS_FIFO_BEST_EFFORT;
    s->placement = FS_PLACE_FIRST_FIT;
    s->w_gpu = 1;
    s->backfill = FS_BACKFILL_NONE;
    s->preemption = FS_PREEMPT_AUTO;
    s->runtime = FS_RUNTIME_USER;
    s->unknown_estimate = FS_UNKNOWN_EST_ORACLE;
    s->default_limit = 86400 * FS_US_PER_S;
    s->bf = (fs_backfill_cfg_t){FS_BF_EXACT, 100, 60 * FS_US_PER_S, 30 * FS_US_PER_S,
                                86400 * FS_US_PER_S};
    s->slurm = (fs_slurm_cfg_t){.max_age = 7 * 86400 * FS_US_PER_S,
                                .decay_half_life = 7 * 86400 * FS_US_PER_S,
                                .calc_period = 300 * FS_US_PER_S};
    s->tiresias.thresholds = "3600";
    c->output.timeline_interval = 0;
}

void fs_test_add_a100(fs_config_t *c, fs_pool_cfg_t pools[2], uint32_t nodes_a)
{
    pools[1] = pools[0];
    pools[1].name = "a";
    pools[1].gpu = "A100";
    pools[1].nodes = nodes_a;
    c->cluster.pools = pools;
    c->cluster.n_pools = 2;
}

int fs_test_alloc_sweep(const fs_config_t *cfg, const fs_job_t *jobs, size_t n,
                        const char *const *gpu_types, size_t n_types, fs_test_rows_t *rs)
{
    int64_t live0 = fs_alloc_live();
    int failed = 0;
    for (uint64_t k = 1; k < 5000; k++) {
        fs_source_t *src;
        fs_model_t *m = NULL;
        fs_error_t err;
        assert_int_equal(fs_memsrc_create(jobs, n, NULL, 0, gpu_types, n_types, &src, &err), 0);
        fs_sink_t sink = {.job = fs_test_collect, .ud = rs};
        rs->n = 0;
        fs_alloc_fail_after(k);
        int rc = fs_model_create(cfg, fs_policy_select(&cfg->scheduler), src, &sink, &m, &err);
        if (!rc)
            rc = fs_model_run(m, NULL, NULL, &err);
        fs_alloc_fail_after(0);
        fs_model_destroy(m);
        fs_source_destroy(src);
        assert_int_equal(fs_alloc_live(), live0);
        if (rc == 0) {
            assert_int_equal(rs->n, n);
            return failed;
        }
        assert_int_equal(rc, FS_ENOMEM);
        failed++;
    }
    fail_msg("no run succeeded within 5000 failing allocations");
    return failed;
}

void fs_test_check_capstates(const fs_run_totals_t *t)
{
    /* Each state is a sum of dt x (a GPU count <= gpus_total); a sum of n
     * non-negative terms has a relative error below n x eps, and the
     * tests' runs have far fewer than 1e6 settles: 1e-9 relative bounds it. */
    double sum = t->gpu_s_busy + t->gpu_s_down + t->gpu_s_waiting + t->gpu_s_idle;
    double tol = 1e-9 * (t->gpu_s_total > 1 ? t->gpu_s_total : 1);
    if (!(fabs(sum - t->gpu_s_total) <= tol))
        fail_msg("capacity states: busy %.17g + down %.17g + waiting %.17g + idle %.17g = %.17g "
                 "!= total %.17g", t->gpu_s_busy, t->gpu_s_down, t->gpu_s_waiting, t->gpu_s_idle,
                 sum, t->gpu_s_total);
    if (t->gpu_s_down < -tol || t->gpu_s_waiting < -tol || t->gpu_s_idle < -tol ||
        t->gpu_s_busy < -tol)
        fail_msg("capacity states: a negative state (busy %g down %g waiting %g idle %g)",
                 t->gpu_s_busy, t->gpu_s_down, t->gpu_s_waiting, t->gpu_s_idle);
    if (!(fabs(t->gpu_s_down - (t->gpu_s_total - t->gpu_s_capacity)) <= tol))
        fail_msg("capacity states: down %.17g != total %.17g - up %.17g", t->gpu_s_down,
                 t->gpu_s_total, t->gpu_s_capacity);
    /* the held split of busy: the cluster's allocation integral against the
     * jobs' own accounts (held_gpu_s, w_compute, w_ckpt, w_startup) */
    if (!(t->gpu_s_share_idle >= -tol && t->gpu_s_allocated <= t->gpu_s_busy + tol))
        fail_msg("held split: allocated %.17g > busy %.17g", t->gpu_s_allocated, t->gpu_s_busy);
    if (!(t->gpu_s_serving >= -tol))
        fail_msg("held split: jobs held %.17g > allocated %.17g", t->gpu_s_held,
                 t->gpu_s_allocated);
    if (!(t->gpu_s_recovering >= -tol && t->gpu_s_redo <= t->gpu_s_computing + tol &&
          t->gpu_s_redo >= 0 && t->gpu_s_ckpt >= 0 && t->gpu_s_startup >= 0))
        fail_msg("held split: held %.17g < computing %.17g + ckpt %.17g + startup %.17g, or "
                 "redo %.17g > computing", t->gpu_s_held, t->gpu_s_computing, t->gpu_s_ckpt,
                 t->gpu_s_startup, t->gpu_s_redo);
    /* the waiting split: frag + the held-back part under one label == waiting */
    double wsum = t->gpu_s_frag + t->gpu_s_quota + t->gpu_s_reserved + t->gpu_s_blocked;
    int labels = (t->gpu_s_quota != 0) + (t->gpu_s_reserved != 0) + (t->gpu_s_blocked != 0);
    if (!(fabs(wsum - t->gpu_s_waiting) <= tol) || t->gpu_s_frag < -tol || labels > 1 ||
        t->gpu_s_quota < -tol || t->gpu_s_reserved < -tol || t->gpu_s_blocked < -tol)
        fail_msg("waiting split: frag %.17g + quota %.17g + reserved %.17g + blocked %.17g != "
                 "waiting %.17g, a negative part, or two labels", t->gpu_s_frag, t->gpu_s_quota,
                 t->gpu_s_reserved, t->gpu_s_blocked, t->gpu_s_waiting);
    if (t->interruptions == 0 && t->preemptions == 0 && !(fabs(t->gpu_s_recovering) <= tol))
        fail_msg("held split: recovering %.17g without interruptions or preemptions",
                 t->gpu_s_recovering);
}

void fs_test_run_src(const fs_config_t *cfg, fs_source_t *src, const fs_sink_t *sink,
                     fs_run_totals_t *totals)
{
    fs_error_t err;
    fs_model_t *m;
    fs_run_totals_t t;
    if (fs_model_create(cfg, fs_policy_select(&cfg->scheduler), src, sink, &m, &err))
        fail_msg("create: %s", err.msg);
    if (fs_model_run(m, NULL, NULL, &err) || fs_model_finish(m, totals ? totals : &t, &err))
        fail_msg("run: %s", err.msg);
    fs_test_check_capstates(totals ? totals : &t);
    fs_model_destroy(m);
    fs_source_destroy(src);
}

void fs_test_run_cfg(const fs_config_t *cfg, const fs_job_t *jobs, size_t n, const fs_sink_t *sink,
                     fs_run_totals_t *totals)
{
    fs_source_t *src;
    fs_error_t err;
    if (fs_memsrc_create(jobs, n, NULL, 0, NULL, 0, &src, &err))
        fail_msg("%s", err.msg);
    fs_test_run_src(cfg, src, sink, totals);
}

void fs_test_run_yaml(const char *yaml, const fs_job_t *jobs, size_t n, const fs_sink_t *sink,
                      fs_run_totals_t *totals)
{
    fs_config_t cfg;
    fs_error_t err;
    if (fs_scenario_load_string("t.yaml", yaml, NULL, 0, &cfg, &err))
        fail_msg("%s", err.msg);
    fs_test_run_cfg(&cfg, jobs, n, sink, totals);
    fs_config_release(&cfg);
}

void fs_test_check_capstate_row(const fs_sample_row_t *prev, const fs_sample_row_t *row)
{
    /* checked when gpus_total is the same at both ends: the tests' fleets do
     * not change size inside a timeline interval */
    if (prev->gpus_total != row->gpus_total)
        return;
    double len = row->time - prev->time;
    double want = (double)row->gpus_total * len;
    double sum = row->gpu_s_busy + row->gpu_s_down + row->gpu_s_waiting + row->gpu_s_idle;
    if (!(fabs(sum - want) <= 1e-9 * (want > 1 ? want : 1)) || row->gpu_s_busy < 0 ||
        row->gpu_s_down < 0 || row->gpu_s_waiting < 0 || row->gpu_s_idle < 0)
        fail_msg("/timeline row at %.17g s: busy %.17g + down %.17g + waiting %.17g + idle %.17g "
                 "= %.17g, want %u GPUs x %.17g s = %.17g", row->time, row->gpu_s_busy,
                 row->gpu_s_down, row->gpu_s_waiting, row->gpu_s_idle, sum, row->gpus_total, len,
                 want);
    /* the held split of busy: allocated + share_idle == busy */
    double btol = 1e-9 * (row->gpu_s_busy > 1 ? row->gpu_s_busy : 1);
    if (!(fabs(row->gpu_s_allocated + row->gpu_s_share_idle - row->gpu_s_busy) <= btol) ||
        row->gpu_s_allocated < -btol || row->gpu_s_share_idle < -btol)
        fail_msg("/timeline row at %.17g s: allocated %.17g + share_idle %.17g != busy %.17g",
                 row->time, row->gpu_s_allocated, row->gpu_s_share_idle, row->gpu_s_busy);
    /* allocated = held + serving (by construction); the jobs' holds measured
     * on their own side may not exceed what the cluster allocated, and a
     * hold's parts may not exceed it */
    double htol = 1e-9 * (row->gpu_s_allocated > 1 ? row->gpu_s_allocated : 1) + 1e-6;
    if (!(row->gpu_s_serving >= -htol && row->gpu_s_recovering >= -htol &&
          row->gpu_s_computing >= -htol && row->gpu_s_ckpt >= -htol &&
          row->gpu_s_startup >= -htol && row->gpu_s_held >= -htol))
        fail_msg("/timeline row at %.17g s: held %.17g (computing %.17g + ckpt %.17g + startup "
                 "%.17g + recovering %.17g) + serving %.17g: a negative part", row->time,
                 row->gpu_s_held, row->gpu_s_computing, row->gpu_s_ckpt, row->gpu_s_startup,
                 row->gpu_s_recovering, row->gpu_s_serving);
    double wtol = 1e-9 * (row->gpu_s_waiting > 1 ? row->gpu_s_waiting : 1) + 1e-6;
    double wsum = row->gpu_s_frag + row->gpu_s_quota + row->gpu_s_reserved + row->gpu_s_blocked;
    if (!(fabs(wsum - row->gpu_s_waiting) <= wtol) || row->gpu_s_frag < -wtol ||
        row->gpu_s_frag > row->gpu_s_waiting + wtol)
        fail_msg("/timeline row at %.17g s: frag %.17g + quota %.17g + reserved %.17g + blocked "
                 "%.17g != waiting %.17g", row->time, row->gpu_s_frag, row->gpu_s_quota,
                 row->gpu_s_reserved, row->gpu_s_blocked, row->gpu_s_waiting);
}

int fs_test_collect_sample(void *ud, const fs_sample_row_t *row)
{
    fs_test_samples_t *s = ud;
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 256;
        fs_sample_row_t *p = realloc(s->r, cap * sizeof *p);
        if (!p)
            return FS_ENOMEM;
        s->r = p;
        s->cap = cap;
    }
    if (s->n > 0)
        fs_test_check_capstate_row(&s->r[s->n - 1], row);
    s->r[s->n++] = *row;
    return 0;
}

int fs_test_create(const char *yaml, fs_error_t *err)
{
    fs_config_t cfg;
    int rc = fs_scenario_load_string("t.yaml", yaml, NULL, 0, &cfg, err);
    if (rc)
        return rc;
    fs_source_t *src;
    fs_model_t *m;
    if ((rc = fs_memsrc_create(NULL, 0, NULL, 0, NULL, 0, &src, err)) == 0) {
        fs_sink_t sink = {0};
        if ((rc = fs_model_create(&cfg, fs_policy_select(&cfg.scheduler),
                                  src, &sink, &m, err)) == 0)
            fs_model_destroy(m);
        fs_source_destroy(src);
    }
    fs_config_release(&cfg);
    return rc;
}

void fs_test_expect_error(const char *yaml, const char *where, const char *what)
{
    fs_error_t err;
    int rc = fs_test_create(yaml, &err);
    assert_int_equal(rc, FS_EINVAL);
    if (!strstr(err.msg, where) || !strstr(err.msg, what))
        fail_msg("expected '%s' and '%s' in: %s", where, what, err.msg);
}

fs_job_t fs_test_job(uint64_t id, double submit_s, uint32_t gpus, double work_s)
{
    fs_job_t j;
    fs_job_init(&j);
    j.id = id;
    j.submit = fs_time_from_s(submit_s);
    j.gpus = gpus;
    j.duration = fs_time_from_s(work_s);
    return j;
}
