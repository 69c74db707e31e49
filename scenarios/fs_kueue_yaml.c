/*
 * scheduler.kueue: key tables, Kueue manifests and cross-checks
 * (fs_kueue_yaml.h).  Manifests are read with libyaml's event API into a
 * small tree of nodes with positions, then each document is interpreted by
 * its `kind`.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include "fs_kueue_yaml.h"
#include "fs_defaults.h"
#include "fs_subkeys.h"
#include "../models/fs_kueue.h"
#include "../sim/fs_alloc.h"
#include "../sim/fs_io.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

/* ---- key tables ---------------------------------------------------------- */

static const char *const strategy_names[] = {
    [FS_KUEUE_BEST_EFFORT_FIFO] = "BestEffortFIFO", [FS_KUEUE_STRICT_FIFO] = "StrictFIFO", NULL};
static const char *const within_names[] = {
    [FS_KUEUE_NEVER] = "Never", [FS_KUEUE_LOWER_PRIORITY] = "LowerPriority",
    [FS_KUEUE_LOWER_OR_NEWER_EQUAL] = "LowerOrNewerEqualPriority", NULL};
static const char *const reclaim_names[] = {
    [FS_KUEUE_NEVER] = "Never", [FS_KUEUE_LOWER_PRIORITY] = "LowerPriority",
    [FS_KUEUE_LOWER_OR_NEWER_EQUAL] = "", [FS_KUEUE_ANY] = "Any", NULL};
static const char *const bwc_names[] = {
    [FS_KUEUE_NEVER] = "Never", [FS_KUEUE_LOWER_PRIORITY] = "LowerPriority", NULL};

/* Kueue's resource names, by enum fs_kueue_resource. */
static const char *const res_names[] = {
    [FS_KRES_GPU] = "nvidia.com/gpu", [FS_KRES_CPU] = "cpu", [FS_KRES_MEMORY] = "memory",
    [FS_KRES_PODS] = "pods", NULL};

#define KQ(f) offsetof(fs_kueue_quota_cfg_t, f)
/* The largest quota: the Kueue model counts milli-GPUs (models/fs_kueue.c),
 * computed through a double, which holds whole numbers exactly up to 2^53
 * only; 2^53 milli-GPUs is about 9.0e12 GPUs. */
#define QUOTA_MAX 9007199254740.0
static const fs_key_t quota_rows[] = {
    {.path = "flavor", .type = FS_KT_STRING, .flags = FS_KF_REQUIRED, .off = KQ(flavor),
     .doc = "Flavor name: one of scheduler.kueue.flavors, or a pool name or GPU model."},
    {.path = "resource", .type = FS_KT_ENUM, .off = KQ(resource), .names = res_names,
     .def = "nvidia.com/gpu",
     .doc = "The resource of this quota: nvidia.com/gpu (GPUs), cpu (cores), memory (MiB) or "
            "pods; the resources sharing a flavor in a CQ are one resource group, and each of "
            "its flavors must quota all of them."},
    {.path = "nominal", .type = FS_KT_DOUBLE, .flags = FS_KF_REQUIRED | FS_KF_MIN | FS_KF_MAX,
     .off = KQ(nominal), .min = 0, .max = QUOTA_MAX, .unit = "by resource",
     .doc = "nominalQuota, in GPUs, or cores, MiB or pods by `resource` (at most 2^53 "
            "thousandths, or 2^53 bytes of memory, held exactly)."},
    {.path = "borrowing_limit", .type = FS_KT_DOUBLE, .flags = FS_KF_MIN | FS_KF_MAX,
     .off = KQ(borrowing_limit), .min = -1, .max = QUOTA_MAX, .def = "-1", .unit = "by resource",
     .doc = "borrowingLimit: at most this much above nominal from the cohort (-1: no limit; "
            "only with a cohort)."},
    {.path = "lending_limit", .type = FS_KT_DOUBLE, .flags = FS_KF_MIN | FS_KF_MAX,
     .off = KQ(lending_limit), .min = -1, .max = QUOTA_MAX, .def = "-1", .unit = "by resource",
     .doc = "lendingLimit: at most this much of the nominal quota is lent to the cohort "
            "(-1: all of it; <= nominal)."},
};
static const fs_keytab_t quota_keys = {"flavor quota", quota_rows,
                                       sizeof quota_rows / sizeof quota_rows[0],
                                       sizeof(fs_kueue_quota_cfg_t)};

#define KC(f) offsetof(fs_kueue_cq_cfg_t, f)
static const fs_key_t cq_rows[] = {
    {.path = "name", .type = FS_KT_STRING, .flags = FS_KF_REQUIRED, .off = KC(name),
     .doc = "ClusterQueue name (unique); jobs of the tenant of this name come here too."},
    {.path = "cohort", .type = FS_KT_STRING, .off = KC(cohort),
     .doc = "spec.cohort: CQs of one cohort lend each other unused quota (none: no borrowing)."},
    {.path = "strategy", .type = FS_KT_ENUM, .off = KC(strategy), .names = strategy_names,
     .def = "BestEffortFIFO",
     .doc = "spec.queueingStrategy: BestEffortFIFO (a head that cannot be admitted lets others "
            "go) or StrictFIFO (it blocks the CQ)."},
    {.path = "quotas", .type = FS_KT_LIST, .flags = FS_KF_REQUIRED | FS_KF_MIN, .off = KC(quotas),
     .off2 = KC(n_quotas), .min = 1, .sub = &quota_keys,
     .doc = "Flavor quotas {flavor, resource, nominal, borrowing_limit, lending_limit}, in the "
            "order the flavors are tried."},
    {.path = "within_cluster_queue", .type = FS_KT_ENUM, .off = KC(within_cq),
     .names = within_names, .def = "Never",
     .doc = "preemption.withinClusterQueue: Never, LowerPriority, LowerOrNewerEqualPriority."},
    {.path = "reclaim_within_cohort", .type = FS_KT_ENUM, .off = KC(reclaim),
     .names = reclaim_names, .def = "Never",
     .doc = "preemption.reclaimWithinCohort: Never, LowerPriority, Any (preempt in borrowing "
            "CQs of the cohort to get nominal quota back)."},
    {.path = "borrow_within_cohort", .type = FS_KT_ENUM, .off = KC(borrow_within),
     .names = bwc_names, .def = "Never",
     .doc = "preemption.borrowWithinCohort.policy: Never, LowerPriority (preempt in other CQs "
            "while borrowing; needs reclaim_within_cohort)."},
    {.path = "max_priority_threshold", .type = FS_KT_DOUBLE, .off = KC(borrow_max_priority),
     .doc = "borrowWithinCohort.maxPriorityThreshold: only jobs of priority <= this are "
            "preempted while borrowing (absent: lower than the preemptor)."},
    {.path = "weight", .type = FS_KT_DOUBLE, .flags = FS_KF_MIN, .off = KC(weight), .min = 0,
     .def = "1", .doc = "fairSharing.weight (with scheduler.kueue.fair_sharing)."},
    {.path = "tenants", .type = FS_KT_STRING, .off = KC(tenants),
     .doc = "LocalQueues: comma-separated tenants whose jobs come to this CQ."},
};
const fs_keytab_t fs_keys_kueue_cq = {"ClusterQueue", cq_rows, sizeof cq_rows / sizeof cq_rows[0],
                                      sizeof(fs_kueue_cq_cfg_t)};

