/*
 * fs_plugin: a scheduling policy from a shared object (scheduler.plugin;
 * the ABI is fs_plugin_abi.h, the plugin part of the public fleetsim.h;
 * docs/library.md).  The adapter is an fs_policy_ops_t: the model's
 * calls go to the plugin's table, the plugin's calls to the host table
 * below.  A job's handle is its model slot.
 */
#include "fs_policy.h"
#include "fs_place.h"
#include "fs_plugin_abi.h"
#include "../sim/fs_alloc.h"

#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <poll.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct plug {
    void *dl;
    const fleetsim_policy *p;
    void *st;
    fleetsim_host host;
    fs_model_t *m;
    uint32_t *pools;        /* start_in: the pools asked that the job may use */
    size_t cap_pools;
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

/* ABI 3: the job's speed factor on the first pool of GPU model (or name)
 * gpu; the cluster.speed rule of the placer (fs_speed_factor). */
static double h_speed(void *sim, uint32_t handle, const char *gpu)
{
    plug_t *pl = sim;
    if (!pl->m || !gpu || handle >= fs_model_slots(pl->m))
        return -1;
    const fs_jobrt_t *j = fs_model_job(pl->m, handle);
    if (j->state == FS_JOBRT_FREE)
        return -1;
    const fs_cluster_t *c = fs_model_cluster(pl->m);
    for (uint32_t p = 0; p < c->n_pools; p++)
        if (strcasecmp(c->pools[p].gpu, gpu) == 0 || strcasecmp(c->pools[p].name, gpu) == 0)
            return fs_speed_factor(c, &fs_model_config(pl->m)->cluster, p, j->job.job_class);
    return -1;
}

static uint32_t h_pools(void *sim)
{
    const plug_t *pl = sim;
    return pl->m ? fs_model_cluster(pl->m)->n_pools : 0;
}

static int h_pool(void *sim, uint32_t i, fleetsim_pool_info *out)
{
    const plug_t *pl = sim;
    if (!pl->m || !out || i >= fs_model_cluster(pl->m)->n_pools)
        return -1;
    const fs_pool_t *p = &fs_model_cluster(pl->m)->pools[i];
    *out = (fleetsim_pool_info){.name = p->name, .gpu = p->gpu, .first_node = p->first_node,
                                .nodes = p->n_nodes,
                                .gpus_per_node = p->gpn, .gpus_free = p->gpus_free,
                                .gpus_up = p->gpus_up};
    return 0;
}

/* Is handle a waiting job of the run? */
static int waiting(const plug_t *pl, uint32_t handle)
{
    return pl->m && handle < fs_model_slots(pl->m) &&
           fs_model_job(pl->m, handle)->state == FS_JOBRT_QUEUED;
}

/* Appends pool p to pl->pools (k of them so far) if the job may use it
 * and it is not there yet. */
static void pool_add(plug_t *pl, const uint32_t *allowed, size_t n_allowed, uint32_t p, size_t *k)
{
    int ok = !allowed;
    for (size_t a = 0; allowed && a < n_allowed && !ok; a++)
        ok = allowed[a] == p;
    for (size_t d = 0; d < *k && ok; d++)
        ok = pl->pools[d] != p;
    if (ok)
        pl->pools[(*k)++] = p;
}

/* ABI 3: start in the asked pools that the job may use (its GPU type's
 * pool set), in the order asked; duplicates dropped. */
static int h_start_in(void *sim, uint32_t handle, const uint32_t *pools, size_t n)
{
    plug_t *pl = sim;
    if (!waiting(pl, handle) || (n && !pools))
        return FS_EINVAL;
    uint32_t n_all = fs_model_cluster(pl->m)->n_pools;
    for (size_t i = 0; i < n; i++)
        if (pools[i] >= n_all)
            return FS_EINVAL;
    const uint32_t *allowed;
    size_t n_allowed = fs_model_job_pools(pl->m, handle, &allowed);
    if (fs_grow((void **)&pl->pools, &pl->cap_pools, n ? n : 1, sizeof *pl->pools))
        return FS_ENOMEM;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        pool_add(pl, allowed, n_allowed, pools[i], &k);
    return fs_model_start_in(pl->m, handle, pl->pools, k);
}

