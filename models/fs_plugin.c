/*
 * fs_plugin: a scheduling policy from a shared object (scheduler.plugin;
 * the ABI is fs_plugin_abi.h, the plugin part of the public fleetsim.h;
 * docs/library.md).  The adapter is an fs_policy_ops_t: the model's
 * calls go to the plugin's table, the plugin's calls to the host table
 * below.  A job's handle is its model slot.
 */
#include "fs_policy.h"
#include "fs_plugin_abi.h"
#include "../sim/fs_alloc.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

typedef struct plug {
    void *dl;
    const fleetsim_policy *p;
    void *st;
    fleetsim_host host;
    fs_model_t *m;
    char why[200];          /* the last host action refused in this callback ("" none) */
} plug_t;

/* The name the errors give the plugin's policy. */
static const char *plug_name(const plug_t *pl)
{
    return pl->p && pl->p->name && pl->p->name[0] ? pl->p->name : "plugin";
}

/* The host refuses an action on job `handle`: FS_EINVAL, and what was asked
 * is kept for the error of the callback (pass, timer) should it fail. */
static int refuse(plug_t *pl, uint32_t handle, const char *act, const char *want)
{
    static const char *const state[] = {"no job", "queued", "running", "recovering"};
    const fs_jobrt_t *j = handle < fs_model_slots(pl->m) ? fs_model_job(pl->m, handle) : NULL;
    if (!j || j->state == FS_JOBRT_FREE)
        snprintf(pl->why, sizeof pl->why, "handle %u: plugin asked to %s a job, but the handle "
                 "names no job", handle, act);
    else
        snprintf(pl->why, sizeof pl->why, "job %llu: plugin asked to %s a job that is not %s (it "
                 "is %s)", (unsigned long long)j->job.id, act, want,
                 j->state <= FS_JOBRT_RECOVERING ? state[j->state] : "in an unknown state");
    return FS_EINVAL;
}

/* A callback of the plugin failed with rc: the run's error says where
 * (scheduling pass, policy timer), which policy, and what: the refused
 * host action, or what the callback returned. */
static int plug_fail(plug_t *pl, fs_model_t *m, const char *where, int rc)
{
    int code = rc < 0 ? rc : FS_EINTERNAL;
    fs_error_t e;
    fs_error_clear(&e);
    if (pl->why[0])
        fs_error_set(&e, code, "%s (policy %s): %s", where, plug_name(pl), pl->why);
    else if (rc > 0)
        fs_error_set(&e, code, "%s (policy %s): the plugin returned %d (0, or a negative error "
                     "code, expected)", where, plug_name(pl), rc);
    else
        fs_error_set(&e, code, "%s (policy %s): the plugin returned %d (%s)", where, plug_name(pl),
                     rc, fs_error_describe(code));
    fs_model_error(m, &e);
    pl->why[0] = '\0';
    return code;
}

/* Before the run (the scenario's check creates the policy once with no
 * model) the host's reads answer 0 and its actions refuse. */
static double h_now(void *sim)
{
    const plug_t *pl = sim;
    return pl->m ? fs_time_to_s(fs_model_now(pl->m)) : 0.0;
}

static int h_job(void *sim, uint32_t handle, fleetsim_job_info *out)
{
    plug_t *pl = sim;
    if (!pl->m || handle >= fs_model_slots(pl->m))
        return -1;
    const fs_jobrt_t *j = fs_model_job(pl->m, handle);
    if (j->state == FS_JOBRT_FREE)
        return -1;
    *out = (fleetsim_job_info){.id = j->job.id, .submit_s = fs_time_to_s(j->job.submit),
                               .duration_s = fs_time_to_s(j->job.duration),
                               .estimate_s = j->job.estimate < 0 ? -1 : fs_time_to_s(j->job.estimate),
                               .remaining_s = fs_time_to_s(fs_model_remaining(pl->m, handle)),
                               .gpus = j->job.gpus, .gpu_milli = j->job.gpu_milli,
                               .tenant = j->job.tenant, .priority = j->job.priority,
                               .job_class = j->job.job_class, .restarts = fs_jobrt_restarts(j)};
    return 0;
}

