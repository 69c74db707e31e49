/*
 * The scenario language: YAML text -> a tree of nodes that keep their
 * positions (fs_ytree.c) -> overrides merged into the tree (fs_override.c)
 * -> the tree walked against the key table (fs_keys.c) into an fs_config_t
 * (fs_convert.c) -> presets -> cross-key rules (fs_rules.c).  This file is
 * the pipeline; fs_scnint.h describes the parts.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* getcwd */
#endif
#include "fs_scenario.h"
#include "fs_scnint.h"
#include "../sim/fs_alloc.h"
#include "../sim/fs_io.h"
#include "../models/fs_policy.h"
#include "../models/fs_slurmconf.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* Generated from scenarios/default.yaml by cmake/embed.cmake. */
extern const char fs_default_scenario_text[];

const char *fs_scenario_default_text(void)
{
    return fs_default_scenario_text;
}

#ifndef PATH_MAX
#define PATH_MAX 4096
#endif

/* ---- loading ----------------------------------------------------------------- */

/* The absolute directory of a scenario file (NULL on failure: relative
 * paths are then left relative to the working directory). */
static char *dir_of(const char *path, int *oom)
{
    const char *slash = strrchr(path, '/');
    char cwd[PATH_MAX];
    char *d;
    *oom = 0;
    if (path[0] == '/') {
        d = fs_strndup(path, slash == path ? 1 : (size_t)(slash - path));
    } else if (!getcwd(cwd, sizeof cwd)) {
        d = slash ? fs_strndup(path, (size_t)(slash - path)) : NULL;
        if (!slash)
            return NULL;
    } else if (slash) {
        size_t n = strlen(cwd) + (size_t)(slash - path) + 2;
        if ((d = fs_malloc(n)) != NULL)
            snprintf(d, n, "%s/%.*s", cwd, (int)(slash - path), path);
    } else {
        d = fs_strdup(cwd);
    }
    if (!d)
        *oom = 1;
    else if (strcmp(d, "/") == 0)
        d[0] = '\0'; /* "/" + "/" + name would double the slash */
    return d;
}

/* Whether the scenario (after overrides) gives a value at path. */
static int given_at(const fs_sctx_t *c, const char *path)
{
    const fs_ynode_t *n = fs_yt_get(c->root, path);
    return n && !fs_yt_is_null(n);
}

/* scheduler.preset: fills the keys the scenario does not give (a key given
 * in the file or by --set wins).  The dump writes every key, so a dumped
 * config loads back the same. */
static int apply_preset(fs_sctx_t *c)
{
    fs_sched_cfg_t *s = &c->cfg->scheduler;
    if (s->preset != FS_PRESET_TIRESIAS)
        return 0;
    if (!given_at(c, "scheduler.queue"))
        s->queue = FS_QUEUE_LAS;
    else if (s->queue != FS_QUEUE_LAS)
        return fs_yt_fail(c, fs_yt_get(c->root, "scheduler.queue"),
                          "scheduler.queue: preset 'tiresias' is Tiresias 2D-LAS: expected 'las' (or no "
                          "scheduler.queue), or another scheduler.preset");
    if (!given_at(c, "scheduler.tiresias.thresholds")) {
        char *t = fs_strdup(FS_TIRESIAS_THRESHOLDS);
        if (!t)
            return fs_yt_nomem(c);
        fs_free(s->tiresias.thresholds);
        s->tiresias.thresholds = t;
    }
    if (!given_at(c, "scheduler.checkpoint_interval"))
        s->checkpoint_interval = 1;   /* 1 us: a preempted job keeps all its work */
    if (!given_at(c, "scheduler.tiresias.promote_knob"))
        s->tiresias.promote_knob = FS_TIRESIAS_PROMOTE_KNOB;
    return 0;
}

static int given_cb(void *ud, const char *key) { return given_at(ud, key); }

/* scheduler.slurm.conf: the site's slurm.conf fills the Slurm keys the
 * scenario does not give (models/fs_slurmconf.h). */
static int apply_slurm_conf(fs_sctx_t *c)
{
    const char *p = c->cfg->scheduler.slurm.conf;
    return p ? fs_slurmconf_apply(p, c->cfg, given_cb, c, NULL, c->err) : 0;
}

/* cluster.autoscale.provisioner karpenter: a node group that gives no
 * `provision` gets Karpenter's Ready time (a group's own value wins). */
static int apply_karpenter(fs_sctx_t *c)
{
    fs_autoscale_cfg_t *ac = &c->cfg->cluster.autoscale;
    if (ac->provisioner != FS_PROV_KARPENTER)
        return 0;
    for (size_t i = 0; i < ac->n_groups; i++) {
        char path[96];
        snprintf(path, sizeof path, "cluster.autoscale.node_groups.%zu.provision", i);
        if (!given_at(c, path))
            ac->groups[i].provision = FS_KARPENTER_PROVISION_US;
    }
    return 0;
}