#define KF(f) offsetof(fs_kueue_flavor_cfg_t, f)
static const fs_key_t flavor_rows[] = {
    {.path = "name", .type = FS_KT_STRING, .flags = FS_KF_REQUIRED, .off = KF(name),
     .doc = "ResourceFlavor name (unique)."},
    {.path = "match", .type = FS_KT_STRING, .off = KF(match),
     .doc = "Comma-separated pool names or GPU models the flavor stands for (absent: its name)."},
};
const fs_keytab_t fs_keys_kueue_flavor = {"ResourceFlavor", flavor_rows,
                                          sizeof flavor_rows / sizeof flavor_rows[0],
                                          sizeof(fs_kueue_flavor_cfg_t)};

/* ---- a YAML tree with positions ------------------------------------------ */

enum { MN_SCALAR, MN_MAP, MN_SEQ };

typedef struct mnode {
    int kind;
    char *s;                /* scalar text */
    unsigned line, col;     /* 1-based */
    struct mnode **k, **v;  /* map: keys and values; seq: v */
    size_t n, cap;
} mnode_t;

typedef struct mref {        /* a name used in a manifest, checked at the end */
    char *name;
    unsigned line, col;
    int what;               /* REF_QUOTA (a flavor), REF_CQ, REF_FLAVOR (definitions) */
} mref_t;
enum { REF_QUOTA, REF_CQ, REF_FLAVOR };

typedef struct mctx {
    const char *file;
    fs_error_t *err;
    yaml_parser_t p;
    const fs_cluster_cfg_t *cl;  /* NULL: flavors are not checked against pools */
    size_t n_fl0;           /* flavors given before the manifests (scenario keys): a
                               ResourceFlavor of the same name is theirs */
    mref_t *refs;
    size_t n_refs, cap_refs;
    fs_kueue_wpc_t *wpc;    /* WorkloadPriorityClasses (kept for fs_kueue_manifest_objs only) */
    size_t n_wpc, cap_wpc;
    int keep_wpc;
} mctx_t;

static void mnode_free(mnode_t *n)
{
    if (!n)
        return;
    for (size_t i = 0; i < n->n; i++) {
        if (n->k)
            mnode_free(n->k[i]);
        mnode_free(n->v[i]);
    }
    fs_free(n->k);
    fs_free(n->v);
    fs_free(n->s);
    fs_free(n);
}

