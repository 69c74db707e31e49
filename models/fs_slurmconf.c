/*
 * fs_slurmconf: the modelled settings of a site's slurm.conf
 * (fs_slurmconf.h).
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* strncasecmp */
#endif
#include "fs_slurmconf.h"
#include "../sim/fs_alloc.h"
#include "../sim/fs_io.h"
#include "../traces/fs_sacct.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

enum kind { K_U32, K_TIME, K_BOOL, K_PRIORITY_TYPE, K_SCHED_TYPE, K_SCHED_PARAMS };

typedef struct setting {
    const char *conf;   /* slurm.conf key */
    int kind;
    const char *key;    /* the scenario key it sets */
    size_t off;         /* in fs_config_t */
} setting_t;

#define SC(f) offsetof(fs_config_t, f)

static const setting_t settings[] = {
    {"PriorityWeightAge", K_U32, "scheduler.slurm.weight_age", SC(scheduler.slurm.weight_age)},
    {"PriorityWeightFairshare", K_U32, "scheduler.slurm.weight_fairshare",
     SC(scheduler.slurm.weight_fairshare)},
    {"PriorityWeightJobSize", K_U32, "scheduler.slurm.weight_jobsize",
     SC(scheduler.slurm.weight_jobsize)},
    {"PriorityWeightPartition", K_U32, "scheduler.slurm.weight_partition",
     SC(scheduler.slurm.weight_partition)},
    {"PriorityWeightQOS", K_U32, "scheduler.slurm.weight_qos", SC(scheduler.slurm.weight_qos)},
    {"PriorityDecayHalfLife", K_TIME, "scheduler.slurm.decay_half_life",
     SC(scheduler.slurm.decay_half_life)},
    {"PriorityMaxAge", K_TIME, "scheduler.slurm.max_age", SC(scheduler.slurm.max_age)},
    {"PriorityCalcPeriod", K_TIME, "scheduler.slurm.calc_period",
     SC(scheduler.slurm.calc_period)},
    {"PriorityFavorSmall", K_BOOL, "scheduler.slurm.favor_small", SC(scheduler.slurm.favor_small)},
    {"PriorityType", K_PRIORITY_TYPE, "scheduler.queue", SC(scheduler.queue)},
    {"SchedulerType", K_SCHED_TYPE, "scheduler.backfill", SC(scheduler.backfill)},
    {"SchedulerParameters", K_SCHED_PARAMS, NULL, 0},
};

/* bf_* options of SchedulerParameters: unit (seconds per count) and target. */
static const struct {
    const char *name;
    double unit_s;      /* 0: a count */
    const char *key;
    size_t off;
    fs_time_t min_us;   /* smallest accepted */
} bf_opts[] = {
    {"bf_max_job_test", 0, "scheduler.bf.max_job_test", SC(scheduler.bf.max_job_test), 1},
    {"bf_interval", 1, "scheduler.bf.interval", SC(scheduler.bf.interval), 1},
    {"bf_resolution", 1, "scheduler.bf.resolution", SC(scheduler.bf.resolution), 1},
    {"bf_window", 60, "scheduler.bf.window", SC(scheduler.bf.window), 1},
};

typedef struct ctx {
    const char *path;
    fs_config_t *cfg;
    int (*given)(void *ud, const char *key);
    void *ud;
    size_t n_set;
    fs_error_t *err;
} ctx_t;

static int bad(ctx_t *c, size_t line, size_t col, const char *key, const char *expected,
               const char *v, size_t vn)
{
    return fs_error_set(c->err, FS_EINVAL, "%s:%zu:%zu: %s: expected %s (got '%.*s')", c->path,
                        line, col, key, expected, (int)(vn < 80 ? vn : 80), v);
}

/* v[0..vn) is lit, ignoring case. */
static int eqi(const char *v, size_t vn, const char *lit)
{
    return strlen(lit) == vn && strncasecmp(v, lit, vn) == 0;
}

static int want(ctx_t *c, const char *key)
{
    return !c->given || !c->given(c->ud, key);
}

static int u64_of(const char *s, size_t n, uint64_t *out)
{
    if (n == 0 || n > 19)
        return -1;
    uint64_t x = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        x = x * 10 + (uint64_t)(s[i] - '0');
    }
    *out = x;
    return 0;
}