static int load(const char *name, const char *path_for_dir, const char *text, size_t len,
                const char *const *overrides, size_t n, fs_config_t *cfg, fs_error_t *err)
{
    fs_sctx_t c = {.file = name, .ovr = overrides, .n_ovr = n, .err = err, .cfg = cfg};
    unsigned char *seen = NULL;
    int rc;
    fs_config_init(cfg);
    if ((rc = fs_keys_defaults(&fs_keys_config, cfg, err)) != 0) {
        if (rc == FS_ENOMEM)
            fs_yt_nomem(&c);
        goto out;
    }
    if (path_for_dir) {
        int oom;
        c.dir = dir_of(path_for_dir, &oom);
        if (oom) {
            rc = fs_yt_nomem(&c);
            goto out;
        }
    }
    if (!(cfg->source_path = fs_strdup(name)) || !(cfg->source_text = fs_strndup(text, len)) ||
        !(seen = fs_calloc(fs_keys_config.n, 1))) {
        rc = fs_yt_nomem(&c);
        goto out;
    }
    if ((rc = fs_yt_parse(&c, text, len, 0, &c.root)) != 0)
        goto out;
    if (fs_yt_is_null(c.root)) {
        char list[512];
        fs_conv_children(&fs_keys_config, "", list, sizeof list);
        rc = fs_yt_fail(&c, NULL, "the scenario is empty (expected keys such as: %s)", list);
        goto out;
    }
    if (c.root->kind != FS_YT_MAP) {
        rc = fs_yt_fail(&c, c.root, "expected a block of keys at the top level, found %s", fs_yt_kind_text(c.root));
        goto out;
    }
    for (size_t i = 0; i < n; i++)
        if ((rc = fs_ovr_apply(&c, i)) != 0)
            goto out;
    if ((rc = fs_conv_block(&c, &fs_keys_config, c.root, "", "", cfg, seen)) != 0 ||
        (rc = fs_conv_required(&c, &fs_keys_config, seen, c.root, "")) != 0 ||
        (rc = apply_slurm_conf(&c)) != 0 || (rc = apply_preset(&c)) != 0 || (rc = apply_karpenter(&c)) != 0 || (rc = fs_rules_check(&c)) != 0)
        goto out;
out:
    fs_yt_free(c.root);
    fs_free(c.dir);
    fs_free(seen);
    if (rc)
        fs_config_release(cfg);
    return rc;
}

int fs_scenario_load_string(const char *name, const char *text, const char *const *overrides,
                            size_t n, fs_config_t *cfg, fs_error_t *err)
{
    fs_error_clear(err);
    return load(name ? name : "<string>", NULL, text, strlen(text), overrides, n, cfg, err);
}

int fs_scenario_load_file(const char *path, const char *const *overrides, size_t n,
                          fs_config_t *cfg, fs_error_t *err)
{
    fs_error_clear(err);
    /* at most FS_IO_TEXT_MAX bytes: /dev/zero or a runaway pipe is refused,
     * not read for ever */
    char *buf = NULL;
    size_t len = 0;
    int rc = fs_io_read_text(path, "scenario", FS_IO_TEXT_MAX, &buf, &len, err);
    if (rc) {
        fs_config_init(cfg);
        fs_config_release(cfg);
        return rc;
    }
    if (memchr(buf, '\0', len)) {
        fs_free(buf);
        fs_config_init(cfg);
        fs_config_release(cfg);
        return fs_error_set(err, FS_EINVAL, "%s: not a text file (it holds NUL bytes)", path);
    }
    rc = load(path, path, buf, len, overrides, n, cfg, err);
    fs_free(buf);
    return rc;
}
/* ---- the files a run reads ------------------------------------------------------------------ */

static void add_input(const char **in, size_t *n, size_t cap, const char *p)
{
    if (p && *p && *n < cap)
        in[(*n)++] = p;
}

void fs_scenario_inputs(const fs_config_t *cfg, const char **in, size_t *n, size_t cap)
{
    add_input(in, n, cap, cfg->source_path);
    if (cfg->workload.kind == FS_WORKLOAD_TRACE)
        add_input(in, n, cap, cfg->workload.trace.path);
    if (cfg->cluster.from.given)
        add_input(in, n, cap, cfg->cluster.from.path);
    add_input(in, n, cap, cfg->scheduler.kueue.manifests);
    add_input(in, n, cap, cfg->scheduler.slurm.conf);
    add_input(in, n, cap, cfg->cluster.outages);
    add_input(in, n, cap, cfg->cost.carbon_series);
    for (size_t i = 0; i < cfg->services.n; i++) {
        const fs_service_cfg_t *c = &cfg->services.list[i];
        add_input(in, n, cap, c->trace);
        for (size_t k = 0; k < c->n_perf; k++)
            add_input(in, n, cap, c->perf[k].profile);
    }
}