__attribute__((format(printf, 3, 4)))
static int mfail(mctx_t *c, const mnode_t *n, const char *fmt, ...)
{
    char msg[FS_ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return fs_error_set(c->err, FS_EINVAL, "%s:%u:%u: %s", c->file, n ? n->line : 1,
                        n ? n->col : 1, msg);
}

static int mnomem(mctx_t *c) { return fs_error_set(c->err, FS_ENOMEM, "%s: out of memory", c->file); }

static int add_ref(mctx_t *c, const char *name, const mnode_t *at, int what)
{
    if (fs_grow((void **)&c->refs, &c->cap_refs, c->n_refs + 1, sizeof *c->refs))
        return mnomem(c);
    mref_t *r = &c->refs[c->n_refs];
    if (!(r->name = fs_strdup(name)))
        return mnomem(c);
    r->line = at ? at->line : 1;
    r->col = at ? at->col : 1;
    r->what = what;
    c->n_refs++;
    return 0;
}

static mnode_t *mnew(int kind, const yaml_mark_t *mk)
{
    mnode_t *n = fs_calloc(1, sizeof *n);
    if (n) {
        n->kind = kind;
        n->line = (unsigned)mk->line + 1;
        n->col = (unsigned)mk->column + 1;
    }
    return n;
}

static int mpush(mnode_t *n, mnode_t *k, mnode_t *v)
{
    size_t cap = n->cap;
    if (fs_grow((void **)&n->v, &cap, n->n + 1, sizeof *n->v))
        return -1;
    if (n->kind == MN_MAP) {
        size_t kc = n->cap;
        if (fs_grow((void **)&n->k, &kc, n->n + 1, sizeof *n->k))
            return -1;
        n->k[n->n] = k;
    }
    n->cap = cap;
    n->v[n->n++] = v;
    return 0;
}

static int mnext(mctx_t *c, yaml_event_t *ev)
{
    if (yaml_parser_parse(&c->p, ev))
        return 0;
    return fs_error_set(c->err, FS_EINVAL, "%s:%zu:%zu: YAML: %s", c->file,
                        c->p.problem_mark.line + 1, c->p.problem_mark.column + 1,
                        c->p.problem ? c->p.problem : "syntax error");
}

/* Builds the node that starts with *ev (consumed). */
static int mbuild(mctx_t *c, yaml_event_t *ev, int depth, mnode_t **out)
{
    *out = NULL;
    if (depth > 64) {
        mnode_t at = {.line = (unsigned)ev->start_mark.line + 1, .col = (unsigned)ev->start_mark.column + 1};
        yaml_event_delete(ev);
        return mfail(c, &at, "nested too deeply");
    }
    if (ev->type == YAML_ALIAS_EVENT) {
        mnode_t at = {.line = (unsigned)ev->start_mark.line + 1, .col = (unsigned)ev->start_mark.column + 1};
        yaml_event_delete(ev);
        return mfail(c, &at, "YAML aliases are not supported in manifests");
    }
    if (ev->type == YAML_SCALAR_EVENT) {
        mnode_t *n = mnew(MN_SCALAR, &ev->start_mark);
        if (n && !(n->s = fs_malloc(ev->data.scalar.length + 1))) {
            mnode_free(n);
            n = NULL;
        }
        if (n) {
            memcpy(n->s, ev->data.scalar.value, ev->data.scalar.length);
            n->s[ev->data.scalar.length] = '\0';
        }
        yaml_event_delete(ev);
        *out = n;
        return n ? 0 : mnomem(c);
    }
    int map = ev->type == YAML_MAPPING_START_EVENT;
    mnode_t *n = mnew(map ? MN_MAP : MN_SEQ, &ev->start_mark);
    yaml_event_delete(ev);
    if (!n)
        return mnomem(c);
    for (;;) {
        yaml_event_t e;
        int rc = mnext(c, &e);
        if (rc) {
            mnode_free(n);
            return rc;
        }
        if (e.type == YAML_MAPPING_END_EVENT || e.type == YAML_SEQUENCE_END_EVENT) {
            yaml_event_delete(&e);
            break;
        }
        mnode_t *k = NULL, *v = NULL;
        if ((rc = mbuild(c, &e, depth + 1, map ? &k : &v)) == 0 && map) {
            yaml_event_t e2;
            if ((rc = mnext(c, &e2)) == 0)
                rc = mbuild(c, &e2, depth + 1, &v);
            if (!rc && k->kind != MN_SCALAR)
                rc = mfail(c, k, "a key must be a plain value");
        }
        if (!rc && mpush(n, k, v))
            rc = mnomem(c);
        if (rc) {
            mnode_free(k);
            mnode_free(v);
            mnode_free(n);
            return rc;
        }
    }
    *out = n;
    return 0;
}

static const mnode_t *mget(const mnode_t *n, const char *key)
{
    if (!n || n->kind != MN_MAP)
        return NULL;
    for (size_t i = 0; i < n->n; i++)
        if (strcmp(n->k[i]->s, key) == 0)
            return n->v[i];
    return NULL;
}

static int is_null(const mnode_t *n)
{
    return !n || (n->kind == MN_SCALAR && (!*n->s || strcmp(n->s, "~") == 0 || strcmp(n->s, "null") == 0));
}

/* ---- interpreting objects ----------------------------------------------- */

typedef struct obj {
    mctx_t *c;
    const char *kind, *name;
    const mnode_t *at;      /* metadata.name */
    fs_kueue_cfg_t *k;
} obj_t;

static int want(obj_t *o, const mnode_t *n, int kind, const char *field)
{
    static const char *const what[] = {"a value", "a block of keys", "a list"};
    if (n && n->kind == kind)
        return 0;
    return mfail(o->c, n, "%s '%s': %s: expected %s", o->kind, o->name, field, what[kind]);
}

static int str_field(obj_t *o, const mnode_t *n, const char *field, char **out)
{
    if (is_null(n))
        return 0;
    int rc = want(o, n, MN_SCALAR, field);
    if (rc)
        return rc;
    fs_free(*out);
    return (*out = fs_strdup(n->s)) ? 0 : mnomem(o->c);
}

/* A Kubernetes quantity (k8s.io/apimachinery resource.Quantity): a decimal
 * number with an optional suffix, "8", "2.5", "500m", "16Gi", "64G", "1e3";
 * *out in the unit of resource res (GPUs, cores, MiB, pods; fs_quotacfg.h;
 * res < 0: a plain number, the fair-sharing weight). */
static int quantity_of(obj_t *o, const mnode_t *n, const char *field, int res, double *out)
{
    int rc = want(o, n, MN_SCALAR, field);
    if (rc)
        return rc;
    char *end;
    errno = 0;
    double v = strtod(n->s, &end);
    static const struct { const char *suf; double mul; } sufs[] = {
        {"", 1}, {"m", 1e-3}, {"k", 1e3}, {"M", 1e6}, {"G", 1e9}, {"T", 1e12}, {"P", 1e15},
        {"E", 1e18}, {"Ki", 1024.0}, {"Mi", 1048576.0}, {"Gi", 1073741824.0},
        {"Ti", 1099511627776.0}, {"Pi", 1125899906842624.0}, {"Ei", 1152921504606846976.0}};
    /* the unit of each resource in the quantity's own (bytes for memory) */
    double per = res == FS_KRES_MEMORY ? 1048576.0 : 1.0;
    /* the largest quota: the model counts thousandths (bytes of memory) in
     * int64 through a double, whole numbers exact up to 2^53 only */
    double max = res == FS_KRES_MEMORY ? 8589934592.0 : QUOTA_MAX;
    const char *what = res == FS_KRES_MEMORY ? "memory (such as 16Gi, 64G or 512Mi)"
                       : res == FS_KRES_CPU  ? "cpu (such as 4, 2.5 or 500m)"
                       : res == FS_KRES_PODS ? "pods (such as 10)"
                       : res == FS_KRES_GPU  ? "GPUs (such as 8, 2.5 or 500m)"
                                             : "a number (such as 1, 2.5 or 500m)";
    for (size_t i = 0; end != n->s && !errno && i < sizeof sufs / sizeof sufs[0]; i++)
        if (strcmp(end, sufs[i].suf) == 0 && isfinite(v) && v >= 0) {
            double x = v * sufs[i].mul / per;
            if (x > max) {
                if (res == FS_KRES_MEMORY)
                    return mfail(o->c, n, "%s '%s': %s: '%s' is more than the largest memory "
                                 "quota, 8 PiB (2^53 bytes: a larger count is not held exactly)",
                                 o->kind, o->name, field, n->s);
                return mfail(o->c, n, "%s '%s': %s: '%s' is more than the largest quota, %.0f %s "
                             "(2^53 thousandths: a larger count is not held exactly)", o->kind,
                             o->name, field, n->s, QUOTA_MAX,
                             res == FS_KRES_CPU ? "cores" : res == FS_KRES_PODS ? "pods" : "GPUs");
            }
            *out = x;
            return 0;
        }
    return mfail(o->c, n, "%s '%s': %s: '%s' is not a quantity of %s", o->kind, o->name, field,
                 n->s, what);
}

static int quantity(obj_t *o, const mnode_t *n, const char *field, double *out)
{
    return quantity_of(o, n, field, -1, out);
}

static int enum_field(obj_t *o, const mnode_t *n, const char *field, const char *const *names,
                      int *out)
{
    if (is_null(n))
        return 0;
    int rc = want(o, n, MN_SCALAR, field);
    if (rc)
        return rc;
    char list[256] = "";
    for (int i = 0; names[i]; i++) {
        if (!*names[i])
            continue;
        if (strcmp(names[i], n->s) == 0) {
            *out = i;
            return 0;
        }
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", *list ? ", " : "", names[i]);
    }
    return mfail(o->c, n, "%s '%s': %s: '%s' is not one of %s", o->kind, o->name, field, n->s, list);
}

/* Appends a quota of flavor nm (a copy) to qs. */
static int push_quota(obj_t *o, const mnode_t *nm, fs_kueue_quota_cfg_t q,
                      fs_kueue_quota_cfg_t **qs, size_t *nq)
{
    size_t cap = *nq;
    if (fs_grow((void **)qs, &cap, *nq + 1, sizeof **qs) || !(q.flavor = fs_strdup(nm->s)))
        return mnomem(o->c);
    int rc = add_ref(o->c, nm->s, nm, REF_QUOTA);
    if (rc) {
        fs_free(q.flavor);
        return rc;
    }
    (*qs)[(*nq)++] = q;
    return 0;
}

/* spec.resourceGroups: the nvidia.com/gpu, cpu, memory and pods quotas of
 * every flavor (other resources are read past: no job asks for them, so
 * each uses 0 of them).  Kueue's rules: a resource is covered by one group
 * only, a flavor is in one group only, and each flavor of a group quotas
 * exactly the group's coveredResources.  A queue with none of the four
 * (only other resources) gets a GPU quota of 0 in each flavor it lists. */
static int resource_groups(obj_t *o, const mnode_t *rg, fs_kueue_quota_cfg_t **qs, size_t *nq)
{
    if (is_null(rg))
        return 0;
    int rc = want(o, rg, MN_SEQ, "spec.resourceGroups");
    unsigned seen_res = 0;      /* resources of the groups so far */
    size_t nq0 = *nq;
    for (size_t g = 0; !rc && g < rg->n; g++) {
        const mnode_t *fl = mget(rg->v[g], "flavors"), *cov = mget(rg->v[g], "coveredResources");
        if ((rc = want(o, rg->v[g], MN_MAP, "spec.resourceGroups[]")) != 0 ||
            (rc = want(o, fl, MN_SEQ, "spec.resourceGroups[].flavors")) != 0)
            break;
        unsigned gres = 0;      /* this group's coveredResources (of the four) */
        if (!is_null(cov)) {
            if ((rc = want(o, cov, MN_SEQ, "spec.resourceGroups[].coveredResources")) != 0)
                break;
            for (size_t i = 0; !rc && i < cov->n; i++) {
                if ((rc = want(o, cov->v[i], MN_SCALAR, "coveredResources[]")) != 0)
                    break;
                for (int x = 0; res_names[x]; x++)
                    if (strcmp(cov->v[i]->s, res_names[x]) == 0) {
                        if (seen_res & (1u << x))
                            rc = mfail(o->c, cov->v[i], "%s '%s': resource %s is covered by "
                                       "two resource groups", o->kind, o->name, res_names[x]);
                        gres |= 1u << x;
                    }
            }
            if (rc)
                break;
        }
        seen_res |= gres;
        for (size_t i = 0; !rc && i < fl->n; i++) {
            const mnode_t *f = fl->v[i], *nm = mget(f, "name"), *res = mget(f, "resources");
            if ((rc = want(o, f, MN_MAP, "flavors[]")) != 0 || (rc = want(o, nm, MN_SCALAR, "flavors[].name")) != 0 ||
                (rc = want(o, res, MN_SEQ, "flavors[].resources")) != 0)
                break;
            for (size_t j = nq0; j < *nq; j++)
                if (strcmp((*qs)[j].flavor, nm->s) == 0) {   /* an earlier group's, or twice */
                    rc = mfail(o->c, nm, "%s '%s': flavor '%s' is listed twice in "
                               "spec.resourceGroups (a flavor belongs to one group)", o->kind,
                               o->name, nm->s);
                    break;
                }
            unsigned fres = 0;
            for (size_t r = 0; !rc && r < res->n; r++) {
                const mnode_t *rn = mget(res->v[r], "name");
                if ((rc = want(o, rn, MN_SCALAR, "resources[].name")) != 0)
                    break;
                int x = 0;
                while (res_names[x] && strcmp(rn->s, res_names[x]) != 0)
                    x++;
                if (!res_names[x])
                    continue;   /* another resource: no job asks for it */
                if (!is_null(cov) && !(gres & (1u << x))) {
                    rc = mfail(o->c, rn, "%s '%s': flavor '%s' quotas %s, which is not in its "
                               "group's coveredResources", o->kind, o->name, nm->s, rn->s);
                    break;
                }
                if (fres & (1u << x)) {
                    rc = mfail(o->c, rn, "%s '%s': flavor '%s' lists %s twice", o->kind, o->name,
                               nm->s, rn->s);
                    break;
                }
                fres |= 1u << x;
                fs_kueue_quota_cfg_t q = {.borrowing_limit = -1, .lending_limit = -1, .resource = x};
                const mnode_t *bl = mget(res->v[r], "borrowingLimit"), *ll = mget(res->v[r], "lendingLimit");
                if ((rc = quantity_of(o, mget(res->v[r], "nominalQuota"), "nominalQuota", x, &q.nominal)) != 0 ||
                    (!is_null(bl) && (rc = quantity_of(o, bl, "borrowingLimit", x, &q.borrowing_limit)) != 0) ||
                    (!is_null(ll) && (rc = quantity_of(o, ll, "lendingLimit", x, &q.lending_limit)) != 0))
                    break;
                if (q.lending_limit > q.nominal) {
                    rc = mfail(o->c, ll, "%s '%s': lendingLimit %g is more than nominalQuota %g",
                               o->kind, o->name, q.lending_limit, q.nominal);
                    break;
                }
                if ((rc = push_quota(o, nm, q, qs, nq)) != 0)
                    break;
            }
            if (!rc && !is_null(cov) && fres != gres) {
                int x = 0;
                while (!((gres & ~fres) & (1u << x)))
                    x++;
                rc = mfail(o->c, nm, "%s '%s': flavor '%s' has no %s quota, which its group's "
                           "coveredResources list (each flavor quotas all of them)", o->kind,
                           o->name, nm->s, res_names[x]);
            }
        }
    }
    if (rc || *nq)
        return rc;
    for (size_t g = 0; !rc && g < rg->n; g++) {  /* no GPU quota: 0 in each flavor */
        const mnode_t *fl = mget(rg->v[g], "flavors");
        for (size_t i = 0; !rc && i < fl->n; i++) {
            const mnode_t *nm = mget(fl->v[i], "name");
            int seen = 0;
            for (size_t j = 0; j < *nq; j++)
                seen |= strcmp((*qs)[j].flavor, nm->s) == 0;
            if (!seen)
                rc = push_quota(o, nm, (fs_kueue_quota_cfg_t){.borrowing_limit = -1,
                                                               .lending_limit = -1},
                                qs, nq);
        }
    }
    return rc;
}

/* Appends a zeroed CQ with the key table's defaults; NULL when out of memory. */
static fs_kueue_cq_cfg_t *new_cq(fs_kueue_cfg_t *k)
{
    size_t cap = k->n_cqs;
    if (fs_grow((void **)&k->cqs, &cap, k->n_cqs + 1, sizeof *k->cqs))
        return NULL;
    fs_kueue_cq_cfg_t *q = &k->cqs[k->n_cqs++];
    memset(q, 0, sizeof *q);
    if (fs_keys_defaults(&fs_keys_kueue_cq, q, NULL))
        return NULL;
    return q;
}

static int cluster_queue(obj_t *o, const mnode_t *spec, int cohort_obj)
{
    fs_kueue_cq_cfg_t *q = new_cq(o->k);
    if (!q)
        return mnomem(o->c);
    char buf[300];
    snprintf(buf, sizeof buf, cohort_obj ? "cohort:%s" : "%s", o->name);
    if (!(q->name = fs_strdup(buf)))
        return mnomem(o->c);
    int rc = add_ref(o->c, buf, o->at, REF_CQ);
    if (rc)
        return rc;
    if (cohort_obj) {   /* a Cohort's own quota: a member that only lends */
        const mnode_t *parent = mget(spec, "parentName");
        if (!is_null(parent))
            return mfail(o->c, parent, "Cohort '%s': spec.parentName: hierarchical cohorts are "
                         "not modelled", o->name);
        if (!(q->cohort = fs_strdup(o->name)))
            return mnomem(o->c);
        return resource_groups(o, mget(spec, "resourceGroups"), &q->quotas, &q->n_quotas);
    }
    const mnode_t *pre = mget(spec, "preemption"), *bwc = mget(pre, "borrowWithinCohort");
    const mnode_t *coh = mget(spec, "cohort") ? mget(spec, "cohort") : mget(spec, "cohortName");
    const mnode_t *thr = mget(bwc, "maxPriorityThreshold"), *fs = mget(spec, "fairSharing");
    if ((rc = str_field(o, coh, "spec.cohort", &q->cohort)) ||
        (rc = enum_field(o, mget(spec, "queueingStrategy"), "spec.queueingStrategy", strategy_names,
                         &q->strategy)) ||
        (rc = enum_field(o, mget(pre, "withinClusterQueue"), "spec.preemption.withinClusterQueue",
                         within_names, &q->within_cq)) ||
        (rc = enum_field(o, mget(pre, "reclaimWithinCohort"), "spec.preemption.reclaimWithinCohort",
                         reclaim_names, &q->reclaim)) ||
        (rc = enum_field(o, mget(bwc, "policy"), "spec.preemption.borrowWithinCohort.policy",
                         bwc_names, &q->borrow_within)) ||
        (!is_null(mget(fs, "weight")) &&
         (rc = quantity(o, mget(fs, "weight"), "spec.fairSharing.weight", &q->weight))))
        return rc;
    if (!is_null(thr)) {
        char *end;
        if ((rc = want(o, thr, MN_SCALAR, "maxPriorityThreshold")) != 0)
            return rc;
        q->borrow_max_priority = strtod(thr->s, &end);
        if (end == thr->s || *end)
            return mfail(o->c, thr, "ClusterQueue '%s': maxPriorityThreshold: '%s' is not an integer",
                         o->name, thr->s);
    }
    if (q->borrow_within != FS_KUEUE_NEVER && q->reclaim == FS_KUEUE_NEVER)
        return mfail(o->c, mget(bwc, "policy"), "ClusterQueue '%s': borrowWithinCohort needs "
                     "reclaimWithinCohort other than Never", o->name);
    if ((rc = resource_groups(o, mget(spec, "resourceGroups"), &q->quotas, &q->n_quotas)) != 0)
        return rc;
    for (size_t i = 0; i < q->n_quotas; i++)
        if (!q->cohort && q->quotas[i].borrowing_limit >= 0)
            return mfail(o->c, mget(spec, "resourceGroups"), "ClusterQueue '%s': borrowingLimit "
                         "needs a cohort", o->name);
    if (q->n_quotas == 0)
        return mfail(o->c, spec, "ClusterQueue '%s': no flavor in spec.resourceGroups",
                     o->name);
    return 0;
}

static int resource_flavor(obj_t *o, const mnode_t *spec)
{
    fs_kueue_cfg_t *k = o->k;
    for (size_t i = 0; i < o->c->n_fl0 && i < k->n_flavors; i++)
        if (strcmp(k->flavors[i].name, o->name) == 0)
            return 0;   /* scheduler.kueue.flavors has it: the scenario's wins */
    size_t cap = k->n_flavors;
    if (fs_grow((void **)&k->flavors, &cap, k->n_flavors + 1, sizeof *k->flavors))
        return mnomem(o->c);
    fs_kueue_flavor_cfg_t *f = &k->flavors[k->n_flavors++];
    memset(f, 0, sizeof *f);
    if (!(f->name = fs_strdup(o->name)) || add_ref(o->c, o->name, o->at, REF_FLAVOR))
        return mnomem(o->c);
    const mnode_t *nl = mget(spec, "nodeLabels");
    if (is_null(nl))
        return 0;
    int rc = want(o, nl, MN_MAP, "spec.nodeLabels");
    size_t len = 1;
    for (size_t i = 0; !rc && i < nl->n; i++)
        if ((rc = want(o, nl->v[i], MN_SCALAR, "spec.nodeLabels value")) == 0)
            len += strlen(nl->v[i]->s) + 1;
    if (rc)
        return rc;
    if (!(f->match = fs_malloc(len)))
        return mnomem(o->c);
    f->match[0] = '\0';
    for (size_t i = 0; i < nl->n; i++) {
        if (i)
            strcat(f->match, ",");
        strcat(f->match, nl->v[i]->s);
    }
    return 0;
}

/* A LocalQueue: its namespace and name become tenants of its CQ (resolved
 * after all documents are read). */
typedef struct lq {
    char *tenants;          /* "namespace,name" */
    char *cq;
    unsigned line, col;
    size_t ns_len;          /* tenants: the namespace's length */
} lq_t;

static int local_queue(obj_t *o, const mnode_t *meta, const mnode_t *spec, lq_t **lqs, size_t *n)
{
    const mnode_t *cq = mget(spec, "clusterQueue"), *ns = mget(meta, "namespace");
    int rc = want(o, cq, MN_SCALAR, "spec.clusterQueue");
    if (!rc && !is_null(ns))
        rc = want(o, ns, MN_SCALAR, "metadata.namespace");
    if (rc)
        return rc;
    size_t cap = *n;
    if (fs_grow((void **)lqs, &cap, *n + 1, sizeof **lqs))
        return mnomem(o->c);
    lq_t *l = &(*lqs)[(*n)++];
    memset(l, 0, sizeof *l);
    const char *nsn = is_null(ns) ? "default" : ns->s;
    l->tenants = fs_malloc(strlen(nsn) + strlen(o->name) + 2);
    l->cq = fs_strdup(cq->s);
    l->line = cq->line;
    l->col = cq->col;
    if (!l->tenants || !l->cq)
        return mnomem(o->c);
    sprintf(l->tenants, "%s,%s", nsn, o->name);
    l->ns_len = strlen(nsn);
    return 0;
}

/* A WorkloadPriorityClass: metadata.name and its value (an int32, as
 * Kueue's API validates it).  Only fs_kueue_manifest_objs keeps them: the
 * run takes a job's priority from the job. */
static int priority_class(mctx_t *c, const mnode_t *doc, const mnode_t *meta)
{
    const mnode_t *name = mget(meta, "name"), *value = mget(doc, "value");
    if (!name || name->kind != MN_SCALAR || !*name->s)
        return mfail(c, meta ? meta : doc, "WorkloadPriorityClass: missing metadata.name");
    char *end = NULL;
    errno = 0;
    long long v = value && value->kind == MN_SCALAR ? strtoll(value->s, &end, 10) : 0;
    if (!value || value->kind != MN_SCALAR || end == value->s || *end || errno ||
        v < INT32_MIN || v > INT32_MAX)
        return mfail(c, value ? value : doc, "WorkloadPriorityClass '%s': value: expected an "
                     "integer from -2147483648 to 2147483647", name->s);
    if (fs_grow((void **)&c->wpc, &c->cap_wpc, c->n_wpc + 1, sizeof *c->wpc))
        return mnomem(c);
    fs_kueue_wpc_t *w = &c->wpc[c->n_wpc];
    if (!(w->name = fs_strdup(name->s)))
        return mnomem(c);
    w->value = (int32_t)v;
    c->n_wpc++;
    return 0;
}

static int document(mctx_t *c, const mnode_t *doc, fs_kueue_cfg_t *k, lq_t **lqs, size_t *nlq)
{
    if (is_null(doc))
        return 0;
    obj_t o = {.c = c, .kind = "object", .name = "?", .k = k};
    if (doc->kind != MN_MAP)
        return mfail(c, doc, "expected a Kubernetes object (a block of keys with kind)");
    const mnode_t *kind = mget(doc, "kind"), *meta = mget(doc, "metadata"), *spec = mget(doc, "spec");
    if (!kind || kind->kind != MN_SCALAR)
        return mfail(c, kind ? kind : doc, "missing kind");
    o.kind = kind->s;
    if (c->keep_wpc && !strcmp(kind->s, "WorkloadPriorityClass"))
        return priority_class(c, doc, meta);
    int known = !strcmp(kind->s, "ClusterQueue") || !strcmp(kind->s, "Cohort") ||
                !strcmp(kind->s, "ResourceFlavor") || !strcmp(kind->s, "LocalQueue");
    if (!known)
        return 0;   /* other objects (WorkloadPriorityClass, Namespace, ...) are skipped */
    const mnode_t *name = mget(meta, "name");
    if (!name || name->kind != MN_SCALAR || !*name->s)
        return mfail(c, meta ? meta : doc, "%s: missing metadata.name", kind->s);
    o.name = name->s;
    o.at = name;
    if (!is_null(spec) && spec->kind != MN_MAP)
        return mfail(c, spec, "%s '%s': spec: expected a block of keys", o.kind, o.name);
    if (!strcmp(kind->s, "ClusterQueue") || !strcmp(kind->s, "Cohort"))
        return cluster_queue(&o, spec, !strcmp(kind->s, "Cohort"));
    if (!strcmp(kind->s, "ResourceFlavor"))
        return resource_flavor(&o, spec);
    return local_queue(&o, meta, spec, lqs, nlq);
}

/* LocalQueues: their tenants go to their CQs. */
static int apply_lqs(mctx_t *c, fs_kueue_cfg_t *k, lq_t *lqs, size_t n, size_t n_cq0)
{
    for (size_t i = 0; i < n; i++) {
        fs_kueue_cq_cfg_t *q = NULL;
        for (size_t j = n_cq0; j < k->n_cqs && !q; j++)
            if (strcmp(k->cqs[j].name, lqs[i].cq) == 0)
                q = &k->cqs[j];
        if (!q) {   /* a key-given CQ lists its tenants itself (the dump stays whole) */
            mnode_t at = {.line = lqs[i].line, .col = lqs[i].col};
            for (size_t j = 0; j < n_cq0; j++)
                if (strcmp(k->cqs[j].name, lqs[i].cq) == 0)
                    return mfail(c, &at, "LocalQueue: spec.clusterQueue: '%s' is a ClusterQueue of "
                                 "scheduler.kueue.cluster_queues: give it the tenants there",
                                 lqs[i].cq);
            return mfail(c, &at, "LocalQueue: spec.clusterQueue: no ClusterQueue '%s'", lqs[i].cq);
        }
        size_t old = q->tenants ? strlen(q->tenants) : 0;
        char *t = fs_malloc(old + strlen(lqs[i].tenants) + 2);
        if (!t)
            return mnomem(c);
        sprintf(t, "%s%s%s", old ? q->tenants : "", old ? "," : "", lqs[i].tenants);
        fs_free(q->tenants);
        q->tenants = t;
    }
    return 0;
}

static int flavor_known(const fs_kueue_cfg_t *k, const fs_cluster_cfg_t *cl, const char *name);

/* Names defined twice (against what k held before: n_cq0, n_fl0 items) and
 * flavors that are neither defined nor pools, at their manifest positions. */
static int check_refs(mctx_t *c, const fs_kueue_cfg_t *k, size_t n_cq0, size_t n_fl0)
{
    for (size_t i = 0; i < c->n_refs; i++) {
        const mref_t *r = &c->refs[i];
        mnode_t at = {.line = r->line, .col = r->col};
        if (r->what == REF_QUOTA) {
            if (c->cl && !flavor_known(k, c->cl, r->name))
                return mfail(c, &at, "flavor '%s' is neither a ResourceFlavor nor a pool or GPU "
                             "model of cluster.pools", r->name);
            continue;
        }
        int dup = 0;
        for (size_t j = 0; j < i; j++)
            dup |= c->refs[j].what == r->what && strcmp(c->refs[j].name, r->name) == 0;
        size_t n0 = r->what == REF_CQ ? n_cq0 : 0;  /* a scenario flavor wins (not a dup) */
        (void)n_fl0;
        for (size_t j = 0; j < n0; j++)
            dup |= strcmp(r->what == REF_CQ ? k->cqs[j].name : k->flavors[j].name, r->name) == 0;
        if (dup)
            return mfail(c, &at, "%s '%s' is defined twice", r->what == REF_CQ ? "ClusterQueue" :
                         "ResourceFlavor", r->name);
    }
    return 0;
}

int fs_kueue_manifest_parse(const char *name, const char *text, size_t len, fs_kueue_cfg_t *k,
                            fs_error_t *err)
{
    return fs_kueue_manifest_parse_for(name, text, len, NULL, k, err);
}

static int manifest_parse(const char *name, const char *text, size_t len,
                          const fs_cluster_cfg_t *cl, fs_kueue_cfg_t *k, fs_kueue_objs_t *out,
                          fs_error_t *err);

int fs_kueue_manifest_parse_for(const char *name, const char *text, size_t len,
                                const fs_cluster_cfg_t *cl, fs_kueue_cfg_t *k, fs_error_t *err)
{
    return manifest_parse(name, text, len, cl, k, NULL, err);
}

/* The LocalQueues (name, namespace, ClusterQueue) of lqs, as *out. */
static int hand_out_lqs(const lq_t *lqs, size_t n, fs_kueue_lq_t **out, size_t *n_out)
{
    *out = n ? fs_calloc(n, sizeof **out) : NULL;
    if (n && !*out)
        return FS_ENOMEM;
    *n_out = n;
    for (size_t i = 0; i < n; i++) {
        fs_kueue_lq_t *l = &(*out)[i];
        l->ns = fs_strndup(lqs[i].tenants, lqs[i].ns_len);
        l->name = fs_strdup(lqs[i].tenants + lqs[i].ns_len + 1);
        l->cq = fs_strdup(lqs[i].cq);
        if (!l->ns || !l->name || !l->cq)
            return FS_ENOMEM;
    }
    return 0;
}

static int manifest_parse(const char *name, const char *text, size_t len,
                          const fs_cluster_cfg_t *cl, fs_kueue_cfg_t *k, fs_kueue_objs_t *out,
                          fs_error_t *err)
{
    mctx_t c = {.file = name, .err = err, .cl = cl, .n_fl0 = k->n_flavors, .keep_wpc = !!out};
    size_t n_cq0 = k->n_cqs, n_fl0 = k->n_flavors;
    if (!yaml_parser_initialize(&c.p))
        return mnomem(&c);
    yaml_parser_set_input_string(&c.p, (const unsigned char *)text, len);
    lq_t *lqs = NULL;
    size_t nlq = 0;
    int rc = 0;
    for (int done = 0; !rc && !done;) {
        yaml_event_t ev;
        if ((rc = mnext(&c, &ev)) != 0)
            break;
        if (ev.type == YAML_STREAM_END_EVENT)
            done = 1;
        if (ev.type == YAML_MAPPING_START_EVENT || ev.type == YAML_SEQUENCE_START_EVENT ||
            ev.type == YAML_SCALAR_EVENT || ev.type == YAML_ALIAS_EVENT) {
            mnode_t *doc;
            if ((rc = mbuild(&c, &ev, 0, &doc)) == 0)
                rc = document(&c, doc, k, &lqs, &nlq);
            mnode_free(doc);
        } else {
            yaml_event_delete(&ev);
        }
    }
    if (!rc)
        rc = apply_lqs(&c, k, lqs, nlq, n_cq0);
    if (!rc)
        rc = check_refs(&c, k, n_cq0, n_fl0);
    if (!rc && out && (rc = hand_out_lqs(lqs, nlq, &out->lq, &out->n_lq)))
        rc = mnomem(&c);
    if (out) {
        out->wpc = c.wpc;
        out->n_wpc = c.n_wpc;
    }
    for (size_t i = 0; i < c.n_refs; i++)
        fs_free(c.refs[i].name);
    fs_free(c.refs);
    for (size_t i = 0; i < nlq; i++) {
        fs_free(lqs[i].tenants);
        fs_free(lqs[i].cq);
    }
    fs_free(lqs);
    yaml_parser_delete(&c.p);
    return rc;
}

/* The same for a file. FS_EIO if it cannot be read. */
static int fs_kueue_manifest_load(const char *path, const fs_cluster_cfg_t *cl, fs_kueue_cfg_t *k,
                           fs_error_t *err)
{
    /* at most FS_IO_TEXT_MAX bytes (docs/robustness.md) */
    char *buf = NULL;
    size_t n = 0;
    int rc = fs_io_read_text(path, "manifest", FS_IO_TEXT_MAX, &buf, &n, err);
    if (rc == FS_EINVAL)
        rc = FS_EIO;    /* as before: the caller locates an unreadable manifest at its key */
    if (!rc)
        rc = fs_kueue_manifest_parse_for(path, buf, n, cl, k, err);
    fs_free(buf);
    return rc;
}

int fs_kueue_manifest_objs(const char *path, fs_kueue_objs_t *out, fs_error_t *err)
{
    memset(out, 0, sizeof *out);
    char *buf = NULL;
    size_t len = 0;
    int rc = fs_io_read_text(path, "manifest", FS_IO_TEXT_MAX, &buf, &len, err);
    fs_config_t cfg;    /* what the manifest adds, freed by the key table */
    fs_config_init(&cfg);
    if (!rc)
        rc = manifest_parse(path, buf, len, NULL, &cfg.scheduler.kueue, out, err);
    fs_free(buf);
    fs_config_release(&cfg);
    if (rc)
        fs_kueue_objs_free(out);
    return rc;
}

void fs_kueue_objs_free(fs_kueue_objs_t *o)
{
    for (size_t i = 0; o->lq && i < o->n_lq; i++) {
        fs_free(o->lq[i].name);
        fs_free(o->lq[i].ns);
        fs_free(o->lq[i].cq);
    }
    for (size_t i = 0; o->wpc && i < o->n_wpc; i++)
        fs_free(o->wpc[i].name);
    fs_free(o->lq);
    fs_free(o->wpc);
    memset(o, 0, sizeof *o);
}

/* ---- cross-checks ----------------------------------------------------------- */

static int flavor_known(const fs_kueue_cfg_t *k, const fs_cluster_cfg_t *cl, const char *name)
{
    for (size_t i = 0; i < k->n_flavors; i++)
        if (strcmp(k->flavors[i].name, name) == 0)
            return 1;
    for (size_t i = 0; i < k->n_flavor_pools; i++)
        if (strcmp(k->flavor_pool_names[i], name) == 0)
            return 1;
    uint8_t mask[cl->n_pools ? cl->n_pools : 1];
    memset(mask, 0, sizeof mask);
    return fs_kueue_match_pools(name, NULL, cl, mask) > 0;
}

__attribute__((format(printf, 5, 6)))
static int kfail(char *kpath, size_t n, fs_error_t *err, const char *key, const char *fmt, ...)
{
    char msg[FS_ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(kpath, n, "%s", key);
    return fs_error_set(err, FS_EINVAL, "%s: %s", key, msg);
}

/* scheduler.kueue.flavor_pools: each named flavor stands for the given pools
 * (its nodeLabels or match replaced); a name no flavor has but a quota
 * uses becomes a flavor (counted with the manifests', not dumped: the map
 * is).  A name neither has: an error at the key. */
static int apply_flavor_pools(fs_kueue_cfg_t *k, char *kpath, size_t n, fs_error_t *err)
{
    for (size_t m = 0; m < k->n_flavor_pools; m++) {
        const char *name = k->flavor_pool_names[m], *to = k->flavor_pool_targets[m];
        int found = 0;
        for (size_t i = 0; i < k->n_flavors; i++) {
            if (strcmp(k->flavors[i].name, name) != 0)
                continue;
            char *t = fs_strdup(to);
            if (!t)
                return fs_error_set(err, FS_ENOMEM, "out of memory");
            fs_free(k->flavors[i].match);
            k->flavors[i].match = t;
            found = 1;
        }
        for (size_t i = 0; !found && i < k->n_cqs; i++)
            for (size_t f = 0; !found && f < k->cqs[i].n_quotas; f++)
                found = strcmp(k->cqs[i].quotas[f].flavor, name) == 0 ? 2 : 0;
        if (!found) {
            char key[200];
            snprintf(key, sizeof key, "scheduler.kueue.flavor_pools.%s", name);
            return kfail(kpath, n, err, key, "'%s' is neither a flavor (scheduler.kueue.flavors, "
                         "a manifest ResourceFlavor) nor the flavor of a quota", name);
        }
        if (found == 2) {
            size_t cap = k->n_flavors;
            if (fs_grow((void **)&k->flavors, &cap, k->n_flavors + 1, sizeof *k->flavors))
                return fs_error_set(err, FS_ENOMEM, "out of memory");
            fs_kueue_flavor_cfg_t *f = &k->flavors[k->n_flavors];
            memset(f, 0, sizeof *f);
            if (!(f->name = fs_strdup(name)) || !(f->match = fs_strdup(to))) {
                fs_free(f->name);
                fs_free(f->match);
                return fs_error_set(err, FS_ENOMEM, "out of memory");
            }
            k->n_flavors++;
            k->n_manifest_flavors++;
        }
    }
    return 0;
}

int fs_kueue_cfg_resolve(fs_kueue_cfg_t *k, const fs_cluster_cfg_t *cl, char *kpath, size_t n,
                         fs_error_t *err)
{
    char key[200];
    size_t keyed_cqs = k->n_cqs, keyed_fl = k->n_flavors;
    if (n)
        kpath[0] = '\0';
    if (k->manifests) {
        int rc = fs_kueue_manifest_load(k->manifests, cl, k, err);
        if (rc == FS_EIO || rc == FS_ELIMIT)
            return kfail(kpath, n, err, "scheduler.kueue.manifests", "%s", err->msg);
        if (rc)
            return rc;
    }
    k->n_manifest_cqs = k->n_cqs - keyed_cqs;
    k->n_manifest_flavors = k->n_flavors - keyed_fl;
    int rc = apply_flavor_pools(k, kpath, n, err);
    if (rc)
        return rc;
    if (k->n_cqs == 0)
        return kfail(kpath, n, err, "scheduler.kueue", "scheduler.queue kueue needs at least one "
                     "ClusterQueue (scheduler.kueue.cluster_queues or scheduler.kueue.manifests)");
    /* key-given items are named by key; manifest items by name (their
     * positions were checked while parsing) */
    for (size_t i = 0; i < k->n_flavors; i++) {
        const fs_kueue_flavor_cfg_t *f = &k->flavors[i];
        snprintf(key, sizeof key, "scheduler.kueue.flavors.%zu.%s", i, f->match ? "match" : "name");
        uint8_t mask[cl->n_pools ? cl->n_pools : 1];
        memset(mask, 0, sizeof mask);
        for (size_t j = 0; j < i; j++)
            if (strcmp(k->flavors[j].name, f->name) == 0)
                return kfail(kpath, n, err, i < keyed_fl ? key : "scheduler.kueue.manifests",
                             "flavor '%s' is defined twice", f->name);
        if (fs_kueue_match_pools(f->name, f->match, cl, mask) == 0)
            return kfail(kpath, n, err, i < keyed_fl ? key : "scheduler.kueue.manifests",
                         "flavor '%s' (%s) stands for no pool: name a pool or a GPU model of "
                         "cluster.pools, or map it with scheduler.kueue.flavor_pools: {%s: "
                         "POOL}", f->name, f->match ? f->match : f->name, f->name);
    }
    for (size_t i = 0; i < k->n_cqs; i++) {
        const fs_kueue_cq_cfg_t *q = &k->cqs[i];
        const char *mf = "scheduler.kueue.manifests";
        snprintf(key, sizeof key, "scheduler.kueue.cluster_queues.%zu.name", i);
        for (size_t j = 0; j < i; j++)
            if (strcmp(k->cqs[j].name, q->name) == 0)
                return kfail(kpath, n, err, i < keyed_cqs ? key : mf,
                             "ClusterQueue '%s' is defined twice", q->name);
        for (size_t f = 0; f < q->n_quotas; f++) {
            const fs_kueue_quota_cfg_t *qq = &q->quotas[f];
            snprintf(key, sizeof key, "scheduler.kueue.cluster_queues.%zu.quotas.%zu", i, f);
            const char *at = i < keyed_cqs ? key : mf;
            if (!flavor_known(k, cl, qq->flavor))
                return kfail(kpath, n, err, at, "ClusterQueue '%s': flavor '%s' is neither a "
                             "flavor nor a pool or GPU model", q->name, qq->flavor);
            for (size_t g = 0; g < f; g++)
                if (strcmp(q->quotas[g].flavor, qq->flavor) == 0 &&
                    q->quotas[g].resource == qq->resource)
                    return kfail(kpath, n, err, at, "ClusterQueue '%s' lists flavor '%s' twice%s%s",
                                 q->name, qq->flavor, qq->resource ? " for " : "",
                                 qq->resource ? res_names[qq->resource] : "");
            if (qq->lending_limit > qq->nominal)
                return kfail(kpath, n, err, at, "ClusterQueue '%s': lending_limit %g is more "
                             "than nominal %g", q->name, qq->lending_limit, qq->nominal);
            if (!q->cohort && qq->borrowing_limit >= 0)
                return kfail(kpath, n, err, at, "ClusterQueue '%s': borrowing_limit needs a "
                             "cohort", q->name);
        }
        snprintf(key, sizeof key, "scheduler.kueue.cluster_queues.%zu.borrow_within_cohort", i);
        if (q->borrow_within != FS_KUEUE_NEVER && q->reclaim == FS_KUEUE_NEVER)
            return kfail(kpath, n, err, i < keyed_cqs ? key : "scheduler.kueue.manifests",
                         "ClusterQueue '%s': borrow_within_cohort needs reclaim_within_cohort "
                         "other than Never", q->name);
    }
    if (k->default_queue) {
        for (size_t i = 0; i < k->n_cqs; i++)
            if (strcmp(k->cqs[i].name, k->default_queue) == 0)
                return 0;
        return kfail(kpath, n, err, "scheduler.kueue.default_queue", "no ClusterQueue '%s'",
                     k->default_queue);
    }
    return 0;
}