/* SchedulerParameters: comma-separated options; the bf_* ones modelled. */
static int sched_params(ctx_t *c, size_t line, size_t col, const char *v, size_t vn)
{
    size_t i = 0;
    while (i < vn) {
        size_t j = i;
        while (j < vn && v[j] != ',')
            j++;
        const char *o = v + i;
        size_t on = j - i;
        const char *eq = memchr(o, '=', on);
        size_t kn = eq ? (size_t)(eq - o) : on;
        for (size_t k = 0; k < sizeof bf_opts / sizeof bf_opts[0]; k++) {
            if (strlen(bf_opts[k].name) != kn || strncasecmp(o, bf_opts[k].name, kn) != 0)
                continue;
            uint64_t x;
            size_t at = col + i + kn + 1;
            char what[96];
            snprintf(what, sizeof what, "%s=N with N an integer >= %lld%s", bf_opts[k].name,
                     (long long)bf_opts[k].min_us,
                     bf_opts[k].unit_s == 60 ? " (minutes)" : bf_opts[k].unit_s == 1
                                                                  ? " (seconds)" : "");
            if (!eq || u64_of(eq + 1, on - kn - 1, &x) || x < (uint64_t)bf_opts[k].min_us ||
                x > (bf_opts[k].unit_s ? (uint64_t)(FS_TIME_MAX_INPUT / FS_US_PER_S / 60)
                                       : UINT32_MAX))
                return bad(c, line, eq ? at : col + i, "SchedulerParameters", what,
                           eq ? eq + 1 : o, eq ? on - kn - 1 : on);
            if (!want(c, bf_opts[k].key))
                break;
            char *base = (char *)c->cfg + bf_opts[k].off;
            if (bf_opts[k].unit_s == 0) {
                uint32_t u = (uint32_t)x;
                memcpy(base, &u, sizeof u);
            } else {
                fs_time_t t = (fs_time_t)(x * (uint64_t)bf_opts[k].unit_s) * FS_US_PER_S;
                memcpy(base, &t, sizeof t);
            }
            c->n_set++;
            break;
        }
        i = j + 1;
    }
    return 0;
}

/* One KEY=VALUE (the line's first): applied when modelled. */
static int setting(ctx_t *c, size_t line, size_t col, const char *k, size_t kn, const char *v,
                   size_t vn, size_t vcol)
{
    const setting_t *s = NULL;
    for (size_t i = 0; i < sizeof settings / sizeof settings[0]; i++)
        if (strlen(settings[i].conf) == kn && strncasecmp(settings[i].conf, k, kn) == 0)
            s = &settings[i];
    (void)col;
    if (!s)
        return 0;           /* not modelled */
    char *base = (char *)c->cfg + s->off;
    switch (s->kind) {
    case K_U32: {
        uint64_t x;
        if (u64_of(v, vn, &x) || x > UINT32_MAX)
            return bad(c, line, vcol, s->conf, "an integer from 0 to 4294967295", v, vn);
        if (want(c, s->key)) {
            uint32_t u = (uint32_t)x;
            memcpy(base, &u, sizeof u);
            c->n_set++;
        }
        return 0;
    }
    case K_TIME: {
        fs_time_t t;
        if (fs_slurm_time(v, vn, &t) ||
            (t == 0 && strcmp(s->conf, "PriorityDecayHalfLife") != 0))
            return bad(c, line, vcol, s->conf,
                       strcmp(s->conf, "PriorityDecayHalfLife") == 0
                           ? "a Slurm time (minutes, H:M:S, D-H, D-H:M:S; 0: no decay)"
                           : "a Slurm time > 0 (minutes, H:M:S, D-H, D-H:M:S)", v, vn);
        if (want(c, s->key)) {
            memcpy(base, &t, sizeof t);
            c->n_set++;
        }
        return 0;
    }
    case K_BOOL: {
        int b = eqi(v, vn, "YES") ? 1 : eqi(v, vn, "NO") ? 0 : -1;
        if (b < 0)
            return bad(c, line, vcol, s->conf, "YES or NO", v, vn);
        if (want(c, s->key)) {
            memcpy(base, &b, sizeof b);
            c->n_set++;
        }
        return 0;
    }
    case K_PRIORITY_TYPE: {
        int q = eqi(v, vn, "priority/multifactor") ? FS_QUEUE_SLURM
                : eqi(v, vn, "priority/basic") ? FS_QUEUE_FIFO : -1;
        if (q < 0)
            return bad(c, line, vcol, s->conf, "priority/multifactor or priority/basic", v, vn);
        if (want(c, s->key)) {
            memcpy(base, &q, sizeof q);
            c->n_set++;
        }
        return 0;
    }
    case K_SCHED_TYPE: {
        int bf = eqi(v, vn, "sched/backfill") ? 1 : eqi(v, vn, "sched/builtin") ? 0 : -1;
        if (bf < 0)
            return bad(c, line, vcol, s->conf, "sched/backfill or sched/builtin", v, vn);
        if (want(c, "scheduler.backfill")) {
            c->cfg->scheduler.backfill = bf ? FS_BACKFILL_CONSERVATIVE : FS_BACKFILL_NONE;
            c->n_set++;
        }
        if (bf && want(c, "scheduler.bf.mode")) {
            c->cfg->scheduler.bf.mode = FS_BF_SLURM;
            c->n_set++;
        }
        return 0;
    }
    default:
        return sched_params(c, line, vcol, v, vn);
    }
}