/* ABI 3: start on the first of the given nodes where the job fits: the
 * model starts it in those nodes' pools while a node pin
 * (fs_placer_pin) makes the placer take the first node that fits. */
static int h_place(void *sim, uint32_t handle, const uint32_t *nodes, size_t n)
{
    plug_t *pl = sim;
    if (!waiting(pl, handle) || (n && !nodes))
        return FS_EINVAL;
    const fs_cluster_t *c = fs_model_cluster(pl->m);
    const fs_jobrt_t *j = fs_model_job(pl->m, handle);
    if (j->job.mig)
        return FS_EINVAL;   /* MIG pods are placed by profile: start or start_in */
    int one_fits = 0;
    for (size_t i = 0; i < n; i++) {
        if (nodes[i] >= c->n_nodes)
            return FS_EINVAL;
        one_fits |= j->job.gpus <= c->pools[c->node_pool[nodes[i]]].gpn;
    }
    if (n && !one_fits)
        return FS_EINVAL;   /* larger than every node given: a gang, start_in places it */
    const uint32_t *allowed;
    size_t n_allowed = fs_model_job_pools(pl->m, handle, &allowed);
    if (fs_grow((void **)&pl->pools, &pl->cap_pools, n ? n : 1, sizeof *pl->pools))
        return FS_ENOMEM;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        pool_add(pl, allowed, n_allowed, c->node_pool[nodes[i]], &k);
    fs_place_pin_t pin = {.nodes = nodes, .n = n};
    fs_placer_t *placer = fs_model_placer(pl->m);
    const fs_place_pin_t *prev = fs_placer_pin(placer, &pin);
    int rc = fs_model_start_in(pl->m, handle, pl->pools, k);
    fs_placer_pin(placer, prev);
    return rc;
}

static int64_t h_node_free(void *sim, uint32_t node)
{
    const plug_t *pl = sim;
    if (!pl->m || node >= fs_model_cluster(pl->m)->n_nodes || !fs_model_node_in_service(pl->m, node))
        return -1;
    return fs_model_cluster(pl->m)->node_free[node];
}

static void plug_free(plug_t *pl)
{
    if (!pl)
        return;
    if (pl->p && pl->st && pl->p->destroy)
        pl->p->destroy(pl->st);
    if (pl->dl)
        dlclose(pl->dl);
    fs_free(pl->pools);
    fs_free(pl);
}

/* Why table p cannot be used (NULL: it can): read before the library that
 * holds it is closed.  buf: n bytes. */