static int h_start(void *sim, uint32_t handle)
{
    plug_t *pl = sim;
    if (!pl->m)
        return FS_EINVAL;
    if (handle >= fs_model_slots(pl->m) || fs_model_job(pl->m, handle)->state != FS_JOBRT_QUEUED)
        return refuse(pl, handle, "start", "queued");
    return fs_model_start(pl->m, handle);
}

static int h_preempt(void *sim, uint32_t handle)
{
    plug_t *pl = sim;
    if (!pl->m)
        return FS_EINVAL;
    if (handle >= fs_model_slots(pl->m) || fs_model_job(pl->m, handle)->state != FS_JOBRT_RUNNING)
        return refuse(pl, handle, "preempt", "running");
    return fs_model_preempt(pl->m, handle);
}

static int h_timer(void *sim, double at_s, uint64_t data)
{
    plug_t *pl = sim;
    if (!pl->m)
        return FS_EINVAL;
    if (at_s != at_s) {     /* NaN */
        snprintf(pl->why, sizeof pl->why, "plugin set a timer at NaN seconds");
        return FS_EINVAL;
    }
    if (!(at_s < 9.2e12))         /* beyond what fs_time_t holds: never */
        return 0;
    fs_time_t now = fs_model_now(pl->m);
    fs_time_t at = at_s > fs_time_to_s(now) ? fs_time_from_s(at_s) : now;
    return fs_model_timer(pl->m, at < now ? now : at, data, NULL);
}

static uint64_t h_up(void *sim)
{
    const plug_t *pl = sim;
    return pl->m ? fs_model_cluster(pl->m)->gpus_up : 0;
}

static uint64_t h_free(void *sim)
{
    const plug_t *pl = sim;
    if (!pl->m)
        return 0;
    const fs_cluster_t *c = fs_model_cluster(pl->m);
    uint64_t f = 0;
    for (uint32_t p = 0; p < c->n_pools; p++)
        f += c->pools[p].gpus_free;
    return f;
}

static void plug_free(plug_t *pl)
{
    if (!pl)
        return;
    if (pl->p && pl->st && pl->p->destroy)
        pl->p->destroy(pl->st);
    if (pl->dl)
        dlclose(pl->dl);
    fs_free(pl);
}