/* One logical line (continuations joined): its KEY=VALUE pairs, separated
 * by blanks; a line of a node, partition and the like (its first key names
 * it) is skipped whole. */
static int logical_line(ctx_t *c, size_t line, const char *l, size_t n)
{
    static const char *const records[] = {"NodeName", "PartitionName", "NodeSet", "DownNodes",
                                          "FrontendName", "SwitchName"};
    size_t i = 0;
    for (int first = 1;; first = 0) {
        while (i < n && (l[i] == ' ' || l[i] == '\t'))
            i++;
        if (i == n)
            return 0;
        size_t k0 = i;
        while (i < n && l[i] != '=' && l[i] != ' ' && l[i] != '\t')
            i++;
        if (i == n || l[i] != '=') {
            if (first && eqi(l + k0, i - k0, "Include"))
                return fs_error_set(c->err, FS_EINVAL, "%s:%zu:%zu: Include: the included file "
                                    "is not read; give the settings in one slurm.conf", c->path,
                                    line, k0 + 1);
            return bad(c, line, k0 + 1, "slurm.conf", "KEY=VALUE", l + k0, i - k0);
        }
        size_t kn = i - k0, v0 = ++i;
        while (i < n && l[i] != ' ' && l[i] != '\t')
            i++;
        if (first)
            for (size_t r = 0; r < sizeof records / sizeof records[0]; r++)
                if (eqi(l + k0, kn, records[r]))
                    return 0;
        int rc = setting(c, line, k0 + 1, l + k0, kn, l + v0, i - v0, v0 + 1);
        if (rc)
            return rc;
    }
}

int fs_slurmconf_apply(const char *path, fs_config_t *cfg,
                       int (*given)(void *ud, const char *key), void *ud, size_t *n_set,
                       fs_error_t *err)
{
    char *text = NULL;
    size_t tlen = 0;
    fs_error_t e;
    int rc = fs_io_read_text(path, "slurm.conf", FS_IO_TEXT_MAX, &text, &tlen, &e);
    if (rc == FS_ENOMEM)
        return fs_error_set(err, FS_ENOMEM, "%s: out of memory", path);
    if (rc)
        return fs_error_set(err, FS_EIO, "scheduler.slurm.conf: cannot read %s: %s", path,
                            e.msg);
    ctx_t c = {.path = path, .cfg = cfg, .given = given, .ud = ud, .err = err};
    char *buf = NULL;
    size_t cap = 0, len = 0, line = 0, first = 0;
    for (size_t at = 0; !rc && at < tlen;) {
        const char *ln = text + at;
        const char *nl = memchr(ln, '\n', tlen - at);
        size_t n = nl ? (size_t)(nl - ln) : tlen - at;
        at += n + (nl != NULL);
        line++;
        while (n && ln[n - 1] == '\r')
            n--;
        const char *hash = memchr(ln, '#', n);
        if (hash)
            n = (size_t)(hash - ln);
        int cont = n && ln[n - 1] == '\\';
        if (cont)
            n--;
        if (len == 0)
            first = line;
        if (fs_grow((void **)&buf, &cap, len + n + 2, 1)) {
            rc = fs_error_set(err, FS_ENOMEM, "%s: out of memory", path);
            break;
        }
        memcpy(buf + len, ln, n);
        len += n;
        if (cont)
            continue;
        buf[len] = '\0';
        rc = logical_line(&c, first, buf, len);
        len = 0;
    }
    if (!rc && len) {
        buf[len] = '\0';
        rc = logical_line(&c, first, buf, len);
    }
    fs_free(buf);
    fs_free(text);
    if (n_set)
        *n_set = c.n_set;
    return rc;
}