static const char *table_fault(const fleetsim_policy *p, char *buf, size_t n)
{
    if (!p)
        return "fleetsim_policy_entry returned no table (NULL)";
    if (p->abi < FLEETSIM_POLICY_ABI_MIN || p->abi > FLEETSIM_POLICY_ABI) {
        snprintf(buf, n, "ABI %u, this fleetsim loads ABI %d to %d", p->abi, FLEETSIM_POLICY_ABI_MIN,
                 FLEETSIM_POLICY_ABI);
        return buf;
    }
    const char *missing = !p->create ? "create" : !p->enqueue ? "enqueue" : !p->pass ? "pass"
                          : !p->queued ? "queued" : NULL;
    if (!missing)
        return NULL;
    snprintf(buf, n, "no `%s` function (create, enqueue, pass and queued are required)", missing);
    return buf;
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
    char why[160];
    const char *fault = table_fault(p, why, sizeof why);
    if (fault) {    /* the message first: the table lives in the library */
        fs_error_set(err, FS_EINVAL, "scheduler.plugin.path: %s: %s", path, fault);
        plug_free(pl);
        return FS_EINVAL;
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
    if (p->abi >= 3) {
        pl->host.speed = h_speed;
        pl->host.pools = h_pools;
        pl->host.pool = h_pool;
        pl->host.start_in = h_start_in;
        pl->host.place = h_place;
        pl->host.node_free = h_node_free;
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

/* The answer of a probe's child (check_forked), through a pipe. */
typedef struct probe_msg {
    int rc;
    char key[64];
    char msg[FS_ERROR_MSG_MAX];
} probe_msg_t;

static const char *signal_name(int sig)
{
    switch (sig) {
    case SIGSEGV: return "SIGSEGV";
    case SIGBUS: return "SIGBUS";
    case SIGILL: return "SIGILL";
    case SIGFPE: return "SIGFPE";
    case SIGABRT: return "SIGABRT";
    case SIGTRAP: return "SIGTRAP";
    case SIGKILL: return "SIGKILL";
    case SIGSYS: return "SIGSYS";
    default: return NULL;
    }
}

static int check_here(const fs_config_t *cfg, char *key, size_t keylen, fs_error_t *err)
{
    plug_t *pl;
    int rc = plug_open(&cfg->scheduler, NULL, &pl, key, keylen, err);
    plug_free(pl);
    return rc;
}

/* How long the parent waits for the child's answer (ms).  A child that
 * does not answer in time (a lock another thread of the parent held at the
 * fork, a create that takes that long) is killed and the check is made here
 * instead, as without fork. */
#define PROBE_WAIT_MS 60000

/* A shared object is checked in a forked child (dlopen, the entry, the
 * table, create and destroy): C cannot check a wild pointer a plugin hands
 * back, so a plugin that crashes while loading crashes the child, and the
 * check says so instead of the program dying.  Without fork (it fails), the
 * check runs here. */
static int check_forked(const fs_config_t *cfg, char *key, size_t keylen, fs_error_t *err)
{
    int fd[2];
    if (pipe(fd) != 0)
        return check_here(cfg, key, keylen, err);
    pid_t pid = fork();
    if (pid < 0) {
        close(fd[0]);
        close(fd[1]);
        return check_here(cfg, key, keylen, err);
    }
    if (pid == 0) {     /* the child: the check, its answer, _exit */
        close(fd[0]);
        probe_msg_t a = {0};
        fs_error_t e;
        fs_error_clear(&e);
        a.rc = check_here(cfg, a.key, sizeof a.key, &e);
        snprintf(a.msg, sizeof a.msg, "%s", e.msg);
        const char *b = (const char *)&a;
        size_t left = sizeof a;
        while (left) {
            ssize_t w = write(fd[1], b, left);
            if (w < 0 && errno == EINTR)
                continue;
            if (w <= 0)
                _exit(3);
            b += w;
            left -= (size_t)w;
        }
        _exit(0);
    }
    close(fd[1]);
    probe_msg_t a;
    size_t got = 0;
    int late = 0;
    while (got < sizeof a) {
        struct pollfd pf = {.fd = fd[0], .events = POLLIN};
        int pr = poll(&pf, 1, PROBE_WAIT_MS);
        if (pr < 0 && errno == EINTR)
            continue;
        if (pr == 0) {
            late = 1;
            break;
        }
        ssize_t r = read(fd[0], (char *)&a + got, sizeof a - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    close(fd[0]);
    if (late)
        kill(pid, SIGKILL);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (late)
        return check_here(cfg, key, keylen, err);
    if (key && keylen)
        snprintf(key, keylen, "scheduler.plugin.path");
    const char *path = cfg->scheduler.plugin_path;
    if (WIFSIGNALED(status)) {
        const char *name = signal_name(WTERMSIG(status));
        if (name)
            return fs_error_set(err, FS_EINVAL, "scheduler.plugin.path: %s: crashed while loading (%s)",
                                path, name);
        return fs_error_set(err, FS_EINVAL, "scheduler.plugin.path: %s: crashed while loading "
                            "(signal %d)", path, WTERMSIG(status));
    }
    if (got != sizeof a || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return fs_error_set(err, FS_EINVAL, "scheduler.plugin.path: %s: exited while loading "
                            "(status %d)", path, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    if (a.rc == 0)
        return 0;
    a.key[sizeof a.key - 1] = '\0';
    a.msg[sizeof a.msg - 1] = '\0';
    if (key && keylen)
        snprintf(key, keylen, "%s", a.key);
    return fs_error_set(err, a.rc, "%s", a.msg);
}

static int pl_check(const fs_config_t *cfg, char *key, size_t keylen, fs_error_t *err)
{
    if (cfg->scheduler.plugin_table)     /* a table in this process: nothing to load */
        return check_here(cfg, key, keylen, err);
    return check_forked(cfg, key, keylen, err);
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