/* Opens the plugin of cfg and creates its state (m may be NULL: a check). */
static int plug_open(const fs_sched_cfg_t *cfg, fs_model_t *m, plug_t **out, char *key, size_t keylen,
                     fs_error_t *err)
{
    *out = NULL;
    plug_t *pl = fs_calloc(1, sizeof *pl);
    if (!pl)
        return fs_error_set(err, FS_ENOMEM, "scheduler.plugin: out of memory");
    const char *path = cfg->plugin_table ? "the table given to fleetsim_scenario_set_policy"
                                         : cfg->plugin_path;
    if (key && keylen)
        snprintf(key, keylen, "scheduler.plugin.path");
    const fleetsim_policy *p = cfg->plugin_table;
    if (!p) {   /* a shared object */
        if (!(pl->dl = dlopen(path, RTLD_NOW | RTLD_LOCAL))) {
            const char *why = dlerror();
            plug_free(pl);
            return fs_error_set(err, FS_EINVAL, "scheduler.plugin.path: cannot load '%s': %s",
                                path, why ? why : "unknown error");
        }
        fleetsim_policy_entry_fn entry;
        *(void **)&entry = dlsym(pl->dl, "fleetsim_policy_entry");
        if (!entry) {
            plug_free(pl);
            return fs_error_set(err, FS_EINVAL, "scheduler.plugin.path: '%s' exports no "
                                "fleetsim_policy_entry (docs/library.md)", path);
        }
        p = entry();
    }
    if (!p || p->abi < 1 || p->abi > FLEETSIM_POLICY_ABI || !p->create || !p->enqueue ||
        !p->pass || !p->queued) {
        plug_free(pl);
        return fs_error_set(err, FS_EINVAL, "scheduler.plugin.path: '%s' is not a policy of ABI "
                            "1 to %d (abi %u; create, enqueue, pass and queued are required)", path,
                            FLEETSIM_POLICY_ABI, p ? p->abi : 0);
    }
    pl->p = p;
    pl->m = m;
    /* the plugin's own ABI: an ABI 1 plugin sees the host it was built for */
    pl->host = (fleetsim_host){.abi = p->abi, .sim = pl, .now = h_now, .job = h_job,
                               .start = h_start, .free_gpus = h_free};
    if (p->abi >= 2) {
        pl->host.preempt = h_preempt;
        pl->host.timer = h_timer;
        pl->host.gpus_up = h_up;
    }
    char msg[512] = "";
    if (p->create(&pl->host, (const char *const *)cfg->plugin_opt_keys,
                  (const char *const *)cfg->plugin_opt_vals, cfg->n_plugin_opts, &pl->st, msg,
                  sizeof msg) != 0) {
        pl->st = NULL;
        if (key && keylen)
            snprintf(key, keylen, "scheduler.plugin.options");
        /* the message before dlclose: the name lives in the plugin */
        fs_error_set(err, FS_EINVAL, "scheduler.plugin.options: policy '%s' refused them: %s",
                     p->name ? p->name : "?", msg[0] ? msg : "(no message)");
        plug_free(pl);
        return FS_EINVAL;
    }
    *out = pl;
    return 0;
}

static int pl_check(const fs_config_t *cfg, char *key, size_t keylen, fs_error_t *err)
{
    plug_t *pl;
    int rc = plug_open(&cfg->scheduler, NULL, &pl, key, keylen, err);
    plug_free(pl);
    return rc;
}

static int pl_create(fs_model_t *m, const fs_sched_cfg_t *cfg, void **state, fs_error_t *err)
{
    plug_t *pl;
    int rc = plug_open(cfg, m, &pl, NULL, 0, err);
    *state = pl;
    return rc;
}

static void pl_destroy(void *state) { plug_free(state); }

static int pl_enqueue(void *state, fs_model_t *m, uint32_t slot)
{
    (void)m;
    plug_t *pl = state;
    return pl->p->enqueue(pl->st, slot) < 0 ? FS_ENOMEM : 0;
}

static int pl_pass(void *state, fs_model_t *m)
{
    plug_t *pl = state;
    pl->why[0] = '\0';
    int rc = pl->p->pass(pl->st);
    return rc == 0 ? 0 : plug_fail(pl, m, "scheduling pass", rc);
}

static size_t pl_queued(const void *state)
{
    const plug_t *pl = state;
    return pl->p->queued(pl->st);
}

static void pl_job_end(void *state, fs_model_t *m, uint32_t slot)
{
    (void)m;
    plug_t *pl = state;
    if (pl->p->job_end)
        pl->p->job_end(pl->st, slot);
}

static int pl_timer(void *state, fs_model_t *m, uint64_t data)
{
    plug_t *pl = state;
    if (pl->p->abi < 2 || !pl->p->timer)
        return 0;
    pl->why[0] = '\0';
    int rc = pl->p->timer(pl->st, data);
    return rc == 0 ? 0 : plug_fail(pl, m, "policy timer", rc);
}

const fs_policy_ops_t fs_policy_plugin = {
    .name = "plugin",
    .check = pl_check,
    .create = pl_create,
    .destroy = pl_destroy,
    .enqueue = pl_enqueue,
    .pass = pl_pass,
    .queued = pl_queued,
    .job_end = pl_job_end,
    .job_interrupted = pl_job_end,
    .timer = pl_timer,
};
